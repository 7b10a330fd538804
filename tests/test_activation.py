"""Activations, padding, distances and the composed losses of csrc/nn_act.c (torch.nn.functional
and their modules), against NumPy references on every device: float dtypes and layouts, integer
dtypes where PyTorch has kernels, in-place variants, PyTorch's errors, grad_fn names and float64
gradchecks."""
import warnings

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
import ctorch.nn.functional as F
from ctorch.autograd import gradcheck

from conftest import DEVICES, assert_close, to_numpy

RNG = np.random.default_rng(7)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def T(arr, device, dtype="float64", requires_grad=False):
    return ctorch.tensor(np.asarray(arr), dtype=getattr(ctorch, dtype), device=device, requires_grad=requires_grad)


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# name: (ctorch call, NumPy reference, grad_fn name or None for compositions)
ACTIVATIONS = {
    "elu": (lambda x: F.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x)), "EluBackward0"),
    "celu": (lambda x: F.celu(x, 1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x / 1.5)), "CeluBackward0"),
    "selu": (F.selu, lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)), "EluBackward0"),
    "softplus": (lambda x: F.softplus(x, 2.0, 3.0),
                 lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2), "SoftplusBackward0"),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 1.25), lambda x: np.clip(x, -0.5, 1.25), "HardtanhBackward0"),
    "relu6": (F.relu6, lambda x: np.clip(x, 0, 6), "HardtanhBackward0"),
    "hardsigmoid": (F.hardsigmoid, lambda x: np.clip(x + 3, 0, 6) / 6, "HardsigmoidBackward0"),
    "hardswish": (F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6, "HardswishBackward0"),
    "mish": (F.mish, lambda x: x * np.tanh(np.log1p(np.exp(x))), "MishBackward0"),
    "softsign": (F.softsign, lambda x: x / (1 + np.abs(x)), "DivBackward0"),
    "logsigmoid": (F.logsigmoid, lambda x: np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))), "LogSigmoidBackward0"),
    "tanhshrink": (F.tanhshrink, lambda x: x - np.tanh(x), "SubBackward0"),
    "softshrink": (lambda x: F.softshrink(x, 0.6),
                   lambda x: np.where(x > 0.6, x - 0.6, np.where(x < -0.6, x + 0.6, 0)), "SoftshrinkBackward0"),
    "hardshrink": (lambda x: F.hardshrink(x, 0.6), lambda x: np.where(np.abs(x) > 0.6, x, 0), "HardshrinkBackward0"),
    "threshold": (lambda x: F.threshold(x, 0.3, -2.0), lambda x: np.where(x <= 0.3, -2.0, x), "ThresholdBackward0"),
    "softmin": (lambda x: F.softmin(x, -1), lambda x: _softmax(-x, -1), "SoftmaxBackward0"),
    "glu": (lambda x: F.glu(x, -1), lambda x: np.split(x, 2, -1)[0] * _sig(np.split(x, 2, -1)[1]), "GluBackward0"),
}


def _inputs():
    # values away from every kink (0, +-0.3, +-0.5, +-0.6, 1.25, +-3, 6), some in the tails
    x = RNG.uniform(-7, 7, (3, 4))
    for kink in (0.0, 0.3, -0.3, 0.5, -0.5, 0.6, -0.6, 1.25, 3.0, -3.0, 6.0):
        x[np.abs(x - kink) < 0.05] += 0.1
    return x


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_forward(device, name):
    fn, ref, _ = ACTIVATIONS[name]
    x = _inputs()
    for dtype in ("float32", "float64", "float16", "bfloat16"):
        xt = T(x, device, dtype)
        xr = to_numpy(xt).astype(np.float64)  # the rounded inputs
        out = fn(xt)
        assert out.dtype == xt.dtype and out.device == xt.device
        assert_close(out, ref(xr))
    # layouts: transposed, strided, 0-d (not glu: it halves a dim), empty
    xt = T(np.ascontiguousarray(x.T), device).T
    assert_close(fn(xt), ref(x))
    xs = T(x, device)[:, ::2]
    assert_close(fn(xs), ref(x[:, ::2]))
    if name not in ("glu", "softmin"):
        assert_close(fn(T(np.float64(1.7), device)), ref(np.float64(1.7)))
    assert tuple(fn(T(np.zeros((0, 4)), device)).shape) == ((0, 2) if name == "glu" else (0, 4))


@pytest.mark.parametrize("device", DEVICES)
def test_activation_special_values(device):
    x = np.array([np.nan, -np.inf, np.inf, -0.5, 0.5, 0.0])
    xt = T(x, device)
    with np.errstate(invalid="ignore", over="ignore"):
        for name in ("elu", "selu", "hardtanh", "hardsigmoid", "threshold", "logsigmoid"):
            fn, ref, _ = ACTIVATIONS[name]
            assert_close(fn(xt), ref(x))
    # PyTorch's forms decide these: -inf * 0 is nan in hardswish and mish; softshrink keeps the sign of zero
    got = to_numpy(F.hardswish(xt))
    assert np.isnan(got[0]) and np.isnan(got[1]) and got[2] == np.inf
    assert np.isnan(to_numpy(F.mish(xt))[1])
    for fn in (F.softshrink, F.hardshrink, F.relu6, F.softsign):  # NaN propagates
        assert np.isnan(to_numpy(fn(xt))[0])
    assert np.signbit(to_numpy(F.softshrink(T([-0.25], device)))[0])


@pytest.mark.parametrize("device", DEVICES)
def test_activation_integer_dtypes(device):
    v = np.array([-3, -1, 0, 1, 2, 3, 5, 7])
    x = T(v, device, "int64")
    assert_close(F.hardtanh(x, -1.5, 2.5), np.clip(v, -1, 2))
    assert F.hardtanh(x).dtype == ctorch.int64
    assert_close(F.relu6(x), np.clip(v, 0, 6))
    assert_close(F.threshold(x, 1.5, 2.7), np.where(v <= 1, 2, v))
    u = T([0, 1, 2, 200], device, "uint8")
    assert_close(F.hardtanh(u), np.array([0, 1, 1, 1], dtype=np.uint8))  # bounds saturate into [0, 255]
    assert_close(F.relu6(u), np.array([0, 1, 2, 6], dtype=np.uint8))
    # threshold converts its scalars to the dtype as PyTorch: ints wrap (uint8's -1 is 255), floats
    # out of range are refused
    assert_close(F.threshold(u, -1, 5), np.array([5, 5, 5, 5], dtype=np.uint8))
    assert_close(F.threshold(u, 5, -1), np.array([255, 255, 255, 200], dtype=np.uint8))
    assert_close(F.threshold(T([-3, -2, -1, 0, 1], device, "int8"), -1.5, 9), np.array([9, 9, 9, 0, 1]))
    for args, name in [((-1.5, 5), "uint8_t"), ((1.5, 300), "uint8_t"), ((float("nan"), 1), "uint8_t")]:
        with pytest.raises(RuntimeError, match=f"^value cannot be converted to type {name} without overflow$"):
            F.threshold(u, *args)
    with pytest.raises(NotImplementedError, match="Bool inputs not supported for hardtanh"):
        F.hardtanh(T([True], device, "bool"))
    kernel = "cuda" if device == "cuda" else "cpu"
    for fn, msg in [(F.elu, f'"elu_{kernel}" not implemented for \'Long\''),
                    (F.hardsigmoid, f'"hardsigmoid_{kernel}" not implemented for \'Long\''),
                    (F.logsigmoid, f'"log_sigmoid_{kernel}" not implemented for \'Long\''),
                    (F.mish, f'"mish_{kernel}" not implemented for \'Long\''),
                    (F.glu, f'"glu_{kernel}" not implemented for \'Long\''),
                    (lambda t: F.prelu(t, T([1], device, "int64")), f'"prelu_{kernel}" not implemented for \'Long\'')]:
        with pytest.raises(NotImplementedError, match=msg):
            fn(T([[1, 2]], device, "int64"))
    with pytest.raises(NotImplementedError, match='"threshold_'):
        F.threshold(T([True], device, "bool"), 0, 1)
    # compositions promote integers as their parts do
    assert F.softsign(x).dtype == ctorch.float32
    assert_close(F.tanhshrink(x), (v - np.tanh(v)).astype(np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_activation_inplace(device):
    x = _inputs()
    for name, call in [("elu", lambda t: F.elu(t, 0.7, inplace=True)), ("celu", lambda t: F.celu(t, 1.5, True)),
                       ("selu", lambda t: F.selu(t, True)), ("hardtanh", lambda t: F.hardtanh(t, -0.5, 1.25, True)),
                       ("relu6", lambda t: F.relu6(t, True)), ("hardsigmoid", lambda t: F.hardsigmoid(t, True)),
                       ("hardswish", lambda t: F.hardswish(t, True)), ("mish", lambda t: F.mish(t, True)),
                       ("threshold", lambda t: F.threshold(t, 0.3, -2.0, True))]:
        xt = T(x, device)
        out = call(xt)
        assert out is xt
        assert_close(xt, ACTIVATIONS[name][1](x))
    xt = T(x, device)
    assert F.elu_(xt) is xt and F.hardtanh_(T(x, device)) is not None
    # in place on a non-leaf records the op's backward
    leaf = T(x, device, requires_grad=True)
    y = leaf * 1.0
    F.elu(y, inplace=True)
    assert y.grad_fn.name() == "EluBackward0"
    y.sum().backward()
    assert_close(leaf.grad, np.where(x > 0, 1.0, np.exp(x)))
    # silu in place: SiluBackward0; on a strided view of a non-leaf it writes through (CopySlices)
    assert F.silu(leaf * 1.0, inplace=True).grad_fn.name() == "SiluBackward0"
    base = leaf * 1.0
    view = base[..., ::2]
    assert F.silu(view, inplace=True) is view and base.grad_fn.name().endswith("CopySlices")
    ref = x.copy()
    ref[..., ::2] = x[..., ::2] * _sig(x[..., ::2])
    assert_close(base, ref)
    # modules
    xt = T(x, device)
    assert nn.Hardtanh(-0.5, 1.25, inplace=True)(xt) is xt
    assert_close(xt, np.clip(x, -0.5, 1.25))


@pytest.mark.parametrize("device", DEVICES)
def test_activation_grad(device):
    x = _inputs()
    for name, (fn, _, node) in ACTIVATIONS.items():
        xt = T(x, device, requires_grad=True)
        out = fn(xt)
        assert out.grad_fn.name() == node, name
        assert gradcheck(fn, (xt,)), name
    # Tensor and torch forms
    xt = T(x, device, requires_grad=True)
    assert xt.hardshrink(0.6).grad_fn.name() == "HardshrinkBackward0"
    assert_close(ctorch.hardshrink(xt, 0.6), ACTIVATIONS["hardshrink"][1](x))
    assert_close(ctorch.celu(xt, 1.5), ACTIVATIONS["celu"][1](x))
    assert_close(ctorch.selu(xt), ACTIVATIONS["selu"][1](x))
    assert_close(ctorch.threshold(xt, 0.3, -2.0), ACTIVATIONS["threshold"][1](x))


@pytest.mark.parametrize("device", DEVICES)
def test_prelu(device):
    x = RNG.standard_normal((2, 3, 4))
    w = np.array([0.1, -0.2, 0.3])
    xt, wt = T(x, device, requires_grad=True), T(w, device, requires_grad=True)
    out = F.prelu(xt, wt)
    assert out.grad_fn.name() == "PreluKernelBackward0"
    assert_close(out, np.where(x > 0, x, w[None, :, None] * x))
    assert_close(xt.prelu(T([0.25], device)), np.where(x > 0, x, 0.25 * x))
    assert_close(F.prelu(T(x[0, 0], device), T([0.5], device)), np.where(x[0, 0] > 0, x[0, 0], 0.5 * x[0, 0]))
    assert gradcheck(F.prelu, (xt, wt))
    assert gradcheck(F.prelu, (xt, T([0.25], device, requires_grad=True)))
    assert gradcheck(F.prelu, (T(1.5, device, requires_grad=True), T([0.25], device, requires_grad=True)))
    with pytest.raises(RuntimeError, match=r"Mismatch of parameter numbers and input channel size. Found parameter "
                                           r"numbers = 2 and channel size = 3."):
        F.prelu(xt, T([1.0, 2.0], device))
    with pytest.raises(RuntimeError, match=r"channel size = 1\."):
        F.prelu(T(x[0, 0], device), T([1.0, 2.0, 3.0, 4.0], device))
    with pytest.raises(RuntimeError, match="Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"):
        F.prelu(xt, T([[1.0]], device))
    # no type promotion between input and weight (a float32 PReLU given float64 input)
    with pytest.raises(RuntimeError, match=r"^prelu: Type promoting not supported. Got Double and Float$"):
        nn.PReLU().to(device)(xt)
    m = nn.PReLU(3, init=0.1).to(device)
    assert list(m.state_dict()) == ["weight"] and tuple(m.weight.shape) == (3,)
    assert_close(m.weight, np.full(3, 0.1, dtype=np.float32))
    m(T(x, device, "float32")).sum().backward()
    assert_close(m.weight.grad, np.where(x > 0, 0, x).sum(axis=(0, 2)).astype(np.float32))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_activation_backward_rows(device, dtype):
    """relu/tanh/sigmoid's backward is one fused row when not recorded (PyTorch's aten
    threshold_backward, tanh_backward, sigmoid_backward): their values, NaN and inf included (an
    infinite gradient where relu's output is 0 gives 0, not inf * 0), on transposed and broadcast
    operands; with create_graph the recorded expression is used and agrees."""
    g = RNG.standard_normal((5, 4))
    y = RNG.uniform(-1, 1, (5, 4))
    g[0, :3] = [np.inf, -np.inf, np.nan]
    y[0, :3] = [0.0, -0.5, 0.5]
    y[1, 0] = np.nan
    gt, yt = T(g, device, dtype), T(y, device, dtype)
    gq, yq = to_numpy(gt).astype(np.float64), to_numpy(yt).astype(np.float64)
    want = {"_threshold_backward": lambda g_, y_: np.where(y_ <= 0.25, 0.0, g_),
            "_tanh_backward": lambda g_, y_: g_ * (1 - y_ * y_), "_sigmoid_backward": lambda g_, y_: g_ * (1 - y_) * y_}
    for name, ref in want.items():
        fn = getattr(ctorch._C, name)
        args = (0.25,) if name == "_threshold_backward" else ()
        out = fn(gt, yt, *args)
        assert out.dtype == gt.dtype and out.device == gt.device
        with np.errstate(invalid="ignore"):
            assert_close(out, ref(gq, yq))
            assert_close(fn(gt.T, yt.T, *args), ref(gq.T, yq.T))
            assert_close(fn(gt[1:2], yt, *args), ref(np.broadcast_to(gq[1:2], (5, 4)), yq))
    with pytest.raises(TypeError, match="must be Tensor"):
        ctorch._C._tanh_backward(gt, 1.0)
    # through autograd: relu's gradient where the output is 0 is 0 even for an infinite gradient
    x = T([-1.0, 0.0, 2.0], device, dtype, requires_grad=True)
    F.relu(x).backward(T([np.inf, np.inf, 3.0], device, dtype))
    assert_close(x.grad, np.array([0.0, 0.0, 3.0]))
    for f, d in ((F.relu, lambda v: (v > 0).astype(float)), (ctorch.tanh, lambda v: 1 - np.tanh(v) ** 2),
                 (ctorch.sigmoid, lambda v: _sig(v) * (1 - _sig(v)))):
        x = T(RNG.standard_normal(6), device, "float64", requires_grad=True)
        (plain,) = ctorch.autograd.grad(f(x).sum(), x)
        (recorded,) = ctorch.autograd.grad(f(x).sum(), x, create_graph=True)
        assert_close(plain, d(to_numpy(x)))
        assert_close(recorded, d(to_numpy(x)))


@pytest.mark.parametrize("device", DEVICES)
def test_tanh_sigmoid_double_backward(device):
    """Under create_graph, tanh's and sigmoid's backward record TanhBackwardBackward0 /
    SigmoidBackwardBackward0 (PyTorch's nodes); second derivatives against the closed forms and a
    gradcheck of the recorded backward ops themselves."""
    v = np.array([0.3, -1.2, 2.0])
    for f, name, second in ((ctorch.tanh, "TanhBackwardBackward0", lambda t: -2 * t * (1 - t * t)),
                            (ctorch.sigmoid, "SigmoidBackwardBackward0", lambda s: s * (1 - s) * (1 - 2 * s))):
        x = T(v, device, requires_grad=True)
        y = f(x)
        (gx,) = ctorch.autograd.grad(y.sum(), x, create_graph=True)
        assert gx.grad_fn.name() == name
        (ggx,) = ctorch.autograd.grad(gx.sum(), x)
        assert_close(ggx, second(to_numpy(y)))
    go, out = T([0.5, -2.0, 1.5], device, requires_grad=True), T([0.2, -0.7, 0.9], device, requires_grad=True)
    assert gradcheck(ctorch._C._tanh_backward, (go, out))
    assert gradcheck(ctorch._C._sigmoid_backward, (go, out))


@pytest.mark.parametrize("device", DEVICES)
def test_relu_and_threshold_double_backward_record_threshold_backward(device):
    """With create_graph relu's and threshold's backward record threshold_backward
    (ThresholdBackwardBackward0, edges to the gradient and to relu's output / threshold's input), whose
    derivative in self is zero: a gradient penalty through relu gives the first layer's bias a zero
    gradient, as PyTorch, not None; the weights' gradients against the hand-derived NumPy values."""
    x = T(RNG.standard_normal((5, 3)), device, requires_grad=True)
    w1 = T(RNG.standard_normal((4, 3)), device, requires_grad=True)
    b1 = T(RNG.standard_normal(4), device, requires_grad=True)
    w2 = T(RNG.standard_normal((1, 4)), device, requires_grad=True)
    (g,) = ctorch.autograd.grad(F.linear(F.relu(F.linear(x, w1, b1)), w2).sum(), x, create_graph=True)
    (g ** 2).sum().backward()
    xn, w1n, w2n = to_numpy(x), to_numpy(w1), to_numpy(w2)
    m = (xn @ w1n.T + to_numpy(b1) > 0).astype(float)  # (5, 4) relu's mask
    gn = (m * w2n) @ w1n  # (5, 3) d out / d x per row
    assert_close(g, gn)
    assert_close(w1.grad, 2 * (m * w2n).T @ gn)
    assert_close(w2.grad, 2 * (m * (gn @ w1n.T)).sum(axis=0, keepdims=True))
    assert not to_numpy(b1.grad).any() and not to_numpy(x.grad).any()  # zeros, not None
    gy = T(RNG.standard_normal((5, 3)), device, requires_grad=True)
    for f, parent in ((F.relu, "ReluBackward0"), (lambda v: F.threshold(v, 0.25, -2.0), "AccumulateGrad")):
        (h,) = ctorch.autograd.grad(f(x), x, gy, create_graph=True)
        assert type(h.grad_fn).__name__ == "ThresholdBackwardBackward0"
        assert [type(e[0]).__name__ for e in h.grad_fn.next_functions] == ["AccumulateGrad", parent]
        assert_close(h, np.where(xn > (0.0 if parent != "AccumulateGrad" else 0.25), to_numpy(gy), 0.0))
        ggy, gx = ctorch.autograd.grad((h * h).sum(), (gy, x), allow_unused=True)
        assert_close(ggy, 2 * to_numpy(h))
        assert gx is not None and not to_numpy(gx).any()


@pytest.mark.parametrize("device", DEVICES)
def test_activation_errors(device):
    x = T(RNG.standard_normal((2, 3)), device)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
        F.glu(x)
    with pytest.raises(RuntimeError, match="glu does not support scalars because halving size must be even"):
        F.glu(T(1.0, device))
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.glu(x, 5)
    with pytest.raises(RuntimeError, match="ZeroDivisionError: alpha cannot be 0 for CELU"):
        F.celu(x, 0.0)
    with pytest.raises(RuntimeError, match=r"lambda must be in range \[0, 3.40282e\+38\] for input dtype Float, but "
                                           r"found -1"):
        F.softshrink(x.float(), -1.0)
    with pytest.raises(RuntimeError, match=r"lambda must be in range \[0, 1.79769e\+308\] for input dtype Double"):
        F.softshrink(x, -1.0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 2.0, 1.0)
    with pytest.raises(TypeError, match="must be Tensor"):
        F.elu([1.0])


def test_activation_modules():
    reprs = {
        nn.ELU(): "ELU(alpha=1.0)", nn.ELU(0.5, inplace=True): "ELU(alpha=0.5, inplace=True)",
        nn.CELU(2.0, True): "CELU(alpha=2.0, inplace=True)", nn.SELU(): "SELU()", nn.SELU(True): "SELU(inplace=True)",
        nn.Softplus(): "Softplus(beta=1.0, threshold=20.0)", nn.Softplus(2, 10): "Softplus(beta=2, threshold=10)",
        nn.Hardtanh(): "Hardtanh(min_val=-1.0, max_val=1.0)",
        nn.Hardtanh(-2, 3, True): "Hardtanh(min_val=-2, max_val=3, inplace=True)", nn.ReLU6(): "ReLU6()",
        nn.ReLU6(True): "ReLU6(inplace=True)", nn.Hardsigmoid(True): "Hardsigmoid()", nn.Hardswish(): "Hardswish()",
        nn.Mish(True): "Mish(inplace=True)", nn.Softsign(): "Softsign()", nn.LogSigmoid(): "LogSigmoid()",
        nn.Tanhshrink(): "Tanhshrink()", nn.Softshrink(): "Softshrink(0.5)", nn.Hardshrink(0.3): "Hardshrink(0.3)",
        nn.Threshold(0.1, 20): "Threshold(threshold=0.1, value=20)",
        nn.Threshold(0.1, 20, True): "Threshold(threshold=0.1, value=20, inplace=True)",
        nn.PReLU(): "PReLU(num_parameters=1)", nn.GLU(): "GLU(dim=-1)", nn.Softmin(1): "Softmin(dim=1)",
        nn.Softmin(): "Softmin(dim=None)",
    }
    for m, text in reprs.items():
        assert repr(m) == text
    x = _inputs()
    for m, name in [(nn.SELU(), "selu"), (nn.Hardswish(), "hardswish"), (nn.Mish(), "mish"), (nn.Softsign(), "softsign"),
                    (nn.LogSigmoid(), "logsigmoid"), (nn.Tanhshrink(), "tanhshrink"), (nn.Softshrink(0.6), "softshrink"),
                    (nn.Hardshrink(0.6), "hardshrink"), (nn.Threshold(0.3, -2.0), "threshold"), (nn.Softmin(-1), "softmin"),
                    (nn.GLU(), "glu"), (nn.Softplus(2.0, 3.0), "softplus"), (nn.CELU(1.5), "celu"), (nn.ELU(0.7), "elu")]:
        assert_close(m(T(x, "cpu")), ACTIVATIONS[name][1](x))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert nn.Hardtanh(min_value=-2.0).min_val == -2.0
    assert any("min_value" in str(i.message) for i in w)
    with pytest.raises(AssertionError, match=r"^max_val \(0\.5\) must be greater than min_val \(1\.0\)$"):
        nn.Hardtanh(1.0, 0.5)
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        F.softmin(T(x, "cpu"))


# --- padding ---------------------------------------------------------------------------------------------------
NP_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _np_pad(x, pad, mode):
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return np.pad(x, widths, mode=NP_MODES[mode])


@pytest.mark.parametrize("device", DEVICES)
def test_pad_constant(device):
    x = RNG.standard_normal((2, 3, 4))
    for dtype in ("float32", "float64", "float16", "int64", "bool"):
        xt = T(x > 0 if dtype == "bool" else x, device, dtype)
        xr = to_numpy(xt)
        out = F.pad(xt, (1, 2, 0, 1))
        assert out.dtype == xt.dtype
        assert_close(out, np.pad(xr, [(0, 0), (0, 1), (1, 2)]))
    xt = T(x, device)
    assert_close(F.pad(xt, (1, 1), value=2.5), np.pad(x, [(0, 0), (0, 0), (1, 1)], constant_values=2.5))
    assert_close(F.pad(xt, (-1, 2, 1, -2)), np.pad(x[:, :1, 1:], [(0, 0), (1, 0), (0, 2)]))  # negative pads crop
    assert_close(F.pad(xt, (-3, -1)), x[:, :, :0])
    assert_close(F.pad(T(np.ascontiguousarray(x.T), device).T, (1, 1, 1, 1, 1, 1)), np.pad(x, 1))
    assert_close(F.pad(T([1, 2], device, "int64"), (1, 1), value=2.7), [2, 1, 2, 2])
    assert_close(ctorch.constant_pad_nd(xt, (1, 1), 3.0), np.pad(x, [(0, 0), (0, 0), (1, 1)], constant_values=3.0))
    xg = T(x, device, requires_grad=True)
    assert F.pad(xg, (1, 1)).grad_fn.name() == "ConstantPadNdBackward0"
    assert gradcheck(lambda t: F.pad(t, (2, -1, -1, 1), value=1.5), (xg,))
    for m, text, pad in [(nn.ZeroPad2d(2), "ZeroPad2d((2, 2, 2, 2))", (2, 2, 2, 2)),
                         (nn.ConstantPad1d(2, 3.5), "ConstantPad1d(padding=(2, 2), value=3.5)", (2, 2)),
                         (nn.ConstantPad2d((1, 2, 0, 1), 0.0), "ConstantPad2d(padding=(1, 2, 0, 1), value=0.0)",
                          (1, 2, 0, 1)),
                         (nn.ZeroPad1d((1, 0)), "ZeroPad1d((1, 0))", (1, 0))]:
        assert repr(m) == text
        value = getattr(m, "value", 0.0)
        assert_close(m(xt), np.pad(x, [(0, 0)] * (3 - len(pad) // 2) + [(pad[2 * i], pad[2 * i + 1])
                                                                         for i in reversed(range(len(pad) // 2))],
                                   constant_values=value))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_gather(device, mode):
    x = RNG.standard_normal((2, 3, 4, 5))
    for pad, sl in [((2, 1), x[0]), ((1, 2, 2, 0), x), ((1, 1, 2, 2), x[0]), ((1, 0, 1, 1, 1, 1), x)]:
        assert_close(F.pad(T(sl, device), pad, mode), _np_pad(sl, pad, mode))
    assert_close(F.pad(T(x[0], device, "float32"), (1, 1), mode=mode), _np_pad(x[0].astype(np.float32), (1, 1), mode))
    assert_close(F.pad(T(np.arange(6).reshape(1, 6), device, "int64"), (2, 2), mode),
                 _np_pad(np.arange(6).reshape(1, 6), (2, 2), mode))
    if mode == "circular":  # PyTorch crops first, then wraps around what is left
        assert_close(F.pad(T(x[0], device), (-1, 2), mode), _np_pad(x[0][..., 1:], (0, 2), mode))
        assert_close(F.pad(T(x[0], device), (2, -2), mode), _np_pad(x[0][..., :-2], (2, 0), mode))
    else:
        assert_close(F.pad(T(x[0], device), (-1, 1), mode), _np_pad(x[0], (0, 1), mode)[..., 1:])  # crop then pad
    xg = T(x[0, :1, :2, :3], device, requires_grad=True)  # small: gradcheck runs a backward per output element
    names = {"reflect": "ReflectionPad", "replicate": "ReplicationPad"}
    if mode in names:
        assert F.pad(xg, (1, 2), mode).grad_fn.name() == names[mode] + "1DBackward0"
        assert F.pad(xg, (1, 2, 1, 0), mode).grad_fn.name() == names[mode] + "2DBackward0"
    assert gradcheck(lambda t: F.pad(t, (2, 1, 1, 0), mode), (xg,))
    assert gradcheck(lambda t: F.pad(t, (-1, 2), mode), (xg,))
    # the backward sums the gradient of every copy of an element
    g = RNG.standard_normal((2, 3, 9))
    xs = T(x[0, :2, :3, :4], device, requires_grad=True)
    F.pad(xs, (3, 2), mode).backward(T(g, device))
    idx = {"reflect": [3, 2, 1, 0, 1, 2, 3, 2, 1], "replicate": [0, 0, 0, 0, 1, 2, 3, 3, 3],
           "circular": [1, 2, 3, 0, 1, 2, 3, 0, 1]}[mode]
    expected = np.zeros((2, 3, 4))
    np.add.at(expected, (slice(None), slice(None), idx), g)
    assert_close(xs.grad, expected)
    modules = {"reflect": (nn.ReflectionPad1d, nn.ReflectionPad2d), "replicate": (nn.ReplicationPad1d, nn.ReplicationPad2d),
               "circular": (nn.CircularPad1d, nn.CircularPad2d)}[mode]
    assert repr(modules[0](2)) == f"{modules[0].__name__}((2, 2))"
    assert repr(modules[1]((1, 1, 2, 0))) == f"{modules[1].__name__}((1, 1, 2, 0))"
    assert_close(modules[1]((1, 1, 2, 0))(T(x, device)), _np_pad(x, (1, 1, 2, 0), mode))


@pytest.mark.parametrize("device", DEVICES)
def test_pad_errors(device):
    x = T(RNG.standard_normal((2, 3, 4)), device)
    cases = [
        (RuntimeError, "Padding length must be divisible by 2", lambda: F.pad(x, (1,))),
        (RuntimeError, "Padding length should be less than or equal to two times the input dimension but got padding "
                       "length 8 and input of dimension 3", lambda: F.pad(x, (1, 1) * 4)),
        (RuntimeError, "narrow\\(\\): length must be non-negative.", lambda: F.pad(x, (-3, -2))),
        (RuntimeError, 'Padding mode "reflect" doesn\'t take in value argument', lambda: F.pad(x, (1, 1), "reflect", 2)),
        (NotImplementedError, "Unrecognised padding mode foo", lambda: F.pad(x, (1, 1), "foo")),
        (RuntimeError, r"Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                       r"padding \(4, 1\) at dimension 2 of input \[2, 3, 4\]", lambda: F.pad(x, (4, 1), "reflect")),
        (RuntimeError, r"Argument #6: .* padding \(3, 1\) at dimension 1 of input", lambda: F.pad(x, (1, 1, 3, 1), "reflect")),
        (RuntimeError, "Padding value causes wrapping around more than once.", lambda: F.pad(x, (5, 1), "circular")),
        (NotImplementedError, "Padding size 6 is not supported for 3D input tensor.", lambda: F.pad(x, (1,) * 6, "reflect")),
        (NotImplementedError, "Padding size 2 is not supported for 1D input tensor.", lambda: F.pad(x[0, 0], (1, 1), "replicate")),
        (RuntimeError, r"Expected 2D or 3D \(batch mode\) tensor with possibly 0 batch size and other non-zero dimensions "
                       r"for input, but got: \[2, 0, 4\]", lambda: F.pad(x[:, :0], (1, 1), "replicate")),
        (NotImplementedError, "\"reflection_pad1d\" not implemented for 'Bool'", lambda: F.pad(x > 0, (1, 1), "reflect")),
        (RuntimeError, "Negative padding value is resulting in an empty dimension", lambda: F.pad(x, (-2, -2), "circular")),
        (RuntimeError, r"input \(W: 4\) is too small. Calculated output W: 0", lambda: F.pad(x, (-5, 1), "replicate")),
        (TypeError, "must be tuple of ints, but found element of type float at pos 0", lambda: F.pad(x, [1.5, 1])),
    ]
    for exc, msg, call in cases:
        with pytest.raises(exc, match=msg):
            call()
    assert tuple(F.pad(x[:0], (1, 1), "reflect").shape) == (0, 3, 6)  # an empty batch is fine
    assert_close(F.pad(x > 0, (1, 1), "circular"), _np_pad(to_numpy(x) > 0, (1, 1), "circular"))


# --- distances -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_distances(device):
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    at, bt = T(a, device, requires_grad=True), T(b, device, requires_grad=True)
    ref = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    assert_close(F.normalize(at), ref)
    assert F.normalize(at).grad_fn.name() == "DivBackward0"
    assert_close(F.normalize(at, p=1.0, dim=0), a / np.abs(a).sum(0, keepdims=True))
    out = ctorch.empty(3, 4, dtype=ctorch.float64, device=device)
    assert F.normalize(T(a, device), out=out) is out
    assert_close(out, ref)
    assert_close(F.normalize(T(np.zeros((2, 3)), device)), np.zeros((2, 3)))  # eps keeps zero rows finite
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert_close(F.cosine_similarity(at, bt), cos)
    assert F.cosine_similarity(at, bt).grad_fn.name() == "SumBackward1"
    assert_close(ctorch.cosine_similarity(at, bt[:1], 1), (a * b[:1]).sum(1) / (np.linalg.norm(a, axis=1)
                                                                                * np.linalg.norm(b[0])))
    assert_close(nn.CosineSimilarity(dim=0)(at, bt), (a * b).sum(0) / (np.linalg.norm(a, axis=0)
                                                                        * np.linalg.norm(b, axis=0)))
    assert_close(F.cosine_similarity(T(np.zeros(3), device), T(np.ones(3), device), dim=0), 0.0)
    with pytest.raises(RuntimeError, match="expected common dtype to be floating point, yet common dtype is Long"):
        F.cosine_similarity(T([[1]], device, "int64"), T([[2]], device, "int64"))
    assert_close(F.pairwise_distance(at, bt), np.linalg.norm(a - b + 1e-6, axis=1))
    assert_close(F.pairwise_distance(at, bt, p=1.0, keepdim=True), np.abs(a - b + 1e-6).sum(1, keepdims=True))
    assert_close(nn.PairwiseDistance(p=3.0)(at, bt), (np.abs(a - b + 1e-6) ** 3).sum(1) ** (1 / 3))
    assert repr(nn.PairwiseDistance()) == "PairwiseDistance()" and repr(nn.CosineSimilarity()) == "CosineSimilarity()"
    assert gradcheck(F.normalize, (at,))
    assert gradcheck(F.cosine_similarity, (at, bt))
    assert gradcheck(F.pairwise_distance, (at, bt))


# --- losses ----------------------------------------------------------------------------------------------------
def _reduce(v, reduction):
    return v.mean() if reduction == "mean" else v.sum() if reduction == "sum" else v


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_pointwise_losses(device, reduction):
    x, y = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    sign = np.where(RNG.standard_normal((3, 4)) > 0, 1.0, -1.0)
    p = RNG.uniform(0.1, 1.0, (3, 4))
    xt, yt = T(x, device, requires_grad=True), T(y, device, requires_grad=True)
    st, pt = T(sign, device), T(p, device, requires_grad=True)
    d = x - y
    huber = np.where(np.abs(d) < 0.8, 0.5 * d * d, 0.8 * (np.abs(d) - 0.4))
    cases = [
        (lambda a, b: F.huber_loss(a, b, reduction=reduction, delta=0.8), (xt, yt), huber, "HuberLossBackward0"),
        (lambda a: F.soft_margin_loss(a, st, reduction=reduction), (xt,), np.log1p(np.exp(-x * sign)),
         "SoftMarginLossBackward0"),
        (lambda a, b: F.margin_ranking_loss(a, b, st, margin=0.3, reduction=reduction), (xt, yt),
         np.maximum(0, -sign * (x - y) + 0.3), None),
        (lambda a: F.hinge_embedding_loss(a, st, margin=0.5, reduction=reduction), (xt,),
         np.where(sign == 1, x, np.maximum(0, 0.5 - x)), None),
        (lambda a, b: F.kl_div(a, b, reduction=reduction), (xt, pt), p * np.log(p) - p * x, None),
        (lambda a, b: F.kl_div(a, b, reduction=reduction, log_target=True), (xt, yt), np.exp(y) * (y - x), None),
        (lambda a: F.poisson_nll_loss(a, pt, reduction=reduction), (xt,), np.exp(x) - p * x, None),
        (lambda a, v: F.gaussian_nll_loss(a, yt, v, reduction=reduction), (xt, pt),
         0.5 * (np.log(p) + (x - y) ** 2 / p), None),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kl_div's reduction='mean' warning
        for fn, args, ref, node in cases:
            out = fn(*args)
            assert_close(out, _reduce(ref, reduction))
            if node is not None:
                assert out.grad_fn.name() == node
            assert gradcheck(fn, args)


@pytest.mark.parametrize("device", DEVICES)
def test_loss_variants(device):
    x, y = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    p = RNG.uniform(0.1, 3.0, (3, 4))
    xt, yt, pt = T(x, device), T(y, device), T(p, device)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(xt, pt)
    assert_close(F.kl_div(xt, pt, reduction="batchmean"), (p * np.log(p) - p * x).sum() / 3)
    assert_close(nn.KLDivLoss(reduction="sum", log_target=True)(xt, yt), (np.exp(y) * (y - x)).sum())
    zero = T(np.zeros((3, 4)), device)
    assert_close(F.kl_div(xt, zero, reduction="sum"), 0.0)  # xlogy(0, 0) is 0
    # poisson full / not log_input
    stirling = np.where(p > 1, p * np.log(p) - p + 0.5 * np.log(2 * np.pi * p), 0)
    assert_close(F.poisson_nll_loss(xt, pt, full=True), (np.exp(x) - p * x + stirling).mean())
    assert_close(nn.PoissonNLLLoss(log_input=False, reduction="sum")(pt, xt.abs()),
                 (p - np.abs(x) * np.log(p + 1e-8)).sum())
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.poisson_nll_loss(xt, pt, reduction="foo")
    # gaussian: homoscedastic var, a float var, full, clamping
    v = RNG.uniform(0.5, 2.0, 3)
    ref = 0.5 * (np.log(v[:, None]) + (x - y) ** 2 / v[:, None])
    assert_close(F.gaussian_nll_loss(xt, yt, T(v, device)), ref.mean())
    assert_close(F.gaussian_nll_loss(xt, yt, T(v[:, None], device), reduction="sum"), ref.sum())
    assert_close(nn.GaussianNLLLoss(full=True)(xt, yt, T(v, device)), (ref + 0.5 * np.log(2 * np.pi)).mean())
    assert_close(F.gaussian_nll_loss(xt, yt, 2.0, reduction="none"), 0.5 * (np.log(2.0) + (x - y) ** 2 / 2.0))
    assert_close(F.gaussian_nll_loss(xt, yt, T(np.zeros((3, 4)), device)),
                 (0.5 * (np.log(1e-6) + (x - y) ** 2 / 1e-6)).mean())
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(xt, yt, -pt)
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(xt, yt, T(np.ones((2, 2)), device))
    # huber: weight, broadcasting warning, delta check
    w = RNG.uniform(0, 1, (3, 4))
    d = x - y
    huber = np.where(np.abs(d) < 1, 0.5 * d * d, np.abs(d) - 0.5)
    assert_close(F.huber_loss(xt, yt, weight=T(w, device)), (huber * w).mean())
    assert_close(nn.HuberLoss(reduction="sum", delta=1.0)(xt, yt), huber.sum())
    with pytest.warns(UserWarning, match="Using a target size"):
        F.huber_loss(xt, yt[0])
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values for delta."):
        F.huber_loss(xt, yt, delta=0.0)
    with pytest.raises(RuntimeError, match="margin_ranking_loss : All input tensors should have same dimension"):
        F.margin_ranking_loss(xt, yt, yt[0])
    assert_close(nn.SoftMarginLoss(reduction="sum")(xt, yt), np.log1p(np.exp(-x * y)).sum())
    assert_close(nn.MarginRankingLoss(0.1)(xt, yt, T(np.sign(y), device)), np.maximum(0, -np.sign(y) * (x - y) + 0.1).mean())
    assert_close(nn.HingeEmbeddingLoss()(xt, T(np.sign(y), device)), np.where(y > 0, x, np.maximum(0, 1 - x)).mean())
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert_close(F.soft_margin_loss(xt, yt, size_average=False), np.log1p(np.exp(-x * y)).sum())
    assert repr(nn.HuberLoss()) == "HuberLoss()" and nn.HingeEmbeddingLoss().margin == 1.0


@pytest.mark.parametrize("device", DEVICES)
def test_cosine_embedding_and_triplet(device):
    a, b, c = RNG.standard_normal((3, 5)), RNG.standard_normal((3, 5)), RNG.standard_normal((3, 5))
    tgt = np.array([1.0, -1.0, 1.0])
    at, bt, ct = (T(v, device, requires_grad=True) for v in (a, b, c))
    cos = (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12))
    ref = np.where(tgt == 1, 1 - cos, np.maximum(0, cos - 0.2))
    for reduction in ("none", "mean", "sum"):
        assert_close(F.cosine_embedding_loss(at, bt, T(tgt, device), margin=0.2, reduction=reduction),
                     _reduce(ref, reduction))
    assert_close(nn.CosineEmbeddingLoss()(at[0], bt[0], T(1.0, device)), 1 - cos[0])
    assert gradcheck(lambda u, v: F.cosine_embedding_loss(u, v, T(tgt, device), margin=-0.5), (at, bt))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected, multi-target not supported"):
        F.cosine_embedding_loss(at, bt, T(np.ones((3, 1)), device))
    with pytest.raises(RuntimeError, match=r"1D target tensor expects 2D input tensors, but found inputs with sizes "
                                           r"\[5\] and \[3, 5\]."):
        F.cosine_embedding_loss(at[0], bt, T(tgt, device))

    def dist(u, v, p=2.0):
        return (np.abs(u - v + 1e-6) ** p).sum(-1) ** (1 / p)

    ref = np.maximum(0, 1.0 + dist(a, b) - dist(a, c))
    assert_close(F.triplet_margin_loss(at, bt, ct, reduction="none"), ref)
    assert_close(nn.TripletMarginLoss(margin=0.5, p=1.0)(at, bt, ct), np.maximum(0, 0.5 + dist(a, b, 1) - dist(a, c, 1)).mean())
    swapped = np.maximum(0, 1.0 + dist(a, b) - np.minimum(dist(a, c), dist(b, c)))
    assert_close(F.triplet_margin_loss(at, bt, ct, swap=True, reduction="sum"), swapped.sum())
    assert gradcheck(lambda u, v, w: F.triplet_margin_loss(u, v, w, margin=3.0, swap=True), (at, bt, ct))
    with pytest.raises(ValueError, match="margin must be greater than 0, got 0"):
        F.triplet_margin_loss(at, bt, ct, margin=0)
    with pytest.raises(RuntimeError, match="anchor 2D, positive 1D, and negative 2D inputs"):
        F.triplet_margin_loss(at, bt[0], ct)
    assert repr(nn.TripletMarginLoss()) == "TripletMarginLoss()"
