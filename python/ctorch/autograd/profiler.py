"""torch.autograd.profiler: profile (the event recorder torch.profiler.profile runs on),
record_function and emit_nvtx.

While a profile runs, csrc/profiler.c records every ctorch op called from Python (functions,
Tensor methods, operators, indexing) with its wall time, input shapes and memory deltas, and,
with CUDA timing, two CUDA events around each op on a CUDA tensor, read once when the profile
stops. Ops are named as PyTorch's ("aten::add"); a C op's own inner calls are not separate events
(PyTorch shows aten::linear's aten::t and aten::addmm; ctorch shows aten::linear alone), while ops
reached back through Python nest inside their caller."""

import functools
import threading

from .. import _C
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg, DeviceType, Kernel  # noqa: F401

__all__ = ["profile", "record_function", "emit_nvtx", "EventList", "FunctionEvent", "FunctionEventAvg",
           "DeviceType", "kineto_available"]

_SHAPES, _MEMORY, _CUDA = 1, 2, 4

# ctorch's entry points whose PyTorch op has another name
_ATEN_NAMES = {"_linear_mm": "linear", "_linear_nd": "linear", "__getitem__": "index", "__setitem__": "index_put_"}

_active = None  # the _Recorder in progress (one at a time, as PyTorch's profiler)


def kineto_available():
    return False


def _aten_name(op):
    """PyTorch's event name for an op (backward nodes come named: "autograd::engine::...")."""
    return op if "::" in op else "aten::" + _ATEN_NAMES.get(op, op)


class _Recorder:
    """One recording: the raw op tuples from C and the record_function ranges from Python."""

    def __init__(self, record_shapes, profile_memory, use_cuda):
        self.flags = (_SHAPES if record_shapes else 0) | (_MEMORY if profile_memory else 0) | \
            (_CUDA if use_cuda else 0)
        self.ops = []
        self.ranges = []
        self.use_cuda = use_cuda
        self.profile_memory = profile_memory
        self.cuda_ref = None  # (device, event, cpu ns): where GPU time lines up with CPU time
        self.nvtx = None  # emit_nvtx: ranges go to ctorch.cuda.nvtx instead of events

    def start(self, push=None, pop=None):
        global _active
        if _active is not None or _C._profiler_enabled():
            raise RuntimeError("Profiler is already enabled on this thread")
        self.start_ns = _C._profiler_clock_ns()
        if self.use_cuda:
            self._cuda_reference()
        _C._profiler_enable(self.ops, self.flags, push, pop)
        _active = self

    def _cuda_reference(self):
        from .. import cuda
        if cuda.is_initialized():
            d = cuda.current_device()
            ev = _C._cuda_event_create(d, 1)
            _C._cuda_event_record(d, ev, _C._cuda_current_stream(d))
            self.cuda_ref = (d, ev, _C._profiler_clock_ns())

    def stop(self):
        global _active
        if _active is self:
            _C._profiler_disable()
            _active = None
        self.end_ns = _C._profiler_clock_ns()

    def cuda_memory(self):
        if not (self.profile_memory and self.use_cuda):
            return 0
        from .. import cuda
        return cuda.memory_allocated() if cuda.is_initialized() else 0

    def events(self, use_device):
        """The FunctionEvents, their CUDA times read (one wait per device, here at the end)."""
        base = self.start_ns
        tid_of = {}  # thread ident -> 1, 2, ... in order of appearance, as PyTorch numbers threads
        out = []
        last_ev = {}
        for op in self.ops:
            if op[6] >= 0:
                last_ev[op[6]] = op[8]
        for d, ev in last_ev.items():
            _C._cuda_event_synchronize(d, ev)
        ref = self.cuda_ref
        for name, t0, t1, shapes, cpu_mem, cuda_mem, dev, ev0, ev1, tid in self.ops:
            evt = FunctionEvent(0, _aten_name(name), tid_of.setdefault(tid, len(tid_of) + 1),
                                (t0 - base) / 1000.0, (t1 - base) / 1000.0, input_shapes=shapes,
                                cpu_memory_usage=cpu_mem, device_memory_usage=cuda_mem, use_device=use_device,
                                device_index=max(dev, 0))
            if dev >= 0:
                duration = _C._cuda_event_elapsed_time(dev, ev0, ev1) * 1000.0
                kernel = Kernel(evt.name, dev, duration)
                kernel.start = evt.time_range.start
                if ref is not None and ref[0] == dev:
                    kernel.start = (ref[2] - base) / 1000.0 + _C._cuda_event_elapsed_time(dev, ref[1], ev0) * 1000.0
                evt.kernels.append(kernel)
                evt._device_span = duration
                _C._cuda_event_destroy(dev, ev0)
                _C._cuda_event_destroy(dev, ev1)
            out.append(evt)
        if ref is not None:
            _C._cuda_event_destroy(ref[0], ref[1])
            self.cuda_ref = None
        for name, t0, t1, cpu_mem, cuda_mem, tid in self.ranges:
            # PyTorch keys every step as "ProfilerStep*"; the trace keeps "ProfilerStep#N"
            key = "ProfilerStep*" if name.startswith("ProfilerStep#") else name
            out.append(FunctionEvent(0, key, tid_of.setdefault(tid, len(tid_of) + 1), (t0 - base) / 1000.0,
                                     (t1 - base) / 1000.0, cpu_memory_usage=cpu_mem, device_memory_usage=cuda_mem,
                                     is_user_annotation=True, use_device=use_device, trace_name=name))
        out.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
        for i, evt in enumerate(out):
            evt.id = i + 1
        events = EventList(out, use_device=use_device, profile_memory=self.profile_memory,
                           base_time_ns=base)
        events._build_tree()
        self.ops, self.ranges = [], []
        return events


class profile:
    """Context manager that records the ops run inside it (torch.autograd.profiler.profile).

    profile(enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
    profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True, ...).
    After the block: function_events, key_averages(), table(), export_chrome_trace()."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        self.enabled = enabled
        if not enabled:
            return
        if use_cuda:
            use_device = "cuda"
        if use_device not in (None, "cuda"):
            raise RuntimeError(f"Device {use_device!r} is not supported by ctorch's profiler (cpu, cuda)")
        self.use_device = use_device
        self.use_cuda = use_device == "cuda"
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.acc_events = acc_events
        self.entered = False
        self.function_events = None
        self._recorder = None

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._start()
        self.entered = True
        return self

    def _start(self):
        self._recorder = _Recorder(self.record_shapes, self.profile_memory, self.use_cuda)
        self._recorder.start()

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        self._stop()
        return False

    def _stop(self):
        rec = self._recorder
        if rec is None:
            return
        self._recorder = None
        rec.stop()
        if self.use_cuda:
            from .. import cuda
            if cuda.is_initialized():
                cuda.synchronize()
        events = rec.events(self.use_device)
        if self.acc_events and self.function_events is not None:
            events = EventList(list(self.function_events) + list(events), use_device=self.use_device,
                               profile_memory=self.profile_memory, base_time_ns=events._base_time_ns)
            events._tree_built = True
        self.function_events = events

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        self._check_finish()
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path):
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def __str__(self):
        self._check_finish()
        return str(self.function_events)

    def __repr__(self):
        return str(self) if self.function_events is not None else "<unfinished ctorch.autograd.profile>"


class record_function:
    """Labels a block (or, as a decorator, each call of a function) in the profile:
    ``with record_function("model_inference"): ...``. Costs nothing when no profile runs."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._rec = None

    def __enter__(self):
        rec = _active
        if rec is not None and rec.nvtx is not None:
            rec.nvtx.range_push(self.name)
            self._rec = rec
        elif rec is not None:
            self._rec = rec
            self._t0 = _C._profiler_clock_ns()
            if rec.profile_memory:
                self._mem0 = _C._cpu_allocated_bytes()
                self._cuda0 = rec.cuda_memory()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        rec, self._rec = self._rec, None
        if rec is not None and rec.nvtx is not None:
            rec.nvtx.range_pop()
        elif rec is not None:
            t1 = _C._profiler_clock_ns()
            cpu = cuda = 0
            if rec.profile_memory:
                cpu = _C._cpu_allocated_bytes() - self._mem0
                cuda = rec.cuda_memory() - self._cuda0
            rec.ranges.append((self.name, self._t0, t1, cpu, cuda, threading.get_ident()))
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped


class emit_nvtx:
    """Wraps every ctorch op run inside it in an NVTX range named as the op ("aten::add"), for
    Nsight Systems / nvprof (ctorch.cuda.nvtx; no-ops where libnvToolsExt is absent)."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.entered = False
        self._recorder = None

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        self.entered = True
        from ..cuda import nvtx
        from .. import cuda
        if cuda.is_initialized():
            cuda.synchronize()
        self._recorder = _Recorder(False, False, False)
        self._recorder.ops = None  # NVTX ranges only, nothing kept
        self._recorder.nvtx = nvtx
        self._recorder.start(lambda op: nvtx.range_push(_aten_name(op)), nvtx.range_pop)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        from .. import cuda
        if cuda.is_initialized():
            cuda.synchronize()
        self._recorder.stop()
        self._recorder = None
        self.entered = False
        return False
