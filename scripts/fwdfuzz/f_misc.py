import sys
from core import *  # noqa

which = sys.argv[1] if len(sys.argv) > 1 else "all"
NAN, INF = float("nan"), float("inf")


def shares(L, a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() if L is torch else \
        a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


if which in ("all", "index"):
    keys = [0, -1, 3, -4, 5, -5, slice(None), slice(1, None), slice(None, None, 2), slice(-3, -1), slice(5, 10),
            slice(None, None, -1), slice(0, 0), (0, 1), (-1, -1), (Ellipsis, 0), (None, 0), (slice(None), None),
            (0, Ellipsis, 1), (Ellipsis, None), (slice(1, 3), slice(None, None, 3)), [0, 2], [-1, 0], [3],
            [[0, 1], [1, 2]], (0, [1, 2]), ([0, 2], [1, 3]), ([0, 2], slice(None)), (slice(None), [0, 3]),
            ([0], [1, 2]), ([0, 1], [1, 2, 3]), True, False, None, Ellipsis, (Ellipsis, Ellipsis),
            (0, 0, 0), [True, False, True], [True, False], [[True, False, True, False]] * 3, 1.5,
            ([True, False, True], 0), (slice(None), [True, False, True, False]), ([], ), [],
            (0, [0, 1], slice(None)), ([0, 1], slice(None), None), ([[0], [2]], [1, 3]), ([0, 2], None, [1, 3])]
    for d in ["float32", "int64", "bool", "float16"]:
        for lay in ["contig", "transposed", "sliced", "expanded"]:
            for k in keys:
                def f(L, k=k):
                    x = make(L, d, lay, seed=21)
                    kk = k
                    if isinstance(k, list) and k and isinstance(k[0], (bool, list)) and (k[0] is True or k[0] is False or (isinstance(k[0], list) and isinstance(k[0][0], bool))):
                        kk = L.tensor(k)
                    elif isinstance(k, list):
                        kk = L.tensor(k, dtype=L.int64) if k else L.tensor(k, dtype=L.int64)
                    elif isinstance(k, tuple):
                        kk = tuple(L.tensor(e) if isinstance(e, list) else e for e in k)
                    r = x[kk]
                    return r, tuple(r.stride()) if r.is_contiguous() or True else None, shares(L, r, x)
                check("getitem", f"{d} {lay} {k!r}", f)
                # python-list keys (not tensors)
                check("getitem pylist", f"{d} {lay} {k!r}", lambda L: make(L, d, lay, seed=21)[k])
    # bool mask tensors
    for mshape in [(3, 4), (3,), (4,), (2, 4), (3, 4, 1), (), (1, 4)]:
        check("getitem mask", f"{mshape}", lambda L: make(L, "float32", "contig", seed=21)[
            L.from_numpy(values("bool", mshape, 3))])
    # int tensor index dtypes
    for idt in ["int64", "int32", "int16", "int8", "uint8", "float32"]:
        check("getitem idx dtype", idt, lambda L: make(L, "float32", "contig", seed=21)[L.tensor([0, 2, 1], dtype=dt(L, idt))])
    # 0-d tensor index
    check("getitem 0d idx", "", lambda L: make(L, "float32", "contig", seed=21)[L.tensor(1)])
    check("getitem 0d bool", "", lambda L: make(L, "float32", "contig", seed=21)[L.tensor(True)])
    check("getitem 0d x", "", lambda L: make(L, "float32", "zerod", seed=21)[None])
    check("getitem 0d x[...]", "", lambda L: make(L, "float32", "zerod", seed=21)[...])
    check("getitem 0d x[0]", "", lambda L: make(L, "float32", "zerod", seed=21)[0])
    check("getitem 0d x[mask]", "", lambda L: make(L, "float32", "zerod", seed=21)[L.tensor(True)])

if which in ("all", "setitem"):
    skeys = [0, -1, slice(None), (slice(None), 1), (Ellipsis, 0), [0, 2], ([0, 2], [1, 3]), (0, [1, 2]), 5,
             [[True, False, True, False]] * 3, [True, False, True], (slice(None, None, 2), slice(1, 3)), None]
    vals = [1, 2.5, True, -1, NAN, ("t", "float32", (4,)), ("t", "int64", ()), ("t", "float64", (3, 1)),
            ("t", "float32", (5,)), ("t", "bool", (1, 4)), ("t", "float32", (2, 4)), ("t", "float32", (1, 1, 4))]
    for d in ["float32", "int64", "bool", "uint8", "float16", "int8"]:
        for k in skeys:
            for v in vals:
                def f(L, k=k, v=v):
                    x = make(L, d, "contig", seed=22)
                    kk = k
                    if isinstance(k, list) and isinstance(k[0], (bool, list)) and (k[0] is True or (isinstance(k[0], list) and isinstance(k[0][0], bool))):
                        kk = L.tensor(k)
                    elif isinstance(k, list):
                        kk = L.tensor(k)
                    elif isinstance(k, tuple):
                        kk = tuple(L.tensor(e) if isinstance(e, list) else e for e in k)
                    vv = make(L, v[1], "contig", v[2], seed=23) if isinstance(v, tuple) else v
                    x[kk] = vv
                    return x
                check("setitem", f"{d} {k!r} {v!r}", f)
    # setitem into transposed/sliced views writes through
    for lay in ["transposed", "sliced"]:
        def f(L):
            base = make(L, "float32", "contig", (9, 7), seed=24)
            v = base.t()[1:, ::2] if lay == "transposed" else base[1::2, 1::3]
            v[0] = 7.0
            v[:, 1] = L.arange(v.shape[0], dtype=L.float32)
            return base
        check("setitem view", lay, f)
    # setitem on expanded
    check("setitem expanded", "", lambda L: make(L, "float32", "expanded").__setitem__(0, 1.0))

if which in ("all", "views"):
    def vw(name, fn, lays=("contig", "transposed", "sliced", "expanded", "zerod", "empty", "size1")):
        for d in ["float32", "int8"]:
            for lay in lays:
                def f(L):
                    x = make(L, d, lay, seed=25)
                    r = fn(L, x)
                    if isinstance(r, (tuple, list)):
                        return [(e, tuple(e.stride()), e.storage_offset(), shares(L, e, x)) for e in r]
                    return r, tuple(r.stride()), r.storage_offset(), shares(L, r, x)
                check(f"view {name}", f"{d} {lay}", f)
    vw("t", lambda L, x: x.t())
    vw("T", lambda L, x: x.T)
    vw("mT", lambda L, x: x.mT)
    vw("transpose", lambda L, x: x.transpose(0, -1))
    vw("permute", lambda L, x: x.permute(1, 0))
    vw("permute neg", lambda L, x: x.permute(-1, -2))
    vw("view -1", lambda L, x: x.view(-1))
    vw("view 2,-1", lambda L, x: x.view(2, -1))
    vw("view 4,3", lambda L, x: x.view(4, 3))
    vw("view dtype", lambda L, x: x.view(L.uint8))
    vw("reshape", lambda L, x: x.reshape(-1))
    vw("reshape 2,6", lambda L, x: x.reshape(2, 6))
    vw("reshape 0", lambda L, x: x.reshape(0, -1))
    vw("flatten", lambda L, x: x.flatten())
    vw("flatten 0", lambda L, x: x.flatten(0, 0))
    vw("unflatten", lambda L, x: x.unflatten(-1, (2, -1)))
    vw("squeeze", lambda L, x: x.squeeze())
    vw("squeeze 1", lambda L, x: x.squeeze(1))
    vw("squeeze tuple", lambda L, x: x.squeeze((0, 1)))
    vw("unsqueeze", lambda L, x: x.unsqueeze(-1))
    vw("unsqueeze 0", lambda L, x: x.unsqueeze(0))
    vw("unsqueeze bad", lambda L, x: x.unsqueeze(4))
    vw("expand", lambda L, x: x.expand(2, 3, 4))
    vw("expand -1", lambda L, x: x.expand(-1, 4))
    vw("expand_as", lambda L, x: x.expand_as(L.zeros(2, 3, 4)))
    vw("narrow", lambda L, x: x.narrow(-1, 1, 2))
    vw("narrow 0", lambda L, x: x.narrow(0, 1, 2))
    vw("select", lambda L, x: x.select(1, -1))
    vw("select 0", lambda L, x: x.select(0, 2))
    vw("unbind", lambda L, x: x.unbind(1))
    vw("split 2", lambda L, x: x.split(2, 1))
    vw("split list", lambda L, x: x.split([1, 3], 1))
    vw("split 0", lambda L, x: x.split(2))
    vw("chunk 3", lambda L, x: x.chunk(3, 1))
    vw("chunk 5", lambda L, x: x.chunk(5, -1))
    vw("diagonal", lambda L, x: x.diagonal())
    vw("diagonal off", lambda L, x: x.diagonal(1))
    vw("diagonal neg", lambda L, x: x.diagonal(-1, 1, 0))
    vw("movedim", lambda L, x: x.movedim(0, 1))
    vw("swapaxes", lambda L, x: x.swapaxes(0, 1))
    vw("swapdims", lambda L, x: x.swapdims(-1, 0))
    vw("view_as", lambda L, x: x.view_as(L.zeros(12)))
    vw("reshape_as", lambda L, x: x.reshape_as(L.zeros(4, 3)))
    vw("detach", lambda L, x: x.detach())
    vw("contiguous", lambda L, x: x.contiguous())
    vw("flip", lambda L, x: x.flip(0))
    vw("flip neg", lambda L, x: x.flip(-1, 0))
    vw("fliplr", lambda L, x: x.fliplr())
    vw("roll", lambda L, x: x.roll(1))
    vw("roll dims", lambda L, x: x.roll((1, -2), (0, 1)))
    vw("tile", lambda L, x: x.tile((2,)))
    vw("repeat", lambda L, x: x.repeat(2, 1, 1))
    vw("tril", lambda L, x: x.tril(-1))
    vw("triu", lambda L, x: x.triu(1))
    vw("clone", lambda L, x: x.clone())
    vw("to same", lambda L, x: x.to(x.dtype))
    vw("to f64", lambda L, x: x.to(L.float64))
    vw("float", lambda L, x: x.float())
    vw("sum_to_size", lambda L, x: x.sum_to_size(1, 4))
    vw("new_zeros", lambda L, x: x.new_zeros(2, 3))
    vw("new_ones", lambda L, x: x.new_ones((2,)))
    vw("new_full", lambda L, x: x.new_full((2,), 3))
    vw("new_empty", lambda L, x: x.new_empty((2,)).fill_(1))
    vw("new_tensor", lambda L, x: x.new_tensor([1, 2.5]))

if which in ("all", "misc"):
    # cat / stack
    for da in DTYPES:
        for db in DTYPES:
            check("cat promote", f"{da},{db}", lambda L: L.cat([make(L, da, "contig", seed=1), make(L, db, "transposed", seed=2)]))
            check("stack promote", f"{da},{db}", lambda L: L.stack([make(L, da, "contig", seed=1), make(L, db, "sliced", seed=2)], 1))
        check("cat empty1d", da, lambda L: L.cat([make(L, da, "contig"), L.tensor([])]))
        check("cat empty2d", da, lambda L: L.cat([make(L, da, "contig"), L.zeros(0, 4, dtype=dt(L, da))]))
        check("cat 0d", da, lambda L: L.cat([make(L, da, "zerod"), make(L, da, "zerod")]))
        check("cat dim-1", da, lambda L: L.cat([make(L, da, "contig"), make(L, da, "size1")], -1))
        check("cat bad", da, lambda L: L.cat([make(L, da, "contig"), make(L, da, "size1")], 0))
        check("cat empty list", da, lambda L: L.cat([]))
        check("stack bad", da, lambda L: L.stack([make(L, da, "contig"), make(L, da, "size1")]))
        check("stack dim -1", da, lambda L: L.stack([make(L, da, "contig"), make(L, da, "contig")], -1))
        check("stack dim 3", da, lambda L: L.stack([make(L, da, "contig"), make(L, da, "contig")], 3))
        for fn in ["hstack", "vstack", "dstack", "concat", "concatenate"]:
            check(f"{fn}", da, lambda L: getattr(L, fn)([make(L, da, "contig"), make(L, "float32", "contig")]))
            check(f"{fn} 1d", da, lambda L: getattr(L, fn)([make(L, da, "contig", (3,)), make(L, da, "contig", (3,))]))
    # clamp
    for d in DTYPES:
        for lo, hi in [(0, 1), (-1.5, 2.5), (None, 2), (1, None), (2, 1), (0.5, 0.7), (True, None), (NAN, None),
                       (None, None), (-200, 300)]:
            check("clamp", f"{d} {lo},{hi}", lambda L: L.clamp(make(L, d, "contig", seed=31), lo, hi))
            check("clamp_", f"{d} {lo},{hi}", lambda L: make(L, d, "contig", seed=31).clamp_(lo, hi))
            check("clip", f"{d} {lo},{hi}", lambda L: L.clip(make(L, d, "contig", seed=31), min=lo, max=hi))
        for td in DTYPES:
            check("clamp tensor", f"{d} {td}", lambda L: L.clamp(make(L, d, "contig", seed=31),
                                                                  make(L, td, "size1", seed=32), make(L, td, "contig", seed=33)))
        check("clamp_min", d, lambda L: L.clamp_min(make(L, d, "contig", seed=31), 0.5))
        check("clamp_max", d, lambda L: L.clamp_max(make(L, d, "contig", seed=31), 1))
    # round decimals
    for d in DTYPES:
        for dec in [0, 1, 2, -1, -2, 5]:
            check("round decimals", f"{d} {dec}", lambda L: L.round(make(L, d, "contig", seed=34) * 37.123 if d in FLOATS else make(L, d, "contig"), decimals=dec))
            check("round_ decimals", f"{d} {dec}", lambda L: make(L, d, "contig", seed=34).round_(decimals=dec))
    check("round half even", "", lambda L: L.round(L.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 0.25, 0.35, 2.675])))
    check("round half even dec", "", lambda L: L.round(L.tensor([0.25, 0.35, 2.675, 1.005, -0.125]), decimals=2))
    check("round half even dec f64", "", lambda L: L.round(L.tensor([0.25, 0.35, 2.675, 1.005, -0.125], dtype=L.float64), decimals=2))
    # where
    for da in DTYPES:
        for db in DTYPES:
            check("where tt", f"{da},{db}", lambda L: L.where(make(L, "bool", "contig", seed=35), make(L, da, "contig", seed=1), make(L, db, "size1", seed=2)))
        for s in [1, 2.5, True, NAN]:
            check("where ts", f"{da},{s!r}", lambda L: L.where(make(L, "bool", "contig", seed=35), make(L, da, "contig", seed=1), s))
            check("where st", f"{s!r},{da}", lambda L: L.where(make(L, "bool", "contig", seed=35), s, make(L, da, "contig", seed=1)))
            check("method where", f"{da},{s!r}", lambda L: make(L, da, "contig", seed=1).where(make(L, "bool", "contig", seed=35), s))
        check("where cond nonbool", da, lambda L: L.where(make(L, da, "contig", seed=35), 1.0, 0.0))
        check("where 1arg", da, lambda L: L.where(make(L, da, "contig", seed=35)))
    for s1, s2 in [(1, 2), (1.0, 2), (True, False), (1, 2.5), (True, 2)]:
        check("where ss", f"{s1!r},{s2!r}", lambda L: L.where(make(L, "bool", "contig", seed=35), s1, s2))
    # nan_to_num
    for d in DTYPES:
        for kw in [{}, {"nan": 1.0}, {"posinf": 5}, {"neginf": -5.0}, {"nan": 2, "posinf": 3, "neginf": -3}]:
            check("nan_to_num", f"{d} {kw}", lambda L: L.nan_to_num(make(L, d, "contig", (4, 6), seed=36), **kw))
            check("nan_to_num_", f"{d} {kw}", lambda L: make(L, d, "contig", (4, 6), seed=36).nan_to_num_(**kw))
    # linspace/arange/logspace
    for args, kw in [((0, 1, 5), {}), ((0, 1, 1), {}), ((0, 1, 0), {}), ((1, 0, 4), {}), ((0, 10, 5), {"dtype": "int64"}),
                     ((0, 9, 4), {"dtype": "int32"}), ((-1, 1, 7), {"dtype": "float16"}), ((0, 1, 3), {"dtype": "bfloat16"}),
                     ((0, 1, -1), {}), ((0, 5, 6), {"dtype": "uint8"}), ((0.5, 2, 4), {"dtype": "int64"}),
                     ((0, 1, 5), {"dtype": "float64"}), ((0, 1, 5), {"dtype": "bool"}), ((3, 3, 3), {}),
                     ((0, 100, 7), {"dtype": "int8"}), ((-5, 5, 11), {"dtype": "int64"}), ((0, 1, 1000), {}),
                     ((1e-8, 1.0, 3), {}), ((0, 7, 8), {"dtype": "int16"}), ((10, 0, 4), {"dtype": "int64"})]:
        def mk(L, fn):
            k = {kk: (dt(L, v) if kk == "dtype" else v) for kk, v in kw.items()}
            return getattr(L, fn)(*args, **k)
        check("linspace", f"{args} {kw}", lambda L: mk(L, "linspace"))
        check("logspace", f"{args} {kw}", lambda L: mk(L, "logspace"))
    for args, kw in [((5,), {}), ((5.0,), {}), ((0, 1, 0.1), {}), ((0, 1, 0.3), {}), ((1, 0, -0.25), {}),
                     ((0, 10, 3), {"dtype": "float32"}), ((0.5, 3), {}), ((0, 5, 0), {}), ((5, 0), {}),
                     ((0, 5, -1), {}), ((True, 5), {}), ((-3, 3, 2), {"dtype": "int8"}), ((0, 2.5, 0.5), {"dtype": "int64"}),
                     ((0, 1e-3, 1e-4), {}), ((0, 10), {"dtype": "bool"}), ((0, 3), {"dtype": "float16"}),
                     ((0, 300), {"dtype": "uint8"}), ((1, 4), {"dtype": "bfloat16"}), ((10,), {"dtype": "float64"}),
                     ((-1.5, 1.5, 0.5), {}), ((0, float("inf")), {}), ((0, float("nan")), {}), ((0, 1, 1.0 / 3), {}),
                     ((0, 10, 2.0), {}), ((3, 0, -1), {"dtype": "uint8"})]:
        def mk(L):
            k = {kk: (dt(L, v) if kk == "dtype" else v) for kk, v in kw.items()}
            return L.arange(*args, **k)
        check("arange", f"{args} {kw}", mk)
    # tensor from nested lists
    for data in [[1, 2], [1, 2.0], [True, 2], [True, False], [True, 2.5], [[1, 2], [3, 4.5]], [], [[]], [[], []],
                 3, 3.5, True, [1, [2]], [[1, 2], [3]], [2 ** 62], [2 ** 63], [-(2 ** 63)], [1e40], [float("nan")],
                 [[True], [1]], [0.1, 1e-50], (1, 2), [(1, 2), (3, 4)], [[[1]], [[2]]], [1, None], ["a"],
                 [1, 2, 3]]:
        for d in [None, "float16", "int8", "uint8", "bool", "bfloat16", "int64", "float64"]:
            check("tensor()", f"{data!r} {d}", lambda L: L.tensor(data, dtype=dt(L, d)) if d else L.tensor(data))
        check("as_tensor", f"{data!r}", lambda L: L.as_tensor(data))
    check("tensor of 0d tensors", "", lambda L: L.tensor([L.tensor(1.5), L.tensor(2)]))
    check("tensor of 1d tensors", "", lambda L: L.tensor([L.tensor([1.5, 2]), L.tensor([2, 3])]))
    check("tensor of tensor", "", lambda L: L.tensor(L.tensor([1.5, 2])))
    check("tensor int overflow uint8", "", lambda L: L.tensor([300, -1], dtype=L.uint8))
    check("tensor float to int", "", lambda L: L.tensor([1.7, -1.7], dtype=L.int64))
    check("tensor np scalar", "", lambda L: L.tensor(np.float32(1.5)))
    check("tensor np array", "", lambda L: L.tensor(np.array([1, 2], dtype=np.int16)))
    check("tensor list np scalars", "", lambda L: L.tensor([np.float32(1.5), np.float64(2)]))
    check("tensor list np ints", "", lambda L: L.tensor([np.int32(1), np.int8(2)]))
    # tolist/item
    for d in DTYPES:
        for lay in LAYOUTS:
            check("tolist", f"{d} {lay}", lambda L: make(L, d, lay, seed=41).tolist())
        check("item", d, lambda L: make(L, d, "zerod", seed=41).item())
        check("item 1elem", d, lambda L: make(L, d, "contig", (1, 1), seed=41).item())
        check("item many", d, lambda L: make(L, d, "contig", seed=41).item())
        check("int()", d, lambda L: int(make(L, d, "contig", (1,), seed=42, special=False)))
        check("float()", d, lambda L: float(make(L, d, "contig", (1,), seed=42)))
        check("bool()", d, lambda L: bool(make(L, d, "contig", (1,), seed=42)))
        check("bool() many", d, lambda L: bool(make(L, d, "contig", seed=42)))
        check("index()", d, lambda L: [10, 20, 30][make(L, d, "zerod", seed=43, special=False).abs() % 3 if d != "bool" else make(L, d, "zerod")])
        check("len", d, lambda L: len(make(L, d, "zerod")))
    # creation fns
    for fn in ["zeros", "ones", "empty"]:
        for sz in [(2, 3), ((2, 3),), ([2, 3],), (0,), (), ((),), (-1,), (2.5,), (True,)]:
            for d in [None, "int8", "bool", "float16"]:
                def f(L):
                    r = getattr(L, fn)(*sz, dtype=dt(L, d)) if d else getattr(L, fn)(*sz)
                    return (r.shape, r.dtype) if fn == "empty" else r
                check(fn, f"{sz} {d}", f)
    for fv in [1, 2.5, True, -3, NAN]:
        for d in [None, "int8", "bool", "float16", "float64"]:
            check("full", f"{fv} {d}", lambda L: L.full((2, 2), fv, dtype=dt(L, d)) if d else L.full((2, 2), fv))
            check("full_like", f"{fv} {d}", lambda L: L.full_like(make(L, "int32", "contig"), fv, dtype=dt(L, d)) if d else L.full_like(make(L, "int32", "contig"), fv))
    for d in DTYPES:
        for fn in ["zeros_like", "ones_like"]:
            check(fn, d, lambda L: getattr(L, fn)(make(L, d, "transposed")), strides=True)
            check(fn + " dtype", d, lambda L: getattr(L, fn)(make(L, d, "sliced"), dtype=L.float64))
        check("empty_like", d, lambda L: (L.empty_like(make(L, d, "transposed")).stride(),))
        check("eye", d, lambda L: L.eye(3, 4, dtype=dt(L, d)))
        check("scalar_tensor", d, lambda L: L.scalar_tensor(2.5, dtype=dt(L, d)))
    check("eye 0", "", lambda L: L.eye(0))
    check("eye neg", "", lambda L: L.eye(-1))

report(maxper=3)
