/* elementwise.h: the elementwise op family: the op list, the device kernel table, and the C
 * entry points that other families (autograd, nn, optim) call.
 *
 * The front end (ops_elementwise.c) does all device-neutral work: type promotion, broadcasting,
 * output allocation and checks. It then builds a CtIter (operand 0 = output) and calls the
 * device's CtElementwiseKernels. The CPU implementation is elementwise_cpu.c; the scalar math
 * of every op is in scalar_math.h, shared with CUDA. */
#ifndef CTORCH_ELEMENTWISE_H
#define CTORCH_ELEMENTWISE_H

#include "iter.h"

/* --- the ops ---------------------------------------------------------------------------------
 * X(NAME, arity, domain, flags, kernel name in PyTorch's "... not implemented for 'Bool'" error)
 * domain: which compute dtypes have a kernel (CT_EW_DOM_*).
 * flags:
 *   CT_EW_INT_TO_FLOAT  bool/integer inputs are computed in the default float dtype (exp, /)
 *   CT_EW_OUT_BOOL      the result is bool (comparisons, isnan, logical ops)
 *   CT_EW_COND          operand 1 is a bool condition, outside type promotion (where)
 *   CT_EW_INT_DIV       integer kernels detect division by zero (RuntimeError "ZeroDivisionError")
 *   CT_EW_OPMATH_SCALARS  host scalars go to the acc type unrounded (float16 * 0.3 multiplies by
 *                       0.3f, not by float16(0.3)), as PyTorch's CPU kernels for mul, div, lerp
 * Params (CtEwCall.params) used by: ADD_ALPHA/SUB_ALPHA (alpha), ADDCMUL/ADDCDIV (value),
 * ROUND_DECIMALS (10^|decimals|, decimals < 0), NAN_TO_NUM (nan, posinf, neginf),
 * SOFTPLUS (beta, threshold). */
#define CT_EW_DOM_BOOL 1
#define CT_EW_DOM_INT 2
#define CT_EW_DOM_FLOAT 4
#define CT_EW_ALL (CT_EW_DOM_BOOL | CT_EW_DOM_INT | CT_EW_DOM_FLOAT)
#define CT_EW_NUM (CT_EW_DOM_INT | CT_EW_DOM_FLOAT)
#define CT_EW_INTB (CT_EW_DOM_BOOL | CT_EW_DOM_INT)
#define CT_EW_INT CT_EW_DOM_INT
#define CT_EW_FLT CT_EW_DOM_FLOAT

#define CT_EW_INT_TO_FLOAT 1
#define CT_EW_OUT_BOOL 2
#define CT_EW_COND 4
#define CT_EW_INT_DIV 8
#define CT_EW_OPMATH_SCALARS 16

#define CT_EW_OP_LIST(X)                                                   \
    /* unary */                                                            \
    X(NEG, 1, CT_EW_NUM, 0, "neg_cpu")                                     \
    X(ABS, 1, CT_EW_NUM, 0, "abs_cpu")                                     \
    X(SIGN, 1, CT_EW_ALL, 0, "sign_cpu")                                   \
    X(SQUARE, 1, CT_EW_NUM, 0, "square_cpu")                               \
    X(CUBE, 1, CT_EW_FLT, 0, "pow")                                        \
    X(INV_SQUARE, 1, CT_EW_FLT, 0, "pow")                                  \
    X(RELU, 1, CT_EW_NUM, 0, "relu_cpu")                                   \
    X(FLOOR, 1, CT_EW_NUM, 0, "floor_vml_cpu")                             \
    X(CEIL, 1, CT_EW_NUM, 0, "ceil_vml_cpu")                               \
    X(ROUND, 1, CT_EW_NUM, 0, "round_vml_cpu")                             \
    X(TRUNC, 1, CT_EW_NUM, 0, "trunc_vml_cpu")                             \
    X(FRAC, 1, CT_EW_FLT, 0, "frac_cpu")                                   \
    X(ROUND_DECIMALS, 1, CT_EW_FLT, 0, "round_cpu")                        \
    X(EXP, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "exp_vml_cpu")                \
    X(EXP2, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "exp2_cpu")                  \
    X(EXPM1, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "expm1_vml_cpu")            \
    X(LOG, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "log_vml_cpu")                \
    X(LOG2, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "log2_vml_cpu")              \
    X(LOG10, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "log10_vml_cpu")            \
    X(LOG1P, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "log1p_vml_cpu")            \
    X(SQRT, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "sqrt_vml_cpu")              \
    X(RSQRT, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "rsqrt_cpu")                \
    X(RECIPROCAL, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "reciprocal_cpu")      \
    X(SIN, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "sin_vml_cpu")                \
    X(COS, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "cos_vml_cpu")                \
    X(TAN, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "tan_vml_cpu")                \
    X(ASIN, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "asin_vml_cpu")              \
    X(ACOS, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "acos_vml_cpu")              \
    X(ATAN, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "atan_vml_cpu")              \
    X(SINH, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "sinh_vml_cpu")              \
    X(COSH, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "cosh_vml_cpu")              \
    X(TANH, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "tanh_vml_cpu")              \
    X(ASINH, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "asinh_cpu")                \
    X(ACOSH, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "acosh_cpu")                \
    X(ATANH, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "atanh_cpu")                \
    X(ERF, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "erf_vml_cpu")                \
    X(ERFC, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "erfc_vml_cpu")              \
    X(SIGMOID, 1, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "sigmoid_cpu")            \
    X(SILU, 1, CT_EW_FLT, 0, "silu_cpu")                                   \
    X(GELU, 1, CT_EW_FLT, 0, "GeluKernelImpl")                             \
    X(GELU_TANH, 1, CT_EW_FLT, 0, "GeluKernelImpl")                        \
    X(SOFTPLUS, 1, CT_EW_FLT, 0, "softplus_cpu")                           \
    X(NAN_TO_NUM, 1, CT_EW_FLT, 0, "nan_to_num")                           \
    X(LOGICAL_NOT, 1, CT_EW_ALL, CT_EW_OUT_BOOL, "logical_not_cpu")        \
    X(BITWISE_NOT, 1, CT_EW_INTB, 0, "bitwise_not_cpu")                    \
    X(ISNAN, 1, CT_EW_ALL, CT_EW_OUT_BOOL, "isnan")                        \
    X(ISINF, 1, CT_EW_ALL, CT_EW_OUT_BOOL, "isinf")                        \
    X(ISFINITE, 1, CT_EW_ALL, CT_EW_OUT_BOOL, "isfinite")                  \
    X(ISPOSINF, 1, CT_EW_ALL, CT_EW_OUT_BOOL, "isposinf")                  \
    X(ISNEGINF, 1, CT_EW_ALL, CT_EW_OUT_BOOL, "isneginf")                  \
    X(SIGNBIT, 1, CT_EW_ALL, CT_EW_OUT_BOOL, "signbit_cpu")                \
    /* binary */                                                           \
    X(ADD, 2, CT_EW_ALL, 0, "add_cpu")                                     \
    X(SUB, 2, CT_EW_NUM, 0, "sub_cpu")                                     \
    X(MUL, 2, CT_EW_ALL, CT_EW_OPMATH_SCALARS, "mul_cpu")                  \
    X(ADD_ALPHA, 2, CT_EW_ALL, 0, "add_cpu")                               \
    X(SUB_ALPHA, 2, CT_EW_NUM, 0, "sub_cpu")                               \
    X(DIV, 2, CT_EW_FLT, CT_EW_INT_TO_FLOAT | CT_EW_OPMATH_SCALARS, "div_true_cpu") \
    X(DIV_TRUNC, 2, CT_EW_NUM, CT_EW_INT_DIV, "div_trunc_cpu")             \
    X(DIV_FLOOR, 2, CT_EW_NUM, CT_EW_INT_DIV, "div_floor_cpu")             \
    X(REMAINDER, 2, CT_EW_NUM, CT_EW_INT_DIV, "remainder_cpu")             \
    X(FMOD, 2, CT_EW_NUM, CT_EW_INT_DIV, "fmod_cpu")                       \
    X(POW, 2, CT_EW_NUM, 0, "pow")                                         \
    X(ATAN2, 2, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "atan2_cpu")                \
    X(COPYSIGN, 2, CT_EW_FLT, CT_EW_INT_TO_FLOAT, "copysign_cpu")          \
    X(HYPOT, 2, CT_EW_FLT, 0, "hypot_cpu")                                 \
    X(LOGADDEXP, 2, CT_EW_FLT, 0, "logaddexp_cpu")                         \
    X(LOGADDEXP2, 2, CT_EW_FLT, 0, "logaddexp2_cpu")                       \
    X(MAXIMUM, 2, CT_EW_ALL, 0, "maximum_cpu")                             \
    X(MINIMUM, 2, CT_EW_ALL, 0, "minimum_cpu")                             \
    X(FMAX, 2, CT_EW_ALL, 0, "fmax_cpu")                                   \
    X(FMIN, 2, CT_EW_ALL, 0, "fmin_cpu")                                   \
    X(CLAMP_MIN, 2, CT_EW_ALL, 0, "clamp_min_cpu")                         \
    X(CLAMP_MAX, 2, CT_EW_ALL, 0, "clamp_max_cpu")                         \
    X(EQ, 2, CT_EW_ALL, CT_EW_OUT_BOOL, "eq_cpu")                          \
    X(NE, 2, CT_EW_ALL, CT_EW_OUT_BOOL, "ne_cpu")                          \
    X(LT, 2, CT_EW_ALL, CT_EW_OUT_BOOL, "lt_cpu")                          \
    X(LE, 2, CT_EW_ALL, CT_EW_OUT_BOOL, "le_cpu")                          \
    X(GT, 2, CT_EW_ALL, CT_EW_OUT_BOOL, "gt_cpu")                          \
    X(GE, 2, CT_EW_ALL, CT_EW_OUT_BOOL, "ge_cpu")                          \
    X(LOGICAL_AND, 2, CT_EW_ALL, CT_EW_OUT_BOOL, "logical_and_cpu")        \
    X(LOGICAL_OR, 2, CT_EW_ALL, CT_EW_OUT_BOOL, "logical_or_cpu")          \
    X(LOGICAL_XOR, 2, CT_EW_ALL, CT_EW_OUT_BOOL, "logical_xor_cpu")        \
    X(BITWISE_AND, 2, CT_EW_INTB, 0, "bitwise_and_cpu")                    \
    X(BITWISE_OR, 2, CT_EW_INTB, 0, "bitwise_or_cpu")                      \
    X(BITWISE_XOR, 2, CT_EW_INTB, 0, "bitwise_xor_cpu")                    \
    X(LSHIFT, 2, CT_EW_INT, 0, "lshift_cpu")                               \
    X(RSHIFT, 2, CT_EW_INT, 0, "rshift_cpu")                               \
    /* ternary */                                                          \
    X(WHERE, 3, CT_EW_ALL, CT_EW_COND, "where_cpu")                        \
    X(CLAMP, 3, CT_EW_NUM, 0, "clamp_cpu")                                 \
    X(LERP, 3, CT_EW_FLT, CT_EW_OPMATH_SCALARS, "lerp_kernel_tensor")      \
    X(ADDCMUL, 3, CT_EW_NUM, 0, "addcmul_cpu_out")                         \
    X(ADDCDIV, 3, CT_EW_FLT, 0, "addcdiv_cpu_out")

typedef enum {
#define CT_EW_ENUM(NAME, ...) CT_EW_##NAME,
    CT_EW_OP_LIST(CT_EW_ENUM)
#undef CT_EW_ENUM
        CT_EW_NUM_OPS
} CtEwOp;

typedef struct {
    const char *name;        /* "ADD" */
    int arity;               /* inputs: 1, 2 or 3 */
    int domain;              /* CT_EW_DOM_* bits */
    int flags;               /* CT_EW_* flags */
    const char *kernel_name; /* for "\"abs_cpu\" not implemented for 'Bool'" */
} CtEwOpInfo;

extern const CtEwOpInfo ct_ew_op_info[CT_EW_NUM_OPS];

/* --- the device kernel table ------------------------------------------------------------------ */
/* Scalar arguments of an op, as double for float kernels and as int64 for integer kernels. */
typedef struct {
    double f[3];
    int64_t i[3];
} CtOpParams;

/* One kernel call. The iterator's operand 0 is the output, operands 1..arity the inputs in the
 * op's order. The kernel computes in the acc type of `compute` (float for float16/bfloat16).
 * Operand dtypes (it->dtypes) need not be the natural ones (the compute dtype for inputs, the
 * WHERE condition bool; bool or the compute dtype for the output): in-place ops and mixed
 * inputs give any dtype, and the kernel converts on load and store, through the compute dtype:
 * an int32 input of a float16 op is rounded to float16 before being widened to float, and a
 * float16 result written to a float32 out= is rounded to float16 first, as PyTorch does.
 * Host scalars are already in the acc type (float for float16/bfloat16).
 * host_scalars bit k: operand k is a single value in host memory (all its strides are 0), e.g. a
 * Python number or a 0-d CPU tensor; a GPU kernel reads it on the host before launching. */
typedef struct {
    CtEwOp op;
    CtDType compute;
    unsigned host_scalars;
    CtOpParams params;
} CtEwCall;

struct CtElementwiseKernels {
    /* out (operand 0) = in (operand 1) converted from it->dtypes[1] to it->dtypes[0].
     * 0, or -1 with an exception set. */
    int (*copy)(const CtIter *it);
    /* Run call->op over it (arity 1, 2, 3). 0, or -1 with an exception set (integer division
     * by zero raises RuntimeError "ZeroDivisionError" on the CPU, as PyTorch does). */
    int (*unary)(const CtIter *it, const CtEwCall *call);
    int (*binary)(const CtIter *it, const CtEwCall *call);
    int (*ternary)(const CtIter *it, const CtEwCall *call);
};

extern const struct CtElementwiseKernels ct_cpu_elementwise_kernels;

/* --- C entry points ------------------------------------------------------------------------------
 * All return a new reference, or NULL with an exception set. Type promotion, broadcasting and
 * errors are PyTorch's. */

/* An operand: a tensor (borrowed), or a Python number when t == NULL. Python numbers have the
 * lowest priority in type promotion (int tensor + 2.5 -> float32, int32 tensor + 5 -> int32). */
typedef struct {
    CtTensorObject *t;
    CtScalar s;
} CtEwArg;

/* The general form. in: op arity inputs in order. out: NULL for a new tensor, else the tensor
 * written (in-place ops, out=): its shape must be the broadcast shape and the result dtype must
 * be castable to it. params: NULL or the op's scalar arguments. compute: the dtype to compute in,
 * or -1 for PyTorch's promotion of the inputs. */
CtTensorObject *ct_elementwise(CtEwOp op, const CtEwArg *in, CtTensorObject *out, const CtOpParams *params,
                               int compute);

CtTensorObject *ct_unary(CtEwOp op, CtTensorObject *a);
CtTensorObject *ct_binary(CtEwOp op, CtTensorObject *a, CtTensorObject *b);
/* a op s, with s a Python number (lowest promotion priority) */
CtTensorObject *ct_binary_scalar(CtEwOp op, CtTensorObject *a, const CtScalar *s);
CtTensorObject *ct_ternary(CtEwOp op, CtTensorObject *a, CtTensorObject *b, CtTensorObject *c);
/* In place: a = a op b (a's dtype is kept; RuntimeError when the result type can't be cast to it).
 * Return a new reference to a. */
CtTensorObject *ct_unary_(CtEwOp op, CtTensorObject *a);
CtTensorObject *ct_binary_(CtEwOp op, CtTensorObject *a, CtTensorObject *b);
CtTensorObject *ct_binary_scalar_(CtEwOp op, CtTensorObject *a, const CtScalar *s);

/* Shorthands for autograd formulas. */
CtTensorObject *ct_add(CtTensorObject *a, CtTensorObject *b);
CtTensorObject *ct_sub(CtTensorObject *a, CtTensorObject *b);
CtTensorObject *ct_mul(CtTensorObject *a, CtTensorObject *b);
CtTensorObject *ct_div(CtTensorObject *a, CtTensorObject *b);
CtTensorObject *ct_neg(CtTensorObject *a);
/* a + alpha * b */
CtTensorObject *ct_add_scaled(CtTensorObject *a, CtTensorObject *b, double alpha);
/* a * s, a + s with a Python float s */
CtTensorObject *ct_mul_scalar(CtTensorObject *a, double s);
CtTensorObject *ct_add_scalar(CtTensorObject *a, double s);
/* where(cond, a, b); cond must be bool */
CtTensorObject *ct_where(CtTensorObject *cond, CtTensorObject *a, CtTensorObject *b);

/* PyTorch's result_type over n operands: dimensioned tensors > 0-d tensors > Python numbers, a
 * higher category (bool < integer < float) of a lower-priority operand winning. */
CtDType ct_result_type(int n, const CtEwArg *args);
/* torch.can_cast(from, to): no float -> integer, no non-bool -> bool. */
bool ct_can_cast(CtDType from, CtDType to);
/* PyTorch's ScalarType name ("Float", "Long", ...). */
const char *ct_scalar_type_name(CtDType d);

#endif /* CTORCH_ELEMENTWISE_H */
