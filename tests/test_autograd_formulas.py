"""Autograd formulas of the less common differentiable ops (float64 gradcheck against finite
differences): inverse hyperbolics, erf, softplus, nan_to_num, atan2/hypot/logaddexp/copysign,
remainder/fmod, float_power, nansum/median/aminmax/var_mean, cumprod (with zeros), cummax/cummin,
logcumsumexp, nanmean/nanmedian (with NaN), diag/diagonal,
tile, the stack family, take/masked_select/index_*, addmv/baddbmm/addbmm, einsum (every kind of
equation), and the node names, which follow PyTorch's per overload."""
import numpy as np
import pytest

import ctorch as torch
import ctorch.nn.functional as F
from ctorch.autograd import gradcheck

R = np.random.default_rng(1)


def leaf(*shape, device="cpu", low=-1.0, high=1.0):
    return torch.tensor(R.uniform(low, high, size=shape), dtype=torch.float64, device=device, requires_grad=True)


DEVICE = "cpu"


def idx(*values):
    return torch.tensor(list(values), device=DEVICE)


# (id, function of the leaves, leaf shapes, (low, high))
CASES = [
    ("absolute", lambda x: torch.absolute(x), [(2, 3)], None),
    ("arcsin", lambda x: torch.arcsin(x * 0.5), [(2, 3)], None),
    ("arccos", lambda x: x.arccos(), [(2, 3)], (-0.8, 0.8)),
    ("arctan", lambda x: torch.arctan(x), [(2, 3)], None),
    ("asinh", lambda x: torch.asinh(x * 2), [(2, 3)], None),
    ("arcsinh", lambda x: x.arcsinh(), [(2, 3)], None),
    ("acosh", lambda x: torch.acosh(x), [(2, 3)], (1.2, 3.0)),
    ("arccosh", lambda x: x.arccosh(), [(2, 3)], (1.2, 3.0)),
    ("atanh", lambda x: torch.atanh(x * 0.9), [(2, 3)], None),
    ("arctanh", lambda x: x.arctanh(), [(2, 3)], (-0.8, 0.8)),
    ("erf", lambda x: torch.erf(x * 2), [(2, 3)], None),
    ("erfc", lambda x: x.erfc(), [(2, 3)], None),
    ("erf_noncontiguous", lambda x: torch.erf(x.t()), [(3, 2)], None),
    ("sgn", lambda x: torch.sgn(x) * x, [(2, 3)], None),
    ("fix", lambda x: torch.fix(x * 3) + x, [(2, 3)], None),
    ("nan_to_num", lambda x: torch.nan_to_num(x, nan=0.0), [(2, 3)], None),
    ("softplus", lambda x: F.softplus(x), [(2, 3)], None),
    ("softplus_threshold", lambda x: F.softplus(x * 4, 2.0, 3.0), [(2, 3)], None),
    # binary, with broadcasting
    ("atan2", lambda a, b: torch.atan2(a, b), [(2, 3), (2, 3)], None),
    ("arctan2_broadcast", lambda a, b: torch.arctan2(a, b), [(2, 3), (3,)], None),
    ("hypot_broadcast", lambda a, b: torch.hypot(a, b), [(2, 1), (1, 3)], None),
    ("logaddexp", lambda a, b: torch.logaddexp(a, b * 3), [(2, 3), (2, 3)], None),
    ("logaddexp2_broadcast", lambda a, b: torch.logaddexp2(a, b), [(2, 3), (3,)], None),
    ("copysign", lambda a, b: torch.copysign(a, b), [(2, 3), (2, 3)], None),
    ("copysign_scalar", lambda a: torch.copysign(a, -1.0), [(2, 3)], None),
    ("remainder", lambda a, b: torch.remainder(a * 3, b), [(2, 3), (2, 3)], (0.3, 1.0)),
    ("remainder_negative_broadcast", lambda a, b: torch.remainder(a * 3, -b), [(2, 3), (3,)], (0.3, 1.0)),
    ("remainder_scalar", lambda a: torch.remainder(a * 3, 0.7), [(2, 3)], None),
    ("remainder_operator", lambda a: (a * 3) % 0.7, [(2, 3)], None),
    ("fmod", lambda a, b: torch.fmod(a * 3, b), [(2, 3), (2, 3)], (0.3, 1.0)),
    ("fmod_negative", lambda a, b: torch.fmod(-a * 3, b.t()), [(2, 3), (3, 2)], (0.3, 1.0)),
    ("float_power", lambda a: torch.float_power(a, 2.5), [(2, 3)], (0.2, 1.5)),
    ("float_power_tensor", lambda a, b: torch.float_power(a, b), [(2, 3), (3,)], (0.2, 1.5)),
    ("float_power_base", lambda b: torch.float_power(2.0, b), [(2, 3)], None),
    ("masked_fill_tensor_value", lambda x, v: x.masked_fill(x > 0, v), [(2, 3), ()], None),
    ("scatter_value", lambda x: x.scatter(1, idx([0], [2]), 1.5), [(2, 3)], None),
    # reductions
    ("nansum", lambda x: torch.nansum(x), [(2, 3)], None),
    ("nansum_dim", lambda x: x.nansum(1, keepdim=True), [(2, 3)], None),
    ("sum_to_size", lambda x: x.sum_to_size(1, 3), [(2, 3)], None),
    ("median", lambda x: x.median(), [(2, 3)], None),
    ("median_dim", lambda x: torch.median(x, 1).values, [(2, 3)], None),
    ("aminmax", lambda x: torch.aminmax(x), [(2, 3)], None),
    ("kthvalue", lambda x: torch.kthvalue(x, 2, 0).values, [(3, 4)], None),
    ("kthvalue_keepdim", lambda x: x.kthvalue(3, keepdim=True)[0], [(2, 5)], None),
    ("mode_keepdim", lambda x: torch.mode(x, 0, True).values, [(3, 2)], None),
    ("msort", lambda x: torch.msort(x.t()), [(2, 3)], None),
    ("quantile_q_tensor", lambda x, q: torch.quantile(x, q, dim=1, keepdim=True), [(2, 5), (3,)], (0.05, 0.95)),
    ("nanquantile_midpoint", lambda x: torch.nanquantile(x, 0.4, interpolation="midpoint"), [(2, 3)], None),
    ("quantile_nearest_dim0", lambda x: x.quantile(0.7, 0, interpolation="nearest"), [(4, 2)], None),
    ("aminmax_dim", lambda x: torch.aminmax(x, dim=0, keepdim=True), [(2, 3)], None),
    ("var_mean", lambda x: torch.var_mean(x), [(2, 3)], None),
    ("var_mean_dim", lambda x: torch.var_mean(x, 1, correction=0), [(2, 3)], None),
    ("std_mean_dim", lambda x: torch.std_mean(x, 0, keepdim=True), [(2, 3)], None),
    ("var_positional_keepdim", lambda x: x.var(1, True, True), [(2, 3)], None),
    ("std_unbiased_overload", lambda x: x.std(False), [(2, 3)], None),
    ("cumprod", lambda x: torch.cumprod(x, 1), [(2, 3)], None),
    ("cumprod_noncontiguous", lambda x: x.t().cumprod(0), [(2, 3)], None),
    ("cumprod_dtype", lambda x: x.cumprod(0, dtype=torch.float64), [(3, 2)], None),
    ("cummax", lambda x: torch.cummax(x, 1).values, [(2, 4)], None),
    ("cummin_noncontiguous", lambda x: x.t().cummin(0)[0], [(2, 3)], None),
    ("cummax_zero_dim", lambda x: x.cummax(0).values, [()], None),
    ("logcumsumexp", lambda x: torch.logcumsumexp(x * 3, 1), [(2, 4)], None),
    ("logcumsumexp_noncontiguous", lambda x: x.t().logcumsumexp(0), [(2, 3)], None),
    ("nanmean", lambda x: torch.nanmean(x), [(2, 3)], None),
    ("nanmean_dim", lambda x: x.nanmean((0, 1), keepdim=True), [(2, 3, 2)], None),
    ("nanmedian", lambda x: x.nanmedian(), [(2, 3)], None),
    ("nanmedian_dim", lambda x: torch.nanmedian(x, 1).values, [(2, 3)], None),
    # shapes and indexing
    ("diag_vector", lambda x: torch.diag(x, 1), [(3,)], None),
    ("diag_matrix", lambda x: x.diag(-1), [(3, 4)], None),
    ("diagonal", lambda x: x.diagonal(), [(3, 4)], None),
    ("diagonal_offset_dims", lambda x: torch.diagonal(x, 1, 0, 2), [(3, 2, 4)], None),
    ("fliplr", lambda x: torch.fliplr(x), [(2, 3)], None),
    ("flipud", lambda x: x.flipud(), [(2, 3)], None),
    ("tile", lambda x: x.tile(2, 1), [(2, 3)], None),
    ("tile_short_reps", lambda x: torch.tile(x.t(), (2,)), [(2, 3)], None),
    ("tile_more_reps", lambda x: x.tile(2, 1, 2), [(2, 3)], None),
    ("concatenate", lambda a, b: torch.concatenate([a, b], 1), [(2, 3), (2, 1)], None),
    ("hstack_1d", lambda a, b: torch.hstack([a, b]), [(3,), (2,)], None),
    ("hstack_2d", lambda a, b: torch.hstack([a, b]), [(2, 3), (2, 1)], None),
    ("vstack", lambda a, b: torch.vstack([a, b]), [(3,), (2, 3)], None),
    ("dstack", lambda a, b: torch.dstack([a, b]), [(2, 3), (2, 3, 2)], None),
    ("take", lambda x: x.take(idx(0, 5, 5, -1)), [(2, 3)], None),
    ("masked_select_broadcast", lambda x: x.masked_select(idx(True, False, True)), [(2, 3)], None),
    ("index_add", lambda x, s: x.index_add(0, idx(1, 1), s, alpha=2), [(2, 3), (2, 3)], None),
    ("index_copy", lambda x, s: x.index_copy(1, idx(2, 0), s), [(2, 3), (2, 2)], None),
    ("index_fill_tensor", lambda x, v: x.index_fill(1, idx(0, 2), v), [(2, 3), ()], None),
    ("index_put", lambda x, v: x.index_put((idx(0, 1), idx(2, 0)), v), [(2, 3), (2,)], None),
    ("index_put_accumulate", lambda x, v: x.index_put((idx(1, 1),), v, accumulate=True), [(2, 3), (3,)], None),
    # linear algebra
    ("vdot", lambda a, b: torch.vdot(a, b), [(3,), (3,)], None),
    ("ger", lambda a, b: torch.ger(a, b), [(3,), (2,)], None),
    ("addmv", lambda i, m, v: torch.addmv(i, m, v, beta=0.5, alpha=2), [(2,), (2, 3), (3,)], None),
    ("addmv_broadcast", lambda i, m, v: i.addmv(m.t(), v), [(1,), (3, 2), (3,)], None),
    ("baddbmm", lambda i, a, b: torch.baddbmm(i, a, b, beta=0.5, alpha=2), [(2, 1, 2), (2, 2, 3), (2, 3, 2)], None),
    ("addbmm", lambda i, a, b: torch.addbmm(i, a, b, alpha=-1), [(2, 2), (2, 2, 3), (2, 3, 2)], None),
]


@pytest.mark.parametrize("fn,shapes,bounds", [pytest.param(c[1], c[2], c[3], id=c[0]) for c in CASES])
def test_formula_gradcheck(fn, shapes, bounds, device):
    global DEVICE
    low, high = bounds or (-1.0, 1.0)
    args = tuple(leaf(*s, device=device, low=low, high=high) for s in shapes)
    DEVICE = device  # idx() builds the index tensors on the inputs' device
    try:
        assert gradcheck(fn, args)
    finally:
        DEVICE = "cpu"


# --- einsum ---------------------------------------------------------------------------------------------
EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 2)]),          # matmul
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),  # batch matmul
    ("i,j->ij", [(3,), (2,)]),                # outer
    ("ii->", [(3, 3)]),                       # trace
    ("ii->i", [(3, 3)]),                      # diagonal
    ("ij->ji", [(2, 3)]),                     # transpose
    ("ij->", [(2, 3)]),                       # sum
    ("bi,bj->bij", [(2, 3), (2, 2)]),         # bilinear
    ("ij,jk->i", [(2, 3), (3, 2)]),           # k only in the second operand: summed out
    ("ijk,j->i", [(2, 3, 2), (3,)]),          # k only in the first operand
    ("iij->j", [(2, 2, 3)]),                  # diagonal and sum
    ("iji->ij", [(2, 3, 2)]),                 # repeated index apart
    ("iii->i", [(2, 2, 2)]),                  # three-way diagonal
    ("ii,i->i", [(3, 3), (3,)]),              # diagonal shared with another operand
    ("ij,jk", [(2, 3), (3, 2)]),              # implicit output
    ("ba", [(2, 3)]),                         # implicit output reorders
    ("ij,jk,kl->il", [(2, 2), (2, 3), (3, 2)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (1, 3, 2)]),  # broadcast ellipsis
    ("...i,...i", [(2, 3), (3,)]),
    ("i,i->i", [(3,), (1,)]),                 # a size-1 subscript broadcasts
    ("ij,j->ij", [(2, 3), (3,)]),
]


@pytest.mark.parametrize("equation,shapes", [pytest.param(e, s, id=e) for e, s in EINSUM])
def test_einsum_gradcheck(equation, shapes, device):
    args = tuple(leaf(*s, device=device) for s in shapes)
    assert gradcheck(lambda *ops: torch.einsum(equation, *ops), args)


def test_einsum_sublist_format_and_double_backward():
    a, b = leaf(2, 3), leaf(3, 2)
    assert gradcheck(lambda x, y: torch.einsum(x, [0, 1], y, [1, 2], [0, 2]), (a, b))
    assert gradcheck(lambda x: torch.einsum(x, [0, 0]), (leaf(3, 3),))
    assert gradcheck(lambda x, y: torch.einsum("ij,jk->ik", [x, y]), (a, b))  # operands as a list
    y = torch.einsum("ij,jk->", a, b)
    (ga,) = torch.autograd.grad(y, [a], create_graph=True)
    assert ga.grad_fn is not None
    # d/db of sum(ga) = d/db sum_ij sum_k b_jk = 2 for every element (a is 2 x 3)
    (gb,) = torch.autograd.grad(ga.sum(), [b])
    np.testing.assert_allclose(gb.numpy(), np.full((3, 2), 2.0))


# --- cumprod with zeros -----------------------------------------------------------------------------------
@pytest.mark.parametrize("values", [
    pytest.param([0.5, 0.0, 0.7, 1.3], id="one_zero"),
    pytest.param([0.5, 0.0, 0.7, 0.0, 2.0], id="two_zeros"),
    pytest.param([0.0, 0.5, 0.7, 1.2], id="zero_first"),
    pytest.param([0.5, 0.7, 1.2, 0.0], id="zero_last"),
    pytest.param([0.0, 0.0, 0.0], id="all_zeros"),
    pytest.param([0.5, -0.7, 1.2], id="no_zero"),
])
def test_cumprod_gradient_with_zeros(values):
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda t: t.cumprod(0), (x,))
    # hand-derived: d/dx_i sum_k cumprod_k = sum_{k>=i} prod_{j<=k, j!=i} x_j
    v = np.array(values)
    expected = [sum(np.prod(np.delete(v[:k + 1], i)) for k in range(i, len(v))) for i in range(len(v))]
    x.cumprod(0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_cumprod_zeros_along_a_dim():
    x = torch.tensor([[0.0, 0.5, 1.2], [0.7, 0.0, 0.0], [0.3, 0.9, 0.0]], dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda t: t.cumprod(1), (x,))
    assert gradcheck(lambda t: t.cumprod(0), (x,))


def test_nan_to_num_gradient_is_zero_at_non_finite():
    x = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), -2.0], dtype=torch.float64,
                     requires_grad=True)
    torch.nan_to_num(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 0, 0, 0, 1])


def test_no_derivative_ops_raise():
    x = leaf(3, low=0.5, high=1.0)
    for y in (torch.floor_divide(x, 2), x // 2, torch.remainder(2.0, x), 2.0 % x):
        assert y.requires_grad and y.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::(floor_divide|remainder) is not implemented"):
            y.sum().backward()
    with pytest.raises(RuntimeError, match="not implemented"):
        x.scatter(0, idx(0, 1), x, reduce="add").sum().backward()


def test_random_draws_have_zero_gradients():
    p = leaf(3, low=0.2, high=0.8)
    torch.bernoulli(p).sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), np.zeros(3))
    mean, std = leaf(3), leaf(3, low=0.5, high=1.0)
    y = torch.normal(mean, std)
    assert y.grad_fn.name() == "NormalBackward3"
    y.sum().backward()
    np.testing.assert_array_equal(mean.grad.numpy(), np.zeros(3))


def test_ops_returning_their_input_keep_the_leaf():
    # x.contiguous(), x.to(x.dtype), a 1-d flatten and positive return x itself: no node, x stays a leaf
    for op in (lambda t: t.contiguous(), lambda t: t.to(torch.float64), lambda t: t.double(), lambda t: t.flatten(),
               lambda t: torch.positive(t)):
        x = leaf(4)
        y = op(x)
        assert y is x and x.is_leaf and x.grad_fn is None
        (y * 2).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.full(4, 2.0))


# --- scans and NaN-aware reductions at ties, infinities and NaN (hand-derived, as PyTorch 2.15) ----------
def test_scan_and_nan_reduction_gradients_at_edges():
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([1.0, 1.0, 1.0], dtype=torch.float64, requires_grad=True)
    torch.cummax(x, 0).values.backward(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))
    assert x.grad.tolist() == [1.0, 2.0, 3.0]  # ties: each output comes from its own (latest) index
    x = torch.tensor([[1.0, 2.0], [0.0, 5.0]], dtype=torch.float64, requires_grad=True)
    torch.cummin(x, 1).values.sum().backward()
    assert x.grad.tolist() == [[2.0, 0.0], [2.0, 0.0]]
    x = torch.tensor([-inf, 2.0, -inf], dtype=torch.float64, requires_grad=True)
    torch.logcumsumexp(x, 0).sum().backward()
    g = x.grad.numpy()
    assert np.isnan(g[0]) and g[1] == 2.0 and g[2] == 0.0
    x = torch.tensor([1e4, -1e4, 3.0], dtype=torch.float64, requires_grad=True)
    torch.logcumsumexp(x, 0).sum().backward()  # no overflow
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 0.0, 0.0], atol=1e-300)
    x = torch.tensor([[1.0, nan, 3.0], [nan, nan, nan]], dtype=torch.float64, requires_grad=True)
    torch.nanmean(x, 1).sum().backward()
    g = x.grad.numpy()
    assert g[0].tolist() == [0.5, 0.0, 0.5] and np.isnan(g[1]).all()  # 0 * inf, as PyTorch
    x = torch.tensor([nan, 1.0, nan, 1.0], dtype=torch.float64, requires_grad=True)
    torch.median(x).backward()  # a NaN median is shared among the NaNs
    assert x.grad.tolist() == [0.5, 0.0, 0.5, 0.0]
    x = torch.tensor([nan, 2.0, 2.0, nan, 1.0], dtype=torch.float64, requires_grad=True)
    torch.nanmedian(x).backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 0.0, 0.0]
    x = torch.tensor([[2.0, nan], [nan, nan]], dtype=torch.float64, requires_grad=True)
    torch.nanmedian(x, 1).values.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0], [1.0, 0.0]]
    x = torch.tensor([nan, nan], dtype=torch.float64, requires_grad=True)
    torch.nanmedian(x).backward()
    assert x.grad.tolist() == [0.5, 0.5]


# --- node names: hand-checked against PyTorch 2.15 (y.grad_fn.name()) ------------------------------------
def _l(*shape):
    return leaf(*shape)


NAMES = [
    ("SumBackward0", lambda: _l(3, 4).sum()), ("SumBackward1", lambda: _l(3, 4).sum(1)),
    ("SumBackward0", lambda: _l(3, 4).sum(dtype=torch.float32)), ("SumBackward1", lambda: _l(3, 4).sum(dim=())),
    ("MeanBackward0", lambda: _l(3, 4).mean()), ("MeanBackward1", lambda: _l(3, 4).mean(0)),
    ("NansumBackward0", lambda: _l(3, 4).nansum(1)), ("SumBackward1", lambda: _l(3, 4).sum_to_size(1, 4)),
    ("ProdBackward0", lambda: _l(3, 4).prod()), ("ProdBackward1", lambda: _l(3, 4).prod(1)),
    ("MaxBackward1", lambda: _l(3, 4).max()), ("MaxBackward0", lambda: _l(3, 4).max(1)[0]),
    ("MinBackward1", lambda: _l(3, 4).min()), ("MaximumBackward0", lambda: torch.max(_l(3), _l(3))),
    ("AminmaxBackward0", lambda: _l(3, 4).aminmax()[0]), ("MedianBackward0", lambda: _l(3, 4).median()),
    ("MedianBackward1", lambda: _l(3, 4).median(1)[0]), ("VarMeanBackward0", lambda: torch.var_mean(_l(3, 4))[1]),
    ("KthvalueBackward0", lambda: _l(3, 4).kthvalue(2)[0]), ("ModeBackward0", lambda: torch.mode(_l(3, 4), 0)[0]),
    ("SortBackward0", lambda: torch.msort(_l(3, 4))), ("SqueezeBackward4", lambda: torch.quantile(_l(3, 4), 0.5)),
    ("SqueezeBackward4", lambda: _l(3, 4).nanquantile(_l(2) * 0.1 + 0.5, 1, True, interpolation="lower")),
    ("StdMeanBackward0", lambda: torch.std_mean(_l(3, 4), 1)[0]),
    ("LinalgVectorNormBackward0", lambda: _l(3, 4).norm()), ("LinalgVectorNormBackward0", lambda: _l(3, 4).norm(p=1)),
    ("LinalgVectorNormBackward0", lambda: _l(3, 4).norm(p="fro", dim=(0, 1))),
    ("CumprodBackward0", lambda: _l(3, 4).cumprod(1)),
    ("CummaxBackward0", lambda: _l(3, 4).cummax(1)[0]), ("CumminBackward0", lambda: torch.cummin(_l(3, 4), 0)[0]),
    ("LogcumsumexpBackward0", lambda: _l(3, 4).logcumsumexp(1)), ("DivBackward0", lambda: _l(3, 4).nanmean(1)),
    ("DivBackward0", lambda: torch.nanmean(_l(3, 4))), ("NanmedianBackward0", lambda: _l(3, 4).nanmedian()),
    ("NanmedianBackward1", lambda: _l(3, 4).nanmedian(1)[0]),
    ("AsinBackward0", lambda: _l(3).arcsin()), ("AsinhBackward0", lambda: torch.arcsinh(_l(3))),
    ("AtanhBackward0", lambda: torch.atanh(_l(3) * 0.5)), ("ErfBackward0", lambda: torch.erf(_l(3))),
    ("ErfcBackward0", lambda: torch.erfc(_l(3))), ("SgnBackward0", lambda: torch.sgn(_l(3))),
    ("TruncBackward0", lambda: torch.fix(_l(3))), ("NanToNumBackward0", lambda: torch.nan_to_num(_l(3))),
    ("RoundBackward1", lambda: torch.round(_l(3), decimals=2)), ("SoftplusBackward0", lambda: F.softplus(_l(3))),
    ("RsubBackward1", lambda: 2 - _l(3)), ("RsubBackward1", lambda: torch.rsub(_l(3), 2)),
    ("RsubBackward0", lambda: torch.rsub(_l(3), _l(3))), ("MulBackward0", lambda: 2 / _l(3)),
    ("DivBackward2", lambda: torch.div(_l(3), 2, rounding_mode="floor")),
    ("PowBackward0", lambda: _l(3) ** 2), ("PowBackward1", lambda: _l(3) ** _l(3)), ("PowBackward2", lambda: 2 ** _l(3)),
    ("PowBackward2", lambda: torch.pow(2, _l(3))), ("PowBackward1", lambda: torch.float_power(_l(3), _l(3))),
    ("Atan2Backward0", lambda: torch.arctan2(_l(3), _l(3))), ("HypotBackward0", lambda: torch.hypot(_l(3), _l(3))),
    ("LogaddexpBackward0", lambda: torch.logaddexp(_l(3), _l(3))),
    ("Logaddexp2Backward0", lambda: torch.logaddexp2(_l(3), _l(3))),
    ("CopysignBackward0", lambda: torch.copysign(_l(3), _l(3))), ("CopysignBackward1", lambda: torch.copysign(_l(3), 1.0)),
    ("RemainderBackward1", lambda: torch.remainder(_l(3), _l(3))), ("RemainderBackward0", lambda: _l(3) % 0.3),
    ("FmodBackward1", lambda: torch.fmod(_l(3), _l(3))), ("FmodBackward0", lambda: torch.fmod(_l(3), 0.3)),
    ("LerpBackward0", lambda: torch.lerp(_l(3), _l(3), 0.3)), ("LerpBackward1", lambda: torch.lerp(_l(3), _l(3), _l(3))),
    ("ClampBackward0", lambda: _l(3).clamp(min=_l(3))), ("ClampBackward1", lambda: _l(3).clamp(-0.5, 0.5)),
    ("ClampMinBackward1", lambda: torch.clamp_min(_l(3), _l(3))),
    ("UnsafeViewBackward0", lambda: _l(3, 4).t().reshape(12)), ("ViewBackward0", lambda: _l(3, 4).reshape(12)),
    ("ReshapeAliasBackward0", lambda: _l(3, 4).t().reshape(2, 2, 3)),
    ("UnsafeViewBackward0", lambda: _l(2, 3, 4).transpose(1, 2).flatten(1)),
    ("SqueezeBackward0", lambda: _l(3, 1).squeeze()), ("SqueezeBackward1", lambda: _l(3, 1).squeeze(1)),
    ("SqueezeBackward2", lambda: _l(3, 1).squeeze((1,))), ("PermuteBackward0", lambda: _l(2, 3, 4).movedim(0, 2)),
    ("SplitWithSizesBackward0", lambda: _l(3, 4).split([1, 3], 1)[0]), ("SplitBackward0", lambda: _l(3, 4).split(2)[0]),
    ("DiagEmbedBackward0", lambda: torch.diag(_l(4))), ("DiagonalBackward0_copy", lambda: torch.diag(_l(3, 4))),
    ("DiagonalBackward0", lambda: _l(3, 4).diagonal()), ("FlipBackward0", lambda: torch.fliplr(_l(3, 4))),
    ("RepeatBackward0", lambda: _l(3, 4).tile(2, 1)), ("CatBackward0", lambda: torch.hstack([_l(4), _l(4)])),
    ("CatBackward0", lambda: torch.dstack([_l(3, 4), _l(3, 4)])),
    ("SelectBackward0", lambda: _l(3, 4)[1]), ("SliceBackward0", lambda: _l(3, 4)[1:]),
    ("SliceBackward0", lambda: _l(3, 4)[:]), ("UnsqueezeBackward0", lambda: _l(3, 4)[None]),
    ("AliasBackward0", lambda: _l(3, 4)[...]), ("SelectBackward0", lambda: _l(3, 4)[1:, 2]),
    ("SliceBackward0", lambda: _l(3, 4)[1, 1:]), ("AliasBackward0", lambda: _l(3, 4)[:, :]),
    ("SelectBackward0", lambda: _l(3, 4)[None, 1]), ("UnsqueezeBackward0", lambda: _l(3, 4)[1, :, None]),
    ("SelectBackward0", lambda: _l(3, 4)[torch.tensor(1)]), ("IndexBackward0", lambda: _l(3, 4)[[0, 2]]),
    ("IndexBackward0", lambda: _l(3, 4)[True]), ("IndexBackward0", lambda: _l(3, 4)[1:, [0, 1]]),
    ("TakeBackward0", lambda: _l(3, 4).take(idx(0, 5))),
    ("MaskedSelectBackward0", lambda: _l(3, 4).masked_select(idx(True, False, True, True))),
    ("MaskedFillBackward1", lambda: _l(3).masked_fill(idx(True, False, True), torch.tensor(1.0))),
    ("ScatterBackward1", lambda: _l(3, 4).scatter(1, idx([0], [1], [2]), 1.5)),
    ("IndexAddBackward0", lambda: _l(3, 4).index_add(0, idx(0, 2), _l(2, 4))),
    ("IndexCopyBackward0", lambda: _l(3, 4).index_copy(0, idx(0, 2), _l(2, 4))),
    ("IndexFillBackward0", lambda: _l(3, 4).index_fill(0, idx(0, 2), 1.5)),
    ("IndexPutBackward0", lambda: _l(3, 4).index_put((idx(0, 2),), _l(2, 4))),
    ("DotBackward0", lambda: _l(4) @ _l(4)), ("MvBackward0", lambda: _l(3, 4) @ _l(4)),
    ("SqueezeBackward4", lambda: _l(4) @ _l(4, 2)), ("MmBackward0", lambda: _l(3, 4) @ _l(4, 2)),
    ("UnsafeViewBackward0", lambda: _l(2, 3, 4) @ _l(2, 4, 2)), ("UnsafeViewBackward0", lambda: _l(2, 3, 4) @ _l(4)),
    ("CloneBackward0", lambda: _l(3, 4) @ _l(2, 4, 2)), ("BmmBackward0", lambda: torch.bmm(_l(2, 3, 4), _l(2, 4, 2))),
    ("VdotBackward0", lambda: torch.vdot(_l(4), _l(4))), ("MulBackward0", lambda: torch.outer(_l(3), _l(4))),
    ("AddmvBackward0", lambda: torch.addmv(_l(3), _l(3, 4), _l(4))),
    ("BaddbmmBackward0", lambda: torch.baddbmm(_l(2, 3, 2), _l(2, 3, 4), _l(2, 4, 2))),
    ("AddbmmBackward0", lambda: torch.addbmm(_l(3, 2), _l(2, 3, 4), _l(2, 4, 2))),
    ("ViewBackward0", lambda: torch.einsum("ij,jk->ik", _l(3, 4), _l(4, 2))),
    ("MulBackward0", lambda: torch.einsum("bi,bj->bij", _l(2, 3), _l(2, 4))),
    ("SumBackward1", lambda: torch.einsum("ii->", _l(3, 3))), ("PermuteBackward0", lambda: torch.einsum("ii->i", _l(3, 3))),
    ("PermuteBackward0", lambda: torch.einsum("ij->ji", _l(3, 4))), ("ViewBackward0", lambda: torch.einsum("i,i", _l(3), _l(3))),
    ("BernoulliBackward0", lambda: torch.bernoulli(_l(3) * 0.5 + 0.5)),
]


@pytest.mark.parametrize("expected,fn", [pytest.param(e, f, id=f"{i}-{e}") for i, (e, f) in enumerate(NAMES)])
def test_node_names_match_pytorch(expected, fn):
    assert fn().grad_fn.name() == expected


def test_quantile_graph_and_q_gradient_follow_pytorch():
    """quantile is PyTorch's composition (sort, gather, lerp, squeeze_), so its graph and its
    gradients are PyTorch's: q gets one through the linear weights only (checked against
    PyTorch 2.15), and a line with a NaN sends everything to the NaN."""
    x = torch.tensor([[1.0, 5.0, 2.0, 8.0], [3.0, float("nan"), 0.0, 4.0]], dtype=torch.float64, requires_grad=True)
    q = torch.tensor([0.3, 0.5], dtype=torch.float64, requires_grad=True)
    y = torch.quantile(x, 0.3, dim=1)
    assert [f.name() for f, _ in y.grad_fn.next_functions] == ["LerpBackward1"]
    torch.quantile(x, q, dim=1).sum().backward()
    np.testing.assert_allclose(q.grad.numpy(), [3.0, 9.0])
    np.testing.assert_allclose(x.grad.numpy(), [[0.1, 0.5, 1.4, 0.0], [0.0, 2.0, 0.0, 0.0]])
    x.grad = q.grad = None
    torch.nanquantile(x, q, dim=1, interpolation="lower").sum().backward()
    assert q.grad is None  # no path from q through the rounded ranks
    np.testing.assert_allclose(x.grad.numpy(), [[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0]])


def test_where_method_routes_gradients_like_the_function():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.zeros(3, requires_grad=True)
    c = torch.tensor([True, False, True])
    z = x.where(c, y)
    assert z.grad_fn.name() == "WhereBackward0"
    (z * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert z.tolist() == [1.0, 0.0, 3.0]
    assert x.grad.tolist() == [1.0, 0.0, 3.0]
    assert y.grad.tolist() == [0.0, 2.0, 0.0]


@pytest.mark.parametrize("call,name", [
    (lambda x: x.reshape(shape=(3, 2)), "ViewBackward0"),
    (lambda x: torch.reshape(x, shape=(6,)), "ViewBackward0"),
    (lambda x: x.view(size=(6,)), "ViewBackward0"),
    (lambda x: x.expand(size=(2, 2, 3)), "ExpandBackward0"),
    (lambda x: x.permute(dims=(1, 0)), "PermuteBackward0"),
    (lambda x: x.repeat(repeats=(2, 1)), "RepeatBackward0"),
    (lambda x: x.tile(dims=(2,)), "RepeatBackward0"),
])
def test_sizes_given_by_keyword_record_like_positional(call, name):
    x = torch.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = call(x)
    assert y.grad_fn.name() == name
    assert gradcheck(call, (x,))


@pytest.mark.parametrize("call,name", [
    (lambda x: x.view(1, 1, 1, 1, 1, 1, 2, 3), "ViewBackward0"),
    (lambda x: x.reshape(1, 1, 1, 1, 1, 1, 1, 6), "ViewBackward0"),
    (lambda x: x.view(1, 1, 1, 1, 1, 1, 2, 3).permute(7, 6, 5, 4, 3, 2, 1, 0), "PermuteBackward0"),
    (lambda x: x.view(1, 1, 1, 1, 1, 1, 2, 3).expand(1, 1, 1, 1, 1, 1, 2, 3), "ExpandBackward0"),
    (lambda x: x.repeat(1, 1, 1, 1, 1, 1, 1, 2, 1), "RepeatBackward0"),
])
def test_more_than_seven_positional_sizes_record(call, name):
    """Sizes beyond the formula's seven slots (view(1, ..., 8 sizes)) record like the tuple form."""
    x = torch.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = call(x)
    assert y.grad_fn.name() == name
    assert gradcheck(call, (x,))


def _spd(m):
    """A symmetric positive-definite matrix built from any square m, so finite differences in every
    direction stay in cholesky's domain."""
    return m @ m.mT + 3 * torch.eye(m.shape[-1], dtype=m.dtype, device=m.device)


# second derivatives that were wrong: formulas that read the op's saved output (under create_graph
# the output must carry its history, or the second derivative treats it as a constant: linalg.inv's
# was wrong that way), i0's (its derivative i1 computed unrecorded), and avg_pool's backward when
# padding was left out (local_response_norm's pool raised TypeError)
SECOND_ORDER_CASES = [
    ("inv", lambda a: torch.linalg.inv(a + 3 * torch.eye(3, dtype=a.dtype, device=a.device)), [(3, 3)]),
    ("det", lambda a: torch.linalg.det(a), [(3, 3)]),
    ("solve", lambda a, b: torch.linalg.solve(a + 3 * torch.eye(3, dtype=a.dtype, device=a.device), b),
     [(3, 3), (3, 2)]),
    ("solve_triangular", lambda a, b: torch.linalg.solve_triangular(
        a.triu() + 3 * torch.eye(3, dtype=a.dtype, device=a.device), b, upper=True), [(3, 3), (3, 2)]),
    ("cholesky", lambda a: torch.linalg.cholesky(_spd(a)), [(3, 3)]),
    ("cholesky_inverse", lambda a: torch.cholesky_inverse(torch.linalg.cholesky(_spd(a))), [(3, 3)]),
    ("cholesky_solve", lambda a, b: torch.cholesky_solve(b, torch.linalg.cholesky(_spd(a))), [(3, 3), (3, 2)]),
    ("qr", lambda a: torch.linalg.qr(a + 3 * torch.eye(3, dtype=a.dtype, device=a.device)), [(3, 3)]),
    ("cdist", lambda a, b: torch.cdist(a, b), [(4, 3), (5, 3)]),
    ("eigh", lambda a: torch.linalg.eigh(a + a.mT), [(3, 3)]),
    ("svd", lambda a: torch.linalg.svd(a, full_matrices=False), [(4, 3)]),
    ("exp", lambda a: torch.exp(a), [(2, 3)]),
    ("i0", lambda a: torch.i0(a), [(2, 3)]),
    ("local_response_norm", lambda a: F.local_response_norm(a, 2), [(1, 3, 2)]),
    ("avg_pool2d_no_padding", lambda a: torch._C.avg_pool2d(a, 2), [(1, 1, 4, 4)]),
    ("copysign", lambda a, b: torch.copysign(a, b) ** 2, [(2, 3), (2, 3)]),
    ("identity", lambda a: a, [(2, 3)]),
]


@pytest.mark.parametrize("fn,shapes", [pytest.param(f, s, id=i) for i, f, s in SECOND_ORDER_CASES])
def test_second_derivatives(fn, shapes):
    assert torch.autograd.gradgradcheck(fn, tuple(leaf(*s) for s in shapes))


class _FrozenSquare(torch.autograd.Function):
    """x**2 whose backward detaches x: right first derivative, wrong second."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x.detach()


def test_gradgradcheck_catches_a_wrong_double_backward():
    x = leaf(3)
    assert gradcheck(_FrozenSquare.apply, (x,))
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        torch.autograd.gradgradcheck(_FrozenSquare.apply, (x,))
    assert not torch.autograd.gradgradcheck(_FrozenSquare.apply, (x,), raise_exception=False)
