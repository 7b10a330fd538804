"""torch.distributions.utils: argument broadcasting, probs <-> logits, lazy properties, and the
small helpers the distributions share (standard normal draws, summing rightmost dims)."""
import ctorch as torch

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni

_Number = (bool, int, float)

def _finfo(dtype):
    """(eps, tiny, min) of a floating dtype."""
    f = torch.finfo(dtype)
    return f.eps, f.tiny, f.min


def broadcast_all(*values):
    """Broadcasts tensors and numbers together; numbers become tensors of the first tensor's
    dtype and device (the default dtype when all are numbers)."""
    if not all(isinstance(v, (torch.Tensor,) + _Number) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, torch.Tensor) for v in values):
        options = {"dtype": torch.get_default_dtype()}
        for v in values:
            if isinstance(v, torch.Tensor):
                options = {"dtype": v.dtype, "device": v.device}
                break
        values = [v if isinstance(v, torch.Tensor) else torch.tensor(v, **options) for v in values]
    return torch.broadcast_tensors(*values)


def _broadcast_params(*values):
    """broadcast_all of a distribution's parameters, and its batch shape: () when every
    parameter is a Python number, else the broadcast shape."""
    tensors = broadcast_all(*values)
    batch_shape = torch.Size() if all(isinstance(v, _Number) for v in values) else tensors[0].size()
    return tensors, batch_shape


def _standard_normal(shape, dtype, device):
    return torch.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """Sums the ``dim`` rightmost dims of ``value``."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """sigmoid for binary log-odds, softmax over the last dim otherwise."""
    if is_binary:
        return torch.sigmoid(logits)
    return torch.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamps probabilities to [eps, 1 - eps] of their dtype."""
    eps = _finfo(probs.dtype)[0]
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """log-odds for binary probabilities, log-probabilities otherwise (clamped first)."""
    ps = clamp_probs(probs)
    if is_binary:
        return torch.log(ps) - torch.log1p(-ps)
    return torch.log(ps)


class lazy_property:
    """Computes an attribute on first access (with grad enabled, so it can be differentiated
    later) and stores it on the instance, replacing the descriptor."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_mask(n, diag, device):
    arange = torch.arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries (below diagonal ``diag``) of a batch of square matrices, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec: a batch of D x D lower-triangular matrices."""
    k = 1 + 2 * diag
    n = (-k + (k * k + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > _finfo(vec.dtype)[0]:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat
