"""torch.autograd.graph: saved-tensor hooks (saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks),
the Node API on grad_fn objects (register_hook / register_prehook, Node), register_multi_grad_hook,
get_gradient_edge and increment_version. Gradients are checked against hand-derived values."""
import gc
import sys
import weakref

import numpy as np
import pytest

import ctorch as torch
from ctorch.autograd.graph import (GradientEdge, Node, disable_saved_tensors_hooks, get_gradient_edge,
                                   increment_version, register_multi_grad_hook, save_on_cpu, saved_tensors_hooks)

X = [0.5, -1.0, 2.0]
Y = [1.5, 3.0, -0.5]


def _leaf(values, device="cpu"):
    return torch.tensor(values, dtype=torch.float64, device=device, requires_grad=True)


def _np(t):
    return t.detach().cpu().numpy()


def test_pack_once_per_saved_tensor_unpack_at_backward(device):
    x, y = _leaf(X, device), _leaf(Y, device)
    packed, unpacked = [], []

    def pack(t):
        packed.append(t)
        return ("box", t)

    def unpack(p):
        unpacked.append(p)
        return p[1]

    with saved_tensors_hooks(pack, unpack):
        z = x * y
        s = x.sin()
    assert len(packed) == 3 and {id(t) for t in packed[:2]} == {id(x), id(y)} and packed[2] is x  # any order
    assert unpacked == []
    (z.sum() + s.sum()).backward()
    assert len(unpacked) == 3 and all(p[0] == "box" for p in unpacked)
    np.testing.assert_allclose(_np(x.grad), np.array(Y) + np.cos(X), rtol=1e-12)
    np.testing.assert_allclose(_np(y.grad), X, rtol=1e-12)
    # no hooks outside the block
    (x * y).sum().backward()
    assert len(packed) == 3


def test_unpack_result_is_what_the_formula_uses(device):
    x, y = _leaf(X, device), _leaf(Y, device)
    with saved_tensors_hooks(lambda t: t, lambda t: t * 2):
        z = (x * y).sum() + x.sin().sum() + x.exp().sum()
    z.backward()
    xs, ys = np.array(X), np.array(Y)
    # mul reads 2y and 2x, sin reads 2x, exp reads its saved output doubled
    np.testing.assert_allclose(_np(x.grad), 2 * ys + np.cos(2 * xs) + 2 * np.exp(xs), rtol=1e-12)
    np.testing.assert_allclose(_np(y.grad), 2 * xs, rtol=1e-12)


def test_nested_hooks_innermost_applies():
    x = _leaf(X)
    calls = []
    with saved_tensors_hooks(lambda t: calls.append("outer") or t, lambda t: t):
        with saved_tensors_hooks(lambda t: calls.append("inner") or t, lambda t: t * 3):
            a = x.sin()
        b = x.cos()
    assert calls == ["inner", "outer"]
    (a.sum() + b.sum()).backward()
    np.testing.assert_allclose(_np(x.grad), np.cos(3 * np.array(X)) - np.sin(X), rtol=1e-12)


def test_node_keeps_only_what_pack_returned():
    x = _leaf(X)
    a = x * 2
    with saved_tensors_hooks(lambda t: t.tolist(), lambda lst: torch.tensor(lst, dtype=torch.float64)):
        b = a.sin()
    ref = weakref.ref(a)
    del a
    gc.collect()
    assert ref() is None
    b.sum().backward()
    np.testing.assert_allclose(_np(x.grad), 2 * np.cos(2 * np.array(X)), rtol=1e-12)


def test_in_place_on_view_and_custom_function_go_through_hooks():
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t ** 3

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return 3 * t * t * g

    x, y = _leaf(X), _leaf(Y)
    with saved_tensors_hooks(lambda t: t, lambda t: t * 2):
        base = x.clone()
        base[1:].mul_(y[1:])  # CopySlices over MulBackward0: the inner node's saved tensors are packed
        c = Cube.apply(x)
    (base.sum() + c.sum()).backward()
    xs, ys = np.array(X), np.array(Y)
    np.testing.assert_allclose(_np(x.grad), [1.0, 2 * ys[1], 2 * ys[2]] + 3 * (2 * xs) ** 2, rtol=1e-12)
    np.testing.assert_allclose(_np(y.grad), [0.0, 2 * xs[1], 2 * xs[2]], rtol=1e-12)


def test_identity_hooks_keep_double_backward():
    x = _leaf(X)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        y = (x * x * x).sum() + x.exp().sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(_np(gg), 6 * np.array(X) + np.exp(X), rtol=1e-12)
    # unpack -> 2t: the values double but, as in PyTorch, keep the saved tensor's history. For
    # a = x*x, b = a*x: g = 2*(2x)(2x) + 2a = 10x^2; its derivative is 2*(2x + 2x) + 2*da/dx, where
    # da/dx goes through a's node, which reads its own doubled values: 2x + 2x.
    with saved_tensors_hooks(lambda t: t, lambda t: t * 2):
        y = (x * x * x).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(_np(g), 10 * np.array(X) ** 2, rtol=1e-12)
    (gg,) = torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(_np(gg), 12 * np.array(X), rtol=1e-12)


def test_save_on_cpu(device):
    x, w = _leaf(X, device), _leaf(Y, device)
    with save_on_cpu():
        u = x * w
        z = (u.sin() * x).sum()
    ref = weakref.ref(u)  # sin's node keeps a CPU copy of u, not u (on the CPU u.cpu() is u)
    del u
    gc.collect()
    assert (ref() is None) == (device != "cpu")
    z.backward()
    xs, ws = np.array(X), np.array(Y)
    u = xs * ws
    assert x.grad.device.type == device
    np.testing.assert_allclose(_np(x.grad), np.cos(u) * ws * xs + np.sin(u), rtol=1e-12)
    np.testing.assert_allclose(_np(w.grad), np.cos(u) * xs * xs, rtol=1e-12)


@pytest.mark.parametrize("pin", [False, True])
def test_save_on_cpu_packs_to_cpu_and_back(device, pin):
    x = _leaf(X, device)
    hooks = save_on_cpu(pin_memory=pin)
    packed = hooks.pack_hook(x)
    assert packed[1].device.type == "cpu" and packed[1].is_pinned() == (pin and torch.cuda.is_available())
    back = hooks.unpack_hook(packed)
    assert back.device.type == device
    np.testing.assert_array_equal(_np(back), X)


def test_hook_errors_propagate():
    x = _leaf(X)

    def bad(t):
        raise ValueError("hook failed")

    with pytest.raises(ValueError, match="hook failed"):
        with saved_tensors_hooks(bad, lambda t: t):
            x.sin()
    with saved_tensors_hooks(lambda t: t, bad):
        y = x.sin()
    with pytest.raises(ValueError, match="hook failed"):
        y.sum().backward()
    with saved_tensors_hooks(lambda t: 5, lambda p: p):
        y = x.sin()
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor but got "
                                        "result of type int"):
        y.sum().backward()
    # the failed blocks popped their hooks
    x.sin().sum().backward()
    np.testing.assert_allclose(_np(x.grad), np.cos(X), rtol=1e-12)


def test_disable_saved_tensors_hooks():
    x = _leaf(X)
    with disable_saved_tensors_hooks("no hooks here"):
        x.sin()  # fine without hooks
        with pytest.raises(RuntimeError, match="^no hooks here$"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        with disable_saved_tensors_hooks("inner message"):
            with pytest.raises(RuntimeError, match="^inner message$"):
                with saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with pytest.raises(RuntimeError, match="^no hooks here$"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="^too late$"):
            with disable_saved_tensors_hooks("too late"):
                pass
        x.sin()
    assert torch._C._saved_tensors_hooks_get_disabled_error_message() is None


def test_saved_tensor_hooks_do_not_leak():
    def pack(t):
        return (t.device, t.cpu())

    def unpack(p):
        return p[1].to(p[0])

    refs = sys.getrefcount(pack), sys.getrefcount(unpack)
    storages = torch._C._live_storages()
    for i in range(50):
        x = _leaf(X)
        with saved_tensors_hooks(pack, unpack):
            y = (x * x).sin().sum() + x.exp().sum()
        if i % 2:
            y.backward()  # frees the packed values
        del x, y  # else the graph dies unrun
    gc.collect()
    assert torch._C._live_storages() == storages
    assert (sys.getrefcount(pack), sys.getrefcount(unpack)) == refs


def test_node_api():
    x = _leaf(X)
    y = (x * x).sum()
    g = y.grad_fn
    assert isinstance(g, Node) and not isinstance(x, Node) and not isinstance(x.grad_fn, Node)
    assert g.name() == "SumBackward0" and isinstance(g.metadata, dict)
    m = g.next_functions[0][0]
    assert m.name() == "MulBackward0" and isinstance(m.next_functions[0][0], Node)
    seen = []
    h1 = g.register_prehook(lambda go: seen.append(("pre", go[0].item())))
    h2 = g.register_hook(lambda gi, go: seen.append(("post", _np(gi[0]).tolist(), go[0].item())))
    hm1 = m.register_prehook(lambda go: (go[0] * 2,))       # doubles MulBackward0's incoming gradient
    hm2 = m.register_hook(lambda gi, go: (gi[0] * 10, None))  # scales edge 0, drops edge 1
    y.backward(retain_graph=True)
    assert seen == [("pre", 1.0), ("post", [1.0, 1.0, 1.0], 1.0)]
    np.testing.assert_allclose(_np(x.grad), 20 * np.array(X), rtol=1e-12)
    for h in (h1, h2, hm1, hm2):
        h.remove()
    x.grad = None
    y.backward()
    assert len(seen) == 2
    np.testing.assert_allclose(_np(x.grad), 2 * np.array(X), rtol=1e-12)
    z = (x * 3).sum()
    z.grad_fn.register_prehook(lambda go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' has returned an incorrect number of values "
                                           r"\(got 2, but expected 1\)"):
        z.backward()


def test_register_multi_grad_hook():
    a, b = _leaf(X), _leaf(Y)
    got = []
    h = register_multi_grad_hook((a, b), lambda grads: got.append(grads))
    (a * b).sum().backward()
    assert len(got) == 1 and isinstance(got[0], list)  # PyTorch passes a list
    np.testing.assert_allclose(_np(got[0][0]), Y)
    np.testing.assert_allclose(_np(got[0][1]), X)
    (a * 2).sum().backward()  # b's gradient is not computed: None
    assert len(got) == 2 and got[1][1] is None
    np.testing.assert_allclose(_np(got[1][0]), [2.0, 2.0, 2.0])
    h.remove()
    (a * b).sum().backward()
    assert len(got) == 2
    first = []
    register_multi_grad_hook((a, b), lambda g: first.append(g), mode="any")
    (a * b).sum().backward()
    assert len(first) == 1 and first[0].shape == (3,)
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        register_multi_grad_hook((a, b), print, mode="some")


def test_gradient_edge_and_increment_version():
    x = _leaf(X)
    y = x * 2
    assert get_gradient_edge(y) == GradientEdge(y.grad_fn, 0)
    edge = get_gradient_edge(x)
    assert edge.node.name() == "torch::autograd::AccumulateGrad" and edge.output_nr == 0
    assert edge.node is y.grad_fn.next_functions[0][0]
    with pytest.raises(RuntimeError, match="does not require gradients"):
        get_gradient_edge(torch.ones(2))
    z = y.sin()
    v = y._version
    increment_version(y)
    assert y._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_hooked_saved_tensor_has_no_version_check():
    # as PyTorch: with hooks the node reads what unpack returns, whatever happened to the original
    x = _leaf(X)
    a = x * 1
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        y = a.sin()
    with torch.no_grad():
        a.add_(1)
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), np.cos(np.array(X) + 1), rtol=1e-12)
    b = x * 1
    z = b.sin()
    with torch.no_grad():
        b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_node_hook_wrong_count_names_a_hook_without_name():
    import functools
    t = torch.ones(2, requires_grad=True)
    y = t.relu()
    y.grad_fn.register_hook(functools.partial(lambda a, gi, go: (gi[0], gi[0]), 1))
    with pytest.raises(RuntimeError, match=r"^hook 'functools.partial\(.*\)' has returned an incorrect number of "
                       r"values \(got 2, but expected 1\)$"):
        y.sum().backward()
