/* creation.h: tensor factories (zeros, ones, full, arange, linspace, eye, *_like) callable from
 * C, and the argument helpers every factory shares (PyTorch's size varargs, dtype=, device=,
 * requires_grad=, out=), used by creation.c, random.c and numpy_interop.c. */
#ifndef CTORCH_CREATION_H
#define CTORCH_CREATION_H

#include "ctorch.h"
#include "dtype.h"
#include "tensor.h"

/* --- factories (new references; NULL with an exception set) --------------------------------- */
CtTensorObject *ct_zeros(int ndim, const int64_t *sizes, CtDType dtype, CtDevice device);
CtTensorObject *ct_ones(int ndim, const int64_t *sizes, CtDType dtype, CtDevice device);
/* value is converted to dtype; RuntimeError "value cannot be converted to type ... without
 * overflow" when it does not fit (PyTorch's checked conversion). */
CtTensorObject *ct_full(int ndim, const int64_t *sizes, const CtScalar *value, CtDType dtype, CtDevice device);
/* Uninitialised, same shape as t, in PyTorch's preserve_format: t's strides when t is
 * non-overlapping and dense, else dense strides in t's dim order (ct_preserve_strides). */
CtTensorObject *ct_empty_like_preserve(const CtTensorObject *t, CtDType dtype, CtDevice device);
CtTensorObject *ct_zeros_like(const CtTensorObject *t);
CtTensorObject *ct_ones_like(const CtTensorObject *t);
/* arange with PyTorch's length rule; start/end/step as scalars (step != 0). */
CtTensorObject *ct_arange(const CtScalar *start, const CtScalar *end, const CtScalar *step, CtDType dtype,
                          CtDevice device);
CtTensorObject *ct_linspace(double start, double end, int64_t steps, CtDType dtype, CtDevice device);
CtTensorObject *ct_eye(int64_t n, int64_t m, CtDType dtype, CtDevice device);
/* In place (any layout), bumping the version. 0 or -1. */
int ct_zero_(CtTensorObject *t);

/* PyTorch's guard for Python-level in-place ops: RuntimeError when t is a leaf that requires
 * grad and grad mode is on. 0 or -1. */
int ct_check_inplace_leaf(const CtTensorObject *t);

/* --- checks ------------------------------------------------------------------------------- */
/* 0 when the scalar fits dtype by PyTorch's rules for checked conversions (integers may wrap
 * down to -max for unsigned types; floats overflow only when finite and beyond the range),
 * else -1 with RuntimeError "value cannot be converted to type <name> without overflow".
 * cpp_names picks the C++ spelling used by fill/full ("uint8_t", "c10::Half") over the one
 * used by tensor() ("uint8"). */
int ct_check_scalar_fits(const CtScalar *s, CtDType dtype, bool cpp_names);
/* The finite range of a dtype as doubles (bool: that of a double). */
void ct_dtype_range(CtDType d, double *lo, double *hi);

/* The type name PyTorch prints in argument errors ("Tensor", "float", "numpy.ndarray"). */
static inline const char *ct_type_name(PyObject *obj)
{
    return CtTensor_Check(obj) ? "Tensor" : Py_TYPE(obj)->tp_name;
}

/* --- argument helpers for factories --------------------------------------------------------- */
/* The keyword-only options every factory accepts, in this order, at the end of its names
 * list; CT_FACTORY_NKW entries. */
#define CT_FACTORY_KW "*out", "*dtype", "*layout", "*device", "*pin_memory", "*requires_grad", "*memory_format"
#define CT_FACTORY_NKW 7

/* torch.memory_format: the dense layout asked of a new tensor. preserve_format keeps the source's
 * dim order (ct_preserve_strides); channels_last orders (N, C, H, W) as N, H, W, C in memory,
 * channels_last_3d (N, C, D, H, W) as N, D, H, W, C. */
typedef enum {
    CT_FORMAT_PRESERVE,
    CT_FORMAT_CONTIGUOUS,
    CT_FORMAT_CHANNELS_LAST,
    CT_FORMAT_CHANNELS_LAST_3D,
} CtMemoryFormat;

typedef struct {
    bool has_dtype;
    CtDType dtype;
    bool has_device;
    CtDevice device;        /* device=, else ct_default_device's */
    bool default_device;    /* device= absent and torch.set_default_device's in force */
    bool requires_grad;
    bool pin_memory;
    bool contiguous_format; /* memory_format=torch.contiguous_format */
    CtMemoryFormat memory_format;
    PyObject *out;          /* borrowed; NULL when absent or None */
} CtFactoryOptions;

/* memory_format= (borrowed, NULL when absent): None means preserve_format; TypeError for anything
 * that is not a torch.memory_format ("clone(): argument 'memory_format' must be torch.memory_format,
 * not int"). 0 or -1. */
int ct_memory_format_arg(const char *fname, PyObject *obj, CtMemoryFormat *out);
/* The dense strides of a channels_last (4-d) / channels_last_3d (5-d) layout of sizes; RuntimeError
 * "required rank 4 tensor to use channels_last format" for another rank. 0 or -1. */
int ct_channels_last_strides(CtMemoryFormat format, int ndim, const int64_t *sizes, int64_t *strides);
/* t.is_contiguous(memory_format=format): its strides are format's dense strides (dims of size 1
 * excepted, as PyTorch); false for a channels_last format of another rank. */
bool ct_is_contiguous_as(const CtTensorObject *t, CtMemoryFormat format);
/* PyTorch's suggest_memory_format: channels_last for a 4-d tensor whose strides order its dims as
 * that layout does (dense or not), channels_last_3d likewise for a 5-d one, else contiguous. */
CtMemoryFormat ct_suggest_memory_format(const CtTensorObject *t);
/* A fresh result t in `format` (an op's output taking its inputs' suggested format): t itself when
 * already laid out so (given format's exact strides when no one else holds it), or format is
 * contiguous / of another rank, else a copy with format's strides (same values). Steals t (NULL
 * passes through); NULL on error. */
CtTensorObject *ct_as_memory_format(CtTensorObject *t, CtMemoryFormat format);
/* Parses the CT_FACTORY_NKW values kw[0..] (borrowed, NULL when absent) into opt, with
 * PyTorch's TypeErrors ("zeros(): argument 'dtype' must be torch.dtype, not str"). */
int ct_factory_options(const char *fname, PyObject *const *kw, CtFactoryOptions *opt);
/* Applies requires_grad and out= to a freshly made tensor: returns a new reference to the
 * result (out itself when given), stealing the reference to t; NULL on error (t released). */
PyObject *ct_factory_finish(const char *fname, CtTensorObject *t, const CtFactoryOptions *opt);
/* pin_memory=True of a factory: t.pin_memory() (its errors: no CUDA, not a CPU tensor), stealing
 * the reference to t; t itself when pin is false. NULL on error (t released). */
CtTensorObject *ct_factory_pin(CtTensorObject *t, bool pin);

/* Parses fname(*size, **kw): sizes from the positional args (ints, or one tuple/list/Size) or
 * from the 'size' keyword. names[0] must be "size" (the rest keyword-only); out[] receives the
 * keyword values as ct_parse_args does. Returns ndim, or -1 with PyTorch's TypeError. */
int ct_parse_size_varargs(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                          const char *const *names, PyObject **out, int64_t *sizes);
/* A size given as one sequence argument (full(size, v), randint(high, size)). argname/pos name
 * the argument in the errors; pos 0 means "passed by keyword". Returns ndim or -1. */
int ct_parse_size_arg(const char *fname, const char *argname, int pos, PyObject *obj, int64_t *sizes);
/* A Number argument (bool, int, float, numpy scalar, 0-d tensor): TypeError "fname(): argument
 * 'name' (position pos) must be Number, not str" otherwise. */
int ct_number_arg(const char *fname, const char *argname, int pos, PyObject *obj, CtScalar *out);
/* A bool argument (None keeps *out): TypeError "fname(): argument 'name' must be bool, not int". */
int ct_bool_arg(const char *fname, const char *argname, PyObject *obj, bool *out);
/* An int argument (not bool, not float): TypeError "fname(): argument 'name' (position pos)
 * must be int, not float" otherwise. */
int ct_int_arg(const char *fname, const char *argname, int pos, PyObject *obj, int64_t *out);

#endif /* CTORCH_CREATION_H */
