from core import *  # noqa
import warnings
a = lambda L: L.ones(2, 2)
for nm in ["cat", "stack", "hstack", "vstack", "dstack", "concat"]:
    for od, shp in [("int64", (4, 2)), ("float64", (3,)), ("float32", (0,)), ("float32", "t")]:
        def f(L):
            o = L.zeros(4, 2).t() if shp == "t" else L.zeros(*shp, dtype=dt(L, od))
            if nm == "hstack" and shp == "t":
                o = L.zeros(4, 2).t()
            r = getattr(L, nm)([a(L), a(L) * 2], out=o)
            return r, o, r is o, o.stride()
        check(nm + " out", f"{od} {shp}", f)
    check(nm + " out alias", "", lambda L: (lambda x: getattr(L, nm)([x, x], out=x))(L.ones(2, 2)))
x = lambda L: L.arange(12.).reshape(3, 4)
ops = {'gather': lambda L, o: L.gather(x(L), 1, L.tensor([[0], [1], [2]]), out=o),
       'index_select': lambda L, o: L.index_select(x(L), 0, L.tensor([0, 2]), out=o),
       'masked_select': lambda L, o: L.masked_select(x(L), x(L) > 5, out=o),
       'nonzero': lambda L, o: L.nonzero(x(L), out=o), 'tril': lambda L, o: L.tril(x(L), out=o),
       'triu': lambda L, o: L.triu(x(L), 1, out=o), 'diag': lambda L, o: L.diag(x(L), out=o),
       'diag1d': lambda L, o: L.diag(L.arange(3.), out=o)}
for nm, f in ops.items():
    for od, shp in [("float32", (0,)), ("float64", (0,)), ("int64", (0,)), ("float32", (5,)), ("int64", (7,))]:
        def g(L):
            o = L.zeros(*shp, dtype=dt(L, od))
            r = f(L, o)
            return r, o, r is o
        check("out " + nm, f"{od} {shp}", g)
x = lambda L: L.arange(6.).reshape(2, 3)
for nm in ["max", "min"]:
    for o in [("float32", "int64"), ("float32", "int32"), ("float64", "int64")]:
        def f(L):
            v, i = L.zeros(0, dtype=dt(L, o[0])), L.zeros(0, dtype=dt(L, o[1]))
            r = getattr(L, nm)(x(L), 1, out=(v, i))
            return r, r[0] is v, r[1] is i, v, i
        check(nm + " out dim", str(o), f)
    check(nm + " out all", "", lambda L: (lambda o: (getattr(L, nm)(x(L), out=o), o))(L.zeros(0)))
    check(nm + " out other", "", lambda L: (lambda o: (getattr(L, nm)(x(L), x(L).flip(0), out=o) is o, o))(L.zeros(0)))
    check(nm + " out bad", "", lambda L: getattr(L, nm)(x(L), 1, out=L.zeros(0)))
report()
