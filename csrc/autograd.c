/* autograd.c: graph nodes, the recording of differentiable ops and the backward engine.
 *
 * Recording: ct_autograd_install() replaces each op listed in ct_formulas[] (module function,
 * Tensor method, and the number/mapping slots) by a wrapper. When grad mode is on and an
 * input requires grad, the wrapper runs the op with grad mode off, then creates a node that
 * holds the call's normalised arguments, edges to the inputs' nodes, and (if the formula
 * needs them) detached aliases of the outputs. Otherwise it calls the op directly.
 *
 * Engine: ct_run_backward() counts dependencies with an explicit stack, then executes nodes
 * from a max-heap on sequence number (newest first, as PyTorch), accumulating gradients per
 * node output. Saved tensors are released as soon as a node has run unless retain_graph. */
#include "autograd.h"
#include "namespace.h"
#include "amp.h"
#include "args.h"
#include "creation.h"
#include "device.h"
#include "iter.h"
#include "profiler.h"
#include "registry.h"
#include "tensor.h"
#include <string.h>
#include <structmember.h>

bool ct_grad_enabled = true;
static uint64_t next_sequence_nr = 0;
static uint64_t engine_runs = 0;
static uint64_t current_run = 0;      /* the innermost engine run in progress (0: none) */
static bool current_run_filtered = false; /* it runs only the nodes leading to autograd.grad's inputs */

static PyTypeObject *CtNode_Type;
static PyObject *node_types; /* dict: node name -> subtype of Node */

static const char *freed_message =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward.";

/* A view also requires grad when its base does (views of a base that got history later). */
static inline bool tensor_requires_grad(const CtTensorObject *t)
{
    if (t->requires_grad || t->grad_fn != NULL) {
        return true;
    }
    const CtTensorObject *base = (const CtTensorObject *)t->view_base;
    return base != NULL && !t->view_no_grad && (base->requires_grad || base->grad_fn != NULL);
}

/* --- nodes ----------------------------------------------------------------------------------------- */
/* Nodes PyTorch implements in C++ outside its generated code: their name() carries the
 * namespace, their class name does not. */
#define CT_TORCH_NODE_PREFIX "torch::autograd::"
static const char *const torch_namespace_nodes[] = {"AccumulateGrad", "CopySlices", "CopyBackwards", "NotImplemented",
                                                    NULL};

static PyTypeObject *node_type_for(const char *name)
{
    if (strncmp(name, CT_TORCH_NODE_PREFIX, strlen(CT_TORCH_NODE_PREFIX)) == 0) {
        name += strlen(CT_TORCH_NODE_PREFIX);
    }
    /* node_types by name pointer first: names are mostly the formula table's literals, and a
     * dict lookup by C string makes and hashes a str every time. A hit also compares the text
     * (a reused buffer may hold another name); the cache holds strong references. */
    static struct {
        const char *key;
        PyTypeObject *tp;
    } cache[256];
    size_t slot = ((uintptr_t)name >> 3) & 255;
    if (cache[slot].key == name) {
        const char *cached = strrchr(cache[slot].tp->tp_name, '.');
        if (strcmp(cached != NULL ? cached + 1 : cache[slot].tp->tp_name, name) == 0) {
            return cache[slot].tp;
        }
    }
    PyObject *tp = PyDict_GetItemString(node_types, name); /* borrowed */
    if (tp != NULL) {
        cache[slot].key = name;
        Py_XSETREF(cache[slot].tp, (PyTypeObject *)Py_NewRef(tp));
        return (PyTypeObject *)tp;
    }
    PyObject *bases = PyTuple_Pack(1, (PyObject *)CtNode_Type);
    if (bases == NULL) {
        return NULL;
    }
    /* Each backward kind is its own class so that type(y.grad_fn).__name__ reads "MulBackward0". */
    char qualname[128];
    snprintf(qualname, sizeof(qualname), "ctorch.autograd.graph.%s", name);
    static PyType_Slot slots[] = {{Py_tp_traverse, NULL}, {Py_tp_clear, NULL}, {0, NULL}};
    slots[0].pfunc = (void *)CtNode_Type->tp_traverse;
    slots[1].pfunc = (void *)CtNode_Type->tp_clear;
    PyType_Spec spec = {NULL, 0, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, slots};
    spec.name = PyMem_RawMalloc(strlen(qualname) + 1); /* type names must outlive the type */
    if (spec.name == NULL) {
        Py_DECREF(bases);
        return (PyTypeObject *)PyErr_NoMemory();
    }
    strcpy((char *)spec.name, qualname);
    spec.basicsize = sizeof(CtNodeObject);
    tp = PyType_FromSpecWithBases(&spec, bases);
    Py_DECREF(bases);
    if (tp == NULL || PyDict_SetItemString(node_types, name, tp) < 0) {
        Py_XDECREF(tp);
        return NULL;
    }
    Py_DECREF(tp); /* the dict keeps it */
    return (PyTypeObject *)tp;
}

static CtNodeObject *node_new(const char *name, int kind, int num_edges, int num_outputs)
{
    PyTypeObject *tp = node_type_for(name);
    if (tp == NULL) {
        return NULL;
    }
    CtNodeObject *n = PyObject_GC_New(CtNodeObject, tp);
    if (n == NULL) {
        return NULL;
    }
    memset((char *)n + sizeof(PyObject), 0, sizeof(CtNodeObject) - sizeof(PyObject));
    n->kind = kind;
    n->num_edges = num_edges;
    n->num_outputs = num_outputs;
    n->sequence_nr = next_sequence_nr++;
    if (num_edges > 0) {
        n->edge_nodes = PyMem_Calloc(num_edges, sizeof(PyObject *));
        n->edge_input_nr = PyMem_Calloc(num_edges, sizeof(int));
        if (n->edge_nodes == NULL || n->edge_input_nr == NULL) {
            PyObject_GC_Track(n);
            Py_DECREF(n);
            return (CtNodeObject *)PyErr_NoMemory();
        }
    }
    PyObject_GC_Track(n);
    return n;
}

static void node_release_saved(CtNodeObject *n)
{
    bool had_tensors = false;
    for (int i = 0; i < n->nargs; i++) {
        if (n->args[i] != NULL && CtTensor_Check(n->args[i])) {
            Py_CLEAR(n->args[i]);
            had_tensors = true;
        }
    }
    if (n->outputs != NULL) {
        Py_CLEAR(n->outputs);
        had_tensors = true;
    }
    for (int i = 0; i < n->npacked; i++) {
        if (n->packed[i] != NULL) {
            Py_CLEAR(n->packed[i]);
            had_tensors = true;
        }
    }
    if (n->inner != NULL) {
        node_release_saved((CtNodeObject *)n->inner);
        had_tensors = true;
    }
    if (n->kind == CT_NODE_PYFUNCTION && n->py_ctx != NULL) {
        PyObject *r = ct_call_method(n->py_ctx, "_release", NULL);
        Py_XDECREF(r);
        PyErr_Clear();
        had_tensors = true;
    }
    if (had_tensors) {
        n->released = true;
    }
}

static int node_traverse(PyObject *self, visitproc visit, void *arg)
{
    CtNodeObject *n = (CtNodeObject *)self;
    Py_VISIT(Py_TYPE(self));
    for (int i = 0; i < n->num_edges; i++) {
        Py_VISIT(n->edge_nodes[i]);
    }
    for (int i = 0; i < n->nargs; i++) {
        Py_VISIT(n->args[i]);
    }
    Py_VISIT(n->outputs);
    Py_VISIT(n->variable);
    Py_VISIT(n->py_ctx);
    Py_VISIT(n->pre_hooks);
    Py_VISIT(n->metadata);
    Py_VISIT(n->inner);
    Py_VISIT(n->buffer);
    for (int i = 0; i < n->npacked; i++) {
        Py_VISIT(n->packed[i]);
    }
    Py_VISIT(n->unpack_hook);
    Py_VISIT(n->fn_hooks);
    Py_VISIT(n->fn_prehooks);
    return 0;
}

static int node_clear(PyObject *self)
{
    CtNodeObject *n = (CtNodeObject *)self;
    for (int i = 0; i < n->num_edges; i++) {
        Py_CLEAR(n->edge_nodes[i]);
    }
    for (int i = 0; i < n->nargs; i++) {
        Py_CLEAR(n->args[i]);
    }
    Py_CLEAR(n->outputs);
    Py_CLEAR(n->variable);
    Py_CLEAR(n->py_ctx);
    Py_CLEAR(n->pre_hooks);
    Py_CLEAR(n->metadata);
    Py_CLEAR(n->inner);
    Py_CLEAR(n->buffer);
    for (int i = 0; i < n->npacked; i++) {
        Py_CLEAR(n->packed[i]);
    }
    Py_CLEAR(n->unpack_hook);
    Py_CLEAR(n->fn_hooks);
    Py_CLEAR(n->fn_prehooks);
    return 0;
}

static void node_dealloc(PyObject *self)
{
    CtNodeObject *n = (CtNodeObject *)self;
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    /* The trashcan turns the deallocation of a long chain of nodes into a loop. */
    Py_TRASHCAN_BEGIN(self, node_dealloc)
    if (n->weakreflist != NULL) {
        PyObject_ClearWeakRefs(self);
    }
    node_clear(self);
    PyMem_Free(n->edge_nodes);
    PyMem_Free(n->edge_input_nr);
    PyMem_Free(n->meta);
    PyMem_Free(n->geometry);
    PyMem_Free(n->packed);
    PyObject_GC_Del(self);
    Py_DECREF(tp);
    Py_TRASHCAN_END
}

static PyObject *node_name(PyObject *self, PyObject *unused)
{
    const char *name = _PyType_Name(Py_TYPE(self));
    for (const char *const *p = torch_namespace_nodes; *p != NULL; p++) {
        if (strcmp(*p, name) == 0) {
            return PyUnicode_FromFormat(CT_TORCH_NODE_PREFIX "%s", name);
        }
    }
    return PyUnicode_FromString(name);
}

static PyObject *node_get_next_functions(PyObject *self, void *c)
{
    CtNodeObject *n = (CtNodeObject *)self;
    PyObject *t = PyTuple_New(n->num_edges);
    for (int i = 0; t != NULL && i < n->num_edges; i++) {
        PyObject *e = Py_BuildValue("(Oi)", n->edge_nodes[i] ? n->edge_nodes[i] : Py_None, n->edge_input_nr[i]);
        if (e == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, e);
    }
    return t;
}

static PyObject *node_get_variable(PyObject *self, void *c)
{
    CtNodeObject *n = (CtNodeObject *)self;
    if (n->variable == NULL) {
        PyErr_SetString(PyExc_AttributeError, "only AccumulateGrad nodes have a variable");
        return NULL;
    }
    return Py_NewRef(n->variable);
}

static PyObject *node_get_metadata(PyObject *self, void *c)
{
    CtNodeObject *n = (CtNodeObject *)self;
    if (n->metadata == NULL && (n->metadata = PyDict_New()) == NULL) {
        return NULL;
    }
    return Py_NewRef(n->metadata);
}

static PyObject *node_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<%s object at %p>", _PyType_Name(Py_TYPE(self)), self);
}

/* Appends hook to *list (made on first use); returns a handle whose remove() takes it out. */
static PyObject *node_add_hook(PyObject **list, PyObject *hook)
{
    if (!PyCallable_Check(hook)) {
        PyErr_SetString(PyExc_TypeError, "hook must be callable");
        return NULL;
    }
    if ((*list == NULL && (*list = PyList_New(0)) == NULL) || PyList_Append(*list, hook) < 0) {
        return NULL;
    }
    PyObject *mod = PyImport_ImportModule("ctorch.utils.hooks");
    if (mod == NULL) {
        return NULL;
    }
    PyObject *r = ct_call_method(mod, "_handle_for", "OOi", *list, hook, -1);
    Py_DECREF(mod);
    return r;
}

static PyObject *node_register_hook(PyObject *self, PyObject *hook)
{
    return node_add_hook(&((CtNodeObject *)self)->fn_hooks, hook);
}

static PyObject *node_register_prehook(PyObject *self, PyObject *hook)
{
    return node_add_hook(&((CtNodeObject *)self)->fn_prehooks, hook);
}

static PyObject *node_dir(PyObject *self, PyObject *unused);

static PyMethodDef node_methods[] = {
    {"name", node_name, METH_NOARGS, "the node's class name, e.g. 'MulBackward0'"},
    {"__dir__", node_dir, METH_NOARGS, "object's attributes and the node's _saved_<name> / _raw_saved_<name> fields"},
    {"register_hook", node_register_hook, METH_O,
     "register_hook(hook): hook(grad_inputs, grad_outputs) after the node runs; may return new grad_inputs"},
    {"register_prehook", node_register_prehook, METH_O,
     "register_prehook(hook): hook(grad_outputs) before the node runs; may return new grad_outputs"},
    {NULL},
};

static PyGetSetDef node_getset[] = {
    {"next_functions", node_get_next_functions, NULL, "((node, input_nr), ...) for each input", NULL},
    {"variable", node_get_variable, NULL, "the leaf of an AccumulateGrad node", NULL},
    {"metadata", node_get_metadata, NULL, "a dict for user data", NULL},
    {NULL},
};

/* --- saved values ------------------------------------------------------------------------------------ */
/* The legacy type name of t ('torch.FloatTensor'), as PyTorch's messages print it. New reference. */
static PyObject *legacy_type_name(PyObject *t)
{
    return PyObject_CallMethod(t, "type", NULL);
}

/* PyTorch's message for a saved tensor modified in place: the tensor's legacy type and size, the op
 * that made it ("output 0 of Add": the grad_fn's name without "Backward<n>"; for a saved output, its
 * node `output_of`, else the tensor's grad_fn now), the versions. */
static int check_version(CtTensorObject *t, uint64_t expected, CtNodeObject *output_of, int output_nr)
{
    if (t->storage->version == expected) {
        return 0;
    }
    char shape[256], which[320] = "";
    ct_format_sizes(shape, sizeof(shape), t->ndim, t->sizes);
    PyObject *type = legacy_type_name((PyObject *)t);
    PyObject *fn = output_of != NULL ? Py_NewRef((PyObject *)output_of) : ct_autograd_get_grad_fn(t);
    if (type != NULL && fn != NULL) {
        if (fn != Py_None) {
            const char *name = _PyType_Name(Py_TYPE(fn)), *cut = strstr(name, "Backward");
            snprintf(which, sizeof(which), ", which is output %d of %.*s,", output_of != NULL ? output_nr : t->output_nr,
                     (int)(cut != NULL ? cut - name : (ptrdiff_t)strlen(name)), name);
        }
        PyErr_Format(PyExc_RuntimeError,
                     "one of the variables needed for gradient computation has been modified by an inplace "
                     "operation: [%U %s]%s is at version %llu; expected version %llu instead. Hint: %s", type, shape,
                     which, (unsigned long long)t->storage->version, (unsigned long long)expected,
                     ct_anomaly_enabled ? "the backtrace further above shows the operation that failed to compute "
                                          "its gradient. The variable in question was changed in there or anywhere "
                                          "later. Good luck!"
                                        : "enable anomaly detection to find the operation that failed to compute its "
                                          "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).");
    }
    Py_XDECREF(type);
    Py_XDECREF(fn);
    return -1;
}

CtTensorObject *ct_node_tensor(CtNodeObject *node, int i)
{
    PyObject *a = node->args[i];
    if (a == NULL || !CtTensor_Check(a)) {
        if (node->released && node->meta != NULL && node->meta[i].is_tensor) {
            PyErr_SetString(PyExc_RuntimeError, freed_message);
        } else {
            PyErr_Format(PyExc_RuntimeError, "%s: argument %d is not a saved tensor", _PyType_Name(Py_TYPE(node)), i);
        }
        return NULL;
    }
    /* an unpack_hook's result is not the tensor that was saved: no version check (as PyTorch) */
    bool hooked = i < node->npacked && node->packed[i] != NULL;
    if (!hooked && check_version(CT_TENSOR(a), node->versions[i], NULL, 0) < 0) {
        return NULL;
    }
    return CT_TENSOR(a);
}

CtTensorObject *ct_node_output(CtNodeObject *node, int k)
{
    if (node->outputs == NULL) {
        PyErr_SetString(PyExc_RuntimeError, freed_message);
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(PyTuple_GET_ITEM(node->outputs, k));
    bool hooked = node->nargs + k < node->npacked && node->packed[node->nargs + k] != NULL;
    if (!hooked && check_version(t, node->versions[CT_MAX_FORMULA_ARGS], node, k) < 0) {
        return NULL;
    }
    return t;
}

/* Output k of node n for use in a formula, new reference. With create_graph (grad mode is on
 * while the engine runs) the alias's history is output k of n itself, as PyTorch saves outputs
 * with their grad_fn: a double backward then flows through n back to its inputs instead of
 * treating the output as a constant. Otherwise the detached alias. A saved output that already
 * has a history (set by CopySlices for the op it wraps) is used as it is. */
PyObject *ct_node_output_ref(CtNodeObject *n, int k)
{
    CtTensorObject *o = ct_node_output(n, k);
    if (o == NULL) {
        return NULL;
    }
    if (!ct_grad_enabled || !ct_is_floating(o->dtype) || o->grad_fn != NULL) {
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

/* --- saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks) --------------------------------------
 * While a (pack_hook, unpack_hook) pair is pushed, a recorded node hands each tensor it saves (its
 * tensor arguments and saved outputs) to the innermost pack_hook and keeps only the result. Its
 * backward first unpacks them (unpack_hook) into the usual slots, so every formula
 * reads them as before, and empties the slots again when it returns. Every packed tensor is kept as
 * (pack_hook's result, the tensor's grad edge node or None, its input_nr, its own unpack_hook or None
 * for the node's): outputs have no edge, and an own hook comes from SavedTensor.register_hooks. */
static PyObject *saved_hooks_stack;    /* list of (pack_hook, unpack_hook), innermost last */
static int edge_for(CtTensorObject *t, PyObject **node, int *input_nr);
static PyObject *saved_hooks_disabled; /* disable_saved_tensors_hooks' message (str) or NULL */

static PyObject *call_saved_hook(PyObject *hook, PyObject *arg)
{
    bool prev = ct_grad_enabled;
    ct_grad_enabled = false;
    PyObject *r = PyObject_CallOneArg(hook, arg);
    ct_grad_enabled = prev;
    return r;
}

/* Packs node n's saved tensors with the innermost hooks, if any. 0 or -1. */
static int pack_saved(CtNodeObject *n)
{
    Py_ssize_t depth = saved_hooks_stack != NULL ? PyList_GET_SIZE(saved_hooks_stack) : 0;
    if (depth == 0) {
        return 0;
    }
    PyObject *pair = PyList_GET_ITEM(saved_hooks_stack, depth - 1);
    PyObject *pack = PyTuple_GET_ITEM(pair, 0);
    Py_ssize_t nout = n->outputs != NULL ? PyTuple_GET_SIZE(n->outputs) : 0;
    n->npacked = n->nargs + (int)nout;
    n->packed = PyMem_Calloc(n->npacked > 0 ? n->npacked : 1, sizeof(PyObject *));
    if (n->packed == NULL) {
        n->npacked = 0;
        PyErr_NoMemory();
        return -1;
    }
    n->unpack_hook = Py_NewRef(PyTuple_GET_ITEM(pair, 1));
    for (int i = 0; i < n->nargs; i++) {
        if (n->args[i] != NULL && CtTensor_Check(n->args[i])) {
            PyObject *p = call_saved_hook(pack, n->args[i]), *edge = NULL;
            int nr = 0;
            if (p == NULL || edge_for(CT_TENSOR(n->args[i]), &edge, &nr) < 0) {
                Py_XDECREF(p);
                return -1;
            }
            n->packed[i] = Py_BuildValue("(OOiO)", p, edge != NULL ? edge : Py_None, nr, Py_None);
            Py_DECREF(p);
            Py_XDECREF(edge);
            if (n->packed[i] == NULL) {
                return -1;
            }
            Py_CLEAR(n->args[i]);
        }
    }
    if (nout == 0) {
        return 0;
    }
    PyObject *shell = PyTuple_New(nout); /* the outputs with the packed ones left out (None) */
    if (shell == NULL) {
        return -1;
    }
    for (Py_ssize_t j = 0; j < nout; j++) {
        PyObject *o = PyTuple_GET_ITEM(n->outputs, j);
        if (CtTensor_Check(o)) {
            PyObject *p = call_saved_hook(pack, o);
            n->packed[n->nargs + j] = p != NULL ? Py_BuildValue("(OOiO)", p, Py_None, 0, Py_None) : NULL;
            Py_XDECREF(p);
            if (n->packed[n->nargs + j] == NULL) {
                Py_DECREF(shell);
                return -1;
            }
            o = Py_None;
        }
        PyTuple_SET_ITEM(shell, j, Py_NewRef(o));
    }
    Py_SETREF(n->outputs, shell);
    return 0;
}

/* A packed entry's value through its unpack hook (its own, else the node's). New reference. */
static PyObject *unpack_one(CtNodeObject *n, PyObject *entry)
{
    PyObject *hook = PyTuple_GET_ITEM(entry, 3);
    /* in the backward's grad mode (create_graph), as PyTorch: what unpack_hook computes is differentiable */
    PyObject *t = PyObject_CallOneArg(hook != Py_None ? hook : n->unpack_hook, PyTuple_GET_ITEM(entry, 0));
    if (t != NULL && !CtTensor_Check(t)) {
        PyErr_Format(PyExc_TypeError,
                     "Output of saved tensor unpack_hook expected to be a Tensor but got result of type %s",
                     Py_TYPE(t)->tp_name);
        Py_CLEAR(t);
    }
    return t;
}

/* A packed argument, unpacked. Under create_graph (grad mode on) the value carries the saved tensor's
 * own history (its grad edge), not that of what unpack_hook computed, as PyTorch's saved variables. */
static PyObject *unpack_arg(CtNodeObject *n, PyObject *entry)
{
    PyObject *t = unpack_one(n, entry);
    PyObject *edge = PyTuple_GET_ITEM(entry, 1);
    if (t == NULL || !ct_grad_enabled || edge == Py_None) {
        return t;
    }
    CtTensorObject *o = CT_TENSOR(t);
    CtTensorObject *a = ct_view_of(o, o->ndim, o->sizes, o->strides, o->offset);
    Py_DECREF(t);
    if (a == NULL) {
        return NULL;
    }
    a->grad_fn = Py_NewRef(edge);
    a->output_nr = (int)PyLong_AsLong(PyTuple_GET_ITEM(entry, 2));
    a->requires_grad = true;
    return (PyObject *)a;
}

/* n's outputs tuple with each packed output j set to vals[j] (NULL: None). New reference. */
static PyObject *outputs_filled(CtNodeObject *n, PyObject *const *vals)
{
    Py_ssize_t nout = PyTuple_GET_SIZE(n->outputs);
    PyObject *t = PyTuple_New(nout);
    for (Py_ssize_t j = 0; t != NULL && j < nout; j++) {
        PyObject *o = PyTuple_GET_ITEM(n->outputs, j);
        if (n->packed[n->nargs + j] != NULL) {
            o = vals != NULL && vals[j] != NULL ? vals[j] : Py_None;
        }
        PyTuple_SET_ITEM(t, j, Py_NewRef(o));
    }
    return t;
}

/* Empties the slots unpack_saved filled (n and its inner node). */
static void repack_saved(CtNodeObject *n)
{
    if (n->inner != NULL) {
        repack_saved((CtNodeObject *)n->inner);
    }
    for (int i = 0; i < n->nargs && i < n->npacked; i++) {
        if (n->packed[i] != NULL) {
            Py_CLEAR(n->args[i]);
        }
    }
    if (n->npacked > n->nargs && n->outputs != NULL) {
        PyObject *shell = outputs_filled(n, NULL);
        if (shell == NULL) {
            PyErr_Clear(); /* out of memory: drop the outputs (the node reads as freed) */
            n->released = true;
        }
        Py_XSETREF(n->outputs, shell);
    }
}

/* Unpacks n's packed tensors (and its inner node's) into their slots for its backward; on failure
 * the caller still calls repack_saved. 0 or -1. */
static int unpack_saved(CtNodeObject *n)
{
    if (n->inner != NULL && unpack_saved((CtNodeObject *)n->inner) < 0) {
        return -1;
    }
    for (int i = 0; i < n->nargs && i < n->npacked; i++) {
        if (n->packed[i] != NULL && (n->args[i] = unpack_arg(n, n->packed[i])) == NULL) {
            return -1;
        }
    }
    Py_ssize_t nout = n->npacked - n->nargs;
    if (nout <= 0 || n->outputs == NULL) {
        return 0;
    }
    PyObject **vals = PyMem_Calloc(nout, sizeof(PyObject *));
    int rc = vals != NULL ? 0 : -1;
    for (Py_ssize_t j = 0; rc == 0 && j < nout; j++) {
        PyObject *p = n->packed[n->nargs + j];
        if (p != NULL && (vals[j] = unpack_one(n, p)) == NULL) {
            rc = -1;
        }
    }
    PyObject *full = rc == 0 ? outputs_filled(n, vals) : NULL;
    if (full != NULL) {
        Py_SETREF(n->outputs, full);
    } else {
        rc = -1;
    }
    for (Py_ssize_t j = 0; vals != NULL && j < nout; j++) {
        Py_XDECREF(vals[j]);
    }
    PyMem_Free(vals);
    return rc;
}

/* --- saved values by PyTorch's names (grad_fn._saved_self, _raw_saved_self) ------------------------------
 * A formula row's `saved` text names what PyTorch's node of that name saves (derivatives.yaml's names) and
 * where ctorch keeps it: segments "Name1,Name2: field=<kind><index>[/<cond>][?<default>] ..." separated by
 * ';' (a segment without names applies to every node name of the row). Kinds:
 *   t i  tensor argument i (a Python number as PyTorch's wrapped 0-d tensor)   T i  argument i transposed
 *   o k  output k (a new alias whose grad_fn is the node, as PyTorch's unpacked outputs)
 *   z i  argument i's sizes   Z i  its sizes reversed (T's)   n i  its numel   y i  its size 0
 *   a i  argument i as given   l i  as a tuple of ints   v i  arguments i.. (varargs sizes) as a tuple
 *   e i  a tuple of one int per spatial dim of argument 0 (its ndim - 2)   c  the default alone
 * /cond: None unless argument cond requires grad (PyTorch saves it only for that gradient); ?default: a
 * Python literal for an absent or None argument. Read only when a user asks, so parsed each time. */
typedef struct {
    const char *name; /* the field, name_len characters */
    size_t name_len;
    char kind;
    int index;        /* -1: none */
    int cond;         /* -1: always */
    const char *def;  /* default literal (def_len characters) or NULL */
    size_t def_len;
} CtSavedField;

typedef struct {
    const char *p; /* the rest of the spec, or NULL */
    bool skipping; /* inside a segment for other node names */
} CtSavedCursor;

/* Whether the segment header hdr (hdr_len characters: "Name1,Name2") lists node_name. */
static bool saved_segment_matches(const char *hdr, size_t hdr_len, const char *node_name)
{
    size_t len = strlen(node_name);
    for (const char *p = hdr, *end = hdr + hdr_len; p < end;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma != NULL ? comma : end;
        if ((size_t)(stop - p) == len && memcmp(p, node_name, len) == 0) {
            return true;
        }
        p = stop + 1;
    }
    return false;
}

/* The next field of the spec that applies to node_name; false at the end. */
static bool saved_field_next(CtSavedCursor *c, const char *node_name, CtSavedField *f)
{
    while (c->p != NULL && *c->p != '\0') {
        const char *tok = c->p;
        size_t len = strcspn(tok, " ;");
        bool segment_end = tok[len] == ';';
        c->p = tok + len + (tok[len] != '\0');
        if (len > 0 && tok[len - 1] == ':') {
            c->skipping = !saved_segment_matches(tok, len - 1, node_name);
            continue;
        }
        bool skip = c->skipping;
        c->skipping &= !segment_end;
        const char *eq = len > 0 ? memchr(tok, '=', len) : NULL;
        if (skip || eq == NULL || eq + 1 == tok + len) {
            continue;
        }
        const char *q = eq + 2, *end = tok + len;
        f->name = tok;
        f->name_len = (size_t)(eq - tok);
        f->kind = eq[1];
        f->index = q < end && *q >= '0' && *q <= '9' ? (int)strtol(q, (char **)&q, 10) : -1;
        f->cond = q < end && *q == '/' ? (int)strtol(q + 1, (char **)&q, 10) : -1;
        f->def = q < end && *q == '?' ? q + 1 : NULL;
        f->def_len = f->def != NULL ? (size_t)(end - f->def) : 0;
        return true;
    }
    return false;
}

static bool saved_kind_is_tensor(char kind) { return kind == 't' || kind == 'T' || kind == 'o'; }

/* The field of node n called name (without its "_saved_" prefix), or false. */
static bool saved_field_find(CtNodeObject *n, const char *name, CtSavedField *f)
{
    if (n->kind != CT_NODE_FORMULA || n->formula == NULL) {
        return false;
    }
    CtSavedCursor c = {n->formula->saved, false};
    size_t len = strlen(name);
    while (saved_field_next(&c, _PyType_Name(Py_TYPE(n)), f)) {
        if (f->name_len == len && memcmp(f->name, name, len) == 0) {
            return true;
        }
    }
    return false;
}

/* Whether argument i of n's call has a gradient edge (it required grad when recorded). */
static bool saved_arg_requires_grad(CtNodeObject *n, int i)
{
    const CtFormula *f = n->formula;
    if (!(f->diff & (1u << i))) {
        return false;
    }
    int e = 0;
    for (int k = 0; k < i; k++) {
        e += (f->diff >> k) & 1;
    }
    return e < n->num_edges && n->edge_nodes[e] != NULL;
}

static PyObject *saved_default(const CtSavedField *f)
{
    if (f->def == NULL) {
        Py_RETURN_NONE;
    }
    PyObject *text = PyUnicode_FromStringAndSize(f->def, (Py_ssize_t)f->def_len), *ast = NULL, *r = NULL;
    if (text != NULL && (ast = PyImport_ImportModule("ast")) != NULL) {
        r = ct_call_method(ast, "literal_eval", "O", text);
    }
    Py_XDECREF(text);
    Py_XDECREF(ast);
    return r;
}

/* An int or a sequence of ints as a tuple (an int repeated `repeat` times); other values as they are. */
static PyObject *saved_int_tuple(PyObject *v, Py_ssize_t repeat)
{
    if (PyLong_Check(v) && !PyBool_Check(v)) {
        PyObject *t = PyTuple_New(repeat);
        for (Py_ssize_t i = 0; t != NULL && i < repeat; i++) {
            PyTuple_SET_ITEM(t, i, Py_NewRef(v));
        }
        return t;
    }
    if (PyList_Check(v) || PyTuple_Check(v)) { /* a ctorch.Size or list: a plain tuple */
        return PySequence_Tuple(v);
    }
    return Py_NewRef(v);
}

static PyObject *saved_sizes(const CtTensorMeta *m, bool reversed)
{
    PyObject *t = PyTuple_New(m->ndim);
    for (int d = 0; t != NULL && d < m->ndim; d++) {
        PyObject *v = PyLong_FromLongLong(m->sizes[reversed ? m->ndim - 1 - d : d]);
        if (v == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, d, v);
    }
    return t;
}

/* Saved slot `slot` of n (argument slot, or output slot - nargs) as PyTorch unpacks it: through
 * its unpack hook when packed, the argument itself, a new alias of an output with the node as its
 * grad_fn. *absent: the slot holds no tensor (None or a number; *absent stays false when it was
 * freed: NULL with PyTorch's error). New reference. */
static PyObject *saved_tensor_slot(CtNodeObject *n, int slot, bool *absent)
{
    *absent = false;
    if (slot < n->npacked && n->packed[slot] != NULL) {
        return unpack_one(n, n->packed[slot]);
    }
    if (slot < n->nargs) {
        PyObject *a = n->args[slot];
        if (a != NULL && CtTensor_Check(a)) {
            CtTensorObject *t = ct_node_tensor(n, slot);
            return t != NULL ? Py_NewRef((PyObject *)t) : NULL;
        }
        if (n->released && n->meta != NULL && n->meta[slot].is_tensor) {
            PyErr_SetString(PyExc_RuntimeError, freed_message);
            return NULL;
        }
        *absent = true;
        return NULL;
    }
    Py_ssize_t k = slot - n->nargs;
    if (n->outputs != NULL && (k >= PyTuple_GET_SIZE(n->outputs) || !CtTensor_Check(PyTuple_GET_ITEM(n->outputs, k)))) {
        *absent = true; /* no such tensor output */
        return NULL;
    }
    CtTensorObject *o = ct_node_output(n, (int)k);
    if (o == NULL) {
        return NULL;
    }
    CtTensorObject *a = ct_view_of(o, o->ndim, o->sizes, o->strides, o->offset);
    if (a != NULL && ct_is_floating(o->dtype)) {
        a->grad_fn = Py_NewRef((PyObject *)n);
        a->output_nr = (int)k;
        a->requires_grad = true;
    }
    return (PyObject *)a;
}

/* A Python number as PyTorch's wrapped-number tensor (int64, float64 or bool, 0-d). */
static PyObject *saved_wrapped_number(PyObject *v)
{
    CtScalar s;
    if (!PyBool_Check(v) && !PyLong_Check(v) && !PyFloat_Check(v)) {
        return Py_NewRef(v);
    }
    if (ct_scalar_from_object(v, &s) < 0) {
        return NULL;
    }
    CtDType dt = s.kind == CT_KIND_FLOAT ? CT_F64 : s.kind == CT_KIND_INT ? CT_I64 : CT_BOOL;
    return (PyObject *)ct_scalar_tensor(&s, dt, ct_cpu());
}

/* The value of field f of node n. New reference. */
static PyObject *saved_value(CtNodeObject *n, const CtSavedField *f)
{
    if (f->cond >= 0 && !saved_arg_requires_grad(n, f->cond)) {
        Py_RETURN_NONE;
    }
    int i = f->index;
    if (f->kind == 'o') {
        bool absent;
        PyObject *t = saved_tensor_slot(n, n->nargs + i, &absent);
        return absent ? Py_NewRef(Py_None) : t;
    }
    bool given = i >= 0 && i < n->nargs;
    const CtTensorMeta *m = given && n->meta != NULL && n->meta[i].is_tensor ? &n->meta[i] : NULL;
    PyObject *a = given ? n->args[i] : NULL;
    switch (f->kind) {
    case 't':
    case 'T': {
        if (!given) {
            return saved_default(f);
        }
        bool absent;
        PyObject *t = saved_tensor_slot(n, i, &absent);
        if (absent) {
            return a != NULL && a != Py_None ? saved_wrapped_number(a) : saved_default(f);
        }
        if (t != NULL && f->kind == 'T') {
            Py_SETREF(t, ct_call_method(t, "t", NULL));
        }
        return t;
    }
    case 'z':
    case 'Z':
        return m != NULL ? saved_sizes(m, f->kind == 'Z') : saved_default(f);
    case 'n':
    case 'y': {
        if (m == NULL) {
            return saved_default(f);
        }
        int64_t numel = 1;
        for (int d = 0; d < m->ndim; d++) {
            numel *= m->sizes[d];
        }
        return PyLong_FromLongLong(f->kind == 'n' ? numel : m->ndim > 0 ? m->sizes[0] : 1);
    }
    case 'v': {
        if (!given) {
            return saved_default(f);
        }
        if (a != NULL && (PyList_Check(a) || PyTuple_Check(a))) {
            return PySequence_Tuple(a);
        }
        int k = i;
        while (k < n->nargs && n->args[k] != NULL) {
            k++;
        }
        PyObject *t = PyTuple_New(k - i);
        for (int j = i; t != NULL && j < k; j++) {
            PyTuple_SET_ITEM(t, j - i, Py_NewRef(n->args[j]));
        }
        return t;
    }
    default:
        break;
    }
    PyObject *v = a != NULL && a != Py_None ? Py_NewRef(a) : saved_default(f);
    if (v == NULL || f->kind == 'a' || f->kind == 'c') {
        return v;
    }
    Py_ssize_t spatial = n->meta != NULL && n->meta[0].ndim > 2 ? n->meta[0].ndim - 2 : 1;
    Py_SETREF(v, saved_int_tuple(v, f->kind == 'e' ? spatial : 1));
    return v;
}

/* --- SavedTensor: grad_fn._raw_saved_<name> (torch._C._autograd.SavedTensor) ------------------------------ */
typedef struct {
    PyObject_HEAD
    PyObject *node; /* the CtNodeObject */
    int slot;       /* argument slot, nargs + output index, or -1: a field PyTorch leaves None */
} CtSavedTensorObject;

static PyTypeObject *CtSavedTensor_Type;

/* register_hooks(pack_hook, unpack_hook): packs the saved tensor now and keeps only pack_hook's
 * result; the node's backward (and _saved_<name>) unpack it with unpack_hook. As PyTorch's
 * SavedVariable::register_hooks: one pair per tensor, never on a freed or absent one. */
static PyObject *saved_tensor_register_hooks(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    CtSavedTensorObject *st = (CtSavedTensorObject *)self;
    CtNodeObject *n = (CtNodeObject *)st->node;
    if (nargs != 2 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "register_hooks(): expected two callables (pack_hook, unpack_hook)");
        return NULL;
    }
    int slot = st->slot, nargs_node = n->nargs;
    if (slot >= 0 && slot < n->npacked && n->packed[slot] != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Calling register_hooks on a saved tensor whose hooks have already been "
                                            "set. Hint: only one pair of hooks is allowed at a time.");
        return NULL;
    }
    PyObject *t = NULL;
    if (slot >= 0 && slot < nargs_node) {
        t = n->args[slot];
    } else if (slot >= nargs_node && n->outputs != NULL && slot - nargs_node < PyTuple_GET_SIZE(n->outputs)) {
        t = PyTuple_GET_ITEM(n->outputs, slot - nargs_node);
    }
    if (t == NULL || !CtTensor_Check(t)) {
        bool freed = slot >= 0 && n->released && (slot >= nargs_node || (n->meta != NULL && n->meta[slot].is_tensor));
        PyErr_SetString(PyExc_RuntimeError,
                        freed ? "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
                                "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
                                "retain_graph=True if you need to backward through the graph a second time or if you "
                                "need to access saved variables after calling backward."
                              : "Calling register_hooks on a saved tensor with value None is forbidden");
        return NULL;
    }
    if (n->packed == NULL) {
        Py_ssize_t nout = n->outputs != NULL ? PyTuple_GET_SIZE(n->outputs) : 0;
        n->packed = PyMem_Calloc(nargs_node + nout > 0 ? nargs_node + nout : 1, sizeof(PyObject *));
        if (n->packed == NULL) {
            return PyErr_NoMemory();
        }
        n->npacked = nargs_node + (int)nout;
    }
    PyObject *edge = NULL, *p = NULL, *entry = NULL;
    int nr = 0;
    if (slot < nargs_node && edge_for(CT_TENSOR(t), &edge, &nr) < 0) {
        return NULL;
    }
    if ((p = call_saved_hook(args[0], t)) == NULL ||
        (entry = Py_BuildValue("(OOiO)", p, edge != NULL ? edge : Py_None, nr, args[1])) == NULL) {
        goto error;
    }
    n->packed[slot] = entry;
    entry = NULL;
    if (slot < nargs_node) {
        Py_CLEAR(n->args[slot]);
    } else {
        PyObject *shell = outputs_filled(n, NULL); /* the packed outputs left out */
        if (shell == NULL) {
            Py_CLEAR(n->packed[slot]);
            goto error;
        }
        Py_SETREF(n->outputs, shell);
    }
    Py_XDECREF(edge);
    Py_DECREF(p);
    Py_RETURN_NONE;
error:
    Py_XDECREF(edge);
    Py_XDECREF(p);
    return NULL;
}

static int saved_tensor_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(((CtSavedTensorObject *)self)->node);
    return 0;
}

static int saved_tensor_clear(PyObject *self)
{
    Py_CLEAR(((CtSavedTensorObject *)self)->node);
    return 0;
}

static void saved_tensor_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    saved_tensor_clear(self);
    PyObject_GC_Del(self);
    Py_DECREF(tp);
}

static PyMethodDef saved_tensor_methods[] = {
    {"register_hooks", (PyCFunction)(void (*)(void))saved_tensor_register_hooks, METH_FASTCALL,
     "register_hooks(pack_hook, unpack_hook): pack this saved tensor now, unpack it when used"},
    {NULL},
};

static PyType_Slot saved_tensor_slots[] = {
    {Py_tp_dealloc, saved_tensor_dealloc},
    {Py_tp_traverse, saved_tensor_traverse},
    {Py_tp_clear, saved_tensor_clear},
    {Py_tp_methods, saved_tensor_methods},
    {Py_tp_doc, "A tensor saved by an autograd node (grad_fn._raw_saved_<name>)."},
    {0, NULL},
};

static PyType_Spec saved_tensor_spec = {"ctorch._C._autograd.SavedTensor", sizeof(CtSavedTensorObject), 0,
                                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, saved_tensor_slots};

/* grad_fn._saved_<name> / _raw_saved_<name> of n: a new reference, or NULL with an error, or
 * NULL without one when n has no such field. */
static PyObject *saved_attribute(CtNodeObject *n, const char *attr)
{
    bool raw = strncmp(attr, "_raw_saved_", 11) == 0;
    CtSavedField f;
    if (!saved_field_find(n, attr + (raw ? 11 : 7), &f) || (raw && !saved_kind_is_tensor(f.kind))) {
        return NULL;
    }
    if (!raw) {
        return saved_value(n, &f);
    }
    CtSavedTensorObject *st = PyObject_GC_New(CtSavedTensorObject, CtSavedTensor_Type);
    if (st == NULL) {
        return NULL;
    }
    st->node = Py_NewRef((PyObject *)n);
    bool none = f.cond >= 0 && !saved_arg_requires_grad(n, f.cond); /* PyTorch saved nothing there */
    st->slot = none ? -1 : f.kind == 'o' ? n->nargs + f.index : f.index;
    PyObject_GC_Track(st);
    return (PyObject *)st;
}

static PyObject *node_getattro(PyObject *self, PyObject *name)
{
    const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (s != NULL && (strncmp(s, "_saved_", 7) == 0 || strncmp(s, "_raw_saved_", 11) == 0)) {
        PyObject *r = saved_attribute((CtNodeObject *)self, s);
        if (r != NULL || PyErr_Occurred()) {
            return r;
        }
    }
    return PyObject_GenericGetAttr(self, name);
}

/* dir(grad_fn): object's names and the node's saved fields. */
static PyObject *node_dir(PyObject *self, PyObject *unused)
{
    CtNodeObject *n = (CtNodeObject *)self;
    PyObject *base_dir = PyObject_GetAttrString((PyObject *)&PyBaseObject_Type, "__dir__");
    PyObject *names = base_dir != NULL ? PyObject_CallOneArg(base_dir, self) : NULL;
    Py_XDECREF(base_dir);
    if (names == NULL || n->kind != CT_NODE_FORMULA || n->formula == NULL) {
        return names;
    }
    CtSavedCursor c = {n->formula->saved, false};
    CtSavedField f;
    while (saved_field_next(&c, _PyType_Name(Py_TYPE(n)), &f)) {
        for (int raw = 0; raw <= saved_kind_is_tensor(f.kind); raw++) {
            char attr[128];
            snprintf(attr, sizeof(attr), "%s%.*s", raw ? "_raw_saved_" : "_saved_", (int)f.name_len, f.name);
            PyObject *s = PyUnicode_FromString(attr);
            if (s == NULL || PyList_Append(names, s) < 0) {
                Py_XDECREF(s);
                Py_DECREF(names);
                return NULL;
            }
            Py_DECREF(s);
        }
    }
    return names;
}

/* _push_saved_tensors_default_hooks(pack_hook, unpack_hook) */
static PyObject *py_push_saved_hooks(PyObject *self, PyObject *args)
{
    PyObject *pack, *unpack;
    if (!PyArg_ParseTuple(args, "OO:_push_saved_tensors_default_hooks", &pack, &unpack)) {
        return NULL;
    }
    if (saved_hooks_disabled != NULL) {
        PyErr_SetObject(PyExc_RuntimeError, saved_hooks_disabled);
        return NULL;
    }
    if (saved_hooks_stack == NULL && (saved_hooks_stack = PyList_New(0)) == NULL) {
        return NULL;
    }
    PyObject *pair = PyTuple_Pack(2, pack, unpack);
    if (pair == NULL || PyList_Append(saved_hooks_stack, pair) < 0) {
        Py_XDECREF(pair);
        return NULL;
    }
    Py_DECREF(pair);
    Py_RETURN_NONE;
}

static PyObject *py_pop_saved_hooks(PyObject *self, PyObject *unused)
{
    Py_ssize_t depth = saved_hooks_stack != NULL ? PyList_GET_SIZE(saved_hooks_stack) : 0;
    if (depth == 0) {
        PyErr_SetString(PyExc_RuntimeError, "no saved tensors hooks to pop");
        return NULL;
    }
    if (PyList_SetSlice(saved_hooks_stack, depth - 1, depth, NULL) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* _saved_tensors_hooks_disable(message): later pushes raise RuntimeError(message); so does this
 * call while hooks are pushed (PyTorch's rule), leaving the state as it was. */
static PyObject *py_saved_hooks_disable(PyObject *self, PyObject *message)
{
    if (!PyUnicode_Check(message)) {
        PyErr_Format(PyExc_TypeError, "_saved_tensors_hooks_disable(): argument 'error_message' must be str, not %s",
                     Py_TYPE(message)->tp_name);
        return NULL;
    }
    if (saved_hooks_stack != NULL && PyList_GET_SIZE(saved_hooks_stack) > 0) {
        PyErr_SetObject(PyExc_RuntimeError, message);
        return NULL;
    }
    Py_XSETREF(saved_hooks_disabled, Py_NewRef(message));
    Py_RETURN_NONE;
}

/* _saved_tensors_hooks_set_disabled(message or None): restores a previous state */
static PyObject *py_saved_hooks_set_disabled(PyObject *self, PyObject *message)
{
    Py_XSETREF(saved_hooks_disabled, message == Py_None ? NULL : Py_NewRef(message));
    Py_RETURN_NONE;
}

/* _saved_tensors_hooks_current(): the innermost (pack_hook, unpack_hook), or None */
static PyObject *py_saved_hooks_current(PyObject *self, PyObject *unused)
{
    Py_ssize_t depth = saved_hooks_stack != NULL ? PyList_GET_SIZE(saved_hooks_stack) : 0;
    return Py_NewRef(depth > 0 ? PyList_GET_ITEM(saved_hooks_stack, depth - 1) : Py_None);
}

static PyObject *py_saved_hooks_disabled_message(PyObject *self, PyObject *unused)
{
    return Py_NewRef(saved_hooks_disabled != NULL ? saved_hooks_disabled : Py_None);
}

/* _increment_version(tensor): bumps the in-place modification counter */
static PyObject *py_increment_version(PyObject *self, PyObject *t)
{
    if (!CtTensor_Check(t)) {
        PyErr_Format(PyExc_TypeError, "increment_version(): argument 'tensor' must be Tensor, not %s",
                     Py_TYPE(t)->tp_name);
        return NULL;
    }
    CT_TENSOR(t)->storage->version++;
    Py_RETURN_NONE;
}

/* --- calling ops ---------------------------------------------------------------------------------------- */
static PyObject *module_dict; /* borrowed: ctorch._C's dict */

/* Interned names keyed by the C string's address (callers pass literals), checked with strcmp so
 * that a reused buffer holding another name misses. Under the GIL. */
#define CT_NAME_SLOTS 512
static struct {
    const char *key;
    PyObject *name; /* owned, interned */
} name_cache[CT_NAME_SLOTS];

PyObject *ct_name(const char *s)
{
    size_t slot = ((uintptr_t)s >> 3) % CT_NAME_SLOTS;
    if (name_cache[slot].key == s && strcmp(PyUnicode_AsUTF8(name_cache[slot].name), s) == 0) {
        return name_cache[slot].name;
    }
    PyObject *name = PyUnicode_InternFromString(s);
    if (name == NULL) {
        return NULL;
    }
    Py_XSETREF(name_cache[slot].name, name);
    name_cache[slot].key = s;
    return name;
}

PyObject *ct_call_method(PyObject *obj, const char *name, const char *format, ...)
{
    /* owned for the call: a nested call may evict the cache's slot */
    PyObject *pyname = Py_XNewRef(ct_name(name));
    if (pyname == NULL) {
        return NULL;
    }
    if (format == NULL || *format == '\0') {
        PyObject *r = PyObject_VectorcallMethod(pyname, &obj, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        Py_DECREF(pyname);
        return r;
    }
    va_list va;
    va_start(va, format);
    PyObject *built = Py_VaBuildValue(format, va);
    va_end(va);
    if (built == NULL) {
        Py_DECREF(pyname);
        return NULL;
    }
    /* PyObject_CallMethod's rule: a tuple is the argument list, anything else the one argument */
    PyObject *r;
    Py_ssize_t n = PyTuple_Check(built) ? PyTuple_GET_SIZE(built) : 1;
    if (n < 8) {
        PyObject *stack[8] = {obj};
        for (Py_ssize_t i = 0; i < n; i++) {
            stack[i + 1] = PyTuple_Check(built) ? PyTuple_GET_ITEM(built, i) : built;
        }
        r = PyObject_VectorcallMethod(pyname, stack, (size_t)(n + 1), NULL);
    } else {
        PyObject *method = PyObject_GetAttr(obj, pyname);
        r = method != NULL ? PyObject_Call(method, built, NULL) : NULL;
        Py_XDECREF(method);
    }
    Py_DECREF(built);
    Py_DECREF(pyname);
    return r;
}

PyObject *ct_op(const char *name, PyObject *const *args, size_t nargs, PyObject *kwnames)
{
    PyObject *key = ct_name(name);
    PyObject *fn = key != NULL ? PyDict_GetItemWithError(module_dict, key) : NULL; /* borrowed */
    if (fn == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_NotImplementedError, "ctorch: op '%s' is not available", name);
        }
        return NULL;
    }
    return PyObject_Vectorcall(fn, args, nargs, kwnames);
}

PyObject *ct_sum_to(PyObject *grad, int ndim, const int64_t *sizes)
{
    CtTensorObject *g = CT_TENSOR(grad);
    if (g->ndim == ndim && memcmp(g->sizes, sizes, sizeof(int64_t) * ndim) == 0) {
        return Py_NewRef(grad);
    }
    /* Sum the leading dims added by broadcasting and the dims that were 1. */
    int lead = g->ndim - ndim;
    PyObject *dims = PyList_New(0);
    if (dims == NULL) {
        return NULL;
    }
    for (int i = 0; i < g->ndim; i++) {
        bool reduce = i < lead || (sizes[i - lead] == 1 && g->sizes[i] != 1);
        if (reduce) {
            PyObject *d = PyLong_FromLong(i);
            if (d == NULL || PyList_Append(dims, d) < 0) {
                Py_XDECREF(d);
                Py_DECREF(dims);
                return NULL;
            }
            Py_DECREF(d);
        }
    }
    PyObject *summed;
    if (PyList_GET_SIZE(dims) > 0) {
        PyObject *tuple = PyList_AsTuple(dims);
        PyObject *kw = Py_BuildValue("(s)", "keepdim");
        PyObject *args[3] = {grad, tuple, Py_True};
        summed = tuple && kw ? ct_op("sum", args, 2, kw) : NULL;
        Py_XDECREF(tuple);
        Py_XDECREF(kw);
    } else {
        summed = Py_NewRef(grad);
    }
    Py_DECREF(dims);
    if (summed == NULL) {
        return NULL;
    }
    PyObject *shape = ct_size_object(ndim, sizes);
    if (shape == NULL) {
        Py_DECREF(summed);
        return NULL;
    }
    PyObject *r = ct_call_method(summed, "reshape", "(O)", shape);
    Py_DECREF(shape);
    Py_DECREF(summed);
    return r;
}

PyObject *ct_fit_grad(PyObject *grad, const CtTensorMeta *m)
{
    PyObject *g = ct_sum_to(grad, m->ndim, m->sizes);
    if (g == NULL) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(g);
    CtDevice have = ct_device_of(t);
    if (t->dtype == m->dtype && have.type == m->device.type && have.index == m->device.index) {
        return g;
    }
    PyObject *dev = ct_device_object(m->device);
    PyObject *r = dev ? ct_call_method(g, "to", "(OO)", dev, ct_dtype_object(m->dtype)) : NULL;
    Py_XDECREF(dev);
    Py_DECREF(g);
    return r;
}

/* --- recording ----------------------------------------------------------------------------------------------- */
static PyObject *accumulator_for(CtTensorObject *leaf)
{
    if (leaf->grad_accumulator != NULL) {
        PyObject *n = PyWeakref_GetObject(leaf->grad_accumulator);
        if (n != Py_None) {
            return Py_NewRef(n);
        }
        Py_CLEAR(leaf->grad_accumulator);
    }
    CtNodeObject *n = node_new("AccumulateGrad", CT_NODE_ACCUMULATE, 0, 1);
    if (n == NULL) {
        return NULL;
    }
    n->variable = Py_NewRef(leaf);
    leaf->grad_accumulator = PyWeakref_NewRef((PyObject *)n, NULL);
    if (leaf->grad_accumulator == NULL) {
        Py_DECREF(n);
        return NULL;
    }
    return (PyObject *)n;
}

/* The edge that gradients for t flow along: (t.grad_fn, t.output_nr) or its accumulator. */
static int edge_for(CtTensorObject *t, PyObject **node, int *input_nr)
{
    *node = NULL;
    *input_nr = 0;
    if (ct_autograd_refresh_view(t) < 0) {
        return -1;
    }
    if (!tensor_requires_grad(t)) {
        return 0;
    }
    if (t->grad_fn != NULL) {
        *node = Py_NewRef(t->grad_fn);
        *input_nr = t->output_nr;
        return 0;
    }
    *node = accumulator_for(t);
    return *node == NULL ? -1 : 0;
}

/* --- views and in-place writes ------------------------------------------------------------------------- */
/* A differentiable view keeps a link to its base (view_base, always the root: never itself a view)
 * and the storage version at which its grad_fn was set. An in-place op on a view rewrites the
 * base's history: the base gets a CopySlices node that applies the op's backward to the view's
 * region of the base's gradient, and the view gets an AsStridedBackward0 node reading that region
 * from the base. Other views of the same base notice the version change and regenerate their
 * grad_fn the same way the first time autograd looks at them (ct_autograd_refresh_view). */
typedef struct CtViewGeometry {
    int base_ndim, ndim;
    int64_t offset; /* of the view's first element, relative to the base's */
    int64_t base_sizes[CT_MAX_DIMS], base_strides[CT_MAX_DIMS];
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
} CtViewGeometry;

static CtViewGeometry *geometry_of(const CtTensorObject *view, const CtTensorObject *base)
{
    CtViewGeometry *g = PyMem_Malloc(sizeof(CtViewGeometry));
    if (g == NULL) {
        return (CtViewGeometry *)PyErr_NoMemory();
    }
    g->base_ndim = base->ndim;
    g->ndim = view->ndim;
    g->offset = view->offset - base->offset;
    memcpy(g->base_sizes, base->sizes, sizeof(int64_t) * base->ndim);
    memcpy(g->base_strides, base->strides, sizeof(int64_t) * base->ndim);
    memcpy(g->sizes, view->sizes, sizeof(int64_t) * view->ndim);
    memcpy(g->strides, view->strides, sizeof(int64_t) * view->ndim);
    return g;
}

/* A fresh buffer laid out like the base (same sizes and strides), holding `fill` (broadcast) or
 * zeros, and *region: the view's elements within it. New references. */
static CtTensorObject *base_buffer(const CtViewGeometry *g, CtDType dtype, CtDevice device, CtTensorObject *fill,
                                   CtTensorObject **region)
{
    int64_t span = 1;
    for (int i = 0; i < g->base_ndim; i++) {
        if (g->base_sizes[i] == 0) {
            span = 0;
            break;
        }
        span += (g->base_sizes[i] - 1) * g->base_strides[i];
    }
    CtTensorObject *flat = ct_empty(1, &span, dtype, device), *buffer = NULL;
    *region = NULL;
    if (flat == NULL) {
        return NULL;
    }
    if (fill == NULL && ct_zero_(flat) < 0) {
        goto done;
    }
    buffer = ct_view_of(flat, g->base_ndim, g->base_sizes, g->base_strides, flat->offset);
    if (buffer == NULL || (fill != NULL && ct_copy_(buffer, fill) < 0)) {
        Py_CLEAR(buffer);
        goto done;
    }
    *region = ct_view_of(flat, g->ndim, g->sizes, g->strides, flat->offset + g->offset);
    if (*region == NULL) {
        Py_CLEAR(buffer);
    }
done:
    Py_DECREF(flat);
    return buffer;
}

static void set_view_link(PyObject *out, CtTensorObject *self);

/* Calls t.name(*args) through the (autograd-wrapped) method, so that with grad mode on the op is
 * recorded; steals nothing, returns 0 or -1. */
static int call_recorded(CtTensorObject *t, const char *name, PyObject *arg)
{
    PyObject *r = arg != NULL ? ct_call_method((PyObject *)t, name, "(O)", arg)
                              : ct_call_method((PyObject *)t, name, NULL);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* AsStridedBackward0: the view's gradient, placed in a zero gradient of the base. With
 * create_graph=True (grad mode on while the engine runs) the placement is an in-place copy_
 * into a differentiable view of the buffer, recorded like any other (the buffer gets a
 * CopySlices node), so that it can be differentiated again. */
static int view_node_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtTensorObject *grad = CT_TENSOR(g[0]), *region = NULL;
    CtTensorObject *buffer = base_buffer(n->geometry, grad->dtype, ct_device_of(grad), NULL, &region);
    if (buffer == NULL) {
        return -1;
    }
    int rc;
    if (ct_grad_enabled) {
        set_view_link((PyObject *)region, buffer);
        rc = call_recorded(region, "copy_", g[0]);
    } else {
        rc = ct_copy_(region, grad);
    }
    Py_DECREF(region);
    if (rc < 0) {
        Py_DECREF(buffer);
        return -1;
    }
    gi[0] = (PyObject *)buffer;
    return 0;
}

/* For a double backward through CopySlices n: the inner op's saved outputs (the view's new
 * values) as aliases whose history is n itself seen through the view (an AsStridedBackward0
 * node with an edge to n), which is what they are; the formulas' out_ref keeps a history it
 * finds instead of pointing the alias at the inner node, whose edge stands for the whole base.
 * A new tuple, or NULL. */
static PyObject *outputs_through_view(CtNodeObject *n, CtNodeObject *op)
{
    Py_ssize_t k = PyTuple_GET_SIZE(op->outputs);
    PyObject *tuple = PyTuple_New(k);
    for (Py_ssize_t j = 0; tuple != NULL && j < k; j++) {
        CtTensorObject *o = CT_TENSOR(PyTuple_GET_ITEM(op->outputs, j));
        CtTensorObject *a = ct_view_of(o, o->ndim, o->sizes, o->strides, o->offset);
        CtNodeObject *v = a != NULL ? node_new("AsStridedBackward0", CT_NODE_VIEW, 1, 1) : NULL;
        if (v != NULL && (v->geometry = PyMem_Malloc(sizeof(CtViewGeometry))) == NULL) {
            PyErr_NoMemory();
            Py_CLEAR(v);
        }
        if (v == NULL) {
            Py_XDECREF(a);
            Py_CLEAR(tuple);
            break;
        }
        memcpy(v->geometry, n->geometry, sizeof(CtViewGeometry));
        v->edge_nodes[0] = Py_NewRef((PyObject *)n);
        v->edge_input_nr[0] = 0;
        a->grad_fn = (PyObject *)v; /* takes v's reference */
        a->output_nr = 0;
        a->requires_grad = true;
        PyTuple_SET_ITEM(tuple, j, (PyObject *)a);
    }
    return tuple;
}

/* CopySlices: the base's gradient outside the view passes through; inside, the in-place op's
 * backward (n->inner) maps it to the gradient of the view's old values and of the op's other
 * inputs. With create_graph=True every step is a recorded op: the buffer is copy_'d from the
 * gradient, the region is a differentiable view of it, the inner formula runs with grad mode
 * on (it is written with ctorch ops), and its result is copy_'d back through the view. */
static int copyslices_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtNodeObject *op = (CtNodeObject *)n->inner;
    CtTensorObject *grad = CT_TENSOR(g[0]), *region = NULL, *buffer = NULL;
    PyObject *slice = NULL, **sub = NULL, *saved_outputs = NULL;
    bool graph = ct_grad_enabled;
    int rc = -1;
    if (op->formula->flags & CT_F_NO_DERIV) {
        PyErr_Format(PyExc_NotImplementedError, "derivative for aten::%s is not implemented", op->formula->op);
        return -1;
    }
    buffer = base_buffer(n->geometry, grad->dtype, ct_device_of(grad), graph ? NULL : grad, &region);
    sub = PyMem_Calloc(op->num_edges > 0 ? op->num_edges : 1, sizeof(PyObject *));
    if (buffer == NULL || sub == NULL || unpack_saved(op) < 0) {
        goto done;
    }
    if (graph) {
        if (call_recorded(buffer, "copy_", g[0]) < 0) {
            goto done;
        }
        set_view_link((PyObject *)region, buffer); /* after the copy_: the view sees the buffer's new history */
        slice = ct_call_method((PyObject *)region, "clone", NULL);
        if (op->outputs != NULL) {
            PyObject *through = outputs_through_view(n, op);
            if (through == NULL) {
                goto done;
            }
            saved_outputs = op->outputs; /* put back below */
            op->outputs = through;
        }
    } else {
        slice = (PyObject *)ct_to(region, region->dtype, ct_device_of(region), true); /* region is overwritten below */
    }
    if (slice == NULL || op->formula->backward(op, &slice, sub) < 0) {
        goto done;
    }
    if (graph ? call_recorded(region, sub[0] != NULL ? "copy_" : "zero_", sub[0]) < 0
              : (sub[0] != NULL ? ct_copy_(region, CT_TENSOR(sub[0])) < 0 : ct_zero_(region) < 0)) {
        goto done;
    }
    gi[0] = n->edge_nodes[0] != NULL ? Py_NewRef(buffer) : NULL;
    for (int e = 1; e < op->num_edges; e++) {
        gi[e] = sub[e];
        sub[e] = NULL;
    }
    rc = 0;
done:
    for (int e = 0; sub != NULL && e < op->num_edges; e++) {
        Py_XDECREF(sub[e]);
    }
    PyMem_Free(sub);
    if (saved_outputs != NULL) {
        Py_XSETREF(op->outputs, saved_outputs);
    }
    repack_saved(op);
    Py_XDECREF(slice);
    Py_XDECREF(region);
    Py_XDECREF(buffer);
    return rc;
}

/* An AsStridedBackward0 node for view t of base, with an edge to the base's history. */
static CtNodeObject *view_node_new(CtTensorObject *t, CtTensorObject *base)
{
    CtNodeObject *n = node_new("AsStridedBackward0", CT_NODE_VIEW, 1, 1);
    if (n == NULL) {
        return NULL;
    }
    if ((n->geometry = geometry_of(t, base)) == NULL || edge_for(base, &n->edge_nodes[0], &n->edge_input_nr[0]) < 0) {
        Py_DECREF(n);
        return NULL;
    }
    return n;
}

int ct_autograd_refresh_view(CtTensorObject *t)
{
    if (t->view_base == NULL || t->view_no_grad) {
        return 0;
    }
    CtTensorObject *base = CT_TENSOR(t->view_base);
    bool base_requires_grad = tensor_requires_grad(base);
    if (t->view_version == t->storage->version && (t->grad_fn != NULL || !base_requires_grad)) {
        return 0;
    }
    if (base_requires_grad) {
        CtNodeObject *n = view_node_new(t, base);
        if (n == NULL) {
            return -1;
        }
        Py_XSETREF(t->grad_fn, (PyObject *)n);
        t->output_nr = 0;
    }
    t->view_version = t->storage->version;
    return 0;
}

/* Links out (a result of a view op on self) to self's base, when it shares self's storage.
 * A view made in no_grad mode is linked only so that an in-place write into it that autograd
 * would have to record can be refused, as PyTorch does. */
static void set_view_link(PyObject *out, CtTensorObject *self)
{
    if (!CtTensor_Check(out) || (CtTensorObject *)out == self || CT_TENSOR(out)->storage != self->storage) {
        return;
    }
    CtTensorObject *t = CT_TENSOR(out);
    PyObject *root = self->view_base != NULL ? self->view_base : (PyObject *)self;
    Py_XSETREF(t->view_base, Py_NewRef(root));
    t->view_version = t->storage->version;
    t->view_no_grad = !ct_grad_enabled || self->view_no_grad;
}

static void set_view_links(PyObject *out, CtTensorObject *self)
{
    if (PyTuple_Check(out)) {
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(out); j++) {
            set_view_link(PyTuple_GET_ITEM(out, j), self);
        }
    } else {
        set_view_link(out, self);
    }
}

/* The checks PyTorch makes before recording an in-place write into self; *base: self's base
 * when self is a differentiable view. */
static int check_inplace_target(CtTensorObject *self, CtTensorObject **base)
{
    *base = self->view_base != NULL ? CT_TENSOR(self->view_base) : NULL;
    if (self->grad_fn == NULL && self->requires_grad) {
        PyErr_SetString(PyExc_RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation.");
        return -1;
    }
    if (*base != NULL && self->view_no_grad) {
        PyErr_SetString(PyExc_RuntimeError,
                        "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given "
                        "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
                        "moving both the view and the inplace either both inside the no_grad block (if you don't want "
                        "the inplace to be tracked) or both outside (if you want the inplace to be tracked).");
        return -1;
    }
    if (*base != NULL && (*base)->grad_fn == NULL && (*base)->requires_grad) {
        PyErr_SetString(PyExc_RuntimeError,
                        "a view of a leaf Variable that requires grad is being used in an in-place operation.");
        return -1;
    }
    if (ct_check_no_internal_overlap(self) < 0) {
        return -1;
    }
    return 0;
}

/* After node (the in-place op) was recorded as self's history: when self is a view, move the
 * write into its base's history (CopySlices) and give self an AsStridedBackward0 node. */
static int rebase_history(CtTensorObject *self, CtTensorObject *base, CtNodeObject *node)
{
    if (base == NULL) {
        self->view_version = self->storage->version;
        return 0;
    }
    if (!ct_is_floating(base->dtype)) {
        return 0;
    }
    CtNodeObject *c = node_new("CopySlices", CT_NODE_COPYSLICES, node->num_edges, 1);
    if (c == NULL) {
        return -1;
    }
    c->inner = Py_NewRef(node);
    if ((c->geometry = geometry_of(self, base)) == NULL ||
        edge_for(base, &c->edge_nodes[0], &c->edge_input_nr[0]) < 0) {
        Py_DECREF(c);
        return -1;
    }
    /* the op's own first edge now stands for "the base wants a gradient" */
    Py_XSETREF(node->edge_nodes[0], Py_XNewRef(c->edge_nodes[0]));
    node->edge_input_nr[0] = c->edge_input_nr[0];
    for (int e = 1; e < node->num_edges; e++) {
        c->edge_nodes[e] = Py_XNewRef(node->edge_nodes[e]);
        c->edge_input_nr[e] = node->edge_input_nr[e];
    }
    Py_XSETREF(base->grad_fn, (PyObject *)c);
    base->output_nr = 0;
    CtNodeObject *v = view_node_new(self, base);
    if (v == NULL) {
        return -1;
    }
    Py_XSETREF(self->grad_fn, (PyObject *)v);
    self->output_nr = 0;
    self->view_version = self->storage->version;
    return 0;
}

/* Number of edges for the differentiable arguments; -1 if a list input is not a sequence. */
static Py_ssize_t count_edges(const CtFormula *f, PyObject *const *norm, bool *needed)
{
    Py_ssize_t n = 0;
    *needed = false;
    for (int i = 0; f->sig[i] != NULL; i++) {
        if (!(f->diff & (1u << i))) {
            continue;
        }
        PyObject *a = norm[i];
        if (i == 0 && (f->flags & CT_F_LIST_INPUT)) {
            if (a == NULL || !(PyList_Check(a) || PyTuple_Check(a))) {
                return -1;
            }
            Py_ssize_t m = PySequence_Fast_GET_SIZE(a);
            for (Py_ssize_t k = 0; k < m; k++) {
                PyObject *e = PySequence_Fast_GET_ITEM(a, k);
                if (CtTensor_Check(e) && tensor_requires_grad(CT_TENSOR(e))) {
                    *needed = true;
                }
            }
            n += m;
            continue;
        }
        if (a != NULL && CtTensor_Check(a) && tensor_requires_grad(CT_TENSOR(a))) {
            *needed = true;
        }
        n++;
    }
    return n;
}

typedef PyObject *(*CtThunk)(void *ctx);

static int set_output_history(CtNodeObject *node, PyObject *out, int index, CtTensorObject *view_of)
{
    if (!CtTensor_Check(out)) {
        return 0;
    }
    CtTensorObject *t = CT_TENSOR(out);
    if (!ct_is_floating(t->dtype)) {
        return 0;
    }
    Py_XSETREF(t->grad_fn, Py_NewRef(node));
    t->output_nr = index;
    t->requires_grad = true;
    if (view_of != NULL) {
        set_view_link(out, view_of);
    }
    return 0;
}

static PyObject *detached_alias(PyObject *o)
{
    CtTensorObject *t = CT_TENSOR(o);
    return (PyObject *)ct_view_of(t, t->ndim, t->sizes, t->strides, t->offset);
}

/* Saves the normalised arguments (and shapes of tensor arguments) of a recorded call. For an
 * in-place op, argument 0 is self_before (a copy of self's old values) or a detached alias. */
static int save_arguments(CtNodeObject *node, const CtFormula *f, PyObject *const *norm, int n, PyObject *self_before,
                          const uint64_t *versions_before)
{
    node->nargs = n;
    /* Not calloc: zeroing every entry's sizes costs more than the rest of recording. Each entry's
     * fields but sizes (read only up to a tensor's ndim) start zero. */
    node->meta = PyMem_Malloc(CT_MAX_FORMULA_ARGS * sizeof(CtTensorMeta));
    if (node->meta == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < CT_MAX_FORMULA_ARGS; i++) {
        memset(&node->meta[i], 0, offsetof(CtTensorMeta, sizes));
    }
    for (int i = 0; i < n; i++) {
        PyObject *a = norm[i];
        if (a == NULL) {
            continue;
        }
        if (!CtTensor_Check(a)) {
            node->args[i] = Py_NewRef(a);
            continue;
        }
        CtTensorObject *t = CT_TENSOR(a);
        CtTensorMeta *m = &node->meta[i];
        m->is_tensor = true;
        m->ndim = t->ndim;
        m->dtype = t->dtype;
        m->device = ct_device_of(t);
        memcpy(m->sizes, t->sizes, sizeof(int64_t) * t->ndim);
        bool inplace_self = i == 0 && (f->flags & CT_F_INPLACE);
        if (inplace_self && self_before != NULL) {
            node->args[i] = Py_NewRef(self_before);
        } else {
            /* in-place: self is the output; keep an alias so the node does not own its output */
            node->args[i] = inplace_self ? detached_alias(a) : Py_NewRef(a);
        }
        if (node->args[i] == NULL) {
            return -1;
        }
        /* the version the op read: an argument aliasing an in-place op's self is seen as modified */
        node->versions[i] = inplace_self ? CT_TENSOR(node->args[i])->storage->version : versions_before[i];
    }
    return 0;
}

/* Gives out (one tensor or a tuple of them) node as history; saves aliases of the outputs when
 * the formula needs them. An in-place op's output is self (x[k] = v returns None). */
static int set_outputs(CtNodeObject *node, const CtFormula *f, PyObject *out, CtTensorObject *self)
{
    CtTensorObject *view_of = (f->flags & CT_F_VIEW) ? self : NULL;
    PyObject *target = (f->flags & CT_F_INPLACE) && self != NULL ? (PyObject *)self : out;
    if (CtTensor_Check(target)) {
        if ((f->flags & CT_F_SAVE_OUT)) {
            PyObject *alias = detached_alias(target);
            if (alias == NULL || (node->outputs = PyTuple_Pack(1, alias)) == NULL) {
                Py_XDECREF(alias);
                return -1;
            }
            Py_DECREF(alias);
            node->versions[CT_MAX_FORMULA_ARGS] = CT_TENSOR(target)->storage->version;
        }
        return set_output_history(node, target, 0, view_of);
    }
    if (!PyTuple_Check(out)) {
        return 0;
    }
    Py_ssize_t k = PyTuple_GET_SIZE(out);
    node->num_outputs = (int)k;
    if (f->flags & CT_F_SAVE_OUT) {
        node->outputs = PyTuple_New(k);
        if (node->outputs == NULL) {
            return -1;
        }
        for (Py_ssize_t j = 0; j < k; j++) {
            PyObject *o = PyTuple_GET_ITEM(out, j);
            PyObject *alias = CtTensor_Check(o) ? detached_alias(o) : Py_NewRef(o);
            if (alias == NULL) {
                return -1;
            }
            PyTuple_SET_ITEM(node->outputs, j, alias);
        }
    }
    for (Py_ssize_t j = 0; j < k; j++) {
        set_output_history(node, PyTuple_GET_ITEM(out, j), (int)j, view_of);
    }
    return 0;
}

/* Calls visit(t, ctx) for each tensor among args[0..n) (NULL entries skipped) and inside list or
 * tuple arguments; stops at the first negative return and returns it. */
static int visit_tensor_args(PyObject *const *args, Py_ssize_t n, int (*visit)(CtTensorObject *, void *), void *ctx)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = args[i];
        bool seq = a != NULL && (PyList_Check(a) || PyTuple_Check(a));
        Py_ssize_t m = seq ? PySequence_Fast_GET_SIZE(a) : 1;
        for (Py_ssize_t k = 0; a != NULL && k < m; k++) {
            PyObject *t = seq ? PySequence_Fast_GET_ITEM(a, k) : a;
            if (CtTensor_Check(t) && visit(CT_TENSOR(t), ctx) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

static int refresh_visit(CtTensorObject *t, void *unused) { return ct_autograd_refresh_view(t); }

/* Brings every tensor argument's view history up to date before its requires_grad is read. */
static int refresh_arguments(PyObject *const *args, Py_ssize_t n) { return visit_tensor_args(args, n, refresh_visit, NULL); }

/* Runs thunk with grad mode off. */
static PyObject *run_without_grad(CtThunk thunk, void *ctx)
{
    bool prev = ct_grad_enabled;
    ct_grad_enabled = false;
    PyObject *out = thunk(ctx);
    ct_grad_enabled = prev;
    return out;
}

static PyObject *record_generic(const CtFormula *f, CtThunk thunk, void *ctx, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames, bool differentiable);
static const CtFormula *generic_formula_cached(const char *op);

/* Ops taking sizes as varargs (sig "input", "s1".."s7" or "d1"..) called as op(input, shape=seq)
 * (reshape/view/expand: shape/size, permute: dims, repeat/tile: repeats/dims): true, with
 * out = {input, seq}. */
static bool sizes_by_keyword(const CtFormula *f, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                             PyObject **out)
{
    if (nargs != 1 || kwnames == NULL || PyTuple_GET_SIZE(kwnames) != 1 || f->sig[1] == NULL ||
        (strcmp(f->sig[1], "s1") != 0 && strcmp(f->sig[1], "d1") != 0)) {
        return false;
    }
    PyObject *key = PyTuple_GET_ITEM(kwnames, 0);
    static const char *const keywords[] = {"shape", "size", "dims", "repeats", NULL};
    for (const char *const *k = keywords; *k != NULL; k++) {
        if (PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, *k) == 0) {
            out[0] = args[0];
            out[1] = args[1];
            return true;
        }
    }
    return false;
}

/* x.view(1, 2, ..., 8): more positional sizes than the signature's s1..s7 (d1..d7) slots. */
static bool many_positional_sizes(const CtFormula *f, Py_ssize_t nargs, PyObject *kwnames)
{
    if (kwnames != NULL || f->sig[1] == NULL || (strcmp(f->sig[1], "s1") != 0 && strcmp(f->sig[1], "d1") != 0)) {
        return false;
    }
    Py_ssize_t slots = 0;
    while (f->sig[1 + slots] != NULL) {
        slots++;
    }
    return nargs - 1 > slots;
}

/* PyTorch's check_no_requires_grad: the arguments f has no derivative for may not require grad. 0 or -1. */
static int refuse_grad_arguments(const CtFormula *f, PyObject *const *norm)
{
    for (int i = 0; f->no_grad != 0 && f->sig[i] != NULL; i++) {
        if ((f->no_grad & (1u << i)) && norm[i] != NULL && CtTensor_Check(norm[i]) &&
            tensor_requires_grad(CT_TENSOR(norm[i]))) {
            PyErr_Format(PyExc_RuntimeError,
                         "The function '%s' is not differentiable with respect to argument '%s'. This input cannot "
                         "have requires_grad True.",
                         f->aten_name != NULL ? f->aten_name : f->op, f->sig[i] + (f->sig[i][0] == '*'));
            return -1;
        }
    }
    return 0;
}

/* Runs thunk(ctx) and, when needed, records a node for formula f over the call's arguments. */
static PyObject *record_call(const CtFormula *f, CtThunk thunk, void *ctx, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    if (f->flags & CT_F_GENERIC) {
        return record_generic(f, thunk, ctx, args, nargs, kwnames, false);
    }
    if (many_positional_sizes(f, nargs, kwnames)) {
        /* recorded as the same call with the sizes in one tuple: x.view((1, 2, ..., 8)) */
        PyObject *seq = PyTuple_New(nargs - 1);
        if (seq == NULL) {
            return NULL;
        }
        for (Py_ssize_t i = 1; i < nargs; i++) {
            PyTuple_SET_ITEM(seq, i - 1, Py_NewRef(args[i]));
        }
        PyObject *packed[2] = {args[0], seq};
        PyObject *result = record_call(f, thunk, ctx, packed, 2, NULL);
        Py_DECREF(seq);
        return result;
    }
    PyObject *norm[CT_MAX_FORMULA_ARGS];
    PyObject *sizes_arg[2];
    if (sizes_by_keyword(f, args, nargs, kwnames, sizes_arg)) {
        /* x.reshape(shape=(2, 3)), x.permute(dims=...): the sequence as the first size argument */
        args = sizes_arg;
        nargs = 2;
        kwnames = NULL;
    }
    if (ct_parse_args(f->op, args, nargs, kwnames, f->sig, 0, norm) < 0) {
        /* arguments the formula does not know: the op reports its own error, or its result gets a
         * "not implemented" node rather than silently no history; out= of an op that has a
         * formula is refused whatever out's dtype (sum(x, 0, out=long_tensor)), as PyTorch */
        PyErr_Clear();
        const CtFormula *g = generic_formula_cached(f->op);
        return g == NULL ? NULL : record_generic(g, thunk, ctx, args, nargs, kwnames, true);
    }
    int n = 0;
    while (f->sig[n] != NULL) {
        n++;
    }
    CtDType as_dtype;
    if (strcmp(f->op, "view") == 0 && norm[1] != NULL && norm[2] == NULL && !PyLong_Check(norm[1]) &&
        !PySequence_Check(norm[1]) && ct_dtype_from_object(norm[1], &as_dtype) == 0) {
        return thunk(ctx); /* x.view(dtype) reinterprets bytes: no gradient flows (as PyTorch) */
    }
    PyErr_Clear();
    if (refresh_arguments(norm, n) < 0 || refuse_grad_arguments(f, norm) < 0) {
        return NULL;
    }
    bool needed;
    Py_ssize_t num_edges = count_edges(f, norm, &needed);
    CtTensorObject *self = norm[0] != NULL && CtTensor_Check(norm[0]) ? CT_TENSOR(norm[0]) : NULL;
    if (num_edges < 0 || !needed) {
        PyObject *out = thunk(ctx);
        if (out != NULL && self != NULL && (f->flags & CT_F_VIEW)) {
            set_view_links(out, self); /* a later in-place write through out must reach self */
        }
        return out;
    }
    CtTensorObject *base = NULL;
    PyObject *result = NULL, *out = NULL, *self_before = NULL;
    if ((f->flags & CT_F_INPLACE) && self != NULL) {
        if (check_inplace_target(self, &base) < 0) {
            return NULL;
        }
        /* the old values the formula reads; with self's history when it has one (a recorded
         * clone), so that create_graph=True differentiates through them too */
        if ((f->flags & CT_F_CLONE_SELF) && ct_is_floating(self->dtype)) {
            self_before = tensor_requires_grad(self) ? ct_call_method((PyObject *)self, "clone", NULL)
                                                     : (PyObject *)ct_to(self, self->dtype, ct_device_of(self), true);
            if (self_before == NULL) {
                return NULL;
            }
        }
    }
    CtNodeObject *node = node_new(f->name_for != NULL ? f->name_for(norm) : f->node_name, CT_NODE_FORMULA,
                                  (int)num_edges, 1);
    if (node == NULL) {
        Py_XDECREF(self_before);
        return NULL;
    }
    node->formula = f;
    /* Edges first: an in-place op replaces self's history. */
    int e = 0;
    for (int i = 0; f->sig[i] != NULL; i++) {
        if (!(f->diff & (1u << i))) {
            continue;
        }
        PyObject *a = norm[i];
        if (i == 0 && (f->flags & CT_F_LIST_INPUT)) {
            Py_ssize_t m = PySequence_Fast_GET_SIZE(a);
            for (Py_ssize_t k = 0; k < m; k++, e++) {
                PyObject *el = PySequence_Fast_GET_ITEM(a, k);
                if (CtTensor_Check(el) && edge_for(CT_TENSOR(el), &node->edge_nodes[e], &node->edge_input_nr[e]) < 0) {
                    goto error;
                }
            }
            continue;
        }
        if (a != NULL && CtTensor_Check(a) && edge_for(CT_TENSOR(a), &node->edge_nodes[e], &node->edge_input_nr[e]) < 0) {
            goto error;
        }
        e++;
    }
    uint64_t versions_before[CT_MAX_FORMULA_ARGS];
    for (int i = 0; i < n; i++) {
        versions_before[i] = norm[i] != NULL && CtTensor_Check(norm[i]) ? CT_TENSOR(norm[i])->storage->version : 0;
    }
    out = run_without_grad(thunk, ctx);
    if (out != NULL && out == norm[0] && !(f->flags & CT_F_INPLACE)) { /* returned its input (x.contiguous()): no node */
        result = out;
        out = NULL;
        goto error;
    }
    if (out == NULL || save_arguments(node, f, norm, n, self_before, versions_before) < 0 ||
        set_outputs(node, f, out, self) < 0 || pack_saved(node) < 0) {
        goto error;
    }
    if ((f->flags & CT_F_INPLACE) && self != NULL && rebase_history(self, base, node) < 0) {
        goto error;
    }
    result = out;
    out = NULL;
error:
    Py_XDECREF(out);
    Py_XDECREF(self_before);
    Py_DECREF(node);
    return result;
}

static bool in_sequence(PyObject *seq, PyObject *o)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(seq); i++) {
        if (PyList_GET_ITEM(seq, i) == o) {
            return true;
        }
    }
    return false;
}

static int needs_grad_visit(CtTensorObject *t, void *needed)
{
    *(bool *)needed |= tensor_requires_grad(t);
    return 0;
}

static int append_visit(CtTensorObject *t, void *list) { return PyList_Append((PyObject *)list, (PyObject *)t); }

/* True when the keyword arguments hold out= with a floating tensor (or a tuple holding one), or
 * with any tensor unless float_only. */
static bool writes_out(PyObject *const *kwvalues, PyObject *kwnames, bool float_only)
{
    for (Py_ssize_t i = 0; kwnames != NULL && i < PyTuple_GET_SIZE(kwnames); i++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(kwnames, i)) ||
            PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "out") != 0) {
            continue;
        }
        PyObject *out = kwvalues[i];
        bool seq = PyTuple_Check(out) || PyList_Check(out);
        Py_ssize_t m = seq ? PySequence_Fast_GET_SIZE(out) : 1;
        for (Py_ssize_t k = 0; k < m; k++) {
            PyObject *o = seq ? PySequence_Fast_GET_ITEM(out, k) : out;
            if (CtTensor_Check(o) && (!float_only || ct_is_floating(CT_TENSOR(o)->dtype))) {
                return true;
            }
        }
    }
    return false;
}

/* An op without a formula, called with an input that requires grad: the op runs as is (grad
 * mode unchanged, so a composite op may record its own history); each new float output without
 * history, or self for an in-place op, gets a node whose backward raises "not implemented"
 * instead of silently carrying no gradient. */
static PyObject *record_generic(const CtFormula *f, CtThunk thunk, void *ctx, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames, bool differentiable)
{
    Py_ssize_t nall = nargs + (kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0);
    if (refresh_arguments(args, nall) < 0) {
        return NULL;
    }
    PyObject *inputs = NULL, *out = NULL, *result = NULL, *old_fn = NULL;
    CtNodeObject *node = NULL;
    bool needed = false;
    visit_tensor_args(args, nall, needs_grad_visit, &needed);
    if (!needed) {
        return thunk(ctx);
    }
    if ((inputs = PyList_New(0)) == NULL || visit_tensor_args(args, nall, append_visit, inputs) < 0) {
        goto done;
    }
    if (writes_out(args + nargs, kwnames, !differentiable)) {
        PyErr_Format(PyExc_RuntimeError, "%s(): functions with out=... arguments don't support automatic "
                     "differentiation, but one of the arguments requires grad.", f->op);
        goto done;
    }
    CtTensorObject *self = (f->flags & CT_F_INPLACE) && nargs > 0 && CtTensor_Check(args[0]) ? CT_TENSOR(args[0]) : NULL;
    CtTensorObject *base = NULL;
    if (self != NULL && check_inplace_target(self, &base) < 0) {
        goto done;
    }
    Py_ssize_t ne = PyList_GET_SIZE(inputs);
    node = node_new(f->node_name, CT_NODE_FORMULA, (int)ne, 1);
    if (node == NULL) {
        goto done;
    }
    node->formula = f;
    for (Py_ssize_t i = 0; i < ne; i++) {
        if (edge_for(CT_TENSOR(PyList_GET_ITEM(inputs, i)), &node->edge_nodes[i], &node->edge_input_nr[i]) < 0) {
            goto done;
        }
    }
    old_fn = self != NULL ? Py_XNewRef(self->grad_fn) : NULL;
    out = thunk(ctx);
    if (out == NULL) {
        goto done;
    }
    if (self != NULL) {
        if (self->grad_fn == old_fn && ct_is_floating(self->dtype)) { /* not recorded by the op itself */
            if (set_output_history(node, (PyObject *)self, 0, NULL) < 0 || rebase_history(self, base, node) < 0) {
                goto done;
            }
        }
    } else {
        Py_ssize_t k = PyTuple_Check(out) ? PyTuple_GET_SIZE(out) : 1;
        node->num_outputs = (int)k;
        for (Py_ssize_t j = 0; j < k; j++) {
            PyObject *o = PyTuple_Check(out) ? PyTuple_GET_ITEM(out, j) : out;
            if (CtTensor_Check(o) && !tensor_requires_grad(CT_TENSOR(o)) && !in_sequence(inputs, o)) {
                set_output_history(node, o, (int)j, NULL);
            }
        }
    }
    result = out;
    out = NULL;
done:
    Py_XDECREF(out);
    Py_XDECREF(old_fn);
    Py_XDECREF(node);
    Py_XDECREF(inputs);
    return result;
}

/* --- the wrapper object: a callable that is also a method descriptor ------------------------------------ */
typedef struct {
    PyObject_HEAD
    const CtFormula *formula;
    PyObject *wrapped; /* the original function or method descriptor */
    vectorcallfunc vectorcall;
    uint8_t autocast[2]; /* the op's autocast policy on [CPU, CUDA] (amp.h) */
} CtAutogradFunctionObject;

static PyTypeObject *CtAutogradFunction_Type;

typedef struct {
    PyObject *fn;
    PyObject *const *args;
    size_t nargsf;
    PyObject *kwnames;
} VectorcallCtx;

static PyObject *vectorcall_thunk(void *p)
{
    VectorcallCtx *c = (VectorcallCtx *)p;
    return PyObject_Vectorcall(c->fn, c->args, c->nargsf, c->kwnames);
}

static PyObject *autograd_function_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    CtAutogradFunctionObject *w = (CtAutogradFunctionObject *)self;
    if (!ct_grad_enabled) {
        PyObject *out = PyObject_Vectorcall(w->wrapped, args, nargsf, kwnames);
        if (out != NULL && (w->formula->flags & CT_F_VIEW) && PyVectorcall_NARGS(nargsf) > 0 && CtTensor_Check(args[0])) {
            set_view_links(out, CT_TENSOR(args[0]));
        }
        return out;
    }
    VectorcallCtx c = {w->wrapped, args, nargsf, kwnames};
    return record_call(w->formula, vectorcall_thunk, &c, args, PyVectorcall_NARGS(nargsf), kwnames);
}

static PyObject *autocast_thunk(void *self, PyObject *const *args, size_t nargs, PyObject *kwnames)
{
    return autograd_function_call((PyObject *)self, args, nargs, kwnames);
}

static PyObject *autograd_function_dispatch(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    CtAutogradFunctionObject *w = (CtAutogradFunctionObject *)self;
    if (ct_autocast_on && (w->autocast[0] | w->autocast[1])) {
        return ct_autocast_vectorcall(w->autocast, autocast_thunk, self, args, PyVectorcall_NARGS(nargsf), kwnames);
    }
    return autograd_function_call(self, args, nargsf, kwnames);
}

static PyObject *profiled_thunk(void *p)
{
    VectorcallCtx *c = (VectorcallCtx *)p;
    return autograd_function_dispatch(c->fn, c->args, c->nargsf, c->kwnames);
}

/* The entry point of every wrapped function and method: a running profile sees the call first. */
static PyObject *autograd_function_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (ct_profiler_on) {
        VectorcallCtx c = {self, args, nargsf, kwnames};
        return ct_profiler_call(((CtAutogradFunctionObject *)self)->formula->op, profiled_thunk, &c, args,
                                PyVectorcall_NARGS(nargsf), kwnames);
    }
    return autograd_function_dispatch(self, args, nargsf, kwnames);
}

static PyObject *autograd_function_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, obj);
}

static void autograd_function_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    Py_CLEAR(((CtAutogradFunctionObject *)self)->wrapped);
    PyObject_Free(self);
    Py_DECREF(tp);
}

static PyObject *autograd_function_get_doc(PyObject *self, void *c)
{
    return PyObject_GetAttrString(((CtAutogradFunctionObject *)self)->wrapped, "__doc__");
}
static PyObject *autograd_function_get_name(PyObject *self, void *c)
{
    return PyObject_GetAttrString(((CtAutogradFunctionObject *)self)->wrapped, "__name__");
}

static PyObject *autograd_function_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<ctorch op %s>", ((CtAutogradFunctionObject *)self)->formula->op);
}

static PyGetSetDef autograd_function_getset[] = {
    {"__doc__", autograd_function_get_doc, NULL, NULL, NULL},
    {"__name__", autograd_function_get_name, NULL, NULL, NULL},
    {NULL},
};

static PyMemberDef autograd_function_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(CtAutogradFunctionObject, vectorcall), READONLY, NULL},
    {NULL},
};

static PyType_Slot autograd_function_slots[] = {
    {Py_tp_dealloc, autograd_function_dealloc},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_descr_get, autograd_function_descr_get},
    {Py_tp_getset, autograd_function_getset},
    {Py_tp_members, autograd_function_members},
    {Py_tp_repr, autograd_function_repr},
    {0, NULL},
};

static PyType_Spec autograd_function_spec = {
    "ctorch._C._AutogradFunction",
    sizeof(CtAutogradFunctionObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    autograd_function_slots,
};

static PyObject *wrap_callable(const CtFormula *f, const char *name, PyObject *wrapped)
{
    CtAutogradFunctionObject *w = PyObject_New(CtAutogradFunctionObject, CtAutogradFunction_Type);
    if (w == NULL) {
        return NULL;
    }
    w->formula = f;
    w->wrapped = Py_NewRef(wrapped);
    w->vectorcall = autograd_function_vectorcall;
    ct_autocast_policy(name, w->autocast);
    return (PyObject *)w;
}

/* --- slot trampolines ------------------------------------------------------------------------------------- */
/* Each wrapped slot keeps the original function and the formula it records with. */
#define CT_SLOTS(X)                                     \
    X(nb_add, binaryfunc, "add")                        \
    X(nb_subtract, binaryfunc, "sub")                   \
    X(nb_multiply, binaryfunc, "mul")                   \
    X(nb_true_divide, binaryfunc, "div")                \
    X(nb_remainder, binaryfunc, "remainder")            \
    X(nb_floor_divide, binaryfunc, "floor_divide")      \
    X(nb_matrix_multiply, binaryfunc, "matmul")         \
    X(nb_inplace_add, binaryfunc, "add_")               \
    X(nb_inplace_subtract, binaryfunc, "sub_")          \
    X(nb_inplace_multiply, binaryfunc, "mul_")          \
    X(nb_inplace_true_divide, binaryfunc, "div_")       \
    X(nb_inplace_remainder, binaryfunc, "remainder_")   \
    X(nb_inplace_floor_divide, binaryfunc, "floor_divide_") \
    X(nb_negative, unaryfunc, "neg")                    \
    X(nb_absolute, unaryfunc, "abs")

typedef struct {
    const CtFormula *formula;
    binaryfunc fn2;
    unaryfunc fn1;
    ternaryfunc fn3;
    objobjargproc setfn;
    PyObject *a, *b, *c;
    bool swapped;
} SlotCtx;

static PyObject *slot_thunk(void *p)
{
    SlotCtx *s = (SlotCtx *)p;
    if (s->fn1) {
        return s->fn1(s->a);
    }
    if (s->fn3) {
        return s->fn3(s->a, s->b, s->c);
    }
    if (s->setfn) {
        return s->setfn(s->a, s->b, s->c) < 0 ? NULL : Py_NewRef(Py_None);
    }
    return s->fn2(s->a, s->b);
}

static bool either_requires_grad(PyObject *a, PyObject *b)
{
    return (CtTensor_Check(a) && tensor_requires_grad(CT_TENSOR(a))) ||
           (b != NULL && CtTensor_Check(b) && tensor_requires_grad(CT_TENSOR(b)));
}

/* Binary slots may be called reflected (2 * x calls nb_multiply(2, x)); the formula's input
 * order follows the operands as written, so reflected calls are recorded with the scalar
 * first, which the formulas handle (a non-tensor argument simply gets no gradient). */
#define CT_SLOT_STATE(slot, type, op) \
    static type orig_##slot;          \
    static const CtFormula *formula_##slot; \
    static uint8_t autocast_##slot[2];
CT_SLOTS(CT_SLOT_STATE)
#undef CT_SLOT_STATE

/* While a profile runs, a slot's call is timed around its body (profiler.h). */
#define CT_PROFILED_BINARY(slot, op)                                                    \
    static PyObject *ag_##slot(PyObject *a, PyObject *b)                                \
    {                                                                                   \
        if (ct_profiler_on && formula_##slot != NULL) {                                 \
            SlotCtx s = {NULL, body_##slot, NULL, NULL, NULL, a, b, NULL, false};       \
            PyObject *args[2] = {a, b};                                                 \
            return ct_profiler_call(op, slot_thunk, &s, args, 2, NULL);                 \
        }                                                                               \
        return body_##slot(a, b);                                                       \
    }

/* A slot whose op has an autocast policy (matmul, pow) goes through autocast first (amp.h); the
 * cast call comes back to record_<slot>. */
#define CT_BINARY_TRAMPOLINE(slot)                                                      \
    static PyObject *record_##slot(PyObject *a, PyObject *b)                            \
    {                                                                                   \
        if (!ct_grad_enabled || formula_##slot == NULL || !either_requires_grad(a, b)) { \
            return orig_##slot(a, b);                                                   \
        }                                                                               \
        SlotCtx s = {formula_##slot, orig_##slot, NULL, NULL, NULL, a, b, NULL, false}; \
        PyObject *args[2] = {a, b};                                                     \
        return record_call(formula_##slot, slot_thunk, &s, args, 2, NULL);              \
    }                                                                                   \
    static PyObject *cast_##slot(void *ctx, PyObject *const *args, size_t n, PyObject *kw) \
    {                                                                                   \
        return record_##slot(args[0], args[1]);                                         \
    }                                                                                   \
    static PyObject *body_##slot(PyObject *a, PyObject *b)                              \
    {                                                                                   \
        if (ct_autocast_on && (autocast_##slot[0] | autocast_##slot[1])) {              \
            PyObject *args[2] = {a, b};                                                 \
            return ct_autocast_vectorcall(autocast_##slot, cast_##slot, NULL, args, 2, NULL); \
        }                                                                               \
        return record_##slot(a, b);                                                     \
    }                                                                                   \
    CT_PROFILED_BINARY(slot, formula_##slot->op)
#define CT_UNARY_TRAMPOLINE(slot)                                                       \
    static PyObject *body_##slot(PyObject *a)                                           \
    {                                                                                   \
        if (!ct_grad_enabled || formula_##slot == NULL || !either_requires_grad(a, NULL)) { \
            return orig_##slot(a);                                                      \
        }                                                                               \
        SlotCtx s = {formula_##slot, NULL, orig_##slot, NULL, NULL, a, NULL, NULL, false}; \
        PyObject *args[1] = {a};                                                        \
        return record_call(formula_##slot, slot_thunk, &s, args, 1, NULL);              \
    }                                                                                   \
    static PyObject *ag_##slot(PyObject *a)                                             \
    {                                                                                   \
        if (ct_profiler_on && formula_##slot != NULL) {                                 \
            SlotCtx s = {NULL, NULL, body_##slot, NULL, NULL, a, NULL, NULL, false};    \
            return ct_profiler_call(formula_##slot->op, slot_thunk, &s, &a, 1, NULL);   \
        }                                                                               \
        return body_##slot(a);                                                          \
    }
CT_BINARY_TRAMPOLINE(nb_add)
CT_BINARY_TRAMPOLINE(nb_subtract)
CT_BINARY_TRAMPOLINE(nb_multiply)
CT_BINARY_TRAMPOLINE(nb_true_divide)
CT_BINARY_TRAMPOLINE(nb_remainder)
CT_BINARY_TRAMPOLINE(nb_floor_divide)
CT_BINARY_TRAMPOLINE(nb_matrix_multiply)
CT_BINARY_TRAMPOLINE(nb_inplace_add)
CT_BINARY_TRAMPOLINE(nb_inplace_subtract)
CT_BINARY_TRAMPOLINE(nb_inplace_multiply)
CT_BINARY_TRAMPOLINE(nb_inplace_true_divide)
CT_BINARY_TRAMPOLINE(nb_inplace_remainder)
CT_BINARY_TRAMPOLINE(nb_inplace_floor_divide)
CT_UNARY_TRAMPOLINE(nb_negative)
CT_UNARY_TRAMPOLINE(nb_absolute)

/* power: nb_power(a, b, None) and a **= b */
#define CT_TERNARY_TRAMPOLINE(slot)                                                       \
    static ternaryfunc orig_##slot;                                                       \
    static const CtFormula *formula_##slot;                                               \
    static uint8_t autocast_##slot[2];                                                    \
    static PyObject *record_##slot(PyObject *a, PyObject *b, PyObject *c)                 \
    {                                                                                     \
        if (!ct_grad_enabled || formula_##slot == NULL || !either_requires_grad(a, b)) {  \
            return orig_##slot(a, b, c);                                                  \
        }                                                                                 \
        SlotCtx s = {formula_##slot, NULL, NULL, orig_##slot, NULL, a, b, c, false};      \
        PyObject *args[2] = {a, b};                                                       \
        return record_call(formula_##slot, slot_thunk, &s, args, 2, NULL);                \
    }                                                                                     \
    static PyObject *cast_##slot(void *c, PyObject *const *args, size_t n, PyObject *kw)  \
    {                                                                                     \
        return record_##slot(args[0], args[1], (PyObject *)c);                            \
    }                                                                                     \
    static PyObject *body_##slot(PyObject *a, PyObject *b, PyObject *c)                   \
    {                                                                                     \
        if (ct_autocast_on && (autocast_##slot[0] | autocast_##slot[1])) {                \
            PyObject *args[2] = {a, b};                                                   \
            return ct_autocast_vectorcall(autocast_##slot, cast_##slot, c, args, 2, NULL); \
        }                                                                                 \
        return record_##slot(a, b, c);                                                    \
    }                                                                                     \
    static PyObject *ag_##slot(PyObject *a, PyObject *b, PyObject *c)                     \
    {                                                                                     \
        if (ct_profiler_on && formula_##slot != NULL) {                                   \
            SlotCtx s = {NULL, NULL, NULL, body_##slot, NULL, a, b, c, false};            \
            PyObject *args[2] = {a, b};                                                   \
            return ct_profiler_call(formula_##slot->op, slot_thunk, &s, args, 2, NULL);   \
        }                                                                                 \
        return body_##slot(a, b, c);                                                      \
    }
CT_TERNARY_TRAMPOLINE(nb_power)
CT_TERNARY_TRAMPOLINE(nb_inplace_power)

/* indexing: x[i] records "__getitem__"; x[i] = v records the in-place "__setitem__" */
static binaryfunc orig_mp_subscript;
static const CtFormula *formula_getitem;
static PyObject *body_mp_subscript(PyObject *a, PyObject *key)
{
    if (formula_getitem == NULL) {
        return orig_mp_subscript(a, key);
    }
    if (!ct_grad_enabled) {
        PyObject *out = orig_mp_subscript(a, key);
        if (out != NULL && CtTensor_Check(a)) {
            set_view_links(out, CT_TENSOR(a));
        }
        return out;
    }
    if (CtTensor_Check(a) && ct_autograd_refresh_view(CT_TENSOR(a)) < 0) {
        return NULL;
    }
    if (!either_requires_grad(a, NULL)) {
        PyObject *out = orig_mp_subscript(a, key);
        if (out != NULL && CtTensor_Check(a)) {
            set_view_links(out, CT_TENSOR(a)); /* basic indexing gives a view */
        }
        return out;
    }
    SlotCtx s = {formula_getitem, orig_mp_subscript, NULL, NULL, NULL, a, key, NULL, false};
    PyObject *args[2] = {a, key};
    return record_call(formula_getitem, slot_thunk, &s, args, 2, NULL);
}

static PyObject *ag_mp_subscript(PyObject *a, PyObject *key)
{
    if (ct_profiler_on) {
        SlotCtx s = {NULL, body_mp_subscript, NULL, NULL, NULL, a, key, NULL, false};
        PyObject *args[2] = {a, key};
        return ct_profiler_call(ct_profiler_index_name(key, false), slot_thunk, &s, args, 2, NULL);
    }
    return body_mp_subscript(a, key);
}

static objobjargproc orig_mp_ass_subscript;
static const CtFormula *formula_setitem;
static int body_mp_ass_subscript(PyObject *a, PyObject *key, PyObject *value)
{
    if (value == NULL || !ct_grad_enabled || formula_setitem == NULL || !either_requires_grad(a, value)) {
        return orig_mp_ass_subscript(a, key, value);
    }
    SlotCtx s = {formula_setitem, NULL, NULL, NULL, orig_mp_ass_subscript, a, key, value, false};
    PyObject *args[3] = {a, key, value};
    PyObject *r = record_call(formula_setitem, slot_thunk, &s, args, 3, NULL);
    if (r == NULL) {
        return -1;
    }
    Py_DECREF(r);
    return 0;
}

static int ag_mp_ass_subscript(PyObject *a, PyObject *key, PyObject *value)
{
    if (ct_profiler_on && value != NULL) {
        SlotCtx s = {NULL, NULL, NULL, NULL, body_mp_ass_subscript, a, key, value, false};
        PyObject *args[3] = {a, key, value};
        PyObject *r = ct_profiler_call(ct_profiler_index_name(key, true), slot_thunk, &s, args, 3, NULL);
        Py_XDECREF(r);
        return r == NULL ? -1 : 0;
    }
    return body_mp_ass_subscript(a, key, value);
}

/* Formulas made at run time (in-place variants, ops without a formula); they live as long as
 * the process, like the table. */
static CtFormula *synthesised_formula(const CtFormula *proto, const char *op, const char *node_name, int flags)
{
    CtFormula *f = PyMem_RawCalloc(1, sizeof(CtFormula));
    char *name = PyMem_RawMalloc(strlen(op) + 1);
    if (f == NULL || name == NULL) {
        PyMem_RawFree(f);
        PyMem_RawFree(name);
        PyErr_NoMemory();
        return NULL;
    }
    strcpy(name, op);
    if (proto != NULL) {
        *f = *proto;
    }
    f->op = name;
    f->node_name = node_name;
    f->flags = flags;
    return f;
}

static const CtFormula *table_formula(const char *op)
{
    for (const CtFormula *f = ct_formulas; f->op != NULL; f++) {
        if (strcmp(f->op, op) == 0) {
            return f;
        }
    }
    return NULL;
}

/* The formula for op: from the table; for `name_` without a row, the in-place variant of
 * `name`'s formula (recording self's old values when the backward reads them); else NULL. */
static const CtFormula *find_formula(const char *op)
{
    const CtFormula *f = table_formula(op);
    size_t len = strlen(op);
    if (f != NULL || len < 2 || op[len - 1] != '_' || op[0] == '_' || len >= 64) {
        return f;
    }
    char base_name[64];
    memcpy(base_name, op, len - 1);
    base_name[len - 1] = '\0';
    const CtFormula *base = table_formula(base_name);
    if (base == NULL || (base->flags & (CT_F_VIEW | CT_F_INPLACE | CT_F_LIST_INPUT))) {
        return NULL;
    }
    int flags = base->flags | CT_F_INPLACE | ((base->flags & CT_F_NO_SELF_VALUES) ? 0 : CT_F_CLONE_SELF);
    return synthesised_formula(base, op, base->node_name, flags);
}

/* For ops without a formula: record "not implemented" nodes rather than silently nothing. */
static const CtFormula *generic_formula(const char *op)
{
    size_t len = strlen(op);
    bool inplace = len > 1 && op[len - 1] == '_' && op[0] != '_';
    static const CtFormula proto = {NULL, NULL, {NULL}, 0, 0, NULL, NULL};
    return synthesised_formula(&proto, op, "NotImplemented", CT_F_NO_DERIV | CT_F_GENERIC | (inplace ? CT_F_INPLACE : 0));
}

/* generic_formula(op), made once per op */
static const CtFormula *generic_formula_cached(const char *op)
{
    static PyObject *cache; /* dict: op -> capsule of its formula */
    if (cache == NULL && (cache = PyDict_New()) == NULL) {
        return NULL;
    }
    PyObject *c = PyDict_GetItemString(cache, op); /* borrowed */
    if (c != NULL) {
        return PyCapsule_GetPointer(c, NULL);
    }
    const CtFormula *f = generic_formula(op);
    PyObject *capsule = f != NULL ? PyCapsule_New((void *)f, NULL, NULL) : NULL;
    int rc = capsule != NULL ? PyDict_SetItemString(cache, op, capsule) : -1;
    Py_XDECREF(capsule);
    return rc < 0 ? NULL : f;
}

static const CtFormula *slot_formula(const char *op)
{
    const CtFormula *f = find_formula(op);
    if (f == NULL && !PyErr_Occurred()) {
        f = generic_formula(op);
    }
    PyErr_Clear(); /* (out of memory here: the slot records nothing) */
    return f;
}

/* The recording replacement for one of Tensor's type slots, called by tensor.c while it builds
 * the type (so the slot, its Python-level wrapper such as __mul__, and subclasses all record).
 * The original function is kept for the trampoline; other slots are returned unchanged. */
void *ct_autograd_slot(int slot, void *fn)
{
    switch (slot) {
#define CT_SLOT_CASE(name, type, op)           \
    case Py_##name:                            \
        orig_##name = (type)fn;                \
        formula_##name = slot_formula(op);     \
        ct_autocast_policy(op, autocast_##name); \
        return (void *)ag_##name;
        CT_SLOTS(CT_SLOT_CASE)
#undef CT_SLOT_CASE
    case Py_nb_power:
        orig_nb_power = (ternaryfunc)fn;
        formula_nb_power = slot_formula("pow");
        ct_autocast_policy("pow", autocast_nb_power);
        return (void *)ag_nb_power;
    case Py_nb_inplace_power:
        orig_nb_inplace_power = (ternaryfunc)fn;
        formula_nb_inplace_power = slot_formula("pow_");
        return (void *)ag_nb_inplace_power;
    case Py_mp_subscript:
        orig_mp_subscript = (binaryfunc)fn;
        formula_getitem = slot_formula("__getitem__");
        return (void *)ag_mp_subscript;
    case Py_mp_ass_subscript:
        orig_mp_ass_subscript = (objobjargproc)fn;
        formula_setitem = slot_formula("__setitem__");
        return (void *)ag_mp_ass_subscript;
    default:
        return fn;
    }
}

/* Functions and methods that are not ops on a tensor's values: their outputs rightly carry no
 * history (creation "like" another tensor, detaching, autograd's own controls, metadata), or
 * composites whose parts record. */
static const char *const never_recorded[] = {
    "detach", "detach_", "requires_grad_", "retain_grad", "register_hook", "backward", "numpy", "tolist", "item",
    "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like", "new_zeros",
    "new_ones", "new_empty", "new_full", "new_tensor", "tensor", "as_tensor", "asarray", "from_numpy", "from_dlpack",
    "size", "dim", "ndimension", "stride", "numel", "nelement", "element_size", "data_ptr", "storage_offset",
    "is_contiguous", "is_floating_point", "is_complex", "is_signed", "is_pinned", "get_device", "share_memory_",
    "is_nonzero", "equal", "allclose", "is_same_size", "is_set_to", "untyped_storage",
    /* tensor_more.c: storage resizes and Python callbacks refuse tensors that require grad themselves */
    "resize_", "resize_as_", "apply_", "map_", "map2_", "new", "new_empty_strided", "const_data_ptr", "is_shared",
    "dim_order", "register_post_accumulate_grad_hook",
    /* ops PyTorch gives no derivative (their outputs carry no grad_fn): torch.special's orthogonal
     * polynomials and airy_ai */
    "special_chebyshev_polynomial_t", "special_chebyshev_polynomial_u", "special_chebyshev_polynomial_v",
    "special_chebyshev_polynomial_w", "special_shifted_chebyshev_polynomial_t",
    "special_shifted_chebyshev_polynomial_u", "special_shifted_chebyshev_polynomial_v",
    "special_shifted_chebyshev_polynomial_w", "special_hermite_polynomial_h", "special_hermite_polynomial_he",
    "special_laguerre_polynomial_l", "special_legendre_polynomial_p", "special_airy_ai",
    /* composites whose parts record themselves */
    "broadcast_tensors", "broadcast_to", "combinations", NULL,
};

static bool is_never_recorded(const char *name)
{
    if (name[0] == '_') {
        return true; /* internals and Python protocol methods */
    }
    for (const char *const *p = never_recorded; *p != NULL; p++) {
        if (strcmp(*p, name) == 0) {
            return true;
        }
    }
    return false;
}

static int install_one(PyObject *dict, PyObject *key, const CtFormula *f, PyObject *callable)
{
    const char *name = PyUnicode_AsUTF8(key);
    PyObject *w = name != NULL ? wrap_callable(f, name, callable) : NULL;
    if (w == NULL || PyDict_SetItem(dict, key, w) < 0) {
        Py_XDECREF(w);
        return -1;
    }
    Py_DECREF(w);
    return 0;
}

/* Wraps every op callable in dict (module functions when methods is false, else Tensor's method
 * descriptors) with its formula, a synthesised in-place formula, or the generic one. */
static int install_dict(PyObject *dict, bool methods)
{
    PyObject *keys = PyDict_Keys(dict);
    if (keys == NULL) {
        return -1;
    }
    int rc = -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); i++) {
        PyObject *key = PyList_GET_ITEM(keys, i);
        const char *name = PyUnicode_AsUTF8(key);
        if (name == NULL) {
            goto done;
        }
        PyObject *fn = PyDict_GetItemWithError(dict, key); /* borrowed */
        if (fn == NULL) {
            if (PyErr_Occurred()) {
                goto done;
            }
            continue;
        }
        /* only functions: module attributes such as the dtype ctorch.bfloat16 share names with methods */
        bool op = methods ? Py_IS_TYPE(fn, &PyMethodDescr_Type) : PyCFunction_Check(fn);
        /* a "Tensor.name" row is for a method whose arguments differ from the function's */
        char method_row[80];
        snprintf(method_row, sizeof(method_row), "Tensor.%s", name);
        const CtFormula *f = methods ? table_formula(method_row) : NULL;
        f = f != NULL ? f : table_formula(name);
        if (!op || (f == NULL && is_never_recorded(name))) {
            continue;
        }
        if (f == NULL && (f = find_formula(name)) == NULL) {
            if (PyErr_Occurred() || (f = generic_formula(name)) == NULL) {
                goto done;
            }
        }
        if (install_one(dict, key, f, fn) < 0) {
            goto done;
        }
    }
    rc = 0;
done:
    Py_DECREF(keys);
    return rc;
}

int ct_autograd_install(PyObject *module)
{
    module_dict = PyModule_GetDict(module);
    if (install_dict(module_dict, false) < 0 || install_dict(CtTensor_Type->tp_dict, true) < 0) {
        return -1;
    }
    PyType_Modified(CtTensor_Type);
    return 0;
}

/* --- the engine ------------------------------------------------------------------------------------------------ */
typedef struct {
    CtNodeObject **items;
    Py_ssize_t size, cap;
} NodeHeap; /* max-heap on sequence_nr; holds borrowed pointers (the graph keeps nodes alive) */

static int heap_push(NodeHeap *h, CtNodeObject *n)
{
    if (h->size == h->cap) {
        Py_ssize_t cap = h->cap ? h->cap * 2 : 64;
        CtNodeObject **items = PyMem_Realloc(h->items, sizeof(*items) * cap);
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        h->items = items;
        h->cap = cap;
    }
    Py_ssize_t i = h->size++;
    while (i > 0) {
        Py_ssize_t p = (i - 1) / 2;
        if (h->items[p]->sequence_nr >= n->sequence_nr) {
            break;
        }
        h->items[i] = h->items[p];
        i = p;
    }
    h->items[i] = n;
    return 0;
}

static CtNodeObject *heap_pop(NodeHeap *h)
{
    CtNodeObject *top = h->items[0];
    CtNodeObject *last = h->items[--h->size];
    Py_ssize_t i = 0;
    for (;;) {
        Py_ssize_t l = 2 * i + 1, r = l + 1, m = i;
        uint64_t best = last->sequence_nr;
        if (l < h->size && h->items[l]->sequence_nr > best) {
            m = l;
            best = h->items[l]->sequence_nr;
        }
        if (r < h->size && h->items[r]->sequence_nr > best) {
            m = r;
        }
        if (m == i) {
            break;
        }
        h->items[i] = h->items[m];
        i = m;
    }
    if (h->size > 0) {
        h->items[i] = last;
    }
    return top;
}

/* Adds grad into node's buffer slot nr (out-of-place, so shared gradients stay intact). */
static int buffer_add(CtNodeObject *node, int nr, PyObject *grad)
{
    if (node->buffer == NULL) {
        node->buffer = PyList_New(node->num_outputs);
        if (node->buffer == NULL) {
            return -1;
        }
        for (int i = 0; i < node->num_outputs; i++) {
            PyList_SET_ITEM(node->buffer, i, Py_NewRef(Py_None));
        }
    }
    if (nr < 0 || nr >= node->num_outputs) {
        PyErr_Format(PyExc_RuntimeError, "autograd: invalid output index %d for %s", nr, _PyType_Name(Py_TYPE(node)));
        return -1;
    }
    PyObject *cur = PyList_GET_ITEM(node->buffer, nr);
    if (cur == Py_None) {
        return PyList_SetItem(node->buffer, nr, Py_NewRef(grad));
    }
    PyObject *args[2] = {cur, grad};
    PyObject *sum = ct_op("add", args, 2, NULL);
    if (sum == NULL) {
        return -1;
    }
    return PyList_SetItem(node->buffer, nr, sum);
}

/* A hook's name for its error messages: its __name__, else its str() (a functools.partial). New reference. */
static PyObject *hook_name(PyObject *hook)
{
    PyObject *name = PyObject_GetAttrString(hook, "__name__");
    if (name != NULL && PyUnicode_Check(name)) {
        return name;
    }
    Py_XDECREF(name);
    PyErr_Clear();
    return PyObject_Str(hook);
}

/* PyTorch's check of a value a hook returned in place of `original` (a tensor or None): None keeps
 * it; else it must be a tensor of the same legacy type, device and size. 0 or -1. */
static int check_hook_value(PyObject *hook, PyObject *original, PyObject *value)
{
    if (value == Py_None) {
        return 0;
    }
    if (original == Py_None) {
        PyErr_SetString(PyExc_RuntimeError, "can't replace a None gradient with a non-None value");
        return -1;
    }
    if (!CtTensor_Check(value)) {
        PyErr_Format(PyExc_TypeError, "expected Variable, but hook returned '%s'", _PyType_Name(Py_TYPE(value)));
        return -1;
    }
    CtTensorObject *o = CT_TENSOR(original), *v = CT_TENSOR(value);
    const char *what = NULL;
    if (o->dtype != v->dtype) {
        what = "type";
    } else if (!ct_device_equal(ct_device_of(o), ct_device_of(v))) {
        what = "device";
    } else if (o->ndim != v->ndim || memcmp(o->sizes, v->sizes, sizeof(int64_t) * o->ndim) != 0) {
        PyObject *name = hook_name(hook);
        if (name != NULL) {
            PyErr_Format(PyExc_RuntimeError, "hook '%U' has changed the size of value", name);
            Py_DECREF(name);
        }
        return -1;
    }
    if (what == NULL) {
        return 0;
    }
    PyObject *name = hook_name(hook), *was = legacy_type_name(original), *got = legacy_type_name(value);
    if (name != NULL && was != NULL && got != NULL) {
        PyErr_Format(PyExc_RuntimeError, "hook '%U' has changed the %s of value (was %S got %S)", name, what, was,
                     got);
    }
    Py_XDECREF(name);
    Py_XDECREF(was);
    Py_XDECREF(got);
    return -1;
}

/* retain_grad's store: the first gradient as a detached alias, later ones (backward again) summed. */
static int retain_grad_store(CtTensorObject *t, PyObject *grad)
{
    PyObject *g;
    if (t->grad == NULL) {
        g = detached_alias(grad);
    } else {
        PyObject *args[2] = {t->grad, grad};
        g = ct_op("add", args, 2, NULL);
    }
    if (g == NULL) {
        return -1;
    }
    Py_XSETREF(t->grad, g);
    return 0;
}

/* Runs the tensor hooks in `hooks` (a list) on grad, in registration order; returns a new reference.
 * Items that are weak references mean retain_grad: as PyTorch, it runs after every hook, so the
 * tensor's .grad is the gradient the hooks made. */
static PyObject *run_hooks(PyObject *hooks, PyObject *grad)
{
    Py_INCREF(grad);
    for (Py_ssize_t i = 0; hooks != NULL && i < PyList_GET_SIZE(hooks); i++) {
        PyObject *h = PyList_GET_ITEM(hooks, i);
        if (PyTuple_Check(h) || PyWeakref_CheckRef(h)) { /* (hook,): post-accumulate-grad, run after .grad */
            continue;
        }
        Py_INCREF(h); /* the hook may remove itself */
        PyObject *r = PyObject_CallOneArg(h, grad);
        if (r == NULL || check_hook_value(h, grad, r) < 0) {
            Py_DECREF(h);
            Py_XDECREF(r);
            Py_DECREF(grad);
            return NULL;
        }
        Py_DECREF(h);
        if (r != Py_None) {
            Py_SETREF(grad, r);
        } else {
            Py_DECREF(r);
        }
    }
    for (Py_ssize_t i = 0; hooks != NULL && i < PyList_GET_SIZE(hooks); i++) {
        PyObject *h = PyList_GET_ITEM(hooks, i);
        PyObject *t = PyWeakref_CheckRef(h) ? PyWeakref_GetObject(h) : Py_None;
        if (t != Py_None && CtTensor_Check(t) && retain_grad_store(CT_TENSOR(t), grad) < 0) {
            Py_DECREF(grad);
            return NULL;
        }
    }
    return grad;
}

/* --- Node.register_hook / register_prehook ------------------------------------------------------------ */
/* Tuple of the n gradients in g (NULL: None). New reference. */
static PyObject *grads_tuple(PyObject *const *g, int n)
{
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t != NULL && i < n; i++) {
        PyTuple_SET_ITEM(t, i, Py_NewRef(g[i] != NULL ? g[i] : Py_None));
    }
    return t;
}

/* Calls each hook of the list with (values,) or (values, extra); a hook returning something other
 * than None replaces values: a tuple of as many tensors or Nones, each checked as PyTorch's
 * check_single_result. Then writes values back into g (NULL for None). 0 or -1. */
static int apply_node_hooks(PyObject *hooks, PyObject **g, int n, PyObject *extra)
{
    PyObject *values = grads_tuple(g, n);
    for (Py_ssize_t h = 0; values != NULL && h < PyList_GET_SIZE(hooks); h++) {
        PyObject *hook = Py_NewRef(PyList_GET_ITEM(hooks, h));
        PyObject *r = extra != NULL ? PyObject_CallFunctionObjArgs(hook, values, extra, NULL)
                                    : PyObject_CallOneArg(hook, values);
        bool failed = r == NULL;
        if (!failed && r != Py_None && !PyTuple_Check(r)) {
            PyErr_Format(PyExc_TypeError, "expected tuple, but hook returned '%s'", _PyType_Name(Py_TYPE(r)));
            failed = true;
        } else if (!failed && r != Py_None && PyTuple_GET_SIZE(r) != n) {
            PyObject *name = hook_name(hook);
            if (name != NULL) {
                PyErr_Format(PyExc_RuntimeError, "hook '%U' has returned an incorrect number of values (got %zd, "
                             "but expected %d)", name, PyTuple_GET_SIZE(r), n);
                Py_DECREF(name);
            }
            failed = true;
        }
        for (int i = 0; !failed && r != Py_None && i < n; i++) {
            failed = check_hook_value(hook, PyTuple_GET_ITEM(values, i), PyTuple_GET_ITEM(r, i)) < 0;
        }
        Py_DECREF(hook);
        if (failed) {
            Py_XDECREF(r);
            Py_CLEAR(values);
        } else if (r != Py_None) {
            Py_SETREF(values, r);
        } else {
            Py_DECREF(r);
        }
    }
    if (values == NULL) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        PyObject *v = PyTuple_GET_ITEM(values, i);
        Py_XSETREF(g[i], v != Py_None ? Py_NewRef(v) : NULL);
    }
    Py_DECREF(values);
    return 0;
}

/* Node.register_hook's hooks: hook(grad_inputs, grad_outputs) after the node ran; may replace grad_inputs. */
static int run_node_post_hooks(CtNodeObject *n, PyObject **outs, PyObject **grad_inputs)
{
    PyObject *go = grads_tuple(outs, n->num_outputs);
    if (go == NULL) {
        return -1;
    }
    int rc = apply_node_hooks(n->fn_hooks, grad_inputs, n->num_edges, go);
    Py_DECREF(go);
    return rc;
}

/* PyTorch's gradient layout contract: a leaf's .grad has the leaf's strides (those of size-1 dims
 * aside) when the leaf is non-overlapping and dense, else is contiguous; so a channels_last
 * parameter gets a channels_last .grad whatever layout the backward produced. */
static bool obeys_layout_contract(const CtTensorObject *g, const CtTensorObject *leaf)
{
    if (!ct_non_overlapping_and_dense(leaf)) {
        return ct_is_contiguous(g);
    }
    for (int d = 0; d < g->ndim; d++) {
        if (g->sizes[d] != 1 ? g->strides[d] != leaf->strides[d] : g->strides[d] == 0) {
            return false;
        }
    }
    return true;
}

/* The gradient to store into leaf's .grad: grad itself when it obeys the layout contract and
 * aliases no other tensor's memory (without create_graph), else a copy laid out by the contract
 * (with create_graph a recorded copy_, so the stored gradient stays differentiable). */
static PyObject *owned_grad(PyObject *grad, const CtTensorObject *leaf, bool create_graph)
{
    CtTensorObject *g = CT_TENSOR(grad);
    bool laid_out = obeys_layout_contract(g, leaf);
    if (laid_out && (create_graph || (Py_REFCNT(grad) == 1 && Py_REFCNT(g->storage) == 1 && g->grad_fn == NULL))) {
        return Py_NewRef(grad);
    }
    CtTensorObject *out = ct_empty(g->ndim, g->sizes, g->dtype, ct_device_of(g));
    if (out == NULL) {
        return NULL;
    }
    if (ct_non_overlapping_and_dense(leaf)) { /* dense: the contiguous storage fits */
        memcpy(out->strides, leaf->strides, sizeof(int64_t) * g->ndim);
    }
    if (create_graph) {
        PyObject *r = ct_call_method((PyObject *)out, "copy_", "(O)", grad);
        Py_DECREF(out);
        return r;
    }
    if (ct_copy_(out, g) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return (PyObject *)out;
}

static int accumulate_leaf(CtNodeObject *node, PyObject *grad, bool create_graph)
{
    CtTensorObject *leaf = CT_TENSOR(node->variable);
    if (leaf->ndim != CT_TENSOR(grad)->ndim ||
        memcmp(leaf->sizes, CT_TENSOR(grad)->sizes, sizeof(int64_t) * leaf->ndim) != 0) {
        char a[256], b[256];
        ct_format_sizes(a, sizeof(a), CT_TENSOR(grad)->ndim, CT_TENSOR(grad)->sizes);
        ct_format_sizes(b, sizeof(b), leaf->ndim, leaf->sizes);
        PyErr_Format(PyExc_RuntimeError, "Function AccumulateGrad returned an invalid gradient - got %s but expected "
                     "shape compatible with %s", a, b);
        return -1;
    }
    PyObject *g = run_hooks(leaf->hooks, grad);
    if (g == NULL) {
        return -1;
    }
    int rc = 0;
    if (leaf->grad == NULL) {
        PyObject *owned = owned_grad(g, leaf, create_graph);
        if (owned == NULL) {
            rc = -1;
        } else {
            leaf->grad = owned;
        }
    } else if (!create_graph) {
        PyObject *r = ct_call_method(leaf->grad, "add_", "(O)", g);
        rc = r == NULL ? -1 : 0;
        Py_XDECREF(r);
    } else {
        PyObject *args[2] = {leaf->grad, g};
        PyObject *r = ct_op("add", args, 2, NULL);
        if (r == NULL) {
            rc = -1;
        } else {
            Py_SETREF(leaf->grad, r);
        }
    }
    Py_DECREF(g);
    for (Py_ssize_t i = 0; rc == 0 && leaf->hooks != NULL && i < PyList_GET_SIZE(leaf->hooks); i++) {
        PyObject *h = PyList_GET_ITEM(leaf->hooks, i);
        if (!PyTuple_Check(h)) {
            continue;
        }
        Py_INCREF(h); /* the hook may remove itself */
        PyObject *r = PyObject_CallOneArg(PyTuple_GET_ITEM(h, 0), node->variable);
        Py_DECREF(h);
        if (r != NULL && r != Py_None) {
            PyErr_SetString(PyExc_RuntimeError, "Tensor post accumulate grad hooks should return None.");
        }
        rc = r == Py_None ? 0 : -1;
        Py_XDECREF(r);
    }
    return rc;
}

static int call_python_function(CtNodeObject *node, PyObject *const *grads, PyObject **grad_inputs)
{
    PyObject *tuple = PyTuple_New(node->num_outputs);
    if (tuple == NULL) {
        return -1;
    }
    for (int i = 0; i < node->num_outputs; i++) {
        PyTuple_SET_ITEM(tuple, i, Py_NewRef(grads[i] ? grads[i] : Py_None));
    }
    PyObject *r = ct_call_method(node->py_ctx, "_run_backward", "(O)", tuple);
    Py_DECREF(tuple);
    if (r == NULL) {
        return -1;
    }
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != node->num_edges) {
        PyErr_Format(PyExc_RuntimeError, "function %s returned an incorrect number of gradients (expected %d)",
                     _PyType_Name(Py_TYPE(node)), node->num_edges);
        Py_DECREF(r);
        return -1;
    }
    for (int e = 0; e < node->num_edges; e++) {
        PyObject *g = PyTuple_GET_ITEM(r, e);
        grad_inputs[e] = g == Py_None ? NULL : Py_NewRef(g);
    }
    Py_DECREF(r);
    return 0;
}

typedef struct {
    PyObject *node; /* where the gradient is captured (new reference: a leaf's AccumulateGrad node is
                     * held only weakly by its leaf, and a freed one's address can be reused) */
    int nr;
    PyObject *grad; /* result (new reference) */
} Capture;

/* --- which nodes autograd.grad needs ---------------------------------------------------------------- */
/* With captures only the nodes on a path to a captured node run, and their formulas see only the edges
 * on such a path (the others hidden as NULL, as PyTorch's exec_info / task_should_compute_output), so
 * autograd.grad(out, x) computes no weight gradient and runs nothing that leads only to other leaves. */
#define CT_MARK_VISITING 1
#define CT_MARK_DONE 2
#define CT_MARK_CAPTURED 4 /* a gradient is captured at one of its outputs */
#define CT_MARK_FEEDS 8    /* one of its edges leads to a needed node */
#define CT_MARK_NEEDED (CT_MARK_CAPTURED | CT_MARK_FEEDS)

/* Marks every node of all (the nodes reachable from the roots) by a post-order walk with an explicit
 * stack (deep graphs need no recursion). 0 or -1. */
static int mark_needed(PyObject *all, const Capture *captures, Py_ssize_t ncaptures, uint64_t run)
{
    Py_ssize_t count = PyList_GET_SIZE(all);
    typedef struct {
        CtNodeObject *node;
        int edge; /* next edge to follow */
    } Frame;
    Frame *stack = PyMem_Malloc(sizeof(Frame) * (count > 0 ? count : 1)); /* each node is pushed once */
    if (stack == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        ((CtNodeObject *)PyList_GET_ITEM(all, i))->engine_mark = 0;
    }
    for (Py_ssize_t c = 0; c < ncaptures; c++) {
        CtNodeObject *n = (CtNodeObject *)captures[c].node;
        if (n != NULL && n->engine_run == run) {
            n->engine_mark |= CT_MARK_CAPTURED;
        }
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        CtNodeObject *start = (CtNodeObject *)PyList_GET_ITEM(all, i);
        if (start->engine_mark & CT_MARK_DONE) {
            continue;
        }
        Py_ssize_t top = 0;
        stack[top++] = (Frame){start, 0};
        start->engine_mark |= CT_MARK_VISITING;
        while (top > 0) {
            Frame *f = &stack[top - 1];
            if (f->edge < f->node->num_edges) {
                CtNodeObject *next = (CtNodeObject *)f->node->edge_nodes[f->edge++];
                if (next == NULL) {
                    continue;
                }
                if (!(next->engine_mark & (CT_MARK_VISITING | CT_MARK_DONE))) {
                    next->engine_mark |= CT_MARK_VISITING;
                    stack[top++] = (Frame){next, 0};
                } else if (next->engine_mark & CT_MARK_NEEDED) {
                    f->node->engine_mark |= CT_MARK_FEEDS;
                }
                continue;
            }
            CtNodeObject *done = f->node;
            done->engine_mark = (done->engine_mark & ~CT_MARK_VISITING) | CT_MARK_DONE;
            if (--top > 0 && (done->engine_mark & CT_MARK_NEEDED)) {
                stack[top - 1].node->engine_mark |= CT_MARK_FEEDS;
            }
        }
    }
    PyMem_Free(stack);
    return 0;
}

/* Whether a gradient sent to next may matter: always without captures, else when next is needed. */
static inline bool edge_needed(const CtNodeObject *next, bool filter)
{
    return next != NULL && (!filter || (next->engine_mark & CT_MARK_NEEDED));
}

/* Runs a formula node's backward with the edges no capture needs hidden (NULL) for the call. */
static int formula_backward_filtered(CtNodeObject *n, PyObject **outs, PyObject **grad_inputs, bool filter)
{
    if (unpack_saved(n) < 0) {
        repack_saved(n);
        return -1;
    }
    if (!filter) {
        int rc = n->formula->backward(n, outs, grad_inputs);
        repack_saved(n);
        return rc;
    }
    PyObject **hidden = PyMem_Calloc(n->num_edges > 0 ? n->num_edges : 1, sizeof(PyObject *));
    if (hidden == NULL) {
        repack_saved(n);
        PyErr_NoMemory();
        return -1;
    }
    for (int e = 0; e < n->num_edges; e++) {
        if (n->edge_nodes[e] != NULL && !edge_needed((CtNodeObject *)n->edge_nodes[e], true)) {
            hidden[e] = n->edge_nodes[e]; /* the reference stays owned by the node */
            n->edge_nodes[e] = NULL;
        }
    }
    int rc = n->formula->backward(n, outs, grad_inputs);
    for (int e = 0; e < n->num_edges; e++) {
        if (hidden[e] != NULL) {
            n->edge_nodes[e] = hidden[e];
        }
    }
    PyMem_Free(hidden);
    repack_saved(n);
    return rc;
}

/* --- nested runs ---------------------------------------------------------------------------------- */
/* A backward run inside another (a custom Function's backward calling autograd.grad / backward, as
 * torch.utils.checkpoint does) may reach nodes of the outer run, e.g. a parameter's AccumulateGrad. Their
 * engine scratch (dependencies, buffer, mark) belongs to the outer run: it is set aside when the inner
 * run claims the node and put back when the inner run ends, as PyTorch keeps it per graph task. */
typedef struct {
    CtNodeObject *node; /* strong reference */
    uint64_t run;
    int64_t dependencies;
    int mark;
    PyObject *buffer; /* owned */
} OuterScratch;

typedef struct {
    OuterScratch *items;
    Py_ssize_t size, cap;
} OuterScratchList;

/* Makes n part of run (fresh scratch) and appends it to stack and all; an outer run's scratch is kept
 * in outer. 0 or -1. */
static int claim_node(CtNodeObject *n, uint64_t run, PyObject *stack, PyObject *all, OuterScratchList *outer)
{
    if (n->engine_run != 0) { /* an unfinished outer run's node */
        if (outer->size == outer->cap) {
            Py_ssize_t cap = outer->cap ? 2 * outer->cap : 8;
            OuterScratch *items = PyMem_Realloc(outer->items, (size_t)cap * sizeof(OuterScratch));
            if (items == NULL) {
                PyErr_NoMemory();
                return -1;
            }
            outer->items = items;
            outer->cap = cap;
        }
        outer->items[outer->size++] = (OuterScratch){(CtNodeObject *)Py_NewRef(n), n->engine_run, n->dependencies,
                                                      n->engine_mark, n->buffer};
        n->buffer = NULL;
    }
    n->engine_run = run;
    n->dependencies = 0;
    Py_CLEAR(n->buffer);
    if (PyList_Append(stack, (PyObject *)n) < 0 || PyList_Append(all, (PyObject *)n) < 0) {
        return -1;
    }
    return 0;
}

/* Anomaly mode (torch.autograd.detect_anomaly): a NaN in a node's gradients raises PyTorch's
 * "Function 'XBackward0' returned nan values in its 0th output." 0 or -1. */
static int check_anomaly(CtNodeObject *n, PyObject *const *grad_inputs)
{
    for (int e = 0; e < n->num_edges; e++) {
        PyObject *g = grad_inputs[e];
        if (g == NULL || !CtTensor_Check(g) || !ct_is_floating(CT_TENSOR(g)->dtype)) {
            continue;
        }
        PyObject *nan = ct_op("isnan", &g, 1, NULL);
        PyObject *any = nan != NULL ? ct_call_method(nan, "any", NULL) : NULL;
        int found = any != NULL ? PyObject_IsTrue(any) : -1;
        Py_XDECREF(any);
        Py_XDECREF(nan);
        if (found != 0) {
            if (found > 0) {
                PyErr_Format(PyExc_RuntimeError, "Function '%s' returned nan values in its %dth output.",
                             _PyType_Name(Py_TYPE(n)), e);
            }
            return -1;
        }
    }
    return 0;
}

/* Gives the outer runs their nodes' scratch back (last claimed first) and empties outer. */
static void restore_outer(OuterScratchList *outer)
{
    for (Py_ssize_t i = outer->size - 1; i >= 0; i--) {
        OuterScratch *o = &outer->items[i];
        o->node->engine_run = o->run;
        o->node->dependencies = o->dependencies;
        o->node->engine_mark = o->mark;
        Py_XSETREF(o->node->buffer, o->buffer);
        Py_DECREF(o->node);
    }
    PyMem_Free(outer->items);
}

/* Runs backward from roots (tensors) seeded with grads. With captures (autograd.grad) the
 * gradients reaching those edges are returned there and leaves' .grad are left untouched. */
static int run_engine(PyObject *roots, PyObject *grads, bool retain_graph, bool create_graph, Capture *captures,
                      Py_ssize_t ncaptures)
{
    uint64_t run = ++engine_runs;
    uint64_t outer_run = current_run;
    bool outer_filtered = current_run_filtered;
    current_run = run;
    current_run_filtered = ncaptures > 0;
    NodeHeap ready = {NULL, 0, 0};
    PyObject *stack = PyList_New(0), *all = PyList_New(0); /* all: strong refs to every visited node */
    PyObject **grad_inputs = NULL; /* of the node being run: num_edges entries */
    PyObject **outs = NULL;        /* its num_outputs incoming gradients */
    int nouts = 0, nedges = 0;     /* their lengths, for the cleanup after a failure */
    OuterScratchList outer = {NULL, 0, 0};
    CtProfilerMark mark; /* the node being run, while a profile runs */
    bool profiled = false;
    int rc = -1;
    bool prev_mode = ct_grad_enabled;
    if (stack == NULL || all == NULL) {
        goto done;
    }
    Py_ssize_t nroots = PyList_GET_SIZE(roots);
    /* Root edges. */
    for (Py_ssize_t i = 0; i < nroots; i++) {
        CtTensorObject *t = CT_TENSOR(PyList_GET_ITEM(roots, i));
        PyObject *node;
        int nr;
        if (edge_for(t, &node, &nr) < 0) {
            goto done;
        }
        if (node == NULL) {
            PyErr_Format(PyExc_RuntimeError, "element %zd of tensors does not require grad and does not have a "
                         "grad_fn", i);
            goto done;
        }
        CtNodeObject *n = (CtNodeObject *)node;
        if (n->engine_run != run && claim_node(n, run, stack, all, &outer) < 0) {
            Py_DECREF(node);
            goto done;
        }
        Py_DECREF(node);
    }
    /* Dependencies: how many edges point at each reachable node. */
    while (PyList_GET_SIZE(stack) > 0) {
        Py_ssize_t last = PyList_GET_SIZE(stack) - 1;
        CtNodeObject *n = (CtNodeObject *)PyList_GET_ITEM(stack, last);
        Py_INCREF(n);
        if (PyList_SetSlice(stack, last, last + 1, NULL) < 0) {
            Py_DECREF(n);
            goto done;
        }
        for (int e = 0; e < n->num_edges; e++) {
            CtNodeObject *next = (CtNodeObject *)n->edge_nodes[e];
            if (next == NULL) {
                continue;
            }
            if (next->engine_run != run && claim_node(next, run, stack, all, &outer) < 0) {
                Py_DECREF(n);
                goto done;
            }
            next->dependencies++;
        }
        Py_DECREF(n);
    }
    bool filter = ncaptures > 0;
    if (filter && mark_needed(all, captures, ncaptures, run) < 0) {
        goto done;
    }
    /* Seed the roots. */
    for (Py_ssize_t i = 0; i < nroots; i++) {
        CtTensorObject *t = CT_TENSOR(PyList_GET_ITEM(roots, i));
        PyObject *node;
        int nr;
        if (edge_for(t, &node, &nr) < 0) {
            goto done;
        }
        int r = buffer_add((CtNodeObject *)node, nr, PyList_GET_ITEM(grads, i));
        CtNodeObject *n = (CtNodeObject *)node;
        if (r == 0 && n->dependencies == 0 && edge_needed(n, filter)) {
            bool queued = false;
            for (Py_ssize_t k = 0; k < ready.size; k++) {
                queued |= ready.items[k] == n;
            }
            if (!queued) {
                r = heap_push(&ready, n);
            }
        }
        Py_DECREF(node);
        if (r < 0) {
            goto done;
        }
    }
    ct_grad_enabled = create_graph;
    while (ready.size > 0) {
        CtNodeObject *n = heap_pop(&ready);
        PyObject *buffer = n->buffer ? Py_NewRef(n->buffer) : NULL;
        Py_CLEAR(n->buffer);
        bool any = false;
        outs = PyMem_Calloc(n->num_outputs > 0 ? n->num_outputs : 1, sizeof(PyObject *));
        nouts = n->num_outputs;
        if (outs == NULL) {
            Py_XDECREF(buffer);
            PyErr_NoMemory();
            goto done;
        }
        for (int i = 0; buffer != NULL && i < n->num_outputs; i++) {
            PyObject *g = PyList_GET_ITEM(buffer, i);
            if (g == Py_None) {
                continue;
            }
            /* tensor hooks and retain_grad on this output */
            PyObject *hooks = NULL;
            if (n->pre_hooks != NULL) {
                PyObject *key = PyLong_FromLong(i);
                hooks = key ? PyDict_GetItemWithError(n->pre_hooks, key) : NULL;
                Py_XDECREF(key);
                if (hooks == NULL && PyErr_Occurred()) {
                    Py_DECREF(buffer);
                    goto done;
                }
            }
            outs[i] = hooks ? run_hooks(hooks, g) : Py_NewRef(g);
            if (outs[i] == NULL) {
                Py_DECREF(buffer);
                goto done;
            }
            any = true;
        }
        Py_XDECREF(buffer);
        if (ncaptures > 0 && n->kind == CT_NODE_ACCUMULATE && n->variable != NULL && outs[0] != NULL) {
            /* autograd.grad captures a leaf's gradient after the leaf's tensor hooks, as PyTorch */
            PyObject *hooked = run_hooks(CT_TENSOR(n->variable)->hooks, outs[0]);
            if (hooked == NULL) {
                goto done;
            }
            Py_SETREF(outs[0], hooked);
        }
        for (Py_ssize_t c = 0; c < ncaptures; c++) {
            if (captures[c].node == (PyObject *)n && outs[captures[c].nr] != NULL && captures[c].grad == NULL) {
                captures[c].grad = Py_NewRef(outs[captures[c].nr]);
            }
        }
        grad_inputs = PyMem_Calloc(n->num_edges > 0 ? n->num_edges : 1, sizeof(PyObject *));
        nedges = n->num_edges;
        if (grad_inputs == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        if (filter && !(n->engine_mark & CT_MARK_FEEDS)) {
            /* only captured: nothing it would compute is needed */
        } else if (any) {
            profiled = ct_profiler_on;
            if (profiled) {
                ct_profiler_begin(&mark, outs, n->num_outputs);
            }
            if (n->fn_prehooks != NULL && apply_node_hooks(n->fn_prehooks, outs, n->num_outputs, NULL) < 0) {
                goto done;
            }
            if (n->kind == CT_NODE_ACCUMULATE) {
                if (ncaptures == 0 && accumulate_leaf(n, outs[0], create_graph) < 0) {
                    goto done;
                }
            } else if (n->kind == CT_NODE_PYFUNCTION) {
                if (n->released) {
                    PyErr_SetString(PyExc_RuntimeError, freed_message);
                    goto done;
                }
                if (call_python_function(n, outs, grad_inputs) < 0) {
                    goto done;
                }
            } else if (n->kind == CT_NODE_COPYSLICES || n->kind == CT_NODE_VIEW) {
                if (n->released) {
                    PyErr_SetString(PyExc_RuntimeError, freed_message);
                    goto done;
                }
                int r = n->kind == CT_NODE_VIEW ? view_node_backward(n, outs, grad_inputs)
                                                : copyslices_backward(n, outs, grad_inputs);
                if (r < 0) {
                    goto done;
                }
            } else {
                if (n->num_outputs == 1 && outs[0] == NULL) {
                    /* nothing flows */
                } else if (n->formula->flags & CT_F_NO_DERIV) {
                    PyErr_Format(PyExc_NotImplementedError, "derivative for aten::%s is not implemented",
                                 n->formula->op);
                    goto done;
                } else if (formula_backward_filtered(n, outs, grad_inputs, filter) < 0) {
                    goto done;
                }
            }
            if (!retain_graph) {
                node_release_saved(n);
            }
            if (n->fn_hooks != NULL && run_node_post_hooks(n, outs, grad_inputs) < 0) {
                goto done;
            }
            if (ct_anomaly_enabled && ct_anomaly_check_nan && check_anomaly(n, grad_inputs) < 0) {
                goto done;
            }
            if (profiled) {
                profiled = false;
                if (ct_profiler_end_node(&mark, (PyObject *)n) < 0) {
                    goto done;
                }
            }
        }
        for (int i = 0; i < n->num_outputs; i++) {
            Py_CLEAR(outs[i]);
        }
        PyMem_Free(outs);
        outs = NULL;
        for (int e = 0; e < n->num_edges; e++) {
            CtNodeObject *next = (CtNodeObject *)n->edge_nodes[e];
            if (!edge_needed(next, filter)) {
                Py_CLEAR(grad_inputs[e]); /* an unneeded node is never queued: no count to keep */
                continue;
            }
            if (grad_inputs[e] != NULL) {
                int r = buffer_add(next, n->edge_input_nr[e], grad_inputs[e]);
                Py_CLEAR(grad_inputs[e]);
                if (r < 0) {
                    goto done;
                }
            }
            if (--next->dependencies == 0 && heap_push(&ready, next) < 0) {
                goto done;
            }
        }
        PyMem_Free(grad_inputs);
        grad_inputs = NULL;
    }
    rc = 0;
done:
    if (profiled) {
        ct_profiler_cancel(&mark); /* the node failed: no event */
    }
    current_run = outer_run;
    current_run_filtered = outer_filtered;
    ct_grad_enabled = prev_mode;
    /* a failing node: its incoming gradients, and what its backward or hooks computed before failing */
    for (int i = 0; outs != NULL && i < nouts; i++) {
        Py_XDECREF(outs[i]);
    }
    for (int e = 0; grad_inputs != NULL && e < nedges; e++) {
        Py_XDECREF(grad_inputs[e]);
    }
    PyMem_Free(grad_inputs);
    PyMem_Free(outs);
    PyMem_Free(ready.items);
    if (all != NULL) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(all); i++) {
            CtNodeObject *n = (CtNodeObject *)PyList_GET_ITEM(all, i);
            Py_CLEAR(n->buffer);
            n->engine_run = 0;
        }
    }
    restore_outer(&outer);
    Py_XDECREF(stack);
    Py_XDECREF(all);
    return rc;
}

/* _current_backward_run(): an id of the innermost backward run in progress, or None */
static PyObject *py_current_backward_run(PyObject *self, PyObject *unused)
{
    return current_run != 0 ? PyLong_FromUnsignedLongLong(current_run) : Py_NewRef(Py_None);
}

/* _will_engine_execute(tensor): whether the backward run in progress computes tensor's gradient
 * (its node, or a leaf's AccumulateGrad, is among those the run executes) */
static PyObject *py_will_engine_execute(PyObject *self, PyObject *t)
{
    if (!CtTensor_Check(t)) {
        PyErr_SetString(PyExc_TypeError, "_will_engine_execute(): expected a Tensor");
        return NULL;
    }
    PyObject *node;
    int nr;
    if (current_run == 0 || edge_for(CT_TENSOR(t), &node, &nr) < 0) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_False);
    }
    CtNodeObject *n = (CtNodeObject *)node;
    bool runs = n != NULL && n->engine_run == current_run && (!current_run_filtered || (n->engine_mark & CT_MARK_NEEDED));
    Py_XDECREF(node);
    return PyBool_FromLong(runs);
}

/* _run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, allow_unused)
 * inputs=None: accumulate into leaves' .grad and return None; else return a tuple of grads. */
static PyObject *py_run_backward(PyObject *self, PyObject *args)
{
    PyObject *tensors, *grads, *inputs;
    int retain_graph, create_graph, allow_unused;
    if (!PyArg_ParseTuple(args, "OOppOp", &tensors, &grads, &retain_graph, &create_graph, &inputs, &allow_unused)) {
        return NULL;
    }
    PyObject *roots = PySequence_List(tensors);
    PyObject *seeds = PyList_New(0);
    PyObject *result = NULL;
    Capture *caps = NULL;
    Py_ssize_t ncaps = 0;
    if (roots == NULL || seeds == NULL) {
        goto done;
    }
    PyObject *gl = PySequence_List(grads);
    if (gl == NULL) {
        goto done;
    }
    if (PyList_GET_SIZE(gl) != PyList_GET_SIZE(roots)) {
        PyErr_Format(PyExc_RuntimeError, "grad can be implicitly created only for scalar outputs");
        Py_DECREF(gl);
        goto done;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(roots); i++) {
        PyObject *t = PyList_GET_ITEM(roots, i), *g = PyList_GET_ITEM(gl, i);
        if (!CtTensor_Check(t)) {
            PyErr_SetString(PyExc_TypeError, "backward() expects tensors");
            Py_DECREF(gl);
            goto done;
        }
        if (!tensor_requires_grad(CT_TENSOR(t))) {
            PyErr_Format(PyExc_RuntimeError, "element %zd of tensors does not require grad and does not have a "
                         "grad_fn", i);
            Py_DECREF(gl);
            goto done;
        }
        PyObject *seed;
        if (g == Py_None) {
            if (ct_numel(CT_TENSOR(t)) != 1) {
                PyErr_SetString(PyExc_RuntimeError, "grad can be implicitly created only for scalar outputs");
                Py_DECREF(gl);
                goto done;
            }
            PyObject *a[1] = {t};
            seed = ct_op("ones_like", a, 1, NULL);
        } else {
            if (!CtTensor_Check(g)) {
                PyErr_SetString(PyExc_TypeError, "gradient must be a Tensor or None");
                Py_DECREF(gl);
                goto done;
            }
            CtTensorObject *gt = CT_TENSOR(g), *tt = CT_TENSOR(t);
            if (gt->ndim != tt->ndim || memcmp(gt->sizes, tt->sizes, sizeof(int64_t) * tt->ndim) != 0) {
                char a[256], b[256];
                ct_format_sizes(a, sizeof(a), gt->ndim, gt->sizes);
                ct_format_sizes(b, sizeof(b), tt->ndim, tt->sizes);
                PyErr_Format(PyExc_RuntimeError, "Mismatch in shape: grad_output[%zd] has a shape of torch.Size(%s) "
                             "and output[%zd] has a shape of torch.Size(%s).", i, a, i, b);
                Py_DECREF(gl);
                goto done;
            }
            seed = Py_NewRef(g);
        }
        if (seed == NULL || PyList_Append(seeds, seed) < 0) {
            Py_XDECREF(seed);
            Py_DECREF(gl);
            goto done;
        }
        Py_DECREF(seed);
    }
    Py_DECREF(gl);
    if (inputs != Py_None) {
        PyObject *il = PySequence_Fast(inputs, "inputs must be a sequence of tensors");
        if (il == NULL) {
            goto done;
        }
        ncaps = PySequence_Fast_GET_SIZE(il);
        caps = PyMem_Calloc(ncaps ? ncaps : 1, sizeof(Capture));
        if (caps == NULL) {
            Py_DECREF(il);
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t i = 0; i < ncaps; i++) {
            PyObject *t = PySequence_Fast_GET_ITEM(il, i);
            if (!CtTensor_Check(t) || !tensor_requires_grad(CT_TENSOR(t))) {
                PyErr_Format(PyExc_RuntimeError, "One of the differentiated Tensors does not require grad");
                Py_DECREF(il);
                goto done;
            }
            PyObject *node;
            if (edge_for(CT_TENSOR(t), &node, &caps[i].nr) < 0) {
                Py_DECREF(il);
                goto done;
            }
            caps[i].node = node;
        }
        Py_DECREF(il);
    }
    if (run_engine(roots, seeds, retain_graph, create_graph, caps, inputs == Py_None ? 0 : ncaps) < 0) {
        goto done;
    }
    if (inputs == Py_None) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    result = PyTuple_New(ncaps);
    for (Py_ssize_t i = 0; result != NULL && i < ncaps; i++) {
        if (caps[i].grad == NULL && !allow_unused) {
            PyErr_Format(PyExc_RuntimeError, "The differentiated Tensor at index %zd appears to not have been used in "
                         "the graph. Set allow_unused=True if this is the desired behavior.", i);
            Py_CLEAR(result);
            break;
        }
        PyTuple_SET_ITEM(result, i, caps[i].grad ? Py_NewRef(caps[i].grad) : Py_NewRef(Py_None));
    }
done:
    for (Py_ssize_t i = 0; caps != NULL && i < ncaps; i++) {
        Py_XDECREF(caps[i].node);
        Py_XDECREF(caps[i].grad);
    }
    PyMem_Free(caps);
    Py_XDECREF(roots);
    Py_XDECREF(seeds);
    return result;
}

/* --- Python-level Function nodes ----------------------------------------------------------------------------- */
/* _make_function_node(name, ctx, inputs, outputs): the node of a custom autograd.Function. */
static PyObject *py_make_function_node(PyObject *self, PyObject *args)
{
    const char *name;
    PyObject *ctx, *inputs, *outputs;
    if (!PyArg_ParseTuple(args, "sOOO", &name, &ctx, &inputs, &outputs) || !PyTuple_Check(inputs) ||
        !PyTuple_Check(outputs)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "_make_function_node(name, ctx, inputs: tuple, outputs: tuple)");
        }
        return NULL;
    }
    Py_ssize_t ni = PyTuple_GET_SIZE(inputs), no = PyTuple_GET_SIZE(outputs);
    CtNodeObject *node = node_new(name, CT_NODE_PYFUNCTION, (int)ni, (int)no);
    if (node == NULL) {
        return NULL;
    }
    node->py_ctx = Py_NewRef(ctx);
    for (Py_ssize_t i = 0; i < ni; i++) {
        PyObject *t = PyTuple_GET_ITEM(inputs, i);
        if (CtTensor_Check(t) && edge_for(CT_TENSOR(t), &node->edge_nodes[i], &node->edge_input_nr[i]) < 0) {
            Py_DECREF(node);
            return NULL;
        }
    }
    for (Py_ssize_t j = 0; j < no; j++) {
        set_output_history(node, PyTuple_GET_ITEM(outputs, j), (int)j, NULL);
    }
    return (PyObject *)node;
}

/* --- tensor-facing helpers ---------------------------------------------------------------------------------- */
PyObject *ct_autograd_get_grad_fn(CtTensorObject *t)
{
    if (ct_autograd_refresh_view(t) < 0) {
        return NULL;
    }
    return Py_NewRef(t->grad_fn ? t->grad_fn : Py_None);
}

int ct_autograd_set_requires_grad(CtTensorObject *t, int value)
{
    if (t->grad_fn != NULL) {
        if (!value) {
            PyErr_SetString(PyExc_RuntimeError,
                            "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                            "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
            return -1;
        }
        return 0;
    }
    if (value && !ct_is_floating(t->dtype)) {
        PyErr_SetString(PyExc_RuntimeError, "only Tensors of floating point dtype can require gradients");
        return -1;
    }
    t->requires_grad = value;
    return 0;
}

/* Registers a hook (or, with a weakref, retain_grad) for the gradient of non-leaf t. */
static int add_pre_hook(CtTensorObject *t, PyObject *hook)
{
    CtNodeObject *n = (CtNodeObject *)t->grad_fn;
    if (n->pre_hooks == NULL && (n->pre_hooks = PyDict_New()) == NULL) {
        return -1;
    }
    PyObject *key = PyLong_FromLong(t->output_nr);
    if (key == NULL) {
        return -1;
    }
    PyObject *list = PyDict_GetItemWithError(n->pre_hooks, key);
    if (list == NULL) {
        if (PyErr_Occurred() || (list = PyList_New(0)) == NULL || PyDict_SetItem(n->pre_hooks, key, list) < 0) {
            Py_XDECREF(list);
            Py_DECREF(key);
            return -1;
        }
        Py_DECREF(list);
    }
    Py_DECREF(key);
    return PyList_Append(list, hook);
}

static PyObject *tensor_register_hook(PyObject *self, PyObject *hook)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (!tensor_requires_grad(t)) {
        PyErr_SetString(PyExc_RuntimeError, "cannot register a hook on a tensor that doesn't require gradient");
        return NULL;
    }
    if (!PyCallable_Check(hook)) {
        PyErr_SetString(PyExc_TypeError, "hook must be callable");
        return NULL;
    }
    if (t->grad_fn != NULL) {
        if (add_pre_hook(t, hook) < 0) {
            return NULL;
        }
    } else {
        if (t->hooks == NULL && (t->hooks = PyList_New(0)) == NULL) {
            return NULL;
        }
        if (PyList_Append(t->hooks, hook) < 0) {
            return NULL;
        }
    }
    /* A handle with remove(), built in Python (ctorch.utils.hooks.RemovableHandle). */
    PyObject *mod = PyImport_ImportModule("ctorch.utils.hooks");
    if (mod == NULL) {
        return NULL;
    }
    PyObject *owner = t->grad_fn ? ((CtNodeObject *)t->grad_fn)->pre_hooks : t->hooks;
    PyObject *r = ct_call_method(mod, "_handle_for", "OOi", owner, hook, t->grad_fn ? t->output_nr : -1);
    Py_DECREF(mod);
    return r;
}

/* register_post_accumulate_grad_hook(hook): hook(tensor) after backward stores a leaf's .grad; kept in the
 * leaf's hook list as (hook,) so run_hooks passes over it */
static PyObject *tensor_register_post_accumulate_grad_hook(PyObject *self, PyObject *hook)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (!tensor_requires_grad(t)) {
        PyErr_SetString(PyExc_RuntimeError, "cannot register a hook on a tensor that doesn't require gradient");
        return NULL;
    }
    if (t->grad_fn != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "post accumulate grad hooks cannot be registered on non-leaf tensors");
        return NULL;
    }
    PyObject *entry = NULL, *mod = NULL, *r = NULL;
    if ((t->hooks == NULL && (t->hooks = PyList_New(0)) == NULL) || (entry = PyTuple_Pack(1, hook)) == NULL ||
        PyList_Append(t->hooks, entry) < 0 || (mod = PyImport_ImportModule("ctorch.utils.hooks")) == NULL) {
        goto done;
    }
    r = ct_call_method(mod, "_handle_for", "OOi", t->hooks, entry, -1);
done:
    Py_XDECREF(entry);
    Py_XDECREF(mod);
    return r;
}

static PyObject *tensor_retain_grad(PyObject *self, PyObject *unused)
{
    CtTensorObject *t = CT_TENSOR(self);
    if (!tensor_requires_grad(t)) {
        PyErr_SetString(PyExc_RuntimeError, "can't retain_grad on Tensor that has requires_grad=False");
        return NULL;
    }
    if (t->grad_fn == NULL || t->retains_grad) {
        Py_RETURN_NONE; /* leaves keep their grad anyway */
    }
    PyObject *ref = PyWeakref_NewRef(self, NULL);
    if (ref == NULL || add_pre_hook(t, ref) < 0) {
        Py_XDECREF(ref);
        return NULL;
    }
    Py_DECREF(ref);
    t->retains_grad = true;
    Py_RETURN_NONE;
}

static PyObject *tensor_requires_grad_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"requires_grad", NULL};
    PyObject *a[1];
    bool value = true;
    if (ct_parse_args("requires_grad_", args, nargs, kwnames, names, 0, a) < 0 || ct_arg_bool(a[0], &value) < 0 ||
        ct_autograd_set_requires_grad(CT_TENSOR(self), value) < 0) {
        return NULL;
    }
    return Py_NewRef(self);
}

static PyObject *py_set_grad_enabled(PyObject *self, PyObject *arg)
{
    int v = PyObject_IsTrue(arg);
    if (v < 0) {
        return NULL;
    }
    ct_grad_enabled = v;
    Py_RETURN_NONE;
}

static PyObject *py_is_grad_enabled(PyObject *self, PyObject *unused) { return PyBool_FromLong(ct_grad_enabled); }

PyMethodDef ct_autograd_tensor_methods[] = {
    {"register_hook", tensor_register_hook, METH_O, "register_hook(hook): hook(grad) may return a new grad"},
    {"register_post_accumulate_grad_hook", tensor_register_post_accumulate_grad_hook, METH_O,
     "register_post_accumulate_grad_hook(hook): hook(tensor) once backward has accumulated a leaf's .grad"},
    {"retain_grad", tensor_retain_grad, METH_NOARGS, "keep .grad for this non-leaf tensor"},
    {"requires_grad_", CT_FASTCALL(tensor_requires_grad_), CT_METH_FK, "requires_grad_(requires_grad=True)"},
    {NULL},
};

PyMethodDef ct_autograd_module_methods[] = {
    {"_run_backward", py_run_backward, METH_VARARGS, "the autograd engine"},
    {"_push_saved_tensors_default_hooks", py_push_saved_hooks, METH_VARARGS, "saved_tensors_hooks: push (pack, unpack)"},
    {"_pop_saved_tensors_default_hooks", py_pop_saved_hooks, METH_NOARGS, "saved_tensors_hooks: pop the innermost pair"},
    {"_saved_tensors_hooks_disable", py_saved_hooks_disable, METH_O, "disable_saved_tensors_hooks(message)"},
    {"_saved_tensors_hooks_set_disabled", py_saved_hooks_set_disabled, METH_O, "restores the disabled message or None"},
    {"_saved_tensors_hooks_current", py_saved_hooks_current, METH_NOARGS, "the innermost (pack, unpack) or None"},
    {"_saved_tensors_hooks_get_disabled_error_message", py_saved_hooks_disabled_message, METH_NOARGS,
     "the disabled message or None"},
    {"_increment_version", py_increment_version, METH_O, "bumps a tensor's version counter"},
    {"_current_backward_run", py_current_backward_run, METH_NOARGS, "the backward run in progress (id) or None"},
    {"_will_engine_execute", py_will_engine_execute, METH_O, "whether the run in progress computes tensor's grad"},
    {"_make_function_node", py_make_function_node, METH_VARARGS, "node for a custom autograd.Function"},
    {"_set_grad_enabled", py_set_grad_enabled, METH_O, "sets grad mode"},
    {"is_grad_enabled", py_is_grad_enabled, METH_NOARGS, "True when ops record history"},
    {NULL},
};

PyType_Slot ct_autograd_tensor_slots[] = {{0, NULL}};

static PyType_Slot node_slots[] = {
    {Py_tp_dealloc, node_dealloc},
    {Py_tp_traverse, node_traverse},
    {Py_tp_clear, node_clear},
    {Py_tp_methods, node_methods},
    {Py_tp_getset, node_getset},
    {Py_tp_getattro, node_getattro},
    {Py_tp_repr, node_repr},
    {Py_tp_doc, "A node of the autograd graph."},
    {0, NULL},
};

int ct_autograd_init(PyObject *module)
{
    static PyMemberDef node_members[] = {
        {"__weaklistoffset__", T_PYSSIZET, offsetof(CtNodeObject, weakreflist), READONLY, NULL},
        {NULL},
    };
    PyType_Slot slots[16];
    int k = 0;
    for (PyType_Slot *s = node_slots; s->slot; s++) {
        slots[k++] = *s;
    }
    slots[k].slot = Py_tp_members;
    slots[k++].pfunc = node_members;
    slots[k].slot = 0;
    slots[k].pfunc = NULL;
    PyType_Spec spec = {"ctorch.autograd.graph.Node", sizeof(CtNodeObject), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, slots};
    CtNode_Type = (PyTypeObject *)PyType_FromSpec(&spec);
    if (CtNode_Type == NULL || (node_types = PyDict_New()) == NULL) {
        return -1;
    }
    CtAutogradFunction_Type = (PyTypeObject *)PyType_FromSpec(&autograd_function_spec);
    if (CtAutogradFunction_Type == NULL) {
        return -1;
    }
    if (PyModule_AddObjectRef(module, "_Node", (PyObject *)CtNode_Type) < 0) {
        return -1;
    }
    /* ctorch._C._autograd.SavedTensor, where PyTorch has its class */
    CtSavedTensor_Type = (PyTypeObject *)PyType_FromSpec(&saved_tensor_spec);
    PyObject *sub = CtSavedTensor_Type != NULL ? PyModule_New("ctorch._C._autograd") : NULL;
    if (sub == NULL || PyModule_AddObjectRef(sub, "SavedTensor", (PyObject *)CtSavedTensor_Type) < 0 ||
        PyModule_AddObjectRef(module, "_autograd", sub) < 0) {
        Py_XDECREF(sub);
        return -1;
    }
    Py_DECREF(sub);
    return 0;
}
