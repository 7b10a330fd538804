"""torch.geqrf / ormqr (csrc/linalg_lu.c) and linalg.ldl_factor(_ex) / ldl_solve (csrc/linalg_ldl.c):
geqrf by reconstruction (householder_product's Q times R) and against NumPy's R, ormqr against
explicit products with Q, the LDL factors by solving symmetric indefinite systems against
numpy.linalg.solve (including matrices whose zero diagonal forces 2x2 pivots) and by LAPACK's
pivot conventions; PyTorch's errors, out=, gradients and node names; svd_lowrank / pca_lowrank /
lobpcg (python/ctorch/_lowrank.py, _lobpcg.py)."""
import numpy as np
import pytest

import ctorch
from ctorch.autograd import gradcheck

from linalg_testing import FLOATS, N, T, mT, raises

L = ctorch.linalg


def close(t, expect, dtype):
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(N(t), expect, **tol)


# --- geqrf / ormqr ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 4), (4, 4)], ids=["tall", "wide", "square"])
def test_geqrf(device, dtype, shape, rng):
    a = rng.standard_normal(shape)
    A = T(a, device, dtype)
    res = ctorch.geqrf(A.mT.contiguous().mT)  # a transposed layout
    assert type(res).__name__ == "geqrf" and res.a is res[0] and res.tau is res[1]
    h, tau = res
    m, n = shape[-2:]
    k = min(m, n)
    assert h.shape == A.shape and tau.shape == A.shape[:-2] + (k,)
    r = N(h.triu())[..., :k, :]
    np.testing.assert_allclose(np.abs(r), np.abs(np.linalg.qr(a)[1]), rtol=1e-4 if dtype == "float32" else 1e-10,
                               atol=1e-5 if dtype == "float32" else 1e-11)
    Q = L.householder_product(h[..., :, :k], tau)  # (m, k)
    close(Q @ T(r, device, dtype), a, dtype)
    assert A.geqrf().tau.shape == tau.shape
    # out=, empty
    outs = (ctorch.empty(0, dtype=A.dtype, device=device), ctorch.empty(0, dtype=A.dtype, device=device))
    ctorch.geqrf(A, out=outs)
    close(outs[1], N(tau), dtype)
    e = ctorch.geqrf(ctorch.zeros(2, 0, 3, dtype=A.dtype, device=device))
    assert e.a.shape == (2, 0, 3) and e.tau.shape == (2, 0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
def test_ormqr(device, dtype, left, transpose, rng):
    a = rng.standard_normal((2, 5, 3))
    h, tau = ctorch.geqrf(T(a, device, dtype))
    q = N(L.householder_product(ctorch.cat([h, ctorch.zeros(2, 5, 2, dtype=h.dtype, device=device)], -1),
                                ctorch.cat([tau, ctorch.zeros(2, 2, dtype=h.dtype, device=device)], -1)))
    c = rng.standard_normal((2, 5, 2) if left else (2, 2, 5))
    opq = mT(q) if transpose else q
    got = ctorch.ormqr(h, tau, T(c, device, dtype), left=left, transpose=transpose)
    close(got, opq @ c if left else c @ opq, dtype)
    close(h.ormqr(tau, T(c, device, dtype), left, transpose), N(got), dtype)


def test_ormqr_gradients_and_out(rng):
    h, tau = ctorch.geqrf(T(rng.standard_normal((4, 3)), "cpu"))
    c = T(rng.standard_normal((4, 2)), "cpu", grad=True)
    assert gradcheck(lambda x, t, y: ctorch.ormqr(x, t, y), (h.requires_grad_(), tau.requires_grad_(), c))
    assert gradcheck(lambda x, t, y: ctorch.ormqr(x, t, y.mT, left=False, transpose=True), (h, tau, c))
    h, tau, c = h.detach(), tau.detach(), c.detach()
    out = ctorch.empty(0, dtype=ctorch.float64)
    assert ctorch.ormqr(h, tau, c, out=out) is out
    raises(RuntimeError, "Expected input and result to have the same dtype",
           lambda: ctorch.ormqr(h, tau, c, out=ctorch.empty(0)))


def test_geqrf_ormqr_errors(rng):
    r = lambda *s, dt="float32": T(rng.standard_normal(s), "cpu", dt)  # noqa: E731
    raises(RuntimeError, "torch.geqrf: input must have at least 2 dimensions.", lambda: ctorch.geqrf(r(3)))
    raises(NotImplementedError, "\"geqrf_cpu\" not implemented for 'Int'",
           lambda: ctorch.geqrf(ctorch.ones(3, 3).int()))
    x = r(3, 3, dt="float64").requires_grad_()
    h, tau = ctorch.geqrf(x)
    assert type(h.grad_fn).__name__ == "GeqrfBackward0"
    raises(NotImplementedError, "the derivative for 'geqrf' is not implemented.", lambda: h.sum().backward())
    cases = [
        ((r(3), r(3), r(3, 3)), {}, "torch.ormqr: input must have at least 2 dimensions."),
        ((r(3, 3), r(3), r(3)), {}, "torch.ormqr: other must have at least 2 dimensions."),
        ((r(3, 3), r(3, 3), r(4, 3)), {}, "torch.ormqr: other.shape[-2] must be equal to input.shape[-2]"),
        ((r(3, 3), r(3), r(3, 4)), {"left": False}, "torch.ormqr: other.shape[-1] must be equal to input.shape[-2]"),
        ((r(3, 3), r(3, 3), r(3, 3)), {}, "Expected tau to have one dimension less than input, but got tau.ndim "
                                          "equal to 2 and input.ndim is equal to 2"),
        ((r(4, 3), r(2), r(4, 2)), {}, "tau.shape[-1] must be equal to min(other.shape[-2], input.shape[-1])"),
        ((r(2, 3, 3), r(2, 3), r(3, 3)), {}, "Expected other to have the same number of dimensions as input"),
        ((r(2, 3, 3), r(3, 3), r(3, 3, 3)), {}, "Expected batch dimensions of tau to be equal to input.shape[:-2], "
                                                "but got [3]"),
        ((r(2, 3, 3), r(2, 3), r(3, 3, 3)), {}, "Expected batch dimensions of other to be equal to input.shape[:-2]"),
        ((r(3, 3), r(3, dt="float64"), r(3, 3)), {}, "Expected input and tau to have the same dtype, but input has "
                                                     "dtypeFloat and tau has dtype Double"),
    ]
    for args, kw, msg in cases:
        raises(RuntimeError, msg, lambda: ctorch.ormqr(*args, **kw))
    raises(NotImplementedError, "\"ormqr_cpu\" not implemented for 'Int'",
           lambda: ctorch.ormqr(ctorch.ones(3, 3).int(), ctorch.ones(3).int(), ctorch.ones(3, 3).int()))


# --- ldl_factor / ldl_solve ------------------------------------------------------------------------
def symmetric(rng, shape, zero_diagonal=False):
    a = rng.standard_normal(shape)
    a = a + mT(a)
    if zero_diagonal:  # |A[k, k]| < alpha |A[i, k]| everywhere: 2x2 pivots
        a[..., np.arange(shape[-1]), np.arange(shape[-1])] = 0.0
    return a


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("zero_diagonal", [False, True], ids=["indefinite", "zero_diag"])
def test_ldl_solve(device, dtype, zero_diagonal, rng):
    a = symmetric(rng, (3, 6, 6), zero_diagonal)
    b = rng.standard_normal((3, 6, 2))
    A = T(a, device, dtype)
    LD, piv, info = L.ldl_factor_ex(A.mT.contiguous().mT, hermitian=True)
    assert piv.dtype == ctorch.int32 and info.dtype == ctorch.int32 and N(info).tolist() == [0, 0, 0]
    assert np.all(N(LD.triu(1)) == 0) and type(L.ldl_factor(A)).__name__ == "linalg_ldl_factor"
    p = N(piv)
    assert np.all((np.abs(p) >= 1) & (np.abs(p) <= 6))
    if zero_diagonal:
        assert np.any(p < 0)
    for row in p:  # LAPACK: a negative pivot is repeated on both rows of its 2x2 block
        k = 0
        while k < 6:
            if row[k] < 0:
                assert row[k + 1] == row[k]
                k += 2
            else:
                k += 1
    close(L.ldl_solve(LD, piv, T(b, device, dtype)), np.linalg.solve(a, b), dtype)
    # broadcasting: one factorization, a batch of right-hand sides
    x = L.ldl_solve(LD[0], piv[0], T(b, device, dtype))
    close(x, np.linalg.solve(a[0], b), dtype)


def test_ldl_out_zero_and_gradients(rng):
    a = symmetric(rng, (2, 4, 4))
    A = T(a, "cpu")
    outs = tuple(ctorch.empty(0, dtype=d) for d in (ctorch.float64, ctorch.int32, ctorch.int32))
    L.ldl_factor_ex(A, out=outs)
    assert outs[1].shape == (2, 4)
    X = ctorch.empty(0, dtype=ctorch.float64)
    assert L.ldl_solve(outs[0], outs[1], T(np.ones((4, 1)), "cpu"), out=X) is X
    np.testing.assert_allclose(N(X), np.linalg.solve(a, np.ones((4, 1))), rtol=1e-10)
    LD, piv, info = L.ldl_factor_ex(ctorch.zeros(2, 3, 3))
    assert N(info).tolist() == [1, 1] and N(piv).tolist() == [[1, 2, 3]] * 2
    raises(RuntimeError, "torch.linalg.ldl_factor: Unknown error code: 1.", lambda: L.ldl_factor(ctorch.zeros(3, 3)))
    raises(RuntimeError, "torch.linalg.ldl_factor_ex: Unknown error code: 1.",
           lambda: L.ldl_factor_ex(ctorch.zeros(3, 3), check_errors=True))
    A.requires_grad_()
    LD, piv = L.ldl_factor(A)
    raises(RuntimeError, "derivative for aten::linalg_ldl_factor_ex is not implemented", lambda: LD.sum().backward())
    B = T(np.ones((4, 1)), "cpu", grad=True)
    raises(RuntimeError, "derivative for aten::linalg_ldl_solve is not implemented",
           lambda: L.ldl_solve(LD.detach(), piv, B).sum().backward())


def test_ldl_errors():
    piv = ctorch.tensor([1, 2, 3], dtype=ctorch.int32)
    raises(RuntimeError, "torch.linalg.ldl_factor_ex: The input tensor A must have at least 2 dimensions.",
           lambda: L.ldl_factor(ctorch.ones(3)))
    raises(RuntimeError, "torch.linalg.ldl_factor_ex: A must be batches of square matrices, but they are 3 by 4 "
                         "matrices", lambda: L.ldl_factor(ctorch.ones(3, 4)))
    raises(NotImplementedError, "Expected a floating point or complex tensor as input. Got Int",
           lambda: L.ldl_factor(ctorch.ones(3, 3).int()))
    raises(NotImplementedError, "\"ldl_factor_kernel_cpu\" not implemented for 'Half'",
           lambda: L.ldl_factor(ctorch.ones(3, 3).half()))
    raises(RuntimeError, "Expected out tensor to have dtype int, but got float instead",
           lambda: L.ldl_factor(ctorch.eye(3), out=(ctorch.empty(0), ctorch.empty(0))))
    raises(RuntimeError, "torch.linalg.ldl_solve: A must be batches of square matrices",
           lambda: L.ldl_solve(ctorch.ones(3, 4), piv, ctorch.ones(3, 2)))
    raises(IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got -2)",
           lambda: L.ldl_solve(ctorch.eye(3), piv, ctorch.ones(3)))
    raises(RuntimeError, "Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape [2] "
                         "instead", lambda: L.ldl_solve(ctorch.eye(3), piv[:2], ctorch.ones(3, 1)))
    raises(RuntimeError, "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is 3 by 3 but each b "
                         "matrix is 4 by 1", lambda: L.ldl_solve(ctorch.eye(3), piv, ctorch.ones(4, 1)))
    raises(RuntimeError, "torch.linalg.ldl_solve: Expected pivots to be integers. Got Float",
           lambda: L.ldl_solve(ctorch.eye(3), piv.float(), ctorch.ones(3, 1)))
    raises(RuntimeError, "Expected b and A to have the same dtype, but found b of type Double and A of type Float",
           lambda: L.ldl_solve(ctorch.eye(3), piv, ctorch.ones(3, 1, dtype=ctorch.float64)))
    raises(RuntimeError, "Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2).",
           lambda: L.ldl_solve(ctorch.eye(3), ctorch.tensor([1, 9, 3], dtype=ctorch.int32), ctorch.ones(3, 1)))
    raises(RuntimeError, "Pivots given to ldl_solve must all satisfy |pivot| >= 1.",
           lambda: L.ldl_solve(ctorch.eye(3), ctorch.tensor([0, 2, 3], dtype=ctorch.int32), ctorch.ones(3, 1)))
    raises(RuntimeError, "opens a 2x2 block",  # a lone negative pivot would read past the matrix
           lambda: L.ldl_solve(ctorch.eye(3), ctorch.tensor([1, 2, -3], dtype=ctorch.int32), ctorch.ones(3, 1)))
    x = L.ldl_solve(ctorch.eye(3), piv.long(), ctorch.ones(3, 0))
    assert x.shape == (3, 0)


# --- svd_lowrank / pca_lowrank / lobpcg ------------------------------------------------------------
@pytest.mark.parametrize("tall", [True, False], ids=["tall", "wide"])
def test_svd_pca_lowrank(device, tall, rng):
    a = rng.standard_normal((2, 20, 4)) @ rng.standard_normal((2, 4, 12))  # rank 4
    a = a if tall else mT(a)
    ctorch.manual_seed(0)
    U, S, V = ctorch.svd_lowrank(T(a, device), q=6)
    m, n = a.shape[-2:]
    assert U.shape == (2, m, 6) and S.shape == (2, 6) and V.shape == (2, n, 6)
    np.testing.assert_allclose(N(U.mT @ U), np.broadcast_to(np.eye(6), (2, 6, 6)), atol=1e-10)
    np.testing.assert_allclose(N(U @ ctorch.diag_embed(S) @ V.mT), a, atol=1e-9)
    np.testing.assert_allclose(N(S)[:, :4], np.linalg.svd(a, compute_uv=False)[:, :4], rtol=1e-10)
    U, S, V = ctorch.svd_lowrank(T(a, device), q=4, M=T(a.mean(-2, keepdims=True), device))
    centred = a - a.mean(-2, keepdims=True)
    np.testing.assert_allclose(N(S), np.linalg.svd(centred, compute_uv=False)[:, :4], rtol=1e-9)
    U, S, V = ctorch.pca_lowrank(T(a, device), q=4)  # exact: the centred matrix has rank <= 4
    np.testing.assert_allclose(N(S), np.linalg.svd(centred, compute_uv=False)[:, :4], rtol=1e-9)
    _, S, _ = ctorch.pca_lowrank(T(a, device), center=False)
    np.testing.assert_allclose(N(S)[:, :4], np.linalg.svd(a, compute_uv=False)[:, :4], rtol=1e-9)


def test_lowrank_gradients_and_errors(rng):
    a = T(rng.standard_normal((6, 3)) @ rng.standard_normal((3, 5)), "cpu", grad=True)
    ctorch.manual_seed(0)
    S = ctorch.svd_lowrank(a, q=3, niter=2)[1]
    S.sum().backward()  # rank 3, so exact: the nuclear norm, whose gradient is U V^T
    U, _, Vh = np.linalg.svd(N(a))
    np.testing.assert_allclose(N(a.grad), U[:, :3] @ Vh[:3], atol=1e-8)
    with pytest.raises(ValueError, match=r"^q\(=7\) must be non-negative integer and not greater than min\(m, n\)=5$"):
        ctorch.pca_lowrank(a, q=7)
    with pytest.raises(ValueError, match=r"^niter\(=-1\) must be non-negative integer$"):
        ctorch.pca_lowrank(a, niter=-1)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg(device, dtype, largest, rng):
    if device == "cuda" and not largest:
        pytest.skip("emulated CUDA run time: largest=False runs the same device ops on -A")
    m = rng.standard_normal((2, 24, 24))
    a = m @ mT(m) + np.eye(24)
    w = np.linalg.eigvalsh(a)
    ctorch.manual_seed(0)
    E, X = ctorch.lobpcg(T(a, device, dtype), k=3, largest=largest)
    assert E.shape == (2, 3) and X.shape == (2, 24, 3)
    expect = w[:, ::-1][:, :3] if largest else w[:, :3]
    tol = dict(rtol=1e-4, atol=1e-3) if dtype == "float32" else dict(rtol=1e-7)  # relative to ||A|| ~ 100
    np.testing.assert_allclose(N(E), expect, **tol)
    np.testing.assert_allclose(N(X.mT @ X), np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-4)
    residual_tol = 0.2 if dtype == "float32" else 1e-5  # tol sqrt(eps) relative to ||A|| ~ 100
    np.testing.assert_allclose(N(T(a, device, dtype) @ X), N(X * E.unsqueeze(-2)), atol=residual_tol)


def test_lobpcg_generalized_and_errors(rng):
    m = rng.standard_normal((15, 15))
    a = m @ m.T + np.eye(15)
    b = np.diag(rng.uniform(1.0, 2.0, 15))
    ctorch.manual_seed(0)
    E, X = ctorch.lobpcg(T(a, "cpu"), k=2, B=T(b, "cpu"), X=T(rng.standard_normal((15, 2)), "cpu"))
    s = np.diag(np.diag(b) ** -0.5)
    np.testing.assert_allclose(N(E), np.linalg.eigvalsh(s @ a @ s)[::-1][:2], rtol=1e-7)
    np.testing.assert_allclose(N(X.mT @ T(b, "cpu") @ X), np.eye(2), atol=1e-8)  # B-orthonormal
    with pytest.raises(ValueError, match=r"smaller than 3 x the number of requested eigenpairs \(=6\)"):
        ctorch.lobpcg(T(a, "cpu"), k=6)
    with pytest.raises(AssertionError, match="A must be square"):
        ctorch.lobpcg(ctorch.ones(3, 4))
    with pytest.raises(NotImplementedError, match="gradients"):
        ctorch.lobpcg(T(a, "cpu", grad=True), k=1)
