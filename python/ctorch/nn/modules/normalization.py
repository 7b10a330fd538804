"""nn.LayerNorm and nn.GroupNorm (forward and backward are C kernels in csrc/nn.c and csrc/norm.c)."""
import numbers

from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _affine_parameters(module, shape, affine, bias, device, dtype):
    """Registers the weight and bias of a normalisation layer of that shape (None when not affine, the
    bias None without bias), uninitialised."""
    weight = Parameter(_C.empty(shape, device=device, dtype=dtype)) if affine else None
    module.register_parameter("weight", weight)
    module.register_parameter("bias", Parameter(_C.empty(shape, device=device, dtype=dtype)) if affine and bias
                              else None)


def _reset_affine(module):
    """weight = 1, bias = 0 (when present)."""
    init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class LayerNorm(Module):
    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, self.elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None)


class GroupNorm(Module):
    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None)


class RMSNorm(Module):
    """Root-mean-square normalisation over the last dims (F.rms_norm, csrc/nn_misc.c)."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        weight = Parameter(_C.empty(self.normalized_shape, device=device, dtype=dtype)) if elementwise_affine else None
        self.register_parameter("weight", weight)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)
