"""torch.jit, for programs that use it for speed or deployment.

ctorch has no TorchScript: every op is already one C call, run as it comes (eagerly), as with
torch.compile (compiler.py). torch.jit.script and torch.jit.trace check their arguments as PyTorch
does and give back an object that runs the original Python:
- a module comes back as a ScriptModule (RecursiveScriptModule for script, TopLevelTracedModule
  for trace) that is the original module under a subclass: the same parameter and buffer objects,
  submodules, state_dict keys, outputs; its own `training` flag and hook dicts, as PyTorch's copy;
- a function comes back as a ScriptFunction that calls it;
- trace runs the example inputs once and checks their and the outputs' types as PyTorch does.
  check_trace compares nothing: an eager rerun computes the same ops, so it cannot differ.
With PYTORCH_JIT=0 in the environment, script and trace give the object back unchanged and
ScriptModule is a plain nn.Module, as PyTorch documents for that setting.
torch.jit.save / load and ScriptModule.save raise: there is no TorchScript archive to write or
read; save the state_dict with ctorch.save instead."""
import copy as _copy
import os as _os
import typing as _typing
import warnings as _warnings

from .. import _C
from ..nn.modules.module import Module as _Module

__all__ = ["Attribute", "Error", "Final", "Future", "ScriptFunction", "ScriptModule", "ScriptWarning",
           "TracerWarning", "annotate", "export", "fork", "freeze", "ignore", "interface", "is_scripting",
           "is_tracing", "load", "optimize_for_inference", "save", "script", "script_method", "trace",
           "trace_module", "unused", "wait"]


def _env_enabled(name, default):
    value = _os.environ.get(name)
    if value is None:
        return default
    if value.lower() in ("0", "false", "no", "off"):
        return False
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"Unknown setting of {name}. Try using 0 or 1.")


_enabled = _env_enabled("PYTORCH_JIT", True)

Final = _typing.Final


def _deprecated(name, instead="switch to `torch.compile` or `torch.export`"):
    """PyTorch's FutureWarning on every torch.jit entry point (TorchScript is deprecated there)."""
    _warnings.warn(f"`torch.jit.{name}` is deprecated. Please {instead}.", FutureWarning, stacklevel=3)


_USE_COMPILE = "use `torch.compile` instead"


def _check_optimize(optimize):
    if optimize is not None:
        _warnings.warn("`optimize` is deprecated and has no effect. Use `with torch.jit.optimized_execution()` "
                       "instead", FutureWarning, stacklevel=3)


class Error(RuntimeError):
    """torch.jit.Error (TorchScript's runtime error type)."""


class TracerWarning(Warning):
    """torch.jit.TracerWarning."""


class ScriptWarning(Warning):
    """torch.jit.ScriptWarning."""


_NO_TORCHSCRIPT = ("ctorch has no TorchScript: it cannot {what} a TorchScript archive. Save the module's "
                   "state_dict with ctorch.save(model.state_dict(), path) and load it into the module with "
                   "model.load_state_dict(ctorch.load(path)) instead.")


def save(m, f, _extra_files=None):
    """torch.jit.save: raises (ctorch writes no TorchScript archive)."""
    _deprecated("save", "switch to `torch.export`")
    raise RuntimeError(_NO_TORCHSCRIPT.format(what="write"))


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """torch.jit.load: raises (ctorch reads no TorchScript archive)."""
    _deprecated("load", "switch to `torch.export`")
    raise RuntimeError(_NO_TORCHSCRIPT.format(what="read"))


# --- annotations: pass-throughs in eager Python (as PyTorch's outside TorchScript) ---------------------
def is_scripting():
    """False: ctorch never compiles a program to TorchScript."""
    return False


def is_tracing():
    """False: a traced program runs its Python on every call here, so no call is ever being recorded."""
    return False


def annotate(the_type, the_value):
    """the_value (the type is for the TorchScript compiler)."""
    return the_value


def Attribute(value, type):  # noqa: A002,N802  (PyTorch's name)
    """value (the type is for the TorchScript compiler)."""
    return value


class _FunctionModifiers:
    UNUSED = "unused (ignored and replaced with raising of an exception)"
    IGNORE = "ignore (leave as a call to Python, cannot be torch.jit.save'd)"
    EXPORT = "export (compile this function even if nothing calls it)"
    DEFAULT = "default (compile if called from a exported function / forward)"
    COPY_TO_SCRIPT_WRAPPER = "if this method is not scripted, copy the python method onto the scripted model"


def export(fn):
    """fn, marked as an entry point (TorchScript compiles it even if forward does not call it)."""
    fn._torchscript_modifier = _FunctionModifiers.EXPORT
    return fn


def unused(fn):
    """fn, marked as left out of TorchScript (a property's getter and setter are marked)."""
    if isinstance(fn, property):
        for part in (fn.fget, fn.fset):
            if part is not None:
                part._torchscript_modifier = _FunctionModifiers.UNUSED
        return fn
    fn._torchscript_modifier = _FunctionModifiers.UNUSED
    return fn


def ignore(drop=False, **kwargs):
    """@ignore or @ignore(drop=...): the function, marked as left as a Python call."""
    if callable(drop):
        drop._torchscript_modifier = _FunctionModifiers.IGNORE
        return drop
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}")
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export:
        _warnings.warn("ignore(drop_on_export=True) has been deprecated. TorchScript will now drop the function "
                       "call on compilation. Use torch.jit.unused now. {}", category=FutureWarning)
        drop = drop_on_export
    elif drop:
        _warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function call on "
                       "compilation. Use torch.jit.unused now. {}", category=FutureWarning)

    def decorator(fn):
        fn._torchscript_modifier = _FunctionModifiers.UNUSED if drop else _FunctionModifiers.IGNORE
        return fn
    return decorator


def interface(obj):
    """The class itself (a TorchScript interface type is a plain class in Python)."""
    _deprecated("interface", _USE_COMPILE)
    if not isinstance(obj, type):
        raise RuntimeError("interface must be applied to a class")
    obj.__torch_script_interface__ = True
    return obj


# --- ScriptModule, ScriptFunction ----------------------------------------------------------------------------
class ScriptModule(_Module):
    """torch.jit.ScriptModule. Subclassing it (with @script_method methods) gives an nn.Module; a
    scripted or traced module is an instance of it. save() raises (no TorchScript archive)."""

    def save(self, f, _extra_files=None):
        raise RuntimeError(_NO_TORCHSCRIPT.format(what="write"))

    def save_to_buffer(self, _extra_files=None):
        raise RuntimeError(_NO_TORCHSCRIPT.format(what="write"))

    def define(self, src):
        raise RuntimeError("ctorch has no TorchScript: ScriptModule.define cannot compile TorchScript source")


class RecursiveScriptModule(ScriptModule):
    """What torch.jit.script gives for a module: the module under this class (see the module docstring)."""

    @property
    def original_name(self):
        return self._original_name


class TopLevelTracedModule(RecursiveScriptModule):
    """What torch.jit.trace gives for a module."""


def _wrap_module(module, kind):
    """module seen as a `kind` ScriptModule: a new object of a subclass of both, sharing the module's
    parameters, buffers and submodules, with its own dicts (so registering on one leaves the other)."""
    if isinstance(module, ScriptModule):
        return module
    base = type(module)
    cls = type(kind.__name__, (kind, base), {"__module__": kind.__module__, "__qualname__": kind.__name__})
    new = _shallow_copy(module, cls)
    new.__dict__["_original_name"] = base.__name__
    return new


def _shallow_copy(module, cls):
    """A new cls object with module's attributes: the same tensors and submodules, copies of its dicts."""
    new = object.__new__(cls)
    new.__dict__.update({k: (_copy.copy(v) if isinstance(v, dict) else v) for k, v in module.__dict__.items()})
    return new


def script_method(fn):
    """The method itself (ScriptModule subclasses run their Python)."""
    _deprecated("script_method")
    return fn


class ScriptFunction:
    """What torch.jit.script / trace give for a function: calls it."""

    def __init__(self, fn, name=None):
        self._fn = fn
        self.__name__ = name or getattr(fn, "__name__", type(fn).__name__)
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    @property
    def name(self):
        return self.__name__

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def save(self, f, _extra_files=None):
        raise RuntimeError(_NO_TORCHSCRIPT.format(what="write"))

    def __repr__(self):
        return f"<ctorch.jit.ScriptFunction object ({self.__name__})>"


if not _enabled:
    class ScriptModule(_Module):  # noqa: F811  (PyTorch's class under PYTORCH_JIT=0: a plain Module)
        """torch.jit.ScriptModule with PYTORCH_JIT=0: a plain nn.Module."""

    class RecursiveScriptModule(ScriptModule):  # noqa: F811
        """torch.jit.RecursiveScriptModule with PYTORCH_JIT=0."""

    TopLevelTracedModule = RecursiveScriptModule


# --- script --------------------------------------------------------------------------------------------------
def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """torch.jit.script: a module as a RecursiveScriptModule, a function as a ScriptFunction, a class
    unchanged; each runs its Python (see the module docstring)."""
    _deprecated("script")
    if not _enabled:
        return obj
    _check_optimize(optimize)
    if isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    if isinstance(obj, _Module):
        return _wrap_module(obj, RecursiveScriptModule)
    if isinstance(obj, type):
        return obj
    if not callable(obj):
        raise RuntimeError(f"ctorch has no TorchScript: torch.jit.script cannot compile a {type(obj).__name__}")
    return ScriptFunction(obj)


# --- trace ---------------------------------------------------------------------------------------------------
def _check_outputs(value, strict):
    """PyTorch's tracer output rule: tensors, tuples of them; lists and dicts only with strict=False."""
    if isinstance(value, _C.Tensor):
        return
    if isinstance(value, tuple):
        for v in value:
            _check_outputs(v, strict)
        return
    if isinstance(value, (list, dict)):
        if strict:
            kind = "list" if isinstance(value, list) else "dict"
            _warnings.warn(f"Encountering a {kind} at the output of the tracer might cause the trace to be "
                               "incorrect, this is only valid if the container structure does not change based on "
                               "the module's inputs. Consider using a constant container instead (e.g. for `list`, "
                               "use a `tuple` instead. for `dict`, use a `NamedTuple` instead). If you absolutely "
                               "need this and know the side effects, pass strict=False to trace() to allow this "
                               "behavior.", TracerWarning, stacklevel=4)
        for v in (value.values() if isinstance(value, dict) else value):
            _check_outputs(v, strict)
        return
    raise RuntimeError("Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from traced "
                       "functions")


def _as_args(example_inputs):
    if isinstance(example_inputs, _C.Tensor):
        return (example_inputs,)
    if isinstance(example_inputs, tuple):
        return example_inputs
    return (example_inputs,)


def _run_example(fn, example_inputs, example_kwarg_inputs, strict):
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("example_kwarg_inputs should be a dict")
    if example_kwarg_inputs is not None:
        if not isinstance(example_kwarg_inputs, dict):
            raise RuntimeError("example_kwarg_inputs should be a dict")
        out = fn(**example_kwarg_inputs)
    else:
        out = fn(*_as_args(example_inputs))
    _check_outputs(out, strict)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """torch.jit.trace: runs func once on the example inputs, checks them and its outputs as PyTorch
    does, and gives back a TopLevelTracedModule (a module) or a ScriptFunction (a function). The
    result runs the Python on every call, so unlike PyTorch's trace it follows data-dependent
    control flow; check_trace compares nothing (an eager rerun cannot differ)."""
    _deprecated("trace")
    if not _enabled:
        return func
    _check_optimize(optimize)
    if isinstance(func, (ScriptModule, ScriptFunction)):
        _warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op. Returning the object "
                       "as is.", stacklevel=2)
        return func
    if isinstance(func, _Module):
        if example_inputs is None:
            if not isinstance(example_kwarg_inputs, dict):
                raise RuntimeError("example_kwarg_inputs should be a dict")
            return trace_module(func, {"forward": example_kwarg_inputs}, None, check_trace, None, check_tolerance,
                                strict, example_inputs_is_kwarg=True)
        return trace_module(func, {"forward": example_inputs}, None, check_trace, None, check_tolerance, strict)
    if not callable(func):
        raise AttributeError(f"'{type(func).__name__}' object has no attribute '__name__'")
    _run_example(func, example_inputs, example_kwarg_inputs, strict)
    return ScriptFunction(func)


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5, strict=True,
                 _force_outplace=False, _module_class=None, _compilation_unit=None, example_inputs_is_kwarg=False,
                 _store_inputs=True):
    """torch.jit.trace_module: runs each named method of mod once on its example inputs and gives mod
    back as a TopLevelTracedModule."""
    _deprecated("trace_method")
    if not _enabled:
        return mod
    if not isinstance(mod, _Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, example in inputs.items():
        method = getattr(mod, name)
        if name == "forward":
            method = mod  # through __call__, with the module's hooks, as PyTorch's trace of forward
        if example_inputs_is_kwarg:
            _run_example(method, None, example, strict)
        else:
            _run_example(method, example, None, strict)
    return _wrap_module(mod, TopLevelTracedModule)


# --- freeze, optimize_for_inference ------------------------------------------------------------------------
def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """torch.jit.freeze: a ScriptModule in eval mode, checked as PyTorch does, given back as a new
    ScriptModule over the same parameters (freezing inlines nothing here)."""
    _deprecated("freeze", _USE_COMPILE)
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use torch.jit.script or "
                           "torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() "
                           "on your module before freezing.")
    return _shallow_copy(mod, type(mod))


def optimize_for_inference(mod, other_methods=None):
    """torch.jit.optimize_for_inference: mod put in eval mode and frozen (no graph passes to run here)."""
    _deprecated("optimize_for_inference", _USE_COMPILE)
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please use torch.jit.script "
                           "or torch.jit.trace to script your 'nn.Module'.")
    if hasattr(mod, "training"):
        mod = freeze(mod.eval(), preserved_attrs=other_methods)
    return mod


class optimized_execution:  # noqa: N801  (PyTorch's name)
    """with torch.jit.optimized_execution(should_optimize): nothing to switch here."""

    def __init__(self, should_optimize):
        self.should_optimize = should_optimize

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


# --- fork / wait ---------------------------------------------------------------------------------------------
class Future:
    """torch.jit.Future (torch.futures.Future): a value that wait() and value() return, set once."""

    def __init__(self, *, devices=None):
        self._done = False
        self._result = None
        self._error = None
        self._callbacks = []

    def done(self):
        return self._done

    def wait(self):
        if not self._done:
            raise RuntimeError("ctorch's Future is completed synchronously; this one was never set")
        if self._error is not None:
            raise self._error
        return self._result

    value = wait

    def set_result(self, result):
        if self._done:
            raise RuntimeError("Future can only be marked completed once.")
        self._result, self._done = result, True
        self._run_callbacks()

    def set_exception(self, result):
        if self._done:
            raise RuntimeError("Future can only be marked completed once.")
        self._error, self._done = result, True
        self._run_callbacks()

    def _run_callbacks(self):
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def add_done_callback(self, callback):
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def then(self, callback):
        nxt = Future()

        def run(fut):
            try:
                nxt.set_result(callback(fut))
            except Exception as e:  # the callback's error completes the next future
                nxt.set_exception(e)
        self.add_done_callback(run)
        return nxt


def fork(func, *args, **kwargs):
    """torch.jit.fork: calls func(*args, **kwargs) now (eager PyTorch runs it at once too) and gives a
    completed Future; an exception is raised by wait()."""
    _deprecated("fork", _USE_COMPILE)
    fut = Future()
    try:
        fut.set_result(func(*args, **kwargs))
    except Exception as e:
        fut.set_exception(e)
    return fut


def wait(future):
    """torch.jit.wait: the forked call's value."""
    _deprecated("wait", _USE_COMPILE)
    return future.wait()
