"""ctorch.optim: Adagrad / Adadelta / Adamax / NAdam / RAdam / Rprop / ASGD trajectories (100 steps) against
NumPy implementations of PyTorch's update rules for their option combinations, state names and state_dict
round trips, argument validation; MultiplicativeLR / ConstantLR / LinearLR / PolynomialLR / SequentialLR /
ChainedScheduler / CosineAnnealingWarmRestarts / CyclicLR against numbers produced by the reference PyTorch."""
import io
import math
import re
import warnings

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
import ctorch.optim as optim
from conftest import to_numpy

STEPS = 100
SHAPES = [(3, 4), (5,), (2, 3, 2)]


def _data(seed, steps=STEPS):
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s) for s in SHAPES]
    return params, [[rng.standard_normal(s) for s in SHAPES] for _ in range(steps)]


def _f32(x):
    return float(np.float32(x))


# --- NumPy references (float64) of PyTorch's single-tensor update rules ------------------------------------
# Each takes the initial params and the gradient sequence and returns the final params. The 0-d states
# PyTorch keeps in float32 tensors (NAdam's mu_product, ASGD's eta and mu) are rounded to float32 here too.
def _grad(g, p, maximize, weight_decay):
    g = -g if maximize else g
    return g + weight_decay * p if weight_decay else g


def np_adagrad(params, grads_seq, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
               maximize=False):
    params = [p.copy() for p in params]
    sums = [np.full_like(p, initial_accumulator_value) for p in params]
    for step, grads in enumerate(grads_seq, 1):
        for i, (p, g) in enumerate(zip(params, grads)):
            g = _grad(g, p, maximize, weight_decay)
            clr = lr / (1 + (step - 1) * lr_decay)
            sums[i] += g * g
            p -= clr * g / (np.sqrt(sums[i]) + eps)
    return params


def np_adadelta(params, grads_seq, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False):
    params = [p.copy() for p in params]
    sq = [np.zeros_like(p) for p in params]
    acc = [np.zeros_like(p) for p in params]
    for grads in grads_seq:
        for i, (p, g) in enumerate(zip(params, grads)):
            g = _grad(g, p, maximize, weight_decay)
            sq[i] = sq[i] * rho + (1 - rho) * g * g
            delta = np.sqrt(acc[i] + eps) / np.sqrt(sq[i] + eps) * g
            acc[i] = acc[i] * rho + (1 - rho) * delta * delta
            p -= lr * delta
    return params


def np_adamax(params, grads_seq, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, maximize=False):
    params = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in params]
    u = [np.zeros_like(p) for p in params]
    b1, b2 = betas
    for step, grads in enumerate(grads_seq, 1):
        for i, (p, g) in enumerate(zip(params, grads)):
            g = _grad(g, p, maximize, weight_decay)
            m[i] = m[i] + (1 - b1) * (g - m[i])
            u[i] = np.maximum(u[i] * b2, np.abs(g) + eps)
            p -= lr / (1 - b1**step) * m[i] / u[i]
    return params


def _moments(p, g, m, v, lr, betas, weight_decay, decoupled):
    """NAdam's and RAdam's weight decay and moment updates (p, m, v in place); returns the grad."""
    if weight_decay:
        if decoupled:
            p *= 1 - lr * weight_decay
        else:
            g = g + weight_decay * p
    m += (1 - betas[0]) * (g - m)
    v *= betas[1]
    v += (1 - betas[1]) * g * g
    return g


def np_nadam(params, grads_seq, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
             decoupled_weight_decay=False, maximize=False):
    params = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    mu_product = [np.float32(1.0)] * len(params)
    b1, b2 = betas
    for step, grads in enumerate(grads_seq, 1):
        mu = b1 * (1 - 0.5 * 0.96 ** (step * momentum_decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
        for i, (p, g) in enumerate(zip(params, grads)):
            g = _moments(p, -g if maximize else g, m[i], v[i], lr, betas, weight_decay, decoupled_weight_decay)
            mu_product[i] = mu_product[i] * np.float32(mu)
            prod = float(mu_product[i])
            denom = np.sqrt(v[i] / (1 - b2**step)) + eps
            p -= lr * (1 - mu) / (1 - prod) * g / denom
            p -= lr * mu_next / (1 - prod * mu_next) * m[i] / denom
    return params


def np_radam(params, grads_seq, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
             maximize=False):
    params = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    b1, b2 = betas
    rho_inf = 2 / (1 - b2) - 1
    for step, grads in enumerate(grads_seq, 1):
        bc2 = 1 - b2**step
        rho_t = rho_inf - 2 * step * b2**step / bc2
        for i, (p, g) in enumerate(zip(params, grads)):
            _moments(p, -g if maximize else g, m[i], v[i], lr, betas, weight_decay, decoupled_weight_decay)
            update = m[i] / (1 - b1**step) * lr
            if rho_t > 5:
                rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                update = update * math.sqrt(bc2) / (np.sqrt(v[i]) + eps) * rect
            p -= update
    return params


def np_rprop(params, grads_seq, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
    params = [p.copy() for p in params]
    prev = [np.zeros_like(p) for p in params]
    size = [np.full_like(p, lr) for p in params]
    for grads in grads_seq:
        for i, (p, g) in enumerate(zip(params, grads)):
            g = -g if maximize else g.copy()
            s = np.sign(g * prev[i])
            size[i] = np.clip(size[i] * np.where(s > 0, etas[1], np.where(s < 0, etas[0], 1.0)), *step_sizes)
            g[s < 0] = 0
            p -= np.sign(g) * size[i]
            prev[i] = g
    return params


def np_asgd(params, grads_seq, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, maximize=False, ax=None):
    """ax: a list that receives the averages (they do not feed back into the params)."""
    params = [p.copy() for p in params]
    ax = [np.zeros_like(p) for p in params] if ax is None else ax
    ax[:] = [np.zeros_like(p) for p in params]
    eta, mu = _f32(lr), 1.0
    for step, grads in enumerate(grads_seq, 1):
        for i, (p, g) in enumerate(zip(params, grads)):
            g = _grad(g, p, maximize, weight_decay)
            p *= 1 - lambd * eta
            p -= eta * g
            ax[i] = ax[i] + (p - ax[i]) * mu if mu != 1 else p.copy()
        eta = _f32(lr / (1 + lambd * lr * step) ** alpha)
        mu = _f32(1 / max(1, step - t0))
    return params


# name -> (NumPy reference, state keys in PyTorch's order, option sets run against the reference)
OPTIMIZERS = {
    "Adagrad": (np_adagrad, ["step", "sum"], [
        dict(lr=0.1),
        dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6, maximize=True)]),
    "Adadelta": (np_adadelta, ["step", "square_avg", "acc_delta"], [
        dict(),
        dict(lr=0.5, rho=0.6, eps=1e-4, weight_decay=0.1, maximize=True)]),
    "Adamax": (np_adamax, ["step", "exp_avg", "exp_inf"], [
        dict(lr=0.01),
        dict(lr=0.01, betas=(0.5, 0.8), eps=1e-3, weight_decay=0.1, maximize=True)]),
    "NAdam": (np_nadam, ["step", "mu_product", "exp_avg", "exp_avg_sq"], [
        dict(lr=0.01),
        dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, momentum_decay=0.1, maximize=True),
        dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)]),
    "RAdam": (np_radam, ["step", "exp_avg", "exp_avg_sq"], [
        dict(lr=0.01),  # rectified from step 6 on
        dict(lr=0.01, betas=(0.5, 0.9), weight_decay=0.1, maximize=True),
        dict(lr=0.01, betas=(0.9, 0.6), weight_decay=0.1, decoupled_weight_decay=True)]),  # never rectified
    "Rprop": (np_rprop, ["step", "prev", "step_size"], [
        dict(lr=0.01),
        dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.1), maximize=True)]),
    "ASGD": (np_asgd, ["step", "eta", "mu", "ax"], [
        dict(lr=0.01),
        dict(lr=0.05, lambd=0.01, alpha=0.5, t0=10, weight_decay=0.1, maximize=True)]),  # averaging from step 12
}
CASES = [pytest.param(name, kw, id=f"{name}-{i}") for name, (_, _, kws) in OPTIMIZERS.items()
         for i, kw in enumerate(kws)]
TOLS = {"float64": dict(rtol=1e-10, atol=1e-10), "float32": dict(rtol=2e-4, atol=2e-5)}


def _params(p0, device, dtype, transposed=False):
    dt = getattr(ctorch, dtype)
    if transposed:  # 2-d params as transposed views of contiguous storage
        return [nn.Parameter(ctorch.tensor(np.ascontiguousarray(p.T), dtype=dt, device=device).t()) if p.ndim == 2
                else nn.Parameter(ctorch.tensor(p, dtype=dt, device=device)) for p in p0]
    return [nn.Parameter(ctorch.tensor(p, dtype=dt, device=device)) for p in p0]


def _steps(opt, params, grads_seq, device):
    for grads in grads_seq:
        for p, g in zip(params, grads):
            p.grad = ctorch.tensor(g, dtype=p.dtype, device=device)
        opt.step()


@pytest.mark.parametrize("name,kw", CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_trajectory(device, name, kw, dtype):
    ref, keys, _ = OPTIMIZERS[name]
    p0, grads = _data(10)
    params = _params(p0, device, dtype)
    opt = getattr(optim, name)(params, **kw)
    _steps(opt, params, grads, device)
    extra = {"ax": []} if name == "ASGD" else {}
    for p, e in zip(params, ref(p0, grads, **kw, **extra)):
        np.testing.assert_allclose(to_numpy(p).astype(np.float64), e, **TOLS[dtype])
    for p, e in zip(params, extra.get("ax", [])):  # ASGD's averages
        np.testing.assert_allclose(to_numpy(opt.state[p]["ax"]).astype(np.float64), e, **TOLS[dtype])
    state = opt.state[params[0]]
    assert list(state) == keys
    assert state["step"].item() == STEPS and state["step"].dtype == ctorch.float32 and state["step"].ndim == 0
    for key in keys[1:]:
        if state[key].ndim == 0:  # mu_product, eta, mu: float32 like step, ASGD's on the param's device
            assert state[key].dtype == ctorch.float32
            assert state[key].device.type == (device if name == "ASGD" else "cpu")
        else:
            assert state[key].dtype == params[0].dtype and tuple(state[key].shape) == SHAPES[0]
            assert state[key].device.type == device


@pytest.mark.parametrize("name", ["Adadelta", "NAdam", "Rprop", "ASGD"])
def test_non_contiguous_params(device, name):
    ref, _, kws = OPTIMIZERS[name]
    p0, grads = _data(11, 20)
    params = _params(p0, device, "float64", transposed=True)
    opt = getattr(optim, name)(params, **kws[-1])
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = ctorch.tensor(np.ascontiguousarray(g.T), device=device).t() if g.ndim == 2 else ctorch.tensor(
                g, device=device)
        opt.step()
    for p, e in zip(params, ref(p0, grads, **kws[-1])):
        np.testing.assert_allclose(to_numpy(p), e, **TOLS["float64"])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_params(device, dtype):
    p0, grads = _data(12, 10)
    for name, (ref, _, kws) in OPTIMIZERS.items():
        params = _params(p0, device, dtype)
        opt = getattr(optim, name)(params, **kws[0])
        _steps(opt, params, grads, device)
        for p, e in zip(params, ref(p0, grads, **kws[0])):
            np.testing.assert_allclose(to_numpy(p).astype(np.float64), e, rtol=0.05, atol=0.05, err_msg=name)
        assert opt.state[params[0]][OPTIMIZERS[name][1][-1]].dtype == getattr(ctorch, dtype)


@pytest.mark.parametrize("name,kw", [c for c in CASES if c.id.endswith("-1")])
def test_state_dict_round_trip(device, name, kw):
    """A fresh optimizer loading a mid-run state dict (through ctorch.save / ctorch.load) continues with the
    same trajectory, bit for bit."""
    p0, grads = _data(13, 30)
    params = _params(p0, device, "float32")
    opt = getattr(optim, name)(params, **kw)
    _steps(opt, params, grads[:15], device)
    sd = opt.state_dict()
    assert sorted(sd["state"]) == [0, 1, 2] and list(sd["state"][0]) == OPTIMIZERS[name][1]
    assert sd["param_groups"][0]["params"] == [0, 1, 2]
    buf = io.BytesIO()
    ctorch.save(sd, buf)
    buf.seek(0)
    params2 = [nn.Parameter(p.detach().clone()) for p in params]
    opt2 = getattr(optim, name)(params2, **kw)
    opt2.load_state_dict(ctorch.load(buf))
    assert opt2.param_groups[0]["params"] == params2
    for key, value in opt.state[params[0]].items():
        np.testing.assert_array_equal(to_numpy(opt2.state[params2[0]][key]), to_numpy(value))
    _steps(opt, params, grads[15:], device)
    _steps(opt2, params2, grads[15:], device)
    for p, q in zip(params, params2):
        np.testing.assert_array_equal(to_numpy(p), to_numpy(q))


def test_defaults_repr_and_param_groups():
    p = nn.Parameter(ctorch.zeros(2))
    assert optim.Adadelta([p]).defaults == {"lr": 1.0, "rho": 0.9, "eps": 1e-6, "weight_decay": 0, "maximize": False,
                                            "capturable": False, "foreach": None, "differentiable": False}
    assert optim.Rprop([p]).defaults["step_sizes"] == (1e-6, 50)
    assert optim.ASGD([p]).defaults["t0"] == 1e6 and optim.NAdam([p]).defaults["momentum_decay"] == 4e-3
    assert repr(optim.Adagrad([p], lr=0.5)) == (
        "Adagrad (\nParameter Group 0\n    differentiable: False\n    eps: 1e-10\n    foreach: None\n    fused: None\n"
        "    initial_accumulator_value: 0\n    lr: 0.5\n    lr_decay: 0\n    maximize: False\n    weight_decay: 0\n)")
    # Adagrad's state exists from construction (PyTorch creates it in __init__), sum filled with the initial value
    q = nn.Parameter(ctorch.ones(3))
    ada = optim.Adagrad([q], initial_accumulator_value=0.25)
    assert list(ada.state[q]) == ["step", "sum"] and to_numpy(ada.state[q]["sum"]).tolist() == [0.25] * 3
    # groups with their own options; a parameter without a gradient is left alone and gets no state
    a, b, c = (nn.Parameter(ctorch.ones(2)) for _ in range(3))
    opt = optim.RAdam([{"params": [a]}, {"params": [b, c], "lr": 0.5, "betas": (0.5, 0.9)}], lr=0.1)
    a.grad, b.grad = ctorch.ones(2), ctorch.full((2,), -1.0)
    opt.step()
    np.testing.assert_allclose(to_numpy(a), [0.9, 0.9])  # not rectified on step 1: param -= lr * m / bc1
    np.testing.assert_allclose(to_numpy(b), [1.5, 1.5])
    assert to_numpy(c).tolist() == [1.0, 1.0] and c not in opt.state


def test_closure_and_lr_tensor():
    p = nn.Parameter(ctorch.tensor([1.0, -2.0]))
    opt = optim.Adamax([p], lr=ctorch.tensor(0.1))

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 5.0
    np.testing.assert_allclose(to_numpy(p), [0.9, -1.9], rtol=1e-6)  # the first Adamax step moves by lr


@pytest.mark.parametrize("make,msg", [
    (lambda p: optim.Adagrad(p, lr=-0.1), "Invalid learning rate: -0.1"),
    (lambda p: optim.Adagrad(p, lr_decay=-1), "Invalid lr_decay value: -1"),
    (lambda p: optim.Adagrad(p, weight_decay=-0.5), "Invalid weight_decay value: -0.5"),
    (lambda p: optim.Adagrad(p, initial_accumulator_value=-2.0), "Invalid initial_accumulator_value value: -2.0"),
    (lambda p: optim.Adagrad(p, eps=-1e-10), "Invalid epsilon value: -1e-10"),
    (lambda p: optim.Adadelta(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: optim.Adadelta(p, rho=1.5), "Invalid rho value: 1.5"),
    (lambda p: optim.Adadelta(p, eps=-1.0), "Invalid epsilon value: -1.0"),
    (lambda p: optim.Adadelta(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.Adamax(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (lambda p: optim.Adamax(p, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (lambda p: optim.Adamax(p, eps=-1.0), "Invalid epsilon value: -1.0"),
    (lambda p: optim.NAdam(p, momentum_decay=-0.1), "Invalid momentum_decay value: -0.1"),
    (lambda p: optim.NAdam(p, weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    (lambda p: optim.RAdam(p, lr=-0.01), "Invalid learning rate: -0.01"),
    (lambda p: optim.RAdam(p, betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    (lambda p: optim.Rprop(p, etas=(1.0, 1.2)), "Invalid eta values: 1.0, 1.2"),
    (lambda p: optim.Rprop(p, etas=(0.5, 0.9)), "Invalid eta values: 0.5, 0.9"),
    (lambda p: optim.Rprop(p, lr=-1.0), "Invalid learning rate: -1.0"),
    (lambda p: optim.ASGD(p, lambd=-1e-4), "Invalid lambd value: -0.0001"),
    (lambda p: optim.ASGD(p, alpha=-0.75), "Invalid alpha value: -0.75"),
    (lambda p: optim.ASGD(p, weight_decay=-1.0), "Invalid weight_decay value: -1.0"),
    (lambda p: optim.ASGD(p, lr=ctorch.tensor([0.1, 0.2])), "Tensor lr must be 1-element"),
])
def test_argument_validation(make, msg):
    with pytest.raises(ValueError) as e:
        make([nn.Parameter(ctorch.zeros(2))])
    assert str(e.value) == msg


def test_step_errors():
    p = nn.Parameter(ctorch.zeros(2, dtype=ctorch.float64))
    opt = optim.NAdam([p])
    p.grad = ctorch.zeros(2, dtype=ctorch.float64)
    opt.state[p]["exp_avg"] = ctorch.zeros(2)  # float32 state for a float64 param
    with pytest.raises(RuntimeError, match="exp_avg\\[0\\] must have the dtype, shape and device of its parameter"):
        opt.step()
    with pytest.raises(ValueError, match="unknown optimizer kind 'lbfgs'"):
        ctorch._C._optim_step("lbfgs", [], [], [], [], [], 0.1)


# --- schedulers -----------------------------------------------------------------------------------------------
# Produced with the reference torch 2.15 (/work/torchref/venv/bin/python) running exactly the schedules of
# _more_schedule_sequences below (the same code with `import torch`); hard-coded because torch is absent
# where the tests run.
TORCH_SCHEDULES = {
    'multiplicative': [0.1, 0.09000000000000001, 0.07200000000000001, 0.06480000000000001, 0.05184000000000001,
                       0.04665600000000001, 0.03732480000000001, 0.03359232000000001],
    'constant': [0.05, 0.05, 0.05, 0.05, 0.1, 0.1, 0.1],
    'linear': [0.025, 0.038000000000000006, 0.051000000000000004, 0.064, 0.077, 0.09, 0.09, 0.09],
    'poly': [0.1, 0.06944444444444446, 0.04444444444444447, 0.02500000000000001, 0.011111111111111117,
             0.0027777777777777775, 0.0, 0.0, 0.0],
    'sequential': [0.010000000000000002, 0.04, 0.07, 0.1, 0.1, 0.08000000000000002, 0.06400000000000002, 0.1,
                   0.07500000000000001, 0.025000000000000015, 0.0, 0.024999999999999994],
    'chained': [0.010000000000000002, 0.009000000000000003, 0.08100000000000003, 0.07290000000000003,
                0.06561000000000003, 0.059049000000000025],
    'warm_restarts': [0.1, 0.0775, 0.032500000000000015, 0.1, 0.09397114317029975, 0.0775, 0.05500000000000001,
                      0.032500000000000015, 0.01602885682970026, 0.1, 0.09846666218300808, 0.09397114317029975,
                      0.08681980515339464, 0.0775, 0.06664685702961344, 0.05500000000000001],
    'warm_restarts1': [0.1, 0.08535533905932738, 0.05, 0.014644660940672627, 0.1, 0.08535533905932738, 0.05,
                       0.014644660940672627, 0.1],
    'cyclic': [[0.01, 0.039999999999999994, 0.06999999999999999, 0.09999999999999999, 0.055, 0.01,
                0.04000000000000003, 0.06999999999999999, 0.09999999999999999, 0.05500000000000005, 0.01,
                0.04000000000000003],
               [0.9, 0.8666666666666667, 0.8333333333333334, 0.8, 0.8500000000000001, 0.9, 0.8666666666666667,
                0.8333333333333334, 0.8, 0.85, 0.9, 0.8666666666666667]],
    'cyclic2': [0.02, 0.11000000000000001, 0.2, 0.11000000000000001, 0.02, 0.065, 0.11000000000000001, 0.065, 0.02,
                0.0425, 0.065, 0.0425, 0.02],
    'cyclic_exp': [[0.01, 0.05050000000000001, 0.0829, 0.04280500000000001, 0.01, 0.03657205000000001,
                    0.05782969000000001, 0.03152336050000001, 0.01],
                   [0.95, 0.8374999999999999, 0.7474999999999999, 0.8588749999999999, 0.95, 0.87618875,
                    0.8171397499999999, 0.8902128874999999, 0.95]],
    'cyclic_fn': [0.01, 0.0325, 0.04, 0.02125, 0.01, 0.0175, 0.02285714285714286, 0.015625],
    'closed': [0.05, 0.1, 0.05, 0.07500000000000001, 0.1, 0.08750000000000001, 0.08944271909999159,
               0.0632455532033676, 0.0, 0.08535533905932738, 0.08535533905932738, 0.09924038765061041, 0.05,
               0.06294095225512604, 0.025000000000000012],
    'cyclic_sd_keys': ['_get_lr_called_within_step', '_is_initial', '_last_lr', '_scale_fn_custom', '_step_count',
                       'base_lrs', 'base_momentums', 'cycle_momentum', 'gamma', 'last_epoch', 'max_lrs',
                       'max_momentums', 'mode', 'scale_mode', 'step_ratio', 'total_size', 'use_beta1'],
    'sequential_sd_keys': ['_last_lr', '_milestones', '_schedulers', 'last_epoch'],
    'sequential_sd_inner': [['_get_lr_called_within_step', '_is_initial', '_last_lr', '_step_count', 'base_lrs',
                             'factor', 'last_epoch', 'total_iters'],
                            ['_get_lr_called_within_step', '_is_initial', '_last_lr', '_step_count', 'base_lrs',
                             'gamma', 'last_epoch']],
    'sequential_resume': [0.1, 0.05, 0.025, 0.0125],
}


def _more_schedule_sequences(torch):
    S = torch.optim.lr_scheduler

    def run(make, n, opt_kind="SGD", **okw):
        p = torch.nn.Parameter(torch.zeros(1))
        opt = getattr(torch.optim, opt_kind)([p], lr=0.1, **okw)
        s = make(opt)
        lrs, moms = [], []
        for _ in range(n):
            lrs.append(s.get_last_lr()[0])
            g = opt.param_groups[0]
            moms.append(g["betas"][0] if "betas" in g else g.get("momentum"))
            opt.step()
            s.step()
        return lrs, moms

    out = {}
    out["multiplicative"] = run(lambda o: S.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 0.8), 8)[0]
    out["constant"] = run(lambda o: S.ConstantLR(o, factor=0.5, total_iters=4), 7)[0]
    out["linear"] = run(lambda o: S.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=5), 8)[0]
    out["poly"] = run(lambda o: S.PolynomialLR(o, total_iters=6, power=2.0), 9)[0]
    out["sequential"] = run(lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=3),
                                                         S.ExponentialLR(o, gamma=0.8),
                                                         S.CosineAnnealingLR(o, T_max=3)], milestones=[4, 7]), 12)[0]
    out["chained"] = run(lambda o: S.ChainedScheduler([S.ConstantLR(o, factor=0.1, total_iters=2),
                                                       S.ExponentialLR(o, gamma=0.9)]), 6)[0]
    out["warm_restarts"] = run(lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01), 16)[0]
    out["warm_restarts1"] = run(lambda o: S.CosineAnnealingWarmRestarts(o, T_0=4), 9)[0]
    out["cyclic"] = list(run(lambda o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, step_size_down=2), 12,
                             momentum=0.9))
    out["cyclic2"] = run(lambda o: S.CyclicLR(o, [0.02], 0.2, step_size_up=2, mode="triangular2",
                                             cycle_momentum=False), 13)[0]
    out["cyclic_exp"] = list(run(lambda o: S.CyclicLR(o, 0.01, 0.1, step_size_up=2, mode="exp_range", gamma=0.9,
                                                      base_momentum=0.7, max_momentum=0.95), 9, "Adam"))
    out["cyclic_fn"] = run(lambda o: S.CyclicLR(o, 0.01, 0.1, step_size_up=2, scale_fn=lambda x: 1 / (x + 1),
                                               scale_mode="iterations", cycle_momentum=False), 8)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        closed = []
        for make, epochs in [(lambda o: S.ConstantLR(o, factor=0.5, total_iters=3), [1, 4, 2]),
                             (lambda o: S.LinearLR(o, start_factor=0.5, total_iters=4), [2, 7, 3]),
                             (lambda o: S.PolynomialLR(o, total_iters=5, power=0.5), [1, 3, 9]),
                             (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=3), [0.5, 3.5, 9, 1]),
                             (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3), [7.25, 2])]:
            p = torch.nn.Parameter(torch.zeros(1))
            opt = torch.optim.SGD([p], lr=0.1)
            s = make(opt)
            for e in epochs:
                s.step(e)
                closed.append(s.get_last_lr()[0])
        out["closed"] = closed
    # state dicts: keys, and a copy resumed mid-run continuing identically
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
    s = S.CyclicLR(opt, 0.01, 0.1, step_size_up=3)
    out["cyclic_sd_keys"] = sorted(s.state_dict())
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=0.1)
    s = S.SequentialLR(opt, [S.ConstantLR(opt, factor=0.5, total_iters=2), S.ExponentialLR(opt, gamma=0.5)], [3])
    for _ in range(2):
        opt.step()
        s.step()
    sd = s.state_dict()
    out["sequential_sd_keys"] = sorted(sd)
    out["sequential_sd_inner"] = [sorted(x) for x in sd["_schedulers"]]
    p2 = torch.nn.Parameter(torch.zeros(1))
    opt2 = torch.optim.SGD([p2], lr=0.1)
    s2 = S.SequentialLR(opt2, [S.ConstantLR(opt2, factor=0.5, total_iters=2), S.ExponentialLR(opt2, gamma=0.5)],
                        [3])
    s2.load_state_dict(sd)
    opt2.param_groups[0]["lr"] = opt.param_groups[0]["lr"]
    resumed = []
    for _ in range(4):
        opt2.step()
        s2.step()
        resumed.append(s2.get_last_lr()[0])
    out["sequential_resume"] = resumed
    return out


def test_scheduler_sequences_match_pytorch():
    got = _more_schedule_sequences(ctorch)
    for key, expected in TORCH_SCHEDULES.items():
        assert got[key] == expected, key  # the same float operations give the same numbers


def test_scheduler_closed_forms():
    """The closed forms, written out: LinearLR, PolynomialLR and the warm restarts' cosine."""
    S = optim.lr_scheduler
    opt = optim.SGD([nn.Parameter(ctorch.zeros(1))], lr=0.2)
    lin = S.LinearLR(opt, start_factor=0.5, end_factor=1.0, total_iters=4)
    lrs = []
    for _ in range(6):
        lrs.append(lin.get_last_lr()[0])
        opt.step()
        lin.step()
    np.testing.assert_allclose(lrs, [0.2 * (0.5 + 0.5 * min(e, 4) / 4) for e in range(6)], rtol=1e-12)
    opt = optim.SGD([nn.Parameter(ctorch.zeros(1))], lr=0.2)
    poly = S.PolynomialLR(opt, total_iters=4, power=3.0)
    lrs = []
    for _ in range(6):
        lrs.append(poly.get_last_lr()[0])
        opt.step()
        poly.step()
    np.testing.assert_allclose(lrs, [0.2 * (1 - min(e, 4) / 4) ** 3 for e in range(6)], rtol=1e-12, atol=1e-15)
    opt = optim.SGD([nn.Parameter(ctorch.zeros(1))], lr=0.2)
    warm = S.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.02)
    lrs = []
    for _ in range(7):
        lrs.append(warm.get_last_lr()[0])
        opt.step()
        warm.step()
    t_cur, t_i = [0, 1, 0, 1, 2, 3, 0], [2, 2, 4, 4, 4, 4, 8]
    np.testing.assert_allclose(lrs, [0.02 + 0.18 * (1 + math.cos(math.pi * c / i)) / 2 for c, i in zip(t_cur, t_i)],
                               rtol=1e-12)


def test_scheduler_errors():
    S = optim.lr_scheduler
    opt = optim.SGD([nn.Parameter(ctorch.zeros(1))], lr=0.1)
    other = optim.SGD([nn.Parameter(ctorch.zeros(1))], lr=0.1)
    cases = [
        (lambda: S.ConstantLR(opt, factor=1.5), ValueError,
         "Constant multiplicative factor expected to be between 0 and 1."),
        (lambda: S.LinearLR(opt, start_factor=0), ValueError,
         "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."),
        (lambda: S.LinearLR(opt, end_factor=1.5), ValueError,
         "Ending multiplicative factor expected to be between 0 and 1."),
        (lambda: S.MultiplicativeLR(opt, 0.5), TypeError, "lr_lambda should be a function, but got float"),
        (lambda: S.MultiplicativeLR(opt, [lambda e: 1, lambda e: 1]), ValueError, "Expected 1 lr_lambdas, but got 2"),
        (lambda: S.CosineAnnealingWarmRestarts(opt, T_0=0), ValueError, "Expected positive integer T_0, but got 0"),
        (lambda: S.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=1.5), ValueError,
         "Expected integer T_mult >= 1, but got 1.5"),
        (lambda: S.CosineAnnealingWarmRestarts(opt, T_0=2, eta_min="0"), ValueError,
         "Expected float or int eta_min, but got 0 of type <class 'str'>"),
        (lambda: S.CosineAnnealingWarmRestarts(opt, T_0=2).step(-1), ValueError,
         "Expected non-negative epoch, but got -1"),
        (lambda: S.CyclicLR(opt, 0.01, 0.1, mode="square"), ValueError, "mode is invalid and scale_fn is None"),
        (lambda: S.CyclicLR(optim.Adagrad([nn.Parameter(ctorch.zeros(1))]), 0.01, 0.1), ValueError,
         "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"),
        (lambda: S.CyclicLR(3, 0.01, 0.1), TypeError, "int is not an Optimizer"),
        (lambda: S.CyclicLR(opt, [0.01, 0.02], 0.1), ValueError,
         "base_lr must have the same length as optimizer.param_groups. base_lr has 2 values, param_groups has 1."),
        (lambda: S.SequentialLR(opt, [], []), ValueError, "SequentialLR expects at least one scheduler, but got no "
                                                           "scheduler."),
        (lambda: S.SequentialLR(opt, [S.ConstantLR(opt), S.ConstantLR(opt)], []), ValueError,
         "Sequential Schedulers expects number of schedulers provided to be one more than the number of milestone "
         "points, but got number of schedulers 2 and the number of milestones to be equal to 0"),
        (lambda: S.SequentialLR(opt, [S.ReduceLROnPlateau(opt)], []), ValueError,
         "SequentialLR does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
         "specified when calling `step`, but got one at index 0 in the given schedulers sequence."),
        (lambda: S.ChainedScheduler([]), ValueError,
         "ChainedScheduler expects at least one scheduler to be chained, but got no scheduler."),
        (lambda: S.ChainedScheduler([S.ConstantLR(opt), 3]), TypeError,
         "ChainedScheduler at index 1 should have `optimizer` as its attribute."),
    ]
    for make, exc, msg in cases:
        with pytest.raises(exc) as e:
            make()
        assert str(e.value) == msg
    with pytest.raises(ValueError, match="^ChainedScheduler expects all schedulers to belong to the same optimizer, "
                                         "but got scheduler ConstantLR at index 1 has SGD \\("):
        S.ChainedScheduler([S.ConstantLR(opt), S.ConstantLR(other)])


def test_scheduler_state_dicts():
    S = optim.lr_scheduler
    opt = optim.SGD([nn.Parameter(ctorch.zeros(1))], lr=0.1)
    mult = S.MultiplicativeLR(opt, lambda e: 0.5)
    opt.step()
    mult.step()
    sd = mult.state_dict()
    assert sd["lr_lambdas"] == [None] and "optimizer" not in sd and sd["last_epoch"] == 1
    assert mult.get_last_lr() == [0.05]

    class Scale:  # a callable object: its __dict__ is saved and restored
        def __init__(self, f):
            self.f = f

        def __call__(self, epoch):
            return self.f

    opt = optim.SGD([nn.Parameter(ctorch.zeros(1))], lr=0.1, momentum=0.9)
    cyc = S.CyclicLR(opt, 0.01, 0.1, step_size_up=2, scale_fn=Scale(0.5))
    sd = cyc.state_dict()
    assert sd["_scale_fn_custom"] == {"f": 0.5} and "_scale_fn_ref" not in sd
    cyc2 = S.CyclicLR(optim.SGD([nn.Parameter(ctorch.zeros(1))], lr=0.1, momentum=0.9), 0.01, 0.1, step_size_up=2,
                      scale_fn=Scale(1.0))
    cyc2.load_state_dict(sd)
    assert cyc2._scale_fn_custom.f == 0.5 and cyc2.scale_fn(3) == 0.5
    chained = S.ChainedScheduler([S.ConstantLR(opt, total_iters=2), S.ExponentialLR(opt, 0.5)])
    sd = chained.state_dict()
    assert sorted(sd) == ["_last_lr", "_schedulers"] and len(sd["_schedulers"]) == 2


# A 0-d float32 tensor lr: PyTorch does the scalar arithmetic on it as tensor ops, so each result
# (lr * weight_decay, lr / bias_correction, ...) is rounded to float32 even for float64 parameters.
_R = _f32
_L = _R(0.1)


def _one_step(make, grads):
    p = ctorch.tensor([0.7, -1.3, 2.2], dtype=ctorch.float64, requires_grad=True)
    opt = make([p])
    for g in grads:
        p.grad = ctorch.tensor(g, dtype=ctorch.float64)
        opt.step()
    return to_numpy(p), opt


P0, G = np.array([0.7, -1.3, 2.2]), np.array([0.5, 0.25, -2.0])


def _expect_adamw():
    decay = _R(1 - _R(_L * _R(0.3)))
    step_size = _R(_L / _R(1 - 0.9))
    m, v = 0.1 * G, 0.01 * G * G
    return P0 * decay - step_size * (m / (np.sqrt(v) / math.sqrt(1 - 0.99) + 1e-8))


def _expect_adamax():
    return P0 - _R(_L / _R(1 - 0.9)) * (0.1 * G) / (np.abs(G) + 1e-8)


def _expect_adagrad():  # the second step's clr = lr / (1 + lr_decay) is rounded
    p = P0 - _L * G / (np.sqrt(G * G) + 1e-10)
    return p - _R(_L / 1.5) * G / (np.sqrt(2 * G * G) + 1e-10)


def _expect_nadam():
    mu, mu_next = (0.9 * (1 - 0.5 * 0.96 ** (k * 4e-3)) for k in (1, 2))
    prod = _R(mu)  # mu_product: a float32 state
    x0 = _R(_R(-_L * _R(1 - mu)) / _R(1 - prod))
    x1 = _R(_R(-_L * _R(mu_next)) / _R(1 - prod * mu_next))
    denom = np.sqrt(0.001 * G * G / (1 - 0.999)) + 1e-8
    return P0 + x0 * G / denom + x1 * (0.1 * G) / denom


@pytest.mark.parametrize("make,grads,expect", [
    (lambda p: optim.AdamW(p, lr=ctorch.tensor(0.1), betas=(0.9, 0.99), weight_decay=0.3), [G], _expect_adamw),
    (lambda p: optim.Adamax(p, lr=ctorch.tensor(0.1), betas=(0.9, 0.99)), [G], _expect_adamax),
    (lambda p: optim.Adagrad(p, lr=ctorch.tensor(0.1), lr_decay=0.5), [G, G], _expect_adagrad),
    (lambda p: optim.NAdam(p, lr=ctorch.tensor(0.1)), [G], _expect_nadam),
])
def test_tensor_lr_scalar_math_in_float32(make, grads, expect):
    p, _ = _one_step(make, grads)
    np.testing.assert_allclose(p, expect(), rtol=1e-13, atol=0)


def test_asgd_eta_from_tensor_lr_in_float32():
    _, opt = _one_step(lambda p: optim.ASGD(p, lr=ctorch.tensor(0.1), lambd=0.3, alpha=0.75), [G])
    base = _R(1 + _R(_R(_R(0.3) * _L) * 1.0))
    eta = _R(_L / _R(base ** 0.75))
    assert next(iter(opt.state.values()))["eta"].item() == eta


def test_asgd_eta_mu_rounded_to_default_dtype_after_load():
    # load_state_dict casts eta and mu to the float64 parameter; PyTorch's new values are still made
    # with torch.as_tensor(python float), so they keep float32's rounding
    p, opt = _one_step(lambda p: optim.ASGD(p, lr=0.1, lambd=0.3, t0=1), [G])
    q = ctorch.tensor(p, dtype=ctorch.float64, requires_grad=True)
    opt2 = optim.ASGD([q], lr=0.1, lambd=0.3, t0=1)
    opt2.load_state_dict(opt.state_dict())
    q.grad = ctorch.tensor(G, dtype=ctorch.float64)
    opt2.step()
    opt2.step()
    state = opt2.state[q]
    assert state["eta"].dtype == ctorch.float64 and state["mu"].dtype == ctorch.float64
    assert state["eta"].item() == _R(0.1 / (1 + 0.3 * 0.1 * 3) ** 0.75)
    assert state["mu"].item() == _R(1 / 2)
    opt2.step()
    assert state["mu"].item() == _R(1 / 3) != 1 / 3


def test_adafactor_tensor_lr_in_float32():
    p = ctorch.tensor(P0, dtype=ctorch.float64, requires_grad=True)
    opt = optim.Adafactor([p], lr=ctorch.tensor(0.1), weight_decay=0.5)
    p.grad = ctorch.tensor(G, dtype=ctorch.float64)
    opt.step()
    # step 1 of a vector: variance = grad^2, so the update is sign(grad) (norm 1 per element, d = 1)
    alpha = _R(_R(max(1e-3, np.linalg.norm(P0) / math.sqrt(3))) * _L)
    np.testing.assert_allclose(to_numpy(p), P0 * _R(1 - _R(_L * 0.5)) - alpha * np.sign(G), rtol=1e-14)


def test_muon_adjusted_lr_order_and_tensor_lr():
    # PyTorch: lr * (0.2 * sqrt(max(A, B))), one rounding to float32 for a tensor lr
    def run(lr):
        w = ctorch.tensor(np.eye(4, 9) + 0.1, dtype=ctorch.float64, requires_grad=True)
        opt = optim.Muon([w], lr=lr, weight_decay=0, adjust_lr_fn="match_rms_adamw")
        w.grad = ctorch.tensor(np.arange(36.0).reshape(4, 9) / 36 - 0.4, dtype=ctorch.float64)
        opt.step()
        return to_numpy(w) - (np.eye(4, 9) + 0.1)
    ratio = 0.2 * math.sqrt(9)
    np.testing.assert_allclose(run(ctorch.tensor(0.1)) / run(_L), _R(_L * ratio) / (_L * ratio), rtol=1e-12)


@pytest.mark.parametrize("name", ["Adam", "Adagrad", "ASGD", "NAdam", "Adafactor"])
def test_scalar_states_float64_under_float64_default(name):
    # PyTorch's _get_scalar_dtype(): the 0-d states are float64 when the default dtype is
    old = ctorch.get_default_dtype()
    ctorch.set_default_dtype(ctorch.float64)
    try:
        p = ctorch.tensor([1.0, 2.0], requires_grad=True)
        p.grad = ctorch.tensor([0.3, -0.2])
        opt = getattr(optim, name)([p], lr=0.1)
        opt.step()
        opt.step()
        scalars = {k: v for k, v in opt.state[p].items() if v.dim() == 0}
        assert "step" in scalars and all(v.dtype == ctorch.float64 for v in scalars.values())
        if name == "ASGD":  # eta is computed in double, not rounded to float32
            assert scalars["eta"].item() == 0.1 / (1 + 1e-4 * 0.1 * 2) ** 0.75
    finally:
        ctorch.set_default_dtype(old)


@pytest.mark.parametrize("name,what", [
    ("Adam", "params and state_steps"), ("RMSprop", "params and state_steps"),
    ("ASGD", "params, mus, etas, and state_steps"), ("NAdam", "params, mu_products and state_steps"),
    ("Adadelta", "params and state_steps"),
])
def test_capturable_on_cpu_raises(name, what):
    p = nn.Parameter(ctorch.ones(2))
    p.grad = ctorch.ones(2)
    opt = getattr(optim, name)([p], capturable=True)
    devices = "['cuda', 'xpu', 'hpu', 'privateuseone'" + ("]" if name == "Adadelta" else ", 'xla']")
    with pytest.raises(AssertionError, match=re.escape(f"If capturable=True, {what} must be on supported devices: "
                                                       f"{devices}.")):
        opt.step()
    assert to_numpy(p).tolist() == [1.0, 1.0]


def test_adam_tensor_betas_stay_tensors_in_param_groups():
    p = nn.Parameter(ctorch.ones(2))
    opt = optim.Adam([p], betas=(ctorch.tensor(0.9), ctorch.tensor([0.99])))
    b1, b2 = opt.state_dict()["param_groups"][0]["betas"]
    assert isinstance(b1, ctorch.Tensor) and isinstance(b2, ctorch.Tensor) and b2.dim() == 0
    p.grad = ctorch.ones(2)
    opt.step()  # the first step moves each element by lr
    np.testing.assert_allclose(to_numpy(p), [0.999, 0.999], rtol=1e-6)
