"""torch.distributions.LKJCholesky: the LKJ distribution over Cholesky factors L of D x D
correlation matrices, density of M = L L^T proportional to det(M)^(eta - 1) (eta the
concentration). Sampling is the onion method of Lewandowski, Kurowicka and Joe (2009): row i is
sqrt(y_i) times a uniform direction in its first i coordinates, y_i ~ Beta(i/2, eta + (D-2-i)/2)
(one batched Beta draw), and the diagonal takes the rest of the unit length."""
import math

import ctorch as torch

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import _finfo, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        c = self.concentration
        # row i >= 1: Beta(i/2, eta + (D-1-i)/2); row 0 draws a dummy like row 1's (its direction
        # is empty). PyTorch's sampler uses i - 1/2 for the first parameter, which breaks the
        # symmetry of the law under permuting the variables (for eta = 1 and D = 3 its Var M_31
        # is 0.30, not the 1/4 of uniform correlation matrices); this draws the law log_prob gives.
        offset = torch.arange(dim - 1, dtype=c.dtype, device=c.device)
        offset = 0.5 * torch.cat([offset.new_zeros((1,)), offset])
        marginal = c + 0.5 * (dim - 2)
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - offset)
        super().__init__(c.size(), torch.Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = torch.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=torch.Size()):
        with torch.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            normal = torch.randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
            direction = normal / normal.norm(dim=-1, keepdim=True)
            direction[..., 0, :] = 0.0  # row 0 has no off-diagonal entries (0 / 0 above)
            w = y.sqrt() * direction
            diag = (1 - w.pow(2).sum(-1)).clamp(min=_finfo(w.dtype)[1]).sqrt()
            return w + torch.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # log L_ii for i >= 1 weighted by 2 (eta - 1) + D - i - 1
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = torch.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        # the normaliser: (D-1)/2 log(pi) + mvlgamma(alpha - 1/2, D-1) - (D-1) lgamma(alpha)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        log_norm = 0.5 * dm1 * math.log(math.pi) + torch.mvlgamma(alpha - 0.5, dm1) - torch.lgamma(alpha) * dm1
        return unnormalized - log_norm
