/* iter.h: the elementwise iterator. Describes an op over N strided operands (operand 0 is
 * the output) broadcast to one shape, with dims reordered and coalesced so that kernels see
 * the fewest, longest inner runs. Device-neutral: the CPU walks it with ct_iter_cpu_run, the
 * CUDA backend turns the same description into offsets inside a kernel. */
#ifndef CTORCH_ITER_H
#define CTORCH_ITER_H

#include "ctorch.h"

#define CT_MAX_OPERANDS 5

typedef struct {
    int nops;
    int ndim;                                      /* dim 0 is the innermost (fastest) */
    int64_t shape[CT_MAX_DIMS];
    int64_t strides[CT_MAX_DIMS][CT_MAX_OPERANDS]; /* bytes; 0 on broadcast dims */
    char *data[CT_MAX_OPERANDS];
    CtDType dtypes[CT_MAX_OPERANDS];
    int64_t numel;
    CtDevice device; /* where the operands live (operand 0's device); device kernels run there */
} CtIter;

/* Inner loop: n elements; strides[op] is operand op's byte stride along the run. */
typedef void (*CtInnerLoop)(char **data, const int64_t *strides, int64_t n, void *ctx);

/* Broadcasts shape a with shape b into out (ndim = max). Returns the ndim, or -1 with
 * PyTorch's RuntimeError "The size of tensor a (3) must match the size of tensor b (4) at
 * non-singleton dimension 0". */
int ct_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int64_t *out);
/* Builds the iterator. ops[0]'s shape is the iteration shape; every other operand must be
 * broadcastable to it (RuntimeError otherwise). */
int ct_iter_init(CtIter *it, int nops, CtTensorObject *const *ops);
/* Runs loop over the whole iteration space on the CPU, in parallel for large sizes. */
void ct_iter_cpu_run(const CtIter *it, CtInnerLoop loop, void *ctx);

/* --- output layout (PyTorch's rules; strides in elements) -------------------------------------
 * PyTorch's is_non_overlapping_and_dense: no elements, or some permutation of the dims of size
 * >= 2 is contiguous. */
bool ct_non_overlapping_and_dense(const CtTensorObject *t);
/* Strides for the new output of an elementwise op over the n tensors ts broadcast to shape
 * (TensorIterator's rule): contiguous when every operand has the shape and is contiguous; the
 * operands' own strides when they all have the shape and share one non-overlapping dense
 * layout; else the dims ordered innermost-first by the operands' strides, the first operand
 * that orders a pair deciding. scalar_operand: a wrapped Python number takes part (a 0-d
 * operand, so no operand has the shape unless it is ()). The strides are dense: a tensor of
 * numel elements fits a storage of numel elements. Returns true, leaving strides unset, when
 * the output is simply contiguous (the common case, which the caller allocates with ct_empty). */
bool ct_iter_output_strides(int ndim, const int64_t *shape, int n, const CtTensorObject *const *ts,
                            bool scalar_operand, int64_t *strides);
/* Strides of a copy of t in preserve_format (clone, *_like, to): t's own strides when t is
 * non-overlapping and dense, else dense strides in t's dim order. */
void ct_preserve_strides(const CtTensorObject *t, int64_t *strides);
#endif /* CTORCH_ITER_H */
