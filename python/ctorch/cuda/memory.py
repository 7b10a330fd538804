"""ctorch.cuda memory functions: the caching allocator's statistics and controls.

The numbers follow PyTorch's allocator rules (512-byte rounding, 2 MiB small-pool segments,
20 MiB / 2 MiB-rounded large-pool segments), so they read as a PyTorch user expects. Before
CUDA is initialised every statistic is 0 (memory_stats() is empty), as in PyTorch."""
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
    """Statistics of the pinned host memory cache."""
    return _C._cuda_host_memory_stats()


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
