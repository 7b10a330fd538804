"""Grad-mode switches: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each works as a context manager and as a decorator, as in PyTorch. The flag itself lives in C
(ctorch._C._set_grad_enabled / is_grad_enabled) where ops read it."""
import functools
import inspect
import sys

from .. import _C


class _GradModeBase:
    _mode = None  # the grad mode to enter; subclasses set it

    def __call__(self, fn):
        def ctx():
            return self.__class__(*self._args())

        if inspect.isgeneratorfunction(fn):  # the mode holds inside each step, not between them
            @functools.wraps(fn)
            def generator(*args, **kwargs):
                gen = fn(*args, **kwargs)
                try:
                    with ctx():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with ctx():
                                gen.close()
                            raise
                        except BaseException:
                            with ctx():
                                response = gen.throw(*sys.exc_info())
                        else:
                            with ctx():
                                response = gen.send(request)
                except StopIteration as e:
                    return e.value

            return generator

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with ctx():
                return fn(*args, **kwargs)

        return wrapper

    def _args(self):
        return ()

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._mode)
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


class _NoParamBase(_GradModeBase):
    """Also a bare decorator: @no_grad as @no_grad()."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamBase):
    """Disables gradient recording inside the block."""

    _mode = False


class enable_grad(_NoParamBase):
    """Enables gradient recording inside the block (e.g. inside no_grad)."""

    _mode = True


class set_grad_enabled(_GradModeBase):
    """set_grad_enabled(mode): sets grad mode now; restores it when used as a context manager."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                            f"{type(mode).__name__}")
        self._mode = mode
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._mode)

    def _args(self):
        return (self._mode,)

    def __call__(self, fn):
        _C._set_grad_enabled(self._prev)
        return super().__call__(fn)

    def __enter__(self):
        return self


class inference_mode(_GradModeBase):
    """inference_mode(mode=True): like no_grad (ctorch has no separate inference tensors)."""

    def __init__(self, mode=True):
        self._mode = not mode

    def _args(self):
        return (not self._mode,)

    def __enter__(self):
        global _inference_mode_enabled
        self._prev_inference = _inference_mode_enabled
        _inference_mode_enabled = not self._mode
        return super().__enter__()

    def __exit__(self, *exc):
        global _inference_mode_enabled
        _inference_mode_enabled = self._prev_inference
        return super().__exit__(*exc)


_inference_mode_enabled = False


def is_inference_mode_enabled():
    """torch.is_inference_mode_enabled(): whether an inference_mode(True) block is active."""
    return _inference_mode_enabled
