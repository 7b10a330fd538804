"""nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm, orthogonal), the old
hook-based nn.utils.weight_norm / spectral_norm, and the initialisers eye_, dirac_, orthogonal_,
sparse_. Names, shapes and state-dict keys as PyTorch's (written out by hand); numerics against
NumPy; gradients with gradcheck in float64."""
import math
import warnings

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
from ctorch.autograd import gradcheck
from ctorch.nn.utils import parametrizations as P
from ctorch.nn.utils import parametrize

from conftest import to_numpy


def _named_shapes(items):
    return [(name, tuple(t.shape)) for name, t in items]


def _np_weight_norm(g, v, dim):
    """g * v / ||v||, the norm over every axis but dim (all axes for dim=None)."""
    if dim is None:
        return g * v / np.sqrt((v ** 2).sum())
    axes = tuple(a for a in range(v.ndim) if a != dim % v.ndim)
    return g * v / np.sqrt((v ** 2).sum(axis=axes, keepdims=True))


class _Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).T


class _Scale(nn.Module):
    """x -> 2x, with its right inverse."""

    def forward(self, x):
        return 2 * x

    def right_inverse(self, x):
        return x / 2


# --- parametrize -----------------------------------------------------------------------------------------------------
def test_register_layout_and_remove():
    m = nn.Linear(3, 3)
    original = m.weight
    parametrize.register_parametrization(m, "weight", _Symmetric())
    assert type(m).__name__ == "ParametrizedLinear" and parametrize.type_before_parametrizations(m) is nn.Linear
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert m.parametrizations.weight.original is original  # the Parameter itself moves
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    w = to_numpy(original)
    np.testing.assert_allclose(to_numpy(m.weight), np.triu(w) + np.triu(w, 1).T, rtol=1e-6)
    assert m.weight.grad_fn is not None
    assert repr(m) == ("ParametrizedLinear(\n  in_features=3, out_features=3, bias=True\n"
                       "  (parametrizations): ModuleDict(\n    (weight): ParametrizationList(\n"
                       "      (0): _Symmetric()\n    )\n  )\n)")
    # a second parametrization chains after the first
    parametrize.register_parametrization(m, "weight", _Scale())
    np.testing.assert_allclose(to_numpy(m.weight), 2 * (np.triu(w) + np.triu(w, 1).T), rtol=1e-6)
    expected = to_numpy(m.weight)
    parametrize.remove_parametrizations(m, "weight")  # leave_parametrized=True keeps the value...
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    assert m.weight is original  # ...in the same Parameter
    np.testing.assert_allclose(to_numpy(m.weight), expected, rtol=1e-6)
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight"]


def test_remove_leave_unparametrized():
    m = nn.Linear(3, 3)
    w = to_numpy(m.weight)
    parametrize.register_parametrization(m, "weight", _Symmetric())
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    np.testing.assert_array_equal(to_numpy(m.weight), w)
    assert isinstance(m.weight, nn.Parameter)


def test_right_inverse_assignment_and_buffer():
    m = nn.Linear(2, 3)
    m.register_buffer("scale", ctorch.tensor([1.0, 4.0]))
    parametrize.register_parametrization(m, "scale", _Scale())  # right_inverse halves the original
    np.testing.assert_array_equal(to_numpy(m.parametrizations.scale.original), [0.5, 2.0])
    np.testing.assert_array_equal(to_numpy(m.scale), [1.0, 4.0])
    assert "parametrizations.scale.original" in m.state_dict()
    assert not any("scale" in n for n, _ in m.named_parameters())
    m.scale = ctorch.tensor([6.0, 8.0])  # assignment runs right_inverse into the original
    np.testing.assert_array_equal(to_numpy(m.parametrizations.scale.original), [3.0, 4.0])
    np.testing.assert_array_equal(to_numpy(m.scale), [6.0, 8.0])


def test_cached():
    m = nn.Linear(2, 2)
    parametrize.register_parametrization(m, "weight", _Scale())
    assert m.weight is not m.weight
    with parametrize.cached():
        first = m.weight
        assert m.weight is first
        with parametrize.cached():
            assert m.weight is first
        assert m.weight is first
    assert m.weight is not first


def test_parametrize_errors():
    m = nn.Linear(3, 4)

    class Rows(nn.Module):
        def forward(self, x):
            return x[:2]

    with pytest.raises(ValueError, match=r"may not change the shape of the tensor, unless `unsafe` flag is enabled.\n"
                                         r"unparametrized shape: torch.Size\(\[4, 3\]\)\n"
                                         r"parametrized shape: torch.Size\(\[2, 3\]\)"):
        parametrize.register_parametrization(m, "weight", Rows())
    parametrize.register_parametrization(m, "weight", Rows(), unsafe=True)
    assert tuple(m.weight.shape) == (2, 3)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with name "
                                         "'foo'"):
        parametrize.register_parametrization(m, "foo", _Symmetric())
    with pytest.raises(ValueError,
                       match=r"^Module ParametrizedLinear\(\n(.|\n)* does not have a parametrization on bias$"):
        parametrize.remove_parametrizations(m, "bias")
    s = nn.Linear(3, 3)
    parametrize.register_parametrization(s, "weight", _Symmetric())
    with pytest.raises(RuntimeError, match="^parametrization _Symmetric does not implement right_inverse.$"):
        s.weight = ctorch.eye(3)
    w = nn.Linear(3, 4)
    P.weight_norm(w)
    with pytest.raises(ValueError, match=r"Cannot leave unparametrized \(`leave_parametrized=False`\) a tensor that "
                                         "is parametrized in terms of a sequence of tensors."):
        parametrize.remove_parametrizations(w, "weight", leave_parametrized=False)


# --- weight_norm -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim,g_shape", [(0, (4, 1, 1, 1)), (1, (1, 2, 1, 1)), (-3, (1, 2, 1, 1)), (None, ())])
def test_weight_norm_conv(dim, g_shape):
    m = nn.Conv2d(2, 4, 3)
    w = to_numpy(m.weight)
    P.weight_norm(m, dim=dim)
    assert _named_shapes(m.named_parameters()) == [
        ("bias", (4,)), ("parametrizations.weight.original0", g_shape),
        ("parametrizations.weight.original1", (4, 2, 3, 3))]
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    np.testing.assert_allclose(to_numpy(m.weight), w, rtol=1e-5, atol=1e-6)  # g = ||v|| at registration
    g = np.random.default_rng(0).random(g_shape).astype(np.float32) + 0.5
    with ctorch.no_grad():
        m.parametrizations.weight.original0.copy_(ctorch.tensor(g))
    np.testing.assert_allclose(to_numpy(m.weight), _np_weight_norm(g, w, dim), rtol=1e-5, atol=1e-6)
    parametrize.remove_parametrizations(m, "weight")
    assert _named_shapes(m.named_parameters()) == [("bias", (4,)), ("weight", (4, 2, 3, 3))]
    np.testing.assert_allclose(to_numpy(m.weight), _np_weight_norm(g, w, dim), rtol=1e-5, atol=1e-6)


def test_weight_norm_grad_and_assignment():
    m = nn.Linear(3, 4).double()
    P.weight_norm(m)
    g, v = m.parametrizations.weight.original0, m.parametrizations.weight.original1
    x = ctorch.randn(5, 3, dtype=ctorch.float64)
    m(x).pow(2).sum().backward()
    assert g.grad is not None and v.grad is not None and tuple(g.grad.shape) == (4, 1)
    # the gradients equal those of the formula written out
    g2, v2 = g.detach().clone().requires_grad_(), v.detach().clone().requires_grad_()
    w2 = v2 * g2 / v2.pow(2).sum(1, keepdim=True).sqrt()
    ((x @ w2.T + m.bias.detach()).pow(2).sum()).backward()
    np.testing.assert_allclose(to_numpy(g.grad), to_numpy(g2.grad), rtol=1e-10)
    np.testing.assert_allclose(to_numpy(v.grad), to_numpy(v2.grad), rtol=1e-10)
    wn = P._WeightNorm(0)
    assert gradcheck(wn, (g2.detach().requires_grad_(), v2.detach().requires_grad_()))
    # assignment goes through right_inverse: g = ||W|| per row, v = W
    new = np.arange(12.0).reshape(4, 3) - 5
    m.weight = ctorch.tensor(new)
    np.testing.assert_allclose(to_numpy(g), np.linalg.norm(new, axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_array_equal(to_numpy(v), new)
    np.testing.assert_allclose(to_numpy(m.weight), new, atol=1e-12)


def test_weight_norm_old_state_dict_loads():
    old = nn.Linear(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        nn.utils.weight_norm(old)
    assert list(old.state_dict()) == ["bias", "weight_g", "weight_v"]
    new = nn.Linear(3, 4)
    P.weight_norm(new)
    new.load_state_dict(old.state_dict())
    np.testing.assert_array_equal(to_numpy(new.parametrizations.weight.original0), to_numpy(old.weight_g))
    np.testing.assert_allclose(to_numpy(new.weight), to_numpy(old.weight), rtol=1e-6)


def test_old_weight_norm():
    m = nn.Linear(3, 4)
    w = to_numpy(m.weight)
    with pytest.warns(FutureWarning, match="`torch.nn.utils.weight_norm` is deprecated in favor of "
                                           "`torch.nn.utils.parametrizations.weight_norm`."):
        nn.utils.weight_norm(m, dim=None)
    assert _named_shapes(m.named_parameters()) == [("bias", (4,)), ("weight_g", ()), ("weight_v", (4, 3))]
    assert type(m) is nn.Linear and not isinstance(m.weight, nn.Parameter)
    with ctorch.no_grad():
        m.weight_g.fill_(2.0)
    m(ctorch.randn(2, 3)).sum().backward()  # the pre-hook recomputes weight
    np.testing.assert_allclose(to_numpy(m.weight), _np_weight_norm(2.0, w, None), rtol=1e-5)
    assert m.weight_g.grad is not None and m.weight_v.grad is not None
    with pytest.raises(RuntimeError, match="^Cannot register two weight_norm hooks on the same parameter weight$"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            nn.utils.weight_norm(m)
    nn.utils.remove_weight_norm(m)
    assert _named_shapes(m.named_parameters()) == [("bias", (4,)), ("weight", (4, 3))] and not m._forward_pre_hooks
    np.testing.assert_allclose(to_numpy(m.weight), _np_weight_norm(2.0, w, None), rtol=1e-5)
    with pytest.raises(ValueError, match=r"^weight_norm of 'weight' not found in Linear\(in_features=3"):
        nn.utils.remove_weight_norm(m)


# --- spectral_norm ---------------------------------------------------------------------------------------------------
def _top_singular(mat):
    return np.linalg.svd(mat.reshape(mat.shape[0], -1), compute_uv=False)[0]


def test_spectral_norm_layout_and_numerics():
    ctorch.manual_seed(0)
    m = nn.Linear(5, 4)
    w = to_numpy(m.weight)
    P.spectral_norm(m, n_power_iterations=30)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original", "parametrizations.weight.0._u",
                                    "parametrizations.weight.0._v"]
    assert _named_shapes(m.named_buffers()) == [("parametrizations.weight.0._u", (4,)),
                                                ("parametrizations.weight.0._v", (5,))]
    assert _named_shapes(m.named_parameters()) == [("bias", (4,)), ("parametrizations.weight.original", (4, 5))]
    np.testing.assert_allclose(to_numpy(m.weight), w / _top_singular(w), rtol=1e-4, atol=1e-6)
    u = to_numpy(m.parametrizations.weight[0]._u)
    np.testing.assert_allclose(np.abs(u), np.abs(np.linalg.svd(w)[0][:, 0]), atol=1e-4)
    # training: every read advances u and v in place; eval: they stay
    u_buf = m.parametrizations.weight[0]._u
    before = to_numpy(u_buf)
    with ctorch.no_grad():
        m.parametrizations.weight.original.mul_(ctorch.tensor(np.linspace(1, 2, 5), dtype=ctorch.float32))
    m.eval()
    m.weight
    np.testing.assert_array_equal(to_numpy(u_buf), before)
    m.train()
    m.weight
    assert m.parametrizations.weight[0]._u is u_buf and not np.array_equal(to_numpy(u_buf), before)


def test_spectral_norm_conv_transpose_dim_and_vector():
    m = nn.ConvTranspose2d(2, 3, 3)  # weight (2, 3, 3, 3): outputs are dim 1
    P.spectral_norm(m)
    assert _named_shapes(m.named_buffers()) == [("parametrizations.weight.0._u", (3,)),
                                                ("parametrizations.weight.0._v", (18,))]
    b = nn.Linear(2, 3)
    P.spectral_norm(b, "bias")  # a vector is just normalized
    np.testing.assert_allclose(to_numpy(b.bias), to_numpy(b.parametrizations.bias.original) /
                               np.linalg.norm(to_numpy(b.parametrizations.bias.original)), rtol=1e-6)
    with pytest.raises(ValueError, match="^Expected n_power_iterations to be positive, but got n_power_iterations=0$"):
        P.spectral_norm(nn.Linear(3, 3), n_power_iterations=0)
    with pytest.raises(IndexError,
                       match=r"^Dimension out of range \(expected to be in range of \[-2, 1\] but got 2\)$"):
        P.spectral_norm(nn.Linear(3, 3), dim=2)


def test_spectral_norm_gradcheck():
    m = nn.Linear(3, 4).double()
    P.spectral_norm(m)
    sn = m.parametrizations.weight[0].eval()  # fixed u, v: W -> W / (u^T W v)
    assert gradcheck(sn, (ctorch.randn(4, 3, dtype=ctorch.float64, requires_grad=True),))
    m.train()
    m(ctorch.randn(2, 3, dtype=ctorch.float64)).sum().backward()
    assert m.parametrizations.weight.original.grad is not None


def test_old_spectral_norm():
    ctorch.manual_seed(1)
    m = nn.Linear(4, 3)
    w = to_numpy(m.weight)
    nn.utils.spectral_norm(m, n_power_iterations=40)
    assert _named_shapes(m.named_parameters()) == [("bias", (3,)), ("weight_orig", (3, 4))]
    assert _named_shapes(m.named_buffers()) == [("weight_u", (3,)), ("weight_v", (4,))]
    sd = m.state_dict()
    assert list(sd) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert sd._metadata[""]["spectral_norm"] == {"weight.version": 1}
    m(ctorch.randn(2, 4)).sum().backward()
    np.testing.assert_allclose(to_numpy(m.weight), w / _top_singular(w), rtol=1e-4, atol=1e-6)
    assert m.weight_orig.grad is not None
    other = nn.Linear(4, 3)
    nn.utils.spectral_norm(other)
    other.load_state_dict(m.state_dict())
    np.testing.assert_array_equal(to_numpy(other.weight_u), to_numpy(m.weight_u))
    # a version-0 state dict (weight, weight_orig, weight_u; no weight_v): weight_v is solved so that
    # u^T W v = sigma = mean(weight_orig / weight)
    old = {"bias": sd["bias"], "weight_orig": sd["weight_orig"], "weight_u": sd["weight_u"],
           "weight": sd["weight_orig"] / 2.5}
    other.load_state_dict(old)
    u, v, w_orig = (to_numpy(t) for t in (other.weight_u, other.weight_v, other.weight_orig))
    np.testing.assert_allclose(u @ w_orig @ v, 2.5, rtol=1e-4)
    with pytest.raises(RuntimeError, match="^Cannot register two spectral_norm hooks on the same parameter weight$"):
        nn.utils.spectral_norm(m)
    nn.utils.remove_spectral_norm(m)
    assert _named_shapes(m.named_parameters()) == [("bias", (3,)), ("weight", (3, 4))]
    assert not m._forward_pre_hooks and not m._state_dict_hooks and not m._load_state_dict_pre_hooks
    with pytest.raises(ValueError, match=r"^spectral_norm of 'weight' not found in Linear\(in_features=4"):
        nn.utils.remove_spectral_norm(m)


# --- orthogonal ------------------------------------------------------------------------------------------------------
def _np_q(a):
    """The Q factor of a tall a with R's diagonal positive."""
    q, r = np.linalg.qr(a)
    return q * np.sign(np.diag(r))


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (3, 3)], ids=["tall", "wide", "square"])
@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
def test_orthogonal(shape, orthogonal_map):
    m = nn.Linear(shape[1], shape[0]).double()
    w = to_numpy(m.weight)
    P.orthogonal(m, orthogonal_map=orthogonal_map)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original", "parametrizations.weight.0.base"]
    chosen = orthogonal_map or ("matrix_exp" if shape[0] == shape[1] else "householder")
    assert m.parametrizations.weight[0].orthogonal_map.name == chosen
    q = to_numpy(m.weight)
    expected = _np_q(w.T).T if shape[0] < shape[1] else _np_q(w)  # the initial value: w's Q factor
    np.testing.assert_allclose(q, expected, atol=1e-10)
    # the original moves freely off its diagonal (householder reads the diagonal's signs, .int()
    # of -1 + noise, as PyTorch); the weight stays orthogonal and differentiable in it
    noise = np.random.default_rng(1).normal(size=shape) * (1 - np.eye(*shape))
    with ctorch.no_grad():
        m.parametrizations.weight.original.add_(ctorch.tensor(noise * 0.3))
    q = to_numpy(m.weight)
    gram = q.T @ q if shape[0] >= shape[1] else q @ q.T
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-10)
    orth = m.parametrizations.weight[0]
    x = m.parametrizations.weight.original.detach().clone()
    x.diagonal().fill_(-1.5)  # away from .int()'s jump at -1
    x.requires_grad_()
    assert gradcheck(orth, (x,))


def test_orthogonal_errors_and_no_trivialization():
    with pytest.raises(ValueError, match="^Expected a matrix or batch of matrices. Got a tensor of 1 dimensions.$"):
        P.orthogonal(nn.Linear(3, 3), "bias")
    with pytest.raises(ValueError, match='^orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                                         "Got: foo$"):
        P.orthogonal(nn.Linear(3, 3), orthogonal_map="foo")
    for features in [(3, 4), (5, 3)]:  # householder without a base: the reflectors of geqrf, as PyTorch
        m = nn.Linear(*features).double()
        w = to_numpy(m.weight)
        P.orthogonal(m, use_trivialization=False)
        assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
        expected = _np_q(w.T).T if features[1] < features[0] else _np_q(w)
        np.testing.assert_allclose(to_numpy(m.weight), expected, atol=1e-10)
    m = nn.Linear(3, 3).double()
    P.orthogonal(m, use_trivialization=False)  # exp of the original's skew part, no base
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    a = np.tril(to_numpy(m.parametrizations.weight.original))
    q = to_numpy(m.weight)
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-10)
    eigenvalues, vectors = np.linalg.eig(a - a.T)
    np.testing.assert_allclose(q, (vectors @ np.diag(np.exp(eigenvalues)) @ np.linalg.inv(vectors)).real, atol=1e-10)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        m.weight = ctorch.eye(3, dtype=ctorch.float64)


def test_parametrizations_on_device(device):
    m = nn.Linear(3, 4).to(device)
    w = to_numpy(m.weight)
    P.weight_norm(m)
    P.spectral_norm(m, n_power_iterations=30)
    y = m(ctorch.randn(2, 3, device=device))
    y.sum().backward()
    assert m.parametrizations.weight.original0.grad.device.type == device
    np.testing.assert_allclose(to_numpy(m.weight), w / _top_singular(w), rtol=1e-4, atol=1e-6)
    o = P.orthogonal(nn.Linear(3, 3).to(device))
    q = to_numpy(o.weight)
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-5)


# --- init ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (6, 2, 2), (2, 3, 2)])
def test_orthogonal_init(device, shape):
    gen = ctorch.Generator().manual_seed(0) if device == "cpu" else None
    t = ctorch.empty(*shape, device=device)
    assert nn.init.orthogonal_(t, gain=2.0, generator=gen) is t
    f = to_numpy(t).reshape(shape[0], -1)
    gram = f @ f.T if f.shape[0] <= f.shape[1] else f.T @ f
    np.testing.assert_allclose(gram, 4 * np.eye(min(f.shape)), atol=1e-5)


def test_orthogonal_init_matches_qr_of_the_draw():
    t = ctorch.empty(4, 3, dtype=ctorch.float64)
    nn.init.orthogonal_(t, generator=ctorch.Generator().manual_seed(5))
    draw = to_numpy(ctorch.empty(4, 3, dtype=ctorch.float64).normal_(0, 1, generator=ctorch.Generator().manual_seed(5)))
    np.testing.assert_allclose(to_numpy(t), _np_q(draw), atol=1e-12)
    empty = ctorch.empty(0, 3)
    assert nn.init.orthogonal_(empty) is empty


def test_sparse_init(device):
    t = ctorch.empty(10, 40, device=device)
    ctorch.manual_seed(0)
    assert nn.init.sparse_(t, sparsity=0.25, std=0.5) is t
    a = to_numpy(t)
    np.testing.assert_array_equal((a == 0).sum(0), np.full(40, math.ceil(0.25 * 10)))
    assert abs(a[a != 0].std() - 0.5) < 0.1  # 280 draws: the std's standard error is 0.02


def test_eye_and_dirac_init(device):
    t = ctorch.empty(3, 5, device=device)
    np.testing.assert_array_equal(to_numpy(nn.init.eye_(t)), np.eye(3, 5))
    for shape, groups in [((4, 6, 3, 3), 2), ((3, 2, 5), 1), ((2, 2, 3, 3, 3), 1)]:
        w = ctorch.empty(*shape, device=device)
        nn.init.dirac_(w, groups)
        expected = np.zeros(shape)
        per_group = shape[0] // groups
        centre = tuple(s // 2 for s in shape[2:])
        for g in range(groups):
            for d in range(min(per_group, shape[1])):
                expected[(g * per_group + d, d) + centre] = 1
        np.testing.assert_array_equal(to_numpy(w), expected)


def test_init_errors_and_deprecated_names():
    for fn, args in [(nn.init.eye_, ()), (nn.init.sparse_, (0.1,))]:
        with pytest.raises(ValueError, match="^Only tensors with 2 dimensions are supported$"):
            fn(ctorch.empty(3), *args)
    with pytest.raises(ValueError, match="^Only tensors with 2 or more dimensions are supported$"):
        nn.init.orthogonal_(ctorch.empty(3))
    with pytest.raises(ValueError, match="^Only tensors with 3, 4, or 5 dimensions are supported$"):
        nn.init.dirac_(ctorch.empty(3, 3))
    with pytest.raises(ValueError, match="^dim 0 must be divisible by groups$"):
        nn.init.dirac_(ctorch.empty(3, 3, 3), groups=2)
    with pytest.warns(FutureWarning, match=r"^`nn.init.eye` is now deprecated in favor of `nn.init.eye_`.$"):
        nn.init.eye(ctorch.empty(2, 2))
    with pytest.warns(FutureWarning, match="nn.init.normal_"):
        nn.init.normal(ctorch.empty(2))
