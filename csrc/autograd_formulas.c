/* autograd_formulas.c: the backward formula of every differentiable op, and the table that
 * tells autograd.c which ops to record. Formulas are written with ctorch ops (called through
 * the Python number protocol and methods, so that create_graph=True records them too).
 *
 * Conventions: n->args[i] is argument i of the op's signature (sig[0] is the tensor/self);
 * gi[e] is the gradient for the e-th differentiable argument (in sig order); NEEDS(e) tells
 * whether anything wants it. A formula returns 0, or -1 with an exception set. */
#include "autograd.h"
#include "autograd_arena.h"
#include "composite.h"
#include "elementwise.h" /* ct_unary: i0's gradient i1 */
#include "ops_more.h"
#include "device.h"
#include "linalg.h"
#include "nn.h"
#include "conv.h"
#include "nn_act.h"
#include "pool.h"
#include "upsample.h"
#include "tensor.h"
#include "views.h"
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#define NEEDS(e) (n->edge_nodes[(e)] != NULL)
#define META(i) (&n->meta[(i)])
#define ARG(i) (n->args[(i)] != NULL && n->args[(i)] != Py_None ? n->args[(i)] : NULL)

/* --- helpers --------------------------------------------------------------------------------------- */
/* Reduces a broadcast gradient to the shape and dtype of argument i. New reference. */
static PyObject *fit(PyObject *grad, const CtTensorMeta *m) { return ct_fit_grad(grad, m); }

static PyObject *shape_of(const CtTensorMeta *m) { return ct_size_object(m->ndim, m->sizes); }

static PyObject *zeros_for(const CtTensorMeta *m)
{
    PyObject *mod = PyImport_AddModule("ctorch._C"); /* borrowed */
    PyObject *shape = shape_of(m);
    if (mod == NULL || shape == NULL) {
        Py_XDECREF(shape);
        return NULL;
    }
    PyObject *fn = PyObject_GetAttrString(mod, "zeros");
    PyObject *dev = ct_device_object(m->device);
    PyObject *kw = fn && dev ? Py_BuildValue("{sOsO}", "dtype", ct_dtype_object(m->dtype), "device", dev) : NULL;
    PyObject *args = kw ? PyTuple_Pack(1, shape) : NULL;
    PyObject *r = args ? PyObject_Call(fn, args, kw) : NULL;
    Py_XDECREF(args);
    Py_XDECREF(kw);
    Py_XDECREF(dev);
    Py_XDECREF(fn);
    Py_DECREF(shape);
    return r;
}

static PyObject *scalar_or(PyObject *obj, double dflt) { return obj ? Py_NewRef(obj) : PyFloat_FromDouble(dflt); }

/* g * x for a Python number or tensor x; steals nothing. */
static PyObject *mul(PyObject *a, PyObject *b) { return PyNumber_Multiply(a, b); }
static PyObject *method0(PyObject *o, const char *name) { return ct_call_method(o, name, NULL); }

/* grad * local, fitted to argument i. */
static int set_fit(PyObject **slot, PyObject *value, const CtTensorMeta *m)
{
    if (value == NULL) {
        return -1;
    }
    *slot = fit(value, m);
    Py_DECREF(value);
    return *slot == NULL ? -1 : 0;
}

/* --- elementwise ---------------------------------------------------------------------------------------- */
static int bw_add(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (NEEDS(0) && set_fit(&gi[0], Py_NewRef(g[0]), META(0)) < 0) {
        return -1;
    }
    if (NEEDS(1)) {
        PyObject *alpha = ARG(2);
        if (set_fit(&gi[1], alpha ? mul(g[0], alpha) : Py_NewRef(g[0]), META(1)) < 0) {
            return -1;
        }
    }
    return 0;
}

static int bw_sub(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (NEEDS(0) && set_fit(&gi[0], Py_NewRef(g[0]), META(0)) < 0) {
        return -1;
    }
    if (NEEDS(1)) {
        PyObject *alpha = ARG(2);
        PyObject *neg = PyNumber_Negative(g[0]);
        if (neg == NULL) {
            return -1;
        }
        PyObject *v = alpha ? mul(neg, alpha) : Py_NewRef(neg);
        Py_DECREF(neg);
        if (set_fit(&gi[1], v, META(1)) < 0) {
            return -1;
        }
    }
    return 0;
}

static int bw_rsub(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    /* rsub(input, other, alpha) = other - alpha * input */
    if (NEEDS(0)) {
        PyObject *neg = PyNumber_Negative(g[0]);
        PyObject *alpha = ARG(2);
        PyObject *v = neg && alpha ? mul(neg, alpha) : (neg ? Py_NewRef(neg) : NULL);
        Py_XDECREF(neg);
        if (set_fit(&gi[0], v, META(0)) < 0) {
            return -1;
        }
    }
    if (NEEDS(1) && set_fit(&gi[1], Py_NewRef(g[0]), META(1)) < 0) {
        return -1;
    }
    return 0;
}

static int bw_mul(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (NEEDS(0)) {
        PyObject *other = META(1)->is_tensor ? (PyObject *)ct_node_tensor(n, 1) : n->args[1];
        if (other == NULL || set_fit(&gi[0], mul(g[0], other), META(0)) < 0) {
            return -1;
        }
    }
    if (NEEDS(1)) {
        PyObject *self = META(0)->is_tensor ? (PyObject *)ct_node_tensor(n, 0) : n->args[0];
        if (self == NULL || set_fit(&gi[1], mul(g[0], self), META(1)) < 0) {
            return -1;
        }
    }
    return 0;
}

static int bw_div(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (ARG(2) != NULL) { /* rounding_mode: piecewise constant, zero gradient */
        for (int e = 0; e < 2; e++) {
            if (NEEDS(e) && (gi[e] = zeros_for(META(e))) == NULL) {
                return -1;
            }
        }
        return 0;
    }
    PyObject *other = META(1)->is_tensor ? (PyObject *)ct_node_tensor(n, 1) : n->args[1];
    if (other == NULL) {
        return -1;
    }
    if (NEEDS(0) && set_fit(&gi[0], PyNumber_TrueDivide(g[0], other), META(0)) < 0) {
        return -1;
    }
    if (NEEDS(1)) {
        /* d(a/b)/db = -a/b^2 = -out/b */
        PyObject *self = META(0)->is_tensor ? (PyObject *)ct_node_tensor(n, 0) : n->args[0];
        if (self == NULL) {
            return -1;
        }
        CtArena scratch = {0}, *arena = &scratch;
        int rc = set_fit(&gi[1], TAKE(NEG(MUL(g[0], DIV(DIV(self, other), other)))), META(1));
        arena_free(arena);
        if (rc < 0) {
            return -1;
        }
    }
    return 0;
}

static int bw_neg(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    gi[0] = PyNumber_Negative(g[0]);
    return gi[0] ? 0 : -1;
}

static int bw_identity(CtNodeObject *n, PyObject *const *g, PyObject **gi) { return set_fit(&gi[0], Py_NewRef(g[0]), META(0)); }

static int bw_zero(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    gi[0] = zeros_for(META(0));
    return gi[0] ? 0 : -1;
}

/* gi = g * f(x, out) for unary ops, f a small expression over tensors built in the formula's
 * arena (it returns a value the arena owns, or NULL). */
typedef PyObject *(*LocalGrad)(CtArena *arena, PyObject *x, PyObject *out);

static int unary_with(CtNodeObject *n, PyObject *const *g, PyObject **gi, LocalGrad f, bool needs_x, bool needs_out)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *x = needs_x ? (PyObject *)ct_node_tensor(n, 0) : NULL;
    PyObject *out = needs_out ? KEEP(ct_node_output_ref(n, 0)) : NULL;
    int rc = -1;
    if (!(needs_x && x == NULL) && !arena->failed) {
        rc = set_fit(&gi[0], TAKE(MUL(g[0], f(arena, x, out))), META(0));
    }
    arena_free(arena);
    return rc;
}

/* lg_name(arena, x, o): the local derivative of a unary op as one expression */
#define CT_LOCAL(name, expr) \
    static PyObject *lg_##name(CtArena *arena, PyObject *x, PyObject *o) { return (expr); }
CT_LOCAL(sign, METH(x, "sign", NULL))
CT_LOCAL(out, o)
CT_LOCAL(recip_x, METH(x, "reciprocal", NULL))
CT_LOCAL(cos, METH(x, "cos", NULL))
CT_LOCAL(neg_sin, NEG(METH(x, "sin", NULL)))
CT_LOCAL(tan, ADD(NUM(1.0), MUL(o, o)))                        /* 1 + o^2 */
CT_LOCAL(sqrt, DIV(NUM(0.5), o))                               /* 0.5 / o */
CT_LOCAL(rsqrt, MUL(MUL(MUL(o, o), o), NUM(-0.5)))             /* -0.5 o^3 */
CT_LOCAL(reciprocal, NEG(MUL(o, o)))                           /* -o^2 */
CT_LOCAL(log2, METH(MUL(x, NUM(M_LN2)), "reciprocal", NULL))   /* 1 / (x ln 2) */
CT_LOCAL(log10, METH(MUL(x, NUM(M_LN10)), "reciprocal", NULL)) /* 1 / (x ln 10) */
CT_LOCAL(log1p, METH(ADD(x, NUM(1.0)), "reciprocal", NULL))
CT_LOCAL(expm1, ADD(o, NUM(1.0)))
CT_LOCAL(exp2, MUL(o, NUM(M_LN2)))
CT_LOCAL(sinh, METH(x, "cosh", NULL))
CT_LOCAL(cosh, METH(x, "sinh", NULL))
CT_LOCAL(asin, METH(SUB(NUM(1.0), MUL(x, x)), "rsqrt", NULL))      /* 1/sqrt(1-x^2) */
CT_LOCAL(acos, NEG(METH(SUB(NUM(1.0), MUL(x, x)), "rsqrt", NULL))) /* -1/sqrt(1-x^2) */
CT_LOCAL(atan, METH(ADD(NUM(1.0), MUL(x, x)), "reciprocal", NULL)) /* 1/(1+x^2) */
CT_LOCAL(square, MUL(x, NUM(2.0)))
static PyObject *lg_silu(CtArena *arena, PyObject *x, PyObject *o) /* s (1 + x (1 - s)) */
{
    PyObject *s = METH(x, "sigmoid", NULL);
    return MUL(s, ADD(NUM(1.0), MUL(x, SUB(NUM(1.0), s))));
}

#define CT_UNARY_BW(name, f, needs_x, needs_out)                                    \
    static int bw_##name(CtNodeObject *n, PyObject *const *g, PyObject **gi)       \
    {                                                                               \
        return unary_with(n, g, gi, f, needs_x, needs_out);                         \
    }
CT_UNARY_BW(abs, lg_sign, true, false)
CT_UNARY_BW(exp, lg_out, false, true)
CT_UNARY_BW(exp2, lg_exp2, false, true)
CT_UNARY_BW(log, lg_recip_x, true, false)
CT_UNARY_BW(log2, lg_log2, true, false)
CT_UNARY_BW(log10, lg_log10, true, false)
CT_UNARY_BW(log1p, lg_log1p, true, false)
CT_UNARY_BW(expm1, lg_expm1, false, true)
CT_UNARY_BW(sqrt, lg_sqrt, false, true)
CT_UNARY_BW(rsqrt, lg_rsqrt, false, true)
CT_UNARY_BW(reciprocal, lg_reciprocal, false, true)
CT_UNARY_BW(sin, lg_cos, true, false)
CT_UNARY_BW(cos, lg_neg_sin, true, false)
CT_UNARY_BW(tan, lg_tan, false, true)
CT_UNARY_BW(sinh, lg_sinh, true, false)
CT_UNARY_BW(cosh, lg_cosh, true, false)
CT_UNARY_BW(asin, lg_asin, true, false)
CT_UNARY_BW(acos, lg_acos, true, false)
CT_UNARY_BW(atan, lg_atan, true, false)
CT_UNARY_BW(silu, lg_silu, true, false)
CT_UNARY_BW(square, lg_square, true, false)

/* relu, tanh, sigmoid: PyTorch's threshold_backward(g, out, 0), tanh_backward(g, out),
 * sigmoid_backward(g, out): the fused row when not recorded; with create_graph the recorded op
 * (ThresholdBackwardBackward0, TanhBackwardBackward0, SigmoidBackwardBackward0), whose edge to the
 * output keeps it in the graph (relu's leaves get zero gradients rather than None). */
static int fused_activation_bw(CtNodeObject *n, PyObject *const *g, PyObject **gi, const char *recorded, CtEwOp op)
{
    const bool threshold = op == CT_EW_THRESHOLD_BACKWARD;
    PyObject *out = ct_node_output_ref(n, 0), *zero = threshold ? PyFloat_FromDouble(0.0) : NULL, *r = NULL;
    if (out != NULL && (zero != NULL || !threshold)) {
        PyObject *args[3] = {g[0], out, zero};
        r = ct_grad_enabled || !CtTensor_Check(g[0])
                ? ct_op(recorded, args, threshold ? 3 : 2, NULL)
                : (PyObject *)ct_activation_backward(op, CT_TENSOR(g[0]), CT_TENSOR(out), 0.0);
    }
    Py_XDECREF(out);
    Py_XDECREF(zero);
    return set_fit(&gi[0], r, META(0));
}

#define CT_FUSED_BW(name, recorded, OP)                                             \
    static int bw_##name(CtNodeObject *n, PyObject *const *g, PyObject **gi)       \
    {                                                                               \
        return fused_activation_bw(n, g, gi, recorded, CT_EW_##OP);                 \
    }
CT_FUSED_BW(relu, "_threshold_backward", THRESHOLD_BACKWARD)
CT_FUSED_BW(tanh, "_tanh_backward", TANH_BACKWARD)
CT_FUSED_BW(sigmoid, "_sigmoid_backward", SIGMOID_BACKWARD)
#undef CT_FUSED_BW

/* _tanh_backward(go, y) = go (1 - y^2): d/dgo = tanh_backward(gg, y), d/dy = -2 y go gg;
 * _sigmoid_backward(go, y) = go (1 - y) y: d/dgo = sigmoid_backward(gg, y), d/dy = gg go (1 - 2 y). */
static int activation_backward_bw(CtNodeObject *n, PyObject *const *g, PyObject **gi, bool is_tanh)
{
    PyObject *go = (PyObject *)ct_node_tensor(n, 0), *y = (PyObject *)ct_node_tensor(n, 1);
    if (go == NULL || y == NULL) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    int rc = 0;
    if (NEEDS(0)) {
        rc = set_fit(&gi[0], TAKE(FN(is_tanh ? "_tanh_backward" : "_sigmoid_backward", "(OO)", g[0], y)), META(0));
    }
    if (rc == 0 && NEEDS(1)) {
        PyObject *local = is_tanh ? MUL(y, NUM(-2.0)) : SUB(NUM(1.0), MUL(y, NUM(2.0)));
        rc = set_fit(&gi[1], TAKE(MUL(MUL(g[0], go), local)), META(1));
    }
    arena_free(arena);
    return rc;
}
static int bw_tanh_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return activation_backward_bw(n, g, gi, true);
}
static int bw_sigmoid_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return activation_backward_bw(n, g, gi, false);
}

/* _threshold_backward(grad_output, self, threshold): grad_output where self > threshold. Linear in
 * grad_output (the same mask again); piecewise constant in self, so self gets zeros. */
static int bw_threshold_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (NEEDS(0)) {
        PyObject *self = (PyObject *)ct_node_tensor(n, 1), *threshold = scalar_or(ARG(2), 0.0);
        PyObject *r = NULL;
        if (self != NULL && threshold != NULL) {
            PyObject *args[3] = {g[0], self, threshold};
            r = ct_op("_threshold_backward", args, 3, NULL);
        }
        Py_XDECREF(threshold);
        if (set_fit(&gi[0], r, META(0)) < 0) {
            return -1;
        }
    }
    return NEEDS(1) && (gi[1] = zeros_for(META(1))) == NULL ? -1 : 0;
}

/* gelu: d/dx [x Phi(x)] = Phi(x) + x phi(x); tanh approximation differentiated exactly. */
static int bw_gelu(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL) {
        return -1;
    }
    PyObject *approx = ARG(1);
    bool use_tanh = approx != NULL && PyUnicode_Check(approx) && PyUnicode_CompareWithASCIIString(approx, "tanh") == 0;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *one = NUM(1.0), *half = NUM(0.5);
    PyObject *local;
    if (!use_tanh) {
        PyObject *cdf = MUL(ADD(METH(MUL(x, NUM(M_SQRT1_2)), "erf", NULL), one), half);
        PyObject *pdf = MUL(METH(MUL(MUL(x, x), NUM(-0.5)), "exp", NULL), NUM(0.3989422804014327)); /* 1/sqrt(2 pi) */
        local = ADD(cdf, MUL(x, pdf));
    } else {
        /* u = k (x + 0.044715 x^3), y = 0.5 x (1 + tanh u)
         * dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 * 0.044715 x^2) */
        const double k = 0.7978845608028654, a = 0.044715;
        PyObject *x2 = MUL(x, x), *ck = NUM(k);
        PyObject *t = METH(MUL(MUL(x, ADD(one, MUL(x2, NUM(a)))), ck), "tanh", NULL);
        PyObject *left = MUL(ADD(one, t), half);
        PyObject *sech = SUB(one, MUL(t, t));
        PyObject *kb = MUL(ADD(one, MUL(x2, NUM(3 * a))), ck);
        local = ADD(left, MUL(MUL(x, half), MUL(sech, kb)));
    }
    int rc = set_fit(&gi[0], TAKE(MUL(g[0], local)), META(0));
    arena_free(arena);
    return rc;
}

/* pow(input, exponent): scalar or tensor exponent, or a scalar base (reflected 2 ** x).
 * d/dx = e x^(e-1), zero where e == 0 (so 0 ** 0 has no nan gradient);
 * d/de = x^e log(x), zero where x == 0 and e >= 0 (the limit, instead of 0 * -inf). */
static int bw_pow(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = META(0)->is_tensor ? (PyObject *)ct_node_tensor(n, 0) : n->args[0];
    PyObject *e = META(1)->is_tensor ? (PyObject *)ct_node_tensor(n, 1) : n->args[1];
    if (x == NULL || e == NULL) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    int rc = -1;
    if (NEEDS(0)) {
        PyObject *v;
        if (!META(1)->is_tensor) {
            double ev = PyFloat_AsDouble(e);
            if (ev == -1.0 && PyErr_Occurred()) {
                goto done;
            }
            v = ev == 0.0 ? KEEP(zeros_for(META(0))) : MUL(g[0], MUL(e, POW(x, NUM(ev - 1.0))));
        } else {
            PyObject *local = MUL(e, POW(x, SUB(e, NUM(1.0))));
            v = MUL(g[0], WHERE(CMP(e, NUM(0.0), Py_EQ), NUM(0.0), local));
        }
        if (set_fit(&gi[0], TAKE(v), META(0)) < 0) {
            goto done;
        }
    }
    if (NEEDS(1)) {
        PyObject *p = POW(x, e);
        PyObject *v;
        if (META(0)->is_tensor) {
            PyObject *local = MUL(p, METH(x, "log", NULL));
            PyObject *zero = NUM(0.0);
            PyObject *base0 = CMPF(x, zero, Py_EQ, g[0]);
            PyObject *ege0 = CMPF(e, zero, Py_GE, g[0]);
            PyObject *cond = CMP(MUL(base0, ege0), zero, Py_GT);
            v = MUL(g[0], WHERE(cond, zero, local));
        } else {
            double xv = PyFloat_AsDouble(x);
            if (xv == -1.0 && PyErr_Occurred()) {
                goto done;
            }
            PyObject *local = MUL(p, NUM(log(xv)));
            if (xv == 0.0) {
                local = WHERE(CMP(e, NUM(0.0), Py_GE), NUM(0.0), local);
            }
            v = MUL(g[0], local);
        }
        if (set_fit(&gi[1], TAKE(v), META(1)) < 0) {
            goto done;
        }
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* clamp(input, min, max), clamp_min, clamp_max.
 * Number bounds (ClampBackward1, ClampMinBackward0): the gradient passes where min < x < max,
 * strictly (x at a bound, or nan, gets none).
 * One tensor bound (ClampBackward0 with min or max only, ClampMinBackward1): maximum/minimum's
 * rule, the gradient is split evenly at ties and both get it where either is nan.
 * Two bounds with a tensor: where min <= max, x below min gives it to min, above max to max, ties
 * with min < max split it evenly; where max < min everything goes to max (clamp's result is max);
 * where either bound is nan x keeps its share. */
static int bw_clamp_impl(CtNodeObject *n, PyObject *const *g, PyObject **gi, PyObject *lo, PyObject *hi, bool lo_t,
                         bool hi_t, int e_lo, int e_hi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *G = g[0];
    PyObject *one = NUM(1.0), *half = NUM(0.5);
    PyObject *wx = NULL, *wlo = NULL, *whi = NULL;
    int rc = -1;
    if (!lo_t && !hi_t) {
        wx = one;
        if (lo != NULL) {
            wx = MUL(wx, CMPF(x, lo, Py_GT, G));
        }
        if (hi != NULL) {
            wx = MUL(wx, CMPF(x, hi, Py_LT, G));
        }
    } else if (lo == NULL || hi == NULL) {
        PyObject *b = lo != NULL ? lo : hi;
        int toward = lo != NULL ? Py_LT : Py_GT, away = lo != NULL ? Py_GT : Py_LT;
        PyObject *tie = MUL(CMPF(x, b, Py_EQ, G), half);
        wx = SUB(SUB(one, CMPF(x, b, toward, G)), tie);
        PyObject *wb = SUB(SUB(one, CMPF(x, b, away, G)), tie);
        if (lo != NULL) {
            wlo = wb;
        } else {
            whi = wb;
        }
    } else {
        PyObject *ordered = CMPF(lo, hi, Py_LE, G); /* min <= max (false if either is nan) */
        PyObject *open = CMPF(lo, hi, Py_LT, G);
        PyObject *inverted = CMPF(hi, lo, Py_LT, G);
        PyObject *tie_lo = MUL(MUL(CMPF(x, lo, Py_EQ, G), open), half);
        PyObject *tie_hi = MUL(MUL(CMPF(x, hi, Py_EQ, G), open), half);
        PyObject *below = CMPF(x, lo, Py_LT, G), *above = CMPF(x, hi, Py_GT, G);
        PyObject *outside = CMPF(ADD(below, above), NUM(0.0), Py_GT, G);
        wx = SUB(SUB(SUB(one, outside), tie_lo), tie_hi);
        wlo = MUL(ordered, ADD(below, tie_lo));
        whi = ADD(inverted, MUL(ordered, ADD(above, tie_hi)));
    }
    if (arena->failed) {
        goto done;
    }
    if (NEEDS(0) && set_fit(&gi[0], TAKE(MUL(G, wx)), META(0)) < 0) {
        goto done;
    }
    if (lo_t && e_lo < n->num_edges && NEEDS(e_lo) && wlo != NULL &&
        set_fit(&gi[e_lo], TAKE(MUL(G, wlo)), META(e_lo)) < 0) {
        goto done;
    }
    if (hi_t && e_hi < n->num_edges && NEEDS(e_hi) && whi != NULL &&
        set_fit(&gi[e_hi], TAKE(MUL(G, whi)), META(e_hi)) < 0) {
        goto done;
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

static int bw_clamp(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *lo = ARG(1), *hi = ARG(2);
    bool lo_t = lo != NULL && META(1)->is_tensor, hi_t = hi != NULL && META(2)->is_tensor;
    if ((lo_t && (lo = (PyObject *)ct_node_tensor(n, 1)) == NULL) ||
        (hi_t && (hi = (PyObject *)ct_node_tensor(n, 2)) == NULL)) {
        return -1;
    }
    return bw_clamp_impl(n, g, gi, lo, hi, lo_t, hi_t, 1, 2);
}

static int bw_clamp_min(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    bool is_min = strncmp(n->formula->op, "clamp_min", 9) == 0; /* clamp_min_ too */
    PyObject *bound = ARG(1);
    bool bound_t = bound != NULL && META(1)->is_tensor;
    if (bound_t && (bound = (PyObject *)ct_node_tensor(n, 1)) == NULL) {
        return -1;
    }
    return bw_clamp_impl(n, g, gi, is_min ? bound : NULL, is_min ? NULL : bound, is_min && bound_t, !is_min && bound_t,
                         1, 1);
}

/* where(condition, input, other) */
/* where(condition, input, other); the method x.where(condition, other) has self first */
static int where_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi, int cond_at, int input_at)
{
    PyObject *cond = (PyObject *)ct_node_tensor(n, cond_at);
    if (cond == NULL) {
        return -1;
    }
    PyObject *zero = PyFloat_FromDouble(0.0);
    PyObject *mod = PyImport_AddModule("ctorch._C");
    PyObject *where = mod ? PyObject_GetAttrString(mod, "where") : NULL;
    int rc = -1;
    if (zero == NULL || where == NULL) {
        goto done;
    }
    if (NEEDS(0) && set_fit(&gi[0], PyObject_CallFunction(where, "OOO", cond, g[0], zero), META(input_at)) < 0) {
        goto done;
    }
    if (NEEDS(1) && set_fit(&gi[1], PyObject_CallFunction(where, "OOO", cond, zero, g[0]), META(2)) < 0) {
        goto done;
    }
    rc = 0;
done:
    Py_XDECREF(zero);
    Py_XDECREF(where);
    return rc;
}

static int bw_where(CtNodeObject *n, PyObject *const *g, PyObject **gi) { return where_backward(n, g, gi, 0, 1); }
static int bw_where_method(CtNodeObject *n, PyObject *const *g, PyObject **gi) { return where_backward(n, g, gi, 1, 0); }

/* maximum/minimum (and max/min(input, other)): the gradient goes to the larger (smaller) input,
 * split evenly on ties, and to both where either is nan (nan propagates from both).
 * fmax/fmin: as maximum/minimum, but where one input is nan the other (the result) gets it all,
 * and where both are nan the first does. */
static int bw_maximum(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *a = (PyObject *)ct_node_tensor(n, 0), *b = (PyObject *)ct_node_tensor(n, 1);
    if (a == NULL || b == NULL) {
        return -1;
    }
    const char *op = n->formula->op;
    bool is_max = strstr(op, "max") != NULL, is_f = op[0] == 'f';
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *G = g[0], *one = NUM(1.0);
    PyObject *win = CMPF(a, b, is_max ? Py_GT : Py_LT, G), *lose = CMPF(a, b, is_max ? Py_LT : Py_GT, G);
    PyObject *tie = MUL(CMPF(a, b, Py_EQ, G), NUM(0.5));
    PyObject *wa, *wb;
    if (is_f) {
        wa = ADD(ADD(win, tie), CMPF(b, b, Py_NE, G));
        wb = SUB(one, wa);
    } else {
        wa = SUB(SUB(one, lose), tie);
        wb = SUB(SUB(one, win), tie);
    }
    int rc = -1;
    if (arena->failed) {
        goto done;
    }
    if (NEEDS(0) && set_fit(&gi[0], TAKE(MUL(G, wa)), META(0)) < 0) {
        goto done;
    }
    if (NEEDS(1) && set_fit(&gi[1], TAKE(MUL(G, wb)), META(1)) < 0) {
        goto done;
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* lerp(input, end, weight) = input + weight (end - input) */
static int bw_lerp(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *w = META(2)->is_tensor ? (PyObject *)ct_node_tensor(n, 2) : n->args[2];
    if (w == NULL) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *omw = SUB(NUM(1.0), w);
    int rc = -1;
    if (omw == NULL) {
        goto done;
    }
    if (NEEDS(0) && set_fit(&gi[0], TAKE(MUL(g[0], omw)), META(0)) < 0) {
        goto done;
    }
    if (NEEDS(1) && set_fit(&gi[1], TAKE(MUL(g[0], w)), META(1)) < 0) {
        goto done;
    }
    if (NEEDS(2)) {
        PyObject *a = (PyObject *)ct_node_tensor(n, 0), *b = (PyObject *)ct_node_tensor(n, 1);
        if (set_fit(&gi[2], a && b ? TAKE(MUL(g[0], SUB(b, a))) : NULL, META(2)) < 0) {
            goto done;
        }
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* addcmul(input, tensor1, tensor2, value=1) = input + value t1 t2 ; addcdiv: input + value t1 / t2 */
static int bw_addcmul(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    bool is_div = strstr(n->formula->op, "addcdiv") != NULL;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *gv = MUL(g[0], KEEP(scalar_or(ARG(3), 1.0)));
    PyObject *t1 = NULL, *t2 = NULL;
    int rc = -1;
    if (gv == NULL || (t1 = (PyObject *)ct_node_tensor(n, 1)) == NULL ||
        (t2 = (PyObject *)ct_node_tensor(n, 2)) == NULL) {
        goto done;
    }
    if (NEEDS(0) && set_fit(&gi[0], Py_NewRef(g[0]), META(0)) < 0) {
        goto done;
    }
    if (NEEDS(1) && set_fit(&gi[1], TAKE(is_div ? DIV(gv, t2) : MUL(gv, t2)), META(1)) < 0) {
        goto done;
    }
    /* addcdiv: -value g t1 / t2^2 */
    if (NEEDS(2) && set_fit(&gi[2], TAKE(is_div ? NEG(MUL(gv, DIV(DIV(t1, t2), t2))) : MUL(gv, t1)), META(2)) < 0) {
        goto done;
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* --- reductions ------------------------------------------------------------------------------------------- */
/* Brings a reduced gradient back to the input's shape: unsqueeze the reduced dims (unless
 * keepdim) and expand. dims_obj: None/absent = all dims; an int or a sequence. */
static PyObject *unreduce(PyObject *grad, const CtTensorMeta *m, PyObject *dims_obj, bool keepdim)
{
    PyObject *g = Py_NewRef(grad);
    if (!keepdim && m->ndim > 0) {
        bool reduced[CT_MAX_DIMS] = {false};
        if (dims_obj == NULL || dims_obj == Py_None) {
            for (int i = 0; i < m->ndim; i++) {
                reduced[i] = true;
            }
        } else {
            PyObject *seq = PyLong_Check(dims_obj) ? PyTuple_Pack(1, dims_obj) : PySequence_Tuple(dims_obj);
            if (seq == NULL) {
                Py_DECREF(g);
                return NULL;
            }
            if (PyTuple_GET_SIZE(seq) == 0) { /* sum(dim=()) reduces everything */
                for (int i = 0; i < m->ndim; i++) {
                    reduced[i] = true;
                }
            }
            for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(seq); k++) {
                long d = PyLong_AsLong(PyTuple_GET_ITEM(seq, k));
                int w;
                if ((d == -1 && PyErr_Occurred()) || ct_wrap_dim(d, m->ndim, &w) < 0) {
                    Py_DECREF(seq);
                    Py_DECREF(g);
                    return NULL;
                }
                reduced[w] = true;
            }
            Py_DECREF(seq);
        }
        int64_t kept[CT_MAX_DIMS];
        for (int i = 0; i < m->ndim; i++) {
            kept[i] = reduced[i] ? 1 : m->sizes[i];
        }
        PyObject *shape = ct_size_object(m->ndim, kept);
        PyObject *r = shape ? ct_call_method(g, "reshape", "(O)", shape) : NULL;
        Py_XDECREF(shape);
        Py_SETREF(g, r);
        if (g == NULL) {
            return NULL;
        }
    }
    PyObject *shape = shape_of(m);
    PyObject *r = shape ? ct_call_method(g, "expand", "(O)", shape) : NULL;
    Py_XDECREF(shape);
    Py_DECREF(g);
    return r;
}

static bool arg_true(PyObject *o) { return o != NULL && o != Py_None && PyObject_IsTrue(o) == 1; }

static int64_t reduced_count(const CtTensorMeta *m, PyObject *dims_obj)
{
    if (dims_obj == NULL || dims_obj == Py_None) {
        int64_t c = 1;
        for (int i = 0; i < m->ndim; i++) {
            c *= m->sizes[i];
        }
        return c;
    }
    PyObject *seq = PyLong_Check(dims_obj) ? PyTuple_Pack(1, dims_obj) : PySequence_Tuple(dims_obj);
    if (seq == NULL) {
        return -1;
    }
    int64_t c = 1;
    if (PyTuple_GET_SIZE(seq) == 0) {
        for (int i = 0; i < m->ndim; i++) {
            c *= m->sizes[i];
        }
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(seq); k++) {
        int w;
        if (ct_wrap_dim(PyLong_AsLong(PyTuple_GET_ITEM(seq, k)), m->ndim, &w) < 0) {
            Py_DECREF(seq);
            return -1;
        }
        c *= m->ndim ? m->sizes[w] : 1;
    }
    Py_DECREF(seq);
    return c;
}

static int bw_sum(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *v = unreduce(g[0], META(0), ARG(1), arg_true(ARG(2)));
    return set_fit(&gi[0], v, META(0));
}

static int bw_mean(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    int64_t count = reduced_count(META(0), ARG(1));
    if (count < 0) {
        return -1;
    }
    PyObject *c = PyFloat_FromDouble((double)count);
    PyObject *q = c ? PyNumber_TrueDivide(g[0], c) : NULL;
    Py_XDECREF(c);
    if (q == NULL) {
        return -1;
    }
    PyObject *v = unreduce(q, META(0), ARG(1), arg_true(ARG(2)));
    Py_DECREF(q);
    return set_fit(&gi[0], v, META(0));
}

/* prod(input, dim=None, keepdim=False): the product of the other elements. Exact with zeros: with
 * no zero it is prod / x; the only zero of a slice gets the product of the rest; with two or more
 * zeros every element gets zero. */
static int bw_prod(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL) {
        return -1;
    }
    PyObject *dims = ARG(1);
    if (dims != NULL && !PyLong_Check(dims)) {
        dims = NULL;
    }
    bool keepdim = arg_true(ARG(2));
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *zero = NUM(0.0);
    PyObject *is0 = CMP(x, zero, Py_EQ);
    PyObject *x1 = WHERE(is0, NUM(1.0), x); /* x with its zeros replaced by ones */
    /* product of the nonzero elements of each slice, keepdim */
    PyObject *p1 = dims ? METH(x1, "prod", "(OO)", dims, Py_True) : METH(x1, "prod", NULL);
    PyObject *nzeros = SUM_KEEP(MASK(is0, x), dims);
    PyObject *one_zero = WHERE(is0, p1, zero);
    PyObject *local = WHERE(CMP(nzeros, zero, Py_EQ), DIV(p1, x1),
                            WHERE(CMP(nzeros, NUM(1.0), Py_EQ), one_zero, zero));
    PyObject *gu = arena->failed ? NULL : KEEP(unreduce(g[0], META(0), dims, keepdim));
    int rc = set_fit(&gi[0], TAKE(MUL(gu, local)), META(0));
    arena_free(arena);
    return rc;
}

/* amax/amin: evenly shared among the tied extreme elements (nan everywhere when the result is
 * nan). max()/min() without dim: the same, but a nan result goes evenly to the nan elements. */
static int bw_amax(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0), *out = (PyObject *)ct_node_output(n, 0);
    if (x == NULL || out == NULL) {
        return -1;
    }
    bool full = strcmp(n->formula->op, "max") == 0 || strcmp(n->formula->op, "min") == 0;
    PyObject *dims = full ? NULL : ARG(1);
    bool keepdim = full ? false : arg_true(ARG(2));
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *ou = KEEP(unreduce(out, META(0), dims, keepdim));
    PyObject *mf = CMPF(x, ou, Py_EQ, g[0]);
    if (full) {
        mf = ADD(mf, MUL(CMPF(x, x, Py_NE, g[0]), CMPF(ou, ou, Py_NE, g[0])));
    }
    PyObject *cnt = dims ? METH(mf, "sum", "(OO)", dims, keepdim ? Py_True : Py_False) : METH(mf, "sum", NULL);
    PyObject *share = DIV(g[0], cnt);
    PyObject *su = arena->failed ? NULL : KEEP(unreduce(share, META(0), dims, keepdim));
    int rc = set_fit(&gi[0], TAKE(MUL(su, mf)), META(0));
    arena_free(arena);
    return rc;
}

/* max/min/sort/topk with indices: scatter the gradient of the values back to the indices. */
static int bw_values_indices(CtNodeObject *n, PyObject *const *g, PyObject **gi, PyObject *dim, bool keepdim)
{
    if (g[0] == NULL) {
        return 0;
    }
    PyObject *indices = PyTuple_GET_ITEM(n->outputs, 1);
    PyObject *z = zeros_for(META(0));
    PyObject *gv = Py_NewRef(g[0]), *idx = Py_NewRef(indices);
    if (!keepdim && META(0)->ndim > 0) {
        Py_SETREF(gv, ct_call_method(gv, "unsqueeze", "(O)", dim));
        Py_SETREF(idx, idx ? ct_call_method(idx, "unsqueeze", "(O)", dim) : NULL);
    }
    PyObject *v = z && gv && idx ? ct_call_method(z, "scatter", "(OOO)", dim, idx, gv) : NULL;
    Py_XDECREF(z);
    Py_XDECREF(gv);
    Py_XDECREF(idx);
    return set_fit(&gi[0], v, META(0));
}

static int bw_max_dim(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (META(1)->is_tensor) { /* max(input, other) is maximum */
        return bw_maximum(n, g, gi);
    }
    if (ARG(1) == NULL) { /* max() over everything: a single output */
        return bw_amax(n, g, gi);
    }
    return bw_values_indices(n, g, gi, ARG(1), arg_true(ARG(2)));
}

/* sort / topk / kthvalue / mode: values and indices along the dim given as argument dim_arg
 * (default -1); kept unless argument keepdim_arg (-1: none) is false */
static int bw_sorted_along(CtNodeObject *n, PyObject *const *g, PyObject **gi, int dim_arg, int keepdim_arg)
{
    PyObject *dim = ARG(dim_arg);
    PyObject *m1 = dim ? NULL : PyLong_FromLong(-1);
    bool keepdim = keepdim_arg < 0 || arg_true(ARG(keepdim_arg));
    int r = bw_values_indices(n, g, gi, dim ? dim : m1, keepdim);
    Py_XDECREF(m1);
    return r;
}

static int bw_sort(CtNodeObject *n, PyObject *const *g, PyObject **gi) { return bw_sorted_along(n, g, gi, 1, -1); }
static int bw_topk(CtNodeObject *n, PyObject *const *g, PyObject **gi) { return bw_sorted_along(n, g, gi, 2, -1); }
static int bw_kthvalue(CtNodeObject *n, PyObject *const *g, PyObject **gi) { return bw_sorted_along(n, g, gi, 2, 3); }
static int bw_mode(CtNodeObject *n, PyObject *const *g, PyObject **gi) { return bw_sorted_along(n, g, gi, 1, 2); }

static int bw_logsumexp(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL) {
        return -1;
    }
    bool keepdim = arg_true(ARG(2));
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *out = KEEP(ct_node_output_ref(n, 0));
    PyObject *ou = arena->failed ? NULL : KEEP(unreduce(out, META(0), ARG(1), keepdim));
    PyObject *e = METH(SUB(x, ou), "exp", NULL);
    PyObject *gu = arena->failed ? NULL : KEEP(unreduce(g[0], META(0), ARG(1), keepdim));
    int rc = set_fit(&gi[0], TAKE(MUL(gu, e)), META(0));
    arena_free(arena);
    return rc;
}

/* g times d norm_p(x) / dx, owned by the arena (p != 0): ou and gu are the norm and g, broadcastable
 * to x; dims the reduced dims (NULL: all).
 *   p = 1: sign(x);  p = +-inf: sign(x) shared evenly among the elements with |x| == norm (zero
 *   elsewhere, and where the norm is nan);
 *   p < 1: sign(x) |x|^(p-1) norm^(1-p), zero where x == 0;
 *   p > 1: sign(x) |x|^(p-1) / norm^(p-1), zero where the norm is 0. */
static PyObject *norm_grad(CtArena *arena, PyObject *x, PyObject *ou, PyObject *gu, double p, PyObject *dims)
{
    PyObject *zero = NUM(0.0);
    PyObject *sg = METH(x, "sign", NULL);
    if (isinf(p)) {
        PyObject *mask = CMP(METH(x, "abs", NULL), ou, Py_EQ);
        PyObject *cnt = SUM_KEEP(MASK(mask, x), dims);
        return WHERE(mask, DIV(MUL(gu, sg), cnt), zero);
    }
    if (p == 1.0) {
        return MUL(gu, sg);
    }
    if (p == 2.0) {
        return WHERE(CMP(ou, zero, Py_EQ), zero, MUL(gu, DIV(x, ou)));
    }
    PyObject *s = MUL(sg, POW(METH(x, "abs", NULL), NUM(p - 1.0)));
    if (p < 1.0) {
        s = WHERE(CMP(x, zero, Py_EQ), zero, s);
        return MUL(MUL(gu, s), POW(ou, NUM(1.0 - p)));
    }
    return WHERE(CMP(ou, zero, Py_EQ), zero, MUL(gu, DIV(s, POW(ou, NUM(p - 1.0)))));
}

/* A p argument as a double (def when absent). 0 or -1. */
static int arg_p(PyObject *obj, double def, double *p)
{
    *p = def;
    if (obj != NULL && !PyUnicode_Check(obj)) {
        *p = PyFloat_AsDouble(obj);
        if (*p == -1.0 && PyErr_Occurred()) {
            return -1;
        }
    }
    return 0;
}

/* norm(input, p='fro', dim=None, keepdim=False): norm_grad; p = 0 is piecewise constant: no
 * gradient at all (x.grad stays None, as in PyTorch). */
static int bw_norm(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    double p;
    if (x == NULL || arg_p(ARG(1), 2.0, &p) < 0) {
        return -1;
    }
    if (p == 0.0) {
        return 0;
    }
    PyObject *dims = ARG(2);
    bool keepdim = arg_true(ARG(3));
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *out = KEEP(ct_node_output_ref(n, 0));
    PyObject *ou = arena->failed ? NULL : KEEP(unreduce(out, META(0), dims, keepdim));
    PyObject *gu = arena->failed ? NULL : KEEP(unreduce(g[0], META(0), dims, keepdim));
    int rc = set_fit(&gi[0], TAKE(norm_grad(arena, x, ou, gu, p, dims)), META(0));
    arena_free(arena);
    return rc;
}

/* dist(input, other, p=2): norm_grad of input - other, negated for other; p = 0 none (PyTorch
 * raises there). */
static int bw_dist(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0), *o = x ? (PyObject *)ct_node_tensor(n, 1) : NULL;
    double p;
    if (o == NULL || arg_p(ARG(2), 2.0, &p) < 0) {
        return -1;
    }
    if (p == 0.0) {
        return 0;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *out = KEEP(ct_node_output_ref(n, 0));
    PyObject *v = norm_grad(arena, SUB(x, o), out, g[0], p, NULL);
    int rc = NEEDS(0) ? set_fit(&gi[0], TAKE(v), META(0)) : 0;
    if (rc == 0 && NEEDS(1)) {
        rc = set_fit(&gi[1], TAKE(NEG(v)), META(1));
    }
    arena_free(arena);
    return rc;
}

/* renorm(input, p, dim, maxnorm) = input * f, f = maxnorm / (norm + 1e-7) on the slices whose
 * p-norm over the other dims exceeds maxnorm (1 elsewhere): g f - f / (norm + 1e-7) dnorm/dx sum(g x). */
static int bw_renorm(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    double p, maxnorm;
    long long dim = PyLong_AsLongLong(ARG(2));
    if (x == NULL || (dim == -1 && PyErr_Occurred()) || arg_p(ARG(1), 2.0, &p) < 0 ||
        arg_p(ARG(3), 0.0, &maxnorm) < 0) {
        return -1;
    }
    int nd = META(0)->ndim;
    dim = dim < 0 ? dim + nd : dim;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *others = KEEP(PyTuple_New(nd - 1));
    for (int i = 0, k = 0; others != NULL && i < nd; i++) {
        if (i != dim) {
            PyTuple_SET_ITEM(others, k++, PyLong_FromLong(i));
        }
    }
    PyObject *norm = FN("_linalg_vector_norm", "(OOOO)", x, ARG(1), others, Py_True);
    PyObject *limit = NUM(maxnorm);
    PyObject *inv = POW(ADD(norm, NUM(1e-7)), NUM(-1.0));
    PyObject *f = MUL(inv, limit);
    PyObject *dn = norm_grad(arena, x, norm, SUM_KEEP(MUL(x, g[0]), others), p, others);
    PyObject *v = WHERE(CMP(norm, limit, Py_GT), SUB(MUL(f, g[0]), MUL(MUL(f, inv), dn)), g[0]);
    int rc = set_fit(&gi[0], TAKE(v), META(0));
    arena_free(arena);
    return rc;
}

/* softmax(input, dim): out (g - sum(g out)); log_softmax: g - exp(out) sum(g) */
static int bw_softmax(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *dim = ARG(1);
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *out = KEEP(ct_node_output_ref(n, 0));
    PyObject *go = MUL(g[0], out);
    PyObject *s = METH(go, "sum", "(OO)", dim, Py_True);
    int rc = set_fit(&gi[0], TAKE(MUL(out, SUB(g[0], s))), META(0));
    arena_free(arena);
    return rc;
}

static int bw_log_softmax(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *dim = ARG(1);
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *out = KEEP(ct_node_output_ref(n, 0));
    PyObject *s = METH(g[0], "sum", "(OO)", dim, Py_True);
    PyObject *e = METH(out, "exp", NULL);
    int rc = set_fit(&gi[0], TAKE(SUB(g[0], MUL(e, s))), META(0));
    arena_free(arena);
    return rc;
}

static int bw_cumsum(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *dim = ARG(1);
    PyObject *dims = dim ? PyTuple_Pack(1, dim) : NULL;
    PyObject *f = dims ? ct_call_method(g[0], "flip", "(O)", dims) : NULL;
    PyObject *c = f ? ct_call_method(f, "cumsum", "(O)", dim) : NULL;
    PyObject *v = c ? ct_call_method(c, "flip", "(O)", dims) : NULL;
    Py_XDECREF(dims); Py_XDECREF(f); Py_XDECREF(c);
    return set_fit(&gi[0], v, META(0));
}

/* cummax/cummin(x, dim): each output's gradient goes back to the index its value came from
 * (indices repeat, so the gradients add up). */
static int bw_cummax(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (g[0] == NULL) {
        return 0;
    }
    PyObject *z = zeros_for(META(0));
    PyObject *v = z ? ct_call_method(z, "scatter_add", "(OOO)", ARG(1), PyTuple_GET_ITEM(n->outputs, 1), g[0])
                    : NULL;
    Py_XDECREF(z);
    return set_fit(&gi[0], v, META(0));
}

/* logcumsumexp(x, dim): dx_i = sum_{k>=i} g_k exp(x_i - out_k). The sum runs in log space, for
 * the positive and the negative g_k apart: exp(x_i + revlogcumsumexp(log|g| - out)_i), with
 * the dtype's lowest value standing for log(0) (as PyTorch's formula). */
static int bw_logcumsumexp(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0), *dim = ARG(1);
    if (x == NULL) {
        return -1;
    }
    if (META(0)->ndim == 0 || ct_numel(CT_TENSOR(x)) == 0) {
        return set_fit(&gi[0], Py_NewRef(g[0]), META(0));
    }
    CtDType dt = META(0)->dtype;
    double lowest = dt == CT_F64    ? -DBL_MAX
                    : dt == CT_F16  ? -65504.0
                    : dt == CT_BF16 ? -3.3895313892515355e38
                                    : -FLT_MAX;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *dims = KEEP(PyTuple_Pack(1, dim)), *zero = NUM(0.0), *low = NUM(lowest);
    PyObject *out = KEEP(ct_node_output_ref(n, 0));
    PyObject *log_abs = METH(METH(g[0], "abs", NULL), "log", NULL);
    PyObject *v = NULL;
    for (int sign = 0; sign < 2; sign++) {
        PyObject *lg = WHERE(CMP(g[0], zero, sign ? Py_LT : Py_GT), log_abs, low);
        PyObject *rev = METH(METH(METH(SUB(lg, out), "flip", "(O)", dims), "logcumsumexp", "(O)", dim), "flip", "(O)",
                             dims);
        PyObject *part = METH(ADD(rev, x), "exp", NULL);
        v = sign ? SUB(v, part) : part;
    }
    int rc = set_fit(&gi[0], TAKE(v), META(0));
    arena_free(arena);
    return rc;
}

/* --- views and shape changes --------------------------------------------------------------------------- */
static int bw_reshape(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *shape = shape_of(META(0));
    PyObject *v = shape ? ct_call_method(g[0], "reshape", "(O)", shape) : NULL;
    Py_XDECREF(shape);
    return set_fit(&gi[0], v, META(0));
}

static int bw_transpose(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *v;
    if (ARG(1) != NULL && ARG(2) != NULL) {
        v = ct_call_method(g[0], "transpose", "(OO)", ARG(1), ARG(2));
    } else {
        v = ct_call_method(g[0], "t", NULL);
    }
    return set_fit(&gi[0], v, META(0));
}

static int bw_permute(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    /* dims were passed as permute(*dims) (normalised into args[1..]) or permute(dims) */
    int nd = META(0)->ndim;
    int perm[CT_MAX_DIMS];
    PyObject *first = ARG(1);
    PyObject *seq = NULL;
    if (first != NULL && (PyTuple_Check(first) || PyList_Check(first))) {
        seq = PySequence_Tuple(first);
    } else {
        seq = PyTuple_New(0);
        for (int i = 1; seq != NULL && i < n->nargs && ARG(i) != NULL; i++) {
            PyObject *one = PyTuple_Pack(1, ARG(i));
            PyObject *cat = one ? PySequence_Concat(seq, one) : NULL;
            Py_XDECREF(one);
            Py_SETREF(seq, cat);
        }
    }
    if (seq == NULL) {
        return -1;
    }
    if (PyTuple_GET_SIZE(seq) != nd) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_RuntimeError, "permute backward: bad dims");
        return -1;
    }
    for (int i = 0; i < nd; i++) {
        int w;
        if (ct_wrap_dim(PyLong_AsLong(PyTuple_GET_ITEM(seq, i)), nd, &w) < 0) {
            Py_DECREF(seq);
            return -1;
        }
        perm[i] = w;
    }
    Py_DECREF(seq);
    PyObject *inv = PyTuple_New(nd);
    for (int i = 0; inv != NULL && i < nd; i++) {
        PyTuple_SET_ITEM(inv, perm[i], PyLong_FromLong(i));
    }
    PyObject *v = inv ? ct_call_method(g[0], "permute", "(O)", inv) : NULL;
    Py_XDECREF(inv);
    return set_fit(&gi[0], v, META(0));
}

static int bw_movedim(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *v = ct_call_method(g[0], "movedim", "(OO)", ARG(2), ARG(1));
    return set_fit(&gi[0], v, META(0));
}

/* narrow(dim, start, length) and select(dim, index): put g into zeros. Written as
 * zeros[key] = g (a recorded op), so that with create_graph the result stays a function of g. */
static int bw_narrow(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    const CtTensorMeta *m = META(0);
    bool is_select = strcmp(n->formula->op, "select") == 0;
    long long d = PyLong_AsLongLong(ARG(1));
    int wd;
    if ((d == -1 && PyErr_Occurred()) || ct_wrap_dim(d, m->ndim, &wd) < 0) {
        return -1;
    }
    PyObject *z = zeros_for(m);
    PyObject *key = z ? PyTuple_New(wd + 1) : NULL;
    int rc = -1;
    if (key == NULL) {
        goto done;
    }
    for (int i = 0; i < wd; i++) {
        PyObject *all = PySlice_New(NULL, NULL, NULL);
        if (all == NULL) {
            goto done;
        }
        PyTuple_SET_ITEM(key, i, all);
    }
    PyObject *last;
    if (is_select) {
        last = PyNumber_Index(ARG(2));
    } else {
        PyObject *si = PyNumber_Index(ARG(2)), *li = si ? PyNumber_Index(ARG(3)) : NULL;
        long long start = si ? PyLong_AsLongLong(si) : -1, length = li ? PyLong_AsLongLong(li) : -1;
        Py_XDECREF(si);
        Py_XDECREF(li);
        if (PyErr_Occurred()) {
            goto done;
        }
        if (start < 0 && m->ndim > 0) {
            start += m->sizes[wd];
        }
        PyObject *lo = PyLong_FromLongLong(start), *hi = PyLong_FromLongLong(start + length);
        last = lo && hi ? PySlice_New(lo, hi, NULL) : NULL;
        Py_XDECREF(lo);
        Py_XDECREF(hi);
    }
    if (last == NULL) {
        goto done;
    }
    PyTuple_SET_ITEM(key, PyTuple_GET_SIZE(key) - 1, last);
    if (PyObject_SetItem(z, key, g[0]) < 0) {
        goto done;
    }
    gi[0] = Py_NewRef(z);
    rc = 0;
done:
    Py_XDECREF(key);
    Py_XDECREF(z);
    return rc;
}

/* split/chunk/unbind: concatenate the pieces' gradients, zeros where a piece got none */
static int bw_pieces(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    bool is_unbind = strcmp(n->formula->op, "unbind") == 0;
    PyObject *dim = is_unbind ? ARG(1) : ARG(2 - (strcmp(n->formula->op, "chunk") == 0 ? 0 : 0));
    if (strcmp(n->formula->op, "split") == 0 || strcmp(n->formula->op, "chunk") == 0) {
        dim = ARG(2);
    }
    PyObject *d0 = dim ? Py_NewRef(dim) : PyLong_FromLong(0);
    PyObject *parts = PyList_New(n->num_outputs);
    int rc = -1;
    if (parts == NULL || d0 == NULL) {
        goto done;
    }
    for (int k = 0; k < n->num_outputs; k++) {
        PyObject *piece = g[k];
        if (piece == NULL) {
            CtTensorObject *o = ct_node_output(n, k);
            if (o == NULL) {
                goto done;
            }
            PyObject *a[1] = {(PyObject *)o};
            piece = ct_op("zeros_like", a, 1, NULL);
        } else {
            Py_INCREF(piece);
        }
        if (piece == NULL) {
            goto done;
        }
        PyList_SET_ITEM(parts, k, piece);
    }
    PyObject *a[2] = {parts, d0};
    PyObject *v = ct_op(is_unbind ? "stack" : "cat", a, 2, NULL);
    if (set_fit(&gi[0], v, META(0)) < 0) {
        goto done;
    }
    rc = 0;
done:
    Py_XDECREF(parts);
    Py_XDECREF(d0);
    return rc;
}

static int bw_to(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *dev = ct_device_object(META(0)->device);
    PyObject *v = dev ? ct_call_method(g[0], "to", "(OO)", dev, ct_dtype_object(META(0)->dtype)) : NULL;
    Py_XDECREF(dev);
    if (v == NULL) {
        return -1;
    }
    gi[0] = v;
    return 0;
}

/* --- indexing and joining --------------------------------------------------------------------------------- */
static int bw_cat(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *tensors = n->args[0];
    PyObject *dim = ARG(1);
    PyObject *d0 = dim ? Py_NewRef(dim) : PyLong_FromLong(0);
    Py_ssize_t k = PySequence_Fast_GET_SIZE(tensors);
    PyObject *sizes = PyList_New(0);
    int rc = -1;
    if (sizes == NULL || d0 == NULL) {
        goto done;
    }
    int wd;
    if (ct_wrap_dim(PyLong_AsLong(d0), CT_TENSOR(g[0])->ndim, &wd) < 0) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(tensors, i);
        CtTensorObject *tt = CT_TENSOR(t);
        /* legacy: 1-d empty tensors are skipped by cat */
        int64_t len = (tt->ndim == 1 && tt->sizes[0] == 0 && CT_TENSOR(g[0])->ndim != 1) ? 0 : tt->sizes[wd];
        PyObject *l = PyLong_FromLongLong(len);
        if (l == NULL || PyList_Append(sizes, l) < 0) {
            Py_XDECREF(l);
            goto done;
        }
        Py_DECREF(l);
    }
    PyObject *pieces = ct_call_method(g[0], "split", "(OO)", sizes, d0);
    if (pieces == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(tensors, i);
        PyObject *p = PyTuple_GET_ITEM(pieces, i);
        if (CT_TENSOR(t)->ndim != CT_TENSOR(p)->ndim) {
            gi[i] = ct_call_method(p, "reshape", "(N)", PyObject_GetAttrString(t, "shape"));
        } else {
            gi[i] = Py_NewRef(p);
        }
    }
    Py_DECREF(pieces);
    rc = 0;
done:
    Py_XDECREF(sizes);
    Py_XDECREF(d0);
    return rc;
}

static int bw_stack(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *dim = ARG(1);
    PyObject *d0 = dim ? Py_NewRef(dim) : PyLong_FromLong(0);
    PyObject *pieces = d0 ? ct_call_method(g[0], "unbind", "(O)", d0) : NULL;
    Py_XDECREF(d0);
    if (pieces == NULL) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(pieces) && i < n->num_edges; i++) {
        gi[i] = Py_NewRef(PyTuple_GET_ITEM(pieces, i));
    }
    Py_DECREF(pieces);
    return 0;
}

/* True when an index key holds an advanced index (tensor, list, array), which may repeat elements. */
static bool key_is_advanced(PyObject *key)
{
    if (PyTuple_Check(key)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++) {
            if (key_is_advanced(PyTuple_GET_ITEM(key, i))) {
                return true;
            }
        }
        return false;
    }
    return !(PyLong_Check(key) || PySlice_Check(key) || key == Py_None || key == Py_Ellipsis || PyBool_Check(key) ||
             (CtTensor_Check(key) && CT_TENSOR(key)->ndim == 0 && CT_TENSOR(key)->dtype != CT_BOOL));
}

/* x[key]: basic keys write g into zeros at key; advanced keys may repeat elements, so their
 * gradient is accumulated: the flat positions selected by key (an arange indexed the same
 * way) receive index_add of g. */
static int bw_getitem(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *key = n->args[1];
    PyObject *z = zeros_for(META(0));
    if (z == NULL) {
        return -1;
    }
    if (!key_is_advanced(key)) {
        if (PyObject_SetItem(z, key, g[0]) < 0) {
            Py_DECREF(z);
            return -1;
        }
        gi[0] = z;
        return 0;
    }
    int64_t numel = 1;
    for (int i = 0; i < META(0)->ndim; i++) {
        numel *= META(0)->sizes[i];
    }
    PyObject *mod = PyImport_AddModule("ctorch._C");
    PyObject *dev = ct_device_object(META(0)->device);
    PyObject *shape = shape_of(META(0));
    PyObject *ar = NULL, *pos = NULL, *flat = NULL, *r = NULL;
    int rc = -1;
    if (mod == NULL || dev == NULL || shape == NULL) {
        goto done;
    }
    ar = ct_call_method(mod, "arange", "(L)", (long long)numel);
    if (ar == NULL) {
        goto done;
    }
    Py_SETREF(ar, ct_call_method(ar, "to", "(O)", dev));
    Py_SETREF(ar, ar ? ct_call_method(ar, "reshape", "(O)", shape) : NULL);
    pos = ar ? PyObject_GetItem(ar, key) : NULL;
    Py_SETREF(pos, pos ? ct_call_method(pos, "reshape", "(i)", -1) : NULL);
    flat = ct_call_method(z, "view", "(i)", -1);
    PyObject *gf = pos && flat ? ct_call_method(g[0], "reshape", "(i)", -1) : NULL;
    /* scatter_add is recorded: with create_graph the result stays a function of g */
    r = gf ? ct_call_method(flat, "scatter_add", "(iOO)", 0, pos, gf) : NULL;
    Py_XDECREF(gf);
    if (r == NULL) {
        goto done;
    }
    gi[0] = ct_call_method(r, "reshape", "(O)", shape);
    if (gi[0] == NULL) {
        goto done;
    }
    rc = 0;
done:
    Py_XDECREF(dev);
    Py_XDECREF(shape);
    Py_XDECREF(ar);
    Py_XDECREF(pos);
    Py_XDECREF(flat);
    Py_XDECREF(r);
    Py_DECREF(z);
    return rc;
}

/* x[key] = value (in place): x's gradient is g with zeros at key; value's is g[key] */
static int bw_setitem(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *key = n->args[1];
    if (NEEDS(0)) {
        PyObject *c = method0(g[0], "clone");
        PyObject *zero = PyFloat_FromDouble(0.0);
        if (c == NULL || zero == NULL || PyObject_SetItem(c, key, zero) < 0) {
            Py_XDECREF(c);
            Py_XDECREF(zero);
            return -1;
        }
        Py_DECREF(zero);
        gi[0] = c;
    }
    if (NEEDS(1) && META(2)->is_tensor) {
        PyObject *sel = PyObject_GetItem(g[0], key);
        if (set_fit(&gi[1], sel, META(2)) < 0) {
            return -1;
        }
    }
    return 0;
}

static int bw_gather(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *z = zeros_for(META(0));
    PyObject *idx = (PyObject *)ct_node_tensor(n, 2);
    PyObject *v = z && idx ? ct_call_method(z, "scatter_add", "(OOO)", ARG(1), idx, g[0]) : NULL;
    Py_XDECREF(z);
    return set_fit(&gi[0], v, META(0));
}

/* index_select(input, dim, index): g summed into the selected rows (index_add). With create_graph
 * it is written as scatter_add with the index broadcast along dim, a recorded op, so that the
 * result stays a function of g. */
static int bw_index_select(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *z = zeros_for(META(0));
    PyObject *idx = (PyObject *)ct_node_tensor(n, 2);
    CtTensorObject *gt = CT_TENSOR(g[0]);
    PyObject *v = NULL;
    if (z != NULL && idx != NULL && (gt->ndim == 0 || !ct_grad_enabled)) {
        v = ct_call_method(z, "index_add", "(OOO)", ARG(1), idx, g[0]);
    } else if (z != NULL && idx != NULL) {
        long long d = PyLong_AsLongLong(ARG(1));
        int wd;
        if ((d != -1 || !PyErr_Occurred()) && ct_wrap_dim(d, gt->ndim, &wd) == 0) {
            int64_t shape[CT_MAX_DIMS];
            for (int i = 0; i < gt->ndim; i++) {
                shape[i] = i == wd ? -1 : 1;
            }
            PyObject *vs = ct_size_object(gt->ndim, shape), *gs = ct_size_object(gt->ndim, gt->sizes);
            PyObject *iv = vs && gs ? ct_call_method(idx, "reshape", "(O)", vs) : NULL;
            PyObject *ie = iv ? ct_call_method(iv, "expand", "(O)", gs) : NULL;
            v = ie ? ct_call_method(z, "scatter_add", "(iOO)", wd, ie, g[0]) : NULL;
            Py_XDECREF(vs);
            Py_XDECREF(gs);
            Py_XDECREF(iv);
            Py_XDECREF(ie);
        }
    }
    Py_XDECREF(z);
    return set_fit(&gi[0], v, META(0));
}

/* scatter(input, dim, index, src) / scatter_add */
static int bw_scatter(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    bool is_add = strstr(n->formula->op, "scatter_add") != NULL;
    if (!is_add && ARG(5) != NULL) { /* scatter(..., reduce=): PyTorch has no derivative either */
        PyErr_SetString(PyExc_RuntimeError, "derivative for aten::scatter is not implemented");
        return -1;
    }
    PyObject *idx = (PyObject *)ct_node_tensor(n, 2);
    if (idx == NULL) {
        return -1;
    }
    if (NEEDS(0)) {
        PyObject *v = is_add ? Py_NewRef(g[0]) : ct_call_method(g[0], "scatter", "(OOd)", ARG(1), idx, 0.0);
        if (set_fit(&gi[0], v, META(0)) < 0) {
            return -1;
        }
    }
    if (NEEDS(1) && META(3)->is_tensor) {
        PyObject *v = ct_call_method(g[0], "gather", "(OO)", ARG(1), idx);
        if (set_fit(&gi[1], v, META(3)) < 0) {
            return -1;
        }
    }
    return 0;
}

static int bw_tril(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *diag = ARG(1) ? Py_NewRef(ARG(1)) : PyLong_FromLong(0);
    PyObject *v = diag ? ct_call_method(g[0], n->formula->op[0] == 't' && n->formula->op[1] == 'r' &&
                                                            n->formula->op[2] == 'i' && n->formula->op[3] == 'l'
                                                        ? "tril"
                                                        : "triu",
                                             "(O)", diag)
                       : NULL;
    Py_XDECREF(diag);
    return set_fit(&gi[0], v, META(0));
}

static int bw_flip(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *v = ct_call_method(g[0], "flip", "(O)", ARG(1));
    return set_fit(&gi[0], v, META(0));
}

static int bw_roll(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *shifts = ARG(1);
    PyObject *neg = NULL;
    if (PyLong_Check(shifts)) {
        neg = PyNumber_Negative(shifts);
    } else {
        PyObject *seq = PySequence_Tuple(shifts);
        neg = seq ? PyTuple_New(PyTuple_GET_SIZE(seq)) : NULL;
        for (Py_ssize_t i = 0; neg != NULL && i < PyTuple_GET_SIZE(seq); i++) {
            PyTuple_SET_ITEM(neg, i, PyNumber_Negative(PyTuple_GET_ITEM(seq, i)));
        }
        Py_XDECREF(seq);
    }
    PyObject *v = neg ? (ARG(2) ? ct_call_method(g[0], "roll", "(OO)", neg, ARG(2))
                                : ct_call_method(g[0], "roll", "(O)", neg))
                      : NULL;
    Py_XDECREF(neg);
    return set_fit(&gi[0], v, META(0));
}

/* repeat(*sizes): sum the tiles: view g as (r0, s0, r1, s1, ...) and sum the r dims */
static int bw_repeat(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtTensorObject *gt = CT_TENSOR(g[0]);
    const CtTensorMeta *m = META(0);
    int lead = gt->ndim - m->ndim;
    PyObject *shape = PyList_New(0), *dims = PyList_New(0);
    int rc = -1;
    if (shape == NULL || dims == NULL) {
        goto done;
    }
    for (int i = 0; i < gt->ndim; i++) {
        int64_t s = i < lead ? 1 : m->sizes[i - lead];
        int64_t r = s == 0 ? 0 : gt->sizes[i] / (s ? s : 1);
        PyObject *rv = PyLong_FromLongLong(r), *sv = PyLong_FromLongLong(s), *dv = PyLong_FromLong(2 * i);
        if (!rv || !sv || !dv || PyList_Append(shape, rv) < 0 || PyList_Append(shape, sv) < 0 ||
            PyList_Append(dims, dv) < 0) {
            Py_XDECREF(rv); Py_XDECREF(sv); Py_XDECREF(dv);
            goto done;
        }
        Py_DECREF(rv); Py_DECREF(sv); Py_DECREF(dv);
    }
    PyObject *shape_t = PyList_AsTuple(shape), *dims_t = PyList_AsTuple(dims);
    PyObject *r = shape_t ? ct_call_method(g[0], "reshape", "(O)", shape_t) : NULL;
    PyObject *s = r && dims_t ? ct_call_method(r, "sum", "(O)", dims_t) : NULL;
    Py_XDECREF(shape_t); Py_XDECREF(dims_t); Py_XDECREF(r);
    rc = set_fit(&gi[0], s, m);
done:
    Py_XDECREF(shape);
    Py_XDECREF(dims);
    return rc;
}

/* --- linear algebra ----------------------------------------------------------------------------------- */
/* matmul(a, b) for any ranks: lift 1-d operands to matrices, use the batched rule, undo. */
/* mat1^T @ g, the gradient of a 2-D mat2 (mm / addmm), computed as (g^T @ mat1)^T when mat2 is
 * column-major (nn.Linear's weight.t()): the result then has mat2's layout and its transpose back to
 * the weight is contiguous, as PyTorch's mm_mat2_backward. */
static PyObject *mm_mat2_grad(PyObject *m1, PyObject *g, const CtTensorObject *m2)
{
    if (m2->ndim == 2 && m2->strides[0] == 1 && m2->sizes[1] > 1 && m2->sizes[0] > 1) {
        PyObject *gt = ct_call_method(g, "t", NULL);
        PyObject *p = gt ? PyNumber_MatrixMultiply(gt, m1) : NULL;
        Py_XDECREF(gt);
        if (p != NULL) {
            Py_SETREF(p, ct_call_method(p, "t", NULL));
        }
        return p;
    }
    PyObject *t = ct_call_method(m1, "t", NULL);
    PyObject *p = t ? PyNumber_MatrixMultiply(t, g) : NULL;
    Py_XDECREF(t);
    return p;
}

static int bw_matmul(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtTensorObject *a = ct_node_tensor(n, 0), *b = ct_node_tensor(n, 1);
    if (a == NULL || b == NULL) {
        return -1;
    }
    PyObject *A = Py_NewRef(a), *B = Py_NewRef(b), *G = Py_NewRef(g[0]);
    int rc = -1;
    bool a1 = a->ndim == 1, b1 = b->ndim == 1;
    if (a1) {
        Py_SETREF(A, ct_call_method(A, "unsqueeze", "(i)", 0));
        Py_SETREF(G, G ? ct_call_method(G, "unsqueeze", "(i)", b1 ? 0 : -2) : NULL);
    }
    if (b1) {
        Py_SETREF(B, B ? ct_call_method(B, "unsqueeze", "(i)", 1) : NULL);
        Py_SETREF(G, G ? ct_call_method(G, "unsqueeze", "(i)", -1) : NULL);
    }
    if (A == NULL || B == NULL || G == NULL) {
        goto done;
    }
    if (NEEDS(0)) {
        PyObject *bt = PyObject_GetAttrString(B, "mT");
        PyObject *v = bt ? PyNumber_MatrixMultiply(G, bt) : NULL;
        Py_XDECREF(bt);
        if (v != NULL && a1) { /* sum over b's batch dims first, then drop the row dim */
            Py_SETREF(v, ct_sum_to(v, 2, (int64_t[]){1, a->sizes[0]}));
            if (v != NULL) {
                Py_SETREF(v, ct_call_method(v, "reshape", "(N)", PyObject_GetAttrString((PyObject *)a, "shape")));
            }
        }
        if (set_fit(&gi[0], v, META(0)) < 0) {
            goto done;
        }
    }
    if (NEEDS(1)) {
        PyObject *v;
        if (a->ndim == 2 && b->ndim == 2) {
            v = mm_mat2_grad(A, G, b);
        } else {
            PyObject *at = PyObject_GetAttrString(A, "mT");
            v = at ? PyNumber_MatrixMultiply(at, G) : NULL;
            Py_XDECREF(at);
        }
        if (v != NULL && b1) {
            PyObject *s = PyObject_GetAttrString(v, "shape");
            /* sum over the batch dims first, then drop the column dim */
            Py_XDECREF(s);
            Py_SETREF(v, ct_sum_to(v, 2, (int64_t[]){b->sizes[0], 1}));
            if (v != NULL) {
                Py_SETREF(v, ct_call_method(v, "reshape", "(N)", PyObject_GetAttrString((PyObject *)b, "shape")));
            }
        }
        if (set_fit(&gi[1], v, META(1)) < 0) {
            goto done;
        }
    }
    rc = 0;
done:
    Py_XDECREF(A);
    Py_XDECREF(B);
    Py_XDECREF(G);
    return rc;
}

/* addmm(input, mat1, mat2, *, beta=1, alpha=1); a beta / alpha left out scales nothing (no
 * multiply by 1 in every nn.Linear backward). */
static PyObject *scaled(PyObject *v, PyObject *s)
{
    if (v == NULL || s == NULL) {
        return v;
    }
    PyObject *r = mul(v, s);
    Py_DECREF(v);
    return r;
}

static int bw_addmm(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *beta = ARG(3), *alpha = ARG(4);
    if (NEEDS(0) && set_fit(&gi[0], scaled(Py_NewRef(g[0]), beta), META(0)) < 0) {
        return -1;
    }
    if (NEEDS(1)) {
        PyObject *m2 = (PyObject *)ct_node_tensor(n, 2);
        PyObject *t = m2 ? ct_call_method(m2, "t", NULL) : NULL;
        PyObject *p = t ? PyNumber_MatrixMultiply(g[0], t) : NULL;
        Py_XDECREF(t);
        if (set_fit(&gi[1], scaled(p, alpha), META(1)) < 0) {
            return -1;
        }
    }
    if (NEEDS(2)) {
        PyObject *m1 = (PyObject *)ct_node_tensor(n, 1);
        CtTensorObject *m2 = m1 ? ct_node_tensor(n, 2) : NULL;
        PyObject *p = m2 ? mm_mat2_grad(m1, g[0], m2) : NULL;
        if (set_fit(&gi[2], scaled(p, alpha), META(2)) < 0) {
            return -1;
        }
    }
    return 0;
}

static int bw_outer(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *a = (PyObject *)ct_node_tensor(n, 0), *b = (PyObject *)ct_node_tensor(n, 1);
    if (a == NULL || b == NULL) {
        return -1;
    }
    if (NEEDS(0) && set_fit(&gi[0], PyNumber_MatrixMultiply(g[0], b), META(0)) < 0) {
        return -1;
    }
    if (NEEDS(1)) {
        PyObject *t = ct_call_method(g[0], "t", NULL);
        if (set_fit(&gi[1], t ? PyNumber_MatrixMultiply(t, a) : NULL, META(1)) < 0) {
            Py_XDECREF(t);
            return -1;
        }
        Py_DECREF(t);
    }
    return 0;
}

/* --- in-place writes that replace self's values ------------------------------------------------------------ */
/* copy_(src): self's old values get no gradient; src gets grad, reduced to its shape, dtype and device. */
static int bw_copy(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (NEEDS(0) && (gi[0] = zeros_for(META(0))) == NULL) {
        return -1;
    }
    return NEEDS(1) ? set_fit(&gi[1], Py_NewRef(g[0]), META(1)) : 0;
}

/* Saved tensor argument i (borrowed), or the Python number given there. */
static PyObject *arg_value(CtNodeObject *n, int i)
{
    return META(i)->is_tensor ? (PyObject *)ct_node_tensor(n, i) : n->args[i];
}

/* Ends a formula: gi[e] = value fitted to argument i when edge e is wanted. */
static int put(CtNodeObject *n, PyObject **gi, int e, PyObject *value, int i)
{
    if (!NEEDS(e)) {
        return 0;
    }
    return set_fit(&gi[e], Py_XNewRef(value), META(i));
}

static bool is_tensor(PyObject *o) { return o != NULL && CtTensor_Check(o); }
static bool is_given(PyObject *o) { return o != NULL && o != Py_None; }

static int not_implemented(CtNodeObject *n)
{
    PyErr_Format(PyExc_NotImplementedError, "derivative for aten::%s is not implemented", n->formula->op);
    return -1;
}

/* --- more elementwise ---------------------------------------------------------------------------------- */
CT_LOCAL(asinh, METH(ADD(MUL(x, x), NUM(1.0)), "rsqrt", NULL))
CT_LOCAL(acosh, METH(MUL(SUB(x, NUM(1.0)), ADD(x, NUM(1.0))), "rsqrt", NULL))
CT_LOCAL(atanh, METH(SUB(NUM(1.0), MUL(x, x)), "reciprocal", NULL))
CT_LOCAL(erf, MUL(METH(NEG(MUL(x, x)), "exp", NULL), NUM(M_2_SQRTPI)))
CT_LOCAL(erfc, MUL(METH(NEG(MUL(x, x)), "exp", NULL), NUM(-M_2_SQRTPI)))
CT_LOCAL(finite, MASK(METH(x, "isfinite", NULL), x))
CT_UNARY_BW(asinh, lg_asinh, true, false)
CT_UNARY_BW(acosh, lg_acosh, true, false)
CT_UNARY_BW(atanh, lg_atanh, true, false)
CT_UNARY_BW(erf, lg_erf, true, false)
CT_UNARY_BW(erfc, lg_erfc, true, false)
CT_UNARY_BW(nan_to_num, lg_finite, true, false)

/* softplus(x, beta=1, threshold=20): sigmoid(beta x), 1 where beta x > threshold (linear there) */
static int bw_softplus(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    PyObject *beta = ARG(1) ? ARG(1) : NUM(1.0), *threshold = ARG(2) ? ARG(2) : NUM(20.0);
    PyObject *bx = MUL(x, beta);
    PyObject *local = FN("where", "(OdO)", CMP(bx, threshold, Py_GT), 1.0, METH(bx, "sigmoid", NULL));
    int rc = put(n, gi, 0, MUL(g[0], local), 0);
    arena_free(arena);
    return rc;
}

/* atan2(a, b): (b, -a) / (a^2 + b^2) */
static int bw_atan2(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *a = (PyObject *)ct_node_tensor(n, 0), *b = (PyObject *)ct_node_tensor(n, 1);
    PyObject *gr = DIV(g[0], ADD(MUL(a, a), MUL(b, b)));
    int rc = put(n, gi, 0, MUL(gr, b), 0) < 0 || put(n, gi, 1, NEG(MUL(gr, a)), 1) < 0 ? -1 : 0;
    arena_free(arena);
    return rc;
}

/* hypot(a, b) = out: (a, b) / out */
static int bw_hypot(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *a = (PyObject *)ct_node_tensor(n, 0), *b = (PyObject *)ct_node_tensor(n, 1);
    PyObject *gr = DIV(g[0], KEEP(ct_node_output_ref(n, 0)));
    int rc = put(n, gi, 0, MUL(gr, a), 0) < 0 || put(n, gi, 1, MUL(gr, b), 1) < 0 ? -1 : 0;
    arena_free(arena);
    return rc;
}

/* logaddexp(a, b): the softmax weights of (a, b); logaddexp2 in base 2 */
static int bw_logaddexp(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    bool base2 = strcmp(n->formula->op, "logaddexp2") == 0;
    PyObject *a = (PyObject *)ct_node_tensor(n, 0), *b = (PyObject *)ct_node_tensor(n, 1);
    PyObject *wa = METH(ADD(NUM(1.0), METH(SUB(b, a), base2 ? "exp2" : "exp", NULL)), "reciprocal", NULL);
    PyObject *wb = METH(ADD(NUM(1.0), METH(SUB(a, b), base2 ? "exp2" : "exp", NULL)), "reciprocal", NULL);
    int rc = put(n, gi, 0, MUL(g[0], wa), 0) < 0 || put(n, gi, 1, MUL(g[0], wb), 1) < 0 ? -1 : 0;
    arena_free(arena);
    return rc;
}

/* copysign(a, b) = |a| sign(b): d/da = out / a (0 where a == 0); b gets zeros */
static int bw_copysign(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    int rc = -1;
    if (NEEDS(0)) {
        PyObject *a = (PyObject *)ct_node_tensor(n, 0), *out = KEEP(ct_node_output_ref(n, 0));
        PyObject *zero = a ? CMP(a, NUM(0.0), Py_EQ) : NULL;
        PyObject *ratio = zero ? METH(DIV(out, a), "masked_fill", "(Od)", zero, 0.0) : NULL;
        if (put(n, gi, 0, MUL(g[0], ratio), 0) < 0) {
            goto done;
        }
    }
    if (n->num_edges > 1 && NEEDS(1) && (gi[1] = zeros_for(META(1))) == NULL) {
        goto done;
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* remainder(a, b) = a - floor(a / b) b ; fmod(a, b) = a - trunc(a / b) b */
static int bw_remainder(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (!META(0)->is_tensor) { /* remainder(number, tensor): PyTorch has no derivative either */
        return not_implemented(n);
    }
    CtArena scratch = {0}, *arena = &scratch;
    int rc = -1;
    if (put(n, gi, 0, g[0], 0) < 0) {
        goto done;
    }
    if (n->num_edges > 1 && NEEDS(1)) {
        bool is_fmod = strcmp(n->formula->op, "fmod") == 0;
        PyObject *a = (PyObject *)ct_node_tensor(n, 0), *b = (PyObject *)ct_node_tensor(n, 1);
        PyObject *q = METH(DIV(a, b), is_fmod ? "trunc" : "floor", NULL);
        if (put(n, gi, 1, NEG(MUL(g[0], q)), 1) < 0) {
            goto done;
        }
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* pow/float_power when the formula saves nothing special; float_power computes in float64 and
 * the gradients are cast back to the inputs' dtypes by fit(). */
static int bw_float_power(CtNodeObject *n, PyObject *const *g, PyObject **gi) { return bw_pow(n, g, gi); }

/* masked_fill(input, mask, value): a tensor value gets the sum of the filled positions' grads */
static int bw_masked_fill2(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *mask = (PyObject *)ct_node_tensor(n, 1);
    int rc = -1;
    if (mask == NULL || put(n, gi, 0, METH(g[0], "masked_fill", "(Od)", mask, 0.0), 0) < 0) {
        goto done;
    }
    if (n->num_edges > 1 && NEEDS(1) && META(2)->is_tensor) {
        PyObject *kept = FN("where", "(OOd)", mask, g[0], 0.0);
        if (put(n, gi, 1, METH(kept, "sum", NULL), 2) < 0) {
            goto done;
        }
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* random draws: their samples do not depend differentiably on the parameters (zero gradients) */
static int bw_random(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    for (int e = 0; e < n->num_edges && e < 2; e++) {
        if (NEEDS(e) && (gi[e] = zeros_for(META(e))) == NULL) {
            return -1;
        }
    }
    return 0;
}

/* _standard_gamma: grad * _standard_gamma_grad(alpha, sample), the implicit reparameterisation
 * gradient (its own derivative is not implemented, as in PyTorch) */
CT_LOCAL(standard_gamma, FN("_standard_gamma_grad", "(OO)", x, o))
CT_UNARY_BW(standard_gamma, lg_standard_gamma, true, true)

/* --- more reductions ------------------------------------------------------------------------------------ */
/* nansum: as sum, with zeros where the input is nan */
static int bw_nansum(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    PyObject *u = KEEP(unreduce(g[0], META(0), ARG(1), arg_true(ARG(2))));
    PyObject *v = x && u ? FN("where", "(OdO)", METH(x, "isnan", NULL), 0.0, u) : NULL;
    int rc = put(n, gi, 0, v, 0);
    arena_free(arena);
    return rc;
}

/* nanmean (PyTorch's nansum / count, hence DivBackward0): g / count on the non-NaN elements; a
 * slice of nothing but NaN gets inf * 0 = NaN, as in PyTorch. */
static int bw_nanmean(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *kept = MASK(METH(METH(x, "isnan", NULL), "logical_not", NULL), x);
    PyObject *count = SUM_KEEP(kept, ARG(1));
    PyObject *gu = KEEP(unreduce(g[0], META(0), ARG(1), arg_true(ARG(2))));
    int rc = set_fit(&gi[0], TAKE(MUL(DIV(gu, count), kept)), META(0));
    arena_free(arena);
    return rc;
}

/* The gradient of a full extremum-like value (max(), median(), aminmax()) shared evenly among
 * the elements equal to it; dims/keepdim as the reduction's. New reference. */
static PyObject *evenly_shared(PyObject *grad, PyObject *x, PyObject *value, const CtTensorMeta *m, PyObject *dims,
                               bool keepdim)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *vu = KEEP(unreduce(value, m, dims, keepdim));
    /* a NaN value (median() of a tensor with NaN) is shared among the NaN elements */
    PyObject *mask = ADD(CMPF(x, vu, Py_EQ, grad), MUL(CMPF(x, x, Py_NE, grad), CMPF(vu, vu, Py_NE, grad)));
    PyObject *count = dims ? METH(mask, "sum", "(OO)", dims, keepdim ? Py_True : Py_False) : METH(mask, "sum", NULL);
    PyObject *share = KEEP(count ? unreduce(DIV(grad, count), m, dims, keepdim) : NULL);
    PyObject *r = TAKE(MUL(share, mask));
    arena_free(arena);
    return r;
}

/* median(): evenly shared among the elements equal to the median; median(dim): to the index */
static int bw_median(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (ARG(1) != NULL) {
        return bw_values_indices(n, g, gi, ARG(1), arg_true(ARG(2)));
    }
    PyObject *x = (PyObject *)ct_node_tensor(n, 0), *out = (PyObject *)ct_node_output(n, 0);
    if (x == NULL || out == NULL) {
        return -1;
    }
    return set_fit(&gi[0], evenly_shared(g[0], x, out, META(0), NULL, false), META(0));
}

/* aminmax(input, *, dim=None, keepdim=False) -> (min, max): each shared among its ties */
static int bw_aminmax(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    PyObject *dims = ARG(1);
    bool keepdim = arg_true(ARG(2));
    PyObject *total = NULL;
    int rc = -1;
    for (int k = 0; k < 2; k++) {
        if (g[k] == NULL) {
            continue;
        }
        PyObject *out = (PyObject *)ct_node_output(n, k);
        PyObject *part = x && out ? KEEP(evenly_shared(g[k], x, out, META(0), dims, keepdim)) : NULL;
        total = total ? ADD(total, part) : part;
        if (total == NULL) {
            goto done;
        }
    }
    rc = total ? put(n, gi, 0, total, 0) : 0;
done:
    arena_free(arena);
    return rc;
}

/* var_mean / std_mean -> (var or std, mean): the two gradients added */
static int bw_var_mean(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *dims = ARG(1), *unbiased = ARG(2);
    if (dims != NULL && PyBool_Check(dims)) { /* the var_mean(input, unbiased) overload */
        unbiased = dims;
        dims = NULL;
    }
    bool keepdim = arg_true(ARG(3));
    bool is_std = n->formula->op[0] == 's';
    double correction = 1.0;
    if (is_given(ARG(4))) {
        correction = PyFloat_AsDouble(ARG(4));
    } else if (unbiased != NULL) {
        correction = PyObject_IsTrue(unbiased) == 1 ? 1.0 : 0.0;
    }
    int rc = -1;
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL || PyErr_Occurred()) {
        goto done;
    }
    int64_t count = reduced_count(META(0), dims);
    if (count < 0) {
        goto done;
    }
    PyObject *total = NULL;
    if (g[0] != NULL) { /* var: 2 (x - mean) / (N - c); std: (x - mean) / ((N - c) std) */
        PyObject *mean = dims ? METH(x, "mean", "(OO)", dims, Py_True) : METH(x, "mean", NULL);
        PyObject *gx = KEEP(unreduce(g[0], META(0), dims, keepdim));
        double denom = fmax(0.0, (double)count - correction);
        if (is_std) {
            /* g / std, zero where std is zero (constant rows): computed on the gradient before it
             * meets x, so that a double backward meets the 0/0 only on the path into std itself,
             * whose own formula masks it again (as PyTorch) */
            PyObject *out = KEEP(ct_node_output_ref(n, 0)); /* differentiable under create_graph */
            PyObject *std = out ? KEEP(unreduce(out, META(0), dims, keepdim)) : NULL;
            gx = METH(DIV(gx, std), "masked_fill", "(Od)", CMP(std, NUM(0.0), Py_EQ), 0.0);
        }
        PyObject *t = MUL(MUL(gx, SUB(x, mean)), NUM((is_std ? 1.0 : 2.0) / denom));
        if ((total = t) == NULL) {
            goto done;
        }
    }
    if (n->num_outputs > 1 && g[1] != NULL) {
        PyObject *u = KEEP(unreduce(g[1], META(0), dims, keepdim));
        PyObject *part = DIV(u, NUM((double)count));
        total = total ? ADD(total, part) : part;
        if (total == NULL) {
            goto done;
        }
    }
    rc = total ? put(n, gi, 0, total, 0) : 0;
done:
    arena_free(arena);
    return rc;
}

/* sum_to_size(*size): the gradient is expanded back */
static int bw_expand_back(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *shape = shape_of(META(0));
    PyObject *v = shape ? ct_call_method(g[0], "expand", "(O)", shape) : NULL;
    Py_XDECREF(shape);
    return set_fit(&gi[0], v, META(0));
}

/* cumprod(x, dim): out_k = prod_{j<=k} x_j, so dx_i = sum_{k>=i} g_k prod_{j<=k, j!=i} x_j.
 * Before the first zero of a slice this is revcumsum(g out)_i / x_i; at the first zero it is
 * sum_{k>=z} g_k cumprod(x with that zero replaced by 1)_k; after it, zero. */
static int bw_cumprod(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (META(0)->ndim == 0) {
        return set_fit(&gi[0], Py_NewRef(g[0]), META(0));
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *dim = ARG(1);
    PyObject *dims = dim ? KEEP(PyTuple_Pack(1, dim)) : NULL;
    PyObject *x = (PyObject *)ct_node_tensor(n, 0), *out = KEEP(ct_node_output_ref(n, 0));
    PyObject *xg = x && g[0] ? METH(x, "to", "(O)", ct_dtype_object(CT_TENSOR(g[0])->dtype)) : NULL;
    if (ct_grad_enabled) {
        /* create_graph: the O(n^2) form sum_{k>=i} g_k prod_{j<=k, j!=i} x_j, differentiable also
         * where x has zeros (the fast form below is exact in value but constant after a zero) */
        long d = dim ? PyLong_AsLong(dim) : 0;
        int64_t len = META(0)->sizes[(d % META(0)->ndim + META(0)->ndim) % META(0)->ndim];
        PyObject *xt = METH(xg, "movedim", "(Oi)", dim, -1), *gt = METH(g[0], "movedim", "(Oi)", dim, -1);
        PyObject *ones = METH(xt, "new_ones", "((LL))", (long long)len, (long long)len); /* x's dtype and device */
        PyObject *upper = METH(ones, "triu", NULL);                                       /* [i, k]: k >= i */
        PyObject *diag = CMP(MUL(upper, METH(ones, "tril", NULL)), NUM(0.0), Py_NE);
        PyObject *skip_i = FN("where", "(OdO)", diag, 1.0, METH(xt, "unsqueeze", "(i)", -2)); /* [.., i, j] */
        PyObject *terms = MUL(MUL(METH(skip_i, "cumprod", "(i)", -1), METH(gt, "unsqueeze", "(i)", -2)), upper);
        PyObject *v = METH(METH(terms, "sum", "(i)", -1), "movedim", "(iO)", -1, dim);
        int rc = put(n, gi, 0, v, 0);
        arena_free(arena);
        return rc;
    }
    PyObject *is_zero = CMP(xg, NUM(0.0), Py_EQ);
    PyObject *zeros_upto = METH(is_zero, "cumsum", "(O)", dim);          /* zeros at or before k */
    PyObject *before = CMP(zeros_upto, INT(0), Py_EQ);      /* k < first zero */
    PyObject *first = MASK(CMP(zeros_upto, INT(1), Py_EQ), xg);
    first = first ? MUL(first, MASK(is_zero, xg)) : NULL;          /* the first zero itself */
    /* before the first zero */
    PyObject *rc_go = METH(METH(METH(MUL(g[0], out), "flip", "(O)", dims), "cumsum", "(O)", dim), "flip", "(O)", dims);
    PyObject *safe_x = FN("where", "(OOd)", before, xg, 1.0);
    PyObject *head = FN("where", "(OOd)", before, DIV(rc_go, safe_x), 0.0);
    /* at the first zero: the cumulative product that skips it */
    PyObject *x_skip = FN("where", "(OdO)", CMP(first, NUM(0.0), Py_GT), 1.0, xg);
    PyObject *skip_prod = METH(x_skip, "cumprod", "(O)", dim);
    PyObject *after = MASK(METH(before, "logical_not", NULL), xg);
    PyObject *at_zero = METH(MUL(MUL(g[0], skip_prod), after), "sum", "(OO)", dim, Py_True);
    PyObject *v = ADD(head, MUL(first, at_zero));
    int rc = put(n, gi, 0, v, 0);
    arena_free(arena);
    return rc;
}

/* --- more shape and indexing ops ------------------------------------------------------------------------ */
/* g written into the diagonal(offset, dim1, dim2) view of zeros of the input's shape */
static PyObject *into_diagonal(PyObject *grad, const CtTensorMeta *m, PyObject *offset, PyObject *dim1, PyObject *dim2)
{
    PyObject *z = zeros_for(m);
    if (z == NULL) {
        return NULL;
    }
    PyObject *view = ct_call_method(z, "diagonal", "(OOO)", offset, dim1, dim2);
    PyObject *r = view ? ct_call_method(view, "copy_", "(O)", grad) : NULL;
    Py_XDECREF(view);
    if (r == NULL) {
        Py_DECREF(z);
        return NULL;
    }
    Py_DECREF(r);
    return z;
}

/* diagonal(input, offset=0, dim1=0, dim2=1) */
static int bw_diagonal(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *offset = ARG(1) ? ARG(1) : INT(0), *d1 = ARG(2) ? ARG(2) : INT(0);
    PyObject *d2 = ARG(3) ? ARG(3) : INT(1);
    PyObject *v = offset && d1 && d2 ? KEEP(into_diagonal(g[0], META(0), offset, d1, d2)) : NULL;
    int rc = put(n, gi, 0, v, 0);
    arena_free(arena);
    return rc;
}

/* diag(input, diagonal=0): a vector became a matrix (take its diagonal back) or a matrix's
 * diagonal was taken (write the gradient into it) */
static int bw_diag(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *k = ARG(1) ? ARG(1) : INT(0);
    PyObject *v;
    if (META(0)->ndim == 1) {
        v = METH(g[0], "diagonal", "(O)", k);
    } else {
        v = k ? KEEP(into_diagonal(g[0], META(0), k, INT(0), INT(1))) : NULL;
    }
    int rc = put(n, gi, 0, v, 0);
    arena_free(arena);
    return rc;
}

static int bw_fliplr(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    bool ud = strcmp(n->formula->op, "flipud") == 0;
    PyObject *v = ct_call_method(g[0], "flip", "((i))", ud ? 0 : 1);
    return set_fit(&gi[0], v, META(0));
}

/* hstack/vstack/dstack/concatenate: cat of the inputs lifted to at least 1/2/3 dims; the pieces
 * of g along the cat dim are reshaped back to the inputs' shapes. */
static int bw_stack_like(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    const char *op = n->formula->op;
    PyObject *tensors = n->args[0];
    Py_ssize_t k = PySequence_Fast_GET_SIZE(tensors);
    int gnd = CT_TENSOR(g[0])->ndim;
    int dim;
    if (op[0] == 'h') {
        dim = gnd == 1 ? 0 : 1;
    } else if (op[0] == 'v') {
        dim = 0;
    } else if (op[0] == 'd') {
        dim = 2;
    } else { /* concatenate(tensors, dim=0) (axis= is its alias) */
        PyObject *d = ARG(1) ? ARG(1) : ARG(2);
        long v = d ? PyLong_AsLong(d) : 0;
        if ((v == -1 && PyErr_Occurred()) || ct_wrap_dim(v, gnd, &dim) < 0) {
            return -1;
        }
    }
    CtArena scratch = {0}, *arena = &scratch;
    int rc = -1;
    PyObject *sizes = KEEP(PyList_New(k));
    for (Py_ssize_t i = 0; sizes != NULL && i < k; i++) {
        CtTensorObject *t = CT_TENSOR(PySequence_Fast_GET_ITEM(tensors, i));
        int64_t len = 1; /* the lifted input's size along dim */
        if (op[0] == 'c' || (op[0] == 'h' && dim == 0)) {
            len = t->ndim == 0 ? 1 : t->sizes[dim];
        } else if (op[0] == 'h' || op[0] == 'v') { /* (n) lifts to (1, n) */
            len = t->ndim >= 2 ? t->sizes[dim] : (dim == 0 ? 1 : (t->ndim == 1 ? t->sizes[0] : 1));
        } else { /* dstack: (n) -> (1, n, 1), (m, n) -> (m, n, 1) */
            len = t->ndim >= 3 ? t->sizes[2] : 1;
        }
        PyList_SET_ITEM(sizes, i, PyLong_FromLongLong(len));
    }
    PyObject *pieces = sizes ? METH(g[0], "split", "(Oi)", sizes, dim) : NULL;
    if (pieces == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < k && i < n->num_edges; i++) {
        if (!NEEDS(i)) {
            continue;
        }
        PyObject *shape = ATTR(PySequence_Fast_GET_ITEM(tensors, i), "shape");
        if ((gi[i] = shape ? ct_call_method(PyTuple_GET_ITEM(pieces, i), "reshape", "(O)", shape) : NULL) == NULL) {
            goto done;
        }
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* take(input, index): accumulate g at the flat (wrapped) positions */
static int bw_take(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    int64_t numel = 1;
    for (int i = 0; i < META(0)->ndim; i++) {
        numel *= META(0)->sizes[i];
    }
    PyObject *index = (PyObject *)ct_node_tensor(n, 1);
    PyObject *flat_index = METH(METH(index, "reshape", "(i)", -1), "remainder", "(L)", (long long)(numel ? numel : 1));
    PyObject *z = METH(KEEP(zeros_for(META(0))), "reshape", "(i)", -1);
    PyObject *v = METH(z, "index_add", "(iOO)", 0, flat_index, METH(g[0], "reshape", "(i)", -1));
    PyObject *shape = KEEP(shape_of(META(0)));
    int rc = put(n, gi, 0, shape ? METH(v, "reshape", "(O)", shape) : NULL, 0);
    arena_free(arena);
    return rc;
}

/* masked_select(input, mask): g goes back to the selected positions of the broadcast shape */
static int bw_masked_select(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *mask = (PyObject *)ct_node_tensor(n, 1);
    PyObject *z = KEEP(zeros_for(META(0)));
    int rc = -1;
    PyObject *full = mask && z ? FN("where", "(OOd)", mask, z, 0.0) : NULL; /* zeros of the broadcast shape */
    PyObject *full_mask = full ? METH(mask, "expand_as", "(O)", full) : NULL;
    if (full_mask == NULL || PyObject_SetItem(full, full_mask, g[0]) < 0) {
        goto done;
    }
    rc = put(n, gi, 0, full, 0);
done:
    arena_free(arena);
    return rc;
}

/* put(input, index, source, accumulate=False): input g (zeroed at index unless accumulating),
 * source g.take(index) (every duplicate index gets it, as PyTorch). */
static int bw_put(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *index = (PyObject *)ct_node_tensor(n, 1);
    if (index == NULL) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *gs = NEEDS(0) && !arg_true(ARG(3)) ? METH(g[0], "put", "(OO)", index, KEEP(zeros_for(META(2)))) : g[0];
    int rc = put(n, gi, 0, gs, 0);
    if (rc == 0 && NEEDS(1)) {
        rc = put(n, gi, 1, METH(METH(g[0], "take", "(O)", index), "reshape", "(O)", KEEP(shape_of(META(2)))), 2);
    }
    arena_free(arena);
    return rc;
}

/* masked_scatter(input, mask, source): input g where mask is false; source the masked g in order,
 * zero-padded to source's numel. */
static int bw_masked_scatter(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *mask = (PyObject *)ct_node_tensor(n, 1);
    if (mask == NULL) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    int rc = NEEDS(0) ? put(n, gi, 0, METH(g[0], "masked_fill", "(Od)", mask, 0.0), 0) : 0;
    if (rc == 0 && NEEDS(1)) {
        int64_t numel = 1;
        for (int i = 0; i < META(2)->ndim; i++) {
            numel *= META(2)->sizes[i];
        }
        PyObject *sel = METH(g[0], "masked_select", "(O)", mask);
        int64_t got = sel ? ct_numel(CT_TENSOR(sel)) : 0;
        if (sel != NULL && got < numel) {
            sel = FN("cat", "([OO])", sel, METH(sel, "new_zeros", "(L)", (long long)(numel - got)));
        }
        rc = put(n, gi, 1, METH(sel, "reshape", "(O)", KEEP(shape_of(META(2)))), 2);
    }
    arena_free(arena);
    return rc;
}

/* index_add(input, dim, index, source, *, alpha=1) */
static int bw_index_add(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    int rc = -1;
    if (put(n, gi, 0, g[0], 0) < 0) {
        goto done;
    }
    if (n->num_edges > 1 && NEEDS(1)) {
        PyObject *index = (PyObject *)ct_node_tensor(n, 2);
        PyObject *v = index ? METH(g[0], "index_select", "(OO)", ARG(1), index) : NULL;
        if (v != NULL && META(3)->ndim == 0) {
            v = METH(v, "reshape", "(())");
        }
        if (ARG(4) != NULL) {
            v = MUL(v, ARG(4));
        }
        if (put(n, gi, 1, v, 3) < 0) {
            goto done;
        }
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* index_copy(input, dim, index, source) and index_fill(input, dim, index, value) */
static int bw_index_copy(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    int rc = -1;
    PyObject *index = (PyObject *)ct_node_tensor(n, 2);
    if (index == NULL || put(n, gi, 0, METH(g[0], "index_fill", "(OOd)", ARG(1), index, 0.0), 0) < 0) {
        goto done;
    }
    if (n->num_edges > 1 && NEEDS(1) && META(3)->is_tensor) {
        PyObject *v = METH(g[0], "index_select", "(OO)", ARG(1), index);
        if (strcmp(n->formula->op, "index_fill") == 0) {
            v = METH(v, "sum", NULL);
        } else if (v != NULL && META(3)->ndim == 0) {
            v = METH(v, "reshape", "(())");
        }
        if (put(n, gi, 1, v, 3) < 0) {
            goto done;
        }
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* index_put(input, indices, values, accumulate=False) */
static int bw_index_put(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    int rc = -1;
    PyObject *key = KEEP(PySequence_Tuple(n->args[1]));
    if (key == NULL) {
        goto done;
    }
    if (NEEDS(0)) {
        PyObject *v = g[0];
        if (!arg_true(ARG(3))) {
            v = METH(g[0], "clone", NULL);
            if (v == NULL || PyObject_SetItem(v, key, NUM(0.0)) < 0) {
                goto done;
            }
        }
        if (put(n, gi, 0, v, 0) < 0) {
            goto done;
        }
    }
    if (n->num_edges > 1 && NEEDS(1) && put(n, gi, 1, KEEP(PyObject_GetItem(g[0], key)), 2) < 0) {
        goto done;
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* scatter with reduce=: PyTorch has no derivative */
static int bw_scatter_any(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (is_given(ARG(5))) {
        return not_implemented(n);
    }
    return bw_scatter(n, g, gi);
}

/* target.scatter_reduce(dim, idx, src, reduce, include_self=include_self) through the recording op. */
static PyObject *scatter_reduce_call(CtArena *arena, PyObject *target, PyObject *dim, PyObject *idx, PyObject *src,
                                     const char *reduce, bool include_self)
{
    if (!arena_ok(arena, target, src) || !arena_ok(arena, idx, idx)) {
        return NULL;
    }
    PyObject *m = PyObject_GetAttrString(target, "scatter_reduce");
    PyObject *args = m ? Py_BuildValue("(OOOs)", dim, idx, src, reduce) : NULL;
    PyObject *kw = args ? Py_BuildValue("{sO}", "include_self", include_self ? Py_True : Py_False) : NULL;
    PyObject *r = kw ? PyObject_Call(m, args, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(args);
    Py_XDECREF(m);
    return KEEP(r);
}

/* index_reduce's vector index as scatter's: viewed along dim and expanded to source's shape. */
static PyObject *index_as_scatter(CtArena *arena, CtNodeObject *n, PyObject *index, PyObject *source)
{
    int nd = META(3)->ndim;
    long long d = PyLong_AsLongLong(ARG(1));
    if (d == -1 && PyErr_Occurred()) {
        return NULL;
    }
    d = d < 0 ? d + nd : d;
    PyObject *shape = KEEP(PyTuple_New(nd));
    for (int k = 0; shape != NULL && k < nd; k++) {
        PyTuple_SET_ITEM(shape, k, PyLong_FromLong(k == d ? -1 : 1));
    }
    return METH(METH(index, "reshape", "(O)", shape), "expand_as", "(O)", source);
}

/* scatter_reduce(input, dim, index, src, reduce, *, include_self=True) and index_reduce (its index
 * expanded to scatter's form first): PyTorch's formulas. prod divides by the values that are not
 * zero and recomputes the products where one zero is involved; amax/amin share a place's gradient
 * evenly among the values equal to its result (self's counted even when not included). */
static int bw_scatter_reduce(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    int rc = -1;
    PyObject *self = (PyObject *)ct_node_tensor(n, 0), *src = (PyObject *)ct_node_tensor(n, 3);
    PyObject *idx = (PyObject *)ct_node_tensor(n, 2), *dim = ARG(1), *gs = NULL, *gsrc = NULL;
    const char *reduce = ARG(4) != NULL ? PyUnicode_AsUTF8(ARG(4)) : NULL;
    int include_self = ARG(5) == NULL ? 1 : PyObject_IsTrue(ARG(5));
    PyObject *result = KEEP(ct_node_output_ref(n, 0));
    if (self == NULL || src == NULL || idx == NULL || reduce == NULL || include_self < 0 || result == NULL) {
        goto done;
    }
    if (strncmp(n->formula->op, "index_reduce", 12) == 0) { /* index_reduce_ too */
        idx = index_as_scatter(arena, n, idx, src);
    }
    if (strcmp(reduce, "sum") == 0) {
        gs = g[0];
        gsrc = METH(g[0], "gather", "(OO)", dim, idx);
    } else if (strcmp(reduce, "mean") == 0) {
        PyObject *count = FN(include_self ? "ones_like" : "zeros_like", "(O)", g[0]);
        count = METH(count, "scatter_add", "(OOO)", dim, idx, FN("ones_like", "(O)", src));
        count = METH(count, "masked_fill", "(Od)", CMP(count, NUM(0.0), Py_EQ), 1.0);
        gs = DIV(g[0], count);
        gsrc = DIV(METH(g[0], "gather", "(OO)", dim, idx), METH(count, "gather", "(OO)", dim, idx));
    } else if (strcmp(reduce, "prod") == 0) {
        PyObject *masked_self = METH(self, "masked_fill", "(Od)", CMP(self, NUM(0.0), Py_EQ), 1.0);
        PyObject *others = scatter_reduce_call(arena, masked_self, dim, idx, src, "prod", include_self);
        gs = DIV(MUL(g[0], others), masked_self);
        PyObject *src_zero = CMP(src, NUM(0.0), Py_EQ);
        PyObject *zeros = METH(METH(FN("zeros_like", "(O)", self), "scatter_add", "(OOO)", dim, idx, MASK(src_zero, self)),
                               "gather", "(OO)", dim, idx);
        PyObject *single = METH(src_zero, "logical_and", "(O)", CMP(zeros, NUM(1.0), Py_EQ));
        PyObject *without = scatter_reduce_call(arena, self, dim, idx, METH(src, "masked_fill", "(Od)", single, 1.0),
                                                "prod", include_self);
        gsrc = WHERE(single, METH(MUL(g[0], without), "gather", "(OO)", dim, idx),
                     DIV(METH(MUL(g[0], result), "gather", "(OO)", dim, idx),
                         METH(src, "masked_fill", "(Od)", src_zero, 1.0)));
    } else { /* amax, amin */
        PyObject *self_is = CMP(self, result, Py_EQ);
        PyObject *src_is = CMP(src, METH(result, "gather", "(OO)", dim, idx), Py_EQ);
        PyObject *ties = METH(MASK(self_is, g[0]), "scatter_add", "(OOO)", dim, idx, MASK(src_is, g[0]));
        PyObject *share = DIV(g[0], ties);
        gs = MUL(MASK(self_is, g[0]), share);
        gsrc = MUL(MASK(src_is, g[0]), METH(share, "gather", "(OO)", dim, idx));
    }
    if (!include_self) { /* the places reduced into never saw self */
        PyObject *hit = METH(FN("zeros_like", "(O)", g[0]), "scatter", "(OOd)", dim, idx, 1.0);
        gs = METH(gs, "masked_fill", "(Od)", CMP(hit, NUM(0.0), Py_NE), 0.0);
    }
    if (gs == NULL || gsrc == NULL || put(n, gi, 0, gs, 0) < 0 || (n->num_edges > 1 && put(n, gi, 1, gsrc, 3) < 0)) {
        goto done;
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* --- more linear algebra --------------------------------------------------------------------------------- */

/* addmv(input, mat, vec), baddbmm(input, batch1, batch2), addbmm(input, batch1, batch2), each
 * with *, beta=1, alpha=1: beta input + alpha (mat @ vec | b1 @ b2 | sum_b b1[b] @ b2[b]) */
static int bw_addmv(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    const char *op = n->formula->op;
    PyObject *beta = ARG(3) ? ARG(3) : NUM(1.0), *alpha = ARG(4) ? ARG(4) : NUM(1.0);
    int rc = -1;
    if (NEEDS(0) && put(n, gi, 0, MUL(g[0], beta), 0) < 0) {
        goto done;
    }
    if (NEEDS(1)) {
        PyObject *m2 = (PyObject *)ct_node_tensor(n, 2), *v;
        if (strcmp(op, "addmv") == 0) {
            v = FN("outer", "(OO)", g[0], m2);
        } else { /* addbmm: every batch got the same gradient */
            PyObject *G = strcmp(op, "addbmm") == 0 ? METH(g[0], "unsqueeze", "(i)", 0) : g[0];
            v = MATMUL(G, ATTR(m2, "mT"));
        }
        if (put(n, gi, 1, MUL(v, alpha), 1) < 0) {
            goto done;
        }
    }
    if (NEEDS(2)) {
        PyObject *m1 = (PyObject *)ct_node_tensor(n, 1);
        if (put(n, gi, 2, MUL(MATMUL(ATTR(m1, "mT"), g[0]), alpha), 2) < 0) {
            goto done;
        }
    }
    rc = 0;
done:
    arena_free(arena);
    return rc;
}

/* --- einsum ------------------------------------------------------------------------------------------------ */
/* Labels: 0-51 are the letters A-Z a-z, 52 + e is dim e of the broadcast ellipsis, and from
 * EIN_FRESH on labels made up by the backward (diagonal partners). */
#define EIN_LETTERS 52
#define EIN_FRESH (EIN_LETTERS + CT_MAX_DIMS)
#define EIN_LABELS (EIN_FRESH + CT_MAX_DIMS)
#define EIN_MAX_OPS CT_MAX_FORMULA_ARGS

typedef struct {
    int nops;
    int arg_of[EIN_MAX_OPS]; /* the call argument holding operand i */
    int ndim[EIN_MAX_OPS];
    int lab[EIN_MAX_OPS][CT_MAX_DIMS];
    int nout;
    int out[CT_MAX_DIMS];
} EinEq;

static int ein_letter(int c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return 26 + c - 'a';
    }
    return -1;
}

static int ein_bad(const char *why)
{
    PyErr_Format(PyExc_RuntimeError, "einsum backward: %s", why);
    return -1;
}

/* One term's subscripts: letters (-1 marks the ellipsis), from a string or a sublist. */
static int ein_term_str(const char *p, const char *end, int *sub, int *nsub)
{
    *nsub = 0;
    while (p < end) {
        if (*p == ' ') {
            p++;
        } else if (*p == '.') {
            if (end - p < 3 || p[1] != '.' || p[2] != '.') {
                return ein_bad("invalid ellipsis");
            }
            sub[(*nsub)++] = -1;
            p += 3;
        } else {
            int l = ein_letter(*p++);
            if (l < 0) {
                return ein_bad("invalid subscript");
            }
            sub[(*nsub)++] = l;
        }
        if (*nsub > CT_MAX_DIMS + 1) {
            return ein_bad("too many subscripts");
        }
    }
    return 0;
}

static int ein_term_list(PyObject *list, int *sub, int *nsub)
{
    PyObject *seq = PySequence_Fast(list, "einsum(): sublists must be sequences");
    if (seq == NULL) {
        return -1;
    }
    *nsub = 0;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < m && *nsub <= CT_MAX_DIMS; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(seq, i);
        long v = o == Py_Ellipsis ? -1 : PyLong_AsLong(o);
        if ((v == -1 && o != Py_Ellipsis && PyErr_Occurred()) || v < -1 || v >= EIN_LETTERS) {
            Py_DECREF(seq);
            PyErr_Clear();
            return ein_bad("invalid sublist");
        }
        sub[(*nsub)++] = (int)v;
    }
    Py_DECREF(seq);
    return *nsub > CT_MAX_DIMS ? ein_bad("too many subscripts") : 0;
}

/* Expands one operand's subscripts (ellipsis right-aligned into total_ell dims). */
static void ein_expand(const int *sub, int nsub, int ell, int total_ell, int *lab)
{
    int d = 0;
    for (int i = 0; i < nsub; i++) {
        if (sub[i] == -1) {
            for (int e = 0; e < ell; e++) {
                lab[d++] = EIN_LETTERS + total_ell - ell + e;
            }
        } else {
            lab[d++] = sub[i];
        }
    }
}

/* Parses einsum's call arguments: (equation, *operands) or (op, sublist, op, sublist, ..., [out]).
 * ndims[i] is the number of dims of argument i when it is a tensor. */
static int ein_parse(PyObject *const *a, const int *ndims, EinEq *q)
{
    int subs[EIN_MAX_OPS + 1][CT_MAX_DIMS + 2], nsubs[EIN_MAX_OPS + 1];
    bool explicit_out = false;
    memset(q, 0, sizeof(*q));
    int nargs = 0;
    while (nargs < CT_MAX_FORMULA_ARGS && a[nargs] != NULL) {
        nargs++;
    }
    if (nargs > 0 && PyUnicode_Check(a[0])) {
        Py_ssize_t len;
        const char *eq = PyUnicode_AsUTF8AndSize(a[0], &len);
        if (eq == NULL) {
            return -1;
        }
        const char *arrow = strstr(eq, "->"), *lhs_end = arrow ? arrow : eq + len, *p = eq;
        for (int i = 1; i < nargs; i++) {
            if (!CtTensor_Check(a[i])) {
                return ein_bad("operands must be tensors");
            }
            q->arg_of[q->nops++] = i;
        }
        for (int k = 0;; k++) {
            const char *comma = memchr(p, ',', lhs_end - p);
            const char *term_end = comma ? comma : lhs_end;
            if (k >= q->nops || ein_term_str(p, term_end, subs[k], &nsubs[k]) < 0) {
                return PyErr_Occurred() ? -1 : ein_bad("more subscripts than operands");
            }
            if (comma == NULL) {
                if (k + 1 != q->nops) {
                    return ein_bad("fewer subscripts than operands");
                }
                break;
            }
            p = comma + 1;
        }
        if (arrow != NULL) {
            explicit_out = true;
            if (ein_term_str(arrow + 2, eq + len, subs[EIN_MAX_OPS], &nsubs[EIN_MAX_OPS]) < 0) {
                return -1;
            }
        }
    } else {
        int i = 0;
        for (; i + 1 < nargs; i += 2) {
            if (!CtTensor_Check(a[i]) || ein_term_list(a[i + 1], subs[q->nops], &nsubs[q->nops]) < 0) {
                return PyErr_Occurred() ? -1 : ein_bad("expected tensor, sublist pairs");
            }
            q->arg_of[q->nops++] = i;
        }
        if (i < nargs) {
            explicit_out = true;
            if (ein_term_list(a[i], subs[EIN_MAX_OPS], &nsubs[EIN_MAX_OPS]) < 0) {
                return -1;
            }
        }
    }
    /* the ellipsis width */
    int total_ell = 0, ell[EIN_MAX_OPS];
    for (int k = 0; k < q->nops; k++) {
        int letters = 0;
        bool has_ell = false;
        for (int i = 0; i < nsubs[k]; i++) {
            has_ell |= subs[k][i] == -1;
            letters += subs[k][i] != -1;
        }
        q->ndim[k] = ndims[q->arg_of[k]];
        ell[k] = has_ell ? q->ndim[k] - letters : 0;
        if (ell[k] < 0 || (!has_ell && letters != q->ndim[k])) {
            return ein_bad("subscripts do not match the operand's dims");
        }
        total_ell = ell[k] > total_ell ? ell[k] : total_ell;
    }
    for (int k = 0; k < q->nops; k++) {
        ein_expand(subs[k], nsubs[k], ell[k], total_ell, q->lab[k]);
    }
    if (explicit_out) {
        int n_out = 0;
        for (int i = 0; i < nsubs[EIN_MAX_OPS]; i++) {
            n_out += subs[EIN_MAX_OPS][i] == -1 ? total_ell : 1;
        }
        if (n_out > CT_MAX_DIMS) {
            return ein_bad("too many output dims");
        }
        ein_expand(subs[EIN_MAX_OPS], nsubs[EIN_MAX_OPS], total_ell, total_ell, q->out);
        q->nout = n_out;
    } else { /* the ellipsis dims, then the letters used exactly once, in order */
        int count[EIN_LETTERS] = {0};
        for (int k = 0; k < q->nops; k++) {
            for (int d = 0; d < q->ndim[k]; d++) {
                if (q->lab[k][d] < EIN_LETTERS) {
                    count[q->lab[k][d]]++;
                }
            }
        }
        for (int e = 0; e < total_ell; e++) {
            q->out[q->nout++] = EIN_LETTERS + e;
        }
        for (int l = 0; l < EIN_LETTERS && q->nout < CT_MAX_DIMS; l++) {
            if (count[l] == 1) {
                q->out[q->nout++] = l;
            }
        }
    }
    return 0;
}

static bool ein_has(const int *labels, int n, int l)
{
    for (int i = 0; i < n; i++) {
        if (labels[i] == l) {
            return true;
        }
    }
    return false;
}

/* The gradient of operand k: an einsum of g with the other operands, producing k's subscripts.
 * A repeated subscript of k (a diagonal) gets a fresh partner label tied to it by an identity
 * matrix; a subscript found nowhere else (summed out) comes from a vector of ones. */
static int ein_grad(CtNodeObject *n, const EinEq *q, int k, PyObject *grad, PyObject **result)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *terms[3 * CT_MAX_DIMS + EIN_MAX_OPS + 2];
    int tlab[3 * CT_MAX_DIMS + EIN_MAX_OPS + 2][CT_MAX_DIMS], tn[3 * CT_MAX_DIMS + EIN_MAX_OPS + 2];
    int nterms = 0, target[CT_MAX_DIMS];
    int rc = -1;
    const CtTensorMeta *mk = META(q->arg_of[k]);
    terms[nterms] = grad;
    memcpy(tlab[nterms], q->out, sizeof(int) * q->nout);
    tn[nterms++] = q->nout;
    for (int j = 0; j < q->nops; j++) {
        if (j == k) {
            continue;
        }
        if ((terms[nterms] = (PyObject *)ct_node_tensor(n, q->arg_of[j])) == NULL) {
            goto done;
        }
        memcpy(tlab[nterms], q->lab[j], sizeof(int) * q->ndim[j]);
        tn[nterms++] = q->ndim[j];
    }
    int fresh = EIN_FRESH;
    for (int d = 0; d < q->ndim[k]; d++) {
        int l = q->lab[k][d];
        target[d] = l;
        if (ein_has(q->lab[k], d, l)) { /* repeated: a fresh label on the diagonal of an identity */
            target[d] = fresh;
            terms[nterms] = METH(METH(grad, "new_ones", "(L)", (long long)mk->sizes[d]), "diag", NULL);
            tlab[nterms][0] = l;
            tlab[nterms][1] = fresh++;
            tn[nterms++] = 2;
            if (terms[nterms - 1] == NULL) {
                goto done;
            }
            continue;
        }
        bool elsewhere = ein_has(q->out, q->nout, l);
        for (int j = 0; j < q->nops && !elsewhere; j++) {
            elsewhere = j != k && ein_has(q->lab[j], q->ndim[j], l);
        }
        for (int d2 = d + 1; d2 < q->ndim[k] && !elsewhere; d2++) {
            elsewhere = q->lab[k][d2] == l; /* its identity matrix carries it */
        }
        if (!elsewhere) {
            terms[nterms] = METH(grad, "new_ones", "(L)", (long long)mk->sizes[d]);
            tlab[nterms][0] = l;
            tn[nterms++] = 1;
            if (terms[nterms - 1] == NULL) {
                goto done;
            }
        }
    }
    /* letters: the equation's own, then unused ones for the ellipsis and fresh labels */
    char letter[EIN_LABELS];
    bool used[EIN_LETTERS] = {false};
    memset(letter, 0, sizeof(letter));
    for (int t = 0; t < nterms; t++) {
        for (int i = 0; i < tn[t]; i++) {
            if (tlab[t][i] < EIN_LETTERS) {
                used[tlab[t][i]] = true;
                letter[tlab[t][i]] = (char)(tlab[t][i] < 26 ? 'A' + tlab[t][i] : 'a' + tlab[t][i] - 26);
            }
        }
    }
    int next = 0;
    char spec[4 * (3 * CT_MAX_DIMS + EIN_MAX_OPS + 2) * (CT_MAX_DIMS + 1)];
    size_t len = 0;
    for (int t = 0; t <= nterms; t++) {
        const int *labels = t < nterms ? tlab[t] : target;
        int count = t < nterms ? tn[t] : q->ndim[k];
        if (t > 0) {
            if (t < nterms) {
                spec[len++] = ',';
            } else {
                spec[len++] = '-';
                spec[len++] = '>';
            }
        }
        for (int i = 0; i < count; i++) {
            int l = labels[i];
            if (letter[l] == 0) {
                while (next < EIN_LETTERS && used[next]) {
                    next++;
                }
                if (next == EIN_LETTERS) {
                    PyErr_SetString(PyExc_RuntimeError, "einsum backward: more than 52 distinct subscripts");
                    goto done;
                }
                used[next] = true;
                letter[l] = (char)(next < 26 ? 'A' + next : 'a' + next - 26);
            }
            spec[len++] = letter[l];
        }
    }
    spec[len] = '\0';
    PyObject *args[3 * CT_MAX_DIMS + EIN_MAX_OPS + 3];
    args[0] = KEEP(PyUnicode_FromString(spec));
    if (args[0] == NULL) {
        goto done;
    }
    for (int t = 0; t < nterms; t++) {
        args[t + 1] = terms[t];
    }
    *result = ct_op("einsum", args, (size_t)nterms + 1, NULL);
    rc = *result == NULL ? -1 : 0;
done:
    arena_free(arena);
    return rc;
}

static int bw_einsum(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    int ndims[CT_MAX_FORMULA_ARGS] = {0};
    PyObject *a[CT_MAX_FORMULA_ARGS] = {NULL};
    for (int i = 0; i < n->nargs; i++) {
        if (n->meta[i].is_tensor && ct_node_tensor(n, i) == NULL) { /* freed or modified */
            return -1;
        }
        ndims[i] = n->meta[i].is_tensor ? n->meta[i].ndim : 0;
        a[i] = n->args[i];
    }
    EinEq q;
    if (ein_parse(a, ndims, &q) < 0) {
        return -1;
    }
    for (int k = 0; k < q.nops; k++) {
        int e = q.arg_of[k];
        if (!NEEDS(e)) {
            continue;
        }
        PyObject *v = NULL;
        if (ein_grad(n, &q, k, g[0], &v) < 0 || set_fit(&gi[e], v, META(e)) < 0) {
            return -1;
        }
    }
    return 0;
}

/* --- node names that depend on the call (PyTorch's overloads) -------------------------------------------- */
static const char *name_sum(PyObject *const *a) { return is_given(a[1]) ? "SumBackward1" : "SumBackward0"; }
static const char *name_mean(PyObject *const *a) { return is_given(a[1]) ? "MeanBackward1" : "MeanBackward0"; }
static const char *name_prod(PyObject *const *a) { return is_given(a[1]) ? "ProdBackward1" : "ProdBackward0"; }
static const char *name_median(PyObject *const *a) { return is_given(a[1]) ? "MedianBackward1" : "MedianBackward0"; }
static const char *name_nanmedian(PyObject *const *a)
{
    return is_given(a[1]) ? "NanmedianBackward1" : "NanmedianBackward0";
}
static const char *name_max(PyObject *const *a)
{
    return is_tensor(a[1]) ? "MaximumBackward0" : is_given(a[1]) ? "MaxBackward0" : "MaxBackward1";
}
static const char *name_min(PyObject *const *a)
{
    return is_tensor(a[1]) ? "MinimumBackward0" : is_given(a[1]) ? "MinBackward0" : "MinBackward1";
}
/* tensor ** number, tensor ** tensor, number ** tensor (the reflected slot passes the number first) */
static const char *name_pow(PyObject *const *a)
{
    return !is_tensor(a[0]) ? "PowBackward2" : is_tensor(a[1]) ? "PowBackward1" : "PowBackward0";
}
static const char *name_lerp(PyObject *const *a) { return is_tensor(a[2]) ? "LerpBackward1" : "LerpBackward0"; }
static const char *name_scatter(PyObject *const *a)
{
    return is_given(a[5]) ? "torch::autograd::NotImplemented" : is_tensor(a[3]) ? "ScatterBackward0" : "ScatterBackward1";
}
static const char *name_clamp(PyObject *const *a)
{
    return is_tensor(a[1]) || is_tensor(a[2]) ? "ClampBackward0" : "ClampBackward1";
}
static const char *name_clamp_min(PyObject *const *a) { return is_tensor(a[1]) ? "ClampMinBackward1" : "ClampMinBackward0"; }
static const char *name_clamp_max(PyObject *const *a) { return is_tensor(a[1]) ? "ClampMaxBackward1" : "ClampMaxBackward0"; }
static const char *name_masked_fill(PyObject *const *a)
{
    return is_tensor(a[2]) ? "MaskedFillBackward1" : "MaskedFillBackward0";
}
/* PyTorch's l1_loss is composite: (input - target).abs(), then mean / sum by the reduction */
static const char *name_l1_loss(PyObject *const *a)
{
    long r = a[4] != NULL && PyLong_Check(a[4]) ? PyLong_AsLong(a[4]) : 1;
    PyErr_Clear();
    return r == 0 ? "AbsBackward0" : r == 2 ? "SumBackward0" : "MeanBackward0";
}
/* nll_loss / cross_entropy over (N, C, d1, ...): PyTorch's 2-d kernel (on the input viewed as 4-d,
 * an unreduced loss viewed back when it was not 4-d) */
static const char *name_nll_loss(PyObject *const *a)
{
    int nd = is_tensor(a[0]) ? CT_TENSOR(a[0])->ndim : 2;
    long r = a[3] != NULL && PyLong_Check(a[3]) ? PyLong_AsLong(a[3]) : 1;
    PyErr_Clear();
    return nd <= 2 ? "NllLossBackward0" : r == 0 && nd != 4 ? "ViewBackward0" : "NllLoss2DBackward0";
}
static const char *name_index_fill(PyObject *const *a) { return is_tensor(a[3]) ? "IndexFillBackward1" : "IndexFillBackward0"; }
static const char *name_round(PyObject *const *a) { return is_given(a[1]) ? "RoundBackward1" : "RoundBackward0"; }
/* 2 / x is computed as 2 * x.reciprocal() by PyTorch; a rounding mode is another overload.
 * A name_for function reads only the arguments its formula's signature names. */
static const char *name_div(PyObject *const *a)
{
    return !is_tensor(a[0]) ? "MulBackward0" : is_given(a[2]) ? "DivBackward2" : "DivBackward0";
}
static const char *name_true_divide(PyObject *const *a) { return is_tensor(a[0]) ? "DivBackward0" : "MulBackward0"; }
static const char *name_sub(PyObject *const *a) { return is_tensor(a[0]) ? "SubBackward0" : "RsubBackward1"; }
static const char *name_rsub(PyObject *const *a) { return is_tensor(a[1]) ? "RsubBackward0" : "RsubBackward1"; }
static const char *name_squeeze(PyObject *const *a)
{
    return !is_given(a[1]) ? "SqueezeBackward0" : PyLong_Check(a[1]) ? "SqueezeBackward1" : "SqueezeBackward2";
}
static const char *name_squeeze_(PyObject *const *a) { return is_given(a[1]) ? "SqueezeBackward4" : "SqueezeBackward3"; }
static const char *name_split(PyObject *const *a)
{
    return PyList_Check(a[1]) || PyTuple_Check(a[1]) ? "SplitWithSizesBackward0" : "SplitBackward0";
}
static const char *name_remainder(PyObject *const *a)
{
    return !is_tensor(a[0]) ? "torch::autograd::NotImplemented" : is_tensor(a[1]) ? "RemainderBackward1" : "RemainderBackward0";
}
static const char *name_fmod(PyObject *const *a) { return is_tensor(a[1]) ? "FmodBackward1" : "FmodBackward0"; }
static const char *name_copysign(PyObject *const *a) { return is_tensor(a[1]) ? "CopysignBackward0" : "CopysignBackward1"; }
static const char *name_diag(PyObject *const *a)
{
    return is_tensor(a[0]) && CT_TENSOR(a[0])->ndim == 1 ? "DiagEmbedBackward0" : "DiagonalBackward0_copy";
}
static const char *name_normal(PyObject *const *a)
{
    bool mean = is_tensor(a[0]), std = is_tensor(a[1]);
    return mean && std ? "NormalBackward3" : mean ? "NormalBackward1" : "NormalBackward2";
}

/* matmul: PyTorch dispatches on the ranks to dot/mv/mm, folds batched operands into one mm
 * (its result is an _unsafe_view) or runs bmm; a matrix times a batch is computed transposed
 * and copied back when the matrix requires grad. */
static const char *name_matmul(PyObject *const *a)
{
    if (!is_tensor(a[0]) || !is_tensor(a[1])) {
        return "MmBackward0";
    }
    CtTensorObject *x = CT_TENSOR(a[0]), *y = CT_TENSOR(a[1]);
    int d1 = x->ndim, d2 = y->ndim;
    if (d1 == 1 && d2 == 1) {
        return "DotBackward0";
    }
    if (d1 == 2 && d2 == 1) {
        return "MvBackward0";
    }
    if (d1 == 1 && d2 == 2) {
        return "SqueezeBackward4";
    }
    if (d1 == 2 && d2 == 2) {
        return "MmBackward0";
    }
    bool x_grad = x->requires_grad || x->grad_fn != NULL;
    if (x_grad && d2 >= 3 && (d1 == 2 || (d1 == 3 && d2 == 3 && x->sizes[0] == 1 && y->sizes[0] > 1))) {
        return "CloneBackward0";
    }
    return "UnsafeViewBackward0";
}

/* reshape/flatten/reshape_as: a view of a contiguous input, an alias of a viewable one, else a copy */
static const char *reshape_kind(CtTensorObject *t, int nd, int64_t *sizes)
{
    int64_t known = 1, numel = ct_numel(t);
    int infer = -1;
    for (int i = 0; i < nd; i++) {
        if (sizes[i] == -1) {
            infer = i;
        } else {
            known *= sizes[i];
        }
    }
    if (infer >= 0) {
        sizes[infer] = known ? numel / known : 0;
    }
    if (ct_is_contiguous(t)) {
        return "ViewBackward0";
    }
    return ct_can_view(t, nd, sizes) ? "ReshapeAliasBackward0" : "UnsafeViewBackward0";
}

static const char *name_reshape(PyObject *const *a)
{
    int64_t sizes[CT_MAX_DIMS];
    Py_ssize_t k = 1;
    while (k < CT_MAX_FORMULA_ARGS && a[k] != NULL) {
        k++;
    }
    int nd = is_tensor(a[0]) ? ct_parse_sizes(a + 1, k - 1, sizes, true) : -1;
    if (nd < 0) {
        PyErr_Clear(); /* the op reports it */
        return "ViewBackward0";
    }
    return reshape_kind(CT_TENSOR(a[0]), nd, sizes);
}

static const char *name_reshape_as(PyObject *const *a)
{
    if (!is_tensor(a[0]) || !is_tensor(a[1])) {
        return "ViewBackward0";
    }
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, CT_TENSOR(a[1])->sizes, sizeof(int64_t) * CT_TENSOR(a[1])->ndim);
    return reshape_kind(CT_TENSOR(a[0]), CT_TENSOR(a[1])->ndim, sizes);
}

static const char *name_flatten(PyObject *const *a)
{
    if (!is_tensor(a[0])) {
        return "ViewBackward0";
    }
    CtTensorObject *t = CT_TENSOR(a[0]);
    long s = is_given(a[1]) ? PyLong_AsLong(a[1]) : 0, e = is_given(a[2]) ? PyLong_AsLong(a[2]) : -1;
    int start, end;
    if (PyErr_Occurred() || t->ndim == 0 || ct_wrap_dim(s, t->ndim, &start) < 0 || ct_wrap_dim(e, t->ndim, &end) < 0 ||
        start >= end) {
        PyErr_Clear();
        return "ViewBackward0";
    }
    int64_t sizes[CT_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (i <= start || i > end) {
            sizes[nd++] = t->sizes[i];
        } else {
            sizes[nd - 1] *= t->sizes[i];
        }
    }
    return reshape_kind(t, nd, sizes);
}

/* x[key]: PyTorch applies a basic key's items left to right as views (skipping whole-dim slices
 * inside a tuple) and names the node after the last one; an advanced or boolean key indexes. */
static bool key_is_index_tensor(PyObject *o)
{
    return CtTensor_Check(o) && CT_TENSOR(o)->ndim == 0 && CT_TENSOR(o)->dtype != CT_BOOL;
}

static const char *name_getitem(PyObject *const *a)
{
    PyObject *key = a[1];
    if (!is_tensor(a[0]) || key == NULL) {
        return "IndexBackward0";
    }
    if (PySlice_Check(key)) {
        return "SliceBackward0";
    }
    if (!PyTuple_Check(key)) {
        if (PyLong_Check(key) && !PyBool_Check(key)) {
            return "SelectBackward0";
        }
        if (key_is_index_tensor(key)) {
            return "SelectBackward0";
        }
        return key == Py_None ? "UnsqueezeBackward0" : key == Py_Ellipsis ? "AliasBackward0" : "IndexBackward0";
    }
    CtTensorObject *t = CT_TENSOR(a[0]);
    Py_ssize_t m = PyTuple_GET_SIZE(key);
    int consumed = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *k = PyTuple_GET_ITEM(key, i);
        if (PyBool_Check(k) || !(PyLong_Check(k) || PySlice_Check(k) || k == Py_None || k == Py_Ellipsis ||
                                 key_is_index_tensor(k))) {
            return "IndexBackward0";
        }
        consumed += k != Py_None && k != Py_Ellipsis;
    }
    const char *last = "AliasBackward0";
    int dim = 0; /* the input dim the next item applies to */
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *k = PyTuple_GET_ITEM(key, i);
        if (k == Py_None) {
            last = "UnsqueezeBackward0";
        } else if (k == Py_Ellipsis) {
            dim += t->ndim - consumed;
        } else if (PySlice_Check(k)) {
            Py_ssize_t start, stop, step;
            Py_ssize_t len = dim < t->ndim ? (Py_ssize_t)t->sizes[dim] : 0;
            if (PySlice_Unpack(k, &start, &stop, &step) < 0) {
                PyErr_Clear();
                return "SliceBackward0";
            }
            PySlice_AdjustIndices(len, &start, &stop, step);
            if (!(start == 0 && stop == len && step == 1)) {
                last = "SliceBackward0";
            }
            dim++;
        } else {
            last = "SelectBackward0";
            dim++;
        }
    }
    return last;
}

/* einsum: PyTorch's result comes from its last step: one operand is summed (Sum) or only
 * permuted (a diagonal view and Permute); with several, the last pair is multiplied (Mul) or,
 * when it contracts a subscript, multiplied by bmm and viewed back (View). */
static const char *name_einsum(PyObject *const *a)
{
    int ndims[CT_MAX_FORMULA_ARGS] = {0};
    for (int i = 0; i < CT_MAX_FORMULA_ARGS && a[i] != NULL; i++) {
        ndims[i] = is_tensor(a[i]) ? CT_TENSOR(a[i])->ndim : 0;
    }
    EinEq q;
    if (ein_parse(a, ndims, &q) < 0 || q.nops == 0) {
        PyErr_Clear(); /* the op reports it */
        return "ViewBackward0";
    }
    if (q.nops == 1) {
        for (int d = 0; d < q.ndim[0]; d++) {
            if (!ein_has(q.out, q.nout, q.lab[0][d])) {
                return "SumBackward1";
            }
        }
        return "PermuteBackward0";
    }
    int last = q.nops - 1;
    for (int d = 0; d < q.ndim[last]; d++) {
        int l = q.lab[last][d];
        if (ein_has(q.out, q.nout, l)) {
            continue;
        }
        for (int j = 0; j < last; j++) {
            if (ein_has(q.lab[j], q.ndim[j], l)) {
                return "ViewBackward0";
            }
        }
    }
    return "MulBackward0";
}

/* --- search family (ops_search.c): not differentiable. histc records nothing (its row has no
 * differentiable argument); unique and bincount record a node whose backward raises PyTorch's
 * error. */
static int bw_unique(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    bool consecutive = strcmp(n->formula->op, "unique_consecutive") == 0;
    PyErr_Format(PyExc_NotImplementedError, "the derivative for '%s' is not implemented.",
                 consecutive ? "unique_consecutive" : is_given(n->args[4]) ? "unique_dim" : "_unique2");
    return -1;
}

static const char *name_unique(PyObject *const *a) { return is_given(a[4]) ? "UniqueDimBackward0" : "Unique2Backward0"; }

static int bw_bincount(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyErr_SetString(PyExc_RuntimeError, "derivative for aten::bincount is not implemented");
    return -1;
}

/* geqrf and the LDL ops (linalg_lu.c, linalg_ldl.c) have no derivative in PyTorch, which raises at
 * backward: geqrf in its formula's words, the LDL ops (ldl_factor is ldl_factor_ex there) as
 * nodes without a formula. */
static int bw_linalg_no_derivative(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    const char *op = n->formula->op;
    if (strcmp(op, "geqrf") == 0) {
        PyErr_SetString(PyExc_NotImplementedError, "the derivative for 'geqrf' is not implemented.");
    } else {
        PyErr_Format(PyExc_RuntimeError, "derivative for aten::%s%s is not implemented", op + 1,
                     strcmp(op, "_linalg_ldl_factor") == 0 ? "_ex" : "");
    }
    return -1;
}

/* --- special functions (scalar_math.h's erfinv, lgamma, digamma, polygamma, i0, sinc, logit, xlogy,
 * deg2rad / rad2deg) ------------------------------------------------------------------------------------ */
CT_LOCAL(erfinv, MUL(METH(MUL(o, o), "exp", NULL), NUM(0.88622692545275801365))) /* sqrt(pi)/2 e^(o^2) */
CT_LOCAL(lgamma, METH(x, "digamma", NULL))
CT_LOCAL(digamma, FN("polygamma", "(iO)", 1, x))
CT_LOCAL(i0, FN("special_i1", "(O)", x)) /* recorded, so a double backward sees i1's derivative */
CT_LOCAL(deg2rad, NUM(M_PI / 180.0))
CT_LOCAL(rad2deg, NUM(180.0 / M_PI))
static PyObject *lg_sinc(CtArena *arena, PyObject *x, PyObject *o) /* (cos(pi x) pi x - sin(pi x)) / (pi x^2), 0 at 0 */
{
    PyObject *px = MUL(x, NUM(M_PI));
    PyObject *d = DIV(SUB(MUL(METH(px, "cos", NULL), px), METH(px, "sin", NULL)), MUL(px, x));
    return WHERE(CMP(x, NUM(0.0), Py_EQ), NUM(0.0), d);
}
CT_UNARY_BW(erfinv, lg_erfinv, false, true)
CT_UNARY_BW(lgamma, lg_lgamma, true, false)
CT_UNARY_BW(digamma, lg_digamma, true, false)
CT_UNARY_BW(i0, lg_i0, true, false)
CT_UNARY_BW(deg2rad, lg_deg2rad, false, false)
CT_UNARY_BW(rad2deg, lg_rad2deg, false, false)
CT_UNARY_BW(sinc, lg_sinc, true, false)

/* polygamma(n, input) (x is argument 1) / Tensor.polygamma(n) and polygamma_ (x is argument 0): g psi^(n+1)(x) */
static int bw_polygamma(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    int at = strcmp(n->formula->op, "polygamma") == 0 ? 1 : 0;
    PyObject *x = (PyObject *)ct_node_tensor(n, at);
    long long order = PyLong_AsLongLong(n->args[1 - at]);
    if (x == NULL || (order == -1 && PyErr_Occurred())) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    int rc = set_fit(&gi[0], TAKE(MUL(g[0], FN("polygamma", "(LO)", order + 1, x))), META(at));
    arena_free(arena);
    return rc;
}

/* logit(x, eps): g / (x (1 - x)), zero outside [eps, 1 - eps] when eps is given */
static int bw_logit(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = DIV(g[0], MUL(x, SUB(NUM(1.0), x)));
    if (ARG(1) != NULL) {
        double eps = PyFloat_AsDouble(ARG(1));
        PyObject *outside = FN("logical_or", "(OO)", CMP(x, NUM(eps), Py_LT), CMP(x, NUM(1.0 - eps), Py_GT));
        r = arena->failed || PyErr_Occurred() ? NULL : WHERE(outside, NUM(0.0), r);
    }
    int rc = set_fit(&gi[0], TAKE(r), META(0));
    arena_free(arena);
    return rc;
}

/* xlogy(x, y): dx = g xlogy(x != 0, y), dy = g x / y; special_xlog1py(x, y): dx = g log1p(y) (0 where
 * x == 0 and y <= -1, as PyTorch masks it), dy = g x / (1 + y). Either argument may be a number. */
static int xlog_family_bw(CtNodeObject *n, PyObject *const *g, PyObject **gi, bool one_plus)
{
    PyObject *x = META(0)->is_tensor ? (PyObject *)ct_node_tensor(n, 0) : n->args[0];
    PyObject *y = META(1)->is_tensor ? (PyObject *)ct_node_tensor(n, 1) : n->args[1];
    if (x == NULL || y == NULL) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    int rc = 0;
    if (META(0)->is_tensor && NEEDS(0)) {
        PyObject *dx;
        if (one_plus) {
            PyObject *masked = FN("logical_and", "(OO)", CMP(x, NUM(0.0), Py_EQ), CMP(y, NUM(-1.0), Py_LE));
            dx = WHERE(masked, NUM(0.0), FN("special_xlog1py", "(OO)", g[0], y));
        } else {
            dx = MUL(g[0], FN("xlogy", "(OO)", CMPF(x, NUM(0.0), Py_NE, g[0]), y));
        }
        rc = set_fit(&gi[0], TAKE(dx), META(0));
    }
    if (rc == 0 && META(1)->is_tensor && NEEDS(1)) {
        rc = set_fit(&gi[1], TAKE(DIV(MUL(g[0], x), one_plus ? ADD(y, NUM(1.0)) : y)), META(1));
    }
    arena_free(arena);
    return rc;
}
static int bw_xlogy(CtNodeObject *n, PyObject *const *g, PyObject **gi) { return xlog_family_bw(n, g, gi, false); }
static int bw_xlog1py(CtNodeObject *n, PyObject *const *g, PyObject **gi) { return xlog_family_bw(n, g, gi, true); }
static const char *name_xlog1py(PyObject *const *a)
{
    return !is_tensor(a[0]) ? "SpecialXlog1PyBackward1" : !is_tensor(a[1]) ? "SpecialXlog1PyBackward2"
                                                                            : "SpecialXlog1PyBackward0";
}
/* special_i1(x): g (i0(x) - i1(x) / x), 1/2 at 0 */
static PyObject *lg_i1(CtArena *arena, PyObject *x, PyObject *o)
{
    PyObject *d = SUB(METH(x, "i0", NULL), DIV(o, x));
    return WHERE(CMP(x, NUM(0.0), Py_EQ), NUM(0.5), d);
}
CT_UNARY_BW(special_i1, lg_i1, true, true)
/* special_entr(x): g (-(1 + ln x)) */
CT_LOCAL(entr, NEG(ADD(METH(x, "log", NULL), NUM(1.0))))
CT_UNARY_BW(entr, lg_entr, true, false)
/* --- more of torch.special (csrc/special_math.h): PyTorch's formulas ----------------------------------- */
#define SP1(name, arg) FN("special_" name, "(O)", (arg))
/* erfcx: 2 x erfcx(x) - 2 / sqrt(pi) */
CT_LOCAL(erfcx, SUB(MUL(MUL(x, o), NUM(2.0)), NUM(1.12837916709551257390)))
/* log_ndtr: e^(-x^2/2) / (sqrt(2 pi) ndtr(x)) = sqrt(2 / pi) / erfcx(-x / sqrt 2), finite for every x */
CT_LOCAL(log_ndtr, DIV(NUM(0.79788456080286535588), SP1("erfcx", MUL(x, NUM(-M_SQRT1_2)))))
/* ndtri: sqrt(2 pi) e^(ndtri(p)^2 / 2) */
CT_LOCAL(ndtri, MUL(METH(MUL(MUL(o, o), NUM(0.5)), "exp", NULL), NUM(2.50662827463100050242)))
/* i0e: i1e(x) - sign(x) i0e(x) */
CT_LOCAL(i0e, SUB(SP1("i1e", x), MUL(METH(x, "sign", NULL), o)))
/* f(x) - o / x, or 1/2 at 0 (i1e: f(x) - o (sign(x) + 1 / x)); the orders-1 functions' derivative */
static PyObject *order1_derivative(CtArena *arena, PyObject *x, PyObject *o, PyObject *f, bool at0, bool scaled)
{
    PyObject *r = METH(x, "reciprocal", NULL);
    PyObject *d = SUB(f, MUL(o, scaled ? ADD(METH(x, "sign", NULL), r) : r));
    return at0 ? WHERE(CMP(x, NUM(0.0), Py_EQ), NUM(0.5), d) : d;
}
CT_LOCAL(i1e, order1_derivative(arena, x, o, SP1("i0e", x), true, true))
CT_LOCAL(bessel_j0, NEG(SP1("bessel_j1", x)))
CT_LOCAL(bessel_j1, order1_derivative(arena, x, o, SP1("bessel_j0", x), true, false))
CT_LOCAL(bessel_y0, NEG(SP1("bessel_y1", x)))
CT_LOCAL(bessel_y1, order1_derivative(arena, x, o, SP1("bessel_y0", x), false, false))
CT_LOCAL(modified_bessel_i0, SP1("modified_bessel_i1", x))
CT_LOCAL(modified_bessel_i1, order1_derivative(arena, x, o, SP1("modified_bessel_i0", x), true, false))
CT_LOCAL(modified_bessel_k0, NEG(SP1("modified_bessel_k1", x)))
CT_LOCAL(modified_bessel_k1, order1_derivative(arena, x, o, NEG(SP1("modified_bessel_k0", x)), false, false))
#undef SP1
CT_UNARY_BW(special_erfcx, lg_erfcx, true, true)
CT_UNARY_BW(special_log_ndtr, lg_log_ndtr, true, false)
CT_UNARY_BW(special_ndtri, lg_ndtri, false, true)
CT_UNARY_BW(special_i0e, lg_i0e, true, true)
CT_UNARY_BW(special_i1e, lg_i1e, true, true)
CT_UNARY_BW(special_bessel_j0, lg_bessel_j0, true, false)
CT_UNARY_BW(special_bessel_j1, lg_bessel_j1, true, true)
CT_UNARY_BW(special_bessel_y0, lg_bessel_y0, true, false)
CT_UNARY_BW(special_bessel_y1, lg_bessel_y1, true, true)
CT_UNARY_BW(special_modified_bessel_i0, lg_modified_bessel_i0, true, false)
CT_UNARY_BW(special_modified_bessel_i1, lg_modified_bessel_i1, true, true)
CT_UNARY_BW(special_modified_bessel_k0, lg_modified_bessel_k0, true, false)
CT_UNARY_BW(special_modified_bessel_k1, lg_modified_bessel_k1, true, true)

/* zeta(x, q), igamma(a, x), igammac(a, x): differentiable in the second argument only (the first raises
 * PyTorch's error when it needs a gradient): zeta: -x zeta(x + 1, q); igamma: x^(a-1) e^-x / Gamma(a),
 * igammac: its negative. The first argument of zeta may be a number. */
static int bw_second_only(CtNodeObject *n, PyObject *const *g, PyObject **gi, const char *what)
{
    if (NEEDS(0) && META(0)->is_tensor) {
        PyErr_Format(PyExc_NotImplementedError, "the derivative for '%s' is not implemented.", what);
        return -1;
    }
    if (!(META(1)->is_tensor && NEEDS(1))) {
        return 0;
    }
    PyObject *a = META(0)->is_tensor ? (PyObject *)ct_node_tensor(n, 0) : n->args[0];
    PyObject *x = (PyObject *)ct_node_tensor(n, 1);
    if (a == NULL || x == NULL) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *d;
    if (what[0] == 'z') {
        d = NEG(MUL(a, FN("special_zeta", "(OO)", ADD(a, NUM(1.0)), x)));
    } else {
        PyObject *lg = SUB(SUB(MUL(SUB(a, NUM(1.0)), METH(x, "log", NULL)), x), METH(a, "lgamma", NULL));
        d = METH(lg, "exp", NULL);
        d = what[6] == 'c' ? NEG(d) : d;
    }
    int rc = set_fit(&gi[1], TAKE(MUL(g[0], d)), META(1));
    arena_free(arena);
    return rc;
}
static int bw_zeta(CtNodeObject *n, PyObject *const *g, PyObject **gi) { return bw_second_only(n, g, gi, "zeta"); }
static int bw_igamma(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return bw_second_only(n, g, gi, "igamma: input");
}
static int bw_igammac(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    return bw_second_only(n, g, gi, "igammac: input");
}
static const char *name_zeta(PyObject *const *a)
{
    return !is_tensor(a[0]) ? "SpecialZetaBackward1" : !is_tensor(a[1]) ? "SpecialZetaBackward2" : "SpecialZetaBackward0";
}

static const char *name_xlogy(PyObject *const *a)
{
    return !is_tensor(a[0]) ? "XlogyBackward1" : !is_tensor(a[1]) ? "XlogyBackward2" : "XlogyBackward0";
}

/* --- the table ------------------------------------------------------------------------------------------ */
#define SIG(...) {__VA_ARGS__, NULL}
#define BIN SIG("input", "other", "*alpha")
#define SIZES SIG("input", "s1", "s2", "s3", "s4", "s5", "s6", "s7")
/* NSV: the backward reads input 0's shape and dtype only (or only the outputs), so an in-place
 * variant need not keep a copy of self */
#define NSV CT_F_NO_SELF_VALUES
#define NOT_IMPLEMENTED "torch::autograd::NotImplemented"
/* PyTorch's saved-field names of a row: grad_fn._saved_<name> (syntax in autograd.c) */
#define SAVED(text) .saved = text
const CtFormula ct_formulas[] = {
    /* in-place writes that replace self's values (other in-place ops are derived from their
     * out-of-place formula by autograd.c) */
    {"copy_", "torch::autograd::CopyBackwards", SIG("input", "src", "*non_blocking"), 3, CT_F_INPLACE | CT_F_NO_SELF_VALUES, bw_copy},
    {"zero_", "ZeroBackward0", SIG("input"), 1, CT_F_INPLACE | CT_F_NO_SELF_VALUES, bw_zero},
    {"fill_", "FillBackward2", SIG("input", "value"), 1, CT_F_INPLACE | CT_F_NO_SELF_VALUES, bw_zero},
    {"angle", "AngleBackward0", SIG("input"), 1, NSV, bw_zero}, /* namespace.c: real input, piecewise constant */
    {"normal_", "NormalBackward0", SIG("input", "mean", "std", "*generator"), 1, CT_F_INPLACE | CT_F_NO_SELF_VALUES,
     bw_zero},
    {"uniform_", "UniformBackward0", SIG("input", "from", "to", "*generator"), 1, CT_F_INPLACE | CT_F_NO_SELF_VALUES,
     bw_zero},
    {"random_", "RandomBackward0", SIG("input", "from", "to", "*generator"), 1, CT_F_INPLACE | CT_F_NO_SELF_VALUES,
     bw_zero},
    {"bernoulli_", "BernoulliBackward0", SIG("input", "p", "*generator"), 1, CT_F_INPLACE | CT_F_NO_SELF_VALUES,
     bw_zero},
    {"exponential_", "ExponentialBackward0", SIG("input", "lambd", "*generator"), 1,
     CT_F_INPLACE | CT_F_NO_SELF_VALUES, bw_zero},
    /* tensor_more.c: the other in-place samplers */
    {"cauchy_", "CauchyBackward0", SIG("input", "median", "sigma", "*generator"), 1, CT_F_INPLACE | CT_F_NO_SELF_VALUES,
     bw_zero},
    {"log_normal_", "LogNormalBackward0", SIG("input", "mean", "std", "*generator"), 1,
     CT_F_INPLACE | CT_F_NO_SELF_VALUES, bw_zero},
    {"geometric_", "GeometricBackward0", SIG("input", "p", "*generator"), 1, CT_F_INPLACE | CT_F_NO_SELF_VALUES,
     bw_zero},
    /* elementwise */
    {"add", "AddBackward0", BIN, 3, NSV, bw_add, SAVED("alpha=a2?1")},
    {"add_", "AddBackward0", BIN, 3, CT_F_INPLACE | NSV, bw_add, SAVED("alpha=a2?1")},
    {"sub", "SubBackward0", BIN, 3, NSV, bw_sub, name_sub, SAVED("SubBackward0: alpha=a2?1")},
    {"subtract", "SubBackward0", BIN, 3, NSV, bw_sub, name_sub, SAVED("SubBackward0: alpha=a2?1")},
    {"sub_", "SubBackward0", BIN, 3, CT_F_INPLACE | NSV, bw_sub, SAVED("alpha=a2?1")},
    {"rsub", "RsubBackward0", BIN, 3, NSV, bw_rsub, name_rsub},
    {"mul", "MulBackward0", SIG("input", "other"), 3, 0, bw_mul, SAVED("MulBackward0: other=t1/0 self=t0/1")},
    {"multiply", "MulBackward0", SIG("input", "other"), 3, 0, bw_mul, SAVED("MulBackward0: other=t1/0 self=t0/1")},
    {"div", "DivBackward0", SIG("input", "other", "*rounding_mode"), 3, 0, bw_div, name_div,
     SAVED("DivBackward0: other=t1/0 self=t0/1")},
    {"divide", "DivBackward0", SIG("input", "other", "*rounding_mode"), 3, 0, bw_div, name_div,
     SAVED("DivBackward0: other=t1/0 self=t0/1")},
    {"true_divide", "DivBackward0", SIG("input", "other"), 3, 0, bw_div, name_true_divide,
     SAVED("DivBackward0: other=t1/0 self=t0/1")},
    {"floor_divide", NOT_IMPLEMENTED, SIG("input", "other"), 3, CT_F_NO_DERIV, NULL},
    {"remainder", "RemainderBackward0", SIG("input", "other"), 3, 0, bw_remainder, name_remainder},
    {"fmod", "FmodBackward0", SIG("input", "other"), 3, 0, bw_remainder, name_fmod},
    {"neg", "NegBackward0", SIG("input"), 1, NSV, bw_neg},
    {"negative", "NegBackward0", SIG("input"), 1, NSV, bw_neg},
    {"abs", "AbsBackward0", SIG("input"), 1, 0, bw_abs, SAVED("self=t0")},
    {"absolute", "AbsBackward0", SIG("input"), 1, 0, bw_abs, SAVED("self=t0")},
    {"exp", "ExpBackward0", SIG("input"), 1, CT_F_SAVE_OUT | NSV, bw_exp, SAVED("result=o0")},
    {"exp2", "Exp2Backward0", SIG("input"), 1, CT_F_SAVE_OUT | NSV, bw_exp2, SAVED("result=o0")},
    {"log", "LogBackward0", SIG("input"), 1, 0, bw_log, SAVED("self=t0")},
    {"log2", "Log2Backward0", SIG("input"), 1, 0, bw_log2, SAVED("self=t0")},
    {"log10", "Log10Backward0", SIG("input"), 1, 0, bw_log10, SAVED("self=t0")},
    {"log1p", "Log1PBackward0", SIG("input"), 1, 0, bw_log1p, SAVED("self=t0")},
    {"expm1", "Expm1Backward0", SIG("input"), 1, CT_F_SAVE_OUT | NSV, bw_expm1, SAVED("result=o0")},
    {"sqrt", "SqrtBackward0", SIG("input"), 1, CT_F_SAVE_OUT | NSV, bw_sqrt, SAVED("result=o0")},
    {"rsqrt", "RsqrtBackward0", SIG("input"), 1, CT_F_SAVE_OUT | NSV, bw_rsqrt, SAVED("result=o0")},
    {"reciprocal", "ReciprocalBackward0", SIG("input"), 1, CT_F_SAVE_OUT | NSV, bw_reciprocal, SAVED("result=o0")},
    {"square", "PowBackward0", SIG("input"), 1, 0, bw_square, SAVED("exponent=c?2 self=t0")},
    {"sin", "SinBackward0", SIG("input"), 1, 0, bw_sin, SAVED("self=t0")},
    {"cos", "CosBackward0", SIG("input"), 1, 0, bw_cos, SAVED("self=t0")},
    {"tan", "TanBackward0", SIG("input"), 1, CT_F_SAVE_OUT | NSV, bw_tan, SAVED("result=o0")},
    {"tanh", "TanhBackward0", SIG("input"), 1, CT_F_SAVE_OUT | NSV, bw_tanh, SAVED("result=o0")},
    {"sigmoid", "SigmoidBackward0", SIG("input"), 1, CT_F_SAVE_OUT | NSV, bw_sigmoid, SAVED("result=o0")},
    {"relu", "ReluBackward0", SIG("input"), 1, CT_F_SAVE_OUT | NSV, bw_relu, SAVED("result=o0")},
    {"_threshold_backward", "ThresholdBackwardBackward0", SIG("grad_output", "self", "threshold"), 3, 0,
     bw_threshold_backward},
    {"_tanh_backward", "TanhBackwardBackward0", SIG("grad_output", "output"), 3, 0, bw_tanh_backward},
    {"_sigmoid_backward", "SigmoidBackwardBackward0", SIG("grad_output", "output"), 3, 0, bw_sigmoid_backward},
    {"sinh", "SinhBackward0", SIG("input"), 1, 0, bw_sinh, SAVED("self=t0")},
    {"cosh", "CoshBackward0", SIG("input"), 1, 0, bw_cosh, SAVED("self=t0")},
    {"asin", "AsinBackward0", SIG("input"), 1, 0, bw_asin, SAVED("self=t0")},
    {"arcsin", "AsinBackward0", SIG("input"), 1, 0, bw_asin, SAVED("self=t0")},
    {"acos", "AcosBackward0", SIG("input"), 1, 0, bw_acos, SAVED("self=t0")},
    {"arccos", "AcosBackward0", SIG("input"), 1, 0, bw_acos, SAVED("self=t0")},
    {"atan", "AtanBackward0", SIG("input"), 1, 0, bw_atan, SAVED("self=t0")},
    {"arctan", "AtanBackward0", SIG("input"), 1, 0, bw_atan, SAVED("self=t0")},
    {"asinh", "AsinhBackward0", SIG("input"), 1, 0, bw_asinh, SAVED("self=t0")},
    {"arcsinh", "AsinhBackward0", SIG("input"), 1, 0, bw_asinh, SAVED("self=t0")},
    {"acosh", "AcoshBackward0", SIG("input"), 1, 0, bw_acosh, SAVED("self=t0")},
    {"arccosh", "AcoshBackward0", SIG("input"), 1, 0, bw_acosh, SAVED("self=t0")},
    {"atanh", "AtanhBackward0", SIG("input"), 1, 0, bw_atanh, SAVED("self=t0")},
    {"arctanh", "AtanhBackward0", SIG("input"), 1, 0, bw_atanh, SAVED("self=t0")},
    {"erf", "ErfBackward0", SIG("input"), 1, 0, bw_erf, SAVED("self=t0")},
    {"erfc", "ErfcBackward0", SIG("input"), 1, 0, bw_erfc, SAVED("self=t0")},
    {"silu", "SiluBackward0", SIG("input"), 1, 0, bw_silu, SAVED("self=t0")},
    {"gelu", "GeluBackward0", SIG("input", "*approximate"), 1, 0, bw_gelu, SAVED("approximate=a1?'none' self=t0")},
    {"softplus", "SoftplusBackward0", SIG("input", "beta", "threshold"), 1, 0, bw_softplus,
     SAVED("beta=a1?1 self=t0 threshold=a2?20")},
    {"nan_to_num", "NanToNumBackward0", SIG("input", "nan", "posinf", "neginf"), 1, 0, bw_nan_to_num},
    {"pow", "PowBackward0", SIG("input", "exponent"), 3, 0, bw_pow, name_pow,
     SAVED("PowBackward0: exponent=a1 self=t0; PowBackward1: exponent=t1 self=t0; PowBackward2: exponent=t1 "
           "self=a0")},
    {"float_power", "PowBackward0", SIG("input", "exponent"), 3, 0, bw_float_power, name_pow},
    {"atan2", "Atan2Backward0", SIG("input", "other"), 3, 0, bw_atan2, SAVED("other=t1 self=t0")},
    {"arctan2", "Atan2Backward0", SIG("input", "other"), 3, 0, bw_atan2, SAVED("other=t1 self=t0")},
    {"hypot", "HypotBackward0", SIG("input", "other"), 3, CT_F_SAVE_OUT, bw_hypot},
    {"logaddexp", "LogaddexpBackward0", SIG("input", "other"), 3, 0, bw_logaddexp},
    {"logaddexp2", "Logaddexp2Backward0", SIG("input", "other"), 3, 0, bw_logaddexp},
    {"copysign", "CopysignBackward0", SIG("input", "other"), 3, CT_F_SAVE_OUT, bw_copysign, name_copysign},
    {"clamp", "ClampBackward1", SIG("input", "min", "max"), 7, 0, bw_clamp, name_clamp,
     SAVED("ClampBackward1: max=a2 min=a1 self=t0; ClampBackward0: max=t2 min=t1 self=t0")},
    {"clip", "ClampBackward1", SIG("input", "min", "max"), 7, 0, bw_clamp, name_clamp,
     SAVED("ClampBackward1: max=a2 min=a1 self=t0; ClampBackward0: max=t2 min=t1 self=t0")},
    {"clamp_min", "ClampMinBackward0", SIG("input", "min"), 3, 0, bw_clamp_min, name_clamp_min,
     SAVED("ClampMinBackward0: min=a1 self=t0")},
    {"clamp_max", "ClampMaxBackward0", SIG("input", "max"), 3, 0, bw_clamp_min, name_clamp_max,
     SAVED("ClampMaxBackward0: max=a1 self=t0")},
    {"where", "WhereBackward0", SIG("condition", "input", "other"), 6, 0, bw_where, SAVED("condition=t0")},
    {"Tensor.where", "WhereBackward0", SIG("input", "condition", "other"), 5, 0, bw_where_method,
     SAVED("condition=t1")},
    {"maximum", "MaximumBackward0", SIG("input", "other"), 3, 0, bw_maximum, SAVED("other=t1 self=t0")},
    {"minimum", "MinimumBackward0", SIG("input", "other"), 3, 0, bw_maximum, SAVED("other=t1 self=t0")},
    {"fmax", "FmaxBackward0", SIG("input", "other"), 3, 0, bw_maximum},
    {"fmin", "FminBackward0", SIG("input", "other"), 3, 0, bw_maximum},
    {"lerp", "LerpBackward1", SIG("input", "end", "weight"), 7, 0, bw_lerp, name_lerp,
     SAVED("LerpBackward0: weight=a2; LerpBackward1: end=t1 self=t0 weight=t2")},
    {"addcmul", "AddcmulBackward0", SIG("input", "tensor1", "tensor2", "*value"), 7, NSV, bw_addcmul,
     SAVED("tensor1=t1/2 tensor2=t2/1 value=a3?1")},
    {"addcdiv", "AddcdivBackward0", SIG("input", "tensor1", "tensor2", "*value"), 7, NSV, bw_addcmul},
    {"sign", "SignBackward0", SIG("input"), 1, NSV, bw_zero},
    {"sgn", "SgnBackward0", SIG("input"), 1, NSV, bw_zero},
    {"floor", "FloorBackward0", SIG("input"), 1, NSV, bw_zero},
    {"ceil", "CeilBackward0", SIG("input"), 1, NSV, bw_zero},
    {"round", "RoundBackward0", SIG("input", "*decimals"), 1, NSV, bw_zero, name_round},
    {"trunc", "TruncBackward0", SIG("input"), 1, NSV, bw_zero},
    {"fix", "TruncBackward0", SIG("input"), 1, NSV, bw_zero},
    {"frac", "FracBackward0", SIG("input"), 1, NSV, bw_identity},
    /* random draws: zero gradients for their tensor parameters */
    {"bernoulli", "BernoulliBackward0", SIG("input", "p", "*generator"), 1, NSV, bw_random},
    {"normal", "NormalBackward3", SIG("mean", "std", "size", "*generator"), 3, NSV, bw_random, name_normal},
    {"_standard_gamma", "StandardGammaBackward0", SIG("input", "generator"), 1, CT_F_SAVE_OUT, bw_standard_gamma},
    {"poisson", "PoissonBackward0", SIG("input", "generator"), 1, NSV, bw_random},
    {"_standard_gamma_grad", NOT_IMPLEMENTED, SIG("input", "output"), 3, CT_F_NO_DERIV, NULL},
    {"_dirichlet_grad", NOT_IMPLEMENTED, SIG("x", "alpha", "total"), 7, CT_F_NO_DERIV, NULL},
    {"_sample_dirichlet", NOT_IMPLEMENTED, SIG("input", "generator"), 1, CT_F_NO_DERIV, NULL},
    {"binomial", NOT_IMPLEMENTED, SIG("count", "prob", "generator"), 3, CT_F_NO_DERIV, NULL},
    /* reductions */
    {"sum", "SumBackward1", SIG("input", "dim", "keepdim", "*dtype"), 1, NSV, bw_sum, name_sum,
     SAVED("SumBackward0: self_sym_sizes=z0; SumBackward1: dim=l1 keepdim=a2?False self_sym_sizes=z0")},
    {"nansum", "NansumBackward0", SIG("input", "dim", "keepdim", "*dtype"), 1, 0, bw_nansum},
    {"sum_to_size", "SumBackward1", SIZES, 1, NSV, bw_expand_back},
    {"mean", "MeanBackward1", SIG("input", "dim", "keepdim", "*dtype"), 1, NSV, bw_mean, name_mean,
     SAVED("MeanBackward0: self_sym_numel=n0 self_sym_sizes=z0; MeanBackward1: dim=l1 keepdim=a2?False "
           "self_sym_numel=n0 self_sym_sizes=z0")},
    {"prod", "ProdBackward0", SIG("input", "dim", "keepdim", "*dtype"), 1, CT_F_SAVE_OUT, bw_prod, name_prod,
     SAVED("ProdBackward0: result=o0 self=t0; ProdBackward1: dim=a1 keepdim=a2?False result=o0 self=t0")},
    {"var", "VarBackward0", SIG("input", "dim", "unbiased", "keepdim", "*correction"), 1, 0, bw_var_mean},
    {"std", "StdBackward0", SIG("input", "dim", "unbiased", "keepdim", "*correction"), 1, CT_F_SAVE_OUT, bw_var_mean},
    {"var_mean", "VarMeanBackward0", SIG("input", "dim", "unbiased", "keepdim", "*correction"), 1, 0, bw_var_mean},
    {"std_mean", "StdMeanBackward0", SIG("input", "dim", "unbiased", "keepdim", "*correction"), 1, CT_F_SAVE_OUT,
     bw_var_mean},
    {"amax", "AmaxBackward0", SIG("input", "dim", "keepdim"), 1, CT_F_SAVE_OUT, bw_amax,
     SAVED("dim=l1?() keepdim=a2?False result=o0 self=t0")},
    {"amin", "AminBackward0", SIG("input", "dim", "keepdim"), 1, CT_F_SAVE_OUT, bw_amax,
     SAVED("dim=l1?() keepdim=a2?False result=o0 self=t0")},
    {"aminmax", "AminmaxBackward0", SIG("input", "*dim", "*keepdim"), 1, CT_F_SAVE_OUT, bw_aminmax},
    {"max", "MaxBackward0", SIG("input", "dim", "keepdim"), 3, CT_F_SAVE_OUT, bw_max_dim, name_max,
     SAVED("MaxBackward0: dim=a1 indices=o1 keepdim=a2?False self_sym_sizes=z0; MaxBackward1: result=o0 self=t0; "
           "MaximumBackward0: other=t1 self=t0")},
    {"min", "MinBackward0", SIG("input", "dim", "keepdim"), 3, CT_F_SAVE_OUT, bw_max_dim, name_min,
     SAVED("MinBackward0: dim=a1 indices=o1 keepdim=a2?False self_sym_sizes=z0; MinBackward1: result=o0 self=t0; "
           "MinimumBackward0: other=t1 self=t0")},
    {"median", "MedianBackward0", SIG("input", "dim", "keepdim"), 1, CT_F_SAVE_OUT, bw_median, name_median},
    {"sort", "SortBackward0", SIG("input", "dim", "descending", "*stable"), 1, CT_F_SAVE_OUT, bw_sort},
    {"topk", "TopkBackward0", SIG("input", "k", "dim", "largest", "sorted"), 1, CT_F_SAVE_OUT, bw_topk},
    {"kthvalue", "KthvalueBackward0", SIG("input", "k", "dim", "keepdim"), 1, CT_F_SAVE_OUT, bw_kthvalue},
    {"mode", "ModeBackward0", SIG("input", "dim", "keepdim"), 1, CT_F_SAVE_OUT, bw_mode},
    /* quantile's last step (ops_reduce.c), PyTorch's in-place squeeze_(-1) */
    {"_squeeze_last", "SqueezeBackward4", SIG("input"), 1, CT_F_VIEW | NSV, bw_reshape},
    /* search family */
    {"unique", "Unique2Backward0", SIG("input", "sorted", "return_inverse", "return_counts", "dim"), 1, 0, bw_unique,
     name_unique},
    {"unique_consecutive", "UniqueConsecutiveBackward0", SIG("input", "return_inverse", "return_counts", "dim"), 1, 0,
     bw_unique},
    {"bincount", NOT_IMPLEMENTED, SIG("input", "weights", "minlength"), 2, 0, bw_bincount},
    {"histc", "HistcBackward0", SIG("input", "bins", "min", "max", "*out"), 0, 0, NULL},
    {"logsumexp", "LogsumexpBackward0", SIG("input", "dim", "keepdim"), 1, CT_F_SAVE_OUT, bw_logsumexp,
     SAVED("dim=l1 keepdim=a2?False result=o0 self=t0")},
    {"norm", "LinalgVectorNormBackward0", SIG("input", "p", "dim", "keepdim", "*dtype"), 1, CT_F_SAVE_OUT, bw_norm},
    {"dist", "DistBackward0", SIG("input", "other", "p"), 3, CT_F_SAVE_OUT, bw_dist},
    {"renorm", "RenormBackward0", SIG("input", "p", "dim", "maxnorm"), 1, 0, bw_renorm},
    {"softmax", "SoftmaxBackward0", SIG("input", "dim", "*dtype"), 1, CT_F_SAVE_OUT | NSV, bw_softmax,
     SAVED("dim=a1 result=o0")},
    {"log_softmax", "LogSoftmaxBackward0", SIG("input", "dim", "*dtype"), 1, CT_F_SAVE_OUT | NSV, bw_log_softmax,
     SAVED("dim=a1 result=o0")},
    {"cumsum", "CumsumBackward0", SIG("input", "dim", "*dtype"), 1, NSV, bw_cumsum, SAVED("dim=a1")},
    {"cumprod", "CumprodBackward0", SIG("input", "dim", "*dtype"), 1, CT_F_SAVE_OUT, bw_cumprod},
    {"cummax", "CummaxBackward0", SIG("input", "dim"), 1, CT_F_SAVE_OUT | NSV, bw_cummax},
    {"cummin", "CumminBackward0", SIG("input", "dim"), 1, CT_F_SAVE_OUT | NSV, bw_cummax},
    {"logcumsumexp", "LogcumsumexpBackward0", SIG("input", "dim"), 1, CT_F_SAVE_OUT, bw_logcumsumexp},
    {"nanmean", "DivBackward0", SIG("input", "dim", "keepdim", "*dtype"), 1, 0, bw_nanmean},
    {"nanmedian", "NanmedianBackward0", SIG("input", "dim", "keepdim"), 1, CT_F_SAVE_OUT, bw_median, name_nanmedian},
    /* views and copies */
    {"view", "ViewBackward0", SIZES, 1, CT_F_VIEW | NSV, bw_reshape, SAVED("self_sym_sizes=z0")},
    {"reshape", "ViewBackward0", SIZES, 1, CT_F_VIEW | NSV, bw_reshape, name_reshape,
     SAVED("ViewBackward0,UnsafeViewBackward0: self_sym_sizes=z0")},
    {"view_as", "ViewBackward0", SIG("input", "other"), 1, CT_F_VIEW | NSV, bw_reshape, SAVED("self_sym_sizes=z0")},
    {"reshape_as", "ViewBackward0", SIG("input", "other"), 1, CT_F_VIEW | NSV, bw_reshape, name_reshape_as,
     SAVED("ViewBackward0,UnsafeViewBackward0: self_sym_sizes=z0")},
    {"flatten", "ViewBackward0", SIG("input", "start_dim", "end_dim"), 1, CT_F_VIEW | NSV, bw_reshape, name_flatten,
     SAVED("ViewBackward0,UnsafeViewBackward0: self_sym_sizes=z0")},
    {"unflatten", "ViewBackward0", SIG("input", "dim", "sizes"), 1, CT_F_VIEW | NSV, bw_reshape,
     SAVED("self_sym_sizes=z0")},
    {"squeeze", "SqueezeBackward1", SIG("input", "dim"), 1, CT_F_VIEW | NSV, bw_reshape, name_squeeze,
     SAVED("SqueezeBackward0: self_sym_sizes=z0; SqueezeBackward1: dim=a1 self_sym_sizes=z0; SqueezeBackward2: "
           "dim=l1 self_sym_sizes=z0")},
    {"unsqueeze", "UnsqueezeBackward0", SIG("input", "dim"), 1, CT_F_VIEW | NSV, bw_reshape, SAVED("dim=a1")},
    {"transpose", "TransposeBackward0", SIG("input", "dim0", "dim1"), 1, CT_F_VIEW | NSV, bw_transpose,
     SAVED("dim0=a1 dim1=a2")},
    {"swapaxes", "TransposeBackward0", SIG("input", "dim0", "dim1"), 1, CT_F_VIEW | NSV, bw_transpose,
     SAVED("dim0=a1 dim1=a2")},
    {"swapdims", "TransposeBackward0", SIG("input", "dim0", "dim1"), 1, CT_F_VIEW | NSV, bw_transpose,
     SAVED("dim0=a1 dim1=a2")},
    {"t", "TBackward0", SIG("input"), 1, CT_F_VIEW | NSV, bw_transpose},
    {"permute", "PermuteBackward0", SIG("input", "d1", "d2", "d3", "d4", "d5", "d6", "d7"), 1, CT_F_VIEW | NSV,
     bw_permute, SAVED("dims=v1")},
    {"movedim", "PermuteBackward0", SIG("input", "source", "destination"), 1, CT_F_VIEW | NSV, bw_movedim},
    {"moveaxis", "PermuteBackward0", SIG("input", "source", "destination"), 1, CT_F_VIEW | NSV, bw_movedim},
    {"expand", "ExpandBackward0", SIZES, 1, CT_F_VIEW | NSV, bw_identity, SAVED("self_sym_sizes=z0")},
    {"expand_as", "ExpandBackward0", SIG("input", "other"), 1, CT_F_VIEW | NSV, bw_identity,
     SAVED("self_sym_sizes=z0")},
    {"narrow", "SliceBackward0", SIG("input", "dim", "start", "length"), 1, CT_F_VIEW | NSV, bw_narrow},
    {"select", "SelectBackward0", SIG("input", "dim", "index"), 1, CT_F_VIEW | NSV, bw_narrow,
     SAVED("dim=a1 index=a2 self_sym_sizes=z0")},
    {"diagonal", "DiagonalBackward0", SIG("input", "offset", "dim1", "dim2"), 1, CT_F_VIEW | NSV, bw_diagonal},
    /* ops_more.c / views.c: unfold, the in-place metadata ops, diag_embed / diagflat */
    {"unfold", "UnfoldBackward0", SIG("input", "dimension", "size", "step"), 1, CT_F_VIEW | NSV, ct_more_bw_unfold},
    {"as_strided", "AsStridedBackward0", SIG("input", "size", "stride", "storage_offset"), 1, CT_F_VIEW,
     ct_more_bw_as_strided},
    {"transpose_", "TransposeBackward1", SIG("input", "dim0", "dim1"), 1, CT_F_INPLACE | NSV, ct_more_bw_inplace_view},
    {"swapaxes_", "TransposeBackward1", SIG("input", "axis0", "axis1"), 1, CT_F_INPLACE | NSV, ct_more_bw_inplace_view},
    {"swapdims_", "TransposeBackward1", SIG("input", "dim0", "dim1"), 1, CT_F_INPLACE | NSV, ct_more_bw_inplace_view},
    {"t_", "TBackward1", SIG("input"), 1, CT_F_INPLACE | NSV, ct_more_bw_inplace_view},
    {"squeeze_", "SqueezeBackward3", SIG("input", "dim"), 1, CT_F_INPLACE | CT_F_CLONE_SELF, ct_more_bw_inplace_view,
     name_squeeze_},
    {"unsqueeze_", "UnsqueezeBackward1", SIG("input", "dim"), 1, CT_F_INPLACE | CT_F_CLONE_SELF, ct_more_bw_inplace_view},
    {"diag_embed", "DiagEmbedBackward0", SIG("input", "offset", "dim1", "dim2"), 1, NSV, ct_more_bw_diag_embed},
    {"diagflat", "DiagEmbedBackward0", SIG("input", "offset"), 1, NSV, ct_more_bw_diagflat},
    /* special functions (scalar_math.h; mvlgamma and frexp composed in ops_more.c) */
    {"erfinv", "ErfinvBackward0", SIG("input"), 1, CT_F_SAVE_OUT | NSV, bw_erfinv, SAVED("self=t0")},
    {"lgamma", "LgammaBackward0", SIG("input"), 1, 0, bw_lgamma, SAVED("self=t0")},
    {"digamma", "DigammaBackward0", SIG("input"), 1, 0, bw_digamma, SAVED("self=t0")},
    {"polygamma", "PolygammaBackward0", SIG("n", "input"), 2, 0, bw_polygamma},
    {"Tensor.polygamma", "PolygammaBackward0", SIG("input", "n"), 1, 0, bw_polygamma},
    {"polygamma_", "PolygammaBackward0", SIG("input", "n"), 1, CT_F_INPLACE | CT_F_CLONE_SELF, bw_polygamma},
    {"mvlgamma", "MvlgammaBackward0", SIG("input", "p"), 1, 0, ct_more_bw_mvlgamma},
    {"i0", "I0Backward0", SIG("input"), 1, 0, bw_i0},
    {"sinc", "SincBackward0", SIG("input"), 1, 0, bw_sinc},
    {"logit", "LogitBackward0", SIG("input", "eps"), 1, 0, bw_logit},
    {"xlogy", "XlogyBackward0", SIG("input", "other"), 3, 0, bw_xlogy, name_xlogy},
    {"special_xlog1py", "SpecialXlog1PyBackward0", SIG("input", "other"), 3, 0, bw_xlog1py, name_xlog1py},
    {"special_entr", "SpecialEntrBackward0", SIG("input"), 1, 0, bw_entr},
    {"special_i1", "SpecialI1Backward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_special_i1},
    {"special_erfcx", "SpecialErfcxBackward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_special_erfcx},
    {"special_log_ndtr", "SpecialLogNdtrBackward0", SIG("input"), 1, 0, bw_special_log_ndtr},
    {"special_ndtri", "SpecialNdtriBackward0", SIG("input"), 1, CT_F_SAVE_OUT | NSV, bw_special_ndtri},
    {"special_i0e", "SpecialI0EBackward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_special_i0e},
    {"special_i1e", "SpecialI1EBackward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_special_i1e},
    {"special_bessel_j0", "SpecialBesselJ0Backward0", SIG("input"), 1, 0, bw_special_bessel_j0},
    {"special_bessel_j1", "SpecialBesselJ1Backward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_special_bessel_j1},
    {"special_bessel_y0", "SpecialBesselY0Backward0", SIG("input"), 1, 0, bw_special_bessel_y0},
    {"special_bessel_y1", "SpecialBesselY1Backward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_special_bessel_y1},
    {"special_modified_bessel_i0", "SpecialModifiedBesselI0Backward0", SIG("input"), 1, 0,
     bw_special_modified_bessel_i0},
    {"special_modified_bessel_i1", "SpecialModifiedBesselI1Backward0", SIG("input"), 1, CT_F_SAVE_OUT,
     bw_special_modified_bessel_i1},
    {"special_modified_bessel_k0", "SpecialModifiedBesselK0Backward0", SIG("input"), 1, 0,
     bw_special_modified_bessel_k0},
    {"special_modified_bessel_k1", "SpecialModifiedBesselK1Backward0", SIG("input"), 1, CT_F_SAVE_OUT,
     bw_special_modified_bessel_k1},
    /* not differentiable in PyTorch: the output does not require grad */
    {"special_scaled_modified_bessel_k0", "SpecialScaledModifiedBesselK0Backward0", SIG("input"), 0, 0, NULL},
    {"special_scaled_modified_bessel_k1", "SpecialScaledModifiedBesselK1Backward0", SIG("input"), 0, 0, NULL},
    {"special_spherical_bessel_j0", "SpecialSphericalBesselJ0Backward0", SIG("input"), 0, 0, NULL},
    {"special_zeta", "SpecialZetaBackward0", SIG("input", "other"), 3, 0, bw_zeta, name_zeta},
    {"igamma", "IgammaBackward0", SIG("input", "other"), 3, 0, bw_igamma},
    {"igammac", "IgammacBackward0", SIG("input", "other"), 3, 0, bw_igammac},
    {"deg2rad", "Deg2RadBackward0", SIG("input"), 1, NSV, bw_deg2rad},
    {"rad2deg", "Rad2DegBackward0", SIG("input"), 1, NSV, bw_rad2deg},
    {"nextafter", "NextafterBackward0", SIG("input", "other"), 3, CT_F_NO_DERIV, NULL},
    {"frexp", "FrexpBackward0", SIG("input"), 1, CT_F_SAVE_OUT | NSV, ct_more_bw_frexp},
    {"slice_scatter", "SliceScatterBackward0", SIG("input", "src", "dim", "start", "end", "step"), 3, NSV,
     ct_more_bw_scatter},
    {"select_scatter", "SelectScatterBackward0", SIG("input", "src", "dim", "index"), 3, NSV, ct_more_bw_scatter},
    {"diagonal_scatter", "DiagonalScatterBackward0", SIG("input", "src", "offset", "dim1", "dim2"), 3, NSV,
     ct_more_bw_scatter},
    {"unbind", "UnbindBackward0", SIG("input", "dim"), 1, CT_F_VIEW | CT_F_SAVE_OUT | NSV, bw_pieces},
    {"split", "SplitBackward0", SIG("input", "split_size_or_sections", "dim"), 1, CT_F_VIEW | CT_F_SAVE_OUT | NSV,
     bw_pieces, name_split},
    {"chunk", "SplitBackward0", SIG("input", "chunks", "dim"), 1, CT_F_VIEW | CT_F_SAVE_OUT | NSV, bw_pieces},
    {"contiguous", "CloneBackward0", SIG("input", "*memory_format"), 1, NSV, bw_identity},
    {"clone", "CloneBackward0", SIG("input", "*memory_format"), 1, NSV, bw_identity},
    {"to", "ToCopyBackward0", SIG("input", "a", "b", "*dtype", "*device", "*non_blocking", "*copy", "*memory_format"),
     1, NSV, bw_to},
    {"type", "ToCopyBackward0", SIG("input", "dtype", "non_blocking"), 1, NSV, bw_to},
    {"float", "ToCopyBackward0", SIG("input"), 1, NSV, bw_to},
    {"double", "ToCopyBackward0", SIG("input"), 1, NSV, bw_to},
    {"half", "ToCopyBackward0", SIG("input"), 1, NSV, bw_to},
    {"bfloat16", "ToCopyBackward0", SIG("input"), 1, NSV, bw_to},
    {"cpu", "ToCopyBackward0", SIG("input"), 1, NSV, bw_to},
    {"cuda", "ToCopyBackward0", SIG("input", "device", "non_blocking"), 1, NSV, bw_to},
    /* indexing and joining */
    {"__getitem__", "IndexBackward0", SIG("input", "key"), 1, CT_F_VIEW | NSV, bw_getitem, name_getitem},
    {"__setitem__", "IndexPutBackward0", SIG("input", "key", "value"), 5, CT_F_INPLACE, bw_setitem},
    {"cat", "CatBackward0", SIG("tensors", "dim"), 1, CT_F_LIST_INPUT, bw_cat, SAVED("dim=a1?0")},
    {"concat", "CatBackward0", SIG("tensors", "dim"), 1, CT_F_LIST_INPUT, bw_cat, SAVED("dim=a1?0")},
    {"concatenate", "CatBackward0", SIG("tensors", "dim", "*axis"), 1, CT_F_LIST_INPUT, bw_stack_like},
    {"hstack", "CatBackward0", SIG("tensors"), 1, CT_F_LIST_INPUT, bw_stack_like},
    {"vstack", "CatBackward0", SIG("tensors"), 1, CT_F_LIST_INPUT, bw_stack_like},
    {"dstack", "CatBackward0", SIG("tensors"), 1, CT_F_LIST_INPUT, bw_stack_like},
    {"stack", "StackBackward0", SIG("tensors", "dim"), 1, CT_F_LIST_INPUT, bw_stack, SAVED("dim=a1?0")},
    {"gather", "GatherBackward0", SIG("input", "dim", "index", "*sparse_grad"), 1, NSV, bw_gather,
     SAVED("dim=a1 index=t2 self=t0 sparse_grad=a3?False")},
    {"index_select", "IndexSelectBackward0", SIG("input", "dim", "index"), 1, NSV, bw_index_select,
     SAVED("dim=a1 index=t2 self_sym_sizes=z0")},
    {"take", "TakeBackward0", SIG("input", "index"), 1, NSV, bw_take},
    {"masked_select", "MaskedSelectBackward0", SIG("input", "mask"), 1, NSV, bw_masked_select},
    {"put", "PutBackward0", SIG("input", "index", "source", "accumulate"), 5, NSV, bw_put},
    {"masked_scatter", "MaskedScatterBackward0", SIG("input", "mask", "source"), 5, NSV, bw_masked_scatter},
    {"scatter", "ScatterBackward0", SIG("input", "dim", "index", "src", "*value", "*reduce"), 9, NSV, bw_scatter_any,
     name_scatter},
    {"scatter_add", "ScatterAddBackward0", SIG("input", "dim", "index", "src"), 9, NSV, bw_scatter},
    {"index_add", "IndexAddBackward0", SIG("input", "dim", "index", "source", "*alpha"), 9, NSV, bw_index_add},
    {"scatter_reduce", "ScatterReduceBackward0", SIG("input", "dim", "index", "src", "reduce", "*include_self"), 9,
     CT_F_SAVE_OUT, bw_scatter_reduce},
    {"index_reduce", "IndexReduceBackward0", SIG("input", "dim", "index", "source", "reduce", "*include_self"), 9,
     CT_F_SAVE_OUT, bw_scatter_reduce},
    {"index_copy", "IndexCopyBackward0", SIG("input", "dim", "index", "source"), 9, NSV, bw_index_copy},
    {"index_fill", "IndexFillBackward0", SIG("input", "dim", "index", "value"), 9, NSV, bw_index_copy,
     name_index_fill},
    {"index_put", "IndexPutBackward0", SIG("input", "indices", "values", "accumulate"), 5, NSV, bw_index_put},
    {"masked_fill", "MaskedFillBackward0", SIG("input", "mask", "value"), 5, NSV, bw_masked_fill2, name_masked_fill,
     SAVED("MaskedFillBackward0: mask=t1")},
    {"tril", "TrilBackward0", SIG("input", "diagonal"), 1, NSV, bw_tril},
    {"triu", "TriuBackward0", SIG("input", "diagonal"), 1, NSV, bw_tril},
    {"diag", "DiagEmbedBackward0", SIG("input", "diagonal"), 1, NSV, bw_diag, name_diag},
    {"flip", "FlipBackward0", SIG("input", "dims"), 1, NSV, bw_flip},
    {"fliplr", "FlipBackward0", SIG("input"), 1, NSV, bw_fliplr},
    {"flipud", "FlipBackward0", SIG("input"), 1, NSV, bw_fliplr},
    {"roll", "RollBackward0", SIG("input", "shifts", "dims"), 1, NSV, bw_roll},
    {"repeat", "RepeatBackward0", SIZES, 1, NSV, bw_repeat},
    {"tile", "RepeatBackward0", SIZES, 1, NSV, bw_repeat},
    /* linear algebra */
    {"matmul", "MmBackward0", SIG("input", "other"), 3, 0, bw_matmul, name_matmul,
     SAVED("MmBackward0: mat2=t1/0 mat2_sym_sizes=z1 self=t0/1 self_sym_sizes=z0; DotBackward0: self=t0/1 "
           "tensor=t1/0; MvBackward0: self=t0/1 vec=t1/0")},
    {"mm", "MmBackward0", SIG("input", "mat2"), 3, 0, bw_matmul,
     SAVED("mat2=t1/0 mat2_sym_sizes=z1 self=t0/1 self_sym_sizes=z0")},
    {"bmm", "BmmBackward0", SIG("input", "mat2"), 3, 0, bw_matmul, SAVED("mat2=t1/0 self=t0/1")},
    {"mv", "MvBackward0", SIG("input", "vec"), 3, 0, bw_matmul, SAVED("self=t0/1 vec=t1/0")},
    {"dot", "DotBackward0", SIG("input", "tensor"), 3, 0, bw_matmul, SAVED("self=t0/1 tensor=t1/0")},
    {"vdot", "VdotBackward0", SIG("input", "other"), 3, 0, bw_matmul},
    {"outer", "MulBackward0", SIG("input", "vec2"), 3, 0, bw_outer},
    {"ger", "MulBackward0", SIG("input", "vec2"), 3, 0, bw_outer},
    {"addmm", "AddmmBackward0", SIG("input", "mat1", "mat2", "*beta", "*alpha"), 7, NSV, bw_addmm,
     SAVED("alpha=a4?1 beta=a3?1 mat1=t1/2 mat1_sym_sizes=z1 mat2=t2/1 mat2_sym_sizes=z2")},
    /* linalg_more.c's addr: addmm's formula, a 1-d vec2.t() being vec2 itself */
    {"addr", "AddrBackward0", SIG("input", "vec1", "vec2", "*beta", "*alpha"), 7, NSV, bw_addmm},
    /* linalg_more.c's LU ops */
    {"_linalg_inv", "LinalgInvExBackward0", SIG("A"), 1, CT_F_SAVE_OUT | NSV, ct_linalg_bw_inv},
    {"inverse", "LinalgInvExBackward0", SIG("input"), 1, CT_F_SAVE_OUT | NSV, ct_linalg_bw_inv},
    {"_linalg_det", "LinalgDetBackward0", SIG("A"), 1, CT_F_SAVE_OUT, ct_linalg_bw_det},
    {"det", "LinalgDetBackward0", SIG("input"), 1, CT_F_SAVE_OUT, ct_linalg_bw_det},
    {"_linalg_slogdet", "LinalgSlogdetBackward0", SIG("A"), 1, 0, ct_linalg_bw_slogdet},
    {"_linalg_solve", "LinalgSolveExBackward0", SIG("A", "B", "*left"), 3, CT_F_SAVE_OUT, ct_linalg_bw_solve},
    {"_linalg_solve_ex", "LinalgSolveExBackward0", SIG("A", "B", "*left", "*check_errors"), 3, CT_F_SAVE_OUT,
     ct_linalg_bw_solve},
    {"_linalg_inv_ex", "LinalgInvExBackward0", SIG("A", "*check_errors"), 1, CT_F_SAVE_OUT | NSV, ct_linalg_bw_inv},
    {"_linalg_lu_factor_ex", "LinalgLuFactorExBackward0", SIG("A", "*pivot", "*check_errors"), 1, CT_F_SAVE_OUT,
     ct_linalg_bw_lu_factor},
    {"_linalg_lu_factor", "LinalgLuFactorExBackward0", SIG("A", "*pivot"), 1, CT_F_SAVE_OUT, ct_linalg_bw_lu_factor},
    {"_linalg_matrix_exp", "LinalgMatrixExpBackward0", SIG("A"), 1, 0, ct_linalg_bw_matrix_exp},
    {"matrix_exp", "LinalgMatrixExpBackward0", SIG("input"), 1, 0, ct_linalg_bw_matrix_exp},
    /* linalg_decomp.c's decompositions and triangular solves */
    {"_linalg_cholesky_ex", "LinalgCholeskyExBackward0", SIG("A", "*upper", "*check_errors"), 1, CT_F_SAVE_OUT,
     ct_linalg_bw_cholesky},
    {"_linalg_solve_triangular", "LinalgSolveTriangularBackward0", SIG("A", "B", "*upper", "*left", "*unitriangular"),
     3, CT_F_SAVE_OUT, ct_linalg_bw_solve_triangular},
    {"cholesky_solve", "CholeskySolveBackward0", SIG("input", "input2", "upper"), 3, CT_F_SAVE_OUT,
     ct_linalg_bw_cholesky_solve},
    {"cholesky_inverse", "CholeskyInverseBackward0", SIG("input", "upper"), 1, CT_F_SAVE_OUT,
     ct_linalg_bw_cholesky_inverse},
    {"_linalg_qr", "LinalgQrBackward0", SIG("A", "mode"), 1, CT_F_SAVE_OUT, ct_linalg_bw_qr},
    {"geqrf", "GeqrfBackward0", SIG("input"), 1, NSV, bw_linalg_no_derivative},
    {"_linalg_ldl_factor_ex", NOT_IMPLEMENTED, SIG("A", "*hermitian", "*check_errors"), 1, NSV, bw_linalg_no_derivative},
    {"_linalg_ldl_factor", NOT_IMPLEMENTED, SIG("A", "*hermitian"), 1, NSV, bw_linalg_no_derivative},
    {"_linalg_ldl_solve", NOT_IMPLEMENTED, SIG("LD", "pivots", "B", "*hermitian"), 5, NSV, bw_linalg_no_derivative},
    /* linalg_eig.c's eigh and SVD */
    {"_linalg_eigh", "LinalgEighBackward0", SIG("A", "UPLO"), 1, CT_F_SAVE_OUT, ct_linalg_bw_eigh},
    {"_linalg_svd", "LinalgSvdBackward0", SIG("A", "full_matrices", "*compute_uv", "*driver"), 1, CT_F_SAVE_OUT,
     ct_linalg_bw_svd},
    {"addmv", "AddmvBackward0", SIG("input", "mat", "vec", "*beta", "*alpha"), 7, NSV, bw_addmv},
    {"baddbmm", "BaddbmmBackward0", SIG("input", "batch1", "batch2", "*beta", "*alpha"), 7, NSV, bw_addmv},
    {"addbmm", "AddbmmBackward0", SIG("input", "batch1", "batch2", "*beta", "*alpha"), 7, NSV, bw_addmv},
    /* einsum(equation, *operands) or einsum(op, sublist, op, sublist, ..., [out]): any argument may
     * be an operand */
    {"einsum", "ViewBackward0", SIG("equation", "o1", "o2", "o3", "o4", "o5", "o6", "o7"), 0xff, 0, bw_einsum,
     name_einsum},
    /* composites with a node of their own (ops_composite.c) */
    {"trace", "TraceBackward0", SIG("input"), 1, NSV, ct_composite_bw_trace},
    {"kron", "UnsafeViewBackward0", SIG("input", "other"), 3, 0, ct_composite_bw_kron},
    {"cross", "LinalgCrossBackward0", SIG("input", "other", "dim"), 3, 0, ct_composite_bw_cross},
    {"_linalg_cross", "LinalgCrossBackward0", SIG("input", "other", "*dim"), 3, 0, ct_composite_bw_cross},
    {"_block_diag", "BlockDiagBackward0", SIG("tensors"), 1, CT_F_LIST_INPUT, ct_composite_bw_block_diag},
    {"rot90", "Rot90Backward0", SIG("input", "k", "dims"), 1, NSV, ct_composite_bw_rot90},
    {"cdist", "CdistBackward0", SIG("x1", "x2", "p", "compute_mode"), 3, CT_F_SAVE_OUT, ct_composite_bw_cdist,
     ct_composite_name_cdist},
    {"pdist", "PdistBackward0", SIG("input", "p"), 1, CT_F_SAVE_OUT, ct_composite_bw_pdist},
    /* nn (csrc/nn.c): linear's node name follows PyTorch's for 2-D input with a bias; the Python
     * layer calls the aliases for the other cases so that grad_fn names match PyTorch's */
    {"linear", "AddmmBackward0", SIG("input", "weight", "bias"), 7, 0, ct_nn_bw_linear,
     SAVED("alpha=c?1 beta=c?1 mat1=t0/1 mat1_sym_sizes=z0 mat2=T1/0 mat2_sym_sizes=Z1")},
    {"_linear_mm", "MmBackward0", SIG("input", "weight", "bias"), 7, 0, ct_nn_bw_linear,
     SAVED("mat2=T1/0 mat2_sym_sizes=Z1 self=t0/1 self_sym_sizes=z0")},
    {"_linear_nd", "UnsafeViewBackward0", SIG("input", "weight", "bias"), 7, 0, ct_nn_bw_linear},
    {"_cross_entropy", "NllLossBackward0", SIG("input", "target", "weight", "reduction", "ignore_index", "label_smoothing"),
     3, 0, ct_nn_bw_cross_entropy, name_nll_loss, 4, "nll_loss_forward",
     SAVED("ignore_index=a4?-100 reduction=a3 target=t1 weight=t2")},
    {"_cross_entropy_ls", "AddBackward0", SIG("input", "target", "weight", "reduction", "ignore_index", "label_smoothing"),
     3, 0, ct_nn_bw_cross_entropy},
    {"_cross_entropy_soft", "NegBackward0", SIG("input", "target", "weight", "reduction", "ignore_index", "label_smoothing"),
     3, 0, ct_nn_bw_cross_entropy},
    {"_cross_entropy_soft_mean", "DivBackward1",
     SIG("input", "target", "weight", "reduction", "ignore_index", "label_smoothing"), 3, 0, ct_nn_bw_cross_entropy},
    {"_nll_loss", "NllLossBackward0", SIG("input", "target", "weight", "reduction", "ignore_index"), 1, 0,
     ct_nn_bw_nll_loss, name_nll_loss, 4, "nll_loss_forward",
     SAVED("ignore_index=a4?-100 reduction=a3 self=t0 target=t1 weight=t2")},
    /* csrc/nn_misc.c: CTC; its backward has no derivative, as PyTorch's */
    {"_ctc_loss", "CtcLossBackward0",
     SIG("log_probs", "targets", "input_lengths", "target_lengths", "blank", "zero_infinity"), 1, CT_F_SAVE_OUT,
     ct_nn_bw_ctc_loss},
    {"_ctc_loss_backward", NOT_IMPLEMENTED,
     SIG("grad", "log_probs", "targets", "input_lengths", "target_lengths", "neg_log_likelihood", "log_alpha", "blank",
         "zero_infinity"),
     99, CT_F_NO_DERIV, NULL},
    /* csrc/nn_misc.c: grid_sample's primitives; the double backward differentiates a composite */
    {"grid_sampler_2d", "GridSampler2DBackward0",
     SIG("input", "grid", "interpolation_mode", "padding_mode", "align_corners"), 3, 0, ct_nn_bw_grid_sampler},
    {"grid_sampler_3d", "GridSampler3DBackward0",
     SIG("input", "grid", "interpolation_mode", "padding_mode", "align_corners"), 3, 0, ct_nn_bw_grid_sampler},
    {"grid_sampler_2d_backward", "GridSampler2DBackwardBackward0",
     SIG("grad_output", "input", "grid", "interpolation_mode", "padding_mode", "align_corners", "output_mask"), 7, 0,
     ct_nn_bw_grid_sampler_backward},
    {"grid_sampler_3d_backward", "GridSampler3DBackwardBackward0",
     SIG("grad_output", "input", "grid", "interpolation_mode", "padding_mode", "align_corners", "output_mask"), 7, 0,
     ct_nn_bw_grid_sampler_backward},
    {"_mse_loss", "MseLossBackward0", SIG("input", "target", "weight", "pos_weight", "reduction", "beta"), 3, 0,
     ct_nn_bw_pointwise_loss, SAVED("reduction=a4 self=t0 target=t1")},
    {"_l1_loss", "MeanBackward0", SIG("input", "target", "weight", "pos_weight", "reduction", "beta"), 3, 0,
     ct_nn_bw_pointwise_loss, name_l1_loss},
    {"_smooth_l1_loss", "SmoothL1LossBackward0", SIG("input", "target", "weight", "pos_weight", "reduction", "beta"), 3,
     0, ct_nn_bw_pointwise_loss},
    {"_binary_cross_entropy", "BinaryCrossEntropyBackward0",
     SIG("input", "target", "weight", "pos_weight", "reduction", "beta"), 3, 0, ct_nn_bw_pointwise_loss, NULL, 4,
     "binary_cross_entropy"},
    {"_binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0",
     SIG("input", "target", "weight", "pos_weight", "reduction", "beta"), 3, 0, ct_nn_bw_pointwise_loss, NULL, 12,
     "binary_cross_entropy_with_logits"},
    {"layer_norm", "NativeLayerNormBackward0", SIG("input", "normalized_shape", "weight", "bias", "eps", "cudnn_enable"),
     13, 0, ct_nn_bw_layer_norm, SAVED("bias=t3 input=t0 normalized_shape=l1 weight=t2")},
    {"embedding", "EmbeddingBackward0", SIG("weight", "indices", "padding_idx", "scale_grad_by_freq", "sparse"), 1, 0,
     ct_nn_bw_embedding,
     SAVED("indices=t1 padding_idx=a2?-1 scale_grad_by_freq=a3?False sparse=a4?False weight_sym_argsize_0=y0")},
    {"_leaky_relu", "LeakyReluBackward0", SIG("input", "negative_slope"), 1, 0, ct_nn_bw_leaky_relu,
     SAVED("negative_slope=a1?0.01 self=t0")},
    {"multi_margin_loss", "MultiMarginLossBackward0", SIG("input", "target", "p", "margin", "weight", "reduction"), 1, 0,
     ct_nn_bw_multi_margin_loss, NULL, 16, "multi_margin_loss"},
    {"multilabel_margin_loss", "MultilabelMarginLossBackward0", SIG("input", "target", "reduction"), 1, 0,
     ct_nn_bw_multilabel_margin_loss},
    {"_embedding_bag_dense", "EmbeddingBagBackward0",
     SIG("input", "weight", "offsets", "mode", "per_sample_weights", "include_last_offset", "padding_idx",
         "scale_grad_by_freq"),
     18, 0, ct_nn_bw_embedding_bag},
    /* batch norm / group norm (csrc/norm.c); edges input, weight, bias */
    {"batch_norm", "NativeBatchNormBackward0",
     SIG("input", "weight", "bias", "running_mean", "running_var", "training", "momentum", "eps", "cudnn_enabled"), 7,
     0, ct_norm_bw_batch_norm, SAVED("eps=a7 input=t0 running_mean=t3 running_var=t4 training=a5 weight=t1")},
    {"group_norm", "NativeGroupNormBackward0", SIG("input", "num_groups", "weight", "bias", "eps", "cudnn_enabled"),
     13, 0, ct_norm_bw_group_norm},
    {"_leaky_relu_backward", "LeakyReluBackwardBackward0", SIG("grad", "input", "negative_slope"), 1, 0,
     ct_nn_bw_leaky_relu},
    /* convolutions (csrc/conv.c): one node per call; an unbatched input names it as PyTorch's
     * trailing squeeze does */
    {"conv1d", "ConvolutionBackward0", SIG("input", "weight", "bias", "stride", "padding", "dilation", "groups"), 7, 0,
     ct_conv_bw, ct_conv_node_name,
     SAVED("ConvolutionBackward0: bias_sym_sizes_opt=z2?(0,) dilation=e5?1 groups=a6?1 input=t0 "
           "output_padding=e?0 padding=e4?0 stride=e3?1 transposed=c?False weight=t1")},
    {"conv2d", "ConvolutionBackward0", SIG("input", "weight", "bias", "stride", "padding", "dilation", "groups"), 7, 0,
     ct_conv_bw, ct_conv_node_name,
     SAVED("ConvolutionBackward0: bias_sym_sizes_opt=z2?(0,) dilation=e5?1 groups=a6?1 input=t0 "
           "output_padding=e?0 padding=e4?0 stride=e3?1 transposed=c?False weight=t1")},
    {"_convolution_backward", "ConvolutionBackwardBackward0",
     SIG("grad", "input", "weight", "stride", "padding", "dilation", "groups", "mask"), 7, 0, ct_conv_bw_backward},
    {"conv_transpose1d", "ConvolutionBackward0",
     SIG("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"), 7, 0,
     ct_conv_transpose_bw, ct_conv_node_name},
    {"conv_transpose2d", "ConvolutionBackward0",
     SIG("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"), 7, 0,
     ct_conv_transpose_bw, ct_conv_node_name},
    {"_conv_transpose_backward", "ConvolutionBackwardBackward0", SIG("grad", "input", "weight", "params", "mask"), 7,
     0, ct_conv_bw_backward},
    /* the 3-d convolutions: the same formulas on the 3-d geometry */
    {"conv3d", "ConvolutionBackward0", SIG("input", "weight", "bias", "stride", "padding", "dilation", "groups"), 7, 0,
     ct_conv_bw, ct_conv_node_name,
     SAVED("ConvolutionBackward0: bias_sym_sizes_opt=z2?(0,) dilation=e5?1 groups=a6?1 input=t0 "
           "output_padding=e?0 padding=e4?0 stride=e3?1 transposed=c?False weight=t1")},
    {"conv_transpose3d", "ConvolutionBackward0",
     SIG("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"), 7, 0,
     ct_conv_transpose_bw, ct_conv_node_name},
    {"im2col", "Im2ColBackward0", SIG("input", "kernel_size", "dilation", "padding", "stride"), 1, 0,
     ct_conv_bw_im2col},
    {"col2im", "Col2ImBackward0", SIG("input", "output_size", "kernel_size", "dilation", "padding", "stride"), 1, 0,
     ct_conv_bw_col2im},
    /* nn activations, padding and the losses with a node of their own (csrc/nn_act.c) */
    {"elu", "EluBackward0", SIG("input", "alpha", "scale", "input_scale"), 1, 0, ct_act_bw_elu,
     SAVED("EluBackward0: alpha=a1?1.0 input_scale=a3?1 scale=a2?1 self=t0")},
    {"celu", "CeluBackward0", SIG("input", "alpha"), 1, 0, ct_act_bw_elu},
    {"selu", "EluBackward0", SIG("input"), 1, 0, ct_act_bw_elu},
    {"hardtanh", "HardtanhBackward0", SIG("input", "min_val", "max_val"), 1, 0, ct_act_bw_hardtanh,
     SAVED("max_val=a2?1.0 min_val=a1?-1.0 self=t0")},
    {"hardsigmoid", "HardsigmoidBackward0", SIG("input"), 1, 0, ct_act_bw_hardsigmoid, SAVED("self=t0")},
    {"hardswish", "HardswishBackward0", SIG("input"), 1, 0, ct_act_bw_hardswish, SAVED("self=t0")},
    {"mish", "MishBackward0", SIG("input"), 1, 0, ct_act_bw_mish, SAVED("self=t0")},
    {"log_sigmoid", "LogSigmoidBackward0", SIG("input"), 1, 0, ct_act_bw_log_sigmoid},
    {"softshrink", "SoftshrinkBackward0", SIG("input", "lambd"), 1, 0, ct_act_bw_shrink},
    {"hardshrink", "HardshrinkBackward0", SIG("input", "lambd"), 1, 0, ct_act_bw_shrink},
    {"threshold", "ThresholdBackward0", SIG("input", "threshold", "value"), 1, 0, ct_act_bw_threshold},
    {"prelu", "PreluKernelBackward0", SIG("input", "weight"), 3, 0, ct_act_bw_prelu},
    {"glu", "GluBackward0", SIG("input", "dim"), 1, 0, ct_act_bw_glu},
    {"constant_pad_nd", "ConstantPadNdBackward0", SIG("input", "pad", "value"), 1, NSV, ct_act_bw_constant_pad},
    {"_pad_gather", "ReflectionPad1DBackward0", SIG("input", "pad", "mode"), 1, NSV, ct_act_bw_pad_gather,
     ct_act_name_pad_gather},
    {"huber_loss", "HuberLossBackward0", SIG("input", "target", "reduction", "delta"), 3, 0, ct_act_bw_huber_loss},
    {"soft_margin_loss", "SoftMarginLossBackward0", SIG("input", "target", "reduction"), 3, 0,
     ct_act_bw_soft_margin_loss, NULL, 2, "soft_margin_loss"},
    /* pooling (csrc/pool.c); the 1-d poolings, max_pool2d and adaptive_avg_pool2d are composites of these */
    {"max_pool2d_with_indices", "MaxPool2DWithIndicesBackward0",
     SIG("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode"), 1, CT_F_SAVE_OUT, ct_pool_bw_max_pool2d},
    {"avg_pool2d", "AvgPool2DBackward0",
     SIG("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"), 1, 0,
     ct_pool_bw_avg_pool2d},
    {"_adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", SIG("input", "output_size"), 1, 0,
     ct_pool_bw_adaptive_avg_pool2d},
    {"adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0", SIG("input", "output_size"), 1, CT_F_SAVE_OUT,
     ct_pool_bw_adaptive_max_pool2d},
    {"_max_pool2d_backward", "MaxPool2DWithIndicesBackwardBackward0",
     SIG("grad_output", "input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "indices"), 1, 0,
     ct_pool_bw_max_pool2d_backward},
    {"_avg_pool2d_backward", "AvgPool2DBackwardBackward0",
     SIG("grad_output", "input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
         "divisor_override"),
     1, 0, ct_pool_bw_avg_pool2d_backward},
    {"_adaptive_avg_pool2d_backward", "AdaptiveAvgPool2DBackwardBackward0", SIG("grad_output", "input"), 1, 0,
     ct_pool_bw_adaptive_avg_pool2d_backward},
    {"_adaptive_max_pool2d_backward", "AdaptiveMaxPool2DBackwardBackward0", SIG("grad_output", "input", "indices"), 1,
     0, ct_pool_bw_adaptive_max_pool2d_backward},
    /* the 3-d poolings (csrc/pool.c); max_pool3d and adaptive_avg_pool3d are composites of these */
    {"max_pool3d_with_indices", "MaxPool3DWithIndicesBackward0",
     SIG("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode"), 1, CT_F_SAVE_OUT, ct_pool_bw_max_pool3d},
    {"avg_pool3d", "AvgPool3DBackward0",
     SIG("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"), 1, 0,
     ct_pool_bw_avg_pool3d},
    {"_adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0", SIG("input", "output_size"), 1, 0,
     ct_pool_bw_adaptive_avg_pool3d},
    {"adaptive_max_pool3d", "AdaptiveMaxPool3DBackward0", SIG("input", "output_size"), 1, CT_F_SAVE_OUT,
     ct_pool_bw_adaptive_max_pool3d},
    {"_max_pool3d_backward", "MaxPool3DWithIndicesBackwardBackward0",
     SIG("grad_output", "input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "indices"), 1, 0,
     ct_pool_bw_max_pool3d_backward},
    {"_avg_pool3d_backward", "AvgPool3DBackwardBackward0",
     SIG("grad_output", "input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
         "divisor_override"),
     1, 0, ct_pool_bw_avg_pool3d_backward},
    {"_adaptive_avg_pool3d_backward", "AdaptiveAvgPool3DBackwardBackward0", SIG("grad_output", "input"), 1, 0,
     ct_pool_bw_adaptive_avg_pool3d_backward},
    {"_adaptive_max_pool3d_backward", "AdaptiveMaxPool3DBackwardBackward0", SIG("grad_output", "input", "indices"), 1,
     0, ct_pool_bw_adaptive_max_pool3d_backward},
    /* interpolation (csrc/upsample.c): one node per call, named per mode as PyTorch's */
    {"_upsample", "UpsampleNearest2DBackward0", SIG("input", "mode", "output_size", "align_corners", "scale_factors"),
     1, 0, ct_upsample_bw, ct_upsample_node_name},
    {"_upsample_backward", "UpsampleNearest2DBackwardBackward0",
     SIG("grad_output", "mode", "input_size", "output_size", "align_corners", "scale_factors"), 1, 0,
     ct_upsample_bw_backward, ct_upsample_backward_node_name},
    /* csrc/spatial.c */
    {"pixel_shuffle", "PixelShuffleBackward0", SIG("input", "upscale_factor"), 1, 0, ct_spatial_bw_pixel_shuffle},
    {"pixel_unshuffle", "PixelUnshuffleBackward0", SIG("input", "downscale_factor"), 1, 0,
     ct_spatial_bw_pixel_unshuffle},
    /* the backward ops of the fused kernels are not differentiable themselves */
    {"_nll_backward", "NllLossBackwardBackward0",
     SIG("grad", "input", "target", "weight", "reduction", "ignore_index", "label_smoothing", "flags"), 7, CT_F_NO_DERIV,
     NULL},
    {"_pointwise_loss_backward", "PointwiseLossBackwardBackward0",
     SIG("mode", "grad", "input", "target", "weight", "pos_weight", "reduction", "beta"), 14, CT_F_NO_DERIV, NULL},
    {"_layer_norm_backward", "NativeLayerNormBackwardBackward0",
     SIG("grad", "input", "normalized_shape", "weight", "bias", "eps", "mask"), 11, CT_F_NO_DERIV, NULL},
    {"_batch_norm_backward", "NativeBatchNormBackwardBackward0",
     SIG("grad", "input", "weight", "running_mean", "running_var", "training", "eps", "mask"), 7, CT_F_NO_DERIV, NULL},
    {"_group_norm_backward", "NativeGroupNormBackwardBackward0",
     SIG("grad", "input", "num_groups", "weight", "eps", "mask"), 11, CT_F_NO_DERIV, NULL},
    {"_embedding_backward", "EmbeddingBackwardBackward0",
     SIG("grad", "indices", "num_weights", "padding_idx", "scale_grad_by_freq"), 1, CT_F_NO_DERIV, NULL},
    {NULL},
};
