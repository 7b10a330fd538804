"""ctorch.optim.LBFGS against a NumPy re-implementation of PyTorch's algorithm (fixed step and strong Wolfe,
maximize, short histories) on the Rosenbrock function, its state and errors; optim.swa_utils (AveragedModel,
the avg_fn factories, SWALR, update_bn) against NumPy and numbers produced by the reference PyTorch."""
import copy
import math

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
import ctorch.optim as optim
from ctorch.optim import swa_utils
from conftest import to_numpy

X0 = np.array([-1.2, 1.0, 0.5])  # the start; a lives at X0[:1], b at X0[1:]


# --- NumPy reference: PyTorch's L-BFGS on one flat float64 vector ----------------------------------------------
def _rosenbrock(x):
    """(f, gradient) of sum(100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2)."""
    r = x[1:] - x[:-1] ** 2
    g = np.zeros_like(x)
    g[:-1] = -400 * x[:-1] * r - 2 * (1 - x[:-1])
    g[1:] += 200 * r
    return float(np.sum(100 * r ** 2 + (1 - x[:-1]) ** 2)), g


def _np_cubic(x1, f1, g1, x2, f2, g2, bounds=None):
    lo, hi = bounds if bounds is not None else sorted((x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    sq = d1 * d1 - g1 * g2
    if not sq >= 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(sq)
    if x1 <= x2:
        m = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        m = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(m, lo), hi)


def _np_wolfe(fg, x, t, d, f, g, gtd, max_ls, c1=1e-4, c2=0.9, tol=1e-9):
    """Bracketing then zoom; each bracket entry is [t, f, g, gtd]. Returns f, g, t, evaluations."""
    def at(s):
        fn, gn = fg(x + s * d)
        return [s, fn, gn, float(gn @ d)]

    prev, new, n, it, done = [0, f, g, gtd], at(t), 1, 0, False
    br = None
    while it < max_ls:
        if new[1] > f + c1 * new[0] * gtd or (it > 1 and new[1] >= prev[1]):
            br = [prev, new]
            break
        if abs(new[3]) <= -c2 * gtd:
            br, done = [new], True
            break
        if new[3] >= 0:
            br = [prev, new]
            break
        s = _np_cubic(prev[0], prev[1], prev[3], new[0], new[1], new[3], (new[0] + 0.01 * (new[0] - prev[0]),
                                                                         new[0] * 10))
        prev, new, n, it = new, at(s), n + 1, it + 1
    if it == max_ls:
        br = [[0, f, g, gtd], new]
    insuf = False
    lo, hi = (0, 1) if br[0][1] <= br[-1][1] else (1, 0)
    while not done and it < max_ls:
        if abs(br[1][0] - br[0][0]) * np.abs(d).max() < tol:
            break
        s = _np_cubic(*br[0][:2], br[0][3], *br[1][:2], br[1][3])
        top, bot = max(br[0][0], br[1][0]), min(br[0][0], br[1][0])
        eps = 0.1 * (top - bot)
        near_end = min(top - s, s - bot) < eps
        move = near_end and (insuf or not bot < s < top)  # a second time near an end, or outside
        insuf = near_end and not move
        if move:
            s = top - eps if abs(s - top) < abs(s - bot) else bot + eps
        new, n, it = at(s), n + 1, it + 1
        if new[1] > f + c1 * s * gtd or new[1] >= br[lo][1]:
            br[hi] = new
            lo, hi = (0, 1) if br[0][1] <= br[1][1] else (1, 0)
        else:
            if abs(new[3]) <= -c2 * gtd:
                done = True
            elif new[3] * (br[hi][0] - br[lo][0]) >= 0:
                br[hi] = br[lo]
            br[lo] = new
    return br[lo][1], br[lo][2], br[lo][0], n


def _np_lbfgs_step(x, st, sign, lr=1.0, max_iter=20, history_size=100, wolfe=False, tol_grad=1e-7, tol_change=1e-9):
    """One LBFGS.step(closure) minimising the Rosenbrock function (the closure returns sign times it; with
    sign -1 the optimizer maximises): updates x in place and the state dict st; returns the closure's first
    loss."""
    fg = _rosenbrock
    max_eval = max_iter * 5 // 4
    f, g = fg(x)
    st["func_evals"] = st.get("func_evals", 0) + 1
    st.setdefault("n_iter", 0)
    evals, first = 1, sign * f
    if np.abs(g).max() <= tol_grad:
        return first
    for n_iter in range(1, max_iter + 1):
        st["n_iter"] += 1
        if st["n_iter"] == 1:
            d = -g
            st.update(dirs=[], stps=[], ro=[], H=1.0)
        else:
            y, s = g - st["prev_g"], st["d"] * st["t"]
            ys = float(y @ s)
            if ys > 1e-10:
                if len(st["dirs"]) == history_size:
                    del st["dirs"][0], st["stps"][0], st["ro"][0]
                st["dirs"].append(y)
                st["stps"].append(s)
                st["ro"].append(1.0 / ys)
                st["H"] = ys / float(y @ y)
            q, al = -g, {}
            for i in reversed(range(len(st["dirs"]))):
                al[i] = float(st["stps"][i] @ q) * st["ro"][i]
                q = q - al[i] * st["dirs"][i]
            d = q * st["H"]
            for i in range(len(st["dirs"])):
                d = d + (al[i] - float(st["dirs"][i] @ d) * st["ro"][i]) * st["stps"][i]
        st["prev_g"], prev_f = g.copy(), f
        t = min(1.0, 1.0 / np.abs(g).sum()) * lr if st["n_iter"] == 1 else lr
        st["d"], st["t"] = d, t
        gtd = float(g @ d)
        if gtd > -tol_change:
            break
        n = 0
        if wolfe:
            f, g, t, n = _np_wolfe(fg, x.copy(), t, d, f, g, gtd, max_eval - evals)
            x += t * d
        else:
            x += t * d
            if n_iter != max_iter:
                f, g = fg(x)
                n = 1
        st["t"] = t
        evals += n
        st["func_evals"] += n
        if n_iter == max_iter or evals >= max_eval or (n and np.abs(g).max() <= tol_grad):
            break
        if np.abs(d * t).max() <= tol_change or abs(f - prev_f) < tol_change:
            break
    return first


def _lbfgs_problem(device="cpu", dtype=ctorch.float64, maximize=False, **kw):
    a = nn.Parameter(ctorch.tensor(X0[:1], dtype=dtype, device=device))
    b = nn.Parameter(ctorch.tensor(X0[1:], dtype=dtype, device=device))
    opt = optim.LBFGS([a, b], maximize=maximize, **kw)
    sign = -1.0 if maximize else 1.0

    def closure():
        opt.zero_grad()
        x = ctorch.cat([a, b])
        f = sign * (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
        f.backward()
        return f

    return a, b, opt, closure


# --- LBFGS -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [
    {},
    {"line_search_fn": "strong_wolfe"},
    {"line_search_fn": "strong_wolfe", "maximize": True, "history_size": 3},
    {"lr": 0.1, "history_size": 2, "max_iter": 10},
    {"max_iter": 1},
    {"max_iter": 1, "line_search_fn": "strong_wolfe"},
], ids=["fixed", "wolfe", "wolfe-max-hist3", "lr0.1-hist2", "iter1", "iter1-wolfe"])
def test_lbfgs_trajectory_matches_numpy(kw):
    # 3 steps of up to 6 iterations: after ~20 strong-Wolfe iterations on Rosenbrock, rounding differences of
    # the dot products grow past 1e-10
    a, b, opt, closure = _lbfgs_problem(max_iter=kw.get("max_iter", 6), **{k: v for k, v in kw.items()
                                                                             if k != "max_iter"})
    x, st = X0.copy(), {}
    np_kw = {"lr": kw.get("lr", 1.0), "max_iter": kw.get("max_iter", 6), "history_size": kw.get("history_size", 100),
             "wolfe": "line_search_fn" in kw}
    sign = -1.0 if kw.get("maximize") else 1.0
    for _ in range(3):
        loss = opt.step(closure)
        expected = _np_lbfgs_step(x, st, sign, **np_kw)
        assert abs(loss.item() - expected) <= 1e-10 * max(1.0, abs(expected))
        np.testing.assert_allclose(np.concatenate([to_numpy(a), to_numpy(b)]), x, rtol=1e-10, atol=1e-12)
    state = opt.state[a]
    assert set(state) == {"func_evals", "n_iter", "al", "d", "t", "old_dirs", "old_stps", "ro", "H_diag",
                          "prev_flat_grad", "prev_loss"}
    assert (state["func_evals"], state["n_iter"]) == (st["func_evals"], st["n_iter"])
    assert len(state["old_dirs"]) == len(st["dirs"]) <= np_kw["history_size"]
    np.testing.assert_allclose(to_numpy(state["d"]), st["d"], rtol=1e-8, atol=1e-12)
    assert b not in opt.state  # the whole state lives under the first parameter


def test_lbfgs_float32_and_defaults(device):
    a, b, opt, closure = _lbfgs_problem(device, ctorch.float32, line_search_fn="strong_wolfe")
    assert opt.defaults == {"lr": 1, "max_iter": 20, "max_eval": 25, "tolerance_grad": 1e-7,
                            "tolerance_change": 1e-9, "history_size": 100, "line_search_fn": "strong_wolfe",
                            "maximize": False}
    opt.param_groups[0].update(max_iter=4, max_eval=5)
    x, st = X0.copy(), {}
    first = opt.step(closure)
    _np_lbfgs_step(x, st, 1.0, wolfe=True, max_iter=4)
    assert first.dtype == ctorch.float32 and abs(first.item() - 49.2) < 1e-5
    # float32 rounding grows quickly on an ill-conditioned problem: a few iterations only
    np.testing.assert_allclose(np.concatenate([to_numpy(a), to_numpy(b)]), x, atol=1e-4)
    state = opt.state[a]
    assert state["d"].dtype == ctorch.float32 and state["d"].device.type == device
    opt.param_groups[0].update(max_iter=20, max_eval=25)
    for _ in range(4):
        opt.step(closure)
    np.testing.assert_allclose(np.concatenate([to_numpy(a), to_numpy(b)]), np.ones(3), atol=1e-3)


def test_lbfgs_state_dict_round_trip():
    a, b, opt, closure = _lbfgs_problem(line_search_fn="strong_wolfe", max_iter=4)
    opt.step(closure)
    saved = copy.deepcopy(opt.state_dict())
    assert list(saved["state"]) == [0] and saved["param_groups"][0]["params"] == [0, 1]
    a2, b2, opt2, closure2 = _lbfgs_problem(line_search_fn="strong_wolfe", max_iter=4)
    with ctorch.no_grad():
        a2.copy_(a)
        b2.copy_(b)
    opt2.load_state_dict(saved)
    opt.step(closure)
    opt2.step(closure2)
    np.testing.assert_array_equal(to_numpy(a2), to_numpy(a))
    np.testing.assert_array_equal(to_numpy(b2), to_numpy(b))


def test_lbfgs_converged_and_gradless_params():
    # at the optimum the first gradient is below tolerance_grad: one evaluation, no iteration, no state
    p = nn.Parameter(ctorch.ones(3, dtype=ctorch.float64))
    unused = nn.Parameter(ctorch.zeros(2, dtype=ctorch.float64))
    opt = optim.LBFGS([p, unused])

    def closure():
        opt.zero_grad()
        loss = ((p - 1) ** 2).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 0.0
    assert dict(opt.state[p]) == {"func_evals": 1, "n_iter": 0}
    with ctorch.no_grad():
        p.fill_(3.0)
    opt.step(closure)  # a quadratic: solved exactly, the gradless parameter untouched
    np.testing.assert_allclose(to_numpy(p), np.ones(3), atol=1e-12)
    np.testing.assert_array_equal(to_numpy(unused), np.zeros(2))


def test_lbfgs_errors():
    p = nn.Parameter(ctorch.ones(2))
    q = nn.Parameter(ctorch.ones(2))
    with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options \(parameter groups\)"):
        optim.LBFGS([{"params": [p]}, {"params": [q]}])
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.LBFGS([p], lr=-1)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        optim.LBFGS([p], lr=ctorch.ones(2))
    opt = optim.LBFGS([p])
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'closure'"):
        opt.step()
    opt = optim.LBFGS([p], line_search_fn="backtracking")

    def closure():
        opt.zero_grad()
        loss = (p ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


# --- swa_utils -------------------------------------------------------------------------------------------------
def _net(seed, device="cpu"):
    ctorch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).to(device)
    net.train()
    net(ctorch.randn(5, 3, device=device))  # moves the BatchNorm buffers off their initial values
    return net


def _arrays(module, buffers=False):
    return [to_numpy(t) for t in (list(module.parameters()) + (list(module.buffers()) if buffers else []))]


def test_averaged_model_swa(device):
    nets = [_net(s, device) for s in range(4)]
    swa = swa_utils.AveragedModel(nets[0])
    assert list(swa.state_dict()) == ["n_averaged", "module.0.weight", "module.0.bias", "module.1.weight",
                                      "module.1.bias", "module.1.running_mean", "module.1.running_var",
                                      "module.1.num_batches_tracked"]
    assert repr(swa).startswith("AveragedModel(\n  (module): Sequential(\n")
    assert swa.n_averaged.dtype == ctorch.int64 and swa.n_averaged.item() == 0
    for net in nets:
        swa.update_parameters(net)
    assert swa.n_averaged.item() == 4
    for got, *each in zip(_arrays(swa), *[_arrays(n) for n in nets]):
        np.testing.assert_allclose(got, np.mean(each, axis=0), rtol=1e-6, atol=1e-7)
    for got, last in zip(list(swa.module.buffers()), list(nets[-1].buffers())):  # buffers follow the last model
        np.testing.assert_array_equal(to_numpy(got), to_numpy(last))
    x = ctorch.randn(4, 3, device=device)
    swa.eval()
    assert swa(x).shape == (4, 2)


def test_averaged_model_ema_with_buffers():
    nets = [_net(s) for s in range(3)]
    ema = swa_utils.AveragedModel(nets[0], multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.75), use_buffers=True)
    per_tensor = swa_utils.AveragedModel(nets[0], avg_fn=swa_utils.get_ema_avg_fn(0.75), use_buffers=True)
    expected = _arrays(nets[0], buffers=True)
    for k, net in enumerate(nets):
        ema.update_parameters(net)
        per_tensor.update_parameters(net)
        if k:
            for i, cur in enumerate(_arrays(net, buffers=True)):
                mixed = expected[i] * 0.75 + cur * 0.25
                expected[i] = mixed.astype(cur.dtype) if cur.dtype.kind == "i" else mixed
    for model in (ema, per_tensor):
        for got, want in zip(_arrays(model.module, buffers=True), expected):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert ema.module[1].num_batches_tracked.dtype == ctorch.int64


def test_swa_avg_fns():
    avg, cur = ctorch.tensor([1.0, 2.0], dtype=ctorch.float64), ctorch.tensor([4.0, 8.0], dtype=ctorch.float64)
    np.testing.assert_allclose(to_numpy(swa_utils.get_swa_avg_fn()(avg, cur, ctorch.tensor(2))), [2.0, 4.0])
    np.testing.assert_allclose(to_numpy(swa_utils.get_ema_avg_fn(0.5)(avg, cur, 7)), [2.5, 5.0])
    avgs = [avg.clone(), cur.clone()]
    swa_utils.get_swa_multi_avg_fn()(avgs, [cur, avg], 3)
    np.testing.assert_allclose(to_numpy(avgs[0]), [1.75, 3.5])
    np.testing.assert_allclose(to_numpy(avgs[1]), [3.25, 6.5])
    ints = [ctorch.tensor([10, 20])]  # integer tensors: PyTorch's foreach calls refuse them, as here
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
        swa_utils.get_swa_multi_avg_fn()(ints, [ctorch.tensor([20, 41])], ctorch.tensor(1))
    with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must not be a floating"):
        swa_utils.get_swa_multi_avg_fn()(ints, [ctorch.tensor([20, 41])], 1)
    for factory in (swa_utils.get_ema_avg_fn, swa_utils.get_ema_multi_avg_fn):
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided. Please provide a value in \[0,1\]"):
            factory(1.5)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        swa_utils.AveragedModel(nn.Linear(2, 2), avg_fn=swa_utils.get_swa_avg_fn(),
                                multi_avg_fn=swa_utils.get_swa_multi_avg_fn())


# get_last_lr() over 5 steps for two groups (lr 0.5 and 0.1), from the reference PyTorch
SWALR_CASES = [
    ({"swa_lr": 0.05}, [[0.5, 0.1], [0.48898771616640957, 0.09877641290737885],
                        [0.45702882373436315, 0.0952254248593737], [0.40725168176580645, 0.08969463130731184],
                        [0.34452882373436317, 0.0827254248593737]]),
    ({"swa_lr": 0.05, "anneal_epochs": 3, "anneal_strategy": "linear"},
     [[0.5, 0.1], [0.35000000000000003, 0.08333333333333334], [0.2, 0.06666666666666668], [0.05, 0.05],
      [0.05, 0.05]]),
    ({"swa_lr": 0.05, "anneal_epochs": 0}, [[0.05, 0.05]] * 5),
]


@pytest.mark.parametrize("kw,expected", SWALR_CASES, ids=["cos", "linear", "no-anneal"])
def test_swalr(kw, expected):
    w, bias = nn.Parameter(ctorch.ones(2)), nn.Parameter(ctorch.ones(1))
    opt = optim.SGD([{"params": [w]}, {"params": [bias], "lr": 0.1}], lr=0.5)
    sched = swa_utils.SWALR(opt, **kw)
    got = []
    for _ in range(5):
        got.append(sched.get_last_lr())
        opt.step()
        sched.step()
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    state = sched.state_dict()
    assert sorted(state) == ["_anneal_strategy", "_get_lr_called_within_step", "_is_initial", "_last_lr",
                             "_step_count", "anneal_epochs", "base_lrs", "last_epoch"]
    sched.anneal_func = None
    sched.load_state_dict(state)
    assert sched.anneal_func(0.5) == (0.5 if kw.get("anneal_strategy") == "linear" else (1 - math.cos(0.5 * math.pi)) / 2)


def test_swalr_errors():
    opt = optim.SGD([{"params": [nn.Parameter(ctorch.ones(1))]}, {"params": [nn.Parameter(ctorch.ones(1))]}], lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got foo"):
        swa_utils.SWALR(opt, 0.1, anneal_strategy="foo")
    for bad in (-1, 1.5):
        with pytest.raises(ValueError, match=f"anneal_epochs must be equal or greater than 0, got {bad}"):
            swa_utils.SWALR(opt, 0.1, anneal_epochs=bad)
    with pytest.raises(ValueError, match="swa_lr must have the same length as optimizer.param_groups. swa_lr has 3 "
                                         "values, param_groups has 2."):
        swa_utils.SWALR(opt, [0.1, 0.2, 0.3])
    swa_utils.SWALR(opt, [0.1, 0.2])
    assert [g["swa_lr"] for g in opt.param_groups] == [0.1, 0.2]


def test_update_bn(device):
    net = _net(0, device)
    net.eval()
    rng = np.random.default_rng(0)
    data = [rng.standard_normal((4, 3)) for _ in range(3)]
    loader = [(ctorch.tensor(d, dtype=ctorch.float32), 0) for d in data[:2]] + [ctorch.tensor(data[2],
                                                                                              dtype=ctorch.float32)]
    swa_utils.update_bn(loader, net, device=device)
    assert not net.training and net[1].momentum == 0.1
    w, b = to_numpy(net[0].weight).astype(np.float64), to_numpy(net[0].bias).astype(np.float64)
    hidden = [d @ w.T + b for d in data]
    # momentum None during the pass: the plain average of the batch statistics
    np.testing.assert_allclose(to_numpy(net[1].running_mean), np.mean([h.mean(0) for h in hidden], axis=0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(net[1].running_var), np.mean([h.var(0, ddof=1) for h in hidden], axis=0),
                               rtol=1e-5, atol=1e-6)
    assert net[1].num_batches_tracked.item() == 3
    plain = nn.Linear(3, 2)
    swa_utils.update_bn([ctorch.ones(2, 3)], plain)  # no BatchNorm: nothing to do
