"""The Python names of namespaces (ctorch.linalg, ctorch.special) that call a ctorch._C function."""
from . import _C


def c_function(name, c_name, signature):
    """A function `name` calling ctorch._C.<c_name>, looked up per call (autograd and autocast wrap
    the _C functions)."""

    def fn(*args, **kwargs):
        return getattr(_C, c_name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name}{signature}: see ctorch._C.{c_name}."
    return fn
