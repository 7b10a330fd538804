"""Tensor methods from csrc/tensor_more.c (cumsum_/cumprod_/addr_, resize_/resize_as_/set_/as_strided_,
new_empty_strided, Tensor.new, nonzero_static, segment_reduce, dim_order, is_set_to) over dtypes and layouts."""
import sys
from core import *  # noqa

which = sys.argv[1] if len(sys.argv) > 1 else "all"
LAY = ["contig", "transposed", "sliced", "expanded", "zerod", "empty", "size1"]
DT = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8", "bool"]

if which in ("all", "scan"):
    for d in DT:
        for lay in LAY:
            for nm in ["cumsum_", "cumprod_"]:
                for dim in [0, -1, 1, 2]:
                    def f(L, d=d, lay=lay, nm=nm, dim=dim):
                        x = make(L, d, lay, (3, 4), seed=1, special=False)
                        if lay == "expanded":
                            x = x.clone()
                        r = getattr(x, nm)(dim)
                        return r is x, x
                    check(nm, f"{d} {lay} dim={dim}", f)
                for od in ["float64", "int64", "float32"]:
                    check(nm + " dtype", f"{d} {lay} {od}", lambda L: (lambda x: (getattr(x, nm)(0, dtype=dt(L, od)), x))(make(L, d, lay, (3, 4), seed=1, special=False).clone()))
            check("cumsum_ expanded", f"{d}", lambda L: make(L, d, "expanded", (3, 4), seed=1, special=False).cumsum_(0))
            check("cumsum_ view base", f"{d} {lay}", lambda L: (lambda b: (b[1:, ::2].cumsum_(0), b))(make(L, d, "contig", (4, 6), seed=1, special=False)))

if which in ("all", "addr"):
    for d in DT:
        for d2 in ["float32", "int64", "bool", "float64"]:
            for lay in ["contig", "transposed", "sliced", "expanded", "empty"]:
                def f(L, d=d, d2=d2, lay=lay):
                    x = make(L, d, lay, (3, 4), seed=1, special=False).clone()
                    n = x.shape[0]
                    v1 = make(L, d2, "contig", (n,), seed=2, special=False)
                    v2 = make(L, d2, "sliced", (4,), seed=3, special=False)
                    r = x.addr_(v1, v2)
                    return r is x, x
                check("addr_", f"{d} {d2} {lay}", f)
            for b, a in [(0, 1), (2, 3), (0.5, 1), (1, 0.5), (True, False)]:
                check("addr_ ab", f"{d} b={b} a={a}", lambda L: (lambda x: (x.addr_(make(L, d, "contig", (3,), 2, False), make(L, d, "contig", (4,), 3, False), beta=b, alpha=a), x))(make(L, d, "contig", (3, 4), 1, False)))
                check("addr ab", f"{d} b={b} a={a}", lambda L: L.addr(make(L, d, "contig", (3, 4), 1, False), make(L, d, "contig", (3,), 2, False), make(L, d, "contig", (4,), 3, False), beta=b, alpha=a))
            check("addr_ nan beta0", d, lambda L: (lambda x: x.addr_(L.ones(2, dtype=x.dtype), L.ones(2, dtype=x.dtype), beta=0))(L.full((2, 2), float("nan")).to(dt(L, d))))
            check("addr_ bad shape", d, lambda L: make(L, d, "contig", (3, 4), 1, False).addr_(L.ones(4, dtype=dt(L, d)), L.ones(3, dtype=dt(L, d))))
            check("addr_ 1d", d, lambda L: make(L, d, "contig", (4,), 1, False).addr_(L.ones(4, dtype=dt(L, d)), L.ones(3, dtype=dt(L, d))))
            check("addr_ bcast self", d, lambda L: make(L, d, "contig", (1, 4), 1, False).addr_(L.ones(3, dtype=dt(L, d)), L.ones(4, dtype=dt(L, d))))
            check("addr_ 2d vec", d, lambda L: make(L, d, "contig", (3, 4), 1, False).addr_(L.ones(3, 1, dtype=dt(L, d)), L.ones(4, dtype=dt(L, d))))
            check("addr out", d, lambda L: (lambda o: (L.addr(make(L, d, "contig", (3, 4), 1, False), L.ones(3, dtype=dt(L, d)), L.ones(4, dtype=dt(L, d)), out=o), o))(L.zeros(0, dtype=dt(L, d))))

if which in ("all", "resize"):
    for d in ["float32", "int64", "bool", "float16"]:
        for lay in LAY:
            for shp in [(12,), (2, 6), (0,), (), (5, 5), (2, 0, 3), (1,)]:
                def f(L, d=d, lay=lay, shp=shp):
                    x = make(L, d, lay, (3, 4), seed=1, special=False)
                    if lay == "expanded":
                        x = x.clone()
                    r = x.resize_(*shp) if len(shp) else x.resize_(())
                    n = min(x.numel(), 1)
                    return r is x, x.shape, x.stride(), x.is_contiguous(), x.flatten()[:n] if x.numel() else None
                check("resize_", f"{d} {lay} {shp}", f)
                check("resize_as_", f"{d} {lay} {shp}", lambda L: (lambda x: (x.resize_as_(L.zeros(shp, dtype=L.float64)).shape, x.stride()))(make(L, d, lay, (3, 4), seed=1, special=False).clone()))
            check("resize_ expanded", d, lambda L: make(L, d, "expanded", (3, 4), seed=1, special=False).resize_(12).shape)
            check("resize_ expanded same", d, lambda L: make(L, d, "expanded", (3, 4), seed=1, special=False).resize_(3, 4).stride())
            check("resize_ neg", d, lambda L: L.zeros(3).resize_(-1, 2))
            check("resize_ cl", d, lambda L: L.zeros(3).resize_(2, 3, 4, 5, memory_format=L.channels_last).stride())
            check("resize_ cl3d", d, lambda L: L.zeros(3).resize_(2, 3, 4, 5, 2, memory_format=L.channels_last_3d).stride())
            check("resize_ cl bad", d, lambda L: L.zeros(3).resize_(2, 3, 4, memory_format=L.channels_last).stride())
            check("resize_ preserve", d, lambda L: L.arange(12).resize_(2, 2))
            check("resize_ grow keep", d, lambda L: L.arange(6).resize_(2, 2).resize_(6))
            check("resize_ tuple", d, lambda L: L.arange(6.).resize_((3, 2)))
            check("resize_ list", d, lambda L: L.arange(6.).resize_([3, 2]))
            check("resize_ view shared", d, lambda L: (lambda b: (lambda v: (v.resize_(2), b))(b[1:]))(L.arange(6.)))
            check("resize_ view grow", d, lambda L: (lambda b: (lambda v: (v.resize_(10).shape, b.shape))(b[1:]))(L.arange(6.)))
            check("resize_ grad leaf", d, lambda L: L.zeros(3, requires_grad=True).resize_(4))
            check("resize_as_ non-tensor", d, lambda L: L.zeros(3).resize_as_(3))
    for lay in LAY:
        for stor in [None, "same", "other"]:
            def f(L, lay=lay, stor=stor):
                x = make(L, "float32", lay, (3, 4), seed=1, special=False)
                src = L.arange(20.)
                if stor is None:
                    x.set_()
                elif stor == "same":
                    x.set_(src)
                else:
                    x.set_(src.untyped_storage(), 2, (2, 3), (3, 1))
                return x.shape, x.stride(), x.storage_offset(), x
            check("set_", f"{lay} {stor}", f)
        check("set_ view src", lay, lambda L: (lambda x: (x.set_(L.arange(20.)[2:10:2]), x.stride(), x.storage_offset()))(L.zeros(2)))
        check("set_ size only", lay, lambda L: (lambda x: (x.set_(L.arange(20.).untyped_storage(), 1, (4,)), x.stride()))(L.zeros(2)))
        check("set_ too big", lay, lambda L: L.zeros(2).set_(L.arange(4.).untyped_storage(), 2, (3,)))
        check("set_ dtype mismatch", lay, lambda L: L.zeros(2).set_(L.arange(4)))
        check("set_ typed storage", lay, lambda L: (lambda x: x.set_(L.arange(4.).storage()))(L.zeros(2)))
        check("set_ is_set_to", lay, lambda L: (lambda s: (lambda x: (x.set_(s), x.is_set_to(s), s.is_set_to(x), x.is_set_to(s[1:]), x.is_set_to(L.arange(4.))))(L.zeros(2)))(L.arange(4.)))
        check("set_ offset neg", lay, lambda L: L.zeros(2).set_(L.arange(4.).untyped_storage(), -1, (2,)))
        check("set_ stride neg", lay, lambda L: L.zeros(2).set_(L.arange(4.).untyped_storage(), 0, (2,), (-1,)))
        check("set_ zero size", lay, lambda L: (lambda x: (x.set_(L.arange(4.).untyped_storage(), 100, (0,)), x.shape, x.storage_offset()))(L.zeros(2)))
        check("set_ odd bytes", lay, lambda L: L.zeros(2).set_(L.arange(3, dtype=L.uint8).untyped_storage()))
        check("set_ shape", lay, lambda L: (lambda x: (x.set_(L.arange(3, dtype=L.uint8).untyped_storage()), x.shape))(L.zeros(2, dtype=L.uint8)))
        check("set_ storage i16 to f32", lay, lambda L: (lambda x: (x.set_(L.arange(4, dtype=L.int16).untyped_storage()), x.shape))(L.zeros(2)))
    for d in ["float32", "int64"]:
        for lay in LAY:
            for size, stride, off in [((2, 2), (1, 2), 0), ((3,), (2,), 1), ((0,), (1,), 0), ((), (), 3), ((2, 2), (0, 1), None), ((4,), (3,), 0), ((2,), (1,), 100)]:
                def f(L, d=d, lay=lay, size=size, stride=stride, off=off):
                    x = make(L, d, lay, (3, 4), seed=1, special=False)
                    r = x.as_strided_(size, stride, off) if off is not None else x.as_strided_(size, stride)
                    return r is x, x.shape, x.stride(), x.storage_offset(), x
                check("as_strided_", f"{d} {lay} {size} {stride} {off}", f)
                check("as_strided", f"{d} {lay} {size} {stride} {off}", lambda L: (lambda r: (r, r.stride(), r.storage_offset()))(make(L, d, lay, (3, 4), seed=1, special=False).as_strided(size, stride, off)))
            check("as_strided_ neg", f"{d} {lay}", lambda L: make(L, d, lay, (3, 4), seed=1, special=False).as_strided_((2,), (-1,)))
            check("as_strided_ mismatch", f"{d} {lay}", lambda L: make(L, d, lay, (3, 4), seed=1, special=False).as_strided_((2, 2), (1,)))

if which in ("all", "new"):
    for d in ["float32", "int64", "bool", "float16"]:
        for lay in ["contig", "transposed", "zerod", "empty"]:
            for size, stride in [((2, 3), (3, 1)), ((2, 3), (1, 2)), ((0, 3), (3, 1)), ((), ()), ((2, 2), (0, 1)), ((3,), (2,))]:
                def f(L, d=d, lay=lay, size=size, stride=stride):
                    x = make(L, d, lay, (3, 4), seed=1, special=False)
                    r = x.new_empty_strided(size, stride)
                    return r.dtype, r.shape, r.stride(), r.storage_offset(), r.requires_grad
                check("new_empty_strided", f"{d} {lay} {size} {stride}", f)
                check("new_empty_strided dtype", f"{d} {lay} {size}", lambda L: (lambda r: (r.dtype, r.shape, r.stride()))(make(L, d, lay, (3, 4), seed=1, special=False).new_empty_strided(size, stride, dtype=L.float64, requires_grad=True)))
            check("new_empty_strided mismatch", d, lambda L: L.zeros(2).new_empty_strided((2, 3), (1,)))
            check("new_empty_strided neg", d, lambda L: L.zeros(2).new_empty_strided((2, -3), (1, 1)))
            for args in [(), (2, 3), ((2, 3),), ([1, 2, 3],), ([[1, 2], [3, 4]],), (0,), ([],), ("tensor",), ("storage",), ([1.5, 2],), ([True],), (2.5,)]:
                def f(L, d=d, lay=lay, args=args):
                    x = make(L, d, lay, (3, 4), seed=1, special=False)
                    if args == ("tensor",):
                        args = (L.arange(3),)
                    if args == ("storage",):
                        args = (L.arange(3.).untyped_storage(),)
                    r = x.new(*args)
                    return r.dtype, r.shape, (r if r.numel() and args and not isinstance(args[0], int) else None)
                check("Tensor.new", f"{d} {lay} {args}", f)
            check("Tensor.new dtype kw", d, lambda L: L.zeros(2, dtype=dt(L, d)).new(2, dtype=L.float64))
            check("Tensor.new device", d, lambda L: L.zeros(2, dtype=dt(L, d)).new(2, device="cpu").shape)
            check("Tensor.new neg", d, lambda L: L.zeros(2, dtype=dt(L, d)).new(-1))
            check("Tensor.new mixed", d, lambda L: L.zeros(2, dtype=dt(L, d)).new(2, 3.0))

if which in ("all", "nz"):
    for d in DT:
        for lay in LAY:
            for size in [0, 1, 3, 12, 20]:
                for fv in [-1, 0, 7, None]:
                    def f(L, d=d, lay=lay, size=size, fv=fv):
                        x = make(L, d, lay, (3, 4), seed=1, special=False)
                        return L.nonzero_static(x, size=size, fill_value=fv) if fv is not None else x.nonzero_static(size=size)
                    check("nonzero_static", f"{d} {lay} size={size} fv={fv}", f)
            check("nonzero_static 3d", f"{d}", lambda L: L.nonzero_static(make(L, d, "contig", (2, 3, 2), seed=4, special=False), size=5))
            check("nonzero_static neg", f"{d}", lambda L: L.nonzero_static(make(L, d, "contig", (2, 3), seed=4, special=False), size=-1))
            check("nonzero_static nan", f"{d}", lambda L: L.nonzero_static(make(L, d, "contig", (9,), seed=4, special=True), size=9))
            check("nonzero_static out", f"{d}", lambda L: (lambda o: (L.nonzero_static(make(L, d, "contig", (2, 3), seed=4, special=False), size=4, out=o), o))(L.zeros(0, dtype=L.int64)))
            check("nonzero_static fv float", f"{d}", lambda L: L.nonzero_static(make(L, d, "contig", (2, 3), seed=4, special=False), size=8, fill_value=2.5))

if which in ("all", "seg"):
    for d in ["float32", "float64", "float16", "bfloat16", "int64"]:
        for red in ["sum", "mean", "max", "min", "prod", "amax", "amin", "bad"]:
            for lens in [[2, 0, 3, 1], [6], [0, 6], [1, 1, 1, 1, 1, 1], [3, 3, 0]]:
                for init in [None, 0.5, -2.0]:
                    for lay in ["contig", "transposed", "sliced"]:
                        def f(L, d=d, red=red, lens=lens, init=init, lay=lay):
                            x = make(L, d, lay, (6, 3), seed=5, special=True)
                            kw = {} if init is None else {"initial": init}
                            return L.segment_reduce(x, red, lengths=L.tensor(lens), **kw)
                        check("segment_reduce", f"{d} {red} {lens} init={init} {lay}", f, ctx=dict(tolmul=10))
                check("segment_reduce offsets", f"{d} {red} {lens}", lambda L: L.segment_reduce(make(L, d, "contig", (6, 3), seed=5, special=True), red, offsets=L.tensor([0] + list(np.cumsum(lens)))), ctx=dict(tolmul=10))
            check("segment_reduce 2d lengths", f"{d} {red}", lambda L: L.segment_reduce(make(L, d, "contig", (2, 5, 3), seed=5), red, lengths=L.tensor([[2, 3], [5, 0]]), axis=1), ctx=dict(tolmul=10))
            check("segment_reduce axis1", f"{d} {red}", lambda L: L.segment_reduce(make(L, d, "contig", (2, 5), seed=5), red, lengths=L.tensor([2, 3]), axis=1))
            check("segment_reduce bad sum", f"{d} {red}", lambda L: L.segment_reduce(make(L, d, "contig", (6,), seed=5), red, lengths=L.tensor([2, 3])))
            check("segment_reduce unsafe", f"{d} {red}", lambda L: L.segment_reduce(make(L, d, "contig", (6,), seed=5), red, lengths=L.tensor([2, 3]), unsafe=True))
            check("segment_reduce neg len", f"{d} {red}", lambda L: L.segment_reduce(make(L, d, "contig", (6,), seed=5), red, lengths=L.tensor([-1, 7])))
            check("segment_reduce 0d", f"{d} {red}", lambda L: L.segment_reduce(make(L, d, "zerod", (), seed=5), red, lengths=L.tensor([1])))
            check("segment_reduce empty", f"{d} {red}", lambda L: L.segment_reduce(L.zeros(0, 3, dtype=dt(L, d)), red, lengths=L.tensor([0, 0])))
            check("segment_reduce float len", f"{d} {red}", lambda L: L.segment_reduce(L.zeros(3, dtype=dt(L, d)), red, lengths=L.tensor([1., 2.])))

if which in ("all", "dimorder"):
    for lay in LAY:
        for shp in [(2, 3, 4, 5), (2, 1, 4, 1), (1, 1, 1, 1), (2, 3), (3,), (2, 3, 4, 5, 6)]:
            def f(L, lay=lay, shp=shp):
                x = make(L, "float32", lay, shp, seed=1, special=False)
                return x.dim_order()
            check("dim_order", f"{lay} {shp}", f)
            check("dim_order amb", f"{lay} {shp}", lambda L: make(L, "float32", lay, shp, seed=1, special=False).dim_order(ambiguity_check=True))
        for mf in ["channels_last", "channels_last_3d"]:
            check("dim_order cl", mf, lambda L: L.zeros(2, 3, 4, 5, 6 if mf.endswith("3d") else 1).squeeze(-1).contiguous(memory_format=getattr(L, mf)).dim_order() if not mf.endswith("3d") else L.zeros(2, 3, 4, 5, 6).contiguous(memory_format=getattr(L, mf)).dim_order())
            check("dim_order cl amb", mf, lambda L: L.zeros(2, 1, 4, 5).contiguous(memory_format=L.channels_last).dim_order(ambiguity_check=True))
            check("dim_order amb list", mf, lambda L: L.zeros(2, 1, 4, 5).dim_order(ambiguity_check=[L.contiguous_format, L.channels_last]))
            check("dim_order amb bad", mf, lambda L: L.zeros(2, 1, 4, 5).dim_order(ambiguity_check=3))
        check("dim_order odd stride", lay, lambda L: L.zeros(4, 6)[:, ::2].t().dim_order())
        check("dim_order as_strided", lay, lambda L: L.zeros(24).as_strided((2, 3, 4), (1, 8, 2)).dim_order())

report(maxper=int(os.environ.get("MAXPER", 4)))
