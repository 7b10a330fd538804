/* ops_composite.c: ops that PyTorch composes of other ops, composed here the same way of ctorch
 * ops called through the (recording) Python-level callables, so that they run on every device
 * and autograd records their parts:
 *
 *   meshgrid, cartesian_prod, atleast_1d/2d/3d, column_stack, diff, tensordot, take_along_dim,
 *   cov, corrcoef, tril_indices/triu_indices (a host-built index table), and
 *   trace, kron, cross/linalg.cross, block_diag, rot90, cdist, pdist, which PyTorch gives a backward node
 *   of their own: those are listed in autograd_formulas.c's table (their forward then runs with
 *   grad mode off) with the formulas at the end of this file (composite.h).
 *
 * Each op checks its arguments in C with PyTorch's messages first, then builds its result with
 * the arena of autograd_arena.h (METH/FN/MUL/... each owning its result, NULL-propagating). */
#include "composite.h"
#include "args.h"
#include "autograd_arena.h"
#include "creation.h"
#include "device.h"
#include "elementwise.h" /* ct_can_cast */
#include "iter.h"        /* ct_broadcast_shapes */
#include "registry.h"
#include "tensor.h"
#include "views.h"
#include <math.h>
#include <string.h>

/* ============================================================================================
 * argument helpers
 * ============================================================================================ */

/* Tensors given as f(t1, t2, ...) or f([t1, t2, ...]): a new tuple, or NULL with PyTorch's
 * TypeError for an element that is not a tensor. */
static PyObject *tensor_varargs(PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *seq;
    if (nargs == 1 && (PyList_Check(args[0]) || PyTuple_Check(args[0]))) {
        seq = PySequence_Tuple(args[0]);
    } else {
        seq = PyTuple_New(nargs);
        for (Py_ssize_t i = 0; seq != NULL && i < nargs; i++) {
            PyTuple_SET_ITEM(seq, i, Py_NewRef(args[i]));
        }
    }
    for (Py_ssize_t i = 0; seq != NULL && i < PyTuple_GET_SIZE(seq); i++) {
        PyObject *item = PyTuple_GET_ITEM(seq, i);
        if (!CtTensor_Check(item)) {
            PyErr_Format(PyExc_TypeError, "expected Tensor as element %zd in argument 0, but got %s", i,
                         ct_type_name(item));
            Py_CLEAR(seq);
        }
    }
    return seq;
}

/* The one keyword a varargs function takes (*value borrowed, NULL when absent). 0 or -1. */
static int only_keyword(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                        const char *name, PyObject **value)
{
    *value = NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        if (PyUnicode_CompareWithASCIIString(key, name) != 0) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname, key);
            return -1;
        }
        *value = args[nargs + k];
    }
    return 0;
}

/* A tensor argument (borrowed), or TypeError "fname(): argument 'name' must be Tensor, not float". */
static CtTensorObject *tensor_arg(PyObject *obj, const char *fname, const char *name)
{
    if (obj != NULL && CtTensor_Check(obj)) {
        return CT_TENSOR(obj);
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Tensor, not %s", fname, name,
                 obj ? ct_type_name(obj) : "NoneType");
    return NULL;
}

/* A list or tuple of ints into out (at most max): the count, or -1 with PyTorch's TypeError. */
static int int_seq(PyObject *obj, int64_t *out, int max, const char *fname, const char *name)
{
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be tuple of ints, not %s", fname, name,
                     ct_type_name(obj));
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n > max) {
        PyErr_Format(PyExc_RuntimeError, "%s(): ctorch supports at most %d dims in '%s'", fname, max, name);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(obj, i);
        if (PyFloat_Check(item) || !PyIndex_Check(item) || CtTensor_Check(item)) {
            PyErr_Format(PyExc_TypeError,
                         "%s(): argument '%s' must be tuple of ints, but found element of type %s at pos %zd", fname,
                         name, ct_type_name(item), i);
            return -1;
        }
        if (ct_arg_int64(item, &out[i]) < 0) {
            return -1;
        }
    }
    return (int)n;
}

/* A result the arena owns, handed to out= (or returned) as a new reference. */
static PyObject *finish_out(CtArena *arena, PyObject *r, PyObject *out, const char *fname, CtOutRule rule,
                            Py_ssize_t n, CtTensorObject *const *ts)
{
    PyObject *owned = TAKE(r);
    arena_free(arena);
    return owned == NULL ? NULL : ct_write_out(CT_TENSOR(owned), out, fname, rule, n, ts);
}

static int warn_once(bool *warned, const char *message)
{
    if (*warned) {
        return 0;
    }
    *warned = true;
    return PyErr_WarnEx(PyExc_UserWarning, message, 1);
}

/* ============================================================================================
 * meshgrid, cartesian_prod
 * ============================================================================================ */

/* tensors: a tuple of tensors; indexing "ij", "xy" or NULL (PyTorch's default, "ij", with its
 * warning). A tuple of views: input i reshaped to -1 along its grid dim and expanded. */
static PyObject *meshgrid_impl(PyObject *tensors, PyObject *indexing_obj)
{
    static bool warned = false;
    Py_ssize_t n = PyTuple_GET_SIZE(tensors);
    bool xy = false;
    if (indexing_obj == NULL || indexing_obj == Py_None) {
        if (warn_once(&warned, "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
                               "argument.") < 0) {
            return NULL;
        }
    }
    if (n == 0) {
        PyErr_SetString(PyExc_RuntimeError, "meshgrid expects a non-empty TensorList");
        return NULL;
    }
    if (indexing_obj != NULL && indexing_obj != Py_None) {
        const char *s = PyUnicode_Check(indexing_obj) ? PyUnicode_AsUTF8(indexing_obj) : NULL;
        if (s == NULL) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "meshgrid(): argument 'indexing' must be str, not %s",
                         ct_type_name(indexing_obj));
            return NULL;
        }
        if (strcmp(s, "xy") != 0 && strcmp(s, "ij") != 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: %s", s);
            return NULL;
        }
        xy = strcmp(s, "xy") == 0;
    }
    CtTensorObject *first = CT_TENSOR(PyTuple_GET_ITEM(tensors, 0));
    for (Py_ssize_t i = 0; i < n; i++) {
        CtTensorObject *t = CT_TENSOR(PyTuple_GET_ITEM(tensors, i));
        if (t->ndim > 1) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: %R", (PyObject *)t);
            return NULL;
        }
        if (t->dtype != first->dtype) {
            PyErr_SetString(PyExc_RuntimeError, "meshgrid expects all tensors to have the same dtype");
            return NULL;
        }
        if (!ct_device_equal(ct_device_of(t), ct_device_of(first))) {
            PyErr_SetString(PyExc_RuntimeError, "meshgrid expects all tensors to have the same device");
            return NULL;
        }
    }
    if (n > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "meshgrid: ctorch supports at most %d dimensions", CT_MAX_DIMS);
        return NULL;
    }
    /* "xy" swaps the first two grid dims (Cartesian indexing) */
    int64_t grid[CT_MAX_DIMS], view[CT_MAX_DIMS];
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t pos = xy && n >= 2 && i < 2 ? 1 - i : i;
        grid[pos] = ct_numel(CT_TENSOR(PyTuple_GET_ITEM(tensors, i)));
    }
    PyObject *gsize = ct_size_object((int)n, grid);
    PyObject *result = gsize ? PyTuple_New(n) : NULL;
    for (Py_ssize_t i = 0; result != NULL && i < n; i++) {
        Py_ssize_t pos = xy && n >= 2 && i < 2 ? 1 - i : i;
        for (Py_ssize_t d = 0; d < n; d++) {
            view[d] = d == pos ? -1 : 1;
        }
        PyObject *vsize = ct_size_object((int)n, view);
        PyObject *r = vsize ? PyObject_CallMethod(PyTuple_GET_ITEM(tensors, i), "reshape", "(O)", vsize) : NULL;
        PyObject *e = r ? PyObject_CallMethod(r, "expand", "(O)", gsize) : NULL;
        Py_XDECREF(vsize);
        Py_XDECREF(r);
        if (e == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyTuple_SET_ITEM(result, i, e);
    }
    Py_XDECREF(gsize);
    return result;
}

PyDoc_STRVAR(meshgrid_doc, "meshgrid(*tensors, indexing=None) -> tuple of Tensors\n\n"
                           "Coordinate grids of 0-d/1-d tensors ('ij': matrix indexing, the default; 'xy': "
                           "Cartesian), as expanded views. Also meshgrid([t1, t2, ...]).");
static PyObject *py_meshgrid(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *indexing;
    if (only_keyword("meshgrid", args, nargs, kwnames, "indexing", &indexing) < 0) {
        return NULL;
    }
    PyObject *tensors = tensor_varargs(args, nargs);
    PyObject *r = tensors ? meshgrid_impl(tensors, indexing) : NULL;
    Py_XDECREF(tensors);
    return r;
}

PyDoc_STRVAR(cartesian_prod_doc, "cartesian_prod(*tensors) -> Tensor\n\n"
                                 "The Cartesian product of 1-d tensors as rows of an (N, len(tensors)) tensor.");
static PyObject *py_cartesian_prod(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_Format(PyExc_TypeError, "cartesian_prod() got an unexpected keyword argument '%U'",
                     PyTuple_GET_ITEM(kwnames, 0));
        return NULL;
    }
    PyObject *tensors = tensor_varargs(args, nargs), *grids = NULL, *flat = NULL, *result = NULL;
    if (tensors == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tensors);
    for (Py_ssize_t i = 0; i < n; i++) {
        CtTensorObject *t = CT_TENSOR(PyTuple_GET_ITEM(tensors, i));
        if (t->ndim != 1) {
            char buf[256];
            ct_format_sizes(buf, sizeof(buf), t->ndim, t->sizes);
            PyErr_Format(PyExc_RuntimeError, "Expect a 1D vector, but got shape %s", buf);
            goto done;
        }
    }
    if (n == 1) {
        result = Py_NewRef(PyTuple_GET_ITEM(tensors, 0));
        goto done;
    }
    PyObject *ij = PyUnicode_FromString("ij");
    grids = ij ? meshgrid_impl(tensors, ij) : NULL;
    Py_XDECREF(ij);
    if (grids == NULL || (flat = PyList_New(n)) == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *f = PyObject_CallMethod(PyTuple_GET_ITEM(grids, i), "flatten", NULL);
        if (f == NULL) {
            goto done;
        }
        PyList_SET_ITEM(flat, i, f);
    }
    PyObject *stack_args[2] = {flat, NULL};
    if ((stack_args[1] = PyLong_FromLong(1)) != NULL) {
        result = ct_op("stack", stack_args, 2, NULL);
        Py_DECREF(stack_args[1]);
    }
done:
    Py_XDECREF(flat);
    Py_XDECREF(grids);
    Py_DECREF(tensors);
    return result;
}

/* ============================================================================================
 * atleast_1d/2d/3d, column_stack
 * ============================================================================================ */

/* t raised to at least rank dims (a new reference; t itself when it already has them):
 * 0-d -> (1,), (1, 1), (1, 1, 1); (n) -> (1, n), (1, n, 1); (a, b) -> (a, b, 1). */
static PyObject *atleast(PyObject *t, int rank)
{
    int nd = CT_TENSOR(t)->ndim;
    if (nd >= rank) {
        return Py_NewRef(t);
    }
    if (nd == 0) {
        int64_t ones[3] = {1, 1, 1};
        PyObject *shape = ct_size_object(rank, ones);
        PyObject *r = shape ? PyObject_CallMethod(t, "reshape", "(O)", shape) : NULL;
        Py_XDECREF(shape);
        return r;
    }
    if (nd == 1) {
        PyObject *r = PyObject_CallMethod(t, "unsqueeze", "(i)", 0);
        if (r != NULL && rank == 3) {
            Py_SETREF(r, PyObject_CallMethod(r, "unsqueeze", "(i)", -1));
        }
        return r;
    }
    return PyObject_CallMethod(t, "unsqueeze", "(i)", -1);
}

static PyObject *atleast_nd(const char *fname, int rank, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname,
                     PyTuple_GET_ITEM(kwnames, 0));
        return NULL;
    }
    if (nargs == 1 && CtTensor_Check(args[0])) {
        return atleast(args[0], rank);
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if (!CtTensor_Check(args[i]) && !(nargs == 1 && (PyList_Check(args[0]) || PyTuple_Check(args[0])))) {
            PyErr_Format(PyExc_TypeError,
                         "%s() received an invalid combination of arguments - got (%s), but expected one of:\n"
                         " * (Tensor input)\n * (tuple of Tensors tensors)",
                         fname, ct_type_name(args[i]));
            return NULL;
        }
    }
    PyObject *tensors = tensor_varargs(args, nargs);
    Py_ssize_t n = tensors ? PyTuple_GET_SIZE(tensors) : 0;
    PyObject *result = tensors ? PyTuple_New(n) : NULL;
    for (Py_ssize_t i = 0; result != NULL && i < n; i++) {
        PyObject *r = atleast(PyTuple_GET_ITEM(tensors, i), rank);
        if (r == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyTuple_SET_ITEM(result, i, r);
    }
    Py_XDECREF(tensors);
    return result;
}

PyDoc_STRVAR(atleast_1d_doc, "atleast_1d(*tensors): each input viewed with at least 1 dim (a tuple for several)");
PyDoc_STRVAR(atleast_2d_doc, "atleast_2d(*tensors): each input viewed with at least 2 dims (a tuple for several)");
PyDoc_STRVAR(atleast_3d_doc, "atleast_3d(*tensors): each input viewed with at least 3 dims (a tuple for several)");
static PyObject *py_atleast_1d(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return atleast_nd("atleast_1d", 1, a, n, k);
}
static PyObject *py_atleast_2d(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return atleast_nd("atleast_2d", 2, a, n, k);
}
static PyObject *py_atleast_3d(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return atleast_nd("atleast_3d", 3, a, n, k);
}

PyDoc_STRVAR(column_stack_doc, "column_stack(tensors, *, out=None) -> Tensor\n\n"
                               "0-d and 1-d inputs as columns (numel, 1), then cat along dim 1.");
static PyObject *py_column_stack(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"tensors", "*out", NULL};
    PyObject *a[2], *tensors = NULL, *cols = NULL, *result = NULL;
    if (ct_parse_args("column_stack", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    if (!PyTuple_Check(a[0]) && !PyList_Check(a[0])) {
        PyErr_Format(PyExc_TypeError, "column_stack(): argument 'tensors' (position 1) must be tuple of Tensors, not %s",
                     ct_type_name(a[0]));
        return NULL;
    }
    if ((tensors = tensor_varargs(a, 1)) == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tensors);
    if (n == 0) {
        PyErr_SetString(PyExc_RuntimeError, "column_stack expects a non-empty TensorList");
        goto done;
    }
    if ((cols = PyList_New(n)) == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyTuple_GET_ITEM(tensors, i);
        PyObject *c = CT_TENSOR(t)->ndim <= 1
                          ? PyObject_CallMethod(t, "reshape", "(Li)", (long long)ct_numel(CT_TENSOR(t)), 1)
                          : Py_NewRef(t);
        if (c == NULL) {
            goto done;
        }
        PyList_SET_ITEM(cols, i, c);
    }
    PyObject *cat_args[2] = {cols, NULL};
    if ((cat_args[1] = PyLong_FromLong(1)) == NULL) {
        goto done;
    }
    PyObject *r = ct_op("cat", cat_args, 2, NULL);
    Py_DECREF(cat_args[1]);
    result = ct_write_out(r ? CT_TENSOR(r) : NULL, a[1], "column_stack", CT_OUT_CAST, n,
                          (CtTensorObject *const *)&PyTuple_GET_ITEM(tensors, 0));
done:
    Py_XDECREF(cols);
    Py_DECREF(tensors);
    return result;
}

/* ============================================================================================
 * diff
 * ============================================================================================ */

/* prepend= / append= of diff: same ndim as input and its sizes except along dim. 0 or -1. */
static int check_diff_side(CtTensorObject *in, PyObject *obj, const char *name, int dim)
{
    CtTensorObject *t = tensor_arg(obj, "diff", name);
    if (t == NULL) {
        return -1;
    }
    if (t->ndim != in->ndim) {
        PyErr_SetString(PyExc_RuntimeError, "diff expects prepend or append to be the same dimension as input");
        return -1;
    }
    for (int d = 0; d < in->ndim; d++) {
        if (d != dim && t->sizes[d] != in->sizes[d]) {
            PyErr_Format(PyExc_RuntimeError,
                         "diff expects the shape of tensor to prepend or append to match that of input except along "
                         "the differencing dimension; input.size(%d) = %lld, but got tensor.size(%d) = %lld",
                         d, (long long)in->sizes[d], d, (long long)t->sizes[d]);
            return -1;
        }
    }
    return 0;
}

static PyObject *tensor_diff(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"n", "dim", "prepend", "append", "*out", NULL};
    PyObject *a[5];
    CtTensorObject *t = CT_TENSOR(self);
    int64_t n = 1, dim_arg = -1;
    if (ct_parse_args("diff", args, nargs, kwnames, names, 0, a) < 0 ||
        (a[0] != NULL && ct_int_arg("diff", "n", 0, a[0], &n) < 0) ||
        (a[1] != NULL && ct_int_arg("diff", "dim", 0, a[1], &dim_arg) < 0)) {
        return NULL;
    }
    bool pre = a[2] != NULL && a[2] != Py_None, app = a[3] != NULL && a[3] != Py_None;
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_RuntimeError, "diff expects input to be at least one-dimensional");
        return NULL;
    }
    if (n < 0) {
        PyErr_Format(PyExc_RuntimeError, "order must be non-negative but got %lld", (long long)n);
        return NULL;
    }
    int dim;
    if (ct_wrap_dim(dim_arg, t->ndim, &dim) < 0 || (pre && check_diff_side(t, a[2], "prepend", dim) < 0) ||
        (app && check_diff_side(t, a[3], "append", dim) < 0)) {
        return NULL;
    }
    PyObject *cur = Py_NewRef(self);
    if (pre || app) {
        PyObject *parts = pre && app ? PyTuple_Pack(3, a[2], self, a[3])
                                     : (pre ? PyTuple_Pack(2, a[2], self) : PyTuple_Pack(2, self, a[3]));
        PyObject *d = PyLong_FromLong(dim);
        PyObject *cat_args[2] = {parts, d};
        Py_SETREF(cur, parts && d ? ct_op("cat", cat_args, 2, NULL) : NULL);
        Py_XDECREF(parts);
        Py_XDECREF(d);
    }
    /* n first differences along dim; bool tensors use logical_xor as PyTorch */
    for (int64_t i = 0; cur != NULL && i < n; i++) {
        int64_t len = CT_TENSOR(cur)->sizes[dim];
        if (len == 0) {
            break;
        }
        PyObject *hi = PyObject_CallMethod(cur, "narrow", "(iLL)", dim, 1LL, (long long)(len - 1));
        PyObject *lo = PyObject_CallMethod(cur, "narrow", "(iLL)", dim, 0LL, (long long)(len - 1));
        PyObject *next = NULL;
        if (hi != NULL && lo != NULL) {
            next = t->dtype == CT_BOOL ? PyObject_CallMethod(hi, "logical_xor", "(O)", lo) : PyNumber_Subtract(hi, lo);
        }
        Py_XDECREF(hi);
        Py_XDECREF(lo);
        Py_SETREF(cur, next);
    }
    if (cur == self) { /* nothing to difference: still a new tensor */
        Py_SETREF(cur, PyObject_CallMethod(self, "clone", NULL));
    }
    return ct_write_out(cur ? CT_TENSOR(cur) : NULL, a[4], "diff", CT_OUT_RESULT_CAST, 1, &t);
}

/* ============================================================================================
 * trace, kron, cross, rot90, block_diag, cdist: forwards of the ops with a node of their own
 * ============================================================================================ */

static PyObject *tensor_trace(PyObject *self, PyObject *unused)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (t->ndim != 2) {
        PyErr_Format(PyExc_RuntimeError, "trace: expected a matrix, but got tensor with dim %d", t->ndim);
        return NULL;
    }
    if (t->dtype == CT_BOOL) {
        PyErr_SetString(PyExc_NotImplementedError, "\"trace\" not implemented for 'Bool'");
        return NULL;
    }
    /* sum promotes integer inputs to int64, as PyTorch's trace does */
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = TAKE(METH(METH(self, "diagonal", NULL), "sum", NULL));
    arena_free(arena);
    return r;
}

/* The interleaved shapes of kron: a as (a0, 1, a1, 1, ...), b as (1, b0, 1, b1, ...), both padded
 * with leading ones to nd dims; out (a0 * b0, a1 * b1, ...). Returns nd or -1. */
static int kron_shapes(int na, const int64_t *as, int nb, const int64_t *bs, int64_t *va, int64_t *vb, int64_t *vg,
                       int64_t *out)
{
    int nd = na > nb ? na : nb;
    if (2 * nd > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "kron: ctorch supports at most %d dimensions", CT_MAX_DIMS / 2);
        return -1;
    }
    for (int i = 0; i < nd; i++) {
        int64_t ai = i < nd - na ? 1 : as[i - (nd - na)], bi = i < nd - nb ? 1 : bs[i - (nd - nb)];
        va[2 * i] = ai;
        va[2 * i + 1] = 1;
        vb[2 * i] = 1;
        vb[2 * i + 1] = bi;
        vg[2 * i] = ai;
        vg[2 * i + 1] = bi;
        out[i] = ai * bi;
    }
    return nd;
}

static PyObject *tensor_kron(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"other", "*out", NULL};
    PyObject *a[2];
    CtTensorObject *b;
    if (ct_parse_args("kron", args, nargs, kwnames, names, 1, a) < 0 || (b = tensor_arg(a[0], "kron", "other")) == NULL) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    int64_t va[CT_MAX_DIMS], vb[CT_MAX_DIMS], vg[CT_MAX_DIMS], out[CT_MAX_DIMS];
    int nd = kron_shapes(t->ndim, t->sizes, b->ndim, b->sizes, va, vb, vg, out);
    if (nd < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *sa = KEEP(ct_size_object(2 * nd, va)), *sb = KEEP(ct_size_object(2 * nd, vb));
    PyObject *so = KEEP(ct_size_object(nd, out));
    PyObject *r = METH(MUL(METH(self, "reshape", "(O)", sa), METH((PyObject *)b, "reshape", "(O)", sb)), "reshape",
                       "(O)", so);
    CtTensorObject *ins[2] = {t, b};
    return finish_out(arena, r, a[1], "kron", CT_OUT_RESULT_CAST, 2, ins);
}

/* cross along dim (wrapped) of same-dtype inputs: a[d+1] b[d+2] - a[d+2] b[d+1] by rolls. */
static PyObject *cross_values(PyObject *a, PyObject *b, int dim)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = SUB(MUL(METH(a, "roll", "(ii)", -1, dim), METH(b, "roll", "(ii)", -2, dim)),
                      MUL(METH(a, "roll", "(ii)", -2, dim), METH(b, "roll", "(ii)", -1, dim)));
    r = TAKE(r);
    arena_free(arena);
    return r;
}

/* The dim torch.cross uses when none is given: input's first dim of size 3 (-1 if none). */
static int default_cross_dim(int ndim, const int64_t *sizes)
{
    for (int d = 0; d < ndim; d++) {
        if (sizes[d] == 3) {
            return d;
        }
    }
    return -1;
}

/* torch.cross (linalg false: dim=None picks input's first dim of size 3, with PyTorch's
 * deprecation warning) and torch.linalg.cross (dim=-1). */
static PyObject *cross_impl(CtTensorObject *a, PyObject *other, PyObject *dim_obj, bool linalg, PyObject *out)
{
    static bool warned = false;
    const char *fname = linalg ? "linalg_cross" : "cross";
    CtTensorObject *b = tensor_arg(other, fname, "other");
    if (b == NULL) {
        return NULL;
    }
    if (a->ndim != b->ndim) {
        PyErr_SetString(PyExc_RuntimeError, "linalg.cross: inputs must have the same number of dimensions.");
        return NULL;
    }
    int64_t dim_given = -1;
    int dim;
    if (dim_obj == NULL || dim_obj == Py_None) {
        if (!linalg) {
            if (warn_once(&warned, "Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
                                   "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of "
                                   "dim will change to agree with that of linalg.cross in a future release.") < 0) {
                return NULL;
            }
            if ((dim_given = default_cross_dim(a->ndim, a->sizes)) < 0) {
                PyErr_SetString(PyExc_RuntimeError, "no dimension of size 3 in input");
                return NULL;
            }
        }
    } else if (ct_int_arg(fname, "dim", 0, dim_obj, &dim_given) < 0) {
        return NULL;
    }
    int64_t shape[CT_MAX_DIMS];
    if (ct_wrap_dim(dim_given, a->ndim, &dim) < 0 || ct_broadcast_shapes(a->ndim, a->sizes, b->ndim, b->sizes, shape) < 0) {
        return NULL;
    }
    if (a->sizes[dim] != 3 || b->sizes[dim] != 3) {
        PyErr_Format(PyExc_RuntimeError, "linalg.cross: inputs dimension %lld must have length 3. Got %lld and %lld",
                     (long long)dim_given, (long long)a->sizes[dim], (long long)b->sizes[dim]);
        return NULL;
    }
    if (a->dtype != b->dtype) {
        PyErr_Format(PyExc_RuntimeError, "expected scalar type %s but found %s", ct_scalar_type_name(a->dtype),
                     ct_scalar_type_name(b->dtype));
        return NULL;
    }
    if (a->dtype == CT_BOOL) {
        PyErr_SetString(PyExc_NotImplementedError, "\"cross\" not implemented for 'Bool'");
        return NULL;
    }
    PyObject *r = cross_values((PyObject *)a, (PyObject *)b, dim);
    CtTensorObject *ins[2] = {a, b};
    return ct_write_out(r ? CT_TENSOR(r) : NULL, out, linalg ? "linalg.cross" : "cross", CT_OUT_EXACT, 2, ins);
}

static PyObject *tensor_cross(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"other", "dim", "*out", NULL};
    PyObject *a[3];
    if (ct_parse_args("cross", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    return cross_impl(CT_TENSOR(self), a[0], a[1], false, a[2]);
}

PyDoc_STRVAR(linalg_cross_doc, "_linalg_cross(input, other, *, dim=-1, out=None): torch.linalg.cross");
static PyObject *py_linalg_cross(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "other", "*dim", "*out", NULL};
    PyObject *a[4];
    CtTensorObject *t;
    if (ct_parse_args("linalg_cross", args, nargs, kwnames, names, 2, a) < 0 ||
        (t = tensor_arg(a[0], "linalg_cross", "input")) == NULL) {
        return NULL;
    }
    return cross_impl(t, a[1], a[2] != NULL && a[2] != Py_None ? a[2] : NULL, true, a[3]);
}

/* rot90's k taken modulo 4 and its two dims wrapped, with PyTorch's checks. 0 or -1. */
static int rot90_args(CtTensorObject *t, PyObject *k_obj, PyObject *dims_obj, int64_t *k, int *d0, int *d1)
{
    int64_t dims[CT_MAX_DIMS] = {0, 1};
    int nd = 2;
    *k = 1;
    if ((k_obj != NULL && ct_int_arg("rot90", "k", 0, k_obj, k) < 0) ||
        (dims_obj != NULL && (nd = int_seq(dims_obj, dims, CT_MAX_DIMS, "rot90", "dims")) < 0)) {
        return -1;
    }
    if (nd != 2) {
        PyErr_Format(PyExc_RuntimeError, "expected total rotation dims == 2, but got dims = %d", nd);
        return -1;
    }
    if (t->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "expected total dims >= 2, but got total dims = %d", t->ndim);
        return -1;
    }
    if (ct_wrap_dim(dims[0], t->ndim, d0) < 0 || ct_wrap_dim(dims[1], t->ndim, d1) < 0) {
        return -1;
    }
    if (*d0 == *d1) {
        PyErr_Format(PyExc_RuntimeError, "expected rotation dims to be different, but got dim0 = %lld and dim1 = %lld",
                     (long long)dims[0], (long long)dims[1]);
        return -1;
    }
    *k = ((*k % 4) + 4) % 4;
    return 0;
}

static PyObject *tensor_rot90(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"k", "dims", NULL};
    PyObject *a[2];
    int64_t k;
    int d0, d1;
    if (ct_parse_args("rot90", args, nargs, kwnames, names, 0, a) < 0 ||
        rot90_args(CT_TENSOR(self), a[0], a[1], &k, &d0, &d1) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r;
    if (k == 0) {
        r = METH(self, "clone", NULL);
    } else if (k == 2) {
        r = METH(self, "flip", "((ii))", d0, d1);
    } else { /* 1: flip dim1 then swap; 3: flip dim0 then swap (a transposed view, as PyTorch) */
        r = METH(METH(self, "flip", "((i))", k == 1 ? d1 : d0), "transpose", "(ii)", d0, d1);
    }
    r = TAKE(r);
    arena_free(arena);
    return r;
}

/* The (rows, cols) block of a 0-d/1-d/2-d input of block_diag. */
static void block_shape(const CtTensorObject *t, int64_t *rows, int64_t *cols)
{
    *rows = t->ndim == 2 ? t->sizes[0] : 1;
    *cols = t->ndim == 0 ? 1 : t->sizes[t->ndim - 1];
}

PyDoc_STRVAR(block_diag_doc, "_block_diag(tensors): torch.block_diag(*tensors), the inputs (0-d, 1-d as a row, "
                             "2-d) along the diagonal of a zero matrix");
static PyObject *py_block_diag(PyObject *mod, PyObject *arg)
{
    PyObject *tensors = tensor_varargs(&arg, 1);
    if (tensors == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tensors);
    CtTensorObject *out = NULL;
    CtDType dtype = ct_default_float_dtype;
    CtDevice device = ct_cpu();
    int64_t shape[2] = {n == 0 ? 1 : 0, 0};
    for (Py_ssize_t i = 0; i < n; i++) {
        CtTensorObject *t = CT_TENSOR(PyTuple_GET_ITEM(tensors, i));
        if (t->ndim > 2) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input %zd has %d dimensions",
                         i, t->ndim);
            goto done;
        }
        if (i == 0) {
            dtype = t->dtype;
            device = ct_device_of(t);
        } else if (!ct_device_equal(device, ct_device_of(t))) {
            char d0[32], di[32];
            ct_device_str(device, d0, sizeof(d0));
            ct_device_str(ct_device_of(t), di, sizeof(di));
            PyErr_Format(PyExc_RuntimeError,
                         "Input tensors must all be on the same device. Input 0 is on device %s and input %zd is on "
                         "device %s.",
                         d0, i, di);
            goto done;
        }
        dtype = ct_promote_types(dtype, t->dtype);
        int64_t r, c;
        block_shape(t, &r, &c);
        shape[0] += r;
        shape[1] += c;
    }
    if ((out = ct_zeros(2, shape, dtype, device)) == NULL) {
        goto done;
    }
    int64_t row = 0, col = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        CtTensorObject *t = CT_TENSOR(PyTuple_GET_ITEM(tensors, i));
        int64_t r, c;
        block_shape(t, &r, &c);
        if (r * c > 0) {
            int64_t sizes[2] = {r, c}, strides[2] = {t->ndim == 2 ? t->strides[0] : 1, t->ndim ? t->strides[t->ndim - 1] : 1};
            PyObject *rows = ct_narrow(out, 0, row, r);
            PyObject *block = rows ? ct_narrow(CT_TENSOR(rows), 1, col, c) : NULL;
            CtTensorObject *src = block ? ct_view_of(t, 2, sizes, strides, t->offset) : NULL;
            int rc = src ? ct_copy_(CT_TENSOR(block), src) : -1;
            Py_XDECREF(rows);
            Py_XDECREF(block);
            Py_XDECREF(src);
            if (rc < 0) {
                Py_CLEAR(out);
                goto done;
            }
        }
        row += r;
        col += c;
    }
done:
    Py_DECREF(tensors);
    return (PyObject *)out;
}

/* cdist's compute_mode: 0 use_mm_for_euclid_dist_if_necessary (None), 1 use_mm_for_euclid_dist,
 * 2 donot_use_mm_for_euclid_dist; -1 with PyTorch's ValueError otherwise. */
static int cdist_mode(PyObject *obj)
{
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    static const char *const modes[] = {"use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                                        "donot_use_mm_for_euclid_dist"};
    const char *s = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    for (int i = 0; s != NULL && i < 3; i++) {
        if (strcmp(s, modes[i]) == 0) {
            return i;
        }
    }
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "%S is not a valid value for compute_mode", obj);
    return -1;
}

/* PyTorch computes p = 2 distances as sqrt(|x|^2 - 2 x.y + |y|^2) through a matrix product when
 * asked to, or by default when either side has more than 25 points. */
static bool cdist_uses_mm(double p, int mode, const CtTensorObject *x1, const CtTensorObject *x2)
{
    int64_t P = x1->sizes[x1->ndim - 2], R = x2->sizes[x2->ndim - 2];
    return p == 2.0 && (mode == 1 || (mode == 0 && (P > 25 || R > 25)));
}

static int check_cdist_input(const CtTensorObject *t, const char *which)
{
    if (t->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "cdist only supports at least 2D tensors, %s got: %dD", which, t->ndim);
        return -1;
    }
    if (!ct_is_floating(t->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "cdist only supports floating-point dtypes, %s got: %s", which,
                     ct_scalar_type_name(t->dtype));
        return -1;
    }
    return 0;
}

/* The p-norm (p >= 0) over the last dim of diff, a non-empty dim (arena-owned): cdist's and
 * pdist's distances. */
static PyObject *pnorm_last(CtArena *arena, PyObject *diff, double p, CtDType dtype)
{
    if (p == 0.0) {
        return METH(METH(CMP(diff, NUM(0.0), Py_NE), "to", "(O)", ct_dtype_object(dtype)), "sum", "(i)", -1);
    }
    if (p == 1.0) {
        return METH(METH(diff, "abs", NULL), "sum", "(i)", -1);
    }
    if (p == 2.0) {
        return METH(METH(MUL(diff, diff), "sum", "(i)", -1), "sqrt", NULL);
    }
    if (isinf(p)) {
        return METH(METH(diff, "abs", NULL), "amax", "(i)", -1);
    }
    return POW(METH(POW(METH(diff, "abs", NULL), NUM(p)), "sum", "(i)", -1), NUM(1.0 / p));
}

/* cdist's and pdist's p (>= 0) and their floating dtype (not the half ones). 0 or -1. */
static int check_dist_p_dtype(const char *op, double p, CtDType dtype)
{
    if (!(p >= 0)) {
        PyErr_Format(PyExc_RuntimeError, "%s only supports non-negative p values", op);
        return -1;
    }
    if (dtype == CT_F16 || dtype == CT_BF16) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", op, ct_scalar_type_name(dtype));
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(cdist_doc, "cdist(x1, x2, p=2.0, compute_mode=None) -> Tensor\n\n"
                        "p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M): (..., P, R), the "
                        "batch dims broadcast.");
static PyObject *py_cdist(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"x1", "x2", "p", "compute_mode", NULL};
    PyObject *a[4];
    CtTensorObject *x1, *x2;
    double p = 2.0;
    int mode;
    if (ct_parse_args("cdist", args, nargs, kwnames, names, 2, a) < 0 || (x1 = tensor_arg(a[0], "cdist", "x1")) == NULL ||
        (x2 = tensor_arg(a[1], "cdist", "x2")) == NULL || ct_arg_double(a[2], &p) < 0 || (mode = cdist_mode(a[3])) < 0 ||
        check_cdist_input(x1, "X1") < 0 || check_cdist_input(x2, "X2") < 0) {
        return NULL;
    }
    int64_t m1 = x1->sizes[x1->ndim - 1], m2 = x2->sizes[x2->ndim - 1];
    if (m1 != m2) {
        PyErr_Format(PyExc_RuntimeError, "X1 and X2 must have the same number of columns. X1: %lld X2: %lld",
                     (long long)m1, (long long)m2);
        return NULL;
    }
    if (check_dist_p_dtype("cdist", p, x1->dtype) < 0) {
        return NULL;
    }
    if (x1->dtype != x2->dtype) {
        PyErr_Format(PyExc_RuntimeError, "expected scalar type %s but found %s", ct_scalar_type_name(x1->dtype),
                     ct_scalar_type_name(x2->dtype));
        return NULL;
    }
    int64_t batch[CT_MAX_DIMS], shape[CT_MAX_DIMS];
    int nb = ct_broadcast_shapes(x1->ndim - 2, x1->sizes, x2->ndim - 2, x2->sizes, batch);
    if (nb < 0 || nb + 2 > CT_MAX_DIMS) {
        if (nb >= 0) {
            PyErr_Format(PyExc_RuntimeError, "cdist: ctorch supports at most %d dimensions", CT_MAX_DIMS);
        }
        return NULL;
    }
    memcpy(shape, batch, sizeof(int64_t) * nb);
    shape[nb] = x1->sizes[x1->ndim - 2];
    shape[nb + 1] = x2->sizes[x2->ndim - 2];
    if (m1 == 0 || shape[nb] == 0 || shape[nb + 1] == 0) {
        return (PyObject *)ct_zeros(nb + 2, shape, x1->dtype, ct_device_of(x1));
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r, *s1 = (PyObject *)x1, *s2 = (PyObject *)x2;
    if (cdist_uses_mm(p, mode, x1, x2)) {
        PyObject *n1 = METH(MUL(s1, s1), "sum", "(iO)", -1, Py_True);
        PyObject *n2 = METH(METH(MUL(s2, s2), "sum", "(iO)", -1, Py_True), "transpose", "(ii)", -1, -2);
        PyObject *xy = MATMUL(s1, METH(s2, "transpose", "(ii)", -1, -2));
        r = METH(METH(ADD(SUB(n1, MUL(xy, NUM(2.0))), n2), "clamp_min", "(d)", 0.0), "sqrt", NULL);
    } else {
        PyObject *diff = SUB(METH(s1, "unsqueeze", "(i)", -2), METH(s2, "unsqueeze", "(i)", -3)); /* (..., P, R, M) */
        r = pnorm_last(arena, diff, p, x1->dtype);
    }
    /* the batch dims of the result are the broadcast ones even where x1/x2 lack them */
    PyObject *full = KEEP(ct_size_object(nb + 2, shape));
    r = METH(r, "expand", "(O)", full);
    r = TAKE(METH(r, "contiguous", NULL));
    arena_free(arena);
    return r;
}

/* pdist's pairs (i < j, row-major) as two index tensors on x's device (arena-owned). 0 or -1. */
static int pdist_pairs(CtArena *arena, PyObject *x, int64_t N, PyObject **i, PyObject **j)
{
    PyObject *pairs = METH(FN("triu_indices", "(LLi)", (long long)N, (long long)N, 1), "to", "(O)", ATTR(x, "device"));
    *i = METH(pairs, "select", "(ii)", 0, 0);
    *j = METH(pairs, "select", "(ii)", 0, 1);
    return arena->failed ? -1 : 0;
}

PyDoc_STRVAR(pdist_doc, "pdist(input, p=2) -> Tensor\n\n"
                        "p-norm distances between the rows of input (N, M) for each pair i < j, in row-major "
                        "order: (N (N - 1) / 2,).");
static PyObject *py_pdist(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "p", NULL};
    PyObject *a[2];
    CtTensorObject *x;
    double p = 2.0;
    if (ct_parse_args("pdist", args, nargs, kwnames, names, 1, a) < 0 || (x = tensor_arg(a[0], "pdist", "input")) == NULL ||
        ct_arg_double(a[1], &p) < 0) {
        return NULL;
    }
    if (x->ndim != 2) {
        PyErr_Format(PyExc_RuntimeError, "pdist only supports 2D tensors, got: %dD", x->ndim);
        return NULL;
    }
    if (!ct_is_floating(x->dtype)) {
        PyErr_SetString(PyExc_RuntimeError, "pdist only supports floating-point dtypes");
        return NULL;
    }
    if (check_dist_p_dtype("pdist", p, x->dtype) < 0) {
        return NULL;
    }
    int64_t N = x->sizes[0], P = N > 1 ? N * (N - 1) / 2 : 0;
    if (P == 0 || x->sizes[1] == 0) {
        return (PyObject *)ct_zeros(1, &P, x->dtype, ct_device_of(x));
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *i, *j, *r = NULL;
    if (pdist_pairs(arena, a[0], N, &i, &j) == 0) {
        PyObject *diff = SUB(METH(a[0], "index_select", "(iO)", 0, i), METH(a[0], "index_select", "(iO)", 0, j));
        r = TAKE(METH(pnorm_last(arena, diff, p, x->dtype), "contiguous", NULL));
    }
    arena_free(arena);
    return r;
}

/* ============================================================================================
 * tensordot
 * ============================================================================================ */

/* tensordot's dims as two lists of contracted dims (as given, possibly negative): the count,
 * or -1 with PyTorch's error. An int k contracts a's last k dims with b's first k. */
static int tensordot_dims(PyObject *obj, const CtTensorObject *a, const CtTensorObject *b, int64_t *da, int64_t *db)
{
    int64_t k = 2;
    bool as_int = obj == NULL;
    PyObject *lists = NULL;
    if (obj != NULL && CtTensor_Check(obj)) {
        CtTensorObject *t = CT_TENSOR(obj);
        if (t->ndim == 0) {
            CtScalar s;
            if (ct_item(t, &s) < 0) {
                return -1;
            }
            k = ct_scalar_to_int(&s);
            as_int = true;
        } else if (t->ndim == 2) {
            if (t->sizes[0] != 2) {
                PyErr_Format(PyExc_AssertionError, "dims tensor must have size 2 in first dimension, got %lld",
                             (long long)t->sizes[0]);
                return -1;
            }
            if ((lists = PyObject_CallMethod(obj, "tolist", NULL)) == NULL) {
                return -1;
            }
        }
    } else if (obj != NULL && PyIndex_Check(obj) && !PyFloat_Check(obj)) {
        if (ct_arg_int64(obj, &k) < 0) {
            return -1;
        }
        as_int = true;
    } else if (obj != NULL && (PyList_Check(obj) || PyTuple_Check(obj)) && PySequence_Fast_GET_SIZE(obj) == 2) {
        lists = Py_NewRef(obj);
    }
    if (as_int) {
        if (k < 0) {
            PyErr_Format(PyExc_RuntimeError, "tensordot expects dims >= 0, but got dims=%lld", (long long)k);
            return -1;
        }
        if (k > a->ndim || k > b->ndim) {
            PyErr_Format(PyExc_RuntimeError, "tensordot expects dims < ndim_a or ndim_b, but got dims=%lld",
                         (long long)k);
            return -1;
        }
        for (int64_t i = 0; i < k; i++) {
            da[i] = i - k;
            db[i] = i;
        }
        return (int)k;
    }
    if (lists == NULL) {
        if (obj != NULL && (CtTensor_Check(obj) || PyList_Check(obj) || PyTuple_Check(obj))) {
            PyErr_SetString(PyExc_TypeError, "tensordot(): argument 'dims_self' (position 3) must be tuple of ints, "
                                             "not int");
        } else {
            PyErr_Format(PyExc_RuntimeError,
                         "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                         "containing two lists, but got dims=%R",
                         obj);
        }
        return -1;
    }
    PyObject *la = PySequence_Fast_GET_ITEM(lists, 0), *lb = PySequence_Fast_GET_ITEM(lists, 1);
    int na = -1, nb = -1;
    if (PyList_Check(la) || PyTuple_Check(la)) {
        na = int_seq(la, da, CT_MAX_DIMS, "tensordot", "dims_self");
        nb = na < 0 ? -1 : int_seq(lb, db, CT_MAX_DIMS, "tensordot", "dims_other");
    } else {
        PyErr_SetString(PyExc_TypeError, "tensordot(): argument 'dims_self' (position 3) must be tuple of ints, not int");
    }
    Py_DECREF(lists);
    if (na < 0 || nb < 0) {
        return -1;
    }
    if (na != nb) {
        PyErr_SetString(PyExc_RuntimeError, "both dimension lists should have same length");
        return -1;
    }
    return na;
}

/* Wraps the k dims of t in given into out, refusing repeats. 0 or -1. */
static int wrap_distinct(const CtTensorObject *t, int k, const int64_t *given, int *out)
{
    bool seen[CT_MAX_DIMS] = {false};
    for (int i = 0; i < k; i++) {
        if (ct_wrap_dim(given[i], t->ndim, &out[i]) < 0) {
            return -1;
        }
        if (seen[out[i]]) {
            PyErr_Format(PyExc_RuntimeError, "dim %d appears multiple times in the list of dims", out[i]);
            return -1;
        }
        seen[out[i]] = true;
    }
    return 0;
}

/* t permuted to (first dims..., the others...) or (the others..., last dims...) and folded into a
 * matrix whose rows are the contracted dims when contracted_first. */
static PyObject *fold_for_mm(CtArena *arena, PyObject *t, int k, const int *dims, bool contracted_first,
                             int64_t *free_sizes, int *nfree)
{
    CtTensorObject *tt = CT_TENSOR(t);
    bool contracted[CT_MAX_DIMS] = {false};
    int64_t perm[CT_MAX_DIMS], csize = 1, fsize = 1;
    int np = 0;
    *nfree = 0;
    for (int i = 0; i < k; i++) {
        contracted[dims[i]] = true;
        csize *= tt->sizes[dims[i]];
    }
    for (int i = 0; contracted_first && i < k; i++) {
        perm[np++] = dims[i];
    }
    for (int d = 0; d < tt->ndim; d++) {
        if (!contracted[d]) {
            perm[np++] = d;
            free_sizes[(*nfree)++] = tt->sizes[d];
            fsize *= tt->sizes[d];
        }
    }
    for (int i = 0; !contracted_first && i < k; i++) {
        perm[np++] = dims[i];
    }
    PyObject *ptuple = KEEP(ct_size_object(np, perm));
    PyObject *permuted = METH(t, "permute", "(O)", ptuple);
    return contracted_first ? METH(permuted, "reshape", "(LL)", (long long)csize, (long long)fsize)
                            : METH(permuted, "reshape", "(LL)", (long long)fsize, (long long)csize);
}

PyDoc_STRVAR(tensordot_doc, "tensordot(a, b, dims=2, out=None) -> Tensor\n\n"
                            "Sum of products over the dims of a and b given by dims: an int (a's last dims with "
                            "b's first), a pair of lists, or a (2, k) tensor.");
static PyObject *py_tensordot(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"a", "b", "dims", "out", NULL};
    PyObject *a[4];
    CtTensorObject *ta, *tb;
    int64_t da[CT_MAX_DIMS], db[CT_MAX_DIMS];
    int wa[CT_MAX_DIMS], wb[CT_MAX_DIMS];
    if (ct_parse_args("tensordot", args, nargs, kwnames, names, 2, a) < 0 ||
        (ta = tensor_arg(a[0], "tensordot", "a")) == NULL || (tb = tensor_arg(a[1], "tensordot", "b")) == NULL) {
        return NULL;
    }
    int k = tensordot_dims(a[2], ta, tb, da, db);
    if (k < 0) {
        return NULL;
    }
    if (ta->dtype != tb->dtype) {
        PyErr_SetString(PyExc_RuntimeError, "both inputs should have same dtype");
        return NULL;
    }
    if (wrap_distinct(ta, k, da, wa) < 0 || wrap_distinct(tb, k, db, wb) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *A = (PyObject *)ta, *B = (PyObject *)tb;
    for (int i = 0; i < k; i++) { /* a size-1 contracted dim meets the other side's sum */
        int64_t sa = ta->sizes[wa[i]], sb = tb->sizes[wb[i]];
        if (sa == sb) {
            continue;
        }
        if (sa == 1) {
            B = METH(B, "sum", "(iO)", wb[i], Py_True);
        } else if (sb == 1) {
            A = METH(A, "sum", "(iO)", wa[i], Py_True);
        } else {
            arena_free(arena);
            PyErr_Format(PyExc_RuntimeError,
                         "contracted dimensions need to match, but first has size %lld in dim %lld and second has "
                         "size %lld in dim %lld",
                         (long long)sa, (long long)da[i], (long long)sb, (long long)db[i]);
            return NULL;
        }
    }
    int64_t free_sizes[2 * CT_MAX_DIMS];
    int nfa = 0, nfb = 0;
    PyObject *ma = A ? fold_for_mm(arena, A, k, wa, false, free_sizes, &nfa) : NULL;
    PyObject *mb = B && ma ? fold_for_mm(arena, B, k, wb, true, free_sizes + nfa, &nfb) : NULL;
    if (mb != NULL && nfa + nfb > CT_MAX_DIMS) {
        arena_free(arena);
        PyErr_Format(PyExc_RuntimeError, "tensordot: ctorch supports at most %d dimensions", CT_MAX_DIMS);
        return NULL;
    }
    PyObject *shape = mb ? KEEP(ct_size_object(nfa + nfb, free_sizes)) : NULL;
    PyObject *r = METH(FN("mm", "(OO)", ma, mb), "reshape", "(O)", shape);
    CtTensorObject *out;
    if (r != NULL && a[3] != NULL && a[3] != Py_None) {
        if (ct_arg_out(a[3], "tensordot", &out) < 0) {
            arena_free(arena);
            return NULL;
        }
        if (out->dtype != CT_TENSOR(r)->dtype) {
            PyErr_Format(PyExc_RuntimeError,
                         "tensordot: Expected the output tensor to have dtype %s, but got an output tensor with dtype %s",
                         ct_scalar_type_name(CT_TENSOR(r)->dtype), ct_scalar_type_name(out->dtype));
            arena_free(arena);
            return NULL;
        }
    }
    CtTensorObject *ins[2] = {ta, tb};
    return finish_out(arena, r, a[3], "tensordot", CT_OUT_ANY, 2, ins);
}

/* ============================================================================================
 * take_along_dim
 * ============================================================================================ */

static PyObject *tensor_take_along_dim(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"indices", "dim", "*out", NULL};
    PyObject *a[3];
    CtTensorObject *t = CT_TENSOR(self), *idx;
    if (ct_parse_args("take_along_dim", args, nargs, kwnames, names, 1, a) < 0 ||
        (idx = tensor_arg(a[0], "take_along_dim", "indices")) == NULL) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r;
    if (a[1] == NULL || a[1] == Py_None) { /* over the flattened input */
        r = METH(METH(self, "reshape", "((i))", -1), "gather", "(iO)", 0, METH(a[0], "reshape", "((i))", -1));
    } else {
        int64_t dim_arg;
        int dim;
        if (ct_int_arg("take_along_dim", "dim", 0, a[1], &dim_arg) < 0) {
            return NULL;
        }
        if (idx->dtype != CT_I64) {
            PyErr_Format(PyExc_RuntimeError, "torch.take_along_dim(): dtype of indices should be Long but got %s",
                         ct_scalar_type_name(idx->dtype));
            return NULL;
        }
        if (t->ndim != idx->ndim) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.take_along_dim(): input and indices should have the same number of dimensions, but "
                         "got %d dimensions for input, and %d dimensions for indices",
                         t->ndim, idx->ndim);
            return NULL;
        }
        if (ct_wrap_dim(dim_arg, t->ndim, &dim) < 0) {
            return NULL;
        }
        /* input and indices broadcast against each other in every dim but dim */
        int64_t sizes[CT_MAX_DIMS], shape[CT_MAX_DIMS];
        memcpy(sizes, t->sizes, sizeof(int64_t) * t->ndim);
        if (t->ndim > 0) {
            sizes[dim] = idx->sizes[dim];
        }
        if (ct_broadcast_shapes(t->ndim, sizes, idx->ndim, idx->sizes, shape) < 0) {
            return NULL;
        }
        PyObject *ishape = KEEP(ct_size_object(idx->ndim, shape));
        if (t->ndim > 0) {
            shape[dim] = t->sizes[dim];
        }
        PyObject *sshape = KEEP(ct_size_object(t->ndim, shape));
        r = METH(METH(self, "expand", "(O)", sshape), "gather", "(iO)", dim, METH(a[0], "expand", "(O)", ishape));
    }
    CtTensorObject *ins[2] = {t, idx};
    return finish_out(arena, r, a[2], "take_along_dim", CT_OUT_EXACT, 2, ins);
}

/* ============================================================================================
 * cov, corrcoef
 * ============================================================================================ */

/* A 0-d bool tensor's value (cond of a check that needs the data). 1, 0, or -1. */
static int truth(PyObject *t)
{
    return t == NULL ? -1 : PyObject_IsTrue(t);
}

/* The optional fweights/aweights of cov, checked as PyTorch does. 0 or -1. */
static int check_cov_weights(PyObject *w, const char *name, bool integral, int64_t nobs)
{
    CtTensorObject *t = tensor_arg(w, "cov", name);
    if (t == NULL) {
        return -1;
    }
    if (t->ndim > 1) {
        PyErr_Format(PyExc_RuntimeError,
                     "cov(): expected %s to have one or fewer dimensions but got %s with %d dimensions", name, name,
                     t->ndim);
        return -1;
    }
    if (integral ? !ct_is_integral(t->dtype, false) : !ct_is_floating(t->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "cov(): expected %s to have %s dtype but got %s with %s dtype", name,
                     integral ? "integral" : "floating point", name, ct_scalar_type_name(t->dtype));
        return -1;
    }
    if (ct_numel(t) != nobs) {
        PyErr_Format(PyExc_RuntimeError,
                     "cov(): expected %s to have the same numel as there are observations in the input but got %lld != "
                     "%lld",
                     name, (long long)ct_numel(t), (long long)nobs);
        return -1;
    }
    if (nobs > 0) {
        PyObject *mn = PyObject_CallMethod(w, "min", NULL);
        PyObject *zero = PyLong_FromLong(0);
        PyObject *lt = mn && zero ? PyObject_RichCompare(mn, zero, Py_LT) : NULL;
        int bad = truth(lt);
        Py_XDECREF(zero);
        Py_XDECREF(lt);
        Py_XDECREF(mn);
        if (bad != 0) {
            if (bad > 0) {
                PyErr_Format(PyExc_RuntimeError, "cov(): %s cannot be negative", name);
            }
            return -1;
        }
    }
    return 0;
}

static PyObject *cov_impl(PyObject *self, int64_t correction, PyObject *fw, PyObject *aw)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (t->ndim > 2) {
        PyErr_Format(PyExc_RuntimeError,
                     "cov(): expected input to have two or fewer dimensions but got an input with %d dimensions",
                     t->ndim);
        return NULL;
    }
    if (t->dtype == CT_BOOL) {
        PyErr_SetString(PyExc_NotImplementedError, "cov(): bool dtype is not supported for input");
        return NULL;
    }
    int64_t nobs = t->ndim < 2 ? ct_numel(t) : t->sizes[1];
    bool has_f = fw != NULL && fw != Py_None, has_a = aw != NULL && aw != Py_None;
    if ((has_f && check_cov_weights(fw, "fweights", true, nobs) < 0) ||
        (has_a && check_cov_weights(aw, "aweights", false, nobs) < 0)) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *x = t->ndim < 2 ? METH(self, "reshape", "(ii)", 1, -1) : self; /* (variables, observations) */
    PyObject *w = has_f && has_a ? MUL(fw, aw) : (has_f ? fw : (has_a ? aw : NULL));
    PyObject *wsum = w ? METH(w, "sum", NULL) : INT(nobs);
    PyObject *result = NULL;
    if (w != NULL && wsum != NULL) {
        int zero = truth(CMP(wsum, INT(0), Py_EQ));
        if (zero != 0) {
            if (zero > 0) {
                PyErr_SetString(PyExc_RuntimeError, "cov(): weights sum to zero, can't be normalized");
            }
            goto done;
        }
    }
    PyObject *xw = w ? MUL(x, w) : x;
    PyObject *avg = DIV(METH(xw, "sum", "(i)", 1), wsum);
    PyObject *norm;
    if (w != NULL && correction != 0 && has_a) {
        norm = SUB(wsum, DIV(MUL(INT(correction), METH(MUL(w, aw), "sum", NULL)), wsum));
    } else {
        norm = SUB(wsum, INT(correction));
    }
    int nonpositive = truth(norm == NULL ? NULL : CMP(norm, INT(0), Py_LE));
    if (nonpositive < 0) {
        goto done;
    }
    if (nonpositive) {
        if (PyErr_WarnEx(PyExc_UserWarning,
                         "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                         "observations.",
                         1) < 0) {
            goto done;
        }
        norm = INT(0);
    }
    PyObject *centred = SUB(x, METH(avg, "unsqueeze", "(i)", 1));
    PyObject *c = FN("mm", "(OO)", centred, METH(w ? MUL(centred, w) : centred, "t", NULL));
    result = TAKE(METH(DIV(c, norm), "squeeze", NULL));
done:
    arena_free(arena);
    return result;
}

static PyObject *tensor_cov(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"*correction", "*fweights", "*aweights", NULL};
    PyObject *a[3];
    int64_t correction = 1;
    if (ct_parse_args("cov", args, nargs, kwnames, names, 0, a) < 0 ||
        (a[0] != NULL && ct_int_arg("cov", "correction", 0, a[0], &correction) < 0)) {
        return NULL;
    }
    return cov_impl(self, correction, a[1], a[2]);
}

static PyObject *tensor_corrcoef(PyObject *self, PyObject *unused)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (t->ndim > 2) {
        PyErr_Format(PyExc_RuntimeError,
                     "corrcoef(): expected input to have two or fewer dimensions but got an input with %d dimensions",
                     t->ndim);
        return NULL;
    }
    PyObject *c = cov_impl(self, 1, NULL, NULL);
    if (c == NULL) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r;
    KEEP(c);
    if (CT_TENSOR(c)->ndim == 0) {
        r = DIV(c, c);
    } else { /* normalised by the standard deviations along rows and columns, clipped to [-1, 1] */
        PyObject *sd = METH(METH(c, "diagonal", NULL), "sqrt", NULL);
        PyObject *scaled = DIV(DIV(c, METH(sd, "reshape", "(ii)", -1, 1)), METH(sd, "reshape", "(ii)", 1, -1));
        r = METH(scaled, "clip", "(dd)", -1.0, 1.0);
    }
    r = TAKE(r);
    arena_free(arena);
    return r;
}

/* ============================================================================================
 * tril_indices / triu_indices
 * ============================================================================================ */

/* The (2, N) coordinates of the lower (upper) triangle of a row x col matrix, built on the host. */
static PyObject *triangle_indices(const char *fname, bool upper, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    static const char *const names[] = {"row", "col", "offset", "*dtype", "*layout", "*device", "*pin_memory",
                                        "*requires_grad", NULL};
    PyObject *a[8];
    int64_t row, col, offset = 0;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0 || ct_int_arg(fname, "row", 1, a[0], &row) < 0 ||
        ct_int_arg(fname, "col", 2, a[1], &col) < 0 || (a[2] != NULL && ct_int_arg(fname, "offset", 3, a[2], &offset) < 0)) {
        return NULL;
    }
    PyObject *kw[CT_FACTORY_NKW] = {NULL, a[3], a[4], a[5], a[6], a[7], NULL};
    CtFactoryOptions opt;
    if (ct_factory_options(fname, kw, &opt) < 0) {
        return NULL;
    }
    if (row < 0 || col < 0) {
        PyErr_Format(PyExc_RuntimeError, "%s must be non-negative, got%lld", row < 0 ? "row" : "col",
                     (long long)(row < 0 ? row : col));
        return NULL;
    }
    CtDType dtype = opt.has_dtype ? opt.dtype : CT_I64;
    if (dtype != CT_I64 && dtype != CT_I32) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", fname, ct_scalar_type_name(dtype));
        return NULL;
    }
    /* entries of row r: columns [0, r + offset] (tril) or [r + offset, col) (triu), clipped */
    int64_t count = 0;
    for (int64_t r = 0; r < row; r++) {
        int64_t lo = upper ? r + offset : 0, hi = upper ? col : r + offset + 1;
        lo = lo < 0 ? 0 : lo;
        hi = hi > col ? col : hi;
        count += hi > lo ? hi - lo : 0;
    }
    int64_t sizes[2] = {2, count};
    CtDevice cpu = ct_cpu();
    CtTensorObject *host = ct_empty(2, sizes, CT_I64, cpu);
    if (host == NULL) {
        return NULL;
    }
    int64_t *rows = (int64_t *)ct_data(host), *cols = rows + count, k = 0;
    for (int64_t r = 0; r < row; r++) {
        int64_t lo = upper ? r + offset : 0, hi = upper ? col : r + offset + 1;
        lo = lo < 0 ? 0 : lo;
        hi = hi > col ? col : hi;
        for (int64_t c = lo; c < hi; c++, k++) {
            rows[k] = r;
            cols[k] = c;
        }
    }
    CtTensorObject *t = ct_to(host, dtype, opt.device, false);
    Py_DECREF(host);
    return t == NULL ? NULL : ct_factory_finish(fname, t, &opt);
}

PyDoc_STRVAR(tril_indices_doc, "tril_indices(row, col, offset=0, *, dtype=torch.long, device=None) -> Tensor\n\n"
                               "The (2, N) coordinates of the lower triangle of a row x col matrix.");
PyDoc_STRVAR(triu_indices_doc, "triu_indices(row, col, offset=0, *, dtype=torch.long, device=None) -> Tensor\n\n"
                               "The (2, N) coordinates of the upper triangle of a row x col matrix.");
static PyObject *py_tril_indices(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return triangle_indices("tril_indices", false, a, n, k);
}
static PyObject *py_triu_indices(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return triangle_indices("triu_indices", true, a, n, k);
}

/* ============================================================================================
 * backward formulas (composite.h): written with recorded ops, so create_graph=True works
 * ============================================================================================ */
#define NEEDS(e) (n->edge_nodes[(e)] != NULL)
#define META(i) (&n->meta[(i)])
#define ARG(i) (n->args[(i)] != NULL && n->args[(i)] != Py_None ? n->args[(i)] : NULL)

/* gi[e] = value fitted to argument i's shape and dtype (value owned by the arena). 0 or -1. */
static int put_grad(CtArena *arena, PyObject **gi, int e, PyObject *value, int i, CtNodeObject *n)
{
    if (value == NULL) {
        return -1;
    }
    gi[e] = ct_fit_grad(value, META(i));
    return gi[e] == NULL ? -1 : 0;
}

int ct_composite_bw_trace(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    const CtTensorMeta *m = META(0);
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *eye = KEEP((PyObject *)ct_eye(m->sizes[0], m->sizes[1], m->dtype, m->device));
    int rc = put_grad(arena, gi, 0, MUL(g[0], eye), 0, n);
    arena_free(arena);
    return rc;
}

int ct_composite_bw_kron(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    int64_t va[CT_MAX_DIMS], vb[CT_MAX_DIMS], vg[CT_MAX_DIMS], out[CT_MAX_DIMS];
    int nd = kron_shapes(META(0)->ndim, META(0)->sizes, META(1)->ndim, META(1)->sizes, va, vb, vg, out);
    if (nd < 0) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    /* g seen as (a0, b0, a1, b1, ...): a's gradient sums g * b over the b dims, and back */
    PyObject *g2 = METH(g[0], "reshape", "(O)", KEEP(ct_size_object(2 * nd, vg)));
    int64_t even[CT_MAX_DIMS], odd[CT_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        even[i] = 2 * i;
        odd[i] = 2 * i + 1;
    }
    int rc = 0;
    for (int e = 0; e < 2 && rc == 0; e++) {
        if (!NEEDS(e)) {
            continue;
        }
        PyObject *other = (PyObject *)ct_node_tensor(n, 1 - e);
        PyObject *ov = other ? METH(other, "reshape", "(O)", KEEP(ct_size_object(2 * nd, e == 0 ? vb : va))) : NULL;
        PyObject *summed = METH(MUL(g2, ov), "sum", "(O)", KEEP(ct_size_object(nd, e == 0 ? odd : even)));
        rc = put_grad(arena, gi, e, METH(summed, "reshape", "(O)", KEEP(ct_size_object(META(e)->ndim, META(e)->sizes))),
                      e, n);
    }
    arena_free(arena);
    return rc;
}

int ct_composite_bw_cross(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    /* cross(input, other, dim): dim None is input's first dim of size 3; linalg's default -1 */
    bool linalg = strcmp(n->formula->op, "_linalg_cross") == 0;
    long long dim = linalg ? -1 : default_cross_dim(META(0)->ndim, META(0)->sizes);
    if (ARG(2) != NULL && (dim = PyLong_AsLongLong(ARG(2))) == -1 && PyErr_Occurred()) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    int rc = 0;
    if (NEEDS(0)) {
        PyObject *other = (PyObject *)ct_node_tensor(n, 1);
        rc = put_grad(arena, gi, 0, other ? FN("cross", "(OOL)", other, g[0], dim) : NULL, 0, n);
    }
    if (rc == 0 && NEEDS(1)) {
        PyObject *self = (PyObject *)ct_node_tensor(n, 0);
        rc = put_grad(arena, gi, 1, self ? FN("cross", "(OOL)", g[0], self, dim) : NULL, 1, n);
    }
    arena_free(arena);
    return rc;
}

int ct_composite_bw_block_diag(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *tensors = n->args[0];
    Py_ssize_t k = PySequence_Fast_GET_SIZE(tensors);
    int64_t row = 0, col = 0;
    for (Py_ssize_t i = 0; i < k && i < n->num_edges; i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(tensors, i);
        int64_t r, c;
        block_shape(CT_TENSOR(t), &r, &c);
        if (NEEDS(i)) {
            CtArena scratch = {0}, *arena = &scratch;
            PyObject *block = METH(METH(g[0], "narrow", "(iLL)", 0, (long long)row, (long long)r), "narrow", "(iLL)", 1,
                                   (long long)col, (long long)c);
            gi[i] = TAKE(METH(block, "reshape", "(O)", ATTR(t, "shape")));
            arena_free(arena);
            if (gi[i] == NULL) {
                return -1;
            }
        }
        row += r;
        col += c;
    }
    return 0;
}

int ct_composite_bw_rot90(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    long long k = ARG(1) ? PyLong_AsLongLong(ARG(1)) : 1;
    if (k == -1 && PyErr_Occurred()) {
        return -1;
    }
    PyObject *v = ARG(2) ? PyObject_CallMethod(g[0], "rot90", "(LO)", -k, ARG(2)) : PyObject_CallMethod(g[0], "rot90", "(L)", -k);
    if (v == NULL) {
        return -1;
    }
    gi[0] = v;
    return 0;
}

/* The values cdist's formula needs, parsed from its normalised arguments. */
static void cdist_norm_args(PyObject *const *a, double *p, int *mode)
{
    *p = a[2] != NULL && a[2] != Py_None ? PyFloat_AsDouble(a[2]) : 2.0;
    *mode = cdist_mode(a[3]);
    PyErr_Clear(); /* the op itself reported any bad argument */
}

const char *ct_composite_name_cdist(PyObject *const *norm)
{
    double p;
    int mode;
    cdist_norm_args(norm, &p, &mode);
    bool tensors = norm[0] != NULL && norm[1] != NULL && CtTensor_Check(norm[0]) && CtTensor_Check(norm[1]) &&
                   CT_TENSOR(norm[0])->ndim >= 2 && CT_TENSOR(norm[1])->ndim >= 2;
    return tensors && cdist_uses_mm(p, mode, CT_TENSOR(norm[0]), CT_TENSOR(norm[1])) ? "ViewBackward0" : "CdistBackward0";
}

/* d dist / d diff for dist = pnorm_last(diff) (dist with a trailing dim of 1; arena-owned):
 * sign(diff) |diff|^(p-1) / dist^(p-1) (0 where dist is 0); p = 1: sign; p = 2: diff / dist;
 * inf: sign where |diff| is the max (ties each get it, as PyTorch's cdist and pdist); p = 0: 0. */
static PyObject *pnorm_last_weight(CtArena *arena, PyObject *diff, PyObject *dist, double p)
{
    PyObject *zero = NUM(0.0);
    if (p == 0.0) {
        return MUL(diff, zero);
    }
    if (p == 1.0) {
        return METH(diff, "sign", NULL);
    }
    if (isinf(p)) {
        return MUL(METH(diff, "sign", NULL), CMPF(METH(diff, "abs", NULL), dist, Py_EQ, diff));
    }
    PyObject *mag = p == 2.0 ? diff
                             : MUL(METH(diff, "sign", NULL),
                                   WHERE(CMP(diff, zero, Py_EQ), MUL(diff, zero), POW(METH(diff, "abs", NULL), NUM(p - 1))));
    PyObject *den = p == 2.0 ? dist : POW(dist, NUM(p - 1));
    return WHERE(CMP(dist, zero, Py_EQ), MUL(mag, zero), DIV(mag, den));
}

/* d dist_ij / d x1_i = pnorm_last_weight(x1_i - x2_j), and its negation for x2_j. */
int ct_composite_bw_cdist(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    double p;
    int mode;
    cdist_norm_args(n->args, &p, &mode);
    PyObject *x1 = (PyObject *)ct_node_tensor(n, 0), *x2 = x1 ? (PyObject *)ct_node_tensor(n, 1) : NULL;
    if (x2 == NULL) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *out = KEEP(ct_node_output_ref(n, 0));
    PyObject *dist = out ? METH(out, "unsqueeze", "(i)", -1) : NULL;
    PyObject *diff = SUB(METH(x1, "unsqueeze", "(i)", -2), METH(x2, "unsqueeze", "(i)", -3));
    PyObject *gw = MUL(METH(g[0], "unsqueeze", "(i)", -1), pnorm_last_weight(arena, diff, dist, p)); /* (..., P, R, M) */
    int rc = 0;
    if (NEEDS(0)) {
        rc = put_grad(arena, gi, 0, METH(gw, "sum", "(i)", -2), 0, n);
    }
    if (rc == 0 && NEEDS(1)) {
        rc = put_grad(arena, gi, 1, NEG(METH(gw, "sum", "(i)", -3)), 1, n);
    }
    if (arena->failed && rc == 0) {
        rc = -1;
    }
    arena_free(arena);
    return rc;
}

/* pdist: each pair's pnorm_last_weight(x_i - x_j) times g, added to row i and subtracted from row j. */
int ct_composite_bw_pdist(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    double p = ARG(1) ? PyFloat_AsDouble(ARG(1)) : 2.0;
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL || (p == -1.0 && PyErr_Occurred())) {
        return -1;
    }
    int64_t N = META(0)->sizes[0];
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *zeros = MUL(x, NUM(0.0)), *v = zeros, *i, *j;
    if (N > 1 && META(0)->sizes[1] > 0 && pdist_pairs(arena, x, N, &i, &j) == 0) {
        PyObject *dist = METH(KEEP(ct_node_output_ref(n, 0)), "unsqueeze", "(i)", -1);
        PyObject *diff = SUB(METH(x, "index_select", "(iO)", 0, i), METH(x, "index_select", "(iO)", 0, j));
        PyObject *gw = MUL(METH(g[0], "unsqueeze", "(i)", -1), pnorm_last_weight(arena, diff, dist, p)); /* (P, M) */
        v = METH(METH(zeros, "index_add", "(iOO)", 0, i, gw), "index_add", "(iOO)", 0, j, NEG(gw));
    }
    int rc = put_grad(arena, gi, 0, v, 0, n);
    if (arena->failed && rc == 0) {
        rc = -1;
    }
    arena_free(arena);
    return rc;
}

/* ============================================================================================
 * tables
 * ============================================================================================ */
CT_FUNCTION_FROM_METHOD(diff, tensor_diff)
CT_FUNCTION_FROM_NOARGS_METHOD(trace, tensor_trace)
CT_FUNCTION_FROM_METHOD(kron, tensor_kron)
CT_FUNCTION_FROM_METHOD(cross, tensor_cross)
CT_FUNCTION_FROM_METHOD(rot90, tensor_rot90)
CT_FUNCTION_FROM_METHOD(take_along_dim, tensor_take_along_dim)
CT_FUNCTION_FROM_METHOD(cov, tensor_cov)
CT_FUNCTION_FROM_NOARGS_METHOD(corrcoef, tensor_corrcoef)

#define CT_M(name, doc) {#name, CT_FASTCALL(tensor_##name), CT_METH_FK, doc}
PyMethodDef ct_composite_tensor_methods[] = {
    CT_M(diff, "diff(n=1, dim=-1, prepend=None, append=None): n-th forward difference along dim"),
    {"trace", tensor_trace, METH_NOARGS, "trace(): sum of the main diagonal of a matrix"},
    CT_M(kron, "kron(other): Kronecker product"),
    CT_M(cross, "cross(other, dim=None): cross product of 3-vectors along dim"),
    CT_M(rot90, "rot90(k=1, dims=[0, 1]): rotation by 90 degrees k times in the plane of dims"),
    CT_M(take_along_dim, "take_along_dim(indices, dim=None): gather along dim with broadcasting"),
    CT_M(cov, "cov(*, correction=1, fweights=None, aweights=None): covariance of the rows"),
    {"corrcoef", tensor_corrcoef, METH_NOARGS, "corrcoef(): Pearson correlation coefficients of the rows"},
    {NULL},
};

#define CT_FN(name, doc) {#name, CT_FASTCALL(function_##name), CT_METH_FK, doc}
#define CT_PY(name) {#name, CT_FASTCALL(py_##name), CT_METH_FK, name##_doc}
PyMethodDef ct_composite_module_methods[] = {
    CT_PY(meshgrid),
    CT_PY(cartesian_prod),
    CT_PY(atleast_1d),
    CT_PY(atleast_2d),
    CT_PY(atleast_3d),
    CT_PY(column_stack),
    CT_PY(tensordot),
    CT_PY(cdist),
    CT_PY(pdist),
    CT_PY(tril_indices),
    CT_PY(triu_indices),
    {"_linalg_cross", CT_FASTCALL(py_linalg_cross), CT_METH_FK, linalg_cross_doc},
    {"_block_diag", py_block_diag, METH_O, block_diag_doc},
    CT_FN(diff, "diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None)"),
    CT_FN(trace, "trace(input)"),
    CT_FN(kron, "kron(input, other, *, out=None)"),
    CT_FN(cross, "cross(input, other, dim=None, *, out=None)"),
    CT_FN(rot90, "rot90(input, k=1, dims=[0, 1])"),
    CT_FN(take_along_dim, "take_along_dim(input, indices, dim=None, *, out=None)"),
    CT_FN(cov, "cov(input, *, correction=1, fweights=None, aweights=None)"),
    CT_FN(corrcoef, "corrcoef(input)"),
    {NULL},
};

PyType_Slot ct_composite_tensor_slots[] = {{0, NULL}};
