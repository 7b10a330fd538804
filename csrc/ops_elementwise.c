/* ops_elementwise.c: the elementwise op family, device-neutral part.
 *
 * ct_elementwise() is the engine every op goes through: PyTorch's type promotion (dimensioned
 * tensors > 0-d tensors > Python numbers), broadcasting, output allocation or in-place checks,
 * then one call into the device's CtElementwiseKernels with a CtIter whose operand 0 is the
 * output. Python numbers and 0-d CPU tensors become host scalars (a value with all strides 0),
 * so `t + 2` allocates nothing but its output. The rest of the file is the Python surface:
 * module functions, Tensor methods (with in-place `_` variants) and the number/compare slots. */
#include "elementwise.h"
#include "args.h"
#include "autograd_arena.h"
#include "copy.h"
#include "creation.h"
#include "device.h"
#include "dtype.h"
#include "numpy_api.h"
#include "reduce.h"
#include "registry.h"
#include "tensor.h"
#include <float.h>
#include <math.h>
#include <string.h>
#if defined(__GLIBC__)
#include <dlfcn.h>
#include <execinfo.h>
#define CT_HAVE_BACKTRACE 1
#endif

const CtEwOpInfo ct_ew_op_info[CT_EW_NUM_OPS] = {CT_EW_OP_LIST(CT_EW_OP_INFO)};

/* --- dtype names, casting, promotion ---------------------------------------------------------- */

bool ct_can_cast(CtDType from, CtDType to)
{
    if (ct_is_floating(from) && !ct_is_floating(to)) {
        return false;
    }
    return from == CT_BOOL || to != CT_BOOL;
}

/* -1 stands for "no operand of this category yet". */
static int promote_opt(int a, CtDType b) { return a < 0 ? (int)b : (int)ct_promote_types((CtDType)a, b); }

static int combine_categories(int higher, int lower)
{
    if (higher < 0) {
        return lower;
    }
    if (ct_is_floating((CtDType)higher)) {
        return higher;
    }
    if (higher == CT_BOOL || (lower >= 0 && ct_is_floating((CtDType)lower))) {
        return promote_opt(lower, (CtDType)higher);
    }
    return higher;
}

CtDType ct_result_type(int n, const CtEwArg *args)
{
    int dim = -1, zero = -1, wrapped = -1;
    for (int k = 0; k < n; k++) {
        const CtTensorObject *t = args[k].t;
        if (t == NULL) {
            wrapped = promote_opt(wrapped, ct_scalar_dtype(&args[k].s));
        } else if (t->ndim == 0) {
            zero = promote_opt(zero, t->dtype);
        } else {
            dim = promote_opt(dim, t->dtype);
        }
    }
    int r = combine_categories(dim, combine_categories(zero, wrapped));
    return r < 0 ? ct_default_float_dtype : (CtDType)r;
}

/* The dtype a kernel computes `compute` in (float for float16/bfloat16). */
static CtDType acc_dtype(CtDType d) { return (d == CT_F16 || d == CT_BF16) ? CT_F32 : d; }

/* The dtype a Python number is held in before conversion. */
static CtDType scalar_storage_dtype(const CtScalar *s)
{
    return s->kind == CT_KIND_BOOL ? CT_BOOL : s->kind == CT_KIND_INT ? CT_I64 : CT_F64;
}

/* Converts one element at src (host memory) from one dtype to another into dst. */
static void convert_one(void *dst, CtDType to, const void *src, CtDType from)
{
    char *d[2] = {(char *)dst, (char *)src};
    int64_t st[2] = {0, 0};
    ct_cpu_cast_loop(to, from)(d, st, 1, NULL);
}

/* The kernel name PyTorch prints in "\"abs_cpu\" not implemented for 'Bool'" on device: its
 * CUDA kernels are named abs_cuda, floor_cuda (floor_vml_cpu), addcmul_cuda (addcmul_cpu_out),
 * lerp_cuda (lerp_kernel_tensor), GeluCUDAKernelImpl. */
static const char *device_kernel_name(const char *cpu_name, CtDevice device, char *buf, size_t n)
{
    if (device.type != CT_DEV_CUDA) {
        return cpu_name;
    }
    static const char *const suffixes[] = {"_vml_cpu", "_cpu_out", "_cpu"};
    size_t len = strlen(cpu_name);
    if (strcmp(cpu_name, "GeluKernelImpl") == 0) {
        return "GeluCUDAKernelImpl";
    }
    if (strncmp(cpu_name, "lerp_kernel", 11) == 0) {
        return "lerp_cuda";
    }
    for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
        size_t sl = strlen(suffixes[k]);
        if (len > sl && strcmp(cpu_name + len - sl, suffixes[k]) == 0) {
            snprintf(buf, n, "%.*s_cuda", (int)(len - sl), cpu_name);
            return buf;
        }
    }
    return cpu_name;
}

/* --- the engine --------------------------------------------------------------------------------- */
static int device_error(CtTensorObject *a, CtTensorObject *b)
{
    CtTensorObject *pair[2] = {a, b};
    CtDevice unused;
    return ct_check_same_device(2, pair, false, &unused);
}

/* The device an op runs on: that of its non-scalar tensors (0-d CPU tensors and Python numbers
 * go anywhere); the output's when one is given. */
static int op_device(int n, const CtEwArg *in, CtTensorObject *out, CtDevice *device)
{
    CtTensorObject *ts[CT_MAX_OPERANDS];
    int m = 0;
    for (int k = 0; k < n; k++) {
        if (in[k].t != NULL) {
            ts[m++] = in[k].t;
        }
    }
    if (ct_check_same_device(m, ts, true, device) < 0) {
        return -1;
    }
    if (out != NULL && !ct_device_equal(ct_device_of(out), *device)) {
        for (int k = 0; k < m; k++) {
            if (!(ts[k]->ndim == 0 && ct_device_of(ts[k]).type == CT_DEV_CPU)) {
                return device_error(out, ts[k]);
            }
        }
        *device = ct_device_of(out);
    }
    return 0;
}

/* out= of the wrong shape is resized as PyTorch does (with its deprecation warning unless it
 * was empty). */
static int check_cast(CtDType result, CtTensorObject *out)
{
    if (!ct_can_cast(result, out->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "result type %s can't be cast to the desired output type %s",
                     ct_scalar_type_name(result), ct_scalar_type_name(out->dtype));
        return -1;
    }
    return 0;
}

/* The dtype an out= must have beyond castability, in PyTorch's words: the result's for CT_EW_SAME_OUT ops
 * (whose other operands are numbers), where's and nan_to_num's, bool for signbit. 0 or -1. */
static int check_out_dtype(CtEwOp op, int n, const CtEwArg *in, const CtTensorObject *out, CtDType result)
{
    if (out->dtype == result) {
        return 0;
    }
    const char *want = ct_scalar_type_name(result), *got = ct_scalar_type_name(out->dtype);
    if (op == CT_EW_WHERE) {
        PyErr_Format(PyExc_RuntimeError, "Expected out type to be %s but got %s", want, got);
        return -1;
    }
    if (op == CT_EW_NAN_TO_NUM) {
        PyErr_Format(PyExc_RuntimeError, "nan_to_num: dtype of out: %s should be same as input: %s", got, want);
        return -1;
    }
    if (op == CT_EW_SIGNBIT) {
        PyErr_SetString(PyExc_RuntimeError, "signbit does not support non-boolean outputs.");
        return -1;
    }
    if (op == CT_EW_HEAVISIDE) {
        PyErr_SetString(PyExc_RuntimeError, "heaviside is not yet implemented for tensors with different dtypes.");
        return -1;
    }
    if (!(ct_ew_op_info[op].flags & CT_EW_SAME_OUT)) {
        return 0;
    }
    for (int k = 1; k < n; k++) {
        if (in[k].t != NULL) { /* clamp(x, min_tensor): a tensor op, which casts to its out */
            return 0;
        }
    }
    PyErr_Format(PyExc_RuntimeError, "Found dtype %s but expected %s", got, want);
    return -1;
}

/* Strides a permutation of contiguous ones (PyTorch's is_non_overlapping_and_dense). */
static bool non_overlapping_and_dense(const CtTensorObject *t)
{
    int perm[CT_MAX_DIMS], m = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] != 1) {
            int j = m++;
            while (j > 0 && t->strides[perm[j - 1]] > t->strides[d]) {
                perm[j] = perm[j - 1];
                j--;
            }
            perm[j] = d;
        }
    }
    int64_t expected = 1;
    for (int i = 0; i < m; i++) {
        if (t->strides[perm[i]] != expected) {
            return false;
        }
        expected *= t->sizes[perm[i]];
    }
    return true;
}

/* PyTorch's checks before writing `out`: no element written twice, and no input that shares
 * part (but not all) of its memory with out. Only dense layouts are compared, as in PyTorch. */
static int check_overlap(CtTensorObject *out, int n, const CtEwArg *in)
{
    if (ct_check_no_internal_overlap(out) < 0) {
        return -1;
    }
    if (ct_numel(out) == 0 || !non_overlapping_and_dense(out)) {
        return 0;
    }
    const char *ob = ct_data(out), *oe = ob + ct_numel(out) * (int64_t)ct_itemsize(out);
    for (int k = 0; k < n; k++) {
        const CtTensorObject *t = in[k].t;
        if (t == NULL || t == out || t->storage->data != out->storage->data || ct_numel(t) == 0 ||
            !non_overlapping_and_dense(t)) {
            continue;
        }
        const char *b = ct_data(t), *e = b + ct_numel(t) * (int64_t)ct_itemsize(t);
        bool full = b == ob && e == oe && t->ndim == out->ndim &&
                    memcmp(t->strides, out->strides, sizeof(int64_t) * t->ndim) == 0;
        if (!full && b < oe && ob < e) {
            PyErr_SetString(PyExc_RuntimeError,
                            "unsupported operation: some elements of the input tensor and the written-to tensor refer "
                            "to a single memory location. Please clone() the tensor before performing the operation.");
            return -1;
        }
    }
    return 0;
}

/* Strides of a new output: PyTorch's TensorIterator rule over the tensor operands. A Python
 * number is an operand too (PyTorch wraps it in a 0-d tensor), except where PyTorch takes it as
 * a Scalar argument of a unary kernel (clamp's bounds, pow's exponent). Ordering the output like
 * the inputs also lets the iterator walk all of them in memory order (x.T + y.T). */
static bool output_layout(CtEwOp op, int n, const CtEwArg *in, int ndim, const int64_t *shape, int64_t *strides)
{
    const CtTensorObject *ts[CT_MAX_OPERANDS];
    int nt = 0;
    bool scalar_operand = false;
    bool scalar_is_param = op == CT_EW_CLAMP || op == CT_EW_CLAMP_MIN || op == CT_EW_CLAMP_MAX || op == CT_EW_POW;
    for (int k = 0; k < n; k++) {
        if (in[k].t != NULL) {
            ts[nt++] = in[k].t;
        } else if (!scalar_is_param) {
            scalar_operand = true;
        }
    }
    if (op == CT_EW_POW && in[0].t == NULL) {
        nt = 0; /* pow(Scalar, Tensor) allocates its output contiguous in PyTorch */
    }
    return ct_iter_output_strides(ndim, shape, nt, ts, scalar_operand, strides);
}

/* The engine. resize_out: out came from out= (resized when its shape is wrong) rather than
 * being self of an in-place op (an error then). */
static CtTensorObject *run_op(CtEwOp op, const CtEwArg *in, CtTensorObject *out, const CtOpParams *params,
                              int compute_override, bool resize_out)
{
    const CtEwOpInfo *info = &ct_ew_op_info[op];
    const int n = info->arity;
    const bool has_cond = (info->flags & CT_EW_COND) != 0;
    CtDevice device;
    if (op_device(n, in, out, &device) < 0) {
        return NULL;
    }

    /* dtypes */
    CtDType compute;
    if (compute_override >= 0) {
        compute = (CtDType)compute_override;
    } else {
        compute = ct_result_type(n - has_cond, in + has_cond);
        if ((info->flags & CT_EW_INT_TO_FLOAT) && !ct_is_floating(compute)) {
            compute = ct_default_float_dtype;
        }
    }
    CtDType result = (info->flags & CT_EW_OUT_BOOL) ? CT_BOOL : compute;

    /* shape */
    int64_t shape[CT_MAX_DIMS], prev[CT_MAX_DIMS];
    int ndim = 0;
    for (int k = 0; k < n; k++) {
        const CtTensorObject *t = in[k].t;
        if (t != NULL && !(t->ndim == ndim && memcmp(t->sizes, shape, sizeof(int64_t) * ndim) == 0)) {
            memcpy(prev, shape, sizeof(int64_t) * ndim);
            ndim = ct_broadcast_shapes(ndim, prev, t->ndim, t->sizes, shape);
            if (ndim < 0) {
                return NULL;
            }
        }
    }

    /* output checks (PyTorch's order: shape, dtype, then whether a kernel exists) */
    const bool from_out_arg = out != NULL && resize_out;
    bool wrong_shape = out != NULL && (out->ndim != ndim || memcmp(out->sizes, shape, sizeof(int64_t) * ndim) != 0);
    for (int k = 0; wrong_shape && resize_out && k < n; k++) {
        resize_out = in[k].t != out; /* an out= that is also an input is not resized */
    }
    if (wrong_shape && !resize_out) {
        char a[256], b[256];
        ct_format_sizes(a, sizeof(a), out->ndim, out->sizes);
        ct_format_sizes(b, sizeof(b), ndim, shape);
        PyErr_Format(PyExc_RuntimeError, "output with shape %s doesn't match the broadcast shape %s", a, b);
        return NULL;
    }
    if (from_out_arg && check_out_dtype(op, n, in, out, result) < 0) {
        return NULL;
    }
    if (out != NULL && check_cast(result, out) < 0) {
        return NULL;
    }
    int cls = compute == CT_BOOL ? CT_EW_DOM_BOOL : ct_is_floating(compute) ? CT_EW_DOM_FLOAT : CT_EW_DOM_INT;
    bool no_half = (info->flags & CT_EW_NO_HALF) && (compute == CT_F16 || compute == CT_BF16);
    if (!(info->domain & cls) || no_half) {
        char name[64];
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'",
                     device_kernel_name(info->kernel_name, device, name, sizeof(name)), ct_scalar_type_name(compute));
        return NULL;
    }
    /* A new (or resized) output takes the inputs' layout (output_layout). */
    int64_t strides[CT_MAX_DIMS];
    bool contiguous = (out == NULL || wrong_shape) ? output_layout(op, n, in, ndim, shape, strides) : true;
    CtTensorObject *res;
    if (out != NULL) {
        if (wrong_shape) {
            /* PyTorch refuses an out= that overlaps itself before resizing it */
            if (ct_check_no_internal_overlap(out) < 0 || ct_resize_output(out, ndim, shape) < 0) {
                return NULL;
            }
            if (!contiguous) { /* fresh dense storage: any dense layout fits */
                memcpy(out->strides, strides, sizeof(int64_t) * ndim);
            }
        }
        if (check_overlap(out, n, in) < 0) {
            return NULL;
        }
        res = (CtTensorObject *)Py_NewRef(out);
    } else {
        res = contiguous ? ct_empty(ndim, shape, result, device) : ct_empty_strided(ndim, shape, strides, result, device);
        if (res == NULL) {
            return NULL;
        }
    }

    /* Operands: tensors go through the iterator; Python numbers and 0-d CPU tensors are read
     * now (before anything is written) into host scalars in the kernel's natural dtype. */
    CtTensorObject *tensors[CT_MAX_OPERANDS];
    int nt = 0;
    tensors[nt++] = res;
    _Alignas(8) char host_values[3][8];
    CtDType host_dtypes[3];
    unsigned host = 0;
    for (int k = 0; k < n; k++) {
        const CtEwArg *a = &in[k];
        if (a->t != NULL && !(a->t->ndim == 0 && ct_device_of(a->t).type == CT_DEV_CPU)) {
            tensors[nt++] = a->t;
            continue;
        }
        const void *src = a->t != NULL ? (const void *)ct_data(a->t) : (const void *)&a->s.v;
        CtDType src_dtype = a->t != NULL ? a->t->dtype : scalar_storage_dtype(&a->s);
        if (has_cond && k == 0) {
            host_dtypes[k] = CT_BOOL;
            convert_one(host_values[k], CT_BOOL, src, src_dtype);
        } else if (info->flags & CT_EW_OPMATH_SCALARS) {
            host_dtypes[k] = acc_dtype(compute);
            convert_one(host_values[k], host_dtypes[k], src, src_dtype);
        } else {
            /* round to the compute dtype first (a float16 op sees float16 values) */
            _Alignas(8) char tmp[8];
            host_dtypes[k] = acc_dtype(compute);
            convert_one(tmp, compute, src, src_dtype);
            convert_one(host_values[k], host_dtypes[k], tmp, compute);
        }
        host |= 1u << (k + 1);
    }
    CtIter it;
    if (ct_iter_init(&it, nt, tensors) < 0) {
        goto error;
    }
    /* Spread the iterator's operands to their op positions, host scalars in between. Moving
     * from the last position down never overwrites an operand not yet moved. */
    int src = nt - 1;
    for (int k = n - 1; k >= 0; k--) {
        int dst = k + 1;
        if (host & (1u << dst)) {
            it.data[dst] = host_values[k];
            it.dtypes[dst] = host_dtypes[k];
            for (int d = 0; d < it.ndim; d++) {
                it.strides[d][dst] = 0;
            }
        } else {
            if (src != dst) {
                it.data[dst] = it.data[src];
                it.dtypes[dst] = it.dtypes[src];
                for (int d = 0; d < it.ndim; d++) {
                    it.strides[d][dst] = it.strides[d][src];
                }
            }
            src--;
        }
    }
    it.nops = n + 1;

    if (it.numel > 0) {
        const CtDeviceOps *ops = ct_device_ops(device);
        if (ops == NULL) {
            goto error;
        }
        const struct CtElementwiseKernels *k = ops->elementwise;
        int (*fn)(const CtIter *, const CtEwCall *) =
            k == NULL ? NULL : n == 1 ? k->unary : n == 2 ? k->binary : k->ternary;
        if (fn == NULL) {
            PyErr_Format(PyExc_RuntimeError, "elementwise op %s is not implemented on %s", info->name, ops->name);
            goto error;
        }
        CtEwCall call;
        call.op = op;
        call.compute = compute;
        call.host_scalars = host;
        if (params != NULL) {
            call.params = *params;
        } else {
            memset(&call.params, 0, sizeof(call.params));
        }
        if (fn(&it, &call) < 0) {
            goto error;
        }
    }
    if (out != NULL) {
        ct_bump_version(out);
    }
    return res;
error:
    Py_DECREF(res);
    return NULL;
}

CtTensorObject *ct_elementwise(CtEwOp op, const CtEwArg *in, CtTensorObject *out, const CtOpParams *params,
                               int compute)
{
    return run_op(op, in, out, params, compute, false);
}

/* --- op-specific rules shared by the Python surface and the C API ------------------------------- */
static bool arg_is_bool(const CtEwArg *a)
{
    return a->t != NULL ? a->t->dtype == CT_BOOL : a->s.kind == CT_KIND_BOOL;
}

static int check_sub(const CtEwArg *in)
{
    bool b0 = arg_is_bool(&in[0]), b1 = arg_is_bool(&in[1]);
    if (b0 && b1) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                        "`logical_xor()` operator instead.");
        return -1;
    }
    if (b0 || b1) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                        "invert a mask, use the `~` or `logical_not()` operator instead.");
        return -1;
    }
    return 0;
}

static CtTensorObject *unary_op(CtEwOp op, const CtEwArg *in, CtTensorObject *out, bool resize)
{
    int compute = -1;
    CtDType d = in[0].t->dtype;
    if (op == CT_EW_NEG && d == CT_BOOL) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert "
                        "a mask, use the `~` or `logical_not()` operator instead.");
        return NULL;
    }
    if (op == CT_EW_RELU && d == CT_BOOL) {
        PyErr_SetString(PyExc_NotImplementedError, "Boolean inputs not supported for relu");
        return NULL;
    }
    if (op == CT_EW_SQUARE && d == CT_BOOL) {
        compute = CT_I64; /* square is pow(x, 2): bool promotes with the int 2 */
    }
    return run_op(op, in, out, NULL, compute, resize);
}

static bool scalar_equals(const CtScalar *s, double v) { return ct_scalar_to_double(s) == v; }

/* tensor ** number, with PyTorch's special cases: they decide the value at -0.0 and infinities
 * (x ** 0.5 is sqrt(x), so (-0.0) ** 0.5 is -0.0) and the rounding (x ** 3 is x * x * x). */
static CtTensorObject *pow_scalar_op(const CtEwArg *in, CtTensorObject *out, bool resize, int compute)
{
    const CtScalar *e = &in[1].s;
    CtDType r = compute >= 0 ? (CtDType)compute : ct_result_type(2, in);
    if (e->kind != CT_KIND_FLOAT && ct_scalar_to_int(e) < 0 && !ct_is_floating(r)) {
        PyErr_SetString(PyExc_RuntimeError, "Integers to negative integer powers are not allowed.");
        return NULL;
    }
    double ev = ct_scalar_to_double(e);
    if (r == CT_BOOL) {
        /* bool ** True is a copy, bool ** False is all True: b | False, b | True */
        CtEwArg or_in[2] = {in[0], {NULL, {CT_KIND_BOOL, {.b = ev == 0.0}}}};
        return run_op(CT_EW_BITWISE_OR, or_in, out, NULL, -1, resize);
    }
    CtEwArg base[1] = {in[0]};
    if (ct_is_floating(r)) {
        static const struct {
            double exponent;
            CtEwOp op;
        } special[] = {{0.5, CT_EW_SQRT},   {-0.5, CT_EW_RSQRT}, {-1.0, CT_EW_RECIPROCAL},
                       {2.0, CT_EW_SQUARE}, {3.0, CT_EW_CUBE},   {-2.0, CT_EW_INV_SQUARE}};
        for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
            if (ev == special[i].exponent && (r != CT_F16 || fabs(ev) != 0.5)) {
                return run_op(special[i].op, base, out, NULL, r, resize);
            }
        }
    } else if (ev == 2.0) {
        return run_op(CT_EW_SQUARE, base, out, NULL, r, resize);
    }
    return run_op(CT_EW_POW, in, out, NULL, compute, resize);
}

/* nextafter with a float16/bfloat16 result, composed of tensor ops on the 16-bit patterns: one
 * step up or down the integer view moves a nonzero finite (or infinite) value to its neighbour
 * (sign-magnitude: +1 grows the magnitude whatever the sign), zero steps to the smallest
 * subnormal of other's sign, equal values give other, NaNs propagate. */
static CtTensorObject *nextafter_half(const CtEwArg *in, CtDType r, CtTensorObject *out, bool resize)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *rt = ct_dtype_object(r);
    PyObject *pair = FN("broadcast_tensors", "(OO)", METH((PyObject *)in[0].t, "to", "(O)", rt),
                        METH((PyObject *)in[1].t, "to", "(O)", rt));
    PyObject *a = pair != NULL && PyTuple_Check(pair) ? PyTuple_GET_ITEM(pair, 0) : NULL;
    PyObject *b = pair != NULL && PyTuple_Check(pair) ? PyTuple_GET_ITEM(pair, 1) : NULL;
    PyObject *bits = METH(METH(a, "contiguous", NULL), "view", "(O)", ct_dtype_object(CT_I16));
    PyObject *grow = METH(CMP(b, a, Py_GT), "eq", "(O)", CMP(a, INT(0), Py_GT));
    PyObject *stepped = METH(METH(ADD(bits, WHERE(grow, INT(1), INT(-1))), "to", "(O)", ct_dtype_object(CT_I16)),
                             "view", "(O)", rt);
    double tiny = ldexp(1.0, r == CT_F16 ? -24 : -133);
    PyObject *zero_step = METH(WHERE(CMP(b, INT(0), Py_GT), NUM(tiny), NUM(-tiny)), "to", "(O)", rt);
    PyObject *res = WHERE(CMP(a, INT(0), Py_EQ), zero_step, stepped);
    res = WHERE(CMP(a, b, Py_EQ), b, res);
    res = WHERE(METH(METH(a, "isnan", NULL), "logical_or", "(O)", METH(b, "isnan", NULL)), ADD(a, b), res);
    PyObject *result = TAKE(res);
    arena_free(arena);
    if (result == NULL || out == NULL) {
        return (CtTensorObject *)result;
    }
    CtTensorObject *ts[2] = {in[0].t, in[1].t};
    return (CtTensorObject *)ct_write_out((CtTensorObject *)result, (PyObject *)out, "nextafter", CT_OUT_CAST,
                                          resize ? 2 : 0, ts);
}

static CtTensorObject *binary_op(CtEwOp op, const CtEwArg *in, CtTensorObject *out, bool resize)
{
    if ((op == CT_EW_SUB || op == CT_EW_SUB_ALPHA) && check_sub(in) < 0) {
        return NULL;
    }
    if (op == CT_EW_POW && in[1].t == NULL && in[0].t != NULL) {
        return pow_scalar_op(in, out, resize, -1);
    }
    if (op == CT_EW_HEAVISIDE && in[0].t != NULL && in[1].t != NULL && in[0].t->dtype != in[1].t->dtype) {
        PyErr_SetString(PyExc_RuntimeError, "heaviside is not yet implemented for tensors with different dtypes.");
        return NULL;
    }
    if (op == CT_EW_NEXTAFTER && in[0].t != NULL && in[1].t != NULL) {
        /* the float16/bfloat16 kernels compute in float: the next float is not the next half */
        CtDType r = ct_result_type(2, in);
        if (r == CT_F16 || r == CT_BF16) {
            return nextafter_half(in, r, out, resize);
        }
    }
    return run_op(op, in, out, NULL, -1, resize);
}

/* add/sub with alpha (NULL for 1): checks in PyTorch's order and words. */
static CtTensorObject *add_sub_op(bool is_sub, const CtEwArg *in, const CtScalar *alpha, CtTensorObject *out,
                                  bool resize)
{
    if (is_sub && check_sub(in) < 0) {
        return NULL;
    }
    if (alpha != NULL) {
        CtDType r = ct_result_type(2, in);
        if (alpha->kind == CT_KIND_BOOL && r != CT_BOOL) {
            PyErr_SetString(PyExc_RuntimeError, "Boolean alpha only supported for Boolean results.");
            return NULL;
        }
        if (!ct_is_floating(r) && alpha->kind == CT_KIND_FLOAT) {
            PyErr_SetString(PyExc_RuntimeError,
                            "For integral input tensors, argument alpha must not be a floating point number.");
            return NULL;
        }
        if (!scalar_equals(alpha, 1.0)) {
            CtOpParams p;
            memset(&p, 0, sizeof(p));
            p.f[0] = ct_scalar_to_double(alpha);
            p.i[0] = ct_scalar_to_int(alpha);
            if (r == CT_F16 || r == CT_BF16) { /* PyTorch rounds alpha to the tensor's dtype */
                _Alignas(8) char tmp[8];
                convert_one(tmp, r, &p.f[0], CT_F64);
                convert_one(&p.f[0], CT_F64, tmp, r);
            }
            return run_op(is_sub ? CT_EW_SUB_ALPHA : CT_EW_ADD_ALPHA, in, out, &p, -1, resize);
        }
    }
    return run_op(is_sub ? CT_EW_SUB : CT_EW_ADD, in, out, NULL, -1, resize);
}

/* --- C API ----------------------------------------------------------------------------------------- */
CtTensorObject *ct_unary(CtEwOp op, CtTensorObject *a)
{
    CtEwArg in[1] = {{a}};
    return unary_op(op, in, NULL, false);
}

CtTensorObject *ct_unary_(CtEwOp op, CtTensorObject *a)
{
    CtEwArg in[1] = {{a}};
    return unary_op(op, in, a, false);
}

CtTensorObject *ct_binary(CtEwOp op, CtTensorObject *a, CtTensorObject *b)
{
    CtEwArg in[2] = {{a}, {b}};
    return binary_op(op, in, NULL, false);
}

CtTensorObject *ct_binary_(CtEwOp op, CtTensorObject *a, CtTensorObject *b)
{
    CtEwArg in[2] = {{a}, {b}};
    return binary_op(op, in, a, false);
}

CtTensorObject *ct_binary_scalar(CtEwOp op, CtTensorObject *a, const CtScalar *s)
{
    CtEwArg in[2] = {{a}, {NULL, *s}};
    return binary_op(op, in, NULL, false);
}

CtTensorObject *ct_binary_scalar_(CtEwOp op, CtTensorObject *a, const CtScalar *s)
{
    CtEwArg in[2] = {{a}, {NULL, *s}};
    return binary_op(op, in, a, false);
}

CtTensorObject *ct_ternary(CtEwOp op, CtTensorObject *a, CtTensorObject *b, CtTensorObject *c)
{
    CtEwArg in[3] = {{a}, {b}, {c}};
    return run_op(op, in, NULL, NULL, -1, false);
}

CtTensorObject *ct_add(CtTensorObject *a, CtTensorObject *b) { return ct_binary(CT_EW_ADD, a, b); }
CtTensorObject *ct_sub(CtTensorObject *a, CtTensorObject *b) { return ct_binary(CT_EW_SUB, a, b); }
CtTensorObject *ct_mul(CtTensorObject *a, CtTensorObject *b) { return ct_binary(CT_EW_MUL, a, b); }
CtTensorObject *ct_div(CtTensorObject *a, CtTensorObject *b) { return ct_binary(CT_EW_DIV, a, b); }
CtTensorObject *ct_neg(CtTensorObject *a) { return ct_unary(CT_EW_NEG, a); }

CtTensorObject *ct_add_scaled(CtTensorObject *a, CtTensorObject *b, double alpha)
{
    CtEwArg in[2] = {{a}, {b}};
    CtScalar s = {CT_KIND_FLOAT, {.d = alpha}};
    if (!ct_is_floating(ct_result_type(2, in)) && alpha == (double)(int64_t)alpha) {
        s.kind = CT_KIND_INT;
        s.v.i = (int64_t)alpha;
    }
    return add_sub_op(false, in, &s, NULL, false);
}

CtTensorObject *ct_mul_scalar(CtTensorObject *a, double v)
{
    CtScalar s = {CT_KIND_FLOAT, {.d = v}};
    return ct_binary_scalar(CT_EW_MUL, a, &s);
}

CtTensorObject *ct_add_scalar(CtTensorObject *a, double v)
{
    CtScalar s = {CT_KIND_FLOAT, {.d = v}};
    return ct_binary_scalar(CT_EW_ADD, a, &s);
}

CtTensorObject *ct_where(CtTensorObject *cond, CtTensorObject *a, CtTensorObject *b)
{
    if (cond->dtype != CT_BOOL) {
        PyErr_Format(PyExc_RuntimeError, "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                     ct_scalar_type_name(cond->dtype));
        return NULL;
    }
    return ct_ternary(CT_EW_WHERE, cond, a, b);
}

/* --- Python arguments -------------------------------------------------------------------------------- */
enum { MODE_FUNC, MODE_METHOD, MODE_INPLACE, MODE_FUNC_INPLACE };

static bool is_number(PyObject *obj)
{
    if (PyLong_Check(obj) || PyFloat_Check(obj)) {
        return true;
    }
    return PyArray_IsScalar(obj, Integer) || PyArray_IsScalar(obj, Floating) || PyArray_IsScalar(obj, Bool);
}

static int number_to_scalar(PyObject *obj, CtScalar *s)
{
    if (PyArray_IsScalar(obj, Bool)) {
        s->kind = CT_KIND_BOOL;
        int v = PyObject_IsTrue(obj);
        s->v.b = v > 0;
        return v < 0 ? -1 : 0;
    }
    return ct_scalar_from_object(obj, s);
}

/* obj as an operand (a Tensor, or a number when allow_number); TypeError in PyTorch's words. */
static int arg_operand(PyObject *obj, CtEwArg *out, const char *fname, const char *argname, int pos,
                       bool allow_number)
{
    if (obj != NULL && CtTensor_Check(obj)) {
        out->t = (CtTensorObject *)obj;
        return 0;
    }
    if (obj != NULL && allow_number && is_number(obj)) {
        out->t = NULL;
        return number_to_scalar(obj, &out->s);
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname, argname, pos,
                 obj == NULL ? "NoneType" : Py_TYPE(obj)->tp_name);
    return -1;
}

/* A required Number argument (alpha=, value=). As PyTorch's Scalar, a 0-d tensor is one: its
 * value is read with ct_item, wherever it lives (a CUDA tensor's is copied to the host). */
static int arg_number(PyObject *obj, CtScalar *out, const char *fname, const char *argname)
{
    if (obj != NULL && CtTensor_Check(obj) && CT_TENSOR(obj)->ndim == 0) {
        return ct_item(CT_TENSOR(obj), out);
    }
    if (obj == NULL || !is_number(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Number, not %s", fname, argname,
                     obj == NULL ? "NoneType" : CtTensor_Check(obj) ? "Tensor" : Py_TYPE(obj)->tp_name);
        return -1;
    }
    return number_to_scalar(obj, out);
}

/* Parses a function call (names_fn) or a method call (names_m: names_fn without the leading
 * "input" and the trailing "*out"); a[0] is the input either way. */
static int parse_call(const char *fname, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                      const char *const *names_fn, const char *const *names_m, int nrequired, PyObject **a)
{
    if (self == NULL) {
        return ct_parse_args(fname, args, nargs, kw, names_fn, nrequired, a);
    }
    a[0] = self;
    return ct_parse_args(fname, args, nargs, kw, names_m, nrequired - 1, a + 1);
}

/* Where a call writes: a new tensor (NULL), out=, or self. */
static int call_output(int mode, PyObject *self_or_input, PyObject *out_obj, const char *fname, CtTensorObject **out,
                       bool *resize)
{
    *resize = false;
    *out = NULL;
    if (mode == MODE_INPLACE || mode == MODE_FUNC_INPLACE) {
        *out = (CtTensorObject *)self_or_input;
        return 0;
    }
    if (mode == MODE_FUNC && ct_arg_out(out_obj, fname, out) < 0) {
        return -1;
    }
    *resize = *out != NULL;
    return 0;
}

/* --- Python: unary functions -------------------------------------------------------------------------- */
static PyObject *unary_entry(CtEwOp op, const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kw, int mode)
{
    static const char *const names_fn[] = {"input", "*out", NULL};
    static const char *const names_m[] = {NULL};
    PyObject *a[2] = {NULL, NULL};
    CtEwArg in[1];
    CtTensorObject *out;
    bool resize;
    if (parse_call(name, self, args, nargs, kw, names_fn, names_m, 1, a) < 0 ||
        arg_operand(a[0], &in[0], name, "input", 1, false) < 0 || call_output(mode, a[0], a[1], name, &out, &resize) < 0) {
        return NULL;
    }
    return (PyObject *)unary_op(op, in, out, resize);
}

/* X(python name, op). UNARY_FM: torch.<name>_ and Tensor.<name>_ exist; UNARY_M: only the
 * method; UNARY_N: neither. */
#define UNARY_FM(X)                                                                                          \
    X(neg, NEG) X(negative, NEG) X(abs, ABS) X(exp, EXP) X(exp2, EXP2) X(expm1, EXPM1) X(log, LOG)          \
    X(log2, LOG2) X(log10, LOG10) X(log1p, LOG1P) X(sqrt, SQRT) X(rsqrt, RSQRT) X(square, SQUARE)           \
    X(reciprocal, RECIPROCAL) X(sin, SIN) X(cos, COS) X(tan, TAN) X(asin, ASIN) X(acos, ACOS) X(atan, ATAN) \
    X(arcsin, ASIN) X(arccos, ACOS) X(arctan, ATAN) X(sinh, SINH) X(cosh, COSH) X(tanh, TANH)              \
    X(asinh, ASINH) X(acosh, ACOSH) X(atanh, ATANH) X(arcsinh, ASINH) X(arccosh, ACOSH) X(arctanh, ATANH)  \
    X(sigmoid, SIGMOID) X(relu, RELU) X(floor, FLOOR) X(ceil, CEIL) X(trunc, TRUNC) X(fix, TRUNC)           \
    X(frac, FRAC) X(erf, ERF) X(erfc, ERFC) X(i0, I0) X(sinc, SINC) X(deg2rad, DEG2RAD) X(rad2deg, RAD2DEG)
#define UNARY_M(X)                                                                                           \
    X(absolute, ABS) X(sign, SIGN) X(sgn, SIGN) X(logical_not, LOGICAL_NOT) X(bitwise_not, BITWISE_NOT)     \
    X(erfinv, ERFINV) X(lgamma, LGAMMA) X(digamma, DIGAMMA)
#define UNARY_N(X) \
    X(isnan, ISNAN) X(isinf, ISINF) X(isfinite, ISFINITE) X(isposinf, ISPOSINF) X(isneginf, ISNEGINF) X(signbit, SIGNBIT)

#define DEF_UNARY(pyname, OP)                                                                                \
    static PyObject *fn_##pyname(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)               \
    {                                                                                                        \
        return unary_entry(CT_EW_##OP, #pyname, NULL, a, n, k, MODE_FUNC);                                   \
    }                                                                                                        \
    static PyObject *fn_##pyname##_(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)            \
    {                                                                                                        \
        return unary_entry(CT_EW_##OP, #pyname "_", NULL, a, n, k, MODE_FUNC_INPLACE);                       \
    }                                                                                                        \
    static PyObject *meth_##pyname(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *k)          \
    {                                                                                                        \
        return unary_entry(CT_EW_##OP, #pyname, self, a, n, k, MODE_METHOD);                                 \
    }                                                                                                        \
    static PyObject *meth_##pyname##_(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *k)       \
    {                                                                                                        \
        return unary_entry(CT_EW_##OP, #pyname "_", self, a, n, k, MODE_INPLACE);                            \
    }
UNARY_FM(DEF_UNARY)
UNARY_M(DEF_UNARY)
UNARY_N(DEF_UNARY)

/* torch.special's elementwise functions without a torch.<name> or Tensor method (ctorch.special maps
 * its names to these): functions only, with out= */
#define SPECIAL_U(X)                                                                                         \
    X(special_entr, ENTR) X(special_i1, I1) X(special_erfcx, ERFCX) X(special_log_ndtr, LOG_NDTR)            \
    X(special_ndtri, NDTRI) X(special_i0e, I0E) X(special_i1e, I1E) X(special_bessel_j0, BESSEL_J0)          \
    X(special_bessel_j1, BESSEL_J1) X(special_bessel_y0, BESSEL_Y0) X(special_bessel_y1, BESSEL_Y1)          \
    X(special_modified_bessel_i0, MODIFIED_BESSEL_I0) X(special_modified_bessel_i1, MODIFIED_BESSEL_I1)      \
    X(special_modified_bessel_k0, MODIFIED_BESSEL_K0) X(special_modified_bessel_k1, MODIFIED_BESSEL_K1)      \
    X(special_scaled_modified_bessel_k0, SCALED_MODIFIED_BESSEL_K0)                                          \
    X(special_scaled_modified_bessel_k1, SCALED_MODIFIED_BESSEL_K1)                                          \
    X(special_spherical_bessel_j0, SPHERICAL_BESSEL_J0)
/* special_gammainc/gammaincc are ctorch.special's names of igamma/igammac (BINARY_M) */
#define SPECIAL_B(X) X(special_xlog1py, XLOG1PY, NUM_OTHER | NUM_SELF) X(special_zeta, ZETA, NUM_OTHER | NUM_SELF)
#define DEF_SPECIAL_U(pyname, OP)                                                                            \
    static PyObject *fn_##pyname(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)               \
    {                                                                                                        \
        return unary_entry(CT_EW_##OP, #pyname, NULL, a, n, k, MODE_FUNC);                                   \
    }
SPECIAL_U(DEF_SPECIAL_U)

/* positive: self (bool is refused as in PyTorch) */
static PyObject *positive_impl(PyObject *t)
{
    if (!CtTensor_Check(t)) {
        PyErr_Format(PyExc_TypeError, "positive(): argument 'input' (position 1) must be Tensor, not %s",
                     Py_TYPE(t)->tp_name);
        return NULL;
    }
    if (CT_TENSOR(t)->dtype == CT_BOOL) {
        PyErr_SetString(PyExc_NotImplementedError, "The `+` operator, on a bool tensor is not supported.");
        return NULL;
    }
    return Py_NewRef(t);
}
static PyObject *fn_positive(PyObject *m, PyObject *t) { return positive_impl(t); }
static PyObject *meth_positive(PyObject *self, PyObject *unused) { return positive_impl(self); }

/* round(input, *, decimals=0, out=None) */
static PyObject *round_entry(const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                             int mode)
{
    static const char *const names_fn[] = {"input", "*decimals", "*out", NULL};
    static const char *const names_m[] = {"*decimals", NULL};
    PyObject *a[3] = {NULL, NULL, NULL};
    CtEwArg in[1];
    CtTensorObject *out;
    bool resize;
    int64_t decimals = 0;
    if (parse_call(name, self, args, nargs, kw, names_fn, names_m, 1, a) < 0 ||
        arg_operand(a[0], &in[0], name, "input", 1, false) < 0 || call_output(mode, a[0], a[2], name, &out, &resize) < 0) {
        return NULL;
    }
    if (a[1] != NULL && (a[1] == Py_None || ct_arg_int64(a[1], &decimals) < 0)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s(): argument 'decimals' must be int, not %s", name, Py_TYPE(a[1])->tp_name);
        return NULL;
    }
    if (decimals == 0) {
        return (PyObject *)unary_op(CT_EW_ROUND, in, out, resize);
    }
    CtOpParams p;
    memset(&p, 0, sizeof(p));
    p.f[0] = pow(10.0, (double)(decimals < 0 ? -decimals : decimals));
    p.f[1] = decimals < 0;
    return (PyObject *)run_op(CT_EW_ROUND_DECIMALS, in, out, &p, -1, resize);
}

/* nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None) */
static PyObject *nan_to_num_entry(const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kw, int mode)
{
    static const char *const names_fn[] = {"input", "nan", "posinf", "neginf", "*out", NULL};
    static const char *const names_m[] = {"nan", "posinf", "neginf", NULL};
    PyObject *a[5] = {NULL, NULL, NULL, NULL, NULL};
    CtEwArg in[1];
    CtTensorObject *out;
    bool resize;
    if (parse_call(name, self, args, nargs, kw, names_fn, names_m, 1, a) < 0 ||
        arg_operand(a[0], &in[0], name, "input", 1, false) < 0 || call_output(mode, a[0], a[4], name, &out, &resize) < 0) {
        return NULL;
    }
    CtTensorObject *t = in[0].t;
    if (!ct_is_floating(t->dtype)) { /* nothing to replace: a copy (or self) */
        if (out == t) {
            return Py_NewRef(out);
        }
        if (out != NULL && check_out_dtype(CT_EW_NAN_TO_NUM, 1, in, out, t->dtype) < 0) {
            return NULL;
        }
        return ct_write_out(ct_to(t, t->dtype, ct_device_of(t), true), (PyObject *)out, name, CT_OUT_EXACT, 0, NULL);
    }
    double big;
    switch (t->dtype) {
    case CT_F16:
        big = 65504.0;
        break;
    case CT_BF16:
        big = 3.3895313892515355e+38;
        break;
    case CT_F32:
        big = FLT_MAX;
        break;
    default:
        big = DBL_MAX;
        break;
    }
    CtOpParams p;
    memset(&p, 0, sizeof(p));
    p.f[0] = 0.0;
    p.f[1] = big;
    p.f[2] = -big;
    if (ct_arg_double(a[1], &p.f[0]) < 0 || ct_arg_double(a[2], &p.f[1]) < 0 || ct_arg_double(a[3], &p.f[2]) < 0) {
        return NULL;
    }
    return (PyObject *)run_op(CT_EW_NAN_TO_NUM, in, out, &p, -1, resize);
}

/* logit(input, eps=None, *, out=None): log(x / (1 - x)), x clamped to [eps, 1 - eps] when eps is given */
static PyObject *logit_entry(const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                             int mode)
{
    static const char *const names_fn[] = {"input", "eps", "*out", NULL};
    static const char *const names_m[] = {"eps", NULL};
    PyObject *a[3] = {NULL, NULL, NULL};
    CtEwArg in[1];
    CtTensorObject *out;
    bool resize;
    CtOpParams p;
    memset(&p, 0, sizeof(p));
    p.f[0] = -1.0;
    if (parse_call(name, self, args, nargs, kw, names_fn, names_m, 1, a) < 0 ||
        arg_operand(a[0], &in[0], name, "input", 1, false) < 0 || call_output(mode, a[0], a[2], name, &out, &resize) < 0 ||
        ct_arg_double(a[1], &p.f[0]) < 0) {
        return NULL;
    }
    return (PyObject *)run_op(CT_EW_LOGIT, in, out, &p, -1, resize);
}

/* polygamma(n, input, *, out=None) / Tensor.polygamma(n): the n-th derivative of digamma */
static PyObject *polygamma_entry(const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kw, int mode)
{
    static const char *const names_fn[] = {"n", "input", "*out", NULL};
    static const char *const names_m[] = {"n", NULL};
    PyObject *a[3] = {NULL, NULL, NULL};
    CtEwArg in[1];
    CtTensorObject *out;
    bool resize;
    int64_t n = 0;
    int rc = self == NULL ? ct_parse_args(name, args, nargs, kw, names_fn, 2, a)
                          : ct_parse_args(name, args, nargs, kw, names_m, 1, a);
    if (self != NULL) { /* a = (n, self): the function's order */
        a[1] = self;
    }
    if (rc < 0 || ct_arg_int64(a[0], &n) < 0 || arg_operand(a[1], &in[0], name, "input", 2, false) < 0 ||
        call_output(mode, a[1], a[2], name, &out, &resize) < 0) {
        return NULL;
    }
    if (n < 0) {
        PyErr_SetString(PyExc_RuntimeError, "polygamma(n, x) does not support negative n.");
        return NULL;
    }
    CtOpParams p;
    memset(&p, 0, sizeof(p));
    p.f[0] = (double)n;
    return (PyObject *)run_op(n == 0 ? CT_EW_DIGAMMA : CT_EW_POLYGAMMA, in, out, n == 0 ? NULL : &p, -1, resize);
}

/* gelu(input, approximate='none'), silu(input), softplus(input, beta=1, threshold=20): the
 * functions behind torch.nn.functional (not Tensor methods in PyTorch). */
static PyObject *fn_gelu(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "approximate", NULL};
    PyObject *a[2];
    CtEwArg in[1];
    if (ct_parse_args("gelu", args, nargs, kw, names, 1, a) < 0 || arg_operand(a[0], &in[0], "gelu", "input", 1, false) < 0) {
        return NULL;
    }
    CtEwOp op = CT_EW_GELU;
    if (a[1] != NULL) {
        const char *s = PyUnicode_Check(a[1]) ? PyUnicode_AsUTF8(a[1]) : NULL;
        if (s != NULL && strcmp(s, "tanh") == 0) {
            op = CT_EW_GELU_TANH;
        } else if (s == NULL || strcmp(s, "none") != 0) {
            PyErr_Clear();
            PyErr_SetString(PyExc_RuntimeError, "approximate argument must be either none or tanh.");
            return NULL;
        }
    }
    return (PyObject *)run_op(op, in, NULL, NULL, -1, false);
}

static PyObject *fn_silu(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", NULL};
    PyObject *a[1];
    CtEwArg in[1];
    if (ct_parse_args("silu", args, nargs, kw, names, 1, a) < 0 || arg_operand(a[0], &in[0], "silu", "input", 1, false) < 0) {
        return NULL;
    }
    return (PyObject *)run_op(CT_EW_SILU, in, NULL, NULL, -1, false);
}

static PyObject *fn_softplus(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "beta", "threshold", NULL};
    PyObject *a[3];
    CtEwArg in[1];
    CtOpParams p;
    memset(&p, 0, sizeof(p));
    p.f[0] = 1.0;
    p.f[1] = 20.0;
    if (ct_parse_args("softplus", args, nargs, kw, names, 1, a) < 0 ||
        arg_operand(a[0], &in[0], "softplus", "input", 1, false) < 0 || ct_arg_double(a[1], &p.f[0]) < 0 ||
        ct_arg_double(a[2], &p.f[1]) < 0) {
        return NULL;
    }
    return (PyObject *)run_op(CT_EW_SOFTPLUS, in, NULL, &p, -1, false);
}

/* --- Python: binary functions ------------------------------------------------------------------------- */
/* Which operands may be Python numbers (PyTorch's overloads). */
#define NUM_OTHER 1 /* f(tensor, number) */
#define NUM_SELF 2  /* f(number, tensor) */
#define NUM_BOTH 4  /* f(number, number) */
#define NUM_ARITH (NUM_OTHER | NUM_SELF | NUM_BOTH)

/* Parses (input, other): checks which may be numbers as PyTorch's overloads do. */
static int binary_operands(const char *name, PyObject *x, PyObject *y, int numflags, CtEwArg *in, bool method)
{
    bool xnum = !method && x != NULL && !CtTensor_Check(x) && is_number(x);
    bool ynum = y != NULL && !CtTensor_Check(y) && is_number(y);
    bool allow_x = (numflags & NUM_SELF) && (!ynum || (numflags & NUM_BOTH));
    bool allow_y = (numflags & NUM_OTHER) || ((numflags & NUM_BOTH) && xnum);
    if (xnum && !allow_x) {
        /* e.g. eq(3, t): PyTorch reports the whole call */
        PyErr_Format(PyExc_TypeError, "%s() received an invalid combination of arguments - got (%s, %s)", name,
                     Py_TYPE(x)->tp_name, y == NULL ? "NoneType" : Py_TYPE(y)->tp_name);
        return -1;
    }
    /* a method's positions count from its first argument after self (t.atan2(2): position 1) */
    if (arg_operand(x, &in[0], name, "input", 1, allow_x) < 0 ||
        arg_operand(y, &in[1], name, "other", method ? 1 : 2, allow_y) < 0) {
        return -1;
    }
    return 0;
}

static PyObject *binary_entry(CtEwOp op, const char *name, int numflags, PyObject *self, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kw, int mode)
{
    static const char *const names_fn[] = {"input", "other", "*out", NULL};
    static const char *const names_m[] = {"other", NULL};
    PyObject *a[3] = {NULL, NULL, NULL};
    CtEwArg in[2];
    CtTensorObject *out;
    bool resize;
    if (parse_call(name, self, args, nargs, kw, names_fn, names_m, 2, a) < 0 ||
        binary_operands(name, a[0], a[1], numflags, in, self != NULL) < 0 ||
        call_output(mode, a[0], a[2], name, &out, &resize) < 0) {
        return NULL;
    }
    return (PyObject *)binary_op(op, in, out, resize);
}

/* X(python name, op, numbers allowed). BINARY_M: Tensor.<name>_ exists; BINARY_N: it does not. */
#define BINARY_M(X)                                                                                           \
    X(mul, MUL, NUM_ARITH) X(multiply, MUL, NUM_ARITH) X(true_divide, DIV, NUM_ARITH)                         \
    X(floor_divide, DIV_FLOOR, NUM_ARITH) X(remainder, REMAINDER, NUM_OTHER | NUM_SELF)                       \
    X(fmod, FMOD, NUM_OTHER) X(pow, POW, NUM_OTHER | NUM_SELF) X(atan2, ATAN2, 0) X(arctan2, ATAN2, 0)        \
    X(copysign, COPYSIGN, NUM_OTHER) X(hypot, HYPOT, 0) X(eq, EQ, NUM_OTHER) X(ne, NE, NUM_OTHER)             \
    X(lt, LT, NUM_OTHER) X(le, LE, NUM_OTHER) X(gt, GT, NUM_OTHER) X(ge, GE, NUM_OTHER)                       \
    X(greater, GT, NUM_OTHER) X(greater_equal, GE, NUM_OTHER) X(less, LT, NUM_OTHER)                          \
    X(less_equal, LE, NUM_OTHER) X(not_equal, NE, NUM_OTHER) X(logical_and, LOGICAL_AND, 0)                   \
    X(logical_or, LOGICAL_OR, 0) X(logical_xor, LOGICAL_XOR, 0)                                               \
    X(bitwise_and, BITWISE_AND, NUM_OTHER | NUM_SELF) X(bitwise_or, BITWISE_OR, NUM_OTHER | NUM_SELF)         \
    X(bitwise_xor, BITWISE_XOR, NUM_OTHER | NUM_SELF) X(bitwise_left_shift, LSHIFT, NUM_OTHER | NUM_SELF)      \
    X(bitwise_right_shift, RSHIFT, NUM_OTHER | NUM_SELF) X(xlogy, XLOGY, NUM_OTHER | NUM_SELF)              \
    X(heaviside, HEAVISIDE, 0) X(gcd, GCD, 0) X(lcm, LCM, 0) X(nextafter, NEXTAFTER, 0)                       \
    X(igamma, IGAMMA, 0) X(igammac, IGAMMAC, 0)
#define BINARY_N(X)                                                                                           \
    X(logaddexp, LOGADDEXP, 0) X(logaddexp2, LOGADDEXP2, 0) X(maximum, MAXIMUM, 0) X(minimum, MINIMUM, 0)     \
    X(fmax, FMAX, 0) X(fmin, FMIN, 0)

#define DEF_BINARY(pyname, OP, NUM)                                                                          \
    static PyObject *fn_##pyname(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)               \
    {                                                                                                        \
        return binary_entry(CT_EW_##OP, #pyname, NUM, NULL, a, n, k, MODE_FUNC);                             \
    }                                                                                                        \
    static PyObject *meth_##pyname(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *k)          \
    {                                                                                                        \
        return binary_entry(CT_EW_##OP, #pyname, NUM, self, a, n, k, MODE_METHOD);                           \
    }                                                                                                        \
    static PyObject *meth_##pyname##_(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *k)       \
    {                                                                                                        \
        return binary_entry(CT_EW_##OP, #pyname "_", NUM, self, a, n, k, MODE_INPLACE);                      \
    }
BINARY_M(DEF_BINARY)
BINARY_N(DEF_BINARY)
#define DEF_SPECIAL_B(pyname, OP, NUM)                                                                       \
    static PyObject *fn_##pyname(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)               \
    {                                                                                                        \
        return binary_entry(CT_EW_##OP, #pyname, NUM, NULL, a, n, k, MODE_FUNC);                             \
    }
SPECIAL_B(DEF_SPECIAL_B)

/* torch.special's orthogonal polynomials f(x, n, *, out=None): x or n may be a number (not both),
 * one kernel row (ORTHO_POLY) with the kind as its parameter; float and double only, each reporting its
 * own kernel ("chebyshev_polynomial_t_cpu") for other dtypes. PyTorch gives them no derivative: their
 * outputs carry no history (autograd.c's never_recorded). X(python name, kind). */
#define SPECIAL_POLY(X)                                                                                      \
    X(chebyshev_polynomial_t, CT_SP_POLY_CHEBYSHEV_T) X(chebyshev_polynomial_u, CT_SP_POLY_CHEBYSHEV_T + 1)  \
    X(chebyshev_polynomial_v, CT_SP_POLY_CHEBYSHEV_T + 2) X(chebyshev_polynomial_w, CT_SP_POLY_CHEBYSHEV_T + 3) \
    X(shifted_chebyshev_polynomial_t, CT_SP_POLY_CHEBYSHEV_T + 4)                                            \
    X(shifted_chebyshev_polynomial_u, CT_SP_POLY_CHEBYSHEV_T + 5)                                            \
    X(shifted_chebyshev_polynomial_v, CT_SP_POLY_CHEBYSHEV_T + 6)                                            \
    X(shifted_chebyshev_polynomial_w, CT_SP_POLY_CHEBYSHEV_T + 7) X(hermite_polynomial_h, CT_SP_POLY_HERMITE_H) \
    X(hermite_polynomial_he, CT_SP_POLY_HERMITE_HE) X(laguerre_polynomial_l, CT_SP_POLY_LAGUERRE_L)          \
    X(legendre_polynomial_p, CT_SP_POLY_LEGENDRE_P)

static PyObject *poly_entry(int kind, const char *name, const char *kernel, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kw)
{
    static const char *const names[] = {"x", "n", "*out", NULL};
    PyObject *a[3] = {NULL, NULL, NULL};
    CtEwArg in[2];
    CtTensorObject *out;
    bool resize;
    if (ct_parse_args(name, args, nargs, kw, names, 2, a) < 0) {
        return NULL;
    }
    bool xt = CtTensor_Check(a[0]), nt = CtTensor_Check(a[1]);
    if (!(xt || is_number(a[0])) || !(nt || is_number(a[1])) || !(xt || nt)) {
        PyErr_Format(PyExc_TypeError,
                     "%s() received an invalid combination of arguments - got (%s, %s), but expected one of:\n"
                     " * (Tensor x, Tensor n, *, Tensor out = None)\n"
                     " * (Number x, Tensor n, *, Tensor out = None)\n"
                     " * (Tensor x, Number n, *, Tensor out = None)\n",
                     name, xt ? "Tensor" : Py_TYPE(a[0])->tp_name, nt ? "Tensor" : Py_TYPE(a[1])->tp_name);
        return NULL;
    }
    if (binary_operands(name, a[0], a[1], NUM_OTHER | NUM_SELF, in, false) < 0 ||
        call_output(MODE_FUNC, a[0], a[2], name, &out, &resize) < 0) {
        return NULL;
    }
    CtDType compute = ct_result_type(2, in);
    if (out != NULL && !ct_is_integral(compute, true) && check_cast(compute, out) < 0) {
        return NULL;
    }
    if (compute != CT_F32 && compute != CT_F64 && !ct_is_integral(compute, true)) {
        char buf[64];
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'",
                     device_kernel_name(kernel, ct_device_of(xt ? in[0].t : in[1].t), buf, sizeof(buf)),
                     ct_scalar_type_name(compute));
        return NULL;
    }
    CtOpParams p;
    memset(&p, 0, sizeof(p));
    p.f[0] = kind;
    return (PyObject *)run_op(CT_EW_ORTHO_POLY, in, out, &p, -1, resize);
}
#define DEF_SPECIAL_POLY(pyname, KIND)                                                                       \
    static PyObject *fn_special_##pyname(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)       \
    {                                                                                                        \
        return poly_entry(KIND, "special_" #pyname, #pyname "_cpu", a, n, k);                                \
    }
SPECIAL_POLY(DEF_SPECIAL_POLY)

/* special_airy_ai(x, *, out=None): torch.special's unary form, its argument named x */
static PyObject *fn_special_airy_ai(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"x", "*out", NULL};
    PyObject *a[2] = {NULL, NULL};
    CtEwArg in[1];
    CtTensorObject *out;
    bool resize;
    if (ct_parse_args("special_airy_ai", args, nargs, kw, names, 1, a) < 0 ||
        arg_operand(a[0], &in[0], "special_airy_ai", "x", 1, false) < 0 ||
        call_output(MODE_FUNC, a[0], a[1], "special_airy_ai", &out, &resize) < 0) {
        return NULL;
    }
    return (PyObject *)unary_op(CT_EW_AIRY_AI, in, out, resize);
}

/* add/sub/subtract(input, other, *, alpha=1, out=None) */
static PyObject *add_sub_entry(bool is_sub, const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kw, int mode)
{
    static const char *const names_fn[] = {"input", "other", "*alpha", "*out", NULL};
    static const char *const names_m[] = {"other", "*alpha", NULL};
    PyObject *a[4] = {NULL, NULL, NULL, NULL};
    CtEwArg in[2];
    CtTensorObject *out;
    CtScalar alpha;
    bool resize;
    if (parse_call(name, self, args, nargs, kw, names_fn, names_m, 2, a) < 0 ||
        binary_operands(name, a[0], a[1], NUM_ARITH, in, self != NULL) < 0 ||
        call_output(mode, a[0], a[3], name, &out, &resize) < 0) {
        return NULL;
    }
    if (a[2] != NULL && arg_number(a[2], &alpha, name, "alpha") < 0) {
        return NULL;
    }
    return (PyObject *)add_sub_op(is_sub, in, a[2] != NULL ? &alpha : NULL, out, resize);
}

/* rsub(input, other, *, alpha=1) = other - alpha * input */
static PyObject *fn_rsub(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "other", "*alpha", NULL};
    PyObject *a[3];
    CtEwArg in[2], swapped[2];
    CtScalar alpha;
    if (ct_parse_args("rsub", args, nargs, kw, names, 2, a) < 0 || binary_operands("rsub", a[0], a[1], NUM_OTHER, in, false) < 0 ||
        (a[2] != NULL && arg_number(a[2], &alpha, "rsub", "alpha") < 0)) {
        return NULL;
    }
    swapped[0] = in[1];
    swapped[1] = in[0];
    return (PyObject *)add_sub_op(true, swapped, a[2] != NULL ? &alpha : NULL, NULL, false);
}

/* div/divide(input, other, *, rounding_mode=None, out=None) */
static PyObject *div_entry(const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                           int mode)
{
    static const char *const names_fn[] = {"input", "other", "*rounding_mode", "*out", NULL};
    static const char *const names_m[] = {"other", "*rounding_mode", NULL};
    PyObject *a[4] = {NULL, NULL, NULL, NULL};
    CtEwArg in[2];
    CtTensorObject *out;
    bool resize;
    if (parse_call(name, self, args, nargs, kw, names_fn, names_m, 2, a) < 0 ||
        binary_operands(name, a[0], a[1], NUM_ARITH, in, self != NULL) < 0 ||
        call_output(mode, a[0], a[3], name, &out, &resize) < 0) {
        return NULL;
    }
    CtEwOp op = CT_EW_DIV;
    if (a[2] != NULL && a[2] != Py_None) {
        const char *s = PyUnicode_Check(a[2]) ? PyUnicode_AsUTF8(a[2]) : NULL;
        if (s != NULL && strcmp(s, "trunc") == 0) {
            op = CT_EW_DIV_TRUNC;
        } else if (s != NULL && strcmp(s, "floor") == 0) {
            op = CT_EW_DIV_FLOOR;
        } else if (s != NULL) {
            PyErr_Format(PyExc_RuntimeError,
                         "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'", s);
            return NULL;
        } else {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s(): argument 'rounding_mode' must be str, not %s", name,
                         Py_TYPE(a[2])->tp_name);
            return NULL;
        }
    }
    return (PyObject *)binary_op(op, in, out, resize);
}

/* float_power(input, exponent): computed in float64 */
static PyObject *float_power_entry(const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kw, int mode)
{
    static const char *const names_fn[] = {"input", "exponent", "*out", NULL};
    static const char *const names_m[] = {"exponent", NULL};
    PyObject *a[3] = {NULL, NULL, NULL};
    CtEwArg in[2];
    CtTensorObject *out;
    bool resize;
    if (parse_call(name, self, args, nargs, kw, names_fn, names_m, 2, a) < 0 ||
        binary_operands(name, a[0], a[1], NUM_OTHER | NUM_SELF, in, self != NULL) < 0 ||
        call_output(mode, a[0], a[2], name, &out, &resize) < 0) {
        return NULL;
    }
    if (mode == MODE_INPLACE && out->dtype != CT_F64) {
        PyErr_Format(PyExc_RuntimeError,
                     "the base given to float_power_ has dtype %s but the operation's result requires dtype Double",
                     ct_scalar_type_name(out->dtype));
        return NULL;
    }
    if (in[1].t == NULL) {
        return (PyObject *)pow_scalar_op(in, out, resize, CT_F64);
    }
    return (PyObject *)run_op(CT_EW_POW, in, out, NULL, CT_F64, resize);
}

/* --- Python: clamp family ---------------------------------------------------------------------------- */
/* A clamp bound: NULL/None (absent), a number or a tensor. Returns 1 present, 0 absent, -1 error. */
static int clamp_bound(PyObject *obj, CtEwArg *out, const char *fname, const char *argname)
{
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (CtTensor_Check(obj)) {
        out->t = (CtTensorObject *)obj;
        return 1;
    }
    if (is_number(obj)) {
        out->t = NULL;
        return number_to_scalar(obj, &out->s) < 0 ? -1 : 1;
    }
    PyErr_Format(PyExc_TypeError, "%s() received an invalid combination of arguments - got (Tensor, %s = %s)", fname,
                 argname, Py_TYPE(obj)->tp_name);
    return -1;
}

static CtTensorObject *clamp_op(const CtEwArg *x, PyObject *min_obj, PyObject *max_obj, CtTensorObject *out,
                                bool resize, const char *fname)
{
    CtEwArg in[3];
    in[0] = *x;
    int has_min = clamp_bound(min_obj, &in[1], fname, "min");
    int has_max = has_min < 0 ? -1 : clamp_bound(max_obj, &in[has_min ? 2 : 1], fname, "max");
    if (has_min < 0 || has_max < 0) {
        return NULL;
    }
    if (!has_min && !has_max) {
        PyErr_SetString(PyExc_RuntimeError, "torch.clamp: At least one of 'min' or 'max' must not be None");
        return NULL;
    }
    int n = 1 + has_min + has_max;
    bool scalars = in[1].t == NULL && (n == 2 || in[2].t == NULL);
    CtDType r = ct_result_type(n, in);
    if (r == CT_BOOL && (n == 3 || scalars)) {
        char name[64];
        const char *cpu_name = n == 3 ? (scalars ? "clamp_scalar_cpu" : "clamp_cpu")
                                      : (has_min ? "clamp_min_scalar_cpu" : "clamp_max_scalar_cpu");
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for 'Bool'",
                     device_kernel_name(cpu_name, ct_device_of(x->t), name, sizeof(name)));
        return NULL;
    }
    if (out != NULL && !resize && scalars && !ct_can_cast(r, out->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "result type %s can't be cast to the desired output type %s",
                     ct_scalar_type_name(r), ct_cpp_type_name(out->dtype));
        return NULL;
    }
    /* Python-number bounds: an integer bound beyond the dtype's range is a no-op on its own side
     * and an error on the other; a float bound must fit the float dtype. */
    for (int k = 1; k < n; k++) {
        if (in[k].t != NULL) {
            continue;
        }
        bool is_min = k == 1 && has_min;
        CtScalar *s = &in[k].s;
        if (ct_is_integral(r, false) && s->kind == CT_KIND_INT) {
            int bits = (int)ct_dtype_info[r].itemsize * 8;
            int64_t hi = r == CT_U8 ? 255 : (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
            int64_t lo = r == CT_U8 ? 0 : -hi - 1;
            int64_t v = s->v.i;
            if ((is_min && v > hi) || (!is_min && v < lo)) {
                PyErr_Format(PyExc_RuntimeError, "Clamp %s value %lld is outside the representable range of %s",
                             is_min ? "min" : "max", (long long)v, ct_scalar_type_name(r));
                return NULL;
            }
            s->v.i = v < lo ? lo : v > hi ? hi : v;
        } else if (ct_is_floating(r) && r != CT_F64) {
            double v = ct_scalar_to_double(s);
            double big = r == CT_F16 ? 65504.0 : r == CT_BF16 ? 3.3895313892515355e+38 : FLT_MAX;
            if (isfinite(v) && fabs(v) > big) {
                PyErr_Format(PyExc_RuntimeError, "value cannot be converted to type %s without overflow",
                             ct_cpp_type_name(r));
                return NULL;
            }
        }
    }
    CtEwOp op = n == 3 ? CT_EW_CLAMP : has_min ? CT_EW_CLAMP_MIN : CT_EW_CLAMP_MAX;
    return run_op(op, in, out, NULL, -1, resize);
}

/* clamp/clip(input, min=None, max=None, *, out=None) */
static PyObject *clamp_entry(const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                             int mode)
{
    static const char *const names_fn[] = {"input", "min", "max", "*out", NULL};
    static const char *const names_m[] = {"min", "max", NULL};
    PyObject *a[4] = {NULL, NULL, NULL, NULL};
    CtEwArg x;
    CtTensorObject *out;
    bool resize;
    if (parse_call(name, self, args, nargs, kw, names_fn, names_m, 1, a) < 0 ||
        arg_operand(a[0], &x, name, "input", 1, false) < 0 || call_output(mode, a[0], a[3], name, &out, &resize) < 0) {
        return NULL;
    }
    return (PyObject *)clamp_op(&x, a[1], a[2], out, resize, name);
}

/* clamp_min(input, min) / clamp_max(input, max) */
static PyObject *clamp_one_entry(bool is_max, const char *name, PyObject *self, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kw, int mode)
{
    static const char *const names_min_fn[] = {"input", "min", "*out", NULL};
    static const char *const names_min_m[] = {"min", NULL};
    static const char *const names_max_fn[] = {"input", "max", "*out", NULL};
    static const char *const names_max_m[] = {"max", NULL};
    PyObject *a[3] = {NULL, NULL, NULL};
    CtEwArg x;
    CtTensorObject *out;
    bool resize;
    if (parse_call(name, self, args, nargs, kw, is_max ? names_max_fn : names_min_fn,
                   is_max ? names_max_m : names_min_m, 2, a) < 0 ||
        arg_operand(a[0], &x, name, "input", 1, false) < 0 || call_output(mode, a[0], a[2], name, &out, &resize) < 0) {
        return NULL;
    }
    if (a[1] == Py_None) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Tensor or Number, not NoneType", name,
                     is_max ? "max" : "min");
        return NULL;
    }
    return (PyObject *)clamp_op(&x, is_max ? NULL : a[1], is_max ? a[1] : NULL, out, resize, name);
}

/* --- Python: where, lerp, addcmul, addcdiv ---------------------------------------------------------- */
static CtTensorObject *where_op(const CtEwArg *in, CtTensorObject *out, bool resize)
{
    CtDType cond = in[0].t->dtype;
    if (cond != CT_BOOL && cond != CT_U8) {
        PyErr_Format(PyExc_RuntimeError, "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                     ct_scalar_type_name(cond));
        return NULL;
    }
    /* A number operand must fit the result dtype, as PyTorch's checked Scalar conversion
     * (where(c, uint8_t, 300) raises); float16/bfloat16 results take it rounded to inf. */
    CtDType r = ct_result_type(2, in + 1);
    for (int k = 1; k < 3; k++) {
        if (in[k].t == NULL && r != CT_F16 && r != CT_BF16 && ct_check_scalar_fits(&in[k].s, r, true) < 0) {
            return NULL;
        }
    }
    if (cond == CT_BOOL) {
        return run_op(CT_EW_WHERE, in, out, NULL, -1, resize);
    }
    /* PyTorch still accepts a uint8 condition (deprecated): nonzero selects input */
    CtEwArg with_bool[3] = {in[0], in[1], in[2]};
    with_bool[0].t = ct_to(in[0].t, CT_BOOL, ct_device_of(in[0].t), false);
    if (with_bool[0].t == NULL) {
        return NULL;
    }
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "where received a uint8 condition tensor. This behavior is deprecated and will be removed in a "
                     "future version of PyTorch. Use a boolean condition instead.",
                     1) < 0) {
        Py_DECREF(with_bool[0].t);
        return NULL;
    }
    CtTensorObject *res = run_op(CT_EW_WHERE, with_bool, out, NULL, -1, resize);
    Py_DECREF(with_bool[0].t);
    return res;
}

/* where(condition, input, other, *, out=None); where(condition) is nonzero(as_tuple=True). */
static PyObject *fn_where(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"condition", "input", "other", "*out", NULL};
    PyObject *a[4];
    CtEwArg in[3];
    CtTensorObject *out;
    if (ct_parse_args("where", args, nargs, kw, names, 1, a) < 0) {
        return NULL;
    }
    if (a[1] == NULL && a[2] == NULL) {
        PyObject *nonzero = PyObject_GetAttrString(m, "nonzero");
        if (nonzero == NULL) {
            return NULL;
        }
        PyObject *pargs = PyTuple_Pack(1, a[0]);
        PyObject *kwargs = Py_BuildValue("{sO}", "as_tuple", Py_True);
        PyObject *r = pargs && kwargs ? PyObject_Call(nonzero, pargs, kwargs) : NULL;
        Py_XDECREF(pargs);
        Py_XDECREF(kwargs);
        Py_DECREF(nonzero);
        return r;
    }
    if (arg_operand(a[0], &in[0], "where", "condition", 1, false) < 0 ||
        arg_operand(a[1], &in[1], "where", "input", 2, true) < 0 || arg_operand(a[2], &in[2], "where", "other", 3, true) < 0 ||
        ct_arg_out(a[3], "where", &out) < 0) {
        return NULL;
    }
    return (PyObject *)where_op(in, out, out != NULL);
}

/* Tensor.where(condition, y) = where(condition, self, y) */
static PyObject *meth_where(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"condition", "other", NULL};
    PyObject *a[2];
    CtEwArg in[3];
    if (ct_parse_args("where", args, nargs, kw, names, 2, a) < 0 ||
        arg_operand(a[0], &in[0], "where", "condition", 1, false) < 0 ||
        arg_operand(a[1], &in[2], "where", "other", 2, true) < 0) {
        return NULL;
    }
    in[1].t = CT_TENSOR(self);
    return (PyObject *)where_op(in, NULL, false);
}

/* lerp(input, end, weight, *, out=None): all of one float dtype (a 0-d or number weight excepted) */
static PyObject *lerp_entry(const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                            int mode)
{
    static const char *const names_fn[] = {"input", "end", "weight", "*out", NULL};
    static const char *const names_m[] = {"end", "weight", NULL};
    PyObject *a[4] = {NULL, NULL, NULL, NULL};
    CtEwArg in[3];
    CtTensorObject *out;
    bool resize;
    if (parse_call(name, self, args, nargs, kw, names_fn, names_m, 3, a) < 0 ||
        arg_operand(a[0], &in[0], name, "input", 1, false) < 0 || arg_operand(a[1], &in[1], name, "end", 2, false) < 0 ||
        arg_operand(a[2], &in[2], name, "weight", 3, true) < 0 || call_output(mode, a[0], a[3], name, &out, &resize) < 0) {
        return NULL;
    }
    CtDType d = in[0].t->dtype;
    if (in[1].t->dtype != d) {
        PyErr_Format(PyExc_RuntimeError, "expected dtype %s for `end` but got dtype %s", ct_cpp_type_name(d),
                     ct_cpp_type_name(in[1].t->dtype));
        return NULL;
    }
    bool scalar_weight = in[2].t == NULL || in[2].t->ndim == 0;
    if (!scalar_weight && in[2].t->dtype != d) {
        PyErr_Format(PyExc_RuntimeError, "expected dtype %s for `weight` but got dtype %s", ct_cpp_type_name(d),
                     ct_cpp_type_name(in[2].t->dtype));
        return NULL;
    }
    if (!ct_is_floating(d)) {
        char name[64];
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'",
                     device_kernel_name(scalar_weight ? "lerp_kernel_scalar" : "lerp_kernel_tensor",
                                        ct_device_of(in[0].t), name, sizeof(name)),
                     ct_scalar_type_name(d));
        return NULL;
    }
    return (PyObject *)run_op(CT_EW_LERP, in, out, NULL, d, resize);
}

/* addcmul/addcdiv(input, tensor1, tensor2, *, value=1, out=None) */
static PyObject *addc_entry(bool is_div, const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kw, int mode)
{
    static const char *const names_fn[] = {"input", "tensor1", "tensor2", "*value", "*out", NULL};
    static const char *const names_m[] = {"tensor1", "tensor2", "*value", NULL};
    PyObject *a[5] = {NULL, NULL, NULL, NULL, NULL};
    CtEwArg in[3];
    CtTensorObject *out;
    CtScalar value = {CT_KIND_INT, {.i = 1}};
    bool resize;
    if (parse_call(name, self, args, nargs, kw, names_fn, names_m, 3, a) < 0 ||
        arg_operand(a[0], &in[0], name, "input", 1, false) < 0 || arg_operand(a[1], &in[1], name, "tensor1", 2, false) < 0 ||
        arg_operand(a[2], &in[2], name, "tensor2", 3, false) < 0 || call_output(mode, a[0], a[4], name, &out, &resize) < 0 ||
        (a[3] != NULL && arg_number(a[3], &value, name, "value") < 0)) {
        return NULL;
    }
    if (is_div && ct_is_integral(in[1].t->dtype, true) && ct_is_integral(in[2].t->dtype, true)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
                        "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                        "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                        "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                        "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
                        "for all dtypes.");
        return NULL;
    }
    CtOpParams p;
    memset(&p, 0, sizeof(p));
    p.f[0] = ct_scalar_to_double(&value);
    p.i[0] = ct_scalar_to_int(&value);
    return (PyObject *)run_op(is_div ? CT_EW_ADDCDIV : CT_EW_ADDCMUL, in, out, &p, -1, resize);
}

/* --- Python: wrappers for the special entries ------------------------------------------------------------ */
#define DEF_ENTRY_WRAPPERS(pyname, CALL)                                                                     \
    static PyObject *fn_##pyname(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)               \
    {                                                                                                        \
        return CALL(#pyname, NULL, a, n, k, MODE_FUNC);                                                       \
    }                                                                                                        \
    static PyObject *fn_##pyname##_(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)            \
    {                                                                                                        \
        return CALL(#pyname "_", NULL, a, n, k, MODE_FUNC_INPLACE);                                          \
    }                                                                                                        \
    static PyObject *meth_##pyname(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *k)          \
    {                                                                                                        \
        return CALL(#pyname, self, a, n, k, MODE_METHOD);                                                     \
    }                                                                                                        \
    static PyObject *meth_##pyname##_(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *k)       \
    {                                                                                                        \
        return CALL(#pyname "_", self, a, n, k, MODE_INPLACE);                                                \
    }

#define CALL_ADD(name, s, a, n, k, mode) add_sub_entry(false, name, s, a, n, k, mode)
#define CALL_SUB(name, s, a, n, k, mode) add_sub_entry(true, name, s, a, n, k, mode)
#define CALL_CLAMP_MIN(name, s, a, n, k, mode) clamp_one_entry(false, name, s, a, n, k, mode)
#define CALL_CLAMP_MAX(name, s, a, n, k, mode) clamp_one_entry(true, name, s, a, n, k, mode)
#define CALL_ADDCMUL(name, s, a, n, k, mode) addc_entry(false, name, s, a, n, k, mode)
#define CALL_ADDCDIV(name, s, a, n, k, mode) addc_entry(true, name, s, a, n, k, mode)
DEF_ENTRY_WRAPPERS(add, CALL_ADD)
DEF_ENTRY_WRAPPERS(sub, CALL_SUB)
DEF_ENTRY_WRAPPERS(subtract, CALL_SUB)
DEF_ENTRY_WRAPPERS(div, div_entry)
DEF_ENTRY_WRAPPERS(divide, div_entry)
DEF_ENTRY_WRAPPERS(float_power, float_power_entry)
DEF_ENTRY_WRAPPERS(clamp, clamp_entry)
DEF_ENTRY_WRAPPERS(clip, clamp_entry)
DEF_ENTRY_WRAPPERS(clamp_min, CALL_CLAMP_MIN)
DEF_ENTRY_WRAPPERS(clamp_max, CALL_CLAMP_MAX)
DEF_ENTRY_WRAPPERS(lerp, lerp_entry)
DEF_ENTRY_WRAPPERS(addcmul, CALL_ADDCMUL)
DEF_ENTRY_WRAPPERS(addcdiv, CALL_ADDCDIV)
DEF_ENTRY_WRAPPERS(round, round_entry)
DEF_ENTRY_WRAPPERS(nan_to_num, nan_to_num_entry)
DEF_ENTRY_WRAPPERS(logit, logit_entry)
DEF_ENTRY_WRAPPERS(polygamma, polygamma_entry)

/* --- Python: result_type, can_cast ------------------------------------------------------------------------ */
static PyObject *fn_result_type(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"tensor", "other", NULL};
    PyObject *a[2];
    CtEwArg in[2];
    if (ct_parse_args("result_type", args, nargs, kw, names, 2, a) < 0) {
        return NULL;
    }
    for (int k = 0; k < 2; k++) {
        if (CtTensor_Check(a[k])) {
            in[k].t = CT_TENSOR(a[k]);
        } else if (is_number(a[k])) {
            in[k].t = NULL;
            if (number_to_scalar(a[k], &in[k].s) < 0) {
                return NULL;
            }
        } else {
            PyErr_Format(PyExc_TypeError,
                         "result_type() received an invalid combination of arguments - got (%s, %s), but expected "
                         "one of: (Tensor tensor, Tensor other), (Number scalar, Tensor tensor), (Tensor tensor, "
                         "Number other), (Number scalar1, Number scalar2)",
                         Py_TYPE(a[0])->tp_name, Py_TYPE(a[1])->tp_name);
            return NULL;
        }
    }
    return Py_NewRef(ct_dtype_object(ct_result_type(2, in)));
}

static PyObject *fn_can_cast(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"from_", "to", NULL};
    PyObject *a[2];
    CtDType from, to;
    if (ct_parse_args("can_cast", args, nargs, kw, names, 2, a) < 0 || ct_dtype_from_object(a[0], &from) < 0 ||
        ct_dtype_from_object(a[1], &to) < 0) {
        return NULL;
    }
    return PyBool_FromLong(ct_can_cast(from, to));
}

/* --- temporary elision ------------------------------------------------------------------------------------
 * In `a * b + c` on large tensors the product is a temporary that only the interpreter's value
 * stack holds, so the sum can be written into it instead of into a fresh buffer: one allocation
 * and one stream of memory traffic less (NumPy does the same). A reference count of 1 proves
 * nothing when the caller is C code that still uses its reference, so the elision also requires
 * every C frame between the slot and the interpreter loop to belong to Python itself (NumPy's
 * rule too); anything else (Cython, a C type's slot delegating to a tensor it owns) disables it. */
#define CT_ELIDE_MIN_BYTES (256 * 1024) /* below this the check costs more than it saves */

#ifdef CT_HAVE_BACKTRACE
static bool called_from_interpreter(void)
{
    static int state = 0; /* 0 unknown, 1 usable, -1 unusable */
    static void *python_base, *eval_loop, *own_base;
    Dl_info info;
    if (state == 0) {
        void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
        state = -1;
        if (eval != NULL && dladdr(eval, &info) && info.dli_saddr == eval) {
            python_base = info.dli_fbase;
            eval_loop = eval;
            if (dladdr((void *)called_from_interpreter, &info)) {
                own_base = info.dli_fbase;
                state = 1;
            }
        }
    }
    if (state < 0) {
        return false;
    }
    void *frames[32];
    int n = backtrace(frames, 32), i = 0;
    while (i < n && dladdr(frames[i], &info) && info.dli_fbase == own_base) {
        i++; /* our own frames */
    }
    for (; i < n; i++) {
        if (!dladdr(frames[i], &info) || info.dli_fbase != python_base) {
            return false;
        }
        if (info.dli_saddr == eval_loop) {
            return true;
        }
    }
    return false;
}
#else
static bool called_from_interpreter(void) { return false; }
#endif

/* obj may receive the result of a binary op in place: a plain CPU tensor of the result's dtype
 * and shape whose storage nothing else sees, held only by the interpreter's stack. */
static bool elidable(PyObject *obj, const CtEwArg *in)
{
    if (Py_REFCNT(obj) != 1 || !Py_IS_TYPE(obj, CtTensor_Type)) {
        return false;
    }
    CtTensorObject *t = CT_TENSOR(obj);
    if (t->requires_grad || t->grad_fn != NULL || t->hooks != NULL || t->weakreflist != NULL ||
        Py_REFCNT(t->storage) != 1 || t->storage->owner != NULL || ct_device_of(t).type != CT_DEV_CPU ||
        (int64_t)ct_itemsize(t) * ct_numel(t) < CT_ELIDE_MIN_BYTES || !ct_is_contiguous(t)) {
        return false;
    }
    const CtTensorObject *other = in[0].t == t ? in[1].t : in[0].t;
    if (other != NULL && other != t && (other->ndim > t->ndim || other->requires_grad || other->grad_fn != NULL)) {
        return false; /* autograd may save the operands of the op being recorded */
    }
    for (int k = 0; other != NULL && other != t && k < other->ndim; k++) {
        int64_t size = other->sizes[other->ndim - 1 - k];
        if (size != 1 && size != t->sizes[t->ndim - 1 - k]) {
            return false;
        }
    }
    return ct_result_type(2, in) == t->dtype;
}

/* The temporary to write a + b, a - b, a * b, a / b into, or NULL. */
static CtTensorObject *elision_target(CtEwOp op, PyObject *x, PyObject *y, const CtEwArg *in)
{
    if (op != CT_EW_ADD && op != CT_EW_SUB && op != CT_EW_MUL && op != CT_EW_DIV) {
        return NULL;
    }
    PyObject *target = elidable(x, in) ? x : elidable(y, in) ? y : NULL;
    if (target == NULL || (op == CT_EW_DIV && !ct_is_floating(CT_TENSOR(target)->dtype)) ||
        !called_from_interpreter()) {
        return NULL;
    }
    return CT_TENSOR(target);
}

/* --- type slots -------------------------------------------------------------------------------------------- */
/* 1: obj is an operand; 0: not one (the slot returns NotImplemented); -1: error. */
static int slot_operand(PyObject *obj, CtEwArg *out)
{
    if (CtTensor_Check(obj)) {
        out->t = CT_TENSOR(obj);
        return 1;
    }
    if (is_number(obj)) {
        out->t = NULL;
        return number_to_scalar(obj, &out->s) < 0 ? -1 : 1;
    }
    return 0;
}

static PyObject *slot_binary(CtEwOp op, PyObject *x, PyObject *y, bool inplace)
{
    CtEwArg in[2];
    int r = slot_operand(x, &in[0]);
    if (r > 0) {
        r = slot_operand(y, &in[1]);
    }
    if (r < 0) {
        return NULL;
    }
    if (r == 0) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (op == CT_EW_DIV && in[0].t == NULL) {
        /* number / tensor is reciprocal(tensor) * number, as PyTorch's Tensor.__rtruediv__ */
        CtEwArg rec_in[1] = {in[1]};
        CtTensorObject *rec = unary_op(CT_EW_RECIPROCAL, rec_in, NULL, false);
        if (rec == NULL) {
            return NULL;
        }
        CtEwArg mul_in[2] = {{rec}, in[0]};
        CtTensorObject *r = binary_op(CT_EW_MUL, mul_in, NULL, false);
        Py_DECREF(rec);
        return (PyObject *)r;
    }
    CtTensorObject *out = inplace ? CT_TENSOR(x) : elision_target(op, x, y, in);
    if (op == CT_EW_ADD || op == CT_EW_SUB) {
        return (PyObject *)add_sub_op(op == CT_EW_SUB, in, NULL, out, false);
    }
    return (PyObject *)binary_op(op, in, out, false);
}

#define DEF_SLOT(slotname, OP)                                                                               \
    static PyObject *slot_##slotname(PyObject *x, PyObject *y) { return slot_binary(CT_EW_##OP, x, y, false); } \
    static PyObject *slot_inplace_##slotname(PyObject *x, PyObject *y) { return slot_binary(CT_EW_##OP, x, y, true); }
DEF_SLOT(add, ADD)
DEF_SLOT(sub, SUB)
DEF_SLOT(mul, MUL)
DEF_SLOT(truediv, DIV)
DEF_SLOT(floordiv, DIV_FLOOR)
DEF_SLOT(mod, REMAINDER)
DEF_SLOT(and, BITWISE_AND)
DEF_SLOT(or, BITWISE_OR)
DEF_SLOT(xor, BITWISE_XOR)
DEF_SLOT(lshift, LSHIFT)
DEF_SLOT(rshift, RSHIFT)

static PyObject *slot_pow(PyObject *x, PyObject *y, PyObject *z)
{
    if (z != Py_None) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return slot_binary(CT_EW_POW, x, y, false);
}
static PyObject *slot_inplace_pow(PyObject *x, PyObject *y, PyObject *z)
{
    if (z != Py_None) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return slot_binary(CT_EW_POW, x, y, true);
}

static PyObject *slot_neg(PyObject *x)
{
    CtEwArg in[1] = {{CT_TENSOR(x)}};
    return (PyObject *)unary_op(CT_EW_NEG, in, NULL, false);
}
static PyObject *slot_abs(PyObject *x)
{
    CtEwArg in[1] = {{CT_TENSOR(x)}};
    return (PyObject *)unary_op(CT_EW_ABS, in, NULL, false);
}
static PyObject *slot_pos(PyObject *x) { return positive_impl(x); }
static PyObject *slot_invert(PyObject *x)
{
    if (!ct_is_integral(CT_TENSOR(x)->dtype, true)) {
        PyErr_SetString(PyExc_TypeError, "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
        return NULL;
    }
    CtEwArg in[1] = {{CT_TENSOR(x)}};
    return (PyObject *)unary_op(CT_EW_BITWISE_NOT, in, NULL, false);
}

static PyObject *slot_richcompare(PyObject *x, PyObject *y, int cmp)
{
    static const CtEwOp ops[] = {[Py_LT] = CT_EW_LT, [Py_LE] = CT_EW_LE, [Py_EQ] = CT_EW_EQ,
                                 [Py_NE] = CT_EW_NE, [Py_GT] = CT_EW_GT, [Py_GE] = CT_EW_GE};
    return slot_binary(ops[cmp], x, y, false);
}

PyType_Slot ct_elementwise_tensor_slots[] = {
    {Py_nb_add, slot_add},
    {Py_nb_subtract, slot_sub},
    {Py_nb_multiply, slot_mul},
    {Py_nb_true_divide, slot_truediv},
    {Py_nb_floor_divide, slot_floordiv},
    {Py_nb_remainder, slot_mod},
    {Py_nb_power, slot_pow},
    {Py_nb_and, slot_and},
    {Py_nb_or, slot_or},
    {Py_nb_xor, slot_xor},
    {Py_nb_lshift, slot_lshift},
    {Py_nb_rshift, slot_rshift},
    {Py_nb_inplace_add, slot_inplace_add},
    {Py_nb_inplace_subtract, slot_inplace_sub},
    {Py_nb_inplace_multiply, slot_inplace_mul},
    {Py_nb_inplace_true_divide, slot_inplace_truediv},
    {Py_nb_inplace_floor_divide, slot_inplace_floordiv},
    {Py_nb_inplace_remainder, slot_inplace_mod},
    {Py_nb_inplace_power, slot_inplace_pow},
    {Py_nb_inplace_and, slot_inplace_and},
    {Py_nb_inplace_or, slot_inplace_or},
    {Py_nb_inplace_xor, slot_inplace_xor},
    {Py_nb_inplace_lshift, slot_inplace_lshift},
    {Py_nb_inplace_rshift, slot_inplace_rshift},
    {Py_nb_negative, slot_neg},
    {Py_nb_positive, slot_pos},
    {Py_nb_absolute, slot_abs},
    {Py_nb_invert, slot_invert},
    {Py_tp_richcompare, slot_richcompare},
    {0, NULL},
};

/* --- method tables ------------------------------------------------------------------------------------------ */
#define FK CT_METH_FK
#define M_ENTRY(pyname, doc) {#pyname, CT_FASTCALL(meth_##pyname), FK, doc},
#define M_ENTRY_(pyname, doc) {#pyname "_", CT_FASTCALL(meth_##pyname##_), FK, "in-place " doc},
#define F_ENTRY(pyname, doc) {#pyname, CT_FASTCALL(fn_##pyname), FK, doc},
#define F_ENTRY_(pyname, doc) {#pyname "_", CT_FASTCALL(fn_##pyname##_), FK, "in-place " doc},

#define UNARY_DOC(pyname) #pyname "(input, *, out=None) -> Tensor"
#define BINARY_DOC(pyname) #pyname "(input, other, *, out=None) -> Tensor"
#define TM_UNARY_FM(pyname, OP) M_ENTRY(pyname, UNARY_DOC(pyname)) M_ENTRY_(pyname, UNARY_DOC(pyname))
#define TM_UNARY_N(pyname, OP) M_ENTRY(pyname, UNARY_DOC(pyname))
#define MM_UNARY_FM(pyname, OP) F_ENTRY(pyname, UNARY_DOC(pyname)) F_ENTRY_(pyname, UNARY_DOC(pyname))
#define MM_UNARY_N(pyname, OP) F_ENTRY(pyname, UNARY_DOC(pyname))
#define TM_BINARY_M(pyname, OP, NUM) M_ENTRY(pyname, BINARY_DOC(pyname)) M_ENTRY_(pyname, BINARY_DOC(pyname))
#define TM_BINARY_N(pyname, OP, NUM) M_ENTRY(pyname, BINARY_DOC(pyname))
#define MM_BINARY(pyname, OP, NUM) F_ENTRY(pyname, BINARY_DOC(pyname))
#define MM_SPECIAL_POLY(pyname, KIND) F_ENTRY(special_##pyname, "special_" #pyname "(x, n, *, out=None) -> Tensor")
#define TM_SPECIAL(pyname, doc) M_ENTRY(pyname, doc) M_ENTRY_(pyname, doc)

/* --- isclose, allclose, equal -------------------------------------------------------------- */
/* isclose: a == b, or |a - b| finite and <= atol + |rtol * b| (and nan == nan with equal_nan),
 * composed of elementwise kernels; integer inputs compare in float64. */
static CtTensorObject *ct_isclose(CtTensorObject *a, CtTensorObject *b, double rtol, double atol, bool equal_nan)
{
    if (a->dtype != b->dtype) {
        PyErr_Format(PyExc_RuntimeError, "%s did not match %s", ct_scalar_type_name(a->dtype),
                     ct_scalar_type_name(b->dtype));
        return NULL;
    }
    if (rtol < 0 || atol < 0) {
        char value[32];
        snprintf(value, sizeof(value), "%g", rtol < 0 ? rtol : atol);
        PyErr_Format(PyExc_RuntimeError, "%s must be greater than or equal to zero, but got %s",
                     rtol < 0 ? "rtol" : "atol", value);
        return NULL;
    }
    enum { N = 10 };
    CtTensorObject *tmp[N] = {NULL}; /* every temporary; the result is the last one set */
    CtTensorObject *close = NULL;
    bool floating = ct_is_floating(a->dtype);
    CtTensorObject *x = floating ? (CtTensorObject *)Py_NewRef(a) : ct_to(a, CT_F64, ct_device_of(a), false);
    CtTensorObject *y = floating ? (CtTensorObject *)Py_NewRef(b) : ct_to(b, CT_F64, ct_device_of(b), false);
    if (x != NULL && y != NULL && (tmp[0] = ct_binary(CT_EW_EQ, x, y)) != NULL &&
        (tmp[1] = ct_sub(x, y)) != NULL && (tmp[2] = ct_unary(CT_EW_ABS, tmp[1])) != NULL &&     /* |a - b| */
        (tmp[3] = ct_mul_scalar(y, rtol)) != NULL && (tmp[4] = ct_unary(CT_EW_ABS, tmp[3])) != NULL &&
        (tmp[5] = ct_add_scalar(tmp[4], atol)) != NULL &&                                           /* allowed */
        (tmp[6] = ct_binary(CT_EW_LE, tmp[2], tmp[5])) != NULL && (tmp[7] = ct_unary(CT_EW_ISFINITE, tmp[2])) != NULL &&
        (tmp[8] = ct_binary(CT_EW_LOGICAL_AND, tmp[6], tmp[7])) != NULL &&
        (tmp[9] = ct_binary(CT_EW_LOGICAL_OR, tmp[0], tmp[8])) != NULL) {
        close = (CtTensorObject *)Py_NewRef(tmp[9]);
    }
    if (close != NULL && equal_nan) {
        CtTensorObject *na = ct_unary(CT_EW_ISNAN, x), *nb = na ? ct_unary(CT_EW_ISNAN, y) : NULL;
        CtTensorObject *both = nb ? ct_binary(CT_EW_LOGICAL_AND, na, nb) : NULL;
        Py_SETREF(close, both ? ct_binary(CT_EW_LOGICAL_OR, close, both) : NULL);
        Py_XDECREF(na);
        Py_XDECREF(nb);
        Py_XDECREF(both);
    }
    for (int i = 0; i < N; i++) {
        Py_XDECREF(tmp[i]);
    }
    Py_XDECREF(x);
    Py_XDECREF(y);
    return close;
}

static CtTensorObject *isclose_args(const char *fname, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames)
{
    static const char *const fn_names[] = {"input", "other", "rtol", "atol", "equal_nan", NULL};
    PyObject *a[5];
    if (ct_parse_args(fname, args, nargs, kwnames, self ? fn_names + 1 : fn_names, self ? 1 : 2,
                      self ? a + 1 : a) < 0) {
        return NULL;
    }
    if (self != NULL) {
        a[0] = self;
    }
    double rtol = 1e-05, atol = 1e-08;
    bool equal_nan = false;
    for (int i = 0; i < 2; i++) {
        if (!CtTensor_Check(a[i])) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname,
                         fn_names[i], i + 1, Py_TYPE(a[i])->tp_name);
            return NULL;
        }
    }
    if ((a[2] != NULL && ct_arg_double(a[2], &rtol) < 0) || (a[3] != NULL && ct_arg_double(a[3], &atol) < 0) ||
        (a[4] != NULL && ct_arg_bool(a[4], &equal_nan) < 0)) {
        return NULL;
    }
    CtTensorObject *pair[2] = {CT_TENSOR(a[0]), CT_TENSOR(a[1])};
    CtDevice device;
    if (ct_check_same_device(2, pair, true, &device) < 0) {
        return NULL;
    }
    return ct_isclose(pair[0], pair[1], rtol, atol, equal_nan);
}

/* all of a bool tensor, as a Python bool */
static PyObject *all_as_bool(CtTensorObject *t)
{
    if (t == NULL) {
        return NULL;
    }
    bool dims[CT_MAX_DIMS];
    for (int i = 0; i < CT_MAX_DIMS; i++) {
        dims[i] = true;
    }
    CtTensorObject *all = ct_all(t, dims, false);
    Py_DECREF(t);
    CtScalar v;
    int rc = all != NULL ? ct_item(all, &v) : -1;
    Py_XDECREF(all);
    return rc < 0 ? NULL : PyBool_FromLong(v.v.b);
}

static PyObject *fn_isclose(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    return (PyObject *)isclose_args("isclose", NULL, args, nargs, kw);
}
static PyObject *meth_isclose(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    return (PyObject *)isclose_args("isclose", self, args, nargs, kw);
}
static PyObject *fn_allclose(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    return all_as_bool(isclose_args("allclose", NULL, args, nargs, kw));
}
static PyObject *meth_allclose(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    return all_as_bool(isclose_args("allclose", self, args, nargs, kw));
}

/* equal(input, other): same shape and the same values (after type promotion) */
static PyObject *equal_impl(PyObject *x, PyObject *y)
{
    if (!CtTensor_Check(x) || !CtTensor_Check(y)) {
        PyErr_Format(PyExc_TypeError, "equal(): argument 'other' (position 2) must be Tensor, not %s",
                     Py_TYPE(CtTensor_Check(x) ? y : x)->tp_name);
        return NULL;
    }
    CtTensorObject *a = CT_TENSOR(x), *b = CT_TENSOR(y), *pair[2] = {a, b};
    CtDevice device;
    if (ct_check_same_device(2, pair, false, &device) < 0) {
        return NULL;
    }
    if (a->ndim != b->ndim || memcmp(a->sizes, b->sizes, sizeof(int64_t) * a->ndim) != 0) {
        Py_RETURN_FALSE;
    }
    return all_as_bool(ct_binary(CT_EW_EQ, a, b));
}
static PyObject *fn_equal(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "other", NULL};
    PyObject *a[2];
    return ct_parse_args("equal", args, nargs, kw, names, 2, a) < 0 ? NULL : equal_impl(a[0], a[1]);
}
static PyObject *meth_equal(PyObject *self, PyObject *other) { return equal_impl(self, other); }

PyMethodDef ct_elementwise_tensor_methods[] = {
    {"isclose", CT_FASTCALL(meth_isclose), FK, "isclose(other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor"},
    {"allclose", CT_FASTCALL(meth_allclose), FK, "allclose(other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool"},
    {"equal", meth_equal, METH_O, "equal(other) -> bool: same shape and values"},
    UNARY_FM(TM_UNARY_FM) UNARY_M(TM_UNARY_FM) UNARY_N(TM_UNARY_N)
    BINARY_M(TM_BINARY_M) BINARY_N(TM_BINARY_N)
    TM_SPECIAL(add, "add(other, *, alpha=1) -> Tensor")
    TM_SPECIAL(sub, "sub(other, *, alpha=1) -> Tensor")
    TM_SPECIAL(subtract, "subtract(other, *, alpha=1) -> Tensor")
    TM_SPECIAL(div, "div(other, *, rounding_mode=None) -> Tensor")
    TM_SPECIAL(divide, "divide(other, *, rounding_mode=None) -> Tensor")
    TM_SPECIAL(float_power, "float_power(exponent) -> Tensor (float64)")
    TM_SPECIAL(clamp, "clamp(min=None, max=None) -> Tensor")
    TM_SPECIAL(clip, "clip(min=None, max=None) -> Tensor")
    TM_SPECIAL(clamp_min, "clamp_min(min) -> Tensor")
    TM_SPECIAL(clamp_max, "clamp_max(max) -> Tensor")
    TM_SPECIAL(lerp, "lerp(end, weight) -> Tensor")
    TM_SPECIAL(addcmul, "addcmul(tensor1, tensor2, *, value=1) -> Tensor")
    TM_SPECIAL(addcdiv, "addcdiv(tensor1, tensor2, *, value=1) -> Tensor")
    TM_SPECIAL(round, "round(*, decimals=0) -> Tensor")
    TM_SPECIAL(nan_to_num, "nan_to_num(nan=0.0, posinf=None, neginf=None) -> Tensor")
    TM_SPECIAL(logit, "logit(eps=None) -> Tensor")
    TM_SPECIAL(polygamma, "polygamma(n) -> Tensor")
    {"where", CT_FASTCALL(meth_where), FK, "where(condition, y) -> Tensor: self where condition else y"},
    {"positive", meth_positive, METH_NOARGS, "positive() -> self"},
    {NULL},
};

PyMethodDef ct_elementwise_module_methods[] = {
    {"isclose", CT_FASTCALL(fn_isclose), FK, "isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor"},
    {"allclose", CT_FASTCALL(fn_allclose), FK, "allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool"},
    {"equal", CT_FASTCALL(fn_equal), FK, "equal(input, other) -> bool: same shape and values"},
    UNARY_FM(MM_UNARY_FM) UNARY_M(MM_UNARY_N) UNARY_N(MM_UNARY_N)
    BINARY_M(MM_BINARY) BINARY_N(MM_BINARY)
    SPECIAL_U(MM_UNARY_N) SPECIAL_B(MM_BINARY)
    SPECIAL_POLY(MM_SPECIAL_POLY)
    F_ENTRY(special_airy_ai, "special_airy_ai(x, *, out=None) -> Tensor")
    F_ENTRY(add, "add(input, other, *, alpha=1, out=None) -> Tensor")
    F_ENTRY(sub, "sub(input, other, *, alpha=1, out=None) -> Tensor")
    F_ENTRY(subtract, "subtract(input, other, *, alpha=1, out=None) -> Tensor")
    F_ENTRY(rsub, "rsub(input, other, *, alpha=1) -> Tensor: other - alpha * input")
    F_ENTRY(div, "div(input, other, *, rounding_mode=None, out=None) -> Tensor")
    F_ENTRY(divide, "divide(input, other, *, rounding_mode=None, out=None) -> Tensor")
    F_ENTRY(float_power, "float_power(input, exponent, *, out=None) -> Tensor (float64)")
    F_ENTRY(clamp, "clamp(input, min=None, max=None, *, out=None) -> Tensor")
    F_ENTRY_(clamp, "clamp_(input, min=None, max=None)")
    F_ENTRY(clip, "clip(input, min=None, max=None, *, out=None) -> Tensor")
    F_ENTRY_(clip, "clip_(input, min=None, max=None)")
    F_ENTRY(clamp_min, "clamp_min(input, min) -> Tensor")
    F_ENTRY_(clamp_min, "clamp_min_(input, min)")
    F_ENTRY(clamp_max, "clamp_max(input, max) -> Tensor")
    F_ENTRY_(clamp_max, "clamp_max_(input, max)")
    F_ENTRY(lerp, "lerp(input, end, weight, *, out=None) -> Tensor")
    F_ENTRY(addcmul, "addcmul(input, tensor1, tensor2, *, value=1, out=None) -> Tensor")
    F_ENTRY(addcdiv, "addcdiv(input, tensor1, tensor2, *, value=1, out=None) -> Tensor")
    F_ENTRY(round, "round(input, *, decimals=0, out=None) -> Tensor")
    F_ENTRY_(round, "round_(input, *, decimals=0)")
    F_ENTRY(nan_to_num, "nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None) -> Tensor")
    F_ENTRY_(nan_to_num, "nan_to_num_(input, nan=0.0, posinf=None, neginf=None)")
    F_ENTRY(logit, "logit(input, eps=None, *, out=None) -> Tensor")
    F_ENTRY_(logit, "logit_(input, eps=None)")
    F_ENTRY(polygamma, "polygamma(n, input, *, out=None) -> Tensor")
    F_ENTRY(where, "where(condition, input, other, *, out=None) -> Tensor")
    F_ENTRY(gelu, "gelu(input, approximate='none') -> Tensor (torch.nn.functional.gelu)")
    F_ENTRY(silu, "silu(input) -> Tensor (torch.nn.functional.silu)")
    F_ENTRY(softplus, "softplus(input, beta=1, threshold=20) -> Tensor (torch.nn.functional.softplus)")
    F_ENTRY(result_type, "result_type(tensor, other) -> dtype: the dtype of an op on both")
    F_ENTRY(can_cast, "can_cast(from_, to) -> bool: whether PyTorch's casting rules allow it")
    {"positive", fn_positive, METH_O, "positive(input) -> input"},
    {NULL},
};
