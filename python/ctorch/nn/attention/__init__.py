"""nn.attention: SDPBackend and the sdpa_kernel context manager.

ctorch has one scaled_dot_product_attention kernel. It stands for PyTorch's MATH backend and, as on
PyTorch's CPU build (which has a flash kernel for every input), FLASH_ATTENTION: the kernel runs when
either is enabled. With only EFFICIENT_ATTENTION / CUDNN_ATTENTION / OVERRIDEABLE (or none) enabled,
F.scaled_dot_product_attention raises PyTorch's "No viable backend" RuntimeError."""
import contextlib
import enum

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self):
        return f"SDPBackend.{self.name}"


_ALL = (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
        SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE)
_enabled = set(_ALL)
_priority = list(_ALL)


def _enabled_backends():
    return frozenset(_enabled)


def _check_viable():
    """Raises PyTorch's error when no backend able to run ctorch's kernel is enabled."""
    if SDPBackend.MATH not in _enabled and SDPBackend.FLASH_ATTENTION not in _enabled:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Only the given backend(s) are enabled inside the block (priority order too with set_priority)."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
                             f"got {type(backends).__name__}")
    backends = [backends] if isinstance(backends, SDPBackend) else list(backends)
    for b in backends:
        if not isinstance(b, SDPBackend):
            raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
                                 f"got {type(b).__name__}")
    global _priority
    prior_enabled, prior_priority = set(_enabled), list(_priority)
    _enabled.clear()
    _enabled.update(b for b in backends if b != SDPBackend.ERROR)
    if set_priority:
        _priority = backends + [b for b in prior_priority if b not in backends]
    try:
        yield {}
    finally:
        _enabled.clear()
        _enabled.update(prior_enabled)
        _priority = prior_priority


from . import bias  # noqa: E402,F401
