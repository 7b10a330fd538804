"""parameters_to_vector / vector_to_parameters, as torch.nn.utils.convert_parameters."""
from ... import _C

Tensor = _C.Tensor


def _check_same_device(param, device):
    if device is None:
        return param.device
    if param.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return device


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one 1-D tensor (a copy)."""
    device = None
    flat = []
    for param in parameters:
        device = _check_same_device(param, device)
        flat.append(param.view(-1))
    return _C.cat(flat)


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of the 1-D vec into the parameters (their .data), in order."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device = None
    offset = 0
    for param in parameters:
        device = _check_same_device(param, device)
        numel = param.numel()
        param.data = vec[offset:offset + numel].view_as(param).data
        offset += numel
