"""ctorch._lowrank: torch.svd_lowrank and torch.pca_lowrank, randomized low-rank SVD (Halko, Martinsson
and Tropp 2009, algorithms 4.4 and 5.1), written as in PyTorch on top of tensor ops (matmul,
linalg.qr, linalg.svd), so they run on every device and are differentiable through those ops."""
from . import _C, linalg

__all__ = ["get_approximate_basis", "svd_lowrank", "pca_lowrank"]


def _floating_dtype(A):
    return A.dtype if A.dtype in (_C.float16, _C.bfloat16, _C.float32, _C.float64) else _C.float32


def get_approximate_basis(A, q, niter=2, M=None):
    """An (..., m, q) matrix with orthonormal columns whose range approximates that of A - M: a
    Gaussian sketch of the columns, then niter power iterations (each re-orthonormalised)."""
    niter = 2 if niter is None else niter
    R = _C.randn(A.shape[-1], q, dtype=_floating_dtype(A), device=A.device)
    X = A @ R if M is None else A @ R - M @ R
    Q = linalg.qr(X).Q
    for _ in range(niter):
        X = A.mT @ Q if M is None else A.mT @ Q - M.mT @ Q
        Q = linalg.qr(X).Q
        X = A @ Q if M is None else A @ Q - M @ Q
        Q = linalg.qr(X).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^T, of rank q: U (..., m, q), S (..., q), V (..., n, q)."""
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n or n > q:
        # sketch A^T: keeps the projected matrix (m, q) small
        Q = get_approximate_basis(A.mT, q, niter=niter, M=None if M is None else M.mT)
        B_t = A @ Q if M is None else A @ Q - M @ Q  # (m, q) = (Q^T A^T)^T
        U, S, Vh = linalg.svd(B_t, full_matrices=False)
        return U, S, Q @ Vh.mT
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = Q.mT @ A if M is None else Q.mT @ A - Q.mT @ M  # (q, n)
    U, S, Vh = linalg.svd(B.mT, full_matrices=False)  # B^T = U S Vh: B = Vh^T S U^T
    return Q @ Vh.mT, S, U


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the principal components of A (..., m, n): svd_lowrank of A less its column
    means when center, q = min(6, m, n) by default."""
    if not isinstance(A, _C.Tensor):
        raise TypeError(f"pca_lowrank(): argument 'A' must be Tensor, not {type(A).__name__}")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter, M=None)
    return svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter, M=None)
