"""ctorch.testing: assert_close (PyTorch's default tolerances, its messages, nested inputs, msg) and
make_tensor (default ranges per dtype, layouts, errors). Expected messages are PyTorch's text."""
import dataclasses
import re

import numpy as np
import pytest

import ctorch
from ctorch.testing import assert_close, make_tensor

T = ctorch.tensor


def raises(exc, text, fn, *args, **kwargs):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert str(info.value) == text
    return info


# --- assert_close: passing and failing values ---------------------------------------------------------

@pytest.mark.parametrize("dtype, rtol, atol", [("float16", 1e-3, 1e-5), ("bfloat16", 1.6e-2, 1e-5),
                                               ("float32", 1.3e-6, 1e-5), ("float64", 1e-7, 1e-7)])
def test_default_tolerances_per_dtype(dtype, rtol, atol):
    # values of the dtype itself: just inside and well outside atol + rtol * |expected|
    dt = getattr(ctorch, dtype)
    expected = T([0.0, 1.0, 100.0], dtype=dt)
    e = expected.double().numpy()
    tol = atol + rtol * np.abs(e)
    assert_close(expected + T(0.4 * tol, dtype=ctorch.float64).to(dt) * (dtype in ("float32", "float64")),
                 expected)
    far = (expected.double() + T(4 * tol + 1e-2 * np.abs(e) * (dtype in ("float16", "bfloat16")))).to(dt)
    with pytest.raises(AssertionError, match=f"(?s)not close!.*up to {atol} allowed.*up to {rtol} allowed"):
        assert_close(far, expected)
    assert_close(far, expected, rtol=0.1, atol=1.0)  # explicit tolerances replace the defaults
    # the looser dtype's tolerances apply when dtypes differ
    assert_close(T([1.0], dtype=ctorch.float64), T([1.0 + 1e-6], dtype=ctorch.float32), check_dtype=False)


def test_message_layout_float():
    raises(AssertionError,
           "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
           "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
           "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)",
           assert_close, T([1., 2., 3.]), T([1., 2.5, 3.]))
    raises(AssertionError,
           "Tensor-likes are not close!\n\nMismatched elements: 1 / 4 (25.0%)\n"
           "Greatest absolute difference: 0.5 at index (1, 0) (up to 1e-05 allowed)\n"
           "Greatest relative difference: 0.1428571492433548 at index (1, 0) (up to 1.3e-06 allowed)",
           assert_close, T([[1., 2.], [3., 4.]]), T([[1., 2.], [3.5, 4.]]))
    raises(AssertionError,
           "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
           "Greatest absolute difference: 0.09375 at index (1,) (up to 1e-05 allowed)\n"
           "Greatest relative difference: 0.044677734375 at index (1,) (up to 0.016 allowed)",
           assert_close, T([1., 2.], dtype=ctorch.bfloat16), T([1., 2.1], dtype=ctorch.bfloat16))


def test_message_layout_exact_dtypes():
    raises(AssertionError,
           "Tensor-likes are not equal!\n\nMismatched elements: 2 / 3 (66.7%)\n"
           "Greatest absolute difference: 4 at index (1,)\nGreatest relative difference: 2.0 at index (1,)",
           assert_close, T([1, 2, 3], dtype=ctorch.int8), T([1, -2, 4], dtype=ctorch.int8))
    raises(AssertionError,
           "Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
           "Greatest absolute difference: 190 at index (1,)\nGreatest relative difference: 19.0 at index (1,)",
           assert_close, T([1, 200], dtype=ctorch.uint8), T([1, 10], dtype=ctorch.uint8))
    raises(AssertionError,
           "Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
           "Greatest absolute difference: 1 at index (1,)\nGreatest relative difference: 1.0 at index (1,)",
           assert_close, T([True, False]), T([True, True]))
    # rtol=atol=0 on floats: "equal" and no tolerances shown
    raises(AssertionError,
           "Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
           "Greatest absolute difference: 0.09999990463256836 at index (1,)\n"
           "Greatest relative difference: 0.04761900380253792 at index (1,)",
           assert_close, T([1., 2.]), T([1., 2.1]), rtol=0, atol=0)


def test_zero_dim_nan_inf_and_empty():
    raises(AssertionError, "Scalars are not close!\n\nExpected 2.0 but got 1.0.\n"
           "Absolute difference: 1.0 (up to 1e-05 allowed)\nRelative difference: 0.5 (up to 1.3e-06 allowed)",
           assert_close, T(1.), T(2.))
    nan = float("nan")
    raises(AssertionError, "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
           "Greatest absolute difference: nan at index (1,) (up to 1e-05 allowed)\n"
           "Greatest relative difference: nan at index (1,) (up to 1.3e-06 allowed)",
           assert_close, T([1., nan]), T([1., nan]))
    assert_close(T([1., nan]), T([1., nan]), equal_nan=True)
    assert_close(T([1., float("inf")]), T([1., float("inf")]))
    with pytest.raises(AssertionError, match="Greatest absolute difference: inf at index"):
        assert_close(T([1., float("inf")]), T([1., -float("inf")]))
    assert_close(T([]), T([]))
    assert_close(ctorch.zeros(3, 0), ctorch.zeros(3, 0))


def test_attribute_mismatches():
    raises(AssertionError, "The values for attribute 'shape' do not match: torch.Size([2]) != torch.Size([3]).",
           assert_close, T([1., 2.]), T([1., 2., 3.]))
    raises(AssertionError, "The values for attribute 'dtype' do not match: torch.float32 != torch.float64.",
           assert_close, T([1., 2.]), T([1., 2.], dtype=ctorch.float64))
    assert_close(T([1., 2.]), T([1., 2.], dtype=ctorch.float64), check_dtype=False)
    assert_close(T([1, 2]), T([1., 2.]), check_dtype=False)
    with pytest.raises(AssertionError, match="Greatest absolute difference: 0.5 at index"):
        assert_close(T([1, 2]), T([1., 2.5]), check_dtype=False)
    transposed = T([[1., 2.], [3., 4.]]).t()
    assert_close(transposed, T([[1., 3.], [2., 4.]]))  # strides are not compared by default
    raises(AssertionError, "The values for attribute 'stride()' do not match: (1, 2) != (2, 1).",
           assert_close, transposed, T([[1., 3.], [2., 4.]]), check_stride=True)
    raises(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, but got no atol.",
           assert_close, T([1.]), T([1.]), rtol=1e-3)
    raises(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, but got no rtol.",
           assert_close, T([1.]), T([1.]), atol=1e-3)


def test_python_scalars_and_numpy():
    raises(AssertionError, "Scalars are not close!\n\nExpected 1.1 but got 1.0.\n"
           "Absolute difference: 0.10000000000000009 (up to 1e-07 allowed)\n"
           "Relative difference: 0.09090909090909098 (up to 1e-07 allowed)", assert_close, 1.0, 1.1)
    raises(AssertionError, "Scalars are not equal!\n\nExpected 2 but got 1.\nAbsolute difference: 1\n"
           "Relative difference: 0.5", assert_close, 1, 2)
    assert_close(1.0, 1.0 + 1e-9)
    raises(AssertionError, "The (d)types do not match: <class 'int'> != <class 'float'>.", assert_close, 1, 1.0)
    assert_close(1, 1.0, check_dtype=False)
    raises(AssertionError, "Booleans mismatch: True is not False", assert_close, True, False)
    assert_close(None, None)
    raises(AssertionError, "None mismatch: None is not 1", assert_close, None, 1)
    with pytest.raises(AssertionError, match=r"Expected 1.5 but got 1.0."):
        assert_close(np.float64(1.0), np.float64(1.5))
    raises(AssertionError, "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
           "Greatest absolute difference: 0.5 at index (1,) (up to 1e-07 allowed)\n"
           "Greatest relative difference: 0.2 at index (1,) (up to 1e-07 allowed)",
           assert_close, np.array([1., 2.]), np.array([1., 2.5]))
    assert_close(np.arange(4), np.arange(4))
    raises(TypeError, "No comparison pair was able to handle inputs of type <class 'numpy.ndarray'> and "
           "<class 'ctorch.Tensor'>.", assert_close, np.array([1., 2.]), T([1., 2.]))
    raises(TypeError, "No comparison pair was able to handle inputs of type <class 'str'> and <class 'str'>.",
           assert_close, "a", "b")


def test_sequences_mappings_dataclasses():
    with pytest.raises(AssertionError, match=re.escape("\n\nThe failure occurred for item [1]")):
        assert_close([T([1.]), T([2.])], [T([1.]), T([2.5])])
    raises(AssertionError, "The length of the sequences mismatch: 2 != 3", assert_close, [1, 2], [1, 2, 3])
    raises(AssertionError, "The keys of the mappings do not match:\nMissing keys in the actual mapping: ['b']\n"
           "Additional keys in the actual mapping: ['c']", assert_close, {"a": 1, "c": 2}, {"a": 1, "b": 2})
    with pytest.raises(AssertionError, match=re.escape("The failure occurred for item ['x'][1][1]")):
        assert_close({"x": [T([1.]), (2, T([3.]))]}, {"x": [T([1.]), (2, T([4.]))]})
    assert_close({"x": [T([1.]), (2, T([3.]))]}, {"x": [T([1.]), (2, T([3.]))]})
    raises(TypeError, "No comparison pair was able to handle inputs of type <class 'list'> and "
           "<class 'ctorch.Tensor'>.", assert_close, [1., 2.], T([1., 2.]))
    # a type error anywhere is reported before any value mismatch
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close([T([1.]), "a"], [T([2.]), "b"])

    @dataclasses.dataclass
    class Pair:
        a: object
        b: int

    assert_close(Pair(T([1., 2.]), 3), Pair(T([1., 2.]), 3))
    with pytest.raises(AssertionError, match=re.escape("The failure occurred for item ['a']")):
        assert_close(Pair(T([1., 2.]), 3), Pair(T([1., 5.]), 3))


def test_msg_and_subclasses():
    raises(AssertionError, "custom", assert_close, T([1.]), T([2.]), msg="custom")
    raises(AssertionError, "Header\n\nTensor-likes are not close!\n\nMismatched elements: 1 / 1 (100.0%)\n"
           "Greatest absolute difference: 1.0 at index (0,) (up to 1e-05 allowed)\n"
           "Greatest relative difference: 0.5 at index (0,) (up to 1.3e-06 allowed)\n\nFooter",
           assert_close, T([1.]), T([2.]), msg=lambda m: "Header\n\n" + m + "\n\nFooter")
    with pytest.raises(AssertionError, match="(?s)^H:Tensor-likes.*item \\[0\\]$"):
        assert_close([T([1.])], [T([2.])], msg=lambda m: "H:" + m)
    param = ctorch.nn.Parameter(T([1.]))
    assert_close(param, T([1.]))
    raises(TypeError, "No comparison pair was able to handle inputs of type <class 'ctorch.nn.parameter.Parameter'> "
           "and <class 'ctorch.Tensor'>.", assert_close, param, T([1.]), allow_subclasses=False)
    # tensors that require grad compare by value, and record nothing
    x = T([1., 2.], requires_grad=True)
    assert_close(x * 1, T([1., 2.]))


def test_assert_close_device(device):
    a = T([1., 2., 3.], device=device)
    assert_close(a, T([1., 2., 3.], device=device))
    with pytest.raises(AssertionError, match=r"Greatest absolute difference: 0.5 at index \(2,\)"):
        assert_close(a, T([1., 2., 3.5], device=device))
    if device != "cpu":
        raises(AssertionError, "The values for attribute 'device' do not match: cuda:0 != cpu.",
               assert_close, a, a.cpu())
        assert_close(a, a.cpu(), check_device=False)


# --- make_tensor ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, low, high", [("bool", 0, 1), ("uint8", 0, 9), ("int8", -9, 9), ("int64", -9, 9),
                                              ("float16", -9, 9), ("float32", -9, 9), ("float64", -9, 9)])
def test_make_tensor_default_ranges(dtype, low, high):
    t = make_tensor(400, dtype=getattr(ctorch, dtype), device="cpu")
    assert t.dtype == getattr(ctorch, dtype) and tuple(t.shape) == (400,)
    v = t.to(ctorch.float64).numpy()
    assert v.min() >= low and v.max() <= high
    assert len(np.unique(v)) > 1


def test_make_tensor_shapes_and_options(device):
    assert tuple(make_tensor(2, 3, dtype=ctorch.float32, device=device).shape) == (2, 3)
    assert tuple(make_tensor((2, 3), dtype=ctorch.float32, device=device).shape) == (2, 3)
    assert tuple(make_tensor([4], dtype=ctorch.int32, device=device).shape) == (4,)
    assert tuple(make_tensor(ctorch.Size([1, 2]), dtype=ctorch.float32, device=device).shape) == (1, 2)
    assert make_tensor(dtype=ctorch.float64, device=device).dim() == 0
    t = make_tensor(3, 4, dtype=ctorch.float64, device=device, noncontiguous=True)
    assert tuple(t.shape) == (3, 4) and t.stride() == (8, 2) and not t.is_contiguous()
    assert make_tensor(1, dtype=ctorch.float64, device=device, noncontiguous=True).is_contiguous()
    t = make_tensor(2, 3, 4, 5, dtype=ctorch.float32, device=device, memory_format=ctorch.channels_last)
    assert t.stride() == (60, 1, 15, 3)
    t = make_tensor(3, dtype=ctorch.float32, device=device, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    assert str(t.device).startswith(device)
    t = make_tensor(200, dtype=ctorch.int8, device=device, low=-1, high=1, exclude_zero=True)
    assert set(np.unique(t.cpu().numpy())) <= {-1, 1}
    t = make_tensor(200, dtype=ctorch.float32, device=device, low=-1e-30, high=1e-30, exclude_zero=True)
    assert (t.cpu().numpy() != 0).all()


def test_make_tensor_bounds():
    t = make_tensor(500, dtype=ctorch.int8, device="cpu", low=-300, high=300)  # clamped to int8
    assert t.min().item() >= -128 and t.max().item() <= 127
    t = make_tensor(500, dtype=ctorch.int32, device="cpu", low=-2.5, high=2.5)  # ceil of both bounds
    assert t.min().item() >= -2 and t.max().item() <= 2
    t = make_tensor(500, dtype=ctorch.float64, device="cpu", low=float("-inf"))
    assert np.isfinite(t.numpy()).all() and t.max().item() < 9
    with pytest.warns(FutureWarning, match="Passing `low==high`"):
        t = make_tensor(2, dtype=ctorch.float32, device="cpu", low=1, high=1)
    assert t.tolist() == [1.0, 1.0]


def test_make_tensor_errors():
    raises(ValueError, "`requires_grad=True` is not supported for boolean and integral dtypes, but got "
           "dtype=torch.int64", make_tensor, 2, dtype=ctorch.int64, device="cpu", requires_grad=True)
    raises(ValueError, "`low` must be less than `high`, but got 3 >= 1",
           make_tensor, 2, dtype=ctorch.float32, device="cpu", low=3, high=1)
    raises(ValueError, "`low` and `high` cannot be NaN, but got low=nan and high=9",
           make_tensor, 2, dtype=ctorch.float32, device="cpu", low=float("nan"))
    raises(ValueError, "The value interval specified by `low` and `high` is [-20, -10), but torch.uint8 only "
           "supports [0, 256)", make_tensor, 2, dtype=ctorch.uint8, device="cpu", low=-20, high=-10)
    raises(ValueError, "The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
           "noncontiguous=True and memory_format=torch.contiguous_format", make_tensor, 2, 2, dtype=ctorch.float32,
           device="cpu", noncontiguous=True, memory_format=ctorch.contiguous_format)
