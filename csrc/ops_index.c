/* ops_index.c: the index op family on every device, and its CPU kernels.
 *
 *   Tensor.__getitem__ / __setitem__ (basic indexing makes views; advanced indexing gathers
 *   and puts through the index kernels), index_put_, gather, scatter(_add), scatter_reduce,
 *   index_select, index_add/copy/fill/reduce, masked_fill/masked_select, nonzero/argwhere, take,
 *   one_hot, cat/stack (hstack, vstack, dstack), flip/fliplr/flipud, roll, repeat/tile, tril/triu,
 *   diag/diagonal.
 *
 * Layout: the CPU kernel table first (ct_cpu_index_kernels, see index.h for the contracts),
 * then the device-neutral ops, which do argument, shape and dtype logic and reach memory only
 * through the kernel table, views and ct_copy_; then the Python wrappers and method tables. */
#include "index.h"
#include "args.h"
#include "creation.h"
#include "elementwise.h" /* ct_can_cast */
#include "device.h"
#include "parallel.h"
#include "registry.h"
#include "search.h"
#include "tensor.h"
#include "views.h"
#include <math.h>
#include <string.h>

/* ============================================================================================
 * CPU kernels
 * ============================================================================================ */

/* What the gather/put/offsets inner loops need, copied out of the iterator and CtIndexArgs. */
typedef struct {
    int first;  /* iterator operand of index 0 */
    int nindex;
    bool is64[CT_INDEX_OFFSETS_MAX];
    int64_t sizes[CT_INDEX_OFFSETS_MAX];
    int64_t strides[CT_INDEX_OFFSETS_MAX]; /* bytes */
    bool wrap;
    CtScalar alpha;
    int bad;           /* first out-of-range index operand, -1 if none (written atomically) */
    int64_t bad_value;
} IndexLoopCtx;

static void index_ctx_init(IndexLoopCtx *c, const CtIter *it, const CtIndexArgs *args, int first)
{
    c->first = first;
    c->nindex = args->nindex;
    for (int k = 0; k < args->nindex; k++) {
        c->is64[k] = it->dtypes[first + k] == CT_I64;
        c->sizes[k] = args->sizes[k];
        c->strides[k] = args->strides[k];
    }
    c->wrap = args->wrap;
    c->alpha = args->alpha;
    c->bad = -1;
    c->bad_value = 0;
}

static void report_bad(IndexLoopCtx *c, int k, int64_t value)
{
    int expected = -1;
    if (__atomic_compare_exchange_n(&c->bad, &expected, k, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        c->bad_value = value;
    }
}

/* Byte offset selected by the index operands at element i of the current run; false (and the
 * value recorded) when one is out of range. */
static inline bool index_offset(IndexLoopCtx *c, char **data, const int64_t *strides, int64_t i, int64_t *off)
{
    int64_t o = 0;
    for (int k = 0; k < c->nindex; k++) {
        const char *p = data[c->first + k] + i * strides[c->first + k];
        int64_t v = c->is64[k] ? *(const int64_t *)p : (int64_t) * (const int32_t *)p;
        int64_t w = (v < 0 && c->wrap) ? v + c->sizes[k] : v;
        if ((uint64_t)w >= (uint64_t)c->sizes[k]) {
            report_bad(c, k, v);
            return false;
        }
        o += w * c->strides[k];
    }
    *off = o;
    return true;
}

/* One index operand of type IT (the hot case: x[idx], index_select, gather, scatter): checks
 * and wraps value v, or reports it and skips the element. */
#define CT_ONE_INDEX(IT, ip, si, i, w, skip)                                                    \
    int64_t v = (int64_t) * (const IT *)((ip) + (i) * (si));                                   \
    int64_t w = (v < 0 && c->wrap) ? v + size : v;                                             \
    if ((uint64_t)w >= (uint64_t)size) {                                                       \
        report_bad(c, 0, v);                                                                   \
        skip;                                                                                  \
    }

/* out[i] = src[i + idx[i] * step] for one index of type IT; a run where the index does not
 * move (idx stride 0: whole rows gathered) is one offset and a plain copy. */
#define CT_DEFINE_GATHER1(T, IT)                                                                 \
    static void gather1_##T##_##IT(IndexLoopCtx *c, char **data, const int64_t *strides, int64_t n) \
    {                                                                                            \
        char *out = data[0];                                                                     \
        const char *src = data[1], *ip = data[2];                                                \
        int64_t so = strides[0], ss = strides[1], si = strides[2];                               \
        int64_t size = c->sizes[0], step = c->strides[0];                                        \
        if (si == 0) {                                                                           \
            CT_ONE_INDEX(IT, ip, si, 0, w, return)                                               \
            src += w * step;                                                                     \
            if (so == sizeof(T) && ss == sizeof(T)) {                                            \
                memcpy(out, src, (size_t)n * sizeof(T));                                         \
                return;                                                                          \
            }                                                                                    \
            for (int64_t i = 0; i < n; i++) {                                                    \
                *(T *)(out + i * so) = *(const T *)(src + i * ss);                               \
            }                                                                                    \
            return;                                                                              \
        }                                                                                        \
        for (int64_t i = 0; i < n; i++) {                                                        \
            CT_ONE_INDEX(IT, ip, si, i, w, continue)                                             \
            *(T *)(out + i * so) = *(const T *)(src + i * ss + w * step);                        \
        }                                                                                        \
    }

/* dst[i + idx[i] * step] = values[i] for one index of type IT. */
#define CT_DEFINE_PUT1(T, IT)                                                                    \
    static void put1_##T##_##IT(IndexLoopCtx *c, char **data, const int64_t *strides, int64_t n) \
    {                                                                                            \
        char *dst = data[0];                                                                     \
        const char *val = data[1], *ip = data[2];                                                \
        int64_t sd = strides[0], sv = strides[1], si = strides[2];                               \
        int64_t size = c->sizes[0], step = c->strides[0];                                        \
        if (si == 0) {                                                                           \
            CT_ONE_INDEX(IT, ip, si, 0, w, return)                                               \
            dst += w * step;                                                                     \
            for (int64_t i = 0; i < n; i++) {                                                    \
                *(T *)(dst + i * sd) = *(const T *)(val + i * sv);                               \
            }                                                                                    \
            return;                                                                              \
        }                                                                                        \
        for (int64_t i = 0; i < n; i++) {                                                        \
            CT_ONE_INDEX(IT, ip, si, i, w, continue)                                             \
            *(T *)(dst + i * sd + w * step) = *(const T *)(val + i * sv);                        \
        }                                                                                        \
    }

/* Gather loops, one per element size: out[i] = src[i + offset(i)]. */
#define CT_DEFINE_GATHER(T)                                                                      \
    CT_DEFINE_GATHER1(T, int64_t)                                                                \
    CT_DEFINE_GATHER1(T, int32_t)                                                                \
    static void gather_loop_##T(char **data, const int64_t *strides, int64_t n, void *arg)      \
    {                                                                                            \
        IndexLoopCtx *c = (IndexLoopCtx *)arg;                                                   \
        if (c->nindex == 1) {                                                                    \
            (c->is64[0] ? gather1_##T##_int64_t : gather1_##T##_int32_t)(c, data, strides, n);   \
            return;                                                                              \
        }                                                                                        \
        for (int64_t i = 0; i < n; i++) {                                                        \
            int64_t off;                                                                         \
            if (index_offset(c, data, strides, i, &off)) {                                       \
                *(T *)(data[0] + i * strides[0]) = *(const T *)(data[1] + i * strides[1] + off); \
            }                                                                                    \
        }                                                                                        \
    }

/* Put loops (assignment), one per element size: dst[i + offset(i)] = values[i]. */
#define CT_DEFINE_PUT(T)                                                                         \
    CT_DEFINE_PUT1(T, int64_t)                                                                   \
    CT_DEFINE_PUT1(T, int32_t)                                                                   \
    static void put_loop_##T(char **data, const int64_t *strides, int64_t n, void *arg)         \
    {                                                                                            \
        IndexLoopCtx *c = (IndexLoopCtx *)arg;                                                   \
        if (c->nindex == 1) {                                                                    \
            (c->is64[0] ? put1_##T##_int64_t : put1_##T##_int32_t)(c, data, strides, n);         \
            return;                                                                              \
        }                                                                                        \
        for (int64_t i = 0; i < n; i++) {                                                        \
            int64_t off;                                                                         \
            if (index_offset(c, data, strides, i, &off)) {                                       \
                *(T *)(data[0] + i * strides[0] + off) = *(const T *)(data[1] + i * strides[1]); \
            }                                                                                    \
        }                                                                                        \
    }

/* masked_fill loops, one per element size: self[i] = value where mask[i]. */
#define CT_DEFINE_MASKED_FILL(T)                                                                  \
    static void masked_fill_loop_##T(char **data, const int64_t *strides, int64_t n, void *arg)  \
    {                                                                                             \
        T value = *(const T *)data[2];                                                            \
        char *dst = data[0];                                                                      \
        const char *mask = data[1];                                                               \
        if (strides[0] == sizeof(T) && strides[1] == 1) { /* dense: a branch-free select */      \
            T *d = (T *)dst;                                                                      \
            const uint8_t *m = (const uint8_t *)mask;                                             \
            for (int64_t i = 0; i < n; i++) {                                                     \
                d[i] = m[i] ? value : d[i];                                                       \
            }                                                                                     \
            return;                                                                               \
        }                                                                                         \
        for (int64_t i = 0; i < n; i++) {                                                         \
            if (*(const uint8_t *)(mask + i * strides[1])) {                                      \
                *(T *)(dst + i * strides[0]) = value;                                             \
            }                                                                                     \
        }                                                                                         \
    }

CT_DEFINE_GATHER(uint8_t)
CT_DEFINE_GATHER(uint16_t)
CT_DEFINE_GATHER(uint32_t)
CT_DEFINE_GATHER(uint64_t)
CT_DEFINE_PUT(uint8_t)
CT_DEFINE_PUT(uint16_t)
CT_DEFINE_PUT(uint32_t)
CT_DEFINE_PUT(uint64_t)
CT_DEFINE_MASKED_FILL(uint8_t)
CT_DEFINE_MASKED_FILL(uint16_t)
CT_DEFINE_MASKED_FILL(uint32_t)
CT_DEFINE_MASKED_FILL(uint64_t)

/* Accumulating puts, one per dtype: dst += alpha * value, dst *= value (in acctype). */
#define CT_DEFINE_PUT_ADD(NAME, ctype, acctype, ...)                                          \
    static void put_add_##NAME(char **data, const int64_t *strides, int64_t n, void *arg)       \
    {                                                                                            \
        IndexLoopCtx *c = (IndexLoopCtx *)arg;                                                   \
        acctype alpha = c->alpha.kind == CT_KIND_FLOAT ? (acctype)c->alpha.v.d                   \
                                                        : (acctype)ct_scalar_to_int(&c->alpha);  \
        for (int64_t i = 0; i < n; i++) {                                                        \
            int64_t off;                                                                         \
            if (index_offset(c, data, strides, i, &off)) {                                       \
                char *d = data[0] + i * strides[0] + off;                                        \
                acctype v = CT_LOAD_##NAME(data[1] + i * strides[1]);                            \
                CT_STORE_##NAME(d, CT_LOAD_##NAME(d) + alpha * v);                               \
            }                                                                                    \
        }                                                                                        \
    }
CT_DTYPE_LIST(CT_DEFINE_PUT_ADD)

/* Combining puts, one per dtype and kind: dst = KIND_NAME(dst, value) in acctype. */
#define CT_DEFINE_PUT_COMBINE(KIND, kind, NAME, acctype)                                        \
    static void put_##kind##_##NAME(char **data, const int64_t *strides, int64_t n, void *arg)  \
    {                                                                                            \
        IndexLoopCtx *c = (IndexLoopCtx *)arg;                                                   \
        for (int64_t i = 0; i < n; i++) {                                                        \
            int64_t off;                                                                         \
            if (index_offset(c, data, strides, i, &off)) {                                       \
                char *d = data[0] + i * strides[0] + off;                                        \
                acctype v = CT_LOAD_##NAME(data[1] + i * strides[1]);                            \
                CT_STORE_##NAME(d, KIND##_##NAME(CT_LOAD_##NAME(d), v));                         \
            }                                                                                    \
        }                                                                                        \
    }
/* bool multiplies as logical and (a plain * would be an int in bool context) */
#define MUL_BOOL(a, b) ((a) && (b))
#define MUL_U8(a, b) ((a) * (b))
#define MUL_I8(a, b) ((a) * (b))
#define MUL_I16(a, b) ((a) * (b))
#define MUL_I32(a, b) ((a) * (b))
#define MUL_I64(a, b) ((a) * (b))
#define MUL_F16(a, b) ((a) * (b))
#define MUL_BF16(a, b) ((a) * (b))
#define MUL_F32(a, b) ((a) * (b))
#define MUL_F64(a, b) ((a) * (b))
/* amax / amin: a NaN already there stays, a NaN value replaces (PyTorch's propagation) */
#define CT_MAX_INT(a, b) ((b) > (a) ? (b) : (a))
#define CT_MIN_INT(a, b) ((b) < (a) ? (b) : (a))
#define CT_MAX_FLT(a, b) (((b) > (a) || isnan(b)) ? (b) : (a))
#define CT_MIN_FLT(a, b) (((b) < (a) || isnan(b)) ? (b) : (a))
#define MAX_BOOL CT_MAX_INT
#define MAX_U8 CT_MAX_INT
#define MAX_I8 CT_MAX_INT
#define MAX_I16 CT_MAX_INT
#define MAX_I32 CT_MAX_INT
#define MAX_I64 CT_MAX_INT
#define MAX_F16 CT_MAX_FLT
#define MAX_BF16 CT_MAX_FLT
#define MAX_F32 CT_MAX_FLT
#define MAX_F64 CT_MAX_FLT
#define MIN_BOOL CT_MIN_INT
#define MIN_U8 CT_MIN_INT
#define MIN_I8 CT_MIN_INT
#define MIN_I16 CT_MIN_INT
#define MIN_I32 CT_MIN_INT
#define MIN_I64 CT_MIN_INT
#define MIN_F16 CT_MIN_FLT
#define MIN_BF16 CT_MIN_FLT
#define MIN_F32 CT_MIN_FLT
#define MIN_F64 CT_MIN_FLT
#define CT_DEFINE_PUT_COMBINE_ROWS(NAME, ctype, acctype, ...)                                    \
    CT_DEFINE_PUT_COMBINE(MUL, mul, NAME, acctype)                                               \
    CT_DEFINE_PUT_COMBINE(MAX, max, NAME, acctype)                                               \
    CT_DEFINE_PUT_COMBINE(MIN, min, NAME, acctype)
CT_DTYPE_LIST(CT_DEFINE_PUT_COMBINE_ROWS)

#define CT_PUT_ADD_ROW(NAME, ...) put_add_##NAME,
#define CT_PUT_MUL_ROW(NAME, ...) put_mul_##NAME,
#define CT_PUT_MAX_ROW(NAME, ...) put_max_##NAME,
#define CT_PUT_MIN_ROW(NAME, ...) put_min_##NAME,
static const CtInnerLoop put_add_table[CT_NUM_DTYPES] = {CT_DTYPE_LIST(CT_PUT_ADD_ROW)};
static const CtInnerLoop put_mul_table[CT_NUM_DTYPES] = {CT_DTYPE_LIST(CT_PUT_MUL_ROW)};
static const CtInnerLoop put_max_table[CT_NUM_DTYPES] = {CT_DTYPE_LIST(CT_PUT_MAX_ROW)};
static const CtInnerLoop put_min_table[CT_NUM_DTYPES] = {CT_DTYPE_LIST(CT_PUT_MIN_ROW)};

/* out (int64 byte offsets) = sum_k idx_k * stride_k. */
static void offsets_loop(char **data, const int64_t *strides, int64_t n, void *arg)
{
    IndexLoopCtx *c = (IndexLoopCtx *)arg;
    for (int64_t i = 0; i < n; i++) {
        int64_t off;
        if (index_offset(c, data, strides, i, &off)) {
            *(int64_t *)(data[0] + i * strides[0]) = off;
        }
    }
}

static CtInnerLoop loop_by_size(size_t itemsize, CtInnerLoop l1, CtInnerLoop l2, CtInnerLoop l4, CtInnerLoop l8)
{
    switch (itemsize) {
    case 1:
        return l1;
    case 2:
        return l2;
    case 4:
        return l4;
    default:
        return l8;
    }
}

/* Walks the whole iteration space on the calling thread (for accumulating puts, where two
 * threads could hit the same destination). */
static void iter_run_serial(const CtIter *it, CtInnerLoop loop, void *ctx)
{
    if (it->numel == 0) {
        return;
    }
    int64_t idx[CT_MAX_DIMS] = {0};
    char *ptr[CT_MAX_OPERANDS];
    for (int op = 0; op < it->nops; op++) {
        ptr[op] = it->data[op];
    }
    for (;;) {
        loop(ptr, it->strides[0], it->shape[0], ctx);
        int d = 1;
        for (; d < it->ndim; d++) {
            idx[d]++;
            for (int op = 0; op < it->nops; op++) {
                ptr[op] += it->strides[d][op];
            }
            if (idx[d] < it->shape[d]) {
                break;
            }
            for (int op = 0; op < it->nops; op++) {
                ptr[op] -= idx[d] * it->strides[d][op];
            }
            idx[d] = 0;
        }
        if (d >= it->ndim) {
            return;
        }
    }
}

static void finish_index_args(CtIndexArgs *args, const IndexLoopCtx *c)
{
    args->bad = c->bad;
    args->bad_value = c->bad_value;
}

static int cpu_index(const CtIter *it, CtIndexArgs *args)
{
    IndexLoopCtx c;
    index_ctx_init(&c, it, args, 2);
    size_t isz = ct_dtype_info[it->dtypes[0]].itemsize;
    ct_iter_cpu_run(it, loop_by_size(isz, gather_loop_uint8_t, gather_loop_uint16_t, gather_loop_uint32_t,
                                     gather_loop_uint64_t),
                    &c);
    finish_index_args(args, &c);
    return 0;
}

static int cpu_index_put(const CtIter *it, CtIndexArgs *args)
{
    IndexLoopCtx c;
    index_ctx_init(&c, it, args, 2);
    if (args->reduce == CT_REDUCE_NONE) {
        size_t isz = ct_dtype_info[it->dtypes[0]].itemsize;
        CtInnerLoop loop = loop_by_size(isz, put_loop_uint8_t, put_loop_uint16_t, put_loop_uint32_t, put_loop_uint64_t);
        ct_iter_cpu_run(it, loop, &c);
    } else {
        const CtInnerLoop *table = args->reduce == CT_REDUCE_ADD   ? put_add_table
                                   : args->reduce == CT_REDUCE_MUL ? put_mul_table
                                   : args->reduce == CT_REDUCE_MAX ? put_max_table
                                                                   : put_min_table;
        iter_run_serial(it, table[it->dtypes[0]], &c);
    }
    finish_index_args(args, &c);
    return 0;
}

static int cpu_index_offsets(const CtIter *it, CtIndexArgs *args)
{
    IndexLoopCtx c;
    index_ctx_init(&c, it, args, 1);
    ct_iter_cpu_run(it, offsets_loop, &c);
    finish_index_args(args, &c);
    return 0;
}

static int cpu_masked_fill(const CtIter *it)
{
    size_t isz = ct_dtype_info[it->dtypes[0]].itemsize;
    ct_iter_cpu_run(it, loop_by_size(isz, masked_fill_loop_uint8_t, masked_fill_loop_uint16_t,
                                     masked_fill_loop_uint32_t, masked_fill_loop_uint64_t),
                    NULL);
    return 0;
}

/* --- two-pass compaction (nonzero, masked_select) ------------------------------------------ */

/* t as a contiguous bool tensor (new reference): nonzero-ness of any dtype, NaN counts as true. */
static CtTensorObject *as_contiguous_bool(CtTensorObject *t)
{
    if (t->dtype == CT_BOOL) {
        return ct_contiguous(t);
    }
    return ct_to(t, CT_BOOL, ct_device_of(t), true);
}

/* Chunks for the two passes: enough to keep every thread busy, few enough to be cheap. */
static int compaction_chunks(int64_t n)
{
    int64_t c = n / 16384;
    int64_t most = 8 * (int64_t)ct_get_num_threads();
    if (c > most) {
        c = most;
    }
    return c < 1 ? 1 : (int)c;
}

typedef struct {
    const uint8_t *flags; /* (n,) 0/1 bytes */
    int64_t n;
    int nchunks;
    int64_t *counts;      /* (nchunks + 1,) counts, then exclusive prefix sums */
    void *ctx;            /* what the write pass needs */
} Compaction;

static inline int64_t chunk_begin(const Compaction *c, int64_t chunk) { return c->n * chunk / c->nchunks; }

static void count_chunks(int64_t begin, int64_t end, void *arg)
{
    Compaction *c = (Compaction *)arg;
    for (int64_t k = begin; k < end; k++) {
        int64_t lo = chunk_begin(c, k), hi = chunk_begin(c, k + 1), count = 0;
        for (int64_t i = lo; i < hi; i++) {
            count += c->flags[i] != 0;
        }
        c->counts[k] = count;
    }
}

/* Counts the flags per chunk and turns counts into write positions; returns the total. */
static int64_t compaction_count(Compaction *c)
{
    ct_parallel_for(c->nchunks, 1, count_chunks, c);
    int64_t total = 0;
    for (int k = 0; k < c->nchunks; k++) {
        int64_t n = c->counts[k];
        c->counts[k] = total;
        total += n;
    }
    c->counts[c->nchunks] = total;
    return total;
}

static int cpu_count_nonzero(CtTensorObject *t, int64_t *count)
{
    CtTensorObject *b = as_contiguous_bool(t);
    if (b == NULL) {
        return -1;
    }
    int64_t n = ct_numel(b);
    int nchunks = compaction_chunks(n);
    int64_t *counts = PyMem_Malloc(sizeof(int64_t) * (nchunks + 1));
    if (counts == NULL) {
        Py_DECREF(b);
        PyErr_NoMemory();
        return -1;
    }
    Compaction c = {(const uint8_t *)ct_data(b), n, nchunks, counts, NULL};
    *count = compaction_count(&c);
    PyMem_Free(counts);
    Py_DECREF(b);
    return 0;
}

typedef struct {
    int ndim;
    int64_t sizes[CT_MAX_DIMS];
    int64_t *out; /* (total, ndim) */
} NonzeroCtx;

static void nonzero_chunks(int64_t begin, int64_t end, void *arg)
{
    Compaction *c = (Compaction *)arg;
    const NonzeroCtx *z = (const NonzeroCtx *)c->ctx;
    int nd = z->ndim;
    for (int64_t k = begin; k < end; k++) {
        int64_t lo = chunk_begin(c, k), hi = chunk_begin(c, k + 1);
        int64_t *row = z->out + c->counts[k] * nd;
        if (nd == 1) {
            for (int64_t i = lo; i < hi; i++) {
                if (c->flags[i]) {
                    *row++ = i;
                }
            }
            continue;
        }
        int64_t coord[CT_MAX_DIMS];
        int64_t rem = lo;
        for (int d = nd - 1; d >= 0; d--) {
            coord[d] = rem % z->sizes[d];
            rem /= z->sizes[d];
        }
        for (int64_t i = lo; i < hi; i++) {
            if (c->flags[i]) {
                memcpy(row, coord, sizeof(int64_t) * nd);
                row += nd;
            }
            for (int d = nd - 1; d >= 0; d--) { /* next coordinate, row-major */
                if (++coord[d] < z->sizes[d]) {
                    break;
                }
                coord[d] = 0;
            }
        }
    }
}

static CtTensorObject *cpu_nonzero(CtTensorObject *t)
{
    CtTensorObject *b = NULL, *out = NULL;
    int64_t *counts = NULL;
    b = as_contiguous_bool(t);
    if (b == NULL) {
        goto done;
    }
    int64_t n = ct_numel(b);
    int nchunks = compaction_chunks(n);
    counts = PyMem_Malloc(sizeof(int64_t) * (nchunks + 1));
    if (counts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    NonzeroCtx z;
    z.ndim = t->ndim;
    memcpy(z.sizes, t->sizes, sizeof(int64_t) * t->ndim);
    Compaction c = {(const uint8_t *)ct_data(b), n, nchunks, counts, &z};
    int64_t shape[2] = {compaction_count(&c), t->ndim};
    out = ct_empty(2, shape, CT_I64, ct_cpu());
    if (out == NULL) {
        goto done;
    }
    z.out = (int64_t *)ct_data(out);
    if (t->ndim > 0 && shape[0] > 0) {
        ct_parallel_for(nchunks, 1, nonzero_chunks, &c);
    }
done:
    PyMem_Free(counts);
    Py_XDECREF(b);
    return out;
}

typedef struct {
    int nrow;                     /* row dims (mask dims, coalesced) */
    int64_t sizes[CT_MAX_DIMS];
    int64_t strides[CT_MAX_DIMS]; /* bytes in src */
    const char *src;
    char *out;
    int64_t inner;                /* elements per row */
    int64_t inner_stride;         /* bytes */
    size_t itemsize;
} SelectCtx;

/* Copies one row of sel->inner elements. */
static inline void copy_row(const SelectCtx *s, char *dst, const char *src)
{
    size_t isz = s->itemsize;
    if (s->inner == 1) { /* one element: a typed move, not a memcpy call */
        switch (isz) {
        case 1:
            *(uint8_t *)dst = *(const uint8_t *)src;
            return;
        case 2:
            *(uint16_t *)dst = *(const uint16_t *)src;
            return;
        case 4:
            *(uint32_t *)dst = *(const uint32_t *)src;
            return;
        default:
            *(uint64_t *)dst = *(const uint64_t *)src;
            return;
        }
    }
    if (s->inner_stride == (int64_t)isz) {
        memcpy(dst, src, isz * s->inner);
        return;
    }
    for (int64_t j = 0; j < s->inner; j++) {
        memcpy(dst + j * isz, src + j * s->inner_stride, isz);
    }
}

/* One-element rows over one row dim (x[mask] on a vector): a branch-free compaction. */
#define CT_DEFINE_SELECT_1D(T)                                                                  \
    static void select_1d_##T(const Compaction *c, const SelectCtx *s, int64_t lo, int64_t hi,  \
                              int64_t k)                                                         \
    {                                                                                            \
        const uint8_t *m = c->flags;                                                             \
        const char *src = s->src;                                                                \
        int64_t step = s->strides[0];                                                            \
        T *out = (T *)s->out + c->counts[k];                                                     \
        int64_t w = 0, wend = c->counts[k + 1] - c->counts[k];                                   \
        for (int64_t i = lo; i < hi && w < wend; i++) {                                          \
            out[w] = *(const T *)(src + i * step);                                               \
            w += m[i] != 0;                                                                      \
        }                                                                                        \
    }
CT_DEFINE_SELECT_1D(uint8_t)
CT_DEFINE_SELECT_1D(uint16_t)
CT_DEFINE_SELECT_1D(uint32_t)
CT_DEFINE_SELECT_1D(uint64_t)

static void select_chunks(int64_t begin, int64_t end, void *arg)
{
    Compaction *c = (Compaction *)arg;
    const SelectCtx *s = (const SelectCtx *)c->ctx;
    int64_t row_bytes = s->inner * (int64_t)s->itemsize;
    for (int64_t k = begin; k < end; k++) {
        int64_t lo = chunk_begin(c, k), hi = chunk_begin(c, k + 1);
        if (s->nrow == 1 && s->inner == 1) {
            switch (s->itemsize) {
            case 1:
                select_1d_uint8_t(c, s, lo, hi, k);
                break;
            case 2:
                select_1d_uint16_t(c, s, lo, hi, k);
                break;
            case 4:
                select_1d_uint32_t(c, s, lo, hi, k);
                break;
            default:
                select_1d_uint64_t(c, s, lo, hi, k);
                break;
            }
            continue;
        }
        char *dst = s->out + c->counts[k] * row_bytes;
        int64_t coord[CT_MAX_DIMS];
        int64_t rem = lo, offset = 0;
        for (int d = s->nrow - 1; d >= 0; d--) {
            coord[d] = rem % s->sizes[d];
            rem /= s->sizes[d];
            offset += coord[d] * s->strides[d];
        }
        /* one-element rows: always copy, advance by the flag (no unpredictable branch), stop
         * once the chunk's share of the output is written */
        int64_t w = 0, wend = c->counts[k + 1] - c->counts[k];
        for (int64_t i = lo; i < hi && w < wend; i++) {
            if (s->inner == 1) {
                copy_row(s, dst, s->src + offset);
                w += c->flags[i] != 0;
                dst += row_bytes * (c->flags[i] != 0);
            } else if (c->flags[i]) {
                copy_row(s, dst, s->src + offset);
                dst += row_bytes;
                w++;
            }
            for (int d = s->nrow - 1; d >= 0; d--) {
                offset += s->strides[d];
                if (++coord[d] < s->sizes[d]) {
                    break;
                }
                offset -= coord[d] * s->strides[d];
                coord[d] = 0;
            }
        }
    }
}

/* True when dims [from, to) of t walk memory as one run: *stride gets the run's stride. */
static bool collapsible(const CtTensorObject *t, int from, int to, int64_t *stride)
{
    int64_t expected = 0;
    bool have = false;
    *stride = 1;
    for (int d = to - 1; d >= from; d--) {
        if (t->sizes[d] == 1) {
            continue;
        }
        if (!have) {
            *stride = t->strides[d];
            expected = t->strides[d] * t->sizes[d];
            have = true;
        } else if (t->strides[d] != expected) {
            return false;
        } else {
            expected *= t->sizes[d];
        }
    }
    return true;
}

static CtTensorObject *cpu_masked_select(CtTensorObject *src, CtTensorObject *mask)
{
    CtTensorObject *b = NULL, *s = NULL, *out = NULL;
    int64_t *counts = NULL;
    int m = mask->ndim;
    int64_t inner_stride;
    b = as_contiguous_bool(mask);
    if (b == NULL) {
        goto done;
    }
    s = collapsible(src, m, src->ndim, &inner_stride) ? (CtTensorObject *)Py_NewRef(src) : ct_contiguous(src);
    if (s == NULL) {
        goto done;
    }
    collapsible(s, m, s->ndim, &inner_stride);
    SelectCtx sel;
    size_t isz = ct_itemsize(s);
    sel.itemsize = isz;
    sel.inner = 1;
    for (int d = m; d < s->ndim; d++) {
        sel.inner *= s->sizes[d];
    }
    sel.inner_stride = inner_stride * (int64_t)isz;
    /* Row dims, coalesced where they are contiguous with each other (mask order = row-major). */
    sel.nrow = 0;
    for (int d = 0; d < m; d++) {
        int64_t size = s->sizes[d], stride = s->strides[d] * (int64_t)isz;
        if (sel.nrow > 0 && sel.strides[sel.nrow - 1] == stride * size) {
            sel.sizes[sel.nrow - 1] *= size;
            sel.strides[sel.nrow - 1] = stride;
            continue;
        }
        sel.sizes[sel.nrow] = size;
        sel.strides[sel.nrow] = stride;
        sel.nrow++;
    }
    if (sel.nrow == 0) { /* 0-d mask: one row */
        sel.sizes[0] = 1;
        sel.strides[0] = 0;
        sel.nrow = 1;
    }
    sel.src = ct_data(s);
    int64_t n = ct_numel(b);
    int nchunks = compaction_chunks(n);
    counts = PyMem_Malloc(sizeof(int64_t) * (nchunks + 1));
    if (counts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Compaction c = {(const uint8_t *)ct_data(b), n, nchunks, counts, &sel};
    int64_t shape[CT_MAX_DIMS];
    shape[0] = compaction_count(&c);
    for (int d = m; d < s->ndim; d++) {
        shape[1 + d - m] = s->sizes[d];
    }
    out = ct_empty(1 + s->ndim - m, shape, s->dtype, ct_cpu());
    if (out == NULL) {
        goto done;
    }
    sel.out = ct_data(out);
    if (shape[0] > 0 && sel.inner > 0) {
        ct_parallel_for(nchunks, 1, select_chunks, &c);
    }
done:
    PyMem_Free(counts);
    Py_XDECREF(b);
    Py_XDECREF(s);
    return out;
}

/* --- tril / triu ----------------------------------------------------------------------------- */
typedef struct {
    int nbatch;
    int64_t bsizes[CT_MAX_DIMS];
    int64_t bsrc[CT_MAX_DIMS], bout[CT_MAX_DIMS]; /* batch strides, bytes */
    int64_t rows, cols;
    int64_t src_row, src_col, out_row, out_col; /* bytes */
    const char *src;
    char *out;
    size_t itemsize;
    int64_t diagonal;
    bool upper;
} TriangleCtx;

static void triangle_rows(int64_t begin, int64_t end, void *arg)
{
    const TriangleCtx *t = (const TriangleCtx *)arg;
    size_t isz = t->itemsize;
    for (int64_t q = begin; q < end; q++) {
        int64_t i = q % t->rows, b = q / t->rows;
        const char *s = t->src + i * t->src_row;
        char *o = t->out + i * t->out_row;
        for (int d = t->nbatch - 1; d >= 0; d--) {
            int64_t c = b % t->bsizes[d];
            b /= t->bsizes[d];
            s += c * t->bsrc[d];
            o += c * t->bout[d];
        }
        /* tril keeps columns j <= i + diagonal; triu keeps j >= i + diagonal: [lo, hi) */
        int64_t edge = i + t->diagonal, lo, hi;
        if (t->upper) {
            lo = edge < 0 ? 0 : edge > t->cols ? t->cols : edge;
            hi = t->cols;
        } else {
            lo = 0;
            hi = edge + 1 < 0 ? 0 : edge + 1 > t->cols ? t->cols : edge + 1;
        }
        if (t->out_col == (int64_t)isz && t->src_col == (int64_t)isz) {
            if (o != s) {
                memcpy(o + lo * isz, s + lo * isz, (size_t)(hi - lo) * isz);
            }
            memset(o, 0, (size_t)lo * isz); /* zero is all-zero bits in every dtype */
            memset(o + hi * isz, 0, (size_t)(t->cols - hi) * isz);
            continue;
        }
        for (int64_t j = 0; j < t->cols; j++) {
            char *dst = o + j * t->out_col;
            if (j < lo || j >= hi) {
                memset(dst, 0, isz);
            } else if (dst != s + j * t->src_col) {
                memcpy(dst, s + j * t->src_col, isz);
            }
        }
    }
}

static int cpu_triangle(CtTensorObject *out, CtTensorObject *src, int64_t diagonal, bool upper)
{
    TriangleCtx t;
    int nd = src->ndim;
    int64_t isz = (int64_t)ct_itemsize(src);
    t.nbatch = nd - 2;
    for (int d = 0; d < nd - 2; d++) {
        t.bsizes[d] = src->sizes[d];
        t.bsrc[d] = src->strides[d] * isz;
        t.bout[d] = out->strides[d] * isz;
    }
    t.rows = src->sizes[nd - 2];
    t.cols = src->sizes[nd - 1];
    t.src_row = src->strides[nd - 2] * isz;
    t.src_col = src->strides[nd - 1] * isz;
    t.out_row = out->strides[nd - 2] * isz;
    t.out_col = out->strides[nd - 1] * isz;
    t.src = ct_data(src);
    t.out = ct_data(out);
    t.itemsize = (size_t)isz;
    /* beyond rows + cols every diagonal keeps all or nothing; clamping avoids overflow */
    int64_t reach = t.rows + t.cols;
    t.diagonal = diagonal > reach ? reach : diagonal < -reach ? -reach : diagonal;
    t.upper = upper;
    int64_t nrows = ct_numel(src) / (t.cols > 0 ? t.cols : 1);
    if (ct_numel(src) == 0) {
        return 0;
    }
    ct_parallel_for(nrows, 4096 / (t.cols > 0 ? t.cols : 1) + 1, triangle_rows, &t);
    return 0;
}

static int cpu_int_minmax(CtTensorObject *t, int64_t *min, int64_t *max)
{
    CtTensorObject *c = ct_contiguous(t);
    if (c == NULL) {
        return -1;
    }
    const int64_t *p = (const int64_t *)ct_data(c);
    int64_t n = ct_numel(c), lo = p[0], hi = p[0];
    for (int64_t i = 1; i < n; i++) {
        lo = p[i] < lo ? p[i] : lo;
        hi = p[i] > hi ? p[i] : hi;
    }
    *min = lo;
    *max = hi;
    Py_DECREF(c);
    return 0;
}

const struct CtIndexKernels ct_cpu_index_kernels = {
    .index = cpu_index,
    .index_put = cpu_index_put,
    .index_offsets = cpu_index_offsets,
    .masked_fill = cpu_masked_fill,
    .count_nonzero = cpu_count_nonzero,
    .nonzero = cpu_nonzero,
    .masked_select = cpu_masked_select,
    .triangle = cpu_triangle,
    .int_minmax = cpu_int_minmax,
    .searchsorted = ct_cpu_searchsorted,
};

/* ============================================================================================
 * Device-neutral helpers
 * ============================================================================================ */

static const struct CtIndexKernels *index_kernels(CtDevice device)
{
    const CtDeviceOps *ops = ct_device_ops(device);
    if (ops == NULL) {
        return NULL;
    }
    if (ops->index == NULL) {
        PyErr_Format(PyExc_NotImplementedError, "index ops are not implemented on %s", ops->name);
        return NULL;
    }
    return ops->index;
}

/* PyTorch's legacy tensor type name in messages ("torch.LongTensor"). */
static void legacy_type_name(const CtTensorObject *t, char *buf, size_t n)
{
    snprintf(buf, n, "torch.%s%sTensor", ct_device_of(t).type == CT_DEV_CUDA ? "cuda." : "",
             ct_scalar_type_name(t->dtype));
}

static bool is_index_dtype(CtDType d) { return d == CT_I64 || d == CT_I32; }

/* The type name PyTorch prints for an argument ("Tensor", "int", "numpy.ndarray"). */
static const char *type_name(PyObject *obj) { return CtTensor_Check(obj) ? "Tensor" : Py_TYPE(obj)->tp_name; }

/* A zero-filled contiguous tensor. */
static CtTensorObject *zeros(int nd, const int64_t *sizes, CtDType dtype, CtDevice device)
{
    CtTensorObject *t = ct_empty(nd, sizes, dtype, device);
    if (t == NULL) {
        return NULL;
    }
    size_t nbytes = (size_t)ct_numel(t) * ct_itemsize(t);
    const CtDeviceOps *ops = ct_device_ops(device);
    if (nbytes > 0 && (ops == NULL || ops->memset(ct_data(t), 0, nbytes, device) < 0)) {
        Py_DECREF(t);
        return NULL;
    }
    return t;
}

/* A 0-d tensor of dtype on device holding the scalar. */
static CtTensorObject *scalar_of(const CtScalar *s, CtDType dtype, CtDevice device)
{
    return ct_scalar_tensor(s, dtype, device);
}

/* t moved to device (new reference; t itself when already there). */
static CtTensorObject *on_device(CtTensorObject *t, CtDevice device)
{
    return ct_to(t, t->dtype, device, false);
}

/* Strides that broadcast t (aligned to the right) to nd dims of sizes; -1 with
 * ct_broadcast_shapes' error when impossible. */
static int broadcast_strides(const CtTensorObject *t, int nd, const int64_t *sizes, int64_t *strides)
{
    if (t->ndim > nd) {
        return -1;
    }
    for (int d = 0; d < nd; d++) {
        int td = t->ndim - nd + d;
        if (td < 0) {
            strides[d] = 0;
        } else if (t->sizes[td] == sizes[d]) {
            strides[d] = t->sizes[td] == 1 ? 0 : t->strides[td];
        } else if (t->sizes[td] == 1) {
            strides[d] = 0;
        } else {
            return -1;
        }
    }
    return 0;
}

/* Runs a gather (put == false) or a put over views that all have the iteration shape.
 *   gather: data0 = out, data1 = src restrided; put: data0 = dst restrided, data1 = values.
 * sizes[k] / strides[k] (elements of the indexed operand) describe what index k moves along.
 * Returns 0, -1 with an exception set, or 1 with *bad (index number) and *bad_value set. */
static int run_indexing(bool put, CtTensorObject *data0, CtTensorObject *data1, int nidx, CtTensorObject *const *idx,
                        const int64_t *sizes, const int64_t *strides, bool wrap, CtIndexReduce reduce,
                        const CtScalar *alpha, int *bad, int64_t *bad_value)
{
    CtDevice device = ct_device_of(data0);
    const struct CtIndexKernels *kernels = index_kernels(device);
    if (kernels == NULL) {
        return -1;
    }
    if (ct_numel(data0) == 0) {
        return 0;
    }
    int64_t isz = (int64_t)ct_itemsize(put ? data0 : data1);
    CtTensorObject *offsets = NULL;
    CtTensorObject *ops[CT_MAX_OPERANDS];
    CtIter it;
    CtIndexArgs args;
    int rc = -1;
    memset(&args, 0, sizeof(args));
    args.wrap = wrap;
    args.reduce = reduce;
    args.alpha.kind = CT_KIND_INT;
    args.alpha.v.i = 1;
    if (alpha != NULL) {
        args.alpha = *alpha;
    }
    if (nidx > CT_INDEX_MAX) {
        /* Fold the indices into one int64 tensor of byte offsets, a few at a time. */
        offsets = ct_empty(data0->ndim, data0->sizes, CT_I64, device);
        if (offsets == NULL) {
            goto done;
        }
        int folded = 0;
        while (folded < nidx) {
            int nops = 1, start = folded, first = 0;
            ops[0] = offsets;
            args.nindex = 0;
            if (folded > 0) { /* carry the partial sums in as an index that is never out of range */
                ops[nops++] = offsets;
                args.sizes[0] = INT64_MAX;
                args.strides[0] = 1;
                args.nindex = 1;
                first = 1;
            }
            while (nops < CT_MAX_OPERANDS && folded < nidx) {
                ops[nops++] = idx[folded];
                args.sizes[args.nindex] = sizes[folded];
                args.strides[args.nindex] = strides[folded] * isz;
                args.nindex++;
                folded++;
            }
            args.bad = -1;
            if (ct_iter_init(&it, nops, ops) < 0 || kernels->index_offsets(&it, &args) < 0) {
                goto done;
            }
            if (args.bad >= 0) {
                *bad = start + args.bad - first;
                *bad_value = args.bad_value;
                rc = 1;
                goto done;
            }
        }
    }
    ops[0] = data0;
    ops[1] = data1;
    int nops = 2;
    args.nindex = 0;
    if (offsets != NULL) {
        ops[nops++] = offsets;
        args.sizes[0] = INT64_MAX;
        args.strides[0] = 1;
        args.nindex = 1;
    } else {
        for (int k = 0; k < nidx; k++) {
            ops[nops++] = idx[k];
            args.sizes[k] = sizes[k];
            args.strides[k] = strides[k] * isz;
        }
        args.nindex = nidx;
    }
    args.bad = -1;
    if (ct_iter_init(&it, nops, ops) < 0) {
        goto done;
    }
    if ((put ? kernels->index_put(&it, &args) : kernels->index(&it, &args)) < 0) {
        goto done;
    }
    rc = 0;
    if (args.bad >= 0) {
        *bad = args.bad;
        *bad_value = args.bad_value;
        rc = 1;
    }
done:
    Py_XDECREF(offsets);
    return rc;
}

/* The view of t with one dim of size 1 inserted at dim (stride as PyTorch's unsqueeze). */
static void insert_dim(int *nd, int64_t *sizes, int64_t *strides, int dim)
{
    int64_t stride = dim < *nd ? sizes[dim] * strides[dim] : 1;
    memmove(sizes + dim + 1, sizes + dim, sizeof(int64_t) * (*nd - dim));
    memmove(strides + dim + 1, strides + dim, sizeof(int64_t) * (*nd - dim));
    sizes[dim] = 1;
    strides[dim] = stride;
    (*nd)++;
}

/* ============================================================================================
 * Indexing: t[index] and t[index] = value
 * ============================================================================================ */

typedef enum { ITEM_INT, ITEM_SLICE, ITEM_NONE, ITEM_ELLIPSIS, ITEM_BOOL, ITEM_TENSOR } ItemKind;

typedef struct {
    ItemKind kind;
    int64_t value;        /* ITEM_INT, ITEM_BOOL */
    PyObject *slice;      /* ITEM_SLICE (borrowed) */
    CtTensorObject *tensor; /* ITEM_TENSOR (owned) */
} IndexItem;

/* The result of basic indexing plus the advanced indices left to apply. */
typedef struct {
    CtTensorObject *view;               /* owned */
    CtTensorObject *entry[CT_MAX_DIMS]; /* per dim of view: index tensor (owned) or NULL */
    int nentries;
} Indexed;

static void indexed_clear(Indexed *ix)
{
    Py_CLEAR(ix->view);
    for (int d = 0; d < CT_MAX_DIMS; d++) {
        Py_CLEAR(ix->entry[d]);
    }
}

static bool is_mask_dtype(CtDType d) { return d == CT_BOOL || d == CT_U8; }

static PyObject *tensor_factory(void)
{
    static PyObject *fn = NULL; /* ctorch._C.tensor, borrowed from the module for its lifetime */
    if (fn == NULL) {
        PyObject *mod = PyImport_ImportModule("ctorch._C");
        if (mod == NULL) {
            return NULL;
        }
        fn = PyObject_GetAttrString(mod, "tensor");
        Py_DECREF(mod);
    }
    return fn;
}

/* A tensor from a Python sequence or numpy array used as an index: bool and uint8 data stay
 * masks, anything else becomes int64 (an empty sequence too), as PyTorch does. New reference. */
static CtTensorObject *tensor_from_sequence(PyObject *obj)
{
    Py_ssize_t n = PyObject_Length(obj);
    if (n < 0) {
        PyErr_Clear();
    }
    if (n == 0 && (PyList_Check(obj) || PyTuple_Check(obj))) {
        int64_t zero = 0;
        return ct_empty(1, &zero, CT_I64, ct_cpu());
    }
    PyObject *fn = tensor_factory();
    if (fn == NULL) {
        return NULL;
    }
    PyObject *t = PyObject_CallOneArg(fn, obj);
    if (t == NULL) {
        return NULL;
    }
    if (!CtTensor_Check(t)) {
        Py_DECREF(t);
        PyErr_SetString(PyExc_TypeError, "index conversion did not produce a tensor");
        return NULL;
    }
    CtTensorObject *r = CT_TENSOR(t);
    if (!is_mask_dtype(r->dtype) && r->dtype != CT_I64) { /* like PyTorch: data indexes as long */
        Py_SETREF(r, ct_to(r, CT_I64, ct_cpu(), false));
    }
    return r;
}

static int convert_item(PyObject *obj, IndexItem *item)
{
    item->tensor = NULL;
    if (obj == Py_None) {
        item->kind = ITEM_NONE;
        return 0;
    }
    if (obj == Py_Ellipsis) {
        item->kind = ITEM_ELLIPSIS;
        return 0;
    }
    if (PyBool_Check(obj)) {
        item->kind = ITEM_BOOL;
        item->value = obj == Py_True;
        return 0;
    }
    if (PySlice_Check(obj)) {
        item->kind = ITEM_SLICE;
        item->slice = obj;
        return 0;
    }
    if (CtTensor_Check(obj)) {
        item->kind = ITEM_TENSOR;
        item->tensor = (CtTensorObject *)Py_NewRef(obj);
        return 0;
    }
    if (PyLong_Check(obj) || (PyIndex_Check(obj) && !PySequence_Check(obj))) {
        PyObject *i = PyNumber_Index(obj);
        if (i == NULL) {
            return -1;
        }
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
        Py_DECREF(i);
        if (overflow) {
            PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
            return -1;
        }
        if (v == -1 && PyErr_Occurred()) {
            return -1;
        }
        item->kind = ITEM_INT;
        item->value = v;
        return 0;
    }
    if (PyIndex_Check(obj)) { /* 0-d numpy arrays */
        PyObject *i = PyNumber_Index(obj);
        if (i != NULL) {
            long long v = PyLong_AsLongLong(i);
            Py_DECREF(i);
            if (v == -1 && PyErr_Occurred()) {
                return -1;
            }
            item->kind = ITEM_INT;
            item->value = v;
            return 0;
        }
        PyErr_Clear();
    }
    if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", type_name(obj));
        return -1;
    }
    if (PySequence_Check(obj)) {
        item->kind = ITEM_TENSOR;
        item->tensor = tensor_from_sequence(obj);
        return item->tensor == NULL ? -1 : 0;
    }
    PyErr_Format(PyExc_IndexError,
                 "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
                 "(got %s)",
                 type_name(obj));
    return -1;
}

/* PyTorch (like old NumPy) reads a short list holding slices, sequences, tensors, None or
 * Ellipsis as a tuple of indices, with a deprecation warning. */
static int sequence_is_tuple(PyObject *index)
{
    if (PyTuple_Check(index)) {
        return 1;
    }
    if (!PyList_Check(index)) {
        return 0;
    }
    Py_ssize_t n = PyList_GET_SIZE(index);
    if (n >= 32) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyList_GET_ITEM(index, i);
        if (o == Py_None || o == Py_Ellipsis || PySlice_Check(o) || CtTensor_Check(o) ||
            (PySequence_Check(o) && !PyUnicode_Check(o))) {
            if (PyErr_WarnEx(PyExc_UserWarning,
                             "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
                             "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
                             "be interpreted as tensor index, x[torch.tensor(seq)], which will result either in an "
                             "error or a different result",
                             1) < 0) {
                return -1;
            }
            return 1;
        }
    }
    return 0;
}

/* An int64 index tensor [0] (True) or [] (False) on device: a bool used as an index. */
static CtTensorObject *bool_index_tensor(bool value, CtDevice device)
{
    int64_t n = value ? 1 : 0;
    CtTensorObject *t = zeros(1, &n, CT_I64, device);
    return t;
}

/* Applies the basic part of index to self (ints, slices, None, Ellipsis) and records the
 * advanced part (tensors, sequences, bools) per dim of the resulting view. */
static int apply_indexing(CtTensorObject *self, PyObject *index, Indexed *ix)
{
    IndexItem *items = NULL;
    Py_ssize_t nitems = 0;
    int rc = -1;
    memset(ix, 0, sizeof(*ix));
    int as_tuple = sequence_is_tuple(index);
    if (as_tuple < 0) {
        return -1;
    }
    PyObject *seq = as_tuple ? PySequence_Fast(index, "index must be a sequence") : NULL;
    if (as_tuple && seq == NULL) {
        return -1;
    }
    nitems = as_tuple ? PySequence_Fast_GET_SIZE(seq) : 1;
    items = PyMem_Calloc(nitems > 0 ? nitems : 1, sizeof(IndexItem));
    if (items == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < nitems; i++) {
        if (convert_item(as_tuple ? PySequence_Fast_GET_ITEM(seq, i) : index, &items[i]) < 0) {
            nitems = i;
            goto done;
        }
    }
    /* dims the index names explicitly; Ellipsis covers the rest */
    int specified = 0;
    for (Py_ssize_t i = 0; i < nitems; i++) {
        IndexItem *it = &items[i];
        if (it->kind == ITEM_INT || it->kind == ITEM_SLICE) {
            specified++;
        } else if (it->kind == ITEM_TENSOR) {
            /* a mask names its dims; a 0-d bool adds a dim of its own; anything else names one */
            const CtTensorObject *t = it->tensor;
            specified += (t->dtype == CT_BOOL || (t->dtype == CT_U8 && t->ndim > 0)) ? t->ndim : 1;
        }
    }
    if (specified > self->ndim) {
        if (self->ndim == 0 && nitems == 1 && items[0].kind == ITEM_INT) {
            PyErr_SetString(PyExc_IndexError, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                              "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
        } else {
            PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", self->ndim);
        }
        goto done;
    }
    int nd = self->ndim, dim = 0, too_many = -1; /* too_many: some tensor lands past the end */
    int64_t sizes[CT_MAX_DIMS + 1], strides[CT_MAX_DIMS + 1], offset = self->offset;
    memcpy(sizes, self->sizes, sizeof(int64_t) * nd);
    memcpy(strides, self->strides, sizeof(int64_t) * nd);
    CtDevice device = ct_device_of(self);
    for (Py_ssize_t pos = 0; pos < nitems; pos++) {
        IndexItem *it = &items[pos];
        int64_t value = it->value;
        ItemKind kind = it->kind;
        if (kind == ITEM_TENSOR && it->tensor->ndim == 0 && it->tensor->dtype != CT_BOOL &&
            ct_is_integral(it->tensor->dtype, false)) {
            CtScalar s; /* a 0-d integer tensor indexes like an int */
            if (ct_item(it->tensor, &s) < 0) {
                goto done;
            }
            kind = ITEM_INT;
            value = s.v.i;
        } else if (kind == ITEM_TENSOR && it->tensor->ndim == 0 && it->tensor->dtype == CT_BOOL) {
            CtScalar s;
            if (ct_item(it->tensor, &s) < 0) {
                goto done;
            }
            kind = ITEM_BOOL;
            value = s.v.b;
        }
        if ((kind == ITEM_NONE || kind == ITEM_BOOL) && nd + 1 > CT_MAX_DIMS) {
            PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions", CT_MAX_DIMS);
            goto done;
        }
        /* Several Ellipses can push dim past the end. PyTorch then fails in select (reading a
         * size it does not have: we say 0), in slice/unsqueeze (dim out of range), or, for
         * tensors, later when indexing (too many indices). */
        int unused;
        if (kind == ITEM_INT && dim >= nd) {
            PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension %d with size 0",
                         (long long)value, (int)pos);
            goto done;
        }
        if ((kind == ITEM_SLICE && dim >= nd && ct_wrap_dim(dim, nd, &unused) < 0) ||
            ((kind == ITEM_NONE || kind == ITEM_BOOL) && dim > nd && ct_wrap_dim(dim, nd + 1, &unused) < 0)) {
            goto done;
        }
        if (kind == ITEM_TENSOR) {
            const CtTensorObject *t = it->tensor;
            int span = is_mask_dtype(t->dtype) ? t->ndim : 1;
            if (dim + span > nd) {
                too_many = 1;
                dim += span;
                continue;
            }
        }
        switch (kind) {
        case ITEM_INT: {
            int64_t size = sizes[dim];
            if (value < -size || value >= size) {
                PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension %d with size %lld",
                             (long long)value, (int)pos, (long long)size);
                goto done;
            }
            offset += (value < 0 ? value + size : value) * strides[dim];
            memmove(sizes + dim, sizes + dim + 1, sizeof(int64_t) * (nd - dim - 1));
            memmove(strides + dim, strides + dim + 1, sizeof(int64_t) * (nd - dim - 1));
            nd--;
            break;
        }
        case ITEM_SLICE: {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(it->slice, &start, &stop, &step) < 0) {
                goto done;
            }
            if (step <= 0) {
                PyErr_SetString(PyExc_ValueError, "step must be greater than zero");
                goto done;
            }
            Py_ssize_t length = PySlice_AdjustIndices((Py_ssize_t)sizes[dim], &start, &stop, step);
            offset += (int64_t)start * strides[dim];
            sizes[dim] = length;
            strides[dim] *= step;
            dim++;
            break;
        }
        case ITEM_NONE:
            insert_dim(&nd, sizes, strides, dim);
            dim++;
            break;
        case ITEM_ELLIPSIS:
            dim += self->ndim - specified;
            break;
        case ITEM_BOOL:
            insert_dim(&nd, sizes, strides, dim);
            ix->entry[dim] = bool_index_tensor(value != 0, device);
            if (ix->entry[dim] == NULL) {
                goto done;
            }
            ix->nentries++;
            dim++;
            break;
        case ITEM_TENSOR: {
            CtTensorObject *t = it->tensor;
            if (!is_mask_dtype(t->dtype) && !is_index_dtype(t->dtype)) {
                PyErr_SetString(PyExc_IndexError, "tensors used as indices must be long, int, byte or bool tensors");
                goto done;
            }
            if (t->dtype == CT_U8) {
                if (PyErr_WarnEx(PyExc_UserWarning,
                                 "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                                 "instead.",
                                 1) < 0) {
                    goto done;
                }
            }
            ix->entry[dim] = (CtTensorObject *)Py_NewRef(t);
            ix->nentries++;
            dim += is_mask_dtype(t->dtype) ? t->ndim : 1; /* a mask covers its ndim dims */
            break;
        }
        }
    }
    if (too_many >= 0) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d (got %d)", nd, dim);
        goto done;
    }
    ix->view = ct_view_of(self, nd, sizes, strides, offset);
    if (ix->view == NULL) {
        goto done;
    }
    rc = 0;
done:
    for (Py_ssize_t i = 0; i < nitems; i++) {
        Py_XDECREF(items[i].tensor);
    }
    PyMem_Free(items);
    Py_XDECREF(seq);
    if (rc < 0) {
        indexed_clear(ix);
    }
    return rc;
}

/* Checks each mask against the dims it covers (PyTorch's message). */
static int check_masks(const Indexed *ix)
{
    const CtTensorObject *v = ix->view;
    for (int d = 0; d < v->ndim; d++) {
        const CtTensorObject *m = ix->entry[d];
        if (m == NULL || !is_mask_dtype(m->dtype)) {
            continue;
        }
        for (int j = 0; j < m->ndim; j++) {
            if (d + j >= v->ndim || m->sizes[j] != v->sizes[d + j]) {
                char a[256], b[256];
                ct_format_sizes(a, sizeof(a), m->ndim, m->sizes);
                ct_format_sizes(b, sizeof(b), v->ndim, v->sizes);
                PyErr_Format(PyExc_IndexError,
                             "The shape of the mask %s at index %d does not match the shape of the indexed tensor %s "
                             "at index %d",
                             a, j, b, d + j);
                return -1;
            }
        }
    }
    return 0;
}

/* The single mask when it is the only advanced index (its first dim in *dim), else NULL. */
static CtTensorObject *single_mask(const Indexed *ix, int *dim)
{
    if (ix->nentries != 1) {
        return NULL;
    }
    for (int d = 0; d < ix->view->ndim; d++) {
        if (ix->entry[d] != NULL) {
            *dim = d;
            return is_mask_dtype(ix->entry[d]->dtype) ? ix->entry[d] : NULL;
        }
    }
    return NULL;
}

/* Replaces every mask by the int64 coordinates of its true elements, one index per dim. */
static int expand_masks(Indexed *ix)
{
    for (int d = 0; d < ix->view->ndim; d++) {
        CtTensorObject *m = ix->entry[d];
        if (m == NULL || !is_mask_dtype(m->dtype)) {
            continue;
        }
        CtTensorObject *coords = ct_nonzero(m); /* (n, m.ndim) */
        if (coords == NULL) {
            return -1;
        }
        int mnd = m->ndim;
        Py_CLEAR(ix->entry[d]);
        ix->nentries--;
        for (int j = 0; j < mnd; j++) {
            PyObject *col = ct_select(coords, 1, j);
            if (col == NULL) {
                Py_DECREF(coords);
                return -1;
            }
            ix->entry[d + j] = CT_TENSOR(col);
            ix->nentries++;
        }
        Py_DECREF(coords);
        d += mnd - 1;
    }
    return 0;
}

/* Advanced indexing laid out: which dims are indexed, the broadcast index shape, the result. */
typedef struct {
    int n;
    int dims[CT_MAX_DIMS];
    CtTensorObject *idx[CT_MAX_DIMS]; /* borrowed from Indexed */
    int nb;
    int64_t bshape[CT_MAX_DIMS];
    int rnd;
    int64_t rshape[CT_MAX_DIMS];
    int bpos;                          /* first result dim of the broadcast block */
    int src_dim[CT_MAX_DIMS];          /* per result dim: dim of the view, or -1 inside the block */
} AdvPlan;

static int plan_advanced(const Indexed *ix, AdvPlan *p)
{
    const CtTensorObject *v = ix->view;
    p->n = 0;
    for (int d = 0; d < v->ndim; d++) {
        if (ix->entry[d] != NULL) {
            p->dims[p->n] = d;
            p->idx[p->n] = ix->entry[d];
            p->n++;
        }
    }
    p->nb = 0;
    for (int k = 0; k < p->n; k++) {
        int64_t out[CT_MAX_DIMS];
        const CtTensorObject *t = p->idx[k];
        int r = t->ndim > CT_MAX_DIMS ? -1 : ct_broadcast_shapes(p->nb, p->bshape, t->ndim, t->sizes, out);
        if (r < 0) {
            PyErr_Clear();
            char msg[1024];
            size_t pos = (size_t)snprintf(msg, sizeof(msg), "shape mismatch: indexing tensors could not be broadcast "
                                                            "together with shapes ");
            for (int j = 0; j < p->n && pos < sizeof(msg); j++) {
                char buf[256];
                ct_format_sizes(buf, sizeof(buf), p->idx[j]->ndim, p->idx[j]->sizes);
                pos += (size_t)snprintf(msg + pos, sizeof(msg) - pos, j ? ", %s" : "%s", buf);
            }
            PyErr_SetString(PyExc_IndexError, msg);
            return -1;
        }
        p->nb = r;
        memcpy(p->bshape, out, sizeof(int64_t) * r);
    }
    bool adjacent = p->dims[p->n - 1] - p->dims[0] + 1 == p->n;
    int rest = v->ndim - p->n;
    if (rest + p->nb > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions", CT_MAX_DIMS);
        return -1;
    }
    p->bpos = adjacent ? p->dims[0] : 0;
    p->rnd = 0;
    /* adjacent indexed dims: the block replaces them in place; otherwise it goes first */
    for (int d = -1; d < v->ndim; d++) {
        bool block_here = adjacent ? d == p->dims[0] : d == -1;
        if (block_here) {
            for (int j = 0; j < p->nb; j++) {
                p->src_dim[p->rnd] = -1;
                p->rshape[p->rnd++] = p->bshape[j];
            }
        }
        if (d >= 0 && ix->entry[d] == NULL) {
            p->src_dim[p->rnd] = d;
            p->rshape[p->rnd++] = v->sizes[d];
        }
    }
    return 0;
}

/* The view restrided to the result shape (stride 0 across the broadcast block) and the index
 * views placed in the block; all new references in data_out / idx_out. */
static int restride_for_plan(const Indexed *ix, const AdvPlan *p, CtTensorObject **data_out,
                             CtTensorObject **idx_out)
{
    const CtTensorObject *v = ix->view;
    int64_t strides[CT_MAX_DIMS];
    for (int r = 0; r < p->rnd; r++) {
        strides[r] = p->src_dim[r] >= 0 ? v->strides[p->src_dim[r]] : 0;
    }
    *data_out = ct_view_of(v, p->rnd, p->rshape, strides, v->offset);
    if (*data_out == NULL) {
        return -1;
    }
    for (int k = 0; k < p->n; k++) {
        int64_t bstrides[CT_MAX_DIMS];
        broadcast_strides(p->idx[k], p->nb, p->bshape, bstrides);
        for (int r = 0; r < p->rnd; r++) {
            strides[r] = 0;
        }
        for (int j = 0; j < p->nb; j++) {
            strides[p->bpos + j] = bstrides[j];
        }
        idx_out[k] = ct_view_of(p->idx[k], p->rnd, p->rshape, strides, p->idx[k]->offset);
        if (idx_out[k] == NULL) {
            for (int j = 0; j < k; j++) {
                Py_CLEAR(idx_out[j]);
            }
            Py_CLEAR(*data_out);
            return -1;
        }
    }
    return 0;
}

/* PyTorch's index kernels name the index's position among the advanced indices; a write of a
 * Python number through one int64 index goes through its index_fill_, which names the dim of
 * the view (view_dim). */
static void raise_advanced_oob(const AdvPlan *p, const Indexed *ix, int bad, int64_t value, bool view_dim)
{
    int64_t size = ix->view->sizes[p->dims[bad]];
    if (size == 0 && !view_dim) {
        PyErr_SetString(PyExc_IndexError, "index is out of bounds for dimension with size 0");
        return;
    }
    PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension %d with size %lld", (long long)value,
                 view_dim ? p->dims[bad] : bad, (long long)size);
}

/* Moves every index to the view's device and checks dtypes. */
static int prepare_entries(Indexed *ix)
{
    CtDevice device = ct_device_of(ix->view);
    for (int d = 0; d < ix->view->ndim; d++) {
        CtTensorObject *t = ix->entry[d];
        if (t == NULL) {
            continue;
        }
        if (!is_mask_dtype(t->dtype) && !is_index_dtype(t->dtype)) {
            PyErr_SetString(PyExc_IndexError, "tensors used as indices must be long, int, byte or bool tensors");
            return -1;
        }
        CtDevice td = ct_device_of(t);
        if (td.type != CT_DEV_CPU && !ct_device_equal(td, device)) { /* CPU indices move, others do not */
            char name[32];
            ct_device_str(device, name, sizeof(name));
            PyErr_Format(PyExc_RuntimeError,
                         "indices should be either on cpu or on the same device as the indexed tensor (%s)", name);
            return -1;
        }
        if (t->dtype == CT_U8) {
            CtTensorObject *b = ct_to(t, CT_BOOL, device, false);
            if (b == NULL) {
                return -1;
            }
            Py_SETREF(ix->entry[d], b);
        } else if (!ct_device_equal(ct_device_of(t), device)) {
            CtTensorObject *moved = on_device(t, device);
            if (moved == NULL) {
                return -1;
            }
            Py_SETREF(ix->entry[d], moved);
        }
    }
    return 0;
}

/* self[index] for the advanced part recorded in ix. */
static PyObject *advanced_get(Indexed *ix)
{
    CtTensorObject *out = NULL, *data = NULL;
    CtTensorObject *idx[CT_MAX_DIMS] = {NULL};
    AdvPlan plan;
    PyObject *result = NULL;
    int mdim;
    if (prepare_entries(ix) < 0 || check_masks(ix) < 0) {
        return NULL;
    }
    CtTensorObject *mask = single_mask(ix, &mdim);
    if (mask != NULL && mdim == 0) { /* x[mask, ...]: compact the selected rows directly */
        const struct CtIndexKernels *kernels = index_kernels(ct_device_of(ix->view));
        return kernels == NULL ? NULL : (PyObject *)kernels->masked_select(ix->view, mask);
    }
    if (expand_masks(ix) < 0 || plan_advanced(ix, &plan) < 0) {
        return NULL;
    }
    out = ct_empty(plan.rnd, plan.rshape, ix->view->dtype, ct_device_of(ix->view));
    if (out == NULL || restride_for_plan(ix, &plan, &data, idx) < 0) {
        goto done;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    for (int k = 0; k < plan.n; k++) {
        sizes[k] = ix->view->sizes[plan.dims[k]];
        strides[k] = ix->view->strides[plan.dims[k]];
    }
    int bad = -1;
    int64_t bad_value = 0;
    int r = run_indexing(false, out, data, plan.n, idx, sizes, strides, true, CT_REDUCE_NONE, NULL, &bad, &bad_value);
    if (r < 0) {
        goto done;
    }
    if (r > 0) {
        raise_advanced_oob(&plan, ix, bad, bad_value, false);
        goto done;
    }
    result = (PyObject *)out;
    out = NULL;
done:
    Py_XDECREF(out);
    Py_XDECREF(data);
    for (int k = 0; k < CT_MAX_DIMS; k++) {
        Py_XDECREF(idx[k]);
    }
    return result;
}

PyObject *ct_getitem(CtTensorObject *self, PyObject *index)
{
    Indexed ix;
    if (apply_indexing(self, index, &ix) < 0) {
        return NULL;
    }
    if (ix.nentries == 0) {
        PyObject *view = (PyObject *)ix.view;
        ix.view = NULL;
        indexed_clear(&ix);
        return view;
    }
    PyObject *r = advanced_get(&ix);
    indexed_clear(&ix);
    return r;
}

/* value with its leading size-1 dims dropped (PyTorch lets x[0] = ones(1, n) through). */
static CtTensorObject *strip_leading_ones(CtTensorObject *value, int keep)
{
    int skip = 0;
    while (skip < value->ndim && value->ndim - skip > keep && value->sizes[skip] == 1) {
        skip++;
    }
    return ct_view_of(value, value->ndim - skip, value->sizes + skip, value->strides + skip, value->offset);
}

/* dst[...] = value with PyTorch's expand messages. */
static int copy_into_view(CtTensorObject *dst, CtTensorObject *value)
{
    CtTensorObject *v = strip_leading_ones(value, 0);
    if (v == NULL) {
        return -1;
    }
    if (v->ndim > dst->ndim) {
        char a[256], b[256], tname[64];
        ct_format_sizes(a, sizeof(a), v->ndim, v->sizes);
        ct_format_sizes(b, sizeof(b), dst->ndim, dst->sizes);
        legacy_type_name(v, tname, sizeof(tname));
        PyErr_Format(PyExc_RuntimeError,
                     "expand(%s{%s}, size=%s): the number of sizes provided (%d) must be greater or equal to the "
                     "number of dimensions in the tensor (%d)",
                     tname, a, b, dst->ndim, v->ndim);
        Py_DECREF(v);
        return -1;
    }
    PyObject *e = ct_expand(v, dst->ndim, dst->sizes);
    Py_DECREF(v);
    if (e == NULL) {
        return -1;
    }
    int r = ct_copy_(dst, CT_TENSOR(e));
    Py_DECREF(e);
    return r;
}

/* dst (restrided) [idx] (op)= values broadcast to the plan's result shape. view_dim: name the
 * view's dim in out-of-range errors (see raise_advanced_oob). */
static int advanced_put(Indexed *ix, CtTensorObject *value, CtIndexReduce reduce, bool view_dim)
{
    CtTensorObject *data = NULL, *vals = NULL, *stripped = NULL;
    CtTensorObject *idx[CT_MAX_DIMS] = {NULL};
    AdvPlan plan;
    int rc = -1;
    CtTensorObject *view = ix->view;
    if (expand_masks(ix) < 0 || plan_advanced(ix, &plan) < 0) {
        return -1;
    }
    stripped = strip_leading_ones(value, 0);
    if (stripped == NULL) {
        goto done;
    }
    int64_t vstrides[CT_MAX_DIMS];
    if (broadcast_strides(stripped, plan.rnd, plan.rshape, vstrides) < 0) {
        char a[256], b[256];
        ct_format_sizes(a, sizeof(a), value->ndim, value->sizes);
        ct_format_sizes(b, sizeof(b), plan.rnd, plan.rshape);
        PyErr_Format(PyExc_RuntimeError, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing "
                                         "result of shape %s",
                     a, b);
        goto done;
    }
    if (value->dtype != view->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "Index put requires the source and destination dtypes match, got %s for the destination and %s "
                     "for the source.",
                     ct_scalar_type_name(view->dtype), ct_scalar_type_name(value->dtype));
        goto done;
    }
    vals = ct_view_of(stripped, plan.rnd, plan.rshape, vstrides, stripped->offset);
    if (vals == NULL || restride_for_plan(ix, &plan, &data, idx) < 0) {
        goto done;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    for (int k = 0; k < plan.n; k++) {
        sizes[k] = view->sizes[plan.dims[k]];
        strides[k] = view->strides[plan.dims[k]];
    }
    int bad = -1;
    int64_t bad_value = 0;
    int r = run_indexing(true, data, vals, plan.n, idx, sizes, strides, true, reduce, NULL, &bad, &bad_value);
    if (r < 0) {
        goto done;
    }
    if (r > 0) {
        raise_advanced_oob(&plan, ix, bad, bad_value, view_dim);
        goto done;
    }
    rc = 0;
done:
    Py_XDECREF(data);
    Py_XDECREF(vals);
    Py_XDECREF(stripped);
    for (int k = 0; k < CT_MAX_DIMS; k++) {
        Py_XDECREF(idx[k]);
    }
    return rc;
}

/* view[mask] = value (0-d, view's dtype) with the mask placed at dims [dim, dim + mask.ndim). */
static int masked_fill_at(CtTensorObject *view, CtTensorObject *mask, int dim, CtTensorObject *value)
{
    const struct CtIndexKernels *kernels = index_kernels(ct_device_of(view));
    if (kernels == NULL) {
        return -1;
    }
    int64_t strides[CT_MAX_DIMS];
    for (int d = 0; d < view->ndim; d++) {
        int j = d - dim;
        strides[d] = (j >= 0 && j < mask->ndim) ? mask->strides[j] : 0;
    }
    int64_t zero[CT_MAX_DIMS] = {0};
    CtTensorObject *m = ct_view_of(mask, view->ndim, view->sizes, strides, mask->offset);
    CtTensorObject *v = m ? ct_view_of(value, view->ndim, view->sizes, zero, value->offset) : NULL;
    int rc = -1;
    if (v != NULL && ct_numel(view) > 0) {
        CtIter it;
        CtTensorObject *ops[3] = {view, m, v};
        rc = ct_iter_init(&it, 3, ops) < 0 ? -1 : kernels->masked_fill(&it);
    } else if (v != NULL) {
        rc = 0;
    }
    Py_XDECREF(m);
    Py_XDECREF(v);
    return rc;
}

/* The value of t[index] = value as a tensor (new reference): Python numbers become 0-d tensors
 * of self's dtype on self's device; *is_scalar tells whether it was one. */
static CtTensorObject *setitem_value(CtTensorObject *self, PyObject *value, bool *is_scalar, CtScalar *scalar)
{
    *is_scalar = false;
    if (CtTensor_Check(value)) {
        return (CtTensorObject *)Py_NewRef(value);
    }
    CtScalar s;
    if (value == Py_None || PySequence_Check(value) || ct_scalar_from_object(value, &s) < 0) {
        char tname[64];
        PyErr_Clear();
        legacy_type_name(self, tname, sizeof(tname));
        PyErr_Format(PyExc_TypeError, "can't assign a %s to a %s", type_name(value), tname);
        return NULL;
    }
    *is_scalar = true;
    *scalar = s;
    return scalar_of(&s, self->dtype, ct_device_of(self));
}

int ct_setitem(CtTensorObject *self, PyObject *index, PyObject *value)
{
    Indexed ix;
    CtTensorObject *v = NULL, *cast = NULL;
    bool is_scalar;
    int rc = -1;
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "Tensor does not support item deletion");
        return -1;
    }
    CtScalar scalar;
    v = setitem_value(self, value, &is_scalar, &scalar);
    if (v == NULL) {
        return -1;
    }
    if (apply_indexing(self, index, &ix) < 0) {
        Py_DECREF(v);
        return -1;
    }
    /* PyTorch checks a Python number against an integer destination on every path, and
     * against a floating one only where it becomes an index_put_/masked_fill_ (x[idx] = 1e20
     * raises for float16, x[0] = 1e20 stores inf). */
    if (is_scalar && (!ct_is_floating(self->dtype) || ix.nentries > 0) &&
        ct_check_scalar_fits(&scalar, self->dtype, true) < 0) {
        goto done;
    }
    if (ix.nentries == 0) {
        rc = copy_into_view(ix.view, v);
        goto done;
    }
    if (prepare_entries(&ix) < 0 || check_masks(&ix) < 0) {
        goto done;
    }
    CtDevice device = ct_device_of(self);
    int mdim;
    CtTensorObject *mask = single_mask(&ix, &mdim);
    Py_SETREF(v, strip_leading_ones(v, 0));
    if (v == NULL) {
        goto done;
    }
    if (mask != NULL && v->ndim == 0) { /* x[mask] = scalar: a masked fill, value cast to x's dtype */
        cast = ct_to(v, self->dtype, device, false);
        rc = cast == NULL ? -1 : masked_fill_at(ix.view, mask, mdim, cast);
        goto done;
    }
    cast = on_device(v, device);
    if (cast == NULL) {
        goto done;
    }
    bool fill_like = false; /* a Python number through one int64 index: PyTorch's index_fill_ */
    for (int d = 0; is_scalar && ix.nentries == 1 && d < ix.view->ndim; d++) {
        fill_like = fill_like || (ix.entry[d] != NULL && ix.entry[d]->dtype == CT_I64);
    }
    rc = advanced_put(&ix, cast, CT_REDUCE_NONE, fill_like);
done:
    if (rc == 0) {
        ct_bump_version(self);
    }
    indexed_clear(&ix);
    Py_XDECREF(v);
    Py_XDECREF(cast);
    return rc;
}

int ct_index_put_(CtTensorObject *self, PyObject *indices, CtTensorObject *values, bool accumulate)
{
    Indexed ix;
    CtTensorObject *vals = NULL;
    int rc = -1;
    memset(&ix, 0, sizeof(ix));
    PyObject *seq = PySequence_Fast(indices, "index_put_(): argument 'indices' must be tuple of Tensors");
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int dim = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(seq, i);
        if (!CtTensor_Check(o)) {
            PyErr_Format(PyExc_TypeError, "expected Tensor as element %zd in argument 0, but got %s", i,
                         type_name(o));
            goto done;
        }
        CtTensorObject *t = CT_TENSOR(o);
        int span = is_mask_dtype(t->dtype) ? t->ndim : 1;
        if (dim + span > self->ndim) {
            PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", self->ndim);
            goto done;
        }
        ix.entry[dim] = (CtTensorObject *)Py_NewRef(t);
        ix.nentries++;
        dim += span;
    }
    ix.view = (CtTensorObject *)Py_NewRef(self);
    if (ix.nentries == 0) {
        rc = copy_into_view(self, values);
        goto done;
    }
    if (prepare_entries(&ix) < 0 || check_masks(&ix) < 0) {
        goto done;
    }
    vals = on_device(values, ct_device_of(self));
    if (vals == NULL) {
        goto done;
    }
    rc = advanced_put(&ix, vals, accumulate ? CT_REDUCE_ADD : CT_REDUCE_NONE, false);
done:
    if (rc == 0) {
        ct_bump_version(self);
    }
    Py_DECREF(seq);
    Py_XDECREF(vals);
    indexed_clear(&ix);
    return rc;
}

/* ============================================================================================
 * Ops along one dim: gather, scatter, index_select, index_add/copy/fill, take
 * ============================================================================================ */

/* t's sizes and strides with a 0-d tensor read as 1-d of size 1 (PyTorch's
 * ensure_nonempty_dim); returns the ndim. */
static int dims_1d(const CtTensorObject *t, int64_t *sizes, int64_t *strides)
{
    if (t->ndim == 0) {
        sizes[0] = 1;
        strides[0] = 1;
        return 1;
    }
    memcpy(sizes, t->sizes, sizeof(int64_t) * t->ndim);
    memcpy(strides, t->strides, sizeof(int64_t) * t->ndim);
    return t->ndim;
}

static int same_device2(CtTensorObject *a, CtTensorObject *b)
{
    CtTensorObject *ts[2] = {a, b};
    CtDevice d;
    return ct_check_same_device(2, ts, false, &d);
}

CtTensorObject *ct_gather(CtTensorObject *self, int64_t dim_arg, CtTensorObject *index)
{
    int dim;
    int64_t ss[CT_MAX_DIMS], st[CT_MAX_DIMS], is[CT_MAX_DIMS], it_[CT_MAX_DIMS];
    if (ct_wrap_dim(dim_arg, self->ndim, &dim) < 0) {
        return NULL;
    }
    if (!is_index_dtype(index->dtype)) {
        PyErr_SetString(PyExc_RuntimeError, "gather(): Expected dtype int32/int64 for index");
        return NULL;
    }
    int snd = dims_1d(self, ss, st), ind = dims_1d(index, is, it_);
    if (snd != ind) {
        PyErr_SetString(PyExc_RuntimeError, "Index tensor must have the same number of dimensions as input tensor");
        return NULL;
    }
    for (int d = 0; d < snd; d++) {
        if (d != dim && is[d] > ss[d]) {
            char a[256], b[256];
            ct_format_sizes(a, sizeof(a), index->ndim, index->sizes);
            ct_format_sizes(b, sizeof(b), self->ndim, self->sizes);
            PyErr_Format(PyExc_RuntimeError,
                         "Size does not match at dimension %d expected index %s to be no larger than self %s apart "
                         "from dimension %d",
                         d, a, b, dim);
            return NULL;
        }
    }
    if (same_device2(self, index) < 0) {
        return NULL;
    }
    CtTensorObject *out = ct_empty(index->ndim, index->sizes, self->dtype, ct_device_of(self));
    if (out == NULL) {
        return NULL;
    }
    int64_t strides[CT_MAX_DIMS];
    memcpy(strides, st, sizeof(int64_t) * snd);
    strides[dim] = 0;
    CtTensorObject *src = ct_view_of(self, index->ndim, index->sizes, strides, self->offset);
    int bad = -1;
    int64_t bad_value = 0;
    int r = src == NULL ? -1
                        : run_indexing(false, out, src, 1, &index, &ss[dim], &st[dim], false, CT_REDUCE_NONE, NULL,
                                       &bad, &bad_value);
    Py_XDECREF(src);
    if (r > 0) {
        PyErr_Format(PyExc_RuntimeError, "index %lld is out of bounds for dimension %d with size %lld",
                     (long long)bad_value, dim, (long long)ss[dim]);
    }
    if (r != 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* scatter's argument checks (shared with scatter_reduce_): *dim the wrapped dim. 0 or -1. */
static int scatter_check(CtTensorObject *self, int64_t dim_arg, CtTensorObject *index, CtTensorObject *src, int *dim_out)
{
    int dim;
    int64_t ss[CT_MAX_DIMS], st[CT_MAX_DIMS], is[CT_MAX_DIMS], it_[CT_MAX_DIMS], rs[CT_MAX_DIMS], rt[CT_MAX_DIMS];
    if (ct_wrap_dim(dim_arg, self->ndim, &dim) < 0) {
        return -1;
    }
    if (!is_index_dtype(index->dtype)) {
        PyErr_SetString(PyExc_RuntimeError, "scatter(): Expected dtype int32/int64 for index");
        return -1;
    }
    if (src != NULL && src->dtype != self->dtype) {
        PyErr_SetString(PyExc_RuntimeError, "scatter(): Expected self.dtype to be equal to src.dtype");
        return -1;
    }
    int snd = dims_1d(self, ss, st), ind = dims_1d(index, is, it_);
    if (snd != ind) {
        PyErr_SetString(PyExc_RuntimeError, "Index tensor must have the same number of dimensions as self tensor");
        return -1;
    }
    if (src != NULL && dims_1d(src, rs, rt) != ind) {
        PyErr_SetString(PyExc_RuntimeError, "Index tensor must have the same number of dimensions as src tensor");
        return -1;
    }
    for (int d = 0; d < snd; d++) {
        if ((d != dim && is[d] > ss[d]) || (src != NULL && is[d] > rs[d])) {
            char a[256], b[256], c[256];
            ct_format_sizes(a, sizeof(a), index->ndim, index->sizes);
            ct_format_sizes(b, sizeof(b), self->ndim, self->sizes);
            if (src != NULL) {
                ct_format_sizes(c, sizeof(c), src->ndim, src->sizes);
                PyErr_Format(PyExc_RuntimeError,
                             "Expected index %s to be no larger than self %s apart from dimension %d and to be no "
                             "larger size than src %s",
                             a, b, dim, c);
            } else {
                PyErr_Format(PyExc_RuntimeError,
                             "Expected index %s to be no larger than self %s apart from dimension %d", a, b, dim);
            }
            return -1;
        }
    }
    if (same_device2(self, index) < 0 || (src != NULL && same_device2(self, src) < 0)) {
        return -1;
    }
    *dim_out = dim;
    return 0;
}

/* src (or the scalar value) put into self at index along dim (wrapped; checked by scatter_check)
 * with reduce. 0, -1, or 1 with *bad_value (an index out of range) set. */
static int scatter_put(CtTensorObject *self, int dim, CtTensorObject *index, CtTensorObject *src,
                       const CtScalar *value, CtIndexReduce reduce, int64_t *bad_value)
{
    int64_t ss[CT_MAX_DIMS], st[CT_MAX_DIMS], rs[CT_MAX_DIMS], rt[CT_MAX_DIMS];
    CtTensorObject *dst = NULL, *vals = NULL, *scalar = NULL;
    int rc = -1;
    dims_1d(self, ss, st);
    if (ct_numel(index) == 0) {
        return 0;
    }
    int64_t size = ss[dim], stride = st[dim];
    st[dim] = 0;
    dst = ct_view_of(self, index->ndim, index->sizes, st, self->offset);
    if (dst == NULL) {
        goto done;
    }
    if (src != NULL) {
        dims_1d(src, rs, rt);
        vals = ct_view_of(src, index->ndim, index->sizes, rt, src->offset);
    } else {
        int64_t zero[CT_MAX_DIMS] = {0};
        scalar = scalar_of(value, self->dtype, ct_device_of(self));
        vals = scalar ? ct_view_of(scalar, index->ndim, index->sizes, zero, scalar->offset) : NULL;
    }
    if (vals == NULL) {
        goto done;
    }
    int bad = -1;
    rc = run_indexing(true, dst, vals, 1, &index, &size, &stride, false, reduce, NULL, &bad, bad_value);
done:
    Py_XDECREF(dst);
    Py_XDECREF(vals);
    Py_XDECREF(scalar);
    return rc;
}

/* The error of an index out of range along dim of self (scatter family). */
static void scatter_oob(const CtTensorObject *self, int dim, int64_t bad_value)
{
    PyErr_Format(PyExc_RuntimeError, "index %lld is out of bounds for dimension %d with size %lld",
                 (long long)bad_value, dim, (long long)(self->ndim > 0 ? self->sizes[dim] : 1));
}

/* The end of an in-place scatter into self along dim that returned r (0, -1, or 1 with bad_value out
 * of range): PyTorch's error for 1, else self's new version. 0 or -1. */
static int scatter_done(CtTensorObject *self, int dim, int r, int64_t bad_value)
{
    if (r > 0) {
        scatter_oob(self, dim, bad_value);
    }
    if (r != 0) {
        return -1;
    }
    ct_bump_version(self);
    return 0;
}

/* self.scatter_ family: src (or the scalar value) lands in self at index along dim. */
static int scatter_impl(CtTensorObject *self, int64_t dim_arg, CtTensorObject *index, CtTensorObject *src,
                        const CtScalar *value, CtIndexReduce reduce)
{
    int dim;
    int64_t bad_value = 0;
    if (ct_check_no_internal_overlap(self) < 0 || scatter_check(self, dim_arg, index, src, &dim) < 0) {
        return -1;
    }
    int r = scatter_put(self, dim, index, src, value, reduce, &bad_value);
    return scatter_done(self, dim, r, bad_value);
}

int ct_scatter_(CtTensorObject *self, int64_t dim, CtTensorObject *index, CtTensorObject *src, const CtScalar *value,
                CtIndexReduce reduce)
{
    return scatter_impl(self, dim, index, src, value, reduce);
}

int ct_scatter_add_(CtTensorObject *self, int64_t dim, CtTensorObject *index, CtTensorObject *src)
{
    return scatter_impl(self, dim, index, src, NULL, CT_REDUCE_ADD);
}

/* Views for an op that indexes dim of self with a vector index of n elements: the iteration
 * shape is self's with dim resized to n; *self_view has stride 0 along dim, *index_view walks
 * the index along dim. self 0-d is read as 1-d. New references. */
static int along_dim_views(CtTensorObject *self, int dim, CtTensorObject *index, int64_t *shape, int *nd,
                           CtTensorObject **self_view, CtTensorObject **index_view)
{
    int64_t ss[CT_MAX_DIMS], st[CT_MAX_DIMS], istr[CT_MAX_DIMS] = {0};
    *nd = dims_1d(self, ss, st);
    memcpy(shape, ss, sizeof(int64_t) * *nd);
    shape[dim] = ct_numel(index);
    st[dim] = 0;
    istr[dim] = index->ndim > 0 ? index->strides[0] : 0;
    *self_view = ct_view_of(self, *nd, shape, st, self->offset);
    *index_view = *self_view ? ct_view_of(index, *nd, shape, istr, index->offset) : NULL;
    if (*index_view == NULL) {
        Py_CLEAR(*self_view);
        return -1;
    }
    return 0;
}

CtTensorObject *ct_index_select(CtTensorObject *self, int64_t dim_arg, CtTensorObject *index)
{
    int dim, nd;
    int64_t shape[CT_MAX_DIMS];
    CtTensorObject *out = NULL, *src = NULL, *idx = NULL, *result = NULL;
    if (ct_wrap_dim(dim_arg, self->ndim, &dim) < 0) {
        return NULL;
    }
    if (index->ndim > 1) {
        PyErr_SetString(PyExc_IndexError, "index_select(): Index is supposed to be a vector");
        return NULL;
    }
    if (!is_index_dtype(index->dtype)) {
        PyErr_SetString(PyExc_RuntimeError, "index_select(): Expected dtype int32 or int64 for index");
        return NULL;
    }
    if (self->ndim == 0 && ct_numel(index) != 1) {
        PyErr_Format(PyExc_IndexError, "index_select(): Index to scalar can have only 1 value, got %lld value(s)",
                     (long long)ct_numel(index));
        return NULL;
    }
    if (self->ndim > 0 && self->sizes[dim] == 0 && ct_numel(index) > 0) {
        PyErr_SetString(PyExc_RuntimeError, "index_select(): self indexing axis dim should be positive");
        return NULL;
    }
    if (same_device2(self, index) < 0 || along_dim_views(self, dim, index, shape, &nd, &src, &idx) < 0) {
        return NULL;
    }
    out = ct_empty(self->ndim == 0 ? 0 : nd, shape, self->dtype, ct_device_of(self));
    if (out == NULL) {
        goto done;
    }
    /* the kernel walks the 1-d form; a 0-d result is the same single element */
    int64_t one = 1;
    CtTensorObject *out_view = self->ndim == 0 ? ct_view_of(out, nd, shape, &one, 0) : (CtTensorObject *)Py_NewRef(out);
    if (out_view == NULL) {
        goto done;
    }
    int64_t size = self->ndim == 0 ? 1 : self->sizes[dim], stride = self->ndim == 0 ? 1 : self->strides[dim];
    int bad = -1;
    int64_t bad_value = 0;
    int r = run_indexing(false, out_view, src, 1, &idx, &size, &stride, false, CT_REDUCE_NONE, NULL, &bad, &bad_value);
    Py_DECREF(out_view);
    if (r > 0) { /* PyTorch 2.x: negative indices are out of range here too */
        PyErr_SetString(PyExc_IndexError, "index out of range in self");
    }
    if (r != 0) {
        goto done;
    }
    result = out;
    out = NULL;
done:
    Py_XDECREF(out);
    Py_XDECREF(src);
    Py_XDECREF(idx);
    return result;
}

/* The put behind index_add_/index_copy_/index_fill_: vals has the iteration shape (self's with
 * dim resized to numel(index)). Returns 0, -1, or 1 with *bad_value set. */
static int put_along_dim(CtTensorObject *self, int dim, CtTensorObject *index, CtTensorObject *vals,
                         CtIndexReduce reduce, const CtScalar *alpha, bool wrap, int64_t *bad_value)
{
    int nd;
    int64_t shape[CT_MAX_DIMS];
    CtTensorObject *dst = NULL, *idx = NULL;
    if (along_dim_views(self, dim, index, shape, &nd, &dst, &idx) < 0) {
        return -1;
    }
    int64_t size = self->ndim == 0 ? 1 : self->sizes[dim], stride = self->ndim == 0 ? 1 : self->strides[dim];
    int bad = -1;
    int r = run_indexing(true, dst, vals, 1, &idx, &size, &stride, wrap, reduce, alpha, &bad, bad_value);
    Py_DECREF(dst);
    Py_DECREF(idx);
    return r;
}

static void source_shape_error(const CtTensorObject *self, const CtTensorObject *source)
{
    char a[256], b[256];
    ct_format_sizes(a, sizeof(a), self->ndim, self->sizes);
    ct_format_sizes(b, sizeof(b), source->ndim, source->sizes);
    PyErr_Format(PyExc_RuntimeError,
                 "source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                 "self.shape = %s source.shape = %s",
                 a, b);
}

/* source (same ndim as self, or 0-d read as 1-d) as a view with the iteration shape; checks
 * that it matches self apart from dim. New reference. */
static CtTensorObject *source_along_dim(CtTensorObject *self, int dim, CtTensorObject *source)
{
    int64_t ss[CT_MAX_DIMS], st[CT_MAX_DIMS], rs[CT_MAX_DIMS], rt[CT_MAX_DIMS];
    int snd = dims_1d(self, ss, st), rnd = dims_1d(source, rs, rt);
    bool ok = snd == rnd;
    for (int d = 0; ok && d < snd; d++) {
        ok = d == dim || ss[d] == rs[d];
    }
    if (!ok) {
        source_shape_error(self, source);
        return NULL;
    }
    return ct_view_of(source, rnd, rs, rt, source->offset);
}

/* index_add_'s argument checks (shared with index_reduce_), messages prefixed by fname. */
static int along_check(CtTensorObject *self, int64_t dim_arg, CtTensorObject *index, CtTensorObject *source,
                       const char *fname, int *dim_out)
{
    int dim;
    if (ct_wrap_dim(dim_arg, self->ndim, &dim) < 0) {
        return -1;
    }
    if (index->ndim > 1) {
        char buf[256];
        ct_format_sizes(buf, sizeof(buf), index->ndim, index->sizes);
        PyErr_Format(PyExc_IndexError,
                     "%s(): Index is supposed to be a vector, but got dim: %d with type: %s and size: %s",
                     fname, index->ndim, ct_scalar_type_name(index->dtype), buf);
        return -1;
    }
    if (!is_index_dtype(index->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "%s(): Expected dtype int32/int64 for index but got: %s", fname,
                     ct_scalar_type_name(index->dtype));
        return -1;
    }
    if (self->dtype != source->dtype) {
        PyErr_Format(PyExc_RuntimeError, "%s(): self (%s) and source (%s) must have the same scalar type", fname,
                     ct_scalar_type_name(self->dtype), ct_scalar_type_name(source->dtype));
        return -1;
    }
    int64_t src_size = source->ndim == 0 ? 1 : source->sizes[dim < source->ndim ? dim : 0];
    if (ct_numel(index) != src_size) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): Number of indices (%lld) should be equal to source.size(dim): (%lld), for dim: %d",
                     fname, (long long)ct_numel(index), (long long)src_size, dim);
        return -1;
    }
    if (same_device2(self, index) < 0 || same_device2(self, source) < 0) {
        return -1;
    }
    *dim_out = dim;
    return 0;
}

int ct_index_add_(CtTensorObject *self, int64_t dim_arg, CtTensorObject *index, CtTensorObject *source,
                  const CtScalar *alpha)
{
    int dim;
    if (ct_check_no_internal_overlap(self) < 0 || along_check(self, dim_arg, index, source, "index_add_", &dim) < 0) {
        return -1;
    }
    CtTensorObject *vals = source_along_dim(self, dim, source);
    if (vals == NULL) {
        return -1;
    }
    int64_t bad_value = 0;
    int r = put_along_dim(self, dim, index, vals, CT_REDUCE_ADD, alpha, false, &bad_value);
    Py_DECREF(vals);
    if (r > 0) {
        PyErr_Format(PyExc_RuntimeError, "index %lld is out of bounds for dimension %d with size %lld",
                     (long long)bad_value, dim, (long long)(self->ndim ? self->sizes[dim] : 1));
    }
    if (r != 0) {
        return -1;
    }
    ct_bump_version(self);
    return 0;
}

int ct_index_copy_(CtTensorObject *self, int64_t dim_arg, CtTensorObject *index, CtTensorObject *source)
{
    int dim;
    if (ct_check_no_internal_overlap(self) < 0 || ct_wrap_dim(dim_arg, self->ndim, &dim) < 0) {
        return -1;
    }
    if (index->dtype != CT_I64) {
        PyErr_Format(PyExc_RuntimeError, "index_copy_(): Expected a long tensor for index, but got %s",
                     ct_scalar_type_name(index->dtype));
        return -1;
    }
    if (self->dtype != source->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "index_copy_(): self and source expected to have the same dtype, but got (self) %s and (source) "
                     "%s",
                     ct_scalar_type_name(self->dtype), ct_scalar_type_name(source->dtype));
        return -1;
    }
    if (index->ndim > 1) {
        PyErr_Format(PyExc_IndexError, "index_copy_(): Index should have dimension 1 or 0 (got %d)", index->ndim);
        return -1;
    }
    int64_t src_size = source->ndim == 0 ? 1 : source->sizes[dim < source->ndim ? dim : 0];
    if (ct_numel(index) != src_size) {
        PyErr_Format(PyExc_IndexError,
                     "index_copy_(): Number of indices (%lld) should be equal to source.size(dim) (%lld)",
                     (long long)ct_numel(index), (long long)src_size);
        return -1;
    }
    if (same_device2(self, index) < 0 || same_device2(self, source) < 0) {
        return -1;
    }
    CtTensorObject *vals = source_along_dim(self, dim, source);
    if (vals == NULL) {
        return -1;
    }
    int64_t bad_value = 0;
    int r = put_along_dim(self, dim, index, vals, CT_REDUCE_NONE, NULL, false, &bad_value);
    Py_DECREF(vals);
    if (r > 0) {
        PyErr_Format(PyExc_IndexError, "index_copy_(): index %lld is out of bounds for dimension %d with size %lld",
                     (long long)bad_value, dim, (long long)(self->ndim ? self->sizes[dim] : 1));
    }
    if (r != 0) {
        return -1;
    }
    ct_bump_version(self);
    return 0;
}

int ct_index_fill_(CtTensorObject *self, int64_t dim_arg, CtTensorObject *index, const CtScalar *value)
{
    int dim, nd;
    int64_t shape[CT_MAX_DIMS], zero[CT_MAX_DIMS] = {0};
    if (ct_wrap_dim(dim_arg, self->ndim, &dim) < 0) {
        return -1;
    }
    if (index->dtype != CT_I64) {
        PyErr_SetString(PyExc_IndexError, "index_fill_(): Expected dtype int64 for index.");
        return -1;
    }
    if (index->ndim > 1) {
        PyErr_SetString(PyExc_IndexError, "Index has to be a vector/scalar");
        return -1;
    }
    if (same_device2(self, index) < 0) {
        return -1;
    }
    int64_t ss[CT_MAX_DIMS], st[CT_MAX_DIMS];
    nd = dims_1d(self, ss, st);
    memcpy(shape, ss, sizeof(int64_t) * nd);
    shape[dim] = ct_numel(index);
    CtTensorObject *scalar = scalar_of(value, self->dtype, ct_device_of(self));
    if (scalar == NULL) {
        return -1;
    }
    CtTensorObject *vals = ct_view_of(scalar, nd, shape, zero, scalar->offset);
    Py_DECREF(scalar);
    if (vals == NULL) {
        return -1;
    }
    int64_t bad_value = 0;
    int r = put_along_dim(self, dim, index, vals, CT_REDUCE_NONE, NULL, true, &bad_value);
    Py_DECREF(vals);
    if (r > 0) {
        PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension %d with size %lld",
                     (long long)bad_value, dim, (long long)ss[dim]);
    }
    if (r != 0) {
        return -1;
    }
    ct_bump_version(self);
    return 0;
}

/* --- scatter_reduce_ / index_reduce_ ----------------------------------------------------------
 * Both are puts with a combining kind (CtIndexReduce), so every device combines a destination's
 * values in iteration order (index.h): include_self=False first puts the reduction's identity at
 * every indexed place; 'mean' sums, counts the same way, then divides. */
typedef enum { SR_SUM, SR_PROD, SR_MEAN, SR_AMAX, SR_AMIN } ReduceKind;

static int reduce_kind(const char *s, ReduceKind *out)
{
    static const char *const names[] = {"sum", "prod", "mean", "amax", "amin"};
    for (int k = 0; k < 5; k++) {
        if (strcmp(s, names[k]) == 0) {
            *out = (ReduceKind)k;
            return 0;
        }
    }
    return -1;
}

/* The value a reduced place starts from when include_self=False. */
static CtScalar reduce_identity(ReduceKind kind, CtDType dtype)
{
    CtScalar s = {CT_KIND_INT, {.i = kind == SR_PROD}};
    if (kind != SR_AMAX && kind != SR_AMIN) {
        return s;
    }
    bool top = kind == SR_AMIN; /* amin starts from the largest value, amax from the lowest */
    int bits = 8 * (int)ct_dtype_info[dtype].itemsize;
    if (ct_is_floating(dtype)) {
        s.kind = CT_KIND_FLOAT;
        s.v.d = top ? INFINITY : -INFINITY;
    } else if (dtype == CT_BOOL) {
        s.kind = CT_KIND_BOOL;
        s.v.b = top;
    } else if (dtype == CT_U8) {
        s.v.i = top ? UINT8_MAX : 0;
    } else {
        int64_t hi = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
        s.v.i = top ? hi : -hi - 1;
    }
    return s;
}

typedef struct {
    bool along; /* index_reduce: a vector index along dim; otherwise scatter's index */
    int dim;
    CtTensorObject *index;
} ReducePlan;

/* One put of vals (NULL: the scalar *value) into target (self, or a tensor of self's shape).
 * 0, -1, or 1 with *bad_value set. */
static int reduce_put(const ReducePlan *p, CtTensorObject *target, CtTensorObject *vals, const CtScalar *value,
                      CtIndexReduce op, int64_t *bad_value)
{
    if (!p->along) {
        return scatter_put(target, p->dim, p->index, vals, value, op, bad_value);
    }
    if (vals != NULL) {
        return put_along_dim(target, p->dim, p->index, vals, op, NULL, false, bad_value);
    }
    int64_t shape[CT_MAX_DIMS], strides[CT_MAX_DIMS], zero[CT_MAX_DIMS] = {0};
    int nd = dims_1d(target, shape, strides);
    shape[p->dim] = ct_numel(p->index);
    CtTensorObject *scalar = scalar_of(value, target->dtype, ct_device_of(target));
    CtTensorObject *v = scalar ? ct_view_of(scalar, nd, shape, zero, scalar->offset) : NULL;
    int r = v ? put_along_dim(target, p->dim, p->index, v, op, NULL, false, bad_value) : -1;
    Py_XDECREF(v);
    Py_XDECREF(scalar);
    return r;
}

/* self reduced with vals (the iteration shape) as kind says. 0, -1, or 1 with *bad_value set. */
static int reduce_impl(CtTensorObject *self, const ReducePlan *p, CtTensorObject *vals, ReduceKind kind,
                       bool include_self, int64_t *bad_value)
{
    static const CtIndexReduce ops[] = {CT_REDUCE_ADD, CT_REDUCE_MUL, CT_REDUCE_ADD, CT_REDUCE_MAX, CT_REDUCE_MIN};
    int r;
    if (!include_self) {
        CtScalar identity = reduce_identity(kind, self->dtype);
        r = reduce_put(p, self, NULL, &identity, CT_REDUCE_NONE, bad_value);
        if (r != 0) {
            return r;
        }
    }
    r = reduce_put(p, self, vals, NULL, ops[kind], bad_value);
    if (r != 0 || kind != SR_MEAN) {
        return r;
    }
    /* mean: divide by how many values each place combined (at least 1), floor division for integers */
    CtScalar one = {CT_KIND_INT, {.i = 1}};
    CtTensorObject *clamped = NULL, *divided = NULL;
    CtTensorObject *count = (include_self ? ct_ones : ct_zeros)(self->ndim, self->sizes, self->dtype,
                                                                ct_device_of(self));
    r = count ? reduce_put(p, count, NULL, &one, CT_REDUCE_ADD, bad_value) : -1;
    if (r == 0) {
        clamped = ct_binary_scalar_(CT_EW_CLAMP_MIN, count, &one);
        divided = clamped ? ct_binary_(ct_is_floating(self->dtype) ? CT_EW_DIV : CT_EW_DIV_FLOOR, self, count) : NULL;
        r = divided ? 0 : -1;
    }
    Py_XDECREF(divided);
    Py_XDECREF(clamped);
    Py_XDECREF(count);
    return r;
}

int ct_scatter_reduce_(CtTensorObject *self, int64_t dim_arg, CtTensorObject *index, CtTensorObject *src,
                       const char *reduce, bool include_self)
{
    int dim;
    ReduceKind kind;
    int64_t bad_value = 0;
    if (ct_check_no_internal_overlap(self) < 0 || scatter_check(self, dim_arg, index, src, &dim) < 0) {
        return -1;
    }
    if (reduce_kind(reduce, &kind) < 0) {
        PyErr_Format(PyExc_RuntimeError, "reduce argument must be either sum, prod, mean, amax or amin, got %s",
                     reduce);
        return -1;
    }
    if (kind == SR_MEAN && self->dtype == CT_BOOL) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'");
        return -1;
    }
    ReducePlan p = {false, dim, index};
    int r = reduce_impl(self, &p, src, kind, include_self, &bad_value);
    return scatter_done(self, dim, r, bad_value);
}

int ct_index_reduce_(CtTensorObject *self, int64_t dim_arg, CtTensorObject *index, CtTensorObject *source,
                     const char *reduce, bool include_self)
{
    int dim;
    ReduceKind kind;
    int64_t bad_value = 0;
    if (ct_check_no_internal_overlap(self) < 0) { /* PyTorch refuses writing an element twice (expanded self) */
        return -1;
    }
    if (reduce_kind(reduce, &kind) < 0 || kind == SR_SUM) {
        PyErr_Format(PyExc_RuntimeError,
                     "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got %s.", reduce);
        return -1;
    }
    if (along_check(self, dim_arg, index, source, "index_reduce_", &dim) < 0) {
        return -1;
    }
    if (self->ndim != source->ndim) {
        source_shape_error(self, source);
        return -1;
    }
    if (self->dtype == CT_BOOL) {
        PyErr_SetString(PyExc_NotImplementedError, "\"index_func_\" not implemented for 'Bool'");
        return -1;
    }
    CtTensorObject *vals = source_along_dim(self, dim, source);
    if (vals == NULL) {
        return -1;
    }
    ReducePlan p = {true, dim, index};
    int r = reduce_impl(self, &p, vals, kind, include_self, &bad_value);
    Py_DECREF(vals);
    if (r > 0) {
        PyErr_SetString(PyExc_IndexError, "index out of range in self");
    }
    if (r != 0) {
        return -1;
    }
    ct_bump_version(self);
    return 0;
}

CtTensorObject *ct_take(CtTensorObject *self, CtTensorObject *index)
{
    if (index->dtype != CT_I64) {
        PyErr_Format(PyExc_RuntimeError, "take(): Expected a long tensor for index, but got %s",
                     ct_scalar_type_name(index->dtype));
        return NULL;
    }
    if (same_device2(self, index) < 0) {
        return NULL;
    }
    CtTensorObject *flat = NULL, *src = NULL, *out = NULL, *result = NULL;
    int64_t zero[CT_MAX_DIMS] = {0};
    int64_t n = ct_numel(self), one = 1;
    flat = ct_contiguous(self);
    out = flat ? ct_empty(index->ndim, index->sizes, self->dtype, ct_device_of(self)) : NULL;
    src = out ? ct_view_of(flat, index->ndim, index->sizes, zero, flat->offset) : NULL;
    if (src == NULL) {
        goto done;
    }
    int bad = -1;
    int64_t bad_value = 0;
    int r = run_indexing(false, out, src, 1, &index, &n, &one, true, CT_REDUCE_NONE, NULL, &bad, &bad_value);
    if (r > 0 && n == 0) {
        PyErr_SetString(PyExc_IndexError, "take(): tried to take from an empty tensor");
    } else if (r > 0) {
        PyErr_Format(PyExc_IndexError, "out of range: tried to access index %lld on a tensor of %lld elements.",
                     (long long)bad_value, (long long)n);
    }
    if (r != 0) {
        goto done;
    }
    result = out;
    out = NULL;
done:
    Py_XDECREF(flat);
    Py_XDECREF(src);
    Py_XDECREF(out);
    return result;
}

/* ============================================================================================
 * Masks: masked_fill, masked_select, nonzero
 * ============================================================================================ */

int ct_masked_fill_(CtTensorObject *self, CtTensorObject *mask, const CtScalar *value)
{
    if (mask->dtype != CT_BOOL) {
        PyErr_Format(PyExc_RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                     ct_cpp_type_name(mask->dtype));
        return -1;
    }
    int64_t bshape[CT_MAX_DIMS];
    int nd = ct_broadcast_shapes(self->ndim, self->sizes, mask->ndim, mask->sizes, bshape);
    if (nd < 0) {
        return -1;
    }
    if (nd != self->ndim || memcmp(bshape, self->sizes, sizeof(int64_t) * nd) != 0) {
        char a[256], b[256];
        ct_format_sizes(a, sizeof(a), self->ndim, self->sizes);
        ct_format_sizes(b, sizeof(b), nd, bshape);
        PyErr_Format(PyExc_RuntimeError, "output with shape %s doesn't match the broadcast shape %s", a, b);
        return -1;
    }
    CtTensorObject *m = NULL, *v = NULL;
    int rc = -1;
    CtDevice device;
    CtTensorObject *ts[2] = {self, mask};
    if (ct_check_same_device(2, ts, true, &device) < 0) {
        return -1;
    }
    m = on_device(mask, ct_device_of(self));
    v = m ? scalar_of(value, self->dtype, ct_device_of(self)) : NULL;
    if (v == NULL) {
        goto done;
    }
    int64_t mstrides[CT_MAX_DIMS];
    broadcast_strides(m, self->ndim, self->sizes, mstrides);
    CtTensorObject *mview = ct_view_of(m, self->ndim, self->sizes, mstrides, m->offset);
    if (mview == NULL) {
        goto done;
    }
    rc = masked_fill_at(self, mview, 0, v);
    Py_DECREF(mview);
    if (rc == 0) {
        ct_bump_version(self);
    }
done:
    Py_XDECREF(m);
    Py_XDECREF(v);
    return rc;
}

CtTensorObject *ct_masked_select(CtTensorObject *self, CtTensorObject *mask)
{
    if (mask->dtype != CT_BOOL) {
        PyErr_SetString(PyExc_RuntimeError, "masked_select: expected BoolTensor for mask");
        return NULL;
    }
    if (same_device2(self, mask) < 0) {
        return NULL;
    }
    int64_t bshape[CT_MAX_DIMS];
    int nd = ct_broadcast_shapes(mask->ndim, mask->sizes, self->ndim, self->sizes, bshape);
    if (nd < 0) {
        return NULL;
    }
    const struct CtIndexKernels *kernels = index_kernels(ct_device_of(self));
    if (kernels == NULL) {
        return NULL;
    }
    PyObject *s = ct_expand(self, nd, bshape);
    PyObject *m = s ? ct_expand(mask, nd, bshape) : NULL;
    CtTensorObject *r = m ? kernels->masked_select(CT_TENSOR(s), CT_TENSOR(m)) : NULL;
    Py_XDECREF(s);
    Py_XDECREF(m);
    return r;
}

CtTensorObject *ct_nonzero(CtTensorObject *self)
{
    const struct CtIndexKernels *kernels = index_kernels(ct_device_of(self));
    return kernels == NULL ? NULL : kernels->nonzero(self);
}

PyObject *ct_nonzero_tuple(CtTensorObject *self)
{
    CtTensorObject *flat = NULL, *coords = NULL;
    PyObject *out = NULL;
    if (self->ndim == 0) { /* read as 1-d */
        int64_t one = 1;
        flat = ct_view_of(self, 1, &one, &one, self->offset);
    } else {
        flat = (CtTensorObject *)Py_NewRef(self);
    }
    coords = flat ? ct_nonzero(flat) : NULL;
    if (coords == NULL) {
        goto done;
    }
    out = PyTuple_New(flat->ndim);
    for (int d = 0; out != NULL && d < flat->ndim; d++) {
        PyObject *col = ct_select(coords, 1, d);
        if (col == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyTuple_SET_ITEM(out, d, col);
    }
done:
    Py_XDECREF(flat);
    Py_XDECREF(coords);
    return out;
}

/* ============================================================================================
 * Joining and rearranging: cat, stack, flip, roll, repeat, tril/triu, diagonal, one_hot
 * ============================================================================================ */

static bool legacy_empty(const CtTensorObject *t) { return t->ndim == 1 && t->sizes[0] == 0; }

CtTensorObject *ct_cat(int n, CtTensorObject *const *ts, int64_t dim_arg)
{
    if (n == 0) {
        PyErr_SetString(PyExc_ValueError, "torch.cat(): expected a non-empty list of Tensors");
        return NULL;
    }
    CtDevice device;
    if (ct_check_same_device(n, ts, false, &device) < 0) {
        return NULL;
    }
    CtDType dtype = ts[0]->dtype;
    for (int i = 1; i < n; i++) {
        dtype = ct_promote_types(dtype, ts[i]->dtype);
    }
    for (int i = 0; i < n; i++) {
        if (ts[i]->ndim == 0) {
            PyErr_Format(PyExc_RuntimeError, "zero-dimensional tensor (at position %d) cannot be concatenated", i);
            return NULL;
        }
    }
    const CtTensorObject *ref = NULL;
    for (int i = 0; i < n && ref == NULL; i++) {
        if (!legacy_empty(ts[i])) {
            ref = ts[i];
        }
    }
    if (ref == NULL) { /* every input is a legacy empty (0,) tensor */
        int dim;
        if (ct_wrap_dim(dim_arg, 1, &dim) < 0) {
            return NULL;
        }
        int64_t zero = 0;
        return ct_empty(1, &zero, dtype, device);
    }
    int dim;
    if (ct_wrap_dim(dim_arg, ref->ndim, &dim) < 0) {
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, ref->sizes, sizeof(int64_t) * ref->ndim);
    sizes[dim] = 0;
    for (int i = 0; i < n; i++) {
        const CtTensorObject *t = ts[i];
        if (legacy_empty(t)) {
            continue;
        }
        if (t->ndim != ref->ndim) {
            PyErr_Format(PyExc_RuntimeError, "Tensors must have same number of dimensions: got %d and %d", ref->ndim,
                         t->ndim);
            return NULL;
        }
        for (int d = 0; d < t->ndim; d++) {
            if (d != dim && t->sizes[d] != ref->sizes[d]) {
                PyErr_Format(PyExc_RuntimeError,
                             "Sizes of tensors must match except in dimension %d. Expected size %lld but got size "
                             "%lld for tensor number %d in the list.",
                             dim, (long long)ref->sizes[d], (long long)t->sizes[d], i);
                return NULL;
            }
        }
        sizes[dim] += t->sizes[dim];
    }
    CtTensorObject *out = ct_empty(ref->ndim, sizes, dtype, device);
    if (out == NULL) {
        return NULL;
    }
    int64_t start = 0;
    for (int i = 0; i < n; i++) {
        CtTensorObject *t = ts[i];
        if (legacy_empty(t) || t->sizes[dim] == 0) {
            continue;
        }
        PyObject *slot = ct_narrow(out, dim, start, t->sizes[dim]);
        int r = slot == NULL ? -1 : ct_copy_(CT_TENSOR(slot), t);
        Py_XDECREF(slot);
        if (r < 0) {
            Py_DECREF(out);
            return NULL;
        }
        start += t->sizes[dim];
    }
    return out;
}

/* Views of ts with a size-1 dim inserted at dim (new references in out). */
static int unsqueeze_all(int n, CtTensorObject *const *ts, int dim, CtTensorObject **out)
{
    for (int i = 0; i < n; i++) {
        int nd = ts[i]->ndim;
        int64_t sizes[CT_MAX_DIMS + 1], strides[CT_MAX_DIMS + 1];
        memcpy(sizes, ts[i]->sizes, sizeof(int64_t) * nd);
        memcpy(strides, ts[i]->strides, sizeof(int64_t) * nd);
        insert_dim(&nd, sizes, strides, dim);
        out[i] = ct_view_of(ts[i], nd, sizes, strides, ts[i]->offset);
        if (out[i] == NULL) {
            for (int j = 0; j < i; j++) {
                Py_CLEAR(out[j]);
            }
            return -1;
        }
    }
    return 0;
}

CtTensorObject *ct_stack(int n, CtTensorObject *const *ts, int64_t dim_arg)
{
    if (n == 0) {
        PyErr_SetString(PyExc_RuntimeError, "stack expects a non-empty TensorList");
        return NULL;
    }
    for (int i = 1; i < n; i++) {
        if (ts[i]->ndim != ts[0]->ndim || memcmp(ts[i]->sizes, ts[0]->sizes, sizeof(int64_t) * ts[0]->ndim) != 0) {
            char a[256], b[256];
            ct_format_sizes(a, sizeof(a), ts[0]->ndim, ts[0]->sizes);
            ct_format_sizes(b, sizeof(b), ts[i]->ndim, ts[i]->sizes);
            PyErr_Format(PyExc_RuntimeError,
                         "stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %d", a, b,
                         i);
            return NULL;
        }
    }
    int dim;
    if (ct_wrap_dim(dim_arg, ts[0]->ndim + 1, &dim) < 0) {
        return NULL;
    }
    if (ts[0]->ndim + 1 > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions", CT_MAX_DIMS);
        return NULL;
    }
    CtTensorObject **views = PyMem_Calloc(n, sizeof(CtTensorObject *));
    if (views == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    CtTensorObject *out = NULL;
    if (unsqueeze_all(n, ts, dim, views) == 0) {
        out = ct_cat(n, views, dim);
        for (int i = 0; i < n; i++) {
            Py_DECREF(views[i]);
        }
    }
    PyMem_Free(views);
    return out;
}

CtTensorObject *ct_flip(CtTensorObject *self, int ndims, const int64_t *dims)
{
    bool flip[CT_MAX_DIMS] = {false};
    for (int i = 0; i < ndims; i++) {
        int d;
        if (ct_wrap_dim(dims[i], self->ndim, &d) < 0) {
            return NULL;
        }
        if (flip[d]) {
            PyErr_Format(PyExc_RuntimeError, "dim %d appears multiple times in the list of dims", d);
            return NULL;
        }
        flip[d] = true;
    }
    /* copy from a view that walks the flipped dims backwards */
    int64_t strides[CT_MAX_DIMS], offset = self->offset;
    for (int d = 0; d < self->ndim; d++) {
        strides[d] = self->strides[d];
        if (flip[d] && self->sizes[d] > 0) {
            offset += (self->sizes[d] - 1) * self->strides[d];
            strides[d] = -strides[d];
        }
    }
    CtTensorObject *out = ct_empty_like(self, self->dtype);
    CtTensorObject *rev = out ? ct_view_of(self, self->ndim, self->sizes, strides, offset) : NULL;
    int r = rev == NULL ? -1 : ct_copy_(out, rev);
    Py_XDECREF(rev);
    if (r < 0) {
        Py_XDECREF(out);
        return NULL;
    }
    return out;
}

/* dst = src rolled by shift along dim (both of the same shape; dst a fresh tensor). */
static int roll_into(CtTensorObject *dst, CtTensorObject *src, int dim, int64_t shift)
{
    int64_t n = src->sizes[dim];
    shift = n == 0 ? 0 : ((shift % n) + n) % n;
    if (shift == 0) {
        return ct_copy_(dst, src);
    }
    PyObject *a = ct_narrow(dst, dim, shift, n - shift), *b = ct_narrow(src, dim, 0, n - shift);
    PyObject *c = ct_narrow(dst, dim, 0, shift), *d = ct_narrow(src, dim, n - shift, shift);
    int r = (a && b && c && d && ct_copy_(CT_TENSOR(a), CT_TENSOR(b)) == 0 && ct_copy_(CT_TENSOR(c), CT_TENSOR(d)) == 0)
                ? 0
                : -1;
    Py_XDECREF(a);
    Py_XDECREF(b);
    Py_XDECREF(c);
    Py_XDECREF(d);
    return r;
}

CtTensorObject *ct_roll(CtTensorObject *self, int nshifts, const int64_t *shifts, int ndims, const int64_t *dims)
{
    if (nshifts == 0) {
        PyErr_SetString(PyExc_RuntimeError, "`shifts` required");
        return NULL;
    }
    if (ndims == 0 && nshifts == 1) { /* roll the flattened tensor, then restore the shape */
        CtTensorObject *c = ct_contiguous(self);
        if (c == NULL) {
            return NULL;
        }
        int64_t n = ct_numel(c), one = 1;
        CtTensorObject *flat = ct_view_of(c, 1, &n, &one, c->offset);
        CtTensorObject *out = flat ? ct_empty(self->ndim, self->sizes, self->dtype, ct_device_of(self)) : NULL;
        CtTensorObject *oflat = out ? ct_view_of(out, 1, &n, &one, 0) : NULL;
        int r = oflat == NULL ? -1 : roll_into(oflat, flat, 0, shifts[0]);
        Py_DECREF(c);
        Py_XDECREF(flat);
        Py_XDECREF(oflat);
        if (r < 0) {
            Py_XDECREF(out);
            return NULL;
        }
        return out;
    }
    if (nshifts != ndims) {
        PyErr_Format(PyExc_RuntimeError, "shifts and dimensions must align. shifts: %d, dims:%d", nshifts, ndims);
        return NULL;
    }
    int wrapped[CT_MAX_DIMS];
    for (int i = 0; i < ndims; i++) {
        if (ct_wrap_dim(dims[i], self->ndim, &wrapped[i]) < 0) {
            return NULL;
        }
    }
    CtTensorObject *cur = (CtTensorObject *)Py_NewRef(self);
    for (int i = 0; i < ndims; i++) {
        CtTensorObject *next = ct_empty(self->ndim, self->sizes, self->dtype, ct_device_of(self));
        if (next == NULL || roll_into(next, cur, self->ndim ? wrapped[i] : 0, shifts[i]) < 0) {
            Py_XDECREF(next);
            Py_DECREF(cur);
            return NULL;
        }
        Py_SETREF(cur, next);
    }
    if (cur == self) { /* no dims: still a copy */
        Py_SETREF(cur, ct_to(self, self->dtype, ct_device_of(self), true));
    }
    return cur;
}

CtTensorObject *ct_repeat(CtTensorObject *self, int n, const int64_t *repeats)
{
    if (n < self->ndim) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
        return NULL;
    }
    int64_t out_sizes[CT_MAX_DIMS];
    int lead = n - self->ndim;
    for (int i = 0; i < n; i++) {
        int64_t s = i < lead ? 1 : self->sizes[i - lead];
        out_sizes[i] = repeats[i] * s;
    }
    CtTensorObject *out = ct_empty(n, out_sizes, self->dtype, ct_device_of(self));
    if (out == NULL || ct_numel(out) == 0) {
        return out;
    }
    /* out viewed as (r0, s0, r1, s1, ...) receives self broadcast along every r_i; dims with
     * r_i == 1 need no pair */
    int64_t vs[CT_MAX_DIMS], vst[CT_MAX_DIMS], ss[CT_MAX_DIMS];
    int vnd = 0;
    for (int i = 0; i < n; i++) {
        int64_t s = i < lead ? 1 : self->sizes[i - lead];
        int64_t st = i < lead ? 0 : self->strides[i - lead];
        if (repeats[i] != 1) {
            if (vnd + 2 > CT_MAX_DIMS) {
                Py_DECREF(out);
                PyErr_Format(PyExc_RuntimeError, "repeat: ctorch supports at most %d dimensions", CT_MAX_DIMS);
                return NULL;
            }
            vs[vnd] = repeats[i];
            vst[vnd] = s * out->strides[i];
            ss[vnd++] = 0;
        }
        vs[vnd] = s;
        vst[vnd] = out->strides[i];
        ss[vnd++] = st;
    }
    CtTensorObject *dst = ct_view_of(out, vnd, vs, vst, 0);
    CtTensorObject *src = dst ? ct_view_of(self, vnd, vs, ss, self->offset) : NULL;
    int r = src == NULL ? -1 : ct_copy_(dst, src);
    Py_XDECREF(dst);
    Py_XDECREF(src);
    if (r < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

int ct_triangle(CtTensorObject *out, CtTensorObject *self, int64_t diagonal, bool upper)
{
    if (self->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "%s: input tensor must have at least 2 dimensions", upper ? "triu" : "tril");
        return -1;
    }
    const struct CtIndexKernels *kernels = index_kernels(ct_device_of(self));
    if (kernels == NULL || kernels->triangle(out, self, diagonal, upper) < 0) {
        return -1;
    }
    if (out == self) {
        ct_bump_version(self);
    }
    return 0;
}

CtTensorObject *ct_diagonal(CtTensorObject *self, int64_t offset, int64_t dim1_arg, int64_t dim2_arg)
{
    int d1, d2;
    if (ct_wrap_dim(dim1_arg, self->ndim, &d1) < 0 || ct_wrap_dim(dim2_arg, self->ndim, &d2) < 0) {
        return NULL;
    }
    if (d1 == d2) {
        PyErr_Format(PyExc_RuntimeError, "diagonal dimensions cannot be identical %lld, %lld", (long long)dim1_arg,
                     (long long)dim2_arg);
        return NULL;
    }
    int64_t s1 = self->sizes[d1], s2 = self->sizes[d2], length, start = self->offset;
    if (offset >= 0) {
        length = s2 - offset < s1 ? s2 - offset : s1;
        if (length > 0) {
            start += offset * self->strides[d2];
        }
    } else {
        length = s1 + offset < s2 ? s1 + offset : s2;
        if (length > 0) {
            start -= offset * self->strides[d1];
        }
    }
    if (length < 0) {
        length = 0;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (d != d1 && d != d2) {
            sizes[nd] = self->sizes[d];
            strides[nd++] = self->strides[d];
        }
    }
    sizes[nd] = length;
    strides[nd++] = self->strides[d1] + self->strides[d2];
    return ct_view_of(self, nd, sizes, strides, start);
}

/* diag(1-d) -> a square matrix with the vector on diagonal k; diag(2-d) -> copy of diagonal k. */
static CtTensorObject *diag_impl(CtTensorObject *self, int64_t k)
{
    if (self->ndim == 2) {
        CtTensorObject *d = ct_diagonal(self, k, 0, 1);
        if (d == NULL) {
            return NULL;
        }
        CtTensorObject *r = ct_to(d, d->dtype, ct_device_of(d), true);
        Py_DECREF(d);
        return r;
    }
    if (self->ndim != 1) {
        PyErr_Format(PyExc_RuntimeError, "diag(): Supports 1D or 2D tensors. Got %dD", self->ndim);
        return NULL;
    }
    int64_t n = self->sizes[0] + (k < 0 ? -k : k);
    int64_t shape[2] = {n, n};
    CtTensorObject *out = zeros(2, shape, self->dtype, ct_device_of(self));
    CtTensorObject *d = out ? ct_diagonal(out, k, 0, 1) : NULL;
    int r = d == NULL ? -1 : ct_copy_(d, self);
    Py_XDECREF(d);
    if (r < 0) {
        Py_XDECREF(out);
        return NULL;
    }
    return out;
}

CtTensorObject *ct_one_hot(CtTensorObject *self, int64_t num_classes)
{
    if (self->dtype != CT_I64) {
        PyErr_SetString(PyExc_RuntimeError, "one_hot is only applicable to index tensor of type LongTensor.");
        return NULL;
    }
    const struct CtIndexKernels *kernels = index_kernels(ct_device_of(self));
    if (kernels == NULL) {
        return NULL;
    }
    int64_t n = ct_numel(self);
    if (n == 0 && num_classes == -1) {
        PyErr_SetString(PyExc_RuntimeError, "Can not infer total number of classes from empty tensor.");
        return NULL;
    }
    if (n > 0) {
        int64_t lo, hi;
        if (kernels->int_minmax(self, &lo, &hi) < 0) {
            return NULL;
        }
        if (lo < 0) {
            PyErr_SetString(PyExc_RuntimeError, "Class values must be non-negative.");
            return NULL;
        }
        if (num_classes == -1) {
            num_classes = hi + 1;
        } else if (hi >= num_classes) {
            PyErr_SetString(PyExc_RuntimeError, "Class values must be smaller than num_classes.");
            return NULL;
        }
    }
    if (num_classes < 0) {
        PyErr_SetString(PyExc_RuntimeError, "Class values must be smaller than num_classes.");
        return NULL;
    }
    if (self->ndim + 1 > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions", CT_MAX_DIMS);
        return NULL;
    }
    int64_t shape[CT_MAX_DIMS];
    memcpy(shape, self->sizes, sizeof(int64_t) * self->ndim);
    shape[self->ndim] = num_classes;
    CtTensorObject *out = zeros(self->ndim + 1, shape, CT_I64, ct_device_of(self));
    if (out == NULL || n == 0) {
        return out;
    }
    /* out[..., self[...]] = 1: a put along the last dim */
    CtScalar one = {CT_KIND_INT, {.i = 1}};
    int64_t zero[CT_MAX_DIMS] = {0};
    CtTensorObject *ones = scalar_of(&one, CT_I64, ct_device_of(self));
    CtTensorObject *vals = ones ? ct_view_of(ones, self->ndim, self->sizes, zero, 0) : NULL;
    CtTensorObject *dst = vals ? ct_view_of(out, self->ndim, self->sizes, out->strides, 0) : NULL;
    int bad = -1;
    int64_t bad_value = 0, stride = 1;
    int r = dst == NULL ? -1
                        : run_indexing(true, dst, vals, 1, &self, &num_classes, &stride, false, CT_REDUCE_NONE, NULL,
                                       &bad, &bad_value);
    Py_XDECREF(ones);
    Py_XDECREF(vals);
    Py_XDECREF(dst);
    if (r != 0) {
        if (r > 0) {
            PyErr_SetString(PyExc_RuntimeError, "Class values must be smaller than num_classes.");
        }
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* ============================================================================================
 * Python bindings
 * ============================================================================================ */

typedef PyObject *(*MethodFK)(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* A module function f(input, ...) forwarded to the Tensor method input.f(...). */
static PyObject *call_with_input(const char *fname, MethodFK method, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    if (nargs >= 1) {
        if (!CtTensor_Check(args[0])) {
            PyErr_Format(PyExc_TypeError, "%s(): argument 'input' (position 1) must be Tensor, not %s", fname,
                         type_name(args[0]));
            return NULL;
        }
        return method(args[0], args + 1, nargs - 1, kwnames);
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0, found = -1;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), "input") == 0) {
            found = k;
        }
    }
    if (found < 0) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument 'input' (pos 1)", fname);
        return NULL;
    }
    PyObject *input = args[found];
    if (!CtTensor_Check(input)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' must be Tensor, not %s", fname, type_name(input));
        return NULL;
    }
    PyObject *rest[32];
    if (nkw > 32) {
        PyErr_Format(PyExc_TypeError, "%s(): too many keyword arguments", fname);
        return NULL;
    }
    PyObject *names = PyTuple_New(nkw - 1);
    if (names == NULL) {
        return NULL;
    }
    Py_ssize_t j = 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        if (k != found) {
            rest[j] = args[k];
            PyTuple_SET_ITEM(names, j, Py_NewRef(PyTuple_GET_ITEM(kwnames, k)));
            j++;
        }
    }
    PyObject *r = method(input, rest, 0, nkw > 1 ? names : NULL);
    Py_DECREF(names);
    return r;
}

static CtTensorObject *tensor_arg(PyObject *obj, const char *fname, const char *name, int pos)
{
    if (obj != NULL && CtTensor_Check(obj)) {
        return CT_TENSOR(obj);
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname, name, pos,
                 obj ? type_name(obj) : "NoneType");
    return NULL;
}

static int dim_arg(PyObject *obj, int64_t *out, const char *fname)
{
    if (obj == NULL || PyFloat_Check(obj) || !PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'dim' must be int, not %s", fname,
                     obj ? type_name(obj) : "NoneType");
        return -1;
    }
    return ct_arg_int64(obj, out);
}

/* An int or a sequence of ints into out (at most max); returns the count or -1. */
static int int_list_arg(PyObject *obj, int64_t *out, int max, const char *fname, const char *name, int pos)
{
    if (PyIndex_Check(obj) && !PyFloat_Check(obj) && !CtTensor_Check(obj)) {
        return ct_arg_int64(obj, out) < 0 ? -1 : 1;
    }
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be tuple of ints, not %s", fname, name,
                     pos, type_name(obj));
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n > max) {
        PyErr_Format(PyExc_RuntimeError, "%s(): too many values in '%s'", fname, name);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(obj, i);
        if (PyFloat_Check(item) || !PyIndex_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be tuple of ints, but found "
                                          "element of type %s at pos %zd",
                         fname, name, pos, type_name(item), i);
            return -1;
        }
        if (ct_arg_int64(item, &out[i]) < 0) {
            return -1;
        }
    }
    return (int)n;
}

/* A Python number or 0-d tensor as a scalar; what_fn names the op for the 0-d message. A
 * Python number must fit the target dtype (PyTorch's checked Scalar conversion: NaN into an
 * int tensor raises); a 0-d tensor's value is cast like a copy. */
static int value_arg(PyObject *obj, CtScalar *out, const char *what_fn, CtDType target)
{
    if (CtTensor_Check(obj) && CT_TENSOR(obj)->ndim != 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).", what_fn,
                     CT_TENSOR(obj)->ndim);
        return -1;
    }
    if (ct_scalar_from_object(obj, out) < 0) {
        return -1;
    }
    /* PyTorch reads a CPU 0-d value with item() and checks it fits like a number (a GPU one goes to the kernel) */
    bool on_gpu = CtTensor_Check(obj) && ct_device_of(CT_TENSOR(obj)).type != CT_DEV_CPU;
    return on_gpu ? 0 : ct_check_scalar_fits(out, target, true);
}

/* A tuple or list of tensors: borrowed pointers in a PyMem array (*out), count returned. */
static Py_ssize_t tensor_list_arg(PyObject *obj, const char *fname, CtTensorObject ***out)
{
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'tensors' (position 1) must be tuple of Tensors, not %s", fname,
                     type_name(obj));
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    *out = PyMem_Calloc(n > 0 ? n : 1, sizeof(CtTensorObject *));
    if (*out == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(obj, i);
        if (!CtTensor_Check(item)) {
            PyErr_Format(PyExc_TypeError, "expected Tensor as element %zd in argument 0, but got %s", i,
                         type_name(item));
            PyMem_Free(*out);
            *out = NULL;
            return -1;
        }
        (*out)[i] = CT_TENSOR(item);
    }
    return n;
}

static PyObject *ok_self(PyObject *self, int rc) { return rc < 0 ? NULL : Py_NewRef(self); }

/* A copy of t for the out-of-place forms of in-place ops (new reference). */
static CtTensorObject *clone_of(CtTensorObject *t) { return ct_to(t, t->dtype, ct_device_of(t), true); }

/* --- __getitem__ / __setitem__ ------------------------------------------------------------- */
static PyObject *tensor_getitem(PyObject *self, PyObject *index)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (PyLong_CheckExact(index) && t->ndim > 0) { /* x[i]: the common case, straight to select */
        int overflow = 0;
        long long i = PyLong_AsLongLongAndOverflow(index, &overflow);
        if (!overflow && !(i == -1 && PyErr_Occurred())) {
            if (i < -t->sizes[0] || i >= t->sizes[0]) {
                PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension 0 with size %lld", i,
                             (long long)t->sizes[0]);
                return NULL;
            }
            return ct_select(t, 0, i);
        }
        PyErr_Clear();
    }
    return ct_getitem(t, index);
}

static int tensor_setitem(PyObject *self, PyObject *index, PyObject *value)
{
    return ct_setitem(CT_TENSOR(self), index, value);
}

/* --- gather / scatter / index_* -------------------------------------------------------------- */
static PyObject *tensor_gather(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim", "index", "*sparse_grad", "*out", NULL};
    PyObject *a[4];
    int64_t dim;
    CtTensorObject *index;
    if (ct_parse_args("gather", args, nargs, kwnames, names, 2, a) < 0 || dim_arg(a[0], &dim, "gather") < 0 ||
        (index = tensor_arg(a[1], "gather", "index", 2)) == NULL) {
        return NULL;
    }
    CtTensorObject *in[2] = {CT_TENSOR(self), index};
    return ct_write_out(ct_gather(CT_TENSOR(self), dim, index), a[3], "gather", CT_OUT_EXACT, 2, in);
}

static int parse_reduce(PyObject *obj, CtIndexReduce *out)
{
    *out = CT_REDUCE_NONE;
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    const char *s = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    if (s != NULL && strcmp(s, "add") == 0) {
        *out = CT_REDUCE_ADD;
        return 0;
    }
    if (s != NULL && strcmp(s, "multiply") == 0) {
        *out = CT_REDUCE_MUL;
        return 0;
    }
    PyErr_Clear();
    PyErr_SetString(PyExc_RuntimeError, "reduce argument must be either add or multiply.");
    return -1;
}

/* scatter(dim, index, src | value, *, reduce=None) on target (self, or a clone of it). */
static int scatter_args(PyObject *target, const char *fname, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames)
{
    static const char *const names[] = {"dim", "index", "src", "*value", "*reduce", NULL};
    PyObject *a[5];
    int64_t dim;
    CtTensorObject *index;
    CtIndexReduce reduce;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0 || dim_arg(a[0], &dim, fname) < 0 ||
        (index = tensor_arg(a[1], fname, "index", 2)) == NULL || parse_reduce(a[4], &reduce) < 0) {
        return -1;
    }
    PyObject *src = a[2] != NULL ? a[2] : a[3];
    if (src == NULL) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument 'src' or 'value'", fname);
        return -1;
    }
    if (CtTensor_Check(src)) {
        return ct_scatter_(CT_TENSOR(target), dim, index, CT_TENSOR(src), NULL, reduce);
    }
    CtScalar value;
    if (ct_scalar_from_object(src, &value) < 0 || ct_check_scalar_fits(&value, CT_TENSOR(target)->dtype, true) < 0) {
        return -1;
    }
    return ct_scatter_(CT_TENSOR(target), dim, index, NULL, &value, reduce);
}

static PyObject *tensor_scatter_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return ok_self(self, scatter_args(self, "scatter_", args, nargs, kwnames));
}

static PyObject *tensor_scatter(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    CtTensorObject *out = clone_of(CT_TENSOR(self));
    if (out != NULL && scatter_args((PyObject *)out, "scatter", args, nargs, kwnames) < 0) {
        Py_CLEAR(out);
    }
    return (PyObject *)out;
}

static int scatter_add_args(PyObject *target, const char *fname, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    static const char *const names[] = {"dim", "index", "src", NULL};
    PyObject *a[3];
    int64_t dim;
    CtTensorObject *index, *src;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 3, a) < 0 || dim_arg(a[0], &dim, fname) < 0 ||
        (index = tensor_arg(a[1], fname, "index", 3)) == NULL || (src = tensor_arg(a[2], fname, "src", 4)) == NULL) {
        return -1;
    }
    return ct_scatter_add_(CT_TENSOR(target), dim, index, src);
}

static PyObject *tensor_scatter_add_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return ok_self(self, scatter_add_args(self, "scatter_add_", args, nargs, kwnames));
}

static PyObject *tensor_scatter_add(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    CtTensorObject *out = clone_of(CT_TENSOR(self));
    if (out != NULL && scatter_add_args((PyObject *)out, "scatter_add", args, nargs, kwnames) < 0) {
        Py_CLEAR(out);
    }
    return (PyObject *)out;
}

/* scatter_reduce(dim, index, src, reduce, *, include_self=True) and index_reduce(dim, index,
 * source, reduce, *, include_self=True): in place on target; *out the out= argument. */
static int reduce_args(PyObject *target, bool along, const char *fname, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames, PyObject **out)
{
    static const char *const scatter_names[] = {"dim", "index", "src", "reduce", "*include_self", "*out", NULL};
    static const char *const index_names[] = {"dim", "index", "source", "reduce", "*include_self", "*out", NULL};
    PyObject *a[6] = {NULL};
    int64_t dim;
    bool include_self = true;
    CtTensorObject *index, *src;
    if (ct_parse_args(fname, args, nargs, kwnames, along ? index_names : scatter_names, 4, a) < 0 ||
        dim_arg(a[0], &dim, fname) < 0 || (index = tensor_arg(a[1], fname, "index", 2)) == NULL ||
        (src = tensor_arg(a[2], fname, along ? "source" : "src", 3)) == NULL || ct_arg_bool(a[4], &include_self) < 0) {
        return -1;
    }
    if (!PyUnicode_Check(a[3])) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'reduce' (position 4) must be str, not %s", fname,
                     type_name(a[3]));
        return -1;
    }
    const char *reduce = PyUnicode_AsUTF8(a[3]);
    if (reduce == NULL) {
        return -1;
    }
    if (out != NULL) {
        *out = a[5];
    } else if (a[5] != NULL) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument 'out'", fname);
        return -1;
    }
    return along ? ct_index_reduce_(CT_TENSOR(target), dim, index, src, reduce, include_self)
                 : ct_scatter_reduce_(CT_TENSOR(target), dim, index, src, reduce, include_self);
}

#define CT_REDUCE_METHODS(name, ALONG)                                                                         \
    static PyObject *tensor_##name##_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)  \
    {                                                                                                          \
        return ok_self(self, reduce_args(self, ALONG, #name "_", args, nargs, kw, NULL));                     \
    }                                                                                                          \
    static PyObject *tensor_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)     \
    {                                                                                                          \
        PyObject *out = NULL;                                                                                  \
        CtTensorObject *r = clone_of(CT_TENSOR(self));                                                         \
        if (r != NULL && reduce_args((PyObject *)r, ALONG, #name, args, nargs, kw, &out) < 0) {               \
            Py_CLEAR(r);                                                                                       \
        }                                                                                                      \
        return r == NULL || out == NULL ? (PyObject *)r : ct_write_out(r, out, #name, CT_OUT_EXACT, 0, NULL);  \
    }
CT_REDUCE_METHODS(scatter_reduce, false)
CT_REDUCE_METHODS(index_reduce, true)

static PyObject *tensor_index_select(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim", "index", "*out", NULL};
    PyObject *a[3];
    int64_t dim;
    CtTensorObject *index;
    if (ct_parse_args("index_select", args, nargs, kwnames, names, 2, a) < 0 ||
        dim_arg(a[0], &dim, "index_select") < 0 || (index = tensor_arg(a[1], "index_select", "index", 3)) == NULL) {
        return NULL;
    }
    CtTensorObject *in[2] = {CT_TENSOR(self), index};
    return ct_write_out(ct_index_select(CT_TENSOR(self), dim, index), a[2], "index_select", CT_OUT_SAME_SCALAR, 2, in);
}

typedef enum { ALONG_ADD, ALONG_COPY, ALONG_FILL } AlongOp;

/* index_add_/index_copy_/index_fill_ (dim, index, source | value) applied to target. */
static int along_args(PyObject *target, AlongOp op, const char *fname, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames)
{
    static const char *const add_names[] = {"dim", "index", "source", "*alpha", NULL};
    static const char *const copy_names[] = {"dim", "index", "source", NULL};
    static const char *const fill_names[] = {"dim", "index", "value", NULL};
    const char *const *names = op == ALONG_ADD ? add_names : op == ALONG_COPY ? copy_names : fill_names;
    PyObject *a[4] = {NULL};
    int64_t dim;
    CtTensorObject *index;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 3, a) < 0 || dim_arg(a[0], &dim, fname) < 0 ||
        (index = tensor_arg(a[1], fname, "index", 2)) == NULL) {
        return -1;
    }
    if (op == ALONG_FILL) {
        CtScalar value;
        int unused;
        if (ct_wrap_dim(dim, CT_TENSOR(target)->ndim, &unused) < 0 || /* the dim is checked before the value */
            value_arg(a[2], &value, "index_fill_", CT_TENSOR(target)->dtype) < 0) {
            return -1;
        }
        return ct_index_fill_(CT_TENSOR(target), dim, index, &value);
    }
    CtTensorObject *source = tensor_arg(a[2], fname, "source", 3);
    if (source == NULL) {
        return -1;
    }
    if (op == ALONG_COPY) {
        return ct_index_copy_(CT_TENSOR(target), dim, index, source);
    }
    CtScalar alpha = {CT_KIND_INT, {.i = 1}};
    if (a[3] != NULL && ct_scalar_from_object(a[3], &alpha) < 0) {
        return -1;
    }
    return ct_index_add_(CT_TENSOR(target), dim, index, source, &alpha);
}

#define CT_ALONG_METHODS(name, OP)                                                                             \
    static PyObject *tensor_##name##_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)  \
    {                                                                                                          \
        return ok_self(self, along_args(self, OP, #name "_", args, nargs, kw));                                \
    }                                                                                                          \
    static PyObject *tensor_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)     \
    {                                                                                                          \
        CtTensorObject *out = clone_of(CT_TENSOR(self));                                                       \
        if (out != NULL && along_args((PyObject *)out, OP, #name, args, nargs, kw) < 0) {                      \
            Py_CLEAR(out);                                                                                     \
        }                                                                                                      \
        return (PyObject *)out;                                                                                \
    }
CT_ALONG_METHODS(index_add, ALONG_ADD)
CT_ALONG_METHODS(index_copy, ALONG_COPY)
CT_ALONG_METHODS(index_fill, ALONG_FILL)

static int index_put_args(PyObject *target, const char *fname, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    static const char *const names[] = {"indices", "values", "accumulate", NULL};
    PyObject *a[3];
    bool accumulate = false;
    CtTensorObject *values;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0 ||
        (values = tensor_arg(a[1], fname, "values", 2)) == NULL || ct_arg_bool(a[2], &accumulate) < 0) {
        return -1;
    }
    if (!PyTuple_Check(a[0]) && !PyList_Check(a[0])) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'indices' (position 1) must be tuple of Tensors, not %s", fname,
                     type_name(a[0]));
        return -1;
    }
    return ct_index_put_(CT_TENSOR(target), a[0], values, accumulate);
}

static PyObject *tensor_index_put_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return ok_self(self, index_put_args(self, "index_put_", args, nargs, kwnames));
}

static PyObject *tensor_index_put(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    CtTensorObject *out = clone_of(CT_TENSOR(self));
    if (out != NULL && index_put_args((PyObject *)out, "index_put", args, nargs, kwnames) < 0) {
        Py_CLEAR(out);
    }
    return (PyObject *)out;
}

static PyObject *tensor_take(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"index", NULL};
    PyObject *a[1];
    CtTensorObject *index;
    if (ct_parse_args("take", args, nargs, kwnames, names, 1, a) < 0 ||
        (index = tensor_arg(a[0], "take", "index", 2)) == NULL) {
        return NULL;
    }
    return (PyObject *)ct_take(CT_TENSOR(self), index);
}

/* --- masks ------------------------------------------------------------------------------------ */
static int masked_fill_args(CtTensorObject *target, const char *fname, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    static const char *const names[] = {"mask", "value", NULL};
    PyObject *a[2];
    CtTensorObject *mask;
    CtScalar value;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0 ||
        (mask = tensor_arg(a[0], fname, "mask", 2)) == NULL || value_arg(a[1], &value, "masked_fill_", target->dtype) < 0) {
        return -1;
    }
    return ct_masked_fill_(target, mask, &value);
}

static PyObject *tensor_masked_fill_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return ok_self(self, masked_fill_args(CT_TENSOR(self), "masked_fill_", args, nargs, kwnames));
}

static PyObject *tensor_masked_fill(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    /* the result has the broadcast shape of self and mask */
    CtTensorObject *t = CT_TENSOR(self), *out = NULL;
    int64_t bshape[CT_MAX_DIMS];
    int nd = t->ndim;
    memcpy(bshape, t->sizes, sizeof(int64_t) * nd);
    PyObject *mask = nargs > 0 ? args[0] : NULL;
    for (Py_ssize_t k = 0; mask == NULL && kwnames && k < PyTuple_GET_SIZE(kwnames); k++) {
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), "mask") == 0) {
            mask = args[nargs + k];
        }
    }
    if (mask != NULL && CtTensor_Check(mask)) {
        nd = ct_broadcast_shapes(CT_TENSOR(mask)->ndim, CT_TENSOR(mask)->sizes, t->ndim, t->sizes, bshape);
        if (nd < 0) {
            return NULL;
        }
    }
    out = ct_empty(nd, bshape, t->dtype, ct_device_of(t));
    if (out == NULL || ct_copy_(out, t) < 0 || masked_fill_args(out, "masked_fill", args, nargs, kwnames) < 0) {
        Py_XDECREF(out);
        return NULL;
    }
    return (PyObject *)out;
}

static PyObject *tensor_masked_select(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"mask", "*out", NULL};
    PyObject *a[2];
    CtTensorObject *mask;
    if (ct_parse_args("masked_select", args, nargs, kwnames, names, 1, a) < 0 ||
        (mask = tensor_arg(a[0], "masked_select", "mask", 2)) == NULL) {
        return NULL;
    }
    CtTensorObject *in[2] = {CT_TENSOR(self), mask};
    return ct_write_out(ct_masked_select(CT_TENSOR(self), mask), a[1], "masked_select", CT_OUT_SAME_SCALAR, 2, in);
}

static PyObject *tensor_nonzero(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"*as_tuple", "*out", NULL};
    PyObject *a[2];
    bool as_tuple = false;
    if (ct_parse_args("nonzero", args, nargs, kwnames, names, 0, a) < 0 || ct_arg_bool(a[0], &as_tuple) < 0) {
        return NULL;
    }
    CtTensorObject *in[1] = {CT_TENSOR(self)};
    return as_tuple ? ct_nonzero_tuple(CT_TENSOR(self))
                    : ct_write_out(ct_nonzero(CT_TENSOR(self)), a[1], "nonzero", CT_OUT_LONG, 1, in);
}

static PyObject *tensor_argwhere(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (ct_parse_args("argwhere", args, nargs, kwnames, (const char *const[]){NULL}, 0, NULL) < 0) {
        return NULL;
    }
    return (PyObject *)ct_nonzero(CT_TENSOR(self));
}

/* --- tril / triu ----------------------------------------------------------------------------- */
static int diagonal_arg(PyObject *obj, int64_t *out, const char *fname)
{
    *out = 0;
    if (obj == NULL) {
        return 0;
    }
    if (PyFloat_Check(obj) || !PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'diagonal' must be int, not %s", fname, type_name(obj));
        return -1;
    }
    return ct_arg_int64(obj, out);
}

static PyObject *triangle_method(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                                 const char *fname, bool upper, bool inplace)
{
    static const char *const names[] = {"diagonal", "*out", NULL};
    PyObject *a[2];
    int64_t diagonal;
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_parse_args(fname, args, nargs, kwnames, names, 0, a) < 0 || diagonal_arg(a[0], &diagonal, fname) < 0) {
        return NULL;
    }
    if (inplace) {
        return ok_self(self, ct_triangle(t, t, diagonal, upper));
    }
    if (t->ndim < 2) {
        return ok_self(self, ct_triangle(t, t, diagonal, upper)); /* raises the rank error */
    }
    CtTensorObject *out = ct_empty_like(t, t->dtype);
    if (out != NULL && ct_triangle(out, t, diagonal, upper) < 0) {
        Py_CLEAR(out);
    }
    return ct_write_out(out, a[1], fname, CT_OUT_EXACT | CT_OUT_ALLOW_EXPANDED, 1, &t);
}

static PyObject *tensor_tril(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return triangle_method(s, a, n, k, "tril", false, false);
}
static PyObject *tensor_triu(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return triangle_method(s, a, n, k, "triu", true, false);
}
static PyObject *tensor_tril_(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return triangle_method(s, a, n, k, "tril_", false, true);
}
static PyObject *tensor_triu_(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return triangle_method(s, a, n, k, "triu_", true, true);
}

/* --- flip / roll / repeat / tile ------------------------------------------------------------- */

/* dims given as f(0, 1), f((0, 1)), f([0, 1]) or f(dims=...). */
static int varargs_ints(const char *fname, const char *name, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames, int64_t *out)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nkw == 1 && nargs == 0 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), name) == 0) {
        return int_list_arg(args[0], out, CT_MAX_DIMS, fname, name, 1);
    }
    if (nkw > 0) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument", fname);
        return -1;
    }
    if (nargs == 1 && (PyTuple_Check(args[0]) || PyList_Check(args[0]))) {
        return int_list_arg(args[0], out, CT_MAX_DIMS, fname, name, 1);
    }
    if (nargs > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "%s(): too many values", fname);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if (PyFloat_Check(args[i]) || !PyIndex_Check(args[i])) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be tuple of ints, but found element of type %s at "
                                          "pos %zd",
                         fname, name, type_name(args[i]), i);
            return -1;
        }
        if (ct_arg_int64(args[i], &out[i]) < 0) {
            return -1;
        }
    }
    return (int)nargs;
}

static PyObject *tensor_flip(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    int64_t dims[CT_MAX_DIMS];
    int n = varargs_ints("flip", "dims", args, nargs, kwnames, dims);
    return n < 0 ? NULL : (PyObject *)ct_flip(CT_TENSOR(self), n, dims);
}

static PyObject *tensor_fliplr(PyObject *self, PyObject *unused)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (t->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError, "Input must be >= 2-d.");
        return NULL;
    }
    int64_t d = 1;
    return (PyObject *)ct_flip(t, 1, &d);
}

static PyObject *tensor_flipud(PyObject *self, PyObject *unused)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (t->ndim < 1) {
        PyErr_SetString(PyExc_RuntimeError, "Input must be >= 1-d.");
        return NULL;
    }
    int64_t d = 0;
    return (PyObject *)ct_flip(t, 1, &d);
}

static PyObject *tensor_roll(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"shifts", "dims", NULL};
    PyObject *a[2];
    int64_t shifts[CT_MAX_DIMS], dims[CT_MAX_DIMS];
    if (ct_parse_args("roll", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    int ns = int_list_arg(a[0], shifts, CT_MAX_DIMS, "roll", "shifts", 2);
    if (ns < 0) {
        return NULL;
    }
    int nd = 0;
    if (a[1] != NULL && a[1] != Py_None) {
        nd = int_list_arg(a[1], dims, CT_MAX_DIMS, "roll", "dims", 3);
        if (nd < 0) {
            return NULL;
        }
    }
    return (PyObject *)ct_roll(CT_TENSOR(self), ns, shifts, nd, dims);
}

static PyObject *tensor_repeat(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    int64_t reps[CT_MAX_DIMS];
    int n = varargs_ints("repeat", "repeats", args, nargs, kwnames, reps);
    return n < 0 ? NULL : (PyObject *)ct_repeat(CT_TENSOR(self), n, reps);
}

static PyObject *tensor_tile(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    int64_t reps[CT_MAX_DIMS], padded[CT_MAX_DIMS];
    CtTensorObject *t = CT_TENSOR(self);
    int n = varargs_ints("tile", "dims", args, nargs, kwnames, reps);
    if (n < 0) {
        return NULL;
    }
    int lead = t->ndim > n ? t->ndim - n : 0; /* tile pads the repeats with leading ones */
    for (int i = 0; i < lead; i++) {
        padded[i] = 1;
    }
    memcpy(padded + lead, reps, sizeof(int64_t) * n);
    return (PyObject *)ct_repeat(t, n + lead, padded);
}

/* --- diag / diagonal ------------------------------------------------------------------------- */
static PyObject *tensor_diag(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"diagonal", "*out", NULL};
    PyObject *a[2];
    int64_t k;
    if (ct_parse_args("diag", args, nargs, kwnames, names, 0, a) < 0 || diagonal_arg(a[0], &k, "diag") < 0) {
        return NULL;
    }
    CtTensorObject *in[1] = {CT_TENSOR(self)};
    if (in[0]->ndim == 1 && a[1] != NULL && CtTensor_Check(a[1]) && !ct_can_cast(in[0]->dtype, CT_TENSOR(a[1])->dtype)) {
        /* building a matrix, PyTorch first checks the cast */
        PyErr_Format(PyExc_RuntimeError, "diag: result type %s can't be cast to the desired out= type %s",
                     ct_scalar_type_name(in[0]->dtype), ct_scalar_type_name(CT_TENSOR(a[1])->dtype));
        return NULL;
    }
    return ct_write_out(diag_impl(CT_TENSOR(self), k), a[1], "diag", CT_OUT_EXACT, 1, in);
}

static PyObject *tensor_diagonal(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"offset", "dim1", "dim2", NULL};
    PyObject *a[3];
    int64_t offset = 0, d1 = 0, d2 = 1;
    if (ct_parse_args("diagonal", args, nargs, kwnames, names, 0, a) < 0 || ct_arg_int64(a[0], &offset) < 0 ||
        ct_arg_int64(a[1], &d1) < 0 || ct_arg_int64(a[2], &d2) < 0) {
        return NULL;
    }
    return (PyObject *)ct_diagonal(CT_TENSOR(self), offset, d1, d2);
}

/* --- module functions ------------------------------------------------------------------------ */
#define CT_MODULE_FROM_METHOD(name)                                                                         \
    static PyObject *py_##name(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                                       \
        return call_with_input(#name, tensor_##name, args, nargs, kwnames);                                \
    }
/* the same for a function PyTorch gives out= (its method takes none) */
#define CT_MODULE_FROM_METHOD_OUT(name, rule)                                                                  \
    static PyObject *py_##name##_in(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)     \
    {                                                                                                       \
        return call_with_input(#name, tensor_##name, args, nargs, kw);                                      \
    }                                                                                                       \
    static PyObject *py_##name(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                                       \
        return ct_function_with_out(#name, py_##name##_in, rule, args, nargs, kwnames);                     \
    }
CT_MODULE_FROM_METHOD(gather)
CT_MODULE_FROM_METHOD_OUT(scatter, CT_OUT_EXACT)
CT_MODULE_FROM_METHOD_OUT(scatter_add, CT_OUT_EXACT)
CT_MODULE_FROM_METHOD(scatter_reduce)
CT_MODULE_FROM_METHOD(index_reduce)
CT_MODULE_FROM_METHOD(index_select)
CT_MODULE_FROM_METHOD_OUT(index_add, CT_OUT_EXACT)
CT_MODULE_FROM_METHOD_OUT(index_copy, CT_OUT_EXACT)
CT_MODULE_FROM_METHOD(index_fill)
CT_MODULE_FROM_METHOD(index_put)
CT_MODULE_FROM_METHOD_OUT(take, CT_OUT_SELF_DTYPE)
CT_MODULE_FROM_METHOD(masked_fill)
CT_MODULE_FROM_METHOD(masked_select)
CT_MODULE_FROM_METHOD(nonzero)
CT_MODULE_FROM_METHOD(argwhere)
CT_MODULE_FROM_METHOD(tril)
CT_MODULE_FROM_METHOD(triu)
CT_MODULE_FROM_METHOD(roll)
CT_MODULE_FROM_METHOD(tile)
CT_MODULE_FROM_METHOD(diag)
CT_MODULE_FROM_METHOD(diagonal)

static PyObject *py_flip(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dims", NULL};
    PyObject *a[2];
    int64_t dims[CT_MAX_DIMS];
    CtTensorObject *t;
    if (ct_parse_args("flip", args, nargs, kwnames, names, 2, a) < 0 ||
        (t = tensor_arg(a[0], "flip", "input", 1)) == NULL) {
        return NULL;
    }
    if (!PyTuple_Check(a[1]) && !PyList_Check(a[1])) {
        PyErr_Format(PyExc_TypeError, "flip(): argument 'dims' (position 2) must be tuple of ints, not %s",
                     type_name(a[1]));
        return NULL;
    }
    int n = int_list_arg(a[1], dims, CT_MAX_DIMS, "flip", "dims", 2);
    return n < 0 ? NULL : (PyObject *)ct_flip(t, n, dims);
}

static PyObject *py_fliplr(PyObject *mod, PyObject *arg)
{
    CtTensorObject *t = tensor_arg(arg, "fliplr", "input", 1);
    return t == NULL ? NULL : tensor_fliplr(arg, NULL);
}

static PyObject *py_flipud(PyObject *mod, PyObject *arg)
{
    CtTensorObject *t = tensor_arg(arg, "flipud", "input", 1);
    return t == NULL ? NULL : tensor_flipud(arg, NULL);
}

/* cat(tensors, dim=0) also spelled axis=. */
static PyObject *py_cat(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"tensors", "dim", "*axis", "*out", NULL};
    PyObject *a[4];
    int64_t dim = 0;
    CtTensorObject **ts = NULL;
    if (ct_parse_args("cat", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    if (a[1] == NULL) {
        a[1] = a[2];
    }
    if ((a[1] != NULL && dim_arg(a[1], &dim, "cat") < 0)) {
        return NULL;
    }
    Py_ssize_t n = tensor_list_arg(a[0], "cat", &ts);
    if (n < 0) {
        return NULL;
    }
    PyObject *r = ct_write_out(ct_cat((int)n, ts, dim), a[3], "cat", CT_OUT_CAST, n, ts);
    PyMem_Free(ts);
    return r;
}

static PyObject *py_stack(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"tensors", "dim", "*out", NULL};
    PyObject *a[3];
    int64_t dim = 0;
    CtTensorObject **ts = NULL;
    if (ct_parse_args("stack", args, nargs, kwnames, names, 1, a) < 0 ||
        (a[1] != NULL && dim_arg(a[1], &dim, "stack") < 0)) {
        return NULL;
    }
    Py_ssize_t n = tensor_list_arg(a[0], "stack", &ts);
    if (n < 0) {
        return NULL;
    }
    PyObject *r = ct_write_out(ct_stack((int)n, ts, dim), a[2], "stack", CT_OUT_CAST, n, ts);
    PyMem_Free(ts);
    return r;
}

/* hstack / vstack / dstack: cat after raising every input to at least `rank` dims the way
 * atleast_1d/2d/3d do, along dim (hstack: 0 for vectors, else 1). */
static PyObject *stack_like(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int rank)
{
    static const char *const names[] = {"tensors", "*out", NULL};
    PyObject *a[2];
    CtTensorObject **ts = NULL, **views = NULL;
    PyObject *result = NULL;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    Py_ssize_t n = tensor_list_arg(a[0], fname, &ts);
    if (n < 0) {
        return NULL;
    }
    views = PyMem_Calloc(n > 0 ? n : 1, sizeof(CtTensorObject *));
    if (views == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int want = rank == 1 ? 1 : rank;
    for (Py_ssize_t i = 0; i < n; i++) {
        CtTensorObject *t = ts[i];
        int64_t sizes[3], strides[3];
        int nd = t->ndim;
        if (nd >= want) {
            views[i] = (CtTensorObject *)Py_NewRef(t);
            continue;
        }
        /* atleast_2d: (n,) -> (1, n); atleast_3d: (n,) -> (1, n, 1), (a, b) -> (a, b, 1) */
        if (nd == 0) {
            for (int d = 0; d < want; d++) {
                sizes[d] = 1;
                strides[d] = 1;
            }
        } else if (nd == 1) {
            sizes[0] = 1;
            strides[0] = t->sizes[0] * t->strides[0];
            sizes[1] = t->sizes[0];
            strides[1] = t->strides[0];
            sizes[2] = 1;
            strides[2] = 1;
        } else {
            sizes[0] = t->sizes[0];
            strides[0] = t->strides[0];
            sizes[1] = t->sizes[1];
            strides[1] = t->strides[1];
            sizes[2] = 1;
            strides[2] = 1;
        }
        views[i] = ct_view_of(t, want, sizes, strides, t->offset);
        if (views[i] == NULL) {
            goto done;
        }
    }
    int64_t dim = rank == 3 ? 2 : rank == 2 ? 0 : (n > 0 && views[0]->ndim == 1 ? 0 : 1);
    result = ct_write_out(ct_cat((int)n, views, dim), a[1], fname, CT_OUT_CAST, n, views);
done:
    for (Py_ssize_t i = 0; views != NULL && i < n; i++) {
        Py_XDECREF(views[i]);
    }
    PyMem_Free(views);
    PyMem_Free(ts);
    return result;
}

static PyObject *py_hstack(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return stack_like("hstack", a, n, k, 1);
}
static PyObject *py_vstack(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return stack_like("vstack", a, n, k, 2);
}
static PyObject *py_dstack(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return stack_like("dstack", a, n, k, 3);
}

static PyObject *py_one_hot(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"tensor", "num_classes", NULL};
    PyObject *a[2];
    int64_t num_classes = -1;
    CtTensorObject *t;
    if (ct_parse_args("one_hot", args, nargs, kwnames, names, 1, a) < 0 ||
        (t = tensor_arg(a[0], "one_hot", "tensor", 1)) == NULL || ct_arg_int64(a[1], &num_classes) < 0) {
        return NULL;
    }
    return (PyObject *)ct_one_hot(t, num_classes);
}

/* --- tables ------------------------------------------------------------------------------------ */
#define CT_M(name, doc) {#name, CT_FASTCALL(tensor_##name), CT_METH_FK, doc}

PyMethodDef ct_index_tensor_methods[] = {
    CT_M(gather, "gather(dim, index): out[i][j] = self[i][index[i][j]] along dim"),
    CT_M(scatter, "scatter(dim, index, src | value, *, reduce=None): out-of-place scatter_"),
    CT_M(scatter_, "scatter_(dim, index, src | value, *, reduce=None): self[i][index[i][j]] = src[i][j]"),
    CT_M(scatter_add, "scatter_add(dim, index, src): out-of-place scatter_add_"),
    CT_M(scatter_add_, "scatter_add_(dim, index, src): self[i][index[i][j]] += src[i][j]"),
    CT_M(scatter_reduce, "scatter_reduce(dim, index, src, reduce, *, include_self=True): out-of-place scatter_reduce_"),
    CT_M(scatter_reduce_, "scatter_reduce_(dim, index, src, reduce, *, include_self=True): reduce = sum, prod, mean, "
                          "amax or amin of self[i][index[i][j]] and src[i][j]"),
    CT_M(index_reduce, "index_reduce(dim, index, source, reduce, *, include_self=True): out-of-place index_reduce_"),
    CT_M(index_reduce_, "index_reduce_(dim, index, source, reduce, *, include_self=True): reduce = prod, mean, amax "
                        "or amin of self[index[i]] and source[i] along dim"),
    CT_M(index_select, "index_select(dim, index): the entries of index along dim"),
    CT_M(index_add, "index_add(dim, index, source, *, alpha=1)"),
    CT_M(index_add_, "index_add_(dim, index, source, *, alpha=1): self[index[i]] += alpha * source[i] along dim"),
    CT_M(index_copy, "index_copy(dim, index, source)"),
    CT_M(index_copy_, "index_copy_(dim, index, source): self[index[i]] = source[i] along dim"),
    CT_M(index_fill, "index_fill(dim, index, value)"),
    CT_M(index_fill_, "index_fill_(dim, index, value): self[index[i]] = value along dim"),
    CT_M(index_put, "index_put(indices, values, accumulate=False)"),
    CT_M(index_put_, "index_put_(indices, values, accumulate=False): self[indices] = values (or +=)"),
    CT_M(take, "take(index): self.flatten()[index]"),
    CT_M(masked_fill, "masked_fill(mask, value)"),
    CT_M(masked_fill_, "masked_fill_(mask, value): self[mask] = value, mask broadcast to self"),
    CT_M(masked_select, "masked_select(mask): 1-d tensor of the elements where mask is True"),
    CT_M(nonzero, "nonzero(*, as_tuple=False): indices of the nonzero elements"),
    CT_M(argwhere, "argwhere(): nonzero() as an (n, ndim) tensor"),
    CT_M(tril, "tril(diagonal=0): lower triangle of the last two dims"),
    CT_M(tril_, "tril_(diagonal=0): in-place tril"),
    CT_M(triu, "triu(diagonal=0): upper triangle of the last two dims"),
    CT_M(triu_, "triu_(diagonal=0): in-place triu"),
    CT_M(flip, "flip(*dims): copy with the order of the given dims reversed"),
    {"fliplr", tensor_fliplr, METH_NOARGS, "fliplr(): flip along dim 1"},
    {"flipud", tensor_flipud, METH_NOARGS, "flipud(): flip along dim 0"},
    CT_M(roll, "roll(shifts, dims=None): elements shifted circularly"),
    CT_M(repeat, "repeat(*sizes): tiled copy"),
    CT_M(tile, "tile(dims): repeat with the repeats padded with leading ones"),
    CT_M(diag, "diag(diagonal=0): vector -> diagonal matrix, matrix -> diagonal vector"),
    CT_M(diagonal, "diagonal(offset=0, dim1=0, dim2=1): view of a diagonal"),
    {NULL},
};

#define CT_F(name, doc) {#name, CT_FASTCALL(py_##name), CT_METH_FK, doc}

PyMethodDef ct_index_module_methods[] = {
    CT_F(cat, "cat(tensors, dim=0): concatenation along an existing dim"),
    {"concat", CT_FASTCALL(py_cat), CT_METH_FK, "concat(tensors, dim=0): alias of cat"},
    {"concatenate", CT_FASTCALL(py_cat), CT_METH_FK, "concatenate(tensors, axis=0): alias of cat"},
    CT_F(stack, "stack(tensors, dim=0): concatenation along a new dim"),
    CT_F(hstack, "hstack(tensors): stack column-wise"),
    CT_F(vstack, "vstack(tensors): stack row-wise"),
    CT_F(dstack, "dstack(tensors): stack depth-wise"),
    CT_F(gather, "gather(input, dim, index)"),
    CT_F(scatter, "scatter(input, dim, index, src | value, *, reduce=None, out=None)"),
    CT_F(scatter_add, "scatter_add(input, dim, index, src, *, out=None)"),
    CT_F(scatter_reduce, "scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None)"),
    CT_F(index_reduce, "index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None)"),
    CT_F(index_select, "index_select(input, dim, index)"),
    CT_F(index_add, "index_add(input, dim, index, source, *, alpha=1, out=None)"),
    CT_F(index_copy, "index_copy(input, dim, index, source, *, out=None)"),
    CT_F(index_fill, "index_fill(input, dim, index, value)"),
    CT_F(index_put, "index_put(input, indices, values, accumulate=False)"),
    CT_F(take, "take(input, index, *, out=None)"),
    CT_F(masked_fill, "masked_fill(input, mask, value)"),
    CT_F(masked_select, "masked_select(input, mask)"),
    CT_F(nonzero, "nonzero(input, *, as_tuple=False)"),
    CT_F(argwhere, "argwhere(input)"),
    CT_F(tril, "tril(input, diagonal=0)"),
    CT_F(triu, "triu(input, diagonal=0)"),
    CT_F(flip, "flip(input, dims)"),
    {"fliplr", py_fliplr, METH_O, "fliplr(input)"},
    {"flipud", py_flipud, METH_O, "flipud(input)"},
    CT_F(roll, "roll(input, shifts, dims=None)"),
    CT_F(tile, "tile(input, dims)"),
    CT_F(diag, "diag(input, diagonal=0)"),
    CT_F(diagonal, "diagonal(input, offset=0, dim1=0, dim2=1)"),
    CT_F(one_hot, "one_hot(tensor, num_classes=-1): int64 one-hot encoding along a new last dim"),
    {NULL},
};

PyType_Slot ct_index_tensor_slots[] = {
    {Py_mp_subscript, tensor_getitem},
    {Py_mp_ass_subscript, tensor_setitem},
    {0, NULL},
};
