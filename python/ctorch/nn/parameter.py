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



class UninitializedTensorMixin:
    """A parameter or buffer whose shape is not known yet: it holds an empty tensor of its future
    device and dtype (so .to() / .cuda() / .double() move it) until materialize() gives it a shape
    and turns it into cls_to_become."""

    __slots__ = ()
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        """Gives the tensor uninitialised storage of `shape` (on its own device and dtype unless given)
        and makes it a cls_to_become."""
        data = Tensor.data.__get__(self)
        if device is None:
            device = data.device
        if dtype is None:
            dtype = data.dtype
        Tensor.data.__set__(self, _C.empty(shape, device=device, dtype=dtype))
        # ctorch tensors have no attribute dict: a buffer keeps its (persistent) one as a Buffer,
        # which the lazy module then swaps for a plain Tensor
        self.__class__ = Buffer if self.cls_to_become is Tensor else self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize the "
            "parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param):
    """Whether param is an UninitializedParameter / UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter not initialised yet (lazy modules): it becomes a Parameter on materialize()."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        data = _C.empty(0, device=device, dtype=dtype)
        return _C._make_subclass(cls, data, requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        data = Tensor.data.__get__(self)
        result = type(self)(self.requires_grad, data.device, data.dtype)
        memo[id(self)] = result
        return result


class _BufferMeta(type(Tensor)):
    """isinstance(t, Buffer) for the plain tensors Buffer(...) marks (as torch's)."""

    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Buffer(data=None, *, persistent=True): a tensor that, assigned as a Module attribute, is
    registered as a buffer (persistent or not). data detached; a Tensor subclass here (ctorch
    tensors carry no attribute dict to mark)."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _C.empty(0)
        t = _C._make_subclass(cls, data.detach(), data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer not initialised yet (lazy modules): it becomes a plain Tensor on materialize()."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        data = _C.empty(0, device=device, dtype=dtype)
        t = _C._make_subclass(cls, data, requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
