/* index.h: the index op family: Tensor.__getitem__/__setitem__, gather/scatter, index_select,
 * masked ops, nonzero, cat/stack, flip/roll/repeat, tril/triu, one_hot, ...
 *
 * Every op is split into argument/shape/dtype logic (ops_index.c, device-neutral) and a call
 * through struct CtIndexKernels, the per-device kernel table that CtDeviceOps.index points to.
 * The CPU table is ct_cpu_index_kernels (ops_index.c); the CUDA backend fills the same struct.
 *
 * Most index kernels share one shape of problem, described by a CtIter plus CtIndexArgs:
 *     gather:  out[i]                          = src[i + sum_k idx_k[i] * stride_k]
 *     put:     dst[i + sum_k idx_k[i] * stride_k] (=, +=, *=) values[i]
 * where i runs over the iteration space and the indexed operand is "restrided": its indexed
 * dims carry stride 0 in the iterator, the index operands supply the movement along them.
 * Advanced indexing, gather, scatter, index_select, index_add/copy/fill, take and one_hot are
 * all this one pattern with different restriding. */
#ifndef CTORCH_INDEX_H
#define CTORCH_INDEX_H

#include "iter.h"

/* Index operands per index/index_put call: operands 0 and 1 are the data, the rest indices. */
#define CT_INDEX_MAX (CT_MAX_OPERANDS - 2)
/* Index operands per index_offsets call: operand 0 is the int64 output. */
#define CT_INDEX_OFFSETS_MAX (CT_MAX_OPERANDS - 1)

typedef enum {
    CT_REDUCE_NONE = 0, /* dst = value (duplicates: one of them wins) */
    CT_REDUCE_ADD = 1,  /* dst += alpha * value, every duplicate counted */
    CT_REDUCE_MUL = 2,  /* dst *= value, every duplicate counted */
    CT_REDUCE_MAX = 3,  /* dst = max(dst, value), NaN wins (scatter_reduce/index_reduce 'amax') */
    CT_REDUCE_MIN = 4,  /* dst = min(dst, value), NaN wins ('amin') */
} CtIndexReduce;

typedef struct {
    int nindex;                            /* index operands, iterator operands 2.. (1.. for offsets) */
    int64_t sizes[CT_INDEX_OFFSETS_MAX];   /* index k must lie in [0, size) (or [-size, size) if wrap) */
    int64_t strides[CT_INDEX_OFFSETS_MAX]; /* bytes moved in the indexed operand per unit of index k */
    bool wrap;                             /* negative values count from the end (Python style) */
    CtIndexReduce reduce;                  /* index_put only */
    CtScalar alpha;                        /* CT_REDUCE_ADD: values are scaled by alpha */
    /* Set by the kernel when some index is out of range (nothing is read or written for that
     * element; the caller raises): bad is the index operand (0-based), bad_value its value. */
    int bad;
    int64_t bad_value;
} CtIndexArgs;

/* Per-device kernels of the family. Unless noted, each returns 0, or -1 with an exception set.
 * Index operands are int64 or int32 (any layout, broadcast through the iterator). */
struct CtSearchArgs; /* search.h */

struct CtIndexKernels {
    /* Operands: 0 out, 1 src (same dtype as out), 2.. indices. Out-of-range: args->bad >= 0. */
    int (*index)(const CtIter *it, CtIndexArgs *args);
    /* Operands: 0 dst (restrided), 1 values (dst's dtype), 2.. indices. args->reduce says how
     * values combine; CT_REDUCE_ADD/MUL/MAX/MIN must count duplicate indices (run serially or atomically). */
    int (*index_put)(const CtIter *it, CtIndexArgs *args);
    /* Operands: 0 out (int64, byte offsets), 1.. indices: out = sum_k idx_k * strides[k], checked
     * as index() does. Used to fold more than CT_INDEX_MAX advanced indices into one. */
    int (*index_offsets)(const CtIter *it, CtIndexArgs *args);
    /* Operands: 0 self, 1 mask (bool), 2 value (self's dtype, broadcast): self[mask] = value. */
    int (*masked_fill)(const CtIter *it);
    /* Number of nonzero elements of t (any dtype and layout). */
    int (*count_nonzero)(CtTensorObject *t, int64_t *count);
    /* New (n, t.ndim) int64 tensor: the coordinates of t's nonzero elements in row-major order. */
    CtTensorObject *(*nonzero)(CtTensorObject *t);
    /* New contiguous (n, *src.shape[mask.ndim:]) tensor of src's rows where mask (bool, shape
     * src.shape[:mask.ndim], any strides) is true, in row-major order of mask. */
    CtTensorObject *(*masked_select)(CtTensorObject *src, CtTensorObject *mask);
    /* out = tril(src, diagonal) or triu (upper); same shape (>= 2-d), out may be src. */
    int (*triangle)(CtTensorObject *out, CtTensorObject *src, int64_t diagonal, bool upper);
    /* Smallest and largest value of an int64 tensor with numel > 0. */
    int (*int_minmax)(CtTensorObject *t, int64_t *min, int64_t *max);
    /* searchsorted (search.h): operand 0 = the bound of operand 1 in the sorted line starting at
     * operand 2 (sorter entries from operand 3 when it->nops == 4). */
    int (*searchsorted)(const CtIter *it, const struct CtSearchArgs *args);
};

extern const struct CtIndexKernels ct_cpu_index_kernels;

/* --- C entry points (new references, or NULL / -1 with PyTorch's exception set) -------------
 * dims are unwrapped (negative allowed) unless noted; index tensors as PyTorch accepts them. */
PyObject *ct_getitem(CtTensorObject *self, PyObject *index);
int ct_setitem(CtTensorObject *self, PyObject *index, PyObject *value);

CtTensorObject *ct_index_select(CtTensorObject *self, int64_t dim, CtTensorObject *index);
CtTensorObject *ct_gather(CtTensorObject *self, int64_t dim, CtTensorObject *index);
/* self.scatter_(dim, index, src) in place; src may be NULL to scatter the scalar *value. */
int ct_scatter_(CtTensorObject *self, int64_t dim, CtTensorObject *index, CtTensorObject *src,
                const CtScalar *value, CtIndexReduce reduce);
/* self.scatter_add_(dim, index, src) in place. */
int ct_scatter_add_(CtTensorObject *self, int64_t dim, CtTensorObject *index, CtTensorObject *src);
/* self.scatter_reduce_(dim, index, src, reduce, include_self=) in place; reduce is one of
 * "sum", "prod", "mean", "amax", "amin". Deterministic: each destination combines its values in
 * iteration order on every device (mean: the sum, then a division by the count). */
int ct_scatter_reduce_(CtTensorObject *self, int64_t dim, CtTensorObject *index, CtTensorObject *src,
                       const char *reduce, bool include_self);
/* self.index_reduce_(dim, index, source, reduce, include_self=): reduce one of "prod", "mean",
 * "amax", "amin". */
int ct_index_reduce_(CtTensorObject *self, int64_t dim, CtTensorObject *index, CtTensorObject *source,
                     const char *reduce, bool include_self);
/* self.index_add_(dim, index, source, alpha=alpha) in place. */
int ct_index_add_(CtTensorObject *self, int64_t dim, CtTensorObject *index, CtTensorObject *source,
                  const CtScalar *alpha);
int ct_index_copy_(CtTensorObject *self, int64_t dim, CtTensorObject *index, CtTensorObject *source);
int ct_index_fill_(CtTensorObject *self, int64_t dim, CtTensorObject *index, const CtScalar *value);
/* self.index_put_(indices, values, accumulate): indices a tuple or list of tensors. */
int ct_index_put_(CtTensorObject *self, PyObject *indices, CtTensorObject *values, bool accumulate);
/* self.masked_fill_(mask, value): mask bool, broadcastable to self. */
int ct_masked_fill_(CtTensorObject *self, CtTensorObject *mask, const CtScalar *value);
CtTensorObject *ct_masked_select(CtTensorObject *self, CtTensorObject *mask);
/* (n, ndim) int64 coordinates of the nonzero elements. */
CtTensorObject *ct_nonzero(CtTensorObject *self);
/* nonzero(as_tuple=True), which is also torch.where(condition): a tuple of ndim 1-d tensors. */
PyObject *ct_nonzero_tuple(CtTensorObject *self);
CtTensorObject *ct_take(CtTensorObject *self, CtTensorObject *index);

/* torch.cat: n tensors (PyTorch's type promotion, legacy (0,)-shaped inputs skipped). */
CtTensorObject *ct_cat(int n, CtTensorObject *const *tensors, int64_t dim);
CtTensorObject *ct_stack(int n, CtTensorObject *const *tensors, int64_t dim);
CtTensorObject *ct_flip(CtTensorObject *self, int ndims, const int64_t *dims);
/* ndims == 0: roll the flattened tensor by shifts[0]. */
CtTensorObject *ct_roll(CtTensorObject *self, int nshifts, const int64_t *shifts, int ndims, const int64_t *dims);
CtTensorObject *ct_repeat(CtTensorObject *self, int n, const int64_t *repeats);
/* out = tril/triu(self, diagonal); out == self for the in-place forms. 0 or -1. */
int ct_triangle(CtTensorObject *out, CtTensorObject *self, int64_t diagonal, bool upper);
/* The diagonal view (shares storage). */
CtTensorObject *ct_diagonal(CtTensorObject *self, int64_t offset, int64_t dim1, int64_t dim2);
CtTensorObject *ct_one_hot(CtTensorObject *self, int64_t num_classes);

#endif /* CTORCH_INDEX_H */
