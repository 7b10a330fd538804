/* spatial.c: the spatial nn ops PyTorch composes of others, built in C of the recording ops:
 *
 *   pixel_shuffle / pixel_unshuffle (input, factor): a reshape, a permute and a reshape; each has a
 *       node of its own (PixelShuffleBackward0 / PixelUnshuffleBackward0), the other op its backward
 *   feature_dropout(_) (input, p, train): channel-wise dropout (F.dropout1d/2d/3d), a mask of shape
 *       (N, C, 1, ...) drawn by bernoulli_ from the default generator, scaled by 1 / (1 - p)
 *   instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
 *       cudnn_enabled): batch norm (norm.c) of the input seen as (1, N * C, *), as PyTorch composes
 *       it; the running statistics take the mean over the batch of the per-instance updates
 *
 * Autograd records the parts of the composites (MulBackward0, ViewBackward0 as in PyTorch). */
#include "args.h"
#include "autograd.h"
#include "creation.h"
#include "registry.h"
#include "tensor.h"
#include "upsample.h" /* the pixel shuffles' formulas */
#include <string.h>

/* A tuple of n ints. New reference. */
static PyObject *int_tuple(int n, const int64_t *v) { return ct_size_object(n, v); }

static int check_tensor(const char *fname, const char *argname, int pos, PyObject *obj, bool optional)
{
    if ((optional && (obj == NULL || obj == Py_None)) || (obj != NULL && CtTensor_Check(obj))) {
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname, argname, pos,
                 obj != NULL ? ct_type_name(obj) : "NoneType");
    return -1;
}

/* ====================================================================================================
 * pixel_shuffle / pixel_unshuffle
 * ==================================================================================================== */
/* (*, C r^2, H, W) -> (*, C, H r, W r) when up, else (*, C, H r, W r) -> (*, C r^2, H, W). New reference. */
static PyObject *shuffle(bool up, CtTensorObject *x, int64_t r)
{
    const char *name = up ? "pixel_shuffle" : "pixel_unshuffle";
    if (x->ndim < 3) {
        PyErr_Format(PyExc_RuntimeError, "%s expects input to have at least 3 dimensions, but got input with %d "
                     "dimension(s)", name, x->ndim);
        return NULL;
    }
    if (r <= 0) {
        PyErr_Format(PyExc_RuntimeError, "%s expects a positive %s, but got %lld", name,
                     up ? "upscale_factor" : "downscale_factor", (long long)r);
        return NULL;
    }
    const int b = x->ndim - 3;
    const int64_t C = x->sizes[b], H = x->sizes[b + 1], W = x->sizes[b + 2];
    if (up && C % (r * r) != 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                     "upscale_factor, but input.size(-3)=%lld is not divisible by %lld",
                     (long long)C, (long long)(r * r));
        return NULL;
    }
    if (!up && (H % r != 0 || W % r != 0)) {
        bool h = H % r != 0;
        PyErr_Format(PyExc_RuntimeError,
                     "pixel_unshuffle expects %s to be divisible by downscale_factor, but input.size(%d)=%lld is not "
                     "divisible by %lld", h ? "height" : "width", h ? -2 : -1, (long long)(h ? H : W), (long long)r);
        return NULL;
    }
    int64_t split[CT_MAX_DIMS + 2], perm[CT_MAX_DIMS + 2], final[CT_MAX_DIMS];
    for (int i = 0; i < b; i++) {
        split[i] = final[i] = x->sizes[i];
        perm[i] = i;
    }
    /* up: (C / r^2, r, r, H, W) -> (C / r^2, H, r, W, r); down: (C, H / r, r, W / r, r) -> (C, r, r, H / r, W / r) */
    const int64_t up_split[5] = {C / (r * r), r, r, H, W}, down_split[5] = {C, H / r, r, W / r, r};
    const int64_t up_perm[5] = {0, 3, 1, 4, 2}, down_perm[5] = {0, 2, 4, 1, 3};
    const int64_t up_final[3] = {C / (r * r), H * r, W * r}, down_final[3] = {C * r * r, H / r, W / r};
    for (int i = 0; i < 5; i++) {
        split[b + i] = (up ? up_split : down_split)[i];
        perm[b + i] = b + (up ? up_perm : down_perm)[i];
    }
    memcpy(final + b, up ? up_final : down_final, sizeof(up_final));
    PyObject *s1 = int_tuple(b + 5, split), *p = int_tuple(b + 5, perm), *s2 = int_tuple(b + 3, final);
    PyObject *t1 = NULL, *t2 = NULL, *out = NULL;
    if (s1 != NULL && p != NULL && s2 != NULL && (t1 = ct_call_method((PyObject *)x, "reshape", "O", s1)) != NULL &&
        (t2 = ct_call_method(t1, "permute", "O", p)) != NULL) {
        out = ct_call_method(t2, "reshape", "O", s2);
    }
    if (out != NULL && CT_TENSOR(out)->storage == x->storage) { /* a view (r == 1): PyTorch returns a new tensor */
        Py_SETREF(out, ct_call_method(out, "clone", NULL));
    }
    Py_XDECREF(s1);
    Py_XDECREF(p);
    Py_XDECREF(s2);
    Py_XDECREF(t1);
    Py_XDECREF(t2);
    return out;
}

static PyObject *shuffle_entry(bool up, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    const char *fname = up ? "pixel_shuffle" : "pixel_unshuffle";
    static const char *const up_names[] = {"input", "upscale_factor", NULL};
    static const char *const down_names[] = {"input", "downscale_factor", NULL};
    PyObject *a[2];
    int64_t r = 0;
    if (ct_parse_args(fname, args, nargs, kwnames, up ? up_names : down_names, 2, a) < 0 ||
        check_tensor(fname, "input", 1, a[0], false) < 0) {
        return NULL;
    }
    if (PyBool_Check(a[1]) || PyFloat_Check(a[1]) || !PyIndex_Check(a[1])) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position 2) must be int, not %s", fname,
                     up ? "upscale_factor" : "downscale_factor", ct_type_name(a[1]));
        return NULL;
    }
    if (ct_arg_int64(a[1], &r) < 0) {
        return NULL;
    }
    return shuffle(up, CT_TENSOR(a[0]), r);
}

PyDoc_STRVAR(pixel_shuffle_doc,
             "pixel_shuffle(input, upscale_factor) -> Tensor\n\n(*, C r^2, H, W) -> (*, C, H r, W r).");
static PyObject *py_pixel_shuffle(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return shuffle_entry(true, args, nargs, kwnames);
}

PyDoc_STRVAR(pixel_unshuffle_doc,
             "pixel_unshuffle(input, downscale_factor) -> Tensor\n\n(*, C, H r, W r) -> (*, C r^2, H, W).");
static PyObject *py_pixel_unshuffle(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return shuffle_entry(false, args, nargs, kwnames);
}

/* pixel_shuffle / pixel_unshuffle: (input, factor): the other op undoes it */
static int shuffle_bw(bool up, CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (g[0] == NULL || n->edge_nodes[0] == NULL) {
        return 0;
    }
    PyObject *args[2] = {g[0], n->args[1]};
    PyObject *r = ct_op(up ? "pixel_unshuffle" : "pixel_shuffle", args, 2, NULL);
    gi[0] = r != NULL ? ct_fit_grad(r, &n->meta[0]) : NULL;
    Py_XDECREF(r);
    return gi[0] != NULL ? 0 : -1;
}

int ct_spatial_bw_pixel_shuffle(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return shuffle_bw(true, n, g, gi);
}
int ct_spatial_bw_pixel_unshuffle(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return shuffle_bw(false, n, g, gi);
}

/* ====================================================================================================
 * feature_dropout / feature_dropout_
 * ==================================================================================================== */
static PyObject *feature_dropout_entry(bool inplace, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "p", "train", NULL};
    const char *fname = inplace ? "feature_dropout_" : "feature_dropout";
    PyObject *a[3];
    double p = 0.5;
    bool train = true;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 3, a) < 0 ||
        check_tensor(fname, "input", 1, a[0], false) < 0 || ct_arg_double(a[1], &p) < 0 || ct_arg_bool(a[2], &train) < 0) {
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[0]);
    if (!(p >= 0 && p <= 1)) {
        PyErr_Format(PyExc_RuntimeError, "dropout probability has to be between 0 and 1, but got %g", p);
        return NULL;
    }
    if (p == 0 || !train || ct_numel(x) == 0) {
        return Py_NewRef(a[0]);
    }
    if (x->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError, "Feature dropout requires at least 2 dimensions in the input");
        return NULL;
    }
    const char *mul = inplace ? "mul_" : "mul";
    if (p == 1) { /* everything dropped: times a zero scalar, as PyTorch (keeps the graph and the NaNs) */
        PyObject *zero = ct_call_method(a[0], "new_zeros", "(())");
        PyObject *r = zero != NULL ? ct_call_method(a[0], mul, "O", zero) : NULL;
        Py_XDECREF(zero);
        return r;
    }
    int64_t noise_shape[CT_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) {
        noise_shape[i] = i < 2 ? x->sizes[i] : 1;
    }
    PyObject *shape = int_tuple(x->ndim, noise_shape), *noise = NULL, *drawn = NULL, *scaled = NULL, *r = NULL;
    if (shape != NULL && (noise = ct_call_method(a[0], "new_empty", "O", shape)) != NULL &&
        (drawn = ct_call_method(noise, "bernoulli_", "d", 1.0 - p)) != NULL &&
        (scaled = ct_call_method(drawn, "div_", "d", 1.0 - p)) != NULL) {
        r = ct_call_method(a[0], mul, "O", scaled);
    }
    Py_XDECREF(shape);
    Py_XDECREF(noise);
    Py_XDECREF(drawn);
    Py_XDECREF(scaled);
    return r;
}

PyDoc_STRVAR(feature_dropout_doc, "feature_dropout(input, p, train) -> Tensor\n\nZeroes whole channels (dim 1) with "
                                  "probability p and scales the rest by 1 / (1 - p) (train only).");
static PyObject *py_feature_dropout(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return feature_dropout_entry(false, args, nargs, kwnames);
}

PyDoc_STRVAR(feature_dropout__doc, "feature_dropout_(input, p, train) -> Tensor\n\nfeature_dropout in place.");
static PyObject *py_feature_dropout_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return feature_dropout_entry(true, args, nargs, kwnames);
}

/* ====================================================================================================
 * instance_norm
 * ==================================================================================================== */
/* t.repeat(b) for a defined t, else None. New reference. */
static PyObject *repeat_if_defined(PyObject *t, int64_t b)
{
    if (t == NULL || t == Py_None) {
        return Py_NewRef(Py_None);
    }
    return ct_call_method(t, "repeat", "L", (long long)b);
}

/* running.copy_(repeated.view(b, c).mean(0)), out of the graph. 0 or -1. */
static int average_back(PyObject *running, PyObject *repeated, int64_t b, int64_t c)
{
    if (running == NULL || running == Py_None) {
        return 0;
    }
    const bool old = ct_grad_enabled;
    ct_grad_enabled = false;
    PyObject *v = ct_call_method(repeated, "view", "LL", (long long)b, (long long)c), *m = NULL, *r = NULL;
    if (v != NULL && (m = ct_call_method(v, "mean", "i", 0)) != NULL) {
        r = ct_call_method(running, "copy_", "O", m);
    }
    ct_grad_enabled = old;
    Py_XDECREF(v);
    Py_XDECREF(m);
    Py_XDECREF(r);
    return r != NULL ? 0 : -1;
}

PyDoc_STRVAR(instance_norm_doc,
             "instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, "
             "cudnn_enabled=False) -> Tensor\n\nBatch norm of each (instance, channel) plane: the input seen as "
             "(1, N * C, *).");
static PyObject *py_instance_norm(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input",           "weight",   "bias", "running_mean", "running_var",
                                        "use_input_stats", "momentum", "eps",  "cudnn_enabled", NULL};
    const char *fname = "instance_norm";
    PyObject *a[9];
    bool use_input_stats = true;
    int unused;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 8, a) < 0 ||
        check_tensor(fname, "input", 1, a[0], false) < 0 || check_tensor(fname, "weight", 2, a[1], true) < 0 ||
        check_tensor(fname, "bias", 3, a[2], true) < 0 || check_tensor(fname, "running_mean", 4, a[3], true) < 0 ||
        check_tensor(fname, "running_var", 5, a[4], true) < 0 || ct_arg_bool(a[5], &use_input_stats) < 0) {
        return NULL;
    }
    PyObject *rm = a[3] == Py_None ? NULL : a[3], *rv = a[4] == Py_None ? NULL : a[4];
    if (!use_input_stats && (rm == NULL || rv == NULL)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Expected running_mean and running_var to be defined when use_input_stats is false");
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[0]);
    if (ct_wrap_dim(1, x->ndim, &unused) < 0) {
        return NULL;
    }
    const int64_t b = x->sizes[0], c = x->sizes[1];
    int64_t shape[CT_MAX_DIMS];
    memcpy(shape, x->sizes, sizeof(int64_t) * x->ndim);
    shape[0] = 1;
    shape[1] = b * c;
    PyObject *w_ = NULL, *b_ = NULL, *rm_ = NULL, *rv_ = NULL, *xc = NULL, *xs = NULL, *size = NULL, *out = NULL,
             *result = NULL;
    if ((w_ = repeat_if_defined(a[1], b)) == NULL || (b_ = repeat_if_defined(a[2], b)) == NULL ||
        (rm_ = repeat_if_defined(rm, b)) == NULL || (rv_ = repeat_if_defined(rv, b)) == NULL ||
        (xc = ct_call_method(a[0], "contiguous", NULL)) == NULL || (size = int_tuple(x->ndim, shape)) == NULL ||
        (xs = ct_call_method(xc, "view", "O", size)) == NULL) {
        goto done;
    }
    PyObject *bn_args[8] = {xs, w_, b_, rm_, rv_, use_input_stats ? Py_True : Py_False, a[6], a[7]};
    if ((out = ct_op("batch_norm", bn_args, 8, NULL)) == NULL || average_back(rm, rm_, b, c) < 0 ||
        average_back(rv, rv_, b, c) < 0) {
        goto done;
    }
    Py_SETREF(size, int_tuple(x->ndim, x->sizes));
    if (size != NULL) {
        result = ct_call_method(out, "view", "O", size);
    }
done:
    Py_XDECREF(w_);
    Py_XDECREF(b_);
    Py_XDECREF(rm_);
    Py_XDECREF(rv_);
    Py_XDECREF(xc);
    Py_XDECREF(xs);
    Py_XDECREF(size);
    Py_XDECREF(out);
    return result;
}

PyMethodDef ct_spatial_module_methods[] = {
    {"pixel_shuffle", CT_FASTCALL(py_pixel_shuffle), CT_METH_FK, pixel_shuffle_doc},
    {"pixel_unshuffle", CT_FASTCALL(py_pixel_unshuffle), CT_METH_FK, pixel_unshuffle_doc},
    {"feature_dropout", CT_FASTCALL(py_feature_dropout), CT_METH_FK, feature_dropout_doc},
    {"feature_dropout_", CT_FASTCALL(py_feature_dropout_), CT_METH_FK, feature_dropout__doc},
    {"instance_norm", CT_FASTCALL(py_instance_norm), CT_METH_FK, instance_norm_doc},
    {NULL},
};
PyMethodDef ct_spatial_tensor_methods[] = {{NULL}};
PyType_Slot ct_spatial_tensor_slots[] = {{0, NULL}};
