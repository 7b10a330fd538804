"""torch.jit run eagerly (python/ctorch/jit): scripted/traced objects behave as the originals; PyTorch's
checks, warnings and messages (compared with the reference torch 2.x)."""
import os
import subprocess
import sys
import warnings

import pytest

import ctorch as torch

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())


def test_script_module_is_the_module():
    m = _model()
    s = torch.jit.script(m)
    assert type(s).__name__ == "RecursiveScriptModule" and s.original_name == "Sequential"
    assert isinstance(s, torch.jit.ScriptModule) and isinstance(s, torch.nn.Sequential)
    assert list(s.state_dict()) == list(m.state_dict()) and s[0].weight is m[0].weight
    x = torch.randn(4, 3)
    assert torch.equal(s(x), m(x))
    m.eval()  # the scripted copy keeps its own training flag, as PyTorch's
    assert s.training and not m.training
    s.eval()
    assert not s.training
    assert torch.jit.script(s) is s


def test_script_function_and_trace():
    def g(a):
        return a * 2 + 1

    x = torch.randn(4, 3)
    sf = torch.jit.script(g)
    assert isinstance(sf, torch.jit.ScriptFunction) and sf.name == "g" and torch.equal(sf(x), g(x))
    calls = []

    def h(a):
        calls.append(1)
        return a.sum(0), a
    tf = torch.jit.trace(h, x)
    assert len(calls) == 1 and isinstance(tf, torch.jit.ScriptFunction)  # the example ran once
    assert torch.equal(tf(x)[0], x.sum(0))
    t = torch.jit.trace(_model(), (x,))
    assert type(t).__name__ == "TopLevelTracedModule" and torch.equal(t(x), _model()(x))
    with pytest.warns(UserWarning, match="already a ScriptModule, tracing it is a no-op"):
        assert torch.jit.trace(t, x) is t
    with pytest.raises(RuntimeError, match="^Only tensors, lists, tuples of tensors, or dictionary of tensors can be "
                       "output from traced functions$"):
        torch.jit.trace(lambda a: 3, x)
    with pytest.warns(torch.jit.TracerWarning, match="Encountering a list at the output of the tracer"):
        torch.jit.trace(lambda a: [a], x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", torch.jit.TracerWarning)
        torch.jit.trace(lambda a: [a], x, strict=False)


def test_deprecation_warnings():
    with pytest.warns(FutureWarning, match=r"^`torch.jit.script` is deprecated. Please switch to `torch.compile` or "
                      r"`torch.export`.$"):
        torch.jit.script(_model())
    with pytest.warns(FutureWarning, match=r"^`torch.jit.fork` is deprecated. Please use `torch.compile` instead.$"):
        torch.jit.fork(torch.add, torch.ones(1), 1)


def test_freeze_and_optimize_for_inference():
    m = _model()
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule as input"):
        torch.jit.freeze(m)
    s = torch.jit.script(m)
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        torch.jit.freeze(s)
    x = torch.randn(2, 3)
    assert torch.equal(torch.jit.freeze(s.eval())(x), m(x))
    with pytest.raises(RuntimeError, match="optimize_for_inference expects a ScriptModule as input"):
        torch.jit.optimize_for_inference(m)
    s.train()
    opt = torch.jit.optimize_for_inference(s)
    assert not s.training and torch.equal(opt(x), m(x))


def test_fork_wait_and_annotations():
    x = torch.randn(3)
    fut = torch.jit.fork(torch.mul, x, 2)
    assert isinstance(fut, torch.jit.Future) and fut.done()
    assert torch.equal(torch.jit.wait(fut), x * 2) and torch.equal(fut.wait(), x * 2)
    bad = torch.jit.fork(torch.mul, x, "a")
    with pytest.raises(TypeError):
        bad.wait()
    assert torch.jit.fork(lambda: 3).then(lambda f: f.wait() + 1).wait() == 4
    assert not torch.jit.is_scripting() and not torch.jit.is_tracing()
    assert torch.jit.annotate(int, 3) == 3

    def f(a):
        return a
    assert torch.jit.ignore(f) is f and torch.jit.unused(f) is f and torch.jit.export(f) is f
    assert torch.jit.ignore(drop=False)(f) is f

    @torch.jit.interface
    class I:
        pass
    assert isinstance(I, type)
    with pytest.raises(RuntimeError, match="^interface must be applied to a class$"):
        torch.jit.interface(3)
    assert torch.jit.Final[int] is not None


def test_script_module_subclass_and_save_raise(tmp_path):
    class M(torch.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

        @torch.jit.script_method
        def forward(self, x):
            return self.lin(x)

    m = M()
    assert torch.equal(m(torch.ones(1, 2)), m.lin(torch.ones(1, 2)))
    for call in (lambda: m.save(str(tmp_path / "m.pt")), lambda: torch.jit.save(m, str(tmp_path / "m.pt")),
                 lambda: torch.jit.load(str(tmp_path / "m.pt")), lambda: torch.jit.script(torch.add).save("x")):
        with pytest.raises(RuntimeError, match="ctorch has no TorchScript.*ctorch.save"):
            call()
    assert not (tmp_path / "m.pt").exists()


def test_pytorch_jit_0_gives_objects_back():
    code = ("import ctorch as torch\nm = torch.nn.Linear(2, 2)\nf = lambda a: a\n"
            "assert torch.jit.script(m) is m and torch.jit.trace(f, torch.ones(1)) is f\n"
            "assert not isinstance(m, torch.jit.ScriptModule)\nprint('ok')")
    env = dict(os.environ, PYTORCH_JIT="0", PYTHONWARNINGS="ignore")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
