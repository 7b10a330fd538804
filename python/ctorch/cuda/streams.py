"""ctorch.cuda.Stream and ctorch.cuda.Event: handles on CUDA streams and events.

The streams come from a per-device pool (as PyTorch's) and live as long as the process; the
C functions behind these classes are in csrc/cuda_loader.c."""
from .. import _C
from ._utils import _resolve


class Stream:
    """A CUDA stream: a queue of GPU work that runs in order.

    Stream(device=None, priority=0): a stream of the pool of ``device`` (the current device by
    default). Lower priority numbers mean higher priority; the value is clamped to the device's
    range (see ctorch.cuda.Stream.priority_range)."""

    def __new__(cls, device=None, priority=0, stream_ptr=None, device_index=None, **kwargs):
        self = super().__new__(cls)
        if stream_ptr is not None:  # wraps an existing stream (current_stream, default_stream)
            self.device_index = device_index
            self.cuda_stream = stream_ptr
            self._priority = None
            return self
        index = _resolve(device)
        self.device_index = index
        self.cuda_stream, self._priority = _C._cuda_stream_new(index, int(priority))
        return self

    def __init__(self, *args, **kwargs):
        pass

    @property
    def device(self):
        return _C.device("cuda", self.device_index)

    @property
    def priority(self):
        if self._priority is None:
            self._priority = _C._cuda_stream_priority(self.device_index, self.cuda_stream)
        return self._priority

    @staticmethod
    def priority_range(device=None):
        """(least, greatest) priority of the device's streams, e.g. (0, -5)."""
        return _C._cuda_stream_priority_range(_resolve(device))

    def query(self):
        """True when all the work submitted to this stream has completed."""
        return _C._cuda_stream_query(self.device_index, self.cuda_stream)

    def synchronize(self):
        """Waits for all the work submitted to this stream."""
        _C._cuda_stream_synchronize(self.device_index, self.cuda_stream)

    def wait_event(self, event):
        """Makes the work submitted to this stream from now on wait for ``event``."""
        event.wait(self)

    def wait_stream(self, stream):
        """Makes the work submitted to this stream from now on wait for the work already
        submitted to ``stream``."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Records ``event`` (a new one when None) on this stream and returns it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __eq__(self, other):
        if isinstance(other, Stream):
            return self.cuda_stream == other.cuda_stream and self.device_index == other.device_index
        return NotImplemented

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return f"<ctorch.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cuda_stream:#x}>"


_FLAG_TIMING, _FLAG_BLOCKING, _FLAG_INTERPROCESS = 1, 2, 4


class Event:
    """A CUDA event: a marker in a stream, to wait for or to time.

    Event(enable_timing=False, blocking=False, interprocess=False). The CUDA event is created
    on first record(), on the device of the stream it is recorded on."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self._flags = ((_FLAG_TIMING if enable_timing else 0) | (_FLAG_BLOCKING if blocking else 0)
                       | (_FLAG_INTERPROCESS if interprocess else 0))
        self.cuda_event = 0
        self.device_index = None

    @property
    def device(self):
        return None if self.device_index is None else _C.device("cuda", self.device_index)

    def record(self, stream=None):
        """Records the event on ``stream`` (the current stream by default)."""
        if stream is None:
            from . import current_stream
            stream = current_stream()
        if self.device_index is None:
            self.cuda_event = _C._cuda_event_create(stream.device_index, self._flags)
            self.device_index = stream.device_index
        elif self.device_index != stream.device_index:
            raise RuntimeError(f"Event device {self.device_index} does not match recording stream's device "
                               f"{stream.device_index}.")
        _C._cuda_event_record(self.device_index, self.cuda_event, stream.cuda_stream)

    def wait(self, stream=None):
        """Makes the future work of ``stream`` (the current stream by default) wait for this event."""
        if self.device_index is None:
            return
        if stream is None:
            from . import current_stream
            stream = current_stream()
        _C._cuda_stream_wait_event(stream.device_index, stream.cuda_stream, self.cuda_event)

    def query(self):
        """True when the work captured by the event has completed (True if never recorded)."""
        if self.device_index is None:
            return True
        return _C._cuda_event_query(self.device_index, self.cuda_event)

    def synchronize(self):
        """Waits until the work captured by the event has completed."""
        if self.device_index is not None:
            _C._cuda_event_synchronize(self.device_index, self.cuda_event)

    def elapsed_time(self, end_event):
        """Milliseconds from this event to ``end_event`` (both recorded with enable_timing=True
        and completed)."""
        if self.device_index is None or end_event.device_index is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return _C._cuda_event_elapsed_time(self.device_index, self.cuda_event, end_event.cuda_event)

    def __del__(self):
        if getattr(self, "device_index", None) is not None and _C is not None:
            try:
                _C._cuda_event_destroy(self.device_index, self.cuda_event)
            except Exception:
                pass

    def __repr__(self):
        if self.device_index is None:
            return "<ctorch.cuda.Event uninitialized>"
        return f"<ctorch.cuda.Event {self.cuda_event:#x}>"


__all__ = ["Stream", "Event"]


class ExternalStream(Stream):
    """A stream made elsewhere (another library's cudaStream_t, as an int), on ``device`` (the
    current device by default). Its owner keeps it alive; ctorch only queues work on it."""

    def __new__(cls, stream_ptr, device=None, **kwargs):
        if not isinstance(stream_ptr, int) or isinstance(stream_ptr, bool):
            raise TypeError(f"ExternalStream(): stream_ptr must be an int, not {type(stream_ptr).__name__}")
        return super().__new__(cls, stream_ptr=stream_ptr, device_index=_resolve(device))
