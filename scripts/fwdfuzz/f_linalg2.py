"""torch.linalg and torch.* linear algebra on odd inputs: transposed / sliced / expanded layouts, empty
(0xN, Nx0, batch 0), 1x1, singular and ill-conditioned matrices, general eig, error types and out=.
Decompositions are compared through reconstructions or sign/order-invariant parts."""
import sys
from core import *  # noqa

which = sys.argv[1] if len(sys.argv) > 1 else "all"


def M(L, shape, d="float64", lay="contig", seed=0, kind="rand"):
    if kind == "rand":
        x = make(L, d, "contig" if lay not in ("transposed", "sliced") else lay, shape, seed=seed, special=False)
    elif kind == "sing":  # rank one
        u = make(L, d, "contig", shape[:-1] + (1,), seed=seed, special=False)
        v = make(L, d, "contig", shape[:-2] + (1, shape[-1]), seed=seed + 1, special=False)
        x = u @ v
    elif kind == "ill":  # hilbert-like
        n = shape[-1]
        i = L.arange(shape[-2], dtype=dt(L, d))[:, None]
        j = L.arange(n, dtype=dt(L, d))[None, :]
        x = (1.0 / (i + j + 1)).expand(shape).clone()
    elif kind == "zero":
        x = L.zeros(shape, dtype=dt(L, d))
    if lay == "expanded" and len(shape) >= 3:
        x = x[:1].expand(shape)
    if lay == "transposed" and kind != "rand":
        x = x.mT.contiguous().mT
    return x


def sym(L, x):
    return x + x.mT


SHAPES = [(3, 3), (1, 1), (2, 3, 3), (0, 3, 3), (0, 0), (3, 0), (0, 3), (2, 0, 0), (4, 2), (2, 4), (2, 1, 4, 4)]
LAYS = ["contig", "transposed", "sliced", "expanded"]
KINDS = ["rand", "sing", "ill", "zero"]

if which in ("all", "dec"):
    for d in ["float32", "float64"]:
        tm = dict(tolmul=3000 if d == "float32" else 1e4)
        for shp in SHAPES:
            for lay in LAYS:
                for kind in KINDS:
                    if kind != "rand" and (0 in shp or lay == "sliced"):
                        continue
                    tag = f"{d} {shp} {lay} {kind}"
                    A = lambda L, shp=shp, lay=lay, kind=kind, d=d: M(L, shp, d, lay, 1, kind)  # noqa
                    sq = shp[-1] == shp[-2]
                    check("svdvals", tag, lambda L: L.linalg.svdvals(A(L)), ctx=tm)
                    check("svd recon", tag, lambda L: (lambda r: (r.U.shape, r.Vh.shape, r.U[..., :r.S.shape[-1]] @ L.diag_embed(r.S) @ r.Vh[..., :r.S.shape[-1], :]))(L.linalg.svd(A(L), full_matrices=False)), ctx=tm)
                    check("svd full shapes", tag, lambda L: [t.shape for t in L.linalg.svd(A(L))])
                    check("qr recon", tag, lambda L: (lambda r: (r.Q.shape, r.R.shape, r.Q @ r.R, r.R.abs()))(L.linalg.qr(A(L))), ctx=tm)
                    check("qr complete recon", tag, lambda L: (lambda r: (r.Q.shape, r.R.shape, r.Q @ r.R))(L.linalg.qr(A(L), mode="complete")), ctx=tm)
                    check("lu recon", tag, lambda L: (lambda r: (r.P.shape, r.L.shape, r.U.shape, r.P @ r.L @ r.U))(L.linalg.lu(A(L))), ctx=tm)
                    check("lu_factor_ex info", tag, lambda L: (lambda r: (r.LU.shape, r.pivots, r.info))(L.linalg.lu_factor_ex(A(L))), ctx=tm)
                    check("pinv", tag, lambda L: L.linalg.pinv(A(L)), ctx=dict(tolmul=1e6 if kind == "ill" else tm["tolmul"]))
                    check("matrix_rank", tag, lambda L: L.linalg.matrix_rank(A(L)))
                    check("matrix_norm", tag, lambda L: [L.linalg.matrix_norm(A(L), o) for o in ["fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")]], ctx=tm)
                    check("vector_norm", tag, lambda L: [L.linalg.vector_norm(A(L), o, dim=-1) for o in [0, 1, 2, 0.5, float("inf"), -float("inf")]], ctx=tm)
                    check("lstsq", tag, lambda L: (lambda r: (r.solution.shape, r.rank, r.singular_values))(L.linalg.lstsq(A(L), M(L, shp[:-1] + (2,), d, "contig", 7))), ctx=tm)
                    check("lstsq gelsd", tag, lambda L: (lambda r: (r.solution, r.rank, r.singular_values, r.residuals))(L.linalg.lstsq(A(L), M(L, shp[:-1] + (2,), d, "contig", 7), driver="gelsd")), ctx=dict(tolmul=1e6) if kind != "rand" else tm)
                    check("lstsq gelsy", tag, lambda L: (lambda r: (r.solution.shape, r.rank, r.residuals))(L.linalg.lstsq(A(L), M(L, shp[:-1] + (2,), d, "contig", 7), driver="gelsy")), ctx=tm)
                    check("qr r mode", tag, lambda L: (lambda r: (r.Q.shape, r.R.abs()))(L.linalg.qr(A(L), mode="r")), ctx=tm)
                    if sq:
                        check("det", tag, lambda L: (L.linalg.det(A(L)), L.linalg.slogdet(A(L)), L.logdet(A(L))), ctx=dict(tolmul=1e5) if kind != "rand" else tm)
                        check("inv_ex", tag, lambda L: (lambda r: (r.info, r.inverse if kind == "rand" else None))(L.linalg.inv_ex(A(L))), ctx=tm)
                        check("inv", tag, lambda L: L.linalg.inv(A(L)), ctx=dict(tolmul=1e6) if kind == "ill" else tm)
                        check("solve", tag, lambda L: L.linalg.solve(A(L), M(L, shp[:-1] + (2,), d, "contig", 7)), ctx=dict(tolmul=1e6) if kind == "ill" else tm)
                        check("solve_ex", tag, lambda L: (lambda r: (r.info, r.result.shape))(L.linalg.solve_ex(A(L), M(L, shp[:-1] + (2,), d, "contig", 7))))
                        check("eigh", tag, lambda L: (lambda r: (r.eigenvalues, r.eigenvectors @ L.diag_embed(r.eigenvalues) @ r.eigenvectors.mT))(L.linalg.eigh(sym(L, A(L)))), ctx=tm)
                        check("eigvalsh", tag, lambda L: L.linalg.eigvalsh(sym(L, A(L)), UPLO="U"), ctx=tm)
                        check("eigvals", tag, lambda L: (lambda e: L.sort(e.real)[0])(L.linalg.eigvals(A(L))), ctx=dict(tolmul=1e6) if kind != "rand" else tm)
                        check("eig recon", tag, lambda L: (lambda r: (r.eigenvalues.dtype, (r.eigenvectors @ L.diag_embed(r.eigenvalues) @ L.linalg.inv(r.eigenvectors)).real if kind == "rand" else None))(L.linalg.eig(A(L))), ctx=tm)
                        check("cholesky_ex", tag, lambda L: (lambda r: (r.info, r.L if kind == "rand" else None))(L.linalg.cholesky_ex(A(L) @ A(L).mT + L.eye(shp[-1], dtype=dt(L, d)))), ctx=tm)
                        check("cholesky_ex bad", tag, lambda L: L.linalg.cholesky_ex(A(L) - 10 * L.eye(shp[-1], dtype=dt(L, d))).info)
                        check("matrix_exp", tag, lambda L: L.linalg.matrix_exp(A(L)), ctx=tm)
                        check("matrix_power", tag, lambda L: [L.linalg.matrix_power(A(L), k) for k in [0, 1, 2, 5]], ctx=tm)
                        check("matrix_power -1", tag, lambda L: L.linalg.matrix_power(A(L), -2), ctx=dict(tolmul=1e6) if kind == "ill" else tm)
                        check("cond", tag, lambda L: [L.linalg.cond(A(L), p) for p in [None, "fro", 1, float("inf")]], ctx=dict(tolmul=1e6) if kind == "ill" else tm)
                        check("solve_triangular", tag, lambda L: L.linalg.solve_triangular(A(L).triu() + 2 * L.eye(shp[-1], dtype=dt(L, d)), M(L, shp[:-1] + (2,), d, "contig", 7), upper=True), ctx=tm)
                        check("triangular_solve", tag, lambda L: L.triangular_solve(M(L, shp[:-1] + (2,), d, "contig", 7), A(L).tril() + 2 * L.eye(shp[-1], dtype=dt(L, d)), upper=False, transpose=True), ctx=tm)
                        check("cholesky_solve", tag, lambda L: L.cholesky_solve(M(L, shp[:-1] + (2,), d, "contig", 7), L.linalg.cholesky(A(L) @ A(L).mT + L.eye(shp[-1], dtype=dt(L, d)))), ctx=dict(tolmul=1e5))
                        check("ldl_factor", tag, lambda L: (lambda r: (r[0].shape, r[1].shape))(L.linalg.ldl_factor(sym(L, A(L)))))
                        check("lu_solve", tag, lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(A(L) + 3 * L.eye(shp[-1], dtype=dt(L, d))), M(L, shp[:-1] + (2,), d, "contig", 7)), ctx=tm)

if which in ("all", "err"):
    for d in ["float32", "float64", "int64", "float16", "bool"]:
        X = lambda L: make(L, d, "contig", (3, 3), seed=2, special=False)  # noqa
        for nm, f in {"inv": lambda L: L.linalg.inv(X(L)), "det": lambda L: L.linalg.det(X(L)),
                      "svd": lambda L: L.linalg.svd(X(L)), "qr": lambda L: L.linalg.qr(X(L)),
                      "eigh": lambda L: L.linalg.eigh(X(L)), "eig": lambda L: L.linalg.eig(X(L)),
                      "cholesky": lambda L: L.linalg.cholesky(X(L)), "lstsq": lambda L: L.linalg.lstsq(X(L), X(L)),
                      "solve": lambda L: L.linalg.solve(X(L), X(L)), "pinv": lambda L: L.linalg.pinv(X(L)),
                      "matrix_rank": lambda L: L.linalg.matrix_rank(X(L)), "slogdet": lambda L: L.linalg.slogdet(X(L)),
                      "lu": lambda L: L.linalg.lu(X(L)), "svdvals": lambda L: L.linalg.svdvals(X(L)),
                      "matrix_norm": lambda L: L.linalg.matrix_norm(X(L)), "cond": lambda L: L.linalg.cond(X(L)),
                      "matrix_exp": lambda L: L.linalg.matrix_exp(X(L)), "eigvals": lambda L: L.linalg.eigvals(X(L)),
                      "solve_triangular": lambda L: L.linalg.solve_triangular(X(L), X(L), upper=True),
                      "householder": lambda L: L.linalg.householder_product(X(L), X(L)[0]),
                      "inner": lambda L: L.inner(X(L), X(L)), "mm": lambda L: L.mm(X(L), X(L)), "outer": lambda L: L.outer(X(L)[0], X(L)[1]),
                      "dot": lambda L: L.dot(X(L)[0], X(L)[1]), "mv": lambda L: L.mv(X(L), X(L)[0]), "trace": lambda L: L.trace(X(L)),
                      "kron": lambda L: L.kron(X(L), X(L)), "tensordot": lambda L: L.tensordot(X(L), X(L)),
                      "chain_matmul": lambda L: L.chain_matmul(X(L), X(L)), "matrix_power": lambda L: L.linalg.matrix_power(X(L), 3),
                      "baddbmm": lambda L: L.baddbmm(X(L)[None], X(L)[None], X(L)[None]), "addmv": lambda L: L.addmv(X(L)[0], X(L), X(L)[0]),
                      "vecdot": lambda L: L.linalg.vecdot(X(L), X(L)), "cross": lambda L: L.linalg.cross(X(L), X(L)),
                      "diagonal": lambda L: L.linalg.diagonal(X(L)), "vander": lambda L: L.linalg.vander(X(L)[0]),
                      "cholesky_inverse": lambda L: L.cholesky_inverse(X(L)), "geqrf": lambda L: L.geqrf(X(L)),
                      "lu_factor": lambda L: L.linalg.lu_factor(X(L)), "ldl": lambda L: L.linalg.ldl_factor(X(L)),
                      "tensorinv": lambda L: L.linalg.tensorinv(X(L), ind=1), "multi_dot": lambda L: L.linalg.multi_dot([X(L), X(L)])}.items():
            check(f"dtype {nm}", d, f, ctx=dict(tolmul=1e3))
    for d in ["float32", "float64"]:
        T = lambda L, *s: make(L, d, "contig", s, seed=3, special=False)  # noqa
        check("err inv 1d", d, lambda L: L.linalg.inv(T(L, 3)))
        check("err inv nonsq", d, lambda L: L.linalg.inv(T(L, 2, 3)))
        check("err inv singular", d, lambda L: L.linalg.inv(L.zeros(2, 3, 3, dtype=dt(L, d))))
        check("err inv singular batch1", d, lambda L: L.linalg.inv(L.stack([L.eye(2, dtype=dt(L, d)), L.zeros(2, 2, dtype=dt(L, d))])))
        check("err solve singular", d, lambda L: L.linalg.solve(L.zeros(3, 3, dtype=dt(L, d)), T(L, 3)))
        check("err cholesky", d, lambda L: L.linalg.cholesky(L.stack([L.eye(2, dtype=dt(L, d)), -L.eye(2, dtype=dt(L, d))])))
        check("err cholesky 2", d, lambda L: L.linalg.cholesky(L.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=dt(L, d))))
        check("err det 1d", d, lambda L: L.linalg.det(T(L, 3)))
        check("err solve shape", d, lambda L: L.linalg.solve(T(L, 3, 3), T(L, 4)))
        check("err solve batch", d, lambda L: L.linalg.solve(T(L, 2, 3, 3), T(L, 3, 3, 1)))
        check("err lstsq rows", d, lambda L: L.linalg.lstsq(T(L, 3, 2), T(L, 4, 1)))
        check("err lstsq driver", d, lambda L: L.linalg.lstsq(T(L, 3, 2), T(L, 3, 1), driver="foo"))
        check("err eigh uplo", d, lambda L: L.linalg.eigh(T(L, 3, 3), UPLO="X"))
        check("err qr mode", d, lambda L: L.linalg.qr(T(L, 3, 3), mode="foo"))
        check("err matrix_norm ord", d, lambda L: L.linalg.matrix_norm(T(L, 3, 3), ord=3))
        check("err matrix_norm dim", d, lambda L: L.linalg.matrix_norm(T(L, 3, 3), dim=(0, 0)))
        check("err vector_norm str", d, lambda L: L.linalg.vector_norm(T(L, 3), ord="fro"))
        check("err norm ord 3d", d, lambda L: L.linalg.norm(T(L, 2, 3, 3), ord=2))
        check("err matrix_power nonsq", d, lambda L: L.linalg.matrix_power(T(L, 2, 3), 2))
        check("err matrix_power float", d, lambda L: L.linalg.matrix_power(T(L, 3, 3), 1.5))
        check("err cross", d, lambda L: L.linalg.cross(T(L, 2), T(L, 2)))
        check("err solve_triangular left", d, lambda L: L.linalg.solve_triangular(T(L, 3, 3), T(L, 2, 3), upper=True))
        check("err lu_solve pivots", d, lambda L: L.linalg.lu_solve(T(L, 3, 3), L.tensor([1, 2, 3]), T(L, 3, 1)))
        check("err lu_solve pivots bad", d, lambda L: L.linalg.lu_solve(T(L, 3, 3), L.tensor([1, 5, 3], dtype=L.int32), T(L, 3, 1)))
        check("err householder", d, lambda L: L.linalg.householder_product(T(L, 2, 3), T(L, 2)))
        check("err householder tau", d, lambda L: L.linalg.householder_product(T(L, 3, 2), T(L, 3)))
        check("err tensorsolve", d, lambda L: L.linalg.tensorsolve(T(L, 2, 3), T(L, 2)))
        check("err pinv hermitian nonsq", d, lambda L: L.linalg.pinv(T(L, 2, 3), hermitian=True))
        check("err mixed dtype solve", d, lambda L: L.linalg.solve(T(L, 3, 3), T(L, 3).to(L.float16)))
        check("err mm shape", d, lambda L: L.mm(T(L, 2, 3), T(L, 2, 3)))
        check("err matmul 0d", d, lambda L: L.matmul(T(L), T(L, 3)))
        check("err bmm", d, lambda L: L.bmm(T(L, 2, 2, 3), T(L, 3, 3, 2)))
        check("err dot", d, lambda L: L.dot(T(L, 3), T(L, 4)))
        check("err dot 2d", d, lambda L: L.dot(T(L, 3, 1), T(L, 3)))
        check("err dot dtype", d, lambda L: L.dot(T(L, 3), T(L, 3).to(L.float16)))
        check("err vdot", d, lambda L: L.vdot(T(L, 3), T(L, 2)))
        check("err mv", d, lambda L: L.mv(T(L, 2, 3), T(L, 2)))
        check("err addmm", d, lambda L: L.addmm(T(L, 3, 3), T(L, 2, 3), T(L, 3, 2)))
        check("err cholesky_inverse", d, lambda L: L.cholesky_inverse(T(L, 2, 3)))
        check("err diag_embed", d, lambda L: L.diag_embed(T(L, 2, 3), dim1=0, dim2=0))
        check("err trace 3d", d, lambda L: L.trace(T(L, 2, 2, 2)))
        check("err kron", d, lambda L: L.kron(T(L, 2, 2), T(L, 3)))

if which in ("all", "out"):
    for d in ["float32", "float64"]:
        T = lambda L, *s: make(L, d, "contig", s, seed=3, special=False)  # noqa
        for od, oshape in [(d, (0,)), (d, (3, 3)), (d, (2, 2)), ("float16", (3, 3)), ("int64", (0,)), ("float64" if d == "float32" else "float32", (0,))]:
            O = lambda L: L.zeros(oshape, dtype=dt(L, od))  # noqa
            tag = f"{d} out {od} {oshape}"
            for nm, f in {"inv": lambda L, o: L.linalg.inv(T(L, 3, 3), out=o), "det": lambda L, o: L.linalg.det(T(L, 3, 3), out=o),
                          "solve": lambda L, o: L.linalg.solve(T(L, 3, 3), T(L, 3, 3), out=o), "matrix_exp": lambda L, o: L.linalg.matrix_exp(T(L, 3, 3), out=o) if hasattr(L.linalg, "matrix_exp") else None,
                          "pinv": lambda L, o: L.linalg.pinv(T(L, 3, 3), out=o), "matrix_norm": lambda L, o: L.linalg.matrix_norm(T(L, 3, 3), out=o),
                          "vector_norm": lambda L, o: L.linalg.vector_norm(T(L, 3, 3), dim=1, out=o), "svdvals": lambda L, o: L.linalg.svdvals(T(L, 3, 3), out=o),
                          "eigvalsh": lambda L, o: L.linalg.eigvalsh(T(L, 3, 3), out=o), "cholesky": lambda L, o: L.linalg.cholesky(L.eye(3, dtype=dt(L, d)) * 2, out=o),
                          "matrix_power": lambda L, o: L.linalg.matrix_power(T(L, 3, 3), 2, out=o), "cross": lambda L, o: L.linalg.cross(T(L, 3, 3), T(L, 3, 3), out=o),
                          "mm": lambda L, o: L.mm(T(L, 3, 3), T(L, 3, 3), out=o), "matmul": lambda L, o: L.matmul(T(L, 3, 3), T(L, 3, 3), out=o),
                          "mv": lambda L, o: L.mv(T(L, 3, 3), T(L, 3), out=o), "dot": lambda L, o: L.dot(T(L, 3), T(L, 3), out=o),
                          "outer": lambda L, o: L.outer(T(L, 3), T(L, 3), out=o), "addmm": lambda L, o: L.addmm(T(L, 3, 3), T(L, 3, 3), T(L, 3, 3), out=o),
                          "kron": lambda L, o: L.kron(T(L, 3, 1), T(L, 1, 3), out=o), "cond": lambda L, o: L.linalg.cond(T(L, 3, 3), out=o),
                          "matrix_rank": lambda L, o: L.linalg.matrix_rank(T(L, 3, 3), out=o), "solve_triangular": lambda L, o: L.linalg.solve_triangular(T(L, 3, 3), T(L, 3, 3), upper=True, out=o),
                          "lu_solve": lambda L, o: L.linalg.lu_solve(*L.linalg.lu_factor(T(L, 3, 3)), T(L, 3, 3), out=o), "vecdot": lambda L, o: L.linalg.vecdot(T(L, 3, 3), T(L, 3, 3), out=o),
                          "householder_product": lambda L, o: L.linalg.householder_product(T(L, 3, 3), T(L, 2), out=o), "cholesky_inverse": lambda L, o: L.cholesky_inverse(L.eye(3, dtype=dt(L, d)), out=o),
                          "trace?": None, "tensordot": lambda L, o: L.tensordot(T(L, 3, 3), T(L, 3, 3), out=o), "inner": lambda L, o: L.inner(T(L, 3, 3), T(L, 3, 3), out=o),
                          "multi_dot": lambda L, o: L.linalg.multi_dot([T(L, 3, 3), T(L, 3, 3)], out=o), "vander?": None,
                          "diag_embed?": None, "linalg.norm": lambda L, o: L.linalg.norm(T(L, 3, 3), out=o), "ger": lambda L, o: L.ger(T(L, 3), T(L, 3), out=o)}.items():
                if f is None:
                    continue

                def g(L, f=f):
                    o = O(L)
                    with warnings.catch_warnings(record=True) as w:
                        warnings.simplefilter("always")
                        r = f(L, o)
                    return r is o, o, [str(x.message)[:60] for x in w if "resized" in str(x.message)]
                check(f"out {nm}", tag, g, ctx=dict(tolmul=1e3))
            for nm, f in {"qr": lambda L, o: L.linalg.qr(T(L, 3, 3), out=o), "eigh": lambda L, o: L.linalg.eigh(T(L, 3, 3), out=o),
                          "slogdet": lambda L, o: L.linalg.slogdet(T(L, 3, 3), out=o), "lu_factor": lambda L, o: L.linalg.lu_factor(T(L, 3, 3), out=o),
                          "svd": lambda L, o: L.linalg.svd(T(L, 3, 3), out=o + (O(L),)), "inv_ex": lambda L, o: L.linalg.inv_ex(T(L, 3, 3), out=o),
                          "cholesky_ex": lambda L, o: L.linalg.cholesky_ex(L.eye(3, dtype=dt(L, d)), out=o), "lstsq?": None}.items():
                if f is None:
                    continue

                def g(L, f=f, nm=nm):
                    if nm in ("lu_factor", "inv_ex", "cholesky_ex"):
                        o = (O(L), L.zeros(0, dtype=L.int32))
                    else:
                        o = (O(L), O(L))
                    r = f(L, o)
                    return [x is y for x, y in zip(r, o)], o if nm not in ("qr", "eigh", "svd") else [x.shape for x in o]
                check(f"out tuple {nm}", tag, g, ctx=dict(tolmul=1e3))

report(maxper=int(os.environ.get("MAXPER", 4)))
