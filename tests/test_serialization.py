"""ctorch.save / ctorch.load (ctorch's documented format, docs/serialization.md) and the safetensors
reader/writer: round trips of tensors and nested objects through paths and file-like objects,
map_location, files written by hand from the specs, and hostile or corrupted files (truncated, wrong
magic, absurd sizes and offsets, a pickle payload that would run code): each raises a clear error and
runs nothing."""
import io
import json
import math
import os
import pathlib
import pickle
import struct
from collections import OrderedDict

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
from conftest import ALL_DTYPES, to_numpy

MAGIC = b"CTORCH\x00\x01"


def roundtrip(obj, **load_kw):
    buf = io.BytesIO()
    ctorch.save(obj, buf)
    buf.seek(0)
    return ctorch.load(buf, **load_kw)


def same(a, b):
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))


def _sample(dtype, shape, device):
    rng = np.random.default_rng(0)
    if dtype == "bool":
        arr = rng.random(shape) > 0.5
    elif dtype.startswith("float") or dtype == "bfloat16":
        arr = rng.standard_normal(shape)
    else:
        arr = rng.integers(0, 100, shape)
    return ctorch.tensor(arr, dtype=getattr(ctorch, dtype), device=device)


# ====================================================================================================
# round trips
# ====================================================================================================
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (), (0, 5), (2, 1, 3)], ids=["2d", "0d", "empty", "3d"])
def test_tensor_roundtrip(device, dtype, shape):
    t = _sample(dtype, shape, device)
    out = roundtrip(t)
    same(out, t)
    assert out.device == t.device


def test_non_contiguous_and_views(device):
    base = _sample("float32", (4, 6), device)
    tr = base.t()
    sliced = base[:, ::2]
    out = roundtrip({"t": tr, "s": sliced})
    same(out["t"], tr)
    same(out["s"], sliced)
    assert out["t"].is_contiguous()


def test_nested_objects(device):
    t1, t2 = _sample("float64", (2, 2), device), _sample("int64", (3,), device)
    obj = {
        "a": [t1, (t2, None), {"x": 1, 2: "two", (3, 4): [1.5, float("inf"), -float("inf")]}],
        "flags": [True, False, None],
        "big": 2**80,
        "text": "héllo\n\"quoted\"",
        "raw": b"\x00\x01\xff",
        "dtype": ctorch.bfloat16,
        "device": ctorch.device("cpu"),
        "size": ctorch.Size([2, 3]),
        "od": OrderedDict([("z", t1), ("y", 0.1)]),
        "nan": float("nan"),
        "empty": {},
    }
    out = roundtrip(obj)
    same(out["a"][0], t1)
    assert isinstance(out["a"][1], tuple) and out["a"][1][1] is None
    same(out["a"][1][0], t2)
    assert out["a"][2] == {"x": 1, 2: "two", (3, 4): [1.5, math.inf, -math.inf]}
    assert out["flags"] == [True, False, None] and out["big"] == 2**80 and out["text"] == obj["text"]
    assert out["raw"] == b"\x00\x01\xff" and out["dtype"] == ctorch.bfloat16 and out["device"] == ctorch.device("cpu")
    assert out["size"] == ctorch.Size([2, 3]) and isinstance(out["size"], ctorch.Size)
    assert isinstance(out["od"], OrderedDict) and list(out["od"]) == ["z", "y"] and not hasattr(out["od"], "_metadata")
    assert out["od"]["z"] is out["a"][0]  # one tensor saved twice loads as one tensor
    assert math.isnan(out["nan"]) and out["empty"] == {}
    assert type(out) is dict and type(out["a"][2]) is dict


def test_state_dict_metadata_round_trips():
    sd = roundtrip(nn.Sequential(nn.BatchNorm1d(2)).state_dict())
    assert sd._metadata == {"": {"version": 1}, "0": {"version": 2}}


def test_requires_grad_and_parameters():
    p = nn.Parameter(ctorch.ones(2))
    frozen = nn.Parameter(ctorch.ones(1), requires_grad=False)
    leaf = ctorch.ones(3, requires_grad=True)
    out = roundtrip([p, frozen, leaf, leaf.detach()])
    assert isinstance(out[0], nn.Parameter) and out[0].requires_grad
    assert isinstance(out[1], nn.Parameter) and not out[1].requires_grad
    assert not isinstance(out[2], nn.Parameter) and out[2].requires_grad and out[2].is_leaf
    assert not out[3].requires_grad


def test_state_dict_roundtrip_files(device, tmp_path):
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)).to(device)
    sd = model.state_dict()
    for target in (str(tmp_path / "m.ct"), tmp_path / "m2.ct"):  # str and pathlib paths
        ctorch.save(sd, target)
        loaded = ctorch.load(target)
        assert isinstance(loaded, OrderedDict) and list(loaded) == list(sd)
        for k in sd:
            same(loaded[k], sd[k])
    with open(tmp_path / "m3.ct", "wb") as f:  # an open file object
        ctorch.save(sd, f)
    with open(tmp_path / "m3.ct", "rb") as f:
        loaded = ctorch.load(f)
    fresh = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)).to(device)
    fresh.load_state_dict(loaded)
    x = ctorch.ones(5, 4, device=device)
    same(fresh(x), model(x))


class _Stream(io.RawIOBase):
    """A read-only stream that cannot seek (a pipe or a socket)."""

    def __init__(self, data):
        self._buf = io.BytesIO(data)

    def readable(self):
        return True

    def readinto(self, b):
        chunk = self._buf.read(min(len(b), 7))  # short reads
        b[: len(chunk)] = chunk
        return len(chunk)


def test_non_seekable_stream():
    buf = io.BytesIO()
    obj = {"a": _sample("float32", (5, 3), "cpu"), "b": [_sample("int8", (7,), "cpu")]}
    ctorch.save(obj, buf)
    stream = io.BufferedReader(_Stream(buf.getvalue()))
    out = ctorch.load(stream)
    same(out["a"], obj["a"])
    same(out["b"][0], obj["b"][0])


def test_file_layout_matches_the_documented_format():
    t = ctorch.tensor([1.0, 2.0, 3.0])
    buf = io.BytesIO()
    ctorch.save({"w": t, "n": 3}, buf)
    raw = buf.getvalue()
    assert raw[:8] == MAGIC
    hlen = struct.unpack("<Q", raw[8:16])[0]
    header = json.loads(raw[16:16 + hlen])
    assert header["format"] == "ctorch" and header["version"] == 1 and header["byteorder"] == "little"
    assert header["tensors"] == [{"dtype": "float32", "shape": [3], "offset": 0, "nbytes": 12, "device": "cpu",
                                  "requires_grad": False}]
    assert header["object"] == {"$t": "dict", "v": [["w", {"$t": "tensor", "i": 0}], ["n", 3]]}
    data_start = (16 + hlen + 63) // 64 * 64
    assert raw[data_start:data_start + 12] == struct.pack("<3f", 1.0, 2.0, 3.0)


def test_unsupported_objects():
    with pytest.raises(TypeError, match="ctorch.save: cannot save an object of type builtins.object"):
        ctorch.save(object(), io.BytesIO())
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="self-referencing"):
        ctorch.save(loop, io.BytesIO())
    with pytest.raises(TypeError, match="file-like object"):
        ctorch.load(12345)


# ====================================================================================================
# map_location and files written by hand
# ====================================================================================================
def build_file(obj_node, tensors, blobs, version=1, magic=MAGIC, extra=None):
    """A ctorch file assembled from the spec in docs/serialization.md (not with ctorch.save)."""
    data = b""
    entries = []
    for entry, blob in zip(tensors, blobs):
        entry = dict(entry, offset=len(data), nbytes=len(blob))
        entries.append(entry)
        data += blob + b"\0" * ((-len(blob)) % 64)
    header = {"format": "ctorch", "version": version, "byteorder": "little", "tensors": entries,
              "data_size": len(data), "object": obj_node}
    if extra:
        header.update(extra)
    raw = json.dumps(header).encode()
    prefix = magic + struct.pack("<Q", len(raw)) + raw
    return prefix + b"\0" * ((-len(prefix)) % 64) + data


GPU_FILE = build_file({"$t": "odict", "v": [["weight", {"$t": "tensor", "i": 0}]]},
                      [{"dtype": "float32", "shape": [2, 2], "device": "cuda:0", "requires_grad": False}],
                      [struct.pack("<4f", 1, 2, 3, 4)])


def _cuda_available():
    try:
        return ctorch.cuda.is_available()
    except AttributeError:
        return False


def test_gpu_saved_file_loads_on_cpu_with_map_location():
    for loc in ("cpu", ctorch.device("cpu"), {"cuda:0": "cpu"}, lambda t, where: t):
        out = ctorch.load(io.BytesIO(GPU_FILE), map_location=loc)
        assert list(out) == ["weight"] and out["weight"].device.type == "cpu"
        np.testing.assert_array_equal(to_numpy(out["weight"]), [[1, 2], [3, 4]])
    seen = []
    ctorch.load(io.BytesIO(GPU_FILE), map_location=lambda t, where: seen.append(where))
    assert seen == ["cuda:0"]
    if not _cuda_available():
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device but "
                                               r"torch.cuda.is_available\(\) is False"):
            ctorch.load(io.BytesIO(GPU_FILE))


def test_map_location_to_device(device):
    t = _sample("float32", (3,), "cpu")
    out = roundtrip({"t": t}, map_location=device)
    assert out["t"].device.type == device
    same(out["t"].cpu(), t)
    assert roundtrip(t, weights_only=True).dtype == ctorch.float32  # weights_only is always true here


# ====================================================================================================
# hostile and corrupted files
# ====================================================================================================
def _good_file():
    buf = io.BytesIO()
    ctorch.save({"w": _sample("float64", (16, 16), "cpu"), "b": [1, 2, 3]}, buf)
    return buf.getvalue()


@pytest.mark.parametrize("cut", [0, 5, 8, 15, 16, 40, -1, -100, -2048])
def test_truncated_files(cut):
    raw = _good_file()
    data = raw[:cut] if cut >= 0 else raw[:len(raw) + cut]
    with pytest.raises(RuntimeError, match="ctorch.load: "):
        ctorch.load(io.BytesIO(data))


def test_truncated_non_seekable_stream():
    raw = _good_file()[:-100]
    with pytest.raises(RuntimeError, match="truncated"):
        ctorch.load(io.BufferedReader(_Stream(raw)))


def test_wrong_magic_and_foreign_formats(tmp_path):
    with pytest.raises(RuntimeError, match="not a ctorch file"):
        ctorch.load(io.BytesIO(b"NOTCTRCH" + b"\0" * 64))
    with pytest.raises(RuntimeError, match="zip archive"):
        ctorch.load(io.BytesIO(b"PK\x03\x04" + b"\0" * 64))
    with pytest.raises(RuntimeError, match="safetensors"):
        path = tmp_path / "x.safetensors"
        ctorch.save_safetensors({"a": ctorch.zeros(2)}, path)
        ctorch.load(path)


class _Evil:
    def __reduce__(self):
        return (os.system, ("touch " + _Evil.marker,))


def test_pickle_payload_is_never_run(tmp_path):
    marker = tmp_path / "pwned"
    _Evil.marker = str(marker)
    payload = pickle.dumps({"state": _Evil()})
    with pytest.raises(RuntimeError, match="pickle"):
        ctorch.load(io.BytesIO(payload))
    # the same payload hidden behind a valid magic and header is only ever JSON-parsed
    wrapped = MAGIC + struct.pack("<Q", len(payload)) + payload
    with pytest.raises(RuntimeError, match="not valid JSON"):
        ctorch.load(io.BytesIO(wrapped))
    # and as a 'tensor' blob it is just bytes
    t_file = build_file({"$t": "tensor", "i": 0}, [{"dtype": "uint8", "shape": [len(payload)], "device": "cpu"}],
                        [payload])
    out = ctorch.load(io.BytesIO(t_file))
    assert bytes(to_numpy(out).tobytes()) == payload
    assert not marker.exists()


T_ENTRY = {"dtype": "float32", "shape": [2], "device": "cpu", "requires_grad": False}
BLOB = struct.pack("<2f", 1, 2)


def _with_header(header_changes=None, entry_changes=None, obj=None, blob=BLOB, data_size=None):
    entry = dict(T_ENTRY, offset=0, nbytes=8)
    entry.update(entry_changes or {})
    header = {"format": "ctorch", "version": 1, "byteorder": "little", "tensors": [entry],
              "data_size": 64 if data_size is None else data_size,
              "object": {"$t": "tensor", "i": 0} if obj is None else obj}
    header.update(header_changes or {})
    raw = json.dumps(header).encode()
    prefix = MAGIC + struct.pack("<Q", len(raw)) + raw
    return prefix + b"\0" * ((-len(prefix)) % 64) + blob + b"\0" * (64 - len(blob))


def test_hand_built_file_loads():
    np.testing.assert_array_equal(to_numpy(ctorch.load(io.BytesIO(_with_header()))), [1.0, 2.0])


@pytest.mark.parametrize("desc,kw,match", [
    ("absurd nbytes", {"entry_changes": {"nbytes": 2**62}}, "do not match shape"),
    ("huge shape", {"entry_changes": {"shape": [2**40, 2**40], "nbytes": 2**82}}, "lie outside|do not match"),
    ("offset past data", {"entry_changes": {"offset": 10**12}}, "outside the data section"),
    ("negative offset", {"entry_changes": {"offset": -8}}, "invalid offset"),
    ("negative dim", {"entry_changes": {"shape": [-2], "nbytes": -8}}, "invalid dimension"),
    ("float dim", {"entry_changes": {"shape": [2.0]}}, "invalid dimension"),
    ("bool dim", {"entry_changes": {"shape": [True, True]}}, "invalid dimension"),
    ("unknown dtype", {"entry_changes": {"dtype": "complex64"}}, "unknown dtype"),
    ("nbytes mismatch", {"entry_changes": {"nbytes": 12}}, "do not match shape"),
    ("bad device", {"entry_changes": {"device": "tpu"}}, "invalid device"),
    ("data_size larger than file", {"data_size": 10**9}, "truncated"),
    ("tensor index out of range", {"obj": {"$t": "tensor", "i": 5}}, "out of range"),
    ("tensor index bool", {"obj": {"$t": "tensor", "i": True}}, "out of range"),
    ("unknown node", {"obj": {"$t": "eval", "v": "__import__('os')"}}, "unknown node type"),
    ("untagged object", {"obj": {"a": 1}}, "invalid node"),
    ("bad float", {"obj": {"$t": "float", "v": "1e309x"}}, "invalid float"),
    ("bad dict item", {"obj": {"$t": "dict", "v": [[1]]}}, "invalid dict item"),
    ("unhashable key", {"obj": {"$t": "dict", "v": [[{"$t": "list", "v": []}, 1]]}}, "unhashable"),
    ("bad bytes", {"obj": {"$t": "bytes", "v": "***"}}, "base64"),
    ("wrong format", {"header_changes": {"format": "pytorch"}}, "does not describe"),
    ("future version", {"header_changes": {"version": 99}}, "unsupported format version"),
    ("big endian", {"header_changes": {"byteorder": "big"}}, "byte order"),
    ("tensors not a list", {"header_changes": {"tensors": {"a": 1}}}, "must be a list"),
])
def test_corrupted_headers(desc, kw, match):
    with pytest.raises(RuntimeError, match=match):
        ctorch.load(io.BytesIO(_with_header(**kw)))


def test_absurd_header_length_and_bad_json():
    with pytest.raises(RuntimeError, match="header length"):
        ctorch.load(io.BytesIO(MAGIC + struct.pack("<Q", 2**63) + b"{}"))
    with pytest.raises(RuntimeError, match="header length"):
        ctorch.load(io.BytesIO(MAGIC + struct.pack("<Q", 1000) + b"{}"))
    for junk in (b"\xff\xfe\x00", b"{not json", b"[" * 100000 + b"]" * 100000, b"null"):
        data = MAGIC + struct.pack("<Q", len(junk)) + junk
        with pytest.raises(RuntimeError, match="ctorch.load: "):
            ctorch.load(io.BytesIO(data))


@pytest.mark.parametrize("depth", [300, 5000])
def test_deeply_nested_tree_is_rejected(depth):
    # built as text: json.dumps itself would hit the recursion limit
    good = _with_header()
    hlen = struct.unpack("<Q", good[8:16])[0]
    header = good[16:16 + hlen].decode()
    nested = '{"$t":"list","v":[' * depth + "1" + "]}" * depth
    header = header.replace('{"$t": "tensor", "i": 0}', nested)
    raw = header.encode()
    prefix = MAGIC + struct.pack("<Q", len(raw)) + raw
    data = prefix + b"\0" * ((-len(prefix)) % 64) + BLOB + b"\0" * 56
    with pytest.raises(RuntimeError, match="nested too deeply|not valid JSON"):
        ctorch.load(io.BytesIO(data))
    shallow = '{"$t":"list","v":[' * 100 + "1" + "]}" * 100  # within the limit
    raw = header.replace(nested, shallow).encode()
    prefix = MAGIC + struct.pack("<Q", len(raw)) + raw
    out = ctorch.load(io.BytesIO(prefix + b"\0" * ((-len(prefix)) % 64) + BLOB + b"\0" * 56))
    for _ in range(100):
        out = out[0]
    assert out == 1


def test_overlapping_tensors_rejected():
    header = {"format": "ctorch", "version": 1, "tensors": [dict(T_ENTRY, offset=0, nbytes=8),
                                                            dict(T_ENTRY, offset=4, nbytes=8)],
              "data_size": 64, "object": {"$t": "list", "v": [{"$t": "tensor", "i": 0}, {"$t": "tensor", "i": 1}]}}
    raw = json.dumps(header).encode()
    prefix = MAGIC + struct.pack("<Q", len(raw)) + raw
    data = prefix + b"\0" * ((-len(prefix)) % 64) + b"\0" * 64
    with pytest.raises(RuntimeError, match="overlaps"):
        ctorch.load(io.BytesIO(data))


# ====================================================================================================
# safetensors
# ====================================================================================================
def test_safetensors_roundtrip(device, tmp_path):
    tensors = {name: _sample(name, (3, 2), device) for name in ALL_DTYPES}
    tensors["scalar"] = _sample("float32", (), device)
    tensors["empty"] = _sample("float32", (0, 3), device)
    path = tmp_path / "t.safetensors"
    ctorch.save_safetensors(tensors, path, metadata={"format": "pt", "note": "hi"})
    out = ctorch.load_safetensors(path, device=device)
    assert list(out) == list(tensors)
    for k in tensors:
        same(out[k], tensors[k])
        assert out[k].device.type == device
    from ctorch.serialization import safetensors_metadata

    assert safetensors_metadata(path) == {"format": "pt", "note": "hi"}
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    assert n % 8 == 0  # data is 8-byte aligned
    header = json.loads(raw[8:8 + n])
    assert header["float32"] == {"dtype": "F32", "shape": [3, 2], "data_offsets": header["float32"]["data_offsets"]}
    assert header["bfloat16"]["dtype"] == "BF16" and header["bool"]["dtype"] == "BOOL"


def test_safetensors_file_written_by_hand(tmp_path):
    """A file made per the safetensors spec: u64 header size, JSON header, little-endian data."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([7, -8], dtype=np.int64)
    c = np.array([1.5, -2.0], dtype=np.float16)
    header = {"__metadata__": {"k": "v"},
              "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
              "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
              "c": {"dtype": "F16", "shape": [2], "data_offsets": [40, 44]}}
    raw = json.dumps(header).encode()
    data = a.astype("<f4").tobytes() + b.astype("<i8").tobytes() + c.astype("<f2").tobytes()
    path = tmp_path / "hand.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)
    out = ctorch.load_safetensors(str(path))
    assert list(out) == ["b", "a", "c"]  # header order
    np.testing.assert_array_equal(to_numpy(out["a"]), a)
    np.testing.assert_array_equal(to_numpy(out["b"]), b)
    np.testing.assert_array_equal(to_numpy(out["c"]), c)
    assert out["b"].dtype == ctorch.int64 and out["c"].dtype == ctorch.float16


def _st_file(header, data):
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


@pytest.mark.parametrize("desc,header,data,match", [
    ("gap", {"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8, "gap or overlap"),
    ("overlap", {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                 "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8, "gap or overlap"),
    ("size mismatch", {"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8, "do not match"),
    ("unsupported dtype", {"a": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}, b"\0", "unsupported"),
    ("extra data", {"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}, b"\0\0", "data section"),
    ("truncated data", {"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}}, b"\0\0", "data section"),
    ("reversed offsets", {"a": {"dtype": "U8", "shape": [0], "data_offsets": [4, 0]}}, b"", "invalid data_offsets"),
    ("negative dim", {"a": {"dtype": "U8", "shape": [-1], "data_offsets": [0, 0]}}, b"", "invalid shape"),
    ("bad metadata", {"__metadata__": {"k": 1}}, b"", "__metadata__"),
    ("entry not object", {"a": [1, 2]}, b"", "must be an object"),
])
def test_safetensors_corrupted(tmp_path, desc, header, data, match):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(_st_file(header, data))
    with pytest.raises(RuntimeError, match=match):
        ctorch.load_safetensors(path)


def test_safetensors_bad_lengths(tmp_path):
    path = tmp_path / "bad.safetensors"
    for raw in (b"\x01\x02", struct.pack("<Q", 2**40) + b"{}", struct.pack("<Q", 100) + b"{}",
                struct.pack("<Q", 4) + b"\xff\xff\xff\xff", struct.pack("<Q", 2) + b"[]"):
        path.write_bytes(raw)
        with pytest.raises(RuntimeError, match="load_safetensors: "):
            ctorch.load_safetensors(path)


def test_safetensors_argument_errors(tmp_path):
    with pytest.raises(TypeError, match="dict of tensors"):
        ctorch.save_safetensors([ctorch.zeros(1)], tmp_path / "x")
    with pytest.raises(TypeError, match="not a Tensor"):
        ctorch.save_safetensors({"a": 1}, tmp_path / "x")
    with pytest.raises(ValueError, match="metadata must be a dict of str to str"):
        ctorch.save_safetensors({"a": ctorch.zeros(1)}, tmp_path / "x", metadata={"a": 1})
