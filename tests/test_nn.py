"""ctorch.nn: every layer and loss against NumPy (forward and gradients), module bookkeeping, state_dict
loading and its errors, reprs against PyTorch's exact text (hard-coded below, produced with the
reference torch at /work/torchref), module.to(dtype), nn.init."""
import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
import ctorch.nn.functional as F
from ctorch.autograd import gradcheck
from conftest import TOL, assert_close, to_numpy

RNG = np.random.default_rng(1234)


def t(arr, device, dtype="float64", requires_grad=False):
    return ctorch.tensor(np.asarray(arr), dtype=getattr(ctorch, dtype), device=device, requires_grad=requires_grad)


def np_f(dtype):
    return np.float32 if dtype == "bfloat16" else np.dtype(dtype).type


def tol(dtype):
    rtol, atol = TOL[dtype]
    # results of several roundings: a few ulps more than one op
    return dict(rtol=rtol * 8, atol=atol * 8)


def close(actual, expected, dtype="float64", **kw):
    k = tol(dtype)
    k.update(kw)
    np.testing.assert_allclose(to_numpy(actual).astype(np.float64), np.asarray(expected, dtype=np.float64), **k)


# ====================================================================================================
# Linear
# ====================================================================================================
LAYOUTS = ["contiguous", "transposed_input", "3d_input", "1d_input", "transposed_weight", "strided_input"]


def _linear_inputs(layout, device, dtype):
    x = RNG.standard_normal((6, 4))
    w = RNG.standard_normal((3, 4))
    b = RNG.standard_normal(3)
    if layout == "3d_input":
        x = RNG.standard_normal((2, 5, 4))
    if layout == "1d_input":
        x = RNG.standard_normal(4)
    X = t(x, device, dtype)
    W = t(w, device, dtype)
    if layout == "transposed_input":
        X = t(np.ascontiguousarray(x.T), device, dtype).t()
    if layout == "transposed_weight":
        W = t(np.ascontiguousarray(w.T), device, dtype).t()
    if layout == "strided_input":
        big = np.zeros((6, 8))
        big[:, ::2] = x
        X = t(big, device, dtype)[:, ::2]
    return x, w, b, X, W, t(b, device, dtype)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_linear_forward(device, layout, dtype, bias):
    x, w, b, X, W, B = _linear_inputs(layout, device, dtype)
    q = lambda a: to_numpy(t(a, "cpu", dtype)).astype(np.float64)  # the inputs as rounded to dtype
    expected = q(x) @ q(w).T + (q(b) if bias else 0)
    out = F.linear(X, W, B if bias else None)
    assert tuple(out.shape) == expected.shape
    assert out.dtype == X.dtype
    close(out, expected, dtype)


@pytest.mark.parametrize("layout", ["contiguous", "transposed_input", "3d_input", "1d_input", "transposed_weight"])
def test_linear_backward(device, layout):
    x, w, b, X, W, B = _linear_inputs(layout, device, "float64")
    X.requires_grad_(True)
    W.requires_grad_(True)
    B.requires_grad_(True)
    out = F.linear(X, W, B)
    g = RNG.standard_normal(tuple(out.shape))
    out.backward(t(g, device))
    x2, g2 = x.reshape(-1, 4), g.reshape(-1, 3)
    close(X.grad, (g2 @ w).reshape(x.shape))
    close(W.grad, g2.T @ x2)
    close(B.grad, g2.sum(0))


def test_linear_grad_fn_names(device):
    W = t(RNG.standard_normal((3, 4)), device, requires_grad=True)
    B = t(RNG.standard_normal(3), device, requires_grad=True)
    x2, x3 = t(RNG.standard_normal((2, 4)), device), t(RNG.standard_normal((2, 2, 4)), device)
    assert type(F.linear(x2, W, B).grad_fn).__name__ == "AddmmBackward0"
    assert type(F.linear(x2, W).grad_fn).__name__ == "MmBackward0"
    assert type(F.linear(x3, W, B).grad_fn).__name__ == "UnsafeViewBackward0"
    assert "grad_fn=<AddmmBackward0>" in repr(nn.Linear(4, 3).to(device)(x2.float()))
    # addmm's own backward gives a column-major mat2 (weight.t()) a gradient in its layout, so the
    # weight's gradient through .t() is contiguous (PyTorch's mm_mat2_backward)
    x2.requires_grad_(True)
    out = ctorch.addmm(B, x2, W.t())
    out.backward(t(RNG.standard_normal((2, 3)), device))
    assert W.grad.stride() == (4, 1) and W.grad.is_contiguous()


def test_linear_gradcheck(device):
    X = t(RNG.standard_normal((3, 4)), device, requires_grad=True)
    W = t(RNG.standard_normal((2, 4)), device, requires_grad=True)
    B = t(RNG.standard_normal(2), device, requires_grad=True)
    assert gradcheck(lambda a, b, c: F.linear(a, b, c), (X, W, B))
    X3 = t(RNG.standard_normal((2, 3, 4)), device, requires_grad=True)
    assert gradcheck(lambda a, b: F.linear(a, b), (X3, W))


def test_linear_double_backward(device):
    X = t(RNG.standard_normal((3, 4)), device, requires_grad=True)
    W = t(RNG.standard_normal((2, 4)), device, requires_grad=True)
    out = F.linear(X, W)
    (gx,) = ctorch.autograd.grad(out.sum(), X, create_graph=True)
    # d/dW sum(gx * c) with gx = ones @ W
    c = RNG.standard_normal((3, 4))
    (gw,) = ctorch.autograd.grad((gx * t(c, device)).sum(), W)
    close(gw, np.ones((2, 3)) @ c)


def test_linear_errors(device):
    x = t(np.zeros((4, 3)), device, "float32")
    with pytest.raises(RuntimeError, match=r"^mm: mat1 and mat2 shapes cannot be multiplied \(4x3 and 5x2\)$"):
        F.linear(x, t(np.zeros((2, 5)), device, "float32"))
    with pytest.raises(RuntimeError, match=r"^addmm: mat1 and mat2 shapes cannot be multiplied \(4x3 and 5x2\)$"):
        F.linear(x, t(np.zeros((2, 5)), device, "float32"), t(np.zeros(2), device, "float32"))
    with pytest.raises(RuntimeError, match=r"^mat1 and mat2 must have the same dtype, but got Float and Double$"):
        F.linear(x, t(np.zeros((2, 3)), device, "float64"), t(np.zeros(2), device, "float64"))
    with pytest.raises(RuntimeError, match=r"^self and mat2 must have the same dtype, but got Float and Double$"):
        F.linear(x, t(np.zeros((2, 5)), device, "float64"), t(np.zeros(2), device, "float32"))
    with pytest.raises(RuntimeError, match=r"^expected m1 and m2 to have the same dtype, but got: float != double$"):
        F.linear(x, t(np.zeros((2, 3)), device, "float64"))
    with pytest.raises(RuntimeError, match=r"^self and mat2 must have the same dtype, but got Double and Float$"):
        F.linear(x, t(np.zeros((2, 3)), device, "float32"), t(np.zeros(2), device, "float64"))
    with pytest.raises(RuntimeError, match=r"both arguments to linear need to be at least 1D, but they are 0D and 2D"):
        F.linear(t(1.0, device, "float32"), t(np.zeros((2, 3)), device, "float32"))


def test_linear_empty_batch(device):
    out = F.linear(t(np.zeros((0, 3)), device), t(np.ones((2, 3)), device), t(np.ones(2), device))
    assert tuple(out.shape) == (0, 2)
    out = F.linear(t(np.zeros((4, 0)), device), t(np.zeros((2, 0)), device), t(np.arange(2.0), device))
    close(out, np.tile(np.arange(2.0), (4, 1)))


def test_linear_module_default_init(device):
    ctorch.manual_seed(0)
    layer = nn.Linear(400, 300).to(device)
    w, b = to_numpy(layer.weight), to_numpy(layer.bias)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) and the bias rule give the same bound
    assert w.shape == (300, 400) and b.shape == (300,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # uniform: variance bound^2 / 3, mean 0
    assert abs(w.var() - bound**2 / 3) < 0.05 * bound**2 / 3
    assert abs(w.mean()) < 0.02 * bound
    assert isinstance(layer.weight, nn.Parameter) and layer.weight.requires_grad
    assert repr(layer) == "Linear(in_features=400, out_features=300, bias=True)"
    assert nn.Linear(2, 3, bias=False).bias is None


# ====================================================================================================
# activations and simple layers
# ====================================================================================================
def _np_gelu(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    from math import erf

    return 0.5 * x * (1 + np.vectorize(erf)(x / math.sqrt(2)))


def _np_softmax(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


ACTIVATIONS = [
    ("ReLU", lambda: nn.ReLU(), lambda x: np.maximum(x, 0)),
    ("LeakyReLU", lambda: nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    ("GELU", lambda: nn.GELU(), lambda x: _np_gelu(x, "none")),
    ("GELU_tanh", lambda: nn.GELU("tanh"), lambda x: _np_gelu(x, "tanh")),
    ("Sigmoid", lambda: nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    ("Tanh", lambda: nn.Tanh(), np.tanh),
    ("Softmax", lambda: nn.Softmax(dim=1), lambda x: _np_softmax(x, 1)),
    ("LogSoftmax", lambda: nn.LogSoftmax(dim=-1), lambda x: np.log(_np_softmax(x, -1))),
    ("Identity", lambda: nn.Identity(54, unused=1), lambda x: x),
    ("Flatten", lambda: nn.Flatten(), lambda x: x.reshape(x.shape[0], -1)),
]


@pytest.mark.parametrize("name,make,ref", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_activation_forward(device, name, make, ref, dtype):
    x = RNG.standard_normal((4, 3, 5))
    x[0, 0, 0] = 0.0
    out = make()(t(x, device, dtype))
    close(out, ref(x), dtype)


@pytest.mark.parametrize("name,make,ref", [a for a in ACTIVATIONS if a[0] not in ("Identity", "Flatten")],
                         ids=[a[0] for a in ACTIVATIONS if a[0] not in ("Identity", "Flatten")])
def test_activation_gradcheck(device, name, make, ref):
    x = RNG.standard_normal((3, 4))
    x[np.abs(x) < 0.05] = 0.3  # keep away from the kinks of relu / leaky_relu
    X = t(x, device, requires_grad=True)
    assert gradcheck(make(), (X,))


def test_leaky_relu_backward_matches_numpy(device):
    x = RNG.standard_normal((5, 6))
    X = t(x, device, requires_grad=True)
    out = F.leaky_relu(X, 0.1)
    assert type(out.grad_fn).__name__ == "LeakyReluBackward0"
    g = RNG.standard_normal(x.shape)
    out.backward(t(g, device))
    close(X.grad, np.where(x > 0, g, 0.1 * g))
    # its backward is itself differentiable (with respect to the incoming gradient)
    G = t(g, device, requires_grad=True)
    assert gradcheck(lambda gg: ctorch._C._leaky_relu_backward(gg, t(x, device), 0.1), (G,))


def test_leaky_relu_inplace_and_dtypes(device):
    x = t(np.array([-1.0, 2.0]), device, "float32")
    assert F.leaky_relu(x, 0.5, inplace=True) is x
    close(x, [-0.5, 2.0], "float32")
    with pytest.raises(NotImplementedError, match="\"leaky_relu_cpu\" not implemented for 'Long'"):
        F.leaky_relu(ctorch.tensor([1, 2], device=device))
    for dt in ("float16", "bfloat16"):
        close(F.leaky_relu(t([-2.0, 4.0], device, dt), 0.25), [-0.5, 4.0], dt)


def test_dropout(device):
    ctorch.manual_seed(0)
    x = t(np.ones((200, 100)), device, "float32", requires_grad=True)
    d = nn.Dropout(0.3)
    assert repr(d) == "Dropout(p=0.3, inplace=False)"
    out = d(x)
    o = to_numpy(out)
    zeros = (o == 0).mean()
    assert abs(zeros - 0.3) < 0.02
    np.testing.assert_allclose(o[o != 0], 1 / 0.7, rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), o, rtol=1e-6)  # gradient = the mask scaled
    d.eval()
    assert d(x) is x
    assert F.dropout(x, 0.0) is x
    close(F.dropout(x, 1.0), np.zeros((200, 100)), "float32")
    with pytest.raises(ValueError, match="^dropout probability has to be between 0 and 1, but got 1.5$"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="^dropout probability has to be between 0 and 1, but got -0.1$"):
        F.dropout(x, -0.1)


def test_flatten_and_softmax_dims(device):
    x = RNG.standard_normal((2, 3, 4, 5))
    close(nn.Flatten(0, 2)(t(x, device)), x.reshape(24, 5))
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = F.softmax(t(x[0], device))  # implicit dim: 0 for 3-d input
    assert any("Implicit dimension choice" in str(i.message) for i in w)
    close(out, _np_softmax(x[0], 0))


# ====================================================================================================
# losses
# ====================================================================================================
def _np_log_softmax(x, axis=1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def np_cross_entropy(x, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """PyTorch's cross_entropy in NumPy, class dim 1 (or 0 for 1-d input)."""
    if x.ndim == 1:
        x = x[None]
        target = np.asarray(target)[None]
        out = np_cross_entropy(x, target, weight, ignore_index, "none" if reduction == "none" else reduction,
                               label_smoothing)
        return out[0] if reduction == "none" else out
    C = x.shape[1]
    logp = _np_log_softmax(x, 1)
    w = np.ones(C) if weight is None else weight
    wshape = [1] * x.ndim
    wshape[1] = C
    if np.issubdtype(np.asarray(target).dtype, np.floating):  # probabilities
        y = target * (1 - label_smoothing) + label_smoothing / C if label_smoothing > 0 else target
        loss = -(logp * y * w.reshape(wshape)).sum(1)
        if reduction == "none":
            return loss
        return loss.sum() / (x.size / C) if reduction == "mean" else loss.sum()
    tgt = np.asarray(target)
    ignored = tgt == ignore_index
    safe = np.where(ignored, 0, tgt)
    picked = np.take_along_axis(logp, safe[:, None], 1)[:, 0]
    wt = np.where(ignored, 0.0, w[safe])
    nll = -picked * wt
    smooth = np.where(ignored, 0.0, -(logp * w.reshape(wshape)).sum(1))
    loss = (1 - label_smoothing) * nll + label_smoothing / C * smooth
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / wt.sum()


def np_cross_entropy_grad(x, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0, g=1.0):
    """Analytic d loss / d x (softmax - one-hot, scaled)."""
    squeeze = x.ndim == 1
    if squeeze:
        x = x[None]
        target = np.asarray(target)[None]
        g = np.asarray(g)[None] if reduction == "none" else g
    C = x.shape[1]
    p = np.exp(_np_log_softmax(x, 1))
    w = np.ones(C) if weight is None else weight
    wshape = [1] * x.ndim
    wshape[1] = C
    wb = w.reshape(wshape)
    if np.issubdtype(np.asarray(target).dtype, np.floating):
        y = target * (1 - label_smoothing) + label_smoothing / C if label_smoothing > 0 else target
        wy = (wb * y).sum(1, keepdims=True)
        grad = p * wy - wb * y
        rows = x.size / C
        scale = np.expand_dims(g, 1) if reduction == "none" else (g / rows if reduction == "mean" else g)
        out = grad * scale
        return out[0] if squeeze else out
    tgt = np.asarray(target)
    ignored = tgt == ignore_index
    safe = np.where(ignored, 0, tgt)
    onehot = np.moveaxis(np.eye(C)[safe], -1, 1)
    wt = np.where(ignored, 0.0, w[safe])
    grad = (1 - label_smoothing) * np.expand_dims(wt, 1) * (p - onehot)
    if label_smoothing > 0:
        grad += label_smoothing / C * (p * w.sum() - wb) * np.expand_dims(~ignored, 1)
    if reduction == "none":
        scale = np.expand_dims(g, 1)
    elif reduction == "sum":
        scale = g
    else:  # every target ignored: the loss is 0/0 but the gradient 0, as PyTorch's (the ignored rows get none)
        scale = g / wt.sum() if wt.sum() else 0.0
    out = grad * scale
    return out[0] if squeeze else out


def test_cross_entropy_all_targets_ignored(device):
    # mean over no target: the loss is NaN (0/0) and the gradient zero, as PyTorch's on both devices
    for shape, target in (((5,), 2), ((3, 5), [2, 2, 2])):
        x = t(RNG.standard_normal(shape), device, requires_grad=True)
        loss = F.cross_entropy(x, ctorch.tensor(target, device=device), ignore_index=2)
        assert math.isnan(loss.item())
        loss.backward()
        assert (to_numpy(x.grad) == 0).all()


CE_CASES = [
    ("plain", {}),
    ("weight", {"weight": True}),
    ("ignore", {"ignore_index": 2}),
    ("weight_ignore", {"weight": True, "ignore_index": 1}),
    ("smoothing", {"label_smoothing": 0.2}),
    ("smoothing_weight_ignore", {"label_smoothing": 0.1, "weight": True, "ignore_index": 0}),
    ("probs", {"probs": True}),
    ("probs_weight_smoothing", {"probs": True, "weight": True, "label_smoothing": 0.3}),
]


@pytest.mark.parametrize("case,opts", CE_CASES, ids=[c[0] for c in CE_CASES])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(6, 5), (3, 4, 2, 3), (5,)], ids=["2d", "4d", "1d"])
def test_cross_entropy(device, case, opts, reduction, shape):
    x = RNG.standard_normal(shape) * 3
    C = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    if opts.get("probs"):
        y = RNG.random(shape)
        y = y / y.sum(axis=0 if len(shape) == 1 else 1, keepdims=True)
        target = t(y, device)
    else:
        y = RNG.integers(0, C, size=tshape)
        target = ctorch.tensor(y, dtype=ctorch.int64, device=device)
    weight = RNG.random(C) + 0.5 if opts.get("weight") else None
    kw = dict(reduction=reduction, label_smoothing=opts.get("label_smoothing", 0.0))
    if "ignore_index" in opts:
        kw["ignore_index"] = opts["ignore_index"]
    X = t(x, device, requires_grad=True)
    out = F.cross_entropy(X, target, weight=None if weight is None else t(weight, device), **kw)
    expected = np_cross_entropy(x, y, weight, **kw)
    close(out, expected)
    g = RNG.standard_normal(np.shape(expected)) if reduction == "none" else 1.7
    out.backward(t(g, device) if reduction == "none" else t(g, device))
    close(X.grad, np_cross_entropy_grad(x, y, weight, g=g, **kw))
    # the module does the same
    loss = nn.CrossEntropyLoss(weight=None if weight is None else t(weight, device), **kw)
    close(loss(t(x, device), target), expected)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_cross_entropy_low_precision(device, dtype):
    x = RNG.standard_normal((8, 10)) * 4
    y = RNG.integers(0, 10, 8)
    X = t(x, device, dtype)
    xq = to_numpy(X).astype(np.float64)
    out = F.cross_entropy(X, ctorch.tensor(y, device=device))
    assert out.dtype == X.dtype
    close(out, np_cross_entropy(xq, y), dtype)


def test_cross_entropy_numerically_stable(device):
    x = np.array([[1000.0, 0.0, -1000.0], [-5e4, 5e4, 0.0]])
    out = F.cross_entropy(t(x, device, "float32"), ctorch.tensor([0, 0], device=device), reduction="none")
    close(out, [0.0, 1e5], "float32")


def test_cross_entropy_soft_target_gradient(device):
    x = RNG.standard_normal((4, 3))
    y = RNG.random((4, 3))
    X, Y = t(x, device, requires_grad=True), t(y, device, requires_grad=True)
    assert gradcheck(lambda a, b: F.cross_entropy(a, b, label_smoothing=0.1), (X, Y))


def test_cross_entropy_gradcheck(device):
    x = RNG.standard_normal((5, 4))
    X = t(x, device, requires_grad=True)
    target = ctorch.tensor([0, 3, 1, 1, 2], device=device)
    w = t(RNG.random(4) + 0.5, device)
    for kw in ({}, {"weight": w}, {"label_smoothing": 0.2, "weight": w, "ignore_index": 1}, {"reduction": "none"}):
        assert gradcheck(lambda a: F.cross_entropy(a, target, **kw), (X,))


def test_cross_entropy_grad_fn_names(device):
    X = t(RNG.standard_normal((4, 3)), device, requires_grad=True)
    tgt = ctorch.tensor([0, 1, 2, 0], device=device)
    probs = t(np.full((4, 3), 1 / 3), device)
    assert type(F.cross_entropy(X, tgt).grad_fn).__name__ == "NllLossBackward0"
    assert type(F.cross_entropy(X, tgt, label_smoothing=0.1).grad_fn).__name__ == "AddBackward0"
    assert type(F.cross_entropy(X, probs).grad_fn).__name__ == "DivBackward1"
    assert type(F.cross_entropy(X, probs, reduction="sum").grad_fn).__name__ == "NegBackward0"
    assert type(F.nll_loss(X, tgt).grad_fn).__name__ == "NllLossBackward0"
    # spatial inputs: PyTorch's 2-d kernel; unreduced 3-d/5-d losses are viewed back from 4-d
    X3 = t(RNG.standard_normal((1, 3, 2)), device, requires_grad=True)
    t3 = ctorch.tensor([[1, 0]], device=device)
    assert F.cross_entropy(X3, t3).grad_fn.name() == "NllLoss2DBackward0"
    assert F.nll_loss(X3.unsqueeze(-1), t3.unsqueeze(-1), reduction="none").grad_fn.name() == "NllLoss2DBackward0"
    assert F.cross_entropy(X3, t3, reduction="none").grad_fn.name() == "ViewBackward0"


def test_cross_entropy_errors(device):
    x = t(np.zeros((4, 5)), device, "float32")
    for bad in (5, -1, 100):
        with pytest.raises(IndexError, match=rf"^Target {bad} is out of bounds\.$"):
            F.cross_entropy(x, ctorch.tensor([0, 1, bad, 2], device=device))
        with pytest.raises(IndexError, match=rf"^Target {bad} is out of bounds\.$"):
            F.nll_loss(x, ctorch.tensor([0, 1, bad, 2], device=device))
    # ignore_index is never looked up
    close(F.cross_entropy(x, ctorch.tensor([0, -100, 1, 2], device=device), reduction="sum"), 3 * math.log(5),
          "float32")
    with pytest.raises(RuntimeError, match="^expected target dtype to be Long or Byte, but got Int$"):
        F.cross_entropy(x, ctorch.tensor([0, 1, 3, 2], dtype=ctorch.int32, device=device))
    with pytest.raises(RuntimeError, match="^expected target dtype to be Long or Byte, but got Float$"):
        F.cross_entropy(x, t([0.0, 1, 3, 2], device, "float32"))
    with pytest.raises(ValueError, match=r"^Expected input batch_size \(4\) to match target batch_size \(3\)\.$"):
        F.cross_entropy(x, ctorch.tensor([0, 1, 3], device=device))
    with pytest.raises(RuntimeError, match="^ignore_index is not supported for floating point target$"):
        F.cross_entropy(x, t(np.zeros((4, 5)), device, "float32"), ignore_index=1)
    with pytest.raises(RuntimeError, match="^Expected floating point type for target with class probabilities, got Long$"):
        F.cross_entropy(x, ctorch.zeros((4, 5), dtype=ctorch.int64, device=device))
    with pytest.raises(RuntimeError, match=r"^weight tensor should be defined either for all 5 classes or no classes but "
                                           r"got weight tensor of shape: \[4\]$"):
        F.cross_entropy(x, ctorch.tensor([0, 1, 3, 2], device=device), weight=t(np.ones(4), device, "float32"))
    with pytest.raises(RuntimeError, match="^label_smoothing must be between 0.0 and 1.0. Got: 1.5$"):
        F.cross_entropy(x, ctorch.tensor([0, 1, 3, 2], device=device), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="^0D or 1D target tensor expected, multi-target not supported$"):
        F.cross_entropy(x, ctorch.zeros((4, 2), dtype=ctorch.int64, device=device))
    with pytest.raises(RuntimeError, match=r"^Expected target size \[2, 4\], got \[2, 5\]$"):
        F.cross_entropy(t(np.zeros((2, 3, 4)), device), ctorch.zeros((2, 5), dtype=ctorch.int64, device=device))
    # 4-d input: PyTorch's nll_loss2d and its own messages
    with pytest.raises(RuntimeError, match=r"^size mismatch \(got input: \[2, 3, 4, 4\] , target: \[2, 4, 5\]$"):
        F.nll_loss(t(np.zeros((2, 3, 4, 4)), device), ctorch.zeros((2, 4, 5), dtype=ctorch.int64, device=device))
    with pytest.raises(RuntimeError, match=r"^only batches of spatial targets supported \(3D tensors\) but got targets "
                                           r"of dimension: 4$"):
        F.cross_entropy(t(np.zeros((2, 3, 4, 4)), device), ctorch.zeros((2, 4, 4, 1), dtype=ctorch.int64, device=device))
    with pytest.raises(RuntimeError, match=r"^Expected target size \[2, 4, 4, 4\], got \[2, 4, 4, 5\]$"):
        F.nll_loss(t(np.zeros((2, 3, 4, 4, 4)), device), ctorch.zeros((2, 4, 4, 5), dtype=ctorch.int64, device=device))
    with pytest.raises(NotImplementedError, match="\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        F.cross_entropy(ctorch.zeros((4, 5), dtype=ctorch.int64, device=device), ctorch.zeros(4, dtype=ctorch.int64,
                                                                                            device=device))
    with pytest.raises(ValueError, match="^bad is not a valid value for reduction$"):
        F.cross_entropy(x, ctorch.tensor([0, 1, 3, 2], device=device), reduction="bad")
    with pytest.raises(RuntimeError, match="^expected scalar type Float but found Double$"):
        F.cross_entropy(x, ctorch.tensor([0, 1, 3, 2], device=device), weight=t(np.ones(5), device))


def test_cross_entropy_empty_and_all_ignored(device):
    x = t(RNG.standard_normal((3, 4)), device, requires_grad=True)
    out = F.cross_entropy(x, ctorch.tensor([-100] * 3, device=device))
    assert math.isnan(out.item())
    assert F.cross_entropy(x, ctorch.tensor([-100] * 3, device=device), reduction="sum").item() == 0.0
    out.backward()
    close(x.grad, np.zeros((3, 4)))  # ignored rows get no gradient, as in PyTorch
    assert math.isnan(F.cross_entropy(t(np.zeros((0, 4)), device), ctorch.zeros(0, dtype=ctorch.int64,
                                                                                  device=device)).item())


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(device, reduction):
    x = _np_log_softmax(RNG.standard_normal((7, 4)), 1)
    y = RNG.integers(0, 4, 7)
    y[2] = -100
    w = RNG.random(4) + 0.5
    X = t(x, device, requires_grad=True)
    out = F.nll_loss(X, ctorch.tensor(y, device=device), weight=t(w, device), reduction=reduction)
    picked = np.where(y == -100, 0.0, -x[np.arange(7), np.where(y < 0, 0, y)] * w[np.where(y < 0, 0, y)])
    wt = np.where(y == -100, 0.0, w[np.where(y < 0, 0, y)])
    expected = {"none": picked, "sum": picked.sum(), "mean": picked.sum() / wt.sum()}[reduction]
    close(out, expected)
    assert gradcheck(lambda a: F.nll_loss(a, ctorch.tensor(y, device=device), weight=t(w, device),
                                          reduction=reduction), (X,))
    close(nn.NLLLoss(weight=t(w, device), reduction=reduction)(X, ctorch.tensor(y, device=device)), expected)


def _np_bce(x, y, w):
    return -w * (y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log1p(-x), -100))


def _np_bce_logits(x, y, w, pw):
    lw = (pw - 1) * y + 1
    return w * ((1 - y) * x + lw * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)))


POINTWISE = [
    ("mse", lambda x, y, **k: F.mse_loss(x, y, **k), lambda x, y: (x - y) ** 2),
    ("l1", lambda x, y, **k: F.l1_loss(x, y, **k), lambda x, y: np.abs(x - y)),
    ("smooth_l1", lambda x, y, **k: F.smooth_l1_loss(x, y, beta=0.5, **k),
     lambda x, y: np.where(np.abs(x - y) < 0.5, 0.5 * (x - y) ** 2 / 0.5, np.abs(x - y) - 0.25)),
    ("smooth_l1_beta0", lambda x, y, **k: F.smooth_l1_loss(x, y, beta=0.0, **k), lambda x, y: np.abs(x - y)),
]


def _reduce(v, reduction):
    return {"none": v, "mean": v.mean(), "sum": v.sum()}[reduction]


@pytest.mark.parametrize("name,fn,ref", POINTWISE, ids=[p[0] for p in POINTWISE])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_pointwise_losses(device, name, fn, ref, reduction):
    x = RNG.standard_normal((4, 5))
    y = RNG.standard_normal((4, 5))
    X, Y = t(x, device, requires_grad=True), t(y, device, requires_grad=True)
    out = fn(X, Y, reduction=reduction)
    close(out, _reduce(ref(x, y), reduction))
    assert gradcheck(lambda a, b: fn(a, b, reduction=reduction), (X, Y))


def test_loss_nodes_and_non_differentiable_arguments():
    """l1_loss's node is PyTorch's composite's (abs, then mean / sum); the arguments PyTorch has no
    derivative for refuse requires_grad at the call, with PyTorch's message."""
    x, y = t(RNG.standard_normal((3, 4)), "cpu", requires_grad=True), t(RNG.random((3, 4)), "cpu", requires_grad=True)
    for reduction, name in (("none", "AbsBackward0"), ("mean", "MeanBackward0"), ("sum", "SumBackward0")):
        assert F.l1_loss(x, y, reduction=reduction).grad_fn.name() == name
    w, lab = t(RNG.random(4), "cpu", requires_grad=True), ctorch.tensor([0, 1, 3])
    cases = [("soft_margin_loss", "target", lambda: F.soft_margin_loss(x, y)),
             ("multi_margin_loss", "weight", lambda: F.multi_margin_loss(x, lab, weight=w)),
             ("nll_loss_forward", "weight", lambda: F.nll_loss(x, lab, weight=w)),
             ("nll_loss_forward", "weight", lambda: F.cross_entropy(x.detach(), lab, weight=w)),
             ("binary_cross_entropy", "weight", lambda: F.binary_cross_entropy(x.sigmoid(), y.detach(), weight=y)),
             ("binary_cross_entropy_with_logits", "pos_weight",
              lambda: F.binary_cross_entropy_with_logits(x, y, pos_weight=w))]
    for fn, arg, call in cases:
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value) == (f"The function '{fn}' is not differentiable with respect to argument '{arg}'. "
                                   "This input cannot have requires_grad True.")
    with ctorch.no_grad():
        F.soft_margin_loss(x, y)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_pointwise_losses_dtypes(device, dtype):
    x, y = RNG.standard_normal(10), RNG.standard_normal(10)
    X, Y = t(x, device, dtype), t(y, device, dtype)
    xq, yq = to_numpy(X).astype(np.float64), to_numpy(Y).astype(np.float64)
    for fn, ref in ((F.mse_loss, lambda a, b: ((a - b) ** 2).mean()), (F.l1_loss, lambda a, b: np.abs(a - b).mean())):
        out = fn(X, Y)
        assert out.dtype == X.dtype
        close(out, ref(xq, yq), dtype)


def test_mse_broadcast_and_weight(device):
    x, y = RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    X = t(x, device, requires_grad=True)
    with pytest.warns(UserWarning, match="Using a target size"):
        out = F.mse_loss(X, t(y, device))
    close(out, ((x - y) ** 2).mean())
    out.backward()
    close(X.grad, 2 * (x - y) / 12)
    w = RNG.random((3, 4))
    close(F.mse_loss(t(x, device), t(x + 1, device), weight=t(w, device)), (w * 1.0).sum() / w.sum())
    close(F.l1_loss(t(x, device), t(x + 2, device), weight=t(w, device), reduction="sum"), (2 * w).sum())
    with pytest.raises(ValueError, match="^Weights and input must have the same size.$"):
        F.mse_loss(t(x, device), t(x, device), weight=t(np.ones(4), device))
    with pytest.raises(RuntimeError, match="^smooth_l1_loss does not support negative values for beta.$"):
        F.smooth_l1_loss(t(x, device), t(x, device), beta=-1)
    with pytest.raises(NotImplementedError, match="\"mse_cpu\" not implemented for 'Long'"):
        F.mse_loss(ctorch.tensor([1, 2], device=device), ctorch.tensor([0, 1], device=device))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True], ids=["", "weight"])
def test_bce(device, reduction, weighted):
    x = RNG.random((3, 4)) * 0.98 + 0.01
    y = RNG.random((3, 4))
    w = RNG.random((3, 4)) + 0.5 if weighted else np.ones((3, 4))
    X, Y = t(x, device, requires_grad=True), t(y, device, requires_grad=True)
    out = F.binary_cross_entropy(X, Y, weight=t(w, device) if weighted else None, reduction=reduction)
    close(out, _reduce(_np_bce(x, y, w), reduction))
    assert type(out.grad_fn).__name__ == "BinaryCrossEntropyBackward0"
    assert gradcheck(lambda a, b: F.binary_cross_entropy(a, b, weight=t(w, device), reduction=reduction), (X, Y))
    close(nn.BCELoss(weight=t(w, device) if weighted else None, reduction=reduction)(X, Y),
          _reduce(_np_bce(x, y, w), reduction))


def test_bce_edges_and_errors(device):
    # log is clamped at -100: a wrong certain prediction costs 100
    close(F.binary_cross_entropy(t([0.0, 1.0], device), t([1.0, 0.0], device), reduction="none"), [100.0, 100.0])
    with pytest.raises(RuntimeError, match="^all elements of input should be between 0 and 1$"):
        F.binary_cross_entropy(t([0.5, 1.5], device), t([0.0, 1.0], device))
    with pytest.raises(RuntimeError, match="^all elements of target should be between 0 and 1$"):
        F.binary_cross_entropy(t([0.5, 0.5], device), t([0.0, 2.0], device))
    with pytest.raises(ValueError, match=r"^Using a target size \(torch.Size\(\[3\]\)\) that is different to the input "
                                         r"size \(torch.Size\(\[2\]\)\) is deprecated. Please ensure they have the same "
                                         r"size.$"):
        F.binary_cross_entropy(t([0.5, 0.5], device), t([0.0, 1.0, 1.0], device))
    with pytest.raises(ValueError, match=r"^Target size \(torch.Size\(\[3\]\)\) must be the same as input size "
                                         r"\(torch.Size\(\[2\]\)\)$"):
        F.binary_cross_entropy_with_logits(t([0.5, 0.5], device), t([0.0, 1.0, 1.0], device))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("opts", ["plain", "weight", "pos_weight", "both"])
def test_bce_with_logits(device, reduction, opts):
    x = RNG.standard_normal((3, 4)) * 5
    y = RNG.random((3, 4))
    w = RNG.random((3, 4)) + 0.5 if opts in ("weight", "both") else np.ones((3, 4))
    pw = RNG.random(4) * 3 if opts in ("pos_weight", "both") else np.ones(4)
    kw = {"reduction": reduction}
    if opts in ("weight", "both"):
        kw["weight"] = t(w, device)
    if opts in ("pos_weight", "both"):
        kw["pos_weight"] = t(pw, device)
    X, Y = t(x, device, requires_grad=True), t(y, device, requires_grad=True)
    out = F.binary_cross_entropy_with_logits(X, Y, **kw)
    close(out, _reduce(_np_bce_logits(x, y, w, pw), reduction))
    assert gradcheck(lambda a, b: F.binary_cross_entropy_with_logits(a, b, **kw), (X, Y))
    close(nn.BCEWithLogitsLoss(**kw)(X, Y), _reduce(_np_bce_logits(x, y, w, pw), reduction))
    # large logits stay finite
    big = F.binary_cross_entropy_with_logits(t([1000.0, -1000.0], device), t([0.0, 1.0], device), reduction="none")
    close(big, [1000.0, 1000.0])


def test_loss_modules_repr_and_legacy_args(device):
    assert repr(nn.MSELoss()) == "MSELoss()"
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        loss = nn.L1Loss(size_average=False)
    assert loss.reduction == "sum"
    assert nn.SmoothL1Loss(beta=0.3).beta == 0.3


# ====================================================================================================
# Embedding and LayerNorm
# ====================================================================================================
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_embedding(device, index_dtype):
    w = RNG.standard_normal((7, 3))
    idx = np.array([[0, 3, 3], [6, 1, 0]])
    W = t(w, device, requires_grad=True)
    I = ctorch.tensor(idx, dtype=getattr(ctorch, index_dtype), device=device)
    out = F.embedding(I, W)
    close(out, w[idx])
    assert type(out.grad_fn).__name__ == "EmbeddingBackward0"
    g = RNG.standard_normal((2, 3, 3))
    out.backward(t(g, device))
    expected = np.zeros_like(w)
    np.add.at(expected, idx, g)
    close(W.grad, expected)


def test_embedding_padding_and_scale(device):
    w = RNG.standard_normal((5, 2))
    idx = np.array([1, 2, 1, 4, 1])
    W = t(w, device, requires_grad=True)
    I = ctorch.tensor(idx, device=device)
    out = F.embedding(I, W, padding_idx=1, scale_grad_by_freq=True)
    g = RNG.standard_normal((5, 2))
    out.backward(t(g, device))
    expected = np.zeros_like(w)
    counts = np.bincount(idx, minlength=5)
    for i, k in enumerate(idx):
        if k != 1:
            expected[k] += g[i] / counts[k]
    close(W.grad, expected)
    W.grad = None
    F.embedding(I, W, padding_idx=-4).sum().backward()  # -4 -> row 1
    assert np.all(to_numpy(W.grad)[1] == 0)


def test_embedding_module(device):
    ctorch.manual_seed(0)
    emb = nn.Embedding(10, 4, padding_idx=2).to(device)
    assert repr(emb) == "Embedding(10, 4, padding_idx=2)"
    assert np.all(to_numpy(emb.weight)[2] == 0)
    out = emb(ctorch.tensor([[2, 5]], device=device))
    assert tuple(out.shape) == (1, 2, 4)
    pre = nn.Embedding.from_pretrained(t(np.eye(3), device))
    assert not pre.weight.requires_grad
    close(pre(ctorch.tensor([2, 0], device=device)), np.eye(3)[[2, 0]])
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)


def test_embedding_errors(device):
    W = t(np.zeros((3, 2)), device)
    for bad in ([0, 3], [-1, 0], [100]):
        with pytest.raises(IndexError, match="^index out of range in self$"):
            F.embedding(ctorch.tensor(bad, device=device), W)
    with pytest.raises(RuntimeError, match=r"^Expected tensor for argument #1 'indices' to have one of the following "
                                           r"scalar types: Long, Int; but got torch.FloatTensor instead \(while "
                                           r"checking arguments for embedding\)$"):
        F.embedding(t([0.0, 2.0], device, "float32"), W)


@pytest.mark.parametrize("affine", ["affine", "no_affine", "no_bias"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_layer_norm(device, affine, dtype):
    x = RNG.standard_normal((3, 4, 5)) * 2 + 1
    shape = (4, 5)
    w = RNG.standard_normal(shape) if affine != "no_affine" else np.ones(shape)
    b = RNG.standard_normal(shape) if affine == "affine" else np.zeros(shape)
    mean = x.mean(axis=(1, 2), keepdims=True)
    var = x.var(axis=(1, 2), keepdims=True)
    expected = (x - mean) / np.sqrt(var + 1e-5) * w + b
    X = t(x, device, dtype, requires_grad=True)
    W = t(w, device, dtype, requires_grad=True) if affine != "no_affine" else None
    B = t(b, device, dtype, requires_grad=True) if affine == "affine" else None
    out = F.layer_norm(X, shape, W, B)
    close(out, expected, dtype)
    if dtype == "float64":
        assert type(out.grad_fn).__name__ == "NativeLayerNormBackward0"
        inputs = tuple(a for a in (X, W, B) if a is not None)

        def fn(*args):
            it = iter(args)
            a = next(it)
            ww = next(it) if W is not None else None
            bb = next(it) if B is not None else None
            return F.layer_norm(a, shape, ww, bb)

        assert gradcheck(fn, inputs)


def test_layer_norm_module_and_errors(device):
    ln = nn.LayerNorm(5).to(device)
    assert repr(ln) == "LayerNorm((5,), eps=1e-05, elementwise_affine=True, bias=True)"
    close(ln.weight, np.ones(5), "float32")
    close(ln.bias, np.zeros(5), "float32")
    x = RNG.standard_normal((2, 5))
    close(ln(t(x, device, "float32")), (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5),
          "float32")
    with pytest.raises(RuntimeError, match=r"^Given normalized_shape=\[4\], expected input with shape \[\*, 4\], but got "
                                           r"input of size\[2, 3\]$"):
        F.layer_norm(t(np.zeros((2, 3)), device), (4,))
    with pytest.raises(RuntimeError, match=r"^Expected weight to be of same shape as normalized_shape, but got weight of "
                                           r"shape \[4\] and normalized_shape = \[3\]$"):
        F.layer_norm(t(np.zeros((2, 3)), device), (3,), weight=t(np.ones(4), device))
    # parameters of another dtype: only float32 ones under float16 / bfloat16 input, as PyTorch's
    with pytest.raises(RuntimeError, match=r"^mixed dtype \(CPU\): expect parameter to have scalar type of Float$"):
        nn.LayerNorm(5, dtype=ctorch.float64).to(device)(t(x, device, "float32"))
    with pytest.raises(RuntimeError, match=r"^mixed dtype \(CPU\): all inputs must share same datatype.$"):
        ln(t(x, device, "float64"))
    half = ln(t(x, device, "float16"))
    assert half.dtype == ctorch.float16
    close(half.float(), (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5), "float16")


# ====================================================================================================
# Parameter and Module bookkeeping
# ====================================================================================================
def test_parameter(device):
    data = t(np.arange(3.0), device, "float32")
    p = nn.Parameter(data)
    assert isinstance(p, nn.Parameter) and isinstance(p, ctorch.Tensor)
    assert p.requires_grad and p.is_leaf
    assert repr(p).startswith("Parameter containing:\n")
    if device == "cpu":
        assert repr(p) == "Parameter containing:\ntensor([0., 1., 2.], requires_grad=True)"
        assert str(nn.Parameter(data, requires_grad=False)) == "Parameter containing:\ntensor([0., 1., 2.])"
    assert p.data_ptr() == data.data_ptr()  # shares storage
    q = p * 2
    assert not isinstance(q, nn.Parameter) and type(q.grad_fn).__name__ == "MulBackward0"
    import copy

    c = copy.deepcopy(p)
    assert isinstance(c, nn.Parameter) and c.data_ptr() != p.data_ptr()
    close(c, [0, 1, 2], "float32")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.block = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
        self.register_buffer("running", ctorch.zeros(4))
        self.register_buffer("scratch", ctorch.zeros(1), persistent=False)
        self.scale = nn.Parameter(ctorch.ones(1))

    def forward(self, x):
        return self.block(self.act(self.fc1(x))) * self.scale


NET_REPR = """Net(
  (fc1): Linear(in_features=3, out_features=4, bias=True)
  (act): ReLU()
  (block): Sequential(
    (0): Linear(in_features=4, out_features=4, bias=True)
    (1): Tanh()
  )
)"""


def test_module_traversal(device):
    m = Net()
    assert repr(m) == NET_REPR
    assert [n for n, _ in m.named_parameters()] == ["scale", "fc1.weight", "fc1.bias", "block.0.weight",
                                                    "block.0.bias"]
    assert [n for n, _ in m.named_buffers()] == ["running", "scratch"]
    assert [n for n, _ in m.named_children()] == ["fc1", "act", "block"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "act", "block", "block.0", "block.1"]
    assert len(list(m.parameters())) == 5 and len(list(m.parameters(recurse=False))) == 1
    assert len(list(m.modules())) == 6 and len(list(m.children())) == 3
    assert list(m.state_dict().keys()) == ["scale", "running", "fc1.weight", "fc1.bias", "block.0.weight",
                                           "block.0.bias"]
    # shared modules and parameters are listed once
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, shared)
    assert len(list(seq.parameters())) == 2 and len(list(seq.modules())) == 2
    assert m.get_submodule("block.0") is m.block[0]
    assert m.get_parameter("block.0.bias") is m.block[0].bias


def test_module_forward_and_hooks(device):
    m = Net().to(device)
    x = t(RNG.standard_normal((2, 3)), device, "float32")
    out = m(x)
    assert tuple(out.shape) == (2, 4)
    seen = []
    h = m.register_forward_hook(lambda mod, args, o: seen.append(tuple(o.shape)))
    m(x)
    h.remove()
    m(x)
    assert seen == [(2, 4)]

    class NoForward(nn.Module):
        pass

    with pytest.raises(NotImplementedError, match='^Module \\[NoForward\\] is missing the required "forward" function$'):
        NoForward()(1)


def test_forward_hooks_kwargs_prepend_always_call():
    class Scale(nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale

    m, log = Scale(), []
    m.register_forward_pre_hook(lambda mod, a: log.append("pre"))
    h = m.register_forward_pre_hook(lambda mod, a, k: (a, {"scale": 3.0}), with_kwargs=True)
    m.register_forward_pre_hook(lambda mod, a: log.append("first"), prepend=True)
    m.register_forward_hook(lambda mod, a, k, o: o + k["scale"], with_kwargs=True)
    assert m(ctorch.tensor([2.0]), scale=1.0).tolist() == [9.0]  # 2 * 3 + 3
    assert log == ["first", "pre"]
    h.remove()
    h.remove()
    assert len(m._forward_pre_hooks_with_kwargs) == 0
    bad = m.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"^forward pre-hook must return None or a tuple of "
                                           r"\(new_args, new_kwargs\), but got 5\.$"):
        m(ctorch.tensor([1.0]))
    bad.remove()

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    b, seen = Boom(), []
    b.register_forward_hook(lambda mod, a, o: seen.append(("always", o)), always_call=True)
    b.register_forward_hook(lambda mod, a, o: seen.append("skipped"))
    g = nn.modules.module.register_module_forward_hook(lambda mod, a, o: seen.append("global"), always_call=True)
    with pytest.raises(ValueError, match="^boom$"):
        b(1)
    g.remove()
    assert seen == ["global", ("always", None)]


def test_global_module_forward_hooks_run_first():
    from ctorch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

    log = []
    lin = nn.Linear(1, 1)
    lin.register_forward_hook(lambda mod, a, o: log.append("local"))
    g1 = register_module_forward_pre_hook(lambda mod, a: log.append("gpre"))
    g2 = register_module_forward_hook(lambda mod, a, k, o: log.append(("gkw", k)), with_kwargs=True)
    lin(ctorch.ones(1))
    g1.remove()
    g2.remove()
    lin(ctorch.ones(1))
    assert log == ["gpre", ("gkw", {}), "local", "local"]


def test_full_backward_hooks():
    lin = nn.Linear(2, 1)
    with ctorch.no_grad():
        lin.weight.copy_(ctorch.tensor([[1.0, 2.0]]))
    log = []
    lin.register_full_backward_pre_hook(lambda mod, go: (log.append(("pre", go[0].tolist())), (go[0] * 2,))[1])
    lin.register_full_backward_hook(
        lambda mod, gi, go: log.append(("hook", None if gi[0] is None else gi[0].tolist(), go[0].tolist())))
    x = ctorch.tensor([[1.0, -1.0]], requires_grad=True)
    out = lin(x)
    assert type(out.grad_fn).__name__ == "BackwardHookFunctionBackward"
    out.sum().backward()
    # the pre-hook doubles grad_output: d/dx = 2 * W
    assert log == [("pre", [[1.0]]), ("hook", [[2.0, 4.0]], [[2.0]])] and x.grad.tolist() == [[2.0, 4.0]]
    log.clear()

    class Two(nn.Module):
        def forward(self, a, b, c):
            return a * b, a + c

    two = Two()
    two.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 10, gi[1], gi[2]))
    two.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go[1])))
    a = ctorch.tensor([2.0], requires_grad=True)
    two(a, ctorch.tensor([3.0]), 4)[0].sum().backward()
    (ga, gb, gc), go1 = log[0]
    assert ga.tolist() == [30.0] and gb.tolist() == [0.0] and gc is None and go1 is None
    assert a.grad.tolist() == [30.0]
    two.register_full_backward_hook(lambda mod, gi, go: (gi[0],))
    with pytest.raises(RuntimeError, match="^Backward hook returned an invalid number of grad_input, got 1, but "
                                           "expected 3$"):
        two(a, ctorch.tensor([3.0]), 4)[0].sum().backward()
    # no input requires grad: the hooks fire with grad_input all None, and warn
    log.clear()
    with pytest.warns(UserWarning, match="^Full backward hook is firing when gradients are computed with respect "
                                         "to module outputs since no inputs require gradients"):
        lin(ctorch.ones(1, 2)).sum().backward()
    assert log == [("pre", [[1.0]]), ("hook", None, [[2.0]])]
    # an in-place op on the hooked output still reaches the hooks (PyTorch raises there instead)
    log.clear()
    x.grad = None
    nn.Sequential(lin, nn.ReLU(inplace=True))(ctorch.tensor([[1.0, -1.0]], requires_grad=True) * 1).sum().backward()
    assert log == [("pre", [[0.0]]), ("hook", [[0.0, 0.0]], [[0.0]])]  # W x = -1: ReLU's mask is 0
    relu = nn.ReLU(inplace=True)
    relu.register_full_backward_hook(lambda mod, gi, go: None)
    with pytest.raises(RuntimeError, match="^Output 0 of BackwardHookFunction is a view and is being modified "
                                           "inplace"):
        relu(x * 1)


def test_state_dict_and_load_hooks():
    m = nn.Sequential(nn.Linear(1, 1))
    log = []
    m[0].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append((prefix, keep_vars)))
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.__setitem__("extra", 1))
    sd = m.state_dict(keep_vars=True)
    assert log == [("0.", True)] and list(sd) == ["0.weight", "0.bias", "extra"]
    m[0].register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd)
    with pytest.raises(RuntimeError, match="^state_dict post-hook must return None$"):
        m.state_dict()

    m = nn.Sequential(nn.Linear(1, 1))

    def pre(mod, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        log.append((type(mod).__name__, prefix))
        state_dict.pop(prefix + "bias", None)

    m[0].register_load_state_dict_pre_hook(pre)
    m[0].register_load_state_dict_post_hook(lambda mod, keys: log.append(list(keys.missing_keys)))
    m.register_load_state_dict_post_hook(lambda mod, keys: keys.missing_keys.clear())
    log.clear()
    res = m.load_state_dict({"0.weight": ctorch.ones(1, 1), "0.bias": ctorch.ones(1)})
    assert log == [("Linear", "0."), ["0.bias"]] and repr(res) == "<All keys matched successfully>"
    m.register_load_state_dict_post_hook(lambda mod, keys: 1)
    with pytest.raises(AssertionError, match="not expected to return new values"):
        m.load_state_dict(m.state_dict())


def test_registration_hooks_and_module_type_errors():
    from ctorch.nn.modules import module as mm

    log = []
    hooks = [mm.register_module_buffer_registration_hook(lambda m, n, b: log.append(("buf", n))),
             mm.register_module_module_registration_hook(lambda m, n, s: log.append(("mod", n))),
             mm.register_module_parameter_registration_hook(lambda m, n, p: log.append(("par", n)))]
    m = nn.Module()
    m.register_buffer("b", ctorch.ones(1))
    m.b = ctorch.zeros(1)
    m.sub = nn.ReLU()
    m.p = nn.Parameter(ctorch.ones(1))
    m.register_module("r", nn.ReLU())
    for h in hooks:
        h.remove()
    assert log == [("buf", "b"), ("buf", "b"), ("mod", "sub"), ("par", "p"), ("mod", "r")]
    h = mm.register_module_buffer_registration_hook(lambda m, n, b: b * 2)
    m.register_buffer("c", ctorch.ones(1))
    h.remove()
    assert m.c.tolist() == [2.0]
    with pytest.warns(FutureWarning, match="^Positional args are being deprecated, use kwargs instead"):
        sd = nn.Linear(1, 1).state_dict(OrderedDict(), "q.")
    assert list(sd) == ["q.weight", "q.bias"]
    with pytest.raises(RuntimeError, match="^data set to a tensor that requires gradients must be floating point or "
                                           "complex dtype$"):
        nn.Linear(1, 1).type(ctorch.int32)


def test_set_submodule_and_to_empty():
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU()))
    m.set_submodule("1.0", nn.Tanh())
    assert isinstance(m[1][0], nn.Tanh)
    m.set_submodule("1.extra", nn.ReLU())
    assert list(m[1]._modules) == ["0", "extra"]
    with pytest.raises(AttributeError, match="^Sequential has no attribute `new`$"):
        m.set_submodule("1.new", nn.ReLU(), strict=True)
    with pytest.raises(AttributeError, match="^`weight` is not an nn.Module$"):
        m.set_submodule("0.weight", nn.ReLU())
    with pytest.raises(ValueError, match="^Cannot set the submodule without a target name!$"):
        m.set_submodule("", nn.ReLU())
    with pytest.raises(ValueError, match="^`module` is not an nn.Module, found <class 'int'>$"):
        m.set_submodule("0", 3)
    w = m[0].weight
    assert m.to_empty(device="cpu") is m and m[0].weight is w and tuple(w.shape) == (2, 2)


def test_module_setattr_rules():
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"^cannot assign 'torch.FloatTensor' as parameter 'weight' \(torch.nn.Parameter "
                                        r"or None expected\)$"):
        m.weight = ctorch.zeros(2, 2)
    m.bias = None
    assert m.bias is None and "bias" in m._parameters
    m.extra = nn.ReLU()
    assert "extra" in m._modules
    del m.extra
    assert "extra" not in m._modules
    with pytest.raises(KeyError) as e:
        m.register_parameter("a.b", None)
    assert e.value.args[0] == 'parameter name can\'t contain "."'
    with pytest.raises(KeyError) as e:
        m.register_parameter("training", None)
    assert e.value.args[0] == "attribute 'training' already exists"
    with pytest.raises(TypeError, match="^int is not a Module subclass$"):
        m.add_module("x", 3)
    with pytest.raises(AttributeError, match="^'Linear' object has no attribute 'foo'$"):
        m.foo
    with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' object to parameter 'p'"):
        m.register_parameter("p", ctorch.zeros(1))
    m.register_buffer("buf", ctorch.zeros(1))
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'buf'"):
        m.buf = 3
    with pytest.raises(ValueError, match="^training mode is expected to be boolean$"):
        m.train("yes")


def test_module_attribute_lookup_paths():
    # module_getattro (nn.c) serves Module.__getattr__'s lookups in C; each path must give Python's answer
    class WithProperty(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.register_buffer("buf", ctorch.ones(1))

        @property
        def broken(self):
            return self.missing  # an AttributeError inside a property falls through to __getattr__

    m = WithProperty()
    assert m.lin.weight is m.lin._parameters["weight"] and m.buf is m._buffers["buf"]
    assert m.lin is m._modules["lin"]
    with pytest.raises(AttributeError, match="^'WithProperty' object has no attribute 'broken'$"):
        m.broken

    class Delegating(nn.Module):  # the common override calling Module.__getattr__ through super()
        def __init__(self):
            super().__init__()
            self.inner = nn.Linear(2, 3)

        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(self.inner, name)

    d = Delegating()
    assert d.out_features == 3 and d.weight is d.inner.weight

    class NonDictStore(nn.Module):
        pass

    n = NonDictStore()
    n._parameters = OrderedDict(w=nn.Parameter(ctorch.ones(1)))  # not a plain dict: Python's __getattr__ runs
    assert n.w is n._parameters["w"]
    NonDictStore.__getattr__ = lambda self, name: name.upper()  # CPython puts its own slot back
    assert n.anything == "ANYTHING"


def test_train_eval_zero_grad_apply_requires_grad(device):
    m = Net().to(device)
    assert m.training and m.block[1].training
    assert m.eval() is m and not m.block[0].training
    m.train()
    assert m.block[0].training
    m(t(RNG.standard_normal((2, 3)), device, "float32")).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(np.all(to_numpy(p.grad) == 0) for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    names = []
    assert m.apply(lambda mod: names.append(type(mod).__name__)) is m
    assert names == ["Linear", "ReLU", "Linear", "Tanh", "Sequential", "Net"]
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16", "float32"])
def test_module_to_dtype_in_place(device, dtype):
    m = Net()
    params = list(m.parameters())
    before = [to_numpy(p) for p in params]
    assert m.to(getattr(ctorch, dtype)) is m
    after = list(m.parameters())
    assert all(a is b for a, b in zip(params, after))  # the same Parameter objects (optimizers keep them)
    assert all(p.dtype == getattr(ctorch, dtype) for p in after)
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in after)
    assert m.running.dtype == getattr(ctorch, dtype)
    for b, p in zip(before, after):
        np.testing.assert_allclose(to_numpy(p), b, **tol(dtype))
    m.float()
    assert all(p.dtype == ctorch.float32 for p in m.parameters())
    m.double()
    assert m.fc1.weight.dtype == ctorch.float64
    m.half()
    assert m.fc1.weight.dtype == ctorch.float16
    assert m.to(device) is m and m.fc1.weight.device.type == device
    with pytest.raises(TypeError, match=r"^nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                        r"dtype=torch.int64$"):
        m.to(ctorch.int64)


def test_module_to_moves_grads_and_keeps_integer_buffers(device):
    m = nn.Linear(2, 2)
    m.register_buffer("steps", ctorch.tensor([3]))
    m(ctorch.ones(1, 2)).sum().backward()
    m.to(device=device, dtype=ctorch.float64)
    assert m.weight.grad.dtype == ctorch.float64 and m.weight.grad.device.type == device
    assert m.steps.dtype == ctorch.int64


def test_state_dict_roundtrip_and_errors(device):
    m = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1)).to(device)
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert not sd["0.weight"].requires_grad  # detached
    m2 = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1)).to(device)
    res = m2.load_state_dict(sd)
    assert repr(res) == "<All keys matched successfully>"
    for k in sd:
        np.testing.assert_array_equal(to_numpy(m2.state_dict()[k]), to_numpy(sd[k]))
    bad = OrderedDict(sd)
    del bad["0.bias"]
    bad["extra"] = ctorch.zeros(1)
    bad["2.foo"] = ctorch.zeros(1)
    with pytest.raises(RuntimeError) as e:
        m2.load_state_dict(bad)
    assert str(e.value) == ('Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: "0.bias". '
                            '\n\tUnexpected key(s) in state_dict: "extra", "2.foo". ')
    res = m2.load_state_dict(bad, strict=False)
    assert res.missing_keys == ["0.bias"] and res.unexpected_keys == ["extra", "2.foo"]
    assert repr(res) == "_IncompatibleKeys(missing_keys=['0.bias'], unexpected_keys=['extra', '2.foo'])"
    bad2 = OrderedDict(sd)
    bad2["0.weight"] = ctorch.zeros(4, 3)
    with pytest.raises(RuntimeError) as e:
        m2.load_state_dict(bad2)
    assert str(e.value) == ("Error(s) in loading state_dict for Sequential:\n\tsize mismatch for 0.weight: copying a "
                            "param with shape torch.Size([4, 3]) from checkpoint, the shape in current model is "
                            "torch.Size([2, 3]).")
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m2.load_state_dict([1, 2])


def test_load_state_dict_copies_in_place_and_casts(device):
    m = nn.Linear(2, 2).to(device)
    w = m.weight
    src = nn.Linear(2, 2).double().state_dict()
    m.load_state_dict(src)
    assert m.weight is w and m.weight.dtype == ctorch.float32
    np.testing.assert_allclose(to_numpy(m.weight), to_numpy(src["weight"]), rtol=1e-6)


def test_sequential_container():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    s = nn.Sequential(a, b)
    assert len(s) == 2 and s[0] is a and s[-1] is b
    s.append(c)
    assert len(s) == 3 and s[2] is c
    sub = s[1:]
    assert isinstance(sub, nn.Sequential) and len(sub) == 2 and sub[0] is b
    assert list(s) == [a, b, c]
    with pytest.raises(IndexError, match="^index 5 is out of range$"):
        s[5]
    del s[1]
    assert list(s._modules) == ["0", "1"] and s[1] is c
    s[0] = nn.Tanh()
    assert isinstance(s[0], nn.Tanh)
    named = nn.Sequential(OrderedDict([("first", nn.ReLU()), ("second", nn.Sigmoid())]))
    assert repr(named) == "Sequential(\n  (first): ReLU()\n  (second): Sigmoid()\n)"
    assert named.first is named[0]
    out = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))(ctorch.ones(4, 2))
    assert tuple(out.shape) == (4, 1)
    r = nn.ReLU()
    twice = 2 * nn.Sequential(r, c)
    assert list(twice._modules) == ["0", "1", "2", "3"] and twice[2] is r
    twice *= 2
    assert len(twice) == 8 and twice[6] is r
    with pytest.raises(ValueError, match="^Non-positive multiplication factor 0 for <class "):
        twice * 0
    with pytest.raises(TypeError, match="^unsupported operand type\\(s\\) for \\*: <class "):
        twice * 1.5


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(ml) == 3 and isinstance(ml[-1], nn.Linear)
    ml.append(nn.ReLU())
    ml.extend([nn.Tanh()])
    assert len(ml) == 5
    assert repr(ml) == ("ModuleList(\n  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)\n  (3): ReLU()\n"
                        "  (4): Tanh()\n)")
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert len(list(ml.parameters())) == 6
    with pytest.raises(IndexError, match="^index 9 is out of range$"):
        ml[9]
    md = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Linear(1, 1)})
    assert list(md.keys()) == ["a", "b"] and "a" in md and len(md) == 2
    md["c"] = nn.Tanh()
    assert list(md) == ["a", "b", "c"]
    assert md.pop("a").__class__ is nn.ReLU and len(md) == 2
    assert [n for n, _ in md.named_parameters()] == ["b.weight", "b.bias"]


PYTORCH_REPR = """Net(
  (fc): Linear(in_features=3, out_features=4, bias=False)
  (block): Sequential(
    (0): Linear(in_features=4, out_features=4, bias=True)
    (1): LeakyReLU(negative_slope=0.2, inplace=True)
    (2): Dropout(p=0.1, inplace=False)
  )
  (heads): ModuleList(
    (0-2): 3 x Linear(in_features=4, out_features=2, bias=True)
    (3): Tanh()
  )
  (d): ModuleDict(
    (a): GELU(approximate='none')
    (b): GELU(approximate='tanh')
  )
  (emb): Embedding(10, 3, padding_idx=0)
  (ln): LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
  (flat): Flatten(start_dim=1, end_dim=-1)
  (sm): Softmax(dim=1)
  (lsm): LogSoftmax(dim=1)
  (id): Identity()
  (losses): ModuleList(
    (0): MSELoss()
    (1): L1Loss()
    (2): CrossEntropyLoss()
    (3): NLLLoss()
    (4): BCELoss()
    (5): BCEWithLogitsLoss()
    (6): SmoothL1Loss()
  )
)"""


def test_repr_matches_pytorch_text():
    """The expected text is torch 2.15's repr of the same module (reference torch at /work/torchref)."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4, bias=False)
            self.block = nn.Sequential(nn.Linear(4, 4), nn.LeakyReLU(0.2, inplace=True), nn.Dropout(0.1))
            self.heads = nn.ModuleList([nn.Linear(4, 2) for _ in range(3)] + [nn.Tanh()])
            self.d = nn.ModuleDict({"a": nn.GELU(), "b": nn.GELU(approximate="tanh")})
            self.emb = nn.Embedding(10, 3, padding_idx=0)
            self.ln = nn.LayerNorm(4)
            self.flat = nn.Flatten()
            self.sm = nn.Softmax(dim=1)
            self.lsm = nn.LogSoftmax(1)
            self.id = nn.Identity()
            self.losses = nn.ModuleList([nn.MSELoss(), nn.L1Loss(), nn.CrossEntropyLoss(label_smoothing=0.1),
                                         nn.NLLLoss(), nn.BCELoss(), nn.BCEWithLogitsLoss(), nn.SmoothL1Loss(beta=0.5)])

    assert repr(Net()) == PYTORCH_REPR
    assert repr(nn.Embedding(5, 2, max_norm=1.0, scale_grad_by_freq=True, sparse=True)) == (
        "Embedding(5, 2, max_norm=1.0, scale_grad_by_freq=True, sparse=True)")
    assert repr(nn.LayerNorm([2, 3], eps=1e-3, elementwise_affine=False)) == (
        "LayerNorm((2, 3), eps=0.001, elementwise_affine=False, bias=False)")

    class Multi(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    assert repr(Multi()) == "Multi(\n  a=1\n  b=2\n)"


# ====================================================================================================
# nn.init
# ====================================================================================================
def test_calculate_gain():
    init = nn.init
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == 5.0 / 3
    assert init.calculate_gain("relu") == math.sqrt(2.0)
    assert init.calculate_gain("leaky_relu") == math.sqrt(2.0 / (1 + 0.01**2))
    assert init.calculate_gain("leaky_relu", 0.2) == 1.3867504905630728  # torch's value
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="^Unsupported nonlinearity foo$"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="^negative_slope True not a valid number$"):
        init.calculate_gain("leaky_relu", True)


def test_init_fills(device):
    init = nn.init
    ctorch.manual_seed(0)
    w = ctorch.empty(200, 300, device=device)
    fan_in, fan_out = 300, 200
    init.xavier_uniform_(w, gain=2.0)
    a = 2.0 * math.sqrt(6.0 / (fan_in + fan_out))
    v = to_numpy(w)
    assert np.abs(v).max() <= a and abs(v.std() - a / math.sqrt(3)) < 0.03 * a
    init.xavier_normal_(w)
    assert abs(to_numpy(w).std() - math.sqrt(2.0 / (fan_in + fan_out))) < 0.02 * math.sqrt(2.0 / 500)
    init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu")
    bound = math.sqrt(2.0) * math.sqrt(3.0 / fan_out)
    assert np.abs(to_numpy(w)).max() <= bound
    init.kaiming_normal_(w, nonlinearity="relu")
    assert abs(to_numpy(w).std() - math.sqrt(2.0 / fan_in)) < 0.02 * math.sqrt(2.0 / fan_in)
    init.uniform_(w, -0.5, 2.0)
    assert to_numpy(w).min() >= -0.5 and to_numpy(w).max() <= 2.0
    init.normal_(w, 3.0, 0.5)
    assert abs(to_numpy(w).mean() - 3.0) < 0.01
    init.constant_(w, 0.25)
    assert np.all(to_numpy(w) == 0.25)
    init.zeros_(w)
    assert np.all(to_numpy(w) == 0)
    init.ones_(w)
    assert np.all(to_numpy(w) == 1)
    with pytest.raises(ValueError, match="^Fan in and fan out can not be computed for tensor with fewer than 2 "
                                         "dimensions$"):
        init.kaiming_uniform_(ctorch.empty(3))
    with pytest.raises(ValueError, match=r"^Mode fan_avg not supported, please use one of \['fan_in', 'fan_out'\]$"):
        init.kaiming_uniform_(w, mode="fan_avg")
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(ctorch.empty(0, 3))
    # the fill is not recorded by autograd
    p = nn.Parameter(ctorch.empty(3, 3, device=device))
    init.normal_(p)
    assert p.grad_fn is None and p.is_leaf


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_trunc_normal(device, dtype):
    ctorch.manual_seed(0)
    w = ctorch.empty(100000, device=device, dtype=getattr(ctorch, dtype))
    nn.init.trunc_normal_(w, mean=1.0, std=2.0, a=-1.0, b=4.0)
    v = to_numpy(w).astype(np.float64)
    assert v.min() >= -1.0 and v.max() <= 4.0
    # moments of N(1, 2) truncated to [-1, 4]
    from math import erf, exp, pi, sqrt

    alpha, beta = (-1.0 - 1.0) / 2.0, (4.0 - 1.0) / 2.0
    phi = lambda z: exp(-z * z / 2) / sqrt(2 * pi)
    cdf = lambda z: (1 + erf(z / sqrt(2))) / 2
    Z = cdf(beta) - cdf(alpha)
    mean = 1.0 + 2.0 * (phi(alpha) - phi(beta)) / Z
    var = 4.0 * (1 + (alpha * phi(alpha) - beta * phi(beta)) / Z - ((phi(alpha) - phi(beta)) / Z) ** 2)
    assert abs(v.mean() - mean) < 0.02
    assert abs(v.var() - var) < 0.03


def test_linear_bias_broadcasts(device):
    x, w = RNG.standard_normal((4, 3)), RNG.standard_normal((2, 3))
    for b in (RNG.standard_normal((4, 2)), RNG.standard_normal(1), np.float64(2.5), RNG.standard_normal((1, 2))):
        B = t(b, device, requires_grad=True)
        X, W = t(x, device, requires_grad=True), t(w, device, requires_grad=True)
        close(F.linear(X, W, B), x @ w.T + b)
        assert gradcheck(lambda a, bb, c: F.linear(a, bb, c), (X, W, B))
    with pytest.raises(RuntimeError, match=r"^The expanded size of the tensor \(2\) must match the existing size \(3\) "
                                           r"at non-singleton dimension 1.  Target sizes: \[4, 2\].  Tensor sizes: "
                                           r"\[3\]$"):
        F.linear(t(x, device), t(w, device), t(np.ones(3), device))


def test_embedding_gradcheck(device):
    W = t(RNG.standard_normal((6, 3)), device, requires_grad=True)
    idx = ctorch.tensor([[0, 5, 5], [2, 0, 1]], device=device)
    assert gradcheck(lambda w: F.embedding(idx, w), (W,))
    # (padding_idx and scale_grad_by_freq change the gradient on purpose: checked against NumPy above)


def test_one_hot(device):
    out = F.one_hot(ctorch.tensor([0, 2, 1], device=device), 4)
    assert out.dtype == ctorch.int64
    np.testing.assert_array_equal(to_numpy(out), np.eye(4, dtype=np.int64)[[0, 2, 1]])
    assert tuple(F.one_hot(ctorch.tensor([[1], [3]], device=device)).shape) == (2, 1, 4)


def test_backward_of_fused_kernels_is_differentiable(device):
    """Double backward through cross_entropy: g = (p - y) / N, d sum(g^2) / dX = 2/N^2 (diag(p) - p p^T) (p - y)."""
    x = RNG.standard_normal((3, 4))
    X = t(x, device, requires_grad=True)
    loss = F.cross_entropy(X, ctorch.tensor([0, 1, 2], device=device))
    (g,) = ctorch.autograd.grad(loss, X, create_graph=True)
    assert g.requires_grad
    (g * g).sum().backward()
    p = np.exp(x) / np.exp(x).sum(1, keepdims=True)
    r = p - np.eye(4)[[0, 1, 2]]
    want = 2 / 9 * (p * r - p * (p * r).sum(1, keepdims=True))
    np.testing.assert_allclose(X.grad.cpu().numpy(), want, rtol=1e-5, atol=1e-7)
