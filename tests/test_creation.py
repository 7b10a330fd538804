"""Tensor factories (zeros, ones, empty, full, arange, linspace, logspace, eye, scalar_tensor, the
*_like and new_* forms) and the in-place fill_/zero_, against NumPy and PyTorch's rules and
messages, on every device x dtype, in several layouts."""
import warnings

import numpy as np
import pytest

import ctorch as torch
from conftest import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, assert_close, np_dtype, to_numpy

SIZE_FORMS = [
    pytest.param((), id="0d"),
    pytest.param((0,), id="empty"),
    pytest.param((3,), id="1d"),
    pytest.param((2, 3), id="2d"),
    pytest.param((2, 0, 4), id="empty3d"),
    pytest.param((1, 2, 1, 3), id="4d"),
]


def dt(name):
    return getattr(torch, name)


def requires_grad(t):
    """t.requires_grad, read through numpy() (the attribute comes with autograd)."""
    try:
        t.detach().numpy()
        t.numpy()
        return False
    except RuntimeError as e:
        assert "requires grad" in str(e)
        return True


@pytest.fixture
def default_float64():
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(torch.float32)


# --- zeros / ones / empty -------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SIZE_FORMS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_zeros_ones(device, dtype, shape):
    z = torch.zeros(shape, dtype=dt(dtype), device=device)
    o = torch.ones(*(shape or [()]), dtype=dt(dtype), device=device)
    e = torch.empty(shape, dtype=dt(dtype), device=device)
    for t in (z, o, e):
        assert t.shape == shape and t.dtype == dt(dtype) and t.device.type == device
        assert t.is_contiguous()
    assert_close(z, np.zeros(shape, np_dtype(dtype)))
    assert_close(o, np.ones(shape, np_dtype(dtype)))


@pytest.mark.parametrize("fn", [torch.zeros, torch.ones, torch.empty])
def test_size_spellings(fn):
    for args, kwargs in [((2, 3), {}), (((2, 3),), {}), (([2, 3],), {}), ((torch.Size([2, 3]),), {}),
                         ((), {"size": (2, 3)}), ((np.int64(2), torch.tensor(3)), {})]:
        assert fn(*args, **kwargs).shape == (2, 3)
    assert fn(()).shape == () and fn([]).shape == ()


def test_default_dtype(default_float64):
    assert torch.zeros(2).dtype == torch.float64
    assert torch.full((2,), 1.5).dtype == torch.float64
    assert torch.arange(0.0, 1.0, 0.5).dtype == torch.float64
    assert torch.tensor([1.5]).dtype == torch.float64


def test_factory_options():
    t = torch.zeros(2, dtype=torch.float32, device="cpu", requires_grad=True, layout=None, pin_memory=False)
    assert requires_grad(t)
    assert not requires_grad(torch.ones(2, requires_grad=None))
    assert torch.ones(2, dtype=float).dtype == torch.float64
    assert torch.ones(2, dtype=int).dtype == torch.int64
    assert torch.ones(2, dtype=bool).dtype == torch.bool
    assert torch.ones(2, device=torch.device("cpu")).device.type == "cpu"
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        torch.zeros(2, dtype=torch.int64, requires_grad=True)


def test_out_argument():
    out = torch.empty(2, 3)
    r = torch.zeros(2, 3, out=out)
    assert r is out
    assert_close(out, np.zeros((2, 3)))
    # an out= of another shape is resized, silently as PyTorch's factories (arange warns unless it was empty)
    o = torch.empty(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch.ones(4, out=o) is o and o.shape == (4,)
        assert torch.linspace(0, 1, 3, out=o) is o and o.tolist() == [0.0, 0.5, 1.0]
        assert torch.eye(2, out=o).shape == (2, 2)
        assert torch.arange(3.0, out=torch.empty(0)).tolist() == [0.0, 1.0, 2.0]
    with pytest.warns(UserWarning, match=r"An output with one or more elements was resized since it had shape \[2, 2\]"):
        torch.arange(3.0, out=o)
    assert o.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match=r"^dtype Double does not match dtype of out parameter \(Float\)"):
        torch.zeros(3, out=o, dtype=torch.float64)
    # every factory and bernoulli: a non-tensor out= is PyTorch's TypeError, before anything is drawn
    for name, call in [("zeros", lambda: torch.zeros(2, out=3)), ("rand", lambda: torch.rand(2, out="x")),
                       ("arange", lambda: torch.arange(3, out=[0])),
                       ("bernoulli", lambda: torch.bernoulli(torch.ones(2), out=np.zeros(2)))]:
        state = torch.get_rng_state()
        with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'out' must be Tensor, not "):
            call()
        assert torch.equal(torch.get_rng_state(), state)
    row = out[0]
    assert torch.bernoulli(torch.ones(3), out=row) is row
    assert out.tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]


def test_size_errors():
    with pytest.raises(RuntimeError, match=r"^zeros: Dimension size must be non-negative.$"):
        torch.zeros(2, -3)
    for fn in (torch.ones, torch.empty, torch.rand, torch.randn):
        with pytest.raises(RuntimeError, match=r"^Trying to create tensor with negative dimension -1: \[-1\]$"):
            fn(-1)
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension -1: \[2, -1\]"):
        torch.ones(2, -1)
    with pytest.raises(RuntimeError, match=r"Storage size calculation overflowed with sizes=\[4611686018427387904\]"):
        torch.zeros(2**62)
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        torch.empty(2**31, 2**31, 2**31)
    with pytest.raises(RuntimeError, match="can't allocate memory"):
        torch.empty(2**40)
    with pytest.raises(TypeError, match=r"^zeros\(\): argument 'size' \(position 1\) must be tuple of ints, not float$"):
        torch.zeros(2.5)
    with pytest.raises(TypeError, match=r"must be tuple of ints, not float"):
        torch.zeros(float("nan"))
    with pytest.raises(TypeError, match=r"must be tuple of ints, not str"):
        torch.zeros("a")
    with pytest.raises(TypeError, match=r"must be tuple of ints, not NoneType"):
        torch.zeros(None)
    with pytest.raises(TypeError, match=r"must be tuple of ints, not bool"):
        torch.zeros(True)
    with pytest.raises(TypeError, match=r"must be tuple of ints, not Tensor"):
        torch.zeros(torch.tensor(2.0))
    with pytest.raises(TypeError, match=r"but found element of type str at pos 1"):
        torch.zeros((2, "a"))
    with pytest.raises(TypeError, match=r"failed to unpack the object at pos 2 with error \"type must be tuple of ints,but got float\""):
        torch.zeros(2, 2.5)
    with pytest.raises(TypeError, match="Overflow when unpacking long long"):
        torch.zeros(2**63)
    with pytest.raises(TypeError, match=r"missing 1 required positional arguments: \"size\""):
        torch.zeros()
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        torch.zeros(2, foo=1)
    with pytest.raises(TypeError, match=r"^zeros\(\): argument 'dtype' must be torch.dtype, not str$"):
        torch.zeros(2, dtype="float32")
    with pytest.raises(TypeError, match=r"^zeros\(\): argument 'device' must be torch.device, not float$"):
        torch.zeros(2, device=5.5)
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type at start of device string: xpu"):
        torch.zeros(2, device="xpu")
    with pytest.raises(RuntimeError, match="at most 25 dimensions"):
        torch.zeros(*([1] * 26))


# --- full -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value,dtype", [(3, torch.int64), (3.5, torch.float32), (True, torch.bool),
                                         (np.int32(2), torch.int64), (np.float64(2.5), torch.float32),
                                         (torch.tensor(4), torch.int64), (torch.tensor(4.5), torch.float32)])
def test_full_infers_dtype(device, value, dtype):
    t = torch.full((2, 3), value, device=device)
    assert t.dtype == dtype
    assert_close(t, np.full((2, 3), float(value) if dtype != torch.bool else value))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_full_dtypes(device, dtype):
    t = torch.full((4,), 1, dtype=dt(dtype), device=device)
    assert_close(t, np.full(4, 1, np_dtype(dtype)))
    assert torch.full([], 1.5, dtype=torch.float64).shape == ()


def test_full_errors():
    with pytest.raises(TypeError, match=r"^full\(\): argument 'size' \(position 1\) must be tuple of ints, not int$"):
        torch.full(2, 3)
    with pytest.raises(TypeError, match=r"^full\(\): argument 'fill_value' \(position 2\) must be Number, not str$"):
        torch.full((2,), "a")
    with pytest.raises(TypeError, match="must be Number, not NoneType"):
        torch.full((2,), None)
    with pytest.raises(RuntimeError, match=r"^value cannot be converted to type uint8_t without overflow$"):
        torch.full((2,), 300, dtype=torch.uint8)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int without overflow"):
        torch.full((2,), float("nan"), dtype=torch.int32)
    with pytest.raises(RuntimeError, match=r"value cannot be converted to type c10::Half without overflow"):
        torch.full((2,), 1e40, dtype=torch.float16)
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        torch.full((2,), 1e40, dtype=torch.float32)
    assert torch.full((2,), -1, dtype=torch.uint8).tolist() == [255, 255]  # wraps like PyTorch
    assert torch.full((2,), float("inf"), dtype=torch.float16).tolist() == [float("inf")] * 2
    assert torch.full((2,), 2.5, dtype=torch.int32).tolist() == [2, 2]


def test_checked_conversion_truncates_before_the_upper_bound():
    # a float fits an integer dtype when its truncation does: 255.5 -> uint8 255, 127.9 -> int8 127;
    # below the range nothing is truncated first (-0.5 into uint8 raises)
    assert torch.full((1,), 255.5, dtype=torch.uint8).tolist() == [255]
    assert torch.zeros(1, dtype=torch.int8).fill_(127.9).tolist() == [127]
    assert torch.full((1,), -0.9, dtype=torch.int8).tolist() == [0]
    for dtype, v in [(torch.uint8, 256.0), (torch.uint8, -0.5), (torch.int8, 128.0), (torch.int8, -128.5)]:
        with pytest.raises(RuntimeError, match="without overflow"):
            torch.full((1,), v, dtype=dtype)


def test_scalar_tensor_checks_the_value():
    with pytest.raises(RuntimeError, match=r"^value cannot be converted to type uint8_t without overflow$"):
        torch.scalar_tensor(300, dtype=torch.uint8)
    with pytest.raises(RuntimeError, match=r"^value cannot be converted to type int64_t without overflow$"):
        torch.scalar_tensor(float("nan"), dtype=torch.int64)
    with pytest.raises(RuntimeError, match=r"^value cannot be converted to type float without overflow$"):
        torch.scalar_tensor(1e39, dtype=torch.float32)
    assert torch.scalar_tensor(1e20, dtype=torch.float16).item() == float("inf")  # 16-bit floats round
    assert torch.scalar_tensor(-1, dtype=torch.uint8).item() == 255


# --- arange / linspace / logspace ------------------------------------------------------------------
@pytest.mark.parametrize("args", [(5,), (0, 5, 2), (5, 0, -1), (-3, 7, 3), (0.0, 1, 0.1), (-1.0, 1.0, 0.5),
                                  (1, 2.5, 0.25), (0, 1.0000001, 0.25), (10, 10), (3.5,)], ids=str)
def test_arange_matches_numpy(device, args):
    t = torch.arange(*args, device=device)
    expected = np.arange(*args)
    is_float = any(isinstance(a, float) for a in args)
    assert t.dtype == (torch.float32 if is_float else torch.int64)
    assert_close(t, expected)


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != "bool"])
def test_arange_dtypes(device, dtype):
    assert_close(torch.arange(1, 9, 2, dtype=dt(dtype), device=device), np.arange(1, 9, 2).astype(np_dtype(dtype)))


def test_arange_pytorch_rules():
    # integer dtypes truncate start and step, the length comes from the float values
    assert torch.arange(0, 10, 1.5, dtype=torch.int64).tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert torch.arange(0.9, 5, dtype=torch.int64).tolist() == [0, 1, 2, 3, 4]
    assert torch.arange(-0.5, 3, 1, dtype=torch.int64).tolist() == [0, 1, 2, 3]
    assert torch.arange(1, 2, 0.3, dtype=torch.int32).tolist() == [1, 1, 1, 1]
    assert torch.arange(2**62, 2**62 + 3).tolist() == [2**62, 2**62 + 1, 2**62 + 2]
    assert torch.arange(1, 2**24 + 5, dtype=torch.float32).numpy()[-3:].tolist() == [16777218.0, 16777220.0, 16777220.0]
    assert torch.arange(end=5).tolist() == [0, 1, 2, 3, 4]
    assert torch.arange(start=1, end=4).tolist() == [1, 2, 3]
    assert torch.arange(np.int64(3)).tolist() == [0, 1, 2]
    assert torch.arange(torch.tensor(3.0)).dtype == torch.float32
    assert torch.arange(300, dtype=torch.uint8).numpy()[-1] == 299 % 256


def test_arange_errors():
    with pytest.raises(RuntimeError, match="^step must be nonzero$"):
        torch.arange(0, 1, 0)
    with pytest.raises(RuntimeError, match="^upper bound and lower bound inconsistent with step sign$"):
        torch.arange(0, 1, -1)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        torch.arange(1, 0, 0.1)
    with pytest.raises(RuntimeError, match=r"^unsupported range: 0 -> inf$"):
        torch.arange(0, float("inf"))
    with pytest.raises(RuntimeError, match=r"^unsupported range: 0 -> nan$"):
        torch.arange(0, float("nan"))
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        torch.arange(2**62)
    with pytest.raises(NotImplementedError, match="\"arange_cpu\" not implemented for 'Bool'"):
        torch.arange(5, dtype=torch.bool)
    with pytest.raises(TypeError, match=r"^arange\(\): argument 'end' \(position 1\) must be Number, not str$"):
        torch.arange("a")
    with pytest.raises(TypeError):
        torch.arange()


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("start,end,steps", [(0, 1, 5), (1, 0, 4), (-2.5, 7.25, 11), (3, 3, 3), (0, 1, 1), (0, 1, 0),
                                             (0.1, 1.7, 6), (-1e3, 1e3, 1001)])
def test_linspace(device, dtype, start, end, steps):
    t = torch.linspace(start, end, steps, dtype=dt(dtype), device=device)
    assert t.shape == (steps,) and t.dtype == dt(dtype)
    assert_close(t, np.linspace(start, end, steps))


def test_linspace_integer_and_errors():
    assert torch.linspace(-3, 5, 7, dtype=torch.int32).tolist() == [-3, -1, 0, 1, 2, 3, 5]
    assert torch.linspace(0, 10, 5, dtype=torch.int64).tolist() == [0, 2, 5, 7, 10]
    assert torch.linspace(0, 10, 4, dtype=torch.int64).tolist() == [0, 3, 6, 10]
    assert torch.linspace(0, 1, 5).dtype == torch.float32
    assert torch.linspace(torch.tensor(0.0), torch.tensor(1.0), 3).tolist() == [0.0, 0.5, 1.0]
    with pytest.raises(RuntimeError, match="^number of steps must be non-negative$"):
        torch.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="missing required argument 'steps'"):
        torch.linspace(0, 1)
    with pytest.raises(TypeError, match=r"argument 'steps' \(position 3\) must be int, not float"):
        torch.linspace(0, 1, 2.5)
    with pytest.raises(NotImplementedError, match="\"linspace_cpu\" not implemented for 'Bool'"):
        torch.linspace(0, 1, 5, dtype=torch.bool)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("start,end,steps,base", [(0, 2, 3, 10.0), (0, 2, 3, 2), (-2, 2, 5, 3.0), (0, 1, 0, 10.0),
                                                  (0, 1, 1, 10.0), (1.5, -1.5, 7, 2.0)])
def test_logspace(device, dtype, start, end, steps, base):
    t = torch.logspace(start, end, steps, base=base, dtype=dt(dtype), device=device)
    assert_close(t, np.logspace(start, end, steps, base=base))


def test_logspace_int():
    assert torch.logspace(0, 3, 4, dtype=torch.int64).tolist() == [1, 10, 100, 1000]
    assert torch.logspace(0, 2, 3, base=10, dtype=torch.int32).tolist() == [1, 10, 100]
    # the exponents' ends become integers first, as in linspace: 0.5 -> 0, 2.7 -> 2, so the
    # values are int(10 ** (0, 2/3, 4/3, 2)) and int(2.5 ** ...)
    assert torch.logspace(0.5, 2.7, 4, dtype=torch.int64).tolist() == [1, 4, 21, 100]
    assert torch.logspace(0.5, 2, 4, base=2.5, dtype=torch.uint8).tolist() == [1, 1, 3, 6]


# --- eye ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n,m", [(3, None), (2, 3), (3, 2), (0, None), (2, 0), (1, 1)])
def test_eye(device, dtype, n, m):
    t = torch.eye(n, m, dtype=dt(dtype), device=device) if m is not None else torch.eye(n, dtype=dt(dtype), device=device)
    assert_close(t, np.eye(n, m, dtype=np_dtype(dtype)))


def test_eye_errors():
    assert torch.eye(n=2, m=1).shape == (2, 1)
    with pytest.raises(RuntimeError, match="^n must be greater or equal to 0, got -1$"):
        torch.eye(-1)
    with pytest.raises(RuntimeError, match="^m must be greater or equal to 0, got -1$"):
        torch.eye(2, -1)
    with pytest.raises(TypeError, match=r"^eye\(\): argument 'n' \(position 1\) must be int, not float$"):
        torch.eye(2.5)
    with pytest.raises(TypeError, match="must be int, not bool"):
        torch.eye(True)
    with pytest.raises(RuntimeError):
        torch.eye(2**62)


# --- scalar_tensor, *_like, new_* -------------------------------------------------------------------
def test_scalar_tensor():
    t = torch.scalar_tensor(3)
    assert t.shape == () and t.dtype == torch.float32 and t.item() == 3.0
    assert torch.scalar_tensor(3, dtype=torch.int64).item() == 3
    assert torch.scalar_tensor(True).item() == 1.0
    with pytest.raises(TypeError, match=r"^scalar_tensor\(\): argument 's' \(position 1\) must be Number, not str$"):
        torch.scalar_tensor("a")


def layouts(device, dtype="float32"):
    base = np.arange(24, dtype=np_dtype(dtype)).reshape(4, 6)
    yield "contiguous", torch.tensor(base, device=device)
    yield "transposed", torch.tensor(base, device=device).T
    yield "strided", torch.from_numpy(np.ascontiguousarray(base)[:, ::2]).to(device)
    yield "expanded", torch.tensor(base[:1], device=device).expand(4, 6)
    yield "0d", torch.tensor(5.0, device=device)
    yield "empty", torch.zeros(0, 3, device=device)


@pytest.mark.parametrize("fn,fill", [(torch.zeros_like, 0), (torch.ones_like, 1), (torch.empty_like, None)])
def test_like(device, fn, fill):
    for name, src in layouts(device):
        t = fn(src)
        assert t.shape == src.shape and t.dtype == src.dtype and t.device == src.device, name
        if fill is not None:
            assert_close(t, np.full(tuple(src.shape), fill, np.float32))
        if name == "transposed":
            assert t.stride() == src.stride()  # preserve_format keeps a dense permutation
        if name in ("strided", "expanded"):
            assert t.is_contiguous()
    t = torch.zeros_like(torch.ones(2, dtype=torch.int32), dtype=torch.float64)
    assert t.dtype == torch.float64
    with pytest.raises(TypeError, match=r"^zeros_like\(\): argument 'input' \(position 1\) must be Tensor, not list$"):
        torch.zeros_like([1, 2])


def test_full_like():
    t = torch.full_like(torch.ones(2, dtype=torch.int32), 2.7)
    assert t.dtype == torch.int32 and t.tolist() == [2, 2]
    t = torch.full_like(torch.ones(2), 2.7, dtype=torch.float64)
    assert t.dtype == torch.float64 and t.tolist() == [2.7, 2.7]
    with pytest.raises(RuntimeError, match="without overflow"):
        torch.full_like(torch.ones(2, dtype=torch.uint8), 256)


def test_new_factories():
    base = torch.ones(2, 3, dtype=torch.int32)
    assert base.new_zeros(2).dtype == torch.int32 and base.new_zeros(2).tolist() == [0, 0]
    assert base.new_ones((2, 2)).tolist() == [[1, 1], [1, 1]]
    assert base.new_empty(3).shape == (3,)
    assert base.new_full((2,), 7).tolist() == [7, 7]
    assert base.new_zeros(2, dtype=torch.float64).dtype == torch.float64
    assert torch.ones(2).new_tensor([1, 2]).dtype == torch.float32
    assert torch.ones(2, dtype=torch.int64).new_tensor([1.5]).tolist() == [1]


# --- fill_ / zero_ --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "row", "0d", "empty", "column"])
def test_fill_zero_layouts(dtype, layout):
    """In-place fills touch exactly the viewed elements (checked through shared numpy memory)."""
    if dtype == "bfloat16":
        pytest.skip("numpy has no bfloat16 to share memory with")
    arr = (np.arange(24).reshape(4, 6) % 7 + 2).astype(np_dtype(dtype))
    t = torch.from_numpy(arr)
    view, sel = {
        "contiguous": (lambda: t, np.s_[:, :]),
        "transposed": (lambda: t.T, np.s_[:, :]),
        "strided": (lambda: torch.from_numpy(arr[:, ::2]), np.s_[:, ::2]),
        "row": (lambda: t.select(0, 1), np.s_[1, :]),
        "column": (lambda: t.select(1, 4), np.s_[:, 4]),
        "0d": (lambda: t.select(0, 1).select(0, 2), np.s_[1, 2]),
        "empty": (lambda: t.narrow(0, 0, 0), np.s_[0:0, :]),
    }[layout]
    v = view()
    expected = arr.copy()
    assert v.fill_(1) is v
    expected[sel] = 1
    np.testing.assert_array_equal(arr, expected)
    assert v.zero_() is v
    expected[sel] = 0
    np.testing.assert_array_equal(arr, expected)


def test_fill_values_and_errors(device):
    t = torch.ones(3, device=device)
    t.fill_(torch.tensor(2))
    assert t.tolist() == [2.0] * 3
    assert torch.ones(2, dtype=torch.int32).fill_(1.5).tolist() == [1, 1]
    assert torch.ones(2, dtype=torch.bool).fill_(5).tolist() == [True, True]
    assert torch.ones(2, dtype=torch.uint8).fill_(-1).tolist() == [255, 255]
    with pytest.raises(RuntimeError, match=r"^fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.$"):
        torch.ones(3).fill_(torch.tensor([2]))
    with pytest.raises(RuntimeError, match="^value cannot be converted to type uint8_t without overflow$"):
        torch.ones(2, dtype=torch.uint8).fill_(300)
    with pytest.raises(RuntimeError, match="value cannot be converted to type c10::Half without overflow"):
        torch.ones(2, dtype=torch.float16).fill_(1e10)
    with pytest.raises(TypeError, match="must be Number, not str"):
        torch.ones(2).fill_("a")


def test_inplace_bumps_version():
    t = torch.ones(3)
    v = t.untyped_storage()
    before = v.data_ptr()
    t.fill_(2).zero_()
    assert t.untyped_storage().data_ptr() == before


def test_is_tensor_numel():
    assert torch.is_tensor(torch.ones(1)) and not torch.is_tensor(3) and not torch.is_tensor(np.ones(1))
    assert torch.numel(torch.ones(2, 3)) == 6
    with pytest.raises(TypeError, match=r"^numel\(\): argument 'input' \(position 1\) must be Tensor, not int$"):
        torch.numel(3)


def test_large_factories_parallel():
    n = 1 << 20
    assert_close(torch.arange(n, dtype=torch.float64), np.arange(n, dtype=np.float64))
    assert torch.ones(n, dtype=torch.int8).numpy().sum() == n
    assert_close(torch.linspace(0, 1, n, dtype=torch.float64), np.linspace(0, 1, n))
    assert to_numpy(torch.eye(512)).trace() == 512


# --- preserve_format: clone, to, type, float, *_like ----------------------------------------------------
def _preserve_cases(device):
    """(name, source, strides of a preserve_format copy), derived by hand: a non-overlapping dense
    source keeps its strides exactly (size-1 and empty dims included); any other gets dense
    strides in its dims' stride order, broadcast (stride 0) dims keeping row-major order."""
    a = torch.arange(24.0, device=device)
    return [
        ("transposed", a[:12].reshape(3, 4).T, (1, 4)),
        ("permuted", a.reshape(2, 3, 4).permute(2, 0, 1), (1, 12, 4)),
        ("unsqueezed", a[:12].reshape(3, 4).T.unsqueeze(1), (1, 12, 4)),
        ("sliced T", a.reshape(4, 6).T[::2], (1, 3)),  # (3, 4) strides (2, 6): dense order kept
        ("sliced", a.reshape(4, 6)[:, ::2], (3, 1)),
        ("expanded T", a[:3].reshape(3, 1).expand(3, 4).T, (3, 1)),
        ("empty T", torch.zeros(0, 3, device=device).T, (1, 3)),
        ("0d", a[0], ()),
    ]


def test_preserve_format_copies(device):
    for name, src, strides in _preserve_cases(device):
        want = to_numpy(src)
        copies = [("clone", src.clone()), ("clone preserve", torch.clone(src, memory_format=torch.preserve_format)),
                  ("to", src.to(torch.float64)), ("to copy", src.to(device, copy=True)), ("double", src.double()),
                  ("int", src.int()), ("type", src.type(torch.float16)),
                  ("empty_like", torch.empty_like(src)), ("zeros_like", torch.zeros_like(src)),
                  ("full_like", torch.full_like(src, 2)), ("rand_like", torch.rand_like(src)),
                  ("randn_like", torch.randn_like(src, dtype=torch.float64))]
        if src.device.type != "cpu":
            copies.append(("cpu", src.cpu()))  # a move keeps the layout too
        for how, t in copies:
            assert t.shape == src.shape and t.stride() == strides, (name, how)
            if how in ("clone", "clone preserve", "to", "to copy", "double", "int", "type", "cpu"):
                np.testing.assert_array_equal(to_numpy(t).astype(np.float64), want.astype(np.float64), err_msg=how)
            if how == "zeros_like":
                np.testing.assert_array_equal(to_numpy(t), np.zeros(want.shape, np.float32))
            if how == "full_like":
                np.testing.assert_array_equal(to_numpy(t), np.full(want.shape, 2, np.float32))
        c = src.clone()
        c.add_(1)  # a copy owns its memory
        np.testing.assert_array_equal(to_numpy(src), want)


def test_contiguous_format_copies(device):
    src = torch.arange(12.0, device=device).reshape(3, 4).T
    fmt = torch.contiguous_format
    for t in [src.clone(memory_format=fmt), torch.clone(src, memory_format=fmt), src.to(torch.float64, memory_format=fmt),
              torch.empty_like(src, memory_format=fmt), torch.zeros_like(src, memory_format=fmt),
              torch.randn_like(src, memory_format=fmt), torch.full_like(src, 1, memory_format=fmt), src.contiguous()]:
        assert t.stride() == (3, 1) and t.is_contiguous()
    np.testing.assert_array_equal(to_numpy(src.clone(memory_format=fmt)), np.arange(12.0).reshape(3, 4).T)
    assert not src.clone().is_contiguous()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        src.clone().view(12)
    assert src.clone(memory_format=fmt).view(12).tolist() == np.arange(12.0).reshape(3, 4).T.reshape(12).tolist()


def test_memory_format_objects():
    import pickle

    assert repr(torch.contiguous_format) == "torch.contiguous_format"
    assert repr(torch.preserve_format) == "torch.preserve_format"
    assert type(torch.contiguous_format) is torch.memory_format
    assert pickle.loads(pickle.dumps(torch.contiguous_format)) is torch.contiguous_format
    x = torch.ones(2, 3)
    with pytest.raises(TypeError, match=r"^clone\(\): argument 'memory_format' must be torch.memory_format, not int$"):
        x.clone(memory_format=1)
    with pytest.raises(TypeError, match=r"^empty_like\(\): argument 'memory_format' must be torch.memory_format, "
                                        r"not str$"):
        torch.empty_like(x, memory_format="a")
    with pytest.raises(TypeError, match="memory_format"):
        x.to(torch.float64, memory_format=2)
    assert torch.zeros(0, 3).T.is_contiguous()  # no elements: contiguous whatever the strides
