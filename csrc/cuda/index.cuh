/* index.cuh: the index op family on the GPU (index.cu): the entries of struct CtIndexKernels
 * (index.h) that runtime.cu puts in the backend's table. Each follows the C side's convention:
 * 0 (or a new tensor), or -1 (NULL) with a Python exception set; out-of-range indices are not
 * errors here but reported through CtIndexArgs.bad, as on the CPU. */
#ifndef CTORCH_CUDA_INDEX_CUH
#define CTORCH_CUDA_INDEX_CUH

#include "common.cuh"
#include "index.h"

int ct_cuda_index(const CtIter *it, CtIndexArgs *args);
int ct_cuda_index_put(const CtIter *it, CtIndexArgs *args);
int ct_cuda_index_offsets(const CtIter *it, CtIndexArgs *args);
int ct_cuda_masked_fill(const CtIter *it);
int ct_cuda_count_nonzero(CtTensorObject *t, int64_t *count);
CtTensorObject *ct_cuda_nonzero(CtTensorObject *t);
CtTensorObject *ct_cuda_masked_select(CtTensorObject *src, CtTensorObject *mask);
int ct_cuda_triangle(CtTensorObject *out, CtTensorObject *src, int64_t diagonal, bool upper);
int ct_cuda_int_minmax(CtTensorObject *t, int64_t *min, int64_t *max);

#endif /* CTORCH_CUDA_INDEX_CUH */
