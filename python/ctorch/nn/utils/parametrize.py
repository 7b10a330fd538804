"""ctorch.nn.utils.parametrize: tensors of a module computed from other tensors on access, as
torch.nn.utils.parametrize.

register_parametrization moves module.<name> into module.parametrizations.<name> (a
ParametrizationList holding `original`, or `original0`, `original1`, ... when the first
parametrization's right_inverse returns several tensors) and swaps the module's class for a
subclass "Parametrized<Class>" carrying a property <name> that runs the list on every read (once per
`cached()` block) and calls the right_inverses on assignment. State-dict keys are therefore
PyTorch's (`parametrizations.weight.original0`, ...). Pure nn.Module bookkeeping over tensor ops."""
import collections.abc
import copyreg
from contextlib import contextmanager
from copy import deepcopy

from ..._C import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations", "transfer_parametrizations_and_params"]

# (id(module), tensor_name) -> value, filled while at least one cached() block is open
_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    """Within the block each parametrized tensor is computed on its first read and reused after."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_in_place(dest, src):
    # torch's Tensor.set_: dest keeps its identity (optimizers hold it) and takes src's storage,
    # shape and strides; ctorch's .data setter does exactly that
    dest.data = src


class ParametrizationList(ModuleList):
    """The parametrizations registered on one tensor of a module, and its original tensor(s).

    It is the type of module.parametrizations[tensor_name]; created by register_parametrization,
    never by the user."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype

        # the unconstrained value(s): right_inverse of every parametrization, last registered first
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)

        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            if original.device != new.device:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the device.\n"
                                 f"original.device: {original.device}\n"
                                 f"right_inverse(original).device: {new.device}")
            with no_grad():
                _set_in_place(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                                     "(list, tuple...). "
                                     f"Got element {i} of the sequence with type {type(part).__name__}.")
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", part)

        if not self.unsafe:
            value = self()
            if not isinstance(value, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
            if value.dtype != original_dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless "
                                 "`unsafe` flag is enabled.\n"
                                 f"unparametrized dtype: {original_dtype}\n"
                                 f"parametrized dtype: {value.dtype}")
            if value.shape != original_shape:
                raise ValueError("Registering a parametrization may not change the shape of the tensor, unless "
                                 "`unsafe` flag is enabled.\n"
                                 f"unparametrized shape: {original_shape}\n"
                                 f"parametrized shape: {value.shape}")

    def right_inverse(self, value):
        """Runs the right_inverses (last registered first) on value and stores the result in the
        original tensor(s) in place."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement "
                                       "right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                                     f"while `original` has dtype {self.original.dtype}")
                _set_in_place(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, part in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(part, Tensor):
                    raise ValueError("'right_inverse' must return a sequence of tensors "
                                     f"or reference-type opaques. Got element {i} of type {type(part).__name__}.")
                if original_i.dtype != part.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {part.dtype} "
                                     f"while `original{i}` has dtype {original_i.dtype}")
                _set_in_place(original_i, part)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module):
    """Gives module a class of its own, Parametrized<Class>, to hang the properties on."""
    cls = module.__class__

    def default_deepcopy(self, memo):
        obj = memo.get(id(self))
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = deepcopy(self.__dict__, memo)
        for slot in copyreg._slotnames(self.__class__):
            if hasattr(self, slot):
                setattr(replica, slot, deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self):
        raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                           "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                           "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")

    namespace = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module, tensor_name):
    """The property module.<tensor_name>: the parametrizations' output on read (cached inside
    cached()), their right_inverse on assignment."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        value = _cache.get(key)
        if value is None:
            value = parametrization()
            _cache[key] = value
        return value

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _check_added_parametrization(module, tensor_name, parametrization):
    """Consistency checks when a parametrization is stacked on an already parametrized tensor."""
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
    if x.dtype != y.dtype:
        raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless the `unsafe` "
                         "flag is enabled.\n"
                         f"module.{tensor_name}.dtype: {y.dtype}\n"
                         f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
    if x.shape != y.shape:
        raise ValueError("Registering a parametrization may not change the shape of the tensor, unless the `unsafe` "
                         "flag is enabled.\n"
                         f"module.{tensor_name}.shape: {y.shape}\n"
                         f"parametrization(module.{tensor_name}).shape: {x.shape}")
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        z = parametrization.right_inverse(x)
    except NotImplementedError:
        return
    if not isinstance(z, Tensor):
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: {type(z).__name__}")
    if z.dtype != y.dtype:
        raise ValueError("The tensor returned by parametrization.right_inverse must have the same dtype "
                         f"as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.dtype: {y.dtype}\n"
                         f"returned dtype: {z.dtype}")
    if z.shape != y.shape:
        raise ValueError("The tensor returned by parametrization.right_inverse must have the same shape "
                         f"as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.shape: {y.shape}\n"
                         f"returned shape: {z.shape}")


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Makes module.<tensor_name> read as parametrization(original) (chained after the ones already
    registered on it). The parametrization takes the module's training mode. Returns module."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_added_parametrization(module, tensor_name, parametrization)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether module has a parametrization on tensor_name (on any tensor when None)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Removes the parametrizations on module.<tensor_name>. With leave_parametrized the tensor keeps
    its current (parametrized) value, else it becomes the original tensor again (only possible when
    there is one original). Returns module."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
                _set_in_place(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        value = getattr(module, tensor_name)
        original = Parameter(value.detach()) if value.requires_grad else value
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """module's class before any parametrization was registered on it."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Registers from_module's parametrizations (all, or those of tensor_name) on to_module and makes
    to_module share their original tensors, creating the parametrized tensors it lacks. Returns
    to_module."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module
