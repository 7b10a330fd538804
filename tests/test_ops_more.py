"""Tests for ops_more.c (repeat_interleave, tensor_split/hsplit/vsplit/dsplit, ravel, type_as,
diag_embed, diagflat, fill_diagonal_, unravel_index, mvlgamma, ldexp, frexp), views.c's unfold and
in-place metadata ops, and the special-function rows of the elementwise table (erfinv, lgamma,
digamma, polygamma, i0, sinc, logit, xlogy, heaviside, gcd, lcm, nextafter, deg2rad, rad2deg).
NumPy and Python's math module are the oracles; PyTorch's messages and grad_fn names (checked
against the reference build) are the spec."""
import math

import numpy as np
import pytest

import ctorch
from conftest import assert_close, to_numpy
from ctorch.autograd import gradcheck


def make(arr, device, dtype, transposed=False):
    kw = {"device": device, "dtype": getattr(ctorch, dtype)}
    if transposed and np.ndim(arr) >= 2:
        return ctorch.tensor(np.ascontiguousarray(np.asarray(arr).T), **kw).T
    return ctorch.tensor(arr, **kw)


def raises(exc, message, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == message


def leaf(values, device="cpu"):
    return ctorch.tensor(values, dtype=ctorch.float64, device=device, requires_grad=True)


# --- repeat_interleave --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
@pytest.mark.parametrize("transposed", [False, True], ids=["contig", "transposed"])
def test_repeat_interleave(device, dtype, transposed):
    arr = (np.arange(6).reshape(2, 3) % 2 if dtype == "bool" else np.arange(6).reshape(2, 3)).astype(
        np.float32 if dtype == "float16" else dtype)
    arr = arr.T.copy() if transposed else arr
    t = make(arr, device, dtype, transposed)
    assert_close(t.repeat_interleave(2), np.repeat(arr, 2))
    assert_close(t.repeat_interleave(3, dim=1), np.repeat(arr, 3, axis=1))
    reps = [1, 0, 2][: arr.shape[0]]
    r = ctorch.tensor(reps, device=device)
    assert_close(ctorch.repeat_interleave(t, r, dim=0), np.repeat(arr, reps, axis=0))
    assert_close(t.repeat_interleave(r, dim=0, output_size=sum(reps)), np.repeat(arr, reps, axis=0))
    assert_close(t.repeat_interleave(ctorch.tensor(2, device=device), dim=-1), np.repeat(arr, 2, axis=-1))


def test_repeat_interleave_forms_and_errors(device):
    assert_close(ctorch.repeat_interleave(ctorch.tensor([1, 2, 0], device=device)), np.array([0, 1, 1]))
    r32 = ctorch.repeat_interleave(ctorch.tensor([2, 1], dtype=ctorch.int32, device=device))
    assert r32.dtype == ctorch.int32 and to_numpy(r32).tolist() == [0, 0, 1]
    assert_close(ctorch.tensor(5, device=device).repeat_interleave(3), np.array([5, 5, 5]))
    assert ctorch.zeros(0, 2, device=device).repeat_interleave(2, dim=0).shape == (0, 2)
    t = ctorch.tensor([1, 2], device=device)
    raises(RuntimeError, "repeats must have the same size as input along dim, but got repeats.size(0) = 3 and "
           "input.size(0) = 2", lambda: t.repeat_interleave(ctorch.tensor([1, 2, 3], device=device)))
    raises(RuntimeError, "repeats can not be negative", lambda: t.repeat_interleave(ctorch.tensor([-1, 2], device=device)))
    raises(RuntimeError, "Repeats must be non-negative", lambda: t.repeat_interleave(-1))
    raises(RuntimeError, "repeats must be 0-dim or 1-dim tensor",
           lambda: t.repeat_interleave(ctorch.tensor([[1, 2]], device=device)))
    raises(NotImplementedError, "\"repeat_interleave_cpu\" not implemented for 'Float'",
           lambda: t.repeat_interleave(ctorch.tensor([1.0, 2.0], device=device)))
    raises(RuntimeError, "allocated size does not match required size",
           lambda: t.repeat_interleave(ctorch.tensor([1, 2], device=device), output_size=4))
    raises(IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got 5)",
           lambda: t.repeat_interleave(2, dim=5))


def test_repeat_interleave_grad(device):
    x = leaf(np.arange(12.0).reshape(3, 4) / 7, device)
    assert x.repeat_interleave(2, dim=1).grad_fn.name() == "ViewBackward0"
    assert x.repeat_interleave(ctorch.tensor([1, 0, 2], device=device), dim=0).grad_fn.name() == "IndexSelectBackward0"
    assert gradcheck(lambda a: a.repeat_interleave(2, dim=1), (x,))
    assert gradcheck(lambda a: a.repeat_interleave(ctorch.tensor([1, 0, 2], device=device), dim=0), (x,))


# --- tensor_split, hsplit, vsplit, dsplit --------------------------------------------------------------
@pytest.mark.parametrize("spec", [3, 4, [1, 5], [5, 1], [-2], ()], ids=str)
def test_tensor_split(device, spec):
    arr = np.arange(14).reshape(2, 7)
    t = make(arr, device, "int64")
    pieces = ctorch.tensor_split(t, list(spec) if isinstance(spec, tuple) else spec, dim=1)
    expected = np.array_split(arr, spec if isinstance(spec, int) else list(spec), axis=1)
    assert len(pieces) == len(expected)
    for p, e in zip(pieces, expected):
        assert_close(p, e)
    if isinstance(spec, list):
        via_tensor = t.tensor_split(ctorch.tensor(spec), 1)
        assert [to_numpy(p).tolist() for p in via_tensor] == [e.tolist() for e in expected]


def test_tensor_split_views_and_errors(device):
    t = ctorch.arange(7.0, device=device)
    pieces = t.tensor_split(ctorch.tensor(3))
    assert [p.shape[0] for p in pieces] == [3, 2, 2]
    assert pieces[1].data_ptr() == t.data_ptr() + 3 * 4  # views
    raises(RuntimeError, "number of sections must be larger than 0, got 0", lambda: t.tensor_split(0))
    raises(RuntimeError, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims",
           lambda: ctorch.tensor_split(ctorch.tensor(7.0), 2))
    raises(RuntimeError, "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
           "one-dimensional tensor, but got a tensor with 2 dims", lambda: t.tensor_split(ctorch.tensor([[1]])))
    raises(RuntimeError, "tensor_split expected tensor_indices_or_sections to have dtype of long, but got Float",
           lambda: t.tensor_split(ctorch.tensor([1.0])))
    x = leaf(np.arange(8.0).reshape(2, 4), device)
    assert gradcheck(lambda a: ctorch.tensor_split(a, [1, 3], dim=1)[1] * 2, (x,))


def test_hsplit_vsplit_dsplit(device):
    a3 = np.arange(24).reshape(2, 3, 4)
    t3 = make(a3, device, "int64")
    for fn, npfn in [("hsplit", np.hsplit), ("vsplit", np.vsplit), ("dsplit", np.dsplit)]:
        for spec in ([1], 1 if fn == "hsplit" else 2):
            got = getattr(ctorch, fn)(t3, spec)
            exp = npfn(a3, spec)
            assert [to_numpy(p).tolist() for p in got] == [e.tolist() for e in exp]
            assert len(getattr(t3, fn)(spec)) == len(exp)
    a1 = np.arange(6)
    assert [to_numpy(p).tolist() for p in ctorch.hsplit(make(a1, device, "int64"), 3)] == [[0, 1], [2, 3], [4, 5]]
    raises(RuntimeError, "torch.hsplit attempted to split along dimension 0, but the size of the dimension 7 is not "
           "divisible by the split_size 3!", lambda: ctorch.hsplit(ctorch.arange(7, device=device), 3))
    raises(RuntimeError, "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 "
           "dimensions!", lambda: ctorch.hsplit(ctorch.tensor(6), 3))
    raises(RuntimeError, "torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 "
           "dimensions!", lambda: ctorch.vsplit(ctorch.arange(6, device=device), 3))
    raises(RuntimeError, "torch.dsplit requires a tensor with at least 3 dimension, but got a tensor with 2 "
           "dimensions!", lambda: ctorch.dsplit(ctorch.zeros(3, 2, device=device), [1]))


# --- unfold and the in-place metadata ops --------------------------------------------------------------
def np_unfold(arr, dim, size, step):
    n = (arr.shape[dim] - size) // step + 1
    wins = [np.take(arr, range(i * step, i * step + size), axis=dim) for i in range(n)]
    return np.moveaxis(np.stack(wins, axis=dim), dim + 1, -1)


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "bfloat16"])
@pytest.mark.parametrize("transposed", [False, True], ids=["contig", "transposed"])
def test_unfold(device, dtype, transposed):
    arr = np.arange(30).reshape(5, 6) % 3
    arr = (arr > 0) if dtype == "bool" else arr.astype(np.float32 if dtype == "bfloat16" else dtype)
    t = make(arr, device, dtype, transposed)
    for dim, size, step in [(1, 3, 2), (0, 2, 1), (-1, 6, 1), (0, 0, 2)]:
        u = t.unfold(dim, size, step)
        assert_close(u, np_unfold(arr, dim % 2, size, step))
        assert u.numel() == 0 or u.data_ptr() == t.data_ptr()
    assert_close(ctorch.tensor(3, device=device).unfold(0, 1, 1), np.array([3]))
    raises(RuntimeError, "maximum size for tensor at dimension 0 is 5 but size is 6", lambda: t.unfold(0, 6, 1))
    raises(RuntimeError, "step is 0 but must be > 0", lambda: t.unfold(0, 3, 0))
    raises(RuntimeError, "size is -1 but must be >= 0", lambda: t.unfold(0, -1, 1))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)", lambda: t.unfold(2, 1, 1))


def test_unfold_grad(device):
    x = leaf(np.arange(15.0).reshape(3, 5) / 7, device)
    assert x.unfold(1, 2, 1).grad_fn.name() == "UnfoldBackward0"
    assert gradcheck(lambda a: a.unfold(1, 2, 1), (x,))
    assert gradcheck(lambda a: a.unfold(0, 2, 2), (x,))
    assert gradcheck(lambda a: a.unfold(1, 2, 3), (x,))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_as_strided(device, dtype):
    arr = np.arange(12).astype(dtype)
    t = ctorch.tensor(arr, device=device)
    as_np = lambda a, size, stride, off: np.lib.stride_tricks.as_strided(  # noqa: E731
        a[off:], size, tuple(s * a.itemsize for s in stride))
    for size, stride, off in [((2, 2), (1, 2), None), ((3, 2), (1, 1), 2), ((2, 3), (0, 1), 4), ((0, 4), (1, 1), 11)]:
        v = t.as_strided(size, stride, off) if off is not None else ctorch.as_strided(t, size, stride)
        assert_close(v, as_np(arr, size, stride, off or 0))
        assert v.storage_offset() == (off or 0) and v.stride() == stride
    # storage_offset defaults to the input's; sizes/strides index the whole storage
    v = t[3:].as_strided((2, 2), (1, 3))
    assert v.storage_offset() == 3
    assert_close(v, as_np(arr, (2, 2), (1, 3), 3))
    raises(RuntimeError, "setStorage: sizes [4, 4], strides [1, 3], storage offset 0, and itemsize %d requiring a "
           "storage size of %d are out of bounds for storage of size %d" % (arr.itemsize, 13 * arr.itemsize,
                                                                           12 * arr.itemsize),
           lambda: t.as_strided((4, 4), (1, 3)))
    raises(RuntimeError, "as_strided: Negative strides are not supported at the moment, got strides: [-1]",
           lambda: t.as_strided((2,), (-1,)))
    raises(RuntimeError, "mismatch in length of strides and shape", lambda: t.as_strided((2, 2), (1,)))
    raises(RuntimeError, "Tensor: invalid storage offset -1", lambda: t.as_strided((2,), (1,), -1))
    # an extent past int64 is refused, not wrapped around into the storage (was a view reading far outside it)
    raises(RuntimeError, "Storage size calculation overflowed with sizes=[3] and strides=[4611686018427387904]",
           lambda: t.as_strided((3,), (2 ** 62,)))
    raises(RuntimeError, "Storage size calculation overflowed with sizes=[2] and strides=[1]",
           lambda: t.as_strided((2,), (1,), 2 ** 63 - 2))


def test_as_strided_grad(device):
    x = leaf(np.arange(12.0) / 7, device)
    assert x.as_strided((2, 2), (1, 2)).grad_fn.name() == "AsStridedBackward0"
    # overlapping windows add up; positions never read get zero
    x.as_strided((3, 2), (1, 1), 2).sum().backward()
    assert to_numpy(x.grad).tolist() == [0, 0, 1, 2, 2, 1, 0, 0, 0, 0, 0, 0]
    assert gradcheck(lambda a: a.as_strided((2, 3), (3, 1), 1), (x,))
    # views of the leaf (the positions read must belong to the view, as in PyTorch): the gradient
    # lands on the elements at those positions
    assert gradcheck(lambda a: a.view(3, 4).t().as_strided((2, 3), (3, 1), 2), (x,))
    assert gradcheck(lambda a: a.view(3, 4)[1:].as_strided((2, 2), (3, 1), 5), (x,))
    # an overlapping (expanded) input shares each position's gradient among its elements
    y = leaf(np.array([1.0, 2.0]), device)
    y.expand(3, 2).as_strided((2,), (1,)).sum().backward()
    assert to_numpy(y.grad).tolist() == [1.0, 1.0]
    assert ctorch.autograd.gradgradcheck(lambda a: a.as_strided((3, 2), (1, 1)) ** 2, (x,))


def test_inplace_metadata_ops(device):
    arr = np.arange(24.0).reshape(2, 3, 4)
    t = ctorch.tensor(arr, device=device)
    assert t.transpose_(0, 2) is t and t.shape == (4, 3, 2)
    assert_close(t, arr.transpose(2, 1, 0))
    t.swapaxes_(0, 2).swapdims_(1, 2)
    assert_close(t, arr.transpose(0, 2, 1))
    m = ctorch.tensor(arr[0], device=device).t_()
    assert m.stride() == (1, 4) and m.shape == (4, 3)
    s = ctorch.zeros(2, 1, 3, 1, device=device)
    assert s.squeeze_(1).shape == (2, 3, 1) and s.squeeze_().shape == (2, 3) and s.unsqueeze_(-1).shape == (2, 3, 1)
    raises(RuntimeError, "t_() expects a tensor with <= 2 dimensions, but self is 3D",
           lambda: ctorch.zeros(2, 3, 4, device=device).t_())
    raises(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 5)",
           lambda: ctorch.zeros(2, 1, device=device).unsqueeze_(5))
    x = leaf(np.arange(12.0).reshape(3, 4), device)
    raises(RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation.", lambda: x.t_())
    names = {"t_()": "TBackward1", "transpose_(0, 1)": "TransposeBackward1", "swapaxes_(0, 1)": "TransposeBackward1",
             "swapdims_(1, 0)": "TransposeBackward1", "unsqueeze_(1)": "UnsqueezeBackward1",
             "squeeze_()": "SqueezeBackward3", "squeeze_(0)": "SqueezeBackward4"}
    for call, name in names.items():
        assert eval("x.clone()." + call).grad_fn.name() == name
        weight = ctorch.arange(12.0, dtype=ctorch.float64, device=device)
        assert gradcheck(lambda a: eval("a.clone()." + call) * weight.view(eval("a.clone()." + call).shape), (x,))
    y = leaf(np.arange(4.0).reshape(1, 4), device)
    assert gradcheck(lambda a: a.clone().squeeze_(0) * ctorch.arange(4.0, dtype=ctorch.float64, device=device), (y,))


# --- ravel, type_as ------------------------------------------------------------------------------------
def test_ravel_type_as(device):
    arr = np.arange(6.0).reshape(2, 3)
    t = ctorch.tensor(arr, device=device)
    assert_close(t.ravel(), arr.ravel()) and t.ravel().data_ptr() == t.data_ptr()
    assert_close(ctorch.ravel(t.T), arr.T.ravel())
    assert ctorch.tensor(3.0).ravel().shape == (1,)
    r = t.type_as(ctorch.zeros(1, dtype=ctorch.int32, device=device))
    assert r.dtype == ctorch.int32 and to_numpy(r).tolist() == [[0, 1, 2], [3, 4, 5]]
    raises(TypeError, "type_as(): argument 'other' (position 1) must be Tensor, not int", lambda: t.type_as(3))
    x = leaf(arr, device)
    assert x.ravel().grad_fn.name() == "ViewBackward0" and x.t().ravel().grad_fn.name() == "ViewBackward0"
    assert gradcheck(lambda a: a.t().ravel(), (x,))


# --- diag_embed, diagflat, fill_diagonal_ --------------------------------------------------------------
def np_diag_embed(arr, offset, d1, d2):
    n = arr.shape[-1] + abs(offset)
    out = np.zeros(arr.shape[:-1] + (n, n), dtype=arr.dtype)
    for i in range(arr.shape[-1]):
        r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
        out[..., r, c] = arr[..., i]
    nd = out.ndim
    d1, d2 = d1 % nd, d2 % nd
    rest = [k for k in range(nd) if k not in (d1, d2)]
    order = [None] * nd
    for k, src in zip(rest, range(nd - 2)):
        order[k] = src
    order[d1], order[d2] = nd - 2, nd - 1
    return np.transpose(out, order)


@pytest.mark.parametrize("dtype", ["float64", "int16", "bool", "float16"])
def test_diag_embed_diagflat(device, dtype):
    arr = np.arange(1, 7).reshape(2, 3)
    arr = (arr % 2 == 1) if dtype == "bool" else arr.astype(np.float32 if dtype == "float16" else dtype)
    t = make(arr, device, dtype)
    for offset, d1, d2 in [(0, -2, -1), (1, 0, 2), (-1, 2, 0)]:
        assert_close(ctorch.diag_embed(t, offset, d1, d2), np_diag_embed(arr, offset, d1, d2))
    assert_close(t.T.diag_embed(), np_diag_embed(arr.T, 0, -2, -1))
    assert_close(ctorch.diagflat(t, -1), np.diagflat(arr, -1))
    assert_close(t.diagflat(2), np.diagflat(arr, 2))
    raises(RuntimeError, "diagonal dimensions cannot be identical 0, 0", lambda: ctorch.diag_embed(t, -1, 0, 0))
    raises(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 3)",
           lambda: ctorch.diag_embed(t, 0, 0, 3))


def test_diag_embed_grad(device):
    x = leaf(np.arange(6.0).reshape(2, 3) / 5, device)
    assert ctorch.diag_embed(x).grad_fn.name() == "DiagEmbedBackward0"
    assert ctorch.diagflat(x).grad_fn.name() == "DiagEmbedBackward0"
    assert gradcheck(lambda a: ctorch.diag_embed(a, 1, 0, 2), (x,))
    assert gradcheck(lambda a: ctorch.diagflat(a, -1), (x,))


@pytest.mark.parametrize("shape,wrap", [((3, 4), False), ((7, 3), True), ((7, 3), False), ((3, 3, 3), False)])
def test_fill_diagonal_(device, shape, wrap):
    arr = np.zeros(shape)
    np.fill_diagonal(arr, 2.0, wrap=wrap)
    t = ctorch.zeros(*shape, device=device)
    assert t.fill_diagonal_(2, wrap=wrap) is t
    assert_close(t, arr)


def test_fill_diagonal_errors_and_grad(device):
    raises(RuntimeError, "all dimensions of input must be of equal length",
           lambda: ctorch.zeros(3, 3, 4, device=device).fill_diagonal_(2))
    raises(RuntimeError, "dimensions must larger than 1", lambda: ctorch.zeros(3, device=device).fill_diagonal_(2))
    raises(TypeError, "fill_diagonal_(): argument 'fill_value' (position 1) must be Number, not Tensor",
           lambda: ctorch.zeros(3, 3, device=device).fill_diagonal_(ctorch.ones(1, device=device)))
    assert to_numpy(ctorch.zeros(2, 2, device=device).fill_diagonal_(ctorch.tensor(5.0))).tolist() == [[5, 0], [0, 5]]
    t = ctorch.zeros(2, 4, dtype=ctorch.int32, device=device).T.fill_diagonal_(7)
    assert to_numpy(t).tolist() == [[7, 0], [0, 7], [0, 0], [0, 0]]
    x = leaf(np.arange(12.0).reshape(4, 3), device)
    assert type(x.clone().fill_diagonal_(2).grad_fn).__name__ == "CopySlices"
    assert gradcheck(lambda a: a.clone().fill_diagonal_(3.0, wrap=True), (x,))


# --- unravel_index -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_unravel_index(device, dtype):
    idx = np.array([4, 1, 0, 5])
    got = ctorch.unravel_index(make(idx, device, dtype), (2, 3))
    assert all(g.dtype == ctorch.int64 for g in got)
    assert [to_numpy(g).tolist() for g in got] == [e.tolist() for e in np.unravel_index(idx, (2, 3))]
    got = ctorch.unravel_index(ctorch.tensor([[7, 23]], device=device), ctorch.Size([2, 3, 4]))
    assert [to_numpy(g).tolist() for g in got] == [[[0, 1]], [[1, 2]], [[3, 3]]]
    assert [to_numpy(g).tolist() for g in ctorch.unravel_index(ctorch.tensor([-1, 6], device=device), (2, 3))] == \
        [[1, 0], [2, 0]]  # PyTorch wraps as floor division
    assert ctorch.unravel_index(ctorch.tensor(4, device=device), 5)[0].shape == ()
    assert ctorch.unravel_index(ctorch.tensor([1], device=device), ()) == ()
    raises(TypeError, "expected 'indices' to be integer dtype, but got torch.float32",
           lambda: ctorch.unravel_index(ctorch.tensor([1.0]), (2, 3)))
    raises(ValueError, "'shape' cannot have negative values, but got (2, -3)",
           lambda: ctorch.unravel_index(ctorch.tensor([1]), (2, -3)))


# --- special functions ---------------------------------------------------------------------------------
def digamma_ref(x):
    if x == 0:
        return -math.inf
    if x < 0 and x == math.floor(x):
        return math.nan
    h = 1e-5  # central difference of lgamma, good to ~1e-9 relative
    return (math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h)


def polygamma_ref(n, x):
    """(-1)^(n+1) n! sum_k 1/(x+k)^(n+1), summed far then closed with the integral tail"""
    terms = sum(1.0 / (x + k) ** (n + 1) for k in range(2000))
    tail = 1.0 / (n * (x + 2000) ** n) + 0.5 / (x + 2000) ** (n + 1)
    return (-1) ** (n + 1) * math.factorial(n) * (terms + tail)


def i0_ref(x):
    return sum((x / 2) ** (2 * k) / math.factorial(k) ** 2 for k in range(80))


def erfinv_ref(y):
    if abs(y) >= 1:
        return math.copysign(math.inf, y) if abs(y) == 1 else math.nan
    lo, hi = -10.0, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return (lo + hi) / 2


UNARY_REFS = {
    "erfinv": (erfinv_ref, [-1.0, -0.9, -0.3, 0.0, 0.25, 0.99, 1.0, 1.5]),
    "lgamma": (lambda v: math.inf if v <= 0 and v == math.floor(v) else math.lgamma(v),
               [-2.5, -1.0, 0.0, 0.3, 1.0, 2.5, 12.0, 150.0]),
    "digamma": (digamma_ref, [-2.5, -1.0, 0.0, 0.3, 1.0, 2.5, 12.0, 150.0]),
    "i0": (i0_ref, [-3.0, 0.0, 0.5, 2.0, 29.0, 31.0, 60.0]),
    "sinc": (lambda v: 1.0 if v == 0 else math.sin(math.pi * v) / (math.pi * v), [-2.5, -1.0, 0.0, 0.3, 1.0, 7.25]),
    "deg2rad": (math.radians, [-180.0, 0.0, 45.0, 720.0]),
    "rad2deg": (math.degrees, [-math.pi, 0.0, 1.0, 10.0]),
}


@pytest.mark.parametrize("name", sorted(UNARY_REFS))
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_special_unary(device, name, dtype):
    ref, values = UNARY_REFS[name]
    if dtype in ("float16", "bfloat16") and name == "i0":
        values = [v for v in values if abs(v) < 10]
    t = ctorch.tensor(values, dtype=getattr(ctorch, dtype), device=device)
    expected = np.array([ref(v) for v in to_numpy(t.to(ctorch.float64)).tolist()])  # of the rounded inputs
    fn = getattr(ctorch, name)
    got = fn(t)
    assert got.dtype == t.dtype
    rtol = {"float64": 1e-9, "float32": 2e-6, "float16": 2e-3, "bfloat16": 1.6e-2}[dtype]
    exp_rounded = to_numpy(ctorch.tensor(expected, dtype=ctorch.float64).to(t.dtype).to(ctorch.float64)) \
        if dtype != "float64" else expected
    np.testing.assert_allclose(to_numpy(got).astype(np.float64), exp_rounded, rtol=rtol, atol=rtol, equal_nan=True)
    out = ctorch.empty(0, dtype=t.dtype, device=device)
    assert fn(t, out=out) is out
    np.testing.assert_array_equal(to_numpy(out), to_numpy(got))
    u = t.clone()
    assert getattr(u, name + "_")() is u
    np.testing.assert_array_equal(to_numpy(u), to_numpy(got))


@pytest.mark.parametrize("name", sorted(UNARY_REFS))
def test_special_unary_dtypes_layouts(device, name):
    ref = UNARY_REFS[name][0]
    ints = ctorch.tensor([[1, 2], [3, 4]], device=device).T  # transposed int64: computed in float32
    got = getattr(ctorch, name)(ints)
    assert got.dtype == ctorch.float32
    np.testing.assert_allclose(to_numpy(got), np.vectorize(ref)(np.array([[1.0, 3.0], [2.0, 4.0]])), rtol=2e-6)
    assert getattr(ctorch, name)(ctorch.tensor([True, False], device=device)).dtype == ctorch.float32
    assert getattr(ctorch, name)(ctorch.zeros(0, 3, device=device)).shape == (0, 3)
    z = getattr(ctorch, name)(ctorch.tensor(0.5, dtype=ctorch.float64, device=device))
    assert z.shape == () and abs(z.item() - ref(0.5)) < 1e-9
    raises(RuntimeError, "result type Float can't be cast to the desired output type Long",
           lambda: getattr(ctorch.tensor([1, 2], device=device), name + "_")())


GRAD_NAMES = {"erfinv": "ErfinvBackward0", "lgamma": "LgammaBackward0", "digamma": "DigammaBackward0",
              "i0": "I0Backward0", "sinc": "SincBackward0", "deg2rad": "Deg2RadBackward0",
              "rad2deg": "Rad2DegBackward0", "logit": "LogitBackward0"}


@pytest.mark.parametrize("name", sorted(GRAD_NAMES))
def test_special_unary_grad(device, name):
    x = leaf([0.3, 0.62, -0.45 if name not in ("logit",) else 0.45, 0.0 if name == "sinc" else 0.8], device)
    fn = getattr(ctorch, name)
    assert fn(x).grad_fn.name() == GRAD_NAMES[name]
    assert gradcheck(fn, (x,))


def test_polygamma_mvlgamma(device):
    vals = [0.3, 1.0, 2.5, 12.0, -1.5]
    t = ctorch.tensor(vals, dtype=ctorch.float64, device=device)
    for n in (0, 1, 2, 3):
        expected = [digamma_ref(v) if n == 0 else polygamma_ref(n, v) for v in vals]
        np.testing.assert_allclose(to_numpy(ctorch.polygamma(n, t)), expected, rtol=1e-7)
        np.testing.assert_allclose(to_numpy(t.polygamma(n)), expected, rtol=1e-7)
    assert to_numpy(ctorch.polygamma(1, ctorch.tensor([0.0], device=device))).tolist() == [math.inf]
    f = ctorch.tensor([1.0, 2.0], device=device)
    assert f.polygamma_(1) is f
    np.testing.assert_allclose(to_numpy(f), [math.pi ** 2 / 6, math.pi ** 2 / 6 - 1], rtol=1e-6)
    raises(RuntimeError, "polygamma(n, x) does not support negative n.", lambda: ctorch.polygamma(-1, t))
    x = leaf([0.3, 0.62, 1.45], device)
    assert ctorch.polygamma(2, x).grad_fn.name() == "PolygammaBackward0" == x.polygamma(1).grad_fn.name()
    assert gradcheck(lambda a: ctorch.polygamma(2, a), (x,)) and gradcheck(lambda a: a.clone().polygamma_(1), (x,))
    # mvlgamma
    mv = lambda v, p: sum(math.lgamma(v - i / 2) for i in range(p)) + p * (p - 1) / 4 * math.log(math.pi)
    y = ctorch.tensor([[3.0, 2.5], [4.25, 1.75]], device=device).T
    np.testing.assert_allclose(to_numpy(ctorch.mvlgamma(y, 3)), [[mv(3, 3), mv(4.25, 3)], [mv(2.5, 3), mv(1.75, 3)]],
                               rtol=1e-6)
    assert ctorch.mvlgamma(ctorch.tensor([3, 4], device=device), 2).dtype == ctorch.float32
    z = ctorch.tensor([3.0, 2.0], device=device)
    assert z.mvlgamma_(2) is z and abs(z[1].item() - mv(2.0, 2)) < 1e-5
    raises(RuntimeError, "p has to be greater than or equal to 1", lambda: ctorch.mvlgamma(y, 0))
    raises(RuntimeError, "All elements must be greater than (p-1)/2", lambda: ctorch.mvlgamma(y, 5))
    assert ctorch.mvlgamma(x + 3, 3).grad_fn.name() == "MvlgammaBackward0"
    assert gradcheck(lambda a: ctorch.mvlgamma(a + 3, 3), (x,))


def test_logit(device):
    vals = [0.0, 0.05, 0.25, 0.5, 0.97, 1.0]
    t = ctorch.tensor(vals, dtype=ctorch.float64, device=device)
    lg = lambda v: math.log(v / (1 - v)) if 0 < v < 1 else (-math.inf if v == 0 else math.inf)
    np.testing.assert_allclose(to_numpy(ctorch.logit(t)), [lg(v) for v in vals], rtol=1e-12)
    clamp = lambda v: min(max(v, 0.1), 0.9)
    np.testing.assert_allclose(to_numpy(t.logit(0.1)), [lg(clamp(v)) for v in vals], rtol=1e-12)
    out = ctorch.empty(6, dtype=ctorch.float64, device=device)
    assert ctorch.logit(t, eps=0.1, out=out) is out
    u = t.clone()
    assert ctorch.logit_(u, 0.1) is u and to_numpy(u).tolist() == to_numpy(out).tolist()
    x = leaf([0.2, 0.5, 0.95], device)
    assert gradcheck(lambda a: ctorch.logit(a, 0.1), (x,))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
def test_xlogy(device, dtype):
    a = np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 1.0]])
    b = np.array([[0.0, 2.0, 0.5], [np.nan, np.nan, 1.0]])
    if dtype in ("int64", "bool"):
        a, b = a.astype(dtype), np.nan_to_num(b, nan=1.0).astype(dtype)
    expected = np.where(np.isnan(b.astype(float)), np.nan,
                        np.where(a == 0, 0.0, a.astype(float) * np.log(np.where(b == 0, 1e-300, b).astype(float))))
    expected = np.where((a != 0) & (b == 0), -np.inf, expected)
    ta, tb = make(a, device, dtype), make(b, device, dtype, transposed=True)
    got = ctorch.xlogy(ta, tb)
    assert got.dtype == (ctorch.float32 if dtype in ("int64", "bool") else getattr(ctorch, dtype))
    assert_close(got, expected)
    with np.errstate(divide="ignore"):
        assert_close(ctorch.xlogy(2, tb), np.where(np.isnan(b.astype(float)), np.nan, 2 * np.log(b.astype(float))))
    if dtype.startswith("float"):
        c = ta.clone()
        assert c.xlogy_(tb) is c
        assert_close(c, expected)


def test_xlogy_grad(device):
    x, y = leaf([0.2, 0.6, 1.45], device), leaf([1.3, 2.6, 0.45], device)
    assert ctorch.xlogy(x, y).grad_fn.name() == "XlogyBackward0"
    assert ctorch.xlogy(2, y).grad_fn.name() == "XlogyBackward1"
    assert ctorch.xlogy(x, 2).grad_fn.name() == "XlogyBackward2"
    assert gradcheck(ctorch.xlogy, (x, y))
    assert gradcheck(lambda b: ctorch.xlogy(2, b), (y,)) and gradcheck(lambda a: ctorch.xlogy(a, 3.0), (x,))


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "bool", "float16"])
def test_heaviside(device, dtype):
    a = np.array([[0, 2, 0], [1, 0, 3]])
    v = np.array([5, 0, 1])
    if dtype == "bool":
        a, v = a > 1, v > 0
    elif dtype == "float32":
        a = np.array([[0.0, -2.0, np.nan], [1.5, -0.0, 3.0]], dtype=np.float32)
    ref = lambda x, y: np.where(x.astype(float) == 0, y.astype(float), (x.astype(float) > 0).astype(float))
    ta = make(a.astype(np.float32) if dtype == "float16" else a, device, dtype)
    tv = make(v.astype(np.float32) if dtype == "float16" else v, device, dtype)
    got = ctorch.heaviside(ta, tv)
    assert got.dtype == ta.dtype
    assert_close(got.to(ctorch.float64), ref(a, v))  # nan > 0 is false: 0, as PyTorch
    assert_close(ta.T.heaviside(tv[:2]).to(ctorch.float64), ref(a.T, v[:2]))
    raises(RuntimeError, "heaviside is not yet implemented for tensors with different dtypes.",
           lambda: ctorch.heaviside(ctorch.tensor([1], device=device), ctorch.tensor([1.0], device=device)))
    with pytest.raises(TypeError):  # PyTorch names the argument 'values', ctorch 'other'
        ctorch.heaviside(ta, 0.5)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
def test_gcd_lcm(device, dtype):
    a = np.array([[0, 12, 9], [7, 100, 18]])
    b = np.array([[0, 18, 6], [5, 75, 4]])
    if dtype != "uint8":
        a[0, 1], b[1, 2] = -12, -4
    ta, tb = make(a.astype(dtype), device, dtype), make(b.astype(dtype), device, dtype, transposed=True)
    assert_close(ctorch.gcd(ta, tb), np.gcd(a, b).astype(dtype))
    small = np.array([[0, 4, 9], [7, 10, 6]])
    tsmall = make(small.astype(dtype), device, dtype)
    assert_close(ctorch.lcm(tsmall, tsmall.flip(1)), np.lcm(small, small[:, ::-1]).astype(dtype))
    c = ta.clone()
    assert c.gcd_(tb) is c
    assert_close(c, np.gcd(a, b).astype(dtype))
    raises(NotImplementedError, f"\"gcd_{device}\" not implemented for 'Double'",
           lambda: ctorch.gcd(ctorch.tensor([1.0], dtype=ctorch.float64, device=device),
                              ctorch.tensor([1.0], dtype=ctorch.float64, device=device)))
    raises(TypeError, "gcd(): argument 'other' (position 2) must be Tensor, not int", lambda: ctorch.gcd(ta, 2))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nextafter(device, dtype):
    a = np.array([1.0, 0.0, -1.0, 2.0, np.inf], dtype=dtype)
    b = np.array([2.0, -1.0, -1.0, 0.0, 0.0], dtype=dtype)
    got = ctorch.nextafter(make(a, device, dtype), make(b, device, dtype))
    np.testing.assert_array_equal(to_numpy(got), np.nextafter(a, b))
    raises(NotImplementedError, f"\"nextafter_{device}\" not implemented for 'Long'",
           lambda: ctorch.nextafter(ctorch.tensor([1], device=device), ctorch.tensor([2], device=device)))
    x = leaf([1.0, 2.0], device)
    assert ctorch.nextafter(x, x).grad_fn.name() == "NextafterBackward0"
    # float16/bfloat16 results step to the neighbouring half value (not the neighbouring float)
    a = np.array([1.0, 0.0, -0.0, 65504.0, np.inf, -1.0, 2.0, np.nan, -np.inf], dtype=np.float16)
    b = np.array([2.0, -1.0, 1.0, np.inf, 0.0, -2.0, 2.0, 1.0, 0.0], dtype=np.float16)
    got = ctorch.nextafter(make(a, device, "float16"), make(b, device, "float16"))
    assert got.dtype == ctorch.float16
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(to_numpy(got), np.nextafter(a, b))
    got = ctorch.nextafter(make(a[:3], device, "bfloat16"), make(b[:3], device, "bfloat16")).float()
    np.testing.assert_array_equal(to_numpy(got), [1 + 2.0 ** -7, -(2.0 ** -133), 2.0 ** -133])
    # a float16 input with a float32 other is a float32 nextafter
    got = ctorch.nextafter(make(a[:2], device, "float16"), make(b[:2], device, dtype))
    assert got.dtype == getattr(ctorch, dtype)
    np.testing.assert_array_equal(to_numpy(got), np.nextafter(a[:2].astype(dtype), b[:2].astype(dtype)))
    with pytest.raises(NotImplementedError):
        ctorch.nextafter(x, x).sum().backward()


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_frexp_ldexp(device, dtype):
    vals = np.array([0.0, 3.0, -0.6, 1e-3, 1024.0, np.inf, np.nan], dtype=np.float32 if dtype == "float16" else dtype)
    t = make(vals, device, dtype)
    m, e = ctorch.frexp(t)
    nm, ne = np.frexp(vals.astype(np.float64))
    ne = np.where(np.isfinite(vals), ne, 0)
    assert e.dtype == ctorch.int32 and m.dtype == t.dtype
    assert to_numpy(e).tolist() == ne.tolist()
    assert_close(m, np.where(np.isinf(vals), vals, nm))
    assert type(t.frexp()).__name__ == "frexp" and t.frexp().mantissa.shape == (7,)
    back = ctorch.ldexp(m, e)
    assert_close(back, to_numpy(t.to(ctorch.float64)))
    raises(RuntimeError, "torch.frexp() only supports floating-point dtypes", lambda: ctorch.frexp(ctorch.tensor([1])))
    k = ctorch.tensor([1, 2, 3], device=device)
    assert_close(ctorch.ldexp(k, k), np.ldexp(np.array([1.0, 2, 3]), [1, 2, 3]))
    out = ctorch.empty(3, device=device)
    assert ctorch.ldexp(k, k, out=out) is out and to_numpy(out).tolist() == [2.0, 8.0, 24.0]
    f = ctorch.ones(3, dtype=getattr(ctorch, dtype), device=device)
    assert f.ldexp_(k) is f and to_numpy(f).tolist() == [2.0, 4.0, 8.0]
    raises(TypeError, "ldexp(): argument 'other' (position 2) must be Tensor, not int", lambda: ctorch.ldexp(k, 2))
    # the result dtype is self and other promoted (integers to float32), float16 computed in float
    h = ctorch.ldexp(make(np.array([3.0, 1.0]), device, "float16"), ctorch.tensor([-25, 20], device=device))
    assert h.dtype == ctorch.float16
    assert to_numpy(h).tolist() == np.array([3 * 2.0 ** -25, np.inf], dtype=np.float16).tolist()
    assert ctorch.ldexp(k.to(ctorch.int8), make(np.ones(3), device, "bfloat16")).dtype == ctorch.bfloat16
    raises(NotImplementedError, f"\"ldexp_{device}_exp\" not implemented for 'Bool'", lambda: ctorch.ldexp(f, k > 1))


def test_frexp_ldexp_grad(device):
    x = leaf([0.3, -2.5, 7.0], device)
    m, e = ctorch.frexp(x)
    assert m.grad_fn.name() == "FrexpBackward0" and e.grad_fn is None
    assert gradcheck(lambda a: ctorch.frexp(a)[0], (x,))
    k = ctorch.tensor([1, -2, 3], device=device)
    assert ctorch.ldexp(x, k).grad_fn.name() == "MulBackward0"
    assert gradcheck(lambda a: ctorch.ldexp(a, k), (x,))


# --- trapezoid, trapz, cumulative_trapezoid ------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_trapezoid(device, dtype):
    arr = np.array([[1.0, 2.0, 4.0, 7.0], [0.0, -1.0, 3.0, 2.0]])
    y = make(arr.astype(dtype), device, dtype, transposed=True)
    xs = np.array([0.0, 1.0, 3.0, 4.5])
    ref = lambda a, x: ((np.diff(x) * (a[..., 1:] + a[..., :-1])) / 2).sum(-1)
    cref = lambda a, x: np.cumsum((np.diff(x) * (a[..., 1:] + a[..., :-1])) / 2, -1)
    assert_close(ctorch.trapezoid(y), ref(arr, np.arange(4.0)), dtype="float32")
    assert_close(ctorch.trapezoid(y, dx=0.5), ref(arr, np.arange(4.0) * 0.5), dtype="float32")
    assert_close(ctorch.trapz(y, ctorch.tensor(xs, device=device)), ref(arr, xs), dtype="float32")
    assert_close(ctorch.trapezoid(y, ctorch.tensor(xs[:2], device=device), dim=0), ref(arr.T, xs[:2]), dtype="float32")
    assert_close(ctorch.trapz(y, dx=2.0, dim=0), ref(arr.T, np.array([0.0, 2.0])), dtype="float32")
    assert_close(ctorch.cumulative_trapezoid(y), cref(arr, np.arange(4.0)), dtype="float32")
    xfull = ctorch.tensor(np.stack([xs, xs * 2]), device=device)
    assert_close(ctorch.cumulative_trapezoid(y, xfull), cref(arr, np.stack([xs, xs * 2])), dtype="float32")
    assert ctorch.trapezoid(ctorch.ones(0, device=device)).item() == 0.0
    raises(RuntimeError, "trapezoid: There must be one `x` value for each sample point",
           lambda: ctorch.trapezoid(y, ctorch.tensor([0.0, 1.0], device=device)))


def test_trapezoid_grad(device):
    y = leaf(np.arange(12.0).reshape(3, 4) / 5, device)
    x = leaf([0.0, 0.5, 2.0, 2.5], device)
    assert ctorch.cumulative_trapezoid(y).grad_fn.name() == "CumsumBackward0"
    assert gradcheck(lambda a, b: ctorch.trapezoid(a, b), (y, x))
    assert gradcheck(lambda a: ctorch.trapezoid(a, dx=0.3, dim=0), (y,))
    assert gradcheck(lambda a, b: ctorch.cumulative_trapezoid(a, b), (y, x))


# --- window functions ----------------------------------------------------------------------------------
def np_window(kind, n, periodic, *params):
    if n <= 1:
        return np.ones(n)
    m = n + 1 if periodic else n
    fn = {"hann": np.hanning, "blackman": np.blackman, "bartlett": np.bartlett}
    if kind in fn:
        w = fn[kind](m)
    elif kind == "hamming":
        alpha, beta = params or (0.54, 0.46)
        w = alpha - beta * np.cos(2 * np.pi * np.arange(m) / (m - 1))
    else:
        w = np.kaiser(m, params[0] if params else 12.0)
    return w[:n]


@pytest.mark.parametrize("kind", ["hann", "hamming", "blackman", "bartlett", "kaiser"])
def test_windows(device, kind):
    fn = getattr(ctorch, kind + "_window")
    for n, periodic in [(0, True), (1, True), (5, True), (6, False), (8, True)]:
        w = fn(n, periodic, device=device, dtype=ctorch.float64)
        assert w.shape == (n,) and w.device.type == device
        np.testing.assert_allclose(to_numpy(w), np_window(kind, n, periodic), rtol=1e-12, atol=1e-12)
    assert fn(4).dtype == ctorch.float32 and fn(4, dtype=ctorch.float16).dtype == ctorch.float16
    assert fn(3, requires_grad=True).requires_grad
    if kind == "hamming":
        np.testing.assert_allclose(to_numpy(fn(5, False, 0.5, 0.5, dtype=ctorch.float64)),
                                   np_window(kind, 5, False, 0.5, 0.5), rtol=1e-12)
    if kind == "kaiser":
        np.testing.assert_allclose(to_numpy(fn(7, False, 3.5, dtype=ctorch.float64)), np.kaiser(7, 3.5), rtol=1e-12)
    raises(RuntimeError, f"{kind}_window requires non-negative window_length, got window_length=-1", lambda: fn(-1))
    with pytest.raises(RuntimeError, match="expects floating point dtypes"):
        fn(4, dtype=ctorch.int64)


# --- slice_scatter, select_scatter, diagonal_scatter, vander -------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_scatter_views(device, dtype):
    base = (np.arange(12).reshape(3, 4) % 2).astype(dtype)
    t = make(base, device, dtype, transposed=True)
    src = np.ones((3, 2), dtype=dtype)
    exp = base.copy()
    exp[:, 0:4:2] = src
    assert_close(ctorch.slice_scatter(t, make(src, device, dtype), 1, 0, 4, 2), exp)
    exp = base.copy()
    exp[1] = 1
    assert_close(t.select_scatter(ctorch.ones(4, dtype=t.dtype, device=device), 0, 1), exp)
    exp = base.copy()
    exp[[0, 1, 2], [1, 2, 3]] = 1
    assert_close(ctorch.diagonal_scatter(t, ctorch.ones(3, dtype=t.dtype, device=device), 1), exp)
    assert_close(t, base)  # input untouched
    raises(RuntimeError, "expected src to have a size equal to the slice of self. src size = [3, 3], slice size = [3, 2]",
           lambda: ctorch.slice_scatter(t, ctorch.ones(3, 3, dtype=t.dtype, device=device), 1, 0, 4, 2))
    raises(RuntimeError, "expected src to have a size equal to the slice of self. src size = [2], slice size = [3]",
           lambda: ctorch.diagonal_scatter(t, ctorch.ones(2, dtype=t.dtype, device=device), 1))


def test_scatter_views_grad(device):
    a, s = leaf(np.arange(12.0).reshape(3, 4), device), leaf(np.ones((3, 2)), device)
    assert ctorch.slice_scatter(a, s, 1, 0, 4, 2).grad_fn.name() == "SliceScatterBackward0"
    assert gradcheck(lambda x, y: ctorch.slice_scatter(x, y, 1, 0, 4, 2), (a, s))
    v = leaf([1.0, 2.0, 3.0, 4.0], device)
    assert ctorch.select_scatter(a, v, 0, 1).grad_fn.name() == "SelectScatterBackward0"
    assert gradcheck(lambda x, y: ctorch.select_scatter(x, y, 0, -1), (a, v))
    d = leaf([1.0, 2.0, 3.0], device)
    assert ctorch.diagonal_scatter(a, d, 1).grad_fn.name() == "DiagonalScatterBackward0"
    assert gradcheck(lambda x, y: ctorch.diagonal_scatter(x, y, 1), (a, d))


@pytest.mark.parametrize("dtype", ["float64", "int64", "float32"])
def test_vander(device, dtype):
    x = np.array([1, 2, 3, -1]).astype(dtype)
    t = make(x, device, dtype)
    assert_close(ctorch.vander(t), np.vander(x))
    assert_close(ctorch.vander(t, N=2, increasing=True), np.vander(x, 2, increasing=True))
    assert ctorch.vander(t, N=0).shape == (4, 0)
    batch = make(np.stack([x, x * 2]), device, dtype)
    assert_close(ctorch.linalg.vander(batch, N=3), np.stack([np.vander(x, 3, True), np.vander(x * 2, 3, True)]))
    raises(RuntimeError, "x must be a one-dimensional tensor.", lambda: ctorch.vander(batch))
    raises(RuntimeError, "N must be greater than 1.", lambda: ctorch.linalg.vander(t, N=1))
    raises(RuntimeError, "N must be non-negative.", lambda: ctorch.vander(t, N=-1))
    for bad, name in (("float16", "Half"), ("bool", "Bool")):  # torch.vander takes them, linalg.vander does not
        raises(NotImplementedError, "linalg.vander supports floating point, complex, and integer tensors, but got "
               + name, lambda: ctorch.linalg.vander(ctorch.ones(3, dtype=getattr(ctorch, bad))))
    v = leaf([0.5, -1.5, 2.0], device)
    assert ctorch.vander(v).grad_fn.name() == "FlipBackward0"
    assert gradcheck(lambda a: ctorch.linalg.vander(a, N=4), (v,))


# --- combinations ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "bool"])
def test_combinations(device, dtype):
    """Every r (0, 1, up to past n) with and without replacement against itertools, on a strided 1-d view;
    the empty input; PyTorch's errors; gradients (IndexBackward0, gradcheck) of r-tuples."""
    import itertools

    base = (np.arange(10) % 2 if dtype == "bool" else np.arange(10) * 1.5 - 4).astype(
        np.float32 if dtype == "float16" else dtype)
    x = make(base, device, dtype)[::2]  # 5 elements, stride 2
    vals = base[::2]
    for r in (1, 2, 3, 6):
        for rep, combos in ((False, itertools.combinations), (True, itertools.combinations_with_replacement)):
            out = ctorch.combinations(x, r, with_replacement=rep)
            want = np.array([[vals[i] for i in c] for c in combos(range(5), r)]).reshape(-1, r)
            assert out.dtype == x.dtype and out.device == x.device and out.shape == want.shape
            assert_close(out, want)
    assert ctorch.combinations(x).shape == (10, 2)
    for rep in (False, True):
        z = ctorch.combinations(x, r=0, with_replacement=rep)
        assert z.shape == (0,) and z.dtype == x.dtype and z.device == x.device
        assert ctorch.combinations(x[:0], 2, rep).shape == (0, 2)
    raises(RuntimeError, "Expect a 1D vector, but got shape [2, 2]", lambda: ctorch.combinations(x[:4].view(2, 2), -1))
    raises(RuntimeError, "Expect a 1D vector, but got shape []", lambda: ctorch.combinations(x[0]))
    raises(RuntimeError, "Expect a non-negative number, but got -1", lambda: ctorch.combinations(x, -1))
    raises(TypeError, "combinations(): argument 'r' (position 2) must be int, not bool",
           lambda: ctorch.combinations(x, True))
    raises(TypeError, "combinations(): argument 'with_replacement' (position 3) must be bool, not int",
           lambda: ctorch.combinations(x, 2, 1))
    raises(RuntimeError, "numel: integer multiplication overflow",
           lambda: ctorch.combinations(ctorch.arange(100, device=device), 20))
    if dtype == "float64":
        v = leaf([0.5, -1.5, 2.0, 3.0], device)
        assert ctorch.combinations(v).grad_fn.name() == "IndexBackward0"
        assert not ctorch.combinations(v, 0).requires_grad
        assert gradcheck(lambda a: ctorch.combinations(a, 3), (v,))
        assert gradcheck(lambda a: ctorch.combinations(a, 2, True), (v,))


# --- masked_scatter, put --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_masked_scatter_put(device, dtype):
    base = (np.arange(6).reshape(2, 3) % 2).astype(dtype)
    mask = np.array([[True, False, True], [False, True, False]])
    src = (np.arange(1, 7).reshape(2, 3) % 3).astype(dtype)
    t, m, s = make(base, device, dtype, transposed=True), make(mask, device, "bool"), make(src, device, dtype)
    exp = base.copy()
    exp[mask] = src.ravel()[: mask.sum()]
    assert_close(t.masked_scatter(m, s), exp)
    assert_close(t, base)
    c = t.clone()
    assert c.masked_scatter_(m, s) is c
    assert_close(c, exp)
    row = make(np.array([True, False, True]), device, "bool")
    exp2 = np.broadcast_to(base, (2, 3)).copy()
    exp2[np.broadcast_to([True, False, True], (2, 3))] = src.ravel()[:4]
    assert_close(ctorch.masked_scatter(t, row, s), exp2)
    raises(RuntimeError, "masked_scatter_ only supports boolean masks, but got mask with dtype Byte",
           lambda: t.masked_scatter(m.to(ctorch.uint8), s))
    raises(RuntimeError, "Number of elements of source < number of ones in mask", lambda: t.masked_scatter(m, s[0, :2]))
    idx = ctorch.tensor([0, 4, -1, 2], device=device)  # distinct: which of repeated writes wins is unspecified on CUDA
    vals = make(src.ravel()[:4], device, dtype)
    exp = base.copy().ravel()
    exp[[0, 4, -1, 2]] = src.ravel()[:4]
    assert_close(t.put(idx, vals), exp.reshape(2, 3))
    c = t.clone()  # transposed clone: written back through a flat copy
    assert c.put_(idx, vals) is c
    assert_close(c, exp.reshape(2, 3))
    if dtype != "bool":
        acc = t.clone().put_(ctorch.tensor([1, 1], device=device), make(src.ravel()[:2], device, dtype), accumulate=True)
        exp = base.copy().ravel()
        exp[1] += src.ravel()[0] + src.ravel()[1]
        assert_close(acc, exp.reshape(2, 3))
    raises(IndexError, "out of range: tried to access index 6 on a tensor of 6 elements.",
           lambda: t.put(ctorch.tensor([6], device=device), vals[:1]))
    raises(IndexError, "put_(): Expected source and index to have the same number of elements, but got "
           "source.numel() = 2, index.numel() = 1", lambda: t.put_(ctorch.tensor([1], device=device), vals[:2]))
    raises(RuntimeError, "put_(): Expected a long tensor for index, but got Float",
           lambda: t.put_(ctorch.tensor([1.0], device=device), vals[:1]))


def test_masked_scatter_put_grad(device):
    x, s = leaf(np.arange(6.0).reshape(2, 3), device), leaf(np.arange(1.0, 7.0).reshape(2, 3), device)
    m = ctorch.tensor([[True, False, True], [False, True, False]], device=device)
    assert gradcheck(lambda a, b: a.masked_scatter(m, b), (x, s))
    v = leaf([1.0, 2.0], device)
    assert gradcheck(lambda a, b: a.put(ctorch.tensor([4, 0], device=device), b), (x, v))
    assert gradcheck(lambda a, b: a.put(ctorch.tensor([1, 1], device=device), b, accumulate=True), (x, v))


def test_masked_scatter_put_nodes(device):
    """One PutBackward0 / MaskedScatterBackward0 node each (in place too), PyTorch's formulas: source's
    gradient is g at its indices (every duplicate of a plain put gets it), or g where the broadcast mask is
    true, zero-padded to source's numel; second derivatives."""
    from ctorch.autograd import gradgradcheck
    x, v = leaf(np.arange(6.0).reshape(2, 3), device), leaf([1.0, 2.0, 3.0], device)
    idx = ctorch.tensor([4, -1, 4], device=device)
    for acc in (False, True):
        assert ctorch.put(x, idx, v, acc).grad_fn.name() == "PutBackward0"
    c = x.clone()
    c.put_(idx, v)
    assert type(c.grad_fn).__name__ == "PutBackward0"
    c.backward(ctorch.arange(6.0, device=device).reshape(2, 3).double())
    assert_close(x.grad, [[0, 1, 2], [3, 0, 0]])
    assert_close(v.grad, [4, 5, 4])
    assert gradgradcheck(lambda a, b: a.put(idx, b, accumulate=True), (x, v))
    m = ctorch.tensor([True, False, True], device=device)  # broadcast over x's rows
    s = leaf(np.arange(7.0), device)
    assert x.masked_scatter(m, s).grad_fn.name() == "MaskedScatterBackward0"
    x.grad = None
    c = x.clone()
    c.masked_scatter_(m, s)
    assert type(c.grad_fn).__name__ == "MaskedScatterBackward0"
    c.backward(ctorch.arange(1.0, 7.0, device=device).reshape(2, 3).double())
    assert_close(x.grad, [[0, 2, 0], [0, 5, 0]])
    assert_close(s.grad, [1, 3, 4, 6, 0, 0, 0])
    b = leaf([1.0, 2.0, 3.0], device)
    assert gradcheck(lambda a, u: a.masked_scatter(m.reshape(1, 3).expand(2, 3), u), (b, s))
    assert gradgradcheck(lambda a, u: ctorch.masked_scatter(a, m, u), (x, s))
