"""ctorch.cuda: GPU devices, streams, events, memory and diagnosis, with torch.cuda's API.

Thin: every function calls into ctorch._C (csrc/cuda_loader.c), which opens the CUDA backend
(ctorch/_C_cuda.so) on first use. Nothing here initialises CUDA at import. Where CUDA cannot be
used, is_available() is False and diagnose() says why in plain words."""
import contextlib
import os

from .. import _C
from ._utils import _get_device_index, _resolve
from . import _nvml
from .memory import (OutOfMemoryError, empty_cache, host_memory_stats, max_memory_allocated,  # noqa: F401
                     max_memory_reserved, mem_get_info, memory_allocated, memory_reserved, memory_stats,
                     memory_summary, reset_accumulated_memory_stats, reset_max_memory_allocated,
                     reset_max_memory_cached, reset_peak_memory_stats)
from .memory import (caching_allocator_alloc, caching_allocator_delete, get_allocator_backend,  # noqa: F401
                     get_per_process_memory_fraction, host_memory_stats_as_nested_dict, list_gpu_processes,
                     max_memory_cached, memory_cached, memory_snapshot, memory_stats_as_nested_dict,
                     reset_accumulated_host_memory_stats, reset_peak_host_memory_stats,
                     set_per_process_memory_fraction)
from .streams import Event, ExternalStream, Stream  # noqa: F401
from . import memory, nvtx  # noqa: F401

globals().update(_C._cuda_legacy_types)  # torch.cuda.FloatTensor, ...: the legacy types of CUDA tensors
from ..storage import _legacy_storage_classes  # noqa: E402

globals().update({cls.__name__: cls for cls in _legacy_storage_classes["cuda"].values()})  # torch.cuda.FloatStorage


def is_available():
    """True when ctorch was built with CUDA and at least one GPU can run its kernels. Never raises."""
    try:
        return _C._cuda_is_available()
    except Exception:
        return False


def is_built():
    """True when ctorch was built with CUDA (whether or not a GPU is present)."""
    return _C._cuda_is_built()


def device_count():
    """Number of visible GPUs; 0 when there is no driver, no GPU, or CUDA is not built."""
    try:
        return _C._cuda_device_count()
    except Exception:
        return 0


def is_initialized():
    """True once CUDA has been used in this process."""
    return _C._cuda_is_initialized()


def init():
    """Initialises CUDA now (it is otherwise initialised on first use); raises why it cannot."""
    _C._cuda_init()


def _lazy_init():
    _C._cuda_init()


def current_device():
    """The index of the current device."""
    return _C._cuda_current_device()


def set_device(device):
    """Makes ``device`` (int, 'cuda:N' or ctorch.device) current. A negative index does nothing."""
    index = _get_device_index(device)
    if index >= 0:
        _C._cuda_set_device(index)


class device:
    """Context manager that makes a device current and restores the previous one on exit.
    ``device(None)`` and ``device(-1)`` do nothing."""

    def __init__(self, device):
        self.idx = _get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = _C._cuda_current_device()
            if self.prev_idx != self.idx:
                _C._cuda_set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            _C._cuda_set_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager making the device of tensor ``obj`` current (nothing for CPU tensors)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


class _CudaDeviceProperties:
    """What get_device_properties() returns: name, major, minor, total_memory (bytes),
    multi_processor_count, and more (uuid, L2_cache_size, warp_size, ...)."""

    def __init__(self, fields):
        self.__dict__.update(fields)

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count}, uuid={self.uuid[4:]}, "
                f"pci_bus_id={self.pci_bus_id}, pci_device_id={self.pci_device_id}, "
                f"pci_domain_id={self.pci_domain_id}, L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)")


def get_device_properties(device=None):
    """The properties of ``device`` (the current one by default)."""
    _lazy_init()
    index = _resolve(device)
    if index < 0 or index >= device_count():
        raise AssertionError("Invalid device id")
    return _CudaDeviceProperties(_C._cuda_get_device_properties(index))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    """(major, minor) compute capability."""
    p = get_device_properties(device)
    return p.major, p.minor


def get_arch_list():
    """The architectures ctorch's kernels were compiled for, e.g. ['sm_75', ..., 'sm_90'] ([] when
    CUDA cannot be used)."""
    if not is_available():
        return []
    return _C._cuda_get_arch_list()


def is_bf16_supported(including_emulation=True):
    """True when the current GPU computes bfloat16 natively (compute capability >= 8.0)."""
    if not is_available():
        return False
    return get_device_capability()[0] >= 8 or including_emulation


has_half = True  # float16 tensors and kernels on every supported GPU


def is_tf32_supported():
    """True when the current GPU has TF32 tensor cores (compute capability >= 8.0)."""
    return is_bf16_supported(including_emulation=False)


def get_gencode_flags():
    """The nvcc -gencode flags of get_arch_list(), e.g. '-gencode compute=compute_75,code=sm_75 ...'
    ('' when CUDA cannot be used)."""
    return " ".join(f"-gencode compute=compute_{arch},code={kind}_{arch}"
                    for kind, arch in (a.split("_") for a in get_arch_list()))


def can_device_access_peer(device, peer_device):
    """True when ``device`` can read and write ``peer_device``'s memory directly (P2P)."""
    _lazy_init()
    device = _resolve(device)
    peer_device = _get_device_index(peer_device, optional=False)
    if device < 0 or device >= device_count():
        raise AssertionError("Invalid device id")
    if peer_device < 0 or peer_device >= device_count():
        raise AssertionError("Invalid peer device id")
    return _C._cuda_can_access_peer(device, peer_device)


def current_blas_handle():
    """The current device's cuBLAS handle (a cublasHandle_t as an int), bound to its current stream."""
    _lazy_init()
    return _C._cuda_current_blas_handle()


_SYNC_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_sync_debug_mode(debug_mode):
    """What happens where ctorch makes the host wait for the GPU without being asked (.item(),
    .cpu(), .tolist(), nonzero, masked_select, index checks, ...): "default"/0 nothing, "warn"/1
    a UserWarning, "error"/2 a RuntimeError before the wait. Explicit waits (synchronize(),
    Stream/Event.synchronize()) are never reported."""
    _lazy_init()
    if isinstance(debug_mode, str):
        if debug_mode not in _SYNC_DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`")
        debug_mode = _SYNC_DEBUG_MODES[debug_mode]
    _C._cuda_sync_debug_mode(debug_mode)


def get_sync_debug_mode():
    """The mode of set_sync_debug_mode(): 0, 1 or 2."""
    _lazy_init()
    return _C._cuda_sync_debug_mode(None)


# --- NVML readings (nvidia-smi's numbers; _nvml.py) ---------------------------------------------
def utilization(device=None):
    """Percent of the past sample period during which a kernel ran on the GPU."""
    return _nvml.utilization_rates(device).gpu


def memory_usage(device=None):
    """Percent of the past sample period during which device memory was read or written."""
    return _nvml.utilization_rates(device).memory


def temperature(device=None):
    """The GPU die's temperature in degrees Celsius."""
    return _nvml.temperature(device)


def power_draw(device=None):
    """The GPU's power draw in milliwatts."""
    return _nvml.power_usage(device)


def clock_rate(device=None):
    """The streaming multiprocessors' clock in MHz."""
    return _nvml.sm_clock(device)


def device_memory_used(device=None):
    """Bytes of device memory in use by every process, as nvidia-smi reports."""
    return _nvml.memory_info(device).used


def synchronize(device=None):
    """Waits for all work on ``device`` (the current one by default) to finish."""
    _C._cuda_synchronize(_resolve(device))


# --- streams -------------------------------------------------------------------------------------
def current_stream(device=None):
    """This thread's current stream on ``device``."""
    index = _resolve(device)
    return Stream(stream_ptr=_C._cuda_current_stream(index), device_index=index)


def default_stream(device=None):
    """The default (legacy, null) stream of ``device``."""
    index = _resolve(device)
    _C._cuda_init()
    return Stream(stream_ptr=0, device_index=index)


def set_stream(stream):
    """Makes ``stream`` current on its device, and its device current. None does nothing."""
    if stream is None:
        return
    _C._cuda_set_stream(stream.device_index, stream.cuda_stream)
    if _C._cuda_current_device() != stream.device_index:
        _C._cuda_set_device(stream.device_index)


class StreamContext:
    """Context manager that makes a stream (and its device) current, restoring both on exit."""

    def __init__(self, stream):
        self.stream = stream
        self.src_prev_stream = None
        self.dst_prev_stream = None

    def __enter__(self):
        if self.stream is None:
            return self
        self.src_prev_stream = current_stream(None)
        if self.src_prev_stream.device_index != self.stream.device_index:
            self.dst_prev_stream = current_stream(self.stream.device_index)
        set_stream(self.stream)
        return self

    def __exit__(self, *exc):
        if self.stream is None:
            return False
        if self.dst_prev_stream is not None:
            _C._cuda_set_stream(self.dst_prev_stream.device_index, self.dst_prev_stream.cuda_stream)
        set_stream(self.src_prev_stream)
        return False


def stream(stream):
    """``with ctorch.cuda.stream(s):`` runs the block's GPU work on stream ``s``."""
    return StreamContext(stream)


# --- random seeds: ctorch.cuda.random (stored for the CUDA generators; no GPU needed) ----------
from .random import (get_rng_state, get_rng_state_all, initial_seed, manual_seed,  # noqa: F401,E402
                     manual_seed_all, seed, seed_all, set_rng_state, set_rng_state_all)


def __getattr__(name):
    # default_generators: one per device once CUDA can be used, () before, as in PyTorch
    if name == "default_generators":
        if not is_available():
            return ()
        return tuple(_C._default_generator(f"cuda:{i}") for i in range(device_count()))
    raise AttributeError(f"module 'ctorch.cuda' has no attribute '{name}'")


# --- diagnosis -------------------------------------------------------------------------------------
def _gib(n):
    return f"{n / 1024 ** 3:.2f} GiB"


def _cuda_version_text(v):
    return f"{v // 1000}.{v % 1000 // 10}"


def diagnose():
    """Prints, in plain words, whether CUDA can be used and why not: a CPU-only build, the CUDA
    backend or cuBLAS missing, no NVIDIA driver, a driver older than the toolkit, no GPU, no
    kernel image for the GPU's architecture. Returns the same text."""
    import ctorch

    facts = _C._cuda_diagnostics()
    lines = []
    if not facts["built"]:
        lines += [f"ctorch {ctorch.__version__} was built without CUDA: nvcc was not found when it was compiled "
                  "(or CTORCH_CUDA=0 was set).",
                  "To use an NVIDIA GPU, install the CUDA toolkit (nvcc on PATH, or CUDA_HOME set) and reinstall "
                  "ctorch from source.",
                  "CUDA is not available."]
        return _emit(lines)
    archs = facts.get("arch_list")
    arch_text = ""
    if archs:
        arch_text = " for " + ", ".join("sm_" + a for a in archs.split(";"))
        if facts.get("ptx_arch"):
            arch_text += f" (+ PTX compute_{facts['ptx_arch']})"
    lines.append(f"ctorch {ctorch.__version__} was built with CUDA {facts['build_cuda_version']}{arch_text}.")
    lines.append(f"CUDA backend: {facts['backend_path']}" + ("" if facts["backend_exists"] else " (missing)"))
    kind, problem = facts.get("problem_kind"), facts.get("problem")
    if facts["loaded"]:
        driver, runtime = facts["driver_version"], facts["runtime_version"]
        if driver:
            lines.append(f"NVIDIA driver: installed, supports CUDA up to {_cuda_version_text(driver)}.")
        else:
            lines.append("NVIDIA driver: not found (libcuda.so.1 could not be loaded).")
        lines.append(f"CUDA runtime: {_cuda_version_text(runtime)} (linked into the backend).")
        if driver and driver < runtime and kind != "driver_too_old":
            lines.append(f"Note: the driver (CUDA {_cuda_version_text(driver)}) is older than the toolkit "
                         f"(CUDA {_cuda_version_text(runtime)}); this works through CUDA minor-version "
                         "compatibility, but PTX cannot be JIT-compiled for GPUs without a kernel image.")
    if kind == "no_driver":
        lines.append("Problem: no NVIDIA driver was found. On a machine with an NVIDIA GPU, install its driver "
                     "(nvidia-smi should then list the GPU); on a machine without one, CUDA cannot be used.")
    elif kind == "driver_too_old":
        lines.append(f"Problem: the NVIDIA driver is older than the CUDA toolkit ctorch was built with: it supports "
                     f"CUDA up to {_cuda_version_text(facts['driver_version'])}, ctorch needs "
                     f"{facts['build_cuda_version']}. Update the driver, or rebuild ctorch with a CUDA toolkit no "
                     f"newer than {_cuda_version_text(facts['driver_version'])}.")
    elif kind == "no_device":
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        lines.append("Problem: the NVIDIA driver is installed but no GPU is visible"
                     + (f" (CUDA_VISIBLE_DEVICES is set to '{visible}')" if visible is not None else "")
                     + ". Check nvidia-smi.")
    elif kind == "cublas":
        lines.append(f"Problem: {problem}")
    elif kind == "missing":
        lines.append(f"Problem: {problem}")
    elif kind in ("dlopen", "symbol", "abi", "init_error"):
        lines.append(f"Problem: {problem}")
    if kind in ("no_driver", "driver_too_old", "no_device"):
        lines.append(f"Using CUDA raises RuntimeError: {problem}")
    usable = 0
    for dev in facts.get("devices", []):
        head = (f"cuda:{dev['index']}: {dev['name']}, compute capability {dev['major']}.{dev['minor']}, "
                f"{_gib(dev['total_memory'])}")
        if not dev["kernel_image"]:
            lines.append(f"{head}: not usable. {dev['problem']}")
            continue
        probe = None
        try:
            probe = _C._cuda_probe_kernel_image(dev["index"])
        except Exception as e:  # the device could not even be initialised
            probe = str(e)
        if probe is None:
            usable += 1
            lines.append(f"{head}: OK.")
        else:
            lines.append(f"{head}: not usable. {probe}")
    if usable:
        lines.append(f"CUDA is available: {usable} usable GPU{'s' if usable > 1 else ''}.")
    else:
        lines.append("CUDA is not available.")
    return _emit(lines)


def _emit(lines):
    text = "\n".join(lines)
    print(text)
    return text
