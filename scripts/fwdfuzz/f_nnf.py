"""nn.functional forward differences (shapes, dtypes, reductions, options)."""
import sys
from core import *  # noqa

which = sys.argv[1] if len(sys.argv) > 1 else "all"


def R(L, shape, d="float32", seed=0, lo=None):
    t = make(L, d, "contig", shape, seed=seed, special=False)
    return t


def NF(L):
    return L.nn.functional


def P(L, shape, d="float32", seed=0):  # positive
    return R(L, shape, d, seed).abs() + 0.1


def PROB(L, shape, d="float32", seed=0):
    return L.sigmoid(R(L, shape, d, seed))


def IDX(L, vals):
    return L.tensor(vals, dtype=L.int64)


if which in ("all", "act"):
    acts = ["relu", "relu6", "elu", "selu", "celu", "gelu", "silu", "mish", "hardswish", "hardsigmoid", "hardtanh",
            "leaky_relu", "logsigmoid", "softplus", "softshrink", "hardshrink", "tanhshrink", "softsign", "sigmoid",
            "tanh", "threshold", "glu", "rrelu", "prelu", "softmax", "log_softmax", "softmin", "gumbel_softmax",
            "normalize", "dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d"]
    for a in acts:
        for d in ["float32", "float64", "int64", "float16", "bfloat16"]:
            for shp in [(3, 4), (), (2, 3, 4), (0, 4)]:
                def f(L, a=a, d=d, shp=shp):
                    x = make(L, d, "contig", shp, seed=1)
                    F = NF(L)
                    if a == "threshold":
                        return F.threshold(x, 0.5, -1.0)
                    if a == "prelu":
                        return F.prelu(x, L.tensor([0.25], dtype=x.dtype))
                    if a in ("softmax", "log_softmax", "softmin"):
                        return getattr(F, a)(x, dim=-1 if shp else 0)
                    if a == "glu":
                        return F.glu(x, -1)
                    if a == "gumbel_softmax":
                        return F.gumbel_softmax(x, tau=1.0, hard=True).shape
                    if a in ("dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d"):
                        return getattr(F, a)(x, 0.5, training=False)
                    if a == "rrelu":
                        return F.rrelu(x, training=False)
                    return getattr(F, a)(x)
                check(f"act {a}", f"{d} {shp}", f)
        # inplace / options
    for a, kw in [("elu", dict(alpha=0.5)), ("celu", dict(alpha=2.0)), ("gelu", dict(approximate="tanh")),
                  ("gelu", dict(approximate="bad")), ("leaky_relu", dict(negative_slope=0.2)),
                  ("softplus", dict(beta=2, threshold=1)), ("softshrink", dict(lambd=0.8)), ("hardshrink", dict(lambd=0.8)),
                  ("hardtanh", dict(min_val=-0.5, max_val=0.7)), ("hardtanh", dict(min_val=1.0, max_val=0.0)),
                  ("softshrink", dict(lambd=-1.0)), ("celu", dict(alpha=0.0)), ("normalize", dict(p=1, dim=0)),
                  ("normalize", dict(p=float('inf'), dim=1, eps=0.5)), ("softmax", dict(dim=1, dtype=None)),
                  ("log_softmax", dict(dim=0, _stacklevel=3)), ("glu", dict(dim=0))]:
        for d in ["float32", "float64"]:
            check(f"act opt {a}", f"{kw} {d}", lambda L: getattr(NF(L), a)(R(L, (4, 6), d, seed=2), **kw))
    for a in ["relu", "elu", "selu", "celu", "leaky_relu", "hardtanh", "relu6", "threshold", "rrelu", "silu", "mish",
              "hardswish", "hardsigmoid"]:
        def f(L, a=a):
            base = R(L, (4, 6), seed=3)
            v = base[:, ::2]
            F = NF(L)
            if a == "threshold":
                r = F.threshold_(v, 0.1, 2.0) if hasattr(F, "threshold_") else F.threshold(v, 0.1, 2.0, inplace=True)
            elif a == "rrelu":
                r = F.rrelu(v, training=False, inplace=True)
            else:
                r = getattr(F, a)(v, inplace=True)
            return r, base, r is v
        check("act inplace view", a, f)
    for d in ["float32", "float64"]:
        check("softmax dtype", d, lambda L: NF(L).softmax(R(L, (3, 4)), dim=1, dtype=dt(L, d)))
        check("log_softmax dtype", d, lambda L: NF(L).log_softmax(R(L, (3, 4), "float16"), dim=1, dtype=dt(L, d)))
    check("softmax nodim", "", lambda L: NF(L).softmax(R(L, (3, 4))))
    check("softmax int", "", lambda L: NF(L).softmax(R(L, (3, 4), "int64"), 1))
    check("glu odd", "", lambda L: NF(L).glu(R(L, (3, 5)), -1))
    check("prelu channels", "", lambda L: NF(L).prelu(R(L, (2, 3, 4)), L.tensor([0.1, 0.2, 0.3])))
    check("prelu bad", "", lambda L: NF(L).prelu(R(L, (2, 3, 4)), L.tensor([0.1, 0.2])))
    check("prelu 1d", "", lambda L: NF(L).prelu(R(L, (4,)), L.tensor([0.1])))

if which in ("all", "loss"):
    for d in ["float32", "float64"]:
        for red in ["mean", "sum", "none", "bad"]:
            for shp in [(4, 3), (), (0, 3), (5,)]:
                for nm in ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss", "binary_cross_entropy",
                           "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss", "gaussian_nll_loss",
                           "hinge_embedding_loss"]:
                    def f(L, nm=nm, d=d, red=red, shp=shp):
                        F = NF(L)
                        x = R(L, shp, d, 1)
                        y = R(L, shp, d, 2)
                        if nm == "binary_cross_entropy":
                            return F.binary_cross_entropy(PROB(L, shp, d, 1), PROB(L, shp, d, 2), reduction=red)
                        if nm == "binary_cross_entropy_with_logits":
                            return F.binary_cross_entropy_with_logits(x, PROB(L, shp, d, 2), reduction=red,
                                                                      pos_weight=P(L, shp[-1:], d, 3) if shp else None)
                        if nm == "kl_div":
                            return F.kl_div(x, PROB(L, shp, d, 2), reduction=red)
                        if nm == "poisson_nll_loss":
                            return F.poisson_nll_loss(x, P(L, shp, d, 2), reduction=red), \
                                F.poisson_nll_loss(P(L, shp, d, 1), P(L, shp, d, 2), log_input=False, full=True, reduction=red)
                        if nm == "gaussian_nll_loss":
                            return F.gaussian_nll_loss(x, y, P(L, shp, d, 3), reduction=red), \
                                F.gaussian_nll_loss(x, y, P(L, shp, d, 3), full=True, eps=0.5, reduction=red)
                        if nm == "hinge_embedding_loss":
                            return F.hinge_embedding_loss(x, L.sign(y), margin=0.5, reduction=red)
                        if nm == "soft_margin_loss":
                            return F.soft_margin_loss(x, L.sign(y), reduction=red)
                        if nm == "smooth_l1_loss":
                            return F.smooth_l1_loss(x, y, reduction=red, beta=0.5), F.smooth_l1_loss(x, y, reduction=red, beta=0.0)
                        if nm == "huber_loss":
                            return F.huber_loss(x, y, reduction=red, delta=0.7)
                        return getattr(F, nm)(x, y, reduction=red)
                    check(f"loss {nm}", f"{d} {red} {shp}", f)
        # kl_div log_target, batchmean
        for red in ["batchmean", "mean", "sum"]:
            check("kl_div log_target", f"{red} {d}", lambda L: NF(L).kl_div(R(L, (3, 4), d), R(L, (3, 4), d, 5), reduction=red, log_target=True))
        check("bce weight", d, lambda L: NF(L).binary_cross_entropy(PROB(L, (3, 4), d), PROB(L, (3, 4), d, 1), weight=P(L, (4,), d)))
        check("bce bcast bad", d, lambda L: NF(L).binary_cross_entropy(PROB(L, (3, 4), d), PROB(L, (4,), d, 1)))
        check("mse bcast", d, lambda L: NF(L).mse_loss(R(L, (3, 4), d), R(L, (4,), d, 1)))
        check("bce out of range", d, lambda L: NF(L).binary_cross_entropy(R(L, (3, 4), d), PROB(L, (3, 4), d, 1)))
        check("bce 0/1", d, lambda L: NF(L).binary_cross_entropy(L.tensor([0.0, 1.0, 1.0], dtype=dt(L, d)), L.tensor([1.0, 0.0, 1.0], dtype=dt(L, d))))
        check("bcewl weight", d, lambda L: NF(L).binary_cross_entropy_with_logits(R(L, (3, 4), d), PROB(L, (3, 4), d, 1), weight=P(L, (3, 1), d)))
        # CE / nll
        for red in ["mean", "sum", "none"]:
            for ii in [-100, 1, -1]:
                for ls in [0.0, 0.2]:
                    for w in [False, True]:
                        for shp in [(5, 4), (4,), (2, 4, 3), (2, 4, 3, 2), (0, 4)]:
                            def f(L, red=red, ii=ii, ls=ls, w=w, shp=shp):
                                F = NF(L)
                                x = R(L, shp, d, 1)
                                C = shp[1] if len(shp) > 1 else shp[0]
                                tshape = (shp[0],) + shp[2:] if len(shp) > 1 else ()
                                rng = np.random.default_rng(7)
                                tv = rng.integers(0, C, tshape)
                                if tv.size:
                                    tv.ravel()[0] = 1 if ii == 1 else tv.ravel()[0]
                                t = L.tensor(tv, dtype=L.int64)
                                wt = P(L, (C,), d, 4) if w else None
                                return F.cross_entropy(x, t, weight=wt, ignore_index=ii, reduction=red, label_smoothing=ls), \
                                    F.nll_loss(F.log_softmax(x, 1 if len(shp) > 1 else 0), t, weight=wt, ignore_index=ii, reduction=red)
                            check("ce/nll", f"{d} {red} ii={ii} ls={ls} w={w} {shp}", f)
            for ls in [0.0, 0.3]:
                check("ce probs", f"{red} {ls} {d}", lambda L: NF(L).cross_entropy(R(L, (3, 4), d), L.softmax(R(L, (3, 4), d, 9), 1), reduction=red, label_smoothing=ls, weight=P(L, (4,), d)))
        check("ce all ignored", d, lambda L: NF(L).cross_entropy(R(L, (3, 4), d), L.tensor([1, 1, 1]), ignore_index=1))
        check("nll all ignored", d, lambda L: NF(L).nll_loss(R(L, (3, 4), d), L.tensor([1, 1, 1]), ignore_index=1))
        check("nll all ignored w", d, lambda L: NF(L).nll_loss(R(L, (3, 4), d), L.tensor([1, 1, 1]), ignore_index=1, weight=P(L, (4,), d)))
        check("ce oob target", d, lambda L: NF(L).cross_entropy(R(L, (3, 4), d), L.tensor([1, 4, 0])))
        check("ce neg target", d, lambda L: NF(L).cross_entropy(R(L, (3, 4), d), L.tensor([1, -2, 0])))
        check("ce int32 target", d, lambda L: NF(L).cross_entropy(R(L, (3, 4), d), L.tensor([1, 2, 0], dtype=L.int32)))
        check("ce bad shape", d, lambda L: NF(L).cross_entropy(R(L, (3, 4), d), L.tensor([1, 2])))
        check("ce bad ls", d, lambda L: NF(L).cross_entropy(R(L, (3, 4), d), L.tensor([1, 2, 0]), label_smoothing=1.5))
        check("ce float target wrongshape", d, lambda L: NF(L).cross_entropy(R(L, (3, 4), d), R(L, (3, 3), d)))
        # margin losses
        for red in ["mean", "sum", "none"]:
            check("margin_ranking", f"{red} {d}", lambda L: NF(L).margin_ranking_loss(R(L, (5,), d), R(L, (5,), d, 1), L.sign(R(L, (5,), d, 2)), margin=0.3, reduction=red))
            check("cosine_embedding", f"{red} {d}", lambda L: NF(L).cosine_embedding_loss(R(L, (5, 3), d), R(L, (5, 3), d, 1), L.tensor([1, -1, 1, -1, 1]), margin=0.2, reduction=red))
            check("cosine_embedding 1d", f"{red} {d}", lambda L: NF(L).cosine_embedding_loss(R(L, (3,), d), R(L, (3,), d, 1), L.tensor(-1), reduction=red))
            check("multilabel_margin", f"{red} {d}", lambda L: NF(L).multilabel_margin_loss(R(L, (3, 4), d), L.tensor([[3, 0, -1, 1], [0, 1, 2, 3], [-1, 0, 0, 0]]), reduction=red))
            check("multilabel_margin 1d", f"{red} {d}", lambda L: NF(L).multilabel_margin_loss(R(L, (4,), d), L.tensor([3, 0, -1, 1]), reduction=red))
            check("multilabel_soft_margin", f"{red} {d}", lambda L: NF(L).multilabel_soft_margin_loss(R(L, (3, 4), d), (R(L, (3, 4), d, 1) > 0).to(dt(L, d)), weight=P(L, (4,), d), reduction=red))
            for p in [1, 2]:
                check("multi_margin", f"{red} p={p} {d}", lambda L: NF(L).multi_margin_loss(R(L, (3, 4), d), L.tensor([3, 0, 1]), p=p, margin=0.7, weight=P(L, (4,), d), reduction=red))
                check("multi_margin 1d", f"{red} p={p} {d}", lambda L: NF(L).multi_margin_loss(R(L, (4,), d), L.tensor([2]), p=p, reduction=red))
            check("triplet", f"{red} {d}", lambda L: NF(L).triplet_margin_loss(R(L, (4, 3), d), R(L, (4, 3), d, 1), R(L, (4, 3), d, 2), margin=0.5, p=1.5, swap=True, reduction=red))
            check("triplet 1d", f"{red} {d}", lambda L: NF(L).triplet_margin_loss(R(L, (3,), d), R(L, (3,), d, 1), R(L, (3,), d, 2), reduction=red))
            check("triplet_dist", f"{red} {d}", lambda L: NF(L).triplet_margin_with_distance_loss(R(L, (4, 3), d), R(L, (4, 3), d, 1), R(L, (4, 3), d, 2), swap=True, reduction=red))
            check("ctc", f"{red} {d}", lambda L: NF(L).ctc_loss(NF(L).log_softmax(R(L, (6, 2, 4), d), 2), L.tensor([[1, 2, 2], [3, 1, 0]]), L.tensor([6, 5]), L.tensor([3, 2]), reduction=red))
            check("ctc zero_inf", f"{red} {d}", lambda L: NF(L).ctc_loss(NF(L).log_softmax(R(L, (3, 2, 4), d), 2), L.tensor([[1, 2, 2], [3, 3, 3]]), L.tensor([3, 3]), L.tensor([3, 3]), reduction=red, zero_infinity=True))
            check("ctc 1d target", f"{red} {d}", lambda L: NF(L).ctc_loss(NF(L).log_softmax(R(L, (6, 2, 4), d), 2), L.tensor([1, 2, 2, 3, 1]), L.tensor([6, 5]), L.tensor([3, 2]), reduction=red, blank=3))

if which in ("all", "pool"):
    F_ = None
    for d in ["float32", "float64", "int64"]:
        for nd in [1, 2, 3]:
            shp = (2, 3) + (7, 6, 5)[:nd]
            for k, s, p, dil, cm in [(2, None, 0, 1, False), (3, 2, 1, 1, True), (2, 2, 1, 2, False), (3, 3, 0, 1, True), (2, 1, 0, 1, False), (4, 3, 2, 1, True)]:
                for ri in [False, True]:
                    def f(L, nd=nd, k=k, s=s, p=p, dil=dil, cm=cm, ri=ri, d=d, shp=shp):
                        return getattr(NF(L), f"max_pool{nd}d")(make(L, d, "contig", shp, seed=3, special=(d != "int64")), k, s, p, dil, ceil_mode=cm, return_indices=ri)
                    check(f"max_pool{nd}d", f"{d} k{k} s{s} p{p} d{dil} cm{cm} ri{ri}", f)
                for cip in [True, False]:
                    for dov in [None, 2]:
                        if nd == 1 and dov:
                            continue
                        def f(L, nd=nd, k=k, s=s, p=p, cm=cm, cip=cip, dov=dov, d=d, shp=shp):
                            kw = dict(ceil_mode=cm, count_include_pad=cip)
                            if nd > 1:
                                kw["divisor_override"] = dov
                            return getattr(NF(L), f"avg_pool{nd}d")(make(L, d, "contig", shp, seed=3, special=False), k, s, p, **kw)
                        check(f"avg_pool{nd}d", f"{d} k{k} s{s} p{p} cm{cm} cip{cip} dov{dov}", f)
            for osz in [1, 3, 4, None]:
                for ri in [False, True]:
                    o = osz if osz is None else (osz,) * nd
                    if o is None:
                        o = (None,) + (2,) * (nd - 1) if nd > 1 else 2
                    check(f"adaptive_max_pool{nd}d", f"{d} {o} {ri}", lambda L: getattr(NF(L), f"adaptive_max_pool{nd}d")(make(L, d, "contig", shp, seed=4, special=False), o, return_indices=ri))
                check(f"adaptive_avg_pool{nd}d", f"{d} {o}", lambda L: getattr(NF(L), f"adaptive_avg_pool{nd}d")(make(L, d, "contig", shp, seed=4, special=False), o))
            if nd < 3:
                for nt in [1, 2, 3.5]:
                    for cm in [False, True]:
                        check(f"lp_pool{nd}d", f"{d} {nt} {cm}", lambda L: getattr(NF(L), f"lp_pool{nd}d")(make(L, d, "contig", shp, seed=4, special=False).abs(), nt, 2, 1 if nd == 1 else (2, 1), ceil_mode=cm))
            # unbatched
            check(f"max_pool{nd}d unbatched", d, lambda L: getattr(NF(L), f"max_pool{nd}d")(make(L, d, "contig", shp[1:], seed=3, special=False), 2))
            check(f"avg_pool{nd}d unbatched", d, lambda L: getattr(NF(L), f"avg_pool{nd}d")(make(L, d, "contig", shp[1:], seed=3, special=False), 2))
            # unpool
            if nd < 3:
                def f(L, nd=nd, d=d, shp=shp):
                    F = NF(L)
                    y, i = getattr(F, f"max_pool{nd}d")(make(L, d, "contig", shp, seed=3, special=False), 2, return_indices=True)
                    return getattr(F, f"max_unpool{nd}d")(y, i, 2), getattr(F, f"max_unpool{nd}d")(y, i, 2, output_size=tuple(x + 1 for x in shp[2:]))
                check(f"max_unpool{nd}d", d, f)
    # errors
    check("max_pool2d pad too big", "", lambda L: NF(L).max_pool2d(R(L, (1, 1, 4, 4)), 2, 2, 2))
    check("max_pool2d k too big", "", lambda L: NF(L).max_pool2d(R(L, (1, 1, 2, 2)), 3))
    check("avg_pool2d pad too big", "", lambda L: NF(L).avg_pool2d(R(L, (1, 1, 4, 4)), 2, 2, 2))
    check("avg_pool2d dov 0", "", lambda L: NF(L).avg_pool2d(R(L, (1, 1, 4, 4)), 2, divisor_override=0))
    check("max_pool1d 2d in", "", lambda L: NF(L).max_pool1d(R(L, (4,)), 2))
    check("adaptive 0", "", lambda L: NF(L).adaptive_avg_pool2d(R(L, (1, 2, 4, 4)), 0))
    check("max_pool2d stride 0", "", lambda L: NF(L).max_pool2d(R(L, (1, 1, 4, 4)), 2, 0))

if which in ("all", "conv"):
    for d in ["float32", "float64"]:
        for nd in [1, 2, 3]:
            sp = (6, 5, 4)[:nd]
            for st, pad, dil, g, pm in [(1, 0, 1, 1, "zeros"), (2, 1, 1, 1, "zeros"), (1, 2, 2, 1, "reflect"), (1, 1, 1, 2, "circular"),
                                         (1, "same", 1, 1, "zeros"), (1, "valid", 2, 2, "replicate"), (2, "same", 1, 1, "zeros"), (1, "same", 2, 1, "reflect")]:
                for bias in [False, True]:
                    def f(L, nd=nd, st=st, pad=pad, dil=dil, g=g, bias=bias, d=d, sp=sp, pm=pm):
                        x = R(L, (2, 4) + sp, d, 1)
                        w = R(L, (6, 4 // g) + (3,) * nd, d, 2)
                        b = R(L, (6,), d, 3) if bias else None
                        F = NF(L)
                        if pm != "zeros":
                            if pad in ("same", "valid"):
                                return getattr(L.nn, f"Conv{nd}d")(4, 6, 3, st, pad, dil, g, bias, pm).to(dt(L, d))(x).shape
                            m = getattr(L.nn, f"Conv{nd}d")(4, 6, 3, st, pad, dil, g, bias, pm).to(dt(L, d))
                            with L.no_grad():
                                m.weight.copy_(w)
                                if bias:
                                    m.bias.copy_(b)
                            return m(x)
                        return getattr(F, f"conv{nd}d")(x, w, b, st, pad, dil, g)
                    check(f"conv{nd}d", f"{d} st{st} p{pad} dl{dil} g{g} b{bias} {pm}", f, ctx=dict(tolmul=10))
            for st, pad, op, dil, g in [(1, 0, 0, 1, 1), (2, 1, 1, 1, 1), (2, 0, 1, 2, 2), (3, 2, 2, 1, 1), (1, 1, 0, 2, 2), (2, 0, 2, 1, 1)]:
                def f(L, nd=nd, st=st, pad=pad, op=op, dil=dil, g=g, d=d, sp=sp):
                    x = R(L, (2, 4) + sp, d, 1)
                    w = R(L, (4, 6 // g) + (3,) * nd, d, 2)
                    return getattr(NF(L), f"conv_transpose{nd}d")(x, w, R(L, (6,), d, 3), st, pad, op, g, dil)
                check(f"conv_transpose{nd}d", f"{d} st{st} p{pad} op{op} dl{dil} g{g}", f, ctx=dict(tolmul=10))
            check(f"conv{nd}d unbatched", d, lambda L: getattr(NF(L), f"conv{nd}d")(R(L, (4,) + sp, d, 1), R(L, (6, 4) + (3,) * nd, d, 2)), ctx=dict(tolmul=10))
    check("conv2d bad groups", "", lambda L: NF(L).conv2d(R(L, (1, 4, 5, 5)), R(L, (6, 4, 3, 3)), groups=2))
    check("conv2d chan mismatch", "", lambda L: NF(L).conv2d(R(L, (1, 4, 5, 5)), R(L, (6, 3, 3, 3))))
    check("conv2d too small", "", lambda L: NF(L).conv2d(R(L, (1, 4, 2, 2)), R(L, (6, 4, 3, 3))))
    check("conv2d same stride2", "", lambda L: NF(L).conv2d(R(L, (1, 4, 5, 5)), R(L, (6, 4, 3, 3)), stride=2, padding="same"))
    check("conv2d dtype mix", "", lambda L: NF(L).conv2d(R(L, (1, 4, 5, 5)), R(L, (6, 4, 3, 3), "float64")))
    check("conv2d int", "", lambda L: NF(L).conv2d(R(L, (1, 4, 5, 5), "int64"), R(L, (6, 4, 3, 3), "int64")))
    check("conv_transpose out>=", "", lambda L: NF(L).conv_transpose2d(R(L, (1, 4, 5, 5)), R(L, (4, 2, 3, 3)), stride=2, output_padding=2))

if which in ("all", "misc"):
    for d in ["float32", "float64"]:
        # linear/bilinear
        check("linear", d, lambda L: NF(L).linear(R(L, (2, 3, 4), d), R(L, (5, 4), d, 1), R(L, (5,), d, 2)))
        check("linear 1d w", d, lambda L: NF(L).linear(R(L, (2, 4), d), R(L, (4,), d, 1)))
        check("linear 1d w bias", d, lambda L: NF(L).linear(R(L, (2, 4), d), R(L, (4,), d, 1), R(L, (), d, 2)))
        check("linear mismatch", d, lambda L: NF(L).linear(R(L, (2, 4), d), R(L, (5, 3), d, 1)))
        check("bilinear", d, lambda L: NF(L).bilinear(R(L, (2, 3), d), R(L, (2, 4), d, 1), R(L, (5, 3, 4), d, 2), R(L, (5,), d, 3)))
        check("bilinear nobias 3d", d, lambda L: NF(L).bilinear(R(L, (2, 2, 3), d), R(L, (2, 2, 4), d, 1), R(L, (5, 3, 4), d, 2)))
        # norms
        for shp in [(2, 3, 4), (2, 3), (2, 3, 4, 5)]:
            for tr in [False, True]:
                def f(L, shp=shp, tr=tr, d=d):
                    x = R(L, shp, d, 1)
                    rm, rv = R(L, (3,), d, 2), P(L, (3,), d, 3)
                    y = NF(L).batch_norm(x, rm, rv, P(L, (3,), d, 4), R(L, (3,), d, 5), training=tr, momentum=0.3, eps=1e-3)
                    return y, rm, rv
                check("batch_norm", f"{d} {shp} tr={tr}", f)
                check("batch_norm nostat", f"{d} {shp}", lambda L: NF(L).batch_norm(R(L, shp, d, 1), None, None, training=True))
                def f(L, shp=shp, tr=tr, d=d):
                    x = R(L, shp, d, 1)
                    rm, rv = R(L, (3,), d, 2), P(L, (3,), d, 3)
                    y = NF(L).instance_norm(x, rm if tr else None, rv if tr else None, P(L, (3,), d, 4), R(L, (3,), d, 5), use_input_stats=True, momentum=0.3)
                    return y, rm, rv
                if len(shp) > 2:
                    check("instance_norm", f"{d} {shp} stats={tr}", f)
            check("layer_norm", f"{d} {shp}", lambda L: NF(L).layer_norm(R(L, shp, d, 1), shp[-1:], P(L, shp[-1:], d, 2), R(L, shp[-1:], d, 3), eps=1e-3))
            check("layer_norm 2", f"{d} {shp}", lambda L: NF(L).layer_norm(R(L, shp, d, 1), shp[-2:]))
            check("rms_norm", f"{d} {shp}", lambda L: NF(L).rms_norm(R(L, shp, d, 1), shp[-1:], P(L, shp[-1:], d, 2)))
            check("rms_norm eps", f"{d} {shp}", lambda L: NF(L).rms_norm(R(L, shp, d, 1), shp[-2:], eps=0.5))
            check("group_norm", f"{d} {shp}", lambda L: NF(L).group_norm(R(L, (2, 6) + shp[2:], d, 1), 3, P(L, (6,), d, 2), R(L, (6,), d, 3)))
            check("local_response_norm", f"{d} {shp}", lambda L: NF(L).local_response_norm(R(L, shp, d, 1), 2))
        check("batch_norm 1 per chan", d, lambda L: NF(L).batch_norm(R(L, (1, 3), d), None, None, training=True))
        check("group_norm bad", d, lambda L: NF(L).group_norm(R(L, (2, 6, 3), d), 4))
        check("layer_norm bad", d, lambda L: NF(L).layer_norm(R(L, (2, 6, 3), d), (6,)))
        # embedding
        for kw in [dict(), dict(padding_idx=1), dict(padding_idx=-1), dict(max_norm=1.0), dict(max_norm=1.0, norm_type=1.0), dict(scale_grad_by_freq=True)]:
            def f(L, kw=kw, d=d):
                w = R(L, (5, 3), d, 1)
                return NF(L).embedding(L.tensor([[0, 1, 1], [4, 2, 1]]), w, **kw), w
            check("embedding", f"{d} {kw}", f)
        check("embedding oob", d, lambda L: NF(L).embedding(L.tensor([5]), R(L, (5, 3), d)))
        check("embedding neg", d, lambda L: NF(L).embedding(L.tensor([-1]), R(L, (5, 3), d)))
        check("embedding float idx", d, lambda L: NF(L).embedding(L.tensor([1.0]), R(L, (5, 3), d)))
        check("embedding pad oob", d, lambda L: NF(L).embedding(L.tensor([1]), R(L, (5, 3), d), padding_idx=5))
        for mode in ["sum", "mean", "max"]:
            for psw in [False, True]:
                if psw and mode != "sum":
                    continue
                for pidx in [None, 1]:
                    def f(L, mode=mode, psw=psw, pidx=pidx, d=d):
                        w = R(L, (6, 3), d, 1)
                        F = NF(L)
                        a = F.embedding_bag(L.tensor([[0, 1, 1], [4, 2, 1]]), w, mode=mode, per_sample_weights=P(L, (2, 3), d, 2) if psw else None, padding_idx=pidx)
                        b = F.embedding_bag(L.tensor([0, 1, 1, 4, 2, 5, 1]), w, L.tensor([0, 2, 2, 5]), mode=mode, per_sample_weights=P(L, (7,), d, 2) if psw else None, padding_idx=pidx)
                        c = F.embedding_bag(L.tensor([0, 1, 1, 4, 2, 5, 1]), w, L.tensor([0, 2, 2, 7]), mode=mode, include_last_offset=True, padding_idx=pidx)
                        return a, b, c
                    check("embedding_bag", f"{d} {mode} psw={psw} pidx={pidx}", f)
        # one_hot
        check("one_hot", "", lambda L: NF(L).one_hot(L.tensor([[0, 2], [1, 3]])))
        check("one_hot n", "", lambda L: NF(L).one_hot(L.tensor([0, 2]), 5))
        check("one_hot small", "", lambda L: NF(L).one_hot(L.tensor([0, 5]), 3))
        check("one_hot neg", "", lambda L: NF(L).one_hot(L.tensor([0, -1])))
        check("one_hot float", "", lambda L: NF(L).one_hot(L.tensor([0.0, 1.0])))
        check("one_hot empty", "", lambda L: NF(L).one_hot(L.tensor([], dtype=L.int64), 3))
        check("one_hot empty -1", "", lambda L: NF(L).one_hot(L.tensor([], dtype=L.int64)))
        # distances
        for p in [1, 2, 3.5, 0, float("inf")]:
            check("pairwise_distance", f"{d} {p}", lambda L: NF(L).pairwise_distance(R(L, (3, 4), d), R(L, (3, 4), d, 1), p=p, eps=1e-3))
            check("pairwise_distance keep", f"{d} {p}", lambda L: NF(L).pairwise_distance(R(L, (4,), d), R(L, (3, 4), d, 1), p=p, keepdim=True))
            check("pdist", f"{d} {p}", lambda L: NF(L).pdist(R(L, (4, 3), d), p=p))
            check("cdist", f"{d} {p}", lambda L: L.cdist(R(L, (2, 4, 3), d), R(L, (2, 5, 3), d, 1), p=p))
        check("cosine_similarity", d, lambda L: NF(L).cosine_similarity(R(L, (3, 4), d), R(L, (1, 4), d, 1), dim=1, eps=1e-3))
        check("cosine_similarity zero", d, lambda L: NF(L).cosine_similarity(L.zeros(3, 4, dtype=dt(L, d)), R(L, (1, 4), d, 1)))
        check("cosine_similarity bcast", d, lambda L: NF(L).cosine_similarity(R(L, (2, 1, 4), d), R(L, (3, 4), d, 1), dim=-1))
        # pad
        for mode in ["constant", "reflect", "replicate", "circular"]:
            for shp, pd in [((2, 3, 5), (1, 2)), ((2, 3, 4, 5), (1, 2, 0, 1)), ((1, 2, 3, 4, 5), (1, 1, 2, 0, 1, 2)), ((2, 3, 5), (-1, 2)),
                            ((3, 5), (2, 1)), ((2, 3, 4, 5), (1, 1)), ((2, 3, 5), (5, 0)), ((4,), (1, 1)), ((2, 3, 4), (1, 1, 1, 1))]:
                check(f"pad {mode}", f"{d} {shp} {pd}", lambda L: NF(L).pad(R(L, shp, d, 1), pd, mode=mode, value=None if mode != "constant" else 2.5))
        check("pad int", "", lambda L: NF(L).pad(R(L, (2, 3), "int64"), (1, 1), value=2.7))
        check("pad bool", "", lambda L: NF(L).pad(R(L, (2, 3), "bool"), (1, 1), value=1))
        check("pad odd", "", lambda L: NF(L).pad(R(L, (2, 3)), (1,)))
        check("pad bad mode", "", lambda L: NF(L).pad(R(L, (2, 3)), (1, 1), mode="foo"))
        # interpolate
        for mode in ["nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area"]:
            nd = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(mode)
            for n in ([nd] if nd else [1, 2, 3]):
                shp = (1, 2) + (5, 4, 3)[:n]
                for ac in ([None] if mode in ("nearest", "nearest-exact", "area") else [False, True]):
                    for sz, sf in [(None, 2), (None, 0.6), (None, 1.7), ((7, 3, 4)[:n], None), ((2, 2, 1)[:n], None), (None, (1.5, 0.5, 2.0)[:n])]:
                        for rsf in ([None, True] if sf else [None]):
                            def f(L, mode=mode, n=n, shp=shp, ac=ac, sz=sz, sf=sf, rsf=rsf, d=d):
                                kw = dict(size=sz, scale_factor=sf, mode=mode)
                                if ac is not None:
                                    kw["align_corners"] = ac
                                if rsf is not None:
                                    kw["recompute_scale_factor"] = rsf
                                return NF(L).interpolate(R(L, shp, d, 1), **kw)
                            check(f"interpolate {mode}", f"{d} n{n} ac{ac} sz{sz} sf{sf} rsf{rsf}", f, ctx=dict(tolmul=5))
        check("interpolate antialias", d, lambda L: NF(L).interpolate(R(L, (1, 2, 8, 8), d), size=(3, 5), mode="bilinear", antialias=True))
        check("interpolate antialias bicubic", d, lambda L: NF(L).interpolate(R(L, (1, 2, 8, 8), d), size=(3, 5), mode="bicubic", antialias=True))
        check("interpolate both", d, lambda L: NF(L).interpolate(R(L, (1, 2, 8), d), size=3, scale_factor=2))
        check("interpolate none", d, lambda L: NF(L).interpolate(R(L, (1, 2, 8), d)))
        check("interpolate ac nearest", d, lambda L: NF(L).interpolate(R(L, (1, 2, 8), d), size=3, align_corners=True))
        check("upsample", d, lambda L: NF(L).upsample(R(L, (1, 2, 4), d), scale_factor=2))
        check("upsample_nearest", d, lambda L: NF(L).upsample_nearest(R(L, (1, 2, 4, 3), d), scale_factor=2))
        check("upsample_bilinear", d, lambda L: NF(L).upsample_bilinear(R(L, (1, 2, 4, 3), d), size=(5, 7)))
        # grid_sample / affine_grid
        for mode in ["bilinear", "nearest", "bicubic"]:
            for pm in ["zeros", "border", "reflection"]:
                for ac in [False, True]:
                    def f(L, mode=mode, pm=pm, ac=ac, d=d):
                        g = R(L, (2, 3, 4, 2), d, 2) * 0.7
                        return NF(L).grid_sample(R(L, (2, 3, 5, 6), d, 1), g, mode=mode, padding_mode=pm, align_corners=ac)
                    check("grid_sample 2d", f"{d} {mode} {pm} {ac}", f, ctx=dict(tolmul=10))
                    if mode != "bicubic":
                        def f(L, mode=mode, pm=pm, ac=ac, d=d):
                            g = R(L, (1, 2, 3, 2, 3), d, 2) * 0.7
                            return NF(L).grid_sample(R(L, (1, 2, 4, 3, 5), d, 1), g, mode=mode, padding_mode=pm, align_corners=ac)
                        check("grid_sample 3d", f"{d} {mode} {pm} {ac}", f, ctx=dict(tolmul=10))
        for ac in [False, True]:
            check("affine_grid 2d", f"{d} {ac}", lambda L: NF(L).affine_grid(R(L, (2, 2, 3), d), [2, 3, 4, 5], align_corners=ac))
            check("affine_grid 3d", f"{d} {ac}", lambda L: NF(L).affine_grid(R(L, (2, 3, 4), d), [2, 3, 4, 5, 2], align_corners=ac))
        # pixel shuffle, fold/unfold, channel_shuffle
        check("pixel_shuffle", d, lambda L: NF(L).pixel_shuffle(R(L, (2, 8, 3, 2), d), 2))
        check("pixel_unshuffle", d, lambda L: NF(L).pixel_unshuffle(R(L, (2, 2, 4, 6), d), 2))
        check("pixel_shuffle bad", d, lambda L: NF(L).pixel_shuffle(R(L, (2, 6, 3, 2), d), 2))
        check("channel_shuffle", d, lambda L: NF(L).channel_shuffle(R(L, (2, 6, 3), d), 3))
        for k, dil, pd, st in [(2, 1, 0, 1), (3, 2, 1, 2), ((2, 3), (1, 2), (1, 0), (2, 1))]:
            check("unfold", f"{d} {k} {dil} {pd} {st}", lambda L: NF(L).unfold(R(L, (2, 3, 6, 7), d), k, dil, pd, st))
            check("unfold unbatched", f"{d} {k}", lambda L: NF(L).unfold(R(L, (3, 6, 7), d), k, dil, pd, st))
            def f(L, k=k, dil=dil, pd=pd, st=st, d=d):
                u = NF(L).unfold(R(L, (2, 3, 6, 7), d), k, dil, pd, st)
                return NF(L).fold(u, (6, 7), k, dil, pd, st)
            check("fold", f"{d} {k} {dil} {pd} {st}", f)
        check("fold bad", d, lambda L: NF(L).fold(R(L, (2, 12, 5), d), (4, 4), 2))
        # attention
        for causal in [False, True]:
            for mask in [None, "bool", "float"]:
                for gqa in [False, True]:
                    def f(L, causal=causal, mask=mask, gqa=gqa, d=d):
                        q = R(L, (2, 4, 3, 5), d, 1)
                        k = R(L, (2, 2 if gqa else 4, 6, 5), d, 2)
                        v = R(L, (2, 2 if gqa else 4, 6, 7), d, 3)
                        m = None
                        if mask == "bool":
                            m = R(L, (3, 6), "bool", 4)
                            m[:, 0] = True
                        elif mask == "float":
                            m = R(L, (2, 1, 3, 6), d, 4)
                        if causal and m is not None:
                            return NF(L).scaled_dot_product_attention(q, k, v, m, is_causal=True)
                        return NF(L).scaled_dot_product_attention(q, k, v, m, is_causal=causal, scale=0.3, enable_gqa=gqa)
                    check("sdpa", f"{d} causal={causal} mask={mask} gqa={gqa}", f)
        def f(L, d=d):
            L.manual_seed(0)
            mha = L.nn.MultiheadAttention(6, 2, batch_first=True).to(dt(L, d))
            sd = {k: R(L, tuple(v.shape), d, i) for i, (k, v) in enumerate(sorted(mha.state_dict().items()))}
            mha.load_state_dict(sd)
            q = R(L, (2, 3, 6), d, 11)
            return mha(q, q, q, key_padding_mask=L.tensor([[False, False, True], [False, False, False]]))
        check("mha", d, f)
        def f(L, d=d):
            F = NF(L)
            E = 4
            q = R(L, (3, 2, E), d, 1)
            return F.multi_head_attention_forward(q, q, q, E, 2, R(L, (3 * E, E), d, 2), R(L, (3 * E,), d, 3), None, None, False, 0.0,
                                                  R(L, (E, E), d, 4), R(L, (E,), d, 5), training=False, need_weights=True, average_attn_weights=False)
        check("mha_forward", d, f)
report(maxper=int(os.environ.get("MAXPER", 4)))
