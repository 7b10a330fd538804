/* numpy_interop.c: tensors from Python data and from other libraries' memory, and back:
 * tensor() (nested sequences, scalars, numpy arrays, tensors: always a copy), as_tensor() /
 * asarray() (no copy when nothing changes), from_numpy() / .numpy() / __array__ /
 * __array_interface__ (shared CPU memory, each export keeping the storage alive),
 * frombuffer(), tolist(), __iter__, DLPack (__dlpack__, __dlpack_device__, from_dlpack) and
 * pickling of tensors. */
#include "args.h"
#include "autograd.h"
#include "creation.h"
#include "device.h"
#include "numpy_api.h"
#include "random.h"
#include "registry.h"
#include "storage.h"
#include "tensor.h"
#include <string.h>

/* ------------------------------------------------------------------------------------------
 * numpy dtypes */
static int dtype_of_npy(int npy, CtDType *out)
{
    for (int d = 0; d < CT_NUM_DTYPES; d++) {
        if (ct_dtype_info[d].npy_type >= 0 && PyArray_EquivTypenums(ct_dtype_info[d].npy_type, npy)) {
            *out = (CtDType)d;
            return 0;
        }
    }
    return -1;
}

static int unsupported_array_dtype(PyArrayObject *arr)
{
    PyErr_Format(PyExc_TypeError,
                 "can't convert np.ndarray of type %s. The only supported types are: float64, float32, float16, "
                 "int64, int32, int16, int8, uint8, and bool.",
                 PyArray_DESCR(arr)->typeobj->tp_name);
    return -1;
}

/* Elements spanned by a strided layout (0 when empty). */
static int64_t extent_of(int nd, const int64_t *sizes, const int64_t *strides)
{
    int64_t e = 1;
    for (int i = 0; i < nd; i++) {
        if (sizes[i] == 0) {
            return 0;
        }
        e += (sizes[i] - 1) * strides[i];
    }
    return e;
}

/* A CPU tensor sharing arr's memory, with PyTorch's from_numpy checks. */
static CtTensorObject *wrap_array(PyArrayObject *arr)
{
    CtDType dtype;
    if (dtype_of_npy(PyArray_TYPE(arr), &dtype) < 0) {
        unsupported_array_dtype(arr);
        return NULL;
    }
    if (!PyArray_ISNOTSWAPPED(arr)) {
        PyErr_SetString(PyExc_ValueError, "given numpy array has byte order different from the native byte order. "
                                          "Conversion between byte orders is currently not supported.");
        return NULL;
    }
    int nd = PyArray_NDIM(arr);
    if (nd > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions, got %d", CT_MAX_DIMS, nd);
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    int64_t isz = (int64_t)ct_dtype_info[dtype].itemsize;
    bool empty = PyArray_SIZE(arr) == 0;
    for (int i = 0; i < nd; i++) {
        sizes[i] = PyArray_DIM(arr, i);
    }
    if (empty) {
        ct_contiguous_strides(nd, sizes, strides);
    }
    for (int i = 0; i < nd && !empty; i++) {
        npy_intp s = PyArray_STRIDE(arr, i);
        if (s % isz != 0) {
            PyErr_SetString(PyExc_ValueError, "given numpy array strides not a multiple of the element byte size. "
                                              "Copy the numpy array to reallocate the memory.");
            return NULL;
        }
        strides[i] = s / isz;
        if (strides[i] < 0) {
            PyErr_SetString(PyExc_ValueError,
                            "At least one stride in the given numpy array is negative, and tensors with negative "
                            "strides are not currently supported. (You can probably work around this by making a "
                            "copy of your array  with array.copy().) ");
            return NULL;
        }
    }
    size_t nbytes = (size_t)extent_of(nd, sizes, strides) * (size_t)isz;
    CtStorageObject *s = ct_storage_wrap(PyArray_DATA(arr), nbytes, ct_cpu(), (PyObject *)arr);
    if (s == NULL) {
        return NULL;
    }
    CtTensorObject *t = ct_tensor_new(s, 0, nd, sizes, strides, dtype);
    Py_DECREF(s);
    return t;
}

static bool is_numpy_scalar(PyObject *obj) { return PyArray_IsScalar(obj, Generic); }

/* from_numpy(ndarray): a tensor sharing the array's memory. */
static PyObject *py_from_numpy(PyObject *self, PyObject *arg)
{
    if (!PyArray_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "expected np.ndarray (got %s)", ct_type_name(arg));
        return NULL;
    }
    return (PyObject *)wrap_array((PyArrayObject *)arg);
}

/* ------------------------------------------------------------------------------------------
 * tensor(data): nested sequences
 *
 * Three passes, as PyTorch: the shape follows the first element of each level; the dtype
 * (unless given) promotes over every leaf; then every leaf is stored into a CPU tensor,
 * checking each level's length. Tensors and numpy arrays may appear at any level. */

/* The shape of data; ndim or -1. */
static int compute_sizes(PyObject *data, int64_t *sizes)
{
    int nd = 0;
    PyObject *cur = Py_NewRef(data);
    for (;;) {
        if (CtTensor_Check(cur) || PyArray_Check(cur)) {
            int tnd = CtTensor_Check(cur) ? CT_TENSOR(cur)->ndim : PyArray_NDIM((PyArrayObject *)cur);
            if (nd + tnd > CT_MAX_DIMS) {
                PyErr_Format(PyExc_ValueError, "too many dimensions '%s' (ctorch supports at most %d)",
                             ct_type_name(cur), CT_MAX_DIMS);
                Py_DECREF(cur);
                return -1;
            }
            for (int i = 0; i < tnd; i++) {
                sizes[nd++] = CtTensor_Check(cur) ? CT_TENSOR(cur)->sizes[i] : PyArray_DIM((PyArrayObject *)cur, i);
            }
            break;
        }
        if (PyUnicode_Check(cur) || PyBytes_Check(cur)) {
            if (nd > 0) {
                PyErr_Format(PyExc_ValueError, "too many dimensions '%s'", ct_type_name(cur));
                Py_DECREF(cur);
                return -1;
            }
            break;
        }
        if (!PySequence_Check(cur) || is_numpy_scalar(cur)) {
            break;
        }
        Py_ssize_t len = PySequence_Length(cur);
        if (len < 0) {
            Py_DECREF(cur);
            return -1;
        }
        if (nd == CT_MAX_DIMS) {
            PyErr_Format(PyExc_ValueError, "too many dimensions '%s' (ctorch supports at most %d)",
                         ct_type_name(cur), CT_MAX_DIMS);
            Py_DECREF(cur);
            return -1;
        }
        sizes[nd++] = len;
        if (len == 0) {
            break;
        }
        PyObject *next = PySequence_GetItem(cur, 0);
        Py_DECREF(cur);
        if (next == NULL) {
            return -1;
        }
        cur = next;
    }
    Py_DECREF(cur);
    return nd;
}

/* The dtype of a numpy scalar, or -1 with TypeError. */
static int numpy_scalar_dtype(PyObject *obj, CtDType *out)
{
    PyArray_Descr *descr = PyArray_DescrFromScalar(obj);
    if (descr == NULL) {
        return -1;
    }
    int r = dtype_of_npy(descr->type_num, out);
    Py_DECREF(descr);
    if (r < 0) {
        PyErr_Format(PyExc_TypeError, "can't convert %s to a tensor: unsupported numpy dtype", ct_type_name(obj));
    }
    return r;
}

/* Promotes *acc with the dtype PyTorch infers for obj (recursing into sequences down to ndim). */
static int infer_dtype(PyObject *obj, int depth, int ndim, CtDType *acc, bool *have)
{
    CtDType d;
    if (PyBool_Check(obj)) {
        d = CT_BOOL;
    } else if (is_numpy_scalar(obj)) {
        if (numpy_scalar_dtype(obj, &d) < 0) {
            return -1;
        }
    } else if (PyLong_Check(obj)) {
        d = CT_I64;
    } else if (PyFloat_Check(obj)) {
        d = ct_default_float_dtype;
    } else if (CtTensor_Check(obj)) {
        d = CT_TENSOR(obj)->dtype;
    } else if (PyArray_Check(obj)) {
        if (dtype_of_npy(PyArray_TYPE((PyArrayObject *)obj), &d) < 0) {
            return unsupported_array_dtype((PyArrayObject *)obj);
        }
    } else if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", ct_type_name(obj));
        return -1;
    } else if (PyComplex_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "new(): invalid data type 'complex' (ctorch has no complex dtypes)");
        return -1;
    } else if (PySequence_Check(obj)) {
        if (depth >= ndim) {
            return 0; /* deeper than the shape: storing it raises the right error */
        }
        PyObject *seq = PySequence_Fast(obj, "not a sequence");
        if (seq == NULL) {
            return -1;
        }
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (infer_dtype(PySequence_Fast_GET_ITEM(seq, i), depth + 1, ndim, acc, have) < 0) {
                Py_DECREF(seq);
                return -1;
            }
        }
        Py_DECREF(seq);
        return 0;
    } else {
        PyErr_Format(PyExc_RuntimeError, "Could not infer dtype of %s", ct_type_name(obj));
        return -1;
    }
    *acc = *have ? ct_promote_types(*acc, d) : d;
    *have = true;
    return 0;
}

/* Stores one Python scalar at p as dtype (PyTorch's tensor() conversions and checks). */
static int store_scalar(PyObject *obj, CtDType dtype, char *p)
{
    if (CtTensor_Check(obj) || (PyArray_Check(obj) && PyArray_NDIM((PyArrayObject *)obj) == 0)) {
        CtScalar s;
        if (CtTensor_Check(obj)) {
            if (ct_item(CT_TENSOR(obj), &s) < 0) {
                return -1;
            }
        } else {
            PyObject *item = PyArray_ToScalar(PyArray_DATA((PyArrayObject *)obj), (PyArrayObject *)obj);
            int r = item != NULL ? store_scalar(item, dtype, p) : -1;
            Py_XDECREF(item);
            return r;
        }
        if (!ct_is_floating(dtype) && dtype != CT_BOOL && ct_check_scalar_fits(&s, dtype, false) < 0) {
            return -1;
        }
        if (s.kind == CT_KIND_FLOAT) {
            ct_store_double(dtype, p, s.v.d);
        } else {
            ct_store_int64(dtype, p, s.kind == CT_KIND_INT ? s.v.i : s.v.b);
        }
        return 0;
    }
    if (ct_is_floating(dtype)) {
        double d;
        if (PyFloat_CheckExact(obj)) {
            d = PyFloat_AS_DOUBLE(obj);
        } else if (PyLong_Check(obj)) {
            d = PyLong_AsDouble(obj);
        } else {
            d = PyFloat_AsDouble(obj);
        }
        if (d == -1.0 && PyErr_Occurred()) {
            return -1;
        }
        ct_store_double(dtype, p, d);
        return 0;
    }
    if (dtype == CT_BOOL) {
        if (!PyNumber_Check(obj) || PySequence_Check(obj)) {
            PyErr_Format(PyExc_TypeError, "must be real number, not %s", ct_type_name(obj));
            return -1;
        }
        int v = PyObject_IsTrue(obj);
        if (v < 0) {
            return -1;
        }
        *(bool *)p = v;
        return 0;
    }
    CtScalar s = {CT_KIND_INT, {.i = 0}};
    if (PyFloat_Check(obj) || PyArray_IsScalar(obj, Floating)) {
        s.kind = CT_KIND_FLOAT;
        s.v.d = PyFloat_AsDouble(obj);
        if (s.v.d == -1.0 && PyErr_Occurred()) {
            return -1;
        }
    } else {
        PyObject *idx = PyLong_Check(obj) ? Py_NewRef(obj) : PyNumber_Index(obj);
        if (idx == NULL) {
            return -1;
        }
        int overflow = 0;
        s.v.i = PyLong_AsLongLongAndOverflow(idx, &overflow);
        Py_DECREF(idx);
        if (overflow) {
            PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
            return -1;
        }
        if (s.v.i == -1 && PyErr_Occurred()) {
            return -1;
        }
    }
    if (ct_check_scalar_fits(&s, dtype, false) < 0) {
        return -1;
    }
    ct_store_int64(dtype, p, s.kind == CT_KIND_FLOAT ? (int64_t)s.v.d : s.v.i);
    return 0;
}

static int length_error(int64_t expected, int dim, int64_t got)
{
    PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got %lld)", (long long)expected, dim,
                 (long long)got);
    return -1;
}

/* Stores obj (the sub-array at dim) into out at element offset `offset`. */
static int store(PyObject *obj, int dim, CtTensorObject *out, int64_t offset)
{
    int nd = out->ndim;
    size_t isz = ct_itemsize(out);
    if (dim == nd) {
        return store_scalar(obj, out->dtype, (char *)out->storage->data + offset * (int64_t)isz);
    }
    if (CtTensor_Check(obj) || PyArray_Check(obj)) {
        /* a whole sub-tensor: shapes must agree, then one strided copy */
        CtTensorObject *src = CtTensor_Check(obj) ? (CtTensorObject *)Py_NewRef(obj) : wrap_array((PyArrayObject *)obj);
        if (src == NULL) {
            return -1;
        }
        int r = 0;
        if (src->ndim != nd - dim) {
            r = length_error(out->sizes[dim], dim, src->ndim > 0 ? src->sizes[0] : 0);
        }
        for (int i = 0; r == 0 && i < src->ndim; i++) {
            if (src->sizes[i] != out->sizes[dim + i]) {
                r = length_error(out->sizes[dim + i], dim + i, src->sizes[i]);
            }
        }
        if (r == 0) {
            CtTensorObject *view = ct_view_of(out, nd - dim, out->sizes + dim, out->strides + dim, offset);
            r = view != NULL ? ct_copy_(view, src) : -1;
            Py_XDECREF(view);
        }
        Py_DECREF(src);
        return r;
    }
    if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", ct_type_name(obj));
        return -1;
    }
    PyObject *seq = PySequence_Fast(obj, "not a sequence");
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int r = 0;
    if (n != out->sizes[dim]) {
        r = length_error(out->sizes[dim], dim, n);
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    int64_t stride = out->strides[dim];
    if (dim == nd - 1) { /* the innermost level: scalars, stored directly */
        char *base = (char *)out->storage->data + offset * (int64_t)isz;
        CtDType dtype = out->dtype;
        for (Py_ssize_t i = 0; r == 0 && i < n; i++) {
            PyObject *item = items[i];
            char *p = base + i * stride * (int64_t)isz;
            if (dtype == CT_F32 && PyFloat_CheckExact(item)) {
                *(float *)p = (float)PyFloat_AS_DOUBLE(item);
            } else if (dtype == CT_F64 && PyFloat_CheckExact(item)) {
                *(double *)p = PyFloat_AS_DOUBLE(item);
            } else if (dtype == CT_I64 && PyLong_CheckExact(item)) {
                int overflow = 0;
                long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
                if (overflow) {
                    PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
                    r = -1;
                }
                *(int64_t *)p = v;
            } else {
                r = store_scalar(item, dtype, p);
            }
        }
    } else {
        for (Py_ssize_t i = 0; r == 0 && i < n; i++) {
            r = store(items[i], dim + 1, out, offset + i * stride);
        }
    }
    Py_DECREF(seq);
    return r;
}

/* A new CPU tensor from nested Python data (not a tensor or ndarray). */
static CtTensorObject *tensor_from_sequence(PyObject *data, bool has_dtype, CtDType dtype)
{
    int64_t sizes[CT_MAX_DIMS];
    int nd = compute_sizes(data, sizes);
    if (nd < 0) {
        return NULL;
    }
    if (!has_dtype) {
        bool have = false;
        CtDType inferred = ct_default_float_dtype;
        if (infer_dtype(data, 0, nd, &inferred, &have) < 0) {
            return NULL;
        }
        dtype = have ? inferred : ct_default_float_dtype;
    }
    CtTensorObject *out = ct_empty(nd, sizes, dtype, ct_cpu());
    if (out == NULL) {
        return NULL;
    }
    if (store(data, 0, out, 0) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* Dense strides with the dims in the order of src's strides (PyTorch's infer_dense_strides:
 * an insertion sort of the dims, innermost first, where stride-0 dims keep their place). */
static void infer_dense_strides(const CtTensorObject *src, int64_t *strides)
{
    int nd = src->ndim, perm[CT_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        perm[i] = nd - 1 - i;
    }
    for (int i = 1; i < nd; i++) {
        int dim1 = i;
        for (int dim0 = i - 1; dim0 >= 0; dim0--) {
            int a = perm[dim0], b = perm[dim1];
            int64_t sa = src->strides[a], sb = src->strides[b];
            int cmp = (sa == 0 || sb == 0) ? 0 : sa < sb ? -1 : sa > sb ? 1 : src->sizes[a] > src->sizes[b] ? 1 : 0;
            if (cmp > 0) {
                perm[dim0] = b;
                perm[dim1] = a;
                dim1 = dim0;
            } else if (cmp < 0) {
                break;
            }
        }
    }
    int64_t cur = 1;
    for (int i = 0; i < nd; i++) {
        strides[perm[i]] = cur;
        if (src->sizes[perm[i]] > 1) {
            cur *= src->sizes[perm[i]];
        }
    }
}

/* A copy of src with dtype on device in src's dim order (PyTorch's tensor() / _to_copy). */
static CtTensorObject *copy_preserve(CtTensorObject *src, CtDType dtype, CtDevice device)
{
    CtTensorObject *out = ct_empty(src->ndim, src->sizes, dtype, device);
    if (out == NULL) {
        return NULL;
    }
    if (!ct_is_contiguous(src) && ct_numel(src) > 0) {
        infer_dense_strides(src, out->strides); /* same storage size, another layout */
    }
    if (ct_copy_(out, src) < 0) {
        Py_CLEAR(out);
    }
    return out;
}

/* A CPU tensor viewing (wrap) an ndarray or numpy scalar; new reference. */
static CtTensorObject *wrap_numpy_object(PyObject *data)
{
    if (PyArray_Check(data)) {
        return wrap_array((PyArrayObject *)data);
    }
    PyObject *arr = PyArray_FromScalar(data, NULL);
    if (arr == NULL) {
        return NULL;
    }
    CtTensorObject *t = wrap_array((PyArrayObject *)arr);
    Py_DECREF(arr);
    return t;
}

/* The body of tensor(): always a new tensor that owns its memory. */
static CtTensorObject *tensor_from_data(PyObject *data, bool has_dtype, CtDType dtype, bool has_device, CtDevice device)
{
    CtTensorObject *src = NULL, *out = NULL;
    if (CtTensor_Check(data)) {
        src = (CtTensorObject *)Py_NewRef(data);
    } else if (PyArray_Check(data) || is_numpy_scalar(data)) {
        src = wrap_numpy_object(data);
    } else if (PyUnicode_Check(data) || PyBytes_Check(data)) {
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", ct_type_name(data));
        return NULL;
    } else {
        out = tensor_from_sequence(data, has_dtype, dtype);
        if (out == NULL || device.type == CT_DEV_CPU) { /* without device=: ct_default_device's */
            return out;
        }
        CtTensorObject *moved = ct_to(out, out->dtype, device, false);
        Py_DECREF(out);
        return moved;
    }
    if (src == NULL) {
        return NULL;
    }
    out = copy_preserve(src, has_dtype ? dtype : src->dtype, has_device ? device : ct_device_of(src));
    Py_DECREF(src);
    return out;
}

static int set_requires_grad(CtTensorObject *t, bool requires_grad)
{
    if (requires_grad && !ct_is_floating(t->dtype)) {
        PyErr_SetString(PyExc_RuntimeError, "Only Tensors of floating point and complex dtype can require gradients");
        return -1;
    }
    t->requires_grad = requires_grad;
    return 0;
}

/* Parses dtype=/device= with the factories' TypeErrors. */
static int dtype_device_args(const char *fname, PyObject *dtype_obj, PyObject *device_obj, CtFactoryOptions *opt)
{
    PyObject *kw[CT_FACTORY_NKW] = {NULL, dtype_obj, NULL, device_obj, NULL, NULL, NULL};
    return ct_factory_options(fname, kw, opt);
}

/* The same for tensor / as_tensor / asarray, which torch.set_default_device's device reaches as if
 * passed as device= (so a tensor argument moves there too). */
static int data_factory_args(const char *fname, PyObject *dtype_obj, PyObject *device_obj, CtFactoryOptions *opt)
{
    if (dtype_device_args(fname, dtype_obj, device_obj, opt) < 0) {
        return -1;
    }
    opt->has_device = opt->has_device || opt->default_device;
    return 0;
}

/* tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) */
static PyObject *py_tensor(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"data", "*dtype", "*device", "*requires_grad", "*pin_memory", NULL};
    PyObject *a[5];
    CtFactoryOptions opt;
    bool requires_grad = false, pin = false;
    if (ct_parse_args("tensor", args, nargs, kwnames, names, 1, a) < 0 ||
        data_factory_args("tensor", a[1], a[2], &opt) < 0 || ct_bool_arg("tensor", "requires_grad", a[3], &requires_grad) < 0 ||
        ct_bool_arg("tensor", "pin_memory", a[4], &pin) < 0) {
        return NULL;
    }
    CtTensorObject *t = ct_factory_pin(tensor_from_data(a[0], opt.has_dtype, opt.dtype, opt.has_device, opt.device), pin);
    if (t != NULL && set_requires_grad(t, requires_grad) < 0) {
        Py_CLEAR(t);
    }
    return (PyObject *)t;
}

/* Tensor.new_tensor(data, *, dtype=None, device=None, requires_grad=False): dtype and device
 * default to self's. */
static PyObject *tensor_new_tensor(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"data", "*dtype", "*device", "*requires_grad", "*pin_memory", "*layout", NULL};
    PyObject *a[6];
    CtFactoryOptions opt;
    bool requires_grad = false, pin = false;
    CtTensorObject *base = CT_TENSOR(self);
    if (ct_parse_args("new_tensor", args, nargs, kwnames, names, 1, a) < 0 ||
        dtype_device_args("new_tensor", a[1], a[2], &opt) < 0 ||
        ct_bool_arg("new_tensor", "requires_grad", a[3], &requires_grad) < 0 ||
        ct_bool_arg("new_tensor", "pin_memory", a[4], &pin) < 0) {
        return NULL;
    }
    CtTensorObject *t = ct_factory_pin(tensor_from_data(a[0], true, opt.has_dtype ? opt.dtype : base->dtype, true,
                                                        opt.has_device ? opt.device : ct_device_of(base)), pin);
    if (t != NULL && set_requires_grad(t, requires_grad) < 0) {
        Py_CLEAR(t);
    }
    return (PyObject *)t;
}

/* The body of as_tensor(): shares memory with tensors and arrays when dtype and device allow. */
static CtTensorObject *as_tensor_impl(PyObject *data, CtFactoryOptions *opt)
{
    if (CtTensor_Check(data) || PyArray_Check(data)) {
        CtTensorObject *src = CtTensor_Check(data) ? (CtTensorObject *)Py_NewRef(data) : wrap_array((PyArrayObject *)data);
        if (src == NULL) {
            return NULL;
        }
        CtTensorObject *t = ct_to(src, opt->has_dtype ? opt->dtype : src->dtype,
                                  opt->has_device ? opt->device : ct_device_of(src), false);
        Py_DECREF(src);
        return t;
    }
    return tensor_from_data(data, opt->has_dtype, opt->dtype, opt->has_device, opt->device);
}

/* as_tensor(data, dtype=None, device=None) */
static PyObject *py_as_tensor(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"data", "dtype", "device", NULL};
    PyObject *a[3];
    CtFactoryOptions opt;
    if (ct_parse_args("as_tensor", args, nargs, kwnames, names, 1, a) < 0 ||
        data_factory_args("as_tensor", a[1], a[2], &opt) < 0) {
        return NULL;
    }
    return (PyObject *)as_tensor_impl(a[0], &opt);
}

/* asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) */
static PyObject *py_asarray(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"obj", "*dtype", "*device", "*copy", "*requires_grad", NULL};
    PyObject *a[5];
    CtFactoryOptions opt;
    bool requires_grad = false;
    if (ct_parse_args("asarray", args, nargs, kwnames, names, 1, a) < 0 ||
        data_factory_args("asarray", a[1], a[2], &opt) < 0 ||
        ct_bool_arg("asarray", "requires_grad", a[4], &requires_grad) < 0) {
        return NULL;
    }
    int copy = -1; /* None */
    if (a[3] != NULL && a[3] != Py_None && (copy = PyObject_IsTrue(a[3])) < 0) {
        return NULL;
    }
    CtTensorObject *t;
    if (copy == 1) {
        t = tensor_from_data(a[0], opt.has_dtype, opt.dtype, opt.has_device, opt.device);
    } else {
        t = as_tensor_impl(a[0], &opt);
        bool aliased = t != NULL && ((CtTensor_Check(a[0]) && t->storage == CT_TENSOR(a[0])->storage) ||
                                     (PyArray_Check(a[0]) && t->storage->owner == a[0]));
        if (t != NULL && copy == 0 && !aliased) {
            Py_CLEAR(t);
            PyErr_SetString(PyExc_ValueError, "asarray(): copy=False but the result can't alias the input");
        }
    }
    if (t != NULL && requires_grad && set_requires_grad(t, true) < 0) {
        Py_CLEAR(t);
    }
    return (PyObject *)t;
}

/* frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False): shares the memory of
 * an object with the buffer protocol (a memoryview of it keeps the export alive). */
static PyObject *py_frombuffer(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"buffer", "*dtype", "*count", "*offset", "*requires_grad", NULL};
    PyObject *a[5];
    CtFactoryOptions opt;
    int64_t count = -1, offset = 0;
    bool requires_grad = false;
    if (ct_parse_args("frombuffer", args, nargs, kwnames, names, 2, a) < 0 ||
        dtype_device_args("frombuffer", a[1], NULL, &opt) < 0 || ct_arg_int64(a[2], &count) < 0 ||
        ct_arg_int64(a[3], &offset) < 0 || ct_bool_arg("frombuffer", "requires_grad", a[4], &requires_grad) < 0) {
        return NULL;
    }
    PyObject *view = PyMemoryView_FromObject(a[0]);
    if (view == NULL) {
        return NULL;
    }
    Py_buffer *buf = PyMemoryView_GET_BUFFER(view);
    int64_t len = (int64_t)buf->len, isz = (int64_t)ct_dtype_info[opt.dtype].itemsize;
    CtTensorObject *t = NULL;
    if (!PyBuffer_IsContiguous(buf, 'C')) {
        PyErr_SetString(PyExc_ValueError, "frombuffer(): the buffer must be contiguous");
    } else if (len <= 0 || count == 0) {
        PyErr_Format(PyExc_ValueError, "both buffer length (%lld) and count (%lld) must not be 0", (long long)len,
                     (long long)count);
    } else if (offset < 0 || offset >= len) {
        PyErr_Format(PyExc_ValueError,
                     "offset (%lld bytes) must be non-negative and no greater than buffer length (%lld bytes) minus 1",
                     (long long)offset, (long long)len);
    } else if (count < 0 && (len - offset) % isz != 0) {
        PyErr_Format(PyExc_ValueError,
                     "buffer length (%lld bytes) after offset (%lld bytes) must be a multiple of element size (%lld)",
                     (long long)len, (long long)offset, (long long)isz);
    } else if (count > 0 && count > (len - offset) / isz) {
        PyErr_Format(PyExc_ValueError,
                     "requested buffer length (%lld * %lld bytes) after offset (%lld bytes) must not be greater than "
                     "actual buffer length (%lld bytes)",
                     (long long)count, (long long)isz, (long long)offset, (long long)len);
    } else {
        int64_t n = count < 0 ? (len - offset) / isz : count, stride = 1;
        CtStorageObject *s = ct_storage_wrap((char *)buf->buf + offset, (size_t)(n * isz), ct_cpu(), view);
        if (s != NULL) {
            t = ct_tensor_new(s, 0, 1, &n, &stride, opt.dtype);
            Py_DECREF(s);
        }
        if (t != NULL && set_requires_grad(t, requires_grad) < 0) {
            Py_CLEAR(t);
        }
    }
    Py_DECREF(view);
    return (PyObject *)t;
}

/* ------------------------------------------------------------------------------------------
 * back to numpy and Python */

/* .numpy(force=False): shares memory with a CPU tensor (the array keeps the tensor alive). */
static PyObject *tensor_numpy(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"*force", NULL};
    PyObject *a[1];
    bool force = false;
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_parse_args("numpy", args, nargs, kwnames, names, 0, a) < 0 || ct_arg_bool(a[0], &force) < 0) {
        return NULL;
    }
    if (ct_device_of(t).type != CT_DEV_CPU || (force && t->requires_grad)) {
        if (!force) {
            char buf[32];
            ct_device_str(ct_device_of(t), buf, sizeof(buf));
            PyErr_Format(PyExc_TypeError,
                         "can't convert %s device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
                         "memory first.",
                         buf);
            return NULL;
        }
        /* force: a detached CPU alias or copy */
        CtTensorObject *c = ct_device_of(t).type == CT_DEV_CPU ? ct_view_of(t, t->ndim, t->sizes, t->strides, t->offset)
                                                               : ct_to(t, t->dtype, ct_cpu(), false);
        if (c == NULL) {
            return NULL;
        }
        PyObject *r = tensor_numpy((PyObject *)c, NULL, 0, NULL);
        Py_DECREF(c);
        return r;
    }
    if (t->requires_grad && ct_grad_enabled) { /* as PyTorch: allowed under no_grad (custom Function forward) */
        PyErr_SetString(PyExc_RuntimeError,
                        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
        return NULL;
    }
    int npy = ct_dtype_info[t->dtype].npy_type;
    if (npy < 0) {
        PyErr_Format(PyExc_TypeError, "Got unsupported ScalarType %s", ct_scalar_type_name(t->dtype));
        return NULL;
    }
    npy_intp dims[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        dims[i] = (npy_intp)t->sizes[i];
        strides[i] = (npy_intp)(t->strides[i] * (int64_t)ct_itemsize(t));
    }
    PyObject *arr = PyArray_New(&PyArray_Type, t->ndim, dims, npy, strides, ct_data(t), 0, NPY_ARRAY_WRITEABLE, NULL);
    if (arr == NULL) {
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)arr, Py_NewRef(self)) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    PyArray_UpdateFlags((PyArrayObject *)arr, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    return arr;
}

/* __array__(dtype=None, copy=None): numpy 2's protocol. */
static PyObject *tensor_array(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dtype", "*copy", NULL};
    PyObject *a[2];
    if (ct_parse_args("__array__", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    int copy = -1;
    if (a[1] != NULL && a[1] != Py_None && (copy = PyObject_IsTrue(a[1])) < 0) {
        return NULL;
    }
    PyObject *arr = tensor_numpy(self, NULL, 0, NULL);
    if (arr == NULL) {
        return NULL;
    }
    PyArray_Descr *want = NULL;
    if (a[0] != NULL && a[0] != Py_None && !PyArray_DescrConverter(a[0], &want)) {
        Py_DECREF(arr);
        return NULL;
    }
    bool needs_cast = want != NULL && !PyArray_EquivTypes(want, PyArray_DESCR((PyArrayObject *)arr));
    if (copy == 0 && (needs_cast || ct_device_of(t).type != CT_DEV_CPU)) {
        Py_XDECREF(want);
        Py_DECREF(arr);
        PyErr_SetString(PyExc_ValueError, "Unable to avoid copy while creating an array as requested.");
        return NULL;
    }
    if (needs_cast || copy == 1) {
        PyArray_Descr *d = want != NULL ? want : (PyArray_Descr *)Py_NewRef(PyArray_DESCR((PyArrayObject *)arr));
        want = NULL;
        PyObject *c = PyArray_FromAny(arr, d, 0, 0, NPY_ARRAY_ENSURECOPY | NPY_ARRAY_DEFAULT, NULL); /* steals d */
        Py_DECREF(arr);
        return c;
    }
    Py_XDECREF(want);
    return arr;
}

/* __array_interface__ (version 3) for CPU tensors of numpy's dtypes; AttributeError otherwise
 * so that numpy falls back to __array__, which raises PyTorch's errors. Attached to Tensor as a
 * property by python/ctorch/_tensor.py. */
static PyObject *py_array_interface(PyObject *module, PyObject *self)
{
    if (!CtTensor_Check(self)) {
        PyErr_SetString(PyExc_TypeError, "_array_interface(): expected a Tensor");
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_device_of(t).type != CT_DEV_CPU || t->requires_grad || ct_dtype_info[t->dtype].npy_type < 0) {
        PyErr_SetString(PyExc_AttributeError, "__array_interface__ is only provided for CPU tensors of numpy dtypes");
        return NULL;
    }
    static const char kinds[CT_NUM_DTYPES] = {[CT_BOOL] = 'b', [CT_U8] = 'u', [CT_I8] = 'i', [CT_I16] = 'i',
                                              [CT_I32] = 'i',  [CT_I64] = 'i', [CT_F16] = 'f', [CT_BF16] = 'f',
                                              [CT_F32] = 'f',  [CT_F64] = 'f'};
    size_t isz = ct_itemsize(t);
    const union {
        uint16_t u;
        uint8_t b[2];
    } probe = {1};
    char order = isz == 1 ? '|' : probe.b[0] ? '<' : '>';
    PyObject *shape = PyTuple_New(t->ndim), *strides = PyTuple_New(t->ndim);
    for (int i = 0; shape != NULL && strides != NULL && i < t->ndim; i++) {
        PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(t->sizes[i]));
        PyTuple_SET_ITEM(strides, i, PyLong_FromLongLong(t->strides[i] * (int64_t)isz));
    }
    if (shape == NULL || strides == NULL || PyErr_Occurred()) {
        Py_XDECREF(shape);
        Py_XDECREF(strides);
        return NULL;
    }
    return Py_BuildValue("{s:N,s:s#,s:(NO),s:N,s:i}", "shape", shape, "typestr",
                         (char[]){order, kinds[t->dtype], (char)('0' + isz), 0}, (Py_ssize_t)3, "data",
                         PyLong_FromVoidPtr(ct_data(t)), Py_False, "strides", strides, "version", 3);
}

/* __array_wrap__(array, context=None, return_scalar=False): numpy ufuncs applied to a tensor
 * give a tensor back (bool results become uint8, as in PyTorch). */
static PyObject *tensor_array_wrap(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"array", "context", "return_scalar", NULL};
    PyObject *a[3];
    if (ct_parse_args("__array_wrap__", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    if (!PyArray_Check(a[0])) {
        return Py_NewRef(a[0]);
    }
    PyArrayObject *arr = (PyArrayObject *)a[0];
    if (PyArray_TYPE(arr) == NPY_BOOL) {
        PyObject *u8 = PyArray_Cast(arr, NPY_UINT8);
        if (u8 == NULL) {
            return NULL;
        }
        PyObject *r = (PyObject *)wrap_array((PyArrayObject *)u8);
        Py_DECREF(u8);
        return r;
    }
    return (PyObject *)wrap_array(arr);
}

/* Python scalar of the element at p. */
static PyObject *element_to_python(CtDType dtype, const char *p)
{
    if (dtype == CT_BOOL) {
        return PyBool_FromLong(*(const bool *)p);
    }
    switch (dtype) {
#define CT_TOLIST_CASE(NAME, ctype, acctype, pyname, npy, dlc, dlb, KIND, ...) \
    case CT_##NAME:                                                         \
        return KIND == CT_KIND_FLOAT ? PyFloat_FromDouble((double)CT_LOAD_##NAME(p)) \
                                     : PyLong_FromLongLong((long long)CT_LOAD_##NAME(p));
        CT_DTYPE_LIST(CT_TOLIST_CASE)
#undef CT_TOLIST_CASE
    default:
        Py_RETURN_NONE;
    }
}

static PyObject *tolist_rec(const CtTensorObject *t, const char *p, int dim)
{
    if (dim == t->ndim) {
        return element_to_python(t->dtype, p);
    }
    int64_t n = t->sizes[dim], step = t->strides[dim] * (int64_t)ct_itemsize(t);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (int64_t i = 0; list != NULL && i < n; i++) {
        PyObject *item = tolist_rec(t, p + i * step, dim + 1);
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

/* tolist(): nested lists of Python scalars (a scalar for a 0-d tensor). */
static PyObject *tensor_tolist(PyObject *self, PyObject *unused)
{
    CtTensorObject *t = ct_to(CT_TENSOR(self), CT_TENSOR(self)->dtype, ct_cpu(), false);
    if (t == NULL) {
        return NULL;
    }
    PyObject *r = tolist_rec(t, ct_data(t), 0);
    Py_DECREF(t);
    return r;
}

/* iter(t): over dim 0, as iter(t.unbind(0)). */
static PyObject *tensor_iter(PyObject *self)
{
    if (CT_TENSOR(self)->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor");
        return NULL;
    }
    PyObject *parts = ct_call_method(self, "unbind", "i", 0);
    if (parts == NULL) {
        return NULL;
    }
    PyObject *it = PyObject_GetIter(parts);
    Py_DECREF(parts);
    return it;
}

/* ------------------------------------------------------------------------------------------
 * DLPack (the structs of dlpack.h v1.0, written from the specification) */
typedef struct {
    int32_t device_type; /* kDLCPU 1, kDLCUDA 2, kDLCUDAHost 3 */
    int32_t device_id;
} DLDevice;

typedef struct {
    uint8_t code; /* kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6 */
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* elements; NULL means compact row-major */
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

#define CT_DLPACK_FLAG_READ_ONLY (1ULL << 0)
#define CT_DLPACK_FLAG_IS_COPIED (1ULL << 1)
#define CT_DL_CPU 1
#define CT_DL_CUDA 2
#define CT_DL_CUDA_HOST 3

/* One allocation per export: the managed struct, the shape/strides it points to, and the
 * storage reference that keeps the memory alive until the consumer calls the deleter. */
typedef struct {
    DLManagedTensor legacy;
    DLManagedTensorVersioned versioned;
    CtStorageObject *storage;
    int64_t shape[CT_MAX_DIMS];
    int64_t strides[CT_MAX_DIMS];
} ExportCtx;

static void export_release(ExportCtx *ctx)
{
    if (ctx == NULL) {
        return;
    }
    if (!Py_IsInitialized()) {
        return; /* the interpreter is gone: the memory goes with the process */
    }
    PyGILState_STATE st = PyGILState_Ensure();
    Py_XDECREF(ctx->storage);
    PyMem_RawFree(ctx);
    PyGILState_Release(st);
}
static void deleter_legacy(DLManagedTensor *self) { export_release((ExportCtx *)self->manager_ctx); }
static void deleter_versioned(DLManagedTensorVersioned *self) { export_release((ExportCtx *)self->manager_ctx); }

/* Capsule destructors: an unconsumed capsule still owns its tensor. */
static void capsule_destructor(PyObject *cap, const char *name, bool versioned)
{
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    if (PyCapsule_IsValid(cap, name)) {
        void *p = PyCapsule_GetPointer(cap, name);
        if (versioned) {
            DLManagedTensorVersioned *m = p;
            if (m->deleter) {
                m->deleter(m);
            }
        } else {
            DLManagedTensor *m = p;
            if (m->deleter) {
                m->deleter(m);
            }
        }
    }
    PyErr_Restore(et, ev, tb);
}
static void capsule_destructor_legacy(PyObject *cap) { capsule_destructor(cap, "dltensor", false); }
static void capsule_destructor_versioned(PyObject *cap) { capsule_destructor(cap, "dltensor_versioned", true); }

/* Parses a max_version tuple; 1 when the consumer understands DLPack 1.x. */
static int wants_versioned(PyObject *max_version)
{
    if (max_version == NULL || max_version == Py_None) {
        return 0;
    }
    if (!PyTuple_Check(max_version) || PyTuple_GET_SIZE(max_version) < 1) {
        PyErr_SetString(PyExc_TypeError, "__dlpack__(): max_version must be a tuple (major, minor)");
        return -1;
    }
    long major = PyLong_AsLong(PyTuple_GET_ITEM(max_version, 0));
    if (major == -1 && PyErr_Occurred()) {
        return -1;
    }
    return major >= 1;
}

static int parse_dl_device(PyObject *obj, int32_t *type, int32_t *id)
{
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 2) {
        PyErr_SetString(PyExc_TypeError, "__dlpack__(): dl_device must be a tuple (device_type, device_id)");
        return -1;
    }
    long a = PyLong_AsLong(PyTuple_GET_ITEM(obj, 0)), b = PyLong_AsLong(PyTuple_GET_ITEM(obj, 1));
    if ((a == -1 || b == -1) && PyErr_Occurred()) {
        return -1;
    }
    *type = (int32_t)a;
    *id = (int32_t)b;
    return 0;
}

/* __dlpack__(stream=None, *, max_version=None, dl_device=None, copy=None) */
static PyObject *tensor_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"stream", "*max_version", "*dl_device", "*copy", NULL};
    PyObject *a[4];
    CtTensorObject *t = CT_TENSOR(self), *src = NULL;
    ExportCtx *ctx = NULL;
    PyObject *cap = NULL;
    if (ct_parse_args("__dlpack__", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    if (t->requires_grad) {
        PyErr_SetString(PyExc_BufferError, "Can't export tensors that require gradient, use tensor.detach()");
        return NULL;
    }
    int versioned = wants_versioned(a[1]);
    int copy = -1;
    if (versioned < 0 || (a[3] != NULL && a[3] != Py_None && (copy = PyObject_IsTrue(a[3])) < 0)) {
        return NULL;
    }
    /* CUDA streams: ctorch's CUDA work is ordered on the legacy default stream and the copies
     * it makes are synchronous, so there is nothing to wait for here. */
    CtDevice target = ct_device_of(t);
    if (a[2] != NULL && a[2] != Py_None) {
        int32_t type, id;
        if (parse_dl_device(a[2], &type, &id) < 0) {
            return NULL;
        }
        if (type == CT_DL_CPU) {
            target = ct_cpu();
        } else if (type != CT_DL_CUDA || target.type != CT_DEV_CUDA || id != target.index) {
            PyErr_Format(PyExc_BufferError, "__dlpack__(): cannot export to device (%d, %d)", type, id);
            return NULL;
        }
    }
    bool copied = copy == 1 || !ct_device_equal(target, ct_device_of(t));
    if (copied && copy == 0) {
        PyErr_SetString(PyExc_BufferError, "__dlpack__(): copy=False but the export needs a copy to another device");
        return NULL;
    }
    src = copied ? ct_to(t, t->dtype, target, true) : (CtTensorObject *)Py_NewRef(t);
    if (src == NULL) {
        goto error;
    }
    ctx = PyMem_RawCalloc(1, sizeof(ExportCtx));
    if (ctx == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    DLTensor dl;
    memset(&dl, 0, sizeof(dl));
    dl.data = ct_data(src);
    dl.device.device_type = target.type == CT_DEV_CPU ? CT_DL_CPU : CT_DL_CUDA;
    dl.device.device_id = target.type == CT_DEV_CPU ? 0 : target.index;
    dl.ndim = src->ndim;
    dl.dtype.code = (uint8_t)ct_dtype_info[src->dtype].dlpack_code;
    dl.dtype.bits = (uint8_t)ct_dtype_info[src->dtype].dlpack_bits;
    dl.dtype.lanes = 1;
    for (int i = 0; i < src->ndim; i++) {
        ctx->shape[i] = src->sizes[i];
        ctx->strides[i] = src->strides[i];
    }
    dl.shape = ctx->shape;
    dl.strides = ctx->strides;
    ctx->storage = (CtStorageObject *)Py_NewRef(src->storage);
    if (versioned) {
        ctx->versioned.version.major = 1;
        ctx->versioned.version.minor = 0;
        ctx->versioned.manager_ctx = ctx;
        ctx->versioned.deleter = deleter_versioned;
        ctx->versioned.flags = copied ? CT_DLPACK_FLAG_IS_COPIED : 0;
        ctx->versioned.dl_tensor = dl;
        cap = PyCapsule_New(&ctx->versioned, "dltensor_versioned", capsule_destructor_versioned);
    } else {
        ctx->legacy.dl_tensor = dl;
        ctx->legacy.manager_ctx = ctx;
        ctx->legacy.deleter = deleter_legacy;
        cap = PyCapsule_New(&ctx->legacy, "dltensor", capsule_destructor_legacy);
    }
    if (cap == NULL) {
        goto error;
    }
    Py_DECREF(src);
    return cap;
error:
    if (ctx != NULL) {
        Py_XDECREF(ctx->storage);
        PyMem_RawFree(ctx);
    }
    Py_XDECREF(src);
    return NULL;
}

/* __dlpack_device__() -> (device_type, device_id) */
static PyObject *tensor_dlpack_device(PyObject *self, PyObject *unused)
{
    CtDevice d = ct_device_of(CT_TENSOR(self));
    return Py_BuildValue("(ii)", d.type == CT_DEV_CPU ? CT_DL_CPU : CT_DL_CUDA, d.type == CT_DEV_CPU ? 0 : d.index);
}

/* The owner of imported memory: a capsule whose destructor calls the producer's deleter. */
static void owner_destructor(PyObject *cap)
{
    void *p = PyCapsule_GetPointer(cap, "ctorch.dlpack_owner");
    if (p == NULL) {
        PyErr_Clear();
        return;
    }
    if (PyCapsule_GetContext(cap) != NULL) {
        DLManagedTensorVersioned *m = p;
        if (m->deleter) {
            m->deleter(m);
        }
    } else {
        DLManagedTensor *m = p;
        if (m->deleter) {
            m->deleter(m);
        }
    }
}

static int dl_dtype(DLDataType t, CtDType *out)
{
    if (t.lanes == 1) {
        for (int d = 0; d < CT_NUM_DTYPES; d++) {
            if (ct_dtype_info[d].dlpack_code == t.code && ct_dtype_info[d].dlpack_bits == t.bits) {
                *out = (CtDType)d;
                return 0;
            }
        }
    }
    PyErr_Format(PyExc_BufferError, "from_dlpack(): unsupported DLPack dtype (code %d, bits %d, lanes %d)", t.code,
                 t.bits, t.lanes);
    return -1;
}

static const char invalid_capsule[] =
    "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once, so you might "
    "have already constructed a tensor from it once.";

/* A tensor over the memory of a DLPack capsule (consumed: renamed "used_..."). */
static CtTensorObject *tensor_from_capsule(PyObject *cap)
{
    bool versioned;
    void *managed;
    DLTensor *dl;
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        versioned = true;
        managed = PyCapsule_GetPointer(cap, "dltensor_versioned");
        DLManagedTensorVersioned *m = managed;
        if (m->version.major > 1) {
            PyErr_Format(PyExc_BufferError, "from_dlpack(): DLPack version %u.%u is not supported", m->version.major,
                         m->version.minor);
            return NULL;
        }
        dl = &m->dl_tensor;
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
        versioned = false;
        managed = PyCapsule_GetPointer(cap, "dltensor");
        dl = &((DLManagedTensor *)managed)->dl_tensor;
    } else {
        PyErr_SetString(PyExc_RuntimeError, invalid_capsule);
        return NULL;
    }
    CtDType dtype;
    CtDevice device;
    if (dl_dtype(dl->dtype, &dtype) < 0) {
        return NULL;
    }
    if (dl->device.device_type == CT_DL_CPU || dl->device.device_type == CT_DL_CUDA_HOST) {
        device = ct_cpu();
    } else if (dl->device.device_type == CT_DL_CUDA) {
        device.type = CT_DEV_CUDA;
        device.index = dl->device.device_id;
    } else {
        PyErr_Format(PyExc_BufferError, "from_dlpack(): unsupported device_type %d", dl->device.device_type);
        return NULL;
    }
    if (dl->ndim < 0 || dl->ndim > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "from_dlpack(): ctorch supports at most %d dimensions, got %d", CT_MAX_DIMS,
                     dl->ndim);
        return NULL;
    }
    int nd = dl->ndim;
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        sizes[i] = dl->shape[i];
        if (sizes[i] < 0) {
            PyErr_SetString(PyExc_BufferError, "from_dlpack(): negative size in the DLPack shape");
            return NULL;
        }
    }
    if (dl->strides == NULL) {
        ct_contiguous_strides(nd, sizes, strides);
    } else {
        for (int i = 0; i < nd; i++) {
            strides[i] = dl->strides[i];
            if (strides[i] < 0) {
                PyErr_SetString(PyExc_BufferError, "from_dlpack(): negative strides are not supported");
                return NULL;
            }
        }
    }
    size_t isz = ct_dtype_info[dtype].itemsize;
    size_t nbytes = (size_t)extent_of(nd, sizes, strides) * isz;
    void *data = (char *)dl->data + dl->byte_offset;
    /* From here the capsule is ours: its deleter runs when the owner goes away. */
    PyObject *owner = PyCapsule_New(managed, "ctorch.dlpack_owner", owner_destructor);
    if (owner == NULL) {
        return NULL;
    }
    if ((versioned && PyCapsule_SetContext(owner, (void *)1) < 0) ||
        PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0) {
        PyCapsule_SetDestructor(owner, NULL); /* the producer's capsule still owns it */
        Py_DECREF(owner);
        return NULL;
    }
    CtStorageObject *s = ct_storage_wrap(data, nbytes, device, owner);
    Py_DECREF(owner);
    if (s == NULL) {
        return NULL;
    }
    CtTensorObject *t = ct_tensor_new(s, 0, nd, sizes, strides, dtype);
    Py_DECREF(s);
    return t;
}

/* from_dlpack(ext_tensor): a tensor sharing the memory of any DLPack producer (or capsule). */
static PyObject *py_from_dlpack(PyObject *self, PyObject *obj)
{
    if (PyCapsule_CheckExact(obj)) {
        return (PyObject *)tensor_from_capsule(obj);
    }
    PyObject *method = PyObject_GetAttrString(obj, "__dlpack__");
    if (method == NULL) {
        PyErr_Clear();
        PyErr_SetString(PyExc_RuntimeError, invalid_capsule);
        return NULL;
    }
    /* Ask for a versioned capsule; producers that predate DLPack 1.0 reject the keyword. */
    PyObject *kwargs = Py_BuildValue("{s:(ii)}", "max_version", 1, 0);
    PyObject *empty = PyTuple_New(0);
    PyObject *cap = kwargs != NULL && empty != NULL ? PyObject_Call(method, empty, kwargs) : NULL;
    if (cap == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        cap = PyObject_CallNoArgs(method);
    }
    Py_XDECREF(kwargs);
    Py_XDECREF(empty);
    Py_DECREF(method);
    if (cap == NULL) {
        return NULL;
    }
    CtTensorObject *t = tensor_from_capsule(cap);
    Py_DECREF(cap);
    return (PyObject *)t;
}

/* ------------------------------------------------------------------------------------------
 * pickling: (ctorch._C._rebuild_tensor, (bytes, dtype, shape, requires_grad, device)) */
static PyObject *tensor_reduce_ex(PyObject *self, PyObject *protocol)
{
    CtTensorObject *t = CT_TENSOR(self);
    CtTensorObject *host = ct_to(t, t->dtype, ct_cpu(), false);
    CtTensorObject *flat = host != NULL ? ct_contiguous(host) : NULL;
    PyObject *bytes = NULL, *shape = NULL, *device = NULL, *rebuild = NULL, *result = NULL;
    if (flat == NULL) {
        goto done;
    }
    bytes = PyBytes_FromStringAndSize(ct_data(flat), (Py_ssize_t)(ct_numel(flat) * (int64_t)ct_itemsize(flat)));
    shape = ct_size_object(t->ndim, t->sizes);
    device = ct_device_object(ct_device_of(t));
    rebuild = PyObject_GetAttrString(PyImport_AddModule("ctorch._C"), "_rebuild_tensor");
    if (bytes == NULL || shape == NULL || device == NULL || rebuild == NULL) {
        goto done;
    }
    result = Py_BuildValue("(O(OOOOO))", rebuild, bytes, ct_dtype_object(t->dtype), shape,
                           t->requires_grad ? Py_True : Py_False, device);
done:
    Py_XDECREF(host);
    Py_XDECREF(flat);
    Py_XDECREF(bytes);
    Py_XDECREF(shape);
    Py_XDECREF(device);
    Py_XDECREF(rebuild);
    return result;
}

static PyObject *py_rebuild_tensor(PyObject *self, PyObject *args)
{
    PyObject *dtype_obj, *shape, *device_obj;
    const char *data;
    Py_ssize_t len;
    int requires_grad;
    CtDType dtype;
    CtDevice device;
    int64_t sizes[CT_MAX_DIMS];
    if (!PyArg_ParseTuple(args, "y#OOpO:_rebuild_tensor", &data, &len, &dtype_obj, &shape, &requires_grad,
                          &device_obj) ||
        ct_dtype_from_object(dtype_obj, &dtype) < 0 || ct_device_from_object(device_obj, &device) < 0) {
        return NULL;
    }
    int nd = ct_parse_size_arg("_rebuild_tensor", "shape", 3, shape, sizes);
    if (nd < 0) {
        return NULL;
    }
    CtTensorObject *t = ct_empty(nd, sizes, dtype, ct_cpu());
    if (t == NULL) {
        return NULL;
    }
    if ((Py_ssize_t)(ct_numel(t) * (int64_t)ct_itemsize(t)) != len) {
        Py_DECREF(t);
        PyErr_SetString(PyExc_ValueError, "_rebuild_tensor(): the data does not match the shape and dtype");
        return NULL;
    }
    if (len > 0) {
        memcpy(ct_data(t), data, (size_t)len);
    }
    if (device.type != CT_DEV_CPU) {
        CtTensorObject *moved = ct_to(t, dtype, device, false);
        Py_DECREF(t);
        t = moved;
    }
    if (t != NULL && set_requires_grad(t, requires_grad) < 0) {
        Py_CLEAR(t);
    }
    return (PyObject *)t;
}

/* ------------------------------------------------------------------------------------------ */
PyMethodDef ct_interop_tensor_methods[] = {
    {"numpy", CT_FASTCALL(tensor_numpy), CT_METH_FK, "numpy(*, force=False): a numpy array sharing memory"},
    {"__array__", CT_FASTCALL(tensor_array), CT_METH_FK, "__array__(dtype=None, copy=None)"},
    {"__array_wrap__", CT_FASTCALL(tensor_array_wrap), CT_METH_FK, "numpy ufunc results become tensors"},
    {"tolist", tensor_tolist, METH_NOARGS, "tolist(): nested lists of Python numbers"},
    {"new_tensor", CT_FASTCALL(tensor_new_tensor), CT_METH_FK, "new_tensor(data, dtype=None, device=None)"},
    {"__dlpack__", CT_FASTCALL(tensor_dlpack), CT_METH_FK,
     "__dlpack__(stream=None, *, max_version=None, dl_device=None, copy=None): a DLPack capsule"},
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS, "__dlpack_device__() -> (device_type, device_id)"},
    {"__reduce_ex__", tensor_reduce_ex, METH_O, "pickling support"},
    {NULL},
};

PyMethodDef ct_interop_module_methods[] = {
    {"tensor", CT_FASTCALL(py_tensor), CT_METH_FK, "tensor(data, *, dtype=None, device=None, requires_grad=False)"},
    {"as_tensor", CT_FASTCALL(py_as_tensor), CT_METH_FK, "as_tensor(data, dtype=None, device=None): no copy if possible"},
    {"asarray", CT_FASTCALL(py_asarray), CT_METH_FK, "asarray(obj, *, dtype=None, device=None, copy=None)"},
    {"from_numpy", py_from_numpy, METH_O, "from_numpy(ndarray): a tensor sharing the array's memory"},
    {"frombuffer", CT_FASTCALL(py_frombuffer), CT_METH_FK, "frombuffer(buffer, *, dtype, count=-1, offset=0)"},
    {"from_dlpack", py_from_dlpack, METH_O, "from_dlpack(ext_tensor): a tensor sharing a DLPack producer's memory"},
    {"_rebuild_tensor", py_rebuild_tensor, METH_VARARGS, "unpickling helper"},
    {"_array_interface", py_array_interface, METH_O, "Tensor.__array_interface__ (a property set in _tensor.py)"},
    {NULL},
};

PyType_Slot ct_interop_tensor_slots[] = {
    {Py_tp_iter, tensor_iter},
    {0, NULL},
};
