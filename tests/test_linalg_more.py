"""torch.linalg's norms and chained products (csrc/linalg_more.c) against NumPy: vector_norm,
matrix_norm, norm's dispatch, vecdot, multi_dot, matrix_power, diagonal, and torch.dist, inner,
addr, chain_matmul, renorm; on every device, float32/float64, batched, empty and transposed
inputs, gradients (gradcheck in float64, PyTorch's node names) and PyTorch's errors."""
import math
import warnings

import numpy as np
import pytest

import ctorch
from ctorch.autograd import gradcheck
from conftest import assert_close

L = ctorch.linalg
INF = float("inf")
FLOATS = ["float32", "float64"]


def T(arr, device, dtype="float64", grad=False):
    return ctorch.tensor(np.asarray(arr), dtype=getattr(ctorch, dtype), device=device, requires_grad=grad)


def transposed(arr, device, dtype):
    """arr as the transpose of a contiguous tensor (last two dims swapped in memory)."""
    return T(np.ascontiguousarray(np.swapaxes(arr, -1, -2)), device, dtype).transpose(-1, -2)


# --- vector_norm / matrix_norm / norm -------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_vector_norm(device, dtype, rng):
    a = rng.standard_normal((2, 3, 4))
    t = T(a, device, dtype)
    for ord_ in (2, 1, 3.5, INF, -INF, 0):
        assert_close(L.vector_norm(t, ord_), np.linalg.norm(a.ravel(), ord_), dtype)
    assert_close(L.vector_norm(t, 1, dim=(0, 2), keepdim=True), np.abs(a).sum(axis=(0, 2), keepdims=True), dtype)
    assert_close(L.vector_norm(t, dim=-1), np.linalg.norm(a, axis=-1), dtype)
    assert L.vector_norm(T(a, device, "float32"), dtype=ctorch.float64).dtype == ctorch.float64
    out = ctorch.empty(0, dtype=t.dtype, device=device)
    assert L.vector_norm(t, 2, dim=0, out=out) is out and tuple(out.shape) == (3, 4)
    assert_close(L.vector_norm(T(np.zeros((0, 3)), device, dtype)), 0.0, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_matrix_norm(device, dtype, layout, rng):
    a = rng.standard_normal((2, 3, 4))
    t = T(a, device, dtype) if layout == "contiguous" else transposed(a, device, dtype)
    for ord_ in ("fro", 1, -1, INF, -INF):
        expect = np.stack([np.linalg.norm(m, ord_) for m in a])
        assert_close(L.matrix_norm(t, ord_), expect, dtype)
        assert_close(L.matrix_norm(t, ord_, keepdim=True), expect[:, None, None], dtype)
    # dims in any order, keepdim with a middle dim
    expect = np.stack([np.linalg.norm(a[:, :, k], 1) for k in range(4)])
    assert_close(L.matrix_norm(t, 1, dim=(0, 1)), expect, dtype)
    assert_close(L.matrix_norm(t, INF, dim=(2, 0), keepdim=True),
                 np.stack([np.linalg.norm(a[:, j, :].T, INF) for j in range(3)])[None, :, None], dtype)
    # empty matrices give zeros, as PyTorch's
    for shape in ((2, 0, 3), (2, 3, 0), (0, 3, 3)):
        z = T(np.zeros(shape), device, dtype)
        assert_close(L.matrix_norm(z, 1), np.zeros(shape[:1]), dtype)


def test_norm_dispatch(device, rng):
    a = rng.standard_normal((3, 4))
    t = T(a, device)
    assert_close(L.norm(t), np.linalg.norm(a.ravel()))
    assert_close(L.norm(t, INF), np.linalg.norm(a, INF))  # 2-d with ord: a matrix norm
    assert_close(L.norm(t, 3, dim=1), np.linalg.norm(a, 3, axis=1))
    assert_close(L.norm(t, "fro", dim=(1, 0)), np.linalg.norm(a))
    assert_close(L.norm(t[0], INF), np.abs(a[0]).max())
    b = rng.standard_normal((2, 3, 4))
    assert_close(L.norm(T(b, device)), np.linalg.norm(b.ravel()))
    assert_close(L.norm(T(b, device), -1, dim=(0, 2)), np.stack([np.linalg.norm(b[:, j], -1) for j in range(3)]))
    assert_close(ctorch.dist(t, t[0] * 2, 3), np.linalg.norm((a - 2 * a[0]).ravel(), 3))
    assert_close(t.dist(t[1:2], 0), np.count_nonzero(a - a[1]))


def test_norm_errors(device):
    x = T(np.ones((3, 4)), device)
    cases = [
        (NotImplementedError, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long",
         lambda: L.vector_norm(ctorch.arange(3, device=device))),
        (NotImplementedError, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long",
         lambda: L.vector_norm(ctorch.arange(3, device=device), dim=3)),  # the dtype before the dim
        (NotImplementedError, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long",
         lambda: ctorch.arange(3, device=device).norm(2, 3)),
        (TypeError, "argument 'ord' (position 2) must be Number, not str", lambda: L.vector_norm(x, "fro")),
        (RuntimeError, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.",
         lambda: L.matrix_norm(x[0])),
        (RuntimeError, "linalg.matrix_norm: Order abc not supported.", lambda: L.matrix_norm(x, "abc")),
        (RuntimeError, "linalg.matrix_norm: Order 3.5 not supported.", lambda: L.matrix_norm(x, 3.5)),
        (RuntimeError, "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2",
         lambda: L.matrix_norm(x[None], dim=(0, 1, 2))),
        (RuntimeError, "linalg.matrix_norm: dims must be different. Got (0, 0)", lambda: L.matrix_norm(x, dim=(0, 0))),
        (NotImplementedError, "linalg.matrix_norm: Expected a floating point or complex tensor as input. Got Int",
         lambda: L.matrix_norm(x.int())),
        (RuntimeError, "linalg.matrix_norm: the dtype of the input (Double) should be convertible without narrowing "
         "to the specified dtype (Float)", lambda: L.matrix_norm(x, dtype=ctorch.float32)),
        (RuntimeError, "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.",
         lambda: L.norm(x[None], "fro")),
        (RuntimeError, "linalg.norm: If dim is specified, it must be of length 1 or 2. Got [0, 1, 2]",
         lambda: L.norm(x[None], dim=(0, 1, 2))),
        (RuntimeError, "linalg.matrix_norm: dim must be a 2-tuple. Got 1", lambda: L.norm(x, "fro", dim=1)),
        (NotImplementedError, "norm(): input dtype should be either floating point or complex. Got Long instead.",
         lambda: ctorch.dist(ctorch.arange(3, device=device), ctorch.arange(3, device=device))),
        (IndexError, "Dimension out of range", lambda: L.matrix_norm(x, dim=(0, 5))),
    ]
    for exc, msg, fn in cases:
        with pytest.raises(exc) as info:
            fn()
        assert msg in str(info.value), (msg, str(info.value))


# --- products ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_vecdot_inner_addr(device, dtype, rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 3))
    ta, tb = T(a, device, dtype), T(b, device, dtype)
    assert_close(L.vecdot(ta[:, None], tb), (a[:, None] * b).sum(-1), dtype)
    assert_close(L.vecdot(ta, tb[0], dim=0), (a * b[0]).sum(0), dtype)
    assert_close(ctorch.inner(ta, tb), np.inner(a, b), dtype)
    assert_close(ta.inner(tb[0]), np.inner(a, b[0]), dtype)
    assert_close(ctorch.inner(ta, T(2.0, device, dtype)), a * 2, dtype)
    assert_close(ctorch.inner(T(np.zeros((2, 0)), device, dtype), T(np.zeros((3, 0)), device, dtype)),
                 np.zeros((2, 3)), dtype)
    v1, v2, m = rng.standard_normal(2), rng.standard_normal(3), rng.standard_normal((2, 3))
    tv1, tv2 = T(v1, device, dtype), T(v2, device, dtype)
    assert_close(ctorch.addr(T(m, device, dtype), tv1, tv2, beta=0.5, alpha=2), 0.5 * m + 2 * np.outer(v1, v2),
                 dtype)
    assert_close(T(m[0], device, dtype).addr(tv1, tv2), m[0] + np.outer(v1, v2), dtype)  # input broadcast
    nan = T(np.full((2, 3), np.nan), device, dtype)
    assert_close(ctorch.addr(nan, tv1, tv2, beta=0), np.outer(v1, v2), dtype)  # beta == 0: input not read
    ints = ctorch.addr(ctorch.ones(2, 3, dtype=ctorch.int64, device=device), ctorch.arange(2, device=device),
                       ctorch.arange(3, device=device), beta=2, alpha=3)
    assert_close(ints, 2 + 3 * np.outer(np.arange(2), np.arange(3)))
    assert ctorch.addr(T(m, device, "float32"), tv1.double(), tv2.double()).dtype == ctorch.float64


def _chain(mats):
    out = mats[0]
    for m in mats[1:]:
        out = out @ m
    return out


@pytest.mark.parametrize("dtype", FLOATS)
def test_multi_dot_matrix_power(device, dtype, rng):
    shapes = [(5, 2), (2, 6), (6, 3), (3, 4)]
    mats = [rng.standard_normal(s) for s in shapes]
    ts = [T(m, device, dtype) for m in mats]
    assert_close(L.multi_dot(ts), _chain(mats), dtype)
    assert_close(L.multi_dot([ts[0][0]] + ts[1:]), _chain(mats)[0], dtype)  # 1-d first
    assert_close(L.multi_dot(ts[:-1] + [ts[-1][:, 0]]), _chain(mats)[:, 0], dtype)  # 1-d last
    assert_close(L.multi_dot([ts[1][0], ts[1][0]]), mats[1][0] @ mats[1][0], dtype)  # 0-d result
    assert_close(L.multi_dot([ts[0].T.contiguous().T, ts[1]]), mats[0] @ mats[1], dtype)
    assert_close(L.multi_dot([T(np.zeros((2, 0)), device, dtype), T(np.zeros((0, 3)), device, dtype)]),
                 np.zeros((2, 3)), dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(ctorch.chain_matmul(*ts), _chain(mats), dtype)
        assert ctorch.chain_matmul(ts[0]) is ts[0]
    a = rng.standard_normal((2, 3, 3))
    for layout in ("contiguous", "transposed"):
        t = T(a, device, dtype) if layout == "contiguous" else transposed(a, device, dtype)
        for n in (0, 1, 2, 5):
            assert_close(L.matrix_power(t, n), np.linalg.matrix_power(a, n), dtype)
    assert_close(L.matrix_power(T(np.zeros((0, 2, 2)), device, dtype), 3), np.zeros((0, 2, 2)), dtype)
    ints = ctorch.arange(4, device=device).reshape(2, 2)
    assert_close(L.matrix_power(ints, 3), np.linalg.matrix_power(np.arange(4).reshape(2, 2), 3))


def test_diagonal_renorm(device, rng):
    a = rng.standard_normal((2, 3, 4))
    t = T(a, device)
    assert_close(L.diagonal(t), np.diagonal(a, 0, -2, -1))
    d = L.diagonal(t, offset=1, dim1=0, dim2=2)
    assert_close(d, np.diagonal(a, 1, 0, 2))
    assert d.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()  # a view
    for p, dim, maxnorm in ((2, 0, 1.0), (1, -1, 2.5), (3, 1, 0.0)):
        norms = np.linalg.norm(np.moveaxis(a, dim, 0).reshape(a.shape[dim], -1), p, axis=1)
        scale = np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
        shape = [1] * 3
        shape[dim] = -1
        assert_close(ctorch.renorm(t, p, dim, maxnorm), a * scale.reshape(shape))
    c = t.clone()
    assert c.renorm_(2, 0, 1.0) is c
    assert_close(c, ctorch.renorm(t, 2, 0, 1.0).cpu().numpy())


def test_product_errors(device):
    x, m = T(np.ones((3, 4)), device), T(np.ones((4, 4)), device)
    v = T(np.ones(4), device)
    cases = [
        (RuntimeError, "linalg.vecdot: Expected x and y to have the same dtype, but found x of type Double and y of "
         "type Float instead", lambda: L.vecdot(x, v.float())),
        (RuntimeError, "multi_dot(): expected at least 2 tensors but got 1", lambda: L.multi_dot([v])),
        (RuntimeError, "multi_dot(): tensors 0 and 1 with shapes [3, 4] and [3, 4] cannot be multiplied",
         lambda: L.multi_dot([x, x])),
        (RuntimeError, "multi_dot(): the first tensor must be 1D or 2D but got 3D", lambda: L.multi_dot([m[None], m])),
        (RuntimeError, "multi_dot(): the last tensor must be 1D or 2D but got 3D",
         lambda: L.multi_dot([x, m[None]])),
        (RuntimeError, "multi_dot(): tensor 1 must be 2D but got 1D", lambda: L.multi_dot([x, v, m])),
        (RuntimeError, "multi_dot(): all tensors must have be the same dtype but tensor 0 is double and tensor 1 "
         "float", lambda: L.multi_dot([x, m.float()])),
        (RuntimeError, "chain_matmul(): Expected one or more matrices", lambda: ctorch.chain_matmul()),
        (RuntimeError, "Tensor dimension is 1, expected 2 instead.", lambda: ctorch.chain_matmul(x, v)),
        (RuntimeError, "linalg.matrix_power: A must be batches of square matrices, but they are 3 by 4 matrices",
         lambda: L.matrix_power(x, 2)),
        (TypeError, "linalg_matrix_power(): argument 'n' (position 2) must be int, not float",
         lambda: L.matrix_power(m, 1.5)),
        (NotImplementedError, "linalg.inv: Expected a floating point or complex tensor as input. Got Long",
         lambda: L.matrix_power(m.long(), -1)),
        (RuntimeError, "renorm: non-positive-norm not supported", lambda: ctorch.renorm(x, -1, 0, 1.0)),
        (RuntimeError, "renorm: expected maxnorm to be >= 0 but got -1", lambda: ctorch.renorm(x, 2, 0, -1.0)),
        (RuntimeError, "renorm: input needs at least 2 dimensions, got 1 dimensions", lambda: v.renorm(2, 0, 1.0)),
        (RuntimeError, "addr: Expected 1-D argument vec1, but got 2-D", lambda: ctorch.addr(x, x, v)),
        (RuntimeError, "The expanded size of the tensor (4) must match the existing size (3)",
         lambda: ctorch.addr(x, v, v)),
        (RuntimeError, "For integral input tensors, argument alpha must not be a floating point number.",
         lambda: ctorch.addr(x.int(), v[:3].int(), v.int(), alpha=0.5)),
        (RuntimeError, "Boolean alpha only supported for Boolean results.",
         lambda: ctorch.addr(x, v[:3], v, alpha=True)),
        (RuntimeError, "inner() the last dimension must match on both input tensors but got shapes [3, 4] and [4, 3]",
         lambda: ctorch.inner(x, x.T)),
    ]
    for exc, msg, fn in cases:
        with pytest.raises(exc) as info:
            fn()
        assert msg in str(info.value), (msg, str(info.value))


# --- gradients ------------------------------------------------------------------------------------------
def test_gradients(device, rng):
    a = T(rng.standard_normal((2, 3, 4)), device, grad=True)
    m = T(rng.standard_normal((3, 3)), device, grad=True)
    v3, v4 = T(rng.standard_normal(3), device, grad=True), T(rng.standard_normal(4), device, grad=True)
    assert gradcheck(lambda x: L.vector_norm(x, 3, dim=(0, 2)), (a,))
    for ord_ in ("fro", 1, -1, INF, -INF):
        assert gradcheck(lambda x: L.matrix_norm(x, ord_), (a,))
    assert gradcheck(lambda x, y: L.vecdot(x, y), (a, v4))
    assert gradcheck(lambda x, y: ctorch.inner(x, y), (a, v4))
    assert gradcheck(lambda x, y: ctorch.dist(x, y, 3), (a, v4))
    m34 = a[0].detach().requires_grad_()
    assert gradcheck(lambda i, x, y: ctorch.addr(i, x, y, beta=0.5, alpha=2.0), (m34, v3, v4))
    assert gradcheck(lambda x, y, z: L.multi_dot([x, y, z]), (v3, m, a[0].detach().requires_grad_()))
    assert gradcheck(lambda x: L.matrix_power(x, 3), (m,))
    assert gradcheck(lambda x: ctorch.renorm(x, 2, 1, 1.5), (a,))
    names = {
        "LinalgVectorNormBackward0": [L.vector_norm(a), L.matrix_norm(a), L.norm(a, dim=1)],
        "AmaxBackward0": [L.matrix_norm(a, 1), L.norm(m, INF)],
        "AminBackward0": [L.matrix_norm(a, -INF)],
        "SumBackward1": [L.vecdot(a, v4)],
        "ViewBackward0": [ctorch.inner(a, v4), L.multi_dot([m, m, m]), L.multi_dot([v3, m])],
        "AddrBackward0": [ctorch.addr(m, v3, v3)],
        "MmBackward0": [L.matrix_power(m, 3)],
        "CloneBackward0": [L.matrix_power(m, 1)],
        "DiagonalBackward0": [L.diagonal(a)],
    }
    for name, results in names.items():
        for r in results:
            assert type(r.grad_fn).__name__ == name
    # n == 0: identities with a zero gradient
    r = L.matrix_power(m, 0)
    r.sum().backward()
    assert_close(m.grad, np.zeros((3, 3)))


def test_dist_renorm_nodes(device, rng):
    """dist and renorm are one node each (DistBackward0, RenormBackward0), with PyTorch's gradients:
    zero where input == other, ties of p = inf sharing the gradient, second derivatives."""
    from ctorch.autograd import gradgradcheck
    a = T(rng.standard_normal((2, 3)), device, grad=True)
    v = T(rng.standard_normal(3), device, grad=True)
    for p in (1, 2, 0.5, 3, INF):
        d = ctorch.dist(a, v, p)
        assert type(d.grad_fn).__name__ == "DistBackward0" and d.grad_fn.name() == "DistBackward0"
        assert gradcheck(lambda x, y: x.dist(y, p), (a, v))
    assert gradgradcheck(lambda x, y: ctorch.dist(x, y, 1.5), (a, v))
    x = T([1.0, -3.0, 3.0], device, grad=True)
    ctorch.dist(x, ctorch.zeros_like(x), INF).backward()
    assert_close(x.grad, [0.0, -0.5, 0.5])
    for p in (1, 2, 0.5, 3, INF):  # at input == other the gradient is 0
        x.grad = None
        ctorch.dist(x, x.detach(), p).backward()
        assert_close(x.grad, np.zeros(3))
    x.grad = None
    ctorch.dist(x, x.detach() + 1, 0).backward()  # piecewise constant: no gradient
    assert x.grad is None
    for p, dim, maxnorm in ((2, 0, 1.0), (1, -1, 0.5), (INF, 1, 0.3)):
        r = a.renorm(p, dim, maxnorm)
        assert type(r.grad_fn).__name__ == "RenormBackward0"
        assert gradcheck(lambda x: ctorch.renorm(x, p, dim, maxnorm), (a,))
    assert gradgradcheck(lambda x: x.renorm(3, 0, 0.5), (a,))
    c = a.clone()
    c.renorm_(2, 0, 0.5)
    assert type(c.grad_fn).__name__ == "RenormBackward0"


# --- LU: lu_factor, inv, solve, det, slogdet, logdet ------------------------------------------------
def _well_conditioned(rng, shape):
    return rng.standard_normal(shape) + 3 * np.eye(shape[-1])


def _tol(dtype):
    return dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_lu_ops(device, dtype, layout, rng):
    a = rng.standard_normal((2, 4, 4))
    A = T(a, device, dtype) if layout == "contiguous" else transposed(a, device, dtype)
    close = lambda t, e: np.testing.assert_allclose(t.cpu().numpy(), e, **_tol(dtype))  # noqa: E731
    close(L.inv(A), np.linalg.inv(a))
    close(ctorch.inverse(A[0]), np.linalg.inv(a[0]))
    close(L.det(A), np.linalg.det(a))
    close(ctorch.det(A[1]), np.linalg.det(a[1]))
    close(A.det(), np.linalg.det(a))
    close(A.inverse(), np.linalg.inv(a))
    close(A.slogdet()[1], np.linalg.slogdet(a)[1])
    close(ctorch.slogdet(A)[0], np.linalg.slogdet(a)[0])
    sign, logabs = L.slogdet(A)
    close(sign, np.linalg.slogdet(a)[0])
    close(L.slogdet(A).logabsdet, np.linalg.slogdet(a)[1])
    spd = a @ np.swapaxes(a, -1, -2) + np.eye(4)
    close(ctorch.logdet(T(spd, device, dtype)), np.linalg.slogdet(spd)[1])
    assert np.isnan(T(-np.eye(3), device, dtype).logdet().item())
    b = rng.standard_normal((2, 4, 3))
    close(L.solve(A, T(b, device, dtype)), np.linalg.solve(a, b))
    close(L.solve(A, T(b[:, :, 0], device, dtype)), np.linalg.solve(a, b[:, :, :1])[..., 0])  # batch of vectors
    close(L.solve(A, T(b[0, :, 0], device, dtype)), np.linalg.solve(a, b[0, :, :1])[..., 0])  # one vector
    close(L.solve(A[:1, None], T(b, device, dtype)), np.linalg.solve(a[:1, None], b))  # broadcast batch
    close(L.matrix_power(A, -2), np.linalg.matrix_power(a, -2))
    LU, piv = L.lu_factor(A[0])
    assert piv.dtype == ctorch.int32
    lu, p = LU.cpu().numpy(), piv.cpu().numpy()
    perm = np.arange(4)
    for j, r in enumerate(p - 1):
        perm[[j, r]] = perm[[r, j]]
    np.testing.assert_allclose((np.tril(lu, -1) + np.eye(4)) @ np.triu(lu), a[0][perm], **_tol(dtype))
    # 0-batch and 0x0
    assert tuple(L.inv(T(np.zeros((0, 3, 3)), device, dtype)).shape) == (0, 3, 3)
    close(L.det(T(np.zeros((2, 0, 0)), device, dtype)), np.ones(2))


def test_lu_errors(device):
    S = T([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]], device)
    batch = ctorch.stack([ctorch.eye(3, dtype=ctorch.float64, device=device), S])
    cases = [
        (L.LinAlgError, "linalg.inv: The diagonal element 3 is zero, the inversion could not be completed because "
         "the input matrix is singular.", lambda: L.inv(S)),
        (RuntimeError, "linalg.inv: (Batch element 1): The diagonal element 3 is zero", lambda: L.inv(batch)),
        (L.LinAlgError, "torch.linalg.solve: The solver failed because the input matrix is singular.",
         lambda: L.solve(S, S)),
        (L.LinAlgError, "torch.linalg.lu_factor: U[3,3] is zero", lambda: L.lu_factor(S)),
        (RuntimeError, "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices",
         lambda: L.inv(S[:2])),
        (RuntimeError, "linalg.inv: The input tensor A must have at least 2 dimensions.", lambda: L.inv(S[0])),
        (NotImplementedError, "linalg.det: Expected a floating point or complex tensor as input. Got Int",
         lambda: L.det(S.int())),
        (NotImplementedError, "linalg.inv: Low precision dtypes not supported. Got Half", lambda: L.inv(S.half())),
        (RuntimeError, "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 2x1)",
         lambda: L.solve(S, S[0, :2])),
        (RuntimeError, "linalg.solve: Expected A and B to have the same dtype, but found A of type Double and B of "
         "type Float instead", lambda: L.solve(S, S.float())),
    ]
    for exc, msg, fn in cases:
        with pytest.raises(exc) as info:
            fn()
        assert msg in str(info.value), (msg, str(info.value))
    assert issubclass(L.LinAlgError, RuntimeError)
    sign, logabs = L.slogdet(S)  # singular: sign 0, log|det| -inf, no error
    assert sign.item() == 0 and logabs.item() == -INF
    assert L.det(S).item() == 0


def test_lu_gradients(device, rng):
    A = T(_well_conditioned(rng, (2, 3, 3)), device, grad=True)
    B = T(rng.standard_normal((2, 3, 2)), device, grad=True)
    v = T(rng.standard_normal(3), device, grad=True)
    assert gradcheck(L.inv, (A,))
    assert gradcheck(L.det, (A,))
    assert gradcheck(lambda x: L.slogdet(x).logabsdet, (A,))
    assert gradcheck(L.solve, (A, B))
    assert gradcheck(L.solve, (A, v))
    assert gradcheck(lambda x: L.matrix_power(x, -2), (A,))
    names = {"LinalgInvExBackward0": L.inv(A), "LinalgDetBackward0": ctorch.det(A),
             "LinalgSlogdetBackward0": L.slogdet(A)[1], "LinalgSolveExBackward0": L.solve(A, B),
             "WhereBackward0": A.logdet()}
    assert type(A.inverse().grad_fn).__name__ == "LinalgInvExBackward0"
    assert type(A.det().grad_fn).__name__ == "LinalgDetBackward0"
    for name, r in names.items():
        assert type(r.grad_fn).__name__ == name


def test_other_dtypes_and_out(device):
    a = np.arange(12.0).reshape(3, 4)
    h = T(a, device, "float16")
    assert L.vector_norm(h).dtype == ctorch.float16
    assert_close(L.vector_norm(h), np.linalg.norm(a.ravel()), "float16")
    assert_close(L.matrix_norm(h, 1), np.linalg.norm(a, 1), "float16")
    assert_close(L.norm(T(a, device, "bfloat16")), np.linalg.norm(a.ravel()), "bfloat16")
    assert L.vector_norm(h, dtype=ctorch.float32).dtype == ctorch.float32
    ints = ctorch.arange(3, device=device)
    assert_close(ctorch.inner(ints, ints), 5)
    assert_close(L.multi_dot([ints, ctorch.arange(6, device=device).reshape(3, 2)]), np.array([10, 13]))
    flags = ctorch.addr(ctorch.zeros(2, 2, dtype=ctorch.bool, device=device), T([True, False], device, "bool"),
                        T([True, True], device, "bool"))
    assert_close(flags, np.array([[True, True], [False, False]]))
    out = ctorch.empty(3, device=device)
    assert L.matrix_norm(T(np.ones((2, 3, 3)), device, "float32"), 1, dim=(0, 1), out=out) is out
    assert_close(out, np.full(3, 2.0), "float32")  # column sums over dim 0 of size 2
    out = ctorch.empty(2, 3, 3, device=device)
    assert L.inv(ctorch.eye(3, device=device).expand(2, 3, 3), out=out) is out
    assert_close(out, np.broadcast_to(np.eye(3), (2, 3, 3)), "float32")
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        L.inv(ctorch.eye(3, device=device), out=ctorch.empty(0, dtype=ctorch.float64, device=device))


def test_matrix_norm_empty_min_orders_raise():
    """On an empty matrix the max-type orders give 0 and the min-type ones (-1, -2, -inf) raise amin's
    IndexError where the dim it reduces is empty, as PyTorch."""
    for ord_ in (-1, -2, -math.inf):
        with pytest.raises(IndexError, match="amin\\(\\): Expected reduction dim"):
            ctorch.linalg.matrix_norm(ctorch.empty(0, 0), ord=ord_)
    for ord_ in (1, 2, math.inf, "nuc", "fro"):
        assert ctorch.linalg.matrix_norm(ctorch.empty(2, 0, 0), ord=ord_).tolist() == [0.0, 0.0]
    # -1 sums over the rows first (3 zeros left), -inf over the columns (nothing left)
    assert ctorch.linalg.matrix_norm(ctorch.empty(2, 0, 3), ord=-1).tolist() == [0.0, 0.0]
    with pytest.raises(IndexError, match="amin\\(\\): Expected reduction dim 1 to have non-zero size"):
        ctorch.linalg.matrix_norm(ctorch.empty(2, 0, 3), ord=-math.inf)
