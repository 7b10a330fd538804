"""ctorch.autograd.graph: the autograd graph's nodes and hooks on it (saved-tensor hooks, node hooks,
multi-gradient hooks). Packing and unpacking of saved tensors, the node hooks and the engine are C
(csrc/autograd.c); this is the Python surface."""
import abc
import threading
from collections import namedtuple

from .. import _C

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "register_multi_grad_hook",
           "Node", "GradientEdge", "get_gradient_edge", "increment_version"]


class Node(abc.ABC):
    """The base of autograd graph nodes: every grad_fn (and Function backward node) is an instance."""

    @abc.abstractmethod
    def name(self):
        """The node's name, e.g. 'MulBackward0'."""

    @property
    @abc.abstractmethod
    def next_functions(self):
        """((node, input_nr), ...): where this node's gradients go."""

    @property
    @abc.abstractmethod
    def metadata(self):
        """A dict for user data."""

    @abc.abstractmethod
    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after the node runs; may return new grad_inputs."""

    @abc.abstractmethod
    def register_prehook(self, fn):
        """fn(grad_outputs) before the node runs; may return new grad_outputs."""


Node.register(_C._Node)


GradientEdge = namedtuple("GradientEdge", ("node", "output_nr"))
GradientEdge.__doc__ = "An edge of the autograd graph: the gradient of output `output_nr` of `node`."


def get_gradient_edge(tensor):
    """The GradientEdge through which `tensor`'s gradient flows: (grad_fn, output_nr) for a non-leaf,
    (its AccumulateGrad node, 0) for a leaf requiring grad."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    if tensor.grad_fn is not None:
        return GradientEdge(tensor.grad_fn, tensor.output_nr)
    # a leaf: its AccumulateGrad node is the one any op on it records as its edge
    node = tensor.view_as(tensor).grad_fn.next_functions[0][0]
    return GradientEdge(node, 0)


def increment_version(tensor):
    """Bumps tensor's version counter, as an in-place op would (marks saved copies of it stale)."""
    _C._increment_version(tensor)


class saved_tensors_hooks:
    """Context manager: tensors saved for backward by ops run inside go through pack_hook(tensor) at
    once, and the node keeps what it returns; unpack_hook(packed) gives the tensor back when backward
    needs it. Nestable: the innermost pair applies."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _C._push_saved_tensors_default_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args):
        _C._pop_saved_tensors_default_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU (pinned with pin_memory=True) and moved back to their device
    when backward needs them."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return tensor.device, tensor.cpu()
            from .. import cuda
            packed = _C.empty(tensor.size(), dtype=tensor.dtype)
            if cuda.is_available():  # (empty(pin_memory=True) does not pin in ctorch yet)
                packed = packed.pin_memory()
            packed.copy_(tensor)
            return tensor.device, packed

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """Context manager: registering saved-tensor hooks inside raises RuntimeError(error_message);
    entering it while hooks are registered raises too."""

    def __init__(self, error_message):
        self.message = error_message

    def __enter__(self):
        self.prev_message = _C._saved_tensors_hooks_get_disabled_error_message()
        _C._saved_tensors_hooks_disable(self.message)

    def __exit__(self, *args):
        _C._saved_tensors_hooks_set_disabled(self.prev_message)


class _MultiHandle:
    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """mode='all': fn(grads) once per backward, after the gradients of all `tensors` that this backward
    computes are ready (grads[i] is None for those it does not compute). mode='any': fn(grad) for the
    first of the tensors' gradients computed in each backward."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    state = {"run": None, "grads": [None] * len(tensors), "count": 0}

    def current_run():
        return _C._current_backward_run()

    if mode == "any":
        def any_hook(grad):
            run = current_run()
            with lock:
                if state["run"] == run:
                    return None
                state["run"] = run
            fn(grad)
            return None

        return _MultiHandle([t.register_hook(any_hook) for t in tensors if t.requires_grad])

    def make_hook(i):
        def hook(grad):
            run = current_run()
            with lock:
                if state["run"] != run:
                    state["run"], state["grads"], state["count"] = run, [None] * len(tensors), 0
                    state["expected"] = sum(_C._will_engine_execute(t) for t in tensors)
                state["grads"][i] = grad
                state["count"] += 1
                ready = state["count"] == state["expected"]
                grads = list(state["grads"])
            if ready:
                fn(grads)
            return None

        return hook

    return _MultiHandle([t.register_hook(make_hook(i)) for i, t in enumerate(tensors) if t.requires_grad])
