/* attention.c: the attention functions of torch.nn.functional (in ctorch._C), composed in C of
 * recording ops as PyTorch's math backend composes them, so they run on every device and
 * autograd records their parts (no kernel and no formula row of their own).
 *
 * - scaled_dot_product_attention: PyTorch's math path. Half and bfloat16 are computed in float32
 *   and cast back; 3-d inputs run as one 4-d batch (the result's node is SqueezeBackward1, as
 *   PyTorch's); q and k are each scaled by sqrt(scale); a bool mask (True = take part) or the
 *   causal triangle becomes an additive 0 / -inf mask; the softmax is "safe": a row whose
 *   scores are all -inf gives zeros, not NaN; enable_gqa repeats each key/value head for its
 *   group of query heads.
 * - multi_head_attention_forward: torch.nn.functional's composition (in-projection, bias_k/v,
 *   add_zero_attn, key padding merged into the attention mask, attention through baddbmm and
 *   softmax when the weights are wanted, else through scaled_dot_product_attention, out
 *   projection), with its AssertionError / RuntimeError messages.
 * - _canonical_mask: a bool mask (True = masked out) as an additive float mask.
 *
 * Compositions use the arena of autograd_arena.h; multi_head_attention_forward runs in stages,
 * each with an arena of its own, handing its results to the caller's arena (stage_out). */
#include "args.h"
#include "autograd_arena.h"
#include "creation.h"
#include "device.h"
#include "elementwise.h"
#include "registry.h"
#include "tensor.h"
#include <math.h>
#include <string.h>

/* ============================================================================================
 * argument helpers
 * ============================================================================================ */

/* TypeError "fname(): argument 'name' (position pos + 1) must be <want>, not <type>"; pos < 0:
 * passed by keyword (no position in the message). */
static int arg_type_error(PyObject *obj, const char *fname, const char *name, int pos, const char *want)
{
    const char *type = obj ? ct_type_name(obj) : "NoneType";
    if (pos >= 0) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be %s, not %s", fname, name, pos + 1,
                     want, type);
    } else {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be %s, not %s", fname, name, want, type);
    }
    return -1;
}

/* A Tensor argument (borrowed); with allow_none, None and an absent argument give *out = NULL. */
static int tensor_arg(PyObject *obj, const char *fname, const char *name, int pos, bool allow_none, PyObject **out)
{
    *out = NULL;
    if (obj != NULL && CtTensor_Check(obj)) {
        *out = obj;
        return 0;
    }
    if (allow_none && (obj == NULL || obj == Py_None)) {
        return 0;
    }
    return arg_type_error(obj, fname, name, pos, "Tensor");
}

/* A bool argument (Python bool only, as PyTorch's parser); absent or None keeps *out. */
static int bool_arg(PyObject *obj, const char *fname, const char *name, int pos, bool *out)
{
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (!PyBool_Check(obj)) {
        return arg_type_error(obj, fname, name, pos, "bool");
    }
    *out = obj == Py_True;
    return 0;
}

/* A float argument (any real number); absent or None keeps *out and leaves *given alone. */
static int float_arg(PyObject *obj, const char *fname, const char *name, int pos, double *out, bool *given)
{
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (CtTensor_Check(obj) || PyUnicode_Check(obj) || !PyNumber_Check(obj) || PyComplex_Check(obj)) {
        return arg_type_error(obj, fname, name, pos, "float");
    }
    if (ct_arg_double(obj, out) < 0) {
        return -1;
    }
    if (given != NULL) {
        *given = true;
    }
    return 0;
}

/* The C++ type names PyTorch prints for dtypes in its sdpa checks ("float", "c10::Half"). */
static const char *cpp_name(PyObject *t) { return ct_cpp_type_name(CT_TENSOR(t)->dtype); }

/* "torch.Size([a, b])" of a tensor's first n dims (all when n < 0) into buf. */
static void shape_str(PyObject *t, int n, char *buf, size_t size)
{
    CtTensorObject *x = CT_TENSOR(t);
    char dims[256];
    ct_format_sizes(dims, sizeof(dims), n < 0 || n > x->ndim ? x->ndim : n, x->sizes);
    snprintf(buf, size, "torch.Size(%s)", dims);
}

static int64_t dim_size(PyObject *t, int dim)
{
    CtTensorObject *x = CT_TENSOR(t);
    return x->sizes[dim < 0 ? dim + x->ndim : dim];
}

/* Hands a value of a stage's local arena to the caller's arena (NULL-propagating). */
static PyObject *stage_out(CtArena *out, CtArena *arena, PyObject *o)
{
    return arena->failed ? (out->failed = true, NULL) : arena_keep(out, arena_take(arena, o));
}

/* A Python tuple of n sizes, arena-owned. */
static PyObject *size_tuple(CtArena *arena, int n, const int64_t *sizes)
{
    PyObject *t = arena->failed ? NULL : PyTuple_New(n);
    for (int i = 0; t != NULL && i < n; i++) {
        PyObject *v = PyLong_FromLongLong((long long)sizes[i]);
        if (v == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    return arena->failed ? NULL : KEEP(t);
}

/* F.dropout's training-mode product (x * bernoulli(1 - p) / (1 - p)), p in (0, 1]; p outside
 * [0, 1] raises exc with PyTorch's message. */
static PyObject *attention_dropout(CtArena *arena, PyObject *x, double p, PyObject *exc)
{
    if (arena->failed) {
        return NULL;
    }
    if (!(p >= 0.0 && p <= 1.0)) {
        char *s = PyOS_double_to_string(p, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
        if (s != NULL) {
            PyErr_Format(exc, "dropout probability has to be between 0 and 1, but got %s", s);
            PyMem_Free(s);
        }
        arena->failed = true;
        return NULL;
    }
    if (p == 1.0) {
        return MUL(x, NUM(0.0));
    }
    PyObject *keep = METH(FN("empty_like", "(O)", x), "bernoulli_", "(d)", 1.0 - p);
    return MUL(x, DIV(keep, NUM(1.0 - p)));
}

/* ============================================================================================
 * scaled_dot_product_attention
 * ============================================================================================ */

/* PyTorch's input checks, in its order. */
static int check_sdpa(PyObject *q, PyObject *k, PyObject *v, PyObject *mask, bool is_causal)
{
    CtTensorObject *tq = CT_TENSOR(q), *tk = CT_TENSOR(k), *tv = CT_TENSOR(v);
    if (tq->dtype != tk->dtype || tq->dtype != tv->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected query, key, and value to have the same dtype, but got query.dtype: %s key.dtype: %s "
                     "and value.dtype: %s instead.",
                     cpp_name(q), cpp_name(k), cpp_name(v));
        return -1;
    }
    CtDevice dq = ct_device_of(tq), dk = ct_device_of(tk), dv = ct_device_of(tv);
    if (!ct_device_equal(dq, dk) || !ct_device_equal(dq, dv)) {
        char sq[32], sk[32], sv[32];
        ct_device_str(dq, sq, sizeof(sq));
        ct_device_str(dk, sk, sizeof(sk));
        ct_device_str(dv, sv, sizeof(sv));
        PyErr_Format(PyExc_RuntimeError,
                     "Expected query, key, and value to have the same device type, but got query.device: %s "
                     "key.device: %s and value.device: %s instead.",
                     sq, sk, sv);
        return -1;
    }
    if (tq->ndim < 2 || tk->ndim < 2 || tv->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: %d "
                     "key.dim: %d and value.dim: %d instead.",
                     tq->ndim, tk->ndim, tv->ndim);
        return -1;
    }
    if (mask != NULL && is_causal) {
        PyErr_SetString(PyExc_RuntimeError,
                        "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
        return -1;
    }
    CtDType md = mask ? CT_TENSOR(mask)->dtype : CT_BOOL;
    if (md != CT_BOOL && md != CT_F32 && md != tq->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
                     "%s and  query.dtype: %s instead.",
                     cpp_name(mask), cpp_name(q));
        return -1;
    }
    if (!ct_is_floating(tq->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "expected scalar type Float but found %s", ct_scalar_type_name(tq->dtype));
        return -1;
    }
    return 0;
}

/* enable_gqa: each of key's and value's heads (dim -3) repeated for its group of query heads
 * (repeat_interleave as an expand of a new dim and a reshape). */
static PyObject *repeat_heads(CtArena *arena, PyObject *t, int64_t times)
{
    if (arena->failed || times == 1) {
        return t;
    }
    CtTensorObject *x = CT_TENSOR(t);
    int nd = x->ndim;
    int64_t expanded[CT_MAX_DIMS + 1], merged[CT_MAX_DIMS];
    for (int i = 0, j = 0; i < nd; i++) {
        expanded[j++] = x->sizes[i];
        merged[i] = x->sizes[i];
        if (i == nd - 3) {
            expanded[j++] = times;
            merged[i] = x->sizes[i] * times;
        }
    }
    PyObject *grown = METH(METH(t, "unsqueeze", "(i)", -3), "expand", "(O)", size_tuple(arena, nd + 1, expanded));
    return METH(grown, "reshape", "(O)", size_tuple(arena, nd, merged));
}

static int gqa_inputs(CtArena *arena, PyObject **k, PyObject **v, PyObject *q)
{
    PyObject *ts[3] = {q, *k, *v};
    for (int i = 0; i < 3; i++) {
        int nd = CT_TENSOR(ts[i])->ndim;
        if (nd < 3) {
            PyErr_Format(PyExc_IndexError, "Dimension out of range (expected to be in range of [%d, %d], but got -3)",
                         -nd, nd - 1);
            return -1;
        }
    }
    int64_t hq = dim_size(q, -3), hk = dim_size(*k, -3), hv = dim_size(*v, -3);
    if (hk == 0 || hv == 0 || hq % hk != 0 || hq % hv != 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Number of heads in key and value must divide the number of heads in query");
        return -1;
    }
    *k = repeat_heads(arena, *k, hq / hk);
    *v = repeat_heads(arena, *v, hq / hv);
    return arena->failed ? -1 : 0;
}

/* a bool mask (True = take part) as an additive float32 mask: 0 or -inf */
static PyObject *additive_mask(CtArena *arena, PyObject *keep) { return WHERE(keep, NUM(0.0), NUM(-INFINITY)); }

/* The attention itself on checked inputs; mask NULL or a bool/float mask; scale NULL for
 * 1 / sqrt(E). Returns a new reference. */
static PyObject *sdpa(PyObject *query, PyObject *key, PyObject *value, PyObject *mask, double dropout_p, bool is_causal,
                      const double *scale, bool enable_gqa)
{
    if (check_sdpa(query, key, value, mask, is_causal) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    CtDType dtype = CT_TENSOR(query)->dtype;
    bool reduced = dtype == CT_F16 || dtype == CT_BF16; /* computed in float32, as PyTorch's math path */
    bool batch3 = CT_TENSOR(query)->ndim == 3 && CT_TENSOR(key)->ndim == 3 && CT_TENSOR(value)->ndim == 3;
    PyObject *qkv[3] = {query, key, value};
    if (enable_gqa && gqa_inputs(arena, &qkv[1], &qkv[2], query) < 0) {
        arena_free(arena);
        return NULL;
    }
    for (int i = 0; i < 3; i++) {
        qkv[i] = reduced ? METH(qkv[i], "float", NULL) : qkv[i];
        qkv[i] = batch3 ? METH(qkv[i], "unsqueeze", "(i)", 0) : qkv[i];
    }
    int64_t L = dim_size(query, -2), S = dim_size(key, -2), E = dim_size(query, -1);
    double s = scale != NULL ? *scale : 1.0 / sqrt((double)E);
    double root = sqrt(fabs(s));
    PyObject *kt = MUL(METH(qkv[1], "transpose", "(ii)", -2, -1), NUM(root));
    PyObject *scores = MATMUL(MUL(qkv[0], NUM(s < 0 ? -root : root)), kt);
    if (is_causal || mask != NULL) {
        PyObject *add = mask;
        if (is_causal) {
            PyObject *ones = METH(scores, "new_ones", "((LL))", (long long)L, (long long)S);
            add = additive_mask(arena, CMP(METH(ones, "tril", NULL), NUM(0.0), Py_NE));
        } else if (CT_TENSOR(mask)->dtype == CT_BOOL) {
            add = additive_mask(arena, mask);
        }
        METH(scores, "add_", "(O)", add);
    }
    /* the safe softmax: a row of -inf only gives zeros (its scores replaced by zeros first, so
     * that no NaN reaches the softmax's backward either) */
    PyObject *dead = METH(CMP(scores, NUM(-INFINITY), Py_EQ), "all", "(iO)", -1, Py_True);
    PyObject *weights = WHERE(dead, NUM(0.0), METH(WHERE(dead, NUM(0.0), scores), "softmax", "(i)", -1));
    if (dropout_p > 0.0) {
        weights = attention_dropout(arena, weights, dropout_p, PyExc_RuntimeError);
    }
    PyObject *out = MATMUL(weights, qkv[2]);
    out = batch3 ? METH(out, "squeeze", "(i)", 0) : out;
    out = reduced ? METH(out, "to", "(O)", ct_dtype_object(dtype)) : out;
    PyObject *r = TAKE(out);
    arena_free(arena);
    return r;
}

static PyObject *py_scaled_dot_product_attention(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"query",     "key",    "value",       "attn_mask", "dropout_p",
                                        "is_causal", "*scale", "*enable_gqa", NULL};
    static const char *fname = "scaled_dot_product_attention";
    PyObject *a[8], *t[4];
    double dropout_p = 0.0, scale = 0.0;
    bool is_causal = false, has_scale = false, enable_gqa = false;
    if (nargs > 6) {
        PyErr_Format(PyExc_TypeError, "%s() takes from 3 to 6 positional arguments but %zd were given", fname, nargs);
        return NULL;
    }
    if (ct_parse_args(fname, args, nargs, kw, names, 3, a) < 0) {
        return NULL;
    }
    for (int i = 0; i < 4; i++) {
        if (tensor_arg(a[i], fname, names[i], i < nargs ? i : -1, i == 3, &t[i]) < 0) {
            return NULL;
        }
    }
    if (float_arg(a[4], fname, "dropout_p", 4 < nargs ? 4 : -1, &dropout_p, NULL) < 0 ||
        bool_arg(a[5], fname, "is_causal", 5 < nargs ? 5 : -1, &is_causal) < 0 ||
        float_arg(a[6], fname, "scale", -1, &scale, &has_scale) < 0 ||
        bool_arg(a[7], fname, "enable_gqa", -1, &enable_gqa) < 0) {
        return NULL;
    }
    return sdpa(t[0], t[1], t[2], t[3], dropout_p, is_causal, has_scale ? &scale : NULL, enable_gqa);
}

/* ============================================================================================
 * _canonical_mask
 * ============================================================================================ */

/* F._canonical_mask: mask (None, bool or float) as None or an additive float mask of dtype
 * target (bool True = -inf); warns when check_other and other_dtype differs. Arena-owned, or
 * Py_None (borrowed). */
static PyObject *canonical_mask(CtArena *arena, PyObject *mask, const char *name, PyObject *other_dtype,
                                const char *other_name, CtDType target, bool check_other)
{
    if (arena->failed || mask == NULL || mask == Py_None) {
        return arena->failed ? NULL : Py_None;
    }
    CtDType md = CT_TENSOR(mask)->dtype;
    if (md != CT_BOOL && !ct_is_floating(md)) {
        PyErr_Format(PyExc_AssertionError, "only bool and floating types of %s are supported", name);
        arena->failed = true;
        return NULL;
    }
    if (check_other && other_dtype != NULL && other_dtype != Py_None && other_dtype != ct_dtype_object(md)) {
        char msg[256];
        snprintf(msg, sizeof(msg), "Support for mismatched %s and %s is deprecated. Use same type for both instead.",
                 name, other_name);
        if (PyErr_WarnEx(PyExc_UserWarning, msg, 2) < 0) {
            arena->failed = true;
            return NULL;
        }
    }
    if (md != CT_BOOL) {
        return mask;
    }
    return METH(WHERE(mask, NUM(-INFINITY), NUM(0.0)), "to", "(O)", ct_dtype_object(target));
}

static PyObject *py_canonical_mask(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"mask",        "mask_name",   "other_type", "other_name",
                                        "target_type", "check_other", NULL};
    PyObject *a[6], *mask;
    CtDType target;
    bool check_other = true;
    const char *name, *other_name;
    if (ct_parse_args("_canonical_mask", args, nargs, kw, names, 5, a) < 0 ||
        tensor_arg(a[0], "_canonical_mask", "mask", 0, true, &mask) < 0 || (name = PyUnicode_AsUTF8(a[1])) == NULL ||
        (other_name = PyUnicode_AsUTF8(a[3])) == NULL || ct_dtype_from_object(a[4], &target) < 0 ||
        ct_arg_bool(a[5], &check_other) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = canonical_mask(arena, mask, name, a[2], other_name, target, check_other);
    r = r == Py_None ? Py_NewRef(r) : TAKE(r);
    arena_free(arena);
    return r;
}

/* ============================================================================================
 * multi_head_attention_forward
 * ============================================================================================ */

/* clang-format off */
enum {
    MHA_QUERY, MHA_KEY, MHA_VALUE, MHA_EMBED_DIM, MHA_NUM_HEADS, MHA_IN_W, MHA_IN_B, MHA_BIAS_K, MHA_BIAS_V,
    MHA_ZERO_ATTN, MHA_DROPOUT, MHA_OUT_W, MHA_OUT_B, MHA_TRAINING, MHA_KPM, MHA_NEED_WEIGHTS, MHA_ATTN_MASK,
    MHA_SEPARATE, MHA_Q_W, MHA_K_W, MHA_V_W, MHA_STATIC_K, MHA_STATIC_V, MHA_AVERAGE, MHA_CAUSAL, MHA_NARGS
};
/* clang-format on */

typedef struct {
    PyObject *t[MHA_NARGS]; /* tensor arguments (borrowed; NULL for None) */
    int64_t embed_dim_to_check, num_heads;
    double dropout_p;
    bool add_zero_attn, training, need_weights, separate, average, is_causal;
    /* filled by the stages */
    bool batched;
    int64_t tgt_len, bsz, embed_dim, head_dim;
} Mha;

/* _mha_shape_check: AssertionError unless query is 2-d (unbatched) or 3-d with matching key,
 * value and masks. */
static int mha_shape_check(Mha *s)
{
    PyObject *q = s->t[MHA_QUERY], *kpm = s->t[MHA_KPM], *am = s->t[MHA_ATTN_MASK];
    int qd = CT_TENSOR(q)->ndim, kd = CT_TENSOR(s->t[MHA_KEY])->ndim, vd = CT_TENSOR(s->t[MHA_VALUE])->ndim;
    const char *kind = qd == 3 ? "batched (3-D)" : "unbatched (2-D)";
    if (qd != 3 && qd != 2) {
        PyErr_Format(PyExc_AssertionError,
                     "query should be unbatched 2D or batched 3D tensor but received %d-D query tensor", qd);
        return -1;
    }
    s->batched = qd == 3;
    if (kd != qd || vd != qd) {
        PyErr_Format(
            PyExc_AssertionError,
            "For %s `query`, expected `key` and `value` to be %d-D but found %d-D and %d-D tensors respectively", kind,
            qd, kd, vd);
        return -1;
    }
    if (kpm != NULL && CT_TENSOR(kpm)->ndim != qd - 1) {
        PyErr_Format(PyExc_AssertionError,
                     "For %s `query`, expected `key_padding_mask` to be `None` or %d-D but found %d-D tensor instead",
                     kind, qd - 1, CT_TENSOR(kpm)->ndim);
        return -1;
    }
    int md = am ? CT_TENSOR(am)->ndim : 2;
    if (md != 2 && md != 3) {
        PyErr_Format(PyExc_AssertionError,
                     "For %s `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found %d-D tensor instead",
                     kind, md);
        return -1;
    }
    if (!s->batched && md == 3) {
        int64_t want[3] = {s->num_heads, dim_size(q, 0), dim_size(s->t[MHA_KEY], 0)};
        if (memcmp(want, CT_TENSOR(am)->sizes, sizeof(want)) != 0) {
            char got[300];
            shape_str(am, -1, got, sizeof(got));
            PyErr_Format(PyExc_AssertionError, "Expected `attn_mask` shape to be (%lld, %lld, %lld) but got %s",
                         (long long)want[0], (long long)want[1], (long long)want[2], got);
            return -1;
        }
    }
    return 0;
}

/* _in_projection's shape checks of one weight (rows x cols) and its bias (rows). */
static int check_proj(PyObject *w, PyObject *b, const char *what, int64_t rows, int64_t cols)
{
    CtTensorObject *tw = CT_TENSOR(w);
    char got[300];
    if (tw->ndim != 2 || tw->sizes[0] != rows || tw->sizes[1] != cols) {
        shape_str(w, -1, got, sizeof(got));
        PyErr_Format(PyExc_AssertionError, "expecting %s weights shape of (%lld, %lld), but got %s", what,
                     (long long)rows, (long long)cols, got);
        return -1;
    }
    if (b != Py_None && (CT_TENSOR(b)->ndim != 1 || CT_TENSOR(b)->sizes[0] != rows)) {
        shape_str(b, -1, got, sizeof(got));
        PyErr_Format(PyExc_AssertionError, "expecting %s bias shape of (%lld,), but got %s", what, (long long)rows,
                     got);
        return -1;
    }
    return 0;
}

/* input @ w.T + b through F.linear's ops (b may be Py_None) */
static PyObject *linear(CtArena *arena, PyObject *input, PyObject *w, PyObject *b)
{
    if (!arena_ok(arena, input, w) || b == NULL) {
        return NULL;
    }
    bool two_d = CT_TENSOR(input)->ndim == 2;
    PyObject *call[3] = {input, w, b};
    return KEEP(ct_op(two_d ? (b != Py_None ? "linear" : "_linear_mm") : "_linear_nd", call,
                      two_d && b == Py_None ? 2 : 3, NULL));
}

/* item i of an arena-owned tuple (borrowed), NULL-propagating */
static PyObject *item(CtArena *arena, PyObject *tuple, Py_ssize_t i)
{
    return arena->failed || tuple == NULL ? NULL : PyTuple_GET_ITEM(tuple, i);
}

/* The in-projection: q, k, v (L, N, E) into out[0..2] (arena-owned). */
static int in_projection(CtArena *arena, Mha *s, PyObject *query, PyObject *key, PyObject *value, PyObject **out)
{
    int64_t E = s->embed_dim;
    PyObject *b = s->t[MHA_IN_B] ? s->t[MHA_IN_B] : Py_None;
    PyObject *bq = Py_None, *bk = Py_None, *bv = Py_None;
    if (s->separate) {
        static const char *const which[] = {"q", "k", "v"};
        for (int i = 0; i < 3; i++) {
            if (s->t[MHA_Q_W + i] == NULL) {
                PyErr_Format(PyExc_AssertionError, "use_separate_proj_weight is True but %s_proj_weight is None",
                             which[i]);
                return -1;
            }
        }
        if (b != Py_None) {
            PyObject *parts = METH(b, "chunk", "(i)", 3);
            bq = item(arena, parts, 0), bk = item(arena, parts, 1), bv = item(arena, parts, 2);
        }
        if (arena->failed || check_proj(s->t[MHA_Q_W], bq, "query", E, E) < 0 ||
            check_proj(s->t[MHA_K_W], bk, "key", E, dim_size(key, -1)) < 0 ||
            check_proj(s->t[MHA_V_W], bv, "value", E, dim_size(value, -1)) < 0) {
            return -1;
        }
        out[0] = linear(arena, query, s->t[MHA_Q_W], bq);
        out[1] = linear(arena, key, s->t[MHA_K_W], bk);
        out[2] = linear(arena, value, s->t[MHA_V_W], bv);
        return arena->failed ? -1 : 0;
    }
    PyObject *w = s->t[MHA_IN_W];
    if (w == NULL) {
        PyErr_SetString(PyExc_AssertionError, "use_separate_proj_weight is False but in_proj_weight is None");
        return -1;
    }
    if (key == value && query == key) { /* self-attention: one packed GEMM */
        PyObject *parts = METH(linear(arena, query, w, b), "chunk", "(ii)", 3, -1);
        for (int i = 0; i < 3; i++) {
            out[i] = item(arena, parts, i);
        }
    } else if (key == value) { /* shared key and value: q, then one GEMM for k and v */
        PyObject *ws = METH(w, "split", "([LL])", (long long)E, (long long)(2 * E));
        PyObject *bs = b != Py_None ? METH(b, "split", "([LL])", (long long)E, (long long)(2 * E)) : NULL;
        out[0] = linear(arena, query, item(arena, ws, 0), bs ? item(arena, bs, 0) : Py_None);
        PyObject *kv =
            METH(linear(arena, key, item(arena, ws, 1), bs ? item(arena, bs, 1) : Py_None), "chunk", "(ii)", 2, -1);
        out[1] = item(arena, kv, 0);
        out[2] = item(arena, kv, 1);
    } else {
        PyObject *ws = METH(w, "chunk", "(i)", 3);
        PyObject *bs = b != Py_None ? METH(b, "chunk", "(i)", 3) : NULL;
        PyObject *inputs[3] = {query, key, value};
        for (int i = 0; i < 3; i++) {
            out[i] = linear(arena, inputs[i], item(arena, ws, i), bs ? item(arena, bs, i) : Py_None);
        }
    }
    return arena->failed ? -1 : 0;
}

/* Stage 1: shapes, masks and the in-projection. Fills qkv[3] and masks[2] (attn_mask,
 * key_padding_mask; Py_None when absent) in the caller's arena `out`. */
static int mha_prepare(Mha *s, CtArena *out, PyObject **qkv, PyObject **masks)
{
    if (mha_shape_check(s) < 0) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *query = s->t[MHA_QUERY], *key = s->t[MHA_KEY], *value = s->t[MHA_VALUE];
    PyObject *kpm = s->t[MHA_KPM], *am = s->t[MHA_ATTN_MASK];
    if (!s->batched) { /* one batch of one; the identities of key and value survive */
        PyObject *q1 = METH(query, "unsqueeze", "(i)", 1);
        PyObject *k1 = key == query ? q1 : METH(key, "unsqueeze", "(i)", 1);
        PyObject *v1 = value == key ? k1 : METH(value, "unsqueeze", "(i)", 1);
        query = q1, key = k1, value = v1;
        kpm = kpm ? METH(kpm, "unsqueeze", "(i)", 0) : NULL;
        if (arena->failed) {
            goto error;
        }
    }
    s->tgt_len = dim_size(query, 0);
    s->bsz = dim_size(query, 1);
    s->embed_dim = dim_size(query, 2);
    int64_t src_len = dim_size(key, 0);
    CtDType dtype = CT_TENSOR(query)->dtype;
    PyObject *am_dtype = am ? ct_dtype_object(CT_TENSOR(am)->dtype) : NULL;
    kpm = canonical_mask(arena, kpm, "key_padding_mask", am_dtype, "attn_mask", dtype, true);
    if (arena->failed) {
        goto error;
    }
    if (s->is_causal && am == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
                        "`generate_square_subsequent_mask` to create this mask.");
        goto error;
    }
    if (s->is_causal && kpm == Py_None && !s->need_weights) {
        am = Py_None; /* the hint alone drives the attention */
    } else {
        am = canonical_mask(arena, am, "attn_mask", NULL, "", dtype, false);
        s->is_causal = s->is_causal && kpm == Py_None;
    }
    if (arena->failed) {
        goto error;
    }
    if (s->embed_dim != s->embed_dim_to_check) {
        PyErr_Format(PyExc_AssertionError, "was expecting embedding dimension of %lld, but got %lld",
                     (long long)s->embed_dim_to_check, (long long)s->embed_dim);
        goto error;
    }
    s->head_dim = s->num_heads != 0 ? s->embed_dim / s->num_heads : 0;
    if (s->num_heads == 0 || s->head_dim * s->num_heads != s->embed_dim) {
        PyErr_Format(PyExc_AssertionError, "embed_dim %lld not divisible by num_heads %lld", (long long)s->embed_dim,
                     (long long)s->num_heads);
        goto error;
    }
    CtTensorObject *tk = CT_TENSOR(key), *tv = CT_TENSOR(value);
    int ncmp = s->separate ? 2 : 3;
    if ((!s->separate && tk->sizes[2] != tv->sizes[2]) || tk->sizes[0] != tv->sizes[0] ||
        tk->sizes[1] != tv->sizes[1]) {
        char ks[300], vs[300];
        shape_str(key, ncmp, ks, sizeof(ks));
        shape_str(value, ncmp, vs, sizeof(vs));
        PyErr_Format(PyExc_AssertionError,
                     s->separate ? "key's sequence and batch dims %s do not match value's %s"
                                 : "key shape %s does not match value shape %s",
                     ks, vs);
        goto error;
    }
    if (in_projection(arena, s, query, key, value, qkv) < 0) {
        goto error;
    }
    if (am != Py_None) { /* (L, S) or (N * heads, L, S) */
        CtTensorObject *tm = CT_TENSOR(am);
        int64_t want[3] = {s->bsz * s->num_heads, s->tgt_len, src_len};
        const int64_t *w = tm->ndim == 2 ? want + 1 : want;
        if (tm->ndim != 2 && tm->ndim != 3) {
            PyErr_Format(PyExc_RuntimeError, "attn_mask's dimension %d is not supported", tm->ndim);
            goto error;
        }
        if (memcmp(w, tm->sizes, sizeof(int64_t) * tm->ndim) != 0) {
            char got[300];
            shape_str(am, -1, got, sizeof(got));
            if (tm->ndim == 2) {
                PyErr_Format(PyExc_RuntimeError, "The shape of the 2D attn_mask is %s, but should be (%lld, %lld).",
                             got, (long long)w[0], (long long)w[1]);
            } else {
                PyErr_Format(PyExc_RuntimeError,
                             "The shape of the 3D attn_mask is %s, but should be (%lld, %lld, %lld).", got,
                             (long long)w[0], (long long)w[1], (long long)w[2]);
            }
            goto error;
        }
        am = tm->ndim == 2 ? METH(am, "unsqueeze", "(i)", 0) : am;
    }
    for (int i = 0; i < 3; i++) {
        qkv[i] = stage_out(out, arena, qkv[i]);
    }
    masks[0] = am == Py_None ? am : stage_out(out, arena, am);
    masks[1] = kpm == Py_None ? kpm : stage_out(out, arena, kpm);
    arena_free(arena);
    return out->failed ? -1 : 0;
error:
    arena_free(arena);
    return -1;
}

/* pad(mask, (0, 1)) unless Py_None */
static PyObject *pad_mask(CtArena *arena, PyObject *mask)
{
    return mask == Py_None ? mask : FN("pad", "(O(ii))", mask, 0, 1);
}

/* Stage 2: bias_k/v, heads first, add_zero_attn, the merged mask. qkv become
 * (N * heads, L or S, head_dim); *mask the merged additive mask or Py_None. */
static int mha_heads(Mha *s, CtArena *out, PyObject **qkv, PyObject **mask)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *k = qkv[1], *v = qkv[2], *am = mask[0], *kpm = mask[1];
    PyObject *bias_k = s->t[MHA_BIAS_K], *bias_v = s->t[MHA_BIAS_V];
    PyObject *static_k = s->t[MHA_STATIC_K], *static_v = s->t[MHA_STATIC_V];
    long long bh = (long long)(s->bsz * s->num_heads), hd = (long long)s->head_dim;
    const char *fail = NULL;
    if (bias_k != NULL && bias_v != NULL) {
        fail = static_k   ? "bias cannot be added to static key."
               : static_v ? "bias cannot be added to static value."
                          : NULL;
        if (fail == NULL) {
            k = FN("cat", "([OO])", k, METH(bias_k, "repeat", "(iLi)", 1, (long long)s->bsz, 1));
            v = FN("cat", "([OO])", v, METH(bias_v, "repeat", "(iLi)", 1, (long long)s->bsz, 1));
            am = pad_mask(arena, am);
            kpm = pad_mask(arena, kpm);
        }
    } else if (bias_k != NULL || bias_v != NULL) {
        fail = bias_k ? "bias_k is set but bias_v is None" : "bias_v is set but bias_k is None";
    }
    if (fail != NULL) {
        PyErr_SetString(PyExc_AssertionError, fail);
        goto error;
    }
    PyObject *q = METH(METH(qkv[0], "reshape", "(LLL)", (long long)s->tgt_len, bh, hd), "transpose", "(ii)", 0, 1);
    PyObject *kv[2] = {k, v}, *statics[2] = {static_k, static_v};
    for (int i = 0; i < 2 && !arena->failed; i++) {
        if (statics[i] == NULL) {
            kv[i] =
                METH(METH(kv[i], "reshape", "(LLL)", (long long)dim_size(kv[i], 0), bh, hd), "transpose", "(ii)", 0, 1);
            continue;
        }
        int64_t got0 = dim_size(statics[i], 0), got2 = CT_TENSOR(statics[i])->ndim > 2 ? dim_size(statics[i], 2) : -1;
        if (got0 != bh || got2 != hd) {
            PyErr_Format(PyExc_AssertionError, "expecting static_%c.size(%d) of %lld, but got %lld", "kv"[i],
                         got0 != bh ? 0 : 2, got0 != bh ? bh : hd, (long long)(got0 != bh ? got0 : got2));
            goto error;
        }
        kv[i] = statics[i];
    }
    if (s->add_zero_attn) {
        for (int i = 0; i < 2; i++) {
            kv[i] = FN("cat", "([OO]i)", kv[i], METH(kv[i], "new_zeros", "((LiL))", bh, 1, hd), 1);
        }
        am = pad_mask(arena, am);
        kpm = pad_mask(arena, kpm);
    }
    if (arena->failed) {
        goto error;
    }
    int64_t src_len = dim_size(kv[0], 1);
    if (kpm != Py_None) {
        int64_t got[2] = {dim_size(kpm, 0), dim_size(kpm, 1)}, want[2] = {s->bsz, src_len};
        for (int i = 0; i < 2; i++) {
            if (got[i] != want[i]) {
                PyErr_Format(PyExc_AssertionError, "Expected key_padded_mask.shape[%d] to be %lld, but got %lld", i,
                             (long long)want[i], (long long)got[i]);
                goto error;
            }
        }
        PyObject *per_head = METH(METH(kpm, "view", "(LiiL)", (long long)s->bsz, 1, 1, (long long)src_len), "expand",
                                  "(iLii)", -1, (long long)s->num_heads, -1, -1);
        kpm = METH(per_head, "reshape", "(LiL)", bh, 1, (long long)src_len);
        am = am == Py_None ? kpm : ADD(am, kpm);
    }
    qkv[0] = stage_out(out, arena, q);
    qkv[1] = stage_out(out, arena, kv[0]);
    qkv[2] = stage_out(out, arena, kv[1]);
    *mask = am == Py_None ? am : stage_out(out, arena, am);
    arena_free(arena);
    return out->failed ? -1 : 0;
error:
    arena_free(arena);
    return -1;
}

/* Stage 3: the attention and the out-projection; returns (output, weights or None). */
static PyObject *mha_attend(Mha *s, PyObject *const *qkv, PyObject *mask)
{
    CtArena scratch = {0}, *arena = &scratch;
    double p = s->training ? s->dropout_p : 0.0;
    long long L = (long long)s->tgt_len, N = (long long)s->bsz, H = (long long)s->num_heads;
    long long S = (long long)dim_size(qkv[1], 1), E = (long long)s->embed_dim, hd = (long long)s->head_dim;
    PyObject *out_b = s->t[MHA_OUT_B] ? s->t[MHA_OUT_B] : Py_None;
    PyObject *attn, *weights = Py_None, *result = NULL;
    if (s->need_weights) {
        PyObject *q_scaled = MUL(qkv[0], NUM(sqrt(1.0 / (double)hd)));
        PyObject *kt = METH(qkv[1], "transpose", "(ii)", -2, -1);
        PyObject *scores =
            mask != Py_None ? FN("baddbmm", "(OOO)", mask, q_scaled, kt) : FN("bmm", "(OO)", q_scaled, kt);
        weights = METH(scores, "softmax", "(i)", -1);
        if (p > 0.0) {
            weights = attention_dropout(arena, weights, p, PyExc_ValueError);
        }
        attn = METH(METH(FN("bmm", "(OO)", weights, qkv[2]), "transpose", "(ii)", 0, 1), "reshape", "(LL)", L * N, E);
        weights = METH(weights, "view", "(LLLL)", N, H, L, S);
        if (s->average) {
            weights = METH(weights, "mean", "(i)", 1);
        }
        if (!s->batched) {
            weights = METH(weights, "squeeze", "(i)", 0);
        }
    } else {
        if (mask != Py_None) {
            CtTensorObject *tm = CT_TENSOR(mask);
            mask = tm->ndim == 3 && tm->sizes[0] == 1 ? METH(mask, "unsqueeze", "(i)", 0)
                                                      : METH(mask, "view", "(LLiL)", N, H, -1, S);
        }
        PyObject *q = METH(qkv[0], "view", "(LLLL)", N, H, L, hd);
        PyObject *k = METH(qkv[1], "view", "(LLLL)", N, H, S, hd);
        PyObject *v = METH(qkv[2], "view", "(LLLL)", N, H, S, hd);
        PyObject *o = arena_ok(arena, q, k) && arena_ok(arena, v, mask)
                          ? KEEP(sdpa(q, k, v, mask == Py_None ? NULL : mask, p, s->is_causal, NULL, false))
                          : NULL;
        attn = METH(METH(o, "permute", "(iiii)", 2, 0, 1, 3), "reshape", "(LL)", N * L, E);
    }
    attn = METH(linear(arena, attn, s->t[MHA_OUT_W], out_b), "view", "(LLi)", L, N, -1);
    if (!s->batched) {
        attn = METH(attn, "squeeze", "(i)", 1);
    }
    if (!arena->failed && weights != NULL) {
        result = PyTuple_Pack(2, attn, weights);
    }
    arena_free(arena);
    return result;
}

static int mha_parse(Mha *s, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    /* clang-format off */
    static const char *const names[] = {
        "query", "key", "value", "embed_dim_to_check", "num_heads", "in_proj_weight", "in_proj_bias", "bias_k",
        "bias_v", "add_zero_attn", "dropout_p", "out_proj_weight", "out_proj_bias", "training", "key_padding_mask",
        "need_weights", "attn_mask", "use_separate_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight",
        "static_k", "static_v", "average_attn_weights", "is_causal", NULL};
    /* clang-format on */
    static const char *fname = "multi_head_attention_forward";
    PyObject *a[MHA_NARGS];
    if (ct_parse_args(fname, args, nargs, kw, names, 13, a) < 0) {
        return -1;
    }
    static const int tensors[] = {MHA_QUERY,  MHA_KEY,   MHA_VALUE,    MHA_IN_W,    MHA_IN_B,      MHA_BIAS_K,
                                  MHA_BIAS_V, MHA_OUT_W, MHA_OUT_B,    MHA_KPM,     MHA_ATTN_MASK, MHA_Q_W,
                                  MHA_K_W,    MHA_V_W,   MHA_STATIC_K, MHA_STATIC_V};
    memset(s, 0, sizeof(*s));
    for (size_t i = 0; i < sizeof(tensors) / sizeof(tensors[0]); i++) {
        int j = tensors[i];
        bool optional = j > MHA_VALUE && j != MHA_OUT_W;
        if (tensor_arg(a[j], fname, names[j], j < nargs ? j : -1, optional, &s->t[j]) < 0) {
            return -1;
        }
    }
    s->training = s->need_weights = s->average = true;
    if (ct_int_arg(fname, "embed_dim_to_check", MHA_EMBED_DIM + 1, a[MHA_EMBED_DIM], &s->embed_dim_to_check) < 0 ||
        ct_int_arg(fname, "num_heads", MHA_NUM_HEADS + 1, a[MHA_NUM_HEADS], &s->num_heads) < 0 ||
        ct_arg_bool(a[MHA_ZERO_ATTN], &s->add_zero_attn) < 0 ||
        float_arg(a[MHA_DROPOUT], fname, "dropout_p", MHA_DROPOUT < nargs ? MHA_DROPOUT : -1, &s->dropout_p, NULL) <
            0 ||
        ct_arg_bool(a[MHA_TRAINING], &s->training) < 0 || ct_arg_bool(a[MHA_NEED_WEIGHTS], &s->need_weights) < 0 ||
        ct_arg_bool(a[MHA_SEPARATE], &s->separate) < 0 || ct_arg_bool(a[MHA_AVERAGE], &s->average) < 0 ||
        ct_arg_bool(a[MHA_CAUSAL], &s->is_causal) < 0) {
        return -1;
    }
    return 0;
}

static PyObject *py_multi_head_attention_forward(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    Mha s;
    if (mha_parse(&s, args, nargs, kw) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *qkv[3], *masks[2], *mask, *result = NULL;
    if (mha_prepare(&s, arena, qkv, masks) == 0 && mha_heads(&s, arena, qkv, masks) == 0) {
        mask = masks[0];
        result = mha_attend(&s, qkv, mask);
    }
    arena_free(arena);
    return result;
}

/* ============================================================================================
 * tables
 * ============================================================================================ */
PyMethodDef ct_attention_module_methods[] = {
    {"scaled_dot_product_attention", CT_FASTCALL(py_scaled_dot_product_attention), CT_METH_FK,
     "scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, "
     "enable_gqa=False) -> Tensor"},
    {"multi_head_attention_forward", CT_FASTCALL(py_multi_head_attention_forward), CT_METH_FK,
     "multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, "
     "bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training=True, key_padding_mask=None, "
     "need_weights=True, attn_mask=None, use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None, "
     "v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True, is_causal=False) -> (Tensor, "
     "Tensor or None)"},
    {"_canonical_mask", CT_FASTCALL(py_canonical_mask), CT_METH_FK,
     "_canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True): a bool mask as an "
     "additive float mask (True = -inf)"},
    {NULL},
};

PyMethodDef ct_attention_tensor_methods[] = {{NULL}};
PyType_Slot ct_attention_tensor_slots[] = {{0, NULL}};
