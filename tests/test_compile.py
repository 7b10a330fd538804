"""torch.compile / Module.compile / torch.compiler: PyTorch's arguments and errors; the program runs
eagerly with the same results (ctorch has no graph compiler)."""
import numpy as np
import pytest

import ctorch
from ctorch import nn


def test_compiled_module_and_function_give_the_eager_results(device):
    ctorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)).to(device)
    x = ctorch.randn(5, 4, device=device)
    expected = model(x)
    compiled = ctorch.compile(model, mode="reduce-overhead")
    assert compiled is model  # not wrapped: the state_dict keys stay the module's
    assert list(compiled.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    np.testing.assert_array_equal(compiled(x).detach().cpu().numpy(), expected.detach().cpu().numpy())

    def f(a, b):
        return a * b + 1

    g = ctorch.compile(f, backend="eager", fullgraph=True, dynamic=False)
    assert g(2, 3) == 7 and g is f
    loss = compiled(x).sum()
    loss.backward()
    assert model[0].weight.grad is not None and model[0].weight.grad.device.type == device


def test_decorator_forms():
    @ctorch.compile
    def double(t):
        return t * 2

    @ctorch.compile(mode="max-autotune", options=None)
    def triple(t):
        return t * 3

    t = ctorch.tensor([1.0, 2.0])
    assert double(t).tolist() == [2.0, 4.0] and triple(t).tolist() == [3.0, 6.0]
    assert ctorch.compiler.disable(double) is double and ctorch.compiler.disable()(triple) is triple


def test_module_compile_is_in_place():
    m = nn.Linear(2, 3)
    assert m.compile(mode="default") is None and isinstance(m, nn.Linear)
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
        m.compile(mode="fast")


def test_errors_as_pytorch():
    m = nn.Linear(2, 3)
    with pytest.raises(RuntimeError, match="Either mode or options can be specified, but both can't be specified"):
        ctorch.compile(m, mode="default", options={"a": 1})
    with pytest.raises(RuntimeError, match=r"Unrecognized mode=bogus, should be one of: default, lite, reduce-overhead"):
        ctorch.compile(m, mode="bogus")
    with pytest.raises(AssertionError, match="A callable function is expected, but <class 'int'> is provided."):
        ctorch.compile(3)
    with pytest.raises(RuntimeError, match="Invalid backend: 'nonexistent'"):
        ctorch.compile(m, backend="nonexistent")
    assert ctorch.compile(m, backend=lambda gm, inputs: gm) is m  # a custom backend is accepted


def test_compiler_namespace():
    assert ctorch.compiler.is_compiling() is False and ctorch.compiler.is_dynamo_compiling() is False
    assert "inductor" in ctorch.compiler.list_backends() and "eager" in ctorch.compiler.list_backends()
    assert ctorch.compiler.reset() is None
