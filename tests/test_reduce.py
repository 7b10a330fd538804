"""Tests of the reduction family (sum, mean, prod, max/min, amax/amin, argmax/argmin, var/std,
norm, logsumexp, all/any, count_nonzero, cumsum/cumprod, cummax/cummin, logcumsumexp,
softmax/log_softmax, sort/argsort/topk, median, kthvalue/mode/msort, quantile/nanquantile, nanmean/nanmedian)
against NumPy, over dtypes x layouts x dims, plus PyTorch's errors, named-tuple results,
empty tensors, NaN handling, numerical stability, accuracy and determinism."""
import math
import re
import warnings

import numpy as np
import pytest

import ctorch
from conftest import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, to_numpy

# rtol/atol per dtype for results computed from the tensor's own (already rounded) values
RTOL = {"float64": 1e-10, "float32": 2e-5, "float16": 2e-3, "bfloat16": 1.6e-2}
LAYOUTS = ["contiguous", "transposed", "narrowed", "expanded"]
DIMS = [None, 0, 1, -1, (0, 2), (-1, 0, 1), [2], ()]


def L(t):
    """The values of t as (nested) Python lists."""
    return to_numpy(t).tolist()


def dt(name):
    return getattr(ctorch, name)


def data(dtype, shape, rng, low=None):
    """Random values representable in dtype: small integers, bools, or floats near 1 (so that
    products and low-precision sums stay well conditioned)."""
    if dtype == "bool":
        return rng.random(shape) < 0.6
    if dtype in INT_DTYPES:
        lo = 0 if dtype == "uint8" else -3
        return rng.integers(lo, 4, size=shape)
    if low is None:
        return rng.standard_normal(shape)
    return rng.uniform(low, low + 1, size=shape)


def make(arr, dtype, layout, device="cpu"):
    """arr (3-d) as a tensor of dtype in the given layout (same values)."""
    kw = {"dtype": dt(dtype), "device": device}
    if layout == "contiguous":
        return ctorch.tensor(arr, **kw)
    if layout == "transposed":  # strides reversed: a permuted view of a contiguous copy
        return ctorch.tensor(np.ascontiguousarray(arr.transpose(2, 1, 0)), **kw).permute(2, 1, 0)
    if layout == "narrowed":  # a narrow along dim 1 of a bigger tensor, then a transpose
        big = np.concatenate([arr[:, :1], arr, arr[:, :2]], axis=1)
        return ctorch.tensor(big, **kw).narrow(1, 1, arr.shape[1])
    if layout == "expanded":  # stride 0 along dim 1
        return ctorch.tensor(arr[:, :1, :], **kw).expand(*arr.shape)
    raise ValueError(layout)


def ref(t):
    """NumPy copy of t's values in float64 (floats) or int64 (integers and bool)."""
    a = to_numpy(t)
    return a.astype(np.float64) if a.dtype.kind == "f" else a.astype(np.int64)


def np_axis(dim, ndim):
    if dim is None or dim == () or dim == []:
        return None
    if isinstance(dim, int):
        return dim
    return tuple(dim)


def check(actual, expected, dtype, rtol=None, atol_scale=1.0):
    exp = np.asarray(expected)
    a = to_numpy(actual)
    assert a.shape == exp.shape, f"shape {a.shape} != {exp.shape}"
    if a.dtype.kind == "f" or exp.dtype.kind == "f":
        r = RTOL.get(dtype, 1e-12) if rtol is None else rtol
        np.testing.assert_allclose(a.astype(np.float64), exp.astype(np.float64), rtol=r, atol=r * atol_scale,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(a, exp)


# --- sum / mean / prod / nansum --------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_sum(device, dtype, layout, rng):
    t = make(data(dtype, (3, 4, 5), rng), dtype, layout, device)
    x = ref(t)
    out_dtype = ctorch.int64 if dtype in INT_DTYPES + ["bool"] else dt(dtype)
    for dim in DIMS:
        for keepdim in (False, True):
            r = t.sum(dim, keepdim) if dim is not None else t.sum(dim=None, keepdim=keepdim)
            assert r.dtype == out_dtype
            check(r, np.sum(x, axis=np_axis(dim, 3), keepdims=keepdim), dtype, atol_scale=10)
    assert ctorch.sum(t).dtype == out_dtype
    check(ctorch.sum(input=t, dim=1), np.sum(x, axis=1), dtype, atol_scale=10)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_mean(device, dtype, layout, rng):
    t = make(data(dtype, (3, 4, 5), rng), dtype, layout, device)
    x = ref(t)
    for dim in DIMS:
        for keepdim in (False, True):
            r = t.mean(dim, keepdim)
            assert r.dtype == dt(dtype)
            check(r, np.mean(x, axis=np_axis(dim, 3), keepdims=keepdim), dtype, atol_scale=2)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_prod(device, dtype, layout, rng):
    t = make(data(dtype, (3, 4, 5), rng, low=0.5), dtype, layout, device)
    x = ref(t)
    out_dtype = ctorch.int64 if dtype in INT_DTYPES + ["bool"] else dt(dtype)
    for dim in [None, 0, 1, -1]:
        for keepdim in (False, True):
            r = t.prod(dim, keepdim) if dim is not None else t.prod()
            assert r.dtype == out_dtype
            exp = np.prod(x, axis=dim, keepdims=keepdim and dim is not None)
            check(r, exp, dtype, rtol=RTOL.get(dtype, 0) * 4 if dtype in RTOL else None)


def test_sum_dtype_argument(device):
    x = ctorch.tensor([[1, 2], [3, 300]], device=device)
    assert x.sum(dtype=ctorch.float32).dtype == ctorch.float32
    assert L(x.sum(0, dtype=ctorch.float64)) == [4.0, 302.0]
    assert ctorch.tensor([300, 300], device=device).sum(dtype=ctorch.uint8).item() == 88  # cast first, wraps
    assert ctorch.tensor([True, True], device=device).sum(dtype=ctorch.bool).item() is True
    h = ctorch.tensor([65504.0, 65504.0], dtype=ctorch.float16, device=device)
    assert math.isinf(h.sum().item())  # the float16 result overflows
    assert h.mean().item() == 65504.0  # accumulated in float32
    assert h.sum(dtype=ctorch.float32).item() == 131008.0
    assert ctorch.tensor([1, 2, 3], dtype=ctorch.int8, device=device).mean(dtype=ctorch.float32).item() == 2.0
    assert ctorch.sum(x, 0, True, dtype=ctorch.float64).shape == (1, 2)


def test_int_accumulation_is_int64(device):
    x = ctorch.tensor(np.full(1000, 100, dtype=np.int8), device=device)
    assert x.sum().item() == 100000
    assert x.sum().dtype == ctorch.int64
    big = ctorch.tensor([2**62, 2**62, 2**62], device=device)
    assert big.sum().item() == np.array([2**62] * 3, dtype=np.int64).sum()  # wraps like int64


def test_nansum(device):
    x = ctorch.tensor([[1.0, float("nan")], [3.0, 4.0]], device=device)
    assert x.nansum().item() == 8.0
    assert L(x.nansum(0)) == [4.0, 4.0]
    assert math.isnan(x.sum().item())


# --- max / min / amax / amin / argmax / argmin ----------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_amax_amin(device, dtype, layout, rng):
    t = make(data(dtype, (3, 4, 5), rng), dtype, layout, device)
    x = ref(t)
    for dim in DIMS:
        for keepdim in (False, True):
            check(t.amax(dim, keepdim), np.max(x, axis=np_axis(dim, 3), keepdims=keepdim), dtype)
            check(ctorch.amin(t, dim, keepdim), np.min(x, axis=np_axis(dim, 3), keepdims=keepdim), dtype)
            assert t.amax(dim, keepdim).dtype == t.dtype
    check(t.max(), np.max(x), dtype)
    check(ctorch.min(t), np.min(x), dtype)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_max_min_dim(device, dtype, layout, rng):
    t = make(data(dtype, (3, 4, 5), rng), dtype, layout, device)
    x = ref(t)
    for dim in (0, 1, 2, -1):
        for keepdim in (False, True):
            r = t.max(dim, keepdim)
            assert isinstance(r, tuple) and len(r) == 2
            check(r.values, np.max(x, axis=dim, keepdims=keepdim), dtype)
            check(r.indices, np.argmax(x, axis=dim, keepdims=keepdim), "int64")  # first occurrence
            r = ctorch.min(t, dim=dim, keepdim=keepdim)
            check(r[0], np.min(x, axis=dim, keepdims=keepdim), dtype)
            check(r[1], np.argmin(x, axis=dim, keepdims=keepdim), "int64")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != "bool"])
def test_argmax_argmin(device, dtype, layout, rng):
    t = make(data(dtype, (3, 4, 5), rng), dtype, layout, device)
    x = ref(t)
    assert t.argmax().item() == np.argmax(x)
    assert ctorch.argmin(t).item() == np.argmin(x)
    assert t.argmax(keepdim=True).shape == (1, 1, 1)
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            check(t.argmax(dim, keepdim), np.argmax(x, axis=dim, keepdims=keepdim), "int64")
            check(t.argmin(dim=dim, keepdim=keepdim), np.argmin(x, axis=dim, keepdims=keepdim), "int64")


def test_max_nan_and_ties(device):
    nan = float("nan")
    x = ctorch.tensor([1.0, nan, 3.0, nan], device=device)
    assert math.isnan(x.max().item()) and math.isnan(x.amin().item())
    assert x.argmax().item() == 1 and x.argmin().item() == 1  # NaN counts as max and min
    r = x.max(0)
    assert math.isnan(r.values.item()) and r.indices.item() == 1
    y = ctorch.tensor([2.0, 1.0, 2.0, 1.0], device=device)
    assert y.argmax().item() == 0 and y.argmin().item() == 1  # first occurrence
    assert y.max(0).indices.item() == 0
    z = ctorch.tensor([[1.0, nan], [nan, 2.0], [3.0, 4.0]], device=device)
    assert np.array_equal(to_numpy(z.amax(1)), [np.nan, np.nan, 4.0], equal_nan=True)
    assert L(z.argmax(1)) == [1, 0, 1]
    # NaN in the middle of a long line (block-wise search) and in an outer-dim reduction
    w = np.arange(5000, dtype=np.float32)
    w[3000] = np.nan
    tw = ctorch.tensor(w, device=device)
    assert tw.argmax().item() == 3000 and math.isnan(tw.max().item())
    cols = ctorch.tensor(np.stack([w, w[::-1].copy()], 1), device=device)
    assert np.isnan(to_numpy(cols.amax(0))).all()
    # outer-dim max/min over rows taken four at a time, NaN in any of the four
    m = np.random.default_rng(3).standard_normal((67, 3000))
    for r, c in [(37, 2500), (5, 10), (64, 2999), (66, 0), (1, 1)]:
        m[r, c] = np.nan
    for dtype in ("float32", "float64"):
        tm = ctorch.tensor(m, dtype=dt(dtype), device=device)
        for fn, npfn in ((tm.amax, np.max), (tm.amin, np.min)):
            np.testing.assert_array_equal(to_numpy(fn(0)), npfn(m, axis=0).astype(dtype))


def test_max_binary_and_bad_args(device):
    x = ctorch.tensor([[1.0, 2.0]], device=device)
    with pytest.raises(TypeError):
        x.max(keepdim=True)
    with pytest.raises(TypeError, match="must be int"):
        x.argmax(dim=(0,))
    with pytest.raises(TypeError, match="must be int"):
        x.max(dim=(0,))


def test_aminmax(device, rng):
    a = rng.standard_normal((3, 4))
    t = ctorch.tensor(a, device=device)
    r = ctorch.aminmax(t)
    assert r.min.item() == a.min() and r.max.item() == a.max()
    r = t.aminmax(dim=1, keepdim=True)
    check(r.min, a.min(1, keepdims=True), "float64")
    check(r.max, a.max(1, keepdims=True), "float64")
    assert repr(r).startswith("torch.return_types.aminmax(\nmin=tensor(")


# --- var / std ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_var_std(device, dtype, layout, rng):
    t = make(data(dtype, (3, 4, 5), rng), dtype, layout, device)
    x = ref(t)
    for dim in [None, 0, -1, (0, 2), [1]]:
        ax = np_axis(dim, 3)
        n = x.size if ax is None else np.prod([x.shape[d] for d in np.atleast_1d(ax)])
        for keepdim in (False, True):
            for correction in (0, 1, 2.5):
                if n - correction <= 0:
                    continue
                ev = np.var(x, axis=ax, keepdims=keepdim, ddof=correction)
                check(t.var(dim, keepdim=keepdim, correction=correction), ev, dtype, atol_scale=2)
                check(t.std(dim, keepdim=keepdim, correction=correction), np.sqrt(ev), dtype, atol_scale=2)
        check(t.var(dim, False), np.var(x, axis=ax, ddof=0), dtype, atol_scale=2)  # unbiased=False
        check(ctorch.std(t, dim, True), np.std(x, axis=ax, ddof=1), dtype, atol_scale=2)
    check(t.std(False), np.std(x, ddof=0), dtype)  # std(unbiased)
    v, m = ctorch.var_mean(t, 1, keepdim=True)
    check(v, np.var(x, axis=1, ddof=1, keepdims=True), dtype, atol_scale=2)
    check(m, np.mean(x, axis=1, keepdims=True), dtype, atol_scale=2)
    assert v.dtype == m.dtype == dt(dtype)
    s, m = ctorch.std_mean(t, correction=0)
    check(s, np.std(x), dtype)
    check(m, np.mean(x), dtype, atol_scale=2)


def test_var_dof_warning_and_empty(device):
    x = ctorch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    with pytest.warns(UserWarning, match=r"var\(\): degrees of freedom is <= 0"):
        r = x.var(0, correction=2)
    assert L(r) == [math.inf, math.inf]
    with pytest.warns(UserWarning, match=r"std\(\): degrees of freedom"):
        assert math.isnan(ctorch.tensor([], device=device).std().item())
    with pytest.warns(UserWarning):
        assert np.isnan(to_numpy(x.narrow(0, 0, 1).std(0))).all()


def test_var_stable_with_large_offset(device):
    a = 1e4 + np.random.default_rng(0).standard_normal(100000).astype(np.float32)
    t = ctorch.tensor(a, device=device)
    # two passes: no catastrophic cancellation in float32
    assert abs(t.var().item() - np.var(a.astype(np.float64), ddof=1)) < 1e-3


# --- norm -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_norm(device, dtype, layout, rng):
    t = make(data(dtype, (3, 4, 5), rng), dtype, layout, device)
    x = ref(t)
    for p in [2, "fro", 1, 3, 1.5, 0, float("inf"), float("-inf"), -1]:
        for dim in [None, 0, -1, (0, 2)]:
            if p == "fro" and dim is None:
                exp = np.sqrt(np.sum(x * x))
            else:
                q = 2 if p == "fro" else p
                ax = np_axis(dim, 3)
                a = np.abs(x)
                if q == float("inf"):
                    exp = np.max(a, axis=ax)
                elif q == float("-inf"):
                    exp = np.min(a, axis=ax)
                elif q == 0:
                    exp = np.sum(a != 0, axis=ax).astype(np.float64)
                else:
                    exp = np.sum(a ** q, axis=ax) ** (1.0 / q)
            r = t.norm(p, dim)
            assert r.dtype == dt(dtype)
            check(r, exp, dtype, atol_scale=3)
    check(ctorch.norm(t, dim=1, keepdim=True), np.sqrt(np.sum(x * x, axis=1, keepdims=True)), dtype, atol_scale=3)
    assert t.norm(dtype=ctorch.float64).dtype == ctorch.float64


def test_norm_errors(device):
    f = ctorch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    with pytest.raises(NotImplementedError, match="linalg.vector_norm: Expected a floating point or complex tensor "
                                                  "as input. Got Long"):
        ctorch.tensor([1, 2], device=device).norm()
    with pytest.raises(RuntimeError, match="dtype should be floating point or complex, but got Long"):
        f.norm(dtype=ctorch.int64)
    with pytest.raises(RuntimeError, match="Order abc not supported"):
        f.norm(p="abc")
    with pytest.raises(RuntimeError, match="cannot compute the inf norm on an empty tensor"):
        ctorch.tensor([], device=device).norm(float("inf"))
    assert ctorch.tensor([], device=device).norm().item() == 0.0
    assert f.norm(p="fro", dim=(0, 1)).item() == pytest.approx(math.sqrt(30))


# --- logsumexp --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_logsumexp(device, dtype, rng):
    t = make(data(dtype, (3, 4, 5), rng), dtype, "transposed", device)
    x = ref(t).astype(np.float64)
    exp_dtype = dt(dtype) if dtype in FLOAT_DTYPES else ctorch.float32
    for dim in [0, -1, (0, 2), [0, 1, 2]]:
        for keepdim in (False, True):
            ax = np_axis(dim, 3)
            m = np.max(x, axis=ax, keepdims=True)
            exp = np.log(np.sum(np.exp(x - m), axis=ax, keepdims=True)) + m
            if not keepdim:
                exp = np.squeeze(exp, axis=ax)
            r = ctorch.logsumexp(t, dim, keepdim)
            assert r.dtype == exp_dtype
            check(r, exp, str(exp_dtype).replace("torch.", ""))


def test_logsumexp_stable_and_infinite(device):
    inf = float("inf")
    x = ctorch.tensor([1000.0, 1000.0], device=device)
    assert x.logsumexp(0).item() == pytest.approx(1000 + math.log(2))
    assert ctorch.tensor([-1000.0, -1000.0], device=device).logsumexp(0).item() == pytest.approx(-1000 + math.log(2))
    assert ctorch.tensor([-inf, -inf], device=device).logsumexp(0).item() == -inf
    assert ctorch.tensor([inf, inf], device=device).logsumexp(0).item() == inf
    assert ctorch.tensor([-inf, inf], device=device).logsumexp(0).item() == inf
    assert L(ctorch.tensor(np.zeros((0, 3)), device=device).logsumexp(0)) == [-inf] * 3
    with pytest.raises(TypeError, match="missing required argument 'dim'"):
        x.logsumexp()


# --- all / any / count_nonzero ------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_all_any_count_nonzero(device, dtype, layout, rng):
    arr = data(dtype, (3, 4, 5), rng)
    if dtype in FLOAT_DTYPES:
        arr = np.where(rng.random(arr.shape) < 0.3, 0.0, arr)
        arr[0, 0, 0] = 0.25  # fractional values are true
    t = make(arr, dtype, layout, device)
    x = ref(t)
    out_dtype = ctorch.uint8 if dtype == "uint8" else ctorch.bool
    for dim in DIMS:
        for keepdim in (False, True):
            ax = np_axis(dim, 3) if dim != () else ()  # all/any read dim=() as "no dims" (PyTorch)
            r = t.all(dim, keepdim)
            assert r.dtype == out_dtype
            check(r, np.all(x != 0, axis=ax, keepdims=keepdim).astype(to_numpy(r).dtype), "bool")
            r = ctorch.any(t, dim, keepdim=keepdim)
            check(r, np.any(x != 0, axis=ax, keepdims=keepdim).astype(to_numpy(r).dtype), "bool")
        r = t.count_nonzero(dim)
        assert r.dtype == ctorch.int64
        check(r, np.count_nonzero(x, axis=np_axis(dim, 3)), "int64")
    assert ctorch.tensor([float("nan")], device=device).all().item() is True
    assert ctorch.tensor([], device=device).all().item() is True
    assert ctorch.tensor([], device=device).any().item() is False


# --- cumsum / cumprod -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cumsum_cumprod(device, dtype, layout, rng):
    t = make(data(dtype, (3, 4, 5), rng, low=0.5), dtype, layout, device)
    x = ref(t)
    out_dtype = ctorch.int64 if dtype in INT_DTYPES + ["bool"] else dt(dtype)
    for dim in (0, 1, -1):
        r = t.cumsum(dim)
        assert r.dtype == out_dtype and r.shape == t.shape
        check(r, np.cumsum(x, axis=dim), dtype, atol_scale=4)
        check(ctorch.cumprod(t, dim), np.cumprod(x, axis=dim), dtype, atol_scale=4)
    r = t.cumsum(1, dtype=ctorch.float64)
    assert r.dtype == ctorch.float64
    check(r, np.cumsum(x, axis=1), "float64", rtol=1e-12)


def test_cumsum_long_and_zero_dim(device):
    a = np.random.default_rng(0).standard_normal(100000).astype(np.float32)
    t = ctorch.tensor(a, device=device)
    exp = np.cumsum(a.astype(np.float64))
    np.testing.assert_allclose(to_numpy(t.cumsum(0)), exp, rtol=1e-5, atol=1e-3)  # accumulated in double
    s = ctorch.tensor(5, device=device)
    assert s.cumsum(0).item() == 5 and s.cumsum(0).shape == ()
    assert ctorch.tensor(np.zeros((3, 0)), device=device).cumsum(1).shape == (3, 0)
    with pytest.raises(TypeError, match="missing required argument 'dim'"):
        t.cumsum()


# --- cummax / cummin / logcumsumexp --------------------------------------------------------------------------------
def np_cum_extremum(x, axis, is_max):
    """PyTorch's cummax/cummin: the running extremum and the index where it was last reached (a
    later equal value takes over; a NaN takes over and stays until the next NaN)."""
    a = np.moveaxis(x, axis, -1)
    vals, idx = np.empty_like(a), np.zeros(a.shape, np.int64)
    best, at = a[..., 0], np.zeros(a.shape[:-1], np.int64)
    with np.errstate(invalid="ignore"):
        for i in range(a.shape[-1]):
            v = a[..., i]
            take = (v >= best if is_max else v <= best) | (np.isnan(v) if a.dtype.kind == "f" else False)
            best, at = np.where(take, v, best), np.where(take, i, at)
            vals[..., i], idx[..., i] = best, at
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)


def tied(dtype, shape, rng, nan_rate=0.1):
    """Values with many ties (and NaNs for floats), representable in every dtype."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    x = rng.integers(0 if dtype == "uint8" else -3, 4, size=shape).astype(np.float64)
    if dtype in FLOAT_DTYPES:
        x[rng.random(shape) < nan_rate] = np.nan
    return x


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cummax_cummin(device, dtype, layout, rng):
    t = make(tied(dtype, (3, 4, 5), rng), dtype, layout, device)
    x = ref(t)
    for dim in (0, 1, -1):
        for name, is_max in (("cummax", True), ("cummin", False)):
            r = getattr(t, name)(dim) if dim != 1 else getattr(ctorch, name)(t, dim=dim)
            assert type(r).__name__ == name and r.values.dtype == t.dtype and r.indices.dtype == ctorch.int64
            vals, idx = np_cum_extremum(x, dim, is_max)
            check(r.values, vals, dtype)
            check(r.indices, idx, "int64")


def test_cummax_cummin_nan_ties_and_edges(device):
    nan = float("nan")
    x = ctorch.tensor([1.0, 3.0, 3.0, nan, 2.0, 5.0, nan, 1.0], device=device)
    r = ctorch.cummax(x, 0)
    assert L(r.indices) == [0, 1, 2, 3, 3, 3, 6, 6] and L(r.values)[:3] == [1.0, 3.0, 3.0]
    assert np.isnan(to_numpy(r.values)[3:]).all()
    assert L(ctorch.cummin(x, 0).indices) == [0, 0, 0, 3, 3, 3, 6, 6]
    r = ctorch.tensor([1, 3, 3, 2, 5, 5, 1], device=device).cummax(0)  # ties: the latest index
    assert L(r.values) == [1, 3, 3, 3, 5, 5, 5] and L(r.indices) == [0, 1, 2, 2, 4, 5, 5]
    r = ctorch.tensor([True, False, True, True], device=device).cummin(0)
    assert L(r.values) == [True, False, False, False] and L(r.indices) == [0, 1, 1, 1]
    inf = float("inf")
    assert L(ctorch.cummax(ctorch.tensor([-inf, -inf, 2.0, inf], device=device), 0).indices) == [0, 1, 2, 3]
    s = ctorch.tensor(2.5, device=device)  # 0-d: dim 0 or -1
    for dim in (0, -1):
        r = s.cummax(dim)
        assert r.values.shape == () and r.values.item() == 2.5 and r.indices.item() == 0
    with pytest.raises(IndexError, match=r"^cummax\(\): Expected reduction dim -1 or 0 for scalar but got 1$"):
        s.cummax(1)
    with pytest.raises(IndexError, match=r"^cummin\(\): Expected reduction dim -1 or 0 for scalar but got -2$"):
        ctorch.cummin(s, -2)
    e = ctorch.tensor(np.zeros((0, 3)), device=device)
    assert e.cummax(0).values.shape == (0, 3) and e.cummin(1).indices.shape == (0, 3)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"):
        x.cummax(1)
    with pytest.raises(TypeError, match="^cummax\\(\\): argument 'dim' must be int, not float$"):
        ctorch.cummax(x, 1.5)
    # out=(values, indices): resized, a cummax_out named tuple; dtypes checked as PyTorch
    v, i = _e(device), _e(device, "int64")
    r = ctorch.cummax(x[:3], 0, out=(v, i))
    assert r.values is v and r.indices is i and type(r).__name__ == "cummax_out" and L(i) == [0, 1, 2]
    assert type(ctorch.cummin(x, 0, out=(_e(device), _e(device, "int64")))).__name__ == "cummin_out"
    with pytest.raises(RuntimeError, match="^expected scalar_type Float but found Double$"):
        ctorch.cummax(x, 0, out=(_e(device, "float64"), _e(device, "int32")))
    with pytest.raises(RuntimeError, match="^expected scalar_type Long but found Int$"):
        ctorch.cummin(x, 0, out=(_e(device), _e(device, "int32")))
    with pytest.raises(TypeError, match="^cummax\\(\\): argument 'out' must be tuple of Tensors, not Tensor$"):
        ctorch.cummax(x, 0, out=_e(device))
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        x.cummax(0, out=(v, i))
    y = ctorch.tensor([[1.0, 3.0, 2.0]], device=device)  # out may be the input itself, as in PyTorch
    assert L(ctorch.cummax(y, 1, out=(y, _e(device, "int64"))).values) == [[1.0, 3.0, 3.0]] and L(y) == [[1.0, 3.0, 3.0]]


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_logcumsumexp(device, dtype, layout, rng):
    t = make(data(dtype, (3, 4, 5), rng) * 3, dtype, layout, device)
    x = ref(t)
    for dim in (0, 1, -1):
        r = t.logcumsumexp(dim) if dim else ctorch.logcumsumexp(t, dim=dim)
        assert r.dtype == t.dtype and r.shape == t.shape
        check(r, np.logaddexp.accumulate(x, axis=dim), dtype, atol_scale=4)


def test_logcumsumexp_stable_infinite_and_errors(device):
    inf, nan = float("inf"), float("nan")
    t = ctorch.tensor([1e4, -1e4, 3.0, 1e4], device=device)  # no overflow: relative to the running max
    np.testing.assert_allclose(L(ctorch.logcumsumexp(t, 0)), [1e4, 1e4, 1e4, 1e4 + math.log(2)], rtol=1e-7)
    assert L(ctorch.tensor([-inf, -inf, 1.0], device=device).logcumsumexp(0)) == [-inf, -inf, 1.0]
    assert L(ctorch.tensor([-inf, inf, -inf, 2.0], device=device).logcumsumexp(0)) == [-inf, inf, inf, inf]
    r = to_numpy(ctorch.tensor([0.5, 2.0, nan, 1.0], device=device).logcumsumexp(0))
    assert r[0] == 0.5 and np.isnan(r[2:]).all()
    assert ctorch.tensor(1.5, device=device).logcumsumexp(0).item() == 1.5
    assert ctorch.tensor(np.zeros((0, 2)), device=device).logcumsumexp(0).shape == (0, 2)
    kernel = {"cpu": "logcumsumexp_out_cpu", "cuda": "logcumsumexp_cuda"}[device]
    for dtype, name in (("int64", "Long"), ("uint8", "Byte"), ("bool", "Bool")):
        i = ctorch.tensor([1, 0, 1], dtype=dt(dtype), device=device)
        with pytest.raises(NotImplementedError, match=f"^\"{kernel}\" not implemented for '{name}'$"):
            ctorch.logcumsumexp(i, 0, out=_e(device, dtype))
    with pytest.raises(RuntimeError, match="^expected scalar_type Float but found Double$"):
        ctorch.logcumsumexp(t, 0, out=_e(device, "float64"))
    with pytest.raises(TypeError, match="unexpected keyword argument 'dtype'"):
        ctorch.logcumsumexp(t, 0, dtype=ctorch.float64)


@pytest.mark.parametrize("shape,dim", [((3, 3000), 1), ((2000, 5), 0), ((5, 1500), 0)])
def test_scans_long_and_strided_lines(device, shape, dim, rng):
    """Long lines (the CPU's threads, CUDA's block scan) and many strided ones (the CPU's
    vertical path, CUDA's one thread per line)."""
    x = np.round(rng.standard_normal(shape) * 3)
    x[rng.random(shape) < 0.001] = np.nan
    t = ctorch.tensor(x, dtype=ctorch.float32, device=device)
    for name, is_max in (("cummax", True), ("cummin", False)):
        r = getattr(t, name)(dim)
        vals, idx = np_cum_extremum(x, dim, is_max)
        check(r.values, vals, "float32")
        check(r.indices, idx, "int64")
    y = rng.standard_normal(shape) * 5
    check(ctorch.tensor(y, device=device).logcumsumexp(dim), np.logaddexp.accumulate(y, axis=dim), "float64")


# --- softmax / log_softmax ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_softmax(device, dtype, layout, rng):
    t = make(data(dtype, (3, 4, 5), rng), dtype, layout, device)
    x = ref(t)
    for dim in (0, 1, -1):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        sm = e / e.sum(axis=dim, keepdims=True)
        r = t.softmax(dim)
        assert r.dtype == t.dtype and r.shape == t.shape
        check(r, sm, dtype)
        check(ctorch.log_softmax(t, dim), np.log(sm), dtype, atol_scale=4)
    r = ctorch.softmax(t, 1, dtype=ctorch.float64)
    assert r.dtype == ctorch.float64


def test_softmax_stable_and_ints(device):
    x = ctorch.tensor([[1000.0, 0.0, -1000.0], [1000.0, 1000.0, 1000.0]], device=device)
    r = to_numpy(x.softmax(1))
    np.testing.assert_allclose(r, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6)
    ls = to_numpy(x.log_softmax(1))
    np.testing.assert_allclose(ls, [[0, -1000, -2000], [-math.log(3)] * 3], rtol=1e-6)
    inf = float("inf")
    assert np.isnan(to_numpy(ctorch.tensor([-inf, -inf], device=device).softmax(0))).all()
    assert L(ctorch.tensor([-inf, 0.0], device=device).log_softmax(0)) == [-inf, 0.0]
    i = ctorch.tensor([[1, 2], [3, 4]], device=device)
    with pytest.raises(NotImplementedError, match="\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        i.softmax(1)
    with pytest.raises(NotImplementedError, match="\"log_softmax_kernel_impl\" not implemented for 'Long'"):
        i.log_softmax(0)
    np.testing.assert_allclose(to_numpy(i.softmax(1, dtype=ctorch.float32)), [[0.26894142, 0.7310586]] * 2,
                               rtol=1e-6)
    assert ctorch.tensor(3.0, device=device).softmax(0).item() == 1.0
    big = ctorch.tensor(np.random.default_rng(0).standard_normal((64, 3000)) * 50, device=device)
    np.testing.assert_allclose(to_numpy(big.softmax(1)).sum(1), np.ones(64), rtol=1e-12)


# --- sort / argsort / topk / median --------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_sort(device, dtype, layout, rng):
    t = make(data(dtype, (3, 4, 5), rng), dtype, layout, device)
    x = ref(t)
    for dim in (0, 1, -1):
        for descending in (False, True):
            r = t.sort(dim, descending)
            key = -x if descending else x
            order = np.argsort(key, axis=dim, kind="stable")
            check(r.values, np.take_along_axis(x, order, dim), dtype)
            check(r.indices, order, "int64")  # our sort is stable
            check(ctorch.argsort(t, dim=dim, descending=descending), order, "int64")
    check(t.sort(stable=True).values, np.sort(x, axis=-1), dtype)


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != "bool"])
def test_topk(device, dtype, rng):
    t = make(data(dtype, (3, 4, 5), rng), dtype, "transposed", device)
    x = ref(t)
    for dim in (0, 1, -1):
        for largest in (True, False):
            for k in (0, 1, 3):
                r = t.topk(k, dim, largest)
                assert type(r).__name__ == "topk"
                srt = -np.sort(-x, axis=dim) if largest else np.sort(x, axis=dim)
                check(r.values, np.take(srt, range(k), axis=dim), dtype)
                # the indices point at the values
                check(r.values, np.take_along_axis(x, to_numpy(r.indices), dim), dtype)


def test_sort_topk_nan_and_errors(device):
    nan = float("nan")
    x = ctorch.tensor([1.0, nan, 3.0, nan], device=device)
    r = x.sort()
    assert np.array_equal(to_numpy(r.values), [1, 3, nan, nan], equal_nan=True)
    assert L(r.indices) == [0, 2, 1, 3]
    r = x.sort(descending=True)
    assert np.array_equal(to_numpy(r.values), [nan, nan, 3, 1], equal_nan=True)
    assert L(r.indices) == [1, 3, 2, 0]
    r = x.topk(2)
    assert math.isnan(to_numpy(r.values)[0]) and L(r.indices)[0] == 1
    assert L(x.topk(3, largest=False).indices) == [0, 2, 1]
    big = ctorch.tensor([2**62 + 1, 2**62], device=device)
    assert L(big.sort().indices) == [1, 0]  # int64 keys compared exactly
    f = ctorch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        f.topk(3)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        f.topk(-1)
    with pytest.raises(TypeError, match=r"topk\(\): argument 'k' \(position 1\) must be int, not float"):
        f.topk(2.0)
    with pytest.raises(NotImplementedError, match="topk does not support bool dtypes on CPU"):
        ctorch.tensor([True, False], device=device).topk(1)
    assert f.topk(0).values.shape == (2, 0)
    s = ctorch.tensor(3.0, device=device)
    assert s.sort().values.item() == 3.0 and s.topk(1).indices.item() == 0


@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
def test_topk_median_select_matches_stable_sort(device, dtype):
    """topk and median select in the order of a stable sort, so with many ties the indices are
    exactly those of the stable sort's first k (and middle) positions."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 6, size=(7, 301)).astype(np.float64)
    x[2, ::7] = np.nan if dtype != "int64" else 3
    t = ctorch.tensor(x, dtype=dt(dtype), device=device)
    for dim, xs in ((1, x), (0, x.T)):  # dim 0: the tiled (column) path
        for largest in (True, False):
            for k in (1, 37, 300):
                if k > xs.shape[1]:
                    continue
                r = t.topk(k, dim, largest)
                key = np.where(np.isnan(xs), np.inf, xs)
                order = np.argsort(-key if largest else key, axis=1, kind="stable")[:, :k]
                got = to_numpy(r.indices)
                check(r.indices, order if dim == 1 else order.T, "int64")
                assert got.shape == (order.shape if dim == 1 else order.T.shape)
        m = t.median(dim)
        key = np.where(np.isnan(xs), np.inf, xs)
        mid = np.argsort(key, axis=1, kind="stable")[:, (xs.shape[1] - 1) // 2]
        has_nan = np.isnan(xs).any(axis=1)
        exp_idx = np.where(has_nan, np.argmax(np.isnan(xs), axis=1), mid)
        check(m.indices, exp_idx, "int64")


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != "bool"])
def test_median(device, dtype, rng):
    t = make(data(dtype, (3, 4, 5), rng), dtype, "narrowed", device)
    x = ref(t)
    flat = np.sort(x.ravel())
    check(t.median(), flat[(flat.size - 1) // 2], dtype)  # the lower median
    assert t.median().dtype == t.dtype
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            r = t.median(dim, keepdim)
            srt = np.sort(x, axis=dim)
            exp = np.take(srt, [(x.shape[dim] - 1) // 2], axis=dim)
            check(r.values, exp if keepdim else np.squeeze(exp, dim), dtype)
            idx = to_numpy(r.indices if keepdim else r.indices.unsqueeze(dim))
            check(r.values, np.take_along_axis(x, idx, dim) if keepdim
                  else np.squeeze(np.take_along_axis(x, idx, dim), dim), dtype)


def test_median_nan_and_ties(device):
    nan = float("nan")
    r = ctorch.tensor([5.0, 1, nan, 3, 0], device=device).median(0)
    assert math.isnan(r.values.item()) and r.indices.item() == 2
    assert math.isnan(ctorch.tensor([1.0, nan], device=device).median().item())
    r = ctorch.tensor([3.0, 1.0, 1.0, 2.0], device=device).median(0)
    assert r.values.item() == 1.0 and r.indices.item() == 2
    assert ctorch.tensor([1.0, 2.0, 3.0, 4.0], device=device).median().item() == 2.0
    assert math.isnan(ctorch.tensor([], device=device).median().item())
    with pytest.raises(IndexError, match=r"median\(\): Expected reduction dim 0 to have non-zero size."):
        ctorch.tensor(np.zeros((0, 3)), device=device).median(0)


# --- kthvalue / mode / msort ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != "bool"])
def test_kthvalue(device, dtype, rng):
    t = make(data(dtype, (3, 4, 5), rng), dtype, "transposed", device)
    x = ref(t)
    for dim in (0, 1, -1):
        n = x.shape[dim]
        order = np.argsort(x, axis=dim, kind="stable")
        for k, keepdim in ((1, False), ((n + 1) // 2, True), (n, False)):
            r = ctorch.kthvalue(t, k, dim, keepdim) if k > 1 else t.kthvalue(k, dim=dim)
            assert type(r).__name__ == "kthvalue" and r.values.dtype == t.dtype
            pos = np.take(order, [k - 1], axis=dim)  # the k-th of the stable sort, ties included
            exp_i = pos if keepdim else np.squeeze(pos, dim)
            check(r.indices, exp_i, "int64")
            vals = np.take_along_axis(x, pos, dim)
            check(r.values, vals if keepdim else np.squeeze(vals, dim), dtype)


def test_kthvalue_nan_empty_and_errors(device):
    nan = float("nan")
    x = ctorch.tensor([nan, 1.0, 3.0, nan, 2.0], device=device)
    assert [(x.kthvalue(k).values.item(), x.kthvalue(k).indices.item()) for k in (1, 3)] == [(1.0, 1), (3.0, 2)]
    r4, r5 = x.kthvalue(4), x.kthvalue(5)  # NaNs count as the largest, in input order
    assert math.isnan(r4.values.item()) and r4.indices.item() == 0 and r5.indices.item() == 3
    s = ctorch.tensor(2.5, device=device)
    assert s.kthvalue(1).values.item() == 2.5 and s.kthvalue(1, 0, True).indices.shape == ()
    e = ctorch.zeros(2, 0, device=device)
    assert ctorch.kthvalue(e, 2, 0).values.shape == (0,) and e.kthvalue(1, 0, True).indices.shape == (1, 0)
    for bad, k, dim in ((e, 1, 1), (ctorch.tensor([], device=device), 2, -1)):
        with pytest.raises(IndexError, match=r"^kthvalue\(\): Expected reduction dim %d to have non-zero size.$"
                           % (dim % bad.ndim)):
            ctorch.kthvalue(bad, k, dim)
    f = ctorch.tensor([[1.0, 2.0, 3.0]], device=device)
    for bad, k in ((f, 0), (f, 4), (f, -1), (s, 2), (e.t(), 3)):
        with pytest.raises(RuntimeError, match=r"^kthvalue\(\): selected number k out of range for dimension [01]$"):
            ctorch.kthvalue(bad, k, 0 if bad is e.t() else -1)
    with pytest.raises(NotImplementedError, match="^\"kthvalue_c(pu|uda)\" not implemented for 'Bool'$"):
        ctorch.tensor([True, False], device=device).kthvalue(1)
    with pytest.raises(TypeError, match=r"^kthvalue\(\): argument 'k' \(position 2\) must be int, not float$"):
        f.kthvalue(1.0)
    with pytest.raises(TypeError, match=r"^kthvalue\(\): argument 'dim' must be int, not float$"):
        f.kthvalue(1, 0.5)
    # out=: PyTorch's own messages (after k's check), overlap with the input refused
    with pytest.raises(RuntimeError, match="^output values must be of same type as input$"):
        ctorch.kthvalue(f, 1, out=(_e(device, "float64"), _e(device, "int64")))
    with pytest.raises(RuntimeError, match="^output indices must be of scalar type Long$"):
        ctorch.kthvalue(f, 1, out=(_e(device), _e(device, "int32")))
    with pytest.raises(RuntimeError, match="selected number k out of range"):
        ctorch.kthvalue(f, 9, out=(_e(device, "int64"), _e(device)))
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        ctorch.kthvalue(f, 1, 0, out=(f[0], _e(device, "int64")))
    v, i = _e(device), _e(device, "int64")
    r = ctorch.kthvalue(f, 2, 1, True, out=(v, i))
    assert r.values is v and type(r).__name__ == "kthvalue_out" and v.tolist() == [[2.0]] and i.tolist() == [[1]]
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        f.kthvalue(1, out=(v, i))


def np_mode(x, axis):
    """The smallest most frequent value along axis and the last index holding it."""
    x = np.moveaxis(x, axis, -1)
    vals, idx = np.empty(x.shape[:-1], x.dtype), np.empty(x.shape[:-1], np.int64)
    for pos in np.ndindex(*x.shape[:-1]):
        line = x[pos]
        u, counts = np.unique(line, return_counts=True)  # ascending
        vals[pos] = u[np.argmax(counts)]
        idx[pos] = np.flatnonzero(line == vals[pos])[-1]
    return vals, idx


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_mode(device, dtype, rng):
    arr = rng.integers(0, 4, size=(3, 4, 21)) if dtype != "bool" else rng.random((3, 4, 21)) < 0.5
    t = make(arr, dtype, "transposed", device)
    x = ref(t)
    for dim, keepdim in ((0, False), (1, True), (-1, False)):
        r = ctorch.mode(t, dim, keepdim) if dim != -1 else t.mode()
        assert type(r).__name__ == "mode" and r.values.dtype == t.dtype
        vals, idx = np_mode(x, dim)
        check(r.values, np.expand_dims(vals, dim) if keepdim else vals, dtype)
        check(r.indices, np.expand_dims(idx, dim) if keepdim else idx, "int64")


def test_mode_kthvalue_long_lines(device):
    """Lines longer than CUDA's shared-memory sort (2048) take the radix-sort path."""
    x = np.random.default_rng(3).integers(-40, 40, size=(3, 2100))
    t = ctorch.tensor(x, dtype=ctorch.float32, device=device)
    vals, idx = np_mode(x, 1)
    r = t.mode(1)
    check(r.values, vals, "float32")
    check(r.indices, idx, "int64")
    r = t.t().kthvalue(1000, 0)
    order = np.argsort(x, axis=1, kind="stable")[:, 999]
    check(r.indices, order, "int64")
    check(r.values, x[np.arange(3), order], "float32")


def test_mode_nan_zero_empty_and_errors(device):
    nan = float("nan")
    r = ctorch.tensor([nan, 1.0, nan, 2.0, 2.0, nan], device=device).mode()
    assert math.isnan(r.values.item()) and r.indices.item() == 5  # NaNs count as one value
    r = ctorch.tensor([nan, 2.0, 2.0, nan], device=device).mode()
    assert r.values.item() == 2.0 and r.indices.item() == 2  # ties: the smaller value
    r = ctorch.tensor([0.0, -0.0, 1.0], device=device).mode()  # -0.0 == 0.0: the last one's bits
    assert r.indices.item() == 1 and math.copysign(1, r.values.item()) == -1
    assert ctorch.tensor(7, device=device).mode(0, True).values.item() == 7
    e = ctorch.zeros(2, 0, device=device)
    assert e.mode(0).values.shape == (0,) and e.mode(0, True).indices.shape == (1, 0)
    with pytest.raises(IndexError, match=r"^mode\(\): Expected reduction dim 1 to have non-zero size.$"):
        e.mode()
    with pytest.raises(IndexError, match=r"Dimension out of range"):
        e.mode(2)
    f = ctorch.tensor([[1.0, 1.0, 2.0]], device=device)
    with pytest.raises(RuntimeError, match="^expected scalar type 'Float' but got 'Long' for values output$"):
        ctorch.mode(e, 0, out=(_e(device, "int64"), _e(device)))  # before the empty dim's error
    with pytest.raises(RuntimeError, match="^expected scalar type 'Long' but got 'Int' for indices output$"):
        ctorch.mode(f, out=(_e(device), _e(device, "int32")))
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        ctorch.mode(f, out=(f[0, :1], _e(device, "int64")))
    v, i = _e(device), _e(device, "int64")
    r = ctorch.mode(f, keepdim=True, out=[v, i])
    assert r.indices is i and type(r).__name__ == "mode_out" and v.tolist() == [[1.0]] and i.tolist() == [[1]]


@pytest.mark.parametrize("dtype", ["float32", "int16", "bool"])
def test_msort(device, dtype, rng):
    t = make(data(dtype, (4, 3, 2), rng), dtype, "narrowed", device)
    check(ctorch.msort(t), np.sort(ref(t), axis=0), dtype)
    check(t.msort(), np.sort(ref(t), axis=0), dtype)
    assert ctorch.msort(ctorch.tensor(3.0, device=device)).item() == 3.0
    o = _e(device, dtype)
    assert ctorch.msort(t, out=o) is o and o.shape == t.shape
    y = t.clone()
    ctorch.msort(y, out=y)  # an out over the input is allowed
    check(y, np.sort(ref(t), axis=0), dtype)
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype"):
        ctorch.msort(t, out=_e(device, "float64"))
    with pytest.raises(TypeError, match="unexpected keyword argument 'dim'"):
        ctorch.msort(t, dim=1)


# --- quantile / nanquantile ----------------------------------------------------------------------------------------
QUANTILE_MODES = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("interpolation", QUANTILE_MODES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_quantile(device, dtype, interpolation, rng):
    arr = rng.standard_normal((3, 4, 5))
    arr[0, 1, ::2] = np.nan
    arr[2, 2, :] = np.nan
    t = make(arr, dtype, "transposed", device)
    x = ref(t)
    q_list = [0.0, 0.3, 0.5, 1.0]  # no rank at a half: float32 ranks could round either way
    qs = ctorch.tensor(q_list, dtype=t.dtype, device=device)
    for fn, npfn in ((ctorch.quantile, np.quantile), (ctorch.nanquantile, np.nanquantile)):
        for dim, keepdim in ((None, False), (None, True), (0, False), (1, True), (-1, False)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # NumPy on all-NaN lines
                exp = npfn(x, q_list, axis=dim, keepdims=keepdim, method=interpolation)
            r = fn(t, qs, dim, keepdim, interpolation=interpolation)
            assert r.dtype == t.dtype
            check(r, exp, dtype)
            r = fn(t, 0.3, dim=dim, keepdim=keepdim, interpolation=interpolation)  # no leading dim
            check(r, exp[1], dtype)
        check(fn(t, qs[2], 1, interpolation=interpolation), npfn(x, 0.5, 1, method=interpolation), dtype)
    check(t.quantile(0.25, -1), np.quantile(x, 0.25, -1), dtype)
    check(t.nanquantile(q=qs, dim=0), np.nanquantile(x, q_list, 0), dtype)


def test_quantile_shapes_rounding_and_out(device):
    x = ctorch.tensor([[1.0, 5.0, 2.0, 8.0], [3.0, 4.0, 0.0, 4.0]], dtype=ctorch.float64, device=device)
    s = ctorch.tensor(3.0, dtype=ctorch.float64, device=device)
    assert ctorch.quantile(s, 0.5).shape == () and ctorch.quantile(s, 0.5, 0, True).shape == ()
    two = ctorch.tensor([0.5, 0.1], dtype=ctorch.float64, device=device)
    assert ctorch.quantile(s, two, keepdim=True).tolist() == [3.0, 3.0]
    assert ctorch.quantile(x, two, keepdim=True).shape == (2, 1, 1)
    assert ctorch.quantile(x, two[:0], dim=0).shape == (0, 4)
    assert ctorch.quantile(x, two[0], dim=1, keepdim=True).shape == (2, 1)
    # nearest rounds a rank at a half to even, as PyTorch (and NumPy)
    r = ctorch.arange(1.0, 12.0, dtype=ctorch.float64, device=device)
    q = ctorch.tensor([0.05, 0.15, 0.25, 0.35], dtype=ctorch.float64, device=device)  # ranks .5, 1.5, 2.5, 3.5
    assert ctorch.quantile(r, q, interpolation="nearest").tolist() == [1.0, 3.0, 3.0, 5.0]
    nan = float("nan")
    all_nan = ctorch.tensor([[nan, nan], [1.0, nan]], device=device)
    assert np.isnan(to_numpy(ctorch.nanquantile(all_nan, 0.5, 1)))[0]
    assert ctorch.nanquantile(all_nan, 0.5, 1)[1].item() == 1.0
    o = _e(device, "float64")
    assert ctorch.quantile(x, two, dim=1, out=o) is o and o.shape == (2, 2)
    y = x.clone()
    ctorch.nanquantile(y, 0.5, dim=0, out=y[0])  # an out over the input is allowed
    assert y[0].tolist() == [2.0, 4.5, 1.0, 6.0]


def test_quantile_errors(device):
    x = ctorch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    q1 = ctorch.tensor([0.5], device=device)
    cases = [
        (lambda: ctorch.quantile(x, 1.5), "q must be in the range [0, 1] but got 1.5"),
        (lambda: ctorch.nanquantile(x, -1e-30, dim=5), "q must be in the range [0, 1] but got -1e-30"),
        (lambda: ctorch.quantile(x, float("nan")), "q must be in the range [0, 1] but got nan"),
        (lambda: ctorch.quantile(x.long(), 1.0000001), "q must be in the range [0, 1] but got 1"),
        (lambda: ctorch.quantile(x[:0], 0.5, interpolation="Linear"),
         "interpolation must be one of linear, lower, higher, midpoint or nearest, but got Linear"),
        (lambda: ctorch.quantile(x[:0].long(), q1.reshape(1, 1)), "input tensor must be non-empty"),
        (lambda: ctorch.quantile(x.long(), q1.reshape(1, 1)), "q must be a scalar or 1D tensor"),
        (lambda: ctorch.nanquantile(x.half(), q1.double()), "input tensor must be either float or double dtype"),
        (lambda: ctorch.quantile(x, q1.double(), out=_e(device, "int64")),
         "q tensor must be same dtype as the input tensor"),
        (lambda: ctorch.quantile(x, 0.5, dim=5, out=_e(device, "float64")),
         "out tensor must be same dtype as the input tensor"),
        (lambda: ctorch.quantile(x, ctorch.tensor([0.5, 2.0], device=device)), "q values must be in the range [0, 1]"),
    ]
    if device != "cpu":
        cases.append((lambda: ctorch.quantile(x, q1.cpu()), "q tensor must be on the same device as the input tensor"))
        cases.append((lambda: ctorch.quantile(x, 0.5, out=_e("cpu")),
                      "out tensor must be on the same device as the input tensor"))
    for call, msg in cases:
        with pytest.raises(RuntimeError, match="^quantile\\(\\) " + re.escape(msg) + "$"):
            call()
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)"):
        ctorch.quantile(x, ctorch.tensor([2.0], device=device), dim=5)  # before q's values
    bad = [((x, [0.5]), {}, "(Tensor, list)"), ((x, 0.5), {"dim": (0,)}, "(Tensor, float, dim=tuple)"),
           ((x, 0.5), {"keepdim": None}, "(Tensor, float, keepdim=NoneType)"),
           ((x, 0.5), {"interpolation": None}, "(Tensor, float, interpolation=NoneType)"),
           ((x, "0.5"), {}, "(Tensor, str)")]
    for args, kw, got in bad:
        with pytest.raises(TypeError, match="^quantile\\(\\) received an invalid combination of arguments - got "
                                            + re.escape(got) + ", but expected one of:\n"):
            ctorch.quantile(*args, **kw)
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        x.quantile(0.5, out=_e(device))


# --- nanmean / nanmedian ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_nanmean(device, dtype, rng):
    x = data(dtype, (3, 4, 5), rng)
    x[rng.random(x.shape) < 0.2] = np.nan
    x[1, 2, :] = np.nan  # a slice of nothing but NaN: NaN
    t = make(x, dtype, "transposed", device)
    x = ref(t)
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        for dim in (None, 2, (0, 2), -1):
            for keepdim in (False, True):
                r = t.nanmean(dim, keepdim) if dim is not None else ctorch.nanmean(t, keepdim=keepdim)
                assert r.dtype == t.dtype
                check(r, np.nanmean(x, axis=dim, keepdims=keepdim), dtype, atol_scale=4)
        r = ctorch.nanmean(t, 1, dtype=ctorch.float64)
        assert r.dtype == ctorch.float64
        check(r, np.nanmean(x, axis=1), "float64" if dtype in ("float32", "float64") else dtype)


def test_nanmean_errors_and_out(device):
    nan = float("nan")
    x = ctorch.tensor([[1.0, nan, 3.0], [nan, nan, nan]], device=device)
    assert L(x.nanmean(1))[0] == 2.0 and math.isnan(L(x.nanmean(1))[1]) and x.nanmean().item() == 2.0
    assert math.isnan(ctorch.tensor([], device=device).nanmean().item())
    assert ctorch.tensor(np.zeros((0, 3)), device=device).nanmean(0).shape == (3,)
    for dtype, name in (("int64", "Long"), ("bool", "Bool")):
        i = ctorch.tensor([1, 0], dtype=dt(dtype), device=device)
        msg = f"^nanmean\\(\\): expected input to have floating point or complex dtype but got {name}$"
        with pytest.raises(NotImplementedError, match=msg):
            ctorch.nanmean(i, dtype=ctorch.float32)
        with pytest.raises(NotImplementedError, match="^nanmean\\(\\): integral types and 'Bool' are not supported"):
            ctorch.nanmean(i, 0, out=_e(device))
    with pytest.raises(RuntimeError, match="^nanmean\\(\\): could not infer output dtype. Optional dtype must be "
                                           "either a floating point or complex dtype. Got: Long$"):
        x.nanmean(dtype=ctorch.int64)
    o = _e(device, "float64")  # computed in out's dtype, as nansum's out=
    r = ctorch.nanmean(x, 1, out=o)
    assert r is o and o.dtype == ctorch.float64 and L(o)[0] == 2.0
    # mean's out= too: a float16 input into a float64 out is a float64 mean (1/3 + 2/3 in float16 rounds)
    h = ctorch.tensor([[1 / 3, 2 / 3, 0.1, 0.7]], dtype=ctorch.float16, device=device)
    want = np.array([[1 / 3, 2 / 3, 0.1, 0.7]], dtype=np.float16).astype(np.float64).mean(1)
    assert L(ctorch.mean(h, 1, out=_e(device, "float64"))) == want.tolist()
    with pytest.raises(RuntimeError, match="^nansum: provided dtype must match dtype of result. Got Float and Double.$"):
        ctorch.nanmean(x, 1, dtype=ctorch.float64, out=_e(device))
    kernel = {"cpu": "nansum_cpu", "cuda": "nansum_cuda"}[device]
    with pytest.raises(NotImplementedError, match=f"^\"{kernel}\" not implemented for 'Long'$"):
        ctorch.nanmean(x, 1, out=_e(device, "int64"))


def lower_nanmedian(xs):
    """Per row of xs: PyTorch's nanmedian index (the stable sort's position (c - 1) // 2 among
    the c non-NaN values; the first NaN of a row with nothing else)."""
    key = np.where(np.isnan(xs), np.inf, xs)
    order = np.argsort(key, axis=1, kind="stable")
    count = (~np.isnan(xs)).sum(axis=1)
    mid = order[np.arange(xs.shape[0]), np.maximum(count - 1, 0) // 2]
    return np.where(count > 0, mid, np.argmax(np.isnan(xs), axis=1))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "uint8"])
def test_nanmedian(device, dtype):
    rng = np.random.default_rng(3)
    x = tied(dtype, (5, 40), rng, nan_rate=0.3)
    if dtype in FLOAT_DTYPES:
        x[2] = np.nan  # all NaN
        x[3, :39] = np.nan  # one value
    t = ctorch.tensor(x, dtype=dt(dtype), device=device)
    x = ref(t)
    for dim, xs in ((1, x), (0, x.T)):
        for keepdim in (False, True):
            r = ctorch.nanmedian(t, dim, keepdim) if keepdim else t.nanmedian(dim)
            assert type(r).__name__ == "nanmedian" and r.values.dtype == t.dtype
            idx = lower_nanmedian(xs)
            exp_v = xs[np.arange(xs.shape[0]), idx]
            shape = (-1, 1) if dim == 1 else (1, -1)
            check(r.indices, idx.reshape(shape) if keepdim else idx, "int64")
            check(r.values, exp_v.reshape(shape) if keepdim else exp_v, dtype)
    vals = np.sort(x[~np.isnan(x)] if dtype in FLOAT_DTYPES else x.ravel())
    check(t.nanmedian(), vals[(vals.size - 1) // 2], dtype)


def test_nanmedian_edges(device):
    nan = float("nan")
    assert math.isnan(ctorch.tensor([nan, nan], device=device).nanmedian().item())
    assert ctorch.tensor([nan, 1.0, nan, 3.0, 2.0], device=device).nanmedian().item() == 2.0
    r = ctorch.tensor([2.0, 1.0, 2.0, 1.0, nan], device=device).nanmedian(0)
    assert r.values.item() == 1.0 and r.indices.item() == 3  # the stable sort's lower median
    assert math.isnan(ctorch.tensor([], device=device).nanmedian().item())
    assert ctorch.tensor([], dtype=ctorch.int64, device=device).nanmedian().item() == -(2 ** 63)
    r = ctorch.tensor(nan, device=device).nanmedian(0)
    assert math.isnan(r.values.item()) and r.indices.item() == 0 and r.values.shape == ()
    e = ctorch.tensor(np.zeros((0, 3)), device=device)
    assert e.nanmedian(1).values.shape == (0,)
    with pytest.raises(IndexError, match=r"^median\(\): Expected reduction dim 0 to have non-zero size.$"):
        e.nanmedian(0)
    b = ctorch.tensor([True, False], device=device)
    with pytest.raises(NotImplementedError, match="^\"median_cpu\" not implemented for 'Bool'$"):
        b.nanmedian()
    with pytest.raises(NotImplementedError, match="^\"median_out\" not implemented for 'Bool'$"):
        b.nanmedian(0)
    x = ctorch.tensor([[0.0, nan, 2.0], [3.0, 1.0, 4.0]], device=device)
    v, i = _e(device), _e(device, "int64")
    r = ctorch.nanmedian(x, 1, out=(v, i))
    assert r.values is v and type(r).__name__ == "nanmedian_out" and L(v) == [0.0, 3.0] and L(i) == [0, 0]
    with pytest.raises(RuntimeError, match="^Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                                           "torch.IntTensor instead \\(while checking arguments for median\\)$"):
        ctorch.nanmedian(x, 1, out=(_e(device, "float64"), _e(device, "int32")))
    with pytest.raises(RuntimeError, match="^Expected tensor for 'values' to have the same type"):
        ctorch.nanmedian(x, 1, out=(_e(device, "float64"), _e(device, "int64")))
    with pytest.raises(TypeError, match='^nanmedian\\(\\) missing 1 required positional arguments: "dim"$'):
        ctorch.nanmedian(x, out=(v, i))
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        ctorch.nanmedian(x, 1, out=(x[0, :2], _e(device, "int64")))


# --- zero-dim and empty tensors ---------------------------------------------------------------------------------------
def test_zero_dim(device):
    s = ctorch.tensor(3.5, device=device)
    for dim in (None, 0, -1):
        for keepdim in (False, True):
            kw = {} if dim is None else {"dim": dim}
            assert s.sum(keepdim=keepdim, **kw).item() == 3.5 and s.sum(**kw).shape == ()
            assert s.amax(keepdim=keepdim, **kw).item() == 3.5
            assert s.mean(**kw).item() == 3.5
    r = s.max(0)
    assert r.values.item() == 3.5 and r.indices.item() == 0 and r.values.shape == ()
    assert s.argmax().item() == 0 and s.argmax(0).item() == 0
    assert s.cumsum(0).item() == 3.5 and s.softmax(0).item() == 1.0
    assert s.median().item() == 3.5
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"):
        s.sum(1)


def test_empty(device):
    e = ctorch.tensor(np.zeros((0, 4)), dtype=ctorch.float32, device=device)
    assert ctorch.tensor([], device=device).sum().item() == 0.0
    assert ctorch.tensor([], device=device).prod().item() == 1.0
    assert math.isnan(ctorch.tensor([], device=device).mean().item())
    assert L(e.sum(0)) == [0.0] * 4
    assert e.sum(1).shape == (0,)
    assert L(e.prod(0)) == [1.0] * 4
    assert np.isnan(to_numpy(e.mean(0))).all()
    assert e.amax(1).shape == (0,)
    assert e.max(1).values.shape == (0,) and e.max(1).indices.dtype == ctorch.int64
    assert e.argmax(1).shape == (0,)
    assert e.sum(0, keepdim=True).shape == (1, 4)
    assert L(e.all(0)) == [True] * 4 and L(e.any(0)) == [False] * 4
    assert L(e.count_nonzero(0)) == [0] * 4
    assert L(e.norm(dim=0)) == [0.0] * 4
    assert e.sort(0).values.shape == (0, 4) and e.softmax(0).shape == (0, 4)
    assert L(ctorch.tensor(np.zeros((3, 0)), device=device).sum(1)) == [0.0] * 3
    with pytest.raises(RuntimeError, match=r"^max\(\): Expected reduction dim to be specified for input.numel\(\) == 0. "
                                           r"Specify the reduction dim with the 'dim' argument.$"):
        ctorch.tensor([], device=device).max()
    with pytest.raises(RuntimeError, match=r"^amin\(\): Expected reduction dim to be specified"):
        e.amin()
    with pytest.raises(IndexError, match=r"^amax\(\): Expected reduction dim 0 to have non-zero size.$"):
        e.amax(0)
    with pytest.raises(IndexError, match=r"^max\(\): Expected reduction dim 0 to have non-zero size.$"):
        e.max(0)
    with pytest.raises(IndexError, match=r"^argmax\(\): Expected reduction dim to be specified for "
                                         r"input.numel\(\) == 0.$"):
        e.argmax()
    with pytest.raises(IndexError, match=r"^argmin\(\): Expected reduction dim 0 to have non-zero size.$"):
        e.argmin(0)
    with pytest.raises(RuntimeError, match="aminmax"):
        ctorch.aminmax(e)


# --- errors ------------------------------------------------------------------------------------------------------
def test_errors(device):
    f = ctorch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    i = ctorch.tensor([[1, 2], [3, 4]], device=device)
    msg = r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"
    for fn in (lambda: f.sum(2), lambda: f.sum((0, 2)), lambda: f.mean(dim=2), lambda: f.max(2),
               lambda: f.argmax(2), lambda: f.amax(-3), lambda: f.std(2), lambda: f.cumsum(2),
               lambda: f.softmax(2), lambda: f.sort(2), lambda: f.topk(1, 2), lambda: f.median(2),
               lambda: f.logsumexp(2), lambda: f.all(2), lambda: f.count_nonzero(2), lambda: f.prod(2)):
        with pytest.raises(IndexError, match=msg.replace("got 2", "got -?[23]")):
            fn()
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        f.sum((0, -2))
    with pytest.raises(NotImplementedError, match=r"^mean\(\): could not infer output dtype. Input dtype must be either "
                                                  r"a floating point or complex dtype. Got: Long$"):
        i.mean()
    assert issubclass(NotImplementedError, RuntimeError)  # so RuntimeError handlers catch it too
    with pytest.raises(NotImplementedError, match="Optional dtype must be either a floating point or complex dtype. "
                                                  "Got: Long"):
        f.mean(0, dtype=ctorch.int64)
    with pytest.raises(NotImplementedError, match="^std and var only support floating point and complex dtypes$"):
        i.std()
    with pytest.raises(NotImplementedError, match="^argmax\\(\\): does not support bool input$"):
        ctorch.tensor([True], device=device).argmax()
    with pytest.raises(TypeError, match="must be Tensor"):
        ctorch.sum([1, 2])
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        f.sum(bogus=1)
    with pytest.raises(TypeError, match="must be tuple of ints"):
        f.sum(1.0)
    with pytest.raises(TypeError):
        f.prod((0, 1))


def test_dtype_errors_come_before_dim_errors(device):
    # PyTorch rejects the dtype first, so a bad dim on a bad dtype still names the dtype
    i = ctorch.tensor([[1, 2], [3, 4]], device=device)
    with pytest.raises(NotImplementedError, match="mean\\(\\): could not infer output dtype"):
        i.mean(5)
    with pytest.raises(NotImplementedError, match="^std and var only support floating point and complex dtypes$"):
        i.var(5)
    with pytest.raises(NotImplementedError, match="^std_mean only support floating point and complex dtypes$"):
        ctorch.std_mean(i)
    with pytest.raises(NotImplementedError, match="^var_mean only support floating point and complex dtypes$"):
        ctorch.var_mean(i, (0, 0))
    with pytest.raises(NotImplementedError, match="^argmin\\(\\): does not support bool input$"):
        ctorch.tensor([True], device=device).argmin(3)
    with pytest.raises(TypeError, match="^argmax\\(\\): argument 'dim' must be int, not tuple$"):
        ctorch.tensor([True], device=device).argmax((0,))  # but a dim of the wrong type comes first


def test_all_any_empty_dim_tuple_reduces_nothing(device):
    x = ctorch.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]], device=device)
    expect = [[True, False, True], [False, False, True]]
    assert ctorch.all(x, dim=()).tolist() == expect
    assert x.any(dim=[], keepdim=True).tolist() == expect
    assert ctorch.all(x, dim=()).dtype == ctorch.bool
    assert ctorch.all(x).item() is False  # no dim still reduces everything
    assert x.sum(dim=()).item() == 6.0  # while sum reads () as "all dims"


def test_scan_to_bool_and_norm_checks(device):
    x = ctorch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    if device == "cpu":
        with pytest.raises(NotImplementedError, match="^\"cumsum_out_cpu\" not implemented for 'Bool'$"):
            x.cumsum(0, dtype=ctorch.bool)
        with pytest.raises(NotImplementedError, match="^\"cumprod_out_cpu\" not implemented for 'Bool'$"):
            ctorch.cumprod(x, 1, dtype=ctorch.bool)
    with pytest.raises(RuntimeError, match=r"^linalg.vector_norm: the dtype of the input \(Float\) should be "
                                           r"convertible without narrowing to the specified dtype \(Half\)$"):
        ctorch.norm(x, dtype=ctorch.float16)
    assert ctorch.norm(x, dtype=ctorch.float64).dtype == ctorch.float64
    empty = ctorch.zeros(0, 3, device=device)
    for p, ps in [(-1, "-1"), (-1.5, "-1.5"), (float("-inf"), "-inf")]:
        with pytest.raises(RuntimeError, match=f"cannot compute the {ps} norm on an empty tensor"):
            ctorch.norm(empty, p=p)
    with pytest.raises(RuntimeError, match="cannot compute the -2 norm on the dimension 0because"):
        ctorch.norm(empty, p=-2, dim=0)
    assert ctorch.norm(empty, p=-1, dim=1).shape == (0,)  # the reduced dim is not empty
    assert ctorch.norm(empty, p=0.5).item() == 0.0


def test_max_min_write_out(device):
    """max/min out= (dim form: a (values, indices) pair) is written, not ignored."""
    x = ctorch.tensor([[0.0, 5.0, 2.0], [3.0, 1.0, 4.0]], device=device)
    v, i = ctorch.zeros(0, device=device), ctorch.zeros(0, dtype=ctorch.int64, device=device)
    r = ctorch.max(x, 1, out=(v, i))
    assert r[0] is v and r[1] is i and r.values is v
    assert v.tolist() == [5.0, 4.0] and i.tolist() == [1, 2]
    v, i = ctorch.zeros(0, device=device), ctorch.zeros(0, dtype=ctorch.int64, device=device)
    ctorch.min(x, 0, keepdim=True, out=[v, i])
    assert v.tolist() == [[0.0, 1.0, 2.0]] and i.tolist() == [[0, 1, 0]]
    whole = ctorch.zeros(0, device=device)
    assert ctorch.max(x, out=whole) is whole and whole.item() == 5.0
    both = ctorch.zeros(0, device=device)
    assert ctorch.min(x, x.flip(0), out=both) is both and both.tolist() == [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype long int, but got int instead$"):
        ctorch.max(x, 1, out=(v, ctorch.zeros(0, dtype=ctorch.int32, device=device)))
    assert v.shape == (1, 3)  # refused before anything was written
    with pytest.raises(TypeError, match=r"got \(Tensor, int, out=Tensor\)"):
        ctorch.max(x, 1, out=v)


# --- out= of every reduction and scan -------------------------------------------------------------------------------
def _e(device, dtype="float32"):
    return ctorch.empty(0, dtype=dt(dtype), device=device)


OUT_CASES = [  # (name, call with out=o, NumPy's result, out dtype)
    ("sum", lambda x, o: ctorch.sum(x, 1, out=o), lambda a: a.sum(1), "float32"),
    ("sum_keepdim", lambda x, o: ctorch.sum(x, (0, 1), keepdim=True, out=o), lambda a: a.sum((0, 1), keepdims=True),
     "float32"),
    ("nansum", lambda x, o: ctorch.nansum(x, out=o), lambda a: a.sum(), "float64"),
    ("mean", lambda x, o: ctorch.mean(x, 0, out=o), lambda a: a.mean(0), "float32"),
    ("prod", lambda x, o: ctorch.prod(x, 1, out=o), lambda a: a.prod(1), "float32"),
    ("amax", lambda x, o: ctorch.amax(x, 0, out=o), lambda a: a.max(0), "float32"),
    ("amin", lambda x, o: ctorch.amin(x, out=o), lambda a: a.min(), "float32"),
    ("std", lambda x, o: ctorch.std(x, 1, out=o), lambda a: a.std(1, ddof=1), "float32"),
    ("var", lambda x, o: ctorch.var(x, correction=0, out=o), lambda a: a.var(), "float64"),
    ("norm", lambda x, o: ctorch.norm(x, 1, dim=0, out=o), lambda a: np.abs(a).sum(0), "float32"),
    ("logsumexp", lambda x, o: ctorch.logsumexp(x, 1, out=o), lambda a: np.log(np.exp(a).sum(1)), "float32"),
    ("cumsum", lambda x, o: ctorch.cumsum(x, 1, out=o), lambda a: a.cumsum(1), "float32"),
    ("cumprod", lambda x, o: ctorch.cumprod(x, 0, out=o), lambda a: a.cumprod(0), "float64"),
    ("argmax", lambda x, o: ctorch.argmax(x, 1, out=o), lambda a: a.argmax(1), "int64"),
    ("argmin", lambda x, o: ctorch.argmin(x, out=o), lambda a: a.argmin(), "int64"),
    ("any", lambda x, o: ctorch.any(x > 1, 0, out=o), lambda a: (a > 1).any(0), "bool"),
    ("all", lambda x, o: ctorch.all(x, 1, out=o), lambda a: a.all(1), "uint8"),
    ("softmax", lambda x, o: ctorch.softmax(x, 1, out=o),
     lambda a: np.exp(a) / np.exp(a).sum(1, keepdims=True), "float32"),
    ("log_softmax", lambda x, o: ctorch.log_softmax(x, 0, out=o),
     lambda a: a - np.log(np.exp(a).sum(0, keepdims=True)), "float32"),
    ("logcumsumexp", lambda x, o: ctorch.logcumsumexp(x, 1, out=o), lambda a: np.logaddexp.accumulate(a, 1), "float32"),
    ("nanmean", lambda x, o: ctorch.nanmean(x, 0, keepdim=True, out=o), lambda a: a.mean(0, keepdims=True), "float32"),
]


@pytest.mark.parametrize("name,call,ref,out_dtype", OUT_CASES, ids=[c[0] for c in OUT_CASES])
def test_reduction_out(device, rng, name, call, ref, out_dtype):
    """Each reduction/scan writes into out= (fresh, empty) and returns out itself."""
    a = rng.uniform(0.5, 1.5, (3, 4)).astype(np.float32)
    x = ctorch.tensor(a, device=device)
    o = _e(device, out_dtype)
    r = call(x, o)
    assert r is o and o.dtype == dt(out_dtype)
    want = np.asarray(ref(a.astype(np.float64)))
    assert o.shape == want.shape
    np.testing.assert_allclose(to_numpy(o).astype(np.float64), want, rtol=2e-5, atol=1e-6)


def test_reduction_out_dtype_rules(device):
    """PyTorch's dtype rules for out=: sum/prod/cumsum compute in out's dtype, dtype= must then
    match out exactly, mean/std/var cast their result, amax/amin/argmax/norm/softmax want an
    exact dtype, logsumexp a floating out, all/any a bool or uint8 one."""
    h = ctorch.tensor([0.5, 0.5, 0.7], device=device)
    i = ctorch.tensor([1, 2, 3], device=device)
    # the input is cast to out's dtype first: 0 + 0 + 0, not int(1.7)
    assert ctorch.sum(h, 0, out=_e(device, "int64")).item() == 0
    assert ctorch.prod(h, 0, out=_e(device, "int64")).item() == 0
    assert ctorch.cumsum(h, 0, out=_e(device, "int64")).tolist() == [0, 0, 0]
    assert ctorch.sum(i, 0, out=_e(device)).item() == 6.0
    r = ctorch.cumsum(i, 0, out=_e(device, "int32"))
    assert r.dtype == ctorch.int32 and r.tolist() == [1, 3, 6]
    assert ctorch.sum(h, 0, dtype=ctorch.float32, out=_e(device)).dtype == ctorch.float32
    for f in [lambda o: ctorch.sum(h, 0, dtype=ctorch.float64, out=o), lambda o: ctorch.prod(h, 0, dtype=ctorch.float64,
              out=o), lambda o: ctorch.mean(h, 0, dtype=ctorch.float64, out=o),
              lambda o: ctorch.cumsum(h, 0, dtype=ctorch.float64, out=o),
              lambda o: ctorch.norm(h, dtype=ctorch.float64, out=o)]:
        with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype double, but got float instead$"):
            f(_e(device))
    kernel = {"cpu": "cumsum_out_cpu", "cuda": "cumsum_cuda"}[device]
    with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for 'Bool'"):
        ctorch.cumsum(h, 0, out=_e(device, "bool"))
    # nansum
    with pytest.raises(RuntimeError, match="^nansum: provided dtype must match dtype of result. Got Float and Double.$"):
        ctorch.nansum(h, 0, dtype=ctorch.float64, out=_e(device))
    with pytest.raises(NotImplementedError, match="\"nansum_c(pu|uda)\" not implemented for 'Long'"):
        ctorch.nansum(h, out=_e(device, "int64"))
    assert ctorch.nansum(i, out=_e(device, "int64")).item() == 6  # integer input: a plain sum
    # mean / std / var: computed, then cast if it can be
    assert ctorch.mean(h, out=_e(device, "float64")).dtype == ctorch.float64
    with pytest.raises(NotImplementedError, match="mean\\(\\): could not infer output dtype. Input dtype must"):
        ctorch.mean(i, 0, out=_e(device))
    for f in [ctorch.mean, ctorch.std, ctorch.var]:
        with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
            f(h, 0, out=_e(device, "int64"))
    assert ctorch.std(h, 0, out=_e(device, "float16")).dtype == ctorch.float16
    with pytest.raises(NotImplementedError, match="std and var only support floating point"):
        ctorch.std(i, 0, out=_e(device))
    # exact dtypes
    with pytest.raises(RuntimeError, match="^Expected the dtype for input and out to match, but got Float for input's "
                                           "dtype and Double for out's dtype.$"):
        ctorch.amax(h, 0, out=_e(device, "float64"))
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype long int, but got float instead$"):
        ctorch.argmin(h, out=_e(device))
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype float, but got double instead$"):
        ctorch.norm(h, dim=0, out=_e(device, "float64"))
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype float, but got c10::Half instead$"):
        ctorch.softmax(h, 0, out=_e(device, "float16"))
    assert ctorch.softmax(h, 0, dtype=ctorch.float64, out=_e(device, "float64")).dtype == ctorch.float64
    # logsumexp: any floating out, even for an integer input
    assert ctorch.logsumexp(i, 0, out=_e(device, "float64")).item() == pytest.approx(math.log(math.e * (1 + math.e + math.e ** 2)))
    with pytest.raises(RuntimeError, match="^logsumexp\\(\\): Expected floating point type for result tensor, but got: Long$"):
        ctorch.logsumexp(h, 0, out=_e(device, "int64"))
    # all / any: bool or uint8, checked before the dim
    r = ctorch.any(h, 0, out=_e(device, "uint8"))
    assert r.dtype == ctorch.uint8 and r.item() == 1
    with pytest.raises(RuntimeError, match="^any only supports bool tensor for result, got: Float$"):
        ctorch.any(h, 5, out=_e(device))
    with pytest.raises(RuntimeError, match="^all only supports bool tensor for result, got: Long$"):
        ctorch.all(h, out=_e(device, "int64"))
    # max()/min() of everything: any dtype the result casts to
    assert ctorch.max(h, out=_e(device, "float64")).item() == pytest.approx(0.7)
    with pytest.raises(RuntimeError, match="^Expected canCast"):
        ctorch.min(h, out=_e(device, "int64"))


def test_reduction_out_resize_and_overlap(device):
    x = ctorch.arange(6.0, device=device).reshape(2, 3)
    o = ctorch.zeros(5, device=device)
    with pytest.warns(UserWarning, match=r"An output with one or more elements was resized since it had shape \[5\], "
                                         r"which does not match the required output shape \[2\]"):
        assert ctorch.sum(x, 1, out=o) is o
    assert o.tolist() == [3.0, 12.0] and o.stride() == (1,)
    base = ctorch.zeros(4, device=device)
    strided = base[::2]  # the right shape: written in place, through the view
    ctorch.amax(x, 1, out=strided)
    assert base.tolist() == [2.0, 0.0, 5.0, 0.0]
    kept = ctorch.zeros(2, 1, device=device)
    ctorch.logsumexp(x, 1, keepdim=True, out=kept)
    assert kept.shape == (2, 1)
    empty = ctorch.zeros(0, device=device)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty out is resized silently
        ctorch.cumsum(x, 0, out=empty)
    assert empty.tolist() == [[0.0, 1.0, 2.0], [3.0, 5.0, 7.0]]
    # PyTorch lets most reductions write over their input; ctorch computes into a fresh tensor
    # first, so the result is the reduction of the input's values before the write
    y = x.clone()
    ctorch.sum(y, 1, out=y[:, 0])
    assert y.tolist() == [[3.0, 1.0, 2.0], [12.0, 4.0, 5.0]]
    y = x.clone()
    ctorch.softmax(y, 1, out=y)
    assert y.sum(1).tolist() == pytest.approx([1.0, 1.0])
    # ... but median and aminmax refuse an out overlapping the input, as PyTorch does
    msg = "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single"
    y = x.clone()
    with pytest.raises(RuntimeError, match=msg):
        ctorch.median(y, 1, out=(y[0, :2], _e(device, "int64")))
    with pytest.raises(RuntimeError, match=msg):
        ctorch.aminmax(y, dim=1, out=(y[0, :2], _e(device)))
    assert y.tolist() == x.tolist()


def test_reduction_out_pairs(device):
    """(values, indices) pairs: median(dim), sort, topk, aminmax, max(dim) write both outs and
    return torch.return_types.*_out named tuples."""
    x = ctorch.tensor([[0.0, 5.0, 2.0], [3.0, 1.0, 4.0]], device=device)
    v, i = _e(device), _e(device, "int64")
    r = ctorch.median(x, 1, out=[v, i])
    assert r.values is v and r.indices is i and v.tolist() == [2.0, 3.0] and i.tolist() == [2, 0]
    assert type(r).__name__ == "median_out" and repr(r).startswith("torch.return_types.median_out(\nvalues=")
    v, i = _e(device), _e(device, "int64")
    r = ctorch.sort(x, 1, descending=True, out=(v, i))
    assert r[0] is v and type(r).__name__ == "sort_out" and i.tolist() == [[1, 2, 0], [2, 0, 1]]
    v, i = _e(device), _e(device, "int64")
    r = ctorch.topk(x, 2, out=(v, i))
    assert r.values is v and type(r).__name__ == "topk_out" and v.tolist() == [[5.0, 2.0], [4.0, 3.0]]
    lo, hi = _e(device), _e(device)
    r = ctorch.aminmax(x, dim=0, out=(lo, hi))
    assert r.min is lo and r.max is hi and type(r).__name__ == "aminmax_out" and hi.tolist() == [3.0, 5.0, 4.0]
    assert type(ctorch.max(x, 1, out=(_e(device), _e(device, "int64")))).__name__ == "max_out"
    assert "median_out" in dir(ctorch.return_types)
    idx = _e(device, "int64")
    assert ctorch.argsort(x, stable=True, dim=1, out=idx) is idx and idx.tolist() == [[0, 2, 1], [1, 0, 2]]
    with pytest.raises(TypeError, match="argsort\\(\\) received an invalid combination of arguments"):
        ctorch.argsort(x, 1, out=idx)
    with pytest.raises(RuntimeError, match="^Expected tensor for 'values' to have the same type as tensor for argument "
                                           "#2 'self'; but type torch.DoubleTensor does not equal torch.FloatTensor"):
        ctorch.median(x, 1, out=(_e(device, "float64"), _e(device, "int64")))
    with pytest.raises(RuntimeError, match="'indices' to have scalar type Long; but got torch.IntTensor instead"):
        ctorch.median(x, 1, out=(_e(device), _e(device, "int32")))
    v = ctorch.zeros(2, device=device)
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype long int, but got int instead$"):
        ctorch.topk(x, 2, out=(v, _e(device, "int32")))
    assert v.tolist() == [0.0, 0.0]  # refused before values was written
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype float, but got double instead$"):
        ctorch.sort(x, out=(_e(device, "float64"), _e(device, "int64")))
    with pytest.raises(TypeError, match="^median\\(\\): argument 'out' must be tuple of Tensors, not Tensor$"):
        ctorch.median(x, 1, out=_e(device))
    with pytest.raises(TypeError, match="^expected tuple of 2 elements but got 3$"):
        ctorch.topk(x, 1, out=(_e(device), _e(device, "int64"), _e(device)))


def test_reduction_out_signatures(device):
    """out= exists only on the overloads PyTorch gives it, and never on Tensor methods."""
    x = ctorch.ones(2, 3, device=device)
    o = _e(device)
    assert ctorch.sum(x, None, out=o) is o and o.item() == 6.0
    with pytest.raises(TypeError, match="sum\\(\\) received an invalid combination of arguments - got "
                                        "\\(Tensor, out=Tensor\\)"):
        ctorch.sum(x, out=o)
    with pytest.raises(TypeError, match="prod\\(\\) received an invalid combination of arguments"):
        ctorch.prod(x, out=o)
    with pytest.raises(TypeError, match="^prod\\(\\): argument 'dim' \\(position 2\\) must be int, not NoneType$"):
        ctorch.prod(x, None, out=o)
    with pytest.raises(TypeError, match='^median\\(\\) missing 1 required positional arguments: "dim"$'):
        ctorch.median(x, out=o)
    with pytest.raises(TypeError, match="std\\(\\) received an invalid combination of arguments"):
        ctorch.std(x, False, out=o)
    with pytest.raises(TypeError, match="^cumsum\\(\\): argument 'out' must be Tensor, not int$"):
        ctorch.cumsum(x, 0, out=3)
    with pytest.raises(TypeError, match="var_mean\\(\\) got an unexpected keyword argument 'out'"):
        ctorch.var_mean(x, 0, out=o)
    assert ctorch.sum(x, 1, out=None).tolist() == [3.0, 3.0]
    for name, args in [("sum", (1,)), ("cumsum", (0,)), ("argmax", ()), ("max", (1,)), ("median", (0,))]:
        with pytest.raises(TypeError, match=f"^{name}\\(\\) got an unexpected keyword argument 'out'$"):
            getattr(x, name)(*args, out=o)


def test_reduction_out_refuses_grad(device):
    """A differentiable reduction with out= refuses an input (or out) that requires grad,
    whatever out's dtype; argmax/any (no gradient) accept it; no_grad lifts the rule."""
    x = ctorch.arange(6.0, device=device).reshape(2, 3).requires_grad_()
    msg = r"^{}\(\): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.$"
    for name, call in [("sum", lambda: ctorch.sum(x, 1, out=_e(device))),
                       ("sum", lambda: ctorch.sum(x, 1, out=_e(device, "int64"))),
                       ("cumsum", lambda: ctorch.cumsum(x, 1, out=_e(device))),
                       ("std", lambda: ctorch.std(x, out=_e(device))),
                       ("median", lambda: ctorch.median(x, 1, out=(_e(device), _e(device, "int64")))),
                       ("sum", lambda: ctorch.sum(x.detach(), 1, out=ctorch.zeros(2, device=device, requires_grad=True)))]:
        with pytest.raises(RuntimeError, match=msg.format(name)):
            call()
    assert ctorch.argmax(x, 1, out=_e(device, "int64")).tolist() == [2, 2]
    assert ctorch.any(x, 1, out=_e(device, "bool")).tolist() == [True, True]
    with ctorch.no_grad():
        o = _e(device)
        assert ctorch.sum(x, 1, out=o) is o and not o.requires_grad and o.tolist() == [3.0, 12.0]


# --- named tuples --------------------------------------------------------------------------------------------------
def test_named_tuples(device):
    x = ctorch.tensor([[1, 4], [3, 2]], device=device)
    r = ctorch.max(x, 0)
    on = ", device='cuda:0'" if device == "cuda" else ""
    assert repr(r) == f"torch.return_types.max(\nvalues=tensor([3, 4]{on}),\nindices=tensor([1, 0]{on}))"
    assert type(r).__name__ == "max" and type(r).__module__ == "torch.return_types"
    assert isinstance(r, tuple) and len(r) == 2 and r[0] is r.values and r[1] is r.indices
    values, indices = x.min(1)
    assert L(values) == [1, 2] and L(indices) == [0, 1]
    assert isinstance(r, ctorch.return_types.max)
    for name, res in [("sort", x.sort()), ("topk", x.topk(1)), ("median", x.median(0)), ("min", x.min(0))]:
        assert type(res).__name__ == name
        assert repr(res).startswith(f"torch.return_types.{name}(\nvalues=tensor(")
        assert "\nindices=tensor(" in repr(res)


def test_named_tuples_of_other_families_print_one_field_a_line():
    """linalg's and histogram's named tuples (made elsewhere) print as PyTorch's do too."""
    a = ctorch.tensor([[2.0, 0.0], [0.0, 3.0]], dtype=ctorch.float64)
    assert repr(ctorch.linalg.eigh(a)) == ("torch.return_types.linalg_eigh(\neigenvalues=tensor([2., 3.], dtype=torch.float64),"
                                          "\neigenvectors=tensor([[1., 0.],\n        [0., 1.]], dtype=torch.float64))")
    r = ctorch.histogram(ctorch.tensor([1.0, 2.0, 1.0]), bins=2)
    assert repr(r) == "torch.return_types.histogram(\nhist=tensor([2., 1.]),\nbin_edges=tensor([1.0000, 1.5000, 2.0000]))"
    svd = repr(ctorch.linalg.svd(a))
    assert svd.startswith("torch.return_types.linalg_svd(\nU=tensor(") and ",\nS=tensor(" in svd and ",\nVh=tensor(" in svd
    assert str(r) == repr(r)


# --- bigger shapes: the chunked, tiled, folded and multi-threaded paths ----------------------------------------------
@pytest.mark.parametrize("shape,dims", [
    ((100003,), None), ((3, 200001), 1), ((200001, 3), 0), ((200001, 3), 1), ((1000, 1500), 0),
    ((1500, 1000), 1), ((5, 40000, 2), (0, 2)), ((2, 3, 70000), (0, 2)), ((64, 33, 65), (0, 2)),
    ((9000, 7), (0, 1)), ((7, 9000), 0)])
def test_large_layouts(device, shape, dims, rng):
    a = rng.standard_normal(shape).astype(np.float32)
    t = ctorch.tensor(a, device=device)
    x = a.astype(np.float64)
    ax = np_axis(dims, len(shape))
    scale = np.sum(np.abs(x), axis=ax)
    exp = np.sum(x, axis=ax)
    got = to_numpy(t.sum(dims)).astype(np.float64)
    assert np.all(np.abs(got - exp) <= 1e-6 * scale + 1e-6)
    check(t.amax(dims), np.max(x, axis=ax), "float32")
    got = to_numpy(t.mean(dims)).astype(np.float64)
    assert np.all(np.abs(got - np.mean(x, axis=ax)) <= 1e-6 * np.mean(np.abs(x), axis=ax) + 1e-9)
    check(t.var(dims), np.var(x, axis=ax, ddof=1), "float32", rtol=1e-4)
    check(t.norm(dim=dims), np.sqrt(np.sum(x * x, axis=ax)), "float32", rtol=1e-5)
    check(ctorch.logsumexp(t, dims if dims is not None else list(range(len(shape)))),
          np.log(np.sum(np.exp(x), axis=ax)), "float32", rtol=1e-5)
    if isinstance(dims, int):
        check(t.argmax(dims), np.argmax(x, axis=dims), "int64")
        check(t.cumsum(dims), np.cumsum(x, axis=dims), "float32", rtol=1e-5, atol_scale=100)
        check(t.softmax(dims), np.exp(x) / np.exp(x).sum(axis=dims, keepdims=True), "float32", rtol=1e-5,
              atol_scale=1e-3)
    # a non-contiguous view of the same values
    tt = ctorch.tensor(np.ascontiguousarray(a.T), device=device).permute(*range(len(shape) - 1, -1, -1))
    got = to_numpy(tt.sum(dims)).astype(np.float64)
    assert np.all(np.abs(got - exp) <= 1e-6 * scale + 1e-6)
    # float64 and integer accumulation on the same layout
    check(ctorch.tensor(x, device=device).sum(dims), exp, "float64", rtol=1e-12, atol_scale=1e-2)
    ai = (a * 10).astype(np.int32)
    ti = ctorch.tensor(ai, device=device)
    check(ti.sum(dims), np.sum(ai.astype(np.int64), axis=ax), "int64")
    check(ti.amax(dims), np.max(ai, axis=ax), "int32")
    check(ti.amin(dims), np.min(ai, axis=ax), "int32")
    check(ctorch.tensor(x, device=device).amin(dims), np.min(x, axis=ax), "float64")


def test_random_views(device):
    """Random shapes, permutations, slices and broadcasts against NumPy: the dim reordering and
    merging of the reduction description."""
    rng = np.random.default_rng(99)
    for case in range(150):
        nd = int(rng.integers(1, 5))
        shape = [int(v) for v in rng.integers(1, 7, size=nd)]
        a = rng.standard_normal(shape)
        t = ctorch.tensor(a, device=device)
        perm = [int(v) for v in rng.permutation(nd)]
        t, a = t.permute(*perm), a.transpose(perm)
        d = int(rng.integers(0, nd))
        if a.shape[d] > 2:  # a slice
            t, a = t.narrow(d, 1, a.shape[d] - 2), a[(slice(None),) * d + (slice(1, -1),)]
        d = int(rng.integers(0, nd))
        if a.shape[d] == 1:  # a broadcast
            t = t.expand(*[3 if i == d else s for i, s in enumerate(a.shape)])
            a = np.broadcast_to(a, t.shape)
        dims = tuple(int(v) for v in np.nonzero(rng.random(nd) < 0.5)[0]) or None
        keepdim = bool(rng.random() < 0.5)
        ax = dims
        check(t.sum(dims, keepdim), np.sum(a, axis=ax, keepdims=keepdim), "float64", atol_scale=10)
        check(t.amax(dims, keepdim), np.max(a, axis=ax, keepdims=keepdim), "float64")
        check(t.mean(dims, keepdim), np.mean(a, axis=ax, keepdims=keepdim), "float64", atol_scale=10)
        n = a.size if ax is None else int(np.prod([a.shape[i] for i in ax]))
        if n > 1:
            check(t.var(dims, keepdim=keepdim), np.var(a, axis=ax, ddof=1, keepdims=keepdim), "float64",
                  atol_scale=10)
        check(ctorch.logsumexp(t, dims if dims else list(range(nd)), keepdim),
              np.log(np.sum(np.exp(a), axis=ax, keepdims=keepdim)), "float64", atol_scale=10)
        check(t.float().sum(dims, keepdim), np.sum(a, axis=ax, keepdims=keepdim), "float32", atol_scale=10)
        if nd > 0:
            d = int(rng.integers(0, nd))
            check(t.argmax(d), np.argmax(a, axis=d), "int64")
            check(t.cumsum(d), np.cumsum(a, axis=d), "float64", atol_scale=10)
            check(t.softmax(d), np.exp(a) / np.exp(a).sum(axis=d, keepdims=True), "float64")
            check(t.sort(d).values, np.sort(a, axis=d), "float64")


def test_expanded_reduction(device):
    a = np.arange(5, dtype=np.float32)
    t = ctorch.tensor(a, device=device).expand(100000, 5)
    check(t.sum(0), a * 100000, "float32")
    check(t.sum(1), np.full(100000, 10.0), "float32")
    assert t.sum().item() == 1000000.0


# --- accuracy and determinism ---------------------------------------------------------------------------------------
def test_float32_sum_accuracy(device):
    a = np.random.default_rng(42).standard_normal(4 * 1024 * 1024).astype(np.float32) + 1.0
    t = ctorch.tensor(a, device=device)
    exact = a.astype(np.float64).sum()
    got = t.sum().item()
    assert abs(got - exact) <= 1e-5 * abs(exact)
    assert abs(got - float(a.sum())) <= 1e-5 * abs(exact)  # NumPy's pairwise float32 sum
    assert abs(t.mean().item() - exact / a.size) <= 1e-5 * abs(exact / a.size)
    # outer-dim reduction of many rows also stays accurate (blocks of rows are cascaded pairwise)
    b = a.reshape(-1, 16)
    got = to_numpy(ctorch.tensor(b, device=device).sum(0)).astype(np.float64)
    np.testing.assert_allclose(got, b.astype(np.float64).sum(0), rtol=1e-5)
    h = ctorch.tensor(np.ones(100000), dtype=ctorch.float16, device=device)
    assert h.sum(dtype=ctorch.float32).item() == 100000.0  # half accumulates in float32
    assert h.mean().item() == 1.0


def test_determinism(device):
    a = np.random.default_rng(7).standard_normal((1 << 20) + 17).astype(np.float32)
    t = ctorch.tensor(a, device=device)
    m = ctorch.tensor(a[: 1 << 20].reshape(1024, 1024), device=device)
    ops = [lambda: t.sum(), lambda: t.var(), lambda: t.norm(), lambda: m.sum(0), lambda: m.sum(1),
           lambda: m.t().sum(1), lambda: t.logsumexp(0)]
    first = [to_numpy(op()).tobytes() for op in ops]
    for _ in range(3):
        assert [to_numpy(op()).tobytes() for op in ops] == first
    old = ctorch.get_num_threads()
    try:
        for n in (1, 3):
            ctorch.set_num_threads(n)
            assert [to_numpy(op()).tobytes() for op in ops] == first  # independent of the thread count
    finally:
        ctorch.set_num_threads(old)


def test_sum_to_size(device, rng):
    a = rng.standard_normal((2, 3))
    t = ctorch.tensor(a, device=device)
    check(t.sum_to_size(3), a.sum(0), "float64")
    check(t.sum_to_size(1, 3), a.sum(0, keepdims=True), "float64")
    check(t.sum_to_size((2, 1)), a.sum(1, keepdims=True), "float64")
    check(t.sum_to_size([1, 1]), a.sum(keepdims=True), "float64")
    assert t.sum_to_size(2, 3) is t
    for bad in [(2,), (4, 3), (2, 3, 1)]:
        with pytest.raises(RuntimeError, match=r"size \{\[.*\]\} is not expandable to size \{\[2, 3\]\}."):
            t.sum_to_size(*bad)
