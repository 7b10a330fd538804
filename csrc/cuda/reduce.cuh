/* reduce.cuh: what reduce.cu and sort.cu (the CUDA kernels of the reduction family, struct
 * CtReduceKernels of reduce.h) share: their entry points for runtime.cu, the index layout that
 * turns an output or line number into byte offsets, scratch device memory from the caching
 * allocator, element stores into a dtype chosen at run time, and the line description.
 *
 * Everything here is host-callable as well, so tests/cuda_host/ can run the index math and the
 * per-thread bodies of the kernels on a machine without a GPU. */
#ifndef CTORCH_CUDA_REDUCE_CUH
#define CTORCH_CUDA_REDUCE_CUH

#include "allocator.cuh"
#include "common.cuh"
#include "offsets.cuh" /* CT_MAX_INDEX32 */
#include "reduce.h"
#include "reduce_math.h"

/* --- entries of struct CtReduceKernels: 0, or -1 with a Python exception set ------------------- */
int ct_cuda_reduce(const CtReduceDesc *d);
int ct_cuda_arg_reduce(const CtDimDesc *d, bool is_max);
int ct_cuda_scan(const CtDimDesc *d, CtScanOp op);
int ct_cuda_softmax(const CtDimDesc *d, bool log_out);
int ct_cuda_sort(const CtDimDesc *d, bool descending, int64_t start, int64_t count);
int ct_cuda_median(const CtDimDesc *d, bool ignore_nan);
int ct_cuda_mode(const CtDimDesc *d);

/* --- index layouts ------------------------------------------------------------------------------
 * Linear index i over up to CT_MAX_DIMS dims (dim 0 innermost) -> byte offsets of N operands.
 * When every index fits 31 bits the divisions are magic-number multiplies (CtDivider32), else
 * 64-bit divisions. Passed inside __grid_constant__ kernel parameters, which may be indexed at
 * run time without a copy to local memory, so the loops stay loops (unrolling them to
 * CT_MAX_DIMS for every kernel of the family made the build take minutes per architecture). */
template <int N>
struct CtLayout {
    int ndim;
    bool fast;
    int64_t shape[CT_MAX_DIMS];
    int64_t strides[CT_MAX_DIMS][N]; /* bytes */
    CtDivider32 div[CT_MAX_DIMS];

    /* Call after filling ndim, shape and strides (unused dims may hold anything). */
    __host__ void finalize()
    {
        int64_t numel = 1;
        for (int d = 0; d < CT_MAX_DIMS; d++) {
            if (d >= ndim) {
                shape[d] = 1;
                for (int k = 0; k < N; k++) {
                    strides[d][k] = 0;
                }
            }
            /* a size-0 dim is never indexed (nothing to do), but the divider needs d >= 1 */
            int64_t s = shape[d] < 1 ? 1 : shape[d];
            numel = numel > CT_MAX_INDEX32 ? numel : numel * s;
            div[d].init(s <= CT_MAX_INDEX32 ? (uint32_t)s : 1u);
        }
        fast = numel <= CT_MAX_INDEX32;
    }

    __host__ __device__ __forceinline__ void offsets(int64_t i, int64_t (&off)[N]) const
    {
CT_UNROLL
        for (int k = 0; k < N; k++) {
            off[k] = 0;
        }
        if (fast) {
            uint32_t j = (uint32_t)i;
            for (int d = 0; d < ndim; d++) {
                if (d == ndim - 1) { /* the outermost dim needs no division */
CT_UNROLL
                    for (int k = 0; k < N; k++) {
                        off[k] += (int64_t)j * strides[d][k];
                    }
                    break;
                }
                uint32_t q = div[d].div(j);
                uint32_t r = j - q * div[d].divisor;
CT_UNROLL
                for (int k = 0; k < N; k++) {
                    off[k] += (int64_t)r * strides[d][k];
                }
                j = q;
            }
        } else {
            int64_t j = i;
            for (int d = 0; d < ndim; d++) {
                if (d == ndim - 1) {
CT_UNROLL
                    for (int k = 0; k < N; k++) {
                        off[k] += j * strides[d][k];
                    }
                    break;
                }
                int64_t q = j / shape[d];
                int64_t r = j - q * shape[d];
CT_UNROLL
                for (int k = 0; k < N; k++) {
                    off[k] += r * strides[d][k];
                }
                j = q;
            }
        }
    }
};

/* --- lines (CtDimDesc) ---------------------------------------------------------------------------- */
/* A CtDimDesc in kernel-parameter form: line l's operands start at data[k] + outer offsets. */
struct CtLineArgs {
    CtLayout<3> outer;
    int64_t lines; /* outer_numel */
    int64_t n;
    int64_t dim_strides[3];
    char *data[3];
    int dtypes[3];
    int64_t groups; /* cooperative kernels: line groups (one per block row set) */
    int group;      /* threads per line (cooperative kernels) */
    int rows;       /* lines per block (cooperative kernels) */
};

__host__ inline void ct_line_args(CtLineArgs &a, const CtDimDesc *d)
{
    memset(&a, 0, sizeof(a));
    a.outer.ndim = d->nouter;
    for (int k = 0; k < d->nouter; k++) {
        a.outer.shape[k] = d->outer_shape[k];
        for (int op = 0; op < 3; op++) {
            a.outer.strides[k][op] = d->outer_strides[k][op];
        }
    }
    a.outer.finalize();
    a.lines = d->outer_numel;
    a.n = d->n;
    for (int op = 0; op < 3; op++) {
        a.dim_strides[op] = d->dim_strides[op];
        a.data[op] = d->data[op];
        a.dtypes[op] = d->dtypes[op];
    }
}

/* Whether the lines are best read by threads cooperating along each line (the dim is the
 * operand-0 dim of smallest stride and lines are long enough, or there are too few lines to
 * keep a GPU busy one thread per line) rather than one thread per line. Shape-only. */
__host__ inline bool ct_lines_cooperative(const CtDimDesc *d)
{
    int64_t s = d->dim_strides[0] < 0 ? -d->dim_strides[0] : d->dim_strides[0];
    bool fastest = true;
    for (int k = 0; k < d->nouter; k++) {
        int64_t o = d->outer_strides[k][0] < 0 ? -d->outer_strides[k][0] : d->outer_strides[k][0];
        if (o != 0 && o < s) {
            fastest = false;
        }
    }
    return (fastest && d->n >= 16) || d->outer_numel < 1024;
}

/* --- dtype facts (ct_dtype_info lives in _C, which the backend must not link against) ---------- */
__host__ __device__ inline int ct_red_itemsize(int dtype)
{
    switch (dtype) {
#define CT_RED_SIZE_CASE(NAME, ctype, ...) \
    case CT_##NAME:                        \
        return (int)sizeof(ctype);
        CT_DTYPE_LIST(CT_RED_SIZE_CASE)
#undef CT_RED_SIZE_CASE
    default:
        return 1;
    }
}

__host__ inline const char *ct_red_dtype_name(int dtype)
{
    switch (dtype) {
#define CT_RED_NAME_CASE(NAME, ctype, acctype, pyname, ...) \
    case CT_##NAME:                                         \
        return pyname;
        CT_DTYPE_LIST(CT_RED_NAME_CASE)
#undef CT_RED_NAME_CASE
    default:
        return "?";
    }
}

/* --- element stores into a run-time dtype --------------------------------------------------- */
template <typename V>
__host__ __device__ __forceinline__ void ct_store_any(char *p, int dtype, V v)
{
    switch (dtype) {
#define CT_RED_STORE_CASE(NAME, ...) \
    case CT_##NAME:                  \
        ct_store<CT_##NAME>(p, v);   \
        break;
        CT_DTYPE_LIST(CT_RED_STORE_CASE)
#undef CT_RED_STORE_CASE
    default:
        break;
    }
}

/* 16 bytes of T, for vector loads. */
template <typename T, int N>
struct alignas(16) CtRedVec {
    T v[N];
};

template <typename V>
__host__ __device__ __forceinline__ bool ct_red_isnan(V v)
{
    return v != v;
}

/* --- scratch device memory -------------------------------------------------------------------
 * From the caching allocator on the current stream; freed by the destructor right after the
 * kernels using it are queued (the allocator reuses a block only in stream order). */
struct CtScratch {
    int device = -1;
    void *ptr = nullptr;
    CtScratch() = default;
    CtScratch(const CtScratch &) = delete;
    CtScratch &operator=(const CtScratch &) = delete;
    int alloc(int dev, size_t nbytes)
    {
        device = dev;
        return ct_cuda_caching_malloc(dev, nbytes ? nbytes : 1, &ptr);
    }
    ~CtScratch()
    {
        if (ptr != nullptr) {
            (void)ct_cuda_caching_free(device, ptr); /* nothing to tell a destructor's caller */
        }
    }
};

/* --- warp shuffles of the accumulators ------------------------------------------------------------ */
template <typename V>
__device__ __forceinline__ V ct_shfl_down(V v, int offset)
{
    if constexpr (sizeof(V) == 8) {
        long long x;
        memcpy(&x, &v, 8);
        x = __shfl_down_sync(0xffffffffu, x, offset);
        memcpy(&v, &x, 8);
        return v;
    } else if constexpr (std::is_same<V, float>::value) {
        return __shfl_down_sync(0xffffffffu, v, offset);
    } else {
        return (V)__shfl_down_sync(0xffffffffu, (int)v, offset);
    }
}
template <typename V>
__device__ __forceinline__ V ct_shfl_up(V v, int offset)
{
    if constexpr (sizeof(V) == 8) {
        long long x;
        memcpy(&x, &v, 8);
        x = __shfl_up_sync(0xffffffffu, x, offset);
        memcpy(&v, &x, 8);
        return v;
    } else if constexpr (std::is_same<V, float>::value) {
        return __shfl_up_sync(0xffffffffu, v, offset);
    } else {
        return (V)__shfl_up_sync(0xffffffffu, (int)v, offset);
    }
}
template <typename V>
__device__ __forceinline__ V ct_shfl_idx(V v, int lane)
{
    if constexpr (sizeof(V) == 8) {
        long long x;
        memcpy(&x, &v, 8);
        x = __shfl_sync(0xffffffffu, x, lane);
        memcpy(&v, &x, 8);
        return v;
    } else if constexpr (std::is_same<V, float>::value) {
        return __shfl_sync(0xffffffffu, v, lane);
    } else {
        return (V)__shfl_sync(0xffffffffu, (int)v, lane);
    }
}

/* Threads per block of the one-thread-per-line kernels. */
#define CT_RED_LINE_THREADS 256

#endif /* CTORCH_CUDA_REDUCE_CUH */
