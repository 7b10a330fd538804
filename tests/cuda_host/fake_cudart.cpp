/* fake_cudart.cpp: a fake CUDA runtime for allocator_harness.cu (compiled as plain C++, so that
 * these definitions do not meet the device-side declarations nvcc sees in a .cu). Device memory
 * is host memory here, never dereferenced; the "GPU" has `capacity` bytes. */
#include "fake_cudart.h"
#include <cuda_runtime_api.h>
#include <map>
#include <string>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
std::vector<std::string> api_log;
int peer_enabled = 0;

/* Every launch is checked against the limits a real GPU enforces (cudaErrorInvalidConfiguration
 * there): an empty grid or block, gridDim.x > 2^31 - 1, gridDim.y or .z > 65535, more than 1024
 * threads per block (blockDim.z <= 64), more than 48 KiB of dynamic shared memory (which would
 * need cudaFuncSetAttribute). A bad launch fails the call, is printed, and makes the program
 * exit with status 3 at the end, so that no harness can pass with one. */
int invalid_launches = 0;
static struct InvalidLaunchGuard {
    ~InvalidLaunchGuard()
    {
        if (invalid_launches > 0) {
            printf("FAIL: %d launch(es) with an invalid configuration\n", invalid_launches);
            fflush(stdout);
            _exit(3);
        }
    }
} invalid_launch_guard;

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
static void log_call(const char *what, cudaStream_t s);
cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    event_pending[(void *)e] = 1;
    log_call("record", s);
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
cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t e)
{
    event_pending[(void *)e] = 0; /* the host waits: the work is done */
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
/* The calls that order work between devices, logged as "<call> dev=<current device> stream=<s>"
 * (peer copies are done at once). */
static void log_call(const char *what, cudaStream_t s)
{
    char buf[96];
    snprintf(buf, sizeof(buf), "%s dev=%d stream=%p", what, current_device, (void *)s);
    api_log.push_back(buf);
}
cudaError_t CUDARTAPI cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
    *can = 1;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    peer_enabled++;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device, size_t n,
                                          cudaStream_t s)
{
    memcpy(dst, src, n);
    char what[48];
    snprintf(what, sizeof(what), "peer %d<-%d", dst_device, src_device);
    log_call(what, s);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
    log_call("wait", s);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t e)
{
    event_pending.erase((void *)e);
    free((void *)e);
    return cudaSuccess;
}
/* Kernel launches are recorded, not run (there is no GPU): the harness runs the per-thread
 * bodies itself and checks the launch configurations. nvcc's launch stubs push the <<<...>>>
 * configuration, pop it, look the kernel up and launch it through these. */
static dim3 pushed_grid, pushed_block;
static size_t pushed_shared;
unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, struct CUstream_st *stream)
{
    pushed_grid = grid;
    pushed_block = block;
    pushed_shared = shared;
    return 0;
}
cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream)
{
    *grid = pushed_grid;
    *block = pushed_block;
    *shared = pushed_shared;
    *(cudaStream_t *)stream = 0;
    return cudaSuccess;
}

static const char *launch_problem(dim3 grid, dim3 block, size_t shared)
{
    if (grid.x == 0 || grid.y == 0 || grid.z == 0) {
        return "empty grid";
    }
    if (block.x == 0 || block.y == 0 || block.z == 0) {
        return "empty block";
    }
    if (grid.x > 2147483647u || grid.y > 65535u || grid.z > 65535u) {
        return "grid too large";
    }
    if ((unsigned long long)block.x * block.y * block.z > 1024 || block.z > 64) {
        return "block too large";
    }
    if (shared > 48u * 1024u) {
        return "more than 48 KiB of dynamic shared memory";
    }
    return nullptr;
}
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
    *kernel = (cudaKernel_t)func;
    return cudaSuccess;
}
static cudaError_t record_launch(const void *func, dim3 grid, dim3 block, size_t shared)
{
    const char *problem = launch_problem(grid, block, shared);
    if (problem != nullptr) {
        printf("INVALID LAUNCH (%s): grid (%u, %u, %u), block (%u, %u, %u), %zu bytes of shared memory\n", problem,
               grid.x, grid.y, grid.z, block.x, block.y, block.z, shared);
        invalid_launches++;
        last_error = cudaErrorInvalidConfiguration;
        return cudaErrorInvalidConfiguration;
    }
    FakeLaunch l;
    l.func = func;
    l.threads = (long long)grid.x * grid.y * grid.z * block.x * block.y * block.z;
    l.grid = grid;
    l.block = block;
    l.shared = shared;
    launches.push_back(l);
    return cudaSuccess;
}
cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shared,
                                         cudaStream_t stream)
{
    return record_launch((const void *)kernel, grid, block, shared);
}
cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shared,
                                       cudaStream_t stream)
{
    return record_launch(func, grid, block, shared);
}
/* cub's launches through cudaLaunchKernelEx (the harnesses, built unoptimised, keep that code) */
cudaError_t CUDARTAPI cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    return record_launch(func, config->gridDim, config->blockDim, config->dynamicSmemBytes);
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

