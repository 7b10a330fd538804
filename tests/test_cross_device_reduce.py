"""Cross-device tests of the reduction family: every op on CPU and CUDA over dtypes x layouts x
shapes x dims, compared (exactly for integers, bools, indices and sorts; within the dtype's
tolerance for floating results, whose summation order differs between the devices), errors
compared by type and message, and every CUDA result computed twice to check determinism (the
same input gives the same bits; not on the CUDA emulator in its default thread order, which is
deterministic by construction: there the second run could only repeat the first). Skipped where
CUDA is not available.

The shapes are chosen to reach every kernel path: a warp per row, a block per row, chunked rows
with a second pass, columns (one thread per output), the one-thread-per-line scans and softmax,
the bitonic sort (lines up to 2048) and the radix sorts (one long line, batches of lines).

CTORCH_CROSS_DEVICE_DRY_RUN=1 runs the file with the CPU standing in for CUDA, to check the
test code itself on a machine without a GPU."""
import math
import os
import zlib

import numpy as np
import pytest

import ctorch
from conftest import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, to_numpy

DRY_RUN = os.environ.get("CTORCH_CROSS_DEVICE_DRY_RUN") == "1"
DEV = "cpu" if DRY_RUN else "cuda"
pytestmark = [pytest.mark.skipif(not DRY_RUN and not ctorch.cuda.is_available(), reason="CUDA not available"),
              pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")]

# the emulator (tests/cuda_emu) runs each block's threads one at a time in a fixed order unless
# CT_EMU_ORDER asks for another: a second run of the same kernel cannot differ there
REPEAT = DRY_RUN or not (ctorch.cuda.is_available() and ctorch.cuda.get_device_name(0).startswith("ctorch CUDA emulator")
                         and not os.environ.get("CT_EMU_ORDER"))

RTOL = {"float64": 1e-9, "float32": 1e-4, "float16": 4e-3, "bfloat16": 3.2e-2}

# (shape, layout): small tensors in every layout, bigger ones contiguous and transposed
CASES = [((3, 4, 5), "contiguous"), ((3, 4, 5), "transposed"), ((3, 4, 5), "narrowed"), ((3, 4, 5), "expanded"),
         ((2, 3, 700), "contiguous"), ((2, 3, 700), "transposed"), ((2, 2, 9000), "contiguous"),
         ((2000, 3, 2), "contiguous"), ((2000, 3, 2), "transposed"), ((5, 40, 33), "narrowed")]
DIMS = [None, 0, 1, -1, (0, 2)]
INT_DIMS = [None, 0, 1, -1]


def make(arr, dtype, layout, device):
    kw = {"dtype": getattr(ctorch, dtype), "device": device}
    if layout == "contiguous":
        return ctorch.tensor(arr, **kw)
    if layout == "transposed":
        return ctorch.tensor(np.ascontiguousarray(arr.transpose(2, 1, 0)), **kw).permute(2, 1, 0)
    if layout == "narrowed":
        big = np.concatenate([arr[:, :1], arr, arr[:, :2]], axis=1)
        return ctorch.tensor(big, **kw).narrow(1, 1, arr.shape[1])
    if layout == "expanded":
        return ctorch.tensor(arr[:, :1, :], **kw).expand(*arr.shape)
    raise ValueError(layout)


def data(dtype, shape, rng, kind="normal"):
    """Values representable in dtype; integers small (ties); floats with NaN/inf for kind 'nan'."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INT_DTYPES:
        lo = 0 if dtype == "uint8" else -4
        return rng.integers(lo, 5, size=shape)
    if kind == "near_one":
        return rng.uniform(0.9, 1.1, size=shape)
    a = rng.standard_normal(shape)
    if dtype in ("float16", "bfloat16"):
        a = np.round(a * 8) / 8  # exactly representable: both devices start from the same values
    if kind == "nan":
        flat = a.reshape(-1)
        idx = rng.choice(flat.size, size=max(1, flat.size // 50), replace=False)
        flat[idx[0::3]] = np.nan
        flat[idx[1::3]] = np.inf
        flat[idx[2::3]] = -np.inf
    return a


def outputs(r):
    """The tensors of a result (a tensor, a tuple or a named tuple)."""
    if isinstance(r, (tuple, list)):
        return list(r)
    return [r]


def bits(t):
    a = to_numpy(t)
    return a.dtype.str, a.shape, a.tobytes()


def compare(cpu, gpu, dtype, what):
    c, g = outputs(cpu), outputs(gpu)
    assert len(c) == len(g), what
    for k, (x, y) in enumerate(zip(c, g)):
        assert str(y.device).startswith(DEV), f"{what}: output {k} on {y.device}"
        assert x.dtype == y.dtype, f"{what}: output {k} dtype {x.dtype} vs {y.dtype}"
        assert tuple(x.shape) == tuple(y.shape), f"{what}: output {k} shape {tuple(x.shape)} vs {tuple(y.shape)}"
        a, b = to_numpy(x), to_numpy(y)
        name = str(x.dtype).replace("torch.", "").replace("ctorch.", "")
        if a.dtype.kind == "f":
            r = RTOL.get(name, 1e-9)
            finite = a[np.isfinite(a)]
            scale = max(1.0, float(np.max(np.abs(finite))) if finite.size else 1.0)
            np.testing.assert_allclose(b.astype(np.float64), a.astype(np.float64), rtol=r, atol=r * scale,
                                       equal_nan=True, err_msg=f"{what}: output {k}")
        else:
            np.testing.assert_array_equal(b, a, err_msg=f"{what}: output {k}")


def run_both(fn, tc, tg, dtype, what):
    """fn on the CPU and CUDA tensors: the same error, or close results; CUDA twice, same bits."""
    try:
        cpu = fn(tc)
    except Exception as e:  # the CUDA op must fail the same way
        with pytest.raises(type(e)) as info:
            fn(tg)
        assert str(info.value) == str(e), what
        return
    gpu = fn(tg)
    compare(cpu, gpu, dtype, what)
    if not REPEAT:
        return
    again = fn(tg)
    for k, (x, y) in enumerate(zip(outputs(gpu), outputs(again))):
        assert bits(x) == bits(y), f"{what}: output {k} differs between two CUDA runs"


def kw_dim(dim, keepdim=False):
    if dim is None:
        return {}
    return {"dim": dim, "keepdim": keepdim} if keepdim else {"dim": dim}


# --- the ops: name -> (fn(t, dim), dims, data kind) --------------------------------------------------------
def _norm(p):
    return lambda t, d: ctorch.norm(t, p=p, dim=d) if d is not None else ctorch.norm(t, p=p)


OPS = {
    "sum": (lambda t, d: t.sum(**kw_dim(d)), DIMS, "normal"),
    "sum_keepdim": (lambda t, d: t.sum(**kw_dim(d, True)) if d is not None else t.sum(), DIMS, "normal"),
    "sum_dtype_f64": (lambda t, d: t.sum(dtype=ctorch.float64, **kw_dim(d)), DIMS, "normal"),
    "nansum": (lambda t, d: ctorch.nansum(t, **kw_dim(d)), DIMS, "nan"),
    "mean": (lambda t, d: t.mean(**kw_dim(d)), DIMS, "normal"),
    "prod": (lambda t, d: t.prod(**kw_dim(d)), INT_DIMS, "near_one"),
    "max": (lambda t, d: t.max() if d is None else t.max(d), INT_DIMS, "normal"),
    "min_keepdim": (lambda t, d: t.min() if d is None else t.min(d, keepdim=True), INT_DIMS, "normal"),
    "max_nan": (lambda t, d: t.max() if d is None else t.max(d), INT_DIMS, "nan"),
    "amax": (lambda t, d: ctorch.amax(t, dim=d if d is not None else ()), DIMS, "nan"),
    "amin": (lambda t, d: ctorch.amin(t, dim=d if d is not None else ()), DIMS, "normal"),
    "aminmax": (lambda t, d: ctorch.aminmax(t, dim=d) if d is not None else ctorch.aminmax(t), INT_DIMS, "normal"),
    "argmax": (lambda t, d: t.argmax(**kw_dim(d)), INT_DIMS, "normal"),
    "argmin_nan": (lambda t, d: t.argmin(**kw_dim(d)), INT_DIMS, "nan"),
    "argmax_keepdim": (lambda t, d: t.argmax(dim=d, keepdim=True), INT_DIMS, "normal"),
    "var": (lambda t, d: t.var(**kw_dim(d)), DIMS, "normal"),
    "std_correction0": (lambda t, d: t.std(correction=0, **kw_dim(d)), DIMS, "normal"),
    "var_mean": (lambda t, d: ctorch.var_mean(t, **kw_dim(d)), DIMS, "normal"),
    "std_mean": (lambda t, d: ctorch.std_mean(t, **kw_dim(d)), DIMS, "normal"),
    "norm2": (_norm(2), DIMS, "normal"),
    "norm1": (_norm(1), DIMS, "normal"),
    "norm_inf": (_norm(math.inf), DIMS, "normal"),
    "norm_neg_inf": (_norm(-math.inf), DIMS, "normal"),
    "norm0": (_norm(0), DIMS, "normal"),
    "norm3": (_norm(3.0), DIMS, "normal"),
    "norm_fro": (_norm("fro"), [None, (0, 2)], "normal"),
    "logsumexp": (lambda t, d: ctorch.logsumexp(t, dim=d if d is not None else (0, 1, 2)), DIMS, "normal"),
    "logsumexp_inf": (lambda t, d: ctorch.logsumexp(t, dim=d if d is not None else (0, 1, 2)), DIMS, "nan"),
    "all": (lambda t, d: t.all(**kw_dim(d)), DIMS, "normal"),
    "any": (lambda t, d: t.any(**kw_dim(d)), DIMS, "normal"),
    "count_nonzero": (lambda t, d: ctorch.count_nonzero(t, **kw_dim(d)), DIMS, "normal"),
    "cumsum": (lambda t, d: t.cumsum(d if d is not None else -1), INT_DIMS, "normal"),
    "cumsum_f64": (lambda t, d: t.cumsum(d if d is not None else 0, dtype=ctorch.float64), INT_DIMS, "normal"),
    "cumprod": (lambda t, d: t.cumprod(d if d is not None else -1), INT_DIMS, "near_one"),
    "softmax": (lambda t, d: t.softmax(d if d is not None else -1), INT_DIMS, "normal"),
    "log_softmax": (lambda t, d: t.log_softmax(d if d is not None else 0), INT_DIMS, "normal"),
    "softmax_nan": (lambda t, d: t.softmax(d if d is not None else -1), INT_DIMS, "nan"),
    "sort": (lambda t, d: t.sort(**kw_dim(d)), INT_DIMS, "normal"),
    "sort_desc_nan": (lambda t, d: t.sort(descending=True, **kw_dim(d)), INT_DIMS, "nan"),
    "sort_nan": (lambda t, d: t.sort(**kw_dim(d)), INT_DIMS, "nan"),
    "argsort": (lambda t, d: t.argsort(**kw_dim(d)), INT_DIMS, "normal"),
    "argsort_desc": (lambda t, d: t.argsort(descending=True, **kw_dim(d)), INT_DIMS, "normal"),
    "topk": (lambda t, d: t.topk(2, **kw_dim(d)), INT_DIMS, "normal"),
    "topk_smallest_nan": (lambda t, d: t.topk(3, largest=False, **kw_dim(d)), INT_DIMS, "nan"),
    "median": (lambda t, d: t.median() if d is None else t.median(d), INT_DIMS, "normal"),
    "median_nan": (lambda t, d: t.median() if d is None else t.median(d, keepdim=True), INT_DIMS, "nan"),
    "cummax_nan": (lambda t, d: t.cummax(d if d is not None else -1), INT_DIMS, "nan"),
    "nanmedian_nan": (lambda t, d: t.nanmedian() if d is None else t.nanmedian(d), INT_DIMS, "nan"),
}


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", list(OPS))
def test_op_cpu_vs_cuda(op, dtype):
    fn, dims, kind = OPS[op]
    if kind == "nan" and dtype not in FLOAT_DTYPES:
        kind = "normal"
    rng = np.random.default_rng(zlib.crc32(f"{op} {dtype}".encode()))
    for shape, layout in CASES:
        arr = data(dtype, shape, rng, kind)
        tc = make(arr, dtype, layout, "cpu")
        tg = make(arr, dtype, layout, DEV)
        for dim in dims:
            run_both(lambda t: fn(t, dim), tc, tg, dtype, f"{op} {dtype} {shape} {layout} dim={dim}")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", ["sum", "mean", "max", "amin", "argmax", "var", "norm2", "logsumexp", "all", "any",
                                "count_nonzero", "cumsum", "softmax", "sort", "topk", "median", "prod", "argmin_nan"])
@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (3, 0), (1,), (1, 1, 1)], ids=str)
def test_small_and_empty(op, dtype, shape):
    fn, dims, kind = OPS[op]
    rng = np.random.default_rng(3)
    arr = np.asarray(data(dtype, shape if shape else (1,), rng, "normal")).reshape(shape)
    tc = ctorch.tensor(arr, dtype=getattr(ctorch, dtype))
    tg = ctorch.tensor(arr, dtype=getattr(ctorch, dtype), device=DEV)
    for dim in ([None, 0, -1] if len(shape) else [None, 0]):
        if op in ("topk",) and dim is None:
            continue
        run_both(lambda t: fn(t, dim), tc, tg, dtype, f"{op} {dtype} {shape} dim={dim}")
    if op == "topk":
        run_both(lambda t: t.topk(0), tc, tg, dtype, f"topk(0) {dtype} {shape}")


# --- large reductions: chunked partials, full reductions, the radix sorts -------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int64", "int32", "uint8", "bool"])
def test_large_full_reductions(dtype):
    rng = np.random.default_rng(7)
    n = (1 << 20) + 3  # 64-128 chunks for 4- and 8-byte dtypes: the warp combining them takes several a lane
    arr = data(dtype, (n,), rng, "normal")
    tc = ctorch.tensor(arr, dtype=getattr(ctorch, dtype))
    tg = ctorch.tensor(arr, dtype=getattr(ctorch, dtype), device=DEV)
    for name, fn in [("sum", lambda t: t.sum()), ("max", lambda t: t.max()), ("min", lambda t: t.min()),
                     ("argmax", lambda t: t.argmax()), ("argmin", lambda t: t.argmin()),
                     ("mean", lambda t: t.mean()), ("norm", lambda t: ctorch.norm(t)),
                     ("any", lambda t: t.any()), ("all", lambda t: t.all()),
                     ("count_nonzero", lambda t: ctorch.count_nonzero(t)),
                     ("unaligned sum", lambda t: t[1:].sum()), ("strided max", lambda t: t[::3].max())]:
        run_both(fn, tc, tg, dtype, f"{name} {dtype} n={n}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_large_sum_is_accurate(dtype):
    """The chunked two-pass sum of 2^24 values stays close to the exact sum (pairwise-like error)."""
    rng = np.random.default_rng(11)
    arr = rng.uniform(0, 1, size=1 << 24)
    if dtype == "float16":
        arr = np.round(arr * 64) / 64
    t = ctorch.tensor(arr, dtype=getattr(ctorch, dtype), device=DEV)
    exact = float(np.sum(to_numpy(t.cpu()).astype(np.float64)))
    got = float(to_numpy(t.sum(dtype=ctorch.float32 if dtype == "float16" else None)))
    assert abs(got - exact) <= 1e-5 * exact


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "uint8", "float16", "bfloat16", "bool"])
@pytest.mark.parametrize("shape,dim", [((100003,), 0), ((7, 5000), 1), ((5000, 7), 0), ((3, 2049), -1),
                                       ((300, 2049), 1)], ids=str)
def test_large_sorts(dtype, shape, dim):
    rng = np.random.default_rng(5)
    arr = data(dtype, shape, rng, "nan" if dtype in FLOAT_DTYPES else "normal")
    tc = ctorch.tensor(arr, dtype=getattr(ctorch, dtype))
    tg = ctorch.tensor(arr, dtype=getattr(ctorch, dtype), device=DEV)
    run_both(lambda t: t.sort(dim=dim), tc, tg, dtype, f"sort {shape}")
    run_both(lambda t: t.sort(dim=dim, descending=True), tc, tg, dtype, f"sort desc {shape}")
    run_both(lambda t: t.topk(5, dim=dim), tc, tg, dtype, f"topk {shape}")
    run_both(lambda t: t.topk(4, dim=dim, largest=False), tc, tg, dtype, f"topk smallest {shape}")
    run_both(lambda t: t.median(dim=dim), tc, tg, dtype, f"median {shape}")
    run_both(lambda t: t.argmax(dim=dim), tc, tg, dtype, f"argmax {shape}")
    run_both(lambda t: t.cumsum(dim=dim), tc, tg, dtype, f"cumsum {shape}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_long_lines(dtype):
    """Scans and softmax of single long lines (a block per line) and of many short strided lines."""
    rng = np.random.default_rng(9)
    for shape, dim in [((1, 300000), 1), ((300000, 2), 0), ((40000, 3), 1), ((3, 40000), 0)]:
        arr = data(dtype, shape, rng, "normal")
        tc = ctorch.tensor(arr, dtype=getattr(ctorch, dtype))
        tg = ctorch.tensor(arr, dtype=getattr(ctorch, dtype), device=DEV)
        run_both(lambda t: t.softmax(dim), tc, tg, dtype, f"softmax {shape} {dim}")
        run_both(lambda t: t.log_softmax(dim), tc, tg, dtype, f"log_softmax {shape} {dim}")
        run_both(lambda t: t.cumsum(dim, dtype=ctorch.float64), tc, tg, dtype, f"cumsum {shape} {dim}")
        run_both(lambda t: t.logsumexp(dim), tc, tg, dtype, f"logsumexp {shape} {dim}")


def test_nan_semantics():
    """NaN propagates through max/min/amax, is the greatest for argmax and sort, the median of a
    line that has one (its first position), and is skipped by nansum: as on the CPU."""
    arr = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 5.0, -1.0, 0.0], [np.nan, -np.inf, np.inf, -0.0]])
    tc = ctorch.tensor(arr)
    tg = ctorch.tensor(arr, device=DEV)
    for name, fn in [("max", lambda t: t.max(1)), ("min", lambda t: t.min(1)), ("amax", lambda t: t.amax(1)),
                     ("argmax", lambda t: t.argmax(1)), ("argmin", lambda t: t.argmin(1)),
                     ("sort", lambda t: t.sort(1)), ("sort desc", lambda t: t.sort(1, descending=True)),
                     ("median", lambda t: t.median(1)), ("median all", lambda t: t.median()),
                     ("nansum", lambda t: t.nansum(1)), ("sum", lambda t: t.sum(1)),
                     ("topk", lambda t: t.topk(2, 1)), ("cumsum", lambda t: t.cumsum(1)),
                     ("softmax", lambda t: t.softmax(1)), ("logsumexp", lambda t: t.logsumexp(1))]:
        run_both(fn, tc, tg, "float64", name)


def test_stable_sort_with_ties():
    """Equal keys keep their input order (also -0.0 and 0.0, and NaNs among themselves)."""
    arr = np.array([0.0, -0.0, 1.0, np.nan, 1.0, -0.0, np.nan, 0.0, 1.0] * 300)
    for dtype in ["float32", "float16", "float64"]:
        tc = ctorch.tensor(arr, dtype=getattr(ctorch, dtype))
        tg = ctorch.tensor(arr, dtype=getattr(ctorch, dtype), device=DEV)
        for descending in (False, True):
            run_both(lambda t: t.sort(descending=descending), tc, tg, dtype, f"sort {dtype} desc={descending}")
            run_both(lambda t: t[:500].sort(descending=descending), tc, tg, dtype, f"short sort {dtype}")


def test_results_stay_on_the_device():
    t = ctorch.tensor([[3.0, 1.0], [2.0, 4.0]], device=DEV)
    for r in [t.sum(), t.max(0).values, t.max(0).indices, t.sort(1).indices, t.cumsum(0), t.softmax(1),
              t.median(), t.var(0), t.topk(1, 1).values, t.argmax()]:
        assert str(r.device) == ("cpu" if DRY_RUN else "cuda:0")


def test_kthvalue_mode_msort_quantile():
    """kthvalue and mode (the sorts' k-th position and longest run) and the compositions msort and
    quantile on both sort paths (bitonic lines, radix-sorted long lines), with ties and NaNs."""
    rng = np.random.default_rng(11)
    for dtype in ["float32", "int16", "float16", "bool"]:
        for shape, layout in [((3, 4, 5), "transposed"), ((2, 3, 2100), "contiguous")]:
            arr = data(dtype, shape, rng, "nan" if dtype in FLOAT_DTYPES else "normal")
            if dtype in FLOAT_DTYPES:
                arr = np.round(arr)  # ties for mode
            tc, tg = make(arr, dtype, layout, "cpu"), make(arr, dtype, layout, DEV)
            what = f"{dtype} {shape}"
            run_both(lambda t: t.mode(), tc, tg, dtype, f"mode {what}")
            run_both(lambda t: t.mode(0, keepdim=True), tc, tg, dtype, f"mode dim 0 {what}")
            if dtype != "bool":  # its error names the device's kernel, as PyTorch's
                run_both(lambda t: t.kthvalue(2, 1), tc, tg, dtype, f"kthvalue {what}")
                run_both(lambda t: t.kthvalue(t.shape[-1]), tc, tg, dtype, f"kthvalue last {what}")
            run_both(lambda t: ctorch.msort(t), tc, tg, dtype, f"msort {what}")
            run_both(lambda t: ctorch.quantile(t, 0.3, dim=-1), tc, tg, dtype, f"quantile {what}")
            q = ctorch.tensor([0.1, 0.5, 0.9], dtype=getattr(ctorch, dtype))
            run_both(lambda t: ctorch.nanquantile(t, q.to(t.device), dim=1, keepdim=True,
                                                  interpolation="nearest"), tc, tg, dtype, f"nanquantile {what}")
