"""torch.signal.windows, torch.Stream / torch.Event, get_device_module, while_loop, from_file and the
deprecated aliases (F.leaky_relu_, nn.NLLLoss2d, nn.Container, Tensor.resize / resize_as / volatile / name),
checked against NumPy's windows and the reference torch's behaviour."""
import math
import warnings

import numpy as np
import pytest

import ctorch as torch

W = torch.signal.windows


@pytest.mark.parametrize("name,oracle", [("hann", np.hanning), ("hamming", np.hamming), ("blackman", np.blackman),
                                         ("bartlett", np.bartlett), ("kaiser", lambda m: np.kaiser(m, 12.0))])
def test_windows_match_numpy(name, oracle):
    for M in (1, 2, 7, 10):
        np.testing.assert_allclose(getattr(W, name)(M, dtype=torch.float64).numpy(), oracle(M), atol=1e-12)
        # periodic: the first M points of the symmetric window of M + 1
        np.testing.assert_allclose(getattr(W, name)(M, sym=False, dtype=torch.float64).numpy(),
                                   oracle(M + 1)[:M] if M > 1 else [1.0], atol=1e-12)
    w = getattr(W, name)(5)
    assert w.dtype == torch.float32 and w.shape == (5,)
    assert getattr(W, name)(0).shape == (0,)


def test_windows_formulas():
    n = np.arange(7)
    np.testing.assert_allclose(W.cosine(7, dtype=torch.float64).numpy(), np.sin(np.pi * (n + 0.5) / 7), atol=1e-12)
    np.testing.assert_allclose(W.gaussian(7, std=0.7, dtype=torch.float64).numpy(),
                               np.exp(-((n - 3) ** 2) / (2 * 0.49)), atol=1e-12)
    np.testing.assert_allclose(W.exponential(7, tau=2.5, dtype=torch.float64).numpy(), np.exp(-abs(n - 3) / 2.5),
                               atol=1e-12)
    np.testing.assert_allclose(W.exponential(6, center=1.5, sym=False, dtype=torch.float64).numpy(),
                               np.exp(-abs(np.arange(6) - 1.5)), atol=1e-12)
    nut = [0.3635819, 0.4891775, 0.1365995, 0.0106411]
    expect = sum((-1) ** i * a * np.cos(2 * np.pi * i * n / 6) for i, a in enumerate(nut))
    np.testing.assert_allclose(W.nuttall(7, dtype=torch.float64).numpy(), expect, atol=1e-12)
    np.testing.assert_allclose(W.general_hamming(7, alpha=0.6, dtype=torch.float64).numpy(),
                               0.6 - 0.4 * np.cos(2 * np.pi * n / 6), atol=1e-12)
    w = W.hann(5, requires_grad=True)
    assert w.requires_grad and not w.is_leaf


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: W.hann(-1), ValueError, "general_cosine requires non-negative window length, got M=-1"),
    (lambda: W.hann(3, dtype=torch.int64), ValueError, "general_cosine expects float32 or float64 dtypes, got: "),
    (lambda: W.kaiser(3, beta=-1), ValueError, "beta must be non-negative, got: -1 instead."),
    (lambda: W.gaussian(3, std=0), ValueError, "Standard deviation must be positive, got: 0 instead."),
    (lambda: W.exponential(3, center=1.0), ValueError, "Center must be None for symmetric windows"),
    (lambda: W.general_cosine(3, a=[]), ValueError, "Coefficients cannot be empty"),
    (lambda: W.general_cosine(3, a=1), TypeError, "Coefficients must be a list/tuple"),
    (lambda: W.blackman(3, dtype=torch.float16), ValueError, "blackman expects float32 or float64 dtypes"),
])
def test_window_errors(call, exc, msg):
    with pytest.raises(exc) as info:
        call()
    assert str(info.value).startswith(msg)


def test_cpu_stream_and_event():
    s = torch.Stream("cpu")
    assert repr(s) == "torch.Stream device_type=cpu, device_index=-1, stream_id=0"
    assert (s.device, s.device_type, s.device_index, s.stream_id) == (torch.device("cpu"), 0, -1, 0)
    assert s.query() and s == torch.Stream(device="cpu") and hash(s) == hash(torch.Stream("cpu"))
    s.synchronize()
    with s:
        pass
    e = torch.Event("cpu", enable_timing=True)
    assert repr(e) == "torch.Event device_type=cpu, device_index=-1, event_flag=1, event_id=0"
    assert e.query() and e.device == torch.device("cpu")
    s.wait_event(e)
    with pytest.raises(RuntimeError, match="cpu backend doesn't support events."):
        e.record()
    with pytest.raises(RuntimeError, match="cpu backend doesn't support events."):
        s.wait_stream(torch.Stream("cpu"))
    with pytest.raises(ValueError, match="Both events must be created with argument 'enable_timing=True'."):
        torch.Event("cpu").elapsed_time(e)
    with pytest.raises(TypeError):
        torch.Stream("cpu", 1)


def test_get_device_module():
    assert torch.get_device_module("cpu") is torch.cpu
    assert torch.get_device_module(torch.device("cuda")) is torch.cuda
    assert torch.get_device_module() in (torch.cuda, torch.cpu)
    with pytest.raises(RuntimeError):
        torch.get_device_module("foo")


def test_while_loop():
    i, x = torch.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (torch.tensor(0), torch.ones(2)))
    assert i.item() == 3 and x.tolist() == [8.0, 8.0]
    start = torch.tensor(5)
    (out,) = torch.while_loop(lambda i: i < 3, lambda i: (i + 1,), (start,))
    assert out.item() == 5 and out.data_ptr() != start.data_ptr()  # never ran: a clone
    with pytest.raises(RuntimeError, match="cond_fn must return a boolean scalar tensor or a boolean"):
        torch.while_loop(lambda i: torch.ones(2) > 0, lambda i: (i + 1,), (torch.tensor(0),))
    with pytest.raises(RuntimeError, match="carried_inputs must be a tuple or list"):
        torch.while_loop(lambda i: i < 3, lambda i: (i + 1,), torch.tensor(0))
    with pytest.raises(AssertionError, match="body_fn should return a tuple"):
        torch.while_loop(lambda i: i < 3, lambda i: i + 1, (torch.tensor(0),))


def test_from_file(tmp_path):
    path = str(tmp_path / "data.bin")
    np.arange(4, dtype=np.float32).tofile(path)
    t = torch.from_file(path, shared=True, size=4)
    assert t.tolist() == [0, 1, 2, 3] and t.dtype == torch.float32 and t.is_shared()
    t[0] = 9
    assert np.fromfile(path, dtype=np.float32).tolist() == [9, 1, 2, 3]  # shared: written through
    u = torch.from_file(path, size=2, dtype=torch.float64)
    assert u.tolist() == np.fromfile(path, dtype=np.float64).tolist()
    u[0] = 1
    assert np.fromfile(path, dtype=np.float32)[0] == 9  # private mapping
    assert torch.from_file(path).shape == (0,)
    with pytest.raises(RuntimeError, match=r"size <16> is smaller than the required mapping size <20>"):
        torch.from_file(path, size=5)
    assert torch.from_file(path, shared=True, size=5).tolist() == [9, 1, 2, 3, 0]  # grown with zeros
    with pytest.raises(RuntimeError, match="unable to open file <.*> in read-only mode"):
        torch.from_file(str(tmp_path / "missing"), size=1)


def test_deprecated_aliases():
    y = torch.tensor([-1.0, 2.0])
    assert torch.nn.functional.leaky_relu_(y, 0.2) is y and y.tolist() == [pytest.approx(-0.2), 2.0]
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        loss = torch.nn.NLLLoss2d()
    assert isinstance(loss, torch.nn.NLLLoss)
    with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
        c = torch.nn.Container(a=torch.nn.Linear(1, 1))
    assert isinstance(c.a, torch.nn.Linear) and len(list(c.parameters())) == 2
    x = torch.arange(6.0)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        r = x.resize(2, 3)
    assert r.shape == (2, 3) and r.data_ptr() == x.data_ptr()
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        assert x.resize_as(torch.zeros(3, 2)).shape == (3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match=r"requested resize to 4 \(4 elements in total\), but the given tensor "
                                               r"has a size of 6 \(6 elements\)"):
            x.resize(4)
    with pytest.warns(UserWarning, match=r"volatile was removed \(Variable.volatile is always False\)"):
        assert x.volatile is False
    with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
        x.volatile = True
    assert x.name is None
    assert math.isclose(torch.tensor(1.0).item(), 1.0)
