/* nn_frac_pool.c: fractional max pooling (fractional_max_pool2d / 3d), composed in C of recording ops,
 * so its gradient (through gather) and its CUDA version come from those ops.
 *
 * Each (batch, channel) plane has one sample u in [0, 1) per spatial dim; for output size O, pool
 * size K and input size I the windows start at
 *     start[i] = trunc((i + u) * alpha) - trunc(u * alpha),  alpha = (I - K) / (O - 1),  i < O - 1
 *     start[O - 1] = I - K
 * computed in the input's dtype, as PyTorch's kernels. The window's elements are gathered from the
 * flattened plane, the max (first occurrence; NaN wins) picks the flat index of each output, and the
 * output is the input gathered at those indices. The samples' last dim is (W, H) for 2-d input and
 * (T, H, W) for 3-d, as PyTorch's. */
#include "args.h"
#include "autograd_arena.h"
#include "creation.h"
#include "random.h"
#include "registry.h"
#include "tensor.h"
#include <string.h>

/* a new tuple of n sizes */
static PyObject *size_tuple(int n, const int64_t *sizes)
{
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t != NULL && i < n; i++) {
        PyObject *v = PyLong_FromLongLong(sizes[i]);
        if (v == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

/* k sizes from an int or a sequence of k ints */
static int frac_sizes(const char *fname, const char *what, PyObject *obj, int k, int64_t *out)
{
    if (PyLong_Check(obj)) {
        int64_t v;
        if (ct_arg_int64(obj, &v) < 0) {
            return -1;
        }
        for (int d = 0; d < k; d++) {
            out[d] = v;
        }
        return 0;
    }
    int n = ct_parse_size_seq(obj, out, false);
    if (n < 0) {
        return -1;
    }
    if (n != k) {
        PyErr_Format(PyExc_RuntimeError, "%s(): %s must either be a single int, or a tuple of %d ints", fname, what, k);
        return -1;
    }
    return 0;
}

static const char *const frac_dim_names[2][3] = {{"height", "width", ""}, {"time", "height", "width"}};

/* The (N, C, 1.., O_d, 1.., 1.., K_d, 1..) positions along spatial dim d of each window's elements
 * (O_d at dim 2 + d, K_d at dim 2 + k + d): a new reference. */
static PyObject *dim_positions(PyObject *samples, int k, int d, const int64_t *nc, int64_t in, int64_t kernel,
                               int64_t out)
{
    CtArena scratch = {0}, *arena = &scratch;
    int which = k == 2 ? 1 - d : d; /* 2-d samples are (W, H) */
    PyObject *u = METH(METH(samples, "select", "(ii)", -1, which), "unsqueeze", "(i)", -1);
    PyObject *starts = METH(METH(u, "new_full", "((LLL)L)", (long long)nc[0], (long long)nc[1], 1LL,
                                 (long long)(in - kernel)), "long", NULL);
    if (out > 1) {
        /* alpha and the products in the input's dtype, as PyTorch's kernels */
        PyObject *alpha = DIV(METH(u, "new_full", "(()L)", (long long)(in - kernel)), INT(out - 1));
        PyObject *i = METH(FN("arange", "(L)", (long long)(out - 1)), "to", "(O)", u);
        PyObject *first = SUB(METH(MUL(ADD(i, u), alpha), "trunc", NULL), METH(MUL(u, alpha), "trunc", NULL));
        first = METH(first, "long", NULL);
        PyObject *parts = arena->failed ? NULL : KEEP(PyList_New(2));
        if (parts != NULL) {
            PyList_SET_ITEM(parts, 0, Py_NewRef(first));
            PyList_SET_ITEM(parts, 1, Py_NewRef(starts));
            starts = FN("cat", "(Oi)", parts, -1);
        }
    }
    PyObject *pos = ADD(METH(starts, "unsqueeze", "(i)", -1),
                        METH(FN("arange", "(L)", (long long)kernel), "to", "(O)", starts));
    int64_t view[2 + 2 * 3];
    view[0] = nc[0];
    view[1] = nc[1];
    for (int e = 0; e < k; e++) {
        view[2 + e] = e == d ? out : 1;
        view[2 + k + e] = e == d ? kernel : 1;
    }
    PyObject *result = TAKE(METH(pos, "reshape", "(O)", KEEP(size_tuple(2 + 2 * k, view))));
    arena_free(arena);
    return result;
}

/* The (N, C, O_1..O_k, K_1..K_k) flat indices into each plane of the windows' elements. */
static PyObject *window_indices(CtArena *arena, PyObject *samples, int k, const int64_t *nc, const int64_t *in,
                                const int64_t *kernel, const int64_t *out)
{
    PyObject *idx = INT(0);
    for (int d = 0; d < k && !arena->failed; d++) {
        idx = ADD(MUL(idx, INT(in[d])), KEEP(dim_positions(samples, k, d, nc, in[d], kernel[d], out[d])));
    }
    return idx;
}

static PyObject *fractional_max_pool(int k, const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "kernel_size", "output_size", "random_samples", NULL};
    PyObject *a[4];
    int64_t kernel[3], out[3];
    if (ct_parse_args(fname, args, nargs, kw, names, 3, a) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[0])) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' (position 1) must be Tensor, not %s", fname,
                     ct_type_name(a[0]));
        return NULL;
    }
    if (frac_sizes(fname, "kernel_size", a[1], k, kernel) < 0 || frac_sizes(fname, "output_size", a[2], k, out) < 0) {
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[0]);
    if (x->ndim != k + 1 && x->ndim != k + 2) {
        char s[128];
        ct_format_sizes(s, sizeof(s), x->ndim, x->sizes);
        PyErr_Format(PyExc_RuntimeError, "%s(): Expected %dD or %dD tensor, but got: %s", fname, k + 1, k + 2, s);
        return NULL;
    }
    if (!ct_is_floating(x->dtype)) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", fname,
                     ct_scalar_type_name(x->dtype));
        return NULL;
    }
    bool batched = x->ndim == k + 2;
    int lead = x->ndim - k;
    int64_t nc[2] = {batched ? x->sizes[0] : 1, x->sizes[lead - 1]}, in[3], plane = 1, outs = 1, window = 1;
    for (int d = 0; d < k; d++) {
        in[d] = x->sizes[lead + d];
        if (kernel[d] <= 0) {
            if (k == 2) {
                PyErr_Format(PyExc_RuntimeError, "%s(): kernel size should be greater than zero, but got %lldx%lld",
                             fname, (long long)kernel[0], (long long)kernel[1]);
            } else {
                PyErr_Format(PyExc_RuntimeError,
                             "%s(): kernel size should be greater than zero, but got %lldx%lldx%lld", fname,
                             (long long)kernel[0], (long long)kernel[1], (long long)kernel[2]);
            }
            return NULL;
        }
        if (out[d] < 0 || out[d] + kernel[d] - 1 > in[d]) {
            const char *dn = frac_dim_names[k - 2][d];
            PyErr_Format(PyExc_RuntimeError, "%s%s(): pool %s %lld too large relative to input %s %lld", fname,
                         k == 3 ? "_out" : "", dn, (long long)kernel[d], dn, (long long)in[d]);
            return NULL;
        }
        plane *= in[d];
        outs *= out[d];
        window *= kernel[d];
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *samples = a[3];
    if (samples == NULL || samples == Py_None) {
        int64_t ssizes[3] = {nc[0], nc[1], k};
        samples = KEEP((PyObject *)ct_rand(3, ssizes, x->dtype, ct_device_of(x), NULL));
        if (samples == NULL) {
            return NULL;
        }
    } else {
        if (!CtTensor_Check(samples)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument 'random_samples' (position 4) must be Tensor, not %s", fname,
                         ct_type_name(samples));
            return NULL;
        }
        CtTensorObject *s = CT_TENSOR(samples);
        if (s->dtype != x->dtype) {
            PyErr_SetString(PyExc_RuntimeError, "Expect _random_samples to have the same dtype as input");
            return NULL;
        }
        if (s->ndim != 3) {
            PyErr_Format(PyExc_RuntimeError, "Expect _random_samples to have 3 dimensions, got %d", s->ndim);
            return NULL;
        }
        if (s->sizes[2] != k) {
            PyErr_Format(PyExc_RuntimeError, "Expect _random_samples.size(2) equals to %d; got %lld.", k,
                         (long long)s->sizes[2]);
            return NULL;
        }
        if (s->sizes[0] < nc[0]) {
            PyErr_SetString(PyExc_RuntimeError, "Expect _random_samples.size(0) no less then input batch size.");
            return NULL;
        }
        if (s->sizes[1] != nc[1]) {
            PyErr_SetString(PyExc_RuntimeError, "Expect _random_samples.size(1) equals to input channel size.");
            return NULL;
        }
        samples = METH(samples, "narrow", "(iiL)", 0, 0, (long long)nc[0]);
    }
    PyObject *result = NULL;
    PyObject *xb = batched ? a[0] : METH(a[0], "unsqueeze", "(i)", 0);
    PyObject *flat = METH(xb, "reshape", "(LLL)", (long long)nc[0], (long long)nc[1], (long long)plane);
    int64_t shape[5] = {nc[0], nc[1], out[0], out[1], out[2]};
    PyObject *st = KEEP(size_tuple(2 + k, shape)), *value, *best;
    if (outs == 0) { /* an empty output (still on the graph) */
        value = METH(METH(flat, "narrow", "(iii)", 2, 0, 0), "reshape", "(O)", st);
        best = METH(METH(xb, "new_zeros", "(O)", st), "long", NULL);
        goto shaped;
    }
    PyObject *idx = window_indices(arena, samples, k, nc, in, kernel, out);
    /* (N, C, prod(O), prod(K)): each output's window */
    idx = METH(idx, "reshape", "(LLLL)", (long long)nc[0], (long long)nc[1], (long long)outs, (long long)window);
    PyObject *all = METH(idx, "reshape", "(LLL)", (long long)nc[0], (long long)nc[1], (long long)(outs * window));
    PyObject *vals = METH(METH(flat, "detach", NULL), "gather", "(iO)", 2, all);
    PyObject *arg = METH(METH(METH(vals, "reshape", "(LLLL)", (long long)nc[0], (long long)nc[1], (long long)outs,
                                   (long long)window), "max", "(i)", -1), "__getitem__", "(i)", 1);
    best = METH(METH(idx, "gather", "(iO)", -1, METH(arg, "unsqueeze", "(i)", -1)), "squeeze", "(i)", -1);
    value = METH(METH(flat, "gather", "(iO)", 2, best), "reshape", "(O)", st);
    best = METH(best, "reshape", "(O)", st);
shaped:
    if (!batched) {
        value = METH(value, "squeeze", "(i)", 0);
        best = METH(best, "squeeze", "(i)", 0);
    }
    if (!arena->failed) {
        result = PyTuple_Pack(2, value, best);
    }
    arena_free(arena);
    return result;
}

static PyObject *py_fractional_max_pool2d(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    return fractional_max_pool(2, "fractional_max_pool2d", args, nargs, kw);
}

static PyObject *py_fractional_max_pool3d(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    return fractional_max_pool(3, "fractional_max_pool3d", args, nargs, kw);
}

PyMethodDef ct_nn_frac_pool_module_methods[] = {
    {"fractional_max_pool2d", CT_FASTCALL(py_fractional_max_pool2d), CT_METH_FK,
     "fractional_max_pool2d(input, kernel_size, output_size, random_samples=None) -> (Tensor, Tensor)"},
    {"fractional_max_pool3d", CT_FASTCALL(py_fractional_max_pool3d), CT_METH_FK,
     "fractional_max_pool3d(input, kernel_size, output_size, random_samples=None) -> (Tensor, Tensor)"},
    {NULL},
};

PyMethodDef ct_nn_frac_pool_tensor_methods[] = {{NULL}};

PyType_Slot ct_nn_frac_pool_tensor_slots[] = {{0, NULL}};
