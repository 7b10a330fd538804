/* norm.c: batch norm and group norm (nn.h's CtChannelNormDesc, norm_math.h's unit layout).
 *
 * _C.batch_norm / _C.group_norm (torch.batch_norm's and torch.group_norm's signatures)
 * check their arguments with PyTorch's messages, view the input as dense (N, C, L) and call the device's
 * CtNNKernels.channel_norm; batch norm's running statistics are updated in place by the kernel.
 * _C._batch_norm_backward / _C._group_norm_backward call channel_norm_backward; they are what the
 * NativeBatchNormBackward0 / NativeGroupNormBackward0 nodes run (the formulas are at the end; with
 * create_graph they compose the gradient of recorded ops instead). The CPU kernels are here. */
#include "nn.h"
#include "norm_math.h"
#include "args.h"
#include "autograd.h"
#include "autograd_arena.h"
#include "creation.h"
#include "device.h"
#include "dtype.h"
#include "parallel.h"
#include "registry.h"
#include "tensor.h"
#include <math.h>
#include <string.h>

static CtTensorObject *tensor_or_null(PyObject *obj)
{
    return obj == NULL || obj == Py_None ? NULL : CT_TENSOR(obj);
}

/* ====================================================================================================
 * argument checks
 * ==================================================================================================== */
/* The dtype of the affine parameters and running statistics (NULL entries skipped): the input's, or
 * float32 for float16 / bfloat16 input, every one the same, else PyTorch's RuntimeError. */
int ct_nn_check_param_dtype(CtDType in, CtTensorObject *const *params, int n, CtDType *out)
{
    CtDType pd = in;
    for (int i = n - 1; i >= 0; i--) {
        pd = params[i] ? params[i]->dtype : pd;
    }
    bool mixed = pd != in;
    const char *mixed_msg = in == CT_F64 ? "mixed dtype (CPU): all inputs must share same datatype."
                                         : "mixed dtype (CPU): expect parameter to have scalar type of Float";
    if (mixed && !((in == CT_F16 || in == CT_BF16) && pd == CT_F32)) {
        PyErr_SetString(PyExc_RuntimeError, mixed_msg);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (params[i] != NULL && params[i]->dtype != pd) {
            if (mixed) {
                PyErr_SetString(PyExc_RuntimeError, mixed_msg);
            } else {
                PyErr_Format(PyExc_RuntimeError, "expected scalar type %s but found %s", ct_scalar_type_name(in),
                             ct_scalar_type_name(params[i]->dtype));
            }
            return -1;
        }
    }
    *out = pd;
    return 0;
}

static int check_float_input(const CtTensorObject *input, const char *kernel)
{
    if (!ct_is_floating(input->dtype)) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", kernel,
                     ct_scalar_type_name(input->dtype));
        return -1;
    }
    return 0;
}

/* The shape checks of batch norm's per-channel tensors (names[i] for ts[i], NULL entries skipped). */
static int check_channel_tensors(int64_t C, CtTensorObject *const *ts, const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        if (ts[i] == NULL) {
            continue;
        }
        if (ct_numel(ts[i]) != C) {
            PyErr_Format(PyExc_RuntimeError, "%s should contain %lld elements not %lld", names[i], (long long)C,
                         (long long)ct_numel(ts[i]));
            return -1;
        }
        if (ts[i]->ndim != 1) {
            PyErr_Format(PyExc_RuntimeError, "TensorAccessor expected 1 dims but tensor has %d", ts[i]->ndim);
            return -1;
        }
    }
    return 0;
}

/* Batch norm's checks; fills d's shape, mode and dtypes (pointers are set by the caller). */
static int batch_norm_check(CtTensorObject *input, CtTensorObject *weight, CtTensorObject *bias,
                            CtTensorObject *running_mean, CtTensorObject *running_var, bool training,
                            CtChannelNormDesc *d)
{
    if (input->ndim < 2) {
        PyErr_Format(PyExc_IndexError, "Dimension out of range (expected to be in range of [%d, %d], but got 1)",
                     input->ndim ? -input->ndim : -1, input->ndim ? input->ndim - 1 : 0);
        return -1;
    }
    int64_t C = input->sizes[1];
    /* PyTorch's order: the running stats before the affine ones */
    if (!training && (running_mean == NULL || running_var == NULL)) {
        PyErr_Format(PyExc_RuntimeError, "%s must be defined in evaluation mode",
                     running_mean == NULL ? "running_mean" : "running_var");
        return -1;
    }
    CtTensorObject *stats_first[4] = {running_mean, running_var, weight, bias};
    static const char *const names[4] = {"running_mean", "running_var", "weight", "bias"};
    if (check_channel_tensors(C, stats_first, names, 4) < 0) {
        return -1;
    }
    CtTensorObject *ts[4] = {weight, bias, running_mean, running_var};
    if ((running_mean == NULL) != (running_var == NULL)) {
        PyErr_SetString(PyExc_ValueError, "running_mean and running_var must either both be None or neither be None");
        return -1;
    }
    if (check_float_input(input, "batch_norm") < 0 ||
        ct_nn_check_param_dtype(input->dtype, ts, 4, &d->param_dtype) < 0) {
        return -1;
    }
    CtDevice device;
    CtTensorObject *devs[5] = {input, weight, bias, running_mean, running_var};
    if (ct_check_same_device(5, devs, false, &device) < 0) {
        return -1;
    }
    d->dtype = input->dtype;
    d->device = device;
    d->N = input->sizes[0];
    d->C = C;
    d->L = 1;
    for (int i = 2; i < input->ndim; i++) {
        d->L *= input->sizes[i];
    }
    d->groups = 0;
    d->use_input_stats = training;
    return 0;
}

static int group_norm_check(CtTensorObject *input, int64_t groups, CtTensorObject *weight, CtTensorObject *bias,
                            CtChannelNormDesc *d)
{
    char si[160], sp[160];
    if (input->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "Expected at least 2 dimensions for input tensor but received %d",
                     input->ndim);
        return -1;
    }
    int64_t N = input->sizes[0], C = input->sizes[1];
    if (groups <= 0) {
        PyErr_Format(PyExc_RuntimeError, "Expected num groups to be greater than 0, got %lld", (long long)groups);
        return -1;
    }
    ct_format_sizes(si, sizeof(si), input->ndim, input->sizes);
    if (C % groups != 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected number of channels in input to be divisible by num_groups, but got input of shape %s "
                     "and num_groups=%lld",
                     si, (long long)groups);
        return -1;
    }
    CtTensorObject *wb[2] = {weight, bias};
    for (int i = 0; i < 2; i++) {
        if (wb[i] != NULL && (wb[i]->ndim != 1 || wb[i]->sizes[0] != C)) {
            ct_format_sizes(sp, sizeof(sp), wb[i]->ndim, wb[i]->sizes);
            PyErr_Format(PyExc_RuntimeError,
                         "Expected %s to be a vector of size equal to the number of channels in input, but got %s of "
                         "shape %s and input of shape %s",
                         i ? "bias" : "weight", i ? "bias" : "weight", sp, si);
            return -1;
        }
    }
    int64_t L = 1;
    for (int i = 2; i < input->ndim; i++) {
        L *= input->sizes[i];
    }
    if (N > 0 && L == 0) {
        PyErr_SetString(PyExc_RuntimeError, "Expected HxW to be greater than 0, got 0");
        return -1;
    }
    if (check_float_input(input, "GroupNormKernelImpl") < 0 ||
        ct_nn_check_param_dtype(input->dtype, wb, 2, &d->param_dtype) < 0) {
        return -1;
    }
    CtDevice device;
    CtTensorObject *devs[3] = {input, weight, bias};
    if (ct_check_same_device(3, devs, false, &device) < 0) {
        return -1;
    }
    d->dtype = input->dtype;
    d->device = device;
    d->N = N;
    d->C = C;
    d->L = L;
    d->groups = groups;
    d->use_input_stats = true;
    return 0;
}

/* ====================================================================================================
 * front ends
 * ==================================================================================================== */
/* The operands of one call, made dense; released by operands_free. Running statistics that are not
 * contiguous are computed in dense copies (copied back by operands_finish). */
typedef struct {
    CtTensorObject *x, *w, *b, *rm, *rv, *g;
    CtTensorObject *rm_target, *rv_target; /* the caller's running statistics */
} NormOperands;

static void operands_free(NormOperands *o)
{
    Py_XDECREF(o->x);
    Py_XDECREF(o->w);
    Py_XDECREF(o->b);
    Py_XDECREF(o->rm);
    Py_XDECREF(o->rv);
    Py_XDECREF(o->g);
}

static int operands_init(NormOperands *o, CtChannelNormDesc *d, CtTensorObject *input, CtTensorObject *weight,
                         CtTensorObject *bias, CtTensorObject *running_mean, CtTensorObject *running_var,
                         CtTensorObject *grad)
{
    memset(o, 0, sizeof(*o));
    o->rm_target = running_mean;
    o->rv_target = running_var;
    if ((o->x = ct_nn_dense(input, input->dtype)) == NULL ||
        (weight && (o->w = ct_nn_dense(weight, d->param_dtype)) == NULL) ||
        (bias && (o->b = ct_nn_dense(bias, d->param_dtype)) == NULL) ||
        (running_mean && (o->rm = ct_nn_dense(running_mean, d->param_dtype)) == NULL) ||
        (running_var && (o->rv = ct_nn_dense(running_var, d->param_dtype)) == NULL)) {
        return -1;
    }
    if (grad != NULL) {
        if (grad->ndim != input->ndim || memcmp(grad->sizes, input->sizes, sizeof(int64_t) * input->ndim) != 0) {
            char sg[160], sx[160];
            ct_format_sizes(sg, sizeof(sg), grad->ndim, grad->sizes);
            ct_format_sizes(sx, sizeof(sx), input->ndim, input->sizes);
            PyErr_Format(PyExc_RuntimeError, "grad_out of shape %s does not match input of shape %s", sg, sx);
            return -1;
        }
        CtTensorObject *pair[2] = {grad, input};
        CtDevice dev;
        if (ct_check_same_device(2, pair, false, &dev) < 0 || (o->g = ct_nn_dense(grad, input->dtype)) == NULL) {
            return -1;
        }
        d->grad_out = ct_data(o->g);
    }
    d->x = ct_data(o->x);
    d->weight = o->w ? ct_data(o->w) : NULL;
    d->bias = o->b ? ct_data(o->b) : NULL;
    d->running_mean = o->rm ? ct_data(o->rm) : NULL;
    d->running_var = o->rv ? ct_data(o->rv) : NULL;
    return 0;
}

/* After a forward that updated the running statistics: copies them back where they were dense
 * copies, and bumps their versions. */
static int operands_finish(NormOperands *o)
{
    CtTensorObject *dense[2] = {o->rm, o->rv}, *target[2] = {o->rm_target, o->rv_target};
    for (int i = 0; i < 2; i++) {
        if (target[i] == NULL) {
            continue;
        }
        if (dense[i] != target[i] && ct_copy_(target[i], dense[i]) < 0) {
            return -1;
        }
        ct_bump_version(target[i]);
    }
    return 0;
}

/* Runs the forward kernel of d over the operands; a new output tensor shaped as input. */
static CtTensorObject *channel_norm_forward(CtChannelNormDesc *d, CtTensorObject *input, CtTensorObject *weight,
                                            CtTensorObject *bias, CtTensorObject *running_mean,
                                            CtTensorObject *running_var)
{
    NormOperands o;
    CtTensorObject *out = NULL, *result = NULL;
    const struct CtNNKernels *k = ct_nn_kernels(d->device);
    if (k == NULL) {
        return NULL;
    }
    if (k->channel_norm == NULL) {
        PyErr_SetString(PyExc_NotImplementedError, "ctorch: batch_norm / group_norm kernels are not available");
        return NULL;
    }
    if (operands_init(&o, d, input, weight, bias, running_mean, running_var, NULL) < 0) {
        goto done;
    }
    if ((out = ct_empty(input->ndim, input->sizes, input->dtype, d->device)) == NULL) {
        goto done;
    }
    d->out = ct_data(out);
    if (ct_numel(input) > 0 && k->channel_norm(d) < 0) {
        goto done;
    }
    if (d->groups == 0 && d->use_input_stats && d->running_mean != NULL && ct_numel(input) > 0 &&
        operands_finish(&o) < 0) {
        goto done;
    }
    result = ct_as_memory_format(out, ct_suggest_memory_format(input)); /* PyTorch keeps input's layout */
    out = NULL;
done:
    operands_free(&o);
    Py_XDECREF(out);
    return result;
}

/* A new tuple (grad_input, grad_weight, grad_bias), None where not wanted (want: a bit mask). */
static PyObject *channel_norm_backward(CtChannelNormDesc *d, CtTensorObject *grad, CtTensorObject *input,
                                       CtTensorObject *weight, CtTensorObject *running_mean,
                                       CtTensorObject *running_var, int64_t want)
{
    NormOperands o;
    CtTensorObject *gi = NULL, *gw = NULL, *gb = NULL;
    PyObject *result = NULL;
    const struct CtNNKernels *k = ct_nn_kernels(d->device);
    if (k == NULL) {
        return NULL;
    }
    if (k->channel_norm_backward == NULL) {
        PyErr_SetString(PyExc_NotImplementedError, "ctorch: batch_norm / group_norm kernels are not available");
        return NULL;
    }
    if (operands_init(&o, d, input, weight, NULL, running_mean, running_var, grad) < 0) {
        goto done;
    }
    if ((want & 1) && (gi = ct_empty(input->ndim, input->sizes, input->dtype, d->device)) == NULL) {
        goto done;
    }
    if ((want & 2) && (gw = ct_empty(1, &d->C, d->param_dtype, d->device)) == NULL) {
        goto done;
    }
    if ((want & 4) && (gb = ct_empty(1, &d->C, d->param_dtype, d->device)) == NULL) {
        goto done;
    }
    d->grad_input = gi ? ct_data(gi) : NULL;
    d->grad_weight = gw ? ct_data(gw) : NULL;
    d->grad_bias = gb ? ct_data(gb) : NULL;
    if (d->C > 0 && k->channel_norm_backward(d) < 0) {
        goto done;
    }
    if (gi != NULL && (gi = ct_as_memory_format(gi, ct_suggest_memory_format(input))) == NULL) {
        goto done;
    }
    result = PyTuple_Pack(3, gi ? (PyObject *)gi : Py_None, gw ? (PyObject *)gw : Py_None,
                          gb ? (PyObject *)gb : Py_None);
done:
    operands_free(&o);
    Py_XDECREF(gi);
    Py_XDECREF(gw);
    Py_XDECREF(gb);
    return result;
}

/* ====================================================================================================
 * CPU kernels: one task per statistics unit or channel, each summing its values in a fixed order in
 * double (deterministic for any thread count), then elementwise passes over (n, c) rows of L.
 * ==================================================================================================== */
typedef struct {
    const CtChannelNormDesc *d;
    double *w, *b;     /* C each: the affine parameters (1 and 0 when absent) */
    double *stats;     /* 2 per unit: mean, invstd */
    double *unit_sums; /* backward with batch statistics: 2 per unit: sum dy, sum dy xhat */
    double *chan_sums; /* backward: 2 per channel: sum g xhat, sum g */
    int failed;
} CpuNorm;

static double *row_buffer(CpuNorm *cx, int64_t n)
{
    double *buf = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (buf == NULL) {
        cx->failed = 1;
    }
    return buf;
}

/* mean and invstd of each unit (running statistics when not use_input_stats), updating the running
 * statistics in the forward */
static void cpu_unit_stats(int64_t begin, int64_t end, void *p)
{
    CpuNorm *cx = (CpuNorm *)p;
    const CtChannelNormDesc *d = cx->d;
    double *buf = row_buffer(cx, d->L);
    if (buf == NULL) {
        return;
    }
    for (int64_t u = begin; u < end; u++) {
        if (!d->use_input_stats) {
            double rm, rv;
            ct_nn_load_row(d->param_dtype, d->running_mean, u, 1, 1, &rm);
            ct_nn_load_row(d->param_dtype, d->running_var, u, 1, 1, &rv);
            cx->stats[2 * u] = rm;
            cx->stats[2 * u + 1] = 1.0 / sqrt(rv + d->eps);
            continue;
        }
        CtNormSegments s = ct_norm_unit(d, u);
        double M = (double)(s.count * d->L), sum = 0.0, sq = 0.0;
        for (int64_t k = 0; k < s.count; k++) {
            ct_nn_load_row(d->dtype, d->x, s.first + k * s.step, 1, d->L, buf);
            for (int64_t l = 0; l < d->L; l++) {
                sum += buf[l];
            }
        }
        double mean = sum / M;
        for (int64_t k = 0; k < s.count; k++) {
            ct_nn_load_row(d->dtype, d->x, s.first + k * s.step, 1, d->L, buf);
            for (int64_t l = 0; l < d->L; l++) {
                sq += (buf[l] - mean) * (buf[l] - mean);
            }
        }
        double var = sq / M; /* biased: what the batch is normalised with */
        cx->stats[2 * u] = mean;
        cx->stats[2 * u + 1] = 1.0 / sqrt(var + d->eps);
        if (d->out != NULL && d->groups == 0 && d->running_mean != NULL) { /* the forward */
            double rm, rv;
            ct_nn_load_row(d->param_dtype, d->running_mean, u, 1, 1, &rm);
            ct_nn_load_row(d->param_dtype, d->running_var, u, 1, 1, &rv);
            rm = ct_norm_running(rm, mean, d->momentum);
            rv = ct_norm_running(rv, sq / (M - 1.0), d->momentum); /* unbiased */
            ct_nn_store_row(d->param_dtype, d->running_mean, u, 1, 1, &rm);
            ct_nn_store_row(d->param_dtype, d->running_var, u, 1, 1, &rv);
        }
    }
    free(buf);
}

/* out rows (n, c) = xhat w[c] + b[c] */
static void cpu_apply_rows(int64_t begin, int64_t end, void *p)
{
    CpuNorm *cx = (CpuNorm *)p;
    const CtChannelNormDesc *d = cx->d;
    double *buf = row_buffer(cx, d->L);
    if (buf == NULL) {
        return;
    }
    for (int64_t r = begin; r < end; r++) {
        int64_t n = r / d->C, c = r % d->C, u = ct_norm_unit_of(d, n, c);
        double mean = cx->stats[2 * u], invstd = cx->stats[2 * u + 1];
        ct_nn_load_row(d->dtype, d->x, r * d->L, 1, d->L, buf);
        for (int64_t l = 0; l < d->L; l++) {
            buf[l] = (buf[l] - mean) * invstd * cx->w[c] + cx->b[c];
        }
        ct_nn_store_row(d->dtype, d->out, r * d->L, 1, d->L, buf);
    }
    free(buf);
}

/* Sums over segments s: acc[0] = sum dy, acc[1] = sum dy xhat, with dy = g w[c] (by_channel_of_segment)
 * or g, and each segment's statistics those of its unit. */
static void cpu_segment_sums(CpuNorm *cx, const CtNormSegments *s, bool by_channel_of_segment, double *gbuf,
                             double *xbuf, double *acc)
{
    const CtChannelNormDesc *d = cx->d;
    acc[0] = acc[1] = 0.0;
    for (int64_t k = 0; k < s->count && d->L > 0; k++) {
        int64_t start = s->first + k * s->step;
        int64_t row = start / d->L, n = row / d->C, c = row % d->C;
        int64_t u = ct_norm_unit_of(d, n, c);
        double mean = cx->stats[2 * u], invstd = cx->stats[2 * u + 1];
        double scale = by_channel_of_segment ? cx->w[c] : 1.0;
        ct_nn_load_row(d->dtype, d->grad_out, start, 1, d->L, gbuf);
        ct_nn_load_row(d->dtype, d->x, start, 1, d->L, xbuf);
        for (int64_t l = 0; l < d->L; l++) {
            double dy = gbuf[l] * scale;
            acc[0] += dy;
            acc[1] += dy * (xbuf[l] - mean) * invstd;
        }
    }
}

/* by_unit: per unit, sum dy and sum dy xhat (dy = g w[c]) into unit_sums; else per channel, sum g
 * and sum g xhat into chan_sums. */
static void cpu_sums(CpuNorm *cx, int64_t begin, int64_t end, bool by_unit)
{
    double *buf = row_buffer(cx, 2 * cx->d->L);
    if (buf == NULL) {
        return;
    }
    for (int64_t k = begin; k < end; k++) {
        CtNormSegments s = by_unit ? ct_norm_unit(cx->d, k) : ct_norm_channel(cx->d, k);
        cpu_segment_sums(cx, &s, by_unit, buf, buf + cx->d->L, (by_unit ? cx->unit_sums : cx->chan_sums) + 2 * k);
    }
    free(buf);
}

static void cpu_unit_sums(int64_t begin, int64_t end, void *p) { cpu_sums((CpuNorm *)p, begin, end, true); }
static void cpu_channel_sums(int64_t begin, int64_t end, void *p) { cpu_sums((CpuNorm *)p, begin, end, false); }

static void cpu_grad_input_rows(int64_t begin, int64_t end, void *p)
{
    CpuNorm *cx = (CpuNorm *)p;
    const CtChannelNormDesc *d = cx->d;
    double *buf = row_buffer(cx, 2 * d->L);
    if (buf == NULL) {
        return;
    }
    double *g = buf, *x = buf + d->L;
    for (int64_t r = begin; r < end; r++) {
        int64_t n = r / d->C, c = r % d->C, u = ct_norm_unit_of(d, n, c);
        CtNormSegments s = ct_norm_unit(d, u);
        double M = (double)(s.count * d->L);
        double mean = cx->stats[2 * u], invstd = cx->stats[2 * u + 1];
        double s1 = cx->unit_sums ? cx->unit_sums[2 * u] : 0.0, s2 = cx->unit_sums ? cx->unit_sums[2 * u + 1] : 0.0;
        ct_nn_load_row(d->dtype, d->grad_out, r * d->L, 1, d->L, g);
        ct_nn_load_row(d->dtype, d->x, r * d->L, 1, d->L, x);
        for (int64_t l = 0; l < d->L; l++) {
            g[l] = ct_norm_grad_input(d->use_input_stats, g[l] * cx->w[c], (x[l] - mean) * invstd, invstd, s1, s2, M);
        }
        ct_nn_store_row(d->dtype, d->grad_input, r * d->L, 1, d->L, g);
    }
    free(buf);
}

/* The scratch of one call: affine parameters widened to double, statistics and sums. */
static int cpu_norm_init(CpuNorm *cx, const CtChannelNormDesc *d, bool backward)
{
    int64_t units = ct_norm_units(d);
    memset(cx, 0, sizeof(*cx));
    cx->d = d;
    size_t nd = (size_t)(2 * d->C + 2 * units + (backward ? 2 * units + 2 * d->C : 0));
    cx->w = PyMem_RawMalloc(sizeof(double) * (nd ? nd : 1));
    if (cx->w == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    cx->b = cx->w + d->C;
    cx->stats = cx->b + d->C;
    if (backward) {
        cx->unit_sums = d->use_input_stats && d->grad_input ? cx->stats + 2 * units : NULL;
        cx->chan_sums = cx->stats + 4 * units;
    }
    for (int64_t c = 0; c < d->C; c++) {
        cx->w[c] = 1.0;
        cx->b[c] = 0.0;
    }
    if (d->weight) {
        ct_nn_load_row(d->param_dtype, d->weight, 0, 1, d->C, cx->w);
    }
    if (d->bias) {
        ct_nn_load_row(d->param_dtype, d->bias, 0, 1, d->C, cx->b);
    }
    return 0;
}

static int cpu_norm_done(CpuNorm *cx)
{
    PyMem_RawFree(cx->w);
    if (cx->failed) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static int64_t grain_of(int64_t work_per_task) { return work_per_task >= 4096 ? 1 : 4096 / (work_per_task + 1) + 1; }

static int cpu_channel_norm(const CtChannelNormDesc *d)
{
    CpuNorm cx;
    if (cpu_norm_init(&cx, d, false) < 0) {
        return -1;
    }
    int64_t units = ct_norm_units(d), rows = d->N * d->C;
    ct_parallel_for(units, grain_of(rows * d->L / (units ? units : 1)), cpu_unit_stats, &cx);
    if (!cx.failed) {
        ct_parallel_for(rows, grain_of(d->L), cpu_apply_rows, &cx);
    }
    return cpu_norm_done(&cx);
}

static int cpu_channel_norm_backward(const CtChannelNormDesc *d)
{
    CpuNorm cx;
    if (cpu_norm_init(&cx, d, true) < 0) {
        return -1;
    }
    int64_t units = ct_norm_units(d), rows = d->N * d->C, numel = rows * d->L;
    ct_parallel_for(units, grain_of(numel / (units ? units : 1)), cpu_unit_stats, &cx);
    if (!cx.failed && cx.unit_sums) {
        ct_parallel_for(units, grain_of(numel / (units ? units : 1)), cpu_unit_sums, &cx);
    }
    if (!cx.failed && d->grad_input) {
        ct_parallel_for(rows, grain_of(d->L), cpu_grad_input_rows, &cx);
    }
    if (!cx.failed && (d->grad_weight || d->grad_bias)) {
        ct_parallel_for(d->C, grain_of(d->N * d->L), cpu_channel_sums, &cx);
        for (int64_t c = 0; c < d->C && !cx.failed; c++) {
            if (d->grad_weight) {
                ct_nn_store_row(d->param_dtype, d->grad_weight, c, 1, 1, &cx.chan_sums[2 * c + 1]);
            }
            if (d->grad_bias) {
                ct_nn_store_row(d->param_dtype, d->grad_bias, c, 1, 1, &cx.chan_sums[2 * c]);
            }
        }
    }
    return cpu_norm_done(&cx);
}

int ct_cpu_channel_norm(const CtChannelNormDesc *d) { return cpu_channel_norm(d); }
int ct_cpu_channel_norm_backward(const CtChannelNormDesc *d) { return cpu_channel_norm_backward(d); }

/* ====================================================================================================
 * Python entry points
 * ==================================================================================================== */
PyDoc_STRVAR(batch_norm_doc,
             "batch_norm(input, weight=None, bias=None, running_mean=None, running_var=None, training=False, "
             "momentum=0.1, eps=1e-05, cudnn_enabled=True) -> Tensor\n\nBatch normalisation over dim 1 of (N, C, *) "
             "input (torch.batch_norm; cudnn_enabled is accepted and has no effect: ctorch has one implementation); "
             "in training the running statistics (when given) are updated in place.");
static PyObject *py_batch_norm(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "weight", "bias", "running_mean", "running_var", "training",
                                        "momentum", "eps", "cudnn_enabled", NULL};
    const char *fname = "batch_norm";
    PyObject *a[9];
    bool training = false, cudnn = true;
    CtChannelNormDesc d = {.momentum = 0.1, .eps = 1e-5};
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0 ||
        ct_nn_check_tensor_arg(fname, "input", 1, a[0], false) < 0 ||
        ct_nn_check_tensor_arg(fname, "weight", 2, a[1], true) < 0 ||
        ct_nn_check_tensor_arg(fname, "bias", 3, a[2], true) < 0 ||
        ct_nn_check_tensor_arg(fname, "running_mean", 4, a[3], true) < 0 ||
        ct_nn_check_tensor_arg(fname, "running_var", 5, a[4], true) < 0 || ct_arg_bool(a[5], &training) < 0 ||
        ct_arg_double(a[6], &d.momentum) < 0 || ct_arg_double(a[7], &d.eps) < 0 || ct_arg_bool(a[8], &cudnn) < 0) {
        return NULL;
    }
    CtTensorObject *input = CT_TENSOR(a[0]), *weight = tensor_or_null(a[1]), *bias = tensor_or_null(a[2]);
    CtTensorObject *rm = tensor_or_null(a[3]), *rv = tensor_or_null(a[4]);
    if (batch_norm_check(input, weight, bias, rm, rv, training, &d) < 0) {
        return NULL;
    }
    return (PyObject *)channel_norm_forward(&d, input, weight, bias, rm, rv);
}

PyDoc_STRVAR(batch_norm_backward_doc,
             "_batch_norm_backward(grad, input, weight, running_mean, running_var, training, eps, mask=7) -> "
             "(grad_input, grad_weight, grad_bias)\n\nmask bits: 1 grad_input, 2 grad_weight, 4 grad_bias.");
static PyObject *py_batch_norm_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"grad", "input", "weight", "running_mean", "running_var", "training", "eps",
                                        "mask", NULL};
    const char *fname = "_batch_norm_backward";
    PyObject *a[8];
    bool training = false;
    int64_t mask = 7;
    CtChannelNormDesc d = {.eps = 1e-5};
    if (ct_parse_args(fname, args, nargs, kwnames, names, 6, a) < 0 ||
        ct_nn_check_tensor_arg(fname, "grad", 1, a[0], false) < 0 ||
        ct_nn_check_tensor_arg(fname, "input", 2, a[1], false) < 0 ||
        ct_nn_check_tensor_arg(fname, "weight", 3, a[2], true) < 0 ||
        ct_nn_check_tensor_arg(fname, "running_mean", 4, a[3], true) < 0 ||
        ct_nn_check_tensor_arg(fname, "running_var", 5, a[4], true) < 0 || ct_arg_bool(a[5], &training) < 0 ||
        ct_arg_double(a[6], &d.eps) < 0 || ct_arg_int64(a[7], &mask) < 0) {
        return NULL;
    }
    CtTensorObject *input = CT_TENSOR(a[1]), *weight = tensor_or_null(a[2]);
    CtTensorObject *rm = training ? NULL : tensor_or_null(a[3]), *rv = training ? NULL : tensor_or_null(a[4]);
    if (batch_norm_check(input, weight, NULL, rm, rv, training, &d) < 0) {
        return NULL;
    }
    return channel_norm_backward(&d, CT_TENSOR(a[0]), input, weight, rm, rv, mask);
}

/* num_groups as an int64 (TypeError naming the function otherwise) */
static int parse_groups(const char *fname, PyObject *obj, int64_t *out)
{
    if (obj == NULL || !PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'num_groups' must be int, not %s", fname,
                     obj ? Py_TYPE(obj)->tp_name : "NoneType");
        return -1;
    }
    return ct_arg_int64(obj, out);
}

PyDoc_STRVAR(group_norm_doc, "group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True) "
                             "-> Tensor\n\nGroup normalisation of (N, C, *) input over groups of C / num_groups "
                             "channels.");
static PyObject *py_group_norm(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "num_groups", "weight", "bias", "eps", "cudnn_enabled", NULL};
    const char *fname = "group_norm";
    PyObject *a[6];
    bool cudnn = true;
    int64_t groups = 0;
    CtChannelNormDesc d = {.eps = 1e-5};
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0 ||
        ct_nn_check_tensor_arg(fname, "input", 1, a[0], false) < 0 || parse_groups(fname, a[1], &groups) < 0 ||
        ct_nn_check_tensor_arg(fname, "weight", 3, a[2], true) < 0 ||
        ct_nn_check_tensor_arg(fname, "bias", 4, a[3], true) < 0 || ct_arg_double(a[4], &d.eps) < 0 ||
        ct_arg_bool(a[5], &cudnn) < 0) {
        return NULL;
    }
    CtTensorObject *input = CT_TENSOR(a[0]), *weight = tensor_or_null(a[2]), *bias = tensor_or_null(a[3]);
    if (group_norm_check(input, groups, weight, bias, &d) < 0) {
        return NULL;
    }
    return (PyObject *)channel_norm_forward(&d, input, weight, bias, NULL, NULL);
}

PyDoc_STRVAR(group_norm_backward_doc,
             "_group_norm_backward(grad, input, num_groups, weight, eps, mask=7) -> (grad_input, grad_weight, "
             "grad_bias)\n\nmask bits: 1 grad_input, 2 grad_weight, 4 grad_bias.");
static PyObject *py_group_norm_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"grad", "input", "num_groups", "weight", "eps", "mask", NULL};
    const char *fname = "_group_norm_backward";
    PyObject *a[6];
    int64_t groups = 0, mask = 7;
    CtChannelNormDesc d = {.eps = 1e-5};
    if (ct_parse_args(fname, args, nargs, kwnames, names, 4, a) < 0 ||
        ct_nn_check_tensor_arg(fname, "grad", 1, a[0], false) < 0 ||
        ct_nn_check_tensor_arg(fname, "input", 2, a[1], false) < 0 || parse_groups(fname, a[2], &groups) < 0 ||
        ct_nn_check_tensor_arg(fname, "weight", 4, a[3], true) < 0 || ct_arg_double(a[4], &d.eps) < 0 ||
        ct_arg_int64(a[5], &mask) < 0) {
        return NULL;
    }
    CtTensorObject *input = CT_TENSOR(a[1]), *weight = tensor_or_null(a[3]);
    if (group_norm_check(input, groups, weight, NULL, &d) < 0) {
        return NULL;
    }
    return channel_norm_backward(&d, CT_TENSOR(a[0]), input, weight, NULL, NULL, mask);
}

PyMethodDef ct_norm_module_methods[] = {
    {"batch_norm", CT_FASTCALL(py_batch_norm), CT_METH_FK, batch_norm_doc},
    {"_batch_norm_backward", CT_FASTCALL(py_batch_norm_backward), CT_METH_FK, batch_norm_backward_doc},
    {"group_norm", CT_FASTCALL(py_group_norm), CT_METH_FK, group_norm_doc},
    {"_group_norm_backward", CT_FASTCALL(py_group_norm_backward), CT_METH_FK, group_norm_backward_doc},
    {NULL},
};
PyMethodDef ct_norm_tensor_methods[] = {{NULL}};
PyType_Slot ct_norm_tensor_slots[] = {{0, NULL}};

/* ====================================================================================================
 * backward formulas (rows in autograd_formulas.c)
 * ==================================================================================================== */
#define NORM_NEEDS(e) (n->edge_nodes[(e)] != NULL)
#define NORM_ARG(i) (n->args[(i)] != NULL && n->args[(i)] != Py_None ? n->args[(i)] : NULL)

/* Saved tensor argument i (borrowed; version-checked), Py_None when absent, NULL with an error. */
static PyObject *saved_or_none(CtNodeObject *n, int i)
{
    return NORM_ARG(i) == NULL ? Py_None : (PyObject *)ct_node_tensor(n, i);
}

/* The gradient with create_graph, composed of recorded ops. view(t) is t itself with the
 * statistics over `stat_dims` (batch norm: every dim but 1) or t reshaped to (N, groups, -1) with the
 * statistics over dim 2 (group norm). rm / rv: running statistics for batch norm in eval mode, else
 * NULL. Edges: input, weight, bias. */
static int channel_norm_composite(CtNodeObject *n, PyObject *const *g, PyObject **gi, PyObject *x, PyObject *weight,
                                  PyObject *rm, PyObject *rv, int64_t groups, double eps)
{
    CtTensorObject *xt = CT_TENSOR(x);
    int nd = xt->ndim;
    int64_t C = xt->sizes[1];
    CtArena scratch = {0}, *arena = &scratch;
    int rc = -1;
    /* (1, C, 1, ...): a per-channel vector broadcast over the input */
    PyObject *cshape = KEEP(PyTuple_New(nd));
    PyObject *bn_dims = KEEP(PyTuple_New(nd - 1));
    PyObject *xshape = KEEP(ct_size_object(nd, xt->sizes));
    for (int i = 0; cshape != NULL && bn_dims != NULL && i < nd; i++) {
        PyTuple_SET_ITEM(cshape, i, PyLong_FromLongLong(i == 1 ? (long long)C : 1));
        if (i != 1) {
            PyTuple_SET_ITEM(bn_dims, i - (i > 1), PyLong_FromLong(i));
        }
    }
    PyObject *stat_dims = groups ? INT(2) : bn_dims;
    PyObject *dy = weight != Py_None ? MUL(g[0], METH(weight, "reshape", "(O)", cshape)) : g[0];
    PyObject *xv = groups ? METH(x, "reshape", "(Lii)", (long long)xt->sizes[0], (int)groups, -1) : x;
    PyObject *dyv = groups ? METH(dy, "reshape", "(Lii)", (long long)xt->sizes[0], (int)groups, -1) : dy;
    PyObject *mean, *rstd;
    if (rm != NULL) {
        mean = METH(rm, "reshape", "(O)", cshape);
        rstd = METH(ADD(METH(rv, "reshape", "(O)", cshape), NUM(eps)), "rsqrt", NULL);
    } else {
        mean = METH(xv, "mean", "(OO)", stat_dims, Py_True);
        PyObject *c = SUB(xv, mean);
        rstd = METH(ADD(METH(MUL(c, c), "mean", "(OO)", stat_dims, Py_True), NUM(eps)), "rsqrt", NULL);
    }
    PyObject *xhatv = MUL(SUB(xv, mean), rstd);
    if (arena->failed) {
        goto done;
    }
    if (NORM_NEEDS(0)) {
        PyObject *dxv = rm != NULL ? MUL(dyv, rstd)
                                   : MUL(rstd, SUB(SUB(dyv, METH(dyv, "mean", "(OO)", stat_dims, Py_True)),
                                                   MUL(xhatv, METH(MUL(dyv, xhatv), "mean", "(OO)", stat_dims,
                                                                   Py_True))));
        if ((gi[0] = TAKE(METH(dxv, "reshape", "(O)", xshape))) == NULL) {
            goto done;
        }
    }
    if (NORM_NEEDS(1) && (gi[1] = TAKE(METH(MUL(g[0], METH(xhatv, "reshape", "(O)", xshape)), "sum", "(O)",
                                            bn_dims))) == NULL) {
        goto done;
    }
    if (NORM_NEEDS(2) && (gi[2] = TAKE(METH(g[0], "sum", "(O)", bn_dims))) == NULL) {
        goto done;
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* Runs a fused backward op and hands its (grad_input, grad_weight, grad_bias) to the needed edges. */
static int fused_backward(CtNodeObject *n, PyObject **gi, const char *op, PyObject **args, size_t nargs)
{
    PyObject *mask = PyLong_FromLong((NORM_NEEDS(0) ? 1 : 0) | (NORM_NEEDS(1) ? 2 : 0) | (NORM_NEEDS(2) ? 4 : 0));
    if (mask == NULL) {
        return -1;
    }
    args[nargs - 1] = mask;
    PyObject *res = ct_op(op, args, nargs, NULL);
    Py_DECREF(mask);
    if (res == NULL) {
        return -1;
    }
    for (int e = 0; e < 3; e++) {
        PyObject *v = PyTuple_GET_ITEM(res, e);
        if (NORM_NEEDS(e) && v != Py_None) {
            gi[e] = Py_NewRef(v);
        }
    }
    Py_DECREF(res);
    return 0;
}

static int arg_double(CtNodeObject *n, int i, double dflt, double *out)
{
    *out = dflt;
    return ct_arg_double(NORM_ARG(i), out);
}

/* batch_norm: (input, weight, bias, running_mean, running_var, training, momentum, eps) */
int ct_norm_bw_batch_norm(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    bool training = false;
    double eps;
    if (ct_arg_bool(NORM_ARG(5), &training) < 0 || arg_double(n, 7, 1e-5, &eps) < 0) {
        return -1;
    }
    PyObject *input = (PyObject *)ct_node_tensor(n, 0);
    PyObject *weight = input ? saved_or_none(n, 1) : NULL;
    /* in training the batch's statistics are recomputed from the input: the running ones (updated in
     * place by the forward) are not read */
    PyObject *rm = weight && !training ? saved_or_none(n, 3) : Py_None;
    PyObject *rv = rm && !training ? saved_or_none(n, 4) : Py_None;
    if (input == NULL || weight == NULL || rm == NULL || rv == NULL) {
        return -1;
    }
    if (ct_grad_enabled) {
        return channel_norm_composite(n, g, gi, input, weight, rm != Py_None ? rm : NULL, rv, 0, eps);
    }
    PyObject *ov = PyFloat_FromDouble(eps);
    if (ov == NULL) {
        return -1;
    }
    PyObject *args[8] = {g[0], input, weight, rm, rv, training ? Py_True : Py_False, ov, NULL};
    int rc = fused_backward(n, gi, "_batch_norm_backward", args, 8);
    Py_DECREF(ov);
    return rc;
}

/* group_norm: (input, num_groups, weight, bias, eps, cudnn_enabled) */
int ct_norm_bw_group_norm(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    double eps;
    int64_t groups = 0;
    if (arg_double(n, 4, 1e-5, &eps) < 0 || ct_arg_int64(NORM_ARG(1), &groups) < 0) {
        return -1;
    }
    PyObject *input = (PyObject *)ct_node_tensor(n, 0);
    PyObject *weight = input ? saved_or_none(n, 2) : NULL;
    if (input == NULL || weight == NULL) {
        return -1;
    }
    if (ct_grad_enabled) {
        return channel_norm_composite(n, g, gi, input, weight, NULL, NULL, groups, eps);
    }
    PyObject *ov = PyFloat_FromDouble(eps);
    if (ov == NULL) {
        return -1;
    }
    PyObject *args[6] = {g[0], input, n->args[1], weight, ov, NULL};
    int rc = fused_backward(n, gi, "_group_norm_backward", args, 6);
    Py_DECREF(ov);
    return rc;
}
