/* upsample.cuh: the interpolation kernels on the GPU (upsample.cu), the CtNNKernels.upsample /
 * .upsample_backward entries (nn.h, upsample.h) that runtime.cu puts in the backend's table. The C
 * side's convention: 0, or -1 with a Python exception set. */
#ifndef CTORCH_CUDA_UPSAMPLE_CUH
#define CTORCH_CUDA_UPSAMPLE_CUH

#include "common.cuh"
#include "upsample.h"

int ct_cuda_upsample(const CtUpsampleDesc *d);
int ct_cuda_upsample_backward(const CtUpsampleDesc *d);

#endif /* CTORCH_CUDA_UPSAMPLE_CUH */
