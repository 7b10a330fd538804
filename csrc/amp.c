/* amp.c: automatic mixed precision in C: autocast's state, its op policy table and the casting of
 * an op's arguments (amp.h), and GradScaler's scale update (_amp_update_scale_). GradScaler's
 * unscale, a multi-tensor pass, is clip.c's (_amp_foreach_non_finite_check_and_unscale_);
 * python/ctorch/amp keeps the context manager and GradScaler's bookkeeping.
 *
 * The state is per process, as ctorch's grad mode is (PyTorch keeps both per thread). */
#include "amp.h"
#include "args.h"
#include "autograd.h"
#include "dtype.h"
#include "elementwise.h"
#include "registry.h"
#include "tensor.h"
#include <string.h>

bool ct_autocast_on = false;

static struct {
    bool enabled;
    CtDType dtype;
} autocast_state[2] = {{false, CT_BF16}, {false, CT_F16}}; /* [CT_DEV_CPU], [CT_DEV_CUDA] */
static bool cache_enabled = true;
static int nesting = 0;
static PyObject *cast_cache; /* dict: id(weight) -> (weight, its cast, the weight's storage version) */

static void refresh_on(void) { ct_autocast_on = autocast_state[CT_DEV_CPU].enabled || autocast_state[CT_DEV_CUDA].enabled; }

/* --- the policy table --------------------------------------------------------------------------------
 * PyTorch's lists (autocast_mode.h for CUDA; its CPU registrations, checked against PyTorch 2.x on
 * the CPU), under ctorch's names of the ops (the `_` entry points are the C functions nn.functional
 * calls). A composite ctorch builds of recording ops (tensordot, einsum's GEMMs, ...) needs no row:
 * its parts are cast as they run, as PyTorch's composite ops are. */
typedef struct {
    const char *name;
    uint8_t cpu, cuda;
} PolicyRow;

#define L CT_AC_LOWER
#define F CT_AC_FP32
#define P CT_AC_PROMOTE
#define N CT_AC_NONE
static const PolicyRow policy_rows[] = {
    /* GEMMs and convolutions: the autocast dtype */
    {"mm", L, L}, {"matmul", L, L}, {"addmm", L, L}, {"bmm", L, L}, {"baddbmm", L, L}, {"addbmm", L, L},
    {"linear", L, L}, {"_linear_mm", L, L}, {"_linear_nd", L, L}, {"conv1d", L, L}, {"conv2d", L, L},
    {"prelu", L, L}, {"einsum", L, L}, {"mv", N, L}, {"addmv", N, L}, {"scaled_dot_product_attention", L, L},
    {"conv_transpose1d", L, L}, {"conv_transpose2d", L, L},
    {"conv3d", L, L}, {"conv_transpose3d", L, L},
    /* recurrent cells and layers (cuDNN's RNN on CUDA; on the CPU the layers' GEMMs are cast as they run) */
    {"rnn_tanh_cell", L, L}, {"rnn_relu_cell", L, L}, {"lstm_cell", N, L}, {"gru_cell", N, L}, {"_rnn", N, L},
    /* ranges: float32 (PyTorch's CPU keeps the pointwise math, softmax and the norms in bfloat16) */
    {"acos", N, F}, {"asin", N, F}, {"cosh", N, F}, {"exp", N, F}, {"expm1", N, F}, {"log", N, F},
    {"log10", N, F}, {"log2", N, F}, {"log1p", N, F}, {"reciprocal", N, F}, {"rsqrt", N, F}, {"sinh", N, F},
    {"tan", N, F}, {"pow", N, F}, {"softplus", N, F}, {"layer_norm", N, F}, {"group_norm", N, F},
    {"norm", N, F}, {"cosine_similarity", N, F}, {"logsumexp", N, F}, {"prod", F, F}, {"softmax", N, F},
    {"log_softmax", N, F}, {"softmin", N, F}, {"cumprod", N, F}, {"cumsum", N, F}, {"sum", N, F},
    {"_upsample", N, F}, {"cdist", F, F}, {"dist", N, F}, {"pdist", N, F}, {"renorm", N, F}, {"trace", F, N}, {"quantile", F, N}, {"nanquantile", F, N},
    /* losses: float32 everywhere; cross_entropy is log_softmax + nll_loss in PyTorch, both float32 */
    {"_mse_loss", F, F}, {"_l1_loss", F, F}, {"_smooth_l1_loss", F, F}, {"huber_loss", F, F},
    {"_nll_loss", F, F}, {"_cross_entropy", F, F}, {"_cross_entropy_ls", F, F}, {"_cross_entropy_soft", F, F},
    {"_cross_entropy_soft_mean", F, F}, {"_binary_cross_entropy_with_logits", F, F},
    {"_binary_cross_entropy", F, CT_AC_BANNED}, {"kl_div", F, F}, {"poisson_nll_loss", F, F},
    {"cosine_embedding_loss", F, F}, {"hinge_embedding_loss", F, F}, {"margin_ranking_loss", F, F},
    {"soft_margin_loss", F, F}, {"triplet_margin_loss", F, F}, {"multi_margin_loss", N, F},
    {"multilabel_margin_loss", N, F},
    /* the widest of the arguments' floating dtypes */
    {"addcdiv", N, P}, {"addcmul", N, P}, {"atan2", N, P}, {"arctan2", N, P}, {"cross", N, P},
    {"_linalg_cross", N, P}, {"dot", N, P}, {"vdot", N, P}, {"index_put", N, P}, {"scatter_add", N, P},
    {"cat", P, N}, {"concat", P, N}, {"concatenate", P, N}, {"stack", P, N}, {"index_copy", P, N},
};
#undef L
#undef F
#undef P
#undef N

void ct_autocast_policy(const char *name, uint8_t policy[2])
{
    if (strncmp(name, "Tensor.", 7) == 0) {
        name += 7;
    }
    policy[0] = policy[1] = CT_AC_NONE;
    for (size_t i = 0; i < sizeof(policy_rows) / sizeof(policy_rows[0]); i++) {
        if (strcmp(policy_rows[i].name, name) == 0) {
            policy[CT_DEV_CPU] = policy_rows[i].cpu;
            policy[CT_DEV_CUDA] = policy_rows[i].cuda;
            return;
        }
    }
}

/* --- casting ------------------------------------------------------------------------------------------ */
/* PyTorch's eligibility: a floating tensor on the autocast device type, not float64. */
static bool eligible(PyObject *o, CtDeviceType type)
{
    if (!CtTensor_Check(o)) {
        return false;
    }
    CtTensorObject *t = CT_TENSOR(o);
    return ct_is_floating(t->dtype) && t->dtype != CT_F64 && ct_device_of(t).type == type;
}

static bool is_sequence(PyObject *o) { return PyList_Check(o) || PyTuple_Check(o); }

/* Calls visit(o) for each tensor argument, looking one level into lists and tuples; stops at a
 * nonzero return and returns it. */
static int each_argument(PyObject *const *args, size_t n, int (*visit)(PyObject *, void *), void *ctx)
{
    for (size_t i = 0; i < n; i++) {
        PyObject *a = args[i];
        if (is_sequence(a)) {
            PyObject *const *items = PySequence_Fast_ITEMS(a);
            for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(a); j++) {
                int r = visit(items[j], ctx);
                if (r != 0) {
                    return r;
                }
            }
        } else {
            int r = visit(a, ctx);
            if (r != 0) {
                return r;
            }
        }
    }
    return 0;
}

static int on_type(PyObject *o, void *ctx)
{
    return CtTensor_Check(o) && ct_device_of(CT_TENSOR(o)).type == *(CtDeviceType *)ctx;
}

typedef struct {
    CtDeviceType type;
    CtDType widest;
} PromoteCtx;

static int widen(PyObject *o, void *p)
{
    PromoteCtx *c = (PromoteCtx *)p;
    if (eligible(o, c->type) && CT_TENSOR(o)->dtype != c->widest) {
        c->widest = CT_F32; /* float32 wins over the autocast dtype, as over the other 16-bit one */
    }
    return 0;
}

/* A weight's cast is kept until the outermost autocast region ends (PyTorch's cache: float32 leaves
 * that require grad, cast to the autocast dtype), so a weight used several times is cast once. The
 * cache is consulted only in grad mode (a cast made under no_grad has no history to reuse) and an
 * entry is dropped once the weight has been written to. */
static bool cacheable(CtTensorObject *t, CtDType to, CtDeviceType type)
{
    return cache_enabled && ct_grad_enabled && to == autocast_state[type].dtype && t->dtype == CT_F32 &&
           t->requires_grad && t->grad_fn == NULL && t->view_base == NULL;
}

/* o cast to dtype (a new reference; o itself when not eligible or already of dtype). */
static PyObject *cast_one(PyObject *o, CtDType dtype, CtDeviceType type)
{
    if (!eligible(o, type) || CT_TENSOR(o)->dtype == dtype) {
        return Py_NewRef(o);
    }
    CtTensorObject *t = CT_TENSOR(o);
    bool cache = cacheable(t, dtype, type);
    PyObject *key = NULL, *entry = NULL, *cast = NULL;
    if (cache) {
        if (cast_cache == NULL && (cast_cache = PyDict_New()) == NULL) {
            return NULL;
        }
        if ((key = PyLong_FromVoidPtr(o)) == NULL) {
            return NULL;
        }
        entry = PyDict_GetItemWithError(cast_cache, key); /* borrowed */
        if (entry != NULL && PyTuple_GET_ITEM(entry, 0) == o &&
            PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(entry, 2)) == t->storage->version) {
            Py_DECREF(key);
            return Py_NewRef(PyTuple_GET_ITEM(entry, 1));
        }
        if (PyErr_Occurred()) {
            Py_DECREF(key);
            return NULL;
        }
    }
    cast = ct_call_method(o, "to", "O", ct_dtype_object(dtype));
    if (cast != NULL && cache) {
        entry = Py_BuildValue("(OOK)", o, cast, (unsigned long long)t->storage->version);
        if (entry == NULL || PyDict_SetItem(cast_cache, key, entry) < 0) {
            Py_CLEAR(cast);
        }
        Py_XDECREF(entry);
    }
    Py_XDECREF(key);
    return cast;
}

/* The argument with its tensors (and those of a list or tuple) cast. New reference. */
static PyObject *cast_argument(PyObject *a, CtDType dtype, CtDeviceType type)
{
    if (!is_sequence(a)) {
        return cast_one(a, dtype, type);
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(a);
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *c = cast_one(PySequence_Fast_ITEMS(a)[j], dtype, type);
        if (c == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, j, c);
    }
    if (PyTuple_Check(a)) {
        Py_SETREF(out, PyList_AsTuple(out));
    }
    return out;
}

/* The keyword's value, or NULL when it is absent or None (borrowed). */
static PyObject *keyword(PyObject *const *args, size_t nargs, PyObject *kwnames, const char *name)
{
    for (Py_ssize_t k = 0; kwnames != NULL && k < PyTuple_GET_SIZE(kwnames); k++) {
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), name) == 0) {
            return args[nargs + k] == Py_None ? NULL : args[nargs + k];
        }
    }
    return NULL;
}

static const char banned_message[] =
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.";

PyObject *ct_autocast_vectorcall(const uint8_t policy[2], CtAutocastCall call, void *ctx, PyObject *const *args,
                                 size_t nargs, PyObject *kwnames)
{
    size_t ntotal = nargs + (kwnames != NULL ? (size_t)PyTuple_GET_SIZE(kwnames) : 0);
    /* the device type whose autocast applies: CUDA's first, as PyTorch's dispatch prefers it */
    static const CtDeviceType order[2] = {CT_DEV_CUDA, CT_DEV_CPU};
    CtDeviceType type = CT_DEV_CUDA;
    bool applies = false;
    for (int k = 0; k < 2 && !applies; k++) {
        type = order[k];
        applies = autocast_state[type].enabled && policy[type] != CT_AC_NONE &&
                  each_argument(args, ntotal, on_type, &type) != 0;
    }
    /* out= and explicit dtype= calls are not autocast (PyTorch's eligibility rules) */
    if (!applies || keyword(args, nargs, kwnames, "out") != NULL || keyword(args, nargs, kwnames, "dtype") != NULL) {
        return call(ctx, args, nargs, kwnames);
    }
    CtDType dtype = autocast_state[type].dtype;
    switch (policy[type]) {
    case CT_AC_BANNED:
        PyErr_SetString(PyExc_RuntimeError, banned_message);
        return NULL;
    case CT_AC_FP32:
        dtype = CT_F32;
        break;
    case CT_AC_PROMOTE: {
        PromoteCtx c = {type, dtype};
        each_argument(args, ntotal, widen, &c);
        dtype = c.widest;
        break;
    }
    default:
        break;
    }
    PyObject **cast = PyMem_Calloc(ntotal + 1, sizeof(PyObject *));
    if (cast == NULL) {
        return PyErr_NoMemory();
    }
    PyObject *result = NULL;
    for (size_t i = 0; i < ntotal; i++) {
        if ((cast[i] = cast_argument(args[i], dtype, type)) == NULL) {
            goto done;
        }
    }
    /* the op runs with autocast off: what it calls is not cast again */
    ct_autocast_on = false;
    result = call(ctx, cast, nargs, kwnames);
    refresh_on();
done:
    for (size_t i = 0; i < ntotal; i++) {
        Py_XDECREF(cast[i]);
    }
    PyMem_Free(cast);
    return result;
}

/* --- the Python API (ctorch.set_autocast_enabled, ...) ------------------------------------------------- */
/* The device type named by a device_type string ("cpu" or "cuda"); -1 with RuntimeError otherwise. */
static int device_type_arg(PyObject *obj, const char *fname, CtDeviceType *out)
{
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'device_type' must be str, not %s", fname, Py_TYPE(obj)->tp_name);
        return -1;
    }
    const char *s = PyUnicode_AsUTF8(obj);
    if (s == NULL) {
        return -1;
    }
    if (strcmp(s, "cpu") == 0 || strcmp(s, "cuda") == 0) {
        *out = s[0] == 'c' && s[1] == 'p' ? CT_DEV_CPU : CT_DEV_CUDA;
        return 0;
    }
    PyErr_Format(PyExc_RuntimeError, "Expected one of cpu, cuda device type at start of device string: %s", s);
    return -1;
}

static int strict_bool(PyObject *obj, const char *fname, const char *arg, int pos, bool *out)
{
    if (!PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be bool, not %s", fname, arg, pos,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    *out = obj == Py_True;
    return 0;
}

static PyObject *py_set_autocast_enabled(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"device_type", "enabled", NULL};
    PyObject *a[2];
    CtDeviceType type;
    bool on;
    if (ct_parse_args("set_autocast_enabled", args, nargs, kwnames, names, 2, a) < 0 ||
        device_type_arg(a[0], "set_autocast_enabled", &type) < 0 ||
        strict_bool(a[1], "set_autocast_enabled", "enabled", 2, &on) < 0) {
        return NULL;
    }
    autocast_state[type].enabled = on;
    refresh_on();
    Py_RETURN_NONE;
}

static PyObject *py_is_autocast_enabled(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"device_type", NULL};
    PyObject *a[1];
    CtDeviceType type = CT_DEV_CUDA; /* no argument: CUDA's, as PyTorch */
    if (ct_parse_args("is_autocast_enabled", args, nargs, kwnames, names, 0, a) < 0 ||
        (a[0] != NULL && device_type_arg(a[0], "is_autocast_enabled", &type) < 0)) {
        return NULL;
    }
    return PyBool_FromLong(autocast_state[type].enabled);
}

static PyObject *py_get_autocast_dtype(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"device_type", NULL};
    PyObject *a[1];
    CtDeviceType type;
    if (ct_parse_args("get_autocast_dtype", args, nargs, kwnames, names, 1, a) < 0 ||
        device_type_arg(a[0], "get_autocast_dtype", &type) < 0) {
        return NULL;
    }
    return Py_NewRef(ct_dtype_object(autocast_state[type].dtype));
}

static PyObject *py_set_autocast_dtype(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"device_type", "dtype", NULL};
    PyObject *a[2];
    CtDeviceType type;
    CtDType dtype;
    if (ct_parse_args("set_autocast_dtype", args, nargs, kwnames, names, 2, a) < 0 ||
        device_type_arg(a[0], "set_autocast_dtype", &type) < 0 || ct_dtype_from_object(a[1], &dtype) < 0) {
        return NULL;
    }
    autocast_state[type].dtype = dtype;
    Py_RETURN_NONE;
}

static PyObject *py_is_autocast_cache_enabled(PyObject *self, PyObject *unused) { return PyBool_FromLong(cache_enabled); }

static PyObject *py_set_autocast_cache_enabled(PyObject *self, PyObject *arg)
{
    bool on;
    if (strict_bool(arg, "set_autocast_cache_enabled", "enabled", 1, &on) < 0) {
        return NULL;
    }
    cache_enabled = on;
    Py_RETURN_NONE;
}

static PyObject *py_clear_autocast_cache(PyObject *self, PyObject *unused)
{
    Py_CLEAR(cast_cache);
    Py_RETURN_NONE;
}

static PyObject *py_autocast_increment_nesting(PyObject *self, PyObject *unused) { return PyLong_FromLong(++nesting); }

static PyObject *py_autocast_decrement_nesting(PyObject *self, PyObject *unused)
{
    return PyLong_FromLong(nesting > 0 ? --nesting : 0);
}

/* --- GradScaler's update ------------------------------------------------------------------------------- */
static int check_one_element(PyObject *o, const char *what, bool want_float)
{
    if (!CtTensor_Check(o)) {
        PyErr_Format(PyExc_TypeError, "_amp_update_scale_(): %s must be a Tensor, not %s", what, Py_TYPE(o)->tp_name);
        return -1;
    }
    CtTensorObject *t = CT_TENSOR(o);
    if (ct_numel(t) != 1) {
        PyErr_Format(PyExc_RuntimeError, "%s must be a 1-element tensor.", what);
        return -1;
    }
    if (want_float ? t->dtype != CT_F32 : t->dtype != CT_I32) {
        PyErr_Format(PyExc_RuntimeError, "%s must be %s tensor.", what, want_float ? "a float" : "an int");
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(update_scale_doc,
             "_amp_update_scale_(scale, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor, "
             "growth_interval) -> Tensor\n\n"
             "GradScaler's update, on the tensors' device (no host wait): a step that found an inf or NaN "
             "multiplies the scale by the backoff factor and restarts the count of good steps; the "
             "growth_interval-th good step in a row multiplies it by the growth factor (kept only if "
             "finite) and restarts the count. Updates scale and growth_tracker in place; returns scale.");
static PyObject *py_amp_update_scale(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"self", "growth_tracker", "found_inf", "scale_growth_factor",
                                        "scale_backoff_factor", "growth_interval", NULL};
    PyObject *a[6];
    double growth, backoff;
    int64_t interval;
    if (ct_parse_args("_amp_update_scale_", args, nargs, kwnames, names, 6, a) < 0 ||
        check_one_element(a[0], "current_scale", true) < 0 || check_one_element(a[1], "growth_tracker", false) < 0 ||
        check_one_element(a[2], "found_inf", true) < 0 || ct_arg_double(a[3], &growth) < 0 ||
        ct_arg_double(a[4], &backoff) < 0 || ct_arg_int64(a[5], &interval) < 0) {
        return NULL;
    }
    /* two in-place passes of one element each (scalar_math.h's amp_scale, then amp_tracker: the scale
     * reads the old count), with found_inf viewed 0-d so that the shapes stay those of the targets */
    CtTensorObject *scale = CT_TENSOR(a[0]), *tracker = CT_TENSOR(a[1]);
    CtTensorObject *found = ct_view_of(CT_TENSOR(a[2]), 0, NULL, NULL, CT_TENSOR(a[2])->offset);
    if (found == NULL) {
        return NULL;
    }
    CtOpParams p = {.f = {growth, backoff, (double)interval}, .i = {0, 0, interval}};
    CtEwArg scale_in[3] = {{scale}, {tracker}, {found}};
    CtTensorObject *r = ct_elementwise(CT_EW_AMP_SCALE, scale_in, scale, &p, CT_F32);
    Py_XDECREF(r);
    if (r != NULL) {
        CtOpParams q = {.f = {(double)interval}, .i = {interval}};
        CtEwArg tracker_in[2] = {{tracker}, {found}};
        r = ct_elementwise(CT_EW_AMP_TRACKER, tracker_in, tracker, &q, CT_I32);
        Py_XDECREF(r);
    }
    Py_DECREF(found);
    return r != NULL ? Py_NewRef(a[0]) : NULL;
}

PyMethodDef ct_amp_module_methods[] = {
    {"set_autocast_enabled", CT_FASTCALL(py_set_autocast_enabled), CT_METH_FK,
     "set_autocast_enabled(device_type, enabled): turns autocast on or off for a device type"},
    {"is_autocast_enabled", CT_FASTCALL(py_is_autocast_enabled), CT_METH_FK,
     "is_autocast_enabled(device_type='cuda') -> bool"},
    {"get_autocast_dtype", CT_FASTCALL(py_get_autocast_dtype), CT_METH_FK,
     "get_autocast_dtype(device_type) -> dtype: the dtype GEMMs and convolutions run in under autocast"},
    {"set_autocast_dtype", CT_FASTCALL(py_set_autocast_dtype), CT_METH_FK, "set_autocast_dtype(device_type, dtype)"},
    {"is_autocast_cache_enabled", py_is_autocast_cache_enabled, METH_NOARGS, "is the weight cast cache on"},
    {"set_autocast_cache_enabled", py_set_autocast_cache_enabled, METH_O, "set_autocast_cache_enabled(enabled)"},
    {"clear_autocast_cache", py_clear_autocast_cache, METH_NOARGS, "drops the casts of weights kept by autocast"},
    {"autocast_increment_nesting", py_autocast_increment_nesting, METH_NOARGS, "enters an autocast region"},
    {"autocast_decrement_nesting", py_autocast_decrement_nesting, METH_NOARGS,
     "leaves an autocast region; returns how many remain open"},
    {"_amp_update_scale_", CT_FASTCALL(py_amp_update_scale), CT_METH_FK, update_scale_doc},
    {NULL},
};
PyMethodDef ct_amp_tensor_methods[] = {{NULL}};
PyType_Slot ct_amp_tensor_slots[] = {{0, NULL}};
