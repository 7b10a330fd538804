"""torch._standard_gamma, _sample_dirichlet, poisson, binomial and _standard_gamma_grad
(csrc/sampling_math.h, random.c, cuda/random.cu).

Every sample comes from a fixed seed, so each statistical check below sees the same numbers on
every run (they cannot flake): the tolerances are still set at about five standard errors, so
that they test the distribution and not the particular draws. There is no SciPy here: the
continuous samples are compared with NumPy's own gamma sampler by a two-sample Kolmogorov-Smirnov
statistic, the discrete ones with their exact probabilities (math.lgamma) by a chi-square
statistic. The CUDA runs must give the CPU's bits for the same seed."""
import math

import numpy as np
import pytest

import ctorch
from conftest import to_numpy

N = 4000


def gen(device, seed=0):
    return ctorch.Generator(device=device).manual_seed(seed)


def full(value, n=N, dtype="float64", device="cpu"):
    return ctorch.full((n,), value, dtype=getattr(ctorch, dtype), device=device)


def ks_two_sample(a, b):
    """sup |F_a - F_b| of two samples."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    return np.max(np.abs(np.searchsorted(a, grid, side="right") / a.size - np.searchsorted(b, grid, side="right") / b.size))


def chi_square(samples, logpmf, support_max):
    """(statistic, degrees of freedom): cells k = 0..support_max merged from the tail inwards
    until each expects at least 5 draws; the last cell also takes everything above."""
    k = np.arange(support_max + 1)
    expected = np.exp([logpmf(i) for i in k]) * samples.size
    observed = np.bincount(np.minimum(samples.astype(np.int64), support_max), minlength=support_max + 1)
    expected[-1] += samples.size - expected.sum()  # the tail beyond support_max
    cells_e, cells_o, acc_e, acc_o = [], [], 0.0, 0
    for e, o in zip(expected, observed):
        acc_e, acc_o = acc_e + e, acc_o + o
        if acc_e >= 5:
            cells_e.append(acc_e), cells_o.append(acc_o)
            acc_e, acc_o = 0.0, 0
    cells_e[-1] += acc_e
    cells_o[-1] += acc_o
    e, o = np.array(cells_e), np.array(cells_o)
    return float(((o - e) ** 2 / e).sum()), len(e) - 1


def chi_square_ok(stat, dof):
    # mean dof, sd sqrt(2 dof): six standard deviations above the mean
    return stat < dof + 6 * math.sqrt(2 * dof) + 5


# --- the distributions (CPU; the CUDA bits are the same, checked below) -------------------------
@pytest.mark.parametrize("alpha", [0.15, 1.0, 3.5, 60.0])
def test_standard_gamma_distribution(alpha):
    x = to_numpy(ctorch._standard_gamma(full(alpha), generator=gen("cpu", 1)))
    assert np.all(x > 0)
    se_mean = math.sqrt(alpha / N)
    assert abs(x.mean() - alpha) < 5 * se_mean
    # the variance of the sample variance of a Gamma: (m4 - var^2) / N, m4 = 3 a^2 + 6 a
    assert abs(x.var() - alpha) < 5 * math.sqrt((3 * alpha**2 + 6 * alpha - alpha**2) / N)
    ref = np.random.default_rng(7).standard_gamma(alpha, N)
    assert ks_two_sample(x, ref) < 1.95 * math.sqrt(2 / N)  # KS at the 0.1% level


@pytest.mark.parametrize("rate", [0.7, 6.0, 25.0, 700.0])
def test_poisson_distribution(rate):
    x = to_numpy(ctorch.poisson(full(rate), generator=gen("cpu", 2)))
    assert np.all(x == np.round(x)) and np.all(x >= 0)
    assert abs(x.mean() - rate) < 5 * math.sqrt(rate / N)
    top = int(rate + 8 * math.sqrt(rate) + 10)
    stat, dof = chi_square(x, lambda k: k * math.log(rate) - rate - math.lgamma(k + 1), top)
    assert chi_square_ok(stat, dof), (stat, dof)


@pytest.mark.parametrize("count,prob", [(7, 0.3), (40, 0.9), (300, 0.35), (2000, 0.004), (60, 0.5)])
def test_binomial_distribution(count, prob):
    x = to_numpy(ctorch.binomial(full(float(count)), full(prob), generator=gen("cpu", 3)))
    assert np.all(x == np.round(x)) and np.all((x >= 0) & (x <= count))
    mean, var = count * prob, count * prob * (1 - prob)
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / N)

    def logpmf(k):
        if k > count:
            return -math.inf
        return (math.lgamma(count + 1) - math.lgamma(k + 1) - math.lgamma(count - k + 1) + k * math.log(prob)
                + (count - k) * math.log1p(-prob))

    stat, dof = chi_square(x, logpmf, count)
    assert chi_square_ok(stat, dof), (stat, dof)


def test_sample_dirichlet_distribution():
    alpha = np.array([0.4, 1.0, 2.5, 6.0])
    x = to_numpy(ctorch._sample_dirichlet(ctorch.tensor(np.tile(alpha, (N, 1))), generator=gen("cpu", 4)))
    assert x.shape == (N, 4)
    np.testing.assert_allclose(x.sum(1), 1.0, rtol=1e-12)
    a0 = alpha.sum()
    mean, var = alpha / a0, alpha * (a0 - alpha) / (a0**2 * (a0 + 1))
    assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / N))
    # each marginal is Beta(a_i, a0 - a_i): compare with NumPy's
    ref = np.random.default_rng(8).beta(alpha[0], a0 - alpha[0], N)
    assert ks_two_sample(x[:, 0], ref) < 1.95 * math.sqrt(2 / N)


# --- streams: reproducible, per element, the same bits on every device --------------------------
def bits(t):
    return str(t.dtype), tuple(t.shape), to_numpy(t).tobytes()


def draw_all(device, dtype, seed):
    """every sampler on a small mixed input; returns the outputs and the generator's offset"""
    g = gen(device, seed)
    dt = getattr(ctorch, dtype)
    alpha = ctorch.tensor([[0.05, 0.7, 1.0], [2.5, 30.0, 1e4]], dtype=dt, device=device)
    rate = ctorch.tensor([0.0, 0.3, 4.0, 9.99, 10.0, 55.0, 3e3, 1e6], dtype=dt, device=device)
    count = ctorch.tensor([0.0, 1.0, 5.0, 12.0, 30.0, 100.0, 4000.0, 1e6], dtype=dt, device=device)
    prob = ctorch.tensor([0.5, 0.9, 0.01, 0.5, 0.7, 0.25, 0.003, 0.6], dtype=dt, device=device)
    outs = [ctorch._standard_gamma(alpha, generator=g), ctorch._sample_dirichlet(alpha, generator=g),
            ctorch.poisson(rate, generator=g), ctorch.binomial(count, prob, generator=g),
            ctorch._standard_gamma_grad(alpha, ctorch.ones_like(alpha))]
    return outs, g.get_offset()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_same_bits_on_cpu_and_cuda(device, dtype):
    cpu, cpu_offset = draw_all("cpu", dtype, 123)
    other, offset = draw_all(device, dtype, 123)
    assert offset == cpu_offset == 6 + 6 + 8 + 8  # one counter per element, whatever the draws
    for c, o in zip(cpu, other):
        assert o.device.type == device
        assert bits(c) == bits(o)


@pytest.mark.parametrize("fn", ["gamma", "poisson"])
def test_half_dtypes(device, fn):
    """poisson takes float16/bfloat16 on both devices, the others only on CUDA (as PyTorch);
    the half samples are the float64 ones rounded (computed in double)."""
    for dtype in ["float16", "bfloat16"]:
        x = full(3.0, 64, dtype, device)
        op = ctorch._standard_gamma if fn == "gamma" else ctorch.poisson
        if fn == "gamma" and device == "cpu":
            name = "Half" if dtype == "float16" else "BFloat16"
            with pytest.raises(NotImplementedError, match=f"\"gamma_cpu\" not implemented for '{name}'"):
                op(x)
            continue
        got = op(x, generator=gen(device, 5))
        wide = op(full(3.0, 64, "float64", device), generator=gen(device, 5))
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(to_numpy(got), to_numpy(wide.to(x.dtype)))


def test_elements_own_their_counters():
    """element i depends only on (seed, offset + i): a layout, a shape or a split of the call
    changes nothing, and the same seed repeats"""
    a = ctorch.tensor(np.linspace(0.2, 9.0, 12))
    whole = ctorch._standard_gamma(a, generator=gen("cpu", 9))
    assert bits(whole) == bits(ctorch._standard_gamma(a, generator=gen("cpu", 9)))
    g = gen("cpu", 9)
    first, second = ctorch._standard_gamma(a[:5], generator=g), ctorch._standard_gamma(a[5:], generator=g)
    np.testing.assert_array_equal(to_numpy(whole), np.concatenate([to_numpy(first), to_numpy(second)]))
    t = ctorch.tensor(np.linspace(0.2, 9.0, 12).reshape(4, 3)).t()  # transposed input: contiguous output
    out = ctorch._standard_gamma(t, generator=gen("cpu", 9))
    assert out.shape == (3, 4) and out.stride() == (4, 1)
    np.testing.assert_array_equal(to_numpy(out), to_numpy(ctorch._standard_gamma(t.contiguous(), generator=gen("cpu", 9))))
    ctorch.manual_seed(11)
    d1 = ctorch.poisson(full(4.0, 10))
    ctorch.manual_seed(11)
    assert bits(d1) == bits(ctorch.poisson(full(4.0, 10)))
    assert not np.array_equal(to_numpy(d1), to_numpy(ctorch.poisson(full(4.0, 10))))


def test_shapes_and_edge_values(device):
    e = ctorch.empty(0, 3, device=device)
    for out in [ctorch._standard_gamma(e), ctorch.poisson(e), ctorch.binomial(e, e), ctorch._sample_dirichlet(e)]:
        assert out.shape == (0, 3) and out.dtype == ctorch.float32
    s = ctorch.tensor(2.0, device=device)
    assert ctorch._standard_gamma(s).shape == () and ctorch._sample_dirichlet(s).item() == 1.0
    # gamma: alpha <= 0 or NaN gives the smallest normal number, inf gives inf
    tiny = np.finfo(np.float32).tiny
    g = to_numpy(ctorch._standard_gamma(ctorch.tensor([-1.0, 0.0, math.nan, math.inf, 1e-30, 1e30], device=device)))
    assert list(g[:3]) == [tiny] * 3 and g[3] == math.inf and g[4] == tiny and 0.5e30 < g[5] < 2e30
    d = to_numpy(ctorch._sample_dirichlet(ctorch.tensor([[0.0, 0.0], [math.inf, 1.0]], device=device)))
    np.testing.assert_array_equal(d, [[0.5, 0.5], [tiny, tiny]])
    p = to_numpy(ctorch.poisson(ctorch.tensor([0.0, 1e-30, math.inf], dtype=ctorch.float64, device=device)))
    np.testing.assert_array_equal(p, [0.0, 0.0, math.inf])
    count = ctorch.tensor([5.0, 5.0, 5.0, 5.0, 0.0, -3.0, 5.0], device=device)
    prob = ctorch.tensor([1.5, 1.0, 0.0, -0.5, 0.3, 0.9, math.nan], device=device)
    b = to_numpy(ctorch.binomial(count, prob))
    np.testing.assert_array_equal(b[:6], [5.0, 5.0, 0.0, 0.0, 0.0, 0.0])
    assert math.isnan(b[6])
    # binomial broadcasts count against prob
    out = ctorch.binomial(ctorch.tensor([[5.0], [3.0]], device=device), ctorch.tensor([0.0, 1.0], device=device))
    np.testing.assert_array_equal(to_numpy(out), [[0.0, 5.0], [0.0, 3.0]])


def test_errors(device):
    f = ctorch.ones(3, device=device)
    with pytest.raises(RuntimeError, match="^invalid Poisson rate, expected rate to be non-negative$"):
        ctorch.poisson(ctorch.tensor([1.0, -1.0], device=device))
    with pytest.raises(RuntimeError, match="^invalid Poisson rate"):
        ctorch.poisson(ctorch.tensor([math.nan], device=device))
    with pytest.raises(NotImplementedError, match=f"\"poisson_{device}\" not implemented for 'Long'"):
        ctorch.poisson(ctorch.ones(3, dtype=ctorch.int64, device=device))
    with pytest.raises(NotImplementedError, match=f"\"gamma_{device}\" not implemented for 'Bool'"):
        ctorch._standard_gamma(ctorch.ones(3, dtype=ctorch.bool, device=device))
    with pytest.raises(NotImplementedError, match="\"dirichlet\" not implemented for 'Long'"):
        ctorch._sample_dirichlet(ctorch.ones(3, dtype=ctorch.int64, device=device))
    with pytest.raises(ValueError, match="^binomial only supports floating-point dtypes for count, got: Long$"):
        ctorch.binomial(ctorch.ones(3, dtype=ctorch.int64, device=device), f)
    with pytest.raises(ValueError, match="^binomial only supports floating-point dtypes for prob, got: Int$"):
        ctorch.binomial(f, ctorch.ones(3, dtype=ctorch.int32, device=device))
    with pytest.raises(RuntimeError, match="^Found dtype Double but expected Float$"):
        ctorch.binomial(f, f.double())
    with pytest.raises(RuntimeError, match="^Found dtype Double but expected Float$"):
        ctorch._standard_gamma_grad(f, f.double())
    with pytest.raises(RuntimeError, match="size of tensor a \\(3\\) must match the size of tensor b \\(2\\)"):
        ctorch.binomial(f, ctorch.ones(2, device=device))
    with pytest.raises(TypeError, match="^_standard_gamma\\(\\): argument 'input' \\(position 1\\) must be Tensor, not float$"):
        ctorch._standard_gamma(5.0)
    with pytest.raises(TypeError, match="^poisson\\(\\): argument 'generator' must be torch.Generator, not int$"):
        ctorch.poisson(f, generator=5)
    if device == "cpu":
        with pytest.raises(NotImplementedError, match="\"binomial_cpu\" not implemented for 'Half'"):
            ctorch.binomial(f.half(), f.half())
        with pytest.raises(NotImplementedError, match="\"_standard_gamma_grad_cpu\" not implemented for 'BFloat16'"):
            ctorch._standard_gamma_grad(f.bfloat16(), f.bfloat16())


# --- the reparameterisation gradient -------------------------------------------------------------
ALPHA = [0.3, 1.0, 2.5, 0.01, 40.0, 1e4, 0.5, 5.0, 9.0, 3.0, 1e7, 100.0]
X = [0.1, 0.5, 2.0, 1e-3, 50.0, 1e4, 3.0, 0.3, 12.0, 9.0, 1.0001e7, 80.0]
# torch._standard_gamma_grad's values (PyTorch's own approximation, good to about 1e-4)
TORCH_VALUES = [0.7894044031433252, 0.8069784920049818, 0.9534439667878193, 0.6354138007185822, 1.1203837836784634,
                1.0000166667708337, 2.913304453672477, 0.184266248578153, 1.1722428575769346, 1.7399373605805981,
                1.0000500150008518, 0.894058555437897]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standard_gamma_grad_values(device, dtype):
    dt = getattr(ctorch, dtype)
    a, x = ctorch.tensor(ALPHA, dtype=dt, device=device), ctorch.tensor(X, dtype=dt, device=device)
    got = ctorch._standard_gamma_grad(a, x)
    assert got.dtype == dt
    np.testing.assert_allclose(to_numpy(got), TORCH_VALUES, rtol=3e-4)
    edge = ctorch._standard_gamma_grad(ctorch.tensor([0.0, -1.0, math.nan, 1.0, 2.0], device=device),
                                       ctorch.tensor([1.0, 1.0, 1.0, 0.0, math.inf], device=device))
    np.testing.assert_array_equal(to_numpy(edge), [math.nan, math.nan, math.nan, 0.0, math.nan])


def test_standard_gamma_grad_is_the_implicit_derivative():
    """dx/da at fixed u = P(a, x): -(dP/da) / (dP/dx), dP/da by central differences of igamma"""
    a = np.array([0.2, 0.9, 1.7, 4.0, 25.0, 300.0])
    x = np.array([0.05, 2.2, 0.4, 6.5, 20.0, 330.0])
    h = 1e-5 * a
    up = to_numpy(ctorch.special.gammainc(ctorch.tensor(a + h), ctorch.tensor(x)))
    down = to_numpy(ctorch.special.gammainc(ctorch.tensor(a - h), ctorch.tensor(x)))
    density = np.exp((a - 1) * np.log(x) - x - np.array([math.lgamma(v) for v in a]))
    want = -(up - down) / (2 * h) / density
    np.testing.assert_allclose(to_numpy(ctorch._standard_gamma_grad(ctorch.tensor(a), ctorch.tensor(x))), want, rtol=1e-6)


def test_standard_gamma_backward(device):
    a = ctorch.tensor([0.4, 2.0, 7.5], dtype=ctorch.float64, device=device, requires_grad=True)
    s = ctorch._standard_gamma(a, generator=gen(device, 3))
    assert s.grad_fn.name() == "StandardGammaBackward0"
    w = ctorch.tensor([1.0, -2.0, 0.5], dtype=ctorch.float64, device=device)
    (s * w).sum().backward()
    np.testing.assert_allclose(to_numpy(a.grad), to_numpy(ctorch._standard_gamma_grad(a.detach(), s.detach()) * w),
                               rtol=1e-15)
    g, = ctorch.autograd.grad(ctorch._standard_gamma(a).sum(), a, create_graph=True)
    with pytest.raises(NotImplementedError, match="_standard_gamma_grad"):
        g.sum().backward()
    p = ctorch.poisson(ctorch.tensor([1.0, 4.0], device=device, requires_grad=True))
    assert p.grad_fn.name() == "PoissonBackward0"
    assert ctorch._sample_dirichlet(ctorch.ones(2, device=device, requires_grad=True)).grad_fn.name() == "torch::autograd::NotImplemented"
    c = ctorch.ones(2, device=device, requires_grad=True)
    assert ctorch.binomial(c, c.detach() / 2).grad_fn.name() == "torch::autograd::NotImplemented"
