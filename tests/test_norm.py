"""Batch norm and group norm (csrc/norm.c, cuda/norm.cu) and nn.utils' gradient clipping and
parameter/vector conversion (csrc/clip.c), against NumPy on every device."""
import math

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
import ctorch.nn.functional as F
from ctorch.autograd import gradcheck

from conftest import TOL, to_numpy

RNG = np.random.default_rng(7)


def t(a, device, dtype="float32", requires_grad=False):
    return ctorch.tensor(np.asarray(a), dtype=getattr(ctorch, dtype), device=device, requires_grad=requires_grad)


def close(actual, expected, dtype, scale=1.0):
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(to_numpy(actual).astype(np.float64), expected, rtol=rtol * scale, atol=atol * scale)


# --- NumPy references -------------------------------------------------------------------------------------
def np_batch_norm(x, w, b, mean=None, var=None, eps=1e-5):
    """(out, batch mean, biased var, unbiased var); mean/var given: eval mode."""
    dims = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    m = x.mean(axis=dims)
    v = x.var(axis=dims)
    n = x.size // x.shape[1]
    vu = v * n / (n - 1) if n > 1 else np.full_like(v, np.nan)
    use_m, use_v = (m, v) if mean is None else (mean, var)
    out = (x - use_m.reshape(shape)) / np.sqrt(use_v.reshape(shape) + eps)
    out = out * (1.0 if w is None else w.reshape(shape)) + (0.0 if b is None else b.reshape(shape))
    return out, m, v, vu


def np_batch_norm_grads(x, w, g, eps=1e-5):
    """Training-mode gradients (input, weight, bias)."""
    dims = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    m = x.mean(axis=dims, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(axis=dims, keepdims=True) + eps)
    xhat = (x - m) * rstd
    dy = g * w.reshape(shape)
    dx = rstd * (dy - dy.mean(axis=dims, keepdims=True) - xhat * (dy * xhat).mean(axis=dims, keepdims=True))
    return dx, (g * xhat).sum(axis=dims), g.sum(axis=dims)


def np_group_norm(x, groups, w, b, eps=1e-5):
    n, c = x.shape[:2]
    xr = x.reshape(n, groups, -1)
    xhat = ((xr - xr.mean(axis=2, keepdims=True)) / np.sqrt(xr.var(axis=2, keepdims=True) + eps)).reshape(x.shape)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return xhat * (1.0 if w is None else w.reshape(shape)) + (0.0 if b is None else b.reshape(shape))


# ====================================================================================================
# batch norm
# ====================================================================================================
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (3, 2, 3, 4)], ids=["NC", "NCL", "NCHW"])
def test_batch_norm_train_forward(device, dtype, shape):
    x = RNG.standard_normal(shape) * 2 + 1
    w, b = RNG.standard_normal(shape[1]), RNG.standard_normal(shape[1])
    X = t(x, device, dtype)
    # reduced-precision input takes float32 parameters (PyTorch's mixed type)
    pdtype = "float32" if dtype in ("float16", "bfloat16") else dtype
    rm, rv = t(np.full(shape[1], 0.5), device, pdtype), t(np.full(shape[1], 2.0), device, pdtype)
    out = F.batch_norm(X, rm, rv, t(w, device, pdtype), t(b, device, pdtype), training=True, momentum=0.3)
    xq = to_numpy(X).astype(np.float64)  # the values the kernel saw
    expected, m, _, vu = np_batch_norm(xq, w, b)
    assert out.dtype == X.dtype and out.shape == X.shape
    close(out, expected, dtype, scale=4)
    close(rm, 0.7 * 0.5 + 0.3 * m, pdtype)
    close(rv, 0.7 * 2.0 + 0.3 * vu, pdtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_batch_norm_eval_forward(device, dtype):
    x = RNG.standard_normal((5, 4, 3))
    mean, var = RNG.standard_normal(4), RNG.uniform(0.5, 2.0, 4)
    pdtype = "float32" if dtype == "float16" else dtype
    rm, rv = t(mean, device, pdtype), t(var, device, pdtype)
    X = t(x, device, dtype)
    out = F.batch_norm(X, rm, rv, eps=1e-3)
    expected, *_ = np_batch_norm(to_numpy(X).astype(np.float64), None, None, to_numpy(rm), to_numpy(rv), eps=1e-3)
    close(out, expected, dtype, scale=4)
    close(rm, to_numpy(rm), pdtype)  # eval leaves the statistics alone
    # strided input (a transposed view) and no running statistics in training
    xt = t(np.ascontiguousarray(x.transpose(1, 0, 2)), device, dtype).transpose(0, 1)
    out = F.batch_norm(xt, None, None, training=True)
    close(out, np_batch_norm(to_numpy(xt).astype(np.float64), None, None)[0], dtype, scale=4)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_gradcheck(device, training):
    x = t(RNG.standard_normal((4, 3, 2)), device, "float64", requires_grad=True)
    w = t(RNG.standard_normal(3), device, "float64", requires_grad=True)
    b = t(RNG.standard_normal(3), device, "float64", requires_grad=True)
    rm, rv = t(RNG.standard_normal(3), device, "float64"), t(RNG.uniform(0.5, 2, 3), device, "float64")
    out = F.batch_norm(x, rm, rv, w, b, training=training)
    assert type(out.grad_fn).__name__ == "NativeBatchNormBackward0"
    assert gradcheck(lambda a, ww, bb: F.batch_norm(a, None if training else rm, None if training else rv, ww, bb,
                                                   training=training), (x, w, b))
    # torch.batch_norm's nine positional arguments (cudnn_enabled last) record the same node and gradients
    full = ctorch.batch_norm(x, w, b, rm.clone(), rv.clone(), training, 0.1, 1e-5, True)
    assert type(full.grad_fn).__name__ == "NativeBatchNormBackward0"
    np.testing.assert_allclose(to_numpy(full), to_numpy(out), rtol=1e-12)
    assert gradcheck(lambda a, ww, bb: ctorch.batch_norm(a, ww, bb, None if training else rm, None if training else rv,
                                                         training, 0.1, 1e-5, False), (x, w, b))
    # one parameter only, and no affine parameters
    assert gradcheck(lambda a, ww: F.batch_norm(a, rm.clone(), rv.clone(), ww, None, training=training), (x, w))
    assert gradcheck(lambda a: F.batch_norm(a, rm.clone(), rv.clone(), training=training), (x,))


def test_batch_norm_backward_numpy(device):
    x = RNG.standard_normal((5, 3, 4))
    w, g = RNG.standard_normal(3), RNG.standard_normal((5, 3, 4))
    X, W = t(x, device, requires_grad=True), t(w, device, requires_grad=True)
    B = t(np.zeros(3), device, requires_grad=True)
    F.batch_norm(X, None, None, W, B, training=True).backward(t(g, device))
    dx, dw, db = np_batch_norm_grads(x, w, g)
    close(X.grad, dx, "float32", scale=10)
    close(W.grad, dw, "float32", scale=10)
    close(B.grad, db, "float32", scale=10)
    # eval: dx = g w / sqrt(var + eps), dw = sum g xhat
    mean, var = RNG.standard_normal(3), RNG.uniform(0.5, 2, 3)
    X.grad = W.grad = None
    F.batch_norm(X, t(mean, device), t(var, device), W, None, training=False).backward(t(g, device))
    rstd = (1.0 / np.sqrt(var + 1e-5)).reshape(1, 3, 1)
    close(X.grad, g * w.reshape(1, 3, 1) * rstd, "float32", scale=10)
    close(W.grad, (g * (x - mean.reshape(1, 3, 1)) * rstd).sum(axis=(0, 2)), "float32", scale=10)


def check_double_backward(fn, x, device):
    """With create_graph the gradient is composed of recorded ops: its value must equal the fused kernels'
    and its derivative (of v . grad) central differences of the fused gradient."""
    v = RNG.standard_normal(tuple(x.shape))

    def fused_grad(a):
        a = a.detach().requires_grad_()
        (g,) = ctorch.autograd.grad((fn(a) ** 3).sum(), a)
        return to_numpy(g)

    (g,) = ctorch.autograd.grad((fn(x) ** 3).sum(), x, create_graph=True)
    np.testing.assert_allclose(to_numpy(g), fused_grad(x), rtol=1e-10, atol=1e-10)
    (gg,) = ctorch.autograd.grad((g * t(v, device, "float64")).sum(), x)
    base, eps, want = to_numpy(x), 1e-6, np.zeros(x.shape)
    for i in np.ndindex(*base.shape):
        d = np.zeros(base.shape)
        d[i] = eps
        want[i] = ((v * fused_grad(t(base + d, device, "float64"))).sum()
                   - (v * fused_grad(t(base - d, device, "float64"))).sum()) / (2 * eps)
    np.testing.assert_allclose(to_numpy(gg), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_double_backward(device, training):
    x = t(RNG.standard_normal((3, 2, 2)), device, "float64", requires_grad=True)
    w = t(RNG.standard_normal(2), device, "float64", requires_grad=True)
    rm, rv = t(RNG.standard_normal(2), device, "float64"), t(RNG.uniform(0.5, 2, 2), device, "float64")
    check_double_backward(lambda a: F.batch_norm(a, rm, rv, w, None, training=training), x, device)


def test_batch_norm_empty_and_mixed(device):
    rm, rv = t(np.zeros(3), device), t(np.ones(3), device)
    out = F.batch_norm(t(np.zeros((0, 3)), device), rm, rv, training=True)
    assert out.shape == (0, 3)
    close(rm, np.zeros(3), "float32")  # no values: the statistics stay
    x = t(np.zeros((2, 3, 0)), device, requires_grad=True)
    w = t(np.ones(3), device, requires_grad=True)
    F.batch_norm(x, None, None, w, training=True).sum().backward()
    assert x.grad.shape == (2, 3, 0)
    close(w.grad, np.zeros(3), "float32")
    # float16 input with float32 parameters: the output is float16, the gradients of the parameters float32
    xh = t(RNG.standard_normal((4, 3)), device, "float16", requires_grad=True)
    wf = t(np.ones(3), device, "float32", requires_grad=True)
    out = F.batch_norm(xh, t(np.zeros(3), device), t(np.ones(3), device), wf, training=True)
    assert out.dtype == ctorch.float16
    out.float().sum().backward()
    assert xh.grad.dtype == ctorch.float16 and wf.grad.dtype == ctorch.float32


def test_batch_norm_errors(device):
    x = t(np.zeros((2, 3)), device)
    z, o = t(np.zeros(3), device), t(np.ones(3), device)
    with pytest.raises(RuntimeError, match=r"^running_mean should contain 3 elements not 4$"):
        F.batch_norm(x, t(np.zeros(4), device), t(np.ones(4), device))
    with pytest.raises(RuntimeError, match=r"^weight should contain 3 elements not 4$"):
        F.batch_norm(x, z, o, weight=t(np.ones(4), device))
    # PyTorch checks the running statistics first: a BatchNorm1d(3) given 4 features names running_mean
    with pytest.raises(RuntimeError, match=r"^running_var should contain 3 elements not 4$"):
        F.batch_norm(x, z, t(np.ones(4), device), weight=t(np.ones(4), device))
    with pytest.raises(RuntimeError, match=r"^running_mean should contain 4 elements not 3$"):
        nn.BatchNorm1d(3, device=device)(t(np.zeros((2, 4)), device))
    with pytest.raises(RuntimeError, match=r"^running_mean must be defined in evaluation mode$"):
        F.batch_norm(x, None, None, training=False)
    with pytest.raises(RuntimeError, match=r"^running_mean must be defined in evaluation mode$"):
        F.batch_norm(x, None, None, weight=t(np.ones(4), device), training=False)
    with pytest.raises(RuntimeError, match=r"^running_var must be defined in evaluation mode$"):
        F.batch_norm(x, z, None, training=False)
    with pytest.raises(ValueError, match=r"^running_mean and running_var must either both be None or neither be"):
        F.batch_norm(x, z, None, training=True)
    with pytest.raises(NotImplementedError, match=r"^\"batch_norm\" not implemented for 'Long'$"):
        F.batch_norm(t(np.zeros((2, 3)), device, "int64"), z, o)
    with pytest.raises(RuntimeError, match=r"^expected scalar type Float but found Double$"):
        F.batch_norm(x, z, t(np.ones(3), device, "float64"))
    with pytest.raises(RuntimeError, match=r"^mixed dtype \(CPU\): expect parameter to have scalar type of Float$"):
        F.batch_norm(x, z, o, weight=t(np.ones(3), device, "float64"))
    with pytest.raises(RuntimeError, match=r"^mixed dtype \(CPU\): all inputs must share same datatype.$"):
        F.batch_norm(t(np.zeros((2, 3)), device, "float64"), z, o)
    with pytest.raises(ValueError, match=r"^Expected more than 1 value per channel when training, got input size "
                                         r"torch.Size\(\[1, 3, 1\]\)$"):
        F.batch_norm(t(np.zeros((1, 3, 1)), device), z, o, training=True)
    with pytest.raises(ValueError, match=r"^batch_norm eps must be positive during training, but got 0.0$"):
        F.batch_norm(x, z, o, training=True, eps=0.0)
    with pytest.raises(ValueError, match=r"^expected 2D or 3D input \(got 4D input\)$"):
        nn.BatchNorm1d(3).to(device)(t(np.zeros((2, 3, 1, 1)), device))
    with pytest.raises(ValueError, match=r"^expected 4D input \(got 3D input\)$"):
        nn.BatchNorm2d(3).to(device)(t(np.zeros((2, 3, 2)), device))
    with pytest.raises(ValueError, match=r"^Expected more than 1 value per channel when training, got input size "
                                         r"torch.Size\(\[1, 3\]\)$"):
        nn.BatchNorm1d(3).to(device)(t(np.zeros((1, 3)), device))
    if device == "cuda":
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            F.batch_norm(x, z.cpu(), o.cpu())


@pytest.mark.parametrize("momentum", [0.1, None], ids=["momentum", "cumulative"])
def test_batchnorm_module_running_stats(device, momentum):
    bn = nn.BatchNorm1d(3, momentum=momentum).to(device)
    mean, var = np.zeros(3), np.ones(3)
    for step in range(4):
        x = RNG.standard_normal((6, 3, 2)) * (step + 1) + step
        out = bn(t(x, device))
        expected, m, _, vu = np_batch_norm(x, None, None)
        close(out, expected, "float32", scale=4)
        f = 1.0 / (step + 1) if momentum is None else momentum
        mean, var = (1 - f) * mean + f * m, (1 - f) * var + f * vu
        close(bn.running_mean, mean, "float32", scale=4)
        close(bn.running_var, var, "float32", scale=4)
        assert int(bn.num_batches_tracked) == step + 1
    bn.eval()
    x = RNG.standard_normal((2, 3, 2))
    close(bn(t(x, device)), np_batch_norm(x, None, None, mean, var)[0], "float32", scale=4)
    assert int(bn.num_batches_tracked) == 4
    bn.train()
    bn(t(x, device))
    assert int(bn.num_batches_tracked) == 5
    # without running statistics: batch statistics in eval too
    free = nn.BatchNorm2d(3, track_running_stats=False).to(device).eval()
    assert free.running_mean is None and free.num_batches_tracked is None
    x = RNG.standard_normal((2, 3, 2, 2))
    close(free(t(x, device)), np_batch_norm(x, None, None)[0], "float32", scale=4)
    x = RNG.standard_normal((2, 3, 2, 1, 2))
    close(nn.BatchNorm3d(3).to(device)(t(x, device)), np_batch_norm(x, None, None)[0], "float32", scale=4)


def test_batchnorm_repr_and_state_dict(device):
    assert repr(nn.BatchNorm2d(16)) == ("BatchNorm2d(16, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                                        "track_running_stats=True)")
    assert repr(nn.BatchNorm1d(4, momentum=None, affine=False, track_running_stats=False)) == (
        "BatchNorm1d(4, eps=1e-05, momentum=None, affine=False, bias=False, track_running_stats=False)")
    bn = nn.BatchNorm2d(3).to(device)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert bn.num_batches_tracked.dtype == ctorch.int64
    assert [n for n, _ in bn.named_parameters()] == ["weight", "bias"]
    with ctorch.no_grad():
        bn.weight.fill_(2.0)
    bn(t(RNG.standard_normal((2, 3, 2, 2)), device))
    other = nn.BatchNorm2d(3).to(device)
    other.load_state_dict(bn.state_dict())
    for key, value in bn.state_dict().items():
        np.testing.assert_array_equal(to_numpy(other.state_dict()[key]), to_numpy(value))
    # a version-1 state dict (no num_batches_tracked) loads with the count at 0
    old = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
    fresh = nn.BatchNorm2d(3).to(device)
    fresh.load_state_dict(old)
    assert int(fresh.num_batches_tracked) == 0
    assert list(nn.BatchNorm1d(2, affine=False, track_running_stats=False).state_dict()) == []
    half = nn.BatchNorm1d(2).half()
    assert half.running_mean.dtype == ctorch.float16 and half.num_batches_tracked.dtype == ctorch.int64


# ====================================================================================================
# group norm
# ====================================================================================================
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_group_norm_forward(device, dtype):
    x = RNG.standard_normal((2, 6, 3, 2)) * 3 - 1
    w, b = RNG.standard_normal(6), RNG.standard_normal(6)
    X = t(x, device, dtype)
    out = F.group_norm(X, 3, t(w, device, dtype), t(b, device, dtype), eps=1e-4)
    xq = to_numpy(X).astype(np.float64)
    close(out, np_group_norm(xq, 3, to_numpy(t(w, device, dtype)), to_numpy(t(b, device, dtype)), eps=1e-4), dtype,
          scale=4)
    out = F.group_norm(t(x[:, :, 0, 0], device, dtype), 2)  # (N, C)
    close(out, np_group_norm(xq[:, :, 0, 0], 2, None, None), dtype, scale=4)


def test_group_norm_grad(device):
    x = t(RNG.standard_normal((2, 4, 3)), device, "float64", requires_grad=True)
    w = t(RNG.standard_normal(4), device, "float64", requires_grad=True)
    b = t(RNG.standard_normal(4), device, "float64", requires_grad=True)
    out = F.group_norm(x, 2, w, b)
    assert type(out.grad_fn).__name__ == "NativeGroupNormBackward0"
    assert gradcheck(lambda a, ww, bb: F.group_norm(a, 2, ww, bb), (x, w, b))
    assert gradcheck(lambda a: F.group_norm(a, 4), (x,))
    check_double_backward(lambda a: F.group_norm(a, 2, w), x, device)


def test_group_norm_module_and_errors(device):
    gn = nn.GroupNorm(3, 6).to(device)
    assert repr(gn) == "GroupNorm(3, 6, eps=1e-05, affine=True, bias=True)"
    assert list(gn.state_dict()) == ["weight", "bias"]
    assert list(nn.GroupNorm(2, 4, affine=False).state_dict()) == []
    x = RNG.standard_normal((2, 6, 4))
    close(gn(t(x, device)), np_group_norm(x, 3, None, None), "float32", scale=4)
    with pytest.raises(ValueError, match=r"^num_channels \(6\) must be divisible by num_groups \(4\)$"):
        nn.GroupNorm(4, 6)
    with pytest.raises(RuntimeError, match=r"^Expected number of channels in input to be divisible by num_groups, "
                                           r"but got input of shape \[2, 6, 3\] and num_groups=4$"):
        F.group_norm(t(np.zeros((2, 6, 3)), device), 4)
    with pytest.raises(RuntimeError, match=r"^Expected weight to be a vector of size equal to the number of channels "
                                           r"in input, but got weight of shape \[5\] and input of shape \[2, 6, 3\]$"):
        F.group_norm(t(np.zeros((2, 6, 3)), device), 3, weight=t(np.ones(5), device))
    with pytest.raises(RuntimeError, match=r"^Expected at least 2 dimensions for input tensor but received 1$"):
        F.group_norm(t(np.zeros(6), device), 3)
    with pytest.raises(RuntimeError, match=r"^Expected num groups to be greater than 0, got -2$"):
        F.group_norm(t(np.zeros((2, 6, 3)), device), -2)
    with pytest.raises(NotImplementedError, match=r"^\"GroupNormKernelImpl\" not implemented for 'Long'$"):
        F.group_norm(t(np.zeros((2, 6, 3)), device, "int64"), 3)
    with pytest.raises(ValueError, match=r"^Expected more than 1 value per channel when training"):
        F.group_norm(t(np.zeros((1, 2, 1)), device), 2)
    assert F.group_norm(t(np.zeros((0, 6, 2)), device), 3).shape == (0, 6, 2)


# ====================================================================================================
# nn.utils: clip_grad_norm_, clip_grad_value_, parameters_to_vector
# ====================================================================================================
def params_with_grads(device, grads, dtype="float32"):
    ps = []
    for g in grads:
        p = nn.Parameter(t(np.zeros(np.shape(g)), device, dtype))
        p.grad = t(g, device, dtype)
        ps.append(p)
    return ps


def np_total_norm(grads, p):
    flat = [np.abs(np.ravel(g)) for g in grads]
    if p == math.inf:
        return max(f.max() for f in flat)
    if p == -math.inf:
        return min(f.min() for f in flat)
    if p == 0:
        return float(sum(np.count_nonzero(f) > 0 for f in flat))
    with np.errstate(divide="ignore"):  # 0 ** -1: inf, whose power 1 / p gives 0 as PyTorch's
        return sum((f ** p).sum() for f in flat) ** (1.0 / p)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf, -math.inf, 0.0, -1.0])
def test_clip_grad_norm(device, norm_type):
    grads = [RNG.standard_normal((3, 4)), RNG.standard_normal(5000), np.zeros(2), RNG.standard_normal(())]
    if norm_type == -math.inf:
        grads = grads[:2]
    ps = params_with_grads(device, grads)
    total = nn.utils.clip_grad_norm_(ps, 0.5, norm_type=norm_type)
    expected = np_total_norm(grads, norm_type)
    assert total.shape == () and total.dtype == ctorch.float32 and not total.requires_grad
    assert total.device.type == device
    close(total, expected, "float32", scale=10)
    coef = min(0.5 / (expected + 1e-6), 1.0)
    for p, g in zip(ps, grads):
        close(p.grad, g * coef, "float32", scale=10)


def test_clip_grad_norm_cases(device):
    # a single tensor, a transposed gradient (scaled in place through its view), float64 / float16 mixed
    g = RNG.standard_normal((4, 3))
    p = nn.Parameter(t(np.zeros((3, 4)), device))
    p.grad = t(np.ascontiguousarray(g), device).T
    assert not p.grad.is_contiguous()
    total = nn.utils.clip_grad_norm_(p, 1.0)
    close(total, np.linalg.norm(g), "float32", scale=10)
    close(p.grad, g.T / (np.linalg.norm(g) + 1e-6), "float32", scale=10)
    ps = params_with_grads(device, [np.full(3, 2.0)], "float16") + params_with_grads(device, [np.full(2, 1.0)],
                                                                                     "float64")
    total = nn.utils.clip_grad_norm_(ps, 100.0)
    assert total.dtype == ctorch.float64
    close(total, math.sqrt(14.0), "float64")
    close(ps[0].grad, np.full(3, 2.0), "float16")  # max_norm above the total: unchanged
    # no gradients
    empty = nn.utils.clip_grad_norm_([nn.Parameter(t(np.ones(2), device))], 1.0)
    assert float(empty) == 0.0 and empty.device.type == "cpu"
    # non-finite
    bad = params_with_grads(device, [np.array([1.0, np.nan])])
    with pytest.raises(RuntimeError, match=r"^The total norm of order 2.0 for gradients from `parameters` is "
                                           r"non-finite, so it cannot be clipped. To disable this error and scale "
                                           r"the gradients by the non-finite norm anyway, set "
                                           r"`error_if_nonfinite=False`$"):
        nn.utils.clip_grad_norm_(bad, 1.0, error_if_nonfinite=True)
    assert math.isnan(float(nn.utils.clip_grad_norm_(bad, 1.0)))
    with pytest.raises(NotImplementedError, match=r"Expected a floating point or complex tensor as input. Got"):
        nn.utils.get_total_norm([t(np.ones(2), device, "int64")])
    # several chunks per tensor (CPU: 32768 elements, CUDA: 4096), summed in a fixed order
    big = [RNG.standard_normal(70000), RNG.standard_normal(9000)]
    tensors = [t(g, device) for g in big]
    first = nn.utils.get_total_norm(tensors, 3.0)
    close(first, np_total_norm(big, 3.0), "float32", scale=10)
    assert float(nn.utils.get_total_norm(tensors, 3.0)) == float(first)
    # get_total_norm / clip_grads_with_norm_ on their own
    tensors = [t(np.full(3, 1.0), device), t(np.full(4, 1.0), device)]
    close(nn.utils.get_total_norm(tensors), math.sqrt(7.0), "float32")
    q = params_with_grads(device, [np.ones(3)])
    nn.utils.clip_grads_with_norm_(q, 1.0, t(4.0, device))
    close(q[0].grad, np.full(3, 0.25), "float32", scale=10)


def test_clip_grad_value_and_vectors(device):
    g = np.array([-3.0, -0.2, 0.0, 0.4, 2.0])
    ps = params_with_grads(device, [g, g[:2]])
    assert nn.utils.clip_grad_value_(ps, 0.5) is None
    close(ps[0].grad, np.clip(g, -0.5, 0.5), "float32")
    close(ps[1].grad, np.clip(g[:2], -0.5, 0.5), "float32")
    a = [nn.Parameter(t(np.ones((2, 2)), device)), nn.Parameter(t(np.zeros(3), device))]
    vec = nn.utils.parameters_to_vector(a)
    close(vec, np.array([1, 1, 1, 1, 0, 0, 0.0]), "float32")
    nn.utils.vector_to_parameters(t(np.arange(7.0), device), a)
    close(a[0], np.arange(4.0).reshape(2, 2), "float32")
    close(a[1], np.arange(4.0, 7.0), "float32")
    assert isinstance(a[0], nn.Parameter) and a[0].requires_grad
    with pytest.raises(TypeError, match=r"^expected torch.Tensor, but got: list$"):
        nn.utils.vector_to_parameters([1, 2], a)
    with pytest.raises(RuntimeError):
        nn.utils.vector_to_parameters(t(np.arange(6.0), device), a)


# --- ctorch.native_layer_norm / native_batch_norm / native_group_norm / native_dropout (PyTorch's tuples) ------
def test_native_layer_norm_tuple():
    x = ctorch.randn(2, 3, 4, requires_grad=True)
    w = ctorch.randn(4, requires_grad=True)
    out, mean, rstd = ctorch.native_layer_norm(x, [4], w, None, 1e-5)
    assert ctorch.allclose(out, ctorch.nn.functional.layer_norm(x, [4], w, None, 1e-5))
    assert mean.shape == (2, 3, 1) and rstd.shape == (2, 3, 1) and not mean.requires_grad and not rstd.requires_grad
    xn = x.detach().numpy().astype(np.float64)
    np.testing.assert_allclose(mean.numpy()[..., 0], xn.mean(-1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd.numpy()[..., 0], 1 / np.sqrt(xn.var(-1) + 1e-5), rtol=1e-4)
    assert out.grad_fn.name() == "NativeLayerNormBackward0"
    out.sum().backward()
    assert x.grad is not None and w.grad is not None
    assert ctorch.native_layer_norm(x, [3, 4], None, None, 1e-5)[1].shape == (2, 1, 1)
    assert [t.dtype for t in ctorch.native_layer_norm(x.detach().half(), [4], None, None, 1e-5)] == [ctorch.float16] * 3
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*, 5\]"):
        ctorch.native_layer_norm(x, [5], None, None, 1e-5)


def test_native_batch_norm_tuple():
    x = ctorch.randn(4, 3, 5, requires_grad=True)
    rm, rv = ctorch.zeros(3), ctorch.ones(3)
    out, save_mean, save_invstd = ctorch.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
    xd = x.detach().transpose(0, 1).reshape(3, -1)
    assert ctorch.allclose(save_mean, xd.mean(1), atol=1e-6)
    assert ctorch.allclose(save_invstd, (xd.var(1, unbiased=False) + 1e-5).rsqrt(), rtol=1e-5)
    assert ctorch.allclose(rm, 0.1 * xd.mean(1), atol=1e-6)  # the running statistics were updated
    assert out.grad_fn.name() == "NativeBatchNormBackward0" and not save_mean.requires_grad
    out, save_mean, save_invstd = ctorch.native_batch_norm(x, None, None, rm, rv, False, 0.1, 1e-5)
    assert save_mean.shape == (0,) and save_invstd.shape == (0,)
    with pytest.raises(ValueError, match="^running_mean must be defined in evaluation mode$"):
        ctorch.native_batch_norm(x, None, None, None, None, False, 0.1, 1e-5)
    # the statistics take the parameters' dtype (float32 running stats of a float16 input), as PyTorch's CPU op
    dtypes = [t.dtype for t in ctorch.native_batch_norm(x.detach().half(), None, None, rm, rv, True, 0.1, 1e-5)]
    assert dtypes == [ctorch.float16, ctorch.float32, ctorch.float32]
    assert [t.dtype for t in ctorch.native_batch_norm(x.detach().half(), None, None, None, None, True, 0.1,
                                                     1e-5)] == [ctorch.float16] * 3


def test_native_group_norm_tuple():
    x = ctorch.randn(2, 6, 5, requires_grad=True)
    out, mean, rstd = ctorch.native_group_norm(x, None, None, 2, 6, 5, 3, 1e-5)
    assert ctorch.allclose(out, ctorch.nn.functional.group_norm(x, 3, eps=1e-5))
    assert mean.shape == (2, 3) and rstd.shape == (2, 3) and mean.requires_grad  # as PyTorch's
    assert ctorch.allclose(mean, x.detach().reshape(2, 3, 10).mean(-1), atol=1e-6)
    mean.sum().backward()  # the mean's own derivative (PyTorch: 1 / group size everywhere)
    assert ctorch.allclose(x.grad, ctorch.full((2, 6, 5), 0.1))
    with pytest.raises(RuntimeError, match=r"^Expected X.numel\(\) == N \* C \* HxW to be true, but got false."):
        ctorch.native_group_norm(x, None, None, 2, 6, 4, 3, 1e-5)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        ctorch.native_group_norm(x, None, None, 2, 6, 5, 4, 1e-5)


def test_native_dropout_tuple():
    ctorch.manual_seed(0)
    x = ctorch.randn(2000, requires_grad=True)
    out, mask = ctorch.native_dropout(x, 0.3, True)
    assert mask.dtype == ctorch.bool and mask.shape == x.shape and 0.6 < mask.float().mean().item() < 0.8
    assert ctorch.allclose(out, x * mask / 0.7)
    out.sum().backward()
    assert ctorch.allclose(x.grad, mask.float() / 0.7)
    out, mask = ctorch.native_dropout(x, 0.3, False)  # a copy and an all-True mask
    assert ctorch.equal(out, x) and out is not x and bool(mask.all())
    out, mask = ctorch.native_dropout(x, 1.0, True)
    assert not bool(mask.any()) and float(out.abs().sum()) == 0.0
    with pytest.raises(RuntimeError, match=r"^bernoulli_ expects p to be in \[0, 1\], but got p=-0.5$"):
        ctorch.native_dropout(x, 1.5, True)
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        ctorch.native_dropout(ctorch.arange(3), 0.5, True)
    assert ctorch.equal(ctorch.native_dropout(ctorch.arange(3), 0.5, False)[0], ctorch.arange(3))
