/* search.h: the search and counting ops (ops_search.c): searchsorted, bucketize, bincount,
 * histc, unique, unique_consecutive, isin.
 *
 * Only searchsorted has a kernel of its own (struct CtIndexKernels.searchsorted, index.h): a
 * binary search per value over a CtIter whose operands are
 *     0 out (int64 or int32), 1 values, 2 the first element of each value's sorted line
 *     (values' dtype, broadcast over the line's values), [3 the first sorter entry (int64)],
 * the kernel stepping along a line with the byte strides of CtSearchArgs. The CPU's is
 * ct_cpu_searchsorted (here), CUDA's cuda/search.cu; both call search_math.h.
 * Every other op is composed in C of existing ops, so it runs on every device: unique sorts
 * with ct_sort (stable), marks the first of each run of equal neighbours, compacts with
 * nonzero, scatters the inverse and counts with scatter_/scatter_add_; bincount and histc are
 * a scatter_add_ into zeros (deterministic on CUDA, the CPU's bits); isin is a sort of the test
 * elements and a searchsorted of the elements. */
#ifndef CTORCH_SEARCH_H
#define CTORCH_SEARCH_H

#include "iter.h"

typedef struct CtSearchArgs {
    int64_t n;             /* elements per sorted line, > 0 */
    int64_t line_stride;   /* bytes per step along a line of operand 2 */
    int64_t sorter_stride; /* bytes per step along a line of operand 3 (when present) */
    bool right;            /* upper bound instead of lower */
} CtSearchArgs;

/* The CPU's CtIndexKernels.searchsorted. 0. */
int ct_cpu_searchsorted(const CtIter *it, const CtSearchArgs *args);

/* --- C entry points (new references, or NULL with PyTorch's exception set) ----------------- */
/* searchsorted(seq, values): values a tensor, or (values NULL) the Python number *scalar. */
CtTensorObject *ct_searchsorted(CtTensorObject *seq, CtTensorObject *values, const CtScalar *scalar, bool out_int32,
                                bool right, CtTensorObject *sorter);
CtTensorObject *ct_bincount(CtTensorObject *input, CtTensorObject *weights, int64_t minlength);
CtTensorObject *ct_histc(CtTensorObject *input, int64_t bins, double min, double max);
/* unique (sort) or unique_consecutive; dim < 0: over the flattened tensor, else the wrapped
 * dim. inverse/counts may be NULL when not wanted. 0 or -1. */
int ct_unique(CtTensorObject *input, bool consecutive, int dim, CtTensorObject **values, CtTensorObject **inverse,
              CtTensorObject **counts);

#endif /* CTORCH_SEARCH_H */
