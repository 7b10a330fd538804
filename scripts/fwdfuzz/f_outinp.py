"""out= and in-place variants of reductions, index ops and elementwise ops: out dtype / shape mismatches,
resize of out= (and the warning PyTorch gives when resizing a non-empty out), out aliasing, in-place
results that cannot be cast back, in-place on broadcast-too-small self."""
import sys
from core import *  # noqa

which = sys.argv[1] if len(sys.argv) > 1 else "all"
OUTS = [("float32", (0,)), ("float32", (3, 4)), ("float32", (2, 2)), ("float64", (3, 4)), ("int64", (3, 4)),
        ("int64", (0,)), ("bool", (3, 4)), ("float16", (0,)), ("float32", "t"), ("float32", "exp"), ("float32", (12,)), ("int32", (0,))]


def mkout(L, od, shp):
    if shp == "t":
        return L.zeros(4, 3, dtype=dt(L, od)).t()
    if shp == "exp":
        return L.zeros(1, 4, dtype=dt(L, od)).expand(3, 4)
    return L.zeros(shp, dtype=dt(L, od))


def run_out(f):
    def g(L):
        o = mkout(L, od, shp)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = f(L, o)
        ws = sorted({str(x.message)[:50] for x in w if "resiz" in str(x.message)})
        if isinstance(r, tuple):
            return [x is y for x, y in zip(r, o)] if isinstance(o, tuple) else None, ws
        return r is o, o, o.stride() if o.numel() > 1 else None, ws
    return g


X = lambda L, d="float32": make(L, d, "contig", (3, 4), seed=3, special=False)  # noqa
Y = lambda L, d="float32": make(L, d, "contig", (3, 4), seed=4, special=False)  # noqa
I = lambda L: L.tensor([[0, 2, 1, 3], [1, 0, 2, 0], [2, 1, 0, 1]])  # noqa
ELEM = {
    "add": lambda L, o, d: L.add(X(L, d), Y(L, d), out=o), "sub": lambda L, o, d: L.sub(X(L, d), 2, out=o),
    "mul": lambda L, o, d: L.mul(X(L, d), Y(L, d), out=o), "div": lambda L, o, d: L.div(X(L, d), Y(L, d), out=o),
    "div floor": lambda L, o, d: L.div(X(L, d), Y(L, d), rounding_mode="floor", out=o),
    "true_divide": lambda L, o, d: L.true_divide(X(L, d), 2, out=o), "pow": lambda L, o, d: L.pow(X(L, d), 2, out=o),
    "exp": lambda L, o, d: L.exp(X(L, d), out=o), "abs": lambda L, o, d: L.abs(X(L, d), out=o),
    "neg": lambda L, o, d: L.neg(X(L, d), out=o), "sqrt": lambda L, o, d: L.sqrt(X(L, d), out=o),
    "sigmoid": lambda L, o, d: L.sigmoid(X(L, d), out=o), "eq": lambda L, o, d: L.eq(X(L, d), Y(L, d), out=o),
    "lt": lambda L, o, d: L.lt(X(L, d), 0, out=o), "logical_and": lambda L, o, d: L.logical_and(X(L, d), Y(L, d), out=o),
    "bitwise_and": lambda L, o, d: L.bitwise_and(X(L, d), Y(L, d), out=o), "where": lambda L, o, d: L.where(X(L, d) > 0, X(L, d), Y(L, d), out=o),
    "clamp": lambda L, o, d: L.clamp(X(L, d), -1, 1, out=o), "clamp t": lambda L, o, d: L.clamp(X(L, d), Y(L, d), out=o),
    "maximum": lambda L, o, d: L.maximum(X(L, d), Y(L, d), out=o), "fmod": lambda L, o, d: L.fmod(X(L, d), 3, out=o),
    "remainder": lambda L, o, d: L.remainder(X(L, d), 3, out=o), "floor_divide": lambda L, o, d: L.floor_divide(X(L, d), 3, out=o),
    "atan2": lambda L, o, d: L.atan2(X(L, d), Y(L, d), out=o), "lerp": lambda L, o, d: L.lerp(X(L, d), Y(L, d), 0.3, out=o),
    "addcmul": lambda L, o, d: L.addcmul(X(L, d), X(L, d), Y(L, d), out=o), "addcdiv": lambda L, o, d: L.addcdiv(X(L, d), X(L, d), Y(L, d), out=o),
    "sign": lambda L, o, d: L.sign(X(L, d), out=o), "signbit": lambda L, o, d: L.signbit(X(L, d), out=o),
    "isnan?": None, "round": lambda L, o, d: L.round(X(L, d), out=o), "round dec": lambda L, o, d: L.round(X(L, d), decimals=1, out=o),
    "floor": lambda L, o, d: L.floor(X(L, d), out=o), "trunc": lambda L, o, d: L.trunc(X(L, d), out=o),
    "bcast add": lambda L, o, d: L.add(X(L, d)[:1], Y(L, d)[:, :1], out=o), "nan_to_num": lambda L, o, d: L.nan_to_num(X(L, d), out=o),
    "xlogy": lambda L, o, d: L.xlogy(X(L, d), Y(L, d), out=o), "hypot": lambda L, o, d: L.hypot(X(L, d), Y(L, d), out=o),
    "logaddexp": lambda L, o, d: L.logaddexp(X(L, d), Y(L, d), out=o), "copysign": lambda L, o, d: L.copysign(X(L, d), Y(L, d), out=o),
    "heaviside": lambda L, o, d: L.heaviside(X(L, d), Y(L, d), out=o), "gcd": lambda L, o, d: L.gcd(X(L, d), Y(L, d), out=o),
    "bitwise_not": lambda L, o, d: L.bitwise_not(X(L, d), out=o), "logical_not": lambda L, o, d: L.logical_not(X(L, d), out=o),
    "erfinv": lambda L, o, d: L.erfinv(X(L, d) / 10, out=o), "polygamma": lambda L, o, d: L.polygamma(1, X(L, d), out=o),
    "mvlgamma": lambda L, o, d: L.mvlgamma(X(L, d).abs() + 2, 2, out=o), "frac": lambda L, o, d: L.frac(X(L, d), out=o),
}
RED = {
    "sum": lambda L, o, d: L.sum(X(L, d), 1, out=o), "sum all?": None, "mean": lambda L, o, d: L.mean(X(L, d), 1, out=o),
    "prod": lambda L, o, d: L.prod(X(L, d), 1, out=o), "amax": lambda L, o, d: L.amax(X(L, d), 1, out=o),
    "amin keep": lambda L, o, d: L.amin(X(L, d), 1, keepdim=True, out=o), "any": lambda L, o, d: L.any(X(L, d), 1, out=o),
    "all": lambda L, o, d: L.all(X(L, d), out=o), "argmax": lambda L, o, d: L.argmax(X(L, d), 1, out=o),
    "norm": lambda L, o, d: L.norm(X(L, d), 2, 1, out=o), "std": lambda L, o, d: L.std(X(L, d), 1, out=o),
    "var": lambda L, o, d: L.var(X(L, d), 1, out=o), "logsumexp": lambda L, o, d: L.logsumexp(X(L, d), 1, out=o),
    "nansum": lambda L, o, d: L.nansum(X(L, d), 1, out=o), "nanmean": lambda L, o, d: L.nanmean(X(L, d), 1, out=o),
    "cumsum": lambda L, o, d: L.cumsum(X(L, d), 1, out=o), "cumprod": lambda L, o, d: L.cumprod(X(L, d), 0, out=o),
    "logcumsumexp": lambda L, o, d: L.logcumsumexp(X(L, d), 1, out=o), "count_nonzero?": None,
    "median": lambda L, o, d: L.median(X(L, d), out=o), "nanmedian": lambda L, o, d: L.nanmedian(X(L, d), out=o),
    "sum dtype": lambda L, o, d: L.sum(X(L, d), 1, dtype=L.float64, out=o), "aminmax?": None,
    "diff": lambda L, o, d: L.diff(X(L, d), out=o), "cross?": None, "histc": lambda L, o, d: L.histc(X(L, d).float(), 4, out=o),
    "bincount?": None, "trapz?": None, "dist?": None,
}
IDX = {
    "gather": lambda L, o, d: L.gather(X(L, d), 1, I(L), out=o), "take": lambda L, o, d: L.take(X(L, d), I(L), out=o),
    "index_select": lambda L, o, d: L.index_select(X(L, d), 1, L.tensor([3, 0, 1, 1]), out=o),
    "masked_select": lambda L, o, d: L.masked_select(X(L, d), X(L, d) > 0, out=o),
    "take_along_dim": lambda L, o, d: L.take_along_dim(X(L, d), I(L), 1, out=o),
    "scatter": lambda L, o, d: L.scatter(X(L, d), 1, I(L), Y(L, d), out=o) if hasattr(L, "scatter") else None,
    "scatter_add": lambda L, o, d: L.scatter_add(X(L, d), 1, I(L), Y(L, d), out=o),
    "scatter_reduce": lambda L, o, d: L.scatter_reduce(X(L, d), 1, I(L), Y(L, d), "amax", out=o),
    "index_add": lambda L, o, d: L.index_add(X(L, d), 0, L.tensor([2, 0, 1]), Y(L, d), out=o),
    "index_copy": lambda L, o, d: L.index_copy(X(L, d), 0, L.tensor([2, 0, 1]), Y(L, d), out=o),
    "index_fill?": None, "masked_fill?": None,
    "sort": lambda L, o, d: L.sort(X(L, d), 1, out=(o, L.zeros(0, dtype=L.int64)))[0],
    "topk": lambda L, o, d: L.topk(X(L, d), 2, out=(o, L.zeros(0, dtype=L.int64)))[0],
    "kthvalue": lambda L, o, d: L.kthvalue(X(L, d), 2, 1, out=(o, L.zeros(0, dtype=L.int64)))[0],
    "cummax": lambda L, o, d: L.cummax(X(L, d), 1, out=(o, L.zeros(0, dtype=L.int64)))[0],
    "max dim": lambda L, o, d: L.max(X(L, d), 1, out=(o, L.zeros(0, dtype=L.int64)))[0],
    "mode": lambda L, o, d: L.mode(X(L, d), 1, out=(o, L.zeros(0, dtype=L.int64)))[0],
    "searchsorted": lambda L, o, d: L.searchsorted(L.sort(X(L, d), 1)[0], Y(L, d), out=o),
    "bucketize": lambda L, o, d: L.bucketize(X(L, d), L.tensor([-1.0, 0.0, 1.0]).to(X(L, d).dtype), out=o),
    "flip?": None, "roll?": None, "tril": lambda L, o, d: L.tril(X(L, d), out=o), "clone?": None,
    "narrow_copy": lambda L, o, d: L.narrow_copy(X(L, d), 1, 1, 2, out=o), "index_put?": None,
    "argsort?": None, "unique?": None, "repeat_interleave?": None,
}

if which in ("all", "out"):
    for group in [ELEM, RED, IDX]:
        for nm, f in group.items():
            if f is None:
                continue
            for d in ["float32", "int64", "bool"]:
                for od, shp in OUTS:
                    check(f"out {nm}", f"in={d} out={od} {shp}", run_out(lambda L, o, f=f, d=d: f(L, o, d)), ctx=dict(tolmul=100))

if which in ("all", "inplace"):
    INP = ["add_", "sub_", "mul_", "div_", "pow_", "clamp_", "fmod_", "remainder_", "floor_divide_", "atan2_", "lerp_",
           "addcmul_", "addcdiv_", "copysign_", "hypot_", "logaddexp_?", "bitwise_and_", "logical_and_", "eq_", "lt_",
           "where?", "maximum?", "xlogy_", "heaviside_", "gcd_", "masked_fill_", "index_fill_", "index_add_", "index_copy_",
           "scatter_", "scatter_add_", "scatter_reduce_", "put_", "masked_scatter_", "fill_", "zero_", "exp_", "sqrt_",
           "abs_", "neg_", "sign_", "round_", "sigmoid_", "clamp_min_", "nan_to_num_", "copy_", "cumsum_", "cumprod_",
           "addmm_", "baddbmm_?", "tril_", "triu_", "renorm_", "float_power_", "true_divide_", "ldexp_", "xlogy_"]
    for nm in INP:
        if nm.endswith("?"):
            continue
        for sd in ["int64", "float32", "bool", "float16", "uint8"]:
            for od in ["float64", "int64", "bool", "float32", "scalar_f", "scalar_i", "scalar_b"]:
                for lay in ["contig", "bcast", "expanded", "zerod_other", "self_small"]:
                    def f(L, nm=nm, sd=sd, od=od, lay=lay):
                        s = make(L, sd, "contig", (3, 4), seed=3, special=False)
                        if lay == "expanded":
                            s = make(L, sd, "contig", (1, 4), seed=3, special=False).expand(3, 4)
                        if lay == "self_small":
                            s = make(L, sd, "contig", (1, 4), seed=3, special=False)
                        if od.startswith("scalar"):
                            o = {"scalar_f": 2.5, "scalar_i": 2, "scalar_b": True}[od]
                        else:
                            shape = (4,) if lay == "bcast" else () if lay == "zerod_other" else (3, 4)
                            o = make(L, od, "contig", shape, seed=4, special=False)
                            if od not in ("bool",) and lay != "zerod_other":
                                o = o.abs() + 1 if od != "bool" else o
                        m = getattr(s, nm)
                        idx = L.tensor([[0, 1, 2, 3]] * 3) if s.shape[0] == 3 else L.tensor([[0, 1, 2, 3]])
                        if nm in ("masked_fill_",):
                            r = m(s > 0 if sd != "bool" else s, o if not hasattr(o, "shape") or o.dim() == 0 else o.flatten()[0])
                        elif nm in ("index_fill_",):
                            r = m(1, L.tensor([0, 2]), o if not hasattr(o, "shape") or o.dim() == 0 else o.flatten()[0])
                        elif nm in ("index_add_", "index_copy_"):
                            r = m(1, L.tensor([3, 0, 1, 2]), o if hasattr(o, "shape") and o.dim() == 2 and o.shape[0] == s.shape[0] else L.ones_like(s))
                        elif nm in ("scatter_", "scatter_add_"):
                            r = m(1, idx, o) if hasattr(o, "shape") and o.dim() == 2 else m(1, idx, o) if nm == "scatter_" else m(1, idx, L.ones_like(s))
                        elif nm == "scatter_reduce_":
                            r = m(1, idx, o if hasattr(o, "shape") and o.dim() == 2 else L.ones_like(s), "sum")
                        elif nm == "put_":
                            r = m(L.tensor([0, 3]), o.flatten()[:2] if hasattr(o, "shape") and o.numel() >= 2 else L.ones(2, dtype=s.dtype))
                        elif nm == "masked_scatter_":
                            r = m(s > 0 if sd != "bool" else s, o if hasattr(o, "shape") else L.ones_like(s))
                        elif nm in ("lerp_",):
                            r = m(o, 0.5)
                        elif nm in ("addcmul_", "addcdiv_"):
                            r = m(o, o)
                        elif nm in ("clamp_",):
                            r = m(o, None) if hasattr(o, "shape") else m(-o, o)
                        elif nm in ("fill_", "clamp_min_"):
                            r = m(o)
                        elif nm in ("zero_", "exp_", "sqrt_", "abs_", "neg_", "sign_", "round_", "sigmoid_", "nan_to_num_", "tril_", "triu_"):
                            r = m()
                        elif nm in ("cumsum_", "cumprod_"):
                            r = m(1)
                        elif nm == "addmm_":
                            r = m(L.ones(s.shape[0], 2, dtype=s.dtype), L.ones(2, 4, dtype=s.dtype), beta=o if not hasattr(o, "shape") else 1)
                        elif nm == "renorm_":
                            r = m(2, 0, 1.0)
                        else:
                            r = m(o)
                        return r is s, s
                    check(f"inplace {nm}", f"self={sd} other={od} {lay}", f, ctx=dict(tolmul=100))
report(maxper=int(os.environ.get("MAXPER", 4)))
