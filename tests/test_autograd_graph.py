"""torch.autograd.graph: saved-tensor hooks (saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks),
the Node API on grad_fn objects (register_hook / register_prehook, Node), register_multi_grad_hook,
get_gradient_edge and increment_version, and the saved values of nodes (grad_fn._saved_<name> /
_raw_saved_<name> with PyTorch's derivatives.yaml names, checked against what the reference PyTorch returns
for the same calls). Gradients are checked against hand-derived values."""
import gc
import sys
import weakref

import numpy as np
import pytest

import ctorch as torch
import ctorch.nn.functional as F
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


# --- saved values by PyTorch's names ---------------------------------------------------------------
FREED = "Trying to backward through the graph a second time"


def leaf(*shape):
    return torch.randn(*shape, requires_grad=True)


def saved_names(fn):
    return sorted(a for a in dir(fn) if a.startswith("_saved_") or a.startswith("_raw_saved_"))


def test_saved_result_is_an_alias_of_the_output():
    x = leaf(5)
    y = x.exp()
    r = y.grad_fn._saved_result
    # PyTorch unpacks a saved output into a new tensor over the same memory, with the node as history
    assert r is not y and r.equal(y) and r.data_ptr() == y.data_ptr()
    assert r.grad_fn is y.grad_fn and r.requires_grad
    assert saved_names(y.grad_fn) == ["_raw_saved_result", "_saved_result"]
    assert y.grad_fn.name() == "ExpBackward0" and y.grad_fn.metadata == {}


def test_saved_inputs_are_the_same_objects():
    x, w = leaf(3, 4), leaf(3, 4)
    fn = (x * w).grad_fn
    assert fn._saved_self is x and fn._saved_other is w
    assert saved_names(fn) == ["_raw_saved_other", "_raw_saved_self", "_saved_other", "_saved_self"]
    a = x * 1
    assert a.sin().grad_fn._saved_self is a
    # a number is saved as PyTorch's wrapped 0-d tensor; self is saved only for other's gradient
    fn = (x * 2).grad_fn
    assert fn._saved_other.dtype == torch.int64 and fn._saved_other.shape == () and fn._saved_other.item() == 2
    assert fn._saved_self is None
    fn = (x / w.detach()).grad_fn
    assert fn._saved_self is None and fn._saved_other is not None


def test_pow_exponent_and_scalar_fields():
    x = leaf(3)
    fn = x.pow(2).grad_fn
    assert fn._saved_self is x and fn._saved_exponent == 2 and type(fn._saved_exponent) is int
    assert (x ** 2.5).grad_fn._saved_exponent == 2.5
    assert x.square().grad_fn._saved_exponent == 2
    assert "_raw_saved_exponent" not in dir(fn)  # not a tensor
    fn = torch.add(x, x, alpha=2).grad_fn
    assert fn._saved_alpha == 2 and (x + x).grad_fn._saved_alpha == 1
    fn = F.gelu(x, approximate="tanh").grad_fn
    assert fn._saved_approximate == "tanh" and F.gelu(x).grad_fn._saved_approximate == "none"
    fn = F.leaky_relu(x, 0.2).grad_fn
    assert fn._saved_negative_slope == 0.2 and fn._saved_self is x
    fn = x.clamp(min=0.1).grad_fn
    assert fn.name() == "ClampBackward1" and fn._saved_min == 0.1 and fn._saved_max is None


def test_matmul_family():
    x, m, b = leaf(3, 4), leaf(4, 5), leaf(3, 5)
    fn = x.mm(m).grad_fn
    assert fn._saved_self is x and fn._saved_mat2 is m
    assert fn._saved_self_sym_sizes == (3, 4) and fn._saved_mat2_sym_sizes == (4, 5)
    fn = torch.addmm(b, x, m, beta=0.5, alpha=2).grad_fn
    assert fn._saved_mat1 is x and fn._saved_mat2 is m and fn._saved_alpha == 2 and fn._saved_beta == 0.5
    assert fn._saved_mat1_sym_sizes == (3, 4) and fn._saved_mat2_sym_sizes == (4, 5)
    assert not hasattr(fn, "_saved_self")
    fn = torch.addmm(b, x, m).grad_fn
    assert fn._saved_alpha == 1 and fn._saved_beta == 1
    # F.linear's fused node reads as PyTorch's AddmmBackward0: mat2 is weight.t()
    w, bias = leaf(5, 4), leaf(5)
    fn = F.linear(x, w, bias).grad_fn
    assert fn.name() == "AddmmBackward0" and fn._saved_mat1 is x
    assert fn._saved_mat2.equal(w.t()) and fn._saved_mat2_sym_sizes == (4, 5) and fn._saved_alpha == 1
    fn = F.linear(x, w).grad_fn
    assert fn.name() == "MmBackward0" and fn._saved_self is x and fn._saved_mat2.shape == (4, 5)
    fn = F.linear(x.detach(), w, bias).grad_fn
    assert fn._saved_mat1 is not None and fn._saved_mat2 is None  # mat2 only for mat1's gradient
    b3, m3 = leaf(2, 3, 4), leaf(2, 4, 5)
    fn = b3.bmm(m3).grad_fn
    assert fn._saved_self is b3 and fn._saved_mat2 is m3
    v = leaf(4)
    assert x.mv(v).grad_fn._saved_vec is v and v.dot(v).grad_fn._saved_tensor is v


def test_reductions_and_views():
    x = leaf(3, 4)
    assert x.sum().grad_fn._saved_self_sym_sizes == (3, 4)
    fn = x.sum(-1, keepdim=True).grad_fn
    assert fn._saved_dim == (-1,) and fn._saved_keepdim is True
    fn = x.mean((0, 1)).grad_fn
    assert fn._saved_dim == (0, 1) and fn._saved_keepdim is False and fn._saved_self_sym_numel == 12
    values, indices = x.max(1)
    fn = values.grad_fn
    assert fn.name() == "MaxBackward0" and fn._saved_dim == 1 and fn._saved_self_sym_sizes == (3, 4)
    assert fn._saved_indices.equal(indices) and fn._saved_indices.dtype == torch.int64
    fn = x.max().grad_fn
    assert fn._saved_self is x and fn._saved_result.shape == ()
    fn = x.logsumexp(1).grad_fn
    assert fn._saved_dim == (1,) and fn._saved_result.shape == (3,)
    assert x.view(12).grad_fn._saved_self_sym_sizes == (3, 4)
    assert x.reshape(2, 6).grad_fn._saved_self_sym_sizes == (3, 4)
    fn = x.transpose(0, 1).grad_fn
    assert (fn._saved_dim0, fn._saved_dim1) == (0, 1)
    assert leaf(2, 3, 4).permute(2, 0, 1).grad_fn._saved_dims == (2, 0, 1)
    assert x.unsqueeze(1).grad_fn._saved_dim == 1
    fn = x.unsqueeze(1).squeeze(1).grad_fn
    assert fn._saved_dim == 1 and fn._saved_self_sym_sizes == (3, 1, 4)
    assert leaf(5).expand(3, 5).grad_fn._saved_self_sym_sizes == (5,)
    fn = x.select(0, 1).grad_fn
    assert (fn._saved_dim, fn._saved_index, fn._saved_self_sym_sizes) == (0, 1, (3, 4))
    y = x.softmax(1)
    fn = y.grad_fn
    assert fn._saved_dim == 1 and fn._saved_result.equal(y)
    assert F.log_softmax(x, -1).grad_fn._saved_dim == -1
    assert torch.cat([x, x], 1).grad_fn._saved_dim == 1


def test_nn_nodes():
    img, k, kb = leaf(2, 3, 6, 6), leaf(4, 3, 3, 3), leaf(4)
    fn = F.conv2d(img, k, kb, padding=1).grad_fn
    assert fn._saved_input is img and fn._saved_weight is k
    assert (fn._saved_stride, fn._saved_padding, fn._saved_dilation) == ((1, 1), (1, 1), (1, 1))
    assert (fn._saved_output_padding, fn._saved_groups, fn._saved_transposed) == ((0, 0), 1, False)
    assert fn._saved_bias_sym_sizes_opt == (4,)
    fn = F.conv2d(img, k, stride=2).grad_fn
    assert fn._saved_stride == (2, 2) and fn._saved_bias_sym_sizes_opt == (0,)
    x, w = leaf(3, 4), leaf(4)
    fn = F.layer_norm(x, (4,), w, w).grad_fn
    assert fn._saved_input is x and fn._saved_weight is w and fn._saved_bias is w
    assert fn._saved_normalized_shape == (4,)
    t = torch.tensor([0, 2, 1])
    emb = leaf(10, 4)
    fn = F.embedding(t, emb).grad_fn
    assert fn._saved_indices is t and fn._saved_weight_sym_argsize_0 == 10 and fn._saved_padding_idx == -1
    assert (fn._saved_scale_grad_by_freq, fn._saved_sparse) == (False, False)
    fn = F.embedding(t, emb, padding_idx=3).grad_fn
    assert fn._saved_padding_idx == 3
    idx = torch.tensor([0, 2])
    fn = x.index_select(1, idx).grad_fn
    assert fn._saved_dim == 1 and fn._saved_index is idx and fn._saved_self_sym_sizes == (3, 4)
    gi = torch.tensor([[0, 1, 2, 3], [1, 1, 1, 1], [3, 2, 1, 0]])
    fn = x.gather(1, gi).grad_fn
    assert fn._saved_index is gi and fn._saved_self is x and fn._saved_sparse_grad is False
    fn = F.nll_loss(x, t).grad_fn
    assert fn._saved_self is x and fn._saved_target is t and fn._saved_weight is None
    assert fn._saved_reduction == 1 and fn._saved_ignore_index == -100
    fn = F.cross_entropy(x, t, reduction="sum").grad_fn
    assert fn._saved_target is t and fn._saved_reduction == 2


def test_saved_tensors_freed_after_backward():
    x = leaf(3)
    y = x.pow(2)
    y.sum().backward(retain_graph=True)
    assert y.grad_fn._saved_self is x  # kept with retain_graph
    y.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        y.grad_fn._saved_self
    assert y.grad_fn._saved_exponent == 2  # numbers stay
    z = x.exp()
    z.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        z.grad_fn._saved_result
    v = x.view(3, 1)
    v.sum().backward()
    assert v.grad_fn._saved_self_sym_sizes == (3,)


def test_saved_tensor_version_check_and_unknown_names():
    x = leaf(3)
    a = x * 1
    fn = a.sin().grad_fn
    a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        fn._saved_self
    fn = x.exp().grad_fn
    with pytest.raises(AttributeError):
        fn._saved_self
    with pytest.raises(AttributeError):
        fn._raw_saved_nothing
    assert not hasattr((-x).grad_fn, "_saved_self")
    assert saved_names((-x).grad_fn) == []


def test_raw_saved_register_hooks():
    x, w = leaf(3), leaf(3)
    y = x * w
    raw = y.grad_fn._raw_saved_self
    assert type(raw).__name__ == "SavedTensor" and isinstance(raw, torch._C._autograd.SavedTensor)
    log = []

    def pack(t):
        log.append("pack")
        return t * 10

    def unpack(p):
        log.append("unpack")
        return p

    raw.register_hooks(pack, unpack)
    assert log == ["pack"]
    assert torch.allclose(y.grad_fn._saved_self, x * 10) and log == ["pack", "unpack"]
    with pytest.raises(RuntimeError, match="hooks have already been set"):
        raw.register_hooks(pack, unpack)
    y.sum().backward()
    assert torch.allclose(w.grad, x.detach() * 10) and torch.allclose(x.grad, w.detach())
    with pytest.raises(RuntimeError, match="after it has been freed"):
        y.grad_fn._raw_saved_other.register_hooks(pack, unpack)
    with pytest.raises(RuntimeError, match="value None is forbidden"):
        (x * 2).grad_fn._raw_saved_self.register_hooks(pack, unpack)
    with pytest.raises(TypeError):
        (x * w).grad_fn._raw_saved_self.register_hooks(1, unpack)


def test_raw_saved_output_hooks_and_default_hooks():
    x = leaf(4)
    y = x.exp()
    seen = []
    y.grad_fn._raw_saved_result.register_hooks(lambda t: ("box", t), lambda p: (seen.append(p[0]), p[1])[1])
    y.sum().backward()
    assert seen == ["box"] and torch.allclose(x.grad, x.detach().exp())
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 2, lambda t: t):
        z = x.sin()
    assert torch.allclose(z.grad_fn._saved_self, x.detach() * 2)
    with pytest.raises(RuntimeError, match="hooks have already been set"):
        z.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)


# --- hook return values, retain_grad order (differential check against PyTorch) -----------------------------
def test_tensor_hook_result_checks():
    x = torch.arange(1., 4.).requires_grad_()
    for hook, exc, msg in [(lambda g: 3, TypeError, r"^expected Variable, but hook returned 'int'$"),
                           (lambda g: g.sum(), RuntimeError, r"^hook '<lambda>' has changed the size of value$"),
                           (lambda g: g.double(), RuntimeError, r"^hook '<lambda>' has changed the type of value "
                                                                r"\(was torch\.FloatTensor got torch\.DoubleTensor\)$")]:
        y = x * 2
        y.register_hook(hook)
        with pytest.raises(exc, match=msg):
            y.sum().backward()
    h = x.register_hook(lambda g: g[:2])  # a leaf's hooks are checked too
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        (x * 2).sum().backward()
    h.remove()


def test_retain_grad_runs_last_and_accumulates():
    x = torch.arange(1., 4.).requires_grad_()
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.retain_grad()
    y.register_hook(lambda g: g + 1)
    (y * 1).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [11, 11, 11])
    np.testing.assert_allclose(x.grad.numpy(), [22, 22, 22])
    z = x * 2
    z.retain_grad()
    (z * z).sum().backward(retain_graph=True)
    (z * z).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [8, 16, 24])  # 2 * (2 * z)
    with pytest.warns(UserWarning, match="that is not a leaf Tensor is being accessed"):
        assert (x * 3).grad is None


def test_leaf_hook_runs_for_autograd_grad():
    x = torch.arange(1., 4.).requires_grad_()
    seen = []
    x.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 2)
    g, = torch.autograd.grad((x * x).sum(), x)
    np.testing.assert_allclose(g.numpy(), [4, 8, 12])
    np.testing.assert_allclose(seen[0], [2, 4, 6])
    assert x.grad is None


def test_node_hook_result_rules():
    x = torch.arange(1., 4.).requires_grad_()
    y = x * 2  # MulBackward0's grad_inputs: (for x, None for the number)
    y.grad_fn.register_hook(lambda gi, go: [gi[0]])
    with pytest.raises(TypeError, match=r"^expected tuple, but hook returned 'list'$"):
        y.sum().backward(retain_graph=True)
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match=r"^can't replace a None gradient with a non-None value$"):
        y.sum().backward()
    y = x * 2
    y.grad_fn.register_prehook(lambda go: go[0])
    with pytest.raises(TypeError, match=r"^expected tuple, but hook returned 'Tensor'$"):
        y.sum().backward()
