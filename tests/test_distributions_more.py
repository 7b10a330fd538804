"""ctorch.distributions beyond the first families: Gamma / Chi2 / Beta / Dirichlet (and their
implicit rsample gradients through _standard_gamma_grad / _dirichlet_grad), the count families,
transforms and biject_to / transform_to, TransformedDistribution and the families built on it,
and their KL divergences. Oracles: hand formulas in math / NumPy (scipy is not installed here),
numerical derivatives of series CDFs, quadrature, sums over the support, and sample moments."""
import math

import numpy as np
import pytest

import ctorch as torch
from ctorch import distributions as D
from ctorch.distributions import constraints, kl, transforms as T

from conftest import DEVICES, to_numpy
from test_distributions import F64, close, t


def digamma(x):
    """psi(x) for x > 0: recurrence up to 10, then the asymptotic series."""
    r = 0.0
    while x < 10:
        r -= 1 / x
        x += 1
    x2 = 1 / (x * x)
    return r + math.log(x) - 0.5 / x - x2 * (1 / 12 - x2 * (1 / 120 - x2 * (1 / 252 - x2 * (1 / 240 - x2 / 132))))


def gammainc(a, x):
    """P(a, x) by its power series (x moderate)."""
    term = total = 1.0 / a
    n = 1
    while term > 1e-18 * total:
        term *= x / (a + n)
        total += term
        n += 1
    return total * math.exp(a * math.log(x) - x - math.lgamma(a))


def betainc(a, b, x):
    """I_x(a, b) by the power series of the 2F1 form (x below the mean)."""
    term = total = 1.0
    n = 0
    while term > 1e-18 * total:
        term *= x * (a + b + n) / (a + 1 + n)
        total += term
        n += 1
    return total * math.exp(a * math.log(x) + b * math.log1p(-x) - math.lgamma(a) - math.lgamma(b)
                            + math.lgamma(a + b)) / a


def lbeta(a, b):
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


# --- the implicit reparameterisation gradients ----------------------------------------------------

def test_standard_gamma_grad_is_the_inverse_cdf_derivative():
    # dx/dalpha at fixed u = P(alpha, x): -(dP/dalpha) / pdf(x), dP/dalpha by central differences
    alpha = [0.3, 1.5, 4.0, 9.0]
    x = [0.2, 1.1, 3.0, 12.0]
    h = 1e-5
    expected = []
    for a, v in zip(alpha, x):
        dp = (gammainc(a + h, v) - gammainc(a - h, v)) / (2 * h)
        pdf = math.exp((a - 1) * math.log(v) - v - math.lgamma(a))
        expected.append(-dp / pdf)
    close(torch._standard_gamma_grad(t(alpha), t(x)), expected, rtol=1e-6)
    # Gamma(c, rate).rsample: d sample / d c = (1 / rate) dX/dalpha at X = sample * rate
    c = t([0.7, 2.5], requires_grad=True)
    rate = t([2.0, 0.5])
    torch.manual_seed(3)
    s = D.Gamma(c, rate).rsample()
    s.sum().backward()
    close(c.grad, to_numpy(torch._standard_gamma_grad(c.detach(), s.detach() * rate)) / to_numpy(rate))


def test_dirichlet_grad_is_the_beta_inverse_cdf_derivative():
    # x ~ Beta(a, b) = Dirichlet([a, b])[0]: dx/da at fixed I_x(a, b) and b, over 1 - x
    cases = [(0.3, 1.5, 2.5), (0.05, 0.4, 0.6), (0.2, 3.0, 9.0), (0.6, 2.0, 1.5), (0.02, 0.5, 20.0)]
    h = 1e-6
    expected = []
    for x, a, b in cases:
        di = (betainc(a + h, b, x) - betainc(a - h, b, x)) / (2 * h)
        pdf = math.exp((a - 1) * math.log(x) + (b - 1) * math.log1p(-x) - lbeta(a, b))
        expected.append(-di / pdf / (1 - x))
    xs, as_, bs = (t(list(v)) for v in zip(*cases))
    close(torch._dirichlet_grad(xs, as_, as_ + bs), expected, rtol=1e-6)
    # above the mean (the complementary series): I_x(a, b) = 1 - I_{1-x}(b, a)
    x, a, b = 0.9, 2.0, 1.5
    di = -(betainc(b, a + h, 1 - x) - betainc(b, a - h, 1 - x)) / (2 * h)
    pdf = math.exp((a - 1) * math.log(x) + (b - 1) * math.log1p(-x) - lbeta(a, b))
    close(torch._dirichlet_grad(t([x]), t([a]), t([a + b])), [-di / pdf / (1 - x)], rtol=1e-6)
    # degenerate and NaN arguments, broadcasting
    close(torch._dirichlet_grad(t([0.0, 1.0, 0.5, math.nan]), t([1.0, 1.0, 2.0, 1.0]), t([2.0, 2.0, 2.0, 2.0])),
          [0.0, 0.0, 0.0, math.nan])
    assert torch._dirichlet_grad(t([[0.2], [0.4]]), t([1.0, 2.0]), t(3.0)).shape == torch.Size([2, 2])


def test_dirichlet_rsample_gradients():
    a = t([1.5, 0.7], requires_grad=True)
    torch.manual_seed(0)
    x = D.Dirichlet(a).rsample()
    x[0].backward()
    x0 = float(x[0])
    g = to_numpy(torch._dirichlet_grad(x.detach(), a.detach(), a.detach().sum().expand(2)))
    # the backward formula g_j (delta_0j - x0) of PyTorch's Dirichlet
    close(a.grad, [g[0] * (1 - x0), -g[1] * x0])
    # the sample stays on the simplex: the gradient of its sum vanishes
    c = t([[0.5, 2.0, 3.0], [1.0, 1.0, 1.0]], requires_grad=True)
    D.Dirichlet(c).rsample((4,)).sum().backward()
    close(c.grad, np.zeros((2, 3)), atol=1e-12)
    # Beta rsample goes through the same gradient
    c1, c0 = t([2.0], requires_grad=True), t([3.0], requires_grad=True)
    torch.manual_seed(1)
    s = D.Beta(c1, c0).rsample()
    s.sum().backward()
    v = float(s)
    h = 1e-6
    di = (betainc(2.0 + h, 3.0, v) - betainc(2.0 - h, 3.0, v)) / (2 * h)
    pdf = math.exp(math.log(v) + 2 * math.log1p(-v) - lbeta(2.0, 3.0))
    close(c1.grad, [-di / pdf], rtol=1e-6)


def test_dirichlet_grad_errors():
    f = torch._dirichlet_grad
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        f(torch.tensor([0.3]), t([1.0]), t([3.0]))
    with pytest.raises(NotImplementedError, match="\"_dirichlet_grad_cpu\" not implemented for 'Long'"):
        f(torch.tensor([1]), torch.tensor([1]), torch.tensor([2]))
    with pytest.raises(NotImplementedError, match="'Half'"):
        f(*(torch.tensor([0.3]).half(),) * 3)
    with pytest.raises(RuntimeError, match="must match the size"):
        f(t([0.3, 0.4]), t([1.0, 2.0, 3.0]), t([3.0]))
    with pytest.raises(TypeError):
        f(t([0.3]), 1.0, t([3.0]))
    out = f(t([0.3], requires_grad=True), t([1.0]), t([3.0]))
    assert out.dtype == F64 and type(out.grad_fn).__name__ == "NotImplemented"
    assert f(torch.tensor([0.3]), torch.tensor([1.0]), torch.tensor([3.0])).dtype == torch.float32


# --- Gamma / Chi2 / Beta / Dirichlet ---------------------------------------------------------------

def test_gamma_chi2_formulas():
    c, r, x = [0.5, 2.0, 4.5], [1.0, 0.5, 3.0], [0.3, 2.0, 1.1]
    d = D.Gamma(t(c), t(r))
    close(d.log_prob(t(x)), [a * math.log(b) + (a - 1) * math.log(v) - b * v - math.lgamma(a)
                             for a, b, v in zip(c, r, x)])
    close(d.entropy(), [a - math.log(b) + math.lgamma(a) + (1 - a) * digamma(a) for a, b in zip(c, r)])
    close(d.cdf(t(x)), [gammainc(a, b * v) for a, b, v in zip(c, r, x)], rtol=1e-9)
    close(d.mean, np.divide(c, r))
    close(d.variance, np.divide(c, np.square(r)))
    close(d.mode, [0.0, 2.0, 3.5 / 3.0])
    assert d.support is constraints.nonnegative and d.has_rsample
    chi = D.Chi2(t([3.0, 1.0]))
    close(chi.df, [3.0, 1.0])
    close(chi.log_prob(t([2.0, 0.5])), [1.5 * math.log(0.5) + 0.5 * math.log(2.0) - 1.0 - math.lgamma(1.5),
                                         0.5 * math.log(0.5) - 0.5 * math.log(0.5) - 0.25 - math.lgamma(0.5)])
    assert chi.expand((4, 2)).df.shape == torch.Size([4, 2])
    assert D.Gamma(2.0, 3.0).batch_shape == torch.Size([])


def test_beta_dirichlet_formulas():
    a, b, x = [0.5, 2.0, 3.0], [1.5, 2.0, 0.8], [0.3, 0.5, 0.9]
    d = D.Beta(t(a), t(b))
    close(d.log_prob(t(x)), [(p - 1) * math.log(v) + (q - 1) * math.log1p(-v) - lbeta(p, q)
                             for p, q, v in zip(a, b, x)])
    close(d.entropy(), [lbeta(p, q) - (p - 1) * digamma(p) - (q - 1) * digamma(q) + (p + q - 2) * digamma(p + q)
                        for p, q in zip(a, b)], rtol=1e-9)
    close(d.mean, [p / (p + q) for p, q in zip(a, b)])
    close(d.variance, [p * q / ((p + q) ** 2 * (p + q + 1)) for p, q in zip(a, b)])
    close(d.concentration1, a)
    close(d.concentration0, b)
    assert D.Beta(2.0, 3.0).batch_shape == torch.Size([]) and d.support is constraints.unit_interval
    conc = np.array([[1.0, 2.0, 3.0], [0.5, 0.4, 0.3]])
    v = np.array([0.2, 0.3, 0.5])
    dd = D.Dirichlet(t(conc))
    assert dd.batch_shape == torch.Size([2]) and dd.event_shape == torch.Size([3])
    lognorm = [sum(math.lgamma(c) for c in row) - math.lgamma(sum(row)) for row in conc]
    close(dd.log_prob(t(v)), [((row - 1) * np.log(v)).sum() - ln for row, ln in zip(conc, lognorm)])
    close(dd.mean, conc / conc.sum(-1, keepdims=True))
    s = conc.sum(-1, keepdims=True)
    close(dd.variance, conc * (s - conc) / (s ** 2 * (s + 1)))
    ent = [ln + (row.sum() - 3) * digamma(row.sum()) - sum((c - 1) * digamma(c) for c in row)
           for row, ln in zip(conc, lognorm)]
    close(dd.entropy(), ent, rtol=1e-9)
    close(dd.mode[0], [0.0, 1 / 3, 2 / 3])
    assert float(dd.mode[1].sum()) == 1.0 and sorted(to_numpy(dd.mode[1])) == [0.0, 0.0, 1.0]


def test_continuous_sample_moments():
    torch.manual_seed(0)
    n = 4000
    for d, mean, var in [(D.Gamma(t([0.5, 3.0]), t([2.0, 1.0])), [0.25, 3.0], [0.125, 3.0]),
                         (D.Beta(t([2.0]), t([5.0])), [2 / 7], [10 / (49 * 8)]),
                         (D.Chi2(t([4.0])), [4.0], [8.0])]:
        s = to_numpy(d.sample((n,)))
        assert s.shape == (n,) + tuple(d.batch_shape)
        np.testing.assert_allclose(s.mean(0), mean, rtol=0.08)
        np.testing.assert_allclose(s.var(0), var, rtol=0.15)
    s = to_numpy(D.Dirichlet(t([1.0, 2.0, 3.0])).sample((n,)))
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(s.mean(0), [1 / 6, 2 / 6, 3 / 6], atol=0.02)


# --- counts ----------------------------------------------------------------------------------------

def test_count_formulas():
    rate, k = [0.5, 3.0], [2.0, 0.0]
    close(D.Poisson(t(rate)).log_prob(t(k)), [v * math.log(r) - r - math.lgamma(v + 1) for r, v in zip(rate, k)])
    n, p, k = [10.0, 4.0], [0.3, 0.9], [3.0, 4.0]
    b = D.Binomial(t(n), t(p))
    close(b.log_prob(t(k)), [math.lgamma(m + 1) - math.lgamma(v + 1) - math.lgamma(m - v + 1) + v * math.log(q)
                             + (m - v) * math.log1p(-q) for m, q, v in zip(n, p, k)])
    close(b.mean, np.multiply(n, p))
    close(b.variance, np.multiply(n, p) * (1 - np.array(p)))
    b6 = D.Binomial(6, t([0.3, 0.6]))
    pmf = [[math.comb(6, j) * q ** j * (1 - q) ** (6 - j) for j in range(7)] for q in (0.3, 0.6)]
    close(b6.entropy(), [-sum(v * math.log(v) for v in row) for row in pmf])
    assert b6.enumerate_support().shape == torch.Size([7, 2])
    g = D.Geometric(t([0.2, 1.0]))
    close(g.log_prob(t([3.0, 0.0])), [3 * math.log(0.8) + math.log(0.2), 0.0])
    close(g.mean, [4.0, 0.0])
    close(D.Geometric(t([0.2])).entropy(), [-(0.8 * math.log(0.8) + 0.2 * math.log(0.2)) / 0.2])
    nb = D.NegativeBinomial(t([3.0, 2.5]), t([0.4, 0.7]))
    close(nb.log_prob(t([2.0, 5.0])), [math.lgamma(r + v) - math.lgamma(v + 1) - math.lgamma(r) + r * math.log1p(-q)
                                       + v * math.log(q) for r, q, v in zip((3.0, 2.5), (0.4, 0.7), (2.0, 5.0))])
    close(nb.mean, [3.0 * 0.4 / 0.6, 2.5 * 0.7 / 0.3])
    close(nb.variance, [3.0 * 0.4 / 0.36, 2.5 * 0.7 / 0.09])
    probs = np.array([0.2, 0.3, 0.5])
    m = D.Multinomial(5, t(probs))
    v = np.array([1.0, 0.0, 4.0])
    close(m.log_prob(t(v)), math.lgamma(6) - sum(math.lgamma(c + 1) for c in v) + (v * np.log(probs)).sum())
    close(m.mean, 5 * probs)
    # entropy by summing over the 21 outcomes
    outcomes = [(i, j, 5 - i - j) for i in range(6) for j in range(6 - i)]
    lp = to_numpy(m.log_prob(t(outcomes)))
    close(m.entropy(), -(np.exp(lp) * lp).sum())  # lgamma(n + 1) in the probs' dtype, as PyTorch
    close(D.Multinomial(3, t([1.0, 0.0, 0.0])).entropy(), 0.0)  # one certain outcome; was -2e-8 (float32 lgamma)


def test_count_sample_moments():
    torch.manual_seed(1)
    n = 4000
    for d, mean, var in [(D.Poisson(t([0.7, 12.0])), [0.7, 12.0], [0.7, 12.0]),
                         (D.Binomial(t([20.0]), t([0.3])), [6.0], [4.2]),
                         (D.Geometric(t([0.25])), [3.0], [12.0]),
                         (D.NegativeBinomial(t([4.0]), t([0.5])), [4.0], [8.0])]:
        s = to_numpy(d.sample((n,)))
        assert s.shape == (n,) + tuple(d.batch_shape) and (s == np.round(s)).all()
        np.testing.assert_allclose(s.mean(0), mean, rtol=0.08)
        np.testing.assert_allclose(s.var(0), var, rtol=0.15)
    m = D.Multinomial(10, t([[0.2, 0.8], [0.5, 0.5]]))
    s = to_numpy(m.sample((2000,)))
    assert s.shape == (2000, 2, 2) and (s.sum(-1) == 10).all()
    np.testing.assert_allclose(s.mean(0), [[2.0, 8.0], [5.0, 5.0]], rtol=0.05)


# --- validation and shapes -------------------------------------------------------------------------

def test_validation_errors():
    with pytest.raises(ValueError, match=r"Expected parameter concentration \(Tensor of shape \(1,\)\) of "
                                         r"distribution Gamma\(.*to satisfy the constraint GreaterThan"):
        D.Gamma(t([-1.0]), t([1.0]))
    with pytest.raises(ValueError, match="`concentration` parameter must be at least one-dimensional."):
        D.Dirichlet(t(1.0))
    with pytest.raises(ValueError, match="to be positive but found invalid values"):
        D.Geometric(t([0.0]))
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count is not supported"):
        D.Multinomial(torch.tensor(3), t([0.5, 0.5]))
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count not supported by `entropy`."):
        D.Binomial(t([2.0, 3.0]), t([0.5, 0.5])).entropy()
    with pytest.raises(ValueError, match="to be within the support"):
        D.Beta(t([1.0]), t([1.0])).log_prob(t([1.5]))
    with pytest.raises(ValueError, match="IntegerGreaterThan"):
        D.Poisson(t([1.0])).log_prob(t([0.5]))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified"):
        D.NegativeBinomial(t([1.0]))
    with pytest.raises(ValueError, match="transforms must be a Transform or list, but was 3"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), 3)
    with pytest.raises(ValueError, match="Expected parameter df"):
        D.StudentT(t([-1.0]))


def test_expand_shapes():
    cases = [D.Gamma(t([1.0, 2.0]), 1.0), D.Beta(t([1.0, 2.0]), t([2.0, 2.0])), D.Poisson(t([1.0, 2.0])),
             D.Binomial(3, t([0.2, 0.4])), D.Geometric(t([0.2, 0.4])), D.NegativeBinomial(2.0, t([0.2, 0.4])),
             D.LogNormal(t([0.0, 1.0]), 1.0), D.StudentT(t([3.0, 4.0])), D.Weibull(t([1.0, 2.0]), 1.5),
             D.Pareto(1.0, t([2.0, 3.0])), D.Gumbel(t([0.0, 1.0]), 2.0), D.FisherSnedecor(t([2.0, 3.0]), 4.0)]
    for d in cases:
        e = d.expand((3, 2))
        assert type(e) is type(d) and e.batch_shape == torch.Size([3, 2])
        assert e.sample((5,)).shape == torch.Size([5, 3, 2]) and e.log_prob(e.sample()).shape == torch.Size([3, 2])
    dd = D.Dirichlet(t([1.0, 2.0, 3.0])).expand((4,))
    assert dd.sample((2,)).shape == torch.Size([2, 4, 3]) and dd.event_shape == torch.Size([3])
    m = D.Multinomial(4, t([0.5, 0.5])).expand((3,))
    assert m.sample().shape == torch.Size([3, 2])


# --- transforms ------------------------------------------------------------------------------------

def _numeric_log_det(f, x, h=1e-6):
    """log |f'(x)| elementwise by central differences."""
    return np.log(np.abs((to_numpy(f(x + h)) - to_numpy(f(x - h))) / (2 * h)))


@pytest.mark.parametrize("tr", [T.ExpTransform(), T.AffineTransform(1.0, -2.0), T.SigmoidTransform(),
                                T.TanhTransform(), T.SoftplusTransform(), T.PowerTransform(t(1.5)),
                                T.ComposeTransform([T.ExpTransform(), T.AffineTransform(0.5, 3.0)])],
                         ids=lambda tr: type(tr).__name__)
def test_elementwise_transforms(tr):
    x = t([0.3, 1.2, 2.0]) if isinstance(tr, T.PowerTransform) else t([-1.5, 0.2, 2.0])
    y = tr(x)
    close(tr.inv(y), to_numpy(x), rtol=1e-9)
    close(tr.log_abs_det_jacobian(x, y), _numeric_log_det(tr, x), rtol=1e-6, atol=1e-8)
    assert tr.bijective and bool(tr.codomain.check(y).all())
    close(tr.inv.log_abs_det_jacobian(y, x), -to_numpy(tr.log_abs_det_jacobian(x, y)))


def test_vector_transforms():
    x = t([[0.3, -1.0, 2.0], [0.0, 0.0, 0.0]])
    sb = T.StickBreakingTransform()
    y = sb(x)
    assert y.shape == torch.Size([2, 4]) and sb.forward_shape(x.shape) == torch.Size([2, 4])
    close(y.sum(-1), [1.0, 1.0])
    close(y[1], [0.25] * 4)  # zeros map to the centre
    close(sb.inv(y), to_numpy(x), rtol=1e-9)
    # log |det| of the map onto the first K-1 coordinates, by a numerical Jacobian
    h = 1e-6
    jac = np.stack([(to_numpy(sb(x[0] + h * e))[:3] - to_numpy(sb(x[0] - h * e))[:3]) / (2 * h)
                    for e in torch.eye(3, dtype=F64)], -1)
    close(sb.log_abs_det_jacobian(x, y)[0], math.log(abs(np.linalg.det(jac))), rtol=1e-6)
    sm = T.SoftmaxTransform()
    close(sm(x), np.exp(to_numpy(x)) / np.exp(to_numpy(x)).sum(-1, keepdims=True))
    m = t([[0.5, 0.0], [0.3, -0.2]])
    lc = T.LowerCholeskyTransform()
    close(lc(m), [[math.exp(0.5), 0.0], [0.3, math.exp(-0.2)]])
    close(lc.inv(lc(m)), to_numpy(m))
    r = T.ReshapeTransform((3,), (3, 1))
    assert r(x).shape == torch.Size([2, 3, 1]) and r.log_abs_det_jacobian(x, r(x)).shape == torch.Size([2])
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers of elements"):
        T.ReshapeTransform((2,), (3,))
    ind = T.IndependentTransform(T.ExpTransform(), 1)
    close(ind.log_abs_det_jacobian(x, ind(x)), to_numpy(x).sum(-1))
    cat = T.CatTransform([T.ExpTransform(), T.AffineTransform(0.0, 3.0)], dim=1, lengths=[1, 2])
    y = cat(x)
    close(y, np.concatenate([np.exp(to_numpy(x[:, :1])), 3 * to_numpy(x[:, 1:])], 1))
    close(cat.inv(y), to_numpy(x))
    close(cat.log_abs_det_jacobian(x, y), [[0.3, math.log(3), math.log(3)], [0.0, math.log(3), math.log(3)]])
    st = T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], dim=0)
    y = st(x)
    close(y[0], np.exp(to_numpy(x[0])))
    close(st.inv(y), to_numpy(x), rtol=1e-9)
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)
    cached = T.ExpTransform(cache_size=1)
    assert cached.inv(cached(x)) is x
    assert T.ExpTransform() == T.ExpTransform() and T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    assert repr(T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)]).inv) == (
        "ComposeTransform(\n    _InverseTransform(AffineTransform()),\n    _InverseTransform(ExpTransform())\n)")


def test_biject_to_transform_to():
    x = t([[-3.0, 0.1, 2.5], [0.5, -0.7, 1.0]])
    for c in [constraints.real, constraints.positive, constraints.nonnegative, constraints.unit_interval,
              constraints.interval(-1.0, 2.0), constraints.greater_than(2.0), constraints.less_than(1.0),
              constraints.half_open_interval(0.0, 1.0), constraints.simplex,
              constraints.independent(constraints.positive, 1),
              constraints.cat([constraints.positive, constraints.real], 1, [1, 2]),
              constraints.stack([constraints.positive, constraints.unit_interval], 0)]:
        for registry in (D.biject_to, D.transform_to):
            tr = registry(c)
            y = tr(x)
            assert bool(c.check(y).all()), (c, registry)
            if registry is D.biject_to:
                close(tr.inv(y), to_numpy(x), rtol=1e-8)
    assert type(D.biject_to(constraints.simplex)) is T.StickBreakingTransform
    assert type(D.transform_to(constraints.simplex)) is T.SoftmaxTransform
    assert type(D.transform_to(constraints.lower_cholesky)) is T.LowerCholeskyTransform
    with pytest.raises(NotImplementedError, match="Cannot transform _IntegerInterval constraints"):
        D.biject_to(constraints.integer_interval(0, 2))


# --- TransformedDistribution and its families --------------------------------------------------------

def test_transformed_families_log_prob():
    x = np.array([0.3, 1.7])
    X = t(x)
    lx = np.log(x)
    checks = [
        (D.LogNormal(t([0.1, -0.3]), t([0.5, 1.2])),
         lambda m, s: -lx - np.log(s) - 0.5 * np.log(2 * np.pi) - (lx - m) ** 2 / (2 * s * s),
         ([0.1, -0.3], [0.5, 1.2])),
        (D.HalfNormal(t([0.5, 1.2])), lambda s: np.log(2) - np.log(s) - 0.5 * np.log(2 * np.pi) - x * x / (2 * s * s),
         ([0.5, 1.2],)),
        (D.HalfCauchy(t([0.5, 1.2])), lambda s: np.log(2 / (np.pi * s)) - np.log1p((x / s) ** 2), ([0.5, 1.2],)),
        (D.Cauchy(t([0.1, -0.3]), t([0.5, 1.2])), lambda m, s: -np.log(np.pi * s) - np.log1p(((x - m) / s) ** 2),
         ([0.1, -0.3], [0.5, 1.2])),
        (D.Gumbel(t([0.1, -0.3]), t([0.5, 1.2])),
         lambda m, s: -np.log(s) - (x - m) / s - np.exp(-(x - m) / s), ([0.1, -0.3], [0.5, 1.2])),
        (D.Weibull(t([0.5, 1.2]), t([1.5, 0.7])),
         lambda s, k: np.log(k / s) + (k - 1) * np.log(x / s) - (x / s) ** k, ([0.5, 1.2], [1.5, 0.7])),
        (D.Pareto(t([0.2, 1.2]), t([2.5, 3.7])), lambda s, a: np.log(a) + a * np.log(s) - (a + 1) * lx,
         ([0.2, 1.2], [2.5, 3.7])),
        (D.InverseGamma(t([2.5, 3.7]), t([0.5, 1.2])),
         lambda a, b: a * np.log(b) - np.array([math.lgamma(v) for v in a]) - (a + 1) * lx - b / x,
         ([2.5, 3.7], [0.5, 1.2])),
    ]
    for d, f, params in checks:
        close(d.log_prob(X), f(*(np.array(p) for p in params)), rtol=1e-9)
    u = np.array([0.3, 0.6])
    k = D.Kumaraswamy(t([2.5, 3.7]), t([1.5, 1.2]))
    a, b = np.array([2.5, 3.7]), np.array([1.5, 1.2])
    close(k.log_prob(t(u)), np.log(a * b) + (a - 1) * np.log(u) + (b - 1) * np.log1p(-u ** a), rtol=1e-9)
    close(k.cdf(t(u)), 1 - (1 - u ** a) ** b, rtol=1e-9)
    df, loc, sc = np.array([3.0, 0.8]), np.array([0.1, -0.3]), np.array([0.5, 1.2])
    st = D.StudentT(t(df), t(loc), t(sc))
    z = (x - loc) / sc
    lg = np.vectorize(math.lgamma)
    close(st.log_prob(X), lg((df + 1) / 2) - lg(df / 2) - 0.5 * np.log(df * np.pi) - np.log(sc)
          - (df + 1) / 2 * np.log1p(z * z / df), rtol=1e-9)
    d1, d2 = np.array([2.5, 6.7]), np.array([5.5, 1.2])
    fs = D.FisherSnedecor(t(d1), t(d2))
    close(fs.log_prob(X), 0.5 * (d1 * np.log(d1 * x) + d2 * np.log(d2) - (d1 + d2) * np.log(d1 * x + d2))
          - lx - np.array([lbeta(p / 2, q / 2) for p, q in zip(d1, d2)]), rtol=1e-9)
    # cdf / icdf through monotone transforms (a decreasing affine flips the cdf)
    td = D.TransformedDistribution(D.Normal(t([0.0]), t([1.0])), [T.AffineTransform(1.0, -2.0)])
    close(td.cdf(t([0.3])), [1 - 0.5 * (1 + math.erf((0.3 - 1) / -2 / math.sqrt(2)))])
    ln = D.LogNormal(t([0.2]), t([0.7]))
    close(ln.cdf(ln.icdf(t([0.3]))), [0.3], rtol=1e-9)
    ln_mean = math.exp(0.2 + 0.245)
    close(ln.mean, [ln_mean])
    close(ln.entropy(), [0.5 + 0.5 * math.log(2 * math.pi) + math.log(0.7) + 0.2])


def test_transformed_families_moments_and_shapes():
    torch.manual_seed(2)
    n = 4000
    for d in [D.LogNormal(t([0.1]), t([0.4])), D.Weibull(t([1.5]), t([2.0])), D.Gumbel(t([0.5]), t([2.0])),
              D.InverseGamma(t([5.0]), t([2.0])), D.Kumaraswamy(t([2.0]), t([3.0])), D.HalfNormal(t([1.5])),
              D.StudentT(t([6.0]), t([1.0]), t([2.0])), D.Pareto(t([1.0]), t([5.0]))]:
        s = to_numpy(d.rsample((n,)))
        assert s.shape == (n, 1) and bool(d.support.check(t(s)).all())
        np.testing.assert_allclose(s.mean(0), to_numpy(d.mean), rtol=0.06, err_msg=type(d).__name__)
        np.testing.assert_allclose(s.var(0), to_numpy(d.variance), rtol=0.25, err_msg=type(d).__name__)
    ln = D.LogisticNormal(t([0.1, -0.3]), t([0.5, 1.2]))
    assert ln.batch_shape == torch.Size([]) and ln.event_shape == torch.Size([3])
    y = ln.sample((5,))
    close(y.sum(-1), np.ones(5))
    # density: the normal's at the inverse image over the stick-breaking Jacobian
    v = t([0.2, 0.3, 0.5])
    xs = T.StickBreakingTransform().inv(v)
    base = D.Normal(t([0.1, -0.3]), t([0.5, 1.2])).log_prob(xs).sum()
    close(ln.log_prob(v), float(base) - float(T.StickBreakingTransform().log_abs_det_jacobian(xs, v)))
    rb = D.RelaxedBernoulli(t(0.5), probs=t([0.3, 0.6]))
    s = rb.rsample((3,))
    assert s.shape == torch.Size([3, 2]) and bool(((s > 0) & (s < 1)).all())
    ro = D.RelaxedOneHotCategorical(t(0.5), probs=t([0.3, 0.7]))
    s = ro.rsample((3,))
    close(s.sum(-1), np.ones(3))
    # the Concrete density of a 2-class relaxation at y = (u, 1 - u)
    u, tau, p = 0.2, 0.5, np.array([0.3, 0.7])
    yv = np.array([u, 1 - u])
    dens = math.gamma(2) * tau * np.prod(p * yv ** (-tau - 1)) / (p * yv ** -tau).sum() ** 2
    close(ro.log_prob(t(yv)), math.log(dens), rtol=1e-9)


def test_continuous_bernoulli_lowrank_mixture_von_mises():
    # ContinuousBernoulli: a density on [0, 1] (normalised; the Taylor branch near 1/2 too)
    u = np.linspace(0.0, 1.0, 20001)
    cb = D.ContinuousBernoulli(t([0.2, 0.4995, 0.9]))
    dens = np.exp(to_numpy(cb.log_prob(t(u)[:, None])))
    np.testing.assert_allclose(np.trapezoid(dens, u, axis=0), 1.0, rtol=1e-6)
    np.testing.assert_allclose(np.trapezoid(dens * u[:, None], u, axis=0), to_numpy(cb.mean), rtol=1e-6)
    close(cb.cdf(cb.icdf(t([0.3, 0.3, 0.3]))), [0.3, 0.3, 0.3], rtol=1e-9)
    with pytest.raises(ValueError, match="The parameter probs has invalid values"):
        D.ContinuousBernoulli(t([1.5]), validate_args=True)
    # LowRankMultivariateNormal against the dense covariance
    W = np.array([[1.0, 0.5], [-0.3, 0.2], [0.1, 0.4]])
    dg = np.array([0.5, 1.0, 2.0])
    loc, x = np.array([0.1, 0.2, 0.3]), np.array([0.5, -0.2, 1.0])
    lr = D.LowRankMultivariateNormal(t(loc), t(W), t(dg))
    cov = W @ W.T + np.diag(dg)
    diff = x - loc
    logdet = np.linalg.slogdet(cov)[1]
    close(lr.log_prob(t(x)), -0.5 * (3 * math.log(2 * math.pi) + logdet + diff @ np.linalg.solve(cov, diff)))
    close(lr.entropy(), 0.5 * (3 * (1 + math.log(2 * math.pi)) + logdet))
    close(lr.covariance_matrix, cov)
    close(lr.precision_matrix, np.linalg.inv(cov))
    close(lr.scale_tril, np.linalg.cholesky(cov))
    assert lr.expand((2,)).rsample((4,)).shape == torch.Size([4, 2, 3])
    # MixtureSameFamily of normals
    w, m, sd = np.array([0.3, 0.7]), np.array([-1.0, 2.0]), np.array([0.5, 1.5])
    mix = D.MixtureSameFamily(D.Categorical(t(w)), D.Normal(t(m), t(sd)))
    v = np.array([0.3, 1.0])
    pdf = (w * np.exp(-0.5 * ((v[:, None] - m) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))).sum(-1)
    close(mix.log_prob(t(v)), np.log(pdf))
    close(mix.mean, (w * m).sum())
    close(mix.variance, (w * (sd ** 2 + m ** 2)).sum() - (w * m).sum() ** 2)
    torch.manual_seed(4)
    s = to_numpy(mix.sample((4000,)))
    np.testing.assert_allclose(s.mean(), (w * m).sum(), rtol=0.05)
    with pytest.raises(ValueError, match="does not equal `component_distribution.batch_shape"):
        D.MixtureSameFamily(D.Categorical(t([0.3, 0.3, 0.4])), D.Normal(t(m), t(sd)))
    # VonMises: I0 by its series; the sample's circular mean and variance
    kappa = [0.5, 4.0]
    i0 = [sum((k / 2) ** (2 * j) / math.factorial(j) ** 2 for j in range(40)) for k in kappa]
    vm = D.VonMises(t([0.1, 1.0]), t(kappa))
    close(vm.log_prob(t([0.3, 2.0])), [k * math.cos(a - b) - math.log(2 * math.pi * c)
                                       for k, a, b, c in zip(kappa, (0.3, 2.0), (0.1, 1.0), i0)])
    s = to_numpy(vm.sample((4000,)))
    assert s.shape == (4000, 2) and (np.abs(s) <= math.pi).all()
    np.testing.assert_allclose(np.angle(np.exp(1j * s).mean(0)), [0.1, 1.0], atol=0.1)
    np.testing.assert_allclose(1 - np.abs(np.exp(1j * s).mean(0)), to_numpy(vm.variance), rtol=0.1)


# --- KL divergences ----------------------------------------------------------------------------------

def test_kl_closed_forms():
    pairs = [(D.Gamma(t([2.0, 0.5]), t([1.5, 3.0])), D.Gamma(t([1.0, 4.0]), t([2.0, 2.0]))),
             (D.Beta(t([2.0, 0.5]), t([1.5, 3.0])), D.Beta(t([1.0, 4.0]), t([2.0, 2.0]))),
             (D.Dirichlet(t([[1.0, 2.0, 0.5]])), D.Dirichlet(t([[2.0, 1.0, 1.5]]))),
             (D.Poisson(t([1.0, 4.0])), D.Poisson(t([2.0, 2.5])))]
    # the registered closed forms agree with the exponential-family Bregman divergence
    for p, q in pairs:
        close(D.kl_divergence(p, q), to_numpy(kl._kl_expfamily_expfamily(p, q)), rtol=1e-9)
    # Poisson and Geometric by summing over the support
    k = np.arange(200.0)
    lg = np.array([math.lgamma(v + 1) for v in k])
    lp = k * math.log(1.5) - 1.5 - lg
    lq = k * math.log(4.0) - 4.0 - lg
    close(D.kl_divergence(D.Poisson(t([1.5])), D.Poisson(t([4.0]))), [(np.exp(lp) * (lp - lq)).sum()])
    lp = k * math.log(0.7) + math.log(0.3)
    lq = k * math.log(0.4) + math.log(0.6)
    close(D.kl_divergence(D.Geometric(t([0.3])), D.Geometric(t([0.6]))), [(np.exp(lp) * (lp - lq)).sum()], rtol=1e-9)
    # two-component Dirichlets are Betas
    close(D.kl_divergence(D.Dirichlet(t([2.0, 1.5])), D.Dirichlet(t([1.0, 2.0]))),
          float(D.kl_divergence(D.Beta(t(2.0), t(1.5)), D.Beta(t(1.0), t(2.0)))))
    # Exponential || Gamma and Gamma || Normal by quadrature of p log(p / q) (over log x: the log
    # singularity at 0)
    u = np.linspace(-40.0, math.log(60.0), 200001)
    x = np.exp(u)
    e, g = D.Exponential(t([0.7])), D.Gamma(t([2.5]), t([1.2]))
    pe = to_numpy(e.log_prob(t(x)[:, None]))[:, 0]
    pg = to_numpy(g.log_prob(t(x)[:, None]))[:, 0]
    close(D.kl_divergence(e, g), [np.trapezoid(np.exp(pe) * (pe - pg) * x, u)], rtol=1e-7)
    nq = D.Normal(t([1.0]), t([2.0]))
    pn = to_numpy(nq.log_prob(t(x)[:, None]))[:, 0]
    close(D.kl_divergence(g, nq), [np.trapezoid(np.exp(pg) * (pg - pn) * x, u)], rtol=1e-7)
    assert math.isinf(float(D.kl_divergence(D.Gamma(t(1.0), t(1.0)), D.Uniform(t(0.0), t(1.0)))))
    with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
        D.kl_divergence(D.Binomial(2, t([0.5])), D.Binomial(3, t([0.5])))


def _quad_kl(p, q, x):
    lp = to_numpy(p.log_prob(t(x)[:, None]))
    lq = to_numpy(q.log_prob(t(x)[:, None]))
    return np.trapezoid(np.exp(lp) * (lp - lq), x, axis=0)


def test_kl_more_families():
    g1, g2 = D.Gumbel(t([0.2, 0.7]), t([1.0, 2.0])), D.Gumbel(t([0.6, 0.3]), t([0.5, 3.0]))
    close(D.kl_divergence(g1, g2), _quad_kl(g1, g2, np.linspace(-12.0, 100.0, 200001)), rtol=1e-7)
    p1, p2 = D.Pareto(t([1.0, 2.0]), t([3.0, 4.0])), D.Pareto(t([0.5, 1.5]), t([2.0, 2.0]))
    u = np.linspace(math.log(2.0), 40.0, 200001)  # over log x, from the larger scale
    x = np.exp(u)
    lp = to_numpy(p1.log_prob(t(x)[:, None]))
    lq = to_numpy(p2.log_prob(t(x)[:, None]))
    close(D.kl_divergence(p1, p2)[1], np.trapezoid(np.exp(lp[:, 1]) * (lp[:, 1] - lq[:, 1]) * x, u), rtol=1e-6)
    assert math.isinf(float(D.kl_divergence(p2, p1)[0]))
    c1, c2 = D.ContinuousBernoulli(t([0.2, 0.7, 0.4999])), D.ContinuousBernoulli(t([0.6, 0.3, 0.9]))
    close(D.kl_divergence(c1, c2), _quad_kl(c1, c2, np.linspace(0.0, 1.0, 20001)), rtol=1e-7)
    h1, h2 = D.HalfNormal(t([1.0, 2.0])), D.HalfNormal(t([0.5, 3.0]))
    r = np.array([2.0, 2 / 3]) ** 2
    close(D.kl_divergence(h1, h2), 0.5 * (r - 1 - np.log(r)))
    # transformed distributions with the same transforms: the bases' divergence
    ln1, ln2 = D.LogNormal(t([1.0]), t([3.0])), D.LogNormal(t([0.5]), t([2.0]))
    close(D.kl_divergence(ln1, ln2), to_numpy(D.kl_divergence(ln1.base_dist, ln2.base_dist)))


# --- devices -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_device(device):
    a = t([1.5, 0.7, 2.0], device, requires_grad=True)
    torch.manual_seed(0)
    x = D.Dirichlet(a).rsample((3,))
    assert x.device.type == device
    x[:, 0].sum().backward()
    assert a.grad.device.type == device and bool(torch.isfinite(a.grad).all())
    xs, al, tot = t([0.3, 0.6], device), t([1.5, 2.0], device), t([4.0, 3.5], device)
    close(torch._dirichlet_grad(xs, al, tot), to_numpy(torch._dirichlet_grad(xs.cpu(), al.cpu(), tot.cpu())),
          rtol=1e-14)
    c = t([2.0, 0.5], device, requires_grad=True)
    D.Gamma(c, t([1.0, 2.0], device)).rsample((4,)).sum().backward()
    assert c.grad.device.type == device
    s = D.Poisson(t([3.0], device)).sample((5,))
    assert s.device.type == device and s.shape == torch.Size([5, 1])
    ln = D.LogNormal(t([0.1], device), t([0.5], device))
    close(ln.log_prob(t([1.3], device)), to_numpy(D.LogNormal(t([0.1]), t([0.5])).log_prob(t([1.3]))))
    assert D.VonMises(t([0.5], device), t([2.0], device)).sample((3,)).device.type == device
    y = D.biject_to(constraints.simplex)(t([0.3, -0.2], device))
    assert y.device.type == device
    close(y.sum(), 1.0)
