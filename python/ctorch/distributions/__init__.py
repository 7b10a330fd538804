"""torch.distributions for ctorch: probability distributions written in Python over ctorch ops,
as PyTorch writes them. Draws come from ctorch's generators (normal_, rand, exponential_,
bernoulli, multinomial), so torch.manual_seed makes them reproducible; rsample is differentiable
in the parameters (reparameterisation; Gamma / Beta / Dirichlet through the implicit gradients of
ctorch._standard_gamma_grad and ctorch._dirichlet_grad)."""
from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403
from . import transforms
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = [
    "Bernoulli", "Categorical", "Distribution", "Exponential", "ExponentialFamily", "Independent",
    "Laplace", "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Uniform", "constraints", "kl_divergence", "register_kl",
    "Beta", "Binomial", "Chi2", "Dirichlet", "Gamma", "Geometric", "Multinomial", "NegativeBinomial", "Poisson",
    "Cauchy", "FisherSnedecor", "Gumbel", "HalfCauchy", "HalfNormal", "InverseGamma", "Kumaraswamy", "LogNormal",
    "LogisticNormal", "Pareto", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT",
    "TransformedDistribution", "Weibull", "biject_to", "transform_to",
    "ContinuousBernoulli", "LowRankMultivariateNormal", "MixtureSameFamily", "VonMises",
    "LKJCholesky", "Wishart", "GeneralizedPareto",
] + transforms.__all__
