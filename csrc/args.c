/* args.c: keyword/positional matching for the fastcall methods of ctorch. */
#include "args.h"
#include <string.h>

int ct_parse_args(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                  const char *const *names, int nrequired, PyObject **out)
{
    int nnames = 0, npositional = 0;
    while (names[nnames] != NULL) {
        if (names[nnames][0] != '*') {
            npositional = nnames + 1;
        }
        out[nnames] = NULL;
        nnames++;
    }
    if (nargs > npositional) {
        PyErr_Format(PyExc_TypeError, "%s() takes %d positional argument%s but %zd were given", fname,
                     npositional, npositional == 1 ? "" : "s", nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        out[i] = args[i];
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        const char *key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
        if (key == NULL) {
            return -1;
        }
        int found = -1;
        for (int i = 0; i < nnames; i++) {
            const char *n = names[i][0] == '*' ? names[i] + 1 : names[i];
            if (strcmp(n, key) == 0) {
                found = i;
                break;
            }
        }
        if (found < 0) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%s'", fname, key);
            return -1;
        }
        if (out[found] != NULL) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fname, key);
            return -1;
        }
        out[found] = args[nargs + k];
    }
    for (int i = 0; i < nrequired; i++) {
        if (out[i] == NULL) {
            const char *n = names[i][0] == '*' ? names[i] + 1 : names[i];
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname, n);
            return -1;
        }
    }
    return 0;
}

int ct_arg_bool(PyObject *obj, bool *out)
{
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    int v = PyObject_IsTrue(obj);
    if (v < 0) {
        return -1;
    }
    *out = v;
    return 0;
}

int ct_arg_int64(PyObject *obj, int64_t *out)
{
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (PyFloat_Check(obj) || !PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "expected an integer, got %s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    long long v = PyLong_AsLongLong(obj);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = v;
    return 0;
}

int ct_arg_double(PyObject *obj, double *out)
{
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    double v = PyFloat_AsDouble(obj);
    if (v == -1.0 && PyErr_Occurred()) {
        return -1;
    }
    *out = v;
    return 0;
}
