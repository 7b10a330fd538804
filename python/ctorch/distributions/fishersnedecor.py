"""torch.distributions.FisherSnedecor: (X1 / df1) / (X2 / df2) for X1, X2 chi-squared."""
import math

import ctorch as torch

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _broadcast_params, _finfo

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        (self.df1, self.df2), batch_shape = _broadcast_params(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(FisherSnedecor, batch_shape, ("df1", "df2"), _instance)
        new._gamma1 = self._gamma1.expand(torch.Size(batch_shape))
        new._gamma2 = self._gamma2.expand(torch.Size(batch_shape))
        return new

    @property
    def mean(self):
        df2 = self.df2.clone()
        df2[df2 <= 2] = math.nan
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        mode[self.df1 <= 2] = math.nan
        return mode

    @property
    def variance(self):
        df2 = self.df2.clone()
        df2[df2 <= 4] = math.nan
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=torch.Size(())):
        shape = self._extended_shape(sample_shape)
        tiny = _finfo(self.df1.dtype)[1]
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * torch.log(value)
        t3 = (ct1 + ct2) * torch.log1p(ct3 * value)
        return t1 + t2 - t3
