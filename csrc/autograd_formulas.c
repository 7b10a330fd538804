/* autograd_formulas.c: the backward formula of every differentiable op, and the table that
 * tells autograd.c which ops to record. Formulas are written with ctorch ops (called through
 * the Python number protocol and methods, so that create_graph=True records them too).
 *
 * Conventions: n->args[i] is argument i of the op's signature (sig[0] is the tensor/self);
 * gi[e] is the gradient for the e-th differentiable argument (in sig order); NEEDS(e) tells
 * whether anything wants it. A formula returns 0, or -1 with an exception set. */
#include "autograd.h"
#include "autograd_tmp.h"
#include "device.h"
#include "nn.h"
#include "tensor.h"
#include <math.h>
#include <string.h>

#define NEEDS(e) (n->edge_nodes[(e)] != NULL)
#define META(i) (&n->meta[(i)])
#define ARG(i) (n->args[(i)] != NULL && n->args[(i)] != Py_None ? n->args[(i)] : NULL)

/* --- helpers --------------------------------------------------------------------------------------- */
/* Reduces a broadcast gradient to the shape and dtype of argument i. New reference. */
static PyObject *fit(PyObject *grad, const CtTensorMeta *m)
{
    PyObject *g = ct_sum_to(grad, m->ndim, m->sizes);
    if (g == NULL || CT_TENSOR(g)->dtype == m->dtype) {
        return g;
    }
    PyObject *r = PyObject_CallMethod(g, "to", "(O)", ct_dtype_object(m->dtype));
    Py_DECREF(g);
    return r;
}

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
static PyObject *method0(PyObject *o, const char *name) { return PyObject_CallMethod(o, name, NULL); }

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

/* Output k of node n for use in a formula, new reference. With create_graph (grad mode is on
 * while the engine runs) the alias's history is output k of n itself, as PyTorch saves outputs
 * with their grad_fn: a double backward then flows through n back to its inputs instead of
 * treating the output as a constant. Otherwise the detached alias. */
static PyObject *out_ref(CtNodeObject *n, int k)
{
    CtTensorObject *o = ct_node_output(n, k);
    if (o == NULL) {
        return NULL;
    }
    if (!ct_grad_enabled || !ct_is_floating(o->dtype)) {
        return Py_NewRef(o);
    }
    CtTensorObject *a = ct_view_of(o, o->ndim, o->sizes, o->strides, o->offset);
    if (a == NULL) {
        return NULL;
    }
    a->grad_fn = Py_NewRef((PyObject *)n);
    a->output_nr = k;
    a->requires_grad = true;
    return (PyObject *)a;
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
        PyObject *q = PyNumber_TrueDivide(self, other);
        PyObject *q2 = q ? PyNumber_TrueDivide(q, other) : NULL;
        PyObject *t = q2 ? mul(g[0], q2) : NULL;
        PyObject *v = t ? PyNumber_Negative(t) : NULL;
        Py_XDECREF(q);
        Py_XDECREF(q2);
        Py_XDECREF(t);
        if (set_fit(&gi[1], v, META(1)) < 0) {
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

/* gi = g * f(x, out) for unary ops, f given as a small expression over tensors */
typedef PyObject *(*LocalGrad)(PyObject *x, PyObject *out);

static int unary_with(CtNodeObject *n, PyObject *const *g, PyObject **gi, LocalGrad f, bool needs_x, bool needs_out)
{
    PyObject *x = needs_x ? (PyObject *)ct_node_tensor(n, 0) : NULL;
    PyObject *out = needs_out ? out_ref(n, 0) : NULL;
    if ((needs_x && x == NULL) || (needs_out && out == NULL)) {
        Py_XDECREF(out);
        return -1;
    }
    PyObject *local = f(x, out);
    Py_XDECREF(out);
    if (local == NULL) {
        return -1;
    }
    PyObject *v = mul(g[0], local);
    Py_DECREF(local);
    return set_fit(&gi[0], v, META(0));
}

static PyObject *lg_sign(PyObject *x, PyObject *o) { return method0(x, "sign"); }
static PyObject *lg_out(PyObject *x, PyObject *o) { return Py_NewRef(o); }
static PyObject *lg_recip_x(PyObject *x, PyObject *o) { return method0(x, "reciprocal"); }
static PyObject *lg_cos(PyObject *x, PyObject *o) { return method0(x, "cos"); }
static PyObject *lg_neg_sin(PyObject *x, PyObject *o)
{
    PyObject *s = method0(x, "sin");
    PyObject *r = s ? PyNumber_Negative(s) : NULL;
    Py_XDECREF(s);
    return r;
}
static PyObject *one_minus_sq(PyObject *o) /* 1 - o^2 */
{
    PyObject *sq = mul(o, o);
    PyObject *one = PyFloat_FromDouble(1.0);
    PyObject *r = sq && one ? PyNumber_Subtract(one, sq) : NULL;
    Py_XDECREF(sq);
    Py_XDECREF(one);
    return r;
}
static PyObject *lg_tanh(PyObject *x, PyObject *o) { return one_minus_sq(o); }
static PyObject *lg_tan(PyObject *x, PyObject *o) /* 1 + o^2 */
{
    PyObject *sq = mul(o, o);
    PyObject *one = PyFloat_FromDouble(1.0);
    PyObject *r = sq && one ? PyNumber_Add(one, sq) : NULL;
    Py_XDECREF(sq);
    Py_XDECREF(one);
    return r;
}
static PyObject *lg_sigmoid(PyObject *x, PyObject *o) /* o (1 - o) */
{
    PyObject *one = PyFloat_FromDouble(1.0);
    PyObject *c = one ? PyNumber_Subtract(one, o) : NULL;
    PyObject *r = c ? mul(o, c) : NULL;
    Py_XDECREF(one);
    Py_XDECREF(c);
    return r;
}
static PyObject *lg_sqrt(PyObject *x, PyObject *o) /* 0.5 / o */
{
    PyObject *h = PyFloat_FromDouble(0.5);
    PyObject *r = h ? PyNumber_TrueDivide(h, o) : NULL;
    Py_XDECREF(h);
    return r;
}
static PyObject *lg_rsqrt(PyObject *x, PyObject *o) /* -0.5 o^3 */
{
    PyObject *o2 = mul(o, o);
    PyObject *o3 = o2 ? mul(o2, o) : NULL;
    PyObject *c = PyFloat_FromDouble(-0.5);
    PyObject *r = o3 && c ? mul(o3, c) : NULL;
    Py_XDECREF(o2);
    Py_XDECREF(o3);
    Py_XDECREF(c);
    return r;
}
static PyObject *lg_reciprocal(PyObject *x, PyObject *o) /* -o^2 */
{
    PyObject *o2 = mul(o, o);
    PyObject *r = o2 ? PyNumber_Negative(o2) : NULL;
    Py_XDECREF(o2);
    return r;
}
static PyObject *scaled_recip(PyObject *x, double c) /* 1 / (c x) */
{
    PyObject *s = PyFloat_FromDouble(c);
    PyObject *d = s ? mul(x, s) : NULL;
    PyObject *r = d ? method0(d, "reciprocal") : NULL;
    Py_XDECREF(s);
    Py_XDECREF(d);
    return r;
}
static PyObject *lg_log2(PyObject *x, PyObject *o) { return scaled_recip(x, M_LN2); }
static PyObject *lg_log10(PyObject *x, PyObject *o) { return scaled_recip(x, M_LN10); }
static PyObject *lg_log1p(PyObject *x, PyObject *o)
{
    PyObject *one = PyFloat_FromDouble(1.0);
    PyObject *d = one ? PyNumber_Add(x, one) : NULL;
    PyObject *r = d ? method0(d, "reciprocal") : NULL;
    Py_XDECREF(one);
    Py_XDECREF(d);
    return r;
}
static PyObject *lg_expm1(PyObject *x, PyObject *o)
{
    PyObject *one = PyFloat_FromDouble(1.0);
    PyObject *r = one ? PyNumber_Add(o, one) : NULL;
    Py_XDECREF(one);
    return r;
}
static PyObject *lg_relu(PyObject *x, PyObject *o)
{
    PyObject *zero = PyFloat_FromDouble(0.0);
    PyObject *mask = zero ? PyObject_RichCompare(o, zero, Py_GT) : NULL;
    PyObject *r = mask ? PyObject_CallMethod(mask, "to", "(O)", ct_dtype_object(CT_TENSOR(o)->dtype)) : NULL;
    Py_XDECREF(zero);
    Py_XDECREF(mask);
    return r;
}
static PyObject *lg_exp2(PyObject *x, PyObject *o)
{
    PyObject *c = PyFloat_FromDouble(M_LN2);
    PyObject *r = c ? mul(o, c) : NULL;
    Py_XDECREF(c);
    return r;
}
static PyObject *lg_sinh(PyObject *x, PyObject *o) { return method0(x, "cosh"); }
static PyObject *lg_cosh(PyObject *x, PyObject *o) { return method0(x, "sinh"); }
static PyObject *lg_asin(PyObject *x, PyObject *o) /* 1/sqrt(1-x^2) */
{
    PyObject *c = one_minus_sq(x);
    PyObject *r = c ? method0(c, "rsqrt") : NULL;
    Py_XDECREF(c);
    return r;
}
static PyObject *lg_acos(PyObject *x, PyObject *o)
{
    PyObject *a = lg_asin(x, o);
    PyObject *r = a ? PyNumber_Negative(a) : NULL;
    Py_XDECREF(a);
    return r;
}
static PyObject *lg_atan(PyObject *x, PyObject *o) /* 1/(1+x^2) */
{
    PyObject *t = lg_tan(NULL, x);
    PyObject *r = t ? method0(t, "reciprocal") : NULL;
    Py_XDECREF(t);
    return r;
}
static PyObject *lg_silu(PyObject *x, PyObject *o) /* s (1 + x (1 - s)) */
{
    PyObject *s = method0(x, "sigmoid");
    PyObject *one = PyFloat_FromDouble(1.0);
    PyObject *c = s && one ? PyNumber_Subtract(one, s) : NULL;
    PyObject *xc = c ? mul(x, c) : NULL;
    PyObject *p = xc ? PyNumber_Add(one, xc) : NULL;
    PyObject *r = p ? mul(s, p) : NULL;
    Py_XDECREF(s);
    Py_XDECREF(one);
    Py_XDECREF(c);
    Py_XDECREF(xc);
    Py_XDECREF(p);
    return r;
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
CT_UNARY_BW(tanh, lg_tanh, false, true)
CT_UNARY_BW(sigmoid, lg_sigmoid, false, true)
CT_UNARY_BW(relu, lg_relu, false, true)
CT_UNARY_BW(sinh, lg_sinh, true, false)
CT_UNARY_BW(cosh, lg_cosh, true, false)
CT_UNARY_BW(asin, lg_asin, true, false)
CT_UNARY_BW(acos, lg_acos, true, false)
CT_UNARY_BW(atan, lg_atan, true, false)
CT_UNARY_BW(silu, lg_silu, true, false)

static int bw_square(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    PyObject *two = PyFloat_FromDouble(2.0);
    PyObject *t = x && two ? mul(x, two) : NULL;
    Py_XDECREF(two);
    PyObject *v = t ? mul(g[0], t) : NULL;
    Py_XDECREF(t);
    return set_fit(&gi[0], v, META(0));
}

/* gelu: d/dx [x Phi(x)] = Phi(x) + x phi(x); tanh approximation differentiated exactly. */
static int bw_gelu(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtTensorObject *xt = ct_node_tensor(n, 0);
    if (xt == NULL) {
        return -1;
    }
    PyObject *x = (PyObject *)xt;
    PyObject *approx = ARG(1);
    bool use_tanh = approx != NULL && PyUnicode_Check(approx) && PyUnicode_CompareWithASCIIString(approx, "tanh") == 0;
    PyObject *local = NULL;
    if (!use_tanh) {
        PyObject *s = PyFloat_FromDouble(M_SQRT1_2);
        PyObject *xs = s ? mul(x, s) : NULL;
        PyObject *erf = xs ? method0(xs, "erf") : NULL;
        PyObject *one = PyFloat_FromDouble(1.0), *half = PyFloat_FromDouble(0.5);
        PyObject *e1 = erf ? PyNumber_Add(erf, one) : NULL;
        PyObject *cdf = e1 ? mul(e1, half) : NULL;
        PyObject *x2 = mul(x, x);
        PyObject *mh = PyFloat_FromDouble(-0.5);
        PyObject *ex = x2 ? mul(x2, mh) : NULL;
        PyObject *pdf0 = ex ? method0(ex, "exp") : NULL;
        PyObject *c = PyFloat_FromDouble(0.3989422804014327); /* 1/sqrt(2 pi) */
        PyObject *pdf = pdf0 ? mul(pdf0, c) : NULL;
        PyObject *xp = pdf ? mul(x, pdf) : NULL;
        local = xp && cdf ? PyNumber_Add(cdf, xp) : NULL;
        Py_XDECREF(s); Py_XDECREF(xs); Py_XDECREF(erf); Py_XDECREF(one); Py_XDECREF(half); Py_XDECREF(e1);
        Py_XDECREF(cdf); Py_XDECREF(x2); Py_XDECREF(mh); Py_XDECREF(ex); Py_XDECREF(pdf0); Py_XDECREF(c);
        Py_XDECREF(pdf); Py_XDECREF(xp);
    } else {
        /* u = k (x + 0.044715 x^3), y = 0.5 x (1 + tanh u)
         * dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 * 0.044715 x^2) */
        const double k = 0.7978845608028654, a = 0.044715;
        PyObject *x2 = mul(x, x);
        PyObject *ca = PyFloat_FromDouble(a), *ck = PyFloat_FromDouble(k), *one = PyFloat_FromDouble(1.0);
        PyObject *half = PyFloat_FromDouble(0.5), *c3a = PyFloat_FromDouble(3 * a);
        PyObject *ax2 = x2 ? mul(x2, ca) : NULL;
        PyObject *in = ax2 ? PyNumber_Add(one, ax2) : NULL;
        PyObject *xin = in ? mul(x, in) : NULL;
        PyObject *u = xin ? mul(xin, ck) : NULL;
        PyObject *t = u ? method0(u, "tanh") : NULL;
        PyObject *t1 = t ? PyNumber_Add(one, t) : NULL;
        PyObject *left = t1 ? mul(t1, half) : NULL;
        PyObject *sech = t ? one_minus_sq(t) : NULL;
        PyObject *b2 = x2 ? mul(x2, c3a) : NULL;
        PyObject *b = b2 ? PyNumber_Add(one, b2) : NULL;
        PyObject *kb = b ? mul(b, ck) : NULL;
        PyObject *hx = mul(x, half);
        PyObject *r1 = sech && kb ? mul(sech, kb) : NULL;
        PyObject *right = r1 && hx ? mul(hx, r1) : NULL;
        local = left && right ? PyNumber_Add(left, right) : NULL;
        Py_XDECREF(x2); Py_XDECREF(ca); Py_XDECREF(ck); Py_XDECREF(one); Py_XDECREF(half); Py_XDECREF(c3a);
        Py_XDECREF(ax2); Py_XDECREF(in); Py_XDECREF(xin); Py_XDECREF(u); Py_XDECREF(t); Py_XDECREF(t1);
        Py_XDECREF(left); Py_XDECREF(sech); Py_XDECREF(b2); Py_XDECREF(b); Py_XDECREF(kb); Py_XDECREF(hx);
        Py_XDECREF(r1); Py_XDECREF(right);
    }
    if (local == NULL) {
        return -1;
    }
    PyObject *v = mul(g[0], local);
    Py_DECREF(local);
    return set_fit(&gi[0], v, META(0));
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
    Tmp tt = {0}, *t = &tt;
    int rc = -1;
    if (NEEDS(0)) {
        PyObject *v;
        if (!META(1)->is_tensor) {
            double ev = PyFloat_AsDouble(e);
            if (ev == -1.0 && PyErr_Occurred()) {
                goto done;
            }
            v = ev == 0.0 ? t_keep(t, zeros_for(META(0))) : t_mul(t, g[0], t_mul(t, e, t_pow(t, x, t_num(t, ev - 1.0))));
        } else {
            PyObject *local = t_mul(t, e, t_pow(t, x, t_sub(t, e, t_num(t, 1.0))));
            v = t_mul(t, g[0], t_where(t, t_cmp(t, e, t_num(t, 0.0), Py_EQ), t_num(t, 0.0), local));
        }
        if (set_fit(&gi[0], t_take(t, v), META(0)) < 0) {
            goto done;
        }
    }
    if (NEEDS(1)) {
        PyObject *p = t_pow(t, x, e);
        PyObject *v;
        if (META(0)->is_tensor) {
            PyObject *local = t_mul(t, p, t_meth0(t, x, "log"));
            PyObject *zero = t_num(t, 0.0);
            PyObject *base0 = t_cmpf(t, x, zero, Py_EQ, g[0]);
            PyObject *ege0 = t_cmpf(t, e, zero, Py_GE, g[0]);
            PyObject *cond = t_cmp(t, t_mul(t, base0, ege0), zero, Py_GT);
            v = t_mul(t, g[0], t_where(t, cond, zero, local));
        } else {
            double xv = PyFloat_AsDouble(x);
            if (xv == -1.0 && PyErr_Occurred()) {
                goto done;
            }
            PyObject *local = t_mul(t, p, t_num(t, log(xv)));
            if (xv == 0.0) {
                local = t_where(t, t_cmp(t, e, t_num(t, 0.0), Py_GE), t_num(t, 0.0), local);
            }
            v = t_mul(t, g[0], local);
        }
        if (set_fit(&gi[1], t_take(t, v), META(1)) < 0) {
            goto done;
        }
    }
    rc = 0;
done:
    tmp_free(t);
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
    Tmp tt = {0}, *t = &tt;
    PyObject *G = g[0];
    PyObject *one = t_num(t, 1.0), *half = t_num(t, 0.5);
    PyObject *wx = NULL, *wlo = NULL, *whi = NULL;
    int rc = -1;
    if (!lo_t && !hi_t) {
        wx = one;
        if (lo != NULL) {
            wx = t_mul(t, wx, t_cmpf(t, x, lo, Py_GT, G));
        }
        if (hi != NULL) {
            wx = t_mul(t, wx, t_cmpf(t, x, hi, Py_LT, G));
        }
    } else if (lo == NULL || hi == NULL) {
        PyObject *b = lo != NULL ? lo : hi;
        int toward = lo != NULL ? Py_LT : Py_GT, away = lo != NULL ? Py_GT : Py_LT;
        PyObject *tie = t_mul(t, t_cmpf(t, x, b, Py_EQ, G), half);
        wx = t_sub(t, t_sub(t, one, t_cmpf(t, x, b, toward, G)), tie);
        PyObject *wb = t_sub(t, t_sub(t, one, t_cmpf(t, x, b, away, G)), tie);
        if (lo != NULL) {
            wlo = wb;
        } else {
            whi = wb;
        }
    } else {
        PyObject *ordered = t_cmpf(t, lo, hi, Py_LE, G); /* min <= max (false if either is nan) */
        PyObject *open = t_cmpf(t, lo, hi, Py_LT, G);
        PyObject *inverted = t_cmpf(t, hi, lo, Py_LT, G);
        PyObject *tie_lo = t_mul(t, t_mul(t, t_cmpf(t, x, lo, Py_EQ, G), open), half);
        PyObject *tie_hi = t_mul(t, t_mul(t, t_cmpf(t, x, hi, Py_EQ, G), open), half);
        PyObject *below = t_cmpf(t, x, lo, Py_LT, G), *above = t_cmpf(t, x, hi, Py_GT, G);
        PyObject *outside = t_cmpf(t, t_add(t, below, above), t_num(t, 0.0), Py_GT, G);
        wx = t_sub(t, t_sub(t, t_sub(t, one, outside), tie_lo), tie_hi);
        wlo = t_mul(t, ordered, t_add(t, below, tie_lo));
        whi = t_add(t, inverted, t_mul(t, ordered, t_add(t, above, tie_hi)));
    }
    if (t->failed) {
        goto done;
    }
    if (NEEDS(0) && set_fit(&gi[0], t_take(t, t_mul(t, G, wx)), META(0)) < 0) {
        goto done;
    }
    if (lo_t && e_lo < n->num_edges && NEEDS(e_lo) && wlo != NULL &&
        set_fit(&gi[e_lo], t_take(t, t_mul(t, G, wlo)), META(e_lo)) < 0) {
        goto done;
    }
    if (hi_t && e_hi < n->num_edges && NEEDS(e_hi) && whi != NULL &&
        set_fit(&gi[e_hi], t_take(t, t_mul(t, G, whi)), META(e_hi)) < 0) {
        goto done;
    }
    rc = 0;
done:
    tmp_free(t);
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
    bool is_min = strcmp(n->formula->op, "clamp_min") == 0;
    PyObject *bound = ARG(1);
    bool bound_t = bound != NULL && META(1)->is_tensor;
    if (bound_t && (bound = (PyObject *)ct_node_tensor(n, 1)) == NULL) {
        return -1;
    }
    return bw_clamp_impl(n, g, gi, is_min ? bound : NULL, is_min ? NULL : bound, is_min && bound_t, !is_min && bound_t,
                         1, 1);
}

/* where(condition, input, other) */
static int bw_where(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *cond = (PyObject *)ct_node_tensor(n, 0);
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
    if (NEEDS(0) && set_fit(&gi[0], PyObject_CallFunction(where, "OOO", cond, g[0], zero), META(1)) < 0) {
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
    Tmp tt = {0}, *t = &tt;
    PyObject *G = g[0], *one = t_num(t, 1.0);
    PyObject *win = t_cmpf(t, a, b, is_max ? Py_GT : Py_LT, G), *lose = t_cmpf(t, a, b, is_max ? Py_LT : Py_GT, G);
    PyObject *tie = t_mul(t, t_cmpf(t, a, b, Py_EQ, G), t_num(t, 0.5));
    PyObject *wa, *wb;
    if (is_f) {
        wa = t_add(t, t_add(t, win, tie), t_cmpf(t, b, b, Py_NE, G));
        wb = t_sub(t, one, wa);
    } else {
        wa = t_sub(t, t_sub(t, one, lose), tie);
        wb = t_sub(t, t_sub(t, one, win), tie);
    }
    int rc = -1;
    if (t->failed) {
        goto done;
    }
    if (NEEDS(0) && set_fit(&gi[0], t_take(t, t_mul(t, G, wa)), META(0)) < 0) {
        goto done;
    }
    if (NEEDS(1) && set_fit(&gi[1], t_take(t, t_mul(t, G, wb)), META(1)) < 0) {
        goto done;
    }
    rc = 0;
done:
    tmp_free(t);
    return rc;
}

/* lerp(input, end, weight) = input + weight (end - input) */
static int bw_lerp(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *w = META(2)->is_tensor ? (PyObject *)ct_node_tensor(n, 2) : n->args[2];
    if (w == NULL) {
        return -1;
    }
    PyObject *one = PyFloat_FromDouble(1.0);
    PyObject *omw = one ? PyNumber_Subtract(one, w) : NULL;
    Py_XDECREF(one);
    if (omw == NULL) {
        return -1;
    }
    int rc = -1;
    if (NEEDS(0) && set_fit(&gi[0], mul(g[0], omw), META(0)) < 0) {
        goto done;
    }
    if (NEEDS(1) && set_fit(&gi[1], mul(g[0], w), META(1)) < 0) {
        goto done;
    }
    if (NEEDS(2)) {
        PyObject *a = (PyObject *)ct_node_tensor(n, 0), *b = (PyObject *)ct_node_tensor(n, 1);
        PyObject *d = a && b ? PyNumber_Subtract(b, a) : NULL;
        PyObject *v = d ? mul(g[0], d) : NULL;
        Py_XDECREF(d);
        if (set_fit(&gi[2], v, META(2)) < 0) {
            goto done;
        }
    }
    rc = 0;
done:
    Py_DECREF(omw);
    return rc;
}

/* addcmul(input, tensor1, tensor2, value=1) = input + value t1 t2 ; addcdiv: input + value t1 / t2 */
static int bw_addcmul(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    bool is_div = strstr(n->formula->op, "addcdiv") != NULL;
    PyObject *value = scalar_or(ARG(3), 1.0);
    PyObject *gv = value ? mul(g[0], value) : NULL;
    Py_XDECREF(value);
    if (gv == NULL) {
        return -1;
    }
    int rc = -1;
    PyObject *t1 = (PyObject *)ct_node_tensor(n, 1), *t2 = (PyObject *)ct_node_tensor(n, 2);
    if (t1 == NULL || t2 == NULL) {
        goto done;
    }
    if (NEEDS(0) && set_fit(&gi[0], Py_NewRef(g[0]), META(0)) < 0) {
        goto done;
    }
    if (NEEDS(1) && set_fit(&gi[1], is_div ? PyNumber_TrueDivide(gv, t2) : mul(gv, t2), META(1)) < 0) {
        goto done;
    }
    if (NEEDS(2)) {
        PyObject *v;
        if (is_div) { /* -value g t1 / t2^2 */
            PyObject *q = PyNumber_TrueDivide(t1, t2);
            PyObject *q2 = q ? PyNumber_TrueDivide(q, t2) : NULL;
            PyObject *m = q2 ? mul(gv, q2) : NULL;
            v = m ? PyNumber_Negative(m) : NULL;
            Py_XDECREF(q);
            Py_XDECREF(q2);
            Py_XDECREF(m);
        } else {
            v = mul(gv, t1);
        }
        if (set_fit(&gi[2], v, META(2)) < 0) {
            goto done;
        }
    }
    rc = 0;
done:
    Py_DECREF(gv);
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
        PyObject *r = shape ? PyObject_CallMethod(g, "reshape", "(O)", shape) : NULL;
        Py_XDECREF(shape);
        Py_SETREF(g, r);
        if (g == NULL) {
            return NULL;
        }
    }
    PyObject *shape = shape_of(m);
    PyObject *r = shape ? PyObject_CallMethod(g, "expand", "(O)", shape) : NULL;
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

/* var/std(input, dim, *, correction, keepdim, unbiased): g * 2 (x - mean) / max(0, N - correction);
 * std: g (x - mean) / (max(0, N - correction) std), zero where std == 0 (constant rows). */
static int bw_var(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    bool is_std = strncmp(n->formula->op, "std", 3) == 0;
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL) {
        return -1;
    }
    PyObject *dims = ARG(1);
    double correction = 1.0;
    if (dims != NULL && PyBool_Check(dims)) { /* var(unbiased) */
        correction = dims == Py_True ? 1.0 : 0.0;
        dims = NULL;
    }
    if (ARG(3) != NULL) {
        correction = PyFloat_AsDouble(ARG(3));
    } else if (ARG(5) != NULL) {
        correction = PyObject_IsTrue(ARG(5)) ? 1.0 : 0.0;
    } else if (ARG(2) != NULL && PyBool_Check(ARG(2))) { /* var(dim, unbiased, keepdim) */
        correction = ARG(2) == Py_True ? 1.0 : 0.0;
    }
    if (PyErr_Occurred()) {
        return -1;
    }
    bool keepdim = arg_true(ARG(4));
    int64_t count = reduced_count(META(0), dims);
    if (count < 0) {
        return -1;
    }
    double denom = fmax(0.0, (double)count - correction);
    Tmp tt = {0}, *t = &tt;
    PyObject *mean = dims ? t_keep(t, PyObject_CallMethod(x, "mean", "(OO)", dims, Py_True)) : t_meth0(t, x, "mean");
    PyObject *centered = t_sub(t, x, mean);
    PyObject *gx = t->failed ? NULL : t_keep(t, unreduce(g[0], META(0), dims, keepdim));
    PyObject *v = t_mul(t, t_mul(t, gx, centered), t_num(t, (is_std ? 1.0 : 2.0) / denom));
    if (is_std && !t->failed) {
        PyObject *out = t_keep(t, out_ref(n, 0));
        PyObject *ou = t->failed ? NULL : t_keep(t, unreduce(out, META(0), dims, keepdim));
        PyObject *zero = t_num(t, 0.0);
        v = t_where(t, t_cmp(t, ou, zero, Py_EQ), zero, t_div(t, v, ou));
    }
    int rc = set_fit(&gi[0], t_take(t, v), META(0));
    tmp_free(t);
    return rc;
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
    Tmp tt = {0}, *t = &tt;
    PyObject *zero = t_num(t, 0.0);
    PyObject *is0 = t_cmp(t, x, zero, Py_EQ);
    PyObject *x1 = t_where(t, is0, t_num(t, 1.0), x); /* x with its zeros replaced by ones */
    PyObject *p1 = NULL; /* product of the nonzero elements of each slice, keepdim */
    if (!t->failed) {
        p1 = dims ? t_keep(t, PyObject_CallMethod(x1, "prod", "(OO)", dims, Py_True)) : t_meth0(t, x1, "prod");
    }
    PyObject *nzeros = t_sum_keep(t, t_float(t, is0, x), dims);
    PyObject *one_zero = t_where(t, is0, p1, zero);
    PyObject *local = t_where(t, t_cmp(t, nzeros, zero, Py_EQ), t_div(t, p1, x1),
                              t_where(t, t_cmp(t, nzeros, t_num(t, 1.0), Py_EQ), one_zero, zero));
    PyObject *gu = t->failed ? NULL : t_keep(t, unreduce(g[0], META(0), dims, keepdim));
    int rc = set_fit(&gi[0], t_take(t, t_mul(t, gu, local)), META(0));
    tmp_free(t);
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
    Tmp tt = {0}, *t = &tt;
    PyObject *ou = t_keep(t, unreduce(out, META(0), dims, keepdim));
    PyObject *mf = t_cmpf(t, x, ou, Py_EQ, g[0]);
    if (full) {
        mf = t_add(t, mf, t_mul(t, t_cmpf(t, x, x, Py_NE, g[0]), t_cmpf(t, ou, ou, Py_NE, g[0])));
    }
    PyObject *cnt = NULL;
    if (!t->failed) {
        cnt = dims ? t_keep(t, PyObject_CallMethod(mf, "sum", "(OO)", dims, keepdim ? Py_True : Py_False))
                   : t_meth0(t, mf, "sum");
    }
    PyObject *share = t_div(t, g[0], cnt);
    PyObject *su = t->failed ? NULL : t_keep(t, unreduce(share, META(0), dims, keepdim));
    int rc = set_fit(&gi[0], t_take(t, t_mul(t, su, mf)), META(0));
    tmp_free(t);
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
        Py_SETREF(gv, PyObject_CallMethod(gv, "unsqueeze", "(O)", dim));
        Py_SETREF(idx, idx ? PyObject_CallMethod(idx, "unsqueeze", "(O)", dim) : NULL);
    }
    PyObject *v = z && gv && idx ? PyObject_CallMethod(z, "scatter", "(OOO)", dim, idx, gv) : NULL;
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

static int bw_sort(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *dim = ARG(1);
    PyObject *m1 = dim ? NULL : PyLong_FromLong(-1);
    int r = bw_values_indices(n, g, gi, dim ? dim : m1, true);
    Py_XDECREF(m1);
    return r;
}

static int bw_topk(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *dim = ARG(2);
    PyObject *m1 = dim ? NULL : PyLong_FromLong(-1);
    int r = bw_values_indices(n, g, gi, dim ? dim : m1, true);
    Py_XDECREF(m1);
    return r;
}

static int bw_logsumexp(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL) {
        return -1;
    }
    bool keepdim = arg_true(ARG(2));
    Tmp tt = {0}, *t = &tt;
    PyObject *out = t_keep(t, out_ref(n, 0));
    PyObject *ou = t->failed ? NULL : t_keep(t, unreduce(out, META(0), ARG(1), keepdim));
    PyObject *e = t_meth0(t, t_sub(t, x, ou), "exp");
    PyObject *gu = t->failed ? NULL : t_keep(t, unreduce(g[0], META(0), ARG(1), keepdim));
    int rc = set_fit(&gi[0], t_take(t, t_mul(t, gu, e)), META(0));
    tmp_free(t);
    return rc;
}

/* norm(input, p='fro', dim=None, keepdim=False), g times:
 *   p = 0: none;  p = 1: sign(x);  p = +-inf: sign(x) shared evenly among the elements with
 *   |x| == norm (zero elsewhere, and where the norm is nan);
 *   p < 1: sign(x) |x|^(p-1) norm^(1-p), zero where x == 0;
 *   p > 1: sign(x) |x|^(p-1) / norm^(p-1), zero where the norm is 0. */
static int bw_norm(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0);
    if (x == NULL) {
        return -1;
    }
    double p = 2.0;
    PyObject *pobj = ARG(1);
    if (pobj != NULL && !PyUnicode_Check(pobj)) {
        p = PyFloat_AsDouble(pobj);
        if (p == -1.0 && PyErr_Occurred()) {
            return -1;
        }
    }
    if (p == 0.0) { /* piecewise constant: no gradient at all (x.grad stays None, as in PyTorch) */
        return 0;
    }
    PyObject *dims = ARG(2);
    bool keepdim = arg_true(ARG(3));
    Tmp tt = {0}, *t = &tt;
    PyObject *zero = t_num(t, 0.0);
    PyObject *out = t_keep(t, out_ref(n, 0));
    PyObject *ou = t->failed ? NULL : t_keep(t, unreduce(out, META(0), dims, keepdim));
    PyObject *gu = t->failed ? NULL : t_keep(t, unreduce(g[0], META(0), dims, keepdim));
    PyObject *sg = t_meth0(t, x, "sign");
    PyObject *v = NULL;
    if (isinf(p)) {
        PyObject *mask = t_cmp(t, t_meth0(t, x, "abs"), ou, Py_EQ);
        PyObject *cnt = t_sum_keep(t, t_float(t, mask, x), dims);
        v = t_where(t, mask, t_div(t, t_mul(t, gu, sg), cnt), zero);
    } else if (p == 1.0) {
        v = t_mul(t, gu, sg);
    } else if (p == 2.0) {
        v = t_where(t, t_cmp(t, ou, zero, Py_EQ), zero, t_mul(t, gu, t_div(t, x, ou)));
    } else if (p < 1.0) {
        PyObject *s = t_mul(t, sg, t_pow(t, t_meth0(t, x, "abs"), t_num(t, p - 1.0)));
        s = t_where(t, t_cmp(t, x, zero, Py_EQ), zero, s);
        v = t_mul(t, t_mul(t, gu, s), t_pow(t, ou, t_num(t, 1.0 - p)));
    } else {
        PyObject *s = t_mul(t, sg, t_pow(t, t_meth0(t, x, "abs"), t_num(t, p - 1.0)));
        v = t_where(t, t_cmp(t, ou, zero, Py_EQ), zero, t_mul(t, gu, t_div(t, s, t_pow(t, ou, t_num(t, p - 1.0)))));
    }
    int rc = set_fit(&gi[0], t_take(t, v), META(0));
    tmp_free(t);
    return rc;
}

/* softmax(input, dim): out (g - sum(g out)); log_softmax: g - exp(out) sum(g) */
static int bw_softmax(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *dim = ARG(1);
    Tmp tt = {0}, *t = &tt;
    PyObject *out = t_keep(t, out_ref(n, 0));
    PyObject *go = t_mul(t, g[0], out);
    PyObject *s = t->failed ? NULL : t_keep(t, PyObject_CallMethod(go, "sum", "(OO)", dim, Py_True));
    int rc = set_fit(&gi[0], t_take(t, t_mul(t, out, t_sub(t, g[0], s))), META(0));
    tmp_free(t);
    return rc;
}

static int bw_log_softmax(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *dim = ARG(1);
    Tmp tt = {0}, *t = &tt;
    PyObject *out = t_keep(t, out_ref(n, 0));
    PyObject *s = t->failed ? NULL : t_keep(t, PyObject_CallMethod(g[0], "sum", "(OO)", dim, Py_True));
    PyObject *e = t_meth0(t, out, "exp");
    int rc = set_fit(&gi[0], t_take(t, t_sub(t, g[0], t_mul(t, e, s))), META(0));
    tmp_free(t);
    return rc;
}

static int bw_cumsum(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *dim = ARG(1);
    PyObject *dims = dim ? PyTuple_Pack(1, dim) : NULL;
    PyObject *f = dims ? PyObject_CallMethod(g[0], "flip", "(O)", dims) : NULL;
    PyObject *c = f ? PyObject_CallMethod(f, "cumsum", "(O)", dim) : NULL;
    PyObject *v = c ? PyObject_CallMethod(c, "flip", "(O)", dims) : NULL;
    Py_XDECREF(dims); Py_XDECREF(f); Py_XDECREF(c);
    return set_fit(&gi[0], v, META(0));
}

/* --- views and shape changes --------------------------------------------------------------------------- */
static int bw_reshape(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *shape = shape_of(META(0));
    PyObject *v = shape ? PyObject_CallMethod(g[0], "reshape", "(O)", shape) : NULL;
    Py_XDECREF(shape);
    return set_fit(&gi[0], v, META(0));
}

static int bw_transpose(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *v;
    if (ARG(1) != NULL && ARG(2) != NULL) {
        v = PyObject_CallMethod(g[0], "transpose", "(OO)", ARG(1), ARG(2));
    } else {
        v = PyObject_CallMethod(g[0], "t", NULL);
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
    PyObject *v = inv ? PyObject_CallMethod(g[0], "permute", "(O)", inv) : NULL;
    Py_XDECREF(inv);
    return set_fit(&gi[0], v, META(0));
}

static int bw_movedim(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *v = PyObject_CallMethod(g[0], "movedim", "(OO)", ARG(2), ARG(1));
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
    PyObject *v = dev ? PyObject_CallMethod(g[0], "to", "(OO)", dev, ct_dtype_object(META(0)->dtype)) : NULL;
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
    PyObject *pieces = PyObject_CallMethod(g[0], "split", "(OO)", sizes, d0);
    if (pieces == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(tensors, i);
        PyObject *p = PyTuple_GET_ITEM(pieces, i);
        if (CT_TENSOR(t)->ndim != CT_TENSOR(p)->ndim) {
            gi[i] = PyObject_CallMethod(p, "reshape", "(N)", PyObject_GetAttrString(t, "shape"));
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
    PyObject *pieces = d0 ? PyObject_CallMethod(g[0], "unbind", "(O)", d0) : NULL;
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
    ar = PyObject_CallMethod(mod, "arange", "(L)", (long long)numel);
    if (ar == NULL) {
        goto done;
    }
    Py_SETREF(ar, PyObject_CallMethod(ar, "to", "(O)", dev));
    Py_SETREF(ar, ar ? PyObject_CallMethod(ar, "reshape", "(O)", shape) : NULL);
    pos = ar ? PyObject_GetItem(ar, key) : NULL;
    Py_SETREF(pos, pos ? PyObject_CallMethod(pos, "reshape", "(i)", -1) : NULL);
    flat = PyObject_CallMethod(z, "view", "(i)", -1);
    PyObject *gf = pos && flat ? PyObject_CallMethod(g[0], "reshape", "(i)", -1) : NULL;
    /* scatter_add is recorded: with create_graph the result stays a function of g */
    r = gf ? PyObject_CallMethod(flat, "scatter_add", "(iOO)", 0, pos, gf) : NULL;
    Py_XDECREF(gf);
    if (r == NULL) {
        goto done;
    }
    gi[0] = PyObject_CallMethod(r, "reshape", "(O)", shape);
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
    PyObject *v = z && idx ? PyObject_CallMethod(z, "scatter_add", "(OOO)", ARG(1), idx, g[0]) : NULL;
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
        v = PyObject_CallMethod(z, "index_add", "(OOO)", ARG(1), idx, g[0]);
    } else if (z != NULL && idx != NULL) {
        long long d = PyLong_AsLongLong(ARG(1));
        int wd;
        if ((d != -1 || !PyErr_Occurred()) && ct_wrap_dim(d, gt->ndim, &wd) == 0) {
            int64_t shape[CT_MAX_DIMS];
            for (int i = 0; i < gt->ndim; i++) {
                shape[i] = i == wd ? -1 : 1;
            }
            PyObject *vs = ct_size_object(gt->ndim, shape), *gs = ct_size_object(gt->ndim, gt->sizes);
            PyObject *iv = vs && gs ? PyObject_CallMethod(idx, "reshape", "(O)", vs) : NULL;
            PyObject *ie = iv ? PyObject_CallMethod(iv, "expand", "(O)", gs) : NULL;
            v = ie ? PyObject_CallMethod(z, "scatter_add", "(iOO)", wd, ie, g[0]) : NULL;
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
        PyObject *v = is_add ? Py_NewRef(g[0]) : PyObject_CallMethod(g[0], "scatter", "(OOd)", ARG(1), idx, 0.0);
        if (set_fit(&gi[0], v, META(0)) < 0) {
            return -1;
        }
    }
    if (NEEDS(1) && META(3)->is_tensor) {
        PyObject *v = PyObject_CallMethod(g[0], "gather", "(OO)", ARG(1), idx);
        if (set_fit(&gi[1], v, META(3)) < 0) {
            return -1;
        }
    }
    return 0;
}

/* masked_fill(input, mask, value): input keeps g off the mask; a tensor value gets the sum of g on it */
static int bw_masked_fill(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *mask = (PyObject *)ct_node_tensor(n, 1);
    if (mask == NULL) {
        return -1;
    }
    if (NEEDS(0) && set_fit(&gi[0], PyObject_CallMethod(g[0], "masked_fill", "(Od)", mask, 0.0), META(0)) < 0) {
        return -1;
    }
    if (n->num_edges > 1 && NEEDS(1) && META(2)->is_tensor) {
        PyObject *zero = PyFloat_FromDouble(0.0);
        PyObject *args[3] = {mask, g[0], zero};
        PyObject *v = zero ? ct_op("where", args, 3, NULL) : NULL;
        Py_XDECREF(zero);
        if (set_fit(&gi[1], v, META(2)) < 0) {
            return -1;
        }
    }
    return 0;
}

static int bw_tril(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *diag = ARG(1) ? Py_NewRef(ARG(1)) : PyLong_FromLong(0);
    PyObject *v = diag ? PyObject_CallMethod(g[0], n->formula->op[0] == 't' && n->formula->op[1] == 'r' &&
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
    PyObject *v = PyObject_CallMethod(g[0], "flip", "(O)", ARG(1));
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
    PyObject *v = neg ? (ARG(2) ? PyObject_CallMethod(g[0], "roll", "(OO)", neg, ARG(2))
                                : PyObject_CallMethod(g[0], "roll", "(O)", neg))
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
    PyObject *r = shape_t ? PyObject_CallMethod(g[0], "reshape", "(O)", shape_t) : NULL;
    PyObject *s = r && dims_t ? PyObject_CallMethod(r, "sum", "(O)", dims_t) : NULL;
    Py_XDECREF(shape_t); Py_XDECREF(dims_t); Py_XDECREF(r);
    rc = set_fit(&gi[0], s, m);
done:
    Py_XDECREF(shape);
    Py_XDECREF(dims);
    return rc;
}

/* --- linear algebra ----------------------------------------------------------------------------------- */
/* matmul(a, b) for any ranks: lift 1-d operands to matrices, use the batched rule, undo. */
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
        Py_SETREF(A, PyObject_CallMethod(A, "unsqueeze", "(i)", 0));
        Py_SETREF(G, G ? PyObject_CallMethod(G, "unsqueeze", "(i)", b1 ? 0 : -2) : NULL);
    }
    if (b1) {
        Py_SETREF(B, B ? PyObject_CallMethod(B, "unsqueeze", "(i)", 1) : NULL);
        Py_SETREF(G, G ? PyObject_CallMethod(G, "unsqueeze", "(i)", -1) : NULL);
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
                Py_SETREF(v, PyObject_CallMethod(v, "reshape", "(N)", PyObject_GetAttrString((PyObject *)a, "shape")));
            }
        }
        if (set_fit(&gi[0], v, META(0)) < 0) {
            goto done;
        }
    }
    if (NEEDS(1)) {
        PyObject *at = PyObject_GetAttrString(A, "mT");
        PyObject *v = at ? PyNumber_MatrixMultiply(at, G) : NULL;
        Py_XDECREF(at);
        if (v != NULL && b1) {
            PyObject *s = PyObject_GetAttrString(v, "shape");
            /* sum over the batch dims first, then drop the column dim */
            Py_XDECREF(s);
            Py_SETREF(v, ct_sum_to(v, 2, (int64_t[]){b->sizes[0], 1}));
            if (v != NULL) {
                Py_SETREF(v, PyObject_CallMethod(v, "reshape", "(N)", PyObject_GetAttrString((PyObject *)b, "shape")));
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

/* addmm(input, mat1, mat2, *, beta=1, alpha=1) */
static int bw_addmm(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *beta = scalar_or(ARG(3), 1.0), *alpha = scalar_or(ARG(4), 1.0);
    int rc = -1;
    if (beta == NULL || alpha == NULL) {
        goto done;
    }
    if (NEEDS(0) && set_fit(&gi[0], mul(g[0], beta), META(0)) < 0) {
        goto done;
    }
    if (NEEDS(1)) {
        PyObject *m2 = (PyObject *)ct_node_tensor(n, 2);
        PyObject *t = m2 ? PyObject_CallMethod(m2, "t", NULL) : NULL;
        PyObject *p = t ? PyNumber_MatrixMultiply(g[0], t) : NULL;
        Py_XDECREF(t);
        if (set_fit(&gi[1], p ? mul(p, alpha) : NULL, META(1)) < 0) {
            Py_XDECREF(p);
            goto done;
        }
        Py_DECREF(p);
    }
    if (NEEDS(2)) {
        PyObject *m1 = (PyObject *)ct_node_tensor(n, 1);
        PyObject *t = m1 ? PyObject_CallMethod(m1, "t", NULL) : NULL;
        PyObject *p = t ? PyNumber_MatrixMultiply(t, g[0]) : NULL;
        Py_XDECREF(t);
        if (set_fit(&gi[2], p ? mul(p, alpha) : NULL, META(2)) < 0) {
            Py_XDECREF(p);
            goto done;
        }
        Py_DECREF(p);
    }
    rc = 0;
done:
    Py_XDECREF(beta);
    Py_XDECREF(alpha);
    return rc;
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
        PyObject *t = PyObject_CallMethod(g[0], "t", NULL);
        if (set_fit(&gi[1], t ? PyNumber_MatrixMultiply(t, a) : NULL, META(1)) < 0) {
            Py_XDECREF(t);
            return -1;
        }
        Py_DECREF(t);
    }
    return 0;
}

/* --- the table ------------------------------------------------------------------------------------------ */
#define SIG(...) {__VA_ARGS__, NULL}
#define BIN SIG("input", "other", "*alpha")
const CtFormula ct_formulas[] = {
    /* elementwise */
    {"add", "AddBackward0", BIN, 3, 0, bw_add},
    {"add_", "AddBackward0", BIN, 3, CT_F_INPLACE, bw_add},
    {"sub", "SubBackward0", BIN, 3, 0, bw_sub},
    {"subtract", "SubBackward0", BIN, 3, 0, bw_sub},
    {"sub_", "SubBackward0", BIN, 3, CT_F_INPLACE, bw_sub},
    {"rsub", "RsubBackward0", BIN, 3, 0, bw_rsub},
    {"mul", "MulBackward0", SIG("input", "other"), 3, 0, bw_mul},
    {"multiply", "MulBackward0", SIG("input", "other"), 3, 0, bw_mul},
    {"div", "DivBackward0", SIG("input", "other", "*rounding_mode"), 3, 0, bw_div},
    {"divide", "DivBackward0", SIG("input", "other", "*rounding_mode"), 3, 0, bw_div},
    {"true_divide", "DivBackward0", SIG("input", "other"), 3, 0, bw_div},
    {"neg", "NegBackward0", SIG("input"), 1, 0, bw_neg},
    {"negative", "NegBackward0", SIG("input"), 1, 0, bw_neg},
    {"abs", "AbsBackward0", SIG("input"), 1, 0, bw_abs},
    {"exp", "ExpBackward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_exp},
    {"exp2", "Exp2Backward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_exp2},
    {"log", "LogBackward0", SIG("input"), 1, 0, bw_log},
    {"log2", "Log2Backward0", SIG("input"), 1, 0, bw_log2},
    {"log10", "Log10Backward0", SIG("input"), 1, 0, bw_log10},
    {"log1p", "Log1PBackward0", SIG("input"), 1, 0, bw_log1p},
    {"expm1", "Expm1Backward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_expm1},
    {"sqrt", "SqrtBackward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_sqrt},
    {"rsqrt", "RsqrtBackward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_rsqrt},
    {"reciprocal", "ReciprocalBackward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_reciprocal},
    {"square", "PowBackward0", SIG("input"), 1, 0, bw_square},
    {"sin", "SinBackward0", SIG("input"), 1, 0, bw_sin},
    {"cos", "CosBackward0", SIG("input"), 1, 0, bw_cos},
    {"tan", "TanBackward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_tan},
    {"tanh", "TanhBackward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_tanh},
    {"sigmoid", "SigmoidBackward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_sigmoid},
    {"relu", "ReluBackward0", SIG("input"), 1, CT_F_SAVE_OUT, bw_relu},
    {"sinh", "SinhBackward0", SIG("input"), 1, 0, bw_sinh},
    {"cosh", "CoshBackward0", SIG("input"), 1, 0, bw_cosh},
    {"asin", "AsinBackward0", SIG("input"), 1, 0, bw_asin},
    {"acos", "AcosBackward0", SIG("input"), 1, 0, bw_acos},
    {"atan", "AtanBackward0", SIG("input"), 1, 0, bw_atan},
    {"silu", "SiluBackward0", SIG("input"), 1, 0, bw_silu},
    {"gelu", "GeluBackward0", SIG("input", "*approximate"), 1, 0, bw_gelu},
    {"pow", "PowBackward0", SIG("input", "exponent"), 3, 0, bw_pow},
    {"clamp", "ClampBackward1", SIG("input", "min", "max"), 7, 0, bw_clamp},
    {"clip", "ClampBackward1", SIG("input", "min", "max"), 7, 0, bw_clamp},
    {"clamp_min", "ClampMinBackward0", SIG("input", "min"), 3, 0, bw_clamp_min},
    {"clamp_max", "ClampMaxBackward0", SIG("input", "max"), 3, 0, bw_clamp_min},
    {"where", "WhereBackward0", SIG("condition", "input", "other"), 6, 0, bw_where},
    {"maximum", "MaximumBackward0", SIG("input", "other"), 3, 0, bw_maximum},
    {"minimum", "MinimumBackward0", SIG("input", "other"), 3, 0, bw_maximum},
    {"fmax", "FmaxBackward0", SIG("input", "other"), 3, 0, bw_maximum},
    {"fmin", "FminBackward0", SIG("input", "other"), 3, 0, bw_maximum},
    {"lerp", "LerpBackward1", SIG("input", "end", "weight"), 7, 0, bw_lerp},
    {"addcmul", "AddcmulBackward0", SIG("input", "tensor1", "tensor2", "*value"), 7, 0, bw_addcmul},
    {"addcdiv", "AddcdivBackward0", SIG("input", "tensor1", "tensor2", "*value"), 7, 0, bw_addcmul},
    {"sign", "SignBackward0", SIG("input"), 1, 0, bw_zero},
    {"floor", "FloorBackward0", SIG("input"), 1, 0, bw_zero},
    {"ceil", "CeilBackward0", SIG("input"), 1, 0, bw_zero},
    {"round", "RoundBackward0", SIG("input", "*decimals"), 1, 0, bw_zero},
    {"trunc", "TruncBackward0", SIG("input"), 1, 0, bw_zero},
    {"frac", "FracBackward0", SIG("input"), 1, 0, bw_identity},
    /* reductions */
    {"sum", "SumBackward1", SIG("input", "dim", "keepdim", "*dtype"), 1, 0, bw_sum},
    {"mean", "MeanBackward1", SIG("input", "dim", "keepdim", "*dtype"), 1, 0, bw_mean},
    {"prod", "ProdBackward0", SIG("input", "dim", "keepdim", "*dtype"), 1, CT_F_SAVE_OUT, bw_prod},
    {"var", "VarBackward0", SIG("input", "dim", "unbiased_or_none", "*correction", "keepdim", "*unbiased"), 1, 0, bw_var},
    {"std", "StdBackward0", SIG("input", "dim", "unbiased_or_none", "*correction", "keepdim", "*unbiased"), 1,
     CT_F_SAVE_OUT, bw_var},
    {"amax", "AmaxBackward0", SIG("input", "dim", "keepdim"), 1, CT_F_SAVE_OUT, bw_amax},
    {"amin", "AminBackward0", SIG("input", "dim", "keepdim"), 1, CT_F_SAVE_OUT, bw_amax},
    {"max", "MaxBackward0", SIG("input", "dim", "keepdim"), 3, CT_F_SAVE_OUT, bw_max_dim},
    {"min", "MinBackward0", SIG("input", "dim", "keepdim"), 3, CT_F_SAVE_OUT, bw_max_dim},
    {"sort", "SortBackward0", SIG("input", "dim", "descending", "*stable"), 1, CT_F_SAVE_OUT, bw_sort},
    {"topk", "TopkBackward0", SIG("input", "k", "dim", "largest", "sorted"), 1, CT_F_SAVE_OUT, bw_topk},
    {"logsumexp", "LogsumexpBackward0", SIG("input", "dim", "keepdim"), 1, CT_F_SAVE_OUT, bw_logsumexp},
    {"norm", "NormBackward1", SIG("input", "p", "dim", "keepdim", "*dtype"), 1, CT_F_SAVE_OUT, bw_norm},
    {"softmax", "SoftmaxBackward0", SIG("input", "dim", "*dtype"), 1, CT_F_SAVE_OUT, bw_softmax},
    {"log_softmax", "LogSoftmaxBackward0", SIG("input", "dim", "*dtype"), 1, CT_F_SAVE_OUT, bw_log_softmax},
    {"cumsum", "CumsumBackward0", SIG("input", "dim", "*dtype"), 1, 0, bw_cumsum},
    {"cumprod", "CumprodBackward0", SIG("input", "dim", "*dtype"), 1, CT_F_NO_DERIV, NULL},
    /* views and copies */
    {"view", "ViewBackward0", SIG("input", "s1", "s2", "s3", "s4", "s5", "s6", "s7"), 1, CT_F_VIEW, bw_reshape},
    {"reshape", "ViewBackward0", SIG("input", "s1", "s2", "s3", "s4", "s5", "s6", "s7"), 1, CT_F_VIEW, bw_reshape},
    {"view_as", "ViewBackward0", SIG("input", "other"), 1, CT_F_VIEW, bw_reshape},
    {"reshape_as", "ViewBackward0", SIG("input", "other"), 1, CT_F_VIEW, bw_reshape},
    {"flatten", "ViewBackward0", SIG("input", "start_dim", "end_dim"), 1, CT_F_VIEW, bw_reshape},
    {"unflatten", "ViewBackward0", SIG("input", "dim", "sizes"), 1, CT_F_VIEW, bw_reshape},
    {"squeeze", "SqueezeBackward1", SIG("input", "dim"), 1, CT_F_VIEW, bw_reshape},
    {"unsqueeze", "UnsqueezeBackward0", SIG("input", "dim"), 1, CT_F_VIEW, bw_reshape},
    {"transpose", "TransposeBackward0", SIG("input", "dim0", "dim1"), 1, CT_F_VIEW, bw_transpose},
    {"swapaxes", "TransposeBackward0", SIG("input", "dim0", "dim1"), 1, CT_F_VIEW, bw_transpose},
    {"swapdims", "TransposeBackward0", SIG("input", "dim0", "dim1"), 1, CT_F_VIEW, bw_transpose},
    {"t", "TBackward0", SIG("input"), 1, CT_F_VIEW, bw_transpose},
    {"permute", "PermuteBackward0", SIG("input", "d1", "d2", "d3", "d4", "d5", "d6", "d7"), 1, CT_F_VIEW, bw_permute},
    {"movedim", "MovedimBackward0", SIG("input", "source", "destination"), 1, CT_F_VIEW, bw_movedim},
    {"moveaxis", "MovedimBackward0", SIG("input", "source", "destination"), 1, CT_F_VIEW, bw_movedim},
    {"expand", "ExpandBackward0", SIG("input", "s1", "s2", "s3", "s4", "s5", "s6", "s7"), 1, CT_F_VIEW, bw_identity},
    {"expand_as", "ExpandBackward0", SIG("input", "other"), 1, CT_F_VIEW, bw_identity},
    {"narrow", "SliceBackward0", SIG("input", "dim", "start", "length"), 1, CT_F_VIEW, bw_narrow},
    {"select", "SelectBackward0", SIG("input", "dim", "index"), 1, CT_F_VIEW, bw_narrow},
    {"unbind", "UnbindBackward0", SIG("input", "dim"), 1, CT_F_VIEW | CT_F_SAVE_OUT, bw_pieces},
    {"split", "SplitBackward0", SIG("input", "split_size_or_sections", "dim"), 1, CT_F_VIEW | CT_F_SAVE_OUT, bw_pieces},
    {"chunk", "SplitBackward0", SIG("input", "chunks", "dim"), 1, CT_F_VIEW | CT_F_SAVE_OUT, bw_pieces},
    {"contiguous", "CloneBackward0", SIG("input", "*memory_format"), 1, 0, bw_identity},
    {"clone", "CloneBackward0", SIG("input", "*memory_format"), 1, 0, bw_identity},
    {"to", "ToCopyBackward0", SIG("input", "a", "b", "*dtype", "*device", "*non_blocking", "*copy", "*memory_format"),
     1, 0, bw_to},
    {"type", "ToCopyBackward0", SIG("input", "dtype", "non_blocking"), 1, 0, bw_to},
    {"float", "ToCopyBackward0", SIG("input"), 1, 0, bw_to},
    {"double", "ToCopyBackward0", SIG("input"), 1, 0, bw_to},
    {"half", "ToCopyBackward0", SIG("input"), 1, 0, bw_to},
    {"bfloat16", "ToCopyBackward0", SIG("input"), 1, 0, bw_to},
    {"cpu", "ToCopyBackward0", SIG("input"), 1, 0, bw_to},
    {"cuda", "ToCopyBackward0", SIG("input", "device", "non_blocking"), 1, 0, bw_to},
    /* indexing and joining */
    {"__getitem__", "IndexBackward0", SIG("input", "key"), 1, 0, bw_getitem},
    {"__setitem__", "IndexPutBackward0", SIG("input", "key", "value"), 5, CT_F_INPLACE, bw_setitem},
    {"cat", "CatBackward0", SIG("tensors", "dim"), 1, CT_F_LIST_INPUT, bw_cat},
    {"concat", "CatBackward0", SIG("tensors", "dim"), 1, CT_F_LIST_INPUT, bw_cat},
    {"stack", "StackBackward0", SIG("tensors", "dim"), 1, CT_F_LIST_INPUT, bw_stack},
    {"gather", "GatherBackward0", SIG("input", "dim", "index", "*sparse_grad"), 1, 0, bw_gather},
    {"index_select", "IndexSelectBackward0", SIG("input", "dim", "index"), 1, 0, bw_index_select},
    {"scatter", "ScatterBackward0", SIG("input", "dim", "index", "src", "*value", "*reduce"), 9, 0, bw_scatter},
    {"scatter_add", "ScatterAddBackward0", SIG("input", "dim", "index", "src"), 9, 0, bw_scatter},
    {"masked_fill", "MaskedFillBackward0", SIG("input", "mask", "value"), 5, 0, bw_masked_fill},
    {"tril", "TrilBackward0", SIG("input", "diagonal"), 1, 0, bw_tril},
    {"triu", "TriuBackward0", SIG("input", "diagonal"), 1, 0, bw_tril},
    {"flip", "FlipBackward0", SIG("input", "dims"), 1, 0, bw_flip},
    {"roll", "RollBackward0", SIG("input", "shifts", "dims"), 1, 0, bw_roll},
    {"repeat", "RepeatBackward0", SIG("input", "s1", "s2", "s3", "s4", "s5", "s6", "s7"), 1, 0, bw_repeat},
    /* linear algebra */
    {"matmul", "MmBackward0", SIG("input", "other"), 3, 0, bw_matmul},
    {"mm", "MmBackward0", SIG("input", "mat2"), 3, 0, bw_matmul},
    {"bmm", "BmmBackward0", SIG("input", "mat2"), 3, 0, bw_matmul},
    {"mv", "MvBackward0", SIG("input", "vec"), 3, 0, bw_matmul},
    {"dot", "DotBackward0", SIG("input", "tensor"), 3, 0, bw_matmul},
    {"outer", "OuterBackward0", SIG("input", "vec2"), 3, 0, bw_outer},
    {"addmm", "AddmmBackward0", SIG("input", "mat1", "mat2", "*beta", "*alpha"), 7, 0, bw_addmm},
    {"einsum", "EinsumBackward0", SIG("equation", "operands"), 0, CT_F_NO_DERIV, NULL},
    /* nn (csrc/nn.c): linear's node name follows PyTorch's for 2-D input with a bias; the Python
     * layer calls the aliases for the other cases so that grad_fn names match PyTorch's */
    {"linear", "AddmmBackward0", SIG("input", "weight", "bias"), 7, 0, ct_nn_bw_linear},
    {"_linear_mm", "MmBackward0", SIG("input", "weight", "bias"), 7, 0, ct_nn_bw_linear},
    {"_linear_nd", "UnsafeViewBackward0", SIG("input", "weight", "bias"), 7, 0, ct_nn_bw_linear},
    {"_cross_entropy", "NllLossBackward0", SIG("input", "target", "weight", "reduction", "ignore_index", "label_smoothing"),
     3, 0, ct_nn_bw_cross_entropy},
    {"_cross_entropy_ls", "AddBackward0", SIG("input", "target", "weight", "reduction", "ignore_index", "label_smoothing"),
     3, 0, ct_nn_bw_cross_entropy},
    {"_cross_entropy_soft", "NegBackward0", SIG("input", "target", "weight", "reduction", "ignore_index", "label_smoothing"),
     3, 0, ct_nn_bw_cross_entropy},
    {"_cross_entropy_soft_mean", "DivBackward1",
     SIG("input", "target", "weight", "reduction", "ignore_index", "label_smoothing"), 3, 0, ct_nn_bw_cross_entropy},
    {"_nll_loss", "NllLossBackward0", SIG("input", "target", "weight", "reduction", "ignore_index"), 1, 0,
     ct_nn_bw_nll_loss},
    {"_mse_loss", "MseLossBackward0", SIG("input", "target", "weight", "pos_weight", "reduction", "beta"), 3, 0,
     ct_nn_bw_pointwise_loss},
    {"_l1_loss", "L1LossBackward0", SIG("input", "target", "weight", "pos_weight", "reduction", "beta"), 3, 0,
     ct_nn_bw_pointwise_loss},
    {"_smooth_l1_loss", "SmoothL1LossBackward0", SIG("input", "target", "weight", "pos_weight", "reduction", "beta"), 3,
     0, ct_nn_bw_pointwise_loss},
    {"_binary_cross_entropy", "BinaryCrossEntropyBackward0",
     SIG("input", "target", "weight", "pos_weight", "reduction", "beta"), 3, 0, ct_nn_bw_pointwise_loss},
    {"_binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0",
     SIG("input", "target", "weight", "pos_weight", "reduction", "beta"), 3, 0, ct_nn_bw_pointwise_loss},
    {"layer_norm", "NativeLayerNormBackward0", SIG("input", "normalized_shape", "weight", "bias", "eps", "cudnn_enable"),
     13, 0, ct_nn_bw_layer_norm},
    {"embedding", "EmbeddingBackward0", SIG("weight", "indices", "padding_idx", "scale_grad_by_freq", "sparse"), 1, 0,
     ct_nn_bw_embedding},
    {"_leaky_relu", "LeakyReluBackward0", SIG("input", "negative_slope"), 1, 0, ct_nn_bw_leaky_relu},
    {"_leaky_relu_backward", "LeakyReluBackwardBackward0", SIG("grad", "input", "negative_slope"), 1, 0,
     ct_nn_bw_leaky_relu},
    /* the backward ops of the fused kernels are not differentiable themselves */
    {"_nll_backward", "NllLossBackwardBackward0",
     SIG("grad", "input", "target", "weight", "reduction", "ignore_index", "label_smoothing", "flags"), 7, CT_F_NO_DERIV,
     NULL},
    {"_pointwise_loss_backward", "PointwiseLossBackwardBackward0",
     SIG("mode", "grad", "input", "target", "weight", "pos_weight", "reduction", "beta"), 14, CT_F_NO_DERIV, NULL},
    {"_layer_norm_backward", "NativeLayerNormBackwardBackward0",
     SIG("grad", "input", "normalized_shape", "weight", "bias", "eps", "mask"), 11, CT_F_NO_DERIV, NULL},
    {"_embedding_backward", "EmbeddingBackwardBackward0",
     SIG("grad", "indices", "num_weights", "padding_idx", "scale_grad_by_freq"), 1, CT_F_NO_DERIV, NULL},
    {NULL},
};
