"""torch.distributions.GeneralizedPareto: survival function (1 + c z)^(-1/c) of z = (x - loc) / scale
(exp(-z) at concentration c = 0), on [loc, loc - scale / c] for c < 0 and [loc, inf) otherwise.
Exponential (loc = 0, c = 0), Pareto (c > 0, loc = scale / c) and Uniform (c = -1) are special
cases. Each formula takes its c = 0 limit where c is zero to isclose's tolerance (the other
branch sees c = 1 there, so neither produces NaN); rsample is icdf of a uniform draw."""
import math

import ctorch as torch

from . import constraints
from .distribution import Distribution
from .utils import _broadcast_params

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        (self.loc, self.scale, self.concentration), batch_shape = _broadcast_params(loc, scale, concentration)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, ("loc", "scale", "concentration"), _instance)

    def _zero_and_safe_concentration(self):
        c = self.concentration
        is_zero = torch.isclose(c, torch.zeros_like(c))
        return is_zero, torch.where(is_zero, torch.ones_like(c), c)

    def rsample(self, sample_shape=torch.Size()):
        u = torch.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        is_zero, c = self._zero_and_safe_concentration()
        power = 1 / c + torch.ones_like(z)  # 1/c + 1; the c = -1 case (Uniform) has no z term
        nonzero = torch.where(power == 0, power, power * torch.log1p(c * z))
        return -self.scale.log() - torch.where(is_zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        is_zero, c = self._zero_and_safe_concentration()
        return torch.where(is_zero, -z, -torch.log1p(c * z) / c)

    def log_cdf(self, value):
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        is_zero, c = self._zero_and_safe_concentration()
        log_survival = torch.log1p(-value)
        nonzero = self.loc + self.scale / c * torch.expm1(-c * log_survival)
        return torch.where(is_zero, self.loc - self.scale * log_survival, nonzero)

    @property
    def mean(self):
        c = self.concentration
        finite = c < 1
        mean = self.loc + self.scale / (1 - torch.where(finite, c, 0.5))
        return torch.where(finite, mean, math.nan)

    @property
    def variance(self):
        c = self.concentration
        finite = c < 0.5
        c = torch.where(finite, c, 0.25)
        return torch.where(finite, self.scale.pow(2) / ((1 - c).pow(2) * (1 - 2 * c)), math.nan)

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return torch.broadcast_to(self.scale.log() + self.concentration + 1, self._batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        c = self.concentration
        upper = torch.where(c < 0, self.loc - self.scale / c, math.inf)
        return constraints.interval(self.loc, upper)
