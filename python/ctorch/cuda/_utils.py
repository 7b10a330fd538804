"""Device-argument sugar shared by ctorch.cuda's modules."""
from .. import _C


def _get_device_index(device, optional=True):
    """The CUDA device index named by an int, 'cuda:N', a ctorch.device or None.

    None, 'cuda' and device('cuda') mean the current device and give -1, which the C
    functions resolve (so that asking does not initialise CUDA)."""
    if device is None:
        if not optional:
            raise ValueError("Expected a torch.device with a specified index or an integer, but got:None")
        return -1
    if isinstance(device, bool):
        raise ValueError(f"Expected a cuda device, but got: {device!r}")
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return -1 if device.index is None else device.index
    index = getattr(device, "idx", None)  # ctorch.cuda.device(i)
    if isinstance(index, int):
        return index
    raise ValueError(f"Expected a cuda device, but got: {device!r}")


def _resolve(device):
    """The concrete index (current device for None / -1); initialises CUDA."""
    index = _get_device_index(device)
    return _C._cuda_current_device() if index < 0 else index
