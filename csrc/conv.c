/* conv.c: conv1d / 2d / 3d and conv_transpose1d / 2d / 3d (see conv.h): PyTorch's argument rules and
 * messages, the im2col + GEMM forward and backward on any device (the GEMMs go through
 * CtDeviceOps.blas, the data movers through CtDeviceOps.nn), the CPU im2col / col2im kernels, the
 * im2col / col2im ops (F.unfold / F.fold), the Python entry points (ctorch._C.conv1d, conv2d, conv3d,
 * _convolution_backward, conv_transpose1d, conv_transpose2d, conv_transpose3d, _conv_transpose_backward, im2col,
 * col2im) and the backward formulas. */
#include "conv.h"
#include "conv_math.h"
#include "args.h"
#include "autograd.h"
#include "creation.h"
#include "device.h"
#include "dtype.h"
#include "elementwise.h" /* ct_scalar_type_name */
#include "linalg.h"
#include "nn.h"
#include "parallel.h"
#include "registry.h"
#include "tensor.h"
#include <string.h>

/* At most this many column elements are materialised at once: images are processed in chunks. */
#define CONV_COLUMN_BUDGET ((int64_t)1 << 24)

/* ====================================================================================================
 * arguments and checks
 * ==================================================================================================== */
/* The geometry of one call, in batched 3-d terms (a 2-d convolution has depth 1, a 1-d one also
 * height 1: the call's dims are the last `dim` of the three). */
typedef struct {
    int dim;        /* spatial dims of the call: 1, 2 or 3 */
    bool unbatched; /* input had no batch dim */
    int64_t batch, in_channels, out_channels, groups;
    int64_t in[3], kernel[3], stride[3], pad_lo[3], pad_hi[3], dilation[3], out[3];
} ConvGeom;

static int64_t volume(const int64_t *v) { return v[0] * v[1] * v[2]; }

static const char *cpp_type_name(CtDType d)
{
    static const char *names[CT_NUM_DTYPES] = {
        [CT_BOOL] = "bool",      [CT_U8] = "unsigned char", [CT_I8] = "signed char",
        [CT_I16] = "short",      [CT_I32] = "int",          [CT_I64] = "long int",
        [CT_F16] = "c10::Half",  [CT_BF16] = "c10::BFloat16", [CT_F32] = "float",
        [CT_F64] = "double",
    };
    return names[d];
}

/* "torch.FloatTensor" / "torch.cuda.FloatTensor" into buf. */
static void legacy_type_name(const CtTensorObject *t, char *buf, size_t n)
{
    snprintf(buf, n, "torch.%s%sTensor", ct_device_of(t).type == CT_DEV_CUDA ? "cuda." : "",
             ct_scalar_type_name(t->dtype));
}

/* An int (expanded to `dim` copies, as PyTorch's int[dim] parameters do) or a sequence of ints;
 * absent keeps `dflt`. Returns the list's length or -1. */
static int parse_int_list(const char *fname, const char *argname, PyObject *obj, int dim, int64_t dflt,
                          int64_t *out)
{
    if (obj == NULL) {
        for (int i = 0; i < dim; i++) {
            out[i] = dflt;
        }
        return dim;
    }
    if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        int64_t v = 0;
        if (ct_arg_int64(obj, &v) < 0) {
            return -1;
        }
        for (int i = 0; i < dim; i++) {
            out[i] = v;
        }
        return dim;
    }
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be tuple of ints, not %s", fname, argname,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n > CT_MAX_DIMS) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' has too many elements", fname, argname);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(obj, i);
        if (PyBool_Check(item) || PyFloat_Check(item) || !PyIndex_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be tuple of ints, but found element of type %s "
                         "at pos %zd", fname, argname, Py_TYPE(item)->tp_name, i);
            return -1;
        }
        if (ct_arg_int64(item, &out[i]) < 0) {
            return -1;
        }
    }
    return (int)n;
}

static void format_list(char *buf, size_t n, int len, const int64_t *v) { ct_format_sizes(buf, n, len, v); }

/* A parameter of `len` values made one per spatial dim: a single value is repeated. */
static int expand_param(const char *name, int64_t *v, int len, int dim)
{
    if (len == dim) {
        return 0;
    }
    if (len == 1) {
        for (int i = 1; i < dim; i++) {
            v[i] = v[0];
        }
        return 0;
    }
    char buf[256];
    format_list(buf, sizeof(buf), len, v);
    PyErr_Format(PyExc_RuntimeError,
                 "expected %s to be a single integer value or a list of %d values to match the convolution "
                 "dimensions, but got %s=%s",
                 name, dim, name, buf);
    return -1;
}

/* Nonzero while the double backward runs a forward convolution: the user's call warned already. */
static int same_warning_muted;

/* padding='same': the total padding d * (k - 1) of each dim, the odd unit going after (PyTorch
 * pads the input by it explicitly and warns). */
static int same_padding(const CtTensorObject *weight, int in_ndim, const int64_t *in_sizes, int64_t *stride,
                        int nstride, int64_t *dilation, int ndilation, int64_t groups, bool warn, int64_t *lo,
                        int64_t *hi)
{
    char ws[256], is[256];
    int k = weight->ndim;
    if (k <= 2) {
        PyErr_SetString(PyExc_RuntimeError, "weight should have at least three dimensions");
        return -1;
    }
    if (groups <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "non-positive groups is not supported");
        return -1;
    }
    int dim = k - 2;
    if (in_ndim != k) {
        ct_format_sizes(ws, sizeof(ws), weight->ndim, weight->sizes);
        ct_format_sizes(is, sizeof(is), in_ndim, in_sizes);
        PyErr_Format(PyExc_RuntimeError,
                     "Expected %d-dimensional input for %d-dimensional weight%s, but got %d-dimensional input of size "
                     "%s instead",
                     k, k, ws, in_ndim, is);
        return -1;
    }
    if (nstride != dim && nstride != 1) {
        PyErr_Format(PyExc_RuntimeError, "stride cannot broadcast to %d dimensions", dim);
        return -1;
    }
    if (ndilation != dim && ndilation != 1) {
        PyErr_Format(PyExc_RuntimeError, "dilation cannot broadcast to %d dimensions", dim);
        return -1;
    }
    for (int i = 0; i < nstride; i++) {
        if (stride[i] != 1) {
            PyErr_SetString(PyExc_RuntimeError, "padding='same' is not supported for strided convolutions");
            return -1;
        }
    }
    bool symmetric = true;
    for (int i = 0; i < dim; i++) {
        int64_t d = dilation[ndilation == 1 ? 0 : i];
        int64_t pad = d * (weight->sizes[i + 2] - 1);
        lo[i] = pad / 2;
        hi[i] = pad - pad / 2;
        symmetric = symmetric && pad % 2 == 0;
    }
    if (!symmetric && warn && same_warning_muted == 0 &&
        PyErr_WarnEx(PyExc_UserWarning,
                     "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy "
                     "of the input be created",
                     1) < 0) {
        return -1;
    }
    return 0;
}

/* Dtype / device agreement of input, weight and bias, in PyTorch's words (dim: the call's spatial dims;
 * PyTorch's CPU takes its MKLDNN path, with its own message, for a float32 1-d / 2-d input only). */
static int check_types(const CtTensorObject *input, const CtTensorObject *weight, const CtTensorObject *bias, int dim)
{
    char a[64], b[64];
    bool input_cpu = ct_device_of(input).type == CT_DEV_CPU;
    bool same_device = ct_device_equal(ct_device_of(input), ct_device_of(weight));
    if (!same_device || (input->dtype != weight->dtype && ((input->dtype == CT_F32 && dim != 3) || !input_cpu))) {
        legacy_type_name(input, a, sizeof(a));
        legacy_type_name(weight, b, sizeof(b));
        PyErr_Format(PyExc_RuntimeError, "Input type (%s) and weight type (%s) should be the same%s", a, b,
                     input_cpu ? " or input should be a MKLDNN tensor and weight is a dense tensor" : "");
        return -1;
    }
    if (input->dtype != weight->dtype) {
        PyErr_Format(PyExc_RuntimeError, "expected scalar type %s but found %s", ct_scalar_type_name(input->dtype),
                     ct_scalar_type_name(weight->dtype));
        return -1;
    }
    if (bias != NULL && !ct_device_equal(ct_device_of(input), ct_device_of(bias))) {
        legacy_type_name(input, a, sizeof(a));
        legacy_type_name(bias, b, sizeof(b));
        PyErr_Format(PyExc_RuntimeError, "Input type (%s) and bias type (%s) should be the same", a, b);
        return -1;
    }
    if (bias != NULL && bias->dtype != input->dtype) {
        PyErr_Format(PyExc_RuntimeError, "Input type (%s) and bias type (%s) should be the same",
                     cpp_type_name(input->dtype), cpp_type_name(bias->dtype));
        return -1;
    }
    return 0;
}

/* Every check of torch.conv{1,2}d in PyTorch's order, and the geometry. fdim is the call's
 * spatial dims (1 or 2). bias may be NULL; forward is false for the backward (no warning about
 * padding='same' a second time). */
static int conv_setup(const char *fname, int fdim, const CtTensorObject *input, const CtTensorObject *weight,
                      const CtTensorObject *bias, PyObject *stride_obj, PyObject *padding_obj,
                      PyObject *dilation_obj, PyObject *groups_obj, bool forward, ConvGeom *g)
{
    char ws[256], is[256], bs[256];
    memset(g, 0, sizeof(*g));
    g->dim = fdim;
    if (input->ndim != fdim + 1 && input->ndim != fdim + 2) {
        ct_format_sizes(is, sizeof(is), input->ndim, input->sizes);
        PyErr_Format(PyExc_RuntimeError, "Expected %dD (unbatched) or %dD (batched) input to %s, but got input of size: %s",
                     fdim + 1, fdim + 2, fname, is);
        return -1;
    }
    /* the batched input's shape (an unbatched input gets a leading 1, as PyTorch unsqueezes it) */
    g->unbatched = input->ndim == fdim + 1;
    int in_ndim = fdim + 2;
    int64_t in_sizes[5];
    in_sizes[0] = 1;
    memcpy(&in_sizes[g->unbatched ? 1 : 0], input->sizes, sizeof(int64_t) * input->ndim);
    int64_t groups = 1;
    if (groups_obj != NULL && (PyBool_Check(groups_obj) || ct_arg_int64(groups_obj, &groups) < 0)) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "%s(): argument 'groups' must be int, not bool", fname);
        }
        return -1;
    }
    int64_t stride[CT_MAX_DIMS], padding[CT_MAX_DIMS], dilation[CT_MAX_DIMS], pad_hi[CT_MAX_DIMS];
    int nstride = parse_int_list(fname, "stride", stride_obj, fdim, 1, stride);
    int ndilation = nstride < 0 ? -1 : parse_int_list(fname, "dilation", dilation_obj, fdim, 1, dilation);
    if (ndilation < 0) {
        return -1;
    }
    int npadding;
    bool explicit_hi = false;
    if (padding_obj != NULL && PyUnicode_Check(padding_obj)) {
        const char *mode = PyUnicode_AsUTF8(padding_obj);
        if (mode == NULL) {
            return -1;
        }
        if (strcmp(mode, "valid") == 0) {
            padding[0] = 0;
            npadding = 1;
        } else if (strcmp(mode, "same") == 0) {
            if (same_padding(weight, in_ndim, in_sizes, stride, nstride, dilation, ndilation, groups, forward,
                             padding, pad_hi) < 0) {
                return -1;
            }
            npadding = weight->ndim - 2;
            explicit_hi = true;
        } else {
            PyErr_Format(PyExc_RuntimeError, "Invalid padding string: '%s'", mode);
            return -1;
        }
    } else {
        npadding = parse_int_list(fname, "padding", padding_obj, fdim, 0, padding);
        if (npadding < 0) {
            return -1;
        }
    }
    if (groups <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "non-positive groups is not supported");
        return -1;
    }
    int dim = weight->ndim - 2;
    if (dim >= 1 && (expand_param("stride", stride, nstride, dim) < 0 ||
                     expand_param("padding", padding, npadding, dim) < 0 ||
                     expand_param("dilation", dilation, ndilation, dim) < 0)) {
        return -1;
    }
    for (int i = 0; i < dim; i++) {
        if (padding[i] < 0 || (explicit_hi && pad_hi[i] < 0)) {
            PyErr_SetString(PyExc_RuntimeError, "negative padding is not supported");
            return -1;
        }
    }
    for (int i = 0; i < dim; i++) {
        if (stride[i] <= 0) {
            PyErr_SetString(PyExc_RuntimeError, "non-positive stride is not supported");
            return -1;
        }
    }
    for (int i = 0; i < dim; i++) {
        if (dilation[i] <= 0) {
            PyErr_SetString(PyExc_RuntimeError, "non-positive dilation is not supported");
            return -1;
        }
    }
    ct_format_sizes(ws, sizeof(ws), weight->ndim, weight->sizes);
    ct_format_sizes(is, sizeof(is), in_ndim, in_sizes);
    if (weight->ndim != in_ndim) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected %d-dimensional input for %d-dimensional weight %s, but got %d-dimensional input of "
                     "size %s instead",
                     weight->ndim, weight->ndim, ws, in_ndim, is);
        return -1;
    }
    if (weight->sizes[0] < groups) {
        PyErr_Format(PyExc_RuntimeError,
                     "Given groups=%lld, expected weight to be at least %lld at dimension 0, but got weight of size "
                     "%s instead",
                     (long long)groups, (long long)groups, ws);
        return -1;
    }
    if (weight->sizes[0] % groups != 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got weight of "
                     "size [%s] instead",
                     (long long)groups, (long long)groups, ws);
        return -1;
    }
    if (in_sizes[1] != weight->sizes[1] * groups) {
        PyErr_Format(PyExc_RuntimeError,
                     "Given groups=%lld, weight of size %s, expected input%s to have %lld channels, but got %lld "
                     "channels instead",
                     (long long)groups, ws, is, (long long)(weight->sizes[1] * groups), (long long)in_sizes[1]);
        return -1;
    }
    if (bias != NULL && (bias->ndim != 1 || bias->sizes[0] != weight->sizes[0])) {
        ct_format_sizes(bs, sizeof(bs), bias->ndim, bias->sizes);
        PyErr_Format(PyExc_RuntimeError,
                     "Given weight of size %s, expected bias to be 1-dimensional with %lld elements, but got bias of "
                     "size %s instead",
                     ws, (long long)weight->sizes[0], bs);
        return -1;
    }
    if (check_types(input, weight, bias, dim) < 0) {
        return -1;
    }
    /* into 3-d terms: the call's dims are the last `dim` of three */
    int off = 3 - dim;
    for (int i = 0; i < 3; i++) {
        g->in[i] = g->out[i] = 1;
        g->kernel[i] = g->stride[i] = g->dilation[i] = 1;
        g->pad_lo[i] = g->pad_hi[i] = 0;
    }
    bool too_small = false;
    char padded[128] = "", kernel[128] = "";
    for (int i = 0; i < dim; i++) {
        int j = i + off;
        g->in[j] = in_sizes[2 + i];
        g->kernel[j] = weight->sizes[2 + i];
        g->stride[j] = stride[i];
        g->dilation[j] = dilation[i];
        g->pad_lo[j] = padding[i];
        g->pad_hi[j] = explicit_hi ? pad_hi[i] : padding[i];
        int64_t span = g->in[j] + g->pad_lo[j] + g->pad_hi[j];
        int64_t extent = g->dilation[j] * (g->kernel[j] - 1) + 1;
        too_small = too_small || span < extent;
        size_t lp = strlen(padded), lk = strlen(kernel);
        snprintf(padded + lp, sizeof(padded) - lp, "%s%lld", i ? " x " : "", (long long)span);
        snprintf(kernel + lk, sizeof(kernel) - lk, "%s%lld", i ? " x " : "", (long long)extent);
        g->out[j] = (span - extent) / g->stride[j] + 1;
    }
    if (too_small) {
        PyErr_Format(PyExc_RuntimeError,
                     "Calculated padded input size per channel: (%s). Kernel size: (%s). Kernel size can't be greater "
                     "than actual input size",
                     padded, kernel);
        return -1;
    }
    if (!ct_device_equal(ct_device_of(input), ct_device_of(weight))) {
        /* the backward of a forward that was checked: only reachable by calling it directly */
        CtTensorObject *ts[2] = {(CtTensorObject *)input, (CtTensorObject *)weight};
        CtDevice dev;
        return ct_check_same_device(2, ts, false, &dev);
    }
    if (input->dtype == CT_BOOL) {
        if (dim == 3) {
            PyErr_SetString(PyExc_NotImplementedError, "\"compute_columns3d\" not implemented for 'Bool'");
        } else {
            PyErr_Format(PyExc_NotImplementedError, "\"slow_conv2d_%s\" not implemented for 'Bool'",
                         ct_device_of(input).type == CT_DEV_CUDA ? "cuda" : "cpu");
        }
        return -1;
    }
    if (dim == 3 && (g->kernel[0] <= 0 || g->kernel[1] <= 0 || g->kernel[2] <= 0)) {
        PyErr_Format(PyExc_RuntimeError, "kernel size should be greater than zero, but got: %lld x %lld x %lld (TxHxW)",
                     (long long)g->kernel[0], (long long)g->kernel[1], (long long)g->kernel[2]);
        return -1;
    }
    if (g->kernel[1] <= 0 || g->kernel[2] <= 0) {
        PyErr_Format(PyExc_RuntimeError, "kernel size should be greater than zero, but got kernel_height: %lld "
                     "kernel_width: %lld", (long long)g->kernel[1], (long long)g->kernel[2]);
        return -1;
    }
    g->groups = groups;
    g->batch = in_sizes[0];
    g->in_channels = in_sizes[1];
    g->out_channels = weight->sizes[0];
    return 0;
}

/* ====================================================================================================
 * the computation
 * ==================================================================================================== */
typedef struct {
    const ConvGeom *g;
    CtDType dtype;
    CtDevice device;
    const struct CtNNKernels *nn;
    const struct CtBlasKernels *blas;
    int64_t area;           /* the output's volume */
    int64_t image_numel;    /* in_channels * the input's volume */
    int64_t taps;           /* in_channels / groups * kernel volume: the GEMM depth */
    int64_t cols_per_image; /* in_channels * kernel volume * area */
    int64_t chunk;          /* images per im2col */
    bool direct;            /* 1x1 kernel, stride 1, no padding: the image is its own columns */
    size_t itemsize;
} ConvPlan;

static int conv_plan(const ConvGeom *g, CtDType dtype, CtDevice device, ConvPlan *p)
{
    const CtDeviceOps *ops = ct_device_ops(device);
    if (ops == NULL) {
        return -1;
    }
    if (ops->nn == NULL || ops->nn->im2col == NULL || ops->blas == NULL) {
        PyErr_Format(PyExc_NotImplementedError, "ctorch: convolution kernels are not available on %s", ops->name);
        return -1;
    }
    p->g = g;
    p->dtype = dtype;
    p->device = device;
    p->nn = ops->nn;
    p->blas = ops->blas;
    p->area = volume(g->out);
    p->image_numel = g->in_channels * volume(g->in);
    p->taps = g->in_channels / g->groups * volume(g->kernel);
    p->cols_per_image = g->in_channels * volume(g->kernel) * p->area;
    p->direct = true;
    for (int a = 0; a < 3; a++) {
        p->direct = p->direct && g->kernel[a] == 1 && g->stride[a] == 1 && g->pad_lo[a] == 0 && g->pad_hi[a] == 0;
    }
    int64_t chunk = p->cols_per_image > 0 ? CONV_COLUMN_BUDGET / p->cols_per_image : g->batch;
    p->chunk = chunk < 1 ? 1 : chunk > g->batch ? g->batch : chunk;
    p->itemsize = ct_dtype_info[dtype].itemsize;
    return 0;
}

static CtConvDesc conv_desc(const ConvPlan *p, int64_t batch)
{
    const ConvGeom *g = p->g;
    CtConvDesc d = {.dtype = p->dtype, .device = p->device, .batch = batch, .channels = g->in_channels};
    memcpy(d.in, g->in, sizeof(d.in));
    memcpy(d.out, g->out, sizeof(d.out));
    memcpy(d.kernel, g->kernel, sizeof(d.kernel));
    memcpy(d.stride, g->stride, sizeof(d.stride));
    memcpy(d.pad, g->pad_lo, sizeof(d.pad));
    memcpy(d.dilation, g->dilation, sizeof(d.dilation));
    return d;
}

static int64_t ld(int64_t v) { return v > 1 ? v : 1; }

/* The columns of images [n0, n0 + nb) of x (dense, batched) into *out: x itself when the plan is
 * direct, else im2col into cols (a borrowed pointer into x or cols, NULL when empty). 0 or -1. */
static int columns_of(const ConvPlan *p, const char *x, char *cols, int64_t n0, int64_t nb, const char **out)
{
    const char *image = x + (size_t)(n0 * p->image_numel) * p->itemsize;
    if (p->direct) {
        *out = image;
        return 0;
    }
    CtConvDesc d = conv_desc(p, nb);
    d.image = image;
    d.columns = cols;
    *out = cols;
    return p->nn->im2col(&d);
}

static CtTensorObject *new_columns(const ConvPlan *p)
{
    int64_t n = p->direct ? 0 : p->chunk * p->cols_per_image;
    return ct_empty(1, &n, p->dtype, p->device);
}

/* out (batch, out_channels, area) = W @ columns (+ bias already in out when beta == 1). */
static int conv_forward_into(const ConvPlan *p, const char *x, const char *w, char *out, double beta)
{
    const ConvGeom *g = p->g;
    int64_t cog = g->out_channels / g->groups;
    size_t isz = p->itemsize;
    CtTensorObject *cols = new_columns(p);
    if (cols == NULL) {
        return -1;
    }
    int rc = -1;
    for (int64_t n0 = 0; n0 < g->batch; n0 += p->chunk) {
        int64_t nb = g->batch - n0 < p->chunk ? g->batch - n0 : p->chunk;
        const char *c;
        if (columns_of(p, x, ct_data(cols), n0, nb, &c) < 0) {
            goto done;
        }
        for (int64_t grp = 0; grp < g->groups; grp++) {
            const char *wg = w + (size_t)(grp * cog * p->taps) * isz;
            const char *cg = c + (size_t)(grp * p->taps * p->area) * isz;
            char *og = out + (size_t)((n0 * g->out_channels + grp * cog) * p->area) * isz;
            if (p->blas->gemm_batched(p->device, p->dtype, false, false, cog, p->area, p->taps, 1.0, wg, ld(p->taps),
                                      0, cg, ld(p->area), p->cols_per_image, beta, og, ld(p->area),
                                      g->out_channels * p->area, nb) < 0) {
                goto done;
            }
        }
    }
    rc = 0;
done:
    Py_DECREF(cols);
    return rc;
}

/* grad_input (batch, in_channels, in_h, in_w) = col2im(W^T @ grad). */
static int conv_grad_input(const ConvPlan *p, const char *grad, const char *w, char *gi)
{
    const ConvGeom *g = p->g;
    int64_t cog = g->out_channels / g->groups;
    size_t isz = p->itemsize;
    CtTensorObject *cols = new_columns(p);
    if (cols == NULL) {
        return -1;
    }
    int rc = -1;
    for (int64_t n0 = 0; n0 < g->batch; n0 += p->chunk) {
        int64_t nb = g->batch - n0 < p->chunk ? g->batch - n0 : p->chunk;
        char *gimage = gi + (size_t)(n0 * p->image_numel) * isz;
        char *c = p->direct ? gimage : ct_data(cols);
        for (int64_t grp = 0; grp < g->groups; grp++) {
            const char *wg = w + (size_t)(grp * cog * p->taps) * isz;
            const char *gg = grad + (size_t)((n0 * g->out_channels + grp * cog) * p->area) * isz;
            char *cg = c + (size_t)(grp * p->taps * p->area) * isz;
            if (p->blas->gemm_batched(p->device, p->dtype, true, false, p->taps, p->area, cog, 1.0, wg, ld(p->taps),
                                      0, gg, ld(p->area), g->out_channels * p->area, 0.0, cg, ld(p->area),
                                      p->cols_per_image, nb) < 0) {
                goto done;
            }
        }
        if (!p->direct) {
            CtConvDesc d = conv_desc(p, nb);
            d.grad_columns = c;
            d.grad_image = gimage;
            if (p->nn->col2im(&d) < 0) {
                goto done;
            }
        }
    }
    rc = 0;
done:
    Py_DECREF(cols);
    return rc;
}

/* grad_weight (out_channels, taps) = sum over images, in order, of grad[n] @ columns[n]^T. */
static int conv_grad_weight(const ConvPlan *p, const char *grad, const char *x, CtTensorObject *gw)
{
    const ConvGeom *g = p->g;
    int64_t cog = g->out_channels / g->groups;
    size_t isz = p->itemsize;
    if (g->batch == 0) {
        CtScalar zero = {.kind = CT_KIND_FLOAT, .v.d = 0.0};
        return ct_fill_(gw, &zero);
    }
    CtTensorObject *cols = new_columns(p);
    if (cols == NULL) {
        return -1;
    }
    int rc = -1;
    for (int64_t n0 = 0; n0 < g->batch; n0 += p->chunk) {
        int64_t nb = g->batch - n0 < p->chunk ? g->batch - n0 : p->chunk;
        const char *c;
        if (columns_of(p, x, ct_data(cols), n0, nb, &c) < 0) {
            goto done;
        }
        for (int64_t i = 0; i < nb; i++) {
            const char *gn = grad + (size_t)((n0 + i) * g->out_channels * p->area) * isz;
            const char *cn = c + (size_t)(i * p->cols_per_image) * isz;
            if (p->blas->gemm_batched(p->device, p->dtype, false, true, cog, p->taps, p->area, 1.0, gn, ld(p->area),
                                      cog * p->area, cn, ld(p->area), p->taps * p->area, n0 + i == 0 ? 0.0 : 1.0,
                                      ct_data(gw), ld(p->taps), cog * p->taps, g->groups) < 0) {
                goto done;
            }
        }
    }
    rc = 0;
done:
    Py_DECREF(cols);
    return rc;
}

/* t seen with the batch dim an unbatched call lacks (a view; t itself when batched). New reference. */
static CtTensorObject *batched_view(CtTensorObject *t, bool unbatched)
{
    if (!unbatched) {
        return (CtTensorObject *)Py_NewRef(t);
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    sizes[0] = 1;
    strides[0] = 1;
    memcpy(&sizes[1], t->sizes, sizeof(int64_t) * t->ndim);
    memcpy(&strides[1], t->strides, sizeof(int64_t) * t->ndim);
    return ct_view_of(t, t->ndim + 1, sizes, strides, t->offset);
}

/* The output's shape: (batch,) out_channels, spatial dims; for a transposed convolution (g its adjoint
 * convolution's geometry) that convolution's input shape. Returns its ndim. */
static int output_shape(const ConvGeom *g, bool transposed, int64_t *sizes)
{
    int nd = 0;
    if (!g->unbatched) {
        sizes[nd++] = g->batch;
    }
    sizes[nd++] = transposed ? g->in_channels : g->out_channels;
    for (int i = 3 - g->dim; i < 3; i++) {
        sizes[nd++] = transposed ? g->in[i] : g->out[i];
    }
    return nd;
}

/* t (dense, (batch, channels, *)) viewed as (batch, channels, area) into *t3 and, when bias is given,
 * bias (channels) broadcast to that shape into *bias3. 0 or -1 (new references in what was set). */
static int channel_views(CtTensorObject *t, CtTensorObject *bias, int64_t batch, int64_t channels, int64_t area,
                         CtTensorObject **t3, CtTensorObject **bias3)
{
    int64_t s3[3] = {batch, channels, area}, st3[3];
    ct_contiguous_strides(3, s3, st3);
    if ((*t3 = ct_view_of(t, 3, s3, st3, t->offset)) == NULL) {
        return -1;
    }
    if (bias != NULL) {
        int64_t bst[3] = {0, bias->strides[0], 0};
        if ((*bias3 = ct_view_of(bias, 3, s3, bst, bias->offset)) == NULL) {
            return -1;
        }
    }
    return 0;
}

/* The layout of a convolution's output and gradients, as PyTorch's backends choose it: channels_last
 * (_3d) when the input or else the weight suggests it. The kernels compute dense NCHW results, which
 * are then copied into that layout (ct_as_memory_format), the values unchanged. */
static CtMemoryFormat conv_memory_format(const CtTensorObject *input, const CtTensorObject *weight)
{
    CtMemoryFormat f = ct_suggest_memory_format(input);
    return f != CT_FORMAT_CONTIGUOUS ? f : ct_suggest_memory_format(weight);
}

/* The output of the convolution g describes (transposed: of the transposed convolution whose adjoint g
 * describes), the bias added. New reference. */
static CtTensorObject *conv_output(const ConvGeom *g, bool transposed, CtTensorObject *input, CtTensorObject *weight,
                                   CtTensorObject *bias)
{
    ConvPlan p;
    if (conv_plan(g, input->dtype, ct_device_of(input), &p) < 0) {
        return NULL;
    }
    CtTensorObject *x = NULL, *w = NULL, *out = NULL, *out3 = NULL, *bias3 = NULL, *result = NULL;
    PyObject *sum = NULL;
    int64_t osz[5];
    int ond = output_shape(g, transposed, osz);
    if ((x = ct_contiguous(input)) == NULL || (w = ct_contiguous(weight)) == NULL ||
        (out = ct_empty(ond, osz, input->dtype, p.device)) == NULL) {
        goto done;
    }
    if (ct_numel(out) == 0) {
        result = ct_as_memory_format(out, conv_memory_format(input, weight));
        out = NULL;
        goto done;
    }
    const int64_t channels = transposed ? g->in_channels : g->out_channels;
    const int64_t area = transposed ? volume(g->in) : p.area;
    if (bias != NULL && channel_views(out, bias, g->batch, channels, area, &out3, &bias3) < 0) {
        goto done;
    }
    if (transposed) { /* the adjoint's grad_input, then += bias */
        if (conv_grad_input(&p, ct_data(x), ct_data(w), ct_data(out)) < 0 ||
            (bias != NULL && (sum = ct_call_method((PyObject *)out3, "add_", "O", (PyObject *)bias3)) == NULL)) {
            goto done;
        }
    } else { /* out pre-filled with the bias, the product added onto it */
        if ((bias != NULL && ct_copy_(out3, bias3) < 0) ||
            conv_forward_into(&p, ct_data(x), ct_data(w), ct_data(out), bias != NULL ? 1.0 : 0.0) < 0) {
            goto done;
        }
    }
    result = ct_as_memory_format(out, conv_memory_format(input, weight));
    out = NULL;
done:
    Py_XDECREF(x);
    Py_XDECREF(w);
    Py_XDECREF(out);
    Py_XDECREF(out3);
    Py_XDECREF(bias3);
    Py_XDECREF(sum);
    return result;
}

static CtTensorObject *conv_forward(const char *fname, int fdim, CtTensorObject *input, CtTensorObject *weight,
                                    CtTensorObject *bias, PyObject *stride, PyObject *padding, PyObject *dilation,
                                    PyObject *groups)
{
    ConvGeom g;
    if (conv_setup(fname, fdim, input, weight, bias, stride, padding, dilation, groups, true, &g) < 0) {
        return NULL;
    }
    return conv_output(&g, false, input, weight, bias);
}

/* (grad_input, grad_weight, grad_bias) of a convolution (transposed: of the transposed convolution
 * whose adjoint p describes), each None unless mask asks for it (bits 1, 2, 4). */
static PyObject *conv_gradients(const ConvPlan *p, bool transposed, CtTensorObject *grad, CtTensorObject *input,
                                CtTensorObject *weight, int64_t mask)
{
    const ConvGeom *g = p->g;
    const char *fname = transposed ? "_conv_transpose_backward" : "_convolution_backward";
    int64_t osz[5];
    int ond = output_shape(g, transposed, osz);
    if (grad->ndim != ond || memcmp(grad->sizes, osz, sizeof(int64_t) * ond) != 0 || grad->dtype != input->dtype ||
        !ct_device_equal(ct_device_of(grad), p->device)) {
        char a[256], b[256];
        ct_format_sizes(a, sizeof(a), grad->ndim, grad->sizes);
        ct_format_sizes(b, sizeof(b), ond, osz);
        PyErr_Format(PyExc_RuntimeError, "%s: grad of size %s (%s), expected %s (%s) on the input's device", fname, a,
                     ct_dtype_info[grad->dtype].name, b, ct_dtype_info[input->dtype].name);
        return NULL;
    }
    CtTensorObject *gr = NULL, *x = NULL, *w = NULL, *gi = NULL, *gw = NULL, *g3 = NULL;
    PyObject *gb = NULL, *result = NULL;
    if ((gr = ct_contiguous(grad)) == NULL) {
        goto done;
    }
    if (mask & 1) { /* transposed: the adjoint convolution applied to grad */
        if ((w = ct_contiguous(weight)) == NULL ||
            (gi = ct_empty(input->ndim, input->sizes, input->dtype, p->device)) == NULL) {
            goto done;
        }
        int rc = ct_numel(gi) == 0 ? 0
                 : transposed      ? conv_forward_into(p, ct_data(gr), ct_data(w), ct_data(gi), 0.0)
                                   : conv_grad_input(p, ct_data(gr), ct_data(w), ct_data(gi));
        if (rc < 0) {
            goto done;
        }
    }
    if (mask & 2) { /* transposed: the adjoint's grad_weight, input as its output gradient, grad as its image */
        if ((x = ct_contiguous(input)) == NULL ||
            (gw = ct_empty(weight->ndim, weight->sizes, weight->dtype, p->device)) == NULL) {
            goto done;
        }
        const char *image = ct_data(transposed ? gr : x), *grad_out = ct_data(transposed ? x : gr);
        if (ct_numel(gw) > 0 && conv_grad_weight(p, grad_out, image, gw) < 0) {
            goto done;
        }
    }
    if (mask & 4) { /* the sum of grad over every dim but the channels */
        int64_t area = transposed ? volume(g->in) : p->area;
        if (channel_views(gr, NULL, g->batch, transposed ? g->in_channels : g->out_channels, area, &g3, NULL) < 0 ||
            (gb = ct_call_method((PyObject *)g3, "sum", "((ii))", 0, 2)) == NULL) {
            goto done;
        }
    }
    CtMemoryFormat format = conv_memory_format(input, weight);
    if ((gi != NULL && (gi = ct_as_memory_format(gi, format)) == NULL) ||
        (gw != NULL && (gw = ct_as_memory_format(gw, format)) == NULL)) {
        goto done;
    }
    result = PyTuple_Pack(3, gi ? (PyObject *)gi : Py_None, gw ? (PyObject *)gw : Py_None, gb ? gb : Py_None);
done:
    Py_XDECREF(gr);
    Py_XDECREF(x);
    Py_XDECREF(w);
    Py_XDECREF(gi);
    Py_XDECREF(gw);
    Py_XDECREF(g3);
    Py_XDECREF(gb);
    return result;
}

/* (grad_input, grad_weight, grad_bias), each None unless mask asks for it (bits 1, 2, 4). */
static PyObject *conv_backward(CtTensorObject *grad, CtTensorObject *input, CtTensorObject *weight,
                               PyObject *stride, PyObject *padding, PyObject *dilation, PyObject *groups, int64_t mask)
{
    ConvGeom g;
    ConvPlan p;
    int fdim = weight->ndim - 2;
    static const char *const fnames[4] = {NULL, "conv1d", "conv2d", "conv3d"};
    if (fdim < 1 || fdim > 3) {
        PyErr_Format(PyExc_RuntimeError, "_convolution_backward: expected a 3-d, 4-d or 5-d weight, got %d-d",
                     weight->ndim);
        return NULL;
    }
    if (conv_setup(fnames[fdim], fdim, input, weight, NULL, stride, padding, dilation, groups, false,
                   &g) < 0 ||
        conv_plan(&g, input->dtype, ct_device_of(input), &p) < 0) {
        return NULL;
    }
    return conv_gradients(&p, false, grad, input, weight, mask);
}

/* ====================================================================================================
 * transposed convolutions: conv_transpose1d / conv_transpose2d, input (N, C_in, *), weight
 * (C_in, C_out / groups, k...). A transposed convolution is the adjoint of the convolution whose
 * input is its output (geometry below, in_channels = C_out, out_channels = C_in), so:
 *   forward      = that convolution's grad_input (GEMM, then col2im)
 *   grad_input   = that convolution's forward (im2col, then GEMM)
 *   grad_weight  = that convolution's grad_weight, with image and gradient exchanged
 * ==================================================================================================== */
/* Every check of torch.conv_transpose{1,2}d in PyTorch's order, and the adjoint convolution's
 * geometry (g->in: the transposed output's spatial sizes; g->out: the transposed input's). bias may
 * be NULL. */
static int conv_transpose_setup(const char *fname, int fdim, const CtTensorObject *input, const CtTensorObject *weight,
                                const CtTensorObject *bias, PyObject *const *params, ConvGeom *g)
{
    char ws[256], is[256], bs[256];
    memset(g, 0, sizeof(*g));
    g->dim = fdim;
    if (input->ndim != fdim + 1 && input->ndim != fdim + 2) {
        ct_format_sizes(is, sizeof(is), input->ndim, input->sizes);
        PyErr_Format(PyExc_RuntimeError, "Expected %dD (unbatched) or %dD (batched) input to %s, but got input of size: %s",
                     fdim + 1, fdim + 2, fname, is);
        return -1;
    }
    g->unbatched = input->ndim == fdim + 1;
    int64_t in_sizes[5] = {1, 1, 1, 1, 1};
    memcpy(&in_sizes[g->unbatched ? 1 : 0], input->sizes, sizeof(int64_t) * input->ndim);
    /* params: stride, padding, output_padding, groups, dilation (NULL when absent) */
    int64_t groups = 1;
    if (params[3] != NULL && (PyBool_Check(params[3]) || ct_arg_int64(params[3], &groups) < 0)) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "%s(): argument 'groups' must be int, not bool", fname);
        }
        return -1;
    }
    static const char *const names[4] = {"stride", "padding", "output_padding", "dilation"};
    static const int64_t dflt[4] = {1, 0, 0, 1};
    PyObject *objs[4] = {params[0], params[1], params[2], params[4]};
    int64_t v[4][CT_MAX_DIMS];
    int nv[4];
    for (int i = 0; i < 4; i++) {
        if (objs[i] != NULL && PyUnicode_Check(objs[i])) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be tuple of ints, not str", fname, names[i]);
            return -1;
        }
        if ((nv[i] = parse_int_list(fname, names[i], objs[i], fdim, dflt[i], v[i])) < 0) {
            return -1;
        }
    }
    if (groups <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "non-positive groups is not supported");
        return -1;
    }
    int dim = weight->ndim - 2;
    for (int i = 0; i < 4 && dim >= 1; i++) {
        if (expand_param(names[i], v[i], nv[i], dim) < 0) {
            return -1;
        }
    }
    static const char *const bad[4] = {"non-positive stride", "negative padding", "negative output_padding",
                                       "non-positive dilation"};
    static const int order[4] = {1, 2, 0, 3}; /* PyTorch checks padding, output_padding, stride, dilation */
    for (int o = 0; o < 4; o++) {
        int i = order[o];
        for (int j = 0; j < dim; j++) {
            if (i == 0 || i == 3 ? v[i][j] <= 0 : v[i][j] < 0) {
                PyErr_Format(PyExc_RuntimeError, "%s is not supported", bad[i]);
                return -1;
            }
        }
    }
    ct_format_sizes(ws, sizeof(ws), weight->ndim, weight->sizes);
    ct_format_sizes(is, sizeof(is), fdim + 2, in_sizes);
    if (weight->ndim != fdim + 2) {
        ct_format_sizes(is, sizeof(is), input->ndim, input->sizes);
        PyErr_Format(PyExc_RuntimeError,
                     "Expected %d-dimensional input for %d-dimensional weight %s, but got %d-dimensional input of "
                     "size %s instead",
                     weight->ndim, weight->ndim, ws, input->ndim, is);
        return -1;
    }
    if (weight->sizes[0] % groups != 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got weight of "
                     "size [%s] instead",
                     (long long)groups, (long long)groups, ws);
        return -1;
    }
    if (in_sizes[1] != weight->sizes[0]) {
        PyErr_Format(PyExc_RuntimeError,
                     "Given transposed=1, weight of size %s, expected input%s to have %lld channels, but got %lld "
                     "channels instead",
                     ws, is, (long long)weight->sizes[0], (long long)in_sizes[1]);
        return -1;
    }
    const int64_t out_channels = weight->sizes[1] * groups;
    if (bias != NULL && (bias->ndim != 1 || bias->sizes[0] != out_channels)) {
        ct_format_sizes(bs, sizeof(bs), bias->ndim, bias->sizes);
        PyErr_Format(PyExc_RuntimeError,
                     "Given transposed=1, weight of size %s, expected bias to be 1-dimensional with %lld elements, but "
                     "got bias of size %s instead",
                     ws, (long long)out_channels, bs);
        return -1;
    }
    if (check_types(input, weight, bias, dim) < 0) {
        return -1;
    }
    /* the adjoint convolution, in 3-d terms (the call's dims are the last `dim` of three) */
    const int off = 3 - dim;
    for (int i = 0; i < 3; i++) {
        g->in[i] = g->out[i] = g->kernel[i] = g->stride[i] = g->dilation[i] = 1;
        g->pad_lo[i] = g->pad_hi[i] = 0;
    }
    int64_t op[3] = {0, 0, 0};
    bool empty = false, too_small = false, big_op = false;
    for (int i = 0; i < dim; i++) {
        const int j = i + off;
        g->out[j] = in_sizes[2 + i];
        g->kernel[j] = weight->sizes[2 + i];
        g->stride[j] = v[0][i];
        g->pad_lo[j] = v[1][i];
        op[j] = v[2][i];
        g->pad_hi[j] = v[1][i] + op[j]; /* > 0 whenever the output is not the input's size */
        g->dilation[j] = v[3][i];
        g->in[j] = (g->out[j] - 1) * g->stride[j] - 2 * g->pad_lo[j] + g->dilation[j] * (g->kernel[j] - 1) + op[j] + 1;
        empty = empty || g->out[j] == 0;
        too_small = too_small || g->in[j] < 1;
        big_op = big_op || (op[j] >= g->stride[j] && op[j] >= g->dilation[j]);
    }
    if (big_op && dim == 3) {
        PyErr_Format(PyExc_RuntimeError,
                     "output padding must be smaller than either stride or dilation, but got output_padding_depth: "
                     "%lld output_padding_height: %lld output_padding_width: %lld stride_depth: %lld stride_height: "
                     "%lld stride_width: %lld dilation_depth: %lld dilation_height: %lld dilation_width: %lld",
                     (long long)op[0], (long long)op[1], (long long)op[2], (long long)g->stride[0],
                     (long long)g->stride[1], (long long)g->stride[2], (long long)g->dilation[0],
                     (long long)g->dilation[1], (long long)g->dilation[2]);
        return -1;
    }
    if (big_op) {
        PyErr_Format(PyExc_RuntimeError,
                     "output padding must be smaller than either stride or dilation, but got output_padding_height: "
                     "%lld output_padding_width: %lld stride_height: %lld stride_width: %lld dilation_height: %lld "
                     "dilation_width: %lld",
                     (long long)op[1], (long long)op[2], (long long)g->stride[1], (long long)g->stride[2],
                     (long long)g->dilation[1], (long long)g->dilation[2]);
        return -1;
    }
    if (empty && in_sizes[0] != 0 && in_sizes[1] != 0) {
        PyErr_Format(PyExc_RuntimeError, "Only zero batch or zero channel inputs are supported, but got input shape: %s",
                     is);
        return -1;
    }
    if (too_small) {
        char ins[96] = "", outs[96] = "";
        for (int j = off; j < 3; j++) {
            size_t li = strlen(ins), lo = strlen(outs);
            snprintf(ins + li, sizeof(ins) - li, "%s%lld", j > off ? " x " : "", (long long)g->out[j]);
            snprintf(outs + lo, sizeof(outs) - lo, "%s%lld", j > off ? " x " : "", (long long)g->in[j]);
        }
        if (dim < 2) { /* PyTorch reports a 1-d call in 2-d terms */
            snprintf(ins, sizeof(ins), "1 x %lld", (long long)g->out[2]);
            snprintf(outs, sizeof(outs), "1 x %lld", (long long)g->in[2]);
        }
        PyErr_Format(PyExc_RuntimeError,
                     "Given input size per channel: (%s). Calculated output size per channel: (%s). Output size is "
                     "too small",
                     ins, outs);
        return -1;
    }
    if (dim != 3 && !ct_is_floating(input->dtype)) {
        PyErr_Format(PyExc_NotImplementedError, "\"slow_conv_transpose2d_out_%s\" not implemented for '%s'",
                     ct_device_of(input).type == CT_DEV_CUDA ? "cuda" : "cpu", ct_scalar_type_name(input->dtype));
        return -1;
    }
    if (dim == 3 && input->dtype == CT_BOOL) {
        PyErr_SetString(PyExc_NotImplementedError, "\"slow_conv_transpose3d_out_cpu\" not implemented for 'Bool'");
        return -1;
    }
    g->groups = groups;
    g->batch = in_sizes[0];
    g->in_channels = out_channels;
    g->out_channels = weight->sizes[0];
    return 0;
}

/* params: stride, padding, output_padding, groups, dilation (NULL when absent) */
static CtTensorObject *conv_transpose_forward(const char *fname, int fdim, CtTensorObject *input,
                                              CtTensorObject *weight, CtTensorObject *bias, PyObject *const *params)
{
    ConvGeom g;
    if (conv_transpose_setup(fname, fdim, input, weight, bias, params, &g) < 0) {
        return NULL;
    }
    return conv_output(&g, true, input, weight, bias);
}

/* (grad_input, grad_weight, grad_bias) of a transposed convolution, each None unless mask asks for it
 * (bits 1, 2, 4). params as conv_transpose_forward's. */
static PyObject *conv_transpose_backward(CtTensorObject *grad, CtTensorObject *input, CtTensorObject *weight,
                                         PyObject *const *params, int64_t mask)
{
    ConvGeom g;
    ConvPlan p;
    int fdim = weight->ndim - 2;
    static const char *const fnames[4] = {NULL, "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"};
    if (fdim < 1 || fdim > 3) {
        PyErr_Format(PyExc_RuntimeError, "_conv_transpose_backward: expected a 3-d, 4-d or 5-d weight, got %d-d",
                     weight->ndim);
        return NULL;
    }
    if (conv_transpose_setup(fnames[fdim], fdim, input, weight, NULL, params,
                             &g) < 0 ||
        conv_plan(&g, input->dtype, ct_device_of(input), &p) < 0) {
        return NULL;
    }
    return conv_gradients(&p, true, grad, input, weight, mask);
}

/* ====================================================================================================
 * CPU kernels
 * ==================================================================================================== */
/* im2col over the rows (image, channel, k0, k1, k2) of the columns: a pure copy, by element size. */
#define IM2COL_ROWS(T)                                                                                         \
    for (int64_t r = begin; r < end; r++) {                                                                    \
        int64_t k2 = r % d->kernel[2], k1 = (r / d->kernel[2]) % d->kernel[1];                                 \
        int64_t k0 = (r / (d->kernel[2] * d->kernel[1])) % d->kernel[0];                                       \
        int64_t c = r / (d->kernel[2] * d->kernel[1] * d->kernel[0]); /* image * channels + channel */         \
        const T *src = (const T *)d->image + c * d->in[0] * d->in[1] * d->in[2];                               \
        T *dst = (T *)d->columns + r * d->out[0] * d->out[1] * d->out[2];                                      \
        for (int64_t z = 0; z < d->out[0]; z++) {                                                              \
            int64_t p0 = z * d->stride[0] - d->pad[0] + k0 * d->dilation[0];                                   \
            for (int64_t y = 0; y < d->out[1]; y++) {                                                          \
                int64_t p1 = y * d->stride[1] - d->pad[1] + k1 * d->dilation[1];                               \
                T *row = dst + (z * d->out[1] + y) * d->out[2];                                                \
                if (p0 < 0 || p0 >= d->in[0] || p1 < 0 || p1 >= d->in[1]) {                                    \
                    memset(row, 0, sizeof(T) * (size_t)d->out[2]);                                             \
                    continue;                                                                                  \
                }                                                                                              \
                const T *line = src + (p0 * d->in[1] + p1) * d->in[2];                                         \
                for (int64_t x = 0; x < d->out[2]; x++) {                                                      \
                    int64_t p2 = x * d->stride[2] - d->pad[2] + k2 * d->dilation[2];                           \
                    row[x] = p2 >= 0 && p2 < d->in[2] ? line[p2] : (T)0;                                       \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    }

static void im2col_rows(int64_t begin, int64_t end, void *ctx)
{
    const CtConvDesc *d = ctx;
    switch (ct_dtype_info[d->dtype].itemsize) {
    case 1: IM2COL_ROWS(uint8_t) break;
    case 2: IM2COL_ROWS(uint16_t) break;
    case 4: IM2COL_ROWS(uint32_t) break;
    default: IM2COL_ROWS(uint64_t) break;
    }
}
#undef IM2COL_ROWS

static int64_t conv_grain(int64_t per_item) { return per_item >= 4096 ? 1 : 4096 / (per_item > 0 ? per_item : 1); }

int ct_cpu_im2col(const CtConvDesc *d)
{
    int64_t rows = d->batch * d->channels * volume(d->kernel);
    ct_parallel_for(rows, conv_grain(volume(d->out)), im2col_rows, (void *)d);
    return 0;
}

/* col2im over the planes (image, channel): every element gathers its column entries in the
 * order of conv_math.h, accumulated in ACC (float for the 16-bit floats, wrapping uint64 for
 * the integers), then stored once. */
#define COL2IM_PLANES(NAME, T, ACC)                                                                    \
    for (int64_t pl = begin; pl < end; pl++) {                                                         \
        int64_t c = pl % d->channels;                                                                  \
        const T *cols = (const T *)d->grad_columns + (pl / d->channels) * per_image;                   \
        T *out = (T *)d->grad_image + pl * volume(d->in);                                              \
        for (int64_t p0 = 0; p0 < d->in[0]; p0++) {                                                    \
            for (int64_t p1 = 0; p1 < d->in[1]; p1++) {                                                \
                for (int64_t p2 = 0; p2 < d->in[2]; p2++) {                                            \
                    ACC acc = 0;                                                                       \
                    CT_CONV_GATHER(d, c, p0, p1, p2, COL2IM_ADD_##NAME);                               \
                    CT_STORE_##NAME(&out[(p0 * d->in[1] + p1) * d->in[2] + p2], acc);                  \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
    }
#define COL2IM_ADD_F32(i) (acc += cols[(i)])
#define COL2IM_ADD_F64(i) (acc += cols[(i)])
#define COL2IM_ADD_F16(i) (acc += CT_LOAD_F16(&cols[(i)]))
#define COL2IM_ADD_BF16(i) (acc += CT_LOAD_BF16(&cols[(i)]))
#define COL2IM_ADD_INT(i) (acc += (uint64_t)(int64_t)cols[(i)])
#define COL2IM_ADD_U8 COL2IM_ADD_INT
#define COL2IM_ADD_I8 COL2IM_ADD_INT
#define COL2IM_ADD_I16 COL2IM_ADD_INT
#define COL2IM_ADD_I32 COL2IM_ADD_INT
#define COL2IM_ADD_I64 COL2IM_ADD_INT

static void col2im_planes(int64_t begin, int64_t end, void *ctx)
{
    const CtConvDesc *d = ctx;
    const int64_t per_image = d->channels * volume(d->kernel) * volume(d->out);
    switch (d->dtype) {
    case CT_F32: COL2IM_PLANES(F32, float, float) break;
    case CT_F64: COL2IM_PLANES(F64, double, double) break;
    case CT_F16: COL2IM_PLANES(F16, ct_half, float) break;
    case CT_BF16: COL2IM_PLANES(BF16, ct_bfloat16, float) break;
    case CT_U8: COL2IM_PLANES(U8, uint8_t, uint64_t) break;
    case CT_I8: COL2IM_PLANES(I8, int8_t, uint64_t) break;
    case CT_I16: COL2IM_PLANES(I16, int16_t, uint64_t) break;
    case CT_I32: COL2IM_PLANES(I32, int32_t, uint64_t) break;
    case CT_I64: COL2IM_PLANES(I64, int64_t, uint64_t) break;
    default: break; /* bool is refused by conv_setup */
    }
}
#undef COL2IM_PLANES

int ct_cpu_col2im(const CtConvDesc *d)
{
    ct_parallel_for(d->batch * d->channels, conv_grain(volume(d->in) * volume(d->kernel)), col2im_planes,
                    (void *)d);
    return 0;
}

/* ====================================================================================================
 * Python entry points (ctorch._C)
 * ==================================================================================================== */
static int check_tensor(const char *fname, const char *argname, int pos, PyObject *obj, bool optional)
{
    if (obj == NULL || (optional && obj == Py_None) || CtTensor_Check(obj)) {
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname, argname, pos,
                 Py_TYPE(obj)->tp_name);
    return -1;
}

static PyObject *conv_entry(const char *fname, int fdim, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "weight", "bias", "stride", "padding", "dilation", "groups", NULL};
    PyObject *a[7];
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0 || check_tensor(fname, "input", 1, a[0], false) < 0 ||
        check_tensor(fname, "weight", 2, a[1], false) < 0 || check_tensor(fname, "bias", 3, a[2], true) < 0) {
        return NULL;
    }
    for (int i = 3; i < 7; i++) { /* None is not a valid stride / padding / dilation / groups */
        if (a[i] == Py_None) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be %s, not NoneType", fname, names[i],
                         i == 6 ? "int" : "tuple of ints");
            return NULL;
        }
    }
    CtTensorObject *bias = a[2] == NULL || a[2] == Py_None ? NULL : CT_TENSOR(a[2]);
    return (PyObject *)conv_forward(fname, fdim, CT_TENSOR(a[0]), CT_TENSOR(a[1]), bias, a[3], a[4], a[5], a[6]);
}

PyDoc_STRVAR(conv1d_doc, "conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor\n\n"
                         "1-d convolution (cross-correlation) of an (N, C, L) or (C, L) input; padding may be 'valid' "
                         "or 'same'.");
static PyObject *py_conv1d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return conv_entry("conv1d", 1, args, nargs, kwnames);
}

PyDoc_STRVAR(conv2d_doc, "conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor\n\n"
                         "2-d convolution (cross-correlation) of an (N, C, H, W) or (C, H, W) input; padding may be "
                         "'valid' or 'same'.");
static PyObject *py_conv2d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return conv_entry("conv2d", 2, args, nargs, kwnames);
}

PyDoc_STRVAR(conv3d_doc, "conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor\n\n"
                         "3-d convolution (cross-correlation) of an (N, C, D, H, W) or (C, D, H, W) input; padding may "
                         "be 'valid' or 'same'.");
static PyObject *py_conv3d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return conv_entry("conv3d", 3, args, nargs, kwnames);
}

PyDoc_STRVAR(conv_backward_doc,
             "_convolution_backward(grad, input, weight, stride=1, padding=0, dilation=1, groups=1, mask=7) -> "
             "(grad_input, grad_weight, grad_bias); mask bits 1/2/4 ask for each (None otherwise)");
static PyObject *py_conv_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"grad", "input", "weight", "stride", "padding", "dilation", "groups", "mask",
                                        NULL};
    static const char *fname = "_convolution_backward";
    PyObject *a[8];
    int64_t mask = 7;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 3, a) < 0 || check_tensor(fname, "grad", 1, a[0], false) < 0 ||
        check_tensor(fname, "input", 2, a[1], false) < 0 || check_tensor(fname, "weight", 3, a[2], false) < 0 ||
        ct_arg_int64(a[7], &mask) < 0) {
        return NULL;
    }
    return conv_backward(CT_TENSOR(a[0]), CT_TENSOR(a[1]), CT_TENSOR(a[2]), a[3] == Py_None ? NULL : a[3],
                         a[4] == Py_None ? NULL : a[4], a[5] == Py_None ? NULL : a[5], a[6] == Py_None ? NULL : a[6],
                         mask);
}

/* conv_transpose1d / conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
 * groups=1, dilation=1) */
static PyObject *conv_transpose_entry(const char *fname, int fdim, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames)
{
    static const char *const names[] = {"input", "weight", "bias", "stride", "padding", "output_padding", "groups",
                                        "dilation", NULL};
    PyObject *a[8];
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0 || check_tensor(fname, "input", 1, a[0], false) < 0 ||
        check_tensor(fname, "weight", 2, a[1], false) < 0 || check_tensor(fname, "bias", 3, a[2], true) < 0) {
        return NULL;
    }
    for (int i = 3; i < 8; i++) { /* None is not a valid stride / padding / output_padding / groups / dilation */
        if (a[i] == Py_None) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be %s, not NoneType", fname, names[i],
                         i == 6 ? "int" : "tuple of ints");
            return NULL;
        }
    }
    CtTensorObject *bias = a[2] == NULL || a[2] == Py_None ? NULL : CT_TENSOR(a[2]);
    return (PyObject *)conv_transpose_forward(fname, fdim, CT_TENSOR(a[0]), CT_TENSOR(a[1]), bias, a + 3);
}

PyDoc_STRVAR(conv_transpose1d_doc,
             "conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) "
             "-> Tensor\n\nTransposed 1-d convolution of an (N, C_in, L) or (C_in, L) input; weight (C_in, C_out / "
             "groups, k).");
static PyObject *py_conv_transpose1d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return conv_transpose_entry("conv_transpose1d", 1, args, nargs, kwnames);
}

PyDoc_STRVAR(conv_transpose2d_doc,
             "conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) "
             "-> Tensor\n\nTransposed 2-d convolution of an (N, C_in, H, W) or (C_in, H, W) input; weight (C_in, "
             "C_out / groups, kH, kW).");
static PyObject *py_conv_transpose2d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return conv_transpose_entry("conv_transpose2d", 2, args, nargs, kwnames);
}

PyDoc_STRVAR(conv_transpose3d_doc,
             "conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) "
             "-> Tensor\n\nTransposed 3-d convolution of an (N, C_in, D, H, W) or (C_in, D, H, W) input; weight "
             "(C_in, C_out / groups, kD, kH, kW).");
static PyObject *py_conv_transpose3d(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return conv_transpose_entry("conv_transpose3d", 3, args, nargs, kwnames);
}

PyDoc_STRVAR(conv_transpose_backward_doc,
             "_conv_transpose_backward(grad, input, weight, params, mask=7) -> (grad_input, grad_weight, grad_bias)\n\n"
             "params: the forward's (stride, padding, output_padding, groups, dilation), None for a default; mask "
             "bits 1/2/4 ask for each gradient.");
static PyObject *py_conv_transpose_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                            PyObject *kwnames)
{
    static const char *const names[] = {"grad", "input", "weight", "params", "mask", NULL};
    static const char *fname = "_conv_transpose_backward";
    PyObject *a[5];
    int64_t mask = 7;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 4, a) < 0 || check_tensor(fname, "grad", 1, a[0], false) < 0 ||
        check_tensor(fname, "input", 2, a[1], false) < 0 || check_tensor(fname, "weight", 3, a[2], false) < 0 ||
        ct_arg_int64(a[4], &mask) < 0) {
        return NULL;
    }
    if (!PyTuple_Check(a[3]) || PyTuple_GET_SIZE(a[3]) != 5) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'params' must be a tuple of 5 (stride, padding, output_padding, "
                     "groups, dilation)", fname);
        return NULL;
    }
    PyObject *params[5];
    for (int i = 0; i < 5; i++) {
        PyObject *v = PyTuple_GET_ITEM(a[3], i);
        params[i] = v == Py_None ? NULL : v;
    }
    return conv_transpose_backward(CT_TENSOR(a[0]), CT_TENSOR(a[1]), CT_TENSOR(a[2]), params, mask);
}

/* ====================================================================================================
 * unfold / fold: PyTorch's im2col / col2im ops (F.unfold / F.fold) on the same data movers. An unfolded
 * (N, C * kh * kw, L) tensor is exactly the columns of conv.h's layout; fold sums them back (a gather).
 * ==================================================================================================== */
/* kernel_size, dilation, padding, stride (two values each) of im2col / col2im. */
typedef struct {
    int64_t k[2], d[2], p[2], s[2];
} BlockArgs;

/* Parses a[0..3] (kernel_size, dilation, padding, stride; NULL: the default) with PyTorch's checks. 0 or -1. */
static int parse_block_args(const char *fname, PyObject *const *a, BlockArgs *b)
{
    static const char *const names[4] = {"kernel_size", "dilation", "padding", "stride"};
    static const int64_t dflt[4] = {0, 1, 0, 1};
    int64_t *vals[4] = {b->k, b->d, b->p, b->s};
    for (int i = 0; i < 4; i++) {
        int64_t v[CT_MAX_DIMS];
        int n = parse_int_list(fname, names[i], a[i], 2, dflt[i], v);
        if (n < 0) {
            return -1;
        }
        if (n != 2) {
            PyErr_Format(PyExc_RuntimeError, "It is expected %s equals to 2, but got size %d", names[i], n);
            return -1;
        }
        vals[i][0] = v[0];
        vals[i][1] = v[1];
    }
    const char *what = b->k[0] <= 0 || b->k[1] <= 0   ? "kernel size should be greater than zero, but got kernel"
                       : b->d[0] <= 0 || b->d[1] <= 0 ? "dilation should be greater than zero, but got dilation"
                       : b->p[0] < 0 || b->p[1] < 0   ? "padding should be non-negative, but got pad"
                       : b->s[0] <= 0 || b->s[1] <= 0 ? "stride should be greater than zero, but got stride"
                                                      : NULL;
    if (what != NULL) {
        const int64_t *v = b->k[0] <= 0 || b->k[1] <= 0 ? b->k : b->d[0] <= 0 || b->d[1] <= 0 ? b->d
                           : b->p[0] < 0 || b->p[1] < 0 ? b->p : b->s;
        PyErr_Format(PyExc_RuntimeError, "%s_height: %lld %s_width: %lld", what, (long long)v[0],
                     strrchr(what, ' ') + 1, (long long)v[1]);
        return -1;
    }
    return 0;
}

/* The sliding blocks along axis a of an image of size n (C division, as PyTorch's). */
static int64_t block_count(const BlockArgs *b, int a, int64_t n)
{
    return (n + 2 * b->p[a] - (b->d[a] * (b->k[a] - 1) + 1)) / b->s[a] + 1;
}

/* "(a, b)" of two values into buf. */
static void format_pair(char *buf, size_t n, const int64_t *v) { snprintf(buf, n, "(%lld, %lld)", (long long)v[0], (long long)v[1]); }

/* A movers' descriptor for batch images of channels x image (H, W) and its blocks. */
static CtConvDesc block_desc(CtDType dtype, CtDevice device, int64_t batch, int64_t channels, const int64_t *image,
                             const int64_t *blocks, const BlockArgs *b)
{
    CtConvDesc d = {
        .dtype = dtype, .device = device, .batch = batch, .channels = channels, .in = {1, image[0], image[1]},
        .out = {1, blocks[0], blocks[1]}, .kernel = {1, b->k[0], b->k[1]}, .stride = {1, b->s[0], b->s[1]},
        .pad = {0, b->p[0], b->p[1]}, .dilation = {1, b->d[0], b->d[1]},
    };
    return d;
}

/* The device's movers (borrowed), NULL with an exception set; refuses the integer dtypes as PyTorch's
 * kernel `name` does, unless allow_int. */
static const struct CtNNKernels *block_kernels(const char *name, const CtTensorObject *t, bool allow_int)
{
    const CtDevice device = ct_device_of(t);
    if (!allow_int && ct_is_integral(t->dtype, false)) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s_out_%s\" not implemented for '%s'", name,
                     device.type == CT_DEV_CUDA ? "cuda" : "cpu", ct_scalar_type_name(t->dtype));
        return NULL;
    }
    const CtDeviceOps *ops = ct_device_ops(device);
    if (ops == NULL) {
        return NULL;
    }
    if (ops->nn == NULL || ops->nn->im2col == NULL || ops->nn->col2im == NULL) {
        PyErr_Format(PyExc_NotImplementedError, "ctorch: im2col / col2im are not available on %s", ops->name);
        return NULL;
    }
    return ops->nn;
}

/* im2col(input, kernel_size, dilation, padding, stride): (N, C, H, W) or (C, H, W) -> (N, C * kh * kw, L). */
static PyObject *im2col_impl(CtTensorObject *x, PyObject *const *a)
{
    const char *fname = "im2col";
    BlockArgs b;
    int unused;
    if (parse_block_args(fname, a, &b) < 0 || (x->ndim < 3 && ct_wrap_dim(2, x->ndim, &unused) < 0)) {
        return NULL;
    }
    const bool batched = x->ndim == 4;
    const int64_t *sz = x->sizes;
    if ((x->ndim != 3 && x->ndim != 4) || sz[x->ndim - 3] == 0 || sz[x->ndim - 2] == 0 || sz[x->ndim - 1] == 0) {
        char sb[160];
        ct_format_sizes(sb, sizeof(sb), x->ndim, x->sizes);
        PyErr_Format(PyExc_RuntimeError,
                     "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions "
                     "for input, but got: %s", sb);
        return NULL;
    }
    const int64_t image[2] = {sz[x->ndim - 2], sz[x->ndim - 1]};
    const int64_t blocks[2] = {block_count(&b, 0, image[0]), block_count(&b, 1, image[1])};
    if (blocks[0] < 1 || blocks[1] < 1) {
        char s1[64], s2[64], s3[64], s4[64];
        format_pair(s1, sizeof(s1), image);
        format_pair(s2, sizeof(s2), b.k);
        format_pair(s3, sizeof(s3), b.d);
        format_pair(s4, sizeof(s4), b.p);
        PyErr_Format(PyExc_RuntimeError,
                     "Given input with spatial size %s, kernel_size=%s, dilation=%s, padding=%s, calculated shape of "
                     "the array of sliding blocks as (%lld, %lld), but its components must be at least one.",
                     s1, s2, s3, s4, (long long)blocks[0], (long long)blocks[1]);
        return NULL;
    }
    const struct CtNNKernels *k = block_kernels(fname, x, false);
    if (k == NULL) {
        return NULL;
    }
    const int64_t batch = batched ? sz[0] : 1, channels = sz[x->ndim - 3];
    int64_t osz[3] = {batch, channels * b.k[0] * b.k[1], blocks[0] * blocks[1]};
    CtTensorObject *xc = ct_contiguous(x), *out = NULL;
    if (xc == NULL || (out = ct_empty(batched ? 3 : 2, batched ? osz : osz + 1, x->dtype, ct_device_of(x))) == NULL) {
        Py_XDECREF(xc);
        return NULL;
    }
    CtConvDesc d = block_desc(x->dtype, ct_device_of(x), batch, channels, image, blocks, &b);
    d.image = ct_data(xc);
    d.columns = ct_data(out);
    int rc = ct_numel(out) > 0 ? k->im2col(&d) : 0;
    Py_DECREF(xc);
    if (rc < 0) {
        Py_CLEAR(out);
    }
    return (PyObject *)out;
}

/* col2im(input, output_size, kernel_size, dilation, padding, stride): (N, C * kh * kw, L) or
 * (C * kh * kw, L) -> (N, C, H, W), each element the sum of the block entries holding it. */
static PyObject *col2im_impl(CtTensorObject *x, PyObject *output_size, PyObject *const *a)
{
    const char *fname = "col2im";
    BlockArgs b;
    int64_t image[CT_MAX_DIMS];
    int n = parse_int_list(fname, "output_size", output_size, 2, 0, image);
    if (n < 0) {
        return NULL;
    }
    if (n != 2) {
        PyErr_Format(PyExc_RuntimeError, "It is expected output_size equals to 2, but got size %d", n);
        return NULL;
    }
    if (parse_block_args(fname, a, &b) < 0) {
        return NULL;
    }
    const int64_t *sz = x->sizes;
    if ((x->ndim != 2 && x->ndim != 3) || sz[x->ndim - 2] == 0 || sz[x->ndim - 1] == 0) {
        char sb[160];
        ct_format_sizes(sb, sizeof(sb), x->ndim, x->sizes);
        PyErr_Format(PyExc_RuntimeError,
                     "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                     "dimensions for input, but got: %s", sb);
        return NULL;
    }
    const bool batched = x->ndim == 3;
    const int64_t rows = sz[x->ndim - 2], cols = sz[x->ndim - 1], taps = b.k[0] * b.k[1];
    char s1[64], s2[64], s3[64], s4[64], s5[64];
    format_pair(s1, sizeof(s1), image);
    format_pair(s2, sizeof(s2), b.k);
    if (rows % taps != 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
                     "input.size(1)=%lld and kernel_size=%s.", (long long)rows, s2);
        return NULL;
    }
    const int64_t blocks[2] = {block_count(&b, 0, image[0]), block_count(&b, 1, image[1])};
    format_pair(s3, sizeof(s3), b.d);
    format_pair(s4, sizeof(s4), b.p);
    format_pair(s5, sizeof(s5), b.s);
    if (blocks[0] * blocks[1] != cols) {
        PyErr_Format(PyExc_RuntimeError,
                     "Given output_size=%s, kernel_size=%s, dilation=%s, padding=%s, stride=%s, expected size of "
                     "input's dimension 2 to match the calculated number of sliding blocks %lld * %lld = %lld, but "
                     "got input.size(2)=%lld.", s1, s2, s3, s4, s5, (long long)blocks[0], (long long)blocks[1],
                     (long long)(blocks[0] * blocks[1]), (long long)cols);
        return NULL;
    }
    if (blocks[0] < 1 || blocks[1] < 1) {
        PyErr_Format(PyExc_RuntimeError,
                     "Given output_size=%s, kernel_size=%s, dilation=%s, padding=%s, stride=%s, calculated shape of "
                     "the array of sliding blocks as (%lld, %lld), which is too small (non-positive).",
                     s1, s2, s3, s4, s5, (long long)blocks[0], (long long)blocks[1]);
        return NULL;
    }
    const struct CtNNKernels *k = block_kernels(fname, x, x->dtype == CT_BOOL);
    if (k == NULL) {
        return NULL;
    }
    const int64_t batch = batched ? sz[0] : 1, channels = rows / taps;
    int64_t osz[4] = {batch, channels, image[0], image[1]};
    CtTensorObject *xc = NULL, *out = NULL;
    PyObject *any = NULL, *result = NULL;
    /* bool: a sum of bools is their any(), so the int64 counts are folded, then compared with 0 */
    xc = x->dtype == CT_BOOL ? ct_to(x, CT_I64, ct_device_of(x), false) : ct_contiguous(x);
    if (xc == NULL || (out = ct_empty(batched ? 4 : 3, batched ? osz : osz + 1, xc->dtype, ct_device_of(x))) == NULL) {
        goto done;
    }
    CtConvDesc d = block_desc(xc->dtype, ct_device_of(x), batch, channels, image, blocks, &b);
    d.grad_columns = ct_data(xc);
    d.grad_image = ct_data(out);
    if (ct_numel(out) > 0 && k->col2im(&d) < 0) {
        goto done;
    }
    if (x->dtype == CT_BOOL) {
        if ((any = ct_call_method((PyObject *)out, "ne", "i", 0)) == NULL) {
            goto done;
        }
        result = Py_NewRef(any);
    } else {
        result = Py_NewRef((PyObject *)out);
    }
done:
    Py_XDECREF(xc);
    Py_XDECREF(out);
    Py_XDECREF(any);
    return result;
}

/* a[0..n) with None as absent (NULL) */
static void none_as_absent(PyObject **a, int n)
{
    for (int i = 0; i < n; i++) {
        a[i] = a[i] == Py_None ? NULL : a[i];
    }
}

PyDoc_STRVAR(im2col_doc, "im2col(input, kernel_size, dilation=1, padding=0, stride=1) -> Tensor\n\nF.unfold: the "
                         "sliding blocks of (N, C, H, W) or (C, H, W) input as (N, C * kh * kw, L) columns.");
static PyObject *py_im2col(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "kernel_size", "dilation", "padding", "stride", NULL};
    PyObject *a[5];
    if (ct_parse_args("im2col", args, nargs, kwnames, names, 2, a) < 0 ||
        check_tensor("im2col", "input", 1, a[0], false) < 0) {
        return NULL;
    }
    none_as_absent(a + 1, 4);
    return im2col_impl(CT_TENSOR(a[0]), a + 1);
}

PyDoc_STRVAR(col2im_doc, "col2im(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor\n\n"
                         "F.fold: (N, C * kh * kw, L) columns summed back into (N, C, *output_size).");
static PyObject *py_col2im(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "output_size", "kernel_size", "dilation", "padding", "stride", NULL};
    PyObject *a[6];
    if (ct_parse_args("col2im", args, nargs, kwnames, names, 3, a) < 0 ||
        check_tensor("col2im", "input", 1, a[0], false) < 0) {
        return NULL;
    }
    none_as_absent(a + 2, 4);
    return col2im_impl(CT_TENSOR(a[0]), a[1], a + 2);
}

/* --- padding_mode: nn.Conv{1,2}d's reflect / replicate / circular padding --------------------------- */
/* The source position of padded position q of an axis of length len with `lo` leading padding. */
static int64_t padded_source(int mode, int64_t q, int64_t lo, int64_t len)
{
    int64_t p = q - lo;
    if (mode == 0) { /* reflect */
        return p < 0 ? -p : p >= len ? 2 * (len - 1) - p : p;
    }
    if (mode == 1) { /* replicate */
        return p < 0 ? 0 : p >= len ? len - 1 : p;
    }
    return ((p % len) + len) % len; /* circular */
}

/* input padded along its last npad / 2 dims (pad lists them last dim first, as F.pad) by one
 * index_select per dim, so autograd records the gather and its deterministic index_add backward. */
static PyObject *conv_pad(CtTensorObject *input, int npad, const int64_t *pad, int mode)
{
    int dims = npad / 2;
    char is[256];
    ct_format_sizes(is, sizeof(is), input->ndim, input->sizes);
    if (npad % 2 != 0 || dims > input->ndim || dims < 1 || dims > 3) {
        PyErr_Format(PyExc_NotImplementedError, "Padding size %d is not supported for %dD input tensor.", npad,
                     input->ndim);
        return NULL;
    }
    for (int k = 0; k < dims; k++) { /* the last dim first, as PyTorch checks */
        int d = input->ndim - 1 - k;
        int64_t len = input->sizes[d], lo = pad[2 * k], hi = pad[2 * k + 1];
        if (mode == 0 && (lo >= len || hi >= len)) {
            PyErr_Format(PyExc_RuntimeError,
                         "Argument #%d: Padding size should be less than the corresponding input dimension, but got: "
                         "padding (%lld, %lld) at dimension %d of input %s",
                         4 + 2 * k, (long long)lo, (long long)hi, d, is);
            return NULL;
        }
        if (mode == 2 && (lo > len || hi > len)) {
            PyErr_SetString(PyExc_RuntimeError, "Padding value causes wrapping around more than once.");
            return NULL;
        }
        if (len == 0 || lo < 0 || hi < 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and other non-zero "
                         "dimensions for input, but got: %s",
                         dims + 1, dims + 2, is);
            return NULL;
        }
    }
    PyObject *x = Py_NewRef((PyObject *)input);
    for (int k = 0; k < dims; k++) {
        int d = input->ndim - 1 - k;
        int64_t len = input->sizes[d], lo = pad[2 * k], n = len + lo + pad[2 * k + 1];
        CtTensorObject *idx = ct_empty(1, &n, CT_I64, ct_cpu()), *moved = NULL;
        PyObject *dim = PyLong_FromLong(d), *next = NULL;
        if (idx != NULL) {
            for (int64_t q = 0; q < n; q++) {
                ((int64_t *)ct_data(idx))[q] = padded_source(mode, q, lo, len);
            }
            moved = ct_to(idx, CT_I64, ct_device_of(input), false);
        }
        if (moved != NULL && dim != NULL) {
            PyObject *args[3] = {x, dim, (PyObject *)moved};
            next = ct_op("index_select", args, 3, NULL);
        }
        Py_XDECREF(idx);
        Py_XDECREF(moved);
        Py_XDECREF(dim);
        Py_SETREF(x, next);
        if (x == NULL) {
            return NULL;
        }
    }
    return x;
}

PyDoc_STRVAR(conv_pad_doc, "_conv_pad(input, pad, mode) -> Tensor: nn.Conv's padding_mode ('reflect', 'replicate' or "
                           "'circular') applied to the last len(pad) // 2 dims (pad as F.pad's, last dim first)");
static PyObject *py_conv_pad(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "pad", "mode", NULL};
    PyObject *a[3];
    int64_t pad[CT_MAX_DIMS];
    if (ct_parse_args("_conv_pad", args, nargs, kwnames, names, 3, a) < 0 ||
        check_tensor("_conv_pad", "input", 1, a[0], false) < 0) {
        return NULL;
    }
    int npad = parse_int_list("_conv_pad", "pad", a[1], 1, 0, pad);
    const char *mode = PyUnicode_Check(a[2]) ? PyUnicode_AsUTF8(a[2]) : NULL;
    if (npad < 0 || (mode == NULL && PyErr_Occurred())) {
        return NULL;
    }
    static const char *const modes[] = {"reflect", "replicate", "circular"};
    for (int m = 0; mode != NULL && m < 3; m++) {
        if (strcmp(mode, modes[m]) == 0) {
            return conv_pad(CT_TENSOR(a[0]), npad, pad, m);
        }
    }
    PyErr_SetString(PyExc_ValueError, "_conv_pad: mode must be 'reflect', 'replicate' or 'circular'");
    return NULL;
}

PyMethodDef ct_conv_module_methods[] = {
    {"conv1d", CT_FASTCALL(py_conv1d), CT_METH_FK, conv1d_doc},
    {"conv2d", CT_FASTCALL(py_conv2d), CT_METH_FK, conv2d_doc},
    {"conv3d", CT_FASTCALL(py_conv3d), CT_METH_FK, conv3d_doc},
    {"_convolution_backward", CT_FASTCALL(py_conv_backward), CT_METH_FK, conv_backward_doc},
    {"_conv_pad", CT_FASTCALL(py_conv_pad), CT_METH_FK, conv_pad_doc},
    {"conv_transpose1d", CT_FASTCALL(py_conv_transpose1d), CT_METH_FK, conv_transpose1d_doc},
    {"conv_transpose2d", CT_FASTCALL(py_conv_transpose2d), CT_METH_FK, conv_transpose2d_doc},
    {"conv_transpose3d", CT_FASTCALL(py_conv_transpose3d), CT_METH_FK, conv_transpose3d_doc},
    {"_conv_transpose_backward", CT_FASTCALL(py_conv_transpose_backward), CT_METH_FK, conv_transpose_backward_doc},
    {"im2col", CT_FASTCALL(py_im2col), CT_METH_FK, im2col_doc},
    {"col2im", CT_FASTCALL(py_col2im), CT_METH_FK, col2im_doc},
    {NULL},
};
PyMethodDef ct_conv_tensor_methods[] = {{NULL}};
PyType_Slot ct_conv_tensor_slots[] = {{0, NULL}};

/* ====================================================================================================
 * backward formula: conv1d / conv2d (input, weight, bias, stride, padding, dilation, groups)
 * ==================================================================================================== */
const char *ct_conv_node_name(PyObject *const *norm)
{
    if (norm[0] != NULL && norm[1] != NULL && CtTensor_Check(norm[0]) && CtTensor_Check(norm[1]) &&
        CT_TENSOR(norm[0])->ndim + 1 == CT_TENSOR(norm[1])->ndim) {
        return "SqueezeBackward1";
    }
    return "ConvolutionBackward0";
}

/* One node's gradients through the backward op `op`: (grad, input, weight, the nparams parameters saved
 * as arguments 3.., mask), the parameters packed in one tuple when packed. */
static int conv_bw_via(CtNodeObject *n, PyObject *const *g, PyObject **gi, const char *op, int nparams, bool packed)
{
    PyObject *input = (PyObject *)ct_node_tensor(n, 0);
    PyObject *weight = (PyObject *)ct_node_tensor(n, 1);
    if (input == NULL || weight == NULL) {
        return -1;
    }
    int64_t mask = 0;
    for (int e = 0; e < 3; e++) {
        mask |= n->edge_nodes[e] != NULL ? (int64_t)1 << e : 0;
    }
    PyObject *params[5] = {Py_None, Py_None, Py_None, Py_None, Py_None};
    for (int i = 0; i < nparams; i++) {
        if (3 + i < n->nargs && n->args[3 + i] != NULL) {
            params[i] = n->args[3 + i];
        }
    }
    PyObject *mask_obj = PyLong_FromLongLong(mask), *tuple = NULL, *res = NULL;
    if (mask_obj != NULL && packed && (tuple = PyTuple_Pack(5, params[0], params[1], params[2], params[3], params[4])) != NULL) {
        PyObject *args[5] = {g[0], input, weight, tuple, mask_obj};
        res = ct_op(op, args, 5, NULL);
    } else if (mask_obj != NULL && !packed) {
        PyObject *args[8] = {g[0], input, weight, params[0], params[1], params[2], params[3], mask_obj};
        res = ct_op(op, args, 8, NULL);
    }
    Py_XDECREF(mask_obj);
    Py_XDECREF(tuple);
    if (res == NULL) {
        return -1;
    }
    int rc = 0;
    for (int e = 0; e < 3 && rc == 0; e++) {
        PyObject *v = PyTuple_GET_ITEM(res, e);
        if (n->edge_nodes[e] != NULL && v != Py_None && (gi[e] = ct_fit_grad(v, &n->meta[e])) == NULL) {
            rc = -1;
        }
    }
    Py_DECREF(res);
    return rc;
}

int ct_conv_bw(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return conv_bw_via(n, g, gi, "_convolution_backward", 4, false);
}

/* conv_transpose1d / conv_transpose2d (input, weight, bias, stride, padding, output_padding, groups,
 * dilation) */
int ct_conv_transpose_bw(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return conv_bw_via(n, g, gi, "_conv_transpose_backward", 5, true);
}

/* im2col: (input, kernel_size, dilation, padding, stride): its adjoint col2im folds the gradient back */
int ct_conv_bw_im2col(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (g[0] == NULL || n->edge_nodes[0] == NULL) {
        return 0;
    }
    const CtTensorMeta *m = &n->meta[0];
    PyObject *size = Py_BuildValue("(LL)", (long long)m->sizes[m->ndim - 2], (long long)m->sizes[m->ndim - 1]);
    if (size == NULL) {
        return -1;
    }
    PyObject *args[6] = {g[0], size, n->args[1], Py_None, Py_None, Py_None};
    for (int i = 2; i < 5 && i < n->nargs; i++) {
        args[i + 1] = n->args[i] != NULL ? n->args[i] : Py_None;
    }
    PyObject *r = ct_op("col2im", args, 6, NULL);
    Py_DECREF(size);
    gi[0] = r != NULL ? ct_fit_grad(r, m) : NULL;
    Py_XDECREF(r);
    return gi[0] != NULL ? 0 : -1;
}

/* col2im: (input, output_size, kernel_size, dilation, padding, stride): its adjoint im2col unfolds the
 * gradient */
int ct_conv_bw_col2im(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (g[0] == NULL || n->edge_nodes[0] == NULL) {
        return 0;
    }
    PyObject *args[5] = {g[0], n->args[2], Py_None, Py_None, Py_None};
    for (int i = 3; i < 6 && i < n->nargs; i++) {
        args[i - 1] = n->args[i] != NULL ? n->args[i] : Py_None;
    }
    PyObject *r = ct_op("im2col", args, 5, NULL);
    gi[0] = r != NULL ? ct_fit_grad(r, &n->meta[0]) : NULL;
    Py_XDECREF(r);
    return gi[0] != NULL ? 0 : -1;
}

/* ====================================================================================================
 * double backward: _convolution_backward / _conv_transpose_backward (grad, input, weight, params..., mask)
 * -> (grad_input, grad_weight, grad_bias). The (transposed) convolution F(x, W) is bilinear, and
 * grad_input = F_x^T grad (W fixed), grad_weight = F_W^T grad (x fixed), grad_bias = grad summed over
 * every dim but the channels. With ggI, ggW, ggB the gradients of those three outputs:
 *   d/dgrad   = F(ggI, W) + F(x, ggW) + ggB (broadcast over the channels)
 *   d/dinput  = the backward op's grad_input of (grad, x, ggW)
 *   d/dweight = the backward op's grad_weight of (grad, ggI, W)
 * all recording ops (the forward and the backward op itself), so every further order works too. With
 * create_graph off nothing here runs: the backward op is the fused first-order path.
 * ==================================================================================================== */
/* The forward op (conv{d} / conv_transpose{d}) on (x, w), no bias, with the node's parameters: saved
 * args 3.. (conv: stride, padding, dilation, groups) or the tuple in arg 3 (transposed: stride, padding,
 * output_padding, groups, dilation), None meaning the default. New reference or NULL. */
static PyObject *conv_bw_forward(CtNodeObject *n, bool transposed, int fdim, PyObject *x, PyObject *w)
{
    static const char *const names[2][4] = {{NULL, "conv1d", "conv2d", "conv3d"},
                                            {NULL, "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}};
    static const long defaults[2][5] = {{1, 0, 1, 1, 0}, {1, 0, 0, 1, 1}};
    int np = transposed ? 5 : 4;
    PyObject *args[8] = {x, w, Py_None, NULL, NULL, NULL, NULL, NULL}, *res = NULL;
    PyObject *packed = transposed && n->nargs > 3 ? n->args[3] : NULL;
    if (transposed && (packed == NULL || !PyTuple_Check(packed) || PyTuple_GET_SIZE(packed) != 5)) {
        PyErr_SetString(PyExc_RuntimeError, "_conv_transpose_backward: saved params are not a tuple of 5");
        return NULL;
    }
    for (int i = 0; i < np; i++) {
        PyObject *v = transposed ? PyTuple_GET_ITEM(packed, i) : 3 + i < n->nargs ? n->args[3 + i] : NULL;
        if ((args[3 + i] = v != NULL && v != Py_None ? Py_NewRef(v) : PyLong_FromLong(defaults[transposed][i])) ==
            NULL) {
            goto done;
        }
    }
    same_warning_muted++;
    res = ct_op(names[transposed][fdim], args, (size_t)(3 + np), NULL);
    same_warning_muted--;
done:
    for (int i = 0; i < np; i++) {
        Py_XDECREF(args[3 + i]);
    }
    return res;
}

/* Output `which` (0: grad_input, 1: grad_weight) of the node's backward op on (grad, x, w) with the
 * node's saved parameters. New reference or NULL. */
static PyObject *conv_bw_again(CtNodeObject *n, bool transposed, PyObject *grad, PyObject *x, PyObject *w, int which)
{
    PyObject *mask = PyLong_FromLong(1L << which);
    if (mask == NULL) {
        return NULL;
    }
    int np = transposed ? 1 : 4;
    PyObject *args[8] = {grad, x, w, Py_None, Py_None, Py_None, Py_None, Py_None};
    for (int i = 0; i < np; i++) {
        if (3 + i < n->nargs && n->args[3 + i] != NULL) {
            args[3 + i] = n->args[3 + i];
        }
    }
    args[3 + np] = mask;
    PyObject *res = ct_op(n->formula->op, args, (size_t)(4 + np), NULL);
    Py_DECREF(mask);
    PyObject *r = res != NULL ? Py_NewRef(PyTuple_GET_ITEM(res, which)) : NULL;
    Py_XDECREF(res);
    return r;
}

/* *acc += term (both owned; term consumed). 0 or -1. */
static int conv_bw_accumulate(PyObject **acc, PyObject *term)
{
    if (term == NULL) {
        return -1;
    }
    if (*acc == NULL) {
        *acc = term;
        return 0;
    }
    PyObject *sum = PyNumber_Add(*acc, term);
    Py_DECREF(term);
    Py_SETREF(*acc, sum);
    return sum != NULL ? 0 : -1;
}

/* ggB as a (C, 1, ..., 1) tensor broadcast to grad's shape m (channels at dim 1, or 0 when unbatched). */
static PyObject *conv_bw_bias_term(PyObject *ggb, int fdim, const CtTensorMeta *m)
{
    int64_t sizes[4] = {CT_TENSOR(ggb)->sizes[0], 1, 1, 1};
    PyObject *shape = ct_size_object(fdim + 1, sizes), *full = ct_size_object(m->ndim, m->sizes), *r = NULL;
    PyObject *v = shape != NULL && full != NULL ? ct_call_method(ggb, "reshape", "(O)", shape) : NULL;
    if (v != NULL) {
        r = ct_call_method(v, "expand", "(O)", full);
    }
    Py_XDECREF(shape);
    Py_XDECREF(full);
    Py_XDECREF(v);
    return r;
}

int ct_conv_bw_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    bool transposed = strcmp(n->formula->op, "_conv_transpose_backward") == 0;
    PyObject *grad = (PyObject *)ct_node_tensor(n, 0), *x = (PyObject *)ct_node_tensor(n, 1);
    PyObject *w = (PyObject *)ct_node_tensor(n, 2);
    if (grad == NULL || x == NULL || w == NULL) {
        return -1;
    }
    int fdim = CT_TENSOR(w)->ndim - 2;
    PyObject *ggi = g[0], *ggw = g[1], *ggb = g[2], *acc = NULL, *r = NULL;
    int rc = -1;
    if (n->edge_nodes[0] != NULL && (ggi != NULL || ggw != NULL || ggb != NULL)) {
        if ((ggi != NULL && conv_bw_accumulate(&acc, conv_bw_forward(n, transposed, fdim, ggi, w)) < 0) ||
            (ggw != NULL && conv_bw_accumulate(&acc, conv_bw_forward(n, transposed, fdim, x, ggw)) < 0) ||
            (ggb != NULL && conv_bw_accumulate(&acc, conv_bw_bias_term(ggb, fdim, &n->meta[0])) < 0) ||
            (acc != NULL && (gi[0] = ct_fit_grad(acc, &n->meta[0])) == NULL)) {
            goto done;
        }
    }
    if (n->edge_nodes[1] != NULL && ggw != NULL) {
        if ((r = conv_bw_again(n, transposed, grad, x, ggw, 0)) == NULL || (gi[1] = ct_fit_grad(r, &n->meta[1])) == NULL) {
            goto done;
        }
        Py_CLEAR(r);
    }
    if (n->edge_nodes[2] != NULL && ggi != NULL) {
        if ((r = conv_bw_again(n, transposed, grad, ggi, w, 1)) == NULL || (gi[2] = ct_fit_grad(r, &n->meta[2])) == NULL) {
            goto done;
        }
    }
    rc = 0;
done:
    Py_XDECREF(acc);
    Py_XDECREF(r);
    return rc;
}
