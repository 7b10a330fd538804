/* tensor.c: the ctorch.Tensor type: construction, lifetime, attributes and the methods that
 * only read or convert metadata (size, stride, to, clone, item, ...). Op families add their
 * methods and slots through registry.h. */
#include "tensor.h"
#include "args.h"
#include "autograd.h"
#include "creation.h"
#include "cuda_loader.h"
#include "device.h"
#include "elementwise.h" /* ct_can_cast */
#include "iter.h"
#include "legacy_types.h"
#include "namespace.h"
#include "registry.h"
#include "storage.h"
#include "views.h"
#include <string.h>
#include <structmember.h>

PyTypeObject *CtTensor_Type;
static PyObject *size_class; /* ctorch.Size, set by the Python package */

/* --- construction -------------------------------------------------------------------------- */
CtTensorObject *ct_tensor_new(CtStorageObject *storage, int64_t offset, int ndim, const int64_t *sizes,
                              const int64_t *strides, CtDType dtype)
{
    if (ndim > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions, got %d", CT_MAX_DIMS, ndim);
        return NULL;
    }
    CtTensorObject *t = PyObject_GC_New(CtTensorObject, CtTensor_Type);
    if (t == NULL) {
        return NULL;
    }
    t->storage = (CtStorageObject *)Py_NewRef(storage);
    t->offset = offset;
    t->ndim = ndim;
    t->dtype = dtype;
    if (ndim > 0) {
        memcpy(t->sizes, sizes, sizeof(int64_t) * ndim);
        memcpy(t->strides, strides, sizeof(int64_t) * ndim);
    }
    t->requires_grad = false;
    t->retains_grad = false;
    t->output_nr = 0;
    t->grad = NULL;
    t->grad_fn = NULL;
    t->hooks = NULL;
    t->grad_accumulator = NULL;
    t->view_base = NULL;
    t->view_version = 0;
    t->view_no_grad = false;
    t->weakreflist = NULL;
    PyObject_GC_Track(t);
    return t;
}

int64_t ct_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides)
{
    int64_t n = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = n;
        n *= sizes[i] > 0 ? sizes[i] : 1;
    }
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) {
            return 0;
        }
    }
    return n;
}

int ct_storage_nbytes_needed(int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset, size_t itemsize,
                             int64_t *nbytes)
{
    int64_t extent = 1; /* elements from offset to one past the furthest one */
    bool overflow = offset < 0;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) { /* no elements: any strides, no storage needed (PyTorch's computeStorageNbytes) */
            *nbytes = 0;
            return 0;
        }
    }
    for (int i = 0; i < ndim; i++) {
        int64_t span;
        overflow = overflow || strides[i] < 0 || __builtin_mul_overflow(sizes[i] > 0 ? sizes[i] - 1 : 0, strides[i], &span) ||
                   __builtin_add_overflow(extent, span, &extent);
    }
    overflow = overflow || __builtin_add_overflow(extent, offset, &extent) ||
               __builtin_mul_overflow(extent, (int64_t)itemsize, nbytes);
    if (overflow) {
        char sbuf[256], tbuf[256];
        ct_format_sizes(sbuf, sizeof(sbuf), ndim, sizes);
        ct_format_sizes(tbuf, sizeof(tbuf), ndim, strides);
        PyErr_Format(PyExc_RuntimeError, "Storage size calculation overflowed with sizes=%s and strides=%s", sbuf, tbuf);
        return -1;
    }
    return 0;
}

int ct_contiguous_nbytes(int ndim, const int64_t *sizes, size_t itemsize, int64_t *nbytes)
{
    uint64_t numel = 1;
    int overflow = 0;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            char buf[256];
            ct_format_sizes(buf, sizeof(buf), ndim, sizes);
            PyErr_Format(PyExc_RuntimeError, "Trying to create tensor with negative dimension %lld: %s",
                         (long long)sizes[i], buf);
            return -1;
        }
        if (sizes[i] != 0 && numel > (uint64_t)INT64_MAX / (uint64_t)sizes[i]) {
            overflow = 1;
        }
        numel *= (uint64_t)sizes[i];
    }
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) {
            overflow = 0;
        }
    }
    if (overflow || numel > (uint64_t)INT64_MAX / itemsize) {
        char buf[256];
        ct_format_sizes(buf, sizeof(buf), ndim, sizes);
        PyErr_Format(PyExc_RuntimeError, "Storage size calculation overflowed with sizes=%s", buf);
        return -1;
    }
    *nbytes = (int64_t)(numel * itemsize);
    return 0;
}

CtTensorObject *ct_empty(int ndim, const int64_t *sizes, CtDType dtype, CtDevice device)
{
    int64_t strides[CT_MAX_DIMS], nbytes;
    if (ndim > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions, got %d", CT_MAX_DIMS, ndim);
        return NULL;
    }
    if (ct_contiguous_nbytes(ndim, sizes, ct_dtype_info[dtype].itemsize, &nbytes) < 0) {
        return NULL;
    }
    ct_contiguous_strides(ndim, sizes, strides);
    CtStorageObject *s = ct_storage_new((size_t)nbytes, device);
    if (s == NULL) {
        return NULL;
    }
    CtTensorObject *t = ct_tensor_new(s, 0, ndim, sizes, strides, dtype);
    Py_DECREF(s);
    return t;
}

CtTensorObject *ct_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides, CtDType dtype,
                                 CtDevice device)
{
    CtTensorObject *t = ct_empty(ndim, sizes, dtype, device);
    if (t != NULL) {
        memcpy(t->strides, strides, sizeof(int64_t) * ndim); /* dense: the same storage fits */
    }
    return t;
}

CtTensorObject *ct_empty_like(const CtTensorObject *t, CtDType dtype)
{
    return ct_empty(t->ndim, t->sizes, dtype, ct_device_of(t));
}

CtTensorObject *ct_view_of(const CtTensorObject *base, int ndim, const int64_t *sizes, const int64_t *strides,
                           int64_t offset)
{
    return ct_tensor_new(base->storage, offset, ndim, sizes, strides, base->dtype);
}

/* --- metadata helpers ------------------------------------------------------------------------ */
bool ct_is_contiguous(const CtTensorObject *t)
{
    int64_t expected = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] == 0) {
            return true;
        }
        if (t->sizes[i] != 1 && t->strides[i] != expected) {
            return ct_numel(t) == 0; /* PyTorch: without elements, contiguous whatever the strides */
        }
        expected *= t->sizes[i];
    }
    return true;
}

int ct_wrap_dim(int64_t dim, int ndim, int *out)
{
    int n = ndim > 0 ? ndim : 1; /* a 0-d tensor accepts dim 0 and -1 */
    if (dim < -n || dim >= n) {
        PyErr_Format(PyExc_IndexError, "Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                     -n, n - 1, (long long)dim);
        return -1;
    }
    *out = (int)(dim < 0 ? dim + n : dim);
    return 0;
}

int ct_resize_output(CtTensorObject *out, int ndim, const int64_t *shape)
{
    return ct_resize_output_ex(out, ndim, shape, true);
}

int ct_resize_output_ex(CtTensorObject *out, int ndim, const int64_t *shape, bool warn)
{
    if (warn && ct_numel(out) != 0) {
        char a[256], b[256];
        ct_format_sizes(a, sizeof(a), out->ndim, out->sizes);
        ct_format_sizes(b, sizeof(b), ndim, shape);
        if (PyErr_WarnFormat(PyExc_UserWarning, 1,
                             "An output with one or more elements was resized since it had shape %s, which does not "
                             "match the required output shape %s. This behavior is deprecated, and in a future "
                             "PyTorch release outputs will not be resized unless they have zero elements. You can "
                             "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                             "t.resize_(0).",
                             a, b) < 0) {
            return -1;
        }
    }
    CtTensorObject *fresh = ct_empty(ndim, shape, out->dtype, ct_device_of(out));
    if (fresh == NULL) {
        return -1;
    }
    Py_SETREF(out->storage, (CtStorageObject *)Py_NewRef(fresh->storage));
    out->offset = 0;
    out->ndim = ndim;
    memcpy(out->sizes, fresh->sizes, sizeof(out->sizes));
    memcpy(out->strides, fresh->strides, sizeof(out->strides));
    Py_DECREF(fresh);
    return 0;
}

/* The C++ type names PyTorch's out= dtype errors print. */
static const char *typeid_name(CtDType d)
{
    static const char *const names[CT_NUM_DTYPES] = {
        [CT_F32] = "float",     [CT_F64] = "double",       [CT_F16] = "c10::Half",   [CT_BF16] = "c10::BFloat16",
        [CT_I64] = "long int",  [CT_I32] = "int",          [CT_I16] = "short int",   [CT_I8] = "signed char",
        [CT_U8] = "unsigned char", [CT_BOOL] = "bool"};
    return names[d];
}

/* out= handling shared by ops outside the elementwise family (see tensor.h) */
int ct_arg_out(PyObject *obj, const char *fname, CtTensorObject **out)
{
    *out = NULL;
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (!CtTensor_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'out' must be Tensor, not %s", fname, Py_TYPE(obj)->tp_name);
        return -1;
    }
    *out = CT_TENSOR(obj);
    return 0;
}

int ct_check_no_internal_overlap(const CtTensorObject *t)
{
    for (int d = 0; d < t->ndim; d++) {
        if (t->strides[d] == 0 && t->sizes[d] > 1) {
            PyErr_SetString(PyExc_RuntimeError,
                            "unsupported operation: more than one element of the written-to tensor refers to a single "
                            "memory location. Please clone() the tensor before performing the operation.");
            return -1;
        }
    }
    return 0;
}

PyObject *ct_write_out(CtTensorObject *r, PyObject *out_obj, const char *fname, CtOutRule rule, Py_ssize_t n,
                       CtTensorObject *const *ts)
{
    if (r == NULL || out_obj == NULL || out_obj == Py_None) {
        return (PyObject *)r;
    }
    PyObject *result = NULL;
    CtTensorObject *out;
    bool allow_expanded = (rule & CT_OUT_ALLOW_EXPANDED) != 0;
    rule = (CtOutRule)(rule & ~CT_OUT_ALLOW_EXPANDED);
    if (ct_arg_out(out_obj, fname, &out) < 0) {
        goto done;
    }
    if (rule == CT_OUT_CAST && !ct_can_cast(r->dtype, out->dtype)) {
        PyErr_Format(PyExc_TypeError, "torch.cat(): input types can't be cast to the desired output type %s",
                     ct_scalar_type_name(out->dtype));
        goto done;
    }
    if (rule == CT_OUT_EXACT && r->dtype != out->dtype) {
        PyErr_Format(PyExc_RuntimeError, "Expected out tensor to have dtype %s, but got %s instead",
                     typeid_name(r->dtype), typeid_name(out->dtype));
        goto done;
    }
    if (rule == CT_OUT_SAME_SCALAR && r->dtype != out->dtype) {
        PyErr_Format(PyExc_RuntimeError, "%s(): self and result must have the same scalar type", fname);
        goto done;
    }
    if (rule == CT_OUT_LONG && out->dtype != CT_I64) {
        PyErr_Format(PyExc_RuntimeError, "%s: Expected out tensor to have scalar type Long but got scalar type%s",
                     fname, ct_scalar_type_name(out->dtype));
        goto done;
    }
    if (rule == CT_OUT_RESULT_CAST && !ct_can_cast(r->dtype, out->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "result type %s can't be cast to the desired output type %s",
                     ct_scalar_type_name(r->dtype), ct_scalar_type_name(out->dtype));
        goto done;
    }
    if (rule == CT_OUT_SAME_AS_INPUT && r->dtype != out->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected the dtype for input and out to match, but got %s for input's dtype and %s for out's "
                     "dtype.",
                     ct_scalar_type_name(r->dtype), ct_scalar_type_name(out->dtype));
        goto done;
    }
    if (rule == CT_OUT_CAN_CAST && !ct_can_cast(r->dtype, out->dtype)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Expected canCast( typeMetaToScalarType(self.dtype()), typeMetaToScalarType(out.dtype())) to "
                        "be true, but got false.  (Could this error message be improved?  If so, please report an "
                        "enhancement request to PyTorch.)");
        goto done;
    }
    if (!ct_device_equal(ct_device_of(out), ct_device_of(r))) {
        PyErr_Format(PyExc_RuntimeError, "Expected all tensors to be on the same device, but found at least two "
                                         "devices, %s and %s!",
                     ct_device_of(out).type == CT_DEV_CPU ? "cpu" : "cuda:0",
                     ct_device_of(r).type == CT_DEV_CPU ? "cpu" : "cuda:0");
        goto done;
    }
    /* PyTorch refuses an out that overlaps an input, before any resize (checked per storage) */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (ts[i]->storage == out->storage && ct_numel(ts[i]) > 0 && ct_numel(out) > 0) {
            PyErr_SetString(PyExc_RuntimeError,
                            "unsupported operation: some elements of the input tensor and the written-to tensor "
                            "refer to a single memory location. Please clone() the tensor before performing the "
                            "operation.");
            goto done;
        }
    }
    /* an out of another shape is resized first (fresh memory), so only one kept as it is must not overlap itself */
    bool same_shape = out->ndim == r->ndim && memcmp(out->sizes, r->sizes, sizeof(int64_t) * r->ndim) == 0;
    if (same_shape ? !allow_expanded && ct_check_no_internal_overlap(out) < 0
                   : ct_resize_output(out, r->ndim, r->sizes) < 0) {
        goto done;
    }
    if (ct_copy_(out, r) < 0) {
        goto done;
    }
    result = Py_NewRef(out_obj);
done:
    Py_DECREF(r);
    return result;
}

Py_ssize_t ct_split_out(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                        const char *drop, PyObject **kept, Py_ssize_t room, PyObject **kept_names, PyObject **out)
{
    *kept_names = NULL;
    *out = NULL;
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0, k = 0;
    if (nargs + nkw > room) {
        PyErr_Format(PyExc_TypeError, "%s(): too many arguments", fname);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        kept[i] = args[i];
    }
    PyObject *names = nkw > 0 ? PyList_New(0) : NULL;
    if (nkw > 0 && names == NULL) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, i);
        if (PyUnicode_CompareWithASCIIString(key, "out") == 0) {
            *out = args[nargs + i];
        } else if (drop == NULL || PyUnicode_CompareWithASCIIString(key, drop) != 0) {
            if (PyList_Append(names, key) < 0) {
                Py_DECREF(names);
                return -1;
            }
            kept[nargs + k++] = args[nargs + i];
        }
    }
    if (k > 0) {
        *kept_names = PyList_AsTuple(names);
        if (*kept_names == NULL) {
            k = -1;
        }
    }
    Py_XDECREF(names);
    return k;
}

PyObject *ct_function_with_out(const char *fname, CtFastMethod fn, CtOutRule rule, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *kept[32], *kept_names, *out;
    if (ct_split_out(fname, args, nargs, kwnames, NULL, kept, 32, &kept_names, &out) < 0) {
        return NULL;
    }
    PyObject *r = fn(NULL, kept, nargs, kept_names);
    Py_XDECREF(kept_names);
    if (r == NULL || out == NULL || out == Py_None) {
        return r;
    }
    if (rule == CT_OUT_SELF_DTYPE && CtTensor_Check(out)) { /* take checks these before any resize */
        CtDType dt = CT_TENSOR(r)->dtype, odt = CT_TENSOR(out)->dtype; /* the result has self's dtype */
        if (odt != dt) {
            PyErr_Format(PyExc_RuntimeError, "%s(): self and out expected to have the same dtype, but got self.dtype = "
                         "%s and out.dtype = %s", fname, ct_scalar_type_name(dt), ct_scalar_type_name(odt));
        }
        if (odt != dt || ct_check_no_internal_overlap(CT_TENSOR(out)) < 0) {
            Py_DECREF(r);
            return NULL;
        }
    }
    return ct_write_out(CT_TENSOR(r), out, fname, rule == CT_OUT_SELF_DTYPE ? CT_OUT_ANY : rule, 0, NULL);
}

void ct_format_sizes(char *buf, size_t n, int ndim, const int64_t *sizes)
{
    size_t pos = 0;
    pos += snprintf(buf + pos, n - pos, "[");
    for (int i = 0; i < ndim && pos < n; i++) {
        pos += snprintf(buf + pos, n - pos, i ? ", %lld" : "%lld", (long long)sizes[i]);
    }
    if (pos < n) {
        snprintf(buf + pos, n - pos, "]");
    }
}

static int parse_one_size(PyObject *item, int64_t *out, bool allow_minus_one, int pos, const char *what)
{
    if (PyFloat_Check(item) || !PyIndex_Check(item)) {
        PyErr_Format(PyExc_TypeError, "%s must be tuple of ints, but found element of type %s at pos %d", what,
                     Py_TYPE(item)->tp_name, pos);
        return -1;
    }
    int overflow = 0;
    PyObject *idx = PyNumber_Index(item);
    if (idx == NULL) {
        return -1;
    }
    long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
    Py_DECREF(idx);
    if (overflow) {
        PyErr_SetString(PyExc_RuntimeError, "Overflow when unpacking long");
        return -1;
    }
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = v;
    return 0;
}

int ct_parse_size_seq(PyObject *seq, int64_t *sizes, bool allow_minus_one)
{
    /* A tuple subclass iterating as a tuple (torch.Size) is read in place: PySequence_Fast would copy
     * it into a new list, the most expensive step of a reshape(x.shape). */
    bool as_tuple = PyTuple_Check(seq) && Py_TYPE(seq)->tp_iter == PyTuple_Type.tp_iter;
    PyObject *fast = as_tuple ? Py_NewRef(seq) : PySequence_Fast(seq, "size must be a tuple of ints");
    if (fast == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > CT_MAX_DIMS) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions, got %zd", CT_MAX_DIMS, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (parse_one_size(PySequence_Fast_GET_ITEM(fast, i), &sizes[i], allow_minus_one, (int)i, "size") < 0) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return (int)n;
}

int ct_parse_sizes(PyObject *const *args, Py_ssize_t nargs, int64_t *sizes, bool allow_minus_one)
{
    if (nargs == 1 && (PyTuple_Check(args[0]) || PyList_Check(args[0]))) {
        return ct_parse_size_seq(args[0], sizes, allow_minus_one);
    }
    if (nargs > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions, got %zd", CT_MAX_DIMS, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if (parse_one_size(args[i], &sizes[i], allow_minus_one, (int)i, "size") < 0) {
            return -1;
        }
    }
    return (int)nargs;
}

PyObject *ct_size_object(int ndim, const int64_t *sizes)
{
    /* torch.Size keeps tuple's __new__ and __init__: allocate it directly (as tuple's own subtype_new
     * does) rather than build a tuple and call the class with it */
    PyTypeObject *size_type = (PyTypeObject *)size_class;
    bool direct = size_type != NULL && size_type->tp_new == PyTuple_Type.tp_new &&
                  size_type->tp_init == PyTuple_Type.tp_init;
    PyObject *tuple = direct ? size_type->tp_alloc(size_type, ndim) : PyTuple_New(ndim);
    if (tuple == NULL) {
        return NULL;
    }
    for (int i = 0; i < ndim; i++) {
        PyObject *v = PyLong_FromLongLong(sizes[i]);
        if (v == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, i, v);
    }
    if (size_class == NULL || direct) {
        return tuple;
    }
    PyObject *r = PyObject_CallOneArg(size_class, tuple);
    Py_DECREF(tuple);
    return r;
}

bool ct_size_check(PyObject *obj) { return size_class != NULL && PyObject_TypeCheck(obj, (PyTypeObject *)size_class); }

int ct_check_same_device(int n, CtTensorObject *const *ts, bool allow_cpu_scalars, CtDevice *out)
{
    /* The first non-scalar tensor decides; 0-d CPU tensors follow any device. */
    int first = -1;
    for (int i = 0; i < n; i++) {
        if (ts[i] == NULL) {
            continue;
        }
        if (allow_cpu_scalars && ts[i]->ndim == 0 && ct_device_of(ts[i]).type == CT_DEV_CPU) {
            continue;
        }
        if (first < 0) {
            first = i;
            continue;
        }
        CtDevice a = ct_device_of(ts[first]), b = ct_device_of(ts[i]);
        if (!ct_device_equal(a, b)) {
            char sa[32], sb[32];
            ct_device_str(a, sa, sizeof(sa));
            ct_device_str(b, sb, sizeof(sb));
            if (a.type == CT_DEV_CPU) { /* PyTorch names the CUDA device first */
                PyErr_Format(PyExc_RuntimeError,
                             "Expected all tensors to be on the same device, but found at least two devices, %s "
                             "and %s!",
                             sb, sa);
            } else {
                PyErr_Format(PyExc_RuntimeError,
                             "Expected all tensors to be on the same device, but found at least two devices, %s "
                             "and %s!",
                             sa, sb);
            }
            return -1;
        }
    }
    if (first < 0) {
        for (int i = 0; i < n; i++) {
            if (ts[i] != NULL) {
                first = i;
                break;
            }
        }
    }
    *out = first >= 0 ? ct_device_of(ts[first]) : ct_cpu();
    return 0;
}

CtTensorObject *ct_scalar_tensor(const CtScalar *s, CtDType dtype, CtDevice device)
{
    CtTensorObject *t = ct_empty(0, NULL, dtype, ct_cpu());
    if (t == NULL) {
        return NULL;
    }
    char *p = ct_data(t);
    switch (dtype) {
#define CT_STORE_SCALAR(NAME, ctype, acctype, ...)                                     \
    case CT_##NAME:                                                                    \
        if (s->kind == CT_KIND_FLOAT) {                                                \
            CT_STORE_##NAME(p, (acctype)s->v.d);                                       \
        } else if (s->kind == CT_KIND_INT) {                                           \
            CT_STORE_##NAME(p, (acctype)s->v.i);                                       \
        } else {                                                                       \
            CT_STORE_##NAME(p, (acctype)s->v.b);                                       \
        }                                                                              \
        break;
        CT_DTYPE_LIST(CT_STORE_SCALAR)
#undef CT_STORE_SCALAR
    default:
        break;
    }
    if (device.type != CT_DEV_CPU) {
        /* Non-blocking: the pageable source is consumed before the copy call returns. */
        CtTensorObject *moved = ct_to_ex(t, dtype, device, false, true);
        Py_DECREF(t);
        return moved;
    }
    return t;
}

CtTensorObject *ct_as_tensor_arg(PyObject *obj, CtDevice device, bool *is_wrapped_number)
{
    if (CtTensor_Check(obj)) {
        *is_wrapped_number = false;
        return (CtTensorObject *)Py_NewRef(obj);
    }
    CtScalar s;
    if (ct_scalar_from_object(obj, &s) < 0) {
        return NULL;
    }
    *is_wrapped_number = true;
    return ct_scalar_tensor(&s, ct_scalar_dtype(&s), device);
}

/* Reads the single element of t (any device) as a scalar. */
int ct_item(CtTensorObject *t, CtScalar *out)
{
    int64_t n = ct_numel(t);
    if (n != 1) {
        PyErr_Format(PyExc_RuntimeError, "a Tensor with %lld elements cannot be converted to Scalar", (long long)n);
        return -1;
    }
    union {
        double d;
        int64_t i;
        char bytes[16];
    } buf;
    const CtDeviceOps *ops = ct_device_ops(ct_device_of(t));
    if (ops == NULL || ops->copy_d2h(buf.bytes, ct_data(t), ct_itemsize(t), ct_device_of(t)) < 0) {
        return -1;
    }
    switch (t->dtype) {
#define CT_ITEM_CASE(NAME, ctype, acctype, pyname, npy, dlc, dlb, KIND, ...) \
    case CT_##NAME:                                                       \
        out->kind = KIND;                                                 \
        if (KIND == CT_KIND_FLOAT) {                                      \
            out->v.d = (double)CT_LOAD_##NAME(buf.bytes);                 \
        } else if (KIND == CT_KIND_INT) {                                 \
            out->v.i = (int64_t)CT_LOAD_##NAME(buf.bytes);                \
        } else {                                                          \
            out->v.b = (bool)CT_LOAD_##NAME(buf.bytes);                   \
        }                                                                 \
        break;
        CT_DTYPE_LIST(CT_ITEM_CASE)
#undef CT_ITEM_CASE
    default:
        break;
    }
    return 0;
}

static PyObject *scalar_to_python(const CtScalar *s)
{
    if (s->kind == CT_KIND_FLOAT) {
        return PyFloat_FromDouble(s->v.d);
    }
    if (s->kind == CT_KIND_INT) {
        return PyLong_FromLongLong(s->v.i);
    }
    return PyBool_FromLong(s->v.b);
}

CtTensorObject *ct_contiguous(CtTensorObject *t)
{
    if (ct_is_contiguous(t)) {
        return (CtTensorObject *)Py_NewRef(t);
    }
    return ct_to_format(t, t->dtype, ct_device_of(t), true, false, true);
}

CtTensorObject *ct_to(CtTensorObject *t, CtDType dtype, CtDevice device, bool copy)
{
    return ct_to_ex(t, dtype, device, copy, false);
}

CtTensorObject *ct_to_ex(CtTensorObject *t, CtDType dtype, CtDevice device, bool copy, bool non_blocking)
{
    return ct_to_format(t, dtype, device, copy, non_blocking, true);
}

CtTensorObject *ct_to_memory_format(CtTensorObject *t, CtDType dtype, CtDevice device, bool copy, bool non_blocking,
                                    int format)
{
    bool channels_last = format == CT_FORMAT_CHANNELS_LAST || format == CT_FORMAT_CHANNELS_LAST_3D;
    int64_t strides[CT_MAX_DIMS];
    if (channels_last && ct_channels_last_strides(format, t->ndim, t->sizes, strides) < 0) {
        return NULL;
    }
    bool laid_out = !channels_last || ct_is_contiguous_as(t, format);
    if (!copy && laid_out && dtype == t->dtype && ct_device_equal(device, ct_device_of(t))) {
        return (CtTensorObject *)Py_NewRef(t);
    }
    bool pin_out = non_blocking && device.type == CT_DEV_CPU && ct_device_of(t).type == CT_DEV_CUDA;
    CtTensorObject *out = pin_out ? ct_empty_pinned(t->ndim, t->sizes, dtype) : ct_empty(t->ndim, t->sizes, dtype, device);
    if (out == NULL) {
        return NULL;
    }
    /* dense layouts: the contiguous storage fits */
    if (channels_last) {
        memcpy(out->strides, strides, sizeof(int64_t) * t->ndim);
    } else if (format == CT_FORMAT_PRESERVE) {
        ct_preserve_strides(t, out->strides);
    }
    if (ct_copy_ex(out, t, non_blocking) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

CtTensorObject *ct_to_format(CtTensorObject *t, CtDType dtype, CtDevice device, bool copy, bool non_blocking,
                             bool contiguous)
{
    return ct_to_memory_format(t, dtype, device, copy, non_blocking,
                               contiguous ? CT_FORMAT_CONTIGUOUS : CT_FORMAT_PRESERVE);
}

/* --- type slots ------------------------------------------------------------------------------ */
static int tensor_traverse(PyObject *self, visitproc visit, void *arg)
{
    CtTensorObject *t = (CtTensorObject *)self;
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(t->grad);
    Py_VISIT(t->grad_fn);
    Py_VISIT(t->hooks);
    Py_VISIT(t->view_base);
    return 0;
}

static int tensor_clear(PyObject *self)
{
    CtTensorObject *t = (CtTensorObject *)self;
    Py_CLEAR(t->grad);
    Py_CLEAR(t->grad_fn);
    Py_CLEAR(t->hooks);
    Py_CLEAR(t->grad_accumulator);
    Py_CLEAR(t->view_base);
    return 0;
}

static void tensor_dealloc(PyObject *self)
{
    CtTensorObject *t = (CtTensorObject *)self;
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (t->weakreflist != NULL) {
        PyObject_ClearWeakRefs(self);
    }
    tensor_clear(self);
    Py_CLEAR(t->storage);
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* Tensor(*sizes) / Tensor(data) / Tensor(tensor) / Tensor(storage): the legacy constructor of the
 * default tensor type (the default dtype; on CUDA after set_default_tensor_type(torch.cuda.*Tensor)). */
static PyObject *tensor_tp_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    return ct_legacy_new(ct_default_float_dtype, ct_legacy_default_cuda, false, args, kwargs);
}

/* --- attributes -------------------------------------------------------------------------------- */
static PyObject *tensor_get_shape(PyObject *self, void *c)
{
    CtTensorObject *t = CT_TENSOR(self);
    return ct_size_object(t->ndim, t->sizes);
}
static PyObject *tensor_get_dtype(PyObject *self, void *c) { return Py_NewRef(ct_dtype_object(CT_TENSOR(self)->dtype)); }
static PyObject *tensor_get_device(PyObject *self, void *c) { return ct_device_object(ct_device_of(CT_TENSOR(self))); }
static PyObject *tensor_get_ndim(PyObject *self, void *c) { return PyLong_FromLong(CT_TENSOR(self)->ndim); }
static PyObject *tensor_get_is_cuda(PyObject *self, void *c)
{
    return PyBool_FromLong(ct_device_of(CT_TENSOR(self)).type == CT_DEV_CUDA);
}
static PyObject *tensor_get_is_cpu(PyObject *self, void *c)
{
    return PyBool_FromLong(ct_device_of(CT_TENSOR(self)).type == CT_DEV_CPU);
}
static PyObject *tensor_get_itemsize(PyObject *self, void *c) { return PyLong_FromSize_t(ct_itemsize(CT_TENSOR(self))); }
static PyObject *tensor_get_nbytes(PyObject *self, void *c)
{
    return PyLong_FromLongLong(ct_numel(CT_TENSOR(self)) * (int64_t)ct_itemsize(CT_TENSOR(self)));
}

/* .data: a detached alias sharing storage; assigning replaces this tensor's storage/metadata. */
static CtTensorObject *detach_alias(CtTensorObject *t)
{
    return ct_view_of(t, t->ndim, t->sizes, t->strides, t->offset);
}
static PyObject *tensor_get_data(PyObject *self, void *c) { return (PyObject *)detach_alias(CT_TENSOR(self)); }
static int tensor_set_data(PyObject *self, PyObject *value, void *c)
{
    if (value == NULL || !CtTensor_Check(value)) {
        PyErr_Format(PyExc_TypeError, "Variable data has to be a tensor, but got %s",
                     value == NULL ? "nothing" : Py_TYPE(value)->tp_name);
        return -1;
    }
    CtTensorObject *t = CT_TENSOR(self), *v = CT_TENSOR(value);
    if (t->requires_grad && !ct_is_floating(v->dtype)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "data set to a tensor that requires gradients must be floating point or complex dtype");
        return -1;
    }
    Py_SETREF(t->storage, (CtStorageObject *)Py_NewRef(v->storage));
    t->offset = v->offset;
    t->ndim = v->ndim;
    t->dtype = v->dtype;
    memcpy(t->sizes, v->sizes, sizeof(t->sizes));
    memcpy(t->strides, v->strides, sizeof(t->strides));
    return 0;
}

static PyObject *tensor_get_requires_grad(PyObject *self, void *c)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_autograd_refresh_view(t) < 0) {
        return NULL;
    }
    return PyBool_FromLong(t->requires_grad || t->grad_fn != NULL);
}
static int tensor_set_requires_grad(PyObject *self, PyObject *value, void *c)
{
    int v = value ? PyObject_IsTrue(value) : 0;
    if (value == NULL || !PyBool_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "requires_grad must be a bool");
        return -1;
    }
    return v < 0 ? -1 : ct_autograd_set_requires_grad(CT_TENSOR(self), v);
}
static PyObject *tensor_get_grad(PyObject *self, void *c)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (t->grad == NULL && t->grad_fn != NULL && !t->retains_grad &&
        PyErr_WarnEx(PyExc_UserWarning,
                     "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
                     "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
                     "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf "
                     "Tensor by mistake, make sure you access the leaf Tensor instead.", 1) < 0) {
        return NULL;
    }
    return Py_NewRef(t->grad ? t->grad : Py_None);
}
static int tensor_set_grad(PyObject *self, PyObject *value, void *c)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (value == NULL || value == Py_None) {
        Py_CLEAR(t->grad);
        return 0;
    }
    if (!CtTensor_Check(value)) {
        PyErr_Format(PyExc_TypeError, "assigned grad expected to be a Tensor or None but got grad of type %s",
                     Py_TYPE(value)->tp_name);
        return -1;
    }
    CtTensorObject *g = CT_TENSOR(value);
    if (g->dtype != t->dtype) {
        PyErr_SetString(PyExc_RuntimeError, "assigned grad has data of a different type");
        return -1;
    }
    if (!ct_device_equal(ct_device_of(g), ct_device_of(t))) {
        PyErr_SetString(PyExc_RuntimeError, "assigned grad has data located on a different device");
        return -1;
    }
    if (g->ndim != t->ndim || memcmp(g->sizes, t->sizes, sizeof(int64_t) * t->ndim) != 0) {
        char a[256], b[256];
        ct_format_sizes(a, sizeof(a), g->ndim, g->sizes);
        ct_format_sizes(b, sizeof(b), t->ndim, t->sizes);
        PyErr_Format(PyExc_RuntimeError, "attempting to assign a gradient of size '%s' to a tensor of size '%s'. "
                     "Please ensure that the gradient and the tensor are the same size", a, b);
        return -1;
    }
    Py_XSETREF(t->grad, Py_NewRef(value));
    return 0;
}
static PyObject *tensor_get_grad_fn(PyObject *self, void *c) { return ct_autograd_get_grad_fn(CT_TENSOR(self)); }
static PyObject *tensor_get_is_leaf(PyObject *self, void *c)
{
    if (ct_autograd_refresh_view(CT_TENSOR(self)) < 0) {
        return NULL;
    }
    return PyBool_FromLong(CT_TENSOR(self)->grad_fn == NULL);
}
static PyObject *tensor_get_retains_grad(PyObject *self, void *c) { return PyBool_FromLong(CT_TENSOR(self)->retains_grad); }
static PyObject *tensor_get_output_nr(PyObject *self, void *c) { return PyLong_FromLong(CT_TENSOR(self)->output_nr); }
static PyObject *tensor_get_version(PyObject *self, void *c)
{
    return PyLong_FromUnsignedLongLong(CT_TENSOR(self)->storage->version);
}

static PyGetSetDef tensor_getset[] = {
    {"requires_grad", tensor_get_requires_grad, tensor_set_requires_grad, "whether gradients are recorded", NULL},
    {"grad", tensor_get_grad, tensor_set_grad, "the accumulated gradient (leaves) or None", NULL},
    {"grad_fn", tensor_get_grad_fn, NULL, "the node that created this tensor, or None", NULL},
    {"is_leaf", tensor_get_is_leaf, NULL, "True for tensors not created by a recorded op", NULL},
    {"retains_grad", tensor_get_retains_grad, NULL, "True after retain_grad() on a non-leaf", NULL},
    {"output_nr", tensor_get_output_nr, NULL, "which output of grad_fn this tensor is", NULL},
    {"_version", tensor_get_version, NULL, "in-place modification counter", NULL},
    {"shape", tensor_get_shape, NULL, "the size of the tensor as a ctorch.Size", NULL},
    {"dtype", tensor_get_dtype, NULL, "the element type", NULL},
    {"device", tensor_get_device, NULL, "the device holding the data", NULL},
    {"ndim", tensor_get_ndim, NULL, "number of dimensions", NULL},
    {"is_cuda", tensor_get_is_cuda, NULL, "True if the tensor is on a CUDA device", NULL},
    {"is_cpu", tensor_get_is_cpu, NULL, "True if the tensor is on the CPU", NULL},
    {"itemsize", tensor_get_itemsize, NULL, "bytes per element", NULL},
    {"nbytes", tensor_get_nbytes, NULL, "bytes of the elements viewed", NULL},
    {"data", tensor_get_data, tensor_set_data, "the tensor without autograd history", NULL},
    {"T", ct_views_get_T, NULL, "all dims reversed", NULL},
    {"mT", ct_views_get_mT, NULL, "the last two dims swapped", NULL},
    /* namespace.c: real-dtype complex helpers and the layout */
    {"mH", ct_namespace_get_mH, NULL, "the last two dims swapped (conjugated: a no-op on real tensors)", NULL},
    {"H", ct_namespace_get_H, NULL, "a matrix transposed (conjugated: a no-op on real tensors)", NULL},
    {"real", ct_namespace_get_real, NULL, "the tensor itself (a real tensor)", NULL},
    {"imag", ct_namespace_get_imag, NULL, "TypeError on real tensors", NULL},
    {"layout", ct_namespace_get_layout, NULL, "torch.strided", NULL},
    {NULL},
};

/* --- methods ------------------------------------------------------------------------------------ */
static PyObject *optional_dim_of(CtTensorObject *t, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                                 const char *fname, const int64_t *values)
{
    static const char *const names[] = {"dim", NULL};
    PyObject *dim_obj;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 0, &dim_obj) < 0) {
        return NULL;
    }
    if (dim_obj == NULL || dim_obj == Py_None) {
        if (values == t->sizes) {
            return ct_size_object(t->ndim, t->sizes);
        }
        PyObject *tuple = PyTuple_New(t->ndim);
        for (int i = 0; tuple && i < t->ndim; i++) {
            PyTuple_SET_ITEM(tuple, i, PyLong_FromLongLong(values[i]));
        }
        return tuple;
    }
    int64_t d = 0;
    int dim;
    if (ct_arg_int64(dim_obj, &d) < 0 || ct_wrap_dim(d, t->ndim, &dim) < 0) {
        return NULL;
    }
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_IndexError, "dimension specified as 0 but tensor has no dimensions");
        return NULL;
    }
    return PyLong_FromLongLong(values[dim]);
}

static PyObject *tensor_size(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return optional_dim_of(CT_TENSOR(self), args, nargs, kwnames, "size", CT_TENSOR(self)->sizes);
}
static PyObject *tensor_stride(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return optional_dim_of(CT_TENSOR(self), args, nargs, kwnames, "stride", CT_TENSOR(self)->strides);
}
static PyObject *tensor_dim(PyObject *self, PyObject *unused) { return PyLong_FromLong(CT_TENSOR(self)->ndim); }
static PyObject *tensor_numel(PyObject *self, PyObject *unused) { return PyLong_FromLongLong(ct_numel(CT_TENSOR(self))); }
static PyObject *tensor_storage_offset(PyObject *self, PyObject *unused)
{
    return PyLong_FromLongLong(CT_TENSOR(self)->offset);
}
static PyObject *tensor_element_size(PyObject *self, PyObject *unused)
{
    return PyLong_FromSize_t(ct_itemsize(CT_TENSOR(self)));
}
/* 0 for a tensor without elements, whatever its storage and offset (PyTorch's rule). */
static PyObject *tensor_data_ptr(PyObject *self, PyObject *unused)
{
    CtTensorObject *t = CT_TENSOR(self);
    return PyLong_FromVoidPtr(ct_numel(t) == 0 ? NULL : ct_data(t));
}
static PyObject *tensor_is_contiguous(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"memory_format", NULL};
    PyObject *a[1];
    CtMemoryFormat format;
    if (ct_parse_args("is_contiguous", args, nargs, kwnames, names, 0, a) < 0 ||
        ct_memory_format_arg("is_contiguous", a[0], &format) < 0) {
        return NULL;
    }
    if (format == CT_FORMAT_PRESERVE && a[0] != NULL && a[0] != Py_None) {
        PyErr_SetString(PyExc_RuntimeError, "is_contiguous(): memory_format=torch.preserve_format is not allowed");
        return NULL;
    }
    return PyBool_FromLong(ct_is_contiguous_as(CT_TENSOR(self), format));
}
static PyObject *tensor_is_floating_point(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(ct_is_floating(CT_TENSOR(self)->dtype));
}
static PyObject *tensor_untyped_storage(PyObject *self, PyObject *unused)
{
    return Py_NewRef(CT_TENSOR(self)->storage);
}
static PyObject *tensor_get_device_index(PyObject *self, PyObject *unused)
{
    CtDevice d = ct_device_of(CT_TENSOR(self));
    return PyLong_FromLong(d.type == CT_DEV_CPU ? -1 : d.index);
}

static PyObject *tensor_contiguous(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"*memory_format", NULL};
    PyObject *a[1];
    CtMemoryFormat format;
    if (ct_parse_args("contiguous", args, nargs, kwnames, names, 0, a) < 0 ||
        ct_memory_format_arg("contiguous", a[0], &format) < 0) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    if (format == CT_FORMAT_CHANNELS_LAST || format == CT_FORMAT_CHANNELS_LAST_3D) {
        return (PyObject *)ct_to_memory_format(t, t->dtype, ct_device_of(t), false, false, format);
    }
    if (format == CT_FORMAT_PRESERVE && a[0] != NULL && a[0] != Py_None) {
        PyErr_SetString(PyExc_RuntimeError, "preserve memory format is unsupported by the contiguous operator");
        return NULL;
    }
    return (PyObject *)ct_contiguous(t);
}

static PyObject *tensor_clone(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"*memory_format", NULL};
    PyObject *a[1];
    CtMemoryFormat format;
    if (ct_parse_args("clone", args, nargs, kwnames, names, 0, a) < 0 ||
        ct_memory_format_arg("clone", a[0], &format) < 0) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    return (PyObject *)ct_to_memory_format(t, t->dtype, ct_device_of(t), true, false, format);
}

static PyObject *tensor_detach(PyObject *self, PyObject *unused) { return (PyObject *)detach_alias(CT_TENSOR(self)); }

static PyObject *tensor_detach_(PyObject *self, PyObject *unused)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (t->view_base != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Can't detach views in-place. Use detach() instead.");
        return NULL;
    }
    Py_CLEAR(t->grad_fn);
    t->requires_grad = false;
    return Py_NewRef(self);
}

static PyObject *tensor_copy_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"src", "non_blocking", NULL};
    PyObject *a[2];
    if (ct_parse_args("copy_", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    CtTensorObject *src;
    bool wrapped;
    if (CtTensor_Check(a[0])) {
        src = (CtTensorObject *)Py_NewRef(a[0]);
    } else if (PyLong_Check(a[0]) || PyFloat_Check(a[0]) || PyComplex_Check(a[0])) {
        /* a Python number is a 0-d tensor of its default dtype (bool, int64, float64, complex128), as PyTorch's */
        if ((src = ct_as_tensor_arg(a[0], ct_device_of(CT_TENSOR(self)), &wrapped)) == NULL) {
            return NULL;
        }
    } else {
        PyErr_Format(PyExc_TypeError, "copy_(): argument 'src' must be Tensor, not %s", Py_TYPE(a[0])->tp_name);
        return NULL;
    }
    bool non_blocking = false;
    int rc = ct_arg_bool(a[1], &non_blocking) < 0 || ct_check_no_internal_overlap(CT_TENSOR(self)) < 0 ||
                     ct_copy_ex(CT_TENSOR(self), src, non_blocking) < 0
                 ? -1
                 : 0;
    Py_DECREF(src);
    if (rc < 0) {
        return NULL;
    }
    ct_bump_version(CT_TENSOR(self));
    return Py_NewRef(self);
}

/* PyTorch's three overloads: to(dtype, non_blocking=False, copy=False), to(device=None,
 * dtype=None, non_blocking=False, copy=False) and to(other, non_blocking=False, copy=False);
 * dtype=/device= may also come as keywords. */
static PyObject *tensor_to(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"a",       "b",            "c",    "d",
                                        "*dtype",  "*device",      "*non_blocking",
                                        "*copy",   "*memory_format", NULL};
    PyObject *a[9];
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_parse_args("to", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    CtDType dtype = t->dtype;
    CtDevice device = ct_device_of(t);
    PyObject *first = a[0], *nb_obj = a[6], *copy_obj = a[7];
    int flags_at = 1; /* where the positional non_blocking, copy start */
    if (first == NULL || first == Py_None) {
        flags_at = first == NULL ? 4 : 2; /* to(None, dtype, ...) is the device overload */
        if (first != NULL && a[1] != NULL && !ct_dtype_converter(a[1], &dtype)) {
            return NULL;
        }
    } else if (CtTensor_Check(first)) {
        dtype = CT_TENSOR(first)->dtype;
        device = ct_device_of(CT_TENSOR(first));
    } else if (PyUnicode_Check(first) || (PyLong_Check(first) && !PyBool_Check(first)) ||
               strcmp(Py_TYPE(first)->tp_name, "ctorch.device") == 0) {
        if (ct_device_from_object(first, &device) < 0) {
            return NULL;
        }
        flags_at = 2;
        if (a[1] != NULL && !ct_dtype_converter(a[1], &dtype)) {
            return NULL;
        }
    } else if (ct_dtype_from_object(first, &dtype) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "to() received an invalid combination of arguments - got (%s), expected a device, dtype or "
                     "tensor",
                     Py_TYPE(first)->tp_name);
        return NULL;
    }
    for (int i = flags_at; i < 4; i++) {
        PyObject **slot = i == flags_at ? &nb_obj : i == flags_at + 1 ? &copy_obj : NULL;
        if (a[i] == NULL) {
            continue;
        }
        if (slot == NULL || *slot != NULL || !PyBool_Check(a[i])) {
            PyErr_Format(PyExc_TypeError,
                         "to() received an invalid combination of arguments - got %s at position %d, expected "
                         "non_blocking and copy (bool) after the dtype, device or tensor",
                         Py_TYPE(a[i])->tp_name, i + 1);
            return NULL;
        }
        *slot = a[i];
    }
    bool non_blocking = false, copy = false;
    CtMemoryFormat format;
    if (!ct_dtype_converter(a[4] ? a[4] : Py_None, &dtype) || !ct_device_converter(a[5] ? a[5] : Py_None, &device) ||
        ct_arg_bool(copy_obj, &copy) < 0 || ct_arg_bool(nb_obj, &non_blocking) < 0 ||
        ct_memory_format_arg("to", a[8], &format) < 0) {
        return NULL;
    }
    if (format == CT_FORMAT_CONTIGUOUS && !ct_is_contiguous(t)) {
        copy = true; /* a layout change is a copy even on the same device and dtype */
    }
    return (PyObject *)ct_to_memory_format(t, dtype, device, copy, non_blocking, format);
}

static PyObject *convert_dtype(PyObject *self, CtDType d)
{
    CtTensorObject *t = CT_TENSOR(self);
    return (PyObject *)ct_to_format(t, d, ct_device_of(t), false, false, false);
}
#define CT_DTYPE_METHOD(pyname, d) \
    static PyObject *tensor_##pyname(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *k) \
    {                                                                                              \
        return convert_dtype(self, d);                                                             \
    }
CT_DTYPE_METHOD(float, CT_F32)
CT_DTYPE_METHOD(double, CT_F64)
CT_DTYPE_METHOD(half, CT_F16)
CT_DTYPE_METHOD(bfloat16, CT_BF16)
CT_DTYPE_METHOD(long, CT_I64)
CT_DTYPE_METHOD(int, CT_I32)
CT_DTYPE_METHOD(short, CT_I16)
CT_DTYPE_METHOD(char, CT_I8)
CT_DTYPE_METHOD(byte, CT_U8)
CT_DTYPE_METHOD(bool, CT_BOOL)
#undef CT_DTYPE_METHOD

static PyObject *tensor_type(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dtype", "non_blocking", NULL};
    PyObject *a[2];
    if (ct_parse_args("type", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    if (a[0] == NULL || a[0] == Py_None) {
        return PyUnicode_FromFormat("torch.%s%sTensor", ct_device_of(t).type == CT_DEV_CUDA ? "cuda." : "",
                                    ct_scalar_type_name(t->dtype)); /* the legacy type: LongTensor */
    }
    CtDType legacy_dtype;
    bool legacy_cuda;
    if (ct_legacy_type_of(a[0], &legacy_dtype, &legacy_cuda) || a[0] == (PyObject *)CtTensor_Type) {
        if (a[0] == (PyObject *)CtTensor_Type) { /* t.type(torch.Tensor): the default type */
            legacy_dtype = ct_default_float_dtype;
            legacy_cuda = ct_legacy_default_cuda;
        }
        CtDevice device = legacy_cuda ? (CtDevice){CT_DEV_CUDA, ct_cuda_current_device} : ct_cpu();
        return (PyObject *)ct_to_format(t, legacy_dtype, device, false, false, false);
    }
    if (PyUnicode_Check(a[0])) { /* t.type("torch.DoubleTensor") / "torch.cuda.FloatTensor" */
        const char *name = PyUnicode_AsUTF8(a[0]);
        if (name == NULL) {
            return NULL;
        }
        if (strcmp(name, "torch.Tensor") == 0) {
            return tensor_type(self, (PyObject *const[]){(PyObject *)CtTensor_Type}, 1, NULL);
        }
        const char *rest = strncmp(name, "torch.", 6) == 0 ? name + 6 : NULL;
        bool cuda = rest != NULL && strncmp(rest, "cuda.", 5) == 0;
        rest = cuda ? rest + 5 : rest;
        for (int d = 0; rest != NULL && d < CT_NUM_DTYPES; d++) {
            size_t len = strlen(ct_scalar_type_name((CtDType)d));
            if (strncmp(rest, ct_scalar_type_name((CtDType)d), len) == 0 && strcmp(rest + len, "Tensor") == 0) {
                CtDevice device = cuda ? (CtDevice){CT_DEV_CUDA, ct_cuda_current_device} : ct_cpu();
                return (PyObject *)ct_to_format(t, (CtDType)d, device, false, false, false);
            }
        }
        PyErr_Format(PyExc_ValueError, "invalid type: '%s'", name);
        return NULL;
    }
    CtDType d;
    if (PyObject_TypeCheck(a[0], Py_TYPE(ct_dtype_object(CT_F32)))) {
        if (ct_dtype_from_object(a[0], &d) < 0) {
            return NULL;
        }
        return convert_dtype(self, d);
    }
    if (PyType_Check(a[0])) { /* a class that is no tensor type: t.type(int) */
        PyErr_Format(PyExc_ValueError, "invalid type: '%s'", ((PyTypeObject *)a[0])->tp_name);
        return NULL;
    }
    PyErr_SetString(PyExc_TypeError, "dtype must be a type, str, or dtype object");
    return NULL;
}

static PyObject *tensor_cpu(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    CtTensorObject *t = CT_TENSOR(self);
    return (PyObject *)ct_to_format(t, t->dtype, ct_cpu(), false, false, false);
}

static PyObject *tensor_cuda(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"device", "non_blocking", NULL};
    PyObject *a[2];
    if (ct_parse_args("cuda", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    CtDevice d = {CT_DEV_CUDA, ct_cuda_current_device};
    if (a[0] != NULL && a[0] != Py_None) {
        if (ct_device_from_object(a[0], &d) < 0) {
            return NULL;
        }
        if (d.type != CT_DEV_CUDA) {
            PyErr_Format(PyExc_RuntimeError, "Invalid device, must be cuda device");
            return NULL;
        }
    }
    bool non_blocking = false;
    if (ct_arg_bool(a[1], &non_blocking) < 0) {
        return NULL;
    }
    return (PyObject *)ct_to_format(t, t->dtype, d, false, non_blocking, false);
}

static PyObject *tensor_item(PyObject *self, PyObject *unused)
{
    CtScalar s;
    if (ct_item(CT_TENSOR(self), &s) < 0) {
        return NULL;
    }
    return scalar_to_python(&s);
}

/* --- number conversions (__float__, __int__, __bool__, __index__, __len__) ------------------------ */
/* The element behind float(t)/int(t): unlike .item(), PyTorch raises ValueError here. */
static int python_number_item(PyObject *self, CtScalar *s)
{
    if (ct_numel(CT_TENSOR(self)) != 1) {
        PyErr_SetString(PyExc_ValueError, "only one element tensors can be converted to Python scalars");
        return -1;
    }
    return ct_item(CT_TENSOR(self), s);
}
static PyObject *tensor_float_slot(PyObject *self)
{
    CtScalar s;
    if (python_number_item(self, &s) < 0) {
        return NULL;
    }
    return PyFloat_FromDouble(ct_scalar_to_double(&s));
}
static PyObject *tensor_int_slot(PyObject *self)
{
    CtScalar s;
    if (python_number_item(self, &s) < 0) {
        return NULL;
    }
    if (s.kind == CT_KIND_FLOAT) {
        PyObject *f = PyFloat_FromDouble(s.v.d);
        PyObject *r = f == NULL ? NULL : PyNumber_Long(f); /* raises on nan/inf like Python */
        Py_XDECREF(f);
        return r;
    }
    return PyLong_FromLongLong(ct_scalar_to_int(&s));
}
static PyObject *tensor_index_slot(PyObject *self)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_numel(t) != 1 || !ct_is_integral(t->dtype, true)) {
        PyErr_SetString(PyExc_TypeError, "only integer tensors of a single element can be converted to an index");
        return NULL;
    }
    return tensor_int_slot(self);
}
/* `x in t`: (x == t).any(), as PyTorch's Tensor.__contains__ (not an iteration over rows). */
static int tensor_contains(PyObject *self, PyObject *element)
{
    if (!CtTensor_Check(element) && !PyNumber_Check(element)) {
        PyErr_Format(PyExc_RuntimeError,
                     "Tensor.__contains__ only supports Tensor or scalar, but you passed in a <class '%s'>.",
                     Py_TYPE(element)->tp_name);
        return -1;
    }
    PyObject *eq = PyObject_RichCompare(element, self, Py_EQ);
    PyObject *any = eq == NULL ? NULL : ct_call_method(eq, "any", NULL);
    int r = any == NULL ? -1 : PyObject_IsTrue(any);
    Py_XDECREF(eq);
    Py_XDECREF(any);
    return r;
}

static int tensor_bool_slot(PyObject *self)
{
    CtTensorObject *t = CT_TENSOR(self);
    int64_t n = ct_numel(t);
    if (n != 1) {
        PyErr_Format(PyExc_RuntimeError, "Boolean value of Tensor with %s is ambiguous",
                     n == 0 ? "no values" : "more than one value");
        return -1;
    }
    CtScalar s;
    if (ct_item(t, &s) < 0) {
        return -1;
    }
    return ct_scalar_to_double(&s) != 0.0;
}
static Py_ssize_t tensor_len(PyObject *self)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    return (Py_ssize_t)t->sizes[0];
}

static Py_hash_t tensor_hash(PyObject *self) { return _Py_HashPointer(self); }

static PyMethodDef tensor_core_methods[] = {
    {"size", CT_FASTCALL(tensor_size), CT_METH_FK, "size(dim=None) -> Size or int"},
    {"stride", CT_FASTCALL(tensor_stride), CT_METH_FK, "stride(dim=None) -> tuple or int"},
    {"dim", tensor_dim, METH_NOARGS, "number of dimensions"},
    {"ndimension", tensor_dim, METH_NOARGS, "number of dimensions"},
    {"numel", tensor_numel, METH_NOARGS, "number of elements"},
    {"nelement", tensor_numel, METH_NOARGS, "number of elements"},
    {"storage_offset", tensor_storage_offset, METH_NOARGS, "offset into the storage, in elements"},
    {"element_size", tensor_element_size, METH_NOARGS, "bytes per element"},
    {"data_ptr", tensor_data_ptr, METH_NOARGS, "address of the first element"},
    {"is_contiguous", CT_FASTCALL(tensor_is_contiguous), CT_METH_FK, "True if laid out row-major without gaps"},
    {"is_floating_point", tensor_is_floating_point, METH_NOARGS, "True for float dtypes"},
    {"untyped_storage", tensor_untyped_storage, METH_NOARGS, "the storage behind the tensor"},
    {"get_device", tensor_get_device_index, METH_NOARGS, "CUDA ordinal, or -1 on the CPU"},
    {"contiguous", CT_FASTCALL(tensor_contiguous), CT_METH_FK, "self if contiguous, else a contiguous copy"},
    {"clone", CT_FASTCALL(tensor_clone), CT_METH_FK, "a copy with its own storage"},
    {"detach", tensor_detach, METH_NOARGS, "a view without autograd history"},
    {"detach_", tensor_detach_, METH_NOARGS, "drops autograd history in place"},
    {"copy_", CT_FASTCALL(tensor_copy_), CT_METH_FK, "copies src into self (broadcast, cast, cross-device)"},
    {"to", CT_FASTCALL(tensor_to), CT_METH_FK, "to(device=None, dtype=None, non_blocking=False, copy=False)"},
    {"type", CT_FASTCALL(tensor_type), CT_METH_FK, "type(dtype=None): legacy type name or conversion"},
    {"float", CT_FASTCALL(tensor_float), CT_METH_FK, "to float32"},
    {"double", CT_FASTCALL(tensor_double), CT_METH_FK, "to float64"},
    {"half", CT_FASTCALL(tensor_half), CT_METH_FK, "to float16"},
    {"bfloat16", CT_FASTCALL(tensor_bfloat16), CT_METH_FK, "to bfloat16"},
    {"long", CT_FASTCALL(tensor_long), CT_METH_FK, "to int64"},
    {"int", CT_FASTCALL(tensor_int), CT_METH_FK, "to int32"},
    {"short", CT_FASTCALL(tensor_short), CT_METH_FK, "to int16"},
    {"char", CT_FASTCALL(tensor_char), CT_METH_FK, "to int8"},
    {"byte", CT_FASTCALL(tensor_byte), CT_METH_FK, "to uint8"},
    {"bool", CT_FASTCALL(tensor_bool), CT_METH_FK, "to bool"},
    {"cpu", CT_FASTCALL(tensor_cpu), CT_METH_FK, "a copy on the CPU (self if already there)"},
    {"cuda", CT_FASTCALL(tensor_cuda), CT_METH_FK, "a copy on a CUDA device (self if already there)"},
    {"item", tensor_item, METH_NOARGS, "the value of a one-element tensor as a Python number"},
    {NULL},
};

PyMethodDef ct_core_tensor_methods[] = {{NULL}};
PyObject *ct_method_as_function(const char *fname, CtFastMethod method, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    if (nargs < 1 || !CtTensor_Check(args[0])) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' (position 1) must be Tensor, not %s", fname,
                     nargs < 1 ? "nothing" : Py_TYPE(args[0])->tp_name);
        return NULL;
    }
    return method(args[0], args + 1, nargs - 1, kwnames);
}

int ct_prepend_self(PyObject **all, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                    const char *fname)
{
    Py_ssize_t n = nargs + (kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0);
    if (n > 15) {
        PyErr_Format(PyExc_TypeError, "%s(): too many arguments", fname);
        return -1;
    }
    all[0] = self;
    for (Py_ssize_t i = 0; i < n; i++) {
        all[i + 1] = args[i];
    }
    return 0;
}

PyObject *ct_function_as_method(const char *fname, CtFastMethod fn, PyObject *self, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *all[16];
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) { /* as in PyTorch, methods take no out= */
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "out") == 0) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument 'out'", fname);
            return NULL;
        }
    }
    return ct_prepend_self(all, self, args, nargs, kwnames, fname) < 0 ? NULL : fn(NULL, all, nargs + 1, kwnames);
}

CT_FUNCTION_FROM_METHOD(clone, tensor_clone)
CT_FUNCTION_FROM_NOARGS_METHOD(detach, tensor_detach)

PyMethodDef ct_core_module_methods[] = {
    {"clone", CT_FASTCALL(function_clone), CT_METH_FK, "clone(input, *, memory_format=None): a copy"},
    {"detach", CT_FASTCALL(function_detach), CT_METH_FK, "detach(input): a view without autograd history"},
    {NULL},
};
PyType_Slot ct_core_tensor_slots[] = {{0, NULL}};

/* --- the type ------------------------------------------------------------------------------------ */
static PyObject *py_set_size_class(PyObject *self, PyObject *cls)
{
    Py_XSETREF(size_class, Py_NewRef(cls));
    Py_RETURN_NONE;
}

static PyMethodDef tensor_module_methods[] = {
    {"_set_size_class", py_set_size_class, METH_O, "registers ctorch.Size"},
    {NULL},
};

#define CT_FAMILY_SLOTS(name) ct_##name##_tensor_slots,
#define CT_FAMILY_METHODS(name) ct_##name##_tensor_methods,

int ct_tensor_init(PyObject *module)
{
    static PyMemberDef members[] = {
        {"__weaklistoffset__", T_PYSSIZET, offsetof(CtTensorObject, weakreflist), READONLY, NULL},
        {NULL},
    };
    static PyType_Slot base_slots[] = {
        {Py_tp_new, tensor_tp_new},
        {Py_tp_dealloc, tensor_dealloc},
        {Py_tp_traverse, tensor_traverse},
        {Py_tp_clear, tensor_clear},
        {Py_tp_getset, tensor_getset},
        {Py_tp_methods, tensor_core_methods},
        {Py_tp_members, members},
        {Py_tp_hash, tensor_hash},
        {Py_nb_float, tensor_float_slot},
        {Py_nb_int, tensor_int_slot},
        {Py_nb_index, tensor_index_slot},
        {Py_nb_bool, tensor_bool_slot},
        {Py_mp_length, tensor_len},
        {Py_sq_length, tensor_len},
        {Py_sq_contains, tensor_contains},
        {Py_tp_doc, "A multi-dimensional array on a device, with PyTorch's API."},
    };
    PyType_Slot *families[] = {CT_FAMILY_LIST(CT_FAMILY_SLOTS) NULL};
    PyType_Slot slots[128];
    size_t n = 0;
    for (size_t i = 0; i < sizeof(base_slots) / sizeof(base_slots[0]); i++) {
        slots[n++] = base_slots[i];
    }
    for (int f = 0; families[f] != NULL; f++) {
        for (PyType_Slot *s = families[f]; s->slot != 0; s++) {
            if (n + 1 >= sizeof(slots) / sizeof(slots[0])) {
                PyErr_SetString(PyExc_SystemError, "too many Tensor slots");
                return -1;
            }
            slots[n].slot = s->slot;
            slots[n++].pfunc = ct_autograd_slot(s->slot, s->pfunc);
        }
    }
    slots[n].slot = 0;
    slots[n].pfunc = NULL;
    PyType_Spec spec = {
        "ctorch.Tensor", sizeof(CtTensorObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
        slots,
    };
    CtTensor_Type = (PyTypeObject *)PyType_FromSpec(&spec);
    if (CtTensor_Type == NULL) {
        return -1;
    }
    /* Family methods go into the type's dict. */
    PyMethodDef *tables[] = {CT_FAMILY_LIST(CT_FAMILY_METHODS) NULL};
    for (int f = 0; tables[f] != NULL; f++) {
        for (PyMethodDef *m = tables[f]; m->ml_name != NULL; m++) {
            PyObject *descr = PyDescr_NewMethod(CtTensor_Type, m);
            if (descr == NULL || PyDict_SetItemString(CtTensor_Type->tp_dict, m->ml_name, descr) < 0) {
                Py_XDECREF(descr);
                return -1;
            }
            Py_DECREF(descr);
        }
    }
    PyType_Modified(CtTensor_Type);
    if (PyModule_AddObjectRef(module, "Tensor", (PyObject *)CtTensor_Type) < 0) {
        return -1;
    }
    return PyModule_AddFunctions(module, tensor_module_methods);
}
