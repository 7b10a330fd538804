/* serialization.c: the two byte-level helpers behind ctorch.save / ctorch.load and the safetensors
 * reader/writer (python/ctorch/serialization.py): a tensor's elements as little-endian bytes, and a
 * new CPU tensor from a range of a bytes-like object. They do no parsing: the file formats, their
 * validation and every error message about a file live in the Python module. */
#include "args.h"
#include "device.h"
#include "dtype.h"
#include "registry.h"
#include "tensor.h"
#include <string.h>

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

PyDoc_STRVAR(tensor_bytes_doc, "_tensor_bytes(tensor) -> bytes\n\nThe elements of tensor (any device and layout) in "
                               "row-major order, little-endian.");
static PyObject *py_tensor_bytes(PyObject *self, PyObject *arg)
{
    if (!CtTensor_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "_tensor_bytes(): expected a Tensor, got %s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    if (!host_is_little_endian()) {
        PyErr_SetString(PyExc_RuntimeError, "ctorch serialization needs a little-endian host");
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(arg);
    /* a dense CPU copy unless t already is one */
    CtTensorObject *c = ct_device_of(t).type == CT_DEV_CPU ? ct_contiguous(t) : ct_to(t, t->dtype, ct_cpu(), true);
    if (c == NULL) {
        return NULL;
    }
    if (!ct_is_contiguous(c)) {
        Py_SETREF(c, ct_contiguous(c));
        if (c == NULL) {
            return NULL;
        }
    }
    size_t nbytes = (size_t)ct_numel(c) * ct_itemsize(c);
    PyObject *out = PyBytes_FromStringAndSize(nbytes ? ct_data(c) : NULL, (Py_ssize_t)nbytes);
    Py_DECREF(c);
    return out;
}

PyDoc_STRVAR(tensor_from_bytes_doc,
             "_tensor_from_bytes(data, offset, dtype, shape) -> Tensor\n\nA new CPU tensor of dtype and shape whose "
             "elements are copied from data[offset:offset + nbytes] (little-endian). ValueError when the range "
             "does not lie inside data or the shape is invalid.");
static PyObject *py_tensor_from_bytes(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"data", "offset", "dtype", "shape", NULL};
    PyObject *a[4];
    int64_t offset = 0;
    CtDType dtype = CT_F32;
    int64_t sizes[CT_MAX_DIMS];
    if (ct_parse_args("_tensor_from_bytes", args, nargs, kwnames, names, 4, a) < 0 || ct_arg_int64(a[1], &offset) < 0 ||
        ct_dtype_from_object(a[2], &dtype) < 0) {
        return NULL;
    }
    if (!host_is_little_endian()) {
        PyErr_SetString(PyExc_RuntimeError, "ctorch serialization needs a little-endian host");
        return NULL;
    }
    if (!(PyList_Check(a[3]) || PyTuple_Check(a[3]))) {
        PyErr_SetString(PyExc_ValueError, "_tensor_from_bytes(): shape must be a list of ints");
        return NULL;
    }
    Py_ssize_t nd = PySequence_Fast_GET_SIZE(a[3]);
    if (nd > CT_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "_tensor_from_bytes(): %zd dimensions (at most %d)", nd, CT_MAX_DIMS);
        return NULL;
    }
    /* numel * itemsize with overflow checks: the shape comes from a file */
    uint64_t numel = 1;
    bool overflow = false;
    for (Py_ssize_t i = 0; i < nd; i++) {
        PyObject *d = PySequence_Fast_GET_ITEM(a[3], i);
        if (!PyLong_Check(d) || PyBool_Check(d)) {
            PyErr_SetString(PyExc_ValueError, "_tensor_from_bytes(): shape must be a list of ints");
            return NULL;
        }
        long long v = PyLong_AsLongLong(d);
        if (v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "_tensor_from_bytes(): dimension out of range");
            return NULL;
        }
        if (v < 0) {
            PyErr_Format(PyExc_ValueError, "_tensor_from_bytes(): negative dimension %lld", v);
            return NULL;
        }
        sizes[i] = v;
        if (v != 0 && numel > UINT64_MAX / (uint64_t)v) {
            overflow = true;
        }
        numel *= (uint64_t)v;
    }
    size_t isz = ct_dtype_info[dtype].itemsize;
    if (numel == 0) {
        overflow = false;
    }
    if (overflow || numel > (uint64_t)INT64_MAX / isz) {
        PyErr_SetString(PyExc_ValueError, "_tensor_from_bytes(): the shape's byte size overflows");
        return NULL;
    }
    uint64_t nbytes = numel * isz;
    Py_buffer view;
    if (PyObject_GetBuffer(a[0], &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    if (offset < 0 || (uint64_t)offset > (uint64_t)view.len || nbytes > (uint64_t)view.len - (uint64_t)offset) {
        PyErr_Format(PyExc_ValueError,
                     "_tensor_from_bytes(): %llu bytes at offset %lld do not fit in a buffer of %zd bytes",
                     (unsigned long long)nbytes, (long long)offset, view.len);
        PyBuffer_Release(&view);
        return NULL;
    }
    CtTensorObject *t = ct_empty((int)nd, sizes, dtype, ct_cpu());
    if (t != NULL && nbytes > 0) {
        memcpy(ct_data(t), (const char *)view.buf + offset, (size_t)nbytes);
    }
    PyBuffer_Release(&view);
    return (PyObject *)t;
}

PyMethodDef ct_serialization_module_methods[] = {
    {"_tensor_bytes", py_tensor_bytes, METH_O, tensor_bytes_doc},
    {"_tensor_from_bytes", CT_FASTCALL(py_tensor_from_bytes), CT_METH_FK, tensor_from_bytes_doc},
    {NULL},
};
PyMethodDef ct_serialization_tensor_methods[] = {{NULL}};
PyType_Slot ct_serialization_tensor_slots[] = {{0, NULL}};
