"""torch.linalg's LU family beyond lu_factor/inv/solve/det (csrc/linalg_more.c, csrc/linalg_lu.c):
lu_factor_ex (square and rectangular), lu, lu_unpack, lu_solve (left/adjoint), inv_ex, solve_ex,
solve(left=False), lstsq (each driver's fields), matrix_exp, tensorinv, tensorsolve,
householder_product / orgqr, cond's singular test. NumPy is the oracle (matrix_exp: the
eigendecomposition of a symmetric matrix, and a long float64 Taylor series); singular inputs
give info > 0 and LAPACK's inf / nan instead of raising."""
import math

import numpy as np
import pytest

import ctorch
from ctorch.autograd import gradcheck, gradgradcheck

from linalg_testing import FLOATS, T, N, mT, raises

L = ctorch.linalg


def tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)


def well_conditioned(rng, *shape):
    a = rng.standard_normal(shape)
    n = shape[-1]
    return a + (2 * n) * np.eye(n) if shape[-2] == n else a


# --- lu_factor_ex / lu / lu_unpack ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 5), (0, 3, 3), (2, 0, 3)], ids=str)
def test_lu_reconstructs(device, dtype, shape, rng):
    a = rng.standard_normal(shape)
    A = T(a, device, dtype)
    LU, piv, info = L.lu_factor_ex(A)
    m, n = shape[-2:]
    k = min(m, n)
    assert type(L.lu_factor_ex(A)).__name__ == "linalg_lu_factor_ex"
    assert LU.shape == A.shape and piv.shape == shape[:-2] + (k,) and piv.dtype == ctorch.int32
    assert info.shape == shape[:-2] and info.dtype == ctorch.int32 and not N(info).any()
    P, Lm, U = L.lu(A)
    assert P.shape == shape[:-2] + (m, m) and Lm.shape == shape[:-2] + (m, k) and U.shape == shape[:-2] + (k, n)
    np.testing.assert_allclose(N(P) @ N(Lm) @ N(U), a, **tol(dtype))
    np.testing.assert_allclose(np.tril(N(Lm), -1) + np.eye(m, k), N(Lm))
    np.testing.assert_allclose(np.triu(N(U)), N(U))
    # partial pivoting: every multiplier is at most 1 in size
    assert (np.abs(N(Lm)) <= 1 + 1e-6).all()
    P2, L2, U2 = ctorch.lu_unpack(LU, piv)
    assert type(ctorch.lu_unpack(LU, piv)).__name__ == "lu_unpack"
    np.testing.assert_array_equal(N(P2), N(P))
    np.testing.assert_array_equal(N(L2), N(Lm))


def test_lu_unpack_flags_and_pivot_order():
    LU = ctorch.zeros(3, 3)
    P, Lm, U = ctorch.lu_unpack(LU, ctorch.ones(3, dtype=ctorch.int32), unpack_data=False)
    np.testing.assert_array_equal(N(P), [[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    assert Lm.shape == (0,) and U.shape == (0,)
    P, Lm, U = ctorch.lu_unpack(LU, ctorch.ones(3, dtype=ctorch.int32), unpack_pivots=False)
    assert P.shape == (0,)
    np.testing.assert_array_equal(N(Lm), np.eye(3))
    raises(RuntimeError, "LU_pivots is expected to be a contiguous tensor of torch.int32 dtype",
           lambda: ctorch.lu_unpack(LU, ctorch.ones(3)))


def test_lu_factor_ex_singular(device):
    # LAPACK's factors of singular matrices; info is the first zero pivot, nothing raises
    A = T([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]], device)
    LU, piv, info = L.lu_factor_ex(A)
    np.testing.assert_array_equal(N(LU)[0], [[2.0, 4.0], [0.5, 0.0]])
    np.testing.assert_array_equal(N(piv), [[2, 2], [1, 2], [1, 2]])
    np.testing.assert_array_equal(N(info), [2, 1, 0])
    raises(RuntimeError, "torch.linalg.lu_factor_ex: U[2,2] is zero",
           lambda: L.lu_factor_ex(A[0], check_errors=True))
    raises(L.LinAlgError, "(Batch element 0): U[2,2] is zero", lambda: L.lu_factor(A))
    # rectangular: the padded steps never count as zero pivots
    _, piv, info = L.lu_factor_ex(T([[1.0, 2.0, 3.0]], device))
    assert N(info) == 0 and N(piv).tolist() == [1]


def test_lu_errors():
    raises(RuntimeError, "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: [2] instead",
           lambda: L.lu_factor_ex(ctorch.zeros(2)))
    raises(RuntimeError, "linalg.lu: Expected tensor with 2 or more dimensions. Got size: [2] instead",
           lambda: L.lu(ctorch.zeros(2)))
    raises(NotImplementedError, "\"lu_cpu\" not implemented for 'Long'",
           lambda: L.lu_factor_ex(ctorch.zeros(2, 2, dtype=ctorch.int64)))
    raises(RuntimeError, "LU without pivoting is not implemented", lambda: L.lu_factor_ex(ctorch.eye(2), pivot=False))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2)], ids=str)
def test_lu_gradients(device, shape, rng):
    A = T(well_conditioned(rng, *shape), device, grad=True)
    assert L.lu_factor_ex(A).LU.grad_fn.name() == "LinalgLuFactorExBackward0"
    assert gradcheck(lambda a: L.lu_factor_ex(a).LU, (A,))
    assert gradcheck(lambda a: L.lu(a)[1:], (A,))
    if shape == (3, 3):
        assert gradgradcheck(lambda a: L.lu_factor(a).LU, (A,))


# --- lu_solve ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve(device, dtype, left, adjoint, rng):
    a = well_conditioned(rng, 2, 4, 4)
    b = rng.standard_normal((2, 4, 3) if left else (2, 3, 4))
    LU, piv = L.lu_factor(T(a, device, dtype))
    X = N(L.lu_solve(LU, piv, T(b, device, dtype), left=left, adjoint=adjoint))
    op = mT(a) if adjoint else a
    np.testing.assert_allclose(X, np.linalg.solve(op, b) if left else mT(np.linalg.solve(mT(op), mT(b))), **tol(dtype))


def test_lu_solve_broadcast_gradients_errors(device, rng):
    a = well_conditioned(rng, 3, 3)
    LU, piv = L.lu_factor(T(a, device))
    b = rng.standard_normal((2, 3, 1))
    np.testing.assert_allclose(N(L.lu_solve(LU, piv, T(b, device))), np.linalg.solve(a, b), **tol("float64"))
    LUg = LU.detach().clone().requires_grad_()
    B = T(rng.standard_normal((3, 2)), device, grad=True)
    assert gradcheck(lambda l, x: L.lu_solve(l, piv, x, adjoint=True), (LUg, B))
    raises(RuntimeError, "linalg.lu_solve: The input tensor B must have at least 2 dimensions.",
           lambda: L.lu_solve(LU, piv, T([1.0, 2.0, 3.0], device)))
    raises(RuntimeError, "linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 2x1)",
           lambda: L.lu_solve(LU, piv, T(np.ones((2, 1)), device)))
    raises(RuntimeError, "A must be batches of square matrices, but they are 3 by 4 matrices",
           lambda: L.lu_solve(T(np.ones((3, 4)), device), piv, T(np.ones((3, 1)), device)))


# --- inv_ex / solve_ex / solve(left=False) -------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_inv_ex_solve_ex(device, dtype, rng):
    a = well_conditioned(rng, 2, 3, 3)
    A = T(a, device, dtype)
    inv, info = L.inv_ex(A)
    assert type(L.inv_ex(A)).__name__ == "linalg_inv_ex" and info.dtype == ctorch.int32
    np.testing.assert_allclose(N(inv), np.linalg.inv(a), **tol(dtype))
    np.testing.assert_array_equal(N(info), [0, 0])
    b = rng.standard_normal(3)
    res, info = L.solve_ex(A, T(b, device, dtype))
    assert type(L.solve_ex(A, T(b, device, dtype))).__name__ == "linalg_solve_ex" and info.shape == (2,)
    np.testing.assert_allclose(N(res), np.linalg.solve(a, b[:, None])[..., 0], **tol(dtype))
    bm = rng.standard_normal((2, 5, 3))
    X = L.solve(A, T(bm, device, dtype), left=False)
    np.testing.assert_allclose(N(X), mT(np.linalg.solve(mT(a), mT(bm))), **tol(dtype))
    X, info = L.solve_ex(A, T(bm, device, dtype), left=False)
    np.testing.assert_allclose(N(X), mT(np.linalg.solve(mT(a), mT(bm))), **tol(dtype))
    assert L.inv_ex(T(np.zeros((0, 2, 2)), device, dtype)).info.shape == (0,)


def test_ex_singular(device):
    # inf / nan as LAPACK's solve gives them, and info per batch element
    A = T([np.eye(2), [[1.0, 2.0], [2.0, 4.0]], np.zeros((2, 2))], device)
    inv, info = L.inv_ex(A)
    np.testing.assert_array_equal(N(info), [0, 2, 1])
    np.testing.assert_array_equal(N(inv)[0], np.eye(2))
    np.testing.assert_array_equal(N(inv)[1], [[-np.inf, np.inf], [np.inf, -np.inf]])
    assert np.isnan(N(inv)[2]).sum() == 3 and N(inv)[2][1, 1] == np.inf
    res, info = L.solve_ex(A[1], T(np.ones((2, 1)), device))
    np.testing.assert_array_equal(N(res), [[-np.inf], [np.inf]])
    assert N(info) == 2
    raises(L.LinAlgError, "linalg.inv_ex: (Batch element 1): The diagonal element 2 is zero",
           lambda: L.inv_ex(A, check_errors=True))
    raises(L.LinAlgError, "torch.linalg.solve_ex: (Batch element 1): The solver failed because the input matrix is "
           "singular.", lambda: L.solve_ex(A, T(np.ones((2, 1)), device), check_errors=True))
    raises(RuntimeError, "linalg.solve: Incompatible shapes of A and B for the equation XA = B (2x2 and 2x1)",
           lambda: L.solve(A[0], T([1.0, 2.0], device), left=False))
    # cond of a singular matrix is inf (p other than 2), from inv_ex's info
    c = L.cond(A, 1)
    assert N(c)[1] == np.inf and N(c)[2] == np.inf and N(c)[0] == 1.0


def test_ex_gradients(device, rng):
    A = T(well_conditioned(rng, 3, 3), device, grad=True)
    B = T(rng.standard_normal((3, 2)), device, grad=True)
    assert L.inv_ex(A).inverse.grad_fn.name() == "LinalgInvExBackward0"
    assert L.solve_ex(A, B).result.grad_fn.name() == "LinalgSolveExBackward0"
    assert gradcheck(lambda a: L.inv_ex(a).inverse, (A,))
    assert gradcheck(lambda a, b: L.solve_ex(a, b).result, (A, B))
    assert gradcheck(lambda a, b: L.solve(a, b.mT, left=False), (A, B))
    assert gradgradcheck(lambda a, b: L.solve(a, b.mT, left=False), (A, B))


# --- lstsq -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("driver", [None, "gels", "gelsd", "gelss"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)], ids=str)
def test_lstsq(device, dtype, driver, shape, rng):
    a = rng.standard_normal(shape)
    b = rng.standard_normal(shape[:-1] + (2,))
    r = L.lstsq(T(a, device, dtype), T(b, device, dtype), driver=driver)
    assert type(r).__name__ == "linalg_lstsq"
    ref = np.stack([np.linalg.lstsq(x, y, rcond=None)[0] for x, y in zip(a.reshape((-1,) + shape[-2:]),
                                                                        b.reshape((-1,) + b.shape[-2:]))])
    ref = ref.reshape(r.solution.shape)
    np.testing.assert_allclose(N(r.solution), ref, **tol(dtype))
    m, n = shape[-2:]
    batch = shape[:-2]
    want_res = driver in ("gels", "gelsd", "gelss") and m > n
    assert r.residuals.shape == ((2,) if want_res else (0,))
    if want_res:
        np.testing.assert_allclose(N(r.residuals), ((a @ ref - b) ** 2).sum(-2), **tol(dtype))
    assert r.rank.dtype == ctorch.int64
    assert r.rank.shape == ((0,) if driver == "gels" else batch)
    if driver != "gels":
        assert (N(r.rank) == min(m, n)).all()
    assert r.singular_values.shape == (batch + (min(m, n),) if driver in ("gelsd", "gelss") else (0,))
    if driver in ("gelsd", "gelss"):
        np.testing.assert_allclose(N(r.singular_values), np.linalg.svd(a, compute_uv=False), **tol(dtype))


def test_lstsq_rank_deficient_vector_empty(device, rng):
    a = np.ones((4, 2))
    b = rng.standard_normal((4, 2))
    r = L.lstsq(T(a, device), T(b, device), driver="gelsd")
    np.testing.assert_allclose(N(r.solution), np.linalg.lstsq(a, b, rcond=None)[0], **tol("float64"))
    assert N(r.rank) == 1 and r.residuals.shape == (0,)
    np.testing.assert_allclose(N(r.singular_values), [math.sqrt(8), 0.0], atol=1e-12)
    r = L.lstsq(T(rng.standard_normal((2, 3, 3)), device), T(rng.standard_normal((2, 3)), device))
    assert r.solution.shape == (2, 3)
    r = L.lstsq(T(np.zeros((0, 2)), device), T(np.zeros((0, 2)), device))
    assert r.solution.shape == (2, 2) and not N(r.solution).any() and N(r.rank) == 0
    r = L.lstsq(T(np.zeros((3, 0)), device), T(b[:3], device), driver="gelsd")  # n == 0: residuals are |b|^2
    np.testing.assert_allclose(N(r.residuals), (b[:3] ** 2).sum(0), **tol("float64"))
    raises(RuntimeError, "This function doesn't handle types other than float and double",
           lambda: L.lstsq(T(a, device, "int64"), T(b, device, "int64")))
    raises(RuntimeError, "parameter `driver` should be one of (gels, gelsy, gelsd, gelss)",
           lambda: L.lstsq(T(a, device), T(b, device), driver="foo"))
    raises(RuntimeError, "input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1",
           lambda: L.lstsq(T(a, device), T(np.ones((2, 4, 2)), device)))
    raises(RuntimeError, "torch.linalg.lstsq: input.size(-2) should match other.size(-2)",
           lambda: L.lstsq(T(a, device), T(np.ones((3, 2)), device)))
    raises(RuntimeError, "Expected input and other to have the same dtype, but got input's dtype Double and other's "
           "dtype Float", lambda: L.lstsq(T(a, device), T(b, device, "float32")))


def test_lstsq_gradients(device, rng):
    A = T(rng.standard_normal((5, 3)), device, grad=True)
    B = T(rng.standard_normal((5, 2)), device, grad=True)
    assert gradcheck(lambda a, b: L.lstsq(a, b).solution, (A, B))
    W = T(rng.standard_normal((3, 5)), device, grad=True)
    assert gradcheck(lambda a, b: L.lstsq(a, b[:3], driver="gels").solution, (W, B))


# --- matrix_exp ------------------------------------------------------------------------------------
def taylor_expm(a, terms=200):
    """exp(a) by a long float64 Taylor series after scaling, squared back."""
    s = max(0, int(np.ceil(np.log2(max(np.abs(a).sum(-2).max(), 1e-300)))) + 1)
    x = a / 2.0 ** s
    out = term = np.broadcast_to(np.eye(a.shape[-1]), a.shape).copy()
    for k in range(1, terms):
        term = term @ x / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


@pytest.mark.parametrize("dtype", FLOATS)
def test_matrix_exp(device, dtype, rng):
    s = rng.standard_normal((2, 4, 4))
    s = s + mT(s)
    w, V = np.linalg.eigh(s)
    ref = (V * np.exp(w)[..., None, :]) @ mT(V)
    np.testing.assert_allclose(N(L.matrix_exp(T(s, device, dtype))), ref, rtol=1e-5 if dtype == "float32" else 1e-12,
                               atol=1e-5 if dtype == "float32" else 1e-12)
    a = 3 * rng.standard_normal((3, 3))
    got = N(ctorch.matrix_exp(T(a, device, dtype)))
    np.testing.assert_allclose(got, taylor_expm(a), rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6)
    np.testing.assert_allclose(N(T(a, device, dtype).matrix_exp()), got)
    assert L.matrix_exp(T(np.zeros((0, 0)), device, dtype)).shape == (0, 0)


def test_matrix_exp_dtypes_errors_gradients(device, rng):
    np.testing.assert_array_equal(N(L.matrix_exp(ctorch.zeros(2, 2, dtype=ctorch.float16, device=device))), np.eye(2))
    raises(RuntimeError, "linalg.matrix_exp: A must be batches of square matrices, but they are 2 by 3 matrices",
           lambda: L.matrix_exp(ctorch.zeros(2, 3)))
    raises(RuntimeError, "linalg.matrix_exp: The input tensor A must have at least 2 dimensions.",
           lambda: L.matrix_exp(ctorch.zeros(2)))
    raises(NotImplementedError, "linalg.matrix_exp: Expected a floating point or complex tensor as input. Got Long",
           lambda: L.matrix_exp(ctorch.zeros(2, 2, dtype=ctorch.int64)))
    A = T(rng.standard_normal((2, 2, 2)), device, grad=True)
    assert L.matrix_exp(A).grad_fn.name() == "LinalgMatrixExpBackward0"
    assert gradcheck(L.matrix_exp, (A,))
    if device == "cpu":  # the same formula on every device; its second derivative is slow emulated
        assert gradgradcheck(L.matrix_exp, (A[0].detach().requires_grad_(),))


# --- tensorinv / tensorsolve -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_tensorinv_tensorsolve(device, dtype, rng):
    a = rng.standard_normal((4, 6, 8, 3)) + 0.0
    a = (a.reshape(24, 24) + 10 * np.eye(24)).reshape(4, 6, 8, 3)
    np.testing.assert_allclose(N(L.tensorinv(T(a, device, dtype), ind=2)), np.linalg.tensorinv(a, ind=2), **tol(dtype))
    a = (rng.standard_normal((6, 6)) + 8 * np.eye(6)).reshape(6, 2, 3)
    b = rng.standard_normal(6)
    np.testing.assert_allclose(N(L.tensorsolve(T(a, device, dtype), T(b, device, dtype))), np.linalg.tensorsolve(a, b),
                               **tol(dtype))
    a2 = np.moveaxis(a, 0, 2)  # (2, 3, 6): dims=(0, 1) moved to the end restores (6, 2, 3)
    got = L.tensorsolve(T(a2, device, dtype), T(b, device, dtype), dims=(0, 1))
    np.testing.assert_allclose(N(got), np.linalg.tensorsolve(a2, b, axes=(0, 1)), **tol(dtype))
    raises(RuntimeError, "Expected a strictly positive integer for 'ind', but got 0",
           lambda: L.tensorinv(T(np.eye(2), device), ind=0))
    raises(RuntimeError, "prod(self.shape[ind:]) == prod(self.shape[:ind]), but got 16 != 24",
           lambda: L.tensorinv(T(np.ones((4, 6, 8, 2)), device), ind=2))
    raises(RuntimeError, "but got 6 != 5", lambda: L.tensorsolve(T(a, device), T(np.ones(5), device)))
    # the inverse's dtype error (was a SystemError: the shape built with the exception set)
    raises(NotImplementedError, "linalg.inv: Expected a floating point or complex tensor as input. Got Long",
           lambda: L.tensorinv(T(np.eye(4).reshape(4, 2, 2), device, "int64"), ind=1))


# --- householder_product / orgqr ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_householder_product(device, dtype, rng):
    a = rng.standard_normal((5, 3))
    h, tau = np.linalg.qr(a, mode="raw")  # LAPACK's geqrf output, column-major
    q = np.linalg.qr(a)[0]
    got = L.householder_product(T(h.T, device, dtype), T(tau, device, dtype))
    np.testing.assert_allclose(N(got), q, **tol(dtype))
    np.testing.assert_allclose(N(ctorch.orgqr(T(h.T, device, dtype), T(tau, device, dtype))), q, **tol(dtype))
    np.testing.assert_allclose(N(T(h.T, device, dtype).orgqr(T(tau, device, dtype))), q, **tol(dtype))
    # fewer reflectors than columns, and a batch
    b = rng.standard_normal((2, 4, 3))
    t = rng.standard_normal((2, 2))
    ref = []
    for x, s in zip(b, t):
        Q = np.eye(4)
        for i in range(2):
            v = np.r_[np.zeros(i), 1.0, x[i + 1:, i]]
            Q = Q @ (np.eye(4) - s[i] * np.outer(v, v))
        ref.append(Q[:, :3])
    np.testing.assert_allclose(N(L.householder_product(T(b, device, dtype), T(t, device, dtype))), np.stack(ref),
                               **tol(dtype))


def test_householder_errors_gradients(device, rng):
    raises(RuntimeError, "input.shape[-2] must be greater than or equal to input.shape[-1]",
           lambda: L.householder_product(T(np.ones((3, 4)), device), T(np.ones(2), device)))
    raises(RuntimeError, "input.shape[-1] must be greater than or equal to tau.shape[-1]",
           lambda: L.householder_product(T(np.ones((4, 3)), device), T(np.ones(4), device)))
    A = T(rng.standard_normal((4, 3)), device, grad=True)
    tau = T(rng.standard_normal(2), device, grad=True)
    assert gradcheck(L.householder_product, (A, tau))


# --- the deprecated torch.lu / Tensor.lu (linalg.lu_factor_ex under the old names), linalg.matmul ------------
def test_torch_lu_deprecated():
    import warnings
    A = ctorch.randn(2, 3, 3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        LU, piv = ctorch.lu(A)
        ref = ctorch.linalg.lu_factor(A)
        assert torch_equal(LU, ref.LU) and torch_equal(piv, ref.pivots) and piv.dtype == ctorch.int32
        assert LU.grad_fn.name() == "LinalgLuFactorExBackward0"
        r = ctorch.lu(ctorch.zeros(2, 2), get_infos=True)  # singular: info, no error (as PyTorch)
        assert type(r).__name__ == "_lu_with_info" and r.LU is r[0] and r.pivots is r[1]
        assert int(r.info) == 1 and r.info.dtype == ctorch.int32
        LU2, piv2, info2 = A.lu(get_infos=True)
        assert type(A.lu()) is tuple and info2.shape == (2,) and torch_equal(LU2, LU)
        out = (ctorch.empty(0), ctorch.empty(0, dtype=ctorch.int32))
        assert ctorch.lu(A.detach(), out=out) is out and torch_equal(out[0], LU)
        with pytest.raises(TypeError, match="^expected tuple of 2 elements but got 1$"):
            ctorch.lu(A.detach(), out=(ctorch.empty(0),))
        with pytest.raises(RuntimeError, match="^linalg.lu_factor: LU without pivoting is not implemented on the CPU$"):
            ctorch.lu(A, pivot=False)
        assert ctorch.lu(ctorch.randn(2, 4, 3))[1].shape == (2, 3)


def torch_equal(a, b):
    return bool(ctorch.equal(a, b))


def test_linalg_matmul_alias():
    a, b = ctorch.randn(2, 3), ctorch.randn(3)
    assert torch_equal(ctorch.linalg.matmul(a, b), ctorch.matmul(a, b))
    out = ctorch.empty(2)
    ctorch.linalg.matmul(a, b, out=out)
    assert torch_equal(out, a @ b)
    with pytest.raises(RuntimeError, match=r"size mismatch, got input \(2\), mat \(2x3\), vec \(2\)"):
        ctorch.linalg.matmul(a, ctorch.ones(2))
