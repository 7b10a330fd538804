/* linalg.cu: LU factorization and solve, Cholesky, triangular solves and Householder QR on the
 * GPU, the CUDA side of CtBlasKernels.lu_factor / .lu_solve / .cholesky / .tri_solve / .qr
 * (linalg.h), with lu_math.h's and decomp_math.h's steps, the CPU's exactly.
 *   factor: one block per matrix; per column, thread 0 picks the pivot, the threads swap the two
 *           rows' columns, then eliminate the rows below (one row per thread), barriers between
 *   solve:  one block per matrix, one thread per right-hand side column (LU and triangular)
 *   cholesky: one block per matrix; per column, thread 0 takes the diagonal, then the rows below
 *           are spread over the threads
 *   qr:     one block per matrix; per column, thread 0 makes the reflector, then the threads apply
 *           it to the later columns (and build Q from the identity the same way)
 *   eigh, svd: one block per matrix; per pair (p, q) of a Jacobi sweep, thread 0 finds the
 *           rotation, then the threads rotate the rows (columns) of A, W and V; thread 0 sorts
 *           and (svd) normalises and completes U at the end
 * Every element is updated by one thread in a fixed order: the same bits every run. No host wait. */
#include "decomp_math.h"
#include "linalg.cuh"
#include "lu_math.h"

namespace {

constexpr int kThreads = 128;

/* The two kernels of one dtype: lu_factor_<NAME> (one block per matrix) and lu_solve_<NAME>. */
#define CT_LU_KERNELS(NAME, T)                                                                              \
    __global__ void lu_factor_##NAME(T *A, int32_t *pivots, int32_t *info, int64_t n)                       \
    {                                                                                                       \
        __shared__ int64_t pivot_row;                                                                       \
        const int64_t b = blockIdx.x;                                                                       \
        A += b * n * n;                                                                                     \
        pivots += b * n;                                                                                    \
        for (int64_t j = 0; j < n; j++) {                                                                   \
            if (threadIdx.x == 0) {                                                                         \
                int64_t p = ct_lu_pivot_##NAME(A, n, j);                                                    \
                pivots[j] = (int32_t)(p + 1);                                                               \
                if (j == 0) {                                                                               \
                    info[b] = 0;                                                                            \
                }                                                                                           \
                if (A[p * n + j] == 0 && info[b] == 0) {                                                    \
                    info[b] = (int32_t)(j + 1);                                                             \
                }                                                                                           \
                pivot_row = p;                                                                              \
            }                                                                                               \
            __syncthreads();                                                                                \
            const int64_t p = pivot_row;                                                                    \
            for (int64_t c = threadIdx.x; p != j && c < n; c += blockDim.x) {                               \
                ct_lu_swap_##NAME(A, n, j, p, c);                                                           \
            }                                                                                               \
            __syncthreads();                                                                                \
            for (int64_t i = j + 1 + threadIdx.x; A[j * n + j] != 0 && i < n; i += blockDim.x) {            \
                ct_lu_eliminate_##NAME(A, n, j, i);                                                         \
            }                                                                                               \
            __syncthreads();                                                                                \
        }                                                                                                   \
    }                                                                                                       \
    __global__ void lu_solve_##NAME(const T *LU, const int32_t *pivots, T *B, int64_t n, int64_t k)         \
    {                                                                                                       \
        const int64_t b = blockIdx.x;                                                                       \
        for (int64_t c = threadIdx.x; c < k; c += blockDim.x) {                                             \
            ct_lu_solve_column_##NAME(LU + b * n * n, pivots + b * n, B + b * n * k, n, k, c);              \
        }                                                                                                   \
    }
CT_LU_TYPES(CT_LU_KERNELS)
#undef CT_LU_KERNELS

/* solve: k right-hand sides (k < 0: factor). */
int run(CtDevice device, CtDType dtype, void *A, int32_t *pivots, int32_t *info, void *B, int64_t n, int64_t k,
        int64_t batch)
{
    if (dtype != CT_F32 && dtype != CT_F64) {
        return ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "LU: dtype %d is not supported on CUDA", (int)dtype);
    }
    if (batch == 0 || k == 0) {
        return CT_CUDA_OK;
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device.index));
    cudaStream_t stream = ct_cuda_stream(device.index);
    const unsigned blocks = (unsigned)batch;
    if (k < 0 && dtype == CT_F32) {
        lu_factor_F32<<<blocks, kThreads, 0, stream>>>((float *)A, pivots, info, n);
    } else if (k < 0) {
        lu_factor_F64<<<blocks, kThreads, 0, stream>>>((double *)A, pivots, info, n);
    } else if (dtype == CT_F32) {
        lu_solve_F32<<<blocks, kThreads, 0, stream>>>((const float *)A, pivots, (float *)B, n, k);
    } else {
        lu_solve_F64<<<blocks, kThreads, 0, stream>>>((const double *)A, pivots, (double *)B, n, k);
    }
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

/* The decomposition kernels of one dtype (decomp_math.h): one block per matrix. */
#define CT_DECOMP_KERNELS(NAME, T)                                                                          \
    __global__ void cholesky_##NAME(T *A, int32_t *info, int64_t n)                                         \
    {                                                                                                       \
        __shared__ bool failed;                                                                             \
        const int64_t b = blockIdx.x;                                                                       \
        A += b * n * n;                                                                                     \
        for (int64_t j = 0; j < n; j++) {                                                                   \
            if (threadIdx.x == 0) {                                                                         \
                T d = ct_chol_pivot_##NAME(A, n, j);                                                        \
                failed = !(d > 0);                                                                          \
                A[j * n + j] = failed ? d : sqrt(d);                                                        \
                if (failed) {                                                                               \
                    info[b] = (int32_t)(j + 1);                                                             \
                } else if (j == 0) {                                                                        \
                    info[b] = 0;                                                                            \
                }                                                                                           \
            }                                                                                               \
            __syncthreads();                                                                                \
            if (failed) {                                                                                   \
                break;                                                                                      \
            }                                                                                               \
            for (int64_t i = j + 1 + threadIdx.x; i < n; i += blockDim.x) {                                 \
                ct_chol_row_##NAME(A, n, j, i);                                                             \
            }                                                                                               \
            __syncthreads();                                                                                \
        }                                                                                                   \
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {                                             \
            for (int64_t c = i + 1; c < n; c++) {                                                           \
                A[i * n + c] = 0;                                                                           \
            }                                                                                               \
        }                                                                                                   \
    }                                                                                                       \
    __global__ void tri_solve_##NAME(const T *A, T *B, int64_t n, int64_t k, bool upper, bool unit)         \
    {                                                                                                       \
        const int64_t b = blockIdx.x;                                                                       \
        for (int64_t c = threadIdx.x; c < k; c += blockDim.x) {                                             \
            ct_tri_solve_column_##NAME(A + b * n * n, B + b * n * k, n, k, c, upper, unit);                 \
        }                                                                                                   \
    }                                                                                                       \
    __global__ void qr_##NAME(T *A, T *tau, T *Q, int64_t m, int64_t n, int64_t q)                          \
    {                                                                                                       \
        const int64_t b = blockIdx.x, k = m < n ? m : n;                                                    \
        A += b * m * n;                                                                                     \
        tau += b * k;                                                                                       \
        for (int64_t j = 0; j < k; j++) {                                                                   \
            if (threadIdx.x == 0) {                                                                         \
                tau[j] = ct_qr_reflector_##NAME(A, m, n, j);                                                \
            }                                                                                               \
            __syncthreads();                                                                                \
            for (int64_t c = j + 1 + threadIdx.x; c < n; c += blockDim.x) {                                 \
                ct_qr_apply_##NAME(A, n, tau[j], m, j, A, n, c);                                            \
            }                                                                                               \
            __syncthreads();                                                                                \
        }                                                                                                   \
        if (Q == NULL) {                                                                                    \
            return;                                                                                         \
        }                                                                                                   \
        Q += b * m * q;                                                                                     \
        for (int64_t i = threadIdx.x; i < m * q; i += blockDim.x) {                                         \
            Q[i] = i / q == i % q ? 1 : 0;                                                                  \
        }                                                                                                   \
        __syncthreads();                                                                                    \
        for (int64_t j = k - 1; j >= 0; j--) {                                                              \
            for (int64_t c = threadIdx.x; c < q; c += blockDim.x) {                                         \
                ct_qr_apply_##NAME(A, n, tau[j], m, j, Q, q, c);                                            \
            }                                                                                               \
            __syncthreads();                                                                                \
        }                                                                                                   \
    }
CT_LU_TYPES(CT_DECOMP_KERNELS)
#undef CT_DECOMP_KERNELS

/* The device guard and stream of a decomposition launch, or an error for other dtypes. */
int decomp_prologue(CtDevice device, CtDType dtype, const char *what, cudaStream_t *stream)
{
    if (dtype != CT_F32 && dtype != CT_F64) {
        return ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "%s: dtype %d is not supported on CUDA", what, (int)dtype);
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device.index));
    *stream = ct_cuda_stream(device.index);
    return CT_CUDA_OK;
}

int run_cholesky(CtDevice device, CtDType dtype, void *A, int32_t *info, int64_t n, int64_t batch)
{
    cudaStream_t stream;
    CT_CUDA_TRY(decomp_prologue(device, dtype, "cholesky", &stream));
    if (batch == 0 || n == 0) {
        return CT_CUDA_OK;
    }
    if (dtype == CT_F32) {
        cholesky_F32<<<(unsigned)batch, kThreads, 0, stream>>>((float *)A, info, n);
    } else {
        cholesky_F64<<<(unsigned)batch, kThreads, 0, stream>>>((double *)A, info, n);
    }
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

int run_tri_solve(CtDevice device, CtDType dtype, const void *A, void *B, int64_t n, int64_t k, bool upper, bool unit,
                  int64_t batch)
{
    cudaStream_t stream;
    CT_CUDA_TRY(decomp_prologue(device, dtype, "triangular solve", &stream));
    if (batch == 0 || n == 0 || k == 0) {
        return CT_CUDA_OK;
    }
    if (dtype == CT_F32) {
        tri_solve_F32<<<(unsigned)batch, kThreads, 0, stream>>>((const float *)A, (float *)B, n, k, upper, unit);
    } else {
        tri_solve_F64<<<(unsigned)batch, kThreads, 0, stream>>>((const double *)A, (double *)B, n, k, upper, unit);
    }
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

int run_qr(CtDevice device, CtDType dtype, void *A, void *tau, void *Q, int64_t m, int64_t n, int64_t q, int64_t batch)
{
    cudaStream_t stream;
    CT_CUDA_TRY(decomp_prologue(device, dtype, "qr", &stream));
    if (batch == 0 || m == 0) {
        return CT_CUDA_OK;
    }
    if (dtype == CT_F32) {
        qr_F32<<<(unsigned)batch, kThreads, 0, stream>>>((float *)A, (float *)tau, (float *)Q, m, n, q);
    } else {
        qr_F64<<<(unsigned)batch, kThreads, 0, stream>>>((double *)A, (double *)tau, (double *)Q, m, n, q);
    }
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

/* The Jacobi kernels of one dtype (decomp_math.h): one block per matrix, each pair's rotation
 * found by thread 0 and applied by all. */
#define CT_JACOBI_KERNELS(NAME, T)                                                                          \
    __global__ void eigh_##NAME(T *A, T *w, T *V, int64_t n)                                                \
    {                                                                                                       \
        __shared__ T rot[2];                                                                                \
        __shared__ bool converged;                                                                          \
        const int64_t b = blockIdx.x;                                                                       \
        A += b * n * n;                                                                                     \
        V += b * n * n;                                                                                     \
        w += b * n;                                                                                         \
        for (int64_t i = threadIdx.x; i < n * n; i += blockDim.x) {                                         \
            V[i] = i / n == i % n ? 1 : 0;                                                                  \
        }                                                                                                   \
        for (int sweep = 0; sweep < CT_JACOBI_MAX_SWEEPS; sweep++) {                                        \
            __syncthreads();                                                                                \
            if (threadIdx.x == 0) {                                                                         \
                converged = ct_eigh_converged_##NAME(A, n);                                                 \
            }                                                                                               \
            __syncthreads();                                                                                \
            if (converged) {                                                                                \
                break;                                                                                      \
            }                                                                                               \
            for (int64_t p = 0; p < n; p++) {                                                               \
                for (int64_t q = p + 1; q < n; q++) {                                                       \
                    if (threadIdx.x == 0) {                                                                 \
                        ct_jacobi_angle_##NAME(A[p * n + p], A[q * n + q], A[p * n + q], &rot[0], &rot[1]); \
                    }                                                                                       \
                    __syncthreads();                                                                        \
                    const T c = rot[0], s = rot[1];                                                         \
                    for (int64_t k = threadIdx.x; s != 0 && k < n; k += blockDim.x) {                       \
                        ct_rotate_cols_##NAME(A, n, p, q, c, s, k);                                         \
                        ct_rotate_cols_##NAME(V, n, p, q, c, s, k);                                         \
                    }                                                                                       \
                    __syncthreads();                                                                        \
                    for (int64_t k = threadIdx.x; s != 0 && k < n; k += blockDim.x) {                       \
                        ct_rotate_rows_##NAME(A, n, p, q, c, s, k);                                         \
                    }                                                                                       \
                    __syncthreads();                                                                        \
                    if (threadIdx.x == 0) {                                                                 \
                        A[p * n + q] = A[q * n + p] = 0;                                                    \
                    }                                                                                       \
                }                                                                                           \
            }                                                                                               \
        }                                                                                                   \
        __syncthreads();                                                                                    \
        if (threadIdx.x == 0) {                                                                             \
            ct_eigh_sort_##NAME(A, w, V, n);                                                                \
        }                                                                                                   \
    }                                                                                                       \
    __global__ void svd_##NAME(T *W, T *S, T *U, T *V, int64_t m, int64_t n, int64_t ucols)                 \
    {                                                                                                       \
        __shared__ T rot[2];                                                                                \
        __shared__ bool rotated;                                                                            \
        const int64_t b = blockIdx.x;                                                                       \
        W += b * m * n;                                                                                     \
        S += b * n;                                                                                         \
        U = U ? U + b * m * ucols : NULL;                                                                   \
        V = V ? V + b * n * n : NULL;                                                                       \
        for (int64_t i = threadIdx.x; V != NULL && i < n * n; i += blockDim.x) {                            \
            V[i] = i / n == i % n ? 1 : 0;                                                                  \
        }                                                                                                   \
        for (int sweep = 0; sweep < CT_JACOBI_MAX_SWEEPS; sweep++) {                                        \
            __syncthreads();                                                                                \
            if (threadIdx.x == 0) {                                                                         \
                rotated = false;                                                                            \
            }                                                                                               \
            for (int64_t p = 0; p < n; p++) {                                                               \
                for (int64_t q = p + 1; q < n; q++) {                                                       \
                    if (threadIdx.x == 0 && ct_svd_angle_##NAME(W, m, n, p, q, &rot[0], &rot[1])) {         \
                        rotated = true;                                                                     \
                    }                                                                                       \
                    __syncthreads();                                                                        \
                    const T c = rot[0], s = rot[1];                                                         \
                    for (int64_t k = threadIdx.x; s != 0 && k < m; k += blockDim.x) {                       \
                        ct_rotate_cols_##NAME(W, n, p, q, c, s, k);                                         \
                    }                                                                                       \
                    for (int64_t k = threadIdx.x; s != 0 && V != NULL && k < n; k += blockDim.x) {          \
                        ct_rotate_cols_##NAME(V, n, p, q, c, s, k);                                         \
                    }                                                                                       \
                    __syncthreads();                                                                        \
                }                                                                                           \
            }                                                                                               \
            __syncthreads();                                                                                \
            const bool again = rotated;                                                                     \
            if (!again) {                                                                                   \
                break;                                                                                      \
            }                                                                                               \
        }                                                                                                   \
        __syncthreads();                                                                                    \
        if (threadIdx.x == 0) {                                                                             \
            ct_svd_finish_##NAME(W, S, U, V, m, n, ucols);                                                  \
        }                                                                                                   \
    }
CT_LU_TYPES(CT_JACOBI_KERNELS)
#undef CT_JACOBI_KERNELS

int run_eigh(CtDevice device, CtDType dtype, void *A, void *w, void *V, int64_t n, int64_t batch)
{
    cudaStream_t stream;
    CT_CUDA_TRY(decomp_prologue(device, dtype, "eigh", &stream));
    if (batch == 0 || n == 0) {
        return CT_CUDA_OK;
    }
    if (dtype == CT_F32) {
        eigh_F32<<<(unsigned)batch, kThreads, 0, stream>>>((float *)A, (float *)w, (float *)V, n);
    } else {
        eigh_F64<<<(unsigned)batch, kThreads, 0, stream>>>((double *)A, (double *)w, (double *)V, n);
    }
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

int run_svd(CtDevice device, CtDType dtype, void *W, void *S, void *U, void *V, int64_t m, int64_t n, int64_t ucols,
            int64_t batch)
{
    cudaStream_t stream;
    CT_CUDA_TRY(decomp_prologue(device, dtype, "svd", &stream));
    if (batch == 0 || m == 0) {
        return CT_CUDA_OK;
    }
    if (dtype == CT_F32) {
        svd_F32<<<(unsigned)batch, kThreads, 0, stream>>>((float *)W, (float *)S, (float *)U, (float *)V, m, n, ucols);
    } else {
        svd_F64<<<(unsigned)batch, kThreads, 0, stream>>>((double *)W, (double *)S, (double *)U, (double *)V, m, n,
                                                           ucols);
    }
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

} /* namespace */

int ct_cuda_lu_factor(CtDevice device, CtDType dtype, void *A, int32_t *pivots, int32_t *info, int64_t n,
                      int64_t batch)
{
    int status = run(device, dtype, A, pivots, info, NULL, n, -1, batch);
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}

int ct_cuda_lu_solve(CtDevice device, CtDType dtype, const void *LU, const int32_t *pivots, void *B, int64_t n,
                     int64_t k, int64_t batch)
{
    int status = run(device, dtype, (void *)LU, (int32_t *)pivots, NULL, B, n, k, batch);
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}

int ct_cuda_cholesky(CtDevice device, CtDType dtype, void *A, int32_t *info, int64_t n, int64_t batch)
{
    int status = run_cholesky(device, dtype, A, info, n, batch);
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}

int ct_cuda_tri_solve(CtDevice device, CtDType dtype, const void *A, void *B, int64_t n, int64_t k, bool upper,
                      bool unit, int64_t batch)
{
    int status = run_tri_solve(device, dtype, A, B, n, k, upper, unit, batch);
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}

int ct_cuda_qr(CtDevice device, CtDType dtype, void *A, void *tau, void *Q, int64_t m, int64_t n, int64_t q,
               int64_t batch)
{
    int status = run_qr(device, dtype, A, tau, Q, m, n, q, batch);
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}

int ct_cuda_eigh(CtDevice device, CtDType dtype, void *A, void *w, void *V, int64_t n, int64_t batch)
{
    int status = run_eigh(device, dtype, A, w, V, n, batch);
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}

int ct_cuda_svd(CtDevice device, CtDType dtype, void *W, void *S, void *U, void *V, int64_t m, int64_t n,
                int64_t ucols, int64_t batch)
{
    int status = run_svd(device, dtype, W, S, U, V, m, n, ucols, batch);
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}
