/* nn_act.c: the nn family's activations, padding, distances and the losses PyTorch composes of
 * other ops (the functions behind torch.nn.functional, in ctorch._C).
 *
 * - Pointwise activations are rows of the elementwise table (elementwise_kernels.h: ELU,
 *   HARDTANH, HARDSIGMOID, HARDSWISH, MISH, LOG_SIGMOID, SOFTSHRINK, HARDSHRINK, THRESHOLD,
 *   PRELU), so the CPU and CUDA compute the same scalar_math.h function; this file parses their
 *   arguments (in-place `_` variants too) and holds their backward formulas (nn_act.h; the rows
 *   are in autograd_formulas.c's table). glu has a node of its own (GluBackward0) over a
 *   composed forward; softsign, tanhshrink and softmin are composed of recording ops, as in
 *   PyTorch.
 * - pad: constant_pad_nd is a new tensor filled with the value and a copy into its narrowed view
 *   (ConstantPadNdBackward0 pads the gradient by the negated amounts); reflect, replicate and
 *   circular are index_select gathers along each padded dim (their backward is index_add).
 * - normalize, cosine_similarity, pairwise_distance and the losses (kl_div, margin ranking,
 *   hinge / cosine embedding, poisson / gaussian NLL, triplet margin) are composed of recording
 *   ops as PyTorch composes them; huber and soft margin have a node of their own.
 *
 * Compositions use the arena of autograd_arena.h (METH/FN/MUL/... each owning its result,
 * NULL-propagating), so one check at the end of an expression suffices. */
#include "nn_act.h"
#include "args.h"
#include "autograd_arena.h"
#include "creation.h"
#include "device.h"
#include "elementwise.h"
#include "registry.h"
#include "tensor.h"
#include "views.h"
#include <math.h>
#include <string.h>

#define NEEDS(e) (n->edge_nodes[(e)] != NULL)

/* ============================================================================================
 * argument helpers
 * ============================================================================================ */

/* A tensor argument (borrowed), or TypeError "fname(): argument 'name' (position pos) must be
 * Tensor, not float". */
static CtTensorObject *tensor_arg(PyObject *obj, const char *fname, const char *name, int pos)
{
    if (obj != NULL && CtTensor_Check(obj)) {
        return CT_TENSOR(obj);
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname, name, pos,
                 obj ? ct_type_name(obj) : "NoneType");
    return NULL;
}

/* A float argument (absent or None keeps *out); TypeError in PyTorch's words otherwise. */
static int float_arg(PyObject *obj, const char *fname, const char *name, double *out)
{
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (CtTensor_Check(obj) && CT_TENSOR(obj)->ndim == 0) {
        CtScalar s;
        if (ct_item(CT_TENSOR(obj), &s) < 0) {
            return -1;
        }
        *out = ct_scalar_to_double(&s);
        return 0;
    }
    if (!PyNumber_Check(obj) || CtTensor_Check(obj) || PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Number, not %s", fname, name, ct_type_name(obj));
        return -1;
    }
    return ct_arg_double(obj, out);
}

/* A double saved in a node's normalised arguments (absent or None: dflt). */
static double node_double(CtNodeObject *n, int i, double dflt)
{
    PyObject *o = n->args[i];
    if (o == NULL || o == Py_None) {
        return dflt;
    }
    if (CtTensor_Check(o)) {
        CtScalar s;
        return ct_item(CT_TENSOR(o), &s) < 0 ? (PyErr_Clear(), dflt) : ct_scalar_to_double(&s);
    }
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return dflt;
    }
    return v;
}

/* gi[e] = value fitted to argument i's shape and dtype, when edge e wants a gradient. */
static int put_grad(CtNodeObject *n, PyObject **gi, int e, int i, PyObject *value)
{
    if (!NEEDS(e)) {
        return 0;
    }
    if (value == NULL) {
        return -1;
    }
    gi[e] = ct_fit_grad(value, &n->meta[i]);
    return gi[e] == NULL ? -1 : 0;
}

/* ============================================================================================
 * pointwise activations: one elementwise row each
 * ============================================================================================ */

/* Runs op on input (in place when inplace) with k parameters. Integer kernels take them
 * truncated and saturated to the dtype's range (so that hardtanh(uint8, -1, 1) clamps to [0, 1]
 * as PyTorch's does). */
static PyObject *run_activation(CtEwOp op, CtTensorObject *input, bool inplace, int k, const double *values)
{
    CtOpParams p;
    memset(&p, 0, sizeof(p));
    bool integral = !ct_is_floating(input->dtype) && input->dtype != CT_BOOL;
    double lo = 0.0, hi = 0.0;
    if (integral) {
        ct_dtype_range(input->dtype, &lo, &hi);
    }
    for (int j = 0; j < k; j++) {
        p.f[j] = values[j];
        double v = trunc(values[j]);
        v = isnan(v) ? 0.0 : v < lo ? lo : v > hi ? hi : v;
        p.i[j] = integral ? (int64_t)v : 0;
    }
    CtEwArg in[1] = {{input}};
    return (PyObject *)ct_elementwise(op, in, inplace ? input : NULL, &p, -1);
}

/* Parses (input, <names...>) of an activation with float parameters, defaults in values. */
static CtTensorObject *parse_activation(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                                        const char *const *names, int nrequired, double *values)
{
    PyObject *a[5] = {NULL, NULL, NULL, NULL, NULL};
    if (ct_parse_args(fname, args, nargs, kw, names, nrequired, a) < 0) {
        return NULL;
    }
    CtTensorObject *t = tensor_arg(a[0], fname, "input", 1);
    for (int j = 1; t != NULL && names[j] != NULL; j++) {
        if (float_arg(a[j], fname, names[j], &values[j - 1]) < 0) {
            return NULL;
        }
    }
    return t;
}

static const char *const names_input[] = {"input", NULL};

/* elu(input, alpha=1, scale=1, input_scale=1): the kernel's first parameter is alpha * scale */
static PyObject *elu_entry(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kw, bool inplace)
{
    static const char *const names[] = {"input", "alpha", "scale", "input_scale", NULL};
    double v[3] = {1.0, 1.0, 1.0};
    CtTensorObject *t = parse_activation(fname, args, nargs, kw, names, 1, v);
    if (t == NULL) {
        return NULL;
    }
    double p[3] = {v[0] * v[1], v[1], v[2]};
    return run_activation(CT_EW_ELU, t, inplace, 3, p);
}

/* celu(input, alpha=1) = elu(input, alpha, 1, 1 / alpha) */
static PyObject *celu_entry(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kw, bool inplace)
{
    static const char *const names[] = {"input", "alpha", NULL};
    double alpha = 1.0;
    CtTensorObject *t = parse_activation(fname, args, nargs, kw, names, 1, &alpha);
    if (t == NULL) {
        return NULL;
    }
    if (alpha == 0.0) {
        PyErr_SetString(PyExc_RuntimeError, "ZeroDivisionError: alpha cannot be 0 for CELU");
        return NULL;
    }
    double p[3] = {alpha, 1.0, 1.0 / alpha};
    return run_activation(CT_EW_ELU, t, inplace, 3, p);
}

/* selu(input) = elu(input, alpha, scale) with the self-normalising constants */
#define CT_SELU_ALPHA 1.6732632423543772848170429916717
#define CT_SELU_SCALE 1.0507009873554804934193349852946
static PyObject *selu_entry(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kw, bool inplace)
{
    CtTensorObject *t = parse_activation(fname, args, nargs, kw, names_input, 1, NULL);
    if (t == NULL) {
        return NULL;
    }
    double p[3] = {CT_SELU_ALPHA * CT_SELU_SCALE, CT_SELU_SCALE, 1.0};
    return run_activation(CT_EW_ELU, t, inplace, 3, p);
}

static PyObject *hardtanh_entry(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                                bool inplace)
{
    static const char *const names[] = {"input", "min_val", "max_val", NULL};
    double v[2] = {-1.0, 1.0};
    CtTensorObject *t = parse_activation(fname, args, nargs, kw, names, 1, v);
    if (t == NULL) {
        return NULL;
    }
    if (t->dtype == CT_BOOL) {
        PyErr_SetString(PyExc_NotImplementedError, "Bool inputs not supported for hardtanh");
        return NULL;
    }
    return run_activation(CT_EW_HARDTANH, t, inplace, 2, v);
}

/* An integer tensor takes threshold and value as PyTorch converts scalars to its dtype: a float
 * outside the dtype's range (or NaN) is refused, an int wraps (uint8's -1 is 255), a float is
 * truncated. */
static int threshold_int_params(const char *fname, PyObject *const *objs, CtDType dtype, double *v)
{
    static const char *const names[] = {"threshold", "value"};
    for (int j = 0; j < 2; j++) {
        CtScalar s;
        if (ct_number_arg(fname, names[j], j + 2, objs[j], &s) < 0 || ct_check_scalar_fits(&s, dtype, true) < 0) {
            return -1;
        }
        int64_t i = s.kind == CT_KIND_INT ? s.v.i : s.kind == CT_KIND_BOOL ? s.v.b : (int64_t)trunc(s.v.d);
        switch (dtype) {
        case CT_U8:
            v[j] = (uint8_t)i;
            break;
        case CT_I8:
            v[j] = (int8_t)i;
            break;
        case CT_I16:
            v[j] = (int16_t)i;
            break;
        case CT_I32:
            v[j] = (int32_t)i;
            break;
        default:
            v[j] = (double)i;
            break;
        }
    }
    return 0;
}

static PyObject *threshold_entry(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                                 bool inplace)
{
    static const char *const names[] = {"input", "threshold", "value", NULL};
    double v[2] = {0.0, 0.0};
    CtTensorObject *t = parse_activation(fname, args, nargs, kw, names, 3, v);
    if (t != NULL && !ct_is_floating(t->dtype) && t->dtype != CT_BOOL) {
        PyObject *a[3];
        if (ct_parse_args(fname, args, nargs, kw, names, 3, a) < 0 ||
            threshold_int_params(fname, a + 1, t->dtype, v) < 0) {
            return NULL;
        }
    }
    return t == NULL ? NULL : run_activation(CT_EW_THRESHOLD, t, inplace, 2, v);
}

/* softshrink's lambd must lie in [0, the dtype's max] */
static PyObject *softshrink_entry(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                                  bool inplace)
{
    static const char *const names[] = {"input", "lambd", NULL};
    double lambd = 0.5;
    CtTensorObject *t = parse_activation(fname, args, nargs, kw, names, 1, &lambd);
    if (t == NULL) {
        return NULL;
    }
    if (ct_is_floating(t->dtype)) {
        double min, max;
        ct_dtype_range(t->dtype, &min, &max);
        if (!(lambd >= 0.0 && lambd <= max)) {
            /* %g: as C++ streams print doubles (6 significant digits) */
            char bmax[32], blam[32], msg[160];
            snprintf(bmax, sizeof(bmax), "%g", max);
            snprintf(blam, sizeof(blam), "%g", lambd);
            snprintf(msg, sizeof(msg), "lambda must be in range [0, %s] for input dtype %s, but found %s", bmax,
                     ct_scalar_type_name(t->dtype), blam);
            PyErr_SetString(PyExc_RuntimeError, msg);
            return NULL;
        }
    }
    return run_activation(CT_EW_SOFTSHRINK, t, inplace, 1, &lambd);
}

static PyObject *hardshrink_entry(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                                  bool inplace)
{
    static const char *const names[] = {"input", "lambd", NULL};
    double lambd = 0.5;
    CtTensorObject *t = parse_activation(fname, args, nargs, kw, names, 1, &lambd);
    return t == NULL ? NULL : run_activation(CT_EW_HARDSHRINK, t, inplace, 1, &lambd);
}

/* The activations without parameters: one row each. */
#define CT_ACT_PLAIN(name, OP)                                                                               \
    static PyObject *name##_entry(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,  \
                                  bool inplace)                                                              \
    {                                                                                                        \
        CtTensorObject *t = parse_activation(fname, args, nargs, kw, names_input, 1, NULL);                  \
        return t == NULL ? NULL : run_activation(CT_EW_##OP, t, inplace, 0, NULL);                           \
    }
CT_ACT_PLAIN(hardsigmoid, HARDSIGMOID)
CT_ACT_PLAIN(hardswish, HARDSWISH)
CT_ACT_PLAIN(mish, MISH)
CT_ACT_PLAIN(log_sigmoid, LOG_SIGMOID)
CT_ACT_PLAIN(silu, SILU) /* only its in-place form here: silu itself is ops_elementwise.c's */

/* py_<name> and py_<name>_ (in place) for each entry; X(name) */
#define CT_ACT_INPLACE(X) X(elu) X(celu) X(selu) X(hardtanh) X(threshold) X(hardsigmoid) X(hardswish) X(mish)
#define CT_ACT_OUT_OF_PLACE(X) X(softshrink) X(hardshrink) X(log_sigmoid)
#define CT_DEF_ACT(name)                                                                                     \
    static PyObject *py_##name(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)                 \
    {                                                                                                        \
        return name##_entry(#name, a, n, k, false);                                                          \
    }
#define CT_DEF_ACT_(name)                                                                                    \
    static PyObject *py_##name##_(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)              \
    {                                                                                                        \
        return name##_entry(#name "_", a, n, k, true);                                                       \
    }
CT_ACT_INPLACE(CT_DEF_ACT)
CT_ACT_INPLACE(CT_DEF_ACT_)
CT_ACT_OUT_OF_PLACE(CT_DEF_ACT)
CT_DEF_ACT_(silu)


static PyObject *tensor_hardshrink(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    return ct_function_as_method("hardshrink", py_hardshrink, self, args, nargs, kw);
}

/* --- prelu ---------------------------------------------------------------------------------------
 * weight (C) or a single value applies along dim 1 (a 0-d or 1-D input has one channel): the
 * kernel takes it viewed as (1, C, 1, ...) so that it broadcasts there. */
static PyObject *prelu_weight_view(CtTensorObject *input, CtTensorObject *weight)
{
    int64_t sizes[CT_MAX_DIMS];
    int nd = ct_numel(weight) == 1 ? 0 : input->ndim;
    for (int d = 0; d < nd; d++) {
        sizes[d] = d == 1 ? ct_numel(weight) : 1;
    }
    PyObject *shape = ct_size_object(nd, sizes);
    PyObject *r = shape != NULL ? PyObject_CallMethod((PyObject *)weight, "reshape", "(O)", shape) : NULL;
    Py_XDECREF(shape);
    return r;
}

static PyObject *py_prelu(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "weight", NULL};
    PyObject *a[2];
    CtTensorObject *input, *weight;
    if (ct_parse_args("prelu", args, nargs, kw, names, 2, a) < 0 || (input = tensor_arg(a[0], "prelu", "input", 1)) == NULL ||
        (weight = tensor_arg(a[1], "prelu", "weight", 2)) == NULL) {
        return NULL;
    }
    if (weight->ndim > 1) {
        PyErr_Format(PyExc_RuntimeError, "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = %d",
                     weight->ndim);
        return NULL;
    }
    int64_t channels = input->ndim >= 2 ? input->sizes[1] : 1, count = ct_numel(weight);
    if (count != 1 && count != channels) {
        PyErr_Format(PyExc_RuntimeError,
                     "Mismatch of parameter numbers and input channel size. Found parameter numbers = %lld and channel "
                     "size = %lld.",
                     (long long)count, (long long)channels);
        return NULL;
    }
    if (input->dtype != weight->dtype) {
        PyErr_Format(PyExc_RuntimeError, "prelu: Type promoting not supported. Got %s and %s",
                     ct_scalar_type_name(input->dtype), ct_scalar_type_name(weight->dtype));
        return NULL;
    }
    PyObject *w = prelu_weight_view(input, weight);
    if (w == NULL) {
        return NULL;
    }
    CtEwArg in[2] = {{input}, {CT_TENSOR(w)}};
    PyObject *r = (PyObject *)ct_elementwise(CT_EW_PRELU, in, NULL, NULL, -1);
    Py_DECREF(w);
    return r;
}

static PyObject *tensor_prelu(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    return ct_function_as_method("prelu", py_prelu, self, args, nargs, kw);
}

/* --- the activations' backward rows: PyTorch's aten threshold_backward(grad, input, threshold) (relu's
 * with threshold 0, on its output), tanh_backward(grad, output), sigmoid_backward(grad, output) ---- */
CtTensorObject *ct_activation_backward(CtEwOp op, CtTensorObject *grad, CtTensorObject *x, double threshold)
{
    CtEwArg in[2] = {{grad}, {x}};
    CtOpParams p = {.f = {threshold}, .i = {(int64_t)threshold}};
    return ct_elementwise(op, in, NULL, &p, -1);
}

static PyObject *act_backward_entry(const char *fname, CtEwOp op, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kw)
{
    static const char *const names2[] = {"grad_output", "output", NULL};
    static const char *const names3[] = {"grad_output", "self", "threshold", NULL};
    const bool thresh = op == CT_EW_THRESHOLD_BACKWARD;
    PyObject *a[3] = {NULL, NULL, NULL};
    CtTensorObject *g, *x;
    double threshold = 0.0;
    if (ct_parse_args(fname, args, nargs, kw, thresh ? names3 : names2, thresh ? 3 : 2, a) < 0 ||
        (g = tensor_arg(a[0], fname, "grad_output", 1)) == NULL ||
        (x = tensor_arg(a[1], fname, thresh ? "self" : "output", 2)) == NULL ||
        (thresh && float_arg(a[2], fname, "threshold", &threshold) < 0)) {
        return NULL;
    }
    return (PyObject *)ct_activation_backward(op, g, x, threshold);
}

#define CT_ACT_BACKWARD_ENTRY(name, OP)                                                                   \
    static PyObject *py_##name(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)      \
    {                                                                                                     \
        return act_backward_entry(#name, CT_EW_##OP, args, nargs, kw);                                    \
    }
CT_ACT_BACKWARD_ENTRY(_threshold_backward, THRESHOLD_BACKWARD)
CT_ACT_BACKWARD_ENTRY(_tanh_backward, TANH_BACKWARD)
CT_ACT_BACKWARD_ENTRY(_sigmoid_backward, SIGMOID_BACKWARD)
#undef CT_ACT_BACKWARD_ENTRY

/* --- glu: first half * sigmoid(second half) along dim (GluBackward0) ---------------------------- */
static int glu_dim(CtTensorObject *t, PyObject *dim_obj, int *dim)
{
    int64_t d = -1;
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_RuntimeError, "glu does not support scalars because halving size must be even");
        return -1;
    }
    if ((dim_obj != NULL && ct_int_arg("glu", "dim", 2, dim_obj, &d) < 0) || ct_wrap_dim(d, t->ndim, dim) < 0) {
        return -1;
    }
    if (t->sizes[*dim] % 2 != 0) {
        PyErr_Format(PyExc_RuntimeError, "Halving dimension must be even, but dimension %d is size %lld", *dim,
                     (long long)t->sizes[*dim]);
        return -1;
    }
    return 0;
}

static PyObject *py_glu(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "dim", NULL};
    PyObject *a[2];
    CtTensorObject *t;
    int dim;
    if (ct_parse_args("glu", args, nargs, kw, names, 1, a) < 0 || (t = tensor_arg(a[0], "glu", "input", 1)) == NULL ||
        glu_dim(t, a[1], &dim) < 0) {
        return NULL;
    }
    if (!ct_is_floating(t->dtype)) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'",
                     ct_device_of(t).type == CT_DEV_CUDA ? "glu_cuda" : "glu_cpu", ct_scalar_type_name(t->dtype));
        return NULL;
    }
    int64_t h = t->sizes[dim] / 2;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *first = KEEP(ct_narrow(t, dim, 0, h)), *second = KEEP(ct_narrow(t, dim, h, h));
    PyObject *r = TAKE(MUL(first, METH(second, "sigmoid", NULL)));
    arena_free(arena);
    return r;
}

/* --- compositions of recording ops, as PyTorch's functional.py writes them ------------------------ */
static PyObject *py_softsign(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PyObject *a[1];
    if (ct_parse_args("softsign", args, nargs, kw, names_input, 1, a) < 0 || tensor_arg(a[0], "softsign", "input", 1) == NULL) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = TAKE(DIV(a[0], ADD(METH(a[0], "abs", NULL), INT(1))));
    arena_free(arena);
    return r;
}

static PyObject *py_tanhshrink(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PyObject *a[1];
    if (ct_parse_args("tanhshrink", args, nargs, kw, names_input, 1, a) < 0 ||
        tensor_arg(a[0], "tanhshrink", "input", 1) == NULL) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = TAKE(SUB(a[0], METH(a[0], "tanh", NULL)));
    arena_free(arena);
    return r;
}

/* softmin(input, dim, dtype=None) = softmax(-input, dim, dtype) */
static PyObject *py_softmin(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "dim", "dtype", NULL};
    PyObject *a[3];
    if (ct_parse_args("softmin", args, nargs, kw, names, 2, a) < 0 || tensor_arg(a[0], "softmin", "input", 1) == NULL) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *neg = NEG(a[0]);
    PyObject *r = a[2] != NULL && a[2] != Py_None ? TAKE(METH(neg, "softmax", "(OO)", a[1], a[2]))
                                                  : TAKE(METH(neg, "softmax", "(O)", a[1]));
    arena_free(arena);
    return r;
}

/* ============================================================================================
 * backward formulas of the activations (rows in autograd_formulas.c)
 * ============================================================================================ */

/* gi[0] = g * local, local an arena expression over x (the saved input) */
#define CT_ACT_BW_BEGIN                                                   \
    CtArena scratch = {0}, *arena = &scratch;                             \
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);                       \
    if (x == NULL) {                                                      \
        return -1;                                                        \
    }
#define CT_ACT_BW_END(local)                                              \
    int rc = put_grad(n, gi, 0, 0, MUL(g[0], (local)));                   \
    arena_free(arena);                                                    \
    return rc;

/* elu / celu / selu: scale where x > 0, else alpha scale input_scale exp(x input_scale) */
int ct_act_bw_elu(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    const char *op = n->formula->op;
    double negcoef, scale = 1.0, input_scale = 1.0;
    if (strncmp(op, "celu", 4) == 0) {
        negcoef = node_double(n, 1, 1.0);
        input_scale = 1.0 / negcoef;
    } else if (strncmp(op, "selu", 4) == 0) {
        scale = CT_SELU_SCALE;
        negcoef = CT_SELU_ALPHA * CT_SELU_SCALE;
    } else {
        scale = node_double(n, 2, 1.0);
        negcoef = node_double(n, 1, 1.0) * scale;
        input_scale = node_double(n, 3, 1.0);
    }
    CT_ACT_BW_BEGIN
    PyObject *neg = MUL(METH(MUL(x, NUM(input_scale)), "exp", NULL), NUM(negcoef * input_scale));
    CT_ACT_BW_END(WHERE(CMP(x, NUM(0.0), Py_GT), NUM(scale), neg))
}

/* hardtanh: 1 strictly inside (min_val, max_val), else 0 */
int ct_act_bw_hardtanh(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    double lo = node_double(n, 1, -1.0), hi = node_double(n, 2, 1.0);
    CT_ACT_BW_BEGIN
    CT_ACT_BW_END(MUL(CMPF(x, NUM(lo), Py_GT, x), CMPF(x, NUM(hi), Py_LT, x)))
}

/* hardsigmoid: 1/6 inside (-3, 3) */
int ct_act_bw_hardsigmoid(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CT_ACT_BW_BEGIN
    CT_ACT_BW_END(DIV(MUL(CMPF(x, NUM(-3.0), Py_GT, x), CMPF(x, NUM(3.0), Py_LT, x)), NUM(6.0)))
}

/* hardswish: 0 below -3, x / 3 + 1/2 up to 3, 1 above */
int ct_act_bw_hardswish(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CT_ACT_BW_BEGIN
    PyObject *mid = WHERE(CMP(x, NUM(3.0), Py_LE), ADD(DIV(x, NUM(3.0)), NUM(0.5)), NUM(1.0));
    CT_ACT_BW_END(WHERE(CMP(x, NUM(-3.0), Py_LT), NUM(0.0), mid))
}

/* mish = x tanh(softplus(x)): t + x sigmoid(x) (1 - t^2), t = tanh(softplus(x)) */
int ct_act_bw_mish(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CT_ACT_BW_BEGIN
    PyObject *t = METH(FN("softplus", "(O)", x), "tanh", NULL);
    CT_ACT_BW_END(ADD(t, MUL(MUL(x, METH(x, "sigmoid", NULL)), SUB(NUM(1.0), MUL(t, t)))))
}

/* log_sigmoid: sigmoid(-x) */
int ct_act_bw_log_sigmoid(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CT_ACT_BW_BEGIN
    CT_ACT_BW_END(METH(NEG(x), "sigmoid", NULL))
}

/* softshrink / hardshrink: 1 where |x| > lambd */
int ct_act_bw_shrink(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    double lambd = node_double(n, 1, 0.5);
    CT_ACT_BW_BEGIN
    CT_ACT_BW_END(CMPF(METH(x, "abs", NULL), NUM(lambd), Py_GT, x))
}

/* threshold: 1 where x > threshold */
int ct_act_bw_threshold(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    /* threshold_backward(g, x, threshold), recorded (ThresholdBackwardBackward0) with create_graph */
    PyObject *x = (PyObject *)ct_node_tensor(n, 0), *threshold = PyFloat_FromDouble(node_double(n, 1, 0.0));
    PyObject *r = NULL;
    if (x != NULL && threshold != NULL) {
        PyObject *args[3] = {g[0], x, threshold};
        r = ct_op("_threshold_backward", args, 3, NULL);
    }
    Py_XDECREF(threshold);
    int rc = put_grad(n, gi, 0, 0, r);
    Py_XDECREF(r);
    return rc;
}

/* prelu: input gets g where x > 0 and g * w elsewhere; weight gets the sum of g * x where x <= 0
 * over every dim but the channels' (dim 1), or over all for a single weight */
int ct_act_bw_prelu(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    CtTensorObject *xt = ct_node_tensor(n, 0), *wt = ct_node_tensor(n, 1);
    if (xt == NULL || wt == NULL) {
        return -1;
    }
    PyObject *x = (PyObject *)xt;
    PyObject *w = KEEP(prelu_weight_view(xt, wt));
    PyObject *pos = CMP(x, NUM(0.0), Py_GT);
    int rc = put_grad(n, gi, 0, 0, MUL(g[0], WHERE(pos, NUM(1.0), w)));
    if (rc == 0 && NEEDS(1)) {
        PyObject *part = MUL(g[0], WHERE(pos, NUM(0.0), x)), *sum;
        if (ct_numel(wt) == 1 || xt->ndim < 2) {
            sum = METH(part, "sum", NULL);
        } else {
            PyObject *dims = KEEP(PyList_New(0));
            for (int d = 0; dims != NULL && d < xt->ndim; d++) {
                PyObject *v = d != 1 ? PyLong_FromLong(d) : NULL;
                if (d != 1 && (v == NULL || PyList_Append(dims, v) < 0)) {
                    arena->failed = true;
                }
                Py_XDECREF(v);
            }
            sum = METH(part, "sum", "(O)", dims);
        }
        rc = put_grad(n, gi, 1, 1, METH(sum, "reshape", "(O)", KEEP(ct_size_object(wt->ndim, wt->sizes))));
    }
    arena_free(arena);
    return rc;
}

/* glu: cat(g sigmoid(b), g a sigmoid(b) (1 - sigmoid(b))) along dim, a and b the halves */
int ct_act_bw_glu(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtTensorObject *t = ct_node_tensor(n, 0);
    int dim;
    if (t == NULL || glu_dim(t, n->args[1], &dim) < 0) {
        return -1;
    }
    int64_t h = t->sizes[dim] / 2;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *first = METH((PyObject *)t, "narrow", "(iLL)", dim, 0LL, (long long)h);
    PyObject *sig = METH(METH((PyObject *)t, "narrow", "(iLL)", dim, (long long)h, (long long)h), "sigmoid", NULL);
    PyObject *ga = MUL(g[0], sig);
    PyObject *gb = MUL(MUL(ga, first), SUB(NUM(1.0), sig));
    PyObject *parts = arena_ok(arena, ga, gb) ? KEEP(PyTuple_Pack(2, ga, gb)) : NULL;
    int rc = put_grad(n, gi, 0, 0, FN("cat", "(Oi)", parts, dim));
    arena_free(arena);
    return rc;
}

/* ============================================================================================
 * padding
 * ============================================================================================ */
#define CT_PAD_REFLECT 0
#define CT_PAD_REPLICATE 1
#define CT_PAD_CIRCULAR 2

/* pad as a list or tuple of ints (at most 2 * CT_MAX_DIMS): the count, or -1 with PyTorch's
 * TypeError. */
static int pad_arg(PyObject *obj, const char *fname, int64_t *pad)
{
    if (obj == NULL || (!PyTuple_Check(obj) && !PyList_Check(obj))) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'pad' (position 2) must be tuple of ints, not %s", fname,
                     obj ? ct_type_name(obj) : "NoneType");
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n > 2 * CT_MAX_DIMS) {
        n = 2 * CT_MAX_DIMS + 1; /* more than any input has dims: the length check reports it */
        return (int)n;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(obj, i);
        if (PyFloat_Check(item) || !PyIndex_Check(item) || CtTensor_Check(item)) {
            PyErr_Format(PyExc_TypeError,
                         "%s(): argument 'pad' (position 2) must be tuple of ints, but found element of type %s at "
                         "pos %zd",
                         fname, ct_type_name(item), i);
            return -1;
        }
        if (ct_arg_int64(item, &pad[i]) < 0) {
            return -1;
        }
    }
    return (int)n;
}

/* constant_pad_nd(input, pad, value=0): a new tensor of the padded shape filled with value, the
 * input (cropped by negative pads) copied into its narrowed view. */
static PyObject *py_constant_pad_nd(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "pad", "value", NULL};
    PyObject *a[3];
    int64_t pad[2 * CT_MAX_DIMS + 1];
    CtTensorObject *t;
    int np;
    if (ct_parse_args("constant_pad_nd", args, nargs, kw, names, 2, a) < 0 ||
        (t = tensor_arg(a[0], "constant_pad_nd", "input", 1)) == NULL || (np = pad_arg(a[1], "constant_pad_nd", pad)) < 0) {
        return NULL;
    }
    CtScalar value = {CT_KIND_INT, {.i = 0}};
    if (a[2] != NULL && a[2] != Py_None && ct_number_arg("constant_pad_nd", "value", 3, a[2], &value) < 0) {
        return NULL;
    }
    if (np % 2 != 0) {
        PyErr_Format(PyExc_RuntimeError, "Length of pad must be even but instead it equals %d", np);
        return NULL;
    }
    if (np / 2 > t->ndim) {
        PyErr_Format(PyExc_RuntimeError,
                     "Length of pad should be no more than twice the number of dimensions of the input. Pad length is "
                     "%d while the input has %d dimensions.",
                     np, t->ndim);
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof(int64_t) * t->ndim);
    for (int i = 0; i < np / 2; i++) {
        int d = t->ndim - 1 - i;
        int64_t lo = pad[2 * i], hi = pad[2 * i + 1];
        if (t->sizes[d] + (lo < 0 ? lo : 0) + (hi < 0 ? hi : 0) < 0) {
            PyErr_SetString(PyExc_RuntimeError, "narrow(): length must be non-negative.");
            return NULL;
        }
        sizes[d] = t->sizes[d] + lo + hi;
    }
    CtTensorObject *out = ct_full(t->ndim, sizes, &value, t->dtype, ct_device_of(t));
    PyObject *dst = Py_XNewRef((PyObject *)out), *src = Py_NewRef((PyObject *)t);
    /* narrow both to the region they share, dim by dim */
    for (int i = 0; dst != NULL && src != NULL && i < np / 2; i++) {
        int d = t->ndim - 1 - i;
        int64_t lo = pad[2 * i], hi = pad[2 * i + 1];
        int64_t len = t->sizes[d] + (lo < 0 ? lo : 0) + (hi < 0 ? hi : 0);
        Py_SETREF(dst, ct_narrow(CT_TENSOR(dst), d, lo > 0 ? lo : 0, len));
        if (dst != NULL) {
            Py_SETREF(src, ct_narrow(CT_TENSOR(src), d, lo < 0 ? -lo : 0, len));
        }
    }
    int rc = dst != NULL && src != NULL ? ct_copy_(CT_TENSOR(dst), CT_TENSOR(src)) : -1;
    Py_XDECREF(dst);
    Py_XDECREF(src);
    if (rc < 0) {
        Py_XDECREF(out);
        return NULL;
    }
    return (PyObject *)out;
}

/* The source index of each of the size + lo + hi output positions along one dim (lo, hi may be
 * negative: cropping), as an int64 tensor on device. n >= 1 for circular (check_pad_gather). */
static PyObject *pad_index(int mode, int64_t size, int64_t lo, int64_t hi, CtDevice device)
{
    int64_t count = size + lo + hi;
    CtTensorObject *host = ct_empty(1, &count, CT_I64, ct_cpu());
    if (host == NULL) {
        return NULL;
    }
    int64_t *idx = (int64_t *)ct_data(host);
    for (int64_t k = 0; k < count; k++) {
        int64_t i = k - lo;
        if (mode == CT_PAD_REFLECT) {
            i = i < 0 ? -i : i >= size ? 2 * (size - 1) - i : i;
        } else if (mode == CT_PAD_REPLICATE) {
            i = i < 0 ? 0 : i >= size ? size - 1 : i;
        } else {
            /* PyTorch crops first and wraps within what is left [c0, c1) */
            int64_t c0 = lo < 0 ? -lo : 0, c1 = hi < 0 ? size + hi : size, n = c1 - c0;
            i = k - (lo > 0 ? lo : 0);
            i = c0 + ((i % n) + n) % n;
        }
        idx[k] = i;
    }
    CtTensorObject *r = ct_to(host, CT_I64, device, false);
    Py_DECREF(host);
    return (PyObject *)r;
}

static const char *const pad_kernel_names[] = {"reflection_pad%dd", "replication_pad%dd"};

/* The checks of reflection / replication / circular padding over the last k = np / 2 dims. */
static int check_pad_gather(CtTensorObject *t, const int64_t *pad, int np, int mode)
{
    int k = np / 2;
    char shape[256];
    ct_format_sizes(shape, sizeof(shape), t->ndim, t->sizes);
    if (mode != CT_PAD_CIRCULAR) {
        if (t->dtype == CT_BOOL) {
            char kname[32];
            snprintf(kname, sizeof(kname), pad_kernel_names[mode], k);
            PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for 'Bool'", kname);
            return -1;
        }
        for (int d = t->ndim == k + 2 ? 1 : 0; d < t->ndim; d++) {
            if (t->sizes[d] == 0) {
                PyErr_Format(PyExc_RuntimeError,
                             "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and other non-zero "
                             "dimensions for input, but got: %s",
                             k + 1, k + 2, shape);
                return -1;
            }
        }
    }
    bool too_small = false;
    for (int i = 0; i < k; i++) {
        int d = t->ndim - 1 - i;
        int64_t lo = pad[2 * i], hi = pad[2 * i + 1], size = t->sizes[d];
        if (mode == CT_PAD_REFLECT && (lo >= size || hi >= size)) {
            PyErr_Format(PyExc_RuntimeError,
                         "Argument #%d: Padding size should be less than the corresponding input dimension, but got: "
                         "padding (%lld, %lld) at dimension %d of input %s",
                         4 + 2 * i, (long long)lo, (long long)hi, d, shape);
            return -1;
        }
        if (mode == CT_PAD_CIRCULAR && (lo > size || hi > size)) {
            PyErr_SetString(PyExc_RuntimeError, "Padding value causes wrapping around more than once.");
            return -1;
        }
        too_small = too_small || size + lo + hi < 1;
    }
    if (too_small && mode == CT_PAD_CIRCULAR) {
        PyErr_SetString(PyExc_RuntimeError, "Negative padding value is resulting in an empty dimension");
        return -1;
    }
    if (too_small) {
        /* "input (H: 3, W: 4) is too small. Calculated output H: 0 W: 6" */
        static const char *const axes[] = {"W", "H", "D"};
        char in_text[96] = "", out_text[96] = "";
        size_t pi = 0, po = 0;
        for (int i = k - 1; i >= 0; i--) {
            int d = t->ndim - 1 - i;
            pi += snprintf(in_text + pi, sizeof(in_text) - pi, "%s%s: %lld", i == k - 1 ? "" : ", ", axes[i],
                           (long long)t->sizes[d]);
            po += snprintf(out_text + po, sizeof(out_text) - po, "%s%s: %lld", i == k - 1 ? "" : " ", axes[i],
                           (long long)(t->sizes[d] + pad[2 * i] + pad[2 * i + 1]));
        }
        PyErr_Format(PyExc_RuntimeError, "input (%s) is too small. Calculated output %s", in_text, out_text);
        return -1;
    }
    return 0;
}

/* _pad_gather(input, pad, mode): reflect (0), replicate (1) or circular (2) padding of the last
 * len(pad) / 2 dims, one index_select per dim (last dim first). */
static PyObject *py_pad_gather(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "pad", "mode", NULL};
    PyObject *a[3];
    int64_t pad[2 * CT_MAX_DIMS + 1], mode;
    CtTensorObject *t;
    int np;
    if (ct_parse_args("_pad_gather", args, nargs, kw, names, 3, a) < 0 ||
        (t = tensor_arg(a[0], "_pad_gather", "input", 1)) == NULL || (np = pad_arg(a[1], "_pad_gather", pad)) < 0 ||
        ct_arg_int64(a[2], &mode) < 0) {
        return NULL;
    }
    if (np % 2 != 0 || np / 2 > t->ndim || mode < 0 || mode > 2) {
        PyErr_SetString(PyExc_ValueError, "_pad_gather: bad pad or mode");
        return NULL;
    }
    if (check_pad_gather(t, pad, np, (int)mode) < 0) {
        return NULL;
    }
    PyObject *cur = Py_NewRef((PyObject *)t);
    for (int i = 0; cur != NULL && i < np / 2; i++) {
        int d = t->ndim - 1 - i;
        PyObject *idx = pad_index((int)mode, t->sizes[d], pad[2 * i], pad[2 * i + 1], ct_device_of(t));
        PyObject *next = idx != NULL ? PyObject_CallMethod(cur, "index_select", "(iO)", d, idx) : NULL;
        Py_XDECREF(idx);
        Py_SETREF(cur, next);
    }
    return cur;
}

/* pad(input, pad, mode='constant', value=None): torch.nn.functional.pad's checks, then
 * constant_pad_nd or _pad_gather through their recording callables. */
static PyObject *py_pad(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "pad", "mode", "value", NULL};
    static const char *const modes[] = {"reflect", "replicate", "circular"};
    PyObject *a[4];
    int64_t pad[2 * CT_MAX_DIMS + 1];
    CtTensorObject *t;
    int np;
    if (ct_parse_args("pad", args, nargs, kw, names, 2, a) < 0 || (t = tensor_arg(a[0], "pad", "input", 1)) == NULL ||
        (np = pad_arg(a[1], "pad", pad)) < 0) {
        return NULL;
    }
    const char *mode = "constant";
    if (a[2] != NULL && a[2] != Py_None && (mode = PyUnicode_AsUTF8(a[2])) == NULL) {
        return NULL;
    }
    if (np % 2 != 0) {
        PyErr_SetString(PyExc_RuntimeError, "Padding length must be divisible by 2");
        return NULL;
    }
    if (np / 2 > t->ndim) {
        PyErr_Format(PyExc_RuntimeError,
                     "Padding length should be less than or equal to two times the input dimension but got padding "
                     "length %d and input of dimension %d",
                     np, t->ndim);
        return NULL;
    }
    bool has_value = a[3] != NULL && a[3] != Py_None;
    if (strcmp(mode, "constant") == 0) {
        PyObject *call[3] = {a[0], a[1], has_value ? a[3] : NULL};
        return ct_op("constant_pad_nd", call, has_value ? 3 : 2, NULL);
    }
    int mode_id = -1;
    for (int i = 0; i < 3; i++) {
        mode_id = strcmp(mode, modes[i]) == 0 ? i : mode_id;
    }
    if (mode_id < 0) {
        PyErr_Format(PyExc_NotImplementedError, "Unrecognised padding mode %s", mode);
        return NULL;
    }
    if (has_value) {
        PyErr_Format(PyExc_RuntimeError, "Padding mode \"%s\" doesn't take in value argument", mode);
        return NULL;
    }
    int k = np / 2;
    if (k < 1 || k > 3 || (t->ndim != k + 1 && t->ndim != k + 2)) {
        PyErr_Format(PyExc_NotImplementedError,
                     "Padding size %d is not supported for %dD input tensor.\n"
                     "Supported combinations for non-constant padding:\n"
                     "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                     "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                     "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)",
                     np, t->ndim);
        return NULL;
    }
    PyObject *mode_obj = PyLong_FromLong(mode_id);
    if (mode_obj == NULL) {
        return NULL;
    }
    PyObject *call[3] = {a[0], a[1], mode_obj};
    PyObject *r = ct_op("_pad_gather", call, 3, NULL);
    Py_DECREF(mode_obj);
    return r;
}

/* --- backward formulas ----------------------------------------------------------------------------- */
int ct_act_bw_constant_pad(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    int64_t pad[2 * CT_MAX_DIMS + 1];
    int np = pad_arg(n->args[1], "constant_pad_nd", pad);
    if (np < 0) {
        return -1;
    }
    PyObject *neg = PyTuple_New(np);
    for (int i = 0; neg != NULL && i < np; i++) {
        PyObject *v = PyLong_FromLongLong(-pad[i]);
        if (v == NULL) {
            Py_CLEAR(neg);
            break;
        }
        PyTuple_SET_ITEM(neg, i, v);
    }
    if (neg == NULL) {
        return -1;
    }
    PyObject *call[2] = {g[0], neg};
    PyObject *r = ct_op("constant_pad_nd", call, 2, NULL);
    Py_DECREF(neg);
    int rc = put_grad(n, gi, 0, 0, r);
    Py_XDECREF(r);
    return rc;
}

int ct_act_bw_pad_gather(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    int64_t pad[2 * CT_MAX_DIMS + 1], mode;
    const CtTensorMeta *meta = &n->meta[0];
    int np = pad_arg(n->args[1], "_pad_gather", pad);
    if (np < 0 || ct_arg_int64(n->args[2], &mode) < 0) {
        return -1;
    }
    /* sizes[i]: the shape before the gather along dim ndim - 1 - i */
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, meta->sizes, sizeof(int64_t) * meta->ndim);
    for (int i = 0; i < np / 2; i++) {
        sizes[meta->ndim - 1 - i] += pad[2 * i] + pad[2 * i + 1];
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *cur = g[0];
    for (int i = np / 2 - 1; i >= 0; i--) {
        int d = meta->ndim - 1 - i;
        sizes[d] = meta->sizes[d];
        PyObject *idx = KEEP(pad_index((int)mode, meta->sizes[d], pad[2 * i], pad[2 * i + 1], meta->device));
        PyObject *zeros = METH(cur, "new_zeros", "(O)", KEEP(ct_size_object(meta->ndim, sizes)));
        cur = METH(zeros, "index_add", "(iOO)", d, idx, cur);
    }
    int rc = put_grad(n, gi, 0, 0, arena->failed ? NULL : cur);
    arena_free(arena);
    return rc;
}

const char *ct_act_name_pad_gather(PyObject *const *norm)
{
    int64_t mode = 0;
    Py_ssize_t np = norm[1] != NULL && (PyTuple_Check(norm[1]) || PyList_Check(norm[1])) ? PySequence_Fast_GET_SIZE(norm[1]) : 2;
    if (norm[2] == NULL || ct_arg_int64(norm[2], &mode) < 0) {
        PyErr_Clear();
    }
    static const char *const names[2][3] = {
        {"ReflectionPad1DBackward0", "ReflectionPad2DBackward0", "ReflectionPad3DBackward0"},
        {"ReplicationPad1DBackward0", "ReplicationPad2DBackward0", "ReplicationPad3DBackward0"}};
    if (mode == CT_PAD_CIRCULAR || mode < 0 || mode > 2 || np < 2 || np > 6) {
        return "CopySlices"; /* PyTorch builds circular padding of in-place copies into slices */
    }
    return names[mode][np / 2 - 1];
}

/* ============================================================================================
 * distances: normalize, cosine_similarity, pairwise_distance (compositions)
 * ============================================================================================ */

/* Runs one in-place call with grad mode off (PyTorch's `with torch.no_grad(): t.clamp_(...)`):
 * the value changes, the history does not. Returns t (arena-owned) or NULL. */
static PyObject *no_grad_clamp_min_(CtArena *arena, PyObject *t, double min)
{
    bool was = ct_grad_enabled;
    ct_grad_enabled = false;
    PyObject *r = METH(t, "clamp_min_", "(d)", min);
    ct_grad_enabled = was;
    return r != NULL ? t : NULL;
}

/* normalize(input, p=2.0, dim=1, eps=1e-12, out=None): input / max(||input||_p along dim, eps) */
static PyObject *py_normalize(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "p", "dim", "eps", "out", NULL};
    PyObject *a[5];
    double p = 2.0, eps = 1e-12;
    int64_t dim = 1;
    if (ct_parse_args("normalize", args, nargs, kw, names, 1, a) < 0 || tensor_arg(a[0], "normalize", "input", 1) == NULL ||
        float_arg(a[1], "normalize", "p", &p) < 0 || (a[2] != NULL && ct_int_arg("normalize", "dim", 3, a[2], &dim) < 0) ||
        float_arg(a[3], "normalize", "eps", &eps) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *norm = METH(a[0], "norm", "(dLO)", p, (long long)dim, Py_True);
    PyObject *denom = METH(METH(norm, "clamp_min", "(d)", eps), "expand_as", "(O)", a[0]);
    PyObject *r;
    if (a[4] != NULL && a[4] != Py_None) {
        PyObject *call[3] = {a[0], denom, a[4]};
        PyObject *kwnames = KEEP(Py_BuildValue("(s)", "out"));
        r = arena_ok(arena, denom, kwnames) ? KEEP(ct_op("div", call, 2, kwnames)) : NULL;
    } else {
        r = DIV(a[0], denom);
    }
    PyObject *result = TAKE(r);
    arena_free(arena);
    return result;
}

/* cosine_similarity(x1, x2, dim=1, eps=1e-8): sum(x1 / |x1| * x2 / |x2|) along dim, the norms
 * clamped to eps outside autograd (as PyTorch's) */
static PyObject *py_cosine_similarity(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"x1", "x2", "dim", "eps", NULL};
    PyObject *a[4];
    CtTensorObject *x1, *x2;
    int64_t dim = 1;
    double eps = 1e-8;
    if (ct_parse_args("cosine_similarity", args, nargs, kw, names, 2, a) < 0 ||
        (x1 = tensor_arg(a[0], "cosine_similarity", "x1", 1)) == NULL ||
        (x2 = tensor_arg(a[1], "cosine_similarity", "x2", 2)) == NULL ||
        (a[2] != NULL && ct_int_arg("cosine_similarity", "dim", 3, a[2], &dim) < 0) ||
        float_arg(a[3], "cosine_similarity", "eps", &eps) < 0) {
        return NULL;
    }
    CtEwArg in[2] = {{x1}, {x2}};
    CtDType common = ct_result_type(2, in);
    if (!ct_is_floating(common)) {
        PyErr_Format(PyExc_RuntimeError, "expected common dtype to be floating point, yet common dtype is %s",
                     ct_scalar_type_name(common));
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *pair = KEEP(ct_op("broadcast_tensors", a, 2, NULL));
    PyObject *u = pair ? PyTuple_GET_ITEM(pair, 0) : NULL, *v = pair ? PyTuple_GET_ITEM(pair, 1) : NULL;
    PyObject *nu = METH(METH(u, "norm", "(iLO)", 2, (long long)dim, Py_True), "clone", NULL);
    PyObject *nv = METH(METH(v, "norm", "(iLO)", 2, (long long)dim, Py_True), "clone", NULL);
    nu = arena->failed ? NULL : no_grad_clamp_min_(arena, nu, eps);
    nv = arena->failed ? NULL : no_grad_clamp_min_(arena, nv, eps);
    PyObject *r = TAKE(METH(MUL(DIV(u, nu), DIV(v, nv)), "sum", "(L)", (long long)dim));
    arena_free(arena);
    return r;
}

/* pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False): ||x1 - x2 + eps||_p over the last dim */
static PyObject *py_pairwise_distance(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"x1", "x2", "p", "eps", "keepdim", NULL};
    PyObject *a[5];
    CtTensorObject *x1, *x2;
    double p = 2.0, eps = 1e-6;
    bool keepdim = false;
    if (ct_parse_args("pairwise_distance", args, nargs, kw, names, 2, a) < 0 ||
        (x1 = tensor_arg(a[0], "pairwise_distance", "x1", 1)) == NULL ||
        (x2 = tensor_arg(a[1], "pairwise_distance", "x2", 2)) == NULL || float_arg(a[2], "pairwise_distance", "p", &p) < 0 ||
        float_arg(a[3], "pairwise_distance", "eps", &eps) < 0 || ct_arg_bool(a[4], &keepdim) < 0) {
        return NULL;
    }
    int nd = x1->ndim > x2->ndim ? x1->ndim : x2->ndim;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *diff = ADD(SUB(a[0], a[1]), NUM(eps));
    PyObject *r = TAKE(METH(diff, "norm", "(diO)", p, nd - 1, keepdim ? Py_True : Py_False));
    arena_free(arena);
    return r;
}

/* ============================================================================================
 * losses
 * ============================================================================================ */

/* PyTorch's apply_loss_reduction: 0 none, 1 mean, 2 sum */
static PyObject *reduce_loss(CtArena *arena, PyObject *loss, int64_t reduction)
{
    return reduction == 1 ? METH(loss, "mean", NULL) : reduction == 2 ? METH(loss, "sum", NULL) : loss;
}

/* Parses a loss's arguments: the first nt are tensors, the rest floats (kinds 'd'), bools ('b')
 * or ints ('i') per `kinds`, stored in order into d/b/i; defaults are what the caller set. */
static int parse_loss(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                      const char *const *names, int nt, const char *kinds, PyObject **a, double *d, bool *b, int64_t *i)
{
    if (ct_parse_args(fname, args, nargs, kw, names, nt, a) < 0) {
        return -1;
    }
    for (int k = 0; k < nt; k++) {
        if (tensor_arg(a[k], fname, names[k], k + 1) == NULL) {
            return -1;
        }
    }
    for (int k = 0; kinds[k] != '\0'; k++) {
        PyObject *o = a[nt + k];
        const char *name = names[nt + k];
        int rc = kinds[k] == 'd' ? float_arg(o, fname, name, d++)
                 : kinds[k] == 'b' ? ct_arg_bool(o, b++)
                                   : (o != NULL && o != Py_None ? ct_int_arg(fname, name, nt + k + 1, o, i) : 0);
        if (kinds[k] == 'i') {
            i++;
        }
        if (rc < 0) {
            return -1;
        }
    }
    return 0;
}

/* kl_div(input, target, reduction=mean, log_target=False) */
static PyObject *py_kl_div(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "target", "reduction", "log_target", NULL};
    PyObject *a[4];
    int64_t reduction = 1;
    bool log_target = false;
    if (parse_loss("kl_div", args, nargs, kw, names, 2, "ib", a, NULL, &log_target, &reduction) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *x = a[0], *t = a[1], *loss;
    if (log_target) {
        loss = MUL(METH(t, "exp", NULL), SUB(t, x));
    } else { /* xlogy(t, t) - t x, xlogy being 0 where t == 0 */
        PyObject *xlogy = WHERE(CMP(t, NUM(0.0), Py_EQ), NUM(0.0), MUL(t, METH(t, "log", NULL)));
        loss = SUB(xlogy, MUL(t, x));
    }
    PyObject *r = TAKE(reduce_loss(arena, loss, reduction));
    arena_free(arena);
    return r;
}

/* huber_loss(input, target, reduction=mean, delta=1.0): 0.5 d^2 where |d| < delta, else
 * delta (|d| - delta / 2); a node of its own (HuberLossBackward0) */
static PyObject *py_huber_loss(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "target", "reduction", "delta", NULL};
    PyObject *a[4];
    int64_t reduction = 1;
    double delta = 1.0;
    if (parse_loss("huber_loss", args, nargs, kw, names, 2, "id", a, &delta, NULL, &reduction) < 0) {
        return NULL;
    }
    if (!(delta > 0.0)) {
        PyErr_SetString(PyExc_RuntimeError, "huber_loss does not support non-positive values for delta.");
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *d = SUB(a[0], a[1]), *ad = METH(d, "abs", NULL);
    PyObject *loss = WHERE(CMP(ad, NUM(delta), Py_LT), MUL(MUL(d, d), NUM(0.5)), MUL(SUB(ad, NUM(0.5 * delta)), NUM(delta)));
    PyObject *r = TAKE(reduce_loss(arena, loss, reduction));
    arena_free(arena);
    return r;
}

/* The gradient of a reduced pointwise loss: g (a scalar for mean / sum, divided by the element
 * count for mean) times local. Arena-owned. */
static PyObject *loss_grad(CtArena *arena, CtNodeObject *n, PyObject *g, PyObject *local, int reduction_arg)
{
    double reduction = node_double(n, reduction_arg, 1.0);
    PyObject *r = MUL(g, local);
    if (reduction == 1.0 && local != NULL) {
        r = DIV(r, NUM((double)ct_numel(CT_TENSOR(local))));
    }
    return r;
}

int ct_act_bw_huber_loss(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    double delta = node_double(n, 3, 1.0);
    PyObject *x = (PyObject *)ct_node_tensor(n, 0), *t = (PyObject *)ct_node_tensor(n, 1);
    PyObject *local = arena_ok(arena, x, t) ? METH(SUB(x, t), "clamp", "(dd)", -delta, delta) : NULL;
    PyObject *gr = loss_grad(arena, n, g[0], local, 2);
    int rc = put_grad(n, gi, 0, 0, gr) < 0 || put_grad(n, gi, 1, 1, NEG(gr)) < 0 ? -1 : 0;
    arena_free(arena);
    return rc;
}

/* soft_margin_loss(input, target, reduction=mean): log(1 + exp(-target input)) (SoftMarginLossBackward0) */
static PyObject *py_soft_margin_loss(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "target", "reduction", NULL};
    PyObject *a[3];
    int64_t reduction = 1;
    if (parse_loss("soft_margin_loss", args, nargs, kw, names, 2, "i", a, NULL, NULL, &reduction) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *loss = METH(METH(NEG(MUL(a[0], a[1])), "exp", NULL), "log1p", NULL);
    PyObject *r = TAKE(reduce_loss(arena, loss, reduction));
    arena_free(arena);
    return r;
}

/* d/dx = -y sigmoid(-x y), d/dy = -x sigmoid(-x y) */
int ct_act_bw_soft_margin_loss(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *x = (PyObject *)ct_node_tensor(n, 0), *t = (PyObject *)ct_node_tensor(n, 1);
    PyObject *s = arena_ok(arena, x, t) ? NEG(METH(NEG(MUL(x, t)), "sigmoid", NULL)) : NULL;
    int rc = put_grad(n, gi, 0, 0, loss_grad(arena, n, g[0], MUL(s, t), 2)) < 0 ||
                     put_grad(n, gi, 1, 1, loss_grad(arena, n, g[0], MUL(s, x), 2)) < 0
                 ? -1
                 : 0;
    arena_free(arena);
    return rc;
}

/* margin_ranking_loss(input1, input2, target, margin=0, reduction=mean):
 * max(0, -target (input1 - input2) + margin) */
static PyObject *py_margin_ranking_loss(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input1", "input2", "target", "margin", "reduction", NULL};
    PyObject *a[5];
    double margin = 0.0;
    int64_t reduction = 1;
    if (parse_loss("margin_ranking_loss", args, nargs, kw, names, 3, "di", a, &margin, NULL, &reduction) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *loss = METH(ADD(MUL(NEG(a[2]), SUB(a[0], a[1])), NUM(margin)), "clamp_min_", "(i)", 0);
    PyObject *r = TAKE(reduce_loss(arena, loss, reduction));
    arena_free(arena);
    return r;
}

/* hinge_embedding_loss(input, target, margin=1, reduction=mean): input where target != -1, plus
 * max(0, margin - input) where target != 1 */
static PyObject *py_hinge_embedding_loss(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "target", "margin", "reduction", NULL};
    PyObject *a[4];
    double margin = 1.0;
    int64_t reduction = 1;
    if (parse_loss("hinge_embedding_loss", args, nargs, kw, names, 2, "di", a, &margin, NULL, &reduction) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *zeros = KEEP((PyObject *)ct_zeros_like(CT_TENSOR(a[0])));
    PyObject *clamped = METH(SUB(NUM(margin), a[0]), "clamp_min_", "(i)", 0);
    PyObject *with_margin = WHERE(CMP(a[1], INT(1), Py_NE), clamped, zeros);
    PyObject *with_self = WHERE(CMP(a[1], INT(-1), Py_NE), a[0], zeros);
    PyObject *r = TAKE(reduce_loss(arena, ADD(with_margin, with_self), reduction));
    arena_free(arena);
    return r;
}

/* cosine_embedding_loss(input1, input2, target, margin=0, reduction=mean): 1 - cos where
 * target == 1, max(0, cos - margin) where target == -1, cos along dim 1 (dim 0 for 1-D inputs) */
static PyObject *py_cosine_embedding_loss(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input1", "input2", "target", "margin", "reduction", NULL};
    PyObject *a[5];
    double margin = 0.0;
    int64_t reduction = 1;
    if (parse_loss("cosine_embedding_loss", args, nargs, kw, names, 3, "di", a, &margin, NULL, &reduction) < 0) {
        return NULL;
    }
    CtTensorObject *x1 = CT_TENSOR(a[0]), *x2 = CT_TENSOR(a[1]);
    int td = CT_TENSOR(a[2])->ndim;
    if (td > 1) {
        PyErr_SetString(PyExc_RuntimeError, "0D or 1D target tensor expected, multi-target not supported");
        return NULL;
    }
    if (x1->ndim != td + 1 || x2->ndim != td + 1) {
        char s1[128], s2[128];
        ct_format_sizes(s1, sizeof(s1), x1->ndim, x1->sizes);
        ct_format_sizes(s2, sizeof(s2), x2->ndim, x2->sizes);
        PyErr_Format(PyExc_RuntimeError, "%dD target tensor expects %dD input tensors, but found inputs with sizes %s and %s.",
                     td, td + 1, s1, s2);
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *prod = METH(MUL(a[0], a[1]), "sum", "(i)", td);
    PyObject *mag1 = ADD(METH(MUL(a[0], a[0]), "sum", "(i)", td), NUM(1e-12));
    PyObject *mag2 = ADD(METH(MUL(a[1], a[1]), "sum", "(i)", td), NUM(1e-12));
    PyObject *cos = DIV(prod, METH(MUL(mag1, mag2), "sqrt_", NULL));
    PyObject *zeros = arena_ok(arena, cos, cos) ? KEEP((PyObject *)ct_zeros_like(CT_TENSOR(cos))) : NULL;
    PyObject *pos = SUB(INT(1), cos);
    PyObject *neg = METH(SUB(cos, NUM(margin)), "clamp_min_", "(i)", 0);
    PyObject *out = ADD(WHERE(CMP(a[2], INT(1), Py_EQ), pos, zeros), WHERE(CMP(a[2], INT(-1), Py_EQ), neg, zeros));
    PyObject *r = TAKE(reduce_loss(arena, out, reduction));
    arena_free(arena);
    return r;
}

/* poisson_nll_loss(input, target, log_input, full, eps, reduction): exp(input) - target input
 * (log_input) or input - target log(input + eps); full adds Stirling's term where target > 1 */
static PyObject *py_poisson_nll_loss(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "target", "log_input", "full", "eps", "reduction", NULL};
    PyObject *a[6];
    bool flags[2] = {true, false};
    double eps = 1e-8;
    int64_t reduction = 1;
    if (parse_loss("poisson_nll_loss", args, nargs, kw, names, 2, "bbdi", a, &eps, flags, &reduction) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *x = a[0], *t = a[1];
    PyObject *loss = flags[0] ? SUB(METH(x, "exp", NULL), MUL(t, x))
                              : SUB(x, MUL(t, METH(ADD(x, NUM(eps)), "log", NULL)));
    if (flags[1]) {
        PyObject *stirling = ADD(SUB(MUL(t, METH(t, "log", NULL)), t),
                                 MUL(METH(MUL(t, NUM(2.0 * M_PI)), "log", NULL), NUM(0.5)));
        loss = ADD(loss, METH(stirling, "masked_fill", "(Oi)", CMP(t, INT(1), Py_LE), 0));
    }
    PyObject *r = TAKE(reduce_loss(arena, loss, reduction));
    arena_free(arena);
    return r;
}

/* gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction=mean):
 * 0.5 (log(var) + (input - target)^2 / var) (+ 0.5 log(2 pi)), var clamped to eps outside autograd */
static PyObject *py_gaussian_nll_loss(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "target", "var", "full", "eps", "reduction", NULL};
    PyObject *a[6];
    bool full = false;
    double eps = 1e-6;
    int64_t reduction = 1;
    if (ct_parse_args("gaussian_nll_loss", args, nargs, kw, names, 3, a) < 0 ||
        tensor_arg(a[0], "gaussian_nll_loss", "input", 1) == NULL || tensor_arg(a[1], "gaussian_nll_loss", "target", 2) == NULL ||
        ct_arg_bool(a[3], &full) < 0 || float_arg(a[4], "gaussian_nll_loss", "eps", &eps) < 0 ||
        (a[5] != NULL && ct_int_arg("gaussian_nll_loss", "reduction", 6, a[5], &reduction) < 0)) {
        return NULL;
    }
    CtTensorObject *in = CT_TENSOR(a[0]);
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *var = a[2], *result = NULL;
    if (!CtTensor_Check(var)) { /* a number: the same variance everywhere */
        double v;
        if (float_arg(var, "gaussian_nll_loss", "var", &v) < 0) {
            goto done;
        }
        if (v < 0) {
            PyErr_SetString(PyExc_ValueError, "var has negative entry/entries");
            goto done;
        }
        var = MUL(KEEP((PyObject *)ct_ones_like(in)), NUM(v));
    } else {
        PyObject *any = METH(CMP(var, NUM(0.0), Py_LT), "any", NULL);
        int neg = any != NULL ? PyObject_IsTrue(any) : -1;
        if (neg != 0) {
            if (neg > 0) {
                PyErr_SetString(PyExc_ValueError, "var has negative entry/entries");
            }
            goto done;
        }
    }
    if (var == NULL) {
        goto done;
    }
    CtTensorObject *vt = CT_TENSOR(var);
    bool same = vt->ndim == in->ndim && memcmp(vt->sizes, in->sizes, sizeof(int64_t) * in->ndim) == 0;
    if (!same) {
        /* var one dim short of input (homoscedastic), or differing from it in sizes summing to 1 */
        bool short_by_one = in->ndim >= 1 && vt->ndim == in->ndim - 1 &&
                            memcmp(vt->sizes, in->sizes, sizeof(int64_t) * vt->ndim) == 0;
        int64_t differing = 0;
        for (int d = 0; vt->ndim == in->ndim && d < in->ndim; d++) {
            differing += vt->sizes[d] != in->sizes[d] ? vt->sizes[d] : 0;
        }
        if (short_by_one) {
            var = METH(var, "unsqueeze", "(i)", -1);
        } else if (!(vt->ndim == in->ndim && differing == 1)) {
            PyErr_SetString(PyExc_ValueError, "var is of incorrect size");
            goto done;
        }
    }
    var = METH(var, "clone", NULL);
    var = arena->failed ? NULL : no_grad_clamp_min_(arena, var, eps);
    PyObject *d = SUB(a[0], a[1]);
    PyObject *loss = MUL(ADD(METH(var, "log", NULL), DIV(MUL(d, d), var)), NUM(0.5));
    if (full) {
        loss = ADD(loss, NUM(0.5 * log(2.0 * M_PI)));
    }
    result = TAKE(reduce_loss(arena, loss, reduction));
done:
    arena_free(arena);
    return result;
}

/* triplet_margin_loss(anchor, positive, negative, margin=1, p=2, eps=1e-6, swap=False, reduction=mean):
 * max(0, margin + d(anchor, positive) - d(anchor, negative)), d the pairwise distance */
static PyObject *py_triplet_margin_loss(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"anchor", "positive", "negative", "margin", "p", "eps", "swap", "reduction", NULL};
    PyObject *a[8];
    double d[3] = {1.0, 2.0, 1e-6};
    bool swap = false;
    int64_t reduction = 1;
    if (parse_loss("triplet_margin_loss", args, nargs, kw, names, 3, "dddbi", a, d, &swap, &reduction) < 0) {
        return NULL;
    }
    int na = CT_TENSOR(a[0])->ndim, np = CT_TENSOR(a[1])->ndim, nn = CT_TENSOR(a[2])->ndim;
    if (na != np || np != nn) {
        PyErr_Format(PyExc_RuntimeError,
                     "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
                     "but got: anchor %dD, positive %dD, and negative %dD inputs",
                     na, np, nn);
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *p = NUM(d[1]), *eps = NUM(d[2]);
    PyObject *dpos = FN("pairwise_distance", "(OOOO)", a[0], a[1], p, eps);
    PyObject *dneg = FN("pairwise_distance", "(OOOO)", a[0], a[2], p, eps);
    if (swap) {
        dneg = FN("minimum", "(OO)", dneg, FN("pairwise_distance", "(OOOO)", a[1], a[2], p, eps));
    }
    PyObject *loss = METH(SUB(ADD(dpos, NUM(d[0])), dneg), "clamp_min", "(i)", 0);
    PyObject *r = TAKE(reduce_loss(arena, loss, reduction));
    arena_free(arena);
    return r;
}

/* ============================================================================================
 * tables
 * ============================================================================================ */
#define CT_NN_ACT_FN(name, doc) {#name, CT_FASTCALL(py_##name), CT_METH_FK, doc},
#define CT_NN_ACT_FN_(name) {#name "_", CT_FASTCALL(py_##name##_), CT_METH_FK, #name "_(input, ...): in place"},
PyMethodDef ct_nn_act_module_methods[] = {
    CT_NN_ACT_FN(elu, "elu(input, alpha=1.0, scale=1.0, input_scale=1.0) -> Tensor")
    CT_NN_ACT_FN(celu, "celu(input, alpha=1.0) -> Tensor")
    CT_NN_ACT_FN(selu, "selu(input) -> Tensor")
    CT_NN_ACT_FN(hardtanh, "hardtanh(input, min_val=-1.0, max_val=1.0) -> Tensor")
    CT_NN_ACT_FN(threshold, "threshold(input, threshold, value) -> Tensor")
    CT_NN_ACT_FN(hardsigmoid, "hardsigmoid(input) -> Tensor")
    CT_NN_ACT_FN(hardswish, "hardswish(input) -> Tensor")
    CT_NN_ACT_FN(mish, "mish(input) -> Tensor")
    CT_ACT_INPLACE(CT_NN_ACT_FN_)
    CT_NN_ACT_FN_(silu)
    CT_NN_ACT_FN(log_sigmoid, "log_sigmoid(input) -> Tensor")
    CT_NN_ACT_FN(softshrink, "softshrink(input, lambd=0.5) -> Tensor")
    CT_NN_ACT_FN(hardshrink, "hardshrink(input, lambd=0.5) -> Tensor")
    CT_NN_ACT_FN(prelu, "prelu(input, weight) -> Tensor")
    CT_NN_ACT_FN(_threshold_backward, "_threshold_backward(grad_output, self, threshold) -> Tensor: grad_output where self > threshold, else 0")
    CT_NN_ACT_FN(_tanh_backward, "_tanh_backward(grad_output, output) -> Tensor: grad_output * (1 - output^2)")
    CT_NN_ACT_FN(_sigmoid_backward, "_sigmoid_backward(grad_output, output) -> Tensor: grad_output * (1 - output) * output")
    CT_NN_ACT_FN(glu, "glu(input, dim=-1) -> Tensor")
    CT_NN_ACT_FN(softsign, "softsign(input) -> Tensor: input / (1 + |input|)")
    CT_NN_ACT_FN(tanhshrink, "tanhshrink(input) -> Tensor: input - tanh(input)")
    CT_NN_ACT_FN(softmin, "softmin(input, dim, dtype=None) -> Tensor: softmax(-input)")
    CT_NN_ACT_FN(constant_pad_nd, "constant_pad_nd(input, pad, value=0) -> Tensor")
    {"_pad_gather", CT_FASTCALL(py_pad_gather), CT_METH_FK, "_pad_gather(input, pad, mode): reflect (0), replicate (1) or circular (2) padding"},
    CT_NN_ACT_FN(pad, "pad(input, pad, mode='constant', value=None) -> Tensor")
    CT_NN_ACT_FN(normalize, "normalize(input, p=2.0, dim=1, eps=1e-12, out=None) -> Tensor")
    CT_NN_ACT_FN(cosine_similarity, "cosine_similarity(x1, x2, dim=1, eps=1e-8) -> Tensor")
    CT_NN_ACT_FN(pairwise_distance, "pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False) -> Tensor")
    CT_NN_ACT_FN(kl_div, "kl_div(input, target, reduction=1, log_target=False) -> Tensor")
    CT_NN_ACT_FN(huber_loss, "huber_loss(input, target, reduction=1, delta=1.0) -> Tensor")
    CT_NN_ACT_FN(soft_margin_loss, "soft_margin_loss(input, target, reduction=1) -> Tensor")
    CT_NN_ACT_FN(margin_ranking_loss, "margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1) -> Tensor")
    CT_NN_ACT_FN(hinge_embedding_loss, "hinge_embedding_loss(input, target, margin=1.0, reduction=1) -> Tensor")
    CT_NN_ACT_FN(cosine_embedding_loss, "cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1) -> Tensor")
    CT_NN_ACT_FN(poisson_nll_loss, "poisson_nll_loss(input, target, log_input, full, eps, reduction) -> Tensor")
    CT_NN_ACT_FN(gaussian_nll_loss, "gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction=1) -> Tensor")
    CT_NN_ACT_FN(triplet_margin_loss, "triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=1) -> Tensor")
    {NULL},
};

PyMethodDef ct_nn_act_tensor_methods[] = {
    {"hardshrink", CT_FASTCALL(tensor_hardshrink), CT_METH_FK, "hardshrink(lambd=0.5) -> Tensor"},
    {"prelu", CT_FASTCALL(tensor_prelu), CT_METH_FK, "prelu(weight) -> Tensor"},
    {NULL},
};

PyType_Slot ct_nn_act_tensor_slots[] = {{0, NULL}};
