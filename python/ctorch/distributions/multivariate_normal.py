"""torch.distributions.MultivariateNormal: N(loc, Sigma) given by the covariance, the precision
or the lower Cholesky factor scale_tril (Sigma = L L^T). Every computation runs on the factor L,
kept unbroadcast (``_unbroadcasted_scale_tril``); the other two are computed lazily from it."""
import math

import ctorch as torch

from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """Matrix-vector products with broadcast batch dims: (..., n, n) x (..., n) -> (..., n)."""
    return torch.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x = |L^-1 x|^2 for lower-triangular L (..., n, n) and x (..., n) whose batch
    dims L broadcasts to; the result has x's batch shape."""
    n = bx.size(-1)
    if bL.dim() == 2:  # one factor: every x is a column of one triangular solve
        cols = bx.reshape(-1, n).mT
        return torch.linalg.solve_triangular(bL, cols, upper=False).pow(2).sum(-2).reshape(bx.shape[:-1])
    shape = torch.broadcast_shapes(bL.shape[:-2], bx.shape[:-1])
    x = bx.expand(shape + (n,)).unsqueeze(-1)
    solved = torch.linalg.solve_triangular(bL.expand(shape + (n, n)), x, upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1, without inverting P: the reversed Cholesky factor of the
    reversed P is an upper-triangular U with P = U U^T, so P^-1 = U^-T U^-1 and L = U^-T."""
    Lf = torch.linalg.cholesky(torch.flip(P, (-2, -1)))
    L_inv = torch.transpose(torch.flip(Lf, (-2, -1)), -2, -1)
    eye = torch.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return torch.linalg.solve_triangular(L_inv, eye, upper=False)


class MultivariateNormal(Distribution):
    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        given = [(k, m) for k, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix)) if m is not None]
        name, matrix = given[0]
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = torch.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(MultivariateNormal, batch_shape,
                                  ("covariance_matrix", "scale_tril", "precision_matrix"), _instance,
                                  event_shape=self.event_shape + self.event_shape)
        new.loc = self.loc.expand(torch.Size(batch_shape) + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    def _full_matrix(self, m):
        return m.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._full_matrix(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return self._full_matrix(torch.matmul(L, L.mT))

    @lazy_property
    def precision_matrix(self):
        return self._full_matrix(torch.cholesky_inverse(self._unbroadcasted_scale_tril))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
