"""ctorch.utils.checkpoint: checkpoint / checkpoint_sequential give the gradients of the plain run (dropout
included: the recomputation restores the RNG state), keep no activations from the forward, and raise and
warn as PyTorch. Also the engine's nested runs: a Function's backward calling autograd.grad / backward on
leaves that the outer backward also reaches."""
import gc
import weakref

import numpy as np
import pytest

import ctorch
from ctorch.autograd import Function
from ctorch.utils.checkpoint import checkpoint, checkpoint_sequential

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 3))
W1 = rng.standard_normal((3, 5))
W2 = rng.standard_normal((5, 2))


def leaves(device="cpu"):
    return [ctorch.tensor(a, dtype=ctorch.float64, device=device, requires_grad=True) for a in (X, W1, W2)]


def net(x, w1, w2, p=0.5):
    h = ctorch.nn.functional.dropout(ctorch.tanh(x @ w1), p, training=True)
    return (h @ w2).sin()


def grads_of(run, tensors):
    for t in tensors:
        t.grad = None
    ctorch.manual_seed(0)
    out = run()
    ctorch.randn(7)  # moves the generator between forward and backward: the recomputation must not see it
    out.sum().backward()
    return out.detach().cpu().numpy(), [t.grad.cpu().numpy() for t in tensors]


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_gradients_match_plain_run(device, use_reentrant):
    x, w1, w2 = ts = leaves(device)
    ref_out, ref = grads_of(lambda: net(x, w1, w2), ts)
    out, got = grads_of(lambda: checkpoint(lambda a: net(a, w1, w2), x, use_reentrant=use_reentrant), ts)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12)
    for g, r in zip(got, ref):  # w1, w2 are captured by the closure: their gradients flow all the same
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-14)
    assert (ref[1] == 0).any()  # dropout did drop units


def test_rng_state_not_preserved_changes_masks():
    x, w1, w2 = ts = leaves()
    _, ref = grads_of(lambda: net(x, w1, w2), ts)
    _, got = grads_of(lambda: checkpoint(lambda a: net(a, w1, w2), x, use_reentrant=True, preserve_rng_state=False),
                      ts)
    assert not np.allclose(got[1], ref[1])


class Spy(Function):
    """Doubles its input; each forward's ctx is listed, so a test can see whether a graph keeps it."""
    contexts = []

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        Spy.contexts.append(weakref.ref(ctx))
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_forward_keeps_no_activations(use_reentrant):
    x, w1, _ = leaves()
    calls = []

    def fn(a):
        calls.append(1)
        return Spy.apply(ctorch.tanh(a @ w1)).sum(1)

    Spy.contexts.clear()
    plain = fn(x)
    gc.collect()
    assert any(r() is not None for r in Spy.contexts)  # the plain graph holds the saved activation
    del plain
    Spy.contexts.clear()
    out = checkpoint(fn, x, use_reentrant=use_reentrant)
    gc.collect()
    assert all(r() is None for r in Spy.contexts)  # nothing of the forward survives it
    assert out.requires_grad and len(calls) == 2
    out.sum().backward()
    assert len(calls) == 3  # recomputed once, in the backward
    t = np.tanh(X @ W1)
    np.testing.assert_allclose(x.grad.numpy(), (2 * (1 - t ** 2)) @ W1.T, rtol=1e-12)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_parameter_used_inside_and_outside(use_reentrant):
    # the checkpoint's backward runs a nested backward reaching w's AccumulateGrad, which the outer one
    # also reaches: each run keeps its own bookkeeping
    w = ctorch.tensor([1.0, 2.0, 3.0], dtype=ctorch.float64, requires_grad=True)
    x = ctorch.tensor([0.5, -1.0, 2.0], dtype=ctorch.float64, requires_grad=True)
    before = (w * w).sum()
    out = checkpoint(lambda a: (a * w).tanh(), x, use_reentrant=use_reentrant)
    after = (w * 3).sum()
    (out.sum() + before + after).backward()
    s = 1 - np.tanh(np.array([0.5, -2.0, 6.0])) ** 2
    np.testing.assert_allclose(w.grad.numpy(), s * [0.5, -1.0, 2.0] + 2 * np.array([1.0, 2.0, 3.0]) + 3, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), s * [1.0, 2.0, 3.0], rtol=1e-12)


def test_non_reentrant_grad_kwargs_and_captured_only():
    x, w1, w2 = leaves()
    out = checkpoint(net, x, w1, w2, use_reentrant=False, p=0.0)
    (g,) = ctorch.autograd.grad(out.sum(), [w1])
    h = np.tanh(X @ W1)
    c = np.cos(h @ W2)
    np.testing.assert_allclose(g.numpy(), X.T @ ((c @ W2.T) * (1 - h ** 2)), rtol=1e-12)
    assert w1.grad is None  # autograd.grad accumulates nothing
    # no argument requires grad, a captured parameter does
    const = ctorch.tensor(X, dtype=ctorch.float64)
    out = checkpoint(lambda a: (a @ w1).sum(), const, use_reentrant=False)
    out.backward()
    np.testing.assert_allclose(w1.grad.numpy(), np.repeat(X.sum(0)[:, None], 5, 1), rtol=1e-12)
    with ctorch.no_grad():
        assert not checkpoint(lambda a: a @ w1, const, use_reentrant=False).requires_grad


def test_tuple_outputs_and_non_tensor_args():
    x, w1, _ = leaves()
    for reentrant in (True, False):
        x.grad = None
        a, b = checkpoint(lambda t, k: (t * k, (t @ w1).sum()), x, 3.0, use_reentrant=reentrant)
        (a.sum() + b).backward()
        np.testing.assert_allclose(x.grad.numpy(), 3.0 + np.repeat(W1.sum(1)[None], 4, 0), rtol=1e-12)


def test_warnings_and_errors():
    x = ctorch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="torch.utils.checkpoint: the use_reentrant parameter should be passed "
                                         "explicitly. In a future release, calling checkpoint without "
                                         "use_reentrant will raise an exception. use_reentrant=False is "
                                         "recommended"):
        y = checkpoint(lambda a: a.sin(), x)
    assert y.grad_fn.name() == "CheckpointFunctionBackward"  # the default is the reentrant variant
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: b$"):
        checkpoint(lambda a, b: a * b, x, b=2, use_reentrant=True)
    with pytest.warns(UserWarning, match="^None of the inputs have requires_grad=True. Gradients will be None$"):
        y = checkpoint(lambda a: a * 2, ctorch.ones(2), use_reentrant=True)
    assert not y.requires_grad
    y = checkpoint(lambda a: ctorch.ones(2), x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="^none of output has requires_grad=True, this checkpoint\\(\\) is not "
                                          "necessary$"):
        y.sum().backward()
    seq = [ctorch.nn.Tanh()]
    with pytest.warns(UserWarning, match="torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter "
                                         "should be passed explicitly. In a future release, we will raise an "
                                         "exception if use_reentrant is not passed."):
        checkpoint_sequential(seq, 1, x)
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: foo$"):
        checkpoint_sequential(seq, 1, x, use_reentrant=False, foo=1)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_sequential(device, use_reentrant):
    ctorch.manual_seed(1)
    model = ctorch.nn.Sequential(ctorch.nn.Linear(3, 6), ctorch.nn.Tanh(), ctorch.nn.Dropout(0.3),
                                 ctorch.nn.Linear(6, 6), ctorch.nn.Tanh(), ctorch.nn.Linear(6, 2)).double().to(device)
    x = ctorch.tensor(X, dtype=ctorch.float64, device=device, requires_grad=True)
    params = [x] + list(model.parameters())
    ref_out, ref = grads_of(lambda: model(x), params)
    out, got = grads_of(lambda: checkpoint_sequential(model, 3, x, use_reentrant=use_reentrant), params)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-14)
    # a list of functions works as well
    _, got = grads_of(lambda: checkpoint_sequential(list(model), 2, x, use_reentrant=use_reentrant), params)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-12, atol=1e-14)


def test_nested_grad_inside_function_backward():
    # a Function whose backward takes autograd.grad through a leaf the outer backward also reaches
    w = ctorch.tensor([2.0, -1.0], dtype=ctorch.float64, requires_grad=True)

    class Inner(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            with ctorch.enable_grad():
                xd = x.detach().requires_grad_()
                gw, gx = ctorch.autograd.grad((xd * w * w).sum(), [w, xd])
            return g * gx + gw.sum() * 0

    x = ctorch.tensor([1.0, 3.0], dtype=ctorch.float64, requires_grad=True)
    pre = (w * 5).sum()
    (Inner.apply(x).sum() + pre).backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 1.0])
    np.testing.assert_allclose(w.grad.numpy(), [5.0, 5.0])


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_autocast_region_recomputed(use_reentrant):
    # the backward runs outside the autocast region: the recomputation re-enters the forward's
    x = ctorch.tensor(X, dtype=ctorch.float32, requires_grad=True)
    w = ctorch.tensor(W1, dtype=ctorch.float32, requires_grad=True)
    grads = []
    for wrap in (lambda f, a: f(a), lambda f, a: checkpoint(f, a, use_reentrant=use_reentrant)):
        x.grad = w.grad = None
        with ctorch.autocast("cpu", dtype=ctorch.bfloat16):
            out = wrap(lambda a: ctorch.tanh(a @ w), x)
        assert out.dtype == ctorch.bfloat16
        out.float().sum().backward()
        grads.append((x.grad.numpy().copy(), w.grad.numpy().copy()))
    np.testing.assert_array_equal(grads[1][0], grads[0][0])
    np.testing.assert_array_equal(grads[1][1], grads[0][1])
