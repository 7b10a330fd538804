/* nn_misc.c: nn layers and losses PyTorch composes of other ops, built in C of the recording ops
 * (so every device runs them and autograd records their parts):
 *
 *   rms_norm(input, normalized_shape, weight, eps): input * rsqrt(mean(input^2) + eps) [* weight]
 *   _embedding_bag(input, weight, offsets, mode, per_sample_weights, include_last_offset, padding_idx):
 *       the bags laid out densely as (B, longest bag, D) by one index_select over the looked-up rows
 *       plus a filler row (0 for sum / mean, -inf for max), then sum / mean / amax over the bag dim;
 *       one EmbeddingBagBackward0 node (its formula rebuilds the layout and adds the bags' gradient back)
 *   bilinear(input1, input2, weight, bias): x1 W x2 as a GEMM and a reduction
 *   multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss,
 *   triplet_margin_with_distance_loss (the distance a Python callable), ctc_loss (PyTorch's ctc_loss_impl
 *       over the primitive _ctc_loss: alpha / beta recursions in CtNNKernels.ctc_loss(_backward), the CPU's
 *       here, one CtcLossBackward0 node whatever the length),
 *   gumbel_softmax;
 *   local_response_norm (an avg_pool2d over the squares), channel_shuffle (a view, a transpose and a
 *       reshape), rrelu, the alpha dropouts, the LP pools (average pools of input^p) and max_unpool
 *       (a scatter into zeros); affine_grid; grid_sample over the native grid_sampler_2d / grid_sampler_3d
 *       (bilinear / trilinear / nearest / bicubic (2-d), zeros / border / reflection padding; kernels through
 *       CtNNKernels, the CPU's here, per-point math in grid_sample_math.h; one GridSampler2DBackward0 /
 *       GridSampler3DBackward0 node; the double backward differentiates a composite of four or eight gathers
 *       weighted by the fractional offsets).
 *
 * Each composition runs in arenas of autograd_arena.h; host-side index tables (embedding bags, CTC's
 * extended labels) are built from one host copy of the integer inputs. */
#include "args.h"
#include "autograd_arena.h"
#include "creation.h"
#include "determinism.h"
#include "device.h"
#include "grid_sample_math.h"
#include "nn.h"
#include "nn_math.h"
#include "parallel.h"
#include "registry.h"
#include "tensor.h"
#include <math.h>
#include <string.h>

/* ====================================================================================================
 * helpers
 * ==================================================================================================== */

static int need_tensor(const char *fname, const char *argname, int pos, PyObject *obj, bool optional)
{
    if ((optional && (obj == NULL || obj == Py_None)) || (obj != NULL && CtTensor_Check(obj))) {
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname, argname, pos,
                 obj != NULL ? ct_type_name(obj) : "NoneType");
    return -1;
}

static int opt_double(PyObject *obj, double *out) { return obj == NULL || obj == Py_None ? 0 : ct_arg_double(obj, out); }

static int opt_int(PyObject *obj, int64_t *out) { return obj == NULL || obj == Py_None ? 0 : ct_arg_int64(obj, out); }

/* A contiguous int64 copy of t on the CPU (new reference). */
static CtTensorObject *host_int64(CtTensorObject *t)
{
    CtTensorObject *h = ct_to(t, CT_I64, ct_cpu(), false);
    if (h == NULL) {
        return NULL;
    }
    CtTensorObject *c = ct_contiguous(h);
    Py_DECREF(h);
    return c;
}

/* A new int64 (or bool when as_bool) tensor of the given sizes on device from host values. */
static PyObject *device_table(int ndim, const int64_t *sizes, const int64_t *values, bool as_bool, CtDevice device)
{
    CtTensorObject *h = ct_empty(ndim, sizes, CT_I64, ct_cpu());
    if (h == NULL) {
        return NULL;
    }
    memcpy(ct_data(h), values, sizeof(int64_t) * (size_t)ct_numel(h));
    CtTensorObject *d = ct_to(h, as_bool ? CT_BOOL : CT_I64, device, false);
    Py_DECREF(h);
    return (PyObject *)d;
}

/* PyTorch's apply_loss_reduction: 0 none, 1 mean, 2 sum (arena-owned) */
static PyObject *reduce_loss(CtArena *arena, PyObject *loss, int64_t reduction)
{
    return reduction == 1 ? METH(loss, "mean", NULL) : reduction == 2 ? METH(loss, "sum", NULL) : loss;
}

/* ====================================================================================================
 * rms_norm
 * ==================================================================================================== */

/* torch.finfo(dtype).eps */
static double dtype_eps(CtDType d)
{
    switch (d) {
    case CT_F64:
        return 2.220446049250313e-16;
    case CT_F16:
        return 0.0009765625;
    case CT_BF16:
        return 0.0078125;
    default:
        return 1.1920928955078125e-07;
    }
}

static PyObject *py_rms_norm(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "normalized_shape", "weight", "eps", NULL};
    PyObject *a[4];
    int64_t shape[CT_MAX_DIMS];
    if (ct_parse_args("rms_norm", args, nargs, kw, names, 2, a) < 0 ||
        need_tensor("rms_norm", "input", 1, a[0], false) < 0 || need_tensor("rms_norm", "weight", 3, a[2], true) < 0) {
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[0]);
    int k = ct_parse_size_seq(a[1], shape, false);
    if (k < 0) {
        return NULL;
    }
    if (k == 0) {
        PyErr_SetString(PyExc_RuntimeError, "Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                        "least one element, but got normalized_shape = []");
        return NULL;
    }
    if (!ct_is_floating(x->dtype)) {
        PyErr_Format(PyExc_NotImplementedError, "\"rms_norm\" not implemented for '%s'", ct_scalar_type_name(x->dtype));
        return NULL;
    }
    double eps = dtype_eps(x->dtype);
    if (opt_double(a[3], &eps) < 0) {
        return NULL;
    }
    bool ok = k <= x->ndim && k >= 1;
    for (int i = 0; ok && i < k; i++) {
        ok = x->sizes[x->ndim - k + i] == shape[i];
    }
    if (!ok) {
        char want[256], got[256];
        ct_format_sizes(want, sizeof(want), k, shape);
        ct_format_sizes(got, sizeof(got), x->ndim, x->sizes);
        /* PyTorch: "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[2, 3]" */
        char star[300];
        snprintf(star, sizeof(star), "[*, %s", want[0] == '[' ? want + 1 : want);
        PyErr_Format(PyExc_RuntimeError,
                     "Given normalized_shape=%s, expected input with shape %s, but got input of size%s", want,
                     k == 0 ? "[*]" : star, got);
        return NULL;
    }
    if (a[2] != NULL && a[2] != Py_None) {
        CtTensorObject *w = CT_TENSOR(a[2]);
        if (w->ndim != k || memcmp(w->sizes, shape, sizeof(int64_t) * (size_t)k) != 0) {
            char want[256], got[256];
            ct_format_sizes(want, sizeof(want), k, shape);
            ct_format_sizes(got, sizeof(got), w->ndim, w->sizes);
            PyErr_Format(PyExc_RuntimeError, "Expected weight to be of same shape as normalized_shape, but got "
                         "weight of shape %s and normalized_shape = %s", got, want);
            return NULL;
        }
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *dims = KEEP(PyTuple_New(k));
    for (int i = 0; dims != NULL && i < k; i++) {
        PyTuple_SET_ITEM(dims, i, PyLong_FromLong(x->ndim - k + i));
    }
    /* half / bfloat16 computed in float32, as PyTorch's opmath */
    bool low = x->dtype == CT_F16 || x->dtype == CT_BF16;
    PyObject *up = low ? METH(a[0], "float", NULL) : a[0];
    PyObject *ms = METH(MUL(up, up), "mean", "(OO)", dims, Py_True);
    PyObject *r = MUL(up, METH(ADD(ms, NUM(eps)), "rsqrt", NULL));
    if (low) {
        r = METH(r, "to", "(O)", ct_dtype_object(x->dtype));
    }
    if (a[2] != NULL && a[2] != Py_None) {
        r = MUL(r, a[2]);
        /* a weight of another dtype does not promote: the result keeps the input's dtype, as PyTorch's */
        if (CT_TENSOR(a[2])->dtype != x->dtype) {
            r = METH(r, "to", "(O)", ct_dtype_object(x->dtype));
        }
    }
    PyObject *result = TAKE(r);
    arena_free(arena);
    return result;
}

/* ====================================================================================================
 * embedding_bag
 * ==================================================================================================== */

/* The dense layout of the bags: gather (B * width) row numbers into the looked-up rows, `filler`
 * (= n) where a bag is shorter than width; count (B) the non-padding entries per bag. Returns 0 or
 * -1 with an exception. *gather and *count are PyMem buffers the caller frees. */
static int bag_layout(const int64_t *idx, int64_t n, const int64_t *offs, int64_t noffs, bool include_last,
                      int64_t padding_idx, int64_t num_weights, int64_t *nbags, int64_t *width, int64_t **gather,
                      int64_t **count)
{
    int64_t B = include_last ? (noffs > 0 ? noffs - 1 : 0) : noffs;
    for (int64_t j = 0; j < n; j++) {
        if (idx[j] < 0 || idx[j] >= num_weights) {
            PyErr_SetString(PyExc_IndexError, "index out of range in self");
            return -1;
        }
    }
    if (noffs > 0 && offs[0] != 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                     "position 0. However, got %lld", (long long)offs[0]);
        return -1;
    }
    if (noffs > 0 && offs[noffs - 1] > n) {
        PyErr_Format(PyExc_RuntimeError,
                     "offsets[-1] can not be greater than input's length %lld but got offsets[-1] of %lld",
                     (long long)n, (long long)offs[noffs - 1]);
        return -1;
    }
    int64_t w = 1;
    *count = PyMem_Calloc((size_t)(B > 0 ? B : 1), sizeof(int64_t));
    if (*count == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (int64_t b = 0; b < B; b++) {
        int64_t lo = offs[b], hi = b + 1 < noffs ? offs[b + 1] : n;
        for (int64_t j = lo; j < hi && j < n; j++) {
            (*count)[b] += idx[j] != padding_idx;
        }
        w = (*count)[b] > w ? (*count)[b] : w;
    }
    *gather = PyMem_Malloc(sizeof(int64_t) * (size_t)(B * w > 0 ? B * w : 1));
    if (*gather == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (int64_t b = 0; b < B; b++) {
        int64_t lo = offs[b], hi = b + 1 < noffs ? offs[b + 1] : n, k = 0;
        for (int64_t j = lo; j < hi && j < n; j++) {
            if (idx[j] != padding_idx) {
                (*gather)[b * w + k++] = j;
            }
        }
        for (; k < w; k++) {
            (*gather)[b * w + k] = n;
        }
    }
    *nbags = B;
    *width = w;
    return 0;
}

/* The bags' dense layout on dev (arena-owned): *gidx (B * w,) row numbers into the looked-up rows
 * (n: the filler row), *cnt (B,) the non-padding entries per bag, from one host copy of input and
 * offsets. 0 or -1. */
static int bag_tables(CtArena *arena, CtTensorObject *input, CtTensorObject *offsets, bool include_last,
                      int64_t padding_idx, int64_t num_weights, CtDevice dev, int64_t *B, int64_t *w, PyObject **gidx,
                      PyObject **cnt)
{
    CtTensorObject *hidx = host_int64(input), *hoff = hidx ? host_int64(offsets) : NULL;
    int64_t *gather = NULL, *count = NULL;
    int rc = -1;
    if (hoff != NULL && bag_layout((int64_t *)ct_data(hidx), ct_numel(input), (int64_t *)ct_data(hoff), ct_numel(hoff),
                                   include_last, padding_idx, num_weights, B, w, &gather, &count) == 0) {
        int64_t gsize = *B * *w;
        *gidx = KEEP(device_table(1, &gsize, gather, false, dev));
        *cnt = KEEP(device_table(1, B, count, false, dev));
        rc = arena->failed ? -1 : 0;
    }
    PyMem_Free(gather);
    PyMem_Free(count);
    Py_XDECREF(hidx);
    Py_XDECREF(hoff);
    return rc;
}

/* rows (n, D) laid out as the bags (B, w, D), the filler (0, or -inf for max) past each bag's end */
static PyObject *bag_dense(CtArena *arena, PyObject *rows, PyObject *gidx, int64_t B, int64_t w, int64_t mode,
                           CtDType dtype, CtDevice dev)
{
    int64_t D = arena->failed ? 0 : CT_TENSOR(rows)->sizes[1], fill_sizes[2] = {1, D};
    CtScalar fill = {.kind = CT_KIND_FLOAT, .v.d = mode == 2 ? -INFINITY : 0.0};
    PyObject *filler = arena->failed ? NULL : KEEP((PyObject *)ct_full(2, fill_sizes, &fill, dtype, dev));
    PyObject *both = arena->failed ? NULL : KEEP(PyTuple_Pack(2, rows, filler));
    return METH(METH(FN("cat", "(Oi)", both, 0), "index_select", "(iO)", 0, gidx), "view", "(LLL)", (long long)B,
                (long long)w, (long long)D);
}

/* _embedding_bag(input (n,), weight (V, D), offsets (B or B + 1,), mode 0 sum / 1 mean / 2 max,
 * per_sample_weights (n,) or None, include_last_offset, padding_idx (-1: none), scale_grad_by_freq)
 * -> (B, D), recorded as one EmbeddingBagBackward0 node (ct_nn_bw_embedding_bag). */
static PyObject *py_embedding_bag_dense(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "weight", "offsets", "mode", "per_sample_weights",
                                        "include_last_offset", "padding_idx", "scale_grad_by_freq", NULL};
    PyObject *a[8];
    int64_t mode = 1, padding_idx = -1;
    bool include_last = false, scale_grad = false;
    if (ct_parse_args("_embedding_bag", args, nargs, kw, names, 3, a) < 0 ||
        need_tensor("_embedding_bag", "input", 1, a[0], false) < 0 ||
        need_tensor("_embedding_bag", "weight", 2, a[1], false) < 0 ||
        need_tensor("_embedding_bag", "offsets", 3, a[2], false) < 0 ||
        need_tensor("_embedding_bag", "per_sample_weights", 5, a[4], true) < 0 || opt_int(a[3], &mode) < 0 ||
        ct_arg_bool(a[5], &include_last) < 0 || opt_int(a[6], &padding_idx) < 0 || ct_arg_bool(a[7], &scale_grad) < 0) {
        return NULL;
    }
    CtTensorObject *input = CT_TENSOR(a[0]), *weight = CT_TENSOR(a[1]), *offsets = CT_TENSOR(a[2]);
    if (ct_is_floating(input->dtype) || input->dtype == CT_BOOL || ct_is_floating(offsets->dtype) ||
        offsets->dtype == CT_BOOL) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
                     "Int; but got torch.%sTensor instead (while checking arguments for embedding_bag)",
                     ct_scalar_type_name(ct_is_floating(input->dtype) || input->dtype == CT_BOOL ? input->dtype
                                                                                                : offsets->dtype));
        return NULL;
    }
    if (weight->ndim != 2) {
        PyErr_Format(PyExc_RuntimeError, "weight has to be a 2D Tensor, but got Tensor of dimension %d", weight->ndim);
        return NULL;
    }
    if (input->ndim != 1 || offsets->ndim != 1) {
        PyErr_Format(PyExc_ValueError, "input has to be 1D or 2D Tensor, but got Tensor of dimension %d",
                     input->ndim);
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    CtDevice dev = ct_device_of(weight);
    int64_t B = 0, w = 0;
    PyObject *gidx, *cnt, *result = NULL;
    if (bag_tables(arena, input, offsets, include_last, padding_idx, weight->sizes[0], dev, &B, &w, &gidx, &cnt) < 0) {
        goto done;
    }
    PyObject *rows = METH(a[1], "index_select", "(iO)", 0, a[0]);
    if (a[4] != NULL && a[4] != Py_None) {
        rows = MUL(rows, METH(a[4], "unsqueeze", "(i)", 1));
    }
    PyObject *dense = bag_dense(arena, rows, gidx, B, w, mode, weight->dtype, dev), *out;
    if (mode == 2) {
        out = METH(METH(dense, "amax", "(i)", 1), "masked_fill", "(Oi)", METH(CMP(cnt, INT(0), Py_EQ), "unsqueeze", "(i)", 1), 0);
    } else {
        out = METH(dense, "sum", "(i)", 1);
        if (mode == 1) {
            out = DIV(out, METH(METH(METH(cnt, "clamp_min", "(i)", 1), "to", "(O)", ct_dtype_object(weight->dtype)),
                                "unsqueeze", "(i)", 1));
        }
    }
    result = TAKE(out);
done:
    arena_free(arena);
    return result;
}

/* EmbeddingBagBackward0: the bags' gradient (B, w, D) (g for sum, g / count for mean, g at the
 * first maximum for max) added back to the looked-up rows; weight's gradient adds those (times
 * per_sample_weights, over each index's count in input for scale_grad_by_freq) at their indices;
 * per_sample_weights' the rows' gradient dotted with their weight rows. */
int ct_nn_bw_embedding_bag(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtTensorObject *input = ct_node_tensor(n, 0), *weight = input ? ct_node_tensor(n, 1) : NULL;
    CtTensorObject *offsets = weight ? ct_node_tensor(n, 2) : NULL;
    int64_t mode = 1, padding_idx = -1;
    PyObject *psw = n->args[4] != NULL && n->args[4] != Py_None ? n->args[4] : NULL;
    if (offsets == NULL || opt_int(n->args[3], &mode) < 0 || opt_int(n->args[6], &padding_idx) < 0) {
        return -1;
    }
    bool include_last = n->args[5] != NULL && PyObject_IsTrue(n->args[5]) == 1;
    bool scale_grad = n->args[7] != NULL && PyObject_IsTrue(n->args[7]) == 1;
    CtArena scratch = {0}, *arena = &scratch;
    CtDevice dev = ct_device_of(weight);
    int64_t B = 0, w = 0, N = ct_numel(input), V = weight->sizes[0], D = weight->sizes[1];
    PyObject *gidx, *cnt, *x = (PyObject *)input, *wt = (PyObject *)weight;
    int rc = -1;
    if (bag_tables(arena, input, offsets, include_last, padding_idx, V, dev, &B, &w, &gidx, &cnt) < 0) {
        goto done;
    }
    PyObject *rows = METH(wt, "index_select", "(iO)", 0, x);
    PyObject *gd = METH(METH(g[0], "unsqueeze", "(i)", 1), "expand", "(LLL)", (long long)B, (long long)w, (long long)D);
    if (mode == 1) {
        gd = DIV(gd, METH(METH(METH(cnt, "clamp_min", "(i)", 1), "to", "(O)", ct_dtype_object(weight->dtype)), "view",
                          "(LLL)", (long long)B, 1LL, 1LL));
    } else if (mode == 2) {
        PyObject *dense = bag_dense(arena, rows, gidx, B, w, mode, weight->dtype, dev);
        PyObject *first = METH(dense, "argmax", "(iO)", 1, Py_True);
        PyObject *pos = METH(METH(FN("arange", "(L)", (long long)w), "to", "(O)", ATTR(x, "device")), "view", "(LLL)", 1LL,
                             (long long)w, 1LL);
        gd = MUL(gd, MASK(CMP(pos, first, Py_EQ), g[0]));
    }
    PyObject *grow_all = METH(wt, "new_zeros", "(LL)", (long long)(N + 1), (long long)D);
    PyObject *flat = METH(gd, "reshape", "(LL)", (long long)(B * w), (long long)D);
    /* (N, D): each looked-up row's gradient (the filler row N dropped) */
    PyObject *grow = METH(METH(grow_all, "index_add", "(iOO)", 0, gidx, flat), "narrow", "(iLL)", 0, 0LL, (long long)N);
    rc = 0;
    if (n->edge_nodes[0] != NULL) {
        PyObject *v = psw ? MUL(grow, METH(psw, "unsqueeze", "(i)", 1)) : grow;
        if (scale_grad) {
            PyObject *freq = METH(METH(x, "new_zeros", "(L)", (long long)V), "index_add", "(iOO)", 0, x,
                                  FN("ones_like", "(O)", x));
            v = DIV(v, METH(METH(METH(freq, "index_select", "(iO)", 0, x), "to", "(O)", ct_dtype_object(weight->dtype)),
                            "unsqueeze", "(i)", 1));
        }
        v = METH(METH(wt, "new_zeros", "(LL)", (long long)V, (long long)D), "index_add", "(iOO)", 0, x, v);
        rc = (gi[0] = v ? ct_fit_grad(v, &n->meta[1]) : NULL) == NULL ? -1 : 0;
    }
    if (rc == 0 && psw != NULL && n->num_edges > 1 && n->edge_nodes[1] != NULL) {
        PyObject *v = METH(MUL(grow, rows), "sum", "(i)", 1);
        rc = (gi[1] = v ? ct_fit_grad(v, &n->meta[4]) : NULL) == NULL ? -1 : 0;
    }
done:
    arena_free(arena);
    return rc;
}

/* The index outputs of torch.embedding_bag as PyTorch's CPU kernel gives them, from the host copies of
 * indices (n,) and offsets: offset2bag (n,) (empty on the 'sum' fast path), bag_size (B,) (for
 * 'sum'; the last bag counted to the end of indices), max_indices (B, D) for 'max', else bag_size.
 * Fills *o2b (n values or none: *n_o2b) and *size (B); both PyMem buffers the caller frees. */
static int bag_index_outputs(const int64_t *idx, int64_t n, const int64_t *offs, int64_t B, int64_t mode,
                             int64_t padding_idx, bool fast_sum, int64_t **o2b, int64_t *n_o2b, int64_t **size)
{
    *n_o2b = fast_sum ? 0 : n;
    *o2b = PyMem_Calloc((size_t)(n + 1), sizeof(int64_t));
    *size = PyMem_Calloc((size_t)(B + 2), sizeof(int64_t));
    if (*o2b == NULL || *size == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (int64_t b = 0; b < B; b++) { /* offset2bag: PyTorch's running count of the bag starts */
        (*o2b)[offs[b]] += b > 0;
        int64_t hi = b + 1 < B ? offs[b + 1] : n;
        for (int64_t j = offs[b]; mode != 0 && j < hi; j++) {
            (*size)[b] += idx[j] != padding_idx;
        }
    }
    for (int64_t j = 1; j < n; j++) {
        (*o2b)[j] += (*o2b)[j - 1];
    }
    return 0;
}

/* max_indices (B, D) for 'max': the weight row of each bag's first maximum, 0 for an empty bag */
static PyObject *bag_max_indices(CtArena *arena, PyObject *input, PyObject *weight, PyObject *gidx, int64_t B,
                                 int64_t w, CtDType idx_dtype, CtDevice dev)
{
    PyObject *rows = METH(weight, "index_select", "(iO)", 0, input);
    PyObject *dense = bag_dense(arena, rows, gidx, B, w, 2, CT_TENSOR(weight)->dtype, dev);
    PyObject *both = arena->failed ? NULL : KEEP(PyTuple_Pack(2, input, METH(input, "new_zeros", "(i)", 1)));
    PyObject *words = METH(METH(FN("cat", "(Oi)", both, 0), "index_select", "(iO)", 0, gidx), "view", "(LL)",
                           (long long)B, (long long)w);
    return METH(METH(words, "gather", "(iO)", 1, METH(dense, "argmax", "(i)", 1)), "to", "(O)",
                ct_dtype_object(idx_dtype));
}

/* torch.embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
 * per_sample_weights=None, include_last_offset=False, padding_idx=None)
 * -> (output, offset2bag, bag_size, max_indices), the output through _embedding_bag_dense. */
static PyObject *py_embedding_bag(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"weight", "indices", "offsets", "scale_grad_by_freq", "mode", "sparse",
                                        "per_sample_weights", "include_last_offset", "padding_idx", NULL};
    PyObject *a[9];
    int64_t mode = 0, padding_idx = -1;
    bool include_last = false, scale_grad = false, sparse = false;
    if (ct_parse_args("embedding_bag", args, nargs, kw, names, 3, a) < 0 ||
        need_tensor("embedding_bag", "weight", 1, a[0], false) < 0 ||
        need_tensor("embedding_bag", "indices", 2, a[1], false) < 0 ||
        need_tensor("embedding_bag", "offsets", 3, a[2], false) < 0 ||
        need_tensor("embedding_bag", "per_sample_weights", 7, a[6], true) < 0 || ct_arg_bool(a[3], &scale_grad) < 0 ||
        opt_int(a[4], &mode) < 0 || ct_arg_bool(a[5], &sparse) < 0 || ct_arg_bool(a[7], &include_last) < 0 ||
        opt_int(a[8], &padding_idx) < 0) {
        return NULL;
    }
    CtTensorObject *weight = CT_TENSOR(a[0]), *input = CT_TENSOR(a[1]), *offsets = CT_TENSOR(a[2]);
    PyObject *psw = a[6] != NULL && a[6] != Py_None ? a[6] : NULL;
    if (!ct_is_floating(weight->dtype)) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, "
                     "BFloat16, Float, Double; but got torch.%sTensor instead (while checking arguments for "
                     "embedding_bag)", ct_scalar_type_name(weight->dtype));
        return NULL;
    }
    if (mode < 0 || mode > 2) {
        PyErr_SetString(PyExc_RuntimeError, "`mode` must be sum, mean, or max.");
        return NULL;
    }
    if (psw != NULL && mode != 0) {
        PyErr_SetString(PyExc_RuntimeError, "embedding_bag: per_sample_weights only supported with mode='sum'");
        return NULL;
    }
    if (psw != NULL && CT_TENSOR(psw)->dtype != weight->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 "
                     "'per_sample_weights'; but type torch.%sTensor does not equal torch.%sTensor (while checking "
                     "arguments for embedding_bag)", ct_scalar_type_name(weight->dtype),
                     ct_scalar_type_name(CT_TENSOR(psw)->dtype));
        return NULL;
    }
    if (psw != NULL && ct_numel(CT_TENSOR(psw)) != ct_numel(input)) {
        PyErr_SetString(PyExc_RuntimeError, "Expected per_sample_weights.value().numel() == indices.numel() to be "
                                            "true, but got false.  (Could this error message be improved?  If so, please report an "
                                            "enhancement request to PyTorch.)");
        return NULL;
    }
    int64_t V = weight->ndim == 2 ? weight->sizes[0] : 0;
    bool has_pad = a[8] != NULL && a[8] != Py_None;
    if (has_pad && (padding_idx < -V || padding_idx >= V)) {
        PyErr_Format(PyExc_RuntimeError,
                     "padding_idx must be within the number of embeddings, -%lld through %lld, but got %lld",
                     (long long)V, (long long)(V - 1), (long long)padding_idx);
        return NULL;
    }
    padding_idx = !has_pad ? -1 : padding_idx < 0 ? padding_idx + V : padding_idx;
    CtArena scratch = {0}, *arena = &scratch;
    CtTensorObject *hidx = NULL, *hoff = NULL;
    int64_t *o2b = NULL, *size = NULL, n_o2b = 0;
    PyObject *result = NULL;
    if (input->ndim == 1 && !ct_is_floating(input->dtype) && input->dtype != CT_BOOL &&
        (hidx = host_int64(input)) != NULL) {
        const int64_t *iv = (const int64_t *)ct_data(hidx);
        for (int64_t j = 0; j < ct_numel(input); j++) {
            if (iv[j] < 0 || iv[j] >= V) {
                PyErr_Format(PyExc_RuntimeError,
                             "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be %lld",
                             (long long)iv[j]);
                goto done;
            }
        }
    } else if (PyErr_Occurred()) {
        goto done;
    }
    PyObject *out = FN("_embedding_bag_dense", "(OOOLOOLO)", a[1], a[0], a[2], (long long)mode, psw ? psw : Py_None,
                       include_last ? Py_True : Py_False, (long long)padding_idx, scale_grad ? Py_True : Py_False);
    if (out == NULL || hidx == NULL || (hoff = host_int64(offsets)) == NULL) {
        goto done;
    }
    int64_t n = ct_numel(input), noffs = ct_numel(offsets), B = include_last ? (noffs > 0 ? noffs - 1 : 0) : noffs;
    int64_t D = weight->sizes[1];
    CtDType it = input->dtype == offsets->dtype ? input->dtype : CT_I64;
    CtDevice dev = ct_device_of(weight);
    bool fast_sum = mode == 0 && weight->dtype != CT_F64 && weight->strides[1] == 1 &&
                    (psw == NULL || CT_TENSOR(psw)->strides[0] == 1) && padding_idx < 0;
    if (bag_index_outputs((const int64_t *)ct_data(hidx), n, (const int64_t *)ct_data(hoff), B, mode, padding_idx, fast_sum, &o2b, &n_o2b, &size) < 0) {
        goto done;
    }
    PyObject *t_o2b = METH(KEEP(device_table(1, &n_o2b, o2b, false, dev)), "to", "(O)", ct_dtype_object(it));
    int64_t n_size = mode == 0 ? noffs : B; /* 'sum' gives zeros, one per offset */
    PyObject *t_size = METH(KEEP(device_table(1, &n_size, size, false, dev)), "to", "(O)", ct_dtype_object(it));
    PyObject *t_max = METH(t_size, "clone", NULL);
    if (mode == 2) {
        int64_t b2 = 0, w = 0;
        PyObject *gidx, *cnt;
        if (bag_tables(arena, input, offsets, include_last, padding_idx, V, dev, &b2, &w, &gidx, &cnt) < 0) {
            goto done;
        }
        t_max = D > 0 ? bag_max_indices(arena, a[1], a[0], gidx, B, w, it, dev)
                      : METH(t_size, "new_zeros", "(LL)", (long long)B, 0LL);
    }
    if (!arena->failed) {
        result = PyTuple_Pack(4, out, t_o2b, t_size, t_max);
    }
done:
    PyMem_Free(o2b);
    PyMem_Free(size);
    Py_XDECREF(hidx);
    Py_XDECREF(hoff);
    arena_free(arena);
    return result;
}

/* ====================================================================================================
 * bilinear
 * ==================================================================================================== */

/* bilinear(input1 (*, I), input2 (*, J), weight (O, I, J), bias (O,) = None) -> (*, O) */
static PyObject *py_bilinear(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input1", "input2", "weight", "bias", NULL};
    PyObject *a[4];
    if (ct_parse_args("bilinear", args, nargs, kw, names, 3, a) < 0 || need_tensor("bilinear", "input1", 1, a[0], false) < 0 ||
        need_tensor("bilinear", "input2", 2, a[1], false) < 0 || need_tensor("bilinear", "weight", 3, a[2], false) < 0 ||
        need_tensor("bilinear", "bias", 4, a[3], true) < 0) {
        return NULL;
    }
    CtTensorObject *x1 = CT_TENSOR(a[0]), *x2 = CT_TENSOR(a[1]), *w = CT_TENSOR(a[2]);
    if (x1->ndim != x2->ndim) {
        PyErr_Format(PyExc_RuntimeError, "bilinear(): input dimensions do not match: got %d and %d", x1->ndim,
                     x2->ndim);
        return NULL;
    }
    for (int d = 0; d + 1 < x1->ndim; d++) {
        if (x1->sizes[d] != x2->sizes[d]) {
            PyErr_Format(PyExc_RuntimeError, "bilinear(): input batch dimensions do not match at dim %d: got %lld and %lld",
                         d, (long long)x1->sizes[d], (long long)x2->sizes[d]);
            return NULL;
        }
    }
    if (w->ndim != 3 || x1->ndim == 0) {
        PyErr_Format(PyExc_RuntimeError, "bilinear(): weight must be 3-dimensional and the inputs at least "
                     "1-dimensional, got weight of dimension %d", w->ndim);
        return NULL;
    }
    CtTensorObject *bias = a[3] == NULL || a[3] == Py_None ? NULL : CT_TENSOR(a[3]);
    if (x1->dtype != x2->dtype || x1->dtype != w->dtype || (bias != NULL && bias->dtype != x1->dtype)) {
        char bias_part[64] = "";
        if (bias != NULL) {
            snprintf(bias_part, sizeof(bias_part), ", bias: %s", ct_cpp_type_name(bias->dtype));
        }
        PyErr_Format(PyExc_RuntimeError, "All tensors must have the same dtype, got input1: %s, input2: %s, weight: %s%s",
                     ct_cpp_type_name(x1->dtype), ct_cpp_type_name(x2->dtype), ct_cpp_type_name(w->dtype), bias_part);
        return NULL;
    }
    int64_t I = x1->sizes[x1->ndim - 1], J = x2->sizes[x2->ndim - 1], O = w->sizes[0];
    if (I != w->sizes[1]) {
        PyErr_Format(PyExc_RuntimeError, "bilinear(): input1 size does not match weight size: got %lld but expected %lld",
                     (long long)I, (long long)w->sizes[1]);
        return NULL;
    }
    if (J != w->sizes[2]) {
        PyErr_Format(PyExc_RuntimeError, "bilinear(): input2 size does not match weight size: got %lld but expected %lld",
                     (long long)J, (long long)w->sizes[2]);
        return NULL;
    }
    if (a[3] != NULL && a[3] != Py_None) {
        CtTensorObject *b = CT_TENSOR(a[3]);
        if (b->ndim != 1 || b->sizes[0] != O) {
            PyErr_Format(PyExc_RuntimeError, "bilinear(): bias size does not match weight size: got %lld but expected %lld",
                         (long long)(b->ndim == 1 ? b->sizes[0] : ct_numel(b)), (long long)O);
            return NULL;
        }
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *f1 = METH(a[0], "reshape", "(LL)", -1LL, (long long)I);
    PyObject *f2 = METH(a[1], "reshape", "(LL)", -1LL, (long long)J);
    /* (n, I) @ (I, O J) -> (n, O, J), times x2 along J, summed */
    PyObject *wt = METH(METH(a[2], "permute", "(iii)", 1, 0, 2), "reshape", "(LL)", (long long)I, (long long)(O * J));
    PyObject *t = METH(MATMUL(f1, wt), "view", "(LLL)", -1LL, (long long)O, (long long)J);
    PyObject *y = METH(MUL(t, METH(f2, "unsqueeze", "(i)", 1)), "sum", "(i)", -1);
    if (a[3] != NULL && a[3] != Py_None) {
        y = ADD(y, a[3]);
    }
    PyObject *out_shape = arena->failed ? NULL : KEEP(PyList_New(x1->ndim));
    for (int d = 0; out_shape != NULL && d < x1->ndim; d++) {
        PyList_SET_ITEM(out_shape, d, PyLong_FromLongLong(d + 1 < x1->ndim ? x1->sizes[d] : O));
    }
    PyObject *result = TAKE(METH(y, "view", "(O)", out_shape));
    arena_free(arena);
    return result;
}

/* ====================================================================================================
 * losses
 * ==================================================================================================== */

/* The class-index target of a margin loss: int64, 0-d or (N,) for input (C,) or (N, C). */
static int check_margin_input(const char *fname, CtTensorObject *x, CtTensorObject *t, bool multilabel)
{
    int nd = x->ndim;
    if (nd > 2 || (nd == 0 && multilabel)) {
        char s[128];
        ct_format_sizes(s, sizeof(s), x->ndim, x->sizes);
        PyErr_Format(PyExc_RuntimeError, "Expected non-empty vector or matrix with optional 0-dim batch size, "
                     "but got: %s", s);
        return -1;
    }
    if (t->dtype != CT_I64) {
        PyErr_Format(PyExc_RuntimeError, "expected scalar type Long but found %s", ct_scalar_type_name(t->dtype));
        return -1;
    }
    bool ok = multilabel ? (t->ndim == nd && memcmp(t->sizes, x->sizes, sizeof(int64_t) * (size_t)nd) == 0)
                         : (nd <= 1 ? t->ndim <= 1 && ct_numel(t) == 1 : t->ndim == 1 && t->sizes[0] == x->sizes[0]);
    if (!ok) {
        char s1[128], s2[128];
        ct_format_sizes(s1, sizeof(s1), x->ndim, x->sizes);
        ct_format_sizes(s2, sizeof(s2), t->ndim, t->sizes);
        if (multilabel) {
            PyErr_Format(PyExc_RuntimeError, "inconsistent target size: %s for input of size: %s", s2, s1);
        } else {
            PyErr_Format(PyExc_RuntimeError, "multi_margin_loss: target tensor should be 1-D with size equal to the "
                         "number of input samples (batch size). Expected target size [%lld], but got %s. Input has "
                         "shape %s.", (long long)(nd == 2 ? x->sizes[0] : 1), s2, s1);
        }
        return -1;
    }
    return 0;
}

/* multi_margin_loss's hinge terms (N, C): max(0, margin - x[y] + x[j]), 0 at j == y; *y the
 * target as (N, 1) (both arena-owned). */
static PyObject *multi_margin_terms(CtArena *arena, PyObject *x, PyObject *target, int64_t C, double margin,
                                    PyObject **y)
{
    PyObject *x2 = METH(x, "reshape", "(LL)", -1LL, (long long)C);               /* (N, C) */
    *y = METH(METH(target, "reshape", "(LL)", -1LL, 1LL), "long", NULL); /* (N, 1) */
    PyObject *xy = METH(x2, "gather", "(iO)", 1, *y);
    PyObject *z = METH(ADD(SUB(NUM(margin), xy), x2), "clamp_min", "(i)", 0);
    PyObject *cls = arena->failed ? NULL : FN("arange", "(L)", (long long)C);
    cls = METH(cls, "to", "(O)", ATTR(x, "device"));
    return WHERE(CMP(cls, *y, Py_EQ), NUM(0.0), z);
}

/* weight[y] as (N, 1) (arena-owned) */
static PyObject *margin_class_weight(CtArena *arena, PyObject *weight, PyObject *y)
{
    return METH(METH(weight, "index_select", "(iO)", 0, METH(y, "view", "(i)", -1)), "unsqueeze", "(i)", 1);
}

/* multi_margin_loss(input, target, p=1, margin=1, weight=None, reduction=mean):
 * sum over j != y of max(0, margin - x[y] + x[j])^p (times weight[y]) / C */
static PyObject *py_multi_margin_loss(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "target", "p", "margin", "weight", "reduction", NULL};
    PyObject *a[6];
    int64_t p = 1, reduction = 1;
    double margin = 1.0;
    if (ct_parse_args("multi_margin_loss", args, nargs, kw, names, 2, a) < 0 ||
        need_tensor("multi_margin_loss", "input", 1, a[0], false) < 0 ||
        need_tensor("multi_margin_loss", "target", 2, a[1], false) < 0 ||
        need_tensor("multi_margin_loss", "weight", 5, a[4], true) < 0 || opt_int(a[2], &p) < 0 ||
        opt_double(a[3], &margin) < 0 || opt_int(a[5], &reduction) < 0) {
        return NULL;
    }
    if (p != 1 && p != 2) {
        PyErr_SetString(PyExc_ValueError, "only p == 1 and p == 2 supported");
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[0]);
    if (check_margin_input("multi_margin_loss", x, CT_TENSOR(a[1]), false) < 0) {
        return NULL;
    }
    int64_t C = x->ndim == 0 ? 1 : x->sizes[x->ndim - 1];
    if (a[4] != NULL && a[4] != Py_None && (CT_TENSOR(a[4])->ndim != 1 || CT_TENSOR(a[4])->sizes[0] != C)) {
        PyErr_Format(PyExc_RuntimeError, "inconsistent weight size, expected %lld but got %lld", (long long)C,
                     (long long)ct_numel(CT_TENSOR(a[4])));
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *out_of_range = METH(METH(ADD(CMP(a[1], INT(0), Py_LT), CMP(a[1], INT(C), Py_GE)), "any", NULL), "item", NULL);
    int bad = out_of_range != NULL ? PyObject_IsTrue(out_of_range) : -1;
    if (bad != 0) {
        if (bad > 0) {
            PyErr_SetString(PyExc_RuntimeError, "target out of range");
        }
        arena_free(arena);
        return NULL;
    }
    PyObject *y;
    PyObject *z = multi_margin_terms(arena, a[0], a[1], C, margin, &y);
    if (p == 2) {
        z = MUL(z, z);
    }
    if (a[4] != NULL && a[4] != Py_None) {
        z = MUL(z, margin_class_weight(arena, a[4], y));
    }
    PyObject *loss = DIV(METH(z, "sum", "(i)", 1), NUM((double)C));
    if (x->ndim <= 1 && CT_TENSOR(a[1])->ndim == 0) { /* PyTorch: a 1-element target keeps its (1,) */
        loss = METH(loss, "view", "(O)", arena->failed ? NULL : KEEP(PyTuple_New(0)));
    }
    PyObject *result = TAKE(reduce_loss(arena, loss, reduction));
    arena_free(arena);
    return result;
}

/* multilabel_margin_loss's hinge terms (N, j, k): max(0, 1 - x[target j] + x[k]), and *pair the
 * (N, j, k) pairs that count (j listed, before the first -1; k not a target) as 0/1 in dtype;
 * *tidx the target clamped at 0 (N, C). All arena-owned. */
static PyObject *multilabel_margin_terms(CtArena *arena, PyObject *x, PyObject *target, int64_t C, CtDType dtype,
                                         PyObject **pair, PyObject **tidx)
{
    PyObject *x2 = METH(x, "reshape", "(LL)", -1LL, (long long)C);
    PyObject *t2 = METH(target, "reshape", "(LL)", -1LL, (long long)C);
    /* listed: the entries before the first -1 (a running product of target != -1) */
    PyObject *listed = METH(METH(CMP(t2, INT(-1), Py_NE), "long", NULL), "cumprod", "(i)", 1);
    *tidx = METH(t2, "clamp_min", "(i)", 0);
    PyObject *is_target = CMP(METH(FN("zeros_like", "(O)", t2), "scatter_add", "(iOO)", 1, *tidx, listed), INT(0), Py_GT);
    PyObject *xt = METH(x2, "gather", "(iO)", 1, *tidx); /* (N, C): x[target j] */
    *pair = METH(MUL(METH(listed, "unsqueeze", "(i)", 2), METH(METH(is_target, "logical_not", NULL), "unsqueeze", "(i)", 1)),
                 "to", "(O)", ct_dtype_object(dtype));
    return METH(ADD(SUB(NUM(1.0), METH(xt, "unsqueeze", "(i)", 2)), METH(x2, "unsqueeze", "(i)", 1)), "clamp_min", "(i)",
                0);
}

/* multilabel_margin_loss(input, target, reduction=mean): target holds class indices up to the
 * first -1; sum over the listed j and the unlisted k of max(0, 1 - (x[j] - x[k])) / C */
static PyObject *py_multilabel_margin_loss(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "target", "reduction", NULL};
    PyObject *a[3];
    int64_t reduction = 1;
    if (ct_parse_args("multilabel_margin_loss", args, nargs, kw, names, 2, a) < 0 ||
        need_tensor("multilabel_margin_loss", "input", 1, a[0], false) < 0 ||
        need_tensor("multilabel_margin_loss", "target", 2, a[1], false) < 0 || opt_int(a[2], &reduction) < 0) {
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[0]), *t = CT_TENSOR(a[1]);
    if (check_margin_input("multilabel_margin_loss", x, t, true) < 0) {
        return NULL;
    }
    int64_t C = x->sizes[x->ndim - 1];
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *result = NULL;
    PyObject *bad = METH(METH(ADD(CMP(a[1], INT(-1), Py_LT), CMP(a[1], INT(C), Py_GE)), "any", NULL), "item", NULL);
    if (bad == NULL) {
        goto done;
    }
    if (PyObject_IsTrue(bad)) {
        PyErr_SetString(PyExc_RuntimeError, "multilabel_margin_loss: target out of range");
        goto done;
    }
    PyObject *pair, *tidx;
    PyObject *d = multilabel_margin_terms(arena, a[0], a[1], C, x->dtype, &pair, &tidx);
    PyObject *loss = DIV(METH(MUL(d, pair), "sum", "((ii))", 1, 2), NUM((double)C));
    if (x->ndim == 1) {
        loss = METH(loss, "view", "(O)", arena->failed ? NULL : KEEP(PyTuple_New(0)));
    }
    result = TAKE(reduce_loss(arena, loss, reduction));
done:
    arena_free(arena);
    return result;
}

/* ----- the margin losses' backward formulas (one node each, as PyTorch) ----- */
#define BW_ARG(i) (n->args[(i)] != NULL && n->args[(i)] != Py_None ? n->args[(i)] : NULL)

/* A loss's gradient per sample as (N, 1) over C classes, divided by C: g itself for reduction
 * none, else g (over N for mean) for every sample. */
static PyObject *margin_sample_grad(CtArena *arena, PyObject *g, int64_t reduction, int64_t N, int64_t C)
{
    PyObject *gs = METH(g, "reshape", "(LL)", -1LL, 1LL);
    return DIV(gs, NUM((double)C * (reduction == 1 && N > 0 ? (double)N : 1.0)));
}

/* input's gradient v (N, C) as input's shape and dtype into gi[0]. 0 or -1. */
static int margin_put_grad(CtArena *arena, CtNodeObject *n, PyObject *v, PyObject **gi)
{
    PyObject *shape = KEEP(ct_size_object(n->meta[0].ndim, n->meta[0].sizes));
    v = METH(v, "reshape", "(O)", shape);
    gi[0] = v != NULL ? ct_fit_grad(v, &n->meta[0]) : NULL;
    return gi[0] == NULL ? -1 : 0;
}

static int64_t meta_numel(const CtTensorMeta *m)
{
    int64_t k = 1;
    for (int i = 0; i < m->ndim; i++) {
        k *= m->sizes[i];
    }
    return k;
}

/* multi_margin_loss: each active term (hinge > 0) gives x[j] w[y] p hinge^(p-1) / C, and x[y]
 * minus their sum. */
int ct_nn_bw_multi_margin_loss(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0), *t = x ? (PyObject *)ct_node_tensor(n, 1) : NULL;
    int64_t p = 1, reduction = 1;
    double margin = 1.0;
    if (t == NULL || opt_int(BW_ARG(2), &p) < 0 || opt_double(BW_ARG(3), &margin) < 0 || opt_int(BW_ARG(5), &reduction) < 0) {
        return -1;
    }
    const CtTensorMeta *m = &n->meta[0];
    int64_t C = m->ndim == 0 ? 1 : m->sizes[m->ndim - 1], N = C > 0 ? meta_numel(m) / C : 0;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *y;
    PyObject *z = multi_margin_terms(arena, x, t, C, margin, &y);
    PyObject *coef = p == 2 ? MUL(z, NUM(2.0)) : MASK(CMP(z, NUM(0.0), Py_GT), x);
    if (BW_ARG(4) != NULL) {
        coef = MUL(coef, margin_class_weight(arena, BW_ARG(4), y));
    }
    PyObject *G = MUL(coef, margin_sample_grad(arena, g[0], reduction, N, C)); /* (N, C), 0 at y */
    PyObject *v = METH(G, "scatter_add", "(iOO)", 1, y, NEG(METH(G, "sum", "(iO)", 1, Py_True)));
    int rc = margin_put_grad(arena, n, v, gi);
    arena_free(arena);
    return rc;
}

/* multilabel_margin_loss: each active (j, k) pair (hinge > 0) gives x[k] 1/C and x[target j] -1/C. */
int ct_nn_bw_multilabel_margin_loss(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0), *t = x ? (PyObject *)ct_node_tensor(n, 1) : NULL;
    int64_t reduction = 1;
    if (t == NULL || opt_int(BW_ARG(2), &reduction) < 0) {
        return -1;
    }
    const CtTensorMeta *m = &n->meta[0];
    int64_t C = m->sizes[m->ndim - 1], N = C > 0 ? meta_numel(m) / C : 0;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *pair, *tidx;
    PyObject *d = multilabel_margin_terms(arena, x, t, C, m->dtype, &pair, &tidx);
    PyObject *gs = METH(margin_sample_grad(arena, g[0], reduction, N, C), "unsqueeze", "(i)", 2); /* (N, 1, 1) */
    PyObject *G = MUL(MUL(pair, CMPF(d, NUM(0.0), Py_GT, d)), gs);                             /* (N, j, k) */
    PyObject *v = METH(METH(G, "sum", "(i)", 1), "scatter_add", "(iOO)", 1, tidx, NEG(METH(G, "sum", "(i)", 2)));
    int rc = margin_put_grad(arena, n, v, gi);
    arena_free(arena);
    return rc;
}
#undef BW_ARG

/* multilabel_soft_margin_loss(input, target, weight=None, reduction=mean):
 * -(t log sigmoid(x) + (1 - t) log sigmoid(-x)) [* weight], averaged over the class dim */
static PyObject *py_multilabel_soft_margin_loss(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "target", "weight", "reduction", NULL};
    PyObject *a[4];
    int64_t reduction = 1;
    if (ct_parse_args("multilabel_soft_margin_loss", args, nargs, kw, names, 2, a) < 0 ||
        need_tensor("multilabel_soft_margin_loss", "input", 1, a[0], false) < 0 ||
        need_tensor("multilabel_soft_margin_loss", "target", 2, a[1], false) < 0 ||
        need_tensor("multilabel_soft_margin_loss", "weight", 3, a[2], true) < 0 || opt_int(a[3], &reduction) < 0) {
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[0]);
    if (x->ndim == 0) {
        PyErr_SetString(PyExc_IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got -1)");
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *loss = NEG(ADD(MUL(a[1], FN("log_sigmoid", "(O)", a[0])),
                             MUL(SUB(INT(1), a[1]), FN("log_sigmoid", "(O)", NEG(a[0])))));
    if (a[2] != NULL && a[2] != Py_None) {
        loss = MUL(loss, a[2]);
    }
    loss = DIV(METH(loss, "sum", "(i)", x->ndim - 1), NUM((double)x->sizes[x->ndim - 1]));
    PyObject *result = TAKE(reduce_loss(arena, loss, reduction));
    arena_free(arena);
    return result;
}

/* triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=None, margin=1,
 * swap=False, reduction=mean): max(0, margin + d(a, p) - d(a, n)), d pairwise_distance by default */
static PyObject *py_triplet_margin_with_distance_loss(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                                      PyObject *kw)
{
    static const char *const names[] = {"anchor", "positive", "negative", "distance_function", "margin", "swap",
                                        "reduction", NULL};
    PyObject *a[7];
    double margin = 1.0;
    bool swap = false;
    int64_t reduction = 1;
    if (ct_parse_args("triplet_margin_with_distance_loss", args, nargs, kw, names, 3, a) < 0 ||
        need_tensor("triplet_margin_with_distance_loss", "anchor", 1, a[0], false) < 0 ||
        need_tensor("triplet_margin_with_distance_loss", "positive", 2, a[1], false) < 0 ||
        need_tensor("triplet_margin_with_distance_loss", "negative", 3, a[2], false) < 0 ||
        opt_double(a[4], &margin) < 0 || ct_arg_bool(a[5], &swap) < 0 || opt_int(a[6], &reduction) < 0) {
        return NULL;
    }
    if (margin <= 0) {
        PyErr_Format(PyExc_ValueError, "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got %S "
                     "instead", a[4]);
        return NULL;
    }
    int na = CT_TENSOR(a[0])->ndim, np = CT_TENSOR(a[1])->ndim, nn = CT_TENSOR(a[2])->ndim;
    if (na != np || np != nn) {
        PyErr_Format(PyExc_RuntimeError,
                     "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
                     "but got: anchor %dD, positive %dD, and negative %dD inputs",
                     na, np, nn);
        return NULL;
    }
    PyObject *fn = a[3];
    if (fn != NULL && fn != Py_None && !PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "distance_function must be callable, not %s", ct_type_name(fn));
        return NULL;
    }
    bool dflt = fn == NULL || fn == Py_None;
    CtArena scratch = {0}, *arena = &scratch;
#define DIST(u, v) (dflt ? FN("pairwise_distance", "(OO)", (u), (v)) : KEEP(PyObject_CallFunctionObjArgs(fn, (u), (v), NULL)))
    PyObject *dpos = DIST(a[0], a[1]);
    PyObject *dneg = arena->failed ? NULL : DIST(a[0], a[2]);
    if (swap && !arena->failed) {
        dneg = FN("minimum", "(OO)", dneg, DIST(a[1], a[2]));
    }
#undef DIST
    PyObject *loss = METH(SUB(ADD(dpos, NUM(margin)), dneg), "clamp_min", "(i)", 0);
    PyObject *result = TAKE(reduce_loss(arena, loss, reduction));
    arena_free(arena);
    return result;
}

/* ----------------------------------------------------------------------------------------------------
 * ctc_loss: the primitive _ctc_loss (CtcLossBackward0; kernels CtNNKernels.ctc_loss / ctc_loss_backward,
 * the CPU's below, CUDA's in cuda/nn.cu) and the public ctc_loss composed of it as PyTorch composes it
 * ---------------------------------------------------------------------------------------------------- */

static double ctc_load(const void *p, bool f64, int64_t i)
{
    return f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static void ctc_store(void *p, bool f64, int64_t i, double v)
{
    if (f64) {
        ((double *)p)[i] = v;
    } else {
        ((float *)p)[i] = (float)v;
    }
}

/* The alpha recursion of samples [begin, end) (CtCTCDesc). */
static void ctc_forward_samples(int64_t begin, int64_t end, void *ctx)
{
    const CtCTCDesc *d = ctx;
    bool f64 = d->dtype == CT_F64;
    int64_t T = d->T, N = d->N, C = d->C, L = d->L;
    for (int64_t b = begin; b < end; b++) {
        int64_t Tb = d->lengths[2 * b], Lb = 2 * d->lengths[2 * b + 1] + 1;
        const int64_t *ext = d->ext + b * L;
        int64_t base = b * T * L;
        for (int64_t i = 0; i < T * L; i++) {
            ctc_store(d->log_alpha, f64, base + i, -INFINITY);
        }
        for (int64_t t = 0; t < Tb; t++) {
            for (int64_t s = 0; s < Lb; s++) {
                double v;
                if (t == 0) {
                    v = s < 2 ? 0.0 : -INFINITY;
                } else {
                    const int64_t prev = base + (t - 1) * L;
                    double a1 = ctc_load(d->log_alpha, f64, prev + s);
                    double a2 = s >= 1 ? ctc_load(d->log_alpha, f64, prev + s - 1) : -INFINITY;
                    double a3 = s >= 2 && ext[s] != ext[s - 2] ? ctc_load(d->log_alpha, f64, prev + s - 2) : -INFINITY;
                    v = ct_ctc_lse3(a1, a2, a3);
                }
                if (v != -INFINITY) {
                    ctc_store(d->log_alpha, f64, base + t * L + s, v + ctc_load(d->log_probs, f64, (t * N + b) * C + ext[s]));
                }
            }
        }
        double lse = 0.0; /* no input: only an empty target has its (one, empty) alignment */
        if (Tb > 0) {
            int64_t last = base + (Tb - 1) * L;
            lse = ct_ctc_lse3(ctc_load(d->log_alpha, f64, last + Lb - 1),
                              Lb > 1 ? ctc_load(d->log_alpha, f64, last + Lb - 2) : -INFINITY, -INFINITY);
        } else if (Lb > 1) {
            lse = -INFINITY;
        }
        ctc_store(d->nll, f64, b, -lse);
    }
}

/* The beta recursion and the gradient of samples [begin, end) (CtCTCDesc). */
static void ctc_backward_samples(int64_t begin, int64_t end, void *ctx)
{
    const CtCTCDesc *d = ctx;
    bool f64 = d->dtype == CT_F64;
    int64_t T = d->T, N = d->N, C = d->C, L = d->L;
    for (int64_t b = begin; b < end; b++) {
        int64_t Tb = d->lengths[2 * b], Lb = 2 * d->lengths[2 * b + 1] + 1;
        const int64_t *ext = d->ext + b * L;
        double *beta = d->work + b * (T * L + C), *lcab = beta + T * L;
        double nll = ctc_load(d->nll, f64, b), gr = ctc_load(d->grad_out, f64, b);
        if (d->zero_infinity && nll == INFINITY) {
            Tb = 0;
        }
        for (int64_t t = Tb - 1; t >= 0; t--) {
            for (int64_t s = 0; s < Lb; s++) {
                double v = ct_ctc_beta_in(t == Tb - 1 ? NULL : beta + (t + 1) * L, ext, s, Lb);
                beta[t * L + s] = v == -INFINITY ? v : v + ctc_load(d->log_probs, f64, (t * N + b) * C + ext[s]);
            }
        }
        for (int64_t t = 0; t < T; t++) {
            int64_t row = (t * N + b) * C;
            if (t >= Tb) {
                for (int64_t c = 0; c < C; c++) {
                    ctc_store(d->grad_input, f64, row + c, 0.0);
                }
                continue;
            }
            for (int64_t c = 0; c < C; c++) {
                lcab[c] = -INFINITY;
            }
            for (int64_t s = 0; s < Lb; s++) {
                double ab = ctc_load(d->log_alpha, f64, (b * T + t) * L + s) + beta[t * L + s];
                lcab[ext[s]] = ct_ctc_lse3(lcab[ext[s]], ab, -INFINITY);
            }
            for (int64_t c = 0; c < C; c++) {
                ctc_store(d->grad_input, f64, row + c, ct_ctc_grad(ctc_load(d->log_probs, f64, row + c), lcab[c], nll, gr));
            }
        }
    }
}

static int64_t ctc_grain(const CtCTCDesc *d)
{
    int64_t per = d->T * (d->L + d->C) + 1;
    return per >= 16384 ? 1 : 16384 / per + 1;
}

int ct_cpu_ctc_loss(const CtCTCDesc *d)
{
    ct_parallel_for(d->N, ctc_grain(d), ctc_forward_samples, (void *)d);
    return 0;
}

int ct_cpu_ctc_loss_backward(const CtCTCDesc *d)
{
    ct_parallel_for(d->N, ctc_grain(d), ctc_backward_samples, (void *)d);
    return 0;
}

/* What the kernels need of (log_probs, targets, input_lengths, target_lengths, blank), checked in PyTorch's
 * order with its messages; owned tensors released by ctc_plan_free. */
typedef struct {
    CtCTCDesc d;
    CtTensorObject *lp, *ext, *lengths;
} CtcPlan;

static void ctc_plan_free(CtcPlan *p)
{
    Py_CLEAR(p->lp);
    Py_CLEAR(p->ext);
    Py_CLEAR(p->lengths);
}

static int ctc_integral_lengths(PyObject *il, PyObject *tl)
{
    if (!ct_is_integral(CT_TENSOR(il)->dtype, false)) {
        PyErr_SetString(PyExc_RuntimeError, "input_lengths must be integral");
        return -1;
    }
    if (!ct_is_integral(CT_TENSOR(tl)->dtype, false)) {
        PyErr_SetString(PyExc_RuntimeError, "target_lengths must be integral");
        return -1;
    }
    return 0;
}

#define CTC_FROM " (while checking arguments for ctc_loss_allocate_outputs)"

/* Checks the lengths against the shapes; fills ext (N, L) and lens (N, 2) on the host (L: *Lp). */
static int ctc_host_tables(const CtTensorObject *tg, const int64_t *tgd, const int64_t *il, const int64_t *tl, int64_t T,
                           int64_t N, int64_t C, int64_t blank, int64_t **ext_out, int64_t *Lp, int64_t *lens)
{
    int64_t smax = 0, pos = 0;
    for (int64_t b = 0; b < N; b++) {
        if (tl[b] < 0) {
            PyErr_Format(PyExc_RuntimeError, "Expected target_lengths to have value at least 0, but got value %lld" CTC_FROM,
                         (long long)tl[b]);
            return -1;
        }
        pos += tl[b];
        smax = tl[b] > smax ? tl[b] : smax;
    }
    bool concat = tg->ndim == 1;
    int64_t want0 = concat ? pos : N;
    if (tg->sizes[0] != want0) {
        PyErr_Format(PyExc_RuntimeError, "Expected tensor to have size %lld at dimension 0, but got size %lld for "
                     "argument #2 'targets'" CTC_FROM, (long long)want0, (long long)tg->sizes[0]);
        return -1;
    }
    if (!concat && tg->sizes[1] < smax) {
        PyErr_Format(PyExc_RuntimeError, "Expected tensor to have size at least %lld at dimension 1, but got size %lld "
                     "for argument #2 'targets'" CTC_FROM, (long long)smax, (long long)tg->sizes[1]);
        return -1;
    }
    for (int64_t b = 0; b < N; b++) {
        if (il[b] < 0 || il[b] > T) {
            PyErr_Format(PyExc_RuntimeError, "Expected input_lengths to have value at %s %lld, but got value %lld" CTC_FROM,
                         il[b] < 0 ? "least" : "most", (long long)(il[b] < 0 ? 0 : T), (long long)il[b]);
            return -1;
        }
    }
    int64_t L = 2 * smax + 1;
    int64_t *ext = PyMem_Malloc(sizeof(int64_t) * (size_t)(N * L + 1));
    if (ext == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (int64_t b = 0, start = 0; b < N; b++) {
        const int64_t *row = tgd + (concat ? start : b * (tg->ndim == 2 ? tg->sizes[1] : 0));
        for (int64_t s = 0; s < L; s++) {
            int64_t lab = s % 2 == 1 && s / 2 < tl[b] ? row[s / 2] : blank;
            if (lab < 0 || lab >= C) {
                PyErr_Format(PyExc_RuntimeError, "ctc_loss: target label %lld out of range [0, %lld)", (long long)lab,
                             (long long)C);
                PyMem_Free(ext);
                return -1;
            }
            ext[b * L + s] = lab;
        }
        lens[2 * b] = il[b];
        lens[2 * b + 1] = tl[b];
        start += tl[b];
    }
    *ext_out = ext;
    *Lp = L;
    return 0;
}

/* Fills p from 3-d log_probs and the targets / lengths tensors. 0 or -1 (p is freed by the caller either way). */
static int ctc_plan(CtcPlan *p, PyObject *log_probs, PyObject *targets, PyObject *input_lengths,
                    PyObject *target_lengths, int64_t blank)
{
    CtTensorObject *lp = CT_TENSOR(log_probs), *tg = CT_TENSOR(targets);
    CtDevice dev = ct_device_of(lp);
    if (ctc_integral_lengths(input_lengths, target_lengths) < 0) {
        return -1;
    }
    if (lp->dtype != CT_F32 && lp->dtype != CT_F64) {
        PyErr_Format(PyExc_NotImplementedError, "\"ctc_loss_%s\" not implemented for '%s'",
                     dev.type == CT_DEV_CUDA ? "cuda" : "cpu", ct_scalar_type_name(lp->dtype));
        return -1;
    }
    if (lp->ndim != 3) {
        PyErr_Format(PyExc_RuntimeError, "Expected 3-dimensional tensor, but got %d-dimensional tensor for argument #1 "
                     "'log_probs'" CTC_FROM, lp->ndim);
        return -1;
    }
    if (tg->ndim < 1 || tg->ndim > 2) {
        PyErr_Format(PyExc_RuntimeError, "Expected 1 to 2 dimensions, but got %d-dimensional tensor for argument #2 "
                     "'targets'" CTC_FROM, tg->ndim);
        return -1;
    }
    int64_t T = lp->sizes[0], N = lp->sizes[1], C = lp->sizes[2];
    if (blank < 0 || blank >= C) {
        PyErr_SetString(PyExc_RuntimeError, "blank must be in label range");
        return -1;
    }
    if (ct_numel(CT_TENSOR(input_lengths)) != N) {
        PyErr_SetString(PyExc_RuntimeError, "input_lengths must be of size batch_size");
        return -1;
    }
    if (ct_numel(CT_TENSOR(target_lengths)) != N) {
        PyErr_SetString(PyExc_RuntimeError, "target_lengths must be of size batch_size");
        return -1;
    }
    int rc = -1;
    int64_t *ext = NULL, *lens = NULL, L = 1;
    CtTensorObject *htg = host_int64(tg);
    CtTensorObject *hil = htg ? host_int64(CT_TENSOR(input_lengths)) : NULL;
    CtTensorObject *htl = hil ? host_int64(CT_TENSOR(target_lengths)) : NULL;
    lens = htl ? PyMem_Malloc(sizeof(int64_t) * (size_t)(2 * N + 1)) : NULL;
    if (htl != NULL && lens == NULL) {
        PyErr_NoMemory();
    }
    if (lens == NULL || ctc_host_tables(tg, (int64_t *)ct_data(htg), (int64_t *)ct_data(hil), (int64_t *)ct_data(htl),
                                        T, N, C, blank, &ext, &L, lens) < 0) {
        goto done;
    }
    int64_t nl[2] = {N, L}, n2[2] = {N, 2};
    p->ext = (CtTensorObject *)device_table(2, nl, ext, false, dev);
    p->lengths = p->ext ? (CtTensorObject *)device_table(2, n2, lens, false, dev) : NULL;
    p->lp = p->lengths ? ct_nn_dense(lp, lp->dtype) : NULL;
    if (p->lp == NULL) {
        goto done;
    }
    p->d = (CtCTCDesc){.dtype = lp->dtype, .device = dev, .T = T, .N = N, .C = C, .L = L,
                       .log_probs = ct_data(p->lp), .ext = (const int64_t *)ct_data(p->ext),
                       .lengths = (const int64_t *)ct_data(p->lengths)};
    rc = 0;
done:
    PyMem_Free(ext);
    PyMem_Free(lens);
    Py_XDECREF(htg);
    Py_XDECREF(hil);
    Py_XDECREF(htl);
    return rc;
}

static int ctc_tensor_args(const char *fname, const char *const *names, PyObject *const *a, int n)
{
    for (int i = 0; i < n; i++) {
        if (need_tensor(fname, names[i], i + 1, a[i], false) < 0) {
            return -1;
        }
    }
    return 0;
}

/* The device's kernel, or NULL with NotImplementedError set. */
static const struct CtNNKernels *ctc_kernels(CtDevice dev, bool backward)
{
    const struct CtNNKernels *k = ct_nn_kernels(dev);
    if (k != NULL && (backward ? k->ctc_loss_backward : k->ctc_loss) == NULL) {
        PyErr_SetString(PyExc_NotImplementedError, "ctc_loss is not implemented on this device");
        return NULL;
    }
    return k;
}

/* _ctc_loss(log_probs (T, N, C), targets, input_lengths, target_lengths, blank=0, zero_infinity=False)
 *   -> (neg_log_likelihood (N), log_alpha (N, T, L)) */
static PyObject *py__ctc_loss(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"log_probs", "targets", "input_lengths", "target_lengths", "blank",
                                        "zero_infinity", NULL};
    PyObject *a[6];
    int64_t blank = 0;
    bool zero_inf = false;
    if (ct_parse_args("_ctc_loss", args, nargs, kw, names, 4, a) < 0 || ctc_tensor_args("_ctc_loss", names, a, 4) < 0 ||
        opt_int(a[4], &blank) < 0 || ct_arg_bool(a[5], &zero_inf) < 0) {
        return NULL;
    }
    CtcPlan p = {0};
    PyObject *result = NULL;
    CtTensorObject *nll = NULL, *la = NULL;
    const struct CtNNKernels *k = NULL;
    if (ctc_plan(&p, a[0], a[1], a[2], a[3], blank) < 0 || (k = ctc_kernels(p.d.device, false)) == NULL) {
        goto done;
    }
    int64_t las[3] = {p.d.N, p.d.T, p.d.L};
    nll = ct_empty(1, &p.d.N, p.d.dtype, p.d.device);
    la = nll ? ct_empty(3, las, p.d.dtype, p.d.device) : NULL;
    if (la == NULL) {
        goto done;
    }
    p.d.nll = ct_data(nll);
    p.d.log_alpha = ct_data(la);
    if (k->ctc_loss(&p.d) < 0) {
        goto done;
    }
    result = PyTuple_Pack(2, (PyObject *)nll, (PyObject *)la);
done:
    Py_XDECREF(nll);
    Py_XDECREF(la);
    ctc_plan_free(&p);
    return result;
}

/* _ctc_loss_backward(grad (N), log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, log_alpha,
 *   blank, zero_infinity) -> grad of log_probs (T, N, C) */
static PyObject *py__ctc_loss_backward(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"grad", "log_probs", "targets", "input_lengths", "target_lengths",
                                        "neg_log_likelihood", "log_alpha", "blank", "zero_infinity", NULL};
    PyObject *a[9];
    int64_t blank = 0;
    bool zero_inf = false;
    if (ct_parse_args("_ctc_loss_backward", args, nargs, kw, names, 9, a) < 0 ||
        ctc_tensor_args("_ctc_loss_backward", names, a, 7) < 0 || ct_arg_int64(a[7], &blank) < 0 ||
        ct_arg_bool(a[8], &zero_inf) < 0) {
        return NULL;
    }
    CtcPlan p = {0};
    CtTensorObject *g = NULL, *nll = NULL, *la = NULL, *out = NULL, *work = NULL;
    const struct CtNNKernels *k = NULL;
    PyObject *result = NULL;
    if (ctc_plan(&p, a[1], a[2], a[3], a[4], blank) < 0 || (k = ctc_kernels(p.d.device, true)) == NULL) {
        goto done;
    }
    int64_t las[3] = {p.d.N, p.d.T, p.d.L};
    if (ct_numel(CT_TENSOR(a[0])) != p.d.N || ct_numel(CT_TENSOR(a[5])) != p.d.N ||
        CT_TENSOR(a[6])->ndim != 3 || memcmp(CT_TENSOR(a[6])->sizes, las, sizeof(las)) != 0) {
        PyErr_Format(PyExc_RuntimeError, "_ctc_loss_backward: expected grad and neg_log_likelihood of %lld elements "
                     "and log_alpha of shape [%lld, %lld, %lld]", (long long)p.d.N, (long long)las[0],
                     (long long)las[1], (long long)las[2]);
        goto done;
    }
    int64_t wn = p.d.N * (p.d.T * p.d.L + p.d.C);
    g = ct_nn_dense(CT_TENSOR(a[0]), p.d.dtype);
    nll = g ? ct_nn_dense(CT_TENSOR(a[5]), p.d.dtype) : NULL;
    la = nll ? ct_nn_dense(CT_TENSOR(a[6]), p.d.dtype) : NULL;
    out = la ? ct_empty(3, p.lp->sizes, p.d.dtype, p.d.device) : NULL;
    work = out ? ct_empty(1, &wn, CT_F64, p.d.device) : NULL;
    if (work == NULL) {
        goto done;
    }
    p.d.grad_out = ct_data(g);
    p.d.nll = ct_data(nll);
    p.d.log_alpha = ct_data(la);
    p.d.grad_input = ct_data(out);
    p.d.work = (double *)ct_data(work);
    p.d.zero_infinity = zero_inf;
    if (k->ctc_loss_backward(&p.d) < 0) {
        goto done;
    }
    result = Py_NewRef((PyObject *)out);
done:
    Py_XDECREF(g);
    Py_XDECREF(nll);
    Py_XDECREF(la);
    Py_XDECREF(out);
    Py_XDECREF(work);
    ctc_plan_free(&p);
    return result;
}

/* CtcLossBackward0: (log_probs, targets, input_lengths, target_lengths, blank, zero_infinity), outputs
 * (neg_log_likelihood, log_alpha); the gradient flows from the first output only. */
int ct_nn_bw_ctc_loss(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (n->edge_nodes[0] == NULL || g[0] == NULL) {
        return 0;
    }
    PyObject *lp = (PyObject *)ct_node_tensor(n, 0), *tg = (PyObject *)ct_node_tensor(n, 1);
    PyObject *il = (PyObject *)ct_node_tensor(n, 2), *tl = (PyObject *)ct_node_tensor(n, 3);
    if (lp == NULL || tg == NULL || il == NULL || tl == NULL) {
        return -1;
    }
    PyObject *nll = ct_node_output_ref(n, 0);
    PyObject *la = nll ? ct_node_output_ref(n, 1) : NULL;
    PyObject *blank = n->args[4] != NULL && n->args[4] != Py_None ? Py_NewRef(n->args[4]) : PyLong_FromLong(0);
    PyObject *zi = n->args[5] != NULL && n->args[5] != Py_None ? n->args[5] : Py_False;
    PyObject *res = NULL;
    if (la != NULL && blank != NULL) {
        PyObject *args[9] = {g[0], lp, tg, il, tl, nll, la, blank, zi};
        res = ct_op("_ctc_loss_backward", args, 9, NULL);
    }
    Py_XDECREF(nll);
    Py_XDECREF(la);
    Py_XDECREF(blank);
    if (res == NULL) {
        return -1;
    }
    gi[0] = ct_fit_grad(res, &n->meta[0]);
    Py_DECREF(res);
    return gi[0] == NULL ? -1 : 0;
}

/* ctc_loss(log_probs (T, N, C) or (T, C), targets (N, S) or (sum S_n,), input_lengths (N,), target_lengths (N,),
 * blank=0, reduction=mean, zero_infinity=False): PyTorch's ctc_loss_impl over _ctc_loss. */
static PyObject *py_ctc_loss(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"log_probs", "targets", "input_lengths", "target_lengths", "blank",
                                        "reduction", "zero_infinity", NULL};
    PyObject *a[7];
    int64_t blank = 0, reduction = 1;
    bool zero_inf = false;
    if (ct_parse_args("ctc_loss", args, nargs, kw, names, 4, a) < 0 || ctc_tensor_args("ctc_loss", names, a, 4) < 0 ||
        opt_int(a[4], &blank) < 0 || opt_int(a[5], &reduction) < 0 || ct_arg_bool(a[6], &zero_inf) < 0 ||
        ctc_integral_lengths(a[2], a[3]) < 0) {
        return NULL;
    }
    CtTensorObject *lp = CT_TENSOR(a[0]);
    if (ct_numel(lp) == 0) {
        PyErr_SetString(PyExc_RuntimeError, "log_probs tensor must not be empty");
        return NULL;
    }
    bool batched = lp->ndim == 3;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *lp3 = batched ? a[0] : METH(a[0], "unsqueeze", "(i)", 1);
    PyObject *pair = FN("_ctc_loss", "(OOOOLO)", lp3, a[1], a[2], a[3], (long long)blank, zero_inf ? Py_True : Py_False);
    PyObject *loss = pair ? PyTuple_GetItem(pair, 0) : NULL;
    if (loss != NULL && zero_inf) {
        PyObject *zero = KEEP((PyObject *)ct_zeros(0, NULL, lp->dtype, ct_device_of(lp)));
        loss = WHERE(CMP(loss, NUM(INFINITY), Py_EQ), zero, loss);
    }
    if (reduction == 1) {
        PyObject *tl = METH(METH(a[3], "to", "(OO)", ATTR(loss, "device"), ct_dtype_object(lp->dtype)), "view", "(i)", -1);
        loss = METH(DIV(loss, METH(tl, "clamp_min", "(i)", 1)), "mean", NULL);
    } else if (reduction == 2) {
        loss = METH(loss, "sum", NULL);
    } else if (!batched) {
        loss = METH(loss, "squeeze", "(i)", 0);
    }
    PyObject *result = arena->failed || loss == NULL ? NULL : Py_NewRef(loss);
    arena_free(arena);
    return result;
}

/* gumbel_softmax(logits, tau=1, hard=False, dim=-1): softmax((logits + g) / tau), g ~ Gumbel(0, 1);
 * hard: the one-hot of the argmax, with the soft sample's gradient (straight through) */
static PyObject *py_gumbel_softmax(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"logits", "tau", "hard", "dim", NULL};
    PyObject *a[4];
    double tau = 1.0;
    bool hard = false;
    int64_t dim = -1;
    if (ct_parse_args("gumbel_softmax", args, nargs, kw, names, 1, a) < 0 ||
        need_tensor("gumbel_softmax", "logits", 1, a[0], false) < 0 || opt_double(a[1], &tau) < 0 ||
        ct_arg_bool(a[2], &hard) < 0 || opt_int(a[3], &dim) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    bool was = ct_grad_enabled;
    ct_grad_enabled = false;
    PyObject *g = NEG(METH(METH(FN("empty_like", "(O)", a[0]), "exponential_", NULL), "log", NULL));
    ct_grad_enabled = was;
    PyObject *y = METH(DIV(ADD(a[0], g), NUM(tau)), "softmax", "(L)", (long long)dim);
    if (hard) {
        PyObject *index = METH(y, "argmax", "(LO)", (long long)dim, Py_True);
        PyObject *onehot = METH(FN("zeros_like", "(O)", y), "scatter_", "(LOd)", (long long)dim, index, 1.0);
        y = ADD(SUB(onehot, METH(y, "detach", NULL)), y);
    }
    PyObject *result = TAKE(y);
    arena_free(arena);
    return result;
}

/* ====================================================================================================
 * local_response_norm, channel_shuffle, rrelu, alpha dropouts, lp pools, max_unpool
 * ==================================================================================================== */

/* local_response_norm(input (N, C, *), size, alpha=1e-4, beta=0.75, k=1): input / (k + alpha *
 * mean of input^2 over a window of `size` channels)^beta; the window mean an avg_pool2d of kernel
 * (size, 1) over the squares seen as (N, 1, C, rest), zero padded by size / 2 before and
 * (size - 1) / 2 after, as PyTorch composes it */
static PyObject *py_local_response_norm(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "size", "alpha", "beta", "k", NULL};
    PyObject *a[5];
    int64_t size = 0;
    double alpha = 1e-4, beta = 0.75, k = 1.0;
    if (ct_parse_args("local_response_norm", args, nargs, kw, names, 2, a) < 0 ||
        need_tensor("local_response_norm", "input", 1, a[0], false) < 0 || ct_arg_int64(a[1], &size) < 0 ||
        opt_double(a[2], &alpha) < 0 || opt_double(a[3], &beta) < 0 || opt_double(a[4], &k) < 0) {
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[0]);
    if (x->ndim < 3) {
        PyErr_Format(PyExc_ValueError, "Expected 3D or higher dimensionality input (got %d dimensions)", x->ndim);
        return NULL;
    }
    if (ct_numel(x) == 0) {
        return Py_NewRef(a[0]);
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *sq = METH(MUL(a[0], a[0]), "reshape", "(LiLL)", (long long)x->sizes[0], 1, (long long)x->sizes[1], -1LL);
    PyObject *padded = FN("constant_pad_nd", "(O(iiLL))", sq, 0, 0, (long long)(size / 2), (long long)((size - 1) / 2));
    PyObject *div = FN("avg_pool2d", "(O(Li)(ii))", padded, (long long)size, 1, 1, 1);
    PyObject *shape = ATTR(a[0], "shape");
    div = METH(METH(div, "squeeze", "(i)", 1), "reshape", "(O)", shape);
    div = POW(ADD(MUL(div, NUM(alpha)), NUM(k)), NUM(beta));
    PyObject *result = TAKE(DIV(a[0], div));
    arena_free(arena);
    return result;
}

/* channel_shuffle(input (N, C, *), groups): (N, g, C / g, *) transposed to (N, C / g, g, *) */
static PyObject *py_channel_shuffle(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "groups", NULL};
    PyObject *a[2];
    int64_t g = 0;
    if (ct_parse_args("channel_shuffle", args, nargs, kw, names, 2, a) < 0 ||
        need_tensor("channel_shuffle", "input", 1, a[0], false) < 0 || ct_int_arg("channel_shuffle", "groups", 2, a[1], &g) < 0) {
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[0]);
    if (x->ndim < 3) {
        char s[128];
        ct_format_sizes(s, sizeof(s), x->ndim, x->sizes);
        PyErr_Format(PyExc_RuntimeError, "channel_shuffle expects input with > 2 dims, but got input with sizes %s", s);
        return NULL;
    }
    if (g <= 0) {
        PyErr_Format(PyExc_RuntimeError, "Number of groups to divide channels in must be positive. Value of groups:%lld",
                     (long long)g);
        return NULL;
    }
    int64_t C = x->sizes[1];
    if (C % g != 0) {
        PyErr_Format(PyExc_RuntimeError, "Number of channels must be divisible by groups. Got %lld channels and %lld "
                     "groups.", (long long)C, (long long)g);
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *shape = arena->failed ? NULL : KEEP(PyList_New(0));
    int64_t split[3] = {x->sizes[0], g, C / g};
    for (int d = 0; shape != NULL && d < x->ndim + 1; d++) {
        PyObject *v = PyLong_FromLongLong(d < 3 ? split[d] : x->sizes[d - 1]);
        if (v == NULL || PyList_Append(shape, v) < 0) {
            Py_XDECREF(v);
            arena->failed = true;
            break;
        }
        Py_DECREF(v);
    }
    PyObject *r = METH(METH(METH(a[0], "view", "(O)", shape), "transpose", "(ii)", 1, 2), "reshape", "(O)",
                       ATTR(a[0], "shape"));
    PyObject *result = TAKE(r);
    arena_free(arena);
    return result;
}

/* rrelu(input, lower=1/8, upper=1/3, training=False): x where x >= 0, else x times a slope drawn
 * from U(lower, upper) per element (training) or (lower + upper) / 2 (eval) */
static PyObject *py_rrelu(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "lower", "upper", "training", NULL};
    PyObject *a[4];
    double lower = 1.0 / 8.0, upper = 1.0 / 3.0;
    bool training = false;
    if (ct_parse_args("rrelu", args, nargs, kw, names, 1, a) < 0 || need_tensor("rrelu", "input", 1, a[0], false) < 0 ||
        opt_double(a[1], &lower) < 0 || opt_double(a[2], &upper) < 0 || ct_arg_bool(a[3], &training) < 0) {
        return NULL;
    }
    if (lower > upper) {
        PyErr_SetString(PyExc_RuntimeError, "Lower bound should be less than or equal to the upper bound");
        return NULL;
    }
    if (!ct_is_floating(CT_TENSOR(a[0])->dtype)) {
        PyErr_Format(PyExc_NotImplementedError, "\"leaky_relu_cpu\" not implemented for '%s'",
                     ct_scalar_type_name(CT_TENSOR(a[0])->dtype));
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *slope;
    if (training) {
        bool was = ct_grad_enabled;
        ct_grad_enabled = false;
        slope = METH(FN("empty_like", "(O)", a[0]), "uniform_", "(dd)", lower, upper);
        ct_grad_enabled = was;
    } else {
        slope = NUM((lower + upper) / 2.0);
    }
    PyObject *result = TAKE(WHERE(CMP(a[0], INT(0), Py_GE), a[0], MUL(a[0], slope)));
    arena_free(arena);
    return result;
}

/* alpha_dropout(input, p, training, feature): SELU-preserving dropout; dropped entries become
 * -alpha' (SELU's negative saturation), then the affine a x + b restores mean 0 / variance 1.
 * feature: one draw per (N, C) channel of (N, C, *) input */
static PyObject *py_alpha_dropout(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "p", "training", "feature", NULL};
    PyObject *a[4];
    double p = 0.5;
    bool training = false, feature = false;
    if (ct_parse_args("_alpha_dropout", args, nargs, kw, names, 1, a) < 0 ||
        need_tensor("_alpha_dropout", "input", 1, a[0], false) < 0 || opt_double(a[1], &p) < 0 ||
        ct_arg_bool(a[2], &training) < 0 || ct_arg_bool(a[3], &feature) < 0) {
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[0]);
    if (p < 0.0 || p > 1.0) {
        PyErr_Format(PyExc_ValueError, "dropout probability has to be between 0 and 1, but got %g", p);
        return NULL;
    }
    if (p == 0.0 || !training || ct_numel(x) == 0) {
        return Py_NewRef(a[0]);
    }
    if (!ct_is_floating(x->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "result type Float can't be cast to the desired output type %s",
                     ct_scalar_type_name(x->dtype));
        return NULL;
    }
    if (feature && x->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError, "Feature dropout requires at least 2 dimensions in the input");
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    if (p == 1.0) {
        PyObject *r = TAKE(MUL(a[0], KEEP((PyObject *)ct_zeros_like(x))));
        arena_free(arena);
        return r;
    }
    int64_t sizes[CT_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        sizes[d] = feature && d >= 2 ? 1 : x->sizes[d];
    }
    const double alpha = 1.7580993408473766, scale = 1.0 / sqrt((alpha * alpha * p + 1.0) * (1.0 - p));
    bool was = ct_grad_enabled;
    ct_grad_enabled = false;
    PyObject *keep = KEEP((PyObject *)ct_empty(x->ndim, sizes, x->dtype, ct_device_of(x)));
    keep = METH(keep, "bernoulli_", "(d)", 1.0 - p);
    /* b = (keep - 1) alpha a + alpha a p; the noise multiplier keep * a */
    PyObject *b = ADD(MUL(SUB(keep, INT(1)), NUM(alpha * scale)), NUM(alpha * scale * p));
    PyObject *noise = MUL(keep, NUM(scale));
    ct_grad_enabled = was;
    PyObject *result = TAKE(ADD(MUL(a[0], noise), b));
    arena_free(arena);
    return result;
}

/* _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, dims 1, 2 or 3):
 * (sign(s) relu(|s|) * prod(kernel))^(1 / p), s the average pool of input^p; p = +-inf is the max
 * (min) pool of |input|, as PyTorch's (the formula would give 1 or 0) */
static PyObject *py_lp_pool(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "norm_type", "kernel_size", "stride", "ceil_mode", "dims", NULL};
    PyObject *a[6];
    double p = 2.0;
    bool ceil_mode = false;
    int64_t dims = 2;
    if (ct_parse_args("_lp_pool", args, nargs, kw, names, 3, a) < 0 ||
        need_tensor("_lp_pool", "input", 1, a[0], false) < 0 || ct_arg_double(a[1], &p) < 0 ||
        ct_arg_bool(a[4], &ceil_mode) < 0 || opt_int(a[5], &dims) < 0) {
        return NULL;
    }
    int64_t kernel = 1;
    PyObject *seq = PySequence_Check(a[2]) ? PySequence_Fast(a[2], "kernel_size") : NULL;
    if (seq != NULL) {
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
            int64_t v;
            if (ct_arg_int64(PySequence_Fast_GET_ITEM(seq, i), &v) < 0) {
                Py_DECREF(seq);
                return NULL;
            }
            kernel *= v;
        }
        Py_DECREF(seq);
    } else {
        PyErr_Clear();
        int64_t v;
        if (ct_arg_int64(a[2], &v) < 0) {
            return NULL;
        }
        kernel = dims == 3 ? v * v * v : dims == 2 ? v * v : v;
    }
    if (p == 0.0) {
        PyErr_Format(PyExc_ValueError, "norm_type must be a non-zero value, but got %R", a[1]);
        return NULL;
    }
    PyObject *stride = a[3] == NULL || a[3] == Py_None ? NULL : a[3];
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *empty = stride == NULL ? KEEP(PyTuple_New(0)) : stride;
    if (isinf(p)) {
        const char *max_pool = dims == 3 ? "max_pool3d" : dims == 2 ? "max_pool2d" : "max_pool1d";
        PyObject *mag = METH(a[0], "abs", NULL);
        PyObject *pooled = FN(max_pool, "(OOOiiO)", p > 0 ? mag : NEG(mag), a[2], empty, 0, 1,
                              ceil_mode ? Py_True : Py_False);
        PyObject *result = TAKE(p > 0 ? pooled : NEG(pooled));
        arena_free(arena);
        return result;
    }
    PyObject *s = FN(dims == 3 ? "avg_pool3d" : dims == 2 ? "avg_pool2d" : "avg_pool1d", "(OOOiO)", POW(a[0], NUM(p)), a[2], empty, 0,
                     ceil_mode ? Py_True : Py_False);
    PyObject *r = POW(MUL(MUL(METH(s, "sign", NULL), METH(METH(s, "abs", NULL), "relu", NULL)), NUM((double)kernel)),
                      NUM(1.0 / p));
    PyObject *result = TAKE(r);
    arena_free(arena);
    return result;
}

/* _max_unpool(input (N, C, *in) or (C, *in), indices (same), output_size (the spatial sizes)):
 * zeros of (N, C, prod(output_size)) with the input scattered to the flat indices */
static PyObject *py_max_unpool(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "indices", "output_size", NULL};
    PyObject *a[3];
    int64_t out[CT_MAX_DIMS];
    if (ct_parse_args("_max_unpool", args, nargs, kw, names, 3, a) < 0 ||
        need_tensor("_max_unpool", "input", 1, a[0], false) < 0 || need_tensor("_max_unpool", "indices", 2, a[1], false) < 0) {
        return NULL;
    }
    int k = ct_parse_size_seq(a[2], out, false);
    if (k < 0) {
        return NULL;
    }
    CtTensorObject *x = CT_TENSOR(a[0]), *ix = CT_TENSOR(a[1]);
    if (ix->dtype != CT_I64) {
        PyErr_Format(PyExc_RuntimeError, "elements in indices should be type int64 but got: %s",
                     ct_scalar_type_name(ix->dtype));
        return NULL;
    }
    if (ix->ndim != x->ndim || memcmp(ix->sizes, x->sizes, sizeof(int64_t) * (size_t)x->ndim) != 0) {
        char s1[128], s2[128];
        ct_format_sizes(s1, sizeof(s1), ix->ndim, ix->sizes);
        ct_format_sizes(s2, sizeof(s2), x->ndim, x->sizes);
        PyErr_Format(PyExc_RuntimeError, "Expected shape of indices to be same as that of the input tensor (%s) but got "
                     "indices tensor with shape: %s", s2, s1);
        return NULL;
    }
    if (x->ndim != k + 1 && x->ndim != k + 2) {
        PyErr_Format(PyExc_RuntimeError, "max_unpool%dd: expected a %dD or %dD input, got %dD", k, k + 1, k + 2, x->ndim);
        return NULL;
    }
    if (!ct_is_floating(x->dtype)) { /* PyTorch's kernels are floating only; 1-d runs the 2-d one */
        PyErr_Format(PyExc_NotImplementedError, "\"max_unpool%dd\" not implemented for '%s'", k == 3 ? 3 : 2,
                     ct_scalar_type_name(x->dtype));
        return NULL;
    }
    int lead = x->ndim - k;
    int64_t plane = 1;
    for (int d = 0; d < k; d++) {
        plane *= out[d];
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *result = NULL;
    int64_t flat[3] = {lead == 2 ? x->sizes[0] : 1, x->sizes[lead - 1], plane};
    PyObject *bad = METH(METH(ADD(CMP(a[1], INT(0), Py_LT), CMP(a[1], INT(plane), Py_GE)), "any", NULL), "item", NULL);
    if (bad == NULL) {
        goto done;
    }
    if (PyObject_IsTrue(bad)) {
        PyObject *first = METH(METH(METH(a[1], "masked_select", "(O)", ADD(CMP(a[1], INT(0), Py_LT), CMP(a[1], INT(plane), Py_GE))),
                                    "select", "(ii)", 0, 0), "item", NULL);
        char dims[128] = "";
        for (int d = 0, at = 0; d < k && at < (int)sizeof(dims); d++) {
            at += snprintf(dims + at, sizeof(dims) - (size_t)at, d ? "x%lld" : "%lld", (long long)out[d]);
        }
        if (first != NULL) {
            PyErr_Format(PyExc_RuntimeError, "Found an invalid max index: %S (output volumes are of size %s)", first, dims);
        }
        goto done;
    }
    PyObject *zeros = KEEP((PyObject *)ct_zeros(3, flat, x->dtype, ct_device_of(x)));
    PyObject *src = METH(a[0], "reshape", "(LLL)", (long long)flat[0], (long long)flat[1], -1LL);
    PyObject *idx = METH(a[1], "reshape", "(LLL)", (long long)flat[0], (long long)flat[1], -1LL);
    PyObject *scattered = METH(zeros, "scatter", "(iOO)", 2, idx, src);
    PyObject *shape = arena->failed ? NULL : KEEP(PyList_New(0));
    for (int d = 0; shape != NULL && d < x->ndim; d++) {
        PyObject *v = PyLong_FromLongLong(d < lead ? x->sizes[d] : out[d - lead]);
        if (v == NULL || PyList_Append(shape, v) < 0) {
            Py_XDECREF(v);
            arena->failed = true;
            break;
        }
        Py_DECREF(v);
    }
    result = TAKE(METH(scattered, "view", "(O)", shape));
done:
    arena_free(arena);
    return result;
}

/* ====================================================================================================
 * affine_grid, grid_sample (2-d and 3-d)
 * ==================================================================================================== */

/* linspace(-1, 1, n) in float64 on the CPU, scaled by (n - 1) / n without align_corners (the pixel
 * centres); 0 for n == 1. New reference. */
static PyObject *grid_line(int64_t n, bool align)
{
    CtTensorObject *t = ct_empty(1, &n, CT_F64, ct_cpu());
    if (t == NULL) {
        return NULL;
    }
    double *v = (double *)ct_data(t);
    for (int64_t i = 0; i < n; i++) {
        double c = n == 1 ? 0.0 : -1.0 + 2.0 * (double)i / (double)(n - 1);
        v[i] = align ? c : c * (double)(n - 1) / (double)n;
    }
    return (PyObject *)t;
}

/* _affine_grid(theta (N, k, k + 1), size (N, C, H, W) or (N, C, D, H, W), align_corners) -> (N, [D,] H, W, k):
 * the base grid of (x, y, [z,] 1) at the pixel centres (or corners) in [-1, 1] times theta^T */
static PyObject *py_affine_grid(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"theta", "size", "align_corners", NULL};
    PyObject *a[3];
    int64_t size[5] = {0, 0, 1, 1, 1};
    bool align = false;
    if (ct_parse_args("_affine_grid", args, nargs, kw, names, 3, a) < 0 ||
        need_tensor("_affine_grid", "theta", 1, a[0], false) < 0 || ct_arg_bool(a[2], &align) < 0) {
        return NULL;
    }
    Py_ssize_t rank = PyTuple_Check(a[1]) || PyList_Check(a[1]) ? PySequence_Size(a[1]) : -1;
    if (rank != 4 && rank != 5) {
        PyErr_SetString(PyExc_TypeError, "_affine_grid(): argument 'size' must be a sequence of 4 or 5 ints");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < rank; i++) { /* size[2..4] = (D, H, W), D = 1 for a 2-d grid */
        PyObject *item = PySequence_GetItem(a[1], i);
        int rc = item != NULL ? ct_arg_int64(item, &size[i < 2 ? i : 5 - rank + i]) : -1;
        Py_XDECREF(item);
        if (rc < 0) {
            return NULL;
        }
    }
    const int k = (int)rank - 2;
    const int64_t D = size[2], H = size[3], W = size[4], n = D * H * W;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *dev = ATTR(a[0], "device"), *dt = arena->failed ? NULL : ct_dtype_object(CT_TENSOR(a[0])->dtype);
    PyObject *xs = KEEP(grid_line(W, align)), *ys = arena->failed ? NULL : KEEP(grid_line(H, align));
    PyObject *zs = arena->failed ? NULL : KEEP(grid_line(D, align));
    PyObject *full = arena->failed ? NULL : KEEP(Py_BuildValue("(LLL)", (long long)D, (long long)H, (long long)W));
    PyObject *gx = METH(METH(xs, "view", "(iiL)", 1, 1, (long long)W), "expand", "(O)", full);
    PyObject *gy = METH(METH(ys, "view", "(iLi)", 1, (long long)H, 1), "expand", "(O)", full);
    PyObject *gz = METH(METH(zs, "view", "(Lii)", (long long)D, 1, 1), "expand", "(O)", full);
    PyObject *one = arena->failed ? NULL : FN("ones_like", "(O)", gx);
    PyObject *parts = arena->failed ? NULL
                      : KEEP(k == 2 ? PyTuple_Pack(3, gx, gy, one) : PyTuple_Pack(4, gx, gy, gz, one));
    PyObject *base = METH(METH(FN("stack", "(Oi)", parts, -1), "to", "(OO)", dev, dt), "view", "(iLi)", 1,
                          (long long)n, k + 1);
    PyObject *grid = MATMUL(base, METH(a[0], "transpose", "(ii)", 1, 2));
    PyObject *result = TAKE(k == 2 ? METH(grid, "view", "(LLLi)", (long long)size[0], (long long)H, (long long)W, 2)
                                   : METH(grid, "view", "(LLLLi)", (long long)size[0], (long long)D, (long long)H,
                                          (long long)W, 3));
    arena_free(arena);
    return result;
}

/* Source pixel coordinates x of an axis of `size` with the padding mode applied (1 border: clamped; 2
 * reflection: mirrored, then clamped). New reference. */
static PyObject *grid_pad(PyObject *x, int64_t size, bool align, int64_t padding)
{
    CtArena scratch = {0}, *arena = &scratch;
    if (padding == 2) {
        double lo2 = align ? 0.0 : -1.0, hi2 = align ? 2.0 * (double)(size - 1) : 2.0 * (double)size - 1.0;
        if (lo2 == hi2) {
            x = MUL(x, NUM(0.0));
        } else {
            double lo = lo2 / 2.0, span = (hi2 - lo2) / 2.0;
            PyObject *in = METH(SUB(x, NUM(lo)), "abs", NULL);
            PyObject *extra = METH(in, "fmod", "(d)", span);
            PyObject *flips = METH(METH(DIV(in, NUM(span)), "floor", NULL), "fmod", "(d)", 2.0);
            x = WHERE(CMP(flips, NUM(0.0), Py_EQ), ADD(extra, NUM(lo)), ADD(SUB(NUM(span), extra), NUM(lo)));
        }
    }
    if (padding != 0) {
        x = METH(x, "clamp", "(dd)", 0.0, (double)(size - 1));
    }
    PyObject *r = TAKE(x);
    arena_free(arena);
    return r;
}

/* Coordinate `axis` of grid (in [-1, 1]) as a source pixel coordinate of an axis of `size`, with the
 * padding mode applied. New reference. */
static PyObject *grid_source(PyObject *grid, int axis, int64_t size, bool align, int64_t padding)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *c = METH(grid, "select", "(ii)", -1, axis);
    PyObject *x = align ? MUL(ADD(c, NUM(1.0)), NUM((double)(size - 1) / 2.0))
                        : DIV(SUB(MUL(ADD(c, NUM(1.0)), NUM((double)size)), NUM(1.0)), NUM(2.0));
    PyObject *r = arena->failed ? NULL : grid_pad(x, size, align, padding);
    arena_free(arena);
    return r;
}

/* input (N, C, [D *] H * W) at integer pixel c[0..nd) (x, y[, z], each (N, *out)) times weight, 0 outside
 * the input; sizes[k] is the input's size along coordinate k (W, H[, D]): (N, C, *out). New reference. */
static PyObject *grid_tap(PyObject *flat, int nd, PyObject *const *c, PyObject *weight, int64_t C, const int64_t *sizes)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *inside = NULL, *lin = NULL;
    for (int k = nd - 1; k >= 0; k--) { /* the row-major position, z first */
        const double hi = (double)(sizes[k] - 1);
        PyObject *in_k = METH(CMP(c[k], NUM(0.0), Py_GE), "logical_and", "(O)", CMP(c[k], NUM(hi), Py_LE));
        inside = inside == NULL ? in_k : METH(inside, "logical_and", "(O)", in_k);
        PyObject *clamped = METH(c[k], "clamp", "(dd)", 0.0, hi);
        lin = lin == NULL ? clamped : ADD(MUL(lin, NUM((double)sizes[k])), clamped);
    }
    PyObject *shape = ATTR(c[0], "shape");
    PyObject *idx = METH(METH(METH(lin, "long", NULL), "flatten", "(i)", 1), "unsqueeze", "(i)", 1);
    PyObject *n = arena->failed ? NULL : METH(idx, "size", "(i)", 0), *k = arena->failed ? NULL : METH(idx, "size", "(i)", 2);
    PyObject *vals = METH(flat, "gather", "(iO)", 2, METH(idx, "expand", "(OLO)", n, (long long)C, k));
    PyObject *w = WHERE(inside, weight, NUM(0.0));
    PyObject *out_shape = arena->failed ? NULL : KEEP(PySequence_List(shape));
    if (out_shape != NULL) {
        PyObject *cl = PyLong_FromLongLong(C);
        if (cl == NULL || PyList_Insert(out_shape, 1, cl) < 0) {
            arena->failed = true;
        }
        Py_XDECREF(cl);
    }
    PyObject *r = TAKE(MUL(METH(vals, "view", "(O)", out_shape), METH(w, "unsqueeze", "(i)", 1)));
    arena_free(arena);
    return r;
}

/* PyTorch's cubic convolution weights (A = -0.75) of the taps at -1, 0, 1, 2 from floor(x), of the fraction t,
 * as four new references in w. 0 or -1. */
static int grid_cubic_weights(PyObject *t, PyObject **w)
{
    CtArena scratch = {0}, *arena = &scratch;
    const double A = CT_GS_CUBIC_A;
    PyObject *u[4] = {ADD(t, NUM(1.0)), t, SUB(NUM(1.0), t), SUB(NUM(2.0), t)};
    for (int j = 0; j < 4; j++) {
        PyObject *v = u[j];
        w[j] = j == 0 || j == 3
                   ? TAKE(SUB(MUL(ADD(MUL(SUB(MUL(v, NUM(A)), NUM(5.0 * A)), v), NUM(8.0 * A)), v), NUM(4.0 * A)))
                   : TAKE(ADD(MUL(MUL(SUB(MUL(v, NUM(A + 2.0)), NUM(A + 3.0)), v), v), NUM(1.0)));
    }
    const bool failed = arena->failed;
    arena_free(arena);
    for (int j = 0; j < 4 && failed; j++) {
        Py_CLEAR(w[j]);
    }
    return failed ? -1 : 0;
}

/* Row i (y = floor - 1 + i) of the bicubic taps: sum_j wx[j] wy[i] input[y, x = floor - 1 + j], each tap's
 * position padded on its own. New reference. */
static PyObject *grid_cubic_row(PyObject *flat, PyObject *const *lo, PyObject *const *wx, PyObject *wy, int i,
                                int64_t C, const int64_t *sizes, bool align, int64_t padding)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *y = ADD(lo[1], NUM(i - 1.0));
    PyObject *corner[2] = {NULL, arena->failed ? NULL : KEEP(grid_pad(y, sizes[1], align, padding))};
    PyObject *sum = NULL;
    for (int j = 0; j < 4 && !arena->failed; j++) {
        corner[0] = KEEP(grid_pad(ADD(lo[0], NUM(j - 1.0)), sizes[0], align, padding));
        PyObject *tap = arena->failed ? NULL : KEEP(grid_tap(flat, 2, corner, MUL(wx[j], wy), C, sizes));
        sum = sum == NULL ? tap : ADD(sum, tap);
    }
    PyObject *r = TAKE(sum);
    arena_free(arena);
    return r;
}

/* PyTorch's grid_sampler checks of input (N, C, [D,] H, W) and grid (N, [D_out,] H_out, W_out, nd): 0 or -1. */
static int grid_sample_check(const CtTensorObject *x, const CtTensorObject *g)
{
    char s1[128], s2[128];
    ct_format_sizes(s1, sizeof(s1), x->ndim, x->sizes);
    ct_format_sizes(s2, sizeof(s2), g->ndim, g->sizes);
    if (x->ndim == 5) {
        if (g->ndim != 5) {
            PyErr_Format(PyExc_RuntimeError, "grid_sampler(): expected 5D input and grid with same number of "
                         "dimensions, but got input with sizes %s and grid with sizes %s", s1, s2);
            return -1;
        }
        if (g->sizes[4] != 3) {
            PyErr_Format(PyExc_RuntimeError, "grid_sampler(): expected grid to have size 3 in last dimension, but "
                         "got grid with sizes %s", s2);
            return -1;
        }
        if (g->sizes[0] != x->sizes[0]) {
            PyErr_Format(PyExc_RuntimeError, "grid_sampler(): expected grid and input to have same batch size, but "
                         "got input with sizes %s and grid with sizes %s", s1, s2);
            return -1;
        }
        for (int i = 2; i < 5; i++) {
            if (x->sizes[i] == 0) {
                PyErr_Format(PyExc_RuntimeError, "grid_sampler(): expected input to have non-empty spatial "
                             "dimensions, but input has sizes %s with dimension %d being empty", s1, i);
                return -1;
            }
        }
    } else if (x->ndim != 4 || g->ndim != 4 || g->sizes[3] != 2 || g->sizes[0] != x->sizes[0]) {
        PyErr_Format(PyExc_RuntimeError, "grid_sampler(): expected 4D input and grid of shape (N, H_out, W_out, 2) with "
                     "the input's batch size, but got input with sizes %s and grid with sizes %s", s1, s2);
        return -1;
    }
    if (x->dtype != g->dtype) {
        PyErr_Format(PyExc_RuntimeError, "grid_sampler(): expected input and grid to have same dtype, but input has %s "
                     "and grid has %s", ct_scalar_type_name(x->dtype), ct_scalar_type_name(g->dtype));
        return -1;
    }
    if (!ct_is_floating(x->dtype)) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'",
                     x->ndim == 5 ? "grid_sampler3d_cpu" : "grid_sampler_2d_cpu_kernel_impl", ct_scalar_type_name(x->dtype));
        return -1;
    }
    return 0;
}

/* grid_sample of checked input (N, C, [D,] H, W) and grid (N, [D_out,] H_out, W_out, 2 or 3) composed of
 * recording ops, mode 0 bilinear (trilinear on 5-d input) / 1 nearest, padding 0 zeros / 1 border / 2
 * reflection, 2 bicubic (2-d): the sum of the 2^nd corner taps (or 4 x 4 cubic taps) in PyTorch's order (x
 * fastest), each weighted by the product of its per-axis weights. Only the native op's double backward uses
 * it (differentiating it twice). */
static PyObject *grid_sample_composite(PyObject *input, PyObject *grid, int64_t mode, int64_t padding, bool align)
{
    PyObject *a[2] = {input, grid};
    CtTensorObject *x = CT_TENSOR(a[0]);
    const int nd = x->ndim - 2;
    int64_t sizes[3], numel = 1; /* the input's size along grid coordinate k: W, H[, D] */
    for (int k = 0; k < nd; k++) {
        sizes[k] = x->sizes[x->ndim - 1 - k];
        numel *= sizes[k];
    }
    const int64_t C = x->sizes[1];
    PyObject *result = NULL, *src[3] = {NULL, NULL, NULL}, *corner[3], *axis_w[2][3];
    CtArena scratch = {0}, *arena = &scratch;
    for (int k = 0; k < nd && !arena->failed; k++) { /* bicubic pads each tap, not the source */
        src[k] = KEEP(grid_source(a[1], k, sizes[k], align, mode == 2 ? 0 : padding));
    }
    PyObject *flat = METH(a[0], "reshape", "(LLL)", (long long)x->sizes[0], (long long)C, (long long)numel);
    if (arena->failed) {
        goto done;
    }
    if (mode == 1) {
        for (int k = 0; k < nd; k++) {
            corner[k] = METH(src[k], "round", NULL);
        }
        PyObject *one = arena->failed ? NULL : KEEP((PyObject *)ct_ones_like(CT_TENSOR(corner[0])));
        result = arena->failed ? NULL : grid_tap(flat, nd, corner, one, C, sizes);
        goto done;
    }
    PyObject *lo[3], *hi[3];
    if (mode == 2) { /* 2-d: the 4 x 4 taps about the floor */
        PyObject *w[2][4] = {{NULL}};
        PyObject *sum = NULL;
        for (int k = 0; k < 2 && !arena->failed; k++) {
            lo[k] = METH(src[k], "floor", NULL);
            if (arena->failed || grid_cubic_weights(SUB(src[k], lo[k]), w[k]) < 0) {
                arena->failed = true;
                break;
            }
            for (int j = 0; j < 4; j++) {
                KEEP(w[k][j]);
            }
        }
        for (int i = 0; i < 4 && !arena->failed; i++) {
            PyObject *row = KEEP(grid_cubic_row(flat, lo, w[0], w[1][i], i, C, sizes, align, padding));
            sum = sum == NULL ? row : ADD(sum, row);
        }
        result = TAKE(sum);
        goto done;
    }
    for (int k = 0; k < nd; k++) { /* corner 0 / 1 along axis k: floor / floor + 1, weighted 1 - frac / frac */
        lo[k] = METH(src[k], "floor", NULL);
        hi[k] = ADD(lo[k], NUM(1.0));
        axis_w[1][k] = SUB(src[k], lo[k]);
        axis_w[0][k] = SUB(NUM(1.0), axis_w[1][k]);
    }
    PyObject *sum = NULL;
    for (int t = 0; t < (1 << nd) && !arena->failed; t++) {
        PyObject *w = NULL;
        for (int k = 0; k < nd; k++) {
            const int bit = (t >> k) & 1;
            corner[k] = bit ? hi[k] : lo[k];
            w = w == NULL ? axis_w[bit][k] : MUL(w, axis_w[bit][k]);
        }
        PyObject *tap = arena->failed ? NULL : KEEP(grid_tap(flat, nd, corner, w, C, sizes));
        sum = sum == NULL ? tap : ADD(sum, tap);
    }
    result = TAKE(sum);
done:
    arena_free(arena);
    return result;
}


/* --- the native grid_sampler_2d / grid_sampler_3d (CtGridSampleDesc; per-point math in grid_sample_math.h) --- */

static void grid_sample_points(int64_t begin, int64_t end, void *ctx)
{
    for (int64_t p = begin; p < end; p++) {
        ct_gs_point_forward((const CtGridSampleDesc *)ctx, p);
    }
}

/* Samples [begin, end), each serially: grad_input's sums run in one fixed order whatever the threads. */
static void grid_sample_backward_samples(int64_t begin, int64_t end, void *ctx)
{
    const CtGridSampleDesc *d = ctx;
    const int64_t P = ct_gs_points(d);
    for (int64_t p = begin * P; p < end * P; p++) {
        ct_gs_point_backward(d, p);
    }
}

int ct_cpu_grid_sample(const CtGridSampleDesc *d)
{
    const int64_t per = d->C * (d->mode == 2 ? 16 : 1 << d->nd) + 1;
    ct_parallel_for(d->N * ct_gs_points(d), per >= 4096 ? 1 : 4096 / per + 1, grid_sample_points, (void *)d);
    return 0;
}

int ct_cpu_grid_sample_backward(const CtGridSampleDesc *d)
{
    ct_parallel_for(d->N, 1, grid_sample_backward_samples, (void *)d);
    return 0;
}

/* The checked arguments of grid_sampler_{2,3}d[_backward] as dense float32 / float64 tensors (float16 and
 * bfloat16 computed in float32) and the descriptor over them. */
typedef struct {
    CtGridSampleDesc d;
    CtTensorObject *x, *grid;
    const struct CtNNKernels *k;
} GridPlan;

static void grid_plan_free(GridPlan *p)
{
    Py_CLEAR(p->x);
    Py_CLEAR(p->grid);
}

/* a[0] input, a[1] grid, a[2..4] interpolation_mode, padding_mode, align_corners. 0 or -1. */
static int grid_plan(GridPlan *p, const char *fname, int nd, PyObject *const *a)
{
    int64_t mode = 0, padding = 0;
    bool align = false;
    if (need_tensor(fname, "input", 1, a[0], false) < 0 || need_tensor(fname, "grid", 2, a[1], false) < 0 ||
        ct_arg_int64(a[2], &mode) < 0 || ct_arg_int64(a[3], &padding) < 0 || ct_arg_bool(a[4], &align) < 0) {
        return -1;
    }
    CtTensorObject *x = CT_TENSOR(a[0]), *g = CT_TENSOR(a[1]);
    if (x->ndim != nd + 2) {
        char s1[128], s2[128];
        ct_format_sizes(s1, sizeof(s1), x->ndim, x->sizes);
        ct_format_sizes(s2, sizeof(s2), g->ndim, g->sizes);
        PyErr_Format(PyExc_RuntimeError, "grid_sampler(): expected %dD input and grid with same number of dimensions, "
                     "but got input with sizes %s and grid with sizes %s", nd + 2, s1, s2);
        return -1;
    }
    if (grid_sample_check(x, g) < 0) {
        return -1;
    }
    if (!ct_device_equal(ct_device_of(x), ct_device_of(g))) {
        char d1[32], d2[32];
        ct_device_str(ct_device_of(x), d1, sizeof(d1));
        ct_device_str(ct_device_of(g), d2, sizeof(d2));
        PyErr_Format(PyExc_RuntimeError, "grid_sampler(): expected input and grid to be on same device, but input "
                     "is on %s and grid is on %s", d1, d2);
        return -1;
    }
    if (mode < 0 || mode > 2 || padding < 0 || padding > 2) {
        PyErr_Format(PyExc_RuntimeError, "%s(): expected interpolation_mode in [0, 2] and padding_mode in [0, 2], "
                     "but got %lld and %lld", fname, (long long)mode, (long long)padding);
        return -1;
    }
    if (mode == 2 && nd == 3) {
        PyErr_SetString(PyExc_NotImplementedError, "grid_sampler(): bicubic interpolation only supports 4D input");
        return -1;
    }
    CtDevice dev = ct_device_of(x);
    p->k = ct_nn_kernels(dev);
    if (p->k != NULL && (p->k->grid_sample == NULL || p->k->grid_sample_backward == NULL)) {
        PyErr_SetString(PyExc_NotImplementedError, "grid_sampler is not implemented on this device");
        return -1;
    }
    if (p->k == NULL) {
        return -1;
    }
    CtDType work = x->dtype == CT_F64 ? CT_F64 : CT_F32;
    p->x = ct_nn_dense(x, work);
    p->grid = p->x ? ct_nn_dense(g, work) : NULL;
    if (p->grid == NULL) {
        return -1;
    }
    p->d = (CtGridSampleDesc){.dtype = work, .device = dev, .nd = nd, .mode = (int)mode, .padding = (int)padding,
                              .align_corners = align, .N = x->sizes[0], .C = x->sizes[1],
                              .input = ct_data(p->x), .grid = ct_data(p->grid)};
    for (int i = 0; i < 3; i++) { /* (D, H, W) and (D_out, H_out, W_out), D = 1 for 2-d */
        p->d.in[i] = i < 3 - nd ? 1 : x->sizes[2 + i - (3 - nd)];
        p->d.out[i] = i < 3 - nd ? 1 : g->sizes[1 + i - (3 - nd)];
    }
    return 0;
}

/* t (of the work dtype) as dtype, stealing t; new reference. */
static PyObject *grid_as(CtTensorObject *t, CtDType dtype)
{
    if (t == NULL || t->dtype == dtype) {
        return (PyObject *)t;
    }
    CtTensorObject *r = ct_to(t, dtype, ct_device_of(t), false);
    Py_DECREF(t);
    return (PyObject *)r;
}

/* grid_sampler_{2,3}d(input (N, C, [D,] H, W), grid (N, [D_out,] H_out, W_out, nd), interpolation_mode,
 * padding_mode, align_corners) -> (N, C, [D_out,] H_out, W_out) */
static PyObject *grid_sampler_forward(const char *fname, int nd, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "grid", "interpolation_mode", "padding_mode", "align_corners", NULL};
    PyObject *a[5];
    GridPlan p = {0};
    CtTensorObject *out = NULL;
    if (ct_parse_args(fname, args, nargs, kw, names, 5, a) < 0 || grid_plan(&p, fname, nd, a) < 0) {
        goto done;
    }
    int64_t sizes[5] = {p.d.N, p.d.C, p.d.out[0], p.d.out[1], p.d.out[2]};
    if (nd == 2) {
        sizes[2] = sizes[3];
        sizes[3] = sizes[4];
    }
    out = ct_empty(nd + 2, sizes, p.d.dtype, p.d.device);
    if (out == NULL) {
        goto done;
    }
    p.d.output = ct_data(out);
    if (ct_numel(out) > 0 && p.k->grid_sample(&p.d) < 0) {
        Py_CLEAR(out);
    }
done:
    grid_plan_free(&p);
    return out != NULL ? grid_as(out, CT_TENSOR(a[0])->dtype) : NULL;
}

/* grid_sampler_{2,3}d_backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
 * output_mask) -> (grad_input, grad_grid); both are computed whatever output_mask asks. */
static PyObject *grid_sampler_backward(const char *fname, int nd, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"grad_output", "input", "grid", "interpolation_mode", "padding_mode",
                                        "align_corners", "output_mask", NULL};
    PyObject *a[7], *result = NULL;
    GridPlan p = {0};
    CtTensorObject *go = NULL, *gin = NULL, *ggrid = NULL;
    if (ct_parse_args(fname, args, nargs, kw, names, 6, a) < 0 ||
        need_tensor(fname, "grad_output", 1, a[0], false) < 0 || grid_plan(&p, fname, nd, a + 1) < 0) {
        goto done;
    }
    const int64_t want[5] = {p.d.N, p.d.C, p.d.out[0], p.d.out[1], p.d.out[2]};
    CtTensorObject *g = CT_TENSOR(a[0]);
    if (g->ndim != nd + 2 || g->sizes[0] != want[0] || g->sizes[1] != want[1] ||
        memcmp(g->sizes + 2, want + 5 - nd, sizeof(int64_t) * (size_t)nd) != 0 ||
        !ct_device_equal(ct_device_of(g), p.d.device)) {
        char s1[128];
        ct_format_sizes(s1, sizeof(s1), g->ndim, g->sizes);
        PyErr_Format(PyExc_RuntimeError, "%s(): expected grad_output of the output's shape and device, but got "
                     "sizes %s", fname, s1);
        goto done;
    }
    /* CUDA adds into grad_input with atomicAdd (grid_sample_math.h), in no fixed order */
    if (p.d.device.type == CT_DEV_CUDA &&
        ct_alert_not_deterministic(nd == 2 ? "grid_sampler_2d_backward_cuda" : "grid_sampler_3d_backward_cuda") < 0) {
        goto done;
    }
    go = ct_nn_dense(g, p.d.dtype);
    gin = go ? ct_zeros(p.x->ndim, p.x->sizes, p.d.dtype, p.d.device) : NULL;
    ggrid = gin ? ct_empty(p.grid->ndim, p.grid->sizes, p.d.dtype, p.d.device) : NULL;
    if (ggrid == NULL) {
        goto done;
    }
    p.d.grad_out = ct_data(go);
    p.d.grad_input = ct_data(gin);
    p.d.grad_grid = ct_data(ggrid);
    if (ct_numel(ggrid) > 0 && p.k->grid_sample_backward(&p.d) < 0) {
        goto done;
    }
    CtDType dt = CT_TENSOR(a[1])->dtype;
    PyObject *r0 = grid_as(gin, dt), *r1 = grid_as(ggrid, dt); /* each steals its tensor */
    gin = ggrid = NULL;
    result = r0 != NULL && r1 != NULL ? PyTuple_Pack(2, r0, r1) : NULL;
    Py_XDECREF(r0);
    Py_XDECREF(r1);
done:
    Py_XDECREF(go);
    Py_XDECREF(gin);
    Py_XDECREF(ggrid);
    grid_plan_free(&p);
    return result;
}

static PyObject *py_grid_sampler_2d(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    return grid_sampler_forward("grid_sampler_2d", 2, args, nargs, kw);
}

static PyObject *py_grid_sampler_3d(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    return grid_sampler_forward("grid_sampler_3d", 3, args, nargs, kw);
}

static PyObject *py_grid_sampler_2d_backward(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    return grid_sampler_backward("grid_sampler_2d_backward", 2, args, nargs, kw);
}

static PyObject *py_grid_sampler_3d_backward(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    return grid_sampler_backward("grid_sampler_3d_backward", 3, args, nargs, kw);
}

/* GridSampler{2,3}DBackward0: (input, grid, interpolation_mode, padding_mode, align_corners) -> one
 * grid_sampler_{2,3}d_backward (recorded under create_graph as GridSampler{2,3}DBackwardBackward0). */
int ct_nn_bw_grid_sampler(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *x = (PyObject *)ct_node_tensor(n, 0), *grid = (PyObject *)ct_node_tensor(n, 1);
    if (x == NULL || grid == NULL) {
        return -1;
    }
    PyObject *mask = Py_BuildValue("(OO)", n->edge_nodes[0] != NULL ? Py_True : Py_False,
                                   n->edge_nodes[1] != NULL ? Py_True : Py_False);
    if (mask == NULL) {
        return -1;
    }
    PyObject *args[7] = {g[0], x, grid, n->args[2], n->args[3], n->args[4], mask};
    PyObject *res = ct_op(CT_TENSOR(x)->ndim == 5 ? "grid_sampler_3d_backward" : "grid_sampler_2d_backward", args, 7,
                          NULL);
    Py_DECREF(mask);
    if (res == NULL) {
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        if (n->edge_nodes[i] != NULL) {
            gi[i] = ct_fit_grad(PyTuple_GET_ITEM(res, i), &n->meta[i]);
            rc = gi[i] == NULL ? -1 : 0;
        }
    }
    Py_DECREF(res);
    return rc;
}

/* GridSampler{2,3}DBackwardBackward0: (grad_output, input, grid, interpolation_mode, padding_mode,
 * align_corners, output_mask), outputs (grad_input, grad_grid). Differentiates the recording composite twice
 * on detached copies of the saved tensors: with y = grid_sample(x', grid') and (gx, gg) its vector-Jacobian
 * product with grad_output' (create_graph), the gradients of <g[0], gx> + <g[1], gg> by (grad_output', x',
 * grid'). The results carry no history (no third derivative). */
int ct_nn_bw_grid_sampler_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    int64_t mode = 0, padding = 0;
    bool align = false;
    if (ct_arg_int64(n->args[3], &mode) < 0 || ct_arg_int64(n->args[4], &padding) < 0 ||
        ct_arg_bool(n->args[5], &align) < 0) {
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    const bool prev = ct_grad_enabled;
    ct_grad_enabled = true;
    PyObject *leaf[3];
    for (int i = 0; i < 3; i++) {
        CtTensorObject *t = ct_node_tensor(n, i);
        leaf[i] = t == NULL ? KEEP(NULL) : METH(METH((PyObject *)t, "detach", NULL), "requires_grad_", "(O)", Py_True);
    }
    PyObject *autograd = arena->failed ? NULL : KEEP(PyImport_ImportModule("ctorch.autograd"));
    PyObject *y = arena->failed ? NULL : KEEP(grid_sample_composite(leaf[1], leaf[2], mode, padding, align));
    PyObject *xg = arena->failed ? NULL : KEEP(PyTuple_Pack(2, leaf[1], leaf[2]));
    PyObject *kw = arena->failed ? NULL : KEEP(Py_BuildValue("{sOsOsO}", "create_graph", Py_True, "allow_unused",
                                                             Py_True, "materialize_grads", Py_True));
    PyObject *grad = arena->failed ? NULL : ATTR(autograd, "grad");
    PyObject *args1 = arena->failed ? NULL : KEEP(Py_BuildValue("(OOO)", y, xg, leaf[0]));
    PyObject *first = arena->failed ? NULL : KEEP(PyObject_Call(grad, args1, kw));
    PyObject *s = NULL;
    for (int k = 0; k < 2 && !arena->failed; k++) {
        if (g[k] != NULL) {
            PyObject *term = METH(MUL(PyTuple_GET_ITEM(first, k), METH(g[k], "detach", NULL)), "sum", NULL);
            s = s == NULL ? term : ADD(s, term);
        }
    }
    ct_grad_enabled = prev;
    /* nothing depends on the leaves (nearest's grid gradient is zeros): every gradient is zero */
    PyObject *requires = arena->failed || s == NULL ? NULL : ATTR(s, "requires_grad");
    int live = requires == NULL ? 0 : PyObject_IsTrue(requires);
    if (live == 0 && !arena->failed && s != NULL) {
        for (int i = 0; i < 3; i++) {
            const CtTensorMeta *m = &n->meta[i];
            if (n->edge_nodes[i] != NULL &&
                (gi[i] = (PyObject *)ct_zeros(m->ndim, m->sizes, m->dtype, m->device)) == NULL) {
                arena->failed = true;
            }
        }
        const bool failed = arena->failed;
        arena_free(arena);
        return failed ? -1 : 0;
    }
    arena->failed |= live < 0;
    PyObject *all = arena->failed || s == NULL ? NULL : KEEP(PyTuple_Pack(3, leaf[0], leaf[1], leaf[2]));
    if (all != NULL && PyDict_SetItemString(kw, "create_graph", Py_False) < 0) {
        arena->failed = true;
    }
    PyObject *args2 = arena->failed || all == NULL ? NULL : KEEP(PyTuple_Pack(2, s, all));
    PyObject *second = arena->failed || args2 == NULL ? NULL : KEEP(PyObject_Call(grad, args2, kw));
    for (int i = 0; i < 3 && second != NULL; i++) {
        if (n->edge_nodes[i] != NULL && (gi[i] = ct_fit_grad(PyTuple_GET_ITEM(second, i), &n->meta[i])) == NULL) {
            arena->failed = true;
        }
    }
    const bool failed = arena->failed;
    arena_free(arena);
    return failed ? -1 : 0;
}

/* _grid_sample(input, grid, mode, padding_mode, align_corners): F.grid_sample's checks, then one
 * grid_sampler_2d / grid_sampler_3d (recorded as GridSampler2DBackward0 / GridSampler3DBackward0). */
static PyObject *py_grid_sample(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "grid", "mode", "padding_mode", "align_corners", NULL};
    PyObject *a[5];
    if (ct_parse_args("_grid_sample", args, nargs, kw, names, 5, a) < 0 ||
        need_tensor("_grid_sample", "input", 1, a[0], false) < 0 || need_tensor("_grid_sample", "grid", 2, a[1], false) < 0 ||
        grid_sample_check(CT_TENSOR(a[0]), CT_TENSOR(a[1])) < 0) {
        return NULL;
    }
    return ct_op(CT_TENSOR(a[0])->ndim == 5 ? "grid_sampler_3d" : "grid_sampler_2d", a, 5, NULL);
}

/* ====================================================================================================
 * tables
 * ==================================================================================================== */
#define CT_NN_MISC_FN(name, doc) {#name, CT_FASTCALL(py_##name), CT_METH_FK, doc},
PyMethodDef ct_nn_misc_module_methods[] = {
    CT_NN_MISC_FN(rms_norm, "rms_norm(input, normalized_shape, weight=None, eps=None) -> Tensor")
    {"_embedding_bag_dense", CT_FASTCALL(py_embedding_bag_dense), CT_METH_FK,
     "_embedding_bag_dense(input, weight, offsets, mode, per_sample_weights, include_last_offset, padding_idx, "
     "scale_grad_by_freq=False) -> Tensor"},
    CT_NN_MISC_FN(embedding_bag, "embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, "
                                 "per_sample_weights=None, include_last_offset=False, padding_idx=None) -> "
                                 "(Tensor, Tensor, Tensor, Tensor)")
    CT_NN_MISC_FN(bilinear, "bilinear(input1, input2, weight, bias=None) -> Tensor")
    CT_NN_MISC_FN(multi_margin_loss, "multi_margin_loss(input, target, p=1, margin=1, weight=None, reduction=1) -> Tensor")
    CT_NN_MISC_FN(multilabel_margin_loss, "multilabel_margin_loss(input, target, reduction=1) -> Tensor")
    CT_NN_MISC_FN(multilabel_soft_margin_loss, "multilabel_soft_margin_loss(input, target, weight=None, reduction=1) -> Tensor")
    CT_NN_MISC_FN(triplet_margin_with_distance_loss, "triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=None, margin=1.0, swap=False, reduction=1) -> Tensor")
    CT_NN_MISC_FN(ctc_loss, "ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1, zero_infinity=False) -> Tensor")
    CT_NN_MISC_FN(_ctc_loss, "_ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False) -> (Tensor, Tensor)")
    CT_NN_MISC_FN(_ctc_loss_backward, "_ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, log_alpha, blank, zero_infinity) -> Tensor")
    CT_NN_MISC_FN(gumbel_softmax, "gumbel_softmax(logits, tau=1, hard=False, dim=-1) -> Tensor")
    CT_NN_MISC_FN(local_response_norm, "local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0) -> Tensor")
    CT_NN_MISC_FN(channel_shuffle, "channel_shuffle(input, groups) -> Tensor")
    CT_NN_MISC_FN(rrelu, "rrelu(input, lower=1/8, upper=1/3, training=False) -> Tensor")
    {"_alpha_dropout", CT_FASTCALL(py_alpha_dropout), CT_METH_FK, "_alpha_dropout(input, p, training, feature) -> Tensor"},
    {"_lp_pool", CT_FASTCALL(py_lp_pool), CT_METH_FK, "_lp_pool(input, norm_type, kernel_size, stride, ceil_mode, dims) -> Tensor"},
    {"_max_unpool", CT_FASTCALL(py_max_unpool), CT_METH_FK, "_max_unpool(input, indices, output_size) -> Tensor"},
    {"_affine_grid", CT_FASTCALL(py_affine_grid), CT_METH_FK, "_affine_grid(theta, size, align_corners) -> Tensor"},
    {"_grid_sample", CT_FASTCALL(py_grid_sample), CT_METH_FK, "_grid_sample(input, grid, mode, padding_mode, align_corners) -> Tensor"},
    CT_NN_MISC_FN(grid_sampler_2d, "grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners) "
                  "-> Tensor")
    CT_NN_MISC_FN(grid_sampler_3d, "grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners) "
                  "-> Tensor")
    CT_NN_MISC_FN(grid_sampler_2d_backward, "grid_sampler_2d_backward(grad_output, input, grid, interpolation_mode, "
                  "padding_mode, align_corners, output_mask) -> (Tensor, Tensor)")
    CT_NN_MISC_FN(grid_sampler_3d_backward, "grid_sampler_3d_backward(grad_output, input, grid, interpolation_mode, "
                  "padding_mode, align_corners, output_mask) -> (Tensor, Tensor)")
    {NULL},
};

PyMethodDef ct_nn_misc_tensor_methods[] = {{NULL}};

PyType_Slot ct_nn_misc_tensor_slots[] = {{0, NULL}};
