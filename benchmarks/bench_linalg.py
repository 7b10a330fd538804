"""Linear-algebra benchmarks: ctorch (OpenBLAS and built-in kernel) against NumPy in one run.

Each case is validated against NumPy first, then timed: rounds alternate between the
contenders (so that load from other processes hits them alike) and the median round counts.
Contenders: ctorch as configured at import (OpenBLAS for float products up to 64^3
multiply-adds, the built-in kernel above), ctorch with every float product on OpenBLAS,
ctorch on the built-in kernel only, and NumPy. Prints microseconds per call, the ratio of the
default to NumPy (lower is better) and the default's GFLOP/s.

    python3 benchmarks/bench_linalg.py [--quick] [--cases matmul,small,batched,einsum]
"""
import argparse
import os
import platform
import time

import numpy as np

import ctorch


def median_times(contenders, number, rounds):
    """Median per-call seconds of each (mode, fn) over rounds interleaved between them (a
    shared machine's load then hits every contender alike; medians show the typical call).
    mode is (builtin, max_work) set around each round, or None for ctorch as configured."""
    def timed(mode, fn):
        prev = None
        if mode is not None:
            prev = (ctorch._C._blas_use_builtin(mode[0]), ctorch._C._blas_max_work(mode[1]))
        try:
            fn()
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            return (time.perf_counter() - t0) / number
        finally:
            if prev is not None:
                ctorch._C._blas_use_builtin(prev[0])
                ctorch._C._blas_max_work(prev[1])

    times = [[] for _ in contenders]
    for _ in range(rounds):
        for i, (mode, fn) in enumerate(contenders):
            times[i].append(timed(mode, fn))
    return [float(np.median(t)) for t in times]


def check(name, got, want, rtol):
    got = got.numpy()
    if got.shape != np.shape(want) or not np.allclose(got, want, rtol=rtol, atol=rtol):
        raise SystemExit(f"{name}: ctorch differs from NumPy")


def run_case(name, ours, ref, flops, number, rounds, rtol=1e-3):
    """Times ours as configured (default), all on OpenBLAS, all on the built-in kernel, and
    ref (NumPy); medians over interleaved rounds (best in the JSON-free printout's GFLOP/s)."""
    check(name, ours(), ref(), rtol)
    default_limit = ctorch._C._blas_max_work(0)
    ctorch._C._blas_max_work(default_limit)
    contenders = [(None, ours), ((False, 0), ours), ((True, default_limit), ours), (None, ref)]
    med = median_times(contenders, number, rounds)
    gf = (lambda t: flops / t / 1e9) if flops else (lambda t: float("nan"))
    print(f"{name:34s} " + " ".join(f"{t * 1e6:11.2f}" for t in med) +
          f" {med[0] / med[3]:7.2f} {gf(med[0]):8.1f}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--cases", default="matmul,small,batched,einsum")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    scale = 0.2 if args.quick else 1.0
    want = set(args.cases.split(","))
    print(f"ctorch linalg benchmarks  {time.strftime('%Y-%m-%d %H:%M')}  {platform.machine()}  "
          f"{os.cpu_count()} cores  numpy {np.__version__}  load {os.getloadavg()[0]:.1f}")
    print(f"ctorch BLAS: {ctorch._C._blas_name()}  built-in kernel: threads {ctorch.get_num_threads()}")
    print(f"{'case':34s} {'default us':>11s} {'openblas us':>11s} {'builtin us':>11s} {'numpy us':>11s} "
          f"{'ratio':>7s} {'GFLOP/s':>8s}")

    def T(x):
        return ctorch.from_numpy(np.ascontiguousarray(x))

    def num(work):
        return max(1, int(scale * 2e7 / (work + 2e4)))

    if "matmul" in want:
        for n, dt in [(64, np.float32), (128, np.float32), (256, np.float32), (512, np.float32),
                      (1024, np.float32), (256, np.float64), (1024, np.float64)]:
            a, b = rng.standard_normal((n, n)).astype(dt), rng.standard_normal((n, n)).astype(dt)
            A, B = T(a), T(b)
            run_case(f"matmul {n}x{n} {np.dtype(dt).name}", lambda: A @ B, lambda: a @ b, 2 * n ** 3,
                     num(n ** 3), args.rounds)
        a, b = rng.standard_normal((1024, 1024)).astype(np.float32), rng.standard_normal((1024, 1024)).astype(
            np.float32)
        A, B = T(a), T(b)
        run_case("matmul 1024 a.T @ b.T float32", lambda: A.t() @ B.t(), lambda: a.T @ b.T, 2 * 1024 ** 3,
                 num(1024 ** 3), args.rounds)
    if "small" in want:
        for n in (2, 4, 8, 16, 32):
            a, b = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
            A, B = T(a), T(b)
            run_case(f"small matmul {n}x{n} float32", lambda: A @ B, lambda: a @ b, 2 * n ** 3, int(20000 * scale) or 1,
                     args.rounds)
        v = rng.standard_normal(4).astype(np.float32)
        V = T(v)
        run_case("dot 4 float32", lambda: ctorch.dot(V, V), lambda: np.dot(v, v), 8, int(20000 * scale) or 1,
                 args.rounds)
    if "batched" in want:
        for bsz, n, dt in [(10000, 4, np.float32), (2000, 16, np.float32), (256, 64, np.float32), (32, 256, np.float32),
                           (10000, 4, np.float64), (1000, 8, np.int64)]:
            if np.dtype(dt).kind == "f":
                a = rng.standard_normal((bsz, n, n)).astype(dt)
                b = rng.standard_normal((bsz, n, n)).astype(dt)
            else:
                a = rng.integers(-9, 9, (bsz, n, n)).astype(dt)
                b = rng.integers(-9, 9, (bsz, n, n)).astype(dt)
            A, B = T(a), T(b)
            run_case(f"bmm {bsz}x{n}x{n} {np.dtype(dt).name}", lambda: A @ B, lambda: a @ b, 2 * bsz * n ** 3,
                     num(bsz * n ** 3), args.rounds)
        a = rng.standard_normal((64, 128, 256)).astype(np.float32)
        w = rng.standard_normal((256, 512)).astype(np.float32)
        A, W = T(a), T(w)
        run_case("(64,128,256) @ (256,512) fold", lambda: A @ W, lambda: a @ w, 2 * 64 * 128 * 256 * 512,
                 num(64 * 128 * 256 * 512), args.rounds)
    if "einsum" in want:
        q = rng.standard_normal((8, 8, 128, 64)).astype(np.float32)
        k = rng.standard_normal((8, 8, 128, 64)).astype(np.float32)
        Q, K = T(q), T(k)
        run_case("einsum bhqd,bhkd->bhqk", lambda: ctorch.einsum("bhqd,bhkd->bhqk", Q, K),
                 lambda: np.matmul(q, k.transpose(0, 1, 3, 2)), 2 * 64 * 128 * 128 * 64, num(64 * 128 * 128 * 64),
                 args.rounds)
        x = rng.standard_normal((512, 512)).astype(np.float32)
        X = T(x)
        run_case("einsum ij->j (512x512)", lambda: ctorch.einsum("ij->j", X), lambda: x.sum(0), 0, num(512 * 512),
                 args.rounds)


if __name__ == "__main__":
    main()
