"""Lazy modules (UninitializedParameter / Buffer, Lazy*), nn.Buffer, fractional max pooling, LPPool3d,
MaxUnpool3d, CrossMapLRN2d, AdaptiveLogSoftmaxWithLoss and the nn.utils fusion / skip_init / stateless /
memory-format helpers, against NumPy references and PyTorch's reprs, keys and messages."""
import numpy as np
import pytest

import ctorch as torch
import ctorch.nn as nn
import ctorch.nn.functional as F
from ctorch.autograd import gradcheck


# --- lazy modules ------------------------------------------------------------------------------------
def test_uninitialized_tensors():
    p = nn.UninitializedParameter()
    assert repr(p) == "<UninitializedParameter>" and p.requires_grad
    assert nn.UninitializedParameter.cls_to_become is nn.Parameter
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        p.shape
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and p.shape == (2, 3) and p.dtype == torch.float32
    b = nn.UninitializedBuffer(dtype=torch.float64)
    assert repr(b) == "<UninitializedBuffer>" and b.persistent and not b.requires_grad
    b.materialize((4,))
    assert b.shape == (4,) and b.dtype == torch.float64


def test_lazy_linear_dry_run_and_optimizer():
    m = nn.LazyLinear(3)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert isinstance(m, nn.modules.lazy.LazyModuleMixin) and m.has_uninitialized_params()
    sd = m.state_dict()
    assert list(sd) == ["weight", "bias"] and all(isinstance(v, nn.UninitializedParameter) for v in sd.values())
    x = torch.randn(2, 5)
    y = m(x)
    assert type(m) is nn.Linear and repr(m) == "Linear(in_features=5, out_features=3, bias=True)"
    assert m.weight.shape == (3, 5) and type(m.weight) is nn.Parameter and y.shape == (2, 3)
    bound = 1 / np.sqrt(5)
    assert np.abs(m.weight.detach().numpy()).max() <= bound and np.abs(m.bias.detach().numpy()).max() <= bound
    np.testing.assert_allclose(y.detach().numpy(), x.numpy() @ m.weight.detach().numpy().T + m.bias.detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    opt = torch.optim.SGD(m.parameters(), lr=0.5)
    before = m.weight.detach().numpy().copy()
    m(x).sum().backward()
    opt.step()
    np.testing.assert_allclose(m.weight.detach().numpy(), before - 0.5 * np.tile(x.numpy().sum(0), (3, 1)), rtol=1e-5)
    assert nn.LazyLinear(2, bias=False).bias is None


def test_lazy_load_state_dict():
    src = nn.Linear(5, 3)
    m = nn.LazyLinear(3)
    m.load_state_dict(src.state_dict())
    assert type(m) is nn.LazyLinear and m.weight.shape == (3, 5)
    np.testing.assert_array_equal(m.weight.detach().numpy(), src.weight.detach().numpy())
    m(torch.randn(1, 5))
    assert repr(m) == "Linear(in_features=5, out_features=3, bias=True)"
    assert repr(nn.LazyLinear(3).load_state_dict(nn.LazyLinear(3).state_dict())) == "<All keys matched successfully>"
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        nn.Linear(4, 3).load_state_dict(nn.LazyLinear(3).state_dict())
    bn = nn.LazyBatchNorm1d()
    ref = nn.BatchNorm1d(4)
    ref.running_mean.fill_(2.0)
    bn.load_state_dict(ref.state_dict())
    np.testing.assert_array_equal(bn.running_mean.numpy(), np.full(4, 2.0, np.float32))


def test_lazy_conv_and_norm():
    c = nn.LazyConv2d(4, 3)
    assert repr(c) == "LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1))"
    c(torch.randn(1, 2, 5, 5))
    assert repr(c) == "Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1))" and c.weight.shape == (4, 2, 3, 3)
    t = nn.LazyConvTranspose2d(4, 3, stride=2, groups=2)
    t(torch.randn(2, 5, 5))  # unbatched: channels are dim 0
    assert type(t) is nn.ConvTranspose2d and t.weight.shape == (2, 2, 3, 3)
    for cls, shape in [(nn.LazyConv1d, (1, 2, 6)), (nn.LazyConv3d, (1, 2, 4, 4, 4)), (nn.LazyConvTranspose1d, (2, 6)),
                       (nn.LazyConvTranspose3d, (1, 2, 3, 3, 3))]:
        m = cls(3, 2)
        y = m(torch.randn(*shape))
        assert y.shape[y.dim() - m._dims - 1] == 3 and m.in_channels == 2 and m.weight.dim() == m._dims + 2
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"):
        nn.LazyConv2d(4, 3)(torch.randn(3, 3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(torch.randn(1, 3, 5, 5))
    b = nn.LazyBatchNorm2d()
    assert repr(b) == "LazyBatchNorm2d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    assert list(b.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    b(torch.randn(2, 3, 4, 4))
    assert type(b) is nn.BatchNorm2d and type(b.running_mean) is torch.Tensor and b.running_var.shape == (3,)
    assert int(b.num_batches_tracked) == 1
    # nothing to infer: num_features stays 0 (PyTorch's warning and repr)
    i = nn.LazyInstanceNorm1d(affine=False, track_running_stats=False)
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        i(torch.randn(2, 3, 7))
    assert repr(i) == "InstanceNorm1d(0, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)"
    nb = nn.LazyBatchNorm1d(bias=False)
    assert list(nb.state_dict()) == ["weight", "running_mean", "running_var", "num_batches_tracked"]
    nb(torch.randn(2, 3))
    assert repr(nb) == "BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=False, track_running_stats=True)"
    for cls, shape in [(nn.LazyBatchNorm1d, (4, 3)), (nn.LazyBatchNorm3d, (2, 3, 2, 2, 2)),
                       (nn.LazyInstanceNorm2d, (2, 3, 4, 4)), (nn.LazyInstanceNorm3d, (2, 3, 2, 2, 2))]:
        m = cls()
        m(torch.randn(*shape))
        assert m.num_features == 3 and m.weight.shape == (3,)


def test_lazy_dtype_move_and_device(device):
    m = nn.LazyLinear(2).double().to(device)
    y = m(torch.randn(1, 3, dtype=torch.float64, device=device))
    assert m.weight.dtype == torch.float64 and m.weight.device.type == device and y.device.type == device


def test_buffer():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Buffer(torch.ones(2))
            self.b = nn.Buffer(torch.zeros(1), persistent=False)

    m = M()
    assert list(m.state_dict()) == ["a"] and [n for n, _ in m.named_buffers()] == ["a", "b"]
    assert isinstance(m.a, nn.Buffer) and not isinstance(torch.ones(1), nn.Buffer)
    assert nn.Buffer(torch.ones(1)).persistent


# --- fractional max pooling ---------------------------------------------------------------------------------
def _frac_starts(u, size, kernel, out, np_dtype):
    if out == 1:
        return [size - kernel]
    alpha = np_dtype(size - kernel) / np_dtype(out - 1)
    u = np_dtype(u)
    return [int((np_dtype(i) + u) * alpha) - int(u * alpha) for i in range(out - 1)] + [size - kernel]


def _frac_ref(x, kernel, out, samples):
    """NumPy fractional max pool of batched (N, C, *spatial); samples (N, C, k) in torch's order."""
    k = len(kernel)
    n, c = x.shape[:2]
    vals = np.zeros((n, c) + tuple(out), x.dtype)
    idx = np.zeros((n, c) + tuple(out), np.int64)
    for b in range(n):
        for ch in range(c):
            order = [1, 0] if k == 2 else [0, 1, 2]
            starts = [_frac_starts(samples[b, ch, order[d]], x.shape[2 + d], kernel[d], out[d], x.dtype.type)
                      for d in range(k)]
            for o in np.ndindex(*out):
                window = tuple(slice(starts[d][o[d]], starts[d][o[d]] + kernel[d]) for d in range(k))
                w = x[b, ch][window]
                pos = np.unravel_index(np.argmax(w), w.shape)
                full = tuple(starts[d][o[d]] + pos[d] for d in range(k))
                vals[b, ch][o] = w[pos]
                idx[b, ch][o] = np.ravel_multi_index(full, x.shape[2:])
    return vals, idx


@pytest.mark.parametrize("k,shape,kernel,out", [(2, (2, 3, 9, 11), (2, 3), (4, 5)), (2, (1, 2, 7, 7), (3, 3), (1, 5)),
                                                (3, (1, 2, 5, 6, 7), (2, 2, 3), (3, 4, 2))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fractional_max_pool_values(k, shape, kernel, out, dtype, device, rng):
    x = rng.standard_normal(shape).astype(dtype)
    samples = rng.random((shape[0], shape[1], k)).astype(dtype)
    pool = F.fractional_max_pool2d if k == 2 else F.fractional_max_pool3d
    y, i = pool(torch.tensor(x, device=device), kernel, output_size=out, return_indices=True,
                _random_samples=torch.tensor(samples, device=device))
    ev, ei = _frac_ref(x, kernel, out, samples)
    np.testing.assert_array_equal(i.cpu().numpy(), ei)
    np.testing.assert_array_equal(y.cpu().numpy(), ev)
    assert y.dtype == getattr(torch, dtype) and i.dtype == torch.int64
    # unbatched input: the same planes
    y0 = pool(torch.tensor(x[0], device=device), kernel, output_size=out,
              _random_samples=torch.tensor(samples[:1], device=device))
    np.testing.assert_array_equal(y0.cpu().numpy(), ev[0])


def test_fractional_max_pool_sample_order():
    x = torch.arange(11 * 13, dtype=torch.float32).reshape(1, 1, 11, 13)
    # sample 1 drives the rows (H), sample 0 the columns (W), as PyTorch's
    _, i = F.fractional_max_pool2d(x, 2, output_size=3, return_indices=True,
                                   _random_samples=torch.tensor([[[0.2, 0.0]]]))
    assert i.tolist() == [[[[14, 19, 25], [66, 71, 77], [131, 136, 142]]]]
    _, i = F.fractional_max_pool2d(x, 2, output_size=3, return_indices=True,
                                   _random_samples=torch.tensor([[[0.0, 0.2]]]))
    assert i.tolist() == [[[[14, 19, 25], [79, 84, 90], [131, 136, 142]]]]


def test_fractional_max_pool_modules_shapes_and_ratio():
    m = nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))
    assert repr(m) == "FractionalMaxPool2d()" and m.kernel_size == (3, 3) and m.output_ratio == (0.5, 0.5)
    assert m(torch.randn(2, 3, 10, 9)).shape == (2, 3, 5, 4)
    m3 = nn.FractionalMaxPool3d(2, output_size=3, return_indices=True)
    y, i = m3(torch.randn(2, 6, 6, 5))
    assert y.shape == i.shape == (2, 3, 3, 3)
    assert F.fractional_max_pool2d(torch.zeros(0, 2, 5, 5), 2, output_size=3).shape == (0, 2, 3, 3)
    y, i = F.fractional_max_pool2d(torch.zeros(1, 2, 5, 5), 2, output_size=(2, 0), return_indices=True)
    assert y.shape == i.shape == (1, 2, 2, 0) and i.dtype == torch.int64
    assert F.fractional_max_pool2d(torch.randn(1, 1, 5, 9), (2, 3), output_ratio=(0.5, 0.7)).shape == (1, 1, 2, 6)
    assert list(m.state_dict()) == []


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: nn.FractionalMaxPool2d(2), ValueError, "requires specifying either an output size, or a pooling ratio"),
    (lambda: nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5), ValueError, "only one of output_size"),
    (lambda: nn.FractionalMaxPool2d(2, output_ratio=1.5), ValueError,
     r"output_ratio must be between 0 and 1 \(got 1.5\)"),
    (lambda: F.fractional_max_pool2d(torch.randn(1, 1, 11, 13), 2), ValueError,
     "either an output_size or an output_ratio"),
    (lambda: F.fractional_max_pool2d(torch.randn(1, 1, 11, 13), 12, output_size=4), RuntimeError,
     r"fractional_max_pool2d\(\): pool height 12 too large relative to input height 11"),
    (lambda: F.fractional_max_pool3d(torch.randn(1, 1, 11, 13), 2, output_size=3), RuntimeError,
     r"fractional_max_pool3d_out\(\): pool time 2 too large relative to input time 1"),
    (lambda: F.fractional_max_pool2d(torch.randn(1, 1, 5, 5), 2, output_size=(2, 6)), RuntimeError,
     "pool width 2 too large relative to input width 5"),
    (lambda: F.fractional_max_pool2d(torch.randn(2, 3, 5, 5), 2, output_size=2, _random_samples=torch.rand(1, 3, 2)),
     RuntimeError, r"Expect _random_samples.size\(0\) no less then input batch size."),
    (lambda: F.fractional_max_pool2d(torch.randn(2, 3, 5, 5), 2, output_size=2, _random_samples=torch.rand(2, 4, 2)),
     RuntimeError, r"Expect _random_samples.size\(1\) equals to input channel size."),
    (lambda: F.fractional_max_pool2d(torch.randn(2, 3, 5, 5), 2, output_size=2, _random_samples=torch.rand(2, 2)),
     RuntimeError, "Expect _random_samples to have 3 dimensions, got 2"),
    (lambda: F.fractional_max_pool2d(torch.randn(11, 13), 2, output_size=3), RuntimeError, "Expected 3D or 4D tensor"),
    (lambda: F.fractional_max_pool2d(torch.randn(1, 1, 9, 9), 2, output_size=3, _random_samples=torch.rand(1, 1, 3)),
     RuntimeError, r"Expect _random_samples.size\(2\) equals to 2; got 3."),
    (lambda: F.fractional_max_pool2d(torch.randn(1, 1, 9, 9), 2, output_size=3,
                                     _random_samples=torch.rand(1, 1, 2, dtype=torch.float64)),
     RuntimeError, "Expect _random_samples to have the same dtype as input"),
    (lambda: F.fractional_max_pool2d(torch.ones(1, 1, 9, 9, dtype=torch.int64), 2, output_size=3),
     NotImplementedError, "not implemented for 'Long'"),
    (lambda: F.fractional_max_pool2d(torch.randn(1, 1, 9, 9), 0, output_size=3), RuntimeError,
     "kernel size should be greater than zero, but got 0x0"),
])
def test_fractional_max_pool_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


@pytest.mark.parametrize("k", [2, 3])
def test_fractional_max_pool_gradcheck(k):
    shape = (1, 1, 4, 5) if k == 2 else (1, 1, 3, 3, 4)
    x = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    s = torch.rand(shape[0], shape[1], k, dtype=torch.float64)
    pool = F.fractional_max_pool2d if k == 2 else F.fractional_max_pool3d
    assert gradcheck(lambda t: pool(t, 2, output_size=2 if k == 3 else 3, _random_samples=s), (x,))


# --- LPPool3d, MaxUnpool3d --------------------------------------------------------------------------------
def test_lp_pool3d(device, rng):
    x = rng.random((2, 3, 4, 4, 6)) + 0.1
    y = F.lp_pool3d(torch.tensor(x, device=device), 3, (2, 2, 3))
    ref = (x.reshape(2, 3, 2, 2, 2, 2, 2, 3) ** 3).sum(axis=(3, 5, 7)) ** (1 / 3)
    np.testing.assert_allclose(y.cpu().numpy(), ref, rtol=1e-12)
    m = nn.LPPool3d(2, 2)
    assert repr(m) == "LPPool3d(norm_type=2, kernel_size=2, stride=None, ceil_mode=False)"
    np.testing.assert_allclose(m(torch.tensor(x)).numpy(),
                               np.sqrt((x.reshape(2, 3, 2, 2, 2, 2, 3, 2) ** 2).sum(axis=(3, 5, 7))), rtol=1e-12)
    t = torch.tensor(x[:1, :1], requires_grad=True)
    assert gradcheck(lambda v: F.lp_pool3d(v, 2, 2), (t,))


def test_max_unpool3d(device):
    x = torch.randn(1, 2, 4, 4, 4, device=device)
    y, i = F.max_pool3d(x, 2, return_indices=True)
    m = nn.MaxUnpool3d(2)
    assert repr(m) == "MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))"
    u = m(y, i).cpu().numpy()
    xn, yn, idx = x.cpu().numpy(), y.cpu().numpy(), i.cpu().numpy()
    ref = np.zeros((1, 2, 64), np.float32)
    for c in range(2):
        ref[0, c, idx[0, c].ravel()] = yn[0, c].ravel()
    np.testing.assert_array_equal(u, ref.reshape(xn.shape))
    assert F.max_unpool3d(y, i, 2, output_size=(5, 5, 5)).shape == (1, 2, 5, 5, 5)


# --- CrossMapLRN2d, AdaptiveLogSoftmaxWithLoss --------------------------------------------------------------
def _cross_map_scale(x, size, alpha, k):
    sq, channels, pre = x ** 2, x.shape[1], int((size - 1) / 2 + 1)
    s = np.zeros_like(x)
    for c in range(channels):
        lo, hi = max(c - pre + 1, 0), min(c + pre - 1, channels - 1)
        # the legacy running sum never drops channel 0 once past it
        s[:, c] = sq[:, lo:hi + 1].sum(1) + (sq[:, 0] if c >= pre else 0)
    return k + alpha / size * s


def _cross_map_legacy_grad(x, g, size, alpha, beta, k):
    """PyTorch's legacy backward: a window shifted by size - (size - 1) // 2, without the channel-0 term."""
    scale = _cross_map_scale(x, size, alpha, k)
    ratio = g * x * scale ** -beta / scale
    shift, acc = int(size - (size - 1) / 2), np.zeros_like(x)
    for c in range(x.shape[1]):
        acc[:, c] = ratio[:, max(c - shift, 0):c + size - shift].sum(1)
    return scale ** -beta * g - 2 * alpha * beta / size * x * acc


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_cross_map_lrn2d(size, rng):
    x = rng.standard_normal((2, 6, 3, 2))
    g = rng.standard_normal((2, 6, 3, 2))
    m = nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=2.0)
    xt = torch.tensor(x, requires_grad=True)
    y = m(xt)
    np.testing.assert_allclose(y.detach().numpy(), x * _cross_map_scale(x, size, 0.5, 2.0) ** -0.75, rtol=1e-12)
    assert repr(m) == f"CrossMapLRN2d({size}, alpha=0.5, beta=0.75, k=2.0)"
    if size == 1:
        with pytest.raises(RuntimeError, match=r"start \(1\) \+ length \(6\) exceeds dimension size \(6\)"):
            y.backward(torch.tensor(g))
    else:
        y.backward(torch.tensor(g))
        np.testing.assert_allclose(xt.grad.numpy(), _cross_map_legacy_grad(x, g, size, 0.5, 0.75, 2.0), rtol=1e-10)


def test_cross_map_lrn2d_errors():
    with pytest.raises(ValueError, match="CrossMapLRN2d: Expected input to be 4D, got 3D instead."):
        nn.CrossMapLRN2d(3)(torch.randn(3, 4, 5))


def test_adaptive_log_softmax():
    a = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0)
    assert [(k, tuple(v.shape)) for k, v in a.state_dict().items()] == [
        ("head.weight", (5, 8)), ("tail.0.0.weight", (4, 8)), ("tail.0.1.weight", (3, 4)),
        ("tail.1.0.weight", (2, 8)), ("tail.1.1.weight", (4, 2))]
    assert "(head): Linear(in_features=8, out_features=5, bias=False)" in repr(a)
    x = torch.randn(6, 8, dtype=torch.float64)
    a = a.double()
    t = torch.tensor([0, 4, 9, 3, 2, 7])
    r = a(x, t)
    assert r._fields == ("output", "loss") and type(r).__name__ == "_ASMoutput"
    # NumPy: head log-softmax + the cluster's log-softmax
    xn = x.numpy()

    def log_softmax(z):
        return z - np.log(np.exp(z - z.max(1, keepdims=True)).sum(1, keepdims=True)) - z.max(1, keepdims=True)

    head = log_softmax(xn @ a.head.weight.detach().numpy().T)
    full = [head[:, :3]]
    for i, (lo, hi) in enumerate([(3, 6), (6, 10)]):
        h2 = xn @ a.tail[i][0].weight.detach().numpy().T @ a.tail[i][1].weight.detach().numpy().T
        full.append(log_softmax(h2) + head[:, 3 + i:4 + i])
    full = np.concatenate(full, 1)
    np.testing.assert_allclose(a.log_prob(x).detach().numpy(), full, rtol=1e-10)
    np.testing.assert_allclose(r.output.detach().numpy(), full[np.arange(6), t.numpy()], rtol=1e-10)
    np.testing.assert_allclose(r.loss.item(), -full[np.arange(6), t.numpy()].mean(), rtol=1e-10)
    np.testing.assert_array_equal(a.predict(x).numpy(), full.argmax(1))
    assert a(x[0], t[0]).output.shape == () and a.log_prob(x[0]).shape == (10,)
    r.loss.backward()
    assert a.tail[1][1].weight.grad is not None
    with pytest.raises(ValueError, match="cutoffs should be a sequence of length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [])
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive integers"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 10])
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\], but values in range \[0, 12\]"):
        a(x[:4], torch.tensor([0, 1, 12, 3]))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        a(x, torch.zeros(1, 6, dtype=torch.int64))


# --- nn.utils ---------------------------------------------------------------------------------------------
def _eval_bn(bn):
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    bn.weight.data.uniform_(0.5, 1.5)
    bn.bias.data.uniform_(-1, 1)
    return bn.eval()


def test_fusion():
    conv, bn = nn.Conv2d(3, 4, 3).eval(), _eval_bn(nn.BatchNorm2d(4))
    x = torch.randn(2, 3, 5, 5)
    f = nn.utils.fuse_conv_bn_eval(conv, bn)
    assert type(f) is nn.Conv2d and type(f.weight) is nn.Parameter and f is not conv
    np.testing.assert_allclose(f(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    tconv, tbn = nn.ConvTranspose2d(3, 4, 2, bias=False).eval(), _eval_bn(nn.BatchNorm2d(4))
    ft = nn.utils.fuse_conv_bn_eval(tconv, tbn, transpose=True)
    np.testing.assert_allclose(ft(x).detach().numpy(), tbn(tconv(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    lin, bn1 = nn.Linear(3, 4).eval(), _eval_bn(nn.BatchNorm1d(4))
    xl = torch.randn(5, 3)
    fl = nn.utils.fuse_linear_bn_eval(lin, bn1)
    np.testing.assert_allclose(fl(xl).detach().numpy(), bn1(lin(xl)).detach().numpy(), rtol=1e-4, atol=1e-5)
    w, b = nn.utils.fuse_linear_bn_weights(lin.weight, None, bn1.running_mean, bn1.running_var, bn1.eps, None, None)
    scale = 1 / np.sqrt(bn1.running_var.numpy() + bn1.eps)
    np.testing.assert_allclose(b.detach().numpy(), -bn1.running_mean.numpy() * scale, rtol=1e-5)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(nn.Conv2d(3, 4, 3), bn)
    with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
        nn.utils.fuse_linear_bn_eval(lin, _eval_bn(nn.BatchNorm1d(3)))


def test_utils_stateless_skip_init_memory_format():
    lin = nn.Linear(3, 4)
    x = torch.randn(5, 3)
    with pytest.warns(FutureWarning, match="Please use torch.func.functional_call"):
        y = nn.utils.stateless.functional_call(lin, {"weight": torch.zeros(4, 3)}, (x,))
    np.testing.assert_array_equal(y.detach().numpy(), np.tile(lin.bias.detach().numpy(), (5, 1)))
    s = nn.utils.skip_init(nn.Linear, 3, 4, bias=False)
    assert repr(s) == "Linear(in_features=3, out_features=4, bias=False)" and s.weight.shape == (4, 3)
    with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
        nn.utils.skip_init(nn.ReLU)
    with pytest.raises(RuntimeError, match="Expected a Module"):
        nn.utils.skip_init(int)
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Sequential(nn.ConvTranspose2d(4, 2, 2)), nn.Conv3d(2, 3, 2))
    assert nn.utils.convert_conv2d_weight_memory_format(m, torch.channels_last) is m
    assert m[0].weight.is_contiguous(memory_format=torch.channels_last) and not m[0].weight.is_contiguous()
    assert m[1][0].weight.is_contiguous(memory_format=torch.channels_last)
    nn.utils.convert_conv3d_weight_memory_format(m, torch.channels_last_3d)
    assert m[2].weight.is_contiguous(memory_format=torch.channels_last_3d)
