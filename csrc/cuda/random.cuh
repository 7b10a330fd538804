/* random.cuh: the random kernels on the GPU (random.cu), the entries of struct CtRandomKernels
 * (random.h) that runtime.cu puts in the backend's table. Same contracts as the CPU's: contiguous
 * device memory, element i from the Philox block (seed, offset + i); 0, or -1 with a Python
 * exception set. */
#ifndef CTORCH_CUDA_RANDOM_CUH
#define CTORCH_CUDA_RANDOM_CUH

#include "common.cuh"
#include "random.h"

int ct_cuda_random_fill(void *data, int64_t n, CtDType dtype, const CtRandomSpec *spec, CtDevice device);
int ct_cuda_bernoulli_tensor(void *out, CtDType out_dtype, const void *p, CtDType p_dtype, int64_t n, uint64_t seed,
                             uint64_t offset, CtDevice device);
int ct_cuda_normal_tensor(void *out, const void *mean, const void *std, CtDType dtype, int64_t n, uint64_t seed,
                          uint64_t offset, CtDevice device);
int ct_cuda_randperm(void *out, CtDType dtype, int64_t n, uint64_t seed, uint64_t offset, CtDevice device);
/* the rejection samplers, _standard_gamma_grad and _dirichlet_grad (sampling_math.h) */
int ct_cuda_gamma(void *out, const void *alpha, CtDType dtype, int64_t n, uint64_t seed, uint64_t offset,
                  CtDevice device);
int ct_cuda_dirichlet(void *out, const void *alpha, CtDType dtype, int64_t rows, int64_t cols, uint64_t seed,
                      uint64_t offset, CtDevice device);
int ct_cuda_poisson(void *out, const void *rate, CtDType dtype, int64_t n, uint64_t seed, uint64_t offset,
                    CtDevice device);
int ct_cuda_binomial(void *out, const void *count, const void *prob, CtDType dtype, int64_t n, uint64_t seed,
                     uint64_t offset, CtDevice device);
int ct_cuda_standard_gamma_grad(void *out, const void *alpha, const void *x, CtDType dtype, int64_t n,
                                CtDevice device);
int ct_cuda_dirichlet_grad(void *out, const void *x, const void *alpha, const void *total, CtDType dtype, int64_t n,
                           CtDevice device);

#endif /* CTORCH_CUDA_RANDOM_CUH */
