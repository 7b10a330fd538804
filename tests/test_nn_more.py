"""nn layers and losses of csrc/nn_misc.c (RMSNorm, EmbeddingBag, Bilinear, the margin / CTC losses,
gumbel_softmax) and the parameter containers: against NumPy implementations on every device in float32 /
float64, gradcheck in float64, PyTorch's reprs, parameter names / shapes / inits and errors."""
import math
import warnings

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
import ctorch.nn.functional as F
from ctorch.autograd import gradcheck

from conftest import assert_close, to_numpy

FLOATS = ["float32", "float64"]


def T(a, device, dtype=None, grad=False):
    t = ctorch.tensor(np.asarray(a), device=device, dtype=getattr(ctorch, dtype) if dtype else None)
    return t.requires_grad_() if grad else t


# --- NumPy oracles --------------------------------------------------------------------------------------------
def np_rms_norm(x, k, w=None, eps=None):
    eps = np.finfo(x.dtype).eps if eps is None else eps
    axes = tuple(range(x.ndim - k, x.ndim))
    y = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    return y * w if w is not None else y


def np_embedding_bag(idx, W, offsets, mode, psw=None, include_last=False, padding_idx=None):
    nb = len(offsets) - 1 if include_last else len(offsets)
    ends = list(offsets[1:]) + ([] if include_last else [len(idx)])
    out = np.zeros((nb, W.shape[1]), W.dtype)
    for b in range(nb):
        pos = [j for j in range(offsets[b], ends[b]) if idx[j] != padding_idx]
        if not pos:
            continue
        rows = W[idx[pos]] * (psw[pos][:, None] if psw is not None else 1)
        out[b] = rows.sum(0) if mode == "sum" else rows.mean(0) if mode == "mean" else rows.max(0)
    return out


def np_multi_margin(x, y, p, margin, w):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        for j in range(c):
            if j != y[i]:
                z = max(0.0, margin - x[i, y[i]] + x[i, j]) ** p
                out[i] += z * (w[y[i]] if w is not None else 1.0)
    return out / c


def np_multilabel_margin(x, t):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        listed = []
        for v in t[i]:
            if v < 0:
                break
            listed.append(v)
        for j in listed:
            for k in range(c):
                if k not in listed:
                    out[i] += max(0.0, 1.0 - (x[i, j] - x[i, k]))
    return out / c


def np_ctc(lp, targets, il, tl, blank):
    """-log p(target | lp) by the log-space forward recursion, per sample."""
    out = []
    for b in range(lp.shape[1]):
        tgt = list(targets[b][: tl[b]])
        ext = [blank]
        for c in tgt:
            ext += [c, blank]
        L = len(ext)
        alpha = np.full(L, -np.inf)
        if il[b] > 0:
            alpha[0] = lp[0, b, ext[0]]
            if L > 1:
                alpha[1] = lp[0, b, ext[1]]
        for t in range(1, il[b]):
            new = np.full(L, -np.inf)
            for s in range(L):
                terms = [alpha[s]] + ([alpha[s - 1]] if s >= 1 else [])
                if s >= 2 and ext[s] != ext[s - 2]:
                    terms.append(alpha[s - 2])
                new[s] = np.logaddexp.reduce(terms) + lp[t, b, ext[s]]
            alpha = new
        if il[b] == 0:
            out.append(0.0 if L == 1 else np.inf)
            continue
        out.append(-np.logaddexp.reduce([alpha[L - 1]] + ([alpha[L - 2]] if L > 1 else [])))
    return np.array(out)


def np_log_softmax(x, axis):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


# --- rms_norm / RMSNorm -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_rms_norm(device, dtype, rng):
    x = rng.standard_normal((3, 4, 5)).astype(dtype)
    w = rng.standard_normal(5).astype(dtype)
    assert_close(F.rms_norm(T(x, device), (5,), T(w, device)), np_rms_norm(x, 1, w))
    assert_close(F.rms_norm(T(x, device), [4, 5], eps=1e-3), np_rms_norm(x, 2, eps=1e-3))
    assert_close(F.rms_norm(T(x, device).transpose(0, 1), 5), np_rms_norm(x.transpose(1, 0, 2), 1))
    assert F.rms_norm(T(np.zeros((0, 5), dtype), device), (5,)).shape == (0, 5)


def test_rms_norm_half_and_grad(device, rng):
    x = rng.standard_normal((2, 6))
    h = F.rms_norm(T(x, device, "float16"), (6,))
    assert h.dtype == ctorch.float16
    assert_close(h, np_rms_norm(x.astype(np.float16).astype(np.float32), 1, eps=float(np.finfo(np.float16).eps)))
    xt, wt = T(x, device, grad=True), T(rng.standard_normal(6), device, grad=True)
    assert gradcheck(lambda a, b: F.rms_norm(a, (6,), b, 1e-5), (xt, wt))
    assert F.rms_norm(xt, (6,), wt).grad_fn.name() == "MulBackward0"


def test_rms_norm_module_and_errors():
    m = nn.RMSNorm(4)
    assert repr(m) == "RMSNorm((4,), eps=None, elementwise_affine=True)"
    assert repr(nn.RMSNorm([2, 3], eps=1e-3, elementwise_affine=False)) == \
        "RMSNorm((2, 3), eps=0.001, elementwise_affine=False)"
    assert list(m.state_dict()) == ["weight"] and m.weight.shape == (4,)
    np.testing.assert_array_equal(to_numpy(m.weight), np.ones(4, np.float32))
    assert nn.RMSNorm(3, elementwise_affine=False).weight is None
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], "
                                           r"but got input of size\[2, 3\]"):
        F.rms_norm(ctorch.ones(2, 3), (4,))
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape as normalized_shape"):
        F.rms_norm(ctorch.ones(2, 3), (3,), ctorch.ones(2))
    # a weight of another dtype: the result keeps the input's dtype
    x = np.array([[1.0, 2.0, 3.0]])
    w = np.array([1.1, 0.3, 0.7])
    want = x / np.sqrt((x ** 2).mean() + np.finfo(np.float32).eps) * w
    out = F.rms_norm(ctorch.tensor(x, dtype=ctorch.float32), (3,), ctorch.tensor(w, dtype=ctorch.float64))
    assert out.dtype == ctorch.float32
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
    assert nn.RMSNorm(3)(ctorch.tensor(x, dtype=ctorch.float16)).dtype == ctorch.float16


# --- embedding_bag / EmbeddingBag -------------------------------------------------------------------------------
IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 2])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(device, dtype, mode, rng):
    W = rng.standard_normal((10, 3)).astype(dtype)
    for off, last in (([0, 2, 2, 5], False), ([0, 2, 2, 5, 10], True)):
        for pad in (None, 2):
            got = F.embedding_bag(T(IDX, device), T(W, device), T(off, device), mode=mode, padding_idx=pad,
                                  include_last_offset=last)
            assert_close(got, np_embedding_bag(IDX, W, off, mode, None, last, pad))
    got = F.embedding_bag(T(IDX.reshape(2, 5), device, "int32"), T(W, device), mode=mode)
    assert_close(got, np_embedding_bag(IDX, W, [0, 5], mode))


def test_embedding_bag_weights_grad(device, rng):
    W = T(rng.standard_normal((10, 3)), device, grad=True)
    psw = T(rng.standard_normal(10), device, grad=True)
    off = T([0, 3, 3, 7], device)
    got = F.embedding_bag(T(IDX, device), W, off, mode="sum", per_sample_weights=psw)
    assert_close(got, np_embedding_bag(IDX, to_numpy(W), [0, 3, 3, 7], "sum", to_numpy(psw)))
    assert gradcheck(lambda w, p: F.embedding_bag(T(IDX, device), w, off, mode="sum", per_sample_weights=p,
                                                  padding_idx=4), (W, psw))
    for mode in ("mean", "max"):
        assert gradcheck(lambda w: F.embedding_bag(T(IDX, device), w, off, mode=mode, padding_idx=2), (W,))


def test_embedding_bag_node(device, rng):
    """One EmbeddingBagBackward0 node for every mode and input layout; max's gradient goes to the first
    maximum of each bag and column (an empty bag's to none); second derivatives."""
    from ctorch.autograd import gradgradcheck
    W = T(rng.standard_normal((10, 3)), device, grad=True)
    psw = T(rng.standard_normal(10), device, grad=True)
    off = T([0, 3, 3, 7], device)
    for kw in ({"mode": "sum", "per_sample_weights": psw}, {"mode": "mean", "scale_grad_by_freq": True},
               {"mode": "max", "include_last_offset": True}):
        assert F.embedding_bag(T(IDX, device), W, off, **kw).grad_fn.name() == "EmbeddingBagBackward0"
    assert F.embedding_bag(T(IDX.reshape(2, 5), device), W).grad_fn.name() == "EmbeddingBagBackward0"
    w, p = T(rng.standard_normal((5, 2)), device, grad=True), T(rng.standard_normal(4), device, grad=True)
    assert gradgradcheck(lambda a, b: F.embedding_bag(T([1, 4, 0, 1], device), a, T([0, 1], device), mode="sum",
                                                      per_sample_weights=b), (w, p))
    w = T([[1.0, 2.0], [1.0, 0.0], [0.0, 5.0]], device, grad=True)
    F.embedding_bag(T([0, 1, 2, 1], device), w, T([0, 2, 2], device), mode="max").backward(
        T([[1.0, 10.0], [100.0, 1000.0], [7.0, 7.0]], device))
    assert_close(w.grad, [[1, 10], [7, 0], [0, 7]])


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq(device, mode, rng):
    # each index's gradient divided by its count in the whole input (the padding entries add nothing)
    W = rng.standard_normal((10, 3))
    psw = rng.standard_normal(10) if mode == "sum" else None
    off, pad = [0, 3, 3, 7], 4
    G = rng.standard_normal((4, 3))
    want = np.zeros_like(W)
    bounds = off + [len(IDX)]
    for b in range(4):
        members = [j for j in range(bounds[b], bounds[b + 1]) if IDX[j] != pad]
        for j in members:
            scale = (psw[j] if psw is not None else 1.0) / (len(members) if mode == "mean" else 1.0)
            want[IDX[j]] += G[b] * scale / np.count_nonzero(IDX == IDX[j])
    w = T(W, device, grad=True)
    out = F.embedding_bag(T(IDX, device), w, T(off, device), mode=mode, scale_grad_by_freq=True, padding_idx=pad,
                          per_sample_weights=None if psw is None else T(psw, device))
    assert_close(out, np_embedding_bag(IDX, W, off, mode, psw, False, pad))  # the forward is unchanged
    out.backward(T(G, device))
    assert_close(w.grad, want)
    m = nn.EmbeddingBag(10, 3, mode=mode, scale_grad_by_freq=True).to(device)
    m(T(IDX.reshape(2, 5), device)).sum().backward()
    rows = np.zeros(10)
    for v in IDX:
        rows[v] += (1.0 / 5 if mode == "mean" else 1.0) / np.count_nonzero(IDX == v)
    assert_close(m.weight.grad, np.repeat(rows[:, None], 3, axis=1).astype(np.float32))
    # F.embedding scales the same way
    w = T(W, device, grad=True)
    F.embedding(T(IDX, device), w, scale_grad_by_freq=True).backward(T(np.ones((10, 3)), device))
    assert_close(w.grad, np.repeat((np.bincount(IDX, minlength=10) > 0).astype(float)[:, None], 3, axis=1))


def test_embedding_bag_module_and_errors():
    m = nn.EmbeddingBag(10, 3)
    assert repr(m) == "EmbeddingBag(10, 3, mode='mean')"
    assert repr(nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2)) == "EmbeddingBag(10, 3, mode='sum', padding_idx=2)"
    assert list(m.state_dict()) == ["weight"] and m.weight.shape == (10, 3)
    np.testing.assert_array_equal(to_numpy(nn.EmbeddingBag(5, 2, padding_idx=-1).weight[4]), [0, 0])
    out = m(ctorch.tensor([[1, 2], [3, 4]]))
    assert out.shape == (2, 3)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(ctorch.tensor([1, 2]), m.weight)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(ctorch.tensor([[1, 2]]), m.weight, ctorch.tensor([0]))
    with pytest.raises(NotImplementedError, match="only supported for mode='sum' \\(got mode='mean'\\)"):
        F.embedding_bag(ctorch.tensor([1, 2]), m.weight, ctorch.tensor([0]), per_sample_weights=ctorch.ones(2))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(ctorch.tensor([1, 2]), m.weight, ctorch.tensor([0]), mode="min")
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(ctorch.tensor([1, 2]), m.weight, ctorch.tensor([1]))
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding_bag(ctorch.tensor([1, 12]), m.weight, ctorch.tensor([0]))


# --- bilinear / Bilinear ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_bilinear(device, dtype, rng):
    x1, x2 = rng.standard_normal((2, 3, 4)).astype(dtype), rng.standard_normal((2, 3, 5)).astype(dtype)
    w, b = rng.standard_normal((6, 4, 5)).astype(dtype), rng.standard_normal(6).astype(dtype)
    want = np.einsum("...i,oij,...j->...o", x1, w, x2)
    assert_close(F.bilinear(T(x1, device), T(x2, device), T(w, device), T(b, device)), want + b)
    assert_close(F.bilinear(T(x1[0, 0], device), T(x2[0, 0], device), T(w, device)), want[0, 0])
    if device == "cpu" and dtype == "float64":  # the same composition on every device; the emulator is slow
        args = [T(a, device, "float64", grad=True) for a in (x1[0], x2[0], w, b)]
        assert gradcheck(F.bilinear, tuple(args))


def test_bilinear_module_and_errors():
    m = nn.Bilinear(2, 3, 4)
    assert repr(m) == "Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)"
    assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == [("weight", (4, 2, 3)), ("bias", (4,))]
    bound = 1 / math.sqrt(2)
    assert float(m.weight.abs().max()) <= bound and float(m.bias.abs().max()) <= bound
    assert nn.Bilinear(2, 3, 4, bias=False).bias is None
    assert m(ctorch.ones(5, 2), ctorch.ones(5, 3)).shape == (5, 4)
    with pytest.raises(RuntimeError, match="input1 size does not match weight size: got 3 but expected 2"):
        m(ctorch.ones(5, 3), ctorch.ones(5, 3))
    with pytest.raises(RuntimeError, match="input batch dimensions do not match at dim 0: got 5 and 4"):
        m(ctorch.ones(5, 2), ctorch.ones(4, 3))
    with pytest.raises(RuntimeError, match=r"^All tensors must have the same dtype, got input1: float, input2: float, "
                                           r"weight: float, bias: double$"):
        F.bilinear(ctorch.ones(5, 2), ctorch.ones(5, 3), m.weight, m.bias.double())
    with pytest.raises(RuntimeError, match=r"^All tensors must have the same dtype, got input1: double, input2: double, "
                                           r"weight: float, bias: float$"):
        m(ctorch.ones(5, 2).double(), ctorch.ones(5, 3).double())


# --- margin losses ---------------------------------------------------------------------------------------------
def _reduce(v, reduction):
    return v.mean() if reduction == "mean" else v.sum() if reduction == "sum" else v


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss(device, dtype, p, rng):
    x, y, w = rng.standard_normal((4, 6)).astype(dtype), np.array([1, 0, 5, 3]), rng.random(6).astype(dtype)
    for reduction in ("none", "mean", "sum"):
        got = F.multi_margin_loss(T(x, device), T(y, device), p=p, margin=0.7, weight=T(w, device),
                                  reduction=reduction)
        assert_close(got, _reduce(np_multi_margin(x.astype(np.float64), y, p, 0.7, w), reduction))
    got = nn.MultiMarginLoss(p=p)(T(x[0], device), T(y[0], device))
    assert got.shape == () and abs(float(got) - np_multi_margin(x[:1].astype(np.float64), y[:1], p, 1.0, None)[0]) < 1e-5
    # unreduced 1-D input: the target's shape, (1,) or ()
    assert F.multi_margin_loss(T(x[0], device), T(y[:1], device), reduction="none").shape == (1,)
    assert F.multi_margin_loss(T(x[0], device), T(y[0], device), reduction="none").shape == ()
    xt = T(x, device, "float64", grad=True)
    assert gradcheck(lambda a: F.multi_margin_loss(a, T(y, device), p=p, weight=T(w, device, "float64")), (xt,))


def test_multilabel_margin_loss(device, rng):
    x = rng.standard_normal((4, 6))
    t = np.array([[1, 0, -1, 2, 2, 0], [4, -1, 0, 0, 0, 0], [0, 1, 2, 3, 4, 5], [3, 3, 1, -1, 5, 5]])
    for dtype in FLOATS:
        for reduction in ("none", "mean", "sum"):
            got = F.multilabel_margin_loss(T(x, device, dtype), T(t, device), reduction=reduction)
            assert_close(got, _reduce(np_multilabel_margin(x, t), reduction), dtype)
    assert_close(nn.MultiLabelMarginLoss()(T(x[3], device), T(t[3], device)), np_multilabel_margin(x[3:], t[3:])[0])
    assert gradcheck(lambda a: F.multilabel_margin_loss(a, T(t, device)), (T(x, device, grad=True),))
    with pytest.raises(RuntimeError, match=r"inconsistent target size: \[4, 3\] for input of size: \[4, 6\]"):
        F.multilabel_margin_loss(T(x, device), T(t[:, :3], device))


def test_margin_loss_nodes(device, rng):
    """multi_margin_loss / multilabel_margin_loss are one node each with PyTorch's gradient (a hinge of
    exactly 0 gives none), for every reduction, p, weight and margin; second derivatives too."""
    from ctorch.autograd import gradgradcheck
    x = T(rng.standard_normal((3, 4)), device, "float64", grad=True)
    y, w = T(np.array([0, 1, 3]), device), T(rng.random(4), device, "float64")
    t = T(np.array([[0, 1, -1, 0], [2, -1, 0, 0], [-1, 0, 0, 0]]), device)
    for reduction, p, wt in (("none", 1, None), ("mean", 2, w), ("sum", 1, w)):
        f = lambda a: F.multi_margin_loss(a, y, p=p, margin=0.7, weight=wt, reduction=reduction)  # noqa: E731
        assert f(x).grad_fn.name() == "MultiMarginLossBackward0"
        assert gradcheck(f, (x,))
        g = lambda a: F.multilabel_margin_loss(a, t, reduction=reduction)  # noqa: E731
        assert g(x).grad_fn.name() == "MultilabelMarginLossBackward0"
        assert gradcheck(g, (x,))
    assert gradgradcheck(lambda a: F.multi_margin_loss(a, y, p=2, weight=w), (x,))
    v = T(np.array([4.0, 0.0, -1.0, 2.0]), device, "float64", grad=True)
    assert gradcheck(lambda a: F.multi_margin_loss(a, T(np.array(2), device)), (v,))
    u = T(np.array([[1.0, 0.0, 2.0]]), device, "float64", grad=True)
    F.multi_margin_loss(u, T(np.array([0]), device)).backward()
    assert_close(u.grad, [[-1 / 3, 0, 1 / 3]])
    u.grad = None
    F.multilabel_margin_loss(u, T(np.array([[0, -1, 0]]), device)).backward()
    assert_close(u.grad, [[-1 / 3, 0, 1 / 3]])


def test_multilabel_soft_margin_loss(device, rng):
    x, t, w = rng.standard_normal((4, 6)), (rng.random((4, 6)) > 0.5) * 1.0, rng.random(6)
    ls = lambda v: -np.log1p(np.exp(-v))  # noqa: E731
    per = -(t * ls(x) + (1 - t) * ls(-x)) * w
    for dtype in FLOATS:
        for reduction in ("none", "mean", "sum"):
            got = F.multilabel_soft_margin_loss(T(x, device, dtype), T(t, device, dtype), T(w, device, dtype),
                                                reduction=reduction)
            assert_close(got, _reduce(per.mean(1), reduction), dtype)
    m = nn.MultiLabelSoftMarginLoss(weight=T(w, device))
    assert list(m.state_dict()) == ["weight"]
    assert gradcheck(lambda a: m(a, T(t, device)), (T(x, device, grad=True),))


def test_triplet_margin_with_distance_loss(device, rng):
    a, p, n = rng.standard_normal((3, 4, 5))

    def dist(u, v):
        return np.sqrt(((u - v + 1e-6) ** 2).sum(-1))

    for dtype in FLOATS:
        got = F.triplet_margin_with_distance_loss(T(a, device, dtype), T(p, device, dtype), T(n, device, dtype),
                                                  swap=True, reduction="none")
        want = np.maximum(dist(a, p) - np.minimum(dist(a, n), dist(p, n)) + 1.0, 0)
        assert_close(got, want, dtype)
    l1 = lambda u, v: (u - v).abs().sum(-1)  # noqa: E731
    m = nn.TripletMarginWithDistanceLoss(distance_function=l1, margin=2.0)
    want = np.maximum(np.abs(a - p).sum(-1) - np.abs(a - n).sum(-1) + 2.0, 0).mean()
    assert_close(m(T(a, device), T(p, device), T(n, device)), want)
    assert gradcheck(lambda x: m(x, T(p, device), T(n, device)), (T(a, device, grad=True),))
    assert repr(nn.TripletMarginWithDistanceLoss()) == \
        "TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance()\n)"
    with pytest.raises(ValueError, match="expected margin to be greater than 0, got 0 instead"):
        F.triplet_margin_with_distance_loss(T(a, device), T(p, device), T(n, device), margin=0)


def test_margin_loss_errors():
    x = ctorch.ones(3, 4)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(x, ctorch.tensor([0, 1, 2]), p=3)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(RuntimeError, match=r"Expected target size \[3\], but got \[2\]. Input has shape \[3, 4\]."):
        F.multi_margin_loss(x, ctorch.tensor([0, 1]))
    for m in (nn.MultiMarginLoss(), nn.MultiLabelMarginLoss(), nn.MultiLabelSoftMarginLoss(), nn.CTCLoss()):
        assert repr(m) == type(m).__name__ + "()"


# --- ctc_loss / CTCLoss -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_ctc_loss(device, dtype, rng):
    lg = rng.standard_normal((7, 3, 5))
    lp = np_log_softmax(lg, 2)
    tg, il, tl = np.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]]), np.array([7, 6, 2]), np.array([3, 2, 3])
    want = np_ctc(lp, tg, il, tl, 0)  # the last sample cannot fit: inf
    assert np.isinf(want[2])
    lpt = T(lp, device, dtype)
    assert_close(F.ctc_loss(lpt, T(tg, device), T(il, device), T(tl, device), reduction="none"), want, dtype)
    z = np.where(np.isinf(want), 0, want)
    assert_close(F.ctc_loss(lpt, T(tg, device), il.tolist(), tl.tolist(), reduction="sum", zero_infinity=True),
                 z.sum(), dtype)
    assert_close(nn.CTCLoss(zero_infinity=True)(lpt, T(tg, device), T(il, device), T(tl, device)),
                 (z / tl).mean(), dtype)
    # concatenated targets, another blank, an empty target
    flat, tl2 = np.array([1, 0, 0, 3, 1]), np.array([2, 3, 0])
    padded = np.array([[1, 0, 0], [0, 3, 1], [0, 0, 0]])
    got = F.ctc_loss(lpt, T(flat, device), T(il, device), T(tl2, device), blank=2, reduction="none")
    assert_close(got, np_ctc(lp, padded, il, tl2, 2), dtype)
    # unbatched
    got = F.ctc_loss(T(lp[:, 0], device, dtype), T(tg[0], device), [7], [3], reduction="none")
    assert got.shape == () and abs(float(got) - want[0]) < 1e-4
    assert_close(F.ctc_loss(T(lp[:, 0], device, dtype), T(tg[0], device), [7], [3]), want[0] / 3, dtype)
    # without zero_infinity the reductions carry the inf; a sample with no input frames: 0 for an empty target
    assert np.isinf(float(F.ctc_loss(lpt, T(tg, device), il.tolist(), tl.tolist(), reduction="sum")))
    assert np.isinf(float(F.ctc_loss(lpt, T(tg, device), il.tolist(), tl.tolist())))
    got = F.ctc_loss(lpt, T(tg, device), [7, 0, 0], [3, 0, 1], reduction="none")
    assert_close(got, [want[0], 0.0, np.inf], dtype)
    assert got.dtype == getattr(ctorch, dtype)
    # int32 targets and lengths, a target label equal to another blank
    tg32, il32 = T(np.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]], np.int32), device), T(il.astype(np.int32), device)
    got = F.ctc_loss(lpt, tg32, il32, T(tl, device), blank=4, reduction="none")
    assert_close(got, np_ctc(lp, tg, il, tl, 4), dtype)


def test_ctc_loss_grad(device, rng):
    lg = T(rng.standard_normal((6, 2, 4)), device, grad=True)
    tg, il, tl = T([[1, 2], [3, 3]], device), T([6, 5], device), T([2, 2], device)
    assert gradcheck(lambda x: F.ctc_loss(x.log_softmax(2), tg, il, tl), (lg,))
    bad = T([[1, 2], [3, 3]], device)
    assert gradcheck(lambda x: F.ctc_loss(x.log_softmax(2), bad, T([6, 2], device), tl, zero_infinity=True,
                                          reduction="sum"), (lg,))
    # concatenated targets, a label equal to the blank, unbatched, 'none'
    flat = T([1, 0, 3], device)
    assert gradcheck(lambda x: F.ctc_loss(x.log_softmax(2), flat, [6, 4], [2, 1], blank=3, reduction="none"), (lg,))
    assert gradcheck(lambda x: F.ctc_loss(x[:, 0].log_softmax(1), T([2, 2], device), [5], [2], reduction="sum"), (lg,))


@pytest.mark.parametrize("dtype", FLOATS)
def test_ctc_loss_native_backward(device, dtype, rng):
    """PyTorch's gradient of the log_probs themselves: exp(lp) - posterior of each label (rows sum to 0, so the
    log_softmax's backward leaves it as is), 0 past the input length; an impossible sample gives NaN, or 0 with
    zero_infinity."""
    lp = T(np_log_softmax(rng.standard_normal((5, 3, 4)), 2), device, dtype, grad=True)
    tg, il, tl = T([[1, 2], [3, 3], [1, 1]], device), [5, 4, 1], [2, 2, 2]
    g, = ctorch.autograd.grad(F.ctc_loss(lp, tg, il, tl, reduction="sum"), lp)
    g = to_numpy(g)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(g[:, :2].sum(2), np.zeros((5, 2)), atol=tol)
    np.testing.assert_array_equal(g[4, 1], np.zeros(4))
    assert np.isnan(g[0, 2]).all() and (g[1:, 2] == 0).all()
    g0, = ctorch.autograd.grad(F.ctc_loss(lp, tg, il, tl, reduction="sum", zero_infinity=True), lp)
    g0 = to_numpy(g0)
    np.testing.assert_array_equal(g0[:, 2], np.zeros((5, 4)))
    np.testing.assert_allclose(g0[:, :2], g[:, :2], rtol=1e-6)
    # the posterior part of the gradient against finite differences of the NumPy oracle (float64)
    lpn = to_numpy(lp).astype(np.float64)
    tgn, eps = np.array([[1, 2], [3, 3], [1, 1]]), 1e-6
    t, b, c = 2, 1, 3
    up, dn = lpn.copy(), lpn.copy()
    up[t, b, c] += eps
    dn[t, b, c] -= eps
    fd = (np_ctc(up, tgn, il, tl, 0)[b] - np_ctc(dn, tgn, il, tl, 0)[b]) / (2 * eps)
    assert abs(g[t, b, c] - (np.exp(lpn[t, b, c]) + fd)) < (1e-4 if dtype == "float32" else 1e-7)


def test_ctc_loss_graph(device, rng):
    """One CtcLossBackward0 node over the whole sequence (T = 200), its only edge the leaf's AccumulateGrad;
    PyTorch's graph around it for zero_infinity and the reductions; no double backward, as PyTorch."""
    Tn = 200
    lpn = np_log_softmax(rng.standard_normal((Tn, 2, 5)), 2)
    tgn, il, tl = np.array([[1, 2, 3, 4], [2, 2, 1, 0]]), np.array([200, 150]), np.array([4, 3])
    lp = T(lpn, device, grad=True)
    loss = F.ctc_loss(lp, T(tgn, device), T(il, device), T(tl, device), reduction="none")
    assert loss.grad_fn.name() == "CtcLossBackward0"
    (nxt, nr), = loss.grad_fn.next_functions
    assert nxt.name() == "torch::autograd::AccumulateGrad" and nxt.variable is lp and nr == 0
    assert_close(loss, np_ctc(lpn, tgn, il, tl, 0), "float64")
    names = {(r, z): F.ctc_loss(lp, T(tgn, device), il.tolist(), tl.tolist(), reduction=r, zero_infinity=z)
             for r in ("none", "mean", "sum") for z in (False, True)}
    assert names["none", True].grad_fn.name() == "WhereBackward0"
    assert names["none", True].grad_fn.next_functions[1][0].name() == "CtcLossBackward0"
    assert names["mean", False].grad_fn.name() == "MeanBackward0"
    assert names["mean", False].grad_fn.next_functions[0][0].name() == "DivBackward0"
    assert names["sum", False].grad_fn.next_functions[0][0].name() == "CtcLossBackward0"
    assert names["sum", True].grad_fn.next_functions[0][0].name() == "WhereBackward0"
    g, = ctorch.autograd.grad(names["sum", False], lp, create_graph=True)
    assert g.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is not implemented"):
        g.sum().backward()


def test_ctc_loss_errors():
    lp = ctorch.zeros(6, 2, 4).log_softmax(2)
    tg = ctorch.tensor([[1, 2], [3, 3]])
    at = r" \(while checking arguments for ctc_loss_allocate_outputs\)"
    cases = [
        (lambda: F.ctc_loss(lp, tg, [7, 5], [2, 2]), "Expected input_lengths to have value at most 6, but got value 7"),
        (lambda: F.ctc_loss(lp, tg, [6, -1], [2, 1]),
         "Expected input_lengths to have value at least 0, but got value -1"),
        (lambda: F.ctc_loss(lp, tg, [6, 5], [2, -1]),
         "Expected target_lengths to have value at least 0, but got value -1"),
        (lambda: F.ctc_loss(lp, tg, [6, 5], [2, 3]),
         "Expected tensor to have size at least 3 at dimension 1, but got size 2 for argument #2 'targets'"),
        (lambda: F.ctc_loss(lp, tg[:1], [6, 5], [2, 2]),
         "Expected tensor to have size 2 at dimension 0, but got size 1 for argument #2 'targets'"),
        (lambda: F.ctc_loss(lp, ctorch.tensor([1, 2, 3]), [6, 5], [2, 2]),
         "Expected tensor to have size 4 at dimension 0, but got size 3 for argument #2 'targets'"),
        (lambda: F.ctc_loss(lp, tg[None], [6, 5], [2, 2]),
         "Expected 1 to 2 dimensions, but got 3-dimensional tensor for argument #2 'targets'"),
        (lambda: F.ctc_loss(lp[..., None], tg, [6, 5], [2, 2]),
         "Expected 3-dimensional tensor, but got 5-dimensional tensor for argument #1 'log_probs'"),
    ]
    for fn, msg in cases:
        with pytest.raises(RuntimeError, match=msg + at):
            fn()
    for kw, msg in [({"blank": 4}, "blank must be in label range"), ({"blank": -1}, "blank must be in label range")]:
        with pytest.raises(RuntimeError, match=msg):
            F.ctc_loss(lp, tg, [6, 5], [2, 2], **kw)
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(lp, tg, [6, 5, 4], [2, 2])
    with pytest.raises(RuntimeError, match="target_lengths must be of size batch_size"):
        F.ctc_loss(lp, tg, [6, 5], [2])
    with pytest.raises(RuntimeError, match="input_lengths must be integral"):
        F.ctc_loss(lp, tg, ctorch.tensor([6.0, 5.0]), ctorch.tensor([2, 2]))
    with pytest.raises(RuntimeError, match="target_lengths must be integral"):
        F.ctc_loss(lp, tg, ctorch.tensor([6, 5]), ctorch.tensor([2.0, 2.0]))
    with pytest.raises(RuntimeError, match="log_probs tensor must not be empty"):
        F.ctc_loss(lp[:0], tg, [6, 5], [2, 2])
    # both lengths lists or both tensors, as PyTorch's two overloads
    for il, tl, got in [([6, 5], ctorch.tensor([2, 2]), "list, Tensor"), (ctorch.tensor([6, 5]), (2, 2), "Tensor, tuple")]:
        with pytest.raises(TypeError, match=r"ctc_loss\(\) received an invalid combination of arguments - got "
                                            rf"\(Tensor, Tensor, {got}, int, int, bool\), but expected one of:"):
            F.ctc_loss(lp, tg, il, tl)
    with pytest.raises(NotImplementedError, match="\"ctc_loss_cpu\" not implemented for 'Int'"):
        F.ctc_loss(lp.int(), tg, [6, 5], [2, 2])
    with pytest.raises(RuntimeError, match=r"target label 5 out of range \[0, 4\)"):
        F.ctc_loss(lp, ctorch.tensor([[1, 5], [3, 3]]), [6, 5], [2, 2])
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.ctc_loss(lp, tg, [6, 5], [2, 2], reduction="foo")


# --- gumbel_softmax ------------------------------------------------------------------------------------------------
def test_gumbel_softmax(device, rng):
    x = T(rng.standard_normal((5, 4)), device, grad=True)
    ctorch.manual_seed(0)
    y = F.gumbel_softmax(x, tau=0.5)
    np.testing.assert_allclose(to_numpy(y).sum(-1), np.ones(5), rtol=1e-12)
    ctorch.manual_seed(0)
    h = F.gumbel_softmax(x, tau=0.5, hard=True)
    hn = to_numpy(h)
    np.testing.assert_array_equal(hn.sum(-1), np.ones(5))
    np.testing.assert_array_equal(hn.argmax(-1), to_numpy(y).argmax(-1))
    # straight through: the hard sample's gradient is the soft one's
    (h * T(np.arange(20.0).reshape(5, 4), device)).sum().backward()
    g_hard = to_numpy(x.grad)
    x.grad = None
    ctorch.manual_seed(0)
    (F.gumbel_softmax(x, tau=0.5) * T(np.arange(20.0).reshape(5, 4), device)).sum().backward()
    np.testing.assert_allclose(g_hard, to_numpy(x.grad), rtol=1e-10, atol=1e-12)
    assert F.gumbel_softmax(x, dim=0).shape == (5, 4)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        F.gumbel_softmax(x, eps=1e-3)
    assert "deprecated" in str(w[0].message)


# --- ParameterList / ParameterDict ---------------------------------------------------------------------------------
def test_parameter_list():
    pl = nn.ParameterList([nn.Parameter(ctorch.zeros(2)), ctorch.zeros(3, 2)])
    assert isinstance(pl[1], nn.Parameter) and len(pl) == 2
    assert repr(pl) == ("ParameterList(\n    (0): Parameter containing: [torch.float32 of size 2]\n"
                        "    (1): Parameter containing: [torch.float32 of size 3x2]\n)")
    assert list(pl.state_dict()) == ["0", "1"]
    pl.append(ctorch.ones(1))
    pl += [ctorch.ones(4)]
    assert len(pl) == 4 and pl[-1].shape == (4,) and len(list(pl.parameters())) == 4
    assert isinstance(pl[1:3], nn.ParameterList) and len(pl[1:3]) == 2
    pl[0] = ctorch.ones(5)
    assert isinstance(pl[0], nn.Parameter) and pl[0].shape == (5,)
    with pytest.raises(IndexError, match="index 4 is out of range"):
        pl[4]
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable, but got int"):
        pl.extend(3)
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl(1)


def test_parameter_dict():
    pd = nn.ParameterDict({"b": ctorch.zeros(3, 2), "a": nn.Parameter(ctorch.zeros(2))})
    assert list(pd.keys()) == ["a", "b"]  # a plain dict is taken in sorted order
    assert isinstance(pd["b"], nn.Parameter)
    assert repr(pd) == ("ParameterDict(\n    (a): Parameter containing: [torch.FloatTensor of size 2]\n"
                        "    (b): Parameter containing: [torch.FloatTensor of size 3x2]\n)")
    assert list(pd.state_dict()) == ["a", "b"]
    pd["c"] = ctorch.ones(1)
    assert "c" in pd and len(pd) == 3 and len(list(pd.parameters())) == 3
    assert pd.pop("c").shape == (1,) and "c" not in pd
    assert pd.get("z") is None and pd.setdefault("z", ctorch.ones(2)).shape == (2,)
    assert [k for k, _ in pd.items()] == ["a", "b", "z"] and list(reversed(pd)) == ["z", "b", "a"]
    merged = pd | nn.ParameterDict({"q": ctorch.ones(1)})
    assert list(merged.keys()) == ["a", "b", "z", "q"] and len(pd) == 3
    k, v = pd.popitem()
    assert k == "z" and len(pd) == 2
    with pytest.raises(TypeError, match="Index given to ParameterDict cannot be used as a key as it is not a string "
                                        r"\(type is 'int'\)"):
        pd[1] = ctorch.ones(1)
    with pytest.raises(ValueError, match="ParameterDict update sequence element #0 has length 3; 2 is required"):
        pd.update([("a", 1, 2)])
    pd.clear()
    assert len(pd) == 0 and list(pd.parameters()) == []


# --- local_response_norm, channel_shuffle, rrelu, alpha dropouts, LP pools, max_unpool, Softmax2d ----------
def np_lrn(x, size, alpha=1e-4, beta=0.75, k=1.0):
    sq = x * x
    C = x.shape[1]
    avg = np.zeros_like(x)
    for c in range(C):
        lo, hi = max(0, c - size // 2), min(C, c + (size - 1) // 2 + 1)
        avg[:, c] = sq[:, lo:hi].sum(1) / size
    return x / (k + alpha * avg) ** beta


@pytest.mark.parametrize("dtype", FLOATS)
def test_local_response_norm(device, dtype, rng):
    for shape, size in (((2, 5, 4), 3), ((2, 6, 3, 2), 4)):
        x = rng.standard_normal(shape).astype(dtype)
        assert_close(F.local_response_norm(T(x, device), size, alpha=0.5, beta=0.6, k=1.5),
                     np_lrn(x.astype(np.float64), size, 0.5, 0.6, 1.5), dtype)
    m = nn.LocalResponseNorm(3)
    assert repr(m) == "LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=1.0)"
    x = T(rng.standard_normal((2, 4, 3)), device, grad=True)
    assert gradcheck(lambda a: F.local_response_norm(a, 2, alpha=0.5), (x,))
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality input \(got 2 dimensions\)"):
        m(ctorch.ones(2, 3))


def test_channel_shuffle(device, rng):
    x = rng.standard_normal((2, 6, 3, 2))
    want = x.reshape(2, 2, 3, 3, 2).transpose(0, 2, 1, 3, 4).reshape(2, 6, 3, 2)
    assert_close(F.channel_shuffle(T(x, device), 2), want)
    assert_close(nn.ChannelShuffle(3)(T(x[:, :, :, 0], device)),
                 x[:, :, :, 0].reshape(2, 3, 2, 3).transpose(0, 2, 1, 3).reshape(2, 6, 3))
    assert repr(nn.ChannelShuffle(2)) == "ChannelShuffle(groups=2)"
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups. Got 6 channels and 4"):
        F.channel_shuffle(T(x, device), 4)
    with pytest.raises(RuntimeError, match="Number of groups to divide channels in must be positive"):
        F.channel_shuffle(T(x, device), 0)
    with pytest.raises(RuntimeError, match="channel_shuffle expects input with > 2 dims, but got input with sizes \\[3, 2\\]"):
        F.channel_shuffle(T(x[0, 0], device), 2)


@pytest.mark.parametrize("dtype", FLOATS)
def test_rrelu(device, dtype, rng):
    x = rng.standard_normal((50, 4)).astype(dtype)
    assert_close(F.rrelu(T(x, device)), np.where(x >= 0, x, x * (1 / 8 + 1 / 3) / 2), dtype)
    m = nn.RReLU(0.1, 0.3)
    assert repr(m) == "RReLU(lower=0.1, upper=0.3)" and repr(nn.RReLU(inplace=True)).endswith("inplace=True)")
    xt = T(x, device, grad=True)
    y = m(xt)
    y.sum().backward()
    yn, g = to_numpy(y), to_numpy(xt.grad)
    neg = x < 0
    np.testing.assert_array_equal(yn[~neg], x[~neg])
    slope = yn[neg] / x[neg]
    assert slope.min() >= 0.1 - 1e-6 and slope.max() <= 0.3 + 1e-6 and slope.std() > 0.01
    np.testing.assert_allclose(g[neg], slope, rtol=1e-5)
    m.eval()
    assert_close(m(T(x, device)), np.where(x >= 0, x, x * 0.2), dtype)


def test_alpha_dropout(device, rng):
    x = rng.standard_normal((200, 100))
    xt = T(x, device)
    assert nn.AlphaDropout(0.2).eval()(xt) is xt
    assert repr(nn.AlphaDropout()) == "AlphaDropout(p=0.5, inplace=False)"
    assert repr(nn.FeatureAlphaDropout(0.1)) == "FeatureAlphaDropout(p=0.1, inplace=False)"
    p, alpha = 0.2, 1.7580993408473766
    a = 1 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    y = to_numpy(F.alpha_dropout(xt, p, training=True))
    dropped = np.isclose(y, a * alpha * (p - 1))
    np.testing.assert_allclose(y[~dropped], x[~dropped] * a + alpha * a * p, rtol=1e-10)
    assert abs(dropped.mean() - p) < 0.02 and abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05
    z = to_numpy(F.feature_alpha_dropout(T(x.reshape(20, 10, 100), device), 0.5, training=True))
    per_channel = np.isclose(z, a * 0 + alpha / math.sqrt((alpha * alpha * 0.5 + 1) * 0.5) * (0.5 - 1)).all(-1)
    assert per_channel.any() and not per_channel.all()
    assert to_numpy(F.alpha_dropout(xt, 1.0, training=True)).max() == 0
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.alpha_dropout(xt, 1.5)


@pytest.mark.parametrize("dtype", FLOATS)
def test_lp_pool(device, dtype, rng):
    x = rng.random((2, 3, 6, 5)).astype(dtype) + 0.1
    want = (x[:, :, :6, :4] ** 3).reshape(2, 3, 3, 2, 2, 2).sum((3, 5)) ** (1 / 3)
    assert_close(F.lp_pool2d(T(x, device), 3, 2), want, dtype)
    assert_close(nn.LPPool2d(2, (3, 2), stride=(3, 2))(T(x, device)),
                 np.sqrt((x[:, :, :, :4] ** 2).reshape(2, 3, 2, 3, 2, 2).sum((3, 5))), dtype)
    x1 = x[:, :, 0]
    assert_close(nn.LPPool1d(2, 2, stride=1)(T(x1, device)), np.sqrt(x1[:, :, :-1] ** 2 + x1[:, :, 1:] ** 2), dtype)
    assert repr(nn.LPPool2d(2, 3)) == "LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)"
    if device == "cpu" and dtype == "float64":
        assert gradcheck(lambda a: F.lp_pool2d(a, 2, 2), (T(x[:1, :2], device, "float64", grad=True),))
    # p = +-inf: the max / min of |x| over each window (the power formula would give 1 and 0)
    xs = x - 0.6
    windows = np.abs(xs[:, :, :6, :4]).reshape(2, 3, 3, 2, 2, 2)
    assert_close(nn.LPPool2d(float("inf"), 2)(T(xs, device)), windows.max((3, 5)), dtype)
    assert_close(F.lp_pool2d(T(xs, device), -float("inf"), 2), windows.min((3, 5)), dtype)
    a1 = np.abs(xs[:, :, 0])   # length 5, windows [0, 2), [2, 4), [4, 5) with ceil_mode
    want1 = np.stack([a1[..., 0:2].max(-1), a1[..., 2:4].max(-1), a1[..., 4]], -1)
    assert_close(F.lp_pool1d(T(xs[:, :, 0], device), float("inf"), 2, ceil_mode=True), want1, dtype)
    with pytest.raises(ValueError, match=r"^norm_type must be a non-zero value, but got 0$"):
        F.lp_pool1d(T(x1, device), 0, 2)


def test_max_unpool(device, rng):
    x = rng.standard_normal((2, 3, 4, 6))
    out, idx = F.max_pool2d(T(x, device), 2, return_indices=True)
    got = F.max_unpool2d(out, idx, 2)
    want = np.zeros_like(x).reshape(2, 3, -1)
    np.put_along_axis(want, to_numpy(idx).reshape(2, 3, -1), to_numpy(out).reshape(2, 3, -1), 2)
    assert_close(got, want.reshape(x.shape))
    assert nn.MaxUnpool2d(2)(out, idx, output_size=[2, 3, 5, 7]).shape == (2, 3, 5, 7)
    assert repr(nn.MaxUnpool2d(2)) == "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"
    assert repr(nn.MaxUnpool1d(2)) == "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))"
    o1, i1 = F.max_pool1d(T(x[0], device), 2, return_indices=True)
    u1 = nn.MaxUnpool1d(2)(o1, i1)
    np.testing.assert_array_equal(np.take_along_axis(to_numpy(u1), to_numpy(i1), -1), to_numpy(o1))
    assert (to_numpy(u1) != 0).sum() == o1.numel()
    assert u1.shape == (3, 4, 6)
    if device == "cpu":
        xt = T(to_numpy(out), device, grad=True)
        assert gradcheck(lambda a: F.max_unpool2d(a, idx, 2), (xt,))
    with pytest.raises(ValueError, match='invalid output_size "\\[9, 9\\]" \\(dim 0 must be between 2 and 6\\)'):
        F.max_unpool2d(out, idx, 2, output_size=[9, 9])
    with pytest.raises(ValueError, match='invalid output_size "\\(9, 9\\)"'):  # as given
        F.max_unpool2d(out, idx, 2, output_size=(9, 9))
    with pytest.raises(NotImplementedError, match="\"max_unpool2d\" not implemented for 'Long'"):  # 1-d too
        F.max_unpool1d(o1.long(), i1, 2)


def test_softmax2d(device, rng):
    x = rng.standard_normal((2, 3, 4, 5))
    e = np.exp(x - x.max(1, keepdims=True))
    assert_close(nn.Softmax2d()(T(x, device)), e / e.sum(1, keepdims=True))
    assert repr(nn.Softmax2d()) == "Softmax2d()"
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(T(x[0, 0], device))


# --- affine_grid / grid_sample ----------------------------------------------------------------------------------
def np_source(c, size, align, padding):
    return np_pad((c + 1) / 2 * (size - 1) if align else ((c + 1) * size - 1) / 2, size, align, padding)


def np_pad(x, size, align, padding):
    if padding == "reflection":
        lo2, hi2 = (0, 2 * (size - 1)) if align else (-1, 2 * size - 1)
        if lo2 == hi2:
            x = 0.0
        else:
            lo, span = lo2 / 2, (hi2 - lo2) / 2
            d = abs(x - lo)
            flips, extra = math.floor(d / span), math.fmod(d, span)
            x = extra + lo if flips % 2 == 0 else span - extra + lo
    return min(max(x, 0), size - 1) if padding != "zeros" else x


def np_grid_sample(x, grid, mode, padding, align):
    N, C, H, W = x.shape
    out = np.zeros((N, C) + grid.shape[1:3])
    for n in range(N):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                sx = np_source(grid[n, i, j, 0], W, align, padding)
                sy = np_source(grid[n, i, j, 1], H, align, padding)
                if mode == "nearest":
                    taps = [(np.round(sx), np.round(sy), 1.0)]
                else:
                    x0, y0 = math.floor(sx), math.floor(sy)
                    fx, fy = sx - x0, sy - y0
                    taps = [(x0, y0, (1 - fx) * (1 - fy)), (x0 + 1, y0, fx * (1 - fy)), (x0, y0 + 1, (1 - fx) * fy),
                            (x0 + 1, y0 + 1, fx * fy)]
                for tx, ty, w in taps:
                    if 0 <= tx < W and 0 <= ty < H:
                        out[n, :, i, j] += w * x[n, :, int(ty), int(tx)]
    return out


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid(device, align, rng):
    theta = rng.standard_normal((2, 2, 3))
    got = F.affine_grid(T(theta, device), (2, 3, 4, 5), align_corners=align)
    xs = np.linspace(-1, 1, 5) * (1 if align else 4 / 5)
    ys = np.linspace(-1, 1, 4) * (1 if align else 3 / 4)
    base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], np.ones((4, 5))), -1)
    assert_close(got, np.einsum("hwk,nck->nhwc", base, theta))
    assert_close(F.affine_grid(T(theta, device, "float32"), (2, 1, 1, 3), align_corners=align),
                 np.einsum("hwk,nck->nhwc", np.stack([np.linspace(-1, 1, 3) * (1 if align else 2 / 3), [0.0] * 3,
                                                      [1.0] * 3], -1)[None], theta).astype(np.float32))
    if device == "cpu" and align:
        assert gradcheck(lambda t: F.affine_grid(t, (2, 1, 3, 2), align_corners=True), (T(theta, device, grad=True),))


def test_affine_grid_errors():
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
        F.affine_grid(ctorch.zeros(1, 2, 3), (1, 1, 2, 2))
    with pytest.raises(ValueError, match="Expected a batch of 2D affine matrices of shape Nx2x3 for size"):
        F.affine_grid(ctorch.zeros(1, 3, 3), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(ValueError, match="Expected non-zero, positive output size"):
        F.affine_grid(ctorch.zeros(1, 2, 3), (1, 1, 0, 2), align_corners=False)


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample(device, padding, rng):
    x = rng.standard_normal((2, 3, 4, 5))
    grid = rng.uniform(-1.4, 1.4, (2, 3, 4, 2))
    grid[0, 0, 0], grid[0, 0, 1] = [1.0, -1.0], [0.25, 0.5]
    for dtype in FLOATS:
        for mode in ("bilinear", "nearest"):
            for align in (False, True):
                got = F.grid_sample(T(x, device, dtype), T(grid, device, dtype), mode=mode, padding_mode=padding,
                                    align_corners=align)
                assert_close(got, np_grid_sample(x, grid, mode, padding, align), dtype)
    if device == "cpu":
        xt, gt = T(x[:1, :2], device, grad=True), T(grid[:1, :2, :2] * 0.9, device, grad=True)
        assert gradcheck(lambda a, g: F.grid_sample(a, g, padding_mode=padding, align_corners=False), (xt, gt))


def test_grid_sample_errors():
    x, g = ctorch.zeros(1, 1, 2, 2), ctorch.zeros(1, 2, 2, 2)
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'area'"):
        F.grid_sample(x, g, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border', or 'reflection'"):
        F.grid_sample(x, g, padding_mode="wrap", align_corners=False)
    with pytest.raises(RuntimeError, match="expected input and grid to have same dtype"):
        F.grid_sample(x, g.double(), align_corners=False)


def np_grid_sample_bicubic(x, grid, padding, align, a=-0.75):
    def cubic(t):
        c1, c2 = lambda u: ((a + 2) * u - (a + 3)) * u * u + 1, lambda u: ((a * u - 5 * a) * u + 8 * a) * u - 4 * a
        return [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)]

    N, C, H, W = x.shape
    out = np.zeros((N, C) + grid.shape[1:3])
    for n, i, j in np.ndindex(N, *grid.shape[1:3]):
        sx, sy = np_source(grid[n, i, j, 0], W, align, "zeros"), np_source(grid[n, i, j, 1], H, align, "zeros")
        x0, y0 = math.floor(sx), math.floor(sy)
        wx, wy = cubic(sx - x0), cubic(sy - y0)
        for r, c in np.ndindex(4, 4):
            ty, tx = np_pad(y0 - 1 + r, H, align, padding), np_pad(x0 - 1 + c, W, align, padding)
            if 0 <= tx <= W - 1 and 0 <= ty <= H - 1:
                out[n, :, i, j] += wx[c] * wy[r] * x[n, :, int(ty), int(tx)]
    return out


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_bicubic(device, padding, rng):
    x = rng.standard_normal((2, 2, 4, 5))
    grid = rng.uniform(-1.3, 1.3, (2, 3, 2, 2))
    for dtype in FLOATS:
        for align in (False, True):
            got = F.grid_sample(T(x, device, dtype), T(grid, device, dtype), mode="bicubic", padding_mode=padding,
                                align_corners=align)
            assert got.grad_fn is None
            assert_close(got, np_grid_sample_bicubic(x, grid, padding, align), dtype)
    if device == "cpu":
        xt, gt = T(x[:1, :1], device, grad=True), T(grid[:1, :2], device, grad=True)
        assert F.grid_sample(xt, gt, mode="bicubic", align_corners=True).grad_fn.name() == "GridSampler2DBackward0"
        assert gradcheck(lambda a, g: F.grid_sample(a, g, mode="bicubic", padding_mode=padding, align_corners=True),
                         (xt, gt))
        gx, gg = ctorch.autograd.grad(F.grid_sample(xt, gt, mode="bicubic", align_corners=False).sum(), (xt, gt),
                                      create_graph=True)
        assert gx.grad_fn.name() == "GridSampler2DBackwardBackward0"
        assert ctorch.autograd.gradgradcheck(
            lambda a, g: F.grid_sample(a, g, mode="bicubic", padding_mode=padding, align_corners=False), (xt, gt))


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_native_backward(padding, rng):
    """one GridSampler2DBackward0 / 3DBackward0 node; gradcheck through the native backward of input and grid
    (nearest: grid's gradient is 0), gradgradcheck through GridSampler2DBackwardBackward0"""
    from ctorch.autograd import gradgradcheck
    x = T(rng.standard_normal((1, 2, 3, 4)), "cpu", grad=True)
    grid = T(rng.uniform(-1.2, 1.2, (1, 2, 2, 2)), "cpu", grad=True)
    x3 = T(rng.standard_normal((1, 1, 2, 3, 2)), "cpu", grad=True)
    grid3 = T(rng.uniform(-1.2, 1.2, (1, 1, 2, 2, 3)), "cpu", grad=True)
    for mode in ("bilinear", "nearest"):
        y = F.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=True)
        assert y.grad_fn.name() == "GridSampler2DBackward0"
        gx, gg = ctorch.autograd.grad(y.sum(), (x, grid), create_graph=True)
        assert gx.grad_fn.name() == "GridSampler2DBackwardBackward0" and gg.grad_fn is gx.grad_fn
        y3 = F.grid_sample(x3, grid3, mode=mode, padding_mode=padding, align_corners=False)
        assert y3.grad_fn.name() == "GridSampler3DBackward0"
        assert gradcheck(lambda a, g: F.grid_sample(a, g, mode=mode, padding_mode=padding, align_corners=False),
                         (x, grid))
        assert gradcheck(lambda a, g: F.grid_sample(a, g, mode=mode, padding_mode=padding, align_corners=False),
                         (x3, grid3))
        if mode == "nearest":
            assert (ctorch.autograd.grad(y.sum(), grid)[0] == 0).all()
    assert gradgradcheck(lambda a, g: F.grid_sample(a, g, padding_mode=padding, align_corners=False), (x, grid))
    assert gradgradcheck(lambda a, g: F.grid_sample(a, g, padding_mode=padding, align_corners=True), (x3, grid3))
    # nearest: the second derivative has nothing to differentiate through the grid (all zeros)
    assert gradgradcheck(lambda a, g: F.grid_sample(a, g, mode="nearest", padding_mode=padding, align_corners=True),
                         (x, (grid.detach() * 0.7).requires_grad_()))
    # grid alone requiring grad, and a deterministic scatter (many points on one pixel)
    many = T(rng.uniform(-0.1, 0.1, (1, 64, 8, 2)), "cpu")
    gx = [ctorch.autograd.grad(F.grid_sample(x, many, padding_mode=padding, align_corners=False).sum(), x)[0]
          for _ in range(2)]
    assert (gx[0] == gx[1]).all()
    assert_close(gx[0].sum(), np.array(2 * 64 * 8.0))


def test_grid_sample_half_and_empty(device, rng):
    x, grid = rng.standard_normal((1, 2, 3, 4)), rng.uniform(-1, 1, (1, 2, 3, 2))
    ref = np_grid_sample(x.astype(np.float16).astype(np.float64), grid.astype(np.float16).astype(np.float64),
                         "bilinear", "zeros", False)
    for dtype in ("float16", "bfloat16"):
        got = F.grid_sample(T(x, device, dtype), T(grid, device, dtype), align_corners=False)
        assert got.dtype == getattr(ctorch, dtype) and got.shape == (1, 2, 2, 3)
        assert np.allclose(to_numpy(got.float()), ref, atol=0.05)
    xt = T(x, device, grad=True)
    assert F.grid_sample(xt[:, :0], T(grid, device), align_corners=False).shape == (1, 0, 2, 3)
    empty = F.grid_sample(xt, T(grid[:, :0], device), align_corners=False)
    assert empty.shape == (1, 2, 0, 3)
    assert (ctorch.autograd.grad(empty.sum(), xt)[0] == 0).all()


def test_grid_sample_nonfinite_grid(device):
    """PyTorch's: a NaN source clips to 0 under border / reflection (inf reflects to NaN, then 0); a non-finite
    one with zeros padding (or bicubic) has NaN weights, a NaN output; nearest reads 0 outside"""
    nan, inf = float("nan"), float("inf")
    x = ctorch.arange(12.0, device=device).reshape(1, 1, 3, 4)
    g = ctorch.tensor([[[[nan, 0.0], [inf, 0.0], [-inf, 0.5], [1e30, 0.2]]]], device=device)
    expect = {("bilinear", "zeros"): [nan, nan, nan, 0], ("bilinear", "border"): [4, 7, 7, 8.2],
              ("bilinear", "reflection"): [4, 4, 7, 5.2], ("nearest", "zeros"): [0, 0, 0, 0],
              ("nearest", "border"): [4, 7, 8, 7], ("nearest", "reflection"): [4, 4, 8, 4],
              ("bicubic", "zeros"): [nan, nan, nan, 0], ("bicubic", "border"): [nan, nan, nan, 8.557]}
    for (mode, padding), want in expect.items():
        got = F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=False)
        np.testing.assert_allclose(to_numpy(got).ravel(), want, rtol=1e-5)


def test_grid_sample_cuda_matches_cpu(rng):
    if not ctorch.cuda.is_available():
        pytest.skip("CUDA not available")
    cases = [((2, 3, 4, 5), (2, 3, 2, 2), ("bilinear", "nearest", "bicubic")),
             ((1, 2, 2, 3, 4), (1, 2, 2, 2, 3), ("bilinear", "nearest"))]
    for xs, gs, modes in cases:
        x, grid = rng.standard_normal(xs), rng.uniform(-1.3, 1.3, gs)
        for mode in modes:
            for padding in ("zeros", "border", "reflection"):
                align = padding == "border"
                res = []
                for dev in ("cpu", "cuda"):
                    xt, gt = T(x, dev, grad=True), T(grid, dev, grad=True)
                    y = F.grid_sample(xt, gt, mode=mode, padding_mode=padding, align_corners=align)
                    res.append([to_numpy(t) for t in (y, *ctorch.autograd.grad((y * y).sum(), (xt, gt)))])
                for a, b in zip(*res):
                    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_grid_sampler_errors():
    x, g = ctorch.zeros(1, 1, 2, 2, 2), ctorch.zeros(1, 1, 1, 1, 3)
    with pytest.raises(NotImplementedError, match="bicubic interpolation only supports 4D input"):
        ctorch._C.grid_sampler_3d(x, g, 2, 0, False)
    with pytest.raises(NotImplementedError, match="grid_sample\\(mode='bicubic'\\) of 5-D input"):
        F.grid_sample(x, g, mode="bicubic", align_corners=False)
    with pytest.raises(RuntimeError, match="expected 4D input and grid with same number of dimensions"):
        ctorch._C.grid_sampler_2d(x, g, 0, 0, False)
    with pytest.raises(RuntimeError, match="expected interpolation_mode in"):
        ctorch._C.grid_sampler_2d(ctorch.zeros(1, 1, 2, 2), ctorch.zeros(1, 1, 1, 2), 5, 0, False)


def test_dtype_errors():
    i64 = ctorch.ones(1, 2, 2, 2, dtype=ctorch.int64)
    with pytest.raises(NotImplementedError, match="\"rms_norm\" not implemented for 'Long'"):
        F.rms_norm(ctorch.ones(2, 3, dtype=ctorch.int64), (3,))
    with pytest.raises(RuntimeError, match="Expected normalized_shape to be at least 1-dimensional"):
        F.rms_norm(ctorch.tensor(2.0), ())
    with pytest.raises(RuntimeError, match="scalar types: Long, Int; but got torch.FloatTensor instead"):
        F.embedding_bag(ctorch.tensor([1.0, 2.0]), ctorch.ones(3, 2), ctorch.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="All tensors must have the same dtype, got input1: float, input2: double, "
                                           "weight: float"):
        F.bilinear(ctorch.ones(2, 2), ctorch.ones(2, 3, dtype=ctorch.float64), ctorch.ones(4, 2, 3))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        F.multi_margin_loss(ctorch.ones(2, 3), ctorch.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(ctorch.ones(2, 3), ctorch.tensor([0, 5]))
    with pytest.raises(RuntimeError, match="log_probs tensor must not be empty"):
        F.ctc_loss(ctorch.zeros(0, 1, 3), ctorch.tensor([[1]]), [0], [1])
    with pytest.raises(NotImplementedError, match="\"ctc_loss_cpu\" not implemented for 'Half'"):
        F.ctc_loss(ctorch.zeros(2, 1, 3, dtype=ctorch.float16), ctorch.tensor([[1]]), [2], [1])
    with pytest.raises(NotImplementedError, match="\"leaky_relu_cpu\" not implemented for 'Long'"):
        F.rrelu(ctorch.tensor([1, -2]))
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 99 \(output volumes are of size 4x4\)"):
        F.max_unpool2d(ctorch.ones(1, 1, 2, 2), ctorch.full((1, 1, 2, 2), 99, dtype=ctorch.int64), 2)
    with pytest.raises(NotImplementedError, match="\"grid_sampler_2d_cpu_kernel_impl\" not implemented for 'Long'"):
        F.grid_sample(i64, ctorch.zeros(1, 1, 1, 2, dtype=ctorch.int64), align_corners=False)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        F.alpha_dropout(ctorch.ones(3, dtype=ctorch.int64), 0.5, True)


# --- the deprecated Module.register_backward_hook (non-full: the grads of the output's last node) --------------
def _non_full_hook_run(module, x, ret=None):
    seen = []

    def hook(mod, grad_input, grad_output):
        seen.append((mod, [tuple(g.shape) for g in grad_input], [tuple(g.shape) for g in grad_output],
                     [float(g.sum()) for g in grad_input]))
        return ret(grad_input) if ret else None
    module.register_backward_hook(hook)
    with pytest.warns(FutureWarning, match="^Using a non-full backward hook when the forward contains multiple "
                      "autograd Nodes is deprecated"):
        y = module(x)
    y.sum().backward()
    return seen


def test_register_backward_hook_relu_and_sequential():
    # values and shapes as the reference torch's
    x = ctorch.tensor([[1., -2, 3], [0.5, 1, -1]], requires_grad=True)
    relu = nn.ReLU()
    assert _non_full_hook_run(relu, x) == [(relu, [(2, 3)], [(2, 3)], [4.0])]
    x.grad = None
    _non_full_hook_run(nn.ReLU(), x, ret=lambda gi: tuple(g * 2 for g in gi))
    assert float(x.grad.sum()) == 8.0  # the returned grad_input replaced the node's
    lin = nn.Linear(3, 2)
    with ctorch.no_grad():
        lin.weight.copy_(ctorch.tensor([[1., 2, 3], [4, 5, 6]]))
        lin.bias.copy_(ctorch.tensor([0.5, -1]))
    seq = nn.Sequential(lin, nn.ReLU())  # the hook sees the ReLU node's grads
    x.grad = None
    assert _non_full_hook_run(seq, x) == [(seq, [(2, 2)], [(2, 2)], [2.0])]
    assert float(x.grad.sum()) == 21.0
    bad = nn.ReLU()
    bad.register_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.warns(FutureWarning):
        y = bad(x)
    with pytest.raises(RuntimeError, match=r"^hook '<lambda>' has returned an incorrect number of values \(got 2, "
                       r"but expected 1\)$"):
        y.sum().backward()


def test_register_backward_hook_linear_and_mixing():
    lin = nn.Linear(3, 2)
    x = ctorch.randn(2, 3, requires_grad=True)
    seen = _non_full_hook_run(lin, x)
    # the hook runs on the Linear node; ctorch's fused node has edges (input, weight, bias), PyTorch's
    # AddmmBackward0 (bias, input, weight.T): the same gradients in another order
    assert len(seen) == 1 and sorted(seen[0][1]) == [(2,), (2, 3), (2, 3)] and seen[0][2] == [(2, 2)]
    full = nn.Linear(3, 2)
    full.register_full_backward_hook(lambda *a: None)
    msg = "^Cannot use both regular backward hooks and full backward hooks on a single Module"
    with pytest.raises(RuntimeError, match=msg):
        full.register_backward_hook(lambda *a: None)
    old = nn.Linear(3, 2)
    old.register_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match=msg):
        old.register_full_backward_hook(lambda *a: None)
