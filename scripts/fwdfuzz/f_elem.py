import sys
from core import *  # noqa

UNARY = ["abs", "absolute", "acos", "acosh", "asin", "asinh", "atan", "atanh", "arccos", "arcsin", "arctan",
         "ceil", "cos", "cosh", "erf", "erfc", "exp", "exp2", "expm1", "fix", "floor", "frac", "isfinite",
         "isinf", "isnan", "isneginf", "isposinf", "log", "log10", "log1p", "log2", "logical_not", "neg",
         "negative", "positive", "reciprocal", "relu", "round", "rsqrt", "sgn", "sigmoid", "sign", "signbit",
         "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc", "bitwise_not", "nan_to_num"]
BINARY = ["add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow", "atan2",
          "arctan2", "maximum", "minimum", "fmax", "fmin", "eq", "ne", "lt", "le", "gt", "ge", "greater",
          "less", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
          "bitwise_left_shift", "bitwise_right_shift", "copysign", "hypot", "logaddexp", "logaddexp2",
          "float_power", "subtract", "multiply", "divide", "not_equal", "greater_equal", "less_equal"]

which = sys.argv[1] if len(sys.argv) > 1 else "all"

if which in ("all", "unary"):
    for op in UNARY:
        for d in DTYPES:
            for lay in LAYOUTS:
                check(f"unary {op}", f"{d} {lay}", lambda L: getattr(L, op)(make(L, d, lay)))
            # method + inplace on contig
            check(f"unary method {op}", f"{d}", lambda L: getattr(make(L, d, "contig"), op)())
            if hasattr(torch.Tensor, op + "_"):
                def f(L):
                    x = make(L, d, "transposed")
                    r = getattr(x, op + "_")()
                    return (x, r is x)
                check(f"unary inplace {op}_", f"{d}", f)

if which in ("all", "binary"):
    pairs = [(a, b) for a in DTYPES for b in DTYPES]
    for op in BINARY:
        for da, db in pairs:
            check(f"binary {op}", f"{da},{db}",
                  lambda L: getattr(L, op)(make(L, da, "contig", seed=1), make(L, db, "transposed", seed=2)))
        for da in DTYPES:
            for s in [2, -3, 0, 2.5, -0.5, True, False, float("nan"), 0.0]:
                check(f"binary {op} tensor-scalar", f"{da},{s!r}",
                      lambda L: getattr(L, op)(make(L, da, "contig", seed=1), s))
                check(f"binary {op} method scalar", f"{da},{s!r}",
                      lambda L: getattr(make(L, da, "sliced", seed=1), op)(s))
            # 0-d tensor with dim tensor (category promotion)
            for db in DTYPES:
                check(f"binary {op} 0d", f"{da}[dim],{db}[0d]",
                      lambda L: getattr(L, op)(make(L, da, "contig", seed=1), make(L, db, "zerod", seed=3)))
            for lay in ["expanded", "empty", "size1", "zerod", "sliced"]:
                check(f"binary {op} layouts", f"{da} {lay}",
                      lambda L: getattr(L, op)(make(L, da, lay, seed=1), make(L, da, "contig", seed=4)))
        # broadcast error
        check(f"binary {op} bcast err", "", lambda L: getattr(L, op)(make(L, "float32", "contig", (3, 4)),
                                                                     make(L, "float32", "contig", (3, 5))))
        # in-place
        if hasattr(torch.Tensor, op + "_"):
            for da, db in pairs:
                def f(L):
                    x = make(L, da, "transposed", seed=1)
                    r = getattr(x, op + "_")(make(L, db, "contig", seed=2))
                    return (x, r is x)
                check(f"binary inplace {op}_", f"{da},{db}", f)
            for da in DTYPES:
                for s in [2, 2.5, True]:
                    def f(L):
                        x = make(L, da, "contig", seed=1)
                        r = getattr(x, op + "_")(s)
                        return (x, r is x)
                    check(f"binary inplace {op}_ scalar", f"{da},{s!r}", f)

if which in ("all", "ops"):
    # python operators including reflected
    OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
           "//": lambda a, b: a // b, "%": lambda a, b: a % b, "**": lambda a, b: a ** b, "&": lambda a, b: a & b,
           "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
           "==": lambda a, b: a == b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b, "!=": lambda a, b: a != b}
    for name, fop in OPS.items():
        for da in DTYPES:
            for s in [3, -2, 0, 1.5, True, -0.0]:
                check(f"op {name} t,s", f"{da},{s!r}", lambda L: fop(make(L, da, "contig", seed=5), s))
                check(f"op {name} s,t", f"{s!r},{da}", lambda L: fop(s, make(L, da, "contig", seed=5)))
            for db in DTYPES:
                check(f"op {name} t,t", f"{da},{db}",
                      lambda L: fop(make(L, da, "contig", seed=5), make(L, db, "contig", seed=6)))
    # unary python ops
    for da in DTYPES:
        for nm, fo in {"neg": lambda a: -a, "pos": lambda a: +a, "abs": lambda a: abs(a), "inv": lambda a: ~a}.items():
            check(f"op unary {nm}", da, lambda L: fo(make(L, da, "contig")))
    # integer division by zero
    for da in INTS:
        for nm in ["div", "floor_divide", "remainder", "fmod"]:
            for mode in [None, "trunc", "floor"]:
                if mode and nm != "div":
                    continue
                kw = {"rounding_mode": mode} if mode else {}
                check(f"intdiv0 {nm} {mode}", da, lambda L: getattr(L, nm)(
                    L.tensor([5, -5, 0, 7], dtype=dt(L, da)), L.tensor([0, 2, 0, -2], dtype=dt(L, da)), **kw))
                check(f"intdiv0 scalar {nm} {mode}", da, lambda L: getattr(L, nm)(
                    L.tensor([5, -5, 0, 7], dtype=dt(L, da)), 0, **kw))
                check(f"intdiv negatives {nm} {mode}", da, lambda L: getattr(L, nm)(
                    L.tensor([7, -7, 7, -7, 1, -1], dtype=dt(L, da)), L.tensor([2, 2, -2, -2, -3, 3], dtype=dt(L, da)), **kw))
    for da in DTYPES:
        for db in DTYPES:
            for mode in ["trunc", "floor"]:
                check(f"div rounding {mode}", f"{da},{db}", lambda L: L.div(
                    make(L, da, "contig", seed=7, special=True), make(L, db, "contig", seed=8), rounding_mode=mode))
        for s in [2, -2, 2.5, True]:
            for mode in ["trunc", "floor"]:
                check(f"div rounding {mode} scalar", f"{da},{s!r}", lambda L: L.div(
                    make(L, da, "contig", seed=7), s, rounding_mode=mode))

report(maxper=3)
