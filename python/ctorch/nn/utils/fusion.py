"""nn.utils.fusion: folding an eval-mode BatchNorm into the convolution or linear layer before it,
w' = w * gamma / sqrt(var + eps) (per output channel), b' = (b - mean) * gamma / sqrt(var + eps) + beta."""
import copy

from ... import _C
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def _bn_scale_shift(bias, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """(gamma / sqrt(var + eps), the fused bias) with PyTorch's defaults for missing tensors."""
    if bias is None:
        bias = _C.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _C.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _C.zeros_like(bn_rm)
    scale = bn_w * _C.rsqrt(bn_rv + bn_eps)
    return scale, (bias - bn_rm) * scale + bn_b, bias


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The (weight, bias) Parameters of a convolution followed by a batch norm with these statistics;
    transpose: the weight is a transposed convolution's (in, out // groups, *k)."""
    bias_dtype = conv_b.dtype if conv_b is not None else conv_w.dtype
    scale, fused_b, conv_b = _bn_scale_shift(conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b)
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.dim() - 2)
    fused_w = (conv_w * scale.reshape(shape)).to(dtype=conv_w.dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b.to(dtype=bias_dtype), conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of the eval-mode conv with the eval-mode bn after it folded in."""
    assert not (conv.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(conv)
    assert bn.running_mean is not None and bn.running_var is not None
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The (weight, bias) Parameters of a linear layer followed by a batch norm with these statistics."""
    bias_dtype = linear_b.dtype if linear_b is not None else linear_w.dtype
    scale, fused_b, linear_b = _bn_scale_shift(linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b)
    fused_w = linear_w * scale.unsqueeze(-1).to(dtype=linear_w.dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b.to(dtype=bias_dtype), linear_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of the eval-mode linear with the eval-mode bn after it folded in (bn.num_features equal to
    linear.out_features, or 1)."""
    assert not (linear.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(linear)
    assert linear.out_features == bn.num_features or bn.num_features == 1, \
        "To fuse, linear.out_features == bn.num_features or bn.num_features == 1"
    assert bn.running_mean is not None and bn.running_var is not None
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused
