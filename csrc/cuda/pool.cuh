/* pool.cuh: the pooling kernels on the GPU (pool.cu), the CtNNKernels.pool / .pool_backward
 * entries (nn.h, pool.h) that runtime.cu puts in the backend's table. The C side's convention: 0,
 * or -1 with a Python exception set. */
#ifndef CTORCH_CUDA_POOL_CUH
#define CTORCH_CUDA_POOL_CUH

#include "common.cuh"
#include "pool.h"

int ct_cuda_pool(const CtPoolDesc *d);
int ct_cuda_pool_backward(const CtPoolDesc *d);

#endif /* CTORCH_CUDA_POOL_CUH */
