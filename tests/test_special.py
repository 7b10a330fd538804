"""ctorch.special: torch.special's names (aliases of ctorch functions, checked to be the same
function), and its own functions entr, xlog1py, ndtr, i1 against NumPy on every device: values with
NaN/inf/0, integer inputs, out=, broadcasting and numbers, float64 gradchecks and grad_fn names."""
import math

import numpy as np
import pytest

import ctorch
import ctorch.special as special
from ctorch.autograd import gradcheck

from conftest import assert_close, to_numpy

ALIASES = {"digamma": "digamma", "psi": "digamma", "erf": "erf", "erfc": "erfc", "erfinv": "erfinv", "exp2": "exp2",
           "expit": "sigmoid", "expm1": "expm1", "gammaln": "lgamma", "i0": "i0", "log1p": "log1p", "logit": "logit",
           "sinc": "sinc", "round": "round"}


def T(arr, device, dtype="float64", requires_grad=False):
    return ctorch.tensor(np.asarray(arr), dtype=getattr(ctorch, dtype), device=device, requires_grad=requires_grad)


def _i1(x):
    """I1 by its power series (enough terms for |x| <= 5)."""
    k = np.arange(40)
    terms = (x[..., None] / 2) ** (2 * k + 1) / np.array([math.factorial(j) * math.factorial(j + 1) for j in k])
    return terms.sum(-1)


def test_aliases(device):
    x = T([0.25, 0.5, 0.75], device)
    for name, target in ALIASES.items():
        assert_close(getattr(special, name)(x), to_numpy(getattr(ctorch, target)(x)))
    assert_close(special.multigammaln(T([2.5, 3.0], device), 2), to_numpy(ctorch.mvlgamma(T([2.5, 3.0], device), 2)))
    assert_close(special.polygamma(1, x), to_numpy(ctorch.polygamma(1, x)))
    m = T([[1.0, 2.0], [3.0, 0.5]], device)
    for name in ("softmax", "log_softmax", "logsumexp"):
        assert_close(getattr(special, name)(m, 1), to_numpy(getattr(ctorch, name)(m, 1)))
    assert_close(special.xlogy(x, x), to_numpy(ctorch.xlogy(x, x)))
    assert not hasattr(ctorch, "special_entr")  # only under ctorch.special, as in PyTorch


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_own_functions(device, dtype):
    v = np.array([-1.0, 0.0, 0.5, 2.0, np.nan, np.inf])
    x = T(v, device, dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        entr = np.where(v > 0, -v * np.log(np.where(v > 0, v, 1)), np.where(v == 0, 0, -np.inf))
        assert_close(special.entr(x), np.where(np.isnan(v), np.nan, entr))
        assert_close(special.ndtr(x), np.array([0.5 * math.erfc(-a / math.sqrt(2)) for a in v]))
        y = np.array([1.0, np.nan, -1.0, 0.5, 2.0, 3.0])
        want = np.where(np.isnan(y), np.nan, np.where(v == 0, 0.0, v * np.log1p(y)))
        assert_close(special.xlog1py(x, T(y, device, dtype)), want)
    assert_close(special.i1(T([0.0, 1.0, -2.5, 4.0], device, dtype)), _i1(np.array([0.0, 1.0, -2.5, 4.0])))
    # numbers on either side, broadcasting, integer inputs computed in the default float dtype, out=
    assert_close(special.xlog1py(2, T([[0.5], [1.0]], device, dtype)), 2 * np.log1p(np.array([[0.5], [1.0]])))
    assert_close(special.xlog1py(T([1.0, 0.0], device, dtype), 0.5), np.array([np.log1p(0.5), 0.0]))
    ints = ctorch.tensor([1, 2], device=device)
    assert special.entr(ints).dtype == ctorch.float32 and special.ndtr(ints).dtype == ctorch.float32
    out = ctorch.empty(2, dtype=getattr(ctorch, dtype), device=device)
    assert special.entr(T([0.5, 1.0], device, dtype), out=out) is out
    assert_close(out, np.array([-0.5 * np.log(0.5), 0.0]))
    with pytest.raises(TypeError, match="must be Tensor"):
        special.entr(1.0)


def test_gradients(device):
    x = T([0.3, 1.2, 2.5], device, requires_grad=True)
    assert gradcheck(special.entr, (x,))
    assert gradcheck(special.ndtr, (x,))
    assert gradcheck(special.i1, (T([0.0, -1.5, 2.0], device, requires_grad=True),))
    y = T([0.5, -0.5, 3.0], device, requires_grad=True)
    assert gradcheck(special.xlog1py, (x, y))
    assert gradcheck(lambda b: special.xlog1py(2.0, b), (y,))
    assert special.entr(x).grad_fn.name() == "SpecialEntrBackward0"
    assert special.xlog1py(x, y).grad_fn.name() == "SpecialXlog1PyBackward0"
    assert special.xlog1py(2.0, y).grad_fn.name() == "SpecialXlog1PyBackward1"
    assert special.i1(x).grad_fn.name() == "SpecialI1Backward0"
    # x == 0 with y <= -1: the gradient for x is 0, as PyTorch masks it
    z = T([0.0], device, requires_grad=True)
    special.xlog1py(z, T([-1.0], device)).backward()
    assert_close(z.grad, np.array([0.0]))


# --- csrc/special_math.h's functions ----------------------------------------------------------------------
# Reference values computed with mpmath at 60 digits (a scratch script, not run here): points in every
# branch (series, recurrences, continued fractions, asymptotic expansions), negative and large arguments.
UNARY_REF = {
    "erfcx": ([-20.0, -1.5, 0.3, 5.0, 30.0, 1e10], [1.0442939379528288e+174, 18.653886256262734, 0.73459933456765515,
                                                    0.11070463773306863, 0.018795888861416751, 5.6418958354775629e-11]),
    "log_ndtr": ([-1e4, -40.0, -3.0, 0.5, 6.0], [-5.0000010129278915e+7, -804.60844201375379, -6.6077262215103495,
                                                 -0.36894641528865639, -9.8658764552437573e-10]),
    "ndtri": ([1e-20, 0.02, 0.3, 0.6, 0.999], [-9.2623400897984076, -2.053748910631823, -0.52440051270804082,
                                               0.25334710313579974, 3.0902323061678133]),
    "i0e": ([-40.0, 0.7, 12.0, 1e4], [0.06327827987523533, 0.55930552650706833, 0.11642622121344044,
                                      3.9894726746047321e-3]),
    "i1e": ([-40.0, 0.7, 12.0, 1e4], [-0.062482229074442061, 0.18466998276274732, 0.11146429929018098,
                                      3.9892731959836623e-3]),
    "bessel_j0": ([-3.0, 0.4, 7.5, 24.0, 60.0, 1e5], [-0.26005195490193344, 0.96039822665956345, 0.2663396578803784,
                                                      -0.056230274166859267, -0.09147180408906187,
                                                      -1.7192011162359722e-3]),
    "bessel_j1": ([-3.0, 0.4, 7.5, 24.0, 60.0, 1e5], [-0.33905895852593646, 0.19602657795531875, 0.13524842757970551,
                                                      -0.15403806518312122, 0.046598383758166318,
                                                      1.8467575628825677e-3]),
    "bessel_y0": ([1e-8, 0.4, 7.5, 24.0, 60.0, 1e5], [-11.800773877179531, -0.60602456842700952, 0.11731328614820863,
                                                      -0.15283402879758778, 0.047358952209449399,
                                                      1.8467661588650641e-3]),
    "bessel_y1": ([1e-8, 0.4, 7.5, 24.0, 60.0, 1e5], [-6.3661977236758194e+7, -1.7808720442700513, -0.25912851048611625,
                                                      0.053059776121202169, 0.091869609369866895,
                                                      1.7192103500882563e-3]),
    "modified_bessel_i0": ([-2.0, 0.5, 35.0], [2.2795853023360673, 1.0634833707413235, 1.0733881849451406e+14]),
    "modified_bessel_i1": ([-2.0, 0.5, 35.0], [-1.5906368546373291, 0.25789430539089632, 1.0579412605189627e+14]),
    "modified_bessel_k0": ([1e-8, 0.5, 2.0, 3.5, 50.0], [18.536612259610778, 0.92441907122766586, 0.11389387274953344,
                                                         0.019598897170368489, 3.4101677497894955e-23]),
    "modified_bessel_k1": ([1e-8, 0.5, 2.0, 3.5, 50.0], [9.9999999999999903e+7, 1.6564411200033009, 0.13986588181652243,
                                                         0.022239392925923834, 3.4441022267175556e-23]),
    "scaled_modified_bessel_k0": ([0.5, 3.5, 1e3], [1.5241093857739095, 0.64902633768868843, 0.039628321600754217]),
    "scaled_modified_bessel_k1": ([0.5, 3.5, 1e3], [2.7310097082117857, 0.73646754802891241, 0.03964813081296021]),
    "spherical_bessel_j0": ([-2.0, 1e-5, 100.0], [0.45464871341284085, 0.99999999998333333, -5.0636564110975879e-3]),
}
BINARY_REF = {
    "zeta": ([(2.0, 1.0), (3.5, 0.25), (1.5, 10.0), (30.0, 2.0), (2.0, -1.5)],
             [1.6449340668482264, 128.54695896428435, 0.64866163194157042, 9.3132743241966818e-10, 9.3792466449891238]),
    "gammainc": ([(0.5, 2.0), (0.01, 0.5), (3.0, 1.0), (100.0, 95.0), (1000.0, 1100.0), (5.0, 0.01)],
                 [0.95449973610364159, 0.99437324380603282, 0.080301397071394196, 0.3173568111698, 0.99894067674607002,
                  8.2641856418064986e-13]),
    "gammaincc": ([(0.5, 2.0), (0.01, 0.5), (3.0, 1.0), (100.0, 95.0), (1000.0, 1100.0), (5.0, 30.0)],
                  [0.045500263896358414, 5.6267561939671841e-3, 0.9196986029286058, 0.6826431888302,
                   1.0593232539299773e-3, 3.624300952061488e-9]),
}
# PyTorch's values at 0, -0, +-inf, nan, -1 (from the reference torch)
INF, NAN = math.inf, math.nan
EDGES_AT = [0.0, -0.0, INF, -INF, NAN, -1.0]
EDGES = {
    "erfcx": [1.0, 1.0, 0.0, INF, NAN, 5.008980080762283], "log_ndtr": [-math.log(2), -math.log(2), -0.0, -INF, NAN,
                                                                       -1.841021645009264],
    "ndtri": [-INF, -INF, NAN, NAN, NAN, NAN], "i0e": [1.0, 1.0, 0.0, 0.0, NAN, 0.46575960759364043],
    "i1e": [0.0, 0.0, 0.0, -0.0, NAN, -0.2079104153497085], "bessel_j0": [1.0, 1.0, NAN, NAN, NAN, 0.7651976865579665],
    "bessel_j1": [0.0, -0.0, NAN, NAN, NAN, -0.44005058574493355], "bessel_y0": [-INF, -INF, NAN, NAN, NAN, NAN],
    "bessel_y1": [-INF, -INF, NAN, NAN, NAN, NAN], "modified_bessel_i0": [1.0, 1.0, NAN, NAN, NAN, 1.2660658777520082],
    "modified_bessel_i1": [0.0, 0.0, NAN, NAN, NAN, -0.5651591039924851],
    "modified_bessel_k0": [INF, INF, 0.0, NAN, NAN, NAN], "modified_bessel_k1": [INF, INF, 0.0, NAN, NAN, NAN],
    "scaled_modified_bessel_k0": [INF, INF, 0.0, NAN, NAN, NAN], "scaled_modified_bessel_k1": [INF, INF, 0.0, NAN, NAN, NAN],
    "spherical_bessel_j0": [1.0, 1.0, 0.0, 0.0, NAN, 0.8414709848078965],
}
HALF_OK = ("i0e", "i1e", "gammainc", "gammaincc")


def _rel_close(actual, expected, rtol):
    np.testing.assert_allclose(to_numpy(actual).astype(np.float64), expected, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("name", sorted(UNARY_REF))
def test_more_unary_values(device, name):
    fn = getattr(special, name)
    xs, want = UNARY_REF[name]
    _rel_close(fn(T(xs, device)), np.array(want), 1e-13)
    edges = fn(T(EDGES_AT, device))
    _rel_close(edges, np.array(EDGES[name]), 1e-15)
    zero = np.array(EDGES[name]) == 0  # -0.0 where PyTorch has it
    assert np.array_equal(np.signbit(to_numpy(edges))[zero], np.signbit(EDGES[name])[zero])
    # float32 rounds the double result once: against float64 on the same (float32) inputs
    x32 = T(xs, device, "float32")
    _rel_close(fn(x32), to_numpy(fn(x32.double()).float()), 1e-6)
    # integers and bool compute in float32; out=; float16/bfloat16 only where PyTorch has kernels
    ints = ctorch.tensor([[1, 2], [3, 5]], device=device)
    assert fn(ints).dtype == ctorch.float32 and fn(ctorch.tensor([True], device=device)).dtype == ctorch.float32
    _rel_close(fn(ints), to_numpy(fn(ints.double()).float()), 1e-6)
    out = ctorch.empty(2, 2, dtype=ctorch.float64, device=device)
    assert fn(ints.double().T, out=out) is out
    _rel_close(out, to_numpy(fn(ints.double())).T, 0)
    assert fn(T(0.5, device)).shape == () and fn(T(np.zeros((0, 3)), device)).shape == (0, 3)
    half = T([0.5, 2.0], device, "float16")
    if name in HALF_OK:
        assert_close(fn(half), to_numpy(fn(half.double())), "float16")
        assert fn(half.bfloat16()).dtype == ctorch.bfloat16
    else:
        kernel = name + ("_cuda" if half.is_cuda else "_cpu")
        with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'Half\''):
            fn(half)
        with pytest.raises(NotImplementedError, match="BFloat16"):
            fn(half.bfloat16())
    with pytest.raises(TypeError, match="must be Tensor"):
        fn(1.0)


def test_more_identities(device):
    # ndtri inverts ndtr down to the smallest doubles; log_ndtr agrees with log(ndtr) where that is exact
    p = T([1e-300, 5e-324, 1e-10, 0.1, 0.25, 0.5, 0.75, 0.9, 1 - 1e-10], device)
    _rel_close(special.log_ndtr(special.ndtri(p)), np.log(to_numpy(p)), 1e-13)
    x = T(np.linspace(-2, 1, 7), device)  # where ndtr's 1 + erf(x / sqrt 2) cancels little
    _rel_close(special.log_ndtr(x), np.log(to_numpy(special.ndtr(x))), 1e-13)
    # i0e / i1e against NumPy's i0 and modified_bessel_i0/i1; the Wronskian J1 Y0 - J0 Y1 = 2 / (pi x)
    v = np.array([-7.5, -0.3, 0.0, 1.0, 4.0, 29.0, 31.0])
    _rel_close(special.i0e(T(v, device)), np.i0(v) * np.exp(-np.abs(v)), 1e-14)
    _rel_close(special.modified_bessel_i1(T(v, device)), to_numpy(special.i1(T(v, device))), 1e-15)
    z = T([0.3, 0.99, 1.01, 9.0, 24.9, 25.1, 300.0], device)
    j0, j1, y0, y1 = (getattr(special, f"bessel_{k}")(z) for k in ("j0", "j1", "y0", "y1"))
    _rel_close(j1 * y0 - j0 * y1, 2 / (np.pi * to_numpy(z)), 1e-13)
    k = T([1.9, 2.0, 2.1, 700.0], device)
    _rel_close(special.scaled_modified_bessel_k1(k), to_numpy(special.modified_bessel_k1(k)) * np.exp(to_numpy(k)), 1e-14)
    # P + Q = 1, P(1, x) = 1 - e^-x, P(1/2, x) = erf(sqrt x); zeta(x, 1) = zeta(x, 2) + 1
    a, s = T([0.1, 1.0, 7.0, 50.0], device), T([0.05, 3.0, 7.5, 40.0], device)
    _rel_close(special.gammainc(a, s) + special.gammaincc(a, s), np.ones(4), 1e-15)
    e = T([0.01, 1.0, 10.0, 40.0], device)
    _rel_close(special.gammaincc(ctorch.ones_like(e), e), np.exp(-to_numpy(e)), 1e-14)
    _rel_close(special.gammainc(ctorch.full_like(e, 0.5), e), [math.erf(math.sqrt(v)) for v in to_numpy(e)], 1e-14)
    _rel_close(special.zeta(T([2.0, 5.5], device), 1.0) - special.zeta(T([2.0, 5.5], device), 2.0), np.ones(2), 1e-15)


@pytest.mark.parametrize("name", sorted(BINARY_REF))
def test_more_binary_values(device, name):
    fn = getattr(special, name)
    pts, want = BINARY_REF[name]
    a, b = T([p[0] for p in pts], device), T([p[1] for p in pts], device)
    _rel_close(fn(a, b), np.array(want), 1e-13)
    # PyTorch's edge values (reference torch)
    ea = T([0.0, 0.0, 1.0, -1.0, INF, INF, 1.0, NAN, 1.0, 2.5, 1e-3, -2.0, 2.0, 1.0, 3.0], device)
    eb = T([0.0, 1.0, 0.0, 1.0, 1.0, INF, INF, 1.0, NAN, 0.0, 1.0, 1.0, -1.5, -2.0, -1.0], device)
    edges = {"zeta": [NAN, NAN, INF, NAN, 1.0, NAN, INF, NAN, INF, INF, NAN, NAN, 9.379246644989124, INF, INF],
             "gammainc": [NAN, 1.0, 0.0, NAN, 0.0, NAN, 1.0, NAN, NAN, 0.0, 0.9997803916424145, NAN, NAN, NAN, NAN]}
    edges["gammaincc"] = [1.0 - v for v in edges["gammainc"]]
    edges["gammaincc"][10] = 0.00021960835758562015  # not 1 - P to full precision
    _rel_close(fn(ea, eb), np.array(edges[name]), 1e-13)
    if name == "zeta":  # numbers on either side, integers computed in float32
        _rel_close(fn(2.0, T([1.0, 2.0], device)), [math.pi ** 2 / 6, math.pi ** 2 / 6 - 1], 1e-15)
        assert fn(ctorch.tensor([2, 3], device=device), 2).dtype == ctorch.float32
        with pytest.raises(NotImplementedError, match="Half"):
            fn(a.half(), b.half())
    else:  # PyTorch has no integer kernel; float16 computes in float
        kernel = ("igamma" if name == "gammainc" else "igammac") + ("_cuda" if a.is_cuda else "_cpu")
        with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'Long\''):
            fn(ctorch.tensor([2], device=device), ctorch.tensor([1], device=device))
        with pytest.raises(TypeError, match="must be Tensor"):
            fn(a, 1.0)
        assert_close(fn(a[:3].half(), b[:3].half()), to_numpy(fn(a[:3].half().double(), b[:3].half().double())),
                     "float16")
        assert getattr(ctorch, "igamma" if name == "gammainc" else "igammac") is not None
        assert_close(getattr(a.clone(), ("igamma" if name == "gammainc" else "igammac") + "_")(b), np.array(want))


def test_more_gradients(device):
    x = T([-2.5, -0.4, 0.7, 3.0], device, requires_grad=True)
    pos = T([0.3, 1.5, 2.5, 30.0], device, requires_grad=True)
    p = T([1e-3, 0.2, 0.6, 0.97], device, requires_grad=True)
    for name, arg in [("erfcx", x), ("log_ndtr", x), ("ndtri", p), ("i0e", x), ("i1e", x), ("bessel_j0", x),
                      ("bessel_j1", x), ("bessel_y0", pos), ("bessel_y1", pos), ("modified_bessel_i0", x),
                      ("modified_bessel_i1", x), ("modified_bessel_k0", pos), ("modified_bessel_k1", pos)]:
        assert gradcheck(getattr(special, name), (arg,)), name
        node = getattr(special, name)(arg).grad_fn.name()
        assert node == "Special" + "".join(w.capitalize() for w in name.split("_")).replace("I0e", "I0E").replace(
            "I1e", "I1E") + "Backward0", node
    # the order-1 functions' derivative at 0 is 1/2; log_ndtr's stays finite far out
    for name in ("i1e", "bessel_j1", "modified_bessel_i1"):
        z = T([0.0], device, requires_grad=True)
        getattr(special, name)(z).backward()
        assert_close(z.grad, np.array([0.5]))
    far = T([-1e5, -40.0, 40.0], device, requires_grad=True)
    special.log_ndtr(far).sum().backward()
    _rel_close(far.grad, np.array([1e5 + 1e-5, 40.024968847212364, 0.0]), 1e-12)  # |x| + 1/|x| - 2/|x|^3: exact, not cancelling
    # scaled K and spherical_bessel_j0: not differentiable, the output does not require grad
    for name in ("scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0"):
        y = getattr(special, name)(pos)
        assert not y.requires_grad and y.grad_fn is None
    # the binary functions: the second argument only, PyTorch's error for the first
    q = T([1.5, 2.5], device, requires_grad=True)
    s = T([2.5, 4.0], device, requires_grad=True)
    assert gradcheck(lambda b: special.zeta(T([2.0, 3.5], device), b), (q,))
    assert gradcheck(lambda b: special.zeta(3.0, b), (q,))
    assert gradcheck(lambda b: special.gammainc(T([0.5, 3.0], device), b), (q,))
    assert gradcheck(lambda b: special.gammaincc(T([0.5, 3.0], device), b), (q,))
    assert special.zeta(s, q).grad_fn.name() == "SpecialZetaBackward0"
    assert special.zeta(2.0, q).grad_fn.name() == "SpecialZetaBackward1"
    assert special.zeta(s, 2.0).grad_fn.name() == "SpecialZetaBackward2"
    assert special.gammainc(s, q).grad_fn.name() == "IgammaBackward0"
    assert special.gammaincc(s, q).grad_fn.name() == "IgammacBackward0"
    for fn, what in [(special.zeta, "zeta"), (special.gammainc, "igamma: input"), (special.gammaincc, "igammac: input")]:
        with pytest.raises(NotImplementedError, match=f"the derivative for '{what}' is not implemented."):
            fn(s, q).sum().backward()
