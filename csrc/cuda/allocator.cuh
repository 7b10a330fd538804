/* allocator.cuh: the caching allocators of allocator.cu (device memory and pinned host memory),
 * as entries of the backend table (see ctorch_cuda.h for their contracts). */
#ifndef CTORCH_CUDA_ALLOCATOR_CUH
#define CTORCH_CUDA_ALLOCATOR_CUH

#include "common.cuh"

int ct_cuda_caching_malloc(int device, size_t nbytes, void **ptr);
int ct_cuda_caching_free(int device, void *ptr);
int ct_cuda_caching_empty_cache(void);
int ct_cuda_caching_memory_stats(int device, CtCudaMemoryStats *out);
int ct_cuda_caching_reset_peak_stats(int device);
int ct_cuda_caching_reset_accumulated_stats(int device);
int ct_cuda_caching_set_memory_fraction(int device, double fraction);
int ct_cuda_caching_get_memory_fraction(int device, double *fraction);
int ct_cuda_caching_snapshot(CtCudaBlockInfo **out, size_t *count);
int ct_cuda_caching_pointer_device(const void *ptr, int *device);
int ct_cuda_caching_record_stream(int device, void *ptr, cudaStream_t stream);

int ct_cuda_host_malloc(int device, size_t nbytes, void **ptr);
int ct_cuda_host_free(void *ptr);
int ct_cuda_host_empty_cache(void);
int ct_cuda_host_stats(CtCudaHostStats *out);
int ct_cuda_host_reset_peak_stats(void);
int ct_cuda_host_reset_accumulated_stats(void);

#endif /* CTORCH_CUDA_ALLOCATOR_CUH */
