/* namespace.c: names of torch's top-level namespace (and Tensor methods) that are aliases or
 * small compositions of existing ops, for real dtypes (ctorch has no complex dtypes):
 *   predicates (is_complex, is_signed, is_nonzero, is_same_size, is_inference, is_conj, is_neg),
 *   the complex helpers on real tensors (conj, conj_physical, resolve_conj/neg and real return
 *   the input itself; imag raises; isreal is all true; angle is 0 / pi with NaN kept; adjoint,
 *   mH and H transpose), torch.layout's strided check, the *_copy ops (the view op, then a
 *   contiguous copy), unsafe_split/chunk, split_with_sizes, row_stack, as_strided_scatter, fill,
 *   range, module functions of methods (fill_, zero_, gcd_, ...), the deprecated linalg spellings
 *   (matrix_power, pinverse, triangular_solve, lu_solve, frobenius_norm, nuclear_norm,
 *   norm_except_dim), and the global switches (warn_always, anomaly mode, interop threads,
 *   flush denormal).
 * Every op is composed of recording ops through ct_op / method calls, so autograd records its
 * parts and every device runs it; angle alone has a formula row (AngleBackward0, zero gradient). */
#include "namespace.h"
#include "args.h"
#include "creation.h"
#include "linalg.h"
#include "autograd_arena.h"
#include "dtype.h"
#include "registry.h"
#include "tensor.h"
#include <math.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define CT_HAVE_MXCSR 1
#endif

bool ct_anomaly_enabled = false;
bool ct_anomaly_check_nan = true;
static bool warn_always = false;
static int interop_threads = 0; /* 0: not set yet (the default is the CPU count) */
static PyObject *layout_type;   /* torch.layout, registered by the Python package */
static PyObject *strided_layout;

/* --- helpers --------------------------------------------------------------------------------------------- */
/* The input of fname(input, ...) as a tensor (borrowed), or NULL with PyTorch's TypeError. */
static PyObject *input_arg(const char *fname, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || !CtTensor_Check(args[0])) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' (position 1) must be Tensor, not %s", fname,
                     nargs < 1 ? "nothing" : Py_TYPE(args[0])->tp_name);
        return NULL;
    }
    return args[0];
}

static int no_arguments(const char *fname, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs > 0 || kwnames != NULL) {
        PyErr_Format(PyExc_TypeError, "%s() takes no arguments", fname);
        return -1;
    }
    return 0;
}

/* args[0].method(*args[1:], **kw): a new reference */
static PyObject *call_method(const char *method, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *name = PyUnicode_FromString(method);
    if (name == NULL) {
        return NULL;
    }
    PyObject *r = PyObject_VectorcallMethod(name, args, (size_t)nargs, kwnames);
    Py_DECREF(name);
    return r;
}

/* A contiguous copy of the tensor v (a new tensor, never v itself). Steals v. */
static PyObject *contiguous_copy(PyObject *v)
{
    if (v == NULL) {
        return NULL;
    }
    PyObject *c = PyObject_CallMethod(v, "contiguous", NULL);
    if (c == v) { /* already contiguous: clone keeps that layout */
        Py_SETREF(c, PyObject_CallMethod(v, "clone", NULL));
    }
    Py_DECREF(v);
    return c;
}

/* Each tensor of the sequence seq copied contiguously, as a tuple. Steals seq. */
static PyObject *contiguous_copies(PyObject *seq)
{
    PyObject *fast = seq != NULL ? PySequence_Fast(seq, "expected a sequence of tensors") : NULL;
    Py_XDECREF(seq);
    if (fast == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject *r = PyTuple_New(n);
    for (Py_ssize_t i = 0; r != NULL && i < n; i++) {
        PyObject *c = contiguous_copy(Py_NewRef(PySequence_Fast_GET_ITEM(fast, i)));
        if (c == NULL) {
            Py_CLEAR(r);
            break;
        }
        PyTuple_SET_ITEM(r, i, c);
    }
    Py_DECREF(fast);
    return r;
}

/* PyTorch's deprecation warnings of the old spellings (UserWarning, as PyTorch's TORCH_WARN_ONCE) */
static int deprecated(const char *message) { return PyErr_WarnEx(PyExc_UserWarning, message, 1); }

/* --- layouts --------------------------------------------------------------------------------------------- */
static PyObject *py_set_layouts(PyObject *mod, PyObject *args)
{
    PyObject *type, *strided;
    if (!PyArg_ParseTuple(args, "OO", &type, &strided)) {
        return NULL;
    }
    Py_XSETREF(layout_type, Py_NewRef(type));
    Py_XSETREF(strided_layout, Py_NewRef(strided));
    Py_RETURN_NONE;
}

int ct_layout_arg(const char *fname, PyObject *obj)
{
    if (obj == NULL || obj == Py_None || (strided_layout != NULL && obj == strided_layout)) {
        return 0;
    }
    int is_layout = layout_type != NULL ? PyObject_IsInstance(obj, layout_type) : 0;
    if (is_layout < 0) {
        return -1;
    }
    if (is_layout) {
        PyErr_Format(PyExc_RuntimeError, "%s: ctorch supports only the strided layout, not %R", fname, obj);
    } else {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'layout' must be torch.layout, not %s", fname,
                     Py_TYPE(obj)->tp_name);
    }
    return -1;
}

PyObject *ct_namespace_get_layout(PyObject *self, void *closure)
{
    if (strided_layout == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "ctorch: torch.strided is not registered");
        return NULL;
    }
    return Py_NewRef(strided_layout);
}

/* --- predicates ------------------------------------------------------------------------------------------ */
static PyObject *tensor_is_complex(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return no_arguments("is_complex", nargs, kwnames) < 0 ? NULL : Py_NewRef(Py_False);
}

static PyObject *tensor_is_conj(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return no_arguments("is_conj", nargs, kwnames) < 0 ? NULL : Py_NewRef(Py_False);
}

static PyObject *tensor_is_neg(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return no_arguments("is_neg", nargs, kwnames) < 0 ? NULL : Py_NewRef(Py_False);
}

/* ctorch has no inference tensors: inference_mode only turns grad mode off */
static PyObject *tensor_is_inference(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return no_arguments("is_inference", nargs, kwnames) < 0 ? NULL : Py_NewRef(Py_False);
}

static PyObject *tensor_is_signed(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (no_arguments("is_signed", nargs, kwnames) < 0) {
        return NULL;
    }
    CtDType d = CT_TENSOR(self)->dtype;
    return PyBool_FromLong(d != CT_BOOL && d != CT_U8);
}

static PyObject *tensor_is_nonzero(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (no_arguments("is_nonzero", nargs, kwnames) < 0) {
        return NULL;
    }
    int64_t numel = ct_numel(CT_TENSOR(self));
    if (numel != 1) {
        PyErr_SetString(PyExc_RuntimeError, numel == 0 ? "Boolean value of Tensor with no values is ambiguous"
                                                       : "Boolean value of Tensor with more than one value is ambiguous");
        return NULL;
    }
    PyObject *v = PyObject_CallMethod(self, "item", NULL);
    int truth = v != NULL ? PyObject_IsTrue(v) : -1; /* NaN is nonzero, as in PyTorch */
    Py_XDECREF(v);
    return truth < 0 ? NULL : PyBool_FromLong(truth);
}

static PyObject *tensor_is_same_size(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"other", NULL};
    PyObject *a[1];
    if (ct_parse_args("is_same_size", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[0])) {
        PyErr_Format(PyExc_TypeError, "is_same_size(): argument 'other' (position 1) must be Tensor, not %s",
                     Py_TYPE(a[0])->tp_name);
        return NULL;
    }
    const CtTensorObject *t = CT_TENSOR(self), *o = CT_TENSOR(a[0]);
    bool same = t->ndim == o->ndim;
    for (int i = 0; same && i < t->ndim; i++) {
        same = t->sizes[i] == o->sizes[i];
    }
    return PyBool_FromLong(same);
}

/* --- complex helpers on real tensors ----------------------------------------------------------------------- */
/* conj, conj_physical(_), resolve_conj, resolve_neg: a real tensor is its own conjugate; PyTorch
 * returns the input itself */
static PyObject *tensor_identity(const char *fname, PyObject *self, Py_ssize_t nargs, PyObject *kwnames)
{
    return no_arguments(fname, nargs, kwnames) < 0 ? NULL : Py_NewRef(self);
}

#define CT_IDENTITY_METHOD(name)                                                                                  \
    static PyObject *tensor_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)     \
    {                                                                                                             \
        return tensor_identity(#name, self, nargs, kwnames);                                                      \
    }
CT_IDENTITY_METHOD(conj)
CT_IDENTITY_METHOD(conj_physical)
CT_IDENTITY_METHOD(conj_physical_)
CT_IDENTITY_METHOD(resolve_conj)
CT_IDENTITY_METHOD(resolve_neg)
#undef CT_IDENTITY_METHOD

PyObject *ct_namespace_get_real(PyObject *self, void *closure) { return Py_NewRef(self); }

PyObject *ct_namespace_get_imag(PyObject *self, void *closure)
{
    PyErr_SetString(PyExc_TypeError, "imag is not implemented for tensors with non-complex dtypes.");
    return NULL;
}

static PyObject *function_real(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *x = input_arg("real", args, nargs);
    return x == NULL || no_arguments("real", nargs - 1, kwnames) < 0 ? NULL : Py_NewRef(x);
}

static PyObject *function_imag(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *x = input_arg("imag", args, nargs);
    return x == NULL || no_arguments("imag", nargs - 1, kwnames) < 0 ? NULL : ct_namespace_get_imag(x, NULL);
}

/* isreal: true everywhere on a real tensor */
static PyObject *tensor_isreal(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (no_arguments("isreal", nargs, kwnames) < 0) {
        return NULL;
    }
    PyObject *kw = Py_BuildValue("(s)", "dtype");
    PyObject *a[2] = {self, ct_dtype_object(CT_BOOL)};
    PyObject *r = kw != NULL ? ct_op("ones_like", a, 1, kw) : NULL;
    Py_XDECREF(kw);
    return r;
}

/* angle of a real number: pi for negatives, 0 otherwise, NaN kept; integers and bool give the
 * default float dtype */
static PyObject *tensor_angle(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"*out", NULL};
    PyObject *a[1];
    if (ct_parse_args("angle", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    CtDType rd = ct_is_floating(t->dtype) ? t->dtype : ct_default_float_dtype;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *x = METH(self, "to", "(O)", ct_dtype_object(rd));
    PyObject *r = MUL(CMPF(x, NUM(0.0), Py_LT, x), NUM(M_PI));
    r = WHERE(METH(x, "isnan", NULL), x, r);
    PyObject *res = TAKE(r);
    arena_free(arena);
    if (res == NULL) {
        return NULL;
    }
    return ct_write_out(CT_TENSOR(res), a[0], "angle", CT_OUT_CAST, 0, NULL);
}

/* adjoint / mH: the last two dims swapped (the conjugate is the identity on real tensors) */
static PyObject *adjoint_of(PyObject *self, const char *what)
{
    if (CT_TENSOR(self)->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "tensor.%s is only supported on matrices or batches of matrices. Got %d-D tensor.",
                     what, CT_TENSOR(self)->ndim);
        return NULL;
    }
    return PyObject_CallMethod(self, "transpose", "(ii)", -2, -1);
}

static PyObject *tensor_adjoint(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return no_arguments("adjoint", nargs, kwnames) < 0 ? NULL : adjoint_of(self, "adjoint()");
}

PyObject *ct_namespace_get_mH(PyObject *self, void *closure) { return adjoint_of(self, "mH"); }

PyObject *ct_namespace_get_H(PyObject *self, void *closure)
{
    int nd = CT_TENSOR(self)->ndim;
    if (nd == 2) {
        return PyObject_CallMethod(self, "transpose", "(ii)", 0, 1);
    }
    if (nd == 0) {
        return PyObject_CallMethod(self, "t", NULL);
    }
    PyErr_Format(PyExc_RuntimeError, "tensor.H is only supported on matrices (2-D tensors). Got %d-D tensor.%s", nd,
                 nd > 2 ? " For batches of matrices, consider using tensor.mH" : "");
    return NULL;
}

/* --- *_copy: the view op, then a contiguous copy ----------------------------------------------------------- */
/* fname(input, *args, out=None, **kw) = input.view_op(*args, **kw) copied contiguously (each piece
 * for the ops giving several); drop names a keyword of fname the view op has not (expand's implicit).
 * quiet: out= must have the input's dtype and is resized without the deprecation warning (narrow_copy,
 * whose out= variant PyTorch writes by hand). */
static PyObject *copy_of_view(const char *fname, const char *view_op, const char *drop, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames, bool pieces, bool quiet)
{
    if (input_arg(fname, args, nargs) == NULL) {
        return NULL;
    }
    PyObject *kept[16], *kept_names, *out;
    if (ct_split_out(fname, args, nargs, kwnames, drop, kept, 16, &kept_names, &out) < 0) {
        return NULL;
    }
    PyObject *v = call_method(view_op, kept, nargs, kept_names);
    Py_XDECREF(kept_names);
    if (pieces) {
        if (out != NULL && out != Py_None) {
            Py_XDECREF(v);
            PyErr_Format(PyExc_TypeError, "%s(): out= is not supported by ctorch", fname);
            return NULL;
        }
        return contiguous_copies(v);
    }
    PyObject *r = contiguous_copy(v);
    if (r == NULL) {
        return NULL;
    }
    CtTensorObject *o = quiet && out != NULL && CtTensor_Check(out) ? CT_TENSOR(out) : NULL;
    if (o != NULL && o->dtype != CT_TENSOR(r)->dtype) {
        PyErr_SetString(PyExc_RuntimeError, "Expected self.dtype() == output.dtype() to be true, but got false.  "
                        "(Could this error message be improved?  If so, please report an enhancement request to PyTorch.)");
    }
    if (o != NULL && (o->dtype != CT_TENSOR(r)->dtype ||
                      ct_resize_output_ex(o, CT_TENSOR(r)->ndim, CT_TENSOR(r)->sizes, false) < 0)) {
        Py_DECREF(r);
        return NULL;
    }
    return ct_write_out(CT_TENSOR(r), out, fname, CT_OUT_EXACT, 0, NULL);
}

#define CT_COPY_OP(name, view_op, drop, pieces, quiet)                                                            \
    static PyObject *function_##name(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)    \
    {                                                                                                             \
        return copy_of_view(#name, view_op, drop, args, nargs, kwnames, pieces, quiet);                           \
    }
CT_COPY_OP(view_copy, "view", NULL, false, false)
CT_COPY_OP(permute_copy, "permute", NULL, false, false)
CT_COPY_OP(transpose_copy, "transpose", NULL, false, false)
CT_COPY_OP(t_copy, "t", NULL, false, false)
CT_COPY_OP(expand_copy, "expand", "implicit", false, false)
CT_COPY_OP(diagonal_copy, "diagonal", NULL, false, false)
CT_COPY_OP(select_copy, "select", NULL, false, false)
CT_COPY_OP(squeeze_copy, "squeeze", NULL, false, false)
CT_COPY_OP(unsqueeze_copy, "unsqueeze", NULL, false, false)
CT_COPY_OP(unfold_copy, "unfold", NULL, false, false)
CT_COPY_OP(narrow_copy, "narrow", NULL, false, true)
CT_COPY_OP(as_strided_copy, "as_strided", NULL, false, false)
CT_COPY_OP(detach_copy, "detach", NULL, false, false)
CT_COPY_OP(alias_copy, "view_as", NULL, false, false)
CT_COPY_OP(unbind_copy, "unbind", NULL, true, false)
CT_COPY_OP(split_copy, "split", NULL, true, false)
CT_COPY_OP(split_with_sizes_copy, "split", NULL, true, false)
CT_COPY_OP(unsafe_split, "split", NULL, true, false)
CT_COPY_OP(unsafe_split_with_sizes, "split", NULL, true, false)
CT_COPY_OP(unsafe_chunk, "chunk", NULL, true, false)
#undef CT_COPY_OP

/* alias_copy(input): view_as needs the input again as its argument */
static PyObject *function_alias_copy_entry(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (input_arg("alias_copy", args, nargs) == NULL) {
        return NULL;
    }
    if (nargs != 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 1)) {
        PyErr_Format(PyExc_TypeError, "alias_copy() takes 1 positional argument and out=, but %zd were given", nargs);
        return NULL;
    }
    PyObject *two[3] = {args[0], args[0], kwnames != NULL ? args[1] : NULL};
    return function_alias_copy(mod, two, 2, kwnames);
}

/* narrow_copy as a method (Tensor.narrow_copy(dim, start, length)) */
static PyObject *tensor_narrow_copy(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return ct_function_as_method("narrow_copy", function_narrow_copy, self, args, nargs, kwnames);
}

/* slice_copy(input, dim=0, start=None, end=None, step=1) = input[..., start:end:step] (at dim), copied */
static PyObject *function_slice_copy(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "start", "end", "step", "*out", NULL};
    PyObject *a[6];
    int64_t dim = 0;
    int wd;
    if (ct_parse_args("slice_copy", args, nargs, kwnames, names, 1, a) < 0 ||
        input_arg("slice_copy", a, 1) == NULL || ct_arg_int64(a[1], &dim) < 0) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(a[0]);
    if (ct_wrap_dim(dim, t->ndim, &wd) < 0) {
        return NULL;
    }
    PyObject *key = PyTuple_New(wd + 1);
    for (int i = 0; key != NULL && i <= wd; i++) {
        PyObject *s = i < wd ? PySlice_New(NULL, NULL, NULL)
                             : PySlice_New(a[2] ? a[2] : Py_None, a[3] ? a[3] : Py_None, a[4] ? a[4] : Py_None);
        if (s == NULL) {
            Py_CLEAR(key);
            break;
        }
        PyTuple_SET_ITEM(key, i, s);
    }
    PyObject *v = key != NULL ? PyObject_GetItem(a[0], key) : NULL;
    Py_XDECREF(key);
    PyObject *r = contiguous_copy(v);
    return r == NULL ? NULL : ct_write_out(CT_TENSOR(r), a[5], "slice_copy", CT_OUT_EXACT, 0, NULL);
}

/* split_with_sizes(input, split_sizes, dim=0): split with a list of sizes (views) */
static PyObject *tensor_split_with_sizes(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"split_sizes", "dim", NULL};
    PyObject *a[2];
    if (ct_parse_args("split_with_sizes", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    if (!PyList_Check(a[0]) && !PyTuple_Check(a[0])) {
        PyErr_Format(PyExc_TypeError, "split_with_sizes(): argument 'split_sizes' (position 1) must be tuple of ints, not %s",
                     Py_TYPE(a[0])->tp_name);
        return NULL;
    }
    if (a[1] == NULL) {
        return PyObject_CallMethod(self, "split", "(O)", a[0]);
    }
    return PyObject_CallMethod(self, "split", "(OO)", a[0], a[1]);
}

/* method forms of the ops above: Tensor.name(*args) = torch.name(self, *args) */
#define CT_METHOD_OF_FUNCTION(name)                                                                               \
    static PyObject *tensor_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)     \
    {                                                                                                             \
        return ct_function_as_method(#name, function_##name, self, args, nargs, kwnames);                         \
    }
CT_METHOD_OF_FUNCTION(unsafe_split)
CT_METHOD_OF_FUNCTION(unsafe_split_with_sizes)
CT_METHOD_OF_FUNCTION(unsafe_chunk)

/* --- more compositions ------------------------------------------------------------------------------------- */
/* row_stack: vstack's alias */
static PyObject *function_row_stack(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return ct_op("vstack", args, (size_t)nargs, kwnames);
}

/* as_strided_scatter(input, src, size, stride, storage_offset=None): a contiguous copy of input with
 * src written through as_strided(size, stride, storage_offset) */
static PyObject *tensor_as_strided_scatter(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"src", "size", "stride", "storage_offset", NULL};
    PyObject *a[4];
    if (ct_parse_args("as_strided_scatter", args, nargs, kwnames, names, 3, a) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[0])) {
        PyErr_Format(PyExc_TypeError, "as_strided_scatter(): argument 'src' (position 2) must be Tensor, not %s",
                     Py_TYPE(a[0])->tp_name);
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = KEEP(contiguous_copy(Py_NewRef(self)));
    PyObject *view = METH(r, "as_strided", "(OOO)", a[1], a[2], a[3] ? a[3] : Py_None);
    if (!arena->failed) {
        CtTensorObject *s = CT_TENSOR(a[0]), *v = CT_TENSOR(view);
        if (s->ndim != v->ndim || memcmp(s->sizes, v->sizes, sizeof(int64_t) * (size_t)s->ndim) != 0) {
            char got[256], want[256];
            ct_format_sizes(got, sizeof(got), s->ndim, s->sizes);
            ct_format_sizes(want, sizeof(want), v->ndim, v->sizes);
            PyErr_Format(PyExc_RuntimeError,
                         "expected src to have a size equal to the slice of self. src size = %s, slice size = %s", got,
                         want);
            arena->failed = true;
        }
    }
    METH(view, "copy_", "(O)", a[0]);
    PyObject *res = TAKE(r);
    arena_free(arena);
    return res;
}

/* torch.fill(input, value): a copy of input's shape and layout filled with value */
static PyObject *function_fill(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "value", NULL};
    PyObject *a[2];
    if (ct_parse_args("fill", args, nargs, kwnames, names, 2, a) < 0 || input_arg("fill", a, 1) == NULL) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = METH(METH(a[0], "clone", NULL), "fill_", "(O)", a[1]);
    PyObject *res = TAKE(r);
    arena_free(arena);
    return res;
}

/* torch.range(start, end, step=1): end included, the default float dtype; deprecated */
static PyObject *function_range(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"start", "end", "step",   "*out",          "*dtype",
                                        "*layout", "*device", "*pin_memory", "*requires_grad", NULL};
    PyObject *a[9];
    double start, end, step = 1.0;
    CtFactoryOptions opt; /* out=, dtype=, layout=, device= checked as every factory's (check_out_type_matches) */
    if (ct_parse_args("range", args, nargs, kwnames, names, 2, a) < 0 || ct_arg_double(a[0], &start) < 0 ||
        ct_arg_double(a[1], &end) < 0 || ct_arg_double(a[2], &step) < 0 ||
        ct_factory_options("range", (PyObject *const[]){a[3], a[4], a[5], a[6], a[7], a[8], NULL}, &opt) < 0) {
        return NULL;
    }
    if (deprecated("torch.range is deprecated and will be removed in a future release because its behavior is "
                   "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                   "[start, end).") < 0) {
        return NULL;
    }
    if (step == 0.0) {
        PyErr_SetString(PyExc_RuntimeError, "step must be nonzero");
        return NULL;
    }
    if (!isfinite(start) || !isfinite(end)) {
        PyErr_Format(PyExc_RuntimeError, "unsupported range: %R -> %R", a[0], a[1]);
        return NULL;
    }
    if ((step > 0 && end < start) || (step < 0 && end > start)) {
        PyErr_SetString(PyExc_RuntimeError, "upper bound and lower bound inconsistent with step sign");
        return NULL;
    }
    int64_t n = (int64_t)floor((end - start) / step) + 1;
    /* start + i * step in double, then the result dtype (PyTorch's accumulation for float) */
    PyObject *dtype = a[4] != NULL && a[4] != Py_None ? a[4] : ct_dtype_object(ct_default_float_dtype);
    PyObject *kw = Py_BuildValue("(ss)", "dtype", "device");
    PyObject *arange_args[3] = {NULL, ct_dtype_object(CT_F64), a[6] ? a[6] : Py_None};
    CtArena scratch = {0}, *arena = &scratch;
    arange_args[0] = INT(n);
    PyObject *idx = kw != NULL && !arena->failed ? KEEP(ct_op("arange", arange_args, 1, kw)) : NULL;
    Py_XDECREF(kw);
    PyObject *r = METH(ADD(MUL(idx, NUM(step)), NUM(start)), "to", "(O)", dtype);
    if (r != NULL && a[8] != NULL && PyObject_IsTrue(a[8]) == 1) {
        r = METH(r, "requires_grad_", NULL);
    }
    PyObject *res = TAKE(r);
    arena_free(arena);
    if (res == NULL) {
        return NULL;
    }
    return ct_write_out(CT_TENSOR(res), a[3], "range", CT_OUT_EXACT, 0, NULL);
}

/* --- module functions of methods (torch.fill_(t, v) = t.fill_(v), ...) ----------------------------------- */
#define CT_FUNCTION_OF_METHOD(name)                                                                               \
    static PyObject *function_##name(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)    \
    {                                                                                                             \
        return input_arg(#name, args, nargs) == NULL ? NULL : call_method(#name, args, nargs, kwnames);           \
    }
CT_FUNCTION_OF_METHOD(fill_)
CT_FUNCTION_OF_METHOD(zero_)
CT_FUNCTION_OF_METHOD(index_put_)
CT_FUNCTION_OF_METHOD(index_put)
CT_FUNCTION_OF_METHOD(detach_)
CT_FUNCTION_OF_METHOD(gcd_)
CT_FUNCTION_OF_METHOD(lcm_)
CT_FUNCTION_OF_METHOD(xlogy_)
CT_FUNCTION_OF_METHOD(addmv_)
#undef CT_FUNCTION_OF_METHOD

CT_FUNCTION_FROM_METHOD(is_complex, tensor_is_complex)
CT_FUNCTION_FROM_METHOD(is_conj, tensor_is_conj)
CT_FUNCTION_FROM_METHOD(is_neg, tensor_is_neg)
CT_FUNCTION_FROM_METHOD(is_inference, tensor_is_inference)
CT_FUNCTION_FROM_METHOD(is_signed, tensor_is_signed)
CT_FUNCTION_FROM_METHOD(is_nonzero, tensor_is_nonzero)
CT_FUNCTION_FROM_METHOD(is_same_size, tensor_is_same_size)
CT_FUNCTION_FROM_METHOD(conj, tensor_conj)
CT_FUNCTION_FROM_METHOD(conj_physical, tensor_conj_physical)
CT_FUNCTION_FROM_METHOD(conj_physical_, tensor_conj_physical_)
CT_FUNCTION_FROM_METHOD(resolve_conj, tensor_resolve_conj)
CT_FUNCTION_FROM_METHOD(resolve_neg, tensor_resolve_neg)
CT_FUNCTION_FROM_METHOD(isreal, tensor_isreal)
CT_FUNCTION_FROM_METHOD(angle, tensor_angle)
CT_FUNCTION_FROM_METHOD(adjoint, tensor_adjoint)
CT_FUNCTION_FROM_METHOD(split_with_sizes, tensor_split_with_sizes)
CT_FUNCTION_FROM_METHOD(as_strided_scatter, tensor_as_strided_scatter)

/* --- the old linalg spellings ------------------------------------------------------------------------------ */
/* matrix_power(input, n) = linalg.matrix_power */
static PyObject *matrix_power_op(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return ct_op("_linalg_matrix_power", args, (size_t)nargs, kwnames);
}

static PyObject *tensor_matrix_power(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return ct_function_as_method("matrix_power", matrix_power_op, self, args, nargs, kwnames);
}

/* pinverse(input, rcond=1e-15) = linalg.pinv(input, rcond) */
static PyObject *tensor_pinverse(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"rcond", NULL};
    PyObject *a[1];
    if (ct_parse_args("pinverse", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    PyObject *rcond = a[0] != NULL ? Py_NewRef(a[0]) : PyFloat_FromDouble(1e-15);
    PyObject *call[2] = {self, rcond};
    PyObject *r = rcond != NULL ? ct_op("_linalg_pinv", call, 2, NULL) : NULL;
    Py_XDECREF(rcond);
    return r;
}

/* triangular_solve(b, A, upper=True, transpose=False, unitriangular=False) -> (solution, cloned_coefficient) */
static PyObject *tensor_triangular_solve(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "upper", "transpose", "unitriangular", NULL};
    PyObject *a[4];
    bool upper = true, transpose = false, unit = false;
    if (ct_parse_args("triangular_solve", args, nargs, kwnames, names, 1, a) < 0 || ct_arg_bool(a[1], &upper) < 0 ||
        ct_arg_bool(a[2], &transpose) < 0 || ct_arg_bool(a[3], &unit) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[0])) {
        PyErr_Format(PyExc_TypeError, "triangular_solve(): argument 'A' (position 2) must be Tensor, not %s",
                     Py_TYPE(a[0])->tp_name);
        return NULL;
    }
    if (deprecated("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
                   "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed "
                   "and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\n"
                   "should be replaced with\nX = torch.linalg.solve_triangular(A, B).") < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    /* A^T X = B is the triangular system of A^T, whose upper-ness flips */
    PyObject *A = transpose ? METH(a[0], "transpose", "(ii)", -2, -1) : a[0];
    PyObject *kw = KEEP(Py_BuildValue("(ss)", "upper", "unitriangular"));
    PyObject *call[4] = {A, self, PyBool_FromLong(transpose ? !upper : upper), PyBool_FromLong(unit)};
    PyObject *x = A != NULL && kw != NULL ? KEEP(ct_op("_linalg_solve_triangular", call, 2, kw)) : NULL;
    Py_DECREF(call[2]);
    Py_DECREF(call[3]);
    PyObject *clone = METH(a[0], "clone", NULL);
    PyObject *res = NULL;
    if (!arena->failed) {
        static PyTypeObject *type;
        static const char *const fields[] = {"solution", "cloned_coefficient"};
        PyObject *items[2] = {Py_NewRef(x), Py_NewRef(clone)};
        res = ct_linalg_named_result(&type, "torch.return_types.triangular_solve", fields, 2, items);
    }
    arena_free(arena);
    return res;
}

/* lu_solve(b, LU_data, LU_pivots) = linalg.lu_solve(LU_data, LU_pivots, b) */
static PyObject *tensor_lu_solve(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"LU_data", "LU_pivots", NULL};
    PyObject *a[2];
    if (ct_parse_args("lu_solve", args, nargs, kwnames, names, 2, a) < 0 ||
        deprecated("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future "
                   "PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
                   "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)") <
            0) {
        return NULL;
    }
    PyObject *call[3] = {a[0], a[1], self};
    return ct_op("_linalg_lu_solve", call, 3, NULL);
}

CT_FUNCTION_FROM_METHOD(matrix_power, tensor_matrix_power)
CT_FUNCTION_FROM_METHOD(pinverse, tensor_pinverse)
CT_FUNCTION_FROM_METHOD(triangular_solve, tensor_triangular_solve)
CT_FUNCTION_FROM_METHOD(lu_solve, tensor_lu_solve)

/* frobenius_norm(input, dim, keepdim=False) = linalg.vector_norm(input, 2, dim, keepdim); deprecated */
static PyObject *function_frobenius_norm(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "keepdim", "*out", NULL};
    PyObject *a[4];
    if (ct_parse_args("frobenius_norm", args, nargs, kwnames, names, 2, a) < 0 ||
        input_arg("frobenius_norm", a, 1) == NULL ||
        deprecated("at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed "
                   "in a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead") < 0) {
        return NULL;
    }
    PyObject *two = PyFloat_FromDouble(2.0);
    PyObject *call[5] = {a[0], two, a[1], a[2] ? a[2] : Py_False, a[3] ? a[3] : Py_None};
    PyObject *kw = two != NULL ? Py_BuildValue("(s)", "out") : NULL;
    PyObject *r = kw != NULL ? ct_op("_linalg_vector_norm", call, 4, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(two);
    return r;
}

/* nuclear_norm(input, dim=(0, 1)... , keepdim=False) = linalg.matrix_norm(input, 'nuc', dim, keepdim); deprecated */
static PyObject *function_nuclear_norm(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "dim", "keepdim", "*out", NULL};
    PyObject *a[4];
    if (ct_parse_args("nuclear_norm", args, nargs, kwnames, names, 1, a) < 0 ||
        input_arg("nuclear_norm", a, 1) == NULL) {
        return NULL;
    }
    if (a[1] != NULL && PyBool_Check(a[1]) && a[2] == NULL) { /* nuclear_norm(input, keepdim) */
        a[2] = a[1];
        a[1] = NULL;
    }
    if (deprecated("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be removed "
                   "in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead") < 0) {
        return NULL;
    }
    PyObject *nuc = PyUnicode_FromString("nuc");
    PyObject *dims = a[1] != NULL ? Py_NewRef(a[1]) : Py_BuildValue("(ii)", 0, 1);
    PyObject *call[5] = {a[0], nuc, dims, a[2] ? a[2] : Py_False, a[3] ? a[3] : Py_None};
    PyObject *kw = nuc != NULL && dims != NULL ? Py_BuildValue("(s)", "out") : NULL;
    PyObject *r = kw != NULL ? ct_op("_linalg_matrix_norm", call, 4, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(nuc);
    Py_XDECREF(dims);
    return r;
}

/* norm_except_dim(v, pow=2, dim=0): the pow-norm over every dim but dim (kept as size 1 elsewhere);
 * dim = -1: the norm of everything */
static PyObject *function_norm_except_dim(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"v", "pow", "dim", NULL};
    PyObject *a[3];
    int64_t dim = 0;
    if (ct_parse_args("norm_except_dim", args, nargs, kwnames, names, 1, a) < 0 ||
        input_arg("norm_except_dim", a, 1) == NULL || ct_arg_int64(a[2], &dim) < 0) {
        return NULL;
    }
    CtTensorObject *v = CT_TENSOR(a[0]);
    PyObject *p = a[1] != NULL ? a[1] : NULL;
    CtArena scratch = {0}, *arena = &scratch;
    if (p == NULL) {
        p = INT(2);
    }
    PyObject *r;
    if (dim == -1) {
        r = METH(a[0], "norm", "(O)", p);
    } else {
        int wd;
        if (ct_wrap_dim(dim, v->ndim, &wd) < 0) {
            return NULL;
        }
        PyObject *dims = KEEP(PyList_New(0));
        for (int i = 0; dims != NULL && i < v->ndim; i++) {
            PyObject *d = i != wd ? PyLong_FromLong(i) : NULL;
            if (i != wd && (d == NULL || PyList_Append(dims, d) < 0)) {
                Py_XDECREF(d);
                arena->failed = true;
                break;
            }
            Py_XDECREF(d);
        }
        PyObject *call[4] = {a[0], p, dims, Py_True};
        r = !arena->failed ? KEEP(ct_op("_linalg_vector_norm", call, 4, NULL)) : NULL;
    }
    PyObject *res = TAKE(r);
    arena_free(arena);
    return res;
}

/* torch.binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1) */
static PyObject *function_binary_cross_entropy_with_logits(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,
                                                           PyObject *kwnames)
{
    return ct_op("_binary_cross_entropy_with_logits", args, (size_t)nargs, kwnames);
}

/* --- global switches --------------------------------------------------------------------------------------- */
static PyObject *py_set_warn_always(PyObject *mod, PyObject *arg)
{
    int b = PyObject_IsTrue(arg);
    if (b < 0) {
        return NULL;
    }
    warn_always = b;
    Py_RETURN_NONE;
}

static PyObject *py_is_warn_always_enabled(PyObject *mod, PyObject *unused) { return PyBool_FromLong(warn_always); }

/* set_anomaly_enabled(enabled, check_nan=True) */
static PyObject *py_set_anomaly_enabled(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"enabled", "check_nan", NULL};
    PyObject *a[2];
    bool enabled = false, check_nan = true;
    if (ct_parse_args("set_anomaly_enabled", args, nargs, kwnames, names, 1, a) < 0 || ct_arg_bool(a[0], &enabled) < 0 ||
        ct_arg_bool(a[1], &check_nan) < 0) {
        return NULL;
    }
    ct_anomaly_enabled = enabled;
    ct_anomaly_check_nan = check_nan;
    Py_RETURN_NONE;
}

static PyObject *py_is_anomaly_enabled(PyObject *mod, PyObject *unused) { return PyBool_FromLong(ct_anomaly_enabled); }

static PyObject *py_is_anomaly_check_nan_enabled(PyObject *mod, PyObject *unused)
{
    return PyBool_FromLong(ct_anomaly_check_nan);
}

static PyObject *py_get_num_interop_threads(PyObject *mod, PyObject *unused)
{
    if (interop_threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        return PyLong_FromLong(n > 0 ? n : 1);
    }
    return PyLong_FromLong(interop_threads);
}

/* set_num_interop_threads(n): once only, as PyTorch's */
static PyObject *py_set_num_interop_threads(PyObject *mod, PyObject *arg)
{
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (n <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "Expected positive number of threads");
        return NULL;
    }
    if (interop_threads != 0) {
        PyErr_SetString(PyExc_RuntimeError, "Error: cannot set number of interop threads after parallel work has "
                                            "started or set_num_interop_threads called");
        return NULL;
    }
    interop_threads = (int)n;
    Py_RETURN_NONE;
}

/* set_flush_denormal(mode): flush-to-zero and denormals-are-zero in the calling thread's MXCSR (x86);
 * True when supported (always for mode False) */
static PyObject *py_set_flush_denormal(PyObject *mod, PyObject *arg)
{
    int on = PyObject_IsTrue(arg);
    if (on < 0) {
        return NULL;
    }
#ifdef CT_HAVE_MXCSR
    const unsigned int bits = 0x8040; /* FTZ (bit 15) | DAZ (bit 6) */
    unsigned int csr = _mm_getcsr();
    _mm_setcsr(on ? (csr | bits) : (csr & ~bits));
    Py_RETURN_TRUE;
#else
    return PyBool_FromLong(!on);
#endif
}

static PyObject *py_compiled_with_cxx11_abi(PyObject *mod, PyObject *unused) { Py_RETURN_TRUE; }

/* --- tables ------------------------------------------------------------------------------------------------ */
#define CT_M(name, doc) {#name, CT_FASTCALL(tensor_##name), CT_METH_FK, doc}
PyMethodDef ct_namespace_tensor_methods[] = {
    CT_M(is_complex, "is_complex(): False (ctorch has no complex dtypes)"),
    CT_M(is_conj, "is_conj(): False (no conjugate views on real tensors)"),
    CT_M(is_neg, "is_neg(): False (no negative views)"),
    CT_M(is_inference, "is_inference(): False (ctorch has no inference tensors)"),
    CT_M(is_signed, "is_signed(): whether the dtype is signed"),
    CT_M(is_nonzero, "is_nonzero(): the single element's truth"),
    CT_M(is_same_size, "is_same_size(other): same sizes"),
    CT_M(conj, "conj(): self (a real tensor)"),
    CT_M(conj_physical, "conj_physical(): self (a real tensor)"),
    CT_M(conj_physical_, "conj_physical_(): self (a real tensor)"),
    CT_M(resolve_conj, "resolve_conj(): self"),
    CT_M(resolve_neg, "resolve_neg(): self"),
    CT_M(isreal, "isreal(): all True on a real tensor"),
    CT_M(angle, "angle(): pi for negative elements, 0 otherwise, NaN kept"),
    CT_M(adjoint, "adjoint(): the last two dims swapped"),
    CT_M(narrow_copy, "narrow_copy(dim, start, length): narrow, copied contiguously"),
    CT_M(split_with_sizes, "split_with_sizes(split_sizes, dim=0)"),
    CT_M(unsafe_split, "unsafe_split(split_size, dim=0): split's pieces, copied"),
    CT_M(unsafe_split_with_sizes, "unsafe_split_with_sizes(split_sizes, dim=0): split's pieces, copied"),
    CT_M(unsafe_chunk, "unsafe_chunk(chunks, dim=0): chunk's pieces, copied"),
    CT_M(as_strided_scatter, "as_strided_scatter(src, size, stride, storage_offset=None)"),
    CT_M(matrix_power, "matrix_power(n): linalg.matrix_power"),
    CT_M(pinverse, "pinverse(rcond=1e-15): linalg.pinv"),
    CT_M(triangular_solve, "triangular_solve(A, upper=True, transpose=False, unitriangular=False)"),
    CT_M(lu_solve, "lu_solve(LU_data, LU_pivots): linalg.lu_solve(LU_data, LU_pivots, self)"),
    {NULL},
};
#undef CT_M

#define CT_FN(name, doc) {#name, CT_FASTCALL(function_##name), CT_METH_FK, doc}
PyMethodDef ct_namespace_module_methods[] = {
    {"_set_layouts", py_set_layouts, METH_VARARGS, "registers torch.layout and torch.strided"},
    CT_FN(is_complex, "is_complex(input)"),
    CT_FN(is_conj, "is_conj(input)"),
    CT_FN(is_neg, "is_neg(input)"),
    CT_FN(is_inference, "is_inference(input)"),
    CT_FN(is_signed, "is_signed(input)"),
    CT_FN(is_nonzero, "is_nonzero(input)"),
    CT_FN(is_same_size, "is_same_size(input, other)"),
    CT_FN(conj, "conj(input)"),
    CT_FN(conj_physical, "conj_physical(input)"),
    CT_FN(conj_physical_, "conj_physical_(input)"),
    CT_FN(resolve_conj, "resolve_conj(input)"),
    CT_FN(resolve_neg, "resolve_neg(input)"),
    CT_FN(real, "real(input): input itself"),
    CT_FN(imag, "imag(input): TypeError on real tensors"),
    CT_FN(isreal, "isreal(input)"),
    CT_FN(angle, "angle(input, *, out=None)"),
    CT_FN(adjoint, "adjoint(input)"),
    CT_FN(view_copy, "view_copy(input, size, *, out=None)"),
    CT_FN(permute_copy, "permute_copy(input, dims, *, out=None)"),
    CT_FN(transpose_copy, "transpose_copy(input, dim0, dim1, *, out=None)"),
    CT_FN(t_copy, "t_copy(input, *, out=None)"),
    CT_FN(expand_copy, "expand_copy(input, size, *, implicit=False, out=None)"),
    CT_FN(diagonal_copy, "diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None)"),
    CT_FN(select_copy, "select_copy(input, dim, index, *, out=None)"),
    CT_FN(slice_copy, "slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None)"),
    CT_FN(squeeze_copy, "squeeze_copy(input, dim=None, *, out=None)"),
    CT_FN(unsqueeze_copy, "unsqueeze_copy(input, dim, *, out=None)"),
    CT_FN(unfold_copy, "unfold_copy(input, dimension, size, step, *, out=None)"),
    CT_FN(narrow_copy, "narrow_copy(input, dim, start, length, *, out=None)"),
    CT_FN(as_strided_copy, "as_strided_copy(input, size, stride, storage_offset=None, *, out=None)"),
    CT_FN(detach_copy, "detach_copy(input, *, out=None)"),
    {"alias_copy", CT_FASTCALL(function_alias_copy_entry), CT_METH_FK, "alias_copy(input, *, out=None)"},
    CT_FN(unbind_copy, "unbind_copy(input, dim=0)"),
    CT_FN(split_copy, "split_copy(input, split_size, dim=0)"),
    CT_FN(split_with_sizes_copy, "split_with_sizes_copy(input, split_sizes, dim=0)"),
    CT_FN(split_with_sizes, "split_with_sizes(input, split_sizes, dim=0)"),
    CT_FN(unsafe_split, "unsafe_split(input, split_size, dim=0)"),
    CT_FN(unsafe_split_with_sizes, "unsafe_split_with_sizes(input, split_sizes, dim=0)"),
    CT_FN(unsafe_chunk, "unsafe_chunk(input, chunks, dim=0)"),
    CT_FN(row_stack, "row_stack(tensors, *, out=None): vstack"),
    CT_FN(as_strided_scatter, "as_strided_scatter(input, src, size, stride, storage_offset=None)"),
    CT_FN(fill, "fill(input, value): a filled copy"),
    CT_FN(range, "range(start, end, step=1, *, out=None, dtype=None, ...): end included (deprecated)"),
    CT_FN(fill_, "fill_(input, value)"),
    CT_FN(zero_, "zero_(input)"),
    CT_FN(index_put_, "index_put_(input, indices, values, accumulate=False)"),
    CT_FN(index_put, "index_put(input, indices, values, accumulate=False)"),
    CT_FN(detach_, "detach_(input)"),
    CT_FN(gcd_, "gcd_(input, other)"),
    CT_FN(lcm_, "lcm_(input, other)"),
    CT_FN(xlogy_, "xlogy_(input, other)"),
    CT_FN(addmv_, "addmv_(input, mat, vec, *, beta=1, alpha=1)"),
    CT_FN(matrix_power, "matrix_power(input, n)"),
    CT_FN(pinverse, "pinverse(input, rcond=1e-15)"),
    CT_FN(triangular_solve, "triangular_solve(b, A, upper=True, transpose=False, unitriangular=False)"),
    CT_FN(lu_solve, "lu_solve(b, LU_data, LU_pivots)"),
    CT_FN(frobenius_norm, "frobenius_norm(input, dim, keepdim=False, *, out=None) (deprecated)"),
    CT_FN(nuclear_norm, "nuclear_norm(input, dim=None, keepdim=False, *, out=None) (deprecated)"),
    CT_FN(norm_except_dim, "norm_except_dim(v, pow=2, dim=0)"),
    CT_FN(binary_cross_entropy_with_logits,
          "binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1)"),
    {"set_warn_always", py_set_warn_always, METH_O, "set_warn_always(b)"},
    {"is_warn_always_enabled", py_is_warn_always_enabled, METH_NOARGS, "is_warn_always_enabled()"},
    {"set_anomaly_enabled", CT_FASTCALL(py_set_anomaly_enabled), CT_METH_FK, "set_anomaly_enabled(enabled, check_nan=True)"},
    {"is_anomaly_enabled", py_is_anomaly_enabled, METH_NOARGS, "is_anomaly_enabled()"},
    {"is_anomaly_check_nan_enabled", py_is_anomaly_check_nan_enabled, METH_NOARGS, "is_anomaly_check_nan_enabled()"},
    {"get_num_interop_threads", py_get_num_interop_threads, METH_NOARGS, "get_num_interop_threads()"},
    {"set_num_interop_threads", py_set_num_interop_threads, METH_O, "set_num_interop_threads(n): once only"},
    {"set_flush_denormal", py_set_flush_denormal, METH_O, "set_flush_denormal(mode): FTZ/DAZ on x86; whether supported"},
    {"compiled_with_cxx11_abi", py_compiled_with_cxx11_abi, METH_NOARGS, "compiled_with_cxx11_abi(): True"},
    {NULL},
};
#undef CT_FN

PyType_Slot ct_namespace_tensor_slots[] = {{0, NULL}};
