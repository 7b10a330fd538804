"""Modules over csrc/nn_misc.c's ops: LocalResponseNorm, ChannelShuffle, RReLU, AlphaDropout,
FeatureAlphaDropout, LPPool1d / 2d / 3d, MaxUnpool1d / 2d / 3d and Softmax2d; FractionalMaxPool2d / 3d over
csrc/nn_frac_pool.c (in PyTorch's own files, gathered
here so that they merge apart from the other modules)."""
from ... import _C
from ...autograd.function import Function
from .. import functional as F
from .dropout import Dropout
from .module import Module


class LocalResponseNorm(Module):
    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


def _channel_window_sums(t, lo, hi):
    """(N, C, H, W): channel c's sum of t over channels lo[c] .. hi[c] (inclusive), from a running sum."""
    csum = _C.cat([_C.zeros_like(t[:, :1]), t.cumsum(1)], 1)
    first = _C.tensor(lo, device=t.device)
    last = _C.tensor([h + 1 for h in hi], device=t.device)
    return csum.index_select(1, last) - csum.index_select(1, first)


class _CrossMapLRN2dFunction(Function):
    """The legacy forward and PyTorch's legacy backward, which is not this forward's exact gradient
    (its window is shifted and drops channel 0's extra term): kept as PyTorch computes it."""

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        channels = input.size(1)
        pre = int((size - 1) / 2 + 1)
        square = input * input
        lo = [max(c - pre + 1, 0) for c in range(channels)]
        hi = [min(c + pre - 1, channels - 1) for c in range(channels)]
        # the legacy running sum never drops channel 0 once past it
        keep_first = _C.tensor([float(c >= pre) for c in range(channels)], dtype=input.dtype, device=input.device)
        scale = _channel_window_sums(square, lo, hi) + square[:, :1] * keep_first.reshape(1, -1, 1, 1)
        scale = scale * (alpha / size) + k
        output = input * scale.pow(-beta)
        ctx.save_for_backward(input, output, scale)
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        size, channels = ctx.size, input.size(1)
        shift = int(size - (size - 1) / 2)
        if shift > size - 1:  # the legacy code's padded ratio is too short for size 1
            raise RuntimeError(f"start ({shift}) + length ({channels}) exceeds dimension size ({channels + size - 1}).")
        ratio = grad_output * output / scale
        lo = [max(c - shift, 0) for c in range(channels)]
        hi = [min(c + size - 1 - shift, channels - 1) for c in range(channels)]
        accum = _channel_window_sums(ratio, lo, hi)
        grad = scale.pow(-ctx.beta) * grad_output - (2 * ctx.alpha * ctx.beta / size) * input * accum
        return grad, None, None, None, None


class CrossMapLRN2d(Module):
    """The legacy (Lua Torch) cross-channel LRN of (N, C, H, W) input: x * (k + alpha / size * s)^-beta, s
    the sum of squares over channels [c - pre + 1, c + pre - 1] (pre = (size - 1) // 2 + 1), plus channel
    0's for c >= pre; forward and backward as PyTorch's legacy function computes them."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class ChannelShuffle(Module):
    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class RReLU(Module):
    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace_str}"


class AlphaDropout(Dropout):
    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return "norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, ceil_mode={ceil_mode}".format(
            **self.__dict__)


class LPPool1d(_LPPoolNd):
    def forward(self, input):
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    def forward(self, input):
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    def forward(self, input):
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class _MaxUnpoolNd(Module):
    _n = 0

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = F._tuple(kernel_size, self._n)
        self.stride = F._tuple(stride if stride is not None else kernel_size, self._n)
        self.padding = F._tuple(padding, self._n)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _n = 1

    def forward(self, input, indices, output_size=None):
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    _n = 2

    def forward(self, input, indices, output_size=None):
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    _n = 3

    def forward(self, input, indices, output_size=None):
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class _FractionalMaxPoolNd(Module):
    """kernel_size and output_size / output_ratio as n-tuples; _random_samples a (None) buffer."""

    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]
    _n = 0

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        n = self._n
        self.kernel_size = F._tuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = F._tuple(output_size, n) if output_size is not None else None
        self.output_ratio = F._tuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        pool = F.fractional_max_pool2d if self._n == 2 else F.fractional_max_pool3d
        return pool(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                    _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _n = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _n = 3


class Softmax2d(Module):
    """softmax over the channels (dim -3) of (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)
