"""ctorch._linalg_utils: the linear-algebra functions PyTorch 2.x removed (torch.solve, lstsq, symeig, eig,
matrix_rank and the Tensor methods solve/lstsq/symeig/eig) but still exposes, as PyTorch's torch/_linalg_utils.py
does: each raises RuntimeError with PyTorch's message naming its torch.linalg replacement. torch.lu, deprecated
but still working, is here too."""
import warnings

from . import _C

_REMOVED = "This function was deprecated since version 1.9 and is now removed."

_SOLVE_MESSAGE = _REMOVED + ' `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments reversed and does not return the LU factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = torch.linalg.solve(A, B)'
_LSTSQ_MESSAGE = _REMOVED + " `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition in the returned tuple (although it returns other information about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution"
_SYMEIG_MESSAGE = _REMOVED + " The default behavior has changed from using the upper triangular portion of the matrix by default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"
_EIG_MESSAGE = _REMOVED + ' `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)'
_MATRIX_RANK_MESSAGE = _REMOVED + "\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."


def solve(input, A, *, out=None):
    raise RuntimeError(_SOLVE_MESSAGE)


def lstsq(input, A, *, out=None):
    raise RuntimeError(_LSTSQ_MESSAGE)


def _symeig(input, eigenvectors=False, upper=True, *, out=None):
    raise RuntimeError(_SYMEIG_MESSAGE)


def eig(self, eigenvectors=False, *, e=None, v=None):
    raise RuntimeError(_EIG_MESSAGE)


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    raise RuntimeError(_MATRIX_RANK_MESSAGE)


# --- torch.lu (deprecated, still working): torch.linalg.lu_factor_ex under PyTorch's old spelling --------------
_LU_DEPRECATION = ("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will "
                   "be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be "
                   "replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = "
                   "torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
                   "torch.linalg.lu_factor_ex(A, compute_pivots)")
_lu_warned = False


def _lu_with_info(A, pivot):
    global _lu_warned
    if not _lu_warned:  # once a process, as PyTorch's TORCH_WARN_ONCE
        _lu_warned = True
        warnings.warn(_LU_DEPRECATION, UserWarning, stacklevel=3)
    from . import linalg

    LU, pivots, info = linalg.lu_factor_ex(A, pivot=pivot)
    return LU, pivots, info


def lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu: (LU, pivots) of (*, m, n) A, or torch.return_types._lu_with_info(LU, pivots, info) with
    get_infos=True; out=(tensors) receives them (resized) and is returned."""
    result = _lu_with_info(A, pivot)
    if out is not None:
        if len(out) - int(bool(get_infos)) != 2:
            raise TypeError(f"expected tuple of {2 + int(bool(get_infos))} elements but got {len(out)}")
        if not isinstance(out, (tuple, list)):
            raise TypeError(f"argument 'out' must be tuple of Tensors, not {type(out).__name__}")
        for dst, src in zip(out, result):
            dst.resize_as_(src).copy_(src)
        return out
    return _C._lu_with_info_result(*result) if get_infos else result[:2]


def _tensor_lu(self, pivot=True, get_infos=False):
    """Tensor.lu: torch.lu's plain tuple (LU, pivots) or (LU, pivots, infos)."""
    result = _lu_with_info(self, pivot)
    return result if get_infos else result[:2]
