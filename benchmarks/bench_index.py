"""Benchmark of the index family on the CPU against NumPy in the same run.

    PYTHONPATH=python python3 benchmarks/bench_index.py [--n 1000000] [--repeat 20]

Each case is validated against NumPy first, warmed up, then timed; the table gives medians in
ms and the effective bandwidth (bytes read + written by the op) for ctorch and NumPy."""
import argparse
import platform
import time

import numpy as np

import ctorch


def median_ms(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n = args.n
    a = rng.standard_normal(n).astype(np.float32)
    m = rng.random(n) > 0.5
    i = rng.integers(0, n, n)
    side = int(np.sqrt(n))
    a2 = a[: side * side].reshape(side, side).copy()
    m2 = m[: side * side].reshape(side, side)
    rows = rng.integers(0, side, side // 2)
    t, tm, ti = ctorch.tensor(a), ctorch.tensor(m), ctorch.tensor(i)
    aw, tw = a.copy(), ctorch.tensor(a)  # written by the assignment cases
    t2, tm2, trows = ctorch.tensor(a2), ctorch.tensor(m2), ctorch.tensor(rows)
    nsel = int(m.sum())
    cases = [
        # name, ctorch fn, numpy fn, bytes moved
        ("x[mask]", lambda: t[tm], lambda: a[m], n * 1 + nsel * 8),
        ("x[idx]", lambda: t[ti], lambda: a[i], n * (8 + 4 + 4)),
        ("x[mask] = 0", lambda: tw.__setitem__(tm, 0.0), lambda: aw.__setitem__(m, 0.0), n * 1 + nsel * 4),
        ("x[idx] = y", lambda: tw.__setitem__(ti, t), lambda: aw.__setitem__(i, a), n * (8 + 4 + 4)),
        ("x.T[mask2d]", lambda: t2.T[tm2], lambda: a2.T[m2], side * side * 1 + int(m2.sum()) * 8),
        ("x[rows]", lambda: t2[trows], lambda: a2[rows], rows.size * side * 8),
        ("x[:, rows]", lambda: t2[:, trows], lambda: a2[:, rows], rows.size * side * 8),
        ("nonzero", lambda: ctorch.nonzero(tm2), lambda: np.argwhere(m2), side * side + int(m2.sum()) * 16),
        ("gather", lambda: ctorch.gather(t2, 1, ctorch.tensor(np.broadcast_to(rows, (side, rows.size)).copy())),
         lambda: np.take_along_axis(a2, np.broadcast_to(rows, (side, rows.size)), 1), side * rows.size * 16),
        ("cat", lambda: ctorch.cat([t2, t2]), lambda: np.concatenate([a2, a2]), side * side * 16),
        ("flip", lambda: ctorch.flip(t2, [0, 1]), lambda: np.ascontiguousarray(a2[::-1, ::-1]), side * side * 8),
        ("tril", lambda: ctorch.tril(t2), lambda: np.tril(a2), side * side * 8),
    ]
    print(f"ctorch index benchmarks, n={n}, {platform.processor() or platform.machine()}, "
          f"{ctorch.get_num_threads()} threads")
    print(f"{'op':<14}{'ctorch ms':>11}{'GB/s':>8}{'numpy ms':>11}{'GB/s':>8}{'ratio':>8}")
    for name, fc, fn, nbytes in cases:
        if "=" not in name:  # validate reads first
            np.testing.assert_array_equal(np.asarray(fc().numpy()), fn())
        tc, tn = median_ms(fc, args.repeat), median_ms(fn, args.repeat)
        print(f"{name:<14}{tc:>11.3f}{nbytes / tc / 1e6:>8.2f}{tn:>11.3f}{nbytes / tn / 1e6:>8.2f}{tc / tn:>8.2f}")


if __name__ == "__main__":
    main()
