"""ctorch.cuda.nvtx: NVIDIA Tools Extension ranges and marks, shown by Nsight Systems.

The calls go to libnvToolsExt.so.1 (opened with ctypes on first use), which hands them to the
profiler that is attached, if any. Where the library is not installed they do what NVTX does
with no profiler attached: range_push/range_pop return -2, range_start returns 0, the rest
nothing. In a build without CUDA they raise, as PyTorch's do."""
import contextlib
import ctypes

from .. import _C

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]

_LIBRARY = "libnvToolsExt.so.1"
_NO_TOOL = -2  # NVTX_NO_PUSH_POP_TRACKING
_lib = None
_tried = False


def _nvtx():
    """The NVTX library, or None when it is not installed."""
    global _lib, _tried
    if not _C._cuda_is_built():
        raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA build?")
    if not _tried:
        _tried = True
        try:
            lib = ctypes.CDLL(_LIBRARY)
        except OSError:
            return None
        lib.nvtxRangePushA.argtypes = [ctypes.c_char_p]
        lib.nvtxRangePushA.restype = ctypes.c_int
        lib.nvtxRangePop.restype = ctypes.c_int
        lib.nvtxRangeStartA.argtypes = [ctypes.c_char_p]
        lib.nvtxRangeStartA.restype = ctypes.c_uint64
        lib.nvtxRangeEnd.argtypes = [ctypes.c_uint64]
        lib.nvtxMarkA.argtypes = [ctypes.c_char_p]
        _lib = lib
    return _lib


def _text(msg):
    if not isinstance(msg, str):
        raise TypeError(f"NVTX message must be a str, not {type(msg).__name__}")
    return msg.encode()


def range_push(msg):
    """Pushes a range onto this thread's stack of nested ranges; returns its zero-based depth."""
    text, lib = _text(msg), _nvtx()
    return _NO_TOOL if lib is None else lib.nvtxRangePushA(text)


def range_pop():
    """Pops this thread's innermost range; returns the zero-based depth of the range it ended."""
    lib = _nvtx()
    return _NO_TOOL if lib is None else lib.nvtxRangePop()


def range_start(msg):
    """Starts a range that may end on another thread; returns its handle for range_end()."""
    text, lib = _text(msg), _nvtx()
    return 0 if lib is None else lib.nvtxRangeStartA(text)


def range_end(range_id):
    """Ends the range of range_start()'s handle."""
    lib = _nvtx()
    if lib is not None:
        lib.nvtxRangeEnd(int(range_id))


def mark(msg):
    """Marks an instantaneous event."""
    text, lib = _text(msg), _nvtx()
    if lib is not None:
        lib.nvtxMarkA(text)


@contextlib.contextmanager
def range(msg, *args, **kwargs):
    """``with nvtx.range("step {}", i):`` pushes msg.format(*args, **kwargs) for the block."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
