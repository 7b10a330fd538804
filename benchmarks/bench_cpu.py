"""CPU benchmarks: ctorch against NumPy in the same run.

Each case is validated first (ctorch's result must match NumPy's), then timed as the best of
several rounds of a fixed number of calls. Prints a table of ms per call and the ratio
ctorch/NumPy (lower is better) and writes the same figures as JSON.

    python3 benchmarks/bench_cpu.py [--json benchmarks/results/cpu.json] [--quick]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

import ctorch

TARGETS = {"tiny add": 1.5, "add 4M": 1.0, "a*b+a 4M": 1.0, "sum 4M": 1.0, "matmul 1024": 1.25,
           "a.T + b 2048": 1.25}


def best_time(fn, number, rounds):
    """Best per-call seconds over `rounds` rounds of `number` calls."""
    fn()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def check(name, ours, ref, rtol):
    got = ours.numpy() if hasattr(ours, "numpy") else np.asarray(ours)
    if not np.allclose(got, ref, rtol=rtol, atol=rtol):
        sys.exit(f"{name}: ctorch result differs from NumPy")


def cases(quick):
    rng = np.random.default_rng(0)
    n4m = 4 * 1024 * 1024
    tiny_a, tiny_b = rng.random(4, dtype=np.float32), rng.random(4, dtype=np.float32)
    a4, b4 = rng.random(n4m, dtype=np.float32), rng.random(n4m, dtype=np.float32)
    m1, m2 = rng.random((1024, 1024), dtype=np.float32), rng.random((1024, 1024), dtype=np.float32)
    s1, s2 = rng.random((2048, 2048), dtype=np.float32), rng.random((2048, 2048), dtype=np.float32)
    t = ctorch.from_numpy
    ta, tb = t(tiny_a), t(tiny_b)
    A4, B4 = t(a4), t(b4)
    M1, M2 = t(m1), t(m2)
    S1, S2 = t(s1), t(s2)
    scale = 0.2 if quick else 1.0
    return [
        ("tiny add", lambda: ta + tb, lambda: tiny_a + tiny_b, int(100000 * scale), 1e-6),
        ("add 4M", lambda: A4 + B4, lambda: a4 + b4, int(20 * scale) or 1, 1e-6),
        ("a*b+a 4M", lambda: A4 * B4 + A4, lambda: a4 * b4 + a4, int(10 * scale) or 1, 1e-6),
        ("sum 4M", lambda: A4.sum(), lambda: a4.sum(), int(20 * scale) or 1, 1e-4),
        ("matmul 1024", lambda: M1 @ M2, lambda: m1 @ m2, int(5 * scale) or 1, 1e-4),
        ("a.T + b 2048", lambda: S1.T + S2, lambda: s1.T + s2, int(10 * scale) or 1, 1e-6),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    try:
        commit = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], text=True,
                                         stderr=subprocess.DEVNULL).strip()
    except Exception:
        commit = "unknown"
    print(f"ctorch CPU benchmarks  {time.strftime('%Y-%m-%d')}  commit {commit}  "
          f"{platform.processor() or platform.machine()}  {os.cpu_count()} cores  numpy {np.__version__}")
    blas = getattr(ctorch._C, "_blas_name", lambda: "n/a")()
    print(f"ctorch BLAS: {blas}   threads: {ctorch.get_num_threads()}")
    rows = []
    print(f"{'case':16s} {'ctorch ms':>12s} {'numpy ms':>12s} {'ratio':>8s} {'target':>8s}")
    for name, ours, ref, number, rtol in cases(args.quick):
        check(name, ours(), ref(), rtol)
        t_ours = best_time(ours, number, args.rounds)
        t_ref = best_time(ref, number, args.rounds)
        ratio = t_ours / t_ref
        target = TARGETS[name]
        flag = "" if ratio <= target else "  (over target)"
        print(f"{name:16s} {t_ours * 1e3:12.5f} {t_ref * 1e3:12.5f} {ratio:8.2f} {target:8.2f}{flag}")
        rows.append({"case": name, "ctorch_ms": t_ours * 1e3, "numpy_ms": t_ref * 1e3, "ratio": ratio,
                     "target": target})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d"), "commit": commit, "blas": blas, "rows": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
