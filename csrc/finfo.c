/* finfo.c: torch.finfo and torch.iinfo, the numerical properties of a floating point / integer
 * dtype, as two small immutable types installed on ctorch._C by ct_finfo_init (module.c).
 *
 *   finfo(type=None): bits, eps, max, min, tiny (= smallest_normal), resolution (10 ** -digits10),
 *       dtype (the name, a str); no argument: the default dtype
 *   iinfo(type): bits, max, min (Python ints), dtype
 *
 * The values are IEEE 754's for float16 / float32 / float64 and bfloat16's (float32's exponent with
 * 8 significand bits). Arguments, messages and reprs (C++'s stream format, %g) are PyTorch's. */
#include "dtype.h"
#include <float.h>
#include <stdio.h>

typedef struct {
    PyObject_HEAD
    CtDType dtype;
} CtDTypeLimitsObject;

static PyTypeObject *CtFInfo_Type, *CtIInfo_Type;

/* --- the values ------------------------------------------------------------------------------ */
typedef struct {
    double eps, max, tiny, resolution;
} FloatLimits;

static FloatLimits float_limits(CtDType d)
{
    switch (d) {
    case CT_F16: /* 10 significand bits, exponents -14 .. 15 */
        return (FloatLimits){0x1p-10, 65504.0, 0x1p-14, 1e-3};
    case CT_BF16: /* 7 significand bits, float32's exponents */
        return (FloatLimits){0x1p-7, 0x1.fep127, 0x1p-126, 1e-2};
    case CT_F32:
        return (FloatLimits){FLT_EPSILON, FLT_MAX, FLT_MIN, 1e-6};
    default:
        return (FloatLimits){DBL_EPSILON, DBL_MAX, DBL_MIN, 1e-15};
    }
}

/* The integer dtype's range as (min, max). */
static void int_limits(CtDType d, long long *lo, unsigned long long *hi)
{
    int bits = (int)ct_dtype_info[d].itemsize * 8;
    if (d == CT_U8) {
        *lo = 0;
        *hi = 255;
        return;
    }
    *hi = (1ULL << (bits - 1)) - 1;
    *lo = -(long long)*hi - 1;
}

/* --- construction ---------------------------------------------------------------------------- */
/* obj (a ctorch.dtype or the Python type float / int / bool) as a dtype; TypeError "finfo(): argument
 * 'type' (position 1) must be torch.dtype, not str" otherwise. 0 or -1. */
static int limits_dtype(const char *name, PyObject *obj, CtDType *out)
{
    if (Py_IS_TYPE(obj, Py_TYPE(ct_dtype_object(CT_F32))) || obj == (PyObject *)&PyFloat_Type ||
        obj == (PyObject *)&PyLong_Type || obj == (PyObject *)&PyBool_Type) {
        return ct_dtype_from_object(obj, out);
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument 'type' (position 1) must be torch.dtype, not %s", name,
                 Py_TYPE(obj)->tp_name);
    return -1;
}

static PyObject *limits_new(PyTypeObject *type, CtDType d)
{
    CtDTypeLimitsObject *self = PyObject_New(CtDTypeLimitsObject, type);
    if (self != NULL) {
        self->dtype = d;
    }
    return (PyObject *)self;
}

static PyObject *finfo_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"type", NULL};
    PyObject *obj = NULL;
    CtDType d = ct_default_float_dtype;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:finfo", kwlist, &obj) ||
        (obj != NULL && limits_dtype("finfo", obj, &d) < 0)) {
        return NULL;
    }
    if (!ct_is_floating(d)) {
        PyErr_SetString(PyExc_TypeError, "torch.finfo() requires a floating point input type. Use torch.iinfo to "
                                         "handle 'torch.finfo'");
        return NULL;
    }
    return limits_new(type, d);
}

static PyObject *iinfo_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"type", NULL};
    PyObject *obj = NULL;
    CtDType d;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:iinfo", kwlist, &obj)) {
        return NULL;
    }
    if (obj == NULL) {
        PyErr_SetString(PyExc_TypeError, "iinfo() missing 1 required positional arguments: \"type\"");
        return NULL;
    }
    if (limits_dtype("iinfo", obj, &d) < 0) {
        return NULL;
    }
    if (d == CT_BOOL) {
        PyErr_SetString(PyExc_TypeError, "torch.bool is not supported by torch.iinfo");
        return NULL;
    }
    if (!ct_is_integral(d, false)) {
        PyErr_SetString(PyExc_TypeError, "torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                                         "'torch.iinfo'");
        return NULL;
    }
    return limits_new(type, d);
}

static void limits_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_Free(self);
    Py_DECREF(type);
}

/* --- attributes, repr, comparison ------------------------------------------------------------- */
#define LIMITS_DTYPE(self) (((CtDTypeLimitsObject *)(self))->dtype)

static PyObject *limits_bits(PyObject *self, void *closure)
{
    return PyLong_FromSize_t(ct_dtype_info[LIMITS_DTYPE(self)].itemsize * 8);
}

static PyObject *limits_dtype_name(PyObject *self, void *closure)
{
    return PyUnicode_FromString(ct_dtype_info[LIMITS_DTYPE(self)].name);
}

/* closure says which value: 0 eps, 1 max, 2 min (-max), 3 tiny (smallest_normal), 4 resolution */
static PyObject *finfo_value(PyObject *self, void *closure)
{
    FloatLimits v = float_limits(LIMITS_DTYPE(self));
    switch ((int)(intptr_t)closure) {
    case 0:
        return PyFloat_FromDouble(v.eps);
    case 1:
        return PyFloat_FromDouble(v.max);
    case 2:
        return PyFloat_FromDouble(-v.max);
    case 3:
        return PyFloat_FromDouble(v.tiny);
    default:
        return PyFloat_FromDouble(v.resolution);
    }
}

static PyObject *iinfo_value(PyObject *self, void *closure)
{
    long long lo;
    unsigned long long hi;
    int_limits(LIMITS_DTYPE(self), &lo, &hi);
    return closure != NULL ? PyLong_FromUnsignedLongLong(hi) : PyLong_FromLongLong(lo);
}

static PyObject *finfo_repr(PyObject *self)
{
    FloatLimits v = float_limits(LIMITS_DTYPE(self));
    char buf[256];
    snprintf(buf, sizeof(buf), "finfo(resolution=%g, min=%g, max=%g, eps=%g, smallest_normal=%g, tiny=%g, dtype=%s)",
             v.resolution, -v.max, v.max, v.eps, v.tiny, v.tiny, ct_dtype_info[LIMITS_DTYPE(self)].name);
    return PyUnicode_FromString(buf);
}

static PyObject *iinfo_repr(PyObject *self)
{
    long long lo;
    unsigned long long hi;
    int_limits(LIMITS_DTYPE(self), &lo, &hi);
    char buf[128];
    snprintf(buf, sizeof(buf), "iinfo(min=%g, max=%g, dtype=%s)", (double)lo, (double)hi,
             ct_dtype_info[LIMITS_DTYPE(self)].name);
    return PyUnicode_FromString(buf);
}

/* Equal when of the same kind and dtype; hashed alike. */
static PyObject *limits_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !Py_IS_TYPE(b, Py_TYPE(a))) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return PyBool_FromLong((LIMITS_DTYPE(a) == LIMITS_DTYPE(b)) == (op == Py_EQ));
}

static Py_hash_t limits_hash(PyObject *self)
{
    return (Py_hash_t)LIMITS_DTYPE(self) + (Py_IS_TYPE(self, CtFInfo_Type) ? 1000 : 2000);
}

static PyGetSetDef finfo_getset[] = {
    {"bits", limits_bits, NULL, "the number of bits the dtype occupies", NULL},
    {"eps", finfo_value, NULL, "the difference between 1.0 and the next representable number", (void *)0},
    {"max", finfo_value, NULL, "the largest finite number", (void *)1},
    {"min", finfo_value, NULL, "the lowest finite number (-max)", (void *)2},
    {"tiny", finfo_value, NULL, "the smallest positive normal number (smallest_normal)", (void *)3},
    {"smallest_normal", finfo_value, NULL, "the smallest positive normal number", (void *)3},
    {"resolution", finfo_value, NULL, "the approximate decimal resolution, 10 ** -digits10", (void *)4},
    {"dtype", limits_dtype_name, NULL, "the dtype's name", NULL},
    {NULL},
};

static PyGetSetDef iinfo_getset[] = {
    {"bits", limits_bits, NULL, "the number of bits the dtype occupies", NULL},
    {"max", iinfo_value, NULL, "the largest number", (void *)1},
    {"min", iinfo_value, NULL, "the lowest number", NULL},
    {"dtype", limits_dtype_name, NULL, "the dtype's name", NULL},
    {NULL},
};

static PyType_Slot finfo_slots[] = {
    {Py_tp_new, finfo_new},
    {Py_tp_dealloc, limits_dealloc},
    {Py_tp_repr, finfo_repr},
    {Py_tp_richcompare, limits_richcompare},
    {Py_tp_hash, limits_hash},
    {Py_tp_getset, finfo_getset},
    {Py_tp_doc, "finfo(type=None): the numerical properties of a floating point dtype (the default dtype when "
                "none is given): bits, eps, max, min, tiny, smallest_normal, resolution, dtype."},
    {0, NULL},
};

static PyType_Slot iinfo_slots[] = {
    {Py_tp_new, iinfo_new},
    {Py_tp_dealloc, limits_dealloc},
    {Py_tp_repr, iinfo_repr},
    {Py_tp_richcompare, limits_richcompare},
    {Py_tp_hash, limits_hash},
    {Py_tp_getset, iinfo_getset},
    {Py_tp_doc, "iinfo(type): the numerical properties of an integer dtype: bits, max, min, dtype."},
    {0, NULL},
};

static PyType_Spec finfo_spec = {"ctorch.finfo", sizeof(CtDTypeLimitsObject), 0, Py_TPFLAGS_DEFAULT, finfo_slots};
static PyType_Spec iinfo_spec = {"ctorch.iinfo", sizeof(CtDTypeLimitsObject), 0, Py_TPFLAGS_DEFAULT, iinfo_slots};

int ct_finfo_init(PyObject *module)
{
    CtFInfo_Type = (PyTypeObject *)PyType_FromSpec(&finfo_spec);
    CtIInfo_Type = CtFInfo_Type != NULL ? (PyTypeObject *)PyType_FromSpec(&iinfo_spec) : NULL;
    if (CtIInfo_Type == NULL) {
        return -1;
    }
    /* the module keeps its own references; ours live as long as the process */
    if (PyModule_AddObjectRef(module, "finfo", (PyObject *)CtFInfo_Type) < 0 ||
        PyModule_AddObjectRef(module, "iinfo", (PyObject *)CtIInfo_Type) < 0) {
        return -1;
    }
    return 0;
}
