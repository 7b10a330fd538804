"""Python-level parts of ctorch.Tensor: the text form (formatting is naturally Python) and
argument sugar that does no numerics. Attached to the C type at import."""
from . import _C
from ._tensor_str import tensor_repr as _format

Tensor = _C.Tensor


def _repr(self, *, tensor_contents=None):
    t = self.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    dtype_name = str(t.dtype).replace("torch.", "")
    if dtype_name == "bfloat16":
        t = t.float()
    suffixes = []
    grad_fn = getattr(self, "grad_fn", None)
    if grad_fn is not None:
        suffixes.append("grad_fn=<{}>".format(type(grad_fn).__name__))
    elif getattr(self, "requires_grad", False):
        suffixes.append("requires_grad=True")
    default = str(_C.get_default_dtype()).replace("torch.", "")
    return _format(t.numpy(), dtype_name, str(self.device), extra_suffixes=suffixes, default_dtype=default)


Tensor.__repr__ = _repr
Tensor.__str__ = _repr


def _format_spec(self, format_spec):
    # as PyTorch: a 0-d tensor formats as its Python number (f"{t}" -> "0.5"), others as str()
    if self.dim() == 0:
        return self.item().__format__(format_spec)
    if format_spec:
        raise TypeError("unsupported format string passed to Tensor.__format__")
    return str(self)


Tensor.__format__ = _format_spec


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Computes the gradient of this tensor with respect to graph leaves (accumulated in .grad)."""
    from . import autograd

    autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


Tensor.backward = _backward
# numpy interop: numpy reads CPU tensors through __array_interface__ (no copy; the array keeps
# the tensor alive) and defers binary operators to the tensor, as it does for PyTorch.
Tensor.__array_interface__ = property(_C._array_interface)
Tensor.__array_priority__ = 1000
