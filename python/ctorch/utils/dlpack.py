"""ctorch.utils.dlpack: to_dlpack / from_dlpack, as torch.utils.dlpack."""
from .. import _C

__all__ = ["to_dlpack", "from_dlpack"]


def to_dlpack(tensor):
    """to_dlpack(tensor): a DLPack capsule ("dltensor", unversioned) sharing the tensor's memory, for a
    consumer's from_dlpack. Each capsule can be consumed once."""
    if not isinstance(tensor, _C.Tensor):
        raise TypeError(f"_to_dlpack(): argument 'data' (position 1) must be Tensor, not {type(tensor).__name__}")
    return tensor.__dlpack__()


from_dlpack = _C.from_dlpack
