import sys
from core import *  # noqa

NAN = float("nan")
I = lambda L, v, d="int64": L.tensor(v, dtype=dt(L, d))  # noqa

for d in ["float32", "int64", "bool", "float16", "uint8"]:
    for lay in ["contig", "transposed", "sliced", "expanded", "empty", "zerod"]:
        X = lambda L: make(L, d, lay, seed=51)  # noqa
        check("gather", f"{d} {lay}", lambda L: L.gather(X(L), 1, I(L, [[0, 1], [3, 2], [1, 1]]) if lay not in ("zerod", "empty") else I(L, [[0]])))
        check("gather neg dim", f"{d} {lay}", lambda L: X(L).gather(-1, I(L, [[0], [1], [2]])))
        check("gather oob", f"{d} {lay}", lambda L: X(L).gather(1, I(L, [[4], [1], [2]])))
        check("gather negidx", f"{d} {lay}", lambda L: X(L).gather(1, I(L, [[-1], [1], [2]])))
        check("gather int32 idx", f"{d} {lay}", lambda L: X(L).gather(1, I(L, [[0], [1], [2]], "int32")))
        check("index_select", f"{d} {lay}", lambda L: L.index_select(X(L), 1, I(L, [3, 0, 3])))
        check("index_select neg", f"{d} {lay}", lambda L: X(L).index_select(0, I(L, [-1])))
        check("index_select 0d idx", f"{d} {lay}", lambda L: X(L).index_select(0, I(L, 1)))
        check("index_select int32", f"{d} {lay}", lambda L: X(L).index_select(0, I(L, [1], "int32")))
        check("take", f"{d} {lay}", lambda L: L.take(X(L), I(L, [[0, -1], [5, 11]])))
        check("take oob", f"{d} {lay}", lambda L: L.take(X(L), I(L, [12])))
        check("masked_select", f"{d} {lay}", lambda L: L.masked_select(X(L), make(L, "bool", "size1", seed=52)))
        check("masked_fill", f"{d} {lay}", lambda L: X(L).masked_fill(make(L, "bool", "size1", seed=52), 2.5))
        check("masked_fill t", f"{d} {lay}", lambda L: X(L).masked_fill(make(L, "bool", "size1", seed=52), L.tensor(7)))
        check("masked_fill nan", f"{d} {lay}", lambda L: X(L).masked_fill(make(L, "bool", "size1", seed=52), NAN))
        check("masked_fill u8 mask", f"{d} {lay}", lambda L: X(L).masked_fill(make(L, "uint8", "size1", seed=52), 1))
        check("nonzero", f"{d} {lay}", lambda L: L.nonzero(X(L)))
        check("nonzero tuple", f"{d} {lay}", lambda L: X(L).nonzero(as_tuple=True))
        check("argwhere", f"{d} {lay}", lambda L: L.argwhere(X(L)))
        check("count_nonzero", f"{d} {lay}", lambda L: L.count_nonzero(X(L), (0, 1)) if lay != "zerod" else L.count_nonzero(X(L)))
        check("fill_", f"{d} {lay}", lambda L: X(L).clone().fill_(2.7))
        check("fill_ nan", f"{d} {lay}", lambda L: X(L).clone().fill_(NAN))
        check("fill_ big", f"{d} {lay}", lambda L: X(L).clone().fill_(300))
        check("fill_ t", f"{d} {lay}", lambda L: X(L).clone().fill_(L.tensor(3.5)))
        check("zero_", f"{d} {lay}", lambda L: X(L).clone().zero_())
        check("fill_ expanded", f"{d} {lay}", lambda L: X(L).fill_(1))
        for sd in ["float64", "int8", "bool"]:
            check("copy_", f"{d} {lay} <- {sd}", lambda L: X(L).clone().copy_(make(L, sd, "size1", seed=53)))
        check("index_fill", f"{d} {lay}", lambda L: X(L).index_fill(1, I(L, [0, 2]), -1.5))
        check("index_fill neg", f"{d} {lay}", lambda L: X(L).index_fill(-1, I(L, [-1]), 2))
for d in ["float32", "int64", "bool", "float16"]:
    X = lambda L: make(L, d, "contig", seed=54)  # noqa
    S = lambda L: make(L, d, "contig", (3, 4), seed=55)  # noqa
    check("scatter", d, lambda L: X(L).scatter(1, I(L, [[0, 1], [3, 2], [1, 1]]), S(L)))
    check("scatter value", d, lambda L: X(L).scatter(1, I(L, [[0, 1], [3, 2], [1, 1]]), 2.5))
    check("scatter reduce add", d, lambda L: X(L).scatter(1, I(L, [[0, 0], [3, 3], [1, 1]]), S(L), reduce="add"))
    check("scatter reduce mul", d, lambda L: X(L).scatter(1, I(L, [[0, 0], [3, 3], [1, 1]]), S(L), reduce="multiply"))
    check("scatter_add", d, lambda L: L.scatter_add(X(L), 1, I(L, [[0, 0], [3, 3], [1, 1]]), S(L)))
    check("scatter oob", d, lambda L: X(L).scatter(1, I(L, [[4]]), S(L)))
    check("scatter dtype mismatch", d, lambda L: X(L).scatter(1, I(L, [[0]]), make(L, "float64", "contig")))
    check("scatter_ value int", d, lambda L: X(L).scatter_(0, I(L, [[2, 1]]), 7))
    check("index_add", d, lambda L: X(L).index_add(0, I(L, [0, 0, 2]), S(L), alpha=2))
    check("index_add dtype", d, lambda L: X(L).index_add(0, I(L, [0, 0, 2]), make(L, "float64", "contig")))
    check("index_copy", d, lambda L: X(L).index_copy(1, I(L, [3, 1, 0, 2]), S(L)))
    check("index_put", d, lambda L: X(L).index_put((I(L, [0, 2]), I(L, [1, 1])), L.tensor(5, dtype=X(L).dtype)))
    check("index_put acc", d, lambda L: X(L).index_put((I(L, [0, 0]), I(L, [1, 1])), L.tensor([5, 6], dtype=X(L).dtype), accumulate=True))
    check("index_put_ bool", d, lambda L: X(L).index_put_((make(L, "bool", "contig", seed=5),), L.tensor(1, dtype=X(L).dtype)))
    check("one_hot", d, lambda L: L.nn.functional.one_hot(I(L, [0, 3, 1]), 5) if hasattr(L, "nn") else None)
    check("one_hot -1", d, lambda L: L.nn.functional.one_hot(I(L, [0, 3, 1])))
    check("one_hot bad", d, lambda L: L.nn.functional.one_hot(I(L, [0, 5, 1]), 3))
    check("diag", d, lambda L: L.diag(make(L, d, "contig", (4,))))
    check("diag 2d", d, lambda L: L.diag(X(L), -1))
    check("tril_", d, lambda L: X(L).tril_(1))
    check("outer", d, lambda L: L.outer(make(L, d, "contig", (3,)), make(L, "float32", "contig", (2,))))
    for fn in ["dot", "vdot"]:
        check(fn, d, lambda L: getattr(L, fn)(make(L, d, "contig", (3,)), make(L, d, "sliced", (3,))))
        check(fn + " mixed", d, lambda L: getattr(L, fn)(make(L, d, "contig", (3,)), make(L, "float64", "contig", (3,))))
    for fn, a, b in [("mm", (3, 4), (4, 2)), ("matmul", (4,), (4,)), ("matmul", (2, 3, 4), (4,)), ("matmul", (4,), (2, 4, 3)),
                     ("matmul", (2, 1, 3, 4), (5, 4, 2)), ("bmm", (2, 3, 4), (2, 4, 2)), ("mv", (3, 4), (4,)),
                     ("matmul", (3, 4), (3, 4)), ("mm", (0, 4), (4, 2)), ("matmul", (3, 0), (0, 2))]:
        check(fn, f"{d} {a} {b}", lambda L: getattr(L, fn)(make(L, d, "contig", a, seed=1, special=False),
                                                           make(L, d, "contig", b, seed=2, special=False)), ctx={"tolmul": 10})
    check("matmul mixed", d, lambda L: L.matmul(make(L, d, "contig", (3, 4)), make(L, "float64", "contig", (4, 2))))
    check("einsum", d, lambda L: L.einsum("ij,jk->ik", make(L, d, "contig", (3, 4), special=False), make(L, d, "transposed", (4, 2), special=False)), ctx={"tolmul": 10})
    check("softmax", d, lambda L: L.softmax(X(L), -1))
    check("softmax dtype", d, lambda L: L.softmax(X(L), 0, dtype=L.float64))
    check("log_softmax", d, lambda L: L.log_softmax(X(L), 1))
    check("lerp", d, lambda L: L.lerp(X(L), S(L), 0.3))
    check("addcmul", d, lambda L: L.addcmul(X(L), S(L), S(L), value=2))
    check("addcdiv", d, lambda L: L.addcdiv(X(L), S(L), S(L), value=2))

report(maxper=3)
