"""ctorch.nn.functional: PyTorch's functional API. Argument handling only: every computation is a
C op (csrc/nn.c for linear, the losses, layer_norm, embedding and leaky_relu; csrc/pool.c for pooling;
the elementwise and reduction families for the activations and softmax)."""
import warnings

from .. import _C

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
    raise NotImplementedError("ctorch.nn.functional.bilinear is not implemented")


# --- activations ------------------------------------------------------------------------------------------
def relu(input, inplace=False):
    if inplace:
        return input.relu_()
    return input.relu()


def relu_(input):
    return input.relu_()


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
    return _C.silu(input)


def softplus(input, beta=1.0, threshold=20.0):
    return _C.softplus(input, beta, threshold)


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
    keep = _C.empty_like(input).bernoulli_(1.0 - p)
    return input * keep * (1.0 / (1.0 - p))


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def one_hot(tensor, num_classes=-1):
    return _C.one_hot(tensor, num_classes)


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


# --- normalisation and embeddings ---------------------------------------------------------------------------
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _C.layer_norm(input, normalized_shape, weight, bias, eps)


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
