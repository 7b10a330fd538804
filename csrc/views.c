/* views.c: operations that only change metadata and share storage: view/reshape, flatten/
 * unflatten, squeeze/unsqueeze, transpose/t/T/mT/permute/movedim, expand, narrow/select,
 * unbind/split/chunk. reshape copies only when no view is possible, as in PyTorch. */
#include "args.h"
#include "creation.h"
#include "dtype.h"
#include "iter.h"
#include "registry.h"
#include "tensor.h"
#include "views.h"
#include <string.h>

/* --- helpers ----------------------------------------------------------------------------------- */
static int parse_dim(PyObject *obj, int ndim, int *out)
{
    int64_t d = 0;
    if (obj == NULL) {
        PyErr_SetString(PyExc_TypeError, "missing dim argument");
        return -1;
    }
    if (ct_arg_int64(obj, &d) < 0) {
        return -1;
    }
    return ct_wrap_dim(d, ndim, out);
}

/* Replaces a single -1 in sizes by the inferred size; checks the element count. */
static int infer_size(int ndim, int64_t *sizes, int64_t numel)
{
    int infer = -1;
    int64_t prod = 1;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == -1) {
            if (infer >= 0) {
                PyErr_SetString(PyExc_RuntimeError, "only one dimension can be inferred");
                return -1;
            }
            infer = i;
        } else if (sizes[i] < 0) {
            char buf[256];
            ct_format_sizes(buf, sizeof(buf), ndim, sizes);
            PyErr_Format(PyExc_RuntimeError, "invalid shape dimension %lld at index %d of shape %s",
                         (long long)sizes[i], i, buf);
            return -1;
        } else {
            prod *= sizes[i];
        }
    }
    if (infer >= 0 && prod != 0 && numel % prod == 0) {
        sizes[infer] = numel / prod;
        return 0;
    }
    if (infer < 0 && prod == numel) {
        return 0;
    }
    char buf[256];
    ct_format_sizes(buf, sizeof(buf), ndim, sizes);
    if (infer >= 0 && prod == 0 && numel == 0) { /* any size solves 0 * n == 0 */
        PyErr_Format(PyExc_RuntimeError,
                     "cannot reshape tensor of 0 elements into shape %s because the unspecified dimension size -1 "
                     "can be any value and is ambiguous",
                     buf);
        return -1;
    }
    /* PyTorch prints the -1 as given */
    PyErr_Format(PyExc_RuntimeError, "shape '%s' is invalid for input of size %lld", buf, (long long)numel);
    return -1;
}

/* Strides for viewing t with new sizes without copying, or false when impossible. */
static bool compute_view_strides(const CtTensorObject *t, int nd, const int64_t *sizes, int64_t *strides)
{
    int64_t numel = ct_numel(t);
    if (numel == 0 || t->ndim == 0) {
        ct_contiguous_strides(nd, sizes, strides);
        if (numel == 0 && t->ndim == nd && memcmp(t->sizes, sizes, sizeof(int64_t) * nd) == 0) {
            memcpy(strides, t->strides, sizeof(int64_t) * nd);
        }
        return true;
    }
    int view_d = nd - 1;
    int64_t chunk_base_stride = t->strides[t->ndim - 1];
    int64_t tensor_numel = 1, view_numel = 1;
    for (int tensor_d = t->ndim - 1; tensor_d >= 0; tensor_d--) {
        tensor_numel *= t->sizes[tensor_d];
        /* end of a chunk of dims that are contiguous with each other */
        if (tensor_d == 0 ||
            (t->sizes[tensor_d - 1] != 1 && t->strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
            while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1)) {
                strides[view_d] = view_numel * chunk_base_stride;
                view_numel *= sizes[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel) {
                return false;
            }
            if (tensor_d > 0) {
                chunk_base_stride = t->strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

/* For autograd's node names (reshape is a view, an alias or a copy): true when t can be viewed
 * with sizes (no -1) without copying. */
bool ct_can_view(const CtTensorObject *t, int nd, const int64_t *sizes)
{
    int64_t strides[CT_MAX_DIMS];
    return compute_view_strides(t, nd, sizes, strides);
}

/* --- view / reshape ----------------------------------------------------------------------------- */
static PyObject *view_impl(CtTensorObject *t, int nd, int64_t *sizes, bool allow_copy)
{
    int64_t strides[CT_MAX_DIMS];
    if (infer_size(nd, sizes, ct_numel(t)) < 0) {
        return NULL;
    }
    if (compute_view_strides(t, nd, sizes, strides)) {
        return (PyObject *)ct_view_of(t, nd, sizes, strides, t->offset);
    }
    if (!allow_copy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "view size is not compatible with input tensor's size and stride (at least one dimension "
                        "spans across two contiguous subspaces). Use .reshape(...) instead.");
        return NULL;
    }
    CtTensorObject *c = ct_contiguous(t);
    if (c == NULL) {
        return NULL;
    }
    ct_contiguous_strides(nd, sizes, strides);
    PyObject *r = (PyObject *)ct_view_of(c, nd, sizes, strides, c->offset);
    Py_DECREF(c);
    return r;
}

/* view(dtype): the same bytes read as another dtype. With a different element size the last
 * dim (stride 1) scales by the size ratio, and every other stride and the offset with it. */
static CtTensorObject *view_dtype(CtTensorObject *t, CtDType dtype)
{
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    int nd = t->ndim;
    int64_t offset = t->offset;
    size_t old_size = ct_dtype_info[t->dtype].itemsize, new_size = ct_dtype_info[dtype].itemsize;
    const char *from = ct_scalar_type_name(t->dtype), *to = ct_scalar_type_name(dtype);
    memcpy(sizes, t->sizes, sizeof(int64_t) * nd);
    memcpy(strides, t->strides, sizeof(int64_t) * nd);
    if (old_size != new_size) {
        if (nd == 0) {
            PyErr_Format(PyExc_RuntimeError, "self.dim() cannot be 0 to view %s as %s (different element sizes)", from,
                         to);
            return NULL;
        }
        if (strides[nd - 1] != 1) {
            PyErr_Format(PyExc_RuntimeError,
                         "self.stride(-1) must be 1 to view %s as %s (different element sizes), but got %lld", from, to,
                         (long long)strides[nd - 1]);
            return NULL;
        }
        if (old_size > new_size) {
            int64_t ratio = (int64_t)(old_size / new_size);
            for (int i = 0; i < nd - 1; i++) {
                strides[i] *= ratio;
            }
            sizes[nd - 1] *= ratio;
            offset *= ratio;
        } else {
            int64_t ratio = (int64_t)(new_size / old_size);
            if (sizes[nd - 1] % ratio != 0) {
                PyErr_Format(PyExc_RuntimeError,
                             "self.size(-1) must be divisible by %lld to view %s as %s (different element sizes), but "
                             "got %lld",
                             (long long)ratio, from, to, (long long)sizes[nd - 1]);
                return NULL;
            }
            if (offset % ratio != 0) {
                PyErr_Format(PyExc_RuntimeError,
                             "self.storage_offset() must be divisible by %lld to view %s as %s (different element "
                             "sizes), but got %lld",
                             (long long)ratio, from, to, (long long)offset);
                return NULL;
            }
            for (int i = 0; i < nd - 1; i++) {
                if (strides[i] % ratio != 0) {
                    PyErr_Format(PyExc_RuntimeError,
                                 "self.stride(%d) must be divisible by %lld to view %s as %s (different element "
                                 "sizes), but got %lld",
                                 i, (long long)ratio, from, to, (long long)strides[i]);
                    return NULL;
                }
                strides[i] /= ratio;
            }
            sizes[nd - 1] /= ratio;
            offset /= ratio;
        }
    }
    return ct_tensor_new(t->storage, offset, nd, sizes, strides, dtype);
}

static PyObject *tensor_view(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    int64_t sizes[CT_MAX_DIMS];
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) == 1 && nargs == 0) { /* view(size=...) / view(dtype=...) */
        args = args + nargs;
        nargs = 1;
    }
    if (nargs == 1 && !PyTuple_Check(args[0]) && !PyList_Check(args[0]) && !PyIndex_Check(args[0])) {
        CtDType dtype; /* a ctorch.dtype, or float/int/bool as PyTorch's dtype parser allows */
        if (ct_dtype_from_object(args[0], &dtype) == 0) {
            return (PyObject *)view_dtype(CT_TENSOR(self), dtype);
        }
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "view(): argument 'size' must be tuple of ints or a dtype");
        return NULL;
    }
    int nd = ct_parse_sizes(args, nargs, sizes, true);
    if (nd < 0) {
        return NULL;
    }
    return view_impl(CT_TENSOR(self), nd, sizes, false);
}

static PyObject *tensor_reshape(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    int64_t sizes[CT_MAX_DIMS];
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) == 1 && nargs == 0) { /* reshape(shape=...) */
        args = args + nargs;
        nargs = 1;
    }
    int nd = ct_parse_sizes(args, nargs, sizes, true);
    if (nd < 0) {
        return NULL;
    }
    return view_impl(CT_TENSOR(self), nd, sizes, true);
}

static PyObject *tensor_view_as(PyObject *self, PyObject *other)
{
    if (!CtTensor_Check(other)) {
        PyErr_SetString(PyExc_TypeError, "view_as(): argument 'other' must be Tensor");
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, CT_TENSOR(other)->sizes, sizeof(sizes));
    return view_impl(CT_TENSOR(self), CT_TENSOR(other)->ndim, sizes, false);
}

static PyObject *tensor_reshape_as(PyObject *self, PyObject *other)
{
    if (!CtTensor_Check(other)) {
        PyErr_SetString(PyExc_TypeError, "reshape_as(): argument 'other' must be Tensor");
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, CT_TENSOR(other)->sizes, sizeof(sizes));
    return view_impl(CT_TENSOR(self), CT_TENSOR(other)->ndim, sizes, true);
}

static PyObject *tensor_flatten(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"start_dim", "end_dim", NULL};
    PyObject *a[2];
    CtTensorObject *t = CT_TENSOR(self);
    int64_t s = 0, e = -1;
    int start, end;
    if (ct_parse_args("flatten", args, nargs, kwnames, names, 0, a) < 0 || ct_arg_int64(a[0], &s) < 0 ||
        ct_arg_int64(a[1], &e) < 0 || ct_wrap_dim(s, t->ndim, &start) < 0 || ct_wrap_dim(e, t->ndim, &end) < 0) {
        return NULL;
    }
    if (t->ndim == 0) {
        int64_t one = 1;
        return view_impl(t, 1, &one, true);
    }
    if (start > end) {
        PyErr_SetString(PyExc_RuntimeError, "flatten() has invalid args: start_dim cannot come after end_dim");
        return NULL;
    }
    if (start == end) {
        return Py_NewRef(self);
    }
    int64_t sizes[CT_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < start; i++) {
        sizes[nd++] = t->sizes[i];
    }
    int64_t prod = 1;
    for (int i = start; i <= end; i++) {
        prod *= t->sizes[i];
    }
    sizes[nd++] = prod;
    for (int i = end + 1; i < t->ndim; i++) {
        sizes[nd++] = t->sizes[i];
    }
    return view_impl(t, nd, sizes, true);
}

static PyObject *tensor_unflatten(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim", "sizes", NULL};
    PyObject *a[2];
    CtTensorObject *t = CT_TENSOR(self);
    int dim;
    int64_t inner[CT_MAX_DIMS];
    if (ct_parse_args("unflatten", args, nargs, kwnames, names, 2, a) < 0 || parse_dim(a[0], t->ndim, &dim) < 0) {
        return NULL;
    }
    int ni = ct_parse_size_seq(a[1], inner, true);
    if (ni < 0) {
        return NULL;
    }
    if (ni == 0) {
        PyErr_SetString(PyExc_RuntimeError, "unflatten: sizes must be non-empty");
        return NULL;
    }
    if (t->ndim - 1 + ni > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions", CT_MAX_DIMS);
        return NULL;
    }
    if (infer_size(ni, inner, t->sizes[dim]) < 0) {
        PyErr_Clear();
        char buf[256];
        ct_format_sizes(buf, sizeof(buf), ni, inner);
        PyErr_Format(PyExc_RuntimeError,
                     "unflatten: Provided sizes %s don't multiply up to the size of dim %d (%lld) in the input "
                     "tensor",
                     buf, dim, (long long)t->sizes[dim]);
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < dim; i++) {
        sizes[nd++] = t->sizes[i];
    }
    for (int i = 0; i < ni; i++) {
        sizes[nd++] = inner[i];
    }
    for (int i = dim + 1; i < t->ndim; i++) {
        sizes[nd++] = t->sizes[i];
    }
    return view_impl(t, nd, sizes, true);
}

/* --- squeeze / unsqueeze -------------------------------------------------------------------------- */
static PyObject *tensor_squeeze(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim", NULL};
    PyObject *a[1];
    CtTensorObject *t = CT_TENSOR(self);
    bool drop[CT_MAX_DIMS] = {false};
    if (ct_parse_args("squeeze", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    if (a[0] == NULL || a[0] == Py_None) {
        for (int i = 0; i < t->ndim; i++) {
            drop[i] = t->sizes[i] == 1;
        }
    } else if (PyTuple_Check(a[0]) || PyList_Check(a[0])) {
        Py_ssize_t n = PySequence_Size(a[0]);
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *item = PySequence_GetItem(a[0], k);
            int d;
            int r = item ? parse_dim(item, t->ndim, &d) : -1;
            Py_XDECREF(item);
            if (r < 0) {
                return NULL;
            }
            if (t->ndim > 0) {
                drop[d] = t->sizes[d] == 1;
            }
        }
    } else {
        int d;
        if (parse_dim(a[0], t->ndim, &d) < 0) {
            return NULL;
        }
        if (t->ndim > 0) {
            drop[d] = t->sizes[d] == 1;
        }
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (!drop[i]) {
            sizes[nd] = t->sizes[i];
            strides[nd] = t->strides[i];
            nd++;
        }
    }
    return (PyObject *)ct_view_of(t, nd, sizes, strides, t->offset);
}

static PyObject *tensor_unsqueeze(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim", NULL};
    PyObject *a[1];
    CtTensorObject *t = CT_TENSOR(self);
    int dim;
    if (ct_parse_args("unsqueeze", args, nargs, kwnames, names, 1, a) < 0 || parse_dim(a[0], t->ndim + 1, &dim) < 0) {
        return NULL;
    }
    if (t->ndim + 1 > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions", CT_MAX_DIMS);
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i <= t->ndim; i++) {
        if (i == dim) {
            sizes[nd] = 1;
            strides[nd] = i < t->ndim ? t->sizes[i] * t->strides[i] : 1;
            nd++;
        }
        if (i < t->ndim) {
            sizes[nd] = t->sizes[i];
            strides[nd] = t->strides[i];
            nd++;
        }
    }
    return (PyObject *)ct_view_of(t, nd, sizes, strides, t->offset);
}

/* --- permutations ------------------------------------------------------------------------------------ */
static PyObject *permuted(CtTensorObject *t, const int *perm)
{
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        sizes[i] = t->sizes[perm[i]];
        strides[i] = t->strides[perm[i]];
    }
    return (PyObject *)ct_view_of(t, t->ndim, sizes, strides, t->offset);
}

static PyObject *transpose_dims(CtTensorObject *t, int d0, int d1)
{
    int perm[CT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        perm[i] = i;
    }
    if (t->ndim > 0) {
        perm[d0] = d1;
        perm[d1] = d0;
    }
    return permuted(t, perm);
}

static PyObject *tensor_transpose(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim0", "dim1", NULL};
    PyObject *a[2];
    CtTensorObject *t = CT_TENSOR(self);
    int d0, d1;
    if (ct_parse_args("transpose", args, nargs, kwnames, names, 2, a) < 0 || parse_dim(a[0], t->ndim, &d0) < 0 ||
        parse_dim(a[1], t->ndim, &d1) < 0) {
        return NULL;
    }
    return transpose_dims(t, d0, d1);
}

static PyObject *tensor_t(PyObject *self, PyObject *unused)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (t->ndim > 2) {
        PyErr_Format(PyExc_RuntimeError, "t() expects a tensor with <= 2 dimensions, but self is %dD", t->ndim);
        return NULL;
    }
    return t->ndim < 2 ? (PyObject *)ct_view_of(t, t->ndim, t->sizes, t->strides, t->offset)
                       : transpose_dims(t, 0, 1);
}

/* T and mT go through permute/transpose (method calls) so that autograd records them. */
PyObject *ct_views_get_T(PyObject *self, void *closure)
{
    CtTensorObject *t = CT_TENSOR(self);
    PyObject *dims = PyTuple_New(t->ndim);
    for (int i = 0; dims != NULL && i < t->ndim; i++) {
        PyTuple_SET_ITEM(dims, i, PyLong_FromLong(t->ndim - 1 - i));
    }
    return dims ? PyObject_CallMethod(self, "permute", "(N)", dims) : NULL;
}

PyObject *ct_views_get_mT(PyObject *self, void *closure)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (t->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError, "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.");
        return NULL;
    }
    return PyObject_CallMethod(self, "transpose", "(ii)", -2, -1);
}

/* Reads dims given as f(0, 2, 1) or f((0, 2, 1)) into perm. Returns the count or -1. */
static int parse_dim_list(PyObject *const *args, Py_ssize_t nargs, int ndim, int *dims)
{
    PyObject *seq = NULL;
    if (nargs == 1 && (PyTuple_Check(args[0]) || PyList_Check(args[0]))) {
        seq = PySequence_Fast(args[0], "dims must be a sequence");
        if (seq == NULL) {
            return -1;
        }
        args = PySequence_Fast_ITEMS(seq);
        nargs = PySequence_Fast_GET_SIZE(seq);
    }
    int r = (int)nargs;
    if (nargs > CT_MAX_DIMS) {
        PyErr_SetString(PyExc_RuntimeError, "too many dims");
        r = -1;
    }
    for (Py_ssize_t i = 0; r >= 0 && i < nargs; i++) {
        if (parse_dim(args[i], ndim, &dims[i]) < 0) {
            r = -1;
        }
    }
    Py_XDECREF(seq);
    return r;
}

static PyObject *tensor_permute(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    CtTensorObject *t = CT_TENSOR(self);
    int perm[CT_MAX_DIMS];
    if (kwnames != NULL && nargs == 0 && PyTuple_GET_SIZE(kwnames) == 1) { /* permute(dims=...) */
        nargs = 1;
    }
    int n = parse_dim_list(args, nargs, t->ndim, perm);
    if (n < 0) {
        return NULL;
    }
    if (n != t->ndim) {
        PyErr_Format(PyExc_RuntimeError,
                     "permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
                     "the desired ordering of dimensions i.e. input.dim() = %d is not equal to len(dims) = %d",
                     t->ndim, n);
        return NULL;
    }
    bool seen[CT_MAX_DIMS] = {false};
    for (int i = 0; i < n; i++) {
        if (seen[perm[i]]) {
            PyErr_SetString(PyExc_RuntimeError, "permute(): duplicate dims are not allowed.");
            return NULL;
        }
        seen[perm[i]] = true;
    }
    return permuted(t, perm);
}

static PyObject *tensor_movedim(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"source", "destination", NULL};
    PyObject *a[2];
    CtTensorObject *t = CT_TENSOR(self);
    int src[CT_MAX_DIMS], dst[CT_MAX_DIMS];
    if (ct_parse_args("movedim", args, nargs, kwnames, names, 2, a) < 0) {
        return NULL;
    }
    int ns = parse_dim_list(&a[0], 1, t->ndim, src);
    int nd = ns < 0 ? -1 : parse_dim_list(&a[1], 1, t->ndim, dst);
    if (nd < 0) {
        return NULL;
    }
    if (ns != nd) {
        PyErr_Format(PyExc_RuntimeError,
                     "movedim: Invalid source or destination dims: source (%d dims) should contain the same number "
                     "of dims as destination (%d dims)",
                     ns, nd);
        return NULL;
    }
    int perm[CT_MAX_DIMS];
    bool used_src[CT_MAX_DIMS] = {false}, used_dst[CT_MAX_DIMS] = {false};
    for (int i = 0; i < t->ndim; i++) {
        perm[i] = -1;
    }
    for (int i = 0; i < ns; i++) {
        if (used_src[src[i]] || used_dst[dst[i]]) {
            PyErr_SetString(PyExc_RuntimeError, "movedim: repeated dim in `source` or `destination`");
            return NULL;
        }
        used_src[src[i]] = used_dst[dst[i]] = true;
        perm[dst[i]] = src[i];
    }
    int next = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (perm[i] >= 0) {
            continue;
        }
        while (used_src[next]) {
            next++;
        }
        perm[i] = next++;
    }
    return permuted(t, perm);
}

/* --- expand ---------------------------------------------------------------------------------------- */
PyObject *ct_expand(CtTensorObject *t, int nd, const int64_t *target)
{
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    if (nd < t->ndim) {
        char have[256], want[256];
        ct_format_sizes(have, sizeof(have), t->ndim, t->sizes);
        ct_format_sizes(want, sizeof(want), nd, target);
        PyErr_Format(PyExc_RuntimeError,
                     "expand(torch.%s%sTensor{%s}, size=%s): the number of sizes provided (%d) must be greater or equal to "
                     "the number of dimensions in the tensor (%d)",
                     ct_device_of(t).type == CT_DEV_CUDA ? "cuda." : "", ct_scalar_type_name(t->dtype), have, want, nd,
                     t->ndim); /* the legacy type: LongTensor */
        return NULL;
    }
    for (int i = nd - 1; i >= 0; i--) {
        int td = i - (nd - t->ndim);
        int64_t want = target[i];
        if (td < 0) {
            if (want < 0) {
                PyErr_Format(PyExc_RuntimeError,
                             "The expanded size of the tensor (%lld) isn't allowed in a leading, non-existing "
                             "dimension %d",
                             (long long)want, i);
                return NULL;
            }
            sizes[i] = want;
            strides[i] = 0;
            continue;
        }
        int64_t have = t->sizes[td];
        if (want == -1) {
            want = have;
        }
        if (want < 0) {
            PyErr_Format(PyExc_RuntimeError, "Trying to create tensor with negative dimension %lld", (long long)want);
            return NULL;
        }
        if (have == want) {
            sizes[i] = have;
            strides[i] = t->strides[td];
        } else if (have == 1) {
            sizes[i] = want;
            strides[i] = 0;
        } else {
            char a[256], b[256];
            ct_format_sizes(a, sizeof(a), nd, target);
            ct_format_sizes(b, sizeof(b), t->ndim, t->sizes);
            PyErr_Format(PyExc_RuntimeError,
                         "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                         "non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                         (long long)want, (long long)have, i, a, b);
            return NULL;
        }
    }
    return (PyObject *)ct_view_of(t, nd, sizes, strides, t->offset);
}

static PyObject *tensor_expand(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    int64_t sizes[CT_MAX_DIMS];
    if (kwnames != NULL && nargs == 0 && PyTuple_GET_SIZE(kwnames) == 1) {
        nargs = 1;
    }
    int nd = ct_parse_sizes(args, nargs, sizes, true);
    if (nd < 0) {
        return NULL;
    }
    return ct_expand(CT_TENSOR(self), nd, sizes);
}

static PyObject *tensor_expand_as(PyObject *self, PyObject *other)
{
    if (!CtTensor_Check(other)) {
        PyErr_SetString(PyExc_TypeError, "expand_as(): argument 'other' must be Tensor");
        return NULL;
    }
    return ct_expand(CT_TENSOR(self), CT_TENSOR(other)->ndim, CT_TENSOR(other)->sizes);
}

/* --- narrow / select / unbind / split / chunk --------------------------------------------------------- */
PyObject *ct_narrow(CtTensorObject *t, int dim, int64_t start, int64_t length)
{
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof(int64_t) * t->ndim);
    sizes[dim] = length;
    return (PyObject *)ct_view_of(t, t->ndim, sizes, t->strides, t->offset + start * t->strides[dim]);
}

static PyObject *tensor_narrow(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim", "start", "length", NULL};
    PyObject *a[3];
    CtTensorObject *t = CT_TENSOR(self);
    int dim;
    int64_t start = 0, length = 0;
    if (ct_parse_args("narrow", args, nargs, kwnames, names, 3, a) < 0 || ct_arg_int64(a[1], &start) < 0 ||
        ct_arg_int64(a[2], &length) < 0) {
        return NULL;
    }
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_RuntimeError, "narrow() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    if (parse_dim(a[0], t->ndim, &dim) < 0) {
        return NULL;
    }
    if (length < 0) {
        PyErr_SetString(PyExc_RuntimeError, "narrow(): length must be non-negative.");
        return NULL;
    }
    int64_t size = t->sizes[dim];
    if (start < -size || start > size) {
        PyErr_Format(PyExc_IndexError, "start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                     (long long)-size, (long long)size, (long long)start);
        return NULL;
    }
    if (start < 0) {
        start += size;
    }
    if (length < 0 || start > size - length) {
        PyErr_Format(PyExc_RuntimeError, "start (%lld) + length (%lld) exceeds dimension size (%lld).",
                     (long long)start, (long long)length, (long long)size);
        return NULL;
    }
    return ct_narrow(t, dim, start, length);
}

PyObject *ct_select(CtTensorObject *t, int dim, int64_t index)
{
    int64_t size = t->sizes[dim];
    if (index < -size || index >= size) {
        char buf[256];
        ct_format_sizes(buf, sizeof(buf), t->ndim, t->sizes);
        PyErr_Format(PyExc_IndexError, "select(): index %lld out of range for tensor of size %s at dimension %d",
                     (long long)index, buf, dim);
        return NULL;
    }
    if (index < 0) {
        index += size;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (i != dim) {
            sizes[nd] = t->sizes[i];
            strides[nd] = t->strides[i];
            nd++;
        }
    }
    return (PyObject *)ct_view_of(t, nd, sizes, strides, t->offset + index * t->strides[dim]);
}

static PyObject *tensor_select(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim", "index", NULL};
    PyObject *a[2];
    CtTensorObject *t = CT_TENSOR(self);
    int dim;
    int64_t index = 0;
    if (ct_parse_args("select", args, nargs, kwnames, names, 2, a) < 0 || ct_arg_int64(a[1], &index) < 0) {
        return NULL;
    }
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_IndexError, "select() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    if (parse_dim(a[0], t->ndim, &dim) < 0) {
        return NULL;
    }
    return ct_select(t, dim, index);
}

static PyObject *tensor_unbind(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim", NULL};
    PyObject *a[1];
    CtTensorObject *t = CT_TENSOR(self);
    int dim = 0;
    if (ct_parse_args("unbind", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_IndexError, "Dimension specified as 0 but tensor has no dimensions");
        return NULL;
    }
    if (a[0] != NULL && parse_dim(a[0], t->ndim, &dim) < 0) {
        return NULL;
    }
    PyObject *out = PyTuple_New(t->sizes[dim]);
    for (int64_t i = 0; out != NULL && i < t->sizes[dim]; i++) {
        PyObject *v = ct_select(t, dim, i);
        if (v == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyTuple_SET_ITEM(out, i, v);
    }
    return out;
}

/* Splits dim into pieces of the given lengths (which must sum to the dim's size). */
static PyObject *split_into(CtTensorObject *t, int dim, int n, const int64_t *lengths)
{
    PyObject *out = PyTuple_New(n);
    int64_t start = 0;
    for (int i = 0; out != NULL && i < n; i++) {
        PyObject *v = ct_narrow(t, dim, start, lengths[i]);
        if (v == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyTuple_SET_ITEM(out, i, v);
        start += lengths[i];
    }
    return out;
}

static PyObject *split_by_size(CtTensorObject *t, int dim, int64_t split_size)
{
    int64_t size = t->sizes[dim];
    if (split_size < 0 || (split_size == 0 && size != 0)) {
        PyErr_Format(PyExc_RuntimeError, "split_size can only be 0 if dimension size is 0, but got dimension size of %lld",
                     (long long)size);
        return NULL;
    }
    int64_t n = split_size == 0 ? 1 : (size + split_size - 1) / split_size;
    if (n == 0) {
        n = 1;
    }
    int64_t *lengths = PyMem_Malloc(sizeof(int64_t) * n);
    if (lengths == NULL) {
        return PyErr_NoMemory();
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t rest = size - i * split_size;
        lengths[i] = rest < split_size ? rest : split_size;
    }
    PyObject *r = split_into(t, dim, (int)n, lengths);
    PyMem_Free(lengths);
    return r;
}

static PyObject *tensor_split(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"split_size_or_sections", "dim", NULL};
    PyObject *a[2];
    CtTensorObject *t = CT_TENSOR(self);
    int dim = 0;
    if (ct_parse_args("split", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_RuntimeError, "split expects at least a 1-dimensional tensor");
        return NULL;
    }
    if (a[1] != NULL && parse_dim(a[1], t->ndim, &dim) < 0) {
        return NULL;
    }
    if (PyIndex_Check(a[0]) && !CtTensor_Check(a[0])) {
        int64_t s = 0;
        if (ct_arg_int64(a[0], &s) < 0) {
            return NULL;
        }
        return split_by_size(t, dim, s);
    }
    PyObject *seq = PySequence_Fast(a[0], "split(): split_size_or_sections must be an int or a list of ints");
    if (seq == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int64_t *lengths = PyMem_Malloc(sizeof(int64_t) * (n ? n : 1));
    int64_t total = 0;
    PyObject *r = NULL;
    if (lengths == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (ct_arg_int64(PySequence_Fast_GET_ITEM(seq, i), &lengths[i]) < 0) {
            goto done;
        }
        if (lengths[i] < 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "split_with_sizes expects split_sizes have only non-negative entries, but got "
                         "split_sizes=%lld",
                         (long long)lengths[i]);
            goto done;
        }
        total += lengths[i];
    }
    if (total != t->sizes[dim]) {
        char buf[512];
        ct_format_sizes(buf, sizeof(buf), (int)(n < 32 ? n : 32), lengths);
        PyErr_Format(PyExc_RuntimeError,
                     "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's size at dimension "
                     "%d), but got split_sizes=%s",
                     (long long)t->sizes[dim], dim, buf);
        goto done;
    }
    r = split_into(t, dim, (int)n, lengths);
done:
    PyMem_Free(lengths);
    Py_DECREF(seq);
    return r;
}

static PyObject *tensor_chunk(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"chunks", "dim", NULL};
    PyObject *a[2];
    CtTensorObject *t = CT_TENSOR(self);
    int dim = 0;
    int64_t chunks = 0;
    if (ct_parse_args("chunk", args, nargs, kwnames, names, 1, a) < 0 || ct_arg_int64(a[0], &chunks) < 0) {
        return NULL;
    }
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_RuntimeError, "chunk expects at least a 1-dimensional tensor");
        return NULL;
    }
    if (chunks <= 0) {
        PyErr_Format(PyExc_RuntimeError, "chunk expects `chunks` to be greater than 0, got: %lld", (long long)chunks);
        return NULL;
    }
    if (a[1] != NULL && parse_dim(a[1], t->ndim, &dim) < 0) {
        return NULL;
    }
    int64_t size = t->sizes[dim];
    int64_t split_size = (size + chunks - 1) / chunks;
    if (split_size == 0 && size == 0) {
        /* PyTorch returns `chunks` empty pieces */
        int64_t *lengths = PyMem_Calloc(chunks, sizeof(int64_t));
        if (lengths == NULL) {
            return PyErr_NoMemory();
        }
        PyObject *r = split_into(t, dim, (int)chunks, lengths);
        PyMem_Free(lengths);
        return r;
    }
    return split_by_size(t, dim, split_size);
}

/* --- unfold and the in-place metadata ops (transpose_, t_, squeeze_, unsqueeze_) ---------------------- */
/* unfold(dimension, size, step): every window of `size` elements along dimension, `step` apart,
 * as a new last dim: a view (dimension's stride times step, the window's the old stride). */
static PyObject *tensor_unfold(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dimension", "size", "step", NULL};
    PyObject *a[3];
    CtTensorObject *t = CT_TENSOR(self);
    int dim;
    int64_t size = 0, step = 0;
    if (ct_parse_args("unfold", args, nargs, kwnames, names, 3, a) < 0 || parse_dim(a[0], t->ndim, &dim) < 0 ||
        ct_arg_int64(a[1], &size) < 0 || ct_arg_int64(a[2], &step) < 0) {
        return NULL;
    }
    int64_t extent = t->ndim == 0 ? 1 : t->sizes[dim];
    if (size > extent) {
        PyErr_Format(PyExc_RuntimeError, "maximum size for tensor at dimension %d is %lld but size is %lld", dim,
                     (long long)extent, (long long)size);
        return NULL;
    }
    if (size < 0) {
        PyErr_Format(PyExc_RuntimeError, "size is %lld but must be >= 0", (long long)size);
        return NULL;
    }
    if (step <= 0) {
        PyErr_Format(PyExc_RuntimeError, "step is %lld but must be > 0", (long long)step);
        return NULL;
    }
    if (t->ndim == CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "unfold: ctorch supports at most %d dims", CT_MAX_DIMS);
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof(int64_t) * t->ndim);
    memcpy(strides, t->strides, sizeof(int64_t) * t->ndim);
    if (t->ndim == 0) {
        sizes[0] = size;
        strides[0] = 1;
        return (PyObject *)ct_view_of(t, 1, sizes, strides, t->offset);
    }
    sizes[dim] = (extent - size) / step + 1;
    strides[dim] = t->strides[dim] * step;
    sizes[t->ndim] = size;
    strides[t->ndim] = t->strides[dim];
    return (PyObject *)ct_view_of(t, t->ndim + 1, sizes, strides, t->offset);
}

/* as_strided(size, stride, storage_offset=None): a view of self's storage with the given geometry
 * (storage_offset defaults to self's); every element it reaches must lie inside the storage. */
static PyObject *tensor_as_strided(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"size", "stride", "storage_offset", NULL};
    PyObject *a[3];
    CtTensorObject *t = CT_TENSOR(self);
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS], offset = t->offset;
    if (ct_parse_args("as_strided", args, nargs, kwnames, names, 2, a) < 0) {
        return NULL;
    }
    int ndim = ct_parse_size_seq(a[0], sizes, false);
    PyObject *fast = ndim < 0 ? NULL : PySequence_Fast(a[1], "as_strided(): argument 'stride' must be tuple of ints");
    if (fast == NULL) {
        return NULL;
    }
    Py_ssize_t nstrides = PySequence_Fast_GET_SIZE(fast);
    bool negative = false;
    for (Py_ssize_t i = 0; i < nstrides && i < CT_MAX_DIMS; i++) {
        if (ct_arg_int64(PySequence_Fast_GET_ITEM(fast, i), &strides[i]) < 0) {
            Py_DECREF(fast);
            return NULL;
        }
        negative |= strides[i] < 0;
    }
    Py_DECREF(fast);
    if (nstrides != ndim) {
        PyErr_SetString(PyExc_RuntimeError, "mismatch in length of strides and shape");
        return NULL;
    }
    if (negative) {
        char s[256];
        ct_format_sizes(s, sizeof(s), ndim, strides);
        PyErr_Format(PyExc_RuntimeError, "as_strided: Negative strides are not supported at the moment, got strides: %s", s);
        return NULL;
    }
    if (a[2] != NULL && a[2] != Py_None && ct_arg_int64(a[2], &offset) < 0) {
        return NULL;
    }
    if (offset < 0) {
        PyErr_Format(PyExc_RuntimeError, "Tensor: invalid storage offset %lld", (long long)offset);
        return NULL;
    }
    size_t item = ct_itemsize(t);
    int64_t need;
    if (ct_storage_nbytes_needed(ndim, sizes, strides, offset, item, &need) < 0) {
        return NULL;
    }
    if ((uint64_t)need > t->storage->nbytes) {
        char s[256], st[256];
        ct_format_sizes(s, sizeof(s), ndim, sizes);
        ct_format_sizes(st, sizeof(st), ndim, strides);
        PyErr_Format(PyExc_RuntimeError, "setStorage: sizes %s, strides %s, storage offset %lld, and itemsize %zu "
                     "requiring a storage size of %lld are out of bounds for storage of size %zu", s, st,
                     (long long)offset, item, (long long)need, t->storage->nbytes);
        return NULL;
    }
    return (PyObject *)ct_view_of(t, ndim, sizes, strides, offset);
}
CT_FUNCTION_FROM_METHOD(as_strided, tensor_as_strided)

/* Gives self the shape and strides of view (a new reference, released here): self, or NULL. */
static PyObject *take_metadata(PyObject *self, PyObject *view)
{
    if (view == NULL) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self), *v = CT_TENSOR(view);
    t->ndim = v->ndim;
    memcpy(t->sizes, v->sizes, sizeof(int64_t) * v->ndim);
    memcpy(t->strides, v->strides, sizeof(int64_t) * v->ndim);
    Py_DECREF(view);
    return Py_NewRef(self);
}

static PyObject *tensor_transpose_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return take_metadata(self, tensor_transpose(self, args, nargs, kwnames));
}

static PyObject *tensor_t_(PyObject *self, PyObject *unused)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (t->ndim > 2) {
        PyErr_Format(PyExc_RuntimeError, "t_() expects a tensor with <= 2 dimensions, but self is %dD", t->ndim);
        return NULL;
    }
    return take_metadata(self, tensor_t(self, NULL));
}

static PyObject *tensor_squeeze_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return take_metadata(self, tensor_squeeze(self, args, nargs, kwnames));
}

static PyObject *tensor_unsqueeze_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return take_metadata(self, tensor_unsqueeze(self, args, nargs, kwnames));
}

static PyObject *broadcast_to_method(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

PyMethodDef ct_views_tensor_methods[] = {
    {"view", CT_FASTCALL(tensor_view), CT_METH_FK, "view(*shape): same data, new shape (no copy)"},
    {"reshape", CT_FASTCALL(tensor_reshape), CT_METH_FK, "reshape(*shape): a view when possible, else a copy"},
    {"view_as", tensor_view_as, METH_O, "view_as(other)"},
    {"reshape_as", tensor_reshape_as, METH_O, "reshape_as(other)"},
    {"flatten", CT_FASTCALL(tensor_flatten), CT_METH_FK, "flatten(start_dim=0, end_dim=-1)"},
    {"unflatten", CT_FASTCALL(tensor_unflatten), CT_METH_FK, "unflatten(dim, sizes)"},
    {"squeeze", CT_FASTCALL(tensor_squeeze), CT_METH_FK, "squeeze(dim=None)"},
    {"unsqueeze", CT_FASTCALL(tensor_unsqueeze), CT_METH_FK, "unsqueeze(dim)"},
    {"transpose", CT_FASTCALL(tensor_transpose), CT_METH_FK, "transpose(dim0, dim1)"},
    {"swapaxes", CT_FASTCALL(tensor_transpose), CT_METH_FK, "swapaxes(dim0, dim1)"},
    {"swapdims", CT_FASTCALL(tensor_transpose), CT_METH_FK, "swapdims(dim0, dim1)"},
    {"t", tensor_t, METH_NOARGS, "t(): transpose of a matrix (<= 2 dims)"},
    {"permute", CT_FASTCALL(tensor_permute), CT_METH_FK, "permute(*dims)"},
    {"movedim", CT_FASTCALL(tensor_movedim), CT_METH_FK, "movedim(source, destination)"},
    {"moveaxis", CT_FASTCALL(tensor_movedim), CT_METH_FK, "moveaxis(source, destination)"},
    {"expand", CT_FASTCALL(tensor_expand), CT_METH_FK, "expand(*sizes): broadcast view, -1 keeps a size"},
    {"expand_as", tensor_expand_as, METH_O, "expand_as(other)"},
    {"narrow", CT_FASTCALL(tensor_narrow), CT_METH_FK, "narrow(dim, start, length)"},
    {"select", CT_FASTCALL(tensor_select), CT_METH_FK, "select(dim, index)"},
    {"unbind", CT_FASTCALL(tensor_unbind), CT_METH_FK, "unbind(dim=0)"},
    {"split", CT_FASTCALL(tensor_split), CT_METH_FK, "split(split_size_or_sections, dim=0)"},
    {"chunk", CT_FASTCALL(tensor_chunk), CT_METH_FK, "chunk(chunks, dim=0)"},
    {"broadcast_to", CT_FASTCALL(broadcast_to_method), CT_METH_FK, "broadcast_to(size): self.expand(size)"},
    {"unfold", CT_FASTCALL(tensor_unfold), CT_METH_FK, "unfold(dimension, size, step): windows along dimension (view)"},
    {"as_strided", CT_FASTCALL(tensor_as_strided), CT_METH_FK,
     "as_strided(size, stride, storage_offset=None): a view of the storage with this geometry"},
    {"transpose_", CT_FASTCALL(tensor_transpose_), CT_METH_FK, "transpose_(dim0, dim1): in place"},
    {"swapaxes_", CT_FASTCALL(tensor_transpose_), CT_METH_FK, "swapaxes_(axis0, axis1): in place"},
    {"swapdims_", CT_FASTCALL(tensor_transpose_), CT_METH_FK, "swapdims_(dim0, dim1): in place"},
    {"t_", tensor_t_, METH_NOARGS, "t_(): t() in place"},
    {"squeeze_", CT_FASTCALL(tensor_squeeze_), CT_METH_FK, "squeeze_(dim=None): in place"},
    {"unsqueeze_", CT_FASTCALL(tensor_unsqueeze_), CT_METH_FK, "unsqueeze_(dim): in place"},
    {NULL},
};

/* torch.reshape(x, ...), torch.transpose(x, ...): the methods, as functions */
CT_FUNCTION_FROM_METHOD(reshape, tensor_reshape)
CT_FUNCTION_FROM_METHOD(flatten, tensor_flatten)
CT_FUNCTION_FROM_METHOD(unflatten, tensor_unflatten)
CT_FUNCTION_FROM_METHOD(squeeze, tensor_squeeze)
CT_FUNCTION_FROM_METHOD(unsqueeze, tensor_unsqueeze)
CT_FUNCTION_FROM_METHOD(transpose, tensor_transpose)
CT_FUNCTION_FROM_METHOD(swapaxes, tensor_transpose)
CT_FUNCTION_FROM_METHOD(swapdims, tensor_transpose)
CT_FUNCTION_FROM_NOARGS_METHOD(t, tensor_t)
CT_FUNCTION_FROM_METHOD(permute, tensor_permute)
CT_FUNCTION_FROM_METHOD(movedim, tensor_movedim)
CT_FUNCTION_FROM_METHOD(moveaxis, tensor_movedim)
CT_FUNCTION_FROM_METHOD(narrow, tensor_narrow)
CT_FUNCTION_FROM_METHOD(select, tensor_select)
CT_FUNCTION_FROM_METHOD(unbind, tensor_unbind)
CT_FUNCTION_FROM_METHOD(split, tensor_split)
CT_FUNCTION_FROM_METHOD(chunk, tensor_chunk)

/* --- broadcasting ------------------------------------------------------------------------------ */
/* The broadcast of every shape in args (ints or size sequences, or tensors' shapes when
 * tensors); ndim, or -1 with PyTorch's broadcast error. */
static int broadcast_all(PyObject *const *args, Py_ssize_t nargs, bool tensors, int64_t *shape)
{
    int nd = 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        int64_t sizes[CT_MAX_DIMS], merged[CT_MAX_DIMS];
        int n;
        if (tensors) {
            if (!CtTensor_Check(args[i])) {
                PyErr_Format(PyExc_TypeError, "broadcast_tensors(): expected Tensor as element %zd, but got %s", i,
                             Py_TYPE(args[i])->tp_name);
                return -1;
            }
            n = CT_TENSOR(args[i])->ndim;
            memcpy(sizes, CT_TENSOR(args[i])->sizes, sizeof(int64_t) * n);
        } else if (PyLong_Check(args[i])) {
            n = 1;
            sizes[0] = PyLong_AsLongLong(args[i]);
            if (sizes[0] < 0 && !PyErr_Occurred()) {
                PyErr_Format(PyExc_RuntimeError, "Trying to create tensor with negative dimension %lld",
                             (long long)sizes[0]);
            }
            if (PyErr_Occurred()) {
                return -1;
            }
        } else if ((n = ct_parse_size_seq(args[i], sizes, false)) < 0) {
            return -1;
        }
        if ((nd = ct_broadcast_shapes(nd, shape, n, sizes, merged)) < 0) {
            return -1;
        }
        memcpy(shape, merged, sizeof(int64_t) * nd);
    }
    return nd;
}

static PyObject *fn_broadcast_shapes(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    int64_t shape[CT_MAX_DIMS];
    int nd = broadcast_all(args, nargs, false, shape);
    return nd < 0 ? NULL : ct_size_object(nd, shape);
}

/* Each tensor expanded to the common shape (through the recorded expand: ExpandBackward0). */
static PyObject *fn_broadcast_tensors(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    int64_t shape[CT_MAX_DIMS];
    int nd = broadcast_all(args, nargs, true, shape);
    PyObject *size = nd < 0 ? NULL : ct_size_object(nd, shape);
    PyObject *result = size != NULL ? PyTuple_New(nargs) : NULL;
    for (Py_ssize_t i = 0; result != NULL && i < nargs; i++) {
        PyObject *e = PyObject_CallMethod(args[i], "expand", "(O)", size);
        if (e == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyTuple_SET_ITEM(result, i, e);
    }
    Py_XDECREF(size);
    return result;
}

/* broadcast_to(input, size): input.expand(size), recorded as such */
static PyObject *broadcast_to_method(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"size", NULL};
    PyObject *a[1];
    if (ct_parse_args("broadcast_to", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    return PyObject_CallMethod(self, "expand", "(O)", a[0]);
}
CT_FUNCTION_FROM_METHOD(broadcast_to, broadcast_to_method)

#define CT_VIEW_FUNCTION_ENTRY(name, doc) {#name, CT_FASTCALL(function_##name), CT_METH_FK, doc}
PyMethodDef ct_views_module_methods[] = {
    CT_VIEW_FUNCTION_ENTRY(reshape, "reshape(input, shape)"),
    CT_VIEW_FUNCTION_ENTRY(flatten, "flatten(input, start_dim=0, end_dim=-1)"),
    CT_VIEW_FUNCTION_ENTRY(unflatten, "unflatten(input, dim, sizes)"),
    CT_VIEW_FUNCTION_ENTRY(squeeze, "squeeze(input, dim=None)"),
    CT_VIEW_FUNCTION_ENTRY(unsqueeze, "unsqueeze(input, dim)"),
    CT_VIEW_FUNCTION_ENTRY(transpose, "transpose(input, dim0, dim1)"),
    CT_VIEW_FUNCTION_ENTRY(swapaxes, "swapaxes(input, axis0, axis1)"),
    CT_VIEW_FUNCTION_ENTRY(swapdims, "swapdims(input, dim0, dim1)"),
    CT_VIEW_FUNCTION_ENTRY(t, "t(input)"),
    CT_VIEW_FUNCTION_ENTRY(permute, "permute(input, dims)"),
    CT_VIEW_FUNCTION_ENTRY(movedim, "movedim(input, source, destination)"),
    CT_VIEW_FUNCTION_ENTRY(moveaxis, "moveaxis(input, source, destination)"),
    CT_VIEW_FUNCTION_ENTRY(narrow, "narrow(input, dim, start, length)"),
    CT_VIEW_FUNCTION_ENTRY(select, "select(input, dim, index)"),
    CT_VIEW_FUNCTION_ENTRY(unbind, "unbind(input, dim=0)"),
    CT_VIEW_FUNCTION_ENTRY(split, "split(tensor, split_size_or_sections, dim=0)"),
    CT_VIEW_FUNCTION_ENTRY(chunk, "chunk(input, chunks, dim=0)"),
    CT_VIEW_FUNCTION_ENTRY(broadcast_to, "broadcast_to(input, size): input.expand(size)"),
    CT_VIEW_FUNCTION_ENTRY(as_strided, "as_strided(input, size, stride, storage_offset=None)"),
    {"broadcast_shapes", CT_FASTCALL(fn_broadcast_shapes), METH_FASTCALL, "broadcast_shapes(*shapes) -> Size"},
    {"broadcast_tensors", CT_FASTCALL(fn_broadcast_tensors), METH_FASTCALL,
     "broadcast_tensors(*tensors): each expanded to the common shape"},
    {NULL},
};
PyType_Slot ct_views_tensor_slots[] = {{0, NULL}};
