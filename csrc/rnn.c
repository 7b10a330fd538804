/* rnn.c: the recurrent family (nn.RNN / LSTM / GRU, their cells, nn.utils.rnn's packing):
 *
 *   rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell  PyTorch's torch-level cell functions;
 *   _rnn(mode, input, batch_sizes, hx, params, ...)    every layer, direction and time step of
 *                                                      a module in one call, padded or packed;
 *   _pack_padded_sequence, _pad_packed_sequence,       the data movements of nn.utils.rnn, each
 *   _pad_sequence                                      one index_select over a host-built index.
 *
 * Everything is composed of recording ops (linear, sigmoid, tanh, relu, chunk, mul/add, narrow,
 * cat, stack, index_select) called through ctorch._C, so it runs on every device and autograd
 * records the parts, as PyTorch's CPU path composes them: the cells' outputs carry PyTorch's
 * grad_fn (TanhBackward0, ReluBackward0, MulBackward0/AddBackward0, AddBackward0), a module's
 * output and h_n StackBackward0 (CatBackward0 for packed or bidirectional output).
 *
 * The time loop: each layer projects its whole input once (x W_ih^T + b_ih, one GEMM), then each
 * step adds h W_hh^T + b_hh and applies the gates. A packed batch (sequences sorted by length,
 * batch_sizes[t] of them alive at step t) runs each step on the live prefix of the batch: going
 * forward, rows that end are set aside as their final state; going backward, rows join from hx as
 * their sequence starts. */
#include "args.h"
#include "autograd_arena.h"
#include "creation.h" /* ct_type_name */
#include "device.h"
#include "registry.h"
#include "tensor.h"
#include <string.h>

typedef enum { RNN_TANH, RNN_RELU, RNN_LSTM, RNN_GRU } RnnMode;
static const int gate_count[] = {1, 1, 4, 3};
static const char *const mode_names[] = {"RNN_TANH", "RNN_RELU", "LSTM", "GRU"};

/* ============================================================================================
 * helpers
 * ============================================================================================ */

/* seq[k], kept in the arena */
static PyObject *arena_item(CtArena *arena, PyObject *seq, Py_ssize_t k)
{
    return arena_ok(arena, seq, seq) ? arena_keep(arena, PySequence_GetItem(seq, k)) : NULL;
}
#define ITEM(seq, k) arena_item(arena, (seq), (k))

/* ctorch._C.name(*Py_BuildValue(fmt, ...)) through the recording op: a new reference */
static PyObject *call_fn(const char *name, const char *fmt, ...)
{
    va_list va;
    va_start(va, fmt);
    PyObject *r = ct_op_va(name, fmt, va);
    va_end(va);
    return r;
}

/* t.narrow(0, start, length): a new reference */
static PyObject *rows(PyObject *t, int64_t start, int64_t length)
{
    return PyObject_CallMethod(t, "narrow", "(iLL)", 0, (long long)start, (long long)length);
}

/* A 1-d int64 tensor of v[0..n) on device: a new reference */
static PyObject *index_tensor(const int64_t *v, int64_t n, CtDevice device)
{
    CtDevice cpu = {CT_DEV_CPU, -1};
    CtTensorObject *t = ct_empty(1, &n, CT_I64, cpu);
    if (t == NULL) {
        return NULL;
    }
    if (n > 0) {
        memcpy(ct_data(t), v, sizeof(int64_t) * (size_t)n);
    }
    if (device.type == CT_DEV_CPU) {
        return (PyObject *)t;
    }
    CtTensorObject *moved = ct_to(t, CT_I64, device, false);
    Py_DECREF(t);
    return (PyObject *)moved;
}

static int check_tensor(PyObject *obj, const char *fname, const char *name, int pos, bool optional)
{
    if (CtTensor_Check(obj) || (optional && obj == Py_None)) {
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname, name, pos,
                 ct_type_name(obj));
    return -1;
}

/* The host copy of a 1-d CPU int64 tensor (batch_sizes, lengths), PyMem-allocated; *n its length.
 * what names it in the error. NULL with an exception. */
static int64_t *host_int64s(PyObject *obj, const char *what, int64_t *n)
{
    CtTensorObject *t = CtTensor_Check(obj) ? CT_TENSOR(obj) : NULL;
    if (t == NULL || t->ndim != 1 || t->dtype != CT_I64 || ct_device_of(t).type != CT_DEV_CPU) {
        if (t == NULL) {
            PyErr_Format(PyExc_TypeError, "'%s' argument should be a 1D CPU int64 tensor, but got %s", what,
                         ct_type_name(obj));
        } else {
            PyErr_Format(PyExc_RuntimeError, "'%s' argument should be a 1D CPU int64 tensor, but got %dD %s %s tensor",
                         what, t->ndim, ct_device_of(t).type == CT_DEV_CPU ? "cpu" : "cuda",
                         ct_scalar_type_name(t->dtype));
        }
        return NULL;
    }
    *n = t->sizes[0];
    int64_t *v = PyMem_Malloc(sizeof(int64_t) * (size_t)(*n > 0 ? *n : 1));
    if (v == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    const char *base = ct_data(t);
    for (int64_t i = 0; i < *n; i++) {
        v[i] = *(const int64_t *)(base + i * t->strides[0] * (int64_t)sizeof(int64_t));
    }
    return v;
}

/* ============================================================================================
 * one time step
 * ============================================================================================ */

/* One step given the input's projection gi = x W_ih^T + b_ih (batch, gates * hidden), h (batch, out)
 * and, for LSTM, c (batch, hidden); b_hh may be None, w_hr (LSTM's projection) NULL. New
 * references in *hy and (LSTM) *cy. 0 or -1. */
static int cell_step(RnnMode mode, PyObject *gi, PyObject *h, PyObject *c, PyObject *w_hh, PyObject *b_hh,
                     PyObject *w_hr, PyObject **hy, PyObject **cy)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *gh = FN("linear", "(OOO)", h, w_hh, b_hh); /* (batch, gates * hidden) */
    PyObject *h_new = NULL, *c_new = NULL;
    if (mode == RNN_TANH) {
        h_new = METH(ADD(gi, gh), "tanh", NULL);
    } else if (mode == RNN_RELU) {
        h_new = METH(ADD(gi, gh), "relu", NULL);
    } else if (mode == RNN_LSTM) {
        PyObject *gates = METH(ADD(gi, gh), "chunk", "(ii)", 4, 1);
        PyObject *in = METH(ITEM(gates, 0), "sigmoid", NULL);
        PyObject *forget = METH(ITEM(gates, 1), "sigmoid", NULL);
        PyObject *cell = METH(ITEM(gates, 2), "tanh", NULL);
        PyObject *out = METH(ITEM(gates, 3), "sigmoid", NULL);
        c_new = ADD(MUL(forget, c), MUL(in, cell));
        h_new = MUL(out, METH(c_new, "tanh", NULL));
        if (w_hr != NULL) {
            h_new = FN("linear", "(OO)", h_new, w_hr); /* (batch, proj_size) */
        }
    } else {
        /* GRU: the new gate's hidden part is scaled by the reset gate after its bias, as PyTorch */
        PyObject *xg = METH(gi, "chunk", "(ii)", 3, 1), *hg = METH(gh, "chunk", "(ii)", 3, 1);
        PyObject *reset = METH(ADD(ITEM(xg, 0), ITEM(hg, 0)), "sigmoid", NULL);
        PyObject *update = METH(ADD(ITEM(xg, 1), ITEM(hg, 1)), "sigmoid", NULL);
        PyObject *fresh = METH(ADD(ITEM(xg, 2), MUL(reset, ITEM(hg, 2))), "tanh", NULL);
        h_new = ADD(fresh, MUL(update, SUB(h, fresh))); /* (1 - z) n + z h */
    }
    *hy = TAKE(h_new);
    if (mode == RNN_LSTM) {
        *cy = TAKE(c_new);
    }
    arena_free(arena);
    if (*hy == NULL || (mode == RNN_LSTM && *cy == NULL)) {
        Py_CLEAR(*hy);
        if (mode == RNN_LSTM) {
            Py_CLEAR(*cy);
        }
        return -1;
    }
    return 0;
}

/* ============================================================================================
 * the cells: rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell
 * ============================================================================================ */

static int check_cell_hidden(CtTensorObject *input, CtTensorObject *hx, int k, int64_t hidden_size)
{
    if (hx->ndim != 2) {
        PyErr_Format(PyExc_RuntimeError, "Expected 2D hidden%d (batch x hidden_size), but got %dD tensor", k,
                     hx->ndim);
        return -1;
    }
    if (input->sizes[0] != hx->sizes[0]) {
        PyErr_Format(PyExc_RuntimeError, "Input batch size %lld doesn't match hidden%d batch size %lld",
                     (long long)input->sizes[0], k, (long long)hx->sizes[0]);
        return -1;
    }
    if (hx->sizes[1] != hidden_size) {
        PyErr_Format(PyExc_RuntimeError, "hidden%d has inconsistent hidden_size: got %lld, expected %lld", k,
                     (long long)hx->sizes[1], (long long)hidden_size);
        return -1;
    }
    return 0;
}

/* PyTorch's checks of a cell's input (batch, input_size), weights and hidden states, in its order */
static int check_cell(RnnMode mode, CtTensorObject *input, PyObject *const *hx, int nhx, CtTensorObject *w_ih,
                      CtTensorObject *w_hh)
{
    if (input->ndim != 2) {
        PyErr_Format(PyExc_RuntimeError, "Expected 2D input (batch x feature), but got %dD input", input->ndim);
        return -1;
    }
    if (w_ih->ndim != 2 || w_hh->ndim != 2) {
        PyErr_Format(PyExc_RuntimeError, "%s must be 2-D, but got %dD", w_ih->ndim != 2 ? "weight_ih" : "weight_hh",
                     w_ih->ndim != 2 ? w_ih->ndim : w_hh->ndim);
        return -1;
    }
    if (input->sizes[1] != w_ih->sizes[1]) {
        PyErr_Format(PyExc_RuntimeError, "input has inconsistent input_size: got %lld expected %lld",
                     (long long)input->sizes[1], (long long)w_ih->sizes[1]);
        return -1;
    }
    int64_t hidden_size = w_hh->sizes[1];
    int gates = gate_count[mode];
    if (w_ih->sizes[0] != gates * hidden_size || w_hh->sizes[0] != gates * hidden_size) {
        bool ih = w_ih->sizes[0] != gates * hidden_size;
        PyErr_Format(PyExc_RuntimeError, "%s first dim must be %d * hidden_size = %lld, but got %lld",
                     ih ? "weight_ih" : "weight_hh", gates, (long long)(gates * hidden_size),
                     (long long)(ih ? w_ih : w_hh)->sizes[0]);
        return -1;
    }
    for (int k = 0; k < nhx; k++) {
        if (check_cell_hidden(input, CT_TENSOR(hx[k]), k, hidden_size) < 0) {
            return -1;
        }
    }
    return 0;
}

static PyObject *cell_function(RnnMode mode, const char *fname, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    static const char *const names[] = {"input", "hx", "w_ih", "w_hh", "b_ih", "b_hh", NULL};
    PyObject *a[6] = {NULL};
    if (ct_parse_args(fname, args, nargs, kwnames, names, 4, a) < 0) {
        return NULL;
    }
    PyObject *b_ih = a[4] ? a[4] : Py_None, *b_hh = a[5] ? a[5] : Py_None;
    PyObject *hx[2] = {a[1], NULL};
    int nhx = 1;
    if (check_tensor(a[0], fname, "input", 1, false) < 0) {
        return NULL;
    }
    if (mode == RNN_LSTM) {
        if (!PyTuple_Check(a[1]) && !PyList_Check(a[1])) {
            PyErr_Format(PyExc_TypeError, "%s(): argument 'hx' (position 2) must be tuple of Tensors, not %s", fname,
                         ct_type_name(a[1]));
            return NULL;
        }
        if (PySequence_Fast_GET_SIZE(a[1]) != 2) {
            PyErr_SetString(PyExc_RuntimeError, "lstm_cell expects two hidden states");
            return NULL;
        }
        nhx = 2;
        for (int k = 0; k < 2; k++) {
            hx[k] = PySequence_Fast_GET_ITEM(a[1], k);
            if (!CtTensor_Check(hx[k])) {
                PyErr_Format(PyExc_TypeError,
                             "%s(): argument 'hx' (position 2) must be tuple of Tensors, but found element of type "
                             "%s at pos %d",
                             fname, ct_type_name(hx[k]), k);
                return NULL;
            }
        }
    } else if (check_tensor(a[1], fname, "hx", 2, false) < 0) {
        return NULL;
    }
    if (check_tensor(a[2], fname, "w_ih", 3, false) < 0 || check_tensor(a[3], fname, "w_hh", 4, false) < 0 ||
        check_tensor(b_ih, fname, "b_ih", 5, true) < 0 || check_tensor(b_hh, fname, "b_hh", 6, true) < 0 ||
        check_cell(mode, CT_TENSOR(a[0]), hx, nhx, CT_TENSOR(a[2]), CT_TENSOR(a[3])) < 0) {
        return NULL;
    }
    PyObject *gi = call_fn("linear", "(OOO)", a[0], a[2], b_ih);
    PyObject *hy = NULL, *cy = NULL;
    int rc = gi ? cell_step(mode, gi, hx[0], hx[1], a[3], b_hh, NULL, &hy, &cy) : -1;
    Py_XDECREF(gi);
    if (rc < 0) {
        return NULL;
    }
    if (mode != RNN_LSTM) {
        return hy;
    }
    PyObject *r = PyTuple_Pack(2, hy, cy);
    Py_DECREF(hy);
    Py_DECREF(cy);
    return r;
}

#define CELL_DOC(name, result)                                                                                         \
    #name "(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> " result "\n\nOne step of nn." #name                      \
          " on a batch: input (batch, input_size), composed of linear and the gates' pointwise ops."

#define CELL_FUNCTION(name, mode, result)                                                                              \
    PyDoc_STRVAR(name##_doc, CELL_DOC(name, result));                                                               \
    static PyObject *py_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)             \
    {                                                                                                                  \
        (void)self;                                                                                                    \
        return cell_function(mode, #name, args, nargs, kwnames);                                                       \
    }

CELL_FUNCTION(rnn_tanh_cell, RNN_TANH, "Tensor")
CELL_FUNCTION(rnn_relu_cell, RNN_RELU, "Tensor")
CELL_FUNCTION(lstm_cell, RNN_LSTM, "(Tensor, Tensor)")
CELL_FUNCTION(gru_cell, RNN_GRU, "Tensor")

/* ============================================================================================
 * _rnn: all layers, directions and steps
 * ============================================================================================ */

typedef struct {
    RnnMode mode;
    bool packed;
    bool has_biases;
    bool proj;            /* LSTM with proj_size > 0: a weight_hr per layer and direction */
    int64_t steps;        /* T */
    const int64_t *batch; /* (T,) sequences alive at each step (all B when padded) */
    const int64_t *start; /* (T,) packed: the first row of step t in the data */
} RnnRun;

/* Hands the pieces of a final state (collected last rows first) back as one (batch, ...) tensor:
 * a new reference. */
static PyObject *join_pieces(PyObject *pieces)
{
    if (PyList_GET_SIZE(pieces) == 1) {
        return Py_NewRef(PyList_GET_ITEM(pieces, 0));
    }
    if (PyList_Reverse(pieces) < 0) {
        return NULL;
    }
    return call_fn("cat", "(Oi)", pieces, 0);
}

/* One direction of one layer over every step. x: the layer's input, (T, B, in) padded or (N, in)
 * packed; w: its weights (w_ih, w_hh[, b_ih, b_hh][, w_hr]); h0 (B, out), c0 (B, hidden) or NULL.
 * New references in *out ((T, B, out) or (N, out)), *hn and (LSTM) *cn. 0 or -1. */
static int run_direction(const RnnRun *run, PyObject *x, PyObject *const *w, PyObject *h0, PyObject *c0,
                         bool reverse, PyObject **out, PyObject **hn, PyObject **cn)
{
    int rc = -1;
    bool lstm = run->mode == RNN_LSTM;
    PyObject *b_ih = run->has_biases ? w[2] : Py_None, *b_hh = run->has_biases ? w[3] : Py_None;
    PyObject *w_hr = run->proj ? w[run->has_biases ? 4 : 2] : NULL;
    PyObject *gi_all = NULL, *outputs = NULL, *pieces_h = NULL, *pieces_c = NULL, *h = NULL, *c = NULL;
    int64_t T = run->steps, full = run->batch[0];
    int64_t live = reverse ? run->batch[T - 1] : full;
    if ((gi_all = call_fn("linear", "(OOO)", x, w[0], b_ih)) == NULL || (outputs = PyList_New(T)) == NULL ||
        (pieces_h = PyList_New(0)) == NULL || (pieces_c = PyList_New(0)) == NULL ||
        (h = live == full ? Py_NewRef(h0) : rows(h0, 0, live)) == NULL ||
        (lstm && (c = live == full ? Py_NewRef(c0) : rows(c0, 0, live)) == NULL)) {
        goto done;
    }
    for (int64_t k = 0; k < T; k++) {
        int64_t t = reverse ? T - 1 - k : k, n = run->batch[t];
        if (n < live) { /* forward: rows n.. ended at the previous step */
            PyObject *ended_h = rows(h, n, live - n), *ended_c = lstm ? rows(c, n, live - n) : NULL;
            bool ok = ended_h != NULL && PyList_Append(pieces_h, ended_h) == 0 &&
                      (!lstm || (ended_c != NULL && PyList_Append(pieces_c, ended_c) == 0));
            Py_XDECREF(ended_h);
            Py_XDECREF(ended_c);
            if (!ok) {
                goto done;
            }
            Py_XSETREF(h, rows(h, 0, n));
            if (lstm) {
                Py_XSETREF(c, rows(c, 0, n));
            }
            if (h == NULL || (lstm && c == NULL)) {
                goto done;
            }
        } else if (n > live) { /* backward: rows live.. start here, from h0 */
            PyObject *joined = rows(h0, live, n - live);
            Py_XSETREF(h, joined ? call_fn("cat", "([OO]i)", h, joined, 0) : NULL);
            Py_XDECREF(joined);
            if (h == NULL) {
                goto done;
            }
            if (lstm) {
                joined = rows(c0, live, n - live);
                Py_XSETREF(c, joined ? call_fn("cat", "([OO]i)", c, joined, 0) : NULL);
                Py_XDECREF(joined);
                if (c == NULL) {
                    goto done;
                }
            }
        }
        live = n;
        PyObject *gi = run->packed ? rows(gi_all, run->start[t], n)
                                   : PyObject_CallMethod(gi_all, "select", "(iL)", 0, (long long)t);
        PyObject *hy = NULL, *cy = NULL;
        int step = gi ? cell_step(run->mode, gi, h, c, w[1], b_hh, w_hr, &hy, &cy) : -1;
        Py_XDECREF(gi);
        if (step < 0) {
            goto done;
        }
        Py_SETREF(h, hy);
        if (lstm) {
            Py_SETREF(c, cy);
        }
        PyList_SET_ITEM(outputs, t, Py_NewRef(h));
    }
    if (PyList_Append(pieces_h, h) < 0 || (lstm && PyList_Append(pieces_c, c) < 0)) {
        goto done;
    }
    *out = call_fn(run->packed ? "cat" : "stack", "(Oi)", outputs, 0);
    *hn = *out ? join_pieces(pieces_h) : NULL;
    if (lstm) {
        *cn = *hn ? join_pieces(pieces_c) : NULL;
    }
    if (*hn == NULL || (lstm && *cn == NULL)) {
        Py_CLEAR(*out);
        Py_CLEAR(*hn);
        goto done;
    }
    rc = 0;
done:
    Py_XDECREF(gi_all);
    Py_XDECREF(outputs);
    Py_XDECREF(pieces_h);
    Py_XDECREF(pieces_c);
    Py_XDECREF(h);
    Py_XDECREF(c);
    return rc;
}

/* Dropout between layers, as F.dropout: x * bernoulli(1 - p) / (1 - p). New reference. */
static PyObject *layer_dropout(PyObject *x, double p)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r;
    if (p >= 1.0) {
        r = TAKE(MUL(x, NUM(0.0)));
    } else {
        PyObject *keep = METH(FN("empty_like", "(O)", x), "bernoulli_", "(d)", 1.0 - p);
        r = TAKE(MUL(MUL(x, keep), NUM(1.0 / (1.0 - p))));
    }
    arena_free(arena);
    return r;
}

static int parse_mode(PyObject *obj, RnnMode *mode)
{
    const char *s = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    for (int m = 0; s != NULL && m < 4; m++) {
        if (strcmp(s, mode_names[m]) == 0) {
            *mode = (RnnMode)m;
            return 0;
        }
    }
    if (!PyErr_Occurred()) {
        PyErr_Format(PyExc_ValueError, "Unrecognized RNN mode: %S", obj);
    }
    return -1;
}

/* PyTorch's RNNBase.check_hidden_size */
static int check_hidden(PyObject *obj, const char *label, int64_t d0, int64_t d1, int64_t d2)
{
    if (!CtTensor_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "_rnn(): hidden state must be Tensor, not %s", ct_type_name(obj));
        return -1;
    }
    CtTensorObject *t = CT_TENSOR(obj);
    if (t->ndim == 3 && t->sizes[0] == d0 && t->sizes[1] == d1 && t->sizes[2] == d2) {
        return 0;
    }
    char got[128];
    ct_format_sizes(got, sizeof(got), t->ndim, t->sizes);
    PyErr_Format(PyExc_RuntimeError, "Expected %s size (%lld, %lld, %lld), got %s", label, (long long)d0,
                 (long long)d1, (long long)d2, got);
    return -1;
}

PyDoc_STRVAR(rnn_doc, "_rnn(mode, input, batch_sizes, hx, params, has_biases, num_layers, dropout, train, "
                      "bidirectional, batch_first) -> (output, h_n) or (output, h_n, c_n)\n\n"
                      "nn.RNN/LSTM/GRU's forward: mode 'RNN_TANH', 'RNN_RELU', 'LSTM' or 'GRU'; input (T, B, in) "
                      "((B, T, in) with batch_first) or, with batch_sizes (a CPU int64 tensor), a packed (N, in); hx "
                      "(layers * directions, B, out) or, for LSTM, (h0, c0); params the weights per layer and "
                      "direction: w_ih, w_hh[, b_ih, b_hh][, w_hr].");
static PyObject *py_rnn(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = {"mode",    "input", "batch_sizes",   "hx",          "params", "has_biases",
                                        "num_layers", "dropout", "train", "bidirectional", "batch_first", NULL};
    PyObject *a[11] = {NULL};
    RnnMode mode;
    bool has_biases, train, bidirectional, batch_first;
    int64_t num_layers;
    double dropout;
    if (ct_parse_args("_rnn", args, nargs, kwnames, names, 11, a) < 0 || parse_mode(a[0], &mode) < 0 ||
        check_tensor(a[1], "_rnn", "input", 2, false) < 0 || ct_arg_bool(a[5], &has_biases) < 0 ||
        ct_arg_int64(a[6], &num_layers) < 0 || ct_arg_double(a[7], &dropout) < 0 || ct_arg_bool(a[8], &train) < 0 ||
        ct_arg_bool(a[9], &bidirectional) < 0 || ct_arg_bool(a[10], &batch_first) < 0) {
        return NULL;
    }
    bool lstm = mode == RNN_LSTM, packed = a[2] != Py_None;
    int64_t dirs = bidirectional ? 2 : 1;
    CtTensorObject *input = CT_TENSOR(a[1]);
    PyObject *result = NULL, *params = NULL, *layer_input = NULL, *hn = NULL, *cn = NULL, *h0 = NULL, *c0 = NULL;
    PyObject *outs[2] = {NULL, NULL};
    int64_t *batch = NULL, *start = NULL, steps = 0;

    /* the weights: per layer and direction w_ih, w_hh[, b_ih, b_hh][, w_hr] */
    if ((params = PySequence_Fast(a[4], "_rnn(): argument 'params' must be a list of Tensors")) == NULL) {
        goto done;
    }
    Py_ssize_t nparams = PySequence_Fast_GET_SIZE(params);
    int64_t per = 2 + (has_biases ? 2 : 0), groups = num_layers * dirs;
    bool proj = lstm && groups > 0 && nparams == groups * (per + 1);
    per += proj ? 1 : 0;
    if (num_layers < 1 || nparams != groups * per) {
        PyErr_Format(PyExc_RuntimeError, "_rnn(): expected %lld weights for %lld layers, got %zd",
                     (long long)(groups * per), (long long)num_layers, nparams);
        goto done;
    }
    PyObject *const *w = PySequence_Fast_ITEMS(params);
    for (Py_ssize_t i = 0; i < nparams; i++) {
        if (check_tensor(w[i], "_rnn", "params", 5, false) < 0) {
            goto done;
        }
    }
    CtTensorObject *w_ih0 = CT_TENSOR(w[0]), *w_hh0 = CT_TENSOR(w[1]);
    if (w_ih0->ndim != 2 || w_hh0->ndim != 2) {
        PyErr_SetString(PyExc_RuntimeError, "_rnn(): the weights w_ih and w_hh must be 2-D");
        goto done;
    }
    int64_t hidden = w_ih0->sizes[0] / gate_count[mode], out_size = proj ? CT_TENSOR(w[per - 1])->sizes[0] : hidden;

    /* PyTorch's RNNBase.check_forward_args */
    if (input->dtype != w_ih0->dtype) {
        PyErr_Format(PyExc_ValueError,
                     "RNN input dtype (torch.%s) does not match weight dtype (torch.%s). Convert input: "
                     "input.to(torch.%s), or convert model: model.to(torch.%s)",
                     ct_dtype_info[input->dtype].name, ct_dtype_info[w_ih0->dtype].name,
                     ct_dtype_info[w_ih0->dtype].name, ct_dtype_info[input->dtype].name);
        goto done;
    }
    if (input->ndim != (packed ? 2 : 3)) {
        PyErr_Format(PyExc_RuntimeError, "input must have %d dimensions, got %d", packed ? 2 : 3, input->ndim);
        goto done;
    }
    if (input->sizes[input->ndim - 1] != w_ih0->sizes[1]) {
        PyErr_Format(PyExc_RuntimeError, "input.size(-1) must be equal to input_size. Expected %lld, got %lld",
                     (long long)w_ih0->sizes[1], (long long)input->sizes[input->ndim - 1]);
        goto done;
    }
    if (packed) {
        if ((batch = host_int64s(a[2], "batch_sizes", &steps)) == NULL) {
            goto done;
        }
        int64_t total = 0;
        for (int64_t t = 0; t < steps; t++) {
            if (batch[t] < 1 || (t > 0 && batch[t] > batch[t - 1])) {
                PyErr_SetString(PyExc_RuntimeError, "_rnn(): batch_sizes must be positive and non-increasing");
                goto done;
            }
            total += batch[t];
        }
        if (total != input->sizes[0]) {
            PyErr_Format(PyExc_RuntimeError, "_rnn(): batch_sizes sum to %lld, but the packed input has %lld rows",
                         (long long)total, (long long)input->sizes[0]);
            goto done;
        }
    } else {
        steps = input->sizes[batch_first ? 1 : 0];
        if ((batch = PyMem_Malloc(sizeof(int64_t) * (size_t)(steps > 0 ? steps : 1))) == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        for (int64_t t = 0; t < steps; t++) {
            batch[t] = input->sizes[batch_first ? 0 : 1];
        }
    }
    int64_t mini_batch = packed ? (steps > 0 ? batch[0] : 0) : input->sizes[batch_first ? 0 : 1];
    if (lstm) {
        if ((!PyTuple_Check(a[3]) && !PyList_Check(a[3])) || PySequence_Size(a[3]) != 2) {
            PyErr_Format(PyExc_TypeError, "_rnn(): LSTM's hx must be a tuple (h_0, c_0), not %s", ct_type_name(a[3]));
            goto done;
        }
        h0 = PySequence_GetItem(a[3], 0);
        c0 = PySequence_GetItem(a[3], 1);
        if (h0 == NULL || c0 == NULL || check_hidden(h0, "hidden[0]", groups, mini_batch, out_size) < 0 ||
            check_hidden(c0, "hidden[1]", groups, mini_batch, hidden) < 0) {
            goto done;
        }
    } else if (check_hidden((h0 = Py_NewRef(a[3])), "hidden", groups, mini_batch, hidden) < 0) {
        goto done;
    }
    if (steps == 0) {
        PyErr_SetString(PyExc_RuntimeError, "Expected sequence length to be larger than 0 in RNN");
        goto done;
    }
    if ((start = PyMem_Malloc(sizeof(int64_t) * (size_t)steps)) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (int64_t t = 0, row = 0; t < steps; row += batch[t], t++) {
        start[t] = row;
    }

    RnnRun run = {mode, packed, has_biases, proj, steps, batch, start};
    layer_input = batch_first && !packed ? PyObject_CallMethod(a[1], "transpose", "(ii)", 0, 1) : Py_NewRef(a[1]);
    if (layer_input == NULL || (hn = PyList_New(groups)) == NULL || (lstm && (cn = PyList_New(groups)) == NULL)) {
        goto done;
    }
    for (int64_t layer = 0; layer < num_layers; layer++) {
        for (int64_t d = 0; d < dirs; d++) {
            int64_t g = layer * dirs + d;
            PyObject *hg = PyObject_CallMethod(h0, "select", "(iL)", 0, (long long)g);
            PyObject *cg = lstm ? PyObject_CallMethod(c0, "select", "(iL)", 0, (long long)g) : NULL;
            PyObject *hn_g = NULL, *cn_g = NULL;
            int rc = hg != NULL && (!lstm || cg != NULL)
                         ? run_direction(&run, layer_input, w + g * per, hg, cg, d == 1, &outs[d], &hn_g, &cn_g)
                         : -1;
            Py_XDECREF(hg);
            Py_XDECREF(cg);
            if (rc < 0) {
                goto done;
            }
            PyList_SET_ITEM(hn, g, hn_g);
            if (lstm) {
                PyList_SET_ITEM(cn, g, cn_g);
            }
        }
        PyObject *layer_output = dirs == 2 ? call_fn("cat", "([OO]i)", outs[0], outs[1], -1) : Py_NewRef(outs[0]);
        Py_CLEAR(outs[0]);
        Py_CLEAR(outs[1]);
        if (layer_output != NULL && dropout > 0.0 && train && layer < num_layers - 1) {
            Py_SETREF(layer_output, layer_dropout(layer_output, dropout));
        }
        Py_SETREF(layer_input, layer_output);
        if (layer_input == NULL) {
            goto done;
        }
    }
    if (batch_first && !packed) {
        Py_SETREF(layer_input, PyObject_CallMethod(layer_input, "transpose", "(ii)", 0, 1));
    }
    PyObject *h_n = layer_input ? call_fn("stack", "(Oi)", hn, 0) : NULL;
    PyObject *c_n = h_n && lstm ? call_fn("stack", "(Oi)", cn, 0) : NULL;
    if (h_n != NULL && (!lstm || c_n != NULL)) {
        result = lstm ? PyTuple_Pack(3, layer_input, h_n, c_n) : PyTuple_Pack(2, layer_input, h_n);
    }
    Py_XDECREF(h_n);
    Py_XDECREF(c_n);
done:
    Py_XDECREF(params);
    Py_XDECREF(layer_input);
    Py_XDECREF(hn);
    Py_XDECREF(cn);
    Py_XDECREF(h0);
    Py_XDECREF(c0);
    Py_XDECREF(outs[0]);
    Py_XDECREF(outs[1]);
    PyMem_Free(batch);
    PyMem_Free(start);
    return result;
}

/* ============================================================================================
 * nn.utils.rnn: packing and padding, each an index_select of host-computed rows
 * ============================================================================================ */

/* src.flatten(0, 1).index_select(0, rows of index) on src's device: a new reference */
static PyObject *gather_rows(PyObject *src, const int64_t *index, int64_t n)
{
    PyObject *idx = index_tensor(index, n, ct_device_of(CT_TENSOR(src)));
    PyObject *r = idx ? call_fn("index_select", "(OiO)", src, 0, idx) : NULL;
    Py_XDECREF(idx);
    return r;
}

/* src with one row of value appended along dim 0 (the row padding points at): a new reference */
static PyObject *with_padding_row(PyObject *src, PyObject *value)
{
    CtTensorObject *t = CT_TENSOR(src);
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    sizes[0] = 1;
    PyObject *shape = ct_size_object(t->ndim, sizes);
    PyObject *pad = shape ? PyObject_CallMethod(src, "new_full", "(OO)", shape, value) : NULL;
    PyObject *r = pad ? call_fn("cat", "([OO]i)", src, pad, 0) : NULL;
    Py_XDECREF(shape);
    Py_XDECREF(pad);
    return r;
}

/* (data, batch_sizes) as a tuple, taking both references */
static PyObject *pair_steal(PyObject *a, PyObject *b)
{
    PyObject *r = a && b ? PyTuple_Pack(2, a, b) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    return r;
}

PyDoc_STRVAR(pack_padded_sequence_doc,
             "_pack_padded_sequence(input, lengths, batch_first) -> (data, batch_sizes)\n\n"
             "The rows of input (T, B, *) ((B, T, *) with batch_first) inside each sequence's length, step by "
             "step: data (sum(lengths), *); batch_sizes[t] the sequences longer than t. lengths: a 1-D CPU int64 "
             "tensor in decreasing order.");
static PyObject *py_pack_padded_sequence(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = {"input", "lengths", "batch_first", NULL};
    PyObject *a[3] = {NULL};
    bool batch_first = false;
    if (ct_parse_args("_pack_padded_sequence", args, nargs, kwnames, names, 3, a) < 0 ||
        check_tensor(a[0], "_pack_padded_sequence", "input", 1, false) < 0 || ct_arg_bool(a[2], &batch_first) < 0) {
        return NULL;
    }
    CtTensorObject *input = CT_TENSOR(a[0]);
    if (input->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "pack_padded_sequence: input must have at least 2 dimensions, got %d",
                     input->ndim);
        return NULL;
    }
    int64_t B = input->sizes[batch_first ? 0 : 1], T = input->sizes[batch_first ? 1 : 0], n = 0;
    PyObject *result = NULL, *flat = NULL;
    int64_t *index = NULL, *batch_sizes = NULL, *lengths = host_int64s(a[1], "lengths", &n);
    if (lengths == NULL) {
        goto done;
    }
    if (n != B) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected `len(lengths)` to be equal to batch_size, but got %lld (batch_size=%lld)", (long long)n,
                     (long long)B);
        goto done;
    }
    if (B > 0 && lengths[B - 1] <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "Length of all samples has to be greater than 0, but found an element in "
                                            "'lengths' that is <= 0");
        goto done;
    }
    for (int64_t b = 1; b < B; b++) {
        if (lengths[b] > lengths[b - 1]) {
            PyErr_SetString(PyExc_RuntimeError,
                            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
                            "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
                            "requirement if you do not need ONNX exportability.");
            goto done;
        }
    }
    int64_t steps = B > 0 ? lengths[0] : 0, total = 0;
    if (steps > T) {
        PyErr_Format(PyExc_RuntimeError,
                     "pack_padded_sequence: the longest length (%lld) exceeds the padded input's sequence length "
                     "(%lld)",
                     (long long)steps, (long long)T);
        goto done;
    }
    for (int64_t b = 0; b < B; b++) {
        total += lengths[b];
    }
    if ((index = PyMem_Malloc(sizeof(int64_t) * (size_t)(total + 1))) == NULL ||
        (batch_sizes = PyMem_Malloc(sizeof(int64_t) * (size_t)(steps + 1))) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t k = 0;
    for (int64_t t = 0; t < steps; t++) {
        int64_t alive = 0;
        while (alive < B && lengths[alive] > t) {
            /* row (t, b) of the time-major flattening, or of the batch-major one */
            index[k++] = batch_first ? alive * T + t : t * B + alive;
            alive++;
        }
        batch_sizes[t] = alive;
    }
    flat = PyObject_CallMethod(a[0], "flatten", "(ii)", 0, 1);
    CtDevice cpu = {CT_DEV_CPU, -1};
    result = flat ? pair_steal(gather_rows(flat, index, total), index_tensor(batch_sizes, steps, cpu)) : NULL;
done:
    Py_XDECREF(flat);
    PyMem_Free(lengths);
    PyMem_Free(index);
    PyMem_Free(batch_sizes);
    return result;
}

PyDoc_STRVAR(pad_packed_sequence_doc,
             "_pad_packed_sequence(data, batch_sizes, batch_first, padding_value, total_length)\n"
             "    -> (padded, lengths)\n\n"
             "The inverse of _pack_padded_sequence: padded (total_length or T, B, *) ((B, T, *) with batch_first) "
             "filled with padding_value past each sequence's end; lengths a CPU int64 tensor.");
static PyObject *py_pad_packed_sequence(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = {"data", "batch_sizes", "batch_first", "padding_value", "total_length", NULL};
    PyObject *a[5] = {NULL};
    bool batch_first = false;
    if (ct_parse_args("_pad_packed_sequence", args, nargs, kwnames, names, 2, a) < 0 ||
        check_tensor(a[0], "_pad_packed_sequence", "data", 1, false) < 0 || ct_arg_bool(a[2], &batch_first) < 0) {
        return NULL;
    }
    CtTensorObject *data = CT_TENSOR(a[0]);
    PyObject *result = NULL, *src = NULL, *padded = NULL, *shape = NULL, *padding = a[3] ? a[3] : NULL;
    int64_t steps = 0, *index = NULL, *lengths = NULL, *batch = host_int64s(a[1], "batch_sizes", &steps);
    if (batch == NULL) {
        goto done;
    }
    int64_t B = steps > 0 ? batch[0] : 0, total = 0, length = steps;
    for (int64_t t = 0; t < steps; t++) {
        if (batch[t] < 1 || batch[t] > B || (t > 0 && batch[t] > batch[t - 1])) {
            PyErr_SetString(PyExc_RuntimeError, "pad_packed_sequence: batch_sizes must be positive and non-increasing");
            goto done;
        }
        total += batch[t];
    }
    if (data->ndim < 1 || data->sizes[0] != total) {
        PyErr_Format(PyExc_RuntimeError, "pad_packed_sequence: batch_sizes sum to %lld, but data has %lld rows",
                     (long long)total, (long long)(data->ndim > 0 ? data->sizes[0] : 0));
        goto done;
    }
    if (a[4] != NULL && a[4] != Py_None) {
        if (ct_arg_int64(a[4], &length) < 0) {
            goto done;
        }
        if (length < steps) {
            PyErr_Format(PyExc_ValueError,
                         "Expected total_length to be at least the length of the longest sequence in input, but got "
                         "total_length=%lld and max sequence length being %lld",
                         (long long)length, (long long)steps);
            goto done;
        }
    }
    if ((index = PyMem_Malloc(sizeof(int64_t) * (size_t)(length * B + 1))) == NULL ||
        (lengths = PyMem_Calloc((size_t)(B + 1), sizeof(int64_t))) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (int64_t t = 0, row = 0; t < length; t++) {
        int64_t alive = t < steps ? batch[t] : 0;
        for (int64_t b = 0; b < B; b++) {
            /* data's row for (t, b), or the padding row appended after data's last */
            index[batch_first ? b * length + t : t * B + b] = b < alive ? row + b : total;
            lengths[b] += b < alive;
        }
        row += alive;
    }
    PyObject *value = padding ? padding : PyFloat_FromDouble(0.0);
    src = value ? with_padding_row(a[0], value) : NULL;
    if (padding == NULL) {
        Py_XDECREF(value);
    }
    int64_t sizes[CT_MAX_DIMS + 1];
    sizes[0] = batch_first ? B : length;
    sizes[1] = batch_first ? length : B;
    memcpy(sizes + 2, data->sizes + 1, sizeof(int64_t) * (size_t)(data->ndim - 1));
    if (src == NULL || (shape = ct_size_object(data->ndim + 1, sizes)) == NULL ||
        (padded = gather_rows(src, index, length * B)) == NULL) {
        goto done;
    }
    CtDevice cpu = {CT_DEV_CPU, -1};
    result = pair_steal(PyObject_CallMethod(padded, "view", "(O)", shape), index_tensor(lengths, B, cpu));
done:
    Py_XDECREF(src);
    Py_XDECREF(padded);
    Py_XDECREF(shape);
    PyMem_Free(batch);
    PyMem_Free(index);
    PyMem_Free(lengths);
    return result;
}

/* padding_side: 0 right, 1 left; -1 with PyTorch's error */
static int parse_side(PyObject *obj)
{
    const char *s = obj == NULL ? "right" : PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    if (s != NULL && (strcmp(s, "right") == 0 || strcmp(s, "left") == 0)) {
        return s[0] == 'l';
    }
    if (s != NULL) {
        PyErr_Format(PyExc_RuntimeError, "Expected padding_side to be one of left or right, but got %s.", s);
    } else if (!PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "pad_sequence(): argument 'padding_side' must be str, not %s",
                     ct_type_name(obj));
    }
    return -1;
}

PyDoc_STRVAR(pad_sequence_doc,
             "_pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side='right') -> Tensor\n\n"
             "Sequences (L_i, *) stacked into (max L, B, *) ((B, max L, *) with batch_first), padded with "
             "padding_value on padding_side, in the first sequence's dtype.");
static PyObject *py_pad_sequence(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = {"sequences", "batch_first", "padding_value", "padding_side", NULL};
    PyObject *a[4] = {NULL};
    bool batch_first = false;
    int left;
    if (ct_parse_args("pad_sequence", args, nargs, kwnames, names, 1, a) < 0 || ct_arg_bool(a[1], &batch_first) < 0 ||
        (left = parse_side(a[3])) < 0) {
        return NULL;
    }
    PyObject *result = NULL, *seqs = NULL, *parts = NULL, *src = NULL, *padded = NULL, *shape = NULL, *value = NULL;
    int64_t *index = NULL, *base = NULL;
    if ((seqs = PySequence_Fast(a[0], "pad_sequence(): argument 'sequences' must be a list of Tensors")) == NULL) {
        goto done;
    }
    Py_ssize_t B = PySequence_Fast_GET_SIZE(seqs);
    PyObject *const *s = PySequence_Fast_ITEMS(seqs);
    if (B == 0) {
        PyErr_SetString(PyExc_RuntimeError, "received an empty list of sequences");
        goto done;
    }
    for (Py_ssize_t b = 0; b < B; b++) {
        if (!CtTensor_Check(s[b])) {
            PyErr_Format(PyExc_TypeError,
                         "pad_sequence(): argument 'sequences' (position 1) must be tuple of Tensors, but found "
                         "element of type %s at pos %zd",
                         ct_type_name(s[b]), b);
            goto done;
        }
    }
    CtTensorObject *first = CT_TENSOR(s[0]);
    if ((parts = PyList_New(B)) == NULL) {
        goto done;
    }
    if ((base = PyMem_Malloc(sizeof(int64_t) * (size_t)(B + 1))) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t longest = 0, rows_total = 0;
    for (Py_ssize_t b = 0; b < B; b++) {
        CtTensorObject *t = CT_TENSOR(s[b]);
        bool same = t->ndim == first->ndim && t->ndim > 0 &&
                    memcmp(t->sizes + 1, first->sizes + 1, sizeof(int64_t) * (size_t)(t->ndim - 1)) == 0;
        if (!same) {
            char got[256], want[256];
            ct_format_sizes(got, sizeof(got), t->ndim, t->sizes);
            ct_format_sizes(want, sizeof(want), first->ndim, first->sizes);
            PyErr_Format(PyExc_RuntimeError,
                         "pad_sequence: sequence %zd of shape %s does not match the trailing dims of sequence 0 of "
                         "shape %s",
                         b, got, want);
            goto done;
        }
        PyObject *part = t->dtype == first->dtype
                             ? Py_NewRef(s[b])
                             : PyObject_CallMethod(s[b], "to", "(O)", ct_dtype_object(first->dtype));
        if (part == NULL) {
            goto done;
        }
        PyList_SET_ITEM(parts, b, part);
        base[b] = rows_total;
        rows_total += t->sizes[0];
        longest = t->sizes[0] > longest ? t->sizes[0] : longest;
    }
    if ((index = PyMem_Malloc(sizeof(int64_t) * (size_t)(longest * B + 1))) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t b = 0; b < B; b++) {
        int64_t len = CT_TENSOR(s[b])->sizes[0], shift = left ? longest - len : 0;
        for (int64_t t = 0; t < longest; t++) {
            bool inside = t >= shift && t < shift + len;
            index[batch_first ? b * longest + t : t * B + b] = inside ? base[b] + t - shift : rows_total;
        }
    }
    int64_t sizes[CT_MAX_DIMS + 1];
    sizes[0] = batch_first ? B : longest;
    sizes[1] = batch_first ? longest : B;
    memcpy(sizes + 2, first->sizes + 1, sizeof(int64_t) * (size_t)(first->ndim - 1));
    value = a[2] != NULL ? Py_NewRef(a[2]) : PyFloat_FromDouble(0.0);
    PyObject *joined = value ? call_fn("cat", "(Oi)", parts, 0) : NULL;
    src = joined ? with_padding_row(joined, value) : NULL;
    Py_XDECREF(joined);
    if (src == NULL || (shape = ct_size_object(first->ndim + 1, sizes)) == NULL ||
        (padded = gather_rows(src, index, longest * B)) == NULL) {
        goto done;
    }
    result = PyObject_CallMethod(padded, "view", "(O)", shape);
done:
    Py_XDECREF(seqs);
    Py_XDECREF(parts);
    Py_XDECREF(src);
    Py_XDECREF(padded);
    Py_XDECREF(shape);
    Py_XDECREF(value);
    PyMem_Free(index);
    PyMem_Free(base);
    return result;
}

/* ============================================================================================
 * tables
 * ============================================================================================ */

#define CT_PY(name) {#name, CT_FASTCALL(py_##name), CT_METH_FK, name##_doc}
PyMethodDef ct_rnn_module_methods[] = {
    CT_PY(rnn_tanh_cell),
    CT_PY(rnn_relu_cell),
    CT_PY(lstm_cell),
    CT_PY(gru_cell),
    {"_rnn", CT_FASTCALL(py_rnn), CT_METH_FK, rnn_doc},
    {"_pack_padded_sequence", CT_FASTCALL(py_pack_padded_sequence), CT_METH_FK, pack_padded_sequence_doc},
    {"_pad_packed_sequence", CT_FASTCALL(py_pad_packed_sequence), CT_METH_FK, pad_packed_sequence_doc},
    {"_pad_sequence", CT_FASTCALL(py_pad_sequence), CT_METH_FK, pad_sequence_doc},
    {NULL},
};

PyMethodDef ct_rnn_tensor_methods[] = {{NULL}};
PyType_Slot ct_rnn_tensor_slots[] = {{0, NULL}};
