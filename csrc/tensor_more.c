/* tensor_more.c: Tensor methods and torch functions PyTorch 2.x has beyond the op families:
 *   in-place scans and addr_ (the op, then a copy into self; autograd records them with the
 *   out-of-place op's formula, find_formula's `name_` rule), the in-place samplers cauchy_ /
 *   log_normal_ / geometric_ (uniform_ / normal_ transformed in place), the method form of
 *   bernoulli, metadata and storage operations (as_strided_, resize_, resize_as_, set_,
 *   is_set_to, dim_order, new_empty_strided, const_data_ptr, (share_memory_ / is_shared: shared_memory.c),
 *   the CPU element callbacks apply_ / map_ / map2_, and torch.is_floating_point / get_device /
 *   is_storage / nonzero_static.
 * Numerics are compositions of existing recording ops, so every device runs them. */
#include "args.h"
#include "autograd_arena.h"
#include "autograd.h"
#include "creation.h" /* memory formats */
#include "device.h"
#include "dtype.h"
#include "elementwise.h" /* ct_can_cast */
#include "legacy_types.h"
#include "registry.h"
#include "storage.h"
#include "tensor.h"
#include <math.h>
#include <string.h>

/* --- helpers --------------------------------------------------------------------------------------------- */
/* obj.name(*args, **kw) through vectorcall: a new reference */
static PyObject *call_method_kw(PyObject *obj, const char *name, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    PyObject *all[16];
    if (ct_prepend_self(all, obj, args, nargs, kwnames, name) < 0) {
        return NULL;
    }
    PyObject *s = PyUnicode_FromString(name);
    PyObject *r = s != NULL ? PyObject_VectorcallMethod(s, all, (size_t)(nargs + 1), kwnames) : NULL;
    Py_XDECREF(s);
    return r;
}

/* self.copy_(r), returning self; steals r (NULL passes through) */
static PyObject *copy_into_self(PyObject *self, PyObject *r)
{
    if (r == NULL) {
        return NULL;
    }
    PyObject *done = ct_call_method(self, "copy_", "(O)", r);
    Py_DECREF(r);
    if (done == NULL) {
        return NULL;
    }
    Py_DECREF(done);
    return Py_NewRef(self);
}

/* --- cumsum_ / cumprod_ / addr_ ---------------------------------------------------------------------------- */
/* name_(dim, *, dtype=None): self = self.name(dim, dtype=dtype); PyTorch refuses another dtype and bool */
static PyObject *inplace_scan(const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    static const char *const names[] = {"dim", "*dtype", NULL};
    PyObject *a[2];
    char fname[16];
    snprintf(fname, sizeof(fname), "%s_", name);
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    CtDType dtype = t->dtype;
    if (a[1] != NULL && a[1] != Py_None && ct_dtype_from_object(a[1], &dtype) < 0) {
        return NULL;
    }
    if (dtype != t->dtype) {
        PyErr_Format(PyExc_RuntimeError, "Bad in-place call: input tensor dtype %s and output tensor dtype %s should match",
                     ct_cpp_type_name(t->dtype), ct_cpp_type_name(dtype));
        return NULL;
    }
    int64_t dim;
    int wrapped;
    if (ct_arg_int64(a[0], &dim) < 0 || ct_wrap_dim(dim, t->ndim, &wrapped) < 0) { /* before the dtype, as PyTorch */
        return NULL;
    }
    if (t->dtype == CT_BOOL) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s_out_%s\" not implemented for 'Bool'", name,
                     ct_device_of(t).type == CT_DEV_CPU ? "cpu" : "cuda");
        return NULL;
    }
    return copy_into_self(self, ct_call_method(self, name, "(O)", a[0]));
}

static PyObject *tensor_cumsum_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return inplace_scan("cumsum", self, args, nargs, kwnames);
}

static PyObject *tensor_cumprod_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return inplace_scan("cumprod", self, args, nargs, kwnames);
}

/* addr_(vec1, vec2, *, beta=1, alpha=1): self = addr(self, vec1, vec2), self 2-d of the outer product's shape */
static PyObject *tensor_addr_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"vec1", "vec2", "*beta", "*alpha", NULL};
    PyObject *a[4];
    if (ct_parse_args("addr_", args, nargs, kwnames, names, 2, a) < 0) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    if (t->ndim != 2) {
        PyErr_Format(PyExc_RuntimeError, "2D tensor expected, got %dD tensor for input", t->ndim);
        return NULL;
    }
    if (CtTensor_Check(a[0]) && CtTensor_Check(a[1]) && CT_TENSOR(a[0])->ndim == 1 && CT_TENSOR(a[1])->ndim == 1 &&
        (t->sizes[0] != CT_TENSOR(a[0])->sizes[0] || t->sizes[1] != CT_TENSOR(a[1])->sizes[0])) {
        PyErr_Format(PyExc_RuntimeError, "size mismatch, input: [%lld, %lld], v1: [%lld], v2: [%lld]",
                     (long long)t->sizes[0], (long long)t->sizes[1], (long long)CT_TENSOR(a[0])->sizes[0],
                     (long long)CT_TENSOR(a[1])->sizes[0]);
        return NULL;
    }
    PyObject *r = call_method_kw(self, "addr", args, nargs, kwnames);
    if (r != NULL && !ct_can_cast(CT_TENSOR(r)->dtype, t->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "result type %s can't be cast to the desired output type %s",
                     ct_scalar_type_name(CT_TENSOR(r)->dtype), ct_scalar_type_name(t->dtype));
        Py_CLEAR(r);
    }
    return copy_into_self(self, r);
}

/* --- in-place samplers ------------------------------------------------------------------------------------- */
/* The parameters (two floats: a location, then a scale that must be positive, named in names) and
 * generator= of a sampler, the dtype checked first by dtype_ok (which sets the error). 0 or -1. */
static int sampler_args(const char *fname, const char *const *names, PyObject *self, PyObject *const *args,
                        Py_ssize_t nargs, PyObject *kwnames, double *p, PyObject **generator,
                        int (*dtype_ok)(const CtTensorObject *t))
{
    PyObject *a[3];
    if (ct_parse_args(fname, args, nargs, kwnames, names, 0, a) < 0 || ct_arg_double(a[0], &p[0]) < 0 ||
        ct_arg_double(a[1], &p[1]) < 0 || dtype_ok(CT_TENSOR(self)) < 0) {
        return -1;
    }
    if (!(p[1] > 0.0)) {
        char v[32];
        snprintf(v, sizeof(v), "%g", p[1]); /* as C++'s ostream prints a double */
        PyErr_Format(PyExc_RuntimeError, "%s expects %s > 0.0, but found %s=%s", fname, names[1], names[1], v);
        return -1;
    }
    *generator = a[2] != NULL ? a[2] : Py_None;
    return 0;
}

static int cauchy_dtype(const CtTensorObject *t)
{
    if (!ct_is_floating(t->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "Cauchy distribution is a continuous probability distribution. dtype must "
                     "be a floating point but you specified %s", ct_cpp_type_name(t->dtype));
        return -1;
    }
    return 0;
}

static int log_normal_dtype(const CtTensorObject *t)
{
    if (!ct_is_floating(t->dtype)) {
        PyErr_Format(PyExc_NotImplementedError, "\"log_normal_%s\" not implemented for '%s'",
                     ct_device_of(t).type == CT_DEV_CPU ? "cpu" : "cuda", ct_scalar_type_name(t->dtype));
        return -1;
    }
    return 0;
}

/* self.uniform_(0, 1, generator=g): a new reference to self */
static PyObject *uniform_self(PyObject *self, PyObject *generator)
{
    PyObject *kw = Py_BuildValue("(s)", "generator");
    PyObject *args[3] = {PyFloat_FromDouble(0.0), PyFloat_FromDouble(1.0), generator};
    PyObject *r = kw != NULL && args[0] != NULL && args[1] != NULL ? call_method_kw(self, "uniform_", args, 2, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(args[0]);
    Py_XDECREF(args[1]);
    return r;
}

/* cauchy_(median=0, sigma=1, *, generator=None): median + sigma * tan(pi * (u - 1/2)) */
static PyObject *tensor_cauchy_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"median", "sigma", "*generator", NULL};
    double p[2] = {0.0, 1.0};
    PyObject *generator;
    if (sampler_args("cauchy_", names, self, args, nargs, kwnames, p, &generator, cauchy_dtype) < 0) {
        return NULL;
    }
    PyObject *u = uniform_self(self, generator);
    PyObject *r = u ? ct_call_method(u, "sub_", "(d)", 0.5) : NULL;
    Py_XDECREF(u);
    PyObject *steps[3] = {r ? ct_call_method(r, "mul_", "(d)", M_PI) : NULL, NULL, NULL};
    Py_XDECREF(r);
    steps[1] = steps[0] ? ct_call_method(steps[0], "tan_", NULL) : NULL;
    steps[2] = steps[1] ? ct_call_method(steps[1], "mul_", "(d)", p[1]) : NULL;
    r = steps[2] ? ct_call_method(steps[2], "add_", "(d)", p[0]) : NULL;
    for (int i = 0; i < 3; i++) {
        Py_XDECREF(steps[i]);
    }
    return r;
}

/* log_normal_(mean=1, std=2, *, generator=None): exp of normal_(mean, std) */
static PyObject *tensor_log_normal_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"mean", "std", "*generator", NULL};
    double p[2] = {1.0, 2.0};
    PyObject *generator;
    if (sampler_args("log_normal_", names, self, args, nargs, kwnames, p, &generator, log_normal_dtype) < 0) {
        return NULL;
    }
    PyObject *kw = Py_BuildValue("(s)", "generator");
    PyObject *ps[3] = {PyFloat_FromDouble(p[0]), PyFloat_FromDouble(p[1]), generator};
    PyObject *n = kw && ps[0] && ps[1] ? call_method_kw(self, "normal_", ps, 2, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(ps[0]);
    Py_XDECREF(ps[1]);
    PyObject *r = n ? ct_call_method(n, "exp_", NULL) : NULL;
    Py_XDECREF(n);
    return r;
}

/* geometric_(p, *, generator=None): ceil(log(u) / log1p(-p)) for u uniform in (0, 1], any dtype */
static PyObject *tensor_geometric_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"p", "*generator", NULL};
    PyObject *a[2], *u = NULL, *r = NULL, *lg = NULL, *q = NULL;
    double p = 0.0;
    if (ct_parse_args("geometric_", args, nargs, kwnames, names, 1, a) < 0 || ct_arg_double(a[0], &p) < 0) {
        return NULL;
    }
    if (!(p > 0.0 && p < 1.0)) {
        char v[32];
        snprintf(v, sizeof(v), "%g", p);
        PyErr_Format(PyExc_RuntimeError, "geometric_ expects p to be in (0, 1), but got p=%s", v);
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    /* draws in double (1 - u lies in (0, 1], so the log is finite), then cast into self */
    CtTensorObject *buf = ct_empty(t->ndim, t->sizes, CT_F64, ct_device_of(t));
    if (buf == NULL) {
        return NULL;
    }
    u = uniform_self((PyObject *)buf, a[1] != NULL ? a[1] : Py_None);
    q = u ? ct_call_method(u, "neg_", NULL) : NULL;
    lg = q ? ct_call_method(q, "log1p_", NULL) : NULL; /* log(1 - u) */
    r = lg ? ct_call_method(lg, "div_", "(d)", log1p(-p)) : NULL;
    Py_XSETREF(r, r ? ct_call_method(r, "ceil_", NULL) : NULL);
    PyObject *out = copy_into_self(self, r);
    Py_DECREF(buf);
    Py_XDECREF(u);
    Py_XDECREF(q);
    Py_XDECREF(lg);
    return out;
}

/* bernoulli(p=None, *, generator=None): torch.bernoulli(self, ...) */
static PyObject *function_bernoulli_call(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return ct_op("bernoulli", args, (size_t)nargs, kwnames);
}

static PyObject *tensor_bernoulli(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return ct_function_as_method("bernoulli", function_bernoulli_call, self, args, nargs, kwnames);
}

/* --- storage and metadata ---------------------------------------------------------------------------------- */
/* Grows storage s to at least nbytes, keeping its contents (as PyTorch's resizable storages).
 * Memory the storage borrows or shares is not resizable. 0 or -1. */
static int storage_grow(CtStorageObject *s, size_t nbytes)
{
    if (nbytes <= s->nbytes) {
        return 0;
    }
    if (s->owner != NULL || s->free_fn != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Trying to resize storage that is not resizable");
        return -1;
    }
    const CtDeviceOps *ops = ct_device_ops(s->device);
    void *data = ops != NULL ? ops->alloc(nbytes, s->device) : NULL;
    if (data == NULL) {
        return -1;
    }
    if (s->nbytes > 0 && ops->copy_d2d(data, s->data, s->nbytes, s->device) < 0) {
        ops->free(data, nbytes, s->device);
        return -1;
    }
    if (s->data != NULL) {
        ops->free(s->data, s->nbytes, s->device);
    }
    s->data = data;
    s->nbytes = nbytes;
    return 0;
}

/* PyTorch's error for a negative size given to resize_ / set_ */
static int check_sizes(int ndim, const int64_t *sizes)
{
    for (int d = 0; d < ndim; d++) {
        if (sizes[d] < 0) {
            PyErr_SetString(PyExc_RuntimeError, "numel: integer multiplication overflow");
            return -1;
        }
    }
    return 0;
}

/* Gives t storage s (borrowed; NULL: t's own) and this geometry, s first grown to hold it: on failure t is
 * unchanged. 0 or -1. */
static int set_metadata(CtTensorObject *t, CtStorageObject *s, int64_t offset, int ndim, const int64_t *sizes,
                        const int64_t *strides)
{
    int64_t need;
    s = s != NULL ? s : t->storage;
    CtDevice have = ct_device_of(t);
    if (s->device.type != have.type || s->device.index != have.index) {
        char d0[32], d1[32];
        ct_device_str(have, d0, sizeof(d0));
        ct_device_str(s->device, d1, sizeof(d1));
        PyErr_Format(PyExc_RuntimeError, "Attempted to set the storage of a tensor on device \"%s\" to a storage on "
                     "different device \"%s\".  This is no longer allowed; the devices must match.", d0, d1);
        return -1;
    }
    if (ct_storage_nbytes_needed(ndim, sizes, strides, offset, ct_itemsize(t), &need) < 0 ||
        storage_grow(s, (size_t)need) < 0) {
        return -1;
    }
    if (s != t->storage) {
        Py_SETREF(t->storage, (CtStorageObject *)Py_NewRef(s));
    }
    t->offset = offset;
    t->ndim = ndim;
    memcpy(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim);
    memcpy(t->strides, strides, sizeof(int64_t) * (size_t)ndim);
    return 0;
}

/* resize_ to sizes: the same strides when the sizes do not change, else contiguous ones; then, given a
 * memory_format= (format >= 0), restrided to that layout as PyTorch's empty_tensor_restride */
static PyObject *resize_to(PyObject *self, int ndim, const int64_t *sizes, int format)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (t->requires_grad) {
        PyErr_SetString(PyExc_RuntimeError, "cannot resize variables that require grad");
        return NULL;
    }
    if (check_sizes(ndim, sizes) < 0) {
        return NULL;
    }
    if (format == CT_FORMAT_PRESERVE) {
        PyErr_SetString(PyExc_RuntimeError, "Unsupported memory formatPreserve");
        return NULL;
    }
    int64_t strides[CT_MAX_DIMS], nbytes;
    if (format < 0 && ndim == t->ndim && memcmp(sizes, t->sizes, sizeof(int64_t) * (size_t)ndim) == 0) {
        memcpy(strides, t->strides, sizeof(int64_t) * (size_t)ndim);
    } else if (ct_contiguous_nbytes(ndim, sizes, ct_itemsize(t), &nbytes) < 0) {
        return NULL;
    } else if (format == CT_FORMAT_CHANNELS_LAST || format == CT_FORMAT_CHANNELS_LAST_3D) {
        if (ct_channels_last_strides((CtMemoryFormat)format, ndim, sizes, strides) < 0) {
            return NULL;
        }
    } else {
        ct_contiguous_strides(ndim, sizes, strides);
    }
    return set_metadata(t, NULL, t->offset, ndim, sizes, strides) < 0 ? NULL : Py_NewRef(self);
}

/* memory_format= of resize_ / resize_as_ (obj NULL or None when not given): -1 when not given, else the
 * format; -2 on error. */
static int resize_format(const char *fname, PyObject *obj)
{
    CtMemoryFormat f;
    if (obj == NULL || obj == Py_None) {
        return -1;
    }
    return ct_memory_format_arg(fname, obj, &f) < 0 ? -2 : (int)f;
}

/* resize_(*sizes, memory_format=None): new sizes over the same storage, grown (contents kept) when too small */
static PyObject *tensor_resize_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    int64_t sizes[CT_MAX_DIMS];
    PyObject *format_obj = NULL;
    for (Py_ssize_t k = 0; kwnames != NULL && k < PyTuple_GET_SIZE(kwnames); k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        if (PyUnicode_CompareWithASCIIString(key, "memory_format") != 0) {
            PyErr_Format(PyExc_TypeError, "resize_() got an unexpected keyword argument '%U'", key);
            return NULL;
        }
        format_obj = args[nargs + k];
    }
    int format = resize_format("resize_", format_obj);
    if (format == -2) {
        return NULL;
    }
    int ndim = ct_parse_sizes(args, nargs, sizes, true);
    return ndim < 0 ? NULL : resize_to(self, ndim, sizes, format);
}

/* resize_as_(the_template, *, memory_format=None): resize_(the_template.size(), memory_format=memory_format) */
static PyObject *tensor_resize_as_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"the_template", "*memory_format", NULL};
    PyObject *a[2];
    if (ct_parse_args("resize_as_", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[0])) {
        PyErr_Format(PyExc_TypeError, "resize_as_(): argument 'the_template' (position 1) must be Tensor, not %s",
                     Py_TYPE(a[0])->tp_name);
        return NULL;
    }
    int format = resize_format("resize_as_", a[1]);
    return format == -2 ? NULL : resize_to(self, CT_TENSOR(a[0])->ndim, CT_TENSOR(a[0])->sizes, format);
}
CT_FUNCTION_FROM_METHOD(resize_as_, tensor_resize_as_)

/* set_'s sizes and strides must address memory from the offset up: no negative size, and no negative stride
 * unless the tensor is empty (PyTorch's storage size calculation). 0 or -1. */

/* set_(): empty; set_(source): source's storage and metadata; set_(source_storage, storage_offset=0, size=?, stride=?) */
static PyObject *tensor_set_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"source", "storage_offset", "size", "stride", NULL};
    PyObject *a[4];
    if (ct_parse_args("set_", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    int64_t zero[1] = {0}, one[1] = {1};
    if (a[0] == NULL) {
        CtStorageObject *s = ct_storage_new(0, ct_device_of(t));
        int rc = s != NULL ? set_metadata(t, s, 0, 1, zero, one) : -1;
        Py_XDECREF(s);
        return rc < 0 ? NULL : Py_NewRef(self);
    }
    if (CtTensor_Check(a[0])) {
        CtTensorObject *src = CT_TENSOR(a[0]);
        if (src->dtype != t->dtype) {
            PyErr_Format(PyExc_RuntimeError, "Could not set tensor of type %s to a tensor of type %s",
                         ct_cpp_type_name(src->dtype), ct_cpp_type_name(t->dtype));
            return NULL;
        }
        return set_metadata(t, src->storage, src->offset, src->ndim, src->sizes, src->strides) < 0 ? NULL
                                                                                                 : Py_NewRef(self);
    }
    PyObject *source = a[0];
    if (strcmp(Py_TYPE(source)->tp_name, "TypedStorage") == 0) { /* storage.py's: its untyped storage, same dtype */
        CtDType sdt;
        PyObject *dtype_obj = PyObject_GetAttrString(source, "dtype");
        int bad = dtype_obj == NULL || ct_dtype_from_object(dtype_obj, &sdt) < 0;
        Py_XDECREF(dtype_obj);
        if (bad) {
            return NULL;
        }
        if (sdt != t->dtype) {
            PyErr_Format(PyExc_RuntimeError,
                         "Expected a Storage of type %s or an UntypedStorage, but got type %s for argument 1 'storage'",
                         ct_cpp_type_name(t->dtype), ct_scalar_type_name(sdt));
            return NULL;
        }
        source = PyObject_GetAttrString(source, "_untyped_storage");
        if (source == NULL) {
            return NULL;
        }
        Py_DECREF(source); /* the TypedStorage keeps it alive */
    }
    if (!PyObject_TypeCheck(source, CtStorage_Type)) {
        PyErr_Format(PyExc_TypeError, "set_(): argument 'source' (position 1) must be Storage or Tensor, not %s",
                     Py_TYPE(source)->tp_name);
        return NULL;
    }
    CtStorageObject *s = (CtStorageObject *)source;
    int64_t offset = 0, sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    int ndim = 1;
    sizes[0] = (int64_t)(s->nbytes / ct_itemsize(t));
    strides[0] = 1;
    if (ct_arg_int64(a[1], &offset) < 0) {
        return NULL;
    }
    if (a[1] != NULL && a[2] == NULL) {
        PyErr_SetString(PyExc_TypeError, "set_(): storage_offset needs size and stride");
        return NULL;
    }
    if (a[2] != NULL) {
        ndim = ct_parse_size_seq(a[2], sizes, false);
        if (ndim < 0) {
            return NULL;
        }
        if (a[3] == NULL || a[3] == Py_None) {
            ct_contiguous_strides(ndim, sizes, strides);
        } else if (ct_parse_size_seq(a[3], strides, false) != ndim) {
            if (!PyErr_Occurred()) {
                PyErr_Format(PyExc_RuntimeError, "mismatch in length of strides and shape");
            }
            return NULL;
        }
    }
    if (offset < 0) {
        PyErr_Format(PyExc_RuntimeError, "Tensor: invalid storage offset %lld", (long long)offset);
        return NULL;
    }
    if (check_sizes(ndim, sizes) < 0) {
        return NULL;
    }
    return set_metadata(t, s, offset, ndim, sizes, strides) < 0 ? NULL : Py_NewRef(self);
}

/* as_strided_(size, stride, storage_offset=None): self's metadata replaced by as_strided's */
static PyObject *tensor_as_strided_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *v = call_method_kw(self, "as_strided", args, nargs, kwnames);
    if (v == NULL) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self), *view = CT_TENSOR(v);
    t->offset = view->offset;
    t->ndim = view->ndim;
    memcpy(t->sizes, view->sizes, sizeof(int64_t) * (size_t)view->ndim);
    memcpy(t->strides, view->strides, sizeof(int64_t) * (size_t)view->ndim);
    Py_DECREF(v);
    return Py_NewRef(self);
}
CT_FUNCTION_FROM_METHOD(as_strided_, tensor_as_strided_)

/* is_set_to(tensor): the same storage, offset, sizes and strides */
static PyObject *tensor_is_set_to(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"tensor", NULL};
    PyObject *a[1];
    if (ct_parse_args("is_set_to", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[0])) {
        PyErr_Format(PyExc_TypeError, "is_set_to(): argument 'tensor' (position 1) must be Tensor, not %s",
                     Py_TYPE(a[0])->tp_name);
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self), *o = CT_TENSOR(a[0]);
    bool same = t->storage == o->storage && t->offset == o->offset && t->ndim == o->ndim && t->dtype == o->dtype;
    for (int d = 0; same && d < t->ndim; d++) {
        same = t->sizes[d] == o->sizes[d] && t->strides[d] == o->strides[d];
    }
    return PyBool_FromLong(same);
}

/* dim_order's comparison of dims a and b (PyTorch's should_swap in its logical-to-physical permutation):
 * 1 when a should sit inside b in memory, -1 when outside, 0 when nothing tells */
static int dim_order_swap(const CtTensorObject *t, int a, int b)
{
    int64_t sa = t->strides[a], sb = t->strides[b], na = t->sizes[a], nb = t->sizes[b];
    if (sa == 0 || sb == 0) {
        return 0;
    }
    if (sa == sb) {
        return (na == 0 || (nb != 0 && (nb >= na || nb % na == 0))) ? 0 : 1;
    }
    bool b_ge_a = sb >= sa || sb % sa == 0;
    return b_ge_a ? -1 : 1;
}

/* channels_last contiguity of a 4-d tensor (size-1 dims ignored) */
static bool channels_last_contiguous(const CtTensorObject *t)
{
    static const int order[4] = {1, 3, 2, 0};
    int64_t expected = 1;
    if (t->ndim != 4) {
        return false;
    }
    for (int k = 0; k < 4; k++) {
        int d = order[k];
        if (t->sizes[d] != 1 && t->strides[d] != expected) {
            return false;
        }
        expected *= t->sizes[d];
    }
    return true;
}

/* dim_order(*, ambiguity_check=False): the dims from outermost to innermost in memory, as PyTorch's
 * Tensor.dim_order (its elementwise output permutation); ambiguity_check=True (or a list of memory
 * formats, one of which must fit self alone) refuses tensors with several legal orders */
static PyObject *tensor_dim_order(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"*ambiguity_check", NULL};
    PyObject *a[1];
    if (ct_parse_args("dim_order", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    PyObject *check = a[0] != NULL ? a[0] : Py_False;
    if (!PyBool_Check(check) && !PyList_Check(check)) {
        PyErr_SetString(PyExc_TypeError, "The ambiguity_check argument must be a bool or a list of memory formats.");
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    int n = t->ndim, perm[CT_MAX_DIMS];
    bool multiple = false;
    for (int d = 0; d < n; d++) {
        multiple = multiple || t->sizes[d] == 1 || (d > 0 && t->strides[d] == t->strides[d - 1]);
    }
    if ((check == Py_True || PyList_Check(check)) && multiple) {
        Py_ssize_t legal = 0;
        for (Py_ssize_t i = 0; PyList_Check(check) && i < PyList_GET_SIZE(check); i++) {
            PyObject *kw = Py_BuildValue("(s)", "memory_format"), *mf = PyList_GET_ITEM(check, i);
            PyObject *r = kw != NULL ? call_method_kw(self, "is_contiguous", &mf, 0, kw) : NULL;
            Py_XDECREF(kw);
            int yes = r != NULL ? PyObject_IsTrue(r) : -1;
            Py_XDECREF(r);
            if (yes < 0) {
                return NULL;
            }
            legal += yes;
        }
        if (legal != 1) {
            PyErr_SetString(PyExc_RuntimeError, "The tensor does not have unique dim order, or cannot map to exact "
                            "one of the given memory formats.");
            return NULL;
        }
    }
    bool contiguous = ct_is_contiguous(t), channels_last = channels_last_contiguous(t);
    for (int i = 0; i < n; i++) {
        perm[i] = n - 1 - i; /* sorted back to front, reversed at the end */
    }
    if (n > 1 && contiguous && !channels_last) {
        /* (0, 1, ..., n - 1) as set above */
    } else if (n > 1 && channels_last && !contiguous) {
        int cl[4] = {1, 3, 2, 0}; /* (0, 2, 3, 1) reversed */
        memcpy(perm, cl, sizeof(cl));
    } else {
        for (int i = 1; i < n; i++) { /* insertion sort that stops at an undecided comparison */
            for (int d0 = i - 1, d1 = i; d0 >= 0; d0--) {
                int c = dim_order_swap(t, perm[d0], perm[d1]);
                if (c > 0) {
                    int tmp = perm[d0];
                    perm[d0] = perm[d1];
                    perm[d1] = tmp;
                    d1 = d0;
                } else if (c < 0) {
                    break;
                }
            }
        }
        bool ambiguity = check == Py_True || (PyList_Check(check) && PyList_GET_SIZE(check) > 0);
        for (int i = 0; ambiguity && i + 1 < n; i++) {
            if (dim_order_swap(t, perm[i], perm[i + 1]) != -1) {
                PyErr_SetString(PyExc_RuntimeError, "The tensor does not have unique dim order.");
                return NULL;
            }
        }
    }
    PyObject *r = PyTuple_New(n);
    for (int i = 0; r != NULL && i < n; i++) {
        PyObject *v = PyLong_FromLong(perm[n - 1 - i]);
        if (v == NULL) {
            Py_CLEAR(r);
            break;
        }
        PyTuple_SET_ITEM(r, i, v);
    }
    return r;
}

/* new_empty_strided(size, stride, *, dtype=None, device=None, ...): torch.empty_strided with self's
 * dtype and device by default */
static PyObject *tensor_new_empty_strided(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"size", "stride", "*dtype", "*layout", "*device", "*pin_memory",
                                        "*requires_grad", NULL};
    PyObject *a[7], *kw = NULL, *dev = NULL, *r = NULL;
    if (ct_parse_args("new_empty_strided", args, nargs, kwnames, names, 2, a) < 0) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    dev = ct_device_object(ct_device_of(t));
    kw = Py_BuildValue("(sssss)", "dtype", "layout", "device", "pin_memory", "requires_grad");
    if (dev != NULL && kw != NULL) {
        PyObject *call[7] = {a[0], a[1], a[2] && a[2] != Py_None ? a[2] : ct_dtype_object(t->dtype),
                             a[3] ? a[3] : Py_None, a[4] && a[4] != Py_None ? a[4] : dev,
                             a[5] ? a[5] : Py_False, a[6] ? a[6] : Py_False};
        r = ct_op("empty_strided", call, 2, kw);
    }
    Py_XDECREF(dev);
    Py_XDECREF(kw);
    return r;
}

static PyObject *tensor_const_data_ptr(PyObject *self, PyObject *unused)
{
    return ct_call_method(self, "data_ptr", NULL);
}

/* new(*args, **kwargs): the legacy constructor of self's type (torch.FloatTensor(...) for a float tensor) */
static PyObject *tensor_new(PyObject *self, PyObject *args, PyObject *kwargs)
{
    CtTensorObject *t = CT_TENSOR(self);
    return ct_legacy_new(t->dtype, ct_device_of(t).type == CT_DEV_CUDA, true, args, kwargs);
}

/* --- apply_ / map_ / map2_ ------------------------------------------------------------------------------- */
/* self[i] = fn(self[i], others[0][i], ...) element by element on the CPU, others broadcast to self's
 * shape and of self's dtype (PyTorch's TH-era callbacks). */
static PyObject *apply_callable(const char *fname, PyObject *self, int n_other, PyObject *const *others, PyObject *fn)
{
    CtTensorObject *t = CT_TENSOR(self);
    PyObject *lists[3] = {NULL, NULL, NULL}, *values = NULL, *shape = NULL, *r = NULL, *vals = NULL;
    if (ct_device_of(t).type != CT_DEV_CPU) {
        PyErr_Format(PyExc_TypeError, "%s is only implemented on CPU tensors", fname);
        return NULL;
    }
    bool grad = t->requires_grad;
    for (int k = 0; k < n_other; k++) {
        grad = grad || (CtTensor_Check(others[k]) && CT_TENSOR(others[k])->requires_grad);
    }
    if (grad) {
        PyErr_Format(PyExc_RuntimeError, "Can't call %s() on Variable that requires grad. Use var.detach().%s() "
                     "instead.", fname, fname);
        return NULL;
    }
    static const char *const arg_names[] = {"other", "x", "y"};
    shape = ct_size_object(t->ndim, t->sizes);
    if (shape == NULL) {
        goto done;
    }
    for (int k = 0; k <= n_other; k++) {
        PyObject *src = k == 0 ? self : others[k - 1];
        const char *aname = n_other == 1 ? arg_names[0] : arg_names[k];
        if (k > 0 && !CtTensor_Check(src)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname, aname, k,
                         Py_TYPE(src)->tp_name);
            goto done;
        }
        if (k > 0 && CT_TENSOR(src)->dtype != t->dtype) {
            PyObject *want = ct_call_method(self, "type", NULL), *got = ct_call_method(src, "type", NULL);
            if (want != NULL && got != NULL) {
                PyErr_Format(PyExc_TypeError, "%s: expected %U for '%s' (got %U)", fname, want, aname, got);
            }
            Py_XDECREF(want);
            Py_XDECREF(got);
            goto done;
        }
        PyObject *e = k > 0 ? ct_call_method(src, "expand", "(O)", shape) : Py_NewRef(src);
        PyObject *flat = e ? ct_call_method(e, "reshape", "(i)", -1) : NULL;
        Py_XDECREF(e);
        lists[k] = flat ? ct_call_method(flat, "tolist", NULL) : NULL;
        Py_XDECREF(flat);
        if (lists[k] == NULL) {
            goto done;
        }
    }
    Py_ssize_t n = PyList_GET_SIZE(lists[0]);
    bool is_float = ct_is_floating(t->dtype), is_bool = t->dtype == CT_BOOL;
    vals = PyList_New(n);
    for (Py_ssize_t i = 0; vals != NULL && i < n; i++) {
        PyObject *call[3];
        for (int k = 0; k <= n_other; k++) {
            call[k] = PyList_GET_ITEM(lists[k], i);
        }
        PyObject *v = PyObject_Vectorcall(fn, call, (size_t)(n_other + 1), NULL), *conv = NULL;
        if (v == NULL) {
            goto done;
        }
        /* the callable's result as self's element type: a real number, truncated for integers */
        if (is_bool) {
            int b = PyObject_IsTrue(v);
            conv = b < 0 ? NULL : PyBool_FromLong(b);
        } else if (is_float || PyFloat_Check(v)) {
            double d = PyFloat_AsDouble(v);
            conv = d == -1.0 && PyErr_Occurred() ? NULL
                   : is_float                    ? PyFloat_FromDouble(d)
                                                 : PyLong_FromDouble(trunc(d));
        } else {
            conv = PyNumber_Index(v);
        }
        Py_DECREF(v);
        if (conv == NULL) {
            goto done;
        }
        PyList_SET_ITEM(vals, i, conv);
    }
    if (vals == NULL) {
        goto done;
    }
    {
        PyObject *kw = Py_BuildValue("(s)", "dtype");
        PyObject *targs[2] = {vals, ct_dtype_object(t->dtype)};
        values = kw ? ct_op("tensor", targs, 1, kw) : NULL;
        Py_XDECREF(kw);
    }
    PyObject *shaped = values ? ct_call_method(values, "reshape", "(O)", shape) : NULL;
    r = copy_into_self(self, shaped);
done:
    for (int k = 0; k < 3; k++) {
        Py_XDECREF(lists[k]);
    }
    Py_XDECREF(vals);
    Py_XDECREF(values);
    Py_XDECREF(shape);
    return r;
}

static PyObject *tensor_apply_(PyObject *self, PyObject *callable)
{
    return apply_callable("apply_", self, 0, NULL, callable);
}

static PyObject *tensor_map_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"other", "callable", NULL};
    PyObject *a[2];
    if (ct_parse_args("map_", args, nargs, kwnames, names, 2, a) < 0) {
        return NULL;
    }
    return apply_callable("map_", self, 1, a, a[1]);
}

static PyObject *tensor_map2_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"x", "y", "callable", NULL};
    PyObject *a[3];
    if (ct_parse_args("map2_", args, nargs, kwnames, names, 3, a) < 0) {
        return NULL;
    }
    return apply_callable("map2_", self, 2, a, a[2]);
}

/* --- torch-namespace functions ----------------------------------------------------------------------------- */
static PyObject *method_is_floating_point(PyObject *self, PyObject *unused)
{
    return ct_call_method(self, "is_floating_point", NULL);
}
static PyObject *method_get_device(PyObject *self, PyObject *unused)
{
    return ct_call_method(self, "get_device", NULL);
}
CT_FUNCTION_FROM_NOARGS_METHOD(is_floating_point, method_is_floating_point)
CT_FUNCTION_FROM_NOARGS_METHOD(get_device, method_get_device)

/* is_storage(obj): an untyped storage or a TypedStorage */
static PyObject *function_is_storage(PyObject *mod, PyObject *obj)
{
    if (PyObject_TypeCheck(obj, CtStorage_Type)) {
        Py_RETURN_TRUE;
    }
    PyObject *m = PyImport_ImportModule("ctorch.storage");
    PyObject *typed = m ? PyObject_GetAttrString(m, "TypedStorage") : NULL;
    int is = typed ? PyObject_IsInstance(obj, typed) : -1;
    Py_XDECREF(m);
    Py_XDECREF(typed);
    return is < 0 ? NULL : PyBool_FromLong(is);
}

/* nonzero_static(input, *, size, fill_value=-1): nonzero's first `size` rows, padded with fill_value */
static PyObject *tensor_nonzero_static(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"*size", "*fill_value", "*out", NULL};
    PyObject *a[3], *nz = NULL, *r = NULL;
    int64_t size = 0, fill = -1;
    if (ct_parse_args("nonzero_static", args, nargs, kwnames, names, 1, a) < 0 || ct_arg_int64(a[0], &size) < 0 ||
        ct_arg_int64(a[1], &fill) < 0) {
        return NULL;
    }
    if (size < 0) {
        PyErr_SetString(PyExc_RuntimeError, "nonzero_static: 'size' must be an non-negative integer");
        return NULL;
    }
    nz = ct_call_method(self, "nonzero", NULL);
    if (nz == NULL) {
        return NULL;
    }
    int64_t found = CT_TENSOR(nz)->sizes[0], cols = CT_TENSOR(nz)->sizes[1];
    if (found >= size) {
        r = ct_call_method(nz, "narrow", "(iLL)", 0, (long long)0, (long long)size);
        Py_SETREF(r, r ? ct_call_method(r, "contiguous", NULL) : NULL);
    } else {
        PyObject *pad = ct_call_method(nz, "new_full", "((LL)L)", (long long)(size - found), (long long)cols,
                                            (long long)fill);
        PyObject *pair = pad ? PyTuple_Pack(2, nz, pad) : NULL;
        r = pair ? ct_op("cat", &pair, 1, NULL) : NULL;
        Py_XDECREF(pair);
        Py_XDECREF(pad);
    }
    Py_DECREF(nz);
    CtTensorObject *in[1] = {CT_TENSOR(self)};
    return ct_write_out(r != NULL ? CT_TENSOR(r) : NULL, a[2], "nonzero_static", CT_OUT_LONG, 1, in);
}
CT_FUNCTION_FROM_METHOD(nonzero_static, tensor_nonzero_static)

/* --- functional forms of nn layers ----------------------------------------------------------------------- */
/* torch.lstm / gru / rnn_tanh / rnn_relu: nn.LSTM/GRU/RNN's functional core (rnn.c's _rnn) in PyTorch's two
 * overloads: (input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first) and,
 * for packed sequences, (data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional).
 * The packed form is told by a tensor where the other has hx (LSTM: a pair) or params (a list). */
static PyObject *rnn_function(const char *mode, const char *fname, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    static const char *const plain[] = {"input", "hx", "params", "has_biases", "num_layers", "dropout", "train",
                                        "bidirectional", "batch_first", NULL};
    static const char *const packed[] = {"data", "batch_sizes", "hx", "params", "has_biases", "num_layers",
                                         "dropout", "train", "bidirectional", NULL};
    bool lstm = strcmp(mode, "LSTM") == 0;
    bool is_packed = lstm ? nargs >= 2 && CtTensor_Check(args[1]) : nargs >= 3 && CtTensor_Check(args[2]);
    PyObject *a[9];
    if (ct_parse_args(fname, args, nargs, kwnames, is_packed ? packed : plain, 9, a) < 0) {
        return NULL;
    }
    PyObject *m = PyUnicode_FromString(mode);
    if (m == NULL) {
        return NULL;
    }
    PyObject *call[11] = {m, a[0], is_packed ? a[1] : Py_None};
    for (int i = 0; i < 7; i++) { /* hx ... bidirectional */
        call[3 + i] = a[(is_packed ? 2 : 1) + i];
    }
    call[10] = is_packed ? Py_False : a[8];
    PyObject *r = ct_op("_rnn", call, 11, NULL);
    Py_DECREF(m);
    return r;
}

#define CT_RNN_FUNCTION(name, mode)                                                                               \
    static PyObject *function_##name(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)    \
    {                                                                                                             \
        return rnn_function(mode, #name, args, nargs, kwnames);                                                   \
    }
CT_RNN_FUNCTION(lstm, "LSTM")
CT_RNN_FUNCTION(gru, "GRU")
CT_RNN_FUNCTION(rnn_tanh, "RNN_TANH")
CT_RNN_FUNCTION(rnn_relu, "RNN_RELU")
#undef CT_RNN_FUNCTION

/* convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups): the
 * 1-, 2- or 3-d convolution or transposed convolution that weight's dims name */
static PyObject *function_convolution(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "weight", "bias", "stride", "padding", "dilation", "transposed",
                                        "output_padding", "groups", NULL};
    PyObject *a[9];
    bool transposed = false;
    if (ct_parse_args("convolution", args, nargs, kwnames, names, 9, a) < 0 || ct_arg_bool(a[6], &transposed) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[1])) {
        PyErr_Format(PyExc_TypeError, "convolution(): argument 'weight' (position 2) must be Tensor, not %s",
                     Py_TYPE(a[1])->tp_name);
        return NULL;
    }
    int dims = CT_TENSOR(a[1])->ndim - 2;
    if (dims < 1 || dims > 3) {
        PyErr_Format(PyExc_RuntimeError, "convolution(): weight should have 3, 4 or 5 dimensions, but got %d",
                     dims + 2);
        return NULL;
    }
    char op[24];
    snprintf(op, sizeof(op), transposed ? "conv_transpose%dd" : "conv%dd", dims);
    PyObject *call[8] = {a[0], a[1], a[2], a[3], a[4]};
    if (transposed) { /* conv_transposeNd(input, weight, bias, stride, padding, output_padding, groups, dilation) */
        call[5] = a[7];
        call[6] = a[8];
        call[7] = a[5];
        return ct_op(op, call, 8, NULL);
    }
    call[5] = a[5]; /* convNd(input, weight, bias, stride, padding, dilation, groups) */
    call[6] = a[8];
    return ct_op(op, call, 7, NULL);
}

/* conv_tbc(input, weight, bias, pad=0): a 1-d convolution of time-batch-channel input (T, B, C_in) with weight
 * (K, C_in, C_out): output (T + 2 pad - K + 1, B, C_out) */
static PyObject *function_conv_tbc(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "weight", "bias", "pad", NULL};
    PyObject *a[4];
    int64_t pad = 0;
    if (ct_parse_args("conv_tbc", args, nargs, kwnames, names, 3, a) < 0 || ct_arg_int64(a[3], &pad) < 0) {
        return NULL;
    }
    for (int i = 0; i < 3; i++) {
        if (!CtTensor_Check(a[i])) {
            PyErr_Format(PyExc_TypeError, "conv_tbc(): argument '%s' (position %d) must be Tensor, not %s", names[i],
                         i + 1, Py_TYPE(a[i])->tp_name);
            return NULL;
        }
    }
    CtTensorObject *x = CT_TENSOR(a[0]), *w = CT_TENSOR(a[1]), *b = CT_TENSOR(a[2]);
    const char *bad = x->ndim != 3                    ? "Input must have 3 dims: time, batch, in_channel"
                      : w->ndim != 3                  ? "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels."
                      : b->ndim != 1                  ? "Bias must be 1-D"
                      : x->sizes[2] != w->sizes[1]    ? "Input dim 2 (input channels) is not == dim 1 in the weight tensor"
                      : w->sizes[2] != b->sizes[0]    ? "Bias size must equal dim 2 in the weight tensor (output channels)."
                                                      : NULL;
    if (bad != NULL) {
        PyErr_SetString(PyExc_RuntimeError, bad);
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *xin = METH(a[0], "permute", "(iii)", 1, 2, 0), *win = METH(a[1], "permute", "(iii)", 2, 1, 0);
    PyObject *y = FN("conv1d", "(OOOiL)", xin, win, a[2], 1, (long long)pad);
    PyObject *r = TAKE(METH(METH(y, "permute", "(iii)", 2, 0, 1), "contiguous", NULL));
    arena_free(arena);
    return r;
}

/* [0, 2, 3, ..., ndim - 1], the dims a batch norm reduces over, or (as_shape) the shape [1, -1, 1, ...] a
 * per-channel vector broadcasts in (arena-owned) */
static PyObject *bn_dims(CtArena *arena, int ndim, bool as_shape)
{
    PyObject *dims = KEEP(PyList_New(0));
    for (int d = 0; dims != NULL && d < ndim; d++) {
        PyObject *v = d == 1 ? (as_shape ? PyLong_FromLong(-1) : NULL) : PyLong_FromLong(as_shape ? 1 : d);
        if ((d != 1 || as_shape) && (v == NULL || PyList_Append(dims, v) < 0)) {
            Py_XDECREF(v);
            arena->failed = true;
            break;
        }
        Py_XDECREF(v);
    }
    return dims;
}

/* batch_norm_update_stats(input, running_mean, running_var, momentum): the batch's per-channel mean and biased
 * variance (in the running statistics' dtype when given), and the running statistics moved toward the mean and
 * the unbiased variance */
static PyObject *function_batch_norm_update_stats(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,
                                                  PyObject *kwnames)
{
    static const char *const names[] = {"input", "running_mean", "running_var", "momentum", NULL};
    PyObject *a[4];
    double momentum = 0.1;
    if (ct_parse_args("batch_norm_update_stats", args, nargs, kwnames, names, 4, a) < 0 ||
        ct_arg_double(a[3], &momentum) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[0])) {
        PyErr_Format(PyExc_TypeError, "batch_norm_update_stats(): argument 'input' (position 1) must be Tensor, not %s",
                     Py_TYPE(a[0])->tp_name);
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[0]);
    int channel;
    if (ct_wrap_dim(1, x->ndim, &channel) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *rm = a[1] != Py_None ? a[1] : NULL, *rv = a[2] != Py_None ? a[2] : NULL, *r = NULL;
    CtDType dtype = rm != NULL && CtTensor_Check(rm) ? CT_TENSOR(rm)->dtype : x->dtype;
    PyObject *dims = bn_dims(arena, x->ndim, false);
    int64_t n = ct_numel(x) / (x->sizes[1] > 0 ? x->sizes[1] : 1);
    PyObject *xf = METH(a[0], "to", "(O)", ct_dtype_object(dtype));
    PyObject *mean = METH(xf, "mean", "(O)", dims);
    PyObject *kw = KEEP(Py_BuildValue("{si}", "correction", 0));
    PyObject *var = NULL;
    if (xf != NULL && kw != NULL) {
        PyObject *m = KEEP(PyObject_GetAttrString(xf, "var")), *pa = KEEP(PyTuple_Pack(1, dims));
        var = m && pa ? KEEP(PyObject_Call(m, pa, kw)) : NULL;
    }
    bool was = ct_grad_enabled;
    ct_grad_enabled = false; /* the running statistics are buffers */
    if (rm != NULL && mean != NULL) {
        METH(METH(rm, "mul_", "(d)", 1.0 - momentum), "add_", "(O)", MUL(mean, NUM(momentum)));
    }
    if (rv != NULL && var != NULL) {
        double unbias = n > 1 ? (double)n / (double)(n - 1) : INFINITY;
        METH(METH(rv, "mul_", "(d)", 1.0 - momentum), "add_", "(O)", MUL(var, NUM(momentum * unbias)));
    }
    ct_grad_enabled = was;
    if (!arena->failed && mean != NULL && var != NULL) {
        r = PyTuple_Pack(2, mean, var);
    }
    arena_free(arena);
    return r;
}

/* ====================================================================================================
 * The per-device steps of SyncBatchNorm (batch_norm_stats / _elemt / _gather_stats(_with_counts) /
 * _backward_reduce / _backward_elemt), composed of recording ops; CUDA only, as PyTorch's.
 * ==================================================================================================== */

/* Parses the n arguments into a, checks their types (`kinds`: 'T' a tensor, 't' a tensor or None, '-' anything
 * else) and raises PyTorch's error for the CPU, where these ops have no kernel. 0 or -1. */
static int sync_bn_args(const char *fname, const char *const *names, int n, const char *kinds, PyObject *const *args,
                        Py_ssize_t nargs, PyObject *kwnames, PyObject **a)
{
    if (ct_parse_args(fname, args, nargs, kwnames, names, n, a) < 0) {
        return -1;
    }
    for (int i = 0; kinds[i] != '\0'; i++) {
        if (kinds[i] != '-' && !CtTensor_Check(a[i]) && !(kinds[i] == 't' && a[i] == Py_None)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname, names[i],
                         i + 1, Py_TYPE(a[i])->tp_name);
            return -1;
        }
    }
    if (ct_device_of(CT_TENSOR(a[0])).type != CT_DEV_CUDA) {
        PyErr_Format(PyExc_NotImplementedError,
                     "Could not run 'aten::%s' with arguments from the 'CPU' backend. This could be because the "
                     "operator doesn't exist for this backend, or was omitted during the selective/custom build "
                     "process (if using custom build).",
                     fname);
        return -1;
    }
    return 0;
}

/* the dtype batch statistics of x are kept in: float32 for float16 / bfloat16, else x's */
static CtDType bn_acc_dtype(CtDType d) { return d == CT_F16 || d == CT_BF16 ? CT_F32 : d; }

/* t (C,) as (1, C, 1, ...) for an ndim-d input (arena-owned) */
static PyObject *bn_chan(CtArena *arena, PyObject *t, int ndim)
{
    return METH(t, "view", "(O)", bn_dims(arena, ndim, true));
}

/* y * weight + bias (each per channel, left out when None) in dtype, the arena freed: a new reference */
static PyObject *bn_affine_out(CtArena *arena, PyObject *y, PyObject *weight, PyObject *bias, int ndim, CtDType dtype)
{
    if (weight != Py_None) {
        y = MUL(y, bn_chan(arena, weight, ndim));
    }
    if (bias != Py_None) {
        y = ADD(y, bn_chan(arena, bias, ndim));
    }
    PyObject *r = TAKE(METH(y, "to", "(O)", ct_dtype_object(dtype)));
    arena_free(arena);
    return r;
}

/* batch_norm_stats(input, eps) -> (mean, invstd) per channel, invstd = 1 / sqrt(biased variance + eps) */
static PyObject *function_batch_norm_stats(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "eps", NULL};
    PyObject *a[2];
    double eps = 0.0;
    if (sync_bn_args("batch_norm_stats", names, 2, "T", args, nargs, kwnames, a) < 0 || ct_arg_double(a[1], &eps) < 0) {
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[0]);
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *dims = bn_dims(arena, x->ndim, false), *r = NULL;
    PyObject *xf = METH(a[0], "to", "(O)", ct_dtype_object(bn_acc_dtype(x->dtype)));
    PyObject *mean = METH(xf, "mean", "(O)", dims);
    PyObject *var = METH(METH(SUB(xf, bn_chan(arena, mean, x->ndim)), "square", NULL), "mean", "(O)", dims);
    PyObject *invstd = METH(ADD(var, NUM(eps)), "rsqrt", NULL);
    if (!arena->failed) {
        r = PyTuple_Pack(2, mean, invstd);
    }
    arena_free(arena);
    return r;
}

/* batch_norm_elemt(input, weight, bias, mean, invstd, eps) -> (input - mean) * invstd * weight + bias */
static PyObject *function_batch_norm_elemt(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "weight", "bias", "mean", "invstd", "eps", NULL};
    PyObject *a[6];
    double eps = 0.0;
    if (sync_bn_args("batch_norm_elemt", names, 6, "TttTT", args, nargs, kwnames, a) < 0 ||
        ct_arg_double(a[5], &eps) < 0) {
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[0]);
    int nd = x->ndim;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *y = MUL(SUB(a[0], bn_chan(arena, a[3], nd)), bn_chan(arena, a[4], nd));
    return bn_affine_out(arena, y, a[1], a[2], nd, x->dtype);
}

/* The groups' statistics mean / invstd (G, C) merged by their counts (G,) (a group of count 0 left out): the
 * tuple (mean, invstd) of all; running_mean / running_var (or None) moved toward the mean and the unbiased
 * variance. a: input, mean, invstd, running_mean, running_var (the ops' first five arguments). */
static PyObject *bn_gather(PyObject *const *a, double momentum, double eps, PyObject *counts)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *mean = a[1], *invstd = a[2], *r = NULL;
    PyObject *c = METH(METH(counts, "to", "(O)", ct_dtype_object(CT_TENSOR(mean)->dtype)), "view", "(ii)", -1, 1);
    PyObject *used = CMP(c, INT(0), Py_GT), *zero = METH(mean, "new_zeros", "(i)", 1);
    PyObject *n = METH(c, "sum", NULL);
    PyObject *all_mean = DIV(METH(WHERE(used, MUL(c, mean), zero), "sum", "(i)", 0), n);
    PyObject *var = SUB(METH(METH(invstd, "square", NULL), "reciprocal", NULL), NUM(eps));
    PyObject *dev = METH(SUB(mean, all_mean), "square", NULL);
    PyObject *m2 = METH(WHERE(used, MUL(c, ADD(var, dev)), zero), "sum", "(i)", 0);
    PyObject *all_invstd = METH(ADD(DIV(m2, n), NUM(eps)), "rsqrt", NULL);
    bool was = ct_grad_enabled;
    ct_grad_enabled = false; /* the running statistics are buffers */
    if (a[3] != Py_None) {
        METH(METH(a[3], "mul_", "(d)", 1.0 - momentum), "add_", "(O)", MUL(all_mean, NUM(momentum)));
    }
    if (a[4] != Py_None) {
        PyObject *unbiased = DIV(m2, SUB(n, INT(1)));
        METH(METH(a[4], "mul_", "(d)", 1.0 - momentum), "add_", "(O)", MUL(unbiased, NUM(momentum)));
    }
    ct_grad_enabled = was;
    if (!arena->failed) {
        r = PyTuple_Pack(2, all_mean, all_invstd);
    }
    arena_free(arena);
    return r;
}

static const char *const bn_gather_names[] = {"input", "mean", "invstd", "running_mean", "running_var", "momentum",
                                              "eps", "count", NULL};

/* batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts) */
static PyObject *function_batch_norm_gather_stats_with_counts(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,
                                                              PyObject *kwnames)
{
    static const char *const names[] = {"input", "mean", "invstd", "running_mean", "running_var", "momentum",
                                        "eps", "counts", NULL};
    PyObject *a[8];
    double momentum = 0.0, eps = 0.0;
    if (sync_bn_args("batch_norm_gather_stats_with_counts", names, 8, "TTTtt--T", args, nargs, kwnames, a) < 0 ||
        ct_arg_double(a[5], &momentum) < 0 || ct_arg_double(a[6], &eps) < 0) {
        return NULL;
    }
    return bn_gather(a, momentum, eps, a[7]);
}

/* batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps, count): every group
 * of count elements */
static PyObject *function_batch_norm_gather_stats(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,
                                                  PyObject *kwnames)
{
    PyObject *a[8];
    double momentum = 0.0, eps = 0.0;
    int64_t count = 0;
    if (sync_bn_args("batch_norm_gather_stats", bn_gather_names, 8, "TTTtt", args, nargs, kwnames, a) < 0 ||
        ct_arg_double(a[5], &momentum) < 0 || ct_arg_double(a[6], &eps) < 0 || ct_arg_int64(a[7], &count) < 0) {
        return NULL;
    }
    CtTensorObject *mean = CT_TENSOR(a[1]);
    int64_t groups = mean->ndim > 0 ? mean->sizes[0] : 1;
    PyObject *counts = ct_call_method(a[1], "new_full", "((L)L)", (long long)groups, (long long)count);
    PyObject *r = counts != NULL ? bn_gather(a, momentum, eps, counts) : NULL;
    Py_XDECREF(counts);
    return r;
}

/* grad_out and input - mean in the statistics' dtype (arena-owned, *g / *xmu) */
static void bn_grad_xmu(CtArena *arena, PyObject *const *a, PyObject **g, PyObject **xmu)
{
    PyObject *acc = ct_dtype_object(CT_TENSOR(a[2])->dtype);
    *g = METH(a[0], "to", "(O)", acc);
    *xmu = SUB(METH(a[1], "to", "(O)", acc), bn_chan(arena, a[2], CT_TENSOR(a[1])->ndim));
}

/* batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g)
 * -> (sum_dy, sum_dy_xmu, grad_weight, grad_bias), each None unless asked for (sum_dy and sum_dy_xmu by input_g) */
static PyObject *function_batch_norm_backward_reduce(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,
                                                     PyObject *kwnames)
{
    static const char *const names[] = {"grad_out", "input", "mean", "invstd", "weight", "input_g", "weight_g",
                                        "bias_g", NULL};
    PyObject *a[8];
    bool want[3] = {false, false, false};
    if (sync_bn_args("batch_norm_backward_reduce", names, 8, "TTTTt", args, nargs, kwnames, a) < 0 ||
        ct_arg_bool(a[5], &want[0]) < 0 || ct_arg_bool(a[6], &want[1]) < 0 || ct_arg_bool(a[7], &want[2]) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *g, *xmu, *r = NULL;
    bn_grad_xmu(arena, a, &g, &xmu);
    PyObject *dims = bn_dims(arena, CT_TENSOR(a[1])->ndim, false);
    PyObject *sum_dy = METH(g, "sum", "(O)", dims), *sum_dy_xmu = METH(MUL(g, xmu), "sum", "(O)", dims);
    PyObject *wdt = ct_dtype_object(CT_TENSOR(a[a[4] != Py_None ? 4 : 2])->dtype);
    PyObject *gw = want[1] ? METH(MUL(sum_dy_xmu, a[3]), "to", "(O)", wdt) : Py_None;
    PyObject *gb = want[2] ? METH(sum_dy, "to", "(O)", wdt) : Py_None;
    if (!arena->failed) {
        r = PyTuple_Pack(4, want[0] ? sum_dy : Py_None, want[0] ? sum_dy_xmu : Py_None, gw, gb);
    }
    arena_free(arena);
    return r;
}

/* batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count) -> grad_input:
 * (grad_out - sum_dy / N - (input - mean) * invstd^2 * sum_dy_xmu / N) * invstd * weight, N = count.sum() */
static PyObject *function_batch_norm_backward_elemt(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,
                                                    PyObject *kwnames)
{
    static const char *const names[] = {"grad_out", "input", "mean", "invstd", "weight", "sum_dy", "sum_dy_xmu",
                                        "count", NULL};
    PyObject *a[8];
    if (sync_bn_args("batch_norm_backward_elemt", names, 8, "TTTTtTTT", args, nargs, kwnames, a) < 0) {
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[1]);
    int nd = x->ndim;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *g, *xmu;
    bn_grad_xmu(arena, a, &g, &xmu);
    PyObject *n = METH(METH(a[7], "sum", NULL), "to", "(O)", ct_dtype_object(CT_TENSOR(a[2])->dtype));
    PyObject *proj = DIV(MUL(METH(a[3], "square", NULL), a[6]), n);
    PyObject *gi = SUB(SUB(g, bn_chan(arena, DIV(a[5], n), nd)), MUL(xmu, bn_chan(arena, proj, nd)));
    return bn_affine_out(arena, MUL(gi, bn_chan(arena, a[3], nd)), a[4], Py_None, nd, x->dtype);
}

/* --- segment_reduce -------------------------------------------------------------------------------------- */
typedef enum { SEG_SUM, SEG_MEAN, SEG_MAX, SEG_MIN, SEG_PROD } SegReduce;

/* segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
 * reductions of consecutive segments of data along axis, segment lengths given per leading index (lengths'
 * last dim is axis) or as offsets. Each output row gathers its segment by a host-free index: the segment id
 * of every position (repeat_interleave of the lengths), then index_add / index_reduce into rows filled with
 * initial or the reduction's empty value (0, NaN for mean, -inf / inf, 1). */
static PyObject *function_segment_reduce(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"data", "reduce", "*lengths", "*indices", "*offsets", "*axis", "*unsafe",
                                        "*initial", NULL};
    static const char *const reduce_names[] = {"sum", "mean", "max", "min", "prod"};
    PyObject *a[8];
    int64_t axis = 0;
    bool unsafe = false;
    if (ct_parse_args("segment_reduce", args, nargs, kwnames, names, 2, a) < 0 || ct_arg_int64(a[5], &axis) < 0 ||
        ct_arg_bool(a[6], &unsafe) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[0])) {
        PyErr_Format(PyExc_TypeError, "segment_reduce(): argument 'data' (position 1) must be Tensor, not %s",
                     Py_TYPE(a[0])->tp_name);
        return NULL;
    }
    const char *rname = PyUnicode_Check(a[1]) ? PyUnicode_AsUTF8(a[1]) : NULL;
    if (rname == NULL) {
        PyErr_Format(PyExc_TypeError, "segment_reduce(): argument 'reduce' (position 2) must be str, not %s",
                     Py_TYPE(a[1])->tp_name);
        return NULL;
    }
    int reduce = -1;
    for (int i = 0; i < 5; i++) {
        reduce = strcmp(rname, reduce_names[i]) == 0 ? i : reduce;
    }
    reduce = strcmp(rname, "amax") == 0 ? SEG_MAX : strcmp(rname, "amin") == 0 ? SEG_MIN : reduce;
    if (reduce < 0) {
        PyErr_Format(PyExc_RuntimeError, "reduce argument must be either sum, prod, mean, amax or amin, got %s", rname);
        return NULL;
    }
    CtTensorObject *data = CT_TENSOR(a[0]);
    if (a[3] != NULL && a[3] != Py_None) {
        PyErr_SetString(PyExc_RuntimeError, "segment_reduce(): indices based reduction is not supported yet.");
        return NULL;
    }
    PyObject *lengths = a[2] != NULL && a[2] != Py_None ? a[2] : NULL;
    PyObject *offsets = a[4] != NULL && a[4] != Py_None ? a[4] : NULL;
    if (lengths == NULL && offsets == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "segment_reduce(): Either lengths or offsets must be defined.");
        return NULL;
    }
    PyObject *given = lengths != NULL ? lengths : offsets;
    if (!CtTensor_Check(given)) {
        PyErr_Format(PyExc_TypeError, "segment_reduce(): argument '%s' must be Tensor, not %s",
                     lengths != NULL ? "lengths" : "offsets", Py_TYPE(given)->tp_name);
        return NULL;
    }
    CtTensorObject *g = CT_TENSOR(given);
    if (!ct_is_integral(g->dtype, false)) {
        PyErr_Format(PyExc_NotImplementedError, "\"_segment_reduce_%s_%s_kernel1\" not implemented for '%s'",
                     lengths != NULL ? "lengths" : "offsets", ct_device_of(data).type == CT_DEV_CPU ? "cpu" : "cuda",
                     ct_scalar_type_name(g->dtype));
        return NULL;
    }
    if (data->ndim < g->ndim || g->ndim < 1) {
        PyErr_Format(PyExc_RuntimeError, "Expected data.dim() >= %s_value.dim() to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)",
                     lengths != NULL ? "lengths" : "offsets");
        return NULL;
    }
    int ax;
    if (ct_wrap_dim(axis, data->ndim, &ax) < 0) {
        return NULL;
    }
    if (ax != g->ndim - 1) {
        PyErr_Format(PyExc_RuntimeError, "segment_reduce(): Expected axis to be the last dimension of lengths but got %d.",
                     ax);
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = NULL;
    int64_t positions = data->sizes[ax], batch = 1;
    for (int d = 0; d < ax; d++) {
        batch *= data->sizes[d];
    }
    PyObject *len = lengths != NULL ? METH(given, "to", "(O)", ct_dtype_object(CT_I64))
                                    : SUB(METH(METH(given, "narrow", "(iii)", -1, 1, (int)(g->sizes[ax] - 1)), "long", NULL),
                                          METH(METH(given, "narrow", "(iii)", -1, 0, (int)(g->sizes[ax] - 1)), "long", NULL));
    if (len == NULL) {
        goto done;
    }
    int64_t segments = CT_TENSOR(len)->sizes[ax];
    /* the checks (one host read each): no negative length, each row's lengths summing to the axis */
    PyObject *neg = METH(METH(CMP(len, INT(0), Py_LT), "any", NULL), "item", NULL);
    if (neg == NULL) {
        goto done;
    }
    if (neg == Py_True) {
        PyErr_SetString(PyExc_RuntimeError, "lengths contains negative value!");
        goto done;
    }
    PyObject *row_sums = METH(len, "sum", "(i)", -1);
    if (!unsafe) {
        PyObject *ok = METH(METH(CMP(row_sums, INT(positions), Py_EQ), "all", NULL), "item", NULL);
        if (ok == NULL) {
            goto done;
        }
        if (ok != Py_True) {
            PyErr_SetString(PyExc_RuntimeError, "segment_reduce(): Expected all rows of lengths along axis to sum to "
                            "data.size(lengths.dim()-1) when !unsafe.");
            goto done;
        }
    }
    if (!ct_is_floating(data->dtype)) { /* PyTorch's kernel dtype check, after the checks of the lengths */
        PyErr_Format(PyExc_NotImplementedError, "\"_segment_reduce_%s\" not implemented for '%s'",
                     ct_device_of(data).type == CT_DEV_CPU ? "cpu" : "cuda", ct_scalar_type_name(data->dtype));
        goto done;
    }
    /* rows: data as (batch * positions, rest...), segment id of each position among batch * segments */
    PyObject *flat_shape = KEEP(PyList_New(0)), *out_shape = KEEP(PyList_New(0));
    if (flat_shape == NULL || out_shape == NULL) {
        goto done;
    }
    PyObject *used = a[0];
    int64_t covered = positions;
    if (unsafe && batch == 1) { /* PyTorch reads only the positions the lengths cover */
        PyObject *total = METH(row_sums, "item", NULL);
        if (total == NULL || ct_arg_int64(total, &covered) < 0) {
            goto done;
        }
        covered = covered < positions ? covered : positions;
        used = METH(a[0], "narrow", "(iLL)", ax, 0LL, (long long)covered);
    }
    PyObject *batch_obj = KEEP(PyLong_FromLongLong(batch * covered)), *seg_obj = KEEP(PyLong_FromLongLong(batch * segments));
    if (batch_obj == NULL || seg_obj == NULL || PyList_Append(flat_shape, batch_obj) < 0 ||
        PyList_Append(out_shape, seg_obj) < 0) {
        goto done;
    }
    for (int d = ax + 1; d < data->ndim; d++) {
        PyObject *v = KEEP(PyLong_FromLongLong(data->sizes[d]));
        if (v == NULL || PyList_Append(flat_shape, v) < 0 || PyList_Append(out_shape, v) < 0) {
            goto done;
        }
    }
    PyObject *rows = METH(used, "reshape", "(O)", flat_shape);
    PyObject *device = ATTR(a[0], "device");
    PyObject *ids = FN("repeat_interleave", "(OO)", METH(FN("arange", "(L)", (long long)(batch * segments)), "to", "(O)", device),
                       METH(METH(len, "reshape", "(i)", -1), "to", "(O)", device));
    if (ids == NULL) {
        goto done;
    }
    if (CT_TENSOR(ids)->sizes[0] > CT_TENSOR(rows)->sizes[0]) { /* unsafe lengths past the data */
        ids = METH(ids, "narrow", "(iiL)", 0, 0, (long long)CT_TENSOR(rows)->sizes[0]);
    }
    rows = METH(rows, "narrow", "(iiL)", 0, 0, (long long)(ids ? CT_TENSOR(ids)->sizes[0] : 0));
    bool has_initial = a[7] != NULL && a[7] != Py_None;
    static const double empty_value[] = {0.0, NAN, -INFINITY, INFINITY, 1.0};
    PyObject *init = has_initial ? a[7] : NUM(empty_value[reduce]);
    PyObject *out = METH(rows, "new_full", "(OO)", out_shape, init);
    PyObject *result;
    if (reduce == SEG_SUM || reduce == SEG_MEAN) {
        if (reduce == SEG_MEAN && !has_initial) {
            out = METH(rows, "new_zeros", "(O)", out_shape);
        }
        result = METH(out, "index_add", "(iOO)", 0, ids, rows);
        if (reduce == SEG_MEAN) { /* (initial + sum) / count; an empty segment: initial, or 0 / 0 */
            PyObject *ones = METH(rows, "new_ones", "((L))", (long long)(ids ? CT_TENSOR(ids)->sizes[0] : 0));
            PyObject *count = METH(METH(rows, "new_zeros", "((L))", (long long)(batch * segments)), "index_add",
                                   "(iOO)", 0, ids, ones);
            if (has_initial) {
                count = METH(count, "clamp", "(i)", 1);
            }
            PyObject *shape = KEEP(PyList_New(0));
            for (int d = 0; shape != NULL && d < CT_TENSOR(rows)->ndim; d++) {
                PyObject *v = KEEP(PyLong_FromLongLong(d == 0 ? batch * segments : 1));
                if (v == NULL || PyList_Append(shape, v) < 0) {
                    arena->failed = true;
                    break;
                }
            }
            result = DIV(result, METH(count, "reshape", "(O)", shape));
        }
    } else {
        static const char *const how[] = {"", "", "amax", "amin", "prod"};
        PyObject *kw = KEEP(Py_BuildValue("{sO}", "include_self", has_initial ? Py_True : Py_False));
        PyObject *fn = KEEP(out ? PyObject_GetAttrString(out, "index_reduce") : NULL);
        PyObject *pa = fn && ids && rows ? KEEP(Py_BuildValue("(iOOs)", 0, ids, rows, how[reduce])) : NULL;
        result = pa && kw ? KEEP(PyObject_Call(fn, pa, kw)) : NULL;
    }
    /* back to data's layout: (leading..., segments, rest...) */
    PyObject *final_shape = KEEP(PyList_New(0));
    for (int d = 0; final_shape != NULL && d < data->ndim; d++) {
        PyObject *v = KEEP(PyLong_FromLongLong(d == ax ? segments : data->sizes[d]));
        if (v == NULL || PyList_Append(final_shape, v) < 0) {
            arena->failed = true;
            break;
        }
    }
    r = TAKE(METH(result, "reshape", "(O)", final_shape));
done:
    arena_free(arena);
    return r;
}

/* --- tables ------------------------------------------------------------------------------------------------ */
#define CT_M(name, doc) {#name, CT_FASTCALL(tensor_##name), CT_METH_FK, doc}
PyMethodDef ct_tensor_more_tensor_methods[] = {
    CT_M(cumsum_, "cumsum_(dim, *, dtype=None): cumsum in place"),
    CT_M(cumprod_, "cumprod_(dim, *, dtype=None): cumprod in place"),
    CT_M(addr_, "addr_(vec1, vec2, *, beta=1, alpha=1): addr in place"),
    CT_M(cauchy_, "cauchy_(median=0, sigma=1, *, generator=None)"),
    CT_M(log_normal_, "log_normal_(mean=1, std=2, *, generator=None)"),
    CT_M(geometric_, "geometric_(p, *, generator=None)"),
    CT_M(bernoulli, "bernoulli(p=None, *, generator=None): torch.bernoulli(self, ...)"),
    CT_M(resize_, "resize_(*sizes): new sizes, the storage grown when needed"),
    CT_M(resize_as_, "resize_as_(the_template): resize_(the_template.size())"),
    CT_M(set_, "set_(source=None, storage_offset=0, size=None, stride=None)"),
    CT_M(as_strided_, "as_strided_(size, stride, storage_offset=None): as_strided in place"),
    CT_M(is_set_to, "is_set_to(tensor): same storage, offset, sizes and strides"),
    CT_M(dim_order, "dim_order(*, ambiguity_check=False): dims from outermost to innermost in memory"),
    CT_M(new_empty_strided, "new_empty_strided(size, stride, *, dtype=None, device=None, ...)"),
    CT_M(map_, "map_(other, callable): self[i] = callable(self[i], other[i]) (CPU)"),
    CT_M(map2_, "map2_(x, y, callable): self[i] = callable(self[i], x[i], y[i]) (CPU)"),
    CT_M(nonzero_static, "nonzero_static(*, size, fill_value=-1)"),
    {"new", CT_FASTCALL(tensor_new), METH_VARARGS | METH_KEYWORDS, "new(*args, **kwargs): the legacy constructor of self's type"},
    {"apply_", tensor_apply_, METH_O, "apply_(callable): self[i] = callable(self[i]) (CPU)"},
    {"const_data_ptr", tensor_const_data_ptr, METH_NOARGS, "const_data_ptr(): data_ptr()"},
    {NULL},
};
#undef CT_M

#define CT_FN(name, doc) {#name, CT_FASTCALL(function_##name), CT_METH_FK, doc}
PyMethodDef ct_tensor_more_module_methods[] = {
    CT_FN(resize_as_, "resize_as_(input, the_template)"),
    CT_FN(as_strided_, "as_strided_(input, size, stride, storage_offset=None)"),
    CT_FN(is_floating_point, "is_floating_point(input)"),
    CT_FN(get_device, "get_device(input): CUDA ordinal, or -1 on the CPU"),
    CT_FN(nonzero_static, "nonzero_static(input, *, size, fill_value=-1)"),
    {"is_storage", function_is_storage, METH_O, "is_storage(obj)"},
    CT_FN(lstm, "lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)"),
    CT_FN(gru, "gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)"),
    CT_FN(rnn_tanh, "rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)"),
    CT_FN(rnn_relu, "rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)"),
    CT_FN(convolution, "convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)"),
    CT_FN(conv_tbc, "conv_tbc(input, weight, bias, pad=0)"),
    CT_FN(batch_norm_update_stats, "batch_norm_update_stats(input, running_mean, running_var, momentum)"),
    CT_FN(batch_norm_stats, "batch_norm_stats(input, eps) -> (Tensor, Tensor)"),
    CT_FN(batch_norm_elemt, "batch_norm_elemt(input, weight, bias, mean, invstd, eps) -> Tensor"),
    CT_FN(batch_norm_gather_stats, "batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, "
                                   "eps, count) -> (Tensor, Tensor)"),
    CT_FN(batch_norm_gather_stats_with_counts, "batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, "
                                               "running_var, momentum, eps, counts) -> (Tensor, Tensor)"),
    CT_FN(batch_norm_backward_reduce, "batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, "
                                      "weight_g, bias_g) -> (Tensor, Tensor, Tensor, Tensor)"),
    CT_FN(batch_norm_backward_elemt, "batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, "
                                     "sum_dy_xmu, count) -> Tensor"),
    CT_FN(segment_reduce, "segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, "
                          "unsafe=False, initial=None)"),
    {NULL},
};
#undef CT_FN

PyType_Slot ct_tensor_more_tensor_slots[] = {{0, NULL}};
