"""torch.distributions.VonMises: the circular normal, density exp(kappa cos(x - loc)) / (2 pi I0(kappa))
on [-pi, pi); sampled by Best and Fisher's rejection method (in double)."""
import math

import ctorch as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_i0(x):
    return torch.log(torch.special.i0e(x)) + x


def _rejection_sample(loc, concentration, proposal_r, x):
    done = torch.zeros(x.shape, dtype=torch.bool, device=loc.device)
    while not bool(done.all()):
        u1, u2, u3 = torch.rand((3,) + x.shape, dtype=loc.dtype, device=loc.device).unbind()
        z = torch.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        accept = accept & ~done
        if bool(accept.any()):
            x = torch.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, torch.Size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, batch_shape, ("loc", "concentration"), _instance)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * torch.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_i0(self.concentration)

    @lazy_property
    def _loc(self):
        return self.loc.to(torch.double)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(torch.double)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho**2) / (2 * rho)
        return torch.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)  # the Taylor form for tiny kappa

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            x = torch.empty(shape, dtype=self._loc.dtype, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r, x).to(self.loc.dtype)

    @lazy_property
    def variance(self):
        """The circular variance 1 - I1(kappa) / I0(kappa)."""
        k = self.concentration
        return 1 - torch.special.i1e(k) / torch.special.i0e(k)

    @property
    def mean(self):
        """The circular mean (and the mode)."""
        return self.loc

    mode = mean
