"""Pickling tensors and storages for multiprocessing, as PyTorch: a CPU storage is moved to shared memory
(csrc/shared_memory.c) and sent as a handle to it (a duplicated file descriptor, or a shm name under the
file_system strategy); the receiver maps the same memory. A tensor is sent as its storage plus its geometry,
dtype and requires_grad."""
import multiprocessing
import os
from multiprocessing.reduction import ForkingPickler

from .. import _C


def rebuild_tensor(cls, storage, metadata):
    from ..nn.parameter import Parameter
    offset, size, stride, dtype, requires_grad = metadata
    t = _C.tensor([], dtype=dtype).set_(storage, offset, size, stride)
    if cls is Parameter:
        return Parameter(t, requires_grad=requires_grad)
    t.requires_grad = requires_grad
    return t


def reduce_tensor(tensor):
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
            "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue).")
    if tensor.device.type == "cuda":
        # Sharing CUDA memory needs cudaIpcGetMemHandle / cudaIpcOpenMemHandle and an IPC-aware caching
        # allocator, which ctorch's CUDA backend does not have.
        raise RuntimeError(
            "ctorch cannot send CUDA tensors between processes (no CUDA IPC support); move the tensor to the "
            "CPU first (tensor.cpu()) and back to the device in the receiving process")
    if tensor.device.type != "cpu":
        raise RuntimeError(f"Cannot pickle {tensor.device.type} tensor for multiprocessing")
    metadata = (tensor.storage_offset(), tuple(tensor.size()), tensor.stride(), tensor.dtype, tensor.requires_grad)
    return (rebuild_tensor, (type(tensor), tensor.untyped_storage(), metadata))


def rebuild_storage_fd(cls, df, size):
    fd = df.detach()
    try:
        return cls._new_shared_fd_cpu(fd, size)
    finally:
        os.close(fd)


def rebuild_storage_filename(cls, manager, handle, size):
    return cls._new_shared_filename_cpu(manager, handle, size)._shared_decref()


def rebuild_storage_empty(cls):
    return _C.empty(0, dtype=_C.uint8).untyped_storage()


def reduce_storage(storage):
    from . import get_sharing_strategy
    if storage.device.type == "cuda":
        raise RuntimeError("Cannot pickle CUDA storage; try pickling a CUDA tensor instead")
    if get_sharing_strategy() == "file_system":
        metadata = storage._share_filename_cpu_()
        storage._shared_incref()
        return (rebuild_storage_filename, (type(storage),) + metadata)
    if storage.nbytes() == 0:
        return (rebuild_storage_empty, (type(storage),))
    fd, size = storage._share_fd_cpu_()
    return (rebuild_storage_fd, (type(storage), multiprocessing.reduction.DupFd(fd), size))


def rebuild_typed_storage(storage, dtype):
    from ..storage import TypedStorage
    return TypedStorage(wrap_storage=storage, dtype=dtype, device=storage.device)


def reduce_typed_storage(storage):
    return (rebuild_typed_storage, (storage._untyped_storage, storage.dtype))


def init_reductions():
    """Registers the reductions with multiprocessing's ForkingPickler (Queue, Pipe, Pool arguments)."""
    from ..nn.parameter import Parameter
    from ..storage import TypedStorage
    ForkingPickler.register(_C.UntypedStorage, reduce_storage)
    ForkingPickler.register(TypedStorage, reduce_typed_storage)
    ForkingPickler.register(_C.Tensor, reduce_tensor)
    ForkingPickler.register(Parameter, reduce_tensor)
