"""Python-level parts of ctorch.Tensor: the text form (formatting is naturally Python) and
argument sugar that does no numerics. Attached to the C type at import."""
import math
import warnings

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


_autograd = None  # ctorch.autograd, bound on the first backward (it is imported after this module)


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Computes the gradient of this tensor with respect to graph leaves (accumulated in .grad)."""
    global _autograd
    if _autograd is None:  # an import statement per call cost more than the rest of this function
        from . import autograd as _autograd
    _autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


Tensor.backward = _backward
# numpy interop: numpy reads CPU tensors through __array_interface__ (no copy; the array keeps
# the tensor alive) and defers binary operators to the tensor, as it does for PyTorch.
Tensor.__array_interface__ = property(_C._array_interface)
Tensor.__array_priority__ = 1000


# --- deprecated forms (PyTorch keeps them with warnings) ---------------------------------------------------------
def _resize(self, *sizes):
    """Deprecated non-inplace resize: self's elements in the shape sizes (the element count must not change)."""
    warnings.warn("non-inplace resize is deprecated")
    return _resize_to(self, sizes)


def _resize_as(self, tensor):
    """Deprecated non-inplace resize_as: resize(tensor.size())."""
    warnings.warn("non-inplace resize_as is deprecated")
    return _resize_to(self, tuple(tensor.size()))


def _resize_to(self, sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    numel = math.prod(sizes)
    if self.numel() != numel:
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but the given tensor has a "
            f"size of {'x'.join(map(str, self.size()))} ({self.numel()} elements). autograd's resize can only change "
            "the shape of a given tensor, while preserving the number of elements. ")
    return self.contiguous().view(*sizes)


def _volatile_get(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def _volatile_set(self, value):
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.", UserWarning,
                  stacklevel=2)


Tensor.resize = _resize
Tensor.resize_as = _resize_as
Tensor.volatile = property(_volatile_get, _volatile_set)
Tensor.name = property(lambda self: None, doc="None: tensors have no name (PyTorch keeps the attribute)")
