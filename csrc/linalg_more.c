/* linalg_more.c: torch.linalg's norms and matrix products that PyTorch composes of other ops,
 * composed here the same way in C of ctorch's recording ops (ct_op / the arena of
 * autograd_arena.h), so they run on every device and autograd records their parts:
 *
 *   linalg.vector_norm / matrix_norm / norm (the dispatch between the two), linalg.vecdot,
 *   linalg.multi_dot (the cheapest product order), linalg.matrix_power, linalg.diagonal, and
 *   torch.dist, inner, addr, chain_matmul, renorm.
 *
 * addr has a node of its own in PyTorch (AddrBackward0): its row in autograd_formulas.c reuses
 * addmm's formula (a 1-d vec2.t() is vec2 itself, so g @ vec2 and vec1 @ g are its gradients).
 * Each op checks its arguments with PyTorch's messages before anything runs. */
#include "args.h"
#include "autograd_arena.h"
#include "creation.h" /* ct_type_name */
#include "registry.h"
#include "tensor.h"
#include "creation.h"
#include "device.h"
#include "linalg.h"
#include "lu_math.h"
#include "reduce.h" /* ct_return_type_new */
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ============================================================================================
 * argument helpers
 * ============================================================================================ */

/* A tensor argument (borrowed), or PyTorch's TypeError naming the argument. */
static CtTensorObject *tensor_param(PyObject *obj, const char *fname, const char *name)
{
    if (obj == NULL || !CtTensor_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Tensor, not %s", fname, name,
                     obj ? ct_type_name(obj) : "NoneType");
        return NULL;
    }
    return CT_TENSOR(obj);
}

/* NotImplementedError "<fname>: Expected a floating point or complex tensor as input. Got Long" */
static int require_floating(const CtTensorObject *t, const char *fname)
{
    if (ct_is_floating(t->dtype)) {
        return 0;
    }
    PyErr_Format(PyExc_NotImplementedError, "%s: Expected a floating point or complex tensor as input. Got %s", fname,
                 ct_scalar_type_name(t->dtype));
    return -1;
}

/* A number argument that is not a bool (ord, p): 0, or -1 with "argument 'name' must be Number". */
static int number_param(PyObject *obj, const char *fname, const char *name, int pos, double *out)
{
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (CtTensor_Check(obj) || !(PyFloat_Check(obj) || PyLong_Check(obj) || PyIndex_Check(obj))) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Number, not %s", fname, name, pos,
                     ct_type_name(obj));
        return -1;
    }
    return ct_arg_double(obj, out);
}

/* A result the arena owns, handed to out= (or returned) as a new reference. */
static PyObject *finish(CtArena *arena, PyObject *r, PyObject *out_obj, const char *fname)
{
    PyObject *owned = TAKE(r);
    arena_free(arena);
    if (owned == NULL || out_obj == NULL || out_obj == Py_None) {
        return owned;
    }
    CtTensorObject *out;
    if (ct_arg_out(out_obj, fname, &out) < 0) {
        Py_DECREF(owned);
        return NULL;
    }
    return ct_write_out(CT_TENSOR(owned), out_obj, fname, CT_OUT_EXACT, 0, NULL);
}

/* dtype= of the norms: input's dtype must promote to it ("convertible without narrowing"). */
static int check_norm_dtype(const CtTensorObject *t, PyObject *dtype_obj, const char *fname)
{
    if (dtype_obj == NULL || dtype_obj == Py_None) {
        return 0;
    }
    CtDType dtype;
    if (ct_dtype_from_object(dtype_obj, &dtype) < 0) {
        return -1;
    }
    if (ct_promote_types(t->dtype, dtype) != dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s: the dtype of the input (%s) should be convertible without narrowing to the specified dtype "
                     "(%s)",
                     fname, ct_scalar_type_name(t->dtype), ct_scalar_type_name(dtype));
        return -1;
    }
    return 0;
}

/* ============================================================================================
 * vector_norm / matrix_norm / norm
 * ============================================================================================ */

/* ctorch.norm(x, ord, dim, keepdim, dtype), which records LinalgVectorNormBackward0 as PyTorch's
 * linalg.vector_norm does; out= (if given) is passed on. A new reference. */
static PyObject *vector_norm_call(PyObject *x, PyObject *ord, PyObject *dim, bool keepdim, PyObject *dtype,
                                  PyObject *out)
{
    PyObject *two = ord == NULL || ord == Py_None ? PyFloat_FromDouble(2.0) : Py_NewRef(ord);
    if (two == NULL) {
        return NULL;
    }
    /* dtype and out go by keyword: norm's formula row takes dtype keyword-only */
    PyObject *args[6] = {x, two, dim ? dim : Py_None, keepdim ? Py_True : Py_False, NULL, NULL};
    PyObject *kw = PyTuple_New(0), *r = NULL;
    int nkw = 0;
    if (kw != NULL && dtype != NULL && dtype != Py_None) {
        args[4 + nkw++] = dtype;
        Py_SETREF(kw, Py_BuildValue("(s)", "dtype"));
    }
    if (kw != NULL && out != NULL && out != Py_None) {
        args[4 + nkw++] = out;
        Py_SETREF(kw, nkw == 1 ? Py_BuildValue("(s)", "out") : Py_BuildValue("(ss)", "dtype", "out"));
    }
    if (kw != NULL) {
        r = ct_op("norm", args, 4, nkw ? kw : NULL);
    }
    Py_XDECREF(kw);
    Py_DECREF(two);
    return r;
}

PyDoc_STRVAR(linalg_vector_norm_doc,
             "_linalg_vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None)\n\n"
             "torch.linalg.vector_norm: the ord-norm of x over dim (every dim when None).");
static PyObject *py_linalg_vector_norm(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"x", "ord", "dim", "keepdim", "*dtype", "*out", NULL};
    PyObject *a[6];
    double ord = 2.0;
    bool keepdim = false;
    if (ct_parse_args("linalg_vector_norm", args, nargs, kwnames, names, 1, a) < 0 ||
        tensor_param(a[0], "linalg_vector_norm", "x") == NULL ||
        require_floating(CT_TENSOR(a[0]), "linalg.vector_norm") < 0 || /* before any dim error, as PyTorch */
        number_param(a[1], "linalg_vector_norm", "ord", 2, &ord) < 0 || ct_arg_bool(a[3], &keepdim) < 0) {
        return NULL;
    }
    return vector_norm_call(a[0], a[1], a[2], keepdim, a[4], a[5]);
}

/* The orders of matrix_norm; 'nuc' and +-2 go to linalg_eig.c's SVD. */
typedef enum { ORD_FRO, ORD_ONE, ORD_MINUS_ONE, ORD_INF, ORD_MINUS_INF, ORD_NUC, ORD_TWO, ORD_MINUS_TWO } MatrixOrd;

/* ord of matrix_norm: 'fro', 'nuc', +-1, +-2 or +-inf. 0 or -1. */
static int matrix_ord(PyObject *obj, MatrixOrd *out)
{
    if (obj == NULL || obj == Py_None) {
        *out = ORD_FRO;
        return 0;
    }
    if (PyUnicode_Check(obj)) {
        const char *s = PyUnicode_AsUTF8(obj);
        if (s == NULL) {
            return -1;
        }
        if (strcmp(s, "fro") == 0) {
            *out = ORD_FRO;
            return 0;
        }
        if (strcmp(s, "nuc") == 0) {
            *out = ORD_NUC;
            return 0;
        }
        PyErr_Format(PyExc_RuntimeError, "linalg.matrix_norm: Order %s not supported.", s);
        return -1;
    }
    double v;
    if (number_param(obj, "linalg_matrix_norm", "ord", 2, &v) < 0) {
        return -1;
    }
    if (v == 1.0 || v == -1.0) {
        *out = v > 0 ? ORD_ONE : ORD_MINUS_ONE;
        return 0;
    }
    if (isinf(v)) {
        *out = v > 0 ? ORD_INF : ORD_MINUS_INF;
        return 0;
    }
    if (v == 2.0 || v == -2.0) {
        *out = v > 0 ? ORD_TWO : ORD_MINUS_TWO;
        return 0;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%g", v); /* PyErr_Format has no %g */
    PyErr_Format(PyExc_RuntimeError, "linalg.matrix_norm: Order %s not supported.", buf);
    return -1;
}

/* dim of matrix_norm: two distinct dims of t, wrapped. 0 or -1 with PyTorch's message. */
static int matrix_dims(PyObject *obj, const CtTensorObject *t, int *d0, int *d1)
{
    int64_t d[CT_MAX_DIMS];
    int n;
    if (obj == NULL || obj == Py_None) {
        d[0] = -2, d[1] = -1, n = 2;
    } else if (PyTuple_Check(obj) || PyList_Check(obj)) {
        n = (int)PySequence_Fast_GET_SIZE(obj);
        for (int i = 0; i < n && i < CT_MAX_DIMS; i++) {
            if (ct_arg_int64(PySequence_Fast_GET_ITEM(obj, i), &d[i]) < 0) {
                return -1;
            }
        }
    } else {
        if (ct_arg_int64(obj, &d[0]) < 0) {
            return -1;
        }
        n = 1;
    }
    if (n != 2) {
        char buf[256] = "";
        size_t len = 0;
        for (int i = 0; i < n && i < CT_MAX_DIMS && len < sizeof buf; i++) {
            len += (size_t)snprintf(buf + len, sizeof buf - len, i ? " %lld" : "%lld", (long long)d[i]);
        }
        PyErr_Format(PyExc_RuntimeError, "linalg.matrix_norm: dim must be a 2-tuple. Got %s", buf);
        return -1;
    }
    if (ct_wrap_dim(d[0], t->ndim, d0) < 0 || ct_wrap_dim(d[1], t->ndim, d1) < 0) {
        return -1;
    }
    if (*d0 == *d1) {
        PyErr_Format(PyExc_RuntimeError, "linalg.matrix_norm: dims must be different. Got (%d, %d)", *d0, *d1);
        return -1;
    }
    return 0;
}

/* matrix_norm(A, ord, dim, keepdim, dtype, out): 'fro' is the vector 2-norm over both dims;
 * 'nuc' / 2 / -2 the singular values' sum / max / min (ct_linalg_svd_norm); the 1 / inf orders are the largest (-1 / -inf: smallest) absolute column / row sum, as PyTorch's
 * abs().sum(keepdim).amax(), so the node is AmaxBackward0 / AminBackward0. A new reference. */
static PyObject *matrix_norm_impl(CtTensorObject *A, PyObject *ord_obj, PyObject *dim_obj, bool keepdim,
                                  PyObject *dtype, PyObject *out)
{
    MatrixOrd ord;
    int d0, d1;
    if (A->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError,
                        "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.");
        return NULL;
    }
    if (require_floating(A, "linalg.matrix_norm") < 0 || matrix_dims(dim_obj, A, &d0, &d1) < 0 ||
        matrix_ord(ord_obj, &ord) < 0 || check_norm_dtype(A, dtype, "linalg.matrix_norm") < 0) {
        return NULL;
    }
    if (ord == ORD_FRO) {
        PyObject *dims = Py_BuildValue("(ii)", d0, d1);
        PyObject *r = dims ? vector_norm_call((PyObject *)A, NULL, dims, keepdim, dtype, out) : NULL;
        Py_XDECREF(dims);
        return r;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *x = (PyObject *)A;
    if (dtype != NULL && dtype != Py_None) {
        x = METH(x, "to", "(O)", dtype);
    }
    if (ord == ORD_NUC || ord == ORD_TWO || ord == ORD_MINUS_TWO) {
        int svd_ord = ord == ORD_NUC ? 0 : ord == ORD_TWO ? 2 : -2;
        return finish(arena, x ? KEEP(ct_linalg_svd_norm(x, svd_ord, d0, d1, keepdim)) : NULL, out,
                      "linalg_matrix_norm");
    }
    bool columns = ord == ORD_ONE || ord == ORD_MINUS_ONE; /* sum down the columns (over d0) */
    int sum_dim = columns ? d0 : d1, max_dim = columns ? d1 : d0;
    PyObject *r;
    bool takes_max = ord == ORD_ONE || ord == ORD_INF;
    if (ct_numel(A) == 0 && takes_max) { /* PyTorch gives zeros where the max would have nothing to take; the
                                           * min orders raise amin's IndexError when its dim is empty */
        r = METH(METH(x, "abs", NULL), "sum", "((ii)O)", d0, d1, keepdim ? Py_True : Py_False);
    } else {
        if (!keepdim && max_dim > sum_dim) {
            max_dim--;
        }
        const char *pick = takes_max ? "amax" : "amin";
        PyObject *kd = keepdim ? Py_True : Py_False;
        r = METH(METH(METH(x, "abs", NULL), "sum", "(iO)", sum_dim, kd), pick, "(iO)", max_dim, kd);
    }
    return finish(arena, r, out, "linalg_matrix_norm");
}

PyDoc_STRVAR(linalg_matrix_norm_doc,
             "_linalg_matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None, out=None)\n\n"
             "torch.linalg.matrix_norm: 'fro', 1, -1, inf or -inf norm of the matrices over dim.");
static PyObject *py_linalg_matrix_norm(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "ord", "dim", "keepdim", "*dtype", "*out", NULL};
    PyObject *a[6];
    CtTensorObject *A;
    bool keepdim = false;
    if (ct_parse_args("linalg_matrix_norm", args, nargs, kwnames, names, 1, a) < 0 ||
        (A = tensor_param(a[0], "linalg_matrix_norm", "A")) == NULL || ct_arg_bool(a[3], &keepdim) < 0) {
        return NULL;
    }
    return matrix_norm_impl(A, a[1], a[2], keepdim, a[4], a[5]);
}

PyDoc_STRVAR(linalg_norm_doc, "_linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None)\n\n"
                              "torch.linalg.norm: a matrix norm for a string ord, or a number ord over two dims (or a "
                              "2-d A without dim); otherwise a vector norm (2 when ord is None).");
static PyObject *py_linalg_norm(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "ord", "dim", "keepdim", "*dtype", "*out", NULL};
    PyObject *a[6];
    CtTensorObject *A;
    bool keepdim = false;
    if (ct_parse_args("linalg_norm", args, nargs, kwnames, names, 1, a) < 0 ||
        (A = tensor_param(a[0], "linalg_norm", "A")) == NULL || ct_arg_bool(a[3], &keepdim) < 0) {
        return NULL;
    }
    PyObject *ord = a[1] == Py_None ? NULL : a[1], *dim = a[2] == Py_None ? NULL : a[2];
    Py_ssize_t ndims = -1;
    if (dim != NULL && (PyTuple_Check(dim) || PyList_Check(dim))) {
        ndims = PySequence_Fast_GET_SIZE(dim);
        if (ndims != 1 && ndims != 2) {
            PyObject *list = PySequence_List(dim);
            if (list != NULL) {
                PyErr_Format(PyExc_RuntimeError,
                             "linalg.norm: If dim is specified, it must be of length 1 or 2. Got %R", list);
                Py_DECREF(list);
            }
            return NULL;
        }
    } else if (dim != NULL) {
        ndims = 1;
    } else if (ord != NULL && A->ndim != 1 && A->ndim != 2) {
        PyErr_Format(PyExc_RuntimeError,
                     "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got %dD.", A->ndim);
        return NULL;
    }
    if (ord != NULL && (PyUnicode_Check(ord) || ndims == 2 || (dim == NULL && A->ndim == 2))) {
        return matrix_norm_impl(A, ord, dim, keepdim, a[4], a[5]);
    }
    double v;
    if (number_param(ord, "linalg_norm", "ord", 2, &v) < 0) {
        return NULL;
    }
    return vector_norm_call(a[0], ord, dim, keepdim, a[4], a[5]);
}

/* ============================================================================================
 * vecdot, inner, dist, addr
 * ============================================================================================ */

PyDoc_STRVAR(linalg_vecdot_doc, "_linalg_vecdot(x, y, *, dim=-1, out=None)\n\n"
                                "torch.linalg.vecdot: sum of x * y (broadcast) over dim.");
static PyObject *py_linalg_vecdot(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"x", "y", "*dim", "*out", NULL};
    PyObject *a[4];
    CtTensorObject *x, *y;
    int64_t dim = -1;
    if (ct_parse_args("linalg_vecdot", args, nargs, kwnames, names, 2, a) < 0 ||
        (x = tensor_param(a[0], "linalg_vecdot", "x")) == NULL ||
        (y = tensor_param(a[1], "linalg_vecdot", "y")) == NULL || ct_arg_int64(a[2], &dim) < 0) {
        return NULL;
    }
    if (x->dtype != y->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "linalg.vecdot: Expected x and y to have the same dtype, but found x of type %s and y of type %s "
                     "instead",
                     ct_scalar_type_name(x->dtype), ct_scalar_type_name(y->dtype));
        return NULL;
    }
    if (require_floating(x, "linalg.vecdot") < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    return finish(arena, METH(MUL(a[0], a[1]), "sum", "(L)", (long long)dim), a[3], "linalg_vecdot");
}

/* torch.inner: a 0-d operand multiplies; otherwise the last dims contract (tensordot). */
static PyObject *tensor_inner(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"other", "*out", NULL};
    PyObject *a[2];
    CtTensorObject *t = CT_TENSOR(self), *o;
    if (ct_parse_args("inner", args, nargs, kwnames, names, 1, a) < 0 ||
        (o = tensor_param(a[0], "inner", "other")) == NULL) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r;
    if (t->ndim == 0 || o->ndim == 0) {
        r = MUL(self, a[0]);
    } else if (t->sizes[t->ndim - 1] != o->sizes[o->ndim - 1]) {
        char sa[256], sb[256];
        ct_format_sizes(sa, sizeof sa, t->ndim, t->sizes);
        ct_format_sizes(sb, sizeof sb, o->ndim, o->sizes);
        PyErr_Format(PyExc_RuntimeError,
                     "inner() the last dimension must match on both input tensors but got shapes %s and %s", sa, sb);
        return NULL;
    } else {
        r = FN("tensordot", "(OO([i][i]))", self, a[0], t->ndim - 1, o->ndim - 1);
    }
    return finish(arena, r, a[1], "inner");
}

/* torch.dist: the p-norm of input - other (broadcast); recorded as one DistBackward0 node
 * (autograd_formulas.c's bw_dist). */
static PyObject *tensor_dist(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"other", "p", NULL};
    PyObject *a[2];
    CtTensorObject *t = CT_TENSOR(self), *o;
    double p = 2.0;
    if (ct_parse_args("dist", args, nargs, kwnames, names, 1, a) < 0 ||
        (o = tensor_param(a[0], "dist", "other")) == NULL || number_param(a[1], "dist", "p", 2, &p) < 0) {
        return NULL;
    }
    CtDType dt = ct_promote_types(t->dtype, o->dtype);
    if (!ct_is_floating(dt)) {
        PyErr_Format(PyExc_NotImplementedError,
                     "norm(): input dtype should be either floating point or complex. Got %s instead.",
                     ct_scalar_type_name(dt));
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *diff = SUB(self, a[0]);
    PyObject *r = diff ? KEEP(vector_norm_call(diff, a[1], NULL, false, NULL, NULL)) : NULL;
    return finish(arena, r, NULL, "dist");
}

/* A beta / alpha of addr: PyTorch refuses a float one for integer or bool results, and a bool one unless
 * the result is bool (a bool result takes an int one as its truth value). *is_zero tells beta == 0
 * (input is then not read). 0 or -1. */
static int addr_scalar(PyObject *obj, CtDType result, const char *name, bool *is_zero)
{
    *is_zero = false;
    if (obj == NULL) {
        return 0;
    }
    if (result != CT_BOOL && PyBool_Check(obj)) {
        PyErr_Format(PyExc_RuntimeError, "Boolean %s only supported for Boolean results.", name);
        return -1;
    }
    if (!ct_is_floating(result) && PyFloat_Check(obj)) {
        PyErr_Format(PyExc_RuntimeError,
                     "For integral input tensors, argument %s must not be a floating point number.", name);
        return -1;
    }
    double v;
    if (ct_arg_double(obj, &v) < 0) {
        return -1;
    }
    *is_zero = v == 0.0;
    return 0;
}

/* torch.addr: beta * input + alpha * outer(vec1, vec2), input broadcast to (n, m); with beta == 0
 * input is not read (NaN in it does not spread). */
static PyObject *tensor_addr(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"vec1", "vec2", "*beta", "*alpha", "*out", NULL};
    PyObject *a[5];
    CtTensorObject *t = CT_TENSOR(self), *v1, *v2;
    bool beta_zero, alpha_zero;
    if (ct_parse_args("addr", args, nargs, kwnames, names, 2, a) < 0 ||
        (v1 = tensor_param(a[0], "addr", "vec1")) == NULL || (v2 = tensor_param(a[1], "addr", "vec2")) == NULL) {
        return NULL;
    }
    if (v1->ndim != 1 || v2->ndim != 1) {
        PyErr_Format(PyExc_RuntimeError, "addr: Expected 1-D argument %s, but got %d-D",
                     v1->ndim != 1 ? "vec1" : "vec2",
                     v1->ndim != 1 ? v1->ndim : v2->ndim);
        return NULL;
    }
    CtDType dt = ct_promote_types(t->dtype, ct_promote_types(v1->dtype, v2->dtype));
    if (addr_scalar(a[2], dt, "beta", &beta_zero) < 0 || addr_scalar(a[3], dt, "alpha", &alpha_zero) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    /* the product in the result's dtype, as PyTorch (float32 vectors into a float64 input multiply in float64) */
    PyObject *dtype_obj = ct_dtype_object(dt);
    PyObject *r = FN("outer", "(OO)", METH(a[0], "to", "(O)", dtype_obj), METH(a[1], "to", "(O)", dtype_obj));
    if (a[3] != NULL) {
        r = dt == CT_BOOL ? (alpha_zero ? MUL(r, Py_False) : r) : MUL(r, a[3]);
    }
    PyObject *in = METH(self, "expand", "(LL)", (long long)v1->sizes[0], (long long)v2->sizes[0]);
    if (!beta_zero) {
        PyObject *scaled = a[2] == NULL || dt == CT_BOOL ? in : MUL(in, a[2]);
        r = dt == CT_BOOL ? FN("logical_or", "(OO)", scaled, r) : ADD(scaled, r);
    }
    if (r != NULL && CT_TENSOR(r)->dtype != dt) {
        r = METH(r, "to", "(O)", dtype_obj);
    }
    return finish(arena, r, a[4], "addr");
}

/* ============================================================================================
 * multi_dot, chain_matmul, matrix_power, diagonal
 * ============================================================================================ */

/* The product of mats[i..j] in the order split[] (n x n) gives: a new reference. */
static PyObject *chain_product(PyObject *const *mats, const int *split, int n, int i, int j)
{
    if (i == j) {
        return Py_NewRef(mats[i]);
    }
    int k = split[i * n + j];
    PyObject *l = chain_product(mats, split, n, i, k);
    PyObject *r = l ? chain_product(mats, split, n, k + 1, j) : NULL;
    PyObject *p = NULL;
    if (r != NULL) {
        PyObject *operands[2] = {l, r};
        p = ct_op("mm", operands, 2, NULL);
    }
    Py_XDECREF(l);
    Py_XDECREF(r);
    return p;
}

/* linalg.multi_dot of the tensors in seq (a tuple): the first may be 1-d (a row), the last 1-d
 * (a column), the rest 2-d; the products run in the order of fewest multiplications (the
 * matrix-chain dynamic programme). A new reference. */
static PyObject *multi_dot_impl(PyObject *seq, const char *fname)
{
    int n = (int)PyTuple_GET_SIZE(seq);
    if (n < 2) {
        PyErr_Format(PyExc_RuntimeError, "%s(): expected at least 2 tensors but got %d", fname, n);
        return NULL;
    }
    CtTensorObject *first = CT_TENSOR(PyTuple_GET_ITEM(seq, 0)), *last = CT_TENSOR(PyTuple_GET_ITEM(seq, n - 1));
    if (first->ndim != 1 && first->ndim != 2) {
        PyErr_Format(PyExc_RuntimeError, "%s(): the first tensor must be 1D or 2D but got %dD", fname, first->ndim);
        return NULL;
    }
    if (last->ndim != 1 && last->ndim != 2) {
        PyErr_Format(PyExc_RuntimeError, "%s(): the last tensor must be 1D or 2D but got %dD", fname, last->ndim);
        return NULL;
    }
    PyObject **mats = NULL, *result = NULL;
    int64_t *dims = NULL, *cost = NULL;
    int *split = NULL;
    CtDevice device;
    for (int i = 0; i < n; i++) {
        CtTensorObject *t = CT_TENSOR(PyTuple_GET_ITEM(seq, i));
        if (i > 0 && i < n - 1 && t->ndim != 2) {
            PyErr_Format(PyExc_RuntimeError, "%s(): tensor %d must be 2D but got %dD", fname, i, t->ndim);
            return NULL;
        }
        if (t->dtype != first->dtype) {
            PyErr_Format(PyExc_RuntimeError,
                         "%s(): all tensors must have be the same dtype but tensor 0 is %s and tensor %d %s", fname,
                         ct_cpp_type_name(first->dtype), i, ct_cpp_type_name(t->dtype));
            return NULL;
        }
    }
    mats = PyMem_Calloc((size_t)n, sizeof *mats);
    dims = PyMem_Calloc((size_t)n + 1, sizeof *dims);
    cost = PyMem_Calloc((size_t)n * n, sizeof *cost);
    split = PyMem_Calloc((size_t)n * n, sizeof *split);
    if (mats == NULL || dims == NULL || cost == NULL || split == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (int i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(seq, i);
        CtTensorObject *t = CT_TENSOR(item);
        if (t->ndim == 1) { /* first: a (1, k) row; last: a (k, 1) column */
            mats[i] = PyObject_CallMethod(item, "unsqueeze", "i", i == 0 ? 0 : 1);
        } else {
            mats[i] = Py_NewRef(item);
        }
        if (mats[i] == NULL) {
            goto done;
        }
    }
    for (int i = 1; i < n; i++) {
        CtTensorObject *pair[2] = {CT_TENSOR(mats[0]), CT_TENSOR(mats[i])};
        if (ct_check_same_device(2, pair, false, &device) < 0) {
            goto done;
        }
    }
    dims[0] = CT_TENSOR(mats[0])->sizes[0];
    for (int i = 0; i < n; i++) {
        CtTensorObject *t = CT_TENSOR(mats[i]);
        if (t->sizes[0] != dims[i]) {
            char sa[256], sb[256];
            CtTensorObject *p = CT_TENSOR(mats[i - 1]);
            ct_format_sizes(sa, sizeof sa, p->ndim, p->sizes);
            ct_format_sizes(sb, sizeof sb, t->ndim, t->sizes);
            PyErr_Format(PyExc_RuntimeError, "%s(): tensors %d and %d with shapes %s and %s cannot be multiplied",
                         fname, i - 1, i, sa, sb);
            goto done;
        }
        dims[i + 1] = t->sizes[1];
    }
    for (int len = 1; len < n; len++) { /* cost[i][j]: fewest multiplications for mats[i..j] */
        for (int i = 0; i + len < n; i++) {
            int j = i + len;
            cost[i * n + j] = INT64_MAX;
            for (int k = i; k < j; k++) {
                int64_t c = cost[i * n + k] + cost[(k + 1) * n + j] + dims[i] * dims[k + 1] * dims[j + 1];
                if (c < cost[i * n + j]) {
                    cost[i * n + j] = c;
                    split[i * n + j] = k;
                }
            }
        }
    }
    result = chain_product(mats, split, n, 0, n - 1);
    if (result != NULL) { /* as PyTorch, a view to the result's shape ends it (ViewBackward0) */
        int64_t shape[2];
        int nd = 0;
        if (first->ndim == 2) {
            shape[nd++] = dims[0];
        }
        if (last->ndim == 2) {
            shape[nd++] = dims[n];
        }
        PyObject *size = ct_size_object(nd, shape);
        Py_SETREF(result, size ? PyObject_CallMethod(result, "view", "O", size) : NULL);
        Py_XDECREF(size);
    }
done:
    for (int i = 0; mats != NULL && i < n; i++) {
        Py_XDECREF(mats[i]);
    }
    PyMem_Free(mats);
    PyMem_Free(dims);
    PyMem_Free(cost);
    PyMem_Free(split);
    return result;
}

/* The tensors of f([t1, t2, ...]) or f(t1, t2, ...): a new tuple, or NULL with a TypeError. */
static PyObject *tensor_tuple(PyObject *obj, const char *fname)
{
    PyObject *seq = PySequence_Check(obj) && !CtTensor_Check(obj) ? PySequence_Tuple(obj) : NULL;
    if (seq == NULL) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s(): argument 'tensors' must be tuple of Tensors, not %s", fname,
                     ct_type_name(obj));
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(seq); i++) {
        if (!CtTensor_Check(PyTuple_GET_ITEM(seq, i))) {
            PyErr_Format(PyExc_TypeError, "expected Tensor as element %zd in argument 0, but got %s", i,
                         ct_type_name(PyTuple_GET_ITEM(seq, i)));
            Py_DECREF(seq);
            return NULL;
        }
    }
    return seq;
}

PyDoc_STRVAR(linalg_multi_dot_doc, "_linalg_multi_dot(tensors, *, out=None)\n\n"
                                   "torch.linalg.multi_dot: the chained product in the cheapest order.");
static PyObject *py_linalg_multi_dot(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"tensors", "*out", NULL};
    PyObject *a[2];
    if (ct_parse_args("linalg_multi_dot", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    PyObject *seq = tensor_tuple(a[0], "linalg_multi_dot");
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = seq ? KEEP(multi_dot_impl(seq, "multi_dot")) : NULL;
    Py_XDECREF(seq);
    return finish(arena, r, a[1], "linalg_multi_dot");
}

PyDoc_STRVAR(chain_matmul_doc, "chain_matmul(*matrices, out=None)\n\n"
                               "Deprecated torch.chain_matmul: linalg.multi_dot of 2-d matrices.");
static PyObject *py_chain_matmul(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static bool warned = false;
    PyObject *out = NULL;
    for (Py_ssize_t k = 0; kwnames != NULL && k < PyTuple_GET_SIZE(kwnames); k++) {
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), "out") != 0) {
            PyErr_Format(PyExc_TypeError, "chain_matmul() got an unexpected keyword argument '%U'",
                         PyTuple_GET_ITEM(kwnames, k));
            return NULL;
        }
        out = args[nargs + k];
    }
    if (!warned) {
        warned = true;
        if (PyErr_WarnEx(PyExc_UserWarning,
                         "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                         "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                         "multiple parameters.",
                         1) < 0) {
            return NULL;
        }
    }
    if (nargs == 0) {
        PyErr_SetString(PyExc_RuntimeError, "chain_matmul(): Expected one or more matrices");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        CtTensorObject *t = tensor_param(args[i], "chain_matmul", "matrices");
        if (t == NULL) {
            return NULL;
        }
        if (t->ndim != 2) {
            PyErr_Format(PyExc_RuntimeError, "Tensor dimension is %d, expected 2 instead.", t->ndim);
            return NULL;
        }
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r;
    if (nargs == 1) {
        r = args[0];
    } else {
        PyObject *seq = PyTuple_New(nargs);
        for (Py_ssize_t i = 0; seq != NULL && i < nargs; i++) {
            PyTuple_SET_ITEM(seq, i, Py_NewRef(args[i]));
        }
        r = seq ? KEEP(multi_dot_impl(seq, "multi_dot")) : NULL;
        Py_XDECREF(seq);
    }
    return finish(arena, r, out, "chain_matmul");
}

/* A^n by repeated squaring (n >= 1): a new reference. */
static PyObject *matrix_power_positive(PyObject *A, int64_t n)
{
    PyObject *square = Py_NewRef(A), *result = NULL;
    while (square != NULL) {
        if (n & 1) {
            PyObject *p = result == NULL ? Py_NewRef(square) : PyNumber_MatrixMultiply(result, square);
            Py_XSETREF(result, p);
            if (p == NULL) {
                break;
            }
        }
        n >>= 1;
        if (n == 0) {
            break;
        }
        Py_SETREF(square, PyNumber_MatrixMultiply(square, square));
    }
    if (square == NULL) {
        Py_CLEAR(result);
    }
    Py_XDECREF(square);
    return result;
}

PyDoc_STRVAR(linalg_matrix_power_doc, "_linalg_matrix_power(A, n, *, out=None)\n\n"
                                      "torch.linalg.matrix_power: A (batches of square matrices) to the integer "
                                      "power n; n == 0 gives identities, n < 0 powers of linalg.inv(A).");
static PyObject *py_linalg_matrix_power(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "n", "*out", NULL};
    PyObject *a[3];
    CtTensorObject *A;
    int64_t n;
    if (ct_parse_args("linalg_matrix_power", args, nargs, kwnames, names, 2, a) < 0 ||
        (A = tensor_param(a[0], "linalg_matrix_power", "A")) == NULL) {
        return NULL;
    }
    if (PyBool_Check(a[1]) || PyFloat_Check(a[1]) || CtTensor_Check(a[1]) || !PyIndex_Check(a[1])) {
        PyErr_Format(PyExc_TypeError, "linalg_matrix_power(): argument 'n' (position 2) must be int, not %s",
                     ct_type_name(a[1]));
        return NULL;
    }
    if (ct_arg_int64(a[1], &n) < 0) {
        return NULL;
    }
    if (A->ndim < 2 || A->sizes[A->ndim - 1] != A->sizes[A->ndim - 2]) {
        PyErr_Format(PyExc_RuntimeError,
                     "linalg.matrix_power: A must be batches of square matrices, but they are %lld by %lld matrices",
                     A->ndim < 2 ? 1LL : (long long)A->sizes[A->ndim - 2], (long long)A->sizes[A->ndim - 1]);
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *base = n < 0 ? FN("_linalg_inv", "(O)", a[0]) : a[0]; /* A^-n = (A^-1)^n */
    if (base == NULL) {
        arena_free(arena);
        return NULL;
    }
    PyObject *r;
    if (n == 0) {
        /* identities; where() keeps A in the graph, so its gradient is zeros as PyTorch's */
        PyObject *eye = FN("zeros_like", "(O)", a[0]);
        PyObject *diag = METH(eye, "diagonal", "(iii)", 0, -2, -1);
        r = METH(diag, "fill_", "(i)", 1) ? WHERE(CMP(eye, eye, Py_EQ), eye, a[0]) : NULL;
    } else if (n == 1) {
        r = METH(a[0], "clone", NULL);
    } else if (n == -1) {
        r = base;
    } else {
        r = KEEP(matrix_power_positive(base, n < 0 ? -n : n));
    }
    return finish(arena, r, a[2], "linalg_matrix_power");
}

PyDoc_STRVAR(linalg_diagonal_doc, "_linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1)\n\n"
                                  "torch.linalg.diagonal: A.diagonal(offset, dim1, dim2), a view.");
static PyObject *py_linalg_diagonal(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "*offset", "*dim1", "*dim2", NULL};
    PyObject *a[4];
    int64_t offset = 0, dim1 = -2, dim2 = -1;
    if (ct_parse_args("linalg_diagonal", args, nargs, kwnames, names, 1, a) < 0 ||
        tensor_param(a[0], "linalg_diagonal", "A") == NULL || ct_arg_int64(a[1], &offset) < 0 ||
        ct_arg_int64(a[2], &dim1) < 0 || ct_arg_int64(a[3], &dim2) < 0) {
        return NULL;
    }
    return PyObject_CallMethod(a[0], "diagonal", "LLL", (long long)offset, (long long)dim1, (long long)dim2);
}

/* ============================================================================================
 * renorm
 * ============================================================================================ */

/* torch.renorm: each slice along dim whose p-norm exceeds maxnorm is scaled to norm maxnorm
 * (by maxnorm / (norm + 1e-7), as PyTorch). A new reference. */
static PyObject *renorm_impl(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                             const char *fname, PyObject **out)
{
    static const char *const names[] = {"p", "dim", "maxnorm", "*out", NULL};
    PyObject *a[4];
    CtTensorObject *t = CT_TENSOR(self);
    double p, maxnorm;
    int64_t dim;
    int wrapped;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 3, a) < 0 || number_param(a[0], fname, "p", 1, &p) < 0 ||
        ct_arg_int64(a[1], &dim) < 0 || number_param(a[2], fname, "maxnorm", 3, &maxnorm) < 0) {
        return NULL;
    }
    *out = a[3];
    if (p <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "renorm: non-positive-norm not supported");
        return NULL;
    }
    if (maxnorm < 0) {
        char buf[64];
        snprintf(buf, sizeof buf, "%g", maxnorm); /* PyErr_Format has no %g */
        PyErr_Format(PyExc_RuntimeError, "renorm: expected maxnorm to be >= 0 but got %s", buf);
        return NULL;
    }
    if (t->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "renorm: input needs at least 2 dimensions, got %d dimensions", t->ndim);
        return NULL;
    }
    if (ct_wrap_dim(dim, t->ndim, &wrapped) < 0) {
        return NULL;
    }
    PyObject *others = PyTuple_New(t->ndim - 1);
    for (int i = 0, k = 0; others != NULL && i < t->ndim; i++) {
        if (i != wrapped) {
            PyTuple_SET_ITEM(others, k++, PyLong_FromLong(i));
        }
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *norm = others ? KEEP(vector_norm_call(self, a[0], others, true, NULL, NULL)) : NULL;
    Py_XDECREF(others);
    PyObject *limit = NUM(maxnorm);
    PyObject *factor = WHERE(CMP(norm, limit, Py_GT), DIV(limit, ADD(norm, NUM(1e-7))), FN("ones_like", "(O)", norm));
    PyObject *r = MUL(self, factor);
    return finish(arena, r, NULL, fname);
}

static PyObject *tensor_renorm(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *out = NULL;
    PyObject *r = renorm_impl(self, args, nargs, kwnames, "renorm", &out);
    if (r == NULL || out == NULL || out == Py_None) {
        return r;
    }
    CtTensorObject *o;
    if (ct_arg_out(out, "renorm", &o) < 0) {
        Py_DECREF(r);
        return NULL;
    }
    return ct_write_out(CT_TENSOR(r), out, "renorm", CT_OUT_EXACT, 0, NULL);
}

static PyObject *tensor_renorm_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *out = NULL;
    PyObject *r = renorm_impl(self, args, nargs, kwnames, "renorm_", &out);
    if (r != NULL && out != NULL && out != Py_None) {
        Py_CLEAR(r);
        PyErr_SetString(PyExc_TypeError, "renorm_() got an unexpected keyword argument 'out'");
    }
    PyObject *done = r ? PyObject_CallMethod(self, "copy_", "O", r) : NULL;
    Py_XDECREF(r);
    return done;
}

/* ============================================================================================
 * LU: lu_factor, inv, solve, det, slogdet, logdet
 * ============================================================================================ */

#define CT_LU_CPU(NAME, T)                                                                                 \
    static void lu_factor_cpu_##NAME(T *A, int32_t *pivots, int32_t *info, int64_t n)                      \
    {                                                                                                      \
        *info = 0;                                                                                         \
        for (int64_t j = 0; j < n; j++) {                                                                  \
            int64_t p = ct_lu_pivot_##NAME(A, n, j);                                                       \
            pivots[j] = (int32_t)(p + 1);                                                                  \
            if (A[p * n + j] == 0 && *info == 0) {                                                         \
                *info = (int32_t)(j + 1);                                                                  \
            }                                                                                              \
            for (int64_t c = 0; p != j && c < n; c++) {                                                    \
                ct_lu_swap_##NAME(A, n, j, p, c);                                                          \
            }                                                                                              \
            for (int64_t i = j + 1; A[j * n + j] != 0 && i < n; i++) {                                     \
                ct_lu_eliminate_##NAME(A, n, j, i);                                                        \
            }                                                                                              \
        }                                                                                                  \
    }
CT_LU_TYPES(CT_LU_CPU)
#undef CT_LU_CPU

int ct_cpu_lu_factor(CtDevice device, CtDType dtype, void *A, int32_t *pivots, int32_t *info, int64_t n, int64_t batch)
{
    (void)device;
    for (int64_t b = 0; b < batch; b++) {
        if (dtype == CT_F32) {
            lu_factor_cpu_F32((float *)A + b * n * n, pivots + b * n, info + b, n);
        } else {
            lu_factor_cpu_F64((double *)A + b * n * n, pivots + b * n, info + b, n);
        }
    }
    return 0;
}

int ct_cpu_lu_solve(CtDevice device, CtDType dtype, const void *LU, const int32_t *pivots, void *B, int64_t n,
                    int64_t k, int64_t batch)
{
    (void)device;
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t c = 0; c < k; c++) {
            if (dtype == CT_F32) {
                ct_lu_solve_column_F32((const float *)LU + b * n * n, pivots + b * n, (float *)B + b * n * k, n, k, c);
            } else {
                ct_lu_solve_column_F64((const double *)LU + b * n * n, pivots + b * n, (double *)B + b * n * k, n, k,
                                       c);
            }
        }
    }
    return 0;
}

/* torch.linalg.LinAlgError (a RuntimeError), created with the module's functions on first use. */
static PyObject *linalg_error(void)
{
    static PyObject *type = NULL;
    if (type == NULL) {
        type = PyErr_NewExceptionWithDoc("torch._C._LinAlgError",
                                         "Error raised by torch.linalg functions for ill-conditioned inputs",
                                         PyExc_RuntimeError, NULL);
    }
    return type;
}

static PyObject *py_linalg_error_type(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *type = linalg_error();
    return type ? Py_NewRef(type) : NULL;
}

/* A (..., n, n), float32/float64, with PyTorch's messages for fname ("linalg.inv"). 0 or -1. */
static int check_square_float(const CtTensorObject *A, const char *fname)
{
    if (A->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "%s: The input tensor A must have at least 2 dimensions.", fname);
        return -1;
    }
    if (require_floating(A, fname) < 0) {
        return -1;
    }
    if (A->dtype != CT_F32 && A->dtype != CT_F64) {
        PyErr_Format(PyExc_NotImplementedError, "%s: Low precision dtypes not supported. Got %s", fname,
                     ct_scalar_type_name(A->dtype));
        return -1;
    }
    if (A->sizes[A->ndim - 1] != A->sizes[A->ndim - 2]) {
        PyErr_Format(PyExc_RuntimeError, "%s: A must be batches of square matrices, but they are %lld by %lld matrices",
                     fname, (long long)A->sizes[A->ndim - 2], (long long)A->sizes[A->ndim - 1]);
        return -1;
    }
    return 0;
}

/* The LU factors of A (checked square): *lu a contiguous copy overwritten with L\U, *pivots int32
 * (..., n); *singular the first batch element with a zero pivot (or -1) and *zero its 1-based
 * pivot index; *info_out (when not NULL) the per-matrix info, int32 (...) on A's device. 0 or -1
 * (nothing owned left on failure). */
static int lu_run(CtTensorObject *A, CtTensorObject **lu, CtTensorObject **pivots, int64_t *singular, int32_t *zero,
                  CtTensorObject **info_out)
{
    CtDevice dev = ct_device_of(A);
    CtDevice cpu = {CT_DEV_CPU, -1};
    int64_t n = A->sizes[A->ndim - 1], batch = ct_numel(A) / (n > 0 ? n * n : 1);
    const CtDeviceOps *ops = ct_device_ops(dev);
    CtTensorObject *info = NULL, *host = NULL;
    *lu = NULL, *pivots = NULL, *singular = -1, *zero = 0;
    if (ops == NULL) {
        return -1;
    }
    if (ops->blas == NULL || ops->blas->lu_factor == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "LU factorization is not implemented on this device");
        return -1;
    }
    if (n == 0) {
        batch = 1;
        for (int i = 0; i < A->ndim - 2; i++) {
            batch *= A->sizes[i];
        }
    }
    if ((*lu = ct_to(A, A->dtype, dev, true)) == NULL ||
        (*pivots = ct_empty(A->ndim - 1, A->sizes, CT_I32, dev)) == NULL ||
        (info = ct_zeros(A->ndim - 2, A->sizes, CT_I32, dev)) == NULL) {
        goto error;
    }
    if (n > 0 && batch > 0) {
        if (ops->blas->lu_factor(dev, A->dtype, ct_data(*lu), (int32_t *)ct_data(*pivots), (int32_t *)ct_data(info), n,
                                 batch) < 0 ||
            (host = ct_to(info, CT_I32, cpu, false)) == NULL) {
            goto error;
        }
        const int32_t *flags = (const int32_t *)ct_data(host);
        for (int64_t b = 0; b < batch; b++) {
            if (flags[b] > 0) {
                *singular = b;
                *zero = flags[b];
                break;
            }
        }
    }
    Py_XDECREF(host);
    if (info_out != NULL) {
        *info_out = info;
    } else {
        Py_DECREF(info);
    }
    return 0;
error:
    Py_XDECREF(host);
    Py_XDECREF(info);
    Py_CLEAR(*lu);
    Py_CLEAR(*pivots);
    return -1;
}

/* LinAlgError for a singular batch element: "<fname>: (Batch element 1): <what>" (no batch part
 * for a lone matrix). Always -1. */
static int raise_singular(const CtTensorObject *A, int64_t b, const char *fname, const char *what)
{
    PyObject *type = linalg_error();
    if (type == NULL) {
        return -1;
    }
    if (A->ndim > 2) {
        PyErr_Format(type, "%s: (Batch element %lld): %s", fname, (long long)b, what);
    } else {
        PyErr_Format(type, "%s: %s", fname, what);
    }
    return -1;
}

/* B (dense contiguous (batch, n, k), overwritten) = A^-1 B from the factors. */
static int lu_solve_into(CtTensorObject *lu, CtTensorObject *pivots, CtTensorObject *B, int64_t k)
{
    int64_t n = lu->sizes[lu->ndim - 1];
    int64_t batch = n > 0 ? ct_numel(lu) / (n * n) : 0;
    const CtDeviceOps *ops = ct_device_ops(ct_device_of(lu));
    if (ops == NULL) {
        return -1;
    }
    return n == 0 || batch == 0 ? 0
                                : ops->blas->lu_solve(ct_device_of(lu), lu->dtype, ct_data(lu),
                                                      (const int32_t *)ct_data(pivots), ct_data(B), n, k, batch);
}

/* linalg.inv(A) / inv_ex: identities solved against A's factors. check: raise LinAlgError (naming
 * fname) for a singular matrix; otherwise its inverse is what the solve gives (inf / nan), as
 * LAPACK's. *info (when not NULL): the per-matrix info. A new reference. */
static PyObject *inv_impl(CtTensorObject *A, const char *fname, bool check, CtTensorObject **info)
{
    CtTensorObject *lu = NULL, *pivots = NULL, *eye = NULL, *X = NULL;
    int64_t singular;
    int32_t zero;
    if (check_square_float(A, "linalg.inv") < 0 || lu_run(A, &lu, &pivots, &singular, &zero, info) < 0) {
        return NULL;
    }
    int64_t n = A->sizes[A->ndim - 1];
    char what[160];
    if (check && singular >= 0) {
        snprintf(what, sizeof what,
                 "The diagonal element %d is zero, the inversion could not be completed because the input matrix is "
                 "singular.",
                 (int)zero);
        raise_singular(A, singular, fname, what);
        goto done;
    }
    if ((eye = ct_eye(n, n, A->dtype, ct_device_of(A))) == NULL || (X = ct_empty(A->ndim, A->sizes, A->dtype,
                                                                                 ct_device_of(A))) == NULL ||
        ct_copy_(X, eye) < 0 || lu_solve_into(lu, pivots, X, n) < 0) {
        Py_CLEAR(X);
    }
done:
    if (X == NULL && info != NULL) {
        Py_CLEAR(*info);
    }
    Py_XDECREF(lu);
    Py_XDECREF(pivots);
    Py_XDECREF(eye);
    return (PyObject *)X;
}

PyDoc_STRVAR(linalg_inv_doc, "_linalg_inv(A, *, out=None)\n\ntorch.linalg.inv: the inverse of each square matrix "
                             "(LU with partial pivoting); LinAlgError for a singular one.");
static PyObject *py_linalg_inv(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "*out", NULL};
    PyObject *a[2];
    CtTensorObject *A;
    if (ct_parse_args("linalg_inv", args, nargs, kwnames, names, 1, a) < 0 ||
        (A = tensor_param(a[0], "linalg_inv", "A")) == NULL) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    return finish(arena, KEEP(inv_impl(A, "linalg.inv", true, NULL)), a[1], "linalg_inv");
}

static PyObject *py_inverse(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return py_linalg_inv(mod, args, nargs, kwnames);
}

/* linalg.solve(A, B): B is a batch of vectors when 1-d or shaped as A's batch of columns
 * (A.shape[:-1]); batch dims broadcast. check / info as inv_impl's (info over the broadcast batch).
 * A new reference. */
static PyObject *solve_impl(CtTensorObject *A, CtTensorObject *B, const char *fname, bool check,
                            CtTensorObject **info)
{
    if (check_square_float(A, "linalg.solve") < 0) {
        return NULL;
    }
    if (A->dtype != B->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "linalg.solve: Expected A and B to have the same dtype, but found A of type %s and B of type %s "
                     "instead",
                     ct_scalar_type_name(A->dtype), ct_scalar_type_name(B->dtype));
        return NULL;
    }
    int64_t n = A->sizes[A->ndim - 1];
    bool vector =
        B->ndim == 1 || (B->ndim == A->ndim - 1 && memcmp(B->sizes, A->sizes, sizeof(int64_t) * B->ndim) == 0);
    int64_t k = vector ? 1 : (B->ndim >= 1 ? B->sizes[B->ndim - 1] : 0);
    int64_t rows = vector ? B->sizes[B->ndim - 1] : (B->ndim >= 2 ? B->sizes[B->ndim - 2] : -1);
    if (rows != n) {
        PyErr_Format(PyExc_RuntimeError,
                     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (%lldx%lld and %lldx%lld)",
                     (long long)n, (long long)n, (long long)(vector ? B->sizes[B->ndim - 1] : rows), (long long)k);
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *b = vector ? METH((PyObject *)B, "unsqueeze", "(i)", -1) : (PyObject *)B;
    /* broadcast the batch dims: A (..., n, n), b (..., n, k) */
    PyObject *shapes = b ? FN("broadcast_shapes", "(OO)", METH(ATTR((PyObject *)A, "shape"), "__getitem__", "(O)",
                                                                KEEP(PySlice_New(NULL, INT(-2), NULL))),
                             METH(ATTR(b, "shape"), "__getitem__", "(O)", KEEP(PySlice_New(NULL, INT(-2), NULL))))
                         : NULL;
    PyObject *full_a = shapes ? ADD(shapes, KEEP(Py_BuildValue("(LL)", (long long)n, (long long)n))) : NULL;
    PyObject *full_b = shapes ? ADD(shapes, KEEP(Py_BuildValue("(LL)", (long long)n, (long long)k))) : NULL;
    PyObject *Ae = METH((PyObject *)A, "expand", "(O)", full_a);
    /* a fresh dense copy, written in place (never b's own memory) */
    PyObject *X = METH(METH(b, "expand", "(O)", full_b), "clone", "()");
    X = X ? METH(X, "contiguous", NULL) : NULL;
    CtTensorObject *lu = NULL, *pivots = NULL;
    int64_t singular = -1;
    int32_t zero;
    PyObject *r = NULL;
    if (Ae != NULL && X != NULL && lu_run(CT_TENSOR(Ae), &lu, &pivots, &singular, &zero, info) == 0) {
        if (check && singular >= 0) {
            raise_singular(CT_TENSOR(Ae), singular, fname, "The solver failed because the input matrix is singular.");
        } else if (lu_solve_into(lu, pivots, CT_TENSOR(X), k) == 0) {
            r = vector ? METH(X, "squeeze", "(i)", -1) : X;
        }
    }
    Py_XDECREF(lu);
    Py_XDECREF(pivots);
    PyObject *owned = r ? TAKE(r) : NULL;
    arena_free(arena);
    if (owned == NULL && info != NULL) {
        Py_CLEAR(*info);
    }
    return owned;
}

/* solve_impl for left=True; X A = B (B (..., k, n), never a vector) as (A^T X^T = B^T)^T. */
static PyObject *solve_sided(CtTensorObject *A, CtTensorObject *B, bool left, const char *fname, bool check,
                             CtTensorObject **info)
{
    if (left) {
        return solve_impl(A, B, fname, check, info);
    }
    if (check_square_float(A, "linalg.solve") < 0) {
        return NULL;
    }
    int64_t n = A->sizes[A->ndim - 1];
    bool vector =
        B->ndim == 1 || (B->ndim == A->ndim - 1 && memcmp(B->sizes, A->sizes, sizeof(int64_t) * B->ndim) == 0);
    if (vector || B->sizes[B->ndim - 1] != n) {
        PyErr_Format(PyExc_RuntimeError,
                     "linalg.solve: Incompatible shapes of A and B for the equation XA = B (%lldx%lld and %lldx%lld)",
                     (long long)n, (long long)n, (long long)(vector ? B->sizes[B->ndim - 1] : B->sizes[B->ndim - 2]),
                     (long long)(vector ? 1 : B->sizes[B->ndim - 1]));
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *At = METH((PyObject *)A, "transpose", "(ii)", -2, -1);
    PyObject *Bt = METH((PyObject *)B, "transpose", "(ii)", -2, -1);
    PyObject *Xt = At && Bt ? KEEP(solve_impl(CT_TENSOR(At), CT_TENSOR(Bt), fname, check, info)) : NULL;
    PyObject *r = TAKE(METH(Xt, "transpose", "(ii)", -2, -1));
    arena_free(arena);
    if (r == NULL && info != NULL) {
        Py_CLEAR(*info);
    }
    return r;
}

PyDoc_STRVAR(linalg_solve_doc, "_linalg_solve(A, B, *, left=True, out=None)\n\ntorch.linalg.solve: X with A X = B "
                               "(left=False: X A = B; B a batch of vectors or of matrices), batch dims broadcast.");
static PyObject *py_linalg_solve(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "B", "*left", "*out", NULL};
    PyObject *a[4];
    CtTensorObject *A, *B;
    bool left = true;
    if (ct_parse_args("linalg_solve", args, nargs, kwnames, names, 2, a) < 0 ||
        (A = tensor_param(a[0], "linalg_solve", "A")) == NULL ||
        (B = tensor_param(a[1], "linalg_solve", "B")) == NULL || ct_arg_bool(a[2], &left) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    return finish(arena, KEEP(solve_sided(A, B, left, "torch.linalg.solve", true, NULL)), a[3], "linalg_solve");
}

/* (value, info) pairs of inv_ex / solve_ex as torch.return_types.<name>, handed to out=(v, info). */
static PyObject *ex_result(PyTypeObject **type, const char *name, const char *first, PyObject *value,
                           CtTensorObject *info, PyObject *out_obj, const char *fname)
{
    if (value == NULL) {
        return NULL;
    }
    PyObject *items[2] = {value, (PyObject *)info};
    static const char *const second = "info";
    const char *fields[2] = {first, second};
    PyObject *r = ct_linalg_named_result(type, name, fields, 2, items);
    return ct_linalg_write_outs(r, out_obj, fname, 2);
}

PyDoc_STRVAR(linalg_inv_ex_doc, "_linalg_inv_ex(A, *, check_errors=False, out=None)\n\ntorch.linalg.inv_ex: "
                                "(inverse, info), info the 1-based index of each matrix's first zero pivot or 0.");
static PyObject *py_linalg_inv_ex(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "*check_errors", "*out", NULL};
    static PyTypeObject *type = NULL;
    PyObject *a[3];
    CtTensorObject *A, *info = NULL;
    bool check = false;
    if (ct_parse_args("linalg_inv_ex", args, nargs, kwnames, names, 1, a) < 0 ||
        (A = tensor_param(a[0], "linalg_inv_ex", "A")) == NULL || ct_arg_bool(a[1], &check) < 0) {
        return NULL;
    }
    PyObject *X = inv_impl(A, "linalg.inv_ex", check, &info);
    return ex_result(&type, "torch.return_types.linalg_inv_ex", "inverse", X, info, a[2], "linalg_inv_ex");
}

PyDoc_STRVAR(linalg_solve_ex_doc, "_linalg_solve_ex(A, B, *, left=True, check_errors=False, out=None)\n\n"
                                  "torch.linalg.solve_ex: (result, info) of linalg.solve without raising.");
static PyObject *py_linalg_solve_ex(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "B", "*left", "*check_errors", "*out", NULL};
    static PyTypeObject *type = NULL;
    PyObject *a[5];
    CtTensorObject *A, *B, *info = NULL;
    bool left = true, check = false;
    if (ct_parse_args("linalg_solve_ex", args, nargs, kwnames, names, 2, a) < 0 ||
        (A = tensor_param(a[0], "linalg_solve_ex", "A")) == NULL ||
        (B = tensor_param(a[1], "linalg_solve_ex", "B")) == NULL || ct_arg_bool(a[2], &left) < 0 ||
        ct_arg_bool(a[3], &check) < 0) {
        return NULL;
    }
    PyObject *X = solve_sided(A, B, left, "torch.linalg.solve_ex", check, &info);
    return ex_result(&type, "torch.return_types.linalg_solve_ex", "result", X, info, a[4], "linalg_solve_ex");
}

/* det and slogdet from the factors: U's diagonal and the row swaps' sign (counted on the host,
 * which the singularity check already waits for). det: *value = det (sign NULL); slogdet: *sign
 * and *value = log|det|. New references; 0 or -1. */
static int det_parts(CtTensorObject *A, const char *fname, bool logabs, PyObject **sign, PyObject **value)
{
    CtTensorObject *lu = NULL, *pivots = NULL, *host = NULL, *swaps = NULL;
    CtDevice cpu = {CT_DEV_CPU, -1};
    int64_t singular;
    int32_t zero;
    *sign = *value = NULL;
    if (check_square_float(A, fname) < 0 || lu_run(A, &lu, &pivots, &singular, &zero, NULL) < 0) {
        return -1;
    }
    int64_t n = A->sizes[A->ndim - 1], batch = 1;
    for (int i = 0; i < A->ndim - 2; i++) {
        batch *= A->sizes[i];
    }
    CtArena scratch = {0}, *arena = &scratch;
    if ((host = ct_to(pivots, CT_I32, cpu, false)) != NULL &&
        (swaps = ct_empty(A->ndim - 2, A->sizes, CT_F64, cpu)) != NULL) {
        const int32_t *piv = (const int32_t *)ct_data(host);
        double *out = (double *)ct_data(swaps);
        for (int64_t b = 0; b < batch; b++) {
            double s = 1.0;
            for (int64_t j = 0; j < n; j++) {
                s = piv[b * n + j] != j + 1 ? -s : s;
            }
            out[b] = s;
        }
    }
    PyObject *perm = swaps ? KEEP((PyObject *)ct_to(swaps, A->dtype, ct_device_of(A), false)) : NULL;
    PyObject *diag = perm ? METH((PyObject *)lu, "diagonal", "(iii)", 0, -2, -1) : NULL;
    if (logabs) {
        *sign = TAKE(MUL(perm, METH(METH(diag, "sign", NULL), "prod", "(i)", -1)));
        *value = TAKE(METH(METH(METH(diag, "abs", NULL), "log", NULL), "sum", "(i)", -1));
    } else {
        *value = TAKE(MUL(perm, METH(diag, "prod", "(i)", -1)));
    }
    arena_free(arena);
    Py_XDECREF(host);
    Py_XDECREF(swaps);
    Py_DECREF(lu);
    Py_DECREF(pivots);
    if (*value == NULL || (logabs && *sign == NULL)) {
        Py_CLEAR(*sign);
        Py_CLEAR(*value);
        return -1;
    }
    return 0;
}

/* det(A) / linalg.det(A, *, out=None) */
static PyObject *det_call(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *fname,
                          const char *message_name)
{
    static const char *const names[] = {"A", "*out", NULL};
    PyObject *a[2], *sign, *value;
    CtTensorObject *A;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0 || (A = tensor_param(a[0], fname, "A")) == NULL ||
        det_parts(A, message_name, false, &sign, &value) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    return finish(arena, KEEP(value), a[1], fname);
}

PyDoc_STRVAR(linalg_det_doc, "_linalg_det(A, *, out=None)\n\ntorch.linalg.det: determinants from LU.");
static PyObject *py_linalg_det(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return det_call(args, nargs, kwnames, "linalg_det", "linalg.det");
}

static PyObject *py_det(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return det_call(args, nargs, kwnames, "det", "linalg.det");
}

/* A torch.return_types.<name> of n (<= 4) fields made on first use into *type; steals items. */
PyObject *ct_linalg_named_result(PyTypeObject **type, const char *name, const char *const *fields, int n,
                                 PyObject **items)
{
    if (*type == NULL) {
        PyStructSequence_Field f[5] = {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}, {NULL, NULL}, {NULL, NULL}};
        for (int i = 0; i < n; i++) {
            f[i].name = fields[i];
        }
        PyStructSequence_Desc desc = {name, NULL, f, n};
        *type = ct_return_type_new(&desc);
    }
    PyObject *r = *type ? PyStructSequence_New(*type) : NULL;
    for (int i = 0; i < n; i++) {
        if (r == NULL) {
            Py_XDECREF(items[i]);
        } else {
            PyStructSequence_SET_ITEM(r, i, items[i]);
        }
    }
    return r;
}

/* A tuple result of n tensors (stolen) handed to out=(t1, ..., tn) as PyTorch does, or returned
 * as is when out is absent. A new reference. */
PyObject *ct_linalg_write_outs(PyObject *result, PyObject *out_obj, const char *fname, int n)
{
    if (result == NULL || out_obj == NULL || out_obj == Py_None) {
        return result;
    }
    if (!(PyTuple_Check(out_obj) || PyList_Check(out_obj)) || PySequence_Fast_GET_SIZE(out_obj) != n) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'out' must be tuple of Tensors, not %s", fname,
                     ct_type_name(out_obj));
        Py_DECREF(result);
        return NULL;
    }
    PyObject *r = PyTuple_New(n);
    for (int i = 0; r != NULL && i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(out_obj, i), *w = NULL;
        CtTensorObject *t;
        if (ct_arg_out(o, fname, &t) == 0) {
            w = ct_write_out(CT_TENSOR(Py_NewRef(PyTuple_GET_ITEM(result, i))), o, fname, CT_OUT_EXACT, 0, NULL);
        }
        if (w == NULL) {
            Py_CLEAR(r);
        } else {
            PyTuple_SET_ITEM(r, i, w);
        }
    }
    Py_DECREF(result);
    return r;
}


PyDoc_STRVAR(linalg_slogdet_doc, "_linalg_slogdet(A)\n\ntorch.linalg.slogdet: (sign, logabsdet) of the "
                                 "determinants (sign 0 and logabsdet -inf for a singular matrix).");
static PyObject *py_linalg_slogdet(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", NULL};
    static PyTypeObject *type = NULL;
    PyObject *a[1], *sign, *value;
    CtTensorObject *A;
    if (ct_parse_args("linalg_slogdet", args, nargs, kwnames, names, 1, a) < 0 ||
        (A = tensor_param(a[0], "linalg_slogdet", "A")) == NULL ||
        det_parts(A, "linalg.slogdet", true, &sign, &value) < 0) {
        return NULL;
    }
    return ct_linalg_pair(&type, "torch.return_types.linalg_slogdet", "sign", "logabsdet", sign, value);
}

/* torch.logdet: log|det| where det > 0, NaN where it is negative, -inf where 0 (through the
 * recording slogdet, so its gradient is slogdet's). */
static PyObject *py_logdet(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", NULL};
    PyObject *a[1];
    if (ct_parse_args("logdet", args, nargs, kwnames, names, 1, a) < 0 ||
        tensor_param(a[0], "logdet", "input") == NULL) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *parts = FN("_linalg_slogdet", "(O)", a[0]);
    PyObject *sign = parts ? KEEP(PySequence_GetItem(parts, 0)) : NULL;
    PyObject *logabs = sign ? KEEP(PySequence_GetItem(parts, 1)) : NULL;
    PyObject *r = WHERE(CMP(sign, NUM(0.0), Py_LT), NUM(NAN), logabs);
    return finish(arena, r, NULL, "logdet");
}

/* The LU factors of an (..., m, n) A: square matrices directly; otherwise A padded with zeros to
 * (..., p, p), p = max(m, n) (the zero rows or columns change none of the first min(m, n) steps,
 * and the padded steps touch only padding), then cut back: *lu (..., m, n), *pivots (..., k) and
 * *info (...) with the padded steps' zero pivots dropped. *singular / *zero as lu_run's. */
static int lu_factor_rect(CtTensorObject *A, const char *fname, CtTensorObject **lu, CtTensorObject **pivots,
                          CtTensorObject **info, int64_t *singular, int32_t *zero)
{
    *lu = *pivots = *info = NULL;
    if (A->ndim < 2) {
        char shape[256];
        ct_format_sizes(shape, sizeof shape, A->ndim, A->sizes);
        PyErr_Format(PyExc_RuntimeError, "%s: Expected tensor with 2 or more dimensions. Got size: %s instead", fname,
                     shape);
        return -1;
    }
    if (ct_linalg_kernel_dtype(A, "lu") < 0) {
        return -1;
    }
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n, p = m < n ? n : m;
    if (m == n) {
        return lu_run(A, lu, pivots, singular, zero, info);
    }
    CtDevice dev = ct_device_of(A), cpu = {CT_DEV_CPU, -1};
    CtArena scratch = {0}, *arena = &scratch;
    int64_t shape[CT_MAX_DIMS];
    memcpy(shape, A->sizes, sizeof(int64_t) * (size_t)A->ndim);
    shape[A->ndim - 2] = shape[A->ndim - 1] = p;
    CtTensorObject *padded = (CtTensorObject *)KEEP((PyObject *)ct_zeros(A->ndim, shape, A->dtype, dev));
    PyObject *corner = METH(METH((PyObject *)padded, "narrow", "(iLL)", -2, 0LL, (long long)m), "narrow", "(iLL)", -1,
                            0LL, (long long)n);
    CtTensorObject *full_lu = NULL, *full_piv = NULL, *full_info = NULL, *host = NULL;
    int rc = -1;
    if (corner == NULL || ct_copy_(CT_TENSOR(corner), A) < 0 ||
        lu_run(padded, &full_lu, &full_piv, singular, zero, &full_info) < 0) {
        goto done;
    }
    PyObject *cut = METH(METH((PyObject *)full_lu, "narrow", "(iLL)", -2, 0LL, (long long)m), "narrow", "(iLL)", -1,
                         0LL, (long long)n);
    PyObject *piv = METH((PyObject *)full_piv, "narrow", "(iLL)", -1, 0LL, (long long)k);
    if (cut == NULL || piv == NULL || (*lu = ct_contiguous(CT_TENSOR(cut))) == NULL ||
        (*pivots = ct_contiguous(CT_TENSOR(piv))) == NULL || (host = ct_to(full_info, CT_I32, cpu, true)) == NULL) {
        goto done;
    }
    int32_t *flags = (int32_t *)ct_data(host);
    *singular = -1;
    for (int64_t b = 0; b < ct_numel(host); b++) {
        flags[b] = flags[b] > k ? 0 : flags[b];
        if (flags[b] > 0 && *singular < 0) {
            *singular = b;
            *zero = flags[b];
        }
    }
    rc = (*info = ct_to(host, CT_I32, dev, false)) == NULL ? -1 : 0;
done:
    if (rc < 0) {
        Py_CLEAR(*lu);
        Py_CLEAR(*pivots);
    }
    Py_XDECREF(full_lu);
    Py_XDECREF(full_piv);
    Py_XDECREF(full_info);
    Py_XDECREF(host);
    arena_free(arena);
    return rc;
}

/* lu_factor / lu_factor_ex's arguments and factors; check: LinAlgError (naming fname) for a zero
 * pivot. 0 or -1. */
static int lu_factor_call(const char *pyname, const char *fname, bool ex, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames, PyObject **a, CtTensorObject **lu, CtTensorObject **pivots,
                          CtTensorObject **info)
{
    static const char *const names[] = {"A", "*pivot", "*out", NULL};
    static const char *const names_ex[] = {"A", "*pivot", "*check_errors", "*out", NULL};
    CtTensorObject *A;
    bool pivot = true, check = !ex;
    int64_t singular;
    int32_t zero;
    if (ct_parse_args(pyname, args, nargs, kwnames, ex ? names_ex : names, 1, a) < 0 ||
        (A = tensor_param(a[0], pyname, "A")) == NULL || ct_arg_bool(a[1], &pivot) < 0 ||
        (ex && ct_arg_bool(a[2], &check) < 0)) {
        return -1;
    }
    if (!pivot) {
        PyErr_SetString(PyExc_RuntimeError, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
        return -1;
    }
    if (lu_factor_rect(A, "torch.lu_factor", lu, pivots, info, &singular, &zero) < 0) {
        return -1;
    }
    if (check && singular >= 0) {
        char what[256];
        snprintf(what, sizeof what,
                 "U[%d,%d] is zero and using it on lu_solve would result in a division by zero. If you still want to "
                 "perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)",
                 (int)zero, (int)zero);
        if (ex) {
            PyErr_Format(PyExc_RuntimeError, "%s: %s", fname, what);
        } else {
            raise_singular(A, singular, fname, what);
        }
        Py_CLEAR(*lu);
        Py_CLEAR(*pivots);
        Py_CLEAR(*info);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(linalg_lu_factor_doc, "_linalg_lu_factor(A, *, pivot=True, out=None)\n\ntorch.linalg.lu_factor: (LU, "
                                   "pivots) of (..., m, n) matrices, partial pivoting (pivots 1-based int32, "
                                   "LAPACK's).");
static PyObject *py_linalg_lu_factor(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static PyTypeObject *type = NULL;
    static const char *const fields[] = {"LU", "pivots"};
    PyObject *a[3];
    CtTensorObject *lu, *pivots, *info;
    if (lu_factor_call("linalg_lu_factor", "torch.linalg.lu_factor", false, args, nargs, kwnames, a, &lu, &pivots,
                       &info) < 0) {
        return NULL;
    }
    Py_DECREF(info);
    PyObject *items[2] = {(PyObject *)lu, (PyObject *)pivots};
    PyObject *r = ct_linalg_named_result(&type, "torch.return_types.linalg_lu_factor", fields, 2, items);
    return ct_linalg_write_outs(r, a[2], "linalg_lu_factor", 2);
}

PyDoc_STRVAR(linalg_lu_factor_ex_doc, "_linalg_lu_factor_ex(A, *, pivot=True, check_errors=False, out=None)\n\n"
                                      "torch.linalg.lu_factor_ex: (LU, pivots, info), info each matrix's first zero "
                                      "pivot (1-based) or 0.");
static PyObject *py_linalg_lu_factor_ex(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static PyTypeObject *type = NULL;
    static const char *const fields[] = {"LU", "pivots", "info"};
    PyObject *a[4];
    CtTensorObject *lu, *pivots, *info;
    if (lu_factor_call("linalg_lu_factor_ex", "torch.linalg.lu_factor_ex", true, args, nargs, kwnames, a, &lu,
                       &pivots, &info) < 0) {
        return NULL;
    }
    PyObject *items[3] = {(PyObject *)lu, (PyObject *)pivots, (PyObject *)info};
    PyObject *r = ct_linalg_named_result(&type, "torch.return_types.linalg_lu_factor_ex", fields, 3, items);
    return ct_linalg_write_outs(r, a[3], "linalg_lu_factor_ex", 3);
}

/* torch.lu(..., get_infos=True)'s result: (LU, pivots, info) as torch.return_types._lu_with_info. */
static PyObject *py_lu_with_info_result(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    static PyTypeObject *type = NULL;
    static const char *const fields[] = {"LU", "pivots", "info"};
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "_lu_with_info_result() takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *items[3] = {Py_NewRef(args[0]), Py_NewRef(args[1]), Py_NewRef(args[2])};
    return ct_linalg_named_result(&type, "torch.return_types._lu_with_info", fields, 3, items);
}

/* Tensor.inverse / det / logdet / slogdet: the functions with self first. */
#define CT_SELF_FIRST(name, fn)                                                                              \
    static PyObject *tensor_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                                        \
        return ct_function_as_method(#name, (fn), self, args, nargs, kwnames);                               \
    }
CT_SELF_FIRST(inverse, py_inverse)
CT_SELF_FIRST(det, py_det)
CT_SELF_FIRST(logdet, py_logdet)
CT_SELF_FIRST(slogdet, py_linalg_slogdet)
#undef CT_SELF_FIRST

/* --- backward formulas (rows in autograd_formulas.c; linalg.h) ------------------------------ */
/* inv: -A^-T g A^-T, from the saved output */
int ct_linalg_bw_inv(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *out = KEEP(ct_node_output_ref(n, 0));
    PyObject *t = out ? METH(out, "transpose", "(ii)", -2, -1) : NULL;
    PyObject *v = NEG(MATMUL(MATMUL(t, g[0]), t));
    gi[0] = v ? ct_fit_grad(v, &n->meta[0]) : NULL;
    arena_free(arena);
    return gi[0] == NULL ? -1 : 0;
}

/* det: g det A^-T; slogdet: g_logabsdet A^-T (the sign is not differentiable) */
int ct_linalg_bw_det(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *A = (PyObject *)ct_node_tensor(n, 0);
    PyObject *out = KEEP(ct_node_output_ref(n, 0));
    PyObject *inv_t = A ? METH(FN("_linalg_inv", "(O)", A), "transpose", "(ii)", -2, -1) : NULL;
    PyObject *scale = out ? MUL(g[0], out) : NULL;
    PyObject *v = MUL(METH(METH(scale, "unsqueeze", "(i)", -1), "unsqueeze", "(i)", -1), inv_t);
    gi[0] = v ? ct_fit_grad(v, &n->meta[0]) : NULL;
    arena_free(arena);
    return gi[0] == NULL ? -1 : 0;
}

int ct_linalg_bw_slogdet(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (g[1] == NULL) {
        return 0;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *A = (PyObject *)ct_node_tensor(n, 0);
    PyObject *inv_t = A ? METH(FN("_linalg_inv", "(O)", A), "transpose", "(ii)", -2, -1) : NULL;
    PyObject *v = MUL(METH(METH(g[1], "unsqueeze", "(i)", -1), "unsqueeze", "(i)", -1), inv_t);
    gi[0] = v ? ct_fit_grad(v, &n->meta[0]) : NULL;
    arena_free(arena);
    return gi[0] == NULL ? -1 : 0;
}

/* solve (and solve_ex): gB = solve(A^T, g), gA = -gB X^T (vectors: an outer product); left=False
 * (X A = B): gB = solve(A^T, g, left=False), gA = -X^T gB */
int ct_linalg_bw_solve(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *A = (PyObject *)ct_node_tensor(n, 0);
    PyObject *X = KEEP(ct_node_output_ref(n, 0));
    bool left = n->args[2] == NULL || n->args[2] == Py_None || PyObject_IsTrue(n->args[2]) == 1;
    PyObject *call[3] = {A ? METH(A, "transpose", "(ii)", -2, -1) : NULL, g[0], Py_False};
    PyObject *kw = left ? NULL : KEEP(Py_BuildValue("(s)", "left"));
    PyObject *gB = call[0] && (left || kw) ? KEEP(ct_op("_linalg_solve", call, 2, kw)) : NULL;
    bool vector = left && X != NULL && CT_TENSOR(X)->ndim == n->meta[1].ndim && n->meta[1].ndim < n->meta[0].ndim;
    if (n->meta[1].ndim == 1) {
        vector = true;
    }
    PyObject *gA = vector ? NEG(MUL(METH(gB, "unsqueeze", "(i)", -1), METH(X, "unsqueeze", "(i)", -2)))
                  : left  ? NEG(MATMUL(gB, METH(X, "transpose", "(ii)", -2, -1)))
                          : NEG(MATMUL(METH(X, "transpose", "(ii)", -2, -1), gB));
    int rc = -1;
    if (gA != NULL && gB != NULL) {
        gi[0] = (n->edge_nodes[0] != NULL) ? ct_fit_grad(gA, &n->meta[0]) : NULL;
        gi[1] = (n->edge_nodes[1] != NULL) ? ct_fit_grad(gB, &n->meta[1]) : NULL;
        rc = ((n->edge_nodes[0] != NULL) && gi[0] == NULL) || ((n->edge_nodes[1] != NULL) && gi[1] == NULL) ? -1 : 0;
    }
    arena_free(arena);
    return rc;
}

/* --- shared with linalg_decomp.c (linalg.h) ---------------------------------------------------- */
PyObject *ct_linalg_error(void) { return linalg_error(); }

int ct_linalg_raise_batch(const CtTensorObject *A, int64_t b, const char *fname, const char *what)
{
    return raise_singular(A, b, fname, what);
}

PyObject *ct_linalg_pair(PyTypeObject **type, const char *name, const char *first, const char *second, PyObject *a,
                         PyObject *b)
{
    const char *const fields[2] = {first, second};
    PyObject *items[2] = {a, b};
    return ct_linalg_named_result(type, name, fields, 2, items);
}

/* ============================================================================================
 * tables
 * ============================================================================================ */

CT_FUNCTION_FROM_METHOD(inner, tensor_inner)
CT_FUNCTION_FROM_METHOD(dist, tensor_dist)
CT_FUNCTION_FROM_METHOD(addr, tensor_addr)
CT_FUNCTION_FROM_METHOD(renorm, tensor_renorm)

#define CT_M(name, doc) {#name, CT_FASTCALL(tensor_##name), CT_METH_FK, doc}
PyMethodDef ct_linalg_more_tensor_methods[] = {
    CT_M(inner, "inner(other): products summed over the last dims"),
    CT_M(dist, "dist(other, p=2): the p-norm of self - other"),
    CT_M(addr, "addr(vec1, vec2, *, beta=1, alpha=1): beta * self + alpha * outer(vec1, vec2)"),
    CT_M(renorm, "renorm(p, dim, maxnorm): slices along dim scaled to p-norm at most maxnorm"),
    CT_M(renorm_, "renorm_(p, dim, maxnorm): in-place renorm"),
    CT_M(inverse, "inverse(): linalg.inv(self)"),
    CT_M(det, "det(): linalg.det(self)"),
    CT_M(logdet, "logdet(): log of the determinant (NaN where negative)"),
    CT_M(slogdet, "slogdet(): linalg.slogdet(self)"),
    {NULL},
};

#define CT_FN(name, doc) {#name, CT_FASTCALL(function_##name), CT_METH_FK, doc}
#define CT_LINALG(name) {"_linalg_" #name, CT_FASTCALL(py_linalg_##name), CT_METH_FK, linalg_##name##_doc}
PyMethodDef ct_linalg_more_module_methods[] = {
    CT_LINALG(vector_norm),
    CT_LINALG(matrix_norm),
    CT_LINALG(norm),
    CT_LINALG(vecdot),
    CT_LINALG(multi_dot),
    CT_LINALG(matrix_power),
    CT_LINALG(diagonal),
    CT_LINALG(lu_factor),
    CT_LINALG(lu_factor_ex),
    CT_LINALG(inv),
    CT_LINALG(inv_ex),
    CT_LINALG(solve),
    CT_LINALG(solve_ex),
    CT_LINALG(det),
    CT_LINALG(slogdet),
    {"inverse", CT_FASTCALL(py_inverse), CT_METH_FK, "inverse(input, *, out=None): linalg.inv"},
    {"det", CT_FASTCALL(py_det), CT_METH_FK, "det(input): linalg.det"},
    {"logdet", CT_FASTCALL(py_logdet), CT_METH_FK, "logdet(input): log of the determinant (NaN if negative)"},
    {"slogdet", CT_FASTCALL(py_linalg_slogdet), CT_METH_FK, "slogdet(input): linalg.slogdet"},
    {"_lu_with_info_result", CT_FASTCALL(py_lu_with_info_result), METH_FASTCALL,
     "_lu_with_info_result(LU, pivots, info): the three as torch.return_types._lu_with_info"},
    {"_LinAlgError_type", CT_FASTCALL(py_linalg_error_type), CT_METH_FK, "torch.linalg.LinAlgError"},
    {"chain_matmul", CT_FASTCALL(py_chain_matmul), CT_METH_FK, chain_matmul_doc},
    CT_FN(inner, "inner(input, other, *, out=None)"),
    CT_FN(dist, "dist(input, other, p=2)"),
    CT_FN(addr, "addr(input, vec1, vec2, *, beta=1, alpha=1, out=None)"),
    CT_FN(renorm, "renorm(input, p, dim, maxnorm, *, out=None)"),
    {NULL},
};

PyType_Slot ct_linalg_more_tensor_slots[] = {{0, NULL}};
