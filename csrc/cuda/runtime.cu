/* runtime.cu: the CUDA backend's entry point and its device runtime: error recording,
 * device discovery (classifying "no driver", "driver too old", "no GPU"), properties, the
 * per-thread current stream, the stream pool, events, and the CtCudaBackend table that
 * ct_cuda_backend_init() hands to ctorch._C (see ctorch_cuda.h). */
#include "allocator.cuh"
#include "common.cuh"
#include "blas.cuh"
#include "copy.cuh"
#include "elementwise.h"
#include "reduce.cuh"
#include "index.cuh"
#include "search.cuh"
#include "pool.cuh"
#include "linalg.cuh"
#include "upsample.cuh"
#include "random.cuh"
#include "linalg.h"
#include "nn.h"
#include "conv.h"
#include "optim.h"
#include "elementwise.cuh"
#include <mutex>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#ifndef CT_CUDA_ARCH_LIST
#define CT_CUDA_ARCH_LIST ""
#endif
#ifndef CT_CUDA_PTX_ARCH
#define CT_CUDA_PTX_ARCH ""
#endif

const CtCudaHost *ct_cuda_host = nullptr;

/* --- errors -------------------------------------------------------------------------------- */
static thread_local char tl_error[4096];

const char *ct_cuda_last_error(void) { return tl_error; }

int ct_cuda_set_error(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tl_error, sizeof(tl_error), fmt, ap);
    va_end(ap);
    return status;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int ct_cuda_record_error(cudaError_t err, const char *expr, const char *func, const char *file, int line)
{
    const char *hint = "";
    switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
        hint = "\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
               "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1";
        break;
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidDeviceFunction:
        hint = "\nctorch was not compiled for this GPU's architecture (see ctorch.cuda.diagnose()); rebuild with "
               "CTORCH_CUDA_ARCH set to its compute capability, e.g. CTORCH_CUDA_ARCH=86";
        break;
    default:
        break;
    }
    ct_cuda_set_error(CT_CUDA_ERROR, "CUDA error: %s\n(%s from %s in %s at %s:%d)%s", cudaGetErrorString(err),
                      cudaGetErrorName(err), expr, func, base_name(file), line, hint);
    (void)cudaGetLastError(); /* clears a non-sticky error so that later calls do not see it */
    return err == cudaErrorMemoryAllocation ? CT_CUDA_OUT_OF_MEMORY : CT_CUDA_ERROR;
}

int ct_cuda_record_cublas_error(cublasStatus_t err, const char *expr, const char *func, const char *file, int line)
{
    ct_cuda_set_error(CT_CUDA_ERROR, "CUDA error: %s when calling `%s`\n(%s in %s at %s:%d)",
                      cublasGetStatusName(err), expr, cublasGetStatusString(err), func, base_name(file), line);
    return err == CUBLAS_STATUS_ALLOC_FAILED ? CT_CUDA_OUT_OF_MEMORY : CT_CUDA_ERROR;
}

int ct_cuda_raise(int status)
{
    if (status == CT_CUDA_OK) {
        status = CT_CUDA_ERROR;
    }
    return ct_cuda_host->raise(status, tl_error);
}

int ct_cuda_sync_debug_check(void)
{
    static const char message[] = "called a synchronizing CUDA operation";
    int mode = ct_cuda_host->settings->sync_debug_mode;
    if (mode == 2 || (mode == 1 && ct_cuda_host->warn(message) < 0)) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "%s", message);
    }
    return CT_CUDA_OK;
}

/* --- devices ------------------------------------------------------------------------------- */
static int rt_driver_version(int *version)
{
    *version = 0;
    cudaError_t err = cudaDriverGetVersion(version);
    if (err != cudaSuccess) {
        *version = 0;
        (void)cudaGetLastError();
    }
    return CT_CUDA_OK;
}

static int rt_runtime_version(int *version)
{
    CT_CUDA_CHECK(cudaRuntimeGetVersion(version));
    return CT_CUDA_OK;
}

static int rt_device_count(int *count)
{
    int n = 0;
    *count = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err == cudaSuccess) {
        *count = n;
        return CT_CUDA_OK;
    }
    (void)cudaGetLastError();
    int driver = 0;
    rt_driver_version(&driver);
    if (err == cudaErrorNoDevice) {
        return ct_cuda_set_error(CT_CUDA_NO_DEVICE, "No CUDA GPUs are available");
    }
    if (driver == 0) {
        return ct_cuda_set_error(CT_CUDA_NO_DRIVER,
                                 "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU "
                                 "and installed a driver from http://www.nvidia.com/Download/index.aspx");
    }
    if (err == cudaErrorInsufficientDriver) {
        return ct_cuda_set_error(CT_CUDA_DRIVER_TOO_OLD,
                                 "The NVIDIA driver on your system is too old: it supports CUDA up to %d.%d, but "
                                 "ctorch was built with CUDA %d.%d. Please update your GPU driver by downloading "
                                 "and installing a new version from http://www.nvidia.com/Download/index.aspx, or "
                                 "rebuild ctorch with a CUDA toolkit no newer than %d.%d.",
                                 driver / 1000, driver % 1000 / 10, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10,
                                 driver / 1000, driver % 1000 / 10);
    }
    const char *why = "";
    switch (err) {
    case cudaErrorSystemDriverMismatch:
        why = " The NVIDIA kernel module and the user-space driver library (libcuda) have different versions, "
              "usually after a driver update without a reboot: reboot, or reinstall the driver.";
        break;
    case cudaErrorStubLibrary:
        why = " The libcuda.so.1 found is the CUDA toolkit's stub library, not a driver: remove the toolkit's "
              "lib64/stubs directory from LD_LIBRARY_PATH (or install the NVIDIA driver).";
        break;
    case cudaErrorCompatNotSupportedOnDevice:
        why = " CUDA forward-compatibility libraries are in use, but this GPU does not support them.";
        break;
    case cudaErrorDevicesUnavailable:
        why = " Every GPU is busy or unavailable (exclusive or prohibited compute mode, see nvidia-smi).";
        break;
    case cudaErrorOperatingSystem:
        why = " The operating system refused access to the GPU (in a container, are the /dev/nvidia* devices "
              "passed through?).";
        break;
    default:
        break;
    }
    return ct_cuda_set_error(CT_CUDA_ERROR, "CUDA initialization failed: %s (%s).%s", cudaGetErrorString(err),
                             cudaGetErrorName(err), why);
}

static int rt_get_device_properties(int device, CtCudaDeviceProps *out)
{
    cudaDeviceProp prop;
    CT_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "%s", prop.name);
    const unsigned char *u = (const unsigned char *)prop.uuid.bytes;
    snprintf(out->uuid, sizeof(out->uuid), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    out->total_memory = prop.totalGlobalMem;
    out->major = prop.major;
    out->minor = prop.minor;
    out->multi_processor_count = prop.multiProcessorCount;
    out->max_threads_per_multi_processor = prop.maxThreadsPerMultiProcessor;
    out->warp_size = prop.warpSize;
    out->regs_per_multiprocessor = prop.regsPerMultiprocessor;
    out->l2_cache_size = prop.l2CacheSize;
    out->is_integrated = prop.integrated;
    out->is_multi_gpu_board = prop.isMultiGpuBoard;
    out->pci_bus_id = prop.pciBusID;
    out->pci_device_id = prop.pciDeviceID;
    out->pci_domain_id = prop.pciDomainID;
    return CT_CUDA_OK;
}

static int sm_counts[CT_CUDA_MAX_DEVICES];

int ct_cuda_sm_count(int device)
{
    if (device < 0 || device >= CT_CUDA_MAX_DEVICES) {
        return 1;
    }
    if (sm_counts[device] == 0) {
        int n = 0;
        if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || n <= 0) {
            (void)cudaGetLastError();
            n = 1;
        }
        sm_counts[device] = n;
    }
    return sm_counts[device];
}

static int rt_set_device(int device) { return ct_cuda_device_guard(device); }

static int rt_synchronize(int device)
{
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    CT_CUDA_CHECK(cudaDeviceSynchronize());
    return CT_CUDA_OK;
}

static int rt_can_access_peer(int device, int peer, int *can)
{
    CT_CUDA_CHECK(cudaDeviceCanAccessPeer(can, device, peer));
    return CT_CUDA_OK;
}

static int rt_blas_handle(int device, uintptr_t *handle)
{
    cublasHandle_t h = nullptr;
    CT_CUDA_TRY(ct_cuda_cublas_handle(device, &h));
    *handle = (uintptr_t)h;
    return CT_CUDA_OK;
}

static int rt_mem_get_info(int device, size_t *free_bytes, size_t *total_bytes)
{
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    CT_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes));
    return CT_CUDA_OK;
}

/* --- streams ---------------------------------------------------------------------------------
 * The current stream is per thread and per device, as in PyTorch. Streams handed to Python come
 * from a pool (32 per device and priority, reused round-robin) and are never destroyed, so a
 * handle stays valid for the life of the process and the allocator's per-stream free lists never
 * see a destroyed stream's address come back for a different stream. */
static thread_local cudaStream_t tl_current_stream[CT_CUDA_MAX_DEVICES];

cudaStream_t ct_cuda_stream(int device)
{
    return (device >= 0 && device < CT_CUDA_MAX_DEVICES) ? tl_current_stream[device] : (cudaStream_t)0;
}

static uintptr_t rt_current_stream(int device) { return (uintptr_t)ct_cuda_stream(device); }

static void rt_set_current_stream(int device, uintptr_t stream)
{
    if (device >= 0 && device < CT_CUDA_MAX_DEVICES) {
        tl_current_stream[device] = (cudaStream_t)stream;
    }
}

#define CT_STREAM_POOL_SIZE 32
#define CT_STREAM_PRIORITY_LEVELS 8

struct StreamPool {
    cudaStream_t streams[CT_STREAM_POOL_SIZE];
    int created;
    unsigned next;
};

static std::mutex *pool_mutex = new std::mutex(); /* never destroyed: used until process exit */
static StreamPool stream_pools[CT_CUDA_MAX_DEVICES][CT_STREAM_PRIORITY_LEVELS];

static int rt_stream_priority_range(int device, int *least, int *greatest)
{
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    CT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(least, greatest));
    return CT_CUDA_OK;
}

static int rt_stream_from_pool(int device, int priority, uintptr_t *stream, int *actual_priority)
{
    int least = 0, greatest = 0;
    CT_CUDA_TRY(rt_stream_priority_range(device, &least, &greatest));
    /* Lower numbers are higher priorities: greatest <= priority <= least. */
    if (priority > least) {
        priority = least;
    }
    if (priority < greatest) {
        priority = greatest;
    }
    int level = least - priority;
    if (level >= CT_STREAM_PRIORITY_LEVELS) {
        level = CT_STREAM_PRIORITY_LEVELS - 1;
        priority = least - level;
    }
    std::lock_guard<std::mutex> lock(*pool_mutex);
    StreamPool *pool = &stream_pools[device][level];
    if (pool->created < CT_STREAM_POOL_SIZE) {
        cudaStream_t s;
        CT_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
        pool->streams[pool->created++] = s;
        *stream = (uintptr_t)s;
    } else {
        *stream = (uintptr_t)pool->streams[pool->next++ % CT_STREAM_POOL_SIZE];
    }
    *actual_priority = priority;
    return CT_CUDA_OK;
}

static int rt_stream_priority(int device, uintptr_t stream, int *priority)
{
    *priority = 0;
    if (stream == 0) {
        return CT_CUDA_OK;
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    CT_CUDA_CHECK(cudaStreamGetPriority((cudaStream_t)stream, priority));
    return CT_CUDA_OK;
}

static int rt_stream_query(int device, uintptr_t stream, int *done)
{
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaError_t err = cudaStreamQuery((cudaStream_t)stream);
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        *done = 0;
        return CT_CUDA_OK;
    }
    CT_CUDA_CHECK(err);
    *done = 1;
    return CT_CUDA_OK;
}

static int rt_stream_synchronize(int device, uintptr_t stream)
{
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    CT_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)stream));
    return CT_CUDA_OK;
}

static int rt_stream_wait_event(int device, uintptr_t stream, uintptr_t event)
{
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    CT_CUDA_CHECK(cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0));
    return CT_CUDA_OK;
}

/* --- events -------------------------------------------------------------------------------- */
static int rt_event_create(int device, int flags, uintptr_t *event)
{
    unsigned int f = cudaEventDefault;
    if (!(flags & CT_CUDA_EVENT_TIMING)) {
        f |= cudaEventDisableTiming;
    }
    if (flags & CT_CUDA_EVENT_BLOCKING) {
        f |= cudaEventBlockingSync;
    }
    if (flags & CT_CUDA_EVENT_INTERPROCESS) {
        f |= cudaEventInterprocess | cudaEventDisableTiming;
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaEvent_t e;
    CT_CUDA_CHECK(cudaEventCreateWithFlags(&e, f));
    *event = (uintptr_t)e;
    return CT_CUDA_OK;
}

static int rt_event_destroy(int device, uintptr_t event)
{
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    CT_CUDA_CHECK(cudaEventDestroy((cudaEvent_t)event));
    return CT_CUDA_OK;
}

static int rt_event_record(int device, uintptr_t event, uintptr_t stream)
{
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    CT_CUDA_CHECK(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream));
    return CT_CUDA_OK;
}

static int rt_event_query(int device, uintptr_t event, int *done)
{
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaError_t err = cudaEventQuery((cudaEvent_t)event);
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        *done = 0;
        return CT_CUDA_OK;
    }
    CT_CUDA_CHECK(err);
    *done = 1;
    return CT_CUDA_OK;
}

static int rt_event_synchronize(int device, uintptr_t event)
{
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    CT_CUDA_CHECK(cudaEventSynchronize((cudaEvent_t)event));
    return CT_CUDA_OK;
}

static int rt_event_elapsed_time(int device, uintptr_t start, uintptr_t end, float *ms)
{
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    CT_CUDA_CHECK(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end));
    return CT_CUDA_OK;
}

static int rt_record_stream(int device, void *ptr, uintptr_t stream)
{
    return ct_cuda_caching_record_stream(device, ptr, (cudaStream_t)stream);
}

/* A kernel that is never launched: its presence in the fatbinary for the GPU is what
 * cudaFuncGetAttributes checks. */
static __global__ void probe_kernel(int *out)
{
    if (out != nullptr) {
        *out = 1;
    }
}

static int rt_probe_kernel_image(int device)
{
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaFuncAttributes attr;
    CT_CUDA_CHECK(cudaFuncGetAttributes(&attr, probe_kernel));
    return CT_CUDA_OK;
}

/* --- the table ----------------------------------------------------------------------------- */
static CtCudaBackend backend;
static struct CtElementwiseKernels elementwise_kernels;
static struct CtReduceKernels reduce_kernels;
static struct CtIndexKernels index_kernels;
static struct CtRandomKernels random_kernels;
static struct CtBlasKernels blas_kernels;
static struct CtOptimKernels optim_kernels;
static struct CtNNKernels nn_kernels;

/* nn.cu */
int ct_cuda_nn_linear(const CtLinearDesc *d);
int ct_cuda_nn_leaky_relu(CtDType dtype, CtDevice device, int64_t n, const void *x, const void *grad, double slope,
                          void *out);
int ct_cuda_nn_embedding(CtEmbeddingDesc *d);
int ct_cuda_nn_embedding_backward(CtEmbeddingDesc *d);
int ct_cuda_nn_nll(CtNLLDesc *d);
int ct_cuda_nn_nll_backward(CtNLLDesc *d);
int ct_cuda_nn_pointwise_loss(CtPointwiseLossDesc *d);
int ct_cuda_nn_pointwise_loss_backward(const CtPointwiseLossDesc *d);
int ct_cuda_nn_layer_norm(const CtLayerNormDesc *d);
int ct_cuda_nn_layer_norm_backward(const CtLayerNormDesc *d);
int ct_cuda_nn_trunc_normal_transform(CtDType dtype, CtDevice device, int64_t n, void *data, double mean, double std,
                                      double a, double b);
int ct_cuda_nn_ctc_loss(const CtCTCDesc *d);
int ct_cuda_nn_ctc_loss_backward(const CtCTCDesc *d);
int ct_cuda_nn_grid_sample(const CtGridSampleDesc *d);
int ct_cuda_nn_grid_sample_backward(const CtGridSampleDesc *d);

/* conv.cu */
int ct_cuda_nn_im2col(const CtConvDesc *d);
int ct_cuda_nn_col2im(const CtConvDesc *d);
int ct_cuda_nn_channel_norm(const CtChannelNormDesc *d); /* norm.cu */
int ct_cuda_nn_channel_norm_backward(const CtChannelNormDesc *d);

int ct_cuda_optim_step(const CtOptimParams *p, int64_t n, const CtOptimTensor *tensors); /* optim.cu */
int ct_cuda_total_norm(const CtGradNormDesc *d); /* optim.cu */
int ct_cuda_scale_by_norm(const CtGradNormDesc *d);

CT_CUDA_EXPORT const CtCudaBackend *ct_cuda_backend_init(const CtCudaHost *host)
{
    if (host == nullptr || host->abi_version != CT_CUDA_ABI_VERSION) {
        return nullptr;
    }
    ct_cuda_host = host;
    /* Kernel families: fields are set one by one so that new fields in a family's struct start
     * NULL (the op raises) until their kernels are written. */
    memset(&elementwise_kernels, 0, sizeof(elementwise_kernels));
    elementwise_kernels.copy = ct_cuda_copy;
    memset(&reduce_kernels, 0, sizeof(reduce_kernels));
    reduce_kernels.reduce = ct_cuda_reduce;
    reduce_kernels.arg_reduce = ct_cuda_arg_reduce;
    reduce_kernels.scan = ct_cuda_scan;
    reduce_kernels.softmax = ct_cuda_softmax;
    reduce_kernels.sort = ct_cuda_sort;
    reduce_kernels.median = ct_cuda_median;
    reduce_kernels.mode = ct_cuda_mode;

    memset(&index_kernels, 0, sizeof(index_kernels));
    index_kernels.index = ct_cuda_index;
    index_kernels.index_put = ct_cuda_index_put;
    index_kernels.index_offsets = ct_cuda_index_offsets;
    index_kernels.masked_fill = ct_cuda_masked_fill;
    index_kernels.count_nonzero = ct_cuda_count_nonzero;
    index_kernels.nonzero = ct_cuda_nonzero;
    index_kernels.masked_select = ct_cuda_masked_select;
    index_kernels.triangle = ct_cuda_triangle;
    index_kernels.int_minmax = ct_cuda_int_minmax;
    index_kernels.searchsorted = ct_cuda_searchsorted;

    memset(&random_kernels, 0, sizeof(random_kernels));
    random_kernels.fill = ct_cuda_random_fill;
    random_kernels.bernoulli_tensor = ct_cuda_bernoulli_tensor;
    random_kernels.normal_tensor = ct_cuda_normal_tensor;
    random_kernels.randperm = ct_cuda_randperm;
    random_kernels.gamma = ct_cuda_gamma;
    random_kernels.dirichlet = ct_cuda_dirichlet;
    random_kernels.poisson = ct_cuda_poisson;
    random_kernels.binomial = ct_cuda_binomial;
    random_kernels.standard_gamma_grad = ct_cuda_standard_gamma_grad;
    random_kernels.dirichlet_grad = ct_cuda_dirichlet_grad;
    memset(&blas_kernels, 0, sizeof(blas_kernels));
    blas_kernels.gemm_batched = ct_cuda_gemm_batched;
    blas_kernels.lu_factor = ct_cuda_lu_factor;
    blas_kernels.lu_solve = ct_cuda_lu_solve;
    blas_kernels.cholesky = ct_cuda_cholesky;
    blas_kernels.tri_solve = ct_cuda_tri_solve;
    blas_kernels.qr = ct_cuda_qr;
    blas_kernels.eigh = ct_cuda_eigh;
    blas_kernels.svd = ct_cuda_svd;
    memset(&optim_kernels, 0, sizeof(optim_kernels));
    optim_kernels.step = ct_cuda_optim_step;
    optim_kernels.total_norm = ct_cuda_total_norm;
    optim_kernels.scale_by_norm = ct_cuda_scale_by_norm;
    memset(&nn_kernels, 0, sizeof(nn_kernels));
    nn_kernels.linear = ct_cuda_nn_linear;
    nn_kernels.leaky_relu = ct_cuda_nn_leaky_relu;
    nn_kernels.embedding = ct_cuda_nn_embedding;
    nn_kernels.embedding_backward = ct_cuda_nn_embedding_backward;
    nn_kernels.nll = ct_cuda_nn_nll;
    nn_kernels.nll_backward = ct_cuda_nn_nll_backward;
    nn_kernels.pointwise_loss = ct_cuda_nn_pointwise_loss;
    nn_kernels.pointwise_loss_backward = ct_cuda_nn_pointwise_loss_backward;
    nn_kernels.layer_norm = ct_cuda_nn_layer_norm;
    nn_kernels.layer_norm_backward = ct_cuda_nn_layer_norm_backward;
    nn_kernels.trunc_normal_transform = ct_cuda_nn_trunc_normal_transform;
    nn_kernels.im2col = ct_cuda_nn_im2col;
    nn_kernels.col2im = ct_cuda_nn_col2im;
    nn_kernels.channel_norm = ct_cuda_nn_channel_norm;
    nn_kernels.channel_norm_backward = ct_cuda_nn_channel_norm_backward;
    nn_kernels.pool = ct_cuda_pool;
    nn_kernels.pool_backward = ct_cuda_pool_backward;
    nn_kernels.upsample = ct_cuda_upsample;
    nn_kernels.upsample_backward = ct_cuda_upsample_backward;
    nn_kernels.ctc_loss = ct_cuda_nn_ctc_loss;
    nn_kernels.ctc_loss_backward = ct_cuda_nn_ctc_loss_backward;
    nn_kernels.grid_sample = ct_cuda_nn_grid_sample;
    nn_kernels.grid_sample_backward = ct_cuda_nn_grid_sample_backward;
    elementwise_kernels.unary = ct_cuda_elementwise;
    elementwise_kernels.binary = ct_cuda_elementwise;
    elementwise_kernels.ternary = ct_cuda_elementwise;

    CtCudaBackend *b = &backend;
    memset(b, 0, sizeof(*b));
    b->abi_version = CT_CUDA_ABI_VERSION;
    b->struct_size = sizeof(CtCudaBackend);
    b->runtime_version_built = CUDART_VERSION;
    b->arch_list = CT_CUDA_ARCH_LIST;
    b->ptx_arch = CT_CUDA_PTX_ARCH;
    b->last_error = ct_cuda_last_error;

    b->device_count = rt_device_count;
    b->driver_version = rt_driver_version;
    b->runtime_version = rt_runtime_version;
    b->get_device_properties = rt_get_device_properties;
    b->set_device = rt_set_device;
    b->synchronize = rt_synchronize;
    b->mem_get_info = rt_mem_get_info;
    b->probe_kernel_image = rt_probe_kernel_image;

    b->stream_priority_range = rt_stream_priority_range;
    b->stream_from_pool = rt_stream_from_pool;
    b->stream_priority = rt_stream_priority;
    b->current_stream = rt_current_stream;
    b->set_current_stream = rt_set_current_stream;
    b->stream_query = rt_stream_query;
    b->stream_synchronize = rt_stream_synchronize;
    b->stream_wait_event = rt_stream_wait_event;
    b->event_create = rt_event_create;
    b->event_destroy = rt_event_destroy;
    b->event_record = rt_event_record;
    b->event_query = rt_event_query;
    b->event_synchronize = rt_event_synchronize;
    b->event_elapsed_time = rt_event_elapsed_time;

    b->malloc = ct_cuda_caching_malloc;
    b->free = ct_cuda_caching_free;
    b->empty_cache = ct_cuda_caching_empty_cache;
    b->memory_stats = ct_cuda_caching_memory_stats;
    b->reset_peak_stats = ct_cuda_caching_reset_peak_stats;
    b->reset_accumulated_stats = ct_cuda_caching_reset_accumulated_stats;
    b->record_stream = rt_record_stream;

    b->host_malloc = ct_cuda_host_malloc;
    b->host_free = ct_cuda_host_free;
    b->host_empty_cache = ct_cuda_host_empty_cache;
    b->host_stats = ct_cuda_host_stats;

    b->memcpy = ct_cuda_memcpy;
    b->memset = ct_cuda_memset;
    b->memcpy_peer = ct_cuda_memcpy_peer;

    b->elementwise = &elementwise_kernels;
    b->reduce = &reduce_kernels;
    b->index = &index_kernels;
    b->random = &random_kernels;
    b->blas = &blas_kernels;
    b->optim = &optim_kernels;
    b->nn = &nn_kernels;

    b->set_memory_fraction = ct_cuda_caching_set_memory_fraction;
    b->get_memory_fraction = ct_cuda_caching_get_memory_fraction;
    b->memory_snapshot = ct_cuda_caching_snapshot;
    b->pointer_device = ct_cuda_caching_pointer_device;
    b->can_access_peer = rt_can_access_peer;
    b->blas_handle = rt_blas_handle;
    b->host_reset_peak_stats = ct_cuda_host_reset_peak_stats;
    b->host_reset_accumulated_stats = ct_cuda_host_reset_accumulated_stats;
    return b;
}
