/* dtype.c: the dtype table, the ctorch.dtype Python type, and PyTorch's type promotion. */
#include "dtype.h"
#include "tensor.h"

const CtDTypeInfo ct_dtype_info[CT_NUM_DTYPES] = {
#define CT_DTYPE_INFO(NAME, ctype, acctype, pyname, npy, dlcode, dlbits, kind, scalar, cpp) \
    {pyname, scalar, cpp, sizeof(ctype), kind, npy, dlcode, dlbits},
    CT_DTYPE_LIST(CT_DTYPE_INFO)
#undef CT_DTYPE_INFO
};
_Static_assert(sizeof(ct_dtype_info) / sizeof(ct_dtype_info[0]) == CT_NUM_DTYPES, "dtype table size");

CtDType ct_default_float_dtype = CT_F32;

/* --- the ctorch.dtype type ---------------------------------------------------------------- */
typedef struct {
    PyObject_HEAD
    CtDType dtype;
} CtDTypeObject;

static PyTypeObject *CtDType_Type;
static PyObject *dtype_objects[CT_NUM_DTYPES];

PyObject *ct_dtype_object(CtDType d) { return dtype_objects[d]; }

static PyObject *dtype_repr(PyObject *self)
{
    return PyUnicode_FromFormat("torch.%s", ct_dtype_info[((CtDTypeObject *)self)->dtype].name);
}

static PyObject *dtype_get_is_floating_point(PyObject *self, void *closure)
{
    return PyBool_FromLong(ct_is_floating(((CtDTypeObject *)self)->dtype));
}
static PyObject *dtype_get_is_signed(PyObject *self, void *closure)
{
    CtDType d = ((CtDTypeObject *)self)->dtype;
    return PyBool_FromLong(d != CT_BOOL && d != CT_U8);
}
static PyObject *dtype_get_is_complex(PyObject *self, void *closure) { Py_RETURN_FALSE; }
static PyObject *dtype_get_itemsize(PyObject *self, void *closure)
{
    return PyLong_FromSize_t(ct_dtype_info[((CtDTypeObject *)self)->dtype].itemsize);
}

static PyObject *dtype_reduce(PyObject *self, PyObject *unused)
{
    /* Pickles as the attribute of the ctorch module. */
    return PyUnicode_FromString(ct_dtype_info[((CtDTypeObject *)self)->dtype].name);
}

static PyGetSetDef dtype_getset[] = {
    {"is_floating_point", dtype_get_is_floating_point, NULL, NULL, NULL},
    {"is_signed", dtype_get_is_signed, NULL, NULL, NULL},
    {"is_complex", dtype_get_is_complex, NULL, NULL, NULL},
    {"itemsize", dtype_get_itemsize, NULL, NULL, NULL},
    {NULL},
};

static PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS, NULL},
    {NULL},
};

static PyType_Slot dtype_slots[] = {
    {Py_tp_repr, dtype_repr},
    {Py_tp_getset, dtype_getset},
    {Py_tp_methods, dtype_methods},
    {Py_tp_doc, "A ctorch data type (torch.dtype)."},
    {0, NULL},
};

static PyType_Spec dtype_spec = {
    "ctorch.dtype", sizeof(CtDTypeObject), 0, Py_TPFLAGS_DEFAULT, dtype_slots,
};

int ct_dtype_from_object(PyObject *obj, CtDType *out)
{
    if (Py_IS_TYPE(obj, CtDType_Type)) {
        *out = ((CtDTypeObject *)obj)->dtype;
        return 0;
    }
    if (obj == (PyObject *)&PyFloat_Type) {
        *out = CT_F64;
        return 0;
    }
    if (obj == (PyObject *)&PyLong_Type) {
        *out = CT_I64;
        return 0;
    }
    if (obj == (PyObject *)&PyBool_Type) {
        *out = CT_BOOL;
        return 0;
    }
    /* numpy dtypes and scalar types: match by name */
    PyObject *name = NULL;
    if (PyType_Check(obj) || PyObject_HasAttrString(obj, "itemsize")) {
        PyObject *np_dtype = PyObject_HasAttrString(obj, "char") && !PyType_Check(obj)
                                 ? Py_NewRef(obj)
                                 : NULL;
        if (np_dtype == NULL && PyType_Check(obj)) {
            PyObject *np = PyImport_ImportModule("numpy");
            if (np != NULL) {
                np_dtype = PyObject_CallMethod(np, "dtype", "O", obj);
                Py_DECREF(np);
            }
            PyErr_Clear();
        }
        if (np_dtype != NULL) {
            name = PyObject_GetAttrString(np_dtype, "name");
            Py_DECREF(np_dtype);
        }
        PyErr_Clear();
    }
    if (name != NULL && PyUnicode_Check(name)) {
        const char *s = PyUnicode_AsUTF8(name);
        for (int d = 0; d < CT_NUM_DTYPES; d++) {
            if (s != NULL && strcmp(s, ct_dtype_info[d].name) == 0) {
                Py_DECREF(name);
                *out = (CtDType)d;
                return 0;
            }
        }
    }
    Py_XDECREF(name);
    PyErr_Format(PyExc_TypeError, "dtype must be a torch.dtype (got %s)", Py_TYPE(obj)->tp_name);
    return -1;
}

int ct_dtype_converter(PyObject *obj, void *out)
{
    if (obj == Py_None) {
        return 1;
    }
    return ct_dtype_from_object(obj, (CtDType *)out) == 0 ? 1 : 0;
}

int ct_scalar_from_object(PyObject *obj, CtScalar *out)
{
    if (PyBool_Check(obj)) {
        out->kind = CT_KIND_BOOL;
        out->v.b = obj == Py_True;
        return 0;
    }
    if (PyLong_Check(obj)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (overflow) {
            PyErr_SetString(PyExc_RuntimeError, "Overflow when unpacking long");
            return -1;
        }
        if (v == -1 && PyErr_Occurred()) {
            return -1;
        }
        out->kind = CT_KIND_INT;
        out->v.i = v;
        return 0;
    }
    if (PyFloat_Check(obj)) {
        out->kind = CT_KIND_FLOAT;
        out->v.d = PyFloat_AS_DOUBLE(obj);
        return 0;
    }
    if (CtTensor_Check(obj) && CT_TENSOR(obj)->ndim == 0) {
        return ct_item(CT_TENSOR(obj), out);
    }
    /* numpy scalars and other numbers */
    if (PyIndex_Check(obj)) {
        PyObject *i = PyNumber_Index(obj);
        if (i == NULL) {
            return -1;
        }
        int r = ct_scalar_from_object(i, out);
        Py_DECREF(i);
        return r;
    }
    if (PyNumber_Check(obj) && !PyComplex_Check(obj)) {
        double d = PyFloat_AsDouble(obj);
        if (d == -1.0 && PyErr_Occurred()) {
            return -1;
        }
        out->kind = CT_KIND_FLOAT;
        out->v.d = d;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "expected a number, got %s", Py_TYPE(obj)->tp_name);
    return -1;
}

/* --- promotion ----------------------------------------------------------------------------- */
CtDType ct_promote_types(CtDType a, CtDType b)
{
    if (a == b) {
        return a;
    }
    if (a == CT_BOOL) {
        return b;
    }
    if (b == CT_BOOL) {
        return a;
    }
    int ka = ct_dtype_info[a].kind, kb = ct_dtype_info[b].kind;
    if (ka == CT_KIND_FLOAT && kb == CT_KIND_FLOAT) {
        if ((a == CT_F16 && b == CT_BF16) || (a == CT_BF16 && b == CT_F16)) {
            return CT_F32;
        }
        return ct_dtype_info[a].itemsize >= ct_dtype_info[b].itemsize ? a : b;
    }
    if (ka == CT_KIND_FLOAT) {
        return a;
    }
    if (kb == CT_KIND_FLOAT) {
        return b;
    }
    /* both integers */
    if (a == CT_U8 || b == CT_U8) {
        CtDType other = a == CT_U8 ? b : a;
        return other == CT_I8 ? CT_I16 : other;
    }
    return ct_dtype_info[a].itemsize >= ct_dtype_info[b].itemsize ? a : b;
}

/* Python: promote_types(a, b) */
static PyObject *py_promote_types(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    CtDType a, b;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "promote_types() takes 2 arguments");
        return NULL;
    }
    if (ct_dtype_from_object(args[0], &a) < 0 || ct_dtype_from_object(args[1], &b) < 0) {
        return NULL;
    }
    return Py_NewRef(ct_dtype_object(ct_promote_types(a, b)));
}

static PyObject *py_get_default_dtype(PyObject *self, PyObject *unused)
{
    return Py_NewRef(ct_dtype_object(ct_default_float_dtype));
}

static PyObject *py_set_default_dtype(PyObject *self, PyObject *arg)
{
    CtDType d;
    if (ct_dtype_from_object(arg, &d) < 0) {
        return NULL;
    }
    if (d != CT_F32 && d != CT_F64 && d != CT_F16 && d != CT_BF16) {
        PyErr_Format(PyExc_TypeError, "only floating-point types are supported as the default type");
        return NULL;
    }
    ct_default_float_dtype = d;
    Py_RETURN_NONE;
}

static PyMethodDef dtype_module_methods[] = {
    {"promote_types", (PyCFunction)(void (*)(void))py_promote_types, METH_FASTCALL,
     "promote_types(type1, type2) -> dtype"},
    {"get_default_dtype", py_get_default_dtype, METH_NOARGS, "get_default_dtype() -> dtype"},
    {"set_default_dtype", py_set_default_dtype, METH_O, "set_default_dtype(d)"},
    {NULL},
};

int ct_dtype_init(PyObject *module)
{
    CtDType_Type = (PyTypeObject *)PyType_FromSpec(&dtype_spec);
    if (CtDType_Type == NULL) {
        return -1;
    }
    for (int d = 0; d < CT_NUM_DTYPES; d++) {
        CtDTypeObject *o = PyObject_New(CtDTypeObject, CtDType_Type);
        if (o == NULL) {
            return -1;
        }
        o->dtype = (CtDType)d;
        dtype_objects[d] = (PyObject *)o; /* kept for the life of the process */
        if (PyModule_AddObjectRef(module, ct_dtype_info[d].name, (PyObject *)o) < 0) {
            return -1;
        }
    }
    /* PyTorch's aliases */
    static const struct {
        const char *alias;
        CtDType d;
    } aliases[] = {{"float", CT_F32}, {"double", CT_F64}, {"half", CT_F16}, {"long", CT_I64},
                   {"int", CT_I32},   {"short", CT_I16},  {"bool", CT_BOOL}};
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
        if (PyModule_AddObjectRef(module, aliases[i].alias, dtype_objects[aliases[i].d]) < 0) {
            return -1;
        }
    }
    if (PyModule_AddObjectRef(module, "dtype", (PyObject *)CtDType_Type) < 0) {
        return -1;
    }
    return PyModule_AddFunctions(module, dtype_module_methods);
}
