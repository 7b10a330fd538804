"""ctorch.cuda memory functions: the caching allocator's statistics and controls.

The numbers follow PyTorch's allocator rules (512-byte rounding, 2 MiB small-pool segments,
20 MiB / 2 MiB-rounded large-pool segments), so they read as a PyTorch user expects. Before
CUDA is initialised every statistic is 0 (memory_stats() is empty), as in PyTorch."""
import warnings

from .. import _C
from ._utils import _get_device_index, _resolve

OutOfMemoryError = _C.OutOfMemoryError


def memory_stats(device=None):
    """The allocator's statistics for ``device`` as a dict sorted by key, with PyTorch's key names
    ("allocated_bytes.all.current", "reserved_bytes.large_pool.peak", "num_ooms", ...)."""
    stats = _C._cuda_memory_stats(_get_device_index(device))
    return dict(sorted(stats.items()))


def memory_allocated(device=None):
    """Bytes of device memory held by tensors (block sizes, rounded up to 512 bytes)."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    """The peak of memory_allocated() since the start or the last reset_peak_memory_stats()."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    """Bytes of device memory obtained from cudaMalloc and held by the allocator."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    """The peak of memory_reserved() since the start or the last reset_peak_memory_stats()."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device=None):
    """Sets every peak statistic to its current value."""
    _C._cuda_reset_peak_memory_stats(_get_device_index(device))


def reset_accumulated_memory_stats(device=None):
    """Zeroes the accumulated ("allocated"/"freed") statistics and the retry/OOM counters."""
    _C._cuda_reset_accumulated_memory_stats(_get_device_index(device))


def reset_max_memory_allocated(device=None):
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None):
    reset_peak_memory_stats(device)


def empty_cache():
    """Returns the cached, unused device memory to the driver."""
    _C._cuda_empty_cache()


def host_memory_stats():
    """Statistics of the pinned host memory cache, sorted by key, with PyTorch's names:
    "allocations" / "allocated_bytes" (blocks the cache owns, handed out or cached),
    "active_requests" / "active_bytes" (handed out), each ".current/.peak/.allocated/.freed",
    and "num_host_alloc" / "num_host_free" (cudaHostAlloc / cudaFreeHost calls). Empty before
    CUDA is initialised. (No timings are kept: there are no "host_alloc_time" entries.)"""
    return dict(sorted(_C._cuda_host_memory_stats().items()))


def host_memory_stats_as_nested_dict():
    """host_memory_stats() nested at its dots."""
    return _nest(_C._cuda_host_memory_stats())


def reset_peak_host_memory_stats():
    """Sets the pinned cache's peak statistics to their current values."""
    _C._cuda_host_reset_stats(True)


def reset_accumulated_host_memory_stats():
    """Zeroes the pinned cache's ".allocated"/".freed" sums and its alloc/free counts."""
    _C._cuda_host_reset_stats(False)


def mem_get_info(device=None):
    """(free, total) bytes of device memory, as cudaMemGetInfo reports them."""
    return _C._cuda_mem_get_info(_resolve(device))


def _format_size(n, reference):
    units = ["B  ", "KiB", "MiB", "GiB", "TiB", "PiB"]
    unit = 0
    while unit < len(units) - 1 and reference >= 768 * 1024:
        n //= 1024
        reference /= 1024
        unit += 1
    return f"{n:6d} {units[unit]}"


def _format_count(n, reference):
    units = [" ", "K", "M"]
    unit = 0
    while unit < len(units) - 1 and reference >= 750 * 1000:
        n //= 1000
        reference /= 1000
        unit += 1
    return f"{n:7d} {units[unit]} "


def memory_summary(device=None, abbreviated=False):
    """A table of the allocator's statistics, laid out as PyTorch's memory_summary()."""
    index = _get_device_index(device)
    stats = memory_stats(index)
    if index < 0:
        index = _C._cuda_current_device() if stats else 0

    def get(key):
        return stats.get(key, 0)

    rule, thick = "-" * 75, "=" * 75
    out = [thick, f"{'ctorch CUDA memory summary, device ID ' + str(index):^75}", rule,
           f"{'CUDA OOMs: ' + str(get('num_ooms')):^37}|{'cudaMalloc retries: ' + str(get('num_alloc_retries')):^37}",
           thick, "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  "]
    rows = [("allocated_bytes", "Allocated memory", _format_size),
            ("active_bytes", "Active memory", _format_size),
            ("requested_bytes", "Requested memory", _format_size),
            ("reserved_bytes", "GPU reserved memory", _format_size),
            ("inactive_split_bytes", "Non-releasable memory", _format_size),
            ("allocation", "Allocations", _format_count),
            ("active", "Active allocs", _format_count),
            ("segment", "GPU reserved segments", _format_count),
            ("inactive_split", "Non-releasable allocs", _format_count)]
    fields = ("current", "peak", "allocated", "freed")
    for key, title, fmt in rows:
        out.append(rule)
        pools = [("all", title)]
        if not abbreviated:
            pools += [("large_pool", "      from large pool"), ("small_pool", "      from small pool")]
        reference = [get(f"{key}.all.{f}") for f in fields]
        for pool, name in pools:
            cells = [fmt(get(f"{key}.{pool}.{f}"), r) for f, r in zip(fields, reference)]
            out.append(f" {name:<21} | " + " | ".join(cells) + " ")
    for key, title in (("oversize_allocations", "Oversize allocations"), ("oversize_segments", "Oversize GPU segments")):
        out.append(rule)
        cells = [_format_count(get(f"{key}.{f}"), get(f"{key}.{f}")) for f in fields]
        out.append(f" {title:<21} | " + " | ".join(cells) + " ")
    out.append(thick)
    return "|" + "|\n|".join(out) + "|\n"


# --- more of torch.cuda.memory: cap, snapshot, raw blocks, nested statistics -----------------------
def set_per_process_memory_fraction(fraction, device=None):
    """Caps the caching allocator on ``device`` at ``fraction`` (a float in [0, 1]) of the
    device's total memory: an allocation that would take the reserved memory past it raises
    OutOfMemoryError (after the cache is flushed once)."""
    _C._cuda_init()
    index = _resolve(device)
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _C._cuda_set_memory_fraction(fraction, index)


def get_per_process_memory_fraction(device=None):
    """The fraction set by set_per_process_memory_fraction (1.0 when never set)."""
    _C._cuda_init()
    return _C._cuda_get_memory_fraction(_resolve(device))


def memory_snapshot(mempool_id=None, include_traces=True):
    """The caching allocator's segments on every device as PyTorch's list of dicts: device,
    address, total_size, allocated_size, active_size, requested_size, stream, segment_type
    ('small'/'large'), ... and blocks [{address, size, requested_size, state, frames}], state
    'active_allocated', 'active_pending_free' (freed, waiting for the streams given to record_stream)
    or 'inactive'. No stack traces are recorded, so frames are empty."""
    segments = []
    states = ("inactive", "active_allocated", "active_pending_free")
    for dev, address, size, requested, stream, small, state, head in _C._cuda_memory_snapshot():
        if head:
            seg = {"device": dev, "address": address, "total_size": 0, "allocated_size": 0, "active_size": 0,
                   "requested_size": 0, "stream": stream, "segment_type": "small" if small else "large",
                   "segment_pool_id": (0, 0), "is_expandable": False, "frames": [], "blocks": []}
            segments.append(seg)
        seg["total_size"] += size
        if state == 1:
            seg["allocated_size"] += size
            seg["requested_size"] += requested
        if state != 0:
            seg["active_size"] += size
        seg["blocks"].append({"address": address, "size": size, "requested_size": requested,
                              "state": states[state], "frames": []})
    return segments


def caching_allocator_alloc(size, device=None, stream=None):
    """``size`` bytes from the caching allocator on ``device`` for ``stream`` (a Stream or a raw
    cudaStream_t int; the device's current stream by default); returns the address, to be
    released with caching_allocator_delete()."""
    from . import Stream, current_stream  # noqa: PLC0415 (the package imports this module)
    index = _resolve(device)
    if stream is None:
        stream = current_stream(index)
    if isinstance(stream, Stream):
        stream = stream.cuda_stream
    if not isinstance(stream, int):
        raise TypeError("Invalid type for stream argument, must be `torch.cuda.Stream` or `int` representing a "
                        "pointer to an existing stream")
    previous = _C._cuda_current_stream(index)
    _C._cuda_set_stream(index, stream)
    try:
        return _C._cuda_raw_alloc(size, index)
    finally:
        _C._cuda_set_stream(index, previous)


def caching_allocator_delete(mem_ptr):
    """Frees memory from caching_allocator_alloc (its device and stream are known to the allocator)."""
    _C._cuda_raw_delete(mem_ptr)


def memory_stats_as_nested_dict(device=None):
    """memory_stats() nested at its dots: {"allocated_bytes": {"all": {"current": ...}}, ...}."""
    if not _C._cuda_is_initialized():
        return {}
    return _nest(_C._cuda_memory_stats(_get_device_index(device)))


def _nest(flat):
    """{"a.b.c": v} -> {"a": {"b": {"c": v}}}."""
    nested = {}
    for key, value in flat.items():
        *path, last = key.split(".")
        node = nested
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    return nested


def memory_cached(device=None):
    """Deprecated; see memory_reserved()."""
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`", FutureWarning,
                  stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None):
    """Deprecated; see max_memory_reserved()."""
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def get_allocator_backend():
    """'native': ctorch's own caching allocator (there is no cudaMallocAsync backend)."""
    return "native"


def list_gpu_processes(device=None):
    """The processes using ``device`` and their GPU memory, as NVML (nvidia-smi) reports them."""
    from . import _nvml  # noqa: PLC0415
    if not _nvml.available():
        return "pynvml module not found, please install nvidia-ml-py"
    try:
        handle = _nvml.handle(device)
    except _nvml.DriverNotLoaded:
        return "cuda driver can't be loaded, is cuda enabled?"
    lines = [f"GPU:{_nvml.device_index(device)}"]  # NVML's numbering, as PyTorch prints it
    procs = _nvml.compute_processes(handle)
    if not procs:
        lines.append("no processes are running")
    for pid, used in procs:
        lines.append(f"process {pid:>10d} uses {used / (1024 * 1024):>12.3f} MB GPU memory")
    return "\n".join(lines)
