"""ctorch._lobpcg: torch.lobpcg, the locally optimal block preconditioned conjugate gradient method
(Knyazev 2001) for the k largest (or smallest) eigenpairs of A x = lambda B x, A symmetric and B
symmetric positive definite, written as in PyTorch on top of tensor ops (matmul, linalg.eigh).

Each step is a Rayleigh-Ritz projection on the basis [X, W, P] (the current Ritz vectors, the
preconditioned residuals, the previous search directions), B-orthonormalised by SVQB (scaled Gram
matrix eigendecomposition, directions with a tiny eigenvalue dropped), which is PyTorch's 'ortho'
method; 'basic' uses the same step. Not differentiable here: PyTorch's LOBPCGAutogradFunction is not
reproduced, so a call whose A or B requires grad (in grad mode) raises instead of dropping it."""
from . import _C, linalg

__all__ = ["lobpcg"]


def _b_orthonormal(S, mB, eps):
    """Columns spanning S's range, B-orthonormal (S^T B S = I), two SVQB passes."""
    for _ in range(2):
        BS = S if mB is None else mB @ S
        G = S.mT @ BS
        d = G.diagonal().clamp_min(1e-300).rsqrt()
        G = d.unsqueeze(-1) * G * d.unsqueeze(-2)
        w, V = linalg.eigh(G)
        keep = w > eps * w.abs().max()
        V, w = V[:, keep], w[keep]
        S = (S * d.unsqueeze(-2)) @ (V * w.rsqrt().unsqueeze(-2))
    return S


def _lobpcg_one(A, k, B, X, n, iK, niter, tol, largest, tracker):
    m = A.shape[-1]
    eps = 100.0 * _C.finfo(A.dtype).eps
    if X is None:
        X = _C.randn(m, n, dtype=A.dtype, device=A.device)
    X = _b_orthonormal(X, B, eps)
    sign = 1.0 if largest else -1.0  # maximise sign * x^T A x / x^T B x
    P = None
    norm_A = A.abs().sum(-1).max()  # bounds of ||A||_2, ||B||_2 for the relative residual
    norm_B = 1.0 if B is None else B.abs().sum(-1).max()
    for _ in range(niter):
        AX, BX = A @ X, (X if B is None else B @ X)
        H = X.mT @ AX
        w, Z = linalg.eigh(sign * (H + H.mT) / 2)
        order = w.argsort(descending=True)[:X.shape[-1]]
        E, Z = sign * w[order], Z[:, order]
        X, AX, BX = X @ Z, AX @ Z, BX @ Z
        R = AX - BX * E.unsqueeze(-2)
        rerr = R.norm(dim=-2) / (norm_A + E.abs() * norm_B)
        if tracker is not None:
            tracker(E, X, rerr)
        if bool((rerr[:k] < tol).all()):
            break
        W = R if iK is None else iK @ R
        parts = [X, W] if P is None else [X, W, P]
        S = _b_orthonormal(_C.cat(parts, dim=-1), B, eps)
        SA = S.mT @ (A @ S)
        w, C = linalg.eigh(sign * (SA + SA.mT) / 2)
        C = C[:, w.argsort(descending=True)[:n]]
        Xn = S @ C
        # the new search directions: the part of the new Ritz vectors outside span(X)
        BX = X if B is None else B @ X
        P = Xn - X @ (BX.mT @ Xn)
        X = _b_orthonormal(Xn, B, eps)
    AX = A @ X
    H = X.mT @ AX
    w, Z = linalg.eigh(sign * (H + H.mT) / 2)
    order = w.argsort(descending=True)[:k]
    return sign * w[order], X @ Z[:, order]


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """(E, X): the k largest (largest=False: smallest) eigenvalues (..., k), in that order, and their
    B-orthonormal eigenvectors (..., m, k) of A X = B X diag(E). n: the block size (default k; X's
    columns when X is given), niter: the most steps (default 1000; -1: until convergence), tol: the
    residual tolerance relative to the norms (default sqrt of the dtype's eps)."""
    if not isinstance(A, _C.Tensor):
        raise TypeError(f"lobpcg(): argument 'A' must be Tensor, not {type(A).__name__}")
    assert A.shape[-2] == A.shape[-1], f"A must be square, got shape {A.shape}"
    assert B is None or A.shape == B.shape, f"A and B must have same shape, got {A.shape} vs {B.shape}"
    if _C.is_grad_enabled() and (A.requires_grad or (B is not None and B.requires_grad)):
        raise NotImplementedError("ctorch.lobpcg: gradients are not implemented (PyTorch's "
                                  "LOBPCGAutogradFunction); call it on detached tensors or under no_grad")
    if A.dtype not in (_C.float32, _C.float64):
        A = A.float()
    if tol is None:
        tol = (1.2e-07 if A.dtype == _C.float32 else 2.23e-16) ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x "
                         f"the number of requested eigenpairs (={n})")
    niter = 1000 if niter is None else (2 ** 62 if niter < 0 else niter)
    largest = True if largest is None else largest
    batch = A.shape[:-2]
    if len(batch) == 0:
        return _lobpcg_one(A, k, B, X, n, iK, niter, tol, largest, tracker)
    flat = lambda t: None if t is None else t.reshape((-1,) + tuple(t.shape[-2:]))  # noqa: E731
    As, Bs, Xs, iKs = flat(A), flat(B), flat(X), flat(iK)
    Es, Vs = [], []
    for i in range(As.shape[0]):
        e, v = _lobpcg_one(As[i], k, None if Bs is None else Bs[i], None if Xs is None else Xs[i], n,
                           None if iKs is None else iKs[i], niter, tol, largest, tracker)
        Es.append(e)
        Vs.append(v)
    E = _C.stack(Es).reshape(tuple(batch) + (k,))
    return E, _C.stack(Vs).reshape(tuple(batch) + (m, k))
