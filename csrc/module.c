/* module.c: ctorch._C, the extension module. Initialises numpy's C API, the core types and
 * every op family listed in registry.h. */
#define PY_ARRAY_UNIQUE_SYMBOL ctorch_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "ctorch.h"
#include "autograd.h"
#include "cuda_loader.h"
#include "device.h"
#include "dtype.h"
#include "legacy_types.h"
#include "parallel.h"
#include "random.h"
#include "registry.h"
#include "storage.h"
#include "tensor.h"
#include <numpy/arrayobject.h>

static PyObject *py_get_num_threads(PyObject *self, PyObject *unused) { return PyLong_FromLong(ct_get_num_threads()); }

static PyObject *py_set_num_threads(PyObject *self, PyObject *arg)
{
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (n < 1) {
        PyErr_SetString(PyExc_RuntimeError, "set_num_threads expects a positive integer");
        return NULL;
    }
    ct_set_num_threads((int)n);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"get_num_threads", py_get_num_threads, METH_NOARGS, "number of CPU threads used by kernels"},
    {"set_num_threads", py_set_num_threads, METH_O, "sets the number of CPU threads used by kernels"},
    {NULL},
};

static struct PyModuleDef ctorch_module = {
    PyModuleDef_HEAD_INIT, "ctorch._C", "The C core of ctorch.", -1, module_methods,
};

#define CT_FAMILY_ADD(name)                                                     \
    if (PyModule_AddFunctions(m, ct_##name##_module_methods) < 0) {            \
        goto error;                                                             \
    }

PyMODINIT_FUNC PyInit__C(void)
{
    import_array();
    PyObject *m = PyModule_Create(&ctorch_module);
    if (m == NULL) {
        return NULL;
    }
    if (ct_dtype_init(m) < 0 || ct_device_init(m) < 0 || ct_storage_init(m) < 0 || ct_tensor_init(m) < 0 ||
        ct_cuda_loader_init(m) < 0 || ct_random_init(m) < 0 || ct_autograd_init(m) < 0 ||
        ct_finfo_init(m) < 0 || ct_legacy_types_init(m) < 0) {
        goto error;
    }
    CT_FAMILY_LIST(CT_FAMILY_ADD)
    if (ct_autograd_install(m) < 0) {
        goto error;
    }
    return m;
error:
    Py_DECREF(m);
    return NULL;
}
