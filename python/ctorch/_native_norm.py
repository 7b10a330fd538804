"""torch.native_layer_norm / native_batch_norm / native_group_norm / native_dropout: ATen's tuple
results. The output is the fused C op's own (csrc/nn.c, csrc/norm.c: layer_norm, batch_norm,
group_norm; nn.functional's dropout draw), differentiable as theirs; the statistics PyTorch returns
beside it are var_mean over the normalised dims (float32 for float16/bfloat16 inputs, then cast to
PyTorch's dtype). As PyTorch: layer and batch norm's statistics do not require grad, group norm's do
(their derivative is the statistics' own), dropout's mask is bool."""
from . import _C
from .autograd import no_grad

_HALF = (_C.float16, _C.bfloat16)


def _var_mean(x, dims, keepdim):
    """(var, mean) of x over dims (biased, as the norms'), in float32 for a float16/bfloat16 x."""
    return _C.var_mean(x.float() if x.dtype in _HALF else x, dims, correction=0, keepdim=keepdim)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(out, mean, rstd); mean and rstd shaped input.shape[:-len(normalized_shape)] + (1,) * len(...)."""
    out = _C.layer_norm(input, normalized_shape, weight, bias, eps)
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    with no_grad():
        var, mean = _var_mean(input, dims, True)
        rstd = (var + eps).rsqrt()
    return out, mean.to(input.dtype), rstd.to(input.dtype)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(out, save_mean, save_invstd): the batch's per-channel mean and 1 / sqrt(var + eps) in training
    (in the parameters' dtype), empty (0,) tensors in evaluation."""
    if not training and (running_mean is None or running_var is None):
        raise ValueError(f"{'running_mean' if running_mean is None else 'running_var'} must be defined in "
                         "evaluation mode")
    params = [t for t in (weight, bias, running_mean, running_var) if t is not None]
    dtype = params[0].dtype if params else input.dtype
    if training:  # the statistics before batch_norm updates the running ones (they do not depend on them)
        with no_grad():
            var, mean = _var_mean(input, (0,) + tuple(range(2, input.dim())), False)
            save_mean, save_invstd = mean.to(dtype), (var + eps).rsqrt().to(dtype)
    out = _C.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
    if not training:
        save_mean = _C.empty((0,), dtype=dtype, device=input.device)
        save_invstd = _C.empty((0,), dtype=dtype, device=input.device)
    return out, save_mean, save_invstd


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(out, mean, rstd), mean and rstd (N, group); differentiable as PyTorch's."""
    if input.numel() != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.  (Could this error message "
                           "be improved?  If so, please report an enhancement request to PyTorch.)")
    out = _C.group_norm(input, group, weight, bias, eps)
    var, mean = _var_mean(input.reshape(N, group, -1), (2,), False)
    return out, mean.to(input.dtype), (var + eps).rsqrt().to(input.dtype)


def native_dropout(input, p, train):
    """(out, mask): train=False gives a copy and an all-True mask; otherwise nn.functional.dropout's
    draw, mask the kept elements."""
    if train is not None and not train:
        return input.clone(), _C.ones_like(input, dtype=_C.bool)
    from .nn.functional import _dropout_draw

    if not 0.0 <= 1.0 - p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1.0 - p:g}")
    if not (input.is_floating_point() or input.is_complex()):
        input.new_empty(()).mul_(0.5)  # an integer input: the scaling's own cast error, as PyTorch's
    out, keep = _dropout_draw(input, p)
    return out, keep.bool()
