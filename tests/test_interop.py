"""Conversions between ctorch and Python/NumPy/DLPack: tensor() from nested data, as_tensor,
asarray, from_numpy/numpy/__array__/__array_interface__ (shared memory and lifetimes),
frombuffer, tolist, iteration, DLPack both ways, and pickling."""
import copy
import gc
import pickle

import numpy as np
import pytest

import ctorch as torch
from conftest import ALL_DTYPES, assert_close, np_dtype, to_numpy

NUMPY_DTYPES = ["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def sample(dtype, shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * 10
    return (a > 0) if dtype == "bool" else a.astype(np_dtype(dtype))


def shares(t, a):
    return t.data_ptr() == a.__array_interface__["data"][0]


# --- tensor(data) ------------------------------------------------------------------------------------
@pytest.mark.parametrize("data,dtype,shape", [
    (3, torch.int64, ()), (2.5, torch.float32, ()), (True, torch.bool, ()),
    ([1, 2, 3], torch.int64, (3,)), ((1.0, 2), torch.float32, (2,)), ([True, False], torch.bool, (2,)),
    ([True, 2], torch.int64, (2,)), ([True, 2.5], torch.float32, (2,)), ([[1, 2], [3.5, 4]], torch.float32, (2, 2)),
    ([], torch.float32, (0,)), ([[]], torch.float32, (1, 0)), ([[], []], torch.float32, (2, 0)),
    (range(4), torch.int64, (4,)), (bytearray(b"ab"), torch.int64, (2,)),
    ([np.float32(1.0)], torch.float32, (1,)), ([1, np.float64(2.0)], torch.float64, (2,)),
    ([np.int32(1)], torch.int32, (1,)), (np.float32(1.5), torch.float32, ()), (np.bool_(True), torch.bool, ()),
    ([torch.tensor(1.0), torch.tensor(2.0)], torch.float32, (2,)),
    ([1, torch.tensor(2.5, dtype=torch.float64)], torch.float64, (2,)),
    ([torch.tensor(1, dtype=torch.int8), torch.tensor(2, dtype=torch.int16)], torch.int16, (2,)),
    ([np.array([1, 2]), np.array([3, 4])], torch.int64, (2, 2)),
    ([np.array([1, 2]), [3, 4.5]], torch.float32, (2, 2)),
    ([torch.tensor([1, 2]), torch.tensor([3, 4])], torch.int64, (2, 2)),
    ([[1.5], torch.tensor([2])], torch.float32, (2, 1)),
    (2**63 - 1, torch.int64, ()), (-2**63, torch.int64, ()),
], ids=lambda v: repr(v)[:30] if not isinstance(v, type(torch.float32)) else str(v))
def test_tensor_inference(data, dtype, shape):
    t = torch.tensor(data)
    assert t.dtype == dtype and t.shape == shape
    np.testing.assert_array_equal(to_numpy(t).astype(np.float64), np.array(as_floats(data), dtype=np.float64))


def as_floats(x):
    """Nested data as nested Python floats (the oracle for tensor())."""
    if isinstance(x, (torch.Tensor, np.ndarray)):
        return as_floats(x.tolist())
    if isinstance(x, (list, tuple, range, bytearray)):
        return [as_floats(v) for v in x]
    return float(x)


def test_tensor_values_nested(rng):
    data = rng.standard_normal((3, 4, 5)).tolist()
    t = torch.tensor(data)
    assert_close(t, np.array(data))
    t = torch.tensor(data, dtype=torch.float64)
    np.testing.assert_array_equal(t.numpy(), np.array(data))
    big = list(range(100000))
    np.testing.assert_array_equal(torch.tensor(big).numpy(), np.arange(100000))
    tup = tuple(tuple(r) for r in rng.integers(-5, 5, (4, 3)).tolist())
    np.testing.assert_array_equal(torch.tensor(tup).numpy(), np.array(tup))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_tensor_dtype_conversion(device, dtype):
    data = [[0, 1, 2], [3, 4, 5]]
    t = torch.tensor(data, dtype=getattr(torch, dtype), device=device)
    assert t.dtype == getattr(torch, dtype) and t.device.type == device
    assert_close(t, np.array(data).astype(np_dtype(dtype)))
    if dtype == "uint8":
        return  # -0.5 does not fit (PyTorch's checked conversion)
    t = torch.tensor([1.5, -0.5, 2.75], dtype=getattr(torch, dtype), device=device)
    assert_close(t, np.array([1.5, -0.5, 2.75]).astype(np_dtype(dtype)))


def test_tensor_conversions_pytorch_rules():
    assert torch.tensor(2.7, dtype=torch.int64).item() == 2
    assert torch.tensor(-1, dtype=torch.uint8).item() == 255
    assert torch.tensor(3, dtype=torch.bool).item() is True
    assert torch.tensor([256], dtype=torch.bool).tolist() == [True]
    assert torch.tensor(1e400).item() == float("inf")
    assert torch.tensor([1e40], dtype=torch.float16).tolist() == [float("inf")]
    assert torch.tensor(2**70, dtype=torch.float64).item() == 2.0**70
    assert torch.tensor(np.array([300]), dtype=torch.uint8).tolist() == [44]  # arrays wrap, as PyTorch
    assert torch.tensor(np.array([1.5, 2.5]), dtype=torch.int64).tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="^value cannot be converted to type uint8 without overflow$"):
        torch.tensor(300, dtype=torch.uint8)
    with pytest.raises(RuntimeError, match="^value cannot be converted to type uint8 without overflow$"):
        torch.tensor([1.5, 300], dtype=torch.uint8)
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8 without overflow"):
        torch.tensor([-1.5], dtype=torch.uint8)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8 without overflow"):
        torch.tensor([-129], dtype=torch.int8)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int32 without overflow"):
        torch.tensor(2**40, dtype=torch.int32)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int32 without overflow"):
        torch.tensor(float("nan"), dtype=torch.int32)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int64 without overflow"):
        torch.tensor([1e40], dtype=torch.int64)
    with pytest.raises(ValueError, match="^Overflow when unpacking long long$"):
        torch.tensor(2**63)
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        torch.tensor([2**64])


def test_tensor_errors():
    cases = [
        ([[1, 2], 3], TypeError, "^not a sequence$"),
        ([[[1]], [[2]], [3]], TypeError, "^not a sequence$"),
        ([1, [2, 3]], TypeError, "^'list' object cannot be interpreted as an integer$"),
        ([1.0, [2, 3]], TypeError, "^must be real number, not list$"),
        ([[1, 2], [3]], ValueError, r"^expected sequence of length 2 at dim 1 \(got 1\)$"),
        ([[1], [2, 3]], ValueError, r"^expected sequence of length 1 at dim 1 \(got 2\)$"),
        ([[1, 2, 3], [4, 5]], ValueError, r"^expected sequence of length 3 at dim 1 \(got 2\)$"),
        ([[1, 2], torch.tensor([3])], ValueError, r"^expected sequence of length 2 at dim 1 \(got 1\)$"),
        ("abc", TypeError, "^new\\(\\): invalid data type 'str'$"),
        (b"ab", TypeError, "^new\\(\\): invalid data type 'bytes'$"),
        (["a"], ValueError, "^too many dimensions 'str'$"),
        (["a", 1], ValueError, "^too many dimensions 'str'$"),
        ([1, "a"], TypeError, "^new\\(\\): invalid data type 'str'$"),
        ([None], RuntimeError, "^Could not infer dtype of NoneType$"),
        (None, RuntimeError, "^Could not infer dtype of NoneType$"),
        ([[1], None], RuntimeError, "^Could not infer dtype of NoneType$"),
        (object(), RuntimeError, "^Could not infer dtype of object$"),
        ({1: 2}, RuntimeError, "^Could not infer dtype of dict$"),
        ({1, 2}, RuntimeError, "^Could not infer dtype of set$"),
        ([1 + 2j], TypeError, "complex"),
        (np.array(["a"]), TypeError, "^can't convert np.ndarray of type numpy.str_. The only supported types are"),
        (np.array([1, 2], dtype=object), TypeError, "can't convert np.ndarray of type numpy.object_"),
        (np.array([1, 2], dtype=np.uint16), TypeError, "can't convert np.ndarray of type numpy.uint16"),
        (np.array([1.0, 2.0])[::-1], ValueError, "^At least one stride in the given numpy array is negative"),
        (np.array([1, 2], dtype=">i4"), ValueError, "^given numpy array has byte order different from the native"),
    ]
    for data, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            torch.tensor(data)
    with pytest.raises(TypeError, match="^must be real number, not NoneType$"):
        torch.tensor([1, None], dtype=torch.float32)
    with pytest.raises(TypeError, match="^'NoneType' object cannot be interpreted as an integer$"):
        torch.tensor([1.5, None], dtype=torch.int64)
    with pytest.raises(TypeError, match=r"^tensor\(\): argument 'dtype' must be torch.dtype, not str$"):
        torch.tensor([1, 2], dtype="float32")
    with pytest.raises(TypeError, match=r"^tensor\(\): argument 'device' must be torch.device, not float$"):
        torch.tensor([1, 2], device=1.5)
    with pytest.raises(RuntimeError, match=r"Invalid device string: 'cuda:x'"):
        torch.tensor([1, 2], device="cuda:x")
    with pytest.raises(TypeError, match=r"^tensor\(\) takes 1 positional argument but 2 were given$"):
        torch.tensor(1, 2)
    with pytest.raises(TypeError, match="missing required argument 'data'"):
        torch.tensor()
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients$"):
        torch.tensor([1, 2], requires_grad=True)


def test_tensor_deep_and_self_referential():
    assert torch.tensor(eval("[" * 25 + "1" + "]" * 25)).shape == (1,) * 25
    with pytest.raises(ValueError, match="too many dimensions 'list'"):
        torch.tensor(eval("[" * 30 + "1" + "]" * 30))
    loop = [1]
    loop.append(loop)
    with pytest.raises((TypeError, ValueError)):
        torch.tensor([loop])
    with pytest.raises(TypeError):
        torch.tensor(loop)


def test_tensor_copies():
    a = np.arange(6.0).reshape(2, 3)
    t = torch.tensor(a)
    assert t.dtype == torch.float64 and not shares(t, a)
    a[0, 0] = 100
    assert t.tolist()[0][0] == 0.0
    src = torch.ones(3)
    c = torch.tensor(src)
    assert c.data_ptr() != src.data_ptr()
    assert torch.tensor(src, dtype=torch.int32).dtype == torch.int32
    # a non-contiguous array keeps its dim order (PyTorch's _to_copy)
    nc = np.zeros((2, 3), np.float32)[:, ::2].T
    assert torch.tensor(nc).stride() == (1, 2)
    assert torch.tensor(np.ones((2, 3, 4)).transpose(2, 0, 1)).stride() == (1, 12, 4)
    assert torch.tensor(np.float64(1.5)).dtype == torch.float64
    assert torch.tensor(np.array(2.5)).dtype == torch.float64


def test_tensor_requires_grad():
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        t.numpy()
    assert t.numpy(force=True).tolist() == [1.0, 2.0]


def test_legacy_constructor():
    assert torch.Tensor([1, 2]).dtype == torch.float32
    assert torch.Tensor(2, 3).shape == (2, 3)


# --- as_tensor / asarray / from_numpy / frombuffer -------------------------------------------------------
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_from_numpy_shares_memory(dtype):
    a = sample(dtype)
    t = torch.from_numpy(a)
    assert t.dtype == getattr(torch, dtype) and t.shape == a.shape and shares(t, a)
    a[1, 2] = 1
    assert to_numpy(t)[1, 2] == 1
    t.fill_(0)
    assert not a.any()
    for view in (a.T, a[:, ::2], a[1], a[::2, 1:3], a[0:0]):
        v = torch.from_numpy(view)
        assert v.shape == view.shape
        np.testing.assert_array_equal(v.numpy(), view)
        if view.size:
            assert v.stride() == tuple(s // a.itemsize for s in view.strides)


def test_from_numpy_lifetime():
    gc.collect()
    live = torch._C._live_storages()
    a = np.arange(1000.0)
    t = torch.from_numpy(a)
    del a
    gc.collect()
    assert t.numpy()[999] == 999.0  # the tensor keeps the array alive
    n = t.numpy()
    del t
    gc.collect()
    assert n[5] == 5.0  # and the exported array keeps the tensor alive
    del n
    gc.collect()
    assert torch._C._live_storages() == live


def test_from_numpy_errors():
    with pytest.raises(TypeError, match=r"^expected np.ndarray \(got list\)$"):
        torch.from_numpy([1])
    with pytest.raises(TypeError, match=r"^expected np.ndarray \(got numpy.float64\)$"):
        torch.from_numpy(np.float64(3))
    with pytest.raises(ValueError, match="negative"):
        torch.from_numpy(np.arange(3)[::-1])
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.complex128"):
        torch.from_numpy(np.zeros(2, complex))
    assert torch.from_numpy(np.array(3.0)).shape == ()
    ro = np.arange(3.0)
    ro.flags.writeable = False
    assert torch.from_numpy(ro).tolist() == [0.0, 1.0, 2.0]


def test_as_tensor():
    a = np.arange(6.0)
    t = torch.as_tensor(a)
    assert shares(t, a) and t.dtype == torch.float64
    t2 = torch.as_tensor(a, dtype=torch.float32)
    assert not shares(t2, a) and t2.dtype == torch.float32
    src = torch.ones(3)
    assert torch.as_tensor(src) is src
    assert torch.as_tensor(src, dtype=torch.float32, device="cpu") is src
    assert torch.as_tensor(src, dtype=torch.int64).dtype == torch.int64
    assert torch.as_tensor([1, 2]).dtype == torch.int64
    assert torch.as_tensor(3).shape == ()
    np.testing.assert_array_equal(torch.as_tensor(np.arange(3), dtype=torch.float32).numpy(), [0.0, 1.0, 2.0])


def test_asarray():
    a = np.arange(3)
    t = torch.asarray(a)
    assert shares(t, a)
    assert not shares(torch.asarray(a, copy=True), a)
    assert torch.asarray(a, copy=False).dtype == torch.int64
    assert torch.asarray([1, 2], dtype=torch.float32).dtype == torch.float32
    with pytest.raises(ValueError):
        torch.asarray(a, dtype=torch.float32, copy=False)


def test_frombuffer():
    buf = bytearray(b"\x01\x02\x03\x04\x05\x06\x07\x08")
    t = torch.frombuffer(buf, dtype=torch.uint8)
    assert t.tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    t.fill_(9)
    assert buf == bytearray(b"\x09" * 8)  # shared
    assert torch.frombuffer(buf, dtype=torch.int16, count=2, offset=2).shape == (2,)
    assert torch.frombuffer(b"abcd", dtype=torch.uint8).tolist() == [97, 98, 99, 100]
    del buf
    gc.collect()
    assert t.tolist() == [9] * 8
    with pytest.raises(ValueError, match="must be a multiple of element size"):
        torch.frombuffer(b"abc", dtype=torch.int16)
    with pytest.raises(ValueError, match="must not be 0"):
        torch.frombuffer(b"", dtype=torch.uint8)
    with pytest.raises(ValueError, match="must not be greater than actual buffer length"):
        torch.frombuffer(b"abcd", dtype=torch.uint8, count=5)
    with pytest.raises(ValueError, match="offset"):
        torch.frombuffer(b"abcd", dtype=torch.uint8, offset=4)
    with pytest.raises(TypeError):
        torch.frombuffer([1, 2], dtype=torch.uint8)


# --- back to numpy ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_export(dtype):
    t = torch.tensor(sample(dtype))
    n = t.numpy()
    assert n.dtype == np.dtype(dtype) and n.shape == tuple(t.shape) and shares(t, n)
    n[0, 0] = 0
    assert to_numpy(t)[0, 0] == 0
    v = t.T.numpy()
    assert v.strides == tuple(s * t.element_size() for s in t.T.stride())
    e = torch.ones(3, 1).expand(3, 4).numpy()
    assert e.strides[1] == 0 and e.shape == (3, 4)
    assert torch.tensor(5.0).numpy().shape == ()


def test_numpy_errors():
    with pytest.raises(TypeError, match="^Got unsupported ScalarType BFloat16$"):
        torch.ones(2, dtype=torch.bfloat16).numpy()
    with pytest.raises(RuntimeError, match=r"^Can't call numpy\(\) on Tensor that requires grad. Use "
                                           r"tensor.detach\(\).numpy\(\) instead.$"):
        torch.ones(2, requires_grad=True).numpy()
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(torch.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        np.asarray(torch.ones(2, dtype=torch.bfloat16))


def test_array_protocol():
    t = torch.arange(6.0).view(2, 3)
    a = np.asarray(t)
    assert shares(t, a) and a.dtype == np.float32 and isinstance(a.base, torch.Tensor)
    assert np.array(t, copy=False).shape == (2, 3)
    c = np.array(t)
    assert not shares(t, c)
    np.testing.assert_array_equal(t.__array__(np.float64), np.arange(6.0).reshape(2, 3))
    assert t.__array__(np.float64).dtype == np.float64
    assert shares(t, t.__array__())
    assert not shares(t, t.__array__(copy=True))
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        t.__array__(np.float64, copy=False)
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    iface = t.__array_interface__
    assert iface["shape"] == (2, 3) and iface["typestr"] == "<f4" and iface["version"] == 3
    assert torch.ones(2, dtype=torch.bool).__array_interface__["typestr"] == "|b1"
    assert torch.Tensor.__array_priority__ == 1000
    with pytest.raises(AttributeError):
        torch.ones(2, dtype=torch.bfloat16).__array_interface__


def test_array_wrap_ufuncs():
    t = torch.tensor([1.0, 2.0])
    r = np.sin(t)
    assert isinstance(r, torch.Tensor) and r.dtype == torch.float32
    np.testing.assert_allclose(r.numpy(), np.sin([1.0, 2.0]), rtol=1e-6)
    g = np.greater(t, 1)
    assert g.dtype == torch.uint8 and g.tolist() == [0, 1]


# --- tolist / iteration -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_tolist(device, dtype):
    a = sample(dtype, (2, 3))
    t = torch.tensor(a, dtype=getattr(torch, dtype), device=device)
    lst = t.tolist()
    expected = to_numpy(t).tolist()
    assert lst == expected
    leaf = lst[0][0]
    kind = bool if dtype == "bool" else float if "float" in dtype else int
    assert type(leaf) is kind
    assert t.T.tolist() == to_numpy(t).T.tolist()
    assert torch.tensor(3.5).tolist() == 3.5 and torch.tensor(True).tolist() is True
    assert torch.zeros(0, 2).tolist() == []
    assert torch.zeros(2, 0).tolist() == [[], []]


def test_python_number_conversions_and_contains():
    x = torch.arange(6.0).reshape(2, 3)
    for fn in (float, int):
        with pytest.raises(ValueError, match="^only one element tensors can be converted to Python scalars$"):
            fn(x)
    with pytest.raises(RuntimeError, match="a Tensor with 6 elements cannot be converted to Scalar"):
        x.item()  # .item() keeps its RuntimeError
    assert int(torch.tensor([-2.7])) == -2 and float(torch.tensor([[3]])) == 3.0
    # `in` is (element == t).any(), not a walk over rows
    assert 2.0 in x and 7 not in x and x[1] in x and torch.tensor([9.0, 9.0, 9.0]) not in x
    with pytest.raises(RuntimeError, match="Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                                           "<class 'str'>"):
        "a" in x


def test_to_positional_flags_and_legacy_type_strings():
    x = torch.arange(3.0)
    assert x.to(torch.float64, True).dtype == torch.float64  # to(dtype, non_blocking)
    assert x.to(torch.float32, False, True) is not x  # to(dtype, non_blocking, copy)
    assert x.to(torch.float32) is x
    assert x.to("cpu", torch.int32, False, True).dtype == torch.int32  # to(device, dtype, non_blocking, copy)
    assert x.to(torch.zeros(1, dtype=torch.int16), False, True).dtype == torch.int16
    with pytest.raises(TypeError, match="to\\(\\) received an invalid combination of arguments"):
        x.to(torch.float64, "cpu")
    assert x.type("torch.DoubleTensor").dtype == torch.float64
    assert x.type("torch.ByteTensor").tolist() == [0, 1, 2]
    assert x.type() == "torch.FloatTensor"
    with pytest.raises(ValueError, match="^invalid type: 'DoubleTensor'$"):
        x.type("DoubleTensor")
    legacy = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
              "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}
    for name, legacy_name in legacy.items():  # every dtype's legacy name, both ways
        assert torch.zeros(1, dtype=getattr(torch, name)).type() == f"torch.{legacy_name}Tensor"
        assert x.type(f"torch.{legacy_name}Tensor").dtype == getattr(torch, name)
    for bad in ("torch.Float", "torch.FloatTensorX"):
        with pytest.raises(ValueError, match=f"^invalid type: '{bad}'$"):
            x.type(bad)


def test_iter():
    t = torch.tensor([[1, 2], [3, 4], [5, 6]])
    rows = list(t)
    assert len(rows) == 3 and all(isinstance(r, torch.Tensor) for r in rows)
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    assert rows[1].data_ptr() == t.data_ptr() + 2 * t.element_size()  # views
    assert [x.item() for x in torch.tensor([7, 8])] == [7, 8]
    assert list(torch.zeros(0, 3)) == []
    with pytest.raises(TypeError, match="^iteration over a 0-d tensor$"):
        iter(torch.tensor(1))
    a, b = torch.tensor([1.0, 2.0])
    assert a.item() == 1.0 and b.item() == 2.0


# --- DLPack --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_dlpack_to_numpy(dtype):
    t = torch.tensor(sample(dtype))
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(dtype) and a.shape == tuple(t.shape) and shares(t, a)
    a[0, 0] = 1
    assert to_numpy(t)[0, 0] == 1
    nc = np.from_dlpack(t.T)
    assert nc.strides == tuple(s * t.element_size() for s in t.T.stride())
    assert t.__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_dlpack_from_numpy(dtype):
    a = sample(dtype)
    for src in (a, a.T, a[:, ::2], a[0], a[0:0]):
        t = torch.from_dlpack(src)
        assert t.shape == src.shape and t.dtype == getattr(torch, dtype)
        np.testing.assert_array_equal(to_numpy(t), src)
        if src.size:
            assert shares(t, src)


def test_dlpack_lifetimes():
    gc.collect()
    live = torch._C._live_storages()
    t = torch.arange(10.0)
    a = np.from_dlpack(t)
    del t
    gc.collect()
    assert a[9] == 9.0  # the capsule's deleter keeps the storage alive
    del a
    gc.collect()
    assert torch._C._live_storages() == live
    n = np.arange(5.0)
    t = torch.from_dlpack(n)
    del n
    gc.collect()
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    del t
    gc.collect()
    assert torch._C._live_storages() == live
    # an unconsumed capsule releases its tensor when collected
    cap = torch.ones(3).__dlpack__()
    assert torch._C._live_storages() == live + 1
    del cap
    gc.collect()
    assert torch._C._live_storages() == live


def test_dlpack_capsules():
    t = torch.arange(6).view(2, 3)
    cap = t.__dlpack__()
    assert "dltensor" in repr(cap)
    u = torch.from_dlpack(cap)
    assert u.tolist() == t.tolist() and u.data_ptr() == t.data_ptr()
    with pytest.raises(RuntimeError, match="^from_dlpack received an invalid capsule"):
        torch.from_dlpack(cap)  # consumed
    vcap = t.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(vcap)
    assert torch.from_dlpack(vcap).tolist() == t.tolist()
    # ctorch to ctorch, every dtype (bfloat16 included)
    for name in ALL_DTYPES:
        x = torch.ones(2, 3, dtype=getattr(torch, name))
        y = torch.from_dlpack(x)
        assert y.dtype == x.dtype and y.data_ptr() == x.data_ptr()
    c = t.__dlpack__(copy=True, max_version=(1, 0))
    assert torch.from_dlpack(c).data_ptr() != t.data_ptr()
    assert torch.from_dlpack(t.__dlpack__(dl_device=(1, 0))).tolist() == t.tolist()
    with pytest.raises(BufferError, match="^Can't export tensors that require gradient, use tensor.detach\\(\\)$"):
        torch.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(RuntimeError, match="^from_dlpack received an invalid capsule"):
        torch.from_dlpack(3)
    with pytest.raises(BufferError, match="unsupported DLPack dtype"):
        torch.from_dlpack(np.arange(3, dtype=np.uint16))


# --- pickling ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_pickle(dtype):
    t = torch.tensor(sample(dtype), dtype=getattr(torch, dtype))
    for src in (t, t.T, torch.tensor(3, dtype=getattr(torch, dtype)), t.narrow(0, 0, 0)):
        r = pickle.loads(pickle.dumps(src))
        assert r.dtype == src.dtype and r.shape == src.shape
        np.testing.assert_array_equal(to_numpy(r), to_numpy(src))
    d = copy.deepcopy(t)
    assert d.data_ptr() != t.data_ptr() and d.tolist() == t.tolist()
    g = pickle.loads(pickle.dumps(torch.ones(2, requires_grad=True)))
    with pytest.raises(RuntimeError, match="requires grad"):
        g.numpy()
