"""Elementwise benchmark: per-op overhead on tiny tensors and throughput on 4M-element float32
tensors, ctorch beside NumPy measured in the same run, interleaved. Reports the median and the
best of the repeated timeit runs (the best is the steadier figure on a shared machine).

    PYTHONPATH=python python3 benchmarks/bench_elementwise.py
"""
import os
import platform
import timeit

import numpy as np

import ctorch


def times(stmts, env, number, rounds=3, repeat=5):
    """{stmt: (median, best)} seconds per call. Each statement runs in its own blocks (mixing
    NumPy's and ctorch's allocations inside one block churns the heap for both), and the
    blocks alternate between the statements so that both see the same machine load."""
    runs = {s: [] for s in stmts}
    for _ in range(rounds):
        for s in stmts:
            eval(s, env)  # warm the allocator for this statement
            runs[s] += [t / number for t in timeit.repeat(s, globals=env, number=number, repeat=repeat)]
    return {s: (sorted(r)[len(r) // 2], min(r)) for s, r in runs.items()}


def main():
    cpu = platform.processor() or platform.machine()
    print(f"device: CPU {cpu}, {os.cpu_count()} cores, ctorch threads {ctorch.get_num_threads()}")
    cases = [
        ("a + b", "ta + tb", "na + nb"),
        ("add(a, b)", "ctorch.add(ta, tb)", "np.add(na, nb)"),
        ("a * b + a", "ta * tb + ta", "na * nb + na"),
        ("a * 2.0", "ta * 2.0", "na * np.float32(2.0)"),
        ("exp(a)", "ctorch.exp(ta)", "np.exp(na)"),
        ("where(a > b, a, b)", "ctorch.where(ta > tb, ta, tb)", "np.where(na > nb, na, nb)"),
    ]
    for n, number, unit, scale in [(4, 100_000, "ns", 1e9), (4 << 20, 20, "ms", 1e3)]:
        rng = np.random.default_rng(0)
        na = rng.random(n, dtype=np.float32)
        nb = rng.random(n, dtype=np.float32)
        ta, tb = ctorch.tensor(na), ctorch.tensor(nb)
        env = {"np": np, "ctorch": ctorch, "na": na, "nb": nb, "ta": ta, "tb": tb}
        print(f"\nfloat32, {n} elements")
        for name, t_stmt, n_stmt in cases:
            # validate first
            got = eval(t_stmt, env).numpy()
            want = eval(n_stmt, env)
            np.testing.assert_allclose(got, want, rtol=1e-6)
            r = times([t_stmt, n_stmt], env, number)
            (tc, bc), (tn, bn) = r[t_stmt], r[n_stmt]
            extra = ""
            if n > 1000 and name in ("a + b", "add(a, b)"):
                nbytes = 3 * n * 4
                extra = f"  best {nbytes / bc / 1e9:5.1f} GB/s vs {nbytes / bn / 1e9:5.1f} GB/s"
            print(f"  {name:20s} ctorch {tc * scale:8.3f} (best {bc * scale:8.3f}) {unit}   "
                  f"numpy {tn * scale:8.3f} (best {bn * scale:8.3f}) {unit}   "
                  f"ratio {tc / tn:4.2f} (best {bc / bn:4.2f}){extra}")


if __name__ == "__main__":
    main()
