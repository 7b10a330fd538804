"""torch.utils.checkpoint: activation checkpointing. The forward keeps no intermediate activations; the
backward runs the function again (with the RNG state of the forward, so dropout draws the same masks) and
differentiates that recomputation.

use_reentrant=True (the default when not given, with PyTorch's warning) is PyTorch's reentrant variant: the
node's inputs are the tensor arguments; the backward calls autograd.backward on the recomputed outputs,
which accumulates the gradients of tensors the function captures (module parameters) into their .grad.

use_reentrant=False also takes keyword arguments and works with autograd.grad: ctorch has no saved-tensor
hooks, so the forward runs once with the graph recorded, walks it to find the leaves the function captures,
and drops it; the node's inputs are the arguments plus those leaves, and the backward returns their
gradients from autograd.grad on the recomputation."""
import contextlib
import warnings

from .. import _C
from ..autograd import backward as _backward, grad as _grad
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad
from ..random import fork_rng

__all__ = ["checkpoint", "checkpoint_sequential"]

_USE_REENTRANT_WARNING = (
    "{}: the use_reentrant parameter should be passed explicitly. In a future release, {}. use_reentrant=False "
    "is recommended, but if you need to preserve the current default behavior, you can pass "
    "use_reentrant=True. Refer to docs for more details on the differences between the two variants.")


class _Recompute:
    """The function, its arguments, the RNG states and autocast settings of the forward: runs it again
    for the backward as the forward ran."""

    def __init__(self, function, args, kwargs, preserve_rng_state):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.preserve = preserve_rng_state
        self.autocast = [(d, _C.get_autocast_dtype(d), _C.is_autocast_cache_enabled())
                         for d in ("cpu", "cuda") if _C.is_autocast_enabled(d)]
        if preserve_rng_state:
            self.cpu_state = _C.get_rng_state()
            devices = sorted({str(a.device) for a in args if isinstance(a, _C.Tensor) and a.device.type != "cpu"})
            self.device_states = [(d, _C._default_generator(d).get_state()) for d in devices]

    def detached_args(self):
        """The arguments with tensors detached, each requiring grad as its original does."""
        return tuple(a.detach().requires_grad_(a.requires_grad) if isinstance(a, _C.Tensor) else a
                     for a in self.args)

    def run(self):
        """(detached args, outputs as a tuple) of a run under grad mode with the forward's RNG states."""
        from ..amp import autocast  # ctorch.utils is imported before ctorch.amp

        with fork_rng(devices=[d for d, _ in self.device_states] if self.preserve else None, enabled=self.preserve):
            if self.preserve:
                _C.set_rng_state(self.cpu_state)
                for d, state in self.device_states:
                    _C._default_generator(d).set_state(state)
            args = self.detached_args()
            with enable_grad(), contextlib.ExitStack() as regions:
                for device_type, dtype, cache in self.autocast:
                    regions.enter_context(autocast(device_type, dtype=dtype, cache_enabled=cache))
                outputs = self.function(*args, **self.kwargs)
        return args, outputs if isinstance(outputs, tuple) else (outputs,)


def _differentiable(outputs, grads):
    """The outputs that require grad and their incoming gradients."""
    kept = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, _C.Tensor) and o.requires_grad]
    if not kept:
        raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
    return [o for o, _ in kept], [g for _, g in kept]


class CheckpointFunction(Function):
    """The reentrant variant's node: inputs are (recompute, *args)."""

    @staticmethod
    def forward(ctx, recompute, *args):
        if not any(isinstance(a, _C.Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=4)
        ctx.recompute = recompute
        return recompute.function(*args)  # grad mode is off here: nothing is recorded or kept

    @staticmethod
    def backward(ctx, *grads):
        args, outputs = ctx.recompute.run()
        _backward(*_differentiable(outputs, grads))
        return (None,) + tuple(a.grad if isinstance(a, _C.Tensor) else None for a in args)


class NonReentrantCheckpoint(Function):
    """The non-reentrant variant's node: inputs are (recompute, outputs, *tensor args, *captured leaves)."""

    @staticmethod
    def forward(ctx, recompute, outputs, *tensors):
        ctx.recompute, ctx.tensors = recompute, tensors
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        args, outputs = ctx.recompute.run()
        args = [a for a in args if isinstance(a, _C.Tensor)]
        captured = list(ctx.tensors[len(args):])
        wrt = [a for a in args if a.requires_grad] + captured
        # retain_graph: the recomputed graph goes with `outputs` anyway, and the histories of captured
        # non-leaf tensors (walked through to their leaves) must survive for the outer backward
        outputs, grads = _differentiable(outputs, grads)
        found = iter(_grad(outputs, wrt, grads, retain_graph=True, allow_unused=True))
        return (None, None) + tuple(next(found) if a.requires_grad else None for a in args) + tuple(found)


def _captured_leaves(outputs, args):
    """The leaves requiring grad that the recorded outputs depend on, other than the (detached) args."""
    own = {id(a) for a in args if isinstance(a, _C.Tensor)}
    leaves, seen = [], set()
    stack = [o.grad_fn for o in outputs if isinstance(o, _C.Tensor)]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        try:
            variable = node.variable
        except AttributeError:
            stack.extend(n for n, _ in node.next_functions)
            continue
        if id(variable) not in own:
            leaves.append(variable)
    return leaves


def _checkpoint_without_reentrant(function, args, kwargs, preserve_rng_state):
    if not _C.is_grad_enabled():
        return function(*args, **kwargs)
    recompute = _Recompute(function, args, kwargs, preserve_rng_state)
    detached = recompute.detached_args()
    with enable_grad():
        result = function(*detached, **kwargs)
    is_tuple = isinstance(result, tuple)
    outputs = result if is_tuple else (result,)
    leaves = _captured_leaves(outputs, detached)
    tensor_args = [a for a in args if isinstance(a, _C.Tensor)]
    if not leaves and not any(a.requires_grad for a in tensor_args):
        return result  # nothing to differentiate: no node, nothing kept
    # detaching drops the graph just recorded, and with it every activation
    outputs = tuple(o.detach() if isinstance(o, _C.Tensor) else o for o in outputs)
    del result, detached
    out = NonReentrantCheckpoint.apply(recompute, outputs, *tensor_args, *leaves)
    return out if is_tuple else out[0]


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs) without keeping its intermediate activations: they are recomputed in the
    backward. use_reentrant should be passed (True when omitted, with a warning); keyword arguments need
    use_reentrant=False. The RNG states of the CPU and of the devices of the tensor arguments are restored
    for the recomputation unless preserve_rng_state=False."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING.format(
            "torch.utils.checkpoint", "calling checkpoint without use_reentrant will raise an exception"), stacklevel=2)
        use_reentrant = True
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        return CheckpointFunction.apply(_Recompute(function, args, {}, preserve_rng_state), *args)
    return _checkpoint_without_reentrant(function, args, kwargs, preserve_rng_state)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs the modules or functions in sequence, in `segments` chunks, all but the last checkpointed.
    `functions` is an nn.Sequential or a list; the input is one Tensor, as for nn.Sequential."""
    from ..nn import Sequential

    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING.format("torch.utils.checkpoint.checkpoint_sequential",
                                                    "we will raise an exception if use_reentrant is not passed"),
                      stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run(start, stop):
        def forward(x):
            for f in functions[start:stop]:
                x = f(x)
            return x
        return forward

    size = len(functions) // segments
    stop = 0
    for start in range(0, size * (segments - 1), size):
        stop = start + size
        input = checkpoint(run(start, stop), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(stop, len(functions))(input)
