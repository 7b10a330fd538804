"""Every elementwise op on the CPU and on CUDA, compared: op x dtype x layout (contiguous, transposed,
broadcast, expanded, misaligned slices, 0-d, empty, large, a 0-d device tensor, a 0-d CPU tensor, a
Python number, mixed dtypes), in-place and out= variants, and the rules of mixing a CUDA tensor
with CPU scalars. The CPU result is the oracle; the CUDA one must have the same dtype and shape,
live on the GPU, and agree to a few units in the last place of its dtype (the GPU's libm and
fused multiply-adds differ from the CPU's by that much); integer and bool results are exact.
Where the CPU raises, CUDA must raise the same exception type.

Skipped where CUDA is not available. Every test id mentions cuda, so that scripts/gpu_check.sh runs
them under compute-sanitizer too. CTORCH_CROSS_DEVICE_SELFTEST=1 runs the same comparisons
with the CPU standing in for the GPU, to check this file's own logic on a machine without one."""
import os
import zlib

import numpy as np
import pytest

import ctorch
from conftest import to_numpy

SELFTEST = os.environ.get("CTORCH_CROSS_DEVICE_SELFTEST") == "1"
GPU = "cpu" if SELFTEST else "cuda"


def _cuda_ok():
    try:
        return ctorch.cuda.is_available()
    except AttributeError:
        return False


pytestmark = pytest.mark.skipif(not SELFTEST and not _cuda_ok(), reason="CUDA not available")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOATS = {"float16", "bfloat16", "float32", "float64"}
INTS = {"uint8", "int8", "int16", "int32", "int64"}
# |gpu - cpu| <= ATOL + RTOL * |cpu|: a few ulps of the result dtype
TOL = {"float64": (1e-10, 1e-12), "float32": (2e-5, 1e-5), "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2)}
# a dtype of the other operand for the mixed-dtype layout
OTHER_DTYPE = {"bool": "uint8", "uint8": "int16", "int8": "int32", "int16": "int64", "int32": "float32",
               "int64": "float64", "float16": "float32", "bfloat16": "float16", "float32": "float64",
               "float64": "int32"}


def seed(*parts):
    return zlib.crc32(" ".join(parts).encode())


def dt(name):
    return getattr(ctorch, name)


def dtype_name(d):
    return str(d).split(".")[-1]


# --- the ops -------------------------------------------------------------------------------------
class Op:
    """name, arity, f(*operands) on ctorch tensors/numbers; zero_divisor: integer inputs after the
    first must not be 0 (the CPU raises ZeroDivisionError there, CUDA does not); shift: input 1 is
    a shift amount; cond: input 0 is a bool condition; method: name of the in-place method."""

    def __init__(self, name, arity, f, zero_divisor=False, shift=False, cond=False, inplace=None, out=True):
        self.name, self.arity, self.f = name, arity, f
        self.zero_divisor, self.shift, self.cond = zero_divisor, shift, cond
        self.inplace, self.out = inplace, out

    def __repr__(self):
        return self.name


def _fn(name):
    return lambda *a, **k: getattr(ctorch, name)(*a, **k)


UNARY_NAMES = ["neg", "abs", "sign", "square", "relu", "floor", "ceil", "round", "trunc", "frac", "exp", "exp2",
               "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "asin",
               "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "sigmoid",
               "logical_not", "bitwise_not", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit",
               "nan_to_num"]
NO_INPLACE = {"isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"}
OPS = [Op(n, 1, _fn(n), inplace=None if n in NO_INPLACE else n + "_") for n in UNARY_NAMES] + [
    Op("silu", 1, _fn("silu"), out=False),
    Op("gelu", 1, _fn("gelu"), out=False),
    Op("gelu_tanh", 1, lambda x: ctorch.gelu(x, approximate="tanh"), out=False),
    Op("softplus", 1, lambda x: ctorch.softplus(x, 2.0, 1.5), out=False),
    Op("round_decimals", 1, lambda x, **k: ctorch.round(x, decimals=2, **k)),
    Op("round_neg_decimals", 1, lambda x, **k: ctorch.round(x, decimals=-1, **k)),
    Op("nan_to_num_args", 1, lambda x, **k: ctorch.nan_to_num(x, 1.5, 100.0, -100.0, **k)),
]
BINARY_NAMES = ["add", "sub", "mul", "true_divide", "remainder", "fmod", "floor_divide", "pow", "atan2", "copysign",
                "hypot", "logaddexp", "logaddexp2", "maximum", "minimum", "fmax", "fmin", "clamp_min", "clamp_max",
                "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and",
                "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "float_power"]
DIVISIONS = {"remainder", "fmod", "floor_divide", "div_trunc", "div_floor"}
NO_BINARY_INPLACE = {"logaddexp", "logaddexp2", "maximum", "minimum", "fmax", "fmin"}
OPS += [Op(n, 2, _fn(n), zero_divisor=n in DIVISIONS, shift="shift" in n,
           inplace=None if n in NO_BINARY_INPLACE else n + "_") for n in BINARY_NAMES] + [
    Op("div_trunc", 2, lambda a, b, **k: ctorch.div(a, b, rounding_mode="trunc", **k), zero_divisor=True),
    Op("div_floor", 2, lambda a, b, **k: ctorch.div(a, b, rounding_mode="floor", **k), zero_divisor=True),
    Op("add_alpha", 2, lambda a, b, **k: ctorch.add(a, b, alpha=2, **k)),
    Op("sub_alpha", 2, lambda a, b, **k: ctorch.sub(a, b, alpha=2, **k)),
    Op("rsub", 2, lambda a, b: ctorch.rsub(a, b), out=False),
    Op("where", 3, _fn("where"), cond=True),
    Op("clamp", 3, lambda x, lo, hi, **k: ctorch.clamp(x, lo, hi, **k), inplace="clamp_"),
    Op("lerp", 3, _fn("lerp"), inplace="lerp_"),
    Op("addcmul", 3, lambda a, b, c, **k: ctorch.addcmul(a, b, c, value=2, **k), inplace="addcmul_"),
    Op("addcmul_float_value", 3, lambda a, b, c, **k: ctorch.addcmul(a, b, c, value=0.5, **k)),
    Op("addcdiv", 3, lambda a, b, c, **k: ctorch.addcdiv(a, b, c, value=0.5, **k), inplace="addcdiv_"),
]


# --- inputs and layouts --------------------------------------------------------------------------
def values(rng, op, k, dtype, shape):
    """NumPy values for input k (bfloat16 as float32): specials in floats, no zero divisors."""
    if dtype == "bool" or (op.cond and k == 0):
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in INTS:
        info = np.iinfo(dtype)
        lo, hi = max(-6, int(info.min)), min(7, int(info.max) + 1)
        if op.shift and k == 1:
            lo, hi = -1, info.bits + 2
        a = rng.integers(lo, hi, shape).astype(dtype)
        if op.zero_divisor and k >= 1:
            a[a == 0] = 1
        return a
    a = rng.uniform(-3.0, 3.0, shape).astype(np.float32 if dtype == "bfloat16" else dtype)
    flat = a.reshape(-1)
    if flat.size >= 12:
        flat[[1, 5, 7, 10]] = [np.nan, np.inf, -np.inf, -0.0]
    return a


def on(arr, dtype, device):
    return ctorch.tensor(arr, dtype=dt(dtype), device=device)


LAYOUTS = ["contiguous", "transposed", "broadcast", "expanded", "sliced", "zero_d", "empty", "large",
           "device_scalar", "cpu_scalar", "python_scalar", "mixed_dtype"]


def build(layout, op, dtype, rng):
    """Returns make(device) -> list of operands, so that both devices get the same values."""
    n = op.arity
    dts = ["bool" if op.cond and k == 0 else dtype for k in range(n)]
    if layout == "mixed_dtype":
        dts[-1] = OTHER_DTYPE[dts[-1]] if n > 1 else dts[-1]
    if layout in ("contiguous", "transposed", "sliced", "device_scalar", "cpu_scalar", "python_scalar",
                  "mixed_dtype"):
        shapes = [(4, 33)] * n
    elif layout == "broadcast":
        shapes = [(4, 1)] + [(33,)] * (n - 1)
    elif layout == "expanded":
        shapes = [(1, 33)] * n
    elif layout == "zero_d":
        shapes = [()] * n
    elif layout == "empty":
        shapes = [(0, 33)] * n
    else:  # large: many blocks (32 to 256 of kThreads x the vector width) and the vector tail
        shapes = [((1 << 16) + 3,)] * n
    arrays = [values(rng, op, k, dts[k], shapes[k]) for k in range(n)]
    scalar_last = layout in ("device_scalar", "cpu_scalar", "python_scalar") and n > 1
    if scalar_last:
        arrays[-1] = arrays[-1].reshape(-1)[2:3].reshape(())

    def make(device):
        out = []
        for k, (a, d) in enumerate(zip(arrays, dts)):
            last = k == n - 1
            if scalar_last and last:
                if layout == "python_scalar":
                    out.append(a.item())
                else:
                    out.append(on(a, d, "cpu" if layout == "cpu_scalar" else device))
            elif layout == "transposed":
                out.append(on(np.ascontiguousarray(a.T), d, device).t())
            elif layout == "expanded":
                out.append(on(a, d, device).expand(4, 33))
            elif layout == "sliced":  # one element in: misaligned for every vector width
                big = np.zeros((a.shape[0], a.shape[1] + 1), dtype=a.dtype)
                big[:, 1:] = a
                out.append(on(big, d, device).narrow(1, 1, a.shape[1]))
            else:
                out.append(on(a, d, device))
        return out

    return make


# --- comparing -----------------------------------------------------------------------------------
def run(f):
    try:
        return f(), None
    except Exception as e:  # noqa: BLE001 -- the exception itself is what is compared
        return None, e


def same_error(cpu_err, gpu_err):
    assert gpu_err is not None, f"the CPU raised {cpu_err!r}, the GPU did not"
    assert type(gpu_err) is type(cpu_err), f"CPU raised {cpu_err!r}, GPU raised {gpu_err!r}"
    text = str(cpu_err)
    if "not implemented for" in text:
        assert str(gpu_err).endswith(text[text.index("not implemented for"):])
    elif "same device" not in str(gpu_err):
        assert str(gpu_err) == text


def assert_same(cpu, gpu, where="", tol=None):
    """tol: (rtol, atol) instead of the result dtype's, for results computed in another precision."""
    if isinstance(cpu, tuple):
        for c, g in zip(cpu, gpu):
            assert_same(c, g, where, tol)
        return
    assert isinstance(gpu, ctorch.Tensor), where
    assert gpu.dtype == cpu.dtype, f"{where}: dtype {gpu.dtype} != {cpu.dtype}"
    assert tuple(gpu.shape) == tuple(cpu.shape), f"{where}: shape {tuple(gpu.shape)} != {tuple(cpu.shape)}"
    assert str(gpu.device).startswith(GPU), f"{where}: result on {gpu.device}"
    c, g = to_numpy(cpu), to_numpy(gpu)
    name = dtype_name(cpu.dtype)
    if name in TOL:
        rtol, atol = tol or TOL[name]
        np.testing.assert_allclose(g.astype(np.float64), c.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(g, c, err_msg=where)


def compare(f, cpu_args, gpu_args, where):
    cpu, cpu_err = run(lambda: f(*cpu_args))
    gpu, gpu_err = run(lambda: f(*gpu_args))
    if cpu_err is not None:
        same_error(cpu_err, gpu_err)
        return None, None
    assert gpu_err is None, f"{where}: the GPU raised {gpu_err!r}, the CPU did not"
    assert_same(cpu, gpu, where)
    return cpu, gpu


# --- every op x dtype x layout -------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS, ids=repr)
def test_op_cpu_vs_cuda(op, dtype):
    rng = np.random.default_rng(seed(op.name, dtype))
    for layout in LAYOUTS:
        if op.arity == 1 and layout in ("device_scalar", "cpu_scalar", "python_scalar", "mixed_dtype"):
            continue
        make = build(layout, op, dtype, rng)
        with np.errstate(all="ignore"):
            compare(op.f, make("cpu"), make(GPU), f"{op.name} {dtype} {layout}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", [op for op in OPS if op.inplace], ids=repr)
def test_inplace_cpu_vs_cuda(op, dtype):
    """self.op_(...) on a transposed view: the write lands in the base on both devices."""
    rng = np.random.default_rng(seed(op.name, dtype, "inplace"))
    make = build("transposed", op, dtype, rng)
    cpu_args, gpu_args = make("cpu"), make(GPU)
    cpu_self, gpu_self = cpu_args[0].t().clone().t(), gpu_args[0].t().clone().t()  # transposed views

    def inplace(self_, *rest):
        r = getattr(self_, op.inplace)(*rest)
        assert r is self_
        return self_

    cpu, cpu_err = run(lambda: inplace(cpu_self, *cpu_args[1:]))
    gpu, gpu_err = run(lambda: inplace(gpu_self, *gpu_args[1:]))
    if cpu_err is not None:
        same_error(cpu_err, gpu_err)
        return
    assert gpu_err is None, f"the GPU raised {gpu_err!r}"
    assert_same(cpu, gpu, f"{op.name}_ {dtype}")


@pytest.mark.parametrize("out_dtype", ["float64", "float32", "int64", "bool"])
@pytest.mark.parametrize("op", [op for op in OPS if op.out], ids=repr)
def test_out_cpu_vs_cuda(op, out_dtype):
    """out= of another dtype than the result's: converted on store (or refused) alike."""
    for dtype in ("float16", "float32", "int32", "bool"):
        rng = np.random.default_rng(seed(op.name, dtype, out_dtype))
        make = build("contiguous", op, dtype, rng)
        cpu_args, gpu_args = make("cpu"), make(GPU)
        cpu_out = ctorch.zeros((4, 33), dtype=dt(out_dtype))
        gpu_out = ctorch.zeros((4, 33), dtype=dt(out_dtype), device=GPU)
        cpu, cpu_err = run(lambda: op.f(*cpu_args, out=cpu_out))
        gpu, gpu_err = run(lambda: op.f(*gpu_args, out=gpu_out))
        if cpu_err is not None:
            same_error(cpu_err, gpu_err)
            continue
        assert gpu_err is None, f"the GPU raised {gpu_err!r}"
        assert gpu is gpu_out
        # computed in float and stored unrounded: float's ulps; a float16/bfloat16 input's result is rounded
        # to its dtype first (PyTorch's common dtype), where the two devices' libm may round differently
        tol = TOL.get(dtype) if dtype in ("float16", "bfloat16") else \
            TOL["float32"] if out_dtype in ("float64", "float32") and dtype != "float64" else None
        assert_same(cpu_out, gpu_out, f"{op.name} {dtype} out={out_dtype}", tol)


# --- semantics that differ by device or mix devices ---------------------------------------------------
@pytest.mark.parametrize("dtype", sorted(INTS))
def test_integer_division_by_zero_does_not_raise_on_cuda(dtype):
    """The CPU raises ZeroDivisionError as PyTorch does; PyTorch on CUDA does not (the quotient
    is unspecified): ctorch neither raises nor traps, and the other elements are right."""
    a = ctorch.tensor([7, 9, 4], dtype=dt(dtype), device=GPU)
    z = ctorch.tensor([2, 0, 4], dtype=dt(dtype), device=GPU)
    for f in (lambda: a // z, lambda: a % z, lambda: ctorch.fmod(a, z), lambda: ctorch.div(a, z, rounding_mode="trunc"),
              lambda: a // 0, lambda: a % 0, lambda: ctorch.remainder(a, 0)):
        if SELFTEST:
            with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
                f()
            continue
        r = to_numpy(f())
        assert r.shape == (3,)
    if not SELFTEST:
        assert list(to_numpy(a // z)[[0, 2]]) == [3, 1]
        assert list(to_numpy(a % z)[[0, 2]]) == [1, 0]
        ctorch.cuda.synchronize()  # a trap would surface here


def test_cpu_scalars_mix_with_cuda_tensors():
    x = np.array([[1.5, -2.0, 3.25], [0.5, 4.0, -1.0]], dtype=np.float32)
    g, c = on(x, "float32", GPU), on(x, "float32", "cpu")
    s = ctorch.tensor(2.5)  # a 0-d CPU tensor goes anywhere, like a Python number
    for f in (lambda t: t + s, lambda t: s - t, lambda t: t * ctorch.tensor(3, dtype=ctorch.int64),
              lambda t: ctorch.where(t > 0, s, t), lambda t: ctorch.clamp(t, min=ctorch.tensor(-1.0), max=s),
              lambda t: ctorch.lerp(t, t * 2, ctorch.tensor(0.25, dtype=ctorch.float64)),
              lambda t: ctorch.maximum(t, s), lambda t: t.eq(ctorch.tensor(4.0)),
              lambda t: ctorch.add(t, t, alpha=ctorch.tensor(2.0, device=GPU)),
              lambda t: ctorch.addcmul(t, t, t, value=ctorch.tensor(0.5, device=GPU)),
              lambda t: t.half() * ctorch.tensor(2.0, dtype=ctorch.float64),
              lambda t: ctorch.tensor(1.0, device=GPU) + ctorch.tensor(2.0)):
        compare(f, [c], [g], "cpu scalar")
    r = g.clone()
    r += s
    r.mul_(ctorch.tensor(2))
    assert_same(c.clone().add_(s).mul_(ctorch.tensor(2)), r, "in place with cpu scalars")
    assert str((ctorch.tensor(1.0, device=GPU) + ctorch.tensor(2.0)).device).startswith(GPU)


@pytest.mark.skipif(SELFTEST, reason="needs two devices")
def test_mixing_cuda_and_cpu_tensors_raises():
    g = ctorch.tensor([1.0, 2.0], device="cuda")
    c = ctorch.tensor([1.0, 2.0])
    msg = "Expected all tensors to be on the same device, but found at least two devices, (cuda:0 and cpu|cpu and cuda:0)!"
    for f in (lambda: g + c, lambda: c + g, lambda: ctorch.where(g > 0, g, c), lambda: ctorch.clamp(g, min=c),
              lambda: c + ctorch.tensor(1.0, device="cuda"), lambda: ctorch.add(c, c, out=g),
              lambda: ctorch.lerp(g, c, 0.5), lambda: g.add_(c), lambda: c.add_(g)):
        with pytest.raises(RuntimeError, match=msg):
            f()


def test_float16_and_bfloat16_compute_in_float_cuda():
    """A half op rounds once, at the store: the same bits on both devices where the float math
    agrees (add, mul, comparisons are exact in float for half inputs)."""
    rng = np.random.default_rng(5)
    for dtype in ("float16", "bfloat16"):
        a = rng.uniform(-100, 100, 1000).astype(np.float32)
        b = rng.uniform(-100, 100, 1000).astype(np.float32)
        for f in (lambda x, y: x + y, lambda x, y: x * y, lambda x, y: x - 2.5 * y, lambda x, y: x < y,
                  lambda x, y: ctorch.maximum(x, y), lambda x, y: x + y.float()):
            cpu = f(on(a, dtype, "cpu"), on(b, dtype, "cpu"))
            gpu = f(on(a, dtype, GPU), on(b, dtype, GPU))
            assert gpu.dtype == cpu.dtype
            np.testing.assert_array_equal(to_numpy(gpu), to_numpy(cpu))


def test_large_and_strided_spaces_cuda():
    """Sizes that are not multiples of any vector width, transposed and broadcast operands of a few
    million elements, and a 0-d device operand over them."""
    rng = np.random.default_rng(7)
    n = 3 * (1 << 21) + 5
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    ca, cb, ga, gb = on(a, "float32", "cpu"), on(b, "float32", "cpu"), on(a, "float32", GPU), on(b, "float32", GPU)
    compare(lambda x, y: x * y + x, [ca, cb], [ga, gb], "large contiguous")
    compare(lambda x, y: ctorch.where(x > y, x, y).exp(), [ca, cb], [ga, gb], "large where/exp")
    m = rng.standard_normal((1531, 1373)).astype(np.float32)
    cm = on(np.ascontiguousarray(m.T), "float32", "cpu").t()
    gm = on(np.ascontiguousarray(m.T), "float32", GPU).t()
    row = rng.standard_normal(1373).astype(np.float32)
    compare(lambda x, r: x - r, [cm, on(row, "float32", "cpu")], [gm, on(row, "float32", GPU)], "large transposed")
    compare(lambda x, r: x.half() * r, [cm, on(np.float32(1.5), "float32", "cpu")],
            [gm, on(np.float32(1.5), "float32", GPU)], "large 0-d device operand")
    if not SELFTEST:
        ctorch.cuda.synchronize()
