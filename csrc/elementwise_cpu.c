/* elementwise_cpu.c: the CPU implementation of CtElementwiseKernels.
 *
 * Kernels sit in a table [op][kernel dtype] stamped out from the op table CT_EW_OP_LIST
 * (elementwise_kernels.h, which the CUDA kernels expand too) by one macro per kernel kind; each
 * calls the op's scalar function from scalar_math.h. The kernel dtypes are the acc types: bool, the
 * five integers, float and double; float16/bfloat16 run the float kernel. Each inner loop has a
 * contiguous case written as a plain loop over restrict pointers (and, for binary ops, the cases
 * with one operand broadcast from a single value) so that the compiler vectorises it, then a
 * strided case.
 *
 * When an operand's dtype is not the kernel's natural one (float16 data, in-place ops into a
 * narrower dtype, mixed inputs), casting_loop converts chunks of it into a stack buffer with the
 * cast loops of copy.c and runs the same kernel on the buffers: no temporary tensors. */
#include "copy.h"
#include "elementwise.h"
#include "scalar_math.h"
#include "tensor.h"

/* Kernel context: the op's scalar arguments and the integer-division-by-zero flag. */
typedef struct {
    const CtOpParams *params;
    int zero_division;
} CpuCtx;

/* --- inner-loop shapes ------------------------------------------------------------------------
 * EXPR computes one output from a (b, c) and may use p (the params, CT_EW_PARAM_<DT>(p, k)). */
#define CT_LOOP1(KNAME, TA, TOUT, EXPR)                                       \
    static void KNAME(char **data, const int64_t *st, int64_t n, void *vctx)  \
    {                                                                         \
        const CtOpParams *p = ((CpuCtx *)vctx)->params;                       \
        const int64_t s0 = st[0], s1 = st[1];                                 \
        (void)p;                                                              \
        if (s0 == sizeof(TOUT) && s1 == sizeof(TA)) {                         \
            TOUT *restrict o = (TOUT *)data[0];                               \
            const TA *restrict x = (const TA *)data[1];                       \
            for (int64_t i = 0; i < n; i++) {                                 \
                TA a = x[i];                                                  \
                o[i] = EXPR;                                                  \
            }                                                                 \
            return;                                                           \
        }                                                                     \
        char *o = data[0];                                                    \
        const char *x = data[1];                                              \
        for (int64_t i = 0; i < n; i++) {                                     \
            TA a = *(const TA *)(x + i * s1);                                 \
            *(TOUT *)(o + i * s0) = EXPR;                                     \
        }                                                                     \
    }

#define CT_LOOP2(KNAME, TA, TOUT, EXPR)                                       \
    static void KNAME(char **data, const int64_t *st, int64_t n, void *vctx)  \
    {                                                                         \
        const CtOpParams *p = ((CpuCtx *)vctx)->params;                       \
        const int64_t s0 = st[0], s1 = st[1], s2 = st[2];                     \
        (void)p;                                                              \
        if (s0 == sizeof(TOUT)) {                                             \
            TOUT *restrict o = (TOUT *)data[0];                               \
            if (s1 == sizeof(TA) && s2 == sizeof(TA)) {                       \
                const TA *restrict x = (const TA *)data[1];                   \
                const TA *restrict y = (const TA *)data[2];                   \
                for (int64_t i = 0; i < n; i++) {                             \
                    TA a = x[i], b = y[i];                                    \
                    o[i] = EXPR;                                              \
                }                                                             \
                return;                                                       \
            }                                                                 \
            if (s1 == sizeof(TA) && s2 == 0) {                                \
                const TA *restrict x = (const TA *)data[1];                   \
                const TA b = *(const TA *)data[2];                            \
                for (int64_t i = 0; i < n; i++) {                             \
                    TA a = x[i];                                              \
                    o[i] = EXPR;                                              \
                }                                                             \
                return;                                                       \
            }                                                                 \
            if (s1 == 0 && s2 == sizeof(TA)) {                                \
                const TA a = *(const TA *)data[1];                            \
                const TA *restrict y = (const TA *)data[2];                   \
                for (int64_t i = 0; i < n; i++) {                             \
                    TA b = y[i];                                              \
                    o[i] = EXPR;                                              \
                }                                                             \
                return;                                                       \
            }                                                                 \
        }                                                                     \
        char *o = data[0];                                                    \
        const char *x = data[1], *y = data[2];                                \
        for (int64_t i = 0; i < n; i++) {                                     \
            TA a = *(const TA *)(x + i * s1);                                 \
            TA b = *(const TA *)(y + i * s2);                                 \
            *(TOUT *)(o + i * s0) = EXPR;                                     \
        }                                                                     \
    }

/* Integer division family: strided only (integer division does not vectorise), and flags a
 * zero divisor for the front end to raise. */
#define CT_LOOP2_ZERO(KNAME, TA, EXPR)                                        \
    static void KNAME(char **data, const int64_t *st, int64_t n, void *vctx)  \
    {                                                                         \
        char *o = data[0];                                                    \
        const char *x = data[1], *y = data[2];                                \
        const int64_t s0 = st[0], s1 = st[1], s2 = st[2];                     \
        int zero = 0;                                                         \
        for (int64_t i = 0; i < n; i++) {                                     \
            TA a = *(const TA *)(x + i * s1);                                 \
            TA b = *(const TA *)(y + i * s2);                                 \
            zero |= b == 0;                                                   \
            *(TA *)(o + i * s0) = EXPR;                                       \
        }                                                                     \
        if (zero) {                                                           \
            __atomic_store_n(&((CpuCtx *)vctx)->zero_division, 1, __ATOMIC_RELAXED); \
        }                                                                     \
    }

/* Ternary: all contiguous, or contiguous with c (or b and c) broadcast from one value (lerp's
 * scalar weight, clamp's scalar bounds), else strided. */
#define CT_LOOP3(KNAME, TA, TB, TOUT, EXPR)                                   \
    static void KNAME(char **data, const int64_t *st, int64_t n, void *vctx)  \
    {                                                                         \
        const CtOpParams *p = ((CpuCtx *)vctx)->params;                       \
        const int64_t s0 = st[0], s1 = st[1], s2 = st[2], s3 = st[3];         \
        (void)p;                                                              \
        if (s0 == sizeof(TOUT) && s1 == sizeof(TA)) {                         \
            TOUT *restrict o = (TOUT *)data[0];                               \
            const TA *restrict x = (const TA *)data[1];                       \
            if (s2 == sizeof(TB) && s3 == sizeof(TB)) {                       \
                const TB *restrict y = (const TB *)data[2];                   \
                const TB *restrict z = (const TB *)data[3];                   \
                for (int64_t i = 0; i < n; i++) {                             \
                    TA a = x[i];                                              \
                    TB b = y[i], c = z[i];                                    \
                    o[i] = EXPR;                                              \
                }                                                             \
                return;                                                       \
            }                                                                 \
            if (s2 == sizeof(TB) && s3 == 0) {                                \
                const TB *restrict y = (const TB *)data[2];                   \
                const TB c = *(const TB *)data[3];                            \
                for (int64_t i = 0; i < n; i++) {                             \
                    TA a = x[i];                                              \
                    TB b = y[i];                                              \
                    o[i] = EXPR;                                              \
                }                                                             \
                return;                                                       \
            }                                                                 \
            if (s2 == 0 && s3 == 0) {                                         \
                const TB b = *(const TB *)data[2];                            \
                const TB c = *(const TB *)data[3];                            \
                for (int64_t i = 0; i < n; i++) {                             \
                    TA a = x[i];                                              \
                    o[i] = EXPR;                                              \
                }                                                             \
                return;                                                       \
            }                                                                 \
        }                                                                     \
        char *o = data[0];                                                    \
        const char *x = data[1], *y = data[2], *z = data[3];                  \
        for (int64_t i = 0; i < n; i++) {                                     \
            TA a = *(const TA *)(x + i * s1);                                 \
            TB b = *(const TB *)(y + i * s2);                                 \
            TB c = *(const TB *)(z + i * s3);                                 \
            *(TOUT *)(o + i * s0) = EXPR;                                     \
        }                                                                     \
    }

/* --- the kernel table ---------------------------------------------------------------------------
 * One inner loop k_<OP>_<DT> per op and kernel dtype of its domain, stamped from CT_EW_OP_LIST
 * (elementwise_kernels.h) by the macro of the op's kind: K_<kind>(DT, type, class, OP, fn). */
#define CT_PARAM(DT, k) CT_EW_PARAM_##DT(p, k)
#define K_U(DT, T, CLS, OP, fn) CT_LOOP1(k_##OP##_##DT, T, T, ct_sm_##fn##_##T(a))
#define K_UB(DT, T, CLS, OP, fn) CT_LOOP1(k_##OP##_##DT, T, bool, ct_sm_##fn##_##T(a))
#define K_UP(DT, T, CLS, OP, fn) CT_LOOP1(k_##OP##_##DT, T, T, ct_sm_##fn##_##T(a, CT_PARAM(DT, 0)))
#define K_UP2(DT, T, CLS, OP, fn) \
    CT_LOOP1(k_##OP##_##DT, T, T, ct_sm_##fn##_##T(a, CT_PARAM(DT, 0), CT_PARAM(DT, 1)))
#define K_UP3(DT, T, CLS, OP, fn) \
    CT_LOOP1(k_##OP##_##DT, T, T, ct_sm_##fn##_##T(a, CT_PARAM(DT, 0), CT_PARAM(DT, 1), CT_PARAM(DT, 2)))
#define K_B(DT, T, CLS, OP, fn) CT_LOOP2(k_##OP##_##DT, T, T, ct_sm_##fn##_##T(a, b))
#define K_BB(DT, T, CLS, OP, fn) CT_LOOP2(k_##OP##_##DT, T, bool, ct_sm_##fn##_##T(a, b))
#define K_BP(DT, T, CLS, OP, fn) CT_LOOP2(k_##OP##_##DT, T, T, ct_sm_##fn##_##T(a, b, CT_PARAM(DT, 0)))
/* integer division checks for zero divisors; float division is plain B */
#define K_BZ(DT, T, CLS, OP, fn) K_BZ_##CLS(DT, T, CLS, OP, fn)
#define K_BZ_FLT K_B
#define K_BZ_INT(DT, T, CLS, OP, fn) CT_LOOP2_ZERO(k_##OP##_##DT, T, ct_sm_##fn##_##T(a, b))
#define K_T(DT, T, CLS, OP, fn) CT_LOOP3(k_##OP##_##DT, T, T, T, ct_sm_##fn##_##T(a, b, c))
#define K_TP(DT, T, CLS, OP, fn) CT_LOOP3(k_##OP##_##DT, T, T, T, ct_sm_##fn##_##T(a, b, c, CT_PARAM(DT, 0)))
#define K_TP3(DT, T, CLS, OP, fn) \
    CT_LOOP3(k_##OP##_##DT, T, T, T, ct_sm_##fn##_##T(a, b, c, CT_PARAM(DT, 0), CT_PARAM(DT, 1), CT_PARAM(DT, 2)))
/* the condition is read as bytes: GCC does not vectorise conversions from _Bool */
#define K_W(DT, T, CLS, OP, fn) CT_LOOP3(k_##OP##_##DT, uint8_t, T, T, ct_sm_##fn##_##T(a != 0, b, c))

#define CT_DEFINE_KERNELS(OP, kind, fn, domain, flags, kname) CT_EW_KERNEL_DTYPES_##domain(K_##kind, OP, fn)
CT_EW_OP_LIST(CT_DEFINE_KERNELS)

#define CT_TABLE_ENTRY(DT, T, CLS, OP) [CT_EW_##OP][CT_##DT] = k_##OP##_##DT,
#define CT_TABLE_ROW(OP, kind, fn, domain, flags, kname) CT_EW_KERNEL_DTYPES_##domain(CT_TABLE_ENTRY, OP)
static const CtInnerLoop kernel_table[CT_EW_NUM_OPS][CT_NUM_DTYPES] = {CT_EW_OP_LIST(CT_TABLE_ROW)};

/* --- dtype conversion around the kernels ------------------------------------------------------ */
#define CAST_CHUNK 256

/* One conversion, in one step or two (through the compute dtype, mid). */
typedef struct {
    CtInnerLoop first, second; /* first NULL: none; second NULL: one step */
    int64_t mid_size;
} Conversion;

typedef struct {
    CtInnerLoop kernel;
    CpuCtx *inner;
    int nops;
    Conversion conv[CT_MAX_OPERANDS]; /* inputs: actual -> natural; output: natural -> actual */
    int64_t natural_size[CT_MAX_OPERANDS];
} CastCtx;

static void convert_run(const Conversion *cv, char *dst, int64_t dst_stride, const char *src, int64_t src_stride,
                        int64_t n, char *mid)
{
    if (cv->second == NULL) {
        char *d[2] = {dst, (char *)src};
        int64_t st[2] = {dst_stride, src_stride};
        cv->first(d, st, n, NULL);
        return;
    }
    char *d1[2] = {mid, (char *)src};
    int64_t s1[2] = {cv->mid_size, src_stride};
    cv->first(d1, s1, n, NULL);
    char *d2[2] = {dst, mid};
    int64_t s2[2] = {dst_stride, cv->mid_size};
    cv->second(d2, s2, n, NULL);
}

static void casting_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const CastCtx *c = (const CastCtx *)vctx;
    _Alignas(64) char buf[CT_MAX_OPERANDS][CAST_CHUNK * sizeof(double)];
    _Alignas(64) char mid[CAST_CHUNK * sizeof(double)];
    char *ptr[CT_MAX_OPERANDS];
    int64_t st[CT_MAX_OPERANDS];
    for (int64_t off = 0; off < n; off += CAST_CHUNK) {
        int64_t m = n - off < CAST_CHUNK ? n - off : CAST_CHUNK;
        for (int k = 0; k < c->nops; k++) {
            char *src = data[k] + off * strides[k];
            if (c->conv[k].first == NULL) {
                ptr[k] = src;
                st[k] = strides[k];
            } else if (k == 0) { /* the output: computed into buf[0], converted below */
                ptr[0] = buf[0];
                st[0] = c->natural_size[0];
            } else { /* a broadcast operand is converted once */
                bool single = strides[k] == 0;
                convert_run(&c->conv[k], buf[k], c->natural_size[k], src, strides[k], single ? 1 : m, mid);
                ptr[k] = buf[k];
                st[k] = single ? 0 : c->natural_size[k];
            }
        }
        c->kernel(ptr, st, m, c->inner);
        if (c->conv[0].first != NULL) {
            convert_run(&c->conv[0], data[0] + off * strides[0], strides[0], buf[0], c->natural_size[0], m, mid);
        }
    }
}

/* The dtype whose kernel computes `compute`. */
static CtDType kernel_dtype(CtDType compute)
{
    return (compute == CT_F16 || compute == CT_BF16) ? CT_F32 : compute;
}

/* from -> to, through `via` when the value must be rounded to it on the way (also when from
 * and to are the same: a float32 value of a float16 op is rounded to float16 and back). */
static Conversion conversion(CtDType to, CtDType from, CtDType via)
{
    Conversion cv = {NULL, NULL, 0};
    if (via == to || via == from) {
        cv.first = to == from ? NULL : ct_cpu_cast_loop(to, from);
        return cv;
    }
    cv.first = ct_cpu_cast_loop(via, from);
    cv.second = ct_cpu_cast_loop(to, via);
    cv.mid_size = (int64_t)ct_dtype_info[via].itemsize;
    return cv;
}

static int cpu_run(const CtIter *it, const CtEwCall *call)
{
    const CtEwOpInfo *info = &ct_ew_op_info[call->op];
    CtDType kd = kernel_dtype(call->compute);
    CtInnerLoop kernel = kernel_table[call->op][kd];
    if (kernel == NULL) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", info->kernel_name,
                     ct_scalar_type_name(call->compute));
        return -1;
    }
    if (it->numel == 0) {
        return 0;
    }
    CtDType natural[CT_MAX_OPERANDS];
    natural[0] = (info->flags & CT_EW_OUT_BOOL) ? CT_BOOL : kd;
    for (int k = 1; k < it->nops; k++) {
        natural[k] = kd;
    }
    if (info->flags & CT_EW_COND) {
        natural[1] = CT_BOOL;
    }
    /* Values pass through the compute dtype (float16 data rounds to float16, and so do float32
     * inputs and outputs of a float16 op) unless they are bool (conditions, comparison results)
     * or host scalars (already converted by the front end, unrounded for opmath ops). */
    CtDType via[CT_MAX_OPERANDS];
    bool direct = true;
    for (int k = 0; k < it->nops; k++) {
        via[k] = natural[k] == kd && !(call->host_scalars & (1u << k)) ? call->compute : natural[k];
        direct = direct && it->dtypes[k] == natural[k] && via[k] == natural[k];
    }
    CpuCtx ctx = {&call->params, 0};
    if (direct) {
        ct_iter_cpu_run(it, kernel, &ctx);
    } else {
        CastCtx cc;
        memset(&cc, 0, sizeof(cc));
        cc.kernel = kernel;
        cc.inner = &ctx;
        cc.nops = it->nops;
        for (int k = 0; k < it->nops; k++) {
            cc.natural_size[k] = (int64_t)ct_dtype_info[natural[k]].itemsize;
            cc.conv[k] = k == 0 ? conversion(it->dtypes[0], natural[0], via[0])
                                : conversion(natural[k], it->dtypes[k], via[k]);
        }
        ct_iter_cpu_run(it, casting_loop, &cc);
    }
    if (ctx.zero_division) {
        PyErr_SetString(PyExc_RuntimeError, "ZeroDivisionError");
        return -1;
    }
    return 0;
}

static int cpu_copy(const CtIter *it)
{
    ct_iter_cpu_run(it, ct_cpu_cast_loop(it->dtypes[0], it->dtypes[1]), NULL);
    return 0;
}

const struct CtElementwiseKernels ct_cpu_elementwise_kernels = {
    .copy = cpu_copy,
    .unary = cpu_run,
    .binary = cpu_run,
    .ternary = cpu_run,
};
