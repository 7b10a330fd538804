"""Gradient clipping, as torch.nn.utils.clip_grad. Argument handling only: the total norm and the
in-place scaling are one C call each over the whole list (csrc/clip.c), the total staying on the
device, so clipping waits on the device only when error_if_nonfinite needs the total's value."""
import functools
import warnings

from ... import _C
from ...autograd import no_grad

Tensor = _C.Tensor


def _no_grad(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with no_grad():
            return fn(*args, **kwargs)

    return wrapper


def _tensor_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _grads_of(parameters):
    return [p.grad for p in _tensor_list(parameters) if p.grad is not None]


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm_type-norm of the tensors' norms (as if of all their elements together); tensor(0.) for
    none. norm_type may be inf."""
    return _C._total_norm(_tensor_list(tensors), float(norm_type), bool(error_if_nonfinite))


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients in place by min(max_norm / (total_norm + 1e-6), 1)."""
    grads = _grads_of(parameters)
    if grads:
        _C._clip_grads_with_norm_(grads, float(max_norm), total_norm)


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clips the gradients of parameters so that their total norm is at most max_norm; returns the total
    norm (before clipping) as a tensor."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        parameters = list(parameters)  # a generator is read twice
    grads = _grads_of(parameters)
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    if grads:
        _C._clip_grads_with_norm_(grads, float(max_norm), total_norm)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of clip_grad_norm_."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient in place into [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for grad in _grads_of(parameters):
        grad.clamp_min_(-clip_value).clamp_max_(clip_value)
