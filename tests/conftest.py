"""Shared fixtures: the device list every test is parametrised over (CUDA is skipped where it
is not available), NumPy tolerances per dtype, and helpers to build tensors in several layouts."""
import gc
import sys

import numpy as np
import pytest

import ctorch


def _cuda_ok():
    try:
        return ctorch.cuda.is_available()
    except AttributeError:
        return False


DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param("cuda", id="cuda", marks=pytest.mark.skipif(not _cuda_ok(), reason="CUDA not available")),
]

FLOAT_DTYPES = ["float32", "float64", "float16", "bfloat16"]
INT_DTYPES = ["int64", "int32", "int16", "int8", "uint8"]
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + ["bool"]

# rtol/atol for comparing with a float64 NumPy oracle
TOL = {
    "float64": (1e-12, 1e-12),
    "float32": (1e-5, 1e-6),
    "float16": (2e-3, 2e-3),
    "bfloat16": (1.6e-2, 1.6e-2),
}


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def to_numpy(t):
    """A NumPy copy of any tensor (bfloat16 is widened to float32)."""
    t = t.detach().cpu() if hasattr(t, "detach") else t.cpu()
    if t.dtype == ctorch.bfloat16:
        t = t.float()
    return np.array(t.numpy(), copy=True)


def np_dtype(name):
    return np.float32 if name == "bfloat16" else np.dtype(name)


def assert_close(actual, expected, dtype=None):
    """Compares a tensor with a NumPy array using the tolerance of the tensor's dtype."""
    name = str(actual.dtype).replace("torch.", "") if dtype is None else dtype
    a = to_numpy(actual)
    assert a.shape == np.shape(expected), f"shape {a.shape} != {np.shape(expected)}"
    if name in TOL:
        rtol, atol = TOL[name]
        np.testing.assert_allclose(a.astype(np.float64), np.asarray(expected, dtype=np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(a, np.asarray(expected))


def make_layouts(arr, device, dtype=None):
    """Yields (id, tensor, numpy_equivalent) for arr in several layouts: contiguous, transposed,
    sliced with a step, and (for >= 1-d) expanded from a broadcast dim."""
    kw = {"device": device}
    if dtype is not None:
        kw["dtype"] = getattr(ctorch, dtype)
    t = ctorch.tensor(arr, **kw)
    yield "contiguous", t, arr
    if arr.ndim >= 2:
        big = ctorch.tensor(np.ascontiguousarray(arr.T), **kw)
        yield "transposed", big.T, arr



def python_blocks():
    """Live Python allocator blocks after a collection, less the interpreter's type attribute cache:
    CPython 3.11 keeps a strong reference to the name of each cached lookup, in a slot picked by the
    name string's address, so every getattr(obj, <new str>) can pin one string until its slot is reused
    (up to 4096 of them). Clearing the cache before counting leaves what calls really keep."""
    gc.collect()
    sys._clear_type_cache()
    return sys.getallocatedblocks()


def assert_no_leak(call, rounds, windows=6):
    """Calls call() 2 * rounds times to warm up, then in windows of `rounds` calls: no storage may outlive
    a window (a leaked storage fails at once), and the smallest growth of Python blocks over the windows
    must stay below rounds // 2 (a reference leaked per call adds >= rounds to every window; caches that
    fill once, like interpreter specialisation or a dict's resize, add less and less, so windows end at the
    first small one)."""
    for _ in range(2 * rounds):
        call()
    gc.collect()
    storages = ctorch._C._live_storages()
    growth = []
    for _ in range(windows):
        blocks = python_blocks()
        for _ in range(rounds):
            call()
        growth.append(python_blocks() - blocks)
        assert ctorch._C._live_storages() == storages, f"{ctorch._C._live_storages() - storages} storages leaked"
        if growth[-1] < rounds // 2:
            break
    assert min(growth) < rounds // 2, f"Python allocator blocks grew by {growth} in windows of {rounds} calls"

# --- the slow modules run beside the rest ------------------------------------------------------
# A test module may define start_background(): long work (builds with nvcc or g++, child pytest
# runs) that it starts in threads of its own and whose results its tests wait for. Once the tests
# are collected, every selected module's start_background() is called and those modules are moved
# to the end of the run, so that on a machine with a few cores the rest of the suite runs while
# they build.
# --ctorch-shard I/N keeps every N-th selected test from the I-th (1-based): test_cuda_emulated
# splits its biggest files this way over several child runs.

def pytest_addoption(parser):
    parser.addoption("--ctorch-shard", default=None, metavar="I/N",
                     help="run only every N-th selected test, from the I-th (1-based)")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    shard = config.getoption("--ctorch-shard")
    if shard:
        i, n = (int(x) for x in shard.split("/"))
        if not 1 <= i <= n:
            raise pytest.UsageError(f"--ctorch-shard {shard}: expected I/N with 1 <= I <= N")
        config.hook.pytest_deselected(items=[it for k, it in enumerate(items) if k % n != i - 1])
        items[:] = items[i - 1::n]
    items.sort(key=lambda it: hasattr(getattr(it, "module", None), "start_background"))  # stable


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    started = []
    for item in session.items:
        module = getattr(item, "module", None)
        if hasattr(module, "start_background") and module not in started:
            started.append(module)
            module.start_background()
