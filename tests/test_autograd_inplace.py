"""Autograd through in-place ops and views: every in-place op records (derived from its
out-of-place formula), writes through a view reach the view's base (CopySlices), other views of
the base see the write, and ops without a derivative raise at backward instead of silently
carrying no gradient. Gradients are checked against float64 finite differences or by hand."""
import numpy as np
import pytest

import ctorch as torch
from ctorch.autograd import gradcheck

R = np.random.default_rng(7)


def leaf(*shape, low=-1.0, high=1.0):
    return torch.tensor(R.uniform(low, high, size=shape), dtype=torch.float64, requires_grad=True)


def positive(*shape):
    return leaf(*shape, low=0.3, high=1.5)


# (id, in-place call on a non-leaf copy of x, extra inputs)
INPLACE = [
    ("mul_scalar", lambda x: x.mul_(2.5), []),
    ("mul_tensor", lambda x, y: x.mul_(y), [leaf(3, 4)]),
    ("mul_broadcast", lambda x, y: x.mul_(y), [leaf(4)]),
    ("imul", lambda x, y: x.__imul__(y), [leaf(3, 4)]),
    ("div_tensor", lambda x, y: x.div_(y), [positive(3, 4)]),
    ("itruediv", lambda x, y: x.__itruediv__(y), [positive(4)]),
    ("add_alpha", lambda x, y: x.add_(y, alpha=2.0), [leaf(3, 4)]),
    ("sub_", lambda x, y: x.sub_(y), [leaf(1, 4)]),
    ("pow_scalar", lambda x: x.pow_(3), []),
    ("ipow", lambda x: x.__ipow__(2), []),
    ("pow_tensor", lambda x, y: x.abs().add(0.5).pow_(y), [leaf(3, 4)]),
    ("exp_", lambda x: x.exp_(), []),
    ("log_", lambda x: x.abs().add(0.1).log_(), []),
    ("sin_", lambda x: x.sin_(), []),
    ("cos_", lambda x: x.cos_(), []),
    ("tanh_", lambda x: x.tanh_(), []),
    ("sigmoid_", lambda x: x.sigmoid_(), []),
    ("relu_", lambda x: x.relu_(), []),
    ("sqrt_", lambda x: x.abs().add(0.1).sqrt_(), []),
    ("abs_", lambda x: x.abs_(), []),
    ("neg_", lambda x: x.neg_(), []),
    ("clamp_", lambda x: x.clamp_(-0.5, 0.5), []),
    ("addcmul_", lambda x, a, b: x.addcmul_(a, b, value=0.5), [leaf(3, 4), leaf(4)]),
    ("addcdiv_", lambda x, a, b: x.addcdiv_(a, b), [leaf(3, 4), positive(3, 4)]),
    ("lerp_", lambda x, e: x.lerp_(e, 0.3), [leaf(3, 4)]),
    ("masked_fill_", lambda x: x.masked_fill_(x > 0, 0.0), []),
    ("copy_", lambda x, y: x.copy_(y), [leaf(4)]),
    ("fill_then_mul", lambda x, y: x.fill_(2.0).mul_(y), [leaf(3, 4)]),
    ("zero_then_add", lambda x, y: x.zero_().add_(y), [leaf(3, 4)]),
    ("chain", lambda x: x.mul_(2).sin_().add_(1).mul_(x.square().detach() * 0 + 3), []),
]


@pytest.mark.parametrize("name,fn,extra", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_op_gradcheck(name, fn, extra):
    x = leaf(3, 4)
    assert gradcheck(lambda x, *e: fn(x * 1, *e), (x, *extra))


@pytest.mark.parametrize("name,fn,extra", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_op_through_view_gradcheck(name, fn, extra):
    # the same write applied to rows 1:3 of a (4, 4) non-leaf, then the whole base is used
    x = leaf(5, 4)
    extra = [e if e.dim() < 2 else leaf(2, *tuple(e.shape)[1:]) for e in extra]

    def f(x, *e):
        base = x * 1
        fn(base[1:3], *e)
        return base * torch.arange(20, dtype=torch.float64).reshape(5, 4)
    assert gradcheck(f, (x, *extra))


def test_inplace_mul_records_with_old_values():
    a = leaf(4)
    c = leaf(4)
    b = a * 1
    b.mul_(c)
    assert b.grad_fn.name() == "MulBackward0"
    b.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), c.detach().numpy())
    np.testing.assert_allclose(c.grad.numpy(), a.detach().numpy())  # b's value before mul_


def test_relu_inplace_gradient_by_hand():
    a = torch.tensor([-1.0, 2.0, -3.0, 4.0], requires_grad=True)
    b = a * 1
    b.relu_()
    assert b.grad_fn.name() == "ReluBackward0"
    b.sum().backward()
    assert a.grad.tolist() == [0.0, 1.0, 0.0, 1.0]


def test_write_through_slice_view_reaches_base():
    a = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = a * 2
    v = b[1:3]
    v.mul_(3)
    assert b.grad_fn.name() == "torch::autograd::CopySlices" and type(b.grad_fn).__name__ == "CopySlices"
    assert v.grad_fn.name() == "AsStridedBackward0"
    assert b.tolist() == [2.0, 12.0, 18.0, 8.0]
    b.sum().backward()
    assert a.grad.tolist() == [2.0, 6.0, 6.0, 2.0]


def test_write_through_view_of_view_and_transpose():
    a = leaf(3, 4)
    b = a * 1
    w = b.t()[1]          # column 1 of b, a view of a view
    w.mul_(10)
    b.sum().backward()
    expected = np.ones((3, 4))
    expected[:, 1] = 10
    np.testing.assert_allclose(a.grad.numpy(), expected)


def test_sibling_view_sees_the_write():
    a = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = a * 1
    v1 = b[0:2]
    v2 = b[1:3]
    v2.mul_(5)             # b[1] is shared by both views
    assert v1.grad_fn.name() == "AsStridedBackward0"
    v1.sum().backward()
    assert a.grad.tolist() == [1.0, 5.0, 0.0, 0.0]


def test_view_created_before_base_is_modified():
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 1
    v = b.view(3, 1)
    b.mul_(4)
    assert v.grad_fn.name() == "AsStridedBackward0"
    v.sum().backward()
    assert a.grad.tolist() == [4.0, 4.0, 4.0]


def test_setitem_on_view():
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = torch.tensor(5.0, requires_grad=True)
    b = a * 1
    row = b[1]
    row[0] = w * 2
    (b * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert a.grad.tolist() == [[1.0, 2.0], [0.0, 4.0]]
    assert w.grad.item() == 6.0


def test_copy_into_view_of_plain_tensor():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = torch.zeros(4)
    out[1:3].copy_(x * 2)
    assert out.requires_grad and out.grad_fn.name() == "torch::autograd::CopySlices"
    (out * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert x.grad.tolist() == [4.0, 6.0]


def test_copy_between_dtypes_returns_grad_in_source_dtype():
    x = torch.tensor([1.0, 2.0], dtype=torch.float32, requires_grad=True)
    y = torch.zeros(2, dtype=torch.float64)
    y.copy_(x)
    (y * 3).sum().backward()
    assert x.grad.dtype == torch.float32 and x.grad.tolist() == [3.0, 3.0]


def test_view_of_leaf_inplace_raises():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        a[0:1].add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        a.view(2, 1).mul_(2)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        a.mul_(2)
    with torch.no_grad():
        a[0] = 5.0
    assert a.tolist() == [5.0, 2.0] and a.is_leaf


def test_inplace_on_expanded_tensor_raises():
    a = leaf(1, 3)
    b = (a * 1).expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        b.mul_(2)


def test_inplace_modification_of_saved_tensor_still_detected():
    a = leaf(3)
    b = a * 1
    c = b.sin()
    b.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


def test_inplace_op_reading_its_own_output_raises_at_backward():
    a = leaf(3)
    b = a * 1
    b.mul_(b.detach())  # the saved factor is overwritten by the op itself
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()


def test_detach_inplace_on_view_raises():
    b = leaf(3) * 1
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        b[0:2].detach_()


def test_op_without_derivative_raises_at_backward():
    a = leaf(3)
    y = a // 0.5
    assert y.requires_grad and y.grad_fn.name() == "torch::autograd::NotImplemented"
    assert "grad_fn=<NotImplemented>" in repr(y)
    with pytest.raises(NotImplementedError, match="floor_divide"):
        y.sum().backward()
    b = a * 1
    b //= 0.5
    assert type(b.grad_fn).__name__ == "NotImplemented"


def test_random_fill_gives_zero_gradient():
    a = leaf(3)
    b = a * 1
    b.normal_()
    assert b.grad_fn.name() == "NormalBackward0"
    (b * 2).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0]


def _gradgradcheck(f, inputs):
    """gradcheck of the first derivatives (computed with create_graph=True): the second
    derivatives against finite differences of the first."""
    def first(*xs):
        with torch.enable_grad():  # gradcheck evaluates under no_grad for the finite differences
            return torch.autograd.grad(f(*xs), xs, create_graph=True, allow_unused=True)
    return gradcheck(first, inputs)


def test_inplace_double_backward_reads_old_values_with_history():
    """An in-place op's saved old values keep their history: d/da of d/dx sum((a x)^2) is 4 a x,
    not the 2 a x of old values taken as constants (through a view too)."""
    a, x = leaf(4), torch.tensor(1.7, dtype=torch.float64, requires_grad=True)
    b = a.clone()
    b.mul_(x)
    (gx,) = torch.autograd.grad((b ** 2).sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(gx, a)
    np.testing.assert_allclose(h.numpy(), 4 * a.detach().numpy() * 1.7)
    b = a.clone()
    b[1:3].mul_(x)
    (gx,) = torch.autograd.grad((b ** 2).sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(gx, a)
    want = 4 * a.detach().numpy() * 1.7
    want[[0, 3]] = 0
    np.testing.assert_allclose(h.numpy(), want)


# (id, f(a, x, v) with an in-place write through a view of a non-leaf)
COPYSLICES_DOUBLE = [
    ("mul_rows", lambda a, x, v: _write(a.clone(), lambda b: b[1:3].mul_(x), lambda b: (b ** 2).sum() + v.sum())),
    ("exp_through_t", lambda a, x, v: _write(a.clone(), lambda b: b.t()[1].exp_(), lambda b: (b ** 2).sum() * x + v.sum())),
    ("copy_row", lambda a, x, v: _write(a.clone(), lambda b: b[0].copy_(v * x), lambda b: (b ** 2 * a).sum())),
    ("setitem_strided", lambda a, x, v: _write(a * x, lambda b: b.__setitem__((slice(None, None, 2), 1), v[:2] ** 2),
                                                lambda b: (b ** 3).sum())),
    ("nested_views", lambda a, x, v: _write(a * x, lambda b: b[1:][:, 1:].mul_(v[1:]), lambda b: (b ** 2).sum())),
]


def _write(b, write, loss):
    write(b)
    return loss(b)


@pytest.mark.parametrize("name,f", COPYSLICES_DOUBLE, ids=[c[0] for c in COPYSLICES_DOUBLE])
def test_copyslices_double_backward(name, f):
    """create_graph=True through CopySlices (and the views' AsStridedBackward0) records the
    backward itself, so second derivatives match finite differences."""
    a = torch.tensor([[0.3, -1.2, 0.7], [2.0, 0.4, -0.6], [1.1, -0.9, 0.5]], dtype=torch.float64, requires_grad=True)
    x = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
    v = torch.tensor([0.8, -0.3, 1.4], dtype=torch.float64, requires_grad=True)
    assert gradcheck(f, (a, x, v))
    assert _gradgradcheck(f, (a, x, v))


def test_copyslices_triple_backward():
    """Third derivatives: the recorded backward of CopySlices is itself differentiable."""
    a, x = leaf(5), torch.tensor(0.9, dtype=torch.float64, requires_grad=True)

    def f(a, x):
        b = a.clone()
        b[1:4].mul_(x)
        return (b ** 3).sum()

    def second(a, x):
        with torch.enable_grad():
            ga, gx = torch.autograd.grad(f(a, x), (a, x), create_graph=True)
            return torch.autograd.grad((ga * ga).sum() + gx * gx, (a, x), create_graph=True)
    assert gradcheck(second, (a, x))
    # by hand: f = sum_{outside} a^3 + x^3 sum_{inside} a^3, so d3f/dx3 = 6 sum_{inside} a^3
    (gx,) = torch.autograd.grad(f(a, x), x, create_graph=True)
    (gxx,) = torch.autograd.grad(gx, x, create_graph=True)
    (gxxx,) = torch.autograd.grad(gxx, x)
    assert gxxx.item() == pytest.approx(6 * float((a.detach()[1:4] ** 3).sum()))


def test_copyslices_first_backward_unchanged_by_create_graph():
    a = leaf(3)
    b = a * 1
    b[0:2].mul_(3)
    (g,) = torch.autograd.grad(b.sum(), a)
    assert g.tolist() == [3.0, 3.0, 1.0]
    b = a * 1
    b[0:2].mul_(3)
    (g,) = torch.autograd.grad((b * b).sum(), a, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(g.detach().numpy(), 2 * a.detach().numpy() * [9, 9, 1])


def test_views_do_not_leak_graphs():
    import gc
    import weakref
    a = leaf(100)
    b = a * 1
    v = b[10:20]
    v.mul_(2)
    ref = weakref.ref(b.grad_fn)
    b.sum().backward()
    del b, v
    gc.collect()
    assert ref() is None


def test_view_made_in_no_grad_mode_refuses_recorded_inplace():
    b = leaf(3) * 2
    with torch.no_grad():
        v = b[0:2]
    assert not v.requires_grad
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace"):
        v.mul_(leaf(2))
    v.mul_(2.0)  # nothing to record: allowed, as in PyTorch
    with torch.no_grad():
        v.mul_(leaf(2))  # inside no_grad: allowed
    buf = torch.zeros(3)
    with torch.no_grad():
        r = buf[0:2]
    with pytest.raises(RuntimeError, match="created in no_grad mode"):
        r.copy_(leaf(2))


def test_out_argument_with_grad_raises():
    a = leaf(2)
    with pytest.raises(RuntimeError, match=r"add\(\): functions with out=\.\.\. arguments don't support automatic"):
        torch.add(a, a, out=torch.empty(2, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="functions with out="):
        torch.mul(a, 2, out=torch.empty(2, dtype=torch.float64))
    mask = torch.empty(2, dtype=torch.bool)
    torch.gt(a, 0, out=mask)  # a bool result is not differentiable: allowed
    assert mask.tolist() == (a.detach().numpy() > 0).tolist()
    with torch.no_grad():
        o = torch.empty(2, dtype=torch.float64)
        torch.add(a, a, out=o)
    np.testing.assert_allclose(o.numpy(), 2 * a.detach().numpy())


def test_view_as_dtype_is_not_differentiable():
    a = leaf(4)
    v = a.view(torch.int64)
    assert not v.requires_grad and v.grad_fn is None
    w = (a * 1).view(torch.float64)
    assert w.grad_fn is None
