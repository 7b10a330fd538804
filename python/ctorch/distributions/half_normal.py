"""torch.distributions.HalfNormal: |x| for x ~ Normal(0, scale)."""
import math

from .normal import Normal
from .transformed_distribution import _FoldedAtZero

__all__ = ["HalfNormal"]


class HalfNormal(_FoldedAtZero):
    _base = Normal

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
