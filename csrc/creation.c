/* creation.c: tensor factories with PyTorch's signatures (zeros, ones, empty, full, arange,
 * linspace, logspace, eye, scalar_tensor, the *_like and Tensor.new_* variants), fill_ and
 * zero_, and the argument helpers the other factory files share (see creation.h).
 *
 * Device-generic: zeros/ones/full/eye only allocate and fill through ct_fill_ / the device's
 * memset; arange/linspace/logspace compute their values on the host (cheap, and identical on
 * every device) and move them with ct_to. */
#include "creation.h"
#include "args.h"
#include "autograd.h"
#include "determinism.h"
#include "device.h"
#include "iter.h"
#include "namespace.h"
#include "parallel.h"
#include "random.h"
#include "registry.h"
#include "storage.h"
#include "tensor.h"
#include <float.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------
 * names and checks */

static const char *cpp_type_name(CtDType d)
{
    static const char *names[CT_NUM_DTYPES] = {
        [CT_BOOL] = "bool",       [CT_U8] = "uint8_t", [CT_I8] = "int8_t",  [CT_I16] = "int16_t",
        [CT_I32] = "int",         [CT_I64] = "int64_t", [CT_F16] = "c10::Half", [CT_BF16] = "c10::BFloat16",
        [CT_F32] = "float",       [CT_F64] = "double",
    };
    return names[d];
}

void ct_dtype_range(CtDType d, double *lo, double *hi)
{
    switch (d) {
    case CT_U8:
        *lo = 0, *hi = 255;
        break;
    case CT_I8:
        *lo = -128, *hi = 127;
        break;
    case CT_I16:
        *lo = -32768, *hi = 32767;
        break;
    case CT_I32:
        *lo = -2147483648.0, *hi = 2147483647.0;
        break;
    case CT_I64:
        *lo = -9223372036854775808.0, *hi = 9223372036854775807.0;
        break;
    case CT_F16:
        *lo = -65504.0, *hi = 65504.0;
        break;
    case CT_BF16:
        *lo = -3.38953138925153547590470800371487866880e+38, *hi = 3.38953138925153547590470800371487866880e+38;
        break;
    case CT_F32:
        *lo = -FLT_MAX, *hi = FLT_MAX;
        break;
    default:
        *lo = -DBL_MAX, *hi = DBL_MAX;
        break;
    }
}

int ct_check_scalar_fits(const CtScalar *s, CtDType dtype, bool cpp_names)
{
    bool overflow = false;
    if (dtype == CT_BOOL || s->kind == CT_KIND_BOOL || dtype == CT_F64) {
        return 0;
    }
    double lo, hi;
    ct_dtype_range(dtype, &lo, &hi);
    if (s->kind == CT_KIND_INT) {
        int64_t v = s->v.i;
        if (ct_is_floating(dtype)) {
            overflow = (double)v < lo || (double)v > hi;
        } else if (dtype == CT_U8) {
            overflow = v > 255 || v < -255; /* unsigned targets wrap negatives (two's complement) */
        } else if (dtype != CT_I64) {
            overflow = (double)v < lo || (double)v > hi;
        }
    } else {
        double v = s->v.d;
        if (ct_is_floating(dtype)) {
            overflow = !isinf(v) && !isnan(v) && (v < lo || v > hi);
        } else {
            /* NaN and infinities never fit an integer. Below the range is out at once, above it
             * only once truncation leaves it (127.9 fits int8, -0.5 does not fit uint8);
             * I64's hi + 1 rounds to 2^63, itself out. */
            overflow = isnan(v) || v < lo || v >= hi + 1.0;
        }
    }
    if (overflow) {
        PyErr_Format(PyExc_RuntimeError, "value cannot be converted to type %s without overflow",
                     cpp_names ? cpp_type_name(dtype) : ct_dtype_info[dtype].name);
        return -1;
    }
    return 0;
}

int ct_check_inplace_leaf(const CtTensorObject *t)
{
    if (ct_grad_enabled && t->requires_grad && t->grad_fn == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation.");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * argument helpers */
static int dtype_arg(const char *fname, PyObject *obj, CtDType *out)
{
    if (!PyUnicode_Check(obj) && !PyLong_Check(obj) && !PyFloat_Check(obj) && ct_dtype_from_object(obj, out) == 0) {
        return 0;
    }
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s(): argument 'dtype' must be torch.dtype, not %s", fname, ct_type_name(obj));
    return -1;
}

static int device_arg(const char *fname, PyObject *obj, CtDevice *out)
{
    if (ct_device_from_object(obj, out) == 0) {
        return 0;
    }
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s(): argument 'device' must be torch.device, not %s", fname,
                     ct_type_name(obj));
    }
    return -1;
}

int ct_memory_format_arg(const char *fname, PyObject *obj, CtMemoryFormat *out)
{
    static const struct {
        const char *repr;
        CtMemoryFormat format;
    } formats[] = {{"torch.preserve_format", CT_FORMAT_PRESERVE},
                   {"torch.contiguous_format", CT_FORMAT_CONTIGUOUS},
                   {"torch.channels_last", CT_FORMAT_CHANNELS_LAST},
                   {"torch.channels_last_3d", CT_FORMAT_CHANNELS_LAST_3D}};
    *out = CT_FORMAT_PRESERVE;
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (strcmp(Py_TYPE(obj)->tp_name, "memory_format") == 0) {
        PyObject *s = PyObject_Repr(obj);
        const char *c = s != NULL ? PyUnicode_AsUTF8(s) : NULL;
        for (size_t k = 0; c != NULL && k < sizeof(formats) / sizeof(formats[0]); k++) {
            if (strcmp(c, formats[k].repr) == 0) {
                *out = formats[k].format;
                Py_DECREF(s);
                return 0;
            }
        }
        Py_XDECREF(s);
        if (PyErr_Occurred()) {
            return -1;
        }
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument 'memory_format' must be torch.memory_format, not %s", fname,
                 ct_type_name(obj));
    return -1;
}

/* The dims of a channels_last layout from the fastest to the slowest: C, then the spatial dims from
 * the last, then N. */
static int channels_last_order(CtMemoryFormat format, int ndim, int *order)
{
    int rank = format == CT_FORMAT_CHANNELS_LAST ? 4 : 5;
    if (ndim != rank) {
        return -1;
    }
    order[0] = 1;
    for (int k = 1; k < rank - 1; k++) {
        order[k] = rank - k;
    }
    order[rank - 1] = 0;
    return 0;
}

int ct_channels_last_strides(CtMemoryFormat format, int ndim, const int64_t *sizes, int64_t *strides)
{
    int order[5];
    if (channels_last_order(format, ndim, order) < 0) {
        PyErr_Format(PyExc_RuntimeError, "required rank %d tensor to use %s format",
                     format == CT_FORMAT_CHANNELS_LAST ? 4 : 5,
                     format == CT_FORMAT_CHANNELS_LAST ? "channels_last" : "channels_last_3d");
        return -1;
    }
    int64_t expected = 1;
    for (int k = 0; k < ndim; k++) {
        strides[order[k]] = expected;
        expected *= sizes[order[k]];
    }
    return 0;
}

bool ct_is_contiguous_as(const CtTensorObject *t, CtMemoryFormat format)
{
    if (format != CT_FORMAT_CHANNELS_LAST && format != CT_FORMAT_CHANNELS_LAST_3D) {
        return ct_is_contiguous(t);
    }
    int order[5];
    if (channels_last_order(format, t->ndim, order) < 0) {
        return false;
    }
    int64_t expected = 1; /* no shortcut for an empty tensor: PyTorch's walk decides that too */
    for (int k = 0; k < t->ndim; k++) {
        int d = order[k];
        if (t->sizes[d] != 1) {
            if (t->strides[d] != expected) {
                return false;
            }
            expected *= t->sizes[d];
        }
    }
    return true;
}

/* PyTorch's is_strides_like_channels_last(_3d): walking the dims in format's order (C, the spatial dims
 * from the last, N) the strides never decrease, each at least the span of the dim before; a zero
 * stride on C, an empty dim, or N's stride equal to C's (an (N, 1, 1, 1) tensor, ambiguous) say no. */
static bool strides_like(const CtTensorObject *t, CtMemoryFormat format)
{
    int order[5];
    if (channels_last_order(format, t->ndim, order) < 0 || t->strides[1] == 0) {
        return false;
    }
    int64_t min = 0;
    for (int k = 0; k < t->ndim; k++) {
        int d = order[k];
        if (t->sizes[d] == 0 || t->strides[d] < min || (d == 0 && min == t->strides[1])) {
            return false;
        }
        min = t->strides[d] * (t->sizes[d] > 1 ? t->sizes[d] : 1);
    }
    return true;
}

CtMemoryFormat ct_suggest_memory_format(const CtTensorObject *t)
{
    if (strides_like(t, CT_FORMAT_CHANNELS_LAST)) {
        return CT_FORMAT_CHANNELS_LAST;
    }
    return strides_like(t, CT_FORMAT_CHANNELS_LAST_3D) ? CT_FORMAT_CHANNELS_LAST_3D : CT_FORMAT_CONTIGUOUS;
}

CtTensorObject *ct_as_memory_format(CtTensorObject *t, CtMemoryFormat format)
{
    int rank = format == CT_FORMAT_CHANNELS_LAST ? 4 : format == CT_FORMAT_CHANNELS_LAST_3D ? 5 : 0;
    if (t == NULL || t->ndim != rank) {
        return t;
    }
    if (ct_is_contiguous_as(t, format)) {
        /* only the strides of size-1 dims (or of an empty tensor) can differ: they address nothing, so
         * a result no one else holds takes format's exact strides, as PyTorch's outputs have */
        if (Py_REFCNT(t) == 1) {
            ct_channels_last_strides(format, t->ndim, t->sizes, t->strides);
        }
        return t;
    }
    Py_SETREF(t, ct_to_memory_format(t, t->dtype, ct_device_of(t), false, false, format));
    return t;
}

int ct_factory_options(const char *fname, PyObject *const *kw, CtFactoryOptions *opt)
{
    memset(opt, 0, sizeof(*opt));
    opt->default_device = ct_default_device(&opt->device); /* the *_like / new_* callers take their input's */
    opt->dtype = ct_default_float_dtype;
    CtTensorObject *out;
    if (ct_arg_out(kw[0], fname, &out) < 0) {
        return -1;
    }
    opt->out = (PyObject *)out;
    if (kw[1] != NULL && kw[1] != Py_None) {
        if (dtype_arg(fname, kw[1], &opt->dtype) < 0) {
            return -1;
        }
        opt->has_dtype = true;
        if (out != NULL && opt->dtype != out->dtype) { /* PyTorch's check_out_type_matches */
            PyErr_Format(PyExc_RuntimeError, "dtype %s does not match dtype of out parameter (%s)",
                         ct_scalar_type_name(opt->dtype), ct_scalar_type_name(out->dtype));
            return -1;
        }
    }
    if (ct_layout_arg(fname, kw[2]) < 0) { /* only torch.strided (or None) */
        return -1;
    }
    if (kw[3] != NULL && kw[3] != Py_None) {
        if (device_arg(fname, kw[3], &opt->device) < 0) {
            return -1;
        }
        opt->has_device = true;
        opt->default_device = false;
        if (out != NULL && opt->device.type != ct_device_of(out).type) { /* check_out_type_matches: the type only */
            PyErr_Format(PyExc_RuntimeError, "device type %s does not match device type of out parameter (%s)",
                         opt->device.type == CT_DEV_CPU ? "cpu" : "cuda",
                         ct_device_of(out).type == CT_DEV_CPU ? "cpu" : "cuda");
            return -1;
        }
    }
    opt->pin_memory = false;
    if (ct_bool_arg(fname, "pin_memory", kw[4], &opt->pin_memory) < 0 ||
        ct_bool_arg(fname, "requires_grad", kw[5], &opt->requires_grad) < 0 ||
        ct_memory_format_arg(fname, kw[6], &opt->memory_format) < 0) {
        return -1;
    }
    opt->contiguous_format = opt->memory_format == CT_FORMAT_CONTIGUOUS;
    return 0;
}

CtTensorObject *ct_factory_pin(CtTensorObject *t, bool pin)
{
    if (t == NULL || !pin) {
        return t;
    }
    PyObject *pinned = ct_call_method((PyObject *)t, "pin_memory", NULL);
    Py_DECREF(t);
    return (CtTensorObject *)pinned;
}

PyObject *ct_factory_finish(const char *fname, CtTensorObject *t, const CtFactoryOptions *opt)
{
    if ((t = ct_factory_pin(t, opt->pin_memory)) == NULL) {
        return NULL;
    }
    /* channels_last: the result, made in another layout, moved into it (its values unchanged); a fresh
     * tensor already laid out so (empty, or size-1 dims) just takes the layout's canonical strides */
    if (opt->memory_format == CT_FORMAT_CHANNELS_LAST || opt->memory_format == CT_FORMAT_CHANNELS_LAST_3D) {
        if (ct_is_contiguous_as(t, opt->memory_format)) {
            if (ct_channels_last_strides(opt->memory_format, t->ndim, t->sizes, t->strides) < 0) {
                Py_DECREF(t);
                return NULL;
            }
        } else {
            Py_SETREF(t, ct_to_memory_format(t, t->dtype, ct_device_of(t), false, false, opt->memory_format));
            if (t == NULL) {
                return NULL;
            }
        }
    }
    if (opt->requires_grad) {
        if (!ct_is_floating(t->dtype)) {
            Py_DECREF(t);
            PyErr_SetString(PyExc_RuntimeError, "Only Tensors of floating point and complex dtype can require gradients");
            return NULL;
        }
        t->requires_grad = true;
    }
    if (opt->out == NULL) {
        return (PyObject *)t;
    }
    CtTensorObject *out = CT_TENSOR(opt->out);
    /* an out= of another shape is resized, as PyTorch's factories do: silently, but for arange's warning */
    if ((out->ndim != t->ndim || memcmp(out->sizes, t->sizes, sizeof(int64_t) * t->ndim) != 0) &&
        ct_resize_output_ex(out, t->ndim, t->sizes, strcmp(fname, "arange") == 0) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    int r = ct_copy_(out, t);
    Py_DECREF(t);
    if (r < 0) {
        return NULL;
    }
    ct_bump_version(out);
    return Py_NewRef(opt->out);
}

/* An int-like size element: Python int (not bool), numpy integer, 0-d integer tensor. */
static bool is_int_like(PyObject *o)
{
    if (PyBool_Check(o) || PyFloat_Check(o)) {
        return false;
    }
    if (PyLong_Check(o)) {
        return true;
    }
    if (CtTensor_Check(o)) {
        return CT_TENSOR(o)->ndim == 0 && ct_is_integral(CT_TENSOR(o)->dtype, false);
    }
    return PyIndex_Check(o) && strcmp(ct_type_name(o), "numpy.bool") != 0 &&
           strcmp(ct_type_name(o), "numpy.bool_") != 0;
}

/* Converts an int-like object; -1 with an exception on overflow (TypeError, PyTorch's words). */
static int int_like_value(const char *fname, const char *argname, int pos, PyObject *o, int64_t *out)
{
    PyObject *idx = PyNumber_Index(o);
    if (idx == NULL) {
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
    Py_DECREF(idx);
    if (overflow) {
        PyErr_Format(PyExc_TypeError,
                     "%s(): argument '%s' failed to unpack the object at pos %d with error \"Overflow when unpacking "
                     "long long\"",
                     fname, argname, pos);
        return -1;
    }
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = v;
    return 0;
}

int ct_parse_size_arg(const char *fname, const char *argname, int pos, PyObject *obj, int64_t *sizes)
{
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        if (pos > 0) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be tuple of ints, not %s", fname,
                         argname, pos, ct_type_name(obj));
        } else {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be tuple of ints, not %s", fname, argname,
                         ct_type_name(obj));
        }
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions, got %zd", CT_MAX_DIMS, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(obj, i);
        if (!is_int_like(item)) {
            if (pos > 0) {
                PyErr_Format(PyExc_TypeError,
                             "%s(): argument '%s' (position %d) must be tuple of ints, but found element of type %s at "
                             "pos %zd",
                             fname, argname, pos, ct_type_name(item), i);
            } else {
                PyErr_Format(PyExc_TypeError,
                             "%s(): argument '%s' must be tuple of ints, but found element of type %s at pos %zd",
                             fname, argname, ct_type_name(item), i);
            }
            return -1;
        }
        if (int_like_value(fname, argname, (int)i + 1, item, &sizes[i]) < 0) {
            return -1;
        }
    }
    return (int)n;
}

int ct_parse_size_varargs(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                          const char *const *names, PyObject **out, int64_t *sizes)
{
    /* keywords only: their values sit after the positional args */
    if (ct_parse_args(fname, args + nargs, 0, kwnames, names, 0, out) < 0) {
        return -1;
    }
    if (nargs > 0 && out[0] != NULL) {
        PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument 'size'", fname);
        return -1;
    }
    if (nargs == 0) {
        if (out[0] == NULL) {
            PyErr_Format(PyExc_TypeError, "%s() missing 1 required positional arguments: \"size\"", fname);
            return -1;
        }
        return ct_parse_size_arg(fname, "size", 0, out[0], sizes);
    }
    if (nargs == 1 && !is_int_like(args[0])) {
        return ct_parse_size_arg(fname, "size", 1, args[0], sizes);
    }
    if (nargs > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions, got %zd", CT_MAX_DIMS, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if (!is_int_like(args[i])) {
            PyErr_Format(PyExc_TypeError,
                         "%s(): argument 'size' failed to unpack the object at pos %zd with error \"type must be tuple "
                         "of ints,but got %s\"",
                         fname, i + 1, ct_type_name(args[i]));
            return -1;
        }
        if (int_like_value(fname, "size", (int)i + 1, args[i], &sizes[i]) < 0) {
            return -1;
        }
    }
    return (int)nargs;
}

int ct_number_arg(const char *fname, const char *argname, int pos, PyObject *obj, CtScalar *out)
{
    bool ok = PyBool_Check(obj) || PyLong_Check(obj) || PyFloat_Check(obj);
    if (!ok && CtTensor_Check(obj)) {
        ok = CT_TENSOR(obj)->ndim == 0;
    } else if (!ok && !PyUnicode_Check(obj) && !PyComplex_Check(obj) && !PySequence_Check(obj)) {
        ok = PyIndex_Check(obj) || (Py_TYPE(obj)->tp_as_number != NULL && Py_TYPE(obj)->tp_as_number->nb_float);
    }
    if (!ok) {
        if (pos > 0) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Number, not %s", fname, argname,
                         pos, ct_type_name(obj));
        } else {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Number, not %s", fname, argname,
                         ct_type_name(obj));
        }
        return -1;
    }
    if (ct_scalar_from_object(obj, out) < 0) {
        if (PyErr_ExceptionMatches(PyExc_RuntimeError) && PyLong_Check(obj)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_OverflowError, "int too big to convert");
        }
        return -1;
    }
    return 0;
}

int ct_bool_arg(const char *fname, const char *argname, PyObject *obj, bool *out)
{
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (!PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be bool, not %s", fname, argname, ct_type_name(obj));
        return -1;
    }
    *out = obj == Py_True;
    return 0;
}

int ct_int_arg(const char *fname, const char *argname, int pos, PyObject *obj, int64_t *out)
{
    if (!is_int_like(obj)) {
        if (pos > 0) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be int, not %s", fname, argname, pos,
                         ct_type_name(obj));
        } else {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be int, not %s", fname, argname,
                         ct_type_name(obj));
        }
        return -1;
    }
    return int_like_value(fname, argname, pos, obj, out);
}

/* ------------------------------------------------------------------------------------------
 * factories callable from C */
int ct_zero_(CtTensorObject *t)
{
    int64_t n = ct_numel(t);
    if (n > 0 && ct_is_contiguous(t)) {
        /* all-zero bits are 0 in every dtype */
        const CtDeviceOps *ops = ct_device_ops(ct_device_of(t));
        if (ops == NULL || ops->memset(ct_data(t), 0, (size_t)n * ct_itemsize(t), ct_device_of(t)) < 0) {
            return -1;
        }
    } else if (n > 0) {
        CtScalar zero = {CT_KIND_INT, {.i = 0}};
        if (ct_fill_(t, &zero) < 0) {
            return -1;
        }
    }
    ct_bump_version(t);
    return 0;
}

CtTensorObject *ct_zeros(int ndim, const int64_t *sizes, CtDType dtype, CtDevice device)
{
    CtTensorObject *t = ct_empty(ndim, sizes, dtype, device);
    if (t != NULL && ct_zero_(t) < 0) {
        Py_CLEAR(t);
    }
    return t;
}

CtTensorObject *ct_full(int ndim, const int64_t *sizes, const CtScalar *value, CtDType dtype, CtDevice device)
{
    if (ct_check_scalar_fits(value, dtype, true) < 0) {
        return NULL;
    }
    CtTensorObject *t = ct_empty(ndim, sizes, dtype, device);
    if (t != NULL && ct_numel(t) > 0 && ct_fill_(t, value) < 0) {
        Py_CLEAR(t);
    }
    return t;
}

CtTensorObject *ct_ones(int ndim, const int64_t *sizes, CtDType dtype, CtDevice device)
{
    CtScalar one = {CT_KIND_INT, {.i = 1}};
    return ct_full(ndim, sizes, &one, dtype, device);
}

CtTensorObject *ct_empty_like_preserve(const CtTensorObject *t, CtDType dtype, CtDevice device)
{
    int64_t strides[CT_MAX_DIMS];
    ct_preserve_strides(t, strides);
    return ct_empty_strided(t->ndim, t->sizes, strides, dtype, device);
}

CtTensorObject *ct_zeros_like(const CtTensorObject *t)
{
    CtTensorObject *r = ct_empty_like_preserve(t, t->dtype, ct_device_of(t));
    if (r != NULL && ct_zero_(r) < 0) {
        Py_CLEAR(r);
    }
    return r;
}

CtTensorObject *ct_ones_like(const CtTensorObject *t)
{
    CtScalar one = {CT_KIND_INT, {.i = 1}};
    CtTensorObject *r = ct_empty_like_preserve(t, t->dtype, ct_device_of(t));
    if (r != NULL && ct_numel(r) > 0 && ct_fill_(r, &one) < 0) {
        Py_CLEAR(r);
    }
    return r;
}

/* --- host-computed sequences (arange, linspace, logspace) ----------------------------------- */
typedef enum { SEQ_ARANGE, SEQ_LINSPACE, SEQ_LOGSPACE } SeqKind;

typedef struct {
    SeqKind kind;
    CtDType dtype;
    char *data;
    int64_t n;
    /* arange: value_i = start + i * step in the dtype's accumulate type */
    int64_t istart, istep;
    double dstart, dstep, dend;
    float fstart, fstep, fend;
    double base; /* logspace */
} SeqCtx;

static void seq_fill(int64_t begin, int64_t end, void *vctx)
{
    const SeqCtx *c = vctx;
    size_t isz = ct_dtype_info[c->dtype].itemsize;
    int64_t half = c->n / 2;
    bool integral = !ct_is_floating(c->dtype);
    bool narrow = c->dtype == CT_F16 || c->dtype == CT_BF16 || c->dtype == CT_F32;
    for (int64_t i = begin; i < end; i++) {
        char *p = c->data + i * isz;
        if (c->kind == SEQ_ARANGE) {
            if (integral) {
                ct_store_int64(c->dtype, p, (int64_t)((uint64_t)c->istart + (uint64_t)i * (uint64_t)c->istep));
            } else if (c->dtype == CT_F16 || c->dtype == CT_BF16) {
                ct_store_double(c->dtype, p, c->fstart + (float)i * c->fstep);
            } else {
                ct_store_double(c->dtype, p, c->dstart + (double)i * c->dstep);
            }
        } else if (c->kind == SEQ_LINSPACE) {
            /* PyTorch's symmetric formula: from the start for the first half, from the end after */
            if (integral || c->dtype == CT_F64) {
                double v = i < half ? c->dstart + c->dstep * (double)i : c->dend - c->dstep * (double)(c->n - i - 1);
                if (integral) {
                    ct_store_int64(c->dtype, p, (int64_t)v);
                } else {
                    ct_store_double(c->dtype, p, v);
                }
            } else if (narrow) {
                float v = i < half ? c->fstart + c->fstep * (float)i : c->fend - c->fstep * (float)(c->n - i - 1);
                ct_store_double(c->dtype, p, v);
            }
        } else {
            double e = i < half ? c->dstart + c->dstep * (double)i : c->dend - c->dstep * (double)(c->n - i - 1);
            double v = pow(c->base, e);
            if (integral) {
                ct_store_int64(c->dtype, p, (int64_t)v);
            } else {
                ct_store_double(c->dtype, p, v);
            }
        }
    }
}

/* Runs ctx over a new host tensor of n elements and moves it to device. */
static CtTensorObject *seq_tensor(SeqCtx *ctx, CtDevice device)
{
    int64_t n = ctx->n;
    CtTensorObject *t = ct_empty(1, &n, ctx->dtype, ct_cpu());
    if (t == NULL) {
        return NULL;
    }
    ctx->data = ct_data(t);
    ct_parallel_for(n, 1 << 15, seq_fill, ctx);
    if (device.type == CT_DEV_CPU) {
        return t;
    }
    CtTensorObject *moved = ct_to(t, ctx->dtype, device, false);
    Py_DECREF(t);
    return moved;
}

static void format_scalar(char *buf, size_t n, const CtScalar *s)
{
    if (s->kind == CT_KIND_FLOAT) {
        snprintf(buf, n, "%g", s->v.d);
    } else {
        snprintf(buf, n, "%lld", (long long)ct_scalar_to_int(s));
    }
}

CtTensorObject *ct_arange(const CtScalar *start, const CtScalar *end, const CtScalar *step, CtDType dtype,
                          CtDevice device)
{
    double s = ct_scalar_to_double(start), e = ct_scalar_to_double(end), st = ct_scalar_to_double(step);
    if (dtype == CT_BOOL) {
        PyErr_Format(PyExc_NotImplementedError, "\"arange_%s\" not implemented for 'Bool'",
                     device.type == CT_DEV_CUDA ? "cuda" : "cpu");
        return NULL;
    }
    if (!isfinite(s) || !isfinite(e)) {
        char a[64], b[64];
        format_scalar(a, sizeof(a), start);
        format_scalar(b, sizeof(b), end);
        PyErr_Format(PyExc_RuntimeError, "unsupported range: %s -> %s", a, b);
        return NULL;
    }
    if (st == 0 || isnan(st)) {
        PyErr_SetString(PyExc_RuntimeError, "step must be nonzero");
        return NULL;
    }
    if ((st > 0 && e < s) || (st < 0 && e > s)) {
        PyErr_SetString(PyExc_RuntimeError, "upper bound and lower bound inconsistent with step sign");
        return NULL;
    }
    int64_t n;
    bool all_int = start->kind != CT_KIND_FLOAT && end->kind != CT_KIND_FLOAT && step->kind != CT_KIND_FLOAT;
    if (all_int) {
        /* exact ceil((end - start) / step) for integers of any size */
        __int128 d = (__int128)ct_scalar_to_int(end) - ct_scalar_to_int(start);
        __int128 k = ct_scalar_to_int(step);
        __int128 q = d / k;
        if (q * k != d) {
            q += 1; /* d and k have the same sign here, so the quotient truncated towards zero */
        }
        n = (int64_t)q;
    } else {
        double size_d = ceil((e - s) / st);
        if (!(size_d >= 0 && size_d < 9.2233720368547758e18)) {
            PyErr_SetString(PyExc_RuntimeError, "invalid size, possible overflow?");
            return NULL;
        }
        n = (int64_t)size_d;
    }
    SeqCtx ctx = {.kind = SEQ_ARANGE, .dtype = dtype, .n = n};
    ctx.istart = ct_scalar_to_int(start);
    ctx.istep = ct_scalar_to_int(step);
    ctx.dstart = s;
    ctx.dstep = st;
    ctx.fstart = (float)s;
    ctx.fstep = (float)st;
    return seq_tensor(&ctx, device);
}

static CtTensorObject *linlogspace(SeqKind kind, double start, double end, int64_t steps, double base, CtDType dtype,
                                   CtDevice device)
{
    if (steps < 0) {
        PyErr_SetString(PyExc_RuntimeError, "number of steps must be non-negative");
        return NULL;
    }
    if (dtype == CT_BOOL) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s_cpu\" not implemented for 'Bool'",
                     kind == SEQ_LINSPACE ? "linspace" : "logspace");
        return NULL;
    }
    SeqCtx ctx = {.kind = kind, .dtype = dtype, .n = steps, .base = base};
    if (steps == 1) {
        end = start; /* one step is the start (the symmetric formula would give the end) */
    }
    if (!ct_is_floating(dtype)) {
        start = (double)(int64_t)start; /* PyTorch converts the ends to the integer type first (logspace's exponents too) */
        end = (double)(int64_t)end;
    }
    ctx.dstart = start;
    ctx.dend = end;
    ctx.dstep = steps > 1 ? (end - start) / (double)(steps - 1) : 0.0;
    ctx.fstart = (float)ct_round_to_dtype(dtype, (float)start);
    ctx.fend = (float)ct_round_to_dtype(dtype, (float)end);
    ctx.fstep = steps > 1 ? (float)ct_round_to_dtype(dtype, (ctx.fend - ctx.fstart) / (float)(steps - 1)) : 0.0f;
    return seq_tensor(&ctx, device);
}

CtTensorObject *ct_linspace(double start, double end, int64_t steps, CtDType dtype, CtDevice device)
{
    return linlogspace(SEQ_LINSPACE, start, end, steps, 0.0, dtype, device);
}

CtTensorObject *ct_eye(int64_t n, int64_t m, CtDType dtype, CtDevice device)
{
    int64_t sizes[2] = {n, m};
    CtTensorObject *t = ct_zeros(2, sizes, dtype, device);
    if (t == NULL) {
        return NULL;
    }
    int64_t k = n < m ? n : m;
    if (k > 0) {
        /* the diagonal as a strided view, filled with ones */
        int64_t stride = m + 1;
        CtTensorObject *diag = ct_view_of(t, 1, &k, &stride, 0);
        CtScalar one = {CT_KIND_INT, {.i = 1}};
        int r = diag != NULL ? ct_fill_(diag, &one) : -1;
        Py_XDECREF(diag);
        if (r < 0) {
            Py_DECREF(t);
            return NULL;
        }
    }
    return t;
}

/* ------------------------------------------------------------------------------------------
 * Python functions */
#define FACTORY_KW(a, npos) ((a) + (npos))

/* zeros/ones/empty(*size, out=None, dtype=None, layout=None, device=None, pin_memory=False,
 * requires_grad=False, memory_format=None) */
typedef enum { FILL_ZEROS, FILL_ONES, FILL_EMPTY } FillKind;

static PyObject *sized_factory(const char *fname, FillKind kind, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    static const char *const names[] = {"size", CT_FACTORY_KW, NULL};
    PyObject *a[1 + CT_FACTORY_NKW];
    int64_t sizes[CT_MAX_DIMS];
    CtFactoryOptions opt;
    int nd = ct_parse_size_varargs(fname, args, nargs, kwnames, names, a, sizes);
    if (nd < 0 || ct_factory_options(fname, FACTORY_KW(a, 1), &opt) < 0) {
        return NULL;
    }
    if (kind == FILL_ZEROS) {
        for (int i = 0; i < nd; i++) {
            if (sizes[i] < 0) {
                PyErr_SetString(PyExc_RuntimeError, "zeros: Dimension size must be non-negative.");
                return NULL;
            }
        }
    }
    CtTensorObject *t = kind == FILL_ZEROS  ? ct_zeros(nd, sizes, opt.dtype, opt.device)
                        : kind == FILL_ONES ? ct_ones(nd, sizes, opt.dtype, opt.device)
                                            : ct_empty(nd, sizes, opt.dtype, opt.device);
    if (t == NULL || (kind == FILL_EMPTY && ct_deterministic_fill_empty(t) < 0)) {
        Py_XDECREF(t);
        return NULL;
    }
    return ct_factory_finish(fname, t, &opt);
}

static PyObject *py_zeros(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return sized_factory("zeros", FILL_ZEROS, args, nargs, kwnames);
}
static PyObject *py_ones(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return sized_factory("ones", FILL_ONES, args, nargs, kwnames);
}
static PyObject *py_empty(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return sized_factory("empty", FILL_EMPTY, args, nargs, kwnames);
}

/* --- empty_strided / empty_permuted ------------------------------------------------------------ */
#define STRIDED_FACTORY_KW "*dtype", "*layout", "*device", "*pin_memory", "*requires_grad"

/* The arguments of empty_strided / empty_permuted: (size, <names[1]>, *, STRIDED_FACTORY_KW). Fills sizes and
 * second with their lengths in *nd and *n2 and the factory options; 0 or -1. */
static int strided_factory_args(const char *fname, const char *const *names, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames, int64_t *sizes, int *nd, int64_t *second, int *n2,
                                CtFactoryOptions *opt)
{
    PyObject *a[7];
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0 ||
        (*nd = ct_parse_size_arg(fname, "size", 1, a[0], sizes)) < 0 ||
        (*n2 = ct_parse_size_arg(fname, names[1], 2, a[1], second)) < 0) {
        return -1;
    }
    PyObject *kw[CT_FACTORY_NKW] = {NULL, a[2], a[3], a[4], a[5], a[6], NULL};
    return ct_factory_options(fname, kw, opt);
}

/* empty_strided(size, stride, *, dtype, layout, device, pin_memory, requires_grad): uninitialised, with
 * exactly these strides over a storage just large enough for the furthest element. */
static PyObject *py_empty_strided(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"size", "stride", STRIDED_FACTORY_KW, NULL};
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    int nd, ns;
    CtFactoryOptions opt;
    if (strided_factory_args("empty_strided", names, args, nargs, kwnames, sizes, &nd, strides, &ns, &opt) < 0) {
        return NULL;
    }
    if (nd != ns) {
        PyErr_Format(PyExc_RuntimeError, "dimensionality of sizes (%d) must match dimensionality of strides (%d)", nd,
                     ns);
        return NULL;
    }
    for (int i = 0; i < nd; i++) {
        if (sizes[i] < 0) {
            char sbuf[256];
            ct_format_sizes(sbuf, sizeof(sbuf), nd, sizes);
            PyErr_Format(PyExc_RuntimeError, "Trying to create tensor with negative dimension %lld: %s",
                         (long long)sizes[i], sbuf);
            return NULL;
        }
    }
    int64_t nbytes;
    if (ct_storage_nbytes_needed(nd, sizes, strides, 0, ct_dtype_info[opt.dtype].itemsize, &nbytes) < 0) {
        return NULL;
    }
    CtStorageObject *storage = ct_storage_new((size_t)nbytes, opt.device);
    if (storage == NULL) {
        return NULL;
    }
    CtTensorObject *t = ct_tensor_new(storage, 0, nd, sizes, strides, opt.dtype);
    Py_DECREF(storage);
    if (t == NULL || ct_deterministic_fill_empty(t) < 0) {
        Py_XDECREF(t);
        return NULL;
    }
    return ct_factory_finish("empty_strided", t, &opt);
}

/* empty_permuted(size, physical_layout, *, ...): dense and uninitialised, its dims laid out in memory in
 * the order physical_layout gives (outermost first): empty_permuted(s, (0, 2, 3, 1)) is channels_last. */
static PyObject *py_empty_permuted(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"size", "physical_layout", STRIDED_FACTORY_KW, NULL};
    int64_t sizes[CT_MAX_DIMS], layout[CT_MAX_DIMS], physical[CT_MAX_DIMS];
    int nd, nl;
    CtFactoryOptions opt;
    if (strided_factory_args("empty_permuted", names, args, nargs, kwnames, sizes, &nd, layout, &nl, &opt) < 0) {
        return NULL;
    }
    if (nd != nl) {
        PyErr_Format(PyExc_RuntimeError,
                     "Number of dimensions in size does not match the length of the physical_layout; i.e. len(size) = "
                     "%d is not equal to len(physical_layout) = %d",
                     nd, nl);
        return NULL;
    }
    bool seen[CT_MAX_DIMS] = {false};
    for (int i = 0; i < nd; i++) {
        if (layout[i] < 0 || layout[i] >= nd) {
            PyErr_Format(PyExc_RuntimeError,
                         "Dimension out of range (expected to be between 0 and %d, but got %lld at index %d).  NB: "
                         "negative dims not currently supported; file an issue if you want it.",
                         nd - 1, (long long)layout[i], i);
            return NULL;
        }
        if (seen[layout[i]]) {
            PyErr_SetString(PyExc_RuntimeError, "Duplicate dim not allowed");
            return NULL;
        }
        seen[layout[i]] = true;
        physical[i] = sizes[layout[i]];
    }
    CtTensorObject *t = ct_empty(nd, physical, opt.dtype, opt.device); /* row-major in the physical order */
    if (t == NULL) {
        return NULL;
    }
    int64_t physical_strides[CT_MAX_DIMS];
    memcpy(physical_strides, t->strides, sizeof(int64_t) * (size_t)nd);
    for (int i = 0; i < nd; i++) {
        t->sizes[layout[i]] = physical[i];
        t->strides[layout[i]] = physical_strides[i];
    }
    if (ct_deterministic_fill_empty(t) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return ct_factory_finish("empty_permuted", t, &opt);
}

/* full(size, fill_value, *, out, dtype, layout, device, pin_memory, requires_grad) */
static PyObject *py_full(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"size", "fill_value", CT_FACTORY_KW, NULL};
    PyObject *a[2 + CT_FACTORY_NKW];
    int64_t sizes[CT_MAX_DIMS];
    CtFactoryOptions opt;
    CtScalar value;
    if (ct_parse_args("full", args, nargs, kwnames, names, 2, a) < 0) {
        return NULL;
    }
    int nd = ct_parse_size_arg("full", "size", 1, a[0], sizes);
    if (nd < 0 || ct_number_arg("full", "fill_value", 2, a[1], &value) < 0 ||
        ct_factory_options("full", FACTORY_KW(a, 2), &opt) < 0) {
        return NULL;
    }
    CtDType dtype = opt.has_dtype ? opt.dtype : ct_scalar_dtype(&value);
    CtTensorObject *t = ct_full(nd, sizes, &value, dtype, opt.device);
    if (t == NULL) {
        return NULL;
    }
    return ct_factory_finish("full", t, &opt);
}

/* scalar_tensor(s, *, dtype=default float, ...) */
static PyObject *py_scalar_tensor(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"s", CT_FACTORY_KW, NULL};
    PyObject *a[1 + CT_FACTORY_NKW];
    CtFactoryOptions opt;
    CtScalar value;
    if (ct_parse_args("scalar_tensor", args, nargs, kwnames, names, 1, a) < 0 ||
        ct_number_arg("scalar_tensor", "s", 1, a[0], &value) < 0 ||
        ct_factory_options("scalar_tensor", FACTORY_KW(a, 1), &opt) < 0) {
        return NULL;
    }
    /* PyTorch checks the number against every dtype but the 16-bit floats (1e20 -> inf) */
    if (opt.dtype != CT_F16 && opt.dtype != CT_BF16 && ct_check_scalar_fits(&value, opt.dtype, true) < 0) {
        return NULL;
    }
    CtTensorObject *t = ct_scalar_tensor(&value, opt.dtype, opt.device);
    if (t == NULL) {
        return NULL;
    }
    return ct_factory_finish("scalar_tensor", t, &opt);
}

/* arange(end) / arange(start, end, step=1), with start=/end=/step= keywords. */
static PyObject *py_arange(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"start", "end", "step", CT_FACTORY_KW, NULL};
    PyObject *a[3 + CT_FACTORY_NKW];
    CtFactoryOptions opt;
    if (ct_parse_args("arange", args, nargs, kwnames, names, 0, a) < 0 ||
        ct_factory_options("arange", FACTORY_KW(a, 3), &opt) < 0) {
        return NULL;
    }
    PyObject *start_obj = a[0], *end_obj = a[1], *step_obj = a[2];
    int end_pos = 2;
    if (nargs == 1 && end_obj == NULL) { /* arange(end) */
        end_obj = a[0];
        start_obj = NULL;
        end_pos = 1;
    }
    if (end_obj == NULL) {
        PyErr_SetString(PyExc_TypeError, "arange() received an invalid combination of arguments - got no 'end', "
                                         "expected (Number end) or (Number start, Number end, Number step=1)");
        return NULL;
    }
    CtScalar start = {CT_KIND_INT, {.i = 0}}, end, step = {CT_KIND_INT, {.i = 1}};
    if ((start_obj != NULL && ct_number_arg("arange", "start", 1, start_obj, &start) < 0) ||
        ct_number_arg("arange", "end", end_pos, end_obj, &end) < 0 ||
        (step_obj != NULL && ct_number_arg("arange", "step", 3, step_obj, &step) < 0)) {
        return NULL;
    }
    CtDType dtype = opt.dtype;
    if (!opt.has_dtype) {
        bool any_float = start.kind == CT_KIND_FLOAT || end.kind == CT_KIND_FLOAT || step.kind == CT_KIND_FLOAT;
        dtype = any_float ? ct_default_float_dtype : CT_I64;
    }
    CtTensorObject *t = ct_arange(&start, &end, &step, dtype, opt.device);
    if (t == NULL) {
        return NULL;
    }
    return ct_factory_finish("arange", t, &opt);
}

/* linspace(start, end, steps, *, ...) and logspace(start, end, steps, base=10.0, *, ...) */
static PyObject *lin_log(const char *fname, SeqKind kind, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const lin_names[] = {"start", "end", "steps", CT_FACTORY_KW, NULL};
    static const char *const log_names[] = {"start", "end", "steps", "base", CT_FACTORY_KW, NULL};
    PyObject *a[4 + CT_FACTORY_NKW];
    int npos = kind == SEQ_LINSPACE ? 3 : 4;
    CtFactoryOptions opt;
    CtScalar start, end, base = {CT_KIND_FLOAT, {.d = 10.0}};
    int64_t steps;
    if (ct_parse_args(fname, args, nargs, kwnames, kind == SEQ_LINSPACE ? lin_names : log_names, 3, a) < 0 ||
        ct_number_arg(fname, "start", 1, a[0], &start) < 0 || ct_number_arg(fname, "end", 2, a[1], &end) < 0 ||
        ct_int_arg(fname, "steps", 3, a[2], &steps) < 0 ||
        (kind == SEQ_LOGSPACE && a[3] != NULL && ct_number_arg(fname, "base", 4, a[3], &base) < 0) ||
        ct_factory_options(fname, FACTORY_KW(a, npos), &opt) < 0) {
        return NULL;
    }
    CtTensorObject *t = linlogspace(kind, ct_scalar_to_double(&start), ct_scalar_to_double(&end), steps,
                                    ct_scalar_to_double(&base), opt.dtype, opt.device);
    if (t == NULL) {
        return NULL;
    }
    return ct_factory_finish(fname, t, &opt);
}

static PyObject *py_linspace(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return lin_log("linspace", SEQ_LINSPACE, args, nargs, kwnames);
}
static PyObject *py_logspace(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return lin_log("logspace", SEQ_LOGSPACE, args, nargs, kwnames);
}

/* eye(n, m=None, *, ...) */
static PyObject *py_eye(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"n", "m", CT_FACTORY_KW, NULL};
    PyObject *a[2 + CT_FACTORY_NKW];
    CtFactoryOptions opt;
    int64_t n, m;
    if (ct_parse_args("eye", args, nargs, kwnames, names, 1, a) < 0 || ct_int_arg("eye", "n", 1, a[0], &n) < 0 ||
        ct_factory_options("eye", FACTORY_KW(a, 2), &opt) < 0) {
        return NULL;
    }
    m = n;
    if (a[1] != NULL && ct_int_arg("eye", "m", 2, a[1], &m) < 0) {
        return NULL;
    }
    if (n < 0) {
        PyErr_Format(PyExc_RuntimeError, "n must be greater or equal to 0, got %lld", (long long)n);
        return NULL;
    }
    if (m < 0) {
        PyErr_Format(PyExc_RuntimeError, "m must be greater or equal to 0, got %lld", (long long)m);
        return NULL;
    }
    CtTensorObject *t = ct_eye(n, m, opt.dtype, opt.device);
    if (t == NULL) {
        return NULL;
    }
    return ct_factory_finish("eye", t, &opt);
}

/* --- *_like ------------------------------------------------------------------------------------ */
static int like_input(const char *fname, PyObject *obj)
{
    if (!CtTensor_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' (position 1) must be Tensor, not %s", fname,
                     ct_type_name(obj));
        return -1;
    }
    return 0;
}

/* A new uninitialised tensor like `input` honouring dtype=/device=/memory_format=. */
static CtTensorObject *empty_like_opts(CtTensorObject *input, CtFactoryOptions *opt)
{
    CtDType dtype = opt->has_dtype ? opt->dtype : input->dtype;
    CtDevice device = opt->has_device ? opt->device : ct_device_of(input);
    opt->dtype = dtype;
    if (opt->memory_format == CT_FORMAT_PRESERVE) {
        return ct_empty_like_preserve(input, dtype, device);
    }
    CtTensorObject *t = ct_empty(input->ndim, input->sizes, dtype, device);
    if (t != NULL && opt->memory_format != CT_FORMAT_CONTIGUOUS &&
        ct_channels_last_strides(opt->memory_format, t->ndim, t->sizes, t->strides) < 0) {
        Py_CLEAR(t); /* (a fresh dense tensor: its storage fits any dense strides) */
    }
    return t;
}

static PyObject *like_factory(const char *fname, FillKind kind, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    static const char *const names[] = {"input", CT_FACTORY_KW, NULL};
    PyObject *a[1 + CT_FACTORY_NKW];
    CtFactoryOptions opt;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0 || like_input(fname, a[0]) < 0 ||
        ct_factory_options(fname, FACTORY_KW(a, 1), &opt) < 0) {
        return NULL;
    }
    CtTensorObject *t = empty_like_opts(CT_TENSOR(a[0]), &opt);
    if (t == NULL) {
        return NULL;
    }
    int r = 0;
    if (kind == FILL_ZEROS) {
        r = ct_zero_(t);
    } else if (kind == FILL_ONES && ct_numel(t) > 0) {
        CtScalar one = {CT_KIND_INT, {.i = 1}};
        r = ct_fill_(t, &one);
    } else if (kind == FILL_EMPTY) {
        r = ct_deterministic_fill_empty(t);
    }
    if (r < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return ct_factory_finish(fname, t, &opt);
}

static PyObject *py_zeros_like(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return like_factory("zeros_like", FILL_ZEROS, args, nargs, kwnames);
}
static PyObject *py_ones_like(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return like_factory("ones_like", FILL_ONES, args, nargs, kwnames);
}
static PyObject *py_empty_like(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return like_factory("empty_like", FILL_EMPTY, args, nargs, kwnames);
}

static PyObject *py_full_like(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "fill_value", CT_FACTORY_KW, NULL};
    PyObject *a[2 + CT_FACTORY_NKW];
    CtFactoryOptions opt;
    CtScalar value;
    if (ct_parse_args("full_like", args, nargs, kwnames, names, 2, a) < 0 || like_input("full_like", a[0]) < 0 ||
        ct_number_arg("full_like", "fill_value", 2, a[1], &value) < 0 ||
        ct_factory_options("full_like", FACTORY_KW(a, 2), &opt) < 0) {
        return NULL;
    }
    CtTensorObject *t = empty_like_opts(CT_TENSOR(a[0]), &opt);
    if (t == NULL) {
        return NULL;
    }
    if (ct_check_scalar_fits(&value, t->dtype, true) < 0 || (ct_numel(t) > 0 && ct_fill_(t, &value) < 0)) {
        Py_DECREF(t);
        return NULL;
    }
    return ct_factory_finish("full_like", t, &opt);
}

/* --- Tensor.new_* ------------------------------------------------------------------------------ */
static PyObject *new_factory(PyObject *self, const char *fname, FillKind kind, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"size", CT_FACTORY_KW, NULL};
    PyObject *a[1 + CT_FACTORY_NKW];
    int64_t sizes[CT_MAX_DIMS];
    CtFactoryOptions opt;
    CtTensorObject *t = CT_TENSOR(self);
    int nd = ct_parse_size_varargs(fname, args, nargs, kwnames, names, a, sizes);
    if (nd < 0 || ct_factory_options(fname, FACTORY_KW(a, 1), &opt) < 0) {
        return NULL;
    }
    CtDType dtype = opt.has_dtype ? opt.dtype : t->dtype;
    CtDevice device = opt.has_device ? opt.device : ct_device_of(t);
    CtTensorObject *r = kind == FILL_ZEROS  ? ct_zeros(nd, sizes, dtype, device)
                        : kind == FILL_ONES ? ct_ones(nd, sizes, dtype, device)
                                            : ct_empty(nd, sizes, dtype, device);
    if (r == NULL || (kind == FILL_EMPTY && ct_deterministic_fill_empty(r) < 0)) {
        Py_XDECREF(r);
        return NULL;
    }
    return ct_factory_finish(fname, r, &opt);
}

static PyObject *tensor_new_zeros(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return new_factory(self, "new_zeros", FILL_ZEROS, args, nargs, kwnames);
}
static PyObject *tensor_new_ones(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return new_factory(self, "new_ones", FILL_ONES, args, nargs, kwnames);
}
static PyObject *tensor_new_empty(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return new_factory(self, "new_empty", FILL_EMPTY, args, nargs, kwnames);
}

static PyObject *tensor_new_full(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"size", "fill_value", CT_FACTORY_KW, NULL};
    PyObject *a[2 + CT_FACTORY_NKW];
    int64_t sizes[CT_MAX_DIMS];
    CtFactoryOptions opt;
    CtScalar value;
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_parse_args("new_full", args, nargs, kwnames, names, 2, a) < 0) {
        return NULL;
    }
    int nd = ct_parse_size_arg("new_full", "size", 1, a[0], sizes);
    if (nd < 0 || ct_number_arg("new_full", "fill_value", 2, a[1], &value) < 0 ||
        ct_factory_options("new_full", FACTORY_KW(a, 2), &opt) < 0) {
        return NULL;
    }
    CtTensorObject *r = ct_full(nd, sizes, &value, opt.has_dtype ? opt.dtype : t->dtype,
                                opt.has_device ? opt.device : ct_device_of(t));
    if (r == NULL) {
        return NULL;
    }
    return ct_factory_finish("new_full", r, &opt);
}

/* --- in-place fills ------------------------------------------------------------------------------ */
static PyObject *tensor_fill_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"value", NULL};
    PyObject *a[1];
    CtScalar value;
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_parse_args("fill_", args, nargs, kwnames, names, 1, a) < 0 || ct_check_inplace_leaf(t) < 0) {
        return NULL;
    }
    if (CtTensor_Check(a[0]) && CT_TENSOR(a[0])->ndim != 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "fill_ only supports 0-dimension value tensor but got tensor with %d dimensions.",
                     CT_TENSOR(a[0])->ndim);
        return NULL;
    }
    if (ct_number_arg("fill_", "value", 1, a[0], &value) < 0 || ct_check_scalar_fits(&value, t->dtype, true) < 0) {
        return NULL;
    }
    if (ct_numel(t) > 0 && ct_fill_(t, &value) < 0) {
        return NULL;
    }
    ct_bump_version(t);
    return Py_NewRef(self);
}

static PyObject *tensor_zero_(PyObject *self, PyObject *unused)
{
    if (ct_check_inplace_leaf(CT_TENSOR(self)) < 0 || ct_zero_(CT_TENSOR(self)) < 0) {
        return NULL;
    }
    return Py_NewRef(self);
}

/* --- small module functions ----------------------------------------------------------------------- */
static PyObject *py_is_tensor(PyObject *self, PyObject *obj) { return PyBool_FromLong(CtTensor_Check(obj)); }

static PyObject *py_numel(PyObject *self, PyObject *obj)
{
    if (!CtTensor_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "numel(): argument 'input' (position 1) must be Tensor, not %s",
                     ct_type_name(obj));
        return NULL;
    }
    return PyLong_FromLongLong(ct_numel(CT_TENSOR(obj)));
}

PyMethodDef ct_creation_tensor_methods[] = {
    {"fill_", CT_FASTCALL(tensor_fill_), CT_METH_FK, "fill_(value): fills self with value"},
    {"zero_", tensor_zero_, METH_NOARGS, "zero_(): fills self with zeros"},
    {"new_zeros", CT_FASTCALL(tensor_new_zeros), CT_METH_FK, "new_zeros(*size, dtype=None, device=None)"},
    {"new_ones", CT_FASTCALL(tensor_new_ones), CT_METH_FK, "new_ones(*size, dtype=None, device=None)"},
    {"new_empty", CT_FASTCALL(tensor_new_empty), CT_METH_FK, "new_empty(*size, dtype=None, device=None)"},
    {"new_full", CT_FASTCALL(tensor_new_full), CT_METH_FK, "new_full(size, fill_value, dtype=None, device=None)"},
    {NULL},
};

PyMethodDef ct_creation_module_methods[] = {
    {"zeros", CT_FASTCALL(py_zeros), CT_METH_FK, "zeros(*size, dtype=None, device=None, requires_grad=False)"},
    {"ones", CT_FASTCALL(py_ones), CT_METH_FK, "ones(*size, dtype=None, device=None, requires_grad=False)"},
    {"empty", CT_FASTCALL(py_empty), CT_METH_FK, "empty(*size, dtype=None, device=None, requires_grad=False)"},
    {"empty_strided", CT_FASTCALL(py_empty_strided), CT_METH_FK,
     "empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False)"},
    {"empty_permuted", CT_FASTCALL(py_empty_permuted), CT_METH_FK,
     "empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, pin_memory=False, "
     "requires_grad=False)"},
    {"full", CT_FASTCALL(py_full), CT_METH_FK, "full(size, fill_value, dtype=None, device=None)"},
    {"scalar_tensor", CT_FASTCALL(py_scalar_tensor), CT_METH_FK, "scalar_tensor(s, dtype=None, device=None)"},
    {"arange", CT_FASTCALL(py_arange), CT_METH_FK, "arange(start=0, end, step=1, dtype=None, device=None)"},
    {"linspace", CT_FASTCALL(py_linspace), CT_METH_FK, "linspace(start, end, steps, dtype=None, device=None)"},
    {"logspace", CT_FASTCALL(py_logspace), CT_METH_FK, "logspace(start, end, steps, base=10.0, dtype=None)"},
    {"eye", CT_FASTCALL(py_eye), CT_METH_FK, "eye(n, m=None, dtype=None, device=None)"},
    {"zeros_like", CT_FASTCALL(py_zeros_like), CT_METH_FK, "zeros_like(input, dtype=None, device=None)"},
    {"ones_like", CT_FASTCALL(py_ones_like), CT_METH_FK, "ones_like(input, dtype=None, device=None)"},
    {"empty_like", CT_FASTCALL(py_empty_like), CT_METH_FK, "empty_like(input, dtype=None, device=None)"},
    {"full_like", CT_FASTCALL(py_full_like), CT_METH_FK, "full_like(input, fill_value, dtype=None, device=None)"},
    {"is_tensor", py_is_tensor, METH_O, "is_tensor(obj): True for ctorch tensors"},
    {"numel", py_numel, METH_O, "numel(input): number of elements"},
    {NULL},
};

PyType_Slot ct_creation_tensor_slots[] = {{0, NULL}};
