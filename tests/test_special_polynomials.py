"""ctorch.special's orthogonal polynomials (Chebyshev T U V W and their shifted forms, Hermite H He,
Laguerre L, Legendre P) against numpy.polynomial, and airy_ai against its Maclaurin series summed in
50-digit decimals and its asymptotic expansions: values, PyTorch's special cases (n < 0, non-integer
and non-finite n, the ends of [-1, 1], large n, Hermite's degree limit), dtypes (integer inputs,
promotion with n, float16 refused), numbers, broadcasting, layouts, out=, errors, and no grad_fn (PyTorch
gives these no derivative)."""
import math
from decimal import Decimal, localcontext

import numpy as np
import numpy.polynomial as npp
import pytest

import ctorch
import ctorch.special as special

from conftest import to_numpy


def T(arr, device, dtype="float64", requires_grad=False):
    return ctorch.tensor(np.asarray(arr), dtype=getattr(ctorch, dtype), device=device, requires_grad=requires_grad)


def _unit(n):
    c = np.zeros(n + 1)
    c[n] = 1.0
    return c


def _cheb_u(n):
    """U_n in the T basis: 2 (T_n + T_n-2 + ...), less T_0 when n is even."""
    c = np.zeros(n + 1)
    c[n % 2::2] = 2.0
    if n % 2 == 0:
        c[0] -= 1.0
    return c


def _cheb_vw(n, sign):
    """V_n = U_n - U_n-1, W_n = U_n + U_n-1 in the T basis."""
    c = _cheb_u(n)
    if n > 0:
        c[:n] += sign * _cheb_u(n - 1)
    return c


_CHEB = {"t": _unit, "u": _cheb_u, "v": lambda n: _cheb_vw(n, -1.0), "w": lambda n: _cheb_vw(n, 1.0)}
REFERENCE = {  # name -> (x grid, reference(x, n))
    **{f"chebyshev_polynomial_{k}": (np.linspace(-1.5, 1.5, 13),
                                     lambda x, n, k=k: npp.chebyshev.chebval(x, _CHEB[k](n)))
       for k in "tuvw"},
    **{f"shifted_chebyshev_polynomial_{k}": (np.linspace(-0.25, 1.25, 13),
                                             lambda x, n, k=k: npp.chebyshev.chebval(2 * x - 1, _CHEB[k](n)))
       for k in "tuvw"},
    "hermite_polynomial_h": (np.linspace(-2.5, 2.5, 11), lambda x, n: npp.hermite.hermval(x, _unit(n))),
    "hermite_polynomial_he": (np.linspace(-2.5, 2.5, 11), lambda x, n: npp.hermite_e.hermeval(x, _unit(n))),
    "laguerre_polynomial_l": (np.linspace(-2.0, 6.0, 11), lambda x, n: npp.laguerre.lagval(x, _unit(n))),
    "legendre_polynomial_p": (np.linspace(-1.5, 1.5, 13), lambda x, n: npp.legendre.legval(x, _unit(n))),
}
DEGREES = [0, 1, 2, 3, 5, 7, 9, 12]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polynomials_match_numpy(device, dtype):
    rtol = 2e-4 if dtype == "float32" else 1e-10
    n = np.array(DEGREES + [-1, -4, 2.7, np.nan, np.inf])  # truncated toward zero; negative / non-finite: 0
    for name, (xs, ref) in REFERENCE.items():
        xs = xs.astype(dtype)
        got = getattr(special, name)(T(xs[:, None], device, dtype), T(n[None, :], device, dtype))
        assert got.dtype == getattr(ctorch, dtype) and tuple(got.shape) == (len(xs), len(n))
        want = np.zeros((len(xs), len(n)))
        for j, d in enumerate(n):
            if np.isfinite(d) and d >= 0:
                want[:, j] = ref(xs.astype(np.float64), int(d))
        scale = np.maximum(np.abs(want).max(axis=0, keepdims=True), 1.0)  # per degree: cancellation near roots
        np.testing.assert_allclose(to_numpy(got) / scale, want / scale, rtol=0, atol=rtol, err_msg=name)


def test_polynomial_special_cases(device):
    x = T([-1.0, 1.0], device)
    assert to_numpy(special.chebyshev_polynomial_u(x, 40)).tolist() == [41.0, 41.0]
    assert to_numpy(special.chebyshev_polynomial_u(x, 41)).tolist() == [-42.0, 42.0]
    assert to_numpy(special.chebyshev_polynomial_v(x, 41)).tolist() == [-83.0, 1.0]
    assert to_numpy(special.chebyshev_polynomial_w(x, 41)).tolist() == [-1.0, 83.0]
    assert to_numpy(special.shifted_chebyshev_polynomial_w(T([0.0, 1.0], device), 41)).tolist() == [-1.0, 83.0]
    assert to_numpy(special.legendre_polynomial_p(x, 41)).tolist() == [-1.0, 1.0]
    # large degrees inside (-1, 1): the trigonometric forms
    th = np.array([0.3, 1.1, 2.9])
    got = special.chebyshev_polynomial_t(T(np.cos(th), device), 1000)
    np.testing.assert_allclose(to_numpy(got), np.cos(1000 * th), atol=1e-9)
    got = special.chebyshev_polynomial_u(T(np.cos(th), device), 1000)
    np.testing.assert_allclose(to_numpy(got), np.sin(1001 * th) / np.sin(th), atol=1e-9)
    # Hermite: degrees above 128 (float32) / 512 (float64) give NaN; Laguerre at 0 is 1; NaN x
    assert np.isnan(to_numpy(special.hermite_polynomial_h(T([0.5], device, "float32"), 129))).all()
    assert np.isfinite(to_numpy(special.hermite_polynomial_he(T([0.5], device), 129))).all()
    assert np.isnan(to_numpy(special.hermite_polynomial_he(T([0.5], device), 513))).all()
    assert to_numpy(special.laguerre_polynomial_l(T([0.0], device), 10)).tolist() == [1.0]
    assert to_numpy(special.hermite_polynomial_he(T([np.nan], device), 0)).tolist() == [1.0]
    assert np.isnan(to_numpy(special.legendre_polynomial_p(T([np.nan], device), 5))).all()


def test_polynomial_dtypes_numbers_out(device):
    xi = ctorch.tensor([1, 2, 3], device=device)
    got = special.chebyshev_polynomial_t(xi, 2)  # integers: the default float dtype
    assert got.dtype == ctorch.float32 and to_numpy(got).tolist() == [1.0, 7.0, 17.0]
    got = special.laguerre_polynomial_l(T([0.5, 2.0], device, "float32"), T([2, 3], device, "float64"))
    assert got.dtype == ctorch.float64
    got = special.legendre_polynomial_p(T([0.5, 2.0], device, "float32"), T(3.0, device, "float64"))  # 0-d n
    assert got.dtype == ctorch.float32
    np.testing.assert_allclose(to_numpy(got), npp.legendre.legval([0.5, 2.0], _unit(3)), rtol=1e-6)
    got = special.hermite_polynomial_he(0.5, ctorch.tensor([2, 3], device=device))  # a number x
    assert got.dtype == ctorch.float32 and got.device.type == device
    np.testing.assert_allclose(to_numpy(got), [-0.75, -1.375], rtol=1e-6)
    # transposed and empty inputs, out= (resized; float64 accepts a float32 result)
    xt = T(np.linspace(0, 1, 6).reshape(2, 3), device).t()
    got = special.shifted_chebyshev_polynomial_v(xt, T([[1], [2], [3]], device))  # (3, 2) by (3, 1)
    assert tuple(got.shape) == (3, 2)
    for j, d in enumerate([1, 2, 3]):
        np.testing.assert_allclose(to_numpy(got)[j], npp.chebyshev.chebval(2 * to_numpy(xt)[j] - 1, _CHEB["v"](d)))
    assert tuple(special.chebyshev_polynomial_t(T(np.zeros((0, 3)), device), 2).shape) == (0, 3)
    out = ctorch.empty(0, dtype=ctorch.float64, device=device)
    r = special.hermite_polynomial_h(T([0.5, 1.0], device, "float32"), 3, out=out)
    assert r is out and out.dtype == ctorch.float64
    np.testing.assert_allclose(to_numpy(out), npp.hermite.hermval([0.5, 1.0], _unit(3)), rtol=1e-6)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        special.chebyshev_polynomial_t(T([0.5], device, "float32"), 2,
                                       out=ctorch.empty(1, dtype=ctorch.int64, device=device))


def test_polynomial_errors_and_no_grad(device):
    kernel = "cpu" if device == "cpu" else "cuda"
    with pytest.raises(NotImplementedError, match=f'"chebyshev_polynomial_w_{kernel}" not implemented for \'Half\''):
        special.chebyshev_polynomial_w(T([0.5], device, "float16"), 2)
    with pytest.raises(NotImplementedError, match=f'"laguerre_polynomial_l_{kernel}" not implemented for \'BFloat16\''):
        special.laguerre_polynomial_l(T([0.5], device, "bfloat16"), 2)
    with pytest.raises(TypeError, match=r"special_legendre_polynomial_p\(\) received an invalid combination of "
                                        r"arguments - got \(float, int\)"):
        special.legendre_polynomial_p(0.5, 2)
    with pytest.raises(TypeError, match="invalid combination"):
        special.hermite_polynomial_h(T([0.5], device), "a")
    x = T([0.3, 0.6], device, requires_grad=True)
    for y in (special.chebyshev_polynomial_t(x, 3), special.hermite_polynomial_h(T([2.0], device), x),
              special.airy_ai(x)):
        assert y.grad_fn is None and not y.requires_grad


# --- airy_ai -------------------------------------------------------------------------------------------
# Ai(0) = 3^(-2/3) / Gamma(2/3), -Ai'(0) = 3^(-1/3) / Gamma(1/3) (DLMF 9.2.3, 9.2.4), to 40 digits
AI0 = Decimal("0.3550280538878172392600631860041831763980")
AI0P = Decimal("0.2588194037928067984051835601892039634791")


def _airy_series(x):
    """Ai(x) = Ai(0) f(x) + Ai'(0) g(x), the Maclaurin series in 50-digit decimals (|x| <= 10)."""
    with localcontext() as ctx:
        ctx.prec = 50
        x = Decimal(float(x))
        x3 = x ** 3
        f = tf = Decimal(1)
        g = tg = x
        for k in range(1, 120):
            tf *= x3 / ((3 * k - 1) * (3 * k))
            tg *= x3 / ((3 * k) * (3 * k + 1))
            f += tf
            g += tg
        return float(AI0 * f - AI0P * g)


def _airy_asymptotic(x):
    """DLMF 9.7.5 (x > 0) and 9.7.9 (Ai(-x)), summed while the terms fall."""
    a = abs(x)
    z = 2.0 / 3.0 * a ** 1.5
    u, terms = 1.0, [1.0]
    for k in range(1, 30):
        u *= (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k) / z
        if abs(u) >= abs(terms[-1]):
            break
        terms.append(u)
    if x > 0:
        return math.exp(-z) / (2 * math.sqrt(math.pi) * a ** 0.25) * sum((-1) ** k * t for k, t in enumerate(terms))
    p = sum((-1) ** (k // 2) * t for k, t in enumerate(terms) if k % 2 == 0)
    q = sum((-1) ** (k // 2) * t for k, t in enumerate(terms) if k % 2 == 1)
    return (math.cos(z - math.pi / 4) * p + math.sin(z - math.pi / 4) * q) / (math.sqrt(math.pi) * a ** 0.25)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_airy_ai(device, dtype):
    xs = np.concatenate([np.linspace(-10.0, 8.0, 37), [1e-3, -1e-3, 0.0]]).astype(dtype)
    want = np.array([_airy_series(v) for v in xs])
    got = special.airy_ai(T(xs, device, dtype))
    assert got.dtype == getattr(ctorch, dtype)
    tol = 1e-6 if dtype == "float32" else 1e-11
    neg = xs < 0  # oscillating: relative to the amplitude (0.3 or more), decaying: relative to the value
    np.testing.assert_allclose(to_numpy(got)[neg], want[neg], rtol=0, atol=tol * 0.3)
    np.testing.assert_allclose(to_numpy(got)[~neg], want[~neg], rtol=tol, atol=0)
    big = np.array([-400.0, -35.5, 20.0, 60.0, 100.0]).astype(dtype)
    want = np.array([_airy_asymptotic(float(v)) for v in big])
    if dtype == "float32":
        want[-2:] = [np.float32(w) for w in want[-2:]]  # below float's range: 0
    np.testing.assert_allclose(to_numpy(special.airy_ai(T(big, device, dtype))), want, rtol=tol * 10, atol=tol * 1e-3)
    edge = to_numpy(special.airy_ai(T([np.nan, np.inf, -np.inf, 200.0], device, dtype)))
    assert np.isnan(edge[:3]).all() and edge[3] == 0.0


def test_airy_ai_dtypes_out_errors(device):
    got = special.airy_ai(ctorch.tensor([0, 1], device=device))
    assert got.dtype == ctorch.float32
    np.testing.assert_allclose(to_numpy(got), [0.3550280538878172, 0.1352924163128814], rtol=1e-6)
    out = ctorch.empty(0, device=device)
    assert special.airy_ai(x=T([0.0, 1.0], device, "float32"), out=out) is out and tuple(out.shape) == (2,)
    with pytest.raises(NotImplementedError, match="\"airy_ai_c(pu|uda)\" not implemented for 'Half'"):
        special.airy_ai(T([0.5], device, "float16"))
    with pytest.raises(TypeError, match=r"special_airy_ai\(\): argument 'x' \(position 1\) must be Tensor, not float"):
        special.airy_ai(0.5)
