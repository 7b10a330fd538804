"""torch.while_loop(cond_fn, body_fn, carried_inputs) run eagerly: the loop PyTorch's dense implementation runs
(the carried values replaced by body_fn's outputs while cond_fn holds), with its input and output checks."""
from .. import _C
from .cond import _leaves


def _check_pred(pred):
    if isinstance(pred, bool) or (isinstance(pred, _C.Tensor) and pred.dim() == 0 and pred.dtype == _C.bool):
        return bool(pred)
    raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean but got {pred}")


def while_loop(cond_fn, body_fn, carried_inputs):
    """Runs carried = body_fn(*carried) while cond_fn(*carried) is True; returns the final carried values (the
    inputs cloned when the loop never runs). body_fn returns a tuple as long as carried_inputs."""
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got {type(carried_inputs)}")
    if any(not isinstance(t, (_C.Tensor, int)) for t in _leaves(carried_inputs)):
        raise RuntimeError("Expect carried_inputs to be a tuple of possibly nested dict/list/tuple that only"
                           f"consists of tensor or int leaves, but got {carried_inputs}.")
    carried = carried_inputs
    if not _check_pred(cond_fn(*carried)):
        return tuple(v.clone() if isinstance(v, _C.Tensor) else v for v in carried)
    while True:
        out = body_fn(*carried)
        if not isinstance(out, tuple):
            raise AssertionError(f"body_fn should return a tuple but got {type(out)}")
        if len(out) != len(carried_inputs):
            raise AssertionError("body_fn should return the same number of elements as carried_inputs, got "
                                 f"{len(out)} vs {len(carried_inputs)}")
        carried = out
        if not _check_pred(cond_fn(*carried)):
            return carried
