"""Autograd at the edges: subgradient conventions at ties, kinks, zeros and nan, and double backward
through saved outputs and scatter-type formulas. Expected values are derived by hand (or with NumPy)
from PyTorch's documented conventions."""
import numpy as np
import pytest

import ctorch as torch

nan, inf = float("nan"), float("inf")


def leaf(v):
    return torch.tensor(np.asarray(v, dtype=np.float64), requires_grad=True)


def grads(out, *leaves, w=None):
    """Gradients of (out * w).sum() (w = ones by default) with respect to leaves, as arrays."""
    s = (out * torch.tensor(w)).sum() if w is not None else out.sum()
    gs = torch.autograd.grad(s, leaves, allow_unused=True)
    return [None if g is None else g.numpy() for g in gs]


def close(a, b):
    np.testing.assert_allclose(a, np.asarray(b, dtype=np.float64), rtol=1e-12, atol=1e-12, equal_nan=True)


# --- clamp ------------------------------------------------------------------------------------------------
X = [-1.5, -0.0, 0.0, 0.5, 2.0, nan]


def test_clamp_number_bounds_pass_the_gradient_strictly_inside():
    x = leaf(X)
    close(grads(x.clamp(-1.5, 0.5), x)[0], [0, 1, 1, 0, 0, 0])
    close(grads(x.clamp(min=0.0), x)[0], [0, 0, 0, 1, 1, 0])
    close(grads(x.clamp(max=0.0), x)[0], [1, 0, 0, 0, 0, 0])
    close(grads(x.clamp(0, 1), x)[0], [0, 0, 0, 1, 0, 0])
    close(grads(torch.clamp_min(x, 0.5), x)[0], [0, 0, 0, 0, 1, 0])
    close(grads(torch.clamp_max(x, 0.5), x)[0], [1, 1, 1, 0, 0, 0])
    close(grads(x.clamp(0.5, 0.0), x)[0], [0] * 6)  # min > max: the result is constant


def test_clamp_two_tensor_bounds():
    # ties with min < max are split; min == max == x keeps it; max < min sends it to max; nan x keeps it
    x = leaf([0, 1, .5, 0, 2, -1, nan, .5, 3, 2, 0, nan, 1, .5, .5, 2, 2])
    lo = leaf([0, 0, .5, 0, 1, 0, 0, 1, 1, 1, 1, 2, 1, nan, 1, nan, 0])
    hi = leaf([1, 1, .5, 0, 0, -2, 1, 0, 0, 1, 1, 0, 0, 1, nan, 1, nan])
    gx, glo, ghi = grads(x.clamp(lo, hi), x, lo, hi)
    close(gx, [.5, .5, 1, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1])
    close(glo, [.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0])
    close(ghi, [0, .5, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0])


def test_clamp_one_tensor_bound_follows_maximum_minimum():
    x = leaf([0, 1, .5, 0, 2, -1, nan, .5, 3])
    b = leaf([0, 0, .5, 0, 1, 0, 0, 1, 1])
    gx, gb = grads(x.clamp(min=b), x, b)
    close(gx, [.5, 1, .5, .5, 1, 0, 1, 0, 1])
    close(gb, [.5, 0, .5, .5, 0, 1, 1, 1, 0])
    gx, gb = grads(torch.clamp_min(x, b), x, b)
    close(gx, [.5, 1, .5, .5, 1, 0, 1, 0, 1])
    close(gb, [.5, 0, .5, .5, 0, 1, 1, 1, 0])
    gx, gb = grads(x.clamp(max=b), x, b)
    close(gx, [.5, 0, .5, .5, 0, 1, 1, 1, 0])
    close(gb, [.5, 1, .5, .5, 1, 0, 1, 0, 1])
    gx, gb = grads(torch.clamp_max(x, b), x, b)
    close(gb, [.5, 1, .5, .5, 1, 0, 1, 0, 1])
    # a 0-d bound collects the gradient of every element it bounds
    x = leaf([-1.0, 0.0, 0.5, 2.0])
    lo, hi = leaf(0.0), leaf(0.5)
    gx, glo, ghi = grads(x.clamp(lo, hi), x, lo, hi)
    close(gx, [0, .5, .5, 0])
    close(glo, 1.5)
    close(ghi, 1.5)


# --- maximum / minimum / fmax / fmin, max() --------------------------------------------------------------
A = [1.0, 2.0, 3.0, nan, 1.0, nan, inf]
B = [1.0, 1.0, 4.0, 2.0, nan, nan, inf]


@pytest.mark.parametrize("op, ga, gb", [
    ("maximum", [.5, 1, 0, 1, 1, 1, .5], [.5, 0, 1, 1, 1, 1, .5]),
    ("minimum", [.5, 0, 1, 1, 1, 1, .5], [.5, 1, 0, 1, 1, 1, .5]),
    ("fmax", [.5, 1, 0, 0, 1, 1, .5], [.5, 0, 1, 1, 0, 0, .5]),
    ("fmin", [.5, 0, 1, 0, 1, 1, .5], [.5, 1, 0, 1, 0, 0, .5]),
])
def test_binary_extrema_ties_and_nan(op, ga, gb):
    a, b = leaf(A), leaf(B)
    got = grads(getattr(torch, op)(a, b), a, b)
    close(got[0], ga)
    close(got[1], gb)


def test_binary_extrema_broadcast_reduce_to_0d():
    a, b = leaf(2.0), leaf([1.0, 2.0, 3.0])
    ga, gb = grads(torch.maximum(a, b), a, b)
    close(ga, 1.5)
    close(gb, [0, .5, 1])


def test_full_max_min_share_ties_and_pick_nan():
    x = leaf([1.0, 3.0, 3.0])
    close(grads(x.max(), x)[0], [0, .5, .5])
    x = leaf([1.0, 3.0, 3.0, nan])
    close(grads(x.max(), x)[0], [0, 0, 0, 1])
    close(grads(x.min(), x)[0], [0, 0, 0, 1])
    x = leaf([1.0, nan, 3.0, nan])
    close(grads(x.max(), x)[0], [0, .5, 0, .5])


# --- norm ------------------------------------------------------------------------------------------------
def test_norm_p0_has_no_gradient():
    x = leaf([[0.0, 0.0], [1.0, -2.0]])
    assert grads(x.norm(0), x)[0] is None
    assert grads(x.norm(0, dim=1), x)[0] is None
    x.norm(0).backward()
    assert x.grad is None
    (x.norm(0) + x.sum()).backward()
    close(x.grad.numpy(), np.ones((2, 2)))


@pytest.mark.parametrize("p", [3, 0.5, 1.5, -2])
def test_norm_of_zero_vector_and_zero_entries(p):
    x = leaf([0.0, 0.0, 0.0])
    close(grads(x.norm(p), x)[0], [0, 0, 0])
    v = np.array([0.0, -3.0, 0.0, 4.0])
    x = leaf(v)
    with np.errstate(divide="ignore", invalid="ignore"):
        n = (np.abs(v) ** p).sum() ** (1 / p)  # 0 for p < 0: a zero entry makes the sum infinite
        want = np.where(v == 0, 0.0, np.sign(v) * np.abs(v) ** (p - 1) * n ** (1 - p))
    close(grads(x.norm(p), x)[0], want)
    x = leaf([[0.0, 0.0], [1.0, -2.0]])
    g = grads(x.norm(p, dim=1, keepdim=True), x)[0]
    close(g[0], [0, 0])


def test_norm_inf_shares_ties_and_ignores_nan():
    x = leaf([1.0, -3.0, 3.0])
    close(grads(x.norm(inf), x)[0], [0, -.5, .5])
    x = leaf([1.0, nan])
    close(grads(x.norm(inf), x)[0], [0, 0])


# --- std / var -------------------------------------------------------------------------------------------
def test_std_of_constant_rows_is_zero_not_nan():
    x = leaf([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]])
    g = grads(x.std(1), x)[0]
    c = np.array([1.0, 2.0, 4.0]) - 7 / 3
    close(g[0], c / (2 * np.sqrt((c ** 2).sum() / 2)))
    close(g[1], [0, 0, 0])
    x = leaf([2.0])
    close(grads(x.std(correction=0), x)[0], [0])
    x = torch.tensor([[1.0, 1.0], [1.0, 2.0]], dtype=torch.float32, requires_grad=True)
    g = grads(x.std(1), x)[0]
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [[0, 0], [-1 / np.sqrt(2), 1 / np.sqrt(2)]], rtol=1e-6)


def test_var_correction_beyond_count_and_positional_unbiased():
    x = leaf([2.0])
    with pytest.warns(UserWarning, match="degrees of freedom"):
        out = x.var(correction=2)
    close(grads(out, x)[0], [nan])  # 0 * 2 / max(0, 1 - 2)
    v = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 5.0]])
    x = leaf(v)
    close(grads(x.var(1, False), x)[0], 2 * (v - v.mean(1, keepdims=True)) / 3)
    close(grads(x.var(False), x)[0], 2 * (v - v.mean()) / 6)


# --- pow -------------------------------------------------------------------------------------------------
def test_pow_tensor_exponent_at_zero_base():
    x = leaf([0.0, 0.0, -2.0, 1.5, 0.0, 0.0])
    e = leaf([0.0, 2.0, 2.0, 0.5, -1.0, 1.0])
    gx, ge = grads(x ** e, x, e)
    close(gx, [0, 0, -4, 0.5 / np.sqrt(1.5), -inf, 1])
    close(ge, [0, 0, nan, np.sqrt(1.5) * np.log(1.5), -inf, 0])


def test_pow_number_base_zero_and_zero_exponent():
    e = leaf([0.0, 1.0, 2.0, -1.0])
    close(grads(0.0 ** e, e)[0], [0, 0, 0, -inf])
    close(grads(torch.pow(0.0, e), e)[0], [0, 0, 0, -inf])
    close(grads(torch.pow(2.0, e), e)[0], np.log(2) * 2.0 ** np.array([0.0, 1, 2, -1]))
    x = leaf([0.0, -1.0])
    close(grads(x ** 0, x)[0], [0, 0])
    b = leaf(0.0)  # a 0-d base broadcast against the exponents: 0 + 1 + (-1 * inf) + 0
    close(grads(b ** torch.tensor([0.0, 1.0, -1.0, 2.0]), b)[0], -inf)


# --- prod ------------------------------------------------------------------------------------------------
def test_prod_with_zeros():
    x = leaf([1.0, 0.0, 3.0])
    close(grads(x.prod(), x)[0], [0, 3, 0])
    x = leaf([1.0, 0.0, 0.0])
    close(grads(x.prod(), x)[0], [0, 0, 0])
    x = leaf([[1.0, 0.0, 3.0], [2.0, 2.0, 2.0], [0.0, 5.0, 0.0]])
    close(grads(x.prod(1), x)[0], [[0, 3, 0], [4, 4, 4], [0, 0, 0]])
    close(grads(x.prod(0, keepdim=True), x)[0], [[0, 10, 0], [0, 0, 0], [2, 0, 6]])
    x = leaf([[1.0, 2.0], [0.0, 4.0]])
    close(grads(x.prod(0), x)[0], [[0, 4], [1, 2]])


# --- masked_fill, matmul ---------------------------------------------------------------------------------
def test_masked_fill_tensor_value_gets_the_masked_gradient():
    x, v = leaf(np.arange(6.0).reshape(2, 3)), leaf(3.0)
    mask = torch.tensor([True, False, True])
    w = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    gx, gv = grads(x.masked_fill(mask, v), x, v, w=w)
    close(gx, w * np.array([0, 1, 0]))
    close(gv, 1 + 3 + 4 + 6)


def test_scatter_with_reduce_has_no_derivative():
    x = leaf(np.zeros((3, 4)))
    y = x.scatter(0, torch.tensor([[0, 1, 0, 1]]), leaf(np.ones((1, 4))), reduce="add")
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        y.sum().backward()
    close(grads(x.scatter(0, torch.tensor([[0, 1, 0, 1]]), 2.0), x)[0], [[0, 1, 0, 1], [1, 0, 1, 0], [1, 1, 1, 1]])


def test_matmul_1d_with_batched_matrix():
    a = np.array([1.0, -2.0, 0.5])
    b = np.arange(24.0).reshape(2, 3, 4) / 10
    ta, tb = leaf(a), leaf(b)
    ga, gb = grads(ta @ tb, ta, tb)
    close(ga, b.sum(axis=(0, 2)))
    close(gb, np.broadcast_to(a[None, :, None], (2, 3, 4)))
    ta, tb = leaf(a), leaf(b.reshape(1, 2, 3, 4))
    ga, gb = grads(torch.matmul(ta, tb), ta, tb)
    close(ga, b.sum(axis=(0, 2)))


# --- double backward -------------------------------------------------------------------------------------
V = np.array([-1.2, -0.3, 0.4, 1.1])
W = np.array([0.5, -1.0, 2.0, 0.25])


def second(fn, v=V, w=W):
    """d/dx of sum(w * d/dx sum(fn(x)))."""
    x = leaf(v)
    (g,) = torch.autograd.grad(fn(x).sum(), x, create_graph=True)
    assert g.requires_grad
    (gg,) = torch.autograd.grad((g * torch.tensor(w)).sum(), x)
    return gg.numpy()


def test_double_backward_through_saved_outputs():
    t = np.tanh(V)
    close(second(torch.tanh), W * -2 * t * (1 - t * t))
    s = 1 / (1 + np.exp(-V))
    close(second(torch.sigmoid), W * s * (1 - s) * (1 - 2 * s))
    close(second(torch.exp), W * np.exp(V))
    a = np.abs(V) + 0.5
    close(second(lambda x: (x.abs() + 0.5).sqrt()), W * -0.25 * a ** -1.5)
    close(second(lambda x: (x.abs() + 0.5).reciprocal()), W * 2 * a ** -3)
    sm = np.exp(V) / np.exp(V).sum()  # d logsumexp = softmax; d (w . softmax) = sm (w - sm . w)
    close(second(lambda x: x.logsumexp(0)), sm * (W - (sm * W).sum()))
    n = np.linalg.norm(V)  # d norm = x / n; d (w . x / n) = w / n - x (w . x) / n^3
    close(second(lambda x: x.norm()), W / n - V * (W @ V) / n ** 3)


def test_double_backward_softmax():
    # f = sum(c * softmax(x)); df = s (c - s.c); d(w . df) computed by finite differences in NumPy
    c = np.array([1.0, -2.0, 0.5, 3.0])

    def df(v):
        s = np.exp(v - v.max()) / np.exp(v - v.max()).sum()
        return s * (c - s @ c)

    eps = 1e-6
    want = np.array([(W @ df(V + eps * e) - W @ df(V - eps * e)) / (2 * eps) for e in np.eye(4)])
    got = second(lambda x: x.softmax(0) * torch.tensor(c))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn, rows", [
    (lambda x: x.select(0, 1) ** 2, [1]),
    (lambda x: x.narrow(0, -2, 2) ** 2, [1, 2]),
    (lambda x: x[[1, 1, 2]] ** 2, [1, 1, 2]),
    (lambda x: x.index_select(0, torch.tensor([2, 1, 2])) ** 2, [2, 1, 2]),
])
def test_double_backward_through_selection(fn, rows):
    v = np.arange(12.0).reshape(3, 4) / 7
    w = np.linspace(-1, 1, 12).reshape(3, 4)
    x = leaf(v)
    (g,) = torch.autograd.grad(fn(x).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad((g * torch.tensor(w)).sum(), x)
    want = np.zeros((3, 4))
    for r in rows:
        want[r] += 2 * w[r]
    close(gg.numpy(), want)


# --- double backward of the fused nn kernels ---------------------------------------------------------------
# With create_graph the losses' gradients are composed from recorded ops (csrc/nn.c); their first-order
# values must equal the fused kernels', and their derivative must match central differences of the
# fused kernels' gradient.
F = torch.nn.functional
R = np.random.default_rng(3)
LOGITS = R.normal(size=(4, 3))
PROBS = R.uniform(size=(4, 3))
PROBS /= PROBS.sum(1, keepdims=True)
CLASS_W = np.array([0.2, 1.0, 3.0])


def first_grad(fn, arrays, k, create_graph):
    ts = [leaf(a) for a in arrays]
    (g,) = torch.autograd.grad(fn(*ts), ts[k], create_graph=create_graph)
    return g, ts


def check_double_backward(fn, arrays, k=0, h=1e-6):
    """fn(*tensors) -> scalar; checks d/dx_k sum(w * d fn/dx_k) for a fixed w."""
    g_fused, _ = first_grad(fn, arrays, k, False)
    g, ts = first_grad(fn, arrays, k, True)
    close(g.detach().numpy(), g_fused.numpy())  # the composed gradient equals the fused kernel's
    w = np.linspace(-1.0, 1.5, g.numel()).reshape(tuple(g.shape))
    (gg,) = torch.autograd.grad((g * torch.tensor(w)).sum(), ts[k])
    base = np.asarray(arrays[k], dtype=np.float64)
    want = np.zeros(base.shape)
    for i in np.ndindex(base.shape):
        hi, lo = [np.array(a, dtype=np.float64) for a in arrays], [np.array(a, dtype=np.float64) for a in arrays]
        hi[k][i] += h
        lo[k][i] -= h
        want[i] = ((first_grad(fn, hi, k, False)[0].numpy() - first_grad(fn, lo, k, False)[0].numpy()) * w).sum() / (2 * h)
    np.testing.assert_allclose(gg.numpy(), want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kw", [
    dict(reduction="mean"),
    dict(reduction="sum", weight=CLASS_W, label_smoothing=0.2),
    dict(reduction="mean", weight=CLASS_W, label_smoothing=0.3, ignore_index=1),
])
def test_double_backward_cross_entropy_class_targets(kw):
    kw = dict(kw)
    if "weight" in kw:
        kw["weight"] = torch.tensor(kw["weight"])
    target = torch.tensor([0, 2, 1, 2])
    check_double_backward(lambda x: F.cross_entropy(x, target, **kw), [LOGITS])


def test_double_backward_cross_entropy_probability_targets():
    w = torch.tensor(CLASS_W)
    check_double_backward(lambda x, p: F.cross_entropy(x, p, weight=w, label_smoothing=0.1), [LOGITS, PROBS])
    # the gradient with respect to the probabilities is linear in them: its derivative there is zero
    check_double_backward(lambda x, p: F.cross_entropy(x, p, weight=w, label_smoothing=0.1) ** 2, [LOGITS, PROBS], k=1)


def test_double_backward_nll_loss_with_ignored_targets():
    target = torch.tensor([0, -100, 1, 2])
    w = torch.tensor(CLASS_W)
    check_double_backward(lambda x: F.nll_loss(x.log_softmax(1), target, weight=w) ** 2, [LOGITS])


@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.parametrize("name, fn", [
    ("mse", lambda x, y: F.mse_loss(x, y) ** 2),
    ("mse_sum_bcast", lambda x, y: F.mse_loss(x, y[0], reduction="sum") ** 2),
    ("smooth_l1", lambda x, y: F.smooth_l1_loss(x, y, beta=0.7) ** 2),
    ("l1", lambda x, y: F.l1_loss(x, y, reduction="sum") ** 2),
    ("bce", lambda x, y: F.binary_cross_entropy(x.sigmoid(), y.sigmoid(), weight=torch.tensor([1.0, 2.0, 0.5]))),
    ("bce_logits", lambda x, y: F.binary_cross_entropy_with_logits(x, y.sigmoid(), pos_weight=torch.tensor([1.0, 2.0, 0.5]))),
])
def test_double_backward_pointwise_losses(name, fn):
    x, y = R.normal(size=(2, 3)), R.normal(size=(2, 3))
    check_double_backward(fn, [x, y], k=0)
    check_double_backward(fn, [x, y], k=1)


def test_double_backward_layer_norm():
    x, w, b = R.normal(size=(2, 3, 4)), R.normal(size=(3, 4)), R.normal(size=(3, 4))
    fn = lambda x, w, b: (F.layer_norm(x, (3, 4), w, b, eps=1e-3) ** 2).sum()  # noqa: E731
    for k in range(3):
        check_double_backward(fn, [x, w, b], k=k)
    check_double_backward(lambda x: (F.layer_norm(x, (4,)) ** 3).sum(), [x])


def test_double_backward_embedding():
    idx = torch.tensor([[0, 2, 2], [1, 0, 4]])
    check_double_backward(lambda w: (F.embedding(idx, w, padding_idx=2) ** 2).sum(), [R.normal(size=(5, 3))])


def test_double_backward_std_and_cumprod_match_hand_values():
    # std over rows: one constant row (std 0) must give zeros, not nan, in the second derivative
    x = torch.tensor([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad((x.std(dim=1) * torch.tensor([1.0, 2.0], dtype=torch.float64)).sum(), x,
                               create_graph=True)
    (gg,) = torch.autograd.grad((g * torch.tensor([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]], dtype=torch.float64)).sum(), x)
    assert np.isfinite(gg.numpy()).all()
    assert gg.numpy()[1].tolist() == [0.0, 0.0, 0.0]
    # row 0 against central differences of the first derivative
    def first(xv):
        xt = torch.tensor(xv, dtype=torch.float64, requires_grad=True)
        (gt,) = torch.autograd.grad(xt.std(), xt)
        return gt.numpy()[0]
    row = np.array([1.0, 2.0, 4.0])
    num = [(first(row + e) - first(row - e)) / 2e-6 for e in np.eye(3) * 1e-6]
    np.testing.assert_allclose(gg.numpy()[0], num, rtol=1e-5, atol=1e-7)
    # cumprod with a zero: second derivative through the saved output
    y = torch.tensor([2.0, 0.0, 3.0], dtype=torch.float64, requires_grad=True)
    (gy,) = torch.autograd.grad(y.cumprod(0).sum(), y, create_graph=True)
    # d/dy of sum(cumprod) = [1 + y1 + y1 y2, y0 + y0 y2, y0 y1]
    np.testing.assert_allclose(gy.detach().numpy(), [1.0, 8.0, 0.0])
    (ggy,) = torch.autograd.grad(gy.sum(), y)
    # d/dy of (1 + y1 + y1 y2) + (y0 + y0 y2) + y0 y1 = [1 + y2 + y1, 1 + y2 + y0, y1 + y0]
    np.testing.assert_allclose(ggy.numpy(), [4.0, 6.0, 2.0])


def test_grad_of_a_leaf_output_goes_to_that_leaf_only():
    """autograd.grad(leaf, [unused_leaf, leaf]): the unused leaf's AccumulateGrad node existed only
    for the lookup; once freed, its address could be reused by the other's and both got the
    gradient."""
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([0.5, 0.7], requires_grad=True)
    seed = torch.tensor([1.0, 0.0])
    for order in ((a, b), (b, a)):
        grads = torch.autograd.grad(b, list(order), seed, allow_unused=True)
        got = dict(zip((id(t) for t in order), grads))
        assert got[id(a)] is None
        assert got[id(b)].tolist() == [1.0, 0.0]


def test_data_assignment():
    """.data = t swaps the storage, dtype and shape under the tensor, keeping its autograd flags;
    an integer tensor under one that requires grad, or a non-tensor, is refused as in PyTorch."""
    x = torch.ones(2, requires_grad=True)
    x.data = torch.tensor([[1.5, 2.5, 3.5]])
    assert x.requires_grad and x.shape == (1, 3) and x.tolist() == [[1.5, 2.5, 3.5]]
    with pytest.raises(RuntimeError, match="^data set to a tensor that requires gradients must be floating point"):
        x.data = torch.ones(2, dtype=torch.int64)
    assert x.dtype == torch.float32 and x.shape == (1, 3)
    with pytest.raises(TypeError, match="^Variable data has to be a tensor, but got list$"):
        x.data = [1.0]
    y = torch.ones(2)
    y.data = torch.arange(3)
    assert y.dtype == torch.int64 and y.tolist() == [0, 1, 2]


# --- autograd.grad / backward arguments as PyTorch's (differential check against the reference) ----------
def _arange_leaf():
    return torch.arange(1., 4.).requires_grad_()


def test_grad_argument_checks():
    x, y = _arange_leaf(), _arange_leaf()
    with pytest.raises(RuntimeError, match=r"^The differentiated Tensor at index 1 appears to not have been used"):
        torch.autograd.grad((x * 2).sum(), [x, y])
    with pytest.raises(RuntimeError, match=r"^`inputs` argument to `grad\(\)` cannot be empty\.$"):
        torch.autograd.grad((x * 2).sum(), [])
    with pytest.raises(RuntimeError, match=r"^all inputs have to be Tensors or GradientEdges, but got int$"):
        torch.autograd.grad((x * 2).sum(), [x, 3])
    with pytest.raises(ValueError, match=r"^Expected allow_unused to be True or not passed when materialize_grads"):
        torch.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True, allow_unused=False)
    with pytest.raises(RuntimeError, match=r"^`inputs` argument to `backward\(\)` cannot be empty\.$"):
        (x * 2).sum().backward(inputs=[])
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
        g, = torch.autograd.grad((x * 2).sum(), x, only_inputs=False)
    np.testing.assert_allclose(g.numpy(), [2, 2, 2])


def test_grad_materialize_create_graph_dict_and_extra_grad_outputs():
    x, y = _arange_leaf(), _arange_leaf()
    gx, gy = torch.autograd.grad((x * x).sum(), [x, y], materialize_grads=True, create_graph=True)
    assert gy.requires_grad and gx.requires_grad  # the zero of an unused input is differentiable too
    np.testing.assert_allclose(gy.detach().numpy(), [0, 0, 0])
    r = torch.autograd.grad((x * y).sum(), {"a": x, "b": y})
    assert list(r) == ["a", "b"]
    np.testing.assert_allclose(r["a"].numpy(), [1, 2, 3])
    # grad_outputs pair with outputs as zip does: an extra one is ignored
    g, = torch.autograd.grad(x * 2, x, grad_outputs=[torch.ones(3), torch.ones(3)])
    np.testing.assert_allclose(g.numpy(), [2, 2, 2])


def test_grad_is_grads_batched():
    x = _arange_leaf()
    jac, = torch.autograd.grad(x * x, x, grad_outputs=torch.eye(3), is_grads_batched=True)
    np.testing.assert_allclose(jac.numpy(), np.diag([2., 4., 6.]))
    with pytest.raises(RuntimeError, match=r"^If `is_grads_batched=True`, we interpret the first dimension"):
        torch.autograd.grad(x * x, x, grad_outputs=torch.ones(3), is_grads_batched=True)


def test_grad_mode_decorators():
    @torch.no_grad
    def bare(t):
        return t * 2

    @torch.no_grad()
    def gen(t):
        yield torch.is_grad_enabled()
        yield (t * 2).requires_grad

    x = _arange_leaf()
    assert not bare(x).requires_grad
    assert list(gen(x)) == [False, False] and torch.is_grad_enabled()
    with pytest.raises(TypeError, match=r"^set_grad_enabled\(\): argument 'enabled' \(position 1\) must be bool"):
        torch.set_grad_enabled("yes")


def test_version_error_names_tensor_and_op():
    x = _arange_leaf()
    a = x * 1
    y = a.sin()
    a.add_(1)
    with pytest.raises(RuntimeError, match=r"inplace operation: \[torch\.FloatTensor \[3\]\], which is output 0 of "
                                           r"Add, is at version 1; expected version 0 instead\. Hint: enable anomaly"):
        y.sum().backward()
    e = x.exp()  # a saved output names the node that saved it
    e.add_(1)
    with pytest.raises(RuntimeError, match=r"\[torch\.FloatTensor \[3\]\], which is output 0 of Exp, is at version 1"):
        e.sum().backward()


def test_grad_setter_size_message():
    x = _arange_leaf()
    with pytest.raises(RuntimeError, match=r"^attempting to assign a gradient of size '\[2\]' to a tensor of size "
                                           r"'\[3\]'"):
        x.grad = torch.ones(2)
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require gradients$"):
        torch.arange(3).requires_grad_()
