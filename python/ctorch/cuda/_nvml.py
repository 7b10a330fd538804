"""NVML (libnvidia-ml.so.1, the library behind nvidia-smi), opened with ctypes on first use, for
ctorch.cuda's device readings: utilization, memory_usage, temperature, power_draw, clock_rate,
device_memory_used and list_gpu_processes. PyTorch reads them through pynvml, the same calls."""
import ctypes
import os

from ._utils import _resolve

_LIBRARY = "libnvidia-ml.so.1"
_lib = None
_initialized = False

_NVML_ERROR_INSUFFICIENT_SIZE = 7
_NVML_ERROR_DRIVER_NOT_LOADED = 9


class DriverNotLoaded(RuntimeError):
    pass


class _Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


class _Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class _ProcessInfo(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]


def available():
    """True when the NVML library can be opened."""
    global _lib
    if _lib is None:
        try:
            _lib = ctypes.CDLL(_LIBRARY)
        except OSError:
            return False
        _lib.nvmlErrorString.restype = ctypes.c_char_p
    return True


def _check(ret):
    if ret == 0:
        return
    text = _lib.nvmlErrorString(ret).decode(errors="replace")
    if ret == _NVML_ERROR_DRIVER_NOT_LOADED:
        raise DriverNotLoaded(text)
    raise RuntimeError(f"NVML error: {text}")


def _library():
    """The initialised library; PyTorch's errors where NVML is missing or has no driver."""
    global _initialized
    if not available():
        raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be imported.")
    if not _initialized:
        _check(_lib.nvmlInit_v2())
        _initialized = True
    return _lib


def device_index(device):
    """NVML's index of CUDA device ``device`` (the current one for None): CUDA_VISIBLE_DEVICES
    (indices or UUIDs) renumbers the devices CUDA sees, NVML sees them all."""
    lib = _library()
    index = _resolve(device)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return index
    entries = [e.strip() for e in visible.split(",") if e.strip()]
    if index < 0 or index >= len(entries):
        raise RuntimeError(f"device {index} is not visible (CUDA_VISIBLE_DEVICES={entries})")
    entry = entries[index]
    if entry.isdigit():
        return int(entry)
    h, out = ctypes.c_void_p(), ctypes.c_uint()
    _check(lib.nvmlDeviceGetHandleByUUID(entry.encode(), ctypes.byref(h)))
    _check(lib.nvmlDeviceGetIndex(h, ctypes.byref(out)))
    return out.value


def handle(device):
    """The NVML handle of CUDA device ``device``."""
    out = ctypes.c_void_p()
    _check(_library().nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(device_index(device)), ctypes.byref(out)))
    return out


def _uint(name, device, *args):
    value = ctypes.c_uint()
    _check(getattr(_library(), name)(handle(device), *args, ctypes.byref(value)))
    return value.value


def memory_info(device):
    info = _Memory()
    _check(_library().nvmlDeviceGetMemoryInfo(handle(device), ctypes.byref(info)))
    return info


def utilization_rates(device):
    rates = _Utilization()
    _check(_library().nvmlDeviceGetUtilizationRates(handle(device), ctypes.byref(rates)))
    return rates


def temperature(device):
    return _uint("nvmlDeviceGetTemperature", device, ctypes.c_int(0))  # 0: the GPU die's sensor


def power_usage(device):
    return _uint("nvmlDeviceGetPowerUsage", device)  # milliwatts


def sm_clock(device):
    return _uint("nvmlDeviceGetClockInfo", device, ctypes.c_int(1))  # 1: NVML_CLOCK_SM, MHz


def compute_processes(h):
    """[(pid, used GPU memory in bytes)] of the compute processes on the device of handle h."""
    lib = _library()
    count = ctypes.c_uint(0)
    while True:
        infos = (_ProcessInfo * max(count.value, 1))()
        ret = lib.nvmlDeviceGetComputeRunningProcesses_v3(h, ctypes.byref(count), infos)
        if ret != _NVML_ERROR_INSUFFICIENT_SIZE:
            break
    _check(ret)
    return [(infos[i].pid, infos[i].usedGpuMemory) for i in range(count.value)]
