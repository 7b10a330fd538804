"""Spatial nn ops: F.interpolate / nn.Upsample* (csrc/upsample.c, csrc/cuda/upsample.cu) against a
NumPy reference written here as per-axis interpolation matrices (PyTorch's index and coordinate
rules: scale factor or size, align_corners, nearest indices in float32), their gradients (the
matrices transposed, gradcheck, double backward), grad_fn names, the modules and their reprs, and
PyTorch's errors (messages produced with the reference torch at /work/torchref)."""
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
    (dict(scale_factor=2, mode="bilinear"), (2, 3, 4), NotImplementedError, "Got 3D input, but bilinear mode needs 4D input"),
    (dict(scale_factor=2, mode="linear"), (2, 3, 4, 5), NotImplementedError, "Got 4D input, but linear mode needs 3D input"),
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
    with pytest.raises(NotImplementedError, match="antialias"):
        F.interpolate(ctorch.zeros((1, 1, 2, 2), device=device), scale_factor=2, mode="bilinear", antialias=True)
