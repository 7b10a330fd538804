"""Legacy tensor types (torch.FloatTensor, torch.cuda.LongTensor, ...), Tensor.type(), the legacy
constructor (torch.Tensor(...)), set_default_tensor_type, empty_strided / empty_permuted,
Tensor.storage() and to_dlpack; expectations from PyTorch's documented behaviour and messages."""
import warnings

import numpy as np
import pytest

import ctorch as torch

LEGACY = [("FloatTensor", torch.float32), ("DoubleTensor", torch.float64), ("HalfTensor", torch.float16),
          ("BFloat16Tensor", torch.bfloat16), ("LongTensor", torch.int64), ("IntTensor", torch.int32),
          ("ShortTensor", torch.int16), ("CharTensor", torch.int8), ("ByteTensor", torch.uint8),
          ("BoolTensor", torch.bool)]


@pytest.mark.parametrize("name,dtype", LEGACY, ids=[n for n, _ in LEGACY])
def test_legacy_type_constructs_and_checks(name, dtype):
    cls = getattr(torch, name)
    assert cls.dtype == dtype and not cls.is_cuda and getattr(torch.cuda, name).is_cuda
    assert type(cls).__name__ == "tensortype" and cls.__name__ == name
    t = cls(2, 3)
    assert type(t) is torch.Tensor and t.shape == (2, 3) and t.dtype == dtype and t.device.type == "cpu"
    assert cls(torch.Size([4])).shape == (4,) and cls(size=[1, 2]).shape == (1, 2)
    e = cls()
    assert e.shape == (0,) and e.dtype == dtype
    d = cls([[1, 0], [3, 4]])
    assert d.dtype == dtype
    np.testing.assert_array_equal(d.float().numpy(), np.array([[1, 0], [3, 4]], np.float64).astype(bool)
                                  if dtype == torch.bool else [[1, 0], [3, 4]])
    assert isinstance(t, cls) and t.type() == "torch." + name
    assert not isinstance(t, getattr(torch.cuda, name))
    other = torch.float64 if dtype != torch.float64 else torch.float32
    assert not isinstance(t.to(other), cls) and not isinstance(1, cls) and not isinstance(np.zeros(2), cls)


def test_legacy_from_data_and_alias():
    np.testing.assert_array_equal(torch.LongTensor([1.5, 2]).numpy(), [1, 2])
    np.testing.assert_array_equal(torch.ByteTensor([-1, 2]).numpy(), [255, 2])
    np.testing.assert_array_equal(torch.FloatTensor((2, 3)).numpy(), [2.0, 3.0])  # a tuple is data
    np.testing.assert_array_equal(torch.FloatTensor(np.array([1, 2])).numpy(), [1.0, 2.0])
    x = torch.arange(3.0)[::2]
    a = torch.FloatTensor(x)
    assert a is not x and a.data_ptr() == x.data_ptr() and a.stride() == (2,)
    g = torch.ones(2, requires_grad=True)
    assert type(torch.FloatTensor(g).grad_fn).__name__ == "AliasBackward0"
    s = torch.tensor([1.0, 2.0]).untyped_storage()
    np.testing.assert_array_equal(torch.FloatTensor(s).numpy(), [1.0, 2.0])
    assert torch.IntTensor(s).shape == (2,)  # the same 8 bytes as int32
    assert torch.Tensor(torch.tensor([1, 2])).dtype == torch.int64  # torch.Tensor takes any dtype


def test_legacy_constructor_errors():
    options = ("TensorOptions(dtype={}, device=cpu, layout=Strided, requires_grad=false (default), "
               "pinned_memory=false (default), memory_format=(nullopt))")
    for dtype, cpp in [(torch.int64, "long int"), (torch.float16, "c10::Half"), (torch.uint8, "unsigned char")]:
        with pytest.raises(TypeError) as info:
            torch.FloatTensor(torch.zeros(1, dtype=dtype))
        assert str(info.value) == f"expected {options.format('float')} (got {options.format(cpp)})"
    with pytest.raises(TypeError, match=r"^new\(\) received an invalid combination of arguments - got \(int, int, "
                                        r"dtype=torch.dtype\), but expected one of:\n \* \(\*, torch.device device"):
        torch.FloatTensor(2, 3, dtype=torch.float64)
    with pytest.raises(TypeError, match=r"got \(Tensor, int\), but"):
        torch.FloatTensor(torch.zeros(2), 2)
    with pytest.raises(TypeError, match=r"got \(size=int, \), but"):
        torch.FloatTensor(size=2)
    with pytest.raises(RuntimeError, match="^legacy constructor expects device type: cpu but device type: cuda was "
                                           "passed$"):
        torch.Tensor(2, 3, device="cuda")
    with pytest.raises(RuntimeError, match=r"^Legacy tensor constructor of the form torch.Tensor\(tensor, "
                                           r"device=device\) is not supported.  Use torch.tensor"):
        torch.FloatTensor(torch.zeros(2), device="cpu")
    with pytest.raises(TypeError, match=r"^new\(\): data must be a sequence \(got float\)$"):
        torch.Tensor(2.5)
    with pytest.raises(TypeError, match=r"^new\(\): data must be a sequence \(got bool\)$"):
        torch.FloatTensor(True)
    with pytest.raises(TypeError, match=r"^new\(\): invalid data type 'str'$"):
        torch.FloatTensor("a")
    with pytest.raises(TypeError, match=r"^new\(\): argument 'size' failed to unpack the object at pos 2 with error "
                                        r"\"type must be tuple of ints,but got str\"$"):
        torch.FloatTensor(2, "a")
    with pytest.raises(RuntimeError, match=r"^Trying to create tensor with negative dimension -1: \[-1\]$"):
        torch.FloatTensor(-1)
    assert torch.FloatTensor(2, 3, device="cpu").shape == (2, 3)


def test_cuda_legacy_type_without_cuda():
    if torch.cuda.is_available():
        t = torch.cuda.FloatTensor([1, 2])
        assert t.device.type == "cuda" and isinstance(t, torch.cuda.FloatTensor) and t.type() == "torch.cuda.FloatTensor"
        assert not isinstance(t, torch.FloatTensor)
        assert torch.zeros(2).type(torch.cuda.DoubleTensor).device.type == "cuda"
        return
    # a CPU-only build: AssertionError, as PyTorch's; a CUDA build without a usable GPU: RuntimeError
    err = AssertionError if torch.version.cuda is None else RuntimeError
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the constructors' deprecation warning, emitted once a process
        with pytest.raises(err):
            torch.cuda.FloatTensor(2)
    with pytest.raises(err):
        torch.zeros(2).type("torch.cuda.FloatTensor")
    with pytest.raises(err):
        torch.zeros(2).type(torch.cuda.FloatTensor)


def test_tensor_type_conversions():
    x = torch.tensor([1.5, -2.0])
    d = x.type(torch.DoubleTensor)
    assert d.dtype == torch.float64 and d.type() == "torch.DoubleTensor"
    assert x.type(torch.FloatTensor) is x
    assert x.type("torch.IntTensor").dtype == torch.int32
    assert x.type(torch.Tensor).dtype == torch.float32 and x.type("torch.Tensor").dtype == torch.float32
    assert x.type(torch.float16).dtype == torch.float16
    for bad in ["torch.float16", "float"]:
        with pytest.raises(ValueError, match=f"^invalid type: '{bad}'$"):
            x.type(bad)
    with pytest.raises(ValueError, match="^invalid type: 'int'$"):
        x.type(int)
    with pytest.raises(TypeError, match="^dtype must be a type, str, or dtype object$"):
        x.type(3)
    assert torch.FloatTensor.add is torch.Tensor.add  # other attributes are Tensor's
    with pytest.raises(AttributeError):
        torch.FloatTensor.zeros


def test_set_default_tensor_type():
    try:
        with warnings.catch_warnings(record=True):  # warned once per process (maybe already)
            warnings.simplefilter("always")
            torch.set_default_tensor_type(torch.DoubleTensor)
        assert torch.get_default_dtype() == torch.float64
        assert torch.Tensor(2).dtype == torch.float64 and torch.zeros(1).dtype == torch.float64
        assert torch.tensor([1.0]).dtype == torch.float64 and torch.Tensor(1).type() == "torch.DoubleTensor"
        torch.set_default_tensor_type("torch.HalfTensor")
        assert torch.get_default_dtype() == torch.float16
        torch.set_default_dtype(torch.float64)  # the same default type
        assert torch.Tensor(1).dtype == torch.float64
        for bad in [torch.LongTensor, "torch.LongTensor"]:
            with pytest.raises(TypeError, match="^only floating-point types are supported as the default type$"):
                torch.set_default_tensor_type(bad)
        for bad in [torch.float64, torch.Tensor, 3]:
            with pytest.raises(TypeError, match="^invalid type object: only floating-point types are supported"):
                torch.set_default_tensor_type(bad)
        with pytest.raises(TypeError):
            torch.set_default_tensor_type(t=torch.FloatTensor)
        assert torch.get_default_dtype() == torch.float64
    finally:
        torch.set_default_tensor_type(torch.FloatTensor)
    assert torch.get_default_dtype() == torch.float32 and torch.Tensor(1).dtype == torch.float32


def test_empty_strided_and_permuted():
    t = torch.empty_strided((2, 3), (1, 2))
    assert t.shape == (2, 3) and t.stride() == (1, 2) and t.untyped_storage().nbytes() == 24 and t.is_leaf
    assert torch.empty_strided((2, 3), (0, 0)).untyped_storage().nbytes() == 4
    assert torch.empty_strided((2, 0), (1, 2)).untyped_storage().nbytes() == 0
    i = torch.empty_strided(size=(2, 3), stride=(3, 1), dtype=torch.int32)
    assert i.dtype == torch.int32 and i.is_contiguous()
    t.fill_(2.0)
    np.testing.assert_array_equal(t.numpy(), np.full((2, 3), 2.0))
    assert torch.empty_strided((2,), (1,), requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match=r"^dimensionality of sizes \(2\) must match dimensionality of strides "
                                           r"\(1\)$"):
        torch.empty_strided((2, 3), (1,))
    with pytest.raises(RuntimeError, match=r"^Trying to create tensor with negative dimension -3: \[2, -3\]$"):
        torch.empty_strided((2, -3), (1, 2))
    with pytest.raises(RuntimeError, match=r"^Storage size calculation overflowed with sizes=\[2, 3\] and "
                                           r"strides=\[1, -2\]$"):
        torch.empty_strided((2, 3), (1, -2))
    with pytest.raises(TypeError, match=r"^empty_strided\(\): argument 'size' \(position 1\) must be tuple of ints, "
                                        r"not int$"):
        torch.empty_strided(2, (1,))
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients"):
        torch.empty_strided((2,), (1,), dtype=torch.int64, requires_grad=True)

    assert torch.empty_permuted((2, 3, 4), (0, 2, 1)).stride() == (12, 1, 3)
    p = torch.empty_permuted((2, 3, 4), (2, 0, 1), dtype=torch.int8)
    assert p.shape == (2, 3, 4) and p.stride() == (3, 1, 6) and p.dtype == torch.int8
    assert torch.empty_permuted((2, 3, 4, 5), (0, 2, 3, 1)).is_contiguous(memory_format=torch.channels_last)
    assert torch.empty_permuted((), ()).shape == ()
    with pytest.raises(RuntimeError, match=r"^Number of dimensions in size does not match the length of the "
                                           r"physical_layout; i.e. len\(size\) = 3 is not equal to "
                                           r"len\(physical_layout\) = 2$"):
        torch.empty_permuted((2, 3, 4), (0, 1))
    with pytest.raises(RuntimeError, match="^Duplicate dim not allowed$"):
        torch.empty_permuted((2, 3, 4), (0, 1, 1))
    with pytest.raises(RuntimeError, match=r"^Dimension out of range \(expected to be between 0 and 2, but got -1 "
                                           r"at index 2\).  NB: negative dims not currently supported"):
        torch.empty_permuted((2, 3, 4), (0, 1, -1))


def test_storage_and_to_dlpack():
    x = torch.arange(4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = x[1:].storage()
    assert type(s).__name__ == "TypedStorage" and s.size() == len(s) == 4
    assert s.dtype == torch.float32 and s.device == torch.device("cpu") and s.data_ptr() == x.data_ptr()
    assert s.tolist() == [0.0, 1.0, 2.0, 3.0] and s[1] == 1.0 and s[-1] == 3.0
    assert s.element_size() == 4 and s.nbytes() == 16 and s.type() == "torch.FloatStorage"
    s[1] = 7
    assert x.tolist() == [0.0, 7.0, 2.0, 3.0]
    with pytest.raises(IndexError, match="^index 4 out of range for storage of size 4$"):
        s[4]
    assert str(s) == " 0.0\n 7.0\n 2.0\n 3.0\n[torch.storage.TypedStorage(dtype=torch.float32, device=cpu) of size 4]"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.arange(3).storage().tolist() == [0, 1, 2]

    cap = torch.to_dlpack(torch.arange(3.0))
    np.testing.assert_array_equal(torch.from_dlpack(cap).numpy(), [0.0, 1.0, 2.0])
    assert torch.utils.dlpack.to_dlpack is torch.to_dlpack
    with pytest.raises(TypeError, match=r"^_to_dlpack\(\): argument 'data' \(position 1\) must be Tensor, not list$"):
        torch.to_dlpack([1])
