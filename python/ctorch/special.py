"""ctorch.special: torch.special's names. Most are other names of ctorch functions; those without a
torch.<name> (entr, xlog1py, ndtr, the Bessel functions, ...) are ctorch._C.special_<name>."""
from ._forward import c_function as _alias

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
           "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]


digamma = _alias("digamma", "digamma", "(input, *, out=None) -> Tensor")
psi = _alias("psi", "digamma", "(input, *, out=None) -> Tensor")
entr = _alias("entr", "special_entr", "(input, *, out=None) -> Tensor: -x ln x")
erf = _alias("erf", "erf", "(input, *, out=None) -> Tensor")
erfc = _alias("erfc", "erfc", "(input, *, out=None) -> Tensor")
erfinv = _alias("erfinv", "erfinv", "(input, *, out=None) -> Tensor")
exp2 = _alias("exp2", "exp2", "(input, *, out=None) -> Tensor")
expit = _alias("expit", "sigmoid", "(input, *, out=None) -> Tensor")
expm1 = _alias("expm1", "expm1", "(input, *, out=None) -> Tensor")
gammaln = _alias("gammaln", "lgamma", "(input, *, out=None) -> Tensor")
i0 = _alias("i0", "i0", "(input, *, out=None) -> Tensor")
i1 = _alias("i1", "special_i1", "(input, *, out=None) -> Tensor: the modified Bessel function of the first kind, order 1")
log1p = _alias("log1p", "log1p", "(input, *, out=None) -> Tensor")
log_softmax = _alias("log_softmax", "log_softmax", "(input, dim, *, dtype=None) -> Tensor")
logit = _alias("logit", "logit", "(input, eps=None, *, out=None) -> Tensor")
logsumexp = _alias("logsumexp", "logsumexp", "(input, dim, keepdim=False, *, out=None) -> Tensor")
multigammaln = _alias("multigammaln", "mvlgamma", "(input, p, *, out=None) -> Tensor")
ndtr = _alias("ndtr", "special_ndtr", "(input, *, out=None) -> Tensor: the standard normal CDF")
polygamma = _alias("polygamma", "polygamma", "(n, input, *, out=None) -> Tensor")
round = _alias("round", "round", "(input, *, decimals=0, out=None) -> Tensor")
sinc = _alias("sinc", "sinc", "(input, *, out=None) -> Tensor")
softmax = _alias("softmax", "softmax", "(input, dim, *, dtype=None) -> Tensor")
xlog1py = _alias("xlog1py", "special_xlog1py", "(input, other, *, out=None) -> Tensor: input * log1p(other)")
xlogy = _alias("xlogy", "xlogy", "(input, other, *, out=None) -> Tensor")


# csrc/special_math.h's functions
_U = "(input, *, out=None) -> Tensor: "
erfcx = _alias("erfcx", "special_erfcx", _U + "exp(x^2) erfc(x)")
log_ndtr = _alias("log_ndtr", "special_log_ndtr", _U + "the log of the standard normal CDF")
ndtri = _alias("ndtri", "special_ndtri", _U + "the inverse of the standard normal CDF")
i0e = _alias("i0e", "special_i0e", _U + "exp(-|x|) i0(x)")
i1e = _alias("i1e", "special_i1e", _U + "exp(-|x|) i1(x)")
bessel_j0 = _alias("bessel_j0", "special_bessel_j0", _U + "the Bessel function of the first kind, order 0")
bessel_j1 = _alias("bessel_j1", "special_bessel_j1", _U + "the Bessel function of the first kind, order 1")
bessel_y0 = _alias("bessel_y0", "special_bessel_y0", _U + "the Bessel function of the second kind, order 0")
bessel_y1 = _alias("bessel_y1", "special_bessel_y1", _U + "the Bessel function of the second kind, order 1")
modified_bessel_i0 = _alias("modified_bessel_i0", "special_modified_bessel_i0", _U + "I0(x)")
modified_bessel_i1 = _alias("modified_bessel_i1", "special_modified_bessel_i1", _U + "I1(x)")
modified_bessel_k0 = _alias("modified_bessel_k0", "special_modified_bessel_k0", _U + "K0(x)")
modified_bessel_k1 = _alias("modified_bessel_k1", "special_modified_bessel_k1", _U + "K1(x)")
scaled_modified_bessel_k0 = _alias("scaled_modified_bessel_k0", "special_scaled_modified_bessel_k0", _U + "exp(x) K0(x)")
scaled_modified_bessel_k1 = _alias("scaled_modified_bessel_k1", "special_scaled_modified_bessel_k1", _U + "exp(x) K1(x)")
spherical_bessel_j0 = _alias("spherical_bessel_j0", "special_spherical_bessel_j0", _U + "sin(x) / x")
zeta = _alias("zeta", "special_zeta", "(input, other, *, out=None) -> Tensor: the Hurwitz zeta function")
gammainc = _alias("gammainc", "igamma", "(input, other, *, out=None) -> Tensor: the regularized lower incomplete gamma")
gammaincc = _alias("gammaincc", "igammac", "(input, other, *, out=None) -> Tensor: the regularized upper incomplete gamma")


# csrc/special_poly_math.h's functions (no derivative, as in PyTorch)
airy_ai = _alias("airy_ai", "special_airy_ai", _U + "the Airy function Ai(x)")
_P = "(input, n, *, out=None) -> Tensor: "
chebyshev_polynomial_t = _alias("chebyshev_polynomial_t", "special_chebyshev_polynomial_t", _P + "T_n(input)")
chebyshev_polynomial_u = _alias("chebyshev_polynomial_u", "special_chebyshev_polynomial_u", _P + "U_n(input)")
chebyshev_polynomial_v = _alias("chebyshev_polynomial_v", "special_chebyshev_polynomial_v", _P + "V_n(input)")
chebyshev_polynomial_w = _alias("chebyshev_polynomial_w", "special_chebyshev_polynomial_w", _P + "W_n(input)")
shifted_chebyshev_polynomial_t = _alias("shifted_chebyshev_polynomial_t", "special_shifted_chebyshev_polynomial_t",
                                        _P + "T_n(2 input - 1)")
shifted_chebyshev_polynomial_u = _alias("shifted_chebyshev_polynomial_u", "special_shifted_chebyshev_polynomial_u",
                                        _P + "U_n(2 input - 1)")
shifted_chebyshev_polynomial_v = _alias("shifted_chebyshev_polynomial_v", "special_shifted_chebyshev_polynomial_v",
                                        _P + "V_n(2 input - 1)")
shifted_chebyshev_polynomial_w = _alias("shifted_chebyshev_polynomial_w", "special_shifted_chebyshev_polynomial_w",
                                        _P + "W_n(2 input - 1)")
hermite_polynomial_h = _alias("hermite_polynomial_h", "special_hermite_polynomial_h", _P + "H_n(input)")
hermite_polynomial_he = _alias("hermite_polynomial_he", "special_hermite_polynomial_he", _P + "He_n(input)")
laguerre_polynomial_l = _alias("laguerre_polynomial_l", "special_laguerre_polynomial_l", _P + "L_n(input)")
legendre_polynomial_p = _alias("legendre_polynomial_p", "special_legendre_polynomial_p", _P + "P_n(input)")
