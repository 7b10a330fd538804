"""torch.linalg's eigh / eigvalsh and svd / svdvals / torch.svd (csrc/linalg_eig.c, Jacobi in
decomp_math.h), and what they give: matrix_norm / norm 'nuc', 2, -2, cond, matrix_rank and pinv.
Vectors are checked by reconstruction and orthonormality (their signs are not unique), values
against NumPy; gradients by gradcheck in float64 on well-separated spectra; PyTorch's errors."""
import numpy as np
import pytest

import ctorch
from ctorch.autograd import gradcheck

from linalg_testing import FLOATS, T, N, mT, raises

L = ctorch.linalg


def tol(dtype):
    return dict(rtol=1e-4, atol=2e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-11)


def check_orthonormal_columns(Q, dtype):
    k = Q.shape[-1]
    np.testing.assert_allclose(mT(Q) @ Q, np.broadcast_to(np.eye(k), Q.shape[:-2] + (k, k)), **tol(dtype))


# --- eigh ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(device, dtype, uplo, rng):
    a = rng.standard_normal((2, 3, 6, 6))
    a = a + mT(a)
    junk = np.triu(rng.standard_normal((6, 6)), 1)  # the triangle not named by UPLO is never read
    given = a + (junk if uplo == "L" else mT(junk))
    w, V = L.eigh(T(given, device, dtype), UPLO=uplo)
    assert type(w).__name__ == "Tensor" and w.dtype == getattr(ctorch, dtype) and tuple(V.shape) == a.shape
    np.testing.assert_allclose(N(w), np.linalg.eigvalsh(a), **tol(dtype))
    assert np.all(np.diff(N(w), axis=-1) >= 0)
    np.testing.assert_allclose(a @ N(V), N(V) * N(w)[..., None, :], **tol(dtype))
    check_orthonormal_columns(N(V), dtype)
    np.testing.assert_allclose(N(L.eigvalsh(T(given, device, dtype), uplo)), np.linalg.eigvalsh(a), **tol(dtype))


def test_eigh_named_tuple_layouts_and_edges(device, rng):
    a = rng.standard_normal((5, 5))
    a = a + a.T
    r = L.eigh(T(a, device).transpose(0, 1))  # transposed: the upper triangle of a read as lower
    assert type(r).__name__ == "linalg_eigh" and r.eigenvalues is r[0] and r.eigenvectors is r[1]
    np.testing.assert_allclose(N(r.eigenvalues), np.linalg.eigvalsh(a), rtol=1e-10, atol=1e-11)
    # repeated eigenvalues: still an orthonormal basis
    q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    d = q @ np.diag([1.0, 1.0, 1.0, 3.0]) @ q.T
    w, V = L.eigh(T(d, device))
    np.testing.assert_allclose(N(w), [1, 1, 1, 3], atol=1e-12)
    check_orthonormal_columns(N(V), "float64")
    np.testing.assert_allclose(d @ N(V), N(V) * N(w), atol=1e-12)
    w, V = L.eigh(T(np.zeros((2, 0, 0)), device))
    assert tuple(w.shape) == (2, 0) and tuple(V.shape) == (2, 0, 0)
    w, V = L.eigh(T([[[-2.5]]], device))
    assert N(w).tolist() == [[-2.5]] and abs(N(V)).tolist() == [[[1.0]]]
    out = (T(np.zeros(0), device), T(np.zeros(0), device))
    r = L.eigh(T(a, device), out=out)
    assert r[0] is out[0] and r[1] is out[1] and tuple(out[1].shape) == (5, 5)
    o = T(np.zeros(5), device)
    assert L.eigvalsh(T(a, device), out=o) is o
    np.testing.assert_allclose(N(o), np.linalg.eigvalsh(a), rtol=1e-10, atol=1e-11)


def test_eigh_errors(device):
    raises(NotImplementedError, "\"linalg_eigh_%s\" not implemented for 'Long'" % device.split(":")[0],
           lambda: L.eigh(ctorch.ones(3, 3, dtype=ctorch.int64, device=device)))
    raises(RuntimeError, "linalg.eigh: A must be batches of square matrices, but they are 3 by 4 matrices",
           lambda: L.eigh(ctorch.ones(3, 4, device=device)))
    raises(RuntimeError, "linalg.eigh: A must be batches of square matrices, but they are 3 by 4 matrices",
           lambda: L.eigvalsh(ctorch.ones(3, 4, device=device)))
    raises(RuntimeError, "linalg.eigh: The input tensor A must have at least 2 dimensions.",
           lambda: L.eigh(ctorch.ones(3, device=device)))
    raises(RuntimeError, "Expected UPLO argument to be 'L' or 'U', but got X",
           lambda: L.eigvalsh(ctorch.ones(3, 3, device=device), UPLO="X"))


# --- svd -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 3, 5), (4, 4)], ids=["tall", "wide", "square"])
@pytest.mark.parametrize("full", [True, False], ids=["full", "reduced"])
def test_svd(device, dtype, shape, full, rng):
    a = rng.standard_normal(shape)
    U, S, Vh = L.svd(T(a, device, dtype), full_matrices=full)
    Ur, Sr, Vhr = np.linalg.svd(a, full_matrices=full)
    assert U.shape == Ur.shape and S.shape == Sr.shape and Vh.shape == Vhr.shape
    np.testing.assert_allclose(N(S), Sr, **tol(dtype))
    k = min(shape[-2:])
    np.testing.assert_allclose((N(U)[..., :k] * N(S)[..., None, :]) @ N(Vh)[..., :k, :], a, **tol(dtype))
    check_orthonormal_columns(N(U), dtype)
    check_orthonormal_columns(mT(N(Vh)), dtype)
    np.testing.assert_allclose(N(L.svdvals(T(a, device, dtype))), Sr, **tol(dtype))


def test_svd_torch_svd_edges_and_out(device, rng):
    a = rng.standard_normal((4, 2))
    r = ctorch.svd(T(a, device))
    assert type(r).__name__ == "svd" and r.V.shape == (2, 2)
    np.testing.assert_allclose(N(r.U) * N(r.S) @ N(r.V).T, a, atol=1e-12)
    assert tuple(ctorch.svd(T(a, device), some=False).U.shape) == (4, 4)
    r = T(a, device).svd(compute_uv=False)
    assert N(r.U).tolist() == np.zeros((4, 4)).tolist() and N(r.V).tolist() == np.zeros((2, 2)).tolist()
    np.testing.assert_allclose(N(r.S), np.linalg.svd(a, compute_uv=False), atol=1e-12)
    r = L.svd(T(a, device))
    assert type(r).__name__ == "linalg_svd" and r.Vh is r[2]
    # rank deficient: U still orthonormal, the zero singular values exact enough
    d = rng.standard_normal((5, 1)) @ rng.standard_normal((1, 3))
    U, S, Vh = L.svd(T(d, device))
    check_orthonormal_columns(N(U), "float64")
    np.testing.assert_allclose(N(S), np.linalg.svd(d, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose((N(U)[:, :3] * N(S)) @ N(Vh), d, atol=1e-12)
    U, S, Vh = L.svd(T(np.zeros((3, 0)), device))
    assert N(U).tolist() == np.eye(3).tolist() and tuple(S.shape) == (0,) and tuple(Vh.shape) == (0, 0)
    U, S, Vh = L.svd(T(np.zeros((2, 0, 3)), device), full_matrices=False)
    assert tuple(U.shape) == (2, 0, 0) and tuple(Vh.shape) == (2, 0, 3)
    out = tuple(T(np.zeros(0), device) for _ in range(3))
    r = L.svd(T(a, device), out=out)
    assert all(x is y for x, y in zip(r, out)) and tuple(out[0].shape) == (4, 4)


def test_svd_errors(device):
    raises(NotImplementedError, "linalg.svd: Expected a floating point or complex tensor as input. Got Long",
           lambda: L.svd(ctorch.ones(3, 3, dtype=ctorch.int64, device=device)))
    raises(NotImplementedError, "\"linalg_svd_%s\" not implemented for 'Half'" % device.split(":")[0],
           lambda: L.svdvals(ctorch.ones(3, 3, dtype=ctorch.float16, device=device)))
    raises(RuntimeError, "linalg.svd: The input tensor A must have at least 2 dimensions.",
           lambda: L.svdvals(ctorch.ones(3, device=device)))
    if device == "cpu":
        raises(RuntimeError, "keyword argument `driver=` is only supported on CUDA inputs",
               lambda: L.svd(ctorch.ones(3, 3), driver="gesvd"))


# --- gradients -------------------------------------------------------------------------------------
def separated_symmetric(rng, n):
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return q @ np.diag(np.arange(1.0, n + 1) * 1.5) @ q.T


def test_eigh_backward(device, rng):
    x = T(separated_symmetric(rng, 4), device, grad=True)
    w, V = L.eigh(x)
    assert w.grad_fn.name() == "LinalgEighBackward0" and L.eigvalsh(x).grad_fn.name() == "LinalgEighBackward0"
    assert gradcheck(lambda x: L.eigh(x + x.mT).eigenvalues, (x,))
    # a gauge-invariant function of the vectors (their signs cancel)
    assert gradcheck(lambda x: L.eigh(x + x.mT).eigenvectors.pow(2) * L.eigvalsh(x + x.mT), (x,))


@pytest.mark.parametrize("shape,full", [((4, 3), False), ((3, 4), False), ((3, 3), True), ((4, 3), True)])
def test_svd_backward(device, rng, shape, full):
    q1, _ = np.linalg.qr(rng.standard_normal((shape[0], shape[0])))
    q2, _ = np.linalg.qr(rng.standard_normal((shape[1], shape[1])))
    k = min(shape)
    s = np.zeros(shape)
    s[range(k), range(k)] = np.arange(k, 0, -1) + 1.0
    x = T(q1 @ s @ q2, device, grad=True)
    U, S, Vh = L.svd(x, full_matrices=full)
    assert U.grad_fn.name() == "LinalgSvdBackward0" and L.svdvals(x).grad_fn.name() == "LinalgSvdBackward0"
    assert ctorch.svd(x).V.grad_fn.name() == "TransposeBackward0"

    def gauge_invariant(x):  # U_i Vh_i is sign-free; so is S
        U, S, Vh = L.svd(x, full_matrices=full)
        return (U[..., :k] * S[..., None, :]) @ Vh[..., :k, :] + U[..., :, :1] * Vh[..., :1, :]

    assert gradcheck(gauge_invariant, (x,))
    assert gradcheck(L.svdvals, (x,))


# --- what they give ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_svd_norms(device, dtype, rng):
    a = rng.standard_normal((2, 3, 4))
    A = T(a, device, dtype)
    for o in ["nuc", 2, -2]:
        expect = np.linalg.norm(a, o, axis=(-2, -1))
        np.testing.assert_allclose(N(L.matrix_norm(A, o)), expect, **tol(dtype))
        np.testing.assert_allclose(N(L.norm(A, o, dim=(-2, -1))), expect, **tol(dtype))
        r = L.matrix_norm(A, o, dim=(0, 2), keepdim=True)
        assert tuple(r.shape) == (1, 3, 1)
        np.testing.assert_allclose(N(r)[0, :, 0], np.linalg.norm(np.moveaxis(a, 1, 0), o, axis=(-2, -1)),
                                   **tol(dtype))
    np.testing.assert_allclose(N(ctorch.norm(A[0], p="nuc")), np.linalg.norm(a[0], "nuc"), **tol(dtype))
    np.testing.assert_allclose(N(ctorch.norm(A, p="nuc", dim=(1, 2))), np.linalg.norm(a, "nuc", axis=(1, 2)),
                               **tol(dtype))
    assert N(L.matrix_norm(T(np.zeros((0, 3)), device, dtype), 2)) == 0


def test_svd_norm_backward(device, rng):
    x = T(rng.standard_normal((3, 4)), device, grad=True)
    assert L.matrix_norm(x, "nuc").grad_fn.name() == "SumBackward1"
    assert L.matrix_norm(x, 2).grad_fn.name() == "AmaxBackward0"
    assert L.matrix_norm(x, -2).grad_fn.name() == "AminBackward0"
    assert gradcheck(lambda x: L.matrix_norm(x, "nuc"), (x,))
    assert gradcheck(lambda x: L.cond(x), (x,))


@pytest.mark.parametrize("dtype", FLOATS)
def test_cond(device, dtype, rng):
    b = rng.standard_normal((2, 4, 4)) + 3 * np.eye(4)
    for p in [None, 2, -2, 1, -1, float("inf"), float("-inf"), "fro", "nuc"]:
        np.testing.assert_allclose(N(L.cond(T(b, device, dtype), p)), np.linalg.cond(b, p), rtol=1e-4)
    w = rng.standard_normal((2, 3))
    np.testing.assert_allclose(N(L.cond(T(w, device, dtype))), np.linalg.cond(w), rtol=1e-4)
    z = T(np.zeros((2, 2)), device, dtype)
    assert N(L.cond(z, 1)) == np.inf and N(L.cond(z, "fro")) == np.inf and np.isnan(N(L.cond(z)))
    raises(RuntimeError, "linalg.cond(ord=1): A must be batches of square matrices, but they are 2 by 3 matrices",
           lambda: L.cond(T(w, device, dtype), 1))
    raises(ValueError, "linalg.cond got an invalid norm type: 3", lambda: L.cond(z, 3))


@pytest.mark.parametrize("dtype", FLOATS)
def test_matrix_rank_pinv(device, dtype, rng):
    a = rng.standard_normal((2, 6, 3)) @ rng.standard_normal((2, 3, 5))  # rank 3
    A = T(a, device, dtype)
    assert N(L.matrix_rank(A)).tolist() == [3, 3] and L.matrix_rank(A).dtype == ctorch.int64
    assert N(L.matrix_rank(A, atol=1e9)).tolist() == [0, 0]
    s = np.linalg.svd(a, compute_uv=False)
    cut = float(s[0, 1]) * 1.001  # between the first two singular values of matrix 0
    expect = (s > cut).sum(-1).tolist()
    assert N(L.matrix_rank(A, atol=cut, rtol=0.0)).tolist() == expect
    assert N(L.matrix_rank(A, atol=T(cut, device, dtype), rtol=T(0.0, device, dtype))).tolist() == expect
    assert N(L.matrix_rank(A, rtol=cut / s[:, 0].max() / 1e6)).tolist() == [3, 3]
    np.testing.assert_allclose(N(L.pinv(A)), np.linalg.pinv(a), rtol=1e-3 if dtype == "float32" else 1e-8,
                               atol=1e-4 if dtype == "float32" else 1e-10)
    h = rng.standard_normal((4, 4))
    h = h + h.T
    np.testing.assert_allclose(N(L.pinv(T(h, device, dtype), hermitian=True)), np.linalg.pinv(h, hermitian=True),
                               **tol(dtype))
    assert N(L.matrix_rank(T(h, device, dtype), hermitian=True)) == 4
    assert N(L.matrix_rank(T(np.eye(3), device, dtype), tol=1.0)) == 0  # legacy: tol is atol, rtol 0
    assert N(L.matrix_rank(T(np.zeros((2, 0, 3)), device, dtype))).tolist() == [0, 0]
    assert tuple(L.pinv(T(np.zeros((0, 3)), device, dtype)).shape) == (3, 0)
    raises(RuntimeError, "linalg.pinv(Float{[3]}): expected a tensor with 2 or more dimensions of float, double",
           lambda: L.pinv(ctorch.ones(3, device=device)))
    raises(RuntimeError, "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.",
           lambda: L.matrix_rank(ctorch.ones(3, device=device)))


def test_pinv_backward(device, rng):
    x = T(rng.standard_normal((4, 3)), device, grad=True)
    assert gradcheck(L.pinv, (x,))
    h = T(separated_symmetric(rng, 3), device, grad=True)
    assert gradcheck(lambda h: L.pinv(h + h.mT, hermitian=True), (h,))
