/* reduce.cu: the CUDA kernels of the reduction family (struct CtReduceKernels, reduce.h) but
 * the sorts (sort.cu): reductions, arg-reductions, scans and softmax.
 *
 * Determinism: the same input gives the same bits on every run. Every launch configuration is
 * a function of the shapes, strides and dtypes alone (not of the GPU or of timing), every
 * thread combines its elements in a fixed order, threads are combined by fixed trees (warp
 * shuffles, shared memory), and a reduction cut into chunks writes per-chunk partials that a
 * second kernel combines in chunk order. No atomics.
 *
 * Reductions (CtReduceDesc) and arg-reductions (CtDimDesc) share one engine, generic over an
 * "op" (ReduceOp, ArgOp: identity, element, combine, finish):
 *   inner mode  the reduced elements of an output are its fastest dim (rows): a warp per
 *               output (short rows, 8 per block) or a block of 256/512 threads per output,
 *               16-byte vector loads where aligned;
 *   outer mode  a kept dim is the fastest (columns): one thread per output, neighbouring
 *               threads reading neighbouring outputs (coalesced), the reduced range cut over
 *               threadIdx.y and combined through shared memory;
 *   chunks      when there are too few outputs to fill the GPU, the reduced range is also cut
 *               over blockIdx.y, and reduce_partials_kernel combines the chunks in order.
 * Accumulators are those of the CPU (float for float32/float16/bfloat16, double for float64,
 * int64 for integers and bool) and the scalar math is reduce_math.h's, shared with the CPU.
 *
 * Scans accumulate in double (floats) or int64 (integers) as the CPU does (cummax/cummin carry
 * the value and its index; logcumsumexp is a running logaddexp); softmax in float (double for
 * float64). Both run one thread per line (the CPU's sequential loop) when lines are strided
 * and numerous, else a warp or block per line (a tiled block scan over an associative
 * combination; three passes with block-wide max and sum). */
#include "reduce.cuh"
#include <type_traits>

/* scalar_math.h's integer bodies are shared by signed and unsigned types: `b < 0` on uint8_t is
 * intended (always false), not a bug. Only logaddexp is used here. */
#pragma nv_diag_suppress 186
#include "scalar_math.h"
#pragma nv_diag_default 186

namespace {

/* --- the reduction engine ------------------------------------------------------------------------ */
/* A reduction in kernel-parameter form. Outputs are numbered over `kept` (dim 0 fastest), whose
 * three operands are the input, out0 and out1; the reduced index r in [0, R) is turned into an
 * input offset by `red` (or r * red_stride when red_linear). */
struct RedArgs {
    CtLayout<3> kept;
    CtLayout<1> red;
    bool red_linear;
    int64_t red_stride;
    int64_t O, R;
    int64_t groups;  /* output groups: by outputs (inner) or bx outputs (outer) per block row */
    int64_t nchunks; /* blockIdx.y: chunks of the reduced range */
    int64_t chunk;   /* reduced elements per chunk */
    const char *in;
    char *out0; /* reduce: the output; arg: the values (or NULL) */
    char *out1; /* reduce: the shift (read; or NULL); arg: the int64 indices (or NULL) */
    void *partials; /* nchunks > 1: [O][nchunks] accumulators */
    int out_dtype;
    int map;
    int final;
    double p;
    double divisor;
    int is_max; /* arg */
};

/* The launch configuration: a function of (O, R, mode, element size) only. */
struct RedLaunch {
    bool inner;
    int bx, by;
    int64_t groups, nchunks, chunk;
    unsigned int grid_x;
};

constexpr int64_t kTargetBlocks = 1024; /* blocks that keep every SM of a large GPU busy */
constexpr int64_t kSplitBelow = 512;    /* fewer output groups than this: cut the reduced range */
constexpr int kPartialRows = 8;         /* outputs per block of reduce_partials_kernel */

__host__ __device__ __forceinline__ int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* vec: elements per 16-byte vector of the input dtype. */
__host__ RedLaunch plan_reduction(int64_t O, int64_t R, bool inner, int vec)
{
    RedLaunch L;
    L.inner = inner;
    if (inner) {
        if (R <= (int64_t)32 * vec * 4) { /* a warp per output, 8 outputs per block */
            L.bx = 32;
            L.by = 8;
        } else if (R <= (int64_t)256 * vec * 4) {
            L.bx = 256;
            L.by = 1;
        } else {
            L.bx = 512;
            L.by = 1;
        }
        L.groups = ceil_div(O, L.by);
    } else {
        if (R >= 64) {
            L.bx = 32;
            L.by = 8;
        } else if (R >= 16) {
            L.bx = 64;
            L.by = 4;
        } else {
            L.bx = 256;
            L.by = 1;
        }
        L.groups = ceil_div(O, L.bx);
    }
    L.nchunks = 1;
    L.chunk = R;
    if (L.groups < kSplitBelow && R > 0) {
        int64_t unit = inner ? (int64_t)L.bx * vec : (int64_t)L.by; /* a round of the block */
        int64_t want = ceil_div(kTargetBlocks, L.groups);
        int64_t most = ceil_div(R, unit * 8); /* at least 8 rounds per chunk */
        int64_t n = want < most ? want : most;
        if (n > 65535) {
            n = 65535;
        }
        if (n > 1) {
            L.chunk = ceil_div(ceil_div(R, n), unit) * unit;
            L.nchunks = ceil_div(R, L.chunk);
        }
    }
    L.grid_x = (unsigned int)(L.groups < (int64_t)INT32_MAX ? L.groups : (int64_t)INT32_MAX);
    return L;
}

/* --- ops ------------------------------------------------------------------------------------------ */
template <typename ACC>
struct RedMath;
template <>
struct RedMath<float> {
    static __host__ __device__ __forceinline__ float identity(CtReduceCombine op, CtReduceMap m)
    {
        return ct_red_identity_f32(op, m);
    }
    static __host__ __device__ __forceinline__ float combine(float a, float b, CtReduceCombine op)
    {
        return ct_red_combine_f32(a, b, op);
    }
    static __host__ __device__ __forceinline__ float map(float x, CtReduceMap m, double p, float s)
    {
        return ct_red_map_f32(x, m, p, s);
    }
    static __host__ __device__ __forceinline__ float shift(float s, CtReduceMap m) { return ct_red_shift_f32(s, m); }
    static __host__ __device__ __forceinline__ float finish(float v, CtReduceFinal f, double div, double p, float s)
    {
        return ct_red_finish_f32(v, f, div, p, s);
    }
};
template <>
struct RedMath<double> {
    static __host__ __device__ __forceinline__ double identity(CtReduceCombine op, CtReduceMap m)
    {
        return ct_red_identity_f64(op, m);
    }
    static __host__ __device__ __forceinline__ double combine(double a, double b, CtReduceCombine op)
    {
        return ct_red_combine_f64(a, b, op);
    }
    static __host__ __device__ __forceinline__ double map(double x, CtReduceMap m, double p, double s)
    {
        return ct_red_map_f64(x, m, p, s);
    }
    static __host__ __device__ __forceinline__ double shift(double s, CtReduceMap m) { return ct_red_shift_f64(s, m); }
    static __host__ __device__ __forceinline__ double finish(double v, CtReduceFinal f, double div, double p, double s)
    {
        return ct_red_finish_f64(v, f, div, p, s);
    }
};
template <>
struct RedMath<int64_t> {
    static __host__ __device__ __forceinline__ int64_t identity(CtReduceCombine op, CtReduceMap m)
    {
        return ct_red_identity_i64(op, m);
    }
    static __host__ __device__ __forceinline__ int64_t combine(int64_t a, int64_t b, CtReduceCombine op)
    {
        return ct_red_combine_i64(a, b, op);
    }
    static __host__ __device__ __forceinline__ int64_t map(int64_t x, CtReduceMap m, double p, int64_t s)
    {
        return ct_red_map_i64(x, m, p, s);
    }
    static __host__ __device__ __forceinline__ int64_t shift(int64_t s, CtReduceMap m) { return ct_red_shift_i64(s, m); }
    static __host__ __device__ __forceinline__ int64_t finish(int64_t v, CtReduceFinal f, double div, double p,
                                                              int64_t s)
    {
        return ct_red_finish_i64(v, f, div, p, s);
    }
};

/* out = final(combine_r map(in)), in dtype IN accumulated in ACC; the per-output context is the
 * shift (logsumexp, var). */
template <int IN, typename ACC, int OP>
struct ReduceOp {
    typedef typename CtCudaType<IN>::T T;
    typedef ACC Acc;
    typedef ACC Ctx;
    CtReduceMap map;
    double p;

    __host__ __device__ __forceinline__ explicit ReduceOp(const RedArgs &a) : map((CtReduceMap)a.map), p(a.p) {}
    __host__ __device__ __forceinline__ Acc identity() const { return RedMath<ACC>::identity((CtReduceCombine)OP, map); }
    __host__ __device__ __forceinline__ Acc combine(Acc a, Acc b) const
    {
        return RedMath<ACC>::combine(a, b, (CtReduceCombine)OP);
    }
    __host__ __device__ __forceinline__ Acc element(T x, int64_t r, Ctx s) const
    {
        (void)r;
        Acc v = (Acc)ct_widen<IN>(x);
        return map == CT_MAP_IDENTITY ? v : RedMath<ACC>::map(v, map, p, s);
    }
    __host__ __device__ __forceinline__ Ctx context(const RedArgs &a, const int64_t (&off)[3]) const
    {
        return a.out1 != nullptr ? RedMath<ACC>::shift(*(const ACC *)(a.out1 + off[2]), map) : (ACC)0;
    }
    __host__ __device__ __forceinline__ void finish(const RedArgs &a, Acc v, Ctx s, const int64_t (&off)[3]) const
    {
        v = RedMath<ACC>::finish(v, (CtReduceFinal)a.final, a.divisor, a.p, s);
        ct_store_any(a.out0 + off[1], a.out_dtype, v);
    }
    __device__ __forceinline__ static Acc shfl_down(Acc v, int offset) { return ct_shfl_down(v, offset); }
};

/* The partials of a ReduceOp do not depend on the input dtype: one kernel per accumulator. */
template <typename ACC>
struct CanonicalIn;
template <>
struct CanonicalIn<float> {
    static constexpr int value = CT_F32;
};
template <>
struct CanonicalIn<double> {
    static constexpr int value = CT_F64;
};
template <>
struct CanonicalIn<int64_t> {
    static constexpr int value = CT_I64;
};

/* The value and index of the first maximum (is_max) or minimum of a line, NaN counting as the
 * greatest and the least. combine is commutative (ties go to the smaller index), so any
 * combination order gives the CPU's answer. */
template <typename V>
struct ArgAcc {
    V v;
    int64_t i; /* INT64_MAX: no element yet */
};

template <int D>
struct ArgOp {
    typedef typename CtCudaType<D>::T T;
    typedef typename CtCudaType<D>::Acc V;
    typedef ArgAcc<V> Acc;
    struct Ctx {};
    bool is_max;

    __host__ __device__ __forceinline__ explicit ArgOp(const RedArgs &a) : is_max(a.is_max != 0) {}
    __host__ __device__ __forceinline__ Acc identity() const { return Acc{(V)0, INT64_MAX}; }
    __host__ __device__ __forceinline__ Acc combine(Acc a, Acc b) const
    {
        if (b.i == INT64_MAX) {
            return a;
        }
        if (a.i == INT64_MAX) {
            return b;
        }
        bool an = ct_red_isnan(a.v), bn = ct_red_isnan(b.v);
        if (an || bn) {
            if (an && bn) {
                return a.i <= b.i ? a : b;
            }
            return an ? a : b;
        }
        if (is_max ? a.v > b.v : a.v < b.v) {
            return a;
        }
        if (is_max ? b.v > a.v : b.v < a.v) {
            return b;
        }
        return a.i <= b.i ? a : b;
    }
    __host__ __device__ __forceinline__ Acc element(T x, int64_t r, Ctx) const { return Acc{ct_widen<D>(x), r}; }
    __host__ __device__ __forceinline__ Ctx context(const RedArgs &, const int64_t (&)[3]) const { return Ctx{}; }
    __host__ __device__ __forceinline__ void finish(const RedArgs &a, Acc v, Ctx, const int64_t (&off)[3]) const
    {
        if (a.out0 != nullptr) {
            ct_store<D>(a.out0 + off[1], v.v);
        }
        if (a.out1 != nullptr) {
            *(int64_t *)(a.out1 + off[2]) = v.i;
        }
    }
    __device__ __forceinline__ static Acc shfl_down(Acc v, int offset)
    {
        return Acc{ct_shfl_down(v.v, offset), ct_shfl_down(v.i, offset)};
    }
};

/* --- per-thread bodies (host-callable: tests/cuda_host runs them) ------------------------------- */
/* Inner mode: thread tx of bx combines its elements of reduced positions [r0, r1) of one output
 * (base = the output's input address). With a linear reduced index, elements go to threads in
 * groups of VEC (group v to thread v % bx, in order), read as one 16-byte vector when aligned
 * and one by one otherwise: the same order either way, so the alignment of a view never changes
 * the bits. */
template <class Op>
__host__ __device__ __forceinline__ typename Op::Acc reduce_thread_inner(const Op &op, const RedArgs &a,
                                                                         const char *base, int64_t r0, int64_t r1,
                                                                         typename Op::Ctx ctx, int tx, int bx)
{
    typedef typename Op::T T;
    typedef typename Op::Acc Acc;
    constexpr int VEC = (int)(16 / sizeof(T));
    Acc acc = op.identity();
    const int64_t len = r1 - r0;
    if (len <= 0) {
        return acc;
    }
    if (a.red_linear) {
        const int64_t s = a.red_stride;
        const char *p = base + r0 * s;
        const int64_t nvec = len / VEC;
        if (s == (int64_t)sizeof(T) && ((uintptr_t)p & 15) == 0) {
            const CtRedVec<T, VEC> *pv = (const CtRedVec<T, VEC> *)p;
            for (int64_t v = tx; v < nvec; v += bx) {
                CtRedVec<T, VEC> x = pv[v];
CT_UNROLL
                for (int k = 0; k < VEC; k++) {
                    acc = op.combine(acc, op.element(x.v[k], r0 + v * VEC + k, ctx));
                }
            }
        } else {
            for (int64_t v = tx; v < nvec; v += bx) {
CT_UNROLL
                for (int k = 0; k < VEC; k++) {
                    int64_t i = v * VEC + k;
                    acc = op.combine(acc, op.element(*(const T *)(p + i * s), r0 + i, ctx));
                }
            }
        }
        if (tx == (int)(nvec % bx)) { /* the partial group nvec */
            for (int64_t i = nvec * VEC; i < len; i++) {
                acc = op.combine(acc, op.element(*(const T *)(p + i * s), r0 + i, ctx));
            }
        }
    } else {
        for (int64_t j = tx; j < len; j += bx) {
            int64_t off[1];
            a.red.offsets(r0 + j, off);
            acc = op.combine(acc, op.element(*(const T *)(base + off[0]), r0 + j, ctx));
        }
    }
    return acc;
}

/* Outer mode: thread ty of by combines positions r0 + ty, r0 + ty + by, ... of one output. */
template <class Op>
__host__ __device__ __forceinline__ typename Op::Acc reduce_thread_outer(const Op &op, const RedArgs &a,
                                                                         const char *base, int64_t r0, int64_t r1,
                                                                         typename Op::Ctx ctx, int ty, int by)
{
    typedef typename Op::T T;
    typedef typename Op::Acc Acc;
    Acc acc = op.identity();
    if (a.red_linear) {
        const int64_t s = a.red_stride;
        for (int64_t r = r0 + ty; r < r1; r += by) {
            acc = op.combine(acc, op.element(*(const T *)(base + r * s), r, ctx));
        }
    } else {
        for (int64_t r = r0 + ty; r < r1; r += by) {
            int64_t off[1];
            a.red.offsets(r, off);
            acc = op.combine(acc, op.element(*(const T *)(base + off[0]), r, ctx));
        }
    }
    return acc;
}

/* The result of output o, chunk c: finished, or kept as a partial. */
template <class Op>
__host__ __device__ __forceinline__ void reduce_write(const Op &op, const RedArgs &a, typename Op::Acc acc, int64_t o,
                                                      int64_t c, typename Op::Ctx ctx, const int64_t (&off)[3])
{
    if (a.nchunks == 1) {
        op.finish(a, acc, ctx, off);
    } else {
        ((typename Op::Acc *)a.partials)[o * a.nchunks + c] = acc;
    }
}

/* Lane `lane` of the warp combining output o's partials (in chunk order within the lane). */
template <class Op>
__host__ __device__ __forceinline__ typename Op::Acc reduce_partials_thread(const Op &op, const RedArgs &a, int64_t o,
                                                                            int lane)
{
    typedef typename Op::Acc Acc;
    Acc acc = op.identity();
    const Acc *p = (const Acc *)a.partials + o * a.nchunks;
    for (int64_t j = lane; j < a.nchunks; j += 32) {
        acc = op.combine(acc, p[j]);
    }
    return acc;
}

/* The trees that combine threads, as the host harness replays them: a warp's shuffle-down tree
 * leaves combine(v[l], v[l + off]) in lane l for off = 16, 8, 4, 2, 1; blocks of several warps
 * combine the warps' lane-0 results the same way; outer mode halves threadIdx.y. */
template <class Op>
__host__ typename Op::Acc host_warp_tree(const Op &op, typename Op::Acc *v)
{
    for (int off = 16; off > 0; off >>= 1) {
        for (int l = 0; l + off < 32; l++) {
            v[l] = op.combine(v[l], v[l + off]);
        }
    }
    return v[0];
}

template <class Op>
__host__ typename Op::Acc host_row_tree(const Op &op, typename Op::Acc *v, int bx)
{
    typedef typename Op::Acc Acc;
    if (bx == 32) {
        return host_warp_tree(op, v);
    }
    Acc w[32];
    int nw = bx / 32;
    for (int k = 0; k < 32; k++) {
        w[k] = k < nw ? host_warp_tree(op, v + 32 * k) : op.identity();
    }
    return host_warp_tree(op, w);
}

template <class Op>
__host__ typename Op::Acc host_column_tree(const Op &op, typename Op::Acc *v, int by)
{
    for (int s = by / 2; s > 0; s >>= 1) {
        for (int y = 0; y < s; y++) {
            v[y] = op.combine(v[y], v[y + s]);
        }
    }
    return v[0];
}

/* --- kernels ---------------------------------------------------------------------------------------- */
/* Combines the bx threads of a block row (bx == 32: one warp; bx > 32: by == 1, up to 16 warps).
 * The result is in threadIdx.x == 0. */
template <class Op>
__device__ __forceinline__ typename Op::Acc block_row_reduce(const Op &op, typename Op::Acc acc,
                                                             typename Op::Acc *warp_vals, int tx, int bx)
{
    for (int off = 16; off > 0; off >>= 1) {
        acc = op.combine(acc, Op::shfl_down(acc, off));
    }
    if (bx == 32) {
        return acc;
    }
    const int lane = tx & 31, warp = tx >> 5, nw = bx >> 5;
    if (lane == 0) {
        warp_vals[warp] = acc;
    }
    __syncthreads();
    if (warp == 0) {
        acc = lane < nw ? warp_vals[lane] : op.identity();
        for (int off = 16; off > 0; off >>= 1) {
            acc = op.combine(acc, Op::shfl_down(acc, off));
        }
    }
    __syncthreads(); /* warp_vals is reused by the next output */
    return acc;
}

/* Inner mode. block (bx, by): row ty handles output g * by + ty; grid (groups, nchunks). */
template <class Op>
__global__ void __launch_bounds__(512) reduce_inner_kernel(const __grid_constant__ RedArgs a)
{
    typedef typename Op::Acc Acc;
    __shared__ Acc warp_vals[16];
    const Op op(a);
    const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
    const int64_t c = blockIdx.y;
    const int64_t r0 = c * a.chunk;
    const int64_t r1 = r0 + a.chunk < a.R ? r0 + a.chunk : a.R;
    for (int64_t g = blockIdx.x; g < a.groups; g += gridDim.x) {
        const int64_t o = g * by + ty;
        Acc acc = op.identity();
        typename Op::Ctx ctx{};
        int64_t off[3] = {0, 0, 0};
        if (o < a.O) {
            a.kept.offsets(o, off);
            ctx = op.context(a, off);
            acc = reduce_thread_inner(op, a, a.in + off[0], r0, r1, ctx, tx, bx);
        }
        acc = block_row_reduce(op, acc, warp_vals, tx, bx);
        if (tx == 0 && o < a.O) {
            reduce_write(op, a, acc, o, c, ctx, off);
        }
    }
}

/* Outer mode. block (bx, by): column tx handles output g * bx + tx, rows split its range;
 * dynamic shared memory: bx * by accumulators. */
template <class Op>
__global__ void __launch_bounds__(256) reduce_outer_kernel(const __grid_constant__ RedArgs a)
{
    typedef typename Op::Acc Acc;
    extern __shared__ double2 ct_red_outer_smem[]; /* 16-byte aligned */
    Acc *sm = (Acc *)ct_red_outer_smem;
    const Op op(a);
    const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
    const int64_t c = blockIdx.y;
    const int64_t r0 = c * a.chunk;
    const int64_t r1 = r0 + a.chunk < a.R ? r0 + a.chunk : a.R;
    for (int64_t g = blockIdx.x; g < a.groups; g += gridDim.x) {
        const int64_t o = g * bx + tx;
        Acc acc = op.identity();
        typename Op::Ctx ctx{};
        int64_t off[3] = {0, 0, 0};
        if (o < a.O) {
            a.kept.offsets(o, off);
            ctx = op.context(a, off);
            acc = reduce_thread_outer(op, a, a.in + off[0], r0, r1, ctx, ty, by);
        }
        if (by > 1) {
            sm[ty * bx + tx] = acc;
            __syncthreads();
            for (int s = by / 2; s > 0; s >>= 1) {
                if (ty < s) {
                    sm[ty * bx + tx] = op.combine(sm[ty * bx + tx], sm[(ty + s) * bx + tx]);
                }
                __syncthreads();
            }
            acc = sm[tx];
            __syncthreads(); /* sm is reused by the next group */
        }
        if (ty == 0 && o < a.O) {
            reduce_write(op, a, acc, o, c, ctx, off);
        }
    }
}

/* The chunks of each output in order: a warp per output, kPartialRows outputs per block. */
template <class Op>
__global__ void __launch_bounds__(256) reduce_partials_kernel(const __grid_constant__ RedArgs a)
{
    typedef typename Op::Acc Acc;
    const Op op(a);
    const int64_t groups = ceil_div(a.O, kPartialRows);
    for (int64_t g = blockIdx.x; g < groups; g += gridDim.x) {
        const int64_t o = g * kPartialRows + threadIdx.y;
        Acc acc = o < a.O ? reduce_partials_thread(op, a, o, threadIdx.x) : op.identity();
        for (int off = 16; off > 0; off >>= 1) {
            acc = op.combine(acc, Op::shfl_down(acc, off));
        }
        if (threadIdx.x == 0 && o < a.O) {
            int64_t off[3];
            a.kept.offsets(o, off);
            op.finish(a, acc, op.context(a, off), off);
        }
    }
}

/* Launches a reduction planned by L (partials in scratch memory when chunked). PartialOp
 * combines and finishes the partials (the same accumulator and finish as Op). */
template <class Op, class PartialOp>
int launch_reduction(RedArgs a, const RedLaunch &L, int device, cudaStream_t stream)
{
    typedef typename Op::Acc Acc;
    static_assert(std::is_same<Acc, typename PartialOp::Acc>::value, "partials must share the accumulator");
    CtScratch partials;
    a.groups = L.groups;
    a.nchunks = L.nchunks;
    a.chunk = L.chunk;
    if (L.nchunks > 1) {
        CT_CUDA_TRY(partials.alloc(device, (size_t)a.O * (size_t)L.nchunks * sizeof(Acc)));
        a.partials = partials.ptr;
    }
    dim3 grid(L.grid_x, (unsigned int)L.nchunks), block(L.bx, L.by);
    if (L.inner) {
        reduce_inner_kernel<Op><<<grid, block, 0, stream>>>(a);
    } else {
        reduce_outer_kernel<Op><<<grid, block, (size_t)L.bx * L.by * sizeof(Acc), stream>>>(a);
    }
    CT_CUDA_CHECK_LAUNCH();
    if (L.nchunks > 1) {
        int64_t groups = ceil_div(a.O, kPartialRows);
        unsigned int gx = (unsigned int)(groups < (int64_t)INT32_MAX ? groups : (int64_t)INT32_MAX);
        reduce_partials_kernel<PartialOp><<<gx, dim3(32, kPartialRows), 0, stream>>>(a);
        CT_CUDA_CHECK_LAUNCH();
    }
    return CT_CUDA_OK;
}

/* --- dispatch of reductions --------------------------------------------------------------------- */
template <int IN, typename ACC, int OP>
int launch_reduce_op(const RedArgs &a, const RedLaunch &L, int device, cudaStream_t stream)
{
    return launch_reduction<ReduceOp<IN, ACC, OP>, ReduceOp<CanonicalIn<ACC>::value, ACC, OP>>(a, L, device,
                                                                                                 stream);
}

typedef int (*ReduceLauncher)(const RedArgs &, const RedLaunch &, int, cudaStream_t);

template <int IN, typename ACC>
struct ReduceRow {
    static constexpr ReduceLauncher ops[4] = {
        &launch_reduce_op<IN, ACC, CT_COMBINE_SUM>, &launch_reduce_op<IN, ACC, CT_COMBINE_PROD>,
        &launch_reduce_op<IN, ACC, CT_COMBINE_MAX>, &launch_reduce_op<IN, ACC, CT_COMBINE_MIN>};
};

} /* namespace */

/* Whether (input dtype, accumulator) is a pair the ops produce: float32/float16/bfloat16 in
 * float or double (all/any), float64 in double, integers and bool in int64. */
__host__ inline bool ct_cuda_reduce_pair_supported(int in, int acc)
{
    bool lowp = in == CT_F16 || in == CT_BF16 || in == CT_F32;
    switch (acc) {
    case CT_ACC_F32:
        return lowp;
    case CT_ACC_F64:
        return lowp || in == CT_F64;
    default:
        return !lowp && in != CT_F64;
    }
}

/* Fills the kernel form of d (everything but the launch fields). */
__host__ inline void ct_cuda_reduce_args(RedArgs &a, const CtReduceDesc *d)
{
    memset(&a, 0, sizeof(a));
    int nk = 0, nr = 0;
    for (int i = 0; i < d->ndim; i++) {
        if (d->reduced[i]) {
            a.red.shape[nr] = d->shape[i];
            a.red.strides[nr][0] = d->in_strides[i];
            nr++;
        } else {
            a.kept.shape[nk] = d->shape[i];
            a.kept.strides[nk][0] = d->in_strides[i];
            a.kept.strides[nk][1] = d->out_strides[i];
            a.kept.strides[nk][2] = d->shift_strides[i];
            nk++;
        }
    }
    if (nr == 0) { /* nothing reduced: one element per output */
        a.red.shape[0] = 1;
        a.red.strides[0][0] = 0;
        nr = 1;
    }
    a.kept.ndim = nk;
    a.red.ndim = nr;
    a.kept.finalize();
    a.red.finalize();
    a.red_linear = nr == 1;
    a.red_stride = a.red.strides[0][0];
    a.O = d->out_numel;
    a.R = 1;
    for (int k = 0; k < nr; k++) {
        a.R *= a.red.shape[k];
    }
    a.in = d->in;
    a.out0 = d->out;
    a.out1 = (char *)d->shift;
    a.out_dtype = d->out_dtype;
    a.map = d->map;
    a.final = d->final;
    a.p = d->p;
    a.divisor = d->divisor;
}

/* Inner mode when the fastest dim is reduced and long enough to share among a warp's threads
 * (or nothing is kept); outer mode otherwise (and for empty reductions). */
__host__ inline bool ct_cuda_reduce_inner(const CtReduceDesc *d, const RedArgs &a)
{
    if (a.R == 0) {
        return false;
    }
    return a.kept.ndim == 0 || (d->reduced[0] && d->shape[0] >= 16);
}

namespace {
/* [input dtype][accumulator]: the four combines of each pair the ops produce (see
 * ct_cuda_reduce_pair_supported), NULL elsewhere. */
const ReduceLauncher *const kReduceTable[CT_NUM_DTYPES][3] = {
    /* accumulators: float, double, int64 */
    {nullptr, nullptr, ReduceRow<CT_BOOL, int64_t>::ops},
    {nullptr, nullptr, ReduceRow<CT_U8, int64_t>::ops},
    {nullptr, nullptr, ReduceRow<CT_I8, int64_t>::ops},
    {nullptr, nullptr, ReduceRow<CT_I16, int64_t>::ops},
    {nullptr, nullptr, ReduceRow<CT_I32, int64_t>::ops},
    {nullptr, nullptr, ReduceRow<CT_I64, int64_t>::ops},
    {ReduceRow<CT_F16, float>::ops, ReduceRow<CT_F16, double>::ops, nullptr},
    {ReduceRow<CT_BF16, float>::ops, ReduceRow<CT_BF16, double>::ops, nullptr},
    {ReduceRow<CT_F32, float>::ops, ReduceRow<CT_F32, double>::ops, nullptr},
    {nullptr, ReduceRow<CT_F64, double>::ops, nullptr},
};
static_assert(CT_BOOL == 0 && CT_U8 == 1 && CT_I8 == 2 && CT_I16 == 3 && CT_I32 == 4 && CT_I64 == 5 &&
                  CT_F16 == 6 && CT_BF16 == 7 && CT_F32 == 8 && CT_F64 == 9 && CT_NUM_DTYPES == 10,
              "the table follows CT_DTYPE_LIST");
static_assert(CT_ACC_F32 == 0 && CT_ACC_F64 == 1 && CT_ACC_I64 == 2, "accumulator columns");
} /* namespace */

int ct_cuda_reduce(const CtReduceDesc *d)
{
    if (d->out_numel <= 0) {
        return 0;
    }
    const ReduceLauncher *row = kReduceTable[d->in_dtype][d->acc];
    if (row == nullptr || d->combine < 0 || d->combine > CT_COMBINE_MIN) {
        ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "reduction of %s in accumulator %d is not implemented on CUDA",
                          ct_red_dtype_name(d->in_dtype), (int)d->acc);
        return ct_cuda_raise(CT_CUDA_NOT_IMPLEMENTED);
    }
    RedArgs a;
    ct_cuda_reduce_args(a, d);
    RedLaunch L = plan_reduction(a.O, a.R, ct_cuda_reduce_inner(d, a), 16 / ct_red_itemsize(d->in_dtype));
    int status = ct_cuda_device_guard(d->device);
    if (status == CT_CUDA_OK) {
        status = row[d->combine](a, L, d->device, ct_cuda_stream(d->device));
    }
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}

/* --- arg-reductions -------------------------------------------------------------------------------- */
/* A line op as a reduction: outputs are the lines (operands: input, values, indices), the
 * reduced index runs along the dim. */
__host__ inline void ct_cuda_arg_args(RedArgs &a, const CtDimDesc *d, bool is_max)
{
    memset(&a, 0, sizeof(a));
    a.kept.ndim = d->nouter;
    for (int k = 0; k < d->nouter; k++) {
        a.kept.shape[k] = d->outer_shape[k];
        for (int op = 0; op < 3; op++) {
            a.kept.strides[k][op] = d->outer_strides[k][op];
        }
    }
    a.kept.finalize();
    a.red.ndim = 1;
    a.red.shape[0] = d->n;
    a.red.strides[0][0] = d->dim_strides[0];
    a.red.finalize();
    a.red_linear = true;
    a.red_stride = d->dim_strides[0];
    a.O = d->outer_numel;
    a.R = d->n;
    a.in = d->data[0];
    a.out0 = d->data[1];
    a.out1 = d->data[2];
    a.is_max = is_max;
}

namespace {
template <int D>
int launch_arg(const RedArgs &a, const RedLaunch &L, int device, cudaStream_t stream)
{
    return launch_reduction<ArgOp<D>, ArgOp<D>>(a, L, device, stream);
}
} /* namespace */

int ct_cuda_arg_reduce(const CtDimDesc *d, bool is_max)
{
    static const ReduceLauncher table[CT_NUM_DTYPES] = {
        launch_arg<CT_BOOL>, launch_arg<CT_U8>,  launch_arg<CT_I8>,   launch_arg<CT_I16>, launch_arg<CT_I32>,
        launch_arg<CT_I64>,  launch_arg<CT_F16>, launch_arg<CT_BF16>, launch_arg<CT_F32>, launch_arg<CT_F64>,
    };
    if (d->outer_numel <= 0 || d->n <= 0) {
        return 0;
    }
    RedArgs a;
    ct_cuda_arg_args(a, d, is_max);
    RedLaunch L = plan_reduction(a.O, a.R, ct_lines_cooperative(d) && (d->n >= 16 || d->nouter == 0),
                                 16 / ct_red_itemsize(d->dtypes[0]));
    int status = ct_cuda_device_guard(d->device);
    if (status == CT_CUDA_OK) {
        status = table[d->dtypes[0]](a, L, d->device, ct_cuda_stream(d->device));
    }
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}

/* --- scans and softmax: the per-line bodies (host-callable) ------------------------------------ */
namespace {

constexpr int kScanItems = 4; /* consecutive elements per thread and tile of the block scan */

/* The scan's accumulator: double for floats, uint64 (wrapping) for integers and bool. */
template <int D>
struct ScanAcc {
    typedef typename std::conditional<std::is_floating_point<typename CtCudaType<D>::Acc>::value, double,
                                      uint64_t>::type S;
};

template <typename S>
__host__ __device__ __forceinline__ void scan_store(char *p, int dtype, S v)
{
    if constexpr (std::is_same<S, double>::value) {
        ct_store_any(p, dtype, v);
    } else {
        ct_store_any(p, dtype, (int64_t)v);
    }
}

/* The scans' operators (CtScanOp): a running state S, its identity, the state of the element at
 * position i, the combination of an earlier state a with a later one b (associative, so that
 * the block scan may regroup), the outputs of position i, and a warp shuffle of S. */
template <int D>
struct SumProdScan {
    typedef typename ScanAcc<D>::S S;
    int op; /* CT_SCAN_SUM or CT_SCAN_PROD */
    __host__ __device__ __forceinline__ S identity() const { return op == CT_SCAN_SUM ? (S)0 : (S)1; }
    __host__ __device__ __forceinline__ S element(const char *p, int64_t) const { return (S)ct_load<D>(p); }
    __host__ __device__ __forceinline__ S combine(S a, S b) const { return op == CT_SCAN_SUM ? a + b : a * b; }
    __host__ __device__ __forceinline__ void store(const CtLineArgs &a, const int64_t (&off)[3], int64_t i, S v) const
    {
        scan_store(a.data[1] + off[1] + i * a.dim_strides[1], a.dtypes[1], v);
    }
    __device__ __forceinline__ static S shfl_up(S v, int dist) { return ct_shfl_up(v, dist); }
};

/* logcumsumexp: logaddexp in double, the CPU's function (it is symmetric, so the regrouping of
 * the block scan only changes the rounding). */
template <int D>
struct LogSumExpScan {
    typedef double S;
    __host__ __device__ __forceinline__ S identity() const { return -INFINITY; }
    __host__ __device__ __forceinline__ S element(const char *p, int64_t) const { return (S)ct_load<D>(p); }
    __host__ __device__ __forceinline__ S combine(S a, S b) const { return ct_sm_logaddexp_double(b, a); }
    __host__ __device__ __forceinline__ void store(const CtLineArgs &a, const int64_t (&off)[3], int64_t i, S v) const
    {
        ct_store_any(a.data[1] + off[1] + i * a.dim_strides[1], a.dtypes[1], v);
    }
    __device__ __forceinline__ static S shfl_up(S v, int dist) { return ct_shfl_up(v, dist); }
};

/* cummax/cummin: the value (exact in double or int64) and the index where it was last reached;
 * the later state wins on ties and when it is NaN. Index -1 marks the identity. */
template <int D>
struct ExtremumScan {
    typedef typename std::conditional<std::is_floating_point<typename CtCudaType<D>::Acc>::value, double,
                                      int64_t>::type V;
    struct S {
        V v;
        int64_t i;
    };
    int is_max;
    __host__ __device__ __forceinline__ S identity() const { return S{(V)0, -1}; }
    __host__ __device__ __forceinline__ S element(const char *p, int64_t i) const { return S{(V)ct_load<D>(p), i}; }
    __host__ __device__ __forceinline__ S combine(S a, S b) const
    {
        if (a.i < 0 || b.i < 0) {
            return a.i < 0 ? b : a;
        }
        const bool later = (is_max ? b.v >= a.v : b.v <= a.v) || ct_red_isnan(b.v);
        return later ? b : a;
    }
    __host__ __device__ __forceinline__ void store(const CtLineArgs &a, const int64_t (&off)[3], int64_t i, S v) const
    {
        ct_store_any(a.data[1] + off[1] + i * a.dim_strides[1], a.dtypes[1], v.v);
        *(int64_t *)(a.data[2] + off[2] + i * a.dim_strides[2]) = v.i;
    }
    __device__ __forceinline__ static S shfl_up(S v, int dist)
    {
        return S{ct_shfl_up(v.v, dist), ct_shfl_up(v.i, dist)};
    }
};

/* One line, sequentially: the CPU's loop (same accumulator, same order, same bits). */
template <int D, class Op>
__host__ __device__ __forceinline__ void scan_line_with(const CtLineArgs &a, const int64_t (&off)[3], const Op &f)
{
    const char *in = a.data[0] + off[0];
    typename Op::S acc = f.identity();
    for (int64_t i = 0; i < a.n; i++) {
        acc = f.combine(acc, f.element(in + i * a.dim_strides[0], i));
        f.store(a, off, i, acc);
    }
}

/* The same, for a CtScanOp given at run time (tests/cuda_host). */
template <int D>
__host__ __device__ __forceinline__ void scan_line_serial(const CtLineArgs &a, const int64_t (&off)[3], int op)
{
    if (op == CT_SCAN_MAX || op == CT_SCAN_MIN) {
        scan_line_with<D>(a, off, ExtremumScan<D>{op == CT_SCAN_MAX});
    } else if (op == CT_SCAN_LOGSUMEXP) {
        scan_line_with<D>(a, off, LogSumExpScan<D>{});
    } else {
        scan_line_with<D>(a, off, SumProdScan<D>{op});
    }
}

/* Softmax computes in float, or double for float64, as the CPU. */
template <int D>
struct SoftmaxType {
    typedef typename std::conditional<D == CT_F64, double, float>::type C;
};
__host__ __device__ __forceinline__ float softmax_exp(float x) { return expf(x); }
__host__ __device__ __forceinline__ double softmax_exp(double x) { return exp(x); }
__host__ __device__ __forceinline__ float softmax_log(float x) { return logf(x); }
__host__ __device__ __forceinline__ double softmax_log(double x) { return log(x); }
/* m: the running maximum, x: the next value (or another thread's maximum); NaN sticks. */
__host__ __device__ __forceinline__ float softmax_max(float m, float x) { return ct_red_softmax_max_f32(m, x); }
__host__ __device__ __forceinline__ double softmax_max(double m, double x) { return ct_red_softmax_max_f64(m, x); }

/* Softmax of one line, sequentially: the CPU's three passes. */
template <int D>
__host__ __device__ __forceinline__ void softmax_line_serial(const CtLineArgs &a, const int64_t (&off)[3],
                                                             bool log_out)
{
    typedef typename SoftmaxType<D>::C C;
    const char *in = a.data[0] + off[0];
    char *out = a.data[1] + off[1];
    const int64_t s0 = a.dim_strides[0], s1 = a.dim_strides[1];
    C mx = -(C)INFINITY, sum = 0;
    for (int64_t i = 0; i < a.n; i++) {
        mx = softmax_max(mx, (C)ct_load<D>(in + i * s0));
    }
    for (int64_t i = 0; i < a.n; i++) {
        sum += softmax_exp((C)ct_load<D>(in + i * s0) - mx);
    }
    C lse = softmax_log(sum);
    for (int64_t i = 0; i < a.n; i++) {
        C x = (C)ct_load<D>(in + i * s0);
        ct_store_any(out + i * s1, a.dtypes[1], log_out ? x - mx - lse : softmax_exp(x - mx) / sum);
    }
}

/* The configuration of the cooperative line kernels: `group` threads per line, `rows` lines per
 * block; a function of the shape only. */
__host__ inline void plan_lines(CtLineArgs &a, int64_t long_line)
{
    a.group = a.n <= long_line ? 32 : (long_line >= 1024 ? 512 : 256);
    a.rows = 256 / a.group > 0 ? 256 / a.group : 1;
    a.groups = ceil_div(a.lines, a.rows);
}

__host__ inline unsigned int grid_of(int64_t blocks)
{
    return (unsigned int)(blocks < 1 ? 1 : blocks < (int64_t)INT32_MAX ? blocks : (int64_t)INT32_MAX);
}

/* --- scan and softmax kernels ------------------------------------------------------------------- */
/* One thread per line. */
template <int D, class Op>
__global__ void __launch_bounds__(CT_RED_LINE_THREADS) scan_serial_kernel(const __grid_constant__ CtLineArgs a, Op f)
{
    for (int64_t l = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; l < a.lines;
         l += (int64_t)gridDim.x * blockDim.x) {
        int64_t off[3];
        a.outer.offsets(l, off);
        scan_line_with<D>(a, off, f);
    }
}

/* block (group, rows): row ty scans line g * rows + ty in tiles of group * kScanItems elements.
 * Each thread scans its kScanItems elements in order, the warps scan their threads' totals
 * with shuffles, the warps' totals are combined in warp order, and a carry crosses tiles: a
 * fixed order for a given shape. */
template <int D, class Op>
__global__ void __launch_bounds__(256) scan_coop_kernel(const __grid_constant__ CtLineArgs a, Op f)
{
    typedef typename Op::S S;
    __shared__ S warp_tot[8][8]; /* [row][warp]: (32 threads, 8 rows) or (256 threads, 1 row) */
    const int tx = threadIdx.x, ty = threadIdx.y, G = blockDim.x, rows = blockDim.y;
    const int lane = tx & 31, warp = tx >> 5, nw = G >> 5;
    const S ident = f.identity();
    const int64_t s0 = a.dim_strides[0];
    for (int64_t g = blockIdx.x; g < a.groups; g += gridDim.x) {
        const int64_t l = g * rows + ty;
        const bool valid = l < a.lines;
        int64_t off[3] = {0, 0, 0};
        if (valid) {
            a.outer.offsets(l, off);
        }
        const char *in = a.data[0] + off[0];
        S carry = ident;
        for (int64_t base = 0; base < a.n; base += (int64_t)G * kScanItems) {
            S v[kScanItems];
            S run = ident;
            const int64_t i0 = base + (int64_t)tx * kScanItems;
CT_UNROLL
            for (int k = 0; k < kScanItems; k++) {
                if (valid && i0 + k < a.n) {
                    run = f.combine(run, f.element(in + (i0 + k) * s0, i0 + k));
                }
                v[k] = run;
            }
            S incl = run;
            for (int dist = 1; dist < 32; dist <<= 1) {
                S y = Op::shfl_up(incl, dist);
                if (lane >= dist) {
                    incl = f.combine(y, incl);
                }
            }
            S excl = Op::shfl_up(incl, 1);
            if (lane == 0) {
                excl = ident;
            }
            if (lane == 31) {
                warp_tot[ty][warp] = incl;
            }
            __syncthreads();
            S before = ident, total = ident;
            for (int w = 0; w < nw; w++) {
                S t = warp_tot[ty][w];
                if (w < warp) {
                    before = f.combine(before, t);
                }
                total = f.combine(total, t);
            }
            const S prefix = f.combine(carry, f.combine(before, excl));
CT_UNROLL
            for (int k = 0; k < kScanItems; k++) {
                if (valid && i0 + k < a.n) {
                    f.store(a, off, i0 + k, f.combine(prefix, v[k]));
                }
            }
            carry = f.combine(carry, total);
            __syncthreads(); /* warp_tot is rewritten by the next tile */
        }
    }
}

/* f over the `group` threads of a block row, the result in every thread of the row (group 32:
 * one warp; group > 32: one row per block, sm holds 17 values). */
template <typename C, class F>
__device__ __forceinline__ C group_allreduce(C v, F f, C identity, C *sm, int tx, int group)
{
    for (int off = 16; off > 0; off >>= 1) {
        v = f(v, ct_shfl_down(v, off));
    }
    if (group == 32) {
        return ct_shfl_idx(v, 0);
    }
    const int lane = tx & 31, warp = tx >> 5;
    if (lane == 0) {
        sm[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        v = lane < (group >> 5) ? sm[lane] : identity;
        for (int off = 16; off > 0; off >>= 1) {
            v = f(v, ct_shfl_down(v, off));
        }
        if (lane == 0) {
            sm[16] = v;
        }
    }
    __syncthreads();
    v = sm[16];
    __syncthreads(); /* sm is reused by the next reduction */
    return v;
}

template <typename C>
struct SoftmaxMaxOf {
    __device__ __forceinline__ C operator()(C a, C b) const { return softmax_max(a, b); }
};
template <typename C>
struct SumOf {
    __device__ __forceinline__ C operator()(C a, C b) const { return a + b; }
};

template <int D>
__global__ void __launch_bounds__(CT_RED_LINE_THREADS) softmax_serial_kernel(const __grid_constant__ CtLineArgs a,
                                                                             int log_out)
{
    for (int64_t l = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; l < a.lines;
         l += (int64_t)gridDim.x * blockDim.x) {
        int64_t off[3];
        a.outer.offsets(l, off);
        softmax_line_serial<D>(a, off, log_out != 0);
    }
}

/* block (group, rows): the max, the sum of exp(x - max) and the output of line g * rows + ty. */
template <int D>
__global__ void __launch_bounds__(512) softmax_coop_kernel(const __grid_constant__ CtLineArgs a, int log_out)
{
    typedef typename SoftmaxType<D>::C C;
    __shared__ C sm[17];
    const int tx = threadIdx.x, ty = threadIdx.y, G = blockDim.x, rows = blockDim.y;
    const int64_t s0 = a.dim_strides[0], s1 = a.dim_strides[1];
    for (int64_t g = blockIdx.x; g < a.groups; g += gridDim.x) {
        const int64_t l = g * rows + ty;
        const bool valid = l < a.lines;
        int64_t off[3] = {0, 0, 0};
        if (valid) {
            a.outer.offsets(l, off);
        }
        const char *in = a.data[0] + off[0];
        char *out = a.data[1] + off[1];
        C mx = -(C)INFINITY;
        if (valid) {
            for (int64_t i = tx; i < a.n; i += G) {
                mx = softmax_max(mx, (C)ct_load<D>(in + i * s0));
            }
        }
        mx = group_allreduce(mx, SoftmaxMaxOf<C>(), -(C)INFINITY, sm, tx, G);
        C sum = 0;
        if (valid) {
            for (int64_t i = tx; i < a.n; i += G) {
                sum += softmax_exp((C)ct_load<D>(in + i * s0) - mx);
            }
        }
        sum = group_allreduce(sum, SumOf<C>(), (C)0, sm, tx, G);
        if (valid) {
            const C lse = softmax_log(sum);
            for (int64_t i = tx; i < a.n; i += G) {
                C x = (C)ct_load<D>(in + i * s0);
                ct_store_any(out + i * s1, a.dtypes[1], log_out ? x - mx - lse : softmax_exp(x - mx) / sum);
            }
        }
    }
}

typedef int (*LineLauncher)(CtLineArgs &, bool coop, int param, cudaStream_t);

template <int D, class Op>
int launch_scan_with(CtLineArgs &a, bool coop, const Op &f, cudaStream_t stream)
{
    if (coop) {
        plan_lines(a, (int64_t)32 * kScanItems * 4);
        scan_coop_kernel<D, Op><<<grid_of(a.groups), dim3(a.group, a.rows), 0, stream>>>(a, f);
    } else {
        scan_serial_kernel<D, Op><<<grid_of(ceil_div(a.lines, CT_RED_LINE_THREADS)), CT_RED_LINE_THREADS, 0, stream>>>(
            a, f);
    }
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

template <int D>
int launch_scan(CtLineArgs &a, bool coop, int op, cudaStream_t stream)
{
    if (op == CT_SCAN_MAX || op == CT_SCAN_MIN) {
        return launch_scan_with<D>(a, coop, ExtremumScan<D>{op == CT_SCAN_MAX}, stream);
    }
    if (op == CT_SCAN_LOGSUMEXP) {
        if constexpr (std::is_floating_point<typename CtCudaType<D>::Acc>::value) {
            return launch_scan_with<D>(a, coop, LogSumExpScan<D>{}, stream);
        }
        return ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "logcumsumexp of %s is not implemented on CUDA",
                                 ct_red_dtype_name(D));
    }
    return launch_scan_with<D>(a, coop, SumProdScan<D>{op}, stream);
}

template <int D>
int launch_softmax(CtLineArgs &a, bool coop, int log_out, cudaStream_t stream)
{
    if (coop) {
        plan_lines(a, 1024);
        softmax_coop_kernel<D><<<grid_of(a.groups), dim3(a.group, a.rows), 0, stream>>>(a, log_out);
    } else {
        softmax_serial_kernel<D><<<grid_of(ceil_div(a.lines, CT_RED_LINE_THREADS)), CT_RED_LINE_THREADS, 0, stream>>>(
            a, log_out);
    }
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

/* Runs launcher over d's lines on d's device; 0 or -1 with an exception set. */
int run_lines(const CtDimDesc *d, LineLauncher launcher, int param)
{
    if (d->outer_numel <= 0 || d->n <= 0) {
        return 0;
    }
    CtLineArgs a;
    ct_line_args(a, d);
    int status = ct_cuda_device_guard(d->device);
    if (status == CT_CUDA_OK) {
        status = launcher(a, ct_lines_cooperative(d), param, ct_cuda_stream(d->device));
    }
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}

} /* namespace */

int ct_cuda_scan(const CtDimDesc *d, CtScanOp op)
{
    static const LineLauncher table[CT_NUM_DTYPES] = {
        launch_scan<CT_BOOL>, launch_scan<CT_U8>,  launch_scan<CT_I8>,   launch_scan<CT_I16>, launch_scan<CT_I32>,
        launch_scan<CT_I64>,  launch_scan<CT_F16>, launch_scan<CT_BF16>, launch_scan<CT_F32>, launch_scan<CT_F64>,
    };
    return run_lines(d, table[d->dtypes[0]], (int)op);
}

int ct_cuda_softmax(const CtDimDesc *d, bool log_out)
{
    static const LineLauncher table[CT_NUM_DTYPES] = {
        nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
        launch_softmax<CT_F16>, launch_softmax<CT_BF16>, launch_softmax<CT_F32>, launch_softmax<CT_F64>,
    };
    if (table[d->dtypes[0]] == nullptr) {
        ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "softmax of %s is not implemented on CUDA",
                          ct_red_dtype_name(d->dtypes[0]));
        return ct_cuda_raise(CT_CUDA_NOT_IMPLEMENTED);
    }
    return run_lines(d, table[d->dtypes[0]], log_out ? 1 : 0);
}
