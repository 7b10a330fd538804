"""Spatial nn ops against NumPy references written here, on cpu and cuda:
- F.interpolate / nn.Upsample* (csrc/upsample.c, cuda/upsample.cu): per-axis interpolation matrices
  (PyTorch's index and coordinate rules: scale factor or size, align_corners, nearest indices in
  float32), gradients as the matrices transposed, gradcheck, double backward, CUDA = CPU bits;
- conv_transpose1d/2d, nn.ConvTranspose1d/2d (csrc/conv.c): a scatter reference, gradients per
  basis direction, output_size and the Conv2d round trip;
- F.unfold / F.fold, nn.Unfold / nn.Fold (conv.c's im2col / col2im);
- pixel_shuffle / pixel_unshuffle, dropout1d/2d/3d, instance_norm (csrc/spatial.c);
with grad_fn names, module reprs / state_dict keys and PyTorch's errors (messages produced with the
reference torch at /work/torchref)."""
import math
import warnings

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
import ctorch.nn.functional as F
from ctorch.autograd import gradcheck
from conftest import DEVICES, TOL, to_numpy

RNG = np.random.default_rng(7)


# ====================================================================================================
# NumPy reference: one (out, in) matrix per axis; out = Wh @ x @ Ww^T, grad_in = Wh^T @ g @ Ww
# ====================================================================================================
def ref_axis(mode, n_in, n_out, align, scale):
    m = np.zeros((n_out, n_in))
    if mode in ("nearest", "nearest-exact"):
        sc = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
        for o in range(n_out):
            if mode == "nearest" and n_out == n_in:
                s = o
            elif mode == "nearest" and n_out == 2 * n_in:
                s = o // 2
            elif mode == "nearest":
                s = int(np.floor(np.float32(o) * sc))
            else:
                s = int(np.floor(np.float32((o + 0.5) * float(sc))))
            m[o, min(s, n_in - 1)] = 1
        return m
    cubic = mode == "bicubic"
    if not cubic and n_out == n_in:
        return np.eye(n_in)
    if align:
        sc = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        sc = 1.0 / scale if scale else n_in / n_out
    for o in range(n_out):
        real = sc * o if align else sc * (o + 0.5) - 0.5
        if not cubic:
            real = max(real, 0.0)
        i0 = min(math.floor(real), n_in - 1)
        t = min(max(real - i0, 0.0), 1.0)
        if not cubic:
            m[o, i0] += 1 - t
            m[o, min(i0 + 1, n_in - 1)] += t
            continue
        a = -0.75
        c1 = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1  # noqa: E731
        c2 = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a  # noqa: E731
        for j, w in enumerate((c2(t + 1), c1(t), c1(1 - t), c2(2 - t))):
            m[o, min(max(i0 - 1 + j, 0), n_in - 1)] += w
    return m


def ref_area(n_in, n_out):
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        s, e = o * n_in // n_out, -(-(o + 1) * n_in // n_out)
        m[o, s:e] = 1.0 / (e - s)
    return m


def ref_matrices(mode, shape, size=None, scale=None, align=False):
    """The per-axis matrices of F.interpolate(x of shape, size, scale_factor) (without
    recompute_scale_factor), height first; a 3-d input has only the width's."""
    dim = len(shape) - 2
    sizes = size if isinstance(size, (tuple, list)) else None if size is None else [size] * dim
    scales = scale if isinstance(scale, (tuple, list)) else None if scale is None else [scale] * dim
    mats = []
    for i in range(dim):
        n_in = shape[2 + i]
        n_out = sizes[i] if sizes is not None else int(n_in * scales[i])
        if mode == "area":
            mats.append(ref_area(n_in, n_out))
        else:
            mats.append(ref_axis(mode, n_in, n_out, align, None if scales is None else scales[i]))
    return mats


def ref_apply(mats, x):
    if len(mats) == 1:
        return np.einsum("ow,ncw->nco", mats[0], x)
    return np.einsum("ph,nchw,qw->ncpq", mats[0], x, mats[1])


def ref_grad(mats, g):
    if len(mats) == 1:
        return np.einsum("ow,nco->ncw", mats[0], g)
    return np.einsum("ph,ncpq,qw->nchw", mats[0], g, mats[1])


# (mode, input shape, kwargs): sizes and scale factors up and down, align_corners both ways
CASES = [
    ("nearest", (2, 3, 5), dict(scale_factor=2)),
    ("nearest", (2, 3, 5), dict(size=7)),
    ("nearest", (2, 3, 4, 5), dict(scale_factor=(1.5, 0.5))),
    ("nearest", (2, 3, 4, 5), dict(size=(9, 3))),
    ("nearest", (1, 2, 6, 5), dict(scale_factor=1.7)),
    ("nearest-exact", (2, 3, 5), dict(scale_factor=2.5)),
    ("nearest-exact", (2, 3, 4, 5), dict(size=(7, 3))),
    ("nearest-exact", (2, 3, 7, 5), dict(scale_factor=(0.6, 1.4))),
    ("linear", (2, 3, 5), dict(scale_factor=2)),
    ("linear", (2, 3, 5), dict(size=3, align_corners=True)),
    ("linear", (2, 3, 5), dict(size=1, align_corners=True)),
    ("linear", (2, 3, 5), dict(scale_factor=1.3, align_corners=False)),
    ("bilinear", (2, 3, 4, 5), dict(scale_factor=2)),
    ("bilinear", (2, 3, 4, 5), dict(size=(7, 3), align_corners=True)),
    ("bilinear", (2, 3, 4, 5), dict(scale_factor=(0.6, 1.5), align_corners=False)),
    ("bilinear", (2, 3, 4, 5), dict(size=(4, 8))),
    ("bicubic", (2, 3, 4, 5), dict(scale_factor=2)),
    ("bicubic", (2, 3, 4, 5), dict(size=(7, 3), align_corners=True)),
    ("bicubic", (2, 3, 6, 5), dict(scale_factor=(0.5, 1.5))),
    ("bicubic", (1, 2, 3, 4), dict(size=(3, 4))),
    ("area", (2, 3, 7), dict(size=3)),
    ("area", (2, 3, 6, 5), dict(scale_factor=(0.5, 1.5))),
]
CASE_IDS = [f"{m}-{len(s)}d-{i}" for i, (m, s, _) in enumerate(CASES)]


def _run_case(mode, shape, kw, device, dtype, x=None):
    xn = RNG.standard_normal(shape) if x is None else x
    t = ctorch.tensor(xn, dtype=getattr(ctorch, dtype), device=device)
    out = F.interpolate(t, mode=mode, **kw)
    xr = to_numpy(t).astype(np.float64)
    mats = ref_matrices(mode, shape, kw.get("size"), kw.get("scale_factor"), kw.get("align_corners", False))
    return t, out, mats, ref_apply(mats, xr)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("device", DEVICES)
def test_interpolate_values_and_grad(device, case):
    mode, shape, kw = case
    for dtype in ("float64", "float32"):
        t, out, mats, want = _run_case(mode, shape, kw, device, dtype)
        assert out.dtype == t.dtype and out.device == t.device
        rtol, atol = TOL[dtype]
        np.testing.assert_allclose(to_numpy(out), want, rtol=rtol * 10, atol=atol * 10)
    # the gradient: the interpolation's transpose
    x = t.double().requires_grad_()
    g = RNG.standard_normal(tuple(out.shape))
    F.interpolate(x, mode=mode, **kw).backward(ctorch.tensor(g, device=device))
    np.testing.assert_allclose(to_numpy(x.grad), ref_grad(mats, g), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES[1:])
def test_interpolate_cuda_gives_cpu_bits(device):
    """Both devices run upsample_math.h's functions: the same bits, forward and (gathered) backward."""
    for mode, shape, kw in CASES:
        if mode == "area":
            continue
        for dtype in ("float32", "bfloat16"):
            xn = RNG.standard_normal(shape)
            outs = []
            for dev in ("cpu", device):
                x = ctorch.tensor(xn, dtype=getattr(ctorch, dtype), device=dev, requires_grad=True)
                y = F.interpolate(x, mode=mode, **kw)
                y.backward(ctorch.ones(tuple(y.shape), dtype=x.dtype, device=dev))
                outs.append((to_numpy(y), to_numpy(x.grad)))
            np.testing.assert_array_equal(outs[0][0], outs[1][0])
            np.testing.assert_array_equal(outs[0][1], outs[1][1])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_interpolate_half(device, dtype):
    for mode, shape, kw in (CASES[3], CASES[8], CASES[13], CASES[17]):
        t, out, _, want = _run_case(mode, shape, kw, device, dtype)
        assert out.dtype == t.dtype
        rtol, atol = TOL[dtype]
        np.testing.assert_allclose(to_numpy(out), want, rtol=2 * rtol, atol=4 * atol)


@pytest.mark.parametrize("device", DEVICES)
def test_interpolate_uint8_and_refused_dtypes(device):
    xn = RNG.integers(0, 256, (2, 3, 4, 5)).astype(np.uint8)
    t = ctorch.tensor(xn, device=device)
    for mode in ("nearest", "nearest-exact"):
        out = F.interpolate(t, size=(7, 3), mode=mode)
        mats = ref_matrices(mode, xn.shape, size=(7, 3))
        assert out.dtype == ctorch.uint8
        np.testing.assert_array_equal(to_numpy(out), ref_apply(mats, xn.astype(np.float64)).astype(np.uint8))
    out1 = F.interpolate(t[:, :, 0], scale_factor=2)
    np.testing.assert_array_equal(to_numpy(out1), np.repeat(xn[:, :, 0], 2, axis=-1))
    with pytest.raises(NotImplementedError, match="uint8"):
        F.interpolate(t, scale_factor=2, mode="bilinear")
    refused = [
        (ctorch.int32, (1, 2, 3, 4), "nearest", "\"upsample_nearest2d_channels_last\" not implemented for 'Int'"),
        (ctorch.int8, (1, 2, 3, 4), "bilinear", "\"upsample_bilinear2d_channels_last\" not implemented for 'Char'"),
        (ctorch.int64, (1, 2, 3, 4), "bicubic", "\"compute_indices_weights_cubic\" not implemented for 'Long'"),
        (ctorch.int8, (1, 2, 3), "nearest", "\"compute_indices_weights_nearest\" not implemented for 'Char'"),
        (ctorch.uint8, (1, 2, 3), "linear", "\"compute_indices_weights_linear\" not implemented for 'Byte'"),
        (ctorch.bool, (1, 2, 3, 4), "nearest", "\"upsample_nearest2d_channels_last\" not implemented for 'Bool'"),
    ]
    for dt, shape, mode, msg in refused:
        with pytest.raises(NotImplementedError) as info:
            F.interpolate(ctorch.zeros(shape, dtype=dt, device=device), scale_factor=2, mode=mode)
        assert str(info.value) == msg


@pytest.mark.parametrize("device", DEVICES)
def test_interpolate_layouts_and_empty(device):
    base = RNG.standard_normal((2, 5, 3, 4))
    big = ctorch.tensor(base, device=device)
    for mode, kw in (("bilinear", dict(scale_factor=1.5, align_corners=True)), ("nearest", dict(size=(5, 3))),
                     ("bicubic", dict(size=(3, 5)))):
        for view, ref in ((big.permute(0, 1, 3, 2), base.transpose(0, 1, 3, 2)), (big[:, ::2], base[:, ::2])):
            assert not view.is_contiguous()
            out = F.interpolate(view, mode=mode, **kw)
            mats = ref_matrices(mode, ref.shape, kw.get("size"), kw.get("scale_factor"), kw.get("align_corners"))
            np.testing.assert_allclose(to_numpy(out), ref_apply(mats, ref), rtol=1e-12, atol=1e-12)
    # an empty batch works (forward and backward); empty channels are refused as PyTorch
    for mode, shape in (("bilinear", (0, 3, 4, 5)), ("nearest", (0, 2, 3)), ("linear", (0, 2, 3))):
        x = ctorch.zeros(shape, device=device, requires_grad=True)
        out = F.interpolate(x, scale_factor=2, mode=mode)
        assert tuple(out.shape) == shape[:2] + tuple(2 * s for s in shape[2:])
        out.sum().backward()
        assert tuple(x.grad.shape) == shape
    with pytest.raises(RuntimeError) as info:
        F.interpolate(ctorch.zeros((2, 0, 4, 5), device=device), scale_factor=2)
    assert str(info.value) == "Non-empty 4D data tensor expected but got a tensor with sizes [2, 0, 4, 5]"


@pytest.mark.parametrize("device", DEVICES)
def test_interpolate_inf_spreads_as_pytorch(device):
    """Every tap is read, zero weights included (PyTorch's [[nan, 1, 2]] for a same-size linear resample)."""
    x = ctorch.tensor([[[math.inf, 1.0, 2.0]]], device=device)
    assert np.isnan(to_numpy(F.interpolate(x, size=3, mode="linear"))[0, 0, 0])
    np.testing.assert_array_equal(to_numpy(F.interpolate(x, size=5, mode="linear"))[0, 0, :2], [math.inf] * 2)
    np.testing.assert_array_equal(to_numpy(F.interpolate(x, size=5, mode="nearest"))[0, 0], [math.inf] * 2 + [1, 1, 2])


@pytest.mark.parametrize("device", DEVICES)
def test_interpolate_gradcheck_and_names(device):
    names = {("nearest", 3): "UpsampleNearest1DBackward0", ("nearest", 4): "UpsampleNearest2DBackward0",
             ("nearest-exact", 3): "UpsampleNearestExact1DBackward0",
             ("nearest-exact", 4): "UpsampleNearestExact2DBackward0", ("linear", 3): "UpsampleLinear1DBackward0",
             ("bilinear", 4): "UpsampleBilinear2DBackward0", ("bicubic", 4): "UpsampleBicubic2DBackward0",
             ("area", 4): "AdaptiveAvgPool2DBackward0"}
    for (mode, nd), name in names.items():
        shape = (1, 2, 3, 4)[:nd]
        x = ctorch.tensor(RNG.standard_normal(shape), device=device, requires_grad=True)
        kw = dict(align_corners=True) if mode in ("linear", "bilinear", "bicubic") else {}
        fn = lambda t: F.interpolate(t, scale_factor=1.5, mode=mode, **kw)  # noqa: E731
        assert type(fn(x).grad_fn).__name__ == name
        assert gradcheck(fn, (x,))
    # double backward: the backward op is linear in grad_output, its own gradient the forward
    x = ctorch.tensor(RNG.standard_normal((1, 2, 3, 4)), device=device, requires_grad=True)
    g = ctorch.tensor(RNG.standard_normal((1, 2, 5, 6)), device=device, requires_grad=True)
    (gx,) = ctorch.autograd.grad(F.interpolate(x, size=(5, 6), mode="bicubic"), x, g, create_graph=True)
    assert type(gx.grad_fn).__name__ == "UpsampleBicubic2DBackwardBackward0"
    v = RNG.standard_normal((1, 2, 3, 4))
    gx.backward(ctorch.tensor(v, device=device))
    mats = ref_matrices("bicubic", (1, 2, 3, 4), size=(5, 6))
    np.testing.assert_allclose(to_numpy(g.grad), ref_apply(mats, v), rtol=1e-12, atol=1e-12)


def test_interpolate_modules_and_reprs():
    assert repr(nn.Upsample(scale_factor=2.0)) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert repr(nn.Upsample(size=(3, 4), mode="bilinear", align_corners=True)) == "Upsample(size=(3, 4), mode='bilinear')"
    assert repr(nn.UpsamplingNearest2d(scale_factor=2)) == "UpsamplingNearest2d(scale_factor=2.0, mode='nearest')"
    assert repr(nn.UpsamplingBilinear2d(size=3)) == "UpsamplingBilinear2d(size=3, mode='bilinear')"
    assert repr(nn.Upsample(scale_factor=(2, 1.5), mode="nearest-exact")) == \
        "Upsample(scale_factor=(2.0, 1.5), mode='nearest-exact')"
    x = ctorch.tensor(RNG.standard_normal((1, 2, 3, 4)))
    up = nn.UpsamplingBilinear2d(scale_factor=2)
    assert up.align_corners and list(up.state_dict()) == []
    np.testing.assert_array_equal(to_numpy(up(x)), to_numpy(F.interpolate(x, scale_factor=2.0, mode="bilinear",
                                                                           align_corners=True)))
    np.testing.assert_array_equal(to_numpy(nn.Upsample(size=(5, 2), mode="bicubic")(x)),
                                  to_numpy(F.interpolate(x, size=(5, 2), mode="bicubic")))
    np.testing.assert_array_equal(to_numpy(nn.UpsamplingNearest2d(size=5)(x)), to_numpy(F.interpolate(x, size=5)))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = F.upsample_bilinear(x, scale_factor=2)
    assert "deprecated" in str(w[0].message)
    np.testing.assert_array_equal(to_numpy(out), to_numpy(up(x)))
    # recompute_scale_factor: the scale then comes from the sizes (in / out), not the factor
    y = F.interpolate(x, scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)
    mats = ref_matrices("bilinear", (1, 2, 3, 4), size=(5, 6))
    np.testing.assert_allclose(to_numpy(y), ref_apply(mats, to_numpy(x)), rtol=1e-5, atol=1e-6)


INTERP_ERRORS = [
    (dict(size=(0, 3)), (2, 3, 4, 5), RuntimeError,
     "Input and output sizes should be greater than 0, but got input (H: 4, W: 5) output (H: 0, W: 3)"),
    (dict(size=0, mode="linear"), (2, 3, 4), RuntimeError,
     "Input and output sizes should be greater than 0, but got input (W: 4) and output (W: 0)"),
    (dict(scale_factor=-1.0), (2, 3, 4, 5), RuntimeError,
     "Input and output sizes should be greater than 0, but got input (H: 4, W: 5) output (H: -4, W: -5)"),
    (dict(scale_factor=2), (2, 3, 0, 5), RuntimeError,
     "Input and output sizes should be greater than 0, but got input (H: 0, W: 5) output (H: 0, W: 10)"),
    (dict(scale_factor=2, mode="nearest", antialias=True), (2, 3, 4, 5), ValueError,
     "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D tensor as input"),
    (dict(scale_factor=2, align_corners=True), (2, 3, 4, 5), ValueError,
     "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear"),
    (dict(scale_factor=2, mode="foo"), (2, 3, 4, 5), NotImplementedError,
     "Input Error: Only 3D, 4D and 5D input Tensors supported (got 4D) for the modes: nearest | linear | bilinear | "
     "bicubic | trilinear | lanczos | area | nearest-exact (got foo)"),
    (dict(size=(2, 3), scale_factor=2), (2, 3, 4, 5), ValueError, "only one of size or scale_factor should be defined"),
    ({}, (2, 3, 4, 5), ValueError, "either size or scale_factor should be defined"),
    (dict(size=(2, 3, 4)), (2, 3, 4, 5), ValueError,
     "Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of "
     "[4, 5] and output size of (2, 3, 4). Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
     "size in (o1, o2, ...,oK) format."),
    (dict(size=(2.0, 3)), (2, 3, 4, 5), TypeError,
     "expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], but got size with "
     "types [<class 'float'>, <class 'int'>]"),
    (dict(scale_factor=(2, 3, 4)), (2, 3, 4, 5), ValueError,
     "Input and scale_factor must have the same number of spatial dimensions, but got input with spatial dimensions "
     "of [4, 5] and scale_factor of shape (2, 3, 4). Please provide input tensor in (N, C, d1, d2, ...,dK) format "
     "and scale_factor in (s1, s2, ...,sK) format."),
    (dict(size=(2, 3), recompute_scale_factor=True), (2, 3, 4, 5), ValueError,
     "recompute_scale_factor is not meaningful with an explicit size."),
    (dict(scale_factor=2, mode="bilinear"), (2, 3, 4), NotImplementedError,
     "Got 3D input, but bilinear mode needs 4D input"),
    (dict(scale_factor=2, mode="linear"), (2, 3, 4, 5), NotImplementedError,
     "Got 4D input, but linear mode needs 3D input"),
    (dict(scale_factor=2), (2, 3), NotImplementedError,
     "Input Error: Only 3D, 4D and 5D input Tensors supported (got 2D) for the modes: nearest | linear | bilinear | "
     "bicubic | trilinear | lanczos | area | nearest-exact (got nearest)"),
]


@pytest.mark.parametrize("device", DEVICES)
def test_interpolate_errors(device):
    for kw, shape, exc, msg in INTERP_ERRORS:
        with pytest.raises(exc) as info:
            F.interpolate(ctorch.zeros(shape, device=device), **kw)
        assert str(info.value) == msg, kw
    refused = [(ctorch.float16, "\"compute_index_ranges_weights\" not implemented for 'Half'"),
               (ctorch.int64, "\"compute_index_ranges_weights\" not implemented for 'Long'")]
    for dt, msg in refused:  # PyTorch's CPU antialiased kernels take float and double
        with pytest.raises(NotImplementedError) as info:
            F.interpolate(ctorch.zeros((1, 1, 4, 4), dtype=dt, device=device), size=2, mode="bilinear", antialias=True)
        assert str(info.value) == msg
    with pytest.raises(NotImplementedError, match="uint8"):
        F.interpolate(ctorch.zeros((1, 1, 4, 4), dtype=ctorch.uint8, device=device), size=2, mode="bicubic",
                      antialias=True)


# antialias=True (PyTorch's _upsample_bilinear2d_aa / _upsample_bicubic2d_aa): per axis, output o reads the inputs
# within the filter's support (stretched by the downscale) of its centre scale * (o + 0.5), weights normalised
def ref_aa_axis(mode, n_in, n_out, align, scale):
    sc = ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0) if align else 1.0 / scale if scale else n_in / n_out
    half = 2.0 if mode == "bicubic" else 1.0
    support, inv = (half * sc, 1.0 / sc) if sc >= 1 else (half, 1.0)

    def filt(x):
        x, a = abs(x), -0.5
        if mode == "bilinear":
            return max(0.0, 1.0 - x)
        return ((a + 2) * x - (a + 3)) * x * x + 1 if x < 1 else ((a * x - 5 * a) * x + 8 * a) * x - 4 * a if x < 2 else 0
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        c = sc * (o + 0.5)
        lo, hi = max(int(c - support + 0.5), 0), min(int(c + support + 0.5), n_in)
        w = np.array([filt((j - c + 0.5) * inv) for j in range(lo, hi)])
        m[o, lo:hi] = w / w.sum() if w.sum() != 0 else w
    return m


AA_CASES = [
    ("bilinear", (1, 2, 9, 11), dict(size=(4, 3))),
    ("bicubic", (1, 2, 9, 11), dict(size=(4, 3))),
    ("bilinear", (2, 1, 10, 7), dict(scale_factor=(0.3, 0.5))),
    ("bicubic", (1, 1, 10, 7), dict(scale_factor=(0.45, 2.0))),
    ("bicubic", (1, 1, 9, 7), dict(size=(3, 2), align_corners=True)),
    ("bicubic", (1, 1, 33, 5), dict(size=(2, 1))),  # (PyTorch 2.x's CPU forward repeats row 0 when W_out == 1)
    ("bilinear", (1, 1, 4, 5), dict(size=(7, 9))),
]


@pytest.mark.parametrize("case", AA_CASES, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(AA_CASES)])
@pytest.mark.parametrize("device", DEVICES)
def test_interpolate_antialias(device, case):
    mode, shape, kw = case
    xn = RNG.standard_normal(shape)
    scales = kw.get("scale_factor")
    sizes = kw.get("size") or [int(n * s) for n, s in zip(shape[2:], scales)]
    mh, mw = (ref_aa_axis(mode, shape[2 + a], sizes[a], kw.get("align_corners", False),
                          scales[a] if scales else None) for a in range(2))
    for dtype in ("float64", "float32"):
        out = F.interpolate(ctorch.tensor(xn, dtype=getattr(ctorch, dtype), device=device), mode=mode,
                            antialias=True, **kw)
        rtol, atol = TOL[dtype]
        np.testing.assert_allclose(to_numpy(out), ref_apply([mh, mw], xn), rtol=rtol * 10, atol=atol * 10)
    x = ctorch.tensor(xn, device=device, requires_grad=True)
    out = F.interpolate(x, mode=mode, antialias=True, **kw)
    g = RNG.standard_normal(tuple(out.shape))
    out.backward(ctorch.tensor(g, device=device))
    np.testing.assert_allclose(to_numpy(x.grad), ref_grad([mh, mw], g), rtol=1e-12, atol=1e-12)
    if mode == "bilinear" and sizes[0] >= shape[2] and sizes[1] >= shape[3]:  # upsampling: the plain filter
        np.testing.assert_allclose(to_numpy(out), to_numpy(F.interpolate(x, mode=mode, **kw)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_interpolate_antialias_gradcheck_and_names(device):
    for mode in ("bilinear", "bicubic"):
        x = ctorch.tensor(RNG.standard_normal((1, 1, 5, 4)), device=device, requires_grad=True)
        fn = lambda t: F.interpolate(t, size=(2, 3), mode=mode, antialias=True)  # noqa: E731
        name = "UpsampleBilinear2DAaBackward0" if mode == "bilinear" else "UpsampleBicubic2DAaBackward0"
        out = fn(x)
        assert out.grad_fn.name() == name
        grad = ctorch.autograd.grad((out * out).sum(), x, create_graph=True)[0]
        assert grad.grad_fn.name() == name.replace("Backward0", "BackwardBackward0")
        assert gradcheck(fn, (x,))


# ====================================================================================================
# conv_transpose1d / conv_transpose2d (csrc/conv.c): NumPy scatter reference, out[o * s - p + k * d] += x[o] w[k]
# ====================================================================================================
def _pair2(v, nd):
    v = tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd
    return (1,) * (2 - nd) + v if nd == 1 else v


def ref_conv_transpose(x, w, b, nd, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """x (N, Cin, *), w (Cin, Cout/g, k*) as 2-d (a 1-d call has height 1; padding 0 there)."""
    s, d, op = _pair2(stride, nd), _pair2(dilation, nd), _pair2(output_padding, nd)
    p = (0,) + tuple(_pair2(padding, 1)[1:]) if nd == 1 else _pair2(padding, 2)
    x4 = x[:, :, None] if nd == 1 else x
    w4 = w[:, :, None] if nd == 1 else w
    n, cin, h, wd = x4.shape
    cog, kh, kw = w4.shape[1:]
    oh = (h - 1) * s[0] - 2 * p[0] + d[0] * (kh - 1) + op[0] + 1
    ow = (wd - 1) * s[1] - 2 * p[1] + d[1] * (kw - 1) + op[1] + 1
    full = np.zeros((n, cog * groups, oh + 2 * p[0] + kh * d[0], ow + 2 * p[1] + kw * d[1]))
    cig = cin // groups
    for g in range(groups):
        xs = x4[:, g * cig:(g + 1) * cig]
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("nchw,co->nohw", xs, w4[g * cig:(g + 1) * cig, :, i, j])
                full[:, g * cog:(g + 1) * cog, i * d[0]:i * d[0] + (h - 1) * s[0] + 1:s[0],
                     j * d[1]:j * d[1] + (wd - 1) * s[1] + 1:s[1]] += contrib
    out = full[:, :, p[0]:p[0] + oh, p[1]:p[1] + ow]
    if b is not None:
        out = out + b[None, :, None, None]
    return out[:, :, 0] if nd == 1 else out


CT_CASES = [
    (2, (2, 4, 5, 6), (4, 3, 3, 2), dict(stride=2, padding=1, output_padding=1)),
    (2, (2, 4, 5, 6), (4, 3, 3, 2), dict(stride=(1, 2), padding=(0, 1), dilation=(2, 1))),
    (2, (1, 4, 3, 3), (4, 2, 2, 2), dict(groups=2, stride=3, output_padding=(2, 1))),
    (2, (2, 4, 3, 3), (4, 2, 1, 1), dict(dilation=2, output_padding=1)),
    (2, (2, 4, 5, 6), (4, 1, 1, 1), dict(groups=4)),
    (1, (2, 4, 5), (4, 6, 3), dict(stride=3, output_padding=2, groups=2)),
    (1, (2, 4, 5), (4, 2, 2), dict(padding=1, dilation=2)),
]


@pytest.mark.parametrize("device", DEVICES)
def test_conv_transpose_values_and_grads(device):
    for nd, xs, ws, kw in CT_CASES:
        xn, wn = RNG.standard_normal(xs), RNG.standard_normal(ws)
        bn = RNG.standard_normal(ws[1] * kw.get("groups", 1))
        f = F.conv_transpose1d if nd == 1 else F.conv_transpose2d
        want = ref_conv_transpose(xn, wn, bn, nd, **kw)
        for dtype in ("float32", "float64"):
            dt = getattr(ctorch, dtype)
            out = f(ctorch.tensor(xn, dtype=dt, device=device), ctorch.tensor(wn, dtype=dt, device=device),
                    ctorch.tensor(bn, dtype=dt, device=device), **kw)
            assert out.dtype == dt
            np.testing.assert_allclose(to_numpy(out), want, rtol=1e-5, atol=1e-5)
        # gradients: the scatter is linear in x, w and b, so each gradient is <g, d out / d arg>
        x, w, b = (ctorch.tensor(a, device=device, requires_grad=True) for a in (xn, wn, bn))
        y = f(x, w, b, **kw)
        assert type(y.grad_fn).__name__ == "ConvolutionBackward0"
        g = RNG.standard_normal(tuple(y.shape))
        y.backward(ctorch.tensor(g, device=device))
        for t, arr in ((x, xn), (w, wn)):
            grad = np.zeros_like(arr)
            for idx in np.ndindex(arr.shape):  # each basis direction's output, dotted with g
                e = np.zeros_like(arr)
                e[idx] = 1
                args = (e, wn) if t is x else (xn, e)
                grad[idx] = np.sum(g * ref_conv_transpose(*args, None, nd, **kw))
            np.testing.assert_allclose(to_numpy(t.grad), grad, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(to_numpy(b.grad), g.sum(axis=tuple(i for i in range(g.ndim) if i != 1)),
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_conv_transpose_layouts_gradcheck_half(device):
    xn, wn = RNG.standard_normal((2, 4, 3, 5)), RNG.standard_normal((4, 3, 2, 3))
    want = ref_conv_transpose(xn, wn, None, 2, stride=2)
    xt = ctorch.tensor(np.ascontiguousarray(xn.transpose(0, 1, 3, 2)), device=device).transpose(2, 3)
    assert not xt.is_contiguous()
    np.testing.assert_allclose(to_numpy(F.conv_transpose2d(xt, ctorch.tensor(wn, device=device), stride=2)), want,
                               rtol=1e-12, atol=1e-12)
    for dtype in ("float16", "bfloat16"):
        dt = getattr(ctorch, dtype)
        out = F.conv_transpose2d(ctorch.tensor(xn, dtype=dt, device=device), ctorch.tensor(wn, dtype=dt, device=device),
                                 stride=2)
        assert out.dtype == dt
        ref = ref_conv_transpose(to_numpy(ctorch.tensor(xn, dtype=dt)).astype(np.float64),
                                 to_numpy(ctorch.tensor(wn, dtype=dt)).astype(np.float64), None, 2, stride=2)
        np.testing.assert_allclose(to_numpy(out), ref, rtol=4 * TOL[dtype][0], atol=8 * TOL[dtype][1])
    # empty batch; unbatched input (PyTorch names its node after the trailing squeeze)
    e = F.conv_transpose2d(ctorch.zeros((0, 4, 3, 5), device=device), ctorch.tensor(wn, device=device).float(),
                           stride=2)
    assert tuple(e.shape) == (0, 3, 6, 11)
    x = ctorch.tensor(RNG.standard_normal((2, 3, 2)), device=device, requires_grad=True)
    w = ctorch.tensor(RNG.standard_normal((2, 2, 2, 2)), device=device, requires_grad=True)
    b = ctorch.tensor(RNG.standard_normal(4), device=device, requires_grad=True)
    y = F.conv_transpose2d(x, w, b, stride=(2, 1), padding=(0, 1), groups=2, output_padding=(1, 0))
    assert tuple(y.shape) == (4, 7, 1) and type(y.grad_fn).__name__ == "SqueezeBackward1"
    assert gradcheck(lambda a, c, d: F.conv_transpose2d(a, c, d, stride=(2, 1), padding=(0, 1), groups=2,
                                                        output_padding=(1, 0)), (x, w, b))
    x1 = ctorch.tensor(RNG.standard_normal((1, 2, 4)), device=device, requires_grad=True)
    w1 = ctorch.tensor(RNG.standard_normal((2, 3, 2)), device=device, requires_grad=True)
    assert gradcheck(lambda a, c: F.conv_transpose1d(a, c, stride=2, dilation=2, output_padding=1), (x1, w1))
    # second derivative: gx = 2 A^T A x for the linear map A = conv_transpose1d(., w1), so d sum(gx) / dx is gx
    # at x = ones (test_conv.py checks every argument's second derivatives against finite differences)
    (gx,) = ctorch.autograd.grad(F.conv_transpose1d(x1, w1, stride=2).pow(2).sum(), x1, create_graph=True)
    assert type(gx.grad_fn).__name__ == "ConvolutionBackwardBackward0"
    gx.sum().backward()
    ones = ctorch.ones_like(x1).requires_grad_()
    (want,) = ctorch.autograd.grad(F.conv_transpose1d(ones, w1, stride=2).pow(2).sum(), ones)
    np.testing.assert_allclose(to_numpy(x1.grad), to_numpy(want), rtol=1e-12)


CT_ERRORS = [
    (dict(stride=2, padding=1, output_padding=2), RuntimeError,
     "output padding must be smaller than either stride or dilation, but got output_padding_height: 2 "
     "output_padding_width: 2 stride_height: 2 stride_width: 2 dilation_height: 1 dilation_width: 1"),
    (dict(weight=(3, 3, 3, 2)), RuntimeError,
     "Given transposed=1, weight of size [3, 3, 3, 2], expected input[2, 4, 5, 6] to have 3 channels, but got 4 "
     "channels instead"),
    (dict(bias=4), RuntimeError,
     "Given transposed=1, weight of size [4, 3, 3, 2], expected bias to be 1-dimensional with 3 elements, but got "
     "bias of size [4] instead"),
    (dict(weight=(4, 3, 3)), RuntimeError,
     "expected stride to be a single integer value or a list of 1 values to match the convolution dimensions, but "
     "got stride=[1, 1]"),
    (dict(x=(5, 6)), RuntimeError,
     "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of size: [5, 6]"),
    (dict(stride=0), RuntimeError, "non-positive stride is not supported"),
    (dict(padding=-1), RuntimeError, "negative padding is not supported"),
    (dict(output_padding=-1), RuntimeError, "negative output_padding is not supported"),
    (dict(groups=0), RuntimeError, "non-positive groups is not supported"),
    (dict(groups=3), RuntimeError,
     "Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight of size [[4, 3, 3, 2]] "
     "instead"),
    (dict(padding=(1, 2, 3)), RuntimeError,
     "expected padding to be a single integer value or a list of 2 values to match the convolution dimensions, but "
     "got padding=[1, 2, 3]"),
    (dict(x=(2, 4, 0, 6)), RuntimeError,
     "Only zero batch or zero channel inputs are supported, but got input shape: [2, 4, 0, 6]"),
    (dict(padding="same"), TypeError, "conv_transpose2d(): argument 'padding' must be tuple of ints, not str"),
]


@pytest.mark.parametrize("device", DEVICES)
def test_conv_transpose_errors(device):
    for kw, exc, msg in CT_ERRORS:
        kw = dict(kw)
        x = ctorch.zeros(kw.pop("x", (2, 4, 5, 6)), device=device)
        w = ctorch.zeros(kw.pop("weight", (4, 3, 3, 2)), device=device)
        b = ctorch.zeros(kw.pop("bias"), device=device) if "bias" in kw else None
        with pytest.raises(exc) as info:
            F.conv_transpose2d(x, w, b, **kw)
        assert str(info.value) == msg, kw
    with pytest.raises(RuntimeError) as info:
        F.conv_transpose2d(ctorch.zeros((2, 4, 5, 6), device=device), ctorch.zeros((4, 3, 3, 2), device=device,
                                                                                 dtype=ctorch.float64))
    assert str(info.value).startswith("Input type (torch.") and "should be the same" in str(info.value)
    with pytest.raises(NotImplementedError) as info:
        F.conv_transpose2d(ctorch.zeros((2, 4, 5, 6), device=device, dtype=ctorch.int32),
                           ctorch.zeros((4, 3, 3, 2), device=device, dtype=ctorch.int32))
    assert str(info.value) == f"\"slow_conv_transpose2d_out_{device}\" not implemented for 'Int'"
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.conv_transpose2d(ctorch.zeros((2, 4, 5, 6), device=device), ctorch.zeros((4, 3, 3, 2), device=device),
                           padding=5)


def test_conv_transpose_modules():
    m = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, bias=False, dilation=2)
    assert repr(m) == ("ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), dilation=(2, 2), "
                       "output_padding=(1, 1), groups=2, bias=False)")
    assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == [("weight", (4, 3, 3, 3))]
    m1 = nn.ConvTranspose1d(4, 6, 3)
    assert repr(m1) == "ConvTranspose1d(4, 6, kernel_size=(3,), stride=(1,))"
    assert [(k, tuple(v.shape)) for k, v in m1.state_dict().items()] == [("weight", (4, 6, 3)), ("bias", (6,))]
    bound = 1 / math.sqrt(6 * 3)  # kaiming_uniform(a=sqrt(5)) over fan_in = weight.size(1) * k
    assert float(m1.weight.abs().max()) <= bound and float(m1.bias.abs().max()) <= bound
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect")
    # output_size picks the output_padding; a strided Conv2d's input shape round-trips
    conv = nn.Conv2d(3, 5, 3, stride=2, padding=1)
    up = nn.ConvTranspose2d(5, 3, 3, stride=2, padding=1)
    for hw in ((8, 9), (7, 6)):
        x = ctorch.zeros((2, 3) + hw)
        y = conv(x)
        assert tuple(up(y, output_size=x.shape).shape) == tuple(x.shape)
        assert tuple(up(y, output_size=hw).shape) == tuple(x.shape)
        z = up(y, output_size=hw)
        np.testing.assert_allclose(to_numpy(z), ref_conv_transpose(to_numpy(y).astype(np.float64),
                                                                   to_numpy(up.weight).astype(np.float64),
                                                                   to_numpy(up.bias).astype(np.float64), 2, stride=2,
                                                                   padding=1,
                                                                   output_padding=tuple((v + 1) % 2 for v in hw)),
                                   rtol=1e-5, atol=1e-5)
    m2 = nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 1))
    with pytest.raises(ValueError) as info:
        m2(ctorch.zeros((2, 4, 5, 6)), output_size=(13, 7))
    assert str(info.value) == ("requested an output size of (13, 7), but valid sizes range from [11, 7] to [12, 7] "
                               "(for an input of torch.Size([5, 6]))")
    with pytest.raises(ValueError) as info:
        m2(ctorch.zeros((2, 4, 5, 6)), output_size=(11,))
    assert str(info.value) == "ConvTranspose2D: for 4D input, output_size must have 2 or 4 elements (got 1)"


# ====================================================================================================
# F.unfold / F.fold, nn.Unfold / nn.Fold (csrc/conv.c's im2col / col2im)
# ====================================================================================================
def ref_unfold(x, k, d=(1, 1), p=(0, 0), s=(1, 1)):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    bh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    bw = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.zeros((n, c, k[0], k[1], bh, bw), dtype=x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            out[:, :, i, j] = xp[:, :, i * d[0]:i * d[0] + (bh - 1) * s[0] + 1:s[0],
                                 j * d[1]:j * d[1] + (bw - 1) * s[1] + 1:s[1]]
    return out.reshape(n, c * k[0] * k[1], bh * bw)


def ref_fold(cols, size, k, d=(1, 1), p=(0, 0), s=(1, 1)):
    """unfold's adjoint: each image element sums the columns that copy it."""
    n, ck, _ = cols.shape
    c = ck // (k[0] * k[1])
    out = np.zeros((n, c) + tuple(size))
    for idx in np.ndindex(c, *size):
        e = np.zeros((1, c) + tuple(size))
        e[(0,) + idx] = 1
        out[(slice(None),) + idx] = np.einsum("ncl,cl->n", cols, ref_unfold(e, k, d, p, s)[0])
    return out


FOLD_CASES = [((2, 3, 5, 6), dict(kernel_size=2)),
              ((2, 3, 5, 6), dict(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1))),
              ((1, 2, 4, 4), dict(kernel_size=3, padding=(2, 0), stride=3))]


@pytest.mark.parametrize("device", DEVICES)
def test_unfold_fold_values_and_grads(device):
    for shape, kw in FOLD_CASES:
        k = F._pair(kw["kernel_size"])
        args = [F._pair(kw.get(a, dflt)) for a, dflt in (("dilation", 1), ("padding", 0), ("stride", 1))]
        xn = RNG.standard_normal(shape)
        want = ref_unfold(xn, k, *args)
        for dtype in ("float64", "float32", "bfloat16"):
            t = ctorch.tensor(xn, dtype=getattr(ctorch, dtype), device=device)
            out = F.unfold(t, **kw)
            assert out.dtype == t.dtype
            np.testing.assert_array_equal(to_numpy(out), ref_unfold(to_numpy(t), k, *args))
        x = ctorch.tensor(xn, device=device, requires_grad=True)
        cols = F.unfold(x, **kw)
        assert type(cols.grad_fn).__name__ == "Im2ColBackward0"
        np.testing.assert_array_equal(to_numpy(cols), want)
        np.testing.assert_array_equal(to_numpy(F.unfold(x[0], **kw)), want[0])  # unbatched
        np.testing.assert_array_equal(to_numpy(nn.Unfold(**kw)(x.transpose(2, 3).transpose(2, 3))), want)
        g = RNG.standard_normal(want.shape)
        folded = F.fold(ctorch.tensor(g, device=device, requires_grad=True), shape[2:], **kw)
        assert type(folded.grad_fn).__name__ == "Col2ImBackward0"
        np.testing.assert_allclose(to_numpy(folded), ref_fold(g, shape[2:], k, *args), rtol=1e-12, atol=1e-12)
        cols.backward(ctorch.tensor(g, device=device))
        np.testing.assert_allclose(to_numpy(x.grad), to_numpy(folded), rtol=0, atol=0)
        assert gradcheck(lambda a: F.fold(F.unfold(a, **kw) * 2.0, shape[2:], **kw),
                         (ctorch.tensor(xn[:1, :2], device=device, requires_grad=True),))
    # bool folds to any(); an empty batch works
    b = ctorch.tensor(RNG.standard_normal((2, 12, 20)) > 0.8, device=device)
    fb = F.fold(b, (5, 6), 2)
    assert fb.dtype == ctorch.bool
    np.testing.assert_array_equal(to_numpy(fb), ref_fold(to_numpy(b).astype(np.float64), (5, 6), (2, 2)) > 0)
    assert tuple(F.unfold(ctorch.zeros((0, 3, 5, 6), device=device), 2).shape) == (0, 12, 20)
    assert tuple(F.fold(ctorch.zeros((0, 12, 20), device=device), (5, 6), 2).shape) == (0, 3, 5, 6)


FOLD_ERRORS = [
    (lambda x, c: F.unfold(x, 7), RuntimeError,
     "Given input with spatial size (5, 6), kernel_size=(7, 7), dilation=(1, 1), padding=(0, 0), calculated shape of "
     "the array of sliding blocks as (-1, 0), but its components must be at least one."),
    (lambda x, c: F.unfold(x, 2, stride=0), RuntimeError,
     "stride should be greater than zero, but got stride_height: 0 stride_width: 0"),
    (lambda x, c: F.unfold(x, 0), RuntimeError,
     "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 0"),
    (lambda x, c: F.unfold(x, 2, padding=-1), RuntimeError,
     "padding should be non-negative, but got pad_height: -1 pad_width: -1"),
    (lambda x, c: F.unfold(x, 2, dilation=0), RuntimeError,
     "dilation should be greater than zero, but got dilation_height: 0 dilation_width: 0"),
    (lambda x, c: F.unfold(x.int(), 2), NotImplementedError, "\"im2col_out_{dev}\" not implemented for 'Int'"),
    (lambda x, c: F.unfold(x, (2, 2, 2)), RuntimeError, "It is expected kernel_size equals to 2, but got size 3"),
    (lambda x, c: F.unfold(x[0, 0], 2), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda x, c: F.unfold(x[:, :0], 2), RuntimeError,
     "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but "
     "got: [2, 0, 5, 6]"),
    (lambda x, c: F.fold(c, (5, 7), 2), RuntimeError,
     "Given output_size=(5, 7), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), stride=(1, 1), expected size of "
     "input's dimension 2 to match the calculated number of sliding blocks 4 * 6 = 24, but got input.size(2)=20."),
    (lambda x, c: F.fold(c[:, :11], (5, 6), 2), RuntimeError,
     "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)=11 "
     "and kernel_size=(2, 2)."),
    (lambda x, c: F.fold(c[..., None], (5, 6), 2), RuntimeError,
     "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, "
     "but got: [2, 12, 20, 1]"),
    (lambda x, c: F.fold(c.int(), (5, 6), 2), NotImplementedError, "\"col2im_out_{dev}\" not implemented for 'Int'"),
    (lambda x, c: F.fold(c, (5, 6, 7), 2), RuntimeError, "It is expected output_size equals to 2, but got size 3"),
]


@pytest.mark.parametrize("device", DEVICES)
def test_unfold_fold_errors_and_modules(device):
    x = ctorch.zeros((2, 3, 5, 6), device=device)
    c = ctorch.zeros((2, 12, 20), device=device)
    for fn, exc, msg in FOLD_ERRORS:
        with pytest.raises(exc) as info:
            fn(x, c)
        assert str(info.value) == msg.format(dev=device)
    assert repr(nn.Unfold((2, 3), dilation=1, padding=0, stride=1)) == \
        "Unfold(kernel_size=(2, 3), dilation=1, padding=0, stride=1)"
    assert repr(nn.Fold((5, 6), 2, stride=2)) == \
        "Fold(output_size=(5, 6), kernel_size=2, dilation=1, padding=0, stride=2)"


# ====================================================================================================
# pixel_shuffle / pixel_unshuffle, dropout1d/2d/3d, instance_norm (csrc/spatial.c)
# ====================================================================================================
def ref_pixel_shuffle(x, r):
    *b, c, h, w = x.shape
    return x.reshape(*b, c // (r * r), r, r, h, w).transpose(*range(len(b)), len(b), len(b) + 3, len(b) + 1,
                                                              len(b) + 4, len(b) + 2).reshape(*b, c // (r * r), h * r,
                                                                                             w * r)


@pytest.mark.parametrize("device", DEVICES)
def test_pixel_shuffle(device):
    for shape, r, dtype in (((2, 8, 3, 4), 2, "float64"), ((18, 2, 3), 3, "int32"), ((2, 1, 4, 1, 2), 1, "float32"),
                            ((0, 4, 2, 2), 2, "bfloat16")):
        xn = RNG.standard_normal(shape)
        x = ctorch.tensor(xn, dtype=getattr(ctorch, dtype), device=device)
        y = F.pixel_shuffle(x, r)
        assert y.dtype == x.dtype and y.is_contiguous()
        np.testing.assert_array_equal(to_numpy(y), ref_pixel_shuffle(to_numpy(x), r))
        back = nn.PixelUnshuffle(r)(y)
        np.testing.assert_array_equal(to_numpy(back), to_numpy(x))
        if r == 1:
            assert y.data_ptr() != x.data_ptr()  # a new tensor, as PyTorch's
    x = ctorch.tensor(RNG.standard_normal((1, 4, 2, 4)), device=device, requires_grad=True)
    assert type(F.pixel_shuffle(x, 2).grad_fn).__name__ == "PixelShuffleBackward0"
    assert type(F.pixel_unshuffle(x, 2).grad_fn).__name__ == "PixelUnshuffleBackward0"
    assert gradcheck(lambda t: F.pixel_shuffle(t, 2) * 3.0, (x,))
    assert gradcheck(lambda t: F.pixel_unshuffle(t, 2) * 3.0, (x,))
    z = ctorch.zeros((2, 8, 3, 4), device=device)
    errors = [
        (lambda: F.pixel_shuffle(z, 3), "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
                                        "square of upscale_factor, but input.size(-3)=8 is not divisible by 9"),
        (lambda: F.pixel_unshuffle(z, 2), "pixel_unshuffle expects height to be divisible by downscale_factor, but "
                                          "input.size(-2)=3 is not divisible by 2"),
        (lambda: F.pixel_unshuffle(z, 3), "pixel_unshuffle expects width to be divisible by downscale_factor, but "
                                          "input.size(-1)=4 is not divisible by 3"),
        (lambda: F.pixel_shuffle(z[0, 0], 2), "pixel_shuffle expects input to have at least 3 dimensions, but got "
                                              "input with 2 dimension(s)"),
        (lambda: F.pixel_shuffle(z, 0), "pixel_shuffle expects a positive upscale_factor, but got 0"),
        (lambda: F.pixel_unshuffle(z, -1), "pixel_unshuffle expects a positive downscale_factor, but got -1"),
    ]
    for fn, msg in errors:
        with pytest.raises(RuntimeError) as info:
            fn()
        assert str(info.value) == msg
    assert repr(nn.PixelShuffle(2)) == "PixelShuffle(upscale_factor=2)"
    assert repr(nn.PixelUnshuffle(3)) == "PixelUnshuffle(downscale_factor=3)"


@pytest.mark.parametrize("device", DEVICES)
def test_channel_dropout(device):
    ctorch.manual_seed(3)
    for fn, shape, unbatched in ((F.dropout1d, (4, 16, 5), False), (F.dropout1d, (16, 5), True),
                                 (F.dropout2d, (4, 16, 3, 2), False), (F.dropout3d, (4, 16, 2, 2, 2), False),
                                 (F.dropout3d, (16, 2, 2, 2), True)):
        x = ctorch.tensor(RNG.random(shape) + 1.0, device=device, requires_grad=True)
        y = fn(x, p=0.25)
        assert tuple(y.shape) == shape and y.dtype == x.dtype
        yn = to_numpy(y)
        planes = yn.reshape((1,) + shape[:1] + (-1,) if unbatched else shape[:2] + (-1,))
        xs = to_numpy(x).reshape(planes.shape)
        kept = np.all(planes != 0, axis=-1)
        assert np.all(kept | np.all(planes == 0, axis=-1))  # whole channels are dropped
        np.testing.assert_allclose(planes[kept], xs[kept] / 0.75, rtol=1e-12)
        assert 0 < kept.sum() < kept.size
        assert type(y.grad_fn).__name__ in ("MulBackward0", "SqueezeBackward1")
        y.sum().backward()
        np.testing.assert_allclose(to_numpy(x.grad).reshape(planes.shape),
                                   np.broadcast_to(np.where(kept[..., None], 1 / 0.75, 0.0), planes.shape), rtol=1e-12)
    x = ctorch.ones((2, 3, 4), device=device)
    assert F.dropout1d(x, training=False) is x and F.dropout2d(x.view(2, 3, 2, 2), p=0.0) is not None
    np.testing.assert_array_equal(to_numpy(F.dropout2d(x.view(2, 3, 2, 2), p=1.0)), np.zeros((2, 3, 2, 2)))
    for shape, fn in (((2, 3, 4), F.dropout1d), ((8, 4), F.dropout1d), ((6, 2, 2, 2), F.dropout3d)):
        leaf = ctorch.ones(shape, device=device, requires_grad=True)
        xi = leaf * 1.0
        assert fn(xi, p=0.5, inplace=True) is xi
        vals = to_numpy(xi)
        assert set(np.unique(vals)) <= {0.0, 2.0}
        flat = vals.reshape(shape[0] if len(shape) in (2, 4) else shape[0] * shape[1], -1)
        assert np.all((flat == 0).all(1) | (flat == 2).all(1))  # whole channels
        xi.sum().backward()
        np.testing.assert_array_equal(to_numpy(leaf.grad), vals)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(ctorch.zeros((2, 3, 4, 5), device=device))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout2d(1.5)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions in the input"):
        ctorch.feature_dropout(ctorch.ones(3, device=device), 0.5, True)
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(x)
    assert repr(nn.Dropout2d(0.3)) == "Dropout2d(p=0.3, inplace=False)"
    assert repr(nn.Dropout3d(inplace=True)) == "Dropout3d(p=0.5, inplace=True)"
    m = nn.Dropout1d(0.9).eval()
    assert m(x) is x


def ref_instance_norm(x, w=None, b=None, eps=1e-5):
    axes = tuple(range(2, x.ndim))
    mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return y * (1 if w is None else w.reshape(shape)) + (0 if b is None else b.reshape(shape))


@pytest.mark.parametrize("device", DEVICES)
def test_instance_norm(device):
    xn = RNG.standard_normal((2, 3, 5)) * 3 + 1
    wn, bn = RNG.standard_normal(3), RNG.standard_normal(3)
    for dtype in ("float64", "float32", "float16"):
        dt = getattr(ctorch, dtype)
        x = ctorch.tensor(xn, dtype=dt, device=device)
        out = F.instance_norm(x, weight=ctorch.tensor(wn, dtype=dt, device=device),
                              bias=ctorch.tensor(bn, dtype=dt, device=device))
        assert out.dtype == dt
        rtol, atol = TOL[dtype]
        np.testing.assert_allclose(to_numpy(out), ref_instance_norm(to_numpy(x).astype(np.float64), wn, bn),
                                   rtol=10 * rtol, atol=10 * atol)
    # running statistics: the mean over the batch of each instance's momentum update
    rm = ctorch.zeros(3, dtype=ctorch.float64, device=device)
    rv = ctorch.ones(3, dtype=ctorch.float64, device=device)
    F.instance_norm(ctorch.tensor(xn, device=device), rm, rv, momentum=0.5)
    np.testing.assert_allclose(to_numpy(rm), 0.5 * xn.mean(axis=2).mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(rv), 0.5 + 0.5 * xn.var(axis=2, ddof=1).mean(axis=0), rtol=1e-12)
    ev = F.instance_norm(ctorch.tensor(xn, device=device), rm, rv, use_input_stats=False)
    np.testing.assert_allclose(to_numpy(ev), (xn - to_numpy(rm)[:, None]) / np.sqrt(to_numpy(rv)[:, None] + 1e-5),
                               rtol=1e-12)
    # gradients through the composite (ViewBackward0 as in PyTorch)
    x = ctorch.tensor(RNG.standard_normal((2, 2, 4)), device=device, requires_grad=True)
    w = ctorch.tensor(RNG.standard_normal(2), device=device, requires_grad=True)
    assert type(F.instance_norm(x, weight=w).grad_fn).__name__ == "ViewBackward0"
    assert gradcheck(lambda a, c: F.instance_norm(a, weight=c), (x, w))
    # modules: parameters, buffers, train / eval, unbatched, errors
    m = nn.InstanceNorm1d(3, affine=True, track_running_stats=True).double().to(device)
    assert repr(m) == "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    m(ctorch.tensor(xn, device=device))
    np.testing.assert_allclose(to_numpy(m.running_mean), 0.1 * xn.mean(axis=2).mean(axis=0), rtol=1e-12)
    m.eval()
    np.testing.assert_allclose(to_numpy(m(ctorch.tensor(xn[0], device=device))),
                               to_numpy(m(ctorch.tensor(xn, device=device)))[0], rtol=1e-12)
    m2 = nn.InstanceNorm2d(3)
    assert repr(m2) == "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)"
    assert list(m2.state_dict()) == []
    x4 = RNG.standard_normal((2, 3, 4, 5))
    np.testing.assert_allclose(to_numpy(m2.to(device)(ctorch.tensor(x4, device=device))), ref_instance_norm(x4),
                               rtol=1e-10, atol=1e-10)
    x5 = RNG.standard_normal((3, 2, 4, 5))
    np.testing.assert_allclose(to_numpy(nn.InstanceNorm3d(3)(ctorch.tensor(x5, device=device))),
                               ref_instance_norm(x5[None])[0], rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        m2(ctorch.zeros((3, 4), device=device))
    with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match num_features \(3\), but got: 4."):
        nn.InstanceNorm1d(3, affine=True)(ctorch.zeros((2, 4, 5), device=device))
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training, got input size"):
        F.instance_norm(ctorch.zeros((2, 3, 1), device=device))
    with pytest.raises(RuntimeError, match="Expected running_mean and running_var to be defined when use_input_stats "
                                           "is false"):
        F.instance_norm(ctorch.zeros((2, 3, 4), device=device), use_input_stats=False)
