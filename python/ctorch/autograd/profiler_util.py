"""Profiler results: FunctionEvent, FunctionEventAvg and EventList with PyTorch's field names,
key_averages(), table() and export_chrome_trace(). The events come from the op hook in
csrc/profiler.c (one per op called from Python) and from record_function ranges."""

import enum
import json
import os

__all__ = ["DeviceType", "EventList", "FunctionEvent", "FunctionEventAvg", "Interval", "Kernel"]


class DeviceType(enum.Enum):
    CPU = 0
    CUDA = 1


class Interval:
    """A time range in microseconds."""

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


class Kernel:
    """Device work of one op: its name, device index and duration in microseconds."""

    def __init__(self, name, device, duration):
        self.name = name
        self.device = device
        self.duration = duration


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes):
    for scale, unit in ((1024 ** 3, "GB"), (1024 ** 2, "MB"), (1024, "KB")):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes} B"


class _FormattedTimes:
    """The *_str twins of the time fields and the per-call averages."""

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    cuda_time = device_time

    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))
    device_time_str = property(lambda self: _format_time(self.device_time))
    device_time_total_str = property(lambda self: _format_time(self.device_time_total))
    self_device_time_total_str = property(lambda self: _format_time(self.self_device_time_total))


class FunctionEvent(_FormattedTimes):
    """One op call or record_function range. Times in microseconds from the start of the trace;
    memory in bytes (net allocation during the call, children included)."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, cpu_memory_usage=0,
                 device_memory_usage=0, is_user_annotation=False, use_device=None, device_index=0,
                 trace_name=None):
        self.id = id
        self.node_id = -1
        self.name = name
        self.overload_name = ""
        self.trace_name = trace_name if trace_name is not None else name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = None
        self.kernels = []
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.concrete_inputs = []
        self.kwinputs = {}
        self.stack = []
        self.scope = 0
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = False
        self.is_remote = False
        self.sequence_nr = -1
        self.device_type = DeviceType.CPU
        self.device_index = device_index
        self.device_resource_id = thread
        self.is_legacy = False
        self.flops = 0
        self.is_user_annotation = is_user_annotation
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1
        self.total_device_percent = -1
        self._device_span = None  # measured device time of this call (children included), or None

    def append_kernel(self, name, device, duration):
        self.kernels.append(Kernel(name, device, duration))

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def device_time_total(self):
        if self._device_span is not None:
            return self._device_span
        return sum(k.duration for k in self.kernels) + sum(c.device_time_total for c in self.cpu_children)

    @property
    def self_device_time_total(self):
        return self.device_time_total - sum(c.device_time_total for c in self.cpu_children)

    cuda_time_total = device_time_total
    self_cuda_time_total = self_device_time_total

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_device_memory_usage(self):
        return self.device_memory_usage - sum(c.device_memory_usage for c in self.cpu_children)

    self_cuda_memory_usage = self_device_memory_usage

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} "
                f"device_type={self.device_type} node_id={self.node_id} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start} end_us={self.time_range.end} "
                f"cpu_children={[c.id for c in self.cpu_children]} {self.use_device}_time={self.device_time_str} "
                f"name={self.name} thread={self.thread} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} {self.use_device}_memory_usage={self.device_memory_usage} "
                f"is_async={self.is_async} is_remote={self.is_remote} seq_nr={self.sequence_nr} "
                f"is_legacy={self.is_legacy}>")


class FunctionEventAvg(_FormattedTimes):
    """The sum of the events that share a key (and shapes, when grouped so)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.is_user_annotation = False
        self.flops = 0

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.overload_name = other.overload_name
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.use_device = other.use_device
            self.is_user_annotation = other.is_user_annotation
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        device_name = "cuda" if not self.use_device else self.use_device
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  self_{device_name}_time={self.self_device_time_total_str} "
                f"{device_name}_time={self.device_time_str} input_shapes={self.input_shapes or ''} "
                f"cpu_memory_usage={self.cpu_memory_usage} {device_name}_memory_usage={self.device_memory_usage}>")


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with the reports of PyTorch's EventList."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False, base_time_ns=0, **kwargs):
        super().__init__(*args, **kwargs)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._base_time_ns = base_time_ns
        self._tree_built = False

    def _build_tree(self):
        """Parents and children by time containment, per thread (events are sorted by start)."""
        if self._tree_built:
            return
        by_thread = {}
        for evt in self:
            by_thread.setdefault(evt.thread, []).append(evt)
        for events in by_thread.values():
            events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
            stack = []
            for evt in events:
                while stack and stack[-1].time_range.end <= evt.time_range.start:
                    stack.pop()
                if stack and evt.time_range.end <= stack[-1].time_range.end:
                    evt.set_cpu_parent(stack[-1])
                    stack[-1].append_cpu_child(evt)
                stack.append(evt)
        self._tree_built = True

    @property
    def self_cpu_time_total(self):
        return sum(evt.self_cpu_time_total for evt in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """A text table of the events, sorted by the attribute ``sort_by`` (descending):
        cpu_time, cpu_time_total, self_cpu_time_total, cuda_time/device_time(_total), cpu_memory_usage,
        self_cpu_memory_usage, count, ... ``row_limit`` rows at most."""
        return _build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width,
                            profile_memory=self._profile_memory, top_level_events_only=top_level_events_only,
                            time_unit=time_unit)

    def export_chrome_trace(self, path):
        """Writes the events as a Chrome trace (chrome://tracing, Perfetto, TensorBoard)."""
        pid = os.getpid()
        base_us = self._base_time_ns / 1000.0
        trace = []
        for i, evt in enumerate(self):
            args = {"External id": evt.id}
            if evt.input_shapes:
                args["Input Dims"] = evt.input_shapes
            trace.append({"ph": "X", "cat": "user_annotation" if evt.is_user_annotation else "cpu_op",
                          "name": evt.trace_name, "pid": pid, "tid": evt.thread,
                          "ts": base_us + evt.time_range.start, "dur": evt.time_range.elapsed_us(),
                          "args": args})
            for k in evt.kernels:
                start = getattr(k, "start", evt.time_range.start)
                trace.append({"ph": "X", "cat": "kernel", "name": k.name, "pid": k.device, "tid": "stream",
                              "ts": base_us + start, "dur": k.duration,
                              "args": {"External id": evt.id, "device": k.device}})
        doc = {"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms",
               "baseTimeNanoseconds": self._base_time_ns, "traceEvents": trace, "traceName": str(path)}
        if str(path).endswith(".gz"):
            import gzip
            with gzip.open(path, "wt") as f:
                json.dump(doc, f)
        else:
            with open(path, "w") as f:
                json.dump(doc, f)
        return path

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        """One FunctionEventAvg per key (and input shapes / overload name when asked), in order of
        first appearance."""
        self._build_tree()
        stats = {}
        for evt in self:
            key = [str(evt.key), str(evt.node_id)]
            if group_by_input_shapes:
                key.append(str(evt.input_shapes))
            if group_by_stack_n > 0:
                key += evt.stack[:group_by_stack_n]
            if group_by_overload_name:
                key.append(evt.overload_name)
            stats.setdefault(tuple(key), FunctionEventAvg()).add(evt)
        avg = EventList(stats.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                        with_flops=self._with_flops, base_time_ns=self._base_time_ns)
        for evt in avg:
            evt.stack = evt.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                evt.input_shapes = ""
            if not group_by_overload_name:
                evt.overload_name = ""
        avg._tree_built = True
        return avg

    def total_average(self):
        """One FunctionEventAvg over every event, keyed "Total"."""
        total = FunctionEventAvg()
        for evt in self:
            total.key = evt.key
            total.add(evt)
        total.key = "Total"
        return total


def _build_table(events, sort_by=None, header=None, row_limit=100, max_name_column_width=55,
                 max_shapes_column_width=80, profile_memory=False, top_level_events_only=False, time_unit=None):
    """PyTorch's table layout: a name column, then 12-wide right-aligned columns, two spaces apart."""
    if len(events) == 0:
        return ""
    use_device = events[0].use_device
    has_device_time = any(evt.self_device_time_total > 0 for evt in events)
    has_device_mem = any(evt.self_device_memory_usage > 0 for evt in events)
    has_input_shapes = any(evt.input_shapes is not None and len(evt.input_shapes) > 0 for evt in events)
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
        events = sorted(events, key=lambda evt: getattr(evt, attr), reverse=True)
    name_width = min(max(len(evt.key) for evt in events) + 4, max_name_column_width)
    shapes_width = min(max(len(str(evt.input_shapes)) for evt in events) + 4, max_shapes_column_width)
    device = use_device.upper() if use_device is not None else "None"

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device_time:
        headers += [f"Self {device}", f"Self {device} %", f"{device} total", f"{device} time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if use_device and has_device_mem:
            headers += [f"{device} Mem", f"Self {device} Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    if has_input_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    header_sep = "".join("-" * w + "  " for w in widths)

    def fmt_time(us):
        if time_unit == "s":
            return f"{us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{us:.3f}us"
        return _format_time(us)

    sum_self_cpu = sum(evt.self_cpu_time_total for evt in events)
    sum_self_device = sum(evt.self_device_time_total for evt in events)
    lines = []
    if header is not None:
        lines += ["=" * (sum(widths) + 2 * len(widths) - 2), header]
    if top_level_events_only:
        lines += ["=" * (sum(widths) + 2 * len(widths) - 2), "This report only display top-level ops statistics"]
    lines += [header_sep, row_format.format(*headers), header_sep]
    shown = 0
    for evt in events:
        if shown == row_limit:
            break
        if top_level_events_only and evt.cpu_parent is not None:
            continue
        shown += 1
        name = evt.key
        if len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        evt.self_cpu_percent = _format_time_share(evt.self_cpu_time_total, sum_self_cpu)
        evt.total_cpu_percent = _format_time_share(evt.cpu_time_total, sum_self_cpu) if not evt.is_async else 0
        row = [name, evt.self_cpu_percent, fmt_time(evt.self_cpu_time_total), evt.total_cpu_percent,
               fmt_time(evt.cpu_time_total), fmt_time(evt.cpu_time)]
        if has_device_time:
            evt.total_device_percent = _format_time_share(evt.self_device_time_total, sum_self_device)
            row += [fmt_time(evt.self_device_time_total), evt.total_device_percent,
                    fmt_time(evt.device_time_total), fmt_time(evt.device_time)]
        if profile_memory:
            row += [_format_memory(evt.cpu_memory_usage), _format_memory(evt.self_cpu_memory_usage)]
            if use_device and has_device_mem:
                row += [_format_memory(evt.device_memory_usage), _format_memory(evt.self_device_memory_usage)]
        row.append(evt.count)
        if has_input_shapes:
            row.append(str(evt.input_shapes)[:shapes_width])
        lines.append(row_format.format(*row))
    lines.append(header_sep)
    lines.append(f"Self CPU time total: {fmt_time(sum_self_cpu)}")
    if has_device_time:
        lines.append(f"Self {device} time total: {fmt_time(sum_self_device)}")
    return "".join(line + "\n" for line in lines)
