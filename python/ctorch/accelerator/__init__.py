"""ctorch.accelerator: PyTorch's device-agnostic accelerator API, for the one accelerator ctorch
has (CUDA). `device = torch.accelerator.current_accelerator().type if
torch.accelerator.is_available() else "cpu"` works as in PyTorch's tutorials."""
from .. import cuda as _cuda
from .._C import device as _device

__all__ = [
    "current_accelerator", "current_device_index", "current_stream", "device_count", "empty_cache",
    "is_available", "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
    "memory_stats", "reset_peak_memory_stats", "set_device_index", "synchronize",
]


def is_available():
    """True when a GPU ctorch can use is present."""
    return _cuda.is_available()


def current_accelerator(check_available=False):
    """device('cuda') in a CUDA build (None in a CPU-only build, or when check_available is set
    and no GPU is usable)."""
    if not _cuda.is_built() or (check_available and not _cuda.is_available()):
        return None
    return _device("cuda")


def device_count():
    return _cuda.device_count()


def current_device_index():
    return _cuda.current_device()


def set_device_index(device):
    _cuda.set_device(device)


def current_stream(device=None):
    return _cuda.current_stream(device)


def synchronize(device=None):
    _cuda.synchronize(device)


def empty_cache():
    _cuda.empty_cache()


def memory_allocated(device_index=None):
    return _cuda.memory_allocated(device_index)


def max_memory_allocated(device_index=None):
    return _cuda.max_memory_allocated(device_index)


def memory_reserved(device_index=None):
    return _cuda.memory_reserved(device_index)


def max_memory_reserved(device_index=None):
    return _cuda.max_memory_reserved(device_index)


def memory_stats(device_index=None):
    return _cuda.memory_stats(device_index)


def reset_peak_memory_stats(device_index=None):
    _cuda.reset_peak_memory_stats(device_index)
