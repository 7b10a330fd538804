/* pool.c: the pooling family (see pool.h).
 *
 *   kernels with a backward node:  max_pool2d_with_indices, avg_pool2d, _adaptive_avg_pool2d,
 *                                  adaptive_max_pool2d, and their backward ops (_max_pool2d_backward,
 *                                  _avg_pool2d_backward, _adaptive_avg_pool2d_backward,
 *                                  _adaptive_max_pool2d_backward), whose own gradients are linear
 *   composites, as PyTorch builds them of the above (autograd records their parts):
 *                                  max_pool2d, max_pool1d(_with_indices), avg_pool1d,
 *                                  adaptive_avg_pool2d (a mean for a 1x1 output),
 *                                  adaptive_avg_pool1d, adaptive_max_pool1d
 *
 * Each front end checks its arguments in PyTorch's order with PyTorch's messages, fills one
 * CtPoolDesc and runs the device's pool kernel; the CPU kernels are here (pool_math.h's per-element
 * functions over a ct_parallel_for), the CUDA ones in cuda/pool.cu. The backward formulas that
 * autograd_formulas.c lists are at the end. */
#include "pool.h"
#include "pool_math.h"
#include "args.h"
#include "autograd.h"
#include "creation.h"
#include "device.h"
#include "dtype.h"
#include "nn.h"
#include "parallel.h"
#include "registry.h"
#include "tensor.h"
#include <limits.h>
#include <string.h>

#define POOL_MAX_LIST 4 /* the longest int list kept (longer ones only report their length) */

/* ====================================================================================================
 * arguments
 * ==================================================================================================== */
static bool is_int_arg(PyObject *o)
{
    if (PyBool_Check(o) || PyFloat_Check(o)) {
        return false;
    }
    if (CtTensor_Check(o)) {
        return CT_TENSOR(o)->ndim == 0 && ct_is_integral(CT_TENSOR(o)->dtype, false);
    }
    return PyLong_Check(o) || PyIndex_Check(o);
}

static int int_value(PyObject *o, int64_t *out)
{
    PyObject *v = PyNumber_Index(o);
    if (v == NULL) {
        return -1;
    }
    long long x = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (x == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = x;
    return 0;
}

/* One int-list argument (PyTorch's IntArrayRef): an int, or a tuple / list of ints. Keeps up to
 * POOL_MAX_LIST values in out and returns the length, or -1 with PyTorch's TypeError. */
static int parse_int_list(const char *fname, const char *argname, int pos, PyObject *obj, int64_t *out)
{
    if (is_int_arg(obj)) {
        return int_value(obj, &out[0]) < 0 ? -1 : 1;
    }
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be tuple of ints, not %s", fname, argname,
                     pos, ct_type_name(obj));
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(obj, i);
        int64_t v;
        if (!is_int_arg(item)) {
            if (i == 0) {
                PyErr_Format(PyExc_TypeError,
                             "%s(): argument '%s' (position %d) must be tuple of ints, but found element of type %s at "
                             "pos 0",
                             fname, argname, pos, ct_type_name(item));
            } else {
                PyErr_Format(PyExc_TypeError,
                             "%s(): argument '%s' failed to unpack the object at pos %zd with error \"type must be "
                             "tuple of ints,but got %s\"",
                             fname, argname, i + 1, ct_type_name(item));
            }
            return -1;
        }
        if (int_value(item, &v) < 0) {
            return -1;
        }
        if (i < POOL_MAX_LIST) {
            out[i] = v;
        }
    }
    return (int)n;
}

/* An optional int list: absent (NULL) gives the one value dflt (or, with dflt < 0, an empty list). */
static int parse_opt_int_list(const char *fname, const char *argname, int pos, PyObject *obj, int64_t dflt,
                              int64_t *out)
{
    if (obj == NULL) {
        out[0] = dflt;
        return dflt < 0 ? 0 : 1;
    }
    return parse_int_list(fname, argname, pos, obj, out);
}

static int parse_bool(const char *fname, const char *argname, int pos, PyObject *obj, bool *out)
{
    if (obj == NULL) {
        return 0;
    }
    if (!PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be bool, not %s", fname, argname, pos,
                     ct_type_name(obj));
        return -1;
    }
    *out = obj == Py_True;
    return 0;
}

static int check_input(const char *fname, PyObject *obj)
{
    if (!CtTensor_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' (position 1) must be Tensor, not %s", fname,
                     ct_type_name(obj));
        return -1;
    }
    return 0;
}

static int not_implemented(const char *kernel, CtDType dtype)
{
    PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", kernel, ct_scalar_type_name(dtype));
    return -1;
}

static void format_shape(char *buf, size_t n, const CtTensorObject *t) { ct_format_sizes(buf, n, t->ndim, t->sizes); }

/* ====================================================================================================
 * shapes
 * ==================================================================================================== */
static int64_t div_floor(int64_t a, int64_t b)
{
    int64_t q = a / b, r = a % b;
    return r != 0 && ((r < 0) != (b < 0)) ? q - 1 : q;
}

/* PyTorch's pooling_output_shape along one axis, with its checks. 0 or -1. */
static int pool_output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode,
                            int64_t *out)
{
    if (stride == 0) {
        PyErr_SetString(PyExc_RuntimeError, "stride should not be zero");
        return -1;
    }
    if (pad < 0) {
        PyErr_Format(PyExc_RuntimeError, "pad must be non-negative, but got pad: %lld", (long long)pad);
        return -1;
    }
    if (pad > ((k - 1) * dil + 1) / 2) {
        PyErr_Format(PyExc_RuntimeError,
                     "pad should be at most half of effective kernel size, but got pad=%lld, kernel_size=%lld and "
                     "dilation=%lld",
                     (long long)pad, (long long)k, (long long)dil);
        return -1;
    }
    int64_t o = div_floor(in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
    if (ceil_mode && (o - 1) * stride >= in + pad) {
        o--; /* the last window must start inside the input or its left padding */
    }
    *out = o;
    return 0;
}

/* PyTorch's pool2d_shape_check on input x, d's sizes set (the (H, W) axes). 0 or -1. */
static int pool2d_shape_check(const CtPoolDesc *d, const CtTensorObject *x)
{
    const int64_t *k = d->kernel + 1, *s = d->stride + 1, *p = d->pad + 1, *dl = d->dilation + 1;
    if (k[1] <= 0 || k[0] <= 0) {
        PyErr_Format(PyExc_RuntimeError, "kernel size should be greater than zero, but got kH: %lld kW: %lld",
                     (long long)k[0], (long long)k[1]);
        return -1;
    }
    if (s[1] <= 0 || s[0] <= 0) {
        PyErr_Format(PyExc_RuntimeError, "stride should be greater than zero, but got dH: %lld dW: %lld",
                     (long long)s[0], (long long)s[1]);
        return -1;
    }
    if (dl[0] <= 0 || dl[1] <= 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "dilation should be greater than zero, but got dilationH: %lld dilationW: %lld",
                     (long long)dl[0], (long long)dl[1]);
        return -1;
    }
    const int nd = x->ndim;
    const bool valid_dims = x->sizes[1] != 0 && x->sizes[2] != 0;
    if (!((nd == 3 && x->sizes[0] != 0 && valid_dims) || (nd == 4 && valid_dims && x->sizes[3] != 0))) {
        char sb[160];
        format_shape(sb, sizeof(sb), x);
        PyErr_Format(PyExc_RuntimeError,
                     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:%s", sb);
        return -1;
    }
    if (!(k[1] / 2 >= p[1] && k[0] / 2 >= p[0])) {
        PyErr_Format(PyExc_RuntimeError,
                     "pad should be smaller than or equal to half of kernel size, but got padW = %lld, padH = %lld, "
                     "kW = %lld, kH = %lld",
                     (long long)p[1], (long long)p[0], (long long)k[1], (long long)k[0]);
        return -1;
    }
    if (d->out[2] < 1 || d->out[1] < 1) {
        long long c = (long long)x->sizes[nd - 3];
        PyErr_Format(PyExc_RuntimeError,
                     "Given input size: (%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lld). Output size is too "
                     "small",
                     c, (long long)d->in[1], (long long)d->in[2], c, (long long)d->out[1], (long long)d->out[2]);
        return -1;
    }
    return 0;
}

/* PyTorch's pool3d_shape_check on input x, d's sizes set; fn: its name in the messages, check_size:
 * the average's input-smaller-than-kernel check. 0 or -1. */
static int pool3d_shape_check(const char *fn, const CtPoolDesc *d, const CtTensorObject *x, bool check_size)
{
    const int64_t *k = d->kernel, *s = d->stride, *p = d->pad, *dl = d->dilation, *in = d->in, *out = d->out;
    if (k[0] <= 0 || k[1] <= 0 || k[2] <= 0) {
        PyErr_Format(PyExc_RuntimeError, "kernel size should be greater than zero, but got kT: %lld kH: %lld kW: %lld",
                     (long long)k[0], (long long)k[1], (long long)k[2]);
        return -1;
    }
    if (s[0] <= 0 || s[1] <= 0 || s[2] <= 0) {
        PyErr_Format(PyExc_RuntimeError, "stride should be greater than zero, but got dT: %lld dH: %lld dW: %lld",
                     (long long)s[0], (long long)s[1], (long long)s[2]);
        return -1;
    }
    if (dl[0] <= 0 || dl[1] <= 0 || dl[2] <= 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "dilation should be greater than zero, but got dilationT: %lld dilationH: %lld dilationW: %lld",
                     (long long)dl[0], (long long)dl[1], (long long)dl[2]);
        return -1;
    }
    char sb[160];
    format_shape(sb, sizeof(sb), x);
    for (int i = x->ndim == 5 ? 1 : 0; i < x->ndim; i++) {
        if (x->sizes[i] == 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "%s: Expected input to have non-zero size for non-batch dimensions, but input has sizes %s "
                         "with dimension %d being empty",
                         fn, sb, i);
            return -1;
        }
    }
    if (!(k[0] / 2 >= p[0] && k[2] / 2 >= p[2] && k[1] / 2 >= p[1])) {
        PyErr_Format(PyExc_RuntimeError,
                     "pad should be smaller than or equal to half of kernel size, but got kT: %lld kW: %lld kH: %lld "
                     "padT: %lld padW: %lld padH: %lld",
                     (long long)k[0], (long long)k[2], (long long)k[1], (long long)p[0], (long long)p[2],
                     (long long)p[1]);
        return -1;
    }
    if (check_size && (in[0] < k[0] || in[1] < k[1] || in[2] < k[2])) {
        PyErr_Format(PyExc_RuntimeError,
                     "input image (T: %lld H: %lld W: %lld) smaller than kernel size (kT: %lld kH: %lld kW: %lld)",
                     (long long)in[0], (long long)in[1], (long long)in[2], (long long)k[0], (long long)k[1],
                     (long long)k[2]);
        return -1;
    }
    if (out[0] < 1 || out[1] < 1 || out[2] < 1) {
        long long c = (long long)x->sizes[x->ndim - 4];
        PyErr_Format(PyExc_RuntimeError,
                     "Given input size: (%lldx%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lldx%lld). Output "
                     "size is too small",
                     c, (long long)in[0], (long long)in[1], (long long)in[2], c, (long long)out[0], (long long)out[1],
                     (long long)out[2]);
        return -1;
    }
    return 0;
}

/* The output sizes of a kernel pool over d->dims axes (d->in, kernel, stride, pad, dilation set), then
 * PyTorch's pool2d_shape_check or pool3d_shape_check on input x; fn3d and check_size: the 3-d check's
 * arguments. 0 or -1. */
static int pool_shapes(CtPoolDesc *d, const CtTensorObject *x, bool ceil_mode, const char *fn3d, bool check_size)
{
    for (int a = 3 - d->dims; a < 3; a++) {
        if (pool_output_size(d->in[a], d->kernel[a], d->pad[a], d->stride[a], d->dilation[a], ceil_mode, &d->out[a]) <
            0) {
            return -1;
        }
    }
    return d->dims == 2 ? pool2d_shape_check(d, x) : pool3d_shape_check(fn3d, d, x, check_size);
}

/* d zeroed for a pooling of kind over `dims` spatial dims, its unused leading axes of size 1 (a 2-d
 * pooling is a 3-d one of depth 1), the input's sizes along the `dims` axes from x. */
static void pool_desc_init(CtPoolDesc *d, CtPoolKind kind, int dims, const CtTensorObject *x)
{
    memset(d, 0, sizeof(*d));
    d->kind = kind;
    d->dims = dims;
    for (int a = 0; a < 3 - dims; a++) {
        d->in[a] = d->out[a] = d->kernel[a] = d->stride[a] = 1;
    }
    for (int a = 0; a < 3; a++) {
        d->dilation[a] = 1; /* the average kinds' */
    }
    memcpy(d->in + 3 - dims, &x->sizes[x->ndim - dims], sizeof(int64_t) * dims);
}

/* Values of a 1- or dims-element list v (n: its length) into the last `dims` of the three axes out:
 * (H, W) or (T, H, W). */
static void spread_axes(const int64_t *v, int n, int dims, int64_t *out)
{
    for (int i = 0; i < dims; i++) {
        out[3 - dims + i] = n == 1 ? v[0] : v[i];
    }
}

/* PyTorch's checks of a pool's int list lengths: 1 or dims, the stride (list 1) also empty; what[i]
 * the message of list i. vals non-NULL: the lists' values too must fit an int, checked list by list
 * after each length. 0 or -1. */
static int check_list_lens(int dims, const char *const *what, const int *lens, int n, const int64_t *const *vals)
{
    for (int i = 0; i < n; i++) {
        if (!(lens[i] == 1 || lens[i] == dims || (i == 1 && lens[i] == 0))) {
            PyErr_SetString(PyExc_RuntimeError, what[i]);
            return -1;
        }
        for (int j = 0; vals != NULL && j < lens[i]; j++) {
            if (vals[i][j] < INT_MIN || vals[i][j] > INT_MAX) {
                PyErr_SetString(PyExc_RuntimeError, "value cannot be converted to type int without overflow");
                return -1;
            }
        }
    }
    return 0;
}

/* An input of dims + 1 or dims + 2 dimensions (batch mode), else PyTorch's error. 0 or -1. */
static int check_batch_dims(const CtTensorObject *x, int dims)
{
    if (x->ndim != dims + 1 && x->ndim != dims + 2) {
        PyErr_Format(PyExc_RuntimeError, "non-empty %dD or %dD (batch mode) tensor expected for input", dims + 1,
                     dims + 2);
        return -1;
    }
    return 0;
}

/* The arguments of the max pools: kernel_size, stride (empty: the kernel size), padding, dilation
 * as given (their lengths in n*), and ceil_mode. */
typedef struct {
    int64_t k[POOL_MAX_LIST], s[POOL_MAX_LIST], p[POOL_MAX_LIST], dl[POOL_MAX_LIST];
    int nk, ns, np, nd;
    bool ceil_mode;
} MaxPoolArgs;

/* Parses a[0..4] (kernel_size, stride, padding, dilation, ceil_mode; NULL when absent, a stride of
 * None is absent too). 0 or -1 with PyTorch's TypeError. */
static int parse_max_args(const char *fname, PyObject *const *a, MaxPoolArgs *m)
{
    m->ceil_mode = false;
    if ((m->nk = parse_int_list(fname, "kernel_size", 2, a[0], m->k)) < 0 ||
        (m->ns = parse_opt_int_list(fname, "stride", 3, a[1] == Py_None ? NULL : a[1], -1, m->s)) < 0 ||
        (m->np = parse_opt_int_list(fname, "padding", 4, a[2], 0, m->p)) < 0 ||
        (m->nd = parse_opt_int_list(fname, "dilation", 5, a[3], 1, m->dl)) < 0 ||
        parse_bool(fname, "ceil_mode", 6, a[4], &m->ceil_mode) < 0) {
        return -1;
    }
    return 0;
}

/* max_pool2d / max_pool3d's arguments (dims 2 / 3; kernel_size, stride, padding, dilation, ceil_mode
 * in a[0..4], NULL when absent) checked against input x into d. 0 or -1. */
static int max_pool_setup(int dims, const char *fname, CtTensorObject *x, PyObject *const *a, CtPoolDesc *d)
{
    MaxPoolArgs m;
    if (parse_max_args(fname, a, &m) < 0) {
        return -1;
    }
    static const char *const what[2][4] = {
        {"max_pool2d: kernel_size must either be a single int, or a tuple of two ints",
         "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints",
         "max_pool2d: padding must either be a single int, or a tuple of two ints",
         "max_pool2d: dilation must be either a single int, or a tuple of two ints"},
        {"max_pool3d: kernel_size must either be a single int, or a tuple of three ints",
         "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints",
         "max_pool3d: padding must either be a single int, or a tuple of three ints",
         "max_pool3d: dilation must be either a single int, or a tuple of three ints"}};
    const int lens[4] = {m.nk, m.ns, m.np, m.nd};
    const int64_t *const vals[4] = {m.k, m.s, m.p, m.dl};
    /* PyTorch keeps the lists in ints: a value past INT_MAX is refused, list by list after its length */
    if (check_list_lens(dims, what[dims - 2], lens, 4, vals) < 0 || check_batch_dims(x, dims) < 0) {
        return -1;
    }
    pool_desc_init(d, CT_POOL_MAX, dims, x);
    spread_axes(m.k, m.nk, dims, d->kernel);
    spread_axes(m.ns == 0 ? d->kernel + 3 - dims : m.s, m.ns == 0 ? dims : m.ns, dims, d->stride);
    spread_axes(m.p, m.np, dims, d->pad);
    spread_axes(m.dl, m.nd, dims, d->dilation);
    if (pool_shapes(d, x, m.ceil_mode, "max_pool3d_with_indices_out_cpu_template()", false) < 0) {
        return -1;
    }
    return x->dtype == CT_BOOL ? not_implemented(dims == 2 ? "max_pool2d" : "max_pool3d", x->dtype) : 0;
}

/* avg_pool2d / avg_pool3d's arguments (dims 2 / 3; kernel_size, stride, padding, ceil_mode,
 * count_include_pad, divisor_override in a[0..5]) checked against input x into d. 0 or -1. */
static int avg_pool_setup(int dims, const char *fname, CtTensorObject *x, PyObject *const *a, CtPoolDesc *d)
{
    int64_t k[POOL_MAX_LIST], s[POOL_MAX_LIST], p[POOL_MAX_LIST], divisor = 0;
    bool ceil_mode = false, count_include_pad = true;
    int lens[3];
    if ((lens[0] = parse_int_list(fname, "kernel_size", 2, a[0], k)) < 0 ||
        (lens[1] = parse_opt_int_list(fname, "stride", 3, a[1] == Py_None ? NULL : a[1], -1, s)) < 0 ||
        (lens[2] = parse_opt_int_list(fname, "padding", 4, a[2], 0, p)) < 0 ||
        parse_bool(fname, "ceil_mode", 5, a[3], &ceil_mode) < 0 ||
        parse_bool(fname, "count_include_pad", 6, a[4], &count_include_pad) < 0) {
        return -1;
    }
    bool has_divisor = a[5] != NULL && a[5] != Py_None;
    if (has_divisor && !is_int_arg(a[5])) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'divisor_override' must be int, not %s", fname, ct_type_name(a[5]));
        return -1;
    }
    if (has_divisor && int_value(a[5], &divisor) < 0) {
        return -1;
    }
    static const char *const what[2][3] = {
        {"avg_pool2d: kernel_size must either be a single int, or a tuple of two ints",
         "avg_pool2d: stride must either be omitted, a single int, or a tuple of two ints",
         "avg_pool2d: padding must either be a single int, or a tuple of two ints"},
        {"avg_pool3d: kernel_size must be a single int, or a tuple of three ints",
         "avg_pool3d: stride must be omitted, a single int, or a tuple of three ints",
         "avg_pool3d: padding must be a single int, or a tuple of three ints"}};
    if (check_list_lens(dims, what[dims - 2], lens, 3, NULL) < 0) {
        return -1;
    }
    if (has_divisor && divisor == 0) {
        PyErr_SetString(PyExc_RuntimeError, "divisor must be not zero");
        return -1;
    }
    int unused;
    if (dims == 2 ? x->ndim < 3 && ct_wrap_dim(-3, x->ndim, &unused) < 0 /* PyTorch reads input.size(-3) here */
                  : check_batch_dims(x, dims) < 0) {
        return -1;
    }
    pool_desc_init(d, CT_POOL_AVG, dims, x);
    spread_axes(k, lens[0], dims, d->kernel);
    spread_axes(lens[1] == 0 ? d->kernel + 3 - dims : s, lens[1] == 0 ? dims : lens[1], dims, d->stride);
    spread_axes(p, lens[2], dims, d->pad);
    d->count_include_pad = count_include_pad;
    d->divisor_override = divisor;
    if (pool_shapes(d, x, ceil_mode, "avg_pool3d()", true) < 0) {
        return -1;
    }
    /* PyTorch's CPU kernels: avg_pool2d's the floating dtypes and long, avg_pool3d's float, double and long */
    const CtDType t = x->dtype;
    bool supported = t == CT_I64 || (dims == 2 ? ct_is_floating(t) : t == CT_F32 || t == CT_F64);
    return supported ? 0 : not_implemented(dims == 2 ? "avg_pool2d" : "avg_pool3d_out_frame", t);
}

/* Checks of _adaptive_avg_pool2d/3d (avg) or adaptive_max_pool2d/3d (dims 2 / 3) on input x and a
 * dims-element output size (n: the length given) into d. 0 or -1. */
static int adaptive_setup(bool avg, int dims, CtTensorObject *x, const int64_t *size, int n, CtPoolDesc *d)
{
    char name[32], sb[160];
    snprintf(name, sizeof(name), "adaptive_%s_pool%dd", avg ? "avg" : "max", dims);
    format_shape(sb, sizeof(sb), x);
    if (avg && n != dims) {
        PyErr_Format(PyExc_RuntimeError, "%s: output_size must be %d", name, dims);
        return -1;
    }
    if (x->ndim != dims + 1 && x->ndim != dims + 2) {
        PyErr_Format(PyExc_RuntimeError, "%s(): Expected %dD or %dD tensor, but got%s %s", name, dims + 1, dims + 2,
                     avg ? "" : ":", sb);
        return -1;
    }
    for (int i = avg ? x->ndim - dims : 1; i < x->ndim; i++) {
        if (x->sizes[i] <= 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "%s(): Expected input to have non-zero size for non-batch dimensions, but input has sizes %s "
                         "with dimension %d being empty",
                         name, sb, i);
            return -1;
        }
    }
    if (n != dims) {
        PyErr_Format(PyExc_RuntimeError, "adaptive_max_pool%dd(): internal error: output_size.size() must be %d", dims,
                     dims);
        return -1;
    }
    for (int i = 0; i < dims; i++) {
        if (size[i] < 0) {
            int64_t osz[5];
            memcpy(osz, x->sizes, sizeof(int64_t) * x->ndim);
            memcpy(&osz[x->ndim - dims], size, sizeof(int64_t) * dims);
            ct_format_sizes(sb, sizeof(sb), x->ndim, osz);
            PyErr_Format(PyExc_RuntimeError, "Trying to create tensor with negative dimension %lld: %s",
                         (long long)size[i], sb);
            return -1;
        }
    }
    pool_desc_init(d, avg ? CT_POOL_ADAPTIVE_AVG : CT_POOL_ADAPTIVE_MAX, dims, x);
    memcpy(d->out + 3 - dims, size, sizeof(int64_t) * dims);
    if (dims == 2 && avg && size[0] * size[1] == 0) {
        return 0; /* PyTorch's 2-d average returns the empty output before its dtype dispatch (its 3-d one does not) */
    }
    char kernel[64]; /* PyTorch's kernel names: adaptive_{avg,max}_pool2d, adaptive_{avg,max}_pool3d_cpu */
    snprintf(kernel, sizeof(kernel), "%s%s", name, dims == 2 ? "" : "_cpu");
    return ct_is_floating(x->dtype) ? 0 : not_implemented(kernel, x->dtype);
}

/* output_size of adaptive_{avg,max}_pool2d/3d as PyTorch's Python layer resolves it
 * (_list_with_default): an int n means n in each of the `dims` dims; a sequence's None entries take the
 * input's sizes, and a sequence needs an input of more dims than its length. Returns the length, or -1. */
static int parse_adaptive_size(const char *fname, PyObject *obj, const CtTensorObject *x, int dims, int64_t *out)
{
    if (is_int_arg(obj)) {
        if (int_value(obj, &out[0]) < 0) {
            return -1;
        }
        for (int i = 1; i < dims; i++) {
            out[i] = out[0];
        }
        return dims;
    }
    if (!PySequence_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "object of type '%s' has no len()", Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *seq = PySequence_Fast(obj, "output_size must be a sequence"); /* a str too, as in Python */
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *resolved = x->ndim <= n ? NULL : PyList_New(n);
    if (x->ndim <= n) {
        PyErr_Format(PyExc_ValueError, "Input dimension should be at least %zd", n + 1);
    }
    for (Py_ssize_t i = 0; resolved != NULL && i < n; i++) {
        PyObject *v = PySequence_Fast_GET_ITEM(seq, i);
        v = v == Py_None ? PyLong_FromLongLong(x->sizes[x->ndim - n + i]) : Py_NewRef(v);
        if (v == NULL) {
            Py_CLEAR(resolved);
            break;
        }
        PyList_SET_ITEM(resolved, i, v);
    }
    Py_DECREF(seq);
    if (resolved == NULL) {
        return -1;
    }
    int r = parse_int_list(fname, "output_size", 2, resolved, out);
    Py_DECREF(resolved);
    return r;
}

/* ====================================================================================================
 * running the kernels
 * ==================================================================================================== */
/* The pool kernels of device; NULL with an exception set. Borrowed. */
static const struct CtNNKernels *pool_kernels(CtDevice device)
{
    const CtDeviceOps *ops = ct_device_ops(device);
    if (ops == NULL) {
        return NULL;
    }
    if (ops->nn == NULL || ops->nn->pool == NULL || ops->nn->pool_backward == NULL) {
        PyErr_Format(PyExc_NotImplementedError, "ctorch: pooling kernels are not available on %s", ops->name);
        return NULL;
    }
    return ops->nn;
}

/* The layout of a pooling's output and grad_input: x's suggested one for the 2-d pools and max_pool3d,
 * contiguous for PyTorch's other 3-d pools. */
static CtMemoryFormat pool_memory_format(const CtPoolDesc *d, const CtTensorObject *x)
{
    return d->dims == 2 || d->kind == CT_POOL_MAX ? ct_suggest_memory_format(x) : CT_FORMAT_CONTIGUOUS;
}

/* Runs the forward of d (shapes checked) over x (3-D or 4-D): returns the output, of x's leading dims
 * and d->out, or for the max kinds the tuple (output, indices). New reference. */
static PyObject *pool_forward(CtPoolDesc *d, CtTensorObject *x)
{
    CtTensorObject *xc = NULL, *out = NULL, *idx = NULL;
    PyObject *result = NULL;
    const CtDevice device = ct_device_of(x);
    const struct CtNNKernels *k = pool_kernels(device);
    if (k == NULL) {
        return NULL;
    }
    const int nd = x->ndim;
    int64_t sizes[5];
    memcpy(sizes, x->sizes, sizeof(int64_t) * nd);
    memcpy(&sizes[nd - d->dims], &d->out[3 - d->dims], sizeof(int64_t) * d->dims);
    d->dtype = x->dtype;
    d->device = device;
    d->planes = nd == d->dims + 2 ? x->sizes[0] * x->sizes[1] : x->sizes[0];
    if ((xc = ct_contiguous(x)) == NULL || (out = ct_empty(nd, sizes, x->dtype, device)) == NULL) {
        goto done;
    }
    if (ct_pool_is_max(d) && (idx = ct_empty(nd, sizes, CT_I64, device)) == NULL) {
        goto done;
    }
    d->input = ct_data(xc);
    d->output = ct_data(out);
    d->indices = idx != NULL ? (int64_t *)ct_data(idx) : NULL;
    if (ct_numel(out) > 0 && k->pool(d) < 0) {
        goto done;
    }
    if ((out = ct_as_memory_format(out, pool_memory_format(d, x))) == NULL ||
        (idx != NULL && (idx = ct_as_memory_format(idx, pool_memory_format(d, x))) == NULL)) {
        goto done;
    }
    result = idx != NULL ? PyTuple_Pack(2, (PyObject *)out, (PyObject *)idx) : Py_NewRef((PyObject *)out);
done:
    Py_XDECREF(xc);
    Py_XDECREF(out);
    Py_XDECREF(idx);
    return result;
}

/* The backward of d (set up from input x): grad_input of x's shape from grad (and the forward's
 * indices for the max kinds), every element gathered. New reference. */
static PyObject *pool_backward(const char *fname, CtPoolDesc *d, CtTensorObject *grad, CtTensorObject *x,
                               CtTensorObject *indices)
{
    CtTensorObject *g = NULL, *ic = NULL, *gi = NULL;
    PyObject *result = NULL;
    CtTensorObject *devs[3] = {grad, x, indices};
    CtDevice device;
    if (ct_check_same_device(indices != NULL ? 3 : 2, devs, false, &device) < 0) {
        return NULL;
    }
    if (!ct_is_floating(x->dtype)) {
        not_implemented(fname, x->dtype);
        return NULL;
    }
    int64_t sizes[5];
    memcpy(sizes, x->sizes, sizeof(int64_t) * x->ndim);
    memcpy(&sizes[x->ndim - d->dims], &d->out[3 - d->dims], sizeof(int64_t) * d->dims);
    CtTensorObject *shaped[2] = {grad, indices};
    for (int i = 0; i < 2 && shaped[i] != NULL; i++) {
        if (shaped[i]->ndim != x->ndim || memcmp(shaped[i]->sizes, sizes, sizeof(int64_t) * x->ndim) != 0 ||
            (i == 1 && indices->dtype != CT_I64)) {
            char want[160], got[160];
            ct_format_sizes(want, sizeof(want), x->ndim, sizes);
            format_shape(got, sizeof(got), shaped[i]);
            PyErr_Format(PyExc_RuntimeError, "%s(): expected %s of shape %s%s, but got %s of dtype %s", fname,
                         i == 0 ? "grad_output" : "indices", want, i == 0 ? "" : " and dtype int64", got,
                         ct_dtype_info[shaped[i]->dtype].name);
            return NULL;
        }
    }
    const struct CtNNKernels *k = pool_kernels(device);
    if (k == NULL) {
        return NULL;
    }
    g = ct_to(grad, x->dtype, device, false);
    if (g != NULL) { /* ct_to keeps the layout: the kernels read grad dense (a channels_last one came out wrong) */
        Py_SETREF(g, ct_contiguous(g));
    }
    if (g == NULL || (indices != NULL && (ic = ct_contiguous(indices)) == NULL) ||
        (gi = ct_empty(x->ndim, x->sizes, x->dtype, device)) == NULL) {
        goto done;
    }
    d->dtype = x->dtype;
    d->device = device;
    d->planes = x->ndim == d->dims + 2 ? x->sizes[0] * x->sizes[1] : x->sizes[0];
    d->grad_output = ct_data(g);
    d->indices = ic != NULL ? (int64_t *)ct_data(ic) : NULL;
    d->grad_input = ct_data(gi);
    if (ct_numel(gi) > 0 && k->pool_backward(d) < 0) {
        goto done;
    }
    if ((gi = ct_as_memory_format(gi, pool_memory_format(d, x))) == NULL) {
        goto done;
    }
    result = Py_NewRef((PyObject *)gi);
done:
    Py_XDECREF(g);
    Py_XDECREF(ic);
    Py_XDECREF(gi);
    return result;
}

/* --- CPU kernels -------------------------------------------------------------------------------------- */
typedef void (*PoolRange)(int64_t begin, int64_t end, void *desc);
/* Elements [begin, end) in memory order: coordinates advance without divisions, and the backward's
 * covering output rows are found once per input row. */
#define POOL_CPU_RANGES(NAME, ...)                                                    \
    static void pool_forward_range_##NAME(int64_t begin, int64_t end, void *p)        \
    {                                                                                 \
        const CtPoolDesc *d = (const CtPoolDesc *)p;                                  \
        int64_t plane, ot, oh, ow;                                                    \
        ct_pool_coords(begin, d->out, &plane, &ot, &oh, &ow);                         \
        for (int64_t i = begin; i < end; i++) {                                       \
            ct_pool_forward_##NAME(d, plane, ot, oh, ow);                             \
            if (++ow == d->out[2]) {                                                  \
                ow = 0;                                                               \
                if (++oh == d->out[1]) {                                              \
                    oh = 0;                                                           \
                    if (++ot == d->out[0]) {                                          \
                        ot = 0;                                                       \
                        plane++;                                                      \
                    }                                                                 \
                }                                                                     \
            }                                                                         \
        }                                                                             \
    }                                                                                 \
    static void pool_backward_range_##NAME(int64_t begin, int64_t end, void *p)       \
    {                                                                                 \
        const CtPoolDesc *d = (const CtPoolDesc *)p;                                  \
        int64_t plane, it, ih, iw, lo_h, hi_h;                                        \
        ct_pool_coords(begin, d->in, &plane, &it, &ih, &iw);                          \
        ct_pool_covering(d, 1, ih, &lo_h, &hi_h);                                     \
        for (int64_t i = begin; i < end; i++) {                                       \
            ct_pool_backward_##NAME(d, plane, it, ih, iw, lo_h, hi_h);                \
            if (++iw == d->in[2]) {                                                   \
                iw = 0;                                                               \
                if (++ih == d->in[1]) {                                               \
                    ih = 0;                                                           \
                    if (++it == d->in[0]) {                                           \
                        it = 0;                                                       \
                        plane++;                                                      \
                    }                                                                 \
                }                                                                     \
                ct_pool_covering(d, 1, ih, &lo_h, &hi_h);                             \
            }                                                                         \
        }                                                                             \
    }
CT_POOL_TYPES(POOL_CPU_RANGES)
#undef POOL_CPU_RANGES
#define POOL_ENTRY(NAME, ...) [CT_##NAME] = pool_forward_range_##NAME,
static const PoolRange pool_forward_ranges[CT_NUM_DTYPES] = {CT_POOL_TYPES(POOL_ENTRY)};
#undef POOL_ENTRY
#define POOL_ENTRY(NAME, ...) [CT_##NAME] = pool_backward_range_##NAME,
static const PoolRange pool_backward_ranges[CT_NUM_DTYPES] = {CT_POOL_TYPES(POOL_ENTRY)};
#undef POOL_ENTRY

/* Elements per task: about 32K window reads (a backward element reads a few covering windows). */
static int64_t pool_grain(const CtPoolDesc *d, bool backward)
{
    int64_t work = d->kernel[0] * d->kernel[1] * d->kernel[2], strides = d->stride[0] * d->stride[1] * d->stride[2];
    if (d->kind == CT_POOL_ADAPTIVE_MAX || d->kind == CT_POOL_ADAPTIVE_AVG) {
        work = 1;
        for (int a = 0; a < 3; a++) {
            work *= d->in[a] / (d->out[a] > 0 ? d->out[a] : 1) + 2;
        }
    }
    if (backward) {
        work = 4 * work / (strides > 0 ? strides : 1) + 4;
    }
    return 32768 / (work > 0 ? work : 1) + 1;
}

static int cpu_pool_run(const CtPoolDesc *d, bool backward)
{
    PoolRange fn = (backward ? pool_backward_ranges : pool_forward_ranges)[d->dtype];
    if (fn == NULL || (backward && !ct_pool_backward_dtype(d->dtype))) {
        return not_implemented(backward ? "pool_backward" : "pool", d->dtype);
    }
    const int64_t *shape = backward ? d->in : d->out;
    const int64_t n = d->planes * shape[0] * shape[1] * shape[2];
    ct_parallel_for(n, pool_grain(d, backward), fn, (void *)d);
    return 0;
}

int ct_cpu_pool(const CtPoolDesc *d) { return cpu_pool_run(d, false); }
int ct_cpu_pool_backward(const CtPoolDesc *d) { return cpu_pool_run(d, true); }

/* ====================================================================================================
 * the ops
 * ==================================================================================================== */
/* max_pool2d_with_indices / max_pool3d_with_indices (dims 2 / 3) */
static PyObject *max_pool_with_indices_impl(int dims, const char *fname, CtTensorObject *x, PyObject *const *a)
{
    CtPoolDesc d;
    return max_pool_setup(dims, fname, x, a, &d) < 0 ? NULL : pool_forward(&d, x);
}

/* avg_pool2d / avg_pool3d (dims 2 / 3) */
static PyObject *avg_pool_impl(int dims, const char *fname, CtTensorObject *x, PyObject *const *a)
{
    CtPoolDesc d;
    return avg_pool_setup(dims, fname, x, a, &d) < 0 ? NULL : pool_forward(&d, x);
}

/* _adaptive_avg_pool2d/3d (avg) / adaptive_max_pool2d/3d (dims 2 / 3) with output_size already resolved */
static PyObject *adaptive_impl(bool avg, int dims, CtTensorObject *x, const int64_t *size, int n)
{
    CtPoolDesc d;
    return adaptive_setup(avg, dims, x, size, n, &d) < 0 ? NULL : pool_forward(&d, x);
}

/* The values of a max pool's (values, indices) result r (stolen; NULL passes through). */
static PyObject *first_of(PyObject *r)
{
    if (r == NULL) {
        return NULL;
    }
    PyObject *out = Py_NewRef(PyTuple_GET_ITEM(r, 0));
    Py_DECREF(r);
    return out;
}

/* r (stolen) squeezed at -2, each element when r is a tuple. New reference. */
static PyObject *squeezed(PyObject *r)
{
    if (r == NULL) {
        return NULL;
    }
    PyObject *m2 = PyLong_FromLong(-2), *out = NULL;
    if (m2 == NULL) {
        Py_DECREF(r);
        return NULL;
    }
    if (PyTuple_Check(r)) {
        Py_ssize_t n = PyTuple_GET_SIZE(r);
        out = PyTuple_New(n);
        for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
            PyObject *args[2] = {PyTuple_GET_ITEM(r, i), m2};
            PyObject *s = ct_op("squeeze", args, 2, NULL);
            if (s == NULL) {
                Py_CLEAR(out);
                break;
            }
            PyTuple_SET_ITEM(out, i, s);
        }
    } else {
        PyObject *args[2] = {r, m2};
        out = ct_op("squeeze", args, 2, NULL);
    }
    Py_DECREF(m2);
    Py_DECREF(r);
    return out;
}

/* op2d(x.unsqueeze(-2), *rest) squeezed back at -2: how PyTorch computes the 1-d poolings, so that
 * autograd records Unsqueeze, the 2-d node and Squeeze as PyTorch does. rest: a tuple. */
static PyObject *via_2d(const char *op2d, CtTensorObject *x, PyObject *rest)
{
    PyObject *m2 = PyLong_FromLong(-2), *x2 = NULL, *r = NULL;
    PyObject *args[8];
    Py_ssize_t n = rest != NULL ? PyTuple_GET_SIZE(rest) : 0;
    if (n >= 8) {
        PyErr_SetString(PyExc_SystemError, "via_2d: too many arguments");
    } else if (m2 != NULL && rest != NULL) {
        PyObject *ua[2] = {(PyObject *)x, m2};
        x2 = ct_op("unsqueeze", ua, 2, NULL);
    }
    if (x2 != NULL) {
        args[0] = x2;
        for (Py_ssize_t i = 0; i < n; i++) {
            args[i + 1] = PyTuple_GET_ITEM(rest, i);
        }
        r = squeezed(ct_op(op2d, args, (size_t)n + 1, NULL));
    }
    Py_XDECREF(m2);
    Py_XDECREF(x2);
    Py_XDECREF(rest);
    return r;
}

static int check_dim_range(const char *fname, const CtTensorObject *x)
{
    if (x->ndim < 2 || x->ndim > 3) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected 2 to 3 dimensions, but got %d-dimensional tensor for argument #1 'self' (while checking "
                     "arguments for %s)",
                     x->ndim, fname);
        return -1;
    }
    return 0;
}

static int check_1d(const char *fname, const char *argname, int n)
{
    if (n != 1) {
        PyErr_Format(PyExc_RuntimeError, "%s() argument '%s' should contain one int (got %d)", fname, argname, n);
        return -1;
    }
    return 0;
}

/* max_pool1d_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode) in a[0..4] */
static PyObject *max_pool1d_with_indices_impl(const char *fname, CtTensorObject *x, PyObject *const *a)
{
    MaxPoolArgs m;
    if (parse_max_args(fname, a, &m) < 0) {
        return NULL;
    }
    if (m.ns == 0) { /* stride defaults to the kernel size */
        memcpy(m.s, m.k, sizeof(m.s));
        m.ns = m.nk;
    }
    if (check_dim_range("max_pool1d", x) < 0 || check_1d("max_pool1d", "kernel_size", m.nk) < 0 ||
        check_1d("max_pool1d", "stride", m.ns) < 0 || check_1d("max_pool1d", "padding", m.np) < 0 ||
        check_1d("max_pool1d", "dilation", m.nd) < 0) {
        return NULL;
    }
    return via_2d("max_pool2d_with_indices", x,
                  Py_BuildValue("((LL)(LL)(LL)(LL)O)", 1LL, (long long)m.k[0], 1LL, (long long)m.s[0], 0LL,
                                (long long)m.p[0], 1LL, (long long)m.dl[0], m.ceil_mode ? Py_True : Py_False));
}

/* max_pool1d without indices: PyTorch's own checks first; then the indices path, except on the CPU
 * without grad, where PyTorch's kernel takes the floating dtypes only. */
static PyObject *max_pool1d_impl(CtTensorObject *x, PyObject *const *a)
{
    const char *fname = "max_pool1d";
    MaxPoolArgs m;
    if (parse_max_args(fname, a, &m) < 0) {
        return NULL;
    }
    const int64_t *sz = x->sizes;
    if (!((x->ndim == 2 && sz[0] != 0 && sz[1] != 0) || (x->ndim == 3 && sz[1] != 0 && sz[2] != 0))) {
        char sb[160];
        format_shape(sb, sizeof(sb), x);
        PyErr_Format(PyExc_RuntimeError,
                     "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but "
                     "got:%s",
                     sb);
        return NULL;
    }
    const char *err = m.nk != 1 ? "kernel_size must be an int, list of ints or tuple of ints"
                      : m.ns > 1 ? "stride must be None, an int, list of ints, or tuple of ints"
                      : m.np != 1 ? "padding must be an int, list of ints, or tuple of ints"
                      : m.nd != 1 ? "dilation must be an int, list of ints or tuple of ints" : NULL;
    if (err != NULL) {
        PyErr_Format(PyExc_RuntimeError, "max_pool1d() %s of size 1 but got size %d", err,
                     m.nk != 1 ? m.nk : m.ns > 1 ? m.ns : m.np != 1 ? m.np : m.nd);
        return NULL;
    }
    const int64_t stride = m.ns == 0 ? m.k[0] : m.s[0];
    const char *what = NULL;
    long long bad = 0;
    if (m.k[0] <= 0) {
        what = "kernel_size must be greater than zero", bad = m.k[0];
    } else if (stride <= 0) {
        what = "stride must be greater than zero", bad = stride;
    } else if (m.p[0] < 0) {
        what = "padding must be non-negative", bad = m.p[0];
    } else if (m.p[0] > m.k[0] / 2) {
        PyErr_Format(PyExc_RuntimeError,
                     "max_pool1d() padding should be at most half of kernel size, but got padding=%lld and "
                     "kernel_size=%lld",
                     (long long)m.p[0], (long long)m.k[0]);
        return NULL;
    } else if (m.dl[0] <= 0) {
        what = "dilation must be greater than zero", bad = m.dl[0];
    }
    if (what != NULL) {
        PyErr_Format(PyExc_RuntimeError, "max_pool1d() %s, but got %lld", what, bad);
        return NULL;
    }
    int64_t ow;
    if (pool_output_size(x->sizes[x->ndim - 1], m.k[0], m.p[0], stride, m.dl[0], m.ceil_mode, &ow) < 0) {
        return NULL;
    }
    if (ow <= 0) {
        PyErr_Format(PyExc_RuntimeError, "max_pool1d() Invalid computed output size: %lld", (long long)ow);
        return NULL;
    }
    PyObject *rg = PyObject_GetAttrString((PyObject *)x, "requires_grad");
    if (rg == NULL) {
        return NULL;
    }
    bool recording = rg == Py_True && ct_grad_enabled;
    Py_DECREF(rg);
    if (!recording && ct_device_of(x).type == CT_DEV_CPU && !ct_is_floating(x->dtype)) {
        not_implemented("max_pool1d_impl", x->dtype);
        return NULL;
    }
    return first_of(max_pool1d_with_indices_impl(fname, x, a));
}

/* adaptive_avg_pool2d / adaptive_avg_pool3d (dims 2 / 3): a mean over the plane or volume for an output
 * of ones (as PyTorch), else _adaptive_avg_pool2d / _adaptive_avg_pool3d */
static PyObject *adaptive_avg_pool_impl(int dims, CtTensorObject *x, const int64_t *size, int n)
{
    if (n != dims) {
        PyErr_Format(PyExc_RuntimeError, "adaptive_avg_pool%dd: output_size must be %d", dims, dims);
        return NULL;
    }
    bool ones = true;
    for (int i = 0; i < dims; i++) {
        if (size[i] < 0) {
            char third[32] = ""; /* sic: PyTorch's 3-d message lacks the second space */
            if (dims == 3) {
                snprintf(third, sizeof(third), ",%lld", (long long)size[2]);
            }
            PyErr_Format(PyExc_RuntimeError,
                         "adaptive_avg_pool%dd: elements of output_size must be greater than or equal to 0 but "
                         "received {%lld, %lld%s}",
                         dims, (long long)size[0], (long long)size[1], third);
            return NULL;
        }
        ones = ones && size[i] == 1;
    }
    /* mean's dims (-1, -2[, -3]) or the output size */
    PyObject *t = PyTuple_New(dims), *r = NULL;
    for (int i = 0; t != NULL && i < dims; i++) {
        PyObject *v = PyLong_FromLongLong(ones ? -1 - i : size[i]);
        if (v == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    if (t != NULL) {
        char op[32];
        snprintf(op, sizeof(op), "_adaptive_avg_pool%dd", dims);
        PyObject *args[3] = {(PyObject *)x, t, Py_True};
        r = ones ? ct_op("mean", args, 3, NULL) : ct_op(op, args, 2, NULL);
        Py_DECREF(t);
    }
    return r;
}

/* ====================================================================================================
 * Python entry points (ctorch._C)
 * ==================================================================================================== */
#define POOL_PARSE(fname, names, nreq, a)                                                                  \
    if (ct_parse_args(fname, args, nargs, kwnames, names, nreq, a) < 0 || check_input(fname, a[0]) < 0) { \
        return NULL;                                                                                       \
    }

static const char *const max_pool_names[] = {"input", "kernel_size", "stride", "padding", "dilation", "ceil_mode",
                                              NULL};
static const char *const avg_pool2d_names[] = {"input",     "kernel_size",       "stride",           "padding",
                                               "ceil_mode", "count_include_pad", "divisor_override", NULL};
static const char *const adaptive_names[] = {"input", "output_size", NULL};

/* max_pool2d / max_pool3d (dims 2 / 3): checked here so that errors name them, then the with-indices op's values */
static PyObject *max_pool_entry(int dims, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    const char *fname = dims == 2 ? "max_pool2d" : "max_pool3d";
    PyObject *a[6];
    POOL_PARSE(fname, max_pool_names, 2, a)
    CtPoolDesc d;
    if (max_pool_setup(dims, fname, CT_TENSOR(a[0]), a + 1, &d) < 0) {
        return NULL;
    }
    return first_of(ct_op(dims == 2 ? "max_pool2d_with_indices" : "max_pool3d_with_indices", args, (size_t)nargs,
                          kwnames));
}


PyDoc_STRVAR(max_pool2d_with_indices_doc,
             "max_pool2d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False) -> "
             "(Tensor, Tensor)\n\nMax pooling over (C, H, W) or (N, C, H, W) input, with the position of each maximum "
             "in its plane.");
static PyObject *py_max_pool2d_with_indices(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                            PyObject *kwnames)
{
    PyObject *a[6];
    POOL_PARSE("max_pool2d_with_indices", max_pool_names, 2, a)
    return max_pool_with_indices_impl(2, "max_pool2d_with_indices", CT_TENSOR(a[0]), a + 1);
}

PyDoc_STRVAR(max_pool2d_doc, "max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False) -> "
                             "Tensor");
static PyObject *py_max_pool2d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return max_pool_entry(2, args, nargs, kwnames);
}

PyDoc_STRVAR(max_pool3d_with_indices_doc,
             "max_pool3d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False) -> "
             "(Tensor, Tensor)\n\nMax pooling over (C, D, H, W) or (N, C, D, H, W) input, with the position of each "
             "maximum in its volume.");
static PyObject *py_max_pool3d_with_indices(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                            PyObject *kwnames)
{
    PyObject *a[6];
    POOL_PARSE("max_pool3d_with_indices", max_pool_names, 2, a)
    return max_pool_with_indices_impl(3, "max_pool3d_with_indices", CT_TENSOR(a[0]), a + 1);
}

PyDoc_STRVAR(max_pool3d_doc, "max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False) -> "
                             "Tensor");
static PyObject *py_max_pool3d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return max_pool_entry(3, args, nargs, kwnames);
}

PyDoc_STRVAR(avg_pool3d_doc, "avg_pool3d(input, kernel_size, stride=(), padding=0, ceil_mode=False, "
                             "count_include_pad=True, divisor_override=None) -> Tensor");
static PyObject *py_avg_pool3d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[7];
    POOL_PARSE("avg_pool3d", avg_pool2d_names, 2, a)
    return avg_pool_impl(3, "avg_pool3d", CT_TENSOR(a[0]), a + 1);
}

/* The adaptive pools' entry points: public (output_size an int or dims values, None keeping the input's
 * size) or the autograd kernel (_adaptive_avg_pool<dims>d: an int repeated, or dims values). */
typedef enum { ADAPTIVE_AVG, ADAPTIVE_AVG_KERNEL, ADAPTIVE_MAX } AdaptiveEntry;

static PyObject *adaptive_entry(const char *fname, int dims, AdaptiveEntry kind, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    PyObject *a[2];
    int64_t size[POOL_MAX_LIST];
    POOL_PARSE(fname, adaptive_names, 2, a)
    int n;
    if (kind == ADAPTIVE_AVG_KERNEL) {
        n = parse_int_list(fname, "output_size", 2, a[1], size);
        if (n == 1) {
            for (int d = 1; d < dims; d++) {
                size[d] = size[0];
            }
            n = dims;
        }
    } else {
        n = parse_adaptive_size(fname, a[1], CT_TENSOR(a[0]), dims, size);
    }
    if (n < 0) {
        return NULL;
    }
    return kind == ADAPTIVE_AVG ? adaptive_avg_pool_impl(dims, CT_TENSOR(a[0]), size, n)
                                : adaptive_impl(kind == ADAPTIVE_AVG_KERNEL, dims, CT_TENSOR(a[0]), size, n);
}

PyDoc_STRVAR(adaptive_avg_pool3d_doc, "adaptive_avg_pool3d(input, output_size) -> Tensor\n\noutput_size: an int or "
                                      "three, None keeping the input's size.");
static PyObject *py_adaptive_avg_pool3d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return adaptive_entry("adaptive_avg_pool3d", 3, ADAPTIVE_AVG, args, nargs, kwnames);
}

PyDoc_STRVAR(adaptive_avg_pool3d_kernel_doc, "_adaptive_avg_pool3d(input, output_size) -> Tensor");
static PyObject *py_adaptive_avg_pool3d_kernel(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return adaptive_entry("_adaptive_avg_pool3d", 3, ADAPTIVE_AVG_KERNEL, args, nargs, kwnames);
}

PyDoc_STRVAR(adaptive_max_pool3d_doc, "adaptive_max_pool3d(input, output_size) -> (Tensor, Tensor)\n\noutput_size: "
                                      "an int or three, None keeping the input's size.");
static PyObject *py_adaptive_max_pool3d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return adaptive_entry("adaptive_max_pool3d", 3, ADAPTIVE_MAX, args, nargs, kwnames);
}

PyDoc_STRVAR(max_pool1d_with_indices_doc,
             "max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False) -> "
             "(Tensor, Tensor)");
static PyObject *py_max_pool1d_with_indices(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                            PyObject *kwnames)
{
    PyObject *a[6];
    POOL_PARSE("max_pool1d_with_indices", max_pool_names, 2, a)
    return max_pool1d_with_indices_impl("max_pool1d_with_indices", CT_TENSOR(a[0]), a + 1);
}

PyDoc_STRVAR(max_pool1d_doc, "max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False) -> "
                             "Tensor");
static PyObject *py_max_pool1d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[6];
    POOL_PARSE("max_pool1d", max_pool_names, 2, a)
    return max_pool1d_impl(CT_TENSOR(a[0]), a + 1);
}

PyDoc_STRVAR(avg_pool2d_doc, "avg_pool2d(input, kernel_size, stride=(), padding=0, ceil_mode=False, "
                             "count_include_pad=True, divisor_override=None) -> Tensor");
static PyObject *py_avg_pool2d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[7];
    POOL_PARSE("avg_pool2d", avg_pool2d_names, 2, a)
    return avg_pool_impl(2, "avg_pool2d", CT_TENSOR(a[0]), a + 1);
}

PyDoc_STRVAR(avg_pool1d_doc, "avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, "
                             "count_include_pad=True) -> Tensor");
static PyObject *py_avg_pool1d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                                        NULL};
    const char *fname = "avg_pool1d";
    PyObject *a[6];
    int64_t k[POOL_MAX_LIST], s[POOL_MAX_LIST], p[POOL_MAX_LIST];
    bool ceil_mode = false, count_include_pad = true;
    int nk, ns, np;
    POOL_PARSE(fname, names, 2, a)
    if ((nk = parse_int_list(fname, "kernel_size", 2, a[1], k)) < 0 ||
        (ns = parse_opt_int_list(fname, "stride", 3, a[2] == Py_None ? NULL : a[2], -1, s)) < 0 ||
        (np = parse_opt_int_list(fname, "padding", 4, a[3], 0, p)) < 0 ||
        parse_bool(fname, "ceil_mode", 5, a[4], &ceil_mode) < 0 ||
        parse_bool(fname, "count_include_pad", 6, a[5], &count_include_pad) < 0) {
        return NULL;
    }
    if (ns == 0) {
        memcpy(s, k, sizeof(s));
        ns = nk;
    }
    CtTensorObject *x = CT_TENSOR(a[0]);
    if (check_dim_range(fname, x) < 0 || check_1d(fname, "kernel_size", nk) < 0 || check_1d(fname, "stride", ns) < 0 ||
        check_1d(fname, "padding", np) < 0) {
        return NULL;
    }
    return via_2d("avg_pool2d", x,
                  Py_BuildValue("((LL)(LL)(LL)OO)", 1LL, (long long)k[0], 1LL, (long long)s[0], 0LL, (long long)p[0],
                                ceil_mode ? Py_True : Py_False, count_include_pad ? Py_True : Py_False));
}

PyDoc_STRVAR(adaptive_avg_pool2d_doc, "adaptive_avg_pool2d(input, output_size) -> Tensor\n\noutput_size: an int or "
                                      "two, None keeping the input's size.");
static PyObject *py_adaptive_avg_pool2d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return adaptive_entry("adaptive_avg_pool2d", 2, ADAPTIVE_AVG, args, nargs, kwnames);
}

PyDoc_STRVAR(adaptive_avg_pool2d_kernel_doc, "_adaptive_avg_pool2d(input, output_size) -> Tensor");
static PyObject *py_adaptive_avg_pool2d_kernel(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return adaptive_entry("_adaptive_avg_pool2d", 2, ADAPTIVE_AVG_KERNEL, args, nargs, kwnames);
}

PyDoc_STRVAR(adaptive_max_pool2d_doc, "adaptive_max_pool2d(input, output_size) -> (Tensor, Tensor)\n\noutput_size: "
                                      "an int or two, None keeping the input's size.");
static PyObject *py_adaptive_max_pool2d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return adaptive_entry("adaptive_max_pool2d", 2, ADAPTIVE_MAX, args, nargs, kwnames);
}

/* adaptive_avg_pool1d (avg) / adaptive_max_pool1d(input, output_size) */
static PyObject *adaptive_1d(bool avg, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    const char *fname = avg ? "adaptive_avg_pool1d" : "adaptive_max_pool1d";
    PyObject *a[2];
    int64_t size[POOL_MAX_LIST];
    POOL_PARSE(fname, adaptive_names, 2, a)
    CtTensorObject *x = CT_TENSOR(a[0]);
    int n = parse_int_list(fname, "output_size", 2, a[1], size);
    if (n < 0 || check_dim_range(fname, x) < 0 || check_1d(fname, "output_size", n) < 0) {
        return NULL;
    }
    for (int i = 1; !avg && i < x->ndim; i++) {
        if (x->sizes[i] <= 0) {
            char sb[160];
            format_shape(sb, sizeof(sb), x);
            PyErr_Format(PyExc_RuntimeError,
                         "adaptive_max_pool1d(): Expected input to have non-zero size for non-batch dimensions, but "
                         "input has sizes %s with dimension %d being empty",
                         sb, i);
            return NULL;
        }
    }
    return via_2d(avg ? "adaptive_avg_pool2d" : "adaptive_max_pool2d", x, Py_BuildValue("((LL))", 1LL, (long long)size[0]));
}

PyDoc_STRVAR(adaptive_avg_pool1d_doc, "adaptive_avg_pool1d(input, output_size) -> Tensor");
static PyObject *py_adaptive_avg_pool1d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return adaptive_1d(true, args, nargs, kwnames);
}

PyDoc_STRVAR(adaptive_max_pool1d_doc, "adaptive_max_pool1d(input, output_size) -> (Tensor, Tensor)");
static PyObject *py_adaptive_max_pool1d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return adaptive_1d(false, args, nargs, kwnames);
}

/* --- the backward ops: the forward's arguments, its input (for the shape) and, for the max kinds,
 *     its indices. Each input element gathers from the windows that hold it: the indices must be the
 *     forward's (a max pool's gradient goes only to the element its window picked). --------------- */
static int check_tensor(const char *fname, const char *argname, PyObject *t)
{
    if (!CtTensor_Check(t)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Tensor, not %s", fname, argname, ct_type_name(t));
        return -1;
    }
    return 0;
}

/* _max_pool2d_backward / _max_pool3d_backward (dims 2 / 3) */
static PyObject *max_pool_backward_entry(int dims, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"grad_output", "input",     "kernel_size", "stride", "padding",
                                        "dilation",    "ceil_mode", "indices",     NULL};
    const char *fname = dims == 2 ? "_max_pool2d_backward" : "_max_pool3d_backward";
    PyObject *a[8];
    CtPoolDesc d;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 8, a) < 0 || check_tensor(fname, "grad_output", a[0]) < 0 ||
        check_tensor(fname, "input", a[1]) < 0 || check_tensor(fname, "indices", a[7]) < 0) {
        return NULL;
    }
    PyObject *p[5];
    for (int i = 0; i < 5; i++) {
        p[i] = a[2 + i] == Py_None ? NULL : a[2 + i];
    }
    int rc = max_pool_setup(dims, fname, CT_TENSOR(a[1]), p, &d);
    return rc < 0 ? NULL : pool_backward(fname, &d, CT_TENSOR(a[0]), CT_TENSOR(a[1]), CT_TENSOR(a[7]));
}

PyDoc_STRVAR(max_pool2d_backward_doc,
             "_max_pool2d_backward(grad_output, input, kernel_size, stride, padding, dilation, ceil_mode, indices) -> "
             "Tensor");
static PyObject *py_max_pool2d_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return max_pool_backward_entry(2, args, nargs, kwnames);
}

PyDoc_STRVAR(max_pool3d_backward_doc,
             "_max_pool3d_backward(grad_output, input, kernel_size, stride, padding, dilation, ceil_mode, indices) -> "
             "Tensor");
static PyObject *py_max_pool3d_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return max_pool_backward_entry(3, args, nargs, kwnames);
}

/* _avg_pool2d_backward / _avg_pool3d_backward (dims 2 / 3) */
static PyObject *avg_pool_backward_entry(int dims, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"grad_output", "input",     "kernel_size",       "stride",
                                        "padding",     "ceil_mode", "count_include_pad", "divisor_override",
                                        NULL};
    const char *fname = dims == 2 ? "_avg_pool2d_backward" : "_avg_pool3d_backward";
    PyObject *a[8];
    CtPoolDesc d;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 3, a) < 0 || check_tensor(fname, "grad_output", a[0]) < 0 ||
        check_tensor(fname, "input", a[1]) < 0) {
        return NULL;
    }
    PyObject *p[6];
    for (int i = 0; i < 6; i++) {
        p[i] = a[2 + i] == Py_None ? NULL : a[2 + i];
    }
    int rc = avg_pool_setup(dims, fname, CT_TENSOR(a[1]), p, &d);
    return rc < 0 ? NULL : pool_backward(fname, &d, CT_TENSOR(a[0]), CT_TENSOR(a[1]), NULL);
}

PyDoc_STRVAR(avg_pool2d_backward_doc, "_avg_pool2d_backward(grad_output, input, kernel_size, stride, padding, "
                                      "ceil_mode, count_include_pad, divisor_override) -> Tensor");
static PyObject *py_avg_pool2d_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return avg_pool_backward_entry(2, args, nargs, kwnames);
}

PyDoc_STRVAR(avg_pool3d_backward_doc, "_avg_pool3d_backward(grad_output, input, kernel_size, stride, padding, "
                                      "ceil_mode, count_include_pad, divisor_override) -> Tensor");
static PyObject *py_avg_pool3d_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return avg_pool_backward_entry(3, args, nargs, kwnames);
}

/* _adaptive_avg_pool{2,3}d_backward(grad_output, input) / _adaptive_max_pool{2,3}d_backward(grad_output,
 * input, indices): the output size is grad_output's */
static PyObject *adaptive_backward(bool avg, int dims, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"grad_output", "input", "indices", NULL};
    static const char *const fnames[2][2] = {{"_adaptive_max_pool2d_backward", "_adaptive_max_pool3d_backward"},
                                             {"_adaptive_avg_pool2d_backward", "_adaptive_avg_pool3d_backward"}};
    const char *fname = fnames[avg][dims - 2];
    PyObject *a[3];
    CtPoolDesc d;
    if (ct_parse_args(fname, args, nargs, kwnames, names, avg ? 2 : 3, a) < 0 || check_tensor(fname, "grad_output", a[0]) < 0 ||
        check_tensor(fname, "input", a[1]) < 0 || (!avg && check_tensor(fname, "indices", a[2]) < 0)) {
        return NULL;
    }
    CtTensorObject *g = CT_TENSOR(a[0]), *x = CT_TENSOR(a[1]);
    int64_t size[3];
    for (int i = 0; i < dims; i++) {
        size[i] = g->ndim >= dims ? g->sizes[g->ndim - dims + i] : -1;
    }
    int rc = adaptive_setup(avg, dims, x, size, dims, &d);
    return rc < 0 ? NULL : pool_backward(fname, &d, g, x, avg ? NULL : CT_TENSOR(a[2]));
}

PyDoc_STRVAR(adaptive_avg_pool2d_backward_doc, "_adaptive_avg_pool2d_backward(grad_output, input) -> Tensor");
static PyObject *py_adaptive_avg_pool2d_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                                 PyObject *kwnames)
{
    return adaptive_backward(true, 2, args, nargs, kwnames);
}

PyDoc_STRVAR(adaptive_max_pool2d_backward_doc,
             "_adaptive_max_pool2d_backward(grad_output, input, indices) -> Tensor");
static PyObject *py_adaptive_max_pool2d_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                                 PyObject *kwnames)
{
    return adaptive_backward(false, 2, args, nargs, kwnames);
}

PyDoc_STRVAR(adaptive_avg_pool3d_backward_doc, "_adaptive_avg_pool3d_backward(grad_output, input) -> Tensor");
static PyObject *py_adaptive_avg_pool3d_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                                 PyObject *kwnames)
{
    return adaptive_backward(true, 3, args, nargs, kwnames);
}

PyDoc_STRVAR(adaptive_max_pool3d_backward_doc,
             "_adaptive_max_pool3d_backward(grad_output, input, indices) -> Tensor");
static PyObject *py_adaptive_max_pool3d_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                                 PyObject *kwnames)
{
    return adaptive_backward(false, 3, args, nargs, kwnames);
}

PyMethodDef ct_pool_module_methods[] = {
    {"max_pool2d_with_indices", CT_FASTCALL(py_max_pool2d_with_indices), CT_METH_FK, max_pool2d_with_indices_doc},
    {"max_pool2d", CT_FASTCALL(py_max_pool2d), CT_METH_FK, max_pool2d_doc},
    {"max_pool1d_with_indices", CT_FASTCALL(py_max_pool1d_with_indices), CT_METH_FK, max_pool1d_with_indices_doc},
    {"max_pool1d", CT_FASTCALL(py_max_pool1d), CT_METH_FK, max_pool1d_doc},
    {"avg_pool2d", CT_FASTCALL(py_avg_pool2d), CT_METH_FK, avg_pool2d_doc},
    {"avg_pool1d", CT_FASTCALL(py_avg_pool1d), CT_METH_FK, avg_pool1d_doc},
    {"adaptive_avg_pool2d", CT_FASTCALL(py_adaptive_avg_pool2d), CT_METH_FK, adaptive_avg_pool2d_doc},
    {"_adaptive_avg_pool2d", CT_FASTCALL(py_adaptive_avg_pool2d_kernel), CT_METH_FK, adaptive_avg_pool2d_kernel_doc},
    {"adaptive_max_pool2d", CT_FASTCALL(py_adaptive_max_pool2d), CT_METH_FK, adaptive_max_pool2d_doc},
    {"adaptive_avg_pool1d", CT_FASTCALL(py_adaptive_avg_pool1d), CT_METH_FK, adaptive_avg_pool1d_doc},
    {"adaptive_max_pool1d", CT_FASTCALL(py_adaptive_max_pool1d), CT_METH_FK, adaptive_max_pool1d_doc},
    {"_max_pool2d_backward", CT_FASTCALL(py_max_pool2d_backward), CT_METH_FK, max_pool2d_backward_doc},
    {"_avg_pool2d_backward", CT_FASTCALL(py_avg_pool2d_backward), CT_METH_FK, avg_pool2d_backward_doc},
    {"_adaptive_avg_pool2d_backward", CT_FASTCALL(py_adaptive_avg_pool2d_backward), CT_METH_FK,
     adaptive_avg_pool2d_backward_doc},
    {"_adaptive_max_pool2d_backward", CT_FASTCALL(py_adaptive_max_pool2d_backward), CT_METH_FK,
     adaptive_max_pool2d_backward_doc},
    /* the 3-d poolings */
    {"max_pool3d_with_indices", CT_FASTCALL(py_max_pool3d_with_indices), CT_METH_FK, max_pool3d_with_indices_doc},
    {"max_pool3d", CT_FASTCALL(py_max_pool3d), CT_METH_FK, max_pool3d_doc},
    {"avg_pool3d", CT_FASTCALL(py_avg_pool3d), CT_METH_FK, avg_pool3d_doc},
    {"adaptive_avg_pool3d", CT_FASTCALL(py_adaptive_avg_pool3d), CT_METH_FK, adaptive_avg_pool3d_doc},
    {"_adaptive_avg_pool3d", CT_FASTCALL(py_adaptive_avg_pool3d_kernel), CT_METH_FK, adaptive_avg_pool3d_kernel_doc},
    {"adaptive_max_pool3d", CT_FASTCALL(py_adaptive_max_pool3d), CT_METH_FK, adaptive_max_pool3d_doc},
    {"_max_pool3d_backward", CT_FASTCALL(py_max_pool3d_backward), CT_METH_FK, max_pool3d_backward_doc},
    {"_avg_pool3d_backward", CT_FASTCALL(py_avg_pool3d_backward), CT_METH_FK, avg_pool3d_backward_doc},
    {"_adaptive_avg_pool3d_backward", CT_FASTCALL(py_adaptive_avg_pool3d_backward), CT_METH_FK,
     adaptive_avg_pool3d_backward_doc},
    {"_adaptive_max_pool3d_backward", CT_FASTCALL(py_adaptive_max_pool3d_backward), CT_METH_FK,
     adaptive_max_pool3d_backward_doc},
    {NULL},
};
PyMethodDef ct_pool_tensor_methods[] = {{NULL}};
PyType_Slot ct_pool_tensor_slots[] = {{0, NULL}};

/* ====================================================================================================
 * backward formulas (listed in autograd_formulas.c). Each calls a backward op through ct_op, so that
 * with create_graph=True the gradient computation is recorded; the backward ops' own gradients
 * (linear in grad_output) are a gather at the indices or the forward pooling again.
 * ==================================================================================================== */
/* Saved argument i, or None where it was not given (the ops' parsers then use the default). */
static PyObject *arg_or_none(CtNodeObject *n, int i) { return n->args[i] != NULL ? n->args[i] : Py_None; }
/* argument i, or dflt where it was left out or given as None (borrowed) */
static PyObject *arg_or(CtNodeObject *n, int i, PyObject *dflt)
{
    return n->args[i] != NULL && n->args[i] != Py_None ? n->args[i] : dflt;
}

/* grad_input of edge 0 from ct_op(op, args...): fitted to argument 0's shape and dtype. 0 or -1. */
static int call_into(CtNodeObject *n, PyObject **gi, const char *op, PyObject *const *args, size_t nargs)
{
    PyObject *r = ct_op(op, args, nargs, NULL);
    if (r == NULL) {
        return -1;
    }
    gi[0] = ct_fit_grad(r, &n->meta[0]);
    Py_DECREF(r);
    return gi[0] != NULL ? 0 : -1;
}

/* max_pool{2,3}d_with_indices: (input, kernel_size, stride, padding, dilation, ceil_mode), through op */
static int bw_max_pool(CtNodeObject *n, PyObject *const *g, PyObject **gi, const char *op)
{
    if (g[0] == NULL || n->edge_nodes[0] == NULL) {
        return 0;
    }
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL) {
        return -1;
    }
    PyObject *args[8] = {g[0],  x, n->args[1], arg_or_none(n, 2), arg_or_none(n, 3), arg_or_none(n, 4),
                         arg_or_none(n, 5), PyTuple_GET_ITEM(n->outputs, 1)};
    return call_into(n, gi, op, args, 8);
}

int ct_pool_bw_max_pool2d(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return bw_max_pool(n, g, gi, "_max_pool2d_backward");
}

int ct_pool_bw_max_pool3d(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return bw_max_pool(n, g, gi, "_max_pool3d_backward");
}

/* avg_pool{2,3}d: (input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override) */
static int bw_avg_pool(CtNodeObject *n, PyObject *const *g, PyObject **gi, const char *op)
{
    if (g[0] == NULL || n->edge_nodes[0] == NULL) {
        return 0;
    }
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL) {
        return -1;
    }
    PyObject *args[8] = {g[0], x, n->args[1], arg_or_none(n, 2), arg_or_none(n, 3), arg_or_none(n, 4),
                         arg_or_none(n, 5), arg_or_none(n, 6)};
    return call_into(n, gi, op, args, 8);
}

int ct_pool_bw_avg_pool2d(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return bw_avg_pool(n, g, gi, "_avg_pool2d_backward");
}

int ct_pool_bw_avg_pool3d(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return bw_avg_pool(n, g, gi, "_avg_pool3d_backward");
}

/* _adaptive_avg_pool{2,3}d: (input, output_size) */
static int bw_adaptive_avg_pool(CtNodeObject *n, PyObject *const *g, PyObject **gi, const char *op)
{
    if (n->edge_nodes[0] == NULL) {
        return 0;
    }
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL) {
        return -1;
    }
    PyObject *args[2] = {g[0], x};
    return call_into(n, gi, op, args, 2);
}

int ct_pool_bw_adaptive_avg_pool2d(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return bw_adaptive_avg_pool(n, g, gi, "_adaptive_avg_pool2d_backward");
}

int ct_pool_bw_adaptive_avg_pool3d(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return bw_adaptive_avg_pool(n, g, gi, "_adaptive_avg_pool3d_backward");
}

/* adaptive_max_pool{2,3}d: (input, output_size) */
static int bw_adaptive_max_pool(CtNodeObject *n, PyObject *const *g, PyObject **gi, const char *op)
{
    if (g[0] == NULL || n->edge_nodes[0] == NULL) {
        return 0;
    }
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL) {
        return -1;
    }
    PyObject *args[3] = {g[0], x, PyTuple_GET_ITEM(n->outputs, 1)};
    return call_into(n, gi, op, args, 3);
}

int ct_pool_bw_adaptive_max_pool2d(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return bw_adaptive_max_pool(n, g, gi, "_adaptive_max_pool2d_backward");
}

int ct_pool_bw_adaptive_max_pool3d(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return bw_adaptive_max_pool(n, g, gi, "_adaptive_max_pool3d_backward");
}

/* The gradient of a max pool's backward with respect to grad_output: the incoming gradient (input
 * shaped) read at the indices, grad.flatten(-dims).gather(-1, indices.flatten(-dims)) in indices' shape. */
static int gather_at_indices(CtNodeObject *n, PyObject *const *g, PyObject **gi, int indices_arg, int dims)
{
    if (n->edge_nodes[0] == NULL) {
        return 0;
    }
    CtTensorObject *idx = ct_node_tensor(n, indices_arg);
    if (idx == NULL) {
        return -1;
    }
    PyObject *gf = NULL, *idf = NULL, *v = NULL, *shape = NULL;
    int rc = -1;
    if ((gf = ct_call_method(g[0], "flatten", "(i)", -dims)) == NULL ||
        (idf = ct_call_method((PyObject *)idx, "flatten", "(i)", -dims)) == NULL ||
        (v = ct_call_method(gf, "gather", "(iO)", -1, idf)) == NULL ||
        (shape = ct_size_object(idx->ndim, idx->sizes)) == NULL) {
        goto done;
    }
    PyObject *args[2] = {v, shape};
    rc = call_into(n, gi, "reshape", args, 2);
done:
    Py_XDECREF(gf);
    Py_XDECREF(idf);
    Py_XDECREF(v);
    Py_XDECREF(shape);
    return rc;
}

/* _max_pool{2,3}d_backward: (grad_output, input, kernel_size, stride, padding, dilation, ceil_mode, indices) */
int ct_pool_bw_max_pool2d_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return gather_at_indices(n, g, gi, 7, 2);
}

int ct_pool_bw_max_pool3d_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return gather_at_indices(n, g, gi, 7, 3);
}

/* _adaptive_max_pool{2,3}d_backward: (grad_output, input, indices) */
int ct_pool_bw_adaptive_max_pool2d_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return gather_at_indices(n, g, gi, 2, 2);
}

int ct_pool_bw_adaptive_max_pool3d_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return gather_at_indices(n, g, gi, 2, 3);
}

/* _avg_pool{2,3}d_backward: (grad_output, input, kernel_size, stride, padding, ceil_mode,
 * count_include_pad, divisor_override): the pooling (op) is its own backward's adjoint */
static int bw_avg_pool_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi, const char *op)
{
    if (n->edge_nodes[0] == NULL) {
        return 0;
    }
    PyObject *zero = PyLong_FromLong(0);
    if (zero == NULL) {
        return -1;
    }
    PyObject *args[7] = {g[0], n->args[2], arg_or_none(n, 3), arg_or(n, 4, zero), arg_or(n, 5, Py_False),
                         arg_or(n, 6, Py_True), arg_or_none(n, 7)};
    int rc = call_into(n, gi, op, args, 7);
    Py_DECREF(zero);
    return rc;
}

int ct_pool_bw_avg_pool2d_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return bw_avg_pool_backward(n, g, gi, "avg_pool2d");
}

int ct_pool_bw_avg_pool3d_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return bw_avg_pool_backward(n, g, gi, "avg_pool3d");
}

/* _adaptive_avg_pool{2,3}d_backward: (grad_output, input): the forward (op) at the input's last dims sizes */
static int bw_adaptive_avg_pool_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi, const char *op, int dims)
{
    if (n->edge_nodes[0] == NULL) {
        return 0;
    }
    const CtTensorMeta *m = &n->meta[0];
    PyObject *size = ct_size_object(dims, &m->sizes[m->ndim - dims]);
    if (size == NULL) {
        return -1;
    }
    PyObject *args[2] = {g[0], size};
    int rc = call_into(n, gi, op, args, 2);
    Py_DECREF(size);
    return rc;
}

int ct_pool_bw_adaptive_avg_pool2d_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return bw_adaptive_avg_pool_backward(n, g, gi, "_adaptive_avg_pool2d", 2);
}

int ct_pool_bw_adaptive_avg_pool3d_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return bw_adaptive_avg_pool_backward(n, g, gi, "_adaptive_avg_pool3d", 3);
}
