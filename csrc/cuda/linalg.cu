/* linalg.cu: LU factorization and solve on the GPU, the CUDA side of CtBlasKernels.lu_factor /
 * .lu_solve (linalg.h), with lu_math.h's steps, the CPU's exactly.
 *   factor: one block per matrix; per column, thread 0 picks the pivot, the threads swap the two
 *           rows' columns, then eliminate the rows below (one row per thread), barriers between
 *   solve:  one block per matrix, one thread per right-hand side column
 * Every element is updated by one thread in a fixed order: the same bits every run. No host wait. */
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
