"""torch.distributions for ctorch: probability distributions written in Python over ctorch ops,
as PyTorch writes them. Draws come from ctorch's generators (normal_, rand, exponential_,
bernoulli, multinomial), so torch.manual_seed makes them reproducible; rsample is differentiable
in the parameters (reparameterisation). Gamma, Beta, Dirichlet, Poisson and Binomial are not here
yet (they need the gamma / poisson / binomial samplers)."""
from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Categorical", "Distribution", "Exponential", "ExponentialFamily", "Independent",
    "Laplace", "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Uniform", "constraints", "kl_divergence", "register_kl",
]
