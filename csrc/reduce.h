/* reduce.h: the reduction family (sum, mean, prod, max/min, arg-reductions, var/std, norm,
 * logsumexp, all/any, count_nonzero, the scans (cumsum/cumprod, cummax/cummin, logcumsumexp),
 * softmax, sort/topk/median/nanmedian).
 *
 * Ops (ops_reduce.c) parse arguments, decide shapes and dtypes, and describe the work in two
 * device-neutral structs:
 *   CtReduceDesc  out[k] = final(combine_r map(in[k, r])): the reduced dims r and the kept dims
 *                 k of the input, reordered (smallest input stride first) and coalesced;
 *   CtDimDesc     an op along one dim ("lines"): arg-reductions, scans, softmax, sorting.
 * A device implements them in a struct CtReduceKernels that CtDeviceOps.reduce points to: the
 * CPU in reduce_cpu.c (multi-threaded, deterministic), CUDA in cuda/reduce.cu and cuda/sort.cu
 * (deterministic too: fixed-order trees, no atomics). The descriptions hold device addresses
 * only; the kernels never need the host to read them. The scalar math both share is in
 * reduce_math.h.
 * The C entry points at the end are what other families (autograd, nn) call. */
#ifndef CTORCH_REDUCE_H
#define CTORCH_REDUCE_H

#include "ctorch.h"

/* "no dtype given" for the dtype arguments of the entry points below. */
#define CT_DTYPE_UNSET CT_NUM_DTYPES

/* --- the reduction description ----------------------------------------------------------- */
typedef enum { CT_COMBINE_SUM, CT_COMBINE_PROD, CT_COMBINE_MAX, CT_COMBINE_MIN } CtReduceCombine;

/* Applied to every element (loaded as the accumulator type) before combining. */
typedef enum {
    CT_MAP_IDENTITY,
    CT_MAP_ABS,
    CT_MAP_SQUARE,
    CT_MAP_ABS_POW,     /* |x|^p */
    CT_MAP_NONZERO,     /* x != 0 (1 or 0) */
    CT_MAP_EXP_SHIFT,   /* exp(x - s), s = shift[k] (an infinite s counts as 0) */
    CT_MAP_SQDIFF_SHIFT, /* (x - s)^2, s = shift[k] */
    CT_MAP_NAN_TO_ZERO, /* NaN -> 0 */
} CtReduceMap;

/* Applied to each combined value before it is stored in the output dtype. */
typedef enum {
    CT_FINAL_NONE,
    CT_FINAL_DIVIDE,      /* acc / divisor */
    CT_FINAL_SQRT_DIVIDE, /* sqrt(acc / divisor) */
    CT_FINAL_ROOT,       /* acc^(1/p) */
    CT_FINAL_LOG_SHIFT,  /* log(acc) + s (an infinite s counts as 0) */
} CtReduceFinal;

/* The accumulator: float for float32/float16/bfloat16, double for float64, int64 for integers
 * and bool. */
typedef enum { CT_ACC_F32, CT_ACC_F64, CT_ACC_I64 } CtAccType;

typedef struct {
    int ndim;                           /* >= 1; dim 0 has the smallest input stride */
    int64_t shape[CT_MAX_DIMS];
    bool reduced[CT_MAX_DIMS];
    int64_t in_strides[CT_MAX_DIMS];    /* bytes */
    int64_t out_strides[CT_MAX_DIMS];   /* bytes; 0 on reduced dims */
    int64_t shift_strides[CT_MAX_DIMS]; /* bytes; 0 on reduced dims */
    const char *in;
    char *out;
    const char *shift; /* NULL unless the map or final uses it; dtype float32 (acc F32) or float64 */
    CtDType in_dtype, out_dtype;
    CtReduceCombine combine;
    CtReduceMap map;
    CtReduceFinal final;
    CtAccType acc;
    double p;       /* exponent of CT_MAP_ABS_POW and CT_FINAL_ROOT */
    double divisor; /* of CT_FINAL_DIVIDE / CT_FINAL_SQRT_DIVIDE (0 gives inf or NaN) */
    int64_t out_numel;    /* > 0 */
    int64_t reduce_numel; /* may be 0: every output is final(identity of combine) */
    int device;           /* the CUDA ordinal of every operand (-1 on the CPU) */
} CtReduceDesc;

/* --- the scans ------------------------------------------------------------------------------- */
/* What a scan keeps running along a line: a sum or product (operand 1); the max or min with
 * the index where it was last reached (operands 1 and 2: a later equal value takes over, a NaN
 * takes over and stays until the next NaN); log(sum(exp)) of floats. */
typedef enum { CT_SCAN_SUM, CT_SCAN_PROD, CT_SCAN_MAX, CT_SCAN_MIN, CT_SCAN_LOGSUMEXP } CtScanOp;

/* --- the line description ------------------------------------------------------------------ */
#define CT_DIM_OPS 3

/* Operand 0 is the input (length n along the dim); operands 1 and 2 are outputs (values and
 * int64 indices) whose length along the dim depends on the op; data[op] is NULL for an output
 * the op does not produce. Outer dims are every other dim, innermost first. */
typedef struct {
    int64_t n;
    int64_t dim_strides[CT_DIM_OPS]; /* bytes per step along the dim */
    int nouter;
    int64_t outer_shape[CT_MAX_DIMS];
    int64_t outer_strides[CT_MAX_DIMS][CT_DIM_OPS]; /* bytes */
    int64_t outer_numel;                            /* number of lines, > 0 */
    char *data[CT_DIM_OPS];
    CtDType dtypes[CT_DIM_OPS];
    int device; /* the CUDA ordinal of every operand (-1 on the CPU) */
} CtDimDesc;

/* Each function returns 0, or -1 with a Python exception set (call with the GIL held). */
struct CtReduceKernels {
    int (*reduce)(const CtReduceDesc *d);
    /* Per line (n > 0): the first index of the max (is_max) or min, NaN counting as the
     * greatest and the least; writes the value to operand 1 and the index to operand 2 when
     * present (both have length 1 along the dim). */
    int (*arg_reduce)(const CtDimDesc *d, bool is_max);
    /* Per line: operand 1 [i] = in[0] op ... op in[i], accumulated in double (floats) or int64
     * (integers and bool); CT_SCAN_MAX/MIN also write the int64 index to operand 2 and keep
     * the input's dtype; CT_SCAN_LOGSUMEXP takes floats only. */
    int (*scan)(const CtDimDesc *d, CtScanOp op);
    /* Per line: operand 1 = softmax (or log_softmax) of operand 0, computed in float/double. */
    int (*softmax)(const CtDimDesc *d, bool log);
    /* Per line: a stable sort of operand 0 (NaN greater than everything), ascending or
     * descending; writes the sorted positions [start, start + count) to operands 1 and 2
     * (length count along the dim). */
    int (*sort)(const CtDimDesc *d, bool descending, int64_t start, int64_t count);
    /* Per line (n > 0): the lower median (NaN if the line has one, with the index of its first
     * NaN) to operand 1 and its index to operand 2 (length 1 along the dim). ignore_nan
     * (nanmedian): the lower median of the line's other elements, or its first NaN when it
     * has nothing else. Among equal values the index is the stable sort's. */
    int (*median)(const CtDimDesc *d, bool ignore_nan);
    /* Per line (n > 0): the most frequent value, the smallest of equally frequent ones (NaNs
     * count as one value, above everything), to operand 1 and the last index holding it to
     * operand 2 (length 1 along the dim). */
    int (*mode)(const CtDimDesc *d);
};

extern const struct CtReduceKernels ct_cpu_reduce_kernels;

/* --- C entry points (new references, or NULL with an exception set) ------------------------
 * reduce_dims: t->ndim flags (NULL = every dim). out_dtype: CT_DTYPE_UNSET for PyTorch's
 * default. All follow PyTorch's dtype rules and error messages. */
CtTensorObject *ct_sum(CtTensorObject *t, const bool *reduce_dims, bool keepdim, CtDType out_dtype);
CtTensorObject *ct_nansum(CtTensorObject *t, const bool *reduce_dims, bool keepdim, CtDType out_dtype);
CtTensorObject *ct_mean(CtTensorObject *t, const bool *reduce_dims, bool keepdim, CtDType out_dtype);
CtTensorObject *ct_prod(CtTensorObject *t, const bool *reduce_dims, bool keepdim, CtDType out_dtype);
CtTensorObject *ct_amax(CtTensorObject *t, const bool *reduce_dims, bool keepdim);
CtTensorObject *ct_amin(CtTensorObject *t, const bool *reduce_dims, bool keepdim);
/* max()/min() over every element (a 0-d tensor). */
CtTensorObject *ct_max_all(CtTensorObject *t);
CtTensorObject *ct_min_all(CtTensorObject *t);
/* max(dim)/min(dim): values and int64 indices. 0 or -1. */
int ct_max_dim(CtTensorObject *t, int dim, bool keepdim, CtTensorObject **values, CtTensorObject **indices);
int ct_min_dim(CtTensorObject *t, int dim, bool keepdim, CtTensorObject **values, CtTensorObject **indices);
/* argmax/argmin; dim < 0 means over the flattened tensor. */
CtTensorObject *ct_argmax(CtTensorObject *t, int dim, bool keepdim);
CtTensorObject *ct_argmin(CtTensorObject *t, int dim, bool keepdim);
CtTensorObject *ct_var(CtTensorObject *t, const bool *reduce_dims, double correction, bool keepdim);
CtTensorObject *ct_std(CtTensorObject *t, const bool *reduce_dims, double correction, bool keepdim);
/* var/std and mean in one go. 0 or -1. */
int ct_var_mean(CtTensorObject *t, const bool *reduce_dims, double correction, bool keepdim, bool take_sqrt,
                CtTensorObject **var, CtTensorObject **mean);
/* The vector p-norm over reduce_dims (p may be +-INFINITY or 0). */
CtTensorObject *ct_norm(CtTensorObject *t, double p, const bool *reduce_dims, bool keepdim, CtDType out_dtype);
CtTensorObject *ct_logsumexp(CtTensorObject *t, const bool *reduce_dims, bool keepdim);
CtTensorObject *ct_all(CtTensorObject *t, const bool *reduce_dims, bool keepdim);
CtTensorObject *ct_any(CtTensorObject *t, const bool *reduce_dims, bool keepdim);
CtTensorObject *ct_count_nonzero(CtTensorObject *t, const bool *reduce_dims);
CtTensorObject *ct_cumsum(CtTensorObject *t, int dim, CtDType out_dtype);
CtTensorObject *ct_cumprod(CtTensorObject *t, int dim, CtDType out_dtype);
/* cummax/cummin along dim: values (t's dtype) and int64 indices. 0 or -1. */
int ct_cummax(CtTensorObject *t, int dim, CtTensorObject **values, CtTensorObject **indices);
int ct_cummin(CtTensorObject *t, int dim, CtTensorObject **values, CtTensorObject **indices);
CtTensorObject *ct_logcumsumexp(CtTensorObject *t, int dim);
/* nansum / the number of non-NaN elements (NaN where there are none). */
CtTensorObject *ct_nanmean(CtTensorObject *t, const bool *reduce_dims, bool keepdim, CtDType out_dtype);
CtTensorObject *ct_softmax(CtTensorObject *t, int dim, CtDType out_dtype);
CtTensorObject *ct_log_softmax(CtTensorObject *t, int dim, CtDType out_dtype);
/* sort/topk/median along dim; values or indices may be NULL when not wanted. 0 or -1. */
int ct_sort(CtTensorObject *t, int dim, bool descending, CtTensorObject **values, CtTensorObject **indices);
int ct_topk(CtTensorObject *t, int64_t k, int dim, bool largest, CtTensorObject **values,
            CtTensorObject **indices);
int ct_median_dim(CtTensorObject *t, int dim, bool keepdim, CtTensorObject **values, CtTensorObject **indices);
CtTensorObject *ct_median_all(CtTensorObject *t);
/* kthvalue: the k-th smallest (1-based) along dim, the k-th element of the stable ascending
 * sort (NaN above everything). mode: the most frequent value along dim (see the kernel). 0 or -1. */
int ct_kthvalue(CtTensorObject *t, int64_t k, int dim, bool keepdim, CtTensorObject **values,
                CtTensorObject **indices);
int ct_mode(CtTensorObject *t, int dim, bool keepdim, CtTensorObject **values, CtTensorObject **indices);
/* median ignoring NaN (NaN only for a slice of nothing but NaN). */
int ct_nanmedian_dim(CtTensorObject *t, int dim, bool keepdim, CtTensorObject **values, CtTensorObject **indices);
CtTensorObject *ct_nanmedian_all(CtTensorObject *t);

/* Sum of t down to a shape that t broadcasts from (autograd's sum_to_size); t itself (a new
 * reference) when nothing is reduced. Integers sum to int64, as PyTorch. */
CtTensorObject *ct_sum_to_size(CtTensorObject *t, int ndim, const int64_t *sizes);
/* torch.return_types.frexp(mantissa, exponent) (ops_more.c's frexp); steals both (either may be
 * NULL after a failure). New reference or NULL. */
PyObject *ct_frexp_result(CtTensorObject *mantissa, CtTensorObject *exponent);
/* A new torch.return_types.* struct-sequence type with PyTorch's repr (one field a line). */
PyTypeObject *ct_return_type_new(PyStructSequence_Desc *desc);

#endif /* CTORCH_REDUCE_H */
