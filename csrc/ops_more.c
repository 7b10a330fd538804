/* ops_more.c: tensor ops PyTorch users reach for beside the core families, composed in C of
 * ctorch's recording ops (so they run on every device and autograd records their parts):
 *
 *   repeat_interleave, tensor_split / hsplit / vsplit / dsplit, ravel, type_as, fill_diagonal_,
 *   unravel_index, ldexp, masked_scatter, put / put_, vander / linalg.vander, combinations, slice_scatter / select_scatter / diagonal_scatter
 *   (nodes of their own: SliceScatterBackward0, ...), trapezoid / trapz / cumulative_trapezoid, the window functions (hann,
 *   hamming, blackman, bartlett, kaiser: host-computed in double like tril_indices), and diag_embed / diagflat, mvlgamma, frexp, which PyTorch gives a node
 *   of their own (DiagEmbedBackward0, MvlgammaBackward0, FrexpBackward0): those are listed in autograd_formulas.c's table, with their formulas
 *   (and unfold's, whose view lives in views.c) at the end of this file (ops_more.h).
 *
 * Each op checks its arguments with PyTorch's messages first, then builds its result. */
#include "ops_more.h"
#include "args.h"
#include "autograd_arena.h"
#include "creation.h"
#include "device.h"
#include "dtype.h"
#include "elementwise.h"
#include "iter.h" /* ct_broadcast_shapes */
#include "random.h"      /* ct_rand, ct_generator_arg: multinomial */
#include "reduce.h"      /* ct_frexp_result */
#include "search.h"      /* ct_searchsorted: multinomial */
#include "scalar_math.h" /* ct_sm_bessel_i: kaiser_window */
#include "registry.h"
#include "tensor.h"
#include <math.h>
#include <string.h>

/* --- helpers ------------------------------------------------------------------------------------ */
/* t as a contiguous int64 tensor on the CPU (new reference): its values can be read on the host. */
static CtTensorObject *host_long(CtTensorObject *t)
{
    CtTensorObject *h = ct_to(t, CT_I64, ct_cpu(), false);
    CtTensorObject *c = h ? ct_contiguous(h) : NULL;
    Py_XDECREF(h);
    return c;
}

/* A 1-d int64 tensor of the n host values v, on device (new reference). */
static PyObject *long_tensor(const int64_t *v, int64_t n, CtDevice device)
{
    int64_t sizes[1] = {n};
    CtTensorObject *host = ct_empty(1, sizes, CT_I64, ct_cpu());
    if (host == NULL) {
        return NULL;
    }
    if (n > 0) {
        memcpy(ct_data(host), v, sizeof(int64_t) * (size_t)n);
    }
    CtTensorObject *t = ct_to(host, CT_I64, device, false);
    Py_DECREF(host);
    return (PyObject *)t;
}

/* A tensor argument (borrowed), or PyTorch's TypeError naming the argument. */
static CtTensorObject *tensor_arg(PyObject *obj, const char *fname, const char *name, int pos)
{
    if (obj != NULL && CtTensor_Check(obj)) {
        return CT_TENSOR(obj);
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname, name, pos,
                 obj ? ct_type_name(obj) : "NoneType");
    return NULL;
}

static bool is_int_arg(PyObject *obj) { return obj != NULL && !CtTensor_Check(obj) && PyIndex_Check(obj) && !PyBool_Check(obj); }

/* ============================================================================================
 * repeat_interleave
 * ============================================================================================ */

/* Host copy of a repeats tensor (0-d or 1-d integer), or NULL with PyTorch's error. */
static CtTensorObject *repeats_on_host(CtTensorObject *r)
{
    if (ct_is_floating(r->dtype) || r->dtype == CT_BOOL) {
        PyErr_Format(PyExc_NotImplementedError, "\"repeat_interleave_cpu\" not implemented for '%s'",
                     ct_scalar_type_name(r->dtype));
        return NULL;
    }
    if (r->ndim > 1) {
        PyErr_SetString(PyExc_RuntimeError, "repeats must be 0-dim or 1-dim tensor");
        return NULL;
    }
    CtTensorObject *h = host_long(r);
    if (h == NULL) {
        return NULL;
    }
    const int64_t *v = (const int64_t *)ct_data(h);
    int64_t n = ct_numel(h);
    for (int64_t i = 0; i < n; i++) {
        if (v[i] < 0) {
            Py_DECREF(h);
            PyErr_SetString(PyExc_RuntimeError, "repeats can not be negative");
            return NULL;
        }
    }
    return h;
}

static int check_output_size(PyObject *output_size, int64_t total)
{
    int64_t want = total;
    if (output_size != NULL && output_size != Py_None && ct_arg_int64(output_size, &want) < 0) {
        return -1;
    }
    if (want != total) {
        PyErr_SetString(PyExc_RuntimeError, "allocated size does not match required size");
        return -1;
    }
    return 0;
}

/* The index [0 x r0, 1 x r1, ...] of the n counts r (broadcast from one when n_r == 1 < n), on
 * device, and its length in *total. New reference. */
static PyObject *repeat_index(const int64_t *r, int64_t n_r, int64_t n, CtDevice device, int64_t *total)
{
    *total = 0;
    for (int64_t i = 0; i < n; i++) {
        *total += r[n_r == 1 ? 0 : i];
    }
    int64_t *idx = PyMem_Malloc(sizeof(int64_t) * (size_t)(*total > 0 ? *total : 1));
    if (idx == NULL) {
        return PyErr_NoMemory();
    }
    for (int64_t i = 0, k = 0; i < n; i++) {
        for (int64_t j = 0; j < r[n_r == 1 ? 0 : i]; j++) {
            idx[k++] = i;
        }
    }
    PyObject *t = long_tensor(idx, *total, device);
    PyMem_Free(idx);
    return t;
}

/* input.repeat_interleave(repeats, dim=None, *, output_size=None), or torch.repeat_interleave(repeats)
 * when input is NULL. An int count is an unsqueeze / expand / flatten (ViewBackward0, as in
 * PyTorch), a tensor of counts an index_select. */
static PyObject *repeat_interleave_impl(PyObject *input, PyObject *repeats, PyObject *dim_obj, PyObject *output_size)
{
    CtArena scratch = {0}, *arena = &scratch;
    CtTensorObject *counts = NULL;
    PyObject *result = NULL, *index = NULL;
    if (input == NULL) { /* torch.repeat_interleave(repeats): the index itself */
        CtTensorObject *r = tensor_arg(repeats, "repeat_interleave", "repeats", 1);
        if (r == NULL || (counts = repeats_on_host(r)) == NULL) {
            return NULL;
        }
        int64_t total, n = ct_numel(counts);
        index = repeat_index((const int64_t *)ct_data(counts), n, n, ct_device_of(r), &total);
        if (index != NULL && check_output_size(output_size, total) == 0) {
            result = PyObject_CallMethod(index, "to", "(O)", ct_dtype_object(r->dtype));
        }
        goto done;
    }
    CtTensorObject *t = CT_TENSOR(input);
    PyObject *x = input;
    int dim = 0;
    if (dim_obj == NULL || dim_obj == Py_None || t->ndim == 0) {
        x = METH(input, "flatten", NULL);
        if (x == NULL) {
            goto done;
        }
    }
    if (dim_obj != NULL && dim_obj != Py_None) {
        int64_t d;
        if (ct_arg_int64(dim_obj, &d) < 0 || ct_wrap_dim(d, t->ndim, &dim) < 0) {
            goto done;
        }
    }
    CtTensorObject *xt = CT_TENSOR(x);
    int64_t extent = xt->sizes[dim];
    if (is_int_arg(repeats)) {
        int64_t r;
        if (ct_arg_int64(repeats, &r) < 0) {
            goto done;
        }
        if (r < 0) {
            PyErr_SetString(PyExc_RuntimeError, "Repeats must be non-negative");
            goto done;
        }
        if (check_output_size(output_size, extent * r) < 0) {
            goto done;
        }
        int64_t sizes[CT_MAX_DIMS];
        memcpy(sizes, xt->sizes, sizeof(int64_t) * xt->ndim);
        PyObject *shape = PyTuple_New(xt->ndim + 1);
        for (int i = 0; shape != NULL && i <= xt->ndim; i++) {
            int64_t s = i <= dim ? sizes[i] : i == dim + 1 ? r : sizes[i - 1];
            PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(s));
        }
        PyObject *e = METH(METH(x, "unsqueeze", "(i)", dim + 1), "expand", "(O)", KEEP(shape));
        result = TAKE(METH(METH(e, "contiguous", NULL), "flatten", "(ii)", dim, dim + 1));
        goto done;
    }
    CtTensorObject *r = tensor_arg(repeats, "repeat_interleave", "repeats", 1);
    if (r == NULL || (counts = repeats_on_host(r)) == NULL) {
        goto done;
    }
    int64_t n_r = ct_numel(counts);
    if (r->ndim == 1 && n_r != extent) {
        PyErr_Format(PyExc_RuntimeError,
                     "repeats must have the same size as input along dim, but got repeats.size(0) = %lld and "
                     "input.size(%d) = %lld",
                     (long long)n_r, dim, (long long)extent);
        goto done;
    }
    int64_t total;
    index = repeat_index((const int64_t *)ct_data(counts), n_r, extent, ct_device_of(t), &total);
    if (index != NULL && check_output_size(output_size, total) == 0) {
        result = TAKE(METH(x, "index_select", "(iO)", dim, index));
    }
done:
    Py_XDECREF(index);
    Py_XDECREF(counts);
    arena_free(arena);
    return result;
}

static PyObject *tensor_repeat_interleave(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"repeats", "dim", "*output_size", NULL};
    PyObject *a[3];
    if (ct_parse_args("repeat_interleave", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    return repeat_interleave_impl(self, a[0], a[1], a[2]);
}

/* torch.repeat_interleave(input, repeats, dim=None, *, output_size=None) or (repeats, *, output_size=None) */
static PyObject *py_repeat_interleave(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "repeats", "dim", "*output_size", NULL};
    PyObject *a[4];
    if (ct_parse_args("repeat_interleave", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    if (a[1] == NULL && a[2] == NULL) {
        return repeat_interleave_impl(NULL, a[0], NULL, a[3]);
    }
    if (tensor_arg(a[0], "repeat_interleave", "input", 1) == NULL) {
        return NULL;
    }
    return repeat_interleave_impl(a[0], a[1], a[2], a[3]);
}

/* ============================================================================================
 * tensor_split, hsplit, vsplit, dsplit
 * ============================================================================================ */

/* The pieces [bounds[i], bounds[i + 1]) of t along dim (n + 1 bounds, clamped), as narrow views. */
static PyObject *split_at(PyObject *t, int dim, const int64_t *bounds, Py_ssize_t n)
{
    PyObject *tuple = PyTuple_New(n);
    for (Py_ssize_t i = 0; tuple != NULL && i < n; i++) {
        int64_t len = bounds[i + 1] > bounds[i] ? bounds[i + 1] - bounds[i] : 0;
        PyObject *piece = PyObject_CallMethod(t, "narrow", "(iLL)", dim, (long long)bounds[i], (long long)len);
        if (piece == NULL) {
            Py_CLEAR(tuple);
            break;
        }
        PyTuple_SET_ITEM(tuple, i, piece);
    }
    return tuple;
}

static PyObject *split_sections(PyObject *t, int dim, int64_t sections)
{
    if (sections <= 0) {
        PyErr_Format(PyExc_RuntimeError, "number of sections must be larger than 0, got %lld", (long long)sections);
        return NULL;
    }
    int64_t size = CT_TENSOR(t)->sizes[dim], *bounds = PyMem_Malloc(sizeof(int64_t) * (size_t)(sections + 1));
    if (bounds == NULL) {
        return PyErr_NoMemory();
    }
    bounds[0] = 0;
    for (int64_t i = 0; i < sections; i++) { /* the first size % sections pieces take one more */
        bounds[i + 1] = bounds[i] + size / sections + (i < size % sections ? 1 : 0);
    }
    PyObject *r = split_at(t, dim, bounds, (Py_ssize_t)sections);
    PyMem_Free(bounds);
    return r;
}

/* indices as split points (Python slice bounds: negative counts from the end, clamped) */
static PyObject *split_indices(PyObject *t, int dim, const int64_t *indices, Py_ssize_t n)
{
    int64_t size = CT_TENSOR(t)->sizes[dim], *bounds = PyMem_Malloc(sizeof(int64_t) * (size_t)(n + 2));
    if (bounds == NULL) {
        return PyErr_NoMemory();
    }
    bounds[0] = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t b = indices[i] < 0 ? indices[i] + size : indices[i];
        bounds[i + 1] = b < 0 ? 0 : b > size ? size : b;
    }
    bounds[n + 1] = size;
    /* piece i is [bound_i, bound_{i+1}): a split point before the previous one gives an empty
     * piece, and the next piece starts at the earlier point itself (as PyTorch's slices) */
    PyObject *r = split_at(t, dim, bounds, n + 1);
    PyMem_Free(bounds);
    return r;
}

/* tensor_split(input, indices_or_sections, dim) once input and dim are checked */
static PyObject *tensor_split_impl(PyObject *t, PyObject *spec, int dim)
{
    if (is_int_arg(spec)) {
        int64_t sections;
        return ct_arg_int64(spec, &sections) < 0 ? NULL : split_sections(t, dim, sections);
    }
    if (spec != NULL && CtTensor_Check(spec)) {
        CtTensorObject *s = CT_TENSOR(spec);
        if (s->ndim > 1) {
            PyErr_Format(PyExc_RuntimeError,
                         "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                         "one-dimensional tensor, but got a tensor with %d dims",
                         s->ndim);
            return NULL;
        }
        if (s->dtype != CT_I64) {
            PyErr_Format(PyExc_RuntimeError,
                         "tensor_split expected tensor_indices_or_sections to have dtype of long, but got %s",
                         ct_scalar_type_name(s->dtype));
            return NULL;
        }
        CtTensorObject *h = host_long(s);
        if (h == NULL) {
            return NULL;
        }
        const int64_t *v = (const int64_t *)ct_data(h);
        PyObject *r = s->ndim == 0 ? split_sections(t, dim, v[0]) : split_indices(t, dim, v, (Py_ssize_t)ct_numel(h));
        Py_DECREF(h);
        return r;
    }
    if (spec == NULL || (!PyList_Check(spec) && !PyTuple_Check(spec))) {
        PyErr_Format(PyExc_TypeError,
                     "tensor_split(): argument 'indices_or_sections' must be int, tuple of ints or Tensor, not %s",
                     spec ? ct_type_name(spec) : "NoneType");
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(spec);
    int64_t *indices = PyMem_Malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (indices == NULL) {
        return PyErr_NoMemory();
    }
    PyObject *r = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (ct_arg_int64(PySequence_Fast_GET_ITEM(spec, i), &indices[i]) < 0) {
            goto done;
        }
    }
    r = split_indices(t, dim, indices, n);
done:
    PyMem_Free(indices);
    return r;
}

static PyObject *tensor_tensor_split(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"indices_or_sections", "dim", NULL};
    PyObject *a[2];
    CtTensorObject *t = CT_TENSOR(self);
    int64_t d = 0;
    int dim = 0;
    if (ct_parse_args("tensor_split", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
        return NULL;
    }
    if (ct_arg_int64(a[1], &d) < 0 || ct_wrap_dim(d, t->ndim, &dim) < 0) {
        return NULL;
    }
    return tensor_split_impl(self, a[0], dim);
}

/* hsplit / vsplit / dsplit: tensor_split along dim 1 (0 for a 1-d hsplit), 0, 2; an int must
 * divide the dim evenly. */
static PyObject *split_along(const char *name, int min_dims, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    static const char *const names[] = {"indices_or_sections", NULL};
    PyObject *a[1];
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_parse_args(name, args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    if (t->ndim < min_dims) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.%s requires a tensor with at least %d dimension, but got a tensor with %d dimensions!",
                     name, min_dims, t->ndim);
        return NULL;
    }
    int dim = name[0] == 'v' ? 0 : name[0] == 'd' ? 2 : t->ndim == 1 ? 0 : 1;
    if (is_int_arg(a[0])) {
        int64_t sections;
        if (ct_arg_int64(a[0], &sections) < 0) {
            return NULL;
        }
        if (sections != 0 && t->sizes[dim] % sections != 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.%s attempted to split along dimension %d, but the size of the dimension %lld is "
                         "not divisible by the split_size %lld!",
                         name, dim, (long long)t->sizes[dim], (long long)sections);
            return NULL;
        }
    }
    return tensor_split_impl(self, a[0], dim);
}

#define SPLIT_ALONG(name, min_dims)                                                                              \
    static PyObject *tensor_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                                            \
        return split_along(#name, min_dims, self, args, nargs, kwnames);                                         \
    }
SPLIT_ALONG(hsplit, 1)
SPLIT_ALONG(vsplit, 2)
SPLIT_ALONG(dsplit, 3)

/* ============================================================================================
 * ravel, type_as
 * ============================================================================================ */

/* ravel(): contiguous().view(-1) (a view when already contiguous) */
static PyObject *tensor_ravel(PyObject *self, PyObject *unused)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = TAKE(METH(METH(self, "contiguous", NULL), "view", "(i)", -1));
    arena_free(arena);
    return r;
}

/* type_as(other): self in other's dtype, on other's device */
static PyObject *tensor_type_as(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"other", NULL};
    PyObject *a[1];
    CtTensorObject *other;
    if (ct_parse_args("type_as", args, nargs, kwnames, names, 1, a) < 0 ||
        (other = tensor_arg(a[0], "type_as", "other", 1)) == NULL) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = TAKE(METH(self, "to", "(OO)", ATTR(a[0], "device"), ct_dtype_object(other->dtype)));
    arena_free(arena);
    return r;
}

/* ============================================================================================
 * diag_embed, diagflat, fill_diagonal_
 * ============================================================================================ */

/* diag_embed's arguments: offset and the two dims (wrapped for input.ndim + 1 dims). 0 or -1. */
static int diag_embed_args(CtTensorObject *t, PyObject *const *a, int64_t *offset, int *d1, int *d2)
{
    int64_t dim1 = -2, dim2 = -1;
    *offset = 0;
    if (ct_arg_int64(a[0], offset) < 0 || ct_arg_int64(a[1], &dim1) < 0 || ct_arg_int64(a[2], &dim2) < 0 ||
        ct_wrap_dim(dim1, t->ndim + 1, d1) < 0 || ct_wrap_dim(dim2, t->ndim + 1, d2) < 0) {
        return -1;
    }
    if (*d1 == *d2) {
        PyErr_Format(PyExc_RuntimeError, "diagonal dimensions cannot be identical %lld, %lld", (long long)dim1,
                     (long long)dim2);
        return -1;
    }
    return 0;
}

/* zeros with input's last dim laid on the diagonal (offset) of dims d1, d2. Runs with grad mode
 * off (its formula records DiagEmbedBackward0). */
static PyObject *diag_embed_impl(CtTensorObject *t, int64_t offset, int d1, int d2)
{
    int nd = t->ndim + 1;
    if (t->ndim == 0 || nd > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "diag_embed: expected a tensor of 1 to %d dims, got %d", CT_MAX_DIMS - 1,
                     t->ndim);
        return NULL;
    }
    int64_t n = t->sizes[t->ndim - 1] + (offset < 0 ? -offset : offset), sizes[CT_MAX_DIMS];
    for (int i = 0, k = 0; i < nd; i++) {
        sizes[i] = (i == d1 || i == d2) ? n : t->sizes[k++];
    }
    CtTensorObject *z = ct_zeros(nd, sizes, t->dtype, ct_device_of(t));
    if (z == NULL) {
        return NULL;
    }
    PyObject *view = PyObject_CallMethod((PyObject *)z, "diagonal", "(Lii)", (long long)offset, d1, d2);
    PyObject *r = view ? PyObject_CallMethod(view, "copy_", "(O)", (PyObject *)t) : NULL;
    Py_XDECREF(view);
    if (r == NULL) {
        Py_DECREF(z);
        return NULL;
    }
    Py_DECREF(r);
    return (PyObject *)z;
}

static PyObject *tensor_diag_embed(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"offset", "dim1", "dim2", NULL};
    PyObject *a[3];
    int64_t offset;
    int d1, d2;
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_parse_args("diag_embed", args, nargs, kwnames, names, 0, a) < 0 || diag_embed_args(t, a, &offset, &d1, &d2) < 0) {
        return NULL;
    }
    return diag_embed_impl(t, offset, d1, d2);
}

/* diagflat(offset=0): the flattened input on the offset diagonal of a square matrix */
static PyObject *tensor_diagflat(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"offset", NULL};
    PyObject *a[1];
    int64_t offset = 0;
    if (ct_parse_args("diagflat", args, nargs, kwnames, names, 0, a) < 0 || ct_arg_int64(a[0], &offset) < 0) {
        return NULL;
    }
    PyObject *flat = PyObject_CallMethod(self, "reshape", "(i)", -1);
    if (flat == NULL) {
        return NULL;
    }
    PyObject *r = diag_embed_impl(CT_TENSOR(flat), offset, 0, 1);
    Py_DECREF(flat);
    return r;
}

/* fill_diagonal_(fill_value, wrap=False): self[i, i, ...] = fill_value in place; with wrap, a
 * tall matrix's diagonal starts again every cols + 1 rows (NumPy's fill_diagonal). Written
 * through recorded diagonal views, so autograd gives self a CopySlices node. */
static PyObject *tensor_fill_diagonal_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"fill_value", "wrap", NULL};
    PyObject *a[2];
    bool wrap = false;
    CtTensorObject *t = CT_TENSOR(self);
    CtScalar value;
    if (ct_parse_args("fill_diagonal_", args, nargs, kwnames, names, 1, a) < 0 ||
        ct_number_arg("fill_diagonal_", "fill_value", 1, a[0], &value) < 0 || ct_arg_bool(a[1], &wrap) < 0) {
        return NULL;
    }
    if (t->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError, "dimensions must larger than 1");
        return NULL;
    }
    for (int i = 1; t->ndim > 2 && i < t->ndim; i++) {
        if (t->sizes[i] != t->sizes[0]) {
            PyErr_SetString(PyExc_RuntimeError, "all dimensions of input must be of equal length");
            return NULL;
        }
    }
    int64_t rows = t->sizes[0], cols = t->sizes[1];
    int64_t period = (wrap && t->ndim == 2 && rows > cols + 1) ? cols + 1 : rows;
    for (int64_t start = 0; start < rows; start += period) {
        int64_t len = rows - start < cols ? rows - start : cols;
        PyObject *v = PyObject_CallMethod(self, "narrow", "(iLL)", 0, (long long)start, (long long)len);
        while (v != NULL && CT_TENSOR(v)->ndim > 1) {
            Py_SETREF(v, PyObject_CallMethod(v, "diagonal", "(iii)", 0, 0, -1));
        }
        Py_XSETREF(v, v ? PyObject_CallMethod(v, "fill_", "(O)", a[0]) : NULL);
        if (v == NULL) {
            return NULL;
        }
        Py_DECREF(v);
    }
    return Py_NewRef(self);
}

/* ============================================================================================
 * unravel_index
 * ============================================================================================ */

/* unravel_index(indices, shape): the coordinates of flat indices in shape (int64, floored like
 * Python's divmod, so -1 is the last element) */
static PyObject *py_unravel_index(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"indices", "shape", NULL};
    PyObject *a[2];
    CtTensorObject *t;
    if (ct_parse_args("unravel_index", args, nargs, kwnames, names, 2, a) < 0 ||
        (t = tensor_arg(a[0], "unravel_index", "indices", 1)) == NULL) {
        return NULL;
    }
    if (ct_is_floating(t->dtype) || t->dtype == CT_BOOL) {
        PyObject *d = ct_dtype_object(t->dtype);
        PyErr_Format(PyExc_TypeError, "expected 'indices' to be integer dtype, but got %R", d);
        return NULL;
    }
    int64_t shape[CT_MAX_DIMS];
    int n;
    if (is_int_arg(a[1])) {
        n = 1;
        if (ct_arg_int64(a[1], &shape[0]) < 0) {
            return NULL;
        }
    } else if ((n = ct_parse_size_seq(a[1], shape, true)) < 0) {
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (shape[i] < 0) {
            PyObject *tuple = ct_size_object(n, shape), *plain = tuple ? PySequence_Tuple(tuple) : NULL;
            if (plain != NULL) {
                PyErr_Format(PyExc_ValueError, "'shape' cannot have negative values, but got %R", plain);
            }
            Py_XDECREF(tuple);
            Py_XDECREF(plain);
            return NULL;
        }
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *idx = METH(a[0], "to", "(O)", ct_dtype_object(CT_I64));
    PyObject *result = PyTuple_New(n);
    int64_t stride = 1;
    for (int i = n - 1; result != NULL && i >= 0; i--) {
        PyObject *q = stride == 1 ? idx : METH(idx, "floor_divide", "(L)", (long long)stride);
        PyObject *c = shape[i] == 0 ? q : METH(q, "remainder", "(L)", (long long)shape[i]);
        PyObject *owned = TAKE(c);
        if (owned == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyTuple_SET_ITEM(result, i, owned);
        stride *= shape[i];
    }
    arena_free(arena);
    return result;
}

/* ============================================================================================
 * mvlgamma, ldexp, frexp
 * ============================================================================================ */

/* x[..., None] - [0, 1/2, ..., (p-1)/2] in x's float dtype (int inputs: the default float), owned
 * by the arena */
static PyObject *mvlgamma_shifts(CtArena *arena, PyObject *x, int64_t p)
{
    PyObject *xf = MUL(x, NUM(1.0));
    int64_t *steps = PyMem_Malloc(sizeof(int64_t) * (size_t)p);
    if (steps == NULL) {
        arena->failed = true;
        return PyErr_NoMemory();
    }
    for (int64_t i = 0; i < p; i++) {
        steps[i] = i;
    }
    PyObject *ar = KEEP(long_tensor(steps, p, ct_device_of(CT_TENSOR(x))));
    PyMem_Free(steps);
    PyObject *halves = DIV(METH(ar, "to", "(O)", ATTR(xf, "dtype")), NUM(2.0));
    return SUB(METH(xf, "unsqueeze", "(i)", -1), halves);
}

/* mvlgamma(p): sum_i lgamma(x - i/2) + p (p - 1) / 4 log(pi), every x > (p - 1) / 2. Runs with grad
 * mode off (its formula records MvlgammaBackward0). */
static PyObject *mvlgamma_impl(PyObject *x, PyObject *p_obj, const char *fname)
{
    int64_t p;
    if (ct_int_arg(fname, "p", 1, p_obj, &p) < 0) {
        return NULL;
    }
    if (p < 1) {
        PyErr_SetString(PyExc_RuntimeError, "p has to be greater than or equal to 1");
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = NULL, *ok = METH(CMP(x, NUM((double)(p - 1) / 2.0), Py_GT), "all", NULL);
    int truth = ok ? PyObject_IsTrue(ok) : -1;
    if (truth == 0) {
        PyErr_SetString(PyExc_RuntimeError, "All elements must be greater than (p-1)/2");
    }
    if (truth == 1) {
        PyObject *terms = METH(mvlgamma_shifts(arena, x, p), "lgamma", NULL);
        r = TAKE(ADD(METH(terms, "sum", "(i)", -1), NUM((double)(p * (p - 1)) / 4.0 * log(3.14159265358979323846))));
    }
    arena_free(arena);
    return r;
}

static PyObject *tensor_mvlgamma(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"p", NULL};
    PyObject *a[1];
    return ct_parse_args("mvlgamma", args, nargs, kwnames, names, 1, a) < 0 ? NULL : mvlgamma_impl(self, a[0], "mvlgamma");
}

/* mvlgamma_(p): the result written over self (which must hold it: a float tensor) */
static PyObject *tensor_mvlgamma_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"p", NULL};
    PyObject *a[1];
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_parse_args("mvlgamma_", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    if (!ct_is_floating(t->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "result type Float can't be cast to the desired output type %s",
                     ct_scalar_type_name(t->dtype));
        return NULL;
    }
    PyObject *r = mvlgamma_impl(self, a[0], "mvlgamma_");
    if (r == NULL) {
        return NULL;
    }
    int rc = ct_copy_(t, CT_TENSOR(r));
    Py_DECREF(r);
    if (rc < 0) {
        return NULL;
    }
    ct_bump_version(t);
    return Py_NewRef(self);
}

/* ldexp(other[, out]): self * 2 ** other, composed of the recording pow and mul (MulBackward0, as
 * PyTorch's composite); in place: self.mul_(2 ** other) */
static PyObject *ldexp_impl(const char *fname, PyObject *self, PyObject *other, PyObject *out, bool inplace)
{
    if (tensor_arg(other, fname, "other", 2) == NULL) {
        return NULL;
    }
    /* PyTorch's dtype: self and other promoted, integers to the default float; bool exponents
     * have no kernel with a floating self; float16/bfloat16 compute in float */
    CtEwArg ops[2] = {{CT_TENSOR(self)}, {CT_TENSOR(other)}};
    CtDType rt = ct_result_type(2, ops);
    if (ct_is_floating(CT_TENSOR(self)->dtype) && CT_TENSOR(other)->dtype == CT_BOOL) {
        PyErr_Format(PyExc_NotImplementedError, "\"ldexp_%s_exp\" not implemented for 'Bool'",
                     ct_device_of(CT_TENSOR(self)).type == CT_DEV_CPU ? "cpu" : "cuda");
        return NULL;
    }
    rt = ct_is_floating(rt) ? rt : ct_default_float_dtype;
    CtDType compute = rt == CT_F16 || rt == CT_BF16 ? CT_F32 : rt;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *scale = FN("pow", "(dO)", 2.0, METH(other, "to", "(O)", ct_dtype_object(compute))), *r = NULL;
    if (inplace) {
        r = TAKE(METH(self, "mul_", "(O)", scale));
    } else if (out != NULL && out != Py_None) { /* torch.mul(self, scale, out=out) */
        PyObject *kwnames = KEEP(Py_BuildValue("(s)", "out"));
        PyObject *argv[3] = {self, scale, out};
        r = scale && kwnames ? ct_op("mul", argv, 2, kwnames) : NULL;
    } else {
        PyObject *prod = METH(self, "mul", "(O)", scale);
        r = TAKE(compute == rt ? prod : METH(prod, "to", "(O)", ct_dtype_object(rt)));
    }
    arena_free(arena);
    return r;
}

static PyObject *py_ldexp(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "other", "*out", NULL};
    PyObject *a[3];
    if (ct_parse_args("ldexp", args, nargs, kwnames, names, 2, a) < 0 || tensor_arg(a[0], "ldexp", "input", 1) == NULL) {
        return NULL;
    }
    return ldexp_impl("ldexp", a[0], a[1], a[2], false);
}

static PyObject *py_ldexp_(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "other", NULL};
    PyObject *a[2];
    if (ct_parse_args("ldexp_", args, nargs, kwnames, names, 2, a) < 0 || tensor_arg(a[0], "ldexp_", "input", 1) == NULL) {
        return NULL;
    }
    return ldexp_impl("ldexp_", a[0], a[1], NULL, true);
}

static PyObject *tensor_ldexp(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"other", NULL};
    PyObject *a[1];
    return ct_parse_args("ldexp", args, nargs, kwnames, names, 1, a) < 0 ? NULL : ldexp_impl("ldexp", self, a[0], NULL, false);
}

static PyObject *tensor_ldexp_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"other", NULL};
    PyObject *a[1];
    return ct_parse_args("ldexp_", args, nargs, kwnames, names, 1, a) < 0 ? NULL : ldexp_impl("ldexp_", self, a[0], NULL, true);
}

/* frexp(): (mantissa in [0.5, 1) with input's sign, int32 exponent), input = mantissa * 2 ** exponent */
static PyObject *tensor_frexp(PyObject *self, PyObject *unused)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (!ct_is_floating(t->dtype)) {
        PyErr_SetString(PyExc_RuntimeError, "torch.frexp() only supports floating-point dtypes");
        return NULL;
    }
    CtTensorObject *mantissa = ct_unary(CT_EW_FREXP_MANTISSA, t);
    CtTensorObject *e = mantissa ? ct_unary(CT_EW_FREXP_EXPONENT, t) : NULL;
    CtTensorObject *exponent = e ? ct_to(e, CT_I32, ct_device_of(e), false) : NULL;
    Py_XDECREF(e);
    return ct_frexp_result(mantissa, exponent);
}

/* ============================================================================================
 * slice_scatter, select_scatter, diagonal_scatter, vander
 * ============================================================================================ */
enum { SCATTER_SLICE, SCATTER_SELECT, SCATTER_DIAGONAL };

/* The region of t that kind's arguments a (after input, src) name: a new reference. */
static PyObject *scatter_region(int kind, PyObject *t, PyObject *const *a)
{
    if (kind == SCATTER_SELECT) {
        return PyObject_CallMethod(t, "select", "(OO)", a[0], a[1]);
    }
    if (kind == SCATTER_DIAGONAL) {
        int64_t offset = 0, d1 = 0, d2 = 1;
        if (ct_arg_int64(a[0], &offset) < 0 || ct_arg_int64(a[1], &d1) < 0 || ct_arg_int64(a[2], &d2) < 0) {
            return NULL;
        }
        return PyObject_CallMethod(t, "diagonal", "(LLL)", (long long)offset, (long long)d1, (long long)d2);
    }
    int64_t dim = 0;
    int d;
    if (ct_arg_int64(a[0], &dim) < 0 || ct_wrap_dim(dim, CT_TENSOR(t)->ndim, &d) < 0) {
        return NULL;
    }
    PyObject *none = Py_None, *step = a[3] != NULL ? a[3] : none;
    PyObject *key = PyTuple_New(d + 1);
    for (int i = 0; key != NULL && i <= d; i++) {
        PyObject *sl = i < d ? PySlice_New(NULL, NULL, NULL)
                             : PySlice_New(a[1] ? a[1] : none, a[2] ? a[2] : none, step);
        if (sl == NULL) {
            Py_CLEAR(key);
            break;
        }
        PyTuple_SET_ITEM(key, i, sl);
    }
    PyObject *view = key ? PyObject_GetItem(t, key) : NULL;
    Py_XDECREF(key);
    return view;
}

/* input with src written over the region (a copy: input is untouched). Runs with grad mode off
 * (its formula records SliceScatterBackward0 / SelectScatterBackward0 / DiagonalScatterBackward0). */
static PyObject *scatter_into(const char *fname, int kind, PyObject *input, PyObject *src, PyObject *const *a)
{
    CtTensorObject *s;
    if (tensor_arg(input, fname, "input", 1) == NULL || (s = tensor_arg(src, fname, "src", 2)) == NULL) {
        return NULL;
    }
    PyObject *out = PyObject_CallMethod(input, "clone", NULL);
    PyObject *region = out ? scatter_region(kind, out, a) : NULL, *r = NULL;
    if (region == NULL) {
        goto done;
    }
    CtTensorObject *v = CT_TENSOR(region);
    if (v->ndim != s->ndim || memcmp(v->sizes, s->sizes, sizeof(int64_t) * v->ndim) != 0) {
        char want[256], got[256];
        ct_format_sizes(got, sizeof(got), s->ndim, s->sizes);
        ct_format_sizes(want, sizeof(want), v->ndim, v->sizes);
        PyErr_Format(PyExc_RuntimeError,
                     "expected src to have a size equal to the slice of self. src size = %s, slice size = %s", got, want);
        goto done;
    }
    r = PyObject_CallMethod(region, "copy_", "(O)", src);
    Py_XSETREF(r, r ? Py_NewRef(out) : NULL);
done:
    Py_XDECREF(region);
    Py_XDECREF(out);
    return r;
}

#define SCATTER_ENTRY(name, KIND, ...)                                                                          \
    static PyObject *tensor_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                                           \
        static const char *const names[] = {__VA_ARGS__, NULL};                                                 \
        PyObject *a[5] = {NULL};                                                                                \
        int nrequired = KIND == SCATTER_SELECT ? 3 : 1;                                                         \
        if (ct_parse_args(#name, args, nargs, kwnames, names, nrequired, a) < 0) {                              \
            return NULL;                                                                                        \
        }                                                                                                       \
        return scatter_into(#name, KIND, self, a[0], a + 1);                                                    \
    }
SCATTER_ENTRY(slice_scatter, SCATTER_SLICE, "src", "dim", "start", "end", "step")
SCATTER_ENTRY(select_scatter, SCATTER_SELECT, "src", "dim", "index")
SCATTER_ENTRY(diagonal_scatter, SCATTER_DIAGONAL, "src", "offset", "dim1", "dim2")

/* masked_scatter(mask, source): source's leading elements written, in order, where mask (broadcast)
 * is true: a copy over the broadcast shape, or self in place. Composed of the recording
 * index_put (boolean-mask __setitem__). */
static PyObject *masked_scatter_impl(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                                     bool inplace)
{
    static const char *const names[] = {"mask", "source", NULL};
    const char *fname = inplace ? "masked_scatter_" : "masked_scatter";
    PyObject *a[2];
    CtTensorObject *mask, *source, *t = CT_TENSOR(self);
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0 || (mask = tensor_arg(a[0], fname, "mask", 1)) == NULL ||
        (source = tensor_arg(a[1], fname, "source", 2)) == NULL) {
        return NULL;
    }
    if (inplace && ct_check_no_internal_overlap(t) < 0) { /* PyTorch's masked_scatter_ refuses an expanded self */
        return NULL;
    }
    if (mask->dtype != CT_BOOL) {
        PyErr_Format(PyExc_RuntimeError, "masked_scatter_ only supports boolean masks, but got mask with dtype %s",
                     ct_scalar_type_name(mask->dtype));
        return NULL;
    }
    if (source->dtype != t->dtype) {
        PyErr_Format(PyExc_RuntimeError, "masked_scatter: expected self and source to have same dtypes but got%s and %s",
                     ct_scalar_type_name(t->dtype), ct_scalar_type_name(source->dtype));
        return NULL;
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = t->ndim;
    memcpy(shape, t->sizes, sizeof(int64_t) * t->ndim);
    if (!inplace && (nd = ct_broadcast_shapes(t->ndim, t->sizes, mask->ndim, mask->sizes, shape)) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *size = KEEP(ct_size_object(nd, shape)), *r = NULL;
    PyObject *out = inplace ? self : METH(METH(METH(self, "expand", "(O)", size), "clone", NULL), "contiguous", NULL);
    PyObject *m = METH(a[0], "expand", "(O)", size);
    PyObject *count = METH(METH(m, "sum", NULL), "item", NULL);
    long long n = count ? PyLong_AsLongLong(count) : -1;
    if (n < 0 || PyErr_Occurred()) {
        goto done;
    }
    if (n > ct_numel(source)) {
        PyErr_SetString(PyExc_RuntimeError, "Number of elements of source < number of ones in mask");
        goto done;
    }
    PyObject *values = METH(METH(a[1], "reshape", "(i)", -1), "narrow", "(iiL)", 0, 0, n);
    if (values != NULL && PyObject_SetItem(out, m, values) == 0) {
        r = Py_NewRef(out);
    }
done:
    arena_free(arena);
    return r;
}

static PyObject *tensor_masked_scatter(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return masked_scatter_impl(self, args, nargs, kwnames, false);
}

static PyObject *tensor_masked_scatter_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return masked_scatter_impl(self, args, nargs, kwnames, true);
}

/* put_(index, source, accumulate=False): self.flatten()[index] = source (or +=), index in
 * [-numel, numel); through the recording index_put_ on the flat view (a non-contiguous self is
 * written back from a flat copy). put: the same on a clone. */
static PyObject *put_impl(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, bool inplace)
{
    static const char *const names[] = {"index", "source", "accumulate", NULL};
    PyObject *a[3];
    bool accumulate = false;
    CtTensorObject *index, *source, *t = CT_TENSOR(self);
    const char *fname = inplace ? "put_" : "put";
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0 || (index = tensor_arg(a[0], fname, "index", 1)) == NULL ||
        (source = tensor_arg(a[1], fname, "source", 2)) == NULL || ct_arg_bool(a[2], &accumulate) < 0) {
        return NULL;
    }
    if (index->dtype != CT_I64) {
        PyErr_Format(PyExc_RuntimeError, "put_(): Expected a long tensor for index, but got %s",
                     ct_scalar_type_name(index->dtype));
        return NULL;
    }
    if (source->dtype != t->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "put_(): self and source expected to have the same dtype, but got self.dtype = %s and "
                     "source.dtype = %s",
                     ct_scalar_type_name(t->dtype), ct_scalar_type_name(source->dtype));
        return NULL;
    }
    if (ct_numel(source) != ct_numel(index)) {
        PyErr_Format(PyExc_IndexError,
                     "put_(): Expected source and index to have the same number of elements, but got "
                     "source.numel() = %lld, index.numel() = %lld",
                     (long long)ct_numel(source), (long long)ct_numel(index));
        return NULL;
    }
    int64_t numel = ct_numel(t);
    CtTensorObject *host = host_long(index);
    if (host == NULL) {
        return NULL;
    }
    const int64_t *iv = (const int64_t *)ct_data(host);
    for (int64_t i = 0; i < ct_numel(host); i++) {
        if (iv[i] < -numel || iv[i] >= numel) {
            PyErr_Format(PyExc_IndexError, "out of range: tried to access index %lld on a tensor of %lld elements.",
                         (long long)iv[i], (long long)numel);
            Py_DECREF(host);
            return NULL;
        }
    }
    Py_DECREF(host);
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *target = inplace ? self : METH(self, "clone", NULL), *r = NULL;
    bool flat_view = target != NULL && ct_is_contiguous(CT_TENSOR(target));
    PyObject *flat = METH(target, "reshape", "(i)", -1);
    PyObject *key = KEEP(PyTuple_Pack(1, METH(a[0], "reshape", "(i)", -1)));
    PyObject *done = key ? METH(flat, "index_put_", "(OOO)", key, METH(a[1], "reshape", "(i)", -1),
                                accumulate ? Py_True : Py_False)
                         : NULL;
    if (done != NULL && !flat_view) {
        done = METH(target, "copy_", "(O)", METH(flat, "view", "(O)", ATTR(target, "shape")));
    }
    if (done != NULL) {
        r = Py_NewRef(target);
    }
    arena_free(arena);
    return r;
}

static PyObject *tensor_put_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return put_impl(self, args, nargs, kwnames, true);
}

static PyObject *tensor_put(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return put_impl(self, args, nargs, kwnames, false);
}

/* special_ndtr(input, *, out=None): the standard normal CDF, composed as PyTorch's
 * (1 + erf(x / sqrt 2)) * 0.5 (MulBackward1 records its gradient) */
static PyObject *py_special_ndtr(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "*out", NULL};
    PyObject *a[2];
    CtTensorObject *x, *out;
    if (ct_parse_args("special_ndtr", args, nargs, kwnames, names, 1, a) < 0 ||
        (x = tensor_arg(a[0], "special_ndtr", "input", 1)) == NULL || ct_arg_out(a[1], "special_ndtr", &out) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = MUL(ADD(METH(MUL((PyObject *)x, NUM(M_SQRT1_2)), "erf", NULL), NUM(1.0)), NUM(0.5));
    PyObject *result = NULL;
    if (r != NULL) {
        CtFactoryOptions opt = {.out = (PyObject *)out};
        result = ct_factory_finish("special_ndtr", CT_TENSOR(Py_NewRef(r)), &opt);
    }
    arena_free(arena);
    return result;
}

/* ============================================================================================
 * multinomial(input, num_samples, replacement=False, *, generator=None, out=None): in float64
 * from the generator's uniforms, so that every device draws the same samples. With replacement,
 * the inverse CDF: each uniform scaled by its row's total is looked up in the row's running sum
 * (searchsorted, right: a zero-probability category is never drawn). Without, the exponential
 * race as PyTorch: the num_samples largest p / E (E = -log U ~ Exp(1)), in decreasing order.
 * ============================================================================================ */
/* PyTorch's checks of the probabilities: one value read back when they pass (on CUDA, one wait), a
 * second only to tell the two errors apart. */
static int multinomial_check(CtArena *arena, PyObject *p2)
{
    PyObject *all_ok = METH(METH(METH(p2, "isfinite", NULL), "logical_and", "(O)", CMP(p2, NUM(0.0), Py_GE)), "all",
                            NULL);
    PyObject *sums_ok = METH(CMP(METH(p2, "sum", "(i)", -1), NUM(0.0), Py_GT), "all", NULL);
    PyObject *both = METH(all_ok, "logical_and", "(O)", sums_ok);
    int pass = both != NULL ? PyObject_IsTrue(both) : -1;
    if (pass != 0) {
        return pass < 0 ? -1 : 0;
    }
    int good = PyObject_IsTrue(all_ok);
    if (good < 0) {
        return -1;
    }
    PyErr_SetString(PyExc_RuntimeError, good ? "invalid multinomial distribution (sum of probabilities <= 0)"
                                             : "probability tensor contains either `inf`, `nan` or element < 0");
    return -1;
}

static PyObject *tensor_multinomial(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"num_samples", "replacement", "*generator", "*out", NULL};
    PyObject *a[4];
    CtTensorObject *p = CT_TENSOR(self), *out;
    int64_t n;
    bool replacement = false;
    if (ct_parse_args("multinomial", args, nargs, kwnames, names, 1, a) < 0 || ct_arg_int64(a[0], &n) < 0 ||
        ct_arg_bool(a[1], &replacement) < 0 || ct_arg_out(a[3], "multinomial", &out) < 0) {
        return NULL;
    }
    if (p->ndim != 1 && p->ndim != 2) {
        PyErr_SetString(PyExc_RuntimeError, "prob_dist must be 1 or 2 dim");
        return NULL;
    }
    if (!ct_is_floating(p->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "multinomial only supports floating-point dtypes for input, got: %s",
                     ct_scalar_type_name(p->dtype));
        return NULL;
    }
    if (n <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "cannot sample n_sample <= 0 samples");
        return NULL;
    }
    const int64_t C = p->sizes[p->ndim - 1], R = p->ndim == 2 ? p->sizes[0] : 1;
    if (!replacement && n > C) {
        PyErr_SetString(PyExc_RuntimeError, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
        return NULL;
    }
    if (C > ((int64_t)1 << 24)) {
        PyErr_SetString(PyExc_RuntimeError, "number of categories cannot exceed 2^24");
        return NULL;
    }
    const CtDevice device = ct_device_of(p);
    CtGeneratorObject *g = ct_generator_arg(a[2], device, "multinomial");
    if (g == NULL) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *result = NULL, *idx = NULL;
    PyObject *p2 = METH(METH(METH(self, "detach", NULL), "double", NULL), "reshape", "(LL)", (long long)R,
                        (long long)C);
    if (arena->failed || (R > 0 && multinomial_check(arena, p2) < 0)) {
        goto done;
    }
    int64_t usz[2] = {R, replacement ? n : C};
    PyObject *u = KEEP((PyObject *)ct_rand(2, usz, CT_F64, device, g));
    if (replacement) {
        PyObject *cdf = METH(p2, "cumsum", "(i)", -1);
        PyObject *target = MUL(u, METH(cdf, "narrow", "(iLL)", -1, (long long)(C - 1), 1LL));
        PyObject *found = arena->failed ? NULL
                                        : KEEP((PyObject *)ct_searchsorted(CT_TENSOR(cdf), CT_TENSOR(target), NULL,
                                                                           false, true, NULL));
        idx = METH(found, "clamp_max", "(L)", (long long)(C - 1)); /* a target rounded up to the total */
    } else {
        PyObject *keys = DIV(p2, NEG(METH(u, "log", NULL)));
        PyObject *top = METH(keys, "topk", "(L)", (long long)n);
        idx = top != NULL ? PyTuple_GetItem(top, 1) : NULL;
    }
    if (idx != NULL && p->ndim == 1) {
        idx = METH(idx, "reshape", "(L)", (long long)n);
    }
    if (idx != NULL && !arena->failed) {
        CtFactoryOptions opt = {.out = (PyObject *)out};
        result = ct_factory_finish("multinomial", CT_TENSOR(Py_NewRef(idx)), &opt);
    }
done:
    arena_free(arena);
    return result;
}

/* vander: x's powers 0 .. N - 1 along a new last dim (decreasing unless increasing), composed as
 * a cumprod of [1, x, x, ...] like PyTorch; linalg.vander takes batches and N > 1. */
static PyObject *vander_impl(PyObject *x, PyObject *n_obj, bool increasing, bool linalg)
{
    CtTensorObject *t = tensor_arg(x, linalg ? "linalg_vander" : "vander", "x", 1);
    if (t == NULL) {
        return NULL;
    }
    if (!linalg && t->ndim != 1) {
        PyErr_SetString(PyExc_RuntimeError, "x must be a one-dimensional tensor.");
        return NULL;
    }
    if (linalg && (t->dtype == CT_F16 || t->dtype == CT_BF16 || t->dtype == CT_BOOL)) {
        PyErr_Format(PyExc_NotImplementedError,
                     "linalg.vander supports floating point, complex, and integer tensors, but got %s",
                     ct_scalar_type_name(t->dtype));
        return NULL;
    }
    int64_t n = t->ndim > 0 ? t->sizes[t->ndim - 1] : 1;
    if (ct_arg_int64(n_obj, &n) < 0) {
        return NULL;
    }
    if (linalg && n <= 1) {
        PyErr_SetString(PyExc_RuntimeError, "N must be greater than 1.");
        return NULL;
    }
    if (n < 0) {
        PyErr_SetString(PyExc_RuntimeError, "N must be non-negative.");
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *col = METH(x, "unsqueeze", "(i)", -1), *r;
    if (n == 0) {
        r = METH(col, "narrow", "(iii)", -1, 0, 0);
    } else {
        PyObject *one = METH(col, "new_ones", "(O)", ATTR(col, "shape")); /* x^0, in x's dtype */
        PyObject *pieces = KEEP(PyList_New(0));
        if (pieces != NULL && one != NULL && PyList_Append(pieces, one) == 0) {
            for (int64_t k = 1; k < n; k++) {
                if (PyList_Append(pieces, col) < 0) {
                    arena->failed = true;
                    break;
                }
            }
        }
        r = METH(FN("cat", "(Oi)", pieces, -1), "cumprod", "(i)", -1);
        if (!increasing) {
            r = METH(r, "flip", "((i))", -1);
        }
    }
    r = TAKE(r);
    arena_free(arena);
    return r;
}

static PyObject *py_vander(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"x", "N", "increasing", NULL};
    PyObject *a[3];
    bool increasing = false;
    if (ct_parse_args("vander", args, nargs, kwnames, names, 1, a) < 0 || ct_arg_bool(a[2], &increasing) < 0) {
        return NULL;
    }
    return vander_impl(a[0], a[1], increasing, false);
}

static PyObject *py_linalg_vander(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"x", "*N", NULL};
    PyObject *a[2];
    return ct_parse_args("linalg_vander", args, nargs, kwnames, names, 1, a) < 0 ? NULL : vander_impl(a[0], a[1], true, true);
}

/* ============================================================================================
 * combinations: the r-element combinations of a 1-d input, as PyTorch, in lexicographic index
 * order; the index tuples are built on the host, then one advanced index (IndexBackward0) gathers
 * them on the input's device.
 * ============================================================================================ */
/* C(a, b) (a >= b >= 0) into *out; -1 with PyTorch's overflow message past int64. */
static int binomial(int64_t a, int64_t b, int64_t *out)
{
    b = b < a - b ? b : a - b;
    int64_t r = 1;
    for (int64_t i = 1; i <= b; i++) {
        /* r * (a - b + i) / i is exact: divide out gcd(r, i) first, the rest of i divides a - b + i */
        int64_t x = a - b + i, g = r, h = i;
        while (h != 0) {
            int64_t t = g % h;
            g = h;
            h = t;
        }
        int64_t f = x / (i / g);
        if (r / g > INT64_MAX / f) {
            PyErr_SetString(PyExc_RuntimeError, "numel: integer multiplication overflow");
            return -1;
        }
        r = r / g * f;
    }
    *out = r;
    return 0;
}

/* The (count, r) int64 host tensor of every r-combination of 0..n-1 (with repeats when
 * with_replacement), rows in lexicographic order. New reference. */
static CtTensorObject *combination_indices(int64_t n, int64_t r, bool with_replacement)
{
    int64_t count;
    if (binomial(with_replacement ? n + r - 1 : n, r, &count) < 0) {
        return NULL;
    }
    if (n == 0 || (!with_replacement && r > n)) {
        count = 0;
    }
    int64_t sizes[2] = {count, r};
    CtTensorObject *idx = ct_empty(2, sizes, CT_I64, ct_cpu());
    if (idx == NULL || count == 0) {
        return idx;
    }
    int64_t *row = (int64_t *)ct_data(idx); /* (count, r) */
    for (int64_t j = 0; j < r; j++) {
        row[j] = with_replacement ? 0 : j;
    }
    for (int64_t k = 1; k < count; k++, row += r) {
        /* the next combination: raise the rightmost entry that can rise, reset the ones after it */
        int64_t j = r - 1;
        while (row[j] == (with_replacement ? n - 1 : n - r + j)) {
            j--;
        }
        memcpy(row + r, row, sizeof(int64_t) * (size_t)j);
        row[r + j] = row[j] + 1;
        for (int64_t q = j + 1; q < r; q++) {
            row[r + q] = with_replacement ? row[r + j] : row[r + q - 1] + 1;
        }
    }
    return idx;
}

static PyObject *py_combinations(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "r", "with_replacement", NULL};
    PyObject *a[3];
    int64_t r = 2;
    CtTensorObject *t;
    if (ct_parse_args("combinations", args, nargs, kwnames, names, 1, a) < 0 ||
        (t = tensor_arg(a[0], "combinations", "input", 1)) == NULL ||
        (a[1] != NULL && ct_int_arg("combinations", "r", 2, a[1], &r) < 0)) {
        return NULL;
    }
    if (a[2] != NULL && !PyBool_Check(a[2])) {
        PyErr_Format(PyExc_TypeError, "combinations(): argument 'with_replacement' (position 3) must be bool, not %s",
                     ct_type_name(a[2]));
        return NULL;
    }
    if (t->ndim != 1) {
        char shape[256];
        ct_format_sizes(shape, sizeof(shape), t->ndim, t->sizes);
        PyErr_Format(PyExc_RuntimeError, "Expect a 1D vector, but got shape %s", shape);
        return NULL;
    }
    if (r < 0) {
        PyErr_Format(PyExc_RuntimeError, "Expect a non-negative number, but got %lld", (long long)r);
        return NULL;
    }
    if (r == 0) { /* PyTorch: an empty vector, outside the graph */
        int64_t zero = 0;
        return (PyObject *)ct_empty(1, &zero, t->dtype, ct_device_of(t));
    }
    CtTensorObject *host = combination_indices(t->sizes[0], r, a[2] == Py_True);
    CtTensorObject *idx = host ? ct_to(host, CT_I64, ct_device_of(t), false) : NULL;
    PyObject *result = idx ? PyObject_GetItem((PyObject *)t, (PyObject *)idx) : NULL;
    Py_XDECREF(host);
    Py_XDECREF(idx);
    return result;
}

/* ============================================================================================
 * trapezoid, trapz, cumulative_trapezoid
 * ============================================================================================ */

/* The trapezoid rule along dim: sum (or cumsum) of dx (y[i] + y[i+1]) / 2, dx the spacing
 * (a number) or x's differences (x 1-d along dim, or shaped like y). Composed of recording ops. */
static PyObject *trapezoid_impl(const char *fname, PyObject *y, PyObject *x, PyObject *dx_obj, PyObject *dim_obj,
                                bool cumulative)
{
    CtTensorObject *yt = tensor_arg(y, fname, "y", 1);
    int64_t d = -1;
    int dim;
    double dx = 1.0;
    if (yt == NULL || ct_arg_int64(dim_obj, &d) < 0 || ct_wrap_dim(d, yt->ndim, &dim) < 0 ||
        ct_arg_double(dx_obj, &dx) < 0) {
        return NULL;
    }
    CtTensorObject *xt = NULL;
    if (x != NULL && x != Py_None && (xt = tensor_arg(x, fname, "x", 2)) == NULL) {
        return NULL;
    }
    int64_t n = yt->ndim == 0 ? 1 : yt->sizes[dim];
    if (xt != NULL && xt->ndim == 1 && xt->sizes[0] != n) {
        PyErr_Format(PyExc_RuntimeError, "%s: There must be one `x` value for each sample point", fname);
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r;
    if (n == 0) { /* no intervals: zeros of the reduced shape (an empty cumulative result) */
        r = cumulative ? MUL(y, NUM(0.0)) : MUL(METH(y, "sum", "(i)", dim), NUM(0.0));
        goto done;
    }
    PyObject *pair = ADD(METH(y, "narrow", "(iLL)", dim, 0LL, (long long)(n - 1)),
                         METH(y, "narrow", "(iLL)", dim, 1LL, (long long)(n - 1))); /* y[i] + y[i+1] */
    if (xt == NULL && !cumulative) { /* (sum(y) - (y[0] + y[-1]) / 2) dx, as PyTorch */
        PyObject *ends = ADD(METH(y, "select", "(ii)", dim, 0), METH(y, "select", "(ii)", dim, -1));
        r = MUL(SUB(METH(y, "sum", "(i)", dim), MUL(ends, NUM(0.5))), NUM(dx));
        goto done;
    }
    PyObject *area;
    if (xt == NULL) {
        area = MUL(pair, NUM(dx / 2.0));
    } else {
        PyObject *spacing = METH(x, "diff", "(ii)", 1, xt->ndim == 1 ? 0 : dim);
        if (xt->ndim == 1 && yt->ndim > 1) { /* along dim: (1, ..., n - 1, ..., 1) */
            PyObject *shape = KEEP(PyTuple_New(yt->ndim));
            for (int i = 0; shape != NULL && i < yt->ndim; i++) {
                PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(i == dim ? n - 1 : 1));
            }
            spacing = METH(spacing, "reshape", "(O)", shape);
        }
        area = DIV(MUL(spacing, pair), NUM(2.0));
    }
    r = cumulative ? METH(area, "cumsum", "(i)", dim) : METH(area, "sum", "(i)", dim);
done:
    r = TAKE(r);
    arena_free(arena);
    return r;
}

/* trapezoid(y, x=None, *, dx=None, dim=-1) */
static PyObject *py_trapezoid(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"y", "x", "*dx", "*dim", NULL};
    PyObject *a[4];
    return ct_parse_args("trapezoid", args, nargs, kwnames, names, 1, a) < 0
               ? NULL
               : trapezoid_impl("trapezoid", a[0], a[1], a[2], a[3], false);
}

/* trapz(y, x, *, dim=-1) or trapz(y, *, dx=1, dim=-1) */
static PyObject *py_trapz(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"y", "x", "*dx", "*dim", NULL};
    PyObject *a[4];
    return ct_parse_args("trapz", args, nargs, kwnames, names, 1, a) < 0
               ? NULL
               : trapezoid_impl("trapz", a[0], a[1], a[2], a[3], false);
}

/* cumulative_trapezoid(y, x=None, *, dx=None, dim=-1) */
static PyObject *py_cumulative_trapezoid(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"y", "x", "*dx", "*dim", NULL};
    PyObject *a[4];
    return ct_parse_args("cumulative_trapezoid", args, nargs, kwnames, names, 1, a) < 0
               ? NULL
               : trapezoid_impl("cumulative_trapezoid", a[0], a[1], a[2], a[3], true);
}

/* ============================================================================================
 * window functions
 * ============================================================================================ */
enum { WIN_HANN, WIN_HAMMING, WIN_BLACKMAN, WIN_BARTLETT, WIN_KAISER };

/* fname(window_length, periodic=True, [alpha, beta | beta,] *, dtype, layout, device,
 * requires_grad): the window of length L computed in double on the host (a periodic window is
 * the symmetric one of L + 1 points without its last), then cast and moved. */
static PyObject *window(const char *fname, int kind, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names_hamming[] = {"window_length", "periodic", "alpha", "beta", "*dtype", "*layout",
                                                "*device", "*pin_memory", "*requires_grad", NULL};
    static const char *const names_kaiser[] = {"window_length", "periodic", "beta", "*dtype", "*layout", "*device",
                                               "*pin_memory", "*requires_grad", NULL};
    static const char *const names_plain[] = {"window_length", "periodic", "*dtype", "*layout", "*device",
                                              "*pin_memory", "*requires_grad", NULL};
    int nparams = kind == WIN_HAMMING ? 2 : kind == WIN_KAISER ? 1 : 0;
    const char *const *names = kind == WIN_HAMMING ? names_hamming : kind == WIN_KAISER ? names_kaiser : names_plain;
    PyObject *a[9] = {NULL};
    int64_t length;
    bool periodic = true;
    double p0 = kind == WIN_HAMMING ? 0.54 : 12.0, p1 = 0.46;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0 || ct_int_arg(fname, "window_length", 1, a[0], &length) < 0 ||
        ct_arg_bool(a[1], &periodic) < 0 || (nparams > 0 && ct_arg_double(a[2], &p0) < 0) ||
        (nparams > 1 && ct_arg_double(a[3], &p1) < 0)) {
        return NULL;
    }
    PyObject *const *opts = a + 2 + nparams;
    PyObject *kw[CT_FACTORY_NKW] = {NULL, opts[0], opts[1], opts[2], opts[3], opts[4], NULL};
    CtFactoryOptions opt;
    if (ct_factory_options(fname, kw, &opt) < 0) {
        return NULL;
    }
    CtDType dtype = opt.has_dtype ? opt.dtype : ct_default_float_dtype;
    if (!ct_is_floating(dtype)) {
        PyErr_Format(PyExc_RuntimeError, "%s expects floating point dtypes, got: %s", fname, ct_scalar_type_name(dtype));
        return NULL;
    }
    if (length < 0) {
        PyErr_Format(PyExc_RuntimeError, "%s requires non-negative window_length, got window_length=%lld", fname,
                     (long long)length);
        return NULL;
    }
    int64_t sizes[1] = {length};
    CtTensorObject *host = ct_empty(1, sizes, CT_F64, ct_cpu());
    if (host == NULL) {
        return NULL;
    }
    double *w = (double *)ct_data(host), span = (double)(periodic ? length : length - 1); /* N - 1 */
    for (int64_t i = 0; i < length; i++) {
        double phase = span > 0 ? 2.0 * 3.14159265358979323846 * (double)i / span : 0.0;
        switch (kind) {
        case WIN_HANN:
            w[i] = 0.5 - 0.5 * cos(phase);
            break;
        case WIN_HAMMING:
            w[i] = p0 - p1 * cos(phase);
            break;
        case WIN_BLACKMAN:
            w[i] = 0.42 - 0.5 * cos(phase) + 0.08 * cos(2.0 * phase);
            break;
        case WIN_BARTLETT:
            w[i] = span > 0 ? 1.0 - fabs(2.0 * (double)i / span - 1.0) : 1.0;
            break;
        default: { /* kaiser: I0(beta sqrt(1 - (2i / (N - 1) - 1)^2)) / I0(beta) */
            double t = span > 0 ? 2.0 * (double)i / span - 1.0 : 0.0;
            w[i] = ct_sm_bessel_i(p0 * sqrt(fmax(0.0, 1.0 - t * t)), 0) / ct_sm_bessel_i(p0, 0);
        }
        }
        if (length == 1) {
            w[i] = 1.0;
        }
    }
    CtTensorObject *t = ct_to(host, dtype, opt.device, false);
    Py_DECREF(host);
    return t == NULL ? NULL : ct_factory_finish(fname, t, &opt);
}

#define WINDOW(name, KIND)                                                                                   \
    static PyObject *py_##name(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)    \
    {                                                                                                        \
        return window(#name, KIND, args, nargs, kwnames);                                                    \
    }
WINDOW(hann_window, WIN_HANN)
WINDOW(hamming_window, WIN_HAMMING)
WINDOW(blackman_window, WIN_BLACKMAN)
WINDOW(bartlett_window, WIN_BARTLETT)
WINDOW(kaiser_window, WIN_KAISER)

/* ============================================================================================
 * backward formulas (ops_more.h)
 * ============================================================================================ */
#define META(i) (&n->meta[(i)])
#define ARG(i) (n->args[(i)] != NULL && n->args[(i)] != Py_None ? n->args[(i)] : NULL)

/* unfold(dimension, size, step): the windows' gradients summed back into their positions with
 * one index_add over the (window, element) pairs, in order. */
int ct_more_bw_unfold(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    const CtTensorMeta *m = META(0);
    long long d = PyLong_AsLongLong(ARG(1)), size = PyLong_AsLongLong(ARG(2)), step = PyLong_AsLongLong(ARG(3));
    if (PyErr_Occurred()) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r;
    if (m->ndim == 0) {
        r = METH(METH(g[0], "sum", NULL), "reshape", "(O)", KEEP(PyTuple_New(0)));
    } else {
        int dim = (int)(d < 0 ? d + m->ndim : d);
        int64_t windows = CT_TENSOR(g[0])->sizes[dim], *idx = PyMem_Malloc(sizeof(int64_t) * (size_t)(windows * size + 1));
        if (idx == NULL) {
            arena_free(arena);
            PyErr_NoMemory();
            return -1;
        }
        for (int64_t w = 0; w < windows; w++) {
            for (int64_t k = 0; k < size; k++) {
                idx[w * size + k] = w * step + k;
            }
        }
        PyObject *index = KEEP(long_tensor(idx, windows * size, ct_device_of(CT_TENSOR(g[0]))));
        PyMem_Free(idx);
        PyObject *gm = METH(METH(g[0], "movedim", "(ii)", -1, dim + 1), "flatten", "(ii)", dim, dim + 1);
        PyObject *z = KEEP((PyObject *)ct_zeros(m->ndim, m->sizes, CT_TENSOR(g[0])->dtype, ct_device_of(CT_TENSOR(g[0]))));
        r = METH(z, "index_add", "(iOO)", dim, index, gm);
    }
    gi[0] = TAKE(r);
    arena_free(arena);
    return gi[0] ? 0 : -1;
}

/* Storage positions (in elements) of every element of a geometry, in row-major order, into idx. */
static void strided_positions(int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset, int64_t *idx)
{
    int64_t numel = 1, at[CT_MAX_DIMS] = {0};
    for (int d = 0; d < ndim; d++) {
        numel *= sizes[d];
    }
    for (int64_t i = 0; i < numel; i++) {
        int64_t p = offset;
        for (int d = 0; d < ndim; d++) {
            p += at[d] * strides[d];
        }
        idx[i] = p;
        for (int d = ndim - 1; d >= 0 && ++at[d] == sizes[d]; d--) {
            at[d] = 0;
        }
    }
}

/* as_strided(input, size, stride, storage_offset): g summed into a buffer over the storage
 * positions it was read from, then read back at input's positions; where input itself overlaps
 * (an expanded input) each position's sum is shared among the elements on it, as PyTorch does. */
int ct_more_bw_as_strided(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtTensorObject *x = ct_node_tensor(n, 0), *gt = CT_TENSOR(g[0]);
    if (x == NULL) {
        return -1;
    }
    int64_t strides[CT_MAX_DIMS], offset = x->offset;
    PyObject *fast = PySequence_Fast(ARG(2), "as_strided: stride");
    if (fast == NULL) {
        return -1;
    }
    for (int d = 0; d < gt->ndim; d++) {
        if (ct_arg_int64(PySequence_Fast_GET_ITEM(fast, d), &strides[d]) < 0) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    if (ARG(3) != NULL && ARG(3) != Py_None && ct_arg_int64(ARG(3), &offset) < 0) {
        return -1;
    }
    int64_t out_n = ct_numel(gt), in_n = ct_numel(x);
    int64_t *idx = PyMem_Malloc(sizeof(int64_t) * (size_t)(out_n + in_n + 1)), span = 1;
    if (idx == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    strided_positions(gt->ndim, gt->sizes, strides, offset, idx);
    strided_positions(x->ndim, x->sizes, x->strides, x->offset, idx + out_n);
    for (int64_t i = 0; i < out_n + in_n; i++) {
        span = idx[i] + 1 > span ? idx[i] + 1 : span;
    }
    CtDevice device = ct_device_of(gt);
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *out_pos = KEEP(long_tensor(idx, out_n, device)), *in_pos = KEEP(long_tensor(idx + out_n, in_n, device));
    PyMem_Free(idx);
    int64_t flat[1] = {span};
    PyObject *buffer = KEEP((PyObject *)ct_zeros(1, flat, gt->dtype, device));
    PyObject *sums = METH(buffer, "index_add", "(iOO)", 0, out_pos, METH(g[0], "reshape", "(i)", -1));
    PyObject *r = METH(sums, "index_select", "(iO)", 0, in_pos);
    if (r != NULL && !ct_non_overlapping_and_dense(x)) {
        PyObject *ones = KEEP((PyObject *)ct_ones(1, (int64_t[]){in_n}, gt->dtype, device));
        PyObject *count = METH(METH(buffer, "index_add", "(iOO)", 0, in_pos, ones), "index_select", "(iO)", 0, in_pos);
        r = DIV(r, count);
    }
    PyObject *shape = r ? KEEP(ct_size_object(x->ndim, x->sizes)) : NULL;
    gi[0] = TAKE(r ? METH(r, "reshape", "(O)", shape) : NULL);
    arena_free(arena);
    return gi[0] ? 0 : -1;
}

/* transpose_ / swapaxes_ / swapdims_ / t_ / squeeze_ / unsqueeze_: the gradient in self's shape
 * before the op. The node's saved meta is self after it, so squeeze_ / unsqueeze_ (flagged
 * CT_F_CLONE_SELF) read the old shape from the saved copy of self; no fit to the meta. */
int ct_more_bw_inplace_view(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    const char *op = n->formula->op;
    if (op[0] == 't' && op[1] == '_') {
        gi[0] = PyObject_CallMethod(g[0], "t", NULL);
    } else if (strncmp(op, "squeeze_", 8) == 0 || strncmp(op, "unsqueeze_", 10) == 0) {
        CtTensorObject *before = ct_node_tensor(n, 0);
        PyObject *shape = before ? ct_size_object(before->ndim, before->sizes) : NULL;
        gi[0] = shape ? PyObject_CallMethod(g[0], "reshape", "(O)", shape) : NULL;
        Py_XDECREF(shape);
    } else {
        gi[0] = PyObject_CallMethod(g[0], "transpose", "(OO)", ARG(1), ARG(2));
    }
    return gi[0] ? 0 : -1;
}

/* diag_embed(offset, dim1, dim2): the gradient's diagonal */
int ct_more_bw_diag_embed(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    int64_t offset = 0, dim1 = -2, dim2 = -1;
    if (ct_arg_int64(ARG(1), &offset) < 0 || ct_arg_int64(ARG(2), &dim1) < 0 || ct_arg_int64(ARG(3), &dim2) < 0) {
        return -1;
    }
    gi[0] = PyObject_CallMethod(g[0], "diagonal", "(LLL)", (long long)offset, (long long)dim1, (long long)dim2);
    return gi[0] ? 0 : -1;
}

/* diagflat(offset): the gradient's diagonal in input's shape */
int ct_more_bw_diagflat(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    int64_t offset = 0;
    if (ct_arg_int64(ARG(1), &offset) < 0) {
        return -1;
    }
    PyObject *shape = ct_size_object(META(0)->ndim, META(0)->sizes);
    PyObject *d = shape ? PyObject_CallMethod(g[0], "diagonal", "(L)", (long long)offset) : NULL;
    gi[0] = d ? PyObject_CallMethod(d, "reshape", "(O)", shape) : NULL;
    Py_XDECREF(d);
    Py_XDECREF(shape);
    return gi[0] ? 0 : -1;
}

/* mvlgamma(p): g * sum_i digamma(x - i/2) */
int ct_more_bw_mvlgamma(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    int64_t p = 1;
    if (x == NULL || ct_arg_int64(ARG(1), &p) < 0) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *local = METH(METH(mvlgamma_shifts(arena, x, p), "digamma", NULL), "sum", "(i)", -1);
    gi[0] = TAKE(MUL(g[0], local));
    arena_free(arena);
    return gi[0] ? 0 : -1;
}

/* frexp: the mantissa's gradient divided by 2 ** exponent (the exponent has none) */
int ct_more_bw_frexp(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtTensorObject *exponent = ct_node_output(n, 1);
    if (exponent == NULL) {
        return -1;
    }
    if (g[0] == NULL || g[0] == Py_None) {
        gi[0] = (PyObject *)ct_zeros(META(0)->ndim, META(0)->sizes, META(0)->dtype, META(0)->device);
        return gi[0] ? 0 : -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    gi[0] = TAKE(DIV(g[0], METH((PyObject *)exponent, "exp2", NULL)));
    arena_free(arena);
    return gi[0] ? 0 : -1;
}

/* slice_scatter / select_scatter / diagonal_scatter: input's gradient is g with the region
 * zeroed, src's the region of g */
int ct_more_bw_scatter(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    const char *op = n->formula->op;
    int kind = op[0] == 's' && op[1] == 'l' ? SCATTER_SLICE : op[1] == 'e' ? SCATTER_SELECT : SCATTER_DIAGONAL;
    PyObject *a[4] = {n->args[2], n->args[3], n->args[4], n->args[5]};
    for (int i = 0; i < 4; i++) {
        a[i] = a[i] == Py_None ? NULL : a[i];
    }
    PyObject *copy = PyObject_CallMethod(g[0], "clone", NULL);
    PyObject *region = copy ? scatter_region(kind, copy, a) : NULL;
    PyObject *src_grad = region ? PyObject_CallMethod(region, "clone", NULL) : NULL;
    PyObject *zeroed = src_grad ? PyObject_CallMethod(region, "zero_", NULL) : NULL;
    int rc = -1;
    if (zeroed != NULL) {
        gi[0] = Py_NewRef(copy);
        gi[1] = Py_NewRef(src_grad);
        rc = 0;
    }
    Py_XDECREF(zeroed);
    Py_XDECREF(src_grad);
    Py_XDECREF(region);
    Py_XDECREF(copy);
    return rc;
}

/* ============================================================================================
 * tables
 * ============================================================================================ */
CT_FUNCTION_FROM_METHOD(tensor_split, tensor_tensor_split)
CT_FUNCTION_FROM_METHOD(hsplit, tensor_hsplit)
CT_FUNCTION_FROM_METHOD(vsplit, tensor_vsplit)
CT_FUNCTION_FROM_METHOD(dsplit, tensor_dsplit)
CT_FUNCTION_FROM_NOARGS_METHOD(ravel, tensor_ravel)
CT_FUNCTION_FROM_METHOD(diag_embed, tensor_diag_embed)
CT_FUNCTION_FROM_METHOD(diagflat, tensor_diagflat)
static PyObject *mvlgamma_no_out(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return ct_method_as_function("mvlgamma", tensor_mvlgamma, args, nargs, kwnames);
}

static PyObject *function_mvlgamma(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return ct_function_with_out("mvlgamma", mvlgamma_no_out, CT_OUT_RESULT_CAST, args, nargs, kwnames);
}
CT_FUNCTION_FROM_NOARGS_METHOD(frexp, tensor_frexp)
CT_FUNCTION_FROM_METHOD(slice_scatter, tensor_slice_scatter)
CT_FUNCTION_FROM_METHOD(masked_scatter, tensor_masked_scatter)
CT_FUNCTION_FROM_METHOD(put, tensor_put)
CT_FUNCTION_FROM_METHOD(select_scatter, tensor_select_scatter)
CT_FUNCTION_FROM_METHOD(diagonal_scatter, tensor_diagonal_scatter)
CT_FUNCTION_FROM_METHOD(multinomial, tensor_multinomial)

#define CT_M(name, doc) {#name, CT_FASTCALL(tensor_##name), CT_METH_FK, doc}
PyMethodDef ct_more_tensor_methods[] = {
    CT_M(repeat_interleave, "repeat_interleave(repeats, dim=None, *, output_size=None)"),
    CT_M(tensor_split, "tensor_split(indices_or_sections, dim=0): views split into sections or at indices"),
    CT_M(hsplit, "hsplit(indices_or_sections): tensor_split along dim 1 (0 for 1-d)"),
    CT_M(vsplit, "vsplit(indices_or_sections): tensor_split along dim 0"),
    CT_M(dsplit, "dsplit(indices_or_sections): tensor_split along dim 2"),
    {"ravel", tensor_ravel, METH_NOARGS, "ravel(): contiguous flattened (a view when possible)"},
    CT_M(type_as, "type_as(other): self in other's dtype and device"),
    CT_M(diag_embed, "diag_embed(offset=0, dim1=-2, dim2=-1): the last dim on diagonals of new dims"),
    CT_M(diagflat, "diagflat(offset=0): the flattened input on a diagonal of a square matrix"),
    CT_M(fill_diagonal_, "fill_diagonal_(fill_value, wrap=False): fills the main diagonal in place"),
    CT_M(mvlgamma, "mvlgamma(p): multivariate log-gamma of dimension p"),
    CT_M(mvlgamma_, "mvlgamma_(p): in place"),
    CT_M(ldexp, "ldexp(other): self * 2 ** other"),
    CT_M(ldexp_, "ldexp_(other): in place"),
    {"frexp", tensor_frexp, METH_NOARGS, "frexp() -> (mantissa, exponent)"},
    CT_M(masked_scatter, "masked_scatter(mask, source): source's elements where mask is true (a copy)"),
    CT_M(masked_scatter_, "masked_scatter_(mask, source): in place"),
    CT_M(put, "put(index, source, accumulate=False): a copy with self.flatten()[index] = source"),
    CT_M(put_, "put_(index, source, accumulate=False): self.flatten()[index] = source in place"),
    CT_M(slice_scatter, "slice_scatter(src, dim=0, start=None, end=None, step=1): a copy with src in the slice"),
    CT_M(select_scatter, "select_scatter(src, dim, index): a copy with src at index along dim"),
    CT_M(diagonal_scatter, "diagonal_scatter(src, offset=0, dim1=0, dim2=1): a copy with src on the diagonal"),
    CT_M(multinomial, "multinomial(num_samples, replacement=False, *, generator=None): category indices drawn by row"),
    {NULL},
};

#define CT_FN(name, doc) {#name, CT_FASTCALL(function_##name), CT_METH_FK, doc}
PyMethodDef ct_more_module_methods[] = {
    {"repeat_interleave", CT_FASTCALL(py_repeat_interleave), CT_METH_FK,
     "repeat_interleave(input, repeats, dim=None, *, output_size=None) or repeat_interleave(repeats)"},
    CT_FN(tensor_split, "tensor_split(input, indices_or_sections, dim=0)"),
    CT_FN(multinomial, "multinomial(input, num_samples, replacement=False, *, generator=None, out=None)"),
    {"special_ndtr", CT_FASTCALL(py_special_ndtr), CT_METH_FK, "special_ndtr(input, *, out=None): the standard normal CDF"},
    CT_FN(hsplit, "hsplit(input, indices_or_sections)"),
    CT_FN(vsplit, "vsplit(input, indices_or_sections)"),
    CT_FN(dsplit, "dsplit(input, indices_or_sections)"),
    CT_FN(ravel, "ravel(input)"),
    CT_FN(diag_embed, "diag_embed(input, offset=0, dim1=-2, dim2=-1)"),
    CT_FN(diagflat, "diagflat(input, offset=0)"),
    {"unravel_index", CT_FASTCALL(py_unravel_index), CT_METH_FK, "unravel_index(indices, shape) -> tuple of Tensors"},
    CT_FN(mvlgamma, "mvlgamma(input, p, *, out=None)"),
    {"ldexp", CT_FASTCALL(py_ldexp), CT_METH_FK, "ldexp(input, other, *, out=None): input * 2 ** other"},
    {"ldexp_", CT_FASTCALL(py_ldexp_), CT_METH_FK, "ldexp_(input, other): in place"},
    CT_FN(frexp, "frexp(input) -> (mantissa, exponent)"),
    CT_FN(masked_scatter, "masked_scatter(input, mask, source)"),
    CT_FN(put, "put(input, index, source, accumulate=False)"),
    CT_FN(slice_scatter, "slice_scatter(input, src, dim=0, start=None, end=None, step=1)"),
    CT_FN(select_scatter, "select_scatter(input, src, dim, index)"),
    CT_FN(diagonal_scatter, "diagonal_scatter(input, src, offset=0, dim1=0, dim2=1)"),
    {"vander", CT_FASTCALL(py_vander), CT_METH_FK, "vander(x, N=None, increasing=False)"},
    {"_linalg_vander", CT_FASTCALL(py_linalg_vander), CT_METH_FK, "linalg.vander(x, *, N=None)"},
    {"combinations", CT_FASTCALL(py_combinations), CT_METH_FK,
     "combinations(input, r=2, with_replacement=False): the r-combinations of a 1-d input's elements"},
    {"trapezoid", CT_FASTCALL(py_trapezoid), CT_METH_FK, "trapezoid(y, x=None, *, dx=None, dim=-1)"},
    {"trapz", CT_FASTCALL(py_trapz), CT_METH_FK, "trapz(y, x, *, dim=-1) or trapz(y, *, dx=1, dim=-1)"},
    {"cumulative_trapezoid", CT_FASTCALL(py_cumulative_trapezoid), CT_METH_FK,
     "cumulative_trapezoid(y, x=None, *, dx=None, dim=-1)"},
    {"hann_window", CT_FASTCALL(py_hann_window), CT_METH_FK, "hann_window(window_length, periodic=True, *, dtype=None, device=None)"},
    {"hamming_window", CT_FASTCALL(py_hamming_window), CT_METH_FK,
     "hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, device=None)"},
    {"blackman_window", CT_FASTCALL(py_blackman_window), CT_METH_FK,
     "blackman_window(window_length, periodic=True, *, dtype=None, device=None)"},
    {"bartlett_window", CT_FASTCALL(py_bartlett_window), CT_METH_FK,
     "bartlett_window(window_length, periodic=True, *, dtype=None, device=None)"},
    {"kaiser_window", CT_FASTCALL(py_kaiser_window), CT_METH_FK,
     "kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, device=None)"},
    {NULL},
};

PyType_Slot ct_more_tensor_slots[] = {{0, NULL}};
