"""Memory formats: torch.channels_last / channels_last_3d / contiguous_format / preserve_format through
contiguous, is_contiguous, to, clone, empty and the *_like factories, and nn.Module.to(memory_format=):
the strides PyTorch gives (hand-derived below), the values unchanged, gradients through the copies."""
import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
from conftest import to_numpy

CL, CL3 = ctorch.channels_last, ctorch.channels_last_3d


def cl_strides(sizes):
    """Dense strides with the channels (dim 1) fastest, then the spatial dims from the last, then N."""
    order = [1] + list(range(len(sizes) - 1, 1, -1)) + [0]
    strides, expected = [0] * len(sizes), 1
    for d in order:
        strides[d] = expected
        expected *= sizes[d]
    return tuple(strides)


def data(device, *sizes):
    return ctorch.tensor(np.arange(np.prod(sizes), dtype=np.float32).reshape(sizes), device=device)


@pytest.mark.parametrize("sizes", [(2, 3, 4, 5), (1, 3, 1, 1), (2, 0, 4, 5), (2, 3, 0, 5)])
def test_empty_and_like_factories(device, sizes):
    want = cl_strides(sizes)
    assert want == ((60, 1, 15, 3) if sizes == (2, 3, 4, 5) else want)
    assert ctorch.empty(sizes, memory_format=CL, device=device).stride() == want
    x = ctorch.empty(sizes, device=device)
    for fn in (ctorch.empty_like, ctorch.zeros_like, ctorch.ones_like, ctorch.rand_like):
        y = fn(x, memory_format=CL)
        assert y.stride() == want and y.is_contiguous(memory_format=CL), fn.__name__
    assert ctorch.zeros_like(x, memory_format=CL).sum().item() == 0
    assert ctorch.empty_like(ctorch.empty(sizes, memory_format=CL, device=device)).stride() == want  # preserve


def test_conversions_keep_values(device):
    x = data(device, 2, 3, 4, 5)
    ref = to_numpy(x)
    for y in (x.contiguous(memory_format=CL), x.to(memory_format=CL), x.clone(memory_format=CL),
              x.to(device, ctorch.float64, memory_format=CL), x.transpose(2, 3).contiguous(memory_format=CL)):
        assert y.stride() == cl_strides(tuple(y.shape)) and y.is_contiguous(memory_format=CL)
        assert not y.is_contiguous() and y.is_contiguous(memory_format=ctorch.contiguous_format) is False
        np.testing.assert_array_equal(to_numpy(y), ref if y.shape == x.shape else ref.transpose(0, 1, 3, 2))
    y = x.to(memory_format=CL)
    assert y.to(memory_format=CL) is y and y.contiguous(memory_format=CL) is y
    back = y.contiguous()
    assert back.is_contiguous() and back.stride() == (60, 20, 5, 1)
    np.testing.assert_array_equal(to_numpy(back), ref)
    assert y.to(memory_format=ctorch.contiguous_format).stride() == (60, 20, 5, 1)
    assert x.to(memory_format=ctorch.contiguous_format) is x
    assert y.clone().stride() == y.stride()  # preserve_format
    # elementwise results keep the layout of their input, as PyTorch's
    assert (y + 1).stride() == y.stride() and y.relu().stride() == y.stride()
    z = data(device, 2, 3, 4, 5, 6)
    z3 = z.to(memory_format=CL3)
    assert z3.stride() == (360, 1, 90, 18, 3) and z3.is_contiguous(memory_format=CL3)
    np.testing.assert_array_equal(to_numpy(z3), to_numpy(z))


def test_is_contiguous_rules(device):
    assert data(device, 1, 3, 1, 1).is_contiguous(memory_format=CL)  # size-1 dims do not count
    assert data(device, 2, 1, 4, 5).is_contiguous(memory_format=CL)
    assert not data(device, 2, 3, 4, 5).is_contiguous(memory_format=CL)
    assert not data(device, 2, 3, 4).is_contiguous(memory_format=CL)  # another rank: False, no error
    assert not data(device, 2, 3, 4, 5).is_contiguous(memory_format=CL3)
    assert data(device, 2, 3, 4, 5).is_contiguous(memory_format=ctorch.contiguous_format)
    assert not data(device, 2, 3, 4, 5).transpose(0, 1).is_contiguous(memory_format=ctorch.contiguous_format)


def test_errors(device):
    x3 = data(device, 2, 3, 4)
    for call in (lambda: x3.contiguous(memory_format=CL), lambda: x3.to(memory_format=CL),
                 lambda: ctorch.empty(2, 3, memory_format=CL), lambda: data(device, 2, 3, 4, 5).clone(memory_format=CL3)):
        with pytest.raises(RuntimeError, match="required rank [45] tensor to use channels_last"):
            call()
    with pytest.raises(TypeError, match="argument 'memory_format' must be torch.memory_format, not str"):
        x3.contiguous(memory_format="channels_last")
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported by the contiguous operator"):
        x3.contiguous(memory_format=ctorch.preserve_format)
    assert repr(CL) == "torch.channels_last" and repr(CL3) == "torch.channels_last_3d"


def test_gradients_through_layout_copies(device):
    x = data(device, 2, 3, 2, 2).double().requires_grad_()
    y = x.contiguous(memory_format=CL)
    assert type(y.grad_fn).__name__ == "CloneBackward0"
    (y * y).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), 2 * to_numpy(x))
    assert ctorch.autograd.gradcheck(lambda a: a.to(memory_format=CL) * 3, (x.detach().requires_grad_(),))


def test_module_to_channels_last(device):
    ctorch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 2)).to(device)
    x = ctorch.randn(2, 3, 6, 6, device=device)
    before = to_numpy(model(x))
    assert model.to(memory_format=CL) is model
    w = model[0].weight
    assert w.stride() == cl_strides(tuple(w.shape)) and model[0].bias.stride() == (1,)
    assert model[4].weight.is_contiguous()  # 2-d parameters keep their layout
    np.testing.assert_allclose(to_numpy(model(x.to(memory_format=CL))), before, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="required rank 5"):
        nn.Conv2d(3, 4, 3).to(memory_format=CL3)
