"""Linear-algebra benchmarks: ctorch (OpenBLAS and built-in kernel) against NumPy in one run.

Each case is validated against NumPy first, then timed: rounds alternate between the
contenders (so that load from other processes hits them alike) and the best round counts.
Prints microseconds per call and the ratio to NumPy (lower is better).

    python3 benchmarks/bench_linalg.py [--quick] [--cases matmul,small,batched,einsum]
"""
import argparse
import os
import platform
import time

import numpy as np

import ctorch


def best_times(fns, number, rounds):
    """Best per-call seconds of each fn, rounds interleaved."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            best[i] = min(best[i], (time.perf_counter() - t0) / number)
    return best


def check(name, got, want, rtol):
    got = got.numpy()
    if got.shape != np.shape(want) or not np.allclose(got, want, rtol=rtol, atol=rtol):
        raise SystemExit(f"{name}: ctorch differs from NumPy")


def run_case(name, ours, ref, flops, number, rounds, rtol=1e-3):
    """Times ours under OpenBLAS and the built-in kernel against ref (NumPy)."""
    check(name, ours(), ref(), rtol)

    def builtin():
        prev = ctorch._C._blas_use_builtin(True)
        try:
            ours()
        finally:
            ctorch._C._blas_use_builtin(prev)

    has_blas = ctorch._C._blas_name() != "built-in"
    fns = [ours, builtin, ref] if has_blas else [ours, ref]
    times = best_times(fns, number, rounds)
    t_np = times[-1]
    t_blas = times[0] if has_blas else float("nan")
    t_builtin = times[1] if has_blas else times[0]
    gf = (lambda t: flops / t / 1e9) if flops else (lambda t: float("nan"))
    print(f"{name:34s} {t_blas * 1e6:11.2f} {t_builtin * 1e6:11.2f} {t_np * 1e6:11.2f} "
          f"{t_blas / t_np:7.2f} {t_builtin / t_np:7.2f} {gf(min(t_blas, t_builtin)):8.1f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cases", default="matmul,small,batched,einsum")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    scale = 0.2 if args.quick else 1.0
    want = set(args.cases.split(","))
    print(f"ctorch linalg benchmarks  {time.strftime('%Y-%m-%d %H:%M')}  {platform.machine()}  "
          f"{os.cpu_count()} cores  numpy {np.__version__}  load {os.getloadavg()[0]:.1f}")
    print(f"ctorch BLAS: {ctorch._C._blas_name()}  built-in kernel: threads {ctorch.get_num_threads()}")
    print(f"{'case':34s} {'openblas us':>11s} {'builtin us':>11s} {'numpy us':>11s} {'r_blas':>7s} "
          f"{'r_built':>7s} {'GFLOP/s':>8s}")

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
