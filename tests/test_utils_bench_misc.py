"""utils.benchmark (Timer, Measurement, Compare), nn.DataParallel / nn.parallel, nn.attention (sdpa_kernel,
CausalBias) and optim.Adafactor. Expected values: NumPy re-implementations and hand-derived strings
(table layouts as PyTorch prints them for the same raw times)."""
import numpy as np
import pytest

import ctorch
import ctorch.nn.functional as F
from ctorch.nn.attention import SDPBackend, sdpa_kernel
from ctorch.nn.attention.bias import CausalBias, causal_lower_right, causal_upper_left
from ctorch.utils import benchmark
from conftest import DEVICES, assert_close, to_numpy

CUDA = [p for p in DEVICES if p.id == "cuda"]


# --- utils.benchmark -----------------------------------------------------------------------------------------
def _m(number, raw, **spec):
    return benchmark.Measurement(number, raw, benchmark.TaskSpec("x+y", "pass", **spec))


def test_measurement_statistics_match_numpy():
    raw = [3e-4, 1e-4, 2.5e-4, 2e-4, 9e-4]
    m = _m(100, raw, label="ops")
    t = np.array(raw) / 100
    assert m.times == pytest.approx(list(t))
    assert m.median == pytest.approx(np.median(t))
    assert m.mean == pytest.approx(t.mean())
    assert m.iqr == pytest.approx(np.percentile(t, 75) - np.percentile(t, 25))
    assert m.number_per_run == 100 and m.label == "ops" and m.num_threads == 1 and m.env == "Unspecified env"
    assert m.has_warnings and not m.meets_confidence(0.1)
    # identical times: the confidence interval is the 25 ns floor, so median 1 ms -> floor(log10(4e4)) = 4
    assert _m(1, [1e-3] * 4).significant_figures == 4
    assert _m(1, [1e-6] * 4).significant_figures == 1


def test_measurement_repr_and_merge():
    m = _m(10, [1e-3, 2e-3, 5e-3, 1.1e-3], label="L", sub_label="q", description="desc")
    assert repr(m).split("\n")[1:] == [
        "L: q", "desc", "  Median: 155.00 us", "  IQR:    167.50 us (107.50 to 275.00)",
        "  4 measurements, 10 runs per measurement, 1 thread",
        "  WARNING: Interquartile range is 108.1% of the median measurement.",
        "           This suggests significant environmental influence."]
    one = _m(3, [3.0], label="L", num_threads=2)
    assert repr(one).split("\n")[1:] == ["L", "  1.00 s", "  1 measurement, 3 runs , 2 threads"]
    merged = benchmark.Measurement.merge([_m(2, [4.0], label="a"), _m(4, [4.0, 8.0], label="a"), one])
    assert len(merged) == 2 and merged[0].number_per_run == 1
    assert merged[0].times == [2.0, 1.0, 2.0] and merged[1].times == [1.0]


def test_compare_table():
    ms = [_m(100, [2e-4] * 4, label="ops", sub_label="n=1", description="add"),
          _m(100, [4e-4] * 4, label="ops", sub_label="n=1", description="mul"),
          _m(100, [3e-4] * 4, label="ops", sub_label="n=8", description="add"),
          _m(100, [1.1e-4] * 2, label="ops", sub_label="n=8", description="mul", num_threads=2)]
    c = benchmark.Compare(ms)
    assert str(c) == ("[--------- ops ---------]\n           |  add  |  mul\n1 threads: --------------\n"
                      "      n=1  |  2.0  |  4.0\n      n=8  |  3.0  |     \n2 threads: --------------\n"
                      "      n=8  |       |  1.1\n\nTimes are in microseconds (us).\n")
    c.trim_significant_figures()
    c.colorize()
    best = "\x1b[92m\x1b[1m {} \x1b[0m\x1b[0m"
    assert str(c) == ("[--------- ops ---------]\n           |  add  |  mul\n1 threads: --------------\n"
                      f"      n=1  |  {best.format(2)}  |  {best.format(4)}\n      n=8  |   3   |     \n"
                      f"2 threads: --------------\n      n=8  |       |  {best.format(1)}\n\n"
                      "Times are in microseconds (us).\n")
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        benchmark.Compare([1.0])


def test_timer_runs_statement():
    calls = []
    t = benchmark.Timer("acc.append(x)", setup="y = 1", globals={"acc": calls, "x": 7}, label="L",
                        sub_label="s", description="d", num_threads=1)
    m = t.timeit(number=10)
    assert m.number_per_run == 10 and len(m.times) == 1 and m.times[0] > 0
    assert len(calls) == 10 + 2 and m.title == "L: s" and m.description == "d"  # warm-up of max(10 // 100, 2)
    seen = []
    m = t.blocked_autorange(callback=lambda n, s: seen.append(n), min_run_time=1e-3)
    assert len(m.times) >= 1 and seen and all(n == m.number_per_run for n in seen) and m.median > 0
    m = t.adaptive_autorange(min_run_time=1e-3, max_run_time=5e-3)
    assert len(m.times) >= 1 and m.mean > 0
    assert benchmark.Timer("torch.ones(1)").timeit(2).times[0] > 0  # torch is in the globals


def test_timer_errors():
    t = benchmark.Timer()
    for method in (t.repeat, t.autorange):
        with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
            method()
    with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
        benchmark.Timer(stmt=lambda: None)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        benchmark.Timer(global_setup="int x;")
    with pytest.raises(ValueError, match="Invalid language `rust`."):
        benchmark.Timer(language="rust")
    with pytest.raises(NotImplementedError, match="C\\+\\+ statements"):
        benchmark.Timer(language="cpp")


@pytest.mark.parametrize("device", CUDA)
def test_timer_synchronizes_cuda(device, monkeypatch):
    x = ctorch.ones(4, device=device)
    syncs = []
    real = ctorch.cuda.synchronize
    monkeypatch.setattr(ctorch.cuda, "synchronize", lambda d=None: (syncs.append(d), real(d)))
    m = benchmark.Timer("x * 2", globals={"x": x}).timeit(number=3)
    assert m.times[0] > 0 and len(syncs) == 4  # before and after the warm-up and the timed block


# --- nn.attention -------------------------------------------------------------------------------------------
def _np_sdpa(q, k, v, mask):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    s = np.where(mask, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("variant,lq,lkv", [("upper_left", 3, 5), ("lower_right", 3, 5), ("lower_right", 4, 4)])
def test_causal_bias_as_attn_mask(device, rng, variant, lq, lkv):
    make = causal_upper_left if variant == "upper_left" else causal_lower_right
    bias = make(lq, lkv)
    assert isinstance(bias, CausalBias) and (bias.seq_len_q, bias.seq_len_kv) == (lq, lkv)
    expected_mask = np.tril(np.ones((lq, lkv), bool), 0 if variant == "upper_left" else lkv - lq)
    np.testing.assert_array_equal(to_numpy(bias._materialize()), expected_mask)
    q, k, v = (rng.standard_normal((1, 2, n, 4)) for n in (lq, lkv, lkv))
    out = F.scaled_dot_product_attention(*(ctorch.tensor(a, device=device) for a in (q, k, v)), attn_mask=bias)
    assert_close(out, _np_sdpa(q, k, v, expected_mask))
    with pytest.raises(ValueError, match="CausalBias should not be used with causal=True"):
        F.scaled_dot_product_attention(ctorch.tensor(q), ctorch.tensor(k), ctorch.tensor(v), attn_mask=bias,
                                       is_causal=True)


def test_causal_bias_errors_and_warning():
    with pytest.warns(UserWarning, match="Lower right causal bias will produce NaNs"):
        causal_lower_right(5, 3)
    with pytest.raises(AssertionError, match="only supports 2D tensors"):
        causal_upper_left(1, 2, 3)


def test_sdpa_kernel_backends():
    q = ctorch.ones(1, 2, 3)
    assert [(b.name, int(b)) for b in SDPBackend] == [("ERROR", -1), ("MATH", 0), ("FLASH_ATTENTION", 1),
                                                      ("EFFICIENT_ATTENTION", 2), ("CUDNN_ATTENTION", 3),
                                                      ("OVERRIDEABLE", 4)]
    assert str(SDPBackend.MATH) == "SDPBackend.MATH"
    for allowed in (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, [SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        with sdpa_kernel(allowed):
            assert_close(F.scaled_dot_product_attention(q, q, q), np.ones((1, 2, 3)))
    for allowed in (SDPBackend.EFFICIENT_ATTENTION, [SDPBackend.CUDNN_ATTENTION], []):
        with sdpa_kernel(allowed):
            with pytest.raises(RuntimeError, match="No viable backend for scaled_dot_product_attention"):
                F.scaled_dot_product_attention(q, q, q)
    F.scaled_dot_product_attention(q, q, q)  # restored on exit
    cuda_flags = ctorch.backends.cuda
    with sdpa_kernel([SDPBackend.MATH]):
        assert cuda_flags.math_sdp_enabled() and not cuda_flags.flash_sdp_enabled()
        assert not cuda_flags.mem_efficient_sdp_enabled() and not cuda_flags.cudnn_sdp_enabled()
    assert cuda_flags.flash_sdp_enabled() and cuda_flags.cudnn_sdp_enabled()
    try:
        cuda_flags.enable_math_sdp(False)
        cuda_flags.enable_flash_sdp(False)
        assert not cuda_flags.math_sdp_enabled()
        with pytest.raises(RuntimeError, match="No viable backend"):
            F.scaled_dot_product_attention(q, q, q)
    finally:
        cuda_flags.enable_math_sdp(True)
        cuda_flags.enable_flash_sdp(True)
    F.scaled_dot_product_attention(q, q, q)
    with pytest.raises(AssertionError, match="got str"):
        with sdpa_kernel("math"):
            pass


# --- nn.DataParallel ----------------------------------------------------------------------------------------
def _linear_np(m, x):
    return x @ to_numpy(m.weight).T + to_numpy(m.bias)


def test_data_parallel_module_bookkeeping(rng):
    m = ctorch.nn.Linear(3, 2)
    dp = ctorch.nn.DataParallel(m)
    assert dp.module is m and list(dp.state_dict()) == ["module.weight", "module.bias"]
    assert repr(dp) == "DataParallel(\n  (module): Linear(in_features=3, out_features=2, bias=True)\n)"
    if ctorch.cuda.is_available():
        return  # the CUDA behaviour is tested by test_data_parallel_cuda
    assert dp.device_ids == []
    x = rng.standard_normal((4, 3)).astype(np.float32)
    assert_close(dp(ctorch.tensor(x)), _linear_np(m, x))
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        ctorch.nn.parallel.data_parallel(m, ctorch.tensor(x))


@pytest.mark.parametrize("device", CUDA)
@pytest.mark.parametrize("ids", [[0], [0, 1]], ids=["one", "two"])
def test_data_parallel_cuda(device, rng, ids):
    if len(ids) > ctorch.cuda.device_count():
        pytest.skip("needs two CUDA devices")
    m = ctorch.nn.Linear(3, 2)
    if len(ids) > 1:
        m.to("cuda:0")  # only a single-device DataParallel moves the module itself
    dp = ctorch.nn.DataParallel(m, device_ids=ids)
    assert dp.device_ids == ids and dp.output_device == 0 and m.weight.device == ctorch.device("cuda", 0)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    out = dp(ctorch.tensor(x))
    assert out.device == ctorch.device("cuda", 0)
    assert_close(out, _linear_np(m, x))
    out.sum().backward()
    assert_close(m.weight.grad, np.broadcast_to(x.sum(0), (2, 3)))
    assert_close(m.bias.grad, np.full(2, 5.0, np.float32))
    assert_close(ctorch.nn.parallel.data_parallel(m, ctorch.tensor(x), ids), _linear_np(m, x))
    if len(ids) > 1:  # each chunk ran on its own device, with the weight copied there
        seen = []
        m.register_forward_pre_hook(lambda mod, args: seen.append((args[0].device.index, args[0].shape[0])))
        dp(ctorch.tensor(x))
        assert seen == [(0, 3), (1, 2)]
    with pytest.raises(IndexError):
        ctorch.nn.DataParallel(m, device_ids=[])
    m.cpu()
    with pytest.raises(RuntimeError, match=r"module must have its parameters and buffers on device cuda:0 "
                                           r"\(device_ids\[0\]\) but found one of them on device: cpu"):
        dp(ctorch.tensor(x))


# --- optim.Adafactor ----------------------------------------------------------------------------------------
def _np_adafactor(params, grads_seq, lr, beta2_decay, eps1, eps2, d, wd, maximize):
    """The documented algorithm, step by step, in float64."""
    params = [p.astype(np.float64).copy() for p in params]
    state = [None] * len(params)
    for step, grads in enumerate(grads_seq, 1):
        for i, (p, g) in enumerate(zip(params, grads)):
            g = -g if maximize else g
            beta = step ** beta2_decay
            rho = min(lr, 1 / np.sqrt(step))
            alpha = max(eps2, np.sqrt((p ** 2).sum() / p.size)) * rho
            p *= 1 - lr * wd
            if g.ndim > 1:
                if state[i] is None:
                    state[i] = [np.zeros(g.shape[:-1] + (1,)), np.zeros(g.shape[:-2] + (1, g.shape[-1]))]
                r, c = state[i]
                r += beta * ((g ** 2).mean(-1, keepdims=True) - r)
                c += beta * ((g ** 2).mean(-2, keepdims=True) - c)
                v = (r @ c) / np.maximum(r.mean(-2, keepdims=True), eps1)
            else:
                if state[i] is None:
                    state[i] = np.zeros(g.shape)
                state[i] += beta * (g ** 2 - state[i])
                v = state[i].copy()
            u = g / np.sqrt(np.maximum(v, eps1 * eps1))
            p -= alpha / max(1.0, np.sqrt((u ** 2).sum() / u.size) / d) * u
    return params


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,kw", [("float64", {}), ("float64", {"weight_decay": 0.1, "maximize": True, "lr": 0.5}),
                                      ("float32", {"d": 2.0, "eps": (1e-30, 1e-2), "beta2_decay": -0.5})],
                         ids=["default", "wd-max", "f32-d"])
def test_adafactor_matches_numpy(device, rng, dtype, kw):
    shapes = [(3, 4), (4,), (2, 2, 3)]
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads_seq = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(3)]
    params = [ctorch.tensor(a, device=device, requires_grad=True) for a in init]
    opt = ctorch.optim.Adafactor(params, **kw)
    for grads in grads_seq:
        for p, g in zip(params, grads):
            p.grad = ctorch.tensor(g, device=device)
        opt.step()
    eps1, eps2 = kw.get("eps", (None, 1e-3))
    eps1 = np.finfo(dtype).eps if eps1 is None else eps1
    expected = _np_adafactor(init, grads_seq, kw.get("lr", 1e-2), kw.get("beta2_decay", -0.8), eps1, eps2,
                             kw.get("d", 1.0), kw.get("weight_decay", 0.0), kw.get("maximize", False))
    for p, e in zip(params, expected):
        assert_close(p, e)
    st = opt.state[params[0]]
    assert sorted(st) == ["col_var", "row_var", "step"] and st["step"].item() == 3.0
    assert tuple(st["row_var"].shape) == (3, 1) and tuple(st["col_var"].shape) == (1, 4)
    assert sorted(opt.state[params[1]]) == ["step", "variance"]
    assert tuple(opt.state[params[2]]["col_var"].shape) == (2, 1, 3)


@pytest.mark.parametrize("kw,msg", [({"lr": -1.0}, "Learning rate should be >= 0 but is: -1.0"),
                                    ({"beta2_decay": 0.5}, "beta2_decay should be <= 0 but is: 0.5"),
                                    ({"eps": (-1.0, 1e-3)}, "epsilon1 should be >= 0 but is: -1.0"),
                                    ({"eps": (None, -1.0)}, "epsilon2 should be >= 0 but is: -1.0"),
                                    ({"d": 0.5}, "Clipping threshold d should be >= 1 but is: 0.5"),
                                    ({"weight_decay": -1.0}, "weight_decay should be >= 0 but is: -1.0")])
def test_adafactor_errors(kw, msg):
    with pytest.raises(ValueError, match=msg.replace("(", "\\(")):
        ctorch.optim.Adafactor([ctorch.zeros(2, requires_grad=True)], **kw)


# --- optim.Muon ---------------------------------------------------------------------------------------------
def _bf16(a):
    """a rounded to bfloat16 (nearest even), back in float64."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


def _np_newton_schulz(g, a=3.4445, b=-4.775, c=2.0315, steps=5, eps=1e-7):
    tall = g.shape[0] > g.shape[1]
    x = _bf16(g.T if tall else g)
    x = _bf16(x / max(_bf16(np.linalg.norm(x)), eps))
    for _ in range(steps):
        gram = _bf16(x @ x.T)
        x = _bf16(a * x + _bf16(b * gram + c * gram @ gram) @ x)
    return x.T if tall else x


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("nesterov,adjust", [(True, None), (False, "match_rms_adamw"), (True, "spectral_unclamped")])
def test_muon_matches_numpy(device, rng, nesterov, adjust):
    shapes = [(5, 3), (3, 4)]
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads_seq = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(3)]
    params = [ctorch.tensor(a, device=device, requires_grad=True) for a in init]
    lr, wd, mu = 0.02, 0.1, 0.95
    opt = ctorch.optim.Muon(params, lr=lr, weight_decay=wd, nesterov=nesterov, adjust_lr_fn=adjust)
    expected = [a.astype(np.float64) for a in init]
    bufs = [np.zeros(s) for s in shapes]
    scale = {None: lambda r, c: np.sqrt(max(1, r / c)), "match_rms_adamw": lambda r, c: 0.2 * np.sqrt(max(r, c)),
             "spectral_unclamped": lambda r, c: np.sqrt(r / c)}[adjust]
    for grads in grads_seq:
        for p, g in zip(params, grads):
            p.grad = ctorch.tensor(g, device=device)
        opt.step()
        for i, g in enumerate(grads):
            bufs[i] = mu * bufs[i] + (1 - mu) * g
            update = g + mu * (bufs[i] - g) if nesterov else bufs[i]
            expected[i] = expected[i] * (1 - lr * wd) - lr * scale(*g.shape) * _np_newton_schulz(update)
    for p, e in zip(params, expected):
        np.testing.assert_allclose(to_numpy(p), e, atol=lr * 2e-2)
    assert sorted(opt.state[params[0]]) == ["momentum_buffer"]


def test_muon_errors():
    w = ctorch.zeros(2, 2, requires_grad=True)
    with pytest.raises(ValueError, match=r"Muon only supports 2D parameters whereas we found a "
                                         r"parameter with size: torch.Size\(\[2\]\)"):
        ctorch.optim.Muon([ctorch.zeros(2, requires_grad=True)])
    with pytest.raises(ValueError, match="Adjust learning rate function cubic is not supported"):
        ctorch.optim.Muon([w], adjust_lr_fn="cubic")
    with pytest.raises(ValueError, match="momentum should be >= 0 but is: -1"):
        ctorch.optim.Muon([w], momentum=-1)
    w.grad = ctorch.ones(2, 2)
    with pytest.raises(ValueError, match="Number of steps must be less than 100"):
        ctorch.optim.Muon([w], ns_steps=100).step()
