/* clip.c: the numerics of nn.utils.clip_grad_norm_ (optim.h's CtGradNormDesc, clip_math.h):
 * _C._total_norm (nn.utils.get_total_norm) and _C._clip_grads_with_norm_ (nn.utils.clip_grads_with_
 * norm_), and the CPU kernels.
 *
 * The front ends group the tensors by device and hand each group to the device's
 * CtOptimKernels.total_norm / scale_by_norm in one call (one multi-tensor pass on CUDA, the total
 * staying on the device, so clipping needs no host wait unless error_if_nonfinite asks for the
 * total's value or the tensors span several devices). Tensors that are not contiguous are computed
 * in contiguous copies (copied back after scaling).
 *
 * CPU: the tensors' elements are split into chunks of kClipChunk; each chunk's partial is computed
 * on the thread pool, then combined in chunk order, so the total does not depend on the thread
 * count. */
#include "optim.h"
#include "clip_math.h"
#include "args.h"
#include "autograd.h"
#include "device.h"
#include "dtype.h"
#include "elementwise.h"
#include "parallel.h"
#include "registry.h"
#include "tensor.h"
#include <math.h>
#include <string.h>

#define CT_CLIP_CHUNK 32768

#define CT_CLIP_FLOAT_TYPES(X) X(F16) X(BF16) X(F32) X(F64)

/* --- CPU kernels ------------------------------------------------------------------------------------ */
typedef struct {
    const CtGradNormDesc *d;
    const int64_t *chunk_start; /* first chunk of each tensor, plus the total at the end */
    double *partial;            /* one per chunk */
    double coef;                /* scale_by_norm */
} ClipCtx;

static int64_t chunks_of(const CtTensorObject *t) { return (ct_numel(t) + CT_CLIP_CHUNK - 1) / CT_CLIP_CHUNK; }

/* The tensor owning chunk c, and the chunk's element range in it. */
static CtTensorObject *chunk_range(const ClipCtx *cx, int64_t c, int64_t *begin, int64_t *end)
{
    int64_t lo = 0, hi = cx->d->n - 1;
    while (lo < hi) { /* the last tensor whose first chunk is <= c (empty tensors own no chunk) */
        int64_t mid = (lo + hi + 1) / 2;
        if (cx->chunk_start[mid] <= c) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    CtTensorObject *t = cx->d->tensors[lo];
    *begin = (c - cx->chunk_start[lo]) * CT_CLIP_CHUNK;
    *end = *begin + CT_CLIP_CHUNK < ct_numel(t) ? *begin + CT_CLIP_CHUNK : ct_numel(t);
    return t;
}

static void fold_chunks(int64_t first, int64_t last, void *p)
{
    ClipCtx *cx = (ClipCtx *)p;
    const double norm_type = cx->d->norm_type;
    const CtClipKind k = ct_clip_kind(norm_type);
    for (int64_t c = first; c < last; c++) {
        int64_t b, e;
        CtTensorObject *t = chunk_range(cx, c, &b, &e);
        const char *base = ct_data(t);
        double acc = ct_clip_init(k);
        switch (t->dtype) {
#define CT_CLIP_FOLD(NAME)                                                                         \
    case CT_##NAME:                                                                                \
        for (int64_t i = b; i < e; i++) {                                                          \
            acc = ct_clip_acc(k, norm_type, acc, (double)CT_LOAD_##NAME(base + i * ct_itemsize(t))); \
        }                                                                                          \
        break;
            CT_CLIP_FLOAT_TYPES(CT_CLIP_FOLD)
#undef CT_CLIP_FOLD
        default:
            break;
        }
        cx->partial[c] = acc;
    }
}

static void scale_chunks(int64_t first, int64_t last, void *p)
{
    ClipCtx *cx = (ClipCtx *)p;
    for (int64_t c = first; c < last; c++) {
        int64_t b, e;
        CtTensorObject *t = chunk_range(cx, c, &b, &e);
        char *base = ct_data(t);
        size_t isz = ct_itemsize(t);
        switch (t->dtype) {
#define CT_CLIP_SCALE(NAME)                                                   \
    case CT_##NAME:                                                           \
        for (int64_t i = b; i < e; i++) {                                     \
            CT_STORE_##NAME(base + i * isz, CT_LOAD_##NAME(base + i * isz) * cx->coef); \
        }                                                                     \
        break;
            CT_CLIP_FLOAT_TYPES(CT_CLIP_SCALE)
#undef CT_CLIP_SCALE
        default:
            break;
        }
    }
}

/* chunk_start of each tensor (n + 1 entries, PyMem_Raw), or NULL with MemoryError. */
static int64_t *chunk_starts(const CtGradNormDesc *d)
{
    int64_t *starts = PyMem_RawMalloc(sizeof(int64_t) * (size_t)(d->n + 1));
    if (starts == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    starts[0] = 0;
    for (int64_t i = 0; i < d->n; i++) {
        starts[i + 1] = starts[i] + chunks_of(d->tensors[i]);
    }
    return starts;
}

static double load_double(CtDType dtype, const void *p)
{
    switch (dtype) {
#define CT_CLIP_LOAD(NAME) \
    case CT_##NAME:        \
        return (double)CT_LOAD_##NAME(p);
        CT_CLIP_FLOAT_TYPES(CT_CLIP_LOAD)
#undef CT_CLIP_LOAD
    default:
        return NAN;
    }
}

static void store_double(CtDType dtype, void *p, double v)
{
    switch (dtype) {
#define CT_CLIP_STORE(NAME)      \
    case CT_##NAME:              \
        CT_STORE_##NAME(p, v);   \
        break;
        CT_CLIP_FLOAT_TYPES(CT_CLIP_STORE)
#undef CT_CLIP_STORE
    default:
        break;
    }
}

int ct_cpu_total_norm(const CtGradNormDesc *d)
{
    int64_t *starts = chunk_starts(d);
    if (starts == NULL) {
        return -1;
    }
    int64_t nchunks = starts[d->n];
    ClipCtx cx = {d, starts, PyMem_RawMalloc(sizeof(double) * (size_t)(nchunks + 1)), 0.0};
    if (cx.partial == NULL) {
        PyMem_RawFree(starts);
        PyErr_NoMemory();
        return -1;
    }
    ct_parallel_for(nchunks, 1, fold_chunks, &cx);
    const CtClipKind k = ct_clip_kind(d->norm_type);
    double total = ct_clip_init(k);
    for (int64_t i = 0; i < d->n; i++) {
        double v = ct_clip_init(k);
        for (int64_t c = starts[i]; c < starts[i + 1]; c++) {
            v = ct_clip_combine(k, v, cx.partial[c]);
        }
        total = ct_clip_combine(k, total, ct_clip_of_tensor(k, v));
    }
    store_double(d->total_dtype, d->total, ct_clip_finish(k, d->norm_type, total));
    PyMem_RawFree(cx.partial);
    PyMem_RawFree(starts);
    return 0;
}

int ct_cpu_scale_by_norm(const CtGradNormDesc *d)
{
    int64_t *starts = chunk_starts(d);
    if (starts == NULL) {
        return -1;
    }
    ClipCtx cx = {d, starts, NULL, ct_scale_coef(d->by_total, d->max_norm, load_double(d->total_dtype, d->total))};
    ct_parallel_for(starts[d->n], 1, scale_chunks, &cx);
    PyMem_RawFree(starts);
    return 0;
}

/* --- front ends ------------------------------------------------------------------------------------------ */
/* The tensors of a list argument, one device group after another; contiguous copies stand in for
 * the others. Released by tensor_list_free. */
typedef struct {
    Py_ssize_t n;
    CtTensorObject **orig;  /* borrowed: the caller's tensors, in device-group order */
    CtTensorObject **dense; /* owned: contiguous (orig itself, or a copy) */
    Py_ssize_t ngroups;
    Py_ssize_t *group_start; /* ngroups + 1 */
    CtDType dtype;           /* the promoted dtype of all */
} TensorList;

static void tensor_list_free(TensorList *l)
{
    for (Py_ssize_t i = 0; l->dense != NULL && i < l->n; i++) {
        Py_XDECREF(l->dense[i]);
    }
    PyMem_Free(l->orig);
    PyMem_Free(l->dense);
    PyMem_Free(l->group_start);
    memset(l, 0, sizeof(*l));
}

static int tensor_list_init(TensorList *l, PyObject *obj, const char *fname)
{
    memset(l, 0, sizeof(*l));
    PyObject *seq = PySequence_Fast(obj, "expected a sequence of Tensors");
    if (seq == NULL) {
        return -1;
    }
    int rc = -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    l->n = n;
    l->orig = PyMem_Calloc((size_t)n + 1, sizeof(CtTensorObject *));
    l->dense = PyMem_Calloc((size_t)n + 1, sizeof(CtTensorObject *));
    l->group_start = PyMem_Calloc((size_t)n + 2, sizeof(Py_ssize_t));
    bool *taken = PyMem_Calloc((size_t)n + 1, sizeof(bool));
    if (l->orig == NULL || l->dense == NULL || l->group_start == NULL || taken == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PySequence_Fast_GET_ITEM(seq, i);
        if (!CtTensor_Check(e)) {
            PyErr_Format(PyExc_TypeError, "%s(): expected a sequence of Tensors, but element %zd is %s", fname, i,
                         Py_TYPE(e)->tp_name);
            goto done;
        }
        CtTensorObject *t = CT_TENSOR(e);
        if (!ct_is_floating(t->dtype)) {
            PyErr_Format(PyExc_NotImplementedError,
                         "linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s",
                         ct_dtype_info[t->dtype].name);
            goto done;
        }
        l->dtype = i == 0 ? t->dtype : ct_promote_types(l->dtype, t->dtype);
    }
    /* device groups in order of first appearance, each keeping the list's order */
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (taken[i]) {
            continue;
        }
        CtDevice dev = ct_device_of(CT_TENSOR(PySequence_Fast_GET_ITEM(seq, i)));
        l->group_start[l->ngroups++] = k;
        for (Py_ssize_t j = i; j < n; j++) {
            CtTensorObject *t = CT_TENSOR(PySequence_Fast_GET_ITEM(seq, j));
            if (!taken[j] && ct_device_equal(ct_device_of(t), dev)) {
                taken[j] = true;
                l->orig[k] = t;
                l->dense[k] = ct_is_contiguous(t) ? (CtTensorObject *)Py_NewRef(t) : ct_contiguous(t);
                if (l->dense[k++] == NULL) {
                    goto done;
                }
            }
        }
    }
    l->group_start[l->ngroups] = n;
    rc = 0;
done:
    PyMem_Free(taken);
    Py_DECREF(seq);
    if (rc < 0) {
        tensor_list_free(l);
    }
    return rc;
}

/* The optimizer kernels of a device (borrowed), NULL with an exception set. */
static const struct CtOptimKernels *optim_kernels(CtDevice dev)
{
    const CtDeviceOps *ops = ct_device_ops(dev);
    if (ops == NULL) {
        return NULL;
    }
    if (ops->optim == NULL || ops->optim->total_norm == NULL || ops->optim->scale_by_norm == NULL) {
        PyErr_Format(PyExc_NotImplementedError, "ctorch: gradient clipping kernels are not available on %s", ops->name);
        return NULL;
    }
    return ops->optim;
}

/* A 0-d tensor of dtype on device holding the total norm of group g. New reference. */
static CtTensorObject *group_total(const TensorList *l, Py_ssize_t g, double norm_type, CtDType dtype)
{
    CtTensorObject **ts = l->dense + l->group_start[g];
    CtDevice dev = ct_device_of(ts[0]);
    const struct CtOptimKernels *k = optim_kernels(dev);
    CtTensorObject *out = k ? ct_empty(0, NULL, dtype, dev) : NULL;
    if (out == NULL) {
        return NULL;
    }
    CtGradNormDesc d = {.n = l->group_start[g + 1] - l->group_start[g], .tensors = ts, .norm_type = norm_type,
                        .total = ct_data(out), .total_dtype = dtype};
    if (k->total_norm(&d) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

static double tensor_value(CtTensorObject *t, int *failed)
{
    CtScalar s;
    if (ct_item(t, &s) < 0) {
        *failed = 1;
        return NAN;
    }
    return ct_scalar_to_double(&s);
}

/* The total over several devices: each device's total read back (one host wait per device), combined
 * in double, written into a 0-d tensor on the first device. New reference. */
static CtTensorObject *multi_device_total(const TensorList *l, double norm_type)
{
    CtClipKind k = ct_clip_kind(norm_type);
    double total = ct_clip_init(k);
    int failed = 0;
    for (Py_ssize_t g = 0; g < l->ngroups && !failed; g++) {
        CtTensorObject *t = group_total(l, g, norm_type, CT_F64);
        double v = t ? tensor_value(t, &failed) : (failed = 1, NAN);
        Py_XDECREF(t);
        /* undo the finish of a p-norm: its p-th power is what sums over devices */
        v = k == CT_CLIP_SUM_POW ? (norm_type == 1.0 ? v : norm_type == 2.0 ? v * v : pow(v, norm_type)) : v;
        total = ct_clip_combine(k, total, v);
    }
    if (failed) {
        return NULL;
    }
    CtScalar s = {.kind = CT_KIND_FLOAT, .v.d = ct_clip_finish(k, norm_type, total)};
    return ct_scalar_tensor(&s, l->dtype, ct_device_of(l->dense[0]));
}

static int check_nonfinite(CtTensorObject *total, double norm_type)
{
    int failed = 0;
    double v = tensor_value(total, &failed);
    if (failed) {
        return -1;
    }
    if (!isfinite(v)) {
        char *order = PyOS_double_to_string(norm_type, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
        if (order == NULL) {
            return -1;
        }
        PyErr_Format(PyExc_RuntimeError,
                     "The total norm of order %s for gradients from `parameters` is non-finite, so it cannot be "
                     "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
                     "`error_if_nonfinite=False`",
                     order);
        PyMem_Free(order);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(total_norm_doc, "_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False) -> Tensor\n\n"
                             "The norm_type-norm of the tensors' norms (nn.utils.get_total_norm): a 0-d tensor of "
                             "their promoted dtype on the first tensor's device; tensor(0.) for an empty list.");
static PyObject *py_total_norm(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"tensors", "norm_type", "error_if_nonfinite", NULL};
    const char *fname = "_total_norm";
    PyObject *a[3];
    double norm_type = 2.0;
    bool error_if_nonfinite = false;
    TensorList l;
    CtTensorObject *total = NULL;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0 || ct_arg_double(a[1], &norm_type) < 0 ||
        ct_arg_bool(a[2], &error_if_nonfinite) < 0 || tensor_list_init(&l, a[0], fname) < 0) {
        return NULL;
    }
    if (l.n == 0) {
        CtScalar zero = {.kind = CT_KIND_FLOAT, .v.d = 0.0};
        total = ct_scalar_tensor(&zero, CT_F32, ct_cpu());
    } else {
        total = l.ngroups == 1 ? group_total(&l, 0, norm_type, l.dtype) : multi_device_total(&l, norm_type);
    }
    if (total != NULL && error_if_nonfinite && check_nonfinite(total, norm_type) < 0) {
        Py_CLEAR(total);
    }
    tensor_list_free(&l);
    return (PyObject *)total;
}

PyDoc_STRVAR(clip_grads_with_norm_doc,
             "_clip_grads_with_norm_(tensors, max_norm, total_norm) -> None\n\n"
             "Multiplies every tensor in place by min(max_norm / (total_norm + 1e-6), 1) (nn.utils."
             "clip_grads_with_norm_), total_norm being read on the tensors' device.");
static PyObject *py_clip_grads_with_norm(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"tensors", "max_norm", "total_norm", NULL};
    const char *fname = "_clip_grads_with_norm_";
    PyObject *a[3];
    double max_norm = 0.0;
    TensorList l;
    CtTensorObject *total = NULL;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 3, a) < 0 || ct_arg_double(a[1], &max_norm) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[2]) || ct_numel(CT_TENSOR(a[2])) != 1 || !ct_is_floating(CT_TENSOR(a[2])->dtype)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'total_norm' must be a one-element floating point Tensor, not %s",
                     fname, CtTensor_Check(a[2]) ? "a Tensor of another shape or dtype" : Py_TYPE(a[2])->tp_name);
        return NULL;
    }
    if (tensor_list_init(&l, a[0], fname) < 0) {
        return NULL;
    }
    PyObject *result = NULL;
    for (Py_ssize_t g = 0; g < l.ngroups; g++) {
        CtTensorObject **ts = l.dense + l.group_start[g];
        CtDevice dev = ct_device_of(ts[0]);
        const struct CtOptimKernels *k = optim_kernels(dev);
        /* the total as a dense element on this device (a copy when it lives elsewhere) */
        total = k ? ct_to_format(CT_TENSOR(a[2]), CT_TENSOR(a[2])->dtype, dev, false, false, true) : NULL;
        if (total == NULL) {
            goto done;
        }
        CtGradNormDesc d = {.n = l.group_start[g + 1] - l.group_start[g], .tensors = ts, .max_norm = max_norm,
                            .total = ct_data(total), .total_dtype = total->dtype};
        if (k->scale_by_norm(&d) < 0) {
            goto done;
        }
        Py_CLEAR(total);
    }
    for (Py_ssize_t i = 0; i < l.n; i++) {
        if (l.dense[i] != l.orig[i] && ct_copy_(l.orig[i], l.dense[i]) < 0) {
            goto done;
        }
        ct_bump_version(l.orig[i]);
    }
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(total);
    tensor_list_free(&l);
    return result;
}

/* --- GradScaler's unscale ------------------------------------------------------------------------------ */
static int check_amp_scalar(PyObject *o, const char *what)
{
    if (!CtTensor_Check(o)) {
        PyErr_Format(PyExc_TypeError, "_amp_foreach_non_finite_check_and_unscale_(): %s must be a Tensor, not %s", what,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    if (ct_numel(CT_TENSOR(o)) != 1) {
        PyErr_Format(PyExc_RuntimeError, "%s must be a 1-element tensor.", what);
        return -1;
    }
    if (CT_TENSOR(o)->dtype != CT_F32) {
        PyErr_Format(PyExc_RuntimeError, "%s must be a float tensor.", what);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(amp_unscale_doc,
             "_amp_foreach_non_finite_check_and_unscale_(self, found_inf, inv_scale) -> None\n\n"
             "GradScaler's unscale: sets found_inf to 1.0 when any element of the tensors is inf or NaN, then "
             "multiplies every tensor by inv_scale in place. All on one device, read there: one pass for the "
             "check (the max-norm, NaN-propagating) and one multi-tensor pass for the scaling, no host wait.");
static PyObject *py_amp_unscale(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"self", "found_inf", "inv_scale", NULL};
    const char *fname = "_amp_foreach_non_finite_check_and_unscale_";
    PyObject *a[3];
    TensorList l;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 3, a) < 0 || check_amp_scalar(a[1], "found_inf") < 0 ||
        check_amp_scalar(a[2], "inv_scale") < 0) {
        return NULL;
    }
    PyObject *seq = PySequence_Fast(a[0], "expected a sequence of Tensors");
    for (Py_ssize_t i = 0; seq != NULL && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *e = PySequence_Fast_GET_ITEM(seq, i);
        if (CtTensor_Check(e) && !ct_is_floating(CT_TENSOR(e)->dtype)) {
            PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", fname,
                         ct_scalar_type_name(CT_TENSOR(e)->dtype));
            Py_CLEAR(seq);
        }
    }
    if (seq == NULL || tensor_list_init(&l, seq, fname) < 0) {
        Py_XDECREF(seq);
        return NULL;
    }
    Py_DECREF(seq);
    PyObject *result = NULL;
    CtTensorObject *total = NULL;
    PyObject *finite = NULL, *flagged = NULL;
    CtTensorObject *all[3] = {CT_TENSOR(a[1]), CT_TENSOR(a[2]), l.n > 0 ? l.orig[0] : CT_TENSOR(a[1])};
    CtDevice dev;
    if (l.ngroups > 1 || ct_check_same_device(3, all, false, &dev) < 0) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_RuntimeError, "%s: the tensors must all be on one device, found_inf's and inv_scale's",
                         fname);
        }
        goto done;
    }
    if (l.n > 0) {
        const struct CtOptimKernels *k = optim_kernels(dev);
        /* the check before the scaling (a finite value may overflow once scaled) */
        total = k != NULL ? group_total(&l, 0, INFINITY, CT_F64) : NULL;
        if (total == NULL) {
            goto done;
        }
        CtGradNormDesc d = {.n = l.n, .tensors = l.dense, .by_total = true, .total = ct_data(CT_TENSOR(a[2])),
                            .total_dtype = CT_F32};
        if (k->scale_by_norm(&d) < 0) {
            goto done;
        }
        for (Py_ssize_t i = 0; i < l.n; i++) {
            if (l.dense[i] != l.orig[i] && ct_copy_(l.orig[i], l.dense[i]) < 0) {
                goto done;
            }
            ct_bump_version(l.orig[i]);
        }
        /* found_inf = isfinite(total) ? found_inf : 1 */
        PyObject *one = PyFloat_FromDouble(1.0);
        finite = one != NULL ? ct_call_method((PyObject *)total, "isfinite", NULL) : NULL;
        PyObject *wargs[3] = {finite, a[1], one};
        flagged = finite != NULL ? ct_op("where", wargs, 3, NULL) : NULL;
        Py_XDECREF(one);
        if (flagged == NULL || ct_copy_(CT_TENSOR(a[1]), CT_TENSOR(flagged)) < 0) {
            goto done;
        }
        ct_bump_version(CT_TENSOR(a[1]));
    }
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(total);
    Py_XDECREF(finite);
    Py_XDECREF(flagged);
    tensor_list_free(&l);
    return result;
}

PyMethodDef ct_clip_module_methods[] = {
    {"_amp_foreach_non_finite_check_and_unscale_", CT_FASTCALL(py_amp_unscale), CT_METH_FK, amp_unscale_doc},
    {"_total_norm", CT_FASTCALL(py_total_norm), CT_METH_FK, total_norm_doc},
    {"_clip_grads_with_norm_", CT_FASTCALL(py_clip_grads_with_norm), CT_METH_FK, clip_grads_with_norm_doc},
    {NULL},
};
PyMethodDef ct_clip_tensor_methods[] = {{NULL}};
PyType_Slot ct_clip_tensor_slots[] = {{0, NULL}};
