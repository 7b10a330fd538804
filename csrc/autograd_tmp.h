/* autograd_tmp.h: a scratch arena for backward formulas written with ctorch ops
 * (autograd_formulas.c, nn.c). Formulas built from many temporaries chain t_* helpers, each
 * returning a reference owned by the arena (NULL once anything failed, with the exception set),
 * so that expressions need no per-step error checks; tmp_free releases everything at once. */
#ifndef CTORCH_AUTOGRAD_TMP_H
#define CTORCH_AUTOGRAD_TMP_H

#include "autograd.h"
#include "dtype.h"
#include "tensor.h"
#include <stdarg.h>

#define CT_TMP_MAX 64
typedef struct {
    PyObject *items[CT_TMP_MAX];
    int n;
    bool failed;
} Tmp;

static inline PyObject *t_keep(Tmp *t, PyObject *o)
{
    if (o == NULL) {
        t->failed = true;
        return NULL;
    }
    if (t->n == CT_TMP_MAX) {
        Py_DECREF(o);
        PyErr_SetString(PyExc_SystemError, "ctorch autograd formula: too many temporaries");
        t->failed = true;
        return NULL;
    }
    t->items[t->n++] = o;
    return o;
}

static inline void tmp_free(Tmp *t)
{
    for (int i = 0; i < t->n; i++) {
        Py_DECREF(t->items[i]);
    }
    t->n = 0;
}

#define T_OK2(a, b) (!t->failed && (a) != NULL && (b) != NULL)
static inline PyObject *t_num(Tmp *t, double v) { return t->failed ? NULL : t_keep(t, PyFloat_FromDouble(v)); }
static inline PyObject *t_mul(Tmp *t, PyObject *a, PyObject *b) { return T_OK2(a, b) ? t_keep(t, PyNumber_Multiply(a, b)) : NULL; }
static inline PyObject *t_add(Tmp *t, PyObject *a, PyObject *b) { return T_OK2(a, b) ? t_keep(t, PyNumber_Add(a, b)) : NULL; }
static inline PyObject *t_sub(Tmp *t, PyObject *a, PyObject *b) { return T_OK2(a, b) ? t_keep(t, PyNumber_Subtract(a, b)) : NULL; }
static inline PyObject *t_div(Tmp *t, PyObject *a, PyObject *b) { return T_OK2(a, b) ? t_keep(t, PyNumber_TrueDivide(a, b)) : NULL; }
static inline PyObject *t_pow(Tmp *t, PyObject *a, PyObject *b)
{
    return T_OK2(a, b) ? t_keep(t, PyNumber_Power(a, b, Py_None)) : NULL;
}
/* a <op> b as a bool tensor */
static inline PyObject *t_cmp(Tmp *t, PyObject *a, PyObject *b, int op) { return T_OK2(a, b) ? t_keep(t, PyObject_RichCompare(a, b, op)) : NULL; }
/* a bool tensor as 0/1 in like's dtype */
static inline PyObject *t_float(Tmp *t, PyObject *mask, PyObject *like)
{
    return T_OK2(mask, like) ? t_keep(t, PyObject_CallMethod(mask, "to", "(O)", ct_dtype_object(CT_TENSOR(like)->dtype)))
                             : NULL;
}
/* a <op> b as 0/1 in like's dtype */
static inline PyObject *t_cmpf(Tmp *t, PyObject *a, PyObject *b, int op, PyObject *like) { return t_float(t, t_cmp(t, a, b, op), like); }
static inline PyObject *t_meth0(Tmp *t, PyObject *o, const char *name)
{
    return !t->failed && o != NULL ? t_keep(t, PyObject_CallMethod(o, name, NULL)) : NULL;
}
/* where(cond, a, b) */
static inline PyObject *t_where(Tmp *t, PyObject *cond, PyObject *a, PyObject *b)
{
    if (!T_OK2(cond, a) || b == NULL) {
        return NULL;
    }
    PyObject *args[3] = {cond, a, b};
    return t_keep(t, ct_op("where", args, 3, NULL));
}
/* o.sum(dims, keepdim=True), or o.sum() when dims is NULL/None */
static inline PyObject *t_sum_keep(Tmp *t, PyObject *o, PyObject *dims)
{
    if (t->failed || o == NULL) {
        return NULL;
    }
    if (dims == NULL || dims == Py_None) {
        return t_keep(t, PyObject_CallMethod(o, "sum", NULL));
    }
    return t_keep(t, PyObject_CallMethod(o, "sum", "(OO)", dims, Py_True));
}
/* a new reference to a value owned by the arena, for handing out of a formula */
static inline PyObject *t_take(Tmp *t, PyObject *o) { return t->failed || o == NULL ? NULL : Py_NewRef(o); }

/* o.name(*args) with args built by Py_BuildValue(fmt, ...) (a tuple format, "(OO)") */
static inline PyObject *t_call(Tmp *t, PyObject *o, const char *name, const char *fmt, ...)
{
    if (t->failed || o == NULL) {
        return NULL;
    }
    va_list va;
    va_start(va, fmt);
    PyObject *args = Py_VaBuildValue(fmt, va);
    va_end(va);
    PyObject *fn = args ? PyObject_GetAttrString(o, name) : NULL;
    PyObject *r = fn ? PyObject_Call(fn, args, NULL) : NULL;
    Py_XDECREF(fn);
    Py_XDECREF(args);
    return t_keep(t, r);
}

#endif /* CTORCH_AUTOGRAD_TMP_H */
