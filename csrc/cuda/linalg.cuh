/* linalg.cuh: the LU kernels on the GPU (linalg.cu), the CtBlasKernels.lu_factor / .lu_solve
 * entries (linalg.h) that runtime.cu puts in the backend's table. 0, or -1 with an exception set. */
#ifndef CTORCH_CUDA_LINALG_CUH
#define CTORCH_CUDA_LINALG_CUH

#include "common.cuh"
#include "linalg.h"

int ct_cuda_lu_factor(CtDevice device, CtDType dtype, void *A, int32_t *pivots, int32_t *info, int64_t n,
                      int64_t batch);
int ct_cuda_lu_solve(CtDevice device, CtDType dtype, const void *LU, const int32_t *pivots, void *B, int64_t n,
                     int64_t k, int64_t batch);
/* Cholesky, triangular solve and Householder QR (decomp_math.h): one block per matrix. */
int ct_cuda_cholesky(CtDevice device, CtDType dtype, void *A, int32_t *info, int64_t n, int64_t batch);
int ct_cuda_tri_solve(CtDevice device, CtDType dtype, const void *A, void *B, int64_t n, int64_t k, bool upper,
                      bool unit, int64_t batch);
int ct_cuda_qr(CtDevice device, CtDType dtype, void *A, void *tau, void *Q, int64_t m, int64_t n, int64_t q,
               int64_t batch);
/* Jacobi eigh and one-sided Jacobi SVD (decomp_math.h): one block per matrix. */
int ct_cuda_eigh(CtDevice device, CtDType dtype, void *A, void *w, void *V, int64_t n, int64_t batch);
int ct_cuda_svd(CtDevice device, CtDType dtype, void *W, void *S, void *U, void *V, int64_t m, int64_t n,
                int64_t ucols, int64_t batch);

#endif /* CTORCH_CUDA_LINALG_CUH */
