/* linalg.h: the linear-algebra family: its device kernel table (struct CtBlasKernels, pointed
 * to by CtDeviceOps.blas) and the C entry points other families call (matmul for nn.Linear,
 * backward formulas, ...). The ops themselves are in ops_linalg.c: they do the shape, dtype and
 * layout work once and hand every product to the device's gemm_batched. */
#ifndef CTORCH_LINALG_H
#define CTORCH_LINALG_H

#include "ctorch.h"

struct CtBlasKernels {
    /* Row-major strided-batched GEMM on `device`: for b in [0, batch),
     *     C_b = alpha * op(A_b) @ op(B_b) + beta * C_b,   X_b = X + b * stride_X (elements),
     * with op(X) = X^T when trans_X (cuBLAS: cublasGemmStridedBatchedEx with the operands
     * swapped, C^T = B^T A^T).
     *   op(A): (M, K); A is (M, K) with row stride lda, or (K, M) if trans_a
     *   op(B): (K, N); B is (K, N) with row stride ldb, or (N, K) if trans_b
     *   C:     (M, N) with row stride ldc; rows have unit stride in every matrix
     * The caller keeps to BLAS's rules: each leading dimension is >= max(1, columns stored),
     * A/B batch strides may be 0 (an operand shared by all products), C never overlaps A, B or
     * itself across products. alpha/beta are cast to the computation type (integer dtypes
     * truncate them); beta == 0 means C is not read, alpha == 0 or K == 0 means A and B are
     * not read. A device without some dtype raises. Returns 0, or -1 with an exception set. */
    int (*gemm_batched)(CtDevice device, CtDType dtype, bool trans_a, bool trans_b, int64_t M, int64_t N,
                        int64_t K, double alpha, const void *A, int64_t lda, int64_t stride_a, const void *B,
                        int64_t ldb, int64_t stride_b, double beta, void *C, int64_t ldc, int64_t stride_c,
                        int64_t batch);
    /* LU with partial pivoting (lu_math.h), in place, float32/float64: for b in [0, batch) the
     * dense row-major (n, n) matrix A + b*n*n becomes L\U, pivots + b*n its 1-based pivot rows and
     * info[b] the 1-based index of its first zero pivot, or 0. All three are device memory. */
    int (*lu_factor)(CtDevice device, CtDType dtype, void *A, int32_t *pivots, int32_t *info, int64_t n,
                     int64_t batch);
    /* B + b*n*k, dense row-major (n, k), becomes A_b^-1 B_b from lu_factor's LU and pivots. */
    int (*lu_solve)(CtDevice device, CtDType dtype, const void *LU, const int32_t *pivots, void *B, int64_t n,
                    int64_t k, int64_t batch);
    /* Cholesky (decomp_math.h), in place, float32/float64: for b in [0, batch) the dense row-major
     * (n, n) A + b*n*n (its lower triangle read) becomes L with the strict upper triangle zeroed, and
     * info[b] the order of its first leading minor that is not positive-definite (that step's
     * A[j, j] - sum L[j, :j]^2 left on the diagonal, the later columns not computed), or 0. */
    int (*cholesky)(CtDevice device, CtDType dtype, void *A, int32_t *info, int64_t n, int64_t batch);
    /* B + b*n*k, dense row-major (n, k), becomes A_b^-1 B_b for the triangular A + b*n*n (upper or
     * lower; unit: its diagonal taken as ones). */
    int (*tri_solve)(CtDevice device, CtDType dtype, const void *A, void *B, int64_t n, int64_t k, bool upper,
                     bool unit, int64_t batch);
    /* Householder QR (geqrf): A + b*m*n, dense row-major (m, n), becomes R on and above the diagonal
     * and the reflectors below it, tau + b*min(m, n) their scales; Q + b*m*q (dense (m, q), q <= m,
     * or NULL) the first q columns of Q (orgqr). */
    int (*qr)(CtDevice device, CtDType dtype, void *A, void *tau, void *Q, int64_t m, int64_t n, int64_t q,
              int64_t batch);
    /* Symmetric eigendecomposition by cyclic Jacobi (decomp_math.h): A + b*n*n, dense row-major
     * (n, n) and symmetric, is destroyed; w + b*n its eigenvalues ascending, V + b*n*n (n, n) the
     * eigenvectors as columns. */
    int (*eigh)(CtDevice device, CtDType dtype, void *A, void *w, void *V, int64_t n, int64_t batch);
    /* SVD by one-sided Jacobi of W + b*m*n, dense row-major (m, n) with m >= n, destroyed: S + b*n
     * the singular values descending; when U (or V) is not NULL, U + b*m*ucols (m, ucols; ucols n or
     * m, the columns past the rank completed to an orthonormal basis) and V + b*n*n (n, n), with
     * W = U diag(S) V^T. */
    int (*svd)(CtDevice device, CtDType dtype, void *W, void *S, void *U, void *V, int64_t m, int64_t n,
               int64_t ucols, int64_t batch);
};

/* The CPU table (ops_linalg.c): tiny products in a direct loop, the rest in ct_cpu_gemm. */
extern const struct CtBlasKernels ct_cpu_blas_kernels;
/* Its LU entries (linalg_more.c), one matrix after another. */
int ct_cpu_lu_factor(CtDevice device, CtDType dtype, void *A, int32_t *pivots, int32_t *info, int64_t n, int64_t batch);
int ct_cpu_lu_solve(CtDevice device, CtDType dtype, const void *LU, const int32_t *pivots, void *B, int64_t n,
                    int64_t k, int64_t batch);
/* Its Cholesky, triangular solve and QR entries (linalg_decomp.c). */
int ct_cpu_cholesky(CtDevice device, CtDType dtype, void *A, int32_t *info, int64_t n, int64_t batch);
int ct_cpu_tri_solve(CtDevice device, CtDType dtype, const void *A, void *B, int64_t n, int64_t k, bool upper,
                     bool unit, int64_t batch);
int ct_cpu_qr(CtDevice device, CtDType dtype, void *A, void *tau, void *Q, int64_t m, int64_t n, int64_t q,
              int64_t batch);
/* Its eigh and SVD entries (linalg_eig.c). */
int ct_cpu_eigh(CtDevice device, CtDType dtype, void *A, void *w, void *V, int64_t n, int64_t batch);
int ct_cpu_svd(CtDevice device, CtDType dtype, void *W, void *S, void *U, void *V, int64_t m, int64_t n,
               int64_t ucols, int64_t batch);

/* --- entry points (new references, or NULL with PyTorch's exception set) ----------------- */
/* torch.matmul: every rank combination, batch broadcasting, 1-d operands lifted and dropped. */
CtTensorObject *ct_matmul(CtTensorObject *a, CtTensorObject *b);
CtTensorObject *ct_mm(CtTensorObject *a, CtTensorObject *b);   /* (n,m) @ (m,p) */
CtTensorObject *ct_bmm(CtTensorObject *a, CtTensorObject *b);  /* (b,n,m) @ (b,m,p) */
CtTensorObject *ct_mv(CtTensorObject *mat, CtTensorObject *vec);
CtTensorObject *ct_dot(CtTensorObject *a, CtTensorObject *b);  /* 0-d result */
CtTensorObject *ct_outer(CtTensorObject *a, CtTensorObject *b); /* promotes dtypes like mul */
/* beta * input + alpha * (mat1 @ mat2), input broadcast to the product's shape. */
CtTensorObject *ct_addmm(CtTensorObject *input, CtTensorObject *mat1, CtTensorObject *mat2, double beta,
                         double alpha);
/* beta * input + alpha * bmm(batch1, batch2). */
CtTensorObject *ct_baddbmm(CtTensorObject *input, CtTensorObject *batch1, CtTensorObject *batch2, double beta,
                           double alpha);
/* torch.einsum(equation, *operands). */
CtTensorObject *ct_einsum(const char *equation, int noperands, CtTensorObject *const *operands);

/* --- the LU ops' backward formulas (linalg_more.c; rows in autograd_formulas.c) ----------- */
struct CtNodeObject;
int ct_linalg_bw_inv(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_linalg_bw_det(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_linalg_bw_slogdet(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_linalg_bw_solve(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);

/* --- shared by linalg_more.c and linalg_decomp.c -------------------------------------------- */
/* torch.linalg.LinAlgError (borrowed; NULL with an exception set on first-use failure). */
PyObject *ct_linalg_error(void);
/* LinAlgError "<fname>: (Batch element b): <what>" (no batch part for a 2-d A). Always -1. */
int ct_linalg_raise_batch(const CtTensorObject *A, int64_t b, const char *fname, const char *what);
/* A torch.return_types.<name> pair made on first use into *type; steals a and b. */
PyObject *ct_linalg_pair(PyTypeObject **type, const char *name, const char *first, const char *second, PyObject *a,
                         PyObject *b);

/* A torch.return_types.<name> of n (<= 4) fields made on first use into *type; steals items
 * (linalg_more.c). */
PyObject *ct_linalg_named_result(PyTypeObject **type, const char *name, const char *const *fields, int n,
                                 PyObject **items);
/* A tuple result of n tensors (stolen) written to out=(t1, ..., tn), or returned as is without out. */
PyObject *ct_linalg_write_outs(PyObject *result, PyObject *out_obj, const char *fname, int n);
#ifdef CTORCH_AUTOGRAD_ARENA_H
/* linalg.solve_triangular(A, B, upper=, left=, unitriangular=) through autograd, held by the arena
 * (linalg_decomp.c). */
PyObject *ct_linalg_solve_tri_op(CtArena *arena, PyObject *A, PyObject *B, bool upper, bool left, bool unit);
#endif
/* --- linalg_lu.c's backward formulas: lu_factor(_ex) and matrix_exp --- */
int ct_linalg_bw_lu_factor(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_linalg_bw_matrix_exp(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* --- the decompositions' backward formulas (linalg_decomp.c; rows in autograd_formulas.c) --- */
int ct_linalg_bw_cholesky(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_linalg_bw_solve_triangular(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_linalg_bw_cholesky_solve(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_linalg_bw_cholesky_inverse(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_linalg_bw_qr(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* A tensor argument (borrowed), or PyTorch's TypeError "<fname>(): argument '<name>' must be Tensor". */
CtTensorObject *ct_linalg_tensor_arg(PyObject *obj, const char *fname, const char *name);
/* NotImplementedError '"<kernel>_cpu" not implemented for 'Half'' unless float32/float64. 0 or -1. */
int ct_linalg_kernel_dtype(const CtTensorObject *t, const char *kernel);
/* The device ops whose blas->qr (Householder QR) serve A (float32/float64, checked as the geqrf
 * kernel); RuntimeError "<what> is not implemented on this device" where it has none. NULL on error. */
const CtDeviceOps *ct_linalg_qr_ops(const CtTensorObject *A, const char *what);
/* A (..., n, n) for <fname> (named <name>), PyTorch's checks in its order: rank, floating dtype,
 * square, then <kernel>'s dtypes (linalg_decomp.c). 0 or -1. */
int ct_linalg_check_square(const CtTensorObject *A, const char *fname, const char *name, const char *kernel);
/* The broadcast of a's and b's batch dims (all but the last two) into *ndim / sizes. 0 or -1. */
int ct_linalg_broadcast_batch(const CtTensorObject *a, const CtTensorObject *b, int *ndim, int64_t *sizes);

/* --- eigh and the SVD (linalg_eig.c; rows in autograd_formulas.c) --------------------------- */
int ct_linalg_bw_eigh(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_linalg_bw_svd(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* matrix_norm's SVD orders of x over dims (d0, d1), wrapped and distinct: ord 0 the nuclear norm,
 * 2 / -2 the largest / smallest singular value. A new reference. */
PyObject *ct_linalg_svd_norm(PyObject *x, int ord, int d0, int d1, bool keepdim);

#endif /* CTORCH_LINALG_H */
