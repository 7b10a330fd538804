/* tensor.h: construction, metadata helpers and checks for CtTensorObject. */
#ifndef CTORCH_TENSOR_H
#define CTORCH_TENSOR_H

#include "ctorch.h"
#include "dtype.h"

extern PyTypeObject *CtTensor_Type;
#define CtTensor_Check(op) PyObject_TypeCheck((op), CtTensor_Type)
#define CT_TENSOR(op) ((CtTensorObject *)(op))

/* --- construction ------------------------------------------------------------------------ */
/* A new contiguous tensor (uninitialised memory). */
CtTensorObject *ct_empty(int ndim, const int64_t *sizes, CtDType dtype, CtDevice device);
/* Same shape as t, contiguous, given dtype (uninitialised). */
CtTensorObject *ct_empty_like(const CtTensorObject *t, CtDType dtype);
/* Uninitialised with the given dense strides (a permutation of contiguous ones, as
 * ct_iter_output_strides / ct_preserve_strides give): storage of numel elements. */
CtTensorObject *ct_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides, CtDType dtype,
                                 CtDevice device);
/* A tensor over storage with the given metadata (takes a new reference to storage). */
CtTensorObject *ct_tensor_new(CtStorageObject *storage, int64_t offset, int ndim, const int64_t *sizes,
                              const int64_t *strides, CtDType dtype);
/* A view of base: same storage and dtype, new metadata. */
CtTensorObject *ct_view_of(const CtTensorObject *base, int ndim, const int64_t *sizes, const int64_t *strides,
                           int64_t offset);
/* A 0-d tensor holding a scalar cast to dtype on device. */
CtTensorObject *ct_scalar_tensor(const CtScalar *s, CtDType dtype, CtDevice device);
/* Reads the single element of t (any device). RuntimeError unless numel == 1. */
int ct_item(CtTensorObject *t, CtScalar *out);
/* Fills t with a scalar (any layout). 0 or -1. */
int ct_fill_(CtTensorObject *t, const CtScalar *value);

/* --- metadata ---------------------------------------------------------------------------- */
static inline int64_t ct_numel(const CtTensorObject *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) {
        n *= t->sizes[i];
    }
    return n;
}
static inline size_t ct_itemsize(const CtTensorObject *t) { return ct_dtype_info[t->dtype].itemsize; }
static inline CtDevice ct_device_of(const CtTensorObject *t) { return t->storage->device; }
/* Address of element [0,...,0] (device memory for CUDA tensors). */
static inline char *ct_data(const CtTensorObject *t)
{
    return (char *)t->storage->data + t->offset * (int64_t)ct_itemsize(t);
}
bool ct_is_contiguous(const CtTensorObject *t);
/* Contiguous strides for sizes; returns the element count. */
int64_t ct_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides);
/* Bytes of a contiguous tensor of these sizes; a negative size or an overflow raises PyTorch's
 * RuntimeError ("Trying to create tensor with negative dimension", "Storage size calculation
 * overflowed"). 0 or -1. */
int ct_contiguous_nbytes(int ndim, const int64_t *sizes, size_t itemsize, int64_t *nbytes);
/* Bytes of storage a tensor of these sizes, strides and element offset reaches: (offset + 1 + sum of
 * (size - 1) * stride) * itemsize, 0 when it has no element. A negative stride or offset, or an overflow,
 * raises PyTorch's "Storage size calculation overflowed" (RuntimeError). 0 or -1. */
int ct_storage_nbytes_needed(int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset, size_t itemsize,
                             int64_t *nbytes);
/* Wraps a possibly negative dim into [0, ndim); IndexError as PyTorch otherwise. */
int ct_wrap_dim(int64_t dim, int ndim, int *out);
/* Parses sizes given as f(2, 3), f((2, 3)), f([2, 3]) or f(torch.Size). Negative sizes are
 * allowed only when allow_minus_one (for view/reshape). Returns ndim or -1. */
int ct_parse_sizes(PyObject *const *args, Py_ssize_t nargs, int64_t *sizes, bool allow_minus_one);
int ct_parse_size_seq(PyObject *seq, int64_t *sizes, bool allow_minus_one);
/* Formats sizes as "[2, 3]" into buf. */
void ct_format_sizes(char *buf, size_t n, int ndim, const int64_t *sizes);
/* Whether obj is a torch.Size. */
bool ct_size_check(PyObject *obj);
/* torch.Size(...) for sizes: new reference. */
PyObject *ct_size_object(int ndim, const int64_t *sizes);
/* Gives an out= tensor of the wrong shape fresh contiguous storage of `shape`, with PyTorch's
 * deprecation warning unless it had no elements. 0 or -1. */
int ct_resize_output(CtTensorObject *out, int ndim, const int64_t *shape);
/* The same, warning only when warn (PyTorch's factories resize their out= silently). */
int ct_resize_output_ex(CtTensorObject *out, int ndim, const int64_t *shape, bool warn);
/* How an op checks the dtype of its out= tensor, in PyTorch's words. */
typedef enum {
    CT_OUT_CAST,        /* cat family: the result dtype must cast to out's */
    CT_OUT_EXACT,       /* "Expected out tensor to have dtype float, but got double instead" */
    CT_OUT_SAME_SCALAR, /* "index_select(): self and result must have the same scalar type" */
    CT_OUT_LONG,        /* nonzero: out must be int64 */
    CT_OUT_RESULT_CAST, /* std/var/mean: "result type Float can't be cast to the desired output type Long" */
    CT_OUT_SAME_AS_INPUT, /* amax/amin: out's dtype must be the input's, which is the result's */
    CT_OUT_CAN_CAST,    /* max()/min(): the result must cast to out's dtype (PyTorch's canCast check) */
    CT_OUT_ANY,         /* the caller checked out's dtype; the result is cast to it */
    CT_OUT_SELF_DTYPE,  /* take: "take(): self and out expected to have the same dtype, ..." (ct_function_with_out) */
    /* or'ed into a rule: an out of the right shape that writes an element twice (expanded) is written
     * anyway, as PyTorch's tril/triu/cummax/cummin out= are (which write wins is unspecified) */
    CT_OUT_ALLOW_EXPANDED = 0x100,
} CtOutRule;
/* An out= argument: *out the tensor (borrowed), NULL when obj is NULL or None; TypeError
 * "fname(): argument 'out' must be Tensor, not list" for anything else. 0 or -1. */
int ct_arg_out(PyObject *obj, const char *fname, CtTensorObject **out);
/* RuntimeError as PyTorch's ("more than one element of the written-to tensor refers to a single
 * memory location") when t has a dim of size > 1 and stride 0, i.e. writing t would write one
 * element twice (an expanded tensor); 0 otherwise. */
int ct_check_no_internal_overlap(const CtTensorObject *t);
/* Hands the result r of an op to its out= tensor (out_obj, NULL or None for none) as PyTorch
 * does: out's dtype is checked by rule, an out that would be written twice (expanded) is refused
 * (ct_check_no_internal_overlap), an out sharing storage with one of the n inputs ts is
 * refused, a wrongly shaped out is resized (ct_resize_output), and out itself is returned.
 * Ops that compute into a fresh tensor and that PyTorch lets write over their input (most
 * reductions) pass n = 0: no overlap check. Steals r (may be NULL: an error already set); a new reference, or NULL. */
PyObject *ct_write_out(CtTensorObject *r, PyObject *out_obj, const char *fname, CtOutRule rule, Py_ssize_t n,
                       CtTensorObject *const *ts);

/* --- common transformations (new references) --------------------------------------------- */
/* t itself (new reference) when already contiguous, else a contiguous copy. */
CtTensorObject *ct_contiguous(CtTensorObject *t);
/* A copy of t with dtype (and device); t itself (new reference) when nothing changes and !copy. */
CtTensorObject *ct_to(CtTensorObject *t, CtDType dtype, CtDevice device, bool copy);
/* dst[...] = src with broadcasting, dtype casts and device transfer. 0 or -1. */
int ct_copy_(CtTensorObject *dst, CtTensorObject *src);
/* ct_copy_ and ct_to with non_blocking: host<->device copies return without waiting for the
 * GPU (asynchronous on the current stream; truly so when the host memory is pinned). A
 * non-blocking CUDA -> CPU ct_to_ex returns a tensor in pinned memory, as PyTorch does. */
int ct_copy_ex(CtTensorObject *dst, CtTensorObject *src, bool non_blocking);
CtTensorObject *ct_to_ex(CtTensorObject *t, CtDType dtype, CtDevice device, bool copy, bool non_blocking);
/* ct_to_ex with a memory format: the copy is contiguous when `contiguous`, else laid out as
 * t in PyTorch's preserve_format (ct_preserve_strides), as Tensor.to/clone/type/float do.
 * ct_to, ct_to_ex and ct_contiguous always give a contiguous copy (callers may rely on it). */
CtTensorObject *ct_to_format(CtTensorObject *t, CtDType dtype, CtDevice device, bool copy, bool non_blocking,
                             bool contiguous);
/* ct_to_format with any memory format (creation.h's CtMemoryFormat, an int here): without copy, t itself
 * when dtype, device and layout already fit. */
CtTensorObject *ct_to_memory_format(CtTensorObject *t, CtDType dtype, CtDevice device, bool copy, bool non_blocking,
                                    int format);
/* Every tensor in ts on one device, else RuntimeError "Expected all tensors to be on the same
 * device, ..." (0-d CPU tensors are allowed to mix, as in PyTorch, when allow_cpu_scalars). */
int ct_check_same_device(int n, CtTensorObject *const *ts, bool allow_cpu_scalars, CtDevice *out);
/* Tensor or scalar argument: returns a new reference to a tensor. Python scalars become 0-d
 * tensors of their default dtype on device; *is_scalar tells which. */
CtTensorObject *ct_as_tensor_arg(PyObject *obj, CtDevice device, bool *is_wrapped_number);

/* torch.name(input, *args, **kwargs) for a Tensor method: checks input, then calls
 * method(input, args, kwargs) (a METH_FASTCALL|METH_KEYWORDS function). */
typedef PyObject *(*CtFastMethod)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
PyObject *ct_method_as_function(const char *fname, CtFastMethod method, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames);
/* Its twin: Tensor.name(*args, **kwargs) as fn(self, *args, **kwargs) for a module function fn. */
PyObject *ct_function_as_method(const char *fname, CtFastMethod fn, PyObject *self, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kwnames);
/* Splits the keyword out= (and, when drop is given, that keyword too) from a vectorcall's
 * keywords: fills kept[] (positional then kept keyword values) and *kept_names (a new tuple or
 * NULL), *out the out= value (borrowed, NULL when absent). kept has room for `room` entries: more
 * arguments raise TypeError "fname(): too many arguments". Returns the count of kept keywords, or -1. */
Py_ssize_t ct_split_out(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                        const char *drop, PyObject **kept, Py_ssize_t room, PyObject **kept_names, PyObject **out);
/* fname(input, ..., out=None) for a module function fn that takes no out= (one made of a method, which
 * refuses out= as PyTorch's methods do): fn called without out=, its result handed to out= by
 * ct_write_out(rule) (out may be the input: the result is computed first). */
PyObject *ct_function_with_out(const char *fname, CtFastMethod fn, CtOutRule rule, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames);
/* all[0] = self, then a vectorcall's arguments (positional, then keyword values): the argument vector
 * of the same call with self first. all has room for 16; TypeError "fname(): too many arguments"
 * beyond. 0 or -1. */
int ct_prepend_self(PyObject **all, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                    const char *fname);
#define CT_FUNCTION_FROM_METHOD(name, method)                                                                     \
    static PyObject *function_##name(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                                             \
        return ct_method_as_function(#name, (method), args, nargs, kwnames);                                       \
    }

/* The same for a METH_NOARGS method: torch.name(input). */
#define CT_FUNCTION_FROM_NOARGS_METHOD(name, method)                                                                \
    static PyObject *noargs_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)      \
    {                                                                                                             \
        if (nargs > 0 || kwnames != NULL) {                                                                       \
            PyErr_SetString(PyExc_TypeError, #name "() takes no arguments besides input");                         \
            return NULL;                                                                                          \
        }                                                                                                         \
        return method(self, NULL);                                                                                \
    }                                                                                                             \
    CT_FUNCTION_FROM_METHOD(name, noargs_##name)

/* Marks an in-place write for autograd's version counter. */
static inline void ct_bump_version(CtTensorObject *t) { t->storage->version++; }

int ct_tensor_init(PyObject *module);

#endif /* CTORCH_TENSOR_H */
