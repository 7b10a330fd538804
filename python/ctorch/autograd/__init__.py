"""ctorch.autograd: backward, grad, grad-mode switches, custom Functions and gradcheck.
The engine and the recording of ops are C (csrc/autograd.c); this is the Python surface."""
from .. import _C
from .function import Function, FunctionCtx  # noqa: F401
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401

Variable = _C.Tensor


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, _C.Tensor):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates gradients of `tensors` into the leaves' .grad."""
    tensors = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) or (None,) * len(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _as_tuple(inputs)
        result = _C._run_backward(tensors, grads, retain_graph, create_graph, inputs, True)
        for t, g in zip(inputs, result):
            if g is not None:
                t.grad = g if t.grad is None else t.grad + g
        return None
    _C._run_backward(tensors, grads, retain_graph, create_graph, None, False)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         materialize_grads=False):
    """Returns the gradients of outputs with respect to inputs (leaves' .grad untouched)."""
    outputs = _as_tuple(outputs)
    single = isinstance(inputs, _C.Tensor)
    inputs = _as_tuple(inputs)
    grads = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    result = _C._run_backward(outputs, grads, retain_graph, create_graph, inputs, allow_unused)
    if materialize_grads:
        result = tuple(g if g is not None else _C.zeros_like(i) for g, i in zip(result, inputs))
    return result


from . import functional  # noqa: E402,F401  (uses grad, defined above)
from . import profiler  # noqa: E402,F401
from . import graph  # noqa: E402,F401  (torch.autograd.graph is loaded with torch.autograd)
