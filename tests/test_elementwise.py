"""Elementwise ops against NumPy: every op x device x dtype x layout (contiguous, transposed,
broadcast, expanded, 0-d, empty, sliced views, Python scalars), with the oracle computed in
float64 from the values the tensor actually holds (so float16/bfloat16 inputs are compared after
their rounding), then PyTorch's semantics: NaN handling, integer division by zero, bool rules,
error types and messages, in-place variants and out=."""
import math

import numpy as np
import pytest

import ctorch
from conftest import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, assert_close, np_dtype, to_numpy

FLOATS = set(FLOAT_DTYPES)
INTS = set(INT_DTYPES)

SCALAR_TYPE = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
               "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}


def kind(dtype):
    return "bool" if dtype == "bool" else "int" if dtype in INTS else "float"


def dt(name):
    return getattr(ctorch, name)


# --- inputs -----------------------------------------------------------------------------------------
def gen(rng, dtype, shape, lo=-3.0, hi=3.0, ilo=-5, ihi=6):
    """Random values of dtype (as a NumPy array of the matching NumPy dtype; bfloat16 as float32)."""
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in INTS:
        info = np.iinfo(dtype)
        return rng.integers(max(ilo, info.min), min(ihi, info.max + 1), shape).astype(dtype)
    return rng.uniform(lo, hi, shape).astype(np_dtype(dtype))


def held(t):
    """What a tensor holds, widened for the oracle (floats to float64)."""
    a = to_numpy(t)
    return a.astype(np.float64) if a.dtype.kind == "f" else a


def make(arr, dtype, device, layout):
    """A tensor holding arr (shape as given) in the named layout."""
    kw = {"dtype": dt(dtype), "device": device}
    if layout == "transposed":
        return ctorch.tensor(np.ascontiguousarray(arr.T), **kw).t()
    if layout == "expanded":
        return ctorch.tensor(arr[:1], **kw).expand(*arr.shape)
    if layout == "sliced":
        big = np.zeros((arr.shape[0] + 2, arr.shape[1] + 3), dtype=arr.dtype)
        big[1:-1, 2:-1] = arr
        return ctorch.tensor(big, **kw).narrow(0, 1, arr.shape[0]).narrow(1, 2, arr.shape[1])
    if layout == "selected":
        big = np.zeros((arr.shape[0], 3, arr.shape[1]), dtype=arr.dtype)
        big[:, 1, :] = arr
        return ctorch.tensor(big, **kw).select(1, 1)
    return ctorch.tensor(arr, **kw)


# shape of the array given to make() and the layout it is built in
UNARY_LAYOUTS = {
    "contiguous": ((3, 4), "contiguous"),
    "transposed": ((3, 4), "transposed"),
    "expanded": ((3, 4), "expanded"),
    "zero_d": ((), "contiguous"),
    "empty": ((0, 4), "contiguous"),
    "sliced": ((3, 4), "sliced"),
}
# (shape a, layout a), (shape b, layout b); b None: a Python number
BINARY_LAYOUTS = {
    "contiguous": (((3, 4), "contiguous"), ((3, 4), "contiguous")),
    "transposed": (((3, 4), "transposed"), ((3, 4), "contiguous")),
    "bcast_col_row": (((3, 1), "contiguous"), ((1, 4), "contiguous")),
    "bcast_vec": (((4,), "contiguous"), ((3, 4), "transposed")),
    "expanded": (((3, 4), "expanded"), ((3, 4), "selected")),
    "zero_d": (((3, 4), "contiguous"), ((), "contiguous")),
    "both_zero_d": (((), "contiguous"), ((), "contiguous")),
    "empty": (((0, 4), "contiguous"), ((4,), "contiguous")),
    "sliced": (((3, 4), "sliced"), ((3, 4), "selected")),
    "scalar": (((3, 4), "sliced"), None),
}


# --- unary ops ----------------------------------------------------------------------------------------
def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _identity_for_ints(f):
    return lambda x: x.copy() if x.dtype.kind in "iub" else f(x)


def _gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


class U:
    """A unary op: name, NumPy oracle, domain, input range.
    domain: 'all' | 'num' (no bool) | 'int' (ints and bool) | 'float_promote' (ints -> float32)
    | 'float' (float dtypes only); out_bool: result is bool."""

    def __init__(self, name, oracle, domain, lo=-3.0, hi=3.0, ilo=-5, ihi=6, out_bool=False, method=True,
                 inplace=True, module_inplace=True, error=None):
        self.name, self.oracle, self.domain = name, oracle, domain
        self.lo, self.hi, self.ilo, self.ihi = lo, hi, ilo, ihi
        self.out_bool, self.method, self.inplace, self.module_inplace = out_bool, method, inplace, module_inplace
        self.error = error  # (exception, message regex) for bool inputs with a custom message

    def __repr__(self):
        return self.name


UNARY = [
    U("neg", np.negative, "num", error=(NotImplementedError, r"Negation, the `-` operator, on a bool tensor")),
    U("abs", np.abs, "num"),
    U("sign", lambda x: x.copy() if x.dtype == bool else np.nan_to_num(np.sign(x)), "all", module_inplace=False),  # sign(nan) = 0
    U("square", lambda x: x.astype(np.int64) * x.astype(np.int64) if x.dtype == bool else x * x, "all"),
    U("relu", lambda x: np.where(x < 0, 0, x).astype(x.dtype), "num",
      error=(NotImplementedError, "Boolean inputs not supported for relu")),
    U("floor", _identity_for_ints(np.floor), "num"),
    U("ceil", _identity_for_ints(np.ceil), "num"),
    U("trunc", _identity_for_ints(np.trunc), "num"),
    U("round", _identity_for_ints(np.round), "num"),
    U("frac", lambda x: x - np.trunc(x), "float"),
    U("exp", np.exp, "float_promote"),
    U("exp2", np.exp2, "float_promote"),
    U("expm1", np.expm1, "float_promote"),
    U("log", np.log, "float_promote", lo=0.1, hi=5.0, ilo=1),
    U("log2", np.log2, "float_promote", lo=0.1, hi=5.0, ilo=1),
    U("log10", np.log10, "float_promote", lo=0.1, hi=5.0, ilo=1),
    U("log1p", np.log1p, "float_promote", lo=-0.5, hi=5.0, ilo=0),
    U("sqrt", np.sqrt, "float_promote", lo=0.0, hi=5.0, ilo=0),
    U("rsqrt", lambda x: 1 / np.sqrt(x), "float_promote", lo=0.1, hi=5.0, ilo=1),
    U("reciprocal", lambda x: 1 / x, "float_promote", lo=0.2, hi=5.0, ilo=1),
    U("sin", np.sin, "float_promote"),
    U("cos", np.cos, "float_promote"),
    U("tan", np.tan, "float_promote", lo=-1.2, hi=1.2, ilo=-1, ihi=2),
    U("asin", np.arcsin, "float_promote", lo=-0.95, hi=0.95, ilo=-1, ihi=2),
    U("acos", np.arccos, "float_promote", lo=-0.95, hi=0.95, ilo=-1, ihi=2),
    U("atan", np.arctan, "float_promote"),
    U("sinh", np.sinh, "float_promote"),
    U("cosh", np.cosh, "float_promote"),
    U("tanh", np.tanh, "float_promote"),
    U("asinh", np.arcsinh, "float_promote"),
    U("acosh", np.arccosh, "float_promote", lo=1.0, hi=5.0, ilo=1),
    U("atanh", np.arctanh, "float_promote", lo=-0.9, hi=0.9, ilo=0, ihi=1),
    U("sigmoid", lambda x: 1 / (1 + np.exp(-x)), "float_promote"),
    U("erf", _erf, "float_promote"),
    U("erfc", lambda x: 1 - _erf(x), "float_promote"),
    U("logical_not", np.logical_not, "all", out_bool=True, module_inplace=False),
    U("bitwise_not", np.invert, "int", module_inplace=False),
    U("isnan", np.isnan, "all", out_bool=True, inplace=False, module_inplace=False),
    U("isinf", np.isinf, "all", out_bool=True, inplace=False, module_inplace=False),
    U("isfinite", np.isfinite, "all", out_bool=True, inplace=False, module_inplace=False),
    U("isposinf", np.isposinf, "all", out_bool=True, inplace=False, module_inplace=False),
    U("isneginf", np.isneginf, "all", out_bool=True, inplace=False, module_inplace=False),
    U("signbit", np.signbit, "all", out_bool=True, inplace=False, module_inplace=False),
    U("silu", lambda x: x / (1 + np.exp(-x)), "float", method=False, inplace=False, module_inplace=False),
    U("gelu", _gelu, "float", method=False, inplace=False, module_inplace=False),
]


def unary_result_dtype(op, dtype):
    if op.out_bool:
        return "bool"
    if op.domain == "float_promote" and dtype not in FLOATS:
        return "float32"
    if op.name == "square" and dtype == "bool":
        return "int64"
    return dtype


def supported(domain, dtype):
    k = kind(dtype)
    return {"all": True, "num": k != "bool", "int": k != "float", "float_promote": True,
            "float": k == "float", "intonly": k == "int"}[domain]


def with_specials(arr, dtype):
    """Puts nan/inf/-inf/-0.0 into a float array for the predicates."""
    if dtype in FLOATS and arr.size >= 4:
        flat = arr.reshape(-1)
        flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return arr


@pytest.mark.parametrize("layout", list(UNARY_LAYOUTS))
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", UNARY, ids=repr)
def test_unary(device, op, dtype, layout, rng):
    shape, how = UNARY_LAYOUTS[layout]
    x = gen(rng, dtype, shape, op.lo, op.hi, op.ilo, op.ihi)
    if op.out_bool or op.name in ("neg", "abs", "sign", "floor", "ceil", "trunc", "round"):
        x = with_specials(x, dtype)
    t = make(x, dtype, device, how)
    fn = getattr(ctorch, op.name)
    if not supported(op.domain, dtype):
        exc, msg = op.error or (NotImplementedError, "not implemented for '{}'".format(SCALAR_TYPE[dtype]))
        with pytest.raises(exc, match=msg):
            fn(t)
        return
    r = fn(t)
    assert r.dtype == dt(unary_result_dtype(op, dtype))
    assert tuple(r.shape) == shape
    v = held(t)
    if op.domain == "float_promote":
        v = v.astype(np.float64)  # NumPy would compute small ints in float16
    with np.errstate(all="ignore"):
        expected = op.oracle(v)
    assert_close(r, expected)
    if op.method:
        assert_close(getattr(t, op.name)(), expected)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", [op for op in UNARY if op.inplace], ids=repr)
def test_unary_inplace(device, op, dtype, rng):
    x = gen(rng, dtype, (3, 4), op.lo, op.hi, op.ilo, op.ihi)
    base = ctorch.tensor(np.ascontiguousarray(x.T), dtype=dt(dtype), device=device)
    t = base.t()  # a non-contiguous view: the write must land in base
    if not supported(op.domain, dtype):
        with pytest.raises((NotImplementedError, RuntimeError)):
            getattr(t, op.name + "_")()
        return
    res_dtype = unary_result_dtype(op, dtype)
    if not ctorch.can_cast(dt(res_dtype), dt(dtype)):
        with pytest.raises(RuntimeError, match="result type {} can't be cast to the desired output type {}".format(
                SCALAR_TYPE[res_dtype], SCALAR_TYPE[dtype])):
            getattr(t, op.name + "_")()
        return
    with np.errstate(all="ignore"):
        expected = op.oracle(held(t))
    r = getattr(t, op.name + "_")()
    assert r is t and t.dtype == dt(dtype)
    expected = np.asarray(expected)
    if dtype in INTS or dtype == "bool":
        expected = expected.astype(np_dtype(dtype))
    assert_close(base.t(), expected)
    if op.module_inplace:
        t2 = ctorch.tensor(x, dtype=dt(dtype), device=device)
        assert getattr(ctorch, op.name + "_")(t2) is t2
        assert_close(t2, expected)


# --- binary ops --------------------------------------------------------------------------------------------
def _div_trunc(a, b):
    if a.dtype.kind in "iu":
        q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
        return (q * np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64))).astype(a.dtype)
    return np.trunc(a / b)


class B:
    """A binary op. domain as for U plus 'intonly'; nonzero_b: divisor (no zeros in b);
    number: Python numbers accepted as `other`; inplace: Tensor.<name>_ exists."""

    def __init__(self, name, oracle, domain, out_bool=False, nonzero_b=False, number=True, inplace=True,
                 blo=-3.0, bhi=3.0, bilo=-5, bihi=6, alo=-3.0, ahi=3.0, ailo=-5, aihi=6, scalar=None, error=None):
        self.name, self.oracle, self.domain, self.out_bool = name, oracle, domain, out_bool
        self.nonzero_b, self.number, self.inplace = nonzero_b, number, inplace
        self.arange = (alo, ahi, ailo, aihi)
        self.brange = (blo, bhi, bilo, bihi)
        self.scalar = scalar  # {kind: python number} for the scalar layout
        self.error = error

    def __repr__(self):
        return self.name


WRAP = dict(ailo=-128, aihi=128, bilo=-128, bihi=128)  # exercise integer wrap-around
BOOL_SUB = (NotImplementedError, "Subtraction, the `-` operator, with two bool tensors is not supported")
BINARY = [
    B("add", np.add, "all", **WRAP),
    B("sub", np.subtract, "num", error=BOOL_SUB, **WRAP),
    B("mul", np.multiply, "all", **WRAP),
    B("div", np.true_divide, "float_promote", nonzero_b=True),
    B("true_divide", np.true_divide, "float_promote", nonzero_b=True),
    B("floor_divide", np.floor_divide, "num", nonzero_b=True),
    B("remainder", np.remainder, "num", nonzero_b=True),
    B("fmod", np.fmod, "num", nonzero_b=True),
    B("pow", np.power, "num", alo=0.5, ahi=2.5, blo=-2.0, bhi=2.0, bilo=0, bihi=4,
      scalar={"int": 3, "float": 1.5}),
    B("atan2", np.arctan2, "float_promote", number=False),
    B("copysign", np.copysign, "float_promote"),
    B("hypot", np.hypot, "float", number=False),
    B("logaddexp", np.logaddexp, "float", number=False, inplace=False),
    B("logaddexp2", np.logaddexp2, "float", number=False, inplace=False),
    B("maximum", np.maximum, "all", number=False, inplace=False),
    B("minimum", np.minimum, "all", number=False, inplace=False),
    B("fmax", np.fmax, "all", number=False, inplace=False),
    B("fmin", np.fmin, "all", number=False, inplace=False),
    B("eq", np.equal, "all", out_bool=True, bilo=-2, bihi=3),
    B("ne", np.not_equal, "all", out_bool=True, bilo=-2, bihi=3),
    B("lt", np.less, "all", out_bool=True),
    B("le", np.less_equal, "all", out_bool=True, bilo=-2, bihi=3),
    B("gt", np.greater, "all", out_bool=True),
    B("ge", np.greater_equal, "all", out_bool=True, bilo=-2, bihi=3),
    B("logical_and", np.logical_and, "all", out_bool=True, number=False, bilo=-1, bihi=2),
    B("logical_or", np.logical_or, "all", out_bool=True, number=False, bilo=-1, bihi=2),
    B("logical_xor", np.logical_xor, "all", out_bool=True, number=False, bilo=-1, bihi=2),
    B("bitwise_and", np.bitwise_and, "int", **WRAP),
    B("bitwise_or", np.bitwise_or, "int", **WRAP),
    B("bitwise_xor", np.bitwise_xor, "int", **WRAP),
    B("bitwise_left_shift", np.left_shift, "intonly", bilo=0, bihi=8, ailo=-128, aihi=128, scalar={"int": 3}),
    B("bitwise_right_shift", np.right_shift, "intonly", bilo=0, bihi=8, ailo=-128, aihi=128, scalar={"int": 3}),
]
DEFAULT_SCALAR = {"bool": True, "int": 3, "float": 1.5}


def binary_result_dtype(op, dtype):
    if op.out_bool:
        return "bool"
    if op.domain == "float_promote" and dtype not in FLOATS:
        return "float32"
    return dtype


def gen_b(op, rng, dtype, shape):
    lo, hi, ilo, ihi = op.brange
    b = gen(rng, dtype, shape, lo, hi, ilo, ihi)
    if op.nonzero_b:
        if dtype == "bool":
            b = np.ones(shape, dtype=bool)
        elif dtype in INTS:
            b = np.where(b == 0, 1, b).astype(b.dtype)
        else:
            b = np.where(np.abs(b) < 0.25, 0.5, b).astype(b.dtype)
    return b


@pytest.mark.parametrize("layout", list(BINARY_LAYOUTS))
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", BINARY, ids=repr)
def test_binary(device, op, dtype, layout, rng):
    (sa, la), bspec = BINARY_LAYOUTS[layout]
    alo, ahi, ailo, aihi = op.arange
    a = make(gen(rng, dtype, sa, alo, ahi, ailo, aihi), dtype, device, la)
    if bspec is None:
        scalar = (op.scalar or DEFAULT_SCALAR).get(kind(dtype), DEFAULT_SCALAR[kind(dtype)])
        b = scalar if op.number else ctorch.tensor(scalar, dtype=dt(dtype), device=device)
        b_np = np.asarray(scalar if b is scalar else held(b))
    else:
        sb, lb = bspec
        b = make(gen_b(op, rng, dtype, sb), dtype, device, lb)
        b_np = held(b)
    fn = getattr(ctorch, op.name)
    if op.name == "pow" and dtype == "bool" and layout == "scalar":
        assert_close(fn(a, True), held(a))  # bool ** True is a copy, as in PyTorch
        return
    if not supported(op.domain, dtype):
        exc, msg = op.error or (NotImplementedError, "not implemented for '{}'".format(SCALAR_TYPE[dtype]))
        with pytest.raises(exc, match=msg):
            fn(a, b)
        return
    r = fn(a, b)
    assert r.dtype == dt(binary_result_dtype(op, dtype))
    a_np = held(a)
    if dtype in INTS and not isinstance(b_np, np.ndarray) or (dtype in INTS and b_np.dtype != a_np.dtype):
        b_np = np.asarray(b_np).astype(a_np.dtype)
    if op.domain == "float_promote":
        a_np, b_np = a_np.astype(np.float64), np.asarray(b_np).astype(np.float64)
    with np.errstate(all="ignore"):
        expected = np.asarray(op.oracle(a_np, b_np))
    assert tuple(r.shape) == np.broadcast_shapes(a_np.shape, np.shape(b_np))
    assert_close(r, expected)
    assert_close(getattr(a, op.name)(b), expected)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", [op for op in BINARY if op.inplace], ids=repr)
def test_binary_inplace(device, op, dtype, rng):
    if not supported(op.domain, dtype):
        return
    alo, ahi, ailo, aihi = op.arange
    x = gen(rng, dtype, (3, 4), alo, ahi, ailo, aihi)
    y = gen_b(op, rng, dtype, (4,))
    base = ctorch.tensor(np.ascontiguousarray(x.T), dtype=dt(dtype), device=device)
    t = base.t()
    other = ctorch.tensor(y, dtype=dt(dtype), device=device)
    res_dtype = binary_result_dtype(op, dtype)
    if not ctorch.can_cast(dt(res_dtype), dt(dtype)):
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            getattr(t, op.name + "_")(other)
        return
    with np.errstate(all="ignore"):
        expected = np.asarray(op.oracle(held(t), held(other)))
    if dtype not in FLOATS:
        expected = expected.astype(np_dtype(dtype))
    r = getattr(t, op.name + "_")(other)
    assert r is t and t.dtype == dt(dtype)
    assert_close(base.t(), expected)


# Python operators and their reflected and in-place forms
OPERATORS = [
    ("+", "add"), ("-", "sub"), ("*", "mul"), ("/", "true_divide"), ("//", "floor_divide"), ("%", "remainder"),
    ("**", "pow"), ("&", "bitwise_and"), ("|", "bitwise_or"), ("^", "bitwise_xor"), ("<<", "bitwise_left_shift"),
    (">>", "bitwise_right_shift"), ("==", "eq"), ("!=", "ne"), ("<", "lt"), ("<=", "le"), (">", "gt"), (">=", "ge"),
]


@pytest.mark.parametrize("dtype", ["float32", "int64", "int16", "uint8", "float16"])
@pytest.mark.parametrize("sym,name", OPERATORS, ids=[s for s, _ in OPERATORS])
def test_operators(device, sym, name, dtype, rng):
    op = next(o for o in BINARY if o.name == name)
    if not supported(op.domain, dtype):
        return
    a = ctorch.tensor(gen(rng, dtype, (3, 4), *op.arange), dtype=dt(dtype), device=device)
    b = ctorch.tensor(gen_b(op, rng, dtype, (4,)), dtype=dt(dtype), device=device)
    s = (op.scalar or DEFAULT_SCALAR).get(kind(dtype), DEFAULT_SCALAR[kind(dtype)])
    env = {"a": a, "b": b, "s": s}
    with np.errstate(all="ignore"):
        assert_close(eval("a {} b".format(sym), env), op.oracle(held(a), held(b)))
        sa = np.asarray(s).astype(held(a).dtype)
        assert_close(eval("a {} s".format(sym), env), op.oracle(held(a), sa))
        if name not in ("pow", "floor_divide", "remainder", "true_divide", "bitwise_left_shift",
                        "bitwise_right_shift"):  # reflected with a divisor/exponent tensor: covered below
            assert_close(eval("s {} a".format(sym), env), op.oracle(sa, held(a)))
    if op.out_bool:
        return
    c = a.clone()
    res = binary_result_dtype(op, dtype)
    if ctorch.can_cast(dt(res), dt(dtype)):
        exec("c {}= b".format(sym), {"c": c, "b": b})
        with np.errstate(all="ignore"):
            expected = np.asarray(op.oracle(held(a), held(b)))
        if dtype not in FLOATS:
            expected = expected.astype(np_dtype(dtype))
        assert_close(c, expected)


def test_reflected_operators(device):
    a = ctorch.tensor([1, 2, 4], device=device)
    assert_close(2 - a, np.array([1, 0, -2]))
    assert_close(12 // a, np.array([12, 6, 3]))
    assert_close(7 % a, np.array([0, 1, 3]))
    assert_close(2 ** a, np.array([2, 4, 16]))
    assert_close(1 << a, np.array([2, 4, 16]))
    assert_close(64 >> a, np.array([32, 16, 4]))
    assert_close(1 / a, np.array([1, 0.5, 0.25]))
    assert_close(2.5 ** a, 2.5 ** np.array([1.0, 2, 4]))
    f = ctorch.tensor([1.0, -2.0], device=device)
    assert_close(-f, np.array([-1.0, 2.0]))
    assert_close(abs(f), np.array([1.0, 2.0]))
    assert +f is f
    assert_close(~ctorch.tensor([0, 5], device=device), np.array([-1, -6]))
    assert_close(~ctorch.tensor([True, False], device=device), np.array([False, True]))
    # NumPy scalars are Python numbers here, on either side
    r = np.float32(2) * f
    assert isinstance(r, ctorch.Tensor) and r.dtype == ctorch.float32
    assert_close(r, np.array([2.0, -4.0]))
    assert (f + np.int64(1)).dtype == ctorch.float32
    assert (a * np.float64(0.5)).dtype == ctorch.float32


def test_operator_type_errors(device):
    a = ctorch.tensor([1, 2], device=device)
    f = ctorch.tensor([1.0], device=device)
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+: 'ctorch.Tensor' and 'str'|Tensor"):
        a + "x"
    with pytest.raises(TypeError):
        a + None
    with pytest.raises(TypeError):
        a + [1, 2]
    with pytest.raises(TypeError):
        a < None
    assert (a == None) is False  # noqa: E711
    assert (a != "x") is True
    with pytest.raises(TypeError, match="~ \\(operator.invert\\) is only implemented on integer and Boolean-type"):
        ~f
    with pytest.raises(TypeError):
        pow(a, 2, 3)
    with pytest.raises(TypeError, match=r"maximum\(\): argument 'other' \(position 2\) must be Tensor, not int"):
        ctorch.maximum(a, 2)
    with pytest.raises(TypeError, match=r"^maximum\(\): argument 'other' \(position 1\) must be Tensor, not int$"):
        a.maximum(2)  # a method counts positions after self
    with pytest.raises(TypeError, match=r"^atan2_\(\): argument 'other' \(position 1\) must be Tensor, not float$"):
        a.clone().atan2_(2.0)
    with pytest.raises(TypeError, match=r"exp\(\): argument 'input' \(position 1\) must be Tensor, not float"):
        ctorch.exp(2.0)
    with pytest.raises(TypeError):
        ctorch.eq(3, a)
    with pytest.raises(TypeError):
        ctorch.logical_and(a, 3)


# --- mixed dtypes, scalars and promotion in values -------------------------------------------------------------
MIXED = [("int32", "float64"), ("uint8", "int8"), ("float16", "float32"), ("bool", "float32"), ("int64", "bool"),
         ("bfloat16", "float16"), ("int8", "float16"), ("uint8", "int64")]


@pytest.mark.parametrize("da,db", MIXED, ids=["{}-{}".format(a, b) for a, b in MIXED])
def test_mixed_dtypes(device, da, db, rng):
    a = ctorch.tensor(gen(rng, da, (3, 4)), dtype=dt(da), device=device)
    b = ctorch.tensor(gen(rng, db, (4,)), dtype=dt(db), device=device)
    res = ctorch.promote_types(dt(da), dt(db))
    for op in ("add", "mul", "maximum", "eq"):
        r = getattr(ctorch, op)(a, b)
        assert r.dtype == (ctorch.bool if op == "eq" else res)
        f = {"add": np.add, "mul": np.multiply, "maximum": np.maximum, "eq": np.equal}[op]
        ea, eb = held(a), held(b)
        if res not in (ctorch.float16, ctorch.bfloat16, ctorch.float32, ctorch.float64):
            npres = np.dtype(str(res).replace("torch.", ""))
            ea, eb = ea.astype(npres), eb.astype(npres)
        assert_close(r, f(ea, eb))
    r = a / b if db != "bool" else a / (b + 1)
    assert r.dtype in (ctorch.float32, ctorch.float64, ctorch.float16, ctorch.bfloat16)


def test_scalar_promotion_values(device):
    i32 = ctorch.tensor([3, -7], dtype=ctorch.int32, device=device)
    r = i32 + 5
    assert r.dtype == ctorch.int32
    assert_close(r, np.array([8, -2]))
    r = i32 + 2.5
    assert r.dtype == ctorch.float32
    assert_close(r, np.array([5.5, -4.5]))
    h = ctorch.tensor([1.5, -2.5], dtype=ctorch.float16, device=device)
    assert (h + 1.0).dtype == ctorch.float16
    assert (h * ctorch.tensor(2.0, dtype=ctorch.float64)).dtype == ctorch.float16
    u8 = ctorch.tensor([1, 200], dtype=ctorch.uint8, device=device)
    assert_close(u8 + (-1), np.array([0, 199], dtype=np.uint8))  # the scalar wraps into uint8
    assert_close(u8 + 300, np.array([45, 244], dtype=np.uint8))
    assert_close(u8 < -1, np.array([True, True]))
    i8 = ctorch.tensor([1, -3], dtype=ctorch.int8, device=device)
    r = u8 + i8
    assert r.dtype == ctorch.int16
    assert_close(r, np.array([2, 197]))
    r = i32 + ctorch.tensor(2 ** 40)  # a 0-d int64 does not promote an int32 tensor
    assert r.dtype == ctorch.int32
    assert (i32 + ctorch.tensor(2.5, dtype=ctorch.float64)).dtype == ctorch.float64
    assert (ctorch.tensor([True], device=device) + 5).dtype == ctorch.int64
    assert ctorch.add(2, 3).dtype == ctorch.int64 and ctorch.add(2, 3).item() == 5
    assert ctorch.add(2, 3.5).dtype == ctorch.float32


# --- NaN, zero division, bool rules ------------------------------------------------------------------------------
def test_nan_semantics(device):
    nan = float("nan")
    a = ctorch.tensor([nan, 1.0, nan, -0.5], device=device)
    b = ctorch.tensor([1.0, nan, nan, 2.0], device=device)
    assert_close(ctorch.maximum(a, b), np.array([nan, nan, nan, 2.0]))
    assert_close(ctorch.minimum(a, b), np.array([nan, nan, nan, -0.5]))
    assert_close(ctorch.fmax(a, b), np.array([1.0, 1.0, nan, 2.0]))
    assert_close(ctorch.fmin(a, b), np.array([1.0, 1.0, nan, -0.5]))
    assert_close(ctorch.clamp(a, 0, 0.5), np.array([nan, 0.5, nan, 0.0]))
    assert_close(ctorch.clamp(b, min=nan), np.array([nan] * 4))
    assert_close(ctorch.clamp(b, min=ctorch.tensor([nan, 0.0, 0.0, 3.0], device=device)), np.array([nan, nan, nan, 3.0]))
    assert_close(ctorch.relu(ctorch.tensor([nan, -1.0, 2.0])), np.array([nan, 0.0, 2.0]))
    assert_close(ctorch.sign(ctorch.tensor([nan, -0.0, 3.0])), np.array([0.0, 0.0, 1.0]))
    assert_close(ctorch.nan_to_num(ctorch.tensor([nan, float("inf"), -float("inf"), 1.0])),
                 np.array([0.0, np.finfo(np.float32).max, -np.finfo(np.float32).max, 1.0]))
    h = ctorch.nan_to_num(ctorch.tensor([nan, float("inf"), -float("inf")], dtype=ctorch.float16))
    assert_close(h, np.array([0.0, 65504.0, -65504.0]))
    r = ctorch.nan_to_num(ctorch.tensor([nan, float("inf"), -float("inf")], dtype=ctorch.float64), nan=1.0, posinf=2,
                          neginf=-3)
    assert_close(r, np.array([1.0, 2.0, -3.0]))
    i = ctorch.tensor([3, -7], device=device)
    assert_close(ctorch.nan_to_num(i, nan=1.5), np.array([3, -7]))
    assert_close(ctorch.logaddexp(ctorch.tensor([float("inf"), -float("inf")]), ctorch.tensor([float("inf"), -float("inf")])),
                 np.array([np.inf, -np.inf]))


def test_float_division_semantics(device):
    a = ctorch.tensor([5.0, -5.0, 5.0, 0.0, -2.5, 2.5], device=device)
    b = ctorch.tensor([0.0, 0.0, -2.0, 0.0, float("inf"), -float("inf")], device=device)
    with np.errstate(all="ignore"):
        assert_close(a // b, np.floor_divide(to_numpy(a), to_numpy(b)))
        assert_close(a % b, np.remainder(to_numpy(a), to_numpy(b)))
        assert_close(ctorch.fmod(a, b), np.fmod(to_numpy(a), to_numpy(b)))
    assert_close(a / 0, np.array([np.inf, -np.inf, np.inf, np.nan, -np.inf, np.inf]))
    assert_close(ctorch.div(a, 2, rounding_mode="trunc"), np.trunc(to_numpy(a) / 2))
    assert_close(ctorch.div(a, 2, rounding_mode="floor"), np.floor(to_numpy(a) / 2))
    assert_close(ctorch.tensor([-0.0], device=device) % 2.0, np.array([-0.0]))


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_division_by_zero(device, dtype):
    a = ctorch.tensor([5, 3], dtype=dt(dtype), device=device)
    z = ctorch.tensor([1, 0], dtype=dt(dtype), device=device)
    for f in (lambda: a // 0, lambda: a % 0, lambda: ctorch.fmod(a, 0), lambda: a // z, lambda: a % z,
              lambda: ctorch.remainder(a, z), lambda: ctorch.floor_divide(a, z),
              lambda: ctorch.div(a, z, rounding_mode="trunc"), lambda: ctorch.div(a, 0, rounding_mode="floor"),
              lambda: a.clone().floor_divide_(z), lambda: 2 // z, lambda: 2 % z):
        if device == "cpu":
            with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
                f()
        else:  # as PyTorch on CUDA: no error, the quotient by zero is unspecified (and nothing traps)
            f()
    if device != "cpu":
        assert to_numpy(a // z)[0] == 5 and to_numpy(a % z)[0] == 0
    assert_close(a / 0, np.array([np.inf, np.inf]))  # true division promotes to float


def test_integer_division_edge_cases(device):
    big = ctorch.tensor([-2 ** 63, 7, -7], device=device)
    m1 = ctorch.tensor([-1, -2, 2], device=device)
    assert_close(big // m1, np.array([-2 ** 63, -4, -4]))
    assert_close(big % m1, np.array([0, -1, 1]))
    assert_close(ctorch.fmod(big, m1), np.array([0, 1, -1]))
    assert_close(ctorch.div(big, m1, rounding_mode="trunc"), np.array([-2 ** 63, -3, -3]))
    i8 = ctorch.tensor([-128, 100], dtype=ctorch.int8, device=device)
    assert_close(i8 // ctorch.tensor([-1, -1], dtype=ctorch.int8, device=device), np.array([-128, -100], dtype=np.int8))
    assert_close(ctorch.abs(i8), np.array([-128, 100], dtype=np.int8))
    u8 = ctorch.tensor([200, 7], dtype=ctorch.uint8, device=device)
    assert_close(u8 // ctorch.tensor([255, 2], dtype=ctorch.uint8, device=device), np.array([0, 3], dtype=np.uint8))
    assert_close(u8 % 255, np.array([200, 7], dtype=np.uint8))
    assert_close(-u8, np.array([56, 249], dtype=np.uint8))


def test_integer_pow(device):
    i = ctorch.tensor([3, -7, 1, -1, 0, 2], device=device)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed."):
        i ** -1
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed."):
        ctorch.pow(i, -2)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed."):
        ctorch.pow(ctorch.tensor([True]), -1)
    assert_close(i ** ctorch.tensor([-1, -1, -1, -3, 0, -2], device=device), np.array([0, 0, 1, -1, 1, 0]))
    with np.errstate(divide="ignore"):
        assert_close(i ** -1.0, 1.0 / np.array([3, -7, 1, -1, 0, 2], dtype=np.float32))
    assert_close(ctorch.tensor([3], dtype=ctorch.int8) ** 5, np.array([-13], dtype=np.int8))
    assert_close(ctorch.tensor([2]) ** 63, np.array([-2 ** 63]))
    assert_close(ctorch.tensor([2]) ** 64, np.array([0]))
    assert_close(ctorch.pow(2, ctorch.tensor([3, -3])), np.array([8, 0]))
    assert ctorch.pow(ctorch.tensor([1, 2]), 2.5).dtype == ctorch.float32
    assert ctorch.float_power(ctorch.tensor([2]), 2).dtype == ctorch.float64
    with pytest.raises(RuntimeError, match="the base given to float_power_ has dtype Float but the operation's result "
                                           "requires dtype Double"):
        ctorch.tensor([1.0]).float_power_(2)


def test_pow_scalar_special_cases(device):
    # PyTorch computes x ** 0.5 as sqrt(x), x ** -0.5 as rsqrt(x), x ** 3 as x * x * x, ...
    x = ctorch.tensor([-0.0, -np.inf, 4.0, np.nan], device=device)
    r = x ** 0.5
    assert_close(r, np.array([-0.0, np.nan, 2.0, np.nan]))
    assert np.signbit(to_numpy(r)[0])
    assert_close(x ** -0.5, np.array([-np.inf, np.nan, 0.5, np.nan]))
    assert_close(x ** -1, np.array([-np.inf, -0.0, 0.25, np.nan]))
    assert_close(x ** 3, np.array([-0.0, -np.inf, 64.0, np.nan]))
    assert_close(x ** -2, np.array([np.inf, 0.0, 1 / 16, np.nan]))
    assert_close(x ** 0, np.array([1.0, 1.0, 1.0, 1.0]))
    assert_close(ctorch.float_power(x, -0.5), np.array([-np.inf, np.nan, 0.5, np.nan]))
    b = ctorch.tensor([True, False], device=device)
    assert (b ** True).dtype == ctorch.bool
    assert_close(b ** True, np.array([True, False]))
    assert_close(b ** False, np.array([True, True]))
    assert_close(b ** 0, np.array([1, 1]))
    assert_close(ctorch.tensor([3, -2], device=device) ** 3, np.array([27, -8]))


def test_float16_rounding_rules(device):
    # mixed inputs are rounded to the compute dtype first: int32 2**31-1 is inf in float16
    i = ctorch.tensor([2 ** 31 - 1, 32767], dtype=ctorch.int32, device=device)
    h = ctorch.tensor([0.0, -2.5], dtype=ctorch.float16, device=device)
    assert_close(i * h, np.array([np.nan, -np.inf]))  # 32768 * -2.5 overflows float16
    assert_close(ctorch.fmod(i, h), np.array([np.nan, 0.5]))
    # an out= of a wider dtype receives the float16-rounded result
    out = ctorch.tensor([0.0, 0.0], device=device)
    ctorch.add(h, ctorch.tensor([1e-4, 1e-4], dtype=ctorch.float16, device=device), out=out)
    assert to_numpy(out)[0] == np.float32(np.float16(1e-4))
    # ... also when the float sum is not a float16 (bfloat16) value: 1 + 2**-12 rounds to 1 in both
    for half in (ctorch.float16, ctorch.bfloat16):
        one = ctorch.tensor([1.0, -2.0], dtype=half, device=device)
        tiny = ctorch.tensor([2.0 ** -12, 2.0 ** -12], dtype=half, device=device)
        for out_dtype in (ctorch.float32, ctorch.float64):
            out = ctorch.zeros(2, dtype=out_dtype, device=device)
            ctorch.add(one, tiny, out=out)
            assert to_numpy(out).tolist() == [1.0, -2.0], (half, out_dtype)
            assert to_numpy(ctorch.mul(one, tiny, out=out)).tolist() == [2.0 ** -12, -2.0 ** -11]
    # mul and div take a Python number unrounded (float16 * 0.3 is float16(float(x) * 0.3f)), add rounds it
    v = np.linspace(-3, 3, 101).astype(np.float16)
    hv = ctorch.tensor(v, device=device)
    assert np.array_equal(to_numpy(hv * 0.3), (v.astype(np.float32) * np.float32(0.3)).astype(np.float16))
    assert np.array_equal(to_numpy(hv / 0.3), (v.astype(np.float32) / np.float32(0.3)).astype(np.float16))
    assert np.array_equal(to_numpy(hv + 0.3),
                          (v.astype(np.float32) + np.float32(np.float16(0.3))).astype(np.float16))


def test_shift_semantics(device):
    i8 = ctorch.tensor([1, 2, 3, -128], dtype=ctorch.int8, device=device)
    amounts = ctorch.tensor([7, -1, 8, 7], dtype=ctorch.int8, device=device)
    assert_close(i8 << amounts, np.array([-128, 0, 0, 0], dtype=np.int8))
    assert_close(i8 >> amounts, np.array([0, 0, 0, -1], dtype=np.int8))
    i = ctorch.tensor([3, -7], device=device)
    assert_close(ctorch.bitwise_left_shift(i, 70), np.array([0, 0]))
    assert_close(ctorch.bitwise_right_shift(i, 70), np.array([0, -1]))
    assert_close(ctorch.bitwise_right_shift(ctorch.tensor([200], dtype=ctorch.uint8), 8), np.array([0], dtype=np.uint8))
    with pytest.raises(NotImplementedError, match="\"lshift_cpu\" not implemented for 'Float'"):
        ctorch.tensor([1.0]) << 1
    with pytest.raises(NotImplementedError, match="\"lshift_cpu\" not implemented for 'Bool'"):
        ctorch.tensor([True]) << ctorch.tensor([True])


def test_bool_rules(device):
    t = ctorch.tensor([True, False], device=device)
    assert_close(t + t, np.array([True, False]))
    assert (t + t).dtype == ctorch.bool
    assert_close(t * t, np.array([True, False]))
    assert_close(ctorch.add(t, t, alpha=2), np.array([True, False]))
    assert (t / t).dtype == ctorch.float32
    assert (t + 1).dtype == ctorch.int64
    with pytest.raises(NotImplementedError, match="Subtraction, the `-` operator, with two bool tensors is not "
                                                   "supported. Use the `\\^` or `logical_xor\\(\\)` operator instead."):
        t - t
    with pytest.raises(NotImplementedError, match="Subtraction, the `-` operator, with a bool tensor is not supported. "
                                                   "If you are trying to invert a mask, use the `~` or "
                                                   "`logical_not\\(\\)` operator instead."):
        ctorch.tensor([1, 2], device=device) - t
    with pytest.raises(NotImplementedError, match="Negation, the `-` operator, on a bool tensor is not supported."):
        -t
    with pytest.raises(NotImplementedError, match=f"\"abs_{device}\" not implemented for 'Bool'"):
        abs(t)
    with pytest.raises(NotImplementedError, match="The `\\+` operator, on a bool tensor is not supported."):
        +t
    with pytest.raises(NotImplementedError, match=f"\"div_floor_{device}\" not implemented for 'Bool'"):
        t // t
    with pytest.raises(NotImplementedError, match="\"pow\" not implemented for 'Bool'"):
        t ** t
    assert_close(t ** 2, np.array([1, 0]))
    assert_close(ctorch.square(t), np.array([1, 0]))
    assert_close(t & True, np.array([True, False]))
    assert (t & 1).dtype == ctorch.int64


def test_alpha(device):
    a = ctorch.tensor([1.0, 2.0], device=device)
    b = ctorch.tensor([3.0, 4.0], device=device)
    assert_close(ctorch.add(a, b, alpha=2), np.array([7.0, 10.0]))
    assert_close(ctorch.sub(a, b, alpha=0.5), np.array([-0.5, 0.0]))
    assert_close(a.add(b, alpha=-1), np.array([-2.0, -2.0]))
    c = a.clone()
    assert c.sub_(b, alpha=2) is c
    assert_close(c, np.array([-5.0, -6.0]))
    i = ctorch.tensor([1, 2], device=device)
    assert_close(ctorch.add(i, 1, alpha=2), np.array([3, 4]))
    assert_close(ctorch.rsub(i, 1), np.array([0, -1]))
    assert_close(ctorch.rsub(i, 10, alpha=2), np.array([8, 6]))
    with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must not be a floating point"):
        ctorch.add(i, i, alpha=2.5)
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results."):
        ctorch.add(a, 2, alpha=True)
    with pytest.raises(TypeError):
        ctorch.add(a, b, alpha=None)
    # a 0-d tensor is a Number (read with item(), wherever it lives), a 1-d one is not
    assert_close(ctorch.add(a, b, alpha=ctorch.tensor(2, device=device)), np.array([7.0, 10.0]))
    assert_close(ctorch.addcmul(a, a, b, value=ctorch.tensor(0.5, device=device)), np.array([2.5, 6.0]))
    with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must not be a floating point"):
        ctorch.add(i, i, alpha=ctorch.tensor(2.5, device=device))
    with pytest.raises(TypeError, match="add\\(\\): argument 'alpha' must be Number, not Tensor"):
        ctorch.add(a, b, alpha=ctorch.tensor([2], device=device))
    with pytest.raises(TypeError):
        ctorch.add(a, b, 2)


# --- ternary ops, clamp, where ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "broadcast", "scalars", "transposed"])
def test_where(device, dtype, layout, rng):
    cond = gen(rng, "bool", (3, 4))
    x = gen(rng, dtype, (3, 4))
    y = gen(rng, dtype, (4,) if layout == "broadcast" else (3, 4))
    tc = make(cond, "bool", device, "transposed" if layout == "transposed" else "contiguous")
    tx = make(x, dtype, device, "transposed" if layout == "transposed" else "contiguous")
    if layout == "scalars":
        sx, sy = DEFAULT_SCALAR[kind(dtype)], DEFAULT_SCALAR[kind(dtype)] * 0
        r = ctorch.where(tc, sx, tx)
        assert r.dtype == dt(dtype)
        assert_close(r, np.where(cond, np.asarray(sx).astype(held(tx).dtype), held(tx)))
        r = ctorch.where(tc, sx, sy)
        assert_close(r, np.where(cond, sx, sy))
        return
    ty = make(y, dtype, device, "contiguous")
    r = ctorch.where(tc, tx, ty)
    assert r.dtype == dt(dtype)
    assert_close(r, np.where(cond, held(tx), held(ty)))
    assert_close(tx.where(tc, ty), np.where(cond, held(tx), held(ty)))


def test_where_rules(device):
    b = ctorch.tensor([True, False], device=device)
    i32 = ctorch.tensor([3, -7], dtype=ctorch.int32, device=device)
    f = ctorch.tensor([1.5, -2.5], device=device)
    assert ctorch.where(b, i32, f).dtype == ctorch.float32
    assert ctorch.where(b, i32, 2).dtype == ctorch.int32
    assert ctorch.where(b, 1, 2.5).dtype == ctorch.float32
    assert ctorch.where(b, 1, 2).dtype == ctorch.int64
    assert ctorch.where(b, True, False).dtype == ctorch.bool
    assert_close(ctorch.where(b, ctorch.tensor([1, 200], dtype=ctorch.uint8, device=device), -1),
                 np.array([1, 255], dtype=np.uint8))
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor, but got a tensor with "
                                           "dtype Float"):
        ctorch.where(f, f, f)
    with pytest.raises(RuntimeError, match="The size of tensor a \\(2\\) must match the size of tensor b \\(3\\) at "
                                           "non-singleton dimension 0"):
        ctorch.where(b, f, ctorch.tensor([1.0, 2.0, 3.0], device=device))
    with pytest.raises(TypeError):
        ctorch.where(True, f, f)


def test_where_uint8_condition_and_checked_scalars(device):
    u8 = ctorch.tensor([1, 0, 2], dtype=ctorch.uint8, device=device)
    with pytest.warns(UserWarning, match="where received a uint8 condition tensor"):
        r = ctorch.where(u8, 1.0, 0.0)  # deprecated in PyTorch but still accepted: nonzero selects
    assert r.tolist() == [1.0, 0.0, 1.0]
    b = ctorch.tensor([True, False], device=device)
    i8 = ctorch.tensor([1, 2], dtype=ctorch.int8, device=device)
    with pytest.raises(RuntimeError, match=r"^value cannot be converted to type int8_t without overflow$"):
        ctorch.where(b, i8, 300)  # the number must fit the result dtype
    with pytest.raises(RuntimeError, match=r"^value cannot be converted to type float without overflow$"):
        ctorch.where(b, i8, 1e39)
    h = ctorch.zeros(2, dtype=ctorch.float16, device=device)
    assert ctorch.where(b, h, 1e20).tolist() == [0.0, float("inf")]  # 16-bit floats round to inf


CLAMP_CASES = ["scalars", "min_only", "max_only", "tensors", "tensor_min_scalar_max", "swapped"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("case", CLAMP_CASES)
def test_clamp(device, dtype, case, rng):
    x = gen(rng, dtype, (3, 4), -3, 3, -5, 6)
    t = make(x, dtype, device, "transposed")
    lo_t = make(gen(rng, dtype, (4,), -2, 0, -3, 1), dtype, device, "contiguous")
    hi_t = make(gen(rng, dtype, (3, 1), 0, 2, 0, 3), dtype, device, "contiguous")
    lo_s, hi_s = (-1, 2) if dtype not in ("bool", "uint8") else (1, 2) if dtype == "uint8" else (False, True)
    kw = {"scalars": dict(min=lo_s, max=hi_s), "min_only": dict(min=lo_s), "max_only": dict(max=hi_s),
          "tensors": dict(min=lo_t, max=hi_t), "tensor_min_scalar_max": dict(min=lo_t, max=hi_s),
          "swapped": dict(min=hi_s, max=lo_s)}[case]
    bool_ok = dtype == "bool" and case in ("min_only", "max_only") and False
    if dtype == "bool" and not bool_ok:
        with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
            ctorch.clamp(t, **kw)
        return
    v = held(t)
    lo = kw.get("min")
    hi = kw.get("max")
    lo = held(lo) if isinstance(lo, ctorch.Tensor) else lo
    hi = held(hi) if isinstance(hi, ctorch.Tensor) else hi
    expected = v
    if lo is not None:
        expected = np.maximum(expected, lo)
    if hi is not None:
        expected = np.minimum(expected, hi)
    r = ctorch.clamp(t, **kw)
    assert r.dtype == dt(dtype)
    assert_close(r, expected.astype(v.dtype))
    assert_close(t.clip(**kw), expected.astype(v.dtype))
    c = t.clone()
    assert c.clamp_(**kw) is c
    assert_close(c, expected.astype(v.dtype))
    if case == "min_only":
        assert_close(ctorch.clamp_min(t, lo_s), expected.astype(v.dtype))
    if case == "max_only":
        assert_close(t.clamp_max(hi_s), expected.astype(v.dtype))


def test_clamp_rules(device):
    i = ctorch.tensor([3, -7], device=device)
    i32 = ctorch.tensor([3, -7], dtype=ctorch.int32, device=device)
    f = ctorch.tensor([1.5, -2.5], device=device)
    assert ctorch.clamp(i, min=0.5).dtype == ctorch.float32
    assert_close(ctorch.clamp(i, min=0.5), np.array([3.0, 0.5]))
    assert ctorch.clamp(i32, min=2).dtype == ctorch.int32
    assert ctorch.clamp(i, min=f.double()).dtype == ctorch.float64
    assert ctorch.clamp(ctorch.tensor([True, False]), min=0).dtype == ctorch.int64
    assert_close(ctorch.clamp(f, max=3, min=5), np.array([3.0, 3.0]))
    assert_close(ctorch.clamp(ctorch.tensor([True, False]), min=ctorch.tensor([False, False])), np.array([True, False]))
    with pytest.raises(RuntimeError, match="torch.clamp: At least one of 'min' or 'max' must not be None"):
        ctorch.clamp(f)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type"):
        i.clone().clamp_(0.5)
    with pytest.raises(NotImplementedError, match="\"clamp_max_scalar_cpu\" not implemented for 'Bool'"):
        ctorch.clamp_max(ctorch.tensor([True]), True)
    with pytest.raises(TypeError):
        ctorch.clamp(f, "a")
    # integer bounds given as Python numbers saturate to the dtype's range, or are refused
    u8 = ctorch.tensor([1, 200], dtype=ctorch.uint8, device=device)
    assert_close(ctorch.clamp(u8, min=-1), np.array([1, 200], dtype=np.uint8))
    assert_close(ctorch.clamp(u8, -1, 2), np.array([1, 2], dtype=np.uint8))
    assert_close(ctorch.clamp(u8, max=300), np.array([1, 200], dtype=np.uint8))
    assert_close(ctorch.clamp(u8, min=ctorch.tensor(-1)), np.array([255, 255], dtype=np.uint8))  # a tensor wraps
    with pytest.raises(RuntimeError, match="Clamp max value -1 is outside the representable range of Byte"):
        ctorch.clamp(u8, max=-1)
    with pytest.raises(RuntimeError, match="Clamp min value 300 is outside the representable range of Char"):
        ctorch.clamp(ctorch.tensor([1], dtype=ctorch.int8), min=300)
    with pytest.raises(RuntimeError, match="value cannot be converted to type c10::Half without overflow"):
        ctorch.clamp(ctorch.tensor([1.0], dtype=ctorch.float16), max=1e6)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + ["int64"])
@pytest.mark.parametrize("weight", ["scalar", "tensor", "zero_d"])
def test_lerp(device, dtype, weight, rng):
    s = gen(rng, dtype, (3, 4))
    e = gen(rng, dtype, (4,))
    ts = make(s, dtype, device, "sliced")
    te = make(e, dtype, device, "contiguous")
    w = {"scalar": 0.3, "tensor": make(gen(rng, dtype, (3, 4), 0, 1), dtype, device, "transposed"),
         "zero_d": ctorch.tensor(0.75, dtype=ctorch.float64)}[weight]
    if dtype == "int64":
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            ctorch.lerp(ts, te, w)
        return
    wv = w if weight == "scalar" else held(w)
    r = ctorch.lerp(ts, te, w)
    assert r.dtype == dt(dtype)
    assert_close(r, held(ts) + wv * (held(te) - held(ts)))
    c = ts.clone()
    assert c.lerp_(te, w) is c
    assert_close(c, held(ts) + wv * (held(te) - held(ts)))


def test_lerp_rules(device):
    f = ctorch.tensor([1.5, -2.5], device=device)
    with pytest.raises(RuntimeError, match="expected dtype float for `end` but got dtype double"):
        ctorch.lerp(f, f.double(), 0.5)
    with pytest.raises(RuntimeError, match="expected dtype float for `weight` but got dtype double"):
        ctorch.lerp(f, f, f.double())
    with pytest.raises(RuntimeError, match="expected dtype c10::Half for `end` but got dtype float"):
        ctorch.lerp(f.half(), f, 0.5)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_addcdiv(device, dtype, name, rng):
    a = make(gen(rng, dtype, (3, 4)), dtype, device, "transposed")
    t1 = make(gen(rng, dtype, (4,)), dtype, device, "contiguous")
    t2v = gen(rng, dtype, (3, 1), 0.5, 2.0, 1, 4)
    t2 = make(t2v, dtype, device, "contiguous")
    fn = getattr(ctorch, name)
    if dtype == "bool" and name == "addcmul":
        kernel = {"cpu": "addcmul_cpu_out", "cuda": "addcmul_cuda"}[device]
        with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for 'Bool'"):
            fn(a, t1, t2)
        return
    if dtype not in FLOATS and name == "addcdiv":
        with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
            fn(a, t1, t2)
        return
    value = 2 if dtype not in FLOATS else 0.5
    with np.errstate(all="ignore"):
        if name == "addcmul":
            expected = held(a) + value * held(t1) * held(t2)
        else:
            expected = held(a) + value * held(t1) / held(t2)
    if dtype not in FLOATS:
        expected = expected.astype(np_dtype(dtype))
    r = fn(a, t1, t2, value=value)
    assert r.dtype == dt(dtype)
    assert_close(r, expected)
    c = a.clone()
    assert getattr(c, name + "_")(t1, t2, value=value) is c
    assert_close(c, expected)


def test_addc_value_and_promotion(device):
    i = ctorch.tensor([3, -7], device=device)
    assert_close(ctorch.addcmul(i, i, i, value=2.5), np.array([21, 91]))  # value truncates for ints
    f = ctorch.tensor([1.5, -2.5], device=device)
    assert ctorch.addcmul(f, i, i, value=2).dtype == ctorch.float32
    assert_close(ctorch.addcdiv(f, f, i), np.array([1.5 + 1.5 / 3, -2.5 + 2.5 / 7]))


# --- functions with extra arguments ---------------------------------------------------------------------------
def test_round_decimals(device):
    x = ctorch.tensor([0.5, 1.5, 2.5, -0.5, 1.25, 1.35, 1234.5678], device=device)
    assert_close(ctorch.round(x), np.round(to_numpy(x)))
    assert_close(ctorch.round(x, decimals=1), np.round(to_numpy(x), 1))
    assert_close(x.round(decimals=-2), np.array([0.0, 0.0, 0.0, -0.0, 0.0, 0.0, 1200.0]))
    c = x.clone()
    assert c.round_(decimals=2) is c
    assert_close(c, np.round(to_numpy(x), 2))
    with pytest.raises(NotImplementedError, match="\"round_cpu\" not implemented for 'Long'"):
        ctorch.round(ctorch.tensor([1, 2]), decimals=1)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_activations(device, dtype, rng):
    x = make(gen(rng, dtype, (3, 4), -4, 4), dtype, device, "transposed")
    v = held(x)
    assert_close(ctorch.gelu(x, approximate="tanh"), _gelu_tanh(v))
    assert_close(ctorch.softplus(x), np.log1p(np.exp(v)))
    assert_close(ctorch.softplus(x, beta=2, threshold=1), np.where(2 * v > 1, v, np.log1p(np.exp(2 * v)) / 2))
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh."):
        ctorch.gelu(x, approximate="x")
    with pytest.raises(NotImplementedError, match="\"GeluKernelImpl\" not implemented for 'Long'"):
        ctorch.gelu(ctorch.tensor([1, 2]))
    assert_close(ctorch.sigmoid(ctorch.tensor([-1000.0, 1000.0])), np.array([0.0, 1.0]))


def test_div_rounding_mode(device):
    i = ctorch.tensor([7, -7], device=device)
    assert ctorch.div(i, 2).dtype == ctorch.float32
    assert_close(ctorch.div(i, 2, rounding_mode="trunc"), np.array([3, -3]))
    assert_close(ctorch.divide(i, 2, rounding_mode="floor"), np.array([3, -4]))
    assert_close(i.div(2.5, rounding_mode="floor"), np.array([2.0, -3.0]))
    c = i.clone()
    assert c.div_(2, rounding_mode="floor") is c
    assert_close(c, np.array([3, -4]))
    with pytest.raises(RuntimeError, match="div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                                           "found 'bad'"):
        ctorch.div(i, 2, rounding_mode="bad")
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.clone().div_(2)


def test_aliases(device):
    a = ctorch.tensor([1.0, 2.0, 3.0], device=device)
    b = ctorch.tensor([2.0, 2.0, 2.0], device=device)
    pairs = [("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"), ("less_equal", "le"), ("not_equal", "ne"),
             ("multiply", "mul"), ("subtract", "sub"), ("divide", "div"), ("arctan2", "atan2")]
    for alias, name in pairs:
        assert_close(getattr(ctorch, alias)(a, b), to_numpy(getattr(ctorch, name)(a, b)))
        assert_close(getattr(a, alias)(b), to_numpy(getattr(a, name)(b)))
    for alias, name in [("negative", "neg"), ("absolute", "abs"), ("arcsin", "asin"), ("arccos", "acos"),
                        ("arctan", "atan"), ("fix", "trunc"), ("sgn", "sign"), ("arcsinh", "asinh")]:
        x = a / 4
        assert_close(getattr(ctorch, alias)(x), to_numpy(getattr(ctorch, name)(x)))
    assert ctorch.positive(a) is a


# --- shapes, layouts, memory -------------------------------------------------------------------------------------
def test_broadcast_errors(device):
    a = ctorch.tensor(np.ones((2, 3), np.float32), device=device)
    b = ctorch.tensor(np.ones(4, np.float32), device=device)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\) at "
                                           r"non-singleton dimension 1"):
        a + b
    c = ctorch.tensor(np.ones((3, 2), np.float32), device=device)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(2\) at "
                                           r"non-singleton dimension 1"):
        a.add_(c)
    d = ctorch.tensor(np.ones((2, 1), np.float32), device=device)
    with pytest.raises(RuntimeError, match=r"output with shape \[2, 1\] doesn't match the broadcast shape \[2, 3\]"):
        d += a


def test_overlap_errors(device):
    x = ctorch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    x.add_(x)
    assert_close(x, np.array([[2.0, 4.0], [6.0, 8.0]]))
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor refer to a "
                                           "single memory location"):
        x.add_(x.t())
    y = ctorch.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    with pytest.raises(RuntimeError, match="some elements of the input tensor"):
        y.narrow(0, 1, 3).add_(y.narrow(0, 0, 3))
    with pytest.raises(RuntimeError, match="some elements of the input tensor"):
        y.add_(y.select(0, 0))
    y.narrow(0, 0, 2).add_(y.narrow(0, 2, 2))  # disjoint halves are fine
    assert_close(y, np.array([4.0, 6.0, 3.0, 4.0]))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory "
                                           "location"):
        y.expand(2, 4).add_(1)


def test_out_argument(device, recwarn):
    a = ctorch.tensor([1.0, 2.0], device=device)
    out = ctorch.tensor([0.0, 0.0], device=device)
    r = ctorch.add(a, a, out=out)
    assert r is out
    assert_close(out, np.array([2.0, 4.0]))
    out_i = ctorch.tensor([0, 0], device=device)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        ctorch.exp(a, out=out_i)
    out_f = ctorch.tensor([0.0, 0.0], device=device)
    ctorch.eq(a, 1.0, out=out_f)
    assert_close(out_f, np.array([1.0, 0.0]))
    wrong = ctorch.tensor([0.0, 0.0, 0.0], device=device)
    ctorch.mul(a, 3, out=wrong)  # resized, with PyTorch's warning
    assert tuple(wrong.shape) == (2,)
    assert_close(wrong, np.array([3.0, 6.0]))
    assert any("was resized" in str(w.message) for w in recwarn)
    with pytest.raises(TypeError):
        a.exp(out=out)
    with pytest.raises(RuntimeError, match=r"output with shape \[2\] doesn't match the broadcast shape \[3, 2\]"):
        ctorch.add(a, ctorch.tensor(np.ones((3, 2), np.float32), device=device), out=a)


def test_inplace_on_views_and_versions(device):
    base = ctorch.tensor(np.arange(12, dtype=np.float32).reshape(3, 4), device=device)
    col = base.select(1, 2)
    col.mul_(10)
    expected = np.arange(12, dtype=np.float32).reshape(3, 4)
    expected[:, 2] *= 10
    assert_close(base, expected)
    base.t().sub_(1)
    assert_close(base, expected - 1)
    sl = base.narrow(1, 1, 2)
    sl += ctorch.tensor([100.0, 200.0], device=device)
    expected[:, 1] += 100
    expected[:, 2] += 200
    assert_close(base, expected - 1)


def test_large_parallel_and_casting_paths(device, rng):
    """Big enough to run on several threads, through strided, broadcast and float16 paths."""
    n = 300_001
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    ta, tb = ctorch.tensor(a, device=device), ctorch.tensor(b, device=device)
    assert_close(ta + tb, a.astype(np.float64) + b)
    assert_close(ta * tb + ta, a.astype(np.float64) * b + a)
    m = rng.standard_normal((601, 503)).astype(np.float32)
    tm = ctorch.tensor(np.ascontiguousarray(m.T), device=device).t()
    v = rng.standard_normal(503).astype(np.float32)
    assert_close(tm - ctorch.tensor(v, device=device), m.astype(np.float64) - v)
    h = ctorch.tensor(a, dtype=ctorch.float16, device=device)
    assert_close(ctorch.exp(h), np.exp(held(h)))
    assert_close(h * 2.5 + ta, (held(h) * 2.5).astype(np.float16).astype(np.float64) + a)
    i = ctorch.tensor((a * 100).astype(np.int32), device=device)
    assert_close(i // 7, (a * 100).astype(np.int32) // 7)
    c = i.clone()
    c += ctorch.tensor(np.int64(5))
    assert c.dtype == ctorch.int32
    assert_close(c, (a * 100).astype(np.int32) + 5)


def test_temporary_elision_keeps_values(device, rng):
    """Large temporaries may be reused for the result of the next operator; nothing visible may
    change: named tensors, list items and views keep their values."""
    n = 100_000
    av = rng.standard_normal(n).astype(np.float32)
    bv = rng.standard_normal(n).astype(np.float32)
    a, b = ctorch.tensor(av, device=device), ctorch.tensor(bv, device=device)
    expected = av.astype(np.float64) * bv + av
    assert_close(a * b + a, expected)
    assert_close(a + a * b, expected)
    assert_close(2.0 - a * b, 2.0 - av.astype(np.float64) * bv)
    assert_close((a * b) / 2.0 + (a - b) * 3, av.astype(np.float64) * bv / 2 + (av.astype(np.float64) - bv) * 3)
    t = a * b
    u = t + a  # t is named: it must not become the result
    assert_close(t, av.astype(np.float64) * bv)
    assert_close(u, expected)
    items = [a * 1.0, a]
    assert_close(sum(items), 2 * av.astype(np.float64))
    assert_close(items[0], av)
    v = (a * 1.0).narrow(0, 0, n // 2)  # a view keeps the temporary's storage alive
    w = v + 1.0
    assert_close(v, av[: n // 2])
    assert_close(w, av[: n // 2].astype(np.float64) + 1)
    i = ctorch.tensor((av * 100).astype(np.int32), device=device)
    r = i * 2 / 4  # true division of a temporary int tensor: a new float tensor
    assert r.dtype == ctorch.float32
    assert_close(r, (av * 100).astype(np.int32) * 2 / 4.0)
    assert_close(a * b + ctorch.tensor(1.0, dtype=ctorch.float64), expected - av + 1.0)


def test_mixed_device_error():
    if not (hasattr(ctorch, "cuda") and ctorch.cuda.is_available()):
        pytest.skip("CUDA not available")
    a = ctorch.tensor([1.0, 2.0]).cuda()
    b = ctorch.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least two "
                                           "devices, cuda:0 and cpu!"):
        a + b
    r = a + ctorch.tensor(2.0)  # 0-d CPU tensors and Python numbers mix freely
    assert_close(r, np.array([3.0, 4.0]))
    assert_close(a * 2, np.array([2.0, 4.0]))


@pytest.mark.parametrize("dtype", [ctorch.float32, ctorch.float64, ctorch.int64])
def test_isclose_allclose_equal_against_numpy(device, dtype):
    nan, inf = float("nan"), float("inf")
    if dtype == ctorch.int64:
        a_np, b_np = np.array([1, 2, 3, -4]), np.array([1, 3, 5, -4])
    else:
        a_np = np.array([1.0, 1e-9, nan, inf, -inf, 1.0, 100.0, 0.0])
        b_np = np.array([1.000001, 0.0, nan, inf, inf, 1.1, 100.01, -0.0])
    a = ctorch.tensor(a_np, dtype=dtype, device=device)
    b = ctorch.tensor(b_np, dtype=dtype, device=device)
    for kw in [{}, {"equal_nan": True}, {"rtol": 0.2}, {"atol": 1.0, "rtol": 0.0}]:
        expected = np.isclose(a_np.astype(np.float64), b_np.astype(np.float64), **kw)
        got = ctorch.isclose(a, b, **kw)
        assert got.dtype == ctorch.bool
        assert to_numpy(got).tolist() == expected.tolist()
        assert a.isclose(b, **kw).tolist() == expected.tolist()
        assert ctorch.allclose(a, b, **kw) is bool(expected.all())
    assert ctorch.allclose(a, a, equal_nan=True) is True
    assert ctorch.equal(a, a.clone()) is (dtype == ctorch.int64)  # nan != nan
    assert ctorch.equal(a, b) is False and a.equal(a[:2]) is False
    with pytest.raises(RuntimeError, match="Long did not match Float"):
        ctorch.isclose(ctorch.tensor([1], device=device), ctorch.tensor([1.0], device=device))
    with pytest.raises(RuntimeError, match="rtol must be greater than or equal to zero, but got -1"):
        ctorch.isclose(a, b, rtol=-1)


def test_allclose_broadcasts_and_equal_promotes():
    assert ctorch.allclose(ctorch.ones(3), ctorch.ones(1))
    assert ctorch.equal(ctorch.tensor([1]), ctorch.tensor([1.0]))
    assert not ctorch.equal(ctorch.ones(2), ctorch.ones(1))


# --- output layout ------------------------------------------------------------------------------------
def _ar(device, *shape, dtype=ctorch.float32):
    n = int(np.prod(shape)) if shape else 1
    return ctorch.arange(n, dtype=dtype, device=device).reshape(shape)


def _layout_cases(device):
    """(name, inputs as NumPy arrays, ctorch expression, NumPy expression, expected strides); the
    strides derived by hand from PyTorch's rule: order the output's dims by the first input's
    strides that order them (broadcast dims do not), contiguous when all inputs are, the inputs'
    own strides when all share one dense layout of the output's shape."""
    x = _ar(device, 3, 4)  # x.T: (4, 3) strides (1, 4)
    y = _ar(device, 3, 4) + 1
    z = _ar(device, 2, 3, 4)
    p = z.permute(2, 0, 1)  # (4, 2, 3) strides (1, 12, 4)
    r = _ar(device, 1, 4).T  # (4, 1) strides (1, 4): contiguous, the size-1 dim's stride odd
    s = _ar(device, 4, 6).T[::2]  # (3, 4) strides (2, 6): not dense
    e3 = ctorch.zeros(3, 0, 2, device=device).permute(2, 0, 1)  # (2, 3, 0) strides (1, 2, 2)
    return [
        ("T+T", lambda: x.T + y.T, (1, 4)),
        ("T.exp", lambda: x.T.exp(), (1, 4)),
        ("T+number", lambda: x.T + 1, (1, 4)),
        ("number*T", lambda: 2 * x.T, (1, 4)),
        ("T+0d", lambda: x.T + ctorch.tensor(2.0, device=device), (1, 4)),
        ("T+contiguous", lambda: x.T + y.T.contiguous(), (1, 4)),  # the first input decides
        ("contiguous+T", lambda: x.T.contiguous() + y.T, (3, 1)),
        ("perm+perm", lambda: p + p, (1, 12, 4)),
        ("perm.sigmoid", lambda: p.sigmoid(), (1, 12, 4)),
        ("perm+contiguous", lambda: p + p.contiguous(), (1, 12, 4)),
        ("T+row", lambda: x.T + _ar(device, 3), (1, 4)),
        ("col+T", lambda: _ar(device, 4, 1) + x.T, (1, 4)),  # the column is broadcast along dim 1
        ("T+3d", lambda: x.T + _ar(device, 2, 1, 1), (12, 1, 4)),
        ("T==T", lambda: x.T == y.T, (1, 4)),
        ("where", lambda: ctorch.where(x.T > 3, x.T, 0.0), (1, 4)),
        ("clamp", lambda: x.T.clamp(1, 5), (1, 4)),
        ("addcmul", lambda: ctorch.addcmul(x.T, x.T, y.T), (1, 4)),
        ("int+float", lambda: x.T.long() + y.T, (1, 4)),
        ("expanded", lambda: _ar(device, 3, 1).expand(3, 4).T * 1, (3, 1)),  # stride 0 orders nothing
        ("number**T", lambda: 2 ** x.T, (3, 1)),  # pow(Scalar, Tensor) is contiguous in PyTorch
        ("sliced", lambda: s * 1, (1, 3)),
        ("size1+number", lambda: r + 1, (1, 4)),  # a number is an operand: no fast path
        ("size1.exp", lambda: r.exp(), (1, 1)),  # all inputs contiguous: contiguous strides
        ("size1+size1", lambda: r + r, (1, 1)),
        ("0d", lambda: ctorch.tensor(3.0, device=device) * 2, ()),
        ("empty", lambda: ctorch.zeros(0, 3, device=device).T * 1, (1, 3)),
        ("empty+bcast", lambda: e3 + _ar(device, 3, 1), (1, 0, 2)),
    ]


def test_output_layout_follows_inputs(device):
    for name, fn, strides in _layout_cases(device):
        out = fn()
        assert out.stride() == strides, name
    # the values, read back through the new layouts, against NumPy
    x, z = _ar(device, 3, 4), _ar(device, 2, 3, 4)
    xn, zn = np.arange(12, dtype=np.float32).reshape(3, 4), np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert_close(x.T * x.T + 1, xn.T * xn.T + 1)
    assert_close(ctorch.where(x.T > 3, x.T, -x.T), np.where(xn.T > 3, xn.T, -xn.T))
    assert_close(x.T.exp(), np.exp(xn.T))
    assert_close(x.T + x.T.contiguous() * 2, xn.T * 3)
    assert_close(x.T + _ar(device, 2, 1, 1), xn.T + np.arange(2, dtype=np.float32).reshape(2, 1, 1))
    assert_close(_ar(device, 4, 1) - x.T, np.arange(4, dtype=np.float32).reshape(4, 1) - xn.T)
    assert_close(z.permute(2, 0, 1) * z.permute(2, 0, 1).contiguous(), zn.transpose(2, 0, 1) ** 2)
    assert_close(_ar(device, 4, 6).T[::2] / 2, np.arange(24, dtype=np.float32).reshape(4, 6).T[::2] / 2)


def test_output_layout_views(device):
    """The layout shows through view(): a transposed-layout result views only as the transpose."""
    x = _ar(device, 3, 4)
    out = x.T + x.T
    assert not out.is_contiguous()
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride"):
        out.view(12)
    assert out.T.view(12).tolist() == (2 * np.arange(12.0)).tolist()
    assert out.reshape(12).tolist() == (2 * np.arange(12.0).reshape(3, 4).T.reshape(12)).tolist()


def test_output_layout_out_argument(device, recwarn):
    x = _ar(device, 3, 4)
    xn = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = ctorch.empty(4, 3, device=device).T  # the right shape: written in its own layout
    r = ctorch.add(x, x, out=out)
    assert r is out and r.stride() == (1, 3)
    assert_close(r, 2 * xn)
    out = ctorch.empty(0, device=device)  # resized: laid out like a new output
    ctorch.add(x.T, x.T, out=out)
    assert out.shape == (4, 3) and out.stride() == (1, 4)
    assert_close(out, 2 * xn.T)
    out = ctorch.empty(5, device=device)  # resized with a warning
    ctorch.exp(x.T, out=out)
    assert out.stride() == (1, 4)
    assert_close(out, np.exp(xn.T))
    t = x.T.clone()
    t.mul_(3)  # in place keeps self's layout
    assert t.stride() == (1, 4)
    assert_close(t, 3 * xn.T)


def test_out_written_twice_is_refused(device):
    """An out= (or copy_ target) whose elements share memory (expanded) is refused for every op
    that writes through out=, as PyTorch's internal-overlap check; fill_ may write it."""
    a = ctorch.ones(3, device=device)
    m = ctorch.ones(3, 3, device=device)
    calls = [lambda o: ctorch.add(a, a, out=o), lambda o: ctorch.sum(m, 1, out=o), lambda o: ctorch.cumsum(a, 0, out=o),
             lambda o: ctorch.cat([a], out=o), lambda o: ctorch.matmul(m, a, out=o), lambda o: o.copy_(a),
             lambda o: o.exp_()]
    for call in calls:
        o = ctorch.zeros(1, device=device).expand(3)
        with pytest.raises(RuntimeError, match="^unsupported operation: more than one element of the written-to "
                                               "tensor refers to a single memory location"):
            call(o)
        assert to_numpy(o).tolist() == [0.0, 0.0, 0.0]
    o = ctorch.zeros(1, device=device).expand(3)
    o.fill_(2.0)
    assert to_numpy(o).tolist() == [2.0, 2.0, 2.0]
    # an out= of another shape: elementwise ops refuse an overlapping one before resizing it; reductions,
    # scans, cat and matmul resize it first (fresh memory), as PyTorch
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        ctorch.add(a, a, out=ctorch.zeros(1, 5, device=device).expand(2, 5))
    for call in calls[1:5]:
        o = ctorch.zeros(1, 5, device=device).expand(2, 5)
        with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
            assert call(o) is o and o.is_contiguous()


def test_out_dtype_of_unary_ops(device):
    """PyTorch's unary ops (and clamp with number bounds, where, nan_to_num, signbit, heaviside) want an
    out= of the result's dtype; ops that promote (exp, clamp with tensor bounds) cast to their out."""
    x = ctorch.tensor([1.5, -2.0], device=device)
    f64 = ctorch.zeros(2, dtype=ctorch.float64, device=device)
    for call, msg in [(lambda o: ctorch.abs(x, out=o), "Found dtype Double but expected Float"),
                      (lambda o: ctorch.floor(x, out=o), "Found dtype Double but expected Float"),
                      (lambda o: ctorch.round(x, decimals=1, out=o), "Found dtype Double but expected Float"),
                      (lambda o: ctorch.clamp(x, -1, 1, out=o), "Found dtype Double but expected Float"),
                      (lambda o: ctorch.where(x > 0, x, x, out=o), "Expected out type to be Float but got Double"),
                      (lambda o: ctorch.nan_to_num(x, out=o), "nan_to_num: dtype of out: Double should be same as "
                                                               "input: Float"),
                      (lambda o: ctorch.signbit(x, out=o), "signbit does not support non-boolean outputs."),
                      (lambda o: ctorch.heaviside(x, x, out=o), "heaviside is not yet implemented for tensors with "
                                                                 "different dtypes.")]:
        with pytest.raises(RuntimeError, match=msg):
            call(f64)
    with pytest.raises(RuntimeError, match="Found dtype Float but expected Long"):
        ctorch.neg(ctorch.ones(2, dtype=ctorch.int64, device=device), out=ctorch.zeros(2, device=device))
    for call in [lambda o: ctorch.exp(x, out=o), lambda o: ctorch.clamp(x, x - 1, x + 1, out=o),
                 lambda o: ctorch.sigmoid(x, out=o)]:
        assert call(f64) is f64
    assert ctorch.clamp(ctorch.tensor([0, 3], device=device), 0.5, out=ctorch.zeros(2, device=device)).tolist() == \
        [0.5, 3.0]  # the result float32 (promoted by the float bound) is out's dtype
    assert ctorch.abs(x, out=ctorch.zeros(2, device=device)).tolist() == [1.5, 2.0]


def test_contiguous_fast_path_edges(device):
    """The iterator's path for same-shape contiguous operands: size-1 dims with any stride,
    single elements (stride 0), 0-d tensors, a strided operand among contiguous ones."""
    base = ctorch.arange(12.0, device=device)
    x = base.as_strided((3, 1, 4), (4, 7, 1))  # contiguous: the size-1 dim's stride is free
    y = ctorch.ones(3, 1, 4, device=device)
    assert_close(x + y, np.arange(12.0).reshape(3, 1, 4) + 1)
    one = base.as_strided((1, 1), (5, 9), 3)
    assert_close(one * ctorch.full((1, 1), 2.0, device=device), np.array([[6.0]]))
    s = ctorch.tensor(2.0, device=device)
    assert (s + s).shape == () and to_numpy(s + s).item() == 4.0
    t = base.view(3, 4).T  # not contiguous: the general path
    assert_close(t + ctorch.ones(4, 3, device=device), np.arange(12.0).reshape(3, 4).T + 1)
    z = ctorch.ones(2, 3, device=device)
    z.add_(x.reshape(3, 4)[:2, :3])
    assert_close(z, np.arange(12.0).reshape(3, 4)[:2, :3] + 1)


def test_grad_fn_types_by_name():
    """Backward node classes are found again by name (node type cache): alternating ops keep their
    own classes, and a class is the same object on every call."""
    a = ctorch.ones(2, requires_grad=True)
    seen = {}
    for _ in range(3):
        for op, name in ((lambda: a + a, "AddBackward0"), (lambda: a * a, "MulBackward0"),
                         (lambda: a.relu(), "ReluBackward0"), (lambda: a.sum(), "SumBackward0")):
            fn = op().grad_fn
            assert type(fn).__name__ == name
            assert seen.setdefault(name, type(fn)) is type(fn)
