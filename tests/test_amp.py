"""ctorch.amp: autocast's per-op dtypes (PyTorch's policy lists, CPU and CUDA), the values against
NumPy computed at the autocast precision, gradients reaching the float32 weights through the casts,
the weight cast cache, nesting and the decorator; GradScaler's unscale / skip / backoff / growth
against a Python model of its rule, its kernels on their own, its errors and state_dict; and a small
network trained with autocast + GradScaler on every device."""
import math
import warnings

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
import ctorch.nn.functional as F
from conftest import to_numpy

LOW = {"cpu": ctorch.bfloat16, "cuda": ctorch.float16}


def round_to(a, dtype):
    """NumPy float32 values rounded to dtype (float16, or bfloat16 by round-to-nearest-even)."""
    a = np.asarray(a, dtype=np.float32)
    if dtype == ctorch.float16:
        return a.astype(np.float16).astype(np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def tensors(device, *shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [ctorch.tensor(rng.standard_normal(s).astype(np.float32), device=device) for s in shapes]


# --- the policy: output dtypes per op and device type ---------------------------------------------------
# (op, dtype of its output for float32 inputs on cpu / cuda under autocast); PyTorch's lists
def _ops():
    idx = ctorch.tensor([0, 1, 2])
    return {
        "matmul@": (lambda x, y: x @ y, "low", "low"),
        "mm": (lambda x, y: ctorch.mm(x, y), "low", "low"),
        "Tensor.mm": (lambda x, y: x.mm(y), "low", "low"),
        "addmm": (lambda x, y: ctorch.addmm(y, x, y), "low", "low"),
        "bmm": (lambda x, y: ctorch.bmm(x[None], y[None]), "low", "low"),
        "linear": (lambda x, y: F.linear(x, y), "low", "low"),
        "linear+bias": (lambda x, y: F.linear(x, y, y[0]), "low", "low"),
        "linear 3d": (lambda x, y: F.linear(x[None], y, y[0]), "low", "low"),
        "conv1d": (lambda x, y: F.conv1d(x[None], y[:, :, None]), "low", "low"),
        "einsum": (lambda x, y: ctorch.einsum("ij,jk->ik", x, y), "low", "low"),
        "mv": (lambda x, y: ctorch.mv(x, y[0]), "float32", "low"),
        "sdpa": (lambda x, y: F.scaled_dot_product_attention(x[None], y[None], y[None]), "low", "low"),
        "rnn_tanh_cell": (lambda x, y: ctorch.rnn_tanh_cell(x, y, x, y), "low", "low"),
        "conv_transpose1d": (lambda x, y: F.conv_transpose1d(x[None], y[:, :, None]), "low", "low"),
        "relu": (lambda x, y: x.relu(), "float32", "float32"),
        "sum": (lambda x, y: x.sum(), "float32", "float32"),
        "mse_loss": (lambda x, y: F.mse_loss(x, y), "float32", "float32"),
        "cross_entropy": (lambda x, y: F.cross_entropy(x[:3], idx.to(x.device)), "float32", "float32"),
        "mm double": (lambda x, y: ctorch.mm(x.double(), y.double()), "float64", "float64"),
        "mm out=": (lambda x, y: ctorch.mm(x, y, out=ctorch.empty(4, 4, device=x.device)), "float32", "float32"),
        "addmm_": (lambda x, y: x.clone().addmm_(x, y), "float32", "float32"),
    }


@pytest.mark.parametrize("name", list(_ops()))
def test_float32_inputs(device, name):
    fn, cpu, cuda = _ops()[name]
    want = cpu if device == "cpu" else cuda
    x, y = tensors(device, (4, 4), (4, 4))
    with ctorch.autocast(device):
        out = fn(x, y)
    assert out.dtype == (LOW[device] if want == "low" else getattr(ctorch, want))
    assert fn(x, y).dtype in (ctorch.float32, ctorch.float64)  # outside: unchanged


# ops whose low-precision inputs autocast widens: (op, output dtype for autocast-dtype inputs on cpu / cuda)
WIDENED = {
    "sum": (lambda b: b.sum(), None, "float32"),
    "sum dtype=": (lambda b: b.sum(dtype=b.dtype), None, None),
    "softmax": (lambda b: b.softmax(1), None, "float32"),
    "log_softmax": (lambda b: F.log_softmax(b, 1), None, "float32"),
    "exp": (lambda b: b.exp(), None, "float32"),
    "pow": (lambda b: b ** 2, None, "float32"),
    "layer_norm": (lambda b: F.layer_norm(b, (4,)), None, "float32"),
    "mse_loss": (lambda b: F.mse_loss(b, b), "float32", "float32"),
    "l1_loss": (lambda b: F.l1_loss(b, b), "float32", "float32"),
    "bce_with_logits": (lambda b: F.binary_cross_entropy_with_logits(b, b.sigmoid()), "float32", "float32"),
    "prod": (lambda b: b.prod(), "float32", "float32"),
    "cdist": (lambda b: ctorch.cdist(b, b), "float32", "float32"),
    "dist": (lambda b: ctorch.dist(b, b * 2), None, "float32"),
    "pdist": (lambda b: F.pdist(b), None, "float32"),
    "renorm": (lambda b: b.renorm(2, 0, 1.0), None, "float32"),
    "multi_margin_loss": (lambda b: F.multi_margin_loss(b, ctorch.tensor([0, 2, 1, 3], device=b.device)), None, "float32"),
    "multilabel_margin_loss": (lambda b: F.multilabel_margin_loss(b, ctorch.tensor([[0, 2, -1, 0]] * 4, device=b.device)),
                               None, "float32"),
    "interpolate": (lambda b: F.interpolate(b[None], scale_factor=2.0, mode="linear"), None, "float32"),
    "cat mixed": (lambda b: ctorch.cat([b, b.float()]), "float32", "float32"),
    "addcmul mixed": (lambda b: ctorch.addcmul(b.float(), b, b), "float32", "float32"),
    "relu": (lambda b: b.relu(), None, None),
}


@pytest.mark.parametrize("name", list(WIDENED))
def test_low_precision_inputs(device, name):
    fn, cpu, cuda = WIDENED[name]
    if name == "pdist" and device == "cpu":
        pytest.skip("pdist has no bfloat16 kernel on the CPU, in PyTorch either")
    want = cpu if device == "cpu" else cuda
    (x,) = tensors(device, (4, 4))
    b = x.to(LOW[device])
    with ctorch.autocast(device):
        out = fn(b)
    assert out.dtype == (b.dtype if want is None else getattr(ctorch, want))


def test_other_half_type_is_cast(device):
    # an op of the low list casts float16 to bfloat16 too (any eligible floating type but double)
    x, y = tensors(device, (3, 4), (4, 2))
    other = ctorch.float16 if LOW[device] == ctorch.bfloat16 else ctorch.bfloat16
    with ctorch.autocast(device):
        assert ctorch.mm(x.to(other), y).dtype == LOW[device]


def test_values_match_numpy_at_autocast_precision(device):
    x, w, b = tensors(device, (5, 8), (3, 8), (3,))
    with ctorch.autocast(device):
        out = F.linear(x, w, b)
        loss = F.mse_loss(out, ctorch.zeros(5, 3, device=device))
    lo = LOW[device]
    expect = round_to(to_numpy(x), lo) @ round_to(to_numpy(w), lo).T + round_to(to_numpy(b), lo)
    np.testing.assert_allclose(to_numpy(out), expect, rtol=2e-2, atol=2e-2)
    assert loss.dtype == ctorch.float32
    np.testing.assert_allclose(loss.item(), np.mean(to_numpy(out).astype(np.float64) ** 2), rtol=1e-5)


def test_gradients_reach_float32_weights(device):
    x, w0 = tensors(device, (6, 4), (2, 4))
    w = w0.clone().requires_grad_()
    with ctorch.autocast(device):
        out = F.linear(x, w)
        loss = (out.float() ** 2).sum()
    assert out.dtype == LOW[device] and out.grad_fn is not None
    loss.backward()
    assert w.grad.dtype == ctorch.float32 and w.grad.shape == (2, 4)
    lo = LOW[device]
    xl, wl = round_to(to_numpy(x), lo), round_to(to_numpy(w0), lo)
    expect = 2 * (round_to(xl @ wl.T, lo)).T @ xl
    np.testing.assert_allclose(to_numpy(w.grad), expect, rtol=3e-2, atol=3e-2)


def test_nesting_decorator_and_restore(device):
    x, y = tensors(device, (2, 2), (2, 2))
    assert not ctorch.is_autocast_enabled(device)
    with ctorch.autocast(device):
        with ctorch.autocast(device, enabled=False):
            assert ctorch.mm(x, y).dtype == ctorch.float32
            assert not ctorch.is_autocast_enabled(device)
        assert ctorch.mm(x, y).dtype == LOW[device]
    assert not ctorch.is_autocast_enabled(device)

    @ctorch.autocast(device)
    def f(a, b):
        return a @ b

    assert f(x, y).dtype == LOW[device] and (x @ y).dtype == ctorch.float32
    with pytest.raises(ZeroDivisionError):
        with ctorch.autocast(device):
            1 / 0
    assert not ctorch.is_autocast_enabled(device) and not ctorch._C.autocast_decrement_nesting()
    with ctorch.autocast(device, dtype=ctorch.float16 if device == "cpu" else ctorch.bfloat16):
        assert ctorch.mm(x, y).dtype == (ctorch.float16 if device == "cpu" else ctorch.bfloat16)
    assert ctorch.get_autocast_dtype(device) == LOW[device]


def test_other_device_type_untouched():
    # CPU autocast leaves ops on other devices alone, and the other way round
    x = ctorch.ones(2, 2)
    with ctorch.autocast("cpu", enabled=False):
        assert (x @ x).dtype == ctorch.float32
    if ctorch.cuda.is_available():
        with ctorch.autocast("cuda"):
            assert (x @ x).dtype == ctorch.float32


def test_weight_cast_cache(device):
    (x,) = tensors(device, (3, 4))
    w = ctorch.ones(2, 4, device=device, requires_grad=True)
    with ctorch.autocast(device):
        a, b = F.linear(x, w), F.linear(x, w)
        cast_a = a.grad_fn.next_functions[1][0] if a.grad_fn.next_functions[1][0] else a.grad_fn.next_functions[0][0]
        cast_b = b.grad_fn.next_functions[1][0] if b.grad_fn.next_functions[1][0] else b.grad_fn.next_functions[0][0]
        assert type(cast_a).__name__ == "ToCopyBackward0" and cast_a is cast_b  # cast once
        with ctorch.no_grad():
            w.mul_(3.0)  # the cached cast is stale now
        c = F.linear(x, w)
        np.testing.assert_allclose(to_numpy(c), 3 * to_numpy(a), rtol=1e-2)
        (a.float().sum() + c.float().sum()).backward()
    np.testing.assert_allclose(to_numpy(w.grad), 2 * np.tile(to_numpy(x).sum(0), (2, 1)), rtol=2e-2, atol=2e-2)
    with ctorch.autocast(device, cache_enabled=False):
        a, b = F.linear(x, w), F.linear(x, w)
        assert a.grad_fn.next_functions != b.grad_fn.next_functions


def test_cast_under_no_grad_is_not_reused(device):
    (x,) = tensors(device, (3, 4))
    w = ctorch.ones(2, 4, device=device, requires_grad=True)
    with ctorch.autocast(device):
        with ctorch.no_grad():
            F.linear(x, w)
        out = F.linear(x, w)
    out.float().sum().backward()
    assert w.grad is not None


def test_binary_cross_entropy(device):
    (x,) = tensors(device, (4,))
    p = x.sigmoid()
    with ctorch.autocast(device):
        if device == "cuda":
            with pytest.raises(RuntimeError, match="unsafe to autocast"):
                F.binary_cross_entropy(p, p)
        else:
            assert F.binary_cross_entropy(p.bfloat16(), p.bfloat16()).dtype == ctorch.float32


def test_autocast_errors_and_warnings():
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        ctorch.autocast(3)
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        ctorch.autocast("tpu")
    with pytest.raises(TypeError, match="must be bool"):
        ctorch.set_autocast_enabled("cpu", 1)
    with pytest.warns(UserWarning, match="CPU Autocast only supports"):
        a = ctorch.autocast("cpu", dtype=ctorch.float32)
    with a:
        assert not ctorch.is_autocast_enabled("cpu")
    assert ctorch.amp.is_autocast_available("cuda") and not ctorch.amp.is_autocast_available("tpu")
    if not ctorch.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            with ctorch.autocast("cuda"):
                assert not ctorch.is_autocast_enabled("cuda")
        with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available"):
            assert not ctorch.amp.GradScaler().is_enabled()


def test_deprecated_spellings():
    with pytest.warns(FutureWarning, match=r"torch.amp.autocast\('cpu'"):
        a = ctorch.cpu.amp.autocast()
    with a:
        assert ctorch.is_autocast_cpu_enabled() and ctorch.get_autocast_cpu_dtype() == ctorch.bfloat16
    with pytest.warns(FutureWarning, match=r"torch.amp.GradScaler\('cuda'"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ctorch.cuda.amp.GradScaler()


def test_custom_fwd_casts_inputs(device):
    class Square(ctorch.autograd.Function):
        @staticmethod
        @ctorch.amp.custom_fwd(device_type=device, cast_inputs=ctorch.float32)
        def forward(ctx, a):
            ctx.save_for_backward(a)
            assert not ctorch.is_autocast_enabled(device)
            return a * a

        @staticmethod
        @ctorch.amp.custom_bwd(device_type=device)
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    x = tensors(device, (3,))[0].to(LOW[device]).requires_grad_()
    with ctorch.autocast(device):
        y = Square.apply(x)
    assert y.dtype == ctorch.float32
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), 2 * to_numpy(x), rtol=1e-2)


# --- GradScaler -----------------------------------------------------------------------------------------
def test_unscale_kernel(device):
    rng = np.random.default_rng(3)
    vals = [rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal(7).astype(np.float32)]
    grads = [ctorch.tensor(vals[0], device=device).t(), ctorch.tensor(vals[1], device=device).half(),
             ctorch.tensor(vals[1], device=device).double(), ctorch.empty(0, device=device)]
    found = ctorch.zeros(1, device=device)
    inv = ctorch.full((1,), 0.25, device=device)
    ctorch._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)
    assert found.item() == 0.0
    np.testing.assert_allclose(to_numpy(grads[0]), vals[0].T * 0.25, rtol=1e-6)
    np.testing.assert_allclose(to_numpy(grads[1]), vals[1].astype(np.float16).astype(np.float32) * 0.25, rtol=1e-3)
    np.testing.assert_allclose(to_numpy(grads[2]), vals[1] * 0.25, rtol=1e-7)
    for bad in (math.inf, -math.inf, math.nan):
        g = [ctorch.ones(3, device=device), ctorch.tensor([1.0, bad, 2.0], device=device).bfloat16()]
        found = ctorch.zeros((), device=device)
        ctorch._amp_foreach_non_finite_check_and_unscale_(g, found, ctorch.full((), 2.0, device=device))
        assert found.item() == 1.0 and to_numpy(g[0]).tolist() == [2.0] * 3
    found = ctorch.ones(1, device=device)  # stays set
    ctorch._amp_foreach_non_finite_check_and_unscale_([ctorch.ones(2, device=device)], found, inv)
    assert found.item() == 1.0
    with pytest.raises(RuntimeError, match="found_inf must be a 1-element tensor."):
        ctorch._amp_foreach_non_finite_check_and_unscale_([ctorch.ones(2, device=device)], ctorch.zeros(2, device=device), inv)
    with pytest.raises(RuntimeError, match="inv_scale must be a float tensor."):
        ctorch._amp_foreach_non_finite_check_and_unscale_([ctorch.ones(2, device=device)], found,
                                                          ctorch.ones(1, dtype=ctorch.float64, device=device))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        ctorch._amp_foreach_non_finite_check_and_unscale_([ctorch.ones(2, dtype=ctorch.int64, device=device)], found, inv)
    if device == "cuda":
        with pytest.raises(RuntimeError, match="same device"):
            ctorch._amp_foreach_non_finite_check_and_unscale_([ctorch.ones(2)], found, inv)


def test_update_scale_kernel(device):
    scale = ctorch.full((), 8.0, device=device)
    tracker = ctorch.zeros((), dtype=ctorch.int32, device=device)
    s, t = 8.0, 0  # the rule, in Python
    for found in [0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0]:
        ctorch._amp_update_scale_(scale, tracker, ctorch.full((1,), float(found), device=device), 2.0, 0.5, 3)
        if found:
            s, t = s * 0.5, 0
        elif t + 1 == 3:
            s, t = s * 2.0, 0
        else:
            t += 1
        assert (scale.item(), tracker.item()) == (s, t)
    # a NaN found_inf counts as found (PyTorch tests it for truth); the scale tensor itself is returned
    assert ctorch._amp_update_scale_(scale, tracker, ctorch.full((1,), float("nan"), device=device), 2.0, 0.5,
                                     3) is scale
    assert (scale.item(), tracker.item()) == (s * 0.5, 0)
    big = ctorch.full((), 3e38, device=device)  # growth past float32's range is not taken
    ctorch._amp_update_scale_(big, ctorch.full((), 2, dtype=ctorch.int32, device=device),
                              ctorch.zeros(1, device=device), 2.0, 0.5, 3)
    assert big.item() == pytest.approx(3e38, rel=1e-6)
    with pytest.raises(RuntimeError, match="growth_tracker must be an int tensor."):
        ctorch._amp_update_scale_(scale, ctorch.zeros((), device=device), ctorch.zeros(1, device=device), 2.0, 0.5, 3)


def _scaler(device, **kw):
    return ctorch.amp.GradScaler(device, **kw)


def test_grad_scaler_step_skip_backoff_growth(device):
    w = ctorch.tensor([1.0, -2.0], device=device, requires_grad=True)
    opt = ctorch.optim.SGD([w], lr=0.1)
    scaler = _scaler(device, init_scale=4.0, growth_interval=2)
    expect_w, expect_scale = np.array([1.0, -2.0]), 4.0
    for k, poison in enumerate([False, False, True, False, False]):
        opt.zero_grad()
        loss = (w * w).sum() * (math.inf if poison else 1.0)
        scaled = scaler.scale(loss)
        assert scaled.item() == pytest.approx(loss.item() * expect_scale) or poison
        scaled.backward()
        ret = scaler.step(opt)
        if poison:
            expect_scale /= 2
            assert ret is None
        else:
            expect_w = expect_w - 0.1 * 2 * expect_w
        np.testing.assert_allclose(to_numpy(w), expect_w, rtol=1e-6)
        scaler.update()
        if not poison and k in (1, 4):
            expect_scale *= 2  # two good steps in a row
        assert scaler.get_scale() == expect_scale, k


def test_grad_scaler_unscale_then_clip(device):
    w = ctorch.tensor([3.0, 4.0], device=device, requires_grad=True)
    opt = ctorch.optim.SGD([w], lr=1.0)
    scaler = _scaler(device)
    scaler.scale((w * w).sum() / 2).backward()  # grad = w
    scaler.unscale_(opt)
    np.testing.assert_allclose(to_numpy(w.grad), [3.0, 4.0])
    nn.utils.clip_grad_norm_([w], 1.0)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    np.testing.assert_allclose(to_numpy(w), [3.0 - 0.6, 4.0 - 0.8], rtol=1e-5)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step\\(\\)"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: 0)
    scaler.update()


def test_grad_scaler_state_and_options(device):
    with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
        _scaler(device, growth_factor=1.0)
    with pytest.raises(AssertionError, match="The backoff factor must be < 1.0."):
        _scaler(device, backoff_factor=1.0)
    s = _scaler(device, init_scale=16.0, growth_interval=7)
    assert s.state_dict() == {"scale": 16.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 7,
                              "_growth_tracker": 0}
    out = s.scale([ctorch.ones(2, device=device), (ctorch.ones(1, device=device),)])
    assert to_numpy(out[0]).tolist() == [16.0, 16.0] and to_numpy(out[1][0]).tolist() == [16.0]
    t = _scaler(device)
    t.load_state_dict(s.state_dict())
    assert t.get_scale() == 16.0 and t.get_growth_interval() == 7
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        t.load_state_dict({})
    s.update(new_scale=2.0)
    assert s.get_scale() == 2.0
    off = _scaler(device, enabled=False)
    x = ctorch.ones(1, device=device)
    assert off.scale(x) is x and off.get_scale() == 1.0 and off.state_dict() == {}


@pytest.mark.parametrize("low", ["default", "float16", "bfloat16"])
def test_mixed_precision_training(device, low):
    dtype = None if low == "default" else getattr(ctorch, low)
    ctorch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = ctorch.tensor(rng.standard_normal((64, 8)).astype(np.float32), device=device)
    y = ctorch.tensor((rng.standard_normal((64, 8)) @ rng.standard_normal((8, 1)) > 0).astype(np.int64).ravel(),
                      device=device)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
    opt = ctorch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    scaler = _scaler(device)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        with ctorch.autocast(device, dtype=dtype):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
        assert logits.dtype == (dtype or LOW[device]) and loss.dtype == ctorch.float32
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert all(p.dtype == ctorch.float32 and p.grad.dtype == ctorch.float32 for p in model.parameters())
    assert losses[-1] < 0.5 * losses[0]
