/* ops_search.c: the search and counting ops (search.h): searchsorted, bucketize, bincount, histc,
 * unique, unique_consecutive, isin.
 *
 * Layout: the CPU's searchsorted kernel (the only kernel of the family; CUDA's is
 * cuda/search.cu), then the device-neutral ops, composed of the index, reduce and elementwise
 * families' C entry points, then the Python wrappers and the tables. */
#include "search.h"
#include "args.h"
#include "creation.h"
#include "device.h"
#include "elementwise.h"
#include "index.h"
#include "reduce.h"
#include "registry.h"
#include "search_math.h"
#include "tensor.h"
#include "views.h"
#include <math.h>
#include <string.h>

/* ============================================================================================
 * CPU kernel
 * ============================================================================================ */
typedef struct {
    const CtSearchArgs *args;
    bool out32;  /* operand 0 is int32 */
    bool sorter; /* operand 3 is present */
} SearchLoopCtx;

#define CT_SEARCH_LOOP(NAME, ...)                                                                          \
    static void search_loop_##NAME(char **data, const int64_t *strides, int64_t n, void *ctx)              \
    {                                                                                                      \
        const SearchLoopCtx *c = ctx;                                                                      \
        const CtSearchArgs *a = c->args;                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                                  \
            const char *sorter = c->sorter ? data[3] + i * strides[3] : NULL;                              \
            int64_t pos = ct_search_##NAME(data[2] + i * strides[2], a->line_stride, sorter, a->sorter_stride, \
                                           a->n, data[1] + i * strides[1], a->right);                      \
            if (c->out32) {                                                                                \
                *(int32_t *)(data[0] + i * strides[0]) = (int32_t)pos;                                     \
            } else {                                                                                       \
                *(int64_t *)(data[0] + i * strides[0]) = pos;                                              \
            }                                                                                              \
        }                                                                                                  \
    }
CT_DTYPE_LIST(CT_SEARCH_LOOP)
#undef CT_SEARCH_LOOP

#define CT_SEARCH_LOOP_ROW(NAME, ...) search_loop_##NAME,
static const CtInnerLoop search_loops[CT_NUM_DTYPES] = {CT_DTYPE_LIST(CT_SEARCH_LOOP_ROW)};
#undef CT_SEARCH_LOOP_ROW

int ct_cpu_searchsorted(const CtIter *it, const CtSearchArgs *args)
{
    SearchLoopCtx c = {args, it->dtypes[0] == CT_I32, it->nops > 3};
    ct_iter_cpu_run(it, search_loops[it->dtypes[1]], &c);
    return 0;
}

/* ============================================================================================
 * Device-neutral helpers
 * ============================================================================================ */
static const struct CtIndexKernels *search_kernels(CtDevice device)
{
    const CtDeviceOps *ops = ct_device_ops(device);
    if (ops == NULL) {
        return NULL;
    }
    if (ops->index == NULL || ops->index->searchsorted == NULL) {
        PyErr_Format(PyExc_NotImplementedError, "searchsorted is not implemented on %s", ops->name);
        return NULL;
    }
    return ops->index;
}

static bool on_cuda(const CtTensorObject *t) { return ct_device_of(t).type == CT_DEV_CUDA; }

/* NotImplementedError "\"<kernel>_cpu\" not implemented for 'Float'" (…_cuda on the GPU). */
static void *not_implemented_for(const char *kernel, const CtTensorObject *t, CtDType dtype)
{
    PyErr_Format(PyExc_NotImplementedError, "\"%s_%s\" not implemented for '%s'", kernel, on_cuda(t) ? "cuda" : "cpu",
                 ct_scalar_type_name(dtype));
    return NULL;
}

/* A contiguous tensor with t's elements and the given shape (t itself viewed when contiguous). */
static CtTensorObject *reshaped(CtTensorObject *t, int nd, const int64_t *sizes)
{
    int64_t strides[CT_MAX_DIMS];
    ct_contiguous_strides(nd, sizes, strides);
    CtTensorObject *c = ct_contiguous(t);
    CtTensorObject *v = c != NULL ? ct_view_of(c, nd, sizes, strides, c->offset) : NULL;
    Py_XDECREF(c);
    return v;
}

static CtTensorObject *flattened(CtTensorObject *t)
{
    int64_t n = ct_numel(t);
    return reshaped(t, 1, &n);
}

/* n copies of the scalar 1 of dtype: a 0-d tensor expanded to (n,) (stride 0). */
static CtTensorObject *ones_expanded(int64_t n, CtDType dtype, CtDevice device)
{
    CtScalar one = {CT_KIND_INT, {.i = 1}};
    CtTensorObject *s = ct_scalar_tensor(&one, dtype, device);
    if (s == NULL) {
        return NULL;
    }
    int64_t stride = 0;
    CtTensorObject *v = ct_view_of(s, 1, &n, &stride, s->offset);
    Py_DECREF(s);
    return v;
}

/* A 1-d (n,) view of an (n, 1) tensor (nonzero of a 1-d mask). */
static CtTensorObject *first_column(CtTensorObject *t)
{
    int64_t n = t->sizes[0], stride = t->strides[0];
    return ct_view_of(t, 1, &n, &stride, t->offset);
}

static void format_sizes(char *buf, size_t n, const CtTensorObject *t) { ct_format_sizes(buf, n, t->ndim, t->sizes); }

/* ============================================================================================
 * searchsorted / bucketize
 * ============================================================================================ */
/* PyTorch's argument checks of searchsorted, in its order (sorter, then the shapes). */
static int searchsorted_check(const struct CtIndexKernels *k, CtTensorObject *seq, CtTensorObject *values,
                              CtTensorObject *sorter)
{
    char a[256], b[256];
    if (sorter != NULL) {
        if (sorter->ndim != seq->ndim || memcmp(sorter->sizes, seq->sizes, sizeof(int64_t) * seq->ndim) != 0) {
            format_sizes(a, sizeof(a), seq);
            format_sizes(b, sizeof(b), sorter);
            PyErr_Format(PyExc_RuntimeError,
                         "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor "
                         "%sand got sorter tensor %s",
                         a, b);
            return -1;
        }
        if (sorter->dtype != CT_I64) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype %s",
                         ct_scalar_type_name(sorter->dtype));
            return -1;
        }
        int64_t lo = 0, hi = 0;
        if (ct_numel(sorter) > 0 && k->int_minmax(sorter, &lo, &hi) < 0) {
            return -1;
        }
        if (ct_numel(sorter) > 0 && (lo < 0 || hi >= seq->sizes[seq->ndim - 1])) {
            PyErr_SetString(PyExc_RuntimeError, "torch.searchsorted(): sorter index out of range");
            return -1;
        }
    }
    if (seq->ndim > 1 && values->ndim == 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, "
                     "but we got boundaries tensor dim(%d) and input value's dim(0) numel(1)",
                     seq->ndim);
        return -1;
    }
    if (seq->ndim == 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension");
        return -1;
    }
    if (seq->ndim > 1 && (values->ndim != seq->ndim ||
                          memcmp(values->sizes, seq->sizes, sizeof(int64_t) * (seq->ndim - 1)) != 0)) {
        format_sizes(a, sizeof(a), seq);
        format_sizes(b, sizeof(b), values);
        PyErr_Format(PyExc_RuntimeError,
                     "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                     "boundaries tensor and input value tensor must match, but we got boundaries tensor %s and input "
                     "value tensor %s",
                     a, b);
        return -1;
    }
    return 0;
}

/* The first element of every sorted line of t (seq or sorter), as an operand that broadcasts
 * over the values: 0-d for a 1-d t, else t's shape with the last dim 1. */
static CtTensorObject *line_starts(CtTensorObject *t)
{
    int64_t sizes[CT_MAX_DIMS];
    int nd = t->ndim == 1 ? 0 : t->ndim;
    memcpy(sizes, t->sizes, sizeof(int64_t) * t->ndim);
    sizes[t->ndim - 1] = 1;
    return ct_view_of(t, nd, sizes, t->strides, t->offset);
}

CtTensorObject *ct_searchsorted(CtTensorObject *seq, CtTensorObject *values, const CtScalar *scalar, bool out_int32,
                                bool right, CtTensorObject *sorter)
{
    CtTensorObject *seq_c = NULL, *val_c = NULL, *out = NULL, *ops[4] = {NULL, NULL, NULL, NULL};
    CtTensorObject *result = NULL;
    CtTensorObject *devs[3] = {seq, values != NULL ? values : seq, sorter != NULL ? sorter : seq};
    CtDevice device;
    const struct CtIndexKernels *k;
    if (ct_check_same_device(3, devs, false, &device) < 0 || (k = search_kernels(device)) == NULL) {
        return NULL;
    }
    CtEwArg args[2] = {{seq, {0}}, {values, {0}}};
    if (values == NULL) {
        args[1].s = *scalar;
    }
    CtDType common = ct_result_type(2, args);
    if ((val_c = values != NULL ? ct_to(values, common, device, false) : ct_scalar_tensor(scalar, common, device)) ==
            NULL ||
        searchsorted_check(k, seq, val_c, sorter) < 0) {
        goto done;
    }
    if (common == CT_BOOL) {
        not_implemented_for("searchsorted_out", seq, common);
        goto done;
    }
    if ((seq_c = ct_to(seq, common, device, false)) == NULL ||
        (out = ct_empty(val_c->ndim, val_c->sizes, out_int32 ? CT_I32 : CT_I64, device)) == NULL) {
        goto done;
    }
    int64_t n = seq->sizes[seq->ndim - 1];
    if (ct_numel(out) > 0 && n == 0) {
        if (ct_zero_(out) < 0) {
            goto done;
        }
    } else if (ct_numel(out) > 0) {
        int nops = sorter != NULL ? 4 : 3;
        ops[0] = (CtTensorObject *)Py_NewRef(out);
        ops[1] = (CtTensorObject *)Py_NewRef(val_c);
        if ((ops[2] = line_starts(seq_c)) == NULL || (sorter != NULL && (ops[3] = line_starts(sorter)) == NULL)) {
            goto done;
        }
        CtIter it;
        if (ct_iter_init(&it, nops, ops) < 0) {
            goto done;
        }
        CtSearchArgs sa = {n, seq_c->strides[seq_c->ndim - 1] * (int64_t)ct_itemsize(seq_c),
                           sorter != NULL ? sorter->strides[sorter->ndim - 1] * (int64_t)sizeof(int64_t) : 0, right};
        if (k->searchsorted(&it, &sa) < 0) {
            goto done;
        }
    }
    result = (CtTensorObject *)Py_NewRef(out);
done:
    for (int i = 0; i < 4; i++) {
        Py_XDECREF(ops[i]);
    }
    Py_XDECREF(seq_c);
    Py_XDECREF(val_c);
    Py_XDECREF(out);
    return result;
}

/* ============================================================================================
 * bincount / histc: a scatter_add_ into zeros (deterministic on every device)
 * ============================================================================================ */
/* out (zeros of nbins, dtype) with out[index[i]] += src[i]; src NULL: += 1. */
static CtTensorObject *count_into(int64_t nbins, CtDType dtype, CtTensorObject *index, CtTensorObject *src)
{
    CtDevice device = ct_device_of(index);
    CtTensorObject *out = ct_zeros(1, &nbins, dtype, device), *ones = NULL;
    if (out == NULL || ct_numel(index) == 0) {
        return out;
    }
    if (src == NULL && (ones = ones_expanded(ct_numel(index), dtype, device)) == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    int rc = ct_scatter_add_(out, 0, index, src != NULL ? src : ones);
    Py_XDECREF(ones);
    if (rc < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

CtTensorObject *ct_bincount(CtTensorObject *input, CtTensorObject *weights, int64_t minlength)
{
    if (!ct_is_integral(input->dtype, false)) {
        return not_implemented_for("bincount", input, input->dtype);
    }
    if (minlength < 0) {
        PyErr_SetString(PyExc_RuntimeError, "minlength should be >= 0");
        return NULL;
    }
    if (input->ndim == 1 && ct_numel(input) == 0) {
        return ct_zeros(1, &minlength, CT_I64, ct_device_of(input));
    }
    CtTensorObject *index = NULL, *w = NULL, *result = NULL;
    const struct CtIndexKernels *k = search_kernels(ct_device_of(input));
    int64_t lo = 0, hi = 0;
    if (k == NULL || (input->ndim == 1 && ((index = ct_to(input, CT_I64, ct_device_of(input), false)) == NULL ||
                                           k->int_minmax(index, &lo, &hi) < 0))) {
        goto done;
    }
    if (input->ndim != 1 || lo < 0) {
        PyErr_SetString(PyExc_RuntimeError, "bincount only supports 1-d non-negative integral inputs.");
        goto done;
    }
    if (weights != NULL && (weights->ndim != 1 || weights->sizes[0] != input->sizes[0])) {
        PyErr_SetString(PyExc_RuntimeError, "weights should be 1-d and have the same length as input");
        goto done;
    }
    CtTensorObject *devs[2] = {input, weights != NULL ? weights : input};
    CtDevice device;
    if (ct_check_same_device(2, devs, false, &device) < 0) {
        goto done;
    }
    int64_t nbins = hi + 1 > minlength ? hi + 1 : minlength;
    /* PyTorch: float32 weights count in float32, any other weights in float64 */
    CtDType wdtype = weights == NULL ? CT_I64 : weights->dtype == CT_F32 ? CT_F32 : CT_F64;
    if (weights != NULL && (w = ct_to(weights, wdtype, device, false)) == NULL) {
        goto done;
    }
    result = count_into(nbins, wdtype, index, w);
done:
    Py_XDECREF(index);
    Py_XDECREF(w);
    return result;
}

/* C++'s name of a float dtype in histc's messages. */
static const char *cpp_float_name(CtDType d)
{
    switch (d) {
    case CT_F16:
        return "c10::Half";
    case CT_BF16:
        return "c10::BFloat16";
    case CT_F32:
        return "float";
    case CT_F64:
        return "double";
    case CT_I64:
        return "long int";
    case CT_I32:
        return "int";
    case CT_I16:
        return "short int";
    case CT_I8:
        return "signed char";
    case CT_U8:
        return "unsigned char";
    default:
        return "bool";
    }
}

/* histc's range: [min, max], or the data's when they are equal (widened by 1 each way when
 * that is a single value). 0 or -1 with PyTorch's errors. */
static int histc_range(CtTensorObject *input, double *min, double *max)
{
    if (*min == *max && ct_numel(input) > 0) {
        CtTensorObject *lo = ct_min_all(input), *hi = lo != NULL ? ct_max_all(input) : NULL;
        CtScalar a, b;
        int rc = hi != NULL && ct_item(lo, &a) == 0 && ct_item(hi, &b) == 0 ? 0 : -1;
        Py_XDECREF(lo);
        Py_XDECREF(hi);
        if (rc < 0) {
            return -1;
        }
        *min = a.v.d;
        *max = b.v.d;
    }
    if (*min == *max) {
        *min -= 1;
        *max += 1;
    }
    if (!isfinite(*min) || !isfinite(*max)) {
        char msg[128]; /* PyErr_Format has no %g */
        snprintf(msg, sizeof(msg), "torch.histc: range of [%g, %g] is not finite", *min, *max);
        PyErr_SetString(PyExc_RuntimeError, msg);
        return -1;
    }
    if (!(*min < *max)) {
        PyErr_SetString(PyExc_RuntimeError, "torch.histc: max must be larger than min");
        return -1;
    }
    return 0;
}

CtTensorObject *ct_histc(CtTensorObject *input, int64_t bins, double min, double max)
{
    if (bins <= 0) {
        PyErr_Format(PyExc_RuntimeError, "torch.histogram(): bins must be > 0, but got %lld for dimension 0",
                     (long long)bins);
        return NULL;
    }
    if (!ct_is_floating(input->dtype)) {
        return not_implemented_for("histogram", input, input->dtype);
    }
    if (histc_range(input, &min, &max) < 0) {
        return NULL;
    }
    /* PyTorch's linear bin selection, every step rounded to the input dtype:
     *   pos = (int64)((x - min) * bins / (max - min)), pos == bins -> bins - 1,
     * for min <= x <= max; other elements (NaN too) go to an extra bin bins, dropped after. */
    CtDType dtype = input->dtype;
    CtDevice device = ct_device_of(input);
    CtScalar smin = {CT_KIND_FLOAT, {.d = min}}, smax = {CT_KIND_FLOAT, {.d = max}};
    CtScalar sbins = {CT_KIND_INT, {.i = bins}}, slast = {CT_KIND_INT, {.i = bins - 1}};
    CtScalar zero = {CT_KIND_INT, {.i = 0}};
    CtTensorObject *x = NULL, *lo = NULL, *hi = NULL, *width = NULL, *ge = NULL, *le = NULL, *in = NULL;
    CtTensorObject *d = NULL, *scaled = NULL, *q = NULL, *zeros0 = NULL, *q_in = NULL, *pos = NULL, *last = NULL;
    CtTensorObject *outside = NULL, *index = NULL, *hist = NULL, *result = NULL;
    if ((x = flattened(input)) == NULL || (lo = ct_scalar_tensor(&smin, dtype, device)) == NULL ||
        (hi = ct_scalar_tensor(&smax, dtype, device)) == NULL || (width = ct_binary(CT_EW_SUB, hi, lo)) == NULL ||
        (ge = ct_binary(CT_EW_GE, x, lo)) == NULL || (le = ct_binary(CT_EW_LE, x, hi)) == NULL ||
        (in = ct_binary(CT_EW_LOGICAL_AND, ge, le)) == NULL || (d = ct_binary(CT_EW_SUB, x, lo)) == NULL ||
        (scaled = ct_binary_scalar(CT_EW_MUL, d, &sbins)) == NULL ||
        (q = ct_binary(CT_EW_DIV, scaled, width)) == NULL ||
        (zeros0 = ct_scalar_tensor(&zero, dtype, device)) == NULL || (q_in = ct_where(in, q, zeros0)) == NULL ||
        (pos = ct_to(q_in, CT_I64, device, false)) == NULL ||
        (last = ct_binary_scalar(CT_EW_CLAMP_MAX, pos, &slast)) == NULL ||
        (outside = ct_scalar_tensor(&sbins, CT_I64, device)) == NULL || (index = ct_where(in, last, outside)) == NULL ||
        (hist = count_into(bins + 1, dtype, index, NULL)) == NULL) {
        goto done;
    }
    result = CT_TENSOR(ct_narrow(hist, 0, 0, bins));
done:
    Py_XDECREF(x);
    Py_XDECREF(lo);
    Py_XDECREF(hi);
    Py_XDECREF(width);
    Py_XDECREF(ge);
    Py_XDECREF(le);
    Py_XDECREF(in);
    Py_XDECREF(d);
    Py_XDECREF(scaled);
    Py_XDECREF(q);
    Py_XDECREF(zeros0);
    Py_XDECREF(q_in);
    Py_XDECREF(pos);
    Py_XDECREF(last);
    Py_XDECREF(outside);
    Py_XDECREF(index);
    Py_XDECREF(hist);
    return result;
}

/* ============================================================================================
 * unique / unique_consecutive
 * ============================================================================================ */
/* The runs of equal neighbouring rows of sorted (n >= 1 rows: 1-d, or 2-d rows compared whole;
 * NaN differs from everything, -0.0 equals 0.0): values = the first row of each run; the
 * inverse maps input position perm[i] (i when perm is NULL) to the run of sorted row i; counts
 * are the run lengths. inverse/counts NULL: not wanted. 0 or -1. */
static int unique_runs(CtTensorObject *sorted, CtTensorObject *perm, CtTensorObject **values,
                       CtTensorObject **inverse, CtTensorObject **counts)
{
    CtDevice device = ct_device_of(sorted);
    int64_t n = sorted->sizes[0];
    CtScalar one = {CT_KIND_INT, {.i = 1}};
    CtTensorObject *after = NULL, *before = NULL, *ne = NULL, *changed = NULL, *first = NULL, *mask = NULL;
    CtTensorObject *nz = NULL, *starts = NULL, *cs = NULL, *group = NULL;
    int rc = -1;
    if ((first = ct_scalar_tensor(&one, CT_BOOL, device)) == NULL) {
        goto done;
    }
    int64_t len1 = 1, stride1 = 1;
    Py_SETREF(first, ct_view_of(first, 1, &len1, &stride1, first->offset));
    if (first == NULL) {
        goto done;
    }
    if (n > 1) {
        bool rows[2] = {false, true};
        if ((after = CT_TENSOR(ct_narrow(sorted, 0, 1, n - 1))) == NULL ||
            (before = CT_TENSOR(ct_narrow(sorted, 0, 0, n - 1))) == NULL ||
            (ne = ct_binary(CT_EW_NE, after, before)) == NULL ||
            (changed = sorted->ndim == 1 ? (CtTensorObject *)Py_NewRef(ne) : ct_any(ne, rows, false)) == NULL) {
            goto done;
        }
        CtTensorObject *parts[2] = {first, changed};
        mask = ct_cat(2, parts, 0);
    } else {
        mask = (CtTensorObject *)Py_NewRef(first);
    }
    if (mask == NULL || (nz = ct_nonzero(mask)) == NULL || (starts = first_column(nz)) == NULL ||
        (*values = ct_index_select(sorted, 0, starts)) == NULL) {
        goto done;
    }
    if (inverse != NULL || counts != NULL) {
        if ((cs = ct_cumsum(mask, 0, CT_I64)) == NULL || (group = ct_binary_scalar(CT_EW_SUB, cs, &one)) == NULL) {
            goto done;
        }
    }
    if (inverse != NULL) {
        if (perm == NULL) {
            *inverse = (CtTensorObject *)Py_NewRef(group);
        } else if ((*inverse = ct_empty(1, &n, CT_I64, device)) == NULL ||
                   ct_scatter_(*inverse, 0, perm, group, NULL, CT_REDUCE_NONE) < 0) {
            goto done;
        }
    }
    if (counts != NULL && (*counts = count_into(starts->sizes[0], CT_I64, group, NULL)) == NULL) {
        goto done;
    }
    rc = 0;
done:
    Py_XDECREF(after);
    Py_XDECREF(before);
    Py_XDECREF(ne);
    Py_XDECREF(changed);
    Py_XDECREF(first);
    Py_XDECREF(mask);
    Py_XDECREF(nz);
    Py_XDECREF(starts);
    Py_XDECREF(cs);
    Py_XDECREF(group);
    return rc;
}

/* The row order that sorts rows (n, m) lexicographically, stably: m stable sorts, last column
 * first (least significant digit first). */
static CtTensorObject *lexsort_rows(CtTensorObject *rows)
{
    int64_t n = rows->sizes[0], m = rows->sizes[1];
    CtScalar start = {CT_KIND_INT, {.i = 0}}, end = {CT_KIND_INT, {.i = n}}, step = {CT_KIND_INT, {.i = 1}};
    CtTensorObject *perm = ct_arange(&start, &end, &step, CT_I64, ct_device_of(rows));
    for (int64_t j = m - 1; j >= 0 && perm != NULL; j--) {
        CtTensorObject *col = CT_TENSOR(ct_select(rows, 1, j)), *key = NULL, *order = NULL;
        int rc = col != NULL && (key = ct_index_select(col, 0, perm)) != NULL &&
                         ct_sort(key, 0, false, NULL, &order) == 0
                     ? 0
                     : -1;
        Py_XDECREF(col);
        Py_XDECREF(key);
        Py_SETREF(perm, rc == 0 ? ct_index_select(perm, 0, order) : NULL);
        Py_XDECREF(order);
    }
    return perm;
}

/* unique along dim: rows are the slices along dim. */
static int unique_dim(CtTensorObject *input, bool consecutive, int dim, CtTensorObject **values,
                      CtTensorObject **inverse, CtTensorObject **counts)
{
    CtDevice device = ct_device_of(input);
    int nd = input->ndim;
    int64_t n = input->sizes[dim], rest = 1;
    int64_t moved_sizes[CT_MAX_DIMS], moved_strides[CT_MAX_DIMS];
    moved_sizes[0] = n;
    moved_strides[0] = input->strides[dim];
    for (int d = 0, k = 1; d < nd; d++) {
        if (d != dim) {
            moved_sizes[k] = input->sizes[d];
            moved_strides[k++] = input->strides[d];
            rest *= input->sizes[d];
        }
    }
    if (n > 0 && rest == 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
        return -1;
    }
    int64_t zero = 0;
    if (n == 0) {
        *values = ct_to(input, input->dtype, device, true);
        return *values == NULL || (inverse != NULL && (*inverse = ct_empty(1, &zero, CT_I64, device)) == NULL) ||
                       (counts != NULL && (*counts = ct_empty(1, &zero, CT_I64, device)) == NULL)
                   ? -1
                   : 0;
    }
    CtTensorObject *moved = NULL, *rows = NULL, *perm = NULL, *sorted = NULL, *flat_values = NULL, *back = NULL;
    int rc = -1;
    int64_t row_shape[2] = {n, rest};
    if ((moved = ct_view_of(input, nd, moved_sizes, moved_strides, input->offset)) == NULL ||
        (rows = reshaped(moved, 2, row_shape)) == NULL) {
        goto done;
    }
    if (consecutive) {
        sorted = (CtTensorObject *)Py_NewRef(rows);
    } else if ((perm = lexsort_rows(rows)) == NULL || (sorted = ct_index_select(rows, 0, perm)) == NULL) {
        goto done;
    }
    if (unique_runs(sorted, perm, &flat_values, inverse, counts) < 0) {
        goto done;
    }
    /* (u, rest) -> the moved shape with u rows -> dim back in place, contiguous */
    moved_sizes[0] = flat_values->sizes[0];
    int64_t back_sizes[CT_MAX_DIMS], back_strides[CT_MAX_DIMS];
    if ((back = reshaped(flat_values, nd, moved_sizes)) == NULL) {
        goto done;
    }
    for (int d = 0, k = 1; d < nd; d++) {
        int from = d == dim ? 0 : k++;
        back_sizes[d] = back->sizes[from];
        back_strides[d] = back->strides[from];
    }
    Py_SETREF(back, ct_view_of(back, nd, back_sizes, back_strides, back->offset));
    if (back == NULL || (*values = ct_contiguous(back)) == NULL) {
        goto done;
    }
    rc = 0;
done:
    Py_XDECREF(moved);
    Py_XDECREF(rows);
    Py_XDECREF(perm);
    Py_XDECREF(sorted);
    Py_XDECREF(flat_values);
    Py_XDECREF(back);
    return rc;
}

/* unique over the flattened tensor. */
static int unique_flat(CtTensorObject *input, bool consecutive, CtTensorObject **values, CtTensorObject **inverse,
                       CtTensorObject **counts)
{
    CtDevice device = ct_device_of(input);
    int64_t n = ct_numel(input), zero = 0;
    if (n == 0) {
        return (*values = ct_empty(1, &zero, input->dtype, device)) == NULL ||
                       (inverse != NULL && (*inverse = ct_empty(input->ndim, input->sizes, CT_I64, device)) == NULL) ||
                       (counts != NULL && (*counts = ct_empty(1, &zero, CT_I64, device)) == NULL)
                   ? -1
                   : 0;
    }
    CtTensorObject *flat = NULL, *sorted = NULL, *perm = NULL, *flat_inverse = NULL;
    int rc = -1;
    if ((flat = flattened(input)) == NULL) {
        goto done;
    }
    if (consecutive) {
        sorted = (CtTensorObject *)Py_NewRef(flat);
    } else if (ct_sort(flat, 0, false, &sorted, &perm) < 0) {
        goto done;
    }
    if (unique_runs(sorted, perm, values, inverse != NULL ? &flat_inverse : NULL, counts) < 0) {
        goto done;
    }
    if (inverse != NULL && (*inverse = reshaped(flat_inverse, input->ndim, input->sizes)) == NULL) {
        goto done;
    }
    rc = 0;
done:
    Py_XDECREF(flat);
    Py_XDECREF(sorted);
    Py_XDECREF(perm);
    Py_XDECREF(flat_inverse);
    return rc;
}

/* The helpers above may leave some outputs set when they fail: cleared here. */
int ct_unique(CtTensorObject *input, bool consecutive, int dim, CtTensorObject **values, CtTensorObject **inverse,
              CtTensorObject **counts)
{
    CtTensorObject **outs[3] = {values, inverse, counts};
    for (int i = 0; i < 3; i++) {
        if (outs[i] != NULL) {
            *outs[i] = NULL;
        }
    }
    int rc = dim >= 0 ? unique_dim(input, consecutive, dim, values, inverse, counts)
                      : unique_flat(input, consecutive, values, inverse, counts);
    for (int i = 0; i < 3 && rc < 0; i++) {
        if (outs[i] != NULL) {
            Py_CLEAR(*outs[i]);
        }
    }
    return rc;
}

/* ============================================================================================
 * isin: searchsorted of the elements in the sorted test elements (NaNs dropped: they match
 * nothing, and PyTorch's search does not order them)
 * ============================================================================================ */
static CtTensorObject *isin_impl(CtEwArg elements, CtEwArg test, bool invert)
{
    if ((elements.t != NULL && elements.t->dtype == CT_BOOL) || (test.t != NULL && test.t->dtype == CT_BOOL) ||
        (elements.t == NULL && elements.s.kind == CT_KIND_BOOL) || (test.t == NULL && test.s.kind == CT_KIND_BOOL)) {
        PyErr_SetString(PyExc_NotImplementedError, "Unsupported input type encountered for isin(): Bool");
        return NULL;
    }
    CtTensorObject *devs[2] = {elements.t != NULL ? elements.t : test.t, test.t != NULL ? test.t : elements.t};
    CtDevice device;
    if (ct_check_same_device(2, devs, false, &device) < 0) {
        return NULL;
    }
    CtEwArg args[2] = {elements, test};
    CtDType common = ct_result_type(2, args);
    CtTensorObject *e = NULL, *t = NULL, *flat = NULL, *sorted = NULL, *keep = NULL, *kept = NULL, *pos = NULL;
    CtTensorObject *clamped = NULL, *hits = NULL, *found = NULL, *result = NULL;
    if ((e = elements.t != NULL ? ct_to(elements.t, common, device, false)
                                : ct_scalar_tensor(&elements.s, common, device)) == NULL ||
        (t = test.t != NULL ? ct_to(test.t, common, device, false) : ct_scalar_tensor(&test.s, common, device)) ==
            NULL ||
        (flat = flattened(t)) == NULL || ct_sort(flat, 0, false, &sorted, NULL) < 0) {
        goto done;
    }
    if (ct_is_floating(common)) {
        if ((keep = ct_binary(CT_EW_EQ, sorted, sorted)) == NULL || (kept = ct_masked_select(sorted, keep)) == NULL) {
            goto done;
        }
        Py_SETREF(sorted, (CtTensorObject *)Py_NewRef(kept));
    }
    int64_t m = ct_numel(sorted);
    if (m == 0) {
        CtScalar v = {CT_KIND_BOOL, {.b = invert}};
        result = ct_full(e->ndim, e->sizes, &v, CT_BOOL, device);
        goto done;
    }
    CtScalar last = {CT_KIND_INT, {.i = m - 1}};
    if ((pos = ct_searchsorted(sorted, e, NULL, false, false, NULL)) == NULL ||
        (clamped = ct_binary_scalar(CT_EW_CLAMP_MAX, pos, &last)) == NULL ||
        (hits = ct_take(sorted, clamped)) == NULL ||
        (found = ct_binary(CT_EW_EQ, hits, e)) == NULL) {
        goto done;
    }
    result = invert ? ct_unary(CT_EW_LOGICAL_NOT, found) : (CtTensorObject *)Py_NewRef(found);
done:
    Py_XDECREF(e);
    Py_XDECREF(t);
    Py_XDECREF(flat);
    Py_XDECREF(sorted);
    Py_XDECREF(keep);
    Py_XDECREF(kept);
    Py_XDECREF(pos);
    Py_XDECREF(clamped);
    Py_XDECREF(hits);
    Py_XDECREF(found);
    return result;
}

/* ============================================================================================
 * Python wrappers
 * ============================================================================================ */
/* An optional tensor argument (None or absent: NULL). 0 or -1. */
static int optional_tensor_arg(PyObject *obj, const char *fname, const char *name, CtTensorObject **out)
{
    *out = NULL;
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (!CtTensor_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Tensor, not %s", fname, name, ct_type_name(obj));
        return -1;
    }
    *out = CT_TENSOR(obj);
    return 0;
}

static bool is_number(PyObject *obj) { return PyBool_Check(obj) || PyLong_Check(obj) || PyFloat_Check(obj); }

/* A tensor-or-Number argument as an elementwise operand. 0, or -1 (no exception: the caller
 * reports the invalid combination). */
static int tensor_or_number(PyObject *obj, CtEwArg *out)
{
    out->t = NULL;
    if (obj != NULL && CtTensor_Check(obj)) {
        out->t = CT_TENSOR(obj);
        return 0;
    }
    if (obj == NULL || !is_number(obj) || ct_scalar_from_object(obj, &out->s) < 0) {
        PyErr_Clear();
        return -1;
    }
    return 0;
}

/* TypeError "fname() received an invalid combination of arguments - got (Tensor, list), but
 * expected one of:\n" + overloads, as PyTorch's argument parser words it. */
static PyObject *invalid_combination(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                                     const char *overloads)
{
    char got[512];
    size_t len = 0;
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    got[0] = '\0';
    for (Py_ssize_t i = 0; i < nargs + nkw && len < sizeof(got) - 64; i++) {
        const char *sep = i > 0 ? ", " : "";
        const char *type = ct_type_name(args[i]);
        if (i < nargs) {
            len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s", sep, type);
        } else {
            const char *key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, i - nargs));
            len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s=%s", sep, key != NULL ? key : "?", type);
        }
    }
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "%s() received an invalid combination of arguments - got (%s), but expected one of:\n%s", fname, got,
                 overloads);
    return NULL;
}

/* --- searchsorted / bucketize -------------------------------------------------------------------- */
static int out_index_dtype_check(CtTensorObject *out, bool out_int32)
{
    if (out != NULL && out->dtype != (out_int32 ? CT_I32 : CT_I64)) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or Long(int64) "
                     "depending on whether out_int32 flag is True, but we got output tensor's dtype %s and out_int32 "
                     "flag is %s",
                     ct_scalar_type_name(out->dtype), out_int32 ? "True" : "False");
        return -1;
    }
    return 0;
}

static const char searchsorted_overloads[] =
    " * (Tensor sorted_sequence, Tensor input, *, bool out_int32 = False, bool right = False, str side = None, "
    "Tensor sorter = None, Tensor out = None)\n"
    " * (Tensor sorted_sequence, Number self, *, bool out_int32 = False, bool right = False, str side = None, "
    "Tensor sorter = None, Tensor out = None)\n";

static PyObject *py_searchsorted(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"sorted_sequence", "input", "*out_int32", "*right", "*side", "*sorter",
                                        "*out", NULL};
    PyObject *a[7];
    bool out_int32 = false, right = false;
    CtEwArg values;
    CtTensorObject *sorter, *out;
    if (ct_parse_args("searchsorted", args, nargs, kwnames, names, 2, a) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[0]) || tensor_or_number(a[1], &values) < 0) {
        return invalid_combination("searchsorted", args, nargs, kwnames, searchsorted_overloads);
    }
    if (ct_arg_bool(a[2], &out_int32) < 0 || ct_arg_bool(a[3], &right) < 0 ||
        optional_tensor_arg(a[5], "searchsorted", "sorter", &sorter) < 0 ||
        ct_arg_out(a[6], "searchsorted", &out) < 0) {
        return NULL;
    }
    if (a[4] != NULL && a[4] != Py_None) {
        const char *side = PyUnicode_Check(a[4]) ? PyUnicode_AsUTF8(a[4]) : NULL;
        if (side == NULL) {
            return invalid_combination("searchsorted", args, nargs, kwnames, searchsorted_overloads);
        }
        if (strcmp(side, "left") != 0 && strcmp(side, "right") != 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.searchsorted(): side can only be 'left' or 'right' but got %s", side);
            return NULL;
        }
        bool side_right = strcmp(side, "right") == 0;
        if (right && !side_right) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.searchsorted(): side and right can't be set to opposites, got side of %s while right "
                         "was True",
                         side);
            return NULL;
        }
        right = side_right;
    }
    if (out_index_dtype_check(out, out_int32) < 0) {
        return NULL;
    }
    CtTensorObject *r = ct_searchsorted(CT_TENSOR(a[0]), values.t, &values.s, out_int32, right, sorter);
    return ct_write_out(r, a[6], "searchsorted", CT_OUT_ANY, 0, NULL);
}

static PyObject *py_bucketize(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "boundaries", "*out_int32", "*right", "*out", NULL};
    PyObject *a[5];
    bool out_int32 = false, right = false;
    CtEwArg values;
    CtTensorObject *boundaries, *out;
    if (ct_parse_args("bucketize", args, nargs, kwnames, names, 2, a) < 0) {
        return NULL;
    }
    if (tensor_or_number(a[0], &values) < 0 || !CtTensor_Check(a[1])) {
        return invalid_combination(
            "bucketize", args, nargs, kwnames,
            " * (Tensor input, Tensor boundaries, *, bool out_int32 = False, bool right = False, Tensor out = None)\n"
            " * (Number self, Tensor boundaries, *, bool out_int32 = False, bool right = False)\n");
    }
    boundaries = CT_TENSOR(a[1]);
    if (ct_arg_bool(a[2], &out_int32) < 0 ||
        ct_arg_bool(a[3], &right) < 0 || ct_arg_out(a[4], "bucketize", &out) < 0 ||
        out_index_dtype_check(out, out_int32) < 0) {
        return NULL;
    }
    if (boundaries->ndim != 1) {
        PyErr_Format(PyExc_RuntimeError, "boundaries tensor must be 1 dimension, but got dim(%d)", boundaries->ndim);
        return NULL;
    }
    CtTensorObject *r = ct_searchsorted(boundaries, values.t, &values.s, out_int32, right, NULL);
    return ct_write_out(r, a[4], "bucketize", CT_OUT_ANY, 0, NULL);
}

/* --- bincount / histc ---------------------------------------------------------------------------- */
static PyObject *tensor_bincount(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"weights", "minlength", NULL};
    PyObject *a[2];
    CtTensorObject *weights;
    int64_t minlength = 0;
    if (ct_parse_args("bincount", args, nargs, kwnames, names, 0, a) < 0 ||
        optional_tensor_arg(a[0], "bincount", "weights", &weights) < 0 || ct_arg_int64(a[1], &minlength) < 0) {
        return NULL;
    }
    return (PyObject *)ct_bincount(CT_TENSOR(self), weights, minlength);
}

static PyObject *tensor_histc(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"bins", "min", "max", "*out", NULL};
    PyObject *a[4];
    int64_t bins = 100;
    CtScalar min = {CT_KIND_INT, {.i = 0}}, max = {CT_KIND_INT, {.i = 0}};
    CtTensorObject *out;
    if (ct_parse_args("histc", args, nargs, kwnames, names, 0, a) < 0 ||
        (a[0] != NULL && ct_int_arg("histc", "bins", 2, a[0], &bins) < 0) ||
        (a[1] != NULL && ct_number_arg("histc", "min", 3, a[1], &min) < 0) ||
        (a[2] != NULL && ct_number_arg("histc", "max", 4, a[2], &max) < 0) || ct_arg_out(a[3], "histc", &out) < 0) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    if (out != NULL && out->dtype != t->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.histogram: input tensor and hist tensor should have the same dtype, but got input %s and "
                     "hist %s",
                     cpp_float_name(t->dtype), cpp_float_name(out->dtype));
        return NULL;
    }
    double lo = min.kind == CT_KIND_FLOAT ? min.v.d : min.kind == CT_KIND_INT ? (double)min.v.i : (double)min.v.b;
    double hi = max.kind == CT_KIND_FLOAT ? max.v.d : max.kind == CT_KIND_INT ? (double)max.v.i : (double)max.v.b;
    return ct_write_out(ct_histc(t, bins, lo, hi), a[3], "histc", CT_OUT_ANY, 0, NULL);
}

/* --- unique / unique_consecutive ----------------------------------------------------------------- */
/* values, or a tuple (values[, inverse][, counts]) as PyTorch returns them. Steals all three. */
static PyObject *unique_result(CtTensorObject *values, CtTensorObject *inverse, CtTensorObject *counts)
{
    if (inverse == NULL && counts == NULL) {
        return (PyObject *)values;
    }
    if (inverse == NULL || counts == NULL) {
        return Py_BuildValue("(NN)", values, inverse != NULL ? inverse : counts);
    }
    return Py_BuildValue("(NNN)", values, inverse, counts);
}

static PyObject *unique_py(PyObject *self, bool consecutive, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    static const char *const unique_names[] = {"sorted", "return_inverse", "return_counts", "dim", NULL};
    static const char *const consecutive_names[] = {"return_inverse", "return_counts", "dim", NULL};
    const char *fname = consecutive ? "unique_consecutive" : "unique";
    PyObject *a[4];
    bool sorted = true, want_inverse = false, want_counts = false;
    PyObject **flags = consecutive ? a : a + 1;
    if (ct_parse_args(fname, args, nargs, kwnames, consecutive ? consecutive_names : unique_names, 0, a) < 0 ||
        (!consecutive && ct_arg_bool(a[0], &sorted) < 0) || ct_arg_bool(flags[0], &want_inverse) < 0 ||
        ct_arg_bool(flags[1], &want_counts) < 0) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    int dim = -1;
    PyObject *dim_obj = flags[2];
    if (dim_obj != NULL && dim_obj != Py_None) {
        int64_t d;
        if (PyFloat_Check(dim_obj) || !PyIndex_Check(dim_obj)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument 'dim' (position 2) must be int, not %s",
                         consecutive ? "unique_consecutive" : "unique_dim", ct_type_name(dim_obj));
            return NULL;
        }
        if (ct_arg_int64(dim_obj, &d) < 0) {
            return NULL;
        }
        if (t->ndim == 0) {
            PyErr_Format(PyExc_IndexError, "Dimension specified as %lld but tensor has no dimensions", (long long)d);
            return NULL;
        }
        if (ct_wrap_dim(d, t->ndim, &dim) < 0) {
            return NULL;
        }
    }
    /* sorted=False: PyTorch's CPU result comes sorted too; a sorted result is a valid one */
    CtTensorObject *values, *inverse = NULL, *counts = NULL;
    if (ct_unique(t, consecutive, dim, &values, want_inverse ? &inverse : NULL, want_counts ? &counts : NULL) < 0) {
        return NULL;
    }
    return unique_result(values, inverse, counts);
}

static PyObject *tensor_unique(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return unique_py(self, false, args, nargs, kwnames);
}

static PyObject *tensor_unique_consecutive(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return unique_py(self, true, args, nargs, kwnames);
}

/* --- isin ------------------------------------------------------------------------------------------ */
static PyObject *py_isin(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"elements", "test_elements", "*assume_unique", "*invert", "*out", NULL};
    static const char overloads[] =
        " * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, bool invert = False, Tensor out = "
        "None)\n"
        " * (Number element, Tensor test_elements, *, bool assume_unique = False, bool invert = False, Tensor out = "
        "None)\n"
        " * (Tensor elements, Number test_element, *, bool assume_unique = False, bool invert = False, Tensor out = "
        "None)\n";
    PyObject *a[5];
    bool assume_unique = false, invert = false;
    CtEwArg elements, test;
    CtTensorObject *out;
    if (ct_parse_args("isin", args, nargs, kwnames, names, 2, a) < 0) {
        return NULL;
    }
    if (tensor_or_number(a[0], &elements) < 0 || tensor_or_number(a[1], &test) < 0 ||
        (elements.t == NULL && test.t == NULL)) {
        return invalid_combination("isin", args, nargs, kwnames, overloads);
    }
    /* assume_unique only lets PyTorch skip work: the answer is the same */
    if (ct_arg_bool(a[2], &assume_unique) < 0 || ct_arg_bool(a[3], &invert) < 0 || ct_arg_out(a[4], "isin", &out) < 0) {
        return NULL;
    }
    return ct_write_out(isin_impl(elements, test, invert), a[4], "isin", CT_OUT_EXACT, 0, NULL);
}

/* --- tables ------------------------------------------------------------------------------------------ */
CT_FUNCTION_FROM_METHOD(bincount, tensor_bincount)
CT_FUNCTION_FROM_METHOD(histc, tensor_histc)
CT_FUNCTION_FROM_METHOD(unique, tensor_unique)
CT_FUNCTION_FROM_METHOD(unique_consecutive, tensor_unique_consecutive)

#define CT_M(name, doc) {#name, CT_FASTCALL(tensor_##name), CT_METH_FK, doc}

PyMethodDef ct_search_tensor_methods[] = {
    CT_M(bincount, "bincount(weights=None, minlength=0): occurrences of each value of a 1-d int tensor"),
    CT_M(histc, "histc(bins=100, min=0, max=0): histogram of equal-width bins"),
    CT_M(unique, "unique(sorted=True, return_inverse=False, return_counts=False, dim=None)"),
    CT_M(unique_consecutive, "unique_consecutive(return_inverse=False, return_counts=False, dim=None)"),
    {NULL},
};

#define CT_F(name, doc) {#name, CT_FASTCALL(py_##name), CT_METH_FK, doc}
#define CT_FM(name, doc) {#name, CT_FASTCALL(function_##name), CT_METH_FK, doc}

PyMethodDef ct_search_module_methods[] = {
    CT_F(searchsorted, "searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, "
                       "sorter=None, out=None): insertion positions that keep each line sorted"),
    CT_F(bucketize, "bucketize(input, boundaries, *, out_int32=False, right=False, out=None): bucket indices"),
    CT_FM(bincount, "bincount(input, weights=None, minlength=0)"),
    CT_FM(histc, "histc(input, bins=100, min=0, max=0, *, out=None)"),
    CT_FM(unique, "unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None)"),
    CT_FM(unique_consecutive, "unique_consecutive(input, return_inverse=False, return_counts=False, dim=None)"),
    CT_F(isin, "isin(elements, test_elements, *, assume_unique=False, invert=False, out=None)"),
    {NULL},
};

PyType_Slot ct_search_tensor_slots[] = {{0, NULL}};
