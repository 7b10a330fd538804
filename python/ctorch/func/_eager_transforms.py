"""ctorch.func's autodiff transforms (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian),
built on ctorch's reverse-mode autograd.

Each call of a transformed function is one "level": the differentiated inputs are replaced by
tensors of its own (a fresh leaf requiring grad, or, for an input that already requires grad, an
alias whose history leads back to it), func runs under enable_grad, and the derivatives come
from ctorch.autograd.grad. Levels compose (grad(grad(f)), vmap(grad(f)), jacrev(jacrev(f)))
because a level asks for a differentiable result (create_graph) exactly when its outputs reach a
tensor outside the level that requires grad: an outer level's inputs, a module's parameters, a
user's leaf. Results that do not reach outside are detached, so grad(f)(x) of a plain x does not
require grad, as in PyTorch.

- jvp uses the double-vjp trick: with u a dummy cotangent requiring grad, g(u) = vjp(u) is
  linear in u, and the gradient of <g(u), tangents> with respect to u is the JVP. It needs the
  backward formulas to be differentiable in their incoming gradient, which ctorch's are.
- jacfwd computes the Jacobian in reverse mode, one backward pass per output element (ctorch
  has no forward-mode AD); its results are jacrev's, laid out as PyTorch's jacfwd's.
"""
import functools

from .. import _C
from .._C import Tensor
from ..autograd import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from ..utils._pytree import tree_flatten, tree_map, tree_unflatten, treespec_pprint
from ._vmap import _check_randomness_arg, _RandomnessGuard

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]


# --- levels ----------------------------------------------------------------------------------------

def _reaches_outside(tensors, own, clean=None):
    """True when the history of one of `tensors` reaches a leaf requiring grad that is not in
    `own` (a dict id -> tensor of the level's own leaves). `clean` (dict id -> node, optional):
    nodes already known not to reach outside, skipped, and extended by a walk that finds nothing."""
    clean = {} if clean is None else clean
    stack = []
    for t in tensors:
        if not isinstance(t, Tensor) or not t.requires_grad:
            continue
        if t.grad_fn is None:
            if id(t) not in own:
                return True
        else:
            stack.append(t.grad_fn)
    seen = {}  # id -> node, holding the nodes so that ids stay unique
    while stack:
        node = stack.pop()
        if id(node) in seen or id(node) in clean:
            continue
        seen[id(node)] = node
        variable = getattr(node, "variable", None)  # AccumulateGrad of a leaf
        if variable is not None:
            if id(variable) not in own:
                return True
            continue
        stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    clean.update(seen)
    return False


class _Level:
    """One call of a transform: its own stand-ins for the differentiated inputs, and whether
    grad mode was on around it (if not, nothing of the level may require grad afterwards)."""

    def __init__(self):
        self.outer_grad = _C.is_grad_enabled()
        self.own = {}

    def wrap(self, x):
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if not (x.is_floating_point() or x.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if self.outer_grad and x.requires_grad:
            inner = x.view_as(x)  # differentiable with respect to x for the levels outside
        else:
            inner = x.detach().requires_grad_()
        self.own[id(inner)] = inner
        return inner

    def reaches_outside(self, tensors, clean=None):
        return self.outer_grad and _reaches_outside(tensors, self.own, clean)

    def unwrap(self, tree):
        """`tree` with every tensor that does not reach outside the level detached."""
        clean = {}  # shared by the tree's tensors, whose histories overlap

        def unwrap_one(t):
            if isinstance(t, Tensor) and t.requires_grad and not self.reaches_outside([t], clean):
                return t.detach()
            return t

        return tree_map(unwrap_one, tree)


def _vjp_grads(outputs, inputs, cotangents, create_graph, retain_graph=True):
    """Gradients of `outputs` (weighted by `cotangents`) with respect to each of `inputs`, zeros
    for an input they do not depend on; the graph is kept for further calls unless retain_graph
    is False."""
    live = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    grads = [None] * len(inputs)
    if live:
        grads = _autograd_grad([o for o, _ in live], inputs, [c for _, c in live], retain_graph=retain_graph,
                               create_graph=create_graph, allow_unused=True)
    return [_C.zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]


# --- argnums ---------------------------------------------------------------------------------------

def _wrap_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if -num_args <= argnum < num_args:
        return argnum % num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _slice_argnums(args, argnums):
    """(argnums normalised, the differentiated arguments: args[argnums] for an int, a tuple for a
    tuple), with PyTorch's errors."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        argnums = _wrap_argnum(argnums, len(args))
        return argnums, args[argnums]
    argnums = tuple(_wrap_argnum(a, len(args)) for a in argnums)
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return argnums, tuple(args[i] for i in argnums)


def _replace_args(args, new_diff, argnums):
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = new_diff
    else:
        for i, value in zip(argnums, new_diff):
            args[i] = value
    return tuple(args)


def _call_at_level(level, func, args, argnums, kwargs):
    """Runs func with the arguments named by argnums (None: all) replaced by the level's
    stand-ins. Returns (output, flat stand-ins, their spec)."""
    if argnums is None:
        diff = args
    else:
        argnums, diff = _slice_argnums(args, argnums)
    flat_diff, spec = tree_flatten(diff)
    flat_inner = [level.wrap(x) for x in flat_diff]
    inner_diff = tree_unflatten(flat_inner, spec)
    inner_args = inner_diff if argnums is None else _replace_args(args, inner_diff, argnums)
    return func(*inner_args, **kwargs), flat_inner, spec


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _check_tensor_outputs(flat_output, api):
    if len(flat_output) == 0 or (len(flat_output) == 1 and flat_output[0] is None):
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {flat_output})")
    for o in flat_output:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")


def _traced_call(level, func, args, argnums, has_aux, api, random_guard=None):
    """func run at `level` on args (argnums: which to differentiate, None: all) and checked to return
    tensors: (output, aux, flat output, its spec, flat stand-ins, their spec)."""
    output, flat_inner, spec = _call_at_level(level, func, args, argnums, {})
    if random_guard is not None:
        random_guard.after_sample()
    output, aux = _split_aux(output, has_aux, api)
    flat_output, output_spec = tree_flatten(output)
    _check_tensor_outputs(flat_output, api)
    return output, aux, flat_output, output_spec, flat_inner, spec


def _check_float_outputs(flat_output):
    for o in flat_output:
        if not (o.is_floating_point() or o.dtype.is_complex):
            raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, "
                               f"got Tensor with dtype {o.dtype}")


def _error_if_complex(api, tensors, what):
    for idx, t in enumerate(tensors):
        if isinstance(t, Tensor) and t.dtype.is_complex:
            # PyTorch says "input idx" for outputs as well
            raise RuntimeError(f"{api}: Expected all {what} to be real but received complex tensor at "
                               f"flattened input idx: {idx}")


# --- grad ------------------------------------------------------------------------------------------

def grad_and_value(func, argnums=0, has_aux=False):
    """grad_and_value(func, argnums=0, has_aux=False): a function returning (gradient of func's
    scalar output with respect to the arguments argnums, the output) (or ((gradient, (output,
    aux))) with has_aux). The gradient has the structure of args[argnums]."""
    api = "grad_and_value(f)(*args)"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        level = _Level()
        with enable_grad():
            output, flat_inner, spec = _call_at_level(level, func, args, argnums, kwargs)
            output, aux = _split_aux(output, has_aux, api)
            if not isinstance(output, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
                                   f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            create = level.reaches_outside([output])
            grads = _vjp_grads([output], flat_inner, [_C.ones_like(output)], create)
        grads = level.unwrap(tree_unflatten(grads, spec))
        output = level.unwrap(output)
        if has_aux:
            return grads, (output, level.unwrap(aux))
        return grads, output

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """grad(func, argnums=0, has_aux=False): a function returning the gradient of func's scalar
    output with respect to the arguments argnums (and func's aux output with has_aux)."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = inner(*args, **kwargs)
        if has_aux:
            return grads, value[1]
        return grads

    return wrapper


# --- vjp / jvp -------------------------------------------------------------------------------------

def vjp(func, *primals, has_aux=False):
    """vjp(func, *primals, has_aux=False): (func(*primals), vjp_fn[, aux]); vjp_fn(cotangents)
    returns the vector-Jacobian products with respect to each primal, as a tuple. vjp_fn may be
    called many times (the graph is kept while it lives, unless retain_graph=False); its
    create_graph=None makes the result differentiable when it can reach a tensor outside that
    requires grad."""
    api = "vjp(f, *primals)"
    level = _Level()
    with enable_grad():
        output, aux, flat_output, output_spec, flat_inner, spec = _traced_call(level, func, primals, None, has_aux,
                                                                               api)
        _check_float_outputs(flat_output)
    outside = []  # computed on the first call of vjp_fn

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        flat_cotangents, cotangents_spec = tree_flatten(cotangents)
        if cotangents_spec != output_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {treespec_pprint(cotangents_spec)}, "
                               f"primal output: {treespec_pprint(output_spec)}")
        for c in flat_cotangents:
            if not isinstance(c, Tensor):
                raise TypeError(f"gradients can be either Tensors or None, but got {type(c).__name__}")
        if create_graph is None:  # differentiable when something outside the level may want it
            if not outside:
                outside.append(level.reaches_outside(flat_output))
            create_graph = _C.is_grad_enabled() and level.outer_grad and (
                outside[0] or any(c.requires_grad for c in flat_cotangents))
        with enable_grad():
            grads = _vjp_grads(flat_output, flat_inner, flat_cotangents, create_graph, retain_graph)
        return level.unwrap(tree_unflatten(grads, spec))

    output = level.unwrap(output)
    if has_aux:
        return output, vjp_fn, level.unwrap(aux)
    return output, vjp_fn


def _double_vjp_jvp(level, flat_output, flat_inner, flat_tangents, strict, api):
    """The JVPs of flat_output in the direction flat_tangents: d<vjp(u), t>/du."""
    dummies = [_C.zeros_like(o).requires_grad_() if o.requires_grad and o.is_floating_point() else None
               for o in flat_output]
    live = [(o, u) for o, u in zip(flat_output, dummies) if u is not None]
    result = [None] * len(flat_output)
    if live:
        vjps = _autograd_grad([o for o, _ in live], flat_inner, [u for _, u in live], create_graph=True,
                              allow_unused=True)
        terms = [(g * t).sum() for g, t in zip(vjps, flat_tangents) if g is not None and g.requires_grad]
        if terms:
            total = terms[0]
            for term in terms[1:]:
                total = total + term
            create = level.outer_grad and (level.reaches_outside(flat_output)
                                           or any(t.requires_grad for t in flat_tangents))
            jvps = iter(_autograd_grad(total, [u for _, u in live], create_graph=create, allow_unused=True))
            result = [next(jvps) if u is not None else None for u in dummies]
    for k, (o, r) in enumerate(zip(flat_output, result)):
        if r is None:
            if strict:
                raise RuntimeError(f"{api}, strict=True): The output of f is independent of the inputs. "
                                   "This is not allowed with strict=True.")
            result[k] = _C.zeros_like(o)
    return result


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """jvp(func, primals, tangents, *, strict=False, has_aux=False): (func(*primals), the
    Jacobian-vector product in the direction tangents[, aux]). Computed with two reverse passes
    (the double-vjp trick, see the module docstring)."""
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_primals, primals_spec = tree_flatten(primals)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python structure. For example, "
                           "if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{primals_spec} and tangents with structure {tangents_spec}")
    for name, flat in (("primals", flat_primals), ("tangents", flat_tangents)):
        if len(flat) == 0:
            raise RuntimeError(f"{api}: Expected {name} to contain at least one Tensor.")
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{api}: Expected {name} to only contain Tensors, got {type(x)}")
    for p, t in zip(flat_primals, flat_tangents):
        if p.shape != t.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the "
                               f"original Tensor, this is not supported. Tensor is of size {list(p.shape)} while "
                               f"the given forward gradient is of size {list(t.shape)}.")
    level = _Level()
    with enable_grad():
        output, aux, flat_output, output_spec, flat_inner, _ = _traced_call(level, func, primals, None, has_aux, api)
        flat_jvps = _double_vjp_jvp(level, flat_output, flat_inner, flat_tangents, strict, api[:-1])
    output = level.unwrap(output)
    jvps = level.unwrap(tree_unflatten(flat_jvps, output_spec))
    if has_aux:
        return output, jvps, level.unwrap(aux)
    return output, jvps


# --- Jacobians -------------------------------------------------------------------------------------

def _jacobian(func, args, argnums, has_aux, forward, random_guard):
    """The Jacobian of func at args, one backward pass per output element: for each output
    leaf, the derivatives (output.shape + input.shape) with respect to each differentiated input,
    in the structure of args[argnums]. forward: lay it out as jacfwd (its messages and dtypes)."""
    api = "jvp(f, primals, tangents)" if forward else "vjp(f, *primals)"
    name = "jacfwd" if forward else "jacrev"
    level = _Level()
    with enable_grad():
        output, aux, flat_output, output_spec, flat_inner, spec = _traced_call(level, func, args, argnums, has_aux,
                                                                               api, random_guard)
        if not forward:
            _check_float_outputs(flat_output)
        _error_if_complex(name, flat_output, "outputs")
        create = level.reaches_outside(flat_output)
        jacobians = []
        for o in flat_output:
            rows = []  # per output element, the gradients with respect to each input
            if o.requires_grad and o.is_floating_point():
                for r in range(o.numel()):
                    onehot = _C.zeros(o.numel(), dtype=o.dtype, device=o.device)
                    onehot[r] = 1
                    rows.append(_vjp_grads([o], flat_inner, [onehot.view(o.shape)], create))
            blocks = []
            for p, x in enumerate(flat_inner):
                shape = tuple(o.shape) + tuple(x.shape)
                if rows:
                    block = _C.stack([row[p] for row in rows], 0).reshape(shape)
                else:
                    block = _C.zeros(shape, dtype=x.dtype, device=x.device)
                blocks.append(block.to(o.dtype) if forward else block)
            jacobians.append(tree_unflatten(blocks, spec))
    result = level.unwrap(tree_unflatten(jacobians, output_spec))
    if has_aux:
        return result, level.unwrap(aux)
    return result


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """jacrev(func, argnums=0, *, has_aux=False, chunk_size=None): a function returning the Jacobian
    of func with respect to the arguments argnums, by reverse-mode AD (one backward pass per output
    element). For an output of shape O and an input of shape I the Jacobian has shape O + I; several
    outputs or argnums give nested structures as PyTorch's. chunk_size is checked, then has no effect."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        _error_if_complex("jacrev", tree_flatten(args)[0], "inputs")
        return _jacobian(func, args, argnums, has_aux, False, None)

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """jacfwd(func, argnums=0, has_aux=False, *, randomness='error'): the Jacobian as jacrev's, with
    jacfwd's messages and the output's dtype. ctorch has no forward-mode AD: this computes it in
    reverse mode (one backward pass per output element), which gives the same values.
    randomness='error' raises vmap's error if func draws random numbers, as PyTorch's jacfwd
    (which vmaps func's JVP) does."""
    _check_randomness_arg(randomness)

    @functools.wraps(func)
    def wrapper(*args):
        _error_if_complex("jacfwd", tree_flatten(args)[0], "inputs")
        guard = _RandomnessGuard("error") if randomness == "error" else None
        return _jacobian(func, args, argnums, has_aux, True, guard)

    return wrapper


def hessian(func, argnums=0):
    """hessian(func, argnums=0): jacfwd(jacrev(func, argnums), argnums), the matrix of second
    derivatives of a scalar func (shape I + I for an input of shape I)."""
    return jacfwd(jacrev(func, argnums), argnums)
