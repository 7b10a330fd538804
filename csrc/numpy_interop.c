/* numpy_interop.c: tensors from Python data and numpy arrays, and back: tensor(), from_numpy(),
 * as_tensor(), .numpy() (shares memory on the CPU, as PyTorch), __array__, tolist(). */
#include "args.h"
#include "device.h"
#include "numpy_api.h"
#include "registry.h"
#include "storage.h"
#include "tensor.h"
#include <string.h>

static int npy_type_of(CtDType d) { return ct_dtype_info[d].npy_type; }

static int dtype_of_npy(int npy, CtDType *out)
{
    for (int d = 0; d < CT_NUM_DTYPES; d++) {
        if (ct_dtype_info[d].npy_type >= 0 && PyArray_EquivTypenums(ct_dtype_info[d].npy_type, npy)) {
            *out = (CtDType)d;
            return 0;
        }
    }
    return -1;
}

/* A CPU tensor sharing arr's memory (arr must be aligned, native byte order, supported dtype). */
static CtTensorObject *wrap_array(PyArrayObject *arr)
{
    CtDType dtype;
    if (dtype_of_npy(PyArray_TYPE(arr), &dtype) < 0) {
        PyErr_Format(PyExc_TypeError,
                     "can't convert np.ndarray of type numpy.%s. The only supported types are: float64, float32, "
                     "float16, int64, int32, int16, int8, uint8, and bool.",
                     PyArray_DESCR(arr)->typeobj->tp_name);
        return NULL;
    }
    int nd = PyArray_NDIM(arr);
    if (nd > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions, got %d", CT_MAX_DIMS, nd);
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    int64_t isz = (int64_t)ct_dtype_info[dtype].itemsize;
    for (int i = 0; i < nd; i++) {
        sizes[i] = PyArray_DIM(arr, i);
        npy_intp s = PyArray_STRIDE(arr, i);
        if (s % isz != 0) {
            PyErr_SetString(PyExc_ValueError, "given numpy array strides not a multiple of the element byte size. "
                                              "Copy the numpy array to reallocate the memory.");
            return NULL;
        }
        strides[i] = s / isz;
        if (strides[i] < 0) {
            PyErr_SetString(PyExc_ValueError,
                            "At least one stride in the given numpy array is negative, and tensors with negative "
                            "strides are not currently supported. (You can probably work around this by making a "
                            "copy of your array  with array.copy().) ");
            return NULL;
        }
    }
    /* The storage spans the whole extent the array may address. */
    size_t nbytes = (size_t)PyArray_NBYTES(arr);
    CtStorageObject *s = ct_storage_wrap(PyArray_DATA(arr), nbytes, ct_cpu(), (PyObject *)arr);
    if (s == NULL) {
        return NULL;
    }
    CtTensorObject *t = ct_tensor_new(s, 0, nd, sizes, strides, dtype);
    Py_DECREF(s);
    return t;
}

static PyObject *py_from_numpy(PyObject *self, PyObject *arg)
{
    if (!PyArray_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "expected np.ndarray (got %s)", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    PyArrayObject *arr = (PyArrayObject *)arg;
    if (!PyArray_ISNOTSWAPPED(arr)) {
        PyErr_SetString(PyExc_ValueError, "given numpy array has byte order different from the native byte order. "
                                          "Conversion between byte orders is currently not supported.");
        return NULL;
    }
    if (!PyArray_ISWRITEABLE(arr)) {
        /* PyTorch warns and shares anyway; we share too. */
    }
    return (PyObject *)wrap_array(arr);
}

/* Infers PyTorch's dtype for nested Python data converted by numpy. */
static CtDType infer_dtype(PyArrayObject *arr)
{
    switch (PyArray_TYPE(arr)) {
    case NPY_BOOL:
        return CT_BOOL;
    case NPY_FLOAT:
    case NPY_DOUBLE:
    case NPY_HALF:
    case NPY_LONGDOUBLE:
        return ct_default_float_dtype;
    default:
        return CT_I64;
    }
}

/* tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False): always copies. */
static PyObject *py_tensor(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"data", "*dtype", "*device", "*requires_grad", "*pin_memory", NULL};
    PyObject *a[5];
    if (ct_parse_args("tensor", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    PyObject *data = a[0];
    CtDevice device = ct_cpu();
    bool requires_grad = false;
    bool has_dtype = a[1] != NULL && a[1] != Py_None;
    CtDType dtype = CT_F32;
    if ((has_dtype && ct_dtype_from_object(a[1], &dtype) < 0) || !ct_device_converter(a[2] ? a[2] : Py_None, &device) ||
        ct_arg_bool(a[3], &requires_grad) < 0) {
        return NULL;
    }
    CtTensorObject *src = NULL, *out = NULL;
    PyArrayObject *arr = NULL;
    if (CtTensor_Check(data)) {
        src = (CtTensorObject *)Py_NewRef(data);
        if (a[2] == NULL || a[2] == Py_None) {
            device = ct_device_of(src);
        }
    } else {
        if (PyArray_Check(data)) {
            arr = (PyArrayObject *)PyArray_FromAny(data, NULL, 0, 0, NPY_ARRAY_ALIGNED | NPY_ARRAY_NOTSWAPPED, NULL);
        } else {
            arr = (PyArrayObject *)PyArray_FromAny(data, NULL, 0, 0, NPY_ARRAY_ALIGNED | NPY_ARRAY_NOTSWAPPED, NULL);
            if (arr != NULL && !PyArray_ISNUMBER(arr) && !PyArray_ISBOOL(arr)) {
                PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", Py_TYPE(data)->tp_name);
                Py_CLEAR(arr);
            }
            if (arr != NULL) {
                CtDType inferred = infer_dtype(arr);
                PyArrayObject *conv = (PyArrayObject *)PyArray_FromAny(
                    (PyObject *)arr, PyArray_DescrFromType(inferred == CT_BOOL ? NPY_BOOL : inferred == CT_I64 ? NPY_INT64 : NPY_DOUBLE),
                    0, 0, NPY_ARRAY_ALIGNED, NULL);
                Py_DECREF(arr);
                arr = conv;
                if (!has_dtype) {
                    dtype = inferred;
                    has_dtype = true;
                }
            }
        }
        if (arr == NULL) {
            return NULL;
        }
        src = wrap_array(arr);
        if (src == NULL) {
            goto error;
        }
    }
    if (!has_dtype) {
        dtype = src->dtype;
    }
    out = ct_empty(src->ndim, src->sizes, dtype, device);
    if (out == NULL || ct_copy_(out, src) < 0) {
        goto error;
    }
    out->requires_grad = requires_grad;
    Py_XDECREF(arr);
    Py_DECREF(src);
    return (PyObject *)out;
error:
    Py_XDECREF(arr);
    Py_XDECREF(src);
    Py_XDECREF(out);
    return NULL;
}

/* .numpy(force=False): shares memory with a CPU tensor (the array keeps the storage alive). */
static PyObject *tensor_numpy(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"*force", NULL};
    PyObject *a[1];
    bool force = false;
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_parse_args("numpy", args, nargs, kwnames, names, 0, a) < 0 || ct_arg_bool(a[0], &force) < 0) {
        return NULL;
    }
    if (ct_device_of(t).type != CT_DEV_CPU) {
        if (!force) {
            char buf[32];
            ct_device_str(ct_device_of(t), buf, sizeof(buf));
            PyErr_Format(PyExc_TypeError,
                         "can't convert %s device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
                         "memory first.",
                         buf);
            return NULL;
        }
        CtTensorObject *c = ct_to(t, t->dtype, ct_cpu(), false);
        if (c == NULL) {
            return NULL;
        }
        PyObject *r = tensor_numpy((PyObject *)c, NULL, 0, NULL);
        Py_DECREF(c);
        return r;
    }
    if (t->requires_grad && !force) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
        return NULL;
    }
    int npy = npy_type_of(t->dtype);
    if (npy < 0) {
        PyErr_Format(PyExc_TypeError, "Got unsupported ScalarType %s", t->dtype == CT_BF16 ? "BFloat16" : "?");
        return NULL;
    }
    npy_intp dims[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        dims[i] = (npy_intp)t->sizes[i];
        strides[i] = (npy_intp)(t->strides[i] * (int64_t)ct_itemsize(t));
    }
    PyObject *arr = PyArray_New(&PyArray_Type, t->ndim, dims, npy, strides, ct_data(t), 0, NPY_ARRAY_WRITEABLE, NULL);
    if (arr == NULL) {
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)arr, Py_NewRef(self)) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    PyArray_UpdateFlags((PyArrayObject *)arr, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    return arr;
}

PyMethodDef ct_interop_tensor_methods[] = {
    {"numpy", CT_FASTCALL(tensor_numpy), CT_METH_FK, "numpy(*, force=False): a numpy array sharing memory"},
    {NULL},
};
PyMethodDef ct_interop_module_methods[] = {
    {"tensor", CT_FASTCALL(py_tensor), CT_METH_FK, "tensor(data, *, dtype=None, device=None, requires_grad=False)"},
    {"from_numpy", py_from_numpy, METH_O, "from_numpy(ndarray): a tensor sharing the array's memory"},
    {NULL},
};
PyType_Slot ct_interop_tensor_slots[] = {{0, NULL}};
