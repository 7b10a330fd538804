/* reduce_cpu.c: the CPU kernels of the reduction family (struct CtReduceKernels, reduce.h).
 *
 * Reductions: the description's dims are split into kept and reduced lists and the work is cut
 * into units (an output, or a tile of outputs, times a chunk of the reduced elements) that
 * ct_parallel_for spreads over threads. The number of chunks depends only on the shape, and
 * every unit and every combination of partial results runs in a fixed order, so the same
 * input gives the same bits whatever the thread count. The accumulator-typed code is in
 * reduce_cpu_acc.inc (included three times below).
 *
 * Line ops (arg-reductions, scans, softmax, sort, median, mode) run one line per call, lines spread
 * over threads; lines are independent, so they are deterministic too. */
#include "dtype.h"
#include "parallel.h"
#include "reduce.h"
#include "scalar_math.h" /* logaddexp, shared with the elementwise family */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define BLOCK 256          /* elements converted into a stack buffer at a time */
#define LEAF 4096          /* contiguous elements summed pairwise before the cascade */
#define TILE_BYTES 8192    /* outer mode: accumulator lanes per tile, in bytes (a row fits L1) */
#define ROWS_PER_LEAF 64   /* outer mode: rows added into a tile before the cascade */
#define MAX_CHUNKS 64      /* most chunks the reduced elements of one output are cut into */
#define MIN_CHUNK 16384    /* fewest elements (per output) worth a chunk of its own */
#define UNIT_WORK 32768    /* elements per parallel task, below which threads do not pay */

/* The hot loops are compiled twice on x86-64 with GCC, for AVX2 and for the baseline, and the
 * loader picks one at run time (an ifunc): twice the vector width where the CPU has it. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define CT_RED_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CT_RED_CLONES
#endif

#define CT_RED_CAT2(a, b) a##_##b
#define CT_RED_CAT(a, b) CT_RED_CAT2(a, b)

/* --- the plan: the description split into kept and reduced dims ---------------------------- */
typedef struct {
    const CtReduceDesc *d;
    bool outer;  /* outer mode: kept dim 0 is tiled, rows are accumulated */
    bool direct; /* the input is already the accumulator type and the map is the identity */
    bool fused;  /* a float sum whose input is the accumulator type and whose map is cheap */
    int nk, nr;
    int64_t kshape[CT_MAX_DIMS], kin[CT_MAX_DIMS], kout[CT_MAX_DIMS], kshift[CT_MAX_DIMS];
    int64_t rshape[CT_MAX_DIMS], rin[CT_MAX_DIMS];
    int64_t R;       /* reduced elements per output */
    int64_t nchunks; /* chunks per output (or per tile) */
    int64_t tile;    /* outer mode: accumulator lanes per tile */
    int64_t ntiles;  /* outer mode: tiles along kept dim 0 */
    int64_t units;
    int64_t fold;    /* outer mode: rows per segment (see outer_reduce) */
    int nlevels;     /* outer mode: cascade levels a unit can need */
    int failed;      /* set (atomically) by a worker whose scratch allocation failed */
    void *partials;  /* nchunks > 1: [out_numel][nchunks] accumulators */
} Plan;

/* Offsets of canonical output o (kept dim 0 fastest) in the input, output and shift. */
static void plan_offsets(const Plan *pl, int64_t o, int64_t *idx, int64_t *in_off, int64_t *out_off,
                         int64_t *shift_off)
{
    *in_off = *out_off = *shift_off = 0;
    for (int k = 0; k < pl->nk; k++) {
        idx[k] = o % pl->kshape[k];
        o /= pl->kshape[k];
        *in_off += idx[k] * pl->kin[k];
        *out_off += idx[k] * pl->kout[k];
        *shift_off += idx[k] * pl->kshift[k];
    }
}

/* Moves the offsets from output o to output o + 1. */
static void plan_advance(const Plan *pl, int64_t *idx, int64_t *in_off, int64_t *out_off, int64_t *shift_off)
{
    for (int k = 0; k < pl->nk; k++) {
        idx[k]++;
        *in_off += pl->kin[k];
        *out_off += pl->kout[k];
        *shift_off += pl->kshift[k];
        if (idx[k] < pl->kshape[k]) {
            return;
        }
        *in_off -= idx[k] * pl->kin[k];
        *out_off -= idx[k] * pl->kout[k];
        *shift_off -= idx[k] * pl->kshift[k];
        idx[k] = 0;
    }
}

/* exp for float, written so that loops over arrays vectorise (libm's expf does not): Cody-Waite
 * reduction x = n ln2 + r, Cephes' degree-6 polynomial for e^r, and 2^n applied as two normal
 * factors so that results down to the subnormals come out right. Within 1.5 ulp of the exact
 * value; inf, -inf and NaN behave as expf. Used by softmax and logsumexp. */
static inline float ct_red_expf(float x)
{
    float xc = x < -104.0f ? -104.0f : (x > 88.75f ? 88.75f : x);
    float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f; /* round to nearest */
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float q = 1.9875691500e-4f;
    q = q * r + 1.3981999507e-3f;
    q = q * r + 8.3334519073e-3f;
    q = q * r + 4.1665795894e-2f;
    q = q * r + 1.6666665459e-1f;
    q = q * r + 5.0000001201e-1f;
    q = q * r * r + r + 1.0f;
    int32_t ni = (int32_t)n, h = ni / 2;
    int32_t b1 = (h + 127) * (1 << 23), b2 = (ni - h + 127) * (1 << 23);
    float s1, s2;
    memcpy(&s1, &b1, sizeof(s1));
    memcpy(&s2, &b2, sizeof(s2));
    float y = q * s1 * s2;
    y = x > 88.72283f ? INFINITY : y;
    y = x < -103.97f ? 0.0f : y;
    return x != x ? x : y;
}

/* The same in eight lanes with GCC/Clang vector extensions (GCC does not if-convert the float
 * selects of the scalar version into vector code by itself). A macro rather than a function:
 * 32-byte vectors may not cross a function boundary in the baseline ABI. In the AVX2 clone of
 * exp_sub_F32 this is one ymm register per step, in the default clone two xmm registers. */
typedef float ct_red_v8f __attribute__((vector_size(32)));
typedef int32_t ct_red_v8i __attribute__((vector_size(32)));
#define V8_SPLAT(a) ((ct_red_v8f){a, a, a, a, a, a, a, a})
#define V8_SELECT(m, a, b) ((ct_red_v8f)(((m) & (ct_red_v8i)(a)) | (~(m) & (ct_red_v8i)(b))))
#define V8_EXPF(y, x)                                                                            \
    do {                                                                                         \
        ct_red_v8f xc_ = V8_SELECT(x < V8_SPLAT(-104.0f), V8_SPLAT(-104.0f), x);                 \
        xc_ = V8_SELECT(xc_ > V8_SPLAT(88.75f), V8_SPLAT(88.75f), xc_);                          \
        ct_red_v8f n_ = (xc_ * 1.44269504088896341f + 12582912.0f) - 12582912.0f;                \
        ct_red_v8f r_ = xc_ - n_ * 0.693359375f;                                                 \
        r_ = r_ - n_ * -2.12194440e-4f;                                                          \
        ct_red_v8f q_ = V8_SPLAT(1.9875691500e-4f);                                              \
        q_ = q_ * r_ + 1.3981999507e-3f;                                                         \
        q_ = q_ * r_ + 8.3334519073e-3f;                                                         \
        q_ = q_ * r_ + 4.1665795894e-2f;                                                         \
        q_ = q_ * r_ + 1.6666665459e-1f;                                                         \
        q_ = q_ * r_ + 5.0000001201e-1f;                                                         \
        q_ = q_ * r_ * r_ + r_ + 1.0f;                                                           \
        ct_red_v8i ni_ = __builtin_convertvector(n_, ct_red_v8i), h_ = ni_ >> 1;                 \
        ct_red_v8f y_ = q_ * (ct_red_v8f)((h_ + 127) << 23) * (ct_red_v8f)((ni_ - h_ + 127) << 23); \
        y_ = V8_SELECT(x > V8_SPLAT(88.72283f), V8_SPLAT(INFINITY), y_);                         \
        y_ = V8_SELECT(x < V8_SPLAT(-103.97f), V8_SPLAT(0.0f), y_);                              \
        y = V8_SELECT(x != x, x, y_);                                                            \
    } while (0)

/* x[i] = exp(x[i] - s[i * step]) (step 0 or 1). */
CT_RED_CLONES static void exp_sub_F32(float *x, const float *s, int64_t step, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        ct_red_v8f v, sv = V8_SPLAT(s[0]), y;
        memcpy(&v, x + i, sizeof(v));
        if (step) {
            memcpy(&sv, s + i, sizeof(sv));
        }
        v = v - sv;
        V8_EXPF(y, v);
        memcpy(x + i, &y, sizeof(y));
    }
    for (; i < n; i++) {
        x[i] = ct_red_expf(x[i] - s[i * step]);
    }
}
static void exp_sub_F64(double *x, const double *s, int64_t step, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        x[i] = exp(x[i] - s[i * step]);
    }
}

/* --- the three accumulators ------------------------------------------------------------------ */
#define ACC_T float
#define SFX f32
#define ACC_DTYPE CT_F32
#define ACC_IS_INT 0
#define ACC_EXP_SUB exp_sub_F32
#define ACC_LOG logf
#define ACC_SQRT sqrtf
#define ACC_FABS fabsf
#define ACC_MASK_T int32_t
#ifdef __SSE2__
#define ACC_SSE_T __m128
#define ACC_SSE_SET1 _mm_set1_ps
#define ACC_SSE_LOADU _mm_loadu_ps
#define ACC_SSE_STOREU _mm_storeu_ps
#define ACC_SSE_MAX _mm_max_ps
#define ACC_SSE_MIN _mm_min_ps
#define ACC_SSE_OR _mm_or_ps
#define ACC_SSE_UNORD _mm_cmpunord_ps
#define ACC_SSE_MOVEMASK _mm_movemask_ps
#endif
#include "reduce_cpu_acc.inc"
#undef ACC_T
#undef SFX
#undef ACC_DTYPE
#undef ACC_IS_INT
#undef ACC_EXP_SUB
#undef ACC_LOG
#undef ACC_SQRT
#undef ACC_FABS
#undef ACC_MASK_T
#undef ACC_SSE_T
#undef ACC_SSE_SET1
#undef ACC_SSE_LOADU
#undef ACC_SSE_STOREU
#undef ACC_SSE_MAX
#undef ACC_SSE_MIN
#undef ACC_SSE_OR
#undef ACC_SSE_UNORD
#undef ACC_SSE_MOVEMASK

#define ACC_T double
#define SFX f64
#define ACC_DTYPE CT_F64
#define ACC_IS_INT 0
#define ACC_EXP_SUB exp_sub_F64
#define ACC_LOG log
#define ACC_SQRT sqrt
#define ACC_FABS fabs
#define ACC_MASK_T int64_t
#ifdef __SSE2__
#define ACC_SSE_T __m128d
#define ACC_SSE_SET1 _mm_set1_pd
#define ACC_SSE_LOADU _mm_loadu_pd
#define ACC_SSE_STOREU _mm_storeu_pd
#define ACC_SSE_MAX _mm_max_pd
#define ACC_SSE_MIN _mm_min_pd
#define ACC_SSE_OR _mm_or_pd
#define ACC_SSE_UNORD _mm_cmpunord_pd
#define ACC_SSE_MOVEMASK _mm_movemask_pd
#endif
#include "reduce_cpu_acc.inc"
#undef ACC_T
#undef SFX
#undef ACC_DTYPE
#undef ACC_IS_INT
#undef ACC_EXP_SUB
#undef ACC_LOG
#undef ACC_SQRT
#undef ACC_FABS
#undef ACC_MASK_T
#undef ACC_SSE_T
#undef ACC_SSE_SET1
#undef ACC_SSE_LOADU
#undef ACC_SSE_STOREU
#undef ACC_SSE_MAX
#undef ACC_SSE_MIN
#undef ACC_SSE_OR
#undef ACC_SSE_UNORD
#undef ACC_SSE_MOVEMASK

#define ACC_T int64_t
#define SFX i64
#define ACC_DTYPE CT_I64
#define ACC_IS_INT 1
#include "reduce_cpu_acc.inc"
#undef ACC_T
#undef SFX
#undef ACC_DTYPE
#undef ACC_IS_INT

/* Upper-case aliases so that stamping macros can paste CT_ACC_ names. */
#define load_F32 load_f32
#define load_F64 load_f64
#define load_I64 load_i64
#define store_F32 store_f32
#define store_F64 store_f64
#define store_I64 store_i64
#define block_reduce_F32 block_reduce_f32
#define block_reduce_F64 block_reduce_f64
#define block_reduce_I64 block_reduce_i64

/* --- reductions ------------------------------------------------------------------------------ */
static const CtDType acc_dtype[] = {[CT_ACC_F32] = CT_F32, [CT_ACC_F64] = CT_F64, [CT_ACC_I64] = CT_I64};
static const size_t acc_size[] = {[CT_ACC_F32] = 4, [CT_ACC_F64] = 8, [CT_ACC_I64] = 8};

static void plan_build(Plan *pl, const CtReduceDesc *d)
{
    memset(pl, 0, sizeof(*pl));
    pl->d = d;
    for (int i = 0; i < d->ndim; i++) {
        if (d->reduced[i]) {
            pl->rshape[pl->nr] = d->shape[i];
            pl->rin[pl->nr] = d->in_strides[i];
            pl->nr++;
        } else {
            pl->kshape[pl->nk] = d->shape[i];
            pl->kin[pl->nk] = d->in_strides[i];
            pl->kout[pl->nk] = d->out_strides[i];
            pl->kshift[pl->nk] = d->shift_strides[i];
            pl->nk++;
        }
    }
    if (pl->nr == 0) { /* nothing reduced: one element per output, outermost */
        pl->rshape[0] = 1;
        pl->rin[0] = 0;
        pl->nr = 1;
    }
    pl->R = 1;
    for (int k = 0; k < pl->nr; k++) {
        pl->R *= pl->rshape[k];
    }
    pl->direct = d->map == CT_MAP_IDENTITY && d->in_dtype == acc_dtype[d->acc];
    pl->fused = d->combine == CT_COMBINE_SUM && d->acc != CT_ACC_I64 && d->in_dtype == acc_dtype[d->acc] &&
                (d->map == CT_MAP_ABS || d->map == CT_MAP_SQUARE || d->map == CT_MAP_SQDIFF_SHIFT);
    /* Outer mode when the fastest dim is kept, or when the reduced runs are so short that
     * walking them output by output would cost more than the arithmetic. */
    pl->outer = pl->nk > 0 && pl->R > 0 && (!d->reduced[0] || pl->rshape[0] < 16);
    int64_t tile_w = 1, units_out = d->out_numel;
    if (pl->outer) {
        pl->tile = TILE_BYTES / (int64_t)acc_size[d->acc];
        pl->ntiles = (pl->kshape[0] + pl->tile - 1) / pl->tile;
        tile_w = pl->kshape[0] < pl->tile ? pl->kshape[0] : pl->tile;
        units_out = d->out_numel / pl->kshape[0] * pl->ntiles;
    }
    /* Cut the reduced elements into chunks only when there are too few outputs to keep the
     * threads busy. A function of the shape alone: the thread count must not change bits. */
    pl->nchunks = 1;
    if (units_out < 16 && pl->R >= 2) {
        int64_t want = (32 + units_out - 1) / units_out;
        int64_t most = pl->R * tile_w / MIN_CHUNK;
        if (most > pl->R) {
            most = pl->R;
        }
        if (want > most) {
            want = most;
        }
        if (want > MAX_CHUNKS) {
            want = MAX_CHUNKS;
        }
        pl->nchunks = want > 1 ? want : 1;
    }
    pl->units = units_out * pl->nchunks;
    pl->fold = 1;
    if (pl->outer && pl->ntiles == 1 && pl->kshape[0] * 2 <= pl->tile &&
        pl->rin[0] == pl->kshape[0] * pl->kin[0]) {
        pl->fold = pl->tile / pl->kshape[0];
    }
    /* segments per unit / ROWS_PER_LEAF leaves need bit_length(leaves) levels */
    int64_t leaves = (pl->R / pl->nchunks + 1) / ROWS_PER_LEAF + 1;
    pl->nlevels = 1;
    while (leaves >>= 1) {
        pl->nlevels++;
    }
}

static int cpu_reduce(const CtReduceDesc *d)
{
    Plan pl;
    plan_build(&pl, d);
    if (pl.nchunks > 1) { /* inner: [out_numel][nchunks] scalars; outer: [units][tile] vectors */
        size_t n = pl.outer ? (size_t)pl.units * (size_t)pl.tile : (size_t)d->out_numel * (size_t)pl.nchunks;
        pl.partials = malloc(n * acc_size[d->acc]);
        if (pl.partials == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    int64_t tile_w = pl.outer ? (pl.kshape[0] < pl.tile ? pl.kshape[0] : pl.tile) : 1;
    int64_t work = pl.R / pl.nchunks * tile_w + 1;
    int64_t grain = UNIT_WORK / work > 1 ? UNIT_WORK / work : 1;
    void (*units)(int64_t, int64_t, void *);
    void (*partials)(int64_t, int64_t, void *);
    switch (d->acc) {
    case CT_ACC_F32:
        units = pl.outer ? outer_units_f32 : inner_units_f32;
        partials = pl.outer ? outer_partials_f32 : partial_units_f32;
        break;
    case CT_ACC_F64:
        units = pl.outer ? outer_units_f64 : inner_units_f64;
        partials = pl.outer ? outer_partials_f64 : partial_units_f64;
        break;
    default:
        units = pl.outer ? outer_units_i64 : inner_units_i64;
        partials = pl.outer ? outer_partials_i64 : partial_units_i64;
        break;
    }
    ct_parallel_for(pl.units, grain, units, &pl);
    if (pl.nchunks > 1) {
        if (!pl.failed) {
            int64_t n = pl.outer ? pl.units / pl.nchunks : d->out_numel;
            int64_t per = pl.outer ? pl.nchunks * tile_w : pl.nchunks;
            ct_parallel_for(n, UNIT_WORK / per > 1 ? UNIT_WORK / per : 1, partials, &pl);
        }
        free(pl.partials);
    }
    if (pl.failed) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* --- lines ------------------------------------------------------------------------------------- */
/* A line function sees one line: ptr[op] points at its first element, d->dim_strides[op] steps
 * along it (d->n input elements). */
typedef void (*LineFn)(const CtDimDesc *d, const void *params, char *const *ptr, void *scratch);

/* A vertical function sees a tile of w neighbouring lines at once (ptr[op] at the first line,
 * d->outer_strides[0][op] bytes between lines, d->dim_strides[op] between rows) and walks the
 * rows in memory order; scratch holds VERT_SCRATCH accumulators per lane. */
typedef void (*VertFn)(const CtDimDesc *d, const void *params, char *const *ptr, int64_t w, void *scratch);
#define VERT_TILE 1024
#define VERT_SCRATCH 4

typedef struct {
    const CtDimDesc *d;
    LineFn fn;
    VertFn vfn;
    const void *params;
    size_t scratch_bytes;
    int64_t out_len[CT_DIM_OPS]; /* elements per line of each operand */
    int64_t tile;                /* > 0: lines are gathered tile lines at a time (see tiled_range) */
    int64_t ntiles0;             /* tiles along outer dim 0 */
    int failed;                  /* set (atomically) by a worker whose allocation failed */
} LinesCtx;

/* Byte offsets of line (or tile) index q over outer dims [first, nouter). */
static void line_offsets(const CtDimDesc *d, int first, int64_t q, int64_t *off)
{
    for (int op = 0; op < CT_DIM_OPS; op++) {
        off[op] = 0;
    }
    for (int k = first; k < d->nouter; k++) {
        int64_t i = q % d->outer_shape[k];
        q /= d->outer_shape[k];
        for (int op = 0; op < CT_DIM_OPS; op++) {
            off[op] += i * d->outer_strides[k][op];
        }
    }
}

/* Lines [begin, end), each walked in place. */
static void lines_range(int64_t begin, int64_t end, void *arg)
{
    LinesCtx *lc = (LinesCtx *)arg;
    const CtDimDesc *d = lc->d;
    void *scratch = NULL;
    if (lc->scratch_bytes > 0 && (scratch = malloc(lc->scratch_bytes)) == NULL) {
        __atomic_store_n(&lc->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    int64_t off[CT_DIM_OPS];
    char *ptr[CT_DIM_OPS];
    for (int64_t line = begin; line < end; line++) {
        line_offsets(d, 0, line, off);
        for (int op = 0; op < CT_DIM_OPS; op++) {
            ptr[op] = d->data[op] ? d->data[op] + off[op] : NULL;
        }
        lc->fn(d, lc->params, ptr, scratch);
    }
    free(scratch);
}

static inline void copy_element(char *dst, const char *src, size_t size)
{
    switch (size) { /* constant sizes: single moves */
    case 1:
        *dst = *src;
        break;
    case 2:
        memcpy(dst, src, 2);
        break;
    case 4:
        memcpy(dst, src, 4);
        break;
    default:
        memcpy(dst, src, 8);
        break;
    }
}

/* Tiles [begin, end): when lines lie side by side in memory (outer dim 0 has unit stride) but
 * each line is strided, walking lines one by one touches a new cache line per element. Instead
 * a tile of neighbouring lines is gathered row by row into contiguous buffers, the line
 * function runs on the buffers, and the outputs are scattered back the same way. */
static void tiled_range(int64_t begin, int64_t end, void *arg)
{
    LinesCtx *lc = (LinesCtx *)arg;
    const CtDimDesc *d = lc->d;
    size_t isz[CT_DIM_OPS], buf_bytes = 0;
    int64_t ld[CT_DIM_OPS]; /* buffer line pitch: padded, since a power-of-two pitch would put
                               every element of a gathered row in the same cache set */
    for (int op = 0; op < CT_DIM_OPS; op++) {
        isz[op] = d->data[op] ? ct_dtype_info[d->dtypes[op]].itemsize : 0;
        ld[op] = lc->out_len[op] + (lc->out_len[op] >= 16 ? 16 : 0);
        buf_bytes += (size_t)lc->tile * (size_t)ld[op] * isz[op];
    }
    char *mem = malloc(buf_bytes + lc->scratch_bytes + 1);
    if (mem == NULL) {
        __atomic_store_n(&lc->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    char *buf[CT_DIM_OPS];
    buf[0] = mem;
    buf[1] = buf[0] + (size_t)lc->tile * (size_t)ld[0] * isz[0];
    buf[2] = buf[1] + (size_t)lc->tile * (size_t)ld[1] * isz[1];
    void *scratch = mem + buf_bytes;
    CtDimDesc local = *d; /* the same lines, laid out contiguously in the buffers */
    for (int op = 0; op < CT_DIM_OPS; op++) {
        local.dim_strides[op] = (int64_t)isz[op];
    }
    int64_t off[CT_DIM_OPS];
    char *ptr[CT_DIM_OPS];
    for (int64_t u = begin; u < end; u++) {
        int64_t j0 = (u % lc->ntiles0) * lc->tile;
        int64_t w = d->outer_shape[0] - j0 < lc->tile ? d->outer_shape[0] - j0 : lc->tile;
        line_offsets(d, 1, u / lc->ntiles0, off);
        for (int op = 0; op < CT_DIM_OPS; op++) {
            off[op] += j0 * d->outer_strides[0][op];
        }
        const char *in = d->data[0] + off[0];
        for (int64_t i = 0; i < d->n; i++) { /* gather: row i of the tile */
            const char *row = in + i * d->dim_strides[0];
            for (int64_t l = 0; l < w; l++) {
                copy_element(buf[0] + (l * ld[0] + i) * isz[0], row + l * d->outer_strides[0][0], isz[0]);
            }
        }
        for (int64_t l = 0; l < w; l++) {
            for (int op = 0; op < CT_DIM_OPS; op++) {
                ptr[op] = d->data[op] ? buf[op] + l * ld[op] * (int64_t)isz[op] : NULL;
            }
            lc->fn(&local, lc->params, ptr, scratch);
        }
        for (int op = 1; op < CT_DIM_OPS; op++) { /* scatter the outputs */
            if (d->data[op] == NULL) {
                continue;
            }
            for (int64_t i = 0; i < lc->out_len[op]; i++) {
                char *row = d->data[op] + off[op] + i * d->dim_strides[op];
                for (int64_t l = 0; l < w; l++) {
                    copy_element(row + l * d->outer_strides[0][op], buf[op] + (l * ld[op] + i) * isz[op], isz[op]);
                }
            }
        }
    }
    free(mem);
}

/* Tiles [begin, end) of neighbouring lines for a vertical function. */
static void vertical_range(int64_t begin, int64_t end, void *arg)
{
    LinesCtx *lc = (LinesCtx *)arg;
    const CtDimDesc *d = lc->d;
    void *scratch = malloc(sizeof(double) * VERT_SCRATCH * VERT_TILE);
    if (scratch == NULL) {
        __atomic_store_n(&lc->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    int64_t off[CT_DIM_OPS];
    char *ptr[CT_DIM_OPS];
    for (int64_t u = begin; u < end; u++) {
        int64_t j0 = (u % lc->ntiles0) * VERT_TILE;
        int64_t w = d->outer_shape[0] - j0 < VERT_TILE ? d->outer_shape[0] - j0 : VERT_TILE;
        line_offsets(d, 1, u / lc->ntiles0, off);
        for (int op = 0; op < CT_DIM_OPS; op++) {
            ptr[op] = d->data[op] ? d->data[op] + off[op] + j0 * d->outer_strides[0][op] : NULL;
        }
        lc->vfn(d, lc->params, ptr, w, scratch);
    }
    free(scratch);
}

/* Runs fn over every line; out_len[op] is the length of operand op along the dim. Lines that
 * lie side by side in memory while each is strided (a reduction over an outer dim) go to vfn
 * when there is one, else through the gathering tiles of tiled_range. */
static int run_lines(const CtDimDesc *d, LineFn fn, VertFn vfn, const void *params, size_t scratch_bytes,
                     int64_t out_len1, int64_t out_len2)
{
    LinesCtx lc = {d, fn, vfn, params, scratch_bytes, {d->n, out_len1, out_len2}, 0, 0, 0};
    int64_t isz = (int64_t)ct_dtype_info[d->dtypes[0]].itemsize;
    int64_t per_line = d->n > 0 ? d->n : 1;
    bool side_by_side = d->nouter > 0 && d->outer_shape[0] > 1 && d->n > 1 && d->dim_strides[0] != isz &&
                        d->outer_strides[0][0] == isz;
    if (side_by_side && vfn != NULL) {
        lc.ntiles0 = (d->outer_shape[0] + VERT_TILE - 1) / VERT_TILE;
        int64_t tiles = d->outer_numel / d->outer_shape[0] * lc.ntiles0;
        int64_t work = (d->outer_shape[0] < VERT_TILE ? d->outer_shape[0] : VERT_TILE) * per_line;
        ct_parallel_for(tiles, UNIT_WORK / work > 1 ? UNIT_WORK / work : 1, vertical_range, &lc);
    } else if (side_by_side && d->n <= 262144) {
        int64_t tile = 131072 / d->n; /* about half of L2 for float32; long row pieces */
        tile = tile < 4 ? 4 : tile > 256 ? 256 : tile;
        lc.tile = tile < d->outer_shape[0] ? tile : d->outer_shape[0];
        lc.ntiles0 = (d->outer_shape[0] + lc.tile - 1) / lc.tile;
        int64_t tiles = d->outer_numel / d->outer_shape[0] * lc.ntiles0;
        int64_t work = lc.tile * per_line;
        ct_parallel_for(tiles, UNIT_WORK / work > 1 ? UNIT_WORK / work : 1, tiled_range, &lc);
    } else {
        ct_parallel_for(d->outer_numel, UNIT_WORK / per_line > 1 ? UNIT_WORK / per_line : 1, lines_range, &lc);
    }
    if (lc.failed) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static bool dtype_is_float(CtDType t) { return ct_dtype_info[t].kind == CT_KIND_FLOAT; }

/* --- arg-reductions: the first max/min, NaN greatest and least -------------------------------- */
/* Block by block: the block's extremum comes from the vectorised block_reduce, and only a
 * block that beats the best so far is searched for the first position of its extremum. */
#define CT_RED_ARG_LINE(SFX, T, IS_FLOAT)                                                            \
    static void arg_line_##SFX(const CtDimDesc *d, bool is_max, char *const *ptr)                    \
    {                                                                                               \
        CtReduceCombine op = is_max ? CT_COMBINE_MAX : CT_COMBINE_MIN;                              \
        int64_t s = d->dim_strides[0], n = d->n, bi = -1;                                           \
        bool direct = d->dtypes[0] == acc_dtype[CT_ACC_##SFX] && s == (int64_t)sizeof(T);          \
        T buf[BLOCK], best = 0;                                                                     \
        int64_t block = direct ? LEAF : BLOCK; /* no copy: longer blocks */                         \
        for (int64_t off = 0; off < n; off += block) {                                              \
            int64_t m = n - off < block ? n - off : block;                                          \
            const T *x = buf;                                                                       \
            if (direct) {                                                                           \
                x = (const T *)(ptr[0] + off * s);                                                  \
            } else {                                                                                \
                load_##SFX(buf, ptr[0] + off * s, s, m, d->dtypes[0]);                              \
            }                                                                                       \
            T bm = block_reduce_##SFX(x, m, op);                                                    \
            bool bm_nan = IS_FLOAT && bm != bm;                                                     \
            if (bi >= 0 && !bm_nan && !(is_max ? bm > best : bm < best)) {                          \
                continue;                                                                           \
            }                                                                                       \
            for (int64_t i = 0; i < m; i++) {                                                       \
                if (bm_nan ? x[i] != x[i] : x[i] == bm) {                                           \
                    best = x[i];                                                                    \
                    bi = off + i;                                                                   \
                    break;                                                                          \
                }                                                                                   \
            }                                                                                       \
            if (bm_nan) {                                                                           \
                break;                                                                              \
            }                                                                                       \
        }                                                                                           \
        if (ptr[1]) {                                                                               \
            store_##SFX(ptr[1], 0, &best, 1, d->dtypes[1]);                                         \
        }                                                                                           \
        if (ptr[2]) {                                                                               \
            *(int64_t *)ptr[2] = bi;                                                                \
        }                                                                                           \
    }
CT_RED_ARG_LINE(F32, float, 1)
CT_RED_ARG_LINE(F64, double, 1)
CT_RED_ARG_LINE(I64, int64_t, 0)

static void arg_line(const CtDimDesc *d, const void *params, char *const *ptr, void *scratch)
{
    bool is_max = *(const bool *)params;
    CtDType dt = d->dtypes[0];
    if (dt == CT_F64) {
        arg_line_F64(d, is_max, ptr);
    } else if (dtype_is_float(dt)) {
        arg_line_F32(d, is_max, ptr);
    } else {
        arg_line_I64(d, is_max, ptr);
    }
}

/* Vertical: per lane the best value so far and its row; a lane that holds NaN keeps it. */
#define CT_RED_ARG_VERT(SFX, T, IS_FLOAT)                                                            \
    static void arg_vert_##SFX(const CtDimDesc *d, bool is_max, char *const *ptr, int64_t w, T *buf,  \
                               T *best, int64_t *bi)                                                \
    {                                                                                               \
        int64_t ls = d->outer_strides[0][0];                                                        \
        load_##SFX(best, ptr[0], ls, w, d->dtypes[0]);                                              \
        for (int64_t l = 0; l < w; l++) {                                                           \
            bi[l] = 0;                                                                              \
        }                                                                                           \
        for (int64_t i = 1; i < d->n; i++) {                                                        \
            load_##SFX(buf, ptr[0] + i * d->dim_strides[0], ls, w, d->dtypes[0]);                   \
            for (int64_t l = 0; l < w; l++) {                                                       \
                T v = buf[l], b = best[l];                                                          \
                bool take = ((is_max ? v > b : v < b) || (IS_FLOAT && v != v)) && !(IS_FLOAT && b != b); \
                best[l] = take ? v : b;                                                             \
                bi[l] = take ? i : bi[l];                                                           \
            }                                                                                       \
        }                                                                                           \
        if (ptr[1]) {                                                                               \
            store_##SFX(ptr[1], d->outer_strides[0][1], best, w, d->dtypes[1]);                     \
        }                                                                                           \
        if (ptr[2]) {                                                                               \
            for (int64_t l = 0; l < w; l++) {                                                       \
                *(int64_t *)(ptr[2] + l * d->outer_strides[0][2]) = bi[l];                          \
            }                                                                                       \
        }                                                                                           \
    }
CT_RED_ARG_VERT(F32, float, 1)
CT_RED_ARG_VERT(F64, double, 1)
CT_RED_ARG_VERT(I64, int64_t, 0)

static void arg_vert(const CtDimDesc *d, const void *params, char *const *ptr, int64_t w, void *scratch)
{
    bool is_max = *(const bool *)params;
    double *s = (double *)scratch; /* [VERT_SCRATCH][VERT_TILE] 8-byte slots */
    CtDType dt = d->dtypes[0];
    if (dt == CT_F64) {
        arg_vert_F64(d, is_max, ptr, w, s, s + VERT_TILE, (int64_t *)(s + 2 * VERT_TILE));
    } else if (dtype_is_float(dt)) {
        arg_vert_F32(d, is_max, ptr, w, (float *)s, (float *)(s + VERT_TILE), (int64_t *)(s + 2 * VERT_TILE));
    } else {
        arg_vert_I64(d, is_max, ptr, w, (int64_t *)s, (int64_t *)(s + VERT_TILE), (int64_t *)(s + 2 * VERT_TILE));
    }
}

static int cpu_arg_reduce(const CtDimDesc *d, bool is_max)
{
    return run_lines(d, arg_line, arg_vert, &is_max, 0, 1, 1);
}

/* --- scans: cumsum / cumprod / logcumsumexp in double (floats) or int64 (integers), as
 * PyTorch's CPU; cummax / cummin keep values exact (floats pass through double, integers
 * through int64) and write the index where the running extremum was last reached. */
static double scan_identity_f64(CtScanOp op)
{
    return op == CT_SCAN_SUM ? 0.0 : op == CT_SCAN_PROD ? 1.0 : -INFINITY;
}

static inline double scan_combine_f64(double acc, double x, CtScanOp op)
{
    return op == CT_SCAN_SUM ? acc + x : op == CT_SCAN_PROD ? acc * x : ct_sm_logaddexp_double(x, acc);
}

/* x takes over from the running extremum best: a later equal value does, and so does a NaN
 * (which then stays, as nothing compares >= or <= to it). */
#define CT_RED_SCAN_EXTREMUM(SFX, T, IS_FLOAT, LOAD, STORE)                                       \
    static inline bool takes_over_##SFX(T x, T best, bool is_max)                               \
    {                                                                                           \
        return (is_max ? x >= best : x <= best) || (IS_FLOAT && x != x);                        \
    }                                                                                           \
    static void cum_extremum_line_##SFX(const CtDimDesc *d, bool is_max, char *const *ptr)      \
    {                                                                                           \
        int64_t s0 = d->dim_strides[0], s1 = d->dim_strides[1], s2 = d->dim_strides[2];       \
        T buf[BLOCK], best = 0;                                                                 \
        int64_t at = 0;                                                                         \
        for (int64_t off = 0; off < d->n; off += BLOCK) {                                       \
            int64_t m = d->n - off < BLOCK ? d->n - off : BLOCK;                                \
            LOAD(buf, ptr[0] + off * s0, s0, m, d->dtypes[0]);                                  \
            for (int64_t i = 0; i < m; i++) {                                                   \
                if (off + i == 0 || takes_over_##SFX(buf[i], best, is_max)) {                   \
                    best = buf[i];                                                              \
                    at = off + i;                                                               \
                }                                                                               \
                buf[i] = best;                                                                  \
                *(int64_t *)(ptr[2] + (off + i) * s2) = at;                                     \
            }                                                                                   \
            STORE(ptr[1] + off * s1, s1, buf, m, d->dtypes[1]);                                 \
        }                                                                                       \
    }                                                                                           \
    /* vertical: per lane the running extremum and its index */                                 \
    static void cum_extremum_vert_##SFX(const CtDimDesc *d, bool is_max, char *const *ptr,      \
                                        int64_t w, T *buf, T *best, int64_t *at)                \
    {                                                                                           \
        int64_t ls0 = d->outer_strides[0][0], ls1 = d->outer_strides[0][1];                    \
        int64_t ls2 = d->outer_strides[0][2];                                                   \
        for (int64_t i = 0; i < d->n; i++) {                                                    \
            LOAD(buf, ptr[0] + i * d->dim_strides[0], ls0, w, d->dtypes[0]);                    \
            char *ix = ptr[2] + i * d->dim_strides[2];                                          \
            for (int64_t l = 0; l < w; l++) {                                                   \
                if (i == 0 || takes_over_##SFX(buf[l], best[l], is_max)) {                      \
                    best[l] = buf[l];                                                           \
                    at[l] = i;                                                                  \
                }                                                                               \
                buf[l] = best[l];                                                               \
                *(int64_t *)(ix + l * ls2) = at[l];                                             \
            }                                                                                   \
            STORE(ptr[1] + i * d->dim_strides[1], ls1, buf, w, d->dtypes[1]);                   \
        }                                                                                       \
    }
CT_RED_SCAN_EXTREMUM(f, double, 1, load_f64, store_f64)
CT_RED_SCAN_EXTREMUM(i, int64_t, 0, load_i64, store_i64)

static void scan_line(const CtDimDesc *d, const void *params, char *const *ptr, void *scratch)
{
    CtScanOp op = *(const CtScanOp *)params;
    int64_t s0 = d->dim_strides[0], s1 = d->dim_strides[1];
    if (op == CT_SCAN_MAX || op == CT_SCAN_MIN) {
        if (dtype_is_float(d->dtypes[0])) {
            cum_extremum_line_f(d, op == CT_SCAN_MAX, ptr);
        } else {
            cum_extremum_line_i(d, op == CT_SCAN_MAX, ptr);
        }
    } else if (dtype_is_float(d->dtypes[0])) {
        double acc = scan_identity_f64(op), buf[BLOCK];
        for (int64_t off = 0; off < d->n; off += BLOCK) {
            int64_t m = d->n - off < BLOCK ? d->n - off : BLOCK;
            load_f64(buf, ptr[0] + off * s0, s0, m, d->dtypes[0]);
            if (op == CT_SCAN_SUM) {
                for (int64_t i = 0; i < m; i++) {
                    acc += buf[i];
                    buf[i] = acc;
                }
            } else if (op == CT_SCAN_PROD) {
                for (int64_t i = 0; i < m; i++) {
                    acc *= buf[i];
                    buf[i] = acc;
                }
            } else {
                for (int64_t i = 0; i < m; i++) {
                    acc = scan_combine_f64(acc, buf[i], op);
                    buf[i] = acc;
                }
            }
            store_f64(ptr[1] + off * s1, s1, buf, m, d->dtypes[1]);
        }
    } else {
        uint64_t acc = op == CT_SCAN_SUM ? 0 : 1; /* unsigned: wraps without UB */
        int64_t buf[BLOCK];
        for (int64_t off = 0; off < d->n; off += BLOCK) {
            int64_t m = d->n - off < BLOCK ? d->n - off : BLOCK;
            load_i64(buf, ptr[0] + off * s0, s0, m, d->dtypes[0]);
            if (op == CT_SCAN_SUM) {
                for (int64_t i = 0; i < m; i++) {
                    acc += (uint64_t)buf[i];
                    buf[i] = (int64_t)acc;
                }
            } else {
                for (int64_t i = 0; i < m; i++) {
                    acc *= (uint64_t)buf[i];
                    buf[i] = (int64_t)acc;
                }
            }
            store_i64(ptr[1] + off * s1, s1, buf, m, d->dtypes[1]);
        }
    }
}

/* Vertical: a running value per lane, rows read and written in memory order. */
static void scan_vert(const CtDimDesc *d, const void *params, char *const *ptr, int64_t w, void *scratch)
{
    CtScanOp op = *(const CtScanOp *)params;
    int64_t ls0 = d->outer_strides[0][0], ls1 = d->outer_strides[0][1];
    double *s = (double *)scratch; /* [VERT_SCRATCH][VERT_TILE] 8-byte slots */
    if (op == CT_SCAN_MAX || op == CT_SCAN_MIN) {
        if (dtype_is_float(d->dtypes[0])) {
            cum_extremum_vert_f(d, op == CT_SCAN_MAX, ptr, w, s, s + VERT_TILE, (int64_t *)(s + 2 * VERT_TILE));
        } else {
            cum_extremum_vert_i(d, op == CT_SCAN_MAX, ptr, w, (int64_t *)s, (int64_t *)(s + VERT_TILE),
                                (int64_t *)(s + 2 * VERT_TILE));
        }
    } else if (dtype_is_float(d->dtypes[0])) {
        double *buf = s, *acc = buf + VERT_TILE;
        for (int64_t l = 0; l < w; l++) {
            acc[l] = scan_identity_f64(op);
        }
        for (int64_t i = 0; i < d->n; i++) {
            load_f64(buf, ptr[0] + i * d->dim_strides[0], ls0, w, d->dtypes[0]);
            for (int64_t l = 0; l < w; l++) {
                acc[l] = scan_combine_f64(acc[l], buf[l], op);
                buf[l] = acc[l];
            }
            store_f64(ptr[1] + i * d->dim_strides[1], ls1, buf, w, d->dtypes[1]);
        }
    } else {
        int64_t *buf = (int64_t *)scratch;
        uint64_t *acc = (uint64_t *)(buf + VERT_TILE);
        for (int64_t l = 0; l < w; l++) {
            acc[l] = op == CT_SCAN_SUM ? 0 : 1;
        }
        for (int64_t i = 0; i < d->n; i++) {
            load_i64(buf, ptr[0] + i * d->dim_strides[0], ls0, w, d->dtypes[0]);
            for (int64_t l = 0; l < w; l++) {
                acc[l] = op == CT_SCAN_SUM ? acc[l] + (uint64_t)buf[l] : acc[l] * (uint64_t)buf[l];
                buf[l] = (int64_t)acc[l];
            }
            store_i64(ptr[1] + i * d->dim_strides[1], ls1, buf, w, d->dtypes[1]);
        }
    }
}

static int cpu_scan(const CtDimDesc *d, CtScanOp op) { return run_lines(d, scan_line, scan_vert, &op, 0, d->n, d->n); }

/* --- softmax / log_softmax: max, sum of exp(x - max), then the output; float or double ------- */
/* When the output has the computation's own type and unit stride, exp(x - max) is written in
 * the second pass and scaled in place, so each element costs one exp. */
#define CT_RED_SOFTMAX_LINE(SFX, T, LOG)                                                     \
    static void softmax_line_##SFX(const CtDimDesc *d, bool log_out, char *const *ptr)          \
    {                                                                                            \
        int64_t s0 = d->dim_strides[0], s1 = d->dim_strides[1], n = d->n;                        \
        T buf[BLOCK], mx = -(T)INFINITY, sum = 0;                                                \
        bool in_place = !log_out && d->dtypes[1] == acc_dtype[CT_ACC_##SFX] && s1 == sizeof(T);  \
        for (int64_t off = 0; off < n; off += BLOCK) {                                           \
            int64_t m = n - off < BLOCK ? n - off : BLOCK;                                       \
            load_##SFX(buf, ptr[0] + off * s0, s0, m, d->dtypes[0]);                             \
            mx = FN_COMBINE_##SFX(mx, block_reduce_##SFX(buf, m, CT_COMBINE_MAX));               \
        }                                                                                        \
        for (int64_t off = 0; off < n; off += BLOCK) {                                           \
            int64_t m = n - off < BLOCK ? n - off : BLOCK;                                       \
            load_##SFX(buf, ptr[0] + off * s0, s0, m, d->dtypes[0]);                             \
            exp_sub_##SFX(buf, &mx, 0, m);                                                         \
            sum += block_reduce_##SFX(buf, m, CT_COMBINE_SUM);                                   \
            if (in_place) {                                                                      \
                memcpy(ptr[1] + off * s1, buf, sizeof(T) * m);                                   \
            }                                                                                    \
        }                                                                                        \
        if (in_place) {                                                                          \
            T *out = (T *)ptr[1], inv = 1 / sum;                                                 \
            for (int64_t i = 0; i < n; i++) {                                                    \
                out[i] *= inv;                                                                   \
            }                                                                                    \
            return;                                                                              \
        }                                                                                        \
        T lse = LOG(sum);                                                                        \
        for (int64_t off = 0; off < n; off += BLOCK) {                                           \
            int64_t m = n - off < BLOCK ? n - off : BLOCK;                                       \
            load_##SFX(buf, ptr[0] + off * s0, s0, m, d->dtypes[0]);                             \
            if (log_out) {                                                                       \
                for (int64_t i = 0; i < m; i++) {                                                \
                    buf[i] = buf[i] - mx - lse;                                                  \
                }                                                                                \
            } else {                                                                             \
                exp_sub_##SFX(buf, &mx, 0, m);                                                     \
                for (int64_t i = 0; i < m; i++) {                                                \
                    buf[i] = buf[i] / sum;                                                       \
                }                                                                                \
            }                                                                                    \
            store_##SFX(ptr[1] + off * s1, s1, buf, m, d->dtypes[1]);                            \
        }                                                                                        \
    }
#define FN_COMBINE_F32(a, b) combine2_f32(a, b, CT_COMBINE_MAX)
#define FN_COMBINE_F64(a, b) combine2_f64(a, b, CT_COMBINE_MAX)
CT_RED_SOFTMAX_LINE(F32, float, logf)
CT_RED_SOFTMAX_LINE(F64, double, log)

static void softmax_line(const CtDimDesc *d, const void *params, char *const *ptr, void *scratch)
{
    bool log_out = *(const bool *)params;
    if (d->dtypes[0] == CT_F64) {
        softmax_line_F64(d, log_out, ptr);
    } else {
        softmax_line_F32(d, log_out, ptr);
    }
}

/* Vertical: the max and the sum of exponentials per lane, then the outputs, each pass reading
 * rows in memory order. */
#define CT_RED_SOFTMAX_VERT(SFX, T, LOG)                                                          \
    static void softmax_vert_##SFX(const CtDimDesc *d, bool log_out, char *const *ptr, int64_t w, \
                                   T *buf, T *mx, T *sum)                                        \
    {                                                                                            \
        int64_t ls0 = d->outer_strides[0][0], ls1 = d->outer_strides[0][1];                      \
        for (int64_t l = 0; l < w; l++) {                                                        \
            mx[l] = -(T)INFINITY;                                                                \
            sum[l] = 0;                                                                          \
        }                                                                                        \
        for (int64_t i = 0; i < d->n; i++) {                                                     \
            load_##SFX(buf, ptr[0] + i * d->dim_strides[0], ls0, w, d->dtypes[0]);               \
            for (int64_t l = 0; l < w; l++) {                                                    \
                mx[l] = (buf[l] > mx[l] || buf[l] != buf[l]) ? buf[l] : mx[l];                   \
            }                                                                                    \
        }                                                                                        \
        /* exp(x - max) goes straight to the output when it has the computation's type */     \
        bool in_place = !log_out && d->dtypes[1] == acc_dtype[CT_ACC_##SFX];                      \
        for (int64_t i = 0; i < d->n; i++) {                                                     \
            load_##SFX(buf, ptr[0] + i * d->dim_strides[0], ls0, w, d->dtypes[0]);               \
            exp_sub_##SFX(buf, mx, 1, w);                                                        \
            for (int64_t l = 0; l < w; l++) {                                                    \
                sum[l] += buf[l];                                                                \
            }                                                                                    \
            if (in_place) {                                                                      \
                store_##SFX(ptr[1] + i * d->dim_strides[1], ls1, buf, w, d->dtypes[1]);          \
            }                                                                                    \
        }                                                                                        \
        if (log_out) {                                                                           \
            for (int64_t l = 0; l < w; l++) {                                                    \
                sum[l] = mx[l] + LOG(sum[l]);                                                    \
            }                                                                                    \
        }                                                                                        \
        for (int64_t i = 0; i < d->n; i++) {                                                     \
            if (in_place) {                                                                      \
                load_##SFX(buf, ptr[1] + i * d->dim_strides[1], ls1, w, d->dtypes[1]);           \
            } else {                                                                             \
                load_##SFX(buf, ptr[0] + i * d->dim_strides[0], ls0, w, d->dtypes[0]);           \
            }                                                                                    \
            if (log_out) {                                                                       \
                for (int64_t l = 0; l < w; l++) {                                                \
                    buf[l] = buf[l] - sum[l];                                                    \
                }                                                                                \
            } else if (!in_place) {                                                              \
                exp_sub_##SFX(buf, mx, 1, w);                                                    \
                for (int64_t l = 0; l < w; l++) {                                                \
                    buf[l] = buf[l] / sum[l];                                                    \
                }                                                                                \
            } else {                                                                             \
                for (int64_t l = 0; l < w; l++) {                                                \
                    buf[l] = buf[l] / sum[l];                                                    \
                }                                                                                \
            }                                                                                    \
            store_##SFX(ptr[1] + i * d->dim_strides[1], ls1, buf, w, d->dtypes[1]);              \
        }                                                                                        \
    }
CT_RED_SOFTMAX_VERT(F32, float, logf)
CT_RED_SOFTMAX_VERT(F64, double, log)

static void softmax_vert(const CtDimDesc *d, const void *params, char *const *ptr, int64_t w, void *scratch)
{
    bool log_out = *(const bool *)params;
    double *s = (double *)scratch;
    if (d->dtypes[0] == CT_F64) {
        softmax_vert_F64(d, log_out, ptr, w, s, s + VERT_TILE, s + 2 * VERT_TILE);
    } else {
        float *f = (float *)scratch;
        softmax_vert_F32(d, log_out, ptr, w, f, f + VERT_TILE, f + 2 * VERT_TILE);
    }
}

static int cpu_softmax(const CtDimDesc *d, bool log_out)
{
    return run_lines(d, softmax_line, softmax_vert, &log_out, 0, d->n, 0);
}

/* --- sort: a stable merge sort of (key, index) pairs, NaN greater than everything ------------- */
typedef struct {
    double key;
    int64_t index;
} KeyF;
typedef struct {
    int64_t key;
    int64_t index;
} KeyI;

static inline bool before_f(double a, double b, bool desc)
{
    return desc ? (a > b || (a != a && b == b)) : (a < b || (a == a && b != b));
}
static inline bool before_i(int64_t a, int64_t b, bool desc) { return desc ? a > b : a < b; }

/* Comparisons of pairs: by key only (the merge sort keeps input order among equal keys), and
 * the total order "by key, then by index" that a stable sort of the line produces, used by
 * selection so that topk and median pick exactly the elements the full sort would. */
#define KEY_BEFORE(SFX, x, y, desc) before_##SFX((x).key, (y).key, desc)
#define TOTAL_BEFORE(SFX, x, y, desc) \
    (before_##SFX((x).key, (y).key, desc) || (!before_##SFX((y).key, (x).key, desc) && (x).index < (y).index))

/* Sorts a[0..n) (tmp: n more entries) and returns the array that holds the result. */
#define CT_RED_DEFINE_SORT(NAME, SFX, KEY, BEFORE)                                               \
    static KEY *NAME(KEY *a, KEY *tmp, int64_t n, bool desc)                                     \
    {                                                                                            \
        for (int64_t lo = 0; lo < n; lo += 32) {                                                 \
            int64_t hi = n - lo < 32 ? n : lo + 32;                                              \
            for (int64_t i = lo + 1; i < hi; i++) {                                              \
                KEY x = a[i];                                                                    \
                int64_t j = i;                                                                   \
                while (j > lo && BEFORE(SFX, x, a[j - 1], desc)) {                               \
                    a[j] = a[j - 1];                                                             \
                    j--;                                                                         \
                }                                                                                \
                a[j] = x;                                                                        \
            }                                                                                    \
        }                                                                                        \
        for (int64_t width = 32; width < n; width *= 2) {                                        \
            for (int64_t lo = 0; lo < n; lo += 2 * width) {                                      \
                int64_t mid = n - lo < width ? n : lo + width;                                   \
                int64_t hi = n - lo < 2 * width ? n : lo + 2 * width;                            \
                int64_t i = lo, j = mid, k = lo;                                                 \
                while (i < mid && j < hi) {                                                      \
                    tmp[k++] = BEFORE(SFX, a[j], a[i], desc) ? a[j++] : a[i++];                  \
                }                                                                                \
                while (i < mid) {                                                                \
                    tmp[k++] = a[i++];                                                           \
                }                                                                                \
                while (j < hi) {                                                                 \
                    tmp[k++] = a[j++];                                                           \
                }                                                                                \
            }                                                                                    \
            KEY *t = a;                                                                          \
            a = tmp;                                                                             \
            tmp = t;                                                                             \
        }                                                                                        \
        return a;                                                                                \
    }
CT_RED_DEFINE_SORT(sort_f, f, KeyF, KEY_BEFORE)
CT_RED_DEFINE_SORT(sort_i, i, KeyI, KEY_BEFORE)
CT_RED_DEFINE_SORT(sort_total_f, f, KeyF, TOTAL_BEFORE)
CT_RED_DEFINE_SORT(sort_total_i, i, KeyI, TOTAL_BEFORE)

/* Quickselect in the total order: afterwards a[kth] is the element a full sort puts there, with
 * every element before it in the order to its left (in no order) and the rest to its right.
 * Median-of-three pivots; a run of bad pivots falls back to sorting the remaining range. */
#define CT_RED_DEFINE_SELECT(SFX, KEY)                                                           \
    static void select_##SFX(KEY *a, KEY *tmp, int64_t n, int64_t kth, bool desc)                \
    {                                                                                            \
        int64_t lo = 0, hi = n - 1;                                                              \
        int budget = 8;                                                                          \
        for (int64_t m = n; m > 1; m >>= 1) {                                                    \
            budget += 2;                                                                         \
        }                                                                                        \
        while (hi > lo) {                                                                        \
            if (--budget < 0 || hi - lo < 16) {                                                  \
                KEY *r = sort_total_##SFX(a + lo, tmp, hi - lo + 1, desc);                       \
                if (r != a + lo) {                                                               \
                    memcpy(a + lo, r, sizeof(KEY) * (size_t)(hi - lo + 1));                      \
                }                                                                                \
                return;                                                                          \
            }                                                                                    \
            int64_t mid = lo + (hi - lo) / 2;                                                    \
            KEY t;                                                                               \
            if (TOTAL_BEFORE(SFX, a[mid], a[lo], desc)) {                                        \
                t = a[mid], a[mid] = a[lo], a[lo] = t;                                           \
            }                                                                                    \
            if (TOTAL_BEFORE(SFX, a[hi], a[lo], desc)) {                                         \
                t = a[hi], a[hi] = a[lo], a[lo] = t;                                             \
            }                                                                                    \
            if (TOTAL_BEFORE(SFX, a[hi], a[mid], desc)) {                                        \
                t = a[hi], a[hi] = a[mid], a[mid] = t;                                           \
            }                                                                                    \
            KEY pivot = a[mid];                                                                  \
            int64_t i = lo, j = hi;                                                              \
            while (i <= j) {                                                                     \
                while (TOTAL_BEFORE(SFX, a[i], pivot, desc)) {                                   \
                    i++;                                                                         \
                }                                                                                \
                while (TOTAL_BEFORE(SFX, pivot, a[j], desc)) {                                   \
                    j--;                                                                         \
                }                                                                                \
                if (i <= j) {                                                                    \
                    t = a[i], a[i] = a[j], a[j] = t;                                             \
                    i++;                                                                         \
                    j--;                                                                         \
                }                                                                                \
            }                                                                                    \
            if (kth <= j) {                                                                      \
                hi = j;                                                                          \
            } else if (kth >= i) {                                                               \
                lo = i;                                                                          \
            } else {                                                                             \
                return;                                                                          \
            }                                                                                    \
        }                                                                                        \
    }
CT_RED_DEFINE_SELECT(f, KeyF)
CT_RED_DEFINE_SELECT(i, KeyI)

/* The mode of an ascending sorted line: the position ending the longest run of equal keys (a
 * later run must be strictly longer to win, so ties go to the smallest value). */
#define CT_RED_DEFINE_MODE_END(SFX, KEY)                                                 \
    static int64_t mode_end_##SFX(const KEY *s, int64_t n)                               \
    {                                                                                    \
        int64_t best = 0, best_len = 0, run = 0;                                         \
        for (int64_t i = 0; i < n; i++) {                                                \
            run = i > 0 && !before_##SFX(s[i - 1].key, s[i].key, false) ? run + 1 : 1;   \
            if (run > best_len) {                                                        \
                best_len = run;                                                          \
                best = i;                                                                \
            }                                                                            \
        }                                                                                \
        return best;                                                                     \
    }
CT_RED_DEFINE_MODE_END(f, KeyF)
CT_RED_DEFINE_MODE_END(i, KeyI)

typedef struct {
    bool descending;
    bool median;
    bool ignore_nan; /* nanmedian */
    int64_t start, count;
    bool mode; /* write the end of the longest run of equal keys (the first such run on ties) */
} SortParams;

/* Loads line ptr[0] into keys; returns the sorted array (inside scratch). */
#define CT_RED_DEFINE_SORT_LINE(SFX, KEY, T, LOAD, STORE)                                      \
    static void sort_line_##SFX(const CtDimDesc *d, const SortParams *sp, char *const *ptr,   \
                                KEY *keys)                                                    \
    {                                                                                         \
        int64_t n = d->n, s0 = d->dim_strides[0], start = sp->start;                          \
        T buf[BLOCK];                                                                         \
        for (int64_t off = 0; off < n; off += BLOCK) {                                        \
            int64_t m = n - off < BLOCK ? n - off : BLOCK;                                    \
            LOAD(buf, ptr[0] + off * s0, s0, m, d->dtypes[0]);                                \
            for (int64_t i = 0; i < m; i++) {                                                 \
                keys[off + i].key = buf[i];                                                   \
                keys[off + i].index = off + i;                                                \
            }                                                                                 \
        }                                                                                     \
        if (sp->median) { /* a NaN is the median, at its first position, unless ignored */   \
            int64_t first_nan = -1, nans = 0;                                                 \
            for (int64_t i = 0; i < n; i++) {                                                 \
                if (keys[i].key != keys[i].key) {                                             \
                    first_nan = first_nan < 0 ? i : first_nan;                                \
                    nans++;                                                                   \
                }                                                                             \
            }                                                                                 \
            if (first_nan >= 0 && (!sp->ignore_nan || nans == n)) {                           \
                T v = keys[first_nan].key;                                                    \
                if (ptr[1]) {                                                                 \
                    STORE(ptr[1], 0, &v, 1, d->dtypes[1]);                                    \
                }                                                                             \
                if (ptr[2]) {                                                                 \
                    *(int64_t *)ptr[2] = first_nan;                                           \
                }                                                                             \
                return;                                                                       \
            }                                                                                 \
            start = (n - nans - 1) / 2; /* NaNs sort last: the lower median of the rest */   \
        }                                                                                     \
        KEY *sorted = keys;                                                                   \
        int64_t first = start, last = start + sp->count; /* [first, last) wanted */           \
        if (sp->mode) {                                                                       \
            sorted = sort_##SFX(keys, keys + n, n, false);                                    \
            first = mode_end_##SFX(sorted, n);                                                \
        } else if (last == n && start == 0) {                                                 \
            sorted = sort_##SFX(keys, keys + n, n, sp->descending);                           \
        } else { /* select, then order what is wanted (topk) */                               \
            select_##SFX(keys, keys + n, n, last - 1, sp->descending);                        \
            if (start > 0 && sp->count > 1) {                                                 \
                select_##SFX(keys, keys + n, last - 1, start, sp->descending);                \
            }                                                                                 \
            KEY *r = sort_total_##SFX(keys + start, keys + n, sp->count, sp->descending);     \
            sorted = r - start;                                                               \
        }                                                                                     \
        for (int64_t i = 0; i < sp->count; i++) {                                             \
            const KEY *e = &sorted[first + i];                                                \
            if (ptr[1]) {                                                                     \
                T v = e->key;                                                                 \
                STORE(ptr[1] + i * d->dim_strides[1], 0, &v, 1, d->dtypes[1]);               \
            }                                                                                 \
            if (ptr[2]) {                                                                     \
                *(int64_t *)(ptr[2] + i * d->dim_strides[2]) = e->index;                      \
            }                                                                                 \
        }                                                                                     \
    }
CT_RED_DEFINE_SORT_LINE(f, KeyF, double, load_f64, store_f64)
CT_RED_DEFINE_SORT_LINE(i, KeyI, int64_t, load_i64, store_i64)

static void sort_line(const CtDimDesc *d, const void *params, char *const *ptr, void *scratch)
{
    if (dtype_is_float(d->dtypes[0])) {
        sort_line_f(d, (const SortParams *)params, ptr, (KeyF *)scratch);
    } else {
        sort_line_i(d, (const SortParams *)params, ptr, (KeyI *)scratch);
    }
}

static int cpu_sort(const CtDimDesc *d, bool descending, int64_t start, int64_t count)
{
    SortParams sp = {descending, false, false, start, count, false};
    if (count == 0) {
        return 0;
    }
    return run_lines(d, sort_line, NULL, &sp, (size_t)d->n * 2 * sizeof(KeyF), count, count);
}

static int cpu_median(const CtDimDesc *d, bool ignore_nan)
{
    SortParams sp = {false, true, ignore_nan, (d->n - 1) / 2, 1, false};
    return run_lines(d, sort_line, NULL, &sp, (size_t)d->n * 2 * sizeof(KeyF), 1, 1);
}

static int cpu_mode(const CtDimDesc *d)
{
    SortParams sp = {false, false, false, 0, 1, true};
    return run_lines(d, sort_line, NULL, &sp, (size_t)d->n * 2 * sizeof(KeyF), 1, 1);
}

const struct CtReduceKernels ct_cpu_reduce_kernels = {
    .reduce = cpu_reduce,
    .arg_reduce = cpu_arg_reduce,
    .scan = cpu_scan,
    .softmax = cpu_softmax,
    .sort = cpu_sort,
    .median = cpu_median,
    .mode = cpu_mode,
};
