"""ctorch.linalg: torch.linalg's functions (the computations live in ctorch._C)."""
from .. import _C

__all__ = ["cross", "vander"]


def cross(*args, **kwargs):
    """cross(input, other, *, dim=-1, out=None) -> Tensor: cross product of 3-vectors along dim,
    the other dims broadcast. See ctorch._C._linalg_cross."""
    return _C._linalg_cross(*args, **kwargs)


def vander(x, *, N=None):
    """vander(x, *, N=None) -> Tensor: the powers x^0 .. x^(N-1) of the last dim along a new last
    dim. See ctorch._C._linalg_vander."""
    return _C._linalg_vander(x, N=N)
