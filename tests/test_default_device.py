"""torch.set_default_device / get_default_device and `with torch.device(...)`: the factories PyTorch
lists create on the default device when device= is not given; *_like, new_*, normal, the legacy
constructors and from_numpy do not. Each test on each device creates through the default only."""
import threading

import numpy as np
import pytest

import ctorch as torch

# the factories that follow the default device, each called without device=
FOLLOWERS = {
    "zeros": lambda: torch.zeros(2, 3), "ones": lambda: torch.ones(2), "empty": lambda: torch.empty(2),
    "full": lambda: torch.full((2,), 1.5), "rand": lambda: torch.rand(3), "randn": lambda: torch.randn(3),
    "randint": lambda: torch.randint(5, (3,)), "randperm": lambda: torch.randperm(4),
    "arange": lambda: torch.arange(3), "linspace": lambda: torch.linspace(0, 1, 3),
    "logspace": lambda: torch.logspace(0, 1, 3), "eye": lambda: torch.eye(2), "tensor": lambda: torch.tensor([1, 2]),
    "as_tensor": lambda: torch.as_tensor([1.0]), "asarray": lambda: torch.asarray([1.0]),
    "scalar_tensor": lambda: torch.scalar_tensor(1), "empty_strided": lambda: torch.empty_strided((2,), (1,)),
    "empty_permuted": lambda: torch.empty_permuted((2, 3), (1, 0)), "tril_indices": lambda: torch.tril_indices(3, 3),
    "hann_window": lambda: torch.hann_window(4), "tensor_of_cpu_tensor": lambda: torch.tensor(torch.zeros(2, device="cpu")),
    "device_none": lambda: torch.zeros(2, device=None),
}


@pytest.fixture
def restore_default():
    yield
    torch.set_default_device(None)


def test_default_is_cpu_and_unset_changes_nothing():
    assert torch.get_default_device() == torch.device("cpu")
    for name, make in FOLLOWERS.items():
        assert make().device.type == "cpu", name


def test_set_default_device_follows(device, restore_default):
    torch.set_default_device(device)
    got = torch.get_default_device()
    assert got.type == device and (got.index == 0 if device == "cuda" else got.index is None)
    for name, make in FOLLOWERS.items():
        assert make().device.type == device, name
    np.testing.assert_array_equal(torch.arange(4).cpu().numpy(), np.arange(4))
    np.testing.assert_array_equal(torch.eye(2).cpu().numpy(), np.eye(2))
    np.testing.assert_array_equal(torch.tensor(torch.tensor([1, 2], device="cpu")).cpu().numpy(), [1, 2])
    lin = torch.nn.Linear(2, 3)
    assert lin.weight.device.type == device and lin.bias.device.type == device
    # not followed: explicit device=, *_like (their input's), normal, the legacy constructors, from_numpy
    cpu = torch.zeros(2, device="cpu")
    assert torch.zeros_like(cpu).device.type == "cpu" and torch.randn_like(cpu).device.type == "cpu"
    assert cpu.new_zeros(2).device.type == "cpu" and torch.ones(1, device="cpu").device.type == "cpu"
    assert torch.normal(0.0, 1.0, (2,)).device.type == "cpu"
    assert torch.Tensor(2).device.type == "cpu" and torch.FloatTensor([1]).device.type == "cpu"
    assert torch.from_numpy(np.zeros(2)).device.type == "cpu"
    torch.set_default_device(None)
    assert torch.get_default_device() == torch.device("cpu") and torch.zeros(1).device.type == "cpu"


def test_device_context_manager(device, restore_default):
    d = torch.device(device)
    with d as entered:
        assert entered is d
        assert torch.ones(2).device.type == device and torch.get_default_device().type == device
        with torch.device("cpu"):
            assert torch.ones(2).device.type == "cpu"
        assert torch.rand(2).device.type == device
    assert torch.ones(2).device.type == "cpu"
    torch.set_default_device(device)  # a block inside set_default_device's default
    with torch.device("cpu"):
        assert torch.zeros(1).device.type == "cpu" and torch.get_default_device() == torch.device("cpu")
    assert torch.zeros(1).device.type == device
    torch.set_default_device("cpu")  # an explicit CPU default moves tensor arguments of tensor() too
    assert torch.zeros(1).device.type == "cpu"


def test_default_device_errors_and_threads(restore_default):
    with pytest.raises(RuntimeError, match="trying to pop from empty mode stack"):
        torch.device("cpu").__exit__(None, None, None)
    with pytest.raises(RuntimeError, match="^Expected one of cpu, cuda device type at start of device string: foo$"):
        torch.set_default_device("foo")
    with pytest.raises(TypeError):
        torch.set_default_device(1.5)
    assert torch.get_default_device() == torch.device("cpu")
    torch.set_default_device(0)  # an int is a CUDA index
    if not torch.cuda.is_available():
        with pytest.raises((AssertionError, RuntimeError)):
            torch.zeros(1)
    torch.set_default_device("cpu")
    seen = []
    with torch.device("cpu"):  # per thread, as PyTorch's: another thread starts with none set
        t = threading.Thread(target=lambda: seen.append(torch.get_default_device()))
        t.start()
        t.join()
    assert seen == [torch.device("cpu")]
