"""Training benchmarks: ctorch against PyTorch (when importable) in the same run.

1. A 784-512-512-10 MLP (ReLU), CrossEntropyLoss and SGD(momentum=0.9): ms per training step
   (zero_grad, forward, loss, backward, optimizer step) at batch 64 and 4096.
   On the GPU also with automatic mixed precision (autocast + GradScaler), PyTorch the same way.
2. The optimizer step alone: SGD(momentum) over 100 and 1000 parameter tensors of 1K and 64K
   elements, against PyTorch's foreach and fused SGD.

Runs on the GPU when ctorch has one, else on the CPU (PyTorch on the same device). Each case is
validated first (ctorch's result must match PyTorch's, or NumPy's when PyTorch is absent), warmed up,
synchronised, and timed as the median of several rounds.

    python3 benchmarks/bench_train.py [--quick | --smoke] [--json out.json] [--device cpu|cuda]
"""
import argparse
import json
import platform
import statistics
import sys
import time

import numpy as np

import ctorch

try:
    import torch  # noqa: F401  (the reference implementation, optional)
except ImportError:
    torch = None


def cuda_ok(mod):
    try:
        return bool(mod.cuda.is_available())
    except AttributeError:
        return False


def synchronize(mod, device):
    if device == "cuda":
        mod.cuda.synchronize()


def median_ms(fn, mod, device, number, rounds):
    """Median over `rounds` of the mean per-call time of `number` calls, in ms."""
    for _ in range(3):
        fn()
    synchronize(mod, device)
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        synchronize(mod, device)
        times.append((time.perf_counter() - t0) / number * 1e3)
    return statistics.median(times)


def device_name(device):
    if device == "cuda":
        try:
            return ctorch.cuda.get_device_name(0)
        except Exception:
            return "cuda"
    return f"{platform.processor() or platform.machine()} ({ctorch.get_num_threads()} threads)"


# --- the MLP step -------------------------------------------------------------------------------------
SIZES = [784, 512, 512, 10]


def init_weights(seed=0):
    rng = np.random.default_rng(seed)
    ws = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        bound = 1 / np.sqrt(fan_in)
        ws.append((rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32),
                   rng.uniform(-bound, bound, fan_out).astype(np.float32)))
    return ws


def build(mod, weights, device):
    nn = mod.nn
    layers = []
    for i, (w, b) in enumerate(weights):
        lin = nn.Linear(w.shape[1], w.shape[0])
        with mod.no_grad():
            lin.weight.copy_(mod.tensor(w))
            lin.bias.copy_(mod.tensor(b))
        layers.append(lin)
        if i < len(weights) - 1:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers).to(device)
    opt = mod.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return model, opt, nn.CrossEntropyLoss()


def make_step(model, opt, loss_fn, x, y):
    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def numpy_loss(weights, x, y):
    h = x
    for i, (w, b) in enumerate(weights):
        h = h @ w.T + b
        if i < len(weights) - 1:
            h = np.maximum(h, 0)
    h = h - h.max(1, keepdims=True)
    logp = h - np.log(np.exp(h).sum(1, keepdims=True))
    return -logp[np.arange(len(y)), y].mean()


def bench_mlp(device, batch, size, results):
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = rng.integers(0, 10, batch)
    weights = init_weights()
    ours = build(ctorch, weights, device)
    cx, cy = ctorch.tensor(x, device=device), ctorch.tensor(y, device=device)
    step = make_step(*ours, cx, cy)
    # validate: the first step's loss and the updated first-layer weight
    loss0 = step().item()
    ref = numpy_loss(weights, x.astype(np.float64), y)
    if not np.isclose(loss0, ref, rtol=1e-4):
        sys.exit(f"mlp batch {batch}: ctorch loss {loss0} != NumPy {ref}")
    row = {"case": f"mlp step b={batch}", "ctorch_ms": None, "torch_ms": None}
    if torch is not None:
        tdev = device if device == "cpu" or cuda_ok(torch) else None
        if tdev is not None:
            theirs = build(torch, weights, tdev)
            tstep = make_step(*theirs, torch.tensor(x, device=tdev), torch.tensor(y, device=tdev))
            tl = tstep().item()
            if not np.isclose(loss0, tl, rtol=1e-4):
                sys.exit(f"mlp batch {batch}: ctorch loss {loss0} != PyTorch {tl}")
            w_ours = ours[0][0].weight.detach().cpu().numpy()
            w_theirs = theirs[0][0].weight.detach().cpu().numpy()
            if not np.allclose(w_ours, w_theirs, rtol=1e-4, atol=1e-6):
                sys.exit(f"mlp batch {batch}: weights after one step differ from PyTorch")
            number = size["number"] or (5 if batch > 1000 else 20)
            row["torch_ms"] = median_ms(tstep, torch, tdev, number, size["rounds"])
    number = size["number"] or (5 if batch > 1000 else 20)
    row["ctorch_ms"] = median_ms(step, ctorch, device, number, size["rounds"])
    results.append(row)


def make_amp_step(mod, model, opt, loss_fn, x, y, device):
    scaler = mod.amp.GradScaler(device)

    def step():
        opt.zero_grad()
        with mod.autocast(device):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    return step


def bench_mlp_amp(device, batch, size, results):
    """The MLP step under autocast (float16 GEMMs) with a GradScaler; validated against NumPy's float32 loss
    and PyTorch's first AMP step at float16's tolerance."""
    rng = np.random.default_rng(batch + 1)
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = rng.integers(0, 10, batch)
    weights = init_weights()
    step = make_amp_step(ctorch, *build(ctorch, weights, device), ctorch.tensor(x, device=device),
                         ctorch.tensor(y, device=device), device)
    loss0 = step().item()
    ref = numpy_loss(weights, x.astype(np.float64), y)
    if not np.isclose(loss0, ref, rtol=2e-2):
        sys.exit(f"mlp amp batch {batch}: ctorch loss {loss0} != NumPy {ref}")
    number = size["number"] or (5 if batch > 1000 else 20)
    row = {"case": f"mlp amp step b={batch}", "ctorch_ms": None, "torch_ms": None}
    if torch is not None and cuda_ok(torch):
        tstep = make_amp_step(torch, *build(torch, weights, device), torch.tensor(x, device=device),
                              torch.tensor(y, device=device), device)
        tl = tstep().item()
        if not np.isclose(loss0, tl, rtol=2e-2):
            sys.exit(f"mlp amp batch {batch}: ctorch loss {loss0} != PyTorch {tl}")
        row["torch_ms"] = median_ms(tstep, torch, device, number, size["rounds"])
    row["ctorch_ms"] = median_ms(step, ctorch, device, number, size["rounds"])
    results.append(row)


# --- the optimizer step alone -----------------------------------------------------------------------
def bench_sgd(device, count, numel, size, results):
    rng = np.random.default_rng(count + numel)
    data = [rng.standard_normal(numel).astype(np.float32) for _ in range(count)]
    grads = [rng.standard_normal(numel).astype(np.float32) for _ in range(count)]

    def setup(mod, dev, **kw):
        params = [mod.nn.Parameter(mod.tensor(d, device=dev)) for d in data]
        for p, g in zip(params, grads):
            p.grad = mod.tensor(g, device=dev)
        return params, mod.optim.SGD(params, lr=0.01, momentum=0.9, **kw)

    params, opt = setup(ctorch, device)
    opt.step()
    opt.step()
    expected = data[0] - 0.01 * grads[0] - 0.01 * (0.9 * grads[0] + grads[0])
    if not np.allclose(params[0].detach().cpu().numpy(), expected, rtol=1e-5, atol=1e-6):
        sys.exit(f"sgd {count}x{numel}: ctorch differs from NumPy")
    number = size["number"] or (10 if count * numel >= 10**7 else 50)
    rounds = size["rounds"]
    row = {"case": f"sgd step {count} x {numel // 1024}K", "ctorch_ms": median_ms(opt.step, ctorch, device, number,
                                                                                 rounds)}
    if torch is not None:
        tdev = device if device == "cpu" or cuda_ok(torch) else None
        if tdev is not None:
            for label, kw in (("torch_foreach_ms", {"foreach": True}), ("torch_fused_ms", {"fused": True})):
                try:
                    tp, topt = setup(torch, tdev, **kw)
                    topt.step()
                    topt.step()
                    if not np.allclose(tp[0].detach().cpu().numpy(), expected, rtol=1e-5, atol=1e-6):
                        sys.exit(f"sgd {count}x{numel}: PyTorch ({label}) differs")
                    row[label] = median_ms(topt.step, torch, tdev, number, rounds)
                except RuntimeError as e:  # fused SGD on a device without it
                    row[label] = None
                    print(f"  ({label}: {e})", file=sys.stderr)
    results.append(row)


# batches, optimizer cases (tensors, elements), rounds, calls per round (None: the case's default)
MODES = {
    "full": {"batches": (64, 4096), "sgd": ((100, 1024), (100, 65536), (1000, 1024), (1000, 65536)), "rounds": 7,
             "number": None},
    "quick": {"batches": (64, 4096), "sgd": ((100, 1024), (100, 65536), (1000, 1024)), "rounds": 3, "number": None},
    "smoke": {"batches": (64,), "sgd": ((100, 1024),), "rounds": 1, "number": 1},
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer rounds, skip the largest optimizer case")
    ap.add_argument("--smoke", action="store_true",
                    help="batch 64 and the smallest optimizer case, one round: checks that they run, times nothing")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--device", choices=["cpu", "cuda"], help="default: cuda when available")
    args = ap.parse_args()
    device = args.device or ("cuda" if cuda_ok(ctorch) else "cpu")
    if torch is not None and device == "cpu":
        torch.set_num_threads(ctorch.get_num_threads())
    print(f"device: {device_name(device)}; ctorch {ctorch.__version__}; "
          f"PyTorch {'absent' if torch is None else torch.__version__}")
    size = MODES["smoke" if args.smoke else "quick" if args.quick else "full"]
    results = []
    for batch in size["batches"]:
        bench_mlp(device, batch, size, results)
    for batch in size["batches"] if device == "cuda" else ():
        bench_mlp_amp(device, batch, size, results)
    for count, numel in size["sgd"]:
        bench_sgd(device, count, numel, size, results)
    cols = ["ctorch_ms", "torch_ms", "torch_foreach_ms", "torch_fused_ms"]
    print(f"{'case':<24}" + "".join(f"{c:>18}" for c in cols) + f"{'ctorch/torch':>14}")
    for r in results:
        vals = "".join(f"{r[c]:>18.3f}" if r.get(c) is not None else f"{'-':>18}" for c in cols)
        ref = r.get("torch_ms") or r.get("torch_fused_ms") or r.get("torch_foreach_ms")
        ratio = f"{r['ctorch_ms'] / ref:>14.2f}" if ref else f"{'-':>14}"
        print(f"{r['case']:<24}{vals}{ratio}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device_name(device), "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
