"""Reproducibility switches and dtype information: use_deterministic_algorithms and its relatives
(flags, PyTorch's errors, the nondeterministic CUDA grid_sampler backward, empty()'s fill),
backends.cudnn's flags, finfo / iinfo (against numpy.finfo / iinfo; bfloat16 by hand) and typename."""
import warnings

import numpy as np
import pytest

import ctorch
import ctorch.nn.functional as F
import ctorch.utils.deterministic as det
from conftest import DEVICES


@pytest.fixture(autouse=True)
def _restore_flags():
    yield
    ctorch.use_deterministic_algorithms(False)
    det.fill_uninitialized_memory = True
    ctorch.backends.cudnn.set_flags(True, False, None, False, True)


# --- use_deterministic_algorithms -------------------------------------------------------------------------
def test_deterministic_flags_round_trip():
    assert ctorch.are_deterministic_algorithms_enabled() is False
    assert ctorch.is_deterministic_algorithms_warn_only_enabled() is False
    assert ctorch.get_deterministic_debug_mode() == 0
    ctorch.use_deterministic_algorithms(True)
    assert ctorch.are_deterministic_algorithms_enabled() is True
    assert ctorch.is_deterministic_algorithms_warn_only_enabled() is False
    assert ctorch.get_deterministic_debug_mode() == 2
    ctorch.use_deterministic_algorithms(mode=True, warn_only=True)
    assert ctorch.is_deterministic_algorithms_warn_only_enabled() is True
    assert ctorch.get_deterministic_debug_mode() == 1
    ctorch.use_deterministic_algorithms(False)
    assert (ctorch.are_deterministic_algorithms_enabled(), ctorch.get_deterministic_debug_mode()) == (False, 0)


@pytest.mark.parametrize("mode, expected", [(0, (False, False)), (1, (True, True)), (2, (True, False)),
                                            ("default", (False, False)), ("warn", (True, True)),
                                            ("error", (True, False)), (True, (True, True))])
def test_deterministic_debug_mode(mode, expected):
    ctorch.set_deterministic_debug_mode(mode)
    assert (ctorch.are_deterministic_algorithms_enabled(),
            ctorch.is_deterministic_algorithms_warn_only_enabled()) == expected
    assert ctorch.get_deterministic_debug_mode() == (0 if not expected[0] else 1 if expected[1] else 2)


def test_deterministic_errors():
    for bad in (1, "x", None, 1.0):
        with pytest.raises(TypeError, match=r"^_set_deterministic_algorithms\(\): argument 'mode' \(position 1\) "
                                            rf"must be bool, not {type(bad).__name__}$"):
            ctorch.use_deterministic_algorithms(bad)
    with pytest.raises(TypeError, match=r"^_set_deterministic_algorithms\(\): argument 'warn_only' must be bool, "
                                        "not int$"):
        ctorch.use_deterministic_algorithms(True, warn_only=1)
    with pytest.raises(TypeError, match=r"missing 1 required positional argument: 'mode'"):
        ctorch.use_deterministic_algorithms()
    with pytest.raises(TypeError, match=r"takes 1 positional argument but 2 were given"):
        ctorch.use_deterministic_algorithms(True, True)
    assert ctorch.are_deterministic_algorithms_enabled() is False  # nothing was set by a failed call
    with pytest.raises(RuntimeError, match=r"^invalid value of debug_mode, expected 0, 1, or 2, but got 3$"):
        ctorch.set_deterministic_debug_mode(3)
    with pytest.raises(RuntimeError, match=r"expected 0, 1, or 2, but got -100000000000000000000$"):
        ctorch.set_deterministic_debug_mode(-10 ** 20)
    with pytest.raises(RuntimeError, match=r"^invalid value of debug_mode, expected one of `default`, `warn`, "
                                           r"`error`, but got Warn$"):
        ctorch.set_deterministic_debug_mode("Warn")
    with pytest.raises(TypeError, match=r"^debug_mode must be str or int, but got <class 'float'>$"):
        ctorch.set_deterministic_debug_mode(1.0)
    with pytest.raises(RuntimeError, match=r"^expected a bool, but got int$"):
        det.fill_uninitialized_memory = 1
    assert det.fill_uninitialized_memory is True


def _grid_backward(device, nd):
    x = ctorch.arange(2 * 3 * 4 ** nd, dtype=ctorch.float32, device=device).reshape(2, 3, *[4] * nd)
    x.requires_grad_(True)
    grid = ctorch.linspace(-1, 1, 2 * 5 * nd, device=device).reshape(2, *[1] * (nd - 1), 5, nd)
    F.grid_sample(x, grid, align_corners=False).sum().backward()
    return x.grad


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("nd", [2, 3])
def test_grid_sampler_backward_determinism(device, nd):
    expected = _grid_backward(device, nd)
    ctorch.use_deterministic_algorithms(True)
    name = f"grid_sampler_{nd}d_backward_cuda"
    if device == "cpu":  # the CPU's backward is serial per sample: allowed, the same values
        np.testing.assert_array_equal(_grid_backward(device, nd).numpy(), expected.numpy())
        return
    with pytest.raises(RuntimeError, match=rf"^{name} does not have a deterministic implementation, but you set "
                                           r"'torch\.use_deterministic_algorithms\(True\)'\. You can turn off "
                                           r"determinism just for this operation"):
        _grid_backward(device, nd)
    ctorch.use_deterministic_algorithms(True, warn_only=True)
    with pytest.warns(UserWarning, match=rf"^{name} does not have a deterministic implementation, but you set "
                                         r"'torch\.use_deterministic_algorithms\(True, warn_only=True\)'\. You can "
                                         r"file an issue"):
        got = _grid_backward(device, nd)
    np.testing.assert_allclose(got.cpu().numpy(), expected.cpu().numpy(), rtol=1e-6)
    ctorch.use_deterministic_algorithms(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _grid_backward(device, nd)


# --- fill_uninitialized_memory ----------------------------------------------------------------------------
_FILL = {"float32": np.nan, "float64": np.nan, "float16": np.nan, "bfloat16": np.nan, "int64": 2 ** 63 - 1,
         "int32": 2 ** 31 - 1, "int16": 2 ** 15 - 1, "int8": 127, "uint8": 255, "bool": True}


@pytest.mark.parametrize("dtype", list(_FILL))
def test_empty_filled_under_determinism(dtype):
    dt = getattr(ctorch, dtype)
    ctorch.use_deterministic_algorithms(True)
    base = ctorch.zeros(2, 3, dtype=dt)
    for t in (ctorch.empty(2, 3, dtype=dt), ctorch.empty_like(base), base.new_empty((4,)),
              ctorch.empty_like(base.T), ctorch.empty(0, dtype=dt), ctorch.empty((), dtype=dt),
              ctorch.empty_strided((2, 3), (1, 2), dtype=dt), ctorch.empty_permuted((2, 3, 4), (2, 0, 1), dtype=dt)):
        assert t.dtype == dt
        a = (t.float() if dtype == "bfloat16" else t).numpy()
        np.testing.assert_array_equal(a, np.full(a.shape, _FILL[dtype], a.dtype))
    assert (base == 0).all()


@pytest.mark.parametrize("device", DEVICES)
def test_empty_filled_on_device(device):
    ctorch.use_deterministic_algorithms(True)
    a = ctorch.empty(5, dtype=ctorch.int32, device=device)
    b = ctorch.empty_like(ctorch.zeros(2, 2, device=device))
    np.testing.assert_array_equal(a.cpu().numpy(), np.full(5, 2 ** 31 - 1, np.int32))
    assert b.device.type == device and b.isnan().all()


def test_empty_fill_switches():
    ctorch.use_deterministic_algorithms(True, warn_only=True)  # warn_only fills too, as in PyTorch
    assert ctorch.empty(3).isnan().all()
    assert (ctorch.zeros(3) == 0).all() and (ctorch.ones(2, dtype=ctorch.int64) == 1).all()
    det.fill_uninitialized_memory = False  # (what empty() then holds is whatever the allocator gives)
    assert det.fill_uninitialized_memory is False and ctorch._C._get_deterministic_fill_uninitialized_memory() is False
    det.fill_uninitialized_memory = True
    assert ctorch.empty(2, dtype=ctorch.int16).eq(2 ** 15 - 1).all()


# --- backends.cudnn ---------------------------------------------------------------------------------------
def test_cudnn_flags():
    c = ctorch.backends.cudnn
    assert (c.enabled, c.benchmark, c.deterministic, c.allow_tf32) == (True, False, False, True)
    assert c.is_available() is False and c.version() is None and c.benchmark_limit is None
    c.benchmark = True
    c.deterministic = True
    assert (c.benchmark, c.deterministic) == (True, True)
    with c.flags(enabled=False, deterministic=False):
        assert (c.enabled, c.benchmark, c.deterministic, c.allow_tf32) == (False, False, False, True)
    assert (c.enabled, c.benchmark, c.deterministic) == (True, True, True)
    for name, setter in (("enabled", "set_enabled_cudnn"), ("deterministic", "set_deterministic_cudnn"),
                         ("benchmark", "set_benchmark_cudnn"), ("allow_tf32", "set_allow_tf32_cublas")):
        with pytest.raises(RuntimeError, match=rf"^{setter} expects a bool, but got int$"):
            setattr(c, name, 1)
    assert ctorch.are_deterministic_algorithms_enabled() is False  # cudnn.deterministic is its own flag


# --- finfo / iinfo ----------------------------------------------------------------------------------------
def _bfloat16_limits():
    """bfloat16: float32's 8 exponent bits with 7 stored significand bits."""
    return {"bits": 16, "eps": 2.0 ** -7, "max": (2 - 2.0 ** -7) * 2.0 ** 127, "tiny": 2.0 ** -126, "resolution": 0.01}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_finfo_values(dtype):
    f = ctorch.finfo(getattr(ctorch, dtype))
    if dtype == "bfloat16":
        ref = _bfloat16_limits()
    else:
        n = np.finfo(dtype)
        ref = {"bits": n.bits, "eps": float(n.eps), "max": float(n.max), "tiny": float(n.tiny),
               "resolution": 10.0 ** -n.precision}  # (n.resolution is of the dtype: float16's 0.001 is inexact)
    assert f.bits == ref["bits"] and isinstance(f.bits, int)
    for name in ("eps", "max", "tiny", "resolution"):
        assert type(getattr(f, name)) is float and getattr(f, name) == ref[name], name
    assert f.min == -ref["max"] and f.smallest_normal == f.tiny
    assert f.dtype == dtype
    assert f == ctorch.finfo(getattr(ctorch, dtype)) and hash(f) == hash(ctorch.finfo(getattr(ctorch, dtype)))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_values(dtype):
    i, n = ctorch.iinfo(getattr(ctorch, dtype)), np.iinfo(dtype)
    assert (i.bits, i.min, i.max, i.dtype) == (n.bits, int(n.min), int(n.max), dtype)
    assert type(i.max) is int and type(i.min) is int


def test_finfo_iinfo_reprs_and_defaults():
    assert repr(ctorch.finfo(ctorch.float16)) == (
        "finfo(resolution=0.001, min=-65504, max=65504, eps=0.000976562, smallest_normal=6.10352e-05, "
        "tiny=6.10352e-05, dtype=float16)")
    assert str(ctorch.finfo(ctorch.bfloat16)) == (
        "finfo(resolution=0.01, min=-3.38953e+38, max=3.38953e+38, eps=0.0078125, smallest_normal=1.17549e-38, "
        "tiny=1.17549e-38, dtype=bfloat16)")
    assert repr(ctorch.finfo(ctorch.float32)) == (
        "finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, smallest_normal=1.17549e-38, "
        "tiny=1.17549e-38, dtype=float32)")
    assert repr(ctorch.finfo(type=ctorch.float64)) == (
        "finfo(resolution=1e-15, min=-1.79769e+308, max=1.79769e+308, eps=2.22045e-16, "
        "smallest_normal=2.22507e-308, tiny=2.22507e-308, dtype=float64)")
    assert repr(ctorch.iinfo(ctorch.int8)) == "iinfo(min=-128, max=127, dtype=int8)"
    assert repr(ctorch.iinfo(ctorch.uint8)) == "iinfo(min=0, max=255, dtype=uint8)"
    assert repr(ctorch.iinfo(ctorch.int32)) == "iinfo(min=-2.14748e+09, max=2.14748e+09, dtype=int32)"
    assert repr(ctorch.iinfo(ctorch.int64)) == "iinfo(min=-9.22337e+18, max=9.22337e+18, dtype=int64)"
    # no argument: the default dtype; the Python types stand for float64 / int64 / bool
    assert ctorch.finfo().dtype == "float32"
    ctorch.set_default_dtype(ctorch.float64)
    try:
        assert ctorch.finfo().dtype == "float64"
    finally:
        ctorch.set_default_dtype(ctorch.float32)
    assert ctorch.finfo(float).dtype == "float64" and ctorch.iinfo(int).dtype == "int64"
    assert ctorch.finfo(ctorch.float32) != ctorch.finfo(ctorch.float64)
    assert ctorch.iinfo(ctorch.int8) != ctorch.iinfo(ctorch.int16) and ctorch.finfo(ctorch.float32) != 1
    with pytest.raises(AttributeError, match="not writable"):
        ctorch.finfo(ctorch.float32).eps = 1.0


def test_finfo_iinfo_errors():
    for bad in (ctorch.int32, ctorch.bool, ctorch.uint8, int, bool):
        with pytest.raises(TypeError, match=r"^torch\.finfo\(\) requires a floating point input type\. Use "
                                            r"torch\.iinfo to handle 'torch\.finfo'$"):
            ctorch.finfo(bad)
    for bad in (ctorch.float32, ctorch.bfloat16, ctorch.float16, float):
        with pytest.raises(TypeError, match=r"^torch\.iinfo\(\) requires an integer input type\. Use torch\.finfo "
                                            r"to handle 'torch\.iinfo'$"):
            ctorch.iinfo(bad)
    with pytest.raises(TypeError, match=r"^torch\.bool is not supported by torch\.iinfo$"):
        ctorch.iinfo(ctorch.bool)
    for cls, name in ((ctorch.finfo, "finfo"), (ctorch.iinfo, "iinfo")):
        for bad, tname in ((1, "int"), ("float32", "str"), (None, "NoneType"), (np.float32, "type")):
            with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'type' \(position 1\) must be torch\.dtype, "
                                                rf"not {tname}$"):
                cls(bad)
    with pytest.raises(TypeError, match=r'^iinfo\(\) missing 1 required positional arguments: "type"$'):
        ctorch.iinfo()


# --- typename ---------------------------------------------------------------------------------------------
def test_typename():
    assert ctorch.typename(ctorch.zeros(2)) == "torch.FloatTensor"
    assert ctorch.typename(ctorch.zeros(2, dtype=ctorch.int64)) == "torch.LongTensor"
    assert ctorch.typename(ctorch.zeros(2, dtype=ctorch.bfloat16)) == "torch.BFloat16Tensor"
    assert ctorch.typename(ctorch.nn.Parameter(ctorch.zeros(1))) == "torch.FloatTensor"
    assert ctorch.typename(1) == "int" and ctorch.typename("a") == "str" and ctorch.typename(None) == "NoneType"
    assert ctorch.typename(ctorch.nn.Linear(1, 1)) == "ctorch.nn.modules.linear.Linear"
    assert ctorch.typename(ctorch.nn.Linear) == "ctorch.nn.modules.linear.Linear"

    class Local:
        pass

    assert ctorch.typename(Local()) == f"{__name__}.test_typename.<locals>.Local"
    assert ctorch.typename(Local) == f"{__name__}.test_typename.<locals>.Local"
