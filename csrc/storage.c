/* storage.c: CtStorage, the single owner of a tensor buffer. Memory comes from the device
 * vtable (or is borrowed from `owner`, e.g. a numpy array) and is released only here. */
#include "storage.h"
#include "device.h"

PyTypeObject *CtStorage_Type;
Py_ssize_t ct_live_storages = 0;

static CtStorageObject *storage_alloc_object(void)
{
    CtStorageObject *s = PyObject_New(CtStorageObject, CtStorage_Type);
    if (s == NULL) {
        return NULL;
    }
    s->data = NULL;
    s->nbytes = 0;
    s->device = ct_cpu();
    s->owner = NULL;
    s->free_fn = NULL;
    s->version = 0;
    ct_live_storages++;
    return s;
}

CtStorageObject *ct_storage_new(size_t nbytes, CtDevice device)
{
    const CtDeviceOps *ops = ct_device_ops(device);
    if (ops == NULL) {
        return NULL;
    }
    if (nbytes > (size_t)INT64_MAX / 2) {
        PyErr_Format(PyExc_RuntimeError, "Trying to create tensor with %zu bytes, which is too large", nbytes);
        return NULL;
    }
    /* An empty CUDA storage holds no memory and its address is NULL, as in PyTorch (no
     * cudaMalloc(0), and nothing that could be mistaken for device memory). CPU storages always
     * get a real block (NumPy views of empty tensors need one). */
    void *data = NULL;
    if (nbytes > 0 || device.type == CT_DEV_CPU) {
        data = ops->alloc(nbytes, device);
        if (data == NULL) {
            return NULL;
        }
    }
    CtStorageObject *s = storage_alloc_object();
    if (s == NULL) {
        if (data != NULL) {
            ops->free(data, nbytes, device);
        }
        return NULL;
    }
    s->data = data;
    s->nbytes = nbytes;
    s->device = device;
    return s;
}

CtStorageObject *ct_storage_wrap(void *data, size_t nbytes, CtDevice device, PyObject *owner)
{
    CtStorageObject *s = storage_alloc_object();
    if (s == NULL) {
        return NULL;
    }
    s->data = data;
    s->nbytes = nbytes;
    s->device = device;
    s->owner = Py_NewRef(owner);
    return s;
}

CtStorageObject *ct_storage_wrap_owned(void *data, size_t nbytes, CtDevice device,
                                       void (*free_fn)(void *data, size_t nbytes))
{
    CtStorageObject *s = storage_alloc_object();
    if (s == NULL) {
        return NULL;
    }
    s->data = data;
    s->nbytes = nbytes;
    s->device = device;
    s->free_fn = free_fn;
    return s;
}

static void storage_dealloc(PyObject *self)
{
    CtStorageObject *s = (CtStorageObject *)self;
    PyTypeObject *tp = Py_TYPE(self);
    if (s->owner != NULL) {
        Py_CLEAR(s->owner);
    } else if (s->free_fn != NULL) {
        s->free_fn(s->data, s->nbytes);
    } else if (s->data != NULL) {
        /* The vtable exists: this storage was allocated through it. */
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        const CtDeviceOps *ops = ct_device_ops(s->device);
        if (ops != NULL) {
            ops->free(s->data, s->nbytes, s->device);
        } else {
            PyErr_Clear();
        }
        PyErr_Restore(et, ev, tb);
    }
    s->data = NULL;
    ct_live_storages--;
    PyObject_Free(self);
    Py_DECREF(tp);
}

static PyObject *storage_nbytes(PyObject *self, PyObject *unused)
{
    return PyLong_FromSize_t(((CtStorageObject *)self)->nbytes);
}

static PyObject *storage_data_ptr(PyObject *self, PyObject *unused)
{
    return PyLong_FromVoidPtr(((CtStorageObject *)self)->data);
}

static PyObject *storage_device(PyObject *self, void *unused)
{
    return ct_device_object(((CtStorageObject *)self)->device);
}

static PyObject *storage_is_cuda(PyObject *self, void *unused)
{
    return PyBool_FromLong(((CtStorageObject *)self)->device.type == CT_DEV_CUDA);
}

static PyGetSetDef storage_getset[] = {
    {"device", storage_device, NULL, "the device of the buffer", NULL},
    {"is_cuda", storage_is_cuda, NULL, "whether the buffer is on a CUDA device", NULL},
    {NULL},
};

static PyMethodDef storage_methods[] = {
    {"nbytes", storage_nbytes, METH_NOARGS, "size of the buffer in bytes"},
    {"data_ptr", storage_data_ptr, METH_NOARGS, "address of the buffer"},
    {"is_shared", ct_storage_is_shared_method, METH_NOARGS, "is_shared(): in shared memory (always on CUDA)"},
    {"share_memory_", ct_storage_share_memory_method, METH_NOARGS, "share_memory_(): moves it to shared memory"},
    {"_share_fd_cpu_", ct_storage_share_fd, METH_NOARGS, "_share_fd_cpu_() -> (fd, nbytes)"},
    {"_share_filename_cpu_", ct_storage_share_filename, METH_NOARGS, "_share_filename_cpu_() -> (b'', name, nbytes)"},
    {"_new_shared_fd_cpu", ct_storage_new_shared_fd, METH_VARARGS | METH_CLASS, "_new_shared_fd_cpu(fd, nbytes)"},
    {"_new_shared_filename_cpu", ct_storage_new_shared_filename, METH_VARARGS | METH_CLASS,
     "_new_shared_filename_cpu(manager, name, nbytes)"},
    {"_shared_incref", ct_storage_shared_incref, METH_NOARGS, "one more holder of a named segment"},
    {"_shared_decref", ct_storage_shared_decref, METH_NOARGS, "one fewer holder of a named segment"},
    {NULL},
};

static PyType_Slot storage_slots[] = {
    {Py_tp_dealloc, storage_dealloc},
    {Py_tp_methods, storage_methods},
    {Py_tp_getset, storage_getset},
    {Py_tp_doc, "The flat buffer behind one or more tensors."},
    {0, NULL},
};

static PyType_Spec storage_spec = {
    "ctorch.UntypedStorage", sizeof(CtStorageObject), 0, Py_TPFLAGS_DEFAULT, storage_slots,
};

static PyObject *py_live_storages(PyObject *self, PyObject *unused) { return PyLong_FromSsize_t(ct_live_storages); }

static PyMethodDef storage_module_methods[] = {
    {"_live_storages", py_live_storages, METH_NOARGS, "number of live storages (leak checks)"},
    {NULL},
};

int ct_storage_init(PyObject *module)
{
    CtStorage_Type = (PyTypeObject *)PyType_FromSpec(&storage_spec);
    if (CtStorage_Type == NULL) {
        return -1;
    }
    if (PyModule_AddObjectRef(module, "UntypedStorage", (PyObject *)CtStorage_Type) < 0) {
        return -1;
    }
    return PyModule_AddFunctions(module, storage_module_methods);
}
