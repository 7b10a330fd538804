/* autograd.h: the autograd engine. Ops are recorded generically: a table of formulas (one per
 * differentiable op, autograd_formulas.c) wraps the op's Python entry points so that, when grad
 * mode is on and an input requires grad, the call's normalised arguments and (optionally) its
 * outputs are saved in a node whose backward function computes the input gradients with ctorch
 * ops. The engine runs nodes in topological order without recursion. */
#ifndef CTORCH_AUTOGRAD_H
#define CTORCH_AUTOGRAD_H

#include "ctorch.h"

#define CT_MAX_FORMULA_ARGS 10

typedef struct CtNodeObject CtNodeObject;

/* grad_outputs[i]: gradient for output i (borrowed) or NULL when that output got none (only for
 * nodes with several outputs). grad_inputs[e]: set a new reference (or leave NULL) for edge e. */
typedef int (*CtBackwardFn)(CtNodeObject *node, PyObject *const *grad_outputs, PyObject **grad_inputs);

/* formula flags */
#define CT_F_VIEW 1        /* output is a view of input 0 */
#define CT_F_INPLACE 2     /* modifies input 0 and returns it */
#define CT_F_SAVE_OUT 4    /* backward needs the outputs */
#define CT_F_LIST_INPUT 8  /* input 0 is a sequence of tensors: one edge per element */
#define CT_F_NO_DERIV 16   /* backward raises "not implemented" */
#define CT_F_NO_SELF_VALUES 32 /* backward reads only the shape/dtype of input 0, never its values:
                                  the in-place variant (op_) need not save a copy of self */
/* set only on formulas autograd.c synthesises (never in the table): */
#define CT_F_CLONE_SELF 64  /* in-place variant of an out-of-place formula: save self's old values */
#define CT_F_GENERIC 128    /* an op without a formula: any tensor argument is an input; its float
                               outputs get a node whose backward raises "not implemented" */

typedef struct {
    const char *op;                          /* Python name: "mul", "__add__" slot alias, ... */
    const char *node_name;                   /* "MulBackward0" */
    const char *sig[CT_MAX_FORMULA_ARGS + 1]; /* argument names; sig[0] is the tensor (self) */
    unsigned diff;                           /* bit i: argument i is a differentiable tensor input */
    int flags;
    CtBackwardFn backward;
    /* optional: the node name for this call's normalised arguments (PyTorch names overloads
     * differently, e.g. SumBackward0 for a full sum, SumBackward1 with dim); NULL: node_name */
    const char *(*name_for)(PyObject *const *norm);
    /* optional: bit i: argument i may not require grad (PyTorch has no derivative for it and says
     * "The function '<aten_name>' is not differentiable with respect to argument ..." at the call) */
    unsigned no_grad;
    const char *aten_name;
    /* optional: PyTorch's names of what the node saves (grad_fn._saved_self, ...) and where ctorch
     * keeps each; the syntax is described in autograd.c ("saved values by PyTorch's names") */
    const char *saved;
} CtFormula;

struct CtNodeObject {
    PyObject_HEAD
    const CtFormula *formula;  /* NULL for AccumulateGrad and Python Function nodes */
    int kind;                  /* CT_NODE_* */
    int num_edges;
    PyObject **edge_nodes;     /* next nodes (NULL: no gradient flows there) */
    int *edge_input_nr;        /* which output of the next node the gradient is for */
    int num_outputs;
    PyObject *args[CT_MAX_FORMULA_ARGS]; /* normalised saved arguments (NULL if absent); tensor
                                            arguments are dropped when the node is released */
    struct CtTensorMeta *meta;  /* [CT_MAX_FORMULA_ARGS] shapes of tensor arguments, or NULL */
    int nargs;
    PyObject *outputs;         /* tuple of detached output aliases (CT_F_SAVE_OUT) or NULL */
    uint64_t versions[CT_MAX_FORMULA_ARGS + 1]; /* storage versions of saved tensors */
    PyObject *variable;        /* AccumulateGrad: the leaf */
    PyObject *py_ctx;          /* Function: the ctx object (holds backward) */
    PyObject *pre_hooks;       /* dict output_nr -> list of callables (tensor hooks, retain_grad) */
    PyObject *metadata;
    PyObject *inner;           /* CopySlices: the in-place op's node, applied to the view's region */
    struct CtViewGeometry *geometry; /* CopySlices / AsStridedBackward0: where the view lies in its base */
    uint64_t sequence_nr;
    bool released;
    /* engine scratch, valid while engine_run == the current run */
    uint64_t engine_run;
    int64_t dependencies;
    int engine_mark;           /* autograd.grad / backward(inputs=): CT_MARK_* bits (autograd.c) */
    PyObject *buffer;          /* list of accumulated gradients, one per output */
    PyObject *weakreflist;
    /* saved_tensors_hooks: what pack_hook returned for saved tensor argument i (packed[i]) and
     * output j (packed[nargs + j]), NULL where nothing was packed; the node keeps only these
     * (args[i] and the outputs' entries are empty) except while its backward runs */
    PyObject **packed;
    int npacked;
    PyObject *unpack_hook;
    PyObject *fn_hooks;        /* Node.register_hook: list of hook(grad_inputs, grad_outputs) */
    PyObject *fn_prehooks;     /* Node.register_prehook: list of hook(grad_outputs) */
};

/* What backward formulas may need of an input after its data is freed. */
typedef struct CtTensorMeta {
    bool is_tensor;
    int ndim;
    CtDType dtype;
    CtDevice device;
    int64_t sizes[CT_MAX_DIMS];
} CtTensorMeta;

/* Formula helpers (borrowed references; NULL with the "backward through the graph a second
 * time" or version-counter RuntimeError set when the saved tensor is gone or was modified). */
CtTensorObject *ct_node_tensor(CtNodeObject *node, int i);
CtTensorObject *ct_node_output(CtNodeObject *node, int k);
/* Output k as a formula should use it, new reference: under create_graph an alias whose history is
 * output k of node itself (as PyTorch saves outputs), so a double backward sees its dependence on
 * the inputs. Formulas that save a floating output use this, not ct_node_output. */
PyObject *ct_node_output_ref(CtNodeObject *node, int k);

#define CT_NODE_FORMULA 0
#define CT_NODE_ACCUMULATE 1
#define CT_NODE_PYFUNCTION 2
#define CT_NODE_COPYSLICES 3 /* an in-place op on a view, seen from the view's base */
#define CT_NODE_VIEW 4       /* AsStridedBackward0: a view regenerated from its base's history */

extern bool ct_grad_enabled;

/* Tensor attribute helpers (tensor.c's getset uses these). */
PyObject *ct_autograd_get_grad_fn(CtTensorObject *t);
int ct_autograd_set_requires_grad(CtTensorObject *t, int value);
/* For a differentiable view written to (through its base or another view) since its grad_fn
 * was set: regenerates grad_fn from the base's history. 0 or -1. */
int ct_autograd_refresh_view(CtTensorObject *t);

/* The interned str for the C string s, cached by its address. Borrowed reference. */
PyObject *ct_name(const char *s);
/* PyObject_CallMethod(obj, name, format, ...) without its per-call costs: the name is interned once
 * (ct_name) and the method called by vectorcall, with no bound method. Same argument rule. */
PyObject *ct_call_method(PyObject *obj, const char *name, const char *format, ...);
/* Calls `callable(*args)` (vectorcall) through ctorch's autograd layer. */
PyObject *ct_op(const char *name, PyObject *const *args, size_t nargs, PyObject *kwnames);
/* Sums grad down to shape (the inverse of broadcasting). New reference. */
PyObject *ct_sum_to(PyObject *grad, int ndim, const int64_t *sizes);
/* grad made the gradient of an input described by m: summed to its shape (ct_sum_to), then in its
 * dtype and on its device. New reference. */
PyObject *ct_fit_grad(PyObject *grad, const struct CtTensorMeta *m);

int ct_autograd_init(PyObject *module);
/* The recording replacement for a Tensor type slot (Py_nb_add, Py_mp_subscript, ...), or fn
 * itself for slots autograd does not record; tensor.c applies it while building the type. */
void *ct_autograd_slot(int slot, void *fn);
/* Installs the formula wrappers of functions and methods; call after every family is registered. */
int ct_autograd_install(PyObject *module);

/* formulas (autograd_formulas.c) */
extern const CtFormula ct_formulas[];

#endif /* CTORCH_AUTOGRAD_H */
