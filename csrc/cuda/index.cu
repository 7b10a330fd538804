/* index.cu: the index op family on the GPU, the CUDA side of struct CtIndexKernels (index.h).
 *
 * - index / index_put / index_offsets: one thread per element of the iteration space (a CtIter
 *   whose indexed operand is restrided, see index.h), offsets from offsets.cuh's calculator,
 *   spaces of 2^31 elements or more cut into pieces. An index out of range is never used: the
 *   element is skipped and the first bad index (operand, value) is recorded in a device flag
 *   that is copied back to the host, which raises IndexError / RuntimeError as on the CPU.
 * - index_put with accumulation (index_put_(accumulate=True), index_add_, scatter_add_,
 *   scatter(reduce=), scatter_reduce_, index_reduce_): deterministic, without atomics. Each
 *   element's destination becomes a sort key; a stable radix sort groups equal destinations with
 *   their elements in iteration order; one thread per group then adds (multiplies, takes the max
 *   or min of) its values in that order, rounding to the storage type after each step, with
 *   correctly rounded float operations that nvcc cannot contract: the same bits as the CPU's
 *   serial loop, every run.
 * - masked_fill: a strided select.
 * - count_nonzero / nonzero / masked_select: a two-pass compaction over tiles of 4096 elements
 *   (count per tile, exclusive scan, then each tile writes its selected elements in order), so
 *   outputs are in row-major order and identical to the CPU's. nonzero and masked_select learn
 *   their output size on the GPU; the tensor is then allocated through CtCudaHost.empty.
 * - triangle (tril/triu): a strided copy whose row and column come from two pseudo-operands of
 *   the offset calculator (stride 1 along the row / column dim, base 0).
 * - int_minmax: a block reduction with 64-bit integer atomics (exact, order-independent).
 *
 * Scratch memory comes from the caching allocator on the current stream; every kernel runs on
 * the current stream of the tensors' device; the only host waits are the ones the ops need
 * (the index flag, and the output size of a compaction). The per-element bodies are
 * __host__ __device__ so that tests/cuda_host/index_harness.cu can run them without a GPU. */
#include "allocator.cuh"
#include "index.cuh"
#include "offsets.cuh"
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <limits.h>
#include <vector>

namespace {

constexpr int kThreads = 256;
constexpr int kItems = 16;                 /* elements per thread in the compaction passes */
constexpr int kTile = kThreads * kItems;   /* elements per block in the compaction passes */
/* A status of ours (not a CtCudaStatus): the Python exception is set already (CtCudaHost.empty
 * failed), nothing more to raise. */
constexpr int kPythonError = -1000;

/* ct_dtype_info lives in _C, which the backend cannot see: the element sizes again. */
#define CT_ITEMSIZE_ROW(NAME, ctype, ...) sizeof(ctype),
constexpr size_t kItemSize[CT_NUM_DTYPES] = {CT_DTYPE_LIST(CT_ITEMSIZE_ROW)};
#undef CT_ITEMSIZE_ROW

/* --- tensors, read without calling into _C ------------------------------------------------- */
char *tensor_data(const CtTensorObject *t)
{
    return (char *)t->storage->data + t->offset * (int64_t)kItemSize[t->dtype];
}

int64_t tensor_numel(const CtTensorObject *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++) {
        n *= t->sizes[d];
    }
    return n;
}

int tensor_device(const CtTensorObject *t) { return t->storage->device.index; }

/* Device scratch memory from the caching allocator, given back when the object goes out of
 * scope. Safe while kernels still use it: a block is reused only on the stream it was
 * allocated on, after the work queued there before the free. */
struct Scratch {
    int device = 0;
    void *ptr = nullptr;
    Scratch() = default;
    Scratch(const Scratch &) = delete;
    Scratch &operator=(const Scratch &) = delete;
    ~Scratch()
    {
        if (ptr != nullptr) {
            (void)ct_cuda_caching_free(device, ptr);
        }
    }
    int alloc(int dev, size_t nbytes)
    {
        device = dev;
        return ct_cuda_caching_malloc(dev, nbytes > 0 ? nbytes : 1, &ptr);
    }
};

/* The operands' base pointers of one piece, as a kernel parameter. */
template <int N>
struct Ptrs {
    char *p[N];
};

template <int N>
Ptrs<N> ptrs_of(const CtPiece<N> &piece)
{
    Ptrs<N> d;
    for (int k = 0; k < N; k++) {
        d.p[k] = piece.data[k];
    }
    return d;
}

/* --- iterators built here (ct_iter_init is in _C) ------------------------------------------
 * Merges adjacent dims where every operand allows it (iter.c's rule) and drops size-1 dims;
 * never reorders, so the linear order stays the one the caller chose. */
void coalesce(CtIter *it)
{
    if (it->numel == 0) {
        it->ndim = 1;
        it->shape[0] = 0;
        return;
    }
    int k = 0;
    for (int d = 0; d < it->ndim; d++) {
        if (it->shape[d] == 1) {
            continue;
        }
        if (k > 0) {
            bool mergeable = true;
            for (int op = 0; op < it->nops; op++) {
                mergeable = mergeable && it->strides[d][op] == it->shape[k - 1] * it->strides[k - 1][op];
            }
            if (mergeable) {
                it->shape[k - 1] *= it->shape[d];
                continue;
            }
        }
        it->shape[k] = it->shape[d];
        for (int op = 0; op < it->nops; op++) {
            it->strides[k][op] = it->strides[d][op];
        }
        k++;
    }
    if (k == 0) { /* a single element */
        k = 1;
        it->shape[0] = 1;
        for (int op = 0; op < it->nops; op++) {
            it->strides[0][op] = 0;
        }
    }
    it->ndim = k;
}

/* An iterator over `ndim` logical dims of `sizes` in row-major order (iterator dim 0 = the last
 * logical dim); strides[op][d] are operand op's byte strides per logical dim. */
void iter_logical(CtIter *it, int device, int nops, int ndim, const int64_t *sizes, char *const *data,
                  const int64_t (*strides)[CT_MAX_DIMS], const CtDType *dtypes)
{
    memset(it, 0, sizeof(*it));
    it->nops = nops;
    it->ndim = ndim;
    it->numel = 1;
    it->device.type = CT_DEV_CUDA;
    it->device.index = device;
    for (int d = 0; d < ndim; d++) {
        it->shape[d] = sizes[ndim - 1 - d];
        it->numel *= sizes[ndim - 1 - d];
        for (int op = 0; op < nops; op++) {
            it->strides[d][op] = strides[op][ndim - 1 - d];
        }
    }
    for (int op = 0; op < nops; op++) {
        it->data[op] = data[op];
        it->dtypes[op] = dtypes[op];
    }
    coalesce(it);
}

/* The first `ndim` dims of each tensor of ts (all of ts[0]'s sizes there), row-major. */
void iter_of_tensors(CtIter *it, int nops, const CtTensorObject *const *ts, int ndim)
{
    char *data[CT_MAX_OPERANDS];
    int64_t strides[CT_MAX_OPERANDS][CT_MAX_DIMS];
    CtDType dtypes[CT_MAX_OPERANDS];
    for (int op = 0; op < nops; op++) {
        data[op] = tensor_data(ts[op]);
        dtypes[op] = ts[op]->dtype;
        for (int d = 0; d < ndim; d++) {
            strides[op][d] = ts[op]->strides[d] * (int64_t)kItemSize[ts[op]->dtype];
        }
    }
    iter_logical(it, tensor_device(ts[0]), nops, ndim, ts[0]->sizes, data, strides, dtypes);
}

/* All pieces of it (fewer than 2^31 elements each), in order. */
template <int N>
int pieces_of(const CtIter *it, std::vector<CtPiece<N>> *out)
{
    return ct_for_each_piece<N>(it, [&](const CtPiece<N> &p) -> int {
        out->push_back(p);
        return CT_CUDA_OK;
    });
}

/* --- the index flag ----------------------------------------------------------------------------
 * The first out-of-range index: which index operand (-1: none) and its value. Set on the device,
 * read by the host after the kernels. */
struct IndexFlag {
    int bad;
    int unused;
    long long value;
};

__host__ __device__ __forceinline__ void report_bad(IndexFlag *flag, int k, int64_t v)
{
#ifdef __CUDA_ARCH__
    if (atomicCAS(&flag->bad, -1, k) == -1) {
        flag->value = v;
    }
#else
    if (flag->bad == -1) {
        flag->bad = k;
        flag->value = v;
    }
#endif
}

/* A fresh flag (bad = -1) on the device. */
int flag_init(Scratch *flag, int device, cudaStream_t stream)
{
    CT_CUDA_TRY(flag->alloc(device, sizeof(IndexFlag)));
    CT_CUDA_CHECK(cudaMemsetAsync(flag->ptr, 0xff, sizeof(IndexFlag), stream)); /* bad = value = -1 */
    return CT_CUDA_OK;
}

/* Waits for the kernels and copies the flag into args. */
int flag_read(const Scratch &flag, cudaStream_t stream, CtIndexArgs *args)
{
    IndexFlag h;
    CT_CUDA_TRY(ct_cuda_sync_debug_check());
    CT_CUDA_CHECK(cudaMemcpyAsync(&h, flag.ptr, sizeof(h), cudaMemcpyDeviceToHost, stream));
    CT_CUDA_CHECK(cudaStreamSynchronize(stream));
    args->bad = h.bad;
    args->bad_value = h.bad < 0 ? 0 : (int64_t)h.value;
    return CT_CUDA_OK;
}

/* --- index operands ---------------------------------------------------------------------------- */
template <int NI>
struct IndexParams {
    int64_t sizes[NI];   /* index k must lie in [0, size) ([-size, size) with wrap) */
    int64_t strides[NI]; /* bytes moved per unit of index k */
    uint32_t is64;       /* bit k: index operand k is int64 (else int32) */
    bool wrap;
};

template <int NI>
IndexParams<NI> index_params(const CtIter *it, const CtIndexArgs *args, int first)
{
    IndexParams<NI> p;
    p.is64 = 0;
    for (int k = 0; k < NI; k++) {
        p.sizes[k] = args->sizes[k];
        p.strides[k] = args->strides[k];
        p.is64 |= (it->dtypes[first + k] == CT_I64 ? 1u : 0u) << k;
    }
    p.wrap = args->wrap;
    return p;
}

/* The byte offset the index operands FIRST.. select for an element whose operand offsets are
 * off; false (after recording the value) when one is out of range. The CPU's index_offset. */
template <int N, int FIRST>
__host__ __device__ __forceinline__ bool index_offset(const Ptrs<N> &d, const int64_t (&off)[N],
                                                      const IndexParams<N - FIRST> &p, IndexFlag *flag, int64_t *out)
{
    int64_t o = 0;
CT_UNROLL
    for (int k = 0; k < N - FIRST; k++) {
        const char *ip = d.p[FIRST + k] + off[FIRST + k];
        int64_t v = ((p.is64 >> k) & 1u) ? *(const int64_t *)ip : (int64_t)*(const int32_t *)ip;
        int64_t w = (v < 0 && p.wrap) ? v + p.sizes[k] : v;
        if ((uint64_t)w >= (uint64_t)p.sizes[k]) {
            report_bad(flag, k, v);
            return false;
        }
        o += w * p.strides[k];
    }
    *out = o;
    return true;
}

enum { kGather = 0, kPut = 1, kOffsets = 2 };

constexpr int first_index(int op) { return op == kOffsets ? 1 : 2; }

/* One element: gather out[i] = src[i + offset], put dst[i + offset] = values[i], or the offset
 * itself (int64). U moves the element's bits. */
template <int OP, typename U, int N>
__host__ __device__ __forceinline__ void index_element(const Ptrs<N> &d, const CtOffsets<N> &offs,
                                                       const IndexParams<N - first_index(OP)> &p, IndexFlag *flag,
                                                       uint32_t i)
{
    int64_t off[N];
    offs.get(i, off);
    int64_t o;
    if (!index_offset<N, first_index(OP)>(d, off, p, flag, &o)) {
        return;
    }
    if constexpr (OP == kGather) {
        *(U *)(d.p[0] + off[0]) = *(const U *)(d.p[1] + off[1] + o);
    } else if constexpr (OP == kPut) {
        *(U *)(d.p[0] + off[0] + o) = *(const U *)(d.p[1] + off[1]);
    } else {
        *(int64_t *)(d.p[0] + off[0]) = o;
    }
}

template <int OP, typename U, int N>
__global__ void index_kernel(Ptrs<N> d, uint32_t n, CtOffsets<N> offs, IndexParams<N - first_index(OP)> p,
                             IndexFlag *flag)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    index_element<OP, U, N>(d, offs, p, flag, i);
}

template <int OP, typename U, int N>
int launch_index(const CtIter *it, const CtIndexArgs *args, IndexFlag *flag, cudaStream_t stream)
{
    const IndexParams<N - first_index(OP)> p = index_params<N - first_index(OP)>(it, args, first_index(OP));
    return ct_for_each_piece<N>(it, [&](const CtPiece<N> &piece) -> int {
        index_kernel<OP, U, N><<<ct_cuda_blocks(piece.numel, kThreads), kThreads, 0, stream>>>(
            ptrs_of(piece), (uint32_t)piece.numel, piece.offsets(), p, flag);
        CT_CUDA_CHECK_LAUNCH();
        return CT_CUDA_OK;
    });
}

template <int OP, int N>
int launch_index_sized(const CtIter *it, const CtIndexArgs *args, IndexFlag *flag, cudaStream_t stream)
{
    if constexpr (OP == kOffsets) {
        return launch_index<OP, uint64_t, N>(it, args, flag, stream);
    } else {
        switch (kItemSize[it->dtypes[0]]) {
        case 1:
            return launch_index<OP, uint8_t, N>(it, args, flag, stream);
        case 2:
            return launch_index<OP, uint16_t, N>(it, args, flag, stream);
        case 4:
            return launch_index<OP, uint32_t, N>(it, args, flag, stream);
        default:
            return launch_index<OP, uint64_t, N>(it, args, flag, stream);
        }
    }
}

/* Dispatch on the operand count (the index count is nops - first). */
template <int OP>
int launch_index_any(const CtIter *it, const CtIndexArgs *args, IndexFlag *flag, cudaStream_t stream)
{
    switch (it->nops) {
    case 2:
        if constexpr (OP == kOffsets) {
            return launch_index_sized<OP, 2>(it, args, flag, stream);
        }
        break;
    case 3:
        return launch_index_sized<OP, 3>(it, args, flag, stream);
    case 4:
        return launch_index_sized<OP, 4>(it, args, flag, stream);
    case 5:
        return launch_index_sized<OP, 5>(it, args, flag, stream);
    default:
        break;
    }
    return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "index kernel: unsupported operand count %d", it->nops);
}

static_assert(CT_MAX_OPERANDS == 5, "index kernels are instantiated for 2..5 operands");

/* --- deterministic accumulation ---------------------------------------------------------------- */
/* a + b and a * b rounded once (no FMA contraction on the GPU; the host side is only used by the
 * harness); integers as C computes them (then narrowed by the caller, like the CPU's store). */
__host__ __device__ __forceinline__ float add_rn(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}
__host__ __device__ __forceinline__ float mul_rn(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
__host__ __device__ __forceinline__ double add_rn(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}
__host__ __device__ __forceinline__ double mul_rn(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
template <typename X, typename Y>
__host__ __device__ __forceinline__ auto add_rn(X a, Y b) -> decltype(a + b)
{
    return a + b;
}
template <typename X, typename Y>
__host__ __device__ __forceinline__ auto mul_rn(X a, Y b) -> decltype(a * b)
{
    return a * b;
}

/* a NaN test that is false for the integer accumulation types */
template <typename A>
__host__ __device__ __forceinline__ bool acc_isnan(A v)
{
    if constexpr (std::is_floating_point<A>::value) {
        return v != v;
    } else {
        return false;
    }
}

/* One accumulation step, as the CPU's put_add_/put_mul_/put_max_/put_min_ loops: cur (+)= alpha * v,
 * cur *= v, or cur = max/min(cur, v) (a NaN wins), in the accumulation type, stored back (rounded)
 * into the element type. */
template <int D, int OP>
__host__ __device__ __forceinline__ typename CtCudaType<D>::T accumulate_step(typename CtCudaType<D>::T cur,
                                                                              typename CtCudaType<D>::Acc v,
                                                                              typename CtCudaType<D>::Acc alpha)
{
    typename CtCudaType<D>::Acc a = ct_widen<D>(cur);
    if constexpr (OP == CT_REDUCE_ADD) {
        return ct_narrow<D>(add_rn(a, mul_rn(alpha, v)));
    } else if constexpr (OP == CT_REDUCE_MAX) {
        return ct_narrow<D>((v > a || acc_isnan(v)) ? v : a);
    } else if constexpr (OP == CT_REDUCE_MIN) {
        return ct_narrow<D>((v < a || acc_isnan(v)) ? v : a);
    } else if constexpr (D == CT_BOOL) {
        return ct_narrow<D>(a && v);
    } else {
        return ct_narrow<D>(mul_rn(a, v));
    }
}

/* Pass 1: element i's destination as a sort key ((offset - lo) >> shift, or `sentinel` when an
 * index is out of range) and its position i. */
template <int N, typename K>
__host__ __device__ __forceinline__ void accumulate_key_element(const Ptrs<N> &d, const CtOffsets<N> &offs,
                                                                const IndexParams<N - 2> &p, IndexFlag *flag,
                                                                int64_t lo, int shift, K sentinel, K *keys,
                                                                uint32_t *order, uint32_t i)
{
    int64_t off[N];
    offs.get(i, off);
    int64_t o;
    bool ok = index_offset<N, 2>(d, off, p, flag, &o);
    keys[i] = ok ? (K)((uint64_t)(off[0] + o - lo) >> shift) : sentinel;
    order[i] = i;
}

template <int N, typename K>
__global__ void accumulate_keys_kernel(Ptrs<N> d, uint32_t n, CtOffsets<N> offs, IndexParams<N - 2> p,
                                       IndexFlag *flag, int64_t lo, int shift, K sentinel, K *keys, uint32_t *order)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    accumulate_key_element<N, K>(d, offs, p, flag, lo, shift, sentinel, keys, order, i);
}

/* Pass 3 (after the stable sort): the first thread of each run of equal keys combines the run's
 * values into its destination, in iteration order. */
template <int D, int OP, typename K>
__host__ __device__ __forceinline__ void accumulate_run(const K *keys, const uint32_t *order, uint32_t n, K sentinel,
                                                        char *dst0, int shift, const char *vals,
                                                        const CtOffsets<1> &voff, typename CtCudaType<D>::Acc alpha,
                                                        uint32_t j)
{
    typedef typename CtCudaType<D>::T T;
    K key = keys[j];
    if (key == sentinel || (j > 0 && keys[j - 1] == key)) {
        return;
    }
    T *dst = (T *)(dst0 + (int64_t)((uint64_t)key << shift));
    T cur = *dst;
    for (uint32_t m = j; m < n && keys[m] == key; m++) {
        int64_t o[1];
        voff.get(order[m], o);
        cur = accumulate_step<D, OP>(cur, ct_load<D>(vals + o[0]), alpha);
    }
    *dst = cur;
}

template <int D, int OP, typename K>
__global__ void accumulate_runs_kernel(const K *keys, const uint32_t *order, uint32_t n, K sentinel, char *dst0,
                                       int shift, const char *vals, CtOffsets<1> voff,
                                       typename CtCudaType<D>::Acc alpha)
{
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) {
        return;
    }
    accumulate_run<D, OP, K>(keys, order, n, sentinel, dst0, shift, vals, voff, alpha, j);
}

/* The bytes a piece's destinations can span: [lo, hi] relative to its operand 0, from the
 * destination's strides and each index's range. */
template <int N>
void destination_range(const CtPiece<N> &piece, const IndexParams<N - 2> &p, __int128 *lo, __int128 *hi)
{
    *lo = *hi = 0;
    for (int d = 0; d < piece.ndim; d++) {
        __int128 s = (__int128)piece.strides[d][0] * (piece.shape[d] - 1);
        *(s > 0 ? hi : lo) += s;
    }
    for (int k = 0; k < N - 2; k++) {
        if (p.sizes[k] <= 0) {
            continue; /* every value is out of range: no destination */
        }
        __int128 s = (__int128)p.strides[k] * (p.sizes[k] - 1);
        *(s > 0 ? hi : lo) += s;
    }
}

/* operand 1's offsets alone, for the runs pass (which knows an element only by its position). */
template <int N>
CtOffsets<1> values_offsets(const CtPiece<N> &piece)
{
    CtPiece<1> v;
    v.ndim = piece.ndim;
    v.numel = piece.numel;
    for (int d = 0; d < CT_MAX_DIMS; d++) {
        v.shape[d] = piece.shape[d];
        v.strides[d][0] = piece.strides[d][1];
    }
    v.data[0] = piece.data[1];
    return v.offsets();
}

template <int D, typename K>
int launch_runs(const CtIndexArgs *args, const K *keys, const uint32_t *order, uint32_t n, K sentinel, char *dst0,
                int shift, const char *vals, const CtOffsets<1> &voff, cudaStream_t stream)
{
    typedef typename CtCudaType<D>::Acc A;
    /* alpha converted as the CPU's put_add_ does */
    A alpha = args->alpha.kind == CT_KIND_FLOAT ? (A)args->alpha.v.d : (A)ct_scalar_to_int(&args->alpha);
    switch (args->reduce) {
#define CT_RUNS_OP(OP)                                                                               \
    case OP:                                                                                         \
        accumulate_runs_kernel<D, OP, K><<<ct_cuda_blocks(n, kThreads), kThreads, 0, stream>>>(     \
            keys, order, n, sentinel, dst0, shift, vals, voff, alpha);                               \
        break;
        CT_RUNS_OP(CT_REDUCE_ADD)
        CT_RUNS_OP(CT_REDUCE_MUL)
        CT_RUNS_OP(CT_REDUCE_MAX)
        CT_RUNS_OP(CT_REDUCE_MIN)
#undef CT_RUNS_OP
    default:
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "index_put: unsupported reduction %d", (int)args->reduce);
    }
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

template <int N, typename K>
int accumulate_piece_keyed(const CtPiece<N> &piece, CtDType dtype, const IndexParams<N - 2> &p,
                           const CtIndexArgs *args, IndexFlag *flag, int64_t lo, int shift, K sentinel, int end_bit,
                           int device, cudaStream_t stream)
{
    const uint32_t n = (uint32_t)piece.numel;
    Scratch keys_in, keys_out, order_in, order_out, temp;
    CT_CUDA_TRY(keys_in.alloc(device, sizeof(K) * n));
    CT_CUDA_TRY(keys_out.alloc(device, sizeof(K) * n));
    CT_CUDA_TRY(order_in.alloc(device, sizeof(uint32_t) * n));
    CT_CUDA_TRY(order_out.alloc(device, sizeof(uint32_t) * n));
    K *ki = (K *)keys_in.ptr, *ko = (K *)keys_out.ptr;
    uint32_t *oi = (uint32_t *)order_in.ptr, *oo = (uint32_t *)order_out.ptr;
    accumulate_keys_kernel<N, K><<<ct_cuda_blocks(n, kThreads), kThreads, 0, stream>>>(
        ptrs_of(piece), n, piece.offsets(), p, flag, lo, shift, sentinel, ki, oi);
    CT_CUDA_CHECK_LAUNCH();
    size_t temp_bytes = 0;
    CT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, ki, ko, oi, oo, (int)n, 0, end_bit, stream));
    CT_CUDA_TRY(temp.alloc(device, temp_bytes));
    CT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.ptr, temp_bytes, ki, ko, oi, oo, (int)n, 0, end_bit, stream));
    CtOffsets<1> voff = values_offsets(piece);
    char *dst0 = piece.data[0] + lo;
    switch (dtype) {
#define CT_RUNS_CASE(NAME, ...) \
    case CT_##NAME:             \
        return launch_runs<CT_##NAME, K>(args, ko, oo, n, sentinel, dst0, shift, piece.data[1], voff, stream);
        CT_DTYPE_LIST(CT_RUNS_CASE)
#undef CT_RUNS_CASE
    default:
        break;
    }
    return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "index_put: unsupported dtype %d", (int)dtype);
}

int bit_width(uint64_t v)
{
    int b = 0;
    while (b < 64 && (v >> b) != 0) {
        b++;
    }
    return b;
}

/* How a piece's destinations become sort keys: key = (offset - lo) >> shift in [0, sentinel),
 * sentinel for out-of-range elements; 32-bit keys when they fit; end_bit bits to sort. */
struct KeyPlan {
    int64_t lo;
    uint64_t sentinel;
    bool narrow;
    int end_bit;
};

template <int N>
KeyPlan key_plan(const CtPiece<N> &piece, const IndexParams<N - 2> &p, int shift)
{
    __int128 lo, hi;
    destination_range<N>(piece, p, &lo, &hi);
    __int128 last = (hi - lo) >> shift; /* the largest key */
    KeyPlan k;
    k.lo = (int64_t)lo;
    /* Only precomputed offsets (index.h's folding) make the range wider than 2^64; real
     * destinations are far below that, so a clamped sentinel stays above every key. */
    k.sentinel = last + 1 >= (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)(last + 1);
    k.narrow = k.sentinel <= UINT32_MAX;
    k.end_bit = bit_width(k.sentinel);
    return k;
}

/* Pieces are done one after the other, so that a destination hit from two pieces gets its
 * values in iteration order too. */
template <int N>
int accumulate_index_put(const CtIter *it, const CtIndexArgs *args, IndexFlag *flag, int device, cudaStream_t stream)
{
    const IndexParams<N - 2> p = index_params<N - 2>(it, args, 2);
    const int64_t isz = (int64_t)kItemSize[it->dtypes[0]];
    const int shift = isz == 1 ? 0 : isz == 2 ? 1 : isz == 4 ? 2 : 3;
    const CtDType dtype = it->dtypes[0];
    return ct_for_each_piece<N>(it, [&](const CtPiece<N> &piece) -> int {
        KeyPlan k = key_plan<N>(piece, p, shift);
        if (k.narrow) {
            return accumulate_piece_keyed<N, uint32_t>(piece, dtype, p, args, flag, k.lo, shift,
                                                       (uint32_t)k.sentinel, k.end_bit, device, stream);
        }
        return accumulate_piece_keyed<N, uint64_t>(piece, dtype, p, args, flag, k.lo, shift, k.sentinel, k.end_bit,
                                                   device, stream);
    });
}

int accumulate_any(const CtIter *it, const CtIndexArgs *args, IndexFlag *flag, int device, cudaStream_t stream)
{
    switch (it->nops) {
    case 3:
        return accumulate_index_put<3>(it, args, flag, device, stream);
    case 4:
        return accumulate_index_put<4>(it, args, flag, device, stream);
    case 5:
        return accumulate_index_put<5>(it, args, flag, device, stream);
    default:
        break;
    }
    return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "index_put: unsupported operand count %d", it->nops);
}

/* The body of the three CtIter entries. */
int run_index(int op, const CtIter *it, CtIndexArgs *args)
{
    args->bad = -1;
    args->bad_value = 0;
    if (args->nindex != it->nops - first_index(op) || args->nindex < 1) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "index kernel: %d index operands for %d operands",
                                 args->nindex, it->nops);
    }
    if (it->numel == 0) {
        return CT_CUDA_OK;
    }
    const int device = it->device.index;
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaStream_t stream = ct_cuda_stream(device);
    Scratch flag;
    CT_CUDA_TRY(flag_init(&flag, device, stream));
    IndexFlag *f = (IndexFlag *)flag.ptr;
    if (op == kGather) {
        CT_CUDA_TRY(launch_index_any<kGather>(it, args, f, stream));
    } else if (op == kOffsets) {
        CT_CUDA_TRY(launch_index_any<kOffsets>(it, args, f, stream));
    } else if (args->reduce == CT_REDUCE_NONE) {
        CT_CUDA_TRY(launch_index_any<kPut>(it, args, f, stream));
    } else {
        CT_CUDA_TRY(accumulate_any(it, args, f, device, stream));
    }
    return flag_read(flag, stream, args);
}

/* --- masked_fill -------------------------------------------------------------------------------- */
template <typename U>
__host__ __device__ __forceinline__ void masked_fill_element(const Ptrs<3> &d, const CtOffsets<3> &offs, uint32_t i)
{
    int64_t off[3];
    offs.get(i, off);
    if (*(const uint8_t *)(d.p[1] + off[1]) != 0) {
        *(U *)(d.p[0] + off[0]) = *(const U *)(d.p[2] + off[2]);
    }
}

template <typename U>
__global__ void masked_fill_kernel(Ptrs<3> d, uint32_t n, CtOffsets<3> offs)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    masked_fill_element<U>(d, offs, i);
}

template <typename U>
int launch_masked_fill(const CtIter *it, cudaStream_t stream)
{
    return ct_for_each_piece<3>(it, [&](const CtPiece<3> &piece) -> int {
        masked_fill_kernel<U><<<ct_cuda_blocks(piece.numel, kThreads), kThreads, 0, stream>>>(
            ptrs_of(piece), (uint32_t)piece.numel, piece.offsets());
        CT_CUDA_CHECK_LAUNCH();
        return CT_CUDA_OK;
    });
}

int run_masked_fill(const CtIter *it)
{
    if (it->nops != 3) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "masked_fill expects 3 operands, got %d", it->nops);
    }
    if (it->numel == 0) {
        return CT_CUDA_OK;
    }
    CT_CUDA_TRY(ct_cuda_device_guard(it->device.index));
    cudaStream_t stream = ct_cuda_stream(it->device.index);
    switch (kItemSize[it->dtypes[0]]) {
    case 1:
        return launch_masked_fill<uint8_t>(it, stream);
    case 2:
        return launch_masked_fill<uint16_t>(it, stream);
    case 4:
        return launch_masked_fill<uint32_t>(it, stream);
    default:
        return launch_masked_fill<uint64_t>(it, stream);
    }
}

/* --- compaction: count_nonzero, nonzero, masked_select ------------------------------------------
 * Thread t of tile b owns elements b*kTile + t*kItems + [0, kItems) of its piece. */

/* Is operand 0 (dtype D) of element i nonzero? (NaN is.) */
template <int D, int N>
struct NonzeroFlag {
    __host__ __device__ __forceinline__ bool operator()(const Ptrs<N> &d, const CtOffsets<N> &offs, uint32_t i) const
    {
        int64_t off[N];
        offs.get(i, off);
        return ct_load<D>(d.p[0] + off[0]) != 0;
    }
};

template <int N, typename Flag>
__global__ void compact_count_kernel(Ptrs<N> d, uint32_t n, CtOffsets<N> offs, Flag flag, int64_t *counts)
{
    typedef cub::BlockReduce<int, kThreads> Reduce;
    __shared__ typename Reduce::TempStorage tmp;
    uint32_t base = blockIdx.x * (uint32_t)kTile + threadIdx.x * (uint32_t)kItems;
    int c = 0;
    for (int j = 0; j < kItems; j++) {
        uint32_t i = base + (uint32_t)j;
        if (i < n && flag(d, offs, i)) {
            c++;
        }
    }
    int total = Reduce(tmp).Sum(c);
    if (threadIdx.x == 0) {
        counts[blockIdx.x] = total;
    }
}

/* Each tile writes its selected elements at positions offsets[tile] + (rank in the tile):
 * sink(pos, d, offs, i, linear) with linear = the element's row-major index in the whole space. */
template <int N, typename Flag, typename Sink>
__global__ void compact_write_kernel(Ptrs<N> d, uint32_t n, CtOffsets<N> offs, Flag flag, const int64_t *offsets,
                                     int64_t piece_base, Sink sink)
{
    typedef cub::BlockScan<int, kThreads> Scan;
    __shared__ typename Scan::TempStorage tmp;
    uint32_t base = blockIdx.x * (uint32_t)kTile + threadIdx.x * (uint32_t)kItems;
    uint32_t bits = 0;
    int c = 0;
    for (int j = 0; j < kItems; j++) {
        uint32_t i = base + (uint32_t)j;
        if (i < n && flag(d, offs, i)) {
            bits |= 1u << j;
            c++;
        }
    }
    int rank;
    Scan(tmp).ExclusiveSum(c, rank);
    int64_t pos = offsets[blockIdx.x] + rank;
    for (int j = 0; j < kItems; j++) {
        if ((bits >> j) & 1u) {
            sink(pos++, d, offs, base + (uint32_t)j, piece_base + (int64_t)(base + (uint32_t)j));
        }
    }
}

/* The state between the two passes. */
template <int N>
struct Compaction {
    std::vector<CtPiece<N>> pieces;
    std::vector<int64_t> first_tile;  /* per piece */
    std::vector<int64_t> first_elem;  /* per piece: row-major index of its element 0 */
    int64_t ntiles = 0;
    int64_t total = 0;
    Scratch offsets; /* (ntiles + 1,) exclusive prefix sums of the tile counts */
};

/* Pass 1: counts the flagged elements of it, leaves each tile's output position in c->offsets
 * and the total in c->total (waits for the GPU: the caller sizes its output with it). */
template <int N, typename Flag>
int compaction_count(const CtIter *it, const Flag &flag, int device, cudaStream_t stream, Compaction<N> *c)
{
    CT_CUDA_TRY(pieces_of<N>(it, &c->pieces));
    int64_t elems = 0;
    for (const CtPiece<N> &p : c->pieces) {
        c->first_tile.push_back(c->ntiles);
        c->first_elem.push_back(elems);
        c->ntiles += (p.numel + kTile - 1) / kTile;
        elems += p.numel;
    }
    if (c->ntiles == 0) {
        return CT_CUDA_OK;
    }
    if (c->ntiles + 1 > INT_MAX) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "compaction of %lld elements is too large",
                                 (long long)elems);
    }
    const int nscan = (int)(c->ntiles + 1);
    Scratch counts, temp;
    CT_CUDA_TRY(counts.alloc(device, sizeof(int64_t) * nscan));
    CT_CUDA_TRY(c->offsets.alloc(device, sizeof(int64_t) * nscan));
    int64_t *cnt = (int64_t *)counts.ptr, *offsets = (int64_t *)c->offsets.ptr;
    CT_CUDA_CHECK(cudaMemsetAsync(cnt + c->ntiles, 0, sizeof(int64_t), stream));
    for (size_t k = 0; k < c->pieces.size(); k++) {
        const CtPiece<N> &p = c->pieces[k];
        compact_count_kernel<N, Flag><<<ct_cuda_blocks(p.numel, kTile), kThreads, 0, stream>>>(
            ptrs_of(p), (uint32_t)p.numel, p.offsets(), flag, cnt + c->first_tile[k]);
        CT_CUDA_CHECK_LAUNCH();
    }
    size_t temp_bytes = 0;
    CT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, cnt, offsets, nscan, stream));
    CT_CUDA_TRY(temp.alloc(device, temp_bytes));
    CT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.ptr, temp_bytes, cnt, offsets, nscan, stream));
    int64_t total = 0;
    CT_CUDA_TRY(ct_cuda_sync_debug_check());
    CT_CUDA_CHECK(cudaMemcpyAsync(&total, offsets + c->ntiles, sizeof(total), cudaMemcpyDeviceToHost, stream));
    CT_CUDA_CHECK(cudaStreamSynchronize(stream));
    c->total = total;
    return CT_CUDA_OK;
}

/* Pass 2: every selected element goes to sink, in row-major order. */
template <int N, typename Flag, typename Sink>
int compaction_write(const Compaction<N> &c, const Flag &flag, const Sink &sink, cudaStream_t stream)
{
    for (size_t k = 0; k < c.pieces.size(); k++) {
        const CtPiece<N> &p = c.pieces[k];
        compact_write_kernel<N, Flag, Sink><<<ct_cuda_blocks(p.numel, kTile), kThreads, 0, stream>>>(
            ptrs_of(p), (uint32_t)p.numel, p.offsets(), flag, (const int64_t *)c.offsets.ptr + c.first_tile[k],
            c.first_elem[k], sink);
        CT_CUDA_CHECK_LAUNCH();
    }
    return CT_CUDA_OK;
}

/* Row-major coordinates of a linear index (sizes innermost first); 32-bit magic division when
 * the space has fewer than 2^31 elements. */
struct LinearCoords {
    int ndim;
    bool narrow;
    int64_t rsizes[CT_MAX_DIMS];
    CtDivider32 div[CT_MAX_DIMS];

    void init(int nd, const int64_t *sizes, int64_t numel)
    {
        ndim = nd;
        narrow = numel <= CT_MAX_INDEX32;
        for (int k = 0; k < CT_MAX_DIMS; k++) {
            rsizes[k] = k < nd ? sizes[nd - 1 - k] : 1;
            div[k].init(narrow && rsizes[k] > 0 ? (uint32_t)rsizes[k] : 1u);
        }
    }
    __host__ __device__ __forceinline__ void write(int64_t linear, int64_t *out) const
    {
CT_UNROLL
        for (int k = 0; k < CT_MAX_DIMS; k++) {
            if (k == ndim) {
                break;
            }
            int64_t q;
            if (narrow) {
                q = div[k].div((uint32_t)linear);
            } else {
                q = linear / rsizes[k];
            }
            out[ndim - 1 - k] = linear - q * rsizes[k];
            linear = q;
        }
    }
};

/* nonzero: the coordinates of each selected element, a row of ndim int64. */
struct NonzeroSink {
    int64_t *out;
    LinearCoords coords;
    template <int N>
    __host__ __device__ __forceinline__ void operator()(int64_t pos, const Ptrs<N> &, const CtOffsets<N> &, uint32_t,
                                                        int64_t linear) const
    {
        coords.write(linear, out + pos * coords.ndim);
    }
};

/* masked_select with one-element rows: the element itself (operand 1). */
template <typename U>
struct SelectElementSink {
    U *out;
    template <int N>
    __host__ __device__ __forceinline__ void operator()(int64_t pos, const Ptrs<N> &d, const CtOffsets<N> &offs,
                                                        uint32_t i, int64_t) const
    {
        int64_t off[N];
        offs.get(i, off);
        out[pos] = *(const U *)(d.p[1] + off[1]);
    }
};

/* masked_select with longer rows: the byte offset of the row in src (a gather follows). */
struct RowOffsetSink {
    int64_t *rows;
    const char *src;
    template <int N>
    __host__ __device__ __forceinline__ void operator()(int64_t pos, const Ptrs<N> &d, const CtOffsets<N> &offs,
                                                        uint32_t i, int64_t) const
    {
        int64_t off[N];
        offs.get(i, off);
        rows[pos] = (int64_t)((d.p[1] + off[1]) - src);
    }
};

template <int D>
int count_of(const CtIter *it, int device, cudaStream_t stream, Compaction<1> *c)
{
    return compaction_count<1>(it, NonzeroFlag<D, 1>(), device, stream, c);
}

/* Pass 1 over a tensor of any dtype. */
int count_any(const CtIter *it, CtDType dtype, int device, cudaStream_t stream, Compaction<1> *c)
{
    switch (dtype) {
#define CT_COUNT_CASE(NAME, ...) \
    case CT_##NAME:              \
        return count_of<CT_##NAME>(it, device, stream, c);
        CT_DTYPE_LIST(CT_COUNT_CASE)
#undef CT_COUNT_CASE
    default:
        break;
    }
    return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "count_nonzero: unsupported dtype %d", (int)dtype);
}

template <int D>
int nonzero_write_of(const Compaction<1> &c, const NonzeroSink &sink, cudaStream_t stream)
{
    return compaction_write<1>(c, NonzeroFlag<D, 1>(), sink, stream);
}

int nonzero_write_any(const Compaction<1> &c, CtDType dtype, const NonzeroSink &sink, cudaStream_t stream)
{
    switch (dtype) {
#define CT_NONZERO_CASE(NAME, ...) \
    case CT_##NAME:                \
        return nonzero_write_of<CT_##NAME>(c, sink, stream);
        CT_DTYPE_LIST(CT_NONZERO_CASE)
#undef CT_NONZERO_CASE
    default:
        break;
    }
    return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "nonzero: unsupported dtype %d", (int)dtype);
}

int run_count_nonzero(CtTensorObject *t, int64_t *count)
{
    *count = 0;
    if (tensor_numel(t) == 0) {
        return CT_CUDA_OK;
    }
    const int device = tensor_device(t);
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaStream_t stream = ct_cuda_stream(device);
    CtIter it;
    const CtTensorObject *ts[1] = {t};
    iter_of_tensors(&it, 1, ts, t->ndim);
    Compaction<1> c;
    CT_CUDA_TRY(count_any(&it, t->dtype, device, stream, &c));
    *count = c.total;
    return CT_CUDA_OK;
}

/* Fills *out (a new (n, ndim) int64 tensor) with the coordinates of t's nonzero elements. */
int run_nonzero(CtTensorObject *t, CtTensorObject **out)
{
    const int device = tensor_device(t);
    const int64_t numel = tensor_numel(t);
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaStream_t stream = ct_cuda_stream(device);
    Compaction<1> c;
    CtIter it;
    if (numel > 0) {
        const CtTensorObject *ts[1] = {t};
        iter_of_tensors(&it, 1, ts, t->ndim);
        CT_CUDA_TRY(count_any(&it, t->dtype, device, stream, &c));
    }
    int64_t shape[2] = {c.total, t->ndim};
    void *data = nullptr;
    *out = (CtTensorObject *)ct_cuda_host->empty(2, shape, CT_I64, device, &data);
    if (*out == nullptr) {
        return kPythonError;
    }
    if (c.total == 0 || t->ndim == 0) {
        return CT_CUDA_OK;
    }
    NonzeroSink sink;
    sink.out = (int64_t *)data;
    sink.coords.init(t->ndim, t->sizes, numel);
    int status = nonzero_write_any(c, t->dtype, sink, stream);
    if (status != CT_CUDA_OK) {
        ct_cuda_host->release(*out);
        *out = nullptr;
    }
    return status;
}

/* masked_select: src (any layout) has mask's shape on its first mask.ndim dims; the output is
 * (count, *src.shape[mask.ndim:]), contiguous. */
int run_masked_select(CtTensorObject *src, CtTensorObject *mask, CtTensorObject **out)
{
    const int device = tensor_device(src);
    const int m = mask->ndim;
    const size_t isz = kItemSize[src->dtype];
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaStream_t stream = ct_cuda_stream(device);
    int64_t inner = 1;
    for (int d = m; d < src->ndim; d++) {
        inner *= src->sizes[d];
    }
    Compaction<2> c;
    CtIter it;
    if (tensor_numel(mask) > 0) {
        const CtTensorObject *ts[2] = {mask, src};
        iter_of_tensors(&it, 2, ts, m);
        CT_CUDA_TRY(compaction_count<2>(&it, NonzeroFlag<CT_BOOL, 2>(), device, stream, &c));
    }
    int64_t shape[CT_MAX_DIMS];
    shape[0] = c.total;
    for (int d = m; d < src->ndim; d++) {
        shape[1 + d - m] = src->sizes[d];
    }
    void *data = nullptr;
    *out = (CtTensorObject *)ct_cuda_host->empty(1 + src->ndim - m, shape, src->dtype, device, &data);
    if (*out == nullptr) {
        return kPythonError;
    }
    if (c.total == 0 || inner == 0) {
        return CT_CUDA_OK;
    }
    int status = CT_CUDA_OK;
    const NonzeroFlag<CT_BOOL, 2> flag;
    if (inner == 1) {
        switch (isz) {
        case 1:
            status = compaction_write<2>(c, flag, SelectElementSink<uint8_t>{(uint8_t *)data}, stream);
            break;
        case 2:
            status = compaction_write<2>(c, flag, SelectElementSink<uint16_t>{(uint16_t *)data}, stream);
            break;
        case 4:
            status = compaction_write<2>(c, flag, SelectElementSink<uint32_t>{(uint32_t *)data}, stream);
            break;
        default:
            status = compaction_write<2>(c, flag, SelectElementSink<uint64_t>{(uint64_t *)data}, stream);
            break;
        }
    } else {
        /* the rows' offsets in src, then out[r, ...] = src[row r, ...] as a gather whose one
         * "index" holds byte offsets (never out of range, as index.h's folded offsets) */
        Scratch rows, flag_mem;
        status = rows.alloc(device, sizeof(int64_t) * (size_t)c.total);
        if (status == CT_CUDA_OK) {
            status = compaction_write<2>(c, flag, RowOffsetSink{(int64_t *)rows.ptr, tensor_data(src)}, stream);
        }
        if (status == CT_CUDA_OK) {
            const int rnd = 1 + src->ndim - m;
            char *ptrs[3] = {(char *)data, tensor_data(src), (char *)rows.ptr};
            int64_t strides[3][CT_MAX_DIMS];
            int64_t out_stride = (int64_t)isz;
            for (int d = rnd - 1; d >= 0; d--) { /* out: contiguous */
                strides[0][d] = out_stride;
                out_stride *= shape[d];
            }
            strides[1][0] = 0;
            strides[2][0] = (int64_t)sizeof(int64_t);
            for (int d = 1; d < rnd; d++) {
                strides[1][d] = src->strides[m + d - 1] * (int64_t)isz;
                strides[2][d] = 0;
            }
            const CtDType dtypes[3] = {src->dtype, src->dtype, CT_I64};
            CtIter git;
            iter_logical(&git, device, 3, rnd, shape, ptrs, strides, dtypes);
            CtIndexArgs args;
            memset(&args, 0, sizeof(args));
            args.nindex = 1;
            args.sizes[0] = INT64_MAX;
            args.strides[0] = 1;
            status = flag_init(&flag_mem, device, stream);
            if (status == CT_CUDA_OK) {
                status = launch_index_any<kGather>(&git, &args, (IndexFlag *)flag_mem.ptr, stream);
            }
        }
    }
    if (status != CT_CUDA_OK) {
        ct_cuda_host->release(*out);
        *out = nullptr;
    }
    return status;
}

/* --- tril / triu ------------------------------------------------------------------------------
 * Operands: 0 out, 1 src, 2 and 3 the row and column (pseudo-operands with base 0 and stride 1
 * along their dim, so their "offset" is the coordinate, pieces included). */
__host__ __device__ __forceinline__ int64_t coordinate(const char *base, int64_t off)
{
    return (int64_t)(uintptr_t)base + off;
}

template <typename U>
__host__ __device__ __forceinline__ void triangle_element(const Ptrs<4> &d, const CtOffsets<4> &offs, int64_t diagonal,
                                                          bool upper, uint32_t i)
{
    int64_t off[4];
    offs.get(i, off);
    int64_t row = coordinate(d.p[2], off[2]), col = coordinate(d.p[3], off[3]);
    int64_t edge = row + diagonal; /* tril keeps col <= edge, triu col >= edge */
    bool keep = upper ? col >= edge : col <= edge;
    U *o = (U *)(d.p[0] + off[0]);
    const U *s = (const U *)(d.p[1] + off[1]);
    if (!keep) {
        *o = 0; /* all-zero bits are zero in every dtype */
    } else if (o != s) {
        *o = *s;
    }
}

template <typename U>
__global__ void triangle_kernel(Ptrs<4> d, uint32_t n, CtOffsets<4> offs, int64_t diagonal, bool upper)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    triangle_element<U>(d, offs, diagonal, upper, i);
}

/* The iterator of triangle: out, src, row, col over out's logical shape. */
void triangle_iter(CtIter *it, CtTensorObject *out, CtTensorObject *src)
{
    const int nd = src->ndim;
    const int64_t isz = (int64_t)kItemSize[src->dtype];
    char *ptrs[4] = {tensor_data(out), tensor_data(src), (char *)(uintptr_t)0, (char *)(uintptr_t)0};
    int64_t strides[4][CT_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        strides[0][d] = out->strides[d] * isz;
        strides[1][d] = src->strides[d] * isz;
        strides[2][d] = d == nd - 2 ? 1 : 0;
        strides[3][d] = d == nd - 1 ? 1 : 0;
    }
    const CtDType dtypes[4] = {src->dtype, src->dtype, CT_I64, CT_I64};
    iter_logical(it, tensor_device(src), 4, nd, src->sizes, ptrs, strides, dtypes);
}

template <typename U>
int launch_triangle(const CtIter *it, int64_t diagonal, bool upper, cudaStream_t stream)
{
    return ct_for_each_piece<4>(it, [&](const CtPiece<4> &piece) -> int {
        triangle_kernel<U><<<ct_cuda_blocks(piece.numel, kThreads), kThreads, 0, stream>>>(
            ptrs_of(piece), (uint32_t)piece.numel, piece.offsets(), diagonal, upper);
        CT_CUDA_CHECK_LAUNCH();
        return CT_CUDA_OK;
    });
}

int run_triangle(CtTensorObject *out, CtTensorObject *src, int64_t diagonal, bool upper)
{
    if (tensor_numel(src) == 0) {
        return CT_CUDA_OK;
    }
    const int nd = src->ndim;
    /* beyond rows + cols every diagonal keeps all or nothing; clamping avoids overflow */
    const int64_t reach = src->sizes[nd - 2] + src->sizes[nd - 1];
    diagonal = diagonal > reach ? reach : diagonal < -reach ? -reach : diagonal;
    CT_CUDA_TRY(ct_cuda_device_guard(tensor_device(src)));
    cudaStream_t stream = ct_cuda_stream(tensor_device(src));
    CtIter it;
    triangle_iter(&it, out, src);
    switch (kItemSize[src->dtype]) {
    case 1:
        return launch_triangle<uint8_t>(&it, diagonal, upper, stream);
    case 2:
        return launch_triangle<uint16_t>(&it, diagonal, upper, stream);
    case 4:
        return launch_triangle<uint32_t>(&it, diagonal, upper, stream);
    default:
        return launch_triangle<uint64_t>(&it, diagonal, upper, stream);
    }
}

/* --- int_minmax ---------------------------------------------------------------------------------- */
struct MinOp {
    __host__ __device__ __forceinline__ long long operator()(long long a, long long b) const { return b < a ? b : a; }
};
struct MaxOp {
    __host__ __device__ __forceinline__ long long operator()(long long a, long long b) const { return b > a ? b : a; }
};

__global__ void minmax_init_kernel(long long *result)
{
    result[0] = LLONG_MAX;
    result[1] = LLONG_MIN;
}

__global__ void minmax_kernel(Ptrs<1> d, uint32_t n, CtOffsets<1> offs, long long *result)
{
    typedef cub::BlockReduce<long long, kThreads> Reduce;
    __shared__ typename Reduce::TempStorage tmp;
    uint32_t base = blockIdx.x * (uint32_t)kTile + threadIdx.x * (uint32_t)kItems;
    long long lo = LLONG_MAX, hi = LLONG_MIN;
    for (int j = 0; j < kItems; j++) {
        uint32_t i = base + (uint32_t)j;
        if (i < n) {
            int64_t off[1];
            offs.get(i, off);
            long long v = *(const long long *)(d.p[0] + off[0]);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    lo = Reduce(tmp).Reduce(lo, MinOp());
    __syncthreads(); /* tmp is reused */
    hi = Reduce(tmp).Reduce(hi, MaxOp());
    if (threadIdx.x == 0) {
        atomicMin(&result[0], lo);
        atomicMax(&result[1], hi);
    }
}

int run_int_minmax(CtTensorObject *t, int64_t *min, int64_t *max)
{
    const int device = tensor_device(t);
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaStream_t stream = ct_cuda_stream(device);
    Scratch result;
    CT_CUDA_TRY(result.alloc(device, 2 * sizeof(long long)));
    minmax_init_kernel<<<1, 1, 0, stream>>>(((long long *)result.ptr));
    CT_CUDA_CHECK_LAUNCH();
    CtIter it;
    const CtTensorObject *ts[1] = {t};
    iter_of_tensors(&it, 1, ts, t->ndim);
    CT_CUDA_TRY(ct_for_each_piece<1>(&it, [&](const CtPiece<1> &piece) -> int {
        minmax_kernel<<<ct_cuda_blocks(piece.numel, kTile), kThreads, 0, stream>>>(
            ptrs_of(piece), (uint32_t)piece.numel, piece.offsets(), ((long long *)result.ptr));
        CT_CUDA_CHECK_LAUNCH();
        return CT_CUDA_OK;
    }));
    long long h[2];
    CT_CUDA_TRY(ct_cuda_sync_debug_check());
    CT_CUDA_CHECK(cudaMemcpyAsync(h, result.ptr, sizeof(h), cudaMemcpyDeviceToHost, stream));
    CT_CUDA_CHECK(cudaStreamSynchronize(stream));
    *min = h[0];
    *max = h[1];
    return CT_CUDA_OK;
}

int finish(int status)
{
    if (status == CT_CUDA_OK) {
        return 0;
    }
    return status == kPythonError ? -1 : ct_cuda_raise(status);
}

} /* namespace */

/* --- the entries of struct CtIndexKernels ------------------------------------------------------- */
int ct_cuda_index(const CtIter *it, CtIndexArgs *args) { return finish(run_index(kGather, it, args)); }

int ct_cuda_index_put(const CtIter *it, CtIndexArgs *args) { return finish(run_index(kPut, it, args)); }

int ct_cuda_index_offsets(const CtIter *it, CtIndexArgs *args) { return finish(run_index(kOffsets, it, args)); }

int ct_cuda_masked_fill(const CtIter *it) { return finish(run_masked_fill(it)); }

int ct_cuda_count_nonzero(CtTensorObject *t, int64_t *count) { return finish(run_count_nonzero(t, count)); }

CtTensorObject *ct_cuda_nonzero(CtTensorObject *t)
{
    CtTensorObject *out = nullptr;
    int status = run_nonzero(t, &out);
    return finish(status) == 0 ? out : nullptr;
}

CtTensorObject *ct_cuda_masked_select(CtTensorObject *src, CtTensorObject *mask)
{
    CtTensorObject *out = nullptr;
    int status = run_masked_select(src, mask, &out);
    return finish(status) == 0 ? out : nullptr;
}

int ct_cuda_triangle(CtTensorObject *out, CtTensorObject *src, int64_t diagonal, bool upper)
{
    return finish(run_triangle(out, src, diagonal, upper));
}

int ct_cuda_int_minmax(CtTensorObject *t, int64_t *min, int64_t *max) { return finish(run_int_minmax(t, min, max)); }
