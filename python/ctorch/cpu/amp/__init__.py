"""ctorch.cpu.amp: the older spelling of ctorch.amp for the CPU (deprecated in PyTorch, kept working)."""
from ... import _C
from ...amp._device_aliases import device_amp_classes

__all__ = ["autocast", "GradScaler"]

autocast, GradScaler = device_amp_classes("cpu", _C.bfloat16)
