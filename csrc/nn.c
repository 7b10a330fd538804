/* nn.c: the nn op family (see nn.h): linear, cross-entropy / NLL, the pointwise losses, layer
 * norm, embedding and leaky_relu. Each op is a device-neutral front end (argument parsing,
 * shape/dtype checks with PyTorch's messages, dense operands) that calls the device's
 * struct CtNNKernels, followed by the CPU kernels and the Python entry points in ctorch._C.
 * The backward functions that autograd_formulas.c lists for these ops are at the end. */
#include "nn.h"
#include "nn_math.h"
#include "conv.h"
#include "args.h"
#include "autograd.h"
#include "autograd_arena.h"
#include "blas_cpu.h"
#include "device.h"
#include "dtype.h"
#include "iter.h"
#include "parallel.h"
#include "pool.h"
#include "upsample.h"
#include "registry.h"
#include "tensor.h"
#include <math.h>
#include <string.h>

/* --- helpers ------------------------------------------------------------------------------------------ */
/* The nn kernels of the device t lives on; NULL with an exception set. Borrowed. */
static const struct CtNNKernels *nn_kernels(CtDevice device)
{
    const CtDeviceOps *ops = ct_device_ops(device);
    if (ops == NULL) {
        return NULL;
    }
    if (ops->nn == NULL) {
        PyErr_Format(PyExc_NotImplementedError, "ctorch: nn kernels are not available on %s", ops->name);
        return NULL;
    }
    return ops->nn;
}

static int check_tensor_arg(const char *fname, const char *argname, int pos, PyObject *obj, bool optional)
{
    if (obj == NULL || (optional && obj == Py_None)) {
        return 0;
    }
    if (!CtTensor_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname, argname, pos,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    return 0;
}

static CtTensorObject *tensor_or_null(PyObject *obj)
{
    return obj == NULL || obj == Py_None ? NULL : CT_TENSOR(obj);
}

/* Same-shape check used by the losses: true when t's shape equals ndim/sizes. */
static bool same_shape(const CtTensorObject *a, const CtTensorObject *b)
{
    return a->ndim == b->ndim && memcmp(a->sizes, b->sizes, sizeof(int64_t) * a->ndim) == 0;
}

/* A dense tensor of `dtype` holding t broadcast to shape (ndim, sizes) on t's device: t itself
 * when it already is exactly that, else a copy. New reference. */
static CtTensorObject *dense_as(CtTensorObject *t, int ndim, const int64_t *sizes, CtDType dtype)
{
    if (t->dtype == dtype && t->ndim == ndim && memcmp(t->sizes, sizes, sizeof(int64_t) * ndim) == 0 &&
        ct_is_contiguous(t)) {
        return (CtTensorObject *)Py_NewRef(t);
    }
    CtTensorObject *out = ct_empty(ndim, sizes, dtype, ct_device_of(t));
    if (out == NULL) {
        return NULL;
    }
    if (ct_copy_(out, t) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

static CtTensorObject *dense(CtTensorObject *t, CtDType dtype) { return dense_as(t, t->ndim, t->sizes, dtype); }

static int parse_reduction(PyObject *obj, int *out)
{
    int64_t r = CT_REDUCTION_MEAN;
    if (ct_arg_int64(obj, &r) < 0) {
        return -1;
    }
    if (r < 0 || r > 2) {
        PyErr_Format(PyExc_ValueError, "%lld is not a valid value for reduction", (long long)r);
        return -1;
    }
    *out = (int)r;
    return 0;
}

static void format_shape(char *buf, size_t n, const CtTensorObject *t) { ct_format_sizes(buf, n, t->ndim, t->sizes); }

/* ====================================================================================================
 * linear
 * ==================================================================================================== */
/* The GEMM roles of a 2-D operand: a dense row-major matrix (trans = false, ld = row stride) or
 * the transpose of one (trans = true). Returns false when neither holds (the caller copies). */
static bool gemm_layout(const CtTensorObject *t, int64_t *ld, bool *trans)
{
    int64_t rows = t->sizes[0], cols = t->sizes[1];
    int64_t s0 = t->strides[0], s1 = t->strides[1];
    if ((s1 == 1 || cols <= 1) && s0 >= (cols > 1 ? cols : 1)) {
        *ld = s0;
        *trans = false;
        return true;
    }
    if ((s0 == 1 || rows <= 1) && s1 >= (rows > 1 ? rows : 1)) {
        *ld = s1;
        *trans = true;
        return true;
    }
    return false;
}

/* Collapses dims 0..ndim-2 of t into one of stride *stride (size-1 dims are ignored). False when
 * they do not collapse. *stride is -1 when every leading dim has size 1. */
static bool collapse_leading(const CtTensorObject *t, int64_t *stride)
{
    bool have = false;
    int64_t inner_stride = 0, inner_size = 0;
    *stride = -1;
    for (int i = t->ndim - 2; i >= 0; i--) {
        if (t->sizes[i] == 1) {
            continue;
        }
        if (!have) {
            *stride = t->strides[i];
            have = true;
        } else if (t->strides[i] != inner_stride * inner_size) {
            return false;
        }
        inner_stride = t->strides[i];
        inner_size = t->sizes[i];
    }
    return true;
}

static const char *cpp_scalar_name(CtDType d)
{
    switch (d) {
    case CT_F32:
        return "float";
    case CT_F64:
        return "double";
    case CT_F16:
        return "c10::Half";
    case CT_BF16:
        return "c10::BFloat16";
    case CT_I64:
        return "long int";
    case CT_I32:
        return "int";
    default:
        return ct_dtype_info[d].name;
    }
}

CtTensorObject *ct_linear(CtTensorObject *input, CtTensorObject *weight, CtTensorObject *bias)
{
    CtTensorObject *x2 = NULL, *w2 = NULL, *b2 = NULL, *out = NULL, *result = NULL;
    if (input->ndim == 0 || weight->ndim == 0) {
        PyErr_Format(PyExc_RuntimeError, "both arguments to linear need to be at least 1D, but they are %dD and %dD",
                     input->ndim, weight->ndim);
        return NULL;
    }
    if (weight->ndim > 2) {
        PyErr_Format(PyExc_RuntimeError, "linear(): weight must be 1-D or 2-D, got %d-D", weight->ndim);
        return NULL;
    }
    CtTensorObject *devs[3] = {input, weight, bias};
    CtDevice device;
    if (ct_check_same_device(bias ? 3 : 2, devs, false, &device) < 0) {
        return NULL;
    }
    int64_t K = input->sizes[input->ndim - 1];
    int64_t N = weight->ndim == 2 ? weight->sizes[0] : 1;
    int64_t Kw = weight->sizes[weight->ndim - 1];
    int64_t M = 1;
    for (int i = 0; i < input->ndim - 1; i++) {
        M *= input->sizes[i];
    }
    /* PyTorch's order: addmm (with a bias) checks dtypes before shapes, mm the other way round */
    if (bias != NULL) {
        if (bias->dtype != weight->dtype) {
            PyErr_Format(PyExc_RuntimeError, "self and mat2 must have the same dtype, but got %s and %s",
                         ct_scalar_type_name(bias->dtype), ct_scalar_type_name(weight->dtype));
            return NULL;
        }
        if (input->dtype != weight->dtype) {
            PyErr_Format(PyExc_RuntimeError, "mat1 and mat2 must have the same dtype, but got %s and %s",
                         ct_scalar_type_name(input->dtype), ct_scalar_type_name(weight->dtype));
            return NULL;
        }
    }
    if (K != Kw) {
        PyErr_Format(PyExc_RuntimeError, "%s: mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                     bias ? "addmm" : "mm", (long long)M, (long long)K, (long long)Kw, (long long)N);
        return NULL;
    }
    if (input->dtype != weight->dtype) {
        PyErr_Format(PyExc_RuntimeError, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                     cpp_scalar_name(input->dtype), cpp_scalar_name(weight->dtype));
        return NULL;
    }
    int64_t bias_ld = 0;
    if (bias != NULL) {
        /* The bias must expand to (M, N) as addmm's self does. */
        int64_t target[2] = {M, N};
        char sb[128]; /* the bias's shape, formatted only for an error */
        if (bias->ndim > 2) {
            format_shape(sb, sizeof(sb), bias);
            PyErr_Format(PyExc_RuntimeError,
                         "expand(torch.FloatTensor{%s}, size=[%lld, %lld]): the number of sizes provided (2) must be "
                         "greater or equal to the number of dimensions in the tensor (%d)",
                         sb, (long long)M, (long long)N, bias->ndim);
            return NULL;
        }
        for (int i = bias->ndim - 1; i >= 0; i--) {
            int td = 2 - bias->ndim + i;
            if (bias->sizes[i] != target[td] && bias->sizes[i] != 1) {
                format_shape(sb, sizeof(sb), bias);
                PyErr_Format(PyExc_RuntimeError,
                             "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                             "non-singleton dimension %d.  Target sizes: [%lld, %lld].  Tensor sizes: %s",
                             (long long)target[td], (long long)bias->sizes[i], td, (long long)M, (long long)N, sb);
                return NULL;
            }
        }
        bool full = bias->ndim == 2 && bias->sizes[0] == M && M != 1;
        int64_t bs[2] = {full ? M : 1, N};
        if (full || bias->ndim < 2) {
            b2 = dense_as(bias, full ? 2 : 1, full ? bs : &bs[1], bias->dtype);
        } else { /* (1, N) or (1, 1): its one row, broadcast */
            CtTensorObject *row = ct_view_of(bias, 1, &bias->sizes[1], &bias->strides[1], bias->offset);
            b2 = row ? dense_as(row, 1, &bs[1], bias->dtype) : NULL;
            Py_XDECREF(row);
        }
        if (b2 == NULL) {
            return NULL;
        }
        bias_ld = full ? N : 0;
    }
    const struct CtNNKernels *k = nn_kernels(device);
    if (k == NULL) {
        goto done;
    }
    CtLinearDesc d = {.dtype = input->dtype, .device = device, .M = M, .N = N, .K = K};
    /* x as a (M, K) matrix: a view when its leading dims collapse, else a dense copy */
    int64_t xs[2] = {M, K}, xst[2];
    int64_t lead = -1;
    if (input->ndim == 1 || collapse_leading(input, &lead)) {
        xst[0] = lead >= 0 ? lead : (K > 1 ? K : 1);
        xst[1] = input->strides[input->ndim - 1];
        x2 = ct_view_of(input, 2, xs, xst, input->offset);
        if (x2 == NULL) {
            goto done;
        }
    }
    if (x2 == NULL || !gemm_layout(x2, &d.lda, &d.trans_x)) {
        Py_CLEAR(x2);
        CtTensorObject *c = dense(input, input->dtype);
        if (c == NULL) {
            goto done;
        }
        xst[0] = K > 1 ? K : 1;
        xst[1] = 1;
        x2 = ct_view_of(c, 2, xs, xst, c->offset);
        Py_DECREF(c);
        if (x2 == NULL) {
            goto done;
        }
        d.lda = xst[0];
        d.trans_x = false;
    }
    /* w as a (N, K) matrix */
    int64_t ws[2] = {N, K};
    int64_t wst[2] = {weight->ndim == 2 ? weight->strides[0] : (K > 1 ? K : 1), weight->strides[weight->ndim - 1]};
    w2 = ct_view_of(weight, 2, ws, wst, weight->offset);
    if (w2 == NULL) {
        goto done;
    }
    bool w_transposed; /* false: rows of w (N, K) are dense, so op(B) = w^T reads w with trans_b */
    if (!gemm_layout(w2, &d.ldw, &w_transposed)) {
        Py_SETREF(w2, dense(w2, w2->dtype));
        if (w2 == NULL) {
            goto done;
        }
        d.ldw = K > 1 ? K : 1;
        w_transposed = false;
    }
    d.trans_w = !w_transposed;
    d.x = ct_data(x2);
    d.w = ct_data(w2);
    d.bias = b2 != NULL ? ct_data(b2) : NULL;
    d.bias_ld = bias_ld;
    int64_t osz[CT_MAX_DIMS];
    int ond = input->ndim - 1 + (weight->ndim == 2 ? 1 : 0);
    for (int i = 0; i < input->ndim - 1; i++) {
        osz[i] = input->sizes[i];
    }
    if (weight->ndim == 2) {
        osz[ond - 1] = N;
    }
    out = ct_empty(ond, osz, input->dtype, device);
    if (out == NULL) {
        goto done;
    }
    d.out = ct_data(out);
    if (M > 0 && N > 0 && k->linear(&d) < 0) {
        goto done;
    }
    result = out;
    out = NULL;
done:
    Py_XDECREF(x2);
    Py_XDECREF(w2);
    Py_XDECREF(b2);
    Py_XDECREF(out);
    return result;
}

static int cpu_linear(const CtLinearDesc *d)
{
    size_t isz = ct_dtype_info[d->dtype].itemsize;
    double beta = 0.0;
    if (d->bias != NULL) {
        /* pre-fill every output row with the bias, then accumulate the product onto it */
        for (int64_t i = 0; i < d->M; i++) {
            memcpy((char *)d->out + (size_t)(i * d->N) * isz, (const char *)d->bias + (size_t)(i * d->bias_ld) * isz,
                   (size_t)d->N * isz);
        }
        beta = 1.0;
    }
    /* ct_cpu_gemm: C = op(A) @ op(B); A = x (trans when x^T is dense), B = w^T: B given as w (N, K)
     * rows dense -> trans_b = true. d->trans_w already says that. */
    return ct_cpu_gemm(d->dtype, d->trans_x, d->trans_w, d->M, d->N, d->K, 1.0, d->x, d->lda, d->w, d->ldw, beta,
                       d->out, d->N);
}

/* ====================================================================================================
 * cross-entropy and NLL
 * ==================================================================================================== */
static int64_t shape_numel(int ndim, const int64_t *sizes)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        n *= sizes[i];
    }
    return n;
}

/* The shared front end of cross_entropy (is_nll false) and nll_loss (is_nll true). */
static CtTensorObject *nll_forward(CtTensorObject *input, CtTensorObject *target, CtTensorObject *weight,
                                   int reduction, int64_t ignore_index, double label_smoothing, bool is_nll)
{
    CtTensorObject *x = NULL, *t = NULL, *w = NULL, *out = NULL, *result = NULL;
    char sa[160], sb[160];
    if (!ct_is_floating(input->dtype)) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'",
                     is_nll ? "nll_loss_out_frame" : "log_softmax_lastdim_kernel_impl", ct_scalar_type_name(input->dtype));
        return NULL;
    }
    if (input->ndim < 1) {
        PyErr_Format(PyExc_ValueError, "Expected 1 or more dimensions (got %d)", input->ndim);
        return NULL;
    }
    bool soft = !is_nll && same_shape(input, target);
    if (soft) {
        if (!ct_is_floating(target->dtype)) {
            PyErr_Format(PyExc_RuntimeError, "Expected floating point type for target with class probabilities, got %s",
                         ct_scalar_type_name(target->dtype));
            return NULL;
        }
        if (ignore_index >= 0) {
            PyErr_SetString(PyExc_RuntimeError, "ignore_index is not supported for floating point target");
            return NULL;
        }
    }
    if (!is_nll && label_smoothing > 1.0) {
        char num[64];
        snprintf(num, sizeof(num), "%g", label_smoothing); /* PyErr_Format has no %g */
        PyErr_Format(PyExc_RuntimeError, "label_smoothing must be between 0.0 and 1.0. Got: %s", num);
        return NULL;
    }
    if (label_smoothing < 0.0) {
        label_smoothing = 0.0; /* PyTorch applies smoothing only when it is positive */
    }
    int cdim = input->ndim == 1 ? 0 : 1;
    int64_t C = input->sizes[cdim];
    int64_t outer = input->ndim == 1 ? 1 : input->sizes[0];
    int64_t inner = input->ndim > 2 ? shape_numel(input->ndim - 2, input->sizes + 2) : 1;
    if (!soft) {
        if (input->ndim != 1 && (target->ndim == 0 || input->sizes[0] != target->sizes[0])) {
            PyErr_Format(PyExc_ValueError, "Expected input batch_size (%lld) to match target batch_size (%lld).",
                         (long long)input->sizes[0], (long long)(target->ndim ? target->sizes[0] : 1));
            return NULL;
        }
        if (input->ndim <= 2 && target->ndim > 1) {
            PyErr_SetString(PyExc_RuntimeError, "0D or 1D target tensor expected, multi-target not supported");
            return NULL;
        }
        if (input->ndim == 1 && target->ndim != 0) {
            format_shape(sa, sizeof(sa), input);
            format_shape(sb, sizeof(sb), target);
            PyErr_Format(PyExc_RuntimeError, "size mismatch (got input: %s, target: %s)", sa, sb);
            return NULL;
        }
        if (input->ndim == 4 && target->ndim != 3) { /* PyTorch's nll_loss2d, with its messages */
            PyErr_Format(PyExc_RuntimeError,
                         "only batches of spatial targets supported (3D tensors) but got targets of dimension: %d",
                         target->ndim);
            return NULL;
        }
        if (input->ndim > 2) {
            int64_t want[CT_MAX_DIMS];
            want[0] = input->sizes[0];
            for (int i = 2; i < input->ndim; i++) {
                want[i - 1] = input->sizes[i];
            }
            if (target->ndim != input->ndim - 1 || memcmp(want, target->sizes, sizeof(int64_t) * target->ndim) != 0) {
                ct_format_sizes(sa, sizeof(sa), input->ndim - 1, want);
                format_shape(sb, sizeof(sb), target);
                if (input->ndim == 4) {
                    format_shape(sa, sizeof(sa), input);
                    PyErr_Format(PyExc_RuntimeError, "size mismatch (got input: %s , target: %s", sa, sb);
                } else {
                    PyErr_Format(PyExc_RuntimeError, "Expected target size %s, got %s", sa, sb);
                }
                return NULL;
            }
        }
        if (target->dtype != CT_I64 && target->dtype != CT_U8) {
            PyErr_Format(PyExc_RuntimeError, "expected target dtype to be Long or Byte, but got %s",
                         ct_scalar_type_name(target->dtype));
            return NULL;
        }
    }
    if (weight != NULL) {
        if (ct_numel(weight) != C) {
            format_shape(sa, sizeof(sa), weight);
            PyErr_Format(PyExc_RuntimeError,
                         "weight tensor should be defined either for all %lld classes or no classes but got weight "
                         "tensor of shape: %s",
                         (long long)C, sa);
            return NULL;
        }
        if (weight->dtype != input->dtype) {
            PyErr_Format(PyExc_RuntimeError, "expected scalar type %s but found %s", ct_scalar_type_name(input->dtype),
                         ct_scalar_type_name(weight->dtype));
            return NULL;
        }
    }
    CtTensorObject *devs[3] = {input, target, weight};
    CtDevice device;
    if (ct_check_same_device(weight ? 3 : 2, devs, false, &device) < 0) {
        return NULL;
    }
    const struct CtNNKernels *k = nn_kernels(device);
    if (k == NULL) {
        return NULL;
    }
    x = dense(input, input->dtype);
    t = x ? dense(target, soft ? input->dtype : target->dtype) : NULL;
    if (t == NULL) {
        goto done;
    }
    if (weight != NULL) {
        int64_t c1 = C;
        if ((w = dense_as(weight, 1, &c1, input->dtype)) == NULL) {
            goto done;
        }
    }
    /* output: the input's shape without the class dim for 'none', else a scalar */
    int64_t osz[CT_MAX_DIMS];
    int ond = 0;
    if (reduction == CT_REDUCTION_NONE) {
        for (int i = 0; i < input->ndim; i++) {
            if (i != cdim) {
                osz[ond++] = input->sizes[i];
            }
        }
    }
    out = ct_empty(ond, osz, input->dtype, device);
    if (out == NULL) {
        goto done;
    }
    CtNLLDesc d = {
        .dtype = input->dtype, .device = device, .is_nll = is_nll, .soft = soft, .outer = outer, .classes = C,
        .inner = inner, .input = ct_data(x), .target = ct_data(t), .target_dtype = t->dtype,
        .weight = w ? ct_data(w) : NULL, .ignore_index = ignore_index, .label_smoothing = label_smoothing,
        .reduction = reduction, .out = ct_data(out),
    };
    if (k->nll(&d) < 0) {
        goto done;
    }
    if (d.bad_target) {
        PyErr_Format(PyExc_IndexError, "Target %lld is out of bounds.", (long long)d.bad_value);
        goto done;
    }
    result = out;
    out = NULL;
done:
    Py_XDECREF(x);
    Py_XDECREF(t);
    Py_XDECREF(w);
    Py_XDECREF(out);
    return result;
}

CtTensorObject *ct_cross_entropy(CtTensorObject *input, CtTensorObject *target, CtTensorObject *weight,
                                 int reduction, int64_t ignore_index, double label_smoothing)
{
    return nll_forward(input, target, weight, reduction, ignore_index, label_smoothing, false);
}

CtTensorObject *ct_nll_loss(CtTensorObject *input, CtTensorObject *target, CtTensorObject *weight, int reduction,
                            int64_t ignore_index)
{
    return nll_forward(input, target, weight, reduction, ignore_index, 0.0, true);
}

/* The backward of both: returns a new tuple (grad_input, grad_target or None). grad_target is
 * computed only for probability targets when want_target. */
static PyObject *nll_backward(CtTensorObject *grad, CtTensorObject *input, CtTensorObject *target,
                              CtTensorObject *weight, int reduction, int64_t ignore_index, double label_smoothing,
                              bool is_nll, bool want_target)
{
    CtTensorObject *x = NULL, *t = NULL, *w = NULL, *g = NULL, *gi = NULL, *gt = NULL;
    PyObject *result = NULL;
    bool soft = !is_nll && same_shape(input, target) && ct_is_floating(target->dtype);
    if (label_smoothing < 0.0) {
        label_smoothing = 0.0;
    }
    CtTensorObject *devs[4] = {grad, input, target, weight};
    CtDevice device;
    if (ct_check_same_device(weight ? 4 : 3, devs, false, &device) < 0) {
        return NULL;
    }
    const struct CtNNKernels *k = nn_kernels(device);
    if (k == NULL) {
        return NULL;
    }
    int cdim = input->ndim == 1 ? 0 : 1;
    int64_t C = input->sizes[cdim];
    int64_t outer = input->ndim == 1 ? 1 : input->sizes[0];
    int64_t inner = input->ndim > 2 ? shape_numel(input->ndim - 2, input->sizes + 2) : 1;
    x = dense(input, input->dtype);
    t = x ? dense(target, soft ? input->dtype : target->dtype) : NULL;
    g = t ? dense(grad, input->dtype) : NULL;
    if (g == NULL) {
        goto done;
    }
    if (ct_numel(g) != (reduction == CT_REDUCTION_NONE ? outer * inner : 1)) {
        PyErr_SetString(PyExc_RuntimeError, "nll_loss backward: grad_output has the wrong number of elements");
        goto done;
    }
    if (weight != NULL) {
        int64_t c1 = C;
        if ((w = dense_as(weight, 1, &c1, input->dtype)) == NULL) {
            goto done;
        }
    }
    gi = ct_empty(input->ndim, input->sizes, input->dtype, device);
    if (gi == NULL) {
        goto done;
    }
    if (soft && want_target) {
        gt = ct_empty(input->ndim, input->sizes, input->dtype, device);
        if (gt == NULL) {
            goto done;
        }
    }
    CtNLLDesc d = {
        .dtype = input->dtype, .device = device, .is_nll = is_nll, .soft = soft, .outer = outer, .classes = C,
        .inner = inner, .input = ct_data(x), .target = ct_data(t), .target_dtype = t->dtype,
        .weight = w ? ct_data(w) : NULL, .ignore_index = ignore_index, .label_smoothing = label_smoothing,
        .reduction = reduction, .grad_out = ct_data(g), .grad_input = ct_data(gi),
        .grad_target = gt ? ct_data(gt) : NULL,
    };
    if (k->nll_backward(&d) < 0) {
        goto done;
    }
    if (d.bad_target) {
        PyErr_Format(PyExc_IndexError, "Target %lld is out of bounds.", (long long)d.bad_value);
        goto done;
    }
    result = PyTuple_Pack(2, (PyObject *)gi, gt ? (PyObject *)gt : Py_None);
done:
    Py_XDECREF(x);
    Py_XDECREF(t);
    Py_XDECREF(w);
    Py_XDECREF(g);
    Py_XDECREF(gi);
    Py_XDECREF(gt);
    return result;
}

/* --- CPU kernels ----------------------------------------------------------------------------------- */
/* The CPU kernels compute in double: a row (or run) is widened into a scratch buffer with one
 * dtype switch per row, computed, and narrowed back, so that one body serves every float dtype. */
#define CT_NN_FLOAT_TYPES(X) X(F16) X(BF16) X(F32) X(F64)

static void load_row(CtDType dtype, const void *base, int64_t start, int64_t stride, int64_t n, double *out)
{
    switch (dtype) {
#define CT_LOAD_ROW(NAME)                                                                  \
    case CT_##NAME: {                                                                      \
        size_t isz = ct_dtype_info[CT_##NAME].itemsize;                                    \
        const char *p = (const char *)base + (size_t)start * isz;                          \
        for (int64_t i = 0; i < n; i++) {                                                  \
            out[i] = (double)CT_LOAD_##NAME(p + (size_t)(i * stride) * isz);               \
        }                                                                                  \
        break;                                                                             \
    }
        CT_NN_FLOAT_TYPES(CT_LOAD_ROW)
#undef CT_LOAD_ROW
    default:
        break;
    }
}

static void store_row(CtDType dtype, void *base, int64_t start, int64_t stride, int64_t n, const double *in)
{
    switch (dtype) {
#define CT_STORE_ROW(NAME)                                                                 \
    case CT_##NAME: {                                                                      \
        size_t isz = ct_dtype_info[CT_##NAME].itemsize;                                    \
        char *p = (char *)base + (size_t)start * isz;                                      \
        for (int64_t i = 0; i < n; i++) {                                                  \
            CT_STORE_##NAME(p + (size_t)(i * stride) * isz, in[i]);                        \
        }                                                                                  \
        break;                                                                             \
    }
        CT_NN_FLOAT_TYPES(CT_STORE_ROW)
#undef CT_STORE_ROW
    default:
        break;
    }
}

static double load_one(CtDType dtype, const void *base, int64_t i)
{
    double v = 0.0;
    load_row(dtype, base, i, 1, 1, &v);
    return v;
}

static void store_one(CtDType dtype, void *base, int64_t i, double v) { store_row(dtype, base, i, 1, 1, &v); }

static int64_t load_target(const CtNLLDesc *d, int64_t r)
{
    return d->target_dtype == CT_U8 ? (int64_t)((const uint8_t *)d->target)[r] : ((const int64_t *)d->target)[r];
}

typedef struct {
    CtNLLDesc *d;
    double *losses;  /* rows: the per-row losses (reductions) */
    double *weights; /* rows: w[t] of each row, 0 when ignored */
    double scale;    /* backward: the gradient scale for SUM/MEAN */
    double wsum;     /* sum of every class weight */
    int failed;      /* scratch allocation failed */
} NLLCtx;

/* logsumexp of a row of n values (NaN-propagating as PyTorch's log_softmax) */
static double row_logsumexp(const double *v, int64_t n)
{
    double m = -INFINITY;
    for (int64_t c = 0; c < n; c++) {
        if (v[c] > m || isnan(v[c])) {
            m = v[c];
        }
    }
    if (isinf(m)) {
        return m;
    }
    double s = 0.0;
    for (int64_t c = 0; c < n; c++) {
        s += exp(v[c] - m);
    }
    return m + log(s);
}

static void nll_forward_rows(int64_t begin, int64_t end, void *p)
{
    NLLCtx *cx = (NLLCtx *)p;
    const CtNLLDesc *d = cx->d;
    int64_t C = d->classes, inner = d->inner;
    double ls = d->label_smoothing;
    double *buf = malloc(sizeof(double) * (size_t)(3 * C + 1));
    if (buf == NULL) {
        cx->failed = 1;
        return;
    }
    double *x = buf, *w = buf + C, *y = buf + 2 * C;
    for (int64_t c = 0; c < C; c++) {
        w[c] = 1.0;
    }
    if (d->weight != NULL) {
        load_row(d->dtype, d->weight, 0, 1, C, w);
    }
    for (int64_t r = begin; r < end; r++) {
        int64_t base = (r / inner) * C * inner + r % inner;
        double loss = 0.0, wt = 1.0;
        if (!d->soft) {
            int64_t t = load_target(d, r);
            if (t == d->ignore_index) {
                wt = 0.0;
            } else if (d->is_nll) {
                wt = w[t];
                loss = -wt * load_one(d->dtype, d->input, base + t * inner);
            } else {
                load_row(d->dtype, d->input, base, inner, C, x);
                double lse = row_logsumexp(x, C);
                wt = w[t];
                loss = (1.0 - ls) * wt * (lse - x[t]);
                if (ls > 0.0) {
                    double smooth = 0.0;
                    for (int64_t c = 0; c < C; c++) {
                        smooth += w[c] * (lse - x[c]);
                    }
                    loss += ls / (double)C * smooth;
                }
            }
        } else {
            load_row(d->dtype, d->input, base, inner, C, x);
            load_row(d->dtype, d->target, base, inner, C, y);
            double lse = row_logsumexp(x, C);
            for (int64_t c = 0; c < C; c++) {
                double yc = ls > 0.0 ? y[c] * (1.0 - ls) + ls / (double)C : y[c];
                loss += w[c] * yc * (lse - x[c]);
            }
        }
        if (d->reduction == CT_REDUCTION_NONE) {
            store_one(d->dtype, d->out, r, loss);
        } else {
            cx->losses[r] = loss;
            cx->weights[r] = wt;
        }
    }
    free(buf);
}

static void nll_backward_rows(int64_t begin, int64_t end, void *p)
{
    NLLCtx *cx = (NLLCtx *)p;
    const CtNLLDesc *d = cx->d;
    int64_t C = d->classes, inner = d->inner;
    double ls = d->label_smoothing;
    double *buf = malloc(sizeof(double) * (size_t)(4 * C + 1));
    if (buf == NULL) {
        cx->failed = 1;
        return;
    }
    double *x = buf, *w = buf + C, *y = buf + 2 * C, *gx = buf + 3 * C;
    for (int64_t c = 0; c < C; c++) {
        w[c] = 1.0;
    }
    if (d->weight != NULL) {
        load_row(d->dtype, d->weight, 0, 1, C, w);
    }
    for (int64_t r = begin; r < end; r++) {
        int64_t base = (r / inner) * C * inner + r % inner;
        double s = d->reduction == CT_REDUCTION_NONE ? load_one(d->dtype, d->grad_out, r) : cx->scale;
        for (int64_t c = 0; c < C; c++) {
            gx[c] = 0.0;
        }
        if (!d->soft) {
            int64_t t = load_target(d, r);
            if (t != d->ignore_index) {
                double wt = w[t];
                if (d->is_nll) {
                    gx[t] = -s * wt;
                } else {
                    load_row(d->dtype, d->input, base, inner, C, x);
                    double lse = row_logsumexp(x, C);
                    for (int64_t c = 0; c < C; c++) {
                        double pc = exp(x[c] - lse);
                        double gc = (1.0 - ls) * wt * (pc - (c == t ? 1.0 : 0.0));
                        if (ls > 0.0) {
                            gc += ls / (double)C * (pc * cx->wsum - w[c]);
                        }
                        gx[c] = s * gc;
                    }
                }
            }
        } else {
            load_row(d->dtype, d->input, base, inner, C, x);
            load_row(d->dtype, d->target, base, inner, C, y);
            double lse = row_logsumexp(x, C);
            double wy = 0.0;
            for (int64_t c = 0; c < C; c++) {
                y[c] = ls > 0.0 ? y[c] * (1.0 - ls) + ls / (double)C : y[c];
                wy += w[c] * y[c];
            }
            for (int64_t c = 0; c < C; c++) {
                gx[c] = s * (exp(x[c] - lse) * wy - w[c] * y[c]);
            }
            if (d->grad_target != NULL) {
                for (int64_t c = 0; c < C; c++) {
                    y[c] = -s * (1.0 - ls) * w[c] * (x[c] - lse);
                }
                store_row(d->dtype, d->grad_target, base, inner, C, y);
            }
        }
        store_row(d->dtype, d->grad_input, base, inner, C, gx);
    }
    free(buf);
}

/* Serial pre-pass: range check of class-index targets, the sum of class weights and the
 * mean's denominator. Returns false (with d->bad_target set) on an out-of-range target. */
static bool nll_prepass(CtNLLDesc *d, double *denom, double *wsum)
{
    int64_t rows = d->outer * d->inner;
    *wsum = (double)d->classes;
    if (d->weight != NULL) {
        *wsum = 0.0;
        for (int64_t c = 0; c < d->classes; c++) {
            *wsum += load_one(d->dtype, d->weight, c);
        }
    }
    *denom = (double)rows;
    if (d->soft) {
        return true;
    }
    *denom = 0.0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t t = load_target(d, r);
        if (t == d->ignore_index) {
            continue;
        }
        if (t < 0 || t >= d->classes) {
            d->bad_target = 1;
            d->bad_value = t;
            return false;
        }
        *denom += d->weight != NULL ? load_one(d->dtype, d->weight, t) : 1.0;
    }
    return true;
}

static int64_t nll_grain(const CtNLLDesc *d) { return d->classes >= 4096 ? 1 : 4096 / d->classes + 1; }

static int cpu_nll(CtNLLDesc *d)
{
    int64_t rows = d->outer * d->inner;
    double denom, wsum;
    if (!nll_prepass(d, &denom, &wsum)) {
        return 0;
    }
    NLLCtx cx = {d, NULL, NULL, 0.0, wsum, 0};
    if (d->reduction != CT_REDUCTION_NONE) {
        cx.losses = PyMem_RawMalloc(sizeof(double) * (size_t)(2 * rows + 1));
        if (cx.losses == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        cx.weights = cx.losses + rows;
    }
    ct_parallel_for(rows, nll_grain(d), nll_forward_rows, &cx);
    if (cx.failed) {
        PyMem_RawFree(cx.losses);
        PyErr_NoMemory();
        return -1;
    }
    if (d->reduction != CT_REDUCTION_NONE) {
        double total = 0.0;
        for (int64_t r = 0; r < rows; r++) {
            total += cx.losses[r];
        }
        /* 0 / 0 is NaN, as PyTorch's mean over no (or only ignored) rows */
        store_one(d->dtype, d->out, 0, d->reduction == CT_REDUCTION_MEAN ? total / denom : total);
        PyMem_RawFree(cx.losses);
    }
    return 0;
}

static int cpu_nll_backward(CtNLLDesc *d)
{
    int64_t rows = d->outer * d->inner;
    double denom, wsum;
    if (!nll_prepass(d, &denom, &wsum)) {
        return 0;
    }
    NLLCtx cx = {d, NULL, NULL, 0.0, wsum, 0};
    if (d->reduction != CT_REDUCTION_NONE) {
        cx.scale = load_one(d->dtype, d->grad_out, 0);
        if (d->reduction == CT_REDUCTION_MEAN) {
            cx.scale /= denom;
        }
    }
    ct_parallel_for(rows, nll_grain(d), nll_backward_rows, &cx);
    if (cx.failed) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* ====================================================================================================
 * pointwise losses
 * ==================================================================================================== */
static const char *loss_kernel_name(CtPointwiseLoss kind)
{
    static const char *names[] = {"mse_cpu", "abs_cpu", "smooth_l1_cpu", "binary_cross_entropy",
                                  "binary_cross_entropy_with_logits"};
    return names[kind];
}

/* Broadcast shape and compute dtype of a pointwise loss; dense operands in *ops (new references:
 * input, target, weight, pos_weight; NULL where absent). Returns ndim, or -1. */
static int pointwise_operands(CtPointwiseLoss kind, CtTensorObject *input, CtTensorObject *target,
                              CtTensorObject *weight, CtTensorObject *pos_weight, int64_t *shape, CtDType *dtype,
                              CtDevice *device, CtTensorObject **ops)
{
    CtDType dt = kind <= CT_LOSS_SMOOTH_L1 ? ct_promote_types(input->dtype, target->dtype) : input->dtype;
    if (!ct_is_floating(dt)) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", loss_kernel_name(kind),
                     ct_scalar_type_name(dt));
        return -1;
    }
    CtTensorObject *devs[4] = {input, target, weight, pos_weight};
    int n = 0;
    CtTensorObject *present[4];
    for (int i = 0; i < 4; i++) {
        if (devs[i] != NULL) {
            present[n++] = devs[i];
        }
    }
    if (ct_check_same_device(n, present, false, device) < 0) {
        return -1;
    }
    int nd = ct_broadcast_shapes(input->ndim, input->sizes, target->ndim, target->sizes, shape);
    if (nd < 0) {
        return -1;
    }
    /* weight and pos_weight broadcast to the loss's shape (they do not change it) */
    for (int i = 2; i < 4; i++) {
        int64_t tmp[CT_MAX_DIMS];
        if (devs[i] != NULL) {
            int m = ct_broadcast_shapes(nd, shape, devs[i]->ndim, devs[i]->sizes, tmp);
            if (m < 0) {
                return -1;
            }
            if (m != nd || memcmp(tmp, shape, sizeof(int64_t) * nd) != 0) {
                char sa[160], sb[160];
                ct_format_sizes(sa, sizeof(sa), nd, shape);
                format_shape(sb, sizeof(sb), devs[i]);
                PyErr_Format(PyExc_RuntimeError, "%s of shape %s cannot be broadcast to the loss's shape %s",
                             i == 2 ? "weight" : "pos_weight", sb, sa);
                return -1;
            }
        }
    }
    for (int i = 0; i < 4; i++) {
        ops[i] = NULL;
    }
    for (int i = 0; i < 4; i++) {
        if (devs[i] != NULL && (ops[i] = dense_as(devs[i], nd, shape, dt)) == NULL) {
            for (int j = 0; j < i; j++) {
                Py_CLEAR(ops[j]);
            }
            return -1;
        }
    }
    *dtype = dt;
    return nd;
}

static CtTensorObject *pointwise_loss_forward(CtPointwiseLoss kind, CtTensorObject *input, CtTensorObject *target,
                                              CtTensorObject *weight, CtTensorObject *pos_weight, int reduction,
                                              double beta)
{
    CtTensorObject *ops[4] = {NULL, NULL, NULL, NULL}, *out = NULL, *result = NULL;
    int64_t shape[CT_MAX_DIMS];
    CtDType dt;
    CtDevice device;
    if (kind == CT_LOSS_SMOOTH_L1 && beta < 0) {
        PyErr_SetString(PyExc_RuntimeError, "smooth_l1_loss does not support negative values for beta.");
        return NULL;
    }
    int nd = pointwise_operands(kind, input, target, weight, pos_weight, shape, &dt, &device, ops);
    if (nd < 0) {
        return NULL;
    }
    const struct CtNNKernels *k = nn_kernels(device);
    if (k == NULL) {
        goto done;
    }
    out = ct_empty(reduction == CT_REDUCTION_NONE ? nd : 0, shape, dt, device);
    if (out == NULL) {
        goto done;
    }
    CtPointwiseLossDesc d = {
        .kind = kind, .dtype = dt, .device = device, .n = shape_numel(nd, shape), .input = ct_data(ops[0]),
        .target = ct_data(ops[1]), .weight = ops[2] ? ct_data(ops[2]) : NULL,
        .pos_weight = ops[3] ? ct_data(ops[3]) : NULL, .beta = beta, .reduction = reduction, .out = ct_data(out),
    };
    if (k->pointwise_loss(&d) < 0) {
        goto done;
    }
    if (d.bad) {
        PyErr_Format(PyExc_RuntimeError, "all elements of %s should be between 0 and 1", d.bad == 1 ? "input" : "target");
        goto done;
    }
    result = out;
    out = NULL;
done:
    for (int i = 0; i < 4; i++) {
        Py_XDECREF(ops[i]);
    }
    Py_XDECREF(out);
    return result;
}

/* Returns a new tuple (grad_input or None, grad_target or None), at the broadcast shape. */
static PyObject *pointwise_loss_backward(CtPointwiseLoss kind, CtTensorObject *grad, CtTensorObject *input,
                                         CtTensorObject *target, CtTensorObject *weight, CtTensorObject *pos_weight,
                                         int reduction, double beta, bool want_input, bool want_target)
{
    CtTensorObject *ops[4] = {NULL, NULL, NULL, NULL}, *g = NULL, *gi = NULL, *gt = NULL;
    PyObject *result = NULL;
    int64_t shape[CT_MAX_DIMS];
    CtDType dt;
    CtDevice device;
    int nd = pointwise_operands(kind, input, target, weight, pos_weight, shape, &dt, &device, ops);
    if (nd < 0) {
        return NULL;
    }
    const struct CtNNKernels *k = nn_kernels(device);
    if (k == NULL) {
        goto done;
    }
    g = reduction == CT_REDUCTION_NONE ? dense_as(grad, nd, shape, dt) : dense(grad, dt);
    if (g == NULL) {
        goto done;
    }
    if (want_input && (gi = ct_empty(nd, shape, dt, device)) == NULL) {
        goto done;
    }
    if (want_target && (gt = ct_empty(nd, shape, dt, device)) == NULL) {
        goto done;
    }
    CtPointwiseLossDesc d = {
        .kind = kind, .dtype = dt, .device = device, .n = shape_numel(nd, shape), .input = ct_data(ops[0]),
        .target = ct_data(ops[1]), .weight = ops[2] ? ct_data(ops[2]) : NULL,
        .pos_weight = ops[3] ? ct_data(ops[3]) : NULL, .beta = beta, .reduction = reduction,
        .grad_out = ct_data(g), .grad_input = gi ? ct_data(gi) : NULL, .grad_target = gt ? ct_data(gt) : NULL,
    };
    if ((gi != NULL || gt != NULL) && k->pointwise_loss_backward(&d) < 0) {
        goto done;
    }
    result = PyTuple_Pack(2, gi ? (PyObject *)gi : Py_None, gt ? (PyObject *)gt : Py_None);
done:
    for (int i = 0; i < 4; i++) {
        Py_XDECREF(ops[i]);
    }
    Py_XDECREF(g);
    Py_XDECREF(gi);
    Py_XDECREF(gt);
    return result;
}

/* --- CPU kernels ----------------------------------------------------------------------------------- */
#define CT_LOSS_BLOCK 4096

/* The mean of a weighted mse / l1 loss divides by the sum of the weights (PyTorch's
 * F.mse_loss(weight=)); every other mean divides by the element count. */
static double loss_mean_divisor(const CtPointwiseLossDesc *d)
{
    if (d->weight == NULL || (d->kind != CT_LOSS_MSE && d->kind != CT_LOSS_L1)) {
        return (double)d->n;
    }
    double w[256], total = 0.0;
    for (int64_t s = 0; s < d->n; s += 256) {
        int64_t m = d->n - s < 256 ? d->n - s : 256;
        load_row(d->dtype, d->weight, s, 1, m, w);
        for (int64_t i = 0; i < m; i++) {
            total += w[i];
        }
    }
    return total;
}

typedef struct {
    CtPointwiseLossDesc *d;
    double *partial; /* per block sums (reductions) */
    double scale;    /* backward: grad_out scale for SUM/MEAN */
    int bad;         /* bce range errors, per the first block that saw one (benign flag) */
} LossCtx;

static void loss_forward_blocks(int64_t begin, int64_t end, void *p)
{
    LossCtx *cx = (LossCtx *)p;
    CtPointwiseLossDesc *d = cx->d;
    double x[256], y[256], w[256], pw[256], l[256];
    for (int64_t b = begin; b < end; b++) {
        int64_t lo = b * CT_LOSS_BLOCK, hi = lo + CT_LOSS_BLOCK < d->n ? lo + CT_LOSS_BLOCK : d->n;
        double sum = 0.0;
        for (int64_t s = lo; s < hi; s += 256) {
            int64_t m = hi - s < 256 ? hi - s : 256;
            load_row(d->dtype, d->input, s, 1, m, x);
            load_row(d->dtype, d->target, s, 1, m, y);
            for (int64_t i = 0; i < m; i++) {
                w[i] = pw[i] = 1.0;
            }
            if (d->weight) {
                load_row(d->dtype, d->weight, s, 1, m, w);
            }
            if (d->pos_weight) {
                load_row(d->dtype, d->pos_weight, s, 1, m, pw);
            }
            for (int64_t i = 0; i < m; i++) {
                if (d->kind == CT_LOSS_BCE) {
                    if (!(x[i] >= 0.0 && x[i] <= 1.0)) {
                        cx->bad = 1;
                    } else if (!(y[i] >= 0.0 && y[i] <= 1.0) && cx->bad == 0) {
                        cx->bad = 2;
                    }
                }
                l[i] = ct_loss_value(d->kind, x[i], y[i], w[i], pw[i], d->beta);
                sum += l[i];
            }
            if (d->reduction == CT_REDUCTION_NONE) {
                store_row(d->dtype, d->out, s, 1, m, l);
            }
        }
        if (cx->partial) {
            cx->partial[b] = sum;
        }
    }
}

static void loss_backward_blocks(int64_t begin, int64_t end, void *p)
{
    LossCtx *cx = (LossCtx *)p;
    const CtPointwiseLossDesc *d = cx->d;
    double x[256], y[256], w[256], pw[256], g[256], gx[256], gy[256];
    for (int64_t b = begin; b < end; b++) {
        int64_t lo = b * CT_LOSS_BLOCK, hi = lo + CT_LOSS_BLOCK < d->n ? lo + CT_LOSS_BLOCK : d->n;
        for (int64_t s = lo; s < hi; s += 256) {
            int64_t m = hi - s < 256 ? hi - s : 256;
            load_row(d->dtype, d->input, s, 1, m, x);
            load_row(d->dtype, d->target, s, 1, m, y);
            for (int64_t i = 0; i < m; i++) {
                w[i] = pw[i] = 1.0;
                g[i] = cx->scale;
            }
            if (d->weight) {
                load_row(d->dtype, d->weight, s, 1, m, w);
            }
            if (d->pos_weight) {
                load_row(d->dtype, d->pos_weight, s, 1, m, pw);
            }
            if (d->reduction == CT_REDUCTION_NONE) {
                load_row(d->dtype, d->grad_out, s, 1, m, g);
            }
            for (int64_t i = 0; i < m; i++) {
                ct_loss_grads(d->kind, x[i], y[i], w[i], pw[i], d->beta, &gx[i], &gy[i]);
                gx[i] *= g[i];
                gy[i] *= g[i];
            }
            if (d->grad_input) {
                store_row(d->dtype, d->grad_input, s, 1, m, gx);
            }
            if (d->grad_target) {
                store_row(d->dtype, d->grad_target, s, 1, m, gy);
            }
        }
    }
}

static int cpu_pointwise_loss(CtPointwiseLossDesc *d)
{
    int64_t nblocks = (d->n + CT_LOSS_BLOCK - 1) / CT_LOSS_BLOCK;
    LossCtx cx = {d, NULL, 0.0, 0};
    if (d->reduction != CT_REDUCTION_NONE) {
        cx.partial = PyMem_RawCalloc((size_t)nblocks + 1, sizeof(double));
        if (cx.partial == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    ct_parallel_for(nblocks, 4, loss_forward_blocks, &cx);
    d->bad = cx.bad;
    if (cx.partial != NULL) {
        double total = 0.0;
        for (int64_t b = 0; b < nblocks; b++) {
            total += cx.partial[b];
        }
        store_one(d->dtype, d->out, 0, d->reduction == CT_REDUCTION_MEAN ? total / loss_mean_divisor(d) : total);
        PyMem_RawFree(cx.partial);
    }
    return 0;
}

static int cpu_pointwise_loss_backward(const CtPointwiseLossDesc *d)
{
    int64_t nblocks = (d->n + CT_LOSS_BLOCK - 1) / CT_LOSS_BLOCK;
    LossCtx cx = {(CtPointwiseLossDesc *)d, NULL, 1.0, 0};
    if (d->reduction != CT_REDUCTION_NONE) {
        cx.scale = load_one(d->dtype, d->grad_out, 0);
        if (d->reduction == CT_REDUCTION_MEAN) {
            cx.scale /= loss_mean_divisor(d);
        }
    }
    ct_parallel_for(nblocks, 4, loss_backward_blocks, &cx);
    return 0;
}

/* ====================================================================================================
 * layer norm
 * ==================================================================================================== */
/* Checks and dense operands shared by forward and backward. Returns the number of columns
 * (the product of normalized_shape) or -1. */
static int64_t layer_norm_check(CtTensorObject *input, int nnorm, const int64_t *nshape, CtTensorObject *weight,
                                CtTensorObject *bias)
{
    char sa[160], sb[160];
    int64_t cols = shape_numel(nnorm, nshape);
    bool ok = nnorm >= 1 && input->ndim >= nnorm;
    for (int i = 0; ok && i < nnorm; i++) {
        ok = input->sizes[input->ndim - nnorm + i] == nshape[i];
    }
    if (nnorm < 1) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, "
                        "but got normalized_shape = []");
        return -1;
    }
    if (!ok) {
        ct_format_sizes(sa, sizeof(sa), nnorm, nshape);
        format_shape(sb, sizeof(sb), input);
        char star[200] = "[*";
        for (int i = 0; i < nnorm; i++) {
            size_t len = strlen(star);
            snprintf(star + len, sizeof(star) - len, ", %lld", (long long)nshape[i]);
        }
        strncat(star, "]", sizeof(star) - strlen(star) - 1);
        PyErr_Format(PyExc_RuntimeError, "Given normalized_shape=%s, expected input with shape %s, but got input of size%s",
                     sa, star, sb);
        return -1;
    }
    CtTensorObject *wb[2] = {weight, bias};
    for (int i = 0; i < 2; i++) {
        CtTensorObject *p = wb[i];
        if (p == NULL) {
            continue;
        }
        if (p->ndim != nnorm || memcmp(p->sizes, nshape, sizeof(int64_t) * nnorm) != 0) {
            format_shape(sa, sizeof(sa), p);
            ct_format_sizes(sb, sizeof(sb), nnorm, nshape);
            PyErr_Format(PyExc_RuntimeError,
                         "Expected %s to be of same shape as normalized_shape, but got %s of shape %s and "
                         "normalized_shape = %s",
                         i == 0 ? "weight" : "bias", i == 0 ? "weight" : "bias", sa, sb);
            return -1;
        }
    }
    if (!ct_is_floating(input->dtype)) {
        PyErr_Format(PyExc_NotImplementedError, "\"LayerNormKernelImpl\" not implemented for '%s'",
                     ct_scalar_type_name(input->dtype));
        return -1;
    }
    CtDType param_dtype;
    if (ct_nn_check_param_dtype(input->dtype, wb, 2, &param_dtype) < 0) {
        return -1;
    }
    return cols;
}

CtTensorObject *ct_layer_norm(CtTensorObject *input, int nnorm, const int64_t *nshape, CtTensorObject *weight,
                              CtTensorObject *bias, double eps)
{
    CtTensorObject *x = NULL, *w = NULL, *b = NULL, *out = NULL, *result = NULL;
    int64_t cols = layer_norm_check(input, nnorm, nshape, weight, bias);
    if (cols < 0) {
        return NULL;
    }
    CtTensorObject *devs[3] = {input, weight, bias};
    CtDevice device;
    if (ct_check_same_device(3, devs, false, &device) < 0) {
        return NULL;
    }
    const struct CtNNKernels *k = nn_kernels(device);
    if (k == NULL) {
        return NULL;
    }
    x = dense(input, input->dtype);
    if (x == NULL || (weight && (w = dense(weight, input->dtype)) == NULL) ||
        (bias && (b = dense(bias, input->dtype)) == NULL)) {
        goto done;
    }
    out = ct_empty(input->ndim, input->sizes, input->dtype, device);
    if (out == NULL) {
        goto done;
    }
    CtLayerNormDesc d = {
        .dtype = input->dtype, .device = device, .rows = cols ? ct_numel(input) / cols : 0, .cols = cols,
        .eps = eps, .x = ct_data(x), .weight = w ? ct_data(w) : NULL, .bias = b ? ct_data(b) : NULL,
        .out = ct_data(out),
    };
    if (d.rows > 0 && cols > 0 && k->layer_norm(&d) < 0) {
        goto done;
    }
    result = out;
    out = NULL;
done:
    Py_XDECREF(x);
    Py_XDECREF(w);
    Py_XDECREF(b);
    Py_XDECREF(out);
    return result;
}

/* A new tuple (grad_input, grad_weight, grad_bias), None where not wanted or absent. */
static PyObject *layer_norm_backward(CtTensorObject *grad, CtTensorObject *input, int nnorm, const int64_t *nshape,
                                     CtTensorObject *weight, CtTensorObject *bias, double eps, const bool *want)
{
    CtTensorObject *x = NULL, *w = NULL, *g = NULL, *gi = NULL, *gw = NULL, *gb = NULL;
    PyObject *result = NULL;
    int64_t cols = layer_norm_check(input, nnorm, nshape, weight, bias);
    if (cols < 0) {
        return NULL;
    }
    CtTensorObject *devs[3] = {grad, input, weight};
    CtDevice device;
    if (ct_check_same_device(3, devs, false, &device) < 0) {
        return NULL;
    }
    const struct CtNNKernels *k = nn_kernels(device);
    if (k == NULL) {
        return NULL;
    }
    x = dense(input, input->dtype);
    g = x ? dense_as(grad, input->ndim, input->sizes, input->dtype) : NULL;
    if (g == NULL || (weight && (w = dense(weight, input->dtype)) == NULL)) {
        goto done;
    }
    if (want[0] && (gi = ct_empty(input->ndim, input->sizes, input->dtype, device)) == NULL) {
        goto done;
    }
    if (want[1] && weight && (gw = ct_empty(weight->ndim, weight->sizes, input->dtype, device)) == NULL) {
        goto done;
    }
    if (want[2] && bias && (gb = ct_empty(bias->ndim, bias->sizes, input->dtype, device)) == NULL) {
        goto done;
    }
    CtLayerNormDesc d = {
        .dtype = input->dtype, .device = device, .rows = cols ? ct_numel(input) / cols : 0, .cols = cols,
        .eps = eps, .x = ct_data(x), .weight = w ? ct_data(w) : NULL, .grad_out = ct_data(g),
        .grad_input = gi ? ct_data(gi) : NULL, .grad_weight = gw ? ct_data(gw) : NULL,
        .grad_bias = gb ? ct_data(gb) : NULL,
    };
    if (cols > 0 && k->layer_norm_backward(&d) < 0) {
        goto done;
    }
    result = PyTuple_Pack(3, gi ? (PyObject *)gi : Py_None, gw ? (PyObject *)gw : Py_None,
                          gb ? (PyObject *)gb : Py_None);
done:
    Py_XDECREF(x);
    Py_XDECREF(w);
    Py_XDECREF(g);
    Py_XDECREF(gi);
    Py_XDECREF(gw);
    Py_XDECREF(gb);
    return result;
}

/* --- CPU kernels ----------------------------------------------------------------------------------- */
#define CT_LN_ROWS_PER_BLOCK 32

typedef struct {
    const CtLayerNormDesc *d;
    double *partial; /* backward: per row-block partial sums of grad_weight and grad_bias, 2 * cols each */
    int failed;
} LNCtx;

static void row_moments(const double *x, int64_t n, double eps, double *mean, double *rstd)
{
    double m = 0.0, v = 0.0;
    for (int64_t c = 0; c < n; c++) {
        m += x[c];
    }
    m /= (double)n;
    for (int64_t c = 0; c < n; c++) {
        v += (x[c] - m) * (x[c] - m);
    }
    v /= (double)n; /* biased variance, as PyTorch */
    *mean = m;
    *rstd = 1.0 / sqrt(v + eps);
}

static void layer_norm_rows(int64_t begin, int64_t end, void *p)
{
    LNCtx *cx = (LNCtx *)p;
    const CtLayerNormDesc *d = cx->d;
    int64_t n = d->cols;
    double *buf = malloc(sizeof(double) * (size_t)(3 * n));
    if (buf == NULL) {
        cx->failed = 1;
        return;
    }
    double *x = buf, *w = buf + n, *b = buf + 2 * n;
    for (int64_t c = 0; c < n; c++) {
        w[c] = 1.0;
        b[c] = 0.0;
    }
    if (d->weight) {
        load_row(d->dtype, d->weight, 0, 1, n, w);
    }
    if (d->bias) {
        load_row(d->dtype, d->bias, 0, 1, n, b);
    }
    for (int64_t r = begin; r < end; r++) {
        double mean, rstd;
        load_row(d->dtype, d->x, r * n, 1, n, x);
        row_moments(x, n, d->eps, &mean, &rstd);
        for (int64_t c = 0; c < n; c++) {
            x[c] = (x[c] - mean) * rstd * w[c] + b[c];
        }
        store_row(d->dtype, d->out, r * n, 1, n, x);
    }
    free(buf);
}

/* One block of CT_LN_ROWS_PER_BLOCK rows per index: grad_input rows, and this block's partial sums
 * of grad_weight (sum g * xhat) and grad_bias (sum g). */
static void layer_norm_backward_blocks(int64_t begin, int64_t end, void *p)
{
    LNCtx *cx = (LNCtx *)p;
    const CtLayerNormDesc *d = cx->d;
    int64_t n = d->cols;
    double *buf = malloc(sizeof(double) * (size_t)(4 * n));
    if (buf == NULL) {
        cx->failed = 1;
        return;
    }
    double *x = buf, *g = buf + n, *w = buf + 2 * n, *dx = buf + 3 * n;
    for (int64_t c = 0; c < n; c++) {
        w[c] = 1.0;
    }
    if (d->weight) {
        load_row(d->dtype, d->weight, 0, 1, n, w);
    }
    for (int64_t blk = begin; blk < end; blk++) {
        double *pw = cx->partial ? cx->partial + blk * 2 * n : NULL;
        if (pw) {
            memset(pw, 0, sizeof(double) * (size_t)(2 * n));
        }
        int64_t r0 = blk * CT_LN_ROWS_PER_BLOCK;
        int64_t r1 = r0 + CT_LN_ROWS_PER_BLOCK < d->rows ? r0 + CT_LN_ROWS_PER_BLOCK : d->rows;
        for (int64_t r = r0; r < r1; r++) {
            double mean, rstd;
            load_row(d->dtype, d->x, r * n, 1, n, x);
            load_row(d->dtype, d->grad_out, r * n, 1, n, g);
            row_moments(x, n, d->eps, &mean, &rstd);
            double a = 0.0, bsum = 0.0;
            for (int64_t c = 0; c < n; c++) {
                x[c] = (x[c] - mean) * rstd; /* xhat */
                double dxhat = g[c] * w[c];
                a += dxhat;
                bsum += dxhat * x[c];
                if (pw) {
                    pw[c] += g[c] * x[c];
                    pw[n + c] += g[c];
                }
            }
            if (d->grad_input) {
                a /= (double)n;
                bsum /= (double)n;
                for (int64_t c = 0; c < n; c++) {
                    dx[c] = rstd * (g[c] * w[c] - a - x[c] * bsum);
                }
                store_row(d->dtype, d->grad_input, r * n, 1, n, dx);
            }
        }
    }
    free(buf);
}

static int cpu_layer_norm(const CtLayerNormDesc *d)
{
    LNCtx cx = {d, NULL, 0};
    ct_parallel_for(d->rows, 4096 / d->cols + 1, layer_norm_rows, &cx);
    if (cx.failed) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static int cpu_layer_norm_backward(const CtLayerNormDesc *d)
{
    int64_t nblocks = (d->rows + CT_LN_ROWS_PER_BLOCK - 1) / CT_LN_ROWS_PER_BLOCK;
    int64_t n = d->cols;
    LNCtx cx = {d, NULL, 0};
    if (d->grad_weight || d->grad_bias) {
        cx.partial = PyMem_RawMalloc(sizeof(double) * (size_t)(2 * n * (nblocks + 1)));
        if (cx.partial == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    ct_parallel_for(nblocks, 1, layer_norm_backward_blocks, &cx);
    if (cx.failed) {
        PyMem_RawFree(cx.partial);
        PyErr_NoMemory();
        return -1;
    }
    if (cx.partial) {
        /* sum the blocks' partials in block order (deterministic) */
        double *total = cx.partial + nblocks * 2 * n;
        memset(total, 0, sizeof(double) * (size_t)(2 * n));
        for (int64_t blk = 0; blk < nblocks; blk++) {
            for (int64_t c = 0; c < 2 * n; c++) {
                total[c] += cx.partial[blk * 2 * n + c];
            }
        }
        if (d->grad_weight) {
            store_row(d->dtype, d->grad_weight, 0, 1, n, total);
        }
        if (d->grad_bias) {
            store_row(d->dtype, d->grad_bias, 0, 1, n, total + n);
        }
        PyMem_RawFree(cx.partial);
    }
    return 0;
}

/* ====================================================================================================
 * embedding
 * ==================================================================================================== */
static int64_t load_index(CtDType dt, const void *p, int64_t i)
{
    return dt == CT_I32 ? (int64_t)((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

CtTensorObject *ct_embedding(CtTensorObject *weight, CtTensorObject *indices, int64_t padding_idx)
{
    CtTensorObject *w = NULL, *idx = NULL, *out = NULL, *result = NULL;
    if (indices->dtype != CT_I64 && indices->dtype != CT_I32) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
                     "but got torch.%sTensor instead (while checking arguments for embedding)",
                     ct_scalar_type_name(indices->dtype));
        return NULL;
    }
    if (weight->ndim != 2) {
        PyErr_SetString(PyExc_RuntimeError, "'weight' must be 2-D");
        return NULL;
    }
    CtTensorObject *devs[2] = {weight, indices};
    CtDevice device;
    if (ct_check_same_device(2, devs, false, &device) < 0) {
        return NULL;
    }
    const struct CtNNKernels *k = nn_kernels(device);
    if (k == NULL) {
        return NULL;
    }
    w = dense(weight, weight->dtype);
    idx = w ? dense(indices, indices->dtype) : NULL;
    if (idx == NULL) {
        goto done;
    }
    int64_t osz[CT_MAX_DIMS];
    if (indices->ndim + 1 > CT_MAX_DIMS) {
        PyErr_SetString(PyExc_RuntimeError, "embedding: too many dimensions");
        goto done;
    }
    memcpy(osz, indices->sizes, sizeof(int64_t) * indices->ndim);
    osz[indices->ndim] = weight->sizes[1];
    out = ct_empty(indices->ndim + 1, osz, weight->dtype, device);
    if (out == NULL) {
        goto done;
    }
    CtEmbeddingDesc d = {
        .dtype = weight->dtype, .device = device, .n = ct_numel(indices), .num = weight->sizes[0],
        .dim = weight->sizes[1], .indices = ct_data(idx), .index_dtype = idx->dtype, .weight = ct_data(w),
        .out = ct_data(out), .padding_idx = padding_idx,
    };
    if (k->embedding(&d) < 0) {
        goto done;
    }
    if (d.bad_index) {
        PyErr_SetString(PyExc_IndexError, "index out of range in self");
        goto done;
    }
    result = out;
    out = NULL;
done:
    Py_XDECREF(w);
    Py_XDECREF(idx);
    Py_XDECREF(out);
    return result;
}

static CtTensorObject *embedding_backward(CtTensorObject *grad, CtTensorObject *indices, int64_t num,
                                          int64_t padding_idx, bool scale_grad_by_freq)
{
    CtTensorObject *g = NULL, *idx = NULL, *gw = NULL, *result = NULL;
    CtTensorObject *devs[2] = {grad, indices};
    CtDevice device;
    if (ct_check_same_device(2, devs, false, &device) < 0) {
        return NULL;
    }
    const struct CtNNKernels *k = nn_kernels(device);
    if (k == NULL) {
        return NULL;
    }
    int64_t dim = grad->ndim ? grad->sizes[grad->ndim - 1] : 1;
    g = dense(grad, grad->dtype);
    idx = g ? dense(indices, indices->dtype) : NULL;
    if (idx == NULL) {
        goto done;
    }
    int64_t sz[2] = {num, dim};
    gw = ct_empty(2, sz, grad->dtype, device);
    if (gw == NULL) {
        goto done;
    }
    CtEmbeddingDesc d = {
        .dtype = grad->dtype, .device = device, .n = ct_numel(indices), .num = num, .dim = dim,
        .indices = ct_data(idx), .index_dtype = idx->dtype, .grad_out = ct_data(g), .grad_weight = ct_data(gw),
        .padding_idx = padding_idx, .scale_grad_by_freq = scale_grad_by_freq,
    };
    if (k->embedding_backward(&d) < 0) {
        goto done;
    }
    if (d.bad_index) {
        PyErr_SetString(PyExc_IndexError, "index out of range in self");
        goto done;
    }
    result = gw;
    gw = NULL;
done:
    Py_XDECREF(g);
    Py_XDECREF(idx);
    Py_XDECREF(gw);
    return result;
}

/* --- CPU kernels ----------------------------------------------------------------------------------- */
static bool embedding_check(CtEmbeddingDesc *d)
{
    for (int64_t i = 0; i < d->n; i++) {
        int64_t v = load_index(d->index_dtype, d->indices, i);
        if (v < 0 || v >= d->num) {
            d->bad_index = 1;
            d->bad_value = v;
            return false;
        }
    }
    return true;
}

static void embedding_rows(int64_t begin, int64_t end, void *p)
{
    const CtEmbeddingDesc *d = (const CtEmbeddingDesc *)p;
    size_t row = (size_t)d->dim * ct_dtype_info[d->dtype].itemsize;
    for (int64_t i = begin; i < end; i++) {
        int64_t v = load_index(d->index_dtype, d->indices, i);
        memcpy((char *)d->out + (size_t)i * row, (const char *)d->weight + (size_t)v * row, row);
    }
}

static int cpu_embedding(CtEmbeddingDesc *d)
{
    if (!embedding_check(d)) {
        return 0;
    }
    ct_parallel_for(d->n, 65536 / (d->dim + 1) + 1, embedding_rows, d);
    return 0;
}

typedef struct {
    const CtEmbeddingDesc *d;
    double *acc;          /* (num, dim) accumulators */
    const int64_t *count; /* occurrences per index (scale_grad_by_freq) or NULL */
} EmbBwdCtx;

/* Column range [begin, end) of every row: each thread owns whole columns, so no two threads add
 * into the same accumulator and the order of additions is the index order. */
static void embedding_backward_cols(int64_t begin, int64_t end, void *p)
{
    EmbBwdCtx *cx = (EmbBwdCtx *)p;
    const CtEmbeddingDesc *d = cx->d;
    double g[256];
    for (int64_t i = 0; i < d->n; i++) {
        int64_t v = load_index(d->index_dtype, d->indices, i);
        if (v == d->padding_idx) {
            continue;
        }
        double scale = cx->count ? 1.0 / (double)cx->count[v] : 1.0;
        for (int64_t c0 = begin; c0 < end; c0 += 256) {
            int64_t m = end - c0 < 256 ? end - c0 : 256;
            load_row(d->dtype, d->grad_out, i * d->dim + c0, 1, m, g);
            double *a = cx->acc + v * d->dim + c0;
            for (int64_t c = 0; c < m; c++) {
                a[c] += g[c] * scale;
            }
        }
    }
}

static int cpu_embedding_backward(CtEmbeddingDesc *d)
{
    if (!embedding_check(d)) {
        return 0;
    }
    int64_t *count = NULL;
    double *acc = PyMem_RawCalloc((size_t)(d->num * d->dim) + 1, sizeof(double));
    if (acc == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (d->scale_grad_by_freq) {
        count = PyMem_RawCalloc((size_t)d->num + 1, sizeof(int64_t));
        if (count == NULL) {
            PyMem_RawFree(acc);
            PyErr_NoMemory();
            return -1;
        }
        for (int64_t i = 0; i < d->n; i++) {
            count[load_index(d->index_dtype, d->indices, i)]++;
        }
    }
    EmbBwdCtx cx = {d, acc, count};
    ct_parallel_for(d->dim, 64, embedding_backward_cols, &cx);
    store_row(d->dtype, d->grad_weight, 0, 1, d->num * d->dim, acc);
    PyMem_RawFree(acc);
    PyMem_RawFree(count);
    return 0;
}

/* ====================================================================================================
 * leaky_relu
 * ==================================================================================================== */
typedef struct {
    CtDType dtype;
    const void *x, *grad;
    double slope;
    void *out;
    int64_t n;
} LeakyCtx;

static void leaky_relu_blocks(int64_t begin, int64_t end, void *p)
{
    const LeakyCtx *cx = (const LeakyCtx *)p;
    double x[256], g[256];
    for (int64_t s = begin; s < end; s += 256) {
        int64_t m = end - s < 256 ? end - s : 256;
        load_row(cx->dtype, cx->x, s, 1, m, x);
        if (cx->grad) {
            load_row(cx->dtype, cx->grad, s, 1, m, g);
            for (int64_t i = 0; i < m; i++) {
                x[i] = x[i] > 0 ? g[i] : g[i] * cx->slope;
            }
        } else {
            for (int64_t i = 0; i < m; i++) {
                x[i] = x[i] > 0 ? x[i] : x[i] * cx->slope;
            }
        }
        store_row(cx->dtype, cx->out, s, 1, m, x);
    }
}

static int cpu_leaky_relu(CtDType dtype, CtDevice device, int64_t n, const void *x, const void *grad, double slope,
                          void *out)
{
    LeakyCtx cx = {dtype, x, grad, slope, out, n};
    ct_parallel_for(n, 32768, leaky_relu_blocks, &cx);
    return 0;
}

/* grad NULL: leaky_relu(input); else the backward grad * (input > 0 ? 1 : slope). */
static CtTensorObject *leaky_relu_impl(CtTensorObject *input, CtTensorObject *grad, double slope)
{
    CtTensorObject *x = NULL, *g = NULL, *out = NULL, *result = NULL;
    if (!ct_is_floating(input->dtype)) {
        PyErr_Format(PyExc_NotImplementedError, "\"leaky_relu_cpu\" not implemented for '%s'",
                     ct_scalar_type_name(input->dtype));
        return NULL;
    }
    CtTensorObject *devs[2] = {input, grad};
    CtDevice device;
    if (ct_check_same_device(grad ? 2 : 1, devs, false, &device) < 0) {
        return NULL;
    }
    const struct CtNNKernels *k = nn_kernels(device);
    if (k == NULL) {
        return NULL;
    }
    x = dense(input, input->dtype);
    if (x == NULL || (grad && (g = dense_as(grad, input->ndim, input->sizes, input->dtype)) == NULL)) {
        goto done;
    }
    out = ct_empty(input->ndim, input->sizes, input->dtype, device);
    if (out == NULL) {
        goto done;
    }
    if (k->leaky_relu(input->dtype, device, ct_numel(input), ct_data(x), g ? ct_data(g) : NULL, slope, ct_data(out)) <
        0) {
        goto done;
    }
    result = out;
    out = NULL;
done:
    Py_XDECREF(x);
    Py_XDECREF(g);
    Py_XDECREF(out);
    return result;
}

/* ====================================================================================================
 * nn.init.trunc_normal_'s inverse-CDF transform
 * ==================================================================================================== */
typedef struct {
    CtDType dtype;
    void *data;
    double mean, std, a, b;
} TruncCtx;

static void trunc_normal_blocks(int64_t begin, int64_t end, void *p)
{
    const TruncCtx *cx = (const TruncCtx *)p;
    double v[256];
    for (int64_t s = begin; s < end; s += 256) {
        int64_t m = end - s < 256 ? end - s : 256;
        load_row(cx->dtype, cx->data, s, 1, m, v);
        for (int64_t i = 0; i < m; i++) {
            v[i] = ct_trunc_normal_of(v[i], cx->mean, cx->std, cx->a, cx->b);
        }
        store_row(cx->dtype, cx->data, s, 1, m, v);
    }
}

static int cpu_trunc_normal_transform(CtDType dtype, CtDevice device, int64_t n, void *data, double mean, double std,
                                      double a, double b)
{
    TruncCtx cx = {dtype, data, mean, std, a, b};
    ct_parallel_for(n, 16384, trunc_normal_blocks, &cx);
    return 0;
}

PyDoc_STRVAR(trunc_normal_doc, "_trunc_normal_transform_(tensor, mean, std, a, b): in place, uniform samples -> "
                               "clamp(mean + std * sqrt(2) * erfinv(u), a, b) (nn.init.trunc_normal_)");
static PyObject *py_trunc_normal_transform(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"tensor", "mean", "std", "a", "b", NULL};
    PyObject *a[5];
    double mean = 0.0, std = 1.0, lo = -2.0, hi = 2.0;
    if (ct_parse_args("_trunc_normal_transform_", args, nargs, kwnames, names, 1, a) < 0 ||
        check_tensor_arg("_trunc_normal_transform_", "tensor", 1, a[0], false) < 0 || ct_arg_double(a[1], &mean) < 0 ||
        ct_arg_double(a[2], &std) < 0 || ct_arg_double(a[3], &lo) < 0 || ct_arg_double(a[4], &hi) < 0) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(a[0]);
    if (!ct_is_floating(t->dtype)) {
        PyErr_Format(PyExc_NotImplementedError, "\"erfinv_vml_cpu\" not implemented for '%s'", ct_scalar_type_name(t->dtype));
        return NULL;
    }
    const struct CtNNKernels *k = nn_kernels(ct_device_of(t));
    if (k == NULL) {
        return NULL;
    }
    CtTensorObject *d = dense(t, t->dtype);
    if (d == NULL) {
        return NULL;
    }
    int rc = k->trunc_normal_transform(t->dtype, ct_device_of(t), ct_numel(t), ct_data(d), mean, std, lo, hi);
    if (rc == 0 && d != t) {
        rc = ct_copy_(t, d);
    }
    Py_DECREF(d);
    if (rc < 0) {
        return NULL;
    }
    ct_bump_version(t);
    return Py_NewRef(a[0]);
}

const struct CtNNKernels ct_cpu_nn_kernels = {
    .linear = cpu_linear,
    .nll = cpu_nll,
    .nll_backward = cpu_nll_backward,
    .pointwise_loss = cpu_pointwise_loss,
    .pointwise_loss_backward = cpu_pointwise_loss_backward,
    .layer_norm = cpu_layer_norm,
    .layer_norm_backward = cpu_layer_norm_backward,
    .embedding = cpu_embedding,
    .embedding_backward = cpu_embedding_backward,
    .leaky_relu = cpu_leaky_relu,
    .trunc_normal_transform = cpu_trunc_normal_transform,
    .im2col = ct_cpu_im2col,
    .col2im = ct_cpu_col2im,
    .channel_norm = ct_cpu_channel_norm, /* norm.c */
    .channel_norm_backward = ct_cpu_channel_norm_backward,
    .pool = ct_cpu_pool,
    .pool_backward = ct_cpu_pool_backward,
    .upsample = ct_cpu_upsample, /* upsample.c */
    .upsample_backward = ct_cpu_upsample_backward,
    .ctc_loss = ct_cpu_ctc_loss, /* nn_misc.c */
    .ctc_loss_backward = ct_cpu_ctc_loss_backward,
    .grid_sample = ct_cpu_grid_sample, /* nn_misc.c */
    .grid_sample_backward = ct_cpu_grid_sample_backward,
};

/* ====================================================================================================
 * Python entry points (ctorch._C)
 * ==================================================================================================== */
/* Parses normalized_shape given as an int or a sequence of ints. Returns its length or -1. */
static int parse_normalized_shape(PyObject *obj, int64_t *out)
{
    if (PyLong_Check(obj)) {
        out[0] = PyLong_AsLongLong(obj);
        return out[0] == -1 && PyErr_Occurred() ? -1 : 1;
    }
    return ct_parse_size_seq(obj, out, false);
}

PyDoc_STRVAR(linear_doc, "linear(input, weight, bias=None) -> Tensor\n\ninput @ weight.T + bias as one GEMM with the "
                         "bias folded in.");
static PyObject *py_linear(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "weight", "bias", NULL};
    PyObject *a[3];
    if (ct_parse_args("linear", args, nargs, kwnames, names, 2, a) < 0 ||
        check_tensor_arg("linear", "input", 1, a[0], false) < 0 ||
        check_tensor_arg("linear", "weight", 2, a[1], false) < 0 ||
        check_tensor_arg("linear", "bias", 3, a[2], true) < 0) {
        return NULL;
    }
    return (PyObject *)ct_linear(CT_TENSOR(a[0]), CT_TENSOR(a[1]), tensor_or_null(a[2]));
}

PyDoc_STRVAR(cross_entropy_doc,
             "_cross_entropy(input, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0)\n\n"
             "Fused log-softmax + NLL over dim 1 (class indices or class probabilities).");
static PyObject *py_cross_entropy(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "target", "weight", "reduction", "ignore_index", "label_smoothing",
                                        NULL};
    PyObject *a[6];
    int reduction = CT_REDUCTION_MEAN;
    int64_t ignore_index = -100;
    double ls = 0.0;
    if (ct_parse_args("cross_entropy", args, nargs, kwnames, names, 2, a) < 0 ||
        check_tensor_arg("cross_entropy", "input", 1, a[0], false) < 0 ||
        check_tensor_arg("cross_entropy", "target", 2, a[1], false) < 0 ||
        check_tensor_arg("cross_entropy", "weight", 3, a[2], true) < 0 || parse_reduction(a[3], &reduction) < 0 ||
        ct_arg_int64(a[4], &ignore_index) < 0 || ct_arg_double(a[5], &ls) < 0) {
        return NULL;
    }
    return (PyObject *)ct_cross_entropy(CT_TENSOR(a[0]), CT_TENSOR(a[1]), tensor_or_null(a[2]), reduction,
                                        ignore_index, ls);
}

PyDoc_STRVAR(nll_loss_doc, "_nll_loss(input, target, weight=None, reduction=1, ignore_index=-100)");
static PyObject *py_nll_loss(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "target", "weight", "reduction", "ignore_index", NULL};
    PyObject *a[5];
    int reduction = CT_REDUCTION_MEAN;
    int64_t ignore_index = -100;
    if (ct_parse_args("nll_loss", args, nargs, kwnames, names, 2, a) < 0 ||
        check_tensor_arg("nll_loss", "input", 1, a[0], false) < 0 ||
        check_tensor_arg("nll_loss", "target", 2, a[1], false) < 0 ||
        check_tensor_arg("nll_loss", "weight", 3, a[2], true) < 0 || parse_reduction(a[3], &reduction) < 0 ||
        ct_arg_int64(a[4], &ignore_index) < 0) {
        return NULL;
    }
    return (PyObject *)ct_nll_loss(CT_TENSOR(a[0]), CT_TENSOR(a[1]), tensor_or_null(a[2]), reduction, ignore_index);
}

PyDoc_STRVAR(nll_backward_doc,
             "_nll_backward(grad, input, target, weight, reduction, ignore_index, label_smoothing, flags) -> "
             "(grad_input, grad_target or None); flags: 1 nll_loss (else cross_entropy), 2 want grad_target");
static PyObject *py_nll_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"grad",         "input",           "target", "weight", "reduction",
                                        "ignore_index", "label_smoothing", "flags",  NULL};
    PyObject *a[8];
    int reduction = CT_REDUCTION_MEAN;
    int64_t ignore_index = -100, flags = 0;
    double ls = 0.0;
    if (ct_parse_args("_nll_backward", args, nargs, kwnames, names, 3, a) < 0 ||
        check_tensor_arg("_nll_backward", "grad", 1, a[0], false) < 0 ||
        check_tensor_arg("_nll_backward", "input", 2, a[1], false) < 0 ||
        check_tensor_arg("_nll_backward", "target", 3, a[2], false) < 0 ||
        check_tensor_arg("_nll_backward", "weight", 4, a[3], true) < 0 || parse_reduction(a[4], &reduction) < 0 ||
        ct_arg_int64(a[5], &ignore_index) < 0 || ct_arg_double(a[6], &ls) < 0 || ct_arg_int64(a[7], &flags) < 0) {
        return NULL;
    }
    return nll_backward(CT_TENSOR(a[0]), CT_TENSOR(a[1]), CT_TENSOR(a[2]), tensor_or_null(a[3]), reduction,
                        ignore_index, ls, (flags & 1) != 0, (flags & 2) != 0);
}

/* _mse_loss / _l1_loss / _smooth_l1_loss / _binary_cross_entropy / _binary_cross_entropy_with_logits */
static PyObject *pointwise_entry(CtPointwiseLoss kind, const char *fname, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    static const char *const names[] = {"input", "target", "weight", "pos_weight", "reduction", "beta", NULL};
    PyObject *a[6];
    int reduction = CT_REDUCTION_MEAN;
    double beta = 1.0;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0 ||
        check_tensor_arg(fname, "input", 1, a[0], false) < 0 || check_tensor_arg(fname, "target", 2, a[1], false) < 0 ||
        check_tensor_arg(fname, "weight", 3, a[2], true) < 0 ||
        check_tensor_arg(fname, "pos_weight", 4, a[3], true) < 0 || parse_reduction(a[4], &reduction) < 0 ||
        ct_arg_double(a[5], &beta) < 0) {
        return NULL;
    }
    CtDType tdt = CT_TENSOR(a[1])->dtype;
    if (kind == CT_LOSS_BCE_LOGITS && !ct_is_floating(tdt)) { /* PyTorch's (1 - target) and its in-place ops refuse */
        if (tdt == CT_BOOL) {
            PyErr_SetString(PyExc_NotImplementedError, "Subtraction, the `-` operator, with two bool tensors is not "
                            "supported. Use the `^` or `logical_xor()` operator instead.");
        } else {
            PyErr_Format(PyExc_RuntimeError, "result type %s can't be cast to the desired output type %s",
                         ct_scalar_type_name(CT_TENSOR(a[0])->dtype), ct_scalar_type_name(tdt));
        }
        return NULL;
    }
    return (PyObject *)pointwise_loss_forward(kind, CT_TENSOR(a[0]), CT_TENSOR(a[1]), tensor_or_null(a[2]),
                                              tensor_or_null(a[3]), reduction, beta);
}

#define CT_POINTWISE_ENTRY(fn, KIND, name)                                                          \
    static PyObject *fn(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                               \
        return pointwise_entry(KIND, name, args, nargs, kwnames);                                   \
    }
CT_POINTWISE_ENTRY(py_mse_loss, CT_LOSS_MSE, "mse_loss")
CT_POINTWISE_ENTRY(py_l1_loss, CT_LOSS_L1, "l1_loss")
CT_POINTWISE_ENTRY(py_smooth_l1_loss, CT_LOSS_SMOOTH_L1, "smooth_l1_loss")
CT_POINTWISE_ENTRY(py_bce, CT_LOSS_BCE, "binary_cross_entropy")
CT_POINTWISE_ENTRY(py_bce_logits, CT_LOSS_BCE_LOGITS, "binary_cross_entropy_with_logits")
#undef CT_POINTWISE_ENTRY
PyDoc_STRVAR(pointwise_doc, "(input, target, weight=None, pos_weight=None, reduction=1, beta=1.0): a pointwise loss");

PyDoc_STRVAR(pointwise_backward_doc,
             "_pointwise_loss_backward(mode, grad, input, target, weight, pos_weight, reduction, beta) -> "
             "(grad_input or None, grad_target or None) at the broadcast shape; mode = kind | 16 (want grad_input) "
             "| 32 (want grad_target), kind: 0 mse, 1 l1, 2 smooth_l1, 3 bce, 4 bce_with_logits");
static PyObject *py_pointwise_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"mode", "grad", "input", "target", "weight", "pos_weight", "reduction",
                                        "beta", NULL};
    PyObject *a[8];
    int64_t mode = 16;
    int reduction = CT_REDUCTION_MEAN;
    double beta = 1.0;
    if (ct_parse_args("_pointwise_loss_backward", args, nargs, kwnames, names, 4, a) < 0 ||
        ct_arg_int64(a[0], &mode) < 0 || check_tensor_arg("_pointwise_loss_backward", "grad", 2, a[1], false) < 0 ||
        check_tensor_arg("_pointwise_loss_backward", "input", 3, a[2], false) < 0 ||
        check_tensor_arg("_pointwise_loss_backward", "target", 4, a[3], false) < 0 ||
        check_tensor_arg("_pointwise_loss_backward", "weight", 5, a[4], true) < 0 ||
        check_tensor_arg("_pointwise_loss_backward", "pos_weight", 6, a[5], true) < 0 ||
        parse_reduction(a[6], &reduction) < 0 || ct_arg_double(a[7], &beta) < 0) {
        return NULL;
    }
    int64_t kind = mode & 15;
    if (kind < CT_LOSS_MSE || kind > CT_LOSS_BCE_LOGITS) {
        PyErr_SetString(PyExc_ValueError, "_pointwise_loss_backward: unknown loss kind");
        return NULL;
    }
    return pointwise_loss_backward((CtPointwiseLoss)kind, CT_TENSOR(a[1]), CT_TENSOR(a[2]), CT_TENSOR(a[3]),
                                   tensor_or_null(a[4]), tensor_or_null(a[5]), reduction, beta, (mode & 16) != 0,
                                   (mode & 32) != 0);
}

PyDoc_STRVAR(layer_norm_doc, "layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, "
                             "cudnn_enable=True) -> Tensor");
static PyObject *py_layer_norm(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "normalized_shape", "weight", "bias", "eps", "cudnn_enable", NULL};
    PyObject *a[6];
    int64_t nshape[CT_MAX_DIMS];
    double eps = 1e-5;
    if (ct_parse_args("layer_norm", args, nargs, kwnames, names, 2, a) < 0 ||
        check_tensor_arg("layer_norm", "input", 1, a[0], false) < 0 ||
        check_tensor_arg("layer_norm", "weight", 3, a[2], true) < 0 ||
        check_tensor_arg("layer_norm", "bias", 4, a[3], true) < 0 || ct_arg_double(a[4], &eps) < 0) {
        return NULL;
    }
    int nn = parse_normalized_shape(a[1], nshape);
    if (nn < 0) {
        return NULL;
    }
    return (PyObject *)ct_layer_norm(CT_TENSOR(a[0]), nn, nshape, tensor_or_null(a[2]), tensor_or_null(a[3]), eps);
}

PyDoc_STRVAR(layer_norm_backward_doc,
             "_layer_norm_backward(grad, input, normalized_shape, weight, bias, eps, mask=7) -> (grad_input, "
             "grad_weight, grad_bias); mask bits 1/2/4 ask for each of them");
static PyObject *py_layer_norm_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"grad", "input", "normalized_shape", "weight", "bias", "eps", "mask", NULL};
    PyObject *a[7];
    int64_t nshape[CT_MAX_DIMS];
    double eps = 1e-5;
    int64_t mask = 7;
    if (ct_parse_args("_layer_norm_backward", args, nargs, kwnames, names, 3, a) < 0 ||
        check_tensor_arg("_layer_norm_backward", "grad", 1, a[0], false) < 0 ||
        check_tensor_arg("_layer_norm_backward", "input", 2, a[1], false) < 0 ||
        check_tensor_arg("_layer_norm_backward", "weight", 4, a[3], true) < 0 ||
        check_tensor_arg("_layer_norm_backward", "bias", 5, a[4], true) < 0 || ct_arg_double(a[5], &eps) < 0 ||
        ct_arg_int64(a[6], &mask) < 0) {
        return NULL;
    }
    int nn = parse_normalized_shape(a[2], nshape);
    if (nn < 0) {
        return NULL;
    }
    bool want[3] = {(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0};
    return layer_norm_backward(CT_TENSOR(a[0]), CT_TENSOR(a[1]), nn, nshape, tensor_or_null(a[3]),
                               tensor_or_null(a[4]), eps, want);
}

PyDoc_STRVAR(embedding_doc, "embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False)");
static PyObject *py_embedding(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"weight", "indices", "padding_idx", "scale_grad_by_freq", "sparse", NULL};
    PyObject *a[5];
    int64_t padding_idx = -1;
    if (ct_parse_args("embedding", args, nargs, kwnames, names, 2, a) < 0 ||
        check_tensor_arg("embedding", "weight", 1, a[0], false) < 0 ||
        check_tensor_arg("embedding", "indices", 2, a[1], false) < 0 || ct_arg_int64(a[2], &padding_idx) < 0) {
        return NULL;
    }
    return (PyObject *)ct_embedding(CT_TENSOR(a[0]), CT_TENSOR(a[1]), padding_idx);
}

PyDoc_STRVAR(embedding_backward_doc,
             "_embedding_backward(grad, indices, num_weights, padding_idx=-1, scale_grad_by_freq=False)");
static PyObject *py_embedding_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"grad", "indices", "num_weights", "padding_idx", "scale_grad_by_freq", NULL};
    PyObject *a[5];
    int64_t num = 0, padding_idx = -1;
    bool scale = false;
    if (ct_parse_args("_embedding_backward", args, nargs, kwnames, names, 3, a) < 0 ||
        check_tensor_arg("_embedding_backward", "grad", 1, a[0], false) < 0 ||
        check_tensor_arg("_embedding_backward", "indices", 2, a[1], false) < 0 || ct_arg_int64(a[2], &num) < 0 ||
        ct_arg_int64(a[3], &padding_idx) < 0 || ct_arg_bool(a[4], &scale) < 0) {
        return NULL;
    }
    return (PyObject *)embedding_backward(CT_TENSOR(a[0]), CT_TENSOR(a[1]), num, padding_idx, scale);
}

PyDoc_STRVAR(leaky_relu_doc, "_leaky_relu(input, negative_slope=0.01) -> Tensor");
static PyObject *py_leaky_relu(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "negative_slope", NULL};
    PyObject *a[2];
    double slope = 0.01;
    if (ct_parse_args("leaky_relu", args, nargs, kwnames, names, 1, a) < 0 ||
        check_tensor_arg("leaky_relu", "input", 1, a[0], false) < 0 || ct_arg_double(a[1], &slope) < 0) {
        return NULL;
    }
    return (PyObject *)leaky_relu_impl(CT_TENSOR(a[0]), NULL, slope);
}

PyDoc_STRVAR(leaky_relu_backward_doc, "_leaky_relu_backward(grad, input, negative_slope) -> Tensor");
static PyObject *py_leaky_relu_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"grad", "input", "negative_slope", NULL};
    PyObject *a[3];
    double slope = 0.01;
    if (ct_parse_args("_leaky_relu_backward", args, nargs, kwnames, names, 2, a) < 0 ||
        check_tensor_arg("_leaky_relu_backward", "grad", 1, a[0], false) < 0 ||
        check_tensor_arg("_leaky_relu_backward", "input", 2, a[1], false) < 0 || ct_arg_double(a[2], &slope) < 0) {
        return NULL;
    }
    return (PyObject *)leaky_relu_impl(CT_TENSOR(a[1]), CT_TENSOR(a[0]), slope);
}

PyDoc_STRVAR(make_subclass_doc, "_make_subclass(cls, data, requires_grad=False): an instance of the Tensor subclass "
                                "cls sharing data's storage (a leaf).");
static PyObject *py_make_subclass(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"cls", "data", "requires_grad", NULL};
    PyObject *a[3];
    bool requires_grad = false;
    if (ct_parse_args("_make_subclass", args, nargs, kwnames, names, 2, a) < 0 || ct_arg_bool(a[2], &requires_grad) < 0 ||
        check_tensor_arg("_make_subclass", "data", 2, a[1], false) < 0) {
        return NULL;
    }
    if (!PyType_Check(a[0]) || !PyType_IsSubtype((PyTypeObject *)a[0], CtTensor_Type)) {
        PyErr_SetString(PyExc_TypeError, "_make_subclass(): cls must be a subclass of Tensor");
        return NULL;
    }
    PyTypeObject *cls = (PyTypeObject *)a[0];
    CtTensorObject *data = CT_TENSOR(a[1]);
    if (requires_grad && !ct_is_floating(data->dtype)) {
        PyErr_SetString(PyExc_RuntimeError, "Only Tensors of floating point and complex dtype can require gradients");
        return NULL;
    }
    CtTensorObject *t = (CtTensorObject *)cls->tp_alloc(cls, 0); /* zeroed and GC-tracked */
    if (t == NULL) {
        return NULL;
    }
    t->storage = (CtStorageObject *)Py_NewRef(data->storage);
    t->offset = data->offset;
    t->ndim = data->ndim;
    t->dtype = data->dtype;
    memcpy(t->sizes, data->sizes, sizeof(int64_t) * data->ndim);
    memcpy(t->strides, data->strides, sizeof(int64_t) * data->ndim);
    t->requires_grad = requires_grad;
    return (PyObject *)t;
}

/* --- nn.Module attribute lookup ------------------------------------------------------------------------
 * Module keeps parameters, buffers and submodules in three dicts that its Python __getattr__ searches.
 * CPython 3.11 reaches __getattr__ only after the generic lookup has built and raised an AttributeError,
 * which made `self.weight` cost more than the op it feeds. module_getattro is that same lookup without
 * the exception: the generic lookup first (a property raising AttributeError still falls through), then
 * Module.__getattr__'s three dicts when they are plain dicts, else the class's __getattr__ itself (for
 * its error). nn.Module installs it on each class whose __getattr__ is Module's (_module_fast_getattr);
 * assigning __getattr__ or __getattribute__ on a class later makes CPython put its own slot back. */
static PyObject *module_getattro(PyObject *self, PyObject *name)
{
#if PY_VERSION_HEX < 0x030E0000
    PyObject *r = _PyObject_GenericGetAttrWithDict(self, name, NULL, 1); /* no AttributeError built */
#else
    PyObject *r = PyObject_GenericGetAttr(self, name); /* the private call above is not promised past 3.13 */
#endif
    if (r != NULL) {
        return r;
    }
    if (PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return NULL;
        }
        PyErr_Clear();
    }
    PyObject *dict = PyObject_GenericGetDict(self, NULL);
    if (dict == NULL) {
        return NULL;
    }
    static const char *const stores[3] = {"_parameters", "_buffers", "_modules"};
    bool plain = PyDict_CheckExact(dict);
    for (int i = 0; i < 3 && plain && r == NULL; i++) {
        PyObject *store = PyDict_GetItemWithError(dict, ct_name(stores[i])); /* borrowed */
        if (store == NULL) {
            if (PyErr_Occurred()) {
                Py_DECREF(dict);
                return NULL;
            }
            continue;
        }
        if (!PyDict_CheckExact(store)) {
            plain = false;
            break;
        }
        r = Py_XNewRef(PyDict_GetItemWithError(store, name));
        if (r == NULL && PyErr_Occurred()) {
            Py_DECREF(dict);
            return NULL;
        }
    }
    Py_DECREF(dict);
    if (r != NULL) {
        return r;
    }
    PyObject *getattr = _PyType_Lookup(Py_TYPE(self), ct_name("__getattr__")); /* borrowed */
    if (getattr == NULL) {
        PyErr_Format(PyExc_AttributeError, "'%.100s' object has no attribute '%U'", Py_TYPE(self)->tp_name, name);
        return NULL;
    }
    PyObject *args[2] = {self, name};
    Py_INCREF(getattr);
    r = PyObject_Vectorcall(getattr, args, 2, NULL);
    Py_DECREF(getattr);
    return r;
}

PyDoc_STRVAR(module_fast_getattr_doc, "_module_fast_getattr(cls)\n\n"
                                      "Gives the nn.Module class cls the C attribute lookup of Module.__getattr__.");

static PyObject *py_module_fast_getattr(PyObject *self, PyObject *cls)
{
    if (!PyType_Check(cls) || !(((PyTypeObject *)cls)->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
        PyErr_SetString(PyExc_TypeError, "_module_fast_getattr(): expected a class");
        return NULL;
    }
    ((PyTypeObject *)cls)->tp_getattro = module_getattro;
    Py_RETURN_NONE;
}

PyMethodDef ct_nn_module_methods[] = {
    {"linear", CT_FASTCALL(py_linear), CT_METH_FK, linear_doc},
    {"_linear_mm", CT_FASTCALL(py_linear), CT_METH_FK, linear_doc},
    {"_linear_nd", CT_FASTCALL(py_linear), CT_METH_FK, linear_doc},
    {"_cross_entropy", CT_FASTCALL(py_cross_entropy), CT_METH_FK, cross_entropy_doc},
    {"_cross_entropy_ls", CT_FASTCALL(py_cross_entropy), CT_METH_FK, cross_entropy_doc},
    {"_cross_entropy_soft", CT_FASTCALL(py_cross_entropy), CT_METH_FK, cross_entropy_doc},
    {"_cross_entropy_soft_mean", CT_FASTCALL(py_cross_entropy), CT_METH_FK, cross_entropy_doc},
    {"_nll_loss", CT_FASTCALL(py_nll_loss), CT_METH_FK, nll_loss_doc},
    {"_nll_backward", CT_FASTCALL(py_nll_backward), CT_METH_FK, nll_backward_doc},
    {"_mse_loss", CT_FASTCALL(py_mse_loss), CT_METH_FK, pointwise_doc},
    {"_l1_loss", CT_FASTCALL(py_l1_loss), CT_METH_FK, pointwise_doc},
    {"_smooth_l1_loss", CT_FASTCALL(py_smooth_l1_loss), CT_METH_FK, pointwise_doc},
    {"_binary_cross_entropy", CT_FASTCALL(py_bce), CT_METH_FK, pointwise_doc},
    {"_binary_cross_entropy_with_logits", CT_FASTCALL(py_bce_logits), CT_METH_FK, pointwise_doc},
    {"_pointwise_loss_backward", CT_FASTCALL(py_pointwise_backward), CT_METH_FK, pointwise_backward_doc},
    {"layer_norm", CT_FASTCALL(py_layer_norm), CT_METH_FK, layer_norm_doc},
    {"_layer_norm_backward", CT_FASTCALL(py_layer_norm_backward), CT_METH_FK, layer_norm_backward_doc},
    {"embedding", CT_FASTCALL(py_embedding), CT_METH_FK, embedding_doc},
    {"_embedding_backward", CT_FASTCALL(py_embedding_backward), CT_METH_FK, embedding_backward_doc},
    {"_leaky_relu", CT_FASTCALL(py_leaky_relu), CT_METH_FK, leaky_relu_doc},
    {"_leaky_relu_backward", CT_FASTCALL(py_leaky_relu_backward), CT_METH_FK, leaky_relu_backward_doc},
    {"_make_subclass", CT_FASTCALL(py_make_subclass), CT_METH_FK, make_subclass_doc},
    {"_module_fast_getattr", py_module_fast_getattr, METH_O, module_fast_getattr_doc},
    {"_trunc_normal_transform_", CT_FASTCALL(py_trunc_normal_transform), CT_METH_FK, trunc_normal_doc},
    {NULL},
};
PyMethodDef ct_nn_tensor_methods[] = {{NULL}};
PyType_Slot ct_nn_tensor_slots[] = {{0, NULL}};

/* ====================================================================================================
 * backward formulas (listed in autograd_formulas.c). They call the ops through ct_op, so that with
 * create_graph=True the gradient computation is itself recorded.
 * ==================================================================================================== */
#define NN_NEEDS(e) (n->edge_nodes[(e)] != NULL)
#define NN_META(i) (&n->meta[(i)])
#define NN_ARG(i) (n->args[(i)] != NULL && n->args[(i)] != Py_None ? n->args[(i)] : NULL)

/* grad reduced to the shape and dtype of argument meta (broadcasting undone). New reference. */
static PyObject *fit_to(PyObject *grad, const CtTensorMeta *m)
{
    if (grad == NULL || grad == Py_None) {
        return NULL;
    }
    return ct_fit_grad(grad, m);
}

/* Saved tensor argument i (borrowed) or Py_None when absent; NULL with an error when freed. */
static PyObject *saved_or_none(CtNodeObject *n, int i)
{
    if (NN_ARG(i) == NULL) {
        return Py_None;
    }
    return n->meta[i].is_tensor ? (PyObject *)ct_node_tensor(n, i) : n->args[i];
}

static PyObject *arg_or(PyObject *v, PyObject *dflt) { return v != NULL ? v : dflt; }

static PyObject *call2(const char *name, PyObject *a, PyObject *b)
{
    PyObject *args[2] = {a, b};
    return ct_op(name, args, 2, NULL);
}

static PyObject *reshape2(PyObject *t, int64_t a, int64_t b)
{
    return ct_call_method(t, "reshape", "(LL)", (long long)a, (long long)b);
}

static PyObject *reshape_to(PyObject *t, const CtTensorMeta *m)
{
    PyObject *shape = ct_size_object(m->ndim, m->sizes);
    if (shape == NULL) {
        return NULL;
    }
    PyObject *r = ct_call_method(t, "reshape", "(O)", shape);
    Py_DECREF(shape);
    return r;
}

int ct_nn_bw_linear(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    const CtTensorMeta *mx = NN_META(0), *mw = NN_META(1);
    int64_t K = mx->sizes[mx->ndim - 1];
    int64_t N = mw->ndim == 2 ? mw->sizes[0] : 1;
    int64_t M = shape_numel(mx->ndim - 1, mx->sizes);
    int rc = -1;
    PyObject *g2 = NULL, *g2t = NULL, *w2 = NULL, *wt = NULL, *x2 = NULL, *x2t = NULL, *v = NULL;
    if ((g2 = reshape2(g[0], M, N)) == NULL) {
        goto done;
    }
    if (NN_NEEDS(0)) { /* grad_input = g @ W = linear(g, W^T) */
        PyObject *w = (PyObject *)ct_node_tensor(n, 1);
        if (w == NULL || (w2 = reshape2(w, N, K)) == NULL || (wt = ct_call_method(w2, "t", NULL)) == NULL ||
            (v = call2("linear", g2, wt)) == NULL || (gi[0] = reshape_to(v, mx)) == NULL) {
            goto done;
        }
        Py_CLEAR(v);
    }
    if (NN_NEEDS(1)) {
        if ((g2t = ct_call_method(g2, "t", NULL)) == NULL) {
            goto done;
        }
    }
    if (NN_NEEDS(1)) { /* grad_weight = g^T @ x = linear(g^T, x^T) */
        PyObject *x = (PyObject *)ct_node_tensor(n, 0);
        if (x == NULL || (x2 = reshape2(x, M, K)) == NULL || (x2t = ct_call_method(x2, "t", NULL)) == NULL ||
            (v = call2("linear", g2t, x2t)) == NULL || (gi[1] = reshape_to(v, mw)) == NULL) {
            goto done;
        }
        Py_CLEAR(v);
    }
    if (NN_NEEDS(2)) { /* grad_bias = sum over rows of g: one reduction */
        const CtTensorMeta *mb = NN_META(2);
        if (shape_numel(mb->ndim, mb->sizes) == M * N && M != 1) {
            gi[2] = fit_to(g2, mb); /* a full (M, N) bias */
        } else {
            if ((v = ct_call_method(g2, "sum", "(i)", 0)) == NULL) {
                goto done;
            }
            if (shape_numel(mb->ndim, mb->sizes) == N) {
                gi[2] = reshape_to(v, mb);
            } else {
                gi[2] = fit_to(v, mb);
            }
        }
        if (gi[2] == NULL) {
            goto done;
        }
    }
    rc = 0;
done:
    Py_XDECREF(g2);
    Py_XDECREF(g2t);
    Py_XDECREF(w2);
    Py_XDECREF(wt);
    Py_XDECREF(x2);
    Py_XDECREF(x2t);
    Py_XDECREF(v);
    return rc;
}

/* --- create_graph: the fused backward kernels are not differentiable themselves, so with
 * create_graph=True (grad mode on while the engine runs) the losses' gradients are composed from
 * recorded ctorch ops instead; a double backward then flows through them. ---------------------- */
static int64_t reduction_of(PyObject *obj)
{
    int r = CT_REDUCTION_MEAN;
    return obj == NULL || parse_reduction(obj, &r) == 0 ? r : -1;
}

/* zeros of m's shape in like's dtype and device (borrowed from the arena) */
static PyObject *arena_zeros(CtArena *arena, const CtTensorMeta *m, PyObject *like)
{
    if (arena->failed) {
        return NULL;
    }
    CtTensorObject *z = ct_empty(m->ndim, m->sizes, CT_TENSOR(like)->dtype, ct_device_of(CT_TENSOR(like)));
    CtScalar zero = {.kind = CT_KIND_FLOAT, .v.d = 0.0};
    if (z != NULL && ct_fill_(z, &zero) < 0) {
        Py_CLEAR(z);
    }
    return KEEP((PyObject *)z);
}

/* log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)) */
static PyObject *arena_log_sigmoid(CtArena *arena, PyObject *x)
{
    PyObject *m = METH(x, "clamp", "(OO)", Py_None, NUM(0.0));
    PyObject *e = METH(METH(METH(METH(x, "abs", NULL), "neg", NULL), "exp", NULL), "log1p", NULL);
    return SUB(m, e);
}

static int pointwise_loss_composite(CtNodeObject *n, PyObject *const *g, PyObject **gi, int kind, PyObject *x,
                                    PyObject *y, PyObject *w, PyObject *pw)
{
    int64_t red = reduction_of(NN_ARG(4));
    double beta = NN_ARG(5) ? PyFloat_AsDouble(NN_ARG(5)) : 1.0;
    if (red < 0 || PyErr_Occurred()) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *one = NUM(1.0), *zero = NUM(0.0);
    PyObject *d = SUB(x, y);
    PyObject *gx = NULL, *gy = NULL;
    switch (kind) {
    case CT_LOSS_MSE:
        gx = MUL(d, NUM(2.0));
        break;
    case CT_LOSS_L1:
        gx = METH(d, "sign", NULL);
        break;
    case CT_LOSS_SMOOTH_L1:
        gx = METH(d, "sign", NULL);
        if (beta > 0.0) {
            gx = WHERE(CMP(METH(d, "abs", NULL), NUM(beta), Py_LT), DIV(d, NUM(beta)), gx);
        }
        break;
    case CT_LOSS_BCE: {
        PyObject *den = METH(MUL(SUB(one, x), x), "clamp", "(O)", NUM(1e-12));
        gx = DIV(d, den);
        gy = SUB(METH(METH(x, "neg", NULL), "log1p", NULL), METH(x, "log", NULL));
        break;
    }
    default: { /* CT_LOSS_BCE_LOGITS */
        PyObject *py = pw != Py_None ? MUL(pw, y) : y;
        gx = SUB(MUL(ADD(SUB(py, y), one), METH(x, "sigmoid", NULL)), py);
        PyObject *ls = arena_log_sigmoid(arena, x), *lsn = arena_log_sigmoid(arena, METH(x, "neg", NULL));
        gy = SUB(lsn, pw != Py_None ? MUL(pw, ls) : ls);
        break;
    }
    }
    if (gy == NULL && !arena->failed) {
        gy = METH(gx, "neg", NULL);
    }
    if (w != Py_None) {
        gx = MUL(gx, w);
        gy = MUL(gy, w);
    }
    PyObject *scale = g[0];
    if (red == CT_REDUCTION_MEAN && !arena->failed) {
        /* the mean of weighted mse / l1 divides by the sum of the weights, every other by the count */
        PyObject *full = ADD(MUL(d, zero), w != Py_None ? MUL(w, zero) : zero);
        PyObject *count = (w != Py_None && (kind == CT_LOSS_MSE || kind == CT_LOSS_L1))
                              ? METH(ADD(full, w), "sum", NULL)
                              : METH(ADD(full, one), "sum", NULL);
        scale = DIV(g[0], count);
    }
    gx = MUL(gx, scale);
    gy = MUL(gy, scale);
    int rc = -1;
    if (arena->failed) {
        goto done;
    }
    if (NN_NEEDS(0) && (gi[0] = fit_to(gx, NN_META(0))) == NULL) {
        goto done;
    }
    if (NN_NEEDS(1) && (gi[1] = fit_to(gy, NN_META(1))) == NULL) {
        goto done;
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* cross_entropy (log_softmax + nll over dim 1) and nll_loss. With a_i the incoming gradient of
 * sample i (divided by the mean's denominator) and Q the loss's weights on the log-probabilities,
 * the input's gradient is softmax(x) sum_c(Q) - Q for cross_entropy and -Q for nll_loss. */
static int nll_composite(CtNodeObject *n, PyObject *const *g, PyObject **gi, bool is_nll, PyObject *x, PyObject *target,
                         PyObject *weight)
{
    int64_t red = reduction_of(NN_ARG(3));
    long long ignore = NN_ARG(4) ? PyLong_AsLongLong(NN_ARG(4)) : -100;
    double eps = !is_nll && NN_ARG(5) ? PyFloat_AsDouble(NN_ARG(5)) : 0.0;
    if (red < 0 || PyErr_Occurred()) {
        return -1;
    }
    CtTensorObject *xt = CT_TENSOR(x);
    bool soft = ct_is_floating(CT_TENSOR(target)->dtype);
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *G = g[0];
    if (xt->ndim == 1) { /* one sample: lift to a batch of one */
        x = METH(x, "unsqueeze", "(i)", 0);
        target = METH(target, "unsqueeze", "(i)", 0);
        if (red == CT_REDUCTION_NONE) {
            G = METH(G, "unsqueeze", "(i)", 0);
        }
    }
    int nd = xt->ndim == 1 ? 2 : xt->ndim;
    int64_t classes = xt->ndim == 1 ? xt->sizes[0] : xt->sizes[1];
    PyObject *one = NUM(1.0), *zero = NUM(0.0);
    PyObject *w = NULL; /* class weights shaped to broadcast along dim 1 */
    if (weight != Py_None) {
        int64_t shape[CT_MAX_DIMS];
        for (int i = 0; i < nd; i++) {
            shape[i] = i == 1 ? classes : 1;
        }
        PyObject *ws = KEEP(ct_size_object(nd, shape));
        w = METH(weight, "reshape", "(O)", ws);
    }
    PyObject *Q, *gt = NULL, *a;
    if (soft) {
        PyObject *T = target;
        if (eps > 0.0) {
            T = ADD(MUL(T, NUM(1.0 - eps)), NUM(eps / (double)classes));
        }
        PyObject *wT = w ? MUL(T, w) : T;
        a = red == CT_REDUCTION_NONE ? METH(G, "unsqueeze", "(i)", 1) : G;
        if (red == CT_REDUCTION_MEAN && !arena->failed) {
            a = DIV(a, NUM((double)(shape_numel(xt->ndim, xt->sizes) / (classes ? classes : 1))));
        }
        Q = MUL(wT, a);
        if (NN_NEEDS(1)) {
            PyObject *lsm = METH(x, "log_softmax", "(i)", 1);
            PyObject *gl = MUL(lsm, MUL(a, NUM(-(1.0 - eps))));
            gt = w ? MUL(gl, w) : gl;
        }
    } else {
        PyObject *ign = INT(ignore);
        PyObject *keep = CMP(target, ign, Py_NE);
        PyObject *tc = WHERE(keep, target, INT(0)); /* ignored -> class 0 */
        PyObject *tc1 = METH(tc, "unsqueeze", "(i)", 1);
        PyObject *m = METH(MASK(keep, x), "unsqueeze", "(i)", 1);   /* (N, 1, ...) */
        PyObject *onehot = METH(MUL(x, zero), "scatter", "(iOd)", 1, tc1, 1.0);
        PyObject *ws = w ? MUL(METH(MUL(onehot, w), "sum", "(iO)", 1, Py_True), m) : m;
        a = red == CT_REDUCTION_NONE ? METH(G, "unsqueeze", "(i)", 1) : G;
        if (red == CT_REDUCTION_MEAN) {
            a = DIV(a, METH(ws, "sum", NULL));
        }
        Q = MUL(MUL(onehot, ws), NUM(1.0 - eps));
        if (eps > 0.0) {
            PyObject *smooth = MUL(m, NUM(eps / (double)classes));
            Q = ADD(Q, w ? MUL(smooth, w) : MUL(smooth, ADD(MUL(x, zero), one)));
        }
        Q = MUL(Q, a);
    }
    PyObject *gx;
    if (is_nll) {
        gx = METH(Q, "neg", NULL);
    } else {
        PyObject *p = METH(x, "softmax", "(i)", 1);
        gx = SUB(MUL(p, METH(Q, "sum", "(iO)", 1, Py_True)), Q);
    }
    int rc = -1;
    if (arena->failed) {
        goto done;
    }
    if (NN_NEEDS(0) && (gi[0] = fit_to(gx, NN_META(0))) == NULL) {
        goto done;
    }
    if (!is_nll && soft && NN_NEEDS(1) && gt != NULL && (gi[1] = fit_to(gt, NN_META(1))) == NULL) {
        goto done;
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* cross_entropy / nll_loss: (input, target, weight, reduction, ignore_index[, label_smoothing]) */
static int bw_nll_common(CtNodeObject *n, PyObject *const *g, PyObject **gi, bool is_nll)
{
    PyObject *input = (PyObject *)ct_node_tensor(n, 0);
    PyObject *target = (PyObject *)ct_node_tensor(n, 1);
    PyObject *weight = saved_or_none(n, 2);
    if (input == NULL || target == NULL || weight == NULL) {
        return -1;
    }
    if (ct_grad_enabled) {
        return nll_composite(n, g, gi, is_nll, input, target, weight);
    }
    PyObject *one = PyLong_FromLong(1), *m100 = PyLong_FromLong(-100), *zero = PyFloat_FromDouble(0.0);
    PyObject *flags = PyLong_FromLong((is_nll ? 1 : 0) | (!is_nll && NN_NEEDS(1) ? 2 : 0));
    PyObject *res = NULL;
    if (one && m100 && zero && flags) {
        PyObject *args[8] = {g[0],
                             input,
                             target,
                             weight,
                             arg_or(NN_ARG(3), one),
                             arg_or(NN_ARG(4), m100),
                             is_nll ? zero : arg_or(NN_ARG(5), zero),
                             flags};
        res = ct_op("_nll_backward", args, 8, NULL);
    }
    Py_XDECREF(one);
    Py_XDECREF(m100);
    Py_XDECREF(zero);
    Py_XDECREF(flags);
    if (res == NULL) {
        return -1;
    }
    int rc = 0;
    if (NN_NEEDS(0) && (gi[0] = fit_to(PyTuple_GET_ITEM(res, 0), NN_META(0))) == NULL) {
        rc = -1;
    }
    if (rc == 0 && !is_nll && NN_NEEDS(1) && PyTuple_GET_ITEM(res, 1) != Py_None &&
        (gi[1] = fit_to(PyTuple_GET_ITEM(res, 1), NN_META(1))) == NULL) {
        rc = -1;
    }
    Py_DECREF(res);
    return rc;
}

int ct_nn_bw_cross_entropy(CtNodeObject *n, PyObject *const *g, PyObject **gi) { return bw_nll_common(n, g, gi, false); }
int ct_nn_bw_nll_loss(CtNodeObject *n, PyObject *const *g, PyObject **gi) { return bw_nll_common(n, g, gi, true); }

/* pointwise losses: (input, target, weight, pos_weight, reduction, beta) */
int ct_nn_bw_pointwise_loss(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    static const char *ops[] = {"_mse_loss", "_l1_loss", "_smooth_l1_loss", "_binary_cross_entropy",
                                "_binary_cross_entropy_with_logits"};
    int kind = 0;
    for (int i = 0; i < 5; i++) {
        if (strcmp(n->formula->op, ops[i]) == 0) {
            kind = i;
        }
    }
    PyObject *input = (PyObject *)ct_node_tensor(n, 0);
    PyObject *target = (PyObject *)ct_node_tensor(n, 1);
    PyObject *weight = saved_or_none(n, 2), *pos_weight = saved_or_none(n, 3);
    if (input == NULL || target == NULL || weight == NULL || pos_weight == NULL) {
        return -1;
    }
    if (ct_grad_enabled) {
        return pointwise_loss_composite(n, g, gi, kind, input, target, weight, pos_weight);
    }
    PyObject *k = PyLong_FromLong(kind | (NN_NEEDS(0) ? 16 : 0) | (NN_NEEDS(1) ? 32 : 0)), *one = PyLong_FromLong(1), *beta1 = PyFloat_FromDouble(1.0);
    PyObject *res = NULL;
    if (k && one && beta1) {
        PyObject *args[8] = {k, g[0], input, target, weight, pos_weight, arg_or(NN_ARG(4), one), arg_or(NN_ARG(5), beta1)};
        res = ct_op("_pointwise_loss_backward", args, 8, NULL);
    }
    Py_XDECREF(k);
    Py_XDECREF(one);
    Py_XDECREF(beta1);
    if (res == NULL) {
        return -1;
    }
    int rc = 0;
    for (int e = 0; e < 2 && rc == 0; e++) {
        if (NN_NEEDS(e) && (gi[e] = fit_to(PyTuple_GET_ITEM(res, e), NN_META(e))) == NULL) {
            rc = -1;
        }
    }
    Py_DECREF(res);
    return rc;
}

/* layer_norm with create_graph, from recorded ops: with xhat = (x - mean) rstd over the last k dims
 * and dy = g weight, dx = rstd (dy - mean(dy) - xhat mean(dy xhat)); dweight = sum g xhat, dbias = sum g. */
static int layer_norm_composite(CtNodeObject *n, PyObject *const *g, PyObject **gi, PyObject *x, PyObject *weight)
{
    int k = NN_META(2)->is_tensor ? NN_META(2)->ndim : (NN_META(3)->is_tensor ? NN_META(3)->ndim : -1);
    if (k < 0) { /* no affine parameters: the normalized shape's length */
        k = PyLong_Check(n->args[1]) ? 1 : (int)PySequence_Size(n->args[1]);
        if (k < 0) {
            return -1;
        }
    }
    double eps = NN_ARG(4) ? PyFloat_AsDouble(NN_ARG(4)) : 1e-5;
    if (PyErr_Occurred()) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *dims = KEEP(PyTuple_New(k));
    for (int i = 0; dims != NULL && i < k; i++) {
        PyTuple_SET_ITEM(dims, i, PyLong_FromLong(-1 - i));
    }
    PyObject *mean = METH(x, "mean", "(OO)", dims, Py_True);
    PyObject *c = SUB(x, mean);
    PyObject *var = METH(MUL(c, c), "mean", "(OO)", dims, Py_True);
    PyObject *rstd = METH(ADD(var, NUM(eps)), "rsqrt", NULL);
    PyObject *xhat = MUL(c, rstd);
    PyObject *dy = weight != Py_None ? MUL(g[0], weight) : g[0];
    PyObject *m1 = METH(dy, "mean", "(OO)", dims, Py_True);
    PyObject *m2 = METH(MUL(dy, xhat), "mean", "(OO)", dims, Py_True);
    int rc = -1;
    if (arena->failed) {
        goto done;
    }
    if (NN_NEEDS(0) &&
        (gi[0] = fit_to(MUL(rstd, SUB(SUB(dy, m1), MUL(xhat, m2))), NN_META(0))) == NULL) {
        goto done;
    }
    if (NN_NEEDS(1) && NN_META(2)->is_tensor && (gi[1] = fit_to(MUL(g[0], xhat), NN_META(2))) == NULL) {
        goto done;
    }
    if (NN_NEEDS(2) && NN_META(3)->is_tensor && (gi[2] = fit_to(g[0], NN_META(3))) == NULL) {
        goto done;
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* embedding with create_graph: the rows of g summed into the rows their indices pick (scatter_add,
 * recorded), the padding row left out and, with scale_grad_by_freq, each divided by its count. */
static int embedding_composite(CtNodeObject *n, PyObject *const *g, PyObject **gi, PyObject *indices)
{
    const CtTensorMeta *mw = NN_META(0);
    long long pad = NN_ARG(2) ? PyLong_AsLongLong(NN_ARG(2)) : -1;
    int scale = NN_ARG(3) ? PyObject_IsTrue(NN_ARG(3)) : 0;
    if (PyErr_Occurred() || mw->ndim != 2) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_RuntimeError, "embedding backward: weight must be 2-D");
        }
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *idx = METH(indices, "reshape", "(i)", -1);
    PyObject *G = METH(g[0], "reshape", "(iL)", -1, (long long)mw->sizes[1]);
    if (pad >= 0) {
        PyObject *keep = METH(MASK(CMP(idx, INT(pad), Py_NE), G), "unsqueeze", "(i)", 1);
        G = MUL(G, keep);
    }
    if (scale == 1) {
        CtTensorMeta rows = {.is_tensor = true, .ndim = 1, .dtype = mw->dtype, .device = mw->device,
                             .sizes = {mw->sizes[0]}};
        PyObject *ones = ADD(MUL(MASK(CMP(idx, idx, Py_EQ), G), NUM(0.0)), NUM(1.0));
        PyObject *counts = METH(arena_zeros(arena, &rows, G), "scatter_add", "(iOO)", 0, idx, ones);
        G = DIV(G, METH(METH(counts, "gather", "(iO)", 0, idx), "unsqueeze", "(i)", 1));
    }
    PyObject *idx2 = METH(METH(idx, "unsqueeze", "(i)", 1), "expand", "(iL)", -1, (long long)mw->sizes[1]);
    PyObject *v = METH(arena_zeros(arena, mw, G), "scatter_add", "(iOO)", 0, idx2, G);
    int rc = arena->failed || (gi[0] = fit_to(v, mw)) == NULL ? -1 : 0;
    arena_free(arena);
    return rc;
}

/* layer_norm: (input, normalized_shape, weight, bias, eps, cudnn_enable); edges input, weight, bias */
int ct_nn_bw_layer_norm(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *input = (PyObject *)ct_node_tensor(n, 0);
    PyObject *weight = saved_or_none(n, 2), *bias = saved_or_none(n, 3);
    if (input == NULL || weight == NULL || bias == NULL) {
        return -1;
    }
    if (ct_grad_enabled) {
        return layer_norm_composite(n, g, gi, input, weight);
    }
    PyObject *eps = PyFloat_FromDouble(1e-5);
    PyObject *mask = PyLong_FromLong((NN_NEEDS(0) ? 1 : 0) | (NN_NEEDS(1) ? 2 : 0) | (NN_NEEDS(2) ? 4 : 0));
    PyObject *res = NULL;
    if (eps != NULL && mask != NULL) {
        PyObject *args[7] = {g[0], input, n->args[1], weight, bias, arg_or(NN_ARG(4), eps), mask};
        res = ct_op("_layer_norm_backward", args, 7, NULL);
    }
    Py_XDECREF(eps);
    Py_XDECREF(mask);
    if (res == NULL) {
        return -1;
    }
    static const int meta_of_edge[3] = {0, 2, 3};
    int rc = 0;
    for (int e = 0; e < 3 && rc == 0; e++) {
        PyObject *v = PyTuple_GET_ITEM(res, e);
        if (NN_NEEDS(e) && v != Py_None && (gi[e] = fit_to(v, NN_META(meta_of_edge[e]))) == NULL) {
            rc = -1;
        }
    }
    Py_DECREF(res);
    return rc;
}

/* embedding: (weight, indices, padding_idx, scale_grad_by_freq, sparse) */
int ct_nn_bw_embedding(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *indices = (PyObject *)ct_node_tensor(n, 1);
    if (indices == NULL) {
        return -1;
    }
    if (ct_grad_enabled) {
        return embedding_composite(n, g, gi, indices);
    }
    PyObject *num = PyLong_FromLongLong(NN_META(0)->sizes[0]), *m1 = PyLong_FromLong(-1);
    PyObject *res = NULL;
    if (num && m1) {
        PyObject *args[5] = {g[0], indices, num, arg_or(NN_ARG(2), m1), arg_or(NN_ARG(3), Py_False)};
        res = ct_op("_embedding_backward", args, 5, NULL);
    }
    Py_XDECREF(num);
    Py_XDECREF(m1);
    if (res == NULL) {
        return -1;
    }
    gi[0] = fit_to(res, NN_META(0));
    Py_DECREF(res);
    return gi[0] ? 0 : -1;
}

/* _leaky_relu: (input, negative_slope); _leaky_relu_backward: (grad, input, negative_slope), linear
 * in grad, so its own gradient is the same function of the incoming gradient. */
int ct_nn_bw_leaky_relu(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    bool is_backward = strcmp(n->formula->op, "_leaky_relu_backward") == 0;
    int xi = is_backward ? 1 : 0;
    PyObject *x = (PyObject *)ct_node_tensor(n, xi);
    if (x == NULL) {
        return -1;
    }
    PyObject *slope = PyFloat_FromDouble(0.01);
    if (slope == NULL) {
        return -1;
    }
    PyObject *args[3] = {g[0], x, arg_or(NN_ARG(xi + 1), slope)};
    PyObject *res = ct_op("_leaky_relu_backward", args, 3, NULL);
    Py_DECREF(slope);
    if (res == NULL) {
        return -1;
    }
    gi[0] = fit_to(res, NN_META(0));
    Py_DECREF(res);
    return gi[0] ? 0 : -1;
}

/* --- helpers shared with norm.c (declared in nn.h) --------------------------------------------------- */
const struct CtNNKernels *ct_nn_kernels(CtDevice device) { return nn_kernels(device); }
CtTensorObject *ct_nn_dense(CtTensorObject *t, CtDType dtype) { return dense(t, dtype); }
int ct_nn_check_tensor_arg(const char *fname, const char *argname, int pos, PyObject *obj, bool optional)
{
    return check_tensor_arg(fname, argname, pos, obj, optional);
}
void ct_nn_load_row(CtDType dtype, const void *base, int64_t start, int64_t stride, int64_t n, double *out)
{
    load_row(dtype, base, start, stride, n, out);
}
void ct_nn_store_row(CtDType dtype, void *base, int64_t start, int64_t stride, int64_t n, const double *in)
{
    store_row(dtype, base, start, stride, n, in);
}
