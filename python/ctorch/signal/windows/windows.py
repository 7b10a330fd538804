"""The window functions of torch.signal.windows, composed of ctorch ops as PyTorch composes them: each one
samples its argument with linspace over the window (M points; sym=False gives the periodic window, the first
M points of the symmetric window of length M + 1) and applies its formula elementwise."""
import math
from collections.abc import Iterable

from ... import _C, strided

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    """The checks every window makes first; returns the dtype (the default one for None)."""
    from ... import get_default_dtype
    dtype = get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_C.float32, _C.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M, dtype, device, requires_grad, ones_for_one=True):
    """The window of length 0 (empty), or 1 (a one) for the windows that special-case it; else None."""
    if M == 0:
        return _C.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1 and ones_for_one:
        return _C.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _grid(start, end, M, dtype, device, requires_grad):
    return _C.linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """w_n = exp(-|n - center| / tau)."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    w = _trivial(M, dtype, device, requires_grad, ones_for_one=False)
    if w is not None:
        return w
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    step = 1 / tau
    k = _grid(-center * step, (-center + (M - 1)) * step, M, dtype, device, requires_grad)
    return _C.exp(-_C.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """w_n = sin(pi (n + 1/2) / M)."""
    dtype = _checks("cosine", M, dtype, layout)
    w = _trivial(M, dtype, device, requires_grad, ones_for_one=False)
    if w is not None:
        return w
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return _C.sin(_grid(0.5 * step, (0.5 + (M - 1)) * step, M, dtype, device, requires_grad))


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """w_n = exp(-(n - (M - 1) / 2)^2 / (2 std^2))."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    w = _trivial(M, dtype, device, requires_grad, ones_for_one=False)
    if w is not None:
        return w
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    step = 1 / (std * math.sqrt(2))
    k = _grid(start * step, (start + (M - 1)) * step, M, dtype, device, requires_grad)
    return _C.exp(-(k ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """w_n = I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    w = _trivial(M, dtype, device, requires_grad)
    if w is not None:
        return w
    beta = _C.tensor(beta, dtype=dtype, device=device)  # beta in the window's dtype: no NaN at the ends
    step = 2.0 * beta / (M if not sym else M - 1)
    end = _C.minimum(beta, -beta + (M - 1) * step)
    k = _grid(-beta, end, M, dtype, device, requires_grad)
    return _C.i0(_C.sqrt(beta * beta - _C.pow(k, 2))) / _C.i0(beta)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """w_n = 1 - |2n / (M - 1) - 1|."""
    dtype = _checks("bartlett", M, dtype, layout)
    w = _trivial(M, dtype, device, requires_grad)
    if w is not None:
        return w
    step = 2 / (M if not sym else M - 1)
    return 1 - _C.abs(_grid(-1, -1 + (M - 1) * step, M, dtype, device, requires_grad))


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """w_n = sum_i (-1)^i a_i cos(2 pi i n / (M - 1))."""
    dtype = _checks("general_cosine", M, dtype, layout)
    w = _trivial(M, dtype, device, requires_grad)
    if w is not None:
        return w
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / (M if not sym else M - 1)
    k = _grid(0, (M - 1) * step, M, dtype, device, requires_grad)
    a_i = _C.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device,
                    requires_grad=requires_grad)
    i = _C.arange(a_i.shape[0], dtype=dtype, device=a_i.device, requires_grad=requires_grad)
    terms = a_i.unsqueeze(-1) * _C.cos(i.unsqueeze(-1) * k)
    # summed term by term, in order (PyTorch's sum(0) over the few rows accumulates them so)
    w = terms[0]
    for term in terms[1:]:
        w = w + term
    return w


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """w_n = alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """general_hamming with alpha = 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """general_hamming with alpha = 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """general_cosine with a = [0.42, 0.5, 0.08]."""
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window (Nuttall's coefficients)."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
