"""Tests for ctorch.cuda, the lazily loaded CUDA backend, the caching allocator and host<->device
copies.

Two halves:
- "unavailable": runs wherever CUDA cannot be used (CI: no GPU; a CPU-only build): import
  works, is_available() is False, diagnose() explains, every CUDA use raises the documented
  error (AssertionError "ctorch not compiled with CUDA enabled" in a CPU-only build, RuntimeError
  naming the reason in a CUDA build), and what needs no GPU (seeds, TF32 switches, empty memory
  statistics) works.
- "gpu": skipped without a GPU: allocator statistics, out-of-memory and recovery, streams and
  events, pinned and non-blocking copies of every dtype and layout, casts on the GPU, and the
  cross-device rules.
"""
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ctorch
from conftest import ALL_DTYPES, np_dtype, to_numpy

AVAILABLE = ctorch.cuda.is_available()
BUILT = ctorch.cuda.is_built()
gpu = pytest.mark.skipif(not AVAILABLE, reason="CUDA not available")
unavailable = pytest.mark.skipif(AVAILABLE, reason="CUDA is available here")
cuda_build = pytest.mark.skipif(not BUILT, reason="CPU-only build")


def expected_error():
    """The exception type and message pattern of any CUDA use on this machine."""
    if not BUILT:
        return AssertionError, "^ctorch not compiled with CUDA enabled$"
    return RuntimeError, r"\w"


# =============================================================================================
# Without a usable GPU
# =============================================================================================
@unavailable
def test_import_and_availability():
    assert ctorch.cuda.is_available() is False
    assert ctorch.cuda.device_count() == 0
    assert ctorch.cuda.is_initialized() is False
    assert ctorch.cuda.get_arch_list() == []
    assert ctorch.cuda.is_bf16_supported() is False


def test_version_cuda():
    if BUILT:
        assert re.fullmatch(r"\d+\.\d+", ctorch.version.cuda)
    else:
        assert ctorch.version.cuda is None
    assert ctorch.backends.cuda.is_built() == BUILT
    assert ctorch.version.__version__ == ctorch.__version__


@unavailable
def test_diagnose_explains(capsys):
    text = ctorch.cuda.diagnose()
    assert capsys.readouterr().out.strip() == text.strip()
    assert text.endswith("CUDA is not available.")
    if not BUILT:
        assert "built without CUDA" in text
    else:
        assert f"built with CUDA {ctorch.version.cuda}" in text
        # one of the plain-words reasons
        assert re.search(r"Problem: |not usable", text)


@unavailable
@pytest.mark.parametrize("use", [
    "cuda", "cuda_index", "cuda_str", "to_str", "to_device", "to_int", "tensor_device", "current_device",
    "set_device", "synchronize", "stream", "current_stream", "mem_get_info", "pin_memory", "factory_pin_memory",
    "tensor_pin_memory", "init", "get_device_properties", "to_non_blocking",
])
def test_cuda_use_raises(use):
    t = ctorch.tensor([1.0, 2.0])
    calls = {
        "cuda": lambda: t.cuda(),
        "cuda_index": lambda: t.cuda(0),
        "cuda_str": lambda: t.cuda("cuda:0"),
        "to_str": lambda: t.to("cuda"),
        "to_device": lambda: t.to(ctorch.device("cuda", 0)),
        "to_int": lambda: t.to(0),
        "tensor_device": lambda: ctorch.tensor([1], device="cuda"),
        "current_device": lambda: ctorch.cuda.current_device(),
        "set_device": lambda: ctorch.cuda.set_device(0),
        "synchronize": lambda: ctorch.cuda.synchronize(),
        "stream": lambda: ctorch.cuda.Stream(),
        "current_stream": lambda: ctorch.cuda.current_stream(),
        "mem_get_info": lambda: ctorch.cuda.mem_get_info(),
        "pin_memory": lambda: t.pin_memory(),
        "factory_pin_memory": lambda: ctorch.zeros(2, pin_memory=True),
        "tensor_pin_memory": lambda: ctorch.tensor([1.0], pin_memory=True),
        "init": lambda: ctorch.cuda.init(),
        "get_device_properties": lambda: ctorch.cuda.get_device_properties(0),
        "to_non_blocking": lambda: t.to("cuda", non_blocking=True),
    }
    exc, pattern = expected_error()
    with pytest.raises(exc, match=pattern) as info:
        calls[use]()
    if BUILT:  # the reason, not a crash or an AssertionError
        assert "not compiled" not in str(info.value)


@gpu
def test_factories_pin_memory():
    """pin_memory=True on a factory gives a pinned CPU tensor (it used to be ignored)."""
    made = [ctorch.zeros(3, pin_memory=True), ctorch.empty(2, 2, pin_memory=True), ctorch.full((2,), 7.0, pin_memory=True),
            ctorch.tensor([1.0, 2.0], pin_memory=True), ctorch.ones(1).new_tensor([3.0], pin_memory=True),
            ctorch.arange(4, pin_memory=True)]
    assert all(t.is_pinned() and t.device.type == "cpu" for t in made)
    assert made[0].tolist() == [0, 0, 0] and made[3].tolist() == [1.0, 2.0] and made[5].tolist() == [0, 1, 2, 3]
    assert not ctorch.zeros(3, pin_memory=False).is_pinned()
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        ctorch.zeros(2, device="cuda", pin_memory=True)


@unavailable
def test_cuda_error_names_the_reason():
    """In a CUDA build the RuntimeError is the reason diagnose() gives."""
    exc, _ = expected_error()
    with pytest.raises(exc) as info:
        ctorch.tensor([1]).cuda()
    if BUILT:
        assert str(info.value) in ctorch.cuda.diagnose()


@unavailable
def test_what_needs_no_gpu():
    t = ctorch.tensor([1, 2, 3])
    assert t.is_pinned() is False
    assert ctorch.cuda.memory_allocated() == 0
    assert ctorch.cuda.max_memory_allocated() == 0
    assert ctorch.cuda.memory_reserved() == 0
    assert ctorch.cuda.max_memory_reserved() == 0
    assert ctorch.cuda.memory_stats() == {}
    ctorch.cuda.empty_cache()
    ctorch.cuda.reset_peak_memory_stats()
    assert "Allocated memory" in ctorch.cuda.memory_summary()
    with ctorch.cuda.device(None):
        pass
    with ctorch.cuda.stream(None):
        pass
    ctorch.cuda.set_device(-1)  # a negative index does nothing, as in PyTorch


def test_seeds_without_gpu():
    old = ctorch.cuda.initial_seed()
    try:
        ctorch.cuda.manual_seed(1234)
        assert ctorch.cuda.initial_seed() == 1234
        ctorch.cuda.manual_seed_all(99)
        assert ctorch.cuda.initial_seed() == 99
        ctorch.cuda.manual_seed(-1)  # wraps, as PyTorch
        assert ctorch.cuda.initial_seed() == 2 ** 64 - 1
        ctorch.cuda.seed()
        assert 0 <= ctorch.cuda.initial_seed() < 2 ** 64
        with pytest.raises(RuntimeError, match="Overflow when unpacking long"):
            ctorch.cuda.manual_seed(2 ** 64)
    finally:
        ctorch.cuda.manual_seed_all(old)


def test_events_before_record():
    e = ctorch.cuda.Event(enable_timing=True)
    assert repr(e) == "<ctorch.cuda.Event uninitialized>"
    assert e.query() is True
    e.synchronize()
    e.wait()
    with pytest.raises(RuntimeError, match="Both events must be recorded before calculating elapsed time."):
        e.elapsed_time(ctorch.cuda.Event(enable_timing=True))


def test_out_of_memory_error_class():
    assert ctorch.cuda.OutOfMemoryError is ctorch.OutOfMemoryError
    assert issubclass(ctorch.cuda.OutOfMemoryError, RuntimeError)
    assert issubclass(ctorch.AcceleratorError, RuntimeError)


@pytest.fixture
def restore_precision():
    old = ctorch.get_float32_matmul_precision()
    yield
    ctorch.set_float32_matmul_precision(old)


def test_tf32_switches(restore_precision):
    ctorch.set_float32_matmul_precision("highest")
    assert ctorch.backends.cuda.matmul.allow_tf32 is False
    ctorch.set_float32_matmul_precision("high")
    assert ctorch.backends.cuda.matmul.allow_tf32 is True
    assert ctorch.get_float32_matmul_precision() == "high"
    ctorch.set_float32_matmul_precision("medium")
    assert ctorch.backends.cuda.matmul.allow_tf32 is True
    ctorch.backends.cuda.matmul.allow_tf32 = False
    assert ctorch.get_float32_matmul_precision() == "highest"
    ctorch.backends.cuda.matmul.allow_tf32 = True
    assert ctorch.get_float32_matmul_precision() == "high"
    with pytest.warns(UserWarning, match="foo is not one of 'highest', 'high', or 'medium'"):
        ctorch.set_float32_matmul_precision("foo")
    assert ctorch.get_float32_matmul_precision() == "high"
    assert ctorch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction is True
    assert ctorch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction is True
    with pytest.raises(AttributeError):
        ctorch.backends.cuda.matmul.allow_fp8


def test_tf32_default_in_fresh_process():
    out = run_python("import ctorch; print(ctorch.get_float32_matmul_precision(), "
                     "ctorch.backends.cuda.matmul.allow_tf32)")
    assert out.split() == ["highest", "False"]


def run_python(code, **env):
    """Runs code in a fresh interpreter importing this same ctorch (the backend is loaded at most
    once per process, so its failure paths need their own processes)."""
    full_env = dict(os.environ)
    full_env.update(env)
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(ctorch.__file__)))
    full_env["PYTHONPATH"] = os.pathsep.join([package_parent, full_env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


@cuda_build
def test_import_does_not_open_the_backend():
    code = ("import ctorch\n"
            "maps = lambda: open('/proc/self/maps').read()\n"
            "print('_C_cuda' in maps())\n"
            "ctorch.cuda.is_available()\n"
            "print('_C_cuda' in maps())\n")
    assert run_python(code).split() == ["False", "True"]


@cuda_build
def test_missing_backend_is_explained():
    code = ("import ctorch\n"
            "assert ctorch.cuda.is_available() is False\n"
            "assert ctorch.cuda.device_count() == 0\n"
            "try:\n"
            "    ctorch.tensor([1]).cuda()\n"
            "except RuntimeError as e:\n"
            "    print('ERROR', e)\n"
            "ctorch.cuda.diagnose()\n")
    out = run_python(code, CTORCH_CUDA_BACKEND="/nonexistent/_C_cuda.so")
    assert "ERROR ctorch's CUDA backend /nonexistent/_C_cuda.so is missing" in out
    assert "CUDA backend: /nonexistent/_C_cuda.so (missing)" in out
    assert out.strip().endswith("CUDA is not available.")


@cuda_build
def test_unloadable_backend_is_explained(tmp_path):
    bogus = tmp_path / "_C_cuda.so"
    bogus.write_text("not a shared object, but longer than an ELF header. " * 4)
    code = ("import ctorch\n"
            "assert not ctorch.cuda.is_available()\n"
            "ctorch.cuda.diagnose()\n")
    out = run_python(code, CTORCH_CUDA_BACKEND=str(bogus))
    assert "Problem: ctorch's CUDA backend could not be loaded:" in out
    assert "invalid ELF header" in out


# =============================================================================================
# With a GPU
# =============================================================================================
def big_cuda_tensor(nbytes):
    """A zero uint8 CUDA tensor of nbytes, made by one memset: no host array of that size (and no
    kernel over every byte, which would take the CUDA emulator half a minute)."""
    return ctorch.zeros(nbytes, dtype=ctorch.uint8, device="cuda")


@gpu
def test_device_queries():
    n = ctorch.cuda.device_count()
    assert n >= 1
    ctorch.cuda.init()
    assert ctorch.cuda.is_initialized()
    assert 0 <= ctorch.cuda.current_device() < n
    p = ctorch.cuda.get_device_properties(0)
    assert p.total_memory > 0 and p.multi_processor_count > 0 and p.major >= 7
    assert ctorch.cuda.get_device_name(0) == p.name
    assert ctorch.cuda.get_device_capability(0) == (p.major, p.minor)
    assert ctorch.cuda.get_arch_list()
    free, total = ctorch.cuda.mem_get_info()
    assert 0 < free <= total
    with pytest.raises(AssertionError, match="Invalid device id"):
        ctorch.cuda.get_device_properties(n)
    with ctorch.cuda.device(0):
        assert ctorch.cuda.current_device() == 0
    ctorch.cuda.synchronize()
    assert "OK." in ctorch.cuda.diagnose()


@gpu
def test_invalid_ordinal():
    n = ctorch.cuda.device_count()
    with pytest.raises(RuntimeError, match="CUDA error: invalid device ordinal"):
        ctorch.tensor([1], device=f"cuda:{n}")
    with pytest.raises(RuntimeError, match="CUDA error: invalid device ordinal"):
        ctorch.cuda.set_device(n)


@gpu
def test_device_arguments():
    for dev in (0, "cuda", "cuda:0", ctorch.device("cuda", 0), ctorch.device("cuda:0")):
        t = ctorch.tensor([1, 2], device=dev)
        assert t.device == ctorch.device("cuda", 0)
        assert t.is_cuda and not t.is_cpu
        assert t.get_device() == 0
    x = ctorch.tensor([1.0, 2.0], device="cuda")
    assert x.cuda() is x
    assert x.to("cuda:0") is x
    assert x.to("cuda") is x
    assert x.cuda(0) is x
    assert x.cuda("cuda:0") is x
    assert x.cpu().cpu() is not None
    with pytest.raises(RuntimeError, match="Invalid device, must be cuda device"):
        x.cuda("cpu")


@gpu
def test_repr_item_numpy():
    t = ctorch.tensor([1, 4, 9], device="cuda")
    assert repr(t) == "tensor([1, 4, 9], device='cuda:0')"
    assert ctorch.tensor([2.5], device="cuda").item() == 2.5
    with pytest.raises(TypeError, match=re.escape("can't convert cuda:0 device type tensor to numpy. Use "
                                                  "Tensor.cpu() to copy the tensor to host memory first.")):
        t.numpy()


@gpu
def test_cross_device_error():
    a = ctorch.tensor([1.0, 2.0], device="cuda")
    b = ctorch.tensor([1.0, 2.0])
    if not hasattr(ctorch.Tensor, "__add__"):
        pytest.skip("elementwise ops not built yet")
    msg = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        a + b
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        b + a
    # 0-d CPU tensors and Python scalars mix freely
    assert to_numpy(a + ctorch.tensor(1.0)).tolist() == [2.0, 3.0]
    assert to_numpy(a + 1).tolist() == [2.0, 3.0]


@gpu
def test_allocator_statistics():
    ctorch.cuda.synchronize()
    ctorch.cuda.empty_cache()
    base = ctorch.cuda.memory_allocated()
    x = ctorch.tensor(np.zeros(1, np.uint8), device="cuda")
    assert ctorch.cuda.memory_allocated() == base + 512  # rounded up to 512 bytes
    y = ctorch.tensor(np.zeros(1000, np.uint8), device="cuda")
    assert ctorch.cuda.memory_allocated() == base + 512 + 1024
    assert ctorch.cuda.memory_reserved() >= 2 * 1024 * 1024  # a 2 MiB small-pool segment
    stats = ctorch.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == ctorch.cuda.memory_allocated()
    assert stats["requested_bytes.all.current"] >= 1001
    assert stats["allocation.small_pool.current"] >= 2
    assert list(stats) == sorted(stats)
    for key in ("num_alloc_retries", "num_ooms", "max_split_size", "segment.large_pool.peak",
                "inactive_split_bytes.all.freed", "active_bytes.all.allocated", "reserved_bytes.all.current"):
        assert key in stats
    del x, y
    assert ctorch.cuda.memory_allocated() == base
    assert ctorch.cuda.max_memory_allocated() >= base + 1536
    ctorch.cuda.reset_peak_memory_stats()
    assert ctorch.cuda.max_memory_allocated() == base
    big = big_cuda_tensor(50 * 1024 * 1024 + 1)  # large pool: rounded to 2 MiB segments
    assert ctorch.cuda.memory_allocated() - base == 50 * 1024 * 1024 + 512
    reserved = ctorch.cuda.memory_reserved()
    del big
    assert ctorch.cuda.memory_reserved() == reserved  # cached
    ctorch.cuda.empty_cache()
    assert ctorch.cuda.memory_reserved() < reserved
    assert "Allocated memory" in ctorch.cuda.memory_summary()


@gpu
def test_out_of_memory_and_recovery():
    total = ctorch.cuda.get_device_properties(0).total_memory
    keep = big_cuda_tensor(256 * 1024 * 1024)
    ooms = ctorch.cuda.memory_stats()["num_ooms"]
    with pytest.raises(ctorch.cuda.OutOfMemoryError) as info:
        big_cuda_tensor(2 * total)
    msg = str(info.value)
    assert msg.startswith("CUDA out of memory. Tried to allocate ")
    assert re.search(r"GPU 0 has a total capacity of [\d.]+ GiB of which [\d.]+ \w+ is free\.", msg)
    assert re.search(r"Of the allocated memory [\d.]+ \w+ is allocated by ctorch, and [\d.]+ \w+ is reserved by "
                     r"ctorch but unallocated\.", msg)
    assert "The largest live tensors are " in msg and "256.00 MiB" in msg
    assert isinstance(info.value, RuntimeError)
    stats = ctorch.cuda.memory_stats()
    assert stats["num_ooms"] == ooms + 1
    assert stats["num_alloc_retries"] >= 1
    # fully usable afterwards
    del keep
    t = ctorch.tensor([1.0, 2.0], device="cuda")
    assert to_numpy(t).tolist() == [1.0, 2.0]
    again = big_cuda_tensor(64 * 1024 * 1024)
    again[1:3] = 7
    assert to_numpy(again.narrow(0, 0, 4)).tolist() == [0, 7, 7, 0]


@gpu
def test_streams_and_events():
    default = ctorch.cuda.current_stream()
    assert default == ctorch.cuda.default_stream()
    assert default.cuda_stream == 0
    s = ctorch.cuda.Stream()
    assert s != default and s.device == ctorch.device("cuda", 0)
    least, greatest = ctorch.cuda.Stream.priority_range()
    high = ctorch.cuda.Stream(priority=-1)
    assert greatest <= high.priority <= least
    with ctorch.cuda.stream(s):
        assert ctorch.cuda.current_stream() == s
        x = ctorch.tensor(np.arange(1000, dtype=np.float32), device="cuda")
        y = x.to(ctorch.float64)
    assert ctorch.cuda.current_stream() == default
    s.synchronize()
    assert s.query() is True
    assert to_numpy(y).tolist() == list(range(1000))
    start, end = ctorch.cuda.Event(enable_timing=True), ctorch.cuda.Event(enable_timing=True)
    start.record()
    z = big_cuda_tensor(16 * 1024 * 1024)
    end.record()
    end.synchronize()
    assert end.query() is True
    assert start.elapsed_time(end) >= 0.0
    assert "ctorch.cuda.Event 0x" in repr(end)
    e = s.record_event()
    default.wait_event(e)
    default.wait_stream(s)
    e.wait(high)
    ctorch.cuda.synchronize()
    del z


LAYOUTS = ["contiguous", "transposed", "narrowed", "expanded", "scalar", "empty"]


def make(layout, dtype, device, rng):
    """(tensor, numpy equivalent) of a 5x7 random array of dtype in the given layout."""
    nd = np_dtype(dtype)
    if dtype == "bool":
        base = rng.random((5, 7)) > 0.5
    elif np.issubdtype(nd, np.integer):
        info = np.iinfo(nd)
        base = rng.integers(max(info.min, -1000), min(info.max, 1000), size=(5, 7), endpoint=True).astype(nd)
    else:
        base = (rng.standard_normal((5, 7)) * 50).astype(nd)
    kw = {"dtype": getattr(ctorch, dtype), "device": device}
    if layout == "contiguous":
        return ctorch.tensor(base, **kw), base
    if layout == "transposed":
        return ctorch.tensor(np.ascontiguousarray(base.T), **kw).T, base
    if layout == "narrowed":  # rows with a gap between them
        return ctorch.tensor(base, **kw).narrow(1, 2, 4), base[:, 2:6]
    if layout == "expanded":
        return ctorch.tensor(base[:1], **kw).expand(4, 7), np.broadcast_to(base[:1], (4, 7))
    if layout == "scalar":
        return ctorch.tensor(base[0, 0], **kw), base[0, 0]
    return ctorch.tensor(base[:0], **kw), base[:0]


@gpu
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_round_trip_every_dtype_and_layout(dtype, layout, rng):
    cpu, ref = make(layout, dtype, "cpu", rng)
    expect = to_numpy(cpu)
    on_gpu = cpu.cuda()
    assert on_gpu.is_cuda and on_gpu.dtype == cpu.dtype and tuple(on_gpu.shape) == tuple(cpu.shape)
    np.testing.assert_array_equal(to_numpy(on_gpu), expect)
    # the same view made on the GPU side, brought back
    gpu_view, _ = make(layout, dtype, "cuda", np.random.default_rng(0))
    cpu_view, _ = make(layout, dtype, "cpu", np.random.default_rng(0))
    np.testing.assert_array_equal(to_numpy(gpu_view.cpu()), to_numpy(cpu_view))
    # pinned, non-blocking both ways
    pinned = cpu.pin_memory()
    assert pinned.is_pinned() and not cpu.is_pinned()
    assert pinned.pin_memory() is pinned
    up = pinned.to("cuda", non_blocking=True)
    down = up.to("cpu", non_blocking=True)
    assert down.is_pinned()
    ctorch.cuda.synchronize()
    np.testing.assert_array_equal(to_numpy(down), expect)
    # copy_ with non_blocking into an existing (possibly strided) CUDA tensor
    dst = ctorch.tensor(np.zeros(np.shape(ref), np_dtype(dtype)), dtype=cpu.dtype, device="cuda")
    dst.copy_(pinned, non_blocking=True)
    ctorch.cuda.synchronize()
    np.testing.assert_array_equal(to_numpy(dst), expect)


@gpu
@pytest.mark.parametrize("src", ALL_DTYPES)
@pytest.mark.parametrize("dst", ALL_DTYPES)
def test_casts_on_gpu_match_cpu(src, dst, rng):
    """The CUDA copy kernel against the CPU cast loops, contiguous (vectorised, with a tail) and
    strided."""
    vals = (rng.standard_normal(4099) * 60).astype(np.float64)
    vals[:8] = [0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 127.0, 100.7]
    cpu = ctorch.tensor(vals).to(getattr(ctorch, src))
    if src in ("uint8",) or dst in ("uint8",):
        cpu = ctorch.tensor(np.abs(vals)).to(getattr(ctorch, src))
    want = to_numpy(cpu.to(getattr(ctorch, dst)))
    got = to_numpy(cpu.cuda().to(getattr(ctorch, dst)))
    np.testing.assert_array_equal(got, want)
    strided = cpu.cuda().narrow(0, 1, 4098).view(2049, 2).T  # (2, 2049), strides (1, 2)
    np.testing.assert_array_equal(to_numpy(strided.to(getattr(ctorch, dst))), want[1:].reshape(2049, 2).T)


@gpu
def test_same_device_copy_and_fill():
    a = ctorch.tensor(np.arange(12, dtype=np.int32).reshape(3, 4), device="cuda")
    b = ctorch.tensor(np.zeros((4, 3), np.float32), device="cuda")
    b.copy_(a.T)
    np.testing.assert_array_equal(to_numpy(b), np.arange(12).reshape(3, 4).T)
    c = ctorch.tensor(np.zeros((2, 3), np.float64), device="cuda")
    c.copy_(ctorch.tensor([1.0, 2.0, 3.0], device="cuda"))
    np.testing.assert_array_equal(to_numpy(c), [[1, 2, 3], [1, 2, 3]])
    c.copy_(ctorch.tensor(5.0))  # a 0-d CPU tensor broadcast into a CUDA tensor
    np.testing.assert_array_equal(to_numpy(c), np.full((2, 3), 5.0))


@gpu
def test_pinned_memory_cache_reuses_blocks():
    a = ctorch.tensor(np.zeros(1000, np.float32)).pin_memory()
    ptr = a.data_ptr()
    del a
    b = ctorch.tensor(np.ones(900, np.float32)).pin_memory()  # same power-of-two block
    assert b.data_ptr() == ptr
    stats = ctorch.cuda.host_memory_stats()
    assert stats["allocated_bytes.current"] >= 4096 and stats["num_host_alloc"] >= 1
    del b


@gpu
def test_zero_size_tensors():
    base = ctorch.cuda.memory_allocated()
    e = ctorch.tensor(np.zeros((0, 3), np.float32), device="cuda")
    assert tuple(e.shape) == (0, 3)
    assert ctorch.cuda.memory_allocated() == base
    assert to_numpy(e).shape == (0, 3)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=gpu)])
def test_empty_tensor_data_ptr_is_zero(device):
    # PyTorch: a tensor without elements has data_ptr() 0, whatever its storage or offset
    assert ctorch.empty(0, device=device).data_ptr() == 0
    assert ctorch.zeros(3, 0, device=device).data_ptr() == 0
    t = ctorch.arange(10.0, device=device)
    assert t.data_ptr() != 0
    assert t[5:5].data_ptr() == 0
    assert t[5:].data_ptr() == t.data_ptr() + 5 * t.element_size()


@gpu
def test_empty_cuda_storage_holds_no_memory():
    ctorch.cuda.synchronize()
    stats = ctorch.cuda.memory_stats()
    before = (stats.get("num_device_alloc", 0), stats.get("allocation.all.allocated", 0))
    e = ctorch.empty(0, 5, device="cuda")
    assert e.untyped_storage().data_ptr() == 0
    f = e + 1  # the kernels see numel 0: nothing runs
    g = e.to(ctorch.float64)
    assert f.data_ptr() == 0 and g.data_ptr() == 0 and tuple(g.shape) == (0, 5)
    stats = ctorch.cuda.memory_stats()
    assert (stats.get("num_device_alloc", 0), stats.get("allocation.all.allocated", 0)) == before
    assert to_numpy(e.cpu()).shape == (0, 5)


@gpu
def test_same_device_copies_of_every_kind():
    # contiguous same dtype (device-to-device memcpy), strided same dtype (bit copy kernel), casts
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 33)).astype(np.float32)
    a = ctorch.tensor(x, device="cuda")
    b = ctorch.empty(64, 33, device="cuda")
    b.copy_(a)
    np.testing.assert_array_equal(to_numpy(b), x)
    c = ctorch.empty(33, 64, device="cuda")
    c.copy_(a.T)
    np.testing.assert_array_equal(to_numpy(c), x.T)
    d = ctorch.empty(64, 33, dtype=ctorch.float64, device="cuda")
    d.copy_(a)
    np.testing.assert_array_equal(to_numpy(d), x.astype(np.float64))
    e = a.clone()
    assert e.data_ptr() != a.data_ptr()
    np.testing.assert_array_equal(to_numpy(e), x)


@pytest.mark.skipif(not AVAILABLE or ctorch.cuda.device_count() < 2, reason="needs two GPUs")
def test_copies_between_gpus():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((40, 30)).astype(np.float32)
    a = ctorch.tensor(x, device="cuda:0")
    b = a.to("cuda:1")
    assert str(b.device) == "cuda:1"
    np.testing.assert_array_equal(to_numpy(b), x)
    c = ctorch.empty(30, 40, dtype=ctorch.float64, device="cuda:1")
    c.copy_(a.T)  # strided source, another dtype, another GPU
    np.testing.assert_array_equal(to_numpy(c), x.T.astype(np.float64))
    d = ctorch.zeros(40, 60, device="cuda:0")
    d[:, ::2].copy_(b)  # strided destination
    np.testing.assert_array_equal(to_numpy(d)[:, ::2], x)
    np.testing.assert_array_equal(to_numpy(d)[:, 1::2], 0)


@gpu
def test_no_memory_caching_switch():
    out = run_python(
        "import ctorch\n"
        "a = ctorch.ones(1000, device='cuda')\n"
        "s = ctorch.cuda.memory_stats()\n"
        "print(s['num_device_alloc'], ctorch.cuda.memory_reserved())\n"
        "del a\n"
        "print(ctorch.cuda.memory_reserved(), ctorch.cuda.memory_stats()['num_device_free'])\n",
        CTORCH_NO_CUDA_MEMORY_CACHING="1")
    first, second = out.split("\n")[:2]
    assert first.split()[1] == "4000"  # exactly the bytes asked for
    assert second.split()[0] == "0" and int(second.split()[1]) >= 1


@gpu
def test_warnings_free():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ctorch.tensor([1.0], device="cuda").cpu()


def test_accelerator_api_follows_cuda():
    import ctorch as torch
    available = torch.cuda.is_available()
    assert torch.accelerator.is_available() is available
    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    assert device == ("cuda" if available else "cpu")
    acc = torch.accelerator.current_accelerator()
    assert acc == (torch.device("cuda") if torch.cuda.is_built() else None)
    assert torch.accelerator.current_accelerator(check_available=True) == (torch.device("cuda") if available else None)
    assert torch.accelerator.device_count() == torch.cuda.device_count()
    if available:
        x = torch.ones(4, device=device)
        assert torch.accelerator.memory_allocated() >= x.numel() * 4
        torch.accelerator.synchronize()


def emulator_counters():
    """The CUDA emulator's counts (tests/cuda_emu: launches, synchronize calls, device-to-host
    copies), or None on a real GPU."""
    import ctypes
    try:
        lib = ctypes.CDLL(os.path.join(os.path.dirname(ctorch.__file__), "_C_cuda.so"))
        fn = lib.ct_emu_counters
    except (OSError, AttributeError):
        return None
    out = (ctypes.c_longlong * 3)()
    fn(out)
    return list(out)


@gpu
@pytest.mark.parametrize("loss_name", ["cross_entropy", "mse_loss"])
def test_training_step_waits_at_most_once(loss_name):
    """A training step (Linear/ReLU MLP, a loss, backward, SGD with momentum) lets the host run
    ahead of the GPU: the one wait is cross_entropy's target check (a copy of its result, then a
    synchronize); mse_loss's step never waits. Counted on the emulator, whose runtime sees every
    call."""
    from ctorch import nn
    if emulator_counters() is None:
        pytest.skip("counts the runtime calls on the CUDA emulator only")
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5)).to("cuda")
    opt = ctorch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = ctorch.randn(8, 12, device="cuda")
    y = ctorch.randint(0, 5, (8,), device="cuda") if loss_name == "cross_entropy" else ctorch.randn(8, 5, device="cuda")
    loss_fn = getattr(nn.functional, loss_name)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    step()  # the momentum buffers are made
    before = emulator_counters()
    step()
    launches, syncs, d2h = (b - a for a, b in zip(before, emulator_counters()))
    waits = 1 if loss_name == "cross_entropy" else 0
    assert (syncs, d2h) == (waits, waits)
    assert launches > 0
