/* reduce_cpu.c: the CPU kernels of the reduction family (struct CtReduceKernels, reduce.h).
 *
 * Reductions: the description's dims are split into kept and reduced lists and the work is cut
 * into units (an output, or a tile of outputs, times a chunk of the reduced elements) that
 * ct_parallel_for spreads over threads. The number of chunks depends only on the shape, and
 * every unit and every combination of partial results runs in a fixed order, so the same
 * input gives the same bits whatever the thread count. The accumulator-typed code is in
 * reduce_cpu_acc.inc (included three times below).
 *
 * Line ops (arg-reductions, scans, softmax, sort, median) run one line per call, lines spread
 * over threads; lines are independent, so they are deterministic too. */
#include "dtype.h"
#include "parallel.h"
#include "reduce.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 256          /* elements converted into a stack buffer at a time */
#define LEAF 4096          /* contiguous elements summed pairwise before the cascade */
#define TILE 128           /* outputs accumulated together in outer mode */
#define ROWS_PER_LEAF 64   /* outer mode: rows added into a tile before the cascade */
#define MAX_CHUNKS 64      /* most chunks the reduced elements of one output are cut into */
#define MIN_CHUNK 16384    /* fewest elements (per output) worth a chunk of its own */
#define UNIT_WORK 32768    /* elements per parallel task, below which threads do not pay */

#define CT_RED_CAT2(a, b) a##_##b
#define CT_RED_CAT(a, b) CT_RED_CAT2(a, b)

/* --- the plan: the description split into kept and reduced dims ---------------------------- */
typedef struct {
    const CtReduceDesc *d;
    bool outer;  /* outer mode: kept dim 0 is tiled, rows are accumulated */
    bool direct; /* the input is already the accumulator type and the map is the identity */
    int nk, nr;
    int64_t kshape[CT_MAX_DIMS], kin[CT_MAX_DIMS], kout[CT_MAX_DIMS], kshift[CT_MAX_DIMS];
    int64_t rshape[CT_MAX_DIMS], rin[CT_MAX_DIMS];
    int64_t R;       /* reduced elements per output */
    int64_t nchunks; /* chunks per output (or per tile) */
    int64_t ntiles;  /* outer mode: tiles along kept dim 0 */
    int64_t units;
    void *partials; /* nchunks > 1: [out_numel][nchunks] accumulators */
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

/* --- the three accumulators ------------------------------------------------------------------ */
#define ACC_T float
#define SFX f32
#define ACC_DTYPE CT_F32
#define ACC_IS_INT 0
#define ACC_EXP expf
#define ACC_LOG logf
#define ACC_SQRT sqrtf
#include "reduce_cpu_acc.inc"
#undef ACC_T
#undef SFX
#undef ACC_DTYPE
#undef ACC_IS_INT
#undef ACC_EXP
#undef ACC_LOG
#undef ACC_SQRT

#define ACC_T double
#define SFX f64
#define ACC_DTYPE CT_F64
#define ACC_IS_INT 0
#define ACC_EXP exp
#define ACC_LOG log
#define ACC_SQRT sqrt
#include "reduce_cpu_acc.inc"
#undef ACC_T
#undef SFX
#undef ACC_DTYPE
#undef ACC_IS_INT
#undef ACC_EXP
#undef ACC_LOG
#undef ACC_SQRT

#define ACC_T int64_t
#define SFX i64
#define ACC_DTYPE CT_I64
#define ACC_IS_INT 1
#include "reduce_cpu_acc.inc"
#undef ACC_T
#undef SFX
#undef ACC_DTYPE
#undef ACC_IS_INT

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
    /* Outer mode when the fastest dim is kept, or when the reduced runs are so short that
     * walking them output by output would cost more than the arithmetic. */
    pl->outer = pl->nk > 0 && pl->R > 0 && (!d->reduced[0] || pl->rshape[0] < 16);
    int64_t tile_w = 1, units_out = d->out_numel;
    if (pl->outer) {
        pl->ntiles = (pl->kshape[0] + TILE - 1) / TILE;
        tile_w = pl->kshape[0] < TILE ? pl->kshape[0] : TILE;
        units_out = d->out_numel / pl->kshape[0] * pl->ntiles;
    }
    /* Cut the reduced elements into chunks only when there are too few outputs to keep the
     * threads busy. A function of the shape alone: the thread count must not change bits. */
    pl->nchunks = 1;
    if (units_out < 32 && pl->R >= 2) {
        int64_t want = (64 + units_out - 1) / units_out;
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
}

static int cpu_reduce(const CtReduceDesc *d)
{
    Plan pl;
    plan_build(&pl, d);
    if (pl.nchunks > 1) {
        pl.partials = malloc((size_t)d->out_numel * (size_t)pl.nchunks * acc_size[d->acc]);
        if (pl.partials == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    int64_t tile_w = pl.outer ? (pl.kshape[0] < TILE ? pl.kshape[0] : TILE) : 1;
    int64_t work = pl.R / pl.nchunks * tile_w + 1;
    int64_t grain = UNIT_WORK / work > 1 ? UNIT_WORK / work : 1;
    void (*units)(int64_t, int64_t, void *);
    void (*partials)(int64_t, int64_t, void *);
    switch (d->acc) {
    case CT_ACC_F32:
        units = pl.outer ? outer_units_f32 : inner_units_f32;
        partials = partial_units_f32;
        break;
    case CT_ACC_F64:
        units = pl.outer ? outer_units_f64 : inner_units_f64;
        partials = partial_units_f64;
        break;
    default:
        units = pl.outer ? outer_units_i64 : inner_units_i64;
        partials = partial_units_i64;
        break;
    }
    ct_parallel_for(pl.units, grain, units, &pl);
    if (pl.nchunks > 1) {
        ct_parallel_for(d->out_numel, UNIT_WORK / pl.nchunks, partials, &pl);
        free(pl.partials);
    }
    return 0;
}

/* --- lines ------------------------------------------------------------------------------------- */
typedef void (*LineFn)(const CtDimDesc *d, const void *params, char *const *ptr, void *scratch);

typedef struct {
    const CtDimDesc *d;
    LineFn fn;
    const void *params;
    size_t scratch_bytes;
    int failed; /* set (atomically) by a worker whose scratch allocation failed */
} LinesCtx;

static void lines_range(int64_t begin, int64_t end, void *arg)
{
    LinesCtx *lc = (LinesCtx *)arg;
    const CtDimDesc *d = lc->d;
    void *scratch = NULL;
    if (lc->scratch_bytes > 0) {
        scratch = malloc(lc->scratch_bytes);
        if (scratch == NULL) {
            __atomic_store_n(&lc->failed, 1, __ATOMIC_RELAXED);
            return;
        }
    }
    int64_t idx[CT_MAX_DIMS], off[CT_DIM_OPS] = {0, 0, 0};
    char *ptr[CT_DIM_OPS];
    int64_t rem = begin;
    for (int k = 0; k < d->nouter; k++) {
        idx[k] = rem % d->outer_shape[k];
        rem /= d->outer_shape[k];
        for (int op = 0; op < CT_DIM_OPS; op++) {
            off[op] += idx[k] * d->outer_strides[k][op];
        }
    }
    for (int64_t line = begin; line < end; line++) {
        if (line > begin) {
            for (int k = 0; k < d->nouter; k++) {
                idx[k]++;
                for (int op = 0; op < CT_DIM_OPS; op++) {
                    off[op] += d->outer_strides[k][op];
                }
                if (idx[k] < d->outer_shape[k]) {
                    break;
                }
                for (int op = 0; op < CT_DIM_OPS; op++) {
                    off[op] -= idx[k] * d->outer_strides[k][op];
                }
                idx[k] = 0;
            }
        }
        for (int op = 0; op < CT_DIM_OPS; op++) {
            ptr[op] = d->data[op] ? d->data[op] + off[op] : NULL;
        }
        lc->fn(d, lc->params, ptr, scratch);
    }
    free(scratch);
}

static int run_lines(const CtDimDesc *d, LineFn fn, const void *params, size_t scratch_bytes)
{
    LinesCtx lc = {d, fn, params, scratch_bytes, 0};
    int64_t per_line = d->n > 0 ? d->n : 1;
    int64_t grain = UNIT_WORK / per_line > 1 ? UNIT_WORK / per_line : 1;
    ct_parallel_for(d->outer_numel, grain, lines_range, &lc);
    if (lc.failed) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static bool dtype_is_float(CtDType t) { return ct_dtype_info[t].kind == CT_KIND_FLOAT; }

/* --- arg-reductions: the first max/min, NaN greatest and least -------------------------------- */
#define CT_RED_ARG_LINE(NAME, ctype, acctype, ...)                                              \
    static void arg_line_##NAME(const char *p, int64_t s, int64_t n, bool is_max, char *vout, \
                                char *iout)                                                   \
    {                                                                                         \
        acctype best = CT_LOAD_##NAME(p);                                                     \
        int64_t bi = 0;                                                                       \
        for (int64_t i = 1; i < n && best == best; i++) {                                    \
            acctype v = CT_LOAD_##NAME(p + i * s);                                            \
            if ((is_max ? v > best : v < best) || v != v) {                                   \
                best = v;                                                                     \
                bi = i;                                                                       \
            }                                                                                 \
        }                                                                                     \
        if (vout) {                                                                           \
            CT_STORE_##NAME(vout, best);                                                      \
        }                                                                                     \
        if (iout) {                                                                           \
            *(int64_t *)iout = bi;                                                            \
        }                                                                                     \
    }
CT_DTYPE_LIST(CT_RED_ARG_LINE)

typedef void (*ArgLineFn)(const char *, int64_t, int64_t, bool, char *, char *);
#define CT_RED_ARG_ROW(NAME, ...) arg_line_##NAME,
static const ArgLineFn arg_lines[CT_NUM_DTYPES] = {CT_DTYPE_LIST(CT_RED_ARG_ROW)};

static void arg_line(const CtDimDesc *d, const void *params, char *const *ptr, void *scratch)
{
    arg_lines[d->dtypes[0]](ptr[0], d->dim_strides[0], d->n, *(const bool *)params, ptr[1], ptr[2]);
}

static int cpu_arg_reduce(const CtDimDesc *d, bool is_max) { return run_lines(d, arg_line, &is_max, 0); }

/* --- scans: cumsum / cumprod in double (floats) or int64 (integers), as PyTorch's CPU ------ */
static void scan_line(const CtDimDesc *d, const void *params, char *const *ptr, void *scratch)
{
    CtReduceCombine op = *(const CtReduceCombine *)params;
    int64_t s0 = d->dim_strides[0], s1 = d->dim_strides[1];
    if (dtype_is_float(d->dtypes[0])) {
        double acc = op == CT_COMBINE_SUM ? 0.0 : 1.0, buf[BLOCK];
        for (int64_t off = 0; off < d->n; off += BLOCK) {
            int64_t m = d->n - off < BLOCK ? d->n - off : BLOCK;
            load_f64(buf, ptr[0] + off * s0, s0, m, d->dtypes[0]);
            for (int64_t i = 0; i < m; i++) {
                acc = op == CT_COMBINE_SUM ? acc + buf[i] : acc * buf[i];
                buf[i] = acc;
            }
            store_f64(ptr[1] + off * s1, s1, buf, m, d->dtypes[1]);
        }
    } else {
        uint64_t acc = op == CT_COMBINE_SUM ? 0 : 1; /* unsigned: wraps without UB */
        int64_t buf[BLOCK];
        for (int64_t off = 0; off < d->n; off += BLOCK) {
            int64_t m = d->n - off < BLOCK ? d->n - off : BLOCK;
            load_i64(buf, ptr[0] + off * s0, s0, m, d->dtypes[0]);
            for (int64_t i = 0; i < m; i++) {
                acc = op == CT_COMBINE_SUM ? acc + (uint64_t)buf[i] : acc * (uint64_t)buf[i];
                buf[i] = (int64_t)acc;
            }
            store_i64(ptr[1] + off * s1, s1, buf, m, d->dtypes[1]);
        }
    }
}

static int cpu_scan(const CtDimDesc *d, CtReduceCombine op) { return run_lines(d, scan_line, &op, 0); }

/* --- softmax / log_softmax: max, sum of exp(x - max), then the output; float or double ------- */
#define CT_RED_SOFTMAX_LINE(SFX, T, EXP, LOG)                                                     \
    static void softmax_line_##SFX(const CtDimDesc *d, bool log_out, char *const *ptr)          \
    {                                                                                            \
        int64_t s0 = d->dim_strides[0], s1 = d->dim_strides[1], n = d->n;                        \
        T buf[BLOCK], mx = -(T)INFINITY, sum = 0;                                                \
        for (int64_t off = 0; off < n; off += BLOCK) {                                           \
            int64_t m = n - off < BLOCK ? n - off : BLOCK;                                       \
            load_##SFX(buf, ptr[0] + off * s0, s0, m, d->dtypes[0]);                             \
            for (int64_t i = 0; i < m; i++) {                                                    \
                mx = (buf[i] > mx || buf[i] != buf[i]) ? buf[i] : mx;                            \
            }                                                                                    \
        }                                                                                        \
        for (int64_t off = 0; off < n; off += BLOCK) {                                           \
            int64_t m = n - off < BLOCK ? n - off : BLOCK;                                       \
            load_##SFX(buf, ptr[0] + off * s0, s0, m, d->dtypes[0]);                             \
            for (int64_t i = 0; i < m; i++) {                                                    \
                sum += EXP(buf[i] - mx);                                                         \
            }                                                                                    \
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
                for (int64_t i = 0; i < m; i++) {                                                \
                    buf[i] = EXP(buf[i] - mx) / sum;                                             \
                }                                                                                \
            }                                                                                    \
            store_##SFX(ptr[1] + off * s1, s1, buf, m, d->dtypes[1]);                            \
        }                                                                                        \
    }
CT_RED_SOFTMAX_LINE(f32, float, expf, logf)
CT_RED_SOFTMAX_LINE(f64, double, exp, log)

static void softmax_line(const CtDimDesc *d, const void *params, char *const *ptr, void *scratch)
{
    bool log_out = *(const bool *)params;
    if (d->dtypes[0] == CT_F64) {
        softmax_line_f64(d, log_out, ptr);
    } else {
        softmax_line_f32(d, log_out, ptr);
    }
}

static int cpu_softmax(const CtDimDesc *d, bool log_out) { return run_lines(d, softmax_line, &log_out, 0); }

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

/* Sorts a[0..n) stably (tmp: n more entries); returns the array that holds the result. */
#define CT_RED_DEFINE_SORT(SFX, KEY)                                                             \
    static KEY *sort_##SFX(KEY *a, KEY *tmp, int64_t n, bool desc)                               \
    {                                                                                            \
        for (int64_t lo = 0; lo < n; lo += 32) {                                                 \
            int64_t hi = n - lo < 32 ? n : lo + 32;                                              \
            for (int64_t i = lo + 1; i < hi; i++) {                                              \
                KEY x = a[i];                                                                    \
                int64_t j = i;                                                                   \
                while (j > lo && before_##SFX(x.key, a[j - 1].key, desc)) {                      \
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
                    tmp[k++] = before_##SFX(a[j].key, a[i].key, desc) ? a[j++] : a[i++];         \
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
CT_RED_DEFINE_SORT(f, KeyF)
CT_RED_DEFINE_SORT(i, KeyI)

typedef struct {
    bool descending;
    bool median;
    int64_t start, count;
} SortParams;

/* Loads line ptr[0] into keys; returns the sorted array (inside scratch). */
#define CT_RED_DEFINE_SORT_LINE(SFX, KEY, T, LOAD, STORE)                                      \
    static void sort_line_##SFX(const CtDimDesc *d, const SortParams *sp, char *const *ptr,   \
                                KEY *keys)                                                    \
    {                                                                                         \
        int64_t n = d->n, s0 = d->dim_strides[0];                                             \
        T buf[BLOCK];                                                                         \
        for (int64_t off = 0; off < n; off += BLOCK) {                                        \
            int64_t m = n - off < BLOCK ? n - off : BLOCK;                                    \
            LOAD(buf, ptr[0] + off * s0, s0, m, d->dtypes[0]);                                \
            for (int64_t i = 0; i < m; i++) {                                                 \
                keys[off + i].key = buf[i];                                                   \
                keys[off + i].index = off + i;                                                \
            }                                                                                 \
        }                                                                                     \
        if (sp->median) { /* a NaN anywhere is the median, at its first position */          \
            for (int64_t i = 0; i < n; i++) {                                                 \
                if (keys[i].key != keys[i].key) {                                             \
                    T v = keys[i].key;                                                        \
                    if (ptr[1]) {                                                             \
                        STORE(ptr[1], 0, &v, 1, d->dtypes[1]);                                \
                    }                                                                         \
                    if (ptr[2]) {                                                             \
                        *(int64_t *)ptr[2] = i;                                               \
                    }                                                                         \
                    return;                                                                   \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        KEY *sorted = sort_##SFX(keys, keys + n, n, sp->descending);                          \
        for (int64_t i = 0; i < sp->count; i++) {                                             \
            const KEY *e = &sorted[sp->start + i];                                            \
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
    SortParams sp = {descending, false, start, count};
    if (count == 0) {
        return 0;
    }
    return run_lines(d, sort_line, &sp, (size_t)d->n * 2 * sizeof(KeyF));
}

static int cpu_median(const CtDimDesc *d)
{
    SortParams sp = {false, true, (d->n - 1) / 2, 1};
    return run_lines(d, sort_line, &sp, (size_t)d->n * 2 * sizeof(KeyF));
}

const struct CtReduceKernels ct_cpu_reduce_kernels = {
    .reduce = cpu_reduce,
    .arg_reduce = cpu_arg_reduce,
    .scan = cpu_scan,
    .softmax = cpu_softmax,
    .sort = cpu_sort,
    .median = cpu_median,
};
