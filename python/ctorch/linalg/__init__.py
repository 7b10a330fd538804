"""ctorch.linalg: torch.linalg's functions (the computations live in ctorch._C, as _linalg_<name>)."""
from .. import _C
from .._forward import c_function

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh",
           "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq", "lu",
           "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet",
           "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot",
           "vector_norm"]

LinAlgError = _C._LinAlgError_type()


def _forward(name, signature):
    """torch.linalg.<name>, calling ctorch._C._linalg_<name>."""
    return c_function(name, "_linalg_" + name, signature)


matmul = _C.matmul  # torch.linalg.matmul: an alias of torch.matmul
cross = _forward("cross", "(input, other, *, dim=-1, out=None) -> Tensor")
vector_norm = _forward("vector_norm", "(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None) -> Tensor")
matrix_norm = _forward("matrix_norm", "(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None, out=None) -> Tensor")
norm = _forward("norm", "(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None) -> Tensor")
vecdot = _forward("vecdot", "(x, y, *, dim=-1, out=None) -> Tensor")
multi_dot = _forward("multi_dot", "(tensors, *, out=None) -> Tensor")
matrix_power = _forward("matrix_power", "(A, n, *, out=None) -> Tensor")
diagonal = _forward("diagonal", "(A, *, offset=0, dim1=-2, dim2=-1) -> Tensor")
lu_factor = _forward("lu_factor", "(A, *, pivot=True, out=None) -> (LU, pivots)")
lu_factor_ex = _forward("lu_factor_ex", "(A, *, pivot=True, check_errors=False, out=None) -> (LU, pivots, info)")
lu = _forward("lu", "(A, *, pivot=True, out=None) -> (P, L, U)")
lu_solve = _forward("lu_solve", "(LU, pivots, B, *, left=True, adjoint=False, out=None) -> Tensor")
inv = _forward("inv", "(A, *, out=None) -> Tensor")
inv_ex = _forward("inv_ex", "(A, *, check_errors=False, out=None) -> (inverse, info)")
solve = _forward("solve", "(A, B, *, left=True, out=None) -> Tensor")
solve_ex = _forward("solve_ex", "(A, B, *, left=True, check_errors=False, out=None) -> (result, info)")
lstsq = _forward("lstsq", "(A, B, rcond=None, *, driver=None) -> (solution, residuals, rank, singular_values)")
matrix_exp = _forward("matrix_exp", "(A) -> Tensor")
tensorinv = _forward("tensorinv", "(A, ind=2, *, out=None) -> Tensor")
tensorsolve = _forward("tensorsolve", "(A, B, dims=None, *, out=None) -> Tensor")
householder_product = _forward("householder_product", "(A, tau, *, out=None) -> Tensor")
ldl_factor_ex = _forward("ldl_factor_ex", "(A, *, hermitian=False, check_errors=False, out=None) -> (LD, pivots, info)")
ldl_factor = _forward("ldl_factor", "(A, *, hermitian=False, out=None) -> (LD, pivots)")
ldl_solve = _forward("ldl_solve", "(LD, pivots, B, *, hermitian=False, out=None) -> Tensor")
det = _forward("det", "(A, *, out=None) -> Tensor")
slogdet = _forward("slogdet", "(A) -> (sign, logabsdet)")
vander = _forward("vander", "(x, *, N=None) -> Tensor")
cholesky = _forward("cholesky", "(A, *, upper=False, out=None) -> Tensor")
cholesky_ex = _forward("cholesky_ex", "(A, *, upper=False, check_errors=False, out=None) -> (L, info)")
solve_triangular = _forward("solve_triangular", "(A, B, *, upper, left=True, unitriangular=False, out=None) -> Tensor")
qr = _forward("qr", "(A, mode='reduced', *, out=None) -> (Q, R)")
eigh = _forward("eigh", "(A, UPLO='L', *, out=None) -> (eigenvalues, eigenvectors)")
eigvalsh = _forward("eigvalsh", "(A, UPLO='L', *, out=None) -> Tensor")
svd = _forward("svd", "(A, full_matrices=True, *, driver=None, out=None) -> (U, S, Vh)")
svdvals = _forward("svdvals", "(A, *, driver=None, out=None) -> Tensor")
matrix_rank = _forward("matrix_rank", "(A, *, atol=None, rtol=None, hermitian=False, out=None) -> Tensor")
pinv = _forward("pinv", "(A, *, atol=None, rtol=None, hermitian=False, out=None) -> Tensor")
cond = _forward("cond", "(A, p=None, *, out=None) -> Tensor")
