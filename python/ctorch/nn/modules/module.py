"""nn.Module: the bookkeeping of parameters, buffers and submodules (registration by attribute
assignment, traversal, device/dtype moves, train/eval, state_dict and its loading, repr), with
PyTorch's behaviour and messages. No numerics: every tensor operation is a ctorch op."""
import functools
from collections import OrderedDict, namedtuple

from ... import _C
from ...autograd.grad_mode import no_grad
from ..parameter import Buffer, Parameter, is_lazy

Tensor = _C.Tensor

_TYPENAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
    "uint8": "ByteTensor", "bool": "BoolTensor",
}


def _typename(obj):
    """torch.typename: 'torch.FloatTensor' for tensors, the qualified class name otherwise."""
    if isinstance(obj, Tensor):
        name = _TYPENAMES.get(str(obj.dtype).replace("torch.", ""), "Tensor")
        return ("torch.cuda." if obj.device.type == "cuda" else "torch.") + name
    module = type(obj).__module__
    qual = type(obj).__qualname__
    return qual if module in (None, "builtins") else module + "." + qual


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    first = lines.pop(0)
    rest = [(" " * spaces) + line if line.strip() else "" for line in lines]
    return first + "\n" + "\n".join(rest)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _DictHandle:
    """A handle that removes a hook from the ordered dict that holds it (and its id from the extra dicts
    that mark it with_kwargs / always_call), as torch.utils.hooks.RemovableHandle."""

    next_id = 0

    def __init__(self, hooks, extra_dict=None):
        self.hooks = hooks
        self.id = _DictHandle.next_id
        _DictHandle.next_id += 1
        if extra_dict is None:
            extra_dict = ()
        elif isinstance(extra_dict, dict):
            extra_dict = (extra_dict,)
        self.extra_dicts = tuple(extra_dict)

    def remove(self):
        if self.hooks is not None:
            self.hooks.pop(self.id, None)
            self.hooks = None
        for d in self.extra_dicts:
            d.pop(self.id, None)
        self.extra_dicts = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


# Hooks run by every module (nn.modules.module.register_module_forward_hook and friends).
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()


def _add_hook(hooks, hook, extra=None, prepend=False):
    handle = _DictHandle(hooks, extra)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_module_forward_pre_hook(hook):
    """hook(module, args) -> None or new args, run before every module's own forward pre-hooks."""
    return _add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """hook(module, args, output) (or (module, args, kwargs, output)), run before every module's own
    forward hooks."""
    handle = _add_hook(_global_forward_hooks, hook,
                       [_global_forward_hooks_always_called, _global_forward_hooks_with_kwargs])
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook):
    """hook(module, grad_output) -> None or new grad_output, for every module."""
    return _add_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """hook(module, grad_input, grad_output) -> None or new grad_input, for every module."""
    return _add_hook(_global_backward_hooks, hook)


def register_module_buffer_registration_hook(hook):
    """hook(module, name, buffer) -> None or a new buffer, run by register_buffer."""
    return _add_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """hook(module, name, submodule) -> None or a new submodule, run by register_module."""
    return _add_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """hook(module, name, param) -> None or a new parameter, run by register_parameter."""
    return _add_hook(_global_parameter_registration_hooks, hook)


def _registration_hooks(hooks, module, name, value):
    for hook in hooks.values():
        result = hook(module, name, value)
        if result is not None:
            value = result
    return value


class _BackwardHookFunction:
    """Identity autograd functions placed on a module's tensor inputs and outputs when it has full
    backward (pre-)hooks: the output one's backward collects grad_output and runs the pre-hooks, the
    input one's backward runs the hooks with (grad_input, grad_output)."""

    def __init__(self, module, hooks, pre_hooks):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_index = None

    @staticmethod
    def _pack(values, indices, size):
        full = [None] * size
        for i, v in zip(indices, values):
            full[i] = v
        return tuple(full)

    def _wrap(self, items, on_backward, copy=False):
        """(items with their tensors passed through one identity Function whose backward is on_backward
        (copies of them with copy=True), the positions of those tensors); (items, None) when none
        requires grad."""
        from ...autograd.function import Function

        index = [i for i, a in enumerate(items) if isinstance(a, Tensor)]
        tensors = [items[i] for i in index]
        if not tensors or not _C.is_grad_enabled() or not any(t.requires_grad for t in tensors):
            return items, None

        class BackwardHookFunctionBackward(Function):
            @staticmethod
            def forward(ctx, *args):
                ctx.set_materialize_grads(False)
                ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
                return tuple(a.clone() for a in args) if copy else args

            @staticmethod
            def backward(ctx, *grads):
                return on_backward(grads)

        BackwardHookFunctionBackward.__name__ = "BackwardHookFunction"
        new = BackwardHookFunctionBackward.apply(*tensors)
        items = list(items)
        for i, t in zip(index, new):
            items[i] = t
        return tuple(items), index

    def setup_input(self, args):
        self.n_inputs = len(args)
        if not self.hooks:
            return args

        def on_backward(grads):
            # as PyTorch's identity function's materialised grads: zeros where none flowed
            grads = [_C.zeros_like(t) if g is None or not t.requires_grad else g for g, t in zip(grads, tensors)]
            grad_inputs = self._pack(grads, self.input_index, self.n_inputs)
            for hook in self.hooks:
                result = hook(self.module, grad_inputs, self.grad_outputs)
                if result is None:
                    continue
                if len(result) != len(grad_inputs):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(result)}, but expected {len(grad_inputs)}")
                grad_inputs = result
            self.grad_outputs = None
            return tuple(grad_inputs[i] for i in self.input_index)

        tensors = [a for a in args if isinstance(a, Tensor)]
        args, self.input_index = self._wrap(args, on_backward)
        if self.input_index is not None:
            self.wrapped = [(args[i], args[i]._version) for i in self.input_index]
        return args

    def check_inputs(self):
        """The wrapped inputs alias the module's inputs: modifying them in place inside forward would
        bypass the hooks' function (PyTorch forbids it at the in-place op; this checks after forward)."""
        for k, (t, version) in enumerate(getattr(self, "wrapped", ())):
            if t._version != version:
                raise RuntimeError(
                    f"Output {k} of BackwardHookFunction is a view and is being modified inplace. This view was "
                    "created inside a custom Function (or because an input was returned as-is) and the autograd logic "
                    "to handle view+inplace would override the custom backward associated with the custom Function, "
                    "leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
                    "output of the custom Function.")

    def setup_output(self, result):
        single = not isinstance(result, tuple)
        items = (result,) if single else result
        state = {}

        def on_backward(grads):
            grad_outputs = self._pack(grads, state["index"], len(items))
            for hook in self.pre_hooks:
                new = hook(self.module, grad_outputs)
                if new is None:
                    continue
                if len(new) != len(grad_outputs):
                    raise RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                       f"got {len(new)}, but expected {len(grad_outputs)}")
                grad_outputs = tuple(new)
            self.grad_outputs = grad_outputs
            if self.input_index is None and self.hooks:  # no input requires grad: the hooks run here
                import warnings
                warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                              "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                              "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                              "details.", stacklevel=5)
                grad_inputs = (None,) * self.n_inputs
                for hook in self.hooks:
                    res = hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                        raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                           "always return None or None for all gradients.")
                self.grad_outputs = None
            return tuple(grad_outputs[i] for i in state["index"])

        # copies, so that in-place ops on the output cannot bypass the hooks' function
        items, state["index"] = self._wrap(items, on_backward, copy=True)
        return items[0] if single else items


def _forward_unimplemented(self, *input):
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


_HOOK_DICTS = ("_backward_pre_hooks", "_backward_hooks", "_forward_hooks", "_forward_hooks_with_kwargs",
               "_forward_hooks_always_called", "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
               "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
               "_load_state_dict_post_hooks")


def _init_hook_dicts(d):
    for name in _HOOK_DICTS:
        d.setdefault(name, OrderedDict())
    d.setdefault("_is_full_backward_hook", None)


class _NonFullHook:
    """A module's non-full backward hook as its node's hook(grad_inputs, grad_outputs), named as the hook."""

    def __init__(self, hook, module):
        self.hook, self.module = hook, module
        self.__name__ = getattr(hook, "__name__", type(hook).__name__)

    def __call__(self, grad_inputs, grad_outputs):
        return self.hook(self.module, grad_inputs, grad_outputs)


_NON_FULL = "Using a non-full backward hook when "
_DEPRECATED = " is deprecated and will be removed in future versions. This hook will be missing some "
_USE_FULL = " Please use register_full_backward_hook to get the documented behavior."


def _warn_non_full_backward_hook(inputs, result, grad_fn):
    """PyTorch's FutureWarnings for a non-full backward hook whose node misses some of the module's
    grad_input or grad_output."""
    import warnings

    def warn(message):
        warnings.warn(message, FutureWarning, stacklevel=4)

    if isinstance(result, Tensor):
        result = (result,)
    elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
        return warn("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
                    "Tensors" + _DEPRECATED + "of the grad_output." + _USE_FULL)
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    elif not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
        return warn("Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
                    "tuple of Tensors" + _DEPRECATED + "of the grad_input." + _USE_FULL)
    out_fns = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_fns or (len(out_fns) == 1 and grad_fn not in out_fns):
        warn(_NON_FULL + "outputs are nested in python data structure" + _DEPRECATED + "grad_output.")
    elif len(out_fns) > 1:
        warn(_NON_FULL + "outputs are generated by different autograd Nodes" + _DEPRECATED + "grad_output."
             + _USE_FULL)
    elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {n for n, _ in grad_fn.next_functions}:
        warn(_NON_FULL + "the forward contains multiple autograd Nodes" + _DEPRECATED + "grad_input." + _USE_FULL)


def _fast_getattr(cls):
    """Module.__getattr__'s lookup in C (nn.c: module_getattro) for a class that keeps Module's own
    __getattr__ and object's __getattribute__: the same results without 3.11's AttributeError per
    parameter read."""
    if cls.__getattr__ is Module.__getattr__ and cls.__getattribute__ is object.__getattribute__:
        _C._module_fast_getattr(cls)


class Module:
    """Base class for all neural network modules."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if self.call_super_init is False and bool(args):
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} "
                            "were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        _init_hook_dicts(d)

    forward = _forward_unimplemented

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _fast_getattr(cls)

    # --- registration ------------------------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        """Adds a buffer (state that is not a parameter) to the module."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        tensor = _registration_hooks(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Adds a parameter to the module."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                "explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                "the forward() method.")
        else:
            self._parameters[name] = _registration_hooks(_global_parameter_registration_hooks, self, name, param)

    def add_module(self, name, module):
        """Adds a child module, reachable as an attribute under name."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = _registration_hooks(_global_module_registration_hooks, self, name, module)

    register_module = add_module

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Replaces (or, unless strict, adds) the submodule at the dotted path target."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    # --- attribute protocol ----------------------------------------------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = _registration_hooks(_global_module_registration_hooks, self, name, value)
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                    "(torch.nn.Module or None expected)")
                modules[name] = _registration_hooks(_global_module_registration_hooks, self, name, value)
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer):  # nn.Buffer(t, persistent=...) registers a buffer
                    if buffers is None:
                        raise AttributeError("cannot assign buffer before Module.__init__() call")
                    remove_from(self.__dict__, self._parameters, self._modules)
                    self.register_buffer(name, value, value.persistent)
                elif buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(torch.Tensor or None expected)")
                    buffers[name] = _registration_hooks(_global_buffer_registration_hooks, self, name, value)
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        attrs = dir(self.__class__) + list(self.__dict__.keys())
        attrs += list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(a for a in set(attrs) if not a[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)
        _init_hook_dicts(self.__dict__)
        self.__dict__.setdefault("_non_persistent_buffers_set", set())

    # --- calling ------------------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
                or _global_forward_pre_hooks or _global_forward_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        result = None
        called = set()
        try:
            for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    new = hook(self, args, kwargs)
                    if new is not None:
                        if not (isinstance(new, tuple) and len(new) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                               f"new_kwargs), but got {new}.")
                        args, kwargs = new
                else:
                    new = hook(self, args)
                    if new is not None:
                        args = new if isinstance(new, tuple) else (new,)
            full = self._is_full_backward_hook is not False
            hooks = [*_global_backward_hooks.values(), *(self._backward_hooks.values() if full else ())]
            pre_hooks = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
            bw_hook = _BackwardHookFunction(self, hooks, pre_hooks) if hooks or pre_hooks else None
            if bw_hook is not None:
                args = bw_hook.setup_input(args)
            result = self.forward(*args, **kwargs)
            if bw_hook is not None:
                bw_hook.check_inputs()
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called:
                    called.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                    new = hook(self, args, kwargs, result)
                else:
                    new = hook(self, args, result)
                if new is not None:
                    result = new
            if bw_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    import warnings
                    warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple "
                                  f"of Tensors but received {type(result)}")
                else:
                    result = bw_hook.setup_output(result)
            if not full and self._backward_hooks:
                self._register_non_full_backward_hooks(args, result)
            return result
        except Exception:
            self._run_always_called_hooks(called, args, kwargs, result)
            raise

    def _run_always_called_hooks(self, called, args, kwargs, result):
        """Runs the always_call forward hooks that an exception in forward (or a hook) skipped; their own
        errors are turned into warnings."""
        import warnings

        for hooks, always, with_kwargs, what in (
                (_global_forward_hooks, _global_forward_hooks_always_called, _global_forward_hooks_with_kwargs,
                 "global module forward hook"),
                (self._forward_hooks, self._forward_hooks_always_called, self._forward_hooks_with_kwargs,
                 "module forward hook")):
            for hook_id, hook in hooks.items():
                if hook_id not in always or hook_id in called:
                    continue
                try:
                    new = hook(self, args, kwargs, result) if hook_id in with_kwargs else hook(self, args, result)
                    if new is not None:
                        result = new
                except Exception as e:
                    warnings.warn(f"{what} with ``always_call=True`` raised an exception that was silenced as "
                                  f"another error was raised in forward: {str(e)}")

    _call_impl = __call__

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) -> None or new args, called before forward; with_kwargs=True:
        hook(module, args, kwargs) -> None or (new_args, new_kwargs)."""
        handle = _add_hook(self._forward_pre_hooks, hook, self._forward_pre_hooks_with_kwargs, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) (with_kwargs: hook(module, args, kwargs, output)) -> None or a new
        output, called after forward; always_call=True also runs it when forward raises."""
        handle = _add_hook(self._forward_hooks, hook,
                           [self._forward_hooks_with_kwargs, self._forward_hooks_always_called], prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None or a new grad_output, called when the gradients with
        respect to the module's outputs are computed."""
        return _add_hook(self._backward_pre_hooks, hook, prepend=prepend)

    def register_backward_hook(self, hook):
        """Deprecated: hook(module, grad_input, grad_output) -> None or new grad_input, run after the
        last autograd node of the module's output (its grads, not the module's inputs' unless forward is
        one op); register_full_backward_hook gives the documented ones."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = False
        return _add_hook(self._backward_hooks, hook)

    def _register_non_full_backward_hooks(self, args, result):
        """register_backward_hook's hooks on the grad_fn of the output's first tensor, with PyTorch's
        warnings where that node does not see all of the module's inputs or outputs."""
        var = result
        while not isinstance(var, Tensor):
            if isinstance(var, dict):
                var = next(v for v in var.values() if isinstance(v, Tensor))
            else:
                var = var[0]
        grad_fn = var.grad_fn
        if grad_fn is None:
            return
        for hook in self._backward_hooks.values():
            grad_fn.register_hook(_NonFullHook(hook, self))
        _warn_non_full_backward_hook(args, result, grad_fn)

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or a new grad_input, called when the gradients
        with respect to the module's inputs are computed."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = True
        return _add_hook(self._backward_hooks, hook, prepend=prepend)

    def _register_state_dict_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) -> None or a new state_dict, called at the
        end of state_dict() (nn.utils.spectral_norm records its version this way)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was "
                               "previously registered via register_state_dict_post_hook")
        return _add_hook(self._state_dict_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) -> None, called at the end of state_dict()."""
        hook._from_public_api = True
        return _add_hook(self._state_dict_hooks, hook)

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) -> None, called before state_dict() saves this module."""
        return _add_hook(self._state_dict_pre_hooks, hook)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """hook([module,] state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs), called before this module loads its entries (renaming old keys, ...)."""
        return _add_hook(self._load_state_dict_pre_hooks, functools.partial(hook, self) if with_module else hook)

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs) -> None, called before this module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) -> None, called after load_state_dict loaded this module; it may
        edit incompatible_keys.missing_keys / unexpected_keys in place."""
        return _add_hook(self._load_state_dict_post_hooks, hook)

    # --- traversal ----------------------------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse
                   else [(prefix, self)])
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or id(value) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    # --- modes ---------------------------------------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def compile(self, *args, **kwargs):
        """In place, as PyTorch's: checks torch.compile's arguments; the module runs eagerly (see
        ctorch.compiler)."""
        from ... import compiler
        compiler.compile(self, *args, **kwargs)

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # --- device and dtype moves ---------------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                param_applied = fn(param)
            if param.requires_grad and not (param_applied.is_floating_point() or param_applied.is_complex()):
                raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex "
                                   "dtype")
            # Keep the Parameter object (optimizers hold references to it): swap its data.
            param.data = param_applied
            if param.grad is not None:
                with no_grad():
                    grad_applied = fn(param.grad)
                param.grad.data = grad_applied
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """Moves and/or casts the parameters and buffers in place; returns self.

        to(device=None, dtype=None, non_blocking=False, memory_format=None), to(dtype), to(tensor);
        memory_format (torch.channels_last, ...) applies to the 4-d and 5-d parameters and buffers."""
        device, dtype, non_blocking, memory_format = _parse_to(*args, **kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t):
            kw = {"memory_format": memory_format} if memory_format is not None and t.dim() in (4, 5) else {}
            if t.is_floating_point():
                return t.to(device, dtype, **kw) if dtype is not None else t.to(device, **kw)
            return t.to(device, **kw)

        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Moves the parameters and buffers to device without copying their values (uninitialised)."""
        from ... import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def share_memory(self):
        return self._apply(lambda t: t.share_memory_())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    # --- state dict ----------------------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        extra = getattr(type(self), "get_extra_state", Module.get_extra_state)
        if extra is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer, keyed by dotted name."""
        if args:  # the deprecated positional form state_dict(destination, prefix, keep_vars)
            import warnings
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to https://pytorch.org/docs/"
                          "main/generated/torch.nn.Module.html#torch.nn.Module.state_dict for details.", FutureWarning,
                          stacklevel=2)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is None:
                continue
            if getattr(hook, "_from_public_api", False):
                raise RuntimeError("state_dict post-hook must return None")
            destination = result
        return destination

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in list(self._parameters.items()) + list(persistent.items()) if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(input_param)}")
                continue
            lazy = is_lazy(param)  # no shape to compare yet (a lazy input_param's .shape raises, as PyTorch)
            if not lazy and len(param.shape) == 0 and len(input_param.shape) == 1 and input_param.shape[0] == 1:
                input_param = input_param[0]
            if not lazy and input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter) and not isinstance(input_param, Parameter):
                            input_param = Parameter(input_param, requires_grad=param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.size()} and whose dimensions in the checkpoint are {input_param.size()}, "
                                  f"an exception occurred : {ex.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if getattr(type(self), "set_extra_state", Module.set_extra_state) is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if input_name[0] not in self._modules and input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies parameters and buffers from state_dict into this module and its descendants.

        strict=True: the keys must match exactly (RuntimeError listing missing/unexpected keys).
        Returns a NamedTuple (missing_keys, unexpected_keys)."""
        from collections.abc import Mapping

        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state, prefix, local_metadata, True, missing_keys, unexpected_keys,
                                         error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {k: v for k, v in local_state.items() if k.startswith(child_prefix)}
                    load(child, child_state, child_prefix)
            keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not expected to return "
                        "new values, if incompatible_keys need to be modified, it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # --- text ------------------------------------------------------------------------------------------------
    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        """Extra information shown inside the parentheses of repr (one line, or several)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


_fast_getattr(Module)


def _parse_to(*args, **kwargs):
    """(device, dtype, non_blocking, memory_format) from Module.to's arguments."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, bool):
            non_blocking = a
        elif isinstance(a, (str, int, _C.device)):
            device = a
        elif a is not None:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
    if device is not None:
        device = _C.device(device) if not isinstance(device, int) else _C.device("cuda", device)
    return device, dtype, non_blocking, memory_format
