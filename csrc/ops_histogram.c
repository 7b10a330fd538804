/* ops_histogram.c: torch.histogram(input, bins) and torch.histogramdd(input, bins) -> (hist, bin_edges),
 * and Tensor.histogram. PyTorch has them for CPU float32/float64 only: CUDA tensors raise its
 * dispatcher's NotImplementedError, other dtypes its "not implemented for" error.
 *
 * Composed of recording ops: along each dimension a value's bin is upper_bound(edges, x) - 1
 * (searchsorted right=True), a value on the last edge counts in the last bin, values outside
 * [edges[0], edges[-1]] (NaN too) are dropped. The per-dimension bins make one flat index that one
 * scatter_add_ counts into zeros (an extra bin takes the dropped values). An int bin count gives
 * edges linspace(min, max, bins + 1) over the range (the data's when none is given, widened by
 * 0.5 each way when that is one value); PyTorch's linear search is corrected against those same
 * edges, so both agree. */
#include "args.h"
#include "autograd_arena.h"
#include "creation.h"
#include "linalg.h"
#include "reduce.h"
#include "registry.h"
#include "search.h"
#include "tensor.h"
#include <math.h>

#define HIST_MAX_DIMS 64

/* PyTorch's errors for a CUDA input ("aten::<op>") or a dtype other than float32/float64. 0 or -1. */
static int check_input(CtTensorObject *input, const char *aten_op)
{
    if (ct_device_of(input).type == CT_DEV_CUDA) {
        PyErr_Format(PyExc_NotImplementedError,
                     "Could not run 'aten::%s' with arguments from the 'CUDA' backend. This could be because the "
                     "operator doesn't exist for this backend, or was omitted during the selective/custom build "
                     "process (if using custom build).",
                     aten_op);
        return -1;
    }
    if (input->dtype != CT_F32 && input->dtype != CT_F64) {
        PyErr_Format(PyExc_NotImplementedError, "\"histogramdd\" not implemented for '%s'",
                     ct_scalar_type_name(input->dtype));
        return -1;
    }
    return 0;
}

/* The checks of PyTorch's histogramdd on x (..., D), the D edge tensors and weight (or NULL). 0 or -1. */
static int check_edges_weight(CtTensorObject *x, int D, CtTensorObject *const *edges, CtTensorObject *weight)
{
    for (int d = 0; d < D; d++) {
        if (edges[d]->dtype != x->dtype) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input "
                         "with dtype %s and bins for dimension %d with dtype %s",
                         ct_cpp_type_name(x->dtype), d, ct_cpp_type_name(edges[d]->dtype));
            return -1;
        }
        if (edges[d]->ndim != 1) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.histogramdd: bins tensor should have one dimension, but got %d dimensions in the "
                         "bins tensor for dimension %d",
                         edges[d]->ndim, d);
            return -1;
        }
        if (ct_numel(edges[d]) == 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in the "
                         "bins tensor for dimension %d",
                         d);
            return -1;
        }
        if (ct_numel(edges[d]) == 1) {
            PyErr_Format(PyExc_RuntimeError, "torch.histogram(): bins must be > 0, but got 0 for dimension %d", d);
            return -1;
        }
        if (ct_device_of(edges[d]).type != CT_DEV_CPU) {
            return check_input(edges[d], "_histogramdd_from_bin_tensors");
        }
    }
    if (weight == NULL) {
        return 0;
    }
    if (weight->dtype != x->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have the "
                     "same dtype, but got input(%s), and weight(%s)",
                     ct_cpp_type_name(x->dtype), ct_cpp_type_name(weight->dtype));
        return -1;
    }
    /* PyTorch compares with the input's shape less its last dim; a 0-d weight counts as (1,) */
    int64_t one = 1;
    const int64_t *ws = weight->ndim > 0 ? weight->sizes : &one;
    bool same = (weight->ndim > 0 ? weight->ndim : 1) == x->ndim - 1;
    for (int i = 0; same && i < x->ndim - 1; i++) {
        same = ws[i] == x->sizes[i];
    }
    if (!same || ct_device_of(weight).type != CT_DEV_CPU) {
        char xs[256], ws[256];
        ct_format_sizes(xs, sizeof xs, x->ndim, x->sizes);
        ct_format_sizes(ws, sizeof ws, weight->ndim, weight->sizes);
        PyErr_Format(PyExc_RuntimeError,
                     "torch.histogramdd: if weight tensor is provided it should have the same shape as the input "
                     "tensor excluding its innermost dimension, but got input with shape %s and weight with shape %s",
                     xs, ws);
        return -1;
    }
    return 0;
}

/* The edges of bins[d] equal bins over range (2 * D values, or NULL: each column's min and max), as
 * PyTorch checks and widens them. edges[d] new references; 0 or -1. */
static int linear_edges(CtTensorObject *x, int D, const int64_t *bins, const double *range, CtTensorObject **edges)
{
    CtArena scratch = {0}, *arena = &scratch;
    int rc = -1;
    for (int d = 0; d < D; d++) {
        double lo = 0.0, hi = 1.0;
        if (bins[d] <= 0) {
            PyErr_Format(PyExc_RuntimeError, "torch.histogram(): bins must be > 0, but got %lld for dimension %d",
                         (long long)bins[d], d);
            goto done;
        }
        if (range != NULL) {
            lo = range[2 * d];
            hi = range[2 * d + 1];
        } else if (x->sizes[0] > 0) {
            PyObject *col = METH((PyObject *)x, "select", "(ii)", 1, d);
            PyObject *mn = METH(col, "min", NULL), *mx = METH(col, "max", NULL);
            CtScalar a, b;
            if (mx == NULL || ct_item(CT_TENSOR(mn), &a) < 0 || ct_item(CT_TENSOR(mx), &b) < 0) {
                goto done;
            }
            lo = a.v.d;
            hi = b.v.d;
        }
        if (lo > hi) {
            char msg[160]; /* PyErr_Format has no %g */
            snprintf(msg, sizeof msg,
                     "torch.histogramdd: min should not exceed max, but got min %g max %g for dimension %d", lo, hi, d);
            PyErr_SetString(PyExc_RuntimeError, msg);
            goto done;
        }
        if (!isfinite(lo) || !isfinite(hi)) {
            char msg[160];
            snprintf(msg, sizeof msg, "torch.histogramdd: dimension %d's range [%g, %g] is not finite", d, lo, hi);
            PyErr_SetString(PyExc_RuntimeError, msg);
            goto done;
        }
        if (lo == hi) {
            lo -= 0.5;
            hi += 0.5;
        }
        if ((edges[d] = ct_linspace(lo, hi, bins[d] + 1, x->dtype, ct_device_of(x))) == NULL) {
            goto done;
        }
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* upper_bound(edges, col) - 1 clamped to the last bin: each value's bin (int64), within
 * [edges[0], edges[-1]] only. In the arena. */
static PyObject *bin_of(CtArena *arena, CtTensorObject *edges, PyObject *col)
{
    if (arena->failed) {
        return NULL;
    }
    PyObject *ub = KEEP((PyObject *)ct_searchsorted(edges, CT_TENSOR(col), NULL, false, true, NULL));
    return METH(SUB(ub, INT(1)), "clamp_max", "(L)", (long long)(ct_numel(edges) - 2));
}

/* hist of the rows of x (N, D) over the bins between edges[d], weighted by weight (N,) or NULL;
 * density: divided by the total and each bin's volume. New reference, (nb_0, ..., nb_{D-1}). */
static PyObject *histogram_counts(CtTensorObject *x, int D, CtTensorObject *const *edges, PyObject *weight,
                                  bool density)
{
    PyObject *flat = NULL, *valid = NULL, *result = NULL;
    int64_t total = 1, shape[HIST_MAX_DIMS];
    for (int d = 0; d < D; d++) {
        CtArena scratch = {0}, *arena = &scratch;
        int64_t nb = ct_numel(edges[d]) - 1;
        nb = nb > 0 ? nb : 0;
        PyObject *col = METH((PyObject *)x, "select", "(ii)", 1, d), *e = (PyObject *)edges[d];
        PyObject *pos = bin_of(arena, edges[d], col);
        PyObject *inside = METH(CMP(col, METH(e, "select", "(ii)", 0, 0), Py_GE), "logical_and", "(O)",
                                CMP(col, METH(e, "select", "(ii)", 0, -1), Py_LE));
        if (flat != NULL) {
            pos = ADD(MUL(flat, INT(nb)), pos);
            inside = METH(valid, "logical_and", "(O)", inside);
        }
        Py_XSETREF(flat, TAKE(pos));
        Py_XSETREF(valid, TAKE(inside));
        arena_free(arena);
        if (flat == NULL || valid == NULL) {
            goto done;
        }
        shape[d] = nb;
        total *= nb;
    }
    CtArena scratch = {0}, *arena = &scratch;
    /* dropped values go to the extra bin `total` */
    PyObject *index = FN("where", "(OOO)", valid, flat, INT(total));
    PyObject *src = weight != NULL ? weight : FN("ones_like", "(O)", METH((PyObject *)x, "select", "(ii)", 1, 0));
    PyObject *bins = arena->failed ? NULL : KEEP((PyObject *)ct_zeros(1, &(int64_t){total + 1}, x->dtype,
                                                                      ct_device_of(x)));
    PyObject *hist = METH(METH(METH(bins, "scatter_add_", "(iOO)", 0, index, src), "narrow", "(iiL)", 0, 0,
                               (long long)total), "reshape", "(O)", KEEP(ct_size_object(D, shape)));
    if (density) {
        hist = DIV(hist, METH(hist, "sum", NULL));
        for (int d = 0; d < D; d++) {
            int64_t widths[HIST_MAX_DIMS];
            for (int i = 0; i < D; i++) {
                widths[i] = i == d ? shape[d] : 1;
            }
            hist = DIV(hist, METH(FN("diff", "(O)", (PyObject *)edges[d]), "reshape", "(O)",
                                  KEEP(ct_size_object(D, widths))));
        }
    }
    result = TAKE(hist);
    arena_free(arena);
done:
    Py_XDECREF(flat);
    Py_XDECREF(valid);
    return result;
}

/* A torch.return_types pair/struct made on first use. Steals a and b. */
static PyObject *named_pair(bool dd, bool out, PyObject *a, PyObject *b)
{
    static PyTypeObject *types[3];
    static const char *const names[3] = {"torch.return_types.histogram", "torch.return_types.histogram_out",
                                         "torch.return_types.histogramdd"};
    int k = dd ? 2 : out ? 1 : 0;
    return ct_linalg_pair(&types[k], names[k], "hist", "bin_edges", a, b);
}

/* The range argument (a sequence of 2 * D numbers, or NULL / None: none). Returns 1 with range filled,
 * 0 when absent, -1 with PyTorch's error. */
static int parse_range(PyObject *obj, int D, double *range)
{
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "histogramdd(): argument 'range' must be tuple of floats, not %s",
                     ct_type_name(obj));
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n != 2 * (Py_ssize_t)D) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.histogramdd: for a %d-dimensional histogram range should have %d elements, but got %zd", D,
                     2 * D, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        CtScalar s;
        if (ct_number_arg("histogramdd", "range", 3, PySequence_Fast_GET_ITEM(obj, i), &s) < 0) {
            return -1;
        }
        range[i] = s.kind == CT_KIND_FLOAT ? s.v.d : s.kind == CT_KIND_INT ? (double)s.v.i : (double)s.v.b;
    }
    return 1;
}

/* The shared body: x (N, D) rows, bins either D counts (with range or NULL) or D edge tensors,
 * weight (N,) or NULL. *hist and edges[d] new references; 0 or -1. */
static int histogram_run(CtTensorObject *x, int D, const int64_t *counts, CtTensorObject *const *given_edges,
                         const double *range, PyObject *weight, bool density, PyObject **hist,
                         CtTensorObject **edges)
{
    if (given_edges != NULL) {
        for (int d = 0; d < D; d++) {
            edges[d] = (CtTensorObject *)Py_NewRef(given_edges[d]);
        }
    } else if (linear_edges(x, D, counts, range, edges) < 0) {
        return -1;
    }
    if ((*hist = histogram_counts(x, D, edges, weight, density)) == NULL) {
        for (int d = 0; d < D; d++) {
            Py_CLEAR(edges[d]);
        }
        return -1;
    }
    return 0;
}

/* --- histogram ------------------------------------------------------------------------------ */
static const char histogram_overloads[] =
    "histogram() received an invalid combination of arguments - expected one of:\n"
    " * (Tensor input, Tensor bins, *, Tensor weight = None, bool density = False, tuple of Tensors out = None)\n"
    " * (Tensor input, int bins = 100, *, tuple of floats range = None, Tensor weight = None, bool density = False, "
    "tuple of Tensors out = None)\n";

/* out=(hist, bin_edges): PyTorch's dtype checks, then both written. Steals hist and edges. */
static PyObject *histogram_write_out(CtTensorObject *input, PyObject *hist, PyObject *edges, PyObject *out)
{
    PyObject *written[2] = {NULL, NULL}, *parts[2] = {hist, edges}, *result = NULL;
    if (!(PyTuple_Check(out) || PyList_Check(out)) || PySequence_Fast_GET_SIZE(out) != 2) {
        PyErr_Format(PyExc_TypeError, "histogram(): argument 'out' must be tuple of Tensors, not %s",
                     ct_type_name(out));
        goto done;
    }
    for (int i = 0; i < 2; i++) {
        CtTensorObject *o;
        if (ct_arg_out(PySequence_Fast_GET_ITEM(out, i), "histogram", &o) < 0) {
            goto done;
        }
        if (o == NULL || o->dtype != input->dtype) {
            PyErr_Format(PyExc_RuntimeError,
                         i == 0 ? "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
                                  "input %s and hist %s"
                                : "torch.histogram: input tensor and bin_edges tensor should have the same dtype, but "
                                  "got input %s and bin_edges %s for dimension 0",
                         ct_cpp_type_name(input->dtype), o != NULL ? ct_cpp_type_name(o->dtype) : "None");
            goto done;
        }
    }
    for (int i = 0; i < 2; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(out, i);
        written[i] = ct_write_out(CT_TENSOR(parts[i]), o, "histogram", CT_OUT_EXACT, 0, NULL);
        parts[i] = NULL;
        if (written[i] == NULL) {
            goto done;
        }
    }
    result = named_pair(false, true, written[0], written[1]);
    written[0] = written[1] = NULL;
done:
    Py_XDECREF(parts[0]);
    Py_XDECREF(parts[1]);
    Py_XDECREF(written[0]);
    Py_XDECREF(written[1]);
    return result;
}

/* histogram(input, bins=100, *, range=None, weight=None, density=False, out=None); bins an int or a
 * 1-d tensor of edges. */
static PyObject *tensor_histogram(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"bins", "*range", "*weight", "*density", "*out", NULL};
    PyObject *a[5];
    CtTensorObject *input = CT_TENSOR(self), *given = NULL, *edges[1] = {NULL};
    int64_t count = 100;
    double range[2];
    bool density = false;
    if (ct_parse_args("histogram", args, nargs, kwnames, names, 0, a) < 0 || ct_arg_bool(a[3], &density) < 0) {
        return NULL;
    }
    given = a[0] != NULL && CtTensor_Check(a[0]) ? CT_TENSOR(a[0]) : NULL;
    if ((given != NULL && a[1] != NULL && a[1] != Py_None) ||
        (given == NULL && a[0] != NULL && (PyFloat_Check(a[0]) || PyBool_Check(a[0]) || !PyIndex_Check(a[0]))) ||
        (a[2] != NULL && a[2] != Py_None && !CtTensor_Check(a[2]))) {
        PyErr_SetString(PyExc_TypeError, histogram_overloads);
        return NULL;
    }
    int has_range = given == NULL ? parse_range(a[1], 1, range) : 0;
    if ((given == NULL && ct_arg_int64(a[0], &count) < 0) || has_range < 0 ||
        check_input(input, given != NULL ? "histogram.bins_tensor" : "histogram.bin_ct") < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *hist = NULL, *result = NULL;
    /* PyTorch works on input.reshape(numel, 1) and weight.reshape(numel) */
    PyObject *x = METH(self, "reshape", "(Li)", (long long)ct_numel(input), 1);
    PyObject *w = a[2] != NULL && a[2] != Py_None ? METH(a[2], "reshape", "(i)", -1) : NULL;
    if (arena->failed ||
        check_edges_weight(CT_TENSOR(x), given != NULL ? 1 : 0, &given, w != NULL ? CT_TENSOR(w) : NULL) < 0 ||
        histogram_run(CT_TENSOR(x), 1, &count, given != NULL ? &given : NULL, has_range ? range : NULL, w, density,
                      &hist, edges) < 0) {
        goto done;
    }
    if (a[4] != NULL && a[4] != Py_None) {
        result = histogram_write_out(input, hist, (PyObject *)edges[0], a[4]);
    } else {
        result = named_pair(false, false, hist, (PyObject *)edges[0]);
    }
done:
    arena_free(arena);
    return result;
}

/* --- histogramdd ---------------------------------------------------------------------------- */
/* histogramdd(input, bins, range=None, weight=None, density=False): bins an int, D ints or D 1-d
 * tensors of edges; (hist, tuple of D bin_edges). */
static PyObject *py_histogramdd(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "bins", "range", "weight", "density", NULL};
    PyObject *a[5];
    bool density = false;
    if (ct_parse_args("histogramdd", args, nargs, kwnames, names, 2, a) < 0 || ct_arg_bool(a[4], &density) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[0]) || CtTensor_Check(a[1]) || (a[3] != NULL && a[3] != Py_None && !CtTensor_Check(a[3]))) {
        PyErr_SetString(PyExc_TypeError,
                        "histogramdd() received an invalid combination of arguments - expected one of:\n"
                        " * (Tensor input, int bins, tuple of floats range = None, Tensor weight = None, bool density "
                        "= False)\n"
                        " * (Tensor input, tuple of ints bins, tuple of floats range = None, Tensor weight = None, "
                        "bool density = False)\n"
                        " * (Tensor input, tuple of Tensors bins, tuple of floats range = None, Tensor weight = None, "
                        "bool density = False)\n");
        return NULL;
    }
    CtTensorObject *input = CT_TENSOR(a[0]), *weight = a[3] != NULL && a[3] != Py_None ? CT_TENSOR(a[3]) : NULL;
    if (input->ndim == 0) {
        PyErr_SetString(PyExc_IndexError, "Dimension specified as -1 but tensor has no dimensions");
        return NULL;
    }
    int64_t D = input->sizes[input->ndim - 1], counts[HIST_MAX_DIMS];
    CtTensorObject *given[HIST_MAX_DIMS], *edges[HIST_MAX_DIMS] = {NULL};
    bool tensors = false;
    if (D > HIST_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "histogramdd: ctorch supports at most %d dimensions, got %lld",
                     HIST_MAX_DIMS, (long long)D);
        return NULL;
    }
    if (PyTuple_Check(a[1]) || PyList_Check(a[1])) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(a[1]);
        tensors = n > 0 && CtTensor_Check(PySequence_Fast_GET_ITEM(a[1], 0));
        if (n != D) {
            PyErr_SetString(PyExc_RuntimeError, tensors ? "torch.histogramdd: expected as many sequences of bin "
                                                          "edges as the innermost dimension of the input"
                                                        : "histogramdd: The size of bins must be equal to the "
                                                          "innermost dimension of the input.");
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *b = PySequence_Fast_GET_ITEM(a[1], i);
            if (tensors ? !CtTensor_Check(b) : (CtTensor_Check(b) || ct_int_arg("histogramdd", "bins", 2, b,
                                                                                &counts[i]) < 0)) {
                if (!PyErr_Occurred()) {
                    PyErr_SetString(PyExc_TypeError, "histogramdd(): argument 'bins' must be an int, a sequence "
                                                     "of ints or a sequence of Tensors");
                }
                return NULL;
            }
            given[i] = tensors ? CT_TENSOR(b) : NULL;
        }
    } else {
        int64_t c;
        if (ct_int_arg("histogramdd", "bins", 2, a[1], &c) < 0) {
            return NULL;
        }
        for (int64_t i = 0; i < D; i++) {
            counts[i] = c;
        }
    }
    if (input->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError, "torch.histogramdd: input tensor should have at least 2 dimensions");
        return NULL;
    }
    double range[2 * HIST_MAX_DIMS];
    int has_range = tensors ? 0 : parse_range(a[2], (int)D, range);
    if (has_range < 0 ||
        check_input(input, tensors ? "_histogramdd_from_bin_tensors" : "_histogramdd_bin_edges") < 0 ||
        check_edges_weight(input, tensors ? (int)D : 0, given, weight) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *hist = NULL, *edge_tuple = NULL, *result = NULL;
    PyObject *x = METH(a[0], "reshape", "(iL)", -1, (long long)D);
    PyObject *w = weight != NULL ? METH((PyObject *)weight, "reshape", "(i)", -1) : NULL;
    if (arena->failed || histogram_run(CT_TENSOR(x), (int)D, counts, tensors ? given : NULL,
                                       has_range ? range : NULL, w, density, &hist, edges) < 0 ||
        (edge_tuple = PyTuple_New(D)) == NULL) {
        goto done;
    }
    for (int64_t d = 0; d < D; d++) {
        PyTuple_SET_ITEM(edge_tuple, d, (PyObject *)edges[d]);
        edges[d] = NULL;
    }
    result = named_pair(true, false, hist, edge_tuple);
    hist = edge_tuple = NULL;
done:
    for (int64_t d = 0; d < D; d++) {
        Py_XDECREF(edges[d]);
    }
    Py_XDECREF(hist);
    Py_XDECREF(edge_tuple);
    arena_free(arena);
    return result;
}

/* --- tables ----------------------------------------------------------------------------------- */
CT_FUNCTION_FROM_METHOD(histogram, tensor_histogram)

PyMethodDef ct_histogram_tensor_methods[] = {
    {"histogram", CT_FASTCALL(tensor_histogram), CT_METH_FK,
     "histogram(bins, *, range=None, weight=None, density=False) -> (hist, bin_edges)"},
    {NULL},
};

PyMethodDef ct_histogram_module_methods[] = {
    {"histogram", CT_FASTCALL(function_histogram), CT_METH_FK,
     "histogram(input, bins, *, range=None, weight=None, density=False, out=None) -> (hist, bin_edges)"},
    {"histogramdd", CT_FASTCALL(py_histogramdd), CT_METH_FK,
     "histogramdd(input, bins, *, range=None, weight=None, density=False) -> (hist, bin_edges)"},
    {NULL},
};

PyType_Slot ct_histogram_tensor_slots[] = {{0, NULL}};
