"""conv1d / conv2d (csrc/conv.c, csrc/cuda/conv.cu) and nn.Conv1d / nn.Conv2d against a NumPy
reference convolution: every stride / padding / dilation / groups combination, padding strings,
unbatched inputs, dtypes, layouts, empty tensors, PyTorch's errors, gradients (gradcheck in
float64), second derivatives (create_graph, the WGAN-GP gradient penalty) against finite differences,
grad_fn names, padding modes, and a small CNN that trains."""
import math

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
import ctorch.nn.functional as F
from conftest import assert_close, to_numpy


# --- the NumPy oracle ----------------------------------------------------------------------------------------
def ref_conv2d(x, w, b=None, stride=(1, 1), pad_lo=(0, 0), pad_hi=None, dilation=(1, 1), groups=1):
    """Cross-correlation of x (N, C, H, W) with w (O, C / groups, kh, kw), in float64."""
    pad_hi = pad_lo if pad_hi is None else pad_hi
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + pad_lo[0] + pad_hi[0], wd + pad_lo[1] + pad_hi[1]))
    xp[:, :, pad_lo[0]:pad_lo[0] + h, pad_lo[1]:pad_lo[1] + wd] = x
    ho = (xp.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (xp.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, ho, wo))
    og = o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                r0, c0 = i * dilation[0], j * dilation[1]
                patch = xp[:, g * cg:(g + 1) * cg, r0:r0 + stride[0] * (ho - 1) + 1:stride[0],
                           c0:c0 + stride[1] * (wo - 1) + 1:stride[1]]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    if b is not None:
        out += np.asarray(b, np.float64)[None, :, None, None]
    return out


def ref_conv1d(x, w, b=None, stride=1, pad_lo=0, pad_hi=None, dilation=1, groups=1):
    pad_hi = pad_lo if pad_hi is None else pad_hi
    out = ref_conv2d(np.asarray(x)[:, :, None], np.asarray(w)[:, :, None], b, (1, stride), (0, pad_lo), (0, pad_hi),
                     (1, dilation), groups)
    return out[:, :, 0]


def T(a, device, dtype=ctorch.float64, requires_grad=False):
    return ctorch.tensor(np.asarray(a), dtype=dtype, device=device, requires_grad=requires_grad)


# (x shape, w shape, stride, padding, dilation, groups, bias)
CASES_2D = [
    pytest.param((2, 3, 6, 5), (4, 3, 3, 3), 1, 0, 1, 1, True, id="plain"),
    pytest.param((1, 4, 7, 6), (6, 2, 3, 2), (2, 1), (1, 2), (1, 2), 2, True, id="stride-pad-dil-groups"),
    pytest.param((2, 4, 5, 5), (4, 1, 3, 3), 2, 1, 1, 4, False, id="depthwise-nobias"),
    pytest.param((2, 3, 4, 4), (5, 3, 1, 1), 1, 0, 1, 1, True, id="1x1"),
    pytest.param((1, 2, 5, 4), (3, 2, 2, 3), (1, 2), 0, (2, 1), 1, True, id="rect-kernel"),
]
CASES_1D = [
    pytest.param((2, 3, 9), (4, 3, 3), 1, 0, 1, 1, True, id="plain"),
    pytest.param((2, 4, 10), (6, 2, 2), 3, 2, 2, 2, True, id="stride-pad-dil-groups"),
    pytest.param((1, 2, 5), (3, 2, 1), 1, 0, 1, 1, False, id="1x1-nobias"),
]


def pair(v):
    return tuple(v) if isinstance(v, tuple) else (v, v)


# --- forward against NumPy ------------------------------------------------------------------------------------
@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups,bias", CASES_2D)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_conv2d_matches_numpy(device, rng, dtype, xs, ws, stride, padding, dilation, groups, bias):
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    dt = getattr(ctorch, dtype)
    out = F.conv2d(T(x, device, dt), T(w, device, dt), T(b, device, dt) if bias else None, stride, padding, dilation,
                   groups)
    assert out.dtype == dt and out.device.type == device
    assert_close(out, ref_conv2d(x, w, b if bias else None, pair(stride), pair(padding), None, pair(dilation), groups))


@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups,bias", CASES_1D)
def test_conv1d_matches_numpy(device, rng, xs, ws, stride, padding, dilation, groups, bias):
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    out = F.conv1d(T(x, device), T(w, device), T(b, device) if bias else None, stride=stride, padding=padding,
                   dilation=dilation, groups=groups)
    assert_close(out, ref_conv1d(x, w, b if bias else None, stride, padding, None, dilation, groups))


def test_torch_aliases(rng):
    x, w = T(rng.standard_normal((1, 2, 5, 5)), "cpu"), T(rng.standard_normal((3, 2, 3, 3)), "cpu")
    assert ctorch.equal(ctorch.conv2d(x, w, None, 1, 1), F.conv2d(x, w, padding=1))
    assert ctorch.equal(ctorch.conv1d(x[:, :, 0], w[:, :, 0], stride=2), F.conv1d(x[:, :, 0], w[:, :, 0], None, 2))


@pytest.mark.parametrize("ks,dilation", [((3, 3), (1, 1)), ((4, 3), (1, 2)), ((2, 5), (3, 1))])
def test_padding_same_and_valid(device, rng, ks, dilation):
    x, w, b = rng.standard_normal((2, 2, 6, 7)), rng.standard_normal((3, 2) + ks), rng.standard_normal(3)
    total = [d * (k - 1) for d, k in zip(dilation, ks)]
    lo, hi = [t // 2 for t in total], [t - t // 2 for t in total]
    asymmetric = any(t % 2 for t in total)
    if asymmetric:  # PyTorch warns that it pads a copy of the input
        with pytest.warns(UserWarning, match="padding='same' with even kernel lengths"):
            out = F.conv2d(T(x, device), T(w, device), T(b, device), padding="same", dilation=dilation)
    else:
        out = F.conv2d(T(x, device), T(w, device), T(b, device), padding="same", dilation=dilation)
    assert out.shape == (2, 3, 6, 7)
    assert_close(out, ref_conv2d(x, w, b, (1, 1), lo, hi, dilation))
    valid = F.conv2d(T(x, device), T(w, device), None, 1, "valid", dilation)
    assert_close(valid, ref_conv2d(x, w, None, (1, 1), (0, 0), None, dilation))
    x1, w1 = x[:, :, 0], w[:, :, 0]
    t1 = dilation[1] * (ks[1] - 1)
    with pytest.warns(UserWarning) if t1 % 2 else _no_warning():
        out1 = F.conv1d(T(x1, device), T(w1, device), padding="same", dilation=dilation[1])
    assert_close(out1, ref_conv1d(x1, w1, None, 1, t1 // 2, t1 - t1 // 2, dilation[1]))


class _no_warning:
    def __enter__(self):
        import warnings
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


def test_unbatched(device, rng):
    x, w, b = rng.standard_normal((3, 5, 6)), rng.standard_normal((2, 3, 2, 3)), rng.standard_normal(2)
    xt = T(x, device, requires_grad=True)
    out = F.conv2d(xt, T(w, device), T(b, device), padding=1)
    assert out.shape == (2, 6, 6)
    assert type(out.grad_fn).__name__ == "SqueezeBackward1"
    assert_close(out, ref_conv2d(x[None], w, b, (1, 1), (1, 1))[0])
    out.sum().backward()
    assert xt.grad.shape == (3, 5, 6)
    out1 = F.conv1d(T(x[:, 0], device), T(w[:, :, 0], device), stride=2)
    assert out1.shape == (2, 2)
    assert_close(out1, ref_conv1d(x[None, :, 0], w[:, :, 0], None, 2)[0])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8"])
def test_dtypes(device, rng, dtype):
    # small integers: every product and sum is exact in each dtype
    x = rng.integers(0 if dtype == "uint8" else -2, 3, (2, 2, 5, 4))
    w = rng.integers(0 if dtype == "uint8" else -2, 3, (4, 1, 2, 2))
    b = rng.integers(0, 3, 4)
    dt = getattr(ctorch, dtype)
    out = F.conv2d(T(x, device, dt), T(w, device, dt), T(b, device, dt), 1, 1, 1, 2)
    assert out.dtype == dt
    np.testing.assert_array_equal(to_numpy(out).astype(np.float64), ref_conv2d(x, w, b, (1, 1), (1, 1), groups=2))
    if dt.is_floating_point:  # col2im and the GEMMs of the backward in this dtype
        xt = T(x, device, dt, requires_grad=True)
        wt = T(w, device, dt, requires_grad=True)
        F.conv2d(xt, wt, None, 1, 1, 1, 2).sum().backward()
        x64, w64 = T(x, device, requires_grad=True), T(w, device, requires_grad=True)
        F.conv2d(x64, w64, None, 1, 1, 1, 2).sum().backward()
        np.testing.assert_array_equal(to_numpy(xt.grad).astype(np.float64), to_numpy(x64.grad))
        np.testing.assert_array_equal(to_numpy(wt.grad).astype(np.float64), to_numpy(w64.grad))


def test_bool_refused(device):
    x, w = ctorch.ones(1, 2, 3, 3, dtype=ctorch.bool, device=device), ctorch.ones(1, 2, 2, 2, dtype=ctorch.bool,
                                                                                 device=device)
    with pytest.raises(NotImplementedError, match="\"slow_conv2d_(cpu|cuda)\" not implemented for 'Bool'"):
        F.conv2d(x, w)


def test_layouts(device, rng):
    x, w, b = rng.standard_normal((2, 3, 5, 6)), rng.standard_normal((4, 3, 2, 3)), rng.standard_normal(8)
    xt = T(np.ascontiguousarray(x.transpose(3, 2, 1, 0)), device).permute(3, 2, 1, 0)  # reversed strides
    wt = T(np.ascontiguousarray(w.transpose(0, 1, 3, 2)), device).transpose(2, 3)
    bt = T(b, device)[::2]  # strided bias
    assert not xt.is_contiguous() and not wt.is_contiguous()
    out = F.conv2d(xt, wt, bt, stride=(1, 2), padding=(0, 1))
    assert_close(out, ref_conv2d(x, w, b[::2], (1, 2), (0, 1)))


def test_empty(device, rng):
    w = T(rng.standard_normal((3, 2, 2, 2)), device, requires_grad=True)
    b = T(rng.standard_normal(3), device, requires_grad=True)
    x = T(np.zeros((0, 2, 4, 4)), device, requires_grad=True)
    out = F.conv2d(x, w, b)
    assert out.shape == (0, 3, 3, 3)
    out.sum().backward()
    assert_close(w.grad, np.zeros((3, 2, 2, 2)))
    assert_close(b.grad, np.zeros(3))
    # no input channels: the output is the bias
    out = F.conv2d(T(np.zeros((2, 0, 4, 4)), device), T(np.zeros((3, 0, 2, 2)), device), b, padding=1)
    assert_close(out, np.broadcast_to(to_numpy(b)[None, :, None, None], (2, 3, 5, 5)))
    # no width, padded
    assert_close(F.conv1d(T(np.zeros((1, 2, 0)), device), w[:, :, 0], b, padding=1),
                 np.broadcast_to(to_numpy(b)[None, :, None], (1, 3, 1)))


# --- gradients --------------------------------------------------------------------------------------------------
# (x shape, w shape, stride, padding, dilation, groups); every case has a bias
GRAD_CASES = [
    pytest.param((2, 2, 4, 4), (3, 2, 2, 2), 1, 0, 1, 1, id="plain"),
    pytest.param((1, 4, 5, 4), (4, 2, 2, 3), (2, 1), (1, 2), (2, 1), 2, id="stride-pad-dil-groups"),
    pytest.param((1, 2, 4, 5), (2, 2, 3, 2), 1, "same", (1, 2), 1, id="same-asymmetric"),
    pytest.param((2, 3, 6), (2, 3, 3), 2, 1, 2, 1, id="1d"),
    pytest.param((2, 5), (4, 2, 2), 1, "same", 1, 1, id="1d-unbatched-same"),
    pytest.param((2, 3, 3), (2, 2, 1, 1), 1, 0, 1, 1, id="2d-unbatched-1x1"),
]


@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups", GRAD_CASES)
def test_gradcheck(device, rng, xs, ws, stride, padding, dilation, groups):
    conv = F.conv1d if len(ws) == 3 else F.conv2d
    x = T(rng.standard_normal(xs), device, requires_grad=True)
    w = T(rng.standard_normal(ws), device, requires_grad=True)
    b = T(rng.standard_normal(ws[0]), device, requires_grad=True)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ctorch.autograd.gradcheck(lambda a, c, d: conv(a, c, d, stride, padding, dilation, groups), (x, w, b))


def test_grad_against_numpy(device, rng):
    """grad_input and grad_weight of sum(conv * G) from the NumPy oracle's own linearity."""
    x, w, b = rng.standard_normal((2, 4, 5, 6)), rng.standard_normal((6, 2, 3, 2)), rng.standard_normal(6)
    args = ((2, 1), (1, 1), (1, 2), 2)
    out = ref_conv2d(x, w, b, args[0], args[1], None, args[2], args[3])
    gout = rng.standard_normal(out.shape)
    xt, wt, bt = T(x, device, requires_grad=True), T(w, device, requires_grad=True), T(b, device, requires_grad=True)
    y = F.conv2d(xt, wt, bt, args[0], args[1], args[2], args[3])
    assert type(y.grad_fn).__name__ == "ConvolutionBackward0"
    y.backward(T(gout, device))
    # d/dx_k sum(conv(x) * G) = sum(conv(e_k) * G): a basis probe per input element is too slow, so
    # compare with the adjoint identity <conv(x), G> = <x, grad_x> (conv is linear in x without bias)
    lin = ref_conv2d(x, w, None, args[0], args[1], None, args[2], args[3])
    np.testing.assert_allclose(np.sum(to_numpy(xt.grad) * x), np.sum(lin * gout), rtol=1e-10)
    np.testing.assert_allclose(np.sum(to_numpy(wt.grad) * w), np.sum(lin * gout), rtol=1e-10)
    assert_close(bt.grad, gout.sum(axis=(0, 2, 3)))


def test_backward_is_deterministic(device, rng):
    x = T(rng.standard_normal((3, 4, 9, 9)), device, ctorch.float32, requires_grad=True)
    w = T(rng.standard_normal((8, 2, 3, 3)), device, ctorch.float32, requires_grad=True)
    grads = []
    for _ in range(2):
        x.grad = w.grad = None
        F.conv2d(x, w, None, 2, 2, 2, 2).sum().backward()
        grads.append((to_numpy(x.grad), to_numpy(w.grad)))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])


def test_grad_of_some_inputs(device, rng):
    x = T(rng.standard_normal((1, 2, 4, 4)), device)
    w = T(rng.standard_normal((3, 2, 2, 2)), device, requires_grad=True)
    b = T(rng.standard_normal(3), device)
    F.conv2d(x, w, b).sum().backward()
    assert w.grad.shape == (3, 2, 2, 2) and x.grad is None
    assert_close(w.grad, _grad_w_ones(to_numpy(x), (3, 2, 2, 2)))


def test_grad_of_input_alone_computes_no_weight_gradient(device, rng, monkeypatch):
    """autograd.grad(out, x) with a weight and bias that require grad asks the backward op for
    grad_input only (output mask 1) and leaves weight.grad / bias.grad None."""
    masks = []
    backward = ctorch._C._convolution_backward

    def spy(*args):
        masks.append(args[-1])
        return backward(*args)

    monkeypatch.setattr(ctorch._C, "_convolution_backward", spy)
    x = T(rng.standard_normal((2, 2, 5, 5)), device, requires_grad=True)
    w = T(rng.standard_normal((3, 2, 3, 3)), device, requires_grad=True)
    b = T(rng.standard_normal(3), device, requires_grad=True)
    gout = rng.standard_normal((2, 3, 3, 3))
    (gx,) = ctorch.autograd.grad(F.conv2d(x, w, b), x, T(gout, device))
    assert masks == [1] and w.grad is None and b.grad is None
    lin = ref_conv2d(to_numpy(x), to_numpy(w))
    np.testing.assert_allclose(np.sum(to_numpy(gx) * to_numpy(x)), np.sum(lin * gout), rtol=1e-10)
    (gw,) = ctorch.autograd.grad(F.conv2d(x, w, b), w, T(gout, device))
    assert masks == [1, 2] and x.grad is None
    np.testing.assert_allclose(np.sum(to_numpy(gw) * to_numpy(w)), np.sum(lin * gout), rtol=1e-10)


def _grad_w_ones(x, wshape):
    """grad of sum(conv2d(x, w)) w.r.t. w: the sum of the input window each tap sees."""
    o, c, kh, kw = wshape
    ho, wo = x.shape[2] - kh + 1, x.shape[3] - kw + 1
    g = np.zeros(wshape)
    for i in range(kh):
        for j in range(kw):
            g[:, :, i, j] = x[:, :, i:i + ho, j:j + wo].sum(axis=(0, 2, 3))[None, :]
    return g


# --- errors (PyTorch's types and messages) -------------------------------------------------------------------
def _x(*s):
    return ctorch.zeros(*s)


ERRORS = [
    (lambda: F.conv2d(_x(1, 4, 32, 32), _x(6, 3, 5, 5)), RuntimeError,
     "Given groups=1, weight of size [6, 3, 5, 5], expected input[1, 4, 32, 32] to have 3 channels, but got 4 "
     "channels instead"),
    (lambda: F.conv2d(_x(1, 3, 4, 4), _x(6, 3, 5, 5)), RuntimeError,
     "Calculated padded input size per channel: (4 x 4). Kernel size: (5 x 5). Kernel size can't be greater than "
     "actual input size"),
    (lambda: F.conv2d(_x(2, 3, 8), _x(6, 3, 5, 5)), RuntimeError,
     "Given groups=1, weight of size [6, 3, 5, 5], expected input[1, 2, 3, 8] to have 3 channels, but got 2 "
     "channels instead"),
    (lambda: F.conv2d(_x(4, 8), _x(6, 4, 3, 3)), RuntimeError,
     "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [4, 8]"),
    (lambda: F.conv1d(_x(4, 8, 8, 8), _x(6, 4, 3)), RuntimeError,
     "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: [4, 8, 8, 8]"),
    (lambda: F.conv2d(_x(2, 3, 8, 8), _x(6, 3, 5)), RuntimeError,
     "expected stride to be a single integer value or a list of 1 values to match the convolution dimensions, but "
     "got stride=[1, 1]"),
    (lambda: F.conv1d(_x(2, 4, 8), _x(6, 4, 3, 3)), RuntimeError,
     "Expected 4-dimensional input for 4-dimensional weight [6, 4, 3, 3], but got 3-dimensional input of size "
     "[2, 4, 8] instead"),
    (lambda: F.conv2d(_x(2, 3, 8, 8), _x(6, 3, 5, 5), stride=2, padding="same"), RuntimeError,
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv2d(_x(2, 3, 8, 8), _x(6, 3, 5, 5), padding="foo"), RuntimeError, "Invalid padding string: 'foo'"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), _x(6, 2, 3, 3), groups=3), RuntimeError,
     "Given groups=3, weight of size [6, 2, 3, 3], expected input[2, 4, 8, 8] to have 6 channels, but got 4 "
     "channels instead"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), _x(5, 2, 3, 3), groups=2), RuntimeError,
     "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size [[5, 2, 3, 3]] "
     "instead"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), _x(1, 4, 3, 3), groups=2), RuntimeError,
     "Given groups=2, expected weight to be at least 2 at dimension 0, but got weight of size [1, 4, 3, 3] instead"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), _x(6, 4, 3, 3), groups=0), RuntimeError, "non-positive groups is not supported"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), _x(6, 4, 3, 3), stride=0), RuntimeError, "non-positive stride is not supported"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), _x(6, 4, 3, 3), padding=(-1, 1)), RuntimeError,
     "negative padding is not supported"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), _x(6, 4, 3, 3), dilation=0), RuntimeError,
     "non-positive dilation is not supported"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), _x(6, 4, 3, 3), stride=(1, 2, 3)), RuntimeError,
     "expected stride to be a single integer value or a list of 2 values to match the convolution dimensions, but "
     "got stride=[1, 2, 3]"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), _x(6, 4, 3, 3), padding="same", stride=(1, 1, 1)), RuntimeError,
     "stride cannot broadcast to 2 dimensions"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), _x(6, 4, 3, 3), bias=_x(6, 1)), RuntimeError,
     "Given weight of size [6, 4, 3, 3], expected bias to be 1-dimensional with 6 elements, but got bias of size "
     "[6, 1] instead"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), _x(6, 4, 3, 3).double()), RuntimeError,
     "Input type (torch.FloatTensor) and weight type (torch.DoubleTensor) should be the same or input should be a "
     "MKLDNN tensor and weight is a dense tensor"),
    (lambda: F.conv2d(_x(2, 4, 8, 8).double(), _x(6, 4, 3, 3)), RuntimeError,
     "expected scalar type Double but found Float"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), _x(6, 4, 3, 3), _x(6).double()), RuntimeError,
     "Input type (float) and bias type (double) should be the same"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), 3), TypeError, "weight"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), _x(6, 4, 3, 3), stride=1.5), TypeError, "stride"),
    (lambda: F.conv2d(_x(2, 4, 8, 8), _x(6, 4, 3, 3), padding=None), TypeError, "padding"),
]


@pytest.mark.parametrize("fn,exc,msg", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(fn, exc, msg):
    with pytest.raises(exc) as info:
        fn()
    assert msg in str(info.value)


def test_device_mismatch_error(device):
    if device == "cpu":
        pytest.skip("needs a second device")
    with pytest.raises(RuntimeError, match=r"Input type \(torch.FloatTensor\) and weight type "
                                           r"\(torch.cuda.FloatTensor\) should be the same"):
        F.conv2d(_x(1, 2, 4, 4), _x(3, 2, 2, 2).cuda())
    with pytest.raises(RuntimeError, match=r"Input type \(torch.cuda.FloatTensor\) and bias type "
                                           r"\(torch.FloatTensor\) should be the same"):
        F.conv2d(_x(1, 2, 4, 4).cuda(), _x(3, 2, 2, 2).cuda(), _x(3))


# --- double backward --------------------------------------------------------------------------------------------
def _central_differences(fn, p, device, eps):
    """d fn() / d p by central differences, p's elements moved in place one at a time."""
    base = to_numpy(p)
    num = np.zeros(base.size)
    for k in range(base.size):
        for sign in (1, -1):
            pert = base.copy()
            pert.reshape(-1)[k] += sign * eps
            with ctorch.no_grad():
                p.copy_(T(pert, device))
            num[k] += sign * fn().item() / (2 * eps)
    with ctorch.no_grad():
        p.copy_(T(base, device))
    return num.reshape(base.shape)


def _check_second_order(f, params, device, rng, eps=1e-6):
    """With L = f(*params) and S = sum_i <V_i, dL/dp_i> (V random), dS/dp by double backward (create_graph)
    against central differences of S, which needs first derivatives only."""
    vs = [T(rng.standard_normal(tuple(p.shape)), device) for p in params]

    def s_of(create):
        grads = ctorch.autograd.grad(f(*params), params, create_graph=create)
        return sum((g * v).sum() for g, v in zip(grads, vs))

    analytic = ctorch.autograd.grad(s_of(True), params)
    for p, a in zip(params, analytic):
        np.testing.assert_allclose(to_numpy(a), _central_differences(lambda: s_of(False), p, device, eps), rtol=1e-5,
                                   atol=1e-6)


# (op, x shape, w shape, bias, keyword arguments)
DOUBLE_CASES = [
    pytest.param(F.conv1d, (2, 2, 5), (4, 1, 3), True, dict(stride=2, padding=1, dilation=2, groups=2), id="conv1d"),
    pytest.param(F.conv1d, (2, 5), (2, 2, 2), False, dict(padding="same"), id="conv1d-unbatched-same"),
    pytest.param(F.conv2d, (1, 2, 5, 5), (2, 1, 2, 2), True, dict(stride=2, padding=1, dilation=2, groups=2),
                 id="conv2d-bias"),
    pytest.param(F.conv2d, (1, 2, 5, 5), (2, 1, 2, 2), False, dict(stride=2, padding=1, dilation=2, groups=2),
                 id="conv2d-nobias"),
    pytest.param(F.conv2d, (1, 1, 4, 4), (2, 1, 3, 2), True, dict(padding="same", dilation=(1, 2)),
                 id="conv2d-same-asymmetric"),
    pytest.param(F.conv3d, (1, 2, 3, 3, 3), (2, 1, 2, 2, 2), True, dict(padding=1, stride=2, groups=2), id="conv3d"),
    pytest.param(F.conv_transpose2d, (1, 2, 3, 3), (2, 2, 2, 2), True, dict(stride=2, output_padding=1),
                 id="conv_transpose2d"),
    pytest.param(F.conv_transpose1d, (1, 2, 4), (2, 1, 3), True,
                 dict(stride=2, padding=1, output_padding=1, groups=2, dilation=2), id="conv_transpose1d-groups"),
]


@pytest.mark.parametrize("op,xs,ws,bias,kw", DOUBLE_CASES)
@pytest.mark.filterwarnings("ignore:Using padding='same'")
def test_double_backward(device, rng, op, xs, ws, bias, kw):
    """Second derivatives of a loss whose first derivatives depend on every argument (sum(y^2 G)):
    the recorded backward (ConvolutionBackwardBackward0, as PyTorch) differentiated again."""
    cout = ws[1] * kw.get("groups", 1) if op in (F.conv_transpose1d, F.conv_transpose2d) else ws[0]
    params = [T(rng.standard_normal(xs), device, requires_grad=True),
              T(rng.standard_normal(ws), device, requires_grad=True)]
    if bias:
        params.append(T(rng.standard_normal(cout), device, requires_grad=True))
    y = op(*params, **kw)
    gy = T(rng.standard_normal(tuple(y.shape)), device)

    def loss(x, w, b=None):
        return (op(x, w, b, **kw) ** 2 * gy).sum()

    gx = ctorch.autograd.grad(loss(*params), params[0], create_graph=True)[0]
    assert type(gx.grad_fn).__name__ == "ConvolutionBackwardBackward0"
    _check_second_order(loss, params, device, rng)


def test_double_backward_third_order(device, rng):
    """The double backward is itself recorded: d/dw of a second derivative against a central difference."""
    x = T(rng.standard_normal((1, 2, 4, 4)), device, requires_grad=True)
    w0 = rng.standard_normal((2, 2, 2, 2))
    v = T(rng.standard_normal((2, 2, 2, 2)), device)

    def second(w, create):
        (gx,) = ctorch.autograd.grad((F.conv2d(x, w, None, 2, 1) ** 3).sum(), x, create_graph=True)
        (hw,) = ctorch.autograd.grad((gx ** 2).sum(), w, create_graph=create)
        return (hw * v).sum()

    w = T(w0, device, requires_grad=True)
    (third,) = ctorch.autograd.grad(second(w, True), w)
    d = rng.standard_normal(w0.shape)
    eps = 1e-6
    num = (second(T(w0 + eps * d, device, requires_grad=True), False).item() -
           second(T(w0 - eps * d, device, requires_grad=True), False).item()) / (2 * eps)
    np.testing.assert_allclose(np.sum(to_numpy(third) * d), num, rtol=1e-5)


def test_gradient_penalty(device, rng):
    """WGAN-GP's penalty on a Conv2d -> ReLU -> Linear critic: the parameters' gradients of
    |d critic / d x|^2 (create_graph=True, then backward) against central differences."""
    ctorch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 2, 3, stride=2), nn.ReLU(), nn.Flatten(), nn.Linear(8, 1)).double().to(device)
    x = T(rng.standard_normal((2, 1, 5, 5)), device, requires_grad=True)

    def penalty():
        (g,) = ctorch.autograd.grad(net(x).sum(), x, create_graph=True)
        return (g.norm() ** 2)

    penalty().backward()
    assert net[0].weight.grad is not None and np.abs(to_numpy(net[0].weight.grad)).max() > 0
    for p in net.parameters():
        # the biases only move ReLU's kinks: no gradient (PyTorch gives the conv bias zeros, the Linear's None)
        got = np.zeros(tuple(p.shape)) if p.grad is None else to_numpy(p.grad)
        np.testing.assert_allclose(got, _central_differences(penalty, p, device, 1e-6), rtol=1e-5, atol=1e-7)


# --- modules ----------------------------------------------------------------------------------------------------
REPRS = [
    (lambda: nn.Conv2d(3, 6, 5), "Conv2d(3, 6, kernel_size=(5, 5), stride=(1, 1))"),
    (lambda: nn.Conv2d(3, 6, (5, 3), stride=2, padding=1, dilation=2, groups=3, bias=False, padding_mode="reflect"),
     "Conv2d(3, 6, kernel_size=(5, 3), stride=(2, 2), padding=(1, 1), dilation=(2, 2), groups=3, bias=False, "
     "padding_mode=reflect)"),
    (lambda: nn.Conv1d(3, 6, 5, padding="same"), "Conv1d(3, 6, kernel_size=(5,), stride=(1,), padding=same)"),
    (lambda: nn.Conv1d(3, 6, 5, padding="valid"), "Conv1d(3, 6, kernel_size=(5,), stride=(1,), padding=valid)"),
    (lambda: nn.Conv2d(2, 4, 3, padding=1, bias=False), "Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1), "
                                                        "padding=(1, 1), bias=False)"),
    (lambda: nn.Conv2d(2, 4, [3, 2], stride=(2, 1), padding=(0, 0)), "Conv2d(2, 4, kernel_size=(3, 2), "
                                                                     "stride=(2, 1))"),
]


@pytest.mark.parametrize("make,text", REPRS, ids=[str(i) for i in range(len(REPRS))])
def test_module_repr(make, text):
    assert repr(make()) == text


def test_module_parameters_and_init():
    ctorch.manual_seed(0)
    m = nn.Conv2d(4, 6, (3, 2), groups=2)
    assert m.weight.shape == (6, 2, 3, 2) and m.bias.shape == (6,)
    assert list(m.state_dict().keys()) == ["weight", "bias"]
    assert (m.in_channels, m.out_channels, m.kernel_size, m.stride, m.padding, m.dilation, m.groups) == \
        (4, 6, (3, 2), (1, 1), (0, 0), (1, 1), 2)
    assert m.transposed is False and m.output_padding == (0, 0) and m.padding_mode == "zeros"
    assert m._reversed_padding_repeated_twice == (0, 0, 0, 0)
    bound = 1 / math.sqrt(2 * 3 * 2)  # kaiming_uniform_(a=sqrt(5)) and the bias: U(-1/sqrt(fan_in), ..)
    for p in (m.weight, m.bias):
        v = to_numpy(p)
        assert np.all(np.abs(v) <= bound) and np.abs(v).max() > bound / 2
    assert nn.Conv1d(2, 3, 4, bias=False).bias is None
    assert nn.Conv2d(4, 6, (4, 3), padding="same", dilation=(1, 2))._reversed_padding_repeated_twice == [2, 2, 1, 2]
    m = nn.Conv1d(2, 3, 3, dtype=ctorch.float64)
    assert m.weight.dtype == ctorch.float64 and m.bias.dtype == ctorch.float64


MODULE_ERRORS = [
    (lambda: nn.Conv2d(3, 6, 5, padding_mode="foo"), "padding_mode must be one of {'circular', 'reflect', "
                                                     "'replicate', 'zeros'}, but got padding_mode='foo'"),
    (lambda: nn.Conv2d(3, 6, 5, groups=2), "in_channels must be divisible by groups"),
    (lambda: nn.Conv2d(4, 6, 5, groups=4), "out_channels must be divisible by groups"),
    (lambda: nn.Conv2d(4, 6, 5, groups=0), "groups must be a positive integer"),
    (lambda: nn.Conv2d(4, 6, 5, stride=2, padding="same"), "padding='same' is not supported for strided convolutions"),
    (lambda: nn.Conv2d(4, 6, 5, padding="foo"), "Invalid padding string 'foo', should be one of {'valid', 'same'}"),
]


@pytest.mark.parametrize("make,msg", MODULE_ERRORS, ids=[str(i) for i in range(len(MODULE_ERRORS))])
def test_module_errors(make, msg):
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == msg


def test_module_forward(device, rng):
    m = nn.Conv2d(2, 4, (3, 2), stride=(1, 2), padding=1, dtype=ctorch.float64, device=device)
    x = rng.standard_normal((2, 2, 5, 6))
    out = m(T(x, device))
    assert_close(out, ref_conv2d(x, to_numpy(m.weight), to_numpy(m.bias), (1, 2), (1, 1)))
    m1 = nn.Conv1d(2, 4, 3, padding="same", bias=False, dtype=ctorch.float64, device=device)
    x1, w1 = x[:, :, 0], to_numpy(m1.weight)
    assert_close(m1(T(x1, device)), ref_conv1d(x1, w1, None, 1, 1))
    assert_close(m1(T(x1[0], device)), ref_conv1d(x1[:1], w1, None, 1, 1)[0])


@pytest.mark.parametrize("mode,np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_padding_modes(device, rng, mode, np_mode):
    m = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode, dtype=ctorch.float64, device=device)
    x = rng.standard_normal((2, 2, 4, 5))
    xt = T(x, device, requires_grad=True)
    out = m(xt)
    assert type(out.grad_fn).__name__ == "ConvolutionBackward0"
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2)), mode=np_mode)
    assert_close(out, ref_conv2d(xp, to_numpy(m.weight), to_numpy(m.bias)))
    # the padding's backward folds the padded border's gradient back onto the input
    g = rng.standard_normal(out.shape)
    out.backward(T(g, device))
    lin = ref_conv2d(xp, to_numpy(m.weight))
    np.testing.assert_allclose(np.sum(to_numpy(xt.grad) * x), np.sum(lin * g), rtol=1e-10)
    m1 = nn.Conv1d(2, 3, 2, padding="same", padding_mode=mode, dtype=ctorch.float64, device=device)
    x1 = x[:, :, 0]
    with _no_warning():  # the module pads the input itself: no warning
        out1 = m1(T(x1, device))
    assert_close(out1, ref_conv1d(np.pad(x1, ((0, 0), (0, 0), (0, 1)), mode=np_mode), to_numpy(m1.weight),
                                  to_numpy(m1.bias)))


def test_padding_mode_errors():
    with pytest.raises(RuntimeError, match=r"Argument #6: Padding size should be less than the corresponding input "
                                           r"dimension, but got: padding \(2, 2\) at dimension 2 of input "
                                           r"\[1, 4, 2, 3\]"):
        nn.Conv2d(4, 6, 3, padding=2, padding_mode="reflect")(_x(1, 4, 2, 3))
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than once."):
        nn.Conv2d(4, 6, 3, padding=(1, 3), padding_mode="circular")(_x(1, 4, 4, 2))
    with pytest.raises(RuntimeError, match=r"Expected 2D or 3D \(batch mode\) tensor with possibly 0 batch size and "
                                           r"other non-zero dimensions for input, but got: \[1, 4, 0\]"):
        nn.Conv1d(4, 6, 3, padding=3, padding_mode="replicate")(_x(1, 4, 0))


def test_small_cnn_trains(device):
    """conv -> relu -> conv -> relu -> flatten -> linear on a toy task: the loss goes down."""
    ctorch.manual_seed(0)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 1, 6, 6)).astype(np.float32)
    y = (x[:, 0, :3].sum(axis=(1, 2)) > x[:, 0, 3:].sum(axis=(1, 2))).astype(np.int64)
    net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, stride=2), nn.ReLU(),
                        nn.Flatten(), nn.Linear(4 * 2 * 2, 2)).to(device)
    opt = ctorch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    xt, yt = ctorch.tensor(x, device=device), ctorch.tensor(y, device=device)
    losses = []
    for _ in range(25):
        opt.zero_grad()
        loss = F.cross_entropy(net(xt), yt)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.6 * losses[0], losses
