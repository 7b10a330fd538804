"""Autograd: gradients of every differentiable op against float64 finite differences, and the
engine's behaviour (accumulation, hooks, retain_grad, grad modes, errors, deep graphs,
create_graph, custom Functions)."""
import gc

import numpy as np
import pytest

import ctorch as torch
from ctorch.autograd import gradcheck

R = np.random.default_rng(0)


def leaf(*shape, device="cpu", positive=False, low=-1.0, high=1.0):
    a = R.uniform(0.2 if positive else low, 1.5 if positive else high, size=shape)
    return torch.tensor(a, dtype=torch.float64, device=device, requires_grad=True)


# (id, function, input factories) -- inputs are float64 leaves
UNARY = [
    ("neg", lambda x: -x), ("abs", lambda x: x.abs()), ("exp", torch.exp), ("exp2", torch.exp2),
    ("log", torch.log, True), ("log2", torch.log2, True), ("log10", torch.log10, True),
    ("log1p", torch.log1p, True), ("expm1", torch.expm1), ("sqrt", torch.sqrt, True),
    ("rsqrt", torch.rsqrt, True), ("reciprocal", torch.reciprocal, True), ("square", torch.square),
    ("sin", torch.sin), ("cos", torch.cos), ("tan", torch.tan), ("tanh", torch.tanh),
    ("sigmoid", torch.sigmoid), ("relu", torch.relu), ("sinh", torch.sinh), ("cosh", torch.cosh),
    ("asin", lambda x: torch.asin(x * 0.5)), ("acos", lambda x: torch.acos(x * 0.5)), ("atan", torch.atan),
    ("silu", torch.silu), ("gelu", torch.gelu), ("gelu_tanh", lambda x: torch.gelu(x, approximate="tanh")),
    ("pow_scalar", lambda x: x ** 3), ("pow_frac", lambda x: torch.pow(x, 1.5), True),
    ("rpow", lambda x: 2.0 ** x), ("clamp", lambda x: x.clamp(-0.5, 0.5)), ("clamp_min", lambda x: x.clamp(min=0.1)),
    ("clamp_min_fn", lambda x: torch.clamp_min(x, 0.1)), ("frac", lambda x: torch.frac(x * 3)),
    ("mul_scalar", lambda x: x * 2.5), ("rsub", lambda x: 1.0 - x), ("div_scalar", lambda x: x / 3),
    ("rdiv", lambda x: 2.0 / x, True),
    # reductions
    ("sum", lambda x: x.sum()), ("sum_dim", lambda x: x.sum(1)), ("sum_dims_keep", lambda x: x.sum((0, 1), keepdim=True)),
    ("mean", lambda x: x.mean()), ("mean_dim", lambda x: x.mean(-1, keepdim=True)), ("prod", lambda x: x.prod(), True),
    ("prod_dim", lambda x: x.prod(1), True), ("var", lambda x: x.var()), ("var_dim", lambda x: x.var(1, correction=0)),
    ("std", lambda x: x.std()), ("std_dim", lambda x: x.std(0, keepdim=True)),
    ("amax", lambda x: x.amax(1)), ("amin", lambda x: x.amin(0)), ("max", lambda x: x.max()),
    ("max_dim", lambda x: x.max(1).values), ("min_dim", lambda x: x.min(0, keepdim=True)[0]),
    ("logsumexp", lambda x: x.logsumexp(1)), ("norm", lambda x: x.norm()), ("norm_dim", lambda x: x.norm(dim=1)),
    ("norm_p1", lambda x: x.norm(p=1)), ("norm_p3", lambda x: x.norm(p=3, dim=0)),
    ("softmax", lambda x: x.softmax(1)), ("log_softmax", lambda x: x.log_softmax(0)),
    ("cumsum", lambda x: x.cumsum(1)), ("sort", lambda x: x.sort(1).values),
    ("topk", lambda x: x.topk(2, dim=1).values),
    # views and copies
    ("view", lambda x: x.view(4, 3)), ("reshape_t", lambda x: x.t().reshape(-1)), ("flatten", lambda x: x.flatten()),
    ("unflatten", lambda x: x.unflatten(1, (2, 2))), ("squeeze", lambda x: x.unsqueeze(0).squeeze(0)),
    ("transpose", lambda x: x.transpose(0, 1)), ("T", lambda x: x.T), ("mT", lambda x: x.mT),
    ("permute", lambda x: x.unsqueeze(2).permute(2, 0, 1)), ("movedim", lambda x: x.movedim(0, 1)),
    ("expand", lambda x: x.unsqueeze(0).expand(2, 3, 4)), ("narrow", lambda x: x.narrow(1, 1, 2)),
    ("select", lambda x: x.select(0, 1)), ("unbind", lambda x: x.unbind(1)[2]),
    ("split", lambda x: x.split([1, 3], dim=1)[1]), ("chunk", lambda x: x.chunk(2, 1)[0]),
    ("contiguous", lambda x: x.t().contiguous()), ("clone", lambda x: x.clone()),
    # indexing
    ("getitem_basic", lambda x: x[1:, ::2]), ("getitem_int", lambda x: x[0]),
    ("getitem_adv", lambda x: x[[0, 0, 2], [1, 1, 3]]), ("getitem_mask", lambda x: x[x > 0]),
    ("gather", lambda x: x.gather(1, torch.tensor([[0, 0], [1, 3], [2, 2]], device=x.device))),
    ("index_select", lambda x: x.index_select(1, torch.tensor([3, 0, 3], device=x.device))),
    ("masked_fill", lambda x: x.masked_fill(x > 0.5, 0.0)), ("tril", lambda x: x.tril()), ("triu", lambda x: x.triu(1)),
    ("flip", lambda x: x.flip(0)), ("roll", lambda x: x.roll(1, 1)), ("repeat", lambda x: x.repeat(2, 1, 1)),
]

BINARY = [
    ("add", lambda a, b: a + b), ("add_alpha", lambda a, b: torch.add(a, b, alpha=2)), ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b), ("div", lambda a, b: a / (b.abs() + 0.5)), ("pow", lambda a, b: a.abs() ** b),
    ("maximum", torch.maximum), ("minimum", torch.minimum), ("where", lambda a, b: torch.where(a > b, a, b)),
    ("lerp", lambda a, b: torch.lerp(a, b, 0.3)), ("addcmul", lambda a, b: torch.addcmul(a, a, b, value=0.5)),
    ("addcdiv", lambda a, b: torch.addcdiv(a, a, b.abs() + 1, value=2)),
    ("cat", lambda a, b: torch.cat([a, b], 1)), ("stack", lambda a, b: torch.stack([a, b])),
    ("clamp_tensor", lambda a, b: a.clamp(min=b)),
]


def _unary_params():
    for entry in UNARY:
        name, fn = entry[0], entry[1]
        positive = len(entry) > 2 and entry[2]
        yield pytest.param(fn, positive, id=name)


@pytest.mark.parametrize("fn,positive", list(_unary_params()))
def test_unary_gradcheck(fn, positive, device):
    x = leaf(3, 4, device=device, positive=positive)
    assert gradcheck(fn, (x,))


@pytest.mark.parametrize("fn", [pytest.param(e[1], id=e[0]) for e in BINARY])
def test_binary_gradcheck(fn, device):
    a = leaf(3, 4, device=device)
    b = leaf(3, 4, device=device, positive=True)
    assert gradcheck(fn, (a, b))


@pytest.mark.parametrize("fn", [
    pytest.param(lambda a, b: a + b, id="add"), pytest.param(lambda a, b: a * b, id="mul"),
    pytest.param(lambda a, b: a / b, id="div"), pytest.param(lambda a, b: a - b, id="sub"),
])
def test_broadcast_gradients_reduce_to_input_shape(fn, device):
    a = leaf(3, 1, device=device, positive=True)
    b = leaf(1, 4, device=device, positive=True)
    assert gradcheck(fn, (a, b))
    c = leaf(4, device=device, positive=True)
    assert gradcheck(fn, (leaf(2, 3, 4, device=device, positive=True), c))


@pytest.mark.parametrize("fn,shapes", [
    pytest.param(lambda a, b: a @ b, [(3, 4), (4, 2)], id="mm"),
    pytest.param(lambda a, b: a @ b, [(4,), (4,)], id="dot"),
    pytest.param(lambda a, b: a @ b, [(3, 4), (4,)], id="mv"),
    pytest.param(lambda a, b: a @ b, [(4,), (4, 2)], id="vm"),
    pytest.param(lambda a, b: a @ b, [(2, 3, 4), (4, 2)], id="batched_broadcast"),
    pytest.param(lambda a, b: a @ b, [(2, 1, 3, 4), (3, 4, 2)], id="batched_both"),
    pytest.param(lambda a, b: torch.mm(a, b), [(3, 4), (4, 2)], id="torch.mm"),
    pytest.param(lambda a, b: torch.bmm(a, b), [(2, 3, 4), (2, 4, 2)], id="bmm"),
    pytest.param(lambda a, b: torch.outer(a, b), [(3,), (4,)], id="outer"),
    pytest.param(lambda a, b: torch.addmm(a, b, b.t(), beta=0.5, alpha=2), [(3, 3), (3, 4)], id="addmm"),
])
def test_linalg_gradcheck(fn, shapes, device):
    if not hasattr(torch, "matmul"):
        pytest.skip("linalg family not built")
    args = tuple(leaf(*s, device=device) for s in shapes)
    assert gradcheck(fn, args)


def test_accumulation_and_zeroing():
    x = leaf(3)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5, 5, 5])
    x.grad = None
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_grad_is_not_shared_between_leaves():
    a, b = leaf(3), leaf(3)
    (a + b).sum().backward()
    a.grad.add_(1)  # modifying one leaf's grad must not touch the other's
    np.testing.assert_allclose(b.grad.numpy(), [1, 1, 1])


def test_attributes_and_node_names():
    x = leaf(2, 3)
    y = x * 2
    assert x.is_leaf and not y.is_leaf and y.requires_grad
    assert type(y.grad_fn).__name__ == "MulBackward0"
    assert type((x + 1).grad_fn).__name__ == "AddBackward0"
    assert y.grad_fn.next_functions[0][0].variable is x
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"
    assert "grad_fn=<MulBackward0>" in repr(y)
    assert repr(torch.ones(2, requires_grad=True)) == "tensor([1., 1.], requires_grad=True)"
    assert x.detach().grad_fn is None and not x.detach().requires_grad


def test_requires_grad_rules():
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        torch.ones(3, dtype=torch.int64).requires_grad_()
    y = leaf(2) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False
    x = torch.zeros(2)
    assert x.requires_grad_() is x and x.requires_grad


def test_error_messages():
    x = leaf(3)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        torch.ones(2).sum().backward()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.add_(1)
    y = x.exp()
    s = y.sum()
    s.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        s.backward()
    a = leaf(3)
    b = a * 2
    c = b * b
    b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


def test_retain_graph_allows_second_backward():
    x = leaf(3)
    s = x.exp().sum()
    s.backward(retain_graph=True)
    s.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x.detach().numpy()))


def test_hooks_and_retain_grad():
    x = leaf(3)
    seen = []
    h = x.register_hook(lambda g: seen.append(g.numpy().copy()))
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 10)  # replaces the gradient flowing on
    y.sum().backward()
    # retain_grad runs after every hook whatever the registration order (PyTorch >= 2.0)
    np.testing.assert_allclose(y.grad.numpy(), [10, 10, 10])
    np.testing.assert_allclose(x.grad.numpy(), [20, 20, 20])
    np.testing.assert_allclose(seen[0], [20, 20, 20])
    h.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert len(seen) == 1


def test_no_grad_enable_grad_set_grad_enabled_inference_mode():
    x = leaf(2)
    with torch.no_grad():
        assert not (x * 2).requires_grad
        with torch.enable_grad():
            assert (x * 2).requires_grad
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert torch.is_grad_enabled()
    with torch.inference_mode():
        assert not (x * 2).requires_grad

    @torch.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad and torch.is_grad_enabled()


def test_autograd_grad_and_double_backward():
    x = leaf(3)
    y = (x ** 3).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * x.detach().numpy() ** 2)
    assert x.grad is None
    (g2,) = torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g2.numpy(), 6 * x.detach().numpy())
    z = leaf(2)
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        torch.autograd.grad((x * 2).sum(), [x, z])
    assert torch.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)[1] is None


def test_grad_runs_only_nodes_leading_to_its_inputs():
    """autograd.grad(out, x) and backward(inputs=[x]) run no node that leads only to other leaves (a
    Function whose backward raises, a tensor hook), as PyTorch's engine; deep graphs need no recursion."""
    class Boom(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.clone()

        @staticmethod
        def backward(ctx, g):
            raise RuntimeError("boom")

    x, w = leaf(4), leaf(4)
    calls = []
    w2 = Boom.apply(w) * 1
    w2.register_hook(calls.append)
    (gx,) = torch.autograd.grad((x * w2).sum(), x)
    np.testing.assert_allclose(gx.numpy(), w.detach().numpy())
    (x * w2).sum().backward(inputs=[x])
    np.testing.assert_allclose(x.grad.numpy(), w.detach().numpy())
    assert calls == [] and w.grad is None
    with pytest.raises(RuntimeError, match="boom"):
        (x * w2).sum().backward()
    y = x
    for _ in range(5_000):
        y = Boom.apply(w) + y
    assert torch.autograd.grad(y.sum(), x)[0].tolist() == [1.0] * 4


def test_deep_graph_has_no_recursion_limit():
    x = torch.zeros(1, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1
    y.sum().backward()
    assert x.grad.item() == 1.0
    del y
    gc.collect()


def test_saved_tensors_are_freed_after_backward():
    x = leaf(1000)
    before = torch._C._live_storages()
    s = (x.exp() * x.sin()).sum()
    s.backward()
    # the graph's saved intermediates are released once backward ran
    assert torch._C._live_storages() - before <= 2


def test_custom_function():
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    x = leaf(4)
    y = Cube.apply(x)
    assert type(y.grad_fn).__name__ == "CubeBackward"
    (y * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy() ** 2)
    assert gradcheck(lambda t: Cube.apply(t), (leaf(3),))


def test_setitem_records_in_place():
    x = leaf(4)
    y = x * 1
    v = leaf(2)
    y[1:3] = v * 3
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 0, 0, 1])
    np.testing.assert_allclose(v.grad.numpy(), [3, 3])


def test_dtype_conversion_gradient_has_input_dtype():
    x = leaf(3)
    y = x.float()
    assert type(y.grad_fn).__name__ == "ToCopyBackward0"
    (y * 2).sum().backward()
    assert x.grad.dtype == torch.float64
    np.testing.assert_allclose(x.grad.numpy(), [2, 2, 2])


# --- custom Function: the "Extending torch.autograd" tutorial's forms -----------------------------------------
def test_function_setup_context_form_binds_defaults():
    class Linear(torch.autograd.Function):
        @staticmethod
        def forward(x, w, bias=None):
            out = x.mm(w.t())
            return out if bias is None else out + bias

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, w, bias = inputs  # the default is bound, as PyTorch's apply does
            ctx.save_for_backward(x, w)
            ctx.has_bias = bias is not None

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g.mm(w), g.t().mm(x), (g.sum(0) if ctx.has_bias else None)

    x = torch.tensor([[1.0, 2.0]], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([[3.0, 4.0], [5.0, 6.0]], dtype=torch.float64, requires_grad=True)
    Linear.apply(x, w).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[8.0, 10.0]])
    np.testing.assert_allclose(w.grad.numpy(), [[1.0, 2.0], [1.0, 2.0]])
    assert torch.autograd.gradcheck(Linear.apply, (x, w, torch.ones(2, dtype=torch.float64, requires_grad=True)))


def test_function_once_differentiable():
    from ctorch.autograd.function import once_differentiable

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            r = i.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (r,) = ctx.saved_tensors
            return g * r

    x = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), np.exp([0.0, 1.0]))
    assert not g.requires_grad  # run without recording; the grad output needed no graph
    v = torch.ones(2, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(Exp.apply(x), x, v, create_graph=True)
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="differentiate twice a function that was marked with @once_differentiable"):
        g.sum().backward()


def test_function_mark_dirty():
    class AddOne(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.numpy()[...] += 1  # numpy() is allowed here: forward runs without grad mode
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a.clone()
    v = b._version
    r = AddOne.apply(b)
    assert r is b and b._version == v + 1 and type(b.grad_fn).__name__ == "AddOneBackward"
    (b * 2).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0])
    np.testing.assert_allclose(b.detach().numpy(), [2.0, 3.0])
    c = a.clone()
    d = c * c  # saves c, which AddOne then modifies
    AddOne.apply(c)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        d.sum().backward()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in an in-place operation"):
        AddOne.apply(torch.ones(2, requires_grad=True))


def test_gradcheck_error_is_a_runtime_error():
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    with pytest.raises(torch.autograd.GradcheckError, match="Jacobian mismatch") as e:
        torch.autograd.gradcheck(Bad.apply, (x,))
    assert isinstance(e.value, RuntimeError)


# --- custom Function: PyTorch's checks of save_for_backward and of what backward returns ------------------
def _function(backward, forward=lambda ctx, x, *rest: x * 2):
    return type("F", (torch.autograd.Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def test_function_backward_result_checks():
    x = torch.arange(1., 4.).requires_grad_()
    cases = [(lambda ctx, g: (g * 2, g), r"^function FBackward returned an incorrect number of gradients "
                                         r"\(expected 1, got 2\)$"),
             (lambda ctx, g: 3, r"^expected Variable or None \(got int\)$"),
             (lambda ctx, g: g[:2], r"^Function FBackward returned an invalid gradient at index 0 - got \[2\] but "
                                    r"expected shape compatible with \[3\]$")]
    for backward, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            _function(backward).apply(x).sum().backward()
    with pytest.raises(RuntimeError, match=r"^function FBackward returned a gradient different than None at position "
                                           r"2, but the corresponding forward input was not a Variable$"):
        _function(lambda ctx, g: (g, g)).apply(x, 2).sum().backward()
    # extra Nones are dropped; a gradient the input broadcasts to is summed back; the dtype is the input's
    _function(lambda ctx, g: (g.double().expand(2, 3), None, None)).apply(x).sum().backward()
    assert x.grad.dtype == torch.float32
    np.testing.assert_allclose(x.grad.numpy(), [2, 2, 2])


def test_function_save_for_backward_checks_and_versions():
    def forward(ctx, x, *rest):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    def backward(ctx, g):
        return g * ctx.saved_tensors[0]

    x = torch.arange(1., 4.).requires_grad_()
    y = _function(backward, forward).apply(x)
    y.mul_(2)
    with pytest.raises(RuntimeError, match=r"\[torch\.FloatTensor \[3\]\], which is output 0 of F, is at version 1; "
                                           r"expected version 0 instead"):
        y.sum().backward()
    with pytest.raises(TypeError, match=r"^save_for_backward can only save variables, but argument 1 is of type int$"):
        _function(None, lambda ctx, x: ctx.save_for_backward(x, 3) or x * 2).apply(x)


def test_function_non_tensor_outputs_vjp_alias_kwargs_and_jvp():
    x = torch.arange(1., 4.).requires_grad_()
    F = _function(lambda ctx, g, a, b: g * 2, lambda ctx, x: (x * 2, 5, None))
    y, five, none = F.apply(x)  # materialize_grads skips the non-tensor outputs
    y.sum().backward()
    assert (five, none) == (5, None)
    np.testing.assert_allclose(x.grad.numpy(), [2, 2, 2])
    V = type("V", (torch.autograd.Function,), {"forward": staticmethod(lambda ctx, x: x * 2),
                                               "vjp": staticmethod(lambda ctx, g: g * 7)})
    x.grad = None
    V.apply(x=x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [7, 7, 7])
    with pytest.raises(NotImplementedError, match="^You must implement the jvp function for custom"):
        V.jvp(None, x)
