"""Differential harness for ctorch's forward ops against a reference PyTorch (CPU).

A dev tool, never run by the test suite (tests must not import torch). Run each f_*.py with a
Python that has torch installed and can import this checkout's ctorch, e.g.

    /work/torchref/venv/bin/python scripts/fwdfuzz/f_elem.py binary
    MSG=1 KEY=sum MAXPER=20 /work/torchref/venv/bin/python scripts/fwdfuzz/f_reduce.py

check(key, desc, fn) runs fn(L) with L = torch and L = ctorch and records any difference in
result values (NaN-aware, exact for ints/bools), dtype, shape, strides (STRIDES=1), exception
type, and with MSG=1 the first line of the exception message. report() prints them grouped
by key. Inputs come from make(L, dtype, layout, shape, seed): the same values in both libraries.
Known, accepted differences are listed in the fuzzing report of session 2026-11-22b.
"""
import math
import os
import warnings
warnings.simplefilter('ignore')
import sys
import collections

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import ctorch  # noqa: E402
import torch  # noqa: E402

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]
FLOATS = {"float32", "float64", "float16", "bfloat16"}
INTS = {"int64", "int32", "int16", "int8", "uint8"}

RESULTS = collections.OrderedDict()  # key -> list of messages
import os
CHECK_MSG = bool(os.environ.get("MSG"))
CHECK_STRIDES = bool(os.environ.get("STRIDES"))


def dt(L, name):
    return getattr(L, name)


def values(dtype, shape, seed, special=True):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if len(shape) else 1
    if dtype in FLOATS:
        v = np.round(rng.standard_normal(n) * 3, 2)
        if special and n >= 4:
            pool = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 1e4]
            k = rng.integers(0, max(1, n // 3) + 1)
            idx = rng.choice(n, size=min(k, n), replace=False)
            for i in idx:
                v[i] = pool[rng.integers(0, len(pool))]
    elif dtype == "bool":
        v = rng.integers(0, 2, n).astype(bool)
    elif dtype == "uint8":
        v = rng.integers(0, 12, n)
    else:
        v = rng.integers(-6, 7, n)
    return v.reshape(shape)


def to_lib(L, arr, dtype):
    a = np.ascontiguousarray(arr)
    if dtype == "bool":
        t = L.from_numpy(a.astype(np.bool_))
    elif dtype in FLOATS:
        t = L.from_numpy(a.astype(np.float64)).to(dt(L, dtype))
    else:
        t = L.from_numpy(a.astype(np.int64)).to(dt(L, dtype))
    return t


LAYOUTS = ["contig", "transposed", "sliced", "expanded", "zerod", "empty", "size1"]


def layout_shape(layout, shape):
    """Return (base_shape, transform) so transform(base) has `shape` (for contig, transposed, sliced)."""
    return shape


def make(L, dtype, layout, shape=(3, 4), seed=0, special=True):
    """Tensor of `dtype` in `layout`; same values for both libs (seeded)."""
    if layout == "contig":
        return to_lib(L, values(dtype, shape, seed, special), dtype)
    if layout == "transposed":
        if len(shape) < 2:
            return to_lib(L, values(dtype, shape, seed, special), dtype)
        base = to_lib(L, values(dtype, shape[::-1], seed, special), dtype)
        return base.permute(*range(len(shape) - 1, -1, -1))
    if layout == "sliced":
        big = tuple(2 * s + 1 for s in shape)
        base = to_lib(L, values(dtype, big, seed, special), dtype)
        idx = tuple(slice(1, None, 2) for _ in shape)
        return base[idx]
    if layout == "expanded":
        if len(shape) == 0:
            return to_lib(L, values(dtype, shape, seed, special), dtype)
        small = (1,) + tuple(shape[1:])
        base = to_lib(L, values(dtype, small, seed, special), dtype)
        return base.expand(*shape)
    if layout == "zerod":
        return to_lib(L, values(dtype, (), seed, special), dtype)
    if layout == "empty":
        s = (0,) + tuple(shape[1:]) if len(shape) else (0,)
        return to_lib(L, values(dtype, s, seed, special), dtype)
    if layout == "size1":
        s = tuple(shape[:-1]) + (1,) if len(shape) else (1,)
        return to_lib(L, values(dtype, s, seed, special), dtype)
    raise ValueError(layout)


def is_tensor(x):
    return isinstance(x, (torch.Tensor, ctorch.Tensor))


def dtname(x):
    return str(x.dtype).replace("torch.", "").replace("ctorch.", "")


def tonp(x):
    d = dtname(x)
    if d == "bool":
        return x.detach().numpy().copy()
    if d in INTS:
        return x.detach().to(x.dtype).numpy().astype(np.int64)
    return x.detach().double().numpy()


def tol(d):
    return {"float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (2e-5, 1e-6),
            "float64": (1e-10, 1e-12)}.get(d, (0, 0))


def normalize(x):
    """Convert a result into a comparable tree."""
    if is_tensor(x):
        return ("T", x)
    if isinstance(x, (tuple, list)):
        return ("S", type(x).__name__ if not hasattr(x, "_fields") else "NT", [normalize(e) for e in x])
    if isinstance(x, (torch.Size,)):
        return ("P", tuple(x))
    return ("P", x)


def cmp_tensor(a, b, path, ctx):
    out = []
    da, db = dtname(a), dtname(b)
    if da != db:
        out.append(f"{path}dtype torch={da} ctorch={db}")
    if tuple(a.shape) != tuple(b.shape):
        out.append(f"{path}shape torch={tuple(a.shape)} ctorch={tuple(b.shape)}")
        return out
    if CHECK_STRIDES and ctx.get("strides") and a.numel() > 1 and tuple(a.stride()) != tuple(b.stride()):
        out.append(f"{path}strides torch={a.stride()} ctorch={b.stride()}")
    try:
        na, nb = tonp(a), tonp(b)
    except Exception as e:  # noqa
        out.append(f"{path}tonp failed {type(e).__name__}: {e}")
        return out
    if da == db and (da == "bool" or da in INTS):
        if not np.array_equal(na, nb):
            out.append(f"{path}values differ (exact) torch={na.ravel()[:8]} ctorch={nb.ravel()[:8]}")
    else:
        d = db if db in FLOATS else da
        rt, at = tol(d if d in FLOATS else "float64")
        rt *= ctx.get("tolmul", 1)
        at *= ctx.get("tolmul", 1)
        na = na.astype(np.float64)
        nb = nb.astype(np.float64)
        nan_a, nan_b = np.isnan(na), np.isnan(nb)
        if not np.array_equal(nan_a, nan_b):
            out.append(f"{path}NaN positions differ torch={na.ravel()[:8]} ctorch={nb.ravel()[:8]}")
        else:
            m = ~nan_a
            if not np.allclose(na[m], nb[m], rtol=rt, atol=at, equal_nan=True):
                bad = ~np.isclose(na, nb, rtol=rt, atol=at, equal_nan=True)
                out.append(f"{path}values differ torch={na[bad][:6]} ctorch={nb[bad][:6]}")
    return out


def cmp(ra, rb, path="", ctx=None):
    ctx = ctx or {}
    if is_tensor(ra) or is_tensor(rb):
        if not (is_tensor(ra) and is_tensor(rb)):
            return [f"{path}kind torch={type(ra).__name__} ctorch={type(rb).__name__}"]
        return cmp_tensor(ra, rb, path, ctx)
    if isinstance(ra, (tuple, list)) and not isinstance(ra, torch.Size):
        if not isinstance(rb, (tuple, list)):
            return [f"{path}kind torch={type(ra).__name__} ctorch={type(rb).__name__}"]
        if len(ra) != len(rb):
            return [f"{path}len torch={len(ra)} ctorch={len(rb)}"]
        out = []
        if hasattr(ra, "_fields") and not hasattr(rb, "_fields"):
            out.append(f"{path}torch namedtuple {type(ra).__name__}, ctorch {type(rb).__name__}")
        if type(ra) in (list, tuple) and type(ra) is not type(rb) and not hasattr(rb, "_fields"):
            out.append(f"{path}container torch={type(ra).__name__} ctorch={type(rb).__name__}")
        for i, (x, y) in enumerate(zip(ra, rb)):
            out += cmp(x, y, f"{path}[{i}]", ctx)
        return out
    # python scalars / sizes / dtypes
    if isinstance(ra, torch.Size):
        return [] if tuple(ra) == tuple(rb) else [f"{path}size torch={tuple(ra)} ctorch={rb}"]
    if isinstance(ra, torch.dtype):
        return [] if str(ra).replace("torch.", "") == str(rb).replace("ctorch.", "").replace("torch.", "") else [f"{path}dtype obj torch={ra} ctorch={rb}"]
    if type(ra) is not type(rb):
        return [f"{path}pytype torch={type(ra).__name__}:{ra!r} ctorch={type(rb).__name__}:{rb!r}"]
    if isinstance(ra, float):
        if math.isnan(ra) and math.isnan(rb):
            return []
        if ra == rb or math.isclose(ra, rb, rel_tol=ctx.get("ftol", 1e-6), abs_tol=1e-9):
            return []
        return [f"{path}value torch={ra!r} ctorch={rb!r}"]
    if ra != rb:
        return [f"{path}value torch={ra!r} ctorch={rb!r}"]
    return []


def run_one(fn, L):
    try:
        return ("ok", fn(L))
    except Exception as e:  # noqa
        return ("err", e)


def exc_name(e):
    return type(e).__name__


def check(key, desc, fn, ctx=None, post=None, strides=True):
    """Run fn(L) in both libs and record discrepancies under `key`. post(L, result) -> extra compare data."""
    ctx = dict(ctx or {})
    ctx.setdefault("strides", strides)
    ka, ra = run_one(fn, torch)
    kb, rb = run_one(fn, ctorch)
    msgs = []
    if ka == "err" and kb == "err":
        ea, eb = exc_name(ra), exc_name(rb)
        if ea != eb and not (ea == "NotImplementedError" and eb == "TypeError"):
            msgs.append(f"exc type torch={ea}: {str(ra)[:150]!r} ctorch={eb}: {str(rb)[:150]!r}")
        elif CHECK_MSG and str(ra).split("\n")[0] != str(rb).split("\n")[0]:
            msgs.append(f"exc msg [{ea}] torch={str(ra)[:160]!r} ctorch={str(rb)[:160]!r}")
    elif ka == "err":
        msgs.append(f"torch raises {exc_name(ra)}: {str(ra)[:160]!r}; ctorch returns {short(rb)}")
    elif kb == "err":
        if isinstance(rb, (SystemError,)):
            msgs.append("SYSTEMERROR " + str(rb)[:200])
        msgs.append(f"ctorch raises {exc_name(rb)}: {str(rb)[:160]!r}; torch returns {short(ra)}")
    else:
        msgs += cmp(ra, rb, "", ctx)
    if msgs:
        RESULTS.setdefault(key, []).append((desc, msgs))
    return msgs


def short(x):
    if is_tensor(x):
        try:
            return f"tensor(dtype={dtname(x)}, shape={tuple(x.shape)}, vals={tonp(x).ravel()[:6]})"
        except Exception:
            return f"tensor(dtype={dtname(x)}, shape={tuple(x.shape)})"
    r = repr(x)
    return r[:120]


def report(maxper=4, out=sys.stdout):
    flt = os.environ.get("KEY")
    maxper = int(os.environ.get("MAXPER", maxper))
    for key, lst in RESULTS.items():
        if flt and flt not in key:
            continue
        print(f"=== {key}: {len(lst)} cases", file=out)
        for desc, msgs in lst[:maxper]:
            print(f"   {desc}: {' | '.join(msgs)[:400]}", file=out)
