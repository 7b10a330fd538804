"""ctorch.save / ctorch.load and the safetensors reader/writer.

ctorch's own format (documented in docs/serialization.md) is one file:

    magic   8 bytes   b"CTORCH\\x00\\x01"
    hlen    8 bytes   little-endian uint64: length of the header
    header  hlen      UTF-8 JSON: the object tree and a table of tensors (dtype, shape, offset, nbytes)
    padding           zero bytes up to a multiple of 64
    data              every tensor's elements, row-major little-endian, each at a 64-byte aligned offset

Loading parses JSON and copies bytes: it never unpickles or evaluates anything from the file, and every
size and offset in the header is checked against the file before a byte of tensor data is read. A
hostile, corrupted or truncated file raises RuntimeError (ValueError for bad arguments) and runs
nothing. The byte-level copies are C (_C._tensor_bytes, _C._tensor_from_bytes)."""
import base64
import io
import json
import math
import os
from collections import OrderedDict

from . import _C

Tensor = _C.Tensor

MAGIC = b"CTORCH\x00\x01"
FORMAT_VERSION = 1
ALIGN = 64
MAX_HEADER_BYTES = 1 << 30  # 1 GiB of JSON is far beyond any real checkpoint's header
MAX_DEPTH = 200  # containers nested deeper than this are rejected (no Python recursion limit hit)

_DTYPES = {
    "bool": _C.bool, "uint8": _C.uint8, "int8": _C.int8, "int16": _C.int16, "int32": _C.int32, "int64": _C.int64,
    "float16": _C.float16, "bfloat16": _C.bfloat16, "float32": _C.float32, "float64": _C.float64,
}
_ITEMSIZE = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2,
             "float32": 4, "float64": 8}


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


class _LoadError(RuntimeError):
    """A malformed file (kept a RuntimeError subclass so callers can catch RuntimeError)."""


def _fail(msg):
    raise _LoadError("ctorch.load: " + msg)


# ====================================================================================================
# save
# ====================================================================================================
class _Encoder:
    def __init__(self):
        self.tensors = []  # (tensor, entry)
        self.ids = {}
        self.data_size = 0
        self.active = set()  # containers being encoded (cycles)

    def tensor(self, t):
        key = id(t)
        if key in self.ids:
            return {"$t": "tensor", "i": self.ids[key]}
        dtype = _dtype_name(t.dtype)
        nbytes = t.numel() * _ITEMSIZE[dtype]
        entry = {"dtype": dtype, "shape": list(t.shape), "offset": self.data_size, "nbytes": nbytes,
                 "device": str(t.device), "requires_grad": bool(t.requires_grad)}
        if _is_parameter(t):
            entry["parameter"] = True
        self.ids[key] = len(self.tensors)
        self.tensors.append((t, entry))
        self.data_size += (nbytes + ALIGN - 1) // ALIGN * ALIGN
        return {"$t": "tensor", "i": self.ids[key]}

    def encode(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return obj
        if isinstance(obj, float):
            if math.isfinite(obj):
                return obj
            return {"$t": "float", "v": repr(obj)}
        if isinstance(obj, Tensor):
            return self.tensor(obj)
        if isinstance(obj, _C.dtype):
            return {"$t": "dtype", "v": _dtype_name(obj)}
        if isinstance(obj, _C.device):
            return {"$t": "device", "v": str(obj)}
        if isinstance(obj, (bytes, bytearray)):
            return {"$t": "bytes", "v": base64.b64encode(bytes(obj)).decode("ascii")}
        if isinstance(obj, (list, tuple, dict)):
            if id(obj) in self.active:
                raise ValueError("ctorch.save: cannot save a self-referencing container")
            self.active.add(id(obj))
            try:
                return self.container(obj)
            finally:
                self.active.discard(id(obj))
        raise TypeError(f"ctorch.save: cannot save an object of type {type(obj).__module__}.{type(obj).__qualname__} "
                        "(supported: tensors, dicts, lists, tuples, None, bool, int, float, str, bytes, dtype, device)")

    def container(self, obj):
        from ._size import Size

        if isinstance(obj, Size):
            return {"$t": "size", "v": [int(d) for d in obj]}
        if isinstance(obj, tuple):
            return {"$t": "tuple", "v": [self.encode(v) for v in obj]}
        if isinstance(obj, list):
            return {"$t": "list", "v": [self.encode(v) for v in obj]}
        kind = "odict" if isinstance(obj, OrderedDict) else "dict"
        node = {"$t": kind, "v": [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
        metadata = getattr(obj, "_metadata", None)
        if kind == "odict" and isinstance(metadata, dict):  # a state_dict's per-module versions
            node["m"] = self.encode(metadata)
        return node


def _is_parameter(t):
    try:
        from .nn.parameter import Parameter
    except ImportError:  # pragma: no cover
        return False
    return isinstance(t, Parameter)


def _open_for(f, mode):
    """(file object, should_close) for a path or a file-like object."""
    if isinstance(f, (str, bytes, os.PathLike)):
        return open(f, mode), True
    need = "write" if "w" in mode else "read"
    if not hasattr(f, need):
        raise TypeError(f"expected a file path or a file-like object with {need}(), got {type(f).__name__}")
    return f, False


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Saves obj (tensors, state_dicts, optimizer state, nested dicts/lists/tuples of tensors and
    Python scalars, strings, None) to a path or a writable binary file-like object."""
    enc = _Encoder()
    tree = enc.encode(obj)
    header = {"format": "ctorch", "version": FORMAT_VERSION, "byteorder": "little",
              "tensors": [entry for _, entry in enc.tensors], "data_size": enc.data_size, "object": tree}
    raw = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
    prefix = MAGIC + len(raw).to_bytes(8, "little") + raw
    pad = (-len(prefix)) % ALIGN
    fh, close = _open_for(f, "wb")
    try:
        fh.write(prefix + b"\0" * pad)
        written = 0
        for t, entry in enc.tensors:
            blob = _C._tensor_bytes(t)
            if len(blob) != entry["nbytes"]:  # pragma: no cover (an internal invariant)
                raise RuntimeError("ctorch.save: tensor byte size changed while saving")
            fh.write(blob)
            written += len(blob)
            tail = (-written) % ALIGN
            if tail:
                fh.write(b"\0" * tail)
                written += tail
    finally:
        if close:
            fh.close()


# ====================================================================================================
# load
# ====================================================================================================
def _read_exact(fh, n, what):
    data = fh.read(n)
    if data is None or len(data) != n:
        got = 0 if data is None else len(data)
        _fail(f"the file is truncated ({what}: expected {n} bytes, got {got})")
    return data


def _describe_foreign(head):
    if head.startswith(b"PK\x03\x04"):
        return ("it looks like a zip archive (a PyTorch checkpoint?); ctorch.load reads only ctorch files and never "
                "unpickles data")
    if head[:1] == b"\x80":
        return "it looks like a pickle stream; ctorch.load never unpickles data"
    if len(head) >= 9 and head[8:9] == b"{":
        return "it looks like a safetensors file; use ctorch.load_safetensors"
    return f"bad magic {head[:8]!r}"


def _check_int(v, what, lo=0, hi=None):
    if not isinstance(v, int) or isinstance(v, bool) or v < lo or (hi is not None and v > hi):
        _fail(f"invalid {what} in header: {v!r}")
    return v


def _validate_tensors(entries, data_size):
    if not isinstance(entries, list):
        _fail("header 'tensors' must be a list")
    out = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            _fail(f"tensor entry {i} must be an object")
        dtype = e.get("dtype")
        if dtype not in _DTYPES:
            _fail(f"tensor {i} has an unknown dtype {dtype!r}")
        shape = e.get("shape")
        if not isinstance(shape, list) or len(shape) > 25:
            _fail(f"tensor {i} has an invalid shape {shape!r}")
        numel = 1
        for d in shape:
            numel *= _check_int(d, f"dimension of tensor {i}")
        nbytes = _check_int(e.get("nbytes"), f"byte size of tensor {i}")
        offset = _check_int(e.get("offset"), f"offset of tensor {i}")
        if nbytes != numel * _ITEMSIZE[dtype]:
            _fail(f"tensor {i}: {nbytes} bytes do not match shape {shape} of {dtype}")
        if offset + nbytes > data_size:
            _fail(f"tensor {i}: bytes [{offset}, {offset + nbytes}) lie outside the data section of {data_size} bytes")
        device = e.get("device", "cpu")
        if not isinstance(device, str) or not (device == "cpu" or device.startswith("cuda")):
            _fail(f"tensor {i} has an invalid device {device!r}")
        out.append({"dtype": dtype, "shape": shape, "offset": offset, "nbytes": nbytes, "device": device,
                    "requires_grad": bool(e.get("requires_grad", False)), "parameter": bool(e.get("parameter", False))})
    return out


def _target_device(location, map_location):
    """The device (string) a tensor saved on `location` goes to; None: keep it on the CPU copy."""
    if map_location is None:
        return location
    if isinstance(map_location, (str, _C.device)):
        return str(map_location)
    if isinstance(map_location, dict):
        return str(map_location.get(location, location))
    return None  # callable: handled by the caller


def _place(t, location, map_location):
    if callable(map_location) and not isinstance(map_location, (str, dict, _C.device)):
        r = map_location(t, location)
        if r is None:
            r = t
        if not isinstance(r, Tensor):
            raise TypeError("ctorch.load: map_location callable must return a Tensor or None")
        return r
    target = _target_device(location, map_location)
    if target is None or target == "cpu":
        return t
    if target.startswith("cuda"):
        if not _cuda_available():
            raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                               "False. If you are running on a CPU-only machine, please use torch.load with "
                               "map_location=torch.device('cpu') to map your storages to the CPU.")
    return t.to(target)


def _cuda_available():
    try:
        from . import cuda

        return bool(cuda.is_available())
    except Exception:
        return False


class _Decoder:
    def __init__(self, tensors):
        self.tensors = tensors  # materialised tensors by index

    def decode(self, node, depth=0):
        if depth > MAX_DEPTH:
            _fail("the object tree is nested too deeply")
        if node is None or isinstance(node, (bool, str, int, float)):
            return node
        if not isinstance(node, dict) or "$t" not in node:
            _fail(f"invalid node in the object tree: {type(node).__name__}")
        tag = node["$t"]
        v = node.get("v")
        if tag == "tensor":
            i = node.get("i")
            if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(self.tensors):
                _fail(f"tensor reference {i!r} out of range")
            return self.tensors[i]
        if tag in ("list", "tuple", "size"):
            if not isinstance(v, list):
                _fail(f"invalid {tag} node")
            items = [self.decode(x, depth + 1) for x in v]
            if tag == "list":
                return items
            if tag == "size":
                from ._size import Size

                if not all(isinstance(d, int) and not isinstance(d, bool) for d in items):
                    _fail("invalid size node")
                return Size(items)
            return tuple(items)
        if tag in ("dict", "odict"):
            if not isinstance(v, list):
                _fail(f"invalid {tag} node")
            out = OrderedDict() if tag == "odict" else {}
            for pair in v:
                if not isinstance(pair, list) or len(pair) != 2:
                    _fail(f"invalid {tag} item")
                key = self.decode(pair[0], depth + 1)
                try:
                    hash(key)
                except TypeError:
                    _fail(f"unhashable {tag} key")
                out[key] = self.decode(pair[1], depth + 1)
            if tag == "odict" and "m" in node:
                metadata = self.decode(node["m"], depth + 1)
                if not isinstance(metadata, dict):
                    _fail("invalid odict metadata")
                out._metadata = metadata
            return out
        if tag == "float":
            if v not in ("inf", "-inf", "nan"):
                _fail(f"invalid float node {v!r}")
            return float(v)
        if tag == "dtype":
            if v not in _DTYPES:
                _fail(f"unknown dtype {v!r}")
            return _DTYPES[v]
        if tag == "device":
            if not isinstance(v, str):
                _fail("invalid device node")
            try:
                return _C.device(v)
            except Exception:
                _fail(f"invalid device {v!r}")
        if tag == "bytes":
            if not isinstance(v, str):
                _fail("invalid bytes node")
            try:
                return base64.b64decode(v.encode("ascii"), validate=True)
            except Exception:
                _fail("invalid base64 in a bytes node")
        _fail(f"unknown node type {tag!r}")


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Loads an object saved with ctorch.save from a path or a readable binary file-like object.

    map_location: None (each tensor on the device it was saved from), a device or string ('cpu'), a
    dict mapping saved locations to new ones ({'cuda:0': 'cpu'}), or a callable (tensor, location) ->
    tensor. weights_only is accepted for compatibility: the format cannot hold code, so every load is
    weights-only."""
    fh, close = _open_for(f, "rb")
    try:
        head = fh.read(16)
        if head is None or len(head) < 16:
            if head and head[:8] != MAGIC[: len(head)]:
                _fail("not a ctorch file (" + _describe_foreign(head) + ")")
            _fail("the file is truncated (no complete header)")
        if head[:8] != MAGIC:
            _fail("not a ctorch file (" + _describe_foreign(head) + ")")
        hlen = int.from_bytes(head[8:16], "little")
        size = _file_size(fh)
        if hlen > MAX_HEADER_BYTES or (size is not None and 16 + hlen > size):
            _fail(f"header length {hlen} is larger than the file" if size is not None and hlen <= MAX_HEADER_BYTES
                  else f"header length {hlen} is absurd")
        raw = _read_exact(fh, hlen, "header")
        try:
            header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            _fail(f"the header is not valid JSON ({type(e).__name__})")
        if not isinstance(header, dict) or header.get("format") != "ctorch":
            _fail("the header does not describe a ctorch object")
        if header.get("version") != FORMAT_VERSION:
            _fail(f"unsupported format version {header.get('version')!r}")
        if header.get("byteorder", "little") != "little":
            _fail("unsupported byte order")
        data_size = _check_int(header.get("data_size"), "data_size")
        entries = _validate_tensors(header.get("tensors"), data_size)
        data_start = 16 + hlen + (-(16 + hlen)) % ALIGN
        if size is not None and data_start + data_size > size:
            _fail(f"the file is truncated (data section needs {data_start + data_size} bytes, the file has {size})")
        pad = data_start - 16 - hlen
        if pad:
            _read_exact(fh, pad, "padding")
        # Read tensors in offset order with forward reads only (works on non-seekable streams).
        order = sorted(range(len(entries)), key=lambda i: entries[i]["offset"])
        tensors = [None] * len(entries)
        pos = 0
        for i in order:
            e = entries[i]
            if e["offset"] < pos:
                _fail(f"tensor {i} overlaps another tensor's bytes")
            if e["offset"] > pos:
                _read_exact(fh, e["offset"] - pos, "data")
                pos = e["offset"]
            blob = _read_exact(fh, e["nbytes"], f"tensor {i}")
            pos += e["nbytes"]
            t = _C._tensor_from_bytes(blob, 0, _DTYPES[e["dtype"]], e["shape"])
            t = _place(t, e["device"], map_location)
            if e["parameter"]:
                from .nn.parameter import Parameter

                t = Parameter(t, requires_grad=e["requires_grad"])
            elif e["requires_grad"] and t.is_floating_point():
                t.requires_grad_(True)
            tensors[i] = t
        try:
            return _Decoder(tensors).decode(header.get("object"))
        except RecursionError:
            _fail("the object tree is nested too deeply")
    finally:
        if close:
            fh.close()


def _file_size(fh):
    """Total size of a seekable file (position preserved), or None."""
    try:
        if not fh.seekable():
            return None
        pos = fh.tell()
        end = fh.seek(0, io.SEEK_END)
        fh.seek(pos)
        return end
    except (AttributeError, OSError, ValueError):
        return None


# ====================================================================================================
# safetensors
# ====================================================================================================
_ST_DTYPES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "I32": "int32", "I64": "int64",
              "F16": "float16", "BF16": "bfloat16", "F32": "float32", "F64": "float64"}
_ST_CODES = {v: k for k, v in _ST_DTYPES.items()}
_ST_MAX_HEADER = 100_000_000  # the reference implementation's limit


def save_safetensors(tensors, path, metadata=None):
    """Writes a dict {name: tensor} as a safetensors file (8-byte little-endian header length, JSON
    header with dtype/shape/data_offsets, then the raw little-endian bytes)."""
    if not isinstance(tensors, dict):
        raise TypeError(f"save_safetensors expects a dict of tensors, got {type(tensors).__name__}")
    header = {}
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in metadata.items()):
            raise ValueError("metadata must be a dict of str to str")
        header["__metadata__"] = dict(metadata)
    blobs = []
    offset = 0
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, got {type(name).__name__}")
        if name == "__metadata__":
            raise ValueError("'__metadata__' is reserved and cannot name a tensor")
        if not isinstance(t, Tensor):
            raise TypeError(f"value for {name!r} is not a Tensor")
        blob = _C._tensor_bytes(t)
        header[name] = {"dtype": _ST_CODES[_dtype_name(t.dtype)], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * ((-len(raw)) % 8)  # the data starts 8-byte aligned
    fh, close = _open_for(path, "wb")
    try:
        fh.write(len(raw).to_bytes(8, "little"))
        fh.write(raw)
        for blob in blobs:
            fh.write(blob)
    finally:
        if close:
            fh.close()


def _st_fail(msg):
    raise _LoadError("load_safetensors: " + msg)


def load_safetensors(path, device="cpu"):
    """Reads a safetensors file into a dict {name: tensor} on device (the reference format; every
    offset and size is validated against the file before use)."""
    fh, close = _open_for(path, "rb")
    try:
        head = fh.read(8)
        if head is None or len(head) != 8:
            _st_fail("the file is truncated (no header length)")
        hlen = int.from_bytes(head, "little")
        size = _file_size(fh)
        if hlen > _ST_MAX_HEADER:
            _st_fail(f"header length {hlen} exceeds the limit of {_ST_MAX_HEADER} bytes")
        if size is not None and 8 + hlen > size:
            _st_fail(f"header length {hlen} is larger than the file")
        raw = fh.read(hlen)
        if raw is None or len(raw) != hlen:
            _st_fail("the file is truncated (header)")
        try:
            header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            _st_fail(f"the header is not valid JSON ({type(e).__name__})")
        if not isinstance(header, dict):
            _st_fail("the header must be a JSON object")
        metadata = header.pop("__metadata__", None)
        if metadata is not None and not (isinstance(metadata, dict) and
                                         all(isinstance(v, str) for v in metadata.values())):
            _st_fail("__metadata__ must map strings to strings")
        entries = []
        for name, e in header.items():
            if not isinstance(e, dict):
                _st_fail(f"entry {name!r} must be an object")
            code = e.get("dtype")
            if code not in _ST_DTYPES:
                _st_fail(f"tensor {name!r} has an unsupported dtype {code!r}")
            shape = e.get("shape")
            offs = e.get("data_offsets")
            if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                      for d in shape):
                _st_fail(f"tensor {name!r} has an invalid shape {shape!r}")
            if (not isinstance(offs, list) or len(offs) != 2 or
                    not all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offs) or
                    offs[0] > offs[1]):
                _st_fail(f"tensor {name!r} has invalid data_offsets {offs!r}")
            numel = 1
            for d in shape:
                numel *= d
            dtype = _ST_DTYPES[code]
            if offs[1] - offs[0] != numel * _ITEMSIZE[dtype]:
                _st_fail(f"tensor {name!r}: data_offsets {offs} do not match shape {shape} of {code}")
            entries.append((offs[0], offs[1], name, dtype, shape))
        entries.sort()
        end = 0
        for begin, stop, name, _, _ in entries:
            if begin != end:
                _st_fail(f"tensor {name!r}: data_offsets leave a gap or overlap at byte {end}")
            end = stop
        if size is not None and 8 + hlen + end != size:
            _st_fail(f"the data section has {size - 8 - hlen} bytes but the header describes {end}")
        data = fh.read(end)
        if data is None or len(data) != end:
            _st_fail("the file is truncated (data)")
        out = {}
        order = {name: i for i, name in enumerate(header)}
        for begin, stop, name, dtype, shape in sorted(entries, key=lambda x: order[x[2]]):
            t = _C._tensor_from_bytes(data, begin, _DTYPES[dtype], shape)
            if str(device) != "cpu":
                t = t.to(device)
            out[name] = t
        return out
    finally:
        if close:
            fh.close()


def safetensors_metadata(path):
    """The __metadata__ dict of a safetensors file (or None)."""
    fh, close = _open_for(path, "rb")
    try:
        hlen = int.from_bytes(fh.read(8), "little")
        if hlen > _ST_MAX_HEADER:
            _st_fail(f"header length {hlen} exceeds the limit of {_ST_MAX_HEADER} bytes")
        raw = fh.read(hlen)
        try:
            header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            _st_fail(f"the header is not valid JSON ({type(e).__name__})")
        return header.get("__metadata__") if isinstance(header, dict) else None
    finally:
        if close:
            fh.close()
