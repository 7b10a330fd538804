"""torch.distributions.Gamma: density rate^c x^(c-1) e^(-rate x) / Gamma(c) on x >= 0; rsample is
differentiable in both parameters (_standard_gamma's implicit reparameterisation gradient)."""
import ctorch as torch

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _broadcast_params, _finfo

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        (self.concentration, self.rate), batch_shape = _broadcast_params(concentration, rate)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        value = torch._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=_finfo(value.dtype)[1])  # no zeros (log_prob stays finite)
        return value

    def log_prob(self, value):
        value = torch.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration, self.rate) + torch.xlogy(self.concentration - 1, value)
                - self.rate * value - torch.lgamma(self.concentration))

    def entropy(self):
        c = self.concentration
        return c - torch.log(self.rate) + torch.lgamma(c) + (1.0 - c) * torch.digamma(c)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return torch.lgamma(x + 1) + (x + 1) * torch.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return torch.special.gammainc(self.concentration, self.rate * value)
