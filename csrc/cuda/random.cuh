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

#endif /* CTORCH_CUDA_RANDOM_CUH */
