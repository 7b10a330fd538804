"""Tests for the search and counting ops: searchsorted, bucketize, bincount, histc, unique,
unique_consecutive and isin. NumPy (fixed seed) is the oracle; PyTorch's results where NumPy
differs (NaN handling, dtypes) and its messages were checked against the reference build."""
import numpy as np
import pytest

import ctorch
from conftest import assert_close, to_numpy

NAN = float("nan")
SEARCH_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8"]


def t_(data, device="cpu", dtype=None):
    kw = {"device": device}
    if dtype is not None:
        kw["dtype"] = getattr(ctorch, dtype) if isinstance(dtype, str) else dtype
    return ctorch.tensor(data, **kw)  # Python floats give float32, as in PyTorch


def raises(exc, message, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == message


def np_of(dtype):
    return np.float32 if dtype == "bfloat16" else np.dtype(dtype)


def transposed(arr, device, dtype):
    """A non-contiguous tensor equal to arr (2-d): the transpose of a contiguous copy of arr.T."""
    return t_(np.ascontiguousarray(arr.T), device, dtype).T


def check_equal(actual, expected, dtype="int64"):
    assert actual.dtype == getattr(ctorch, dtype), actual.dtype
    a = to_numpy(actual)
    assert a.shape == np.shape(expected), (a.shape, np.shape(expected))
    np.testing.assert_array_equal(a, expected)


# ---------------------------------------------------------------------------------------------
# searchsorted / bucketize
@pytest.mark.parametrize("dtype", SEARCH_DTYPES)
def test_searchsorted_1d(device, dtype, rng):
    seq = np.sort(rng.integers(0, 60, size=17)).astype(np_of(dtype))
    values = rng.integers(-5, 65, size=(3, 8)).astype(np_of(dtype))
    s, v = t_(seq, device, dtype), t_(values, device, dtype)
    for side in ("left", "right"):
        expected = np.searchsorted(seq, values, side=side)
        check_equal(ctorch.searchsorted(s, v, right=side == "right"), expected)
        check_equal(ctorch.searchsorted(s, v, side=side, out_int32=True), expected, "int32")
    # non-contiguous values and a strided sequence
    check_equal(ctorch.searchsorted(t_(np.repeat(seq, 2), device, dtype)[::2], transposed(values, device, dtype)),
                np.searchsorted(seq, values))


@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
def test_searchsorted_batched_and_sorter(device, dtype, rng):
    seq = np.sort(rng.integers(0, 40, size=(2, 3, 9)), axis=-1).astype(np_of(dtype))
    values = rng.integers(-3, 43, size=(2, 3, 5)).astype(np_of(dtype))
    expected = np.stack([[np.searchsorted(seq[i, j], values[i, j], side="right") for j in range(3)]
                         for i in range(2)])
    s, v = t_(seq, device, dtype), t_(values, device, dtype)
    check_equal(ctorch.searchsorted(s, v, right=True), expected)
    # the same lines shuffled, with the sorter that sorts them
    perm = np.stack([[rng.permutation(9) for _ in range(3)] for _ in range(2)])
    shuffled = np.take_along_axis(seq, perm, axis=-1)
    sorter = np.argsort(shuffled, axis=-1, kind="stable")
    got = ctorch.searchsorted(t_(shuffled, device, dtype), v, right=True, sorter=t_(sorter, device))
    check_equal(got, expected)
    # a transposed batch of lines
    seq2 = np.sort(rng.integers(0, 40, size=(4, 6)), axis=-1).astype(np_of(dtype))
    vals2 = rng.integers(0, 40, size=(4, 3)).astype(np_of(dtype))
    got = ctorch.searchsorted(transposed(seq2, device, dtype), transposed(vals2, device, dtype))
    check_equal(got, np.stack([np.searchsorted(seq2[i], vals2[i]) for i in range(4)]))


def test_searchsorted_scalars_promotion_and_nan(device):
    s = t_([1.0, 2.0, 2.0, 3.0, NAN], device)
    v = t_([0.0, 2.0, 2.5, 3.0, 5.0, NAN, float("inf")], device)
    # PyTorch's comparisons (not NumPy's NaN-last order): the search walks past NaNs
    check_equal(ctorch.searchsorted(s, v), [0, 1, 5, 5, 5, 5, 5])
    check_equal(ctorch.searchsorted(s, v, right=True), [0, 5, 5, 5, 5, 5, 5])
    check_equal(ctorch.searchsorted(t_([1.0, 2.0, 3.0], device), 2.0), np.array(1))
    check_equal(ctorch.searchsorted(t_([1, 2, 3], device), 2.5), np.array(2))  # promoted to float
    check_equal(ctorch.searchsorted(t_([1, 2, 3], device), t_([2.5], device)), [2])
    check_equal(ctorch.searchsorted(t_([1, 2, 3], device), t_([2], device, "int32")), [1])
    check_equal(ctorch.searchsorted(t_([1, 2], device), True), np.array(0))
    check_equal(ctorch.searchsorted(t_([1.0, 2.0], device), t_(1.5, device)), np.array(1))
    check_equal(ctorch.searchsorted(t_([[1.0, 3.0]], device), t_([[2.0, 0.0]], device)), [[1, 0]])
    # empty sequence lines and empty values
    check_equal(ctorch.searchsorted(t_(np.zeros((2, 0), np.float32), device), t_([[1.0], [2.0]], device)),
                [[0], [0]])
    check_equal(ctorch.searchsorted(t_([1.0], device), t_(np.zeros((0, 3), np.float32), device)), np.zeros((0, 3)))


def test_searchsorted_out(device):
    s, v = t_([1.0, 2.0, 3.0], device), t_([2.5, 0.0], device)
    out = ctorch.empty(2, dtype=ctorch.int64, device=device)
    assert ctorch.searchsorted(s, v, out=out) is out
    check_equal(out, [2, 0])
    out32 = ctorch.empty(0, dtype=ctorch.int32, device=device)
    ctorch.searchsorted(s, v, out_int32=True, right=True, out=out32)
    check_equal(out32, [2, 0], "int32")
    raises(RuntimeError, "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
           "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype Int and "
           "out_int32 flag is False", lambda: ctorch.searchsorted(s, v, out=ctorch.empty(2, dtype=ctorch.int32)))
    raises(RuntimeError, "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
           "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype Float and "
           "out_int32 flag is True", lambda: ctorch.searchsorted(s, v, out_int32=True, out=ctorch.empty(2)))


def test_searchsorted_errors(device):
    s, v = t_([3.0, 1.0, 2.0], device), t_([1.5, 2.5], device)
    raises(RuntimeError, "torch.searchsorted(): side and right can't be set to opposites, got side of left while "
           "right was True", lambda: ctorch.searchsorted(s, v, side="left", right=True))
    raises(RuntimeError, "torch.searchsorted(): side can only be 'left' or 'right' but got foo",
           lambda: ctorch.searchsorted(s, v, side="foo"))
    raises(RuntimeError, "torch.searchsorted(): sorter index out of range",
           lambda: ctorch.searchsorted(s, v, sorter=t_([1, 2, 5], device)))
    raises(RuntimeError, "torch.searchsorted(): sorter index out of range",
           lambda: ctorch.searchsorted(s, v, sorter=t_([1, 2, -1], device)))
    raises(RuntimeError, "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor "
           "[3]and got sorter tensor [2]", lambda: ctorch.searchsorted(s, v, sorter=t_([1, 2], device)))
    raises(RuntimeError, "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype Int",
           lambda: ctorch.searchsorted(s, v, sorter=t_([1, 2, 0], device, "int32")))
    m = t_([[1.0, 2.0], [3.0, 4.0]], device)
    raises(RuntimeError, "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
           "of boundaries tensor and input value tensor must match, but we got boundaries tensor [2, 2] and input "
           "value tensor [3, 2]", lambda: ctorch.searchsorted(m, t_(np.ones((3, 2), np.float32), device)))
    raises(RuntimeError, "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
           "of boundaries tensor and input value tensor must match, but we got boundaries tensor [2, 2] and input "
           "value tensor [2]", lambda: ctorch.searchsorted(m, v))
    raises(RuntimeError, "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is "
           "1, but we got boundaries tensor dim(2) and input value's dim(0) numel(1)",
           lambda: ctorch.searchsorted(m, 1.5))
    raises(RuntimeError, "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
           "dimension", lambda: ctorch.searchsorted(t_(1.0, device), v))
    raises(NotImplementedError, "\"searchsorted_out_%s\" not implemented for 'Bool'" % device,
           lambda: ctorch.searchsorted(t_([True, False], device), t_([True], device)))
    with pytest.raises(TypeError, match="invalid combination of arguments - got \\(list, Tensor\\)"):
        ctorch.searchsorted([1.0, 2.0], v)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bfloat16"])
def test_bucketize(device, dtype, rng):
    boundaries = np.array([1, 4, 9, 16, 25], dtype=np_of(dtype))
    x = rng.integers(0, 30, size=(4, 3)).astype(np_of(dtype))
    b = t_(boundaries, device, dtype)
    check_equal(ctorch.bucketize(transposed(x, device, dtype).T.T, b), np.searchsorted(boundaries, x, side="left"))
    check_equal(ctorch.bucketize(t_(x, device, dtype), b, right=True, out_int32=True),
                np.searchsorted(boundaries, x, side="right"), "int32")
    check_equal(ctorch.bucketize(4, b), np.array(1))
    check_equal(ctorch.bucketize(t_(4.5, device), b), np.array(2))
    out = ctorch.empty(4, 3, dtype=ctorch.int64, device=device)
    ctorch.bucketize(t_(x, device, dtype), b, out=out)
    check_equal(out, np.searchsorted(boundaries, x))
    raises(RuntimeError, "boundaries tensor must be 1 dimension, but got dim(2)",
           lambda: ctorch.bucketize(t_(x, device, dtype), b.view(1, 5)))
    raises(RuntimeError, "boundaries tensor must be 1 dimension, but got dim(0)",
           lambda: ctorch.bucketize(t_(x, device, dtype), b[0]))


# ---------------------------------------------------------------------------------------------
# bincount / histc
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
def test_bincount(device, dtype, rng):
    x = rng.integers(0, 12, size=40).astype(dtype)
    t = t_(x, device, dtype)
    check_equal(ctorch.bincount(t), np.bincount(x))
    check_equal(t.bincount(minlength=20), np.bincount(x, minlength=20))
    check_equal(ctorch.bincount(t_(np.repeat(x, 2), device, dtype)[::2]), np.bincount(x))


def test_bincount_weights(device, rng):
    x = rng.integers(0, 9, size=300)
    w = rng.standard_normal(300)
    t = t_(x, device)
    # float32 weights count in float32 (the CPU's serial order: the same bits on CUDA)
    got = ctorch.bincount(t, t_(w.astype(np.float32), device))
    assert got.dtype == ctorch.float32
    expected = np.zeros(9, np.float32)
    for i, v in zip(x, w.astype(np.float32)):
        expected[i] = np.float32(expected[i] + v)
    np.testing.assert_array_equal(to_numpy(got), expected)
    # any other weights count in float64
    for wd in ["float64", "float16", "int32", "bool"]:
        got = ctorch.bincount(t, t_(w.astype(np_of(wd)) if wd != "bool" else w > 0, device, wd), minlength=11)
        assert got.dtype == ctorch.float64, wd
        ref = np.bincount(x, (w.astype(np_of(wd)) if wd != "bool" else w > 0).astype(np.float64), minlength=11)
        np.testing.assert_allclose(to_numpy(got), ref, rtol=1e-12, atol=1e-12)
    got = ctorch.bincount(t, t_(np.repeat(w, 2), device)[::2])  # strided weights
    np.testing.assert_allclose(to_numpy(got), np.bincount(x, w), rtol=1e-12)


def test_bincount_empty_and_errors(device):
    empty = t_(np.zeros(0, np.int64), device)
    check_equal(ctorch.bincount(empty), np.zeros(0))
    check_equal(ctorch.bincount(empty, minlength=3), np.zeros(3))
    check_equal(ctorch.bincount(empty, t_(np.zeros(0, np.float32), device)), np.zeros(0))  # int64 as PyTorch
    msg = "bincount only supports 1-d non-negative integral inputs."
    raises(RuntimeError, msg, lambda: ctorch.bincount(t_([-1, 2], device)))
    raises(RuntimeError, msg, lambda: ctorch.bincount(t_([[1, 2]], device)))
    raises(RuntimeError, msg, lambda: ctorch.bincount(t_(1, device)))
    raises(NotImplementedError, "\"bincount_%s\" not implemented for 'Float'" % device,
           lambda: ctorch.bincount(t_([1.0, 2.0], device)))
    raises(NotImplementedError, "\"bincount_%s\" not implemented for 'Bool'" % device,
           lambda: ctorch.bincount(t_([True], device)))
    raises(RuntimeError, "minlength should be >= 0", lambda: ctorch.bincount(t_([1], device), minlength=-1))
    msg = "weights should be 1-d and have the same length as input"
    raises(RuntimeError, msg, lambda: ctorch.bincount(t_([1, 3], device), t_([1.0, 2.0, 3.0], device)))
    raises(RuntimeError, msg, lambda: ctorch.bincount(t_([1, 3], device), t_([[1.0], [2.0]], device)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_histc(device, dtype, rng):
    # values between bin edges (k/4 + 1/8 over integer-aligned bins), so NumPy's edges agree
    x = (rng.integers(-8, 48, size=(5, 6)) / 4 + 0.125).astype(np_of(dtype))
    t = transposed(x, device, dtype)
    got = ctorch.histc(t, bins=10, min=0, max=10)
    assert got.dtype == getattr(ctorch, dtype)
    check_equal(got, np.histogram(x, bins=10, range=(0, 10))[0].astype(np.float32), dtype)
    # min == max: the data's range; the last bin includes its right edge
    lo, hi = float(x.min()), float(x.max())
    check_equal(t.histc(7), np.histogram(x, bins=7, range=(lo, hi))[0].astype(np.float32), dtype)


def test_histc_edges_and_specials(device):
    # PyTorch's float32 arithmetic: 0.7f * 10 rounds to 7 (NumPy's bins would say 6)
    check_equal(ctorch.histc(t_([0.1, 0.2, 0.3, 0.7, 0.9, 1.0], device), 10, 0, 1),
                [0, 1, 1, 1, 0, 0, 0, 1, 0, 2], "float32")
    check_equal(ctorch.histc(t_([1.0, 2.0, 1.0, NAN, 9.0, -1.0], device), 4, 0, 3), [0, 2, 1, 0], "float32")
    check_equal(ctorch.histc(t_([1.0, 1.0, 1.0], device), 4), [0, 0, 3, 0], "float32")  # range [0, 2]
    check_equal(ctorch.histc(t_([1.0, 2.0, 1.0], device), 4, 3, 3), [2, 0, 0, 1], "float32")
    check_equal(ctorch.histc(t_(2.0, device), 4), [0, 0, 1, 0], "float32")
    check_equal(ctorch.histc(t_(np.zeros(0, np.float32), device), 3), [0, 0, 0], "float32")
    check_equal(ctorch.histc(t_([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], device, "float16"), 7, 0.1, 5.3),
                [0, 1, 1, 1, 0, 1, 1], "float16")
    out = ctorch.empty(0, device=device)
    assert ctorch.histc(t_([1.0, 2.0, 1.0], device), 4, 0, 3, out=out) is out
    check_equal(out, [0, 2, 1, 0], "float32")


def test_histc_errors(device):
    x = t_([1.0, 2.0, 1.0], device)
    raises(RuntimeError, "torch.histogram(): bins must be > 0, but got 0 for dimension 0", lambda: ctorch.histc(x, 0))
    raises(RuntimeError, "torch.histogram(): bins must be > 0, but got -1 for dimension 0",
           lambda: ctorch.histc(t_([1, 2], device), -1))
    raises(RuntimeError, "torch.histc: max must be larger than min", lambda: ctorch.histc(x, 4, 3, 1))
    raises(RuntimeError, "torch.histc: range of [0, inf] is not finite", lambda: ctorch.histc(x, 4, 0, float("inf")))
    raises(RuntimeError, "torch.histc: range of [nan, 1] is not finite", lambda: ctorch.histc(x, 4, NAN, 1))
    raises(RuntimeError, "torch.histc: range of [1, inf] is not finite",
           lambda: ctorch.histc(t_([1.0, 2.0, float("inf")], device), 4))
    raises(RuntimeError, "torch.histogram: input tensor and hist tensor should have the same dtype, but got input "
           "float and hist double", lambda: ctorch.histc(x, 4, out=ctorch.empty(4, dtype=ctorch.float64)))
    raises(TypeError, "histc(): argument 'bins' (position 2) must be int, not float", lambda: ctorch.histc(x, 4.5))
    if device == "cpu":
        raises(NotImplementedError, "\"histogram_cpu\" not implemented for 'Long'",
               lambda: ctorch.histc(t_([1, 2], device), 4))


# ---------------------------------------------------------------------------------------------
# unique / unique_consecutive
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "uint8", "float16", "bool"])
def test_unique(device, dtype, rng):
    x = (rng.integers(0, 6, size=(4, 5)) > 2) if dtype == "bool" else rng.integers(0, 6, size=(4, 5)).astype(dtype)
    t = transposed(x, device, dtype)
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    check_equal(ctorch.unique(t), values, dtype)
    v, i, c = ctorch.unique(t, return_inverse=True, return_counts=True)
    check_equal(v, values, dtype)
    check_equal(i, inverse.reshape(x.shape))
    check_equal(c, counts)
    v, c = t.unique(sorted=False, return_counts=True)  # a sorted result is a valid unsorted one
    check_equal(v, values, dtype)
    check_equal(c, counts)


def test_unique_special_values_and_shapes(device):
    x = t_([3.0, NAN, -0.0, 0.0, 1.0, NAN, 3.0, 1.0], device)
    v, i, c = ctorch.unique(x, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(to_numpy(v), [-0.0, 1.0, 3.0, NAN, NAN])  # every NaN its own value
    assert np.signbit(to_numpy(v)[0])  # the first of -0.0 == 0.0 in input order
    check_equal(i, [2, 3, 0, 0, 1, 4, 2, 1])
    check_equal(c, [2, 2, 2, 1, 1])
    v, i, c = ctorch.unique(t_(5, device), return_inverse=True, return_counts=True)
    check_equal(v, [5])
    check_equal(i, np.array(0))
    check_equal(c, [1])
    v, i, c = ctorch.unique(t_(np.zeros((0, 2), np.int64), device), return_inverse=True, return_counts=True)
    check_equal(v, np.zeros(0))
    check_equal(i, np.zeros((0, 2)))
    check_equal(c, np.zeros(0))
    assert isinstance(ctorch.unique(x, return_inverse=True), tuple)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_dim(device, dim, rng):
    x = rng.integers(0, 2, size=(6, 3, 2)).astype(np.float32)
    x[3] = x[1]
    values, inverse, counts = np.unique(x, axis=dim, return_inverse=True, return_counts=True)
    v, i, c = ctorch.unique(t_(x, device), dim=dim, return_inverse=True, return_counts=True)
    check_equal(v, values, "float32")
    assert v.is_contiguous()
    check_equal(i, inverse.reshape(-1))
    check_equal(c, counts)
    check_equal(t_(x, device).unique(dim=dim), values, "float32")


def test_unique_dim_special_cases(device):
    m = t_([[1, 2], [0, 5], [1, 2], [0, 3]], device)
    v, i, c = ctorch.unique(m, dim=1, return_inverse=True, return_counts=True)
    check_equal(v, to_numpy(m))
    check_equal(i, [0, 1])
    check_equal(c, [1, 1])
    check_equal(ctorch.unique(t_([[NAN, 1.0], [NAN, 1.0]], device), dim=0).isnan().sum(), np.array(2))
    check_equal(ctorch.unique(t_([[-0.0, 1.0], [0.0, 1.0]], device), dim=0), [[-0.0, 1.0]], "float32")
    v, i, c = ctorch.unique(ctorch.empty(0, 3, device=device), dim=0, return_inverse=True, return_counts=True)
    assert tuple(v.shape) == (0, 3) and tuple(i.shape) == (0,) and tuple(c.shape) == (0,)
    raises(RuntimeError, "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied",
           lambda: ctorch.unique(ctorch.empty(2, 0, device=device), dim=0))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
           lambda: ctorch.unique(m, dim=2))
    raises(IndexError, "Dimension specified as 0 but tensor has no dimensions",
           lambda: ctorch.unique(t_(5, device), dim=0))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
def test_unique_consecutive(device, dtype, rng):
    x = rng.integers(0, 2, size=30).astype(dtype)
    starts = np.concatenate([[True], x[1:] != x[:-1]])
    values = x[starts]
    counts = np.diff(np.append(np.flatnonzero(starts), len(x)))
    t = t_(np.repeat(x, 2), device, dtype)[::2]
    v, i, c = ctorch.unique_consecutive(t, return_inverse=True, return_counts=True)
    check_equal(v, values, dtype)
    check_equal(i, np.cumsum(starts) - 1)
    check_equal(c, counts)
    check_equal(t.unique_consecutive(), values, dtype)


def test_unique_consecutive_shapes(device):
    v, i, c = ctorch.unique_consecutive(t_([[1, 1], [2, 3]], device), return_inverse=True, return_counts=True)
    check_equal(v, [1, 2, 3])
    check_equal(i, [[0, 0], [1, 2]])
    check_equal(c, [2, 1, 1])
    check_equal(ctorch.unique_consecutive(t_([NAN, NAN, 1.0], device)).isnan(), [True, True, False], "bool")
    v, i, c = ctorch.unique_consecutive(t_([[1, 2], [1, 2], [0, 5], [1, 2]], device), dim=0, return_inverse=True,
                                        return_counts=True)
    check_equal(v, [[1, 2], [0, 5], [1, 2]])
    check_equal(i, [0, 0, 1, 2])
    check_equal(c, [2, 1, 1])
    v, i, c = ctorch.unique_consecutive(t_(3, device), return_inverse=True, return_counts=True)
    check_equal(v, [3])
    check_equal(i, np.array(0))
    v, i = ctorch.unique_consecutive(t_(np.zeros(0, np.int64), device), return_inverse=True)
    check_equal(v, np.zeros(0))


def test_unique_autograd(device):
    a = ctorch.tensor([1.0, 2.0, 1.0], device=device, dtype=ctorch.float64, requires_grad=True)
    v, i = ctorch.unique(a, return_inverse=True)
    assert type(v.grad_fn).__name__ == "Unique2Backward0" and i.grad_fn is None
    with pytest.raises(NotImplementedError, match="the derivative for '_unique2' is not implemented."):
        v.sum().backward()
    v = ctorch.unique(a.view(3, 1), dim=0)
    assert type(v.grad_fn).__name__ == "UniqueDimBackward0"
    with pytest.raises(NotImplementedError, match="the derivative for 'unique_dim' is not implemented."):
        v.sum().backward()
    v = a.unique_consecutive()
    assert type(v.grad_fn).__name__ == "UniqueConsecutiveBackward0"
    with pytest.raises(NotImplementedError, match="the derivative for 'unique_consecutive' is not implemented."):
        v.sum().backward()
    assert not ctorch.histc(a, 4).requires_grad  # histc is not differentiable in PyTorch
    assert not ctorch.searchsorted(a.detach(), a).requires_grad
    w = ctorch.bincount(t_([0, 1, 0], device), a)
    assert type(w.grad_fn).__name__ == "NotImplemented"
    raises(RuntimeError, "derivative for aten::bincount is not implemented", lambda: w.sum().backward())


# ---------------------------------------------------------------------------------------------
# isin
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "uint8", "float16", "bfloat16"])
def test_isin(device, dtype, rng):
    x = rng.integers(0, 20, size=(4, 6)).astype(np_of(dtype))
    test = rng.integers(0, 20, size=9).astype(np_of(dtype))
    t = transposed(x, device, dtype)
    s = t_(test, device, dtype)
    check_equal(ctorch.isin(t, s), np.isin(x, test), "bool")
    check_equal(ctorch.isin(t, s, invert=True), ~np.isin(x, test), "bool")
    check_equal(ctorch.isin(t, s.view(3, 3), assume_unique=False), np.isin(x, test), "bool")


def test_isin_scalars_promotion_and_specials(device):
    check_equal(ctorch.isin(t_([1.0, NAN, 3.0], device), t_([NAN, 3.0], device)), [False, False, True], "bool")
    check_equal(ctorch.isin(t_([1, 2, 3], device), 2), [False, True, False], "bool")
    check_equal(ctorch.isin(t_([1, 2, 3], device), 2, invert=True), [True, False, True], "bool")
    check_equal(ctorch.isin(2, t_([1, 2, 3], device)), np.array(True), "bool")
    check_equal(ctorch.isin(2.5, t_([1, 2, 3], device)), np.array(False), "bool")
    check_equal(ctorch.isin(t_([1.5, 2.0], device), t_([2, 1], device)), [False, True], "bool")
    check_equal(ctorch.isin(t_([3, 2], device, "uint8"), 259), [True, False], "bool")  # 259 -> uint8 3
    check_equal(ctorch.isin(t_([-0.0, 0.0], device), t_([0.0], device)), [True, True], "bool")
    check_equal(ctorch.isin(t_(2, device), t_([1, 2, 3], device)), np.array(True), "bool")
    check_equal(ctorch.isin(t_(np.zeros(0, np.int64), device), t_([1], device)), np.zeros(0, bool), "bool")
    check_equal(ctorch.isin(t_([1, 2], device), t_(np.zeros(0, np.int64), device)), [False, False], "bool")
    out = ctorch.empty(2, dtype=ctorch.bool, device=device)
    assert ctorch.isin(t_([1, 2], device), t_([1], device), out=out) is out
    check_equal(out, [True, False], "bool")
    raises(RuntimeError, "Expected out tensor to have dtype bool, but got long int instead",
           lambda: ctorch.isin(t_([1, 2], device), t_([1], device), out=ctorch.empty(2, dtype=ctorch.int64,
                                                                                       device=device)))
    raises(NotImplementedError, "Unsupported input type encountered for isin(): Bool",
           lambda: ctorch.isin(t_([True], device), t_([True], device)))
    raises(NotImplementedError, "Unsupported input type encountered for isin(): Bool",
           lambda: ctorch.isin(t_([1, 0], device), t_([True], device)))
    with pytest.raises(TypeError, match="isin\\(\\) received an invalid combination of arguments - got \\(int, int\\)"):
        ctorch.isin(2, 3)
