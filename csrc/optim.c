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
    double x[3]; /* the kinds after RMSprop */
    bool flag;
} StepCtx;

static StepCtx step_ctx(const CtOptimParams *p, const CtOptimTensor *t)
{
    StepCtx sc = {p, t->fresh_buffer, t->step_size, t->bias_corr2_sqrt, {t->x[0], t->x[1], t->x[2]}, t->flag};
    return sc;
}


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

/* The kinds after RMSprop (CT_OPTIM_EXT_KINDS): operands param, grad, state slot 0, then slot 1 when the
 * kind has two; each loop specialised on the options that kind has (HAS_*: 0 drops the branch). */
#define CT_OPTIM_EXT_LOOPS(KIND, kind, HAS_WD, HAS_DECOUPLED, HAS_FLAG, NSTATES, NAME, SFX)                    \
    CT_INLINE void kind##_body_##NAME(char **data, const int64_t *st, int64_t n, const StepCtx *c, bool use_wd, \
                                      bool decoupled, bool flag)                                              \
    {                                                                                                         \
        const CtOptimConsts##SFX k = ct_optim_consts_##SFX(c->p);                                             \
        typedef __typeof__(k.lr) acc_t;                                                                       \
        const acc_t x[3] = {(acc_t)c->x[0], (acc_t)c->x[1], (acc_t)c->x[2]};                                  \
        char *const d0 = data[0], *const d1 = data[1], *const d2 = data[2];                                   \
        char *const d3 = NSTATES > 1 ? data[3] : NULL;                                                        \
        const int64_t s0 = st[0], s1 = st[1], s2 = st[2], s3 = NSTATES > 1 ? st[3] : 0;                       \
        for (int64_t i = 0; i < n; i++) {                                                                     \
            ct_##kind##_elem_##NAME(d0 + i * s0, d1 + i * s1, d2 + i * s2, NSTATES > 1 ? d3 + i * s3 : NULL, \
                                    &k, x, use_wd, decoupled, flag);                                          \
        }                                                                                                     \
    }                                                                                                         \
    CT_INLINE void kind##_any_##NAME(char **data, const int64_t *st, int64_t n, const StepCtx *c)            \
    {                                                                                                         \
        CT_FLAGS3(kind##_body_##NAME, HAS_WD && c->p->weight_decay != 0,                                      \
                  HAS_DECOUPLED && c->p->decoupled_weight_decay, HAS_FLAG && c->flag, data, st, n, c);        \
    }                                                                                                         \
    static void kind##_loop_##NAME(char **data, const int64_t *st, int64_t n, void *c)                        \
    {                                                                                                         \
        kind##_any_##NAME(data, st, n, (const StepCtx *)c);                                                   \
    }                                                                                                         \
    static void kind##_dense_##NAME(char **data, const int64_t *unused, int64_t n, void *c)                   \
    {                                                                                                         \
        static const int64_t st[4] = {CT_ISZ_##NAME, CT_ISZ_##NAME, CT_ISZ_##NAME, CT_ISZ_##NAME};            \
        kind##_any_##NAME(data, st, n, (const StepCtx *)c);                                                   \
    }

CT_OPTIM_EXT_KINDS(CT_OPTIM_EXT_LOOPS, F16, F)
CT_OPTIM_EXT_KINDS(CT_OPTIM_EXT_LOOPS, BF16, F)
CT_OPTIM_EXT_KINDS(CT_OPTIM_EXT_LOOPS, F32, F)
CT_OPTIM_EXT_KINDS(CT_OPTIM_EXT_LOOPS, F64, D)

/* The inner loop of a kind after RMSprop for dtype (see step_loop). */
static CtInnerLoop ext_step_loop(CtOptimKind kind, CtDType dtype, bool dense)
{
#define CT_OPTIM_EXT_CASE(KIND, kind, HAS_WD, HAS_DECOUPLED, HAS_FLAG, NSTATES, NAME) \
    case CT_OPTIM_##KIND:                                                            \
        return dense ? kind##_dense_##NAME : kind##_loop_##NAME;
#define CT_OPTIM_EXT_DTYPE(NAME)                       \
    case CT_##NAME:                                    \
        switch (kind) {                                \
            CT_OPTIM_EXT_KINDS(CT_OPTIM_EXT_CASE, NAME) \
        default:                                       \
            return NULL;                               \
        }
    switch (dtype) {
        CT_OPTIM_EXT_DTYPE(F16)
        CT_OPTIM_EXT_DTYPE(BF16)
        CT_OPTIM_EXT_DTYPE(F32)
        CT_OPTIM_EXT_DTYPE(F64)
    default:
        return NULL;
    }
#undef CT_OPTIM_EXT_DTYPE
#undef CT_OPTIM_EXT_CASE
}

/* The inner loop of kind for dtype; dense: every operand has unit stride (the strides are ignored). */
static CtInnerLoop step_loop(CtOptimKind kind, CtDType dtype, bool dense)
{
    if (kind > CT_OPTIM_RMSPROP) {
        return ext_step_loop(kind, dtype, dense);
    }
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
        StepCtx sc = step_ctx(fc->p, t);
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
        StepCtx sc = step_ctx(p, t);
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

/* Entry i of a list of one-element scalar states (step, mu_product, eta, mu): the tensor (when None, a
 * new 0-d float32 tensor holding init on device, stored into the list) with its value in *value.
 * Returns a borrowed reference, or NULL with an exception set. */
static CtTensorObject *scalar_entry(PyObject *list, Py_ssize_t i, double init, CtDevice device, const char *fname,
                                    const char *name, double *value)
{
    PyObject *e = PyList_GET_ITEM(list, i);
    CtScalar s = {.kind = CT_KIND_FLOAT, .v.d = init};
    CtTensorObject *t;
    if (e == Py_None) {
        /* PyTorch's _get_scalar_dtype(): float64 under a float64 default dtype, else float32 */
        t = ct_scalar_tensor(&s, ct_default_float_dtype == CT_F64 ? CT_F64 : CT_F32, device);
        if (t == NULL || PyList_SetItem(list, i, (PyObject *)t) < 0) {
            return NULL;
        }
    } else if (CtTensor_Check(e) && ct_numel(CT_TENSOR(e)) == 1) {
        t = CT_TENSOR(e);
    } else {
        PyErr_Format(PyExc_TypeError, "%s(): %s[%zd] must be a one-element Tensor or None", fname, name, i);
        return NULL;
    }
    if (ct_item(t, &s) < 0) {
        return NULL;
    }
    *value = ct_scalar_to_double(&s);
    return t;
}

/* t = value (rounded to t's dtype, the rounded value in *stored when not NULL); bumps t's version. */
static int set_scalar(CtTensorObject *t, double value, double *stored)
{
    CtScalar s = {.kind = CT_KIND_FLOAT, .v.d = value};
    if (ct_fill_(t, &s) < 0 || (stored != NULL && ct_item(t, &s) < 0)) {
        return -1;
    }
    ct_bump_version(t);
    if (stored != NULL) {
        *stored = ct_scalar_to_double(&s);
    }
    return 0;
}

/* Increments the step tensor of entry i (creating tensor(0.) on device when None) and returns the new
 * step count, or -1 with an exception set. */
static double bump_step_on(PyObject *steps, Py_ssize_t i, CtDevice device, const char *fname)
{
    double step;
    CtTensorObject *t = scalar_entry(steps, i, 0.0, device, fname, "state_steps", &step);
    if (t == NULL || set_scalar(t, step + 1.0, NULL) < 0) {
        return -1;
    }
    return step + 1.0;
}

/* The arithmetic on lr, as in PyTorch's optimizers: a Python number computes in double; a one-element
 * tensor stays a tensor, so every scalar computed from it (lr * weight_decay, lr / bias_correction, ...)
 * is a 0-d tensor of its dtype (the default float dtype for an integral one): lr_res rounds each such
 * result to it, lr_opnd casts the Python number it meets to the computing type (float below float64). */
typedef struct {
    CtDType dtype;
    bool tensor; /* lr is a tensor */
} LrMath;

static double lr_res(const LrMath *lm, double x)
{
    return ct_round_to_dtype(lm->dtype, x);
}

static double lr_opnd(const LrMath *lm, double x)
{
    return lm->dtype == CT_F64 ? x : (double)(float)x;
}

/* Reads lr (a number or a one-element tensor) into p->lr and lm, then the decoupled weight decay's
 * factor p->decay = 1 - lr * weight_decay (p->weight_decay already read). */
static int read_lr(PyObject *obj, CtOptimParams *p, LrMath *lm)
{
    lm->dtype = CT_F64;
    lm->tensor = obj != NULL && CtTensor_Check(obj);
    if (lm->tensor) {
        CtDType dt = CT_TENSOR(obj)->dtype;
        lm->dtype = ct_is_floating(dt) ? dt : ct_default_float_dtype;
    }
    if (ct_arg_double(obj, &p->lr) < 0) {
        return -1;
    }
    p->decay = lr_res(lm, 1.0 - lr_res(lm, p->lr * lr_opnd(lm, p->weight_decay)));
    return 0;
}

static double bump_step(PyObject *steps, Py_ssize_t i, const char *fname)
{
    return bump_step_on(steps, i, ct_cpu(), fname);
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
    LrMath lm;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 7, a) < 0 || ct_arg_double(a[7], &p.beta1) < 0 ||
        ct_arg_double(a[8], &p.beta2) < 0 || ct_arg_double(a[9], &p.weight_decay) < 0 ||
        read_lr(a[6], &p, &lm) < 0 || ct_arg_double(a[10], &p.eps) < 0 ||
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
        ts[i].step_size = lr_res(&lm, p.lr / lr_opnd(&lm, 1.0 - pow(p.beta1, step)));
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

/* --- _optim_step: the kinds after RMSprop ----------------------------------------------------------------- */
typedef struct {
    const char *name;
    CtOptimKind kind;
    int nstates, nscalars;
    const char *states[2];  /* the state tensors' names (slots 0 and 1) */
    const char *scalars[2]; /* the 0-d states besides step */
} ExtKindInfo;

static const ExtKindInfo ext_kinds[] = {
    {"adagrad", CT_OPTIM_ADAGRAD, 1, 0, {"sum"}, {NULL}},
    {"adadelta", CT_OPTIM_ADADELTA, 2, 0, {"square_avg", "acc_delta"}, {NULL}},
    {"adamax", CT_OPTIM_ADAMAX, 2, 0, {"exp_avg", "exp_inf"}, {NULL}},
    {"nadam", CT_OPTIM_NADAM, 2, 1, {"exp_avg", "exp_avg_sq"}, {"mu_product"}},
    {"radam", CT_OPTIM_RADAM, 2, 0, {"exp_avg", "exp_avg_sq"}, {NULL}},
    {"rprop", CT_OPTIM_RPROP, 2, 0, {"prev", "step_size"}, {NULL}},
    {"asgd", CT_OPTIM_ASGD, 1, 2, {"ax"}, {"eta", "mu"}},
};

/* The hyper-parameters that only the host uses. */
typedef struct {
    double lr_decay, initial_accumulator_value, momentum_decay, lambd, alpha, t0;
    LrMath lm;
} ExtHost;

/* lists: a list of n lists of length len (TypeError / ValueError otherwise). */
static int check_lists(PyObject *lists, const char *fname, const char *name, int n, Py_ssize_t len)
{
    if (check_list(lists, fname, name, n) < 0) {
        return -1;
    }
    for (int j = 0; j < n; j++) {
        if (check_list(PyList_GET_ITEM(lists, j), fname, name, len) < 0) {
            return -1;
        }
    }
    return 0;
}

/* Fills t->x / t->flag of the kinds that have per-tensor scalars from the new step count; NAdam's
 * mu_product and ASGD's eta and mu are read (created when None) from scalars[i] (one list each). */
static int ext_scalars(const ExtKindInfo *ki, const CtOptimParams *p, const ExtHost *h, PyObject *scalars,
                       Py_ssize_t i, double step, const char *fname, CtOptimTensor *t)
{
    CtDevice dev = ct_device_of(t->param);
    switch (ki->kind) {
    case CT_OPTIM_ADAGRAD:
        t->x[0] = lr_res(&h->lm, p->lr / lr_opnd(&h->lm, 1 + (step - 1) * h->lr_decay));
        break;
    case CT_OPTIM_ADAMAX:
        t->x[0] = lr_res(&h->lm, p->lr / lr_opnd(&h->lm, 1 - pow(p->beta1, step)));
        break;
    case CT_OPTIM_NADAM: {
        double prod;
        CtTensorObject *mp =
            scalar_entry(PyList_GET_ITEM(scalars, 0), i, 1.0, ct_cpu(), fname, ki->scalars[0], &prod);
        const double mu = p->beta1 * (1.0 - 0.5 * pow(0.96, step * h->momentum_decay));
        const double mu_next = p->beta1 * (1.0 - 0.5 * pow(0.96, (step + 1) * h->momentum_decay));
        /* mu_product *= mu, computed in mu_product's dtype (float32 unless loaded from a float64 state) */
        double next = mp != NULL && mp->dtype == CT_F64 ? prod * mu : (double)((float)prod * (float)mu);
        if (mp == NULL || set_scalar(mp, next, &prod) < 0) {
            return -1;
        }
        const double prod_next = prod * mu_next;
        const LrMath *lm = &h->lm;
        t->x[0] = lr_res(lm, lr_res(lm, -p->lr * lr_opnd(lm, 1.0 - mu)) / lr_opnd(lm, 1.0 - prod));
        t->x[1] = lr_res(lm, lr_res(lm, -p->lr * lr_opnd(lm, mu_next)) / lr_opnd(lm, 1.0 - prod_next));
        t->x[2] = 1 - pow(p->beta2, step);
        break;
    }
    case CT_OPTIM_RADAM: {
        const double bc2 = 1 - pow(p->beta2, step);
        const double rho_inf = 2 / (1 - p->beta2) - 1;
        const double rho_t = rho_inf - 2 * step * pow(p->beta2, step) / bc2;
        t->x[0] = 1 - pow(p->beta1, step);
        t->x[1] = pow(bc2, 0.5);
        t->flag = rho_t > 5.0;
        t->x[2] = t->flag ? pow((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t), 0.5)
                          : 0.0;
        break;
    }
    case CT_OPTIM_ASGD: {
        /* this step uses the eta and mu of the previous one */
        if (scalar_entry(PyList_GET_ITEM(scalars, 0), i, p->lr, dev, fname, ki->scalars[0], &t->x[0]) == NULL ||
            scalar_entry(PyList_GET_ITEM(scalars, 1), i, 1.0, dev, fname, ki->scalars[1], &t->x[2]) == NULL) {
            return -1;
        }
        t->x[1] = 1 - h->lambd * t->x[0];
        t->flag = t->x[2] != 1;
        break;
    }
    default:
        break;
    }
    return 0;
}

/* ASGD after the update: eta = lr / (1 + lambd lr step)^alpha, mu = 1 / max(1, step - t0). PyTorch makes
 * each a tensor (torch.as_tensor) before copying it into the state: a Python float becomes one of the
 * default dtype, so both are rounded to it (eta from a tensor lr is already in lr's dtype). */
static int asgd_schedule(const CtOptimParams *p, const ExtHost *h, PyObject *scalars, PyObject *steps, Py_ssize_t n)
{
    const LrMath *lm = &h->lm;
    for (Py_ssize_t i = 0; i < n; i++) {
        CtScalar s;
        if (ct_item(CT_TENSOR(PyList_GET_ITEM(steps, i)), &s) < 0) {
            return -1;
        }
        const double step = ct_scalar_to_double(&s), since = step - h->t0;
        const double base = lr_res(lm, 1 + lr_res(lm, lr_res(lm, lr_opnd(lm, h->lambd) * p->lr) * lr_opnd(lm, step)));
        const double eta = lr_res(lm, p->lr / lr_res(lm, pow(base, lr_opnd(lm, h->alpha))));
        if (set_scalar(CT_TENSOR(PyList_GET_ITEM(PyList_GET_ITEM(scalars, 0), i)),
                       lm->tensor ? eta : ct_round_to_dtype(ct_default_float_dtype, eta), NULL) < 0 ||
            set_scalar(CT_TENSOR(PyList_GET_ITEM(PyList_GET_ITEM(scalars, 1), i)),
                       ct_round_to_dtype(ct_default_float_dtype, 1 / (since > 1 ? since : 1.0)), NULL) < 0) {
            return -1;
        }
    }
    return 0;
}

PyDoc_STRVAR(optim_step_doc,
             "_optim_step(kind, params, grads, states, state_steps, scalar_states, lr, *, weight_decay=0, eps=0, "
             "maximize=False, lr_decay=0, initial_accumulator_value=0, rho=0, beta1=0, beta2=0, momentum_decay=0, "
             "decoupled_weight_decay=False, etaminus=0, etaplus=0, step_size_min=0, step_size_max=0, lambd=0, "
             "alpha=0, t0=0)\n\n"
             "One step of Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop or ASGD (kind 'adagrad', ..., 'asgd') over "
             "a parameter group. states: one list per state tensor of the kind (None entries become new tensors: "
             "zeros, Adagrad's sum initial_accumulator_value, Rprop's step_size lr); scalar_states: one list per "
             "0-d state besides the step (NAdam: mu_product; ASGD: eta, mu). Every list is updated in place.");
static PyObject *py_optim_step(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"kind", "params", "grads", "states", "state_steps", "scalar_states", "lr",
                                        "weight_decay", "eps", "maximize", "lr_decay", "initial_accumulator_value",
                                        "rho", "beta1", "beta2", "momentum_decay", "decoupled_weight_decay",
                                        "etaminus", "etaplus", "step_size_min", "step_size_max", "lambd", "alpha",
                                        "t0", NULL};
    const char *fname = "_optim_step";
    PyObject *a[24];
    CtOptimParams p = {.kind = CT_OPTIM_ADAGRAD};
    ExtHost h = {0};
    if (ct_parse_args(fname, args, nargs, kwnames, names, 7, a) < 0 || ct_arg_double(a[7], &p.weight_decay) < 0 ||
        read_lr(a[6], &p, &h.lm) < 0 || ct_arg_double(a[8], &p.eps) < 0 || ct_arg_bool(a[9], &p.maximize) < 0 ||
        ct_arg_double(a[10], &h.lr_decay) < 0 ||
        ct_arg_double(a[11], &h.initial_accumulator_value) < 0 || ct_arg_double(a[12], &p.rho) < 0 ||
        ct_arg_double(a[13], &p.beta1) < 0 || ct_arg_double(a[14], &p.beta2) < 0 ||
        ct_arg_double(a[15], &h.momentum_decay) < 0 || ct_arg_bool(a[16], &p.decoupled_weight_decay) < 0 ||
        ct_arg_double(a[17], &p.etaminus) < 0 || ct_arg_double(a[18], &p.etaplus) < 0 ||
        ct_arg_double(a[19], &p.step_size_min) < 0 || ct_arg_double(a[20], &p.step_size_max) < 0 ||
        ct_arg_double(a[21], &h.lambd) < 0 || ct_arg_double(a[22], &h.alpha) < 0 || ct_arg_double(a[23], &h.t0) < 0) {
        return NULL;
    }
    const ExtKindInfo *ki = NULL;
    const char *kname = PyUnicode_Check(a[0]) ? PyUnicode_AsUTF8(a[0]) : NULL;
    for (size_t k = 0; kname != NULL && k < sizeof(ext_kinds) / sizeof(ext_kinds[0]); k++) {
        if (strcmp(kname, ext_kinds[k].name) == 0) {
            ki = &ext_kinds[k];
        }
    }
    if (ki == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "%s(): unknown optimizer kind %R", fname, a[0]);
        }
        return NULL;
    }
    p.kind = ki->kind;
    if (check_list(a[1], fname, "params", -1) < 0) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(a[1]);
    if (check_list(a[2], fname, "grads", n) < 0 || check_lists(a[3], fname, "states", ki->nstates, n) < 0 ||
        check_list(a[4], fname, "state_steps", n) < 0 ||
        check_lists(a[5], fname, "scalar_states", ki->nscalars, n) < 0) {
        return NULL;
    }
    CtOptimTensor *ts = PyMem_Calloc((size_t)n + 1, sizeof(CtOptimTensor));
    if (ts == NULL) {
        return PyErr_NoMemory();
    }
    /* the value a new state tensor of slot j starts from */
    const double init[2] = {ki->kind == CT_OPTIM_ADAGRAD ? h.initial_accumulator_value : 0.0,
                            ki->kind == CT_OPTIM_RPROP ? p.lr : 0.0};
    for (Py_ssize_t i = 0; i < n; i++) {
        if (param_and_grad(a[1], a[2], i, fname, &ts[i]) < 0) {
            goto error;
        }
        for (int j = 0; j < ki->nstates; j++) {
            bool created;
            CtScalar fill = {.kind = CT_KIND_FLOAT, .v.d = init[j]};
            ts[i].state[j] = state_entry(PyList_GET_ITEM(a[3], j), i, ts[i].param, fname, ki->states[j], &created);
            if (ts[i].state[j] == NULL || (created && init[j] != 0 && ct_fill_(ts[i].state[j], &fill) < 0)) {
                goto error;
            }
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        /* ASGD keeps its scalars on the parameter's device, the others on the CPU (as PyTorch) */
        CtDevice dev = ki->kind == CT_OPTIM_ASGD ? ct_device_of(ts[i].param) : ct_cpu();
        double step = bump_step_on(a[4], i, dev, fname);
        if (step < 0 || ext_scalars(ki, &p, &h, a[5], i, step, fname, &ts[i]) < 0) {
            goto error;
        }
    }
    if (run_steps(&p, n, ts) < 0 || (ki->kind == CT_OPTIM_ASGD && asgd_schedule(&p, &h, a[5], a[4], n) < 0)) {
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
    {"_optim_step", CT_FASTCALL(py_optim_step), CT_METH_FK, optim_step_doc},
    {NULL},
};
PyMethodDef ct_optim_tensor_methods[] = {{NULL}};
PyType_Slot ct_optim_tensor_slots[] = {{0, NULL}};
