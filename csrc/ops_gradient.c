/* ops_gradient.c: torch.gradient(input, *, spacing=1, dim=None, edge_order=1) -> one tensor per dim,
 * NumPy's central differences inside and one-sided differences of first or second order at the two
 * ends, with uniform spacings (numbers) or coordinates (1-d tensors) along each dim.
 *
 * Composed of recording ops (narrow, arithmetic, cat) in PyTorch's order of operations, so it runs on
 * every device and autograd differentiates it (the result's node is CatBackward0, as PyTorch's). */
#include "args.h"
#include "autograd_arena.h"
#include "creation.h"
#include "registry.h"
#include "tensor.h"

/* x narrowed along dim to [start, start + length) (start < 0 counts from the end n). In the arena. */
#define PART(start, length) METH(x, "narrow", "(iLL)", dim, (long long)((start) < 0 ? n + (start) : (start)), \
                                 (long long)(length))

/* The gradient along dim with the uniform spacing h (a number or a 0-d tensor). In the arena. */
static PyObject *uniform_gradient(CtArena *arena, PyObject *x, int dim, int64_t n, PyObject *h, int edge_order)
{
    PyObject *center = DIV(DIV(SUB(PART(2, n - 2), PART(0, n - 2)), h), INT(2));
    PyObject *prepend, *append;
    if (edge_order == 1) {
        prepend = DIV(SUB(PART(1, 1), PART(0, 1)), h);
        append = DIV(SUB(PART(-1, 1), PART(-2, 1)), h);
    } else {
        prepend = DIV(SUB(ADD(MUL(PART(0, 1), NUM(-1.5)), MUL(PART(1, 1), INT(2))), MUL(PART(2, 1), NUM(0.5))), h);
        append = DIV(ADD(ADD(MUL(PART(-3, 1), NUM(0.5)), MUL(PART(-2, 1), INT(-2))), MUL(PART(-1, 1), NUM(1.5))), h);
    }
    return FN("cat", "((OOO)i)", prepend, center, append, dim);
}

/* The gradient along dim at the 1-d coordinates c (n values). In the arena. */
static PyObject *coordinate_gradient(CtArena *arena, PyObject *x, int dim, int64_t n, PyObject *c, int edge_order)
{
    int64_t shape[CT_MAX_DIMS];
    int nd = CT_TENSOR(x)->ndim;
    for (int i = 0; i < nd; i++) {
        shape[i] = i == dim ? -1 : 1;
    }
    PyObject *size = KEEP(ct_size_object(nd, shape));
    PyObject *dx = FN("diff", "(O)", c); /* (n - 1,) */
    PyObject *dx1 = METH(dx, "narrow", "(iiL)", 0, 0, (long long)(n - 2));
    PyObject *dx2 = METH(dx, "narrow", "(iiL)", 0, 1, (long long)(n - 2));
    PyObject *a = METH(DIV(NEG(dx2), MUL(dx1, ADD(dx1, dx2))), "reshape", "(O)", size);
    PyObject *b = METH(DIV(SUB(dx2, dx1), MUL(dx1, dx2)), "reshape", "(O)", size);
    PyObject *cc = METH(DIV(dx1, MUL(dx2, ADD(dx1, dx2))), "reshape", "(O)", size);
    PyObject *center = ADD(ADD(MUL(a, PART(0, n - 2)), MUL(b, PART(1, n - 2))), MUL(cc, PART(2, n - 2)));
    PyObject *d0 = METH(dx, "select", "(ii)", 0, 0), *dl = METH(dx, "select", "(iL)", 0, (long long)(n - 2));
    PyObject *prepend, *append;
    if (edge_order == 1) {
        prepend = DIV(SUB(PART(1, 1), PART(0, 1)), d0);
        append = DIV(SUB(PART(-1, 1), PART(-2, 1)), dl);
    } else {
        /* second order: its own arena (the outer one holds the center) */
        CtArena *outer = arena, edge_scratch = {0};
        arena = &edge_scratch;
        PyObject *d1 = METH(dx, "select", "(ii)", 0, 1), *dl2 = METH(dx, "select", "(iL)", 0, (long long)(n - 3));
        a = NEG(DIV(ADD(MUL(NUM(2.0), d0), d1), MUL(d0, ADD(d0, d1))));
        b = DIV(ADD(d0, d1), MUL(d0, d1));
        cc = DIV(NEG(d0), MUL(d1, ADD(d0, d1)));
        PyObject *first = TAKE(ADD(ADD(MUL(a, PART(0, 1)), MUL(b, PART(1, 1))), MUL(cc, PART(2, 1))));
        a = DIV(dl, MUL(dl2, ADD(dl, dl2)));
        b = NEG(DIV(ADD(dl, dl2), MUL(dl, dl2)));
        cc = DIV(ADD(MUL(INT(2), dl), dl2), MUL(dl, ADD(dl, dl2)));
        PyObject *last = TAKE(ADD(ADD(MUL(a, PART(-3, 1)), MUL(b, PART(-2, 1))), MUL(cc, PART(-1, 1))));
        arena_free(arena);
        arena = outer;
        prepend = KEEP(first); /* a NULL marks the outer arena failed */
        append = KEEP(last);
    }
    return FN("cat", "((OOO)i)", prepend, center, append, dim);
}

static const char gradient_overloads[] =
    "gradient() received an invalid combination of arguments - expected one of:\n"
    " * (Tensor input, *, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, Number spacing, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, Number spacing = None, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Scalars spacing, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Scalars spacing, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Tensors spacing, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Tensors spacing, tuple of ints dim, int edge_order = 1)\n";

static bool is_number(PyObject *o)
{
    return (PyNumber_Check(o) && !PyUnicode_Check(o) && !CtTensor_Check(o)) ||
           (CtTensor_Check(o) && CT_TENSOR(o)->ndim == 0);
}

/* dim: None (every dim), an int or a sequence of ints, wrapped into dims; *ndims set. 0 or -1. */
static int parse_dims(PyObject *obj, CtTensorObject *input, int *dims, int *ndims)
{
    if (obj == NULL || obj == Py_None) {
        for (int i = 0; i < input->ndim; i++) {
            dims[i] = i;
        }
        *ndims = input->ndim;
        return 0;
    }
    bool seq = PyTuple_Check(obj) || PyList_Check(obj);
    Py_ssize_t n = seq ? PySequence_Fast_GET_SIZE(obj) : 1;
    if (n > CT_MAX_DIMS) {
        PyErr_SetString(PyExc_RuntimeError, "torch.gradient: too many dims");
        return -1;
    }
    uint64_t seen = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = seq ? PySequence_Fast_GET_ITEM(obj, i) : obj;
        int64_t d;
        if (PyFloat_Check(o) || PyBool_Check(o) || !PyIndex_Check(o)) {
            PyErr_SetString(PyExc_TypeError, gradient_overloads);
            return -1;
        }
        if (ct_arg_int64(o, &d) < 0 || ct_wrap_dim(d, input->ndim, &dims[i]) < 0) {
            return -1;
        }
        if (seen & (1ull << dims[i])) {
            PyErr_Format(PyExc_RuntimeError, "dim %d appears multiple times in the list of dims", dims[i]);
            return -1;
        }
        seen |= 1ull << dims[i];
    }
    *ndims = (int)n;
    return 0;
}

/* gradient(input, *, spacing=1, dim=None, edge_order=1) -> tuple of tensors */
static PyObject *py_gradient(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "*spacing", "*dim", "*edge_order", NULL};
    PyObject *a[4];
    int64_t edge_order = 1;
    int dims[CT_MAX_DIMS], ndims = 0;
    if (ct_parse_args("gradient", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    PyObject *spacing = a[1] != NULL && a[1] != Py_None ? a[1] : NULL;
    bool list = spacing != NULL && (PyTuple_Check(spacing) || PyList_Check(spacing));
    if (!CtTensor_Check(a[0]) || (spacing != NULL && !list && !is_number(spacing)) ||
        (a[3] != NULL && (PyFloat_Check(a[3]) || PyBool_Check(a[3]) || !PyIndex_Check(a[3])))) {
        PyErr_SetString(PyExc_TypeError, gradient_overloads);
        return NULL;
    }
    CtTensorObject *input = CT_TENSOR(a[0]);
    bool tensors = list && PySequence_Fast_GET_SIZE(spacing) > 0 && CtTensor_Check(PySequence_Fast_GET_ITEM(spacing, 0)) &&
                   CT_TENSOR(PySequence_Fast_GET_ITEM(spacing, 0))->ndim > 0;
    Py_ssize_t nspacing = list ? PySequence_Fast_GET_SIZE(spacing) : 0;
    for (Py_ssize_t i = 0; i < nspacing; i++) {
        PyObject *s = PySequence_Fast_GET_ITEM(spacing, i);
        if (tensors ? !CtTensor_Check(s) : !is_number(s)) {
            if (tensors) {
                PyErr_Format(PyExc_TypeError, "expected Tensor as element %zd in argument 1, but got %s", i,
                             ct_type_name(s));
            } else {
                PyErr_SetString(PyExc_TypeError, gradient_overloads);
            }
            return NULL;
        }
    }
    if (ct_arg_int64(a[3], &edge_order) < 0) {
        return NULL;
    }
    if (input->dtype == CT_U8) {
        PyErr_SetString(PyExc_NotImplementedError, "torch.gradient does not support uint8 input.");
        return NULL;
    }
    bool has_dim = a[2] != NULL && a[2] != Py_None;
    Py_ssize_t ndim_arg = !has_dim ? 0 : PyTuple_Check(a[2]) || PyList_Check(a[2]) ? PySequence_Fast_GET_SIZE(a[2]) : 1;
    if (list && !has_dim && nspacing != input->ndim) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to "
                     "'self.dim() = %d', since dim argument was not given, but got a list of length %zd",
                     input->ndim, nspacing);
        return NULL;
    }
    if (list && has_dim && nspacing != ndim_arg) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments "
                     "to have the same length, but got a spacing argument of length %zd and a dim argument of length "
                     "%zd.",
                     nspacing, ndim_arg);
        return NULL;
    }
    if (edge_order != 1 && edge_order != 2) {
        PyErr_SetString(PyExc_RuntimeError, "torch.gradient only supports edge_order=1 and edge_order=2.");
        return NULL;
    }
    if (parse_dims(a[2], input, dims, &ndims) < 0) {
        return NULL;
    }
    for (int i = 0; i < ndims; i++) {
        if (input->sizes[dims[i]] < edge_order + 1) {
            PyErr_SetString(PyExc_RuntimeError,
                            "torch.gradient expected each dimension size to be at least edge_order+1");
            return NULL;
        }
    }
    PyObject *result = PyTuple_New(ndims);
    PyObject *one = PyLong_FromLong(1);
    for (int i = 0; result != NULL && one != NULL && i < ndims; i++) {
        CtArena scratch = {0}, *arena = &scratch;
        PyObject *h = !list ? (spacing != NULL ? spacing : one) : PySequence_Fast_GET_ITEM(spacing, i);
        int64_t n = input->sizes[dims[i]];
        if (tensors && CT_TENSOR(h)->ndim != 1) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.gradient expected each element of spacing to have one dimension, but got an element "
                         "with %d dimensions!",
                         CT_TENSOR(h)->ndim);
            Py_CLEAR(result);
            break;
        }
        PyObject *g = tensors ? coordinate_gradient(arena, a[0], dims[i], n, h, (int)edge_order)
                              : uniform_gradient(arena, a[0], dims[i], n, h, (int)edge_order);
        PyObject *r = TAKE(g);
        arena_free(arena);
        if (r == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyTuple_SET_ITEM(result, i, r);
    }
    Py_XDECREF(one);
    if (one == NULL) {
        Py_CLEAR(result);
    }
    return result;
}

PyMethodDef ct_gradient_tensor_methods[] = {{NULL}};

PyMethodDef ct_gradient_module_methods[] = {
    {"gradient", CT_FASTCALL(py_gradient), CT_METH_FK,
     "gradient(input, *, spacing=1, dim=None, edge_order=1) -> tuple of tensors: the derivative estimated by "
     "central differences along each dim"},
    {NULL},
};

PyType_Slot ct_gradient_tensor_slots[] = {{0, NULL}};
