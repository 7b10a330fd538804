/* ops_reduce.c: the reduction family's ops: argument parsing, dtypes and shapes in PyTorch's
 * words, the description of each reduction (reduce.h), and the call through the device's
 * CtReduceKernels. The numbers are computed by the kernels (CPU: reduce_cpu.c). Module
 * functions take `input` first; Tensor methods are the same functions with self prepended.
 *
 * Named-tuple results (torch.return_types.max, sort, topk, ...) are struct sequences created
 * on first use, with PyTorch's multi-line repr. */
#include "reduce.h"
#include <structmember.h> /* PyMemberDef */
#include "args.h"
#include "autograd_arena.h"
#include "creation.h"
#include "device.h"
#include "dtype.h"
#include "elementwise.h"
#include "registry.h"
#include "tensor.h"
#include <math.h>
#include <string.h>

/* --- helpers --------------------------------------------------------------------------------- */
static CtAccType acc_of(CtDType d)
{
    return d == CT_F64 ? CT_ACC_F64 : ct_is_floating(d) ? CT_ACC_F32 : CT_ACC_I64;
}
static CtDType acc_dtype(CtAccType a) { return a == CT_ACC_F64 ? CT_F64 : a == CT_ACC_F32 ? CT_F32 : CT_I64; }

/* The device's reduce kernels (borrowed), or NULL with RuntimeError. */
static const struct CtReduceKernels *kernels_of(const CtTensorObject *t, const char *fname)
{
    const CtDeviceOps *ops = ct_device_ops(ct_device_of(t));
    if (ops == NULL) {
        return NULL;
    }
    if (ops->reduce == NULL) {
        PyErr_Format(PyExc_RuntimeError, "%s() is not implemented on %s", fname, ops->name);
        return NULL;
    }
    return ops->reduce;
}

/* For a kernel a device lacks: RuntimeError, -1. */
static int missing_kernel(const char *fname)
{
    PyErr_Format(PyExc_RuntimeError, "%s() is not implemented on this device", fname);
    return -1;
}

/* mask = reduce_dims, or every dim when NULL. Returns the number of reduced elements. */
static int64_t fill_mask(const CtTensorObject *t, const bool *reduce_dims, bool *mask)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) {
        mask[i] = reduce_dims ? reduce_dims[i] : true;
        if (mask[i]) {
            n *= t->sizes[i];
        }
    }
    return n;
}

/* Sizes of t with the masked dims set to 1. */
static void keepdim_sizes(const CtTensorObject *t, const bool *mask, int64_t *sizes)
{
    for (int i = 0; i < t->ndim; i++) {
        sizes[i] = mask[i] ? 1 : t->sizes[i];
    }
}

/* out (keepdim-shaped, contiguous) without the masked dims unless keepdim. Steals out. */
static CtTensorObject *squeeze_masked(CtTensorObject *out, const bool *mask, bool keepdim)
{
    if (out == NULL || keepdim) {
        return out;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < out->ndim; i++) {
        if (!mask[i]) {
            sizes[nd] = out->sizes[i];
            strides[nd] = out->strides[i];
            nd++;
        }
    }
    if (nd == out->ndim) {
        return out;
    }
    CtTensorObject *v = ct_view_of(out, nd, sizes, strides, out->offset);
    Py_DECREF(out);
    return v;
}

/* A contiguous view of fresh tensor t with new sizes (same numel). Steals t. */
static CtTensorObject *reshape_fresh(CtTensorObject *t, int nd, const int64_t *sizes)
{
    if (t == NULL) {
        return NULL;
    }
    int64_t strides[CT_MAX_DIMS];
    ct_contiguous_strides(nd, sizes, strides);
    CtTensorObject *v = ct_view_of(t, nd, sizes, strides, t->offset);
    Py_DECREF(t);
    return v;
}

/* --- the reduction description ------------------------------------------------------------------ */
typedef struct {
    CtReduceCombine combine;
    CtReduceMap map;
    CtReduceFinal final;
    CtAccType acc;
    double p;
    double divisor;
} Spec;

static int64_t stride_key(int64_t s)
{
    if (s == 0) {
        return INT64_MAX; /* broadcast dims go outermost */
    }
    return s < 0 ? -s : s;
}

/* Reduces t over mask into out (keepdim-shaped), reading shift (keepdim-shaped, acc dtype)
 * when the spec uses it. Dims of size 1 are dropped, the rest ordered by input stride and
 * merged where contiguous, so that the kernel sees the fewest, longest runs. */
static int reduce_into(CtTensorObject *t, const bool *mask, CtTensorObject *out, CtTensorObject *shift,
                       const Spec *s, const char *fname)
{
    if (ct_numel(out) == 0) {
        return 0;
    }
    const struct CtReduceKernels *k = kernels_of(t, fname);
    if (k == NULL) {
        return -1;
    }
    if (k->reduce == NULL) {
        return missing_kernel(fname);
    }
    CtReduceDesc d;
    memset(&d, 0, sizeof(d));
    int64_t isz_in = (int64_t)ct_itemsize(t), isz_out = (int64_t)ct_itemsize(out);
    int64_t isz_shift = shift ? (int64_t)ct_itemsize(shift) : 0;
    int n = 0;
    d.reduce_numel = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (mask[i]) {
            d.reduce_numel *= t->sizes[i];
        }
        if (t->sizes[i] == 1) {
            continue;
        }
        d.shape[n] = t->sizes[i];
        d.reduced[n] = mask[i];
        d.in_strides[n] = t->strides[i] * isz_in;
        d.out_strides[n] = mask[i] ? 0 : out->strides[i] * isz_out;
        d.shift_strides[n] = (mask[i] || shift == NULL) ? 0 : shift->strides[i] * isz_shift;
        n++;
    }
    /* stable insertion sort, smallest input stride first */
    for (int i = 1; i < n; i++) {
        for (int j = i; j > 0 && stride_key(d.in_strides[j]) < stride_key(d.in_strides[j - 1]); j--) {
            int64_t ts = d.shape[j];
            d.shape[j] = d.shape[j - 1];
            d.shape[j - 1] = ts;
            bool tr = d.reduced[j];
            d.reduced[j] = d.reduced[j - 1];
            d.reduced[j - 1] = tr;
            int64_t *arrs[3] = {d.in_strides, d.out_strides, d.shift_strides};
            for (int a = 0; a < 3; a++) {
                int64_t tmp = arrs[a][j];
                arrs[a][j] = arrs[a][j - 1];
                arrs[a][j - 1] = tmp;
            }
        }
    }
    /* merge dim i into the kept one before it when both are of the same kind and contiguous */
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m > 0 && d.reduced[m - 1] == d.reduced[i] &&
            d.in_strides[i] == d.in_strides[m - 1] * d.shape[m - 1] &&
            d.out_strides[i] == d.out_strides[m - 1] * d.shape[m - 1] &&
            d.shift_strides[i] == d.shift_strides[m - 1] * d.shape[m - 1]) {
            d.shape[m - 1] *= d.shape[i];
            continue;
        }
        d.shape[m] = d.shape[i];
        d.reduced[m] = d.reduced[i];
        d.in_strides[m] = d.in_strides[i];
        d.out_strides[m] = d.out_strides[i];
        d.shift_strides[m] = d.shift_strides[i];
        m++;
    }
    if (m == 0) { /* a single element */
        d.shape[0] = 1;
        d.reduced[0] = true;
        m = 1;
    }
    d.ndim = m;
    d.in = ct_data(t);
    d.out = ct_data(out);
    d.shift = shift ? ct_data(shift) : NULL;
    d.in_dtype = t->dtype;
    d.out_dtype = out->dtype;
    d.combine = s->combine;
    d.map = s->map;
    d.final = s->final;
    d.acc = s->acc;
    d.p = s->p;
    d.divisor = s->divisor;
    d.out_numel = ct_numel(out);
    d.device = ct_device_of(t).index;
    return k->reduce(&d);
}

/* A new tensor of out_dtype holding the reduction of t over mask. */
static CtTensorObject *reduce_new(CtTensorObject *t, const bool *mask, bool keepdim, CtDType out_dtype,
                                  CtTensorObject *shift, const Spec *s, const char *fname)
{
    int64_t sizes[CT_MAX_DIMS] = {0};
    keepdim_sizes(t, mask, sizes);
    CtTensorObject *out = ct_empty(t->ndim, sizes, out_dtype, ct_device_of(t));
    if (out == NULL) {
        return NULL;
    }
    if (reduce_into(t, mask, out, shift, s, fname) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return squeeze_masked(out, mask, keepdim);
}

/* --- sum / nansum / prod / mean --------------------------------------------------------------- */
/* sum(x, dtype=d) is sum(x.to(d)), as in PyTorch; integers and bool default to int64. */
static CtTensorObject *sum_like(CtTensorObject *t, const bool *reduce_dims, bool keepdim, CtDType out_dtype,
                                CtReduceCombine combine, CtReduceMap map, const char *fname)
{
    bool mask[CT_MAX_DIMS];
    fill_mask(t, reduce_dims, mask);
    CtDType od = out_dtype != CT_DTYPE_UNSET ? out_dtype : ct_is_integral(t->dtype, true) ? CT_I64 : t->dtype;
    CtTensorObject *src = ct_to(t, out_dtype != CT_DTYPE_UNSET ? out_dtype : t->dtype, ct_device_of(t), false);
    if (src == NULL) {
        return NULL;
    }
    Spec s = {combine, map, CT_FINAL_NONE, acc_of(od), 0, 0};
    CtTensorObject *r = reduce_new(src, mask, keepdim, od, NULL, &s, fname);
    Py_DECREF(src);
    return r;
}

CtTensorObject *ct_sum(CtTensorObject *t, const bool *reduce_dims, bool keepdim, CtDType out_dtype)
{
    return sum_like(t, reduce_dims, keepdim, out_dtype, CT_COMBINE_SUM, CT_MAP_IDENTITY, "sum");
}

CtTensorObject *ct_nansum(CtTensorObject *t, const bool *reduce_dims, bool keepdim, CtDType out_dtype)
{
    return sum_like(t, reduce_dims, keepdim, out_dtype, CT_COMBINE_SUM, CT_MAP_NAN_TO_ZERO, "nansum");
}

CtTensorObject *ct_prod(CtTensorObject *t, const bool *reduce_dims, bool keepdim, CtDType out_dtype)
{
    return sum_like(t, reduce_dims, keepdim, out_dtype, CT_COMBINE_PROD, CT_MAP_IDENTITY, "prod");
}

CtTensorObject *ct_mean(CtTensorObject *t, const bool *reduce_dims, bool keepdim, CtDType out_dtype)
{
    if (out_dtype == CT_DTYPE_UNSET && !ct_is_floating(t->dtype)) {
        PyErr_Format(PyExc_NotImplementedError,
                     "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
                     "dtype. Got: %s",
                     ct_scalar_type_name(t->dtype));
        return NULL;
    }
    if (out_dtype != CT_DTYPE_UNSET && !ct_is_floating(out_dtype)) {
        PyErr_Format(PyExc_NotImplementedError,
                     "mean(): could not infer output dtype. Optional dtype must be either a floating point or "
                     "complex dtype. Got: %s",
                     ct_scalar_type_name(out_dtype));
        return NULL;
    }
    bool mask[CT_MAX_DIMS];
    int64_t n = fill_mask(t, reduce_dims, mask);
    CtDType od = out_dtype != CT_DTYPE_UNSET ? out_dtype : t->dtype;
    CtTensorObject *src = ct_to(t, od, ct_device_of(t), false);
    if (src == NULL) {
        return NULL;
    }
    Spec s = {CT_COMBINE_SUM, CT_MAP_IDENTITY, CT_FINAL_DIVIDE, acc_of(od), 0, (double)n};
    CtTensorObject *r = reduce_new(src, mask, keepdim, od, NULL, &s, "mean");
    Py_DECREF(src);
    return r;
}

/* --- nanmean: nansum / the number of non-NaN elements (0 / 0 = NaN for a slice of NaNs) ----------- */
CtTensorObject *ct_nanmean(CtTensorObject *t, const bool *reduce_dims, bool keepdim, CtDType out_dtype)
{
    if (!ct_is_floating(t->dtype)) {
        PyErr_Format(PyExc_NotImplementedError,
                     "nanmean(): expected input to have floating point or complex dtype but got %s",
                     ct_scalar_type_name(t->dtype));
        return NULL;
    }
    if (out_dtype != CT_DTYPE_UNSET && !ct_is_floating(out_dtype)) {
        PyErr_Format(PyExc_RuntimeError,
                     "nanmean(): could not infer output dtype. Optional dtype must be either a floating point or "
                     "complex dtype. Got: %s",
                     ct_scalar_type_name(out_dtype));
        return NULL;
    }
    CtTensorObject *sum = NULL, *isnan = NULL, *kept = NULL, *count = NULL, *r = NULL;
    if ((sum = ct_nansum(t, reduce_dims, keepdim, out_dtype)) == NULL ||
        (isnan = ct_unary(CT_EW_ISNAN, t)) == NULL || (kept = ct_unary(CT_EW_LOGICAL_NOT, isnan)) == NULL ||
        (count = ct_sum(kept, reduce_dims, keepdim, CT_DTYPE_UNSET)) == NULL) {
        goto done;
    }
    r = ct_div(sum, count); /* float / int64 keeps the float dtype */
done:
    Py_XDECREF(sum);
    Py_XDECREF(isnan);
    Py_XDECREF(kept);
    Py_XDECREF(count);
    return r;
}

/* --- max / min / amax / amin -------------------------------------------------------------------- */
/* PyTorch's errors for reductions without an identity over empty tensors. reduce_dims NULL
 * means "no dim was given". */
static int check_no_identity(const CtTensorObject *t, const bool *reduce_dims, const char *fname)
{
    if (ct_numel(t) != 0) {
        return 0;
    }
    if (reduce_dims == NULL) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                     "dim with the 'dim' argument.",
                     fname);
        return -1;
    }
    for (int i = 0; i < t->ndim; i++) {
        if (reduce_dims[i] && t->sizes[i] == 0) {
            PyErr_Format(PyExc_IndexError, "%s(): Expected reduction dim %d to have non-zero size.", fname, i);
            return -1;
        }
    }
    return 0;
}

static CtTensorObject *extremum(CtTensorObject *t, const bool *reduce_dims, bool keepdim, bool is_max,
                                const char *fname)
{
    if (check_no_identity(t, reduce_dims, fname) < 0) {
        return NULL;
    }
    bool mask[CT_MAX_DIMS];
    fill_mask(t, reduce_dims, mask);
    Spec s = {is_max ? CT_COMBINE_MAX : CT_COMBINE_MIN, CT_MAP_IDENTITY, CT_FINAL_NONE, acc_of(t->dtype), 0, 0};
    return reduce_new(t, mask, keepdim, t->dtype, NULL, &s, fname);
}

CtTensorObject *ct_amax(CtTensorObject *t, const bool *reduce_dims, bool keepdim)
{
    return extremum(t, reduce_dims, keepdim, true, "amax");
}
CtTensorObject *ct_amin(CtTensorObject *t, const bool *reduce_dims, bool keepdim)
{
    return extremum(t, reduce_dims, keepdim, false, "amin");
}
CtTensorObject *ct_max_all(CtTensorObject *t) { return extremum(t, NULL, false, true, "max"); }
CtTensorObject *ct_min_all(CtTensorObject *t) { return extremum(t, NULL, false, false, "min"); }

/* --- lines: ops along one dim --------------------------------------------------------------------- */
/* Lines of t along dim (any dim for a 0-d t: one line of one element); outputs o1/o2 have
 * t's sizes except along dim. */
static void describe_lines(CtDimDesc *d, const CtTensorObject *t, int dim, const CtTensorObject *o1,
                           const CtTensorObject *o2)
{
    const CtTensorObject *ops[CT_DIM_OPS] = {t, o1, o2};
    memset(d, 0, sizeof(*d));
    d->n = t->ndim ? t->sizes[dim] : 1;
    for (int op = 0; op < CT_DIM_OPS; op++) {
        if (ops[op] != NULL) {
            d->data[op] = ct_data(ops[op]);
            d->dtypes[op] = ops[op]->dtype;
            d->dim_strides[op] = t->ndim ? ops[op]->strides[dim] * (int64_t)ct_itemsize(ops[op]) : 0;
        }
    }
    d->outer_numel = 1;
    int k = 0;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (i == dim || t->sizes[i] == 1) {
            continue;
        }
        d->outer_shape[k] = t->sizes[i];
        for (int op = 0; op < CT_DIM_OPS; op++) {
            d->outer_strides[k][op] = ops[op] ? ops[op]->strides[i] * (int64_t)ct_itemsize(ops[op]) : 0;
        }
        d->outer_numel *= t->sizes[i];
        k++;
    }
    d->nouter = k;
    d->device = ct_device_of(t).index;
}

/* Sizes of t with `len` along dim (t 0-d: no sizes). */
static void sizes_with(const CtTensorObject *t, int dim, int64_t len, int64_t *sizes)
{
    for (int i = 0; i < t->ndim; i++) {
        sizes[i] = i == dim ? len : t->sizes[i];
    }
}

/* A 1-d contiguous view of all of t's elements (a copy when t is not contiguous). */
static CtTensorObject *flattened(CtTensorObject *t)
{
    CtTensorObject *c = ct_contiguous(t);
    if (c == NULL) {
        return NULL;
    }
    int64_t n = ct_numel(c), one = 1;
    CtTensorObject *v = ct_view_of(c, 1, &n, &one, c->offset);
    Py_DECREF(c);
    return v;
}

/* values/indices of the max or min along dim (either output may be unwanted: NULL pointer). */
static int arg_extremum(CtTensorObject *t, int dim, bool keepdim, bool is_max, const char *fname,
                        CtTensorObject **values, CtTensorObject **indices)
{
    int rc = -1;
    CtTensorObject *v = NULL, *ix = NULL;
    int64_t sizes[CT_MAX_DIMS] = {0};
    if (t->ndim > 0 && t->sizes[dim] == 0) {
        PyErr_Format(PyExc_IndexError, "%s(): Expected reduction dim %d to have non-zero size.", fname, dim);
        return -1;
    }
    sizes_with(t, dim, 1, sizes);
    if (values != NULL && (v = ct_empty(t->ndim, sizes, t->dtype, ct_device_of(t))) == NULL) {
        goto done;
    }
    if ((ix = ct_empty(t->ndim, sizes, CT_I64, ct_device_of(t))) == NULL) {
        goto done;
    }
    if (ct_numel(ix) > 0) {
        const struct CtReduceKernels *k = kernels_of(t, fname);
        if (k == NULL) {
            goto done;
        }
        if (k->arg_reduce == NULL) {
            missing_kernel(fname);
            goto done;
        }
        CtDimDesc d;
        describe_lines(&d, t, dim, v, ix);
        if (k->arg_reduce(&d, is_max) < 0) {
            goto done;
        }
    }
    bool mask[CT_MAX_DIMS] = {false};
    if (t->ndim > 0) {
        mask[dim] = true;
    }
    if (values != NULL) {
        *values = squeeze_masked(v, mask, keepdim);
        v = NULL;
        if (*values == NULL) {
            goto done;
        }
    }
    if (indices != NULL) {
        *indices = squeeze_masked(ix, mask, keepdim);
        ix = NULL;
        if (*indices == NULL) {
            if (values != NULL) {
                Py_CLEAR(*values);
            }
            goto done;
        }
    }
    rc = 0;
done:
    Py_XDECREF(v);
    Py_XDECREF(ix);
    return rc;
}

int ct_max_dim(CtTensorObject *t, int dim, bool keepdim, CtTensorObject **values, CtTensorObject **indices)
{
    return arg_extremum(t, dim, keepdim, true, "max", values, indices);
}
int ct_min_dim(CtTensorObject *t, int dim, bool keepdim, CtTensorObject **values, CtTensorObject **indices)
{
    return arg_extremum(t, dim, keepdim, false, "min", values, indices);
}

static CtTensorObject *argmax_like(CtTensorObject *t, int dim, bool keepdim, bool is_max)
{
    const char *fname = is_max ? "argmax" : "argmin";
    CtTensorObject *r = NULL;
    if (t->dtype == CT_BOOL) {
        PyErr_Format(PyExc_NotImplementedError, "%s(): does not support bool input", fname);
        return NULL;
    }
    if (dim >= 0) {
        return arg_extremum(t, dim, keepdim, is_max, fname, NULL, &r) < 0 ? NULL : r;
    }
    if (ct_numel(t) == 0) {
        PyErr_Format(PyExc_IndexError, "%s(): Expected reduction dim to be specified for input.numel() == 0.",
                     fname);
        return NULL;
    }
    CtTensorObject *flat = flattened(t);
    if (flat == NULL) {
        return NULL;
    }
    int rc = arg_extremum(flat, 0, true, is_max, fname, NULL, &r);
    Py_DECREF(flat);
    if (rc < 0) {
        return NULL;
    }
    int64_t ones[CT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        ones[i] = 1;
    }
    return reshape_fresh(r, keepdim ? t->ndim : 0, ones);
}

CtTensorObject *ct_argmax(CtTensorObject *t, int dim, bool keepdim) { return argmax_like(t, dim, keepdim, true); }
CtTensorObject *ct_argmin(CtTensorObject *t, int dim, bool keepdim) { return argmax_like(t, dim, keepdim, false); }

/* --- var / std: two passes (the mean, then the squared deviations) ------------------------------ */
int ct_var_mean(CtTensorObject *t, const bool *reduce_dims, double correction, bool keepdim, bool take_sqrt,
                CtTensorObject **var, CtTensorObject **mean)
{
    const char *fname = take_sqrt ? "std" : "var";
    int rc = -1;
    CtTensorObject *m = NULL, *out = NULL;
    if (!ct_is_floating(t->dtype)) {
        PyErr_SetString(PyExc_NotImplementedError, "std and var only support floating point and complex dtypes");
        return -1;
    }
    bool mask[CT_MAX_DIMS];
    int64_t n = fill_mask(t, reduce_dims, mask);
    double dof = (double)n - correction;
    if (dof <= 0) {
        char msg[256];
        snprintf(msg, sizeof(msg),
                 "%s(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
                 "(input numel divided by output numel).",
                 fname);
        if (PyErr_WarnEx(PyExc_UserWarning, msg, 1) < 0) {
            return -1;
        }
        dof = 0;
    }
    CtAccType acc = acc_of(t->dtype);
    int64_t sizes[CT_MAX_DIMS] = {0};
    keepdim_sizes(t, mask, sizes);
    m = ct_empty(t->ndim, sizes, acc_dtype(acc), ct_device_of(t));
    out = ct_empty(t->ndim, sizes, t->dtype, ct_device_of(t));
    if (m == NULL || out == NULL) {
        goto done;
    }
    Spec mean_spec = {CT_COMBINE_SUM, CT_MAP_IDENTITY, CT_FINAL_DIVIDE, acc, 0, (double)n};
    Spec var_spec = {CT_COMBINE_SUM, CT_MAP_SQDIFF_SHIFT, take_sqrt ? CT_FINAL_SQRT_DIVIDE : CT_FINAL_DIVIDE, acc, 0,
                     dof};
    if (reduce_into(t, mask, m, NULL, &mean_spec, fname) < 0 || reduce_into(t, mask, out, m, &var_spec, fname) < 0) {
        goto done;
    }
    if (mean != NULL) {
        CtTensorObject *mc = ct_to(m, t->dtype, ct_device_of(t), false);
        if ((*mean = squeeze_masked(mc, mask, keepdim)) == NULL) {
            goto done;
        }
    }
    *var = squeeze_masked(out, mask, keepdim);
    out = NULL;
    if (*var == NULL) {
        if (mean != NULL) {
            Py_CLEAR(*mean);
        }
        goto done;
    }
    rc = 0;
done:
    Py_XDECREF(m);
    Py_XDECREF(out);
    return rc;
}

CtTensorObject *ct_var(CtTensorObject *t, const bool *reduce_dims, double correction, bool keepdim)
{
    CtTensorObject *v = NULL;
    return ct_var_mean(t, reduce_dims, correction, keepdim, false, &v, NULL) < 0 ? NULL : v;
}
CtTensorObject *ct_std(CtTensorObject *t, const bool *reduce_dims, double correction, bool keepdim)
{
    CtTensorObject *v = NULL;
    return ct_var_mean(t, reduce_dims, correction, keepdim, true, &v, NULL) < 0 ? NULL : v;
}

/* --- norm -------------------------------------------------------------------------------------------- */
CtTensorObject *ct_norm(CtTensorObject *t, double p, const bool *reduce_dims, bool keepdim, CtDType out_dtype)
{
    if (!ct_is_floating(t->dtype)) {
        PyErr_Format(PyExc_NotImplementedError,
                     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s",
                     ct_scalar_type_name(t->dtype));
        return NULL;
    }
    if (out_dtype != CT_DTYPE_UNSET && !ct_is_floating(out_dtype)) {
        PyErr_Format(PyExc_RuntimeError, "linalg.vector_norm: dtype should be floating point or complex, but got %s",
                     ct_scalar_type_name(out_dtype));
        return NULL;
    }
    if (out_dtype != CT_DTYPE_UNSET && ct_promote_types(t->dtype, out_dtype) != out_dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "linalg.vector_norm: the dtype of the input (%s) should be convertible without narrowing to the "
                     "specified dtype (%s)",
                     ct_scalar_type_name(t->dtype), ct_scalar_type_name(out_dtype));
        return NULL;
    }
    /* max(|x|) and the negative orders (1 / sum(|x|^-q)) have no value on nothing */
    if ((isinf(p) || p < 0) && ct_numel(t) == 0) {
        char ps[32];
        snprintf(ps, sizeof(ps), "%g", p);
        if (reduce_dims == NULL) {
            PyErr_Format(PyExc_RuntimeError,
                         "linalg.vector_norm cannot compute the %s norm on an empty tensor because the operation does "
                         "not have an identity",
                         ps);
            return NULL;
        }
        for (int i = 0; i < t->ndim; i++) {
            if (reduce_dims[i] && t->sizes[i] == 0) {
                PyErr_Format(PyExc_RuntimeError,
                             "linalg.vector_norm cannot compute the %s norm on the dimension %dbecause this dimension "
                             "is empty and the operation does not have an identity",
                             ps, i);
                return NULL;
            }
        }
    }
    bool mask[CT_MAX_DIMS];
    fill_mask(t, reduce_dims, mask);
    CtDType od = out_dtype != CT_DTYPE_UNSET ? out_dtype : t->dtype;
    Spec s = {CT_COMBINE_SUM, CT_MAP_ABS_POW, CT_FINAL_ROOT, acc_of(od), p, 1.0};
    if (p == 2) {
        s.map = CT_MAP_SQUARE;
        s.final = CT_FINAL_SQRT_DIVIDE;
    } else if (p == 1) {
        s.map = CT_MAP_ABS;
        s.final = CT_FINAL_NONE;
    } else if (p == 0) {
        s.map = CT_MAP_NONZERO;
        s.final = CT_FINAL_NONE;
    } else if (isinf(p)) {
        s.combine = p > 0 ? CT_COMBINE_MAX : CT_COMBINE_MIN;
        s.map = CT_MAP_ABS;
        s.final = CT_FINAL_NONE;
    }
    CtTensorObject *src = ct_to(t, od, ct_device_of(t), false);
    if (src == NULL) {
        return NULL;
    }
    CtTensorObject *r = reduce_new(src, mask, keepdim, od, NULL, &s, "norm");
    Py_DECREF(src);
    return r;
}

/* --- logsumexp: m = max, then log(sum(exp(x - m))) + m (an infinite m counts as 0) ----------------- */
CtTensorObject *ct_logsumexp(CtTensorObject *t, const bool *reduce_dims, bool keepdim)
{
    CtTensorObject *src = NULL, *m = NULL, *out = NULL;
    /* integers and bool are computed in the default float dtype */
    CtDType od = ct_is_floating(t->dtype) ? t->dtype : ct_default_float_dtype;
    bool mask[CT_MAX_DIMS];
    fill_mask(t, reduce_dims, mask);
    CtAccType acc = acc_of(od);
    int64_t sizes[CT_MAX_DIMS] = {0};
    keepdim_sizes(t, mask, sizes);
    src = ct_to(t, od, ct_device_of(t), false);
    if (src == NULL) {
        goto done;
    }
    m = ct_empty(t->ndim, sizes, acc_dtype(acc), ct_device_of(t));
    out = ct_empty(t->ndim, sizes, od, ct_device_of(t));
    if (m == NULL || out == NULL) {
        goto done;
    }
    Spec max_spec = {CT_COMBINE_MAX, CT_MAP_IDENTITY, CT_FINAL_NONE, acc, 0, 0};
    Spec lse_spec = {CT_COMBINE_SUM, CT_MAP_EXP_SHIFT, CT_FINAL_LOG_SHIFT, acc, 0, 0};
    if (reduce_into(src, mask, m, NULL, &max_spec, "logsumexp") < 0 ||
        reduce_into(src, mask, out, m, &lse_spec, "logsumexp") < 0) {
        Py_CLEAR(out);
        goto done;
    }
    out = squeeze_masked(out, mask, keepdim);
done:
    Py_XDECREF(src);
    Py_XDECREF(m);
    return out;
}

/* --- all / any / count_nonzero ---------------------------------------------------------------------- */
/* Floats are tested in double (0.5 is true), integers in int64. */
static CtTensorObject *logical_reduce(CtTensorObject *t, const bool *reduce_dims, bool keepdim, CtReduceCombine op,
                                      CtDType out_dtype, const char *fname)
{
    bool mask[CT_MAX_DIMS];
    fill_mask(t, reduce_dims, mask);
    Spec s = {op, CT_MAP_NONZERO, CT_FINAL_NONE, ct_is_floating(t->dtype) ? CT_ACC_F64 : CT_ACC_I64, 0, 0};
    return reduce_new(t, mask, keepdim, out_dtype, NULL, &s, fname);
}

/* all/any return uint8 for uint8 input, bool otherwise (as PyTorch). */
CtTensorObject *ct_all(CtTensorObject *t, const bool *reduce_dims, bool keepdim)
{
    return logical_reduce(t, reduce_dims, keepdim, CT_COMBINE_MIN, t->dtype == CT_U8 ? CT_U8 : CT_BOOL, "all");
}
CtTensorObject *ct_any(CtTensorObject *t, const bool *reduce_dims, bool keepdim)
{
    return logical_reduce(t, reduce_dims, keepdim, CT_COMBINE_MAX, t->dtype == CT_U8 ? CT_U8 : CT_BOOL, "any");
}
CtTensorObject *ct_count_nonzero(CtTensorObject *t, const bool *reduce_dims)
{
    return logical_reduce(t, reduce_dims, false, CT_COMBINE_SUM, CT_I64, "count_nonzero");
}

/* --- the scans: cumsum / cumprod / cummax / cummin / logcumsumexp ------------------------------------ */
/* op of src along dim into out (and the indices ix of cummax/cummin). */
static int scan_into(CtTensorObject *src, int dim, CtTensorObject *out, CtTensorObject *ix, CtScanOp op,
                     const char *fname)
{
    if (ct_numel(out) == 0) {
        return 0;
    }
    const struct CtReduceKernels *k = kernels_of(src, fname);
    if (k == NULL) {
        return -1;
    }
    if (k->scan == NULL) {
        return missing_kernel(fname);
    }
    CtDimDesc d;
    describe_lines(&d, src, dim, out, ix);
    return k->scan(&d, op);
}

/* PyTorch's error for a scan of a dtype it has no kernel for. */
static void scan_dtype_error(const CtTensorObject *t, CtDType dtype, const char *fname)
{
    PyErr_Format(PyExc_NotImplementedError, "\"%s%s\" not implemented for '%s'", fname,
                 ct_device_of(t).type == CT_DEV_CPU ? "_out_cpu" : "_cuda", ct_scalar_type_name(dtype));
}

static CtTensorObject *scan(CtTensorObject *t, int dim, CtDType out_dtype, CtScanOp op, const char *fname)
{
    CtDType od = out_dtype != CT_DTYPE_UNSET ? out_dtype : ct_is_integral(t->dtype, true) ? CT_I64 : t->dtype;
    CtTensorObject *src = NULL, *out = NULL;
    if (od == CT_BOOL) { /* only an explicit dtype=torch.bool gets here; PyTorch has no bool scan */
        scan_dtype_error(t, od, fname);
        return NULL;
    }
    src = ct_to(t, out_dtype != CT_DTYPE_UNSET ? out_dtype : t->dtype, ct_device_of(t), false);
    if (src == NULL) {
        return NULL;
    }
    out = ct_empty(t->ndim, t->sizes, od, ct_device_of(t));
    if (out != NULL && scan_into(src, dim, out, NULL, op, fname) < 0) {
        Py_CLEAR(out);
    }
    Py_DECREF(src);
    return out;
}

CtTensorObject *ct_cumsum(CtTensorObject *t, int dim, CtDType out_dtype)
{
    return scan(t, dim, out_dtype, CT_SCAN_SUM, "cumsum");
}
CtTensorObject *ct_cumprod(CtTensorObject *t, int dim, CtDType out_dtype)
{
    return scan(t, dim, out_dtype, CT_SCAN_PROD, "cumprod");
}

/* cummax/cummin: every dtype, bool included; values keep t's dtype. */
static int cum_extremum(CtTensorObject *t, int dim, CtScanOp op, const char *fname, CtTensorObject **values,
                        CtTensorObject **indices)
{
    CtTensorObject *v = ct_empty(t->ndim, t->sizes, t->dtype, ct_device_of(t));
    CtTensorObject *ix = v ? ct_empty(t->ndim, t->sizes, CT_I64, ct_device_of(t)) : NULL;
    if (ix == NULL || scan_into(t, dim, v, ix, op, fname) < 0) {
        Py_XDECREF(v);
        Py_XDECREF(ix);
        return -1;
    }
    *values = v;
    *indices = ix;
    return 0;
}

int ct_cummax(CtTensorObject *t, int dim, CtTensorObject **values, CtTensorObject **indices)
{
    return cum_extremum(t, dim, CT_SCAN_MAX, "cummax", values, indices);
}
int ct_cummin(CtTensorObject *t, int dim, CtTensorObject **values, CtTensorObject **indices)
{
    return cum_extremum(t, dim, CT_SCAN_MIN, "cummin", values, indices);
}

/* log(cumsum(exp(x))) as a running logaddexp (stable: each step is relative to the larger of
 * the two); floats only, as PyTorch. */
CtTensorObject *ct_logcumsumexp(CtTensorObject *t, int dim)
{
    if (!ct_is_floating(t->dtype)) {
        scan_dtype_error(t, t->dtype, "logcumsumexp");
        return NULL;
    }
    CtTensorObject *out = ct_empty(t->ndim, t->sizes, t->dtype, ct_device_of(t));
    if (out != NULL && scan_into(t, dim, out, NULL, CT_SCAN_LOGSUMEXP, "logcumsumexp") < 0) {
        Py_CLEAR(out);
    }
    return out;
}

/* --- softmax / log_softmax ------------------------------------------------------------------------------ */
static CtTensorObject *softmax_like(CtTensorObject *t, int dim, CtDType out_dtype, bool log_out)
{
    const char *fname = log_out ? "log_softmax" : "softmax";
    CtDType od = out_dtype != CT_DTYPE_UNSET ? out_dtype : t->dtype;
    if (!ct_is_floating(od)) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s%s_kernel_impl\" not implemented for '%s'", fname,
                     t->ndim == 0 || dim == t->ndim - 1 ? "_lastdim" : "", ct_scalar_type_name(od));
        return NULL;
    }
    CtTensorObject *src = ct_to(t, od, ct_device_of(t), false);
    if (src == NULL) {
        return NULL;
    }
    CtTensorObject *out = ct_empty(t->ndim, t->sizes, od, ct_device_of(t));
    if (out != NULL && ct_numel(out) > 0) {
        const struct CtReduceKernels *k = kernels_of(t, fname);
        CtDimDesc d;
        describe_lines(&d, src, dim, out, NULL);
        if (k == NULL || k->softmax == NULL || k->softmax(&d, log_out) < 0) {
            if (k != NULL && k->softmax == NULL) {
                missing_kernel(fname);
            }
            Py_CLEAR(out);
        }
    }
    Py_DECREF(src);
    return out;
}

CtTensorObject *ct_softmax(CtTensorObject *t, int dim, CtDType out_dtype) { return softmax_like(t, dim, out_dtype, false); }
CtTensorObject *ct_log_softmax(CtTensorObject *t, int dim, CtDType out_dtype)
{
    return softmax_like(t, dim, out_dtype, true);
}

/* --- sort / topk / median ------------------------------------------------------------------------------- */
/* PyTorch's IndexError for a reduction along an empty dim: 0 or -1. */
static int check_dim_nonempty(const CtTensorObject *t, int dim, const char *fname)
{
    if (t->ndim > 0 && t->sizes[dim] == 0) {
        PyErr_Format(PyExc_IndexError, "%s(): Expected reduction dim %d to have non-zero size.", fname, dim);
        return -1;
    }
    return 0;
}

/* What sort_select writes: a range of the sorted line, its lower median or its mode. */
enum { PICK_RANGE, PICK_MEDIAN, PICK_MODE };

/* Sorted positions [start, start + count) along dim into values/indices of length count
 * (PICK_MEDIAN / PICK_MODE: the lower median / the mode, count 1; ignore_nan: nanmedian's). */
static int sort_select(CtTensorObject *t, int dim, bool descending, int64_t start, int64_t count, int pick,
                       bool ignore_nan, bool keepdim, const char *fname, CtTensorObject **values,
                       CtTensorObject **indices)
{
    int rc = -1;
    CtTensorObject *v = NULL, *ix = NULL;
    int64_t sizes[CT_MAX_DIMS] = {0};
    sizes_with(t, dim, count, sizes);
    if (values != NULL && (v = ct_empty(t->ndim, sizes, t->dtype, ct_device_of(t))) == NULL) {
        goto done;
    }
    if (indices != NULL && (ix = ct_empty(t->ndim, sizes, CT_I64, ct_device_of(t))) == NULL) {
        goto done;
    }
    if (ct_numel(t) > 0 && count > 0) {
        const struct CtReduceKernels *k = kernels_of(t, fname);
        if (k == NULL) {
            goto done;
        }
        CtDimDesc d;
        describe_lines(&d, t, dim, v, ix);
        if (pick == PICK_MEDIAN) {
            if (k->median == NULL) {
                missing_kernel(fname);
                goto done;
            }
            if (k->median(&d, ignore_nan) < 0) {
                goto done;
            }
        } else if (pick == PICK_MODE) {
            if (k->mode == NULL || k->mode(&d) < 0) {
                if (k->mode == NULL) {
                    missing_kernel(fname);
                }
                goto done;
            }
        } else {
            if (k->sort == NULL) {
                missing_kernel(fname);
                goto done;
            }
            if (k->sort(&d, descending, start, count) < 0) {
                goto done;
            }
        }
    }
    bool mask[CT_MAX_DIMS] = {false};
    if (t->ndim > 0) {
        mask[dim] = true;
    }
    if (values != NULL) {
        *values = squeeze_masked(v, mask, keepdim);
        v = NULL;
        if (*values == NULL) {
            goto done;
        }
    }
    if (indices != NULL) {
        *indices = squeeze_masked(ix, mask, keepdim);
        ix = NULL;
        if (*indices == NULL) {
            if (values != NULL) {
                Py_CLEAR(*values);
            }
            goto done;
        }
    }
    rc = 0;
done:
    Py_XDECREF(v);
    Py_XDECREF(ix);
    return rc;
}

int ct_sort(CtTensorObject *t, int dim, bool descending, CtTensorObject **values, CtTensorObject **indices)
{
    int64_t n = t->ndim ? t->sizes[dim] : 1;
    return sort_select(t, dim, descending, 0, n, PICK_RANGE, false, true, "sort", values, indices);
}

int ct_topk(CtTensorObject *t, int64_t k, int dim, bool largest, CtTensorObject **values, CtTensorObject **indices)
{
    int64_t n = t->ndim ? t->sizes[dim] : 1;
    if (t->dtype == CT_BOOL) {
        PyErr_SetString(PyExc_NotImplementedError, "topk does not support bool dtypes on CPU");
        return -1;
    }
    if (k < 0 || k > n) {
        PyErr_SetString(PyExc_RuntimeError, "selected index k out of range");
        return -1;
    }
    /* a 0-d tensor's outputs hold its one element whatever k (0 or 1), as in PyTorch */
    return sort_select(t, dim, largest, 0, t->ndim == 0 ? 1 : k, PICK_RANGE, false, true, "topk", values, indices);
}

/* median and nanmedian share PyTorch's messages, which say "median" for both. */
static int median_dim(CtTensorObject *t, int dim, bool keepdim, bool ignore_nan, CtTensorObject **values,
                      CtTensorObject **indices)
{
    if (t->dtype == CT_BOOL) {
        PyErr_SetString(PyExc_NotImplementedError, "\"median_out\" not implemented for 'Bool'");
        return -1;
    }
    if (check_dim_nonempty(t, dim, "median") < 0) {
        return -1;
    }
    return sort_select(t, dim, false, 0, 1, PICK_MEDIAN, ignore_nan, keepdim, "median", values, indices);
}

int ct_median_dim(CtTensorObject *t, int dim, bool keepdim, CtTensorObject **values, CtTensorObject **indices)
{
    return median_dim(t, dim, keepdim, false, values, indices);
}
int ct_nanmedian_dim(CtTensorObject *t, int dim, bool keepdim, CtTensorObject **values, CtTensorObject **indices)
{
    return median_dim(t, dim, keepdim, true, values, indices);
}

static CtTensorObject *median_all(CtTensorObject *t, bool ignore_nan)
{
    if (t->dtype == CT_BOOL) {
        PyErr_SetString(PyExc_NotImplementedError, "\"median_cpu\" not implemented for 'Bool'");
        return NULL;
    }
    if (ct_numel(t) == 0) { /* PyTorch: NaN (floats) or the lowest value (integers) */
        CtScalar s = {CT_KIND_FLOAT, {.d = NAN}};
        if (!ct_is_floating(t->dtype)) {
            s.kind = CT_KIND_INT;
            s.v.i = INT64_MIN;
        }
        return ct_scalar_tensor(&s, t->dtype, ct_device_of(t));
    }
    CtTensorObject *flat = flattened(t), *r = NULL;
    if (flat == NULL) {
        return NULL;
    }
    int rc = median_dim(flat, 0, false, ignore_nan, &r, NULL);
    Py_DECREF(flat);
    return rc < 0 ? NULL : r;
}

/* --- kthvalue / mode ----------------------------------------------------------------------------------- */
/* Among equal values, the index is the one the stable sort puts k-th (PyTorch's CPU quickselect
 * leaves an unspecified one of them; its CUDA kernel any one). */
int ct_kthvalue(CtTensorObject *t, int64_t k, int dim, bool keepdim, CtTensorObject **values,
                CtTensorObject **indices)
{
    int64_t n = t->ndim ? t->sizes[dim] : 1;
    if (check_dim_nonempty(t, dim, "kthvalue") < 0) {
        return -1;
    }
    if (k < 1 || k > n) {
        PyErr_Format(PyExc_RuntimeError, "kthvalue(): selected number k out of range for dimension %d", dim);
        return -1;
    }
    if (t->dtype == CT_BOOL) {
        PyErr_Format(PyExc_NotImplementedError, "\"kthvalue_%s\" not implemented for 'Bool'",
                     ct_device_of(t).type == CT_DEV_CPU ? "cpu" : "cuda");
        return -1;
    }
    return sort_select(t, dim, false, k - 1, 1, PICK_RANGE, false, keepdim, "kthvalue", values, indices);
}

/* The index is the last position holding the mode: PyTorch's CPU kernel agrees on lines of up to
 * 16 elements, where its std::sort is an insertion sort; on longer lines its unstable sort
 * leaves an unspecified one of them. */
int ct_mode(CtTensorObject *t, int dim, bool keepdim, CtTensorObject **values, CtTensorObject **indices)
{
    if (check_dim_nonempty(t, dim, "mode") < 0) {
        return -1;
    }
    return sort_select(t, dim, false, 0, 1, PICK_MODE, false, keepdim, "mode", values, indices);
}

CtTensorObject *ct_median_all(CtTensorObject *t) { return median_all(t, false); }
CtTensorObject *ct_nanmedian_all(CtTensorObject *t) { return median_all(t, true); }

/* --- sum_to_size -------------------------------------------------------------------------------------- */
CtTensorObject *ct_sum_to_size(CtTensorObject *t, int ndim, const int64_t *sizes)
{
    bool mask[CT_MAX_DIMS], any = false;
    int lead = t->ndim - ndim;
    bool ok = lead >= 0;
    for (int i = 0; ok && i < t->ndim; i++) {
        mask[i] = i < lead || (sizes[i - lead] == 1 && t->sizes[i] != 1);
        ok = mask[i] || sizes[i - lead] == t->sizes[i];
        any |= mask[i];
    }
    if (!ok) {
        char a[256], b[256];
        ct_format_sizes(a, sizeof(a), ndim, sizes);
        ct_format_sizes(b, sizeof(b), t->ndim, t->sizes);
        PyErr_Format(PyExc_RuntimeError, "size {%s} is not expandable to size {%s}.", a, b);
        return NULL;
    }
    if (!any) {
        return (CtTensorObject *)Py_NewRef(t);
    }
    return reshape_fresh(ct_sum(t, mask, true, CT_DTYPE_UNSET), ndim, sizes);
}

/* ======================================================================================================
 * Python bindings
 * ====================================================================================================== */

/* --- named-tuple results ------------------------------------------------------------------------------ */
/* RT_X + RT_OUT is the type of X's out= variant (torch.return_types.max_out, ...) */
enum {
    RT_MAX, RT_MIN, RT_SORT, RT_TOPK, RT_MEDIAN, RT_AMINMAX,
    RT_KTHVALUE, RT_MODE, RT_CUMMAX, RT_CUMMIN, RT_NANMEDIAN, RT_FREXP,
    RT_OUT, RT_COUNT = 2 * RT_OUT
};

static PyStructSequence_Field values_indices_fields[] = {{"values", NULL}, {"indices", NULL}, {NULL, NULL}};
static PyStructSequence_Field min_max_fields[] = {{"min", NULL}, {"max", NULL}, {NULL, NULL}};
static PyStructSequence_Field frexp_fields[] = {{"mantissa", NULL}, {"exponent", NULL}, {NULL, NULL}};
static PyStructSequence_Desc return_type_descs[RT_COUNT] = {
    {"torch.return_types.max", NULL, values_indices_fields, 2},
    {"torch.return_types.min", NULL, values_indices_fields, 2},
    {"torch.return_types.sort", NULL, values_indices_fields, 2},
    {"torch.return_types.topk", NULL, values_indices_fields, 2},
    {"torch.return_types.median", NULL, values_indices_fields, 2},
    {"torch.return_types.aminmax", NULL, min_max_fields, 2},
    {"torch.return_types.kthvalue", NULL, values_indices_fields, 2},
    {"torch.return_types.mode", NULL, values_indices_fields, 2},
    {"torch.return_types.cummax", NULL, values_indices_fields, 2},
    {"torch.return_types.cummin", NULL, values_indices_fields, 2},
    {"torch.return_types.nanmedian", NULL, values_indices_fields, 2},
    {"torch.return_types.frexp", NULL, frexp_fields, 2},
    {"torch.return_types.max_out", NULL, values_indices_fields, 2},
    {"torch.return_types.min_out", NULL, values_indices_fields, 2},
    {"torch.return_types.sort_out", NULL, values_indices_fields, 2},
    {"torch.return_types.topk_out", NULL, values_indices_fields, 2},
    {"torch.return_types.median_out", NULL, values_indices_fields, 2},
    {"torch.return_types.aminmax_out", NULL, min_max_fields, 2},
    {"torch.return_types.kthvalue_out", NULL, values_indices_fields, 2},
    {"torch.return_types.mode_out", NULL, values_indices_fields, 2},
    {"torch.return_types.cummax_out", NULL, values_indices_fields, 2},
    {"torch.return_types.cummin_out", NULL, values_indices_fields, 2},
    {"torch.return_types.nanmedian_out", NULL, values_indices_fields, 2},
    {"torch.return_types.frexp_out", NULL, frexp_fields, 2},
};
static PyTypeObject *return_types[RT_COUNT];

/* PyTorch's repr of its named tuples: "torch.return_types.max(\nvalues=tensor(...),\nindices=tensor(...))",
 * one field a line. */
static PyObject *return_type_repr(PyObject *self, PyObject *unused)
{
    PyObject *parts = PyList_New(0), *sep = NULL, *body = NULL, *r = NULL;
    const PyMemberDef *members = Py_TYPE(self)->tp_members;
    for (Py_ssize_t i = 0; parts != NULL && i < PyTuple_GET_SIZE(self); i++) {
        PyObject *item = PyUnicode_FromFormat("%s=%R", members[i].name, PyTuple_GET_ITEM(self, i));
        if (item == NULL || PyList_Append(parts, item) < 0) {
            Py_CLEAR(parts);
        }
        Py_XDECREF(item);
    }
    sep = parts ? PyUnicode_FromString(",\n") : NULL;
    body = sep ? PyUnicode_Join(sep, parts) : NULL;
    if (body != NULL) {
        r = PyUnicode_FromFormat("%s(\n%U)", Py_TYPE(self)->tp_name, body);
    }
    Py_XDECREF(parts);
    Py_XDECREF(sep);
    Py_XDECREF(body);
    return r;
}

static PyMethodDef return_type_repr_def = {"__repr__", return_type_repr, METH_NOARGS, NULL};

/* A new struct-sequence type named as PyTorch's torch.return_types.*, with its repr. */
PyTypeObject *ct_return_type_new(PyStructSequence_Desc *desc)
{
    PyTypeObject *tp = PyStructSequence_NewType(desc);
    if (tp == NULL) {
        return NULL;
    }
    PyObject *descr = PyDescr_NewMethod(tp, &return_type_repr_def);
    if (descr == NULL || PyObject_SetAttrString((PyObject *)tp, "__repr__", descr) < 0) {
        Py_XDECREF(descr);
        Py_DECREF(tp);
        return NULL;
    }
    Py_DECREF(descr);
    return tp;
}

/* The struct-sequence type (borrowed), created on first use. */
static PyTypeObject *return_type(int which)
{
    if (return_types[which] == NULL) {
        return_types[which] = ct_return_type_new(&return_type_descs[which]);
    }
    return return_types[which];
}

/* A named tuple of two tensors; steals a and b (either may be NULL after a failure). */
static PyObject *make_pair(int which, CtTensorObject *a, CtTensorObject *b)
{
    PyTypeObject *tp = (a && b) ? return_type(which) : NULL;
    PyObject *r = tp ? PyStructSequence_New(tp) : NULL;
    if (r == NULL) {
        Py_XDECREF(a);
        Py_XDECREF(b);
        return NULL;
    }
    PyStructSequence_SetItem(r, 0, (PyObject *)a);
    PyStructSequence_SetItem(r, 1, (PyObject *)b);
    return r;
}

/* torch.return_types.frexp(mantissa, exponent) for ops_more.c; steals both. */
PyObject *ct_frexp_result(CtTensorObject *mantissa, CtTensorObject *exponent)
{
    return make_pair(RT_FREXP, mantissa, exponent);
}

/* A plain tuple of two tensors; steals a and b. */
static PyObject *make_tuple2(CtTensorObject *a, CtTensorObject *b)
{
    if (a == NULL || b == NULL) {
        Py_XDECREF(a);
        Py_XDECREF(b);
        return NULL;
    }
    PyObject *r = PyTuple_Pack(2, (PyObject *)a, (PyObject *)b);
    Py_DECREF(a);
    Py_DECREF(b);
    return r;
}

static PyObject *py_return_types(PyObject *self, PyObject *unused)
{
    PyObject *d = PyDict_New();
    for (int i = 0; d != NULL && i < RT_COUNT; i++) {
        PyTypeObject *tp = return_type(i);
        const char *name = strrchr(return_type_descs[i].name, '.') + 1;
        if (tp == NULL || PyDict_SetItemString(d, name, (PyObject *)tp) < 0) {
            Py_CLEAR(d);
        }
    }
    return d;
}

/* --- argument helpers ------------------------------------------------------------------------------ */
typedef PyObject *(*FastFn)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);

static CtTensorObject *input_arg(PyObject *obj, const char *fname)
{
    if (!CtTensor_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' (position 1) must be Tensor, not %s", fname,
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return CT_TENSOR(obj);
}

static bool is_int_arg(PyObject *obj) { return !PyBool_Check(obj) && !PyFloat_Check(obj) && PyIndex_Check(obj); }

/* One dim (int) wrapped for t. */
static int int_dim_arg(PyObject *obj, const CtTensorObject *t, const char *fname, int *dim)
{
    if (!is_int_arg(obj) || CtTensor_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'dim' must be int, not %s", fname, Py_TYPE(obj)->tp_name);
        return -1;
    }
    int64_t d;
    if (ct_arg_int64(obj, &d) < 0) {
        return -1;
    }
    return ct_wrap_dim(d, t->ndim, dim);
}

/* dim as None/absent (every dim: *given = false), an int, or a tuple/list of ints (empty: every
 * dim). Fills mask with t->ndim flags. */
static int dims_arg(PyObject *obj, const CtTensorObject *t, const char *fname, bool *mask, bool *given)
{
    for (int i = 0; i < t->ndim; i++) {
        mask[i] = false;
    }
    *given = true;
    if (obj == NULL || obj == Py_None) {
        *given = false;
    } else if (is_int_arg(obj) && !CtTensor_Check(obj)) {
        int d;
        if (int_dim_arg(obj, t, fname, &d) < 0) {
            return -1;
        }
        if (t->ndim > 0) {
            mask[d] = true;
        }
        return 0;
    } else if (PyTuple_Check(obj) || PyList_Check(obj)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
        if (n == 0) {
            *given = false;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *item = PySequence_Fast_GET_ITEM(obj, i);
            int64_t v;
            int d;
            if (!is_int_arg(item)) {
                PyErr_Format(PyExc_TypeError,
                             "%s(): argument 'dim' must be tuple of ints, but found element of type %s at pos %zd",
                             fname, Py_TYPE(item)->tp_name, i);
                return -1;
            }
            if (ct_arg_int64(item, &v) < 0 || ct_wrap_dim(v, t->ndim, &d) < 0) {
                return -1;
            }
            if (t->ndim > 0) {
                if (mask[d]) {
                    PyErr_Format(PyExc_RuntimeError, "dim %d appears multiple times in the list of dims", d);
                    return -1;
                }
                mask[d] = true;
            }
        }
    } else {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'dim' must be tuple of ints, not %s", fname,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (!*given) {
        for (int i = 0; i < t->ndim; i++) {
            mask[i] = true;
        }
    }
    return 0;
}

static int dtype_arg(PyObject *obj, CtDType *out)
{
    *out = CT_DTYPE_UNSET;
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    return ct_dtype_from_object(obj, out);
}

static int keepdim_arg(PyObject *obj, const char *fname, bool *out)
{
    *out = false;
    if (obj != NULL && obj != Py_None && !PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'keepdim' must be bool, not %s", fname, Py_TYPE(obj)->tp_name);
        return -1;
    }
    return ct_arg_bool(obj, out);
}

/* --- out= ---------------------------------------------------------------------------------------------- */
/* out=(first, second) of a two-result op: two tensors (borrowed) in o, both NULL when absent or
 * None. 0 or -1 (TypeError). */
static int pair_out_arg(PyObject *obj, const char *fname, CtTensorObject **o)
{
    o[0] = o[1] = NULL;
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'out' must be tuple of Tensors, not %s", fname,
                     CtTensor_Check(obj) ? "Tensor" : Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PySequence_Fast_GET_SIZE(obj) != 2) {
        PyErr_Format(PyExc_TypeError, "expected tuple of 2 elements but got %zd", PySequence_Fast_GET_SIZE(obj));
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(obj, i);
        if (!CtTensor_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument 'out' must be tuple of Tensors, not %s", fname,
                         Py_TYPE(obj)->tp_name);
            return -1;
        }
        o[i] = CT_TENSOR(item);
    }
    return 0;
}

/* Hands the two results a, b of an op to out=(o[0], o[1]) (each by ct_write_out with its
 * rule, both checked for dtype before either is written) and returns the named tuple
 * RT_which + RT_OUT of the out tensors. n inputs ts are checked for overlap (0: none). Steals
 * a and b (either may be NULL after a failure). */
static PyObject *write_pair_out(int which, CtTensorObject *a, CtTensorObject *b, CtTensorObject *const *o,
                                const char *fname, CtOutRule rule_a, CtOutRule rule_b, Py_ssize_t n,
                                CtTensorObject *const *ts)
{
    if (a == NULL || b == NULL) {
        Py_XDECREF(a);
        Py_XDECREF(b);
        return NULL;
    }
    bool exact_a = (rule_a & ~CT_OUT_ALLOW_EXPANDED) == CT_OUT_EXACT, exact_b = (rule_b & ~CT_OUT_ALLOW_EXPANDED) == CT_OUT_EXACT;
    if (exact_b && o[1]->dtype != b->dtype && !(exact_a && o[0]->dtype != a->dtype)) {
        Py_DECREF(a); /* a wrong second dtype is refused before the first out is touched */
        return ct_write_out(b, (PyObject *)o[1], fname, rule_b, n, ts);
    }
    PyObject *va = ct_write_out(a, (PyObject *)o[0], fname, rule_a, n, ts);
    if (va == NULL) {
        Py_DECREF(b);
        return NULL;
    }
    PyObject *vb = ct_write_out(b, (PyObject *)o[1], fname, rule_b, n, ts);
    if (vb == NULL) {
        Py_DECREF(va);
        return NULL;
    }
    return make_pair(which + RT_OUT, (CtTensorObject *)va, (CtTensorObject *)vb);
}

/* --- sum / nansum / mean / prod --------------------------------------------------------------------- */
typedef CtTensorObject *(*SumLikeFn)(CtTensorObject *, const bool *, bool, CtDType);

/* sum(x, dim, out=o) is sum(x, dim, dtype=o.dtype) written into o (PyTorch sums in out's
 * dtype); with dtype= given, out must have exactly that dtype. mean computes in its own dtype
 * and casts into out. */
static PyObject *sum_like_py(const char *fname, SumLikeFn fn, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "keepdim", "*dtype", "*out", NULL};
    PyObject *a[5];
    bool mask[CT_MAX_DIMS], given, keepdim;
    CtDType dtype;
    CtTensorObject *t, *out;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0 || (t = input_arg(a[0], fname)) == NULL ||
        dtype_arg(a[3], &dtype) < 0 || ct_arg_out(a[4], fname, &out) < 0) {
        return NULL;
    }
    if (out != NULL && a[1] == NULL && fn == ct_sum) { /* sum(input, *, dtype) has no out= overload */
        PyErr_SetString(PyExc_TypeError,
                        "sum() received an invalid combination of arguments - got (Tensor, out=Tensor), but expected "
                        "one of:\n * (Tensor input, *, torch.dtype dtype = None)\n * (Tensor input, tuple of ints "
                        "dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None)\n");
        return NULL;
    }
    if (fn == ct_mean && dtype == CT_DTYPE_UNSET && !ct_is_floating(t->dtype)) {
        return (PyObject *)ct_mean(t, NULL, false, dtype); /* its dtype error comes before any dim error */
    }
    if (fn == ct_nanmean && !ct_is_floating(t->dtype)) { /* as mean's: before any dim error */
        if (out != NULL) {
            PyErr_SetString(PyExc_NotImplementedError,
                            "nanmean(): integral types and 'Bool' are not supported for nanmean, even for empty "
                            "tensors.");
            return NULL;
        }
        return (PyObject *)ct_nanmean(t, NULL, false, dtype);
    }
    if (dims_arg(a[1], t, fname, mask, &given) < 0 || keepdim_arg(a[2], fname, &keepdim) < 0) {
        return NULL;
    }
    if (out == NULL) {
        return (PyObject *)fn(t, mask, keepdim, dtype);
    }
    CtOutRule rule = CT_OUT_EXACT;
    if (fn == ct_mean) {
        rule = dtype == CT_DTYPE_UNSET ? CT_OUT_RESULT_CAST : CT_OUT_EXACT;
        if (dtype == CT_DTYPE_UNSET && ct_is_floating(out->dtype)) {
            dtype = out->dtype; /* PyTorch sums in out's dtype (float16 input, float64 out: a float64 mean) */
        }
    } else if ((fn == ct_nansum || fn == ct_nanmean) && ct_is_floating(t->dtype)) {
        /* integer input: nansum is sum; nanmean's out= is nansum's out= divided in place */
        if (dtype != CT_DTYPE_UNSET && dtype != out->dtype) {
            PyErr_Format(PyExc_RuntimeError, "nansum: provided dtype must match dtype of result. Got %s and %s.",
                         ct_scalar_type_name(out->dtype), ct_scalar_type_name(dtype));
            return NULL;
        }
        if (!ct_is_floating(out->dtype)) {
            PyErr_Format(PyExc_NotImplementedError, "\"nansum_%s\" not implemented for '%s'",
                         ct_device_of(t).type == CT_DEV_CPU ? "cpu" : "cuda", ct_scalar_type_name(out->dtype));
            return NULL;
        }
        dtype = out->dtype;
    } else if (dtype == CT_DTYPE_UNSET) {
        dtype = out->dtype;
    }
    /* computed into a fresh tensor, so an out overlapping the input (which PyTorch allows) is fine */
    return ct_write_out(fn(t, mask, keepdim, dtype), (PyObject *)out, fname, rule, 0, NULL);
}

static PyObject *py_sum(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return sum_like_py("sum", ct_sum, args, nargs, kwnames);
}
static PyObject *py_nansum(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return sum_like_py("nansum", ct_nansum, args, nargs, kwnames);
}
static PyObject *py_mean(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return sum_like_py("mean", ct_mean, args, nargs, kwnames);
}
static PyObject *py_nanmean(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return sum_like_py("nanmean", ct_nanmean, args, nargs, kwnames);
}

/* prod(input, dim=None, keepdim=False, *, dtype=None, out=None): dim is a single int, as in
 * PyTorch; out= needs the dim and gets sum's dtype rule. */
static PyObject *py_prod(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "keepdim", "*dtype", "*out", NULL};
    PyObject *a[5];
    bool mask[CT_MAX_DIMS] = {false}, keepdim;
    CtDType dtype;
    CtTensorObject *t, *out;
    if (ct_parse_args("prod", args, nargs, kwnames, names, 1, a) < 0 || (t = input_arg(a[0], "prod")) == NULL ||
        keepdim_arg(a[2], "prod", &keepdim) < 0 || dtype_arg(a[3], &dtype) < 0 ||
        ct_arg_out(a[4], "prod", &out) < 0) {
        return NULL;
    }
    if (out != NULL && a[1] == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "prod() received an invalid combination of arguments - got (Tensor, out=Tensor), but "
                        "expected one of:\n * (Tensor input, *, torch.dtype dtype = None)\n * (Tensor input, int "
                        "dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None)\n");
        return NULL;
    }
    if (out != NULL && a[1] == Py_None) {
        PyErr_SetString(PyExc_TypeError, "prod(): argument 'dim' (position 2) must be int, not NoneType");
        return NULL;
    }
    if (a[1] == NULL || a[1] == Py_None) {
        return (PyObject *)ct_prod(t, NULL, keepdim, dtype);
    }
    int dim;
    if (int_dim_arg(a[1], t, "prod", &dim) < 0) {
        return NULL;
    }
    if (t->ndim > 0) {
        mask[dim] = true;
    }
    if (out == NULL) {
        return (PyObject *)ct_prod(t, mask, keepdim, dtype);
    }
    CtDType od = dtype == CT_DTYPE_UNSET ? out->dtype : dtype;
    return ct_write_out(ct_prod(t, mask, keepdim, od), (PyObject *)out, "prod", CT_OUT_EXACT, 0, NULL);
}

/* --- max / min / amax / amin / aminmax / argmax / argmin ----------------------------------------------- */
/* max(input) / max(input, dim, keepdim=False) -> (values, indices) / max(input, other). */
static PyObject *max_min_py(bool is_max, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "keepdim", "*other", "*out", NULL};
    const char *fname = is_max ? "max" : "min";
    PyObject *a[5];
    bool keepdim;
    CtTensorObject *t;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0 || (t = input_arg(a[0], fname)) == NULL ||
        keepdim_arg(a[2], fname, &keepdim) < 0) {
        return NULL;
    }
    PyObject *other = a[3] ? a[3] : (a[1] && CtTensor_Check(a[1])) ? a[1] : NULL;
    if (other != NULL) { /* the elementwise maximum/minimum of the elementwise family */
        PyObject *mod = PyImport_ImportModule("ctorch._C");
        PyObject *fn = mod ? PyObject_GetAttrString(mod, is_max ? "maximum" : "minimum") : NULL;
        Py_XDECREF(mod);
        if (fn == NULL) {
            return NULL;
        }
        PyObject *r = NULL, *fargs = PyTuple_Pack(2, (PyObject *)t, other);
        PyObject *fkw = a[4] != NULL ? Py_BuildValue("{sO}", "out", a[4]) : NULL;
        if (fargs != NULL && (a[4] == NULL || fkw != NULL)) {
            r = PyObject_Call(fn, fargs, fkw);
        }
        Py_XDECREF(fargs);
        Py_XDECREF(fkw);
        Py_DECREF(fn);
        return r;
    }
    if (a[1] == NULL || a[1] == Py_None) {
        if (a[2] != NULL) {
            PyErr_Format(PyExc_TypeError,
                         "%s() received an invalid combination of arguments - got (keepdim=bool, ), but expected one "
                         "of: (Tensor input), (Tensor input, int dim, bool keepdim), (Tensor input, Tensor other)",
                         fname);
            return NULL;
        }
        return ct_write_out(is_max ? ct_max_all(t) : ct_min_all(t), a[4], fname, CT_OUT_CAN_CAST, 1, &t);
    }
    int dim;
    if (int_dim_arg(a[1], t, fname, &dim) < 0) {
        return NULL;
    }
    PyObject *out = a[4] == Py_None ? NULL : a[4];
    if (out != NULL && (!(PyTuple_Check(out) || PyList_Check(out)) || PySequence_Fast_GET_SIZE(out) != 2)) {
        PyErr_Format(PyExc_TypeError,
                     "%s() received an invalid combination of arguments - got (Tensor, int, out=%s), but expected "
                     "one of: (Tensor input, int dim, bool keepdim, *, tuple of Tensors out)",
                     fname, CtTensor_Check(out) ? "Tensor" : Py_TYPE(out)->tp_name);
        return NULL;
    }
    CtTensorObject *o[2];
    if (pair_out_arg(out, fname, o) < 0) {
        return NULL;
    }
    CtTensorObject *values = NULL, *indices = NULL;
    if ((is_max ? ct_max_dim : ct_min_dim)(t, dim, keepdim, &values, &indices) < 0) {
        return NULL;
    }
    if (out == NULL) {
        return make_pair(is_max ? RT_MAX : RT_MIN, values, indices);
    }
    /* out=(values, indices): each written in place, as PyTorch's max.dim_max */
    return write_pair_out(is_max ? RT_MAX : RT_MIN, values, indices, o, fname, CT_OUT_EXACT, CT_OUT_EXACT, 1, &t);
}

static PyObject *py_max(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return max_min_py(true, args, nargs, kwnames);
}
static PyObject *py_min(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return max_min_py(false, args, nargs, kwnames);
}

static PyObject *amax_amin_py(bool is_max, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "keepdim", "*out", NULL};
    const char *fname = is_max ? "amax" : "amin";
    PyObject *a[4];
    bool mask[CT_MAX_DIMS], given, keepdim;
    CtTensorObject *t, *out;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0 || (t = input_arg(a[0], fname)) == NULL ||
        ct_arg_out(a[3], fname, &out) < 0 || dims_arg(a[1], t, fname, mask, &given) < 0 ||
        keepdim_arg(a[2], fname, &keepdim) < 0) {
        return NULL;
    }
    return ct_write_out(extremum(t, given ? mask : NULL, keepdim, is_max, fname), (PyObject *)out, fname,
                        CT_OUT_SAME_AS_INPUT, 0, NULL);
}

static PyObject *py_amax(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return amax_amin_py(true, args, nargs, kwnames);
}
static PyObject *py_amin(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return amax_amin_py(false, args, nargs, kwnames);
}

/* aminmax(input, *, dim=None, keepdim=False) -> (min, max) */
static PyObject *py_aminmax(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "*dim", "*keepdim", "*out", NULL};
    PyObject *a[4];
    bool mask[CT_MAX_DIMS] = {false}, keepdim;
    CtTensorObject *t, *o[2];
    if (ct_parse_args("aminmax", args, nargs, kwnames, names, 1, a) < 0 || (t = input_arg(a[0], "aminmax")) == NULL ||
        keepdim_arg(a[2], "aminmax", &keepdim) < 0 || pair_out_arg(a[3], "aminmax", o) < 0) {
        return NULL;
    }
    const bool *dims = NULL;
    if (a[1] != NULL && a[1] != Py_None) {
        int dim;
        if (int_dim_arg(a[1], t, "aminmax", &dim) < 0) {
            return NULL;
        }
        if (t->ndim > 0) {
            mask[dim] = true;
        }
        dims = mask;
    }
    if (ct_numel(t) == 0 && dims == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
        return NULL;
    }
    CtTensorObject *lo = extremum(t, dims, keepdim, false, "aminmax");
    CtTensorObject *hi = lo ? extremum(t, dims, keepdim, true, "aminmax") : NULL;
    if (o[0] != NULL) { /* PyTorch refuses an out overlapping the input here */
        return write_pair_out(RT_AMINMAX, lo, hi, o, "aminmax", CT_OUT_EXACT, CT_OUT_EXACT, 1, &t);
    }
    return make_pair(RT_AMINMAX, lo, hi);
}

static PyObject *argmax_py(bool is_max, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "keepdim", "*out", NULL};
    const char *fname = is_max ? "argmax" : "argmin";
    PyObject *a[4];
    bool keepdim;
    int dim = -1;
    CtTensorObject *t, *out;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0 || (t = input_arg(a[0], fname)) == NULL ||
        keepdim_arg(a[2], fname, &keepdim) < 0 || ct_arg_out(a[3], fname, &out) < 0) {
        return NULL;
    }
    if (a[1] != NULL && a[1] != Py_None && (!is_int_arg(a[1]) || CtTensor_Check(a[1]))) {
        /* a dim of the wrong type is refused first */
        PyErr_Format(PyExc_TypeError, "%s(): argument 'dim' must be int, not %s", fname, Py_TYPE(a[1])->tp_name);
        return NULL;
    }
    if (t->dtype == CT_BOOL) { /* before the dim's range, as PyTorch */
        PyErr_Format(PyExc_NotImplementedError, "%s(): does not support bool input", fname);
        return NULL;
    }
    if (a[1] != NULL && a[1] != Py_None && int_dim_arg(a[1], t, fname, &dim) < 0) {
        return NULL;
    }
    return ct_write_out(argmax_like(t, dim, keepdim, is_max), (PyObject *)out, fname, CT_OUT_EXACT, 0, NULL);
}

static PyObject *py_argmax(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return argmax_py(true, args, nargs, kwnames);
}
static PyObject *py_argmin(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return argmax_py(false, args, nargs, kwnames);
}

/* --- var / std / var_mean / std_mean ---------------------------------------------------------------- */
/* (input, dim=None, unbiased=True, keepdim=False, *, correction=None); a bool in dim's place is
 * `unbiased` (the std(unbiased) overload). */
static PyObject *var_like_py(const char *fname, bool take_sqrt, bool with_mean, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "unbiased", "keepdim", "*correction", "*out", NULL};
    PyObject *a[6];
    bool mask[CT_MAX_DIMS], given, keepdim, unbiased = true;
    CtTensorObject *t, *out;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0 || (t = input_arg(a[0], fname)) == NULL) {
        return NULL;
    }
    if (with_mean && a[5] != NULL) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument 'out'", fname);
        return NULL;
    }
    if (ct_arg_out(a[5], fname, &out) < 0) {
        return NULL;
    }
    if (!ct_is_floating(t->dtype)) { /* before the dims, as PyTorch; var_mean/std_mean name themselves */
        PyErr_Format(PyExc_NotImplementedError, "%s only support floating point and complex dtypes",
                     with_mean ? fname : "std and var");
        return NULL;
    }
    PyObject *dim_obj = a[1], *unbiased_obj = a[2];
    if (dim_obj != NULL && PyBool_Check(dim_obj)) {
        if (unbiased_obj != NULL) {
            PyErr_Format(PyExc_TypeError, "%s() received an invalid combination of arguments", fname);
            return NULL;
        }
        if (out != NULL) { /* std(input, unbiased) has no out= overload */
            PyErr_Format(PyExc_TypeError,
                         "%s() received an invalid combination of arguments - got (Tensor, bool, out=Tensor), but "
                         "the (Tensor input, bool unbiased) overload takes no out=",
                         fname);
            return NULL;
        }
        unbiased_obj = dim_obj;
        dim_obj = NULL;
    }
    if (unbiased_obj != NULL && a[4] != NULL && a[4] != Py_None) {
        PyErr_Format(PyExc_TypeError,
                     "%s() received an invalid combination of arguments - got both 'unbiased' and 'correction'", fname);
        return NULL;
    }
    if (dims_arg(dim_obj, t, fname, mask, &given) < 0 || keepdim_arg(a[3], fname, &keepdim) < 0 ||
        ct_arg_bool(unbiased_obj, &unbiased) < 0) {
        return NULL;
    }
    double correction = unbiased ? 1.0 : 0.0;
    if (ct_arg_double(a[4], &correction) < 0) {
        return NULL;
    }
    CtTensorObject *var = NULL, *mean = NULL;
    if (ct_var_mean(t, mask, correction, keepdim, take_sqrt, &var, with_mean ? &mean : NULL) < 0) {
        return NULL;
    }
    if (with_mean) {
        return make_tuple2(var, mean);
    }
    return ct_write_out(var, (PyObject *)out, fname, CT_OUT_RESULT_CAST, 0, NULL);
}

static PyObject *py_var(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return var_like_py("var", false, false, args, nargs, kwnames);
}
static PyObject *py_std(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return var_like_py("std", true, false, args, nargs, kwnames);
}
static PyObject *py_var_mean(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return var_like_py("var_mean", false, true, args, nargs, kwnames);
}
static PyObject *py_std_mean(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return var_like_py("std_mean", true, true, args, nargs, kwnames);
}

/* --- norm ------------------------------------------------------------------------------------------------ */
/* norm(input, p='fro', dim=None, keepdim=False, dtype=None): numbers are vector p-norms; 'fro' is
 * the 2-norm over dim (at most two dims); 'nuc' is linalg.matrix_norm's. */
static PyObject *py_norm(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    /* out= is keyword-only: the method Tensor.norm takes dtype in the place of torch.norm's out */
    static const char *const names[] = {"input", "p", "dim", "keepdim", "dtype", "*out", NULL};
    PyObject *a[6];
    bool mask[CT_MAX_DIMS], given, keepdim;
    CtDType dtype;
    CtTensorObject *t, *out;
    double p = 2.0;
    if (ct_parse_args("norm", args, nargs, kwnames, names, 1, a) < 0 || (t = input_arg(a[0], "norm")) == NULL) {
        return NULL;
    }
    if (!ct_is_floating(t->dtype) && (a[1] == NULL || !PyUnicode_Check(a[1]))) {
        return (PyObject *)ct_norm(t, p, NULL, false, CT_DTYPE_UNSET); /* its dtype error before any dim error */
    }
    if (dims_arg(a[2], t, "norm", mask, &given) < 0 || keepdim_arg(a[3], "norm", &keepdim) < 0 ||
        dtype_arg(a[4], &dtype) < 0 || ct_arg_out(a[5], "norm", &out) < 0) {
        return NULL;
    }
    if (a[1] != NULL && PyUnicode_Check(a[1])) {
        const char *s = PyUnicode_AsUTF8(a[1]);
        if (s == NULL) {
            return NULL;
        }
        int ndims = 0;
        for (int i = 0; given && i < t->ndim; i++) {
            ndims += mask[i];
        }
        if (strcmp(s, "fro") != 0 && strcmp(s, "nuc") != 0) {
            PyErr_Format(PyExc_RuntimeError, "linalg.matrix_norm: Order %s not supported.", s);
            return NULL;
        }
        if (strcmp(s, "nuc") == 0) { /* linalg.matrix_norm over dim (all dims without: 2-d only) */
            PyObject *dims = given ? PySequence_Tuple(a[2]) : PyTuple_New(t->ndim);
            for (int i = 0; !given && dims != NULL && i < t->ndim; i++) {
                PyTuple_SET_ITEM(dims, i, PyLong_FromLong(i));
            }
            PyObject *kw = Py_BuildValue("(ss)", "dtype", "out");
            PyObject *call[6] = {a[0], a[1], dims, keepdim ? Py_True : Py_False, a[4] ? a[4] : Py_None,
                                 a[5] ? a[5] : Py_None};
            PyObject *r = dims && kw ? ct_op("_linalg_matrix_norm", call, 4, kw) : NULL;
            Py_XDECREF(dims);
            Py_XDECREF(kw);
            return r;
        }
        if (given && ndims > 2) {
            PyObject *seq = PySequence_Tuple(a[2]);
            PyObject *str = seq ? PyObject_Str(seq) : NULL;
            Py_XDECREF(seq);
            if (str != NULL) {
                PyErr_Format(PyExc_RuntimeError, "linalg.matrix_norm: dim must be a 2-tuple. Got %U", str);
                Py_DECREF(str);
            }
            return NULL;
        }
    } else if (a[1] != NULL && a[1] != Py_None) {
        if (PyBool_Check(a[1]) || !(PyFloat_Check(a[1]) || PyIndex_Check(a[1]))) {
            PyErr_Format(PyExc_TypeError, "norm(): argument 'p' must be Number or str, not %s", Py_TYPE(a[1])->tp_name);
            return NULL;
        }
        if (ct_arg_double(a[1], &p) < 0) {
            return NULL;
        }
    }
    return ct_write_out(ct_norm(t, p, given ? mask : NULL, keepdim, dtype), (PyObject *)out, "norm", CT_OUT_EXACT, 0,
                        NULL);
}

/* --- logsumexp / all / any / count_nonzero -------------------------------------------------------------- */
static PyObject *py_logsumexp(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "keepdim", "*out", NULL};
    PyObject *a[4];
    bool mask[CT_MAX_DIMS], given, keepdim;
    CtTensorObject *t, *out;
    if (ct_parse_args("logsumexp", args, nargs, kwnames, names, 2, a) < 0 ||
        (t = input_arg(a[0], "logsumexp")) == NULL || ct_arg_out(a[3], "logsumexp", &out) < 0) {
        return NULL;
    }
    if (a[1] == Py_None) {
        PyErr_SetString(PyExc_TypeError, "logsumexp(): argument 'dim' must be tuple of ints, not NoneType");
        return NULL;
    }
    if (dims_arg(a[1], t, "logsumexp", mask, &given) < 0 || keepdim_arg(a[2], "logsumexp", &keepdim) < 0) {
        return NULL;
    }
    if (out != NULL && !ct_is_floating(out->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "logsumexp(): Expected floating point type for result tensor, but got: %s",
                     ct_scalar_type_name(out->dtype));
        return NULL;
    }
    return ct_write_out(ct_logsumexp(t, mask, keepdim), (PyObject *)out, "logsumexp", CT_OUT_ANY, 0, NULL);
}

static PyObject *all_any_py(bool is_all, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "keepdim", "*out", NULL};
    const char *fname = is_all ? "all" : "any";
    PyObject *a[4];
    bool mask[CT_MAX_DIMS], given, keepdim;
    CtTensorObject *t, *out;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0 || (t = input_arg(a[0], fname)) == NULL ||
        ct_arg_out(a[3], fname, &out) < 0) {
        return NULL;
    }
    if (out != NULL && out->dtype != CT_BOOL && out->dtype != CT_U8) { /* before the dims, as PyTorch */
        PyErr_Format(PyExc_RuntimeError, "%s only supports bool tensor for result, got: %s", fname,
                     ct_scalar_type_name(out->dtype));
        return NULL;
    }
    if (dims_arg(a[1], t, fname, mask, &given) < 0 || keepdim_arg(a[2], fname, &keepdim) < 0) {
        return NULL;
    }
    if (!given && a[1] != NULL && a[1] != Py_None) {
        /* dim=() reduces nothing here (sum and friends read it as "all dims"): PyTorch's all/any
         * then just test each element */
        for (int i = 0; i < t->ndim; i++) {
            mask[i] = false;
        }
    }
    return ct_write_out(is_all ? ct_all(t, mask, keepdim) : ct_any(t, mask, keepdim), (PyObject *)out, fname,
                        CT_OUT_ANY, 0, NULL);
}

static PyObject *py_all(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return all_any_py(true, args, nargs, kwnames);
}
static PyObject *py_any(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return all_any_py(false, args, nargs, kwnames);
}

static PyObject *py_count_nonzero(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", NULL};
    PyObject *a[2];
    bool mask[CT_MAX_DIMS], given;
    CtTensorObject *t;
    if (ct_parse_args("count_nonzero", args, nargs, kwnames, names, 1, a) < 0 ||
        (t = input_arg(a[0], "count_nonzero")) == NULL || dims_arg(a[1], t, "count_nonzero", mask, &given) < 0) {
        return NULL;
    }
    return (PyObject *)ct_count_nonzero(t, mask);
}

/* --- cumsum / cumprod / softmax / log_softmax -------------------------------------------------------------- */
typedef CtTensorObject *(*DimDtypeFn)(CtTensorObject *, int, CtDType);

/* (input, dim, dtype=None); dtype is keyword-only when kw_only_dtype. */
static PyObject *dim_dtype_py(const char *fname, DimDtypeFn fn, bool kw_only_dtype, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names_kw[] = {"input", "dim", "*dtype", "*out", NULL};
    static const char *const names_pos[] = {"input", "dim", "dtype", "*out", "*_stacklevel", NULL};
    PyObject *a[5];
    CtDType dtype;
    int dim;
    CtTensorObject *t, *out;
    if (ct_parse_args(fname, args, nargs, kwnames, kw_only_dtype ? names_kw : names_pos, 2, a) < 0 ||
        (t = input_arg(a[0], fname)) == NULL || int_dim_arg(a[1], t, fname, &dim) < 0 || dtype_arg(a[2], &dtype) < 0 ||
        ct_arg_out(a[3], fname, &out) < 0) {
        return NULL;
    }
    /* the scans, like sum, compute in out's dtype unless dtype= is given; softmax's out must
     * have the result's dtype */
    if (out != NULL && kw_only_dtype && dtype == CT_DTYPE_UNSET) {
        dtype = out->dtype;
    }
    return ct_write_out(fn(t, dim, dtype), (PyObject *)out, fname, CT_OUT_EXACT, 0, NULL);
}

static PyObject *py_cumsum(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return dim_dtype_py("cumsum", ct_cumsum, true, args, nargs, kwnames);
}
static PyObject *py_cumprod(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return dim_dtype_py("cumprod", ct_cumprod, true, args, nargs, kwnames);
}
/* The out= dtype check of cummax/cummin/logcumsumexp, in PyTorch's words. 0 or -1. */
static int out_scalar_type(const CtTensorObject *out, CtDType want)
{
    if (out != NULL && out->dtype != want) {
        PyErr_Format(PyExc_RuntimeError, "expected scalar_type %s but found %s", ct_scalar_type_name(want),
                     ct_scalar_type_name(out->dtype));
        return -1;
    }
    return 0;
}

/* cummax/cummin(input, dim, *, out=None) -> (values, indices); a 0-d input takes dim 0 or -1. */
static PyObject *cum_extremum_py(bool is_max, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "*out", NULL};
    const char *fname = is_max ? "cummax" : "cummin";
    PyObject *a[3];
    int dim;
    int64_t d0;
    CtTensorObject *t, *o[2];
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0 || (t = input_arg(a[0], fname)) == NULL ||
        pair_out_arg(a[2], fname, o) < 0) {
        return NULL;
    }
    if (t->ndim == 0 && is_int_arg(a[1]) && !CtTensor_Check(a[1])) {
        if (ct_arg_int64(a[1], &d0) < 0) {
            return NULL;
        }
        if (d0 != 0 && d0 != -1) {
            PyErr_Format(PyExc_IndexError, "%s(): Expected reduction dim -1 or 0 for scalar but got %lld", fname,
                         (long long)d0);
            return NULL;
        }
    }
    if (int_dim_arg(a[1], t, fname, &dim) < 0) {
        return NULL;
    }
    if (o[0] != NULL && (out_scalar_type(o[0], t->dtype) < 0 || out_scalar_type(o[1], CT_I64) < 0)) {
        return NULL;
    }
    CtTensorObject *values = NULL, *indices = NULL;
    if ((is_max ? ct_cummax : ct_cummin)(t, dim, &values, &indices) < 0) {
        return NULL;
    }
    if (o[0] != NULL) { /* computed into fresh tensors: an out overlapping the input is fine */
        CtOutRule rule = CT_OUT_EXACT | CT_OUT_ALLOW_EXPANDED; /* PyTorch writes an expanded out */
        return write_pair_out(is_max ? RT_CUMMAX : RT_CUMMIN, values, indices, o, fname, rule, rule, 0, NULL);
    }
    return make_pair(is_max ? RT_CUMMAX : RT_CUMMIN, values, indices);
}

static PyObject *py_cummax(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return cum_extremum_py(true, args, nargs, kwnames);
}
static PyObject *py_cummin(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return cum_extremum_py(false, args, nargs, kwnames);
}

/* logcumsumexp(input, dim, *, out=None) */
static PyObject *py_logcumsumexp(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "*out", NULL};
    PyObject *a[3];
    int dim;
    CtTensorObject *t, *out;
    if (ct_parse_args("logcumsumexp", args, nargs, kwnames, names, 2, a) < 0 ||
        (t = input_arg(a[0], "logcumsumexp")) == NULL || int_dim_arg(a[1], t, "logcumsumexp", &dim) < 0 ||
        ct_arg_out(a[2], "logcumsumexp", &out) < 0) {
        return NULL;
    }
    if (ct_is_floating(t->dtype) && out_scalar_type(out, t->dtype) < 0) { /* integers: the dtype error first */
        return NULL;
    }
    return ct_write_out(ct_logcumsumexp(t, dim), (PyObject *)out, "logcumsumexp", CT_OUT_EXACT, 0, NULL);
}

static PyObject *py_softmax(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return dim_dtype_py("softmax", ct_softmax, false, args, nargs, kwnames);
}
static PyObject *py_log_softmax(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return dim_dtype_py("log_softmax", ct_log_softmax, false, args, nargs, kwnames);
}

/* --- sort / argsort / topk / median ------------------------------------------------------------------------- */
static PyObject *sort_py(bool arg_only, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "descending", "*stable", "*out", NULL};
    const char *fname = arg_only ? "argsort" : "sort";
    PyObject *a[5];
    bool descending = false, stable = false;
    int dim;
    CtTensorObject *t, *o[2] = {NULL, NULL};
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0 || (t = input_arg(a[0], fname)) == NULL ||
        ct_arg_bool(a[2], &descending) < 0 || ct_arg_bool(a[3], &stable) < 0 ||
        (arg_only ? ct_arg_out(a[4], fname, &o[1]) : pair_out_arg(a[4], fname, o)) < 0) {
        return NULL;
    }
    if (arg_only && o[1] != NULL && a[3] == NULL) { /* only argsort(input, *, stable, ...) takes out= */
        PyErr_SetString(PyExc_TypeError,
                        "argsort() received an invalid combination of arguments - got out=Tensor without stable=, "
                        "but only (Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out "
                        "= None) takes out=");
        return NULL;
    }
    if (a[1] != NULL && a[1] != Py_None) {
        if (int_dim_arg(a[1], t, fname, &dim) < 0) {
            return NULL;
        }
    } else if (ct_wrap_dim(-1, t->ndim, &dim) < 0) {
        return NULL;
    }
    /* the sort is always stable, which is a valid result for stable=False too */
    CtTensorObject *values = NULL, *indices = NULL;
    if (ct_sort(t, dim, descending, arg_only ? NULL : &values, &indices) < 0) {
        return NULL;
    }
    if (arg_only) {
        return ct_write_out(indices, (PyObject *)o[1], fname, CT_OUT_EXACT, 0, NULL);
    }
    if (o[0] != NULL) { /* PyTorch lets sort's out overlap its input */
        return write_pair_out(RT_SORT, values, indices, o, fname, CT_OUT_EXACT, CT_OUT_EXACT, 0, NULL);
    }
    return make_pair(RT_SORT, values, indices);
}

static PyObject *py_sort(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return sort_py(false, args, nargs, kwnames);
}
static PyObject *py_argsort(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return sort_py(true, args, nargs, kwnames);
}

/* topk(input, k, dim=-1, largest=True, sorted=True): results always come sorted. */
static PyObject *py_topk(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "k", "dim", "largest", "sorted", "*out", NULL};
    PyObject *a[6];
    bool largest = true, sorted = true;
    int64_t k;
    int dim;
    CtTensorObject *t, *o[2];
    if (ct_parse_args("topk", args, nargs, kwnames, names, 2, a) < 0 || (t = input_arg(a[0], "topk")) == NULL ||
        ct_arg_bool(a[3], &largest) < 0 || ct_arg_bool(a[4], &sorted) < 0 || pair_out_arg(a[5], "topk", o) < 0) {
        return NULL;
    }
    if (!is_int_arg(a[1]) || CtTensor_Check(a[1])) {
        PyErr_Format(PyExc_TypeError, "topk(): argument 'k' (position 1) must be int, not %s", Py_TYPE(a[1])->tp_name);
        return NULL;
    }
    if (ct_arg_int64(a[1], &k) < 0) {
        return NULL;
    }
    if (a[2] != NULL && a[2] != Py_None) {
        if (int_dim_arg(a[2], t, "topk", &dim) < 0) {
            return NULL;
        }
    } else if (ct_wrap_dim(-1, t->ndim, &dim) < 0) {
        return NULL;
    }
    CtTensorObject *values = NULL, *indices = NULL;
    if (ct_topk(t, k, dim, largest, &values, &indices) < 0) {
        return NULL;
    }
    if (o[0] != NULL) { /* PyTorch lets topk's out overlap its input */
        return write_pair_out(RT_TOPK, values, indices, o, "topk", CT_OUT_EXACT, CT_OUT_EXACT, 0, NULL);
    }
    return make_pair(RT_TOPK, values, indices);
}

/* The (values, indices) of median/kthvalue/mode(dim): a named tuple, or written to out=o (PyTorch
 * refuses an out overlapping input t for these). Steals values and indices. */
static PyObject *values_indices_result(int which, CtTensorObject *values, CtTensorObject *indices,
                                       CtTensorObject *const *o, const char *fname, CtTensorObject *t)
{
    if (o[0] != NULL) {
        return write_pair_out(which, values, indices, o, fname, CT_OUT_EXACT, CT_OUT_EXACT, 1, &t);
    }
    return make_pair(which, values, indices);
}

/* median(input) -> the lower median of every element; median(input, dim, keepdim=False) ->
 * (values, indices). nanmedian: the same, ignoring NaN. */
static PyObject *median_py(bool ignore_nan, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "keepdim", "*out", NULL};
    const char *fname = ignore_nan ? "nanmedian" : "median";
    PyObject *a[4];
    bool keepdim;
    int dim;
    CtTensorObject *t, *o[2];
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0 || (t = input_arg(a[0], fname)) == NULL ||
        keepdim_arg(a[2], fname, &keepdim) < 0) {
        return NULL;
    }
    if (a[1] == NULL && a[3] != NULL && a[3] != Py_None) { /* median(input) has no out= overload */
        PyErr_Format(PyExc_TypeError, "%s() missing 1 required positional arguments: \"dim\"", fname);
        return NULL;
    }
    if (a[1] == NULL) {
        return (PyObject *)(ignore_nan ? ct_nanmedian_all(t) : ct_median_all(t));
    }
    if (pair_out_arg(a[3], fname, o) < 0) {
        return NULL;
    }
    /* PyTorch checks the indices first; its messages say "median" for nanmedian too */
    if (o[1] != NULL && o[1]->dtype != CT_I64) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected tensor for argument #1 'indices' to have scalar type Long; but got torch.%sTensor "
                     "instead (while checking arguments for median)",
                     ct_scalar_type_name(o[1]->dtype));
        return NULL;
    }
    if (o[0] != NULL && o[0]->dtype != t->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected tensor for 'values' to have the same type as tensor for argument #2 'self'; but type "
                     "torch.%sTensor does not equal torch.%sTensor (while checking arguments for median)",
                     ct_scalar_type_name(o[0]->dtype), ct_scalar_type_name(t->dtype));
        return NULL;
    }
    if (int_dim_arg(a[1], t, fname, &dim) < 0) {
        return NULL;
    }
    CtTensorObject *values = NULL, *indices = NULL;
    if ((ignore_nan ? ct_nanmedian_dim : ct_median_dim)(t, dim, keepdim, &values, &indices) < 0) {
        return NULL;
    }
    return values_indices_result(ignore_nan ? RT_NANMEDIAN : RT_MEDIAN, values, indices, o, fname, t);
}

static PyObject *py_median(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return median_py(false, args, nargs, kwnames);
}
static PyObject *py_nanmedian(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return median_py(true, args, nargs, kwnames);
}

/* --- kthvalue / mode / msort ------------------------------------------------------------------------------- */
/* dim as given (an int), or the last dim when absent or None. 0 or -1. */
static int dim_or_last(PyObject *obj, const CtTensorObject *t, const char *fname, int *dim)
{
    if (obj != NULL && obj != Py_None) {
        return int_dim_arg(obj, t, fname, dim);
    }
    return ct_wrap_dim(-1, t->ndim, dim);
}

/* out=(values, indices) dtypes of kthvalue and mode, each in its op's words. 0 or -1. */
static int check_values_indices_out(CtTensorObject *const *o, const CtTensorObject *t, bool mode_words)
{
    if (o[0] != NULL && o[0]->dtype != t->dtype) {
        if (mode_words) {
            PyErr_Format(PyExc_RuntimeError, "expected scalar type '%s' but got '%s' for values output",
                         ct_scalar_type_name(t->dtype), ct_scalar_type_name(o[0]->dtype));
        } else {
            PyErr_SetString(PyExc_RuntimeError, "output values must be of same type as input");
        }
        return -1;
    }
    if (o[1] != NULL && o[1]->dtype != CT_I64) {
        if (mode_words) {
            PyErr_Format(PyExc_RuntimeError, "expected scalar type 'Long' but got '%s' for indices output",
                         ct_scalar_type_name(o[1]->dtype));
        } else {
            PyErr_SetString(PyExc_RuntimeError, "output indices must be of scalar type Long");
        }
        return -1;
    }
    return 0;
}

/* kthvalue(input, k, dim=-1, keepdim=False, *, out=None) -> (values, indices) */
static PyObject *py_kthvalue(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "k", "dim", "keepdim", "*out", NULL};
    PyObject *a[5];
    bool keepdim;
    int64_t k;
    int dim;
    CtTensorObject *t, *o[2];
    if (ct_parse_args("kthvalue", args, nargs, kwnames, names, 2, a) < 0 ||
        (t = input_arg(a[0], "kthvalue")) == NULL || keepdim_arg(a[3], "kthvalue", &keepdim) < 0 ||
        pair_out_arg(a[4], "kthvalue", o) < 0) {
        return NULL;
    }
    if (!is_int_arg(a[1]) || CtTensor_Check(a[1])) {
        PyErr_Format(PyExc_TypeError, "kthvalue(): argument 'k' (position 2) must be int, not %s",
                     Py_TYPE(a[1])->tp_name);
        return NULL;
    }
    if (ct_arg_int64(a[1], &k) < 0 || dim_or_last(a[2], t, "kthvalue", &dim) < 0) {
        return NULL;
    }
    CtTensorObject *values = NULL, *indices = NULL;
    if (ct_kthvalue(t, k, dim, keepdim, &values, &indices) < 0) {
        return NULL;
    }
    if (check_values_indices_out(o, t, false) < 0) { /* after k's check, as PyTorch */
        Py_DECREF(values);
        Py_DECREF(indices);
        return NULL;
    }
    return values_indices_result(RT_KTHVALUE, values, indices, o, "kthvalue", t);
}

/* mode(input, dim=-1, keepdim=False, *, out=None) -> (values, indices) */
static PyObject *py_mode(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "keepdim", "*out", NULL};
    PyObject *a[4];
    bool keepdim;
    int dim;
    CtTensorObject *t, *o[2];
    if (ct_parse_args("mode", args, nargs, kwnames, names, 1, a) < 0 || (t = input_arg(a[0], "mode")) == NULL ||
        keepdim_arg(a[2], "mode", &keepdim) < 0 || pair_out_arg(a[3], "mode", o) < 0 ||
        dim_or_last(a[1], t, "mode", &dim) < 0 || check_values_indices_out(o, t, true) < 0) {
        return NULL;
    }
    CtTensorObject *values = NULL, *indices = NULL;
    if (ct_mode(t, dim, keepdim, &values, &indices) < 0) {
        return NULL;
    }
    return values_indices_result(RT_MODE, values, indices, o, "mode", t);
}

/* msort(input, *, out=None): sort(input, dim=0).values, called through the recording sort so
 * that its gradient is SortBackward0's, as in PyTorch. */
static PyObject *py_msort(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "*out", NULL};
    PyObject *a[2];
    CtTensorObject *out;
    if (ct_parse_args("msort", args, nargs, kwnames, names, 1, a) < 0 || input_arg(a[0], "msort") == NULL ||
        ct_arg_out(a[1], "msort", &out) < 0) {
        return NULL;
    }
    PyObject *zero = PyLong_FromLong(0);
    PyObject *sort_args[2] = {a[0], zero};
    PyObject *pair = zero ? ct_op("sort", sort_args, 2, NULL) : NULL;
    Py_XDECREF(zero);
    if (pair == NULL) {
        return NULL;
    }
    CtTensorObject *values = (CtTensorObject *)Py_NewRef(PyTuple_GET_ITEM(pair, 0));
    Py_DECREF(pair);
    return ct_write_out(values, (PyObject *)out, "msort", CT_OUT_EXACT, 0, NULL);
}

/* --- quantile / nanquantile -------------------------------------------------------------------------------- */
enum { Q_LINEAR, Q_LOWER, Q_HIGHER, Q_MIDPOINT, Q_NEAREST };
static const char *const quantile_modes[] = {"linear", "lower", "higher", "midpoint", "nearest", NULL};

/* TypeError in PyTorch's words for arguments of the wrong types: names the types given. */
static PyObject *quantile_type_error(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *parts = PyList_New(0), *sep = NULL, *got = NULL;
    for (Py_ssize_t i = 0; parts != NULL && i < nargs + nkw; i++) {
        const char *type = CtTensor_Check(args[i]) ? "Tensor" : Py_TYPE(args[i])->tp_name;
        PyObject *s = i < nargs ? PyUnicode_FromString(type)
                                : PyUnicode_FromFormat("%U=%s", PyTuple_GET_ITEM(kwnames, i - nargs), type);
        if (s == NULL || PyList_Append(parts, s) < 0) {
            Py_CLEAR(parts);
        }
        Py_XDECREF(s);
    }
    if (parts != NULL && (sep = PyUnicode_FromString(", ")) != NULL && (got = PyUnicode_Join(sep, parts)) != NULL) {
        PyErr_Format(PyExc_TypeError,
                     "%s() received an invalid combination of arguments - got (%U), but expected one of:\n"
                     " * (Tensor input, Tensor q, int dim = None, bool keepdim = False, *, str interpolation = "
                     "\"linear\", Tensor out = None)\n"
                     " * (Tensor input, float q, int dim = None, bool keepdim = False, *, str interpolation = "
                     "\"linear\", Tensor out = None)\n",
                     fname, got);
    }
    Py_XDECREF(parts);
    Py_XDECREF(sep);
    Py_XDECREF(got);
    return NULL;
}

/* PyTorch's checks of quantile's arguments, in its order (the range of a tensor q comes last,
 * in quantile_impl). 0 or -1. */
static int quantile_checks(CtTensorObject *t, PyObject *q, CtTensorObject *out, PyObject *dim_obj, int *dim)
{
    CtTensorObject *qt = CtTensor_Check(q) ? CT_TENSOR(q) : NULL;
    const char *msg = NULL;
    if (ct_numel(t) == 0) {
        msg = "quantile() input tensor must be non-empty";
    } else if (qt != NULL && qt->ndim > 1) {
        msg = "quantile() q must be a scalar or 1D tensor";
    } else if (t->dtype != CT_F32 && t->dtype != CT_F64) {
        msg = "quantile() input tensor must be either float or double dtype";
    } else if (qt != NULL && qt->dtype != t->dtype) {
        msg = "quantile() q tensor must be same dtype as the input tensor";
    } else if (out != NULL && out->dtype != t->dtype) {
        msg = "quantile() out tensor must be same dtype as the input tensor";
    } else if (qt != NULL && !ct_device_equal(ct_device_of(qt), ct_device_of(t))) {
        msg = "quantile() q tensor must be on the same device as the input tensor";
    } else if (out != NULL && !ct_device_equal(ct_device_of(out), ct_device_of(t))) {
        msg = "quantile() out tensor must be on the same device as the input tensor";
    }
    if (msg != NULL) {
        PyErr_SetString(PyExc_RuntimeError, msg);
        return -1;
    }
    if (dim_obj != NULL && int_dim_arg(dim_obj, t, "quantile", dim) < 0) {
        return -1;
    }
    if (qt == NULL || ct_numel(qt) == 0) {
        return 0;
    }
    CtTensorObject *host = ct_to(qt, CT_F64, (CtDevice){CT_DEV_CPU, -1}, false);
    if (host == NULL) {
        return -1;
    }
    CtTensorObject *flat = flattened(host);
    Py_DECREF(host);
    if (flat == NULL) {
        return -1;
    }
    const double *v = (const double *)ct_data(flat);
    int rc = 0;
    for (int64_t i = 0; i < ct_numel(flat) && rc == 0; i++) {
        if (!(v[i] >= 0 && v[i] <= 1)) {
            PyErr_SetString(PyExc_RuntimeError, "quantile() q values must be in the range [0, 1]");
            rc = -1;
        }
    }
    Py_DECREF(flat);
    return rc;
}

/* quantile's composition, PyTorch's: the reduced elements sorted into a last dim, q turned into
 * ranks, the values at the ranks below (and above) gathered and interpolated. Every step goes
 * through the recording ops, so gradients reach input and q as in PyTorch. q1: q as a 1-d
 * tensor; q_is_scalar: q was a number or 0-d (no leading dim in the result). */
static PyObject *quantile_compose(CtTensorObject *t, PyObject *q1, bool q_is_scalar, bool has_dim, int dim,
                                  bool keepdim, int mode, bool ignore_nan)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *x = (PyObject *)t;
    int64_t sizes[CT_MAX_DIMS + 1], n = ct_numel(t);
    int nd = 0;
    for (int i = 0; i < t->ndim; i++) { /* the result's shape without q's dim */
        if (has_dim && i != dim) {
            sizes[nd++] = t->sizes[i];
        } else if (keepdim) {
            sizes[nd++] = 1;
        }
    }
    if (has_dim && t->ndim > 0) {
        n = t->sizes[dim];
        x = METH(x, "movedim", "(ii)", dim, -1);
    }
    sizes[nd] = n;
    PyObject *shape = KEEP(ct_size_object(nd + 1, sizes));
    PyObject *pair = FN("sort", "(Oi)", METH(x, "reshape", "(O)", shape), -1);
    PyObject *sorted = pair ? KEEP(Py_NewRef(PyTuple_GET_ITEM(pair, 0))) : NULL; /* (..., n) */
    PyObject *ranks;                                                             /* (..., len(q)) */
    if (ignore_nan) { /* over the non-NaN values; a line of NaNs only gets rank 0 (NaN) */
        PyObject *count = METH(METH(METH(sorted, "isnan", NULL), "logical_not", NULL), "sum", "(iO)", -1, Py_True);
        ranks = MUL(q1, SUB(count, INT(1)));
        ranks = WHERE(CMP(ranks, NUM(0.0), Py_LT), NUM(0.0), ranks);
    } else { /* a line with a NaN gets the last rank: NaN */
        PyObject *has_nan = METH(METH(sorted, "isnan", NULL), "any", "(iO)", -1, Py_True);
        ranks = WHERE(has_nan, NUM((double)(n - 1)), MUL(q1, NUM((double)(n - 1))));
    }
    static const char *const rounding[] = {[Q_LOWER] = "floor", [Q_HIGHER] = "ceil", [Q_NEAREST] = "round"};
    if (mode == Q_LOWER || mode == Q_HIGHER || mode == Q_NEAREST) {
        ranks = METH(ranks, rounding[mode], NULL);
    }
    PyObject *below = METH(ranks, "long", NULL);
    PyObject *r = FN("gather", "(OiO)", sorted, -1, below);
    if (mode == Q_LINEAR || mode == Q_MIDPOINT) {
        PyObject *weight = mode == Q_MIDPOINT ? FN("full_like", "(Od)", ranks, 0.5) : SUB(ranks, below);
        PyObject *above = FN("gather", "(OiO)", sorted, -1, METH(METH(ranks, "ceil", NULL), "long", NULL));
        r = FN("lerp", "(OOO)", r, above, weight);
    }
    if (!q_is_scalar) { /* q's dim first */
        r = METH(METH(r, "unsqueeze", "(i)", 0), "transpose", "(ii)", 0, -1);
    }
    PyObject *result = TAKE(FN("_squeeze_last", "(O)", r));
    arena_free(arena);
    return result;
}

/* quantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None) and
 * nanquantile (NaNs ignored): float32/float64 input, q a number or a 0-d/1-d tensor of input's
 * dtype; a 1-d q adds a leading dim. */
static PyObject *quantile_py(bool ignore_nan, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "q", "dim", "keepdim", "*interpolation", "*out", NULL};
    const char *fname = ignore_nan ? "nanquantile" : "quantile";
    PyObject *a[6], *q1 = NULL, *result = NULL;
    CtTensorObject *t, *out = NULL;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0) {
        return NULL;
    }
    PyObject *q = a[1], *dim_obj = a[2] == Py_None ? NULL : a[2];
    bool q_is_number = !CtTensor_Check(q) && (PyFloat_Check(q) || PyLong_Check(q) || PyIndex_Check(q));
    if (!CtTensor_Check(a[0]) || (!CtTensor_Check(q) && !q_is_number) ||
        (dim_obj != NULL && (!is_int_arg(dim_obj) || CtTensor_Check(dim_obj))) ||
        (a[3] != NULL && !PyBool_Check(a[3])) || (a[4] != NULL && !PyUnicode_Check(a[4])) ||
        (a[5] != NULL && a[5] != Py_None && !CtTensor_Check(a[5]))) {
        return quantile_type_error(fname, args, nargs, kwnames);
    }
    t = CT_TENSOR(a[0]);
    out = a[5] != NULL && a[5] != Py_None ? CT_TENSOR(a[5]) : NULL;
    bool keepdim = a[3] == Py_True;
    double qv = 0;
    if (q_is_number) {
        if (ct_arg_double(q, &qv) < 0) {
            return NULL;
        }
        if (!(qv >= 0 && qv <= 1)) {
            char *s = PyOS_double_to_string(qv, 'g', 6, 0, NULL);
            if (s != NULL) {
                PyErr_Format(PyExc_RuntimeError, "quantile() q must be in the range [0, 1] but got %s", s);
                PyMem_Free(s);
            }
            return NULL;
        }
    }
    int mode = Q_LINEAR;
    if (a[4] != NULL) {
        const char *s = PyUnicode_AsUTF8(a[4]);
        if (s == NULL) {
            return NULL;
        }
        for (mode = 0; quantile_modes[mode] != NULL && strcmp(quantile_modes[mode], s) != 0; mode++) {
        }
        if (quantile_modes[mode] == NULL) {
            PyErr_Format(PyExc_RuntimeError,
                         "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                         "got %s",
                         s);
            return NULL;
        }
    }
    int dim = 0;
    if (quantile_checks(t, q, out, dim_obj, &dim) < 0) {
        return NULL;
    }
    if (q_is_number) {
        int64_t one = 1;
        CtScalar s = {CT_KIND_FLOAT, {.d = qv}};
        q1 = (PyObject *)ct_full(1, &one, &s, t->dtype, ct_device_of(t));
    } else {
        q1 = PyObject_CallMethod(q, "reshape", "(i)", -1);
    }
    if (q1 != NULL) {
        bool q_is_scalar = q_is_number || CT_TENSOR(q)->ndim == 0;
        result = quantile_compose(t, q1, q_is_scalar, dim_obj != NULL, dim, keepdim, mode, ignore_nan);
    }
    Py_XDECREF(q1);
    if (result == NULL || out == NULL) {
        return result;
    }
    return ct_write_out((CtTensorObject *)result, (PyObject *)out, fname, CT_OUT_EXACT, 0, NULL);
}

static PyObject *py_quantile(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return quantile_py(false, args, nargs, kwnames);
}
static PyObject *py_nanquantile(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return quantile_py(true, args, nargs, kwnames);
}

/* _squeeze_last(input): input without its last dim (of size 1), a view. The last step of
 * quantile's composition, recorded as PyTorch records the in-place squeeze_(-1) it ends with
 * (SqueezeBackward4). */
static PyObject *py__squeeze_last(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", NULL};
    PyObject *a[1];
    CtTensorObject *t;
    if (ct_parse_args("_squeeze_last", args, nargs, kwnames, names, 1, a) < 0 ||
        (t = input_arg(a[0], "_squeeze_last")) == NULL) {
        return NULL;
    }
    if (t->ndim == 0 || t->sizes[t->ndim - 1] != 1) {
        PyErr_SetString(PyExc_RuntimeError, "_squeeze_last(): the last dim must have size 1");
        return NULL;
    }
    return (PyObject *)ct_view_of(t, t->ndim - 1, t->sizes, t->strides, t->offset);
}

/* Tensor.sum_to_size(*size): the sum down to a size that self broadcasts from. */
static PyObject *method_sum_to_size(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    int64_t sizes[CT_MAX_DIMS];
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_SetString(PyExc_TypeError, "sum_to_size() takes no keyword arguments");
        return NULL;
    }
    int nd = ct_parse_sizes(args, nargs, sizes, false);
    if (nd < 0) {
        return NULL;
    }
    return (PyObject *)ct_sum_to_size(CT_TENSOR(self), nd, sizes);
}

/* --- tables ---------------------------------------------------------------------------------------------------- */
#define CT_RED_OPS(X)                                                                                  \
    X(sum, "sum(input, dim=None, keepdim=False, *, dtype=None)")                                        \
    X(nansum, "nansum(input, dim=None, keepdim=False, *, dtype=None): sum treating NaN as zero")       \
    X(mean, "mean(input, dim=None, keepdim=False, *, dtype=None)")                                      \
    X(prod, "prod(input, dim=None, keepdim=False, *, dtype=None)")                                      \
    X(max, "max(input) / max(input, dim, keepdim=False) -> (values, indices) / max(input, other)")     \
    X(min, "min(input) / min(input, dim, keepdim=False) -> (values, indices) / min(input, other)")     \
    X(amax, "amax(input, dim=(), keepdim=False)")                                                       \
    X(amin, "amin(input, dim=(), keepdim=False)")                                                       \
    X(aminmax, "aminmax(input, *, dim=None, keepdim=False) -> (min, max)")                              \
    X(argmax, "argmax(input, dim=None, keepdim=False)")                                                 \
    X(argmin, "argmin(input, dim=None, keepdim=False)")                                                 \
    X(var, "var(input, dim=None, unbiased=True, keepdim=False, *, correction=None)")                   \
    X(std, "std(input, dim=None, unbiased=True, keepdim=False, *, correction=None)")                   \
    X(norm, "norm(input, p='fro', dim=None, keepdim=False, dtype=None)")                                \
    X(logsumexp, "logsumexp(input, dim, keepdim=False)")                                                \
    X(all, "all(input, dim=None, keepdim=False)")                                                       \
    X(any, "any(input, dim=None, keepdim=False)")                                                       \
    X(count_nonzero, "count_nonzero(input, dim=None)")                                                  \
    X(cumsum, "cumsum(input, dim, *, dtype=None)")                                                      \
    X(cumprod, "cumprod(input, dim, *, dtype=None)")                                                    \
    X(softmax, "softmax(input, dim, dtype=None)")                                                       \
    X(log_softmax, "log_softmax(input, dim, dtype=None)")                                               \
    X(sort, "sort(input, dim=-1, descending=False, *, stable=False) -> (values, indices)")             \
    X(argsort, "argsort(input, dim=-1, descending=False, *, stable=False)")                             \
    X(topk, "topk(input, k, dim=-1, largest=True, sorted=True) -> (values, indices)")                  \
    X(median, "median(input) / median(input, dim, keepdim=False) -> (values, indices)")                \
    X(kthvalue, "kthvalue(input, k, dim=-1, keepdim=False) -> (values, indices)")                      \
    X(mode, "mode(input, dim=-1, keepdim=False) -> (values, indices)")                                  \
    X(msort, "msort(input): sort(input, dim=0).values")                                                 \
    X(quantile, "quantile(input, q, dim=None, keepdim=False, *, interpolation='linear')")               \
    X(nanquantile, "nanquantile(input, q, dim=None, keepdim=False, *, interpolation='linear')")         \
    X(cummax, "cummax(input, dim) -> (values, indices)")                                                \
    X(cummin, "cummin(input, dim) -> (values, indices)")                                                \
    X(logcumsumexp, "logcumsumexp(input, dim)")                                                         \
    X(nanmean, "nanmean(input, dim=None, keepdim=False, *, dtype=None): mean of the non-NaN elements") \
    X(nanmedian, "nanmedian(input) / nanmedian(input, dim, keepdim=False) -> (values, indices)")

#define CT_RED_METHOD(name, doc)                                                                          \
    static PyObject *method_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) \
    {                                                                                                     \
        return ct_function_as_method(#name, py_##name, self, args, nargs, kw);                                   \
    }
CT_RED_OPS(CT_RED_METHOD)

#define CT_RED_METHOD_ROW(name, doc) {#name, CT_FASTCALL(method_##name), CT_METH_FK, doc},
#define CT_RED_MODULE_ROW(name, doc) {#name, CT_FASTCALL(py_##name), CT_METH_FK, doc},

PyMethodDef ct_reduce_tensor_methods[] = {
    CT_RED_OPS(CT_RED_METHOD_ROW)
    {"sum_to_size", CT_FASTCALL(method_sum_to_size), CT_METH_FK, "sum_to_size(*size)"},
    {NULL},
};
PyMethodDef ct_reduce_module_methods[] = {
    CT_RED_OPS(CT_RED_MODULE_ROW)
    {"var_mean", CT_FASTCALL(py_var_mean), CT_METH_FK,
     "var_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None) -> (var, mean)"},
    {"std_mean", CT_FASTCALL(py_std_mean), CT_METH_FK,
     "std_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None) -> (std, mean)"},
    {"_return_types", py_return_types, METH_NOARGS, "the named-tuple result types, by name"},
    {"_squeeze_last", CT_FASTCALL(py__squeeze_last), CT_METH_FK, "_squeeze_last(input): quantile's last step"},
    {NULL},
};
PyType_Slot ct_reduce_tensor_slots[] = {{0, NULL}};
