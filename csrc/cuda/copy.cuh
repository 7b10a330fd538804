/* copy.cuh: byte copies between host and device, memset, and the dtype-casting strided copy
 * (the CUDA entry of struct CtElementwiseKernels's copy) from copy.cu. */
#ifndef CTORCH_CUDA_COPY_CUH
#define CTORCH_CUDA_COPY_CUH

#include "common.cuh"
#include "iter.h"

/* Backend-table entries (statuses, see ctorch_cuda.h). */
int ct_cuda_memcpy(void *dst, const void *src, size_t nbytes, int kind, int device, int non_blocking);
int ct_cuda_memset(void *dst, int value, size_t nbytes, int device);
int ct_cuda_memcpy_peer(void *dst, int dst_device, const void *src, int src_device, size_t nbytes);

/* out (operand 0) = in (operand 1) cast between any two dtypes, on it->device's current stream.
 * 0, or -1 with a Python exception set. */
int ct_cuda_copy(const CtIter *it);

#endif /* CTORCH_CUDA_COPY_CUH */
