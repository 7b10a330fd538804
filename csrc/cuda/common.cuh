/* common.cuh: what every .cu of the CUDA backend shares: the error check macros, the device
 * guard, the current stream, the per-dtype traits (load/store in the accumulation type), and
 * the fast 32-bit divider used by offset calculators.
 *
 * Errors: CT_CUDA_CHECK(expr) / CT_CUBLAS_CHECK(expr) record the failing expression, function,
 * file and line in a thread-local message and return a CtCudaStatus from the enclosing function
 * (which must return int). Nothing here exits or aborts: the caller on the C side turns the
 * status into a Python exception. Kernel-family entries (C convention: -1 with an exception
 * set) end with `return ct_cuda_raise(status)`. */
#ifndef CTORCH_CUDA_COMMON_CUH
#define CTORCH_CUDA_COMMON_CUH

#include "ctorch_cuda.h"
#include "dtype.h" /* CtDType, the 16-bit float bit conversions (CT_HOST_DEVICE) */
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <type_traits>

/* #pragma unroll for code compiled for both sides (the host compiler would warn about it). */
#ifdef __CUDA_ARCH__
#define CT_UNROLL _Pragma("unroll")
#else
#define CT_UNROLL
#endif

/* Only ct_cuda_backend_init is exported from the .so (built with -fvisibility=hidden). */
#define CT_CUDA_EXPORT extern "C" __attribute__((visibility("default")))

/* --- errors ----------------------------------------------------------------------------------- */
/* Records a failed CUDA call and returns its status (CT_CUDA_OUT_OF_MEMORY for
 * cudaErrorMemoryAllocation, CT_CUDA_ERROR otherwise). Clears CUDA's last error. */
int ct_cuda_record_error(cudaError_t err, const char *expr, const char *func, const char *file, int line);
int ct_cuda_record_cublas_error(cublasStatus_t err, const char *expr, const char *func, const char *file, int line);
/* Records a message of our own (printf-style) and returns status. */
int ct_cuda_set_error(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* This thread's last message. */
const char *ct_cuda_last_error(void);
/* Raises the last recorded error as a Python exception through the host; returns -1. */
int ct_cuda_raise(int status);

#define CT_CUDA_CHECK(expr)                                                                   \
    do {                                                                                      \
        cudaError_t ct_err_ = (expr);                                                         \
        if (ct_err_ != cudaSuccess) {                                                         \
            return ct_cuda_record_error(ct_err_, #expr, __func__, __FILE__, __LINE__);        \
        }                                                                                     \
    } while (0)

#define CT_CUBLAS_CHECK(expr)                                                                 \
    do {                                                                                      \
        cublasStatus_t ct_err_ = (expr);                                                      \
        if (ct_err_ != CUBLAS_STATUS_SUCCESS) {                                               \
            return ct_cuda_record_cublas_error(ct_err_, #expr, __func__, __FILE__, __LINE__); \
        }                                                                                     \
    } while (0)

/* After every kernel launch: launch-configuration errors surface here. */
#define CT_CUDA_CHECK_LAUNCH() CT_CUDA_CHECK(cudaGetLastError())

/* Propagates a non-zero status from a call of ours. */
#define CT_CUDA_TRY(expr)          \
    do {                           \
        int ct_st_ = (expr);       \
        if (ct_st_ != CT_CUDA_OK) { \
            return ct_st_;         \
        }                          \
    } while (0)

/* The host services given to ct_cuda_backend_init (never NULL afterwards). */
extern const CtCudaHost *ct_cuda_host;

/* Called before each wait of the host for the GPU that the user did not ask for (a result read
 * back: a blocking copy, nonzero's size, an index check): under set_sync_debug_mode('warn') it
 * warns and under 'error' it fails with PyTorch's message, before anything waits. */
int ct_cuda_sync_debug_check(void);

/* --- devices and streams ------------------------------------------------------------------------ */
/* Makes device current for this thread when it is not already. */
static inline int ct_cuda_device_guard(int device)
{
    int current = -1;
    CT_CUDA_CHECK(cudaGetDevice(&current));
    if (current != device) {
        CT_CUDA_CHECK(cudaSetDevice(device));
    }
    return CT_CUDA_OK;
}

/* This thread's current stream on device (0, the legacy default stream, until set). */
cudaStream_t ct_cuda_stream(int device);
/* The device's properties cached at first use (multiprocessor count for grid sizes). */
int ct_cuda_sm_count(int device);

/* --- pinned host memory (allocator.cu), used by the copies --------------------------------- */
/* If ptr lies in a pinned block, records an event on stream so the block is not reused before
 * the work queued so far on stream ends. */
int ct_cuda_host_record_use(const void *ptr, int device, cudaStream_t stream);

/* --- dtype traits --------------------------------------------------------------------------------
 * CtCudaType<CT_X>::T is the storage type and ::Acc the computing type, from CT_DTYPE_LIST.
 * ct_load<D>(p) widens an element to Acc; ct_store<D>(p, v) narrows a value into an element with
 * the conversions of dtype.h's CT_STORE_* (C casts), except that float16 uses the hardware
 * conversion (same IEEE round-to-nearest-even as ct_float_to_half). Host-callable too, so that
 * tests/cuda_host/ can compare them with the CPU's on a machine without a GPU. */
template <int D>
struct CtCudaType;
#define CT_CUDA_TYPE_TRAITS(NAME, ctype, acctype, ...) \
    template <>                                        \
    struct CtCudaType<CT_##NAME> {                     \
        typedef ctype T;                               \
        typedef acctype Acc;                           \
    };
CT_DTYPE_LIST(CT_CUDA_TYPE_TRAITS)
#undef CT_CUDA_TYPE_TRAITS

template <int D>
__host__ __device__ __forceinline__ typename CtCudaType<D>::Acc ct_widen(typename CtCudaType<D>::T x)
{
    return (typename CtCudaType<D>::Acc)x;
}
/* Through __half_raw: its conversions are host-callable in every CUDA 11-13 release. */
template <>
__host__ __device__ __forceinline__ float ct_widen<CT_F16>(ct_half x)
{
    __half_raw raw;
    raw.x = x;
    return __half2float(__half(raw));
}
template <>
__host__ __device__ __forceinline__ float ct_widen<CT_BF16>(ct_bfloat16 x)
{
    return ct_bfloat16_to_float(x);
}

/* Narrowing of any arithmetic value v into dtype D. Floats go to the small integer types through
 * int32, as the CPU's C cast compiles on x86-64, so that in-range values (and their wrap-around
 * below 2^31) agree between CPU and GPU. */
template <int D, typename V>
__host__ __device__ __forceinline__ typename CtCudaType<D>::T ct_narrow(V v)
{
    typedef typename CtCudaType<D>::T T;
    if constexpr (D == CT_F16) {
        return ((__half_raw)__float2half_rn((float)v)).x;
    } else if constexpr (D == CT_BF16) {
        return ct_float_to_bfloat16((float)v);
    } else if constexpr ((D == CT_U8 || D == CT_I8 || D == CT_I16) && std::is_floating_point<V>::value) {
        return (T)(int32_t)v;
    } else {
        return (T)v;
    }
}

template <int D>
__host__ __device__ __forceinline__ typename CtCudaType<D>::Acc ct_load(const char *p)
{
    return ct_widen<D>(*(const typename CtCudaType<D>::T *)p);
}
template <int D, typename V>
__host__ __device__ __forceinline__ void ct_store(char *p, V v)
{
    *(typename CtCudaType<D>::T *)p = ct_narrow<D>(v);
}

/* --- fast division ---------------------------------------------------------------------------
 * n / d for 0 <= n < 2^31 and 1 <= d < 2^31 with a multiply-high and a shift (the
 * round-up method: magic = floor(2^32 (2^s - d) / d) + 1 with s = ceil(log2 d)). */
struct CtDivider32 {
    uint32_t divisor;
    uint32_t magic;
    uint32_t shift;

    __host__ void init(uint32_t d)
    {
        divisor = d;
        shift = 0;
        while (shift < 32 && ((uint64_t)1 << shift) < d) {
            shift++;
        }
        uint64_t m = ((((uint64_t)1 << shift) - d) << 32) / d + 1;
        magic = (uint32_t)m;
    }
    __host__ __device__ __forceinline__ uint32_t div(uint32_t n) const
    {
#ifdef __CUDA_ARCH__
        uint32_t t = __umulhi(n, magic);
#else
        uint32_t t = (uint32_t)(((uint64_t)n * magic) >> 32);
#endif
        return (t + n) >> shift;
    }
};

/* --- launch helpers --------------------------------------------------------------------------- */
static inline unsigned int ct_cuda_blocks(int64_t work, int64_t per_block)
{
    int64_t b = (work + per_block - 1) / per_block;
    return (unsigned int)(b < 1 ? 1 : b);
}

#endif /* CTORCH_CUDA_COMMON_CUH */
