"""Padding modules: ZeroPad1d/2d, ConstantPad1d/2d, ReflectionPad1d/2d, ReplicationPad1d/2d,
CircularPad1d/2d; each is F.pad (csrc/nn_act.c) with a fixed mode and padding."""
from .. import functional as F
from .module import Module


def _ntuple(padding, n):
    if isinstance(padding, int):
        return (padding,) * (2 * n)
    return tuple(padding)


class _PadNd(Module):
    __constants__ = ["padding"]
    _dims = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, self._dims)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    _dims = 2


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    _dims, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    _dims, _mode = 2, "reflect"


class ReplicationPad1d(_PadNd):
    _dims, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    _dims, _mode = 2, "replicate"


class CircularPad1d(_PadNd):
    _dims, _mode = 1, "circular"


class CircularPad2d(_PadNd):
    _dims, _mode = 2, "circular"
