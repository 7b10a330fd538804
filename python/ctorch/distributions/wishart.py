"""torch.distributions.Wishart: the law of X = sum_k L z_k z_k^T L^T over df Gaussian draws, on
positive-definite p x p matrices, given by the scale's covariance, precision or lower Cholesky
factor L (kept unbroadcast, as MultivariateNormal keeps it). rsample is Bartlett's decomposition:
X = (L A)(L A)^T with A lower triangular, A_ii = sqrt(Chi2(df - i)) (differentiable in df through
Chi2's rsample) and N(0, 1) below the diagonal."""
import math
import warnings

import ctorch as torch

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import _Number, _finfo, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma: sum_{i<p} digamma(x - i/2) (the derivative of mvlgamma)."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = torch.arange(p, dtype=x.dtype, device=x.device).div(2)
    return torch.digamma(x.unsqueeze(-1) - halves).sum(-1)


class Wishart(ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [(name, m) for name, m in (("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix), ("scale_tril", scale_tril))
                 if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, _Number):
            batch_shape = torch.Size(param.shape[:-2])
            self.df = torch.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = torch.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for "
                          "ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        to_scale_tril = {"scale_tril": lambda m: m, "covariance_matrix": torch.linalg.cholesky,
                         "precision_matrix": _precision_to_scale_tril}[name]
        self._unbroadcasted_scale_tril = to_scale_tril(param)
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape):
        """Chi2(df - i) for the i-th diagonal entry of Bartlett's factor."""
        L = self._unbroadcasted_scale_tril
        i = torch.arange(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return Chi2(self.df.unsqueeze(-1) - i.expand(batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = torch.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        eye = torch.eye(self._event_shape[-1], device=L.device, dtype=L.dtype)
        return torch.cholesky_solve(eye, L).expand(self._batch_shape + self._event_shape)

    def _df_matrix(self, df):
        return df.view(self._batch_shape + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self._event_shape[-1] - 1
        factor = torch.where(factor > 0, factor, math.nan)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape):
        p = self._event_shape[-1]
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=_finfo(self.df.dtype)[0])
        rows, cols = torch.tril_indices(p, p, offset=-1)
        below = torch.zeros(diag.shape + (p,), dtype=diag.dtype, device=diag.device)
        below[..., rows, cols] = torch.randn(torch.Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,),
                                             dtype=diag.dtype, device=diag.device)
        chol = self._unbroadcasted_scale_tril @ (below + torch.diag_embed(diag))
        return chol @ chol.mT

    def _singular(self, sample):
        """Per sample (all batch dims reduced): is any matrix of it not positive definite."""
        singular = ~self.support.check(sample)
        if self._batch_shape:
            singular = singular.amax(self._batch_dims)
        return singular

    def rsample(self, sample_shape=torch.Size(), max_try_correction=None):
        """Bartlett samples; a sample with a singular matrix (likely for df < p) is redrawn up
        to ``max_try_correction`` (10) times and may stay singular (log_prob -inf)."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = torch.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                redrawn = self._bartlett_sampling(torch.Size((int(singular.sum()),)))
                sample[singular] = redrawn
                singular[singular.clone()] = self._singular(redrawn)
                if not bool(singular.any()):
                    break
        return sample

    def _log_det_scale_half(self):
        """p log(2) / 2 + log det(L)."""
        L = self._unbroadcasted_scale_tril
        return self._event_shape[-1] * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        trace = torch.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * self._log_det_scale_half() - torch.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * torch.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * self._log_det_scale_half() + torch.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        half_df = y + (p + 1) / 2
        return half_df * (-torch.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p) + torch.mvlgamma(half_df, p=p)
