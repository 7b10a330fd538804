/* sort.cu: the CUDA sorts of the reduction family (sort, argsort, topk, kthvalue, median, mode:
 * the sort, median and mode entries of struct CtReduceKernels, reduce.h).
 *
 * Every element becomes an unsigned key whose order is the CPU's (reduce_math.h: NaN above
 * everything, all NaNs one key, -0.0 equal to 0.0; descending flips the key's bits) paired
 * with its position in the line. Ties are broken by position, so the result is the CPU's
 * stable sort exactly, deterministic and independent of the algorithm:
 *   lines of up to 2048 elements: one block per line, a bitonic sort of (key, position) in
 *     shared memory (positions make every pair distinct, so the unstable network is stable);
 *   longer lines: CUB's radix sort (stable) of the keys with int32 positions as values, from
 *     the CCCL shipped with the toolkit: DeviceRadixSort for a single line, else
 *     DeviceSegmentedRadixSort over batches of lines.
 * The outputs are gathered from the input by position (the values' bits are the input's), for
 * sorted positions [start, start + count): topk is the first k of a sort. The median is the
 * lower median of an ascending sort, or the first NaN of a line that has one (NaNs sort last,
 * in input order); nanmedian's is the lower median of the positions before the first NaN. The
 * mode is the last position of the longest run of equal keys of an ascending sort (the first
 * such run on ties: the smallest value), found by one thread per line after the sort. */
#include "reduce.cuh"
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

namespace {

constexpr int kBitonicMax = 2048;              /* longest line sorted in shared memory */
constexpr int64_t kBatchItems = (int64_t)1 << 26; /* elements per radix-sort batch (24 B each at most) */

/* --- keys ----------------------------------------------------------------------------------------- */
template <int D>
struct SortKey;
#define CT_SORT_KEY(NAME, KEY, BITS, FLOATING, EXPR)                                      \
    template <>                                                                          \
    struct SortKey<CT_##NAME> {                                                          \
        typedef KEY Key;                                                                 \
        static constexpr int bits = BITS;                                                \
        static constexpr bool floating = FLOATING;                                       \
        static __host__ __device__ __forceinline__ KEY of(CtCudaType<CT_##NAME>::T x) \
        {                                                                                \
            return EXPR;                                                                 \
        }                                                                                \
    };
CT_SORT_KEY(BOOL, uint16_t, 8, false, (uint16_t)x)
CT_SORT_KEY(U8, uint16_t, 8, false, (uint16_t)x)
CT_SORT_KEY(I8, uint16_t, 8, false, ct_red_key_i8(x))
CT_SORT_KEY(I16, uint16_t, 16, false, ct_red_key_i16(x))
CT_SORT_KEY(I32, uint32_t, 32, false, ct_red_key_i32(x))
CT_SORT_KEY(I64, uint64_t, 64, false, ct_red_key_i64(x))
CT_SORT_KEY(F16, uint16_t, 16, true, ct_red_key_f16(x))
CT_SORT_KEY(BF16, uint16_t, 16, true, ct_red_key_bf16(x))
CT_SORT_KEY(F32, uint32_t, 32, true, ct_red_key_f32(x))
CT_SORT_KEY(F64, uint64_t, 64, true, ct_red_key_f64(x))
#undef CT_SORT_KEY

/* The key all bits of which are used (bits of them). */
template <int D>
__host__ __device__ __forceinline__ typename SortKey<D>::Key key_mask()
{
    typedef typename SortKey<D>::Key K;
    return SortKey<D>::bits == 8 * (int)sizeof(K) ? (K)~(K)0 : (K)(((K)1 << SortKey<D>::bits) - 1);
}

/* The key of element x: ascending order of keys is the sort's order. */
template <int D>
__host__ __device__ __forceinline__ typename SortKey<D>::Key sort_key(typename CtCudaType<D>::T x, bool descending)
{
    typedef typename SortKey<D>::Key K;
    K k = SortKey<D>::of(x);
    return descending ? (K)(~k & key_mask<D>()) : k;
}

/* NaN's key (ascending keys). */
template <int D>
__host__ __device__ __forceinline__ bool is_nan_key(typename SortKey<D>::Key k)
{
    return SortKey<D>::floating && k == key_mask<D>();
}

struct SortSpec {
    int descending;
    int median;
    int64_t start, count;
    int mode;       /* the host harness (tests/cuda_host) builds the first four */
    int ignore_nan; /* nanmedian */
};

/* --- the per-thread bodies (host-callable: tests/cuda_host runs them) ------------------------- */
/* One compare-exchange of the bitonic network stage (size, stride): pair t orders positions i and
 * i + stride, ascending where bit `size` of i is clear. (key, position) pairs are all distinct. */
template <typename K>
__host__ __device__ __forceinline__ void bitonic_step(K *keys, int32_t *pos, int t, int size, int stride)
{
    const int i = 2 * t - (t & (stride - 1));
    const int j = i + stride;
    const bool up = (i & size) == 0;
    const bool greater = keys[i] > keys[j] || (keys[i] == keys[j] && pos[i] > pos[j]);
    if (greater == up) {
        K k = keys[i];
        keys[i] = keys[j];
        keys[j] = k;
        int32_t p = pos[i];
        pos[i] = pos[j];
        pos[j] = p;
    }
}

/* Output j of a line (line offsets off) is the element at position i of the input. */
template <int D>
__host__ __device__ __forceinline__ void sort_write_one(const CtLineArgs &a, const int64_t (&off)[3], int64_t j,
                                                        int64_t i)
{
    typedef typename CtCudaType<D>::T T;
    if (a.data[1] != nullptr) {
        *(T *)(a.data[1] + off[1] + j * a.dim_strides[1]) = *(const T *)(a.data[0] + off[0] + i * a.dim_strides[0]);
    }
    if (a.data[2] != nullptr) {
        *(int64_t *)(a.data[2] + off[2] + j * a.dim_strides[2]) = i;
    }
}

/* The sorted position holding the median of a line of n ascending keys: the first NaN when
 * there is one (NaNs sort last, in input order), else the lower median; ignore_nan: the lower
 * median of the keys before the first NaN, or the first NaN when there are none. */
template <int D>
__host__ __device__ __forceinline__ int64_t median_position(const typename SortKey<D>::Key *keys, int64_t n,
                                                            bool ignore_nan = false)
{
    if (!is_nan_key<D>(keys[n - 1])) {
        return (n - 1) / 2;
    }
    int64_t lo = 0, hi = n - 1; /* the first NaN is in [lo, hi] */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (is_nan_key<D>(keys[mid])) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return ignore_nan && lo > 0 ? (lo - 1) / 2 : lo;
}

/* The sorted position holding the mode of a line of n ascending keys: the end of the longest
 * run of equal keys, a later run having to be strictly longer to win. */
template <int D>
__host__ __device__ __forceinline__ int64_t mode_position(const typename SortKey<D>::Key *keys, int64_t n)
{
    int64_t best = 0, best_len = 0, run = 0;
    for (int64_t i = 0; i < n; i++) {
        run = i > 0 && keys[i] == keys[i - 1] ? run + 1 : 1;
        if (run > best_len) {
            best_len = run;
            best = i;
        }
    }
    return best;
}

/* The bitonic network's size for a line of n: the smallest power of two >= n, and at least 2
 * so that the int32 positions after P 16-bit keys in shared memory are 4-byte aligned. */
__host__ __device__ __forceinline__ int bitonic_size(int64_t n)
{
    int p = 2;
    while (p < n) {
        p <<= 1;
    }
    return p;
}

/* --- kernels ------------------------------------------------------------------------------------- */
/* One block per line of n <= kBitonicMax; shared memory: P keys then P int32 positions, P =
 * bitonic_size(n) (padding sorts last). */
template <int D>
__global__ void __launch_bounds__(1024) sort_small_kernel(const __grid_constant__ CtLineArgs a, SortSpec sp, int P)
{
    typedef typename SortKey<D>::Key K;
    typedef typename CtCudaType<D>::T T;
    extern __shared__ double2 ct_sort_smem[];
    K *keys = (K *)ct_sort_smem;
    int32_t *pos = (int32_t *)(keys + P);
    const int tid = threadIdx.x, nt = blockDim.x;
    for (int64_t l = blockIdx.x; l < a.lines; l += gridDim.x) {
        int64_t off[3];
        a.outer.offsets(l, off);
        const char *in = a.data[0] + off[0];
        for (int i = tid; i < P; i += nt) {
            if (i < a.n) {
                keys[i] = sort_key<D>(*(const T *)(in + i * a.dim_strides[0]), sp.descending != 0);
                pos[i] = i;
            } else {
                keys[i] = (K)~(K)0;
                pos[i] = INT32_MAX;
            }
        }
        __syncthreads();
        for (int size = 2; size <= P; size <<= 1) {
            for (int stride = size >> 1; stride > 0; stride >>= 1) {
                for (int t = tid; t < P / 2; t += nt) {
                    bitonic_step(keys, pos, t, size, stride);
                }
                __syncthreads();
            }
        }
        if (sp.median || sp.mode) {
            if (tid == 0) {
                const int64_t at =
                    sp.mode ? mode_position<D>(keys, a.n) : median_position<D>(keys, a.n, sp.ignore_nan != 0);
                sort_write_one<D>(a, off, 0, pos[at]);
            }
        } else {
            for (int64_t j = tid; j < sp.count; j += nt) {
                sort_write_one<D>(a, off, j, pos[sp.start + j]);
            }
        }
        __syncthreads(); /* keys and pos are rewritten for the next line */
    }
}

/* keys[e], pos[e] for element e = l * n + i of a batch of lines starting at line0 (e < 2^31). */
template <int D>
__global__ void sort_keys_kernel(const __grid_constant__ CtLineArgs a, int64_t line0, int64_t items,
                                 CtDivider32 by_n, int descending, typename SortKey<D>::Key *keys, int32_t *pos)
{
    typedef typename CtCudaType<D>::T T;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < items; e += (int64_t)gridDim.x * blockDim.x) {
        uint32_t l = by_n.div((uint32_t)e);
        uint32_t i = (uint32_t)e - l * by_n.divisor;
        int64_t off[3];
        a.outer.offsets(line0 + l, off);
        keys[e] = sort_key<D>(*(const T *)(a.data[0] + off[0] + (int64_t)i * a.dim_strides[0]), descending != 0);
        pos[e] = (int32_t)i;
    }
}

__global__ void segment_offsets_kernel(int *offsets, int nseg, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= nseg) {
        offsets[i] = i * n;
    }
}

/* Outputs of a sorted batch: element e = l * count + j (median, mode: one per line). */
template <int D>
__global__ void sort_write_kernel(const __grid_constant__ CtLineArgs a, SortSpec sp, int64_t line0, int64_t nlines,
                                  const typename SortKey<D>::Key *keys, const int32_t *pos)
{
    const int64_t total = nlines * sp.count;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t l = e / sp.count, j = e - l * sp.count;
        int64_t off[3];
        a.outer.offsets(line0 + l, off);
        int64_t at = sp.median ? median_position<D>(keys + l * a.n, a.n, sp.ignore_nan != 0)
                     : sp.mode ? mode_position<D>(keys + l * a.n, a.n)
                               : sp.start + j;
        sort_write_one<D>(a, off, j, pos[l * a.n + at]);
    }
}

/* --- launchers ----------------------------------------------------------------------------------- */
/* CUB's radix sort of (keys, pos) pairs: one line, or nseg segments of n. */
template <typename K>
int radix_sort_pairs(int device, cudaStream_t stream, const K *keys_in, K *keys_out, const int32_t *pos_in,
                     int32_t *pos_out, int64_t n, int64_t nseg, const int *offsets, int bits)
{
    size_t temp_bytes = 0;
    int items = (int)(n * nseg);
    if (nseg == 1) {
        CT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in, keys_out, pos_in, pos_out, items, 0,
                                                      bits, stream));
    } else {
        CT_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(nullptr, temp_bytes, keys_in, keys_out, pos_in, pos_out,
                                                               items, (int)nseg, offsets, offsets + 1, 0, bits, stream));
    }
    CtScratch temp;
    CT_CUDA_TRY(temp.alloc(device, temp_bytes));
    if (nseg == 1) {
        CT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.ptr, temp_bytes, keys_in, keys_out, pos_in, pos_out, items,
                                                      0, bits, stream));
    } else {
        CT_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(temp.ptr, temp_bytes, keys_in, keys_out, pos_in,
                                                               pos_out, items, (int)nseg, offsets, offsets + 1, 0,
                                                               bits, stream));
    }
    return CT_CUDA_OK;
}

__host__ inline unsigned int sort_grid(int64_t work, int threads)
{
    int64_t b = (work + threads - 1) / threads;
    return (unsigned int)(b < 1 ? 1 : b < (int64_t)INT32_MAX ? b : (int64_t)INT32_MAX);
}

/* Lines per radix-sort batch: whole lines, at most kBatchItems elements (at least one line). */
__host__ inline int64_t sort_batch_lines(int64_t n, int64_t lines)
{
    int64_t b = kBatchItems / n;
    if (b < 1) {
        b = 1;
    }
    return b < lines ? b : lines;
}

template <int D>
int launch_sort(const CtLineArgs &a, const SortSpec &sp, int device, cudaStream_t stream)
{
    typedef typename SortKey<D>::Key K;
    if (a.n <= kBitonicMax) {
        const int P = bitonic_size(a.n);
        const int threads = P / 2 < 32 ? 32 : P / 2;
        const size_t smem = (size_t)P * (sizeof(K) + sizeof(int32_t));
        sort_small_kernel<D><<<sort_grid(a.lines, 1), threads, smem, stream>>>(a, sp, P);
        CT_CUDA_CHECK_LAUNCH();
        return CT_CUDA_OK;
    }
    if (a.n > CT_MAX_INDEX32) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR,
                                 "sort: lines of 2^31 elements or more are not supported on CUDA (got %lld)",
                                 (long long)a.n);
    }
    const int64_t batch = sort_batch_lines(a.n, a.lines);
    const int64_t cap = batch * a.n;
    CtScratch keys_in, keys_out, pos_in, pos_out, offsets;
    CT_CUDA_TRY(keys_in.alloc(device, (size_t)cap * sizeof(K)));
    CT_CUDA_TRY(keys_out.alloc(device, (size_t)cap * sizeof(K)));
    CT_CUDA_TRY(pos_in.alloc(device, (size_t)cap * sizeof(int32_t)));
    CT_CUDA_TRY(pos_out.alloc(device, (size_t)cap * sizeof(int32_t)));
    if (batch > 1) {
        CT_CUDA_TRY(offsets.alloc(device, (size_t)(batch + 1) * sizeof(int)));
    }
    CtDivider32 by_n;
    by_n.init((uint32_t)a.n);
    for (int64_t line0 = 0; line0 < a.lines; line0 += batch) {
        const int64_t nlines = a.lines - line0 < batch ? a.lines - line0 : batch;
        const int64_t items = nlines * a.n;
        sort_keys_kernel<D><<<sort_grid(items, 256), 256, 0, stream>>>(a, line0, items, by_n, sp.descending,
                                                                        (K *)keys_in.ptr, (int32_t *)pos_in.ptr);
        CT_CUDA_CHECK_LAUNCH();
        if (nlines > 1) {
            segment_offsets_kernel<<<sort_grid(nlines + 1, 256), 256, 0, stream>>>((int *)offsets.ptr, (int)nlines,
                                                                                    (int)a.n);
            CT_CUDA_CHECK_LAUNCH();
        }
        CT_CUDA_TRY(radix_sort_pairs<K>(device, stream, (const K *)keys_in.ptr, (K *)keys_out.ptr,
                                        (const int32_t *)pos_in.ptr, (int32_t *)pos_out.ptr, a.n, nlines,
                                        (const int *)offsets.ptr, SortKey<D>::bits));
        sort_write_kernel<D><<<sort_grid(nlines * sp.count, 256), 256, 0, stream>>>(
            a, sp, line0, nlines, (const K *)keys_out.ptr, (const int32_t *)pos_out.ptr);
        CT_CUDA_CHECK_LAUNCH();
    }
    return CT_CUDA_OK;
}

typedef int (*SortLauncher)(const CtLineArgs &, const SortSpec &, int, cudaStream_t);
const SortLauncher kSortTable[CT_NUM_DTYPES] = {
    launch_sort<CT_BOOL>, launch_sort<CT_U8>,  launch_sort<CT_I8>,   launch_sort<CT_I16>, launch_sort<CT_I32>,
    launch_sort<CT_I64>,  launch_sort<CT_F16>, launch_sort<CT_BF16>, launch_sort<CT_F32>, launch_sort<CT_F64>,
};

int run_sort(const CtDimDesc *d, const SortSpec &sp)
{
    if (d->outer_numel <= 0 || d->n <= 0 || sp.count <= 0) {
        return 0;
    }
    CtLineArgs a;
    ct_line_args(a, d);
    int status = ct_cuda_device_guard(d->device);
    if (status == CT_CUDA_OK) {
        status = kSortTable[d->dtypes[0]](a, sp, d->device, ct_cuda_stream(d->device));
    }
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}

} /* namespace */

int ct_cuda_sort(const CtDimDesc *d, bool descending, int64_t start, int64_t count)
{
    SortSpec sp = {descending ? 1 : 0, 0, start, count, 0};
    return run_sort(d, sp);
}

int ct_cuda_median(const CtDimDesc *d, bool ignore_nan)
{
    SortSpec sp = {0, 1, (d->n - 1) / 2, 1, 0, ignore_nan ? 1 : 0};
    return run_sort(d, sp);
}

int ct_cuda_mode(const CtDimDesc *d)
{
    SortSpec sp = {0, 0, 0, 1, 1, 0};
    return run_sort(d, sp);
}
