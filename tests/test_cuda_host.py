"""Checks of the CUDA backend's host-side logic that need nvcc but no GPU.

tests/cuda_host/ holds C++ programs built against csrc/cuda/ with a fake CUDA runtime
(fake_cudart.cpp, linked with -cudart none): allocator_harness.cu runs the caching allocator
(rounding, pools, splits and merges, stream awareness, statistics, the OOM retry and message,
the pinned-memory cache); copy_harness.cu runs copy.cu's per-thread bodies, conversions, offset
calculator, iteration-space splitting, launch decisions and the ordering of GPU-to-GPU copies;
blas_harness.cu runs blas.cu against a fake cuBLAS (column-major GEMMs on the host that refuse
bad leading dimensions) and compares with row-major references; reduce_harness.cu emulates the grids
of reduce.cu and sort.cu with their per-thread bodies (reductions, arg-reductions, scans,
softmax, sorts, launch plans) against naive references; elementwise_harness.cu builds the
elementwise kernels with CT_EW_HOST_EMULATION into a shared object that the last tests drive
with ctypes, comparing every op x compute dtype x layout with ctorch's CPU kernels. The programs
are built in parallel, in the background from the moment the suite is collected (start_background,
called by conftest.py). Skipped where nvcc is missing. The fake runtime refuses (and fails the
program on) any launch a GPU would refuse: an empty grid, gridDim.y/z > 65535, more than 1024 threads per block, more than 48 KiB
of dynamic shared memory.
"""
import atexit
import concurrent.futures
import os
import shutil
import subprocess
import sysconfig
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "tests", "cuda_host")


def find_nvcc():
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")):
        if home and os.path.exists(os.path.join(home, "bin", "nvcc")):
            return os.path.join(home, "bin", "nvcc")
    if shutil.which("nvcc"):
        return shutil.which("nvcc")
    if os.path.exists("/usr/local/cuda/bin/nvcc"):
        return "/usr/local/cuda/bin/nvcc"
    return None


NVCC = find_nvcc()
pytestmark = pytest.mark.skipif(NVCC is None or shutil.which("g++") is None or
                                not os.path.exists(os.path.join(ROOT, "csrc", "cuda")),
                                reason="needs nvcc, g++ and the sources")


# The harness programs: (sources, what the program prints when every check passed)
HARNESSES = {
    "allocator": (["allocator_harness.cu", "../../csrc/cuda/allocator.cu"], "all allocator checks passed"),
    "copy": (["copy_harness.cu"], "all copy checks passed"),
    "reduce": (["reduce_harness.cu"], "all reduce checks passed"),  # fake_cudart.cpp stubs cub's runtime calls
    "blas": (["blas_harness.cu"], "all blas checks passed"),
    "index": (["index_harness.cu"], "all index checks passed"),
}


def build_and_run(out, obj, sources):
    """Builds one harness with the fake runtime and runs it: (ok, its output)."""
    exe = os.path.join(out, os.path.basename(sources[0]).replace(".cu", ""))
    # the programs run the kernels' bodies on the host: their device code (PTX) is never used, so
    # cicc, which must still compile it, does so without optimisation (half its time); the host code
    # too (gcc's -O1 took two thirds of the build, and the programs run in seconds either way)
    cmd = [NVCC, "-std=c++17", "-cudart", "none", "-arch=compute_75", "-code=compute_75", "-O0", "-Xcicc", "-O0",
           "--expt-relaxed-constexpr", "-I" + os.path.join(ROOT, "csrc"), "-I" + os.path.join(ROOT, "csrc", "cuda"),
           "-I" + HERE, "-I" + sysconfig.get_paths()["include"]] + sources + [obj, "-o", exe]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return False, r.stdout + r.stderr
    r = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    return r.returncode == 0, r.stdout + r.stderr


def _build_all():
    """Every harness built (nvcc, a minute or so each) and run, the elementwise library built and
    the PTX of the files that may hold no FMA made, as many at a time as there are cores:
    {name: (ok, output)}."""
    out = tempfile.mkdtemp(prefix="ctorch_cuda_host_")
    atexit.register(shutil.rmtree, out, True)
    obj = os.path.join(out, "fake_cudart.o")
    include = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(NVCC))), "include")
    subprocess.run(["g++", "-c", "-std=c++17", "-I" + include, os.path.join(HERE, "fake_cudart.cpp"), "-o", obj],
                   check=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        runs = {"elementwise library": pool.submit(build_ew_library, out)}  # the longest first
        runs.update({name: pool.submit(build_and_run, out, obj, [os.path.normpath(os.path.join(HERE, f)) for f in files])
                     for name, (files, _) in HARNESSES.items()})
        runs.update({"ptx " + src: pool.submit(build_ptx, out, src) for src in NO_FMA_SOURCES})
        return {name: run.result() for name, run in runs.items()}


_work = []  # the background build's future, once started


def start_background():
    """Called by conftest once the tests are collected: the builds go on in a thread while the
    rest of the suite runs."""
    if not _work and NVCC is not None and shutil.which("g++") is not None:
        _work.append(concurrent.futures.ThreadPoolExecutor(max_workers=1).submit(_build_all))


@pytest.fixture(scope="module")
def harness_runs():
    start_background()
    return _work[0].result()


@pytest.mark.parametrize("name", list(HARNESSES))
def test_harness(harness_runs, name):
    ok, text = harness_runs[name]
    print(text)
    assert ok and HARNESSES[name][1] in text, text[-6000:]


def test_backend_exports_what_the_loader_looks_up():
    """The built _C_cuda.so exports exactly the symbols cuda_loader.c dlsym()s (the entry point)
    and needs neither libpython nor a shared cudart (it is opened where only the driver and cuBLAS
    are installed)."""
    so = os.path.join(os.path.dirname(ctorch.__file__), "_C_cuda.so")
    if not os.path.exists(so) or shutil.which("nm") is None or shutil.which("readelf") is None:
        pytest.skip("no CUDA backend built here (or no binutils)")
    header = open(os.path.join(ROOT, "csrc", "cuda", "ctorch_cuda.h")).read()
    macros = dict(re.findall(r'#define (CT_\w+) "(\w+)"', header))
    loader = open(os.path.join(ROOT, "csrc", "cuda_loader.c")).read()
    wanted = set()
    for arg in re.findall(r"dlsym\(\s*\w+\s*,\s*([^)]+?)\s*\)", loader):
        wanted.add(macros[arg] if arg in macros else arg.strip('"'))
    assert wanted == {"ct_cuda_backend_init"}
    out = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if len(line.split()) == 3 and line.split()[1] == "T"}
    assert exported == wanted, sorted(exported)[:20]
    needed = subprocess.run(["readelf", "-d", so], capture_output=True, text=True, check=True).stdout
    libs = re.findall(r"Shared library: \[([^\]]+)\]", needed)
    assert any(lib.startswith("libcublas.so") for lib in libs), libs
    assert not any(lib.startswith(("libpython", "libcudart")) for lib in libs), libs


# Random samples (and accumulated index_put sums) must be the CPU's bits: the GPU code of these
# files may contain no fma, which nvcc would otherwise form from a * b + c (philox.h and index.cu
# spell every such operation with round-to-nearest intrinsics).
NO_FMA_SOURCES = ["random.cu", "index.cu"]


def build_ptx(out, source):
    """source's PTX as the build makes it (-O3): (ok, the PTX or nvcc's errors)."""
    ptx = os.path.join(out, source + ".ptx")
    r = subprocess.run([NVCC, "-ptx", "-std=c++17", "-O3", "--expt-relaxed-constexpr", "-arch=compute_75",
                        "-I" + os.path.join(ROOT, "csrc"), "-I" + os.path.join(ROOT, "csrc", "cuda"),
                        "-I" + sysconfig.get_paths()["include"], os.path.join(ROOT, "csrc", "cuda", source), "-o", ptx],
                       capture_output=True, text=True)
    return (True, open(ptx).read()) if r.returncode == 0 else (False, r.stdout + r.stderr)


@pytest.mark.parametrize("source", NO_FMA_SOURCES)
def test_no_fused_multiply_add(harness_runs, source):
    ok, text = harness_runs["ptx " + source]
    assert ok and ".entry" in text, text[-4000:]
    fused = [line.strip() for line in text.splitlines() if line.strip().startswith("fma.")]
    assert not fused, fused[:5]
    # log/cos are philox.h's own; sqrt must be the correctly rounded one
    assert "sqrt.approx" not in text and ".ftz" not in text


# --- the elementwise kernels, emulated on the host against the CPU kernels ---------------------
# tests/cuda_host/elementwise_harness.cu builds csrc/cuda/elementwise*.cu with CT_EW_HOST_EMULATION
# (the launches run the same thread bodies on the host, over host memory) into a shared object.
# Each op x compute dtype x layout is run through the CUDA entry and compared bit for bit with
# ctorch's CPU result: both sides compute with the same scalar_math.h functions and host libm,
# so any difference is in the CUDA side's dispatch, paths, conversions or indexing.
import ctypes  # noqa: E402
import re  # noqa: E402

import numpy as np  # noqa: E402

import ctorch  # noqa: E402

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]  # CtDType order
FLOATS = {"float16", "bfloat16", "float32", "float64"}
INTS = {"uint8", "int8", "int16", "int32", "int64"}
ACC = {"float16": "float32", "bfloat16": "float32"}
NP_OF = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
         "int64": np.int64, "float32": np.float32, "float64": np.float64}
# a dtype of the same class that promotes into the given one (for mixed-input calls)
LOWER = {"float32": "float16", "float64": "float32", "int64": "int32", "int32": "int16", "int16": "int8",
         "int8": "bool", "uint8": "bool"}


def parse_ops():
    """(name, arity, dtype classes, flags) of every row of CT_EW_OP_LIST, in CtEwOp order."""
    text = open(os.path.join(ROOT, "csrc", "elementwise_kernels.h")).read()
    body = text[text.index("#define CT_EW_OP_LIST(X)"):]
    ops = []
    for name, kind, domain, flags in re.findall(r'X\((\w+), (\w+), \w+, (\w+), ([\w |]+), "\w+"\)', body):
        classes = {"ALL": {"bool", "int", "float"}, "NUM": {"int", "float"}, "INTB": {"bool", "int"},
                   "INT": {"int"}, "FLT": {"float"}}[domain]
        ops.append((name, {"U": 1, "B": 2, "T": 3, "W": 3}[kind[0]], classes, flags))
    return ops


EW_OPS = parse_ops()


def dclass(d):
    return "bool" if d == "bool" else "float" if d in FLOATS else "int"


# op -> (CPU reference on ctorch tensors, params f, params i); None: the function named like the op
SPECIAL = {
    "ROUND_DECIMALS": (lambda a, **k: ctorch.round(a, decimals=2, **k), (100.0, 0.0, 0.0), (0, 0, 0)),
    "GELU_TANH": (lambda a: ctorch.gelu(a, approximate="tanh"), None, None),
    "SOFTPLUS": (lambda a: ctorch.softplus(a, 2.0, 1.5), (2.0, 1.5, 0.0), (0, 0, 0)),
    "NAN_TO_NUM": (lambda a, **k: ctorch.nan_to_num(a, 1.5, 100.0, -100.0, **k), (1.5, 100.0, -100.0), (0, 0, 0)),
    "DIV": (ctorch.true_divide, None, None),
    "DIV_TRUNC": (lambda a, b, **k: ctorch.div(a, b, rounding_mode="trunc", **k), None, None),
    "DIV_FLOOR": (ctorch.floor_divide, None, None),
    "LSHIFT": (ctorch.bitwise_left_shift, None, None),
    "RSHIFT": (ctorch.bitwise_right_shift, None, None),
    "ADDCMUL": (lambda a, b, c, **k: ctorch.addcmul(a, b, c, value=2, **k), (2.0, 0.0, 0.0), (2, 0, 0)),
    "ADDCDIV": (lambda a, b, c, **k: ctorch.addcdiv(a, b, c, value=0.5, **k), (0.5, 0.0, 0.0), (0, 0, 0)),
    # nn activations (csrc/nn_act.c): elu's first parameter is alpha * scale; integer kernels take
    # the parameters truncated, so those of hardtanh/threshold are whole in every integer dtype
    "ELU": (lambda a: ctorch.elu(a, 0.5, 2.0, 1.5), (1.0, 2.0, 1.5), None),
    "HARDTANH": (lambda a: ctorch.hardtanh(a, 1.0, 5.0), (1.0, 5.0, 0.0), (1, 5, 0)),
    "THRESHOLD": (lambda a: ctorch.threshold(a, 1.5, 3.0), (1.5, 3.0, 0.0), (1, 3, 0)),
    "SOFTSHRINK": (lambda a: ctorch.softshrink(a, 0.75), (0.75, 0.0, 0.0), None),
    "HARDSHRINK": (lambda a: ctorch.hardshrink(a, 0.75), (0.75, 0.0, 0.0), None),
    "PRELU": (lambda a, w: ctorch.where(a > 0, a, w * a), None, None),  # the weight broadcast elementwise
    # activation backwards (autograd's fused rows; private functions, as PyTorch's aten ops)
    "THRESHOLD_BACKWARD": (lambda g, x: ctorch._C._threshold_backward(g, x, 0.5), (0.5, 0.0, 0.0), None),
    "TANH_BACKWARD": (lambda g, y: ctorch._C._tanh_backward(g, y), None, None),
    "SIGMOID_BACKWARD": (lambda g, y: ctorch._C._sigmoid_backward(g, y), None, None),
    # torch.special's rows without a torch.<name>
    "XLOG1PY": (ctorch.special.xlog1py, None, None),
    "ENTR": (ctorch.special.entr, None, None),
    "ERFCX": (ctorch.special.erfcx, None, None),
    "LOG_NDTR": (ctorch.special.log_ndtr, None, None),
    "NDTRI": (ctorch.special.ndtri, None, None),
    "I0E": (ctorch.special.i0e, None, None),
    "I1E": (ctorch.special.i1e, None, None),
    "BESSEL_J0": (ctorch.special.bessel_j0, None, None),
    "BESSEL_J1": (ctorch.special.bessel_j1, None, None),
    "BESSEL_Y0": (ctorch.special.bessel_y0, None, None),
    "BESSEL_Y1": (ctorch.special.bessel_y1, None, None),
    "MODIFIED_BESSEL_I0": (ctorch.special.modified_bessel_i0, None, None),
    "MODIFIED_BESSEL_I1": (ctorch.special.modified_bessel_i1, None, None),
    "MODIFIED_BESSEL_K0": (ctorch.special.modified_bessel_k0, None, None),
    "MODIFIED_BESSEL_K1": (ctorch.special.modified_bessel_k1, None, None),
    "SCALED_MODIFIED_BESSEL_K0": (ctorch.special.scaled_modified_bessel_k0, None, None),
    "SCALED_MODIFIED_BESSEL_K1": (ctorch.special.scaled_modified_bessel_k1, None, None),
    "SPHERICAL_BESSEL_J0": (ctorch.special.spherical_bessel_j0, None, None),
    "ZETA": (ctorch.special.zeta, None, None),
    # GradScaler's update (amp.c): growth 2, backoff 0.5, interval 3
    "AMP_SCALE": (lambda s, t, f: _in_compute_type(lambda s, t, f: ctorch.where(
        f != 0, s * 0.5, ctorch.where((t + 1 == 3) & ctorch.isfinite(s * 2.0), s * 2.0, s)), s, t, f),
        (2.0, 0.5, 3.0), (2, 0, 3)),
    "AMP_TRACKER": (lambda t, f: _in_compute_type(lambda t, f: ctorch.where((f != 0) | (t + 1 == 3), 0, t + 1), t, f),
                    (3.0, 0.0, 0.0), (3, 0, 0)),
    # internal ops the front end uses for x ** 3 and x ** -2 (no functions of their own)
    "CUBE": (lambda a, **k: ctorch.pow(a, 3, **k), None, None),
    "INV_SQUARE": (lambda a, **k: ctorch.pow(a, -2, **k), None, None),
    # special functions (csrc/scalar_math.h): polygamma's order and logit's eps are the parameter
    "POLYGAMMA": (lambda a, **k: ctorch.polygamma(2, a, **k), (2.0, 0.0, 0.0), (2, 0, 0)),
    "LOGIT": (lambda a, **k: ctorch.logit(a, 0.1, **k), (0.1, 0.0, 0.0), None),
    "I1": (lambda a: _i1_reference(a), None, None),  # internal: i0's derivative
    # torch.special's orthogonal polynomials: the kind is the parameter (1: Chebyshev U)
    "ORTHO_POLY": (ctorch.special.chebyshev_polynomial_u, (1.0, 0.0, 0.0), (1, 0, 0)),
    "AIRY_AI": (ctorch.special.airy_ai, None, None),
    "FREXP_MANTISSA": (lambda a: ctorch.frexp(a)[0], None, None),  # internal: frexp's two halves
    "FREXP_EXPONENT": (lambda a: ctorch.frexp(a)[1].to(a.dtype), None, None),  # the row's own dtype: exact
}


def _in_compute_type(fn, *inputs):
    """fn on the inputs promoted together, computed in float for float16/bfloat16 (as the kernels do)
    and rounded back to the promoted dtype once."""
    dt = inputs[0].dtype
    for x in inputs[1:]:
        dt = ctorch.promote_types(dt, x.dtype)
    up = ctorch.float32 if dt in (ctorch.float16, ctorch.bfloat16) else dt
    return fn(*[x.to(up) for x in inputs]).to(dt)


def _i1_reference(a):
    """i1(a) as the CPU computes it: i0's gradient (i1 times ones) in a's floating dtype."""
    x = (a if a.is_floating_point() else a.float()).detach().requires_grad_()
    y = ctorch.i0(x)
    return ctorch.autograd.grad(y, x, ctorch.ones_like(y))[0]


def reference(name, compute):
    if name in ("ADD_ALPHA", "SUB_ALPHA"):
        alpha = False if compute == "bool" else 2
        fn = ctorch.add if name == "ADD_ALPHA" else ctorch.sub
        return (lambda a, b, **k: fn(a, b, alpha=alpha, **k)), (float(alpha), 0.0, 0.0), (int(alpha), 0, 0)
    if name in SPECIAL:
        fn, f, i = SPECIAL[name]
        return fn, f or (0.0, 0.0, 0.0), i or (0, 0, 0)
    return getattr(ctorch, name.lower()), (0.0, 0.0, 0.0), (0, 0, 0)


def gen(rng, name, k, dtype, shape):
    """Input k of op name: specials in floats, no zero divisors, shifts around the bit width."""
    if dtype == "bool" or (name == "WHERE" and k == 0):
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in INTS:
        info = np.iinfo(dtype)
        lo, hi = max(-6, int(info.min)), min(7, int(info.max) + 1)
        if name in ("LSHIFT", "RSHIFT") and k == 1:
            lo, hi = -1, info.bits + 2
        a = rng.integers(lo, hi, shape).astype(dtype)
        if name in ("DIV_TRUNC", "DIV_FLOOR", "REMAINDER", "FMOD") and k == 1:
            a[a == 0] = 1
        return a
    a = rng.uniform(-3.0, 3.0, shape).astype(np.float32 if dtype == "bfloat16" else dtype)
    flat = a.reshape(-1)
    if flat.size > 8:
        flat[[1, 5, 7, 8]] = [np.nan, np.inf, -np.inf, -0.0]
    return a


def as_numpy(t):
    t = t.float() if t.dtype == ctorch.bfloat16 else t
    return np.array(t.numpy(), copy=True)


def same(actual, expected):
    a, e = as_numpy(actual), as_numpy(expected)
    if a.dtype.kind == "f":
        return a.shape == e.shape and np.array_equal(a, e, equal_nan=True)
    return np.array_equal(a, e)


def iterator(operands, shape):
    """CtIter-like (ndim, shape innermost first, strides[ndim][nops] in bytes), coalesced."""
    nd = len(shape)
    dims = []
    for d in range(nd - 1, -1, -1):
        row = []
        for t in operands:
            if isinstance(t, np.ndarray):  # a host scalar
                row.append(0)
                continue
            td = t.dim() - nd + d
            size = t.shape[td] if td >= 0 else 1
            row.append(t.stride(td) * t.element_size() if td >= 0 and size != 1 else 0)
        dims.append((shape[d], row))
    merged = []
    for size, row in dims:
        if size == 1:
            continue
        if merged and all(row[k] == merged[-1][0] * merged[-1][1][k] for k in range(len(row))):
            merged[-1] = (merged[-1][0] * size, merged[-1][1])
            continue
        merged.append((size, row))
    if not merged:
        merged = [(1, [0] * len(operands))]
    return merged


class Emulator:
    def __init__(self, lib):
        self.lib = lib
        lib.emu_elementwise.restype = ctypes.c_int
        lib.emu_error.restype = ctypes.c_char_p
        lib.emu_last_blocks.restype = ctypes.c_longlong
        lib.emu_last_work.restype = ctypes.c_longlong

    def run(self, op, compute, operands, dtypes, shape, host=0, f=(0.0, 0.0, 0.0), i=(0, 0, 0)):
        dims = iterator(operands, shape)
        nops = len(operands)
        shape_arr = (ctypes.c_int64 * len(dims))(*[s for s, _ in dims])
        strides = (ctypes.c_int64 * (len(dims) * nops))(*[x for _, row in dims for x in row])
        ptrs = [t.ctypes.data if isinstance(t, np.ndarray) else t.data_ptr() for t in operands]
        data = (ctypes.c_void_p * nops)(*ptrs)
        dt = (ctypes.c_int * nops)(*[DTYPES.index(d) for d in dtypes])
        before = self.lib.emu_launches()
        rc = self.lib.emu_elementwise(op, DTYPES.index(compute), nops, len(dims), shape_arr, strides, data, dt,
                                      ctypes.c_uint(host), (ctypes.c_double * 3)(*f), (ctypes.c_int64 * 3)(*i))
        return rc, self.lib.emu_launches() - before, self.lib.emu_last_path()


def build_ew_library(out):
    """The elementwise kernels built with CT_EW_HOST_EMULATION into a shared object: (ok, path or errors)."""
    include = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(NVCC))), "include")
    fake = os.path.join(out, "fake_cudart_pic.o")
    subprocess.run(["g++", "-c", "-fPIC", "-std=c++17", "-I" + include, os.path.join(HERE, "fake_cudart.cpp"), "-o",
                    fake], check=True)
    cuda = os.path.join(ROOT, "csrc", "cuda")
    sources = sorted(os.path.join(cuda, f) for f in os.listdir(cuda) if f.startswith("elementwise") and f.endswith(".cu"))
    lib = os.path.join(out, "libct_ew_emulation.so")
    cmd = [NVCC, "-shared", "-Xcompiler", "-fPIC,-Wall", "-std=c++17", "-cudart", "none", "-arch=compute_75",
           "-code=compute_75", "-O0", "-Xcicc", "-O0", "--expt-relaxed-constexpr", "-DCT_EW_HOST_EMULATION",
           "-I" + os.path.join(ROOT, "csrc"), "-I" + cuda, "-I" + HERE, "-I" + sysconfig.get_paths()["include"]] \
        + sources + [os.path.join(HERE, "elementwise_harness.cu"), fake, "-o", lib]
    r = subprocess.run(cmd, capture_output=True, text=True)
    ok = r.returncode == 0 and "warning" not in r.stderr
    return ok, lib if ok else r.stderr[-4000:]


@pytest.fixture(scope="module")
def ew_emulator(harness_runs):
    ok, lib = harness_runs["elementwise library"]
    assert ok, lib
    return Emulator(ctypes.CDLL(lib))


def ew_cases():
    for idx, (name, arity, classes, flags) in enumerate(EW_OPS):
        for d in DTYPES:
            if "CT_EW_NO_HALF" in flags and d in ("float16", "bfloat16"):
                continue  # refused by the front end, no kernels built
            if dclass(d) in classes or ("CT_EW_INT_TO_FLOAT" in flags and dclass(d) != "float"):
                yield pytest.param(idx, d, id=f"{name}-{d}")


@pytest.mark.parametrize("op,dtype", list(ew_cases()))
def test_elementwise_emulated_vs_cpu(ew_emulator, op, dtype):
    name, arity, classes, flags = EW_OPS[op]
    if name == "SQUARE" and dtype == "bool":
        pytest.skip("computed in int64 by the front end")
    if name == "NEXTAFTER" and dtype in ("float16", "bfloat16"):
        pytest.skip("refused by the front end (the kernel computes in float: float's neighbour, not half's)")
    int_to_float = "CT_EW_INT_TO_FLOAT" in flags and dclass(dtype) != "float"
    compute = "float32" if int_to_float else dtype
    in_dtypes = ["bool" if name == "WHERE" and k == 0 else dtype for k in range(arity)]
    rng = np.random.default_rng(op * 16 + DTYPES.index(dtype))
    shape = (3, 37)  # 111 = 16 k + 15 elements: a vector part and the longest tail for every vector width
    arrays = [gen(rng, name, k, in_dtypes[k], shape) for k in range(arity)]
    inputs = [ctorch.tensor(a, dtype=getattr(ctorch, d)) for a, d in zip(arrays, in_dtypes)]
    ref, pf, pi = reference(name, compute)
    expected = ref(*inputs)
    out_dtype = str(expected.dtype).replace("torch.", "").replace("ctorch.", "")
    natural_in = [("bool" if name == "WHERE" and k == 0 else compute) for k in range(arity)]
    natural = all(d == n for d, n in zip(in_dtypes, natural_in))
    failures = []

    def check(layout, operands, dtypes, want, host=0, path=None, ref_out=None, space=shape):
        out = operands[0]
        out.zero_()
        rc, nlaunch, got_path = ew_emulator.run(op, compute, operands, dtypes, space, host, pf, pi)
        if rc != 0:
            failures.append(f"{layout}: rc {rc}: {ew_emulator.lib.emu_error().decode()}")
            return
        if nlaunch < 1:
            failures.append(f"{layout}: no launch")
        if path is not None and got_path != path:
            failures.append(f"{layout}: path {got_path}, expected {path}")
        if not same(out, want if ref_out is None else ref_out):
            failures.append(f"{layout}: results differ\n{as_numpy(out)}\n{as_numpy(want if ref_out is None else ref_out)}")

    def new_out(dt=None):
        return ctorch.empty(shape, dtype=getattr(ctorch, dt or out_dtype))

    # contiguous: the vector path when every dtype is natural
    check("contiguous", [new_out()] + inputs, [out_dtype] + in_dtypes, expected, path=0 if natural else 1)
    # misaligned by one element: strided
    shifted = []
    for t in inputs:
        buf = ctorch.empty((t.numel() + 1,), dtype=t.dtype)
        view = buf.narrow(0, 1, t.numel()).view(*shape)
        view.copy_(t)
        shifted.append(view)
    check("misaligned", [new_out()] + shifted, [out_dtype] + in_dtypes, expected, path=1)
    # transposed inputs and output: strided
    trans = [t.t().contiguous().t() for t in inputs]
    out_t = ctorch.empty(shape[::-1], dtype=getattr(ctorch, out_dtype)).t()
    check("transposed", [out_t] + trans, [out_dtype] + in_dtypes, expected, path=1)
    # broadcast: input 0 a column, the last input a row, read in place (stride 0)
    col = inputs[0].narrow(1, 0, 1)
    row = inputs[-1].narrow(0, 0, 1)
    bc = [col.expand(*shape)] + inputs[1:-1] + ([row.expand(*shape)] if arity > 1 else [])
    if arity == 1:
        bc = [col]
    want = ref(*[t.contiguous().expand(*shape).contiguous() for t in bc])
    check("broadcast", [new_out()] + [col] + inputs[1:-1] + ([row] if arity > 1 else []), [out_dtype] + in_dtypes,
          want, path=1)
    # the last input as one value: a host scalar, then a 0-d device tensor
    if arity > 1:
        value = inputs[-1].reshape(-1)[2]
        const = value.expand(*shape).contiguous()
        want = ref(*inputs[:-1], const)
        acc = ACC.get(natural_in[-1], natural_in[-1])
        host_value = np.array([as_numpy(value.to(getattr(ctorch, acc)))], dtype=NP_OF[acc]).reshape(())
        check("host_scalar", [new_out()] + inputs[:-1] + [host_value], [out_dtype] + in_dtypes[:-1] + [acc], want,
              host=1 << arity, path=0 if natural else 1)
        check("device_scalar", [new_out()] + inputs[:-1] + [value.clone()], [out_dtype] + in_dtypes, want,
              path=0 if natural else 1)
    # one element
    one = [t.reshape(-1).narrow(0, 3, 1) for t in inputs]
    check("one_element", [ctorch.empty((1,), dtype=getattr(ctorch, out_dtype))] + one, [out_dtype] + in_dtypes,
          ref(*[t.clone() for t in one]), path=0 if natural else 1, space=(1,))
    # out= of another dtype: the strided path converts on store, as the CPU's casting loop; a
    # float16/bfloat16 result is rounded before it goes into a float32 out= too
    others = ["float32" if out_dtype == "float64" else "float64"] + (["float32"] if out_dtype in ACC else [])
    for other in others:
        ref_out = new_out(other)
        try:
            ref(*inputs, out=ref_out)
        except (TypeError, RuntimeError):  # the CPU refuses this out= dtype (unary ops want their own dtype)
            break
        check(f"out_{other}", [new_out(other)] + inputs, [other] + in_dtypes, None, path=1, ref_out=ref_out)
    # an input of a lower dtype of the same class (the compute dtype is kept)
    lower = LOWER.get(dtype)
    if (arity >= 2 and lower and not int_to_float and name not in ("LERP", "ADDCDIV")
            and name != "HEAVISIDE"  # its front end refuses mixed dtypes, as PyTorch's
            and not (lower == "bool" and name in ("SUB", "SUB_ALPHA", "DIV_TRUNC", "DIV_FLOOR", "REMAINDER", "FMOD"))):
        low = inputs[-1].to(getattr(ctorch, lower))
        mixed = inputs[:-1] + [low]
        want = ref(*mixed)
        if str(want.dtype).endswith(out_dtype):
            check("mixed_input", [new_out()] + mixed, [out_dtype] + in_dtypes[:-1] + [lower], want, path=1)
    assert not failures, "\n".join(failures)


def test_elementwise_emulated_entry_checks(ew_emulator):
    names = [op[0] for op in EW_OPS]
    assert ew_emulator.lib.emu_num_ops() == len(names)
    f32 = ctorch.ones((5,))
    out = ctorch.empty((5,))
    # a compute dtype outside the op's domain: NotImplementedError (status 9) in PyTorch's CUDA words
    rc, nlaunch, _ = ew_emulator.run(names.index("LSHIFT"), "float32", [out, f32, f32], ["float32"] * 3, (5,))
    assert rc == -1 and nlaunch == 0 and ew_emulator.lib.emu_error_status() == 9
    assert ew_emulator.lib.emu_error().decode() == "\"lshift_cuda\" not implemented for 'Float'"
    # the wrong number of operands: RuntimeError (status 10), nothing launched
    rc, nlaunch, _ = ew_emulator.run(names.index("ADD"), "float32", [out, f32], ["float32"] * 2, (5,))
    assert rc == -1 and nlaunch == 0 and ew_emulator.lib.emu_error_status() == 10
    # nothing to do: no launch
    empty = ctorch.empty((0,))
    rc, nlaunch, _ = ew_emulator.run(names.index("ADD"), "float32", [empty, empty, empty], ["float32"] * 3, (0,))
    assert rc == 0 and nlaunch == 0
    # grids: one thread per 16 bytes on the vector path, per element on the strided path
    big = ctorch.ones((100003,))
    res = ctorch.empty((100003,))
    rc, nlaunch, path = ew_emulator.run(names.index("ADD"), "float32", [res, big, big], ["float32"] * 3, (100003,))
    assert rc == 0 and path == 0 and ew_emulator.lib.emu_last_work() == 100003 // 4
    assert ew_emulator.lib.emu_last_blocks() == (100003 // 4 + 255) // 256
    assert np.array_equal(res.numpy(), np.full(100003, 2.0, np.float32))
    strided = ctorch.ones((2, 100003)).select(0, 1)
    rc, nlaunch, path = ew_emulator.run(names.index("ADD"), "float32", [res, big.t(), big], ["float32"] * 3, (100003,))
    assert rc == 0 and path == 0
    res2 = ctorch.empty((100003, 1)).select(1, 0)
    rc, nlaunch, path = ew_emulator.run(names.index("ADD"), "float32", [res2, strided, big], ["float32"] * 3, (100003,))
    assert rc == 0 and path == 1  # contiguous, but 100003 floats in: not 16-byte aligned
    assert np.array_equal(res2.numpy(), np.full(100003, 2.0, np.float32))
    rc, nlaunch, path = ew_emulator.run(names.index("ADD"), "float64", [ctorch.empty((100003,), dtype=ctorch.float64),
                                                                       big, big], ["float64", "float32", "float32"],
                                        (100003,))
    assert rc == 0 and path == 1 and ew_emulator.lib.emu_last_work() == 100003


def _host_value(s, compute, opmath):
    """A Python number as the front end (ops_elementwise.c) hands it to every device: held as
    bool/int64/float64, rounded to the compute dtype unless the op takes opmath scalars, then in
    the acc type (float for float16/bfloat16). ctorch's CPU casts are the front end's."""
    held = ctorch.bool if isinstance(s, bool) else ctorch.int64 if isinstance(s, int) else ctorch.float64
    t = ctorch.tensor([s], dtype=held)
    if not opmath:
        t = t.to(getattr(ctorch, compute))
    acc = ACC.get(compute, compute)
    return np.array(t.to(getattr(ctorch, acc)).numpy()[0], dtype=NP_OF[acc]).reshape(())


def _param_value(f, i, compute):
    """The CPU kernels' parameter in the kernel type (CT_EW_PARAM_<DT> of elementwise_kernels.h)."""
    acc = ACC.get(compute, compute)
    if acc == "bool":
        return np.array(i != 0)
    return np.array(f if acc in FLOATS else i, dtype=NP_OF[acc]).reshape(())


# op, inputs (tensors), the input that is a Python number (None: a parameter), the CPU call
PY_SCALAR_CASES = [
    ("MUL", 1, 1, lambda a, s: ctorch.mul(a, s)),
    ("ADD", 1, 1, lambda a, s: ctorch.add(a, s)),
    ("DIV", 1, 1, lambda a, s: ctorch.div(a, s)),
    ("LERP", 2, 2, lambda a, b, s: ctorch.lerp(a, b, s)),
    ("ADD_ALPHA", 2, None, lambda a, b, s: ctorch.add(a, b, alpha=s)),
    ("SUB_ALPHA", 2, None, lambda a, b, s: ctorch.sub(a, b, alpha=s)),
    ("ADDCMUL", 3, None, lambda a, b, c, s: ctorch.addcmul(a, b, c, value=s)),
    ("ADDCDIV", 3, None, lambda a, b, c, s: ctorch.addcdiv(a, b, c, value=s)),
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_emulated_python_scalars(ew_emulator, dtype):
    """Python numbers (mul/div/lerp operands, add/sub alpha, addcmul/addcdiv value) reach the CUDA
    kernels as the CPU kernels get them: opmath operands in the acc type unrounded (float16 * 0.3
    multiplies by 0.3f), others rounded to the compute dtype, parameters converted as
    CT_EW_PARAM_<DT>; the results are the CPU's bits on both paths. For float16/bfloat16 the
    other rounding would give other bits, which the test checks it would see."""
    names = [op[0] for op in EW_OPS]
    cls = dclass(dtype)
    s = True if dtype == "bool" else 3 if cls == "int" else 0.3
    rng = np.random.default_rng(DTYPES.index(dtype))
    shape = (3, 37)
    ran = 0
    for name, ntensors, host_k, fn in PY_SCALAR_CASES:
        op = names.index(name)
        _, arity, classes, flags = EW_OPS[op]
        if cls not in classes or (dtype == "bool" and name == "SUB_ALPHA"):
            continue
        opmath = "CT_EW_OPMATH_SCALARS" in flags
        inputs = [ctorch.tensor(gen(rng, name, k, dtype, shape), dtype=getattr(ctorch, dtype)) for k in range(ntensors)]
        expected = fn(*inputs, s)
        assert str(expected.dtype).endswith(dtype), (name, expected.dtype)
        if host_k is None:  # a parameter: alpha is rounded to float16/bfloat16 by the front end, value is not
            f = float(s)
            if name in ("ADD_ALPHA", "SUB_ALPHA") and dtype in ACC:
                f = float(ctorch.tensor([f], dtype=ctorch.float64).to(getattr(ctorch, dtype)).double()[0])
            pf, pi = (f, 0.0, 0.0), (int(s), 0, 0)
            operands = [ctorch.empty(shape, dtype=getattr(ctorch, dtype))] + inputs
            host, value = 0, None
        else:
            pf, pi = (0.0, 0.0, 0.0), (0, 0, 0)
            value = _host_value(s, dtype, opmath)
            operands = [ctorch.empty(shape, dtype=getattr(ctorch, dtype))] + inputs + [value]
            host = 1 << (host_k + 1)
        dtypes = [dtype] * (1 + ntensors) + ([str(value.dtype)] if value is not None else [])
        acc = ACC.get(dtype, dtype)
        for layout in ("contiguous", "transposed"):
            ops = list(operands)
            if layout == "transposed":
                ops = [t.t().contiguous().t() if isinstance(t, ctorch.Tensor) else t for t in ops]
                ops[0] = ctorch.empty(shape[::-1], dtype=getattr(ctorch, dtype)).t()
            rc, nlaunch, path = ew_emulator.run(op, dtype, ops, dtypes, shape, host, pf, pi)
            assert rc == 0 and nlaunch >= 1, ew_emulator.lib.emu_error().decode()
            assert path == (0 if layout == "contiguous" else 1)
            assert same(ops[0], expected), f"{name} {layout}: CUDA differs from the CPU"
            raw = (ctypes.c_ubyte * 48)()
            ew_emulator.lib.emu_last_scalars(raw)
            got = np.frombuffer(bytes(raw), dtype=np.uint8)
            size = np.dtype(NP_OF[acc]).itemsize
            if value is not None:
                k = host_k
                assert got[8 * k:8 * k + size].tobytes() == value.tobytes(), f"{name}: host scalar"
            want_p = _param_value(pf[0], pi[0], dtype)
            assert got[24:24 + size].tobytes() == want_p.tobytes(), f"{name}: parameter"
        ran += 1
        if dtype in ACC and (value is not None and opmath or name in ("ADDCMUL", "ADDCDIV")):
            # the rounding CUDA must not do: the scalar in the compute dtype gives other bits
            wrong = _host_value(s, dtype, False) if value is not None else None
            wrong_pf = (float(ctorch.tensor([s]).to(getattr(ctorch, dtype)).double()[0]), 0.0, 0.0)
            ops = [ctorch.empty(shape, dtype=getattr(ctorch, dtype))] + inputs + ([wrong] if wrong is not None else [])
            rc, _, _ = ew_emulator.run(op, dtype, ops, dtypes, shape, host, wrong_pf if wrong is None else pf, pi)
            assert rc == 0 and not same(ops[0], expected), f"{name}: rounding the scalar changes nothing here"
    assert ran >= (2 if dtype == "bool" else 5)


@pytest.mark.parametrize("compute", ["float16", "bfloat16"])
def test_elementwise_emulated_inputs_round_through_compute(ew_emulator, compute):
    """A tensor input of another dtype than a float16/bfloat16 op's (int32 + float16, a float32 or
    float64 0-d device tensor, the other 16-bit float) is rounded to the compute dtype before the
    float math, on CUDA's strided path as in the CPU's casting loop: the CPU's bits."""
    names = [op[0] for op in EW_OPS]
    rng = np.random.default_rng(11)
    shape = (3, 37)
    other16 = "bfloat16" if compute == "float16" else "float16"
    base = ctorch.tensor(gen(rng, "ADD", 0, compute, shape), dtype=getattr(ctorch, compute))
    wide = {
        # odd integers above 2^11 (2^8 for bfloat16) are not float16 (bfloat16) values; 70000 overflows float16
        "int32": ctorch.tensor(rng.integers(-70000, 70000, shape).astype(np.int32) | 1, dtype=ctorch.int32),
        "float32": ctorch.tensor(rng.uniform(-5, 5, shape).astype(np.float32)),
        "float64": ctorch.tensor(rng.uniform(-5, 5, shape), dtype=ctorch.float64),
        # small: float16's subnormals and bfloat16's 8 bits hold different values
        other16: ctorch.tensor(rng.uniform(-5e-5, 5e-5, shape).astype(np.float32)).to(getattr(ctorch, other16)),
    }
    cases = [("ADD", lambda a, b: ctorch.add(a, b)), ("MUL", lambda a, b: ctorch.mul(a, b)),
             ("ATAN2", lambda a, b: ctorch.atan2(a, b)), ("MAXIMUM", lambda a, b: ctorch.maximum(a, b)),
             ("LT", lambda a, b: ctorch.lt(a, b)), ("LERP", lambda a, b: ctorch.lerp(a, b, b)),
             ("WHERE", lambda a, b: ctorch.where(a > 0, a, b))]
    failures = []
    for wide_dtype, w in wide.items():
        rounded = w.to(getattr(ctorch, compute))
        assert not np.array_equal(as_numpy(rounded.to(ctorch.float64)), as_numpy(w.to(ctorch.float64)))
        for name, fn in cases:
            op = names.index(name)
            arity = EW_OPS[op][1]
            expected = fn(base, rounded)
            out_dtype = str(expected.dtype).replace("ctorch.", "").replace("torch.", "")
            if name == "WHERE":
                operands, dtypes = [base > 0, base, w], ["bool", compute, wide_dtype]
            elif arity == 3:
                operands, dtypes = [base, w, w], [compute, wide_dtype, wide_dtype]
            else:
                operands, dtypes = [base, w], [compute, wide_dtype]
            out = ctorch.zeros(shape, dtype=getattr(ctorch, out_dtype))
            rc, _, path = ew_emulator.run(op, compute, [out] + operands, [out_dtype] + dtypes, shape)
            if rc != 0 or path != 1 or not same(out, expected):
                failures.append(f"{name} {compute} with a {wide_dtype} input: rc {rc}, path {path}\n"
                                f"{as_numpy(out)}\n{as_numpy(expected)}")
    assert not failures, "\n".join(failures[:4])
