"""torch.distributions: mean/variance/stddev/mode/entropy/log_prob/cdf/icdf of each family over parameter grids
with boundary values (support edges, 0, huge/tiny scales), float32 and float64, and validate_args errors.

    /work/torchref/venv/bin/python scripts/fwdfuzz/f_dist.py [Normal ...]
"""
import itertools
import sys
from core import *  # noqa

only = set(sys.argv[1:])
BIG, TINY = 1e30, 1e-30
# name: (params {name: grid}, values grid for log_prob/cdf)
REAL = [-3.0, -1.0, 0.0, 0.5, 2.0, 1e10, -1e10, float("inf"), -float("inf"), float("nan")]
POS = [0.0, 1e-30, 0.5, 1.0, 3.0, 1e10, float("inf"), -1.0]
UNIT = [0.0, 1e-12, 0.3, 0.5, 1.0 - 1e-7, 1.0, -0.1, 1.1]
COUNT = [0.0, 1.0, 2.0, 5.0, 10.0, -1.0, 1.5, 1e6]
SPECS = {
    "Normal": ({"loc": [0.0, -2.0, 1e10], "scale": [1.0, 1e-30, 1e30, 0.3]}, REAL),
    "Laplace": ({"loc": [0.0, 1e10], "scale": [1.0, 1e-30, 1e30]}, REAL),
    "Cauchy": ({"loc": [0.0, -5.0], "scale": [1.0, 1e-30, 1e30]}, REAL),
    "Gumbel": ({"loc": [0.0, 3.0], "scale": [1.0, 1e-10, 1e10]}, REAL),
    "StudentT": ({"df": [1.0, 0.5, 2.0, 3.0, 1e10, 1e-3], "loc": [0.0, 1.0], "scale": [1.0, 1e-10]}, REAL),
    "Uniform": ({"low": [0.0, -1e10], "high": [1.0, 1e-30, 1e10]}, REAL + [1.0, 1e-30]),
    "Exponential": ({"rate": [1.0, 1e-30, 1e30, 0.5]}, POS),
    "Gamma": ({"concentration": [0.5, 1.0, 3.0, 1e-3, 1e5], "rate": [1.0, 1e-10, 1e10]}, POS),
    "Chi2": ({"df": [0.5, 1.0, 2.0, 3.0, 1e5]}, POS),
    "InverseGamma": ({"concentration": [0.5, 1.0, 2.5, 3.0], "rate": [1.0, 1e-10, 1e10]}, POS),
    "Beta": ({"concentration1": [0.5, 1.0, 2.0, 1e-3, 1e4], "concentration0": [0.5, 1.0, 3.0, 1e4]}, UNIT),
    "Kumaraswamy": ({"concentration1": [0.5, 1.0, 2.0], "concentration0": [0.5, 1.0, 3.0]}, UNIT),
    "HalfNormal": ({"scale": [1.0, 1e-30, 1e30]}, POS),
    "HalfCauchy": ({"scale": [1.0, 1e-30, 1e30]}, POS),
    "LogNormal": ({"loc": [0.0, 5.0, -5.0], "scale": [1.0, 1e-10, 10.0]}, POS),
    "Pareto": ({"scale": [1.0, 0.5, 1e-10], "alpha": [0.5, 1.0, 2.0, 3.0, 1e5]}, POS + [2.0]),
    "Weibull": ({"scale": [1.0, 1e-10, 1e10], "concentration": [0.5, 1.0, 3.0]}, POS),
    "FisherSnedecor": ({"df1": [1.0, 3.0, 1e5], "df2": [1.0, 2.0, 3.0, 4.0, 5.0, 1e5]}, POS),
    "VonMises": ({"loc": [0.0, 3.0, -3.0], "concentration": [1e-8, 0.5, 1.0, 10.0, 100.0, 1e4]}, [-3.14159, -1.0, 0.0, 1.0, 3.14159, 10.0]),
    "ContinuousBernoulli": ({"probs": [0.5, 0.3, 0.499, 0.501, 0.999, 1e-6, 0.0, 1.0]}, UNIT),
    "Bernoulli": ({"probs": [0.0, 0.3, 1.0, 0.5]}, [0.0, 1.0, 0.5, 2.0, -1.0]),
    "Bernoulli_logits": ({"logits": [0.0, -50.0, 50.0, float("inf"), -float("inf")]}, [0.0, 1.0]),
    "Geometric": ({"probs": [0.3, 1.0, 1e-6, 0.9999]}, COUNT),
    "Geometric_logits": ({"logits": [0.0, -30.0, 30.0]}, COUNT),
    "Poisson": ({"rate": [0.0, 1.0, 1e-10, 100.0, 1e6]}, COUNT),
    "Binomial": ({"total_count": [0.0, 1.0, 10.0], "probs": [0.0, 0.3, 1.0]}, COUNT),
    "Binomial_logits": ({"total_count": [1.0, 10.0], "logits": [0.0, -50.0, 50.0]}, COUNT),
    "NegativeBinomial": ({"total_count": [1.0, 0.5, 10.0], "probs": [0.0, 0.3, 0.99]}, COUNT),
    "NegativeBinomial_logits": ({"total_count": [1.0, 10.0], "logits": [0.0, -50.0, 50.0]}, COUNT),
    "RelaxedBernoulli": ({"temperature": [0.5, 1.0, 10.0], "probs": [0.3, 1e-6]}, UNIT),
}


def build(L, name, p, d, validate):
    D = L.distributions
    cls = name.split("_")[0]
    kw = {k: L.tensor(v, dtype=dt(L, d)) for k, v in p.items()}
    if cls == "RelaxedBernoulli":
        return D.RelaxedBernoulli(kw.pop("temperature"), validate_args=validate, **kw)
    return getattr(D, cls)(validate_args=validate, **kw)


PROPS = ["mean", "variance", "stddev", "mode"]
for name, (grid, vals) in SPECS.items():
    if only and name not in only:
        continue
    keys = list(grid)
    for combo in itertools.product(*[grid[k] for k in keys]):
        p = dict(zip(keys, combo))
        for d in ["float32", "float64"]:
            tm = dict(tolmul=50 if d == "float32" else 1e3, ftol=1e-4)
            tag = f"{d} {p}"
            check(f"{name} init", tag, lambda L: build(L, name, p, d, None).batch_shape)
            for prop in PROPS:
                check(f"{name} {prop}", tag, lambda L: getattr(build(L, name, p, d, False), prop), ctx=tm)
            check(f"{name} entropy", tag, lambda L: build(L, name, p, d, False).entropy(), ctx=tm)
            v = lambda L: L.tensor(vals, dtype=dt(L, d))  # noqa
            check(f"{name} log_prob", tag, lambda L: build(L, name, p, d, False).log_prob(v(L)), ctx=tm)
            check(f"{name} log_prob validate", tag, lambda L: build(L, name, p, d, True).log_prob(v(L)))
            check(f"{name} cdf", tag, lambda L: build(L, name, p, d, False).cdf(v(L)), ctx=tm)
            q = lambda L: L.tensor([0.0, 1e-10, 0.1, 0.5, 0.9, 1.0 - 1e-7, 1.0], dtype=dt(L, d))  # noqa
            check(f"{name} icdf", tag, lambda L: build(L, name, p, d, False).icdf(q(L)), ctx=tm)
            check(f"{name} icdf bad", tag, lambda L: build(L, name, p, d, True).icdf(L.tensor([1.5, -0.5], dtype=dt(L, d))))
            check(f"{name} support", tag, lambda L: build(L, name, p, d, False).support.check(v(L)))
            check(f"{name} shapes", tag, lambda L: (lambda D: (D.batch_shape, D.event_shape, D.sample().shape, D.sample((2, 3)).shape, D.rsample().shape if D.has_rsample else None, D.sample().dtype))(build(L, name, p, d, False)))
            check(f"{name} expand", tag, lambda L: (lambda D: (D.batch_shape, D.mean))(build(L, name, p, d, False).expand((3,))), ctx=tm)
            check(f"{name} lp bcast", tag, lambda L: build(L, name, p, d, False).log_prob(L.tensor(vals[:3], dtype=dt(L, d)).reshape(3, 1)), ctx=tm)
            check(f"{name} lp int val", tag, lambda L: build(L, name, p, d, False).log_prob(L.tensor([1, 0, 2])), ctx=tm)

# vector families
for d in ["float32", "float64"]:
    tm = dict(tolmul=50 if d == "float32" else 1e3, ftol=1e-4)
    T = lambda L, v: L.tensor(v, dtype=dt(L, d))  # noqa
    for probs in [[0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [[0.1, 0.9], [0.5, 0.5]], [3.0, 1.0, 0.0]]:
        for cls in ["Categorical", "OneHotCategorical"]:
            check(f"{cls} props", f"{d} {probs}", lambda L: (lambda D: (D.mean if cls != "Categorical" else None, D.variance if cls != "Categorical" else None, D.mode, D.entropy(), D.probs, D.logits, D.param_shape, D.enumerate_support()))(getattr(L.distributions, cls)(probs=T(L, probs))), ctx=tm)
            check(f"{cls} logits", f"{d} {probs}", lambda L: (lambda D: (D.entropy(), D.probs, D.mode))(getattr(L.distributions, cls)(logits=T(L, probs))), ctx=tm)
        n = len(probs[-1]) if isinstance(probs[0], list) else len(probs)
        check("Categorical log_prob", f"{d} {probs}", lambda L: L.distributions.Categorical(probs=T(L, probs), validate_args=False).log_prob(L.tensor([0, 1, n - 1])[:, None] if isinstance(probs[0], list) else L.tensor([0, 1, n - 1])), ctx=tm)
        check("Categorical log_prob bad", f"{d} {probs}", lambda L: L.distributions.Categorical(probs=T(L, probs)).log_prob(L.tensor([n])))
        check("Categorical log_prob float", f"{d} {probs}", lambda L: L.distributions.Categorical(probs=T(L, probs)).log_prob(L.tensor([0.5])))
        for tc in [1, 3, 0]:
            check("Multinomial", f"{d} {probs} {tc}", lambda L: (lambda D: (D.mean, D.variance, D.log_prob(L.tensor([tc, 0, 0] if n == 3 else [tc, 0], dtype=dt(L, d))), D.entropy() if tc <= 3 else None))(L.distributions.Multinomial(tc, probs=T(L, probs), validate_args=False)), ctx=tm)
        check("Multinomial bad", f"{d} {probs}", lambda L: L.distributions.Multinomial(2, probs=T(L, probs)).log_prob(T(L, [1.0] * n)))
    for conc in [[1.0, 1.0, 1.0], [0.5, 2.0, 3.0], [1e-3, 1e-3, 1e-3], [1e4, 1.0, 1.0], [[1.0, 2.0], [0.1, 0.1]]]:
        m = len(conc[-1]) if isinstance(conc[0], list) else len(conc)
        x = [1.0 / m] * m
        check("Dirichlet", f"{d} {conc}", lambda L: (lambda D: (D.mean, D.variance, D.mode, D.entropy(), D.log_prob(T(L, x))))(L.distributions.Dirichlet(T(L, conc))), ctx=tm)
        check("Dirichlet edge", f"{d} {conc}", lambda L: L.distributions.Dirichlet(T(L, conc), validate_args=False).log_prob(T(L, [1.0] + [0.0] * (m - 1))), ctx=tm)
        check("Dirichlet bad", f"{d} {conc}", lambda L: L.distributions.Dirichlet(T(L, conc)).log_prob(T(L, [0.5] * m)))
    for cov in [[[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.5], [0.5, 1.0]], [[1.0, 0.999], [0.999, 1.0]], [[1e-8, 0.0], [0.0, 1e8]]]:
        for kw in ["covariance_matrix", "precision_matrix", "scale_tril"]:
            def f(L, cov=cov, kw=kw):
                c = T(L, cov)
                if kw == "scale_tril":
                    c = L.linalg.cholesky(c)
                D = L.distributions.MultivariateNormal(T(L, [0.5, -1.0]), **{kw: c})
                return (D.mean, D.variance, D.mode, D.entropy(), D.log_prob(T(L, [[0.0, 0.0], [1.0, -2.0]])), D.covariance_matrix, D.scale_tril, D.precision_matrix)
            check("MVN", f"{d} {cov} {kw}", f, ctx=dict(tolmul=1e4 if d == "float32" else 1e4, ftol=1e-3))
        check("MVN not pd", d, lambda L: L.distributions.MultivariateNormal(T(L, [0.0, 0.0]), covariance_matrix=T(L, [[1.0, 2.0], [2.0, 1.0]])))
        check("MVN bcast", d, lambda L: (lambda D: (D.batch_shape, D.log_prob(T(L, [0.0, 0.0]))))(L.distributions.MultivariateNormal(L.zeros(3, 2, dtype=dt(L, d)), scale_tril=T(L, cov).sqrt())), ctx=tm)
    for cf, cd in [([[1.0], [0.5]], [1.0, 2.0]), ([[0.0], [0.0]], [1e-8, 1.0]), ([[1.0, 2.0], [3.0, 4.0]], [0.1, 0.1])]:
        check("LowRankMVN", f"{d} {cf} {cd}", lambda L: (lambda D: (D.mean, D.variance, D.entropy(), D.log_prob(T(L, [[0.0, 0.0], [1.0, -2.0]])), D.covariance_matrix, D.precision_matrix, D.scale_tril))(L.distributions.LowRankMultivariateNormal(T(L, [0.5, -1.0]), T(L, cf), T(L, cd))), ctx=dict(tolmul=1e4, ftol=1e-3))
    check("Independent", d, lambda L: (lambda D: (D.batch_shape, D.event_shape, D.log_prob(L.zeros(3, 2, dtype=dt(L, d))), D.entropy(), D.mean))(L.distributions.Independent(L.distributions.Normal(L.zeros(3, 2, dtype=dt(L, d)), 1.0), 1)), ctx=tm)
    check("Mixture", d, lambda L: (lambda D: (D.mean, D.variance, D.log_prob(T(L, [0.0, 1.0, -3.0])), D.cdf(T(L, [0.0, 1.0, -3.0]))))(L.distributions.MixtureSameFamily(L.distributions.Categorical(T(L, [0.3, 0.7])), L.distributions.Normal(T(L, [0.0, 2.0]), T(L, [1.0, 0.5])))), ctx=tm)
    check("LogisticNormal", d, lambda L: (lambda D: (D.log_prob(T(L, [0.2, 0.3, 0.5])), D.batch_shape, D.event_shape))(L.distributions.LogisticNormal(T(L, [0.0, 1.0]), T(L, [1.0, 0.5]))), ctx=tm)
    check("RelaxedOneHot", d, lambda L: (lambda D: (D.log_prob(T(L, [0.2, 0.3, 0.5])), D.batch_shape))(L.distributions.RelaxedOneHotCategorical(T(L, 0.5), probs=T(L, [0.2, 0.3, 0.5]))), ctx=tm)

# validate_args errors on parameters
BAD = {"Normal": dict(loc=0.0, scale=-1.0), "Normal_nan": dict(loc=float("nan"), scale=1.0), "Gamma": dict(concentration=0.0, rate=1.0),
       "Beta": dict(concentration1=-1.0, concentration0=1.0), "Uniform": dict(low=1.0, high=1.0), "Exponential": dict(rate=0.0),
       "Bernoulli": dict(probs=1.5), "Geometric": dict(probs=0.0), "Poisson": dict(rate=-1.0), "Binomial": dict(total_count=-1.0, probs=0.5),
       "StudentT": dict(df=0.0), "Pareto": dict(scale=0.0, alpha=1.0), "VonMises": dict(loc=0.0, concentration=-1.0),
       "Weibull": dict(scale=1.0, concentration=0.0), "LogNormal": dict(loc=0.0, scale=0.0), "Laplace": dict(loc=float("inf"), scale=1.0),
       "Chi2": dict(df=-1.0), "HalfNormal": dict(scale=-1.0), "Kumaraswamy": dict(concentration1=0.0, concentration0=1.0),
       "ContinuousBernoulli": dict(probs=1.1), "NegativeBinomial": dict(total_count=-1.0, probs=0.5), "Cauchy": dict(loc=0.0, scale=0.0)}
for name, kw in BAD.items():
    cls = name.split("_")[0]
    check("validate init", name, lambda L: getattr(L.distributions, cls)(**{k: L.tensor(v) for k, v in kw.items()}, validate_args=True).batch_shape)
    check("validate init float", name, lambda L: getattr(L.distributions, cls)(**kw, validate_args=True).batch_shape)
    check("validate init msg", name, lambda L: str(getattr(L.distributions, cls)(**{k: L.tensor(v) for k, v in kw.items()}, validate_args=True)))

report(maxper=int(os.environ.get("MAXPER", 3)))
