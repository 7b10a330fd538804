"""torch.testing.make_tensor: a tensor of the given shape, dtype and device filled with values drawn
uniformly from [low, high), with PyTorch's default ranges per dtype and its argument checks."""
import collections.abc
import math
import warnings

from .. import _C

# dtype: (lowest value, highest value) for the integral types; randint's high is exclusive, so the
# highest admissible bound is max + 1 (except for int64, whose max + 1 does not fit randint's bound)
_INTEGRAL_RANGES = {t: (_C.iinfo(t).min, _C.iinfo(t).max + (t is not _C.int64))
                    for t in (_C.uint8, _C.int8, _C.int16, _C.int32, _C.int64)}
_FLOATING = (_C.float16, _C.bfloat16, _C.float32, _C.float64)


def _bounds(dtype, low, high, lowest, highest, default_low, default_high):
    """low and high after PyTorch's defaults, checks and clamping to [lowest, highest)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype in _FLOATING:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
                      "deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                      FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype in _FLOATING:
        return low, high
    return math.ceil(low), math.ceil(high)  # no value below low; randint's high is exclusive already


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of `shape` with values uniform in [low, high). Defaults: bool [0, 2), uint8 [0, 10),
    signed integers [-9, 10), floating types [-9, 9); bounds outside the dtype's range are clamped.
    noncontiguous=True returns a strided view (for tensors of 2+ elements); exclude_zero replaces zeros by 1
    (bool, integers) or the dtype's smallest normal number."""
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    floating = dtype in _FLOATING
    if requires_grad and (dtype is _C.bool or dtype in _INTEGRAL_RANGES):
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # twice the last dim, then every other element from the second
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is _C.bool:
        low, high = _bounds(dtype, low, high, 0, 2, 0, 2)
        result = _C.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL_RANGES:
        low, high = _bounds(dtype, low, high, *_INTEGRAL_RANGES[dtype], -9, 10)
        result = _C.randint(low, high, shape, device=device, dtype=dtype)
    elif floating:
        fmax = _C.finfo(dtype).max
        low, high = _bounds(dtype, low, high, -fmax, fmax, -9, 9)
        result = _C.empty(shape, device=device, dtype=dtype)
        if high - low >= fmax:  # uniform_ needs high - low to be finite: draw half the range, then double
            result.uniform_(low / 2, high / 2).mul_(2)
        else:
            result.uniform_(low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor(). "
                        "To request support, file an issue at: https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = _C.finfo(dtype).tiny if floating else 1
    if floating:
        result.requires_grad = requires_grad
    return result
