"""ctorch.distributions beyond the first families: Gamma / Chi2 / Beta / Dirichlet (and their
implicit rsample gradients through _standard_gamma_grad / _dirichlet_grad), the count families,
transforms and biject_to / transform_to, TransformedDistribution and the families built on it,
and their KL divergences. Oracles: hand formulas in math / NumPy (scipy is not installed here),
numerical derivatives of series CDFs, quadrature, sums over the support, and sample moments."""
import math
import warnings

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
    # degenerate and NaN arguments, broadcasting (x = 1: PyTorch's expansion below, digamma(2) - digamma(1) = 1)
    close(torch._dirichlet_grad(t([0.0, 1.0, 0.5, math.nan]), t([1.0, 1.0, 2.0, 1.0]), t([2.0, 2.0, 2.0, 2.0])),
          [0.0, 1.0, 0.0, math.nan], rtol=1e-12)
    assert torch._dirichlet_grad(t([[0.2], [0.4]]), t([1.0, 2.0]), t(3.0)).shape == torch.Size([2, 2])



def test_dirichlet_grad_past_one_is_pytorchs_expansion():
    # x >= 1 lies outside the Beta's support; PyTorch continues its nine-term series in v = 1 - x there
    def series(x, a, total):
        p, v = total - a, 1 - x
        c = digamma(total) - digamma(a)
        term, b, db, acc = 1.0, 1.0, 0.0, c / p
        for i in range(1, 9):
            term *= -v / i
            db = db * (a - i) + b
            b *= a - i
            acc += term / (p + i) * (db + c * b)
        return x ** (1 - a) * acc
    cases = [(1.2, 2.0, 5.0), (1.5, 0.5, 3.0), (3.0, 1.5, 4.0), (5.0, 3.0, 4.0), (1.1, 7.0, 10.0)]
    xs, as_, ts = (t(list(v)) for v in zip(*cases))
    close(torch._dirichlet_grad(xs, as_, ts), [series(*c) for c in cases], rtol=1e-10)
    close(torch._dirichlet_grad(t([1.5]), t([2.0]), t([5.0])), [0.42909993411295494], rtol=1e-10)  # PyTorch's value
    # a NaN from the series (alpha <= 0, infinite total) gives 0 there, as PyTorch's
    close(torch._dirichlet_grad(t([1.5, 1.5]), t([-1.0, 2.0]), t([5.0, math.inf])), [0.0, 0.0])

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


# --- CorrCholesky / PositiveDefinite / CumulativeDistribution transforms, their constraints -------

def _numeric_jacobian(f, x, h=1e-6):
    """d f / d x (a matrix) by central differences, f and x flat NumPy vectors."""
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, -1)


def test_corr_cholesky_transform():
    tr = T.CorrCholeskyTransform()
    x = np.linspace(-2.0, 1.5, 6)
    y = tr(t(x))
    assert y.shape == (4, 4) and bool(constraints.corr_cholesky.check(y))
    yn = to_numpy(y)
    np.testing.assert_allclose(np.diag(yn @ yn.T), np.ones(4), rtol=1e-12)
    assert np.all(np.triu(yn, 1) == 0) and np.all(np.diag(yn) > 0)
    close(tr.inv(y), x, rtol=1e-9)
    # the first column below the diagonal is tanh(x) of the row's first entry
    close(y[1:, 0], np.tanh(x[[0, 1, 3]]))
    # log |det| of x -> the strict lower triangle of y, against a numerical Jacobian
    rows, cols = np.tril_indices(4, -1)
    jac = _numeric_jacobian(lambda v: to_numpy(tr(t(v)))[rows, cols], x)
    close(tr.log_abs_det_jacobian(t(x), y), np.linalg.slogdet(jac)[1], rtol=1e-7)
    # batched, and shapes
    xb = t(np.linspace(-1, 1, 18).reshape(3, 6))
    yb = tr(xb)
    assert yb.shape == (3, 4, 4) and tr.log_abs_det_jacobian(xb, yb).shape == (3,)
    close(yb[1], to_numpy(tr(xb[1])))
    assert tr.forward_shape((5, 10)) == (5, 5, 5) and tr.inverse_shape((2, 5, 5)) == (2, 10)
    with pytest.raises(ValueError, match="Input is not a flattened lower-diagonal number"):
        tr.forward_shape((4,))
    with pytest.raises(ValueError, match="Input is not square"):
        tr.inverse_shape((3, 4))
    assert tr.bijective and tr.domain is constraints.real_vector and tr.codomain is constraints.corr_cholesky
    assert tr != T.CorrCholeskyTransform()  # no __eq__, as PyTorch's
    assert isinstance(D.biject_to(constraints.corr_cholesky), T.CorrCholeskyTransform)
    assert isinstance(D.transform_to(constraints.corr_cholesky), T.CorrCholeskyTransform)
    # the constraint: rows of unit length, lower triangular, positive diagonal
    assert repr(constraints.corr_cholesky) == "CorrCholesky()" and constraints.corr_cholesky.event_dim == 2
    check = constraints.corr_cholesky.check(t([[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.6, 0.7]],
                                               [[1.0, 0.1], [0.0, 1.0]], [[1.0, 0.0], [0.6, -0.8]]]))
    assert check.tolist() == [True, False, False, False]


def test_positive_definite_transform():
    tr = T.PositiveDefiniteTransform()
    x = np.array([[-0.7, 0.4, 0.2], [-0.1, 0.1, 0.3], [0.5, 0.7, 0.9]])
    L = np.tril(x, -1) + np.diag(np.exp(np.diag(x)))
    y = tr(t(x))
    close(y, L @ L.T)
    assert bool(constraints.positive_definite.check(y))
    close(tr.inv(y), np.tril(x), rtol=1e-9, atol=1e-12)
    assert tr == T.PositiveDefiniteTransform() and not tr.bijective
    assert tr.domain.event_dim == 2 and tr.codomain is constraints.positive_definite
    for c in (constraints.positive_definite, constraints.positive_semidefinite):
        assert isinstance(D.transform_to(c), T.PositiveDefiniteTransform)
    with pytest.raises(NotImplementedError, match="Cannot transform _PositiveDefinite constraints"):
        D.biject_to(constraints.positive_definite)
    xb = t(np.stack([x, -x]))
    assert tr(xb).shape == (2, 3, 3)
    close(tr(xb)[1], to_numpy(tr(t(-x))))


def test_cumulative_distribution_transform():
    base = D.Normal(t(0.5), t(2.0))
    tr = T.CumulativeDistributionTransform(base)
    x = np.array([-1.0, 0.0, 3.0])
    z = (x - 0.5) / 2.0
    y = tr(t(x))
    close(y, 0.5 * (1 + np.vectorize(math.erf)(z / np.sqrt(2))))
    close(tr.inv(y), x, rtol=1e-9)
    close(tr.log_abs_det_jacobian(t(x), y), -0.5 * z ** 2 - np.log(2.0) - 0.5 * np.log(2 * np.pi))
    assert tr.domain is base.support and tr.codomain is constraints.unit_interval
    assert tr.sign == 1 and tr.bijective
    cached = tr.with_cache(1)
    assert cached is not tr and cached.distribution is base and cached._cache_size == 1
    assert tr.with_cache(0) is tr
    # a Gaussian copula: MultivariateNormal pushed through the standard normal's cdf
    mvn = D.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[1.0, 0.0], [0.5, 0.8]]))
    copula = D.TransformedDistribution(mvn, [T.CumulativeDistributionTransform(D.Normal(t(0.0), t(1.0)))])
    u = t([0.3, 0.6])
    xs = to_numpy(D.Normal(t(0.0), t(1.0)).icdf(u))
    phi = -0.5 * xs ** 2 - 0.5 * np.log(2 * np.pi)
    close(copula.log_prob(u), float(mvn.log_prob(t(xs))) - phi.sum(), rtol=1e-9)


def test_mixture_same_family_constraint():
    c = constraints.MixtureSameFamilyConstraint(constraints.positive)
    assert repr(c) == "MixtureSameFamilyConstraint(GreaterThan(lower_bound=0.0))"
    assert c.event_dim == 0 and not c.is_discrete
    # every component's constraint is checked on the value (a component dim is put back)
    assert c.check(t([[1.0, -1.0], [2.0, 3.0]])).tolist() == [[True, False], [True, True]]
    s = constraints.MixtureSameFamilyConstraint(constraints.simplex)
    assert s.event_dim == 1 and s.check(t([[0.5, 0.5], [0.2, 0.3]])).tolist() == [True, False]
    i = constraints.MixtureSameFamilyConstraint(constraints.nonnegative_integer)
    assert i.is_discrete
    with pytest.raises(AssertionError, match="base_constraint must be a Constraint, got int"):
        constraints.MixtureSameFamilyConstraint(3)

    # MixtureSameFamily's support wraps the component's (a value must lie in every component's support)
    mix = D.MixtureSameFamily(D.Categorical(t([[1.0, 1.0], [1.0, 1.0]])),
                              D.Uniform(t([[0.0, 0.0], [0.0, 2.0]]), t([[1.0, 1.0], [1.0, 3.0]])))
    assert isinstance(mix.support, constraints.MixtureSameFamilyConstraint)
    assert mix.support.check(t([0.5, 0.5])).tolist() == [True, False]
    with pytest.raises(ValueError, match="within the support"):
        mix.log_prob(t([0.5, 0.5]))


# --- LKJCholesky ------------------------------------------------------------------------------------

def test_lkj_cholesky_log_prob():
    # D = 2: L = [[1, 0], [r, sqrt(1 - r^2)]], density (1 - r^2)^(eta - 1) / B(1/2, eta) in r
    for eta in (0.7, 1.0, 3.0):
        d = D.LKJCholesky(2, t(eta))
        r = np.linspace(-0.999, 0.999, 4001)
        Ls = np.zeros((r.size, 2, 2))
        Ls[:, 0, 0], Ls[:, 1, 0], Ls[:, 1, 1] = 1.0, r, np.sqrt(1 - r ** 2)
        dens = np.exp(to_numpy(d.log_prob(t(Ls))))
        expected = (1 - r ** 2) ** (eta - 1) / math.exp(lbeta(0.5, eta))
        close(d.log_prob(t(Ls)), np.log(expected), rtol=1e-10)
        if eta == 3.0:  # (little mass beyond |r| = 0.999)
            assert abs(np.trapezoid(dens, r) - 1) < 1e-4
    # D = 4, batched eta: sum_i (2 (eta - 1) + D - i - 1) log L_ii minus the normaliser
    eta = np.array([0.5, 2.0])
    L = to_numpy(T.CorrCholeskyTransform()(t(np.linspace(-1.5, 1.2, 12).reshape(2, 6))))
    d = D.LKJCholesky(4, t(eta))
    expected = []
    for k in range(2):
        un = sum((2 * (eta[k] - 1) + 4 - i - 1) * math.log(L[k, i, i]) for i in range(1, 4))
        alpha = eta[k] + 1.5
        mvl = 3 * math.log(math.pi) / 2 + sum(math.lgamma(alpha - 0.5 - j / 2) for j in range(3))
        expected.append(un - (1.5 * math.log(math.pi) + mvl - 3 * math.lgamma(alpha)))
    close(d.log_prob(t(L)), expected, rtol=1e-10)
    assert d.batch_shape == (2,) and d.event_shape == (4, 4) and not d.has_rsample
    assert d.support is constraints.corr_cholesky and d.arg_constraints == {"concentration": constraints.positive}
    e = d.expand((3, 2))
    assert e.batch_shape == (3, 2) and e.log_prob(t(L)).shape == (3, 2) and e.sample((5,)).shape == (5, 3, 2, 4, 4)
    with pytest.raises(ValueError, match="Expected dim to be an integer greater than or equal to 2. Found dim=1."):
        D.LKJCholesky(1)
    with pytest.raises(ValueError, match="to be within the support"):
        d.log_prob(2 * torch.eye(4, dtype=F64))


def test_lkj_cholesky_sample_moments():
    # every off-diagonal correlation: (r + 1) / 2 ~ Beta(a, a), a = eta - 1 + D / 2, so Var r = 1 / (2a + 1)
    # (the same for every pair: the law is symmetric under permuting the variables)
    torch.manual_seed(0)
    for dim, eta in ((3, 2.0), (4, 0.8)):
        L = D.LKJCholesky(dim, t(eta)).sample((20000,))
        assert L.shape == (20000, dim, dim) and bool(constraints.corr_cholesky.check(L).all())
        rows, cols = np.tril_indices(dim, -1)
        r = to_numpy(L @ L.mT)[:, rows, cols]
        np.testing.assert_allclose(r.mean(0), 0, atol=0.015)
        np.testing.assert_allclose(r.var(0), 1 / (2 * (eta - 1 + dim / 2) + 1), rtol=0.04)
    # eta = 1 with D = 2: r uniform on (-1, 1)
    r2 = to_numpy(D.LKJCholesky(2).sample((20000,)))[:, 1, 0]
    np.testing.assert_allclose([r2.mean(), r2.var()], [0, 1 / 3], atol=0.012)


# --- the KL pairs beyond the first: quadrature of p log(p / q) -------------------------------------

def _quad_kl_positive(p, q, u):
    """KL over x = exp(u) (p on the positive reals), trapezoid in u."""
    x = np.exp(u)
    lp = to_numpy(p.log_prob(t(x)))
    lq = to_numpy(q.log_prob(t(x)))
    return np.trapezoid(np.exp(lp) * (lp - lq) * x, u)


def test_kl_cross_families_by_quadrature():
    unit = np.linspace(1e-9, 1 - 1e-9, 200001)
    real = np.linspace(-30.0, 30.0, 200001)
    pos = np.linspace(-30.0, 6.0, 200001)
    beta = D.Beta(t(2.5), t(1.8))
    cb = D.ContinuousBernoulli(t(0.3))
    expo = D.Exponential(t(1.3))
    gamma = D.Gamma(t(2.5), t(1.5))
    gumbel = D.Gumbel(t(-0.3), t(0.8))
    normal = D.Normal(t(0.4), t(1.2))
    pareto = D.Pareto(t(0.5), t(3.5))
    cases = [  # (p, q, grid, is the grid over log x)
        (beta, D.ContinuousBernoulli(t(0.8)), unit, False),
        (cb, expo, unit, False), (cb, normal, unit, False), (cb, D.Uniform(t(-0.5), t(1.5)), unit, False),
        (expo, gumbel, pos, True), (gamma, gumbel, pos, True),
        (gumbel, normal, real, False), (normal, gumbel, real, False),
        (pareto, expo, np.linspace(math.log(0.5), 12.0, 200001), True),
        (pareto, gamma, np.linspace(math.log(0.5), 12.0, 200001), True),
        (pareto, normal, np.linspace(math.log(0.5), 12.0, 200001), True),
    ]
    uniform = D.Uniform(t(0.2), t(0.7))
    for q in (D.Beta(t(1.5), t(2.0)), cb, gamma, gumbel, D.Pareto(t(0.05), t(2.0)), D.ContinuousBernoulli(t(0.0))):
        cases.append((uniform, q, np.linspace(0.2, 0.7 - 1e-13, 200001), False))
    for p, q, grid, log_grid in cases:
        if log_grid:
            expected = _quad_kl_positive(p, q, grid)
        else:
            inside = to_numpy(p.support.check(t(grid)))
            expected = _quad_kl(p, q, grid[inside])[0]
        assert np.isclose(float(D.kl_divergence(p, q)), expected, rtol=2e-6, atol=1e-9), (p, q, expected)
    # Cauchy || Cauchy over x = loc + scale tan(theta); Bernoulli || Poisson by the two-point sum
    c1, c2 = D.Cauchy(t([0.4, 0.0]), t([1.2, 1.0])), D.Cauchy(t([-0.3, 0.0]), t([0.8, 1.0]))
    theta = np.linspace(-np.pi / 2 + 1e-7, np.pi / 2 - 1e-7, 400001)[:, None]
    x = t(np.array([0.4, 0.0]) + np.array([1.2, 1.0]) * np.tan(theta))
    lp, lq = to_numpy(c1.log_prob(x)), to_numpy(c2.log_prob(x))
    jac = np.array([1.2, 1.0]) / np.cos(theta) ** 2
    close(D.kl_divergence(c1, c2), np.trapezoid(np.exp(lp) * (lp - lq) * jac, theta[:, 0], axis=0), rtol=1e-5)
    close(D.kl_divergence(c1, c2)[1], 0.0, atol=1e-15)
    bern, pois = D.Bernoulli(t([0.3, 0.9])), D.Poisson(t([1.5, 0.4]))
    pr = np.array([0.3, 0.9])
    lam = np.array([1.5, 0.4])
    close(D.kl_divergence(bern, pois), (1 - pr) * (np.log(1 - pr) + lam) + pr * (np.log(pr) + lam - np.log(lam)))


def test_kl_infinite_pairs():
    beta, cb = D.Beta(t([2.0, 3.0]), t(1.5)), D.ContinuousBernoulli(t([0.3, 0.6]))
    expo, gamma = D.Exponential(t([1.0, 2.0])), D.Gamma(t([2.0, 1.0]), t(1.0))
    gumbel, laplace = D.Gumbel(t([0.0, 1.0]), t(1.0)), D.Laplace(t([0.0, 1.0]), t(1.0))
    normal, pareto = D.Normal(t([0.0, 1.0]), t(1.0)), D.Pareto(t([1.0, 2.0]), t(2.0))
    uniform = D.Uniform(t([0.1, 0.2]), t(0.9))
    pairs = [(beta, pareto), (cb, pareto), (expo, beta), (expo, cb), (expo, pareto),
             (gamma, beta), (gamma, cb), (gamma, pareto)]
    pairs += [(p, q) for p in (gumbel, laplace) for q in (beta, cb, expo, gamma, pareto, uniform)]
    pairs += [(normal, q) for q in (beta, cb, gamma, pareto)] + [(pareto, q) for q in (beta, cb, uniform)]
    for p, q in pairs:
        kl_pq = D.kl_divergence(p, q)
        assert kl_pq.shape == (2,) and bool(torch.isinf(kl_pq).all()), (type(p).__name__, type(q).__name__)
    # where p's support leaves q's, or p lacks the moments the formula needs
    assert to_numpy(D.kl_divergence(D.Uniform(t([0.2, -0.1]), t([0.7, 0.5])), D.Beta(t(2.0), t(2.0)))).tolist()[1] \
        == math.inf
    assert math.isinf(float(D.kl_divergence(D.Uniform(t(-0.5), t(0.5)), D.Gamma(t(2.0), t(1.0)))))
    assert math.isinf(float(D.kl_divergence(D.Uniform(t(0.5), t(0.9)), D.Pareto(t(0.6), t(2.0)))))
    assert math.isinf(float(D.kl_divergence(D.Uniform(t(0.5), t(1.2)), D.ContinuousBernoulli(t(0.3)))))
    assert math.isinf(float(D.kl_divergence(D.ContinuousBernoulli(t(0.3)), D.Uniform(t(0.1), t(2.0)))))
    assert to_numpy(D.kl_divergence(D.Pareto(t(1.0), t([0.9, 1.5])), D.Exponential(t(1.0)))).tolist()[0] == math.inf
    assert math.isinf(float(D.kl_divergence(D.Pareto(t(1.0), t(1.5)), D.Normal(t(0.0), t(1.0)))))
    assert math.isinf(float(D.kl_divergence(D.Pareto(t(1.0), t(0.8)), D.Gamma(t(2.0), t(1.0)))))


def test_kl_lowrank_multivariate_normals():
    # against the dense MultivariateNormal pair with the same covariances
    W1 = t([[1.0, 0.2], [0.3, 0.8], [-0.2, 0.1]])
    W2 = t([[[0.5, 0.1], [0.1, -0.5], [0.4, 0.3]], [[0.2, 0.0], [0.3, 0.1], [0.0, 0.7]]])
    d1, d2 = t([0.5, 1.0, 0.7]), t([[1.1, 0.4, 0.9], [0.6, 0.8, 1.3]])
    l1, l2 = D.LowRankMultivariateNormal(t([0.1, 0.2, -0.3]), W1, d1), \
        D.LowRankMultivariateNormal(t([[0.0, -0.4, 0.5], [0.2, 0.1, 0.0]]), W2, d2)
    m1 = D.MultivariateNormal(l1.loc, covariance_matrix=l1.covariance_matrix)
    m2 = D.MultivariateNormal(l2.loc, covariance_matrix=l2.covariance_matrix)
    expected = to_numpy(D.kl_divergence(m1, m2))
    assert expected.shape == (2,)
    close(D.kl_divergence(l1, l2), expected, rtol=1e-10)
    close(D.kl_divergence(m1, l2), expected, rtol=1e-10)
    close(D.kl_divergence(l1, m2), expected, rtol=1e-10)
    close(D.kl_divergence(l2, m1), to_numpy(D.kl_divergence(m2, m1)), rtol=1e-10)
    # and against the textbook formula for one pair
    S1, S2 = to_numpy(m1.covariance_matrix), to_numpy(m2.covariance_matrix)[0]
    dm = to_numpy(l2.loc[0] - l1.loc)
    kl0 = 0.5 * (np.trace(np.linalg.solve(S2, S1)) + dm @ np.linalg.solve(S2, dm) - 3
                 + np.linalg.slogdet(S2)[1] - np.linalg.slogdet(S1)[1])
    close(D.kl_divergence(l1, l2)[0], kl0, rtol=1e-10)
    l4 = D.LowRankMultivariateNormal(t([0.0] * 4), t([[1.0]] * 4), t([1.0] * 4))
    for a, b in ((l1, l4), (m1, l4), (l4, m1)):
        with pytest.raises(ValueError, match="different event shapes cannot be computed"):
            D.kl_divergence(a, b)


# --- Wishart ------------------------------------------------------------------------------------------

def _mvlgamma(a, p):
    return p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(a - j / 2) for j in range(p))


def _mvdigamma(a, p):
    return sum(digamma(a - j / 2) for j in range(p))


_WISHART_S = np.array([[[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]],
                       [[1.0, 0.0, 0.0], [0.0, 2.0, 0.5], [0.0, 0.5, 1.0]]])


def test_wishart_formulas():
    S, df = _WISHART_S, np.array([4.5, 7.0])
    X = np.array([[1.5, 0.2, 0.0], [0.2, 2.0, 0.3], [0.0, 0.3, 0.8]])
    p = 3
    lp, ent, kl = [], [], []
    for k in range(2):
        n, Sk = df[k], S[k]
        lp.append((n - p - 1) / 2 * np.linalg.slogdet(X)[1] - np.trace(np.linalg.solve(Sk, X)) / 2
                  - n * p / 2 * math.log(2) - n / 2 * np.linalg.slogdet(Sk)[1] - _mvlgamma(n / 2, p))
        ent.append((p + 1) / 2 * np.linalg.slogdet(Sk)[1] + p * (p + 1) / 2 * math.log(2) + _mvlgamma(n / 2, p)
                   - (n - p - 1) / 2 * _mvdigamma(n / 2, p) + n * p / 2)
    L = np.linalg.cholesky(S)
    for kw in ({"covariance_matrix": t(S)}, {"scale_tril": t(L)},
               {"precision_matrix": t(np.linalg.inv(S))}):
        w = D.Wishart(t(df), **kw)
        close(w.log_prob(t(X)), lp, rtol=1e-10)
        close(w.entropy(), ent, rtol=1e-10)
        close(w.mean, df[:, None, None] * S, rtol=1e-10)
        d = np.einsum("bii->bi", S)
        close(w.variance, df[:, None, None] * (S ** 2 + d[:, :, None] * d[:, None, :]), rtol=1e-10)
        close(w.mode, (df - p - 1)[:, None, None] * S, rtol=1e-10)
        close(w.covariance_matrix, S, rtol=1e-10), close(w.precision_matrix, np.linalg.inv(S), rtol=1e-9)
    w = D.Wishart(t(df), covariance_matrix=t(S))
    close(D.ExponentialFamily.entropy(w), ent, rtol=1e-9)  # through the log normalizer
    assert np.isnan(to_numpy(D.Wishart(t(3.5), covariance_matrix=t(S)).mode)).all()
    # KL by the Bregman divergence of the log normalizer, against the closed form
    n2, S2 = np.array([5.0, 4.0]), S[::-1].copy()
    for k in range(2):
        n1, A, B = df[k], S[k], S2[k]
        kl.append(n2[k] / 2 * (np.linalg.slogdet(B)[1] - np.linalg.slogdet(A)[1]) + n1 / 2 * np.trace(np.linalg.solve(B, A))
                  - n1 * p / 2 + _mvlgamma(n2[k] / 2, p) - _mvlgamma(n1 / 2, p) + (n1 - n2[k]) / 2 * _mvdigamma(n1 / 2, p))
    close(D.kl_divergence(w, D.Wishart(t(n2), covariance_matrix=t(S2))), kl, rtol=1e-9)
    # shapes, constraints, errors
    assert w.batch_shape == (2,) and w.event_shape == (3, 3) and w.has_rsample
    assert w.support is constraints.positive_definite and repr(w.arg_constraints["df"]) == "GreaterThan(lower_bound=2)"
    e = w.expand((4, 2))
    assert e.sample().shape == (4, 2, 3, 3) and e.log_prob(t(X)).shape == (4, 2) and w.sample((5,)).shape == (5, 2, 3, 3)
    with pytest.raises(ValueError, match=r"Value of df=1.5 expected to be greater than ndim - 1 = 2."):
        D.Wishart(t(1.5), covariance_matrix=t(S))
    with pytest.raises(AssertionError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.Wishart(4.0)
    with pytest.raises(ValueError, match="scale_tril must be at least two-dimensional"):
        D.Wishart(4.0, covariance_matrix=t([1.0, 2.0]))
    with pytest.warns(UserWarning, match="Low df values detected"):
        D.Wishart(t(2.5), covariance_matrix=t(S))
    with pytest.raises(ValueError, match="to be within the support"):
        w.log_prob(t(-X))


def test_wishart_sample_moments_and_rsample_gradients():
    S, df = _WISHART_S[0], 6.0
    torch.manual_seed(0)
    w = D.Wishart(t(df), covariance_matrix=t(S))
    X = to_numpy(w.sample((20000,)))
    np.testing.assert_allclose(X.mean(0), df * S, rtol=0.03, atol=0.03)
    d = np.diag(S)
    np.testing.assert_allclose(X.var(0), df * (S ** 2 + np.outer(d, d)), rtol=0.08, atol=0.05)
    # X = (L A)(L A)^T: with A recovered from the sample, the gradient of <G, X> in L is
    # (G + G^T) L A A^T and in df goes through A_ii = sqrt(c_i), c_i ~ Chi2(df - i)
    L = t(np.linalg.cholesky(S), requires_grad=True)
    nu = t(df, requires_grad=True)
    G = np.array([[1.0, -0.5, 0.2], [0.3, 2.0, 0.0], [0.1, 0.4, -1.0]])
    torch.manual_seed(1)
    Xs = D.Wishart(nu, scale_tril=L).rsample()
    (Xs * t(G)).sum().backward()
    Ln = to_numpy(L.detach())
    A = np.linalg.solve(Ln, np.linalg.cholesky(to_numpy(Xs.detach())))
    assert np.allclose(np.triu(A, 1), 0, atol=1e-12) and (np.diag(A) > 0).all()
    close(L.grad, (G + G.T) @ Ln @ A @ A.T, rtol=1e-9)
    c = np.diag(A) ** 2
    dc = to_numpy(torch._standard_gamma_grad(t((df - np.arange(3)) / 2), t(c / 2)))
    dA = (Ln.T @ (G + G.T) @ Ln @ A).diagonal()
    close(nu.grad, np.sum(dA * dc / (2 * np.sqrt(c))), rtol=1e-8)


# --- GeneralizedPareto ----------------------------------------------------------------------------------

def test_generalized_pareto_formulas():
    loc, scale, c = np.array([0.1, 0.0, 0.5, 0.0]), np.array([2.0, 1.0, 1.5, 3.0]), np.array([0.4, 0.0, -0.3, 0.7])
    x = np.array([0.5, 2.0, 1.2, 4.0])
    d = D.GeneralizedPareto(t(loc), t(scale), t(c))
    z = (x - loc) / scale
    safe = np.where(c == 0, 1.0, c)
    log_sf = np.where(c == 0, -z, -np.log1p(safe * z) / safe)
    close(d.log_prob(t(x)), -np.log(scale) - np.where(c == 0, z, (1 / safe + 1) * np.log1p(safe * z)))
    close(d.log_survival_function(t(x)), log_sf)
    close(d.cdf(t(x)), 1 - np.exp(log_sf))
    close(d.log_cdf(t(x)), np.log1p(-np.exp(log_sf)))
    close(d.icdf(d.cdf(t(x))), x, rtol=1e-9)
    close(d.mean, loc + scale / (1 - c))
    var = scale ** 2 / ((1 - c) ** 2 * (1 - 2 * c))
    close(d.variance, np.where(c < 0.5, var, np.nan))
    close(d.entropy(), np.log(scale) + c + 1), close(d.mode, loc)
    close(d.support.upper_bound, np.where(c < 0, loc - scale / np.where(c < 0, c, 1), np.inf))
    # special cases: Exponential, Pareto and Uniform
    v = t([0.3, 1.7, 4.0])
    e = D.GeneralizedPareto(0.0, t(2.0), 0.0)
    close(e.log_prob(v), to_numpy(D.Exponential(t(0.5)).log_prob(v)))
    pa = D.GeneralizedPareto(t(1.0 / 0.4), t(1.0), t(0.4))
    w = t([3.0, 5.0, 40.0])
    close(pa.log_prob(w), to_numpy(D.Pareto(t(2.5), t(2.5)).log_prob(w)), rtol=1e-10)
    close(pa.cdf(w), to_numpy(D.Pareto(t(2.5), t(2.5)).cdf(w)), rtol=1e-10)
    u = D.GeneralizedPareto(t(0.5), t(2.0), t(-1.0))
    close(u.log_prob(t([0.6, 2.4])), [-math.log(2.0)] * 2), close(u.cdf(t([1.0])), [0.25])
    # infinite mean and variance where c >= 1 / c >= 1/2; validation
    heavy = D.GeneralizedPareto(t(0.0), t(1.0), t([1.2, 0.6]))
    assert np.isnan(to_numpy(heavy.mean))[0] and np.isnan(to_numpy(heavy.variance)).all()
    assert d.batch_shape == (4,) and D.GeneralizedPareto(0.0, 1.0, 0.2).batch_shape == ()
    assert d.expand((2, 4)).sample((3,)).shape == (3, 2, 4) and d.has_rsample
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.GeneralizedPareto(0.0, -1.0, 0.2)
    with pytest.raises(ValueError, match="to be within the support"):
        d.log_prob(t([0.0, 2.0, 1.2, 4.0]))  # below loc in the first


def test_generalized_pareto_sampling_and_gradients():
    torch.manual_seed(0)
    d = D.GeneralizedPareto(t([0.5, 0.0]), t([2.0, 1.0]), t([0.2, -0.4]))
    s = to_numpy(d.sample((40000,)))
    np.testing.assert_allclose(s.mean(0), to_numpy(d.mean), rtol=0.03)
    np.testing.assert_allclose(s.var(0), to_numpy(d.variance), rtol=0.1)
    assert bool(d.support.check(t(s)).all())
    # rsample is icdf(u): at fixed u, d x / d scale = (x - loc) / scale and d x / d c by differences
    scale, c = t([2.0, 1.0], requires_grad=True), t([0.3, -0.2], requires_grad=True)
    q = t([0.3, 0.7])
    x = D.GeneralizedPareto(t(0.0), scale, c).icdf(q)
    x.sum().backward()
    close(scale.grad, to_numpy(x.detach()) / np.array([2.0, 1.0]))
    h = 1e-6
    up = to_numpy(D.GeneralizedPareto(t(0.0), t([2.0, 1.0]), t([0.3 + h, -0.2 + h])).icdf(q))
    down = to_numpy(D.GeneralizedPareto(t(0.0), t([2.0, 1.0]), t([0.3 - h, -0.2 - h])).icdf(q))
    close(c.grad, (up - down) / (2 * h), rtol=1e-7)


def test_wishart_redraws_singular_samples():
    # tiny scale and df near p - 1: some first draws fail the positive-definite check; they are redrawn
    with pytest.warns(UserWarning, match="Low df values detected"):
        w = D.Wishart(t([2.05, 2.1]), covariance_matrix=1e-8 * torch.eye(3, dtype=F64))
    torch.manual_seed(0)
    first = w._bartlett_sampling(torch.Size((200,)))
    assert bool((~constraints.positive_definite.check(first)).any())
    torch.manual_seed(0)
    with pytest.warns(UserWarning, match="Singular sample detected."):
        x = w.rsample((200,))
    assert x.shape == (200, 2, 3, 3) and bool(constraints.positive_definite.check(x).all())
    # valid draws are kept as drawn, without a warning
    ok = D.Wishart(t(5.0), covariance_matrix=torch.eye(3, dtype=F64))
    torch.manual_seed(2)
    expected = to_numpy(ok._bartlett_sampling(torch.Size((4,))))
    torch.manual_seed(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        close(ok.rsample((4,)), expected)


def test_bernoulli_log_prob_of_integer_value_raises_as_pytorch():
    # log_prob computes -binary_cross_entropy_with_logits(logits, value): an integer value is refused
    # by its (1 - target) in place, a bool one by the bool subtraction
    for dist in (D.Bernoulli(probs=t([0.3, 0.6])), D.ContinuousBernoulli(probs=t([0.3, 0.6]))):
        with pytest.raises(RuntimeError, match="result type Double can't be cast to the desired output type Long"):
            dist.log_prob(torch.tensor([0, 1]))
    with pytest.raises(NotImplementedError, match="two bool tensors"):
        D.Bernoulli(probs=t([0.3, 0.6])).log_prob(torch.tensor([False, True]))
    close(D.Bernoulli(probs=t([0.3, 0.6])).log_prob(t([0.0, 1.0])), [math.log(0.7), math.log(0.6)])
