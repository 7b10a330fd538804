"""torch.compile and torch.compiler, for programs written for them.

ctorch has no graph compiler: every op is already one C call into its kernels, run as it comes
(eagerly). torch.compile checks its arguments as PyTorch does and gives back the model or function
itself, unchanged, so a program that compiles its model runs here, eagerly, with the same results.
A compiled module is not wrapped: its state_dict keys have no `_orig_mod.` prefix (PyTorch's
OptimizedModule adds one)."""

# PyTorch's: torch._inductor.list_mode_options() and the registered backends without extra packages
MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
BACKENDS = ("cudagraphs", "inductor", "eager", "aot_eager")


def list_backends(exclude_tags=("debug", "experimental")):
    """The backend names torch.compile accepts (each runs the program eagerly here)."""
    return sorted(BACKENDS)


def _check(fullgraph, dynamic, backend, mode, options):
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    if isinstance(backend, str):
        if backend not in BACKENDS:
            raise RuntimeError(f"Invalid backend: {backend!r}. See `torch.compiler.list_backends()` for available "
                               "backends.")
    elif not callable(backend):
        raise TypeError(f"torch.compile(): backend must be a string or a callable, not {type(backend).__name__}")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"torch.compile(): options must be a dict, not {type(options).__name__}")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile: model (an nn.Module or any callable) itself, run eagerly (see the module's
    docstring). Without model, a decorator: @torch.compile or @torch.compile(mode=...)."""
    _check(fullgraph, dynamic, backend, mode, options)
    if model is None:
        def decorate(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           disable=disable)
        return decorate
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    return model


def disable(fn=None, recursive=True, *, reason=None):
    """torch.compiler.disable: fn runs eagerly, as everything does here."""
    if fn is None:
        return lambda f: f
    return fn


def is_compiling():
    """False: ctorch never traces a program."""
    return False


is_dynamo_compiling = is_compiling


def reset():
    """Clears compilation caches: ctorch keeps none."""
