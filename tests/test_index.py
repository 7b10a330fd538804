"""Tests for the index family: Tensor.__getitem__/__setitem__, gather/scatter, index_select,
index_add/copy/fill/put, masked ops, nonzero, take, cat/stack, flip/roll/repeat/tile,
tril/triu, diag/diagonal and one_hot. NumPy (fixed seed) is the oracle; PyTorch's messages
(checked against the reference build) are the spec for errors."""
import warnings

import numpy as np
import pytest

import ctorch
from conftest import assert_close, to_numpy

DTYPES = ["float32", "float64", "int64", "bool", "float16"]
LAYOUTS = ["contiguous", "transposed", "expanded", "strided"]


def rand(shape, dtype, rng):
    """Values exactly representable in every dtype (small integers, or bools)."""
    if dtype == "bool":
        return rng.random(shape) > 0.5
    return rng.integers(-50, 50, size=shape).astype(np.float32 if dtype == "bfloat16" else dtype)


def make(arr, layout, device, dtype):
    """(tensor, numpy equivalent) for arr in the given memory layout."""
    kw = {"device": device, "dtype": getattr(ctorch, dtype)}
    if layout == "contiguous" or arr.ndim == 0:
        return ctorch.tensor(arr, **kw), arr
    if layout == "transposed":
        if arr.ndim < 2:
            return ctorch.tensor(arr, **kw), arr
        t = ctorch.tensor(np.ascontiguousarray(np.swapaxes(arr, 0, -1)), **kw).transpose(0, -1)
        return t, arr
    if layout == "expanded":  # a broadcast view: stride 0 along dim 0
        row = arr[:1]
        return ctorch.tensor(row, **kw).expand(*arr.shape), np.broadcast_to(row, arr.shape)
    if layout == "strided":  # every other row of a bigger tensor
        big = np.repeat(arr, 2, axis=0)
        return ctorch.tensor(big, **kw)[::2], big[::2]
    raise ValueError(layout)


def same_storage(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def t_(data, device="cpu", dtype=None):
    kw = {"device": device}
    if dtype is not None:
        kw["dtype"] = getattr(ctorch, dtype) if isinstance(dtype, str) else dtype
    return ctorch.tensor(np.asarray(data), **kw)


def raises(exc, message, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == message


# ---------------------------------------------------------------------------------------------
# __getitem__: basic indexing makes views
BASIC = [
    1, -1, (0, 2), (-4, -5, -6), slice(1, 3), slice(None, None, 2), (slice(None), slice(1, None, 3)),
    (Ellipsis, 1), (1, Ellipsis), (None,), (slice(None), None, 1), (Ellipsis, None), (), Ellipsis,
    (slice(-100, 100), slice(3, 1)), (0, slice(None), slice(None, None, 4)), (slice(5, None),),
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_basic_getitem_is_a_view(device, dtype, layout, rng):
    t, a = make(rand((4, 5, 6), dtype, rng), layout, device, dtype)
    for idx in BASIC:
        r = t[idx]
        assert_close(r, a[idx])
        assert same_storage(r, t), idx
        assert r is not t


def test_basic_getitem_extras(device, rng):
    a = rand((4, 5, 6), "float32", rng)
    t = t_(a, device)
    assert_close(t[t_(2)], a[2])  # a 0-d integer tensor indexes like an int, as a view
    assert same_storage(t[t_(2)], t)
    assert_close(t[t_(np.int32(-1), dtype="int32")], a[-1])
    assert_close(t[np.int64(1)], a[1])
    assert_close(t[True], a[None])  # a bool adds a dim of size 1 (True) or 0 (False)
    assert tuple(t[False].shape) == (0, 4, 5, 6)
    assert tuple(t[True, 0].shape) == (1, 5, 6)
    assert tuple(t[:, True, 1].shape) == (4, 1, 6)
    assert tuple(t[t_(True)].shape) == (1, 4, 5, 6)
    assert t[1].data_ptr() == t.data_ptr() + 30 * 4
    assert t[:, 2:].stride() == (30, 6, 1) and t[:, 2:].storage_offset() == 12
    assert t[::2, :, ::3].stride() == (60, 6, 3)


def test_view_writes_reach_the_base(device, rng):
    a = rand((4, 5), "float64", rng)
    t = t_(a, device)
    v = t[1:, ::2]
    v[0] = -1.0
    v[1, [0, 2]] = t_([-2.0, -3.0], device)
    a[1, ::2] = -1.0
    a[2, [0, 4]] = [-2.0, -3.0]
    assert_close(t, a)
    t.T[0] = 7.0
    a.T[0] = 7.0
    assert_close(t, a)


# ---------------------------------------------------------------------------------------------
# __getitem__: advanced indexing copies
def adv_cases(rng):
    i4 = rng.integers(-4, 4, size=7)
    return [
        ([1, 0, 3, -1], None),
        (np.array([[0, 3], [2, -4]]), None),
        ((slice(None), [4, 0, 2]), None),
        ((slice(None), slice(None), [5, -6]), None),
        (([0, 3], [1, 4]), None),
        (([0, 3], [1, 4], [5, 0]), None),
        ((slice(None), [0, 4], [1, 5]), None),  # adjacent after a slice: stays in place
        (([0, 3], slice(None), [1, 5]), None),  # separated: broadcast dims go first
        (([[0], [3]], [[1, 2, 4]]), None),  # broadcast together
        ((Ellipsis, [2, 3], None), None),
        ((None, [1, 2]), None),
        ((slice(1, None, 2), [4, 4, 4]), None),
        (i4, None),
        ([], None),
    ]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_advanced_getitem_copies(device, dtype, layout, rng):
    t, a = make(rand((4, 5, 6), dtype, rng), layout, device, dtype)
    for idx, _ in adv_cases(rng):
        if isinstance(idx, tuple):
            cidx = tuple(t_(np.asarray(i, dtype=np.int64), device) if isinstance(i, (list, np.ndarray)) else i
                         for i in idx)
        else:
            cidx = t_(np.asarray(idx, dtype=np.int64), device)
        np_idx = tuple(np.asarray(i, dtype=np.int64) if isinstance(i, list) else i for i in idx) \
            if isinstance(idx, tuple) else np.asarray(idx, dtype=np.int64)
        expected = a[np_idx]
        for index in (cidx, idx):  # tensors, or the Python lists / numpy arrays themselves
            r = t[index]
            assert_close(r, expected)
            assert not same_storage(r, t)
            assert r.is_contiguous()


def test_advanced_index_dtypes_and_sources(device, rng):
    a = rand((6, 3), "float32", rng)
    t = t_(a, device)
    idx = np.array([5, 0, -1, 2])
    for index in (t_(idx, device), t_(idx.astype(np.int32), device), idx, idx.astype(np.int32), list(idx)):
        assert_close(t[index], a[idx])
    assert_close(t[[0, True]], a[[0, 1]])  # a mixed list is an int64 index
    assert_close(t[[1.0]], a[[1]])  # PyTorch reads float lists as long
    # PyTorch applies ints first (a select), then the advanced indices: not NumPy's rule
    b = rand((2, 3, 4), "float32", rng)
    tb = t_(b, device)
    assert_close(tb[0, :, [1, 2]], b[0][:, [1, 2]])
    assert_close(tb[[1, 0], 0, [3, 1]], b[:, 0][[1, 0], [3, 1]])
    # more advanced indices than one kernel call takes (folded into offsets)
    c = np.arange(2 * 3 * 2 * 2 * 3, dtype=np.float64).reshape(2, 3, 2, 2, 3)
    tc = t_(c, device)
    i = ([1, 0], [2, 1], [0, 1], [1, 1], [2, 0])
    assert_close(tc[i], c[i])
    assert_close(tc[[1, 0], :, [0, 1], [1, 1], [2, 0]], c[[1, 0], :, [0, 1], [1, 1], [2, 0]])
    j = (slice(None), [[0], [2]], [1, 0], [0, 1], [2, 2])
    assert_close(tc[j], c[j])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_mask_getitem(device, dtype, layout, rng):
    t, a = make(rand((4, 5, 6), dtype, rng), layout, device, dtype)
    full = rng.random((4, 5, 6)) > 0.5
    lead = rng.random(4) > 0.5
    lead2 = rng.random((4, 5)) > 0.5
    mid = rng.random(5) > 0.5
    last2 = rng.random((5, 6)) > 0.3
    for idx, cidx in [
        (full, t_(full, device)),
        (lead, t_(lead, device)),
        (lead2, t_(lead2, device)),
        ((slice(None), mid), (slice(None), t_(mid, device))),
        ((slice(None), last2), (slice(None), t_(last2, device))),
        ((Ellipsis, mid[:1].repeat(6)), (Ellipsis, t_(mid[:1].repeat(6), device))),
        (lead, list(lead)),
        (lead, lead),  # numpy bool array
        ((lead2, [1]), (t_(lead2, device), [1])),  # mask plus an int index, broadcast
    ]:
        r = t[cidx]
        assert_close(r, a[idx])
        assert not same_storage(r, t)


def test_mask_edge_cases(device, rng):
    a = rand((3, 4), "float32", rng)
    t = t_(a, device)
    none = np.zeros((3, 4), bool)
    assert tuple(t[t_(none, device)].shape) == (0,)
    assert_close(t[t_(~none, device)], a[~none])
    assert_close(t_(5.0, device)[t_(True, device)], np.array([5.0]))
    assert tuple(t_(5.0, device)[t_(False, device)].shape) == (0,)
    e = t_(np.zeros((0, 3)), device)
    assert tuple(e[t_(np.zeros((0, 3), bool), device)].shape) == (0,)
    assert tuple(e[:, [0, 2]].shape) == (0, 2)
    with pytest.warns(UserWarning, match="uint8"):
        assert_close(t[t_([1, 0, 1], device, "uint8")], a[[0, 2]])


def test_large_index_and_mask(device):
    rng = np.random.default_rng(1)
    n = 1_000_003
    a = rng.standard_normal(n).astype(np.float32)
    m = rng.random(n) > 0.5
    i = rng.integers(-n, n, n)
    t, tm, ti = t_(a, device), t_(m, device), t_(i, device)
    assert_close(t[tm], a[m])
    assert_close(t[ti], a[i])
    b = a[:1_000_000].reshape(1000, 1000).copy()
    tb = t_(b, device)
    mb = rng.random(b.shape) > 0.3
    assert_close(tb.T[t_(mb, device)], b.T[mb])
    assert_close(tb[t_(mb[:, 0], device)], b[mb[:, 0]])
    t[tm] = 0.0
    a[m] = 0.0
    assert_close(t, a)
    t[ti] = t_(np.arange(n, dtype=np.float64), device).float()
    written = to_numpy(t[ti]).astype(np.int64)  # duplicates: one of the writes to each place wins
    assert ((i[written] % n) == (i % n)).all()
    perm = rng.permutation(n)
    t[t_(perm, device)] = t_(a, device)
    u = np.empty_like(a)
    u[perm] = a
    assert_close(t, u)


# ---------------------------------------------------------------------------------------------
# __setitem__
@pytest.mark.parametrize("dtype", DTYPES)
def test_setitem_basic(device, dtype, rng):
    a = rand((4, 5, 6), dtype, rng)
    t = t_(a, device, dtype)
    v = rand((5, 6), dtype, rng)
    cases = [
        (1, v), ((slice(None), 1), v[0]), ((Ellipsis, 2), rand((4, 5), dtype, rng)), ((slice(1, 3), None, 0), v[1]),
        ((slice(None, None, 2),), v), (Ellipsis, v[2]), ((0, 0, 0), v[0, 0]),
    ]
    for idx, val in cases:
        t[idx] = t_(val, device, dtype)
        a[idx] = val
        assert_close(t, a)
    t[2] = 1  # Python scalars take the tensor's dtype
    a[2] = 1
    t[0] = t_(np.ones((1, 5, 6)), device, dtype)  # leading size-1 dims of the value are dropped
    a[0] = 1
    t[..., 1] = t_(np.zeros((1, 1, 4, 5), np.float64), device)  # cast to the tensor's dtype
    a[..., 1] = 0
    assert_close(t, a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_setitem_advanced(device, dtype, rng):
    a = rand((4, 5, 6), dtype, rng)
    t = t_(a, device, dtype)
    mask = rng.random((4, 5, 6)) > 0.5
    t[t_(mask, device)] = 0
    a[mask] = 0
    assert_close(t, a)
    m2 = rng.random((4, 5)) > 0.5
    vals = rand((int(m2.sum()), 6), dtype, rng)
    t[t_(m2, device)] = t_(vals, device, dtype)
    a[m2] = vals
    assert_close(t, a)
    t[:, t_(m2[0], device)] = t_(rand(6, dtype, rng)[:1], device, dtype)[0]  # 0-d value: a masked fill
    a[:, m2[0]] = t.cpu().numpy()[:, m2[0]][0, 0] if t.dtype != ctorch.bfloat16 else 0
    assert_close(t, a)
    idx = np.array([3, 0, -2])  # distinct rows: with repeats, which write wins is unspecified on CUDA (PyTorch too)
    v = rand((3, 5, 6), dtype, rng)
    t[t_(idx, device)] = t_(v, device, dtype)
    a[idx] = v
    assert_close(t, a)
    t[[0, 2], :, [1, 5]] = t_(rand(5, dtype, rng), device, dtype)  # broadcast to the (2, 5) result
    t[[1, 1], [2, 3]] = 1
    a2 = to_numpy(t)
    assert (a2[1, [2, 3]] == 1).all()
    t[[0, 1], 0] = t_(rand((1, 6), dtype, rng), device, dtype)
    t[True] = t_(rand((5, 6), dtype, rng), device, dtype)
    assert_close(t[0], to_numpy(t)[1] * 0 + to_numpy(t)[0])


def test_setitem_casts_and_scalars(device):
    x = t_(np.arange(6), device)
    x[x.cpu().numpy() > 2] = 2.7  # Python scalar cast to int64
    assert x.cpu().numpy().tolist() == [0, 1, 2, 2, 2, 2]
    x[t_([True] * 6, device)] = t_(9.9, device)  # 0-d tensor through the masked fill: cast
    assert x.cpu().numpy().tolist() == [9] * 6
    b = t_([True, False], device)
    b[1] = 2.7
    assert b.cpu().numpy().tolist() == [True, True]
    f = t_(np.zeros(4, np.float16), device)
    f[[1, 3]] = 1.5
    assert_close(f, np.array([0, 1.5, 0, 1.5]))
    h = t_(np.zeros((2, 3), np.float32), device)
    h[:, 1] = t_([1, 2], device)  # int64 -> float32 through a basic-index copy
    assert_close(h, np.array([[0, 1, 0], [0, 2, 0]]))


def test_scalar_values_must_fit_the_destination(device):
    """PyTorch's checked Scalar conversion: a Python number that an integer tensor cannot hold
    (NaN, inf, beyond the range) raises on every fill-like path instead of storing garbage."""
    msg = r"^value cannot be converted to type %s without overflow$"
    x = t_(np.zeros(3, np.int64), device)
    u = t_(np.zeros(3, np.uint8), device)
    mask = t_([True, False, True], device)
    idx = t_([0, 2], device)
    for fn in [lambda: x.__setitem__(0, float("nan")), lambda: x.__setitem__(slice(None), float("inf")),
               lambda: x.__setitem__(idx, float("nan")), lambda: x.__setitem__(mask, 1e20),
               lambda: x.masked_fill(mask, float("nan")), lambda: x.index_fill(0, idx, float("inf")),
               lambda: x.scatter(0, idx, float("nan"))]:
        with pytest.raises(RuntimeError, match=msg % "int64_t"):
            fn()
    for fn in [lambda: u.__setitem__(1, 300), lambda: u.__setitem__(idx, -1.5),
               lambda: u.masked_fill_(mask, 256), lambda: u.index_fill_(0, idx, -0.5),
               lambda: u.scatter_(0, idx, 1000)]:
        with pytest.raises(RuntimeError, match=msg % "uint8_t"):
            fn()
    assert x.tolist() == [0, 0, 0] and u.tolist() == [0, 0, 0]  # nothing was written
    with pytest.raises(IndexError, match="Dimension out of range"):
        u.index_fill(1, idx, 300)  # the dim is checked before the value
    u[0] = -1  # a negative int wraps, a float truncating into range is fine
    u[idx] = 255.5
    assert u.tolist() == [255, 0, 255]
    h = t_(np.zeros(2, np.float16), device)
    h[0] = 1e20  # a basic-index store rounds to inf ...
    assert h.tolist() == [float("inf"), 0.0]
    with pytest.raises(RuntimeError, match=msg % "c10::Half"):
        h[t_([1], device)] = 1e20  # ... an index_put_ checks
    # 0-d tensor values are cast like a copy, unchecked
    assert x.masked_fill(mask, t_(2.5, device)).tolist() == [2, 0, 2]


def test_setitem_version_counter(device):
    if not hasattr(ctorch.Tensor, "_version"):
        pytest.skip("Tensor._version not exposed yet")
    x = t_(np.arange(6.0), device)
    for idx, v in [(1, 3.0), ([1, 2], 3.0), (t_([True] * 6, device), 0.0), (slice(None), t_(np.ones(6), device))]:
        before = x._version
        x[idx] = v
        assert x._version == before + 1


# ---------------------------------------------------------------------------------------------
# indexing errors
def test_getitem_errors(device):
    x = t_(np.arange(24).reshape(2, 3, 4), device)
    raises(IndexError, "index 5 is out of bounds for dimension 0 with size 2", lambda: x[5])
    raises(IndexError, "index 5 is out of bounds for dimension 1 with size 3", lambda: x[0, 5])
    raises(IndexError, "index -5 is out of bounds for dimension 2 with size 4", lambda: x[:, :, -5])
    raises(IndexError, "index 5 is out of bounds for dimension 2 with size 3", lambda: x[None, 0, 5])
    raises(IndexError, "index 10 is out of bounds for dimension 0 with size 2", lambda: x[[10]])
    raises(IndexError, "index 10 is out of bounds for dimension 2 with size 4", lambda: x[[0], [0], [10]])
    raises(IndexError, "index -4 is out of bounds for dimension 0 with size 3", lambda: x[:, [-4]])
    raises(IndexError, "index 1000000000000 is out of bounds for dimension 0 with size 2", lambda: x[[10**12]])
    raises(IndexError, "index is out of bounds for dimension with size 0", lambda: t_(np.zeros((0, 3)), device)[[0]])
    raises(ValueError, "step must be greater than zero", lambda: x[::-1])
    raises(ValueError, "slice step cannot be zero", lambda: x[::0])
    raises(IndexError, "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor "
                       "[2, 3, 4] at index 0", lambda: x[t_([True, False, True], device)])
    raises(IndexError, "The shape of the mask [4] at index 0 does not match the shape of the indexed tensor "
                       "[2, 3, 4] at index 1", lambda: x[:, t_([True, False, True, True], device)])
    raises(IndexError, "The shape of the mask [3, 3] at index 1 does not match the shape of the indexed tensor "
                       "[2, 3, 4] at index 2", lambda: x[:, t_(np.ones((3, 3), bool), device)])
    raises(IndexError, "too many indices for tensor of dimension 3", lambda: x[0, 0, 0, 0])
    raises(IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                       "indices (got float)", lambda: x[1.5])
    raises(IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                       "indices (got dict)", lambda: x[{1: 2}])
    raises(IndexError, "tensors used as indices must be long, int, byte or bool tensors", lambda: x[t_([1.5], device)])
    raises(IndexError, "tensors used as indices must be long, int, byte or bool tensors",
           lambda: x[t_([1], device, "int16")])
    raises(IndexError, "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]",
           lambda: x[[0, 1], [0, 1, 2]])
    raises(IndexError, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
                       "to convert a 0-dim tensor to a number", lambda: t_(5, device)[0])


def test_setitem_errors(device):
    x = t_(np.zeros((2, 3, 4), np.float32), device)
    m = t_(np.arange(24).reshape(2, 3, 4) % 3 == 0, device)
    tensor_type = "torch.cuda.FloatTensor" if device == "cuda" else "torch.FloatTensor"
    raises(RuntimeError, f"expand({tensor_type}{{[2, 3, 4]}}, size=[3, 4]): the number of sizes provided (2) must be "
                         "greater or equal to the number of dimensions in the tensor (3)",
           lambda: x.__setitem__(0, t_(np.ones((2, 3, 4), np.float32), device)))
    raises(RuntimeError, "The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
                         "dimension 1.  Target sizes: [3, 4].  Tensor sizes: [4, 3]",
           lambda: x.__setitem__(0, t_(np.ones((4, 3), np.float32), device)))
    raises(RuntimeError, "shape mismatch: value tensor of shape [3, 3, 4] cannot be broadcast to indexing result of "
                         "shape [2, 3, 4]", lambda: x.__setitem__([0, 1], t_(np.ones((3, 3, 4), np.float32), device)))
    raises(RuntimeError, "shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape "
                         "[8]", lambda: x.__setitem__(m, t_([1.0, 2.0], device)))
    raises(RuntimeError, "Index put requires the source and destination dtypes match, got Float for the destination "
                         "and Double for the source.", lambda: x.__setitem__([0, 1], t_(np.ones((3, 4)), device)))
    raises(TypeError, f"can't assign a list to a {tensor_type}", lambda: x.__setitem__(0, [1, 2]))
    raises(TypeError, f"can't assign a numpy.ndarray to a {tensor_type}", lambda: x.__setitem__(0, np.ones(2)))
    raises(TypeError, f"can't assign a NoneType to a {tensor_type}", lambda: x.__setitem__(0, None))
    raises(TypeError, f"can't assign a str to a {tensor_type}", lambda: x.__setitem__(0, "a"))
    raises(IndexError, "index 5 is out of bounds for dimension 0 with size 2", lambda: x.__setitem__([5], 1))
    raises(IndexError, "index 7 is out of bounds for dimension 0 with size 3", lambda: x.__setitem__((0, [7]), 1))
    raises(IndexError, "index 7 is out of bounds for dimension 1 with size 4",
           lambda: x.__setitem__((0, slice(None), [7]), 1))
    raises(IndexError, "index 7 is out of bounds for dimension 1 with size 4",  # two indices: their position
           lambda: x.__setitem__(([0], slice(None), [7]), 1))
    raises(IndexError, "index 7 is out of bounds for dimension 0 with size 4",  # a tensor value: the position
           lambda: x.__setitem__((0, slice(None), [7]), ctorch.tensor(1.0, device=device)))
    raises(IndexError, "index 7 is out of bounds for dimension 2 with size 3",
           lambda: x.__setitem__((None, slice(None), [7]), 1))
    raises(IndexError, "index 5 is out of bounds for dimension 0 with size 2", lambda: x.__setitem__(5, 1))
    assert not to_numpy(x).any()  # failed writes left nothing behind


# ---------------------------------------------------------------------------------------------
# gather / scatter / index_select / index_* / take
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_scatter(device, dtype, layout, rng):
    t, a = make(rand((4, 5), dtype, rng), layout, device, dtype)
    for dim in (0, 1, -1):
        n = a.shape[dim]
        idx = rng.integers(0, n, size=(3, 4) if dim == 0 else (4, 3))
        part = a[:, : idx.shape[1]] if dim == 0 else a[: idx.shape[0]]  # index may be smaller off dim
        for idt in ("int64", "int32"):
            ti = t_(idx, device, idt)
            assert_close(ctorch.gather(t, dim, ti), np.take_along_axis(part, idx, dim))
            assert_close(t.gather(dim, index=ti), np.take_along_axis(part, idx, dim))
        # scatter targets without duplicates along dim (so the result is defined)
        if dim == 0:
            uidx = np.stack([rng.permutation(4)[:3] for _ in range(5)], 1)
        else:
            uidx = np.stack([rng.permutation(5)[:3] for _ in range(4)], 0)
        src = rand(uidx.shape, dtype, rng)
        expected = np.array(a)
        np.put_along_axis(expected, uidx, src, dim)
        tu = t_(uidx, device)
        assert_close(ctorch.scatter(t, dim, tu, t_(src, device, dtype)), expected)
        expected = np.array(a)
        np.put_along_axis(expected, uidx, np.array(1).astype(a.dtype), dim)
        assert_close(t.scatter(dim, tu, 1), expected)
        if dtype != "bool":
            expected = np.array(a).astype(np.float64)
            coords = list(np.indices(idx.shape))
            coords[dim % 2] = idx
            vals = rand(idx.shape, dtype, rng)
            np.add.at(expected, tuple(coords), vals.astype(np.float64))  # duplicates accumulate
            assert_close(ctorch.scatter_add(t, dim, t_(idx, device), t_(vals, device, dtype)), expected)
    c = t.clone() if layout != "expanded" else ctorch.tensor(a, device=device, dtype=getattr(ctorch, dtype))
    r = c.scatter_(0, t_([[1, 0]], device), t_(rand((1, 2), dtype, rng), device, dtype))
    assert r is c


def test_scatter_reduce_and_edges(device):
    x = t_(np.arange(6).reshape(2, 3), device)
    assert ctorch.scatter(x, 1, t_([[0, 0]], device), 9, reduce="add").cpu().numpy().tolist() == [[18, 1, 2], [3, 4, 5]]
    r = ctorch.scatter(x, 1, t_([[1, 1]], device), t_([[2, 3]], device), reduce="multiply")
    assert r.cpu().numpy().tolist() == [[0, 6, 2], [3, 4, 5]]
    assert ctorch.scatter_add(t_([[False, True]], device), 1, t_([[0, 0]], device),
                              t_([[True, False]], device)).cpu().numpy().tolist() == [[True, True]]
    assert ctorch.gather(t_(5, device), 0, t_(0, device)).cpu().numpy().tolist() == 5
    assert ctorch.gather(t_(5, device), 0, t_([0, 0], device)).cpu().numpy().tolist() == [5, 5]
    assert tuple(ctorch.gather(x, 1, t_(np.zeros((0, 3), np.int64), device)).shape) == (0, 3)
    h = t_(np.zeros((2, 3), np.float16), device)
    h.scatter_add_(0, t_([[1, 1, 1]], device), t_([[0.5, 1.5, 2.5]], device, "float16"))
    assert_close(h, np.array([[0, 0, 0], [0.5, 1.5, 2.5]]))
    assert_close(ctorch.scatter(x, 1, t_([[0]], device), value=3), np.array([[3, 1, 2], [3, 4, 5]]))


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_index_select_add_copy_fill(device, dtype, layout, rng):
    t, a = make(rand((4, 5), dtype, rng), layout, device, dtype)
    for dim in (0, 1):
        n = a.shape[dim]
        idx = rng.integers(0, n, size=6)
        for idt in ("int64", "int32"):
            assert_close(ctorch.index_select(t, dim, t_(idx, device, idt)), np.take(a, idx, axis=dim))
        assert_close(t.index_select(dim, t_(idx[0], device)), np.take(a, idx[:1], axis=dim))
        uidx = rng.permutation(n)[:3]
        src_shape = (3, 5) if dim == 0 else (4, 3)
        src = rand(src_shape, dtype, rng)
        expected = np.array(a)
        if dim == 0:
            expected[uidx] = src
        else:
            expected[:, uidx] = src
        assert_close(ctorch.index_copy(t, dim, t_(uidx, device), t_(src, device, dtype)), expected)
        expected = np.array(a)
        if dim == 0:
            expected[uidx] = True if dtype == "bool" else -3
        else:
            expected[:, uidx] = True if dtype == "bool" else -3
        assert_close(t.index_fill(dim, t_(uidx - n, device), True if dtype == "bool" else -3), expected)
        if dtype != "bool":
            expected = np.array(a).astype(np.float64)
            dup = np.array([0, 0, n - 1])
            if dim == 0:
                np.add.at(expected, dup, 2 * src.astype(np.float64))
            else:
                np.add.at(expected.T, dup, 2 * src.T.astype(np.float64))
            assert_close(ctorch.index_add(t, dim, t_(dup, device), t_(src, device, dtype), alpha=2), expected)


def test_index_put_and_take(device, rng):
    x = t_(np.arange(6).reshape(2, 3), device)
    assert x.clone().index_put_((t_([0, 1], device),), t_(9, device), accumulate=True).cpu().numpy().tolist() == \
        [[9, 10, 11], [12, 13, 14]]
    r = x.clone().index_put_((t_([0, 0], device), t_([1, 1], device)), t_(9, device), accumulate=True)
    assert r.cpu().numpy().tolist() == [[0, 19, 2], [3, 4, 5]]
    assert ctorch.index_put(x, (t_([0, 0], device),), t_(9, device)).cpu().numpy().tolist() == [[9, 9, 9], [3, 4, 5]]
    a = rand((3, 4), "float32", rng)
    t = t_(a, device)
    i = np.array([[0, 11], [-1, 5]])
    assert_close(ctorch.take(t, t_(i, device)), np.take(a, i))
    assert_close(t.T.take(t_([1, 2, 3], device)), np.take(a.T, [1, 2, 3]))


def test_dim_op_errors(device):
    x = t_(np.arange(6).reshape(2, 3), device)
    i = lambda v: t_(np.array(v, dtype=np.int64), device)  # noqa: E731
    raises(RuntimeError, "gather(): Expected dtype int32/int64 for index", lambda: ctorch.gather(x, 1, t_([[0.0]])))
    raises(RuntimeError, "index 5 is out of bounds for dimension 1 with size 3", lambda: ctorch.gather(x, 1, i([[5]])))
    raises(RuntimeError, "index -1 is out of bounds for dimension 1 with size 3", lambda: x.gather(1, i([[-1]])))
    raises(RuntimeError, "Size does not match at dimension 0 expected index [3, 2] to be no larger than self [2, 3] "
                         "apart from dimension 1", lambda: ctorch.gather(x, 1, i([[0] * 2] * 3)))
    raises(RuntimeError, "Index tensor must have the same number of dimensions as input tensor",
           lambda: ctorch.gather(x, 1, i([0])))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
           lambda: ctorch.gather(x, 2, i([[0]])))
    raises(RuntimeError, "scatter(): Expected self.dtype to be equal to src.dtype",
           lambda: ctorch.scatter(x, 1, i([[0]]), t_([[9.0]], device)))
    raises(RuntimeError, "scatter(): Expected dtype int32/int64 for index",
           lambda: ctorch.scatter(x, 1, t_([[0.0]]), 1))
    raises(RuntimeError, "index 5 is out of bounds for dimension 1 with size 3",
           lambda: ctorch.scatter(x, 1, i([[5]]), 9))
    raises(RuntimeError, "Expected index [1, 2] to be no larger than self [2, 3] apart from dimension 1 and to be no "
                         "larger size than src [1, 1]", lambda: ctorch.scatter(x, 1, i([[0, 1]]), i([[9]])))
    raises(RuntimeError, "Expected index [3, 3] to be no larger than self [2, 3] apart from dimension 1",
           lambda: ctorch.scatter(x, 1, i([[0] * 3] * 3), 1))
    raises(RuntimeError, "reduce argument must be either add or multiply.",
           lambda: ctorch.scatter(x, 1, i([[0]]), 9, reduce="mean"))
    raises(TypeError, "scatter_add(): argument 'src' (position 4) must be Tensor, not int",
           lambda: ctorch.scatter_add(x, 1, i([[0]]), 9))
    raises(IndexError, "index_select(): Index is supposed to be a vector",
           lambda: ctorch.index_select(x, 1, i([[0, 2]])))
    raises(RuntimeError, "index_select(): Expected dtype int32 or int64 for index",
           lambda: ctorch.index_select(x, 1, t_([1.0])))
    raises(IndexError, "index out of range in self", lambda: ctorch.index_select(x, 1, i([5])))
    raises(IndexError, "index out of range in self", lambda: ctorch.index_select(x, 1, i([-1])))  # no wrapping
    raises(RuntimeError, "index_select(): self indexing axis dim should be positive",
           lambda: ctorch.index_select(t_(np.zeros((0, 2)), device), 0, i([0])))
    raises(IndexError, "index out of range in self", lambda: ctorch.index_select(t_(5, device), 0, i([1])))
    raises(RuntimeError, "index_add_(): self (Long) and source (Float) must have the same scalar type",
           lambda: x.clone().index_add_(1, i([0, 0]), t_(np.ones((2, 2), np.float32), device)))
    raises(RuntimeError, "index_add_(): Number of indices (2) should be equal to source.size(dim): (3), for dim: 1",
           lambda: x.clone().index_add_(1, i([0, 0]), i(np.ones((2, 3)))))
    raises(RuntimeError, "index 5 is out of bounds for dimension 1 with size 3",
           lambda: x.clone().index_add_(1, i([0, 5]), i(np.ones((2, 2)))))
    raises(IndexError, "index_copy_(): index 5 is out of bounds for dimension 1 with size 3",
           lambda: x.clone().index_copy_(1, i([0, 5]), i(np.ones((2, 2)))))
    raises(RuntimeError, "index_copy_(): Expected a long tensor for index, but got Int",
           lambda: x.clone().index_copy_(1, t_([0, 2], device, "int32"), i(np.ones((2, 2)))))
    raises(IndexError, "index_fill_(): Expected dtype int64 for index.", lambda: x.clone().index_fill_(1, t_([0.0]), 1))
    raises(RuntimeError, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).",
           lambda: x.clone().index_fill_(1, i([0, 2]), i([1])))
    raises(IndexError, "out of range: tried to access index 6 on a tensor of 6 elements.",
           lambda: ctorch.take(x, i([6])))
    raises(RuntimeError, "take(): Expected a long tensor for index, but got Int",
           lambda: ctorch.take(x, t_([1], device, "int32")))
    assert x.cpu().numpy().tolist() == [[0, 1, 2], [3, 4, 5]]


# ---------------------------------------------------------------------------------------------
# masks and nonzero
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_fill_select_nonzero(device, dtype, layout, rng):
    t, a = make(rand((4, 5), dtype, rng), layout, device, dtype)
    m = rng.random((4, 5)) > 0.5
    row = rng.random(5) > 0.5
    fill = True if dtype == "bool" else 7
    for mask in (m, row):
        expected = np.array(a)
        expected[np.broadcast_to(mask, a.shape)] = fill
        assert_close(ctorch.masked_fill(t, t_(mask, device), fill), expected)
        assert_close(t.masked_fill(t_(mask, device), t_(fill, device)), expected)
        assert_close(ctorch.masked_select(t, t_(mask, device)), a[np.broadcast_to(mask, a.shape)])
    c = ctorch.tensor(a, device=device, dtype=getattr(ctorch, dtype))
    assert c.masked_fill_(t_(row, device), fill) is c
    assert_close(ctorch.masked_fill(t_(a[0], device, dtype), t_(m, device), fill),
                 np.where(m, fill, np.broadcast_to(a[0], m.shape)).astype(a.dtype))  # out-of-place broadcasts
    assert_close(ctorch.nonzero(t), np.argwhere(a))
    assert_close(t.argwhere(), np.argwhere(a))
    for got, want in zip(ctorch.nonzero(t, as_tuple=True), np.nonzero(a)):
        assert_close(got, want)


def test_nonzero_edges(device):
    assert_close(ctorch.nonzero(t_([0.0, np.nan, -0.0, 1e-40], device)), np.array([[1], [3]]))
    assert tuple(ctorch.nonzero(t_(5, device)).shape) == (1, 0)
    assert tuple(ctorch.nonzero(t_(0, device)).shape) == (0, 0)
    assert [r.cpu().numpy().tolist() for r in ctorch.nonzero(t_(5, device), as_tuple=True)] == [[0]]
    assert tuple(ctorch.nonzero(t_(np.zeros((0, 3)), device)).shape) == (0, 2)
    b = np.random.default_rng(3).random((70, 50, 30)) > 0.9  # big enough to split across threads
    assert_close(ctorch.nonzero(t_(b, device)), np.argwhere(b))
    assert_close(ctorch.masked_select(t_(3.0, device), t_(True, device)), np.array([3.0]))


def test_mask_errors(device):
    f = t_(np.arange(6.0, dtype=np.float32).reshape(2, 3), device)
    raises(RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype long int",
           lambda: ctorch.masked_fill(f, t_([1, 0, 1], device), 5))
    raises(RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype c10::Half",
           lambda: ctorch.masked_fill(f, t_([1, 0, 1], device, "float16"), 5))
    raises(RuntimeError, "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1",
           lambda: ctorch.masked_fill(f, t_([True, False], device), 5))
    raises(RuntimeError, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).",
           lambda: ctorch.masked_fill(f, t_([True, False, True], device), t_([5.0], device)))
    raises(RuntimeError, "output with shape [3] doesn't match the broadcast shape [2, 3]",
           lambda: f[0].masked_fill_(t_(np.ones((2, 3), bool), device), 5.5))
    raises(RuntimeError, "masked_select: expected BoolTensor for mask",
           lambda: ctorch.masked_select(f, t_([1, 0, 1], device)))


# ---------------------------------------------------------------------------------------------
# cat / stack
@pytest.mark.parametrize("dtype", DTYPES)
def test_cat_stack(device, dtype, rng):
    a, b = rand((2, 3), dtype, rng), rand((4, 3), dtype, rng)
    ta, tb = t_(a, device, dtype), t_(b, device, dtype)
    assert_close(ctorch.cat([ta, tb]), np.concatenate([a, b]))
    assert_close(ctorch.cat((ta.T, tb.T), dim=-1), np.concatenate([a.T, b.T], -1))
    assert_close(ctorch.concat([ta, ta], 1), np.concatenate([a, a], 1))
    assert_close(ctorch.concatenate([ta, ta], axis=1), np.concatenate([a, a], 1))
    assert_close(ctorch.stack([ta, ta]), np.stack([a, a]))
    assert_close(ctorch.stack([ta, ta.T.T], dim=2), np.stack([a, a], 2))
    assert_close(ctorch.stack([ta, ta], -1), np.stack([a, a], -1))
    assert_close(ctorch.hstack([ta, ta]), np.hstack([a, a]))
    assert_close(ctorch.vstack([ta, tb]), np.vstack([a, b]))
    assert_close(ctorch.dstack([ta, ta]), np.dstack([a, a]))
    assert_close(ctorch.vstack([ta[0], ta[1]]), np.vstack([a[0], a[1]]))
    assert_close(ctorch.hstack([ta[0], tb[1]]), np.hstack([a[0], b[1]]))
    assert_close(ctorch.stack([ta[0, 0], ta[1, 1]]), np.stack([a[0, 0], a[1, 1]]))
    e = ta.expand(3, 2, 3)
    assert_close(ctorch.cat([e, e], 2), np.concatenate([np.broadcast_to(a, (3, 2, 3))] * 2, 2))


def test_cat_promotion_and_legacy_empty(device):
    i, f = t_(np.arange(6).reshape(2, 3), device), t_(np.ones((2, 3), np.float32), device)
    assert ctorch.cat([i, f]).dtype == ctorch.float32
    r = ctorch.cat([i, t_(np.zeros(0, np.float32), device)])  # a (0,) tensor is skipped but promotes
    assert r.dtype == ctorch.float32 and tuple(r.shape) == (2, 3)
    assert ctorch.cat([t_(np.zeros(0, np.int64), device), t_([True], device)]).dtype == ctorch.int64
    assert tuple(ctorch.cat([t_(np.zeros(0), device)] * 2).shape) == (0,)
    assert tuple(ctorch.cat([t_(np.zeros((0, 3)), device), f]).shape) == (2, 3)
    h = ctorch.cat([t_(np.zeros(0, np.float16), device), t_(np.ones((2, 2), np.int32), device)])
    assert h.dtype == ctorch.float16
    assert ctorch.stack([t_(1, device), ctorch.tensor(2.0, device=device)]).dtype == ctorch.float32
    assert_close(ctorch.cat([t_([True], device), t_([False, True], device)]), np.array([True, False, True]))


def test_cat_stack_errors(device):
    x = t_(np.zeros((2, 3)), device)
    raises(RuntimeError, "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for "
                         "tensor number 1 in the list.", lambda: ctorch.cat([x, t_(np.zeros((2, 2)), device)]))
    raises(RuntimeError, "Tensors must have same number of dimensions: got 2 and 1",
           lambda: ctorch.cat([x, t_(np.zeros(3), device)]))
    raises(ValueError, "torch.cat(): expected a non-empty list of Tensors", lambda: ctorch.cat([]))
    raises(RuntimeError, "zero-dimensional tensor (at position 0) cannot be concatenated",
           lambda: ctorch.cat([t_(1, device), t_(2, device)]))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
           lambda: ctorch.cat([x], 2))
    raises(TypeError, "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor",
           lambda: ctorch.cat(x))
    raises(TypeError, "expected Tensor as element 1 in argument 0, but got int", lambda: ctorch.cat([x, 1]))
    raises(RuntimeError, "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [1, 3] at entry 1",
           lambda: ctorch.stack([x, x[:1]]))
    raises(RuntimeError, "stack expects a non-empty TensorList", lambda: ctorch.stack([]))
    raises(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 3)",
           lambda: ctorch.stack([x, x], 3))


# ---------------------------------------------------------------------------------------------
# flip / roll / repeat / tile / tril / triu / diag / one_hot
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_flip_roll_repeat_tile(device, dtype, layout, rng):
    t, a = make(rand((3, 4, 5), dtype, rng), layout, device, dtype)
    for dims in ([0], [2], [0, 2], (0, 1, 2), [-1], []):
        r = ctorch.flip(t, dims)
        assert_close(r, np.flip(a, tuple(dims)) if dims else a)
        assert not same_storage(r, t)
    assert_close(t.flip(0, 1), np.flip(a, (0, 1)))
    assert_close(ctorch.fliplr(t), np.fliplr(a))
    assert_close(t.flipud(), np.flipud(a))
    for shifts, dims in ((1, 0), (-2, 1), ((1, 7), (0, 2)), (3, None), ((2, -1), (-1, 0)), (13, 2)):
        assert_close(ctorch.roll(t, shifts, dims), np.roll(a, shifts, dims))
    assert_close(t.repeat(2, 1, 3), np.tile(a, (2, 1, 3)))
    assert_close(t.repeat((2, 1, 1, 2)), np.tile(a, (2, 1, 1, 2)))
    assert_close(t.repeat(1, 0, 1), np.tile(a, (1, 0, 1)))
    assert_close(t.tile(2), np.tile(a, 2))
    assert_close(ctorch.tile(t, (2, 1, 1, 1)), np.tile(a, (2, 1, 1, 1)))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tril_triu_diag(device, dtype, layout, rng):
    t, a = make(rand((3, 4, 5), dtype, rng), layout, device, dtype)
    for k in (0, 1, -1, 3, -4, 10**15, -(10**15)):
        assert_close(ctorch.tril(t, k), np.tril(a, k))
        assert_close(t.triu(diagonal=k), np.triu(a, k))
    m = t[0]
    for k in (0, 2, -1, 7):
        assert_close(ctorch.diag(m, k), np.diag(a[0], k))
        d = ctorch.diagonal(t, k, 1, 2)
        assert_close(d, np.diagonal(a, k, 1, 2))
        assert same_storage(d, t)
    assert_close(t.diagonal(offset=-1, dim1=-1, dim2=0), np.diagonal(a, -1, -1, 0))
    v = t[0, 0]
    for k in (0, 1, -2):
        assert_close(ctorch.diag(v, k), np.diag(a[0, 0], k))
    c = ctorch.tensor(a, device=device, dtype=getattr(ctorch, dtype))
    assert c.tril_(-1) is c
    assert_close(c, np.tril(a, -1))
    c.triu_(1)
    assert_close(c, np.zeros_like(a))


def test_one_hot(device):
    assert_close(ctorch.one_hot(t_([0, 2, 1], device)), np.eye(3, dtype=np.int64)[[0, 2, 1]])
    r = ctorch.one_hot(t_([[0, 2], [1, 4]], device).T, num_classes=6)
    assert r.dtype == ctorch.int64
    assert_close(r, np.eye(6, dtype=np.int64)[np.array([[0, 2], [1, 4]]).T])
    assert tuple(ctorch.one_hot(t_(np.zeros(0, np.int64), device), 3).shape) == (0, 3)
    assert_close(ctorch.one_hot(t_(1, device), 3), np.array([0, 1, 0]))
    raises(RuntimeError, "Class values must be smaller than num_classes.",
           lambda: ctorch.one_hot(t_([0, 2, 1], device), 2))
    raises(RuntimeError, "Class values must be non-negative.", lambda: ctorch.one_hot(t_([0, -1], device)))
    raises(RuntimeError, "one_hot is only applicable to index tensor of type LongTensor.",
           lambda: ctorch.one_hot(t_([0], device, "int32")))
    raises(RuntimeError, "Can not infer total number of classes from empty tensor.",
           lambda: ctorch.one_hot(t_(np.zeros(0, np.int64), device)))


def test_rearrange_errors(device):
    x = t_(np.arange(6).reshape(2, 3), device)
    raises(TypeError, "flip(): argument 'dims' (position 2) must be tuple of ints, not int", lambda: ctorch.flip(x, 1))
    raises(RuntimeError, "dim 0 appears multiple times in the list of dims", lambda: ctorch.flip(x, [0, 0]))
    raises(RuntimeError, "Input must be >= 2-d.", lambda: ctorch.fliplr(t_([5], device)))
    raises(RuntimeError, "Input must be >= 1-d.", lambda: ctorch.flipud(t_(5, device)))
    raises(RuntimeError, "shifts and dimensions must align. shifts: 2, dims:1", lambda: ctorch.roll(x, (1, 2), (0,)))
    raises(RuntimeError, "`shifts` required", lambda: ctorch.roll(x, [], []))
    raises(RuntimeError, "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
           lambda: x.repeat(2))
    raises(RuntimeError, "Trying to create tensor with negative dimension -2: [-2, 6]", lambda: x.repeat(-1, 2))
    raises(RuntimeError, "tril: input tensor must have at least 2 dimensions", lambda: ctorch.tril(t_([1, 2], device)))
    raises(TypeError, "tril(): argument 'diagonal' must be int, not float", lambda: ctorch.tril(x, diagonal=1.5))
    raises(RuntimeError, "diag(): Supports 1D or 2D tensors. Got 3D", lambda: ctorch.diag(t_(np.zeros((2, 2, 2)))))
    raises(RuntimeError, "diagonal dimensions cannot be identical 0, 0", lambda: ctorch.diagonal(x, 0, 0, 0))


def test_zero_dim_and_empty(device):
    s = t_(5.0, device)
    assert_close(s[...], np.array(5.0))
    assert same_storage(s[...], s)
    assert tuple(s[None].shape) == (1,)
    assert tuple(s[()].shape) == ()
    s[...] = 3.0
    assert s.item() == 3.0
    s[()] = t_(4, device)
    assert s.item() == 4.0
    assert_close(ctorch.flip(s, []), np.array(4.0))
    assert_close(ctorch.roll(s, 1), np.array(4.0))
    e = t_(np.zeros((0, 3), np.float32), device)
    assert tuple(e[:, 1].shape) == (0,)
    assert tuple(e[[]].shape) == (0, 3)
    e[:, 1] = 2.0
    e[e.cpu().numpy() > 1] = 0.0
    assert tuple(ctorch.cat([e, e]).shape) == (0, 3)
    assert tuple(ctorch.flip(e, [0, 1]).shape) == (0, 3)
    assert tuple(ctorch.roll(e, 1, 0).shape) == (0, 3)
    assert tuple(ctorch.tril(e).shape) == (0, 3)
    assert tuple(ctorch.masked_select(e, t_(np.zeros((0, 3), bool), device)).shape) == (0,)
    assert tuple(e.repeat(2, 2).shape) == (0, 6)
    assert tuple(ctorch.index_select(e, 1, t_([0, 2], device)).shape) == (0, 2)


def test_fuzzed_messages_match_pytorch(device):
    """Messages the differential fuzz against PyTorch 2.15 found worded differently."""
    with pytest.raises(RuntimeError, match=r"^Boolean value of Tensor with more than one value is ambiguous$"):
        bool(t_([1, 2], device))
    with pytest.raises(RuntimeError, match=r"^Boolean value of Tensor with no values is ambiguous$"):
        bool(t_(np.zeros(0), device))
    empty = t_(np.zeros((0, 4), np.float32), device)
    with pytest.raises(RuntimeError, match=r"^cannot reshape tensor of 0 elements into shape \[0, -1\] because the "
                                           r"unspecified dimension size -1 can be any value and is ambiguous$"):
        empty.reshape(0, -1)
    assert empty.reshape(3, -1).shape == (3, 0)
    with pytest.raises(RuntimeError, match=r"^shape '\[3, -1\]' is invalid for input of size 4$"):
        t_(np.zeros(4), device).view(3, -1)
    with pytest.raises(RuntimeError, match=r"^invalid shape dimension -2 at index 0 of shape \[-2, 2\]$"):
        t_(np.zeros(4), device).view(-2, 2)
    with pytest.raises(RuntimeError, match=r"^narrow\(\): length must be non-negative\.$"):
        t_(np.zeros(4), device).narrow(0, 0, -1)
    with pytest.raises(RuntimeError, match=r"^expand\(torch\.(cuda\.)?LongTensor\{\[2, 2\]\}, size=\[4\]\): the number "
                                           r"of sizes provided \(1\) must be greater or equal"):
        t_(np.zeros((2, 2), np.int64), device).expand(4)
    with pytest.raises(IndexError, match=r"^take\(\): tried to take from an empty tensor$"):
        ctorch.take(empty, t_([0], device))
    with pytest.raises(IndexError, match=r"^out of range: tried to access index 5 on a tensor of 3 elements\.$"):
        ctorch.take(t_([1, 2, 3], device), t_([5], device))
    mask = t_(np.ones((3, 1), bool), device)
    # the broadcast error names the operands in PyTorch's order: mask first out of place, self first in place
    with pytest.raises(RuntimeError, match=r"tensor a \(3\) must match the size of tensor b \(0\)"):
        empty.masked_select(mask)
    with pytest.raises(RuntimeError, match=r"tensor a \(3\) must match the size of tensor b \(0\)"):
        empty.masked_fill(mask, 1.0)
    with pytest.raises(RuntimeError, match=r"tensor a \(0\) must match the size of tensor b \(3\)"):
        empty.masked_fill_(mask, 1.0)


def test_view_as_dtype(device):
    """Tensor.view(dtype) reinterprets the bytes (NumPy's ndarray.view is the oracle)."""
    arr = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = t_(arr, device)
    same = x.view(ctorch.int32)  # same element size: same shape and strides
    assert same.shape == (4, 6) and same.stride() == (6, 1)
    np.testing.assert_array_equal(to_numpy(same), arr.view(np.int32))
    small = x.view(ctorch.uint8)  # smaller elements: the last dim grows
    assert small.shape == (4, 24) and small.stride() == (24, 1)
    np.testing.assert_array_equal(to_numpy(small), arr.view(np.uint8))
    big = x[1:, 2:6].view(ctorch.float64)  # larger: last dim, other strides and the offset shrink
    assert big.shape == (3, 2) and big.stride() == (3, 1) and big.storage_offset() == 4
    np.testing.assert_array_equal(to_numpy(big), np.ascontiguousarray(arr[1:, 2:6]).view(np.float64))
    big[0, 0] = 0.0  # a view: writes reach x
    assert x[1, 2].item() == 0.0 and x[1, 3].item() == 0.0
    assert x.view(dtype=ctorch.int16).shape == (4, 12)
    assert t_([True, False], device).view(ctorch.int8).tolist() == [1, 0]
    msg = r"to view Float as %s \(different element sizes\)"
    with pytest.raises(RuntimeError, match=r"^self.stride\(-1\) must be 1 " + msg % "Byte" + ", but got 6$"):
        x.t().view(ctorch.uint8)
    with pytest.raises(RuntimeError, match=r"^self.size\(-1\) must be divisible by 2 " + msg % "Double" + ", but got 3$"):
        x[:, :3].view(ctorch.float64)
    with pytest.raises(RuntimeError, match=r"^self.storage_offset\(\) must be divisible by 2 " + msg % "Double"):
        x[:, 1:5].view(ctorch.float64)
    with pytest.raises(RuntimeError, match=r"^self.stride\(0\) must be divisible by 2 " + msg % "Double"):
        t_(np.zeros((3, 5), np.float32), device)[:, :2].view(ctorch.float64)
    with pytest.raises(RuntimeError, match=r"^self.dim\(\) cannot be 0 " + msg % "Byte" + "$"):
        x[0, 0].view(ctorch.uint8)


def test_cat_stack_write_out(device):
    """out= of cat/stack/hstack/vstack/dstack receives the result (it used to be ignored)."""
    a, b = t_(np.ones((2, 2), np.float32), device), t_(np.full((2, 2), 2, np.float32), device)
    out = t_(np.zeros(0, np.float64), device)
    r = ctorch.cat([a, b], out=out)
    assert r is out and out.shape == (4, 2) and out.dtype == ctorch.float64  # resized, cast
    np.testing.assert_array_equal(to_numpy(out), np.concatenate([np.ones((2, 2)), np.full((2, 2), 2)]))
    keep = t_(np.zeros((2, 4), np.float32), device).t()  # the right shape: written in its own layout
    assert ctorch.vstack([a, b], out=keep) is keep and keep.stride() == (1, 4)
    np.testing.assert_array_equal(to_numpy(keep), np.vstack([np.ones((2, 2)), np.full((2, 2), 2)]))
    s = t_(np.zeros(3, np.float32), device)
    with pytest.warns(UserWarning, match=r"An output with one or more elements was resized since it had shape \[3\]"):
        ctorch.stack([a, b], 1, out=s)
    np.testing.assert_array_equal(to_numpy(s), np.stack([np.ones((2, 2)), np.full((2, 2), 2)], 1))
    h = t_(np.zeros(0, np.float32), device)
    d = t_(np.zeros(0, np.float32), device)
    ctorch.hstack([a, b], out=h)
    ctorch.dstack([a, b], out=d)
    assert h.shape == (2, 4) and d.shape == (2, 2, 2)
    with pytest.raises(TypeError, match=r"^torch.cat\(\): input types can't be cast to the desired output type Long$"):
        ctorch.cat([a, b], out=t_(np.zeros((4, 2), np.int64), device))
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor refer to a "
                                           "single memory location"):
        ctorch.cat([a, a], out=a)


def test_index_ops_write_out(device):
    """out= of gather/index_select/masked_select/nonzero/tril/triu/diag is written and returned
    (it used to be accepted and ignored), with PyTorch's dtype rules."""
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = t_(arr, device)
    f32 = lambda: t_(np.zeros(0, np.float32), device)  # noqa: E731
    cases = [
        (lambda o: ctorch.gather(x, 1, t_([[0], [1], [2]], device), out=o), arr[[0, 1, 2], [0, 1, 2]][:, None]),
        (lambda o: ctorch.index_select(x, 0, t_([0, 2], device), out=o), arr[[0, 2]]),
        (lambda o: ctorch.masked_select(x, x > 5, out=o), arr[arr > 5]),
        (lambda o: ctorch.tril(x, out=o), np.tril(arr)),
        (lambda o: ctorch.triu(x, 1, out=o), np.triu(arr, 1)),
        (lambda o: ctorch.diag(x, out=o), np.diag(arr)),
    ]
    for fn, expect in cases:
        o = f32()
        assert fn(o) is o
        np.testing.assert_array_equal(to_numpy(o), expect)
    o = t_(np.zeros(0, np.int64), device)
    assert ctorch.nonzero(x, out=o) is o
    np.testing.assert_array_equal(to_numpy(o), np.argwhere(arr))
    f64 = t_(np.zeros(0, np.float64), device)
    i64 = t_(np.zeros(0, np.int64), device)
    with pytest.raises(RuntimeError, match=r"^Expected out tensor to have dtype float, but got double instead$"):
        ctorch.gather(x, 1, t_([[0]], device), out=f64)
    with pytest.raises(RuntimeError, match=r"^index_select\(\): self and result must have the same scalar type$"):
        ctorch.index_select(x, 0, t_([0], device), out=f64)
    with pytest.raises(RuntimeError, match=r"^nonzero: Expected out tensor to have scalar type Long but got scalar "
                                           r"typeFloat$"):
        ctorch.nonzero(x, out=f32())
    with pytest.raises(RuntimeError, match=r"^diag: result type Float can't be cast to the desired out= type Long$"):
        ctorch.diag(t_(np.ones(2, np.float32), device), out=i64)


VIEW_FUNCTIONS = [
    ("reshape", ((3, 4),), lambda a: a.reshape(3, 4)),
    ("flatten", (1,), lambda a: a.reshape(2, 6)),
    ("unflatten", (1, (3, 2)), lambda a: a.reshape(2, 3, 2)),
    ("squeeze", (), lambda a: a),
    ("unsqueeze", (0,), lambda a: a[None]),
    ("transpose", (0, 1), lambda a: a.swapaxes(0, 1)),
    ("swapaxes", (0, 1), lambda a: a.swapaxes(0, 1)),
    ("swapdims", (0, 1), lambda a: a.swapaxes(0, 1)),
    ("permute", ((1, 0),), lambda a: a.transpose(1, 0)),
    ("movedim", (0, 1), lambda a: np.moveaxis(a, 0, 1)),
    ("moveaxis", (0, 1), lambda a: np.moveaxis(a, 0, 1)),
    ("narrow", (1, 2, 3), lambda a: a[:, 2:5]),
    ("select", (1, 4), lambda a: a[:, 4]),
    ("t", (), lambda a: a.T),
]


@pytest.mark.parametrize("name,args,expected", VIEW_FUNCTIONS, ids=[v[0] for v in VIEW_FUNCTIONS])
def test_view_methods_as_functions(device, name, args, expected):
    a = np.arange(12, dtype=np.float32).reshape(2, 6)
    x = ctorch.tensor(a, device=device)
    out = getattr(ctorch, name)(x, *args)
    assert_close(out, expected(a))
    x.add_(100)  # a view: the write shows through
    assert_close(out, expected(a + 100))


def test_split_chunk_unbind_clone_detach_as_functions(device):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = ctorch.tensor(a, device=device)
    assert [to_numpy(p).tolist() for p in ctorch.split(x, 2)] == [a[:2].tolist(), a[2:].tolist()]
    assert [to_numpy(p).tolist() for p in ctorch.chunk(x, 2, 1)] == [a[:, :2].tolist(), a[:, 2:].tolist()]
    assert [to_numpy(p).tolist() for p in ctorch.unbind(x, 1)] == [a[:, i].tolist() for i in range(4)]
    c = ctorch.clone(x)
    assert c.data_ptr() != x.data_ptr()
    assert_close(c, a)
    w = ctorch.tensor(a, device=device, requires_grad=True)
    d = ctorch.detach(w)
    assert not d.requires_grad and d.data_ptr() == w.data_ptr()
    with pytest.raises(TypeError, match=r"flatten\(\): argument 'input' \(position 1\) must be Tensor, not list"):
        ctorch.flatten([1, 2])
    with pytest.raises(TypeError, match="must be Tensor"):
        ctorch.t()


def test_broadcast_shapes_tensors_and_to(device):
    assert ctorch.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert ctorch.broadcast_shapes() == () and ctorch.broadcast_shapes(4) == (4,)
    with pytest.raises(RuntimeError, match="must match the size"):
        ctorch.broadcast_shapes((2,), (3,))
    a_np = np.arange(2.0).reshape(2, 1)
    a = ctorch.tensor(a_np, device=device, requires_grad=True)
    b = ctorch.ones(3, device=device)
    x, y = ctorch.broadcast_tensors(a, b)
    assert x.shape == (2, 3) and y.shape == (2, 3)
    assert x.grad_fn.name() == "ExpandBackward0" and y.grad_fn is None
    assert_close(x.detach(), np.broadcast_to(a_np, (2, 3)))
    z = ctorch.broadcast_to(a, (4, 2, 3))
    assert z.shape == (4, 2, 3) and a.broadcast_to((2, 5)).shape == (2, 5)
    z.sum().backward()
    assert to_numpy(a.grad).tolist() == [[12.0], [12.0]]
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(2\) must match the existing size \(3\)"):
        ctorch.broadcast_to(ctorch.ones(3, device=device), (2,))


def test_inplace_index_ops_refuse_expanded_self(device):
    """scatter_ / scatter_add_ / scatter_reduce_ / index_add_ / index_copy_ / index_reduce_ / masked_scatter_ into
    a self whose elements share memory (expanded) raise PyTorch's internal-overlap error instead of writing
    the shared element several times; self is left as it was."""
    idx = ctorch.tensor([[0, 1, 2, 3]] * 3, device=device)
    src = ctorch.ones(3, 4, device=device)
    calls = [lambda s: s.scatter_(1, idx, src), lambda s: s.scatter_add_(1, idx, src),
             lambda s: s.scatter_reduce_(1, idx, src, "sum"),
             lambda s: s.index_add_(0, ctorch.tensor([0, 2, 1], device=device), src),
             lambda s: s.index_copy_(0, ctorch.tensor([0, 2, 1], device=device), src),
             lambda s: s.index_reduce_(0, ctorch.tensor([0], device=device), src[:1], "prod"),
             lambda s: s.masked_scatter_(src > 0, src)]
    for call in calls:
        s = ctorch.zeros(1, 4, device=device).expand(3, 4)
        with pytest.raises(RuntimeError, match="^unsupported operation: more than one element of the written-to"):
            call(s)
        assert s.sum().item() == 0


def test_fill_value_tensor_must_fit(device):
    """masked_fill_ / index_fill_ with a CPU 0-d value tensor check it fits self's dtype as a number does
    (it was wrapped: 300 into uint8 gave 44)."""
    m = ctorch.tensor([True, False], device=device)
    for dtype, value in [(ctorch.uint8, ctorch.tensor(300)), (ctorch.uint8, ctorch.tensor(-2.5)),
                         (ctorch.float32, ctorch.tensor(1e300, dtype=ctorch.float64))]:
        with pytest.raises(RuntimeError, match="value cannot be converted to type .* without overflow"):
            ctorch.zeros(2, dtype=dtype, device=device).masked_fill_(m, value)
        with pytest.raises(RuntimeError, match="value cannot be converted to type .* without overflow"):
            ctorch.zeros(2, dtype=dtype, device=device).index_fill_(0, ctorch.tensor([0], device=device), value)
    assert ctorch.zeros(2, dtype=ctorch.int8, device=device).masked_fill_(m, ctorch.tensor(-2.6)).tolist() == [-2, 0]


@pytest.mark.parametrize("name", ["scatter", "scatter_add", "index_add", "index_copy", "take"])
def test_index_functions_take_out(name):
    """torch.take / scatter / scatter_add / index_add / index_copy accept out= (their methods do not):
    the result written into out (resized as PyTorch, even over the input), out's dtype checked."""
    x = ctorch.arange(6.0).reshape(2, 3)
    args = {"scatter": (0, ctorch.tensor([[1, 0, 1]]), ctorch.ones(1, 3)),
            "scatter_add": (0, ctorch.tensor([[1, 0, 1]]), ctorch.ones(1, 3)),
            "index_add": (0, ctorch.tensor([1]), ctorch.ones(1, 3)),
            "index_copy": (0, ctorch.tensor([1]), ctorch.ones(1, 3)),
            "take": (ctorch.tensor([[0, 5]]),)}[name]
    fn = getattr(ctorch, name)
    expected = fn(x, *args)
    out = ctorch.empty(0)
    assert fn(x, *args, out=out) is out and out.tolist() == expected.tolist()
    y = x.clone()
    with pytest.warns(UserWarning, match="was resized") if name == "take" else warnings.catch_warnings():
        assert fn(y, *args, out=y).tolist() == expected.tolist()  # out may be the input
    message = ("take\\(\\): self and out expected to have the same dtype, but got self.dtype = Float and out.dtype = Long"
               if name == "take" else "Expected out tensor to have dtype float, but got long int instead")
    with pytest.raises(RuntimeError, match=message):
        fn(x, *args, out=ctorch.empty(expected.shape, dtype=ctorch.int64))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        fn(x, *args, out=ctorch.empty(1).expand(*expected.shape))
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        getattr(x, name)(*args, out=ctorch.empty(0))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        fn(x.clone().requires_grad_(), *args, out=ctorch.empty(0))


def test_index_add_out_keeps_alpha_and_mvlgamma_out():
    x = ctorch.zeros(2, 2)
    out = ctorch.empty(2, 2)
    ctorch.index_add(x, 0, ctorch.tensor([1]), ctorch.ones(1, 2), alpha=3, out=out)
    assert out.tolist() == [[0.0, 0.0], [3.0, 3.0]]
    a = ctorch.tensor([3.0, 4.5])
    out = ctorch.empty(2, dtype=ctorch.float64)  # the float result cast into a double out
    assert ctorch.mvlgamma(a, 2, out=out) is out
    assert_close(out, ctorch.mvlgamma(a, 2).double())
    assert_close(ctorch.special.multigammaln(a, 2, out=ctorch.empty(0)), ctorch.mvlgamma(a, 2))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        ctorch.mvlgamma(a, 2, out=ctorch.empty(2, dtype=ctorch.int64))
