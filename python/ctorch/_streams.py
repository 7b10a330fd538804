"""torch.Stream and torch.Event: device-agnostic handles. On CUDA they wrap ctorch.cuda's Stream / Event; the
CPU runs every op to completion before it returns, so its only stream is the default one (id 0), always
idle, and it has no events to record (PyTorch's CPU backend behaves the same)."""
from . import _C

# c10::DeviceType numbers, which PyTorch reports as Stream.device_type
_DEVICE_TYPE_NUMBERS = {"cpu": 0, "cuda": 1, "meta": 9}


def _device_of(device):
    if device is None:
        from . import accelerator
        device = accelerator.current_accelerator()
        if device is None:
            raise RuntimeError("torch.Stream / torch.Event need a device when no accelerator is built")
    device = _C.device(device) if not isinstance(device, _C.device) else device
    if device.type not in _DEVICE_TYPE_NUMBERS:
        raise RuntimeError(f"unsupported device type for streams and events: {device.type}")
    return device


def _no_events(device_type):
    return RuntimeError(f"{device_type} backend doesn't support events.")


class Stream:
    """Stream(device=None, *, priority=0): a queue of work on device (the current accelerator by default)."""

    def __init__(self, device=None, *, priority=0):
        self._device = _device_of(device)
        self._cuda = None
        if self._device.type == "cuda":
            from . import cuda
            self._cuda = cuda.Stream(self._device, priority=priority)

    @property
    def device(self):
        return self._device if self._cuda is None else self._cuda.device

    @property
    def device_type(self):
        return _DEVICE_TYPE_NUMBERS[self._device.type]

    @property
    def device_index(self):
        return -1 if self._cuda is None else self._cuda.device_index

    @property
    def stream_id(self):
        return 0 if self._cuda is None else self._cuda.cuda_stream

    @property
    def native_handle(self):
        if self._cuda is None:
            raise RuntimeError("Backend doesn't support getting stream native handle.")
        return self._cuda.cuda_stream

    def is_capturing(self):
        return False

    def query(self):
        return True if self._cuda is None else self._cuda.query()

    def synchronize(self):
        if self._cuda is not None:
            self._cuda.synchronize()

    def wait_event(self, event):
        event.wait(self)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        if event is None:
            event = Event(self.device)
        event.record(self)
        return event

    def __enter__(self):
        if self._cuda is not None:
            from . import cuda
            self._previous = cuda.current_stream(self._cuda.device_index)
            cuda.set_stream(self._cuda)
        return self

    def __exit__(self, *exc):
        if self._cuda is not None:
            from . import cuda
            cuda.set_stream(self._previous)

    def __eq__(self, other):
        if not isinstance(other, Stream):
            return False
        return self._device == other._device and self.stream_id == other.stream_id

    def __hash__(self):
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self):
        return (f"torch.Stream device_type={self._device.type}, device_index={self.device_index}, "
                f"stream_id={self.stream_id}")


class Event:
    """Event(device=None, *, enable_timing=False, blocking=False, interprocess=False): a marker in a stream."""

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self._device = _device_of(device)
        self._enable_timing = bool(enable_timing)
        self._cuda = None
        if self._device.type == "cuda":
            from . import cuda
            self._cuda = cuda.Event(enable_timing=enable_timing, blocking=blocking, interprocess=interprocess)

    @property
    def device(self):
        return self._device

    @property
    def event_id(self):
        return 0 if self._cuda is None else self._cuda.cuda_event

    def record(self, stream=None):
        if self._cuda is None:
            raise _no_events(self._device.type)
        self._cuda.record(None if stream is None else stream._cuda)

    def wait(self, stream=None):
        if self._cuda is not None:
            self._cuda.wait(None if stream is None else stream._cuda)

    def query(self):
        return True if self._cuda is None else self._cuda.query()

    def synchronize(self):
        if self._cuda is not None:
            self._cuda.synchronize()

    def elapsed_time(self, end_event):
        if not (self._enable_timing and end_event._enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._cuda is None:
            raise _no_events(self._device.type)
        return self._cuda.elapsed_time(end_event._cuda)

    def __repr__(self):
        return (f"torch.Event device_type={self._device.type}, device_index=-1, "
                f"event_flag={int(self._enable_timing)}, event_id={self.event_id}")


def get_device_module(device=None):
    """The module of a device type (torch.cuda for 'cuda', torch.cpu for 'cpu'); the current accelerator's (else
    the CPU's) with no argument."""
    import importlib
    if device is None:
        from . import accelerator
        device = accelerator.current_accelerator() or _C.device("cpu")
    if isinstance(device, str):
        device = _C.device(device)
    elif not isinstance(device, _C.device):
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    return importlib.import_module(f"ctorch.{device.type}")
