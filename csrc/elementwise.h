/* elementwise.h: the elementwise op family: the op list, the device kernel table, and the C
 * entry points that other families (autograd, nn, optim) call.
 *
 * The front end (ops_elementwise.c) does all device-neutral work: type promotion, broadcasting,
 * output allocation and checks. It then builds a CtIter (operand 0 = output) and calls the
 * device's CtElementwiseKernels. The CPU implementation is elementwise_cpu.c; the table of ops
 * is elementwise_kernels.h and the scalar math of every op scalar_math.h, both shared with CUDA. */
#ifndef CTORCH_ELEMENTWISE_H
#define CTORCH_ELEMENTWISE_H

#include "iter.h"

/* --- the ops: CT_EW_OP_LIST in elementwise_kernels.h ----------------------------------------- */
#include "elementwise_kernels.h"

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
/* The ct_ew_op_info row of a CT_EW_OP_LIST row. */
#define CT_EW_OP_INFO(NAME, kind, fn, domain, flags, kname) \
    {#NAME, CT_EW_KIND_ARITY(kind), CT_EW_DOMAIN_##domain, (flags) | CT_EW_KIND_FLAGS(kind), kname},

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
 * Host scalars are already in the acc type (float for float16/bfloat16) and are used as they
 * are, on every device: the front end rounded them to the compute dtype first unless the op has
 * CT_EW_OPMATH_SCALARS. CtOpParams convert to the kernel type with CT_EW_PARAM_<DT>.
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

#endif /* CTORCH_ELEMENTWISE_H */
