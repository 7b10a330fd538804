"""Pooling (csrc/pool.c, csrc/cuda/pool.cu): max_pool1d/2d, avg_pool1d/2d, adaptive_avg/max_pool1d/2d
against a NumPy reference written here (windows, PyTorch's output-size and ceil_mode rules, the NaN
rule of max pooling, the divisors of average pooling), their gradients (NumPy scatter, gradcheck,
double backward), grad_fn names, the modules and their reprs, and PyTorch's errors (messages
produced with the reference torch at /work/torchref). CUDA must give the CPU's bits."""
import sys

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
import ctorch.nn.functional as F
from ctorch.autograd import gradcheck
from conftest import DEVICES, TOL, to_numpy

RNG = np.random.default_rng(2024)
FLOATS = ["float32", "float64", "float16", "bfloat16"]


# ====================================================================================================
# NumPy reference: x is (..., H, W); returns (..., OH, OW) values and plane indices
# ====================================================================================================
def _pair(v):
    return tuple(v) * (2 // len(v)) if isinstance(v, (tuple, list)) else (v, v)


def ref_out_size(n, k, s, p, d, ceil):
    o = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def _pick_max(win, pos):
    """win (..., n) in scan order, pos (n,) plane positions: the max (first of equals) or, when the
    window holds NaN, its last NaN, as PyTorch."""
    isnan = np.isnan(win) if win.dtype.kind == "f" else np.zeros(win.shape, bool)
    first_max = np.argmax(np.where(isnan, -np.inf, win) if win.dtype.kind == "f" else win, axis=-1)
    last_nan = win.shape[-1] - 1 - np.argmax(isnan[..., ::-1], axis=-1)
    at = np.where(isnan.any(-1), last_nan, first_max)
    return np.take_along_axis(win, at[..., None], -1)[..., 0], pos[at]


def ref_windows(kind, H, W, oh_n, ow_n, k=None, s=None, p=None, d=(1, 1), ceil=False):
    """[(oh, ow, rows, cols, padded_h, padded_w)] for each output."""
    out = []
    for oh in range(oh_n):
        for ow in range(ow_n):
            axes = []
            for o, n, on, a in ((oh, H, oh_n, 0), (ow, W, ow_n, 1)):
                if kind == "adaptive":
                    st, en = o * n // on, -(-(o + 1) * n // on)
                    axes.append((list(range(st, en)), en - st))
                elif kind == "max":
                    st = o * s[a] - p[a]
                    axes.append(([st + i * d[a] for i in range(k[a]) if 0 <= st + i * d[a] < n], 0))
                else:
                    st = o * s[a] - p[a]
                    en = min(st + k[a], n + p[a])
                    axes.append((list(range(max(st, 0), min(en, n))), en - st))
            out.append((oh, ow, axes[0][0], axes[1][0], axes[0][1], axes[1][1]))
    return out


def ref_max_pool2d(x, k, s=None, p=0, d=1, ceil=False):
    k, p, d = _pair(k), _pair(p), _pair(d)
    s = k if s is None or s == () else _pair(s)
    H, W = x.shape[-2:]
    OH, OW = (ref_out_size(n, k[a], s[a], p[a], d[a], ceil) for a, n in ((0, H), (1, W)))
    return _max_over(x, ref_windows("max", H, W, OH, OW, k, s, p, d, ceil), OH, OW)


def ref_adaptive_max(x, size):
    H, W = x.shape[-2:]
    return _max_over(x, ref_windows("adaptive", H, W, *size), *size)


def _max_over(x, windows, OH, OW):
    out = np.zeros(x.shape[:-2] + (OH, OW), x.dtype)
    idx = np.zeros(x.shape[:-2] + (OH, OW), np.int64)
    W = x.shape[-1]
    for oh, ow, rows, cols, _, _ in windows:
        pos = np.array([r * W + c for r in rows for c in cols])
        win = x.reshape(x.shape[:-2] + (-1,))[..., pos]
        out[..., oh, ow], idx[..., oh, ow] = _pick_max(win, pos)
    return out, idx


def ref_avg_pool2d(x, k, s=None, p=0, ceil=False, count_include_pad=True, divisor_override=None):
    k, p = _pair(k), _pair(p)
    s = k if s is None or s == () else _pair(s)
    H, W = x.shape[-2:]
    OH, OW = (ref_out_size(n, k[a], s[a], p[a], 1, ceil) for a, n in ((0, H), (1, W)))
    return _avg_over(x, ref_windows("avg", H, W, OH, OW, k, s, p), OH, OW,
                     lambda r, c, ph, pw: divisor_override or (ph * pw if count_include_pad else len(r) * len(c)))


def ref_adaptive_avg(x, size):
    H, W = x.shape[-2:]
    return _avg_over(x, ref_windows("adaptive", H, W, *size), *size, lambda r, c, ph, pw: ph * pw)


def _avg_over(x, windows, OH, OW, divisor):
    out = np.zeros(x.shape[:-2] + (OH, OW), x.dtype)
    for oh, ow, rows, cols, ph, pw in windows:
        total = x[..., rows, :][..., cols].sum(axis=(-1, -2))
        div = divisor(rows, cols, ph, pw)
        if x.dtype.kind == "i":  # C division: truncation toward zero
            out[..., oh, ow] = np.sign(total) * np.sign(div) * (np.abs(total) // abs(div))
        else:
            out[..., oh, ow] = total / div
    return out


def ref_avg_backward(x_shape, g, windows_and_divisors):
    gi = np.zeros(x_shape)
    for (oh, ow, rows, cols, _, _), div in windows_and_divisors:
        for r in rows:
            gi[..., r, cols] += (g[..., oh, ow] / div)[..., None]
    return gi


def ref_max_backward(x_shape, g, idx):
    gi = np.zeros(x_shape[:-2] + (x_shape[-2] * x_shape[-1],))
    lead = int(np.prod(x_shape[:-2]))
    gf, idf, gif = g.reshape(lead, -1), idx.reshape(lead, -1), gi.reshape(lead, -1)
    for i in range(lead):
        np.add.at(gif[i], idf[i], gf[i])
    return gi.reshape(x_shape)


# ====================================================================================================
# helpers
# ====================================================================================================
def tensor(a, device, dtype="float64", requires_grad=False):
    return ctorch.tensor(np.asarray(a), dtype=getattr(ctorch, dtype), device=device, requires_grad=requires_grad)


def quantised(dtype, a):
    """a as the dtype holds it (a float64 array), so the reference sees the same inputs."""
    return to_numpy(ctorch.tensor(a, dtype=getattr(ctorch, dtype))).astype(np.float64)


def check(actual, expected, dtype):
    rtol, atol = TOL.get(dtype, (0, 0))
    if dtype in ("float16", "bfloat16"):  # a mean rounds once more than the sum
        rtol, atol = rtol * 4, atol * 4
    a = to_numpy(actual)
    assert a.shape == expected.shape, (a.shape, expected.shape)
    if dtype in TOL:
        np.testing.assert_allclose(a.astype(np.float64), expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, expected)


MAX2D = [  # kernel_size, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False), (3, 2, 1, 1, True), ((2, 3), (1, 2), (1, 1), (2, 1), True), (3, 1, 1, 2, False),
    (4, 3, 2, 1, True),
]
AVG2D = [  # kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    (2, None, 0, False, True, None), (3, 2, 1, True, True, None), (3, 2, 1, True, False, None),
    ((2, 3), (1, 2), (1, 1), True, False, None), (4, 3, 2, False, True, 5), (3, 2, 1, True, False, -3),
]
ADAPTIVE = [(3, 4), (1, 1), (7, 9), (10, 11), (0, 2), (2, 5)]


# ====================================================================================================
# forward against NumPy
# ====================================================================================================
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_max_pool2d(device, dtype):
    a = quantised(dtype, np.round(RNG.standard_normal((2, 3, 7, 9)) * 4) / 4)  # ties: the first wins
    x = tensor(a, device, dtype)
    for k, s, p, d, c in MAX2D:
        out, idx = F.max_pool2d(x, k, s, p, d, c, return_indices=True)
        e_out, e_idx = ref_max_pool2d(a, k, s, p, d, c)
        check(out, e_out, dtype)
        np.testing.assert_array_equal(to_numpy(idx), e_idx)
        assert idx.dtype == ctorch.int64 and out.dtype == x.dtype
        check(F.max_pool2d(x, k, s, p, d, c), e_out, dtype)
        check(nn.MaxPool2d(k, s, p, d, ceil_mode=c)(x[0]), e_out[0], dtype)  # unbatched (C, H, W)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
def test_max_pool2d_integers(device, dtype):
    lo = 0 if dtype == "uint8" else -100
    a = RNG.integers(lo, 100, (2, 2, 6, 7)).astype(dtype)
    a[..., 0, :] = np.iinfo(dtype).min  # the lowest value is a max too (padding never is)
    out, idx = F.max_pool2d(tensor(a, device, dtype), 3, 2, 1, 1, True, True)
    e_out, e_idx = ref_max_pool2d(a, 3, 2, 1, 1, True)
    check(out, e_out, dtype)
    np.testing.assert_array_equal(to_numpy(idx), e_idx)
    out1, idx1 = F.max_pool1d(tensor(a[0], device, dtype), 2, return_indices=True)
    e1, i1 = ref_max_pool2d(a[0][:, :, None, :], (1, 2))
    check(out1, e1[:, :, 0], dtype)
    np.testing.assert_array_equal(to_numpy(idx1), i1[:, :, 0])


@pytest.mark.parametrize("device", DEVICES)
def test_max_pool_nan_and_inf(device):
    nan, inf = np.nan, np.inf
    x = tensor([[[nan, 1.0, nan, 5.0, -inf, -inf, 2.0]]], device, "float32")
    out, idx = F.max_pool1d(x, 3, 1, return_indices=True)  # the last NaN of a window wins
    np.testing.assert_array_equal(to_numpy(idx), [[[2, 2, 2, 3, 6]]])
    np.testing.assert_array_equal(to_numpy(out), [[[nan, nan, nan, 5.0, 2.0]]])
    out, idx = F.max_pool1d(x[..., 4:6], 2, padding=1, return_indices=True)  # all -inf: the first element
    np.testing.assert_array_equal(to_numpy(idx), [[[0, 1]]])
    np.testing.assert_array_equal(to_numpy(out), [[[-inf, -inf]]])
    out, idx = F.adaptive_max_pool1d(x, 2, return_indices=True)
    np.testing.assert_array_equal(to_numpy(idx), [[[2, 3]]])
    a = RNG.standard_normal((2, 5, 6))
    a.flat[RNG.integers(0, a.size, 12)] = np.nan
    out, idx = F.adaptive_max_pool2d(tensor(a, device), (3, 4), return_indices=True)
    e_out, e_idx = ref_adaptive_max(a, (3, 4))
    np.testing.assert_array_equal(to_numpy(idx), e_idx)
    np.testing.assert_array_equal(to_numpy(out), e_out)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_avg_pool2d(device, dtype):
    a = quantised(dtype, RNG.standard_normal((2, 3, 7, 9)))
    x = tensor(a, device, dtype)
    for k, s, p, c, cip, div in AVG2D:
        check(F.avg_pool2d(x, k, s, p, c, cip, div), ref_avg_pool2d(a, k, s, p, c, cip, div), dtype)
    check(nn.AvgPool2d(3, 2, 1, True, False)(x[1]), ref_avg_pool2d(a[1], 3, 2, 1, True, False), dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_avg_pool_int64(device):
    a = RNG.integers(-50, 50, (2, 2, 5, 7))
    x = tensor(a, device, "int64")
    for k, s, p, c, cip, div in AVG2D:
        out = F.avg_pool2d(x, k, s, p, c, cip, div)  # C's division of the integer sum
        assert out.dtype == ctorch.int64
        np.testing.assert_array_equal(to_numpy(out), ref_avg_pool2d(a, k, s, p, c, cip, div))
    np.testing.assert_array_equal(to_numpy(F.avg_pool1d(tensor([[[-3, -4, 5, 7, -9]]], device, "int64"), 2,
                                                        ceil_mode=True)), [[[-3, 6, -9]]])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_adaptive_pool2d(device, dtype):
    a = quantised(dtype, RNG.standard_normal((2, 3, 7, 9)))
    x = tensor(a, device, dtype)
    for size in ADAPTIVE:
        check(F.adaptive_avg_pool2d(x, size), ref_adaptive_avg(a, size), dtype)
        out, idx = F.adaptive_max_pool2d(x, size, return_indices=True)
        e_out, e_idx = ref_adaptive_max(a, size)
        check(out, e_out, dtype)
        np.testing.assert_array_equal(to_numpy(idx), e_idx)
    # an int is (n, n); None keeps the input's size along that dim
    check(F.adaptive_avg_pool2d(x, 4), ref_adaptive_avg(a, (4, 4)), dtype)
    check(F.adaptive_avg_pool2d(x[0], (None, 3)), ref_adaptive_avg(a[0], (7, 3)), dtype)
    check(nn.AdaptiveMaxPool2d((5, None))(x), ref_adaptive_max(a, (5, 9))[0], dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pool1d(device, dtype):
    a = quantised(dtype, np.round(RNG.standard_normal((2, 3, 11)) * 4) / 4)
    x = tensor(a, device, dtype)
    a4 = a[:, :, None, :]
    for k, s, p, d, c in [(2, None, 0, 1, False), (3, 2, 1, 1, True), (3, 1, 1, 2, False), (4, 3, 2, 2, True)]:
        e_out, e_idx = ref_max_pool2d(a4, (1, k), (1, s or k), (0, p), (1, d), c)
        out, idx = F.max_pool1d(x, k, s, p, d, c, return_indices=True)
        check(out, e_out[:, :, 0], dtype)
        np.testing.assert_array_equal(to_numpy(idx), e_idx[:, :, 0])
        check(F.max_pool1d(x[0], k, s, p, d, c), e_out[0, :, 0], dtype)  # unbatched (C, L)
    for k, s, p, c, cip in [(2, None, 0, False, True), (3, 2, 1, True, False), (4, 3, 2, True, True)]:
        e = ref_avg_pool2d(a4, (1, k), (1, s or k), (0, p), c, cip)[:, :, 0]
        check(F.avg_pool1d(x, k, s, p, c, cip), e, dtype)
        check(nn.AvgPool1d(k, s, p, c, cip)(x[1]), e[1], dtype)
    for n in (1, 4, 15):
        check(F.adaptive_avg_pool1d(x, n), ref_adaptive_avg(a4, (1, n))[:, :, 0], dtype)
        out, idx = nn.AdaptiveMaxPool1d(n, return_indices=True)(x[0])
        e_out, e_idx = ref_adaptive_max(a4[0], (1, n))
        check(out, e_out[:, 0], dtype)
        np.testing.assert_array_equal(to_numpy(idx), e_idx[:, 0])


@pytest.mark.parametrize("device", DEVICES)
def test_layouts_and_empty(device):
    a = RNG.standard_normal((2, 3, 6, 8))
    base = tensor(np.ascontiguousarray(a.transpose(0, 1, 3, 2)), device)
    xt = base.transpose(2, 3)  # non-contiguous
    assert not xt.is_contiguous()
    check(F.max_pool2d(xt, 3, 2, 1), ref_max_pool2d(a, 3, 2, 1)[0], "float64")
    check(F.avg_pool2d(xt, 2), ref_avg_pool2d(a, 2), "float64")
    check(F.adaptive_avg_pool2d(xt[:, :, ::2], (2, 3)), ref_adaptive_avg(a[:, :, ::2], (2, 3)), "float64")
    out = F.max_pool2d(xt, 2)
    assert out.is_contiguous() and tuple(out.shape) == (2, 3, 3, 4)
    # an empty batch (and empty channels for the adaptive average) give empty outputs
    e = tensor(np.zeros((0, 3, 6, 8)), device)
    assert tuple(F.max_pool2d(e, 2).shape) == (0, 3, 3, 4)
    assert tuple(F.max_pool2d(e, 2, return_indices=True)[1].shape) == (0, 3, 3, 4)
    assert tuple(F.avg_pool2d(e, 2).shape) == (0, 3, 3, 4)
    assert tuple(F.adaptive_max_pool2d(e, 2).shape) == (0, 3, 2, 2)
    assert tuple(F.adaptive_avg_pool2d(tensor(np.zeros((2, 0, 4, 4)), device), 2).shape) == (2, 0, 2, 2)
    assert tuple(F.adaptive_max_pool2d(tensor(np.zeros((0, 4, 4)), device), 3).shape) == (0, 3, 3)
    assert tuple(F.max_pool1d(tensor(np.zeros((0, 3, 8)), device), 2).shape) == (0, 3, 4)
    assert tuple(F.adaptive_max_pool1d(tensor(np.zeros((0, 4)), device), 2).shape) == (0, 2)
    assert tuple(F.adaptive_avg_pool2d(tensor(np.zeros((1, 2, 2)), device, "int64"), 0).shape) == (1, 0, 0)


# ====================================================================================================
# gradients
# ====================================================================================================
def _grad_of(fn, x, g):
    out = fn(x)
    out = out[0] if isinstance(out, tuple) else out
    gx, = ctorch.autograd.grad(out, x, g)
    return out, gx


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_backward_vs_numpy(device, dtype):
    a = quantised(dtype, np.round(RNG.standard_normal((2, 2, 7, 8)) * 2) / 2)  # ties share no gradient
    x = tensor(a, device, dtype, requires_grad=True)
    H, W = a.shape[-2:]
    for k, s, p, d, c in MAX2D:
        out, idx = F.max_pool2d(x, k, s, p, d, c, return_indices=True)
        g = quantised(dtype, RNG.standard_normal(tuple(out.shape)))
        gx, = ctorch.autograd.grad(out, x, tensor(g, device, dtype))
        check(gx, ref_max_backward(a.shape, g, to_numpy(idx)), dtype)
    for k, s, p, c, cip, div in AVG2D:
        kk, pp = _pair(k), _pair(p)
        ss = kk if s is None else _pair(s)
        OH, OW = (ref_out_size(n, kk[i], ss[i], pp[i], 1, c) for i, n in ((0, H), (1, W)))
        wins = ref_windows("avg", H, W, OH, OW, kk, ss, pp)
        g = quantised(dtype, RNG.standard_normal(a.shape[:2] + (OH, OW)))
        _, gx = _grad_of(lambda t: F.avg_pool2d(t, k, s, p, c, cip, div), x, tensor(g, device, dtype))
        divs = [div or (ph * pw if cip else len(r) * len(cc)) for _, _, r, cc, ph, pw in wins]
        check(gx, ref_avg_backward(a.shape, g, zip(wins, divs)), dtype)
    for size in [(3, 5), (10, 3)]:
        g = quantised(dtype, RNG.standard_normal(a.shape[:2] + size))
        _, gx = _grad_of(lambda t: F.adaptive_avg_pool2d(t, size), x, tensor(g, device, dtype))
        wins = ref_windows("adaptive", H, W, *size)
        check(gx, ref_avg_backward(a.shape, g, [(w, w[4] * w[5]) for w in wins]), dtype)
        out, idx = F.adaptive_max_pool2d(x, size, return_indices=True)
        gx, = ctorch.autograd.grad(out, x, tensor(g, device, dtype))
        check(gx, ref_max_backward(a.shape, g, to_numpy(idx)), dtype)


GRADCHECK_OPS = {
    "max_pool2d": lambda t: F.max_pool2d(t, 2, 1, 1, 2, True),
    "avg_pool2d": lambda t: F.avg_pool2d(t, (2, 3), (2, 1), 1, True, False),
    "avg_pool2d_divisor": lambda t: F.avg_pool2d(t, 2, 1, 1, divisor_override=3),
    "adaptive_avg_pool2d": lambda t: F.adaptive_avg_pool2d(t, (3, 2)),
    "adaptive_max_pool2d": lambda t: F.adaptive_max_pool2d(t, (3, 2)),
    "max_pool1d": lambda t: F.max_pool1d(t[0], 3, 2, 1, ceil_mode=True),
    "avg_pool1d": lambda t: F.avg_pool1d(t[0], 3, 2, 1, True, False),
    "adaptive_avg_pool1d": lambda t: F.adaptive_avg_pool1d(t[0], 3),
    "adaptive_max_pool1d": lambda t: F.adaptive_max_pool1d(t[0], 3),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", list(GRADCHECK_OPS))
def test_gradcheck(device, op):
    fn = GRADCHECK_OPS[op]
    x = tensor(RNG.standard_normal((1, 2, 4, 5)), device, requires_grad=True)
    assert gradcheck(fn, (x,))
    # double backward: d<grad_x(g), v>/dg is the directional derivative of the forward along v
    y = fn(x)
    y = y[0] if isinstance(y, tuple) else y
    g = tensor(RNG.standard_normal(tuple(y.shape)), device, requires_grad=True)
    gx, = ctorch.autograd.grad(y, x, g, create_graph=True)
    v = RNG.standard_normal(tuple(x.shape))
    dg, = ctorch.autograd.grad((gx * tensor(v, device)).sum(), g)
    eps = 1e-6
    with ctorch.no_grad():
        ahead, behind = (fn(tensor(to_numpy(x) + sign * eps * v, device)) for sign in (1, -1))
    ahead, behind = (r[0] if isinstance(r, tuple) else r for r in (ahead, behind))
    np.testing.assert_allclose(to_numpy(dg), (to_numpy(ahead) - to_numpy(behind)) / (2 * eps), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_grad_fn_names(device):
    x = tensor(RNG.standard_normal((2, 3, 6, 6)), device, requires_grad=True)
    x3 = tensor(RNG.standard_normal((2, 3, 8)), device, requires_grad=True)
    names = {
        "MaxPool2DWithIndicesBackward0": [F.max_pool2d(x, 2), F.max_pool2d(x[0], 2, return_indices=True)[0]],
        "AvgPool2DBackward0": [F.avg_pool2d(x, 2), F.avg_pool2d(x[0], 3, 1, 1)],
        "AdaptiveAvgPool2DBackward0": [F.adaptive_avg_pool2d(x, 3), F.adaptive_avg_pool2d(x, (None, 2))],
        "MeanBackward1": [F.adaptive_avg_pool2d(x, 1), F.adaptive_avg_pool2d(x[0], (1, 1))],
        "AdaptiveMaxPool2DBackward0": [F.adaptive_max_pool2d(x, 3), F.adaptive_max_pool2d(x, 2, True)[0]],
        "SqueezeBackward1": [F.max_pool1d(x3, 2), F.max_pool1d(x3, 2, return_indices=True)[0],
                             F.avg_pool1d(x3, 2), F.adaptive_avg_pool1d(x3, 3), F.adaptive_avg_pool1d(x3, 1),
                             F.adaptive_max_pool1d(x3, 3)],
    }
    for name, outs in names.items():
        for o in outs:
            assert type(o.grad_fn).__name__ == name
    inner = F.max_pool1d(x3, 2).grad_fn.next_functions[0][0]
    assert type(inner).__name__ == "MaxPool2DWithIndicesBackward0"
    assert type(inner.next_functions[0][0]).__name__ == "UnsqueezeBackward0"
    _, idx = F.max_pool2d(x, 2, return_indices=True)
    assert idx.grad_fn is None and not idx.requires_grad
    y = F.adaptive_max_pool2d(x, 4)
    gx, = ctorch.autograd.grad(y, x, ctorch.ones_like(y, requires_grad=True), create_graph=True)
    assert type(gx.grad_fn).__name__ == "AdaptiveMaxPool2DBackwardBackward0"


@pytest.mark.parametrize("device", [p for p in DEVICES if p.values[0] == "cuda"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_cuda_bits_match_cpu(device, dtype):
    a = RNG.standard_normal((2, 3, 9, 10))
    a[0, 0, 2, 3] = np.nan
    g_cache = {}
    for fn in [lambda t: F.max_pool2d(t, 3, 2, 1, 2, True, True), lambda t: F.avg_pool2d(t, 3, 2, 1, True, False),
               lambda t: F.adaptive_avg_pool2d(t, (4, 3)), lambda t: F.adaptive_max_pool2d(t, (4, 6), True)]:
        runs = []
        for dev in ("cpu", device, device):  # the GPU twice: the backward gathers, the same bits every run
            x = tensor(a, dev, dtype, requires_grad=True)
            r = fn(x)
            r = r if isinstance(r, tuple) else (r,)
            g = g_cache.setdefault(tuple(r[0].shape), RNG.standard_normal(tuple(r[0].shape)))
            gx, = ctorch.autograd.grad(r[0], x, tensor(g, dev, dtype))
            runs.append([to_numpy(t) for t in r] + [to_numpy(gx)])
        for other in runs[1:]:
            for u, v in zip(runs[0], other):
                # the same bits, NaN payloads aside (a GPU's arithmetic makes its canonical NaN, x86 keeps
                # the operand's): NaN in the same places, every other element bit for bit
                nan = np.isnan(u)
                assert (nan == np.isnan(v)).all()
                assert u[~nan].tobytes() == v[~nan].tobytes()


# ====================================================================================================
# modules
# ====================================================================================================
def test_module_reprs():
    reprs = {
        nn.MaxPool2d(2): "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)",
        nn.MaxPool2d((2, 3), 1, 1, 2, True, True):
            "MaxPool2d(kernel_size=(2, 3), stride=1, padding=1, dilation=2, ceil_mode=True)",
        nn.MaxPool1d(3): "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)",
        nn.AvgPool2d(2): "AvgPool2d(kernel_size=2, stride=2, padding=0)",
        nn.AvgPool2d((2, 3), 1, 1, True, False, 3): "AvgPool2d(kernel_size=(2, 3), stride=1, padding=1)",
        nn.AvgPool1d(3): "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))",
        nn.AvgPool1d(3, 2, 1, True, False): "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(1,))",
        nn.AdaptiveAvgPool2d(3): "AdaptiveAvgPool2d(output_size=3)",
        nn.AdaptiveAvgPool2d((None, 3)): "AdaptiveAvgPool2d(output_size=(None, 3))",
        nn.AdaptiveAvgPool1d(3): "AdaptiveAvgPool1d(output_size=3)",
        nn.AdaptiveMaxPool2d((2, 3)): "AdaptiveMaxPool2d(output_size=(2, 3))",
        nn.AdaptiveMaxPool1d(3, True): "AdaptiveMaxPool1d(output_size=3)",
    }
    for m, text in reprs.items():
        assert repr(m) == text
        assert m.state_dict() == {} and list(m.parameters()) == []
    m = nn.MaxPool2d(2, return_indices=True)
    assert (m.kernel_size, m.stride, m.padding, m.dilation, m.return_indices, m.ceil_mode) == (2, 2, 0, 1, True, False)
    a = nn.AvgPool2d(3, divisor_override=2)
    assert (a.stride, a.ceil_mode, a.count_include_pad, a.divisor_override) == (3, False, True, 2)
    seq = nn.Sequential(nn.MaxPool2d(2), nn.AdaptiveAvgPool2d(1))
    assert repr(seq) == ("Sequential(\n  (0): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
                         "\n  (1): AdaptiveAvgPool2d(output_size=1)\n)")
    out = seq(ctorch.ones(1, 2, 4, 4))
    assert tuple(out.shape) == (1, 2, 1, 1)
    out, idx = nn.AdaptiveMaxPool2d(2, True)(ctorch.arange(16.0).reshape(1, 4, 4))
    np.testing.assert_array_equal(to_numpy(idx), [[[5, 7], [13, 15]]])


# ====================================================================================================
# errors (messages of the reference torch)
# ====================================================================================================
X4 = np.zeros((2, 3, 8, 8))
X3 = np.zeros((2, 3, 8))
ERRORS = [
    (lambda x, x1: F.max_pool2d(x, 2, padding=2), RuntimeError,
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1"),
    (lambda x, x1: F.max_pool2d(x, (4, 2), padding=(2, 2)), RuntimeError,
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1"),
    (lambda x, x1: F.max_pool2d(x, 2, 1, padding=2, dilation=3), RuntimeError,
     "pad should be smaller than or equal to half of kernel size, but got padW = 2, padH = 2, kW = 2, kH = 2"),
    (lambda x, x1: F.max_pool2d(x, 0), RuntimeError, "stride should not be zero"),
    (lambda x, x1: F.max_pool2d(x, 0, 1), RuntimeError, "kernel size should be greater than zero, but got kH: 0 kW: 0"),
    (lambda x, x1: F.avg_pool2d(x, 2, -1), RuntimeError, "stride should be greater than zero, but got dH: -1 dW: -1"),
    (lambda x, x1: F.max_pool2d(x, 2, dilation=0), RuntimeError,
     "dilation should be greater than zero, but got dilationH: 0 dilationW: 0"),
    (lambda x, x1: F.avg_pool2d(x, 2, padding=-1), RuntimeError, "pad must be non-negative, but got pad: -1"),
    (lambda x, x1: F.max_pool2d(x[:1, :1, :2, :2], 3), RuntimeError,
     "Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small"),
    (lambda x, x1: F.avg_pool2d(x, 9), RuntimeError,
     "Given input size: (3x8x8). Calculated output size: (3x0x0). Output size is too small"),
    (lambda x, x1: F.max_pool2d(x[0, 0], 2), RuntimeError, "non-empty 3D or 4D (batch mode) tensor expected for input"),
    (lambda x, x1: F.max_pool2d(x[:, :0], 2), RuntimeError,
     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[2, 0, 8, 8]"),
    (lambda x, x1: F.max_pool2d(x, (2, 2, 2)), RuntimeError,
     "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    (lambda x, x1: F.max_pool2d(x, 2, (2, 2, 2)), RuntimeError,
     "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints"),
    (lambda x, x1: F.max_pool2d(x, 2, 2, 0, (1, 1, 1)), RuntimeError,
     "max_pool2d: dilation must be either a single int, or a tuple of two ints"),
    (lambda x, x1: F.max_pool2d(x, 2 ** 31), RuntimeError, "value cannot be converted to type int without overflow"),
    (lambda x, x1: F.avg_pool2d(x, 2, 2, (0, 0, 0)), RuntimeError,
     "avg_pool2d: padding must either be a single int, or a tuple of two ints"),
    (lambda x, x1: F.avg_pool2d(x, 2, divisor_override=0), RuntimeError, "divisor must be not zero"),
    (lambda x, x1: F.avg_pool2d(x[0, 0], 2), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
    (lambda x, x1: F.max_pool2d(x, "a"), TypeError,
     "max_pool2d(): argument 'kernel_size' (position 2) must be tuple of ints, not str"),
    (lambda x, x1: F.max_pool2d(x, [2.0, 2]), TypeError,
     "max_pool2d(): argument 'kernel_size' (position 2) must be tuple of ints, but found element of type float at pos 0"),
    (lambda x, x1: F.max_pool2d(x, 2, ceil_mode=2), TypeError,
     "max_pool2d(): argument 'ceil_mode' (position 6) must be bool, not int"),
    (lambda x, x1: F.avg_pool2d(x, 2, divisor_override=True), TypeError,
     "avg_pool2d(): argument 'divisor_override' must be int, not bool"),
    (lambda x, x1: F.max_pool1d(x1, 2, padding=2), RuntimeError,
     "max_pool1d() padding should be at most half of kernel size, but got padding=2 and kernel_size=2"),
    (lambda x, x1: F.max_pool1d(x1, 2, padding=2, return_indices=True), RuntimeError,
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1"),
    (lambda x, x1: F.max_pool1d(x1[0, 0], 2), RuntimeError,
     "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:[8]"),
    (lambda x, x1: F.max_pool1d(x1[0, 0], 2, return_indices=True), RuntimeError,
     "Expected 2 to 3 dimensions, but got 1-dimensional tensor for argument #1 'self' (while checking arguments for "
     "max_pool1d)"),
    (lambda x, x1: F.max_pool1d(x1, 0), RuntimeError, "max_pool1d() kernel_size must be greater than zero, but got 0"),
    (lambda x, x1: F.max_pool1d(x1, 2, dilation=0), RuntimeError,
     "max_pool1d() dilation must be greater than zero, but got 0"),
    (lambda x, x1: F.max_pool1d(x1[:1, :1, :2], 3), RuntimeError, "max_pool1d() Invalid computed output size: 0"),
    (lambda x, x1: F.max_pool1d(x1, (2, 2)), RuntimeError,
     "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got size 2"),
    (lambda x, x1: F.max_pool1d(x1, 2, (1, 1)), RuntimeError,
     "max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 but got size 2"),
    (lambda x, x1: F.max_pool1d(x1, (2, 2), return_indices=True), RuntimeError,
     "max_pool1d() argument 'kernel_size' should contain one int (got 2)"),
    (lambda x, x1: F.avg_pool1d(x, 2), RuntimeError,
     "Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' (while checking arguments for "
     "avg_pool1d)"),
    (lambda x, x1: F.avg_pool1d(x1, 2, 2, (1, 1)), RuntimeError,
     "avg_pool1d() argument 'padding' should contain one int (got 2)"),
    (lambda x, x1: F.avg_pool1d(x1[:, :, :0], 2), RuntimeError,
     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[2, 3, 1, 0]"),
    (lambda x, x1: F.adaptive_avg_pool2d(x, -1), RuntimeError,
     "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {-1, -1}"),
    (lambda x, x1: F.adaptive_avg_pool2d(x[0, 0], 2), RuntimeError,
     "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [8, 8]"),
    (lambda x, x1: F.adaptive_avg_pool2d(x[:, :, :0], 2), RuntimeError,
     "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
     "[2, 3, 0, 8] with dimension 2 being empty"),
    (lambda x, x1: F.adaptive_avg_pool2d(x, (1, 2, 3)), RuntimeError, "adaptive_avg_pool2d: output_size must be 2"),
    (lambda x, x1: F.adaptive_avg_pool2d(x[0, 0], (None, 3)), ValueError, "Input dimension should be at least 3"),
    (lambda x, x1: F.adaptive_avg_pool2d(x, 2.0), TypeError, "object of type 'float' has no len()"),
    (lambda x, x1: F.adaptive_max_pool2d(x, -1), RuntimeError,
     "Trying to create tensor with negative dimension -1: [2, 3, -1, -1]"),
    (lambda x, x1: F.adaptive_max_pool2d(x[:, :0], 2), RuntimeError,
     "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
     "[2, 0, 8, 8] with dimension 1 being empty"),
    (lambda x, x1: F.adaptive_max_pool2d(x[0, 0], 2), RuntimeError,
     "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: [8, 8]"),
    (lambda x, x1: F.adaptive_max_pool2d(x, (1, 2, 3)), RuntimeError,
     "adaptive_max_pool2d(): internal error: output_size.size() must be 2"),
    (lambda x, x1: F.adaptive_avg_pool1d(x1, -1), RuntimeError,
     "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {1, -1}"),
    (lambda x, x1: F.adaptive_avg_pool1d(x1, None), TypeError,
     "adaptive_avg_pool1d(): argument 'output_size' (position 2) must be tuple of ints, not NoneType"),
    (lambda x, x1: F.adaptive_max_pool1d(x1, (2, 2)), RuntimeError,
     "adaptive_max_pool1d() argument 'output_size' should contain one int (got 2)"),
    (lambda x, x1: F.adaptive_max_pool1d(x1[:, :, :0], 2), RuntimeError,
     "adaptive_max_pool1d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
     "[2, 3, 0] with dimension 2 being empty"),
    (lambda x, x1: F.adaptive_max_pool1d(x, 2), RuntimeError,
     "Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' (while checking arguments for "
     "adaptive_max_pool1d)"),
    (lambda x, x1: F.max_pool2d([1.0], 2), TypeError,
     "max_pool2d(): argument 'input' (position 1) must be Tensor, not list"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(device, case):
    fn, exc, msg = ERRORS[case]
    with pytest.raises(exc) as info:
        fn(tensor(X4, device, "float32"), tensor(X3, device, "float32"))
    assert str(info.value) == msg


DTYPE_ERRORS = [  # (op, dtype, kernel name in the message)
    (lambda x: F.max_pool2d(x, 2), "bool", "max_pool2d"),
    (lambda x: F.max_pool2d(x[:0], 2), "bool", "max_pool2d"),
    (lambda x: F.max_pool1d(x[0], 2, return_indices=True), "bool", "max_pool2d"),
    (lambda x: F.avg_pool2d(x, 2), "int8", "avg_pool2d"),
    (lambda x: F.avg_pool2d(x, 2), "uint8", "avg_pool2d"),
    (lambda x: F.avg_pool1d(x[0], 2), "int32", "avg_pool2d"),
    (lambda x: F.adaptive_avg_pool2d(x, 2), "int64", "adaptive_avg_pool2d"),
    (lambda x: F.adaptive_avg_pool1d(x[0], 2), "int16", "adaptive_avg_pool2d"),
    (lambda x: F.adaptive_max_pool2d(x, 0), "int64", "adaptive_max_pool2d"),
]
KERNEL_NAMES = {"bool": "Bool", "int8": "Char", "uint8": "Byte", "int16": "Short", "int32": "Int", "int64": "Long"}


@pytest.mark.parametrize("device", DEVICES)
def test_dtype_errors(device):
    for fn, dtype, kernel in DTYPE_ERRORS:
        x = tensor(np.zeros((2, 3, 4, 4)), device, dtype)
        with pytest.raises(NotImplementedError) as info:
            fn(x)
        assert str(info.value) == f"\"{kernel}\" not implemented for '{KERNEL_NAMES[dtype]}'"
    # max_pool1d without indices and without grad takes the floats only on the CPU (as PyTorch's kernel)
    xi = tensor(np.arange(16).reshape(2, 8), device, "int64")
    if device == "cpu":
        with pytest.raises(NotImplementedError, match="\"max_pool1d_impl\" not implemented for 'Long'"):
            F.max_pool1d(xi, 2)
    else:
        np.testing.assert_array_equal(to_numpy(F.max_pool1d(xi, 2)), np.arange(1, 16, 2).reshape(2, 4))
    np.testing.assert_array_equal(to_numpy(F.max_pool1d(xi, 2, return_indices=True)[0]),
                                  np.arange(1, 16, 2).reshape(2, 4))
    # mean's own error for the 1x1 adaptive average of integers
    with pytest.raises(NotImplementedError) as info:
        F.adaptive_avg_pool2d(tensor(np.zeros((1, 2, 2)), device, "int64"), 1)
    assert str(info.value) == ("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                               "complex dtype. Got: Long")


def test_top_level_functions():
    x = ctorch.tensor(np.arange(16.0).reshape(1, 2, 8))
    np.testing.assert_array_equal(to_numpy(ctorch.max_pool1d(x, 2)), np.arange(1, 16, 2).reshape(1, 2, 4))
    out, idx = ctorch.max_pool1d_with_indices(x, 4, 4)
    np.testing.assert_array_equal(to_numpy(idx), [[[3, 7], [3, 7]]])
    np.testing.assert_array_equal(to_numpy(ctorch.avg_pool1d(x, 4)), [[[1.5, 5.5], [9.5, 13.5]]])
    np.testing.assert_array_equal(to_numpy(ctorch.adaptive_avg_pool1d(x, 2)), [[[1.5, 5.5], [9.5, 13.5]]])
    np.testing.assert_array_equal(to_numpy(ctorch.adaptive_max_pool1d(x, 2)[1]), [[[3, 7], [3, 7]]])
    np.testing.assert_array_equal(to_numpy(ctorch.max_pool2d(x, 2)), [[[9, 11, 13, 15]]])


def test_no_leaks():
    """Every op, its backward and its error paths, many times: no storage or Python object is left."""
    import gc
    x = ctorch.tensor(RNG.standard_normal((1, 2, 6, 6)), requires_grad=True)
    x1 = ctorch.tensor(RNG.standard_normal((2, 6)), requires_grad=True)
    ops = list(GRADCHECK_OPS.values()) + [lambda t: F.max_pool2d(t, 2, return_indices=True)[0],
                                          lambda t: F.adaptive_avg_pool2d(t, (None, 1)),
                                          lambda t: F.adaptive_max_pool2d(t, 4, True)[0]]

    def cycle():
        for fn in ops:
            ctorch.autograd.grad(fn(x).sum(), x)
        ctorch.autograd.grad(F.max_pool1d(x1, 2).sum(), x1, create_graph=True)
        for fn, _, _ in ERRORS[::3]:
            try:
                fn(x, x1)
            except (RuntimeError, TypeError, ValueError, IndexError):
                pass

    cycle()
    gc.collect()
    storages, objects, refs = ctorch._C._live_storages(), len(gc.get_objects()), sys.getrefcount(x)
    for _ in range(50):
        cycle()
    gc.collect()
    assert ctorch._C._live_storages() == storages
    assert sys.getrefcount(x) == refs
    assert len(gc.get_objects()) - objects < 50
