"""ctorch.nn.utils.parametrizations: orthogonal, weight_norm and spectral_norm as parametrizations
(nn.utils.parametrize), as torch.nn.utils.parametrizations. Modules composing tensor ops; the state
dict keys are PyTorch's (parametrizations.weight.original0/original1 for weight_norm, .original plus
the buffers _u/_v for spectral_norm, .original plus base for orthogonal).

ctorch has no complex dtypes, so the unitary case does not arise."""
from enum import Enum, auto

from ... import _C, contiguous_format, linalg
from ...autograd.grad_mode import no_grad
from ..functional import normalize
from ..modules.module import Module
from . import parametrize
from .spectral_norm import _check_power_iterations, _default_dim, _weight_to_matrix
from .weight_norm import _norm_except_dim, _weight_norm

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

def _is_orthogonal(q):
    """q's columns orthonormal up to 10 n eps of its dtype."""
    n, k = q.size(-2), q.size(-1)
    identity = _C.eye(k, dtype=q.dtype, device=q.device)
    eps = 10.0 * n * _C.finfo(q.dtype).eps
    return _C.allclose(q.mT @ q, identity, atol=eps)


def _make_orthogonal(a):
    """The Q factor of a tall matrix (or batch) a = QR with R's diagonal made non-negative."""
    q, r = linalg.qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """X -> an orthogonal matrix: exp or the Cayley transform of the skew-symmetric part built from
    X's lower triangle, or the product of the Householder reflectors stored below X's diagonal;
    times the buffer `base` under the dynamic trivialization."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.size(-2), x.size(-1)
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            x = x.tril()
            if n != k:
                x = _C.cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)], dim=-1)
            a = x - x.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                q = _C.matrix_exp(a)
            else:
                identity = _C.eye(n, dtype=a.dtype, device=a.device)
                q = linalg.solve(_C.add(identity, a, alpha=-0.5), _C.add(identity, a, alpha=0.5))
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = linalg.householder_product(a, tau)
            # the diagonal's signs (+-1 after right_inverse) choose each column's sign
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            q = self.base @ q
        if transposed:
            q = q.mT
        return q

    def right_inverse(self, q):
        with no_grad():
            if q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {q.shape}.")
            q_init = q
            n, k = q.size(-2), q.size(-1)
            if n < k:
                q = q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                              "or the Cayley parametrizations when use_trivialization=False.")
                # householder: the reflectors of q's QR, R's diagonal signs (+-1, flipped where a
                # reflector is the identity, tau == 0) on the diagonal
                a, tau = _C.geqrf(q)
                diagonal = a.diagonal(dim1=-2, dim2=-1)
                diagonal.sign_()
                diagonal[tau == 0.0] *= -1
                return a.mT if q_init.size(-2) < q_init.size(-1) else a
            # dynamic trivialization: base holds the orthogonal matrix and the original the point
            # whose image is the identity (-Id for exp/Cayley of zero, and for the reflectors)
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:
                completion = _C.randn(*(tuple(q.shape[:-2]) + (n, n - k)), dtype=q.dtype, device=q.device)
                q = _make_orthogonal(_C.cat([q, completion], dim=-1))
            self.base = q
            neg_identity = _C.zeros_like(q_init)
            neg_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_identity


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Makes module.<name> (a matrix or batch of matrices) orthogonal: orthonormal columns when it is
    tall, orthonormal rows when wide. orthogonal_map: "matrix_exp" (the default for square
    matrices), "cayley" or "householder" (the default otherwise). The initial value is the tensor
    itself if orthogonal, else its QR's Q factor. Returns module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    """(g, v) -> g * v / ||v||, the norm over every dim but dim (the whole tensor for None)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Makes module.<name> = g * v / ||v|| with g = parametrizations.<name>.original0 (the
    magnitude) and v = original1 (the direction); dim=None normalizes the whole tensor. A state
    dict of the old nn.utils.weight_norm (<name>_g, <name>_v) loads into it. Returns module."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    """W -> W / sigma(W), sigma estimated by power iteration from the buffers _u and _v, which
    advance n_power_iterations steps at each read in training mode (15 steps at registration). A
    1-d W is just normalized."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] "
                             f"but got {dim})")
        _check_power_iterations(n_power_iterations)
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        return _weight_to_matrix(weight, self.dim)

    def _power_method(self, weight_mat, n_power_iterations):
        # in place on the buffers, so every holder of them (a DataParallel replica in PyTorch) sees
        # the update
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = normalize(_C.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                self._v = normalize(_C.mv(weight_mat.mT, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone(memory_format=contiguous_format)
        v = self._v.clone(memory_format=contiguous_format)
        sigma = _C.vdot(u, _C.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Makes module.<name> = W / sigma(W), W = parametrizations.<name>.original; dim (the output dim)
    defaults to 0, 1 for ConvTranspose. Returns module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_dim(module)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
