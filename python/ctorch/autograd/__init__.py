"""ctorch.autograd: backward, grad, grad-mode switches, custom Functions and gradcheck.
The engine and the recording of ops are C (csrc/autograd.c); this is the Python surface."""
import warnings
from collections.abc import Mapping

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


def _inputs_tuple(inputs, fname):
    """inputs as a tuple (a dict gives its values), never empty."""
    if isinstance(inputs, _C.Tensor):
        inputs = (inputs,)
    elif type(inputs) is dict:
        inputs = tuple(inputs.values())
    elif isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `{fname}()` must be a dict, not {type(inputs).__name__}. "
                        "Other Mapping types are not supported.")
    else:
        inputs = tuple(inputs)
    if len(inputs) == 0:
        raise RuntimeError(f"`inputs` argument to `{fname}()` cannot be empty.")
    for i in inputs:
        if not isinstance(i, _C.Tensor):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(i).__name__}")
    return inputs


def _grads_tuple(grads, outputs):
    """One gradient per output, paired as PyTorch's zip: extra gradients are ignored."""
    grads = _as_tuple(grads) or (None,) * len(outputs)
    return grads[:len(outputs)] if len(grads) > len(outputs) else grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates gradients of `tensors` into the leaves' .grad."""
    tensors = _as_tuple(tensors)
    grads = _grads_tuple(grad_tensors, tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _inputs_tuple(inputs, "backward")
        result = _C._run_backward(tensors, grads, retain_graph, create_graph, inputs, True)
        with warnings.catch_warnings():  # a non-leaf input's first .grad is None by design
            warnings.simplefilter("ignore", UserWarning)
            for t, g in zip(inputs, result):
                if g is not None:
                    t.grad = g if t.grad is None else t.grad + g
        return None
    _C._run_backward(tensors, grads, retain_graph, create_graph, None, False)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Returns the gradients of outputs with respect to inputs (leaves' .grad untouched); a dict of
    inputs gives a dict of gradients under the same keys. is_grads_batched: dim 0 of each grad_output
    indexes a batch of vector-Jacobian products, computed one by one and stacked."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    keys = tuple(inputs.keys()) if type(inputs) is dict else None
    outputs = _as_tuple(outputs)
    inputs = _inputs_tuple(inputs, "grad")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", FutureWarning,
                      stacklevel=2)
    grads = _grads_tuple(grad_outputs, outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        result = _batched_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused)
    else:
        result = _C._run_backward(outputs, grads, retain_graph, create_graph, inputs, allow_unused)
    if materialize_grads:
        result = tuple(g if g is not None else _C.zeros_like(i).requires_grad_(create_graph)
                       for g, i in zip(result, inputs))
    return dict(zip(keys, result)) if keys is not None else result


def _batched_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused):
    """grad() with is_grads_batched: one engine run per row of the grad_outputs, stacked."""
    sizes = set()
    for i, (g, o) in enumerate(zip(grads, outputs)):
        if isinstance(g, _C.Tensor) and (g.dim() == 0 or g.shape[1:] != o.shape):
            raise RuntimeError("If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
                               "the batch dimension. The sizes of the remaining dimensions are expected to match the "
                               f"shape of corresponding output, but a mismatch was detected: grad_output[{i}] has a "
                               f"shape of {g.shape[1:]} and output[{i}] has a shape of {o.shape}. If you only want "
                               "some tensors in `grad_output` to be considered batched, consider using vmap.")
        if isinstance(g, _C.Tensor):
            sizes.add(g.shape[0])
    if len(sizes) != 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sorted(sizes)} for the mapped dimension")
    batch = sizes.pop()
    rows = [_C._run_backward(outputs, tuple(g[b] if isinstance(g, _C.Tensor) else g for g in grads),
                             retain_graph or b < batch - 1, create_graph, inputs, allow_unused)
            for b in range(batch)]
    return tuple(None if rows[0][k] is None else _C.stack([r[k] for r in rows]) for k in range(len(inputs)))


from . import functional  # noqa: E402,F401  (uses grad, defined above)
from . import profiler  # noqa: E402,F401
from . import graph  # noqa: E402,F401  (torch.autograd.graph is loaded with torch.autograd)
