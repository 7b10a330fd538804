"""ctorch.cuda.amp: the older spelling of ctorch.amp for CUDA (deprecated in PyTorch, kept working)."""
import functools

from ... import _C
from ...amp import autocast_mode
from ...amp._device_aliases import device_amp_classes

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]

autocast, GradScaler = device_amp_classes("cuda", _C.float16)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """torch.cuda.amp.custom_fwd: torch.amp.custom_fwd(device_type='cuda')."""
    return autocast_mode.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """torch.cuda.amp.custom_bwd: torch.amp.custom_bwd(device_type='cuda')."""
    if bwd is None:
        return functools.partial(custom_bwd)
    return autocast_mode.custom_bwd(bwd, device_type="cuda")
