"""torch.distributions.Geometric: the number of failures before the first success of
Bernoulli(probs) trials, P(k) = (1 - p)^k p."""
import ctorch as torch
from ctorch.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .distribution import Distribution
from .utils import _Number, _finfo, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        param = self.probs if probs is not None else self.logits
        batch_shape = torch.Size() if isinstance(param, _Number) else param.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            if not bool((value > 0).all()):  # the zero probability is not in the support
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} to be positive but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Geometric, batch_shape, ("probs", "logits"), _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return torch.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = _finfo(self.probs.dtype)[1]
        with torch.no_grad():
            u = torch.rand(shape, dtype=self.probs.dtype, device=self.probs.device).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
