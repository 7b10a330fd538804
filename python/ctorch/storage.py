"""ctorch.storage: TypedStorage, the deprecated typed view of a tensor's storage that Tensor.storage()
returns (as torch.storage.TypedStorage): the whole untyped storage read as elements of the tensor's
dtype. Elements are read and written through a 1-d tensor over the storage (ctorch._C._storage_tensor),
so indexing, tolist() and the text are the tensor ops' own."""
import warnings

from . import _C

_typed_storage_warned = False


def _warn_typed_storage_removal(stacklevel=3):
    global _typed_storage_warned
    if not _typed_storage_warned:
        _typed_storage_warned = True
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                      "only storage class. This should only matter to you if you are using storages directly.  To "
                      "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=stacklevel)


class TypedStorage:
    """The storage of a tensor as elements of its dtype: size(), data_ptr(), dtype, device, tolist(),
    element access (storage[i], storage[i] = v) and PyTorch's text."""

    is_sparse = False

    def __init__(self, *, wrap_storage, dtype, device):
        self._untyped_storage = wrap_storage
        self.dtype = dtype
        self._device = device
        self._elements = _C._storage_tensor(wrap_storage, dtype)  # 1-d, over the whole storage

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    def size(self):
        return self._elements.shape[0]

    def __len__(self):
        return self.size()

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def nbytes(self):
        return self.size() * self.element_size()

    def element_size(self):
        return self._elements.element_size()

    def untyped(self):
        return self._untyped_storage

    def type(self):
        name = self._elements.type().replace("Tensor", "Storage")
        return name

    def _index(self, idx):
        if not isinstance(idx, int):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        n = self.size()
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return idx % n if n else idx

    def __getitem__(self, idx):
        return self._elements[self._index(idx)].item()

    def __setitem__(self, idx, value):
        self._elements[self._index(idx)] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._elements.tolist()

    def __str__(self):
        info = f"[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {len(self)}]"
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info

    __repr__ = __str__


def _tensor_storage(self):
    """Tensor.storage(): the tensor's whole storage as a TypedStorage of its dtype (deprecated)."""
    _warn_typed_storage_removal()
    return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, device=self.device)


# --- the legacy storage classes (torch.FloatStorage ... torch.cuda.BoolStorage) -------------------------------
class _LegacyStorageMeta(type):
    """isinstance(storage, torch.FloatStorage) holds for any TypedStorage of that dtype and device type."""

    def __instancecheck__(cls, instance):
        if type(instance) is TypedStorage:
            return instance.dtype == cls.dtype and instance.device.type == cls._device_type
        return type.__instancecheck__(cls, instance)


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """FloatStorage(size) / FloatStorage(sequence) / FloatStorage(): a new storage of the class's dtype."""

    dtype = None
    _device_type = "cpu"

    def __init__(self, *args, wrap_storage=None):
        if wrap_storage is None:
            if len(args) > 1:
                raise TypeError(f"{type(self).__name__}(): expected at most one argument (a size or a sequence)")
            arg = args[0] if args else 0
            if isinstance(arg, int):
                elements = _C.empty((arg,), dtype=self.dtype, device=self._device_type)
            else:
                elements = _C.tensor(arg, dtype=self.dtype, device=self._device_type)
            wrap_storage = elements.untyped_storage()
        super().__init__(wrap_storage=wrap_storage, dtype=self.dtype, device=_C.device(self._device_type))


_LEGACY_NAMES = (("Float", "float32"), ("Double", "float64"), ("Half", "float16"), ("BFloat16", "bfloat16"),
                 ("Long", "int64"), ("Int", "int32"), ("Short", "int16"), ("Char", "int8"), ("Byte", "uint8"),
                 ("Bool", "bool"))


def _legacy_classes(module, device_type):
    classes = {}
    for prefix, dtype_name in _LEGACY_NAMES:  # ctorch has no complex dtypes
        name = prefix + "Storage"
        classes[getattr(_C, dtype_name)] = type(name, (_LegacyStorage,), {
            "dtype": getattr(_C, dtype_name), "_device_type": device_type, "__module__": module, "__qualname__": name})
    return classes


_legacy_storage_classes = {"cpu": _legacy_classes("ctorch", "cpu"), "cuda": _legacy_classes("ctorch.cuda", "cuda")}


def _tensor_storage_type(self):
    """Tensor.storage_type(): the legacy storage class of the tensor's dtype and device (None for a dtype
    that has none, as PyTorch's uint16); warns that TypedStorage is deprecated."""
    _warn_typed_storage_removal()
    return _legacy_storage_classes.get(self.device.type, {}).get(self.dtype)
