"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp and hvp of a Python function, composed of
autograd.grad calls as in PyTorch (jvp and hvp by the double-backward trick: ctorch has no forward-mode AD).

Inputs and outputs may be one Tensor or a tuple of Tensors; results keep that structure. The inputs are
always replaced by fresh tensors (detached, or views when create_graph=True) so that tensors the function
captures from outside are not mistaken for the inputs. Results are detached unless create_graph=True.
strict=True raises where a result would be an all-zero stand-in for an independent input or output."""
from .. import _C
from . import grad as _autograd_grad
from .grad_mode import enable_grad, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(value, name, fn_name):
    """(was it a tuple, the tuple) for one Tensor or a tuple of Tensors."""
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, v in enumerate(values):
        if not isinstance(v, _C.Tensor):
            where = f"value at index {i}" if is_tuple else f"given {name}"
            raise TypeError(f"The {name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                            f"{where} has type {type(v)}.")
    return is_tuple, values


def _unpack(values, is_tuple):
    return values if is_tuple else values[0]


def _unpack2(values, outer_is_tuple, inner_is_tuple):
    """Undoes _as_tuple on both levels of a tuple (outer) of tuples (inner)."""
    if not inner_is_tuple:
        values = tuple(v[0] for v in values)
    return _unpack(values, outer_is_tuple)


def _fresh_inputs(inputs, create_graph, need_graph):
    """New tensor objects for the inputs: differentiable views of those requiring grad under create_graph
    (so the result's graph reaches them), detached leaves otherwise."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(need_graph)
                 for x in inputs)


def _finish(tensors, create_graph):
    return tensors if create_graph else tuple(t.detach() for t in tensors)


def _validate_v(v, other, other_is_tuple):
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (vi, oi) in enumerate(zip(v, other)):
        if vi.shape != oi.shape:
            prefix = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {oi.shape} but got {vi.shape}.")


def _prepare_v(v, reference, reference_is_tuple, create_graph, fn_name, none_message):
    if v is None:
        if len(reference) != 1 or reference[0].numel() != 1:
            raise RuntimeError(none_message)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _fresh_inputs(v, create_graph, need_graph=False)
    _validate_v(v, reference, reference_is_tuple)
    return v


_V_NONE_FOR_INPUT = ("The vector v can only be None if the input to the user-provided function is a single "
                     "Tensor with a single element.")

_STRICT_REQUIRES_GRAD = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be computed "
               "in a differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
                   "function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect "
                "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                "would be violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the input. "
               "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
               "and that the hessian depends on the inputs.",
}


def _check_requires_grad(tensors, kind, strict):
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:  # only gradients can be missing
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                               "This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_STRICT_REQUIRES_GRAD[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad; None for inputs nothing depends on."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return _autograd_grad(tuple(o for o, _ in kept), inputs, tuple(g for _, g in kept), retain_graph=retain_graph,
                          create_graph=create_graph, allow_unused=True)


_STRICT_MISSING = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in "
            "strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in "
                  "strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed "
                   "in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Zeros for missing gradients, or strict mode's errors."""
    result = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_MISSING[stage].format(i=i))
            g = _C.zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        result.append(g)
    return tuple(result)


def _call(func, inputs, fn_name, strict):
    is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    return is_tuple, outputs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product, shaped as the inputs."""
    with enable_grad():
        inputs_are_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _fresh_inputs(inputs, create_graph, need_graph=True)
        outputs_are_tuple, outputs = _call(func, inputs, "vjp", strict)
        v = _prepare_v(v, outputs, outputs_are_tuple, create_graph, "vjp",
                       "The vector v can only be None if the user-provided function returns a single Tensor with a "
                       "single element.")
    with set_grad_enabled(create_graph or _C.is_grad_enabled()):
        result = _fill_in_zeros(_grad(outputs, inputs, v, create_graph), inputs, strict, create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), outputs_are_tuple),
            _unpack(_finish(result, create_graph), inputs_are_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, shaped as the outputs, by differentiating the
    vector-Jacobian product (linear in its vector u) with respect to u."""
    with enable_grad():
        inputs_are_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _fresh_inputs(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, inputs, inputs_are_tuple, create_graph, "jvp", _V_NONE_FOR_INPUT)
        outputs_are_tuple, outputs = _call(func, inputs, "jvp", strict)
        # u's value does not matter (the vjp is linear in u); zeros avoid inf/nan in the graph
        u = tuple(_C.zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, u, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(create_graph or _C.is_grad_enabled()):
        result = _fill_in_zeros(_grad(grad_inputs, u, v, create_graph), outputs, strict, create_graph, "back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_are_tuple),
            _unpack(_finish(result, create_graph), outputs_are_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of func at inputs: for output i and input j a tensor of shape out_i.shape + in_j.shape;
    nested as tuples like the outputs (outer) and inputs (inner). One backward pass per output element.
    vectorize=True gives the same values (ctorch has no vmap: the rows are computed one by one)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        _refuse_forward_mode(create_graph, strict, vectorize)
    with enable_grad():
        inputs_are_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _fresh_inputs(inputs, create_graph, need_graph=True)
        outputs_are_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]  # rows[j]: d out.flatten()[k] / d input j, for each k
            flat = out.reshape(-1)
            for k in range(out.numel()):
                grads = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, x) in enumerate(zip(grads, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{j}. This is not allowed in strict mode.")
                        g = _C.zeros_like(x)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}."
                                           " This is not allowed in strict mode when create_graph=True.")
                    rows[j].append(g)
            jac.append(tuple(_C.stack(r, 0).view(tuple(out.shape) + tuple(x.shape)) for r, x in zip(rows, inputs)))
        jac = tuple(_finish(row, create_graph) for row in jac)
    return _unpack2(jac, outputs_are_tuple, inputs_are_tuple)


def _refuse_forward_mode(create_graph, strict, vectorize):
    """PyTorch's errors for strategy="forward-mode"; where PyTorch would run it (vectorize=True), ctorch
    still refuses: it has no forward-mode AD."""
    if create_graph:
        raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                  '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                  '`create_graph=False` or `strategy="reverse-mode"`.')
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    raise NotImplementedError('torch.autograd.functional.jacobian: ctorch has no forward-mode AD; use '
                              'strategy="reverse-mode".')


def _scalar_output(outputs, outputs_are_tuple, fn_name):
    if outputs_are_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a function returning one element: for inputs i and j a tensor of shape
    in_i.shape + in_j.shape, nested as tuples like the inputs (twice). The Jacobian of the gradient."""
    inputs_are_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*x):
        outputs_are_tuple, outputs = _call(func, x, "hessian", strict)
        _scalar_output(outputs, outputs_are_tuple, "hessian")
        return outputs[0].squeeze()

    def gradient(*x):
        g = jacobian(scalar_func, x, create_graph=True)
        _check_requires_grad(g, "jacobian", strict)
        return g

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack2(res, inputs_are_tuple, inputs_are_tuple)


def _hessian_setup(func, inputs, v, create_graph, strict, fn_name):
    """Fresh inputs, checked v, the (single-element) output and its gradient with a graph."""
    inputs_are_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _fresh_inputs(inputs, create_graph, need_graph=True)
    v = _prepare_v(v, inputs, inputs_are_tuple, create_graph, fn_name, _V_NONE_FOR_INPUT)
    outputs_are_tuple, outputs = _call(func, inputs, fn_name, strict)
    if outputs_are_tuple or not isinstance(outputs[0], _C.Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    _scalar_output(outputs, outputs_are_tuple, fn_name)
    jac = _grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return inputs_are_tuple, inputs, v, outputs, outputs_are_tuple, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a function returning one element."""
    with enable_grad():
        inputs_are_tuple, inputs, v, outputs, outputs_are_tuple, jac = _hessian_setup(func, inputs, v, create_graph,
                                                                                      strict, "vhp")
    with set_grad_enabled(create_graph or _C.is_grad_enabled()):
        result = _fill_in_zeros(_grad(jac, inputs, v, create_graph), inputs, strict, create_graph, "double_back")
    return (_unpack(_finish(outputs, create_graph), outputs_are_tuple),
            _unpack(_finish(result, create_graph), inputs_are_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a function returning one element, by the double-backward trick
    (equal to vhp for a symmetric Hessian)."""
    with enable_grad():
        inputs_are_tuple, inputs, v, outputs, outputs_are_tuple, jac = _hessian_setup(func, inputs, v, create_graph,
                                                                                      strict, "hvp")
        u = tuple(_C.zeros_like(x, requires_grad=True) for x in inputs)
        double_back = _grad(jac, inputs, u, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(create_graph or _C.is_grad_enabled()):
        result = _fill_in_zeros(_grad(double_back, u, v, create_graph), inputs, strict, create_graph,
                                "double_back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_are_tuple),
            _unpack(_finish(result, create_graph), inputs_are_tuple))
