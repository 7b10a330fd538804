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

# NumPy defers binary operators with a Tensor operand to the Tensor (np.float32(2) + t is a
# Tensor), as in PyTorch.
Tensor.__array_priority__ = 1000
