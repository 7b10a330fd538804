"""nn.utils.skip_init: a module whose parameters and buffers are left uninitialised."""
import inspect

from ... import _C
from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) with uninitialised parameters and buffers (module_cls must take
    device=). ctorch has no meta device: the module is built on its device and its tensors are then
    replaced by uninitialised ones of the same shapes."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    module = module_cls(*args, **kwargs)
    for m in module.modules():
        for name, p in m._parameters.items():
            if p is not None:
                p.data = _C.empty_like(p)
        for name, b in m._buffers.items():
            if b is not None:
                m._buffers[name] = _C.empty_like(b)
    return module
