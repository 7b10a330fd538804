"""ctorch.amp: automatic mixed precision, as torch.amp.

`autocast` runs GEMMs and convolutions in float16/bfloat16 and range-sensitive ops in float32 (the
per-op policy and the casting are C: csrc/amp.c); `GradScaler` scales the loss so that float16
gradients do not underflow, unscales them before the optimizer step and skips steps whose gradients
overflowed (the unscale and the scale update are C kernels: _amp_foreach_non_finite_check_and_unscale_,
_amp_update_scale_)."""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
