"""Memory formats: torch.channels_last / channels_last_3d / contiguous_format / preserve_format through
contiguous, is_contiguous, to, clone, empty and the *_like factories, and nn.Module.to(memory_format=):
the strides PyTorch gives (hand-derived below), the values unchanged, gradients through the copies."""
import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
from conftest import to_numpy

CL, CL3 = ctorch.channels_last, ctorch.channels_last_3d


def cl_strides(sizes):
    """Dense strides with the channels (dim 1) fastest, then the spatial dims from the last, then N."""
    order = [1] + list(range(len(sizes) - 1, 1, -1)) + [0]
    strides, expected = [0] * len(sizes), 1
    for d in order:
        strides[d] = expected
        expected *= sizes[d]
    return tuple(strides)


def data(device, *sizes):
    return ctorch.tensor(np.arange(np.prod(sizes), dtype=np.float32).reshape(sizes), device=device)


@pytest.mark.parametrize("sizes", [(2, 3, 4, 5), (1, 3, 1, 1), (2, 0, 4, 5), (2, 3, 0, 5)])
def test_empty_and_like_factories(device, sizes):
    want = cl_strides(sizes)
    assert want == ((60, 1, 15, 3) if sizes == (2, 3, 4, 5) else want)
    assert ctorch.empty(sizes, memory_format=CL, device=device).stride() == want
    x = ctorch.empty(sizes, device=device)
    for fn in (ctorch.empty_like, ctorch.zeros_like, ctorch.ones_like, ctorch.rand_like):
        y = fn(x, memory_format=CL)
        assert y.stride() == want and y.is_contiguous(memory_format=CL), fn.__name__
    assert ctorch.zeros_like(x, memory_format=CL).sum().item() == 0
    assert ctorch.empty_like(ctorch.empty(sizes, memory_format=CL, device=device)).stride() == want  # preserve


def test_conversions_keep_values(device):
    x = data(device, 2, 3, 4, 5)
    ref = to_numpy(x)
    for y in (x.contiguous(memory_format=CL), x.to(memory_format=CL), x.clone(memory_format=CL),
              x.to(device, ctorch.float64, memory_format=CL), x.transpose(2, 3).contiguous(memory_format=CL)):
        assert y.stride() == cl_strides(tuple(y.shape)) and y.is_contiguous(memory_format=CL)
        assert not y.is_contiguous() and y.is_contiguous(memory_format=ctorch.contiguous_format) is False
        np.testing.assert_array_equal(to_numpy(y), ref if y.shape == x.shape else ref.transpose(0, 1, 3, 2))
    y = x.to(memory_format=CL)
    assert y.to(memory_format=CL) is y and y.contiguous(memory_format=CL) is y
    back = y.contiguous()
    assert back.is_contiguous() and back.stride() == (60, 20, 5, 1)
    np.testing.assert_array_equal(to_numpy(back), ref)
    assert y.to(memory_format=ctorch.contiguous_format).stride() == (60, 20, 5, 1)
    assert x.to(memory_format=ctorch.contiguous_format) is x
    assert y.clone().stride() == y.stride()  # preserve_format
    # elementwise results keep the layout of their input, as PyTorch's
    assert (y + 1).stride() == y.stride() and y.relu().stride() == y.stride()
    z = data(device, 2, 3, 4, 5, 6)
    z3 = z.to(memory_format=CL3)
    assert z3.stride() == (360, 1, 90, 18, 3) and z3.is_contiguous(memory_format=CL3)
    np.testing.assert_array_equal(to_numpy(z3), to_numpy(z))


def test_is_contiguous_rules(device):
    assert data(device, 1, 3, 1, 1).is_contiguous(memory_format=CL)  # size-1 dims do not count
    assert data(device, 2, 1, 4, 5).is_contiguous(memory_format=CL)
    assert not data(device, 2, 3, 4, 5).is_contiguous(memory_format=CL)
    assert not data(device, 2, 3, 4).is_contiguous(memory_format=CL)  # another rank: False, no error
    assert not data(device, 2, 3, 4, 5).is_contiguous(memory_format=CL3)
    assert data(device, 2, 3, 4, 5).is_contiguous(memory_format=ctorch.contiguous_format)
    assert not data(device, 2, 3, 4, 5).transpose(0, 1).is_contiguous(memory_format=ctorch.contiguous_format)


def test_errors(device):
    x3 = data(device, 2, 3, 4)
    for call in (lambda: x3.contiguous(memory_format=CL), lambda: x3.to(memory_format=CL),
                 lambda: ctorch.empty(2, 3, memory_format=CL), lambda: data(device, 2, 3, 4, 5).clone(memory_format=CL3)):
        with pytest.raises(RuntimeError, match="required rank [45] tensor to use channels_last"):
            call()
    with pytest.raises(TypeError, match="argument 'memory_format' must be torch.memory_format, not str"):
        x3.contiguous(memory_format="channels_last")
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported by the contiguous operator"):
        x3.contiguous(memory_format=ctorch.preserve_format)
    assert repr(CL) == "torch.channels_last" and repr(CL3) == "torch.channels_last_3d"


def test_gradients_through_layout_copies(device):
    x = data(device, 2, 3, 2, 2).double().requires_grad_()
    y = x.contiguous(memory_format=CL)
    assert type(y.grad_fn).__name__ == "CloneBackward0"
    (y * y).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), 2 * to_numpy(x))
    assert ctorch.autograd.gradcheck(lambda a: a.to(memory_format=CL) * 3, (x.detach().requires_grad_(),))


def test_module_to_channels_last(device):
    ctorch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 2)).to(device)
    x = ctorch.randn(2, 3, 6, 6, device=device)
    before = to_numpy(model(x))
    assert model.to(memory_format=CL) is model
    w = model[0].weight
    assert w.stride() == cl_strides(tuple(w.shape)) and model[0].bias.stride() == (1,)
    assert model[4].weight.is_contiguous()  # 2-d parameters keep their layout
    np.testing.assert_allclose(to_numpy(model(x.to(memory_format=CL))), before, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="required rank 5"):
        nn.Conv2d(3, 4, 3).to(memory_format=CL3)


# --- layout propagation through convolution, normalisation and pooling (PyTorch's suggest_memory_format) ---
F = nn.functional


def is_cl(t):
    return t.is_contiguous(memory_format=CL3 if t.dim() == 5 else CL)


def leaf(a, device, fmt=None):
    t = ctorch.tensor(a, device=device)
    return (t.contiguous(memory_format=fmt) if fmt is not None else t).requires_grad_()


def same(a, b):
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))  # computed alike, copied into another layout


@pytest.mark.parametrize("op", ["conv2d", "conv_transpose2d", "conv3d"])
def test_conv_channels_last(device, op):
    rng = np.random.default_rng(0)
    x3d = op == "conv3d"
    fmt = CL3 if x3d else CL
    xs, ws = ((2, 3, 3, 4, 4), (4, 3, 2, 2, 2)) if x3d else ((2, 3, 5, 5), (3, 4, 3, 3) if op == "conv_transpose2d" else (4, 3, 3, 3))
    xa, wa = rng.standard_normal(xs).astype(np.float32), rng.standard_normal(ws).astype(np.float32)
    ba = rng.standard_normal(ws[1] if op == "conv_transpose2d" else ws[0]).astype(np.float32)
    fn = getattr(F, op)
    x, w, b = leaf(xa, device), leaf(wa, device), leaf(ba, device)
    y = fn(x, w, b, padding=1)
    ga = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    y.backward(ctorch.tensor(ga, device=device))
    assert not is_cl(y)
    # input or weight channels_last: the output and the raw gradients are; leaves' .grad keep their own layout
    for xf, wf in [(fmt, None), (None, fmt), (fmt, fmt)]:
        xc, wc, bc = leaf(xa, device, xf), leaf(wa, device, wf), leaf(ba, device)
        yc = fn(xc, wc, bc, padding=1)
        assert is_cl(yc)
        same(yc, y)
        gc = ctorch.tensor(ga, device=device)
        gx, gw = ctorch.autograd.grad(yc, (xc, wc), gc, retain_graph=True)
        assert is_cl(gx) and is_cl(gw)
        yc.backward(gc)
        assert is_cl(xc.grad) == (xf is not None) and is_cl(wc.grad) == (wf is not None)
        assert xc.grad.is_contiguous() == (xf is None) and wc.grad.is_contiguous() == (wf is None)
        for got, want in [(xc.grad, x.grad), (wc.grad, w.grad), (bc.grad, b.grad)]:
            same(got, want)
    if not x3d:  # a strided (sliced) channels_last input still suggests channels_last, as PyTorch's
        xs_cl = ctorch.tensor(xa, device=device).contiguous(memory_format=CL)[:, 1:]
        w2 = w.detach()[:, 1:].contiguous() if op == "conv2d" else w.detach()[1:]
        assert not xs_cl.is_contiguous(memory_format=CL) and is_cl(fn(xs_cl, w2))
        assert not is_cl(fn(xs_cl[:, :, ::2], w2))  # PyTorch's rule: strides no longer ordered as channels_last
        one = ctorch.ones(2, 1, 1, 1, device=device)  # (N, 1, 1, 1): ambiguous, contiguous
        assert fn(one, ctorch.ones(1, 1, 1, 1, device=device)).stride() == (1, 1, 1, 1)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_channels_last(device, training):
    rng = np.random.default_rng(1)
    xa = rng.standard_normal((2, 3, 4, 5))
    wa, ba = rng.standard_normal(3), rng.standard_normal(3)
    outs = []
    for fmt in (None, CL):
        x, w, b = leaf(xa, device, fmt), leaf(wa, device), leaf(ba, device)
        rm, rv = ctorch.zeros(3, dtype=ctorch.float64, device=device), ctorch.ones(3, dtype=ctorch.float64, device=device)
        y = F.batch_norm(x, rm, rv, w, b, training=training)
        (gx,) = ctorch.autograd.grad(y, (x,), ctorch.tensor(np.linspace(-1, 1, 120).reshape(2, 3, 4, 5), device=device),
                                     retain_graph=True)
        (y * y).sum().backward()
        assert is_cl(y) == is_cl(gx) == is_cl(x.grad) == (fmt is not None)
        outs.append((y, gx, x.grad, w.grad, b.grad, rm, rv))
    for got, want in zip(*outs):
        same(got, want)


def test_pools_and_upsample_channels_last(device):
    rng = np.random.default_rng(2)
    xa = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    ops = [lambda t: F.max_pool2d(t, 2, return_indices=True), lambda t: F.avg_pool2d(t, 3, 2, 1),
           lambda t: F.adaptive_avg_pool2d(t, (2, 3)), lambda t: F.adaptive_max_pool2d(t, (4, 5), return_indices=True),
           lambda t: F.interpolate(t, scale_factor=2, mode="bilinear")]
    for op in ops:
        results = []
        for fmt in (None, CL):
            x = leaf(xa, device, fmt)
            r = op(x)
            y = r[0] if isinstance(r, tuple) else r
            assert all(is_cl(t) == (fmt is not None) for t in (r if isinstance(r, tuple) else (r,)))
            g = ctorch.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)).astype(np.float32), device=device)
            if op is ops[-1] and fmt is not None:  # upsample's gradient takes grad_output's layout (below)
                g = g.contiguous(memory_format=fmt)
            (gx,) = ctorch.autograd.grad(y, (x,), g, retain_graph=True)
            assert is_cl(gx) == (fmt is not None)
            if op is not ops[-1]:  # a grad_output in another layout gives the same gradient
                same(ctorch.autograd.grad(y, (x,), g.contiguous(memory_format=CL if fmt is None else ctorch.contiguous_format))[0], gx)
            results.append((y, gx))
        for got, want in zip(*results):
            same(got, want)
    # PyTorch: upsample's gradient takes grad_output's layout; max_pool3d keeps channels_last_3d, avg_pool3d not
    x = leaf(xa, device)
    y = F.interpolate(x, scale_factor=2, mode="nearest")
    assert is_cl(ctorch.autograd.grad(y, (x,), ctorch.ones_like(y, memory_format=CL))[0])
    x = leaf(xa, device, CL)
    y = F.interpolate(x, scale_factor=2, mode="nearest")
    assert ctorch.autograd.grad(y, (x,), ctorch.ones_like(y, memory_format=ctorch.contiguous_format))[0].is_contiguous()
    x5 = ctorch.tensor(rng.standard_normal((2, 3, 4, 4, 4)).astype(np.float32), device=device).contiguous(memory_format=CL3)
    assert is_cl(F.max_pool3d(x5, 2)) and F.avg_pool3d(x5, 2).is_contiguous()
    same(F.max_pool3d(x5, 2), F.max_pool3d(x5.contiguous(), 2))


def test_channels_last_model_matches_nchw(device):
    ctorch.manual_seed(0)
    ref = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2)).to(device)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2)).to(device)
    model.load_state_dict(ref.state_dict())
    model.to(memory_format=CL)
    x = ctorch.randn(2, 3, 6, 6, device=device)
    want, got = ref(x), model(x.to(memory_format=CL))
    assert is_cl(got) and got.is_contiguous() is False
    same(got, want)
    (want * want).sum().backward()
    (got * got).sum().backward()
    assert is_cl(model[0].weight.grad)
    for p, q in zip(model.parameters(), ref.parameters()):
        assert p.grad.stride() == p.stride()
        same(p.grad, q.grad)
    same(model[1].running_mean, ref[1].running_mean)


def test_grad_layout_contract(device):
    """AccumulateGrad: a dense leaf's .grad takes the leaf's strides, another leaf's .grad is contiguous."""
    a = ctorch.arange(12.0, device=device).reshape(4, 3).t().detach().requires_grad_()
    (a.contiguous() * 2).sum().backward()
    assert a.grad.stride() == (1, 3)
    same(a.grad, ctorch.full((3, 4), 2.0))
    b = ctorch.ones(4, 1, device=device).expand(4, 3).detach().requires_grad_()
    (b * 2).sum().backward()
    assert b.grad.stride() == (3, 1)
    c = ctorch.arange(12.0, device=device, dtype=ctorch.float64).reshape(4, 3).t().detach().requires_grad_()
    c2 = c.contiguous()
    (c2 * c2).sum().backward(create_graph=True)
    assert c.grad.stride() == (1, 3) and type(c.grad.grad_fn).__name__ == "CopyBackwards"
    c.grad.sum().backward()
    same(c.grad, 2 * c.detach() + 2)
