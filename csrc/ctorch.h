/* ctorch.h: the core structs and enums of ctorch (dtypes, devices, storage, tensor).
 *
 * Everything else in csrc/ includes this header. Function prototypes live in the
 * per-concern headers (dtype.h, device.h, storage.h, tensor.h, iter.h, ops.h, ...).
 * No CUDA header is included here: C files never see CUDA C++ types. */
#ifndef CTORCH_H
#define CTORCH_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most dimensions a tensor may have (PyTorch's TensorIterator allows 25). */
#define CT_MAX_DIMS 25

/* ------------------------------------------------------------------------------------------
 * dtypes. One row per dtype:
 *   X(NAME, ctype, acctype, "python name", numpy typenum, dlpack code, dlpack bits, kind)
 * ctype is the storage type; acctype is the type arithmetic is done in (half and bfloat16
 * are stored as raw 16-bit words and computed in float). kind: 0 bool, 1 int, 2 float.
 * The numpy typenums are spelled as integers so that this header does not need numpy. */
typedef uint16_t ct_half;     /* IEEE binary16 bits */
typedef uint16_t ct_bfloat16; /* bfloat16 bits */

#define CT_KIND_BOOL 0
#define CT_KIND_INT 1
#define CT_KIND_FLOAT 2

#define CT_DTYPE_LIST(X)                                                 \
    X(BOOL, bool, bool, "bool", 0 /*NPY_BOOL*/, 6, 8, CT_KIND_BOOL, "Bool", "bool")      \
    X(U8, uint8_t, uint8_t, "uint8", 2 /*NPY_UBYTE*/, 1, 8, CT_KIND_INT, "Byte", "unsigned char") \
    X(I8, int8_t, int8_t, "int8", 1 /*NPY_BYTE*/, 0, 8, CT_KIND_INT, "Char", "signed char")     \
    X(I16, int16_t, int16_t, "int16", 3 /*NPY_SHORT*/, 0, 16, CT_KIND_INT, "Short", "short int") \
    X(I32, int32_t, int32_t, "int32", 5 /*NPY_INT*/, 0, 32, CT_KIND_INT, "Int", "int") \
    X(I64, int64_t, int64_t, "int64", 7 /*NPY_LONG*/, 0, 64, CT_KIND_INT, "Long", "long int") \
    X(F16, ct_half, float, "float16", 23 /*NPY_HALF*/, 2, 16, CT_KIND_FLOAT, "Half", "c10::Half") \
    X(BF16, ct_bfloat16, float, "bfloat16", -1 /*none*/, 4, 16, CT_KIND_FLOAT, "BFloat16", "c10::BFloat16") \
    X(F32, float, float, "float32", 11 /*NPY_FLOAT*/, 2, 32, CT_KIND_FLOAT, "Float", "float") \
    X(F64, double, double, "float64", 12 /*NPY_DOUBLE*/, 2, 64, CT_KIND_FLOAT, "Double", "double")

typedef enum {
#define CT_DTYPE_ENUM(NAME, ...) CT_##NAME,
    CT_DTYPE_LIST(CT_DTYPE_ENUM)
#undef CT_DTYPE_ENUM
        CT_NUM_DTYPES
} CtDType;

typedef struct {
    const char *name;    /* "float32" */
    const char *scalar_name; /* PyTorch's ScalarType name in messages: "Float" */
    const char *cpp_name;    /* the C++ type PyTorch's messages name: "float", "long int" */
    size_t itemsize;     /* bytes per element */
    int kind;            /* CT_KIND_* */
    int npy_type;        /* numpy typenum, -1 if numpy has none */
    int dlpack_code;     /* DLDataTypeCode */
    int dlpack_bits;
} CtDTypeInfo;

/* A Python scalar or a 0-d value carried into a kernel. */
typedef struct {
    int kind; /* CT_KIND_* of the value held */
    union {
        bool b;
        int64_t i;
        double d;
    } v;
} CtScalar;

/* ------------------------------------------------------------------------------------------
 * devices */
typedef enum { CT_DEV_CPU = 0, CT_DEV_CUDA = 1 } CtDeviceType;

typedef struct {
    CtDeviceType type;
    int index; /* -1 for the CPU; the CUDA ordinal otherwise */
} CtDevice;

/* Per-family kernel tables. Each op family defines its struct in its own header; a device
 * that lacks a family leaves the pointer NULL and the op raises. */
struct CtElementwiseKernels;
struct CtReduceKernels;
struct CtIndexKernels;
struct CtBlasKernels;
struct CtRandomKernels;
struct CtNNKernels;
struct CtOptimKernels;

/* The device vtable: memory first, then kernel families. Every op reaches device memory
 * only through this table. alloc returns NULL with a Python exception set on failure. */
typedef struct CtDeviceOps {
    const char *name;
    void *(*alloc)(size_t nbytes, CtDevice device);
    void (*free)(void *ptr, size_t nbytes, CtDevice device);
    /* Copies between this device and host memory; 0 on success, -1 with an exception set. */
    int (*copy_h2d)(void *dst, const void *src, size_t nbytes, CtDevice device);
    int (*copy_d2h)(void *dst, const void *src, size_t nbytes, CtDevice device);
    int (*copy_d2d)(void *dst, const void *src, size_t nbytes, CtDevice device);
    int (*memset)(void *dst, int value, size_t nbytes, CtDevice device);
    const struct CtElementwiseKernels *elementwise;
    const struct CtReduceKernels *reduce;
    const struct CtIndexKernels *index;
    const struct CtBlasKernels *blas;
    const struct CtRandomKernels *random;
    /* Optional (NULL on the CPU): copy_h2d/copy_d2h for non_blocking=True, which return without
     * waiting; fully asynchronous on the device's current stream when the host memory is pinned. */
    int (*copy_h2d_async)(void *dst, const void *src, size_t nbytes, CtDevice device);
    int (*copy_d2h_async)(void *dst, const void *src, size_t nbytes, CtDevice device);
    const struct CtNNKernels *nn;
    const struct CtOptimKernels *optim;
} CtDeviceOps;

/* ------------------------------------------------------------------------------------------
 * storage: one flat buffer on one device. Only storage_dealloc frees memory. */
typedef struct {
    PyObject_HEAD
    void *data;
    size_t nbytes;
    CtDevice device;
    PyObject *owner;  /* memory borrowed from this object (numpy array, DLPack capsule), or NULL
                         when the device allocator owns it */
    /* With owner NULL: releases data instead of the device vtable's free when set (pinned host
     * memory of a CPU storage goes back to the CUDA backend's pinned-memory cache). */
    void (*free_fn)(void *data, size_t nbytes);
    uint64_t version; /* bumped by in-place writes; shared by every view (autograd checks it) */
} CtStorageObject;

/* ------------------------------------------------------------------------------------------
 * tensor: metadata over a storage. Views share the storage and change only metadata. */
typedef struct {
    PyObject_HEAD
    CtStorageObject *storage; /* strong reference, never NULL */
    int64_t offset;           /* storage offset in elements */
    int ndim;
    CtDType dtype;
    int64_t sizes[CT_MAX_DIMS];
    int64_t strides[CT_MAX_DIMS]; /* in elements */
    /* autograd fields (filled by the autograd issue) */
    bool requires_grad;
    bool retains_grad;
    int output_nr;      /* which output of grad_fn this tensor is */
    PyObject *grad;     /* Tensor or NULL */
    PyObject *grad_fn;  /* autograd node or NULL */
    PyObject *hooks;    /* list of callables or NULL */
    PyObject *grad_accumulator; /* weak reference to this leaf's AccumulateGrad node, or NULL */
    PyObject *view_base;        /* the tensor (never itself a view) this one is a differentiable view of, or NULL */
    uint64_t view_version;      /* storage version when grad_fn was last set (views): a write through
                                   the base or another view since then makes autograd regenerate grad_fn */
    bool view_no_grad;          /* the view was made in no_grad mode: it never takes its base's history */
    PyObject *weakreflist;
} CtTensorObject;

#endif /* CTORCH_H */
