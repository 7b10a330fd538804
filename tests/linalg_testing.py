"""Helpers shared by the linalg test files (test_linalg_decomp, test_linalg_eig, test_linalg_lu)."""
import numpy as np
import pytest

import ctorch

FLOATS = ["float32", "float64"]


def T(arr, device, dtype="float64", grad=False):
    return ctorch.tensor(np.asarray(arr), dtype=getattr(ctorch, dtype), device=device, requires_grad=grad)


def N(t):
    return t.detach().cpu().numpy()


def mT(a):
    return np.swapaxes(a, -1, -2)


def raises(exc, msg, fn):
    """fn() raises exc with msg in its message."""
    with pytest.raises(exc) as info:
        fn()
    assert msg in str(info.value), (msg, str(info.value))
