"""Tests for the composite ops (csrc/ops_composite.c): meshgrid, cartesian_prod, atleast_1d/2d/3d,
column_stack, diff, trace, tensordot, kron, cross/linalg.cross, block_diag, rot90, tril_indices/
triu_indices, take_along_dim, cdist, cov and corrcoef. NumPy (fixed seed) is the oracle; PyTorch's
messages and grad_fn names (checked against the reference build) are the spec."""
import warnings

import numpy as np
import pytest

import ctorch
from conftest import assert_close, to_numpy
from ctorch.autograd import gradcheck

DTYPES = ["float32", "float64", "int64", "float16"]


def rand(shape, dtype, rng):
    """Small integers, exact in every dtype (bools for bool)."""
    if dtype == "bool":
        return rng.random(shape) > 0.5
    return rng.integers(-5, 6, size=shape).astype(np.float32 if dtype == "bfloat16" else dtype)


def make(arr, device, dtype, transposed=False):
    kw = {"device": device, "dtype": getattr(ctorch, dtype)}
    if transposed and arr.ndim >= 2:
        return ctorch.tensor(np.ascontiguousarray(arr.T), **kw).T
    return ctorch.tensor(arr, **kw)


def raises(exc, message, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == message


def leaf(rng, *shape, device="cpu"):
    return ctorch.tensor(rng.standard_normal(shape), dtype=ctorch.float64, device=device, requires_grad=True)


# ---------------------------------------------------------------------------------------------
# meshgrid / cartesian_prod
@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_meshgrid(device, indexing, dtype, rng):
    arrs = [rand((3,), dtype, rng), rand((4,), dtype, rng), rand((), dtype, rng), rand((2,), dtype, rng)]
    ts = [make(a, device, dtype) for a in arrs]
    expected = np.meshgrid(*[a.reshape(-1) for a in arrs], indexing=indexing)
    for args in (ts, [ts]):  # varargs and one list
        out = ctorch.meshgrid(*args, indexing=indexing)
        assert isinstance(out, tuple) and len(out) == 4
        for o, e, t in zip(out, expected, ts):
            assert_close(o, e)
            assert o.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()  # expanded views
    a, b = ctorch.meshgrid(ts[0], ts[1], indexing=indexing)
    assert a.stride() == ((1, 0) if indexing == "ij" else (0, 1))


def test_meshgrid_default_and_errors():
    x, y = ctorch.arange(3.0), ctorch.arange(4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = ctorch.meshgrid(x, y)  # PyTorch's default is 'ij' (with a once-per-process warning)
    assert a.shape == (3, 4) and b.shape == (3, 4)
    assert ctorch.meshgrid(x, indexing="xy")[0].shape == (3,)
    raises(RuntimeError, "meshgrid expects a non-empty TensorList", lambda: ctorch.meshgrid([], indexing="ij"))
    raises(RuntimeError, 'torch.meshgrid: indexing must be one of "xy" or "ij", but received: foo',
           lambda: ctorch.meshgrid(x, y, indexing="foo"))
    raises(RuntimeError, "meshgrid expects all tensors to have the same dtype",
           lambda: ctorch.meshgrid(x, y.int(), indexing="ij"))
    with pytest.raises(RuntimeError, match="^torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "):
        ctorch.meshgrid(ctorch.zeros(2, 2), x, indexing="ij")
    raises(TypeError, "expected Tensor as element 1 in argument 0, but got int", lambda: ctorch.meshgrid(x, 3, indexing="ij"))


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_cartesian_prod(device, dtype, rng):
    a, b, c = rand((3,), dtype, rng), rand((2,), dtype, rng), rand((4,), dtype, rng)
    out = ctorch.cartesian_prod(make(a, device, dtype), make(b, device, dtype), make(c, device, dtype))
    assert_close(out, np.array([[i, j, k] for i in a for j in b for k in c]))
    x = make(a, device, dtype)
    assert ctorch.cartesian_prod(x) is x
    assert ctorch.cartesian_prod(x, make(np.zeros(0, dtype), device, dtype)).shape == (0, 2)
    raises(RuntimeError, "Expect a 1D vector, but got shape [2, 2]", lambda: ctorch.cartesian_prod(x, ctorch.ones(2, 2)))
    raises(RuntimeError, "meshgrid expects a non-empty TensorList", lambda: ctorch.cartesian_prod())


def test_meshgrid_cartesian_grad(rng):
    x, y = leaf(rng, 3), leaf(rng, 2)
    g = ctorch.meshgrid(x, y, indexing="xy")
    assert [t.grad_fn.name() for t in g] == ["ExpandBackward0", "ExpandBackward0"]
    assert ctorch.cartesian_prod(x, y).grad_fn.name() == "StackBackward0"
    assert gradcheck(lambda a, b: ctorch.meshgrid(a, b, indexing="xy"), (x, y))
    assert gradcheck(lambda a, b: ctorch.cartesian_prod(a, b), (x, y))


# ---------------------------------------------------------------------------------------------
# atleast_nd / column_stack
def test_atleast(device, rng):
    arrs = [rand((), "float32", rng), rand((3,), "float32", rng), rand((2, 3), "float32", rng),
            rand((2, 1, 3), "float32", rng)]
    ts = [make(a, device, "float32") for a in arrs]
    for fn, npfn in ((ctorch.atleast_1d, np.atleast_1d), (ctorch.atleast_2d, np.atleast_2d),
                     (ctorch.atleast_3d, np.atleast_3d)):
        for t, a in zip(ts, arrs):
            r = fn(t)
            assert_close(r, npfn(a))
            if r.dim() == t.dim():
                assert r is t
            else:
                assert r.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
        several = fn(*ts)
        assert isinstance(several, tuple) and [tuple(s.shape) for s in several] == [npfn(a).shape for a in arrs]
        assert [tuple(s.shape) for s in fn(ts)] == [npfn(a).shape for a in arrs]
    assert ctorch.atleast_1d() == ()
    with pytest.raises(TypeError, match=r"^atleast_1d\(\) received an invalid combination of arguments - got \(int\)"):
        ctorch.atleast_1d(3)
    x = leaf(rng, 3)
    assert ctorch.atleast_2d(x).grad_fn.name() == "UnsqueezeBackward0"
    assert gradcheck(lambda a: ctorch.atleast_3d(a), (x,))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_column_stack(device, dtype, rng):
    a, b, c = rand((3,), dtype, rng), rand((3, 2), dtype, rng), rand((), dtype, rng)
    out = ctorch.column_stack((make(a, device, dtype), make(b, device, dtype, transposed=True)))
    assert_close(out, np.column_stack((a, b)))
    assert_close(ctorch.column_stack([make(c, device, dtype), make(a[:1], device, dtype)]), np.column_stack((c, a[:1])))
    res = ctorch.empty(0, dtype=ctorch.float64, device=device)
    assert ctorch.column_stack((make(a, device, dtype),), out=res) is res
    assert_close(res, np.column_stack((a,)).astype(np.float64))


def test_column_stack_errors_grad(rng):
    raises(RuntimeError, "column_stack expects a non-empty TensorList", lambda: ctorch.column_stack(()))
    raises(RuntimeError, "Tensors must have same number of dimensions: got 3 and 2",
           lambda: ctorch.column_stack((ctorch.ones(3, 2, 2), ctorch.ones(3, 2))))
    raises(TypeError, "torch.cat(): input types can't be cast to the desired output type Long",
           lambda: ctorch.column_stack((ctorch.ones(3),), out=ctorch.empty(0, dtype=ctorch.int64)))
    x, y = leaf(rng, 3), leaf(rng, 3, 2)
    assert ctorch.column_stack((x, y)).grad_fn.name() == "CatBackward0"
    assert gradcheck(lambda a, b: ctorch.column_stack((a, b)), (x, y))


# ---------------------------------------------------------------------------------------------
# diff
@pytest.mark.parametrize("dtype", DTYPES + ["bool", "uint8"])
@pytest.mark.parametrize("n,dim", [(1, -1), (2, 0), (0, 1), (7, 1)])
def test_diff(device, dtype, n, dim, rng):
    arr = rand((4, 5), dtype, rng)
    t = make(arr, device, dtype, transposed=True)
    expected = np.diff(arr, n=n, axis=dim) if dtype != "bool" else arr
    if dtype == "bool":
        for _ in range(min(n, arr.shape[dim])):
            expected = np.logical_xor(np.take(expected, range(1, expected.shape[dim]), dim),
                                      np.take(expected, range(expected.shape[dim] - 1), dim))
    r = ctorch.diff(t, n=n, dim=dim)
    assert r.dtype == t.dtype
    assert_close(r, expected)
    assert_close(t.diff(n, dim), expected)


def test_diff_prepend_append(device, rng):
    arr, pre, app = rand((2, 3), "float32", rng), rand((2, 1), "int64", rng), rand((2, 2), "float32", rng)
    t = make(arr, device, "float32")
    r = ctorch.diff(t, dim=1, prepend=make(pre, device, "int64"), append=make(app, device, "float32"))
    assert_close(r, np.diff(arr, axis=1, prepend=pre, append=app))
    assert_close(t.diff(2, 1, None, make(app, device, "float32")), np.diff(arr, n=2, axis=1, append=app))
    out = ctorch.empty(0, dtype=ctorch.float64, device=device)
    assert ctorch.diff(t, out=out) is out
    assert_close(out, np.diff(arr).astype(np.float64))
    e = ctorch.diff(ctorch.zeros(0, device=device))
    assert e.shape == (0,)


def test_diff_errors_grad(rng):
    x = ctorch.arange(3.0)
    raises(RuntimeError, "diff expects input to be at least one-dimensional", lambda: ctorch.diff(ctorch.tensor(1.0)))
    raises(RuntimeError, "order must be non-negative but got -1", lambda: ctorch.diff(x, n=-1))
    raises(IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got 1)", lambda: x.diff(dim=1))
    raises(TypeError, "diff(): argument 'prepend' must be Tensor, not float", lambda: ctorch.diff(x, prepend=1.0))
    raises(RuntimeError, "diff expects prepend or append to be the same dimension as input",
           lambda: ctorch.diff(x, prepend=ctorch.tensor(1.0)))
    raises(RuntimeError, "diff expects the shape of tensor to prepend or append to match that of input except along "
           "the differencing dimension; input.size(0) = 2, but got tensor.size(0) = 3",
           lambda: ctorch.diff(ctorch.zeros(2, 3), prepend=ctorch.zeros(3, 3)))
    raises(RuntimeError, "result type Float can't be cast to the desired output type Long",
           lambda: ctorch.diff(x, out=ctorch.empty(0, dtype=ctorch.int64)))
    a, p = leaf(rng, 3, 4), leaf(rng, 3, 1)
    assert ctorch.diff(a).grad_fn.name() == "SubBackward0"
    assert gradcheck(lambda u, v: ctorch.diff(u, n=2, dim=1, prepend=v), (a, p))


# ---------------------------------------------------------------------------------------------
# trace
@pytest.mark.parametrize("dtype,result", [("float32", "float32"), ("float64", "float64"), ("int32", "int64"),
                                          ("uint8", "int64"), ("float16", "float16")])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2), (0, 3)])
def test_trace(device, dtype, result, shape, rng):
    arr = np.abs(rand(shape, dtype, rng)) if dtype == "uint8" else rand(shape, dtype, rng)
    t = make(arr, device, dtype, transposed=True)
    r = ctorch.trace(t)
    assert r.dtype == getattr(ctorch, result) and r.shape == ()
    assert_close(r, np.trace(arr.astype(np.float64)))
    assert_close(t.trace(), np.trace(arr.astype(np.float64)))


def test_trace_errors_grad(rng):
    raises(RuntimeError, "trace: expected a matrix, but got tensor with dim 1", lambda: ctorch.trace(ctorch.ones(3)))
    raises(RuntimeError, "trace: expected a matrix, but got tensor with dim 3", lambda: ctorch.ones(2, 2, 2).trace())
    raises(NotImplementedError, "\"trace\" not implemented for 'Bool'",
           lambda: ctorch.trace(ctorch.ones(2, 3, dtype=ctorch.bool)))
    a = leaf(rng, 3, 4)
    assert ctorch.trace(a).grad_fn.name() == "TraceBackward0"
    assert gradcheck(lambda u: ctorch.trace(u), (a,))
    assert gradcheck(lambda u: u.trace(), (leaf(rng, 4, 2),))


# ---------------------------------------------------------------------------------------------
# tensordot
TENSORDOT = [
    ((2, 3, 4), (3, 4, 5), 2, 2),
    ((2, 3), (3, 2), 1, 1),
    ((2, 3), (4,), 0, 0),
    ((2, 3, 4), (4, 2, 3), ([1, 2], [2, 0]), ([1, 2], [2, 0])),
    ((2, 3), (2, 3), [[0, 1], [0, 1]], ([0, 1], [0, 1])),
    ((2, 1), (3, 2), ([1], [0]), None),  # a size-1 contracted dim meets b's sum
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("sa,sb,dims,npdims", TENSORDOT)
def test_tensordot(device, dtype, sa, sb, dims, npdims, rng):
    a, b = rand(sa, dtype, rng), rand(sb, dtype, rng)
    ta, tb = make(a, device, dtype, transposed=True), make(b, device, dtype)
    expected = np.tensordot(a, b, npdims) if npdims is not None else np.tensordot(a.sum(1), b.sum(0), 0)
    assert_close(ctorch.tensordot(ta, tb, dims=dims), expected)


def test_tensordot_forms(device, rng):
    a, b = rand((2, 3), "float32", rng), rand((3, 2), "float32", rng)
    ta, tb = make(a, device, "float32"), make(b, device, "float32")
    assert_close(ctorch.tensordot(ta, tb, dims=ctorch.tensor([[1], [0]])), a @ b)
    assert_close(ctorch.tensordot(ta, tb, ctorch.tensor(1)), a @ b)
    assert_close(ctorch.tensordot(ta, ta), np.tensordot(a, a))
    out = ctorch.empty(0, device=device)
    assert ctorch.tensordot(ta, tb, 1, out=out) is out
    assert_close(out, a @ b)


def test_tensordot_errors_grad(rng):
    x, y = ctorch.ones(3), ctorch.ones(4)
    raises(RuntimeError, "tensordot expects dims >= 0, but got dims=-1", lambda: ctorch.tensordot(x, x, dims=-1))
    raises(RuntimeError, "tensordot expects dims < ndim_a or ndim_b, but got dims=2", lambda: ctorch.tensordot(x, x))
    raises(RuntimeError, "contracted dimensions need to match, but first has size 3 in dim -1 and second has size 4 in "
           "dim 0", lambda: ctorch.tensordot(x, y, dims=1))
    raises(RuntimeError, "both dimension lists should have same length", lambda: ctorch.tensordot(x, y, dims=([0], [])))
    raises(RuntimeError, "both inputs should have same dtype", lambda: ctorch.tensordot(x, x.double(), dims=1))
    raises(RuntimeError, "dim 0 appears multiple times in the list of dims",
           lambda: ctorch.tensordot(ctorch.ones(3, 3), ctorch.ones(3, 3), dims=([0, 0], [0, 1])))
    raises(RuntimeError, "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
           "containing two lists, but got dims=1.0", lambda: ctorch.tensordot(x, x, dims=1.0))
    raises(AssertionError, "dims tensor must have size 2 in first dimension, got 3",
           lambda: ctorch.tensordot(x, x, dims=ctorch.ones(3, 1, dtype=ctorch.int64)))
    raises(RuntimeError, "tensordot: Expected the output tensor to have dtype Float, but got an output tensor with "
           "dtype Double", lambda: ctorch.tensordot(x, x, 1, out=ctorch.empty(0, dtype=ctorch.float64)))
    a, b = leaf(rng, 2, 3, 4), leaf(rng, 4, 3)
    assert ctorch.tensordot(a, b, ([1, 2], [1, 0])).grad_fn.name() == "ViewBackward0"
    assert gradcheck(lambda u, v: ctorch.tensordot(u, v, ([1, 2], [1, 0])), (a, b))


# ---------------------------------------------------------------------------------------------
# kron
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "float16"])
@pytest.mark.parametrize("sa,sb", [((2, 3), (2, 2)), ((3,), (2,)), ((), (2, 3)), ((2,), (2, 3, 2))])
def test_kron(device, dtype, sa, sb, rng):
    a, b = rand(sa, dtype, rng), rand(sb, dtype, rng)
    r = ctorch.kron(make(a, device, dtype, transposed=True), make(b, device, dtype))
    assert r.dtype == getattr(ctorch, dtype)
    assert_close(r, np.kron(a, b))
    assert_close(make(a, device, dtype).kron(make(b, device, dtype)), np.kron(a, b))


def test_kron_promotion_out_grad(device, rng):
    a, b = rand((2, 2), "float32", rng), rand((3,), "int64", rng)
    r = ctorch.kron(make(a, device, "float32"), make(b, device, "int64"))
    assert r.dtype == ctorch.float32
    assert_close(r, np.kron(a, b))
    out = ctorch.empty(0, dtype=ctorch.float64, device=device)
    assert ctorch.kron(make(a, device, "float32"), make(a, device, "float32"), out=out) is out
    assert_close(out, np.kron(a, a).astype(np.float64))
    raises(RuntimeError, "result type Float can't be cast to the desired output type Long",
           lambda: ctorch.kron(ctorch.ones(2), ctorch.ones(2), out=ctorch.empty(0, dtype=ctorch.int64)))
    x, y = leaf(rng, 2, 3, device=device), leaf(rng, 3, 1, 2, device=device)
    assert ctorch.kron(x, y).grad_fn.name() == "UnsafeViewBackward0"
    assert gradcheck(lambda u, v: ctorch.kron(u, v), (x, y))


# ---------------------------------------------------------------------------------------------
# cross / linalg.cross
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
def test_cross(device, dtype, rng):
    a, b = rand((4, 3), dtype, rng), rand((4, 3), dtype, rng)
    ta, tb = make(a, device, dtype, transposed=True), make(b, device, dtype)
    assert_close(ctorch.cross(ta, tb, dim=1), np.cross(a, b))
    assert_close(ta.cross(tb, -1), np.cross(a, b))
    assert_close(ctorch.linalg.cross(ta, tb), np.cross(a, b))
    assert_close(ctorch.cross(ta.T, tb.T, dim=0), np.cross(a, b).T)
    c = rand((1, 3), dtype, rng)  # broadcasting
    assert_close(ctorch.linalg.cross(make(c, device, dtype), tb), np.cross(c, b))
    out = ctorch.empty(0, dtype=getattr(ctorch, dtype), device=device)
    assert ctorch.linalg.cross(ta, tb, out=out) is out
    assert_close(out, np.cross(a, b))


def test_cross_default_dim_and_errors():
    a, b = ctorch.eye(3)[:2].T.contiguous(), ctorch.ones(3, 2)  # first dim of size 3 is dim 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(ctorch.cross(a, b), np.cross(to_numpy(a), to_numpy(b), axis=0))
        raises(RuntimeError, "no dimension of size 3 in input", lambda: ctorch.cross(ctorch.ones(2, 2), ctorch.ones(2, 2)))
    raises(RuntimeError, "linalg.cross: inputs must have the same number of dimensions.",
           lambda: ctorch.linalg.cross(ctorch.ones(3), ctorch.ones(2, 3)))
    raises(RuntimeError, "linalg.cross: inputs dimension -1 must have length 3. Got 4 and 4",
           lambda: ctorch.linalg.cross(ctorch.ones(2, 4), ctorch.ones(2, 4)))
    raises(RuntimeError, "linalg.cross: inputs dimension 0 must have length 3. Got 2 and 2",
           lambda: ctorch.cross(ctorch.ones(2, 3), ctorch.ones(2, 3), dim=0))
    raises(RuntimeError, "expected scalar type Float but found Double",
           lambda: ctorch.linalg.cross(ctorch.ones(2, 3), ctorch.ones(2, 3).double()))
    raises(NotImplementedError, "\"cross\" not implemented for 'Bool'",
           lambda: ctorch.linalg.cross(ctorch.ones(2, 3).bool(), ctorch.ones(2, 3).bool()))
    raises(RuntimeError, "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 0",
           lambda: ctorch.linalg.cross(ctorch.ones(4, 3), ctorch.ones(5, 3)))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
           lambda: ctorch.linalg.cross(ctorch.ones(4, 3), ctorch.ones(4, 3), dim=2))
    raises(TypeError, "linalg_cross() takes 2 positional arguments but 3 were given",
           lambda: ctorch.linalg.cross(ctorch.ones(3), ctorch.ones(3), 0))
    raises(RuntimeError, "Expected out tensor to have dtype float, but got double instead",
           lambda: ctorch.cross(ctorch.ones(3), ctorch.ones(3), 0, out=ctorch.empty(0, dtype=ctorch.float64)))


def test_cross_grad(rng):
    a, b, c = leaf(rng, 4, 3), leaf(rng, 4, 3), leaf(rng, 1, 3)
    assert ctorch.cross(a, b, dim=1).grad_fn.name() == "LinalgCrossBackward0"
    assert ctorch.linalg.cross(a, b).grad_fn.name() == "LinalgCrossBackward0"
    assert gradcheck(lambda u, v: ctorch.cross(u, v, dim=1), (a, b))
    assert gradcheck(lambda u, v: ctorch.linalg.cross(u, v), (c, b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(lambda u, v: ctorch.cross(u, v), (c, b.T.contiguous()[:, :1].expand(3, 3).contiguous()
                                                            .detach().requires_grad_()))


# ---------------------------------------------------------------------------------------------
# block_diag
def test_block_diag(device, rng):
    a, b, c = rand((), "int64", rng), rand((2,), "int32", rng), rand((2, 3), "float32", rng)
    r = ctorch.block_diag(make(a, device, "int64"), make(b, device, "int32"), make(c, device, "float32", True))
    expected = np.zeros((4, 6), np.float32)
    expected[0, 0] = a
    expected[1, 1:3] = b
    expected[2:4, 3:6] = c
    assert r.dtype == ctorch.float32
    assert_close(r, expected)
    e = ctorch.block_diag(ctorch.ones(0, 3, device=device), ctorch.ones(2, 0, device=device))
    assert e.shape == (2, 3) and to_numpy(e).sum() == 0
    z = ctorch.block_diag()
    assert z.shape == (1, 0) and z.dtype == ctorch.float32
    assert ctorch.block_diag(ctorch.ones(2, dtype=ctorch.bool, device=device)).dtype == ctorch.bool
    raises(RuntimeError, "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 0 has 3 dimensions",
           lambda: ctorch.block_diag(ctorch.ones(2, 2, 2)))
    raises(TypeError, "expected Tensor as element 0 in argument 0, but got list", lambda: ctorch.block_diag([a]))


def test_block_diag_grad(rng):
    a, b, c = leaf(rng, 2, 2), leaf(rng, 3), leaf(rng)
    assert ctorch.block_diag(a, b).grad_fn.name() == "BlockDiagBackward0"
    assert gradcheck(lambda *ts: ctorch.block_diag(*ts), (a, b, c))


# ---------------------------------------------------------------------------------------------
# rot90
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("k,dims", [(1, [0, 1]), (2, [0, 1]), (3, [1, 0]), (-1, [0, 1]), (4, [0, 1]), (5, [2, 0])])
def test_rot90(device, dtype, k, dims, rng):
    arr = rand((2, 3, 4), dtype, rng)
    t = make(arr, device, dtype, transposed=True)
    assert_close(ctorch.rot90(t, k, dims), np.rot90(arr, k, dims))
    assert_close(t.rot90(k, dims), np.rot90(arr, k, dims))
    if dims == [0, 1]:
        assert_close(ctorch.rot90(t, k), np.rot90(arr, k))
    m = ctorch.arange(6, device=device).reshape(2, 3)
    assert ctorch.rot90(m).stride() == (1, 3)  # a transposed view of the flip, as PyTorch


def test_rot90_errors_grad(rng):
    m = ctorch.ones(2, 3)
    raises(RuntimeError, "expected total rotation dims == 2, but got dims = 1", lambda: ctorch.rot90(m, 1, [0]))
    raises(RuntimeError, "expected rotation dims to be different, but got dim0 = 0 and dim1 = 0",
           lambda: ctorch.rot90(m, 1, [0, 0]))
    raises(RuntimeError, "expected rotation dims to be different, but got dim0 = 0 and dim1 = -2",
           lambda: ctorch.rot90(m, 1, [0, -2]))
    raises(RuntimeError, "expected total dims >= 2, but got total dims = 1", lambda: ctorch.rot90(ctorch.ones(3)))
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
           lambda: ctorch.rot90(m, 1, [0, 2]))
    a = leaf(rng, 2, 3)
    assert ctorch.rot90(a, 0).grad_fn.name() == "Rot90Backward0"
    assert gradcheck(lambda u: ctorch.rot90(u, 3, [1, 0]), (a,))
    assert gradcheck(lambda u: u.rot90(2), (a,))


# ---------------------------------------------------------------------------------------------
# tril_indices / triu_indices
@pytest.mark.parametrize("row,col,offset", [(3, 3, 0), (3, 4, 1), (4, 3, -1), (0, 3, 0), (3, 5, -5), (2, 2, 9)])
def test_triangle_indices(device, row, col, offset):
    for fn, npfn in ((ctorch.tril_indices, np.tril_indices), (ctorch.triu_indices, np.triu_indices)):
        r = fn(row, col, offset, device=device)
        assert r.dtype == ctorch.int64 and r.device.type == device
        assert_close(r, np.stack(npfn(row, offset, col)).astype(np.int64).reshape(2, -1))
        assert fn(row, col, offset, dtype=ctorch.int32, device=device).dtype == ctorch.int32
    raises(RuntimeError, "row must be non-negative, got-1", lambda: ctorch.tril_indices(-1, 3))
    raises(RuntimeError, "col must be non-negative, got-1", lambda: ctorch.triu_indices(3, -1))
    raises(NotImplementedError, "\"tril_indices\" not implemented for 'Float'",
           lambda: ctorch.tril_indices(3, 3, dtype=ctorch.float32))


# ---------------------------------------------------------------------------------------------
# take_along_dim
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
def test_take_along_dim(device, dtype, rng):
    arr = rand((3, 4), dtype, rng)
    t = make(arr, device, dtype, transposed=True)
    idx = rng.integers(0, 4, size=(3, 2))
    ti = ctorch.tensor(idx, device=device)
    assert_close(ctorch.take_along_dim(t, ti, dim=1), np.take_along_axis(arr, idx, 1))
    assert_close(t.take_along_dim(ti, -1), np.take_along_axis(arr, idx, 1))
    flat = rng.integers(-12, 12, size=(5,)) % 12
    assert_close(ctorch.take_along_dim(t, ctorch.tensor(flat, device=device)), arr.reshape(-1)[flat])
    # input and indices broadcast in the other dims
    col = rng.integers(0, 3, size=(1, 4))
    assert_close(ctorch.take_along_dim(t, ctorch.tensor(col, device=device), 0), np.take_along_axis(arr, col, 0))
    one = arr[:1]
    assert_close(ctorch.take_along_dim(make(one, device, dtype), ti, 1),
                 np.take_along_axis(np.broadcast_to(one, (3, 4)), idx, 1))
    out = ctorch.empty(0, dtype=getattr(ctorch, dtype), device=device)
    assert ctorch.take_along_dim(t, ti, 1, out=out) is out
    assert_close(out, np.take_along_axis(arr, idx, 1))


def test_take_along_dim_errors_grad(rng):
    m = ctorch.ones(2, 3)
    raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
           lambda: ctorch.take_along_dim(m, ctorch.zeros(2, 3, dtype=ctorch.int64), dim=2))
    raises(RuntimeError, "torch.take_along_dim(): input and indices should have the same number of dimensions, but got "
           "2 dimensions for input, and 1 dimensions for indices",
           lambda: ctorch.take_along_dim(m, ctorch.zeros(3, dtype=ctorch.int64), dim=1))
    raises(RuntimeError, "torch.take_along_dim(): dtype of indices should be Long but got Int",
           lambda: ctorch.take_along_dim(m, ctorch.zeros(2, 3, dtype=ctorch.int32), dim=1))
    raises(RuntimeError, "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0",
           lambda: ctorch.take_along_dim(m, ctorch.zeros(3, 2, dtype=ctorch.int64), dim=1))
    raises(RuntimeError, "index 6 is out of bounds for dimension 0 with size 6",
           lambda: ctorch.take_along_dim(m, ctorch.tensor([6])))
    raises(RuntimeError, "Expected out tensor to have dtype float, but got double instead",
           lambda: ctorch.take_along_dim(m, ctorch.tensor([1]), out=ctorch.empty(0, dtype=ctorch.float64)))
    a = leaf(rng, 3, 4)
    idx = ctorch.tensor([[0, 0], [3, 1], [2, 2]])
    assert ctorch.take_along_dim(a, idx, 1).grad_fn.name() == "GatherBackward0"
    assert gradcheck(lambda u: ctorch.take_along_dim(u, idx, 1), (a,))
    assert gradcheck(lambda u: ctorch.take_along_dim(u, ctorch.tensor([5, 5, 0])), (a,))


# ---------------------------------------------------------------------------------------------
# cdist
def np_cdist(x1, x2, p):
    d = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        return (d != 0).sum(-1).astype(x1.dtype)
    if np.isinf(p):
        return d.max(-1) if d.shape[-1] else d.sum(-1)
    return (d ** p).sum(-1) ** (1.0 / p)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, 0.5, float("inf")])
def test_cdist(device, dtype, p, rng):
    x1, x2 = rng.standard_normal((2, 4, 3)).astype(dtype), rng.standard_normal((5, 3)).astype(dtype)
    x1[0, 1] = x2[2]  # a zero distance
    r = ctorch.cdist(make(x1, device, dtype), make(x2, device, dtype, transposed=True), p=p)
    assert r.shape == (2, 4, 5) and r.dtype == getattr(ctorch, dtype)
    np.testing.assert_allclose(to_numpy(r), np_cdist(x1, x2, p), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", [None, "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"])
def test_cdist_mm_and_broadcast(device, mode, rng):
    x1, x2 = rng.standard_normal((2, 1, 30, 3)), rng.standard_normal((3, 26, 3))  # > 25 rows: matrix-product path
    r = ctorch.cdist(make(x1, device, "float64"), make(x2, device, "float64"), compute_mode=mode)
    assert r.shape == (2, 3, 30, 26)
    np.testing.assert_allclose(to_numpy(r), np_cdist(x1, x2, 2.0), rtol=1e-9, atol=1e-9)
    assert ctorch.cdist(ctorch.ones(0, 3, device=device), ctorch.ones(2, 3, device=device)).shape == (0, 2)
    z = ctorch.cdist(ctorch.ones(2, 0, device=device), ctorch.ones(3, 0, device=device))
    assert z.shape == (2, 3) and to_numpy(z).sum() == 0


def test_cdist_errors_grad(rng):
    m = ctorch.ones(2, 3)
    raises(RuntimeError, "cdist only supports at least 2D tensors, X1 got: 1D", lambda: ctorch.cdist(ctorch.ones(3), m))
    raises(RuntimeError, "X1 and X2 must have the same number of columns. X1: 3 X2: 4",
           lambda: ctorch.cdist(m, ctorch.ones(2, 4)))
    raises(RuntimeError, "cdist only supports non-negative p values", lambda: ctorch.cdist(m, m, p=-1))
    raises(RuntimeError, "cdist only supports floating-point dtypes, X1 got: Long", lambda: ctorch.cdist(m.long(), m))
    raises(NotImplementedError, "\"cdist\" not implemented for 'Half'", lambda: ctorch.cdist(m.half(), m.half()))
    raises(RuntimeError, "expected scalar type Float but found Double", lambda: ctorch.cdist(m, m.double()))
    raises(RuntimeError, "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0",
           lambda: ctorch.cdist(ctorch.ones(2, 2, 3), ctorch.ones(3, 4, 3)))
    raises(ValueError, "foo is not a valid value for compute_mode", lambda: ctorch.cdist(m, m, compute_mode="foo"))
    x1, x2 = leaf(rng, 2, 3, 2), leaf(rng, 4, 2)
    assert ctorch.cdist(x1, x2).grad_fn.name() == "CdistBackward0"
    assert ctorch.cdist(leaf(rng, 26, 2), x2).grad_fn.name() == "ViewBackward0"  # PyTorch's matrix-product path
    for p in (1.0, 2.0, 3.0, 1.5, float("inf"), 0.0):
        assert gradcheck(lambda u, v: ctorch.cdist(u, v, p=p), (x1, x2))
    assert gradcheck(lambda u, v: ctorch.cdist(u, v, compute_mode="use_mm_for_euclid_dist"), (x1, x2))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pdist(device, dtype, rng):
    from ctorch.autograd import gradgradcheck
    import ctorch.nn.functional as F
    x = rng.standard_normal((5, 3)).astype(dtype)
    x[3] = x[1]  # a zero distance
    iu = np.triu_indices(5, 1)
    for p in (0.0, 1.0, 2.0, 0.5, 3.0, float("inf")):
        r = F.pdist(make(x, device, dtype), p)
        assert r.shape == (10,) and r.dtype == getattr(ctorch, dtype)
        np.testing.assert_allclose(to_numpy(r), np_cdist(x, x, p)[iu], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(to_numpy(ctorch.pdist(make(x, device, dtype, transposed=True))),
                               np_cdist(x, x, 2.0)[iu], rtol=1e-4, atol=1e-5)
    assert ctorch.pdist(ctorch.ones(1, 3, device=device)).shape == (0,)
    assert to_numpy(ctorch.pdist(ctorch.ones(3, 0, device=device))).tolist() == [0, 0, 0]
    if dtype == "float32":
        return
    u = ctorch.tensor([[0.0, 0], [1, -1], [0, 0], [2, 1]], dtype=ctorch.float64, device=device, requires_grad=True)
    ctorch.pdist(u, float("inf")).sum().backward()  # each tie gets the gradient (PyTorch's pdist)
    assert_close(u.grad, [[-2, 1], [2, -3], [-2, 1], [2, 1]])
    xt = leaf(rng, 4, 3, device=device)
    for p in (1.0, 2.0, 0.5, 3.0, float("inf"), 0.0):
        assert ctorch.pdist(xt, p).grad_fn.name() == "PdistBackward0"
        assert gradcheck(lambda u: F.pdist(u, p), (xt,))
    assert gradgradcheck(lambda u: ctorch.pdist(u, 1.5), (xt,))


def test_pdist_errors():
    raises(RuntimeError, "pdist only supports 2D tensors, got: 1D", lambda: ctorch.pdist(ctorch.ones(3)))
    raises(RuntimeError, "pdist only supports floating-point dtypes", lambda: ctorch.pdist(ctorch.ones(3, 2).long()))
    raises(RuntimeError, "pdist only supports non-negative p values", lambda: ctorch.pdist(ctorch.ones(3, 2), -1))
    raises(NotImplementedError, "\"pdist\" not implemented for 'Half'", lambda: ctorch.pdist(ctorch.ones(3, 2).half()))


# ---------------------------------------------------------------------------------------------
# cov / corrcoef
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("shape", [(3, 5), (5,), (1, 4)])
def test_cov_corrcoef(device, dtype, shape, rng):
    arr = rand(shape, dtype, rng)
    arr.flat[0] += 7  # no constant rows
    t = make(arr, device, dtype, transposed=True)
    c = ctorch.cov(t)
    assert c.dtype == (ctorch.float32 if dtype == "int64" else getattr(ctorch, dtype))
    np.testing.assert_allclose(to_numpy(c), np.cov(arr.astype(np.float64)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_numpy(t.cov(correction=0)), np.cov(arr.astype(np.float64), ddof=0), rtol=1e-5,
                               atol=1e-5)
    fw = rng.integers(1, 4, size=shape[-1])
    aw = rng.random(shape[-1]) + 0.1
    got = ctorch.cov(t, correction=2, fweights=ctorch.tensor(fw, device=device),
                     aweights=ctorch.tensor(aw, device=device))
    assert got.dtype == ctorch.float64  # float64 aweights promote
    np.testing.assert_allclose(to_numpy(got), np.cov(arr.astype(np.float64), ddof=2, fweights=fw, aweights=aw),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_numpy(ctorch.corrcoef(t)), np.corrcoef(arr.astype(np.float64)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_numpy(t.corrcoef()), np.corrcoef(arr.astype(np.float64)), rtol=1e-5, atol=1e-5)


def test_cov_errors_grad(rng):
    m = ctorch.ones(2, 3)
    raises(RuntimeError, "cov(): expected input to have two or fewer dimensions but got an input with 3 dimensions",
           lambda: ctorch.cov(ctorch.ones(2, 2, 2)))
    raises(NotImplementedError, "cov(): bool dtype is not supported for input", lambda: ctorch.cov(m.bool()))
    raises(RuntimeError, "cov(): expected fweights to have integral dtype but got fweights with Float dtype",
           lambda: ctorch.cov(m, fweights=ctorch.ones(3)))
    raises(RuntimeError, "cov(): expected fweights to have one or fewer dimensions but got fweights with 2 dimensions",
           lambda: ctorch.cov(m, fweights=ctorch.ones(3, 1, dtype=ctorch.int64)))
    raises(RuntimeError, "cov(): expected fweights to have the same numel as there are observations in the input but "
           "got 2 != 3", lambda: ctorch.cov(m, fweights=ctorch.ones(2, dtype=ctorch.int64)))
    raises(RuntimeError, "cov(): fweights cannot be negative", lambda: ctorch.cov(m, fweights=ctorch.tensor([1, -1, 1])))
    raises(RuntimeError, "cov(): expected aweights to have floating point dtype but got aweights with Long dtype",
           lambda: ctorch.cov(m, aweights=ctorch.ones(3, dtype=ctorch.int64)))
    raises(RuntimeError, "cov(): aweights cannot be negative", lambda: ctorch.cov(m, aweights=ctorch.tensor([1.0, -1, 1])))
    raises(RuntimeError, "cov(): weights sum to zero, can't be normalized", lambda: ctorch.cov(m, aweights=ctorch.zeros(3)))
    raises(TypeError, "cov(): argument 'correction' must be int, not float", lambda: ctorch.cov(m, correction=1.5))
    raises(RuntimeError, "corrcoef(): expected input to have two or fewer dimensions but got an input with 3 dimensions",
           lambda: ctorch.corrcoef(ctorch.ones(2, 2, 2)))
    with pytest.warns(UserWarning, match=r"^cov\(\): degrees of freedom is <= 0"):
        assert ctorch.cov(ctorch.ones(2, 1)).shape == (2, 2)
    a = leaf(rng, 3, 5)
    assert ctorch.cov(a).grad_fn.name() == "SqueezeBackward0"
    assert ctorch.corrcoef(a).grad_fn.name() == "ClampBackward1"
    aw = ctorch.tensor(rng.random(5) + 0.5, dtype=ctorch.float64, requires_grad=True)
    assert gradcheck(lambda u, w: ctorch.cov(u, fweights=ctorch.tensor([1, 2, 1, 3, 1]), aweights=w), (a, aw))
    assert gradcheck(lambda u: ctorch.corrcoef(u), (a,))


# ---------------------------------------------------------------------------------------------
# every composite on the device records through its parts (or its own node) there too
def test_composite_grads_on_device(device, rng):
    a, b = leaf(rng, 3, 3, device=device), leaf(rng, 3, 3, device=device)
    for fn in (lambda u, v: ctorch.kron(u, v), lambda u, v: ctorch.linalg.cross(u, v),
               lambda u, v: ctorch.cdist(u, v, p=1.5), lambda u, v: ctorch.block_diag(u, v),
               lambda u, v: ctorch.tensordot(u, v, 1), lambda u, v: ctorch.rot90(u) * ctorch.trace(v),
               lambda u, v: ctorch.cov(u) + ctorch.diff(v, prepend=u)[:, :3]):
        assert gradcheck(fn, (a, b))
