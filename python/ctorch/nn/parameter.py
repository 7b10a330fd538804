"""nn.Parameter: a Tensor subclass marking a module's learnable tensors. A Parameter shares its
data's storage and is a leaf (requires_grad=True by default); ops on it return plain Tensors."""
from .. import _C

Tensor = _C.Tensor


class Parameter(Tensor):
    """A kind of Tensor that is to be considered a module parameter.

    Assigning a Parameter as a Module attribute registers it in the module's parameters()."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.tensor([], dtype=_C.get_default_dtype())
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, not {type(data).__name__}")
        return _C._make_subclass(cls, data, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (Parameter, (self.data, self.requires_grad))

