"""GPU benchmarks: ctorch beside PyTorch and CuPy (when importable) in one run, on one GPU.

Sections (issue 3's list):
  1. host time per op: 100k `a + b` of 1 and of 1024 float32 elements, issued without synchronising
  2. bandwidth of add / mul / copy over 2^20..2^28 float32 elements, beside a device-to-device copy
  3. sum and max over 2^26 elements and over the rows of an 8192 x 8192 matrix
  4. float32 matmul at 1024, 4096, 8192 and 10000, TF32 off and on: TFLOP/s and the relative error
     (Frobenius norm) against a float64 product
  5. allocation + free of 4 B .. 100 MiB (the caching allocators' steady state)
  6. host <-> device copies from pinned and pageable memory, 1 MB .. 1 GB

Every case is validated before it is timed (against NumPy, or a float64 product); GPU times are
CUDA-event times, the median of several rounds of several calls; host times are wall-clock
medians. An op that ctorch does not have on CUDA yet (another family's work) is reported "n/a",
with the reason in the JSON output, and the run goes on.

    python3 benchmarks/bench_cuda.py [--quick | --smoke] [--json benchmarks/results/cuda.json] [--sections 1,2]

On a machine without a usable GPU it prints why and exits with status 0.
"""
import argparse
import json
import platform
import statistics
import sys
import time

import numpy as np

import ctorch

NA = "n/a"


# --- the frameworks --------------------------------------------------------------------------------
class Framework:
    """What a benchmark needs of a GPU array library, written once per library."""

    name = "?"

    def sync(self):
        raise NotImplementedError

    def event(self):
        raise NotImplementedError

    def elapsed_ms(self, start, end):
        raise NotImplementedError


class Ctorch(Framework):
    name = "ctorch"

    def __init__(self):
        self.m = ctorch
        self.dev = "cuda"

    def sync(self):
        ctorch.cuda.synchronize()

    def event(self):
        return ctorch.cuda.Event(enable_timing=True)

    def elapsed_ms(self, start, end):
        return start.elapsed_time(end)

    def asarray(self, a):
        return ctorch.tensor(a, device="cuda")

    def empty(self, n, dtype="float32"):
        return ctorch.empty((n,), dtype=getattr(ctorch, dtype), device="cuda")

    def numpy(self, x):
        return np.asarray(x.cpu().numpy())

    def add(self, a, b, out):
        return ctorch.add(a, b, out=out)

    def mul(self, a, b, out):
        return ctorch.mul(a, b, out=out)

    def copy(self, dst, src):
        return dst.copy_(src)

    def sum(self, x, dim=None):
        return x.sum() if dim is None else x.sum(dim=dim)

    def max(self, x, dim=None):
        return x.max() if dim is None else x.max(dim=dim)[0]

    def matmul(self, a, b):
        return ctorch.matmul(a, b)

    def set_tf32(self, on):
        ctorch.backends.cuda.matmul.allow_tf32 = on

    def host(self, n, pinned):
        t = ctorch.from_numpy(np.ones(n, dtype=np.uint8))
        return t.pin_memory() if pinned else t

    def h2d(self, dst, src, pinned):
        dst.copy_(src, non_blocking=pinned)

    def d2h(self, dst, src, pinned):
        dst.copy_(src, non_blocking=pinned)

    def host_numpy(self, h):
        return h.numpy()


class Torch(Ctorch):
    name = "torch"

    def __init__(self, torch):
        self.m = torch

    def sync(self):
        self.m.cuda.synchronize()

    def event(self):
        return self.m.cuda.Event(enable_timing=True)

    def asarray(self, a):
        return self.m.from_numpy(np.ascontiguousarray(a)).cuda()

    def empty(self, n, dtype="float32"):
        return self.m.empty((n,), dtype=getattr(self.m, dtype), device="cuda")

    def add(self, a, b, out):
        return self.m.add(a, b, out=out)

    def mul(self, a, b, out):
        return self.m.mul(a, b, out=out)

    def matmul(self, a, b):
        return self.m.matmul(a, b)

    def set_tf32(self, on):
        self.m.backends.cuda.matmul.allow_tf32 = on

    def host(self, n, pinned):
        t = self.m.ones(n, dtype=self.m.uint8)
        return t.pin_memory() if pinned else t


class Cupy(Framework):
    name = "cupy"

    def __init__(self, cp):
        self.m = cp
        import cupyx
        self.cupyx = cupyx

    def sync(self):
        self.m.cuda.runtime.deviceSynchronize()

    def event(self):
        return self.m.cuda.Event()

    def elapsed_ms(self, start, end):
        return self.m.cuda.get_elapsed_time(start, end)

    def asarray(self, a):
        return self.m.asarray(a)

    def empty(self, n, dtype="float32"):
        return self.m.empty((n,), dtype=dtype)

    def numpy(self, x):
        return self.m.asnumpy(x)

    def add(self, a, b, out):
        return self.m.add(a, b, out=out)

    def mul(self, a, b, out):
        return self.m.multiply(a, b, out=out)

    def copy(self, dst, src):
        self.m.copyto(dst, src)
        return dst

    def sum(self, x, dim=None):
        return x.sum(axis=dim)

    def max(self, x, dim=None):
        return x.max(axis=dim)

    def matmul(self, a, b):
        return self.m.matmul(a, b)

    def set_tf32(self, on):
        if on:
            raise RuntimeError("CuPy takes TF32 from CUPY_TF32 at import")

    def host(self, n, pinned):
        if pinned:
            h = self.cupyx.empty_pinned((n,), dtype=np.uint8)
            h[...] = 1
            return h
        return np.ones(n, dtype=np.uint8)

    def h2d(self, dst, src, pinned):
        dst.set(src)

    def d2h(self, dst, src, pinned):
        src.get(out=dst)

    def host_numpy(self, h):
        return np.asarray(h)


def frameworks():
    """ctorch first, then those of PyTorch and CuPy that import and see the GPU."""
    out = [Ctorch()]
    notes = {}
    try:
        import torch
        if torch.cuda.is_available():
            out.append(Torch(torch))
            notes["torch"] = torch.__version__
        else:
            notes["torch"] = "installed, no CUDA"
    except Exception as e:  # noqa: BLE001 -- reported, not fatal
        notes["torch"] = f"not importable ({type(e).__name__})"
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        out.append(Cupy(cupy))
        notes["cupy"] = cupy.__version__
    except Exception as e:  # noqa: BLE001
        notes["cupy"] = f"not importable ({type(e).__name__})"
    return out, notes


# --- timing -----------------------------------------------------------------------------------------
def gpu_ms(fw, fn, iters, rounds):
    """Median over rounds of the CUDA-event time of `iters` calls, per call, in ms."""
    fn()
    fw.sync()
    times = []
    for _ in range(rounds):
        start, end = fw.event(), fw.event()
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        times.append(fw.elapsed_ms(start, end) / iters)
    return statistics.median(times)


def host_us(fw, fn, iters, rounds):
    """Median over rounds of the wall time of `iters` calls issued without synchronising, per
    call, in microseconds (the GPU is drained between rounds, outside the timing)."""
    fn()
    fw.sync()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        times.append((time.perf_counter() - t0) / iters * 1e6)
        fw.sync()
    return statistics.median(times)


class Invalid(Exception):
    pass


def check(name, got, want, rtol=1e-5, atol=1e-6):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        raise Invalid(f"{name}: result differs from the reference")


def short(e):
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {text}"[:160]


# --- results ---------------------------------------------------------------------------------------
class Results:
    def __init__(self, fws):
        self.fws = fws
        self.rows = []

    def add(self, section, case, unit, values, note="", better="higher"):
        """values: framework name -> number, or an exception (reported as n/a / INVALID)."""
        row = {"section": section, "case": case, "unit": unit, "better": better, "note": note}
        for fw in self.fws:
            v = values.get(fw.name, NA)
            if isinstance(v, Invalid):
                row[fw.name] = "INVALID"
                row[fw.name + "_reason"] = str(v)
            elif isinstance(v, Exception):
                row[fw.name] = NA
                row[fw.name + "_reason"] = short(v)
            else:
                row[fw.name] = v
        self.rows.append(row)
        self.print_row(row)

    def header(self, section):
        names = "".join(f"{fw.name:>12}" for fw in self.fws)
        print(f"\n== {section}\n{'case':<34}{'unit':>10}{names}{'ctorch/torch':>14}  note")

    def print_row(self, row):
        cells = ""
        for fw in self.fws:
            v = row[fw.name]
            cells += f"{v:>12.4g}" if isinstance(v, float) else f"{v:>12}"
        ratio = ""
        c, t = row.get("ctorch"), row.get("torch")
        if isinstance(c, float) and isinstance(t, float) and t > 0:
            ratio = f"{c / t:.2f}"
        print(f"{row['case']:<34}{row['unit']:>10}{cells}{ratio:>14}  {row['note']}")


def measure(fws, fn):
    """fn(fw) -> number for each framework; exceptions are kept as values."""
    out = {}
    for fw in fws:
        try:
            out[fw.name] = float(fn(fw))
        except Exception as e:  # noqa: BLE001 -- "n/a" or "INVALID" in the table
            out[fw.name] = e
        finally:
            try:
                fw.sync()
            except Exception:  # noqa: BLE001
                pass
    return out


# --- 1. host time per op ---------------------------------------------------------------------------------
def bench_host_time(fws, res, size):
    res.header("1. host time per op (a + b, issued without synchronising)")
    n_ops = size["host_ops"]
    for n in (1, 1024):
        a_np = np.arange(n, dtype=np.float32)
        b_np = np.ones(n, dtype=np.float32)

        def run(fw):
            a, b = fw.asarray(a_np), fw.asarray(b_np)
            check(f"{fw.name} add", fw.numpy(a + b), a_np + b_np)
            return host_us(fw, lambda: a + b, n_ops, 5)

        res.add("host time", f"add {n} element{'s' if n > 1 else ''} x{n_ops}", "us/op", measure(fws, run),
                note="target: ctorch <= 0.5 x torch", better="lower")


# --- 2. bandwidth ----------------------------------------------------------------------------------------
def bench_bandwidth(fws, res, size):
    res.header("2. elementwise bandwidth, float32 (GB/s; add/mul move 12 B per element, copy 8 B)")
    powers = size["bandwidth_powers"]
    rng = np.random.default_rng(0)
    for p in powers:
        n = 1 << p
        a_np = rng.standard_normal(n, dtype=np.float32)
        b_np = rng.standard_normal(n, dtype=np.float32)
        iters = max(3, min(200, (1 << 28) // n))
        copy_gbs = {}
        for op in ("copy", "add", "mul"):
            def run(fw, op=op):
                a, b, c = fw.asarray(a_np), fw.asarray(b_np), fw.empty(n)
                if op == "copy":
                    fn = lambda: fw.copy(c, a)  # noqa: E731
                    want, nbytes = a_np, 8 * n
                else:
                    f = fw.add if op == "add" else fw.mul
                    fn = lambda: f(a, b, c)  # noqa: E731
                    want, nbytes = (a_np + b_np if op == "add" else a_np * b_np), 12 * n
                fn()
                got = fw.numpy(c)
                check(f"{fw.name} {op}", got[:4096], want[:4096])
                check(f"{fw.name} {op}", got[-4096:], want[-4096:])
                if p == powers[0]:
                    check(f"{fw.name} {op}", got, want)
                ms = gpu_ms(fw, fn, iters, 5)
                del a, b, c
                return nbytes / (ms * 1e-3) / 1e9

            vals = measure(fws, run)
            note = ""
            if op == "copy":
                copy_gbs = vals
                note = "device-to-device copy (same dtype, contiguous)"
            elif isinstance(vals.get("ctorch"), float) and isinstance(copy_gbs.get("ctorch"), float):
                note = f"ctorch at {100 * vals['ctorch'] / copy_gbs['ctorch']:.0f}% of its copy (target >= 90%)"
            res.add("bandwidth", f"{op} 2^{p}", "GB/s", vals, note=note)


# --- 3. reductions ---------------------------------------------------------------------------------------
def bench_reductions(fws, res, size):
    res.header("3. reductions, float32 (GB/s of input read)")
    rng = np.random.default_rng(1)
    flat = rng.standard_normal(1 << size["reduce_power"], dtype=np.float32)
    side = size["reduce_side"]
    mat = rng.standard_normal((side, side), dtype=np.float32)
    cases = [
        (f"sum 2^{int(np.log2(flat.size))}", flat, None, "sum", float(flat.astype(np.float64).sum())),
        (f"max 2^{int(np.log2(flat.size))}", flat, None, "max", float(flat.max())),
        (f"sum rows {side}x{side}", mat, 1, "sum", mat.astype(np.float64).sum(axis=1)),
        (f"max rows {side}x{side}", mat, 1, "max", mat.max(axis=1)),
    ]
    for name, x_np, dim, kind, want in cases:
        def run(fw, x_np=x_np, dim=dim, kind=kind, want=want):
            x = fw.asarray(x_np)
            f = fw.sum if kind == "sum" else fw.max
            got = fw.numpy(f(x, dim))
            check(f"{fw.name} {name}", got, want, rtol=1e-4 if kind == "sum" else 0, atol=1e-2 if kind == "sum" else 0)
            ms = gpu_ms(fw, lambda: f(x, dim), 20, 5)
            return x_np.nbytes / (ms * 1e-3) / 1e9

        res.add("reductions", name, "GB/s", measure(fws, run),
                note="deterministic in ctorch" if kind == "sum" else "")


# --- 4. matmul ---------------------------------------------------------------------------------------------
def reference64(fws, a_np, b_np):
    """The float64 product, on the GPU where a library can, else NumPy."""
    for fw in fws[::-1]:
        try:
            return fw.numpy(fw.matmul(fw.asarray(a_np.astype(np.float64)), fw.asarray(b_np.astype(np.float64))))
        except Exception:  # noqa: BLE001 -- try the next one
            continue
    return a_np.astype(np.float64) @ b_np.astype(np.float64)


def bench_matmul(fws, res, size):
    res.header("4. float32 matmul (TFLOP/s; relative error = |C - C64|_F / |C64|_F)")
    rng = np.random.default_rng(2)
    for n in size["matmul"]:
        a_np = rng.standard_normal((n, n), dtype=np.float32)
        b_np = rng.standard_normal((n, n), dtype=np.float32)
        ref = reference64(fws, a_np, b_np)
        ref_norm = np.linalg.norm(ref)
        for tf32 in (False, True):
            errors = {}

            def run(fw):
                fw.set_tf32(tf32)
                try:
                    a, b = fw.asarray(a_np), fw.asarray(b_np)
                    c = fw.numpy(fw.matmul(a, b))
                    err = float(np.linalg.norm(c.astype(np.float64) - ref) / ref_norm)
                    if err > (5e-3 if tf32 else 1e-5):
                        raise Invalid(f"{fw.name} matmul {n}: relative error {err:.2e}")
                    errors[fw.name] = err
                    iters = 3 if n >= 8192 else 10
                    ms = gpu_ms(fw, lambda: fw.matmul(a, b), iters, 3)
                    return 2.0 * n ** 3 / (ms * 1e-3) / 1e12
                finally:
                    try:
                        fw.set_tf32(False)
                    except Exception:  # noqa: BLE001
                        pass

            vals = measure(fws, run)
            note = " ".join(f"{k} err {v:.1e}" for k, v in errors.items()) + ("  target: ctorch >= 0.97 x torch")
            res.add("matmul", f"{n} TF32 {'on' if tf32 else 'off'}", "TFLOP/s", vals, note=note)


# --- 5. allocation ------------------------------------------------------------------------------------------
def bench_alloc(fws, res, size):
    res.header("5. device allocation + free (caching allocators, steady state)")
    for nbytes, label in ((4, "4 B"), (4096, "4 KiB"), (1 << 20, "1 MiB"), (100 << 20, "100 MiB")):
        def run(fw, nbytes=nbytes):
            x = fw.empty(nbytes, "uint8")
            del x
            return host_us(fw, lambda: fw.empty(nbytes, "uint8"), size["alloc_calls"], 5)

        res.add("alloc", f"empty + free {label}", "us", measure(fws, run), better="lower")


# --- 6. host <-> device copies --------------------------------------------------------------------------------
def bench_copies(fws, res, size):
    res.header("6. host <-> device copies (GB/s)")
    for nbytes, label in size["copies"]:
        for pinned in (True, False):
            for direction in ("h2d", "d2h"):
                def run(fw, nbytes=nbytes, pinned=pinned, direction=direction):
                    h = fw.host(nbytes, pinned)
                    d = fw.empty(nbytes, "uint8")
                    if direction == "h2d":
                        fn = lambda: fw.h2d(d, h, pinned)  # noqa: E731
                        fn()
                        fw.sync()
                        check(f"{fw.name} h2d", fw.numpy(d)[-4096:], np.ones(4096))
                    else:
                        fw.copy(d, fw.asarray(np.full(nbytes, 3, dtype=np.uint8)))
                        fn = lambda: fw.d2h(h, d, pinned)  # noqa: E731
                        fn()
                        fw.sync()
                        check(f"{fw.name} d2h", fw.host_numpy(h)[-4096:], np.full(4096, 3))
                    iters = max(2, min(50, (256 << 20) // nbytes))
                    ms = gpu_ms(fw, fn, iters, 5)
                    return nbytes / (ms * 1e-3) / 1e9

                res.add("copies", f"{direction} {label} {'pinned' if pinned else 'pageable'}", "GB/s",
                        measure(fws, run), note="target: ctorch >= 0.9 x torch" if pinned else "")


# The sizes of each mode: full (issue 3's list), --quick, and --smoke (every case once at toy sizes:
# a check that the script and the ops it calls run, e.g. on the CUDA emulator; its numbers mean nothing).
SIZES = {
    "full": {"host_ops": 100_000, "bandwidth_powers": (20, 22, 24, 26, 28), "reduce_power": 26, "reduce_side": 8192,
             "matmul": (1024, 4096, 8192, 10000), "alloc_calls": 20000,
             "copies": ((1 << 20, "1 MB"), (16 << 20, "16 MB"), (256 << 20, "256 MB"), (1 << 30, "1 GB"))},
    "quick": {"host_ops": 10_000, "bandwidth_powers": (20, 24), "reduce_power": 22, "reduce_side": 2048,
              "matmul": (1024, 2048), "alloc_calls": 2000, "copies": ((1 << 20, "1 MB"), (16 << 20, "16 MB"))},
    "smoke": {"host_ops": 100, "bandwidth_powers": (12,), "reduce_power": 12, "reduce_side": 64, "matmul": (64,),
              "alloc_calls": 20, "copies": ((1 << 16, "64 KB"),)},
}

SECTIONS = {1: bench_host_time, 2: bench_bandwidth, 3: bench_reductions, 4: bench_matmul, 5: bench_alloc,
            6: bench_copies}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer calls")
    parser.add_argument("--smoke", action="store_true", help="toy sizes: checks that every case runs, times nothing")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--sections", default="1,2,3,4,5,6", help="which sections, e.g. 1,2")
    args = parser.parse_args()

    if not ctorch.cuda.is_available():
        print("CUDA is not available to ctorch on this machine; no GPU benchmark was run.")
        try:
            ctorch.cuda.diagnose()
        except Exception as e:  # noqa: BLE001 -- diagnosis is best effort here
            print(f"(ctorch.cuda.diagnose() failed: {short(e)})")
        return 0

    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    fws, notes = frameworks()
    props = ctorch.cuda.get_device_properties(0)
    header = {
        "device": ctorch.cuda.get_device_name(0),
        "capability": "%d.%d" % ctorch.cuda.get_device_capability(0),
        "memory_gib": round(props.total_memory / 2 ** 30, 1),
        "ctorch_cuda": getattr(ctorch.version, "cuda", None),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "frameworks": [fw.name for fw in fws],
        "versions": notes,
        "mode": mode,
        "timing": "CUDA events, median of rounds; host times: wall clock, median of rounds",
    }
    print(f"GPU: {header['device']} (sm_{header['capability'].replace('.', '')}, {header['memory_gib']} GiB)")
    print(f"ctorch CUDA {header['ctorch_cuda']}, Python {header['python']}, NumPy {header['numpy']}, "
          + ", ".join(f"{k} {v}" for k, v in notes.items()))

    res = Results(fws)
    for s in (int(x) for x in args.sections.split(",") if x.strip()):
        SECTIONS[s](fws, res, SIZES[mode])
        for fw in fws:  # each section starts from an empty cache
            try:
                fw.sync()
                if fw.name == "torch":
                    fw.m.cuda.empty_cache()
                elif fw.name == "ctorch":
                    ctorch.cuda.empty_cache()
                elif fw.name == "cupy":
                    fw.m.get_default_memory_pool().free_all_blocks()
            except Exception:  # noqa: BLE001
                pass

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "results": res.rows}, f, indent=1)
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
