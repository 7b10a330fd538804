"""ctorch.backends.cudnn: PyTorch's cuDNN switches, kept so that boilerplate such as
``torch.backends.cudnn.benchmark = False; torch.backends.cudnn.deterministic = True`` runs unchanged.

ctorch has no cuDNN: ``is_available()`` is False and ``version()`` None. Its convolutions are its own
im2col + GEMM kernels, deterministic on every device whatever these flags say, so none of them changes a
result: ``deterministic = True`` makes nothing more reproducible than it already is, ``benchmark = True``
selects no algorithm (there is one), ``enabled`` and ``allow_tf32`` are read by no kernel (TF32 matmuls
are ``ctorch.backends.cuda.matmul.allow_tf32``'s). The attributes keep PyTorch's defaults (enabled True,
benchmark False, deterministic False, allow_tf32 True) and its type checks, and ``flags()`` sets them
for a ``with`` block."""
import sys
import types
from contextlib import contextmanager

_flags = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}
# PyTorch's names of the setters in its messages
_setter_names = {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
                 "deterministic": "set_deterministic_cudnn", "allow_tf32": "set_allow_tf32_cublas"}


def is_available():
    """False: ctorch is built without cuDNN."""
    return False


def version():
    """None: ctorch is built without cuDNN."""
    return None


def is_acceptable(tensor):
    """False: no tensor is handed to cuDNN."""
    return False


def _set(name, value):
    if not isinstance(value, bool):
        raise RuntimeError(f"{_setter_names[name]} expects a bool, but got {type(value).__name__}")
    _flags[name] = value


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None):
    """Sets the flags given (None keeps one) and returns the previous values, in this order."""
    orig = (_flags["enabled"], _flags["benchmark"], None, _flags["deterministic"], _flags["allow_tf32"])
    for name, value in (("enabled", _enabled), ("benchmark", _benchmark), ("deterministic", _deterministic),
                        ("allow_tf32", _allow_tf32)):
        if value is not None:
            _set(name, value)
    return orig


@contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Sets the cuDNN flags for the block and restores them after it (benchmark_limit is ignored, as in
    PyTorch without cuDNN)."""
    orig = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32)
    try:
        yield
    finally:
        set_flags(*orig)


class _Flag:
    def __init__(self, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        return _flags[self.name]

    def __set__(self, obj, value):
        _set(self.name, value)


class CudnnModule(types.ModuleType):
    """The module, whose flags are checked when set."""
    enabled = _Flag("enabled")
    benchmark = _Flag("benchmark")
    deterministic = _Flag("deterministic")
    allow_tf32 = _Flag("allow_tf32")
    benchmark_limit = None  # PyTorch's value where cuDNN is not available


sys.modules[__name__].__class__ = CudnnModule
