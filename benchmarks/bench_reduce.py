"""Benchmark of ctorch reductions against NumPy on the CPU (stand-alone, not collected by pytest).

Each case is validated against NumPy first, then timed: warm-up, then the median of many runs.
Usage: PYTHONPATH=python python3 benchmarks/bench_reduce.py [--threads N]
"""
import argparse
import os
import platform
import time

import numpy as np

import ctorch as torch


def timings(fn, reps):
    """(median, best) of reps calls after a warm-up. On a shared machine the best is the better
    estimate of the uncontended time; both are printed."""
    for _ in range(3):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), float(np.min(ts))


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--reps", type=int, default=100)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    n = 4 * 1024 * 1024
    a = rng.standard_normal(n).astype(np.float32)
    a2 = a.reshape(2048, 2048)
    cases = [
        ("sum 4M f32", a, lambda x: x.sum(), lambda x: x.sum()),
        ("sum (2048,2048) dim=1", a2, lambda x: x.sum(1), lambda x: x.sum(1)),
        ("sum (2048,2048) dim=0", a2, lambda x: x.sum(0), lambda x: x.sum(0)),
        ("sum (2048,2048).T dim=0", a2, lambda x: x.t().sum(0), lambda x: x.T.sum(0)),
        ("sum (1M,4) dim=1", a.reshape(-1, 4), lambda x: x.sum(1), lambda x: x.sum(1)),
        ("sum (1M,4) dim=0", a.reshape(-1, 4), lambda x: x.sum(0), lambda x: x.sum(0)),
        ("sum (4,1M) dim=1", a.reshape(4, -1), lambda x: x.sum(1), lambda x: x.sum(1)),
        ("sum (64,256,256) dim=(0,2)", a.reshape(64, 256, 256), lambda x: x.sum((0, 2)), lambda x: x.sum((0, 2))),
        ("mean 4M f32", a, lambda x: x.mean(), lambda x: x.mean()),
        ("amax 4M f32", a, lambda x: x.amax(), lambda x: x.max()),
        ("amax (2048,2048) dim=0", a2, lambda x: x.amax(0), lambda x: x.max(0)),
        ("argmax 4M f32", a, lambda x: x.argmax(), lambda x: x.argmax()),
        ("std 4M f32", a, lambda x: x.std(), lambda x: x.std(ddof=1)),
        ("norm 4M f32", a, lambda x: x.norm(), lambda x: np.linalg.norm(x)),
        ("sum 4M f64", a.astype(np.float64), lambda x: x.sum(), lambda x: x.sum()),
        ("sum 4M int32", (a * 100).astype(np.int32), lambda x: x.sum(), lambda x: x.sum()),
        ("cumsum (2048,2048) dim=1", a2, lambda x: x.cumsum(1), lambda x: np.cumsum(x, 1)),
        ("softmax (2048,2048) dim=1", a2, lambda x: x.softmax(1), None),
        ("sort (2048,2048) dim=1", a2, lambda x: x.sort(1), lambda x: np.sort(x, 1, kind="stable")),
    ]
    print(f"device: {cpu_name()}, {os.cpu_count()} cores, ctorch threads {torch.get_num_threads()}")
    print(f"{'case':32s} {'ctorch ms':>10s} {'numpy ms':>10s} {'ratio':>7s} {'best ct':>8s} {'best np':>8s} "
          f"{'ratio':>6s} {'GB/s':>6s}")
    for name, arr, ct_fn, np_fn in cases:
        t = torch.tensor(arr)
        r = ct_fn(t)
        if np_fn is not None:  # validate first
            exp = np_fn(arr.astype(np.float64) if arr.dtype == np.float32 else arr)  # float64 oracle
            got = r[0] if isinstance(r, tuple) else r
            np.testing.assert_allclose(np.asarray(got.numpy(), dtype=np.float64), np.asarray(exp, dtype=np.float64),
                                       rtol=2e-5, atol=1e-3)
        tc, bc = timings(lambda: ct_fn(t), args.reps)
        tn, bn = timings(lambda: np_fn(arr), args.reps) if np_fn is not None else (float("nan"), float("nan"))
        gbs = arr.nbytes / bc / 1e9
        print(f"{name:32s} {tc * 1e3:10.3f} {tn * 1e3:10.3f} {tc / tn:7.2f} {bc * 1e3:8.3f} {bn * 1e3:8.3f} "
              f"{bc / bn:6.2f} {gbs:6.1f}")


if __name__ == "__main__":
    main()
