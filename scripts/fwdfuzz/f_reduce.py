import sys
from core import *  # noqa

RED = ["sum", "prod", "mean", "nansum", "amax", "amin", "max", "min", "argmax", "argmin", "all", "any", "std",
       "var", "logsumexp", "median", "count_nonzero", "norm", "aminmax", "std_mean", "var_mean"]
SCAN = ["cumsum", "cumprod"]
SHAPES = {"contig": (3, 4), "transposed": (3, 4), "sliced": (3, 4), "expanded": (3, 4), "zerod": (), "empty": (0, 4),
          "size1": (3, 1)}

DIMS = [None, 0, 1, -1, -2, (0, 1), (1,), (-1, 0), (), 2, -3, (0, 0)]

for op in RED:
    for d in DTYPES:
        for lay in LAYOUTS:
            check(f"red {op} nodim", f"{d} {lay}", lambda L: getattr(L, op)(make(L, d, lay, seed=11)),
                  ctx={"tolmul": 4})
            for dim in DIMS:
                if dim is None:
                    continue
                for kd in [False, True]:
                    def f(L):
                        x = make(L, d, lay, seed=11)
                        if op in ("std", "var", "std_mean", "var_mean", "median", "count_nonzero", "aminmax",
                                  "argmax", "argmin"):
                            if op == "count_nonzero":
                                return L.count_nonzero(x, dim=dim)
                            if op == "aminmax":
                                return L.aminmax(x, dim=dim, keepdim=kd)
                            return getattr(L, op)(x, dim, keepdim=kd)
                        return getattr(L, op)(x, dim, keepdim=kd)
                    check(f"red {op} dim", f"{d} {lay} dim={dim} kd={kd}", f, ctx={"tolmul": 4})
        # method form
        check(f"red {op} method", d, lambda L: getattr(make(L, d, "contig", seed=12), op)())
    # dtype= arguments
    if op in ("sum", "prod", "mean", "nansum", "cumsum", "cumprod", "logsumexp", "norm"):
        for d in DTYPES:
            for od in DTYPES:
                check(f"red {op} dtype=", f"{d}->{od}", lambda L: getattr(L, op)(make(L, d, "contig", seed=13),
                                                                                 dtype=dt(L, od)))
                check(f"red {op} dim dtype=", f"{d}->{od}", lambda L: getattr(L, op)(
                    make(L, d, "contig", seed=13), 1, dtype=dt(L, od)))

# std/var correction / unbiased
for op in ["std", "var", "std_mean", "var_mean"]:
    for d in ["float32", "float64", "float16", "int64", "bool"]:
        for kw in [{"unbiased": False}, {"correction": 0}, {"correction": 2}, {"correction": 5}, {"unbiased": True},
                   {"dim": 1, "correction": 0}, {"dim": None, "correction": 1}, {"dim": 1, "unbiased": False}]:
            check(f"red {op} kw", f"{d} {kw}", lambda L: getattr(L, op)(make(L, d, "contig", seed=14), **kw))
    for lay in ["size1", "empty", "zerod"]:
        check(f"red {op} small", lay, lambda L: getattr(L, op)(make(L, "float32", lay, seed=14), 1 if lay != "zerod" else 0))

for op in SCAN:
    for d in DTYPES:
        for lay in LAYOUTS:
            for dim in [0, 1, -1, 2, -3]:
                check(f"scan {op}", f"{d} {lay} dim={dim}", lambda L: getattr(L, op)(make(L, d, lay, seed=15), dim))
        for od in DTYPES:
            check(f"scan {op} dtype", f"{d}->{od}", lambda L: getattr(L, op)(make(L, d, "contig", seed=15), 0,
                                                                             dtype=dt(L, od)))

# NaN / ties for argmax/max
for op in ["argmax", "argmin", "max", "min", "amax", "amin", "median", "aminmax"]:
    for vals in [[1.0, float("nan"), 3.0, float("nan")], [2.0, 2.0, 1.0, 2.0], [float("nan")] * 3,
                 [1.0, 5.0, 5.0, 0.0], [float("-inf"), float("inf"), float("inf")], [-0.0, 0.0]]:
        for d in ["float32", "float64", "float16", "bfloat16"]:
            check(f"nan/ties {op}", f"{d} {vals}", lambda L: getattr(L, op)(L.tensor(vals, dtype=dt(L, d))))
            check(f"nan/ties {op} dim", f"{d} {vals}", lambda L: getattr(L, op)(L.tensor([vals, vals[::-1]], dtype=dt(L, d)), 1) if op != "aminmax" else L.aminmax(L.tensor([vals, vals[::-1]], dtype=dt(L, d)), dim=1))

# sort/topk/argsort
for d in DTYPES:
    for lay in LAYOUTS:
        for desc in [False, True]:
            for stable in [False, True]:
                for dim in [-1, 0]:
                    check("sort", f"{d} {lay} desc={desc} stable={stable} dim={dim}",
                          lambda L: L.sort(make(L, d, lay, seed=16), dim=dim, descending=desc, stable=stable)
                          if stable else L.sort(make(L, d, lay, seed=16), dim=dim, descending=desc))
                    check("argsort", f"{d} {lay} desc={desc} stable={stable} dim={dim}",
                          lambda L: L.argsort(make(L, d, lay, seed=16), dim=dim, descending=desc, stable=stable))
        for k in [0, 1, 2, 3, 5]:
            for largest in [True, False]:
                for dim in [-1, 0]:
                    def f(L):
                        v, i = L.topk(make(L, d, lay, seed=17), k, dim=dim, largest=largest)
                        return v, i
                    check("topk", f"{d} {lay} k={k} largest={largest} dim={dim}", f)
# sort with ties + NaN stable
for d in ["float32", "float64", "float16", "int64", "bool"]:
    vals = [3, 1, float("nan"), 1, 3, float("nan"), -0.0, 0.0, 2, 1] if d[0] == "f" else [3, 1, 0, 1, 3, 0, 0, 0, 2, 1]
    for desc in [False, True]:
        check("sort ties stable", f"{d} desc={desc}",
              lambda L: L.sort(L.tensor(vals, dtype=dt(L, d)), stable=True, descending=desc))
        check("topk ties", f"{d} desc={desc}", lambda L: L.topk(L.tensor(vals, dtype=dt(L, d)), 4, largest=desc))

report(maxper=3)
