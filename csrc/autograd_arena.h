/* autograd_arena.h: the scratch arena for backward formulas written with ctorch ops
 * (autograd_formulas.c, nn.c). A formula declares
 *
 *     CtArena scratch = {0}, *arena = &scratch;
 *
 * and writes its expression with the short macros below (MUL(x, ADD(y, NUM(1.0))), ...), which
 * name the arena `arena`. Every step returns a reference owned by the arena (borrowed by the
 * caller), or NULL with the exception set; once any step failed (or was handed a NULL operand)
 * every later step returns NULL too, so an expression needs one check at its end (or
 * `arena->failed`). TAKE hands a value out as a new reference; arena_free releases everything. */
#ifndef CTORCH_AUTOGRAD_ARENA_H
#define CTORCH_AUTOGRAD_ARENA_H

#include "autograd.h"
#include "dtype.h"
#include "tensor.h"
#include <stdarg.h>

#define CT_ARENA_MAX 64
typedef struct {
    PyObject *items[CT_ARENA_MAX];
    int n;
    bool failed;
} CtArena;

/* Takes ownership of o (NULL marks the arena failed; the exception is o's producer's). */
static inline PyObject *arena_keep(CtArena *arena, PyObject *o)
{
    if (o == NULL) {
        arena->failed = true;
        return NULL;
    }
    if (arena->n == CT_ARENA_MAX) {
        Py_DECREF(o);
        PyErr_SetString(PyExc_SystemError, "ctorch autograd formula: too many temporaries");
        arena->failed = true;
        return NULL;
    }
    arena->items[arena->n++] = o;
    return o;
}

static inline void arena_free(CtArena *arena)
{
    while (arena->n > 0) {
        Py_DECREF(arena->items[--arena->n]);
    }
}

static inline bool arena_ok(CtArena *arena, PyObject *a, PyObject *b)
{
    return !arena->failed && a != NULL && b != NULL;
}

/* a new reference to a value owned by the arena, for handing out of a formula */
static inline PyObject *arena_take(CtArena *arena, PyObject *o)
{
    return arena->failed || o == NULL ? NULL : Py_NewRef(o);
}

static inline PyObject *arena_num(CtArena *arena, double v)
{
    return arena->failed ? NULL : arena_keep(arena, PyFloat_FromDouble(v));
}

static inline PyObject *arena_int(CtArena *arena, long long v)
{
    return arena->failed ? NULL : arena_keep(arena, PyLong_FromLongLong(v));
}

static inline PyObject *arena_mul(CtArena *arena, PyObject *a, PyObject *b)
{
    return arena_ok(arena, a, b) ? arena_keep(arena, PyNumber_Multiply(a, b)) : NULL;
}

static inline PyObject *arena_add(CtArena *arena, PyObject *a, PyObject *b)
{
    return arena_ok(arena, a, b) ? arena_keep(arena, PyNumber_Add(a, b)) : NULL;
}

static inline PyObject *arena_sub(CtArena *arena, PyObject *a, PyObject *b)
{
    return arena_ok(arena, a, b) ? arena_keep(arena, PyNumber_Subtract(a, b)) : NULL;
}

static inline PyObject *arena_div(CtArena *arena, PyObject *a, PyObject *b)
{
    return arena_ok(arena, a, b) ? arena_keep(arena, PyNumber_TrueDivide(a, b)) : NULL;
}

static inline PyObject *arena_pow(CtArena *arena, PyObject *a, PyObject *b)
{
    return arena_ok(arena, a, b) ? arena_keep(arena, PyNumber_Power(a, b, Py_None)) : NULL;
}

static inline PyObject *arena_matmul(CtArena *arena, PyObject *a, PyObject *b)
{
    return arena_ok(arena, a, b) ? arena_keep(arena, PyNumber_MatrixMultiply(a, b)) : NULL;
}

static inline PyObject *arena_neg(CtArena *arena, PyObject *a)
{
    return arena_ok(arena, a, a) ? arena_keep(arena, PyNumber_Negative(a)) : NULL;
}

/* a <op> b as a bool tensor */
static inline PyObject *arena_cmp(CtArena *arena, PyObject *a, PyObject *b, int op)
{
    return arena_ok(arena, a, b) ? arena_keep(arena, PyObject_RichCompare(a, b, op)) : NULL;
}

/* Py_BuildValue(fmt, ...) as an argument tuple (a lone value packed into one); fmt NULL: () */
static inline PyObject *arena_args(const char *fmt, va_list va)
{
    PyObject *args = fmt == NULL ? PyTuple_New(0) : Py_VaBuildValue(fmt, va);
    if (args != NULL && !PyTuple_Check(args)) {
        Py_SETREF(args, PyTuple_Pack(1, args));
    }
    return args;
}

/* o.name(*Py_BuildValue(fmt, ...)); fmt NULL: no arguments */
static inline PyObject *arena_meth(CtArena *arena, PyObject *o, const char *name, const char *fmt, ...)
{
    if (!arena_ok(arena, o, o)) {
        return NULL;
    }
    va_list va;
    va_start(va, fmt);
    PyObject *args = arena_args(fmt, va);
    va_end(va);
    PyObject *m = args ? PyObject_GetAttrString(o, name) : NULL;
    PyObject *r = m ? PyObject_Call(m, args, NULL) : NULL;
    Py_XDECREF(m);
    Py_XDECREF(args);
    return arena_keep(arena, r);
}

/* ctorch._C.name(*Py_VaBuildValue(fmt, va)) through the (recording) op: a new reference */
static inline PyObject *ct_op_va(const char *name, const char *fmt, va_list va)
{
    PyObject *args = arena_args(fmt, va);
    PyObject *r = args ? ct_op(name, &PyTuple_GET_ITEM(args, 0), (size_t)PyTuple_GET_SIZE(args), NULL) : NULL;
    Py_XDECREF(args);
    return r;
}

/* ctorch._C.name(*Py_BuildValue(fmt, ...)) through the (recording) op */
static inline PyObject *arena_fn(CtArena *arena, const char *name, const char *fmt, ...)
{
    if (arena->failed) {
        return NULL;
    }
    va_list va;
    va_start(va, fmt);
    PyObject *r = ct_op_va(name, fmt, va);
    va_end(va);
    return arena_keep(arena, r);
}

/* o.name */
static inline PyObject *arena_attr(CtArena *arena, PyObject *o, const char *name)
{
    return arena_ok(arena, o, o) ? arena_keep(arena, PyObject_GetAttrString(o, name)) : NULL;
}

/* a bool tensor as 0/1 in like's dtype */
static inline PyObject *arena_mask(CtArena *arena, PyObject *mask, PyObject *like)
{
    return arena_ok(arena, mask, like) ? arena_meth(arena, mask, "to", "(O)", ct_dtype_object(CT_TENSOR(like)->dtype))
                                       : NULL;
}

/* where(cond, a, b) */
static inline PyObject *arena_where(CtArena *arena, PyObject *cond, PyObject *a, PyObject *b)
{
    if (!arena_ok(arena, cond, a) || b == NULL) {
        return NULL;
    }
    PyObject *args[3] = {cond, a, b};
    return arena_keep(arena, ct_op("where", args, 3, NULL));
}

/* o.sum(dims, keepdim=True), or o.sum() when dims is NULL/None */
static inline PyObject *arena_sum_keep(CtArena *arena, PyObject *o, PyObject *dims)
{
    if (dims == NULL || dims == Py_None) {
        return arena_meth(arena, o, "sum", NULL);
    }
    return arena_meth(arena, o, "sum", "(OO)", dims, Py_True);
}

/* The formula language: each names the arena `arena` in the enclosing function. */
#define KEEP(o) arena_keep(arena, (o))
#define TAKE(o) arena_take(arena, (o))
#define NUM(v) arena_num(arena, (v))
#define INT(v) arena_int(arena, (v))
#define MUL(a, b) arena_mul(arena, (a), (b))
#define ADD(a, b) arena_add(arena, (a), (b))
#define SUB(a, b) arena_sub(arena, (a), (b))
#define DIV(a, b) arena_div(arena, (a), (b))
#define POW(a, b) arena_pow(arena, (a), (b))
#define MATMUL(a, b) arena_matmul(arena, (a), (b))
#define NEG(a) arena_neg(arena, (a))
#define CMP(a, b, op) arena_cmp(arena, (a), (b), (op))
#define MASK(mask, like) arena_mask(arena, (mask), (like))
#define CMPF(a, b, op, like) MASK(CMP((a), (b), (op)), (like)) /* a <op> b as 0/1 in like's dtype */
#define ATTR(o, name) arena_attr(arena, (o), (name))
#define METH(o, ...) arena_meth(arena, (o), __VA_ARGS__)
#define FN(...) arena_fn(arena, __VA_ARGS__)
#define WHERE(c, a, b) arena_where(arena, (c), (a), (b))
#define SUM_KEEP(o, dims) arena_sum_keep(arena, (o), (dims))

#endif /* CTORCH_AUTOGRAD_ARENA_H */
