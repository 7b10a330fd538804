/* fake_cudart.cpp: a fake CUDA runtime for allocator_harness.cu (compiled as plain C++, so that
 * these definitions do not meet the device-side declarations nvcc sees in a .cu). Device memory
 * is host memory here, never dereferenced; the "GPU" has `capacity` bytes. */
#include "fake_cudart.h"
#include <cuda_runtime_api.h>
#include <map>
#include <stdlib.h>
#include <string.h>

size_t capacity = 100u << 20; /* bytes the fake GPU has */
size_t in_use = 0;
static std::map<void *, size_t> device_blocks;
int malloc_calls = 0, free_calls = 0, failed_mallocs = 0;
static cudaError_t last_error = cudaSuccess;
static int current_device = 0;
std::map<void *, int> event_pending; /* event -> 1 while "in flight" */
int host_allocs = 0;
int memcpy_calls = 0;
std::vector<FakeLaunch> launches;

extern "C" {
cudaError_t CUDARTAPI cudaMalloc(void **p, size_t n)
{
    if (in_use + n > capacity) {
        failed_mallocs++;
        last_error = cudaErrorMemoryAllocation;
        return cudaErrorMemoryAllocation;
    }
    *p = malloc(n);
    device_blocks[*p] = n;
    in_use += n;
    malloc_calls++;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaFree(void *p)
{
    in_use -= device_blocks[p];
    device_blocks.erase(p);
    free(p);
    free_calls++;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}
cudaError_t CUDARTAPI cudaGetDevice(int *d)
{
    *d = current_device;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaSetDevice(int d)
{
    current_device = d;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMemGetInfo(size_t *f, size_t *t)
{
    *f = capacity - in_use;
    *t = capacity;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaHostAlloc(void **p, size_t n, unsigned int flags)
{
    *p = malloc(n);
    host_allocs++;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaFreeHost(void *p)
{
    free(p);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    *e = (cudaEvent_t)malloc(1);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    event_pending[(void *)e] = 1;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t e)
{
    if (event_pending[(void *)e]) {
        last_error = cudaErrorNotReady;
        return cudaErrorNotReady;
    }
    return cudaSuccess;
}
const char *CUDARTAPI cudaGetErrorString(cudaError_t e) { return "fake error"; }
const char *CUDARTAPI cudaGetErrorName(cudaError_t e) { return "cudaErrorFake"; }
cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s)
{
    memcpy_calls++;
    memcpy(dst, src, n);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMemsetAsync(void *dst, int value, size_t n, cudaStream_t s)
{
    memset(dst, value, n);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t s) { return cudaSuccess; }
/* Kernel launches are recorded, not run (there is no GPU): the harness runs the per-thread
 * bodies itself and checks the launch configurations. nvcc's launch stubs push the <<<...>>>
 * configuration, pop it, look the kernel up and launch it through these. */
static dim3 pushed_grid, pushed_block;
unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, struct CUstream_st *stream)
{
    pushed_grid = grid;
    pushed_block = block;
    return 0;
}
cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream)
{
    *grid = pushed_grid;
    *block = pushed_block;
    *shared = 0;
    *(cudaStream_t *)stream = 0;
    return cudaSuccess;
}
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
    *kernel = (cudaKernel_t)func;
    return cudaSuccess;
}
static cudaError_t record_launch(const void *func, dim3 grid, dim3 block)
{
    FakeLaunch l;
    l.func = func;
    l.threads = (long long)grid.x * grid.y * grid.z * block.x * block.y * block.z;
    launches.push_back(l);
    return cudaSuccess;
}
cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shared,
                                         cudaStream_t stream)
{
    return record_launch((const void *)kernel, grid, block);
}
cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shared,
                                       cudaStream_t stream)
{
    return record_launch(func, grid, block);
}
void __cudaRegisterFunction(void **h, const char *f, char *d, const char *n, int t, void *ti, void *bi, void *bd,
                            void *gd, int *w)
{
}
/* What cub's host code asks (index_harness.cu includes index.cu, which uses cub): a device of
 * compute capability 7.5 with 40 SMs. The harness never runs a cub algorithm. */
cudaError_t CUDARTAPI cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaPeekAtLastError(void) { return last_error; }
cudaError_t CUDARTAPI cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    switch (attr) {
    case cudaDevAttrComputeCapabilityMajor:
        *value = 7;
        break;
    case cudaDevAttrComputeCapabilityMinor:
        *value = 5;
        break;
    case cudaDevAttrMultiProcessorCount:
        *value = 40;
        break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
        *value = 48 << 10;
        break;
    default:
        *value = 1;
        break;
    }
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    memset(attr, 0, sizeof(*attr));
    attr->ptxVersion = 75;
    attr->binaryVersion = 75;
    attr->maxThreadsPerBlock = 1024;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *blocks, const void *func,
                                                                           int block_size, size_t shared,
                                                                           unsigned int flags)
{
    *blocks = 4;
    return cudaSuccess;
}
void __cudaRegisterVar(void **h, char *host_var, char *device_address, const char *device_name, int ext, size_t size,
                       int constant, int global)
{
}
/* What nvcc's generated code registers, even for a file without kernels. */
void **__cudaRegisterFatBinary(void *f)
{
    static void *h;
    return &h;
}
void __cudaRegisterFatBinaryEnd(void **h) {}
void __cudaUnregisterFatBinary(void **h) {}
char __cudaInitModule(void **h) { return 0; }
}

