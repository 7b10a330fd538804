/* legacy_types.c: PyTorch's legacy tensor types (torch.FloatTensor, torch.cuda.LongTensor, ...).
 *
 * Each is a class of the metaclass ctorch.tensortype, one per dtype and device type. Calling one runs
 * the legacy constructor (also torch.Tensor(...)'s, for the default type): FloatTensor(2, 3) is an
 * uninitialised 2x3 float32 tensor, FloatTensor([1, 2]) one from data, FloatTensor(t) an alias of t
 * (which must be of the type), FloatTensor(storage) a view of a whole untyped storage. The classes
 * answer isinstance() for tensors of exactly their dtype and device type, name the targets of
 * Tensor.type(), and set_default_tensor_type() picks one as the default (its dtype becomes the default
 * dtype, a CUDA one makes the factories create on CUDA). Their other attributes are Tensor's, so
 * torch.FloatTensor.add is Tensor.add. Tensors themselves are always ctorch.Tensor. */
#include "legacy_types.h"
#include "args.h"
#include "creation.h"
#include "device.h"
#include "dtype.h"
#include "storage.h"
#include "tensor.h"
#include <string.h>

static PyTypeObject *tensortype_type; /* the metaclass */
static PyObject *legacy_types[2][CT_NUM_DTYPES]; /* [is cuda][dtype], kept for the life of the process */

bool ct_legacy_type_of(PyObject *obj, CtDType *dtype, bool *cuda)
{
    for (int c = 0; c < 2; c++) {
        for (int d = 0; d < CT_NUM_DTYPES; d++) {
            if (legacy_types[c][d] != NULL && obj == legacy_types[c][d]) {
                *dtype = (CtDType)d;
                *cuda = c == 1;
                return true;
            }
        }
    }
    return false;
}

/* --- the legacy constructor ------------------------------------------------------------------ */
/* TypeError "new() received an invalid combination of arguments - got (int, int, dtype=torch.dtype), but
 * expected one of: ..." with PyTorch's list of the constructor's forms. Returns NULL. */
static PyObject *invalid_combination(PyObject *args, PyObject *kwargs)
{
    PyObject *got = PyUnicode_FromString("");
    Py_ssize_t n = PyTuple_GET_SIZE(args), pos = 0;
    PyObject *key, *value;
    for (Py_ssize_t i = 0; got != NULL && i < n; i++) {
        Py_SETREF(got, PyUnicode_FromFormat("%U%s%s", got, i ? ", " : "", ct_type_name(PyTuple_GET_ITEM(args, i))));
    }
    while (got != NULL && kwargs != NULL && PyDict_Next(kwargs, &pos, &key, &value)) {
        const char *type = PyObject_TypeCheck(value, Py_TYPE(ct_dtype_object(CT_F32))) ? "torch.dtype"
                                                                                         : ct_type_name(value);
        /* as PyTorch: "(int, size=tuple)", but "(size=int, )" without positional arguments */
        Py_SETREF(got, n > 0 ? PyUnicode_FromFormat("%U, %S=%s", got, key, type)
                             : PyUnicode_FromFormat("%U%S=%s, ", got, key, type));
    }
    if (got != NULL) {
        PyErr_Format(PyExc_TypeError,
                     "new() received an invalid combination of arguments - got (%U), but expected one of:\n"
                     " * (*, torch.device device = None)\n * (torch.Storage storage)\n * (Tensor other)\n"
                     " * (tuple of ints size, *, torch.device device = None)\n"
                     " * (object data, *, torch.device device = None)\n",
                     got);
        Py_DECREF(got);
    }
    return NULL;
}

/* "TensorOptions(dtype=float, device=cpu, ...)", PyTorch's C++ spelling of a tensor's type. */
static PyObject *tensor_options_str(CtDType dtype, CtDevice device)
{
    char dev[32];
    ct_device_str(device, dev, sizeof(dev));
    return PyUnicode_FromFormat("TensorOptions(dtype=%s, device=%s, layout=Strided, requires_grad=false (default), "
                                "pinned_memory=false (default), memory_format=(nullopt))",
                                ct_dtype_info[dtype].cpp_name, dev);
}

/* Tensor(other) / FloatTensor(other): an alias of other (its autograd history kept: AliasBackward0); a
 * typed constructor requires other's dtype and device type to be its own. */
static PyObject *legacy_alias(CtDType dtype, CtDevice device, bool typed, PyObject *other)
{
    CtTensorObject *t = CT_TENSOR(other);
    if (typed && (t->dtype != dtype || ct_device_of(t).type != device.type)) {
        PyObject *expected = tensor_options_str(dtype, device);
        PyObject *got = expected != NULL ? tensor_options_str(t->dtype, ct_device_of(t)) : NULL;
        if (got != NULL) {
            PyErr_Format(PyExc_TypeError, "expected %U (got %U)", expected, got);
        }
        Py_XDECREF(expected);
        Py_XDECREF(got);
        return NULL;
    }
    return PyObject_GetItem(other, Py_Ellipsis);
}

/* A 1-d tensor of dtype over all of storage (a trailing partial element left out). */
static PyObject *storage_tensor(PyObject *storage, CtDType dtype)
{
    CtStorageObject *s = (CtStorageObject *)storage;
    int64_t n = (int64_t)(s->nbytes / ct_dtype_info[dtype].itemsize), stride = 1;
    return (PyObject *)ct_tensor_new(s, 0, 1, &n, &stride, dtype);
}

/* Tensor(*sizes) / FloatTensor(*sizes): all ints (or one torch.Size, or the tuple or list of size=),
 * uninitialised. */
static PyObject *legacy_sized(CtDType dtype, CtDevice device, PyObject *seq)
{
    int64_t sizes[CT_MAX_DIMS];
    if (PyTuple_Check(seq) && PyTuple_GET_SIZE(seq) == 1 && ct_size_check(PyTuple_GET_ITEM(seq, 0))) {
        seq = PyTuple_GET_ITEM(seq, 0);
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions, got %zd", CT_MAX_DIMS, n);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyLong_Check(item) || PyBool_Check(item)) {
            PyErr_Format(PyExc_TypeError,
                         "new(): argument 'size' failed to unpack the object at pos %zd with error \"type must be "
                         "tuple of ints,but got %s\"",
                         i + 1, ct_type_name(item));
            return NULL;
        }
        if (ct_arg_int64(item, &sizes[i]) < 0) {
            return NULL;
        }
    }
    return (PyObject *)ct_empty((int)n, sizes, dtype, device);
}

/* Tensor(data) / FloatTensor(data): a new tensor of the type from a sequence or an array. */
static PyObject *legacy_from_data(CtDType dtype, CtDevice device, PyObject *data)
{
    if (PyUnicode_Check(data) || PyBytes_Check(data)) {
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", ct_type_name(data));
        return NULL;
    }
    if (!PySequence_Check(data)) {
        PyErr_Format(PyExc_TypeError, "new(): data must be a sequence (got %s)", ct_type_name(data));
        return NULL;
    }
    PyObject *fn = NULL, *device_obj = NULL, *kw = NULL, *result = NULL;
    fn = PyObject_GetAttrString(PyImport_AddModule("ctorch._C"), "tensor");
    device_obj = fn != NULL ? ct_device_object(device) : NULL;
    kw = device_obj != NULL ? Py_BuildValue("{sOsO}", "dtype", ct_dtype_object(dtype), "device", device_obj) : NULL;
    if (kw != NULL) {
        PyObject *call_args[1] = {data};
        result = PyObject_VectorcallDict(fn, call_args, 1, kw);
    }
    Py_XDECREF(fn);
    Py_XDECREF(device_obj);
    Py_XDECREF(kw);
    return result;
}

PyObject *ct_legacy_new(CtDType dtype, bool cuda, bool typed, PyObject *args, PyObject *kwargs)
{
    static bool cuda_warned;
    if (cuda && !cuda_warned) {
        cuda_warned = true;
        if (PyErr_WarnEx(PyExc_UserWarning,
                         "The torch.cuda.*DtypeTensor constructors are no longer recommended. It's best to use "
                         "methods such as torch.tensor(data, dtype=*, device='cuda') to create tensors.",
                         1) < 0) {
            return NULL;
        }
    }
    CtDevice device = cuda ? (CtDevice){CT_DEV_CUDA, ct_cuda_current_device} : ct_cpu();
    PyObject *device_obj = NULL, *size_obj = NULL;
    Py_ssize_t nkw = kwargs != NULL ? PyDict_GET_SIZE(kwargs) : 0;
    if (nkw > 0) {
        device_obj = PyDict_GetItemString(kwargs, "device");
        size_obj = PyDict_GetItemString(kwargs, "size");
        if (device_obj == NULL && size_obj == NULL) {
            return invalid_combination(args, kwargs);
        }
        if (nkw > (device_obj != NULL) + (size_obj != NULL) ||
            (size_obj != NULL && (PyTuple_GET_SIZE(args) > 0 || (!PyTuple_Check(size_obj) && !PyList_Check(size_obj))))) {
            return invalid_combination(args, kwargs);
        }
        device_obj = device_obj == Py_None ? NULL : device_obj;
        CtDevice given;
        if (device_obj != NULL) {
            if (ct_device_from_object(device_obj, &given) < 0) {
                if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
                    return NULL;
                }
                PyErr_Clear();
                return invalid_combination(args, kwargs);
            }
            if (given.type != device.type) {
                PyErr_Format(PyExc_RuntimeError, "legacy constructor expects device type: %s but device type: %s was passed",
                             cuda ? "cuda" : "cpu", given.type == CT_DEV_CUDA ? "cuda" : "cpu");
                return NULL;
            }
            device = given;
        }
    }
    if (size_obj != NULL) {
        return legacy_sized(dtype, device, size_obj);
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *first = n > 0 ? PyTuple_GET_ITEM(args, 0) : NULL;
    if (n == 0) {
        int64_t zero = 0;
        return (PyObject *)ct_empty(1, &zero, dtype, device);
    }
    if ((PyLong_Check(first) && !PyBool_Check(first)) || ct_size_check(first)) {
        return legacy_sized(dtype, device, args);
    }
    if (n > 1) {
        return invalid_combination(args, kwargs);
    }
    if (CtTensor_Check(first)) {
        if (device_obj != NULL) {
            PyErr_SetString(PyExc_RuntimeError,
                            "Legacy tensor constructor of the form torch.Tensor(tensor, device=device) is not "
                            "supported.  Use torch.tensor(...) or torch.as_tensor(...) instead.");
            return NULL;
        }
        return legacy_alias(dtype, device, typed, first);
    }
    if (PyObject_TypeCheck(first, CtStorage_Type)) {
        if (nkw > 0) {
            return invalid_combination(args, kwargs);
        }
        return storage_tensor(first, dtype);
    }
    return legacy_from_data(dtype, device, first);
}

/* --- the metaclass ----------------------------------------------------------------------------- */
/* The legacy type of a class of the metaclass (always one of the table's). */
static void type_of_class(PyObject *cls, CtDType *dtype, bool *cuda)
{
    *dtype = CT_F32;
    *cuda = false;
    ct_legacy_type_of(cls, dtype, cuda);
}

static PyObject *tensortype_call(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    CtDType dtype;
    bool cuda;
    type_of_class(cls, &dtype, &cuda);
    return ct_legacy_new(dtype, cuda, true, args, kwargs);
}

/* isinstance(x, torch.FloatTensor): x is a tensor of exactly this dtype and device type. */
static PyObject *tensortype_instancecheck(PyObject *cls, PyObject *obj)
{
    CtDType dtype;
    bool cuda;
    type_of_class(cls, &dtype, &cuda);
    return PyBool_FromLong(CtTensor_Check(obj) && CT_TENSOR(obj)->dtype == dtype &&
                           (ct_device_of(CT_TENSOR(obj)).type == CT_DEV_CUDA) == cuda);
}

/* A class's own attributes first, then Tensor's (torch.FloatTensor.add is Tensor.add). */
static PyObject *tensortype_getattro(PyObject *cls, PyObject *name)
{
    PyObject *r = PyType_Type.tp_getattro(cls, name);
    if (r != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError)) {
        return r;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    r = PyObject_GenericGetAttr((PyObject *)CtTensor_Type, name);
    if (r != NULL) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return r;
    }
    PyErr_Clear();
    PyErr_Restore(type, value, tb); /* the class's own "has no attribute" */
    return NULL;
}

static PyObject *tensortype_get_dtype(PyObject *cls, void *closure)
{
    CtDType dtype;
    bool cuda;
    type_of_class(cls, &dtype, &cuda);
    return Py_NewRef(ct_dtype_object(dtype));
}

static PyObject *tensortype_get_is_cuda(PyObject *cls, void *closure)
{
    CtDType dtype;
    bool cuda;
    type_of_class(cls, &dtype, &cuda);
    return PyBool_FromLong(cuda);
}

static PyObject *tensortype_false(PyObject *cls, void *closure) { Py_RETURN_FALSE; }

static PyGetSetDef tensortype_getset[] = {
    {"dtype", tensortype_get_dtype, NULL, "the dtype of the type's tensors", NULL},
    {"is_cuda", tensortype_get_is_cuda, NULL, "whether the type's tensors live on CUDA", NULL},
    {"is_sparse", tensortype_false, NULL, "False: every ctorch type is dense", NULL},
    {"is_sparse_csr", tensortype_false, NULL, "False: every ctorch type is dense", NULL},
    {NULL},
};

static PyMethodDef tensortype_methods[] = {
    {"__instancecheck__", tensortype_instancecheck, METH_O, "a tensor of exactly this dtype and device type"},
    {NULL},
};

static PyType_Slot tensortype_slots[] = {
    {Py_tp_call, tensortype_call},
    {Py_tp_getattro, tensortype_getattro},
    {Py_tp_getset, tensortype_getset},
    {Py_tp_methods, tensortype_methods},
    {0, NULL},
};

static PyType_Spec tensortype_spec = {
    "ctorch.tensortype", 0, 0, Py_TPFLAGS_DEFAULT, tensortype_slots,
};

/* --- module functions ------------------------------------------------------------------------ */
/* _set_default_tensor_type(t): t a legacy floating type; its dtype becomes the default one and its
 * device type the default device of factories and of torch.Tensor(...). Deprecated, as in PyTorch. */
static PyObject *py_set_default_tensor_type(PyObject *self, PyObject *type)
{
    static bool warned;
    if (!warned) {
        warned = true;
        if (PyErr_WarnEx(PyExc_UserWarning,
                         "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                         "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                         1) < 0) {
            return NULL;
        }
    }
    CtDType dtype;
    bool cuda;
    if (!ct_legacy_type_of(type, &dtype, &cuda)) {
        PyErr_SetString(PyExc_TypeError, "invalid type object: only floating-point types are supported as the default type");
        return NULL;
    }
    if (!ct_is_floating(dtype)) {
        PyErr_SetString(PyExc_TypeError, "only floating-point types are supported as the default type");
        return NULL;
    }
    ct_default_float_dtype = dtype;
    ct_legacy_default_cuda = cuda;
    Py_RETURN_NONE;
}

/* _storage_tensor(storage, dtype): a 1-d tensor of dtype over the whole untyped storage (TypedStorage). */
static PyObject *py_storage_tensor(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    CtDType dtype;
    if (nargs != 2 || !PyObject_TypeCheck(args[0], CtStorage_Type)) {
        PyErr_SetString(PyExc_TypeError, "_storage_tensor(storage, dtype): expected an UntypedStorage and a dtype");
        return NULL;
    }
    if (ct_dtype_from_object(args[1], &dtype) < 0) {
        return NULL;
    }
    return storage_tensor(args[0], dtype);
}

PyMethodDef ct_legacy_module_methods[] = {
    {"_set_default_tensor_type", py_set_default_tensor_type, METH_O,
     "_set_default_tensor_type(t): makes the legacy floating type t the default one"},
    {"_storage_tensor", CT_FASTCALL(py_storage_tensor), METH_FASTCALL,
     "_storage_tensor(storage, dtype): a 1-d tensor over a whole untyped storage"},
    {NULL},
};
PyMethodDef ct_legacy_tensor_methods[] = {{NULL}};
PyType_Slot ct_legacy_tensor_slots[] = {{0, NULL}};

/* --- init ----------------------------------------------------------------------------------------- */
/* One class of the metaclass: type(name, (object,), {'__module__': module}). New reference. */
static PyObject *make_legacy_type(const char *name, const char *module)
{
    PyObject *dict = Py_BuildValue("{sssO}", "__module__", module, "__doc__", Py_None);
    if (dict == NULL) {
        return NULL;
    }
    return PyObject_CallFunction((PyObject *)tensortype_type, "s(O)N", name, (PyObject *)&PyBaseObject_Type, dict);
}

int ct_legacy_types_init(PyObject *module)
{
    tensortype_type = (PyTypeObject *)PyType_FromSpecWithBases(&tensortype_spec, (PyObject *)&PyType_Type);
    if (tensortype_type == NULL || PyModule_AddObjectRef(module, "_tensortype", (PyObject *)tensortype_type) < 0) {
        return -1;
    }
    PyObject *cuda_types = PyDict_New(); /* _C._cuda_legacy_types: name -> class, for ctorch.cuda */
    if (cuda_types == NULL) {
        return -1;
    }
    for (int d = 0; d < CT_NUM_DTYPES; d++) {
        char name[32];
        snprintf(name, sizeof(name), "%sTensor", ct_scalar_type_name((CtDType)d));
        legacy_types[0][d] = make_legacy_type(name, "ctorch");
        legacy_types[1][d] = legacy_types[0][d] != NULL ? make_legacy_type(name, "ctorch.cuda") : NULL;
        if (legacy_types[1][d] == NULL || PyModule_AddObjectRef(module, name, legacy_types[0][d]) < 0 ||
            PyDict_SetItemString(cuda_types, name, legacy_types[1][d]) < 0) {
            Py_DECREF(cuda_types);
            return -1;
        }
    }
    int rc = PyModule_AddObjectRef(module, "_cuda_legacy_types", cuda_types);
    Py_DECREF(cuda_types);
    return rc;
}
