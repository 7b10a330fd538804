"""More of torch.cuda: the allocator's memory fraction, snapshot and raw blocks, nested and
deprecated statistics, device queries (peer access, cuBLAS handle, TF32, gencode flags, NVML
readings), set_sync_debug_mode, ExternalStream, ctorch.cuda.random and ctorch.cuda.nvtx.

The "gpu" tests run on a GPU or the CUDA emulator (tests/cuda_emu); the others wherever CUDA
cannot be used, where each CUDA-only function raises what PyTorch raises there."""
import ctypes
import os
import subprocess
import warnings

import numpy as np
import pytest

import ctorch
from ctorch.cuda import _nvml

AVAILABLE = ctorch.cuda.is_available()
BUILT = ctorch.cuda.is_built()
gpu = pytest.mark.skipif(not AVAILABLE, reason="CUDA not available")
unavailable = pytest.mark.skipif(AVAILABLE, reason="CUDA is available here")
MiB = 1024 * 1024
SYNC_MESSAGE = "called a synchronizing CUDA operation"


def expected_error():
    if not BUILT:
        return AssertionError, "^ctorch not compiled with CUDA enabled$"
    return RuntimeError, r"\w"


def emulator_counters():
    """(synchronize calls, device-to-host copies) so far on the CUDA emulator, None on a GPU."""
    try:
        fn = ctypes.CDLL(os.path.join(os.path.dirname(ctorch.__file__), "_C_cuda.so")).ct_emu_counters
    except (OSError, AttributeError):
        return None
    out = (ctypes.c_longlong * 3)()
    fn(out)
    return out[1], out[2]


# =============================================================================================
# Without a usable GPU
# =============================================================================================
@unavailable
@pytest.mark.parametrize("call", [
    lambda: ctorch.cuda.set_per_process_memory_fraction(0.5),
    lambda: ctorch.cuda.get_per_process_memory_fraction(),
    lambda: ctorch.cuda.caching_allocator_alloc(16),
    lambda: ctorch.cuda.caching_allocator_delete(4096),
    lambda: ctorch.cuda.can_device_access_peer(0, 1),
    lambda: ctorch.cuda.current_blas_handle(),
    lambda: ctorch.cuda.set_sync_debug_mode("warn"),
    lambda: ctorch.cuda.get_sync_debug_mode(),
    lambda: ctorch.cuda.ExternalStream(0),
    lambda: ctorch.cuda.random.get_rng_state(),
])
def test_cuda_only_functions_raise(call):
    exc, pattern = expected_error()
    with pytest.raises(exc, match=pattern):
        call()


@unavailable
def test_answers_without_cuda():
    c = ctorch.cuda
    assert c.memory_snapshot() == []
    assert c.memory_stats_as_nested_dict() == {}
    assert c.get_allocator_backend() == "native"
    assert c.get_gencode_flags() == ""
    assert c.is_tf32_supported() is False
    assert c.has_half is True
    assert c.caching_allocator_delete(0) is None  # the address of a 0-byte block
    assert c.host_memory_stats() == {} and c.host_memory_stats_as_nested_dict() == {}
    assert c.reset_peak_host_memory_stats() is None and c.reset_accumulated_host_memory_stats() is None
    for name, new in (("memory_cached", "memory_reserved"), ("max_memory_cached", "max_memory_reserved")):
        with pytest.warns(FutureWarning, match=f"`torch.cuda.{name}` has been renamed to `torch.cuda.{new}`"):
            assert getattr(c, name)() == 0


def test_random_submodule_is_the_package_functions():
    for name in ctorch.cuda.random.__all__:
        assert getattr(ctorch.cuda.random, name) is getattr(ctorch.cuda, name)


def test_nvtx():
    nvtx = ctorch.cuda.nvtx
    if not BUILT:
        with pytest.raises(RuntimeError, match="NVTX functions not installed. Are you sure you have a CUDA build?"):
            nvtx.range_push("a")
        return
    try:
        ctypes.CDLL(nvtx._LIBRARY)
        depth = 0  # a real NVTX: depths count from 0 (or -2 when no profiler takes them)
    except OSError:
        depth = -2  # NVTX without a tool: nothing tracked
    outer = nvtx.range_push("outer")
    assert outer in (depth, -2)
    with nvtx.range("step {} of {n}", 1, n=2):
        pass
    assert nvtx.range_pop() in (depth, -2)
    nvtx.mark("event")
    nvtx.range_end(nvtx.range_start("across threads"))
    with pytest.raises(TypeError, match="must be a str"):
        nvtx.mark(3)


# --- NVML: a stand-in libnvidia-ml with known answers, the calls and layouts of the real one -----
FAKE_NVML = r"""
#include <string.h>
typedef struct { unsigned long long total, free, used; } Mem;
typedef struct { unsigned int gpu, memory; } Util;
typedef struct { unsigned int pid; unsigned long long used; unsigned int gi, ci; } Proc;
static int inits;
int nvmlInit_v2(void) { inits++; return 0; }
const char *nvmlErrorString(int r) { return r == 2 ? "Invalid Argument" : "Unknown Error"; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h) { if (i > 3) return 2; *h = (void *)(long)(i + 1); return 0; }
int nvmlDeviceGetHandleByUUID(const char *u, void **h) { if (strcmp(u, "GPU-b") != 0) return 2; *h = (void *)3L; return 0; }
int nvmlDeviceGetIndex(void *h, unsigned int *i) { *i = (unsigned int)((long)h - 1); return 0; }
static long dev(void *h) { return (long)h - 1; }
int nvmlDeviceGetMemoryInfo(void *h, Mem *m) { m->total = 100; m->used = 40 + dev(h); m->free = 60 - dev(h); return 0; }
int nvmlDeviceGetUtilizationRates(void *h, Util *u) { u->gpu = 70 + dev(h); u->memory = 30; return 0; }
int nvmlDeviceGetTemperature(void *h, int sensor, unsigned int *t) { *t = sensor == 0 ? 55 + dev(h) : 0; return 0; }
int nvmlDeviceGetPowerUsage(void *h, unsigned int *p) { *p = 123000; return 0; }
int nvmlDeviceGetClockInfo(void *h, int kind, unsigned int *c) { *c = kind == 1 ? 1410 : 0; return 0; }
int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned int *n, Proc *p)
{
    unsigned int have = dev(h) == 0 ? 2 : 0;
    if (*n < have) { *n = have; return 7; }
    for (unsigned int i = 0; i < have; i++) { p[i].pid = 100 + i; p[i].used = (i + 1) * 3 * 1048576ull; }
    *n = have;
    return 0;
}
"""


@pytest.fixture
def fake_nvml(tmp_path, monkeypatch):
    src, lib = tmp_path / "nvml.c", tmp_path / "libnvml_fake.so"
    src.write_text(FAKE_NVML)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    monkeypatch.setattr(_nvml, "_LIBRARY", str(lib))
    monkeypatch.setattr(_nvml, "_lib", None)
    monkeypatch.setattr(_nvml, "_initialized", False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


def test_nvml_readings(fake_nvml, monkeypatch):
    c = ctorch.cuda
    assert (c.utilization(1), c.memory_usage(1), c.temperature(1)) == (71, 30, 56)
    assert (c.power_draw(0), c.clock_rate(0), c.device_memory_used(2)) == (123000, 1410, 42)
    assert c.list_gpu_processes(0) == ("GPU:0\nprocess        100 uses        3.000 MB GPU memory\n"
                                       "process        101 uses        6.000 MB GPU memory")
    assert c.list_gpu_processes(1) == "GPU:1\nno processes are running"
    with pytest.raises(RuntimeError, match="NVML error: Invalid Argument"):
        c.temperature(7)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,GPU-b")
    assert (c.utilization(0), c.utilization(1)) == (72, 72)  # cuda:0 is NVML's 2, GPU-b NVML's 2 too
    assert c.list_gpu_processes(0) == "GPU:2\nno processes are running"
    with pytest.raises(RuntimeError, match=r"device 2 is not visible \(CUDA_VISIBLE_DEVICES=\['2', 'GPU-b'\]\)"):
        c.utilization(2)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,0")
    assert c.list_gpu_processes(1).startswith("GPU:0\nprocess        100 uses")


def test_nvml_missing(monkeypatch):
    monkeypatch.setattr(_nvml, "_LIBRARY", "libnvidia-ml-not-here.so.1")
    monkeypatch.setattr(_nvml, "_lib", None)
    for name in ("utilization", "memory_usage", "temperature", "power_draw", "clock_rate", "device_memory_used"):
        with pytest.raises(ModuleNotFoundError, match="nvidia-ml-py does not seem to be installed"):
            getattr(ctorch.cuda, name)(0)
    assert ctorch.cuda.list_gpu_processes(0) == "pynvml module not found, please install nvidia-ml-py"


# =============================================================================================
# On a GPU (or the emulator)
# =============================================================================================
@gpu
def test_cuda_memory_fraction_caps_the_allocator():
    c = ctorch.cuda
    assert c.get_per_process_memory_fraction() == 1.0 or c.get_per_process_memory_fraction() > 0
    with pytest.raises(TypeError, match="Invalid type for fraction argument, must be `float`"):
        c.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match=r"Invalid fraction value: 1.5. Allowed range: 0~1"):
        c.set_per_process_memory_fraction(1.5)
    c.empty_cache()
    total = c.mem_get_info(0)[1]
    fraction = (c.memory_reserved(0) + 30 * MiB) / total
    ooms = c.memory_stats(0)["num_ooms"]
    c.set_per_process_memory_fraction(fraction, 0)
    try:
        assert c.get_per_process_memory_fraction(0) == fraction
        with pytest.raises(c.OutOfMemoryError) as info:
            ctorch.empty(64 * MiB, dtype=ctorch.uint8, device="cuda:0")
        message = str(info.value)
        assert message.startswith("CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of")
        assert f" is in use on this GPU. {int(fraction * total) / MiB:.2f} MiB allowed; Of the allocated memory" in message
        assert c.memory_stats(0)["num_ooms"] == ooms + 1
        allocated = c.memory_allocated(0)
        x = ctorch.empty(8 * MiB, dtype=ctorch.uint8, device="cuda:0")  # within the cap
        assert c.memory_allocated(0) == allocated + 8 * MiB
        del x
    finally:
        c.set_per_process_memory_fraction(1.0, 0)
    assert c.get_per_process_memory_fraction(0) == 1.0


@gpu
def test_cuda_memory_snapshot():
    c = ctorch.cuda
    small = ctorch.empty(1000, dtype=ctorch.uint8, device="cuda")
    large = ctorch.empty(3 * MiB, dtype=ctorch.uint8, device="cuda")
    snap = c.memory_snapshot()
    blocks = {b["address"]: (seg, b) for seg in snap for b in seg["blocks"]}
    for t, size, kind in ((small, 1024, "small"), (large, 3 * MiB, "large")):
        seg, block = blocks[t.data_ptr()]
        assert block == {"address": t.data_ptr(), "size": size, "requested_size": t.numel(),
                         "state": "active_allocated", "frames": []}
        assert seg["segment_type"] == kind and seg["device"] == 0
        assert seg["stream"] == c.current_stream().cuda_stream
        assert seg["total_size"] % (2 * MiB) == 0
    for seg in snap:
        addresses = [b["address"] for b in seg["blocks"]]
        assert addresses[0] == seg["address"]
        assert all(a + b["size"] == n for a, b, n in zip(addresses, seg["blocks"], addresses[1:]))  # contiguous
        assert seg["total_size"] == sum(b["size"] for b in seg["blocks"])
        live = [b for b in seg["blocks"] if b["state"] == "active_allocated"]
        assert seg["allocated_size"] == seg["active_size"] == sum(b["size"] for b in live)
        assert seg["requested_size"] == sum(b["requested_size"] for b in live)
    for d in range(c.device_count()):
        mine = [s for s in snap if s["device"] == d]
        assert sum(s["total_size"] for s in mine) == c.memory_reserved(d)
        assert sum(s["allocated_size"] for s in mine) == c.memory_allocated(d)
    address = small.data_ptr()
    del small
    state = [b["state"] for s in c.memory_snapshot() for b in s["blocks"] if b["address"] == address]
    assert state == ["inactive"]


@gpu
def test_cuda_caching_allocator_alloc_and_delete():
    c = ctorch.cuda
    before = c.memory_allocated(0)
    p = c.caching_allocator_alloc(1000)
    assert isinstance(p, int) and p != 0
    assert c.memory_allocated(0) == before + 1024
    s = c.Stream()
    q = c.caching_allocator_alloc(3000, 0, s)
    seg = [seg for seg in c.memory_snapshot() if any(b["address"] == q for b in seg["blocks"])]
    assert seg[0]["stream"] == s.cuda_stream
    assert c.current_stream().cuda_stream != s.cuda_stream  # restored
    c.caching_allocator_delete(q)
    c.caching_allocator_delete(p)
    assert c.memory_allocated(0) == before
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        c.caching_allocator_delete(p)
    with pytest.raises(TypeError, match="Invalid type for stream argument"):
        c.caching_allocator_alloc(16, 0, "stream")
    assert c.caching_allocator_alloc(0) == 0
    if c.device_count() > 1:
        r = c.caching_allocator_alloc(512, 1)
        assert c.memory_allocated(1) >= 512
        c.caching_allocator_delete(r)  # found on its device


@gpu
def test_cuda_nested_and_deprecated_stats():
    c = ctorch.cuda
    x = ctorch.ones(100, device="cuda")
    flat = c.memory_stats()
    nested = c.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["current"] == flat["allocated_bytes.all.current"] > 0
    assert nested["num_ooms"] == flat["num_ooms"]
    assert nested["oversize_segments"]["peak"] == flat["oversize_segments.peak"]

    def flatten(node, prefix=""):
        for key, value in node.items():
            if isinstance(value, dict):
                yield from flatten(value, prefix + key + ".")
            else:
                yield prefix + key, value

    assert dict(flatten(nested)) == flat
    with pytest.warns(FutureWarning, match="renamed to `torch.cuda.memory_reserved`"):
        assert c.memory_cached() == c.memory_reserved()
    with pytest.warns(FutureWarning, match="renamed to `torch.cuda.max_memory_reserved`"):
        assert c.max_memory_cached() == c.max_memory_reserved()
    assert c.get_allocator_backend() == "native"
    del x


@gpu
def test_cuda_host_memory_stats():
    c = ctorch.cuda
    a = ctorch.ones(1000).pin_memory()  # a 4096-byte block
    s0 = c.host_memory_stats()
    assert list(s0) == sorted(s0)
    assert s0["active_bytes.current"] >= 4096 and s0["active_requests.current"] >= 1
    assert s0["allocated_bytes.current"] >= s0["active_bytes.current"]
    assert s0["allocations.current"] >= s0["active_requests.current"]
    nested = c.host_memory_stats_as_nested_dict()
    assert nested["active_bytes"]["peak"] == s0["active_bytes.peak"] and nested["num_host_alloc"] == s0["num_host_alloc"]
    b = ctorch.ones(2000).pin_memory()  # 8192 bytes
    del a, b
    s1 = c.host_memory_stats()
    assert s1["active_bytes.current"] == s0["active_bytes.current"] - 4096
    assert s1["active_bytes.peak"] >= s0["active_bytes.current"] + 8192
    assert s1["active_bytes.freed"] - s0["active_bytes.freed"] == 4096 + 8192
    c.reset_peak_host_memory_stats()
    s2 = c.host_memory_stats()
    assert all(s2[k.replace("current", "peak")] == v for k, v in s2.items() if k.endswith(".current"))
    c.reset_accumulated_host_memory_stats()
    s3 = c.host_memory_stats()
    assert all(v == 0 for k, v in s3.items() if k.endswith((".allocated", ".freed")) or k.startswith("num_"))
    assert s3["allocated_bytes.current"] == s2["allocated_bytes.current"]


@gpu
def test_cuda_device_queries():
    c = ctorch.cuda
    n = c.device_count()
    for d in range(n):
        for p in range(n):
            assert isinstance(c.can_device_access_peer(d, p), bool)
    with pytest.raises(AssertionError, match="Invalid peer device id"):
        c.can_device_access_peer(0, n)
    with pytest.raises(AssertionError, match="Invalid device id"):
        c.can_device_access_peer(n, 0)
    h = c.current_blas_handle()
    assert isinstance(h, int) and h != 0 and c.current_blas_handle() == h
    assert c.is_tf32_supported() == (c.get_device_capability()[0] >= 8)
    archs = c.get_arch_list()
    assert c.get_gencode_flags() == " ".join(f"-gencode compute=compute_{a[3:]},code=sm_{a[3:]}" for a in archs)


@gpu
def test_cuda_external_stream():
    c = ctorch.cuda
    s = c.Stream()
    e = c.ExternalStream(s.cuda_stream)
    assert isinstance(e, c.Stream) and e.cuda_stream == s.cuda_stream and e.device_index == c.current_device()
    x = ctorch.arange(6.0, device="cuda")
    with c.stream(e):
        assert c.current_stream().cuda_stream == s.cuda_stream
        y = x * 2
    e.synchronize()
    np.testing.assert_array_equal(y.cpu().numpy(), np.arange(6.0) * 2)
    with pytest.raises(TypeError, match="stream_ptr must be an int"):
        c.ExternalStream("0")


@gpu
def test_cuda_random_submodule():
    r = ctorch.cuda.random
    r.manual_seed(5)
    state = r.get_rng_state()
    a = ctorch.rand(4, device="cuda")
    r.set_rng_state(state)
    np.testing.assert_array_equal(a.cpu().numpy(), ctorch.rand(4, device="cuda").cpu().numpy())
    assert r.initial_seed() == 5 and len(r.get_rng_state_all()) == ctorch.cuda.device_count()


@pytest.fixture
def sync_mode():
    yield ctorch.cuda.set_sync_debug_mode
    ctorch.cuda.set_sync_debug_mode(0)


@gpu
def test_cuda_sync_debug_mode(sync_mode):
    c = ctorch.cuda
    assert c.get_sync_debug_mode() == 0
    x = ctorch.arange(5.0, device="cuda")
    sync_mode("warn")
    assert c.get_sync_debug_mode() == 1
    with pytest.warns(UserWarning, match=SYNC_MESSAGE):
        assert x.sum().item() == 10.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = x * 2 + 1  # no wait: no warning
        c.synchronize()  # explicit waits are never reported
        c.current_stream().synchronize()
    sync_mode(2)
    assert c.get_sync_debug_mode() == 2
    with pytest.raises(RuntimeError, match=SYNC_MESSAGE):
        y.cpu()
    sync_mode("default")
    np.testing.assert_array_equal(y.cpu().numpy(), np.arange(5.0) * 2 + 1)
    with pytest.raises(RuntimeError, match="invalid value of debug_mode, expected one of `default`, `warn`, `error`"):
        sync_mode("loud")
    with pytest.raises(RuntimeError, match="invalid value of debug_mode, expected one of 0,1,2"):
        sync_mode(3)


@gpu
def test_cuda_sync_debug_mode_covers_every_wait(sync_mode):
    """Under "error", an operation either raises before the host waits or does not wait at all:
    the emulator counts every synchronize and device-to-host copy, so a wait that escaped the
    check would show."""
    if emulator_counters() is None:
        pytest.skip("counts the runtime calls on the CUDA emulator only")
    F = ctorch.nn.functional
    x = ctorch.tensor([[0.5, -1.0, 2.0], [0.0, 3.0, -0.5]], device="cuda")
    idx = ctorch.tensor([1, 0], device="cuda")
    ops = {
        "item": lambda: x.max().item(), "cpu": lambda: x.cpu(), "tolist": lambda: x.tolist(),
        "bool": lambda: bool(x[0, 0]), "nonzero": lambda: x.nonzero(), "masked_select": lambda: x[x > 0],
        "index_select": lambda: x.index_select(0, idx), "gather": lambda: x.gather(1, idx[:, None]),
        "index_put": lambda: x.clone().index_put_((idx,), ctorch.zeros(3, device="cuda")),
        "embedding": lambda: F.embedding(idx, x), "cross_entropy": lambda: F.cross_entropy(x, idx),
        "bce": lambda: F.binary_cross_entropy(x.sigmoid(), x.gt(0).float()),
        "multinomial": lambda: ctorch.multinomial(x.abs() + 0.1, 2), "unique": lambda: ctorch.unique(x),
        "repeat_interleave": lambda: ctorch.repeat_interleave(idx), "matmul": lambda: x @ x.T,
        "sum": lambda: x.sum(), "sort": lambda: x.sort(), "randperm": lambda: ctorch.randperm(5, device="cuda"),
    }
    sync_mode("error")
    raised = []
    for name, op in ops.items():
        before = emulator_counters()
        try:
            op()
        except RuntimeError as e:
            assert SYNC_MESSAGE in str(e), (name, str(e))
            raised.append(name)
        assert emulator_counters() == before, f"{name} waited for the GPU without the check"
    sync_mode("default")
    assert {"item", "cpu", "tolist", "bool", "nonzero", "masked_select", "cross_entropy"} <= set(raised)
    assert not {"matmul", "sum", "sort"} & set(raised)
