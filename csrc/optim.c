/* optim.c: the multi-tensor optimizer steps (see optim.h): argument checks and state creation for
 * _C._sgd_step / _C._adam_step / _C._rmsprop_step, and the CPU kernels.
 *
 * CPU: tensors whose param, grad and states are all contiguous are laid end to end in one flat
 * element space split over the thread pool (so 1000 small tensors cost one parallel region, not
 * 1000); any other layout goes through CtIter. The per-element update is written once per dtype
 * by CT_OPTIM_STAMP, in PyTorch's order of operations (each line below names the PyTorch op). */
#include "optim.h"
#include "optim_math.h"
#include "args.h"
#include "device.h"
#include "dtype.h"
#include "iter.h"
#include "parallel.h"
#include "registry.h"
#include "tensor.h"
#include <math.h>
#include <string.h>

/* --- the per-element updates --------------------------------------------------------------------------- */
typedef struct {
    const CtOptimParams *p;
    bool fresh;
    double step_size, bias_corr2_sqrt;
} StepCtx;


/* Operands: 0 param, 1 grad, 2.. the state slots in use (see optim.h), in slot order.
 *
 * Each body is an always-inline function whose option flags are parameters; the wrappers call it
 * once per combination of flags with constants (CT_FLAGS3/4), so every instance is a straight loop
 * that the compiler can vectorise (with the dense wrappers' constant unit strides). Pointers and
 * strides are copied into locals first: stores through char pointers could otherwise alias them.
 * The sqrt of Adam and RMSprop vectorises because setup.py builds with -fno-math-errno. */
#define CT_INLINE static inline __attribute__((always_inline))

#define CT_FLAGS2(CALL, a, b, ...)       \
    do {                                 \
        if (a) {                         \
            if (b) {                     \
                CALL(__VA_ARGS__, 1, 1); \
            } else {                     \
                CALL(__VA_ARGS__, 1, 0); \
            }                            \
        } else {                         \
            if (b) {                     \
                CALL(__VA_ARGS__, 0, 1); \
            } else {                     \
                CALL(__VA_ARGS__, 0, 0); \
            }                            \
        }                                \
    } while (0)
#define CT_FLAGS3(CALL, a, b, c, ...)                 \
    do {                                              \
        if (a) {                                      \
            CT_FLAGS2(CALL, b, c, __VA_ARGS__, 1);    \
        } else {                                      \
            CT_FLAGS2(CALL, b, c, __VA_ARGS__, 0);    \
        }                                             \
    } while (0)
#define CT_FLAGS4(CALL, a, b, c, d, ...)              \
    do {                                              \
        if (a) {                                      \
            CT_FLAGS3(CALL, b, c, d, __VA_ARGS__, 1); \
        } else {                                      \
            CT_FLAGS3(CALL, b, c, d, __VA_ARGS__, 0); \
        }                                             \
    } while (0)

#define CT_OPTIM_STAMP(NAME, SFX)                                                                            \
    CT_INLINE void sgd_body_##NAME(char **data, const int64_t *st, int64_t n, const StepCtx *c, bool use_wd, \
                                   bool use_mom, bool fresh, bool nesterov)                                  \
    {                                                                                                        \
        const CtOptimConsts##SFX k = ct_optim_consts_##SFX(c->p);                                            \
        char *const d0 = data[0], *const d1 = data[1], *const d2 = use_mom ? data[2] : NULL;                 \
        const int64_t s0 = st[0], s1 = st[1], s2 = use_mom ? st[2] : 0;                                      \
        for (int64_t i = 0; i < n; i++) {                                                                    \
            ct_sgd_elem_##NAME(d0 + i * s0, d1 + i * s1, use_mom ? d2 + i * s2 : NULL, &k, use_wd, use_mom,  \
                               fresh, nesterov);                                                             \
        }                                                                                                    \
    }                                                                                                        \
    CT_INLINE void adam_body_##NAME(char **data, const int64_t *st, int64_t n, const StepCtx *c,            \
                                    bool use_wd, bool decoupled, bool amsgrad)                               \
    {                                                                                                        \
        const CtOptimConsts##SFX k = ct_optim_consts_##SFX(c->p);                                            \
        const __typeof__(k.lr) bc2 = (__typeof__(k.lr))c->bias_corr2_sqrt;                                   \
        const __typeof__(k.lr) nstep = (__typeof__(k.lr))(-c->step_size);                                    \
        const int64_t s0 = st[0], s1 = st[1], s2 = st[2], s3 = st[3], s4 = amsgrad ? st[4] : 0;              \
        char *const d0 = data[0], *const d1 = data[1], *const d2 = data[2], *const d3 = data[3];             \
        char *const d4 = amsgrad ? data[4] : NULL;                                                           \
        for (int64_t i = 0; i < n; i++) {                                                                    \
            ct_adam_elem_##NAME(d0 + i * s0, d1 + i * s1, d2 + i * s2, d3 + i * s3,                          \
                                amsgrad ? d4 + i * s4 : NULL, &k, nstep, bc2, use_wd, decoupled, amsgrad);   \
        }                                                                                                    \
    }                                                                                                        \
    CT_INLINE void rmsprop_body_##NAME(char **data, const int64_t *st, int64_t n, const StepCtx *c,         \
                                       bool use_wd, bool centered, bool use_mom)                             \
    {                                                                                                        \
        const CtOptimConsts##SFX k = ct_optim_consts_##SFX(c->p);                                            \
        /* operand of each optional slot: grad_avg follows square_avg, the buffer comes last */              \
        const int gop = 3, bop = centered ? 4 : 3;                                                           \
        const int64_t s0 = st[0], s1 = st[1], s2 = st[2];                                                    \
        const int64_t sg = centered ? st[gop] : 0, sb = use_mom ? st[bop] : 0;                               \
        char *const d0 = data[0], *const d1 = data[1], *const d2 = data[2];                                  \
        char *const dg = centered ? data[gop] : NULL, *const db = use_mom ? data[bop] : NULL;                \
        for (int64_t i = 0; i < n; i++) {                                                                    \
            ct_rmsprop_elem_##NAME(d0 + i * s0, d1 + i * s1, d2 + i * s2, centered ? dg + i * sg : NULL,     \
                                   use_mom ? db + i * sb : NULL, &k, use_wd, centered, use_mom);             \
        }                                                                                                    \
    }                                                                                                        \
    CT_INLINE void sgd_any_##NAME(char **data, const int64_t *st, int64_t n, const StepCtx *c)              \
    {                                                                                                        \
        const CtOptimParams *p = c->p;                                                                       \
        CT_FLAGS4(sgd_body_##NAME, p->weight_decay != 0, p->momentum != 0, c->fresh, p->nesterov, data, st, \
                  n, c);                                                                                     \
    }                                                                                                        \
    CT_INLINE void adam_any_##NAME(char **data, const int64_t *st, int64_t n, const StepCtx *c)             \
    {                                                                                                        \
        const CtOptimParams *p = c->p;                                                                       \
        CT_FLAGS3(adam_body_##NAME, p->weight_decay != 0, p->decoupled_weight_decay, p->amsgrad, data, st,  \
                  n, c);                                                                                     \
    }                                                                                                        \
    CT_INLINE void rmsprop_any_##NAME(char **data, const int64_t *st, int64_t n, const StepCtx *c)          \
    {                                                                                                        \
        const CtOptimParams *p = c->p;                                                                       \
        CT_FLAGS3(rmsprop_body_##NAME, p->weight_decay != 0, p->centered, p->momentum > 0, data, st, n, c); \
    }                                                                                                        \
    static void sgd_loop_##NAME(char **data, const int64_t *st, int64_t n, void *c)                          \
    {                                                                                                        \
        sgd_any_##NAME(data, st, n, (const StepCtx *)c);                                                     \
    }                                                                                                        \
    static void adam_loop_##NAME(char **data, const int64_t *st, int64_t n, void *c)                         \
    {                                                                                                        \
        adam_any_##NAME(data, st, n, (const StepCtx *)c);                                                    \
    }                                                                                                        \
    static void rmsprop_loop_##NAME(char **data, const int64_t *st, int64_t n, void *c)                      \
    {                                                                                                        \
        rmsprop_any_##NAME(data, st, n, (const StepCtx *)c);                                                 \
    }                                                                                                        \
    static void sgd_dense_##NAME(char **data, const int64_t *unused, int64_t n, void *c)                     \
    {                                                                                                        \
        static const int64_t st[5] = {CT_ISZ_##NAME, CT_ISZ_##NAME, CT_ISZ_##NAME, CT_ISZ_##NAME,            \
                                      CT_ISZ_##NAME};                                                        \
        sgd_any_##NAME(data, st, n, (const StepCtx *)c);                                                     \
    }                                                                                                        \
    static void adam_dense_##NAME(char **data, const int64_t *unused, int64_t n, void *c)                    \
    {                                                                                                        \
        static const int64_t st[5] = {CT_ISZ_##NAME, CT_ISZ_##NAME, CT_ISZ_##NAME, CT_ISZ_##NAME,            \
                                      CT_ISZ_##NAME};                                                        \
        adam_any_##NAME(data, st, n, (const StepCtx *)c);                                                    \
    }                                                                                                        \
    static void rmsprop_dense_##NAME(char **data, const int64_t *unused, int64_t n, void *c)                 \
    {                                                                                                        \
        static const int64_t st[5] = {CT_ISZ_##NAME, CT_ISZ_##NAME, CT_ISZ_##NAME, CT_ISZ_##NAME,            \
                                      CT_ISZ_##NAME};                                                        \
        rmsprop_any_##NAME(data, st, n, (const StepCtx *)c);                                                 \
    }

/* element sizes for the dense variants */
#define CT_ISZ_F16 2
#define CT_ISZ_BF16 2
#define CT_ISZ_F32 4
#define CT_ISZ_F64 8

CT_OPTIM_STAMP(F16, F)
CT_OPTIM_STAMP(BF16, F)
CT_OPTIM_STAMP(F32, F)
CT_OPTIM_STAMP(F64, D)

/* The inner loop of kind for dtype; dense: every operand has unit stride (the strides are ignored). */
static CtInnerLoop step_loop(CtOptimKind kind, CtDType dtype, bool dense)
{
    switch (dtype) {
#define CT_OPTIM_CASE(NAME)                                                                          \
    case CT_##NAME:                                                                                  \
        if (dense) {                                                                                 \
            return kind == CT_OPTIM_SGD ? sgd_dense_##NAME : kind == CT_OPTIM_ADAM ? adam_dense_##NAME \
                                                                                     : rmsprop_dense_##NAME; \
        }                                                                                            \
        return kind == CT_OPTIM_SGD ? sgd_loop_##NAME : kind == CT_OPTIM_ADAM ? adam_loop_##NAME     \
                                                                                : rmsprop_loop_##NAME;
        CT_OPTIM_CASE(F16)
        CT_OPTIM_CASE(BF16)
        CT_OPTIM_CASE(F32)
        CT_OPTIM_CASE(F64)
#undef CT_OPTIM_CASE
    default:
        return NULL;
    }
}

/* The operands of tensor t in loop order; returns their count. */
static int step_operands(const CtOptimParams *p, const CtOptimTensor *t, CtTensorObject **ops)
{
    int n = 0;
    ops[n++] = t->param;
    ops[n++] = t->grad;
    for (int s = 0; s < 3; s++) {
        if (t->state[s] != NULL) {
            ops[n++] = t->state[s];
        }
    }
    return n;
}

/* --- the CPU kernel ------------------------------------------------------------------------------------- */
typedef struct {
    const CtOptimParams *p;
    const CtOptimTensor *tensors;
    const int64_t *index;  /* the dense tensors, by position in the flat space */
    const int64_t *starts; /* flat offset of each dense tensor, plus the total at the end */
    int64_t ndense;
} FlatCtx;

/* Elements [begin, end) of the flat space: each overlapped tensor gets its slice. */
static void flat_range(int64_t begin, int64_t end, void *vctx)
{
    const FlatCtx *fc = (const FlatCtx *)vctx;
    /* the first tensor whose range holds begin (binary search on starts) */
    int64_t lo = 0, hi = fc->ndense - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (fc->starts[mid] <= begin) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    for (int64_t k = lo; k < fc->ndense && fc->starts[k] < end; k++) {
        const CtOptimTensor *t = &fc->tensors[fc->index[k]];
        int64_t a = begin > fc->starts[k] ? begin - fc->starts[k] : 0;
        int64_t b = (end < fc->starts[k + 1] ? end : fc->starts[k + 1]) - fc->starts[k];
        if (b <= a) {
            continue;
        }
        CtTensorObject *ops[5];
        int nops = step_operands(fc->p, t, ops);
        char *data[5];
        int64_t strides[5];
        size_t isz = ct_dtype_info[t->param->dtype].itemsize;
        for (int o = 0; o < nops; o++) {
            data[o] = ct_data(ops[o]) + (size_t)a * isz;
            strides[o] = (int64_t)isz;
        }
        StepCtx sc = {fc->p, t->fresh_buffer, t->step_size, t->bias_corr2_sqrt};
        step_loop(fc->p->kind, t->param->dtype, true)(data, strides, b - a, &sc);
    }
}

static int cpu_step(const CtOptimParams *p, int64_t n, const CtOptimTensor *tensors)
{
    int64_t *index = PyMem_RawMalloc(sizeof(int64_t) * (size_t)(2 * n + 2));
    if (index == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int64_t *starts = index + n + 1;
    int64_t ndense = 0, total = 0;
    for (int64_t i = 0; i < n; i++) {
        const CtOptimTensor *t = &tensors[i];
        CtTensorObject *ops[5];
        int nops = step_operands(p, t, ops);
        bool dense = true;
        for (int o = 0; o < nops && dense; o++) {
            dense = ct_is_contiguous(ops[o]);
        }
        if (dense) {
            index[ndense] = i;
            starts[ndense] = total;
            total += ct_numel(t->param);
            ndense++;
            continue;
        }
        /* any other layout: an iterator over this tensor's operands */
        CtIter it;
        if (ct_iter_init(&it, nops, ops) < 0) {
            PyMem_RawFree(index);
            return -1;
        }
        StepCtx sc = {p, t->fresh_buffer, t->step_size, t->bias_corr2_sqrt};
        ct_iter_cpu_run(&it, step_loop(p->kind, t->param->dtype, false), &sc);
    }
    starts[ndense] = total;
    if (ndense > 0 && total > 0) {
        FlatCtx fc = {p, tensors, index, starts, ndense};
        ct_parallel_for(total, 32768, flat_range, &fc);
    }
    PyMem_RawFree(index);
    return 0;
}

const struct CtOptimKernels ct_cpu_optim_kernels = {
    .step = cpu_step,
    .total_norm = ct_cpu_total_norm, /* clip.c */
    .scale_by_norm = ct_cpu_scale_by_norm,
};

/* --- front end ------------------------------------------------------------------------------------------ */
/* A new zero-filled tensor like t (contiguous). */
static CtTensorObject *zeros_like(CtTensorObject *t)
{
    CtTensorObject *z = ct_empty(t->ndim, t->sizes, t->dtype, ct_device_of(t));
    if (z == NULL) {
        return NULL;
    }
    const CtDeviceOps *ops = ct_device_ops(ct_device_of(t));
    size_t nbytes = (size_t)ct_numel(t) * ct_itemsize(t);
    if (ops == NULL || (nbytes > 0 && ops->memset(ct_data(z), 0, nbytes, ct_device_of(t)) < 0)) {
        Py_DECREF(z);
        return NULL;
    }
    return z;
}

/* The list argument `name` as a list of length n (borrowed), TypeError otherwise. */
static int check_list(PyObject *obj, const char *fname, const char *name, Py_ssize_t n)
{
    if (!PyList_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): '%s' must be a list, not %s", fname, name, Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (n >= 0 && PyList_GET_SIZE(obj) != n) {
        PyErr_Format(PyExc_ValueError, "%s(): '%s' has %zd entries, expected %zd", fname, name, PyList_GET_SIZE(obj),
                     n);
        return -1;
    }
    return 0;
}

/* Element i of a state list: the tensor, or (create) a new zero tensor like param stored into the
 * list. Returns a borrowed reference, or NULL with an exception. */
static CtTensorObject *state_entry(PyObject *list, Py_ssize_t i, CtTensorObject *param, const char *fname,
                                   const char *name, bool *created)
{
    PyObject *e = PyList_GET_ITEM(list, i);
    if (created) {
        *created = false;
    }
    if (e == Py_None) {
        CtTensorObject *z = zeros_like(param);
        if (z == NULL || PyList_SetItem(list, i, (PyObject *)z) < 0) {
            return NULL;
        }
        if (created) {
            *created = true;
        }
        return z;
    }
    if (!CtTensor_Check(e)) {
        PyErr_Format(PyExc_TypeError, "%s(): %s[%zd] must be a Tensor or None, not %s", fname, name, i,
                     Py_TYPE(e)->tp_name);
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(e);
    if (t->dtype != param->dtype || t->ndim != param->ndim ||
        memcmp(t->sizes, param->sizes, sizeof(int64_t) * t->ndim) != 0 ||
        !ct_device_equal(ct_device_of(t), ct_device_of(param))) {
        PyErr_Format(PyExc_RuntimeError, "%s(): %s[%zd] must have the dtype, shape and device of its parameter", fname,
                     name, i);
        return NULL;
    }
    return t;
}

/* Increments the 0-d step tensor of entry i (creating tensor(0.) when None) and returns the new
 * step count, or -1 with an exception set. */
static double bump_step(PyObject *steps, Py_ssize_t i, const char *fname)
{
    PyObject *e = PyList_GET_ITEM(steps, i);
    CtScalar s = {.kind = CT_KIND_FLOAT, .v.d = 0.0};
    CtTensorObject *t;
    if (e == Py_None) {
        t = ct_scalar_tensor(&s, CT_F32, ct_cpu());
        if (t == NULL || PyList_SetItem(steps, i, (PyObject *)t) < 0) {
            return -1;
        }
    } else if (CtTensor_Check(e) && ct_numel(CT_TENSOR(e)) == 1) {
        t = CT_TENSOR(e);
        if (ct_item(t, &s) < 0) {
            return -1;
        }
    } else {
        PyErr_Format(PyExc_TypeError, "%s(): state_steps[%zd] must be a one-element Tensor or None", fname, i);
        return -1;
    }
    s.kind = CT_KIND_FLOAT;
    s.v.d = ct_scalar_to_double(&s) + 1.0;
    if (ct_fill_(t, &s) < 0) {
        return -1;
    }
    ct_bump_version(t);
    return s.v.d;
}

/* Checks params[i] / grads[i] and fills tensors[i].param/grad. */
static int param_and_grad(PyObject *params, PyObject *grads, Py_ssize_t i, const char *fname, CtOptimTensor *t)
{
    PyObject *p = PyList_GET_ITEM(params, i), *g = PyList_GET_ITEM(grads, i);
    if (!CtTensor_Check(p) || !CtTensor_Check(g)) {
        PyErr_Format(PyExc_TypeError, "%s(): params[%zd] and grads[%zd] must be Tensors", fname, i, i);
        return -1;
    }
    CtTensorObject *pt = CT_TENSOR(p), *gt = CT_TENSOR(g);
    if (!ct_is_floating(pt->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "%s(): parameters must be floating point, got %s", fname,
                     ct_dtype_info[pt->dtype].name);
        return -1;
    }
    if (gt->dtype != pt->dtype || gt->ndim != pt->ndim || memcmp(gt->sizes, pt->sizes, sizeof(int64_t) * pt->ndim) != 0) {
        PyErr_Format(PyExc_RuntimeError, "%s(): the gradient of params[%zd] must have its dtype and shape", fname, i);
        return -1;
    }
    CtTensorObject *pair[2] = {pt, gt};
    CtDevice dev;
    if (ct_check_same_device(2, pair, false, &dev) < 0) {
        return -1;
    }
    memset(t, 0, sizeof(*t));
    t->param = pt;
    t->grad = gt;
    return 0;
}

/* Runs the kernels over tensors[0, n), one call per run of tensors on the same device, then bumps
 * the versions of everything written. */
static int run_steps(const CtOptimParams *p, Py_ssize_t n, CtOptimTensor *tensors)
{
    Py_ssize_t begin = 0;
    while (begin < n) {
        CtDevice dev = ct_device_of(tensors[begin].param);
        Py_ssize_t end = begin + 1;
        while (end < n && ct_device_equal(ct_device_of(tensors[end].param), dev)) {
            end++;
        }
        const CtDeviceOps *ops = ct_device_ops(dev);
        if (ops == NULL) {
            return -1;
        }
        if (ops->optim == NULL) {
            PyErr_Format(PyExc_NotImplementedError, "ctorch: optimizer kernels are not available on %s", ops->name);
            return -1;
        }
        if (ops->optim->step(p, end - begin, tensors + begin) < 0) {
            return -1;
        }
        begin = end;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        ct_bump_version(tensors[i].param);
        for (int s = 0; s < 3; s++) {
            if (tensors[i].state[s] != NULL) {
                ct_bump_version(tensors[i].state[s]);
            }
        }
    }
    return 0;
}

PyDoc_STRVAR(sgd_step_doc,
             "_sgd_step(params, grads, momentum_buffers, lr, momentum, dampening, weight_decay, nesterov, maximize)\n\n"
             "One SGD step over a parameter group. momentum_buffers is a list updated in place: None entries "
             "get a new buffer (the gradient) when momentum != 0.");
static PyObject *py_sgd_step(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"params", "grads", "momentum_buffers", "lr", "momentum", "dampening",
                                        "weight_decay", "nesterov", "maximize", NULL};
    const char *fname = "_sgd_step";
    PyObject *a[9];
    CtOptimParams p = {.kind = CT_OPTIM_SGD};
    if (ct_parse_args(fname, args, nargs, kwnames, names, 4, a) < 0 || ct_arg_double(a[3], &p.lr) < 0 ||
        ct_arg_double(a[4], &p.momentum) < 0 || ct_arg_double(a[5], &p.dampening) < 0 ||
        ct_arg_double(a[6], &p.weight_decay) < 0 || ct_arg_bool(a[7], &p.nesterov) < 0 ||
        ct_arg_bool(a[8], &p.maximize) < 0 || check_list(a[0], fname, "params", -1) < 0) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(a[0]);
    if (check_list(a[1], fname, "grads", n) < 0 || check_list(a[2], fname, "momentum_buffers", n) < 0) {
        return NULL;
    }
    CtOptimTensor *ts = PyMem_Calloc((size_t)n + 1, sizeof(CtOptimTensor));
    if (ts == NULL) {
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (param_and_grad(a[0], a[1], i, fname, &ts[i]) < 0) {
            goto error;
        }
        if (p.momentum != 0 &&
            (ts[i].state[0] = state_entry(a[2], i, ts[i].param, fname, "momentum_buffers", &ts[i].fresh_buffer)) ==
                NULL) {
            goto error;
        }
    }
    if (run_steps(&p, n, ts) < 0) {
        goto error;
    }
    PyMem_Free(ts);
    Py_RETURN_NONE;
error:
    PyMem_Free(ts);
    return NULL;
}

PyDoc_STRVAR(adam_step_doc,
             "_adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, "
             "weight_decay, eps, amsgrad, maximize, decoupled_weight_decay)\n\n"
             "One Adam (AdamW when decoupled_weight_decay) step over a parameter group. The state lists are "
             "updated in place (None entries become zero tensors; steps become 0-d float32 tensors).");
static PyObject *py_adam_step(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"params", "grads", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs",
                                        "state_steps", "lr", "beta1", "beta2", "weight_decay", "eps", "amsgrad",
                                        "maximize", "decoupled_weight_decay", NULL};
    const char *fname = "_adam_step";
    PyObject *a[14];
    CtOptimParams p = {.kind = CT_OPTIM_ADAM, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
    if (ct_parse_args(fname, args, nargs, kwnames, names, 7, a) < 0 || ct_arg_double(a[6], &p.lr) < 0 ||
        ct_arg_double(a[7], &p.beta1) < 0 || ct_arg_double(a[8], &p.beta2) < 0 ||
        ct_arg_double(a[9], &p.weight_decay) < 0 || ct_arg_double(a[10], &p.eps) < 0 ||
        ct_arg_bool(a[11], &p.amsgrad) < 0 || ct_arg_bool(a[12], &p.maximize) < 0 ||
        ct_arg_bool(a[13], &p.decoupled_weight_decay) < 0 || check_list(a[0], fname, "params", -1) < 0) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(a[0]);
    if (check_list(a[1], fname, "grads", n) < 0 || check_list(a[2], fname, "exp_avgs", n) < 0 ||
        check_list(a[3], fname, "exp_avg_sqs", n) < 0 || check_list(a[4], fname, "max_exp_avg_sqs", n) < 0 ||
        check_list(a[5], fname, "state_steps", n) < 0) {
        return NULL;
    }
    CtOptimTensor *ts = PyMem_Calloc((size_t)n + 1, sizeof(CtOptimTensor));
    if (ts == NULL) {
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (param_and_grad(a[0], a[1], i, fname, &ts[i]) < 0 ||
            (ts[i].state[0] = state_entry(a[2], i, ts[i].param, fname, "exp_avgs", NULL)) == NULL ||
            (ts[i].state[1] = state_entry(a[3], i, ts[i].param, fname, "exp_avg_sqs", NULL)) == NULL) {
            goto error;
        }
        if (p.amsgrad &&
            (ts[i].state[2] = state_entry(a[4], i, ts[i].param, fname, "max_exp_avg_sqs", NULL)) == NULL) {
            goto error;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        double step = bump_step(a[5], i, fname);
        if (step < 0) {
            goto error;
        }
        /* bias corrections in double, as PyTorch computes them on Python floats */
        ts[i].step_size = p.lr / (1.0 - pow(p.beta1, step));
        ts[i].bias_corr2_sqrt = sqrt(1.0 - pow(p.beta2, step));
    }
    if (run_steps(&p, n, ts) < 0) {
        goto error;
    }
    PyMem_Free(ts);
    Py_RETURN_NONE;
error:
    PyMem_Free(ts);
    return NULL;
}

PyDoc_STRVAR(rmsprop_step_doc,
             "_rmsprop_step(params, grads, square_avgs, grad_avgs, momentum_buffers, state_steps, lr, alpha, eps, "
             "weight_decay, momentum, centered, maximize)\n\nOne RMSprop step over a parameter group (state lists "
             "updated in place as for _adam_step).");
static PyObject *py_rmsprop_step(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"params", "grads", "square_avgs", "grad_avgs", "momentum_buffers",
                                        "state_steps", "lr", "alpha", "eps", "weight_decay", "momentum", "centered",
                                        "maximize", NULL};
    const char *fname = "_rmsprop_step";
    PyObject *a[13];
    CtOptimParams p = {.kind = CT_OPTIM_RMSPROP, .alpha = 0.99, .eps = 1e-8};
    if (ct_parse_args(fname, args, nargs, kwnames, names, 7, a) < 0 || ct_arg_double(a[6], &p.lr) < 0 ||
        ct_arg_double(a[7], &p.alpha) < 0 || ct_arg_double(a[8], &p.eps) < 0 ||
        ct_arg_double(a[9], &p.weight_decay) < 0 || ct_arg_double(a[10], &p.momentum) < 0 ||
        ct_arg_bool(a[11], &p.centered) < 0 || ct_arg_bool(a[12], &p.maximize) < 0 ||
        check_list(a[0], fname, "params", -1) < 0) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(a[0]);
    if (check_list(a[1], fname, "grads", n) < 0 || check_list(a[2], fname, "square_avgs", n) < 0 ||
        check_list(a[3], fname, "grad_avgs", n) < 0 || check_list(a[4], fname, "momentum_buffers", n) < 0 ||
        check_list(a[5], fname, "state_steps", n) < 0) {
        return NULL;
    }
    CtOptimTensor *ts = PyMem_Calloc((size_t)n + 1, sizeof(CtOptimTensor));
    if (ts == NULL) {
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (param_and_grad(a[0], a[1], i, fname, &ts[i]) < 0 ||
            (ts[i].state[0] = state_entry(a[2], i, ts[i].param, fname, "square_avgs", NULL)) == NULL) {
            goto error;
        }
        if (p.centered && (ts[i].state[1] = state_entry(a[3], i, ts[i].param, fname, "grad_avgs", NULL)) == NULL) {
            goto error;
        }
        if (p.momentum > 0 &&
            (ts[i].state[2] = state_entry(a[4], i, ts[i].param, fname, "momentum_buffers", NULL)) == NULL) {
            goto error;
        }
        if (bump_step(a[5], i, fname) < 0) {
            goto error;
        }
    }
    if (run_steps(&p, n, ts) < 0) {
        goto error;
    }
    PyMem_Free(ts);
    Py_RETURN_NONE;
error:
    PyMem_Free(ts);
    return NULL;
}

PyMethodDef ct_optim_module_methods[] = {
    {"_sgd_step", CT_FASTCALL(py_sgd_step), CT_METH_FK, sgd_step_doc},
    {"_adam_step", CT_FASTCALL(py_adam_step), CT_METH_FK, adam_step_doc},
    {"_rmsprop_step", CT_FASTCALL(py_rmsprop_step), CT_METH_FK, rmsprop_step_doc},
    {NULL},
};
PyMethodDef ct_optim_tensor_methods[] = {{NULL}};
PyType_Slot ct_optim_tensor_slots[] = {{0, NULL}};
