"""ctorch.special: torch.special's names. Most are other names of ctorch functions; entr, xlog1py and
ndtr are ctorch._C.special_<name>."""
from ._forward import c_function as _alias

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i1", "log1p",
           "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "polygamma", "psi", "round", "sinc",
           "softmax", "xlog1py", "xlogy"]


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

