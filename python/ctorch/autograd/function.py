"""ctorch.autograd.Function: custom ops with a user-written backward.

forward runs with grad mode off; the C engine gets a node (made by _C._make_function_node)
whose backward calls the user's staticmethod backward(ctx, *grad_outputs)."""
import functools
import inspect

from .. import _C
from .grad_mode import no_grad


class FunctionCtx:
    """The ctx passed to forward and backward."""

    def __init__(self, fn_cls, num_inputs):
        self._fn_cls = fn_cls
        self._saved = None
        self._released = False
        self._num_inputs = num_inputs
        self.needs_input_grad = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _C.Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        hooks = _C._saved_tensors_hooks_current()  # saved_tensors_hooks: keep only what pack_hook returns
        self._unpack_hook = None if hooks is None else hooks[1]
        if hooks is not None:
            with no_grad():
                tensors = tuple((True, hooks[0](t)) if isinstance(t, _C.Tensor) else (False, t) for t in tensors)
        self._saved = tensors

    @property
    def saved_tensors(self):
        if self._released:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors after they "
                "have already been freed). Saved intermediate values of the graph are freed when you call "
                ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph "
                "a second time or if you need to access saved tensors after calling backward.")
        if self._saved is None:
            return ()
        if getattr(self, "_unpack_hook", None) is None:
            self._check_versions()
            return self._saved
        with no_grad():
            return tuple(self._unpack_saved(p) if packed else p for packed, p in self._saved)

    def _record_versions(self, outputs):
        """After forward: each saved tensor's version now, and which output it is (if one)."""
        if self._saved is None or getattr(self, "_unpack_hook", None) is not None:
            return
        self._versions = tuple((t._version, next((i for i, o in enumerate(outputs) if o is t), None))
                               if isinstance(t, _C.Tensor) else None for t in self._saved)

    def _check_versions(self):
        """PyTorch's error for a saved tensor modified in place since it was saved."""
        for t, v in zip(self._saved, getattr(self, "_versions", ())):
            if v is None or t._version == v[0]:
                continue
            fn_name = None if t.grad_fn is None else type(t.grad_fn).__name__.split("Backward")[0]
            which = (f", which is output {v[1]} of {self._fn_cls.__name__}," if v[1] is not None else
                     f", which is output {t.output_nr} of {fn_name}," if fn_name else "")
            hint = ("the backtrace further above shows the operation that failed to compute its gradient. The "
                    "variable in question was changed in there or anywhere later. Good luck!"
                    if _C.is_anomaly_enabled() else "enable anomaly detection to find the operation that failed to "
                    "compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
            raise RuntimeError("one of the variables needed for gradient computation has been modified by an inplace "
                               f"operation: [{t.type()} {list(t.shape)}]{which} is at version {t._version}; expected "
                               f"version {v[0]} instead. Hint: {hint}")

    def _unpack_saved(self, packed):
        t = self._unpack_hook(packed)
        if not isinstance(t, _C.Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(t).__name__}")
        return t

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def mark_dirty(self, *tensors):
        """The inputs forward modified in place: returned as outputs, they take this node as history."""
        self._dirty = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = value

    # called by the C engine
    def _run_backward(self, grads):
        if self.materialize_grads:
            grads = tuple(_C.zeros_like(o) if g is None and isinstance(o, _C.Tensor) else g
                          for g, o in zip(grads, self._outputs))
        fn = self._fn_cls.vjp if self._fn_cls.vjp is not Function.vjp else self._fn_cls.backward
        result = fn(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        return self._check_grads(result)

    def _check_grads(self, result):
        """PyTorch's checks of what backward returned: one gradient per forward input (extra Nones are
        dropped), each None or a tensor, None for non-tensor inputs; a gradient whose shape the input's
        broadcasts to is summed back to it, and it is cast to the input's dtype."""
        name = f"{self._fn_cls.__name__}Backward"
        n = self._num_inputs
        if len(result) > n and all(g is None for g in result[n:]):
            result = result[:n]
        if len(result) != n:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {n}, got "
                               f"{len(result)})")
        checked = []
        for i, (g, meta) in enumerate(zip(result, self._input_meta)):
            if g is not None and not isinstance(g, _C.Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if g is not None and meta is None:
                raise RuntimeError(f"function {name} returned a gradient different than None at position {i + 1}, "
                                   "but the corresponding forward input was not a Variable")
            if g is not None:
                shape, dtype = meta
                if g.shape != shape:
                    if len(shape) > g.dim() or any(s != 1 and s != gs for s, gs in
                                                    zip(reversed(shape), reversed(g.shape))):
                        raise RuntimeError(f"Function {name} returned an invalid gradient at index {i} - got "
                                           f"{list(g.shape)} but expected shape compatible with {list(shape)}")
                    g = g.sum_to_size(shape)
                if g.dtype != dtype:
                    g = g.to(dtype)
            checked.append(g)
        return tuple(checked)

    def _release(self):
        self._saved = None
        self._released = True


class Function:
    """Subclass with staticmethods forward(ctx, *args) and backward(ctx, *grad_outputs)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def vjp(ctx, *grad_outputs):
        """An alias of backward: a Function may define either."""
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Forward-mode AD's rule; ctorch has no forward-mode AD for custom Functions."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Overridden with a forward(*args) that takes no ctx: fills ctx from the inputs and output."""
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def apply(cls, *args, **kwargs):
        separate_ctx = cls.setup_context is not Function.setup_context
        if separate_ctx:  # forward(*args) + setup_context(ctx, inputs, output): defaults bound as PyTorch
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, {}
        elif kwargs:  # bound to forward's parameters after ctx, as PyTorch
            bound = inspect.signature(cls.forward).bind(None, *args, **kwargs)
            bound.apply_defaults()
            args = bound.args[1:]
        if cls.backward is not Function.backward and cls.vjp is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
                               "should only implement one of them.")
        ctx = FunctionCtx(cls, len(args))
        ctx._input_meta = tuple((a.shape, a.dtype) if isinstance(a, _C.Tensor) else None for a in args)
        ctx.needs_input_grad = tuple(isinstance(a, _C.Tensor) and a.requires_grad for a in args)
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            if separate_ctx:
                out = cls.forward(*args)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args)
        finally:
            _C._set_grad_enabled(prev)
        dirty = getattr(ctx, "_dirty", ())
        for d in dirty:
            _C._increment_version(d)
        if not (prev and any(ctx.needs_input_grad)):
            return out
        for d in dirty:
            if d.requires_grad and d.is_leaf:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        outputs = out if isinstance(out, tuple) else (out,)
        # outputs that are inputs get a fresh alias so the input keeps its own history, unless
        # marked dirty: then the input itself takes this node as its history
        outputs = tuple(o.view_as(o) if isinstance(o, _C.Tensor) and any(o is a for a in args) and
                        not any(o is d for d in dirty) else o for o in outputs)
        ctx._outputs = tuple(o.detach() if isinstance(o, _C.Tensor) else o for o in outputs)
        non_diff = getattr(ctx, "_non_differentiable", ())
        _C._make_function_node(cls.__name__ + "Backward", ctx, tuple(args), outputs)
        ctx._record_versions(outputs if isinstance(out, tuple) else (out,))
        for o in outputs:
            if any(o is nd for nd in non_diff):
                o.detach_()
        return outputs if isinstance(out, tuple) else outputs[0]


def once_differentiable(fn):
    """Decorates a backward that is not itself differentiable: it runs without recording, and when a
    double backward would need its graph, its results raise at that backward instead."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not _C.is_grad_enabled():
            return outputs
        if not any(isinstance(a, _C.Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        results = (outputs,) if single else outputs
        # the node's edges are the differentiable inputs: the results depend on them
        wrapped = _DelayedError.apply(len(results), *results,
                                      *(a for a in args if isinstance(a, _C.Tensor) and a.requires_grad))
        return wrapped[0] if single else wrapped
    return wrapper


class _DelayedError(Function):
    """The history of a once_differentiable backward's results: differentiating them raises."""

    @staticmethod
    def forward(ctx, n, *args):
        return tuple(g.clone() if isinstance(g, _C.Tensor) else g for g in args[:n])

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")
