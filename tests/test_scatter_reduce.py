"""Tests for Tensor.scatter_reduce(_) / torch.scatter_reduce and Tensor.index_reduce(_) /
torch.index_reduce: every reduction with and without include_self against a NumPy loop over the
index, dtypes, dims, layouts, repeated and empty indices, NaN propagation, PyTorch's errors (checked
against the reference build), and gradients (gradcheck in float64, plus hand-derived values for
prod with zeros and for ties in amax/amin, where PyTorch splits the gradient evenly)."""
import numpy as np
import pytest

import ctorch
from conftest import assert_close, to_numpy
from ctorch.autograd import gradcheck

SCATTER_REDUCES = ["sum", "prod", "mean", "amax", "amin"]
INDEX_REDUCES = ["prod", "mean", "amax", "amin"]


def T(data, device, dtype=None, **kw):
    if dtype is not None:
        kw["dtype"] = getattr(ctorch, dtype)
    return ctorch.tensor(np.asarray(data), device=device, **kw)


def combine(vals, reduce, dtype):
    """One place's reduction of vals (self first when included) as PyTorch defines it."""
    if dtype == "bool":
        return any(vals) if reduce in ("sum", "amax") else all(vals)
    floating = dtype.startswith("float")
    if reduce in ("amax", "amin") and floating and any(np.isnan(v) for v in vals):
        return np.nan
    if reduce == "sum":
        return sum(vals)
    if reduce == "prod":
        return np.prod(np.array(vals, dtype=np.float64 if floating else np.int64))
    if reduce == "mean":
        return sum(vals) / len(vals) if floating else sum(int(v) for v in vals) // len(vals)  # floor for ints
    return max(vals) if reduce == "amax" else min(vals)


def ref_scatter(a, dim, idx, src, reduce, include_self, dtype):
    """scatter_reduce by a loop over the index: out[.., idx[p], ..] combines src[p] (and self)."""
    groups = {}
    for pos in np.ndindex(*idx.shape):
        target = list(pos)
        target[dim] = int(idx[pos])
        groups.setdefault(tuple(target), []).append(src[pos].item())
    out = np.array(a, dtype=np.float64 if dtype.startswith("float") else a.dtype)
    for target, vals in groups.items():
        out[target] = combine(([a[target].item()] if include_self else []) + vals, reduce, dtype)
    return out


def ref_index(a, dim, index, source, reduce, include_self, dtype):
    """index_reduce as scatter_reduce with the vector index expanded to source's shape."""
    shape = [1] * source.ndim
    shape[dim] = -1
    return ref_scatter(a, dim, np.broadcast_to(index.reshape(shape), source.shape), source, reduce, include_self, dtype)


def values(shape, dtype, rng, reduce):
    """Small integers (exact in every dtype; prod's range keeps float16 products finite)."""
    hi = 3 if reduce == "prod" else 20
    return rng.integers(-hi, hi + 1, size=shape).astype(dtype)


def layout(arr, kind, device, dtype):
    """arr as a contiguous, transposed or every-other-row tensor."""
    if kind == "transposed":
        return T(np.ascontiguousarray(np.moveaxis(arr, 0, -1)), device, dtype).movedim(-1, 0)
    if kind == "strided":
        return T(np.repeat(arr, 2, axis=0), device, dtype)[::2]
    return T(arr, device, dtype)


@pytest.mark.parametrize("reduce", SCATTER_REDUCES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
def test_scatter_reduce_matches_loop(device, dtype, reduce, rng):
    a = values((3, 4, 2), dtype, rng, reduce)
    for dim, kinds in ((0, ("contiguous", "contiguous", "strided")), (1, ("transposed", "transposed", "contiguous")),
                       (-1, ("strided", "contiguous", "transposed"))):
        ishape = list(a.shape)
        ishape[dim] = 5  # more sources than places: repeated indices
        ishape[0 if dim != 0 else 1] -= 1  # smaller than self apart from dim
        idx = rng.integers(0, a.shape[dim], size=ishape)
        src = values([s + 1 for s in ishape], dtype, rng, reduce)  # bigger than the index
        for include_self in (True, False):
            t = layout(a, kinds[0], device, dtype)
            r = t.scatter_reduce(dim, layout(idx, kinds[1], device, "int64"), layout(src, kinds[2], device, dtype),
                                 reduce, include_self=include_self)
            expected = ref_scatter(a, dim % 3, idx, src[tuple(slice(0, s) for s in ishape)], reduce, include_self,
                                   dtype)
            assert r.dtype == t.dtype
            assert_close(r, expected)
            assert_close(t, a)  # out of place
    # in place and the module function, int32 index
    t = T(a, device, dtype)
    idx = rng.integers(0, 3, size=(4, 4, 2))
    src = values((4, 4, 2), dtype, rng, reduce)
    expected = ref_scatter(a, 0, idx, src, reduce, False, dtype)
    assert t.scatter_reduce_(0, T(idx, device, "int32"), T(src, device, dtype), reduce, include_self=False) is t
    assert_close(t, expected)
    r = ctorch.scatter_reduce(T(a, device, dtype), 0, T(idx, device), T(src, device, dtype), reduce=reduce)
    assert_close(r, ref_scatter(a, 0, idx, src, reduce, True, dtype))


@pytest.mark.parametrize("reduce", INDEX_REDUCES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
def test_index_reduce_matches_loop(device, dtype, reduce, rng):
    a = values((3, 4, 2), dtype, rng, reduce)
    for dim, kinds in ((0, ("contiguous", "strided")), (1, ("transposed", "contiguous")), (-1, ("strided", "transposed"))):
        index = rng.integers(0, a.shape[dim], size=5)  # repeated
        sshape = list(a.shape)
        sshape[dim] = 5
        source = values(sshape, dtype, rng, reduce)
        for include_self in (True, False):
            t = layout(a, kinds[0], device, dtype)
            r = t.index_reduce(dim, T(index, device), layout(source, kinds[1], device, dtype), reduce,
                               include_self=include_self)
            assert_close(r, ref_index(a, dim % 3, index, source, reduce, include_self, dtype))
            assert_close(t, a)
    t = T(a, device, dtype)
    index = np.array([2, 0, 2])
    source = values((3, 4, 2), dtype, rng, reduce)
    assert t.index_reduce_(0, T(index, device, "int32"), T(source, device, dtype), reduce, include_self=False) is t
    assert_close(t, ref_index(a, 0, index, source, reduce, False, dtype))
    out = T(np.zeros((3, 4, 2)), device, dtype)
    r = ctorch.index_reduce(T(a, device, dtype), 0, T(index, device), T(source, device, dtype), reduce, out=out)
    assert r is out
    assert_close(out, ref_index(a, 0, index, source, reduce, True, dtype))


def test_special_values_and_dtypes(device):
    nan = float("nan")
    x = T([1.0, 2.0, 3.0], device)
    i = T([0, 0, 1], device)
    s = T([nan, 0.0, 5.0], device)
    for reduce in ("amax", "amin"):
        for include_self in (True, False):
            assert_close(x.scatter_reduce(0, i, s, reduce, include_self=include_self),
                         np.array([nan, 5.0 if reduce == "amax" or not include_self else 2.0, 3.0]))
    assert_close(T([1.0, 2.0, 3.0], device).index_reduce(0, T([0, 0, 1], device), T([nan, 3.0, 1.0], device), "amin"),
                 np.array([nan, 1.0, 3.0]))
    # include_self=False starts from the dtype's extremes
    u = T([1, 1], device, "uint8").scatter_reduce(0, T([0, 0], device), T([200, 7], device, "uint8"), "amin",
                                                  include_self=False)
    assert to_numpy(u).tolist() == [7, 1]
    c = T([1, 1], device, "int8").scatter_reduce(0, T([0, 0], device), T([-100, -128], device, "int8"), "amax",
                                                 include_self=False)
    assert to_numpy(c).tolist() == [-100, 1]
    # integer mean is a floor division: (0 - 4 - 1) / 3 -> -2
    assert to_numpy(T([0, 2, 3], device).scatter_reduce(0, T([0, 0], device), T([-4, -1], device), "mean")).tolist() \
        == [-2, 2, 3]
    assert to_numpy(T([0, 2, 3], device).index_reduce(0, T([0, 0], device), T([-4, -1], device), "mean")).tolist() \
        == [-2, 2, 3]
    b = T([True, False, True], device)
    bi, bs = T([0, 0, 1, 2], device), T([False, True, True, False], device)
    for reduce, expected in (("sum", [True, True, True]), ("prod", [False, False, False]),
                             ("amax", [True, True, True]), ("amin", [False, False, False])):
        assert to_numpy(b.scatter_reduce(0, bi, bs, reduce)).tolist() == expected
    bf = T([1.0, 2.0], device, "bfloat16").scatter_reduce(0, T([1, 1], device), T([3.0, 5.0], device, "bfloat16"),
                                                          "mean", include_self=False)
    assert_close(bf, np.array([1.0, 4.0]))
    # 0-d self, index and src
    z = T(5.0, device).scatter_reduce(0, T(0, device), T(3.0, device), "prod")
    assert z.shape == () and z.item() == 15.0


def test_empty_index(device):
    x = T(np.arange(6.0).reshape(2, 3), device)
    for reduce in SCATTER_REDUCES:
        r = x.scatter_reduce(0, T(np.zeros((0, 3), np.int64), device), x, reduce, include_self=False)
        assert_close(r, np.arange(6.0).reshape(2, 3))
    for reduce in INDEX_REDUCES:
        r = x.index_reduce(0, T(np.zeros(0, np.int64), device), T(np.zeros((0, 3)), device), reduce,
                           include_self=False)
        assert_close(r, np.arange(6.0).reshape(2, 3))


def raises(exc, message, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == message


def test_errors(device):
    x = T(np.arange(6).reshape(2, 3), device)
    i = T([[0, 0, 1], [1, 1, 1]], device)
    raises(RuntimeError, "reduce argument must be either sum, prod, mean, amax or amin, got foo",
           lambda: x.scatter_reduce(0, i, x, "foo"))
    raises(RuntimeError, "reduce argument must be either sum, prod, mean, amax or amin, got multiply",
           lambda: x.scatter_reduce(0, i, x, "multiply"))
    raises(RuntimeError, "scatter(): Expected self.dtype to be equal to src.dtype",
           lambda: x.scatter_reduce(0, i, x.float(), "sum"))
    raises(RuntimeError, "scatter(): Expected dtype int32/int64 for index",
           lambda: x.scatter_reduce(0, i.float(), x, "foo"))
    raises(RuntimeError, "Index tensor must have the same number of dimensions as self tensor",
           lambda: x.scatter_reduce(0, i[0], x, "sum"))
    raises(RuntimeError, "index 5 is out of bounds for dimension 0 with size 2",
           lambda: x.scatter_reduce(0, T([[5]], device), x, "amax"))
    raises(RuntimeError, "index -1 is out of bounds for dimension 0 with size 2",
           lambda: x.scatter_reduce(0, T([[-1]], device), x, "mean", include_self=False))
    raises(RuntimeError, "Expected index [3, 3] to be no larger than self [2, 3] apart from dimension 0 and to be no "
           "larger size than src [2, 3]", lambda: x.scatter_reduce(0, T(np.zeros((3, 3), np.int64), device), x, "sum"))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
           lambda: x.scatter_reduce(2, i, x, "sum"))
    raises(TypeError, "scatter_reduce(): argument 'reduce' (position 4) must be str, not int",
           lambda: x.scatter_reduce(0, i, x, 5))
    raises(TypeError, "scatter_reduce_() got an unexpected keyword argument 'out'",
           lambda: x.scatter_reduce_(0, i, x, "sum", out=x))
    raises(NotImplementedError, "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'",
           lambda: (x > 2).scatter_reduce(0, i, x > 1, "mean"))
    f = T(np.arange(6.0).reshape(2, 3), device, "float32")
    one = T([0], device)
    raises(RuntimeError, "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got sum.",
           lambda: f.index_reduce(0, one, f[:1], "sum"))
    raises(IndexError, "index_reduce_(): Index is supposed to be a vector, but got dim: 2 with type: Long and size: "
           "[1, 1]", lambda: f.index_reduce(0, T([[0]], device), f[:1], "prod"))
    raises(RuntimeError, "index_reduce_(): Expected dtype int32/int64 for index but got: Float",
           lambda: f.index_reduce(0, one.float(), f[:1], "prod"))
    raises(RuntimeError, "index_reduce_(): self (Float) and source (Double) must have the same scalar type",
           lambda: f.index_reduce(0, one, f[:1].double(), "prod"))
    raises(RuntimeError, "index_reduce_(): Number of indices (2) should be equal to source.size(dim): (1), for dim: 0",
           lambda: f.index_reduce(0, T([0, 1], device), f[:1], "prod"))
    raises(RuntimeError, "source tensor shape must match self tensor shape, excluding the specified dimension. Got "
           "self.shape = [2, 3] source.shape = [1, 4]", lambda: f.index_reduce(0, one, T(np.ones((1, 4)), device,
                                                                                         "float32"), "prod"))
    raises(RuntimeError, "source tensor shape must match self tensor shape, excluding the specified dimension. Got "
           "self.shape = [] source.shape = [2]", lambda: T(5.0, device).index_reduce(0, T([0, 0], device),
                                                                                     T([2.0, 3.0], device), "prod"))
    raises(IndexError, "index out of range in self", lambda: f.index_reduce(0, T([2], device), f[:1], "amax"))
    raises(IndexError, "index out of range in self", lambda: f.index_reduce(0, T([-1], device), f[:1], "mean"))
    raises(NotImplementedError, "\"index_func_\" not implemented for 'Bool'",
           lambda: (f > 1).index_reduce(0, one, f[:1] > 2, "amax"))


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", SCATTER_REDUCES)
def test_gradcheck(device, reduce, include_self, rng):
    # distinct nonzero values: no ties, no zero products
    vals = rng.permutation(np.arange(1, 16)) * 0.25 * rng.choice([-1, 1], size=15)
    a = T(vals[:6].reshape(2, 3), device, "float64", requires_grad=True)
    s = T(vals[6:].reshape(3, 3), device, "float64", requires_grad=True)
    idx = T([[0, 1, 1], [1, 1, 0], [0, 1, 1]], device)
    y = a.scatter_reduce(0, idx, s, reduce, include_self=include_self)
    assert y.grad_fn.name() == "ScatterReduceBackward0"
    assert gradcheck(lambda x, src: x.scatter_reduce(0, idx, src, reduce, include_self=include_self), (a, s))
    if reduce == "sum":
        return
    index = T([1, 1, 0], device)
    assert a.index_reduce(1, index, s[:2], reduce, include_self=include_self).grad_fn.name() == "IndexReduceBackward0"
    assert gradcheck(lambda x, src: x.index_reduce(1, index, src, reduce, include_self=include_self), (a, s[:2].detach()
                                                                                                       .requires_grad_()))


def grads(fn, a, s, g, device):
    a = T(a, device, "float64", requires_grad=True)
    s = T(s, device, "float64", requires_grad=True)
    ga, gs = ctorch.autograd.grad(fn(a, s), [a, s], T(g, device, "float64"))
    return to_numpy(ga).tolist(), to_numpy(gs).tolist()


def test_gradient_ties_and_zeros(device):
    # amax ties: place 0 holds self 5 and two sources 5 (3 ties share 6 -> 2 each); place 1 is
    # src 3 (max over self 1 and src 1); place 2 only self. Without self, self still counts as a
    # tie (PyTorch's rule) but gets no gradient.
    i = T([0, 0, 1, 1], device)
    for include_self, ga in ((True, [2.0, 0.0, 3.0]), (False, [0.0, 0.0, 3.0])):
        for fn in (lambda a, s: a.scatter_reduce(0, i, s, "amax", include_self=include_self),
                   lambda a, s: a.index_reduce(0, i, s, "amax", include_self=include_self),
                   lambda a, s: (a * 1).scatter_reduce_(0, i, s, "amax", include_self=include_self)):
            assert grads(fn, [5.0, 1.0, 2.0], [5.0, 5.0, 1.0, 3.0], [6.0, 2.0, 3.0], device) == (ga, [2.0, 2.0, 0.0, 2.0])
    # amin: a tie of self and one source at place 0, of two sources at place 1
    assert grads(lambda a, s: a.scatter_reduce(0, i, s, "amin"), [1.0, 4.0, 0.0], [1.0, 3.0, 2.0, 2.0],
                 [4.0, 6.0, 1.0], device) == ([2.0, 0.0, 1.0], [2.0, 0.0, 3.0, 3.0])
    # prod with zeros: place 0 = self 0 * 3; place 1 = 2 * 0 * 5 (one zero: its gradient is the
    # product of the others); place 2 = 0 * 0 * 0 (no gradient); place 3 = 4 * 7
    i = T([0, 1, 1, 2, 2, 3], device)
    a, s, g = [0.0, 2.0, 0.0, 4.0], [3.0, 0.0, 5.0, 0.0, 0.0, 7.0], [1.0, 2.0, 3.0, 4.0]
    for include_self, expected in ((True, ([3.0, 0.0, 0.0, 28.0], [0.0, 20.0, 0.0, 0.0, 0.0, 16.0])),
                                   (False, ([0.0, 0.0, 0.0, 0.0], [1.0, 10.0, 0.0, 0.0, 0.0, 4.0]))):
        assert grads(lambda x, y: x.scatter_reduce(0, i, y, "prod", include_self=include_self), a, s, g, device) \
            == expected
        assert grads(lambda x, y: x.index_reduce(0, i, y, "prod", include_self=include_self), a, s, g, device) \
            == expected
    # mean: self counts once when included
    i = T([0, 0, 2], device)
    assert grads(lambda x, y: x.scatter_reduce(0, i, y, "mean"), [1.0, 2.0, 3.0], [1.0, 1.0, 1.0], [3.0, 1.0, 4.0],
                 device) == ([1.0, 1.0, 2.0], [1.0, 1.0, 2.0])


def test_same_bits_every_run_and_device(device, rng):
    # float32 values that round when summed: each place combines its sources in index order, so
    # repeated runs, and the CPU and CUDA, give identical bits
    a = rng.standard_normal((5, 3)).astype(np.float32)
    src = rng.standard_normal((300, 3)).astype(np.float32)
    idx = rng.integers(0, 5, size=(300, 3))
    for reduce in ("sum", "mean", "prod"):
        cpu = ctorch.tensor(a).scatter_reduce(0, ctorch.tensor(idx), ctorch.tensor(src), reduce).numpy()
        for _ in range(2):
            r = T(a, device).scatter_reduce(0, T(idx, device), T(src, device), reduce)
            assert to_numpy(r).tobytes() == cpu.tobytes()
        index = idx[:, 0]
        cpu = ctorch.tensor(a).index_reduce(0, ctorch.tensor(index), ctorch.tensor(src), reduce if reduce != "sum"
                                            else "mean").numpy()
        r = T(a, device).index_reduce(0, T(index, device), T(src, device), reduce if reduce != "sum" else "mean")
        assert to_numpy(r).tobytes() == cpu.tobytes()
