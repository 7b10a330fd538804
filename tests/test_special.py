"""ctorch.special: torch.special's names (aliases of ctorch functions, checked to be the same
function), and its own functions entr, xlog1py, ndtr, i1 against NumPy on every device: values with
NaN/inf/0, integer inputs, out=, broadcasting and numbers, float64 gradchecks and grad_fn names."""
import math

import numpy as np
import pytest

import ctorch
import ctorch.special as special
from ctorch.autograd import gradcheck

from conftest import assert_close, to_numpy

ALIASES = {"digamma": "digamma", "psi": "digamma", "erf": "erf", "erfc": "erfc", "erfinv": "erfinv", "exp2": "exp2",
           "expit": "sigmoid", "expm1": "expm1", "gammaln": "lgamma", "i0": "i0", "log1p": "log1p", "logit": "logit",
           "sinc": "sinc", "round": "round"}


def T(arr, device, dtype="float64", requires_grad=False):
    return ctorch.tensor(np.asarray(arr), dtype=getattr(ctorch, dtype), device=device, requires_grad=requires_grad)


def _i1(x):
    """I1 by its power series (enough terms for |x| <= 5)."""
    k = np.arange(40)
    terms = (x[..., None] / 2) ** (2 * k + 1) / np.array([math.factorial(j) * math.factorial(j + 1) for j in k])
    return terms.sum(-1)


def test_aliases(device):
    x = T([0.25, 0.5, 0.75], device)
    for name, target in ALIASES.items():
        assert_close(getattr(special, name)(x), to_numpy(getattr(ctorch, target)(x)))
    assert_close(special.multigammaln(T([2.5, 3.0], device), 2), to_numpy(ctorch.mvlgamma(T([2.5, 3.0], device), 2)))
    assert_close(special.polygamma(1, x), to_numpy(ctorch.polygamma(1, x)))
    m = T([[1.0, 2.0], [3.0, 0.5]], device)
    for name in ("softmax", "log_softmax", "logsumexp"):
        assert_close(getattr(special, name)(m, 1), to_numpy(getattr(ctorch, name)(m, 1)))
    assert_close(special.xlogy(x, x), to_numpy(ctorch.xlogy(x, x)))
    assert not hasattr(ctorch, "special_entr")  # only under ctorch.special, as in PyTorch


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_own_functions(device, dtype):
    v = np.array([-1.0, 0.0, 0.5, 2.0, np.nan, np.inf])
    x = T(v, device, dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        entr = np.where(v > 0, -v * np.log(np.where(v > 0, v, 1)), np.where(v == 0, 0, -np.inf))
        assert_close(special.entr(x), np.where(np.isnan(v), np.nan, entr))
        assert_close(special.ndtr(x), np.array([0.5 * math.erfc(-a / math.sqrt(2)) for a in v]))
        y = np.array([1.0, np.nan, -1.0, 0.5, 2.0, 3.0])
        want = np.where(np.isnan(y), np.nan, np.where(v == 0, 0.0, v * np.log1p(y)))
        assert_close(special.xlog1py(x, T(y, device, dtype)), want)
    assert_close(special.i1(T([0.0, 1.0, -2.5, 4.0], device, dtype)), _i1(np.array([0.0, 1.0, -2.5, 4.0])))
    # numbers on either side, broadcasting, integer inputs computed in the default float dtype, out=
    assert_close(special.xlog1py(2, T([[0.5], [1.0]], device, dtype)), 2 * np.log1p(np.array([[0.5], [1.0]])))
    assert_close(special.xlog1py(T([1.0, 0.0], device, dtype), 0.5), np.array([np.log1p(0.5), 0.0]))
    ints = ctorch.tensor([1, 2], device=device)
    assert special.entr(ints).dtype == ctorch.float32 and special.ndtr(ints).dtype == ctorch.float32
    out = ctorch.empty(2, dtype=getattr(ctorch, dtype), device=device)
    assert special.entr(T([0.5, 1.0], device, dtype), out=out) is out
    assert_close(out, np.array([-0.5 * np.log(0.5), 0.0]))
    with pytest.raises(TypeError, match="must be Tensor"):
        special.entr(1.0)


def test_gradients(device):
    x = T([0.3, 1.2, 2.5], device, requires_grad=True)
    assert gradcheck(special.entr, (x,))
    assert gradcheck(special.ndtr, (x,))
    assert gradcheck(special.i1, (T([0.0, -1.5, 2.0], device, requires_grad=True),))
    y = T([0.5, -0.5, 3.0], device, requires_grad=True)
    assert gradcheck(special.xlog1py, (x, y))
    assert gradcheck(lambda b: special.xlog1py(2.0, b), (y,))
    assert special.entr(x).grad_fn.name() == "SpecialEntrBackward0"
    assert special.xlog1py(x, y).grad_fn.name() == "SpecialXlog1PyBackward0"
    assert special.xlog1py(2.0, y).grad_fn.name() == "SpecialXlog1PyBackward1"
    assert special.i1(x).grad_fn.name() == "SpecialI1Backward0"
    # x == 0 with y <= -1: the gradient for x is 0, as PyTorch masks it
    z = T([0.0], device, requires_grad=True)
    special.xlog1py(z, T([-1.0], device)).backward()
    assert_close(z.grad, np.array([0.0]))
