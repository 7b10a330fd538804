"""ctorch.func.functional_call and stack_module_state: calling an nn.Module with parameters and
buffers given as arguments (nn.Module bookkeeping: the module's own tensors are swapped out for
the call and put back after it, even when the call raises)."""
from collections.abc import Sequence

from .. import _C
from .._C import Tensor
from ..nn.modules.module import Module

__all__ = ["functional_call", "stack_module_state"]

_MISSING = object()  # the module had no attribute of that name


def _submodule(module, path, memo):
    if not path:
        return module
    if path not in memo:
        prefix, dot, attr = path.rpartition(".")
        parent = _submodule(module, prefix, memo) if dot else module
        try:
            sub = getattr(parent, attr)
        except AttributeError:
            raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from None
        if not isinstance(sub, Module):
            raise TypeError(f"submodule `{path}`: {sub} is not an instance of torch.nn.Module")
        memo[path] = sub
    return memo[path]


def _swap_tensor(module, name, tensor):
    """Puts `tensor` (or, _MISSING, nothing) in module's slot `name` (a parameter, a buffer or a
    plain attribute, created if missing); returns what was there."""
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    for slots in (module._parameters, module._buffers):
        if name in slots:
            orig = slots[name]
            if tensor is _MISSING:
                del slots[name]
            else:
                slots[name] = tensor
            return orig
    orig = getattr(module, name) if hasattr(module, name) else _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


def _swap_tensors(module, named_tensors):
    """Swaps every `dotted.name -> tensor` in; returns the tensors taken out. All or nothing: on an
    error the ones already swapped go back before it propagates."""
    memo = {}
    taken = {}
    try:
        for name, tensor in named_tensors.items():
            prefix, _, attr = name.rpartition(".")
            taken[name] = _swap_tensor(_submodule(module, prefix, memo), attr, tensor)
    except Exception:
        _swap_tensors(module, dict(reversed(taken.items())))
        raise
    return taken


def _untie(module, tensors):
    """`tensors` plus, for a given name whose module tensor is tied to others (the same tensor
    under several names), the same value under those names; PyTorch's error if two given values
    for tied names differ."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    names_of = {}  # id(tensor) -> names
    for name, t in named.items():
        names_of.setdefault(id(t), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given_tied = [name for name in tensors if name in tied]
    for name in given_tied:
        given_values = {id(tensors[n]) for n in tied[name] if n in tensors}
        if len(given_values) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied[name])}, which are tied. "
                             "Consider using tie_weights=False")
    untied = dict(tensors)
    for name in given_tied:
        for other in tied[name]:
            untied[other] = tensors[name]
    return untied


def _check_keys(module, tensors):
    valid = {name for name, _ in module.named_parameters(remove_duplicate=False)}
    valid |= {name for name, _ in module.named_buffers(remove_duplicate=False)}
    errors = []
    unexpected = sorted(set(tensors) - valid)
    missing = sorted(valid - set(tensors))
    if unexpected:
        errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if errors:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(), "\n\t".join(errors)))


def _merge_dicts(parameter_and_buffer_dicts):
    if isinstance(parameter_and_buffer_dicts, dict):
        return parameter_and_buffer_dicts
    if not isinstance(parameter_and_buffer_dicts, Sequence) or isinstance(parameter_and_buffer_dicts, str):
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, "
                         f"but got {type(parameter_and_buffer_dicts)}")
    if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    counts = {}
    for d in parameter_and_buffer_dicts:
        for k in d:
            counts[k] = counts.get(k, 0) + 1
    repeated = [k for k, n in counts.items() if n > 1]
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
    strict=False): module(*args, **kwargs) with the named parameters and buffers (dotted names, a
    dict or a sequence of dicts) in place of the module's own for the duration of the call.
    tie_weights: a value given for one of several tied names is used for all of them. strict: the
    names must be exactly the module's parameters and buffers. Tensors the call assigns to those
    names are written back into the given dict, as in PyTorch."""
    given = _merge_dicts(parameter_and_buffer_dicts)
    tensors = _untie(module, given) if tie_weights else given
    if strict:
        _check_keys(module, tensors)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    originals = _swap_tensors(module, tensors)
    try:
        return module(*args, **kwargs)
    finally:
        current = _swap_tensors(module, originals)
        given.update({k: current[k] for k in given if k in current})


def _stacked_leaf(tensors, name):
    requires = [t.requires_grad for t in tensors]
    if any(requires) and not all(requires):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = _C.stack(tensors, 0)
    return result.detach().requires_grad_() if all(requires) else result


def stack_module_state(models):
    """stack_module_state(models) -> (params, buffers): each named parameter / buffer of the models
    (all of one class and mode) stacked along a new leading dimension, for vmap over an ensemble with
    functional_call. Stacked parameters are new leaves requiring grad."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers
