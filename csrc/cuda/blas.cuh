/* blas.cuh: the CUDA GEMM (blas.cu), used by struct CtBlasKernels and by the nn kernels. */
#ifndef CTORCH_CUDA_BLAS_CUH
#define CTORCH_CUDA_BLAS_CUH

#include "common.cuh"
#include "ctorch.h"

/* The device's cuBLAS handle (created once), bound to the thread's current stream with its
 * workspace. A status. */
int ct_cuda_cublas_handle(int device, cublasHandle_t *out);

/* struct CtBlasKernels.gemm_batched's contract (linalg.h), returning a status (no exception). */
int ct_cuda_gemm_batched_status(int device, CtDType dtype, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
                                double alpha, const void *A, int64_t lda, int64_t stride_a, const void *B,
                                int64_t ldb, int64_t stride_b, double beta, void *C, int64_t ldc, int64_t stride_c,
                                int64_t batch);

/* CtBlasKernels.gemm_batched: 0, or -1 with an exception set. */
int ct_cuda_gemm_batched(CtDevice device, CtDType dtype, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
                         double alpha, const void *A, int64_t lda, int64_t stride_a, const void *B, int64_t ldb,
                         int64_t stride_b, double beta, void *C, int64_t ldc, int64_t stride_c, int64_t batch);

#endif /* CTORCH_CUDA_BLAS_CUH */
