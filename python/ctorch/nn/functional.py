"""ctorch.nn.functional: PyTorch's functional API. Argument handling only: every computation is a
C op (csrc/nn.c for linear, the losses, layer_norm, embedding and leaky_relu; csrc/nn_act.c for the
other activations, padding, distances and the composed losses; csrc/norm.c for batch_norm and
group_norm; csrc/pool.c for pooling; csrc/attention.c for attention; csrc/upsample.c for interpolation;
csrc/spatial.c for pixel_shuffle, the channel dropouts and instance_norm; the elementwise and reduction
families for the activations and softmax)."""
import warnings

from .. import _C
from .attention import _check_viable
from .attention.bias import CausalBias

Tensor = _C.Tensor

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2, "elementwise_mean": 1}


def _reduction_enum(reduction):
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=3)
    try:
        return _REDUCTIONS[reduction]
    except (KeyError, TypeError):
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def _legacy_reduction(size_average, reduce, emit_warning=True):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                      stacklevel=3)
    return ret


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _reduction_enum(reduction)


# --- linear -----------------------------------------------------------------------------------------------
def linear(input, weight, bias=None):
    """y = input @ weight.T + bias, one GEMM with the bias folded in (csrc/nn.c)."""
    # The three entry points are the same C function; they differ only in the grad_fn name they
    # record, which follows PyTorch's (AddmmBackward0, MmBackward0, UnsafeViewBackward0).
    if isinstance(input, Tensor) and input.dim() == 2:
        if bias is not None:
            return _C.linear(input, weight, bias)
        return _C._linear_mm(input, weight)
    return _C._linear_nd(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """y = x1^T W_o x2 + b_o for each output o (csrc/nn_misc.c: one GEMM and a reduction)."""
    return _C.bilinear(input1, input2, weight, bias)


# --- convolutions ------------------------------------------------------------------------------------------
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution of (N, C, L) or (C, L) input: im2col + GEMM in C (csrc/conv.c)."""
    return _C.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution of (N, C, H, W) or (C, H, W) input: im2col + GEMM in C (csrc/conv.c)."""
    return _C.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution of (N, C, D, H, W) or (C, D, H, W) input: im2col + GEMM in C (csrc/conv.c)."""
    return _C.conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 1-d convolution (the adjoint of conv1d) of (N, C, L) or (C, L) input (csrc/conv.c)."""
    return _C.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 2-d convolution (the adjoint of conv2d) of (N, C, H, W) or (C, H, W) input (csrc/conv.c)."""
    return _C.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 3-d convolution (the adjoint of conv3d) of (N, C, D, H, W) or (C, D, H, W) input (csrc/conv.c)."""
    return _C.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def _pair(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x, x)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of (N, C, H, W) input as (N, C * prod(kernel_size), L) columns (csrc/conv.c's im2col)."""
    return _C.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """unfold's adjoint: (N, C * prod(kernel_size), L) columns summed into (N, C, *output_size) (col2im)."""
    return _C.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


# --- activations ------------------------------------------------------------------------------------------
def relu(input, inplace=False):
    if inplace:
        return input.relu_()
    return input.relu()


def relu_(input):
    return input.relu_()


def leaky_relu_(input, negative_slope=0.01):
    """In-place leaky_relu."""
    return leaky_relu(input, negative_slope, inplace=True)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    out = _C._leaky_relu(input, negative_slope)
    if inplace:
        # In place only when autograd has nothing to record (the C op is out-of-place).
        if _C.is_grad_enabled() and (input.requires_grad or out.requires_grad):
            return out
        input.copy_(out)
        return input
    return out


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return _C.gelu(input, approximate=approximate)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def silu(input, inplace=False):
    return _C.silu_(input) if inplace else _C.silu(input)


def softplus(input, beta=1.0, threshold=20.0):
    return _C.softplus(input, beta, threshold)


# activations of csrc/nn_act.c (pointwise rows of the elementwise table): in place through the
# C `_` variants, as PyTorch's torch._C._nn ones
def elu(input, alpha=1.0, inplace=False):
    return _C.elu_(input, alpha) if inplace else _C.elu(input, alpha)


def elu_(input, alpha=1.0):
    return _C.elu_(input, alpha)


def celu(input, alpha=1.0, inplace=False):
    return _C.celu_(input, alpha) if inplace else _C.celu(input, alpha)


def celu_(input, alpha=1.0):
    return _C.celu_(input, alpha)


def selu(input, inplace=False):
    return _C.selu_(input) if inplace else _C.selu(input)


def selu_(input):
    return _C.selu_(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _C.hardtanh_(input, min_val, max_val) if inplace else _C.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False):
    return _C.hardsigmoid_(input) if inplace else _C.hardsigmoid(input)


def hardswish(input, inplace=False):
    return _C.hardswish_(input) if inplace else _C.hardswish(input)


def mish(input, inplace=False):
    return _C.mish_(input) if inplace else _C.mish(input)


def logsigmoid(input):
    return _C.log_sigmoid(input)


def softsign(input):
    return _C.softsign(input)


def tanhshrink(input):
    return _C.tanhshrink(input)


def softshrink(input, lambd=0.5):
    return _C.softshrink(input, lambd)


def hardshrink(input, lambd=0.5):
    return _C.hardshrink(input, lambd)


def threshold(input, threshold, value, inplace=False):
    return _C.threshold_(input, threshold, value) if inplace else _C.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return _C.threshold_(input, threshold, value)


def prelu(input, weight):
    return _C.prelu(input, weight)


def glu(input, dim=-1):
    return _C.glu(input, dim)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _C.softmin(input, dim, dtype)


def _softmax_dim(ndim):
    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return input.softmax(dim, dtype=dtype) if dtype is not None else input.softmax(dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return input.log_softmax(dim, dtype=dtype) if dtype is not None else input.log_softmax(dim)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes elements with probability p and scales the rest by 1 / (1 - p) (training only)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    return _dropout_draw(input, p)[0]


def _dropout_draw(input, p):
    """(input * keep / (1 - p), keep): keep drawn Bernoulli(1 - p) in input's dtype (0 scale for p = 1)."""
    keep = _C.empty_like(input).bernoulli_(1.0 - p)
    return input * keep * (0.0 if p == 1.0 else 1.0 / (1.0 - p)), keep


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout(input, p, training, inplace, unbatched):
    # channel-wise dropout (csrc/spatial.c), an unbatched input seen with a batch of one (in place: through
    # that view, so the input itself changes)
    if inplace:
        _C.feature_dropout_(input.unsqueeze(0) if unbatched else input, p, training)
        return input
    result = _C.feature_dropout(input.unsqueeze(0) if unbatched else input, p, training)
    return result.squeeze(0) if unbatched else result


def _warn_dims(name, dim, want, spatial):
    warnings.warn(f"{name}: Received a {dim}-D input to {name}, which is deprecated and will result in an error in a "
                  "future release. To retain the behavior and silence this warning, please use dropout instead. Note "
                  f"that {name} exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, a "
                  f"channel dimension, and an optional batch dimension (i.e. {want[0]}D or {want[1]}D inputs).",
                  stacklevel=3)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, L) or (C, L) input with probability p (training only)."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, input.dim() == 2)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, H, W) input with probability p (a 3-d input is taken as (N, C, L), as
    PyTorch does today)."""
    _check_p(p)
    if input.dim() not in (3, 4):
        _warn_dims("dropout2d", input.dim(), (3, 4), 2)
    if input.dim() == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This "
                      "behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p (training only)."""
    _check_p(p)
    if input.dim() not in (4, 5):
        _warn_dims("dropout3d", input.dim(), (4, 5), 3)
    return _feature_dropout(input, p, training, inplace, input.dim() != 5)


def pixel_shuffle(input, upscale_factor):
    return _C.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    return _C.pixel_unshuffle(input, downscale_factor)


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def one_hot(tensor, num_classes=-1):
    return _C.one_hot(tensor, num_classes)


# --- attention (csrc/attention.c): composed of recording ops in C, as PyTorch's math backend ---------------
# softmax(query @ key^T * scale + mask) @ value; a bool mask's True takes part, a float mask is added
_sdpa_kernel = _C.scaled_dot_product_attention


def _sdpa_arguments(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    return query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa


def scaled_dot_product_attention(*args, **kwargs):
    """scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
    scale=None, enable_gqa=False): softmax(q k^T * scale + mask) v. attn_mask may be an
    nn.attention.bias.CausalBias; the backend choice of nn.attention.sdpa_kernel is honoured (see
    nn/attention/__init__.py). Arguments reach the C op as given, so its errors name them as PyTorch's do."""
    _check_viable()
    mask = args[3] if len(args) > 3 else kwargs.get("attn_mask")
    if isinstance(mask, CausalBias):
        query, key, value, mask, dropout_p, is_causal, scale, enable_gqa = _sdpa_arguments(*args, **kwargs)
        return mask._sdpa(query, key, value, dropout_p, is_causal, scale, enable_gqa)
    return _sdpa_kernel(*args, **kwargs)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """nn.MultiheadAttention's computation; returns (output, weights or None). Bool masks: True = masked out."""
    return _C.multi_head_attention_forward(
        query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
        add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training, key_padding_mask, need_weights,
        attn_mask, use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight, static_k, static_v,
        average_attn_weights, is_causal)


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    return _C._canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other)


def _none_or_dtype(input):
    if input is None:
        return None
    elif isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


# --- pooling (csrc/pool.c) ----------------------------------------------------------------------------------
# stride=None means the kernel size: the C ops take an empty stride for it, as PyTorch's do.
def _max_pool(with_indices, without, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    fn = with_indices if return_indices else without
    return fn(input, kernel_size, () if stride is None else stride, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool(_C.max_pool1d_with_indices, None, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(_C.max_pool1d_with_indices, _C.max_pool1d, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool(_C.max_pool2d_with_indices, None, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(_C.max_pool2d_with_indices, _C.max_pool2d, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _C.avg_pool1d(input, kernel_size, () if stride is None else stride, padding, ceil_mode, count_include_pad)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _C.avg_pool2d(input, kernel_size, () if stride is None else stride, padding, ceil_mode, count_include_pad,
                         divisor_override)


def adaptive_avg_pool1d(input, output_size):
    return _C.adaptive_avg_pool1d(input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """output_size: an int or two; None keeps the input's size along that dim."""
    return _C.adaptive_avg_pool2d(input, output_size)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return _C.adaptive_max_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    out = _C.adaptive_max_pool1d(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _C.adaptive_max_pool2d(input, output_size)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """output_size: an int or two; None keeps the input's size along that dim."""
    out = _C.adaptive_max_pool2d(input, output_size)
    return out if return_indices else out[0]


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool(_C.max_pool3d_with_indices, None, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(_C.max_pool3d_with_indices, _C.max_pool3d, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _C.avg_pool3d(input, kernel_size, () if stride is None else stride, padding, ceil_mode, count_include_pad,
                         divisor_override)


def adaptive_avg_pool3d(input, output_size):
    """output_size: an int or three; None keeps the input's size along that dim."""
    return _C.adaptive_avg_pool3d(input, output_size)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _C.adaptive_max_pool3d(input, output_size)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """output_size: an int or three; None keeps the input's size along that dim."""
    out = _C.adaptive_max_pool3d(input, output_size)
    return out if return_indices else out[0]


# --- interpolation (csrc/upsample.c) --------------------------------------------------------------------------
def _is_integer(x):
    if isinstance(x, bool):
        return False
    if isinstance(x, int) or (isinstance(x, Tensor) and not x.is_floating_point()):
        return True
    return hasattr(x, "__index__") and not isinstance(x, float)


_INTERP_DIMS = {"nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "area": (3, 4, 5), "linear": (3,), "bilinear": (4,),
                "bicubic": (4,), "trilinear": (5,)}
_INTERP_WANTS = {"linear": 3, "bilinear": 4, "trilinear": 5}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resamples (N, C, W), (N, C, H, W) or (N, C, D, H, W) input to `size` or by `scale_factor` (PyTorch's
    rules)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    scale_factors = output_size = None
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {list(input.shape[2:])} and output size of {size}. Please provide input tensor "
                    "in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}")
            output_size = [int(x) for x in size]
        else:
            output_size = [int(size)] * dim if _is_integer(size) else [size] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in "
                    "(s1, s2, ...,sK) format.")
            scale_factors = list(scale_factor)
        else:
            scale_factors = [scale_factor] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(input.size(i + 2) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if input.dim() in _INTERP_DIMS.get(mode, ()):
        if antialias:
            mode += "_aa"  # PyTorch's separable antialiased filter: _upsample_bilinear2d_aa / _bicubic2d_aa
        if mode == "area":
            return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1](input, output_size)
        return _C._upsample(input, mode, output_size, bool(align_corners), scale_factors)
    if mode in _INTERP_WANTS and input.dim() in (3, 4, 5) and input.dim() != _INTERP_WANTS[mode]:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_INTERP_WANTS[mode]}D input")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: nearest | "
        f"linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# --- normalisation and embeddings ---------------------------------------------------------------------------
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _C.layer_norm(input, normalized_shape, weight, bias, eps)


def _verify_batch_size(size):
    values = size[0]
    for extent in size[2:]:
        values *= extent
    if values == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Batch normalisation over dim 1 (csrc/norm.c); in training the running statistics, when given, are
    updated in place with momentum."""
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _C.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def _verify_spatial_size(size):
    n = 1
    for v in list(size)[2:]:
        n *= v
    if n == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalises each (instance, channel) plane over its spatial elements (csrc/spatial.c on norm.c's batch norm)."""
    if use_input_stats:
        _verify_spatial_size(input.size())
    return _C.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalisation of (N, C, *) input over groups of C / num_groups channels (csrc/norm.c)."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups] + list(input.size()[2:]))
    return _C.group_norm(input, num_groups, weight, bias, eps)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of weight picked by the integer tensor input (IndexError for out-of-range indices)."""
    if padding_idx is not None:
        num = weight.size(0)
        if padding_idx > 0:
            if padding_idx >= num:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -num:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = num + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    return _C.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _embedding_renorm_(weight, input, max_norm, norm_type):
    # Rows referenced by input whose norm exceeds max_norm are scaled down in place (no grad).
    from ..autograd.grad_mode import no_grad

    with no_grad():
        rows = input.flatten().unique() if hasattr(input, "unique") else input.flatten()
        sel = weight.index_select(0, rows)
        norms = sel.norm(norm_type, 1, True)
        scale = (max_norm / (norms + 1e-7)).clamp_max(1.0)
        weight.index_copy_(0, rows, sel * scale)


# --- padding and distances (csrc/nn_act.c) -----------------------------------------------------------------
def pad(input, pad, mode="constant", value=None):
    return _C.pad(input, pad, mode, value)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    return _C.normalize(input, p, dim, eps, out)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return _C.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return _C.pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input, p=2):
    return _C.pdist(input, p)


# --- losses --------------------------------------------------------------------------------------------------
def _warn_size(input, target):
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


def _check_weight(weight, input):
    if weight is not None and weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _warn_size(input, target)
    r = _reduction(size_average, reduce, reduction)
    _check_weight(weight, input)
    return _C._mse_loss(input, target, weight, None, r)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _warn_size(input, target)
    r = _reduction(size_average, reduce, reduction)
    _check_weight(weight, input)
    return _C._l1_loss(input, target, weight, None, r)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _warn_size(input, target)
    r = _reduction(size_average, reduce, reduction)
    return _C._smooth_l1_loss(input, target, None, None, r, beta)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    r = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    return _C._binary_cross_entropy(input, target, weight, None, r)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    r = _reduction(size_average, reduce, reduction)
    if not (target.size() == input.size()):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    return _C._binary_cross_entropy_with_logits(input, target, weight, pos_weight, r)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    r = _reduction(size_average, reduce, reduction)
    return _C._nll_loss(input, target, weight, r, ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Fused log-softmax + NLL over dim 1 (csrc/nn.c): class indices or class probabilities."""
    r = _reduction(size_average, reduce, reduction)
    # One C kernel; the entry point only picks the grad_fn name PyTorch's composition would show.
    if target.is_floating_point() and target.shape == input.shape:
        fn = _C._cross_entropy_soft_mean if r == 1 else _C._cross_entropy_soft
    elif label_smoothing > 0.0:
        fn = _C._cross_entropy_ls
    else:
        fn = _C._cross_entropy
    return fn(input, target, weight, r, ignore_index, label_smoothing)


# --- losses of csrc/nn_act.c: composed of recording ops in C as PyTorch composes them --------------------------
def _legacy_or(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _reduction_enum(_legacy_reduction(size_average, reduce))
    return _reduction_enum(reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        r = _reduction_enum(_legacy_reduction(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        r = _reduction_enum("sum" if reduction == "batchmean" else reduction)
    reduced = _C.kl_div(input, target, r, log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _warn_size(input, target)
    expanded_input, expanded_target = _C.broadcast_tensors(input, target)
    if weight is None:
        return _C.huber_loss(expanded_input, expanded_target, _reduction_enum(reduction), delta)
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = _C.huber_loss(expanded_input, expanded_target, 0, delta) * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean":
        return weighted.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _C.soft_margin_loss(input, target, _legacy_or(size_average, reduce, reduction))


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    r = _legacy_or(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _C.margin_ranking_loss(input1, input2, target, margin, r)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    return _C.hinge_embedding_loss(input, target, margin, _legacy_or(size_average, reduce, reduction))


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    return _C.cosine_embedding_loss(input1, input2, target, margin, _legacy_or(size_average, reduce, reduction))


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return _C.poisson_nll_loss(input, target, log_input, full, eps, _reduction_enum(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _C.gaussian_nll_loss(input, target, var, full, eps, _reduction_enum(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    r = _legacy_or(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _C.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, r)


# --- csrc/nn_misc.c: RMS norm, embedding bags, the margin / CTC losses, gumbel softmax -------------------------
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """input / sqrt(mean(input^2 over the last len(normalized_shape) dims) + eps) [* weight]; eps None is
    the dtype's machine epsilon."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return _C.rms_norm(input, normalized_shape, weight, eps)


_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embedding rows: a 2-D input is a batch of equal bags, a 1-D input is
    split into bags at offsets."""
    if weight.dtype == _C.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = _C.arange(0, input.numel(), input.size(1), dtype=input.dtype, device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.size(0)
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    return _C._embedding_bag_dense(input, weight, offsets, _BAG_MODES[mode], per_sample_weights,
                                   include_last_offset, -1 if padding_idx is None else padding_idx,
                                   bool(scale_grad_by_freq))


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    r = _legacy_or(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return _C.multi_margin_loss(input, target, p, margin, weight, r)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _C.multilabel_margin_loss(input, target, _legacy_or(size_average, reduce, reduction))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _C.multilabel_soft_margin_loss(input, target, weight, _reduction_enum(reduction))


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    r = _reduction_enum(reduction)
    return _C.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function, margin, swap, r)


def _lengths(x):
    return x if isinstance(x, Tensor) else _C.tensor(x, dtype=_C.int64)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist Temporal Classification loss: -log of the total probability of the alignments of each
    target, by the log-space forward recursion (csrc/nn_misc.c); 'mean' divides by the target lengths first."""
    r = _reduction_enum(reduction)
    if isinstance(input_lengths, _C.Tensor) != isinstance(target_lengths, _C.Tensor):
        # PyTorch has two overloads, both lengths tensors or both int sequences, and no mix
        got = ", ".join(type(x).__name__ for x in (log_probs, targets, input_lengths, target_lengths, blank, r,
                                                    zero_infinity))
        raise TypeError(f"ctc_loss() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        " * (Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints "
                        "target_lengths, int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)\n"
                        " * (Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, "
                        "int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)\n")
    return _C.ctc_loss(log_probs, targets, _lengths(input_lengths), _lengths(target_lengths), blank, r,
                       zero_infinity)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax distribution (one-hot with a straight-through gradient when hard)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    return _C.gumbel_softmax(logits, tau, hard, dim)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Normalises each element by the activity of `size` neighbouring channels."""
    return _C.local_response_norm(input, size, alpha, beta, k)


def channel_shuffle(input, groups):
    return _C.channel_shuffle(input, groups)


native_channel_shuffle = channel_shuffle


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU with a random slope in [lower, upper] per element (training) or their mean (eval)."""
    out = _C.rrelu(input, lower, upper, training)
    if inplace:
        input.copy_(out)
        return input
    return out


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def _alpha_dropout(input, p, training, inplace, feature):
    _check_p(p)
    out = _C._alpha_dropout(input, p, training, feature)
    if inplace and out is not input:
        input.copy_(out)
        return input
    return out


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout keeping SELU's self-normalisation (mean 0, variance 1)."""
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels of (N, C, *) input."""
    return _alpha_dropout(input, p, training, inplace, True)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p) of (N, C, L) input."""
    return _C._lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p) of (N, C, H, W) input."""
    return _C._lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p) of (N, C, D, H, W) input."""
    return _C._lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


def _tuple(x, n):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    input_size = input.size()
    default_size = [(input_size[-len(kernel_size) + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
                    for d in range(len(kernel_size))]
    if output_size is None:
        return default_size
    if len(output_size) == len(kernel_size) + 2:
        output_size = output_size[2:]
    if len(output_size) != len(kernel_size):
        raise ValueError(f"output_size should be a sequence containing {len(kernel_size)} or {len(kernel_size) + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(len(kernel_size)):
        min_size, max_size = default_size[d] - stride[d], default_size[d] + stride[d]
        if not (min_size < output_size[d] < max_size):
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {min_size} and '
                             f'{max_size})')
    return list(output_size)


def _max_unpool(n, input, indices, kernel_size, stride, padding, output_size):
    kernel_size = _tuple(kernel_size, n)
    stride = _tuple(stride, n) if stride is not None else kernel_size
    padding = _tuple(padding, n)
    return _C._max_unpool(input, indices, _unpool_output_size(input, kernel_size, stride, padding, output_size))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: the maxima put back at their indices, zeros elsewhere."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d: the maxima put back at their indices, zeros elsewhere."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d: the maxima put back at their indices, zeros elsewhere."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


def _fractional_max_pool(n, input, kernel_size, output_size, output_ratio, _random_samples):
    """(output, indices) of _C.fractional_max_pool{n}d (csrc/nn_frac_pool.c), the output size given or
    int(input size * ratio)."""
    name = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if len(output_ratio) > n:
            raise ValueError(f"{name} must have {n} or fewer elements in output_ratio")
        ratio = _tuple(output_ratio, n) if len(output_ratio) == n else (output_ratio[0],) * n
        output_size = [int(input.size(d - n) * ratio[d]) for d in range(n)]
    return getattr(_C, name)(input, kernel_size, output_size, _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """Max over kh x kw windows at pseudo-random fractional strides (Graham, 2014): (output, indices)."""
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling of (N, C, H, W) or (C, H, W) input; (output, indices) when return_indices."""
    out = _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """Max over kt x kh x kw windows at pseudo-random fractional strides: (output, indices)."""
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling of (N, C, T, H, W) or (C, T, H, W) input; (output, indices) when return_indices."""
    out = _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDING = {"zeros": 0, "border": 1, "reflection": 2}


def _warn_align_corners():
    warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.", stacklevel=3)


def affine_grid(theta, size, align_corners=None):
    """The (N, H, W, 2) / (N, D, H, W, 3) sampling grid of the 2-d / 3-d affine transforms theta (N, 2, 3) /
    (N, 3, 4) for an output of `size`."""
    if align_corners is None:
        _warn_align_corners()
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {theta.shape}.")
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {theta.shape}.")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        k = len(size) - 2
        raise ValueError(f"Expected a batch of {k}D affine matrices of shape Nx{k}x{k + 1} for size {size}. "
                         f"Got {theta.shape}.")
    return _C._affine_grid(theta, tuple(size), align_corners)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Samples (N, C, H, W) / (N, C, D, H, W) input at the normalised (x, y) / (x, y, z) locations of grid
    (N, H_out, W_out, 2) / (N, D_out, H_out, W_out, 3)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _GRID_PADDING:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        _warn_align_corners()
        align_corners = False
    if mode == "bicubic" and input.dim() == 5:
        raise NotImplementedError(f"ctorch: grid_sample(mode='{mode}') of {input.dim()}-D input is not supported")
    return _C._grid_sample(input, grid, _GRID_MODES[mode], _GRID_PADDING[padding_mode], align_corners)
