"""The 3-d spatial ops: conv3d / conv_transpose3d (csrc/conv.c's im2col + GEMM on the 3-d geometry,
csrc/cuda/conv.cu's movers) and nn.Conv3d / nn.ConvTranspose3d, against NumPy reference convolutions:
stride / padding (incl. 'same' / 'valid') / dilation / groups, padding modes, unbatched inputs, dtypes,
layouts, empty batches, PyTorch's errors, gradients (gradcheck in float64) and grad_fn names, modules'
parameters and reprs. Shapes are tiny: the emulated CUDA run is slow in 3-d."""
import itertools
import math

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
import ctorch.nn.functional as F
from conftest import assert_close, to_numpy


# --- the NumPy oracles -----------------------------------------------------------------------------------------
def ref_conv3d(x, w, b=None, stride=1, pad_lo=0, pad_hi=None, dilation=1, groups=1):
    """Cross-correlation of x (N, C, D, H, W) with w (O, C / groups, kd, kh, kw), in float64."""
    stride, pad_lo, dilation = triple(stride), triple(pad_lo), triple(dilation)
    pad_hi = pad_lo if pad_hi is None else triple(pad_hi)
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pad_lo[a], pad_hi[a]) for a in range(3)])
    o, cg = w.shape[:2]
    k = w.shape[2:]
    outs = [(xp.shape[2 + a] - dilation[a] * (k[a] - 1) - 1) // stride[a] + 1 for a in range(3)]
    out = np.zeros((x.shape[0], o, *outs))
    og = o // groups
    for g in range(groups):
        for t in itertools.product(*[range(v) for v in k]):
            sl = tuple(slice(t[a] * dilation[a], t[a] * dilation[a] + stride[a] * (outs[a] - 1) + 1, stride[a])
                       for a in range(3))
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            out[:, g * og:(g + 1) * og] += np.einsum("ncdhw,oc->nodhw", patch, w[(slice(g * og, (g + 1) * og),
                                                                                   slice(None)) + t])
    if b is not None:
        out += np.asarray(b, np.float64)[None, :, None, None, None]
    return out


def ref_conv_transpose3d(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 3-d convolution of x (N, C_in, D, H, W) with w (C_in, C_out / groups, kd, kh, kw): every input
    element scatters its kernel-weighted copy, then the padding is cropped."""
    stride, padding, output_padding, dilation = triple(stride), triple(padding), triple(output_padding), triple(dilation)
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    n, cin = x.shape[:2]
    cog = w.shape[1]
    k = w.shape[2:]
    full = [(x.shape[2 + a] - 1) * stride[a] + dilation[a] * (k[a] - 1) + 1 + output_padding[a] for a in range(3)]
    out = np.zeros((n, cog * groups, *full))
    cig = cin // groups
    for g in range(groups):
        xs = x[:, g * cig:(g + 1) * cig]
        for t in itertools.product(*[range(v) for v in k]):
            contrib = np.einsum("ncdhw,co->nodhw", xs, w[(slice(g * cig, (g + 1) * cig), slice(None)) + t])
            sl = tuple(slice(t[a] * dilation[a], t[a] * dilation[a] + stride[a] * (x.shape[2 + a] - 1) + 1,
                             stride[a]) for a in range(3))
            out[(slice(None), slice(g * cog, (g + 1) * cog)) + sl] += contrib
    out = out[(slice(None), slice(None)) + tuple(slice(padding[a], full[a] - padding[a]) for a in range(3))]
    if b is not None:
        out += np.asarray(b, np.float64)[None, :, None, None, None]
    return out


def triple(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v, v)


def T(a, device, dtype=ctorch.float64, requires_grad=False):
    return ctorch.tensor(np.asarray(a), dtype=dtype, device=device, requires_grad=requires_grad)


# (x shape, w shape, stride, padding, dilation, groups, bias)
CASES = [
    pytest.param((2, 2, 3, 4, 3), (3, 2, 2, 2, 2), 1, 0, 1, 1, True, id="plain"),
    pytest.param((1, 4, 4, 3, 5), (4, 2, 2, 1, 3), (2, 1, 2), (1, 0, 2), (1, 1, 2), 2, True, id="mixed-groups"),
    pytest.param((1, 2, 3, 3, 3), (2, 1, 3, 3, 3), 2, 1, 1, 2, False, id="depthwise-nobias"),
    pytest.param((2, 3, 2, 2, 3), (2, 3, 1, 1, 1), 1, 0, 1, 1, True, id="1x1x1"),
]


# --- conv3d -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups,bias", CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_conv3d_matches_numpy(device, rng, dtype, xs, ws, stride, padding, dilation, groups, bias):
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    dt = getattr(ctorch, dtype)
    out = F.conv3d(T(x, device, dt), T(w, device, dt), T(b, device, dt) if bias else None, stride, padding, dilation,
                   groups)
    assert out.dtype == dt and out.device.type == device
    assert_close(out, ref_conv3d(x, w, b if bias else None, stride, padding, None, dilation, groups), dtype)


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv3d_padding_strings(device, rng, padding):
    x, w = rng.standard_normal((1, 2, 4, 3, 5)), rng.standard_normal((2, 2, 3, 2, 2))
    with pytest.warns(UserWarning, match="padding='same'") if padding == "same" else _no_warning():
        out = F.conv3d(T(x, device), T(w, device), padding=padding, dilation=(1, 1, 2))
    if padding == "same":  # totals 2, 1, 2: the odd unit goes after
        expected = ref_conv3d(x, w, pad_lo=(1, 0, 1), pad_hi=(1, 1, 1), dilation=(1, 1, 2))
        assert out.shape == (1, 2, 4, 3, 5)
    else:
        expected = ref_conv3d(x, w, dilation=(1, 1, 2))
    assert_close(out, expected)


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_conv3d_unbatched_layouts_and_empty(device, rng):
    x, w, b = rng.standard_normal((2, 3, 4, 3)), rng.standard_normal((3, 2, 2, 2, 2)), rng.standard_normal(3)
    out = F.conv3d(T(x, device), T(w, device), T(b, device), padding=1)
    assert out.shape == (3, 4, 5, 4)
    assert_close(out, ref_conv3d(x[None], w, b, 1, 1)[0])
    # a non-contiguous input (the spatial dims permuted) and weight
    xt = T(np.ascontiguousarray(x.transpose(0, 3, 2, 1)), device).permute(0, 3, 2, 1)
    wt = T(np.ascontiguousarray(w.transpose(4, 3, 2, 1, 0)), device).permute(4, 3, 2, 1, 0)
    assert not xt.is_contiguous() and not wt.is_contiguous()
    assert_close(F.conv3d(xt, wt, None, 2), ref_conv3d(x[None], w, None, 2)[0])
    empty = F.conv3d(ctorch.zeros((0, 2, 3, 4, 3), dtype=ctorch.float64, device=device), T(w, device))
    assert empty.shape == (0, 3, 2, 3, 2)


def test_conv3d_integer_and_half(device, rng):
    x, w = rng.integers(-3, 4, (1, 2, 3, 3, 3)), rng.integers(-3, 4, (2, 2, 2, 2, 2))
    if device == "cpu":  # PyTorch's CPU convolves integers in 3-d
        out = F.conv3d(T(x, device, ctorch.int64), T(w, device, ctorch.int64))
        assert out.dtype == ctorch.int64
        np.testing.assert_array_equal(to_numpy(out), ref_conv3d(x, w).astype(np.int64))
    xh, wh = rng.standard_normal((1, 2, 3, 3, 3)), rng.standard_normal((2, 2, 2, 2, 2))
    out = F.conv3d(T(xh, device, ctorch.float16), T(wh, device, ctorch.float16))
    assert out.dtype == ctorch.float16
    xr = xh.astype(np.float16).astype(np.float64)
    wr = wh.astype(np.float16).astype(np.float64)
    np.testing.assert_allclose(to_numpy(out).astype(np.float64), ref_conv3d(xr, wr), rtol=1e-2, atol=2e-2)


@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups,bias", [
    pytest.param((1, 2, 2, 3, 2), (2, 1, 2, 2, 1), (1, 2, 1), (1, 0, 1), (1, 1, 2), 2, True, id="mixed-groups"),
])
def test_conv3d_gradcheck(device, rng, xs, ws, stride, padding, dilation, groups, bias):
    x = T(rng.standard_normal(xs), device, requires_grad=True)
    w = T(rng.standard_normal(ws), device, requires_grad=True)
    b = T(rng.standard_normal(ws[0]), device, requires_grad=True) if bias else None
    inputs = (x, w, b) if bias else (x, w)
    assert ctorch.autograd.gradcheck(
        lambda *a: F.conv3d(a[0], a[1], a[2] if bias else None, stride, padding, dilation, groups), inputs)
    assert F.conv3d(x, w, b, stride, padding, dilation, groups).grad_fn.name() == "ConvolutionBackward0"
    assert F.conv3d(x[0], w, b, stride, padding, dilation, groups).grad_fn.name() == "SqueezeBackward1"


CONV3D_ERRORS = [
    (lambda d: F.conv3d(ctorch.zeros((3, 3, 3), device=d), ctorch.zeros((1, 1, 1, 1, 1), device=d)), RuntimeError,
     "Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of size: [3, 3, 3]"),
    (lambda d: F.conv3d(ctorch.zeros((1, 2, 4, 4, 4), device=d), ctorch.zeros((3, 2, 5, 2, 2), device=d)),
     RuntimeError, "Calculated padded input size per channel: (4 x 4 x 4). Kernel size: (5 x 2 x 2). Kernel size "
     "can't be greater than actual input size"),
    (lambda d: F.conv3d(ctorch.zeros((1, 2, 4, 4, 4), device=d), ctorch.zeros((3, 2, 2, 2, 2), device=d),
                        stride=(1, 2)), RuntimeError,
     "expected stride to be a single integer value or a list of 3 values to match the convolution dimensions, but "
     "got stride=[1, 2]"),
    (lambda d: F.conv3d(ctorch.zeros((1, 2, 3, 3, 3), device=d), ctorch.zeros((2, 2, 2, 2, 2), device=d),
                        groups=3), RuntimeError,
     "Given groups=3, expected weight to be at least 3 at dimension 0, but got weight of size [2, 2, 2, 2, 2] "
     "instead"),
    (lambda d: F.conv3d(ctorch.zeros((1, 2, 3, 3, 3), device=d), ctorch.zeros((2, 2, 2, 2, 2), device=d),
                        ctorch.zeros(3, device=d)), RuntimeError,
     "Given weight of size [2, 2, 2, 2, 2], expected bias to be 1-dimensional with 2 elements, but got bias of size "
     "[3] instead"),
    (lambda d: F.conv3d(ctorch.zeros((1, 2, 3, 3, 3), device=d), ctorch.zeros((2, 2, 2, 2, 2), device=d),
                        padding=-1), RuntimeError, "negative padding is not supported"),
    (lambda d: F.conv3d(ctorch.zeros((1, 2, 3, 3, 3), device=d), ctorch.zeros((2, 2, 2, 2, 2), device=d),
                        stride=2, padding="same"), RuntimeError,
     "padding='same' is not supported for strided convolutions"),
]


@pytest.mark.parametrize("i", range(len(CONV3D_ERRORS)))
def test_conv3d_errors(device, i):
    fn, exc, msg = CONV3D_ERRORS[i]
    with pytest.raises(exc) as info:
        fn(device)
    assert str(info.value) == msg


def test_conv3d_cpu_only_errors():
    x, w = ctorch.zeros((1, 2, 4, 4, 4)), ctorch.zeros((3, 2, 2, 2, 2))
    with pytest.raises(NotImplementedError, match="\"compute_columns3d\" not implemented for 'Bool'"):
        F.conv3d(x.bool(), w.bool())
    with pytest.raises(RuntimeError, match="^expected scalar type Float but found Double$"):
        F.conv3d(x, w.double())
    with pytest.raises(RuntimeError, match=r"^kernel size should be greater than zero, but got: 0 x 2 x 2 \(TxHxW\)$"):
        F.conv3d(x, ctorch.zeros((3, 2, 0, 2, 2)))


# --- conv_transpose3d -------------------------------------------------------------------------------------------
# (x shape, w shape, stride, padding, output_padding, groups, dilation, bias)
TCASES = [
    pytest.param((2, 2, 2, 3, 2), (2, 3, 2, 2, 2), 1, 0, 0, 1, 1, True, id="plain"),
    pytest.param((1, 4, 2, 2, 3), (4, 1, 2, 3, 2), (2, 1, 2), (1, 1, 0), (1, 0, 1), 2, (1, 2, 1), True,
                 id="mixed-groups"),
    pytest.param((1, 2, 2, 2, 2), (2, 2, 1, 1, 1), 2, 0, 1, 1, 1, False, id="1x1x1-stride"),
]


@pytest.mark.parametrize("xs,ws,stride,padding,output_padding,groups,dilation,bias", TCASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_conv_transpose3d_matches_numpy(device, rng, dtype, xs, ws, stride, padding, output_padding, groups,
                                        dilation, bias):
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[1] * groups)
    dt = getattr(ctorch, dtype)
    out = F.conv_transpose3d(T(x, device, dt), T(w, device, dt), T(b, device, dt) if bias else None, stride, padding,
                             output_padding, groups, dilation)
    assert out.dtype == dt
    assert_close(out, ref_conv_transpose3d(x, w, b if bias else None, stride, padding, output_padding, groups,
                                           dilation), dtype)


@pytest.mark.parametrize("xs,ws,stride,padding,output_padding,groups,dilation,bias", [
    pytest.param((1, 2, 2, 1, 2), (2, 1, 2, 1, 2), (2, 1, 1), (1, 0, 0), (1, 0, 0), 2, (1, 1, 2), True,
                 id="mixed-groups"),
])
def test_conv_transpose3d_gradcheck(device, rng, xs, ws, stride, padding, output_padding, groups, dilation, bias):
    x = T(rng.standard_normal(xs), device, requires_grad=True)
    w = T(rng.standard_normal(ws), device, requires_grad=True)
    b = T(rng.standard_normal(ws[1] * groups), device, requires_grad=True)

    def fn(x, w, b):
        return F.conv_transpose3d(x, w, b, stride, padding, output_padding, groups, dilation)

    assert ctorch.autograd.gradcheck(fn, (x, w, b))
    assert fn(x, w, b).grad_fn.name() == "ConvolutionBackward0"
    assert F.conv_transpose3d(x[0], w).grad_fn.name() == "SqueezeBackward1"


def test_conv_transpose3d_unbatched_integer_and_errors(device, rng):
    x, w = rng.standard_normal((2, 2, 2, 2)), rng.standard_normal((2, 3, 2, 2, 2))
    out = F.conv_transpose3d(T(x, device), T(w, device), stride=2)
    assert out.shape == (3, 4, 4, 4)
    assert_close(out, ref_conv_transpose3d(x[None], w, stride=2)[0])
    if device == "cpu":  # PyTorch's CPU runs the integer dtypes in 3-d
        xi, wi = rng.integers(-3, 4, (1, 2, 2, 2, 2)), rng.integers(-3, 4, (2, 3, 2, 2, 2))
        out = F.conv_transpose3d(T(xi, device, ctorch.int64), T(wi, device, ctorch.int64))
        np.testing.assert_array_equal(to_numpy(out), ref_conv_transpose3d(xi, wi).astype(np.int64))
    xz, wz = ctorch.zeros((1, 2, 4, 4, 4), device=device), ctorch.zeros((2, 3, 2, 2, 2), device=device)
    with pytest.raises(RuntimeError) as info:
        F.conv_transpose3d(xz, wz, stride=2, output_padding=2)
    assert str(info.value) == (
        "output padding must be smaller than either stride or dilation, but got output_padding_depth: 2 "
        "output_padding_height: 2 output_padding_width: 2 stride_depth: 2 stride_height: 2 stride_width: 2 "
        "dilation_depth: 1 dilation_height: 1 dilation_width: 1")
    with pytest.raises(RuntimeError) as info:
        F.conv_transpose3d(xz, wz, padding=3)
    assert str(info.value) == ("Given input size per channel: (4 x 4 x 4). Calculated output size per channel: "
                               "(-1 x -1 x -1). Output size is too small")


# --- nn.Conv3d / nn.ConvTranspose3d -----------------------------------------------------------------------------
def test_conv3d_module_parameters_and_repr():
    m = nn.Conv3d(2, 4, 3, padding=1, groups=2, bias=False, padding_mode="reflect")
    assert repr(m) == ("Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1), groups=2, "
                       "bias=False, padding_mode=reflect)")
    assert m.weight.shape == (4, 1, 3, 3, 3) and m.bias is None
    t = nn.ConvTranspose3d(2, 4, (1, 2, 3), stride=2, output_padding=1)
    assert repr(t) == "ConvTranspose3d(2, 4, kernel_size=(1, 2, 3), stride=(2, 2, 2), output_padding=(1, 1, 1))"
    assert {k: tuple(v.shape) for k, v in t.state_dict().items()} == {"weight": (2, 4, 1, 2, 3), "bias": (4,)}
    bound = 1 / np.sqrt(2 * 1 * 2 * 3)  # kaiming_uniform(a=sqrt(5)) and the bias: U(-1/sqrt(fan_in), ...)
    assert np.abs(to_numpy(t.weight.detach())).max() <= bound and np.abs(to_numpy(t.bias.detach())).max() <= bound


@pytest.mark.parametrize("mode,np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_conv3d_module_padding_modes(device, rng, mode, np_mode):
    m = nn.Conv3d(2, 3, (2, 3, 2), padding=(1, 1, 2), padding_mode=mode, dtype=ctorch.float64, device=device)
    x = rng.standard_normal((1, 2, 3, 3, 4))
    out = m(T(x, device))
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1), (2, 2)], mode=np_mode)
    assert_close(out, ref_conv3d(xp, to_numpy(m.weight.detach()), to_numpy(m.bias.detach())))


def test_conv_transpose3d_module_output_size(device, rng):
    m = nn.ConvTranspose3d(2, 3, 2, stride=2, dtype=ctorch.float64, device=device)
    x = rng.standard_normal((1, 2, 2, 2, 2))
    out = m(T(x, device), output_size=(5, 4, 5))
    assert out.shape == (1, 3, 5, 4, 5)
    expected = ref_conv_transpose3d(x, to_numpy(m.weight.detach()), to_numpy(m.bias.detach()), 2, 0, (1, 0, 1))
    assert_close(out, expected)


# --- the 3-d padding modules (F.pad on 5-D input) ---------------------------------------------------------------
PADS3D = [
    pytest.param(lambda: nn.ConstantPad3d((1, 2, 0, 1, 1, 0), 3.5), dict(mode="constant", constant_values=3.5),
                 "ConstantPadNdBackward0", "ConstantPad3d(padding=(1, 2, 0, 1, 1, 0), value=3.5)", id="constant"),
    pytest.param(lambda: nn.ZeroPad3d((1, 2, 0, 1, 1, 0)), dict(mode="constant"), "ConstantPadNdBackward0",
                 "ZeroPad3d((1, 2, 0, 1, 1, 0))", id="zero"),
    pytest.param(lambda: nn.ReflectionPad3d((1, 2, 0, 1, 1, 0)), dict(mode="reflect"), "ReflectionPad3DBackward0",
                 "ReflectionPad3d((1, 2, 0, 1, 1, 0))", id="reflect"),
    pytest.param(lambda: nn.ReplicationPad3d((1, 2, 0, 1, 1, 0)), dict(mode="edge"), "ReplicationPad3DBackward0",
                 "ReplicationPad3d((1, 2, 0, 1, 1, 0))", id="replicate"),
    pytest.param(lambda: nn.CircularPad3d((1, 2, 0, 1, 1, 0)), dict(mode="wrap"), "torch::autograd::CopySlices",
                 "CircularPad3d((1, 2, 0, 1, 1, 0))", id="circular"),
]


@pytest.mark.parametrize("make,np_kw,node,text", PADS3D)
def test_padding3d_modules(device, rng, make, np_kw, node, text):
    m = make()
    assert repr(m) == text
    x = rng.standard_normal((2, 1, 2, 3, 3))
    xt = T(x, device, requires_grad=True)
    out = m(xt)
    assert_close(out, np.pad(x, [(0, 0), (0, 0), (1, 0), (0, 1), (1, 2)], **np_kw))
    assert out.grad_fn.name() == node
    assert_close(m(T(x[0], device)), np.pad(x[0], [(0, 0), (1, 0), (0, 1), (1, 2)], **np_kw))  # unbatched
    if node != "ConstantPadNdBackward0":
        with pytest.raises(NotImplementedError, match="^Padding size 6 is not supported for 3D input tensor"):
            F.pad(T(x[0, 0], device), (1,) * 6, np_kw["mode"].replace("edge", "replicate").replace("wrap", "circular"))


def test_padding3d_module_errors():
    assert repr(nn.ReplicationPad3d(2)) == "ReplicationPad3d((2, 2, 2, 2, 2, 2))"
    with pytest.raises(ValueError, match=r"^expected 4D or 5D input \(got 3D input\)$"):
        nn.CircularPad3d(1)(ctorch.zeros((2, 3, 3)))
    with pytest.raises(ValueError, match=r"^expected 3D or 4D input \(got 2D input\)$"):
        nn.CircularPad2d(1)(ctorch.zeros((2, 3)))
    with pytest.raises(RuntimeError) as info:
        nn.ReflectionPad3d(2)(ctorch.zeros((1, 1, 2, 3, 3)))
    assert str(info.value) == ("Argument #8: Padding size should be less than the corresponding input dimension, but "
                               "got: padding (2, 2) at dimension 2 of input [1, 1, 2, 3, 3]")


# --- 3-d pooling --------------------------------------------------------------------------------------------------
def _out_size(n, k, s, p, d, ceil_mode):
    o = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def ref_max_pool3d(x, k, s, p, d, ceil_mode=False):
    """(values, indices) of a max pool over the last three dims of x (N, C, T, H, W); first maximum wins."""
    k, s, p, d = triple(k), triple(s), triple(p), triple(d)
    ins = x.shape[2:]
    outs = [_out_size(ins[a], k[a], s[a], p[a], d[a], ceil_mode) for a in range(3)]
    vals = np.zeros(x.shape[:2] + tuple(outs), x.dtype)
    idx = np.zeros(vals.shape, np.int64)
    for o in itertools.product(*[range(v) for v in outs]):
        pos = [[q for q in range(o[a] * s[a] - p[a], o[a] * s[a] - p[a] + (k[a] - 1) * d[a] + 1, d[a])
                if 0 <= q < ins[a]] for a in range(3)]
        flat = [(t * ins[1] + h) * ins[2] + w for t in pos[0] for h in pos[1] for w in pos[2]]
        win = x.reshape(x.shape[:2] + (-1,))[:, :, flat]
        arg = np.argmax(win, axis=-1)
        vals[(slice(None), slice(None)) + o] = np.take_along_axis(win, arg[..., None], -1)[..., 0]
        idx[(slice(None), slice(None)) + o] = np.asarray(flat)[arg]
    return vals, idx


def ref_avg_pool3d(x, k, s, p, ceil_mode=False, count_include_pad=True, divisor_override=None):
    k, s, p = triple(k), triple(s), triple(p)
    ins = x.shape[2:]
    outs = [_out_size(ins[a], k[a], s[a], p[a], 1, ceil_mode) for a in range(3)]
    out = np.zeros(x.shape[:2] + tuple(outs))
    for o in itertools.product(*[range(v) for v in outs]):
        lo = [o[a] * s[a] - p[a] for a in range(3)]
        hi = [min(lo[a] + k[a], ins[a] + p[a]) for a in range(3)]
        padded = np.prod([hi[a] - lo[a] for a in range(3)])
        lo = [max(v, 0) for v in lo]
        hi = [min(hi[a], ins[a]) for a in range(3)]
        win = x[:, :, lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]]
        div = divisor_override or (padded if count_include_pad else win[0, 0].size)
        out[(slice(None), slice(None)) + o] = win.sum(axis=(2, 3, 4)) / div
    return out


def ref_adaptive3d(x, size, reduce):
    ins = x.shape[2:]
    out = np.zeros(x.shape[:2] + tuple(size))
    for o in itertools.product(*[range(v) for v in size]):
        sl = tuple(slice(o[a] * ins[a] // size[a], -(-(o[a] + 1) * ins[a] // size[a])) for a in range(3))
        out[(slice(None), slice(None)) + o] = reduce(x[(slice(None), slice(None)) + sl], axis=(2, 3, 4))
    return out


# (kernel, stride, padding, dilation, ceil_mode)
MAX3D = [
    pytest.param(2, None, 0, 1, False, id="plain"),
    pytest.param((2, 3, 2), (1, 2, 2), (1, 1, 0), (1, 1, 2), True, id="mixed-ceil"),
]


@pytest.mark.parametrize("k,s,p,d,ceil_mode", MAX3D)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_max_pool3d_matches_numpy(device, rng, dtype, k, s, p, d, ceil_mode):
    x = rng.standard_normal((2, 2, 3, 5, 6))
    dt = getattr(ctorch, dtype)
    out, idx = F.max_pool3d(T(x, device, dt), k, s, p, d, ceil_mode, return_indices=True)
    ev, ei = ref_max_pool3d(x.astype(dtype), k, k if s is None else s, p, d, ceil_mode)
    assert out.dtype == dt and idx.dtype == ctorch.int64
    assert_close(out, ev, dtype)
    np.testing.assert_array_equal(to_numpy(idx), ei)
    assert_close(nn.MaxPool3d(k, s, p, d, ceil_mode=ceil_mode)(T(x[0], device, dt)), ev[0], dtype)  # unbatched


# (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
AVG3D = [
    pytest.param(2, None, 0, False, True, None, id="plain"),
    pytest.param((3, 2, 3), (2, 1, 2), (1, 1, 1), True, False, None, id="ceil-exclude-pad"),
    pytest.param((2, 3, 2), 1, (1, 0, 1), False, True, 5, id="divisor"),
]


@pytest.mark.parametrize("k,s,p,ceil_mode,cip,div", AVG3D)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_avg_pool3d_matches_numpy(device, rng, dtype, k, s, p, ceil_mode, cip, div):
    x = rng.standard_normal((2, 2, 4, 4, 5))
    dt = getattr(ctorch, dtype)
    out = F.avg_pool3d(T(x, device, dt), k, s, p, ceil_mode, cip, div)
    assert out.dtype == dt
    expected = ref_avg_pool3d(x, k, k if s is None else s, p, ceil_mode, cip, div)
    assert_close(out, expected, dtype)
    m = nn.AvgPool3d(k, s, p, ceil_mode, cip, div)
    assert_close(m(T(x[1], device, dt)), expected[1], dtype)  # unbatched


@pytest.mark.parametrize("size,resolved", [((2, 3, 1), (2, 3, 1)), ((None, 2, 4), (3, 2, 4)), (1, (1, 1, 1))])
def test_adaptive_pool3d_matches_numpy(device, rng, size, resolved):
    x = rng.standard_normal((2, 2, 3, 5, 7))
    out = F.adaptive_avg_pool3d(T(x, device), size)
    assert_close(out, ref_adaptive3d(x, resolved, np.mean))
    mx, idx = F.adaptive_max_pool3d(T(x, device), size, return_indices=True)
    assert_close(mx, ref_adaptive3d(x, resolved, np.max))
    flat = x.reshape(2, 2, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, to_numpy(idx).reshape(2, 2, -1), -1).reshape(mx.shape),
                                  to_numpy(mx))
    assert_close(nn.AdaptiveAvgPool3d(size)(T(x[0], device)), ref_adaptive3d(x[:1], resolved, np.mean)[0])


def test_pool3d_dtypes(device, rng):
    x = rng.integers(-50, 50, (1, 2, 3, 4, 4))
    out = F.max_pool3d(T(x, device, ctorch.int64), 2)
    assert out.dtype == ctorch.int64
    np.testing.assert_array_equal(to_numpy(out), ref_max_pool3d(x, 2, 2, 0, 1)[0])
    xh = rng.standard_normal((1, 2, 3, 4, 4)).astype(np.float16)
    out = F.max_pool3d(T(xh, device, ctorch.float16), 2)
    assert out.dtype == ctorch.float16
    np.testing.assert_array_equal(to_numpy(out), ref_max_pool3d(xh, 2, 2, 0, 1)[0])
    out = F.adaptive_avg_pool3d(T(xh, device, ctorch.float16), (2, 3, 2))
    assert out.dtype == ctorch.float16
    np.testing.assert_allclose(to_numpy(out).astype(np.float64), ref_adaptive3d(xh.astype(np.float64), (2, 3, 2),
                                                                                np.mean), rtol=2e-3, atol=2e-3)
    if device == "cpu":  # PyTorch's CPU average takes float, double and long only
        out = F.avg_pool3d(T(x, device, ctorch.int64), 2)
        assert out.dtype == ctorch.int64
        with pytest.raises(NotImplementedError, match="\"avg_pool3d_out_frame\" not implemented for 'Half'"):
            F.avg_pool3d(T(xh, device, ctorch.float16), 2)
        with pytest.raises(NotImplementedError, match="\"adaptive_avg_pool3d_cpu\" not implemented for 'Long'"):
            F.adaptive_avg_pool3d(T(x, device, ctorch.int64), 2)
        with pytest.raises(NotImplementedError, match="\"max_pool3d\" not implemented for 'Bool'"):
            F.max_pool3d(T(x, device, ctorch.bool), 2)


POOL3D_GRADS = [
    pytest.param(lambda x: F.max_pool3d(x, (2, 2, 1), (1, 2, 1), (1, 0, 0), ceil_mode=True),
                 "MaxPool3DWithIndicesBackward0", "MaxPool3DWithIndicesBackwardBackward0", id="max"),
    pytest.param(lambda x: F.avg_pool3d(x, (2, 3, 2), 1, (1, 1, 0), count_include_pad=False),
                 "AvgPool3DBackward0", "AvgPool3DBackwardBackward0", id="avg"),
    pytest.param(lambda x: F.adaptive_avg_pool3d(x, (2, 2, 3)), "AdaptiveAvgPool3DBackward0",
                 "AdaptiveAvgPool3DBackwardBackward0", id="adaptive-avg"),
    pytest.param(lambda x: F.adaptive_max_pool3d(x, (2, 1, 2)), "AdaptiveMaxPool3DBackward0",
                 "AdaptiveMaxPool3DBackwardBackward0", id="adaptive-max"),
    pytest.param(lambda x: F.adaptive_avg_pool3d(x, 1), "MeanBackward1", None, id="adaptive-avg-1"),
]


@pytest.mark.parametrize("fn,node,node2", POOL3D_GRADS)
def test_pool3d_gradcheck_and_names(device, rng, fn, node, node2):
    # distinct values: a max's gradient is not differentiable where two elements tie
    x = T(rng.permutation(36).reshape(1, 1, 3, 3, 4) / 7.0, device, requires_grad=True)
    assert ctorch.autograd.gradcheck(fn, (x,))
    y = fn(x)
    assert y.grad_fn.name() == node
    if node2 is not None:
        (g,) = ctorch.autograd.grad(y, x, ctorch.ones_like(y, requires_grad=True), create_graph=True)
        assert g.grad_fn.name() == node2
        # the backward is linear in grad_output: its own gradient checked numerically
        go = T(rng.standard_normal(tuple(y.shape)), device, requires_grad=True)
        def backward(go):
            with ctorch.enable_grad():
                return ctorch.autograd.grad(fn(x), x, go, create_graph=True)[0]

        assert ctorch.autograd.gradcheck(backward, (go,))


POOL3D_ERRORS = [
    (lambda x: F.max_pool3d(x[0, 0], 2), "non-empty 4D or 5D (batch mode) tensor expected for input"),
    (lambda x: F.max_pool3d(x, (2, 2)), "max_pool3d: kernel_size must either be a single int, or a tuple of three ints"),
    (lambda x: F.max_pool3d(x, 2, padding=2),
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1"),
    (lambda x: F.max_pool3d(x, 4), "Given input size: (2x3x4x4). Calculated output size: (2x0x1x1). Output size is too "
     "small"),
    (lambda x: F.max_pool3d(x, 2, dilation=(1, 0, 1)),
     "dilation should be greater than zero, but got dilationT: 1 dilationH: 0 dilationW: 1"),
    # PyTorch keeps the lists in ints: a value past INT_MAX (list by list, before the input's rank)
    (lambda x: F.max_pool3d(x, 2 ** 31), "value cannot be converted to type int without overflow"),
    (lambda x: F.max_pool3d(x, (2, 2, -2 ** 31 - 1)), "value cannot be converted to type int without overflow"),
    (lambda x: F.max_pool3d(x, 2, 2 ** 31), "value cannot be converted to type int without overflow"),
    (lambda x: F.max_pool3d(x, 2, padding=2 ** 31, return_indices=True),
     "value cannot be converted to type int without overflow"),
    (lambda x: F.max_pool3d(x, 2, dilation=(1, 2 ** 31, 1)), "value cannot be converted to type int without overflow"),
    (lambda x: F.max_pool3d(x[0], 2 ** 31, (1, 2)), "value cannot be converted to type int without overflow"),
    (lambda x: F.max_pool3d(x, 2, (1, 2), dilation=2 ** 31),
     "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints"),
    (lambda x: F.avg_pool3d(x, (2, 2)), "avg_pool3d: kernel_size must be a single int, or a tuple of three ints"),
    (lambda x: F.avg_pool3d(x, 4), "input image (T: 3 H: 4 W: 4) smaller than kernel size (kT: 4 kH: 4 kW: 4)"),
    (lambda x: F.avg_pool3d(x, 2, divisor_override=0), "divisor must be not zero"),
    (lambda x: F.avg_pool3d(x[:, :0], 2), "avg_pool3d(): Expected input to have non-zero size for non-batch "
     "dimensions, but input has sizes [1, 0, 3, 4, 4] with dimension 1 being empty"),
    (lambda x: F.adaptive_avg_pool3d(x[0, 0], 2), "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got [3, 4, 4]"),
    (lambda x: F.adaptive_max_pool3d(x[0, 0], 2),
     "adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: [3, 4, 4]"),
    (lambda x: F.adaptive_avg_pool3d(x, (2, 2)), "adaptive_avg_pool3d: output_size must be 3"),
    (lambda x: F.adaptive_max_pool3d(x, (2, 2)), "adaptive_max_pool3d(): internal error: output_size.size() must be 3"),
    (lambda x: F.adaptive_avg_pool3d(x, (2, -1, 2)), "adaptive_avg_pool3d: elements of output_size must be greater "
     "than or equal to 0 but received {2, -1,2}"),
    (lambda x: F.adaptive_max_pool3d(x[:, :, :0], 2), "adaptive_max_pool3d(): Expected input to have non-zero size for "
     "non-batch dimensions, but input has sizes [1, 2, 0, 4, 4] with dimension 2 being empty"),
]


@pytest.mark.parametrize("i", range(len(POOL3D_ERRORS)))
def test_pool3d_errors(i):
    fn, msg = POOL3D_ERRORS[i]
    with pytest.raises(RuntimeError) as info:
        fn(ctorch.zeros((1, 2, 3, 4, 4)))
    assert str(info.value) == msg


def test_pool3d_module_reprs_and_empty_batch():
    assert repr(nn.MaxPool3d(2)) == "MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.MaxPool3d((1, 2, 3), stride=1, dilation=2, return_indices=True, ceil_mode=True)) == (
        "MaxPool3d(kernel_size=(1, 2, 3), stride=1, padding=0, dilation=2, ceil_mode=True)")
    assert repr(nn.AvgPool3d(3, 2, 1, True, False, 2)) == "AvgPool3d(kernel_size=3, stride=2, padding=1)"
    assert repr(nn.AdaptiveAvgPool3d((1, None, 2))) == "AdaptiveAvgPool3d(output_size=(1, None, 2))"
    assert repr(nn.AdaptiveMaxPool3d(2)) == "AdaptiveMaxPool3d(output_size=2)"
    out, idx = nn.AdaptiveMaxPool3d(2, return_indices=True)(ctorch.zeros((1, 1, 2, 2, 2)))
    assert idx.shape == (1, 1, 2, 2, 2)
    assert F.max_pool3d(ctorch.zeros((0, 2, 3, 3, 3)), 2).shape == (0, 2, 1, 1, 1)


# --- F.interpolate of 5-D input ---------------------------------------------------------------------------------
def test_interpolate_area_5d(device, rng):
    x = rng.standard_normal((1, 2, 3, 4, 5))
    xt = T(x, device, requires_grad=True)
    out = F.interpolate(xt, size=(2, 3, 2), mode="area")  # PyTorch: adaptive_avg_pool3d
    assert_close(out, ref_adaptive3d(x, (2, 3, 2), np.mean))
    assert out.grad_fn.name() == "AdaptiveAvgPool3DBackward0"
    out = F.interpolate(xt, scale_factor=0.5, mode="area")  # the size recomputed: int(3 * .5), ...
    assert_close(out, ref_adaptive3d(x, (1, 2, 2), np.mean))


# (mode, input shape, kwargs): sizes and scale factors up and down, align_corners both ways
INTERP5D = [
    pytest.param("nearest", (1, 2, 3, 4, 5), dict(scale_factor=(1.5, 0.5, 2)), id="nearest-scales"),
    pytest.param("nearest", (2, 1, 2, 3, 4), dict(size=(4, 7, 3)), id="nearest-size"),
    pytest.param("nearest-exact", (1, 2, 3, 4, 5), dict(size=(5, 3, 7)), id="exact-size"),
    pytest.param("trilinear", (1, 2, 3, 4, 5), dict(scale_factor=(0.6, 1.7, 2.0)), id="tri-scales"),
    pytest.param("trilinear", (1, 2, 3, 4, 5), dict(size=(2, 7, 3), align_corners=True), id="tri-align"),
    pytest.param("trilinear", (2, 1, 3, 2, 4), dict(scale_factor=1.7, recompute_scale_factor=True), id="tri-recompute"),
]


def ref_interp5d(mode, shape, kw):
    """The per-axis (out, in) matrices of F.interpolate of 5-d input, depth first (test_spatial's 1-d rule)."""
    from test_spatial import ref_axis
    dims = shape[2:]
    size, scale = kw.get("size"), kw.get("scale_factor")
    scales = scale if isinstance(scale, tuple) else None if scale is None else (scale,) * 3
    if kw.get("recompute_scale_factor"):
        size, scales = tuple(int(n * s) for n, s in zip(dims, scales)), None
    outs = size if size is not None else tuple(int(n * s) for n, s in zip(dims, scales))
    return [ref_axis("bilinear" if mode == "trilinear" else mode, dims[a], outs[a], kw.get("align_corners", False),
                     None if scales is None else scales[a]) for a in range(3)]


@pytest.mark.parametrize("mode,shape,kw", INTERP5D)
def test_interpolate_5d_values_and_grad(device, rng, mode, shape, kw):
    x = rng.standard_normal(shape)
    md, mh, mw = ref_interp5d(mode, shape, kw)
    want = np.einsum("pd,qh,rw,ncdhw->ncpqr", md, mh, mw, x)
    for dtype in (ctorch.float64, ctorch.float32):
        out = F.interpolate(T(x, device, dtype), mode=mode, **kw)
        assert out.dtype == dtype and out.device.type == device
        assert_close(out, want, "float32")
        if device == "cuda":  # the same tables, the same order: the CPU's bits
            np.testing.assert_array_equal(to_numpy(out), to_numpy(F.interpolate(T(x, "cpu", dtype), mode=mode, **kw)))
    xt = T(x, device, requires_grad=True)
    g = rng.standard_normal(want.shape)
    F.interpolate(xt, mode=mode, **kw).backward(T(g, device))  # the transpose of the interpolation
    assert_close(xt.grad, np.einsum("pd,qh,rw,ncpqr->ncdhw", md, mh, mw, g))


@pytest.mark.parametrize("mode,align,node", [("nearest", None, "UpsampleNearest3DBackward0"),
                                             ("nearest-exact", None, "UpsampleNearestExact3DBackward0"),
                                             ("trilinear", False, "UpsampleTrilinear3DBackward0"),
                                             ("trilinear", True, "UpsampleTrilinear3DBackward0")])
def test_interpolate_5d_gradcheck_and_names(device, rng, mode, align, node):
    from ctorch.autograd import gradcheck
    c, d = (1, 1) if device == "cuda" else (2, 2)  # the emulated run is slow
    xt = T(rng.standard_normal((1, c, d, 3, 2)), device, requires_grad=True)
    fn = lambda a: F.interpolate(a, size=(3, 2, 4), mode=mode, align_corners=align)  # noqa: E731
    g = T(rng.standard_normal((1, c, 3, 2, 4)), device, requires_grad=True)
    assert gradcheck(fn, (xt,))

    def backward(a):  # the backward is itself differentiable (linear in the incoming gradient)
        with ctorch.enable_grad():
            return ctorch.autograd.grad(fn(xt), xt, a, create_graph=True)[0]
    assert gradcheck(backward, (g,))
    out = fn(xt)
    assert out.grad_fn.name() == node
    grad = ctorch.autograd.grad((out * out).sum(), xt, create_graph=True)[0]
    assert grad.grad_fn.name() == node.replace("Backward0", "BackwardBackward0")


def test_interpolate_5d_layouts_dtypes_and_empty(device, rng):
    x = rng.standard_normal((2, 3, 2, 3, 4))
    md, mh, mw = ref_interp5d("trilinear", x.shape, dict(size=(3, 2, 5)))
    want = np.einsum("pd,qh,rw,ncdhw->ncpqr", md, mh, mw, x)
    cl = T(x, device).to(memory_format=ctorch.channels_last_3d)
    out = F.interpolate(cl, size=(3, 2, 5), mode="trilinear")  # channels_last_3d in, channels_last_3d out
    assert out.is_contiguous(memory_format=ctorch.channels_last_3d) and out.stride() == (90, 1, 30, 15, 3)
    assert_close(out, want)
    tr = T(x.transpose(0, 1, 4, 3, 2), device).transpose(2, 4)  # a transposed view: read densely
    assert_close(F.interpolate(tr, size=(3, 2, 5), mode="trilinear"), want)
    for dtype in (ctorch.float16, ctorch.bfloat16):
        out = F.interpolate(T(x, device, dtype), size=(3, 2, 5), mode="trilinear")
        assert out.dtype == dtype
        assert_close(out, want, "bfloat16")
    xi = rng.integers(0, 200, (1, 2, 2, 3, 2)).astype(np.uint8)
    out = F.interpolate(T(xi, device, ctorch.uint8), scale_factor=(1, 2, 1.5), mode="nearest")
    md, mh, mw = ref_interp5d("nearest", xi.shape, dict(scale_factor=(1, 2, 1.5)))
    assert out.dtype == ctorch.uint8
    np.testing.assert_array_equal(to_numpy(out), np.einsum("pd,qh,rw,ncdhw->ncpqr", md, mh, mw, xi))
    empty = F.interpolate(ctorch.zeros((0, 2, 2, 3, 4), device=device), size=(1, 2, 3), mode="trilinear")
    assert empty.shape == (0, 2, 1, 2, 3)


INTERP5D_ERRORS = [
    (dict(size=(1, 2, 3)), (1, 2, 0, 3, 4), None, RuntimeError,
     "Input and output sizes should be greater than 0, but got input (D: 0, H: 3, W: 4) output (D: 1, H: 2, W: 3)"),
    (dict(size=(0, 2, 3), mode="trilinear"), (1, 2, 1, 3, 4), None, RuntimeError,
     "Input and output sizes should be greater than 0, but got input (D: 1, H: 3, W: 4) output (D: 0, H: 2, W: 3)"),
    (dict(size=(1, 2, 3)), (1, 0, 1, 3, 4), None, RuntimeError,
     "Non-empty 5D data tensor expected but got a tensor with sizes [1, 0, 1, 3, 4]"),
    (dict(size=(1, 2, 3), mode="trilinear"), (1, 2, 1, 3, 4), ctorch.int64, NotImplementedError,
     "\"compute_indices_weights_linear\" not implemented for 'Long'"),
    (dict(size=(1, 2, 3)), (1, 2, 1, 3, 4), ctorch.int64, NotImplementedError,
     "\"compute_indices_weights_nearest\" not implemented for 'Long'"),
    (dict(size=(1, 2, 3), mode="trilinear"), (1, 2, 1, 3, 4), ctorch.uint8, NotImplementedError,
     "\"compute_indices_weights_linear\" not implemented for 'Byte'"),
    (dict(size=(1, 2, 3), mode="bilinear"), (1, 2, 1, 3, 4), None, NotImplementedError,
     "Got 5D input, but bilinear mode needs 4D input"),
    (dict(size=(1, 2), mode="trilinear"), (1, 2, 3, 4), None, NotImplementedError,
     "Got 4D input, but trilinear mode needs 5D input"),
    (dict(size=(1, 2, 3), mode="trilinear", antialias=True), (1, 2, 1, 3, 4), None, ValueError,
     "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D tensor as input"),
]


@pytest.mark.parametrize("kw,shape,dtype,exc,msg", INTERP5D_ERRORS)
def test_interpolate_5d_errors(kw, shape, dtype, exc, msg):
    with pytest.raises(exc) as info:
        F.interpolate(ctorch.zeros(shape, dtype=dtype), **kw)
    assert str(info.value) == msg


def test_upsample_module_5d(rng):
    x = rng.standard_normal((1, 1, 2, 2, 3))
    m = nn.Upsample(scale_factor=2, mode="trilinear", align_corners=True)
    assert repr(m) == "Upsample(scale_factor=2.0, mode='trilinear')"
    md, mh, mw = ref_interp5d("trilinear", x.shape, dict(scale_factor=2, align_corners=True))
    assert_close(m(T(x, "cpu")), np.einsum("pd,qh,rw,ncdhw->ncpqr", md, mh, mw, x))


# --- F.affine_grid / F.grid_sample of 5-D input --------------------------------------------------------------
def ref_grid_sample3d(x, grid, mode, padding, align):
    """x (N, C, D, H, W) sampled at grid (N, Do, Ho, Wo, 3) of (x, y, z): the eight corners (or the nearest one)
    weighted by the products of their per-axis weights, zero outside the input."""
    from test_nn_more import np_source
    N, C, D, H, W = x.shape
    out = np.zeros((N, C) + grid.shape[1:4])
    for n, i, j, k in itertools.product(*[range(v) for v in (N,) + grid.shape[1:4]]):
        src = [np_source(grid[n, i, j, k, a], size, align, padding) for a, size in enumerate((W, H, D))]
        if mode == "nearest":
            taps = [([np.round(s) for s in src], 1.0)]
        else:
            lo = [math.floor(s) for s in src]
            taps = [([lo[a] + c[a] for a in range(3)],
                     np.prod([src[a] - lo[a] if c[a] else 1 - (src[a] - lo[a]) for a in range(3)]))
                    for c in itertools.product((0, 1), repeat=3)]
        for (tx, ty, tz), w in taps:
            if 0 <= tx < W and 0 <= ty < H and 0 <= tz < D:
                out[n, :, i, j, k] += w * x[n, :, int(tz), int(ty), int(tx)]
    return out


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_5d(device, rng, align):
    from ctorch.autograd import gradcheck
    theta = rng.standard_normal((2, 3, 4))
    got = F.affine_grid(T(theta, device), (2, 1, 2, 3, 4), align_corners=align)
    line = lambda n: np.linspace(-1, 1, n) * (1 if align or n == 1 else (n - 1) / n)  # noqa: E731
    base = np.stack(np.broadcast_arrays(line(4)[None, None, :], line(3)[None, :, None], line(2)[:, None, None],
                                        np.ones((2, 3, 4))), -1)
    assert got.shape == (2, 2, 3, 4, 3)
    assert_close(got, np.einsum("dhwk,nck->ndhwc", base, theta))
    got = F.affine_grid(T(theta, device, ctorch.float32), (2, 5, 1, 1, 2), align_corners=align)
    assert got.dtype == ctorch.float32
    assert_close(got, np.einsum("dhwk,nck->ndhwc", np.stack(np.broadcast_arrays(
        line(2)[None, None, :], 0.0, 0.0, np.ones((1, 1, 2))), -1), theta))
    assert gradcheck(lambda t: F.affine_grid(t, (2, 1, 1, 2, 2), align_corners=align), (T(theta, device,
                                                                                            requires_grad=True),))


def test_affine_grid_5d_errors():
    with pytest.raises(ValueError, match=r"^Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                                         r"\(2, 1, 2, 3, 4\). Got torch.Size\(\[2, 2, 3\]\).$"):
        F.affine_grid(ctorch.zeros(2, 2, 3), (2, 1, 2, 3, 4), align_corners=False)
    with pytest.raises(ValueError, match=r"^Expected non-zero, positive output size. Got \(2, 1, 0, 3, 4\)$"):
        F.affine_grid(ctorch.zeros(2, 3, 4), (2, 1, 0, 3, 4), align_corners=False)
    with pytest.raises(ValueError, match="Expected a batch of 2D affine matrices of shape Nx2x3"):
        F.affine_grid(ctorch.zeros(2, 3, 4), (2, 1, 3, 4), align_corners=False)


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_5d(device, rng, padding):
    x = rng.standard_normal((2, 2, 2, 3, 4))
    grid = rng.uniform(-1.3, 1.3, (2, 2, 1, 3, 3))
    grid[0, 0, 0, 0], grid[0, 0, 0, 1] = [1.0, -1.0, 0.0], [0.25, 0.5, -1.0]  # corners and edges
    for dtype in (ctorch.float64, ctorch.float32):
        for mode in ("bilinear", "nearest"):
            for align in (False, True):
                got = F.grid_sample(T(x, device, dtype), T(grid, device, dtype), mode=mode, padding_mode=padding,
                                    align_corners=align)
                assert got.shape == (2, 2, 2, 1, 3) and got.dtype == dtype
                assert_close(got, ref_grid_sample3d(x, grid, mode, padding, align), "float32")
    if device == "cuda":  # composed of recording ops: the CPU's gradcheck covers the formulas
        return
    from ctorch.autograd import gradcheck
    xt = T(x[:1, :1, :2, :2, :2], device, requires_grad=True)
    gt = T(grid[:1, :1, :1, :2] * 0.9, device, requires_grad=True)
    assert gradcheck(lambda a, g: F.grid_sample(a, g, padding_mode=padding, align_corners=True), (xt, gt))


def test_grid_sample_5d_errors():
    x = ctorch.zeros(1, 2, 2, 3, 4)
    cases = [
        (x, ctorch.zeros(1, 2, 3, 4, 2), RuntimeError, "grid_sampler(): expected grid to have size 3 in last dimension, "
         "but got grid with sizes [1, 2, 3, 4, 2]"),
        (x, ctorch.zeros(1, 2, 3, 3), RuntimeError, "grid_sampler(): expected 5D input and grid with same number of "
         "dimensions, but got input with sizes [1, 2, 2, 3, 4] and grid with sizes [1, 2, 3, 3]"),
        (x, ctorch.zeros(2, 1, 1, 1, 3), RuntimeError, "grid_sampler(): expected grid and input to have same batch "
         "size, but got input with sizes [1, 2, 2, 3, 4] and grid with sizes [2, 1, 1, 1, 3]"),
        (x[:, :, :0], ctorch.zeros(1, 1, 1, 1, 3), RuntimeError, "grid_sampler(): expected input to have non-empty "
         "spatial dimensions, but input has sizes [1, 2, 0, 3, 4] with dimension 2 being empty"),
        (x.long(), ctorch.zeros(1, 1, 1, 1, 3, dtype=ctorch.int64), NotImplementedError,
         "\"grid_sampler3d_cpu\" not implemented for 'Long'"),
    ]
    for inp, grid, exc, msg in cases:
        with pytest.raises(exc) as info:
            F.grid_sample(inp, grid, align_corners=False)
        assert str(info.value) == msg
