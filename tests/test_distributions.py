"""ctorch.distributions: densities, moments, cdfs and entropies against hand formulas in NumPy
(scipy is not installed here), sample moments with fixed seeds, batch/event/sample shapes,
gradients through rsample and log_prob (gradcheck), KL divergences against closed forms and
Monte-Carlo, and PyTorch's validation errors."""
import math

import numpy as np
import pytest

import ctorch as torch
from ctorch import distributions as D
from ctorch.distributions import constraints

from conftest import DEVICES, to_numpy

F64 = torch.float64
erf = np.vectorize(math.erf)


def t(x, device="cpu", **kw):
    return torch.tensor(x, dtype=F64, device=device, **kw)


def close(actual, expected, rtol=1e-10, atol=1e-12):
    a = to_numpy(actual)
    assert a.shape == np.shape(expected), f"shape {a.shape} != {np.shape(expected)}"
    np.testing.assert_allclose(a, expected, rtol=rtol, atol=atol)


# --- densities, moments, cdfs against formulas ---------------------------------------------------

def test_normal_formulas():
    loc, scale = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.3, 2.5])
    x = np.array([0.1, -1.2, 7.0])
    d = D.Normal(t(loc), t(scale))
    z = (x - loc) / scale
    close(d.log_prob(t(x)), -0.5 * z ** 2 - np.log(scale) - 0.5 * np.log(2 * np.pi))
    close(d.entropy(), 0.5 + 0.5 * np.log(2 * np.pi) + np.log(scale))
    close(d.cdf(t(x)), 0.5 * (1 + erf(z / np.sqrt(2))))
    close(d.icdf(d.cdf(t(x))), x, rtol=1e-8)
    close(d.mean, loc), close(d.mode, loc), close(d.stddev, scale), close(d.variance, scale ** 2)
    close(d.perplexity(), np.exp(0.5 + 0.5 * np.log(2 * np.pi) + np.log(scale)))
    # ExponentialFamily's autograd entropy equals the closed form
    close(D.ExponentialFamily.entropy(d), 0.5 + 0.5 * np.log(2 * np.pi) + np.log(scale))


def test_uniform_formulas():
    low, high = np.array([0.0, -2.0]), np.array([1.0, 3.0])
    x = np.array([0.25, 3.5])  # the second outside: log_prob -inf, cdf clamped to 1
    d = D.Uniform(t(low), t(high), validate_args=False)
    close(d.log_prob(t(x)), [-np.log(1.0), -np.inf])
    close(d.cdf(t(x)), [0.25, 1.0])
    close(d.icdf(t([0.5, 0.1])), [0.5, -1.5])
    close(d.entropy(), np.log(high - low))
    close(d.mean, (low + high) / 2), close(d.variance, (high - low) ** 2 / 12)
    close(d.stddev, (high - low) / np.sqrt(12))
    assert np.isnan(to_numpy(d.mode)).all()
    assert repr(d.support) == "Interval(lower_bound=tensor([ 0., -2.], dtype=torch.float64), " \
                              "upper_bound=tensor([1., 3.], dtype=torch.float64))"


def test_exponential_laplace_formulas():
    rate, x = np.array([0.5, 2.0]), np.array([1.5, 0.2])
    e = D.Exponential(t(rate))
    close(e.log_prob(t(x)), np.log(rate) - rate * x)
    close(e.cdf(t(x)), 1 - np.exp(-rate * x))
    close(e.icdf(e.cdf(t(x))), x, rtol=1e-9)
    close(e.entropy(), 1 - np.log(rate))
    close(D.ExponentialFamily.entropy(e), 1 - np.log(rate))
    close(e.mean, 1 / rate), close(e.variance, rate ** -2), close(e.mode, [0.0, 0.0])
    loc, scale, y = np.array([0.0, 1.0]), np.array([2.0, 0.5]), np.array([-1.0, 1.7])
    lp = D.Laplace(t(loc), t(scale))
    close(lp.log_prob(t(y)), -np.log(2 * scale) - np.abs(y - loc) / scale)
    cdf = np.where(y < loc, 0.5 * np.exp((y - loc) / scale), 1 - 0.5 * np.exp(-(y - loc) / scale))
    close(lp.cdf(t(y)), cdf)
    close(lp.icdf(t(cdf)), y, rtol=1e-9)
    close(lp.entropy(), 1 + np.log(2 * scale))
    close(lp.variance, 2 * scale ** 2), close(lp.stddev, np.sqrt(2) * scale)


def test_bernoulli_probs_logits():
    p = np.array([0.2, 0.5, 0.9])
    logits = np.log(p / (1 - p))
    for d in (D.Bernoulli(probs=t(p)), D.Bernoulli(logits=t(logits))):
        close(d.probs, p), close(d.logits, logits, rtol=1e-9)
        close(d.log_prob(t([1.0, 0.0, 0.0])), np.log([0.2, 0.5, 0.1]), rtol=1e-9)
        close(d.entropy(), -(p * np.log(p) + (1 - p) * np.log(1 - p)), rtol=1e-9)
        close(D.ExponentialFamily.entropy(d), -(p * np.log(p) + (1 - p) * np.log(1 - p)), rtol=1e-9)
        close(d.mean, p), close(d.variance, p * (1 - p))
        np.testing.assert_array_equal(to_numpy(d.mode), [0.0, np.nan, 1.0])
    close(D.Bernoulli(0.3).enumerate_support(), [0.0, 1.0], rtol=0)
    assert tuple(D.Bernoulli(t(p)).enumerate_support().shape) == (2, 3)
    assert tuple(D.Bernoulli(t(p)).enumerate_support(expand=False).shape) == (2, 1)
    # probs 0 and 1 are clamped to eps before taking logits
    close(D.Bernoulli(t([0.0, 1.0])).logits, [np.log(2.0 ** -52), -np.log(2.0 ** -52)], rtol=1e-6)


def test_categorical_normalisation():
    raw = np.array([[1.0, 3.0, 0.0], [2.0, 2.0, 4.0]])
    p = raw / raw.sum(-1, keepdims=True)
    d = D.Categorical(probs=t(raw))
    close(d.probs, p)
    assert d.batch_shape == torch.Size([2]) and d.event_shape == torch.Size([])
    close(d.log_prob(t([1.0, 2.0])), np.log([0.75, 0.5]))
    close(d.entropy(), [-(0.25 * np.log(0.25) + 0.75 * np.log(0.75)), -(2 * 0.25 * np.log(0.25) + 0.5 * np.log(0.5))])
    np.testing.assert_array_equal(to_numpy(d.mode), [1, 2])
    assert np.isnan(to_numpy(d.mean)).all() and tuple(d.variance.shape) == (2,)
    logits = np.array([0.5, -1.0, 2.0])
    dl = D.Categorical(logits=t(logits))
    lse = np.log(np.exp(logits).sum())
    close(dl.logits, logits - lse)  # normalised to log-probabilities
    close(dl.probs, np.exp(logits - lse))
    np.testing.assert_array_equal(to_numpy(dl.enumerate_support()), [0, 1, 2])
    assert d.enumerate_support().shape == torch.Size([3, 2])
    assert repr(d.support) == "IntegerInterval(lower_bound=0, upper_bound=2)"
    # -inf logits (zero probabilities) give a finite entropy
    close(D.Categorical(logits=t([0.0, -math.inf])).entropy(), 0.0)


def test_one_hot_categorical():
    d = D.OneHotCategorical(probs=t([[0.2, 0.8], [0.6, 0.4]]))
    assert d.batch_shape == torch.Size([2]) and d.event_shape == torch.Size([2])
    close(d.log_prob(t([[0.0, 1.0], [0.0, 1.0]])), np.log([0.8, 0.4]))
    close(d.mean, [[0.2, 0.8], [0.6, 0.4]]), close(d.variance, [[0.16, 0.16], [0.24, 0.24]])
    close(d.mode, [[0.0, 1.0], [1.0, 0.0]])
    assert d.enumerate_support().shape == torch.Size([2, 2, 2])
    torch.manual_seed(0)
    s = d.sample((5,))
    assert s.shape == torch.Size([5, 2, 2]) and s.dtype == F64
    np.testing.assert_array_equal(to_numpy(s).sum(-1), np.ones((5, 2)))
    st = D.OneHotCategoricalStraightThrough(logits=t([0.0, 1.0], requires_grad=True))
    st.rsample().sum().backward()  # the gradient of sum(probs): zero through the softmax
    assert st.has_rsample


def _mvn_ref(loc, cov, x):
    diff = x - loc
    m = np.einsum("...i,ij,...j->...", diff, np.linalg.inv(cov), diff)
    return -0.5 * (len(loc) * np.log(2 * np.pi) + np.linalg.slogdet(cov)[1] + m)


def test_multivariate_normal_parametrisations():
    loc = np.array([1.0, -0.5, 0.2])
    A = np.array([[1.0, 0.2, 0.0], [0.5, 2.0, 0.1], [-0.3, 0.4, 0.7]])
    cov = A @ A.T + 0.5 * np.eye(3)
    L = np.linalg.cholesky(cov)
    x = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, -1.0]])
    entropy = 0.5 * 3 * (1 + np.log(2 * np.pi)) + 0.5 * np.linalg.slogdet(cov)[1]
    for kw in ({"covariance_matrix": t(cov)}, {"precision_matrix": t(np.linalg.inv(cov))}, {"scale_tril": t(L)}):
        d = D.MultivariateNormal(t(loc), **kw)
        assert d.batch_shape == torch.Size([]) and d.event_shape == torch.Size([3])
        close(d.log_prob(t(x)), _mvn_ref(loc, cov, x), rtol=1e-9)
        close(d.entropy(), entropy, rtol=1e-10)
        close(d.scale_tril, L, rtol=1e-9, atol=1e-12)
        close(d.covariance_matrix, cov, rtol=1e-9)
        close(d.precision_matrix, np.linalg.inv(cov), rtol=1e-9, atol=1e-12)
        close(d.variance, np.diag(cov), rtol=1e-9), close(d.mean, loc), close(d.mode, loc)
    # batched factor broadcast against a batched loc and a batch of values
    Ls = t(np.stack([L, 2 * L]))
    d = D.MultivariateNormal(t(np.zeros((4, 1, 3))), scale_tril=Ls)
    assert d.batch_shape == torch.Size([4, 2])
    lp = d.log_prob(t(np.broadcast_to(x[0] + 0.5, (5, 4, 2, 3)).copy()))
    assert lp.shape == torch.Size([5, 4, 2])
    close(lp[0, 0], [_mvn_ref(np.zeros(3), cov, x[0] + 0.5), _mvn_ref(np.zeros(3), 4 * cov, x[0] + 0.5)],
          rtol=1e-9)


# --- sampling: moments with a fixed seed, shapes --------------------------------------------------

@pytest.mark.parametrize("name, make, mean, var", [
    ("normal", lambda: D.Normal(t([1.0, -2.0]), t([0.5, 2.0])), [1.0, -2.0], [0.25, 4.0]),
    ("uniform", lambda: D.Uniform(t([0.0, -1.0]), t([2.0, 5.0])), [1.0, 2.0], [4 / 12, 3.0]),
    ("exponential", lambda: D.Exponential(t([0.5, 4.0])), [2.0, 0.25], [4.0, 1 / 16]),
    ("laplace", lambda: D.Laplace(t([0.0, 3.0]), t([1.0, 0.2])), [0.0, 3.0], [2.0, 0.08]),
    ("bernoulli", lambda: D.Bernoulli(t([0.1, 0.7])), [0.1, 0.7], [0.09, 0.21]),
    ("categorical", lambda: D.Categorical(t([[0.5, 0.25, 0.25], [0.0, 0.0, 1.0]])), [0.75, 2.0], [0.6875, 0.0]),
], ids=lambda v: v if isinstance(v, str) else "_")
def test_sample_moments(name, make, mean, var):
    d = make()
    torch.manual_seed(0)
    s = to_numpy(d.sample((20000,)))
    assert s.shape == (20000, 2)
    sd = np.sqrt(np.array(var))
    assert (np.abs(s.mean(0) - mean) <= 5 * sd / np.sqrt(20000) + 1e-12).all(), s.mean(0)
    np.testing.assert_allclose(s.var(0), var, rtol=0.06, atol=1e-12)
    torch.manual_seed(0)
    np.testing.assert_array_equal(to_numpy(d.sample((20000,))), s)  # same seed, same draws
    if d.has_rsample:
        torch.manual_seed(0)
        assert np.abs(to_numpy(d.rsample((4000,))).mean(0) - mean).max() < 12 * sd.max() / np.sqrt(4000)


def test_mvn_sample_covariance():
    cov = np.array([[2.0, 0.6], [0.6, 0.5]])
    d = D.MultivariateNormal(t([1.0, -1.0]), covariance_matrix=t(cov))
    torch.manual_seed(1)
    s = to_numpy(d.sample((20000,)))
    np.testing.assert_allclose(s.mean(0), [1.0, -1.0], atol=0.04)
    np.testing.assert_allclose(np.cov(s.T), cov, atol=0.06)


@pytest.mark.parametrize("sample_shape", [(), (3,), (2, 4)], ids=["none", "3", "2x4"])
def test_shapes(sample_shape):
    z = t(np.zeros((2, 3)))
    dists = {
        "normal": (D.Normal(z, 1.0), (2, 3), ()),
        "uniform": (D.Uniform(z, 1.0), (2, 3), ()),
        "exponential": (D.Exponential(z + 1), (2, 3), ()),
        "laplace": (D.Laplace(0.0, z + 1), (2, 3), ()),
        "bernoulli": (D.Bernoulli(logits=z), (2, 3), ()),
        "categorical": (D.Categorical(logits=z), (2,), ()),
        "onehot": (D.OneHotCategorical(logits=z), (2,), (3,)),
        "mvn": (D.MultivariateNormal(z, scale_tril=t(np.eye(3))), (2,), (3,)),
        "independent": (D.Independent(D.Normal(z, 1.0), 1), (2,), (3,)),
        "scalar": (D.Normal(0.0, 1.0), (), ()),
    }
    torch.manual_seed(0)
    for name, (d, batch, event) in dists.items():
        assert d.batch_shape == torch.Size(batch) and d.event_shape == torch.Size(event), name
        s = d.sample(sample_shape)
        assert s.shape == torch.Size(sample_shape + batch + event), name
        assert d.log_prob(s).shape == torch.Size(sample_shape + batch), name
        e = d.expand((5,) + batch)
        assert e.batch_shape == torch.Size((5,) + batch) and e.event_shape == d.event_shape, name
        assert e.sample(sample_shape).shape == torch.Size(sample_shape + (5,) + batch + event), name
        assert e.entropy().shape == torch.Size((5,) + batch), name
        if d.has_rsample:
            assert d.rsample(sample_shape).shape == s.shape, name
    assert D.Normal(0.0, 1.0).sample().dtype == torch.get_default_dtype()
    i = D.Independent(D.Normal(z, 1.0), 2)
    assert i.batch_shape == torch.Size([]) and i.event_shape == torch.Size([2, 3])
    close(i.log_prob(z), 6 * (-0.5 * np.log(2 * np.pi)))
    close(i.entropy(), 6 * (0.5 + 0.5 * np.log(2 * np.pi)))
    assert repr(i.support) == "IndependentConstraint(Real(), 2)"


# --- gradients ---------------------------------------------------------------------------------------

def _seeded(make, shape=(3,)):
    def f(*params):
        torch.manual_seed(7)
        return make(*params).rsample(shape)
    return f


def test_rsample_gradcheck():
    gc = torch.autograd.gradcheck
    a = t([0.3, -1.0], requires_grad=True)
    b = t([1.5, 0.5], requires_grad=True)
    assert gc(_seeded(lambda l, s: D.Normal(l, s)), (a, b))
    assert gc(_seeded(lambda l, h: D.Uniform(l, l + h)), (a, b))
    assert gc(_seeded(lambda r: D.Exponential(r)), (b,))
    assert gc(_seeded(lambda l, s: D.Laplace(l, s)), (a, b))
    L = t([[1.0, 0.0], [0.3, 2.0]], requires_grad=True)
    assert gc(_seeded(lambda l, m: D.MultivariateNormal(l, scale_tril=m.tril())), (a, L))
    assert gc(_seeded(lambda l, m: D.MultivariateNormal(l, covariance_matrix=m @ m.mT + torch.eye(2, dtype=F64))), (a, L))
    # the reparameterised sample is loc + scale * eps with the generator's eps
    torch.manual_seed(7)
    eps = torch.empty(3, 2, dtype=F64).normal_()
    close(_seeded(lambda l, s: D.Normal(l, s))(a, b), to_numpy(a + b * eps))
    assert D.Normal(a, b).rsample().grad_fn is not None and D.Normal(a, b).sample().grad_fn is None


def test_log_prob_gradcheck():
    gc = torch.autograd.gradcheck
    a = t([0.3, -1.0], requires_grad=True)
    b = t([1.5, 0.5], requires_grad=True)
    x = t([[0.1, 0.4], [-2.0, 1.0]])
    assert gc(lambda l, s: D.Normal(l, s).log_prob(x), (a, b))
    assert gc(lambda l, s: D.Laplace(l, s).log_prob(x), (a, b))
    assert gc(lambda r: D.Exponential(r).log_prob(x.abs()), (b,))
    assert gc(lambda lg: D.Bernoulli(logits=lg).log_prob(t([[1.0, 0.0], [0.0, 1.0]])), (a,))
    assert gc(lambda lg: D.Bernoulli(logits=lg).entropy(), (a,))
    logits = t([[0.2, -0.4, 1.0], [0.0, 0.5, -1.0]], requires_grad=True)
    assert gc(lambda lg: D.Categorical(logits=lg).log_prob(t([2.0, 0.0])), (logits,))
    assert gc(lambda lg: D.Categorical(logits=lg).entropy(), (logits,))
    L = t([[1.0, 0.0], [0.3, 2.0]], requires_grad=True)
    assert gc(lambda l, m: D.MultivariateNormal(l, precision_matrix=m @ m.mT + torch.eye(2, dtype=F64)).log_prob(x),
              (a, L))
    assert gc(lambda l, s: D.kl_divergence(D.Normal(l, s), D.Laplace(0.2, 1.3)), (a, b))


# --- KL divergence --------------------------------------------------------------------------------

def test_kl_closed_forms():
    kl = D.kl_divergence
    m1, s1, m2, s2 = 0.5, 1.2, -0.3, 0.7
    close(kl(D.Normal(t(m1), t(s1)), D.Normal(t(m2), t(s2))),
          np.log(s2 / s1) + (s1 ** 2 + (m1 - m2) ** 2) / (2 * s2 ** 2) - 0.5)
    # the exponential-family (Bregman) route gives the same numbers
    close(D.kl._kl_expfamily_expfamily(D.Normal(t(m1), t(s1)), D.Normal(t(m2), t(s2))),
          np.log(s2 / s1) + (s1 ** 2 + (m1 - m2) ** 2) / (2 * s2 ** 2) - 0.5, rtol=1e-9)
    close(D.kl._kl_expfamily_expfamily(D.Exponential(t(2.0)), D.Exponential(t(0.5))),
          np.log(2.0 / 0.5) + 0.5 / 2.0 - 1, rtol=1e-9)
    close(kl(D.Exponential(t(2.0)), D.Exponential(t(0.5))), np.log(4.0) + 0.25 - 1)
    p, q = np.array([0.2, 0.0, 1.0]), np.array([0.6, 0.3, 0.0])
    bern = kl(D.Bernoulli(t(p)), D.Bernoulli(t(q)))
    close(bern, [0.2 * np.log(0.2 / 0.6) + 0.8 * np.log(0.8 / 0.4), np.log(1 / 0.7), np.inf], rtol=1e-9)
    close(kl(D.Uniform(t(0.0), t(1.0)), D.Uniform(t(-1.0), t(2.0))), np.log(3.0))
    close(kl(D.Uniform(t([0.0]), t([1.0])), D.Uniform(t([0.5]), t([2.0]))), [np.inf])
    close(kl(D.Laplace(t(0.0), t(1.0)), D.Laplace(t(1.0), t(2.0))), -np.log(0.5) + 0.5 + 0.5 * np.exp(-1) - 1)
    pc, qc = np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.25, 0.5])
    ref = np.sum(pc[:2] * np.log(pc[:2] / qc[:2]))
    close(kl(D.Categorical(t(pc)), D.Categorical(t(qc))), ref, rtol=1e-9)
    close(kl(D.OneHotCategorical(t(pc)), D.OneHotCategorical(t(qc))), ref, rtol=1e-9)
    close(kl(D.Categorical(t(qc)), D.Categorical(t(pc))), np.inf)
    # multivariate normal: 0.5 (tr(Sq^-1 Sp) + dm^T Sq^-1 dm - n + log det Sq / det Sp), batched q
    Sp = np.array([[1.0, 0.3], [0.3, 0.8]])
    Sq = np.stack([np.array([[2.0, -0.4], [-0.4, 1.0]]), np.eye(2)])
    mp, mq = np.array([0.1, 0.2]), np.array([[1.0, -1.0], [0.0, 0.0]])
    ref = [0.5 * (np.trace(np.linalg.solve(S, Sp)) + (m - mp) @ np.linalg.solve(S, m - mp) - 2
                  + np.linalg.slogdet(S)[1] - np.linalg.slogdet(Sp)[1]) for S, m in zip(Sq, mq)]
    close(kl(D.MultivariateNormal(t(mp), t(Sp)), D.MultivariateNormal(t(mq), t(Sq))), ref, rtol=1e-9)
    ind = kl(D.Independent(D.Normal(t([[0.0, 1.0]]), 1.0), 1), D.Independent(D.Normal(t([[1.0, 1.0]]), 1.0), 1))
    close(ind, [0.5])


@pytest.mark.parametrize("p, q", [
    (lambda: D.Exponential(t(1.5)), lambda: D.Normal(t(0.5), t(1.2))),
    (lambda: D.Laplace(t(0.3), t(0.8)), lambda: D.Normal(t(-0.2), t(1.5))),
    (lambda: D.Normal(t(0.3), t(0.8)), lambda: D.Laplace(t(-0.2), t(1.1))),
    (lambda: D.Uniform(t(0.5), t(2.0)), lambda: D.Normal(t(1.0), t(0.9))),
    (lambda: D.Uniform(t(0.5), t(2.0)), lambda: D.Exponential(t(0.7))),
    (lambda: D.MultivariateNormal(t([0.2, -0.1]), t([[1.0, 0.4], [0.4, 0.6]])),
     lambda: D.MultivariateNormal(t([0.0, 0.5]), scale_tril=t([[1.2, 0.0], [-0.3, 0.9]]))),
], ids=["exp-normal", "laplace-normal", "normal-laplace", "uniform-normal", "uniform-exp", "mvn-mvn"])
def test_kl_monte_carlo(p, q):
    p, q = p(), q()
    torch.manual_seed(0)
    x = p.sample((40000,))
    diff = to_numpy(p.log_prob(x) - q.log_prob(x))
    assert abs(to_numpy(D.kl_divergence(p, q)) - diff.mean()) < 5 * diff.std() / 200 + 1e-9


def test_kl_infinite_and_dispatch():
    kl = D.kl_divergence
    for p, q in [(D.Normal(t([0.0]), 1.0), D.Uniform(t([0.0]), 1.0)), (D.Normal(t([0.0]), 1.0), D.Exponential(t([1.0]))),
                 (D.Laplace(t([0.0]), 1.0), D.Exponential(t([1.0]))), (D.Laplace(t([0.0]), 1.0), D.Uniform(t([0.0]), 1.0)),
                 (D.Exponential(t([1.0])), D.Uniform(t([0.0]), 1.0))]:
        close(kl(p, q), [np.inf])
    close(kl(D.Uniform(t(-1.0), t(1.0)), D.Exponential(t(1.0))), np.inf)
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Categorical "
                                                  "and q type Normal"):
        kl(D.Categorical(t([0.5, 0.5])), D.Normal(0.0, 1.0))
    with pytest.raises(NotImplementedError, match="cross KL-divergence between different exponential families"):
        kl(D.Normal(0.0, 1.0), D.Bernoulli(0.5))
    with pytest.raises(ValueError, match="different event shapes"):
        kl(D.MultivariateNormal(t([0.0]), t([[1.0]])), D.MultivariateNormal(t([0.0, 0.0]), t(np.eye(2))))

    class MyNormal(D.Normal):
        pass

    close(kl(MyNormal(t(0.0), t(1.0)), D.Normal(t(1.0), t(1.0))), 0.5)  # inherits (Normal, Normal)

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return torch.zeros(())

    assert kl(MyNormal(t(0.0), t(1.0)), D.Normal(t(1.0), t(1.0))).item() == 0.0
    assert kl(D.Normal(t(0.0), t(1.0)), D.Normal(t(1.0), t(1.0))).item() == 0.5
    del D.kl._KL_REGISTRY[MyNormal, D.Normal]
    D.kl._KL_MEMOIZE.clear()
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        D.register_kl(int, D.Normal)


# --- validation and errors ---------------------------------------------------------------------------

def test_validation_messages():
    with pytest.raises(ValueError) as e:
        D.Normal(torch.tensor([0.0]), torch.tensor([-1.0]))
    assert str(e.value) == ("Expected parameter scale (Tensor of shape (1,)) of distribution "
                            "Normal(loc: tensor([0.]), scale: tensor([-1.])) to satisfy the constraint "
                            "GreaterThan(lower_bound=0.0), but found invalid values:\ntensor([-1.])")
    with pytest.raises(ValueError) as e:
        D.Normal(0.0, 1.0).log_prob(torch.tensor([float("nan")]))
    assert str(e.value) == ("Expected value argument (Tensor of shape (1,)) to be within the support (Real()) "
                            "of the distribution Normal(loc: 0.0, scale: 1.0), but found invalid values:\ntensor([nan])")
    with pytest.raises(ValueError, match=r"within the support \(Boolean\(\)\) of the distribution Bernoulli"):
        D.Bernoulli(torch.tensor([0.2])).log_prob(torch.tensor([0.5]))
    with pytest.raises(ValueError, match=r"to satisfy the constraint Simplex\(\)"):
        D.OneHotCategorical(torch.tensor([-0.5, 1.5]))
    with pytest.raises(ValueError, match=r"within the support \(IntegerInterval\(lower_bound=0, upper_bound=1\)\)"):
        D.Categorical(torch.tensor([0.5, 0.5])).log_prob(torch.tensor(2))
    with pytest.raises(ValueError, match=r"within the support \(OneHot\(\)\)"):
        D.OneHotCategorical(torch.tensor([0.5, 0.5])).log_prob(torch.tensor([1.0, 1.0]))
    with pytest.raises(ValueError, match=r"constraint PositiveDefinite\(\)"):
        D.MultivariateNormal(torch.zeros(2), torch.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match=r"constraint LowerCholesky\(\)"):
        D.MultivariateNormal(torch.zeros(2), scale_tril=torch.tensor([[1.0, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError) as e:
        D.Uniform(torch.tensor(1.0), torch.tensor(0.0))
    assert str(e.value) == ("Expected parameter low (Tensor of shape ()) of distribution Uniform(low: 1.0, high: 0.0) "
                            "to satisfy the constraint LessThan(upper_bound=0.0), but found invalid values:\n1.0")
    with pytest.raises(ValueError, match=r"within the support \(GreaterThanEq\(lower_bound=0.0\)\)"):
        D.Exponential(1.0).log_prob(torch.tensor(-1.0))
    with pytest.raises(ValueError, match=r"Value is not broadcastable with batch_shape\+event_shape: "
                                         r"torch.Size\(\[3\]\) vs torch.Size\(\[2\]\)."):
        D.Normal(torch.zeros(2), 1.0).log_prob(torch.zeros(3))
    with pytest.raises(ValueError, match=r"The right-most size of value must match event_shape: "
                                         r"torch.Size\(\[3\]\) vs torch.Size\(\[2\]\)."):
        D.MultivariateNormal(torch.zeros(2), torch.eye(2)).log_prob(torch.zeros(3))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        D.Normal(0.0, 1.0).log_prob(0.5)
    # validate_args=False, and the class-wide default
    assert D.Normal(torch.tensor(0.0), torch.tensor(-1.0), validate_args=False).scale.item() == -1.0
    D.Distribution.set_default_validate_args(False)
    try:
        assert math.isnan(D.Normal(0.0, -1.0).log_prob(torch.tensor(0.0)).item())
        assert D.Normal(0.0, 1.0, validate_args=True)._validate_args
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(2)
    # expand keeps the setting and does not validate again
    assert not D.Normal(0.0, 1.0, validate_args=False).expand((3,))._validate_args


def test_argument_errors():
    for cls in (D.Bernoulli, D.Categorical, D.OneHotCategorical):
        with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
            cls()
        with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
            cls(torch.tensor([0.5]), torch.tensor([0.0]))
    with pytest.raises(ValueError, match="`probs` parameter must be at least one-dimensional."):
        D.Categorical(torch.tensor(0.5))
    with pytest.raises(ValueError, match="`logits` parameter must be at least one-dimensional."):
        D.Categorical(logits=torch.tensor(0.5))
    with pytest.raises(ValueError, match="loc must be at least one-dimensional."):
        D.MultivariateNormal(torch.tensor(0.0), torch.eye(1))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.MultivariateNormal(torch.zeros(2))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.MultivariateNormal(torch.zeros(2), torch.eye(2), scale_tril=torch.eye(2))
    for kw, what in (("covariance_matrix", "covariance_matrix"), ("precision_matrix", "precision_matrix"),
                     ("scale_tril", "scale_tril matrix")):
        with pytest.raises(ValueError, match=f"{what} must be at least two-dimensional, with optional leading batch"):
            D.MultivariateNormal(torch.zeros(2), **{kw: torch.ones(2)})
    with pytest.raises(ValueError, match=r"Expected reinterpreted_batch_ndims <= len\(base_distribution.batch_shape\), "
                                         "actual 2 vs 1"):
        D.Independent(D.Normal(torch.zeros(2), 1.0), 2)
    with pytest.raises(ValueError, match="Input arguments must all be instances of Number"):
        D.Normal("a", 1.0)
    with pytest.raises(NotImplementedError, match="Enumeration over cartesian product is not implemented"):
        D.Independent(D.Bernoulli(torch.full((2,), 0.5)), 1).enumerate_support()
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        D.Distribution(validate_args=False).mode
    with pytest.raises(ValueError, match="Expected value.dim\\(\\) >= 2 but got 1"):
        constraints.independent(constraints.real, 2).check(torch.zeros(3))


def test_reprs_and_constraints():
    # (a 0-d tensor formats as its number, as in PyTorch: the messages above rely on it)
    assert f"{torch.tensor(0.5)}" == "0.5" and format(torch.tensor(2.0, requires_grad=True), ".2f") == "2.00"
    assert f"{torch.tensor([1.0])}" == "tensor([1.])"
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        format(torch.tensor([1.0]), ".2f")
    assert repr(D.Normal(torch.zeros(2), 1.0)) == "Normal(loc: torch.Size([2]), scale: torch.Size([2]))"
    assert repr(D.Categorical(logits=torch.zeros(3))) == "Categorical(logits: torch.Size([3]))"
    assert repr(D.MultivariateNormal(torch.zeros(2), torch.eye(2))) == \
        "MultivariateNormal(loc: torch.Size([2]), covariance_matrix: torch.Size([2, 2]))"
    assert repr(D.Independent(D.Normal(torch.zeros(2), 1.0), 1)) == \
        "Independent(Normal(loc: torch.Size([2]), scale: torch.Size([2])), 1)"
    assert [repr(c) for c in (constraints.positive, constraints.unit_interval, constraints.real_vector,
                              constraints.simplex, constraints.nonnegative_integer, constraints.half_open_interval(0, 1),
                              constraints.dependent)] == [
        "GreaterThan(lower_bound=0.0)", "Interval(lower_bound=0.0, upper_bound=1.0)",
        "IndependentConstraint(Real(), 1)", "Simplex()", "IntegerGreaterThan(lower_bound=0)",
        "HalfOpenInterval(lower_bound=0, upper_bound=1)", "Dependent()"]
    x = torch.tensor([[-1.0, 0.0, 0.5, 1.0]])
    np.testing.assert_array_equal(to_numpy(constraints.unit_interval.check(x)), [[False, True, True, True]])
    np.testing.assert_array_equal(to_numpy(constraints.half_open_interval(0, 1).check(x)), [[False, True, True, False]])
    np.testing.assert_array_equal(to_numpy(constraints.real_vector.check(torch.tensor([[0.0, float("nan")], [1, 2]]))),
                                  [False, True])
    np.testing.assert_array_equal(to_numpy(constraints.positive_definite.check(
        torch.stack([torch.eye(2), -torch.eye(2)]))), [True, False])
    np.testing.assert_array_equal(to_numpy(constraints.positive_semidefinite.check(
        torch.tensor([[[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]))), [True, False])
    np.testing.assert_array_equal(to_numpy(constraints.symmetric.check(torch.zeros(2, 3))), False)
    assert constraints.is_dependent(D.Uniform.support) and not constraints.is_dependent(constraints.real)
    assert D.Categorical.support.is_discrete and D.Uniform.support.event_dim == 0
    assert constraints.one_hot.is_discrete and constraints.one_hot.event_dim == 1
    assert constraints.independent(constraints.simplex, 1).event_dim == 2
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        constraints.dependent.check(x)
    v = torch.arange(1.0, 7.0)
    m = D.utils.vec_to_tril_matrix(v)
    close(m, [[1, 0, 0], [2, 3, 0], [4, 5, 6]], rtol=0)
    close(D.utils.tril_matrix_to_vec(m), to_numpy(v), rtol=0)


# --- devices -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_device(device):
    loc = t([0.5, -1.0], device, requires_grad=True)
    scale = t([1.0, 2.0], device, requires_grad=True)
    torch.manual_seed(0)
    n = D.Normal(loc, scale)
    s = n.rsample((3,))
    assert s.device.type == device and s.shape == torch.Size([3, 2])
    n.log_prob(s.detach()).sum().backward()
    assert loc.grad.device.type == device
    x = np.array([0.0, 1.0])
    close(D.Normal(loc, scale).log_prob(t(x, device)),
          -0.5 * ((x - [0.5, -1.0]) / [1.0, 2.0]) ** 2 - np.log([1.0, 2.0]) - 0.5 * np.log(2 * np.pi))
    c = D.Categorical(logits=t([[0.0, 1.0, -1.0], [2.0, 0.0, 0.0]], device))
    cs = c.sample((100,))
    assert cs.device.type == device and cs.shape == torch.Size([100, 2]) and int(cs.max()) <= 2
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    m = D.MultivariateNormal(t([0.0, 1.0], device), t(cov, device))
    close(m.log_prob(t([[1.0, 1.0], [0.0, 0.0]], device)),
          _mvn_ref(np.array([0.0, 1.0]), cov, np.array([[1.0, 1.0], [0.0, 0.0]])), rtol=1e-9)
    assert m.rsample((4,)).device.type == device
    close(D.kl_divergence(D.Bernoulli(t([0.3], device)), D.Bernoulli(t([0.0], device))), [np.inf])
    pos = t([1.5, 0.5], device, requires_grad=True)
    assert torch.autograd.gradcheck(_seeded(lambda l, s: D.Laplace(l, s)), (loc, pos))
    assert torch.autograd.gradcheck(_seeded(lambda r: D.Exponential(r)), (pos,))
    assert torch.autograd.gradcheck(lambda lg: D.Categorical(logits=lg).entropy(), (loc,))
    for d in (D.Uniform(t(0.0, device), 1.0), D.Exponential(t(1.0, device)), D.Laplace(t(0.0, device), 1.0),
              D.Bernoulli(t(0.5, device)), D.OneHotCategorical(t([0.5, 0.5], device))):
        assert d.sample((2,)).device.type == device
