/* fake_cudart_cub.cpp: the runtime entry points CUB's host code and __device__ variables refer
 * to, for reduce_harness.cu (which includes sort.cu and so CUB's radix sorts). The harness never
 * calls CUB; these only satisfy the linker and report "no device" if ever reached. Plain C++,
 * like fake_cudart.cpp. */
#include <cuda_runtime_api.h>

extern "C" {
void CUDARTAPI __cudaRegisterVar(void **, char *, char *, const char *, int, size_t, int, int) {}
cudaError_t CUDARTAPI cudaGetDeviceCount(int *count)
{
    *count = 0;
    return cudaErrorNoDevice;
}
cudaError_t CUDARTAPI cudaFuncGetAttributes(struct cudaFuncAttributes *, const void *) { return cudaErrorNoDevice; }
cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *, int, size_t,
                                                                             unsigned int)
{
    *n = 0;
    return cudaErrorNoDevice;
}
cudaError_t CUDARTAPI cudaPeekAtLastError(void) { return cudaSuccess; }
cudaError_t CUDARTAPI cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr, int)
{
    *value = 0;
    return cudaErrorNoDevice;
}
}
