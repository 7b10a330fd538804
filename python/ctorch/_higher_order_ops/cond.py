"""torch.cond(pred, true_fn, false_fn, operands=()) run eagerly, as PyTorch runs it outside torch.compile."""
from .. import _C


def _leaves(tree):
    """The leaves of nested dicts, lists and tuples."""
    if isinstance(tree, dict):
        for v in tree.values():
            yield from _leaves(v)
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            yield from _leaves(v)
    else:
        yield tree


def cond(pred, true_fn, false_fn, operands=()):
    """Calls true_fn(*operands) when pred holds, else false_fn(*operands). pred: a Python bool/int/float, or
    a one-element tensor; operands: a tuple or list whose (possibly nested) leaves are tensors."""
    if isinstance(pred, (bool, int, float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, _C.Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or any(not isinstance(t, _C.Tensor) for t in _leaves(operands)):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple that only "
                           f"consists of tensor leaves, but got {operands}.")
    return true_fn(*operands) if bool(pred) else false_fn(*operands)
