"""torch.distributions.HalfCauchy: |x| for x ~ Cauchy(0, scale)."""
import math

import ctorch as torch

from .cauchy import Cauchy
from .transformed_distribution import _FoldedAtZero

__all__ = ["HalfCauchy"]


class HalfCauchy(_FoldedAtZero):
    _base = Cauchy

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance

    def _log_prob_value(self, value):
        return torch.as_tensor(value, dtype=self.base_dist.scale.dtype, device=self.base_dist.scale.device)
