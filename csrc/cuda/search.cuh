/* search.cuh: searchsorted on the GPU (search.cu), the entry of struct CtIndexKernels
 * (index.h) that runtime.cu puts in the backend's table. The C side's convention: 0, or -1 with
 * a Python exception set. */
#ifndef CTORCH_CUDA_SEARCH_CUH
#define CTORCH_CUDA_SEARCH_CUH

#include "common.cuh"
#include "search.h"

int ct_cuda_searchsorted(const CtIter *it, const CtSearchArgs *args);

#endif /* CTORCH_CUDA_SEARCH_CUH */
