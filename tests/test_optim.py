"""ctorch.optim: SGD / Adam / AdamW / RMSprop trajectories (100 steps) against NumPy implementations of
PyTorch's update rules for every option combination, argument validation, param groups, state_dict
round trips, and the learning-rate schedulers against numbers produced by the reference PyTorch."""
import itertools
import math
import warnings

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
import ctorch.optim as optim
from conftest import to_numpy

STEPS = 100
SHAPES = [(3, 4), (5,), (2, 3, 2)]


def _grad_sequence(seed, steps=STEPS):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s) for s in SHAPES] for _ in range(steps)]


def _init_params(seed):
    rng = np.random.default_rng(seed + 1)
    return [rng.standard_normal(s) for s in SHAPES]


# --- NumPy references (float64) of PyTorch's single-tensor update rules --------------------------------
def np_sgd(params, grads_seq, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
    params = [p.copy() for p in params]
    bufs = [None] * len(params)
    for grads in grads_seq:
        for i, (p, g) in enumerate(zip(params, grads)):
            g = -g if maximize else g
            if weight_decay:
                g = g + weight_decay * p
            if momentum:
                bufs[i] = g.copy() if bufs[i] is None else bufs[i] * momentum + (1 - dampening) * g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            p -= lr * g
    return params


def np_adam(params, grads_seq, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, maximize=False,
            decoupled=False):
    params = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    vmax = [np.zeros_like(p) for p in params]
    b1, b2 = betas
    for step, grads in enumerate(grads_seq, 1):
        for i, (p, g) in enumerate(zip(params, grads)):
            g = -g if maximize else g
            if weight_decay:
                if decoupled:
                    p *= 1 - lr * weight_decay
                else:
                    g = g + weight_decay * p
            m[i] = m[i] + (1 - b1) * (g - m[i])
            v[i] = v[i] * b2 + (1 - b2) * g * g
            bc1, bc2 = 1 - b1**step, 1 - b2**step
            if amsgrad:
                vmax[i] = np.maximum(vmax[i], v[i])
                denom = np.sqrt(vmax[i]) / math.sqrt(bc2) + eps
            else:
                denom = np.sqrt(v[i]) / math.sqrt(bc2) + eps
            p -= (lr / bc1) * m[i] / denom
    return params


def np_rmsprop(params, grads_seq, lr, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
               maximize=False):
    params = [p.copy() for p in params]
    sq = [np.zeros_like(p) for p in params]
    ga = [np.zeros_like(p) for p in params]
    buf = [np.zeros_like(p) for p in params]
    for grads in grads_seq:
        for i, (p, g) in enumerate(zip(params, grads)):
            g = -g if maximize else g
            if weight_decay:
                g = g + weight_decay * p
            sq[i] = sq[i] * alpha + (1 - alpha) * g * g
            if centered:
                ga[i] = ga[i] + (1 - alpha) * (g - ga[i])
                avg = np.sqrt(sq[i] - ga[i] * ga[i]) + eps
            else:
                avg = np.sqrt(sq[i]) + eps
            if momentum > 0:
                buf[i] = buf[i] * momentum + g / avg
                p -= lr * buf[i]
            else:
                p -= lr * g / avg
    return params


def _run_ctorch(make_opt, params0, grads_seq, device, dtype, layout="contiguous"):
    params = []
    for p in params0:
        if layout == "transposed" and p.ndim == 2:
            base = ctorch.tensor(np.ascontiguousarray(p.T), dtype=getattr(ctorch, dtype), device=device)
            params.append(nn.Parameter(base.t()))  # a non-contiguous parameter
        else:
            params.append(nn.Parameter(ctorch.tensor(p, dtype=getattr(ctorch, dtype), device=device)))
    opt = make_opt(params)
    for grads in grads_seq:
        for p, g in zip(params, grads):
            p.grad = ctorch.tensor(g, dtype=getattr(ctorch, dtype), device=device).reshape(tuple(p.shape))
            if layout == "transposed" and g.ndim == 2:
                p.grad = ctorch.tensor(np.ascontiguousarray(g.T), dtype=getattr(ctorch, dtype), device=device).t()
        opt.step()
    return [to_numpy(p).astype(np.float64) for p in params], opt


TOLS = {"float64": dict(rtol=1e-10, atol=1e-10), "float32": dict(rtol=2e-4, atol=2e-5)}


def _check(actual, expected, dtype):
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, **TOLS[dtype])


SGD_CASES = [dict(momentum=m, dampening=d, weight_decay=wd, nesterov=n, maximize=mx)
             for m, d, wd, n, mx in itertools.product([0, 0.9], [0, 0.3], [0, 0.1], [False, True], [False, True])
             if not (n and (m == 0 or d != 0))]


@pytest.mark.parametrize("kw", SGD_CASES, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sgd_trajectory(device, kw, dtype):
    grads, p0 = _grad_sequence(1), _init_params(1)
    got, _ = _run_ctorch(lambda ps: optim.SGD(ps, lr=0.05, **kw), p0, grads, device, dtype)
    _check(got, np_sgd(p0, grads, 0.05, **kw), dtype)


ADAM_CASES = [dict(weight_decay=wd, amsgrad=a, maximize=mx, betas=b)
              for wd, a, mx, b in itertools.product([0, 0.1], [False, True], [False, True],
                                                    [(0.9, 0.999), (0.3, 0.5)])]


@pytest.mark.parametrize("kw", ADAM_CASES, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()))
@pytest.mark.parametrize("cls", ["Adam", "AdamW"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_adam_trajectory(device, kw, cls, dtype):
    grads, p0 = _grad_sequence(2), _init_params(2)
    got, opt = _run_ctorch(lambda ps: getattr(optim, cls)(ps, lr=0.01, **kw), p0, grads, device, dtype)
    _check(got, np_adam(p0, grads, 0.01, decoupled=cls == "AdamW", **kw), dtype)
    state = opt.state[opt.param_groups[0]["params"][0]]
    assert list(state) == ["step", "exp_avg", "exp_avg_sq"] + (["max_exp_avg_sq"] if kw["amsgrad"] else [])
    assert state["step"].item() == STEPS and state["step"].dtype == ctorch.float32


RMSPROP_CASES = [dict(momentum=m, centered=c, weight_decay=wd, maximize=mx, alpha=a)
                 for m, c, wd, mx, a in itertools.product([0, 0.5], [False, True], [0, 0.1], [False, True],
                                                          [0.99, 0.6])]


@pytest.mark.parametrize("kw", RMSPROP_CASES, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_rmsprop_trajectory(device, kw, dtype):
    grads, p0 = _grad_sequence(3), _init_params(3)
    got, opt = _run_ctorch(lambda ps: optim.RMSprop(ps, lr=0.01, **kw), p0, grads, device, dtype)
    _check(got, np_rmsprop(p0, grads, 0.01, **kw), dtype)
    state = opt.state[opt.param_groups[0]["params"][0]]
    expected_keys = ["step", "square_avg"] + (["momentum_buffer"] if kw["momentum"] > 0 else []) + (
        ["grad_avg"] if kw["centered"] else [])
    assert sorted(state) == sorted(expected_keys)


@pytest.mark.parametrize("name,make,ref", [
    ("SGD", lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=0.01),
     lambda p, g: np_sgd(p, g, 0.05, momentum=0.9, weight_decay=0.01)),
    ("Adam", lambda ps: optim.Adam(ps, lr=0.01, amsgrad=True), lambda p, g: np_adam(p, g, 0.01, amsgrad=True)),
    ("RMSprop", lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True),
     lambda p, g: np_rmsprop(p, g, 0.01, momentum=0.5, centered=True)),
], ids=["SGD", "Adam", "RMSprop"])
def test_non_contiguous_params(device, name, make, ref):
    grads, p0 = _grad_sequence(4, 30), _init_params(4)
    got, _ = _run_ctorch(make, p0, grads, device, "float64", layout="transposed")
    _check(got, ref(p0, grads), "float64")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_half_precision_params(device, dtype, name):
    grads, p0 = _grad_sequence(5, 10), _init_params(5)
    kw = {"SGD": dict(lr=0.05, momentum=0.9), "Adam": dict(lr=0.01), "AdamW": dict(lr=0.01),
          "RMSprop": dict(lr=0.01)}[name]
    got, opt = _run_ctorch(lambda ps: getattr(optim, name)(ps, **kw), p0, grads, device, dtype)
    ref = {"SGD": np_sgd, "Adam": np_adam, "AdamW": lambda p, g, **k: np_adam(p, g, decoupled=True, **k),
           "RMSprop": np_rmsprop}[name](p0, grads, **kw)
    for a, e in zip(got, ref):
        np.testing.assert_allclose(a, e, rtol=0.05, atol=0.05)
    for st in opt.state.values():
        for k, v in st.items():
            if k != "step":
                assert v.dtype == getattr(ctorch, dtype)


def test_many_small_params_one_call(device):
    """1000 parameter tensors of a group are updated by one C call; compare with NumPy."""
    rng = np.random.default_rng(6)
    p0 = [rng.standard_normal(7) for _ in range(1000)]
    g = [[rng.standard_normal(7) for _ in range(1000)] for _ in range(3)]
    params = [nn.Parameter(ctorch.tensor(p, device=device)) for p in p0]
    opt = optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True)
    for step in g:
        for p, gg in zip(params, step):
            p.grad = ctorch.tensor(gg, device=device)
        opt.step()
    ref = np_sgd(p0, g, 0.1, momentum=0.9, nesterov=True)
    for p, e in zip(params, ref):
        np.testing.assert_allclose(to_numpy(p), e, rtol=1e-12, atol=1e-12)


def test_training_loop_with_backward(device):
    """A real loop: loss.backward() fills .grad, the step updates in place (parameter identity kept)."""
    ctorch.manual_seed(0)
    model = nn.Linear(4, 1).to(device)
    w_id = id(model.weight)
    rng = np.random.default_rng(7)
    X = rng.standard_normal((64, 4))
    y = X @ np.array([1.0, -2.0, 0.5, 3.0]) + 0.25
    Xt = ctorch.tensor(X, dtype=ctorch.float32, device=device)
    yt = ctorch.tensor(y[:, None], dtype=ctorch.float32, device=device)
    opt = optim.Adam(model.parameters(), lr=0.1)
    v0 = model.weight._version
    for _ in range(300):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(Xt), yt)
        loss.backward()
        opt.step()
    assert loss.item() < 1e-3
    assert id(model.weight) == w_id and model.weight.is_leaf
    assert model.weight._version > v0  # in-place writes bump the version counter
    np.testing.assert_allclose(to_numpy(model.weight)[0], [1.0, -2.0, 0.5, 3.0], atol=0.02)


def test_closure_and_params_without_grad(device):
    p = nn.Parameter(ctorch.tensor([1.0, 2.0], device=device))
    q = nn.Parameter(ctorch.tensor([5.0], device=device))
    opt = optim.SGD([p, q], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 5.0
    np.testing.assert_allclose(to_numpy(p), [0.0, 0.0])
    np.testing.assert_allclose(to_numpy(q), [5.0])  # no grad: untouched
    assert q not in opt.state


# --- validation --------------------------------------------------------------------------------------
@pytest.mark.parametrize("make,msg", [
    (lambda p: optim.SGD(p, lr=-0.1), "Invalid learning rate: -0.1"),
    (lambda p: optim.SGD(p, lr=0.1, momentum=-1), "Invalid momentum value: -1"),
    (lambda p: optim.SGD(p, lr=0.1, weight_decay=-0.5), "Invalid weight_decay value: -0.5"),
    (lambda p: optim.SGD(p, lr=0.1, nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    (lambda p: optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda p: optim.Adam(p, lr=-1.0), "Invalid learning rate: -1.0"),
    (lambda p: optim.Adam(p, eps=-1e-8), "Invalid epsilon value: -1e-08"),
    (lambda p: optim.Adam(p, betas=(1.0, 0.999)), "Invalid beta parameter at index 0: 1.0"),
    (lambda p: optim.Adam(p, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (lambda p: optim.AdamW(p, weight_decay=-1e-2), "Invalid weight_decay value: -0.01"),
    (lambda p: optim.Adam(p, betas=(0.9, 1)), "Invalid beta parameter at index 1: 1"),
    (lambda p: optim.RMSprop(p, alpha=-0.5), "Invalid alpha value: -0.5"),
    (lambda p: optim.RMSprop(p, momentum=-0.5), "Invalid momentum value: -0.5"),
    (lambda p: optim.RMSprop(p, eps=-1.0), "Invalid epsilon value: -1.0"),
])
def test_argument_validation(make, msg):
    with pytest.raises(ValueError) as e:
        make([nn.Parameter(ctorch.zeros(2))])
    assert str(e.value) == msg


def test_param_list_validation():
    p = nn.Parameter(ctorch.zeros(2))
    with pytest.raises(ValueError, match="^optimizer got an empty parameter list$"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="^params argument given to the optimizer should be an iterable of Tensors or "
                                        "dicts, but got torch.FloatTensor$"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="^optimizer can only optimize Tensors, but one of the params is int$"):
        optim.SGD([1], lr=0.1)
    with pytest.raises(ValueError, match="^can't optimize a non-leaf Tensor$"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.warns(FutureWarning, match="optimizer parameters need to be organized in ordered collections"):
        optim.SGD({p}, lr=0.1)
    with pytest.raises(TypeError, match="optimizer parameters need to be organized in ordered collections"):
        optim.SGD([{"params": {p}}], lr=0.1)
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="^some parameters appear in more than one parameter group$"):
        opt.add_param_group({"params": [p]})
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([p, p], lr=0.1)


def test_param_groups_and_repr():
    a, b = nn.Parameter(ctorch.ones(2)), nn.Parameter(ctorch.ones(3))
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5, "momentum": 0.9}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["params"] == [b] and opt.param_groups[1]["momentum"] == 0.9
    assert opt.param_groups[0]["momentum"] == 0
    assert repr(opt) == ("SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n    foreach: None\n"
                         "    fused: None\n    lr: 0.1\n    maximize: False\n    momentum: 0\n    nesterov: False\n"
                         "    weight_decay: 0\n\nParameter Group 1\n    dampening: 0\n    differentiable: False\n"
                         "    foreach: None\n    fused: None\n    lr: 0.5\n    maximize: False\n    momentum: 0.9\n"
                         "    nesterov: False\n    weight_decay: 0\n)")
    c = nn.Parameter(ctorch.ones(1))
    opt.add_param_group({"params": [c], "lr": 0.01})
    assert len(opt.param_groups) == 3 and opt.param_groups[2]["dampening"] == 0
    a.grad, b.grad, c.grad = ctorch.ones(2), ctorch.ones(3), ctorch.ones(1)
    opt.step()
    np.testing.assert_allclose(to_numpy(a), [0.9, 0.9])
    np.testing.assert_allclose(to_numpy(b), [0.5, 0.5, 0.5])
    np.testing.assert_allclose(to_numpy(c), [0.99])
    opt.zero_grad(set_to_none=False)
    assert to_numpy(a.grad).tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None and b.grad is None


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01, amsgrad=True)),
                                     ("AdamW", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, centered=True, momentum=0.3))])
def test_state_dict_round_trip(device, name, kw):
    grads, p0 = _grad_sequence(8, 10), _init_params(8)

    def make():
        return [nn.Parameter(ctorch.tensor(p, device=device)) for p in p0]

    params = make()
    opt = getattr(optim, name)(params, **kw)
    for gs in grads[:5]:
        for p, g in zip(params, gs):
            p.grad = ctorch.tensor(g, device=device)
        opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert sd["param_groups"][0]["params"] == [0, 1, 2] and sorted(sd["state"]) == [0, 1, 2]
    # a fresh optimizer on copies of the parameters continues identically (the state dict holds
    # references to the live state, as in PyTorch: load a copy made through ctorch.save / ctorch.load)
    import io

    buf = io.BytesIO()
    ctorch.save(sd, buf)
    buf.seek(0)
    params2 = [nn.Parameter(p.detach().clone()) for p in params]
    opt2 = getattr(optim, name)(params2, **kw)
    opt2.load_state_dict(ctorch.load(buf))
    assert opt2.param_groups[0]["params"] == params2
    for gs in grads[5:]:
        for p, q, g in zip(params, params2, gs):
            p.grad = ctorch.tensor(g, device=device)
            q.grad = ctorch.tensor(g, device=device)
        opt.step()
        opt2.step()
    for p, q in zip(params, params2):
        np.testing.assert_array_equal(to_numpy(p), to_numpy(q))
    # and the state itself round-trips through ctorch.save / ctorch.load
    buf = io.BytesIO()
    ctorch.save(opt.state_dict(), buf)
    buf.seek(0)
    loaded = ctorch.load(buf)
    opt3 = getattr(optim, name)([nn.Parameter(p.detach().clone()) for p in params], **kw)
    opt3.load_state_dict(loaded)
    s_a, s_b = opt.state_dict()["state"][0], opt3.state_dict()["state"][0]
    for k in s_a:
        np.testing.assert_array_equal(to_numpy(s_a[k]), to_numpy(s_b[k]))


def test_step_and_state_dict_hooks():
    from ctorch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    p = nn.Parameter(ctorch.tensor([1.0]))
    p.grad = ctorch.tensor([1.0])
    opt, log = optim.SGD([p], lr=0.5), []
    h = opt.register_step_pre_hook(lambda o, args, kwargs: log.append(("pre", args[0] is o, kwargs)))
    opt.register_step_post_hook(lambda o, args, kwargs: log.append("post"))
    g1 = register_optimizer_step_pre_hook(lambda o, args, kwargs: log.append("gpre"))
    g2 = register_optimizer_step_post_hook(lambda o, args, kwargs: log.append("gpost"))
    opt.step()
    g1.remove()
    g2.remove()
    h.remove()
    opt.step()
    assert log == ["gpre", ("pre", True, {}), "post", "gpost", "post"] and p.tolist() == [0.0]
    opt.register_step_pre_hook(lambda o, args, kwargs: 5)
    with pytest.raises(RuntimeError, match=r"SGD.step at .* must return None or a tuple of \(new_args, new_kwargs\), "
                                           r"but got 5\.$"):
        opt.step()
    log.clear()
    opt.register_state_dict_pre_hook(lambda o: log.append("sdpre"))
    opt.register_state_dict_post_hook(lambda o, sd: dict(sd, extra=1))
    opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(sorted(sd)))
    opt.register_load_state_dict_post_hook(lambda o: log.append("lpost"), prepend=True)
    sd = opt.state_dict()
    opt.load_state_dict(sd)
    assert sorted(sd) == ["extra", "param_groups", "state"]
    assert log == ["sdpre", ["extra", "param_groups", "state"], "lpost"]


def test_load_state_dict_errors_and_casts():
    p = nn.Parameter(ctorch.zeros(2))
    opt = optim.Adam([p], lr=0.1)
    p.grad = ctorch.ones(2)
    opt.step()
    sd = opt.state_dict()
    other = optim.Adam([nn.Parameter(ctorch.zeros(2)), nn.Parameter(ctorch.zeros(1))], lr=0.1)
    with pytest.raises(ValueError, match="^loaded state dict contains a parameter group that doesn't match the size "
                                         "of optimizer's group$"):
        other.load_state_dict(sd)
    two = optim.Adam([{"params": [nn.Parameter(ctorch.zeros(2))]}, {"params": [nn.Parameter(ctorch.zeros(1))]}])
    with pytest.raises(ValueError, match="^loaded state dict has a different number of parameter groups$"):
        two.load_state_dict(sd)
    # state tensors follow the parameter's dtype; step stays float32
    q = nn.Parameter(ctorch.zeros(2, dtype=ctorch.float64))
    opt2 = optim.Adam([q], lr=0.1)
    opt2.load_state_dict(sd)
    st = opt2.state[q]
    assert st["exp_avg"].dtype == ctorch.float64 and st["step"].dtype == ctorch.float32
    assert opt2.param_groups[0]["lr"] == 0.1


# --- schedulers -----------------------------------------------------------------------------------------
# Produced with the reference torch 2.15 (/work/torchref/venv/bin/python) running exactly the schedules
# of _schedule_sequences below (same code with `import torch`); hard-coded because torch is absent where
# the tests run.
TORCH_SCHEDULES = {
    'step': [0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.0125, 0.0125, 0.0125],
    'multistep': [0.1, 0.1, 0.010000000000000002, 0.010000000000000002, 0.010000000000000002, 0.00010000000000000005,
                  0.00010000000000000005, 0.00010000000000000005, 0.00010000000000000005, 1.0000000000000006e-05,
                  1.0000000000000006e-05, 1.0000000000000006e-05],
    'exp': [0.1, 0.09000000000000001, 0.08100000000000002, 0.07290000000000002, 0.06561000000000002,
            0.05904900000000002, 0.05314410000000002, 0.04782969000000002, 0.043046721000000024, 0.03874204890000002,
            0.03486784401000002, 0.03138105960900001],
    'cos': [0.1, 0.09140576474687263, 0.06890576474687263, 0.04109423525312736, 0.018594235253127367, 0.01,
            0.018594235253127367, 0.04109423525312739, 0.06890576474687267, 0.09140576474687269, 0.10000000000000006,
            0.09140576474687272, 0.06890576474687268, 0.0410942352531274, 0.01859423525312738, 0.01],
    'lambda': [0.1, 0.05, 0.03333333333333333, 0.025, 0.020000000000000004, 0.016666666666666666,
               0.014285714285714285, 0.0125],
    'onecycle': [[0.040000000000000036, 0.1316718427000253, 0.3716718427000253, 0.6683281572999747,
                  0.9083281572999747, 1.0, 0.9874640062350873, 0.9504846320134737, 0.89091617757105,
                  0.8117456539497631, 0.7169430017913008, 0.6112620219362893, 0.500002, 0.38874197806371075,
                  0.28306099820869923, 0.18825834605023697, 0.10908782242895004, 0.049519367986526286,
                  0.012539993764912554, 4e-06],
                 [0.95, 0.9404508497187474, 0.9154508497187474, 0.8845491502812526, 0.8595491502812526, 0.85,
                  0.8512536043909088, 0.854951556604879, 0.8609084258765984, 0.8688255099070633, 0.878305813044122,
                  0.8888739533021842, 0.8999999999999999, 0.9111260466978157, 0.9216941869558779,
                  0.9311744900929366, 0.9390915741234015, 0.945048443395121, 0.9487463956090911, 0.95]],
    'onecycle3': [[0.02, 0.19454545454545452, 0.3690909090909091, 0.45636363636363636, 0.28181818181818186,
                   0.10727272727272724, 0.01882364705882353, 0.016470941176470588, 0.014118235294117647,
                   0.011765529411764706, 0.009412823529411763, 0.007060117647058823, 0.004707411764705882,
                   0.0023547058823529393, 1.9999999999985307e-06],
                  [0.95, 0.9136363636363636, 0.8772727272727272, 0.859090909090909, 0.8954545454545454,
                   0.9318181818181818, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95]],
    'plateau': [0.1, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.025, 0.0125, 0.0125, 0.0125],
    'plateau_max': [0.1, 0.1, 0.010000000000000002, 0.010000000000000002, 0.0010000000000000002,
                    0.0010000000000000002],
    'cos_closed': [0.07959536998847742, 0.021404630011522586, 0.010453658778440095],
    'multistep_closed': [0.1, 0.05, 0.025],
    'cos_sd_keys': ['T_max', '_get_lr_called_within_step', '_is_initial', '_last_lr', '_step_count', 'base_lrs',
                    'eta_min', 'last_epoch'],
    'cos_resume': [0.025000000000000012, 0.006698729810778065, 0.0, 0.006698729810778065],
}


def _schedule_sequences(torch):
    S = torch.optim.lr_scheduler

    def run(make, n, opt_kind="SGD", metrics=None, **okw):
        p = torch.nn.Parameter(torch.zeros(1))
        opt = getattr(torch.optim, opt_kind)([p], lr=0.1, **okw)
        s = make(opt)
        lrs, moms = [], []
        for i in range(n):
            lrs.append(s.get_last_lr()[0])
            g = opt.param_groups[0]
            moms.append(g["betas"][0] if "betas" in g else g.get("momentum"))
            opt.step()
            if metrics is not None:
                s.step(metrics[i])
            else:
                s.step()
        return lrs, moms

    out = {}
    out["step"] = run(lambda o: S.StepLR(o, 3, 0.5), 12)[0]
    out["multistep"] = run(lambda o: S.MultiStepLR(o, [2, 5, 5, 9], 0.1), 12)[0]
    out["exp"] = run(lambda o: S.ExponentialLR(o, 0.9), 12)[0]
    out["cos"] = run(lambda o: S.CosineAnnealingLR(o, 5, 0.01), 16)[0]
    out["lambda"] = run(lambda o: S.LambdaLR(o, lambda e: 1.0 / (e + 1)), 8)[0]
    out["onecycle"] = list(run(lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=20), 20, momentum=0.9))
    out["onecycle3"] = list(run(lambda o: S.OneCycleLR(o, max_lr=[0.5], epochs=3, steps_per_epoch=5, three_phase=True,
                                                       anneal_strategy="linear", pct_start=0.25), 15, "Adam"))
    out["plateau"] = run(lambda o: S.ReduceLROnPlateau(o, factor=0.5, patience=2, cooldown=1, min_lr=0.01), 16,
                         metrics=[5, 4, 4, 4, 4, 3.9999, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4])[0]
    out["plateau_max"] = run(lambda o: S.ReduceLROnPlateau(o, mode="max", threshold=0.1, threshold_mode="abs",
                                                           patience=0), 6, metrics=[1, 1.05, 1.2, 1.25, 1.4, 1.4])[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = torch.nn.Parameter(torch.zeros(1))
        opt = torch.optim.SGD([p], lr=0.1)
        s = S.CosineAnnealingLR(opt, 10, 0.001)
        closed = []
        for e in [3, 7, 12]:
            s.step(e)
            closed.append(s.get_last_lr()[0])
        out["cos_closed"] = closed
        p = torch.nn.Parameter(torch.zeros(1))
        opt = torch.optim.SGD([p], lr=0.1)
        s = S.MultiStepLR(opt, [2, 4], 0.5)
        closed = []
        for e in [1, 3, 5]:
            s.step(e)
            closed.append(s.get_last_lr()[0])
        out["multistep_closed"] = closed
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=0.1)
    s = S.CosineAnnealingLR(opt, 6)
    for _ in range(3):
        opt.step()
        s.step()
    sd = s.state_dict()
    out["cos_sd_keys"] = sorted(sd.keys())
    p2 = torch.nn.Parameter(torch.zeros(1))
    opt2 = torch.optim.SGD([p2], lr=0.1)
    s2 = S.CosineAnnealingLR(opt2, 6)
    s2.load_state_dict(sd)
    opt2.param_groups[0]["lr"] = opt.param_groups[0]["lr"]
    res = []
    for _ in range(4):
        opt2.step()
        s2.step()
        res.append(s2.get_last_lr()[0])
    out["cos_resume"] = res
    return out


def test_scheduler_sequences_match_pytorch():
    got = _schedule_sequences(ctorch)
    for key, expected in TORCH_SCHEDULES.items():
        assert got[key] == expected, key  # the same float operations give the same numbers


def test_scheduler_warnings_and_errors():
    p = nn.Parameter(ctorch.zeros(1))
    opt = optim.SGD([p], lr=0.1)
    s = optim.lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        s.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s.get_lr()
    with pytest.raises(TypeError, match="^int is not an Optimizer$"):
        optim.lr_scheduler.StepLR(3, 2)
    with pytest.raises(ValueError, match="^Factor should be < 1.0.$"):
        optim.lr_scheduler.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1)
    one = optim.lr_scheduler.OneCycleLR(optim.SGD([p], lr=0.1, momentum=0.9), max_lr=0.1, total_steps=2)
    one.optimizer.step()
    one.step()
    one.step()
    with pytest.raises(ValueError, match="^Tried to step 3 times. The specified number of total steps is 2$"):
        one.step()
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        optim.lr_scheduler.StepLR(optim.SGD([p], lr=0.1), 2, last_epoch=3)


def test_scheduler_state_dict(device):
    p = nn.Parameter(ctorch.zeros(1, device=device))
    opt = optim.SGD([p], lr=1.0)
    s = optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5**e)
    for _ in range(3):
        opt.step()
        s.step()
    sd = s.state_dict()
    assert sd["last_epoch"] == 3 and sd["lr_lambdas"] == [None] and "optimizer" not in sd
    assert s.get_last_lr() == [0.125]
    plateau = optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max")
    plateau.step(1.0)
    sd2 = plateau.state_dict()
    fresh = optim.lr_scheduler.ReduceLROnPlateau(opt)
    fresh.load_state_dict(sd2)
    assert fresh.mode == "max" and fresh.best == 1.0 and fresh.mode_worse == -math.inf
