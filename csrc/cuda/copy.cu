/* copy.cu: moving bytes and casting copies on the GPU.
 *
 * - ct_cuda_memcpy / ct_cuda_memset: host<->device and device<->device byte copies on the
 *   current stream. Blocking copies synchronise the stream; non-blocking ones return at once,
 *   and when the host side is a pinned block the block is kept from reuse until the copy ends.
 * - ct_cuda_copy: the CUDA entry of CtElementwiseKernels.copy, out = in cast between any two
 *   dtypes over a CtIter (strided and broadcast operands read in place). Three paths:
 *   same dtype and both contiguous: cudaMemcpyAsync; different dtypes, both contiguous and
 *   aligned: a vectorised kernel (16-byte loads or stores per thread, 64-bit indices); anything
 *   else: a strided kernel over offsets.cuh's calculator (32-bit magic-number division, the
 *   iteration space cut into pieces of fewer than 2^31 elements, byte offsets 64-bit), so every
 *   size works.
 * The element conversions are ct_load/ct_store of common.cuh: the same C casts as the CPU's
 * cast loops (copy.c), with the 16-bit floats converted as dtype.h does. */
#include "copy.cuh"
#include "offsets.cuh"
#include <array>
#include <utility>

namespace {

constexpr int kThreads = 256;

template <typename T, int N>
struct alignas(sizeof(T) * N) CtVec {
    T v[N];
};

/* --- per-thread bodies (host-callable: tests/cuda_host runs them without a GPU) ------------ */
/* Thread t of the contiguous kernel converts elements [t*VEC, t*VEC + VEC) with one vector load
 * and one vector store; the last n % VEC elements are done one by one by threads 0..VEC-1. */
template <int DST, int SRC, int VEC>
__host__ __device__ __forceinline__ void cast_contiguous_thread(char *dst, const char *src, int64_t n, int64_t t)
{
    typedef typename CtCudaType<DST>::T TD;
    typedef typename CtCudaType<SRC>::T TS;
    int64_t nvec = n / VEC;
    if (t < nvec) {
        CtVec<TS, VEC> in = ((const CtVec<TS, VEC> *)src)[t];
        CtVec<TD, VEC> out;
CT_UNROLL
        for (int k = 0; k < VEC; k++) {
            out.v[k] = ct_narrow<DST>(ct_widen<SRC>(in.v[k]));
        }
        ((CtVec<TD, VEC> *)dst)[t] = out;
    }
    int64_t tail = nvec * VEC + t;
    if (t < VEC && tail < n) {
        ((TD *)dst)[tail] = ct_narrow<DST>(ct_widen<SRC>(((const TS *)src)[tail]));
    }
}

template <int DST, int SRC>
__host__ __device__ __forceinline__ void cast_strided_element(char *dst, const char *src, const CtOffsets<2> &off,
                                                              uint32_t i)
{
    int64_t o[2];
    off.get(i, o);
    ct_store<DST>(dst + o[0], ct_load<SRC>(src + o[1]));
}

/* Same-dtype strided copies move bits (NaN payloads included), one kernel per element size. */
template <typename U>
__host__ __device__ __forceinline__ void copy_bits_element(char *dst, const char *src, const CtOffsets<2> &off,
                                                           uint32_t i)
{
    int64_t o[2];
    off.get(i, o);
    *(U *)(dst + o[0]) = *(const U *)(src + o[1]);
}

/* --- kernels ---------------------------------------------------------------------------------- */
template <int DST, int SRC, int VEC>
__global__ void cast_contiguous_kernel(char *dst, const char *src, int64_t n)
{
    cast_contiguous_thread<DST, SRC, VEC>(dst, src, n, (int64_t)blockIdx.x * blockDim.x + threadIdx.x);
}

template <int DST, int SRC>
__global__ void cast_strided_kernel(char *dst, const char *src, uint32_t n, CtOffsets<2> off)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        cast_strided_element<DST, SRC>(dst, src, off, i);
    }
}

template <typename U>
__global__ void copy_bits_kernel(char *dst, const char *src, uint32_t n, CtOffsets<2> off)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        copy_bits_element<U>(dst, src, off, i);
    }
}

template <size_t N>
struct UintOfSize;
template <>
struct UintOfSize<1> {
    typedef uint8_t T;
};
template <>
struct UintOfSize<2> {
    typedef uint16_t T;
};
template <>
struct UintOfSize<4> {
    typedef uint32_t T;
};
template <>
struct UintOfSize<8> {
    typedef uint64_t T;
};

typedef void (*StridedKernel)(char *, const char *, uint32_t, CtOffsets<2>);

/* Launches kernel over it, in pieces of fewer than 2^31 elements. */
int launch_strided(const CtIter *it, StridedKernel kernel, cudaStream_t stream)
{
    return ct_for_each_piece<2>(it, [&](const CtPiece<2> &p) -> int {
        kernel<<<ct_cuda_blocks(p.numel, kThreads), kThreads, 0, stream>>>(p.data[0], p.data[1], (uint32_t)p.numel,
                                                                          p.offsets());
        CT_CUDA_CHECK_LAUNCH();
        return CT_CUDA_OK;
    });
}

bool aligned(const void *p, size_t alignment) { return (uintptr_t)p % alignment == 0; }

/* Elements per thread of the vectorised kernel: 16 bytes of the wider side. */
template <int DST, int SRC>
constexpr int vec_size()
{
    return (int)(16 / (sizeof(typename CtCudaType<DST>::T) > sizeof(typename CtCudaType<SRC>::T)
                           ? sizeof(typename CtCudaType<DST>::T)
                           : sizeof(typename CtCudaType<SRC>::T)));
}

/* --- dispatch -------------------------------------------------------------------------------- */
template <int DST, int SRC>
int launch_cast(const CtIter *it, cudaStream_t stream)
{
    typedef typename CtCudaType<DST>::T TD;
    typedef typename CtCudaType<SRC>::T TS;
    const int64_t n = it->numel;
    char *dst = it->data[0];
    const char *src = it->data[1];
    bool contiguous = it->ndim == 1 && it->strides[0][0] == (int64_t)sizeof(TD) &&
                      it->strides[0][1] == (int64_t)sizeof(TS);
    if constexpr (DST == SRC) {
        if (contiguous) {
            CT_CUDA_CHECK(cudaMemcpyAsync(dst, src, (size_t)n * sizeof(TD), cudaMemcpyDeviceToDevice, stream));
            return CT_CUDA_OK;
        }
        return launch_strided(it, copy_bits_kernel<typename UintOfSize<sizeof(TD)>::T>, stream);
    } else {
        constexpr int VEC = vec_size<DST, SRC>();
        if (contiguous && aligned(dst, VEC * sizeof(TD)) && aligned(src, VEC * sizeof(TS))) {
            cast_contiguous_kernel<DST, SRC, VEC>
                <<<ct_cuda_blocks(n / VEC, kThreads), kThreads, 0, stream>>>(dst, src, n);
            CT_CUDA_CHECK_LAUNCH();
            return CT_CUDA_OK;
        }
        return launch_strided(it, cast_strided_kernel<DST, SRC>, stream);
    }
}

typedef int (*CastLauncher)(const CtIter *, cudaStream_t);
typedef std::array<CastLauncher, CT_NUM_DTYPES> CastRow;

template <int DST, int... SRC>
constexpr CastRow cast_row(std::integer_sequence<int, SRC...>)
{
    return CastRow{{&launch_cast<DST, SRC>...}};
}

template <int... DST>
constexpr std::array<CastRow, CT_NUM_DTYPES> cast_table(std::integer_sequence<int, DST...>)
{
    return std::array<CastRow, CT_NUM_DTYPES>{{cast_row<DST>(std::make_integer_sequence<int, CT_NUM_DTYPES>())...}};
}

/* [dst dtype][src dtype] */
const std::array<CastRow, CT_NUM_DTYPES> kCastTable = cast_table(std::make_integer_sequence<int, CT_NUM_DTYPES>());

} /* namespace */

int ct_cuda_copy(const CtIter *it)
{
    if (it->nops != 2) {
        ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "copy expects 2 operands, got %d", it->nops);
        return ct_cuda_raise(CT_CUDA_RUNTIME_ERROR);
    }
    if (it->numel == 0) {
        return 0;
    }
    int device = it->device.index;
    int status = ct_cuda_device_guard(device);
    if (status == CT_CUDA_OK) {
        status = kCastTable[it->dtypes[0]][it->dtypes[1]](it, ct_cuda_stream(device));
    }
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}

int ct_cuda_memcpy(void *dst, const void *src, size_t nbytes, int kind, int device, int non_blocking)
{
    if (nbytes == 0) {
        return CT_CUDA_OK;
    }
    cudaMemcpyKind k = kind == CT_CUDA_H2D   ? cudaMemcpyHostToDevice
                       : kind == CT_CUDA_D2H ? cudaMemcpyDeviceToHost
                                             : cudaMemcpyDeviceToDevice;
    if (kind != CT_CUDA_D2D && !non_blocking) {
        CT_CUDA_TRY(ct_cuda_sync_debug_check());
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaStream_t stream = ct_cuda_stream(device);
    CT_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, k, stream));
    if (kind == CT_CUDA_D2D) {
        return CT_CUDA_OK; /* stream-ordered like every kernel */
    }
    if (!non_blocking) {
        CT_CUDA_CHECK(cudaStreamSynchronize(stream));
        return CT_CUDA_OK;
    }
    /* Pageable memory made the call synchronous already; pinned memory did not. */
    return ct_cuda_host_record_use(kind == CT_CUDA_H2D ? src : dst, device, stream);
}

/* Peer access is asked for once per ordered pair of devices; where it cannot be had
 * cudaMemcpyPeerAsync still works (the driver stages through host memory). */
static signed char peer_tried[CT_CUDA_MAX_DEVICES][CT_CUDA_MAX_DEVICES];

static void enable_peer_access(int device, int peer)
{
    if (device < 0 || peer < 0 || device >= CT_CUDA_MAX_DEVICES || peer >= CT_CUDA_MAX_DEVICES ||
        peer_tried[device][peer]) {
        return;
    }
    peer_tried[device][peer] = 1;
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, device, peer) == cudaSuccess && can) {
        cudaError_t err = cudaDeviceEnablePeerAccess(peer, 0); /* device is current */
        (void)err; /* already enabled, or refused: both leave the copy working */
    }
    (void)cudaGetLastError();
}

/* An event recorded on stream (of the current device) that other_stream (on other_device) waits
 * for; the event is destroyed at once (CUDA keeps it until the wait is resolved). */
static int stream_wait_stream(cudaStream_t other_stream, int other_device, cudaStream_t stream, int device)
{
    cudaEvent_t e;
    CT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    cudaError_t err = cudaEventRecord(e, stream);
    if (err == cudaSuccess) {
        int st = ct_cuda_device_guard(other_device);
        if (st != CT_CUDA_OK) {
            (void)cudaEventDestroy(e);
            return st;
        }
        err = cudaStreamWaitEvent(other_stream, e, 0);
    }
    cudaError_t derr = cudaEventDestroy(e);
    CT_CUDA_CHECK(err);
    CT_CUDA_CHECK(derr);
    return ct_cuda_device_guard(device);
}

int ct_cuda_memcpy_peer(void *dst, int dst_device, const void *src, int src_device, size_t nbytes)
{
    if (nbytes == 0) {
        return CT_CUDA_OK;
    }
    if (dst_device == src_device) {
        return ct_cuda_memcpy(dst, src, nbytes, CT_CUDA_D2D, dst_device, 0);
    }
    cudaStream_t src_stream = ct_cuda_stream(src_device), dst_stream = ct_cuda_stream(dst_device);
    /* 1. the source's stream waits for the work queued on the destination's (earlier uses of dst) */
    CT_CUDA_TRY(ct_cuda_device_guard(dst_device));
    CT_CUDA_TRY(stream_wait_stream(src_stream, src_device, dst_stream, dst_device));
    /* 2. the copy, on the source device's current stream (now current) */
    CT_CUDA_TRY(ct_cuda_device_guard(src_device));
    enable_peer_access(src_device, dst_device);
    CT_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, nbytes, src_stream));
    /* 3. the destination's stream waits for the copy before any later work reads dst */
    CT_CUDA_TRY(stream_wait_stream(dst_stream, dst_device, src_stream, src_device));
    return ct_cuda_device_guard(dst_device);
}

int ct_cuda_memset(void *dst, int value, size_t nbytes, int device)
{
    if (nbytes == 0) {
        return CT_CUDA_OK;
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    CT_CUDA_CHECK(cudaMemsetAsync(dst, value, nbytes, ct_cuda_stream(device)));
    return CT_CUDA_OK;
}
