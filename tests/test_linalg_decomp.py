"""torch.linalg's decompositions (csrc/linalg_decomp.c, decomp_math.h): cholesky / cholesky_ex,
solve_triangular, cholesky_solve / cholesky_inverse and qr, against NumPy and by reconstruction,
on every device, float32/float64, batched, empty and transposed inputs; gradients (gradcheck in
float64, PyTorch's node names) and PyTorch's errors."""
import numpy as np
import pytest

import ctorch
from ctorch.autograd import gradcheck

from linalg_testing import FLOATS, T, mT, raises

L = ctorch.linalg


def transposed(arr, device, dtype):
    """arr as the transpose of a contiguous tensor (last two dims swapped in memory)."""
    return T(np.ascontiguousarray(np.swapaxes(arr, -1, -2)), device, dtype).transpose(-1, -2)


def close(t, expect, dtype):
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(t.detach().cpu().numpy(), expect, **tol)


def spd(rng, shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


# --- cholesky ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_cholesky(device, dtype, layout, rng):
    a = spd(rng, (2, 3, 4, 4))
    A = T(a, device, dtype) if layout == "contiguous" else transposed(a, device, dtype)
    Lf = L.cholesky(A)
    close(Lf, np.linalg.cholesky(a), dtype)
    close(Lf @ Lf.mT, a, dtype)
    U = L.cholesky(A, upper=True)
    close(U, mT(np.linalg.cholesky(a)), dtype)
    res = L.cholesky_ex(A[0, 1])
    close(res.L, np.linalg.cholesky(a[0, 1]), dtype)
    assert res.info.dtype == ctorch.int32 and res.info.item() == 0
    # a matrix that is not positive-definite: the partial factor and the failing order
    bad = T([[1.0, 2.0], [2.0, 1.0]], device, dtype)
    Lb, info = L.cholesky_ex(bad)
    close(Lb, np.array([[1.0, 0.0], [2.0, -3.0]]), dtype)
    assert info.item() == 2 and type(L.cholesky_ex(bad)).__name__ == "linalg_cholesky_ex"
    _, infos = L.cholesky_ex(ctorch.stack([ctorch.eye(2, dtype=bad.dtype, device=device), bad, -bad]))
    assert infos.tolist() == [0, 2, 1]
    out = ctorch.empty(0, dtype=A.dtype, device=device)
    assert L.cholesky(A[1, 2], out=out) is out
    close(out, np.linalg.cholesky(a[1, 2]), dtype)
    # empty batch and 0x0 matrices
    assert tuple(L.cholesky(T(np.zeros((0, 3, 3)), device, dtype)).shape) == (0, 3, 3)
    z, zi = L.cholesky_ex(T(np.zeros((2, 0, 0)), device, dtype))
    assert tuple(z.shape) == (2, 0, 0) and zi.tolist() == [0, 0]


def test_cholesky_errors(device):
    bad = T([[1.0, 2.0], [2.0, 1.0]], device)
    batch = ctorch.stack([ctorch.eye(2, dtype=ctorch.float64, device=device), bad])
    pd = "The factorization could not be completed because the input is not positive-definite (the leading minor " \
         "of order 2 is not positive-definite)."
    raises(L.LinAlgError, "linalg.cholesky: " + pd, lambda: L.cholesky(bad))
    raises(L.LinAlgError, "linalg.cholesky: (Batch element 1): " + pd, lambda: L.cholesky(batch))
    raises(L.LinAlgError, "linalg.cholesky_ex: (Batch element 1): " + pd,
           lambda: L.cholesky_ex(batch.reshape(1, 2, 2, 2), check_errors=True))
    raises(L.LinAlgError, "(the leading minor of order 1 is not positive-definite)",
           lambda: L.cholesky(T([[float("nan"), 0.0], [0.0, 1.0]], device)))
    raises(NotImplementedError, "linalg.cholesky: Expected a floating point or complex tensor as input. Got Long",
           lambda: L.cholesky(ctorch.eye(2, dtype=ctorch.int64, device=device)))
    raises(NotImplementedError, "not implemented for 'Half'", lambda: L.cholesky(bad.half()))
    raises(RuntimeError, "linalg.cholesky: A must be batches of square matrices, but they are 2 by 3 matrices",
           lambda: L.cholesky(T(np.ones((2, 3)), device)))
    raises(RuntimeError, "linalg.cholesky: The input tensor A must have at least 2 dimensions.",
           lambda: L.cholesky(T(np.ones(3), device)))
    raises(RuntimeError, "Expected out tensor to have dtype double, but got float instead",
           lambda: L.cholesky(batch[0], out=ctorch.empty(2, 2, device=device)))
    raises(RuntimeError, "linalg_cholesky_ex(): functions with out=... arguments don't support automatic "
           "differentiation, but one of the arguments requires grad.",
           lambda: L.cholesky(batch[0].requires_grad_(), out=ctorch.empty(2, 2, dtype=ctorch.float64, device=device)))
    for fn in (lambda: ctorch.cholesky(batch[0]), lambda: batch[0].cholesky()):
        raises(RuntimeError, "`torch.cholesky` is deprecated in favor of `torch.linalg.cholesky`", fn)
    for fn in (lambda: ctorch.qr(batch[0]), lambda: batch[0].qr()):
        raises(RuntimeError, "`torch.qr` is deprecated in favor of `torch.linalg.qr`", fn)


# --- triangular solves --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_solve_triangular(device, dtype, layout, rng):
    a = np.tril(rng.standard_normal((2, 4, 4))) + 3 * np.eye(4)
    A = T(a, device, dtype) if layout == "contiguous" else transposed(a, device, dtype)
    b = rng.standard_normal((2, 4, 3))
    B = T(b, device, dtype)
    close(L.solve_triangular(A, B, upper=False), np.linalg.solve(a, b), dtype)
    # the other triangle is never read
    junk = A + T(np.triu(np.ones((4, 4)), 1) * 100, device, dtype)
    close(L.solve_triangular(junk, B, upper=False), np.linalg.solve(a, b), dtype)
    close(L.solve_triangular(A.mT, B, upper=True), np.linalg.solve(mT(a), b), dtype)
    # X A = B, unit diagonal, broadcast batch dims
    close(L.solve_triangular(A, B.mT, upper=False, left=False), mT(np.linalg.solve(mT(a), b)), dtype)
    unit = np.tril(a, -1) + np.eye(4)
    close(L.solve_triangular(A, B, upper=False, unitriangular=True), np.linalg.solve(unit, b), dtype)
    close(L.solve_triangular(A[0], T(b[None, :1], device, dtype), upper=False),
          np.linalg.solve(a[0], b[None, :1]), dtype)
    out = ctorch.empty(0, dtype=A.dtype, device=device)
    assert L.solve_triangular(A, B, upper=False, out=out) is out
    close(out, np.linalg.solve(a, b), dtype)
    assert tuple(L.solve_triangular(A[:0], B[:0], upper=True).shape) == (0, 4, 3)
    # cholesky_solve / cholesky_inverse from a Cholesky factor
    s = spd(rng, (2, 4, 4))
    Lf = L.cholesky(T(s, device, dtype))
    close(ctorch.cholesky_solve(B, Lf), np.linalg.solve(s, b), dtype)
    close(B.cholesky_solve(Lf.mT, upper=True), np.linalg.solve(s, b), dtype)
    close(ctorch.cholesky_inverse(Lf), np.linalg.inv(s), dtype)
    close(Lf.mT.cholesky_inverse(upper=True), np.linalg.inv(s), dtype)
    out = ctorch.empty(0, dtype=A.dtype, device=device)
    assert ctorch.cholesky_inverse(Lf[0], out=out) is out
    close(out, np.linalg.inv(s[0]), dtype)
    assert tuple(ctorch.cholesky_inverse(Lf[:0]).shape) == (0, 4, 4)


def test_triangular_errors(device):
    A, B = T(np.eye(2), device), T(np.ones((2, 3)), device)
    raises(TypeError, "upper", lambda: L.solve_triangular(A, B))
    raises(RuntimeError,
           "linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B (2x2 and 3x2)",
           lambda: L.solve_triangular(A, B.mT, upper=False))
    raises(RuntimeError, "linalg.solve_triangular: The input tensor B must have at least 2 dimensions.",
           lambda: L.solve_triangular(A, B[0], upper=False))
    raises(RuntimeError, "linalg.solve_triangular: The input tensor A must have at least 2 dimensions.",
           lambda: L.solve_triangular(B[0], B[0], upper=False))
    raises(RuntimeError, "linalg.solve_triangular: Incompatible shapes of A and B for the equation XA = B (2x2 and "
           "2x3)", lambda: L.solve_triangular(A, B, upper=False, left=False))
    raises(RuntimeError, "linalg.solve_triangular: A must be batches of square matrices, but they are 2 by 3 matrices",
           lambda: L.solve_triangular(B, B, upper=False))
    raises(NotImplementedError, "\"triangular_solve_cpu\" not implemented for 'Long'"
           if device == "cpu" else "not implemented for 'Long'",
           lambda: L.solve_triangular(A.long(), B.long(), upper=False))
    raises(RuntimeError, "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 0",
           lambda: L.solve_triangular(A.expand(3, 2, 2), B.expand(4, 2, 3), upper=False))
    # the result takes A's dtype, as PyTorch's
    assert L.solve_triangular(A.float(), B, upper=False).dtype == ctorch.float32
    raises(RuntimeError, "b should have at least 2 dimensions, but has 1 dimensions instead",
           lambda: ctorch.cholesky_solve(B[0], A))
    raises(RuntimeError, "Incompatible matrix sizes for cholesky_solve: each A matrix is 2 by 2 but each b matrix is "
           "3 by 2", lambda: ctorch.cholesky_solve(B.mT, A))
    raises(RuntimeError, "Expected b and A to have the same dtype, but found b of type Float and A of type Double "
           "instead.", lambda: ctorch.cholesky_solve(B.float(), A))
    raises(RuntimeError, "cholesky_inverse: A must be batches of square matrices, but they are 2 by 3 matrices",
           lambda: ctorch.cholesky_inverse(B))
    raises(L.LinAlgError, "cholesky_inverse: The diagonal element 2 is zero, the inversion could not be completed "
           "because the input matrix is singular.", lambda: ctorch.cholesky_inverse(T([[1.0, 0], [1, 0]], device)))
    # a zero on the diagonal of solve_triangular gives infinities, no error (as PyTorch)
    assert not np.isfinite(L.solve_triangular(A * 0, B, upper=False).cpu().numpy()).any()


# --- qr ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 4), (2, 3, 3)], ids=["tall", "wide", "square"])
def test_qr(device, dtype, shape, rng):
    a = rng.standard_normal(shape)
    A = transposed(a, device, dtype) if len(shape) == 2 else T(a, device, dtype)
    m, n = shape[-2:]
    k = min(m, n)
    Q, R = L.qr(A)
    assert tuple(Q.shape) == shape[:-1] + (k,) and tuple(R.shape) == shape[:-2] + (k, n)
    close(Q @ R, a, dtype)
    close(Q.mT @ Q, np.broadcast_to(np.eye(k), shape[:-2] + (k, k)), dtype)
    assert np.array_equal(np.triu(R.cpu().numpy()), R.cpu().numpy())
    # NumPy's (LAPACK's) signs: R's diagonal is -sign(a_jj) times a norm
    q_np, r_np = np.linalg.qr(a)
    close(Q, q_np, dtype)
    close(R, r_np, dtype)
    Qc, Rc = L.qr(A, mode="complete")
    assert tuple(Qc.shape) == shape[:-1] + (m,) and tuple(Rc.shape) == shape
    close(Qc @ Rc, a, dtype)
    close(Qc.mT @ Qc, np.broadcast_to(np.eye(m), shape[:-2] + (m, m)), dtype)
    Qr, Rr = L.qr(A, mode="r")
    assert tuple(Qr.shape) == (0,)
    close(Rr, r_np, dtype)


def test_qr_edge_cases(device):
    z = T(np.zeros((3, 2)), device)
    Q, R = L.qr(z)  # zero columns: identity reflectors
    np.testing.assert_array_equal(Q.cpu().numpy(), np.eye(3, 2))
    np.testing.assert_array_equal(R.cpu().numpy(), np.zeros((2, 2)))
    assert type(L.qr(z)).__name__ == "linalg_qr" and L.qr(z).R.shape == (2, 2)
    Q, R = L.qr(T(np.zeros((0, 2, 3)), device))
    assert tuple(Q.shape) == (0, 2, 2) and tuple(R.shape) == (0, 2, 3)
    Q, R = L.qr(T(np.zeros((3, 0)), device), mode="complete")
    np.testing.assert_array_equal(Q.cpu().numpy(), np.eye(3))
    assert tuple(R.shape) == (3, 0)
    outs = (ctorch.empty(0, dtype=ctorch.float64, device=device), ctorch.empty(0, dtype=ctorch.float64, device=device))
    r = L.qr(T(np.eye(3)[:, :2] * 2, device), out=outs)
    assert r[0] is outs[0] and r[1] is outs[1] and tuple(outs[1].shape) == (2, 2)
    raises(RuntimeError, "qr received unrecognized mode 'foo' but expected one of 'reduced' (default), 'r', or "
           "'complete'", lambda: L.qr(z, mode="foo"))
    raises(RuntimeError, "linalg.qr: The input tensor A must have at least 2 dimensions.", lambda: L.qr(z[0]))
    raises(NotImplementedError, "linalg.qr: Expected a floating point or complex tensor as input. Got Long",
           lambda: L.qr(z.long()))
    raises(NotImplementedError, "not implemented for 'Half'", lambda: L.qr(z.half()))


# --- gradients -----------------------------------------------------------------------------------
def test_gradients(device, rng):
    X = T(rng.standard_normal((2, 3, 3)), device, grad=True)
    eye = ctorch.eye(3, dtype=ctorch.float64, device=device)
    assert gradcheck(lambda x: L.cholesky(x @ x.mT + eye), (X,))
    assert gradcheck(lambda x: L.cholesky(x @ x.mT + eye, upper=True), (X,))
    assert gradcheck(lambda x: L.cholesky_ex(x @ x.mT + eye).L, (X,))
    tri = T(np.tril(rng.standard_normal((2, 3, 3))) + 3 * np.eye(3), device, grad=True)
    B = T(rng.standard_normal((2, 3, 2)), device, grad=True)
    assert gradcheck(lambda a, b: L.solve_triangular(a, b, upper=False), (tri, B))
    assert gradcheck(lambda a, b: L.solve_triangular(a.mT, b.mT, upper=True, left=False, unitriangular=True),
                     (tri, B))
    # the factor's other triangle is never read, so the check goes through it
    assert gradcheck(lambda b, l: ctorch.cholesky_solve(b, l.tril()), (B, tri))
    assert gradcheck(lambda b, l: ctorch.cholesky_solve(b, l.mT.triu(), upper=True), (B, tri))
    assert gradcheck(lambda l: ctorch.cholesky_inverse(l.tril()), (tri,))
    assert gradcheck(lambda l: ctorch.cholesky_inverse(l.mT.triu(), upper=True), (tri,))
    tall = T(rng.standard_normal((2, 4, 3)), device, grad=True)
    wide = T(rng.standard_normal((3, 4)), device, grad=True)
    assert gradcheck(L.qr, (tall,))
    assert gradcheck(L.qr, (wide,))
    assert gradcheck(lambda a: L.qr(a, mode="complete"), (wide,))
    assert gradcheck(lambda a: L.qr(a).R, (tall,))
    # second order: the formulas are recording ops

    def first_order(x):
        with ctorch.enable_grad():  # gradcheck's finite differences run under no_grad
            return ctorch.autograd.grad(L.cholesky(x @ x.mT + eye).pow(2).sum(), x, create_graph=True)[0]
    assert gradcheck(first_order, (X,))
    names = {"LinalgCholeskyExBackward0": L.cholesky(X @ X.mT + eye), "LinalgSolveTriangularBackward0":
             L.solve_triangular(tri, B, upper=False), "CholeskySolveBackward0": ctorch.cholesky_solve(B, tri),
             "CholeskyInverseBackward0": tri.cholesky_inverse(), "LinalgQrBackward0": L.qr(tall).Q}
    for name, r in names.items():
        assert type(r.grad_fn).__name__ == name
    raises(RuntimeError, "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.",
           lambda: L.qr(tall, mode="r").R.sum().backward())
    raises(RuntimeError, "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.",
           lambda: L.qr(tall, mode="complete").Q.sum().backward())
