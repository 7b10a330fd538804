"""ctorch.cpu: the CPU device's module, as torch.cpu (its amp namespace, and the device queries
that mirror ctorch.cuda's)."""
from . import amp  # noqa: F401

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]


def is_available():
    """The CPU is always available."""
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """CPU ops complete before they return: nothing to wait for."""
