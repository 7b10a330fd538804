"""linalg, special, newer namespace functions, promotion, and a float64 gradient pass."""
import sys
from core import *  # noqa

which = sys.argv[1] if len(sys.argv) > 1 else "all"


def R(L, shape, d="float64", seed=0):
    return make(L, d, "contig", shape, seed=seed, special=False)


def SPD(L, n, d="float64", seed=0, batch=()):
    a = R(L, batch + (n, n), d, seed)
    return a @ a.mT + n * L.eye(n, dtype=dt(L, d))


if which in ("all", "linalg"):
    for d in ["float32", "float64"]:
        tm = dict(tolmul=1000 if d == "float32" else 1e4)
        for shp in [(3, 3), (2, 3, 3), (3, 4), (4, 3), (0, 3, 3), (1, 1)]:
            A = lambda L, shp=shp, d=d: R(L, shp, d, 1)  # noqa
            for ordv in [None, "fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")]:
                check("matrix_norm", f"{d} {shp} {ordv}", lambda L: L.linalg.matrix_norm(A(L), ord=ordv if ordv is not None else "fro"), ctx=tm)
                check("linalg.norm", f"{d} {shp} {ordv}", lambda L: L.linalg.norm(A(L), ord=ordv) if ordv is None or len(shp) <= 2 else L.linalg.norm(A(L), ord=ordv, dim=(-2, -1)), ctx=tm)
                check("matrix_norm keep", f"{d} {shp} {ordv}", lambda L: L.linalg.matrix_norm(A(L), ord=ordv or "fro", keepdim=True, dtype=L.float64), ctx=tm)
            for ordv in [2, 0, 1, 3.5, float("inf"), -float("inf"), -1]:
                check("vector_norm", f"{d} {shp} {ordv}", lambda L: L.linalg.vector_norm(A(L), ord=ordv), ctx=tm)
                check("vector_norm dim", f"{d} {shp} {ordv}", lambda L: L.linalg.vector_norm(A(L), ord=ordv, dim=-1, keepdim=True), ctx=tm)
                check("vector_norm dims", f"{d} {shp} {ordv}", lambda L: L.linalg.vector_norm(A(L), ord=ordv, dim=(0, -1), dtype=L.float64), ctx=tm)
            check("svdvals", f"{d} {shp}", lambda L: L.linalg.svdvals(A(L)), ctx=tm)
            check("pinv", f"{d} {shp}", lambda L: L.linalg.pinv(A(L)), ctx=tm)
            check("pinv herm", f"{d} {shp}", lambda L: L.linalg.pinv(A(L) + A(L).mT, hermitian=True) if shp[-1] == shp[-2] else L.linalg.pinv(A(L), rtol=0.3), ctx=tm)
            check("pinv atol", f"{d} {shp}", lambda L: L.linalg.pinv(A(L), atol=0.5, rtol=0.1), ctx=tm)
            check("matrix_rank", f"{d} {shp}", lambda L: (L.linalg.matrix_rank(A(L)), L.linalg.matrix_rank(A(L), atol=1.0), L.linalg.matrix_rank(A(L), hermitian=False, rtol=0.5)))
            check("svd S", f"{d} {shp}", lambda L: L.linalg.svd(A(L), full_matrices=False).S, ctx=tm)
            check("svd shapes", f"{d} {shp}", lambda L: [t.shape for t in L.linalg.svd(A(L))])
            check("svd recon", f"{d} {shp}", lambda L: (lambda r: r.U[..., :r.S.shape[-1]] @ L.diag_embed(r.S) @ r.Vh[..., :r.S.shape[-1], :])(L.linalg.svd(A(L))), ctx=tm)
            check("lu_factor", f"{d} {shp}", lambda L: L.linalg.lu_factor(A(L)), ctx=tm)
            check("lu", f"{d} {shp}", lambda L: L.linalg.lu(A(L)), ctx=tm)
            check("lu_factor_ex", f"{d} {shp}", lambda L: L.linalg.lu_factor_ex(A(L)), ctx=tm)
            check("lu nopivot", f"{d} {shp}", lambda L: L.linalg.lu(A(L), pivot=False), ctx=tm)
            check("qr", f"{d} {shp}", lambda L: [t.abs() for t in L.linalg.qr(A(L))], ctx=tm)
            check("qr r", f"{d} {shp}", lambda L: L.linalg.qr(A(L), mode="r")[1].abs(), ctx=tm)
            check("qr complete", f"{d} {shp}", lambda L: [t.shape for t in L.linalg.qr(A(L), mode="complete")])
            if shp[-1] == shp[-2]:
                check("det", f"{d} {shp}", lambda L: (L.linalg.det(A(L)), L.linalg.slogdet(A(L)), L.det(A(L)), L.logdet(A(L))), ctx=tm)
                check("inv", f"{d} {shp}", lambda L: L.linalg.inv(A(L)), ctx=tm)
                check("inv_ex", f"{d} {shp}", lambda L: L.linalg.inv_ex(A(L)), ctx=tm)
                check("cond", f"{d} {shp}", lambda L: [L.linalg.cond(A(L), p) for p in [None, "fro", "nuc", 1, -1, 2, -2, float("inf")]], ctx=tm)
                check("matrix_exp", f"{d} {shp}", lambda L: L.linalg.matrix_exp(A(L) * 0.3), ctx=tm)
                for k in [0, 1, 2, 3, -1, -2]:
                    check("matrix_power", f"{d} {shp} {k}", lambda L: L.linalg.matrix_power(A(L), k), ctx=tm)
                check("eigh", f"{d} {shp}", lambda L: (lambda r: (r.eigenvalues, (r.eigenvectors @ L.diag_embed(r.eigenvalues) @ r.eigenvectors.mT)))(L.linalg.eigh(A(L) + A(L).mT)), ctx=tm)
                check("eigh U", f"{d} {shp}", lambda L: L.linalg.eigh(A(L) + A(L).mT, UPLO="U").eigenvalues, ctx=tm)
                check("eigh U tri", f"{d} {shp}", lambda L: L.linalg.eigh(A(L), UPLO="U").eigenvalues, ctx=tm)
                check("eigvalsh L tri", f"{d} {shp}", lambda L: L.linalg.eigvalsh(A(L)), ctx=tm)
                check("eigvalsh U tri", f"{d} {shp}", lambda L: L.linalg.eigvalsh(A(L), "U"), ctx=tm)
                n = shp[-1]
                b = shp[:-2]
                check("cholesky", f"{d} {shp}", lambda L: (L.linalg.cholesky(SPD(L, n, d, 2, b)), L.linalg.cholesky(SPD(L, n, d, 2, b), upper=True)), ctx=tm)
                check("cholesky_ex", f"{d} {shp}", lambda L: L.linalg.cholesky_ex(A(L)), ctx=tm)
                check("cholesky_ex spd", f"{d} {shp}", lambda L: L.linalg.cholesky_ex(SPD(L, n, d, 2, b)), ctx=tm)
                check("solve", f"{d} {shp}", lambda L: (L.linalg.solve(A(L), R(L, shp[:-1] + (2,), d, 3)), L.linalg.solve(A(L), R(L, shp[:-1], d, 4))), ctx=tm)
                check("solve left", f"{d} {shp}", lambda L: L.linalg.solve(A(L), R(L, shp[:-2] + (2, n), d, 3), left=False), ctx=tm)
                check("solve_ex", f"{d} {shp}", lambda L: L.linalg.solve_ex(A(L), R(L, shp[:-1] + (2,), d, 3)), ctx=tm)
                check("lu_solve", f"{d} {shp}", lambda L: (lambda LU, p: (L.linalg.lu_solve(LU, p, R(L, shp[:-1] + (2,), d, 3)), L.linalg.lu_solve(LU, p, R(L, shp[:-1] + (2,), d, 3), adjoint=True), L.linalg.lu_solve(LU, p, R(L, shp[:-2] + (2, n), d, 3), left=False)))(*L.linalg.lu_factor(A(L))), ctx=tm)
                for up in [True, False]:
                    for ut in [False, True]:
                        check("solve_triangular", f"{d} {shp} up={up} ut={ut}", lambda L: (L.linalg.solve_triangular(A(L) + 3 * L.eye(n, dtype=dt(L, d)), R(L, shp[:-1] + (2,), d, 3), upper=up, unitriangular=ut), L.linalg.solve_triangular(A(L) + 3 * L.eye(n, dtype=dt(L, d)), R(L, shp[:-2] + (2, n), d, 3), upper=up, left=False, unitriangular=ut)), ctx=tm)
                check("cholesky_inverse", f"{d} {shp}", lambda L: (L.cholesky_inverse(L.linalg.cholesky(SPD(L, n, d, 2, b))), L.cholesky_inverse(L.linalg.cholesky(SPD(L, n, d, 2, b), upper=True), upper=True)), ctx=tm)
                check("cholesky_solve", f"{d} {shp}", lambda L: L.cholesky_solve(R(L, shp[:-1] + (2,), d, 3), L.linalg.cholesky(SPD(L, n, d, 2, b))), ctx=tm)
            check("lstsq", f"{d} {shp}", lambda L: (lambda r: (r.solution, r.rank, r.singular_values))(L.linalg.lstsq(A(L), R(L, shp[:-1] + (2,), d, 3))), ctx=tm)
            for drv in ["gelsd", "gelss", "gelsy", "gels"]:
                check("lstsq driver", f"{d} {shp} {drv}", lambda L: (lambda r: (r.solution, r.residuals, r.rank, r.singular_values))(L.linalg.lstsq(A(L), R(L, shp[:-1] + (2,), d, 3), driver=drv)), ctx=tm)
            check("householder_product", f"{d} {shp}", lambda L: L.linalg.householder_product(A(L), R(L, shp[:-2] + (min(shp[-2:]),), d, 5)) if shp[-2] >= shp[-1] else L.linalg.householder_product(A(L).mT, R(L, shp[:-2] + (1,), d, 5)), ctx=tm)
        check("multi_dot", d, lambda L: L.linalg.multi_dot([R(L, (3,), d), R(L, (3, 4), d, 1), R(L, (4, 2), d, 2), R(L, (2,), d, 3)]), ctx=tm)
        check("multi_dot 2", d, lambda L: L.linalg.multi_dot([R(L, (2, 3), d), R(L, (3, 4), d, 1)]), ctx=tm)
        check("multi_dot 1", d, lambda L: L.linalg.multi_dot([R(L, (2, 3), d)]))
        check("multi_dot bad", d, lambda L: L.linalg.multi_dot([R(L, (2, 3), d), R(L, (4, 4), d)]))
        for N in [None, 0, 1, 3]:
            check("vander", f"{d} {N}", lambda L: L.linalg.vander(R(L, (2, 4), d), N=N), ctx=tm)
            check("vander int", f"{N}", lambda L: L.linalg.vander(R(L, (4,), "int64"), N=N))
            check("torch.vander", f"{d} {N}", lambda L: (L.vander(R(L, (4,), d), N=N), L.vander(R(L, (4,), d), N=N, increasing=True)), ctx=tm)
        check("vecdot", d, lambda L: L.linalg.vecdot(R(L, (2, 3), d), R(L, (3,), d, 1)), ctx=tm)
        check("vecdot dim", d, lambda L: L.linalg.vecdot(R(L, (2, 3), d), R(L, (2, 1), d, 1), dim=0), ctx=tm)
        check("vecdot mix", d, lambda L: L.linalg.vecdot(R(L, (2, 3), d), R(L, (3,), "float32", 1)), ctx=tm)
        check("linalg.cross", d, lambda L: L.linalg.cross(R(L, (2, 3), d), R(L, (1, 3), d, 1)), ctx=tm)
        check("linalg.cross dim", d, lambda L: L.linalg.cross(R(L, (3, 2), d), R(L, (3, 2), d, 1), dim=0), ctx=tm)
        check("linalg.cross bad", d, lambda L: L.linalg.cross(R(L, (3, 2), d), R(L, (3, 2), d, 1)))
        check("torch.cross nodim", d, lambda L: L.cross(R(L, (3, 3), d), R(L, (3, 3), d, 1)), ctx=tm)
        check("tensorinv", d, lambda L: L.linalg.tensorinv(R(L, (4, 2, 2), d), ind=1), ctx=tm)
        check("tensorinv 2", d, lambda L: L.linalg.tensorinv(R(L, (2, 3, 6), d), ind=2), ctx=tm)
        check("tensorsolve", d, lambda L: L.linalg.tensorsolve(R(L, (2, 3, 6), d), R(L, (2, 3), d, 1)), ctx=tm)
        check("tensorsolve dims", d, lambda L: L.linalg.tensorsolve(R(L, (6, 2, 3), d), R(L, (2, 3), d, 1), dims=(0,)), ctx=tm)
        check("diagonal", d, lambda L: L.linalg.diagonal(R(L, (2, 3, 4), d), offset=1))
        check("matmul", d, lambda L: L.linalg.matmul(R(L, (2, 3), d), R(L, (3,), d)))
        check("inv singular", d, lambda L: L.linalg.inv(L.zeros(2, 2, dtype=dt(L, d))))
        check("inv_ex singular", d, lambda L: L.linalg.inv_ex(L.zeros(2, 2, dtype=dt(L, d))))
        check("solve_ex singular", d, lambda L: L.linalg.solve_ex(L.zeros(2, 2, dtype=dt(L, d)), L.ones(2, dtype=dt(L, d))))
        check("cholesky_ex bad", d, lambda L: L.linalg.cholesky_ex(-L.eye(3, dtype=dt(L, d))))
        check("cholesky bad", d, lambda L: L.linalg.cholesky(-L.eye(3, dtype=dt(L, d))))
        check("det singular", d, lambda L: (L.linalg.det(L.ones(3, 3, dtype=dt(L, d))), L.linalg.slogdet(L.ones(3, 3, dtype=dt(L, d)))))
        check("slogdet neg", d, lambda L: L.linalg.slogdet(L.tensor([[0., 1.], [1., 0.]], dtype=dt(L, d))))
        check("matrix_norm 1d", d, lambda L: L.linalg.matrix_norm(R(L, (3,), d)))
        check("matrix_norm bad ord", d, lambda L: L.linalg.matrix_norm(R(L, (3, 3), d), ord=3))
        check("vector_norm int", d, lambda L: L.linalg.vector_norm(R(L, (3,), "int64")))
        check("norm vec ord", d, lambda L: [L.linalg.norm(R(L, (4,), d), o) for o in [None, 0, 1, 2, 3, float("inf")]])
        check("norm str 1d", d, lambda L: L.linalg.norm(R(L, (4,), d), "fro"))
        check("torch.norm", d, lambda L: [L.norm(R(L, (3, 4), d), p) for p in ["fro", "nuc", 1, 2, float("inf"), 0]], ctx=tm)
        check("torch.norm dim", d, lambda L: [L.norm(R(L, (3, 4), d), p, dim=1, keepdim=True) for p in ["fro", 1, 2, 3]], ctx=tm)
        check("matrix_power int", d, lambda L: L.linalg.matrix_power(R(L, (3, 3), "int64"), 3))
        check("matrix_power int neg", d, lambda L: L.linalg.matrix_power(R(L, (3, 3), "int64"), -1))
        check("matrix_exp int", d, lambda L: L.linalg.matrix_exp(R(L, (3, 3), "int64")))
        check("det int", d, lambda L: L.linalg.det(R(L, (3, 3), "int64")))
        check("inv nonsquare", d, lambda L: L.linalg.inv(R(L, (3, 4), d)))
        check("eigh nonsquare", d, lambda L: L.linalg.eigh(R(L, (3, 4), d)))
        check("solve bcast", d, lambda L: L.linalg.solve(R(L, (2, 3, 3), d), R(L, (3,), d, 1)), ctx=tm)
        check("solve bcast2", d, lambda L: L.linalg.solve(R(L, (2, 3, 3), d), R(L, (1, 3, 2), d, 1)), ctx=tm)
        check("solve bad", d, lambda L: L.linalg.solve(R(L, (3, 3), d), R(L, (2, 3), d, 1)))
        check("solve mixed", d, lambda L: L.linalg.solve(R(L, (3, 3), d), R(L, (3,), "float32", 1)), ctx=tm)
        # old spellings
        check("torch.svd", d, lambda L: (lambda r: (r.S, [t.shape for t in r]))(L.svd(R(L, (4, 3), d))), ctx=tm)
        check("torch.svd some", d, lambda L: [t.shape for t in L.svd(R(L, (4, 3), d), some=False)])
        check("torch.svd compute_uv", d, lambda L: L.svd(R(L, (4, 3), d), compute_uv=False), ctx=tm)
        check("torch.qr", d, lambda L: [t.abs() for t in L.qr(R(L, (4, 3), d))], ctx=tm)
        check("torch.qr some", d, lambda L: [t.shape for t in L.qr(R(L, (4, 3), d), some=False)])
        check("torch.cholesky", d, lambda L: L.cholesky(SPD(L, 3, d), upper=True), ctx=tm)
        check("torch.lu", d, lambda L: L.lu(R(L, (3, 3), d), get_infos=True), ctx=tm)
        check("torch.lu_unpack", d, lambda L: L.lu_unpack(*L.linalg.lu_factor(R(L, (3, 3), d))), ctx=tm)
        check("torch.lu_solve", d, lambda L: L.lu_solve(R(L, (3, 2), d, 1), *L.linalg.lu_factor(R(L, (3, 3), d))), ctx=tm)
        check("torch.triangular_solve", d, lambda L: L.triangular_solve(R(L, (3, 2), d, 1), R(L, (3, 3), d) + 3 * L.eye(3, dtype=dt(L, d)), upper=False, transpose=True), ctx=tm)
        check("torch.symeig gone", d, lambda L: L.symeig(R(L, (3, 3), d)))
        check("torch.matrix_rank gone", d, lambda L: L.matrix_rank(R(L, (3, 3), d)))
        check("torch.pinverse", d, lambda L: L.pinverse(R(L, (3, 4), d), rcond=0.1), ctx=tm)
        check("torch.chain_matmul", d, lambda L: L.chain_matmul(R(L, (3, 4), d), R(L, (4, 2), d)), ctx=tm)
        check("torch.orgqr", d, lambda L: L.orgqr(R(L, (4, 3), d), R(L, (3,), d, 5)), ctx=tm)
        check("torch.ger", d, lambda L: L.ger(R(L, (3,), d), R(L, (4,), d)))
        check("torch.inverse", d, lambda L: L.inverse(R(L, (3, 3), d)), ctx=tm)
        check("torch.slogdet", d, lambda L: L.slogdet(R(L, (3, 3), d)), ctx=tm)

if which in ("all", "special"):
    names = [n for n in dir(torch.special) if not n.startswith("_") and callable(getattr(torch.special, n)) and hasattr(ctorch.special, n)]
    two = {"xlogy", "xlog1py", "zeta", "chebyshev_polynomial_t", "chebyshev_polynomial_u", "hermite_polynomial_h",
           "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p", "gammainc", "gammaincc"}
    for n in names:
        for d in ["float32", "float64", "int64", "bool", "float16"]:
            for lay in ["contig", "transposed", "zerod", "empty"]:
                def f(L, n=n, d=d, lay=lay):
                    S = L.special
                    x = make(L, d, lay, (3, 4), seed=3)
                    if n in two:
                        return getattr(S, n)(x, make(L, d, lay, (3, 4), seed=4).abs() if n in ("gammainc", "gammaincc", "zeta") else make(L, d, lay, (3, 4), seed=4))
                    if n in ("softmax", "log_softmax"):
                        return getattr(S, n)(x, 0 if lay == "zerod" else -1)
                    if n == "logsumexp":
                        return S.logsumexp(x, 0 if lay == "zerod" else -1)
                    if n == "multigammaln":
                        return S.multigammaln(x.abs() + 3, 2)
                    if n == "polygamma":
                        return S.polygamma(2, x)
                    if n == "log_ndtr" or n == "ndtri" or n == "logit":
                        return getattr(S, n)(x) if n != "logit" else (S.logit(x), S.logit(x, eps=0.1))
                    if n == "round":
                        return S.round(x), S.round(x, decimals=1)
                    return getattr(S, n)(x)
                check(f"special.{n}", f"{d} {lay}", f, ctx=dict(tolmul=100))
        # scalar second operand
        if n in two:
            check(f"special.{n} scalar", "", lambda L: (getattr(L.special, n)(R(L, (3,), "float32").abs(), 2.0), getattr(L.special, n)(2.0, R(L, (3,), "float32").abs()) if n not in ("gammainc", "gammaincc") else None))
            check(f"special.{n} int scalar", "", lambda L: getattr(L.special, n)(R(L, (3,), "int64"), 2))
    check("special missing", "", lambda L: sorted(n for n in dir(torch.special) if not n.startswith("_") and not hasattr(ctorch.special, n)) if L is ctorch else sorted(n for n in dir(torch.special) if not n.startswith("_") and not hasattr(ctorch.special, n)))

if which in ("all", "ns"):
    # finfo / iinfo
    for d in ["float32", "float64", "float16", "bfloat16"]:
        check("finfo", d, lambda L: (lambda f: (f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution, f.dtype, str(f)))(L.finfo(dt(L, d))))
    check("finfo default", "", lambda L: L.finfo().bits)
    check("finfo int", "", lambda L: L.finfo(L.int32))
    for d in ["int64", "int32", "int16", "int8", "uint8", "bool"]:
        check("iinfo", d, lambda L: (lambda f: (f.bits, f.max, f.min, f.dtype, str(f)))(L.iinfo(dt(L, d))))
    check("iinfo float", "", lambda L: L.iinfo(L.float32))
    # empty_strided / permuted
    for sz, st in [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((2, 3), (0, 1)), ((0, 3), (3, 1)), ((), ())]:
        check("empty_strided", f"{sz} {st}", lambda L: (lambda t: (t.shape, t.stride(), t.dtype))(L.empty_strided(sz, st, dtype=L.float64)))
    for sz, perm in [((2, 3, 4), (2, 0, 1)), ((2, 3), (0, 1)), ((2, 3), (0, 0)), ((2, 3), (0,))]:
        check("empty_permuted", f"{sz} {perm}", lambda L: (lambda t: (t.shape, t.stride()))(L.empty_permuted(sz, perm)))
    # *_copy ops
    for n in sorted(n for n in dir(torch) if n.endswith("_copy") and hasattr(ctorch, n)):
        def f(L, n=n):
            x = R(L, (2, 3, 4), "float32", 1)
            fn = getattr(L, n)
            args = {"as_strided_copy": ((2, 2), (1, 2)), "diagonal_copy": (), "expand_copy": ((2, 2, 3, 4),), "narrow_copy": (1, 1, 2),
                    "permute_copy": ((2, 0, 1),), "select_copy": (1, -1), "slice_copy": (2, 1, 4, 2), "squeeze_copy": (),
                    "t_copy": None, "transpose_copy": (0, 2), "unsqueeze_copy": (1,), "view_copy": ((4, 6),), "unfold_copy": (2, 2, 1),
                    "unbind_copy": (1,), "split_copy": (2, 2), "split_with_sizes_copy": ([1, 3], 2), "alias_copy": (),
                    "detach_copy": (), "indices_copy": None, "values_copy": None, "ccol_indices_copy": None, "col_indices_copy": None,
                    "crow_indices_copy": None, "row_indices_copy": None, "view_as_real_copy": None, "view_as_complex_copy": None,
                    "_fw_primal_copy": None, "_make_dual_copy": None, "lift_fresh_copy": (), "_neg_view_copy": (), "_conj_copy": (),
                    "_indices_copy": None, "_values_copy": None, "_reshape_alias_copy": None, "_nested_view_from_buffer_copy": None,
                    "_sparse_broadcast_to_copy": None, "_test_autograd_multiple_dispatch_view_copy": None, "_mkldnn_transpose_copy": None,
                    "tensor_split_copy": None, "split_with_sizes": None, "movedim_copy": None, "unsafe_split": None}.get(n, ())
            if args is None:
                return None
            if n == "t_copy":
                return L.t_copy(x[0])
            r = fn(x, *args)
            return r
        check(f"ns {n}", "", f)
        check(f"ns {n} out", "", lambda L: getattr(L, n)(R(L, (3, 4), "float32"), out=L.empty(0)) if n in ("alias_copy", "detach_copy", "squeeze_copy", "t_copy") else None)
    # split family
    for n, args in [("split", (2,)), ("split", ([1, 3], 1)), ("tensor_split", (3,)), ("tensor_split", ([1, 5], 1)), ("tensor_split", (L_ := None,)),
                    ("hsplit", (2,)), ("vsplit", ([1],)), ("dsplit", (2,)), ("unsafe_split", (2, 1)), ("unsafe_split_with_sizes", ([2, 2], 1)),
                    ("split_with_sizes", ([1, 1], 0)), ("chunk", (3, 2)), ("unbind", (-1,)), ("tensor_split", (0,)), ("hsplit", (5,)), ("split", (0, 1))]:
        def f(L, n=n, args=args):
            x = R(L, (2, 4, 4), "float32", 1)
            if args == (None,):
                return L.tensor_split(x, L.tensor([1, 3]), dim=2)
            return getattr(L, n)(x, *args)
        check(f"split {n}", f"{args}", f)
    check("as_strided_scatter", "", lambda L: L.as_strided_scatter(R(L, (3, 4)), R(L, (2, 2), seed=1), (2, 2), (1, 2), 1))
    check("as_strided_scatter bad", "", lambda L: L.as_strided_scatter(R(L, (3, 4)), R(L, (2, 3), seed=1), (2, 2), (1, 2)))
    check("select_scatter", "", lambda L: L.select_scatter(R(L, (3, 4)), R(L, (3,), seed=1), 1, -1))
    check("slice_scatter", "", lambda L: L.slice_scatter(R(L, (3, 4)), R(L, (3, 2), seed=1), 1, 0, 4, 2))
    check("diagonal_scatter", "", lambda L: L.diagonal_scatter(R(L, (3, 4)), R(L, (2,), seed=1), 1))
    for d in ["float32", "int64", "bool"]:
        check("fill", d, lambda L: (L.fill(R(L, (2, 2), d), 2.5), R(L, (2, 2), d).fill_(L.tensor(3))))
        check("fill 1d tensor", d, lambda L: R(L, (2, 2), d).fill_(L.tensor([3])))
        check("range", d, lambda L: (L.range(0, 3, dtype=dt(L, d)) if d != "bool" else L.range(0, 1), L.range(0, 1, 0.25)))
    check("arange float", "", lambda L: (L.arange(0, 1, 0.1), L.arange(1, 0, -0.3), L.arange(0.5, 3), L.arange(3, dtype=L.float16)))
    check("linspace/logspace", "", lambda L: (L.linspace(0, 1, 5), L.logspace(0, 2, 3, base=2), L.linspace(0, 10, 4, dtype=L.int64), L.linspace(2, 2, 1)))
    # promotion
    bin_ops = ["add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow", "maximum", "minimum", "atan2",
               "eq", "lt", "bitwise_and", "logical_and", "hypot", "copysign", "nextafter", "fmax", "xlogy", "ldexp", "float_power"]
    dts = ["float32", "float64", "float16", "int64", "int32", "int8", "uint8", "bool", "bfloat16", "int16"]
    for op in bin_ops:
        for da in dts:
            for db in dts + ["py_int", "py_float", "py_bool"]:
                for za, zb in [(False, False), (True, False), (False, True)]:
                    def f(L, op=op, da=da, db=db, za=za, zb=zb):
                        a = make(L, da, "zerod" if za else "contig", (3,), seed=5)
                        if db.startswith("py"):
                            b = {"py_int": 2, "py_float": 1.5, "py_bool": True}[db]
                        else:
                            b = make(L, db, "zerod" if zb else "contig", (3,), seed=6)
                        return getattr(L, op)(a, b)
                    check(f"promo {op}", f"{da}{'0d' if za else ''} {db}{'0d' if zb else ''}", f, ctx=dict(tolmul=10))
    for op in ["add_", "mul_", "div_", "sub_", "pow_", "floor_divide_", "remainder_"]:
        for da in ["int64", "float32", "uint8", "bool", "float16"]:
            for db in ["float64", "int64", "py_float", "float64_0d", "bool"]:
                def f(L, op=op, da=da, db=db):
                    a = make(L, da, "contig", (3,), seed=5)
                    b = 2.5 if db == "py_float" else make(L, db.replace("_0d", ""), "zerod" if "0d" in db else "contig", (3,), seed=6)
                    return getattr(a, op)(b)
                check(f"promo inplace {op}", f"{da} {db}", f)

if which in ("all", "red"):
    for op in ["sum", "prod", "mean", "nansum", "nanmean", "cumsum", "cumprod", "logsumexp", "amax", "std", "var", "norm", "count_nonzero"]:
        for d in ["int64", "int8", "bool", "float16", "float32"]:
            for od in [None, "float64", "int64", "float16"]:
                def f(L, op=op, d=d, od=od):
                    x = R(L, (3, 4), d, 2)
                    kw = {} if od is None else {"dtype": dt(L, od)}
                    if op in ("cumsum", "cumprod"):
                        return getattr(L, op)(x, 1, **kw)
                    if op in ("logsumexp", "amax", "std", "var", "norm", "count_nonzero"):
                        return getattr(L, op)(x, 1) if od is None else None
                    return getattr(L, op)(x, **kw), getattr(L, op)(x, 1, keepdim=True, **kw)
                check(f"red {op} dtype", f"{d} {od}", f, ctx=dict(tolmul=10))
            for od in ["float64", "int64", "float32"]:
                def f(L, op=op, d=d, od=od):
                    x = R(L, (3, 4), d, 2)
                    out = L.empty(0, dtype=dt(L, od))
                    if op in ("cumsum", "cumprod", "logsumexp", "amax", "std", "var", "norm", "count_nonzero"):
                        if op == "count_nonzero":
                            return None
                        r = getattr(L, op)(x, 1, out=out)
                    else:
                        r = getattr(L, op)(x, 1, out=out)
                    return r, out, r is out
                check(f"red {op} out", f"{d} {od}", f, ctx=dict(tolmul=10))
    # indexing / scatter / gather with negative & duplicate indices
    for d in ["float32", "int64", "bool"]:
        for idx in [[0, -1, 0], [-3, 2], [1, 1, 1], [3], [-4]]:
            check("index_select", f"{d} {idx}", lambda L: L.index_select(R(L, (3, 4), d), 0, L.tensor(idx)))
            check("index_add", f"{d} {idx}", lambda L: R(L, (3, 4), d).index_add(0, L.tensor(idx), R(L, (len(idx), 4), d, 1), alpha=2 if d != "bool" else True))
            check("index_copy", f"{d} {idx}", lambda L: R(L, (3, 4), d).index_copy(0, L.tensor(idx), R(L, (len(idx), 4), d, 1)))
            check("index_fill", f"{d} {idx}", lambda L: R(L, (3, 4), d).index_fill(0, L.tensor(idx), 1))
            for red in ["prod", "mean", "amax", "amin"]:
                for inc in [True, False]:
                    check("index_reduce", f"{d} {idx} {red} {inc}", lambda L: R(L, (3, 4), d).index_reduce(0, L.tensor(idx), R(L, (len(idx), 4), d, 1), red, include_self=inc))
            check("take", f"{d} {idx}", lambda L: L.take(R(L, (3, 4), d), L.tensor(idx)))
            check("put", f"{d} {idx}", lambda L: R(L, (3, 4), d).put(L.tensor(idx), R(L, (len(idx),), d, 1), accumulate=True))
            check("index_put acc", f"{d} {idx}", lambda L: R(L, (3, 4), d).index_put((L.tensor(idx),), R(L, (4,), d, 1), accumulate=True))
        for idx in [[[0, -1], [2, 2]], [[3, 0], [0, 0]], [[0, 0], [0, 0]]]:
            check("gather", f"{d} {idx}", lambda L: L.gather(R(L, (3, 4), d), 1, L.tensor(idx)))
            check("take_along_dim", f"{d} {idx}", lambda L: L.take_along_dim(R(L, (3, 4), d), L.tensor(idx), 1))
            check("scatter", f"{d} {idx}", lambda L: R(L, (3, 4), d).scatter(1, L.tensor(idx), R(L, (2, 2), d, 1)))
            check("scatter_add", f"{d} {idx}", lambda L: R(L, (3, 4), d).scatter_add(1, L.tensor(idx), R(L, (2, 2), d, 1)))
            for red in ["sum", "prod", "mean", "amax", "amin"]:
                for inc in [True, False]:
                    check("scatter_reduce", f"{d} {idx} {red} {inc}", lambda L: R(L, (3, 4), d).scatter_reduce(1, L.tensor(idx), R(L, (2, 2), d, 1), red, include_self=inc))
            check("scatter value reduce", f"{d} {idx}", lambda L: R(L, (3, 4), d).scatter(1, L.tensor(idx), 2, reduce="multiply"))
            check("scatter src reduce", f"{d} {idx}", lambda L: R(L, (3, 4), d).scatter(1, L.tensor(idx), R(L, (2, 2), d, 1), reduce="add"))
    # inplace on views
    for op in ["add_", "mul_", "clamp_", "zero_", "fill_", "exp_", "neg_", "abs_", "sqrt_", "index_fill_", "masked_fill_", "scatter_", "copy_", "t_", "unsqueeze_", "squeeze_", "transpose_"]:
        def f(L, op=op):
            base = R(L, (4, 6), "float32", 1)
            v = base[1:, ::2]
            m = getattr(v, op)
            if op in ("add_", "mul_", "copy_"):
                r = m(R(L, (3,), "float32", 2))
            elif op == "clamp_":
                r = m(-0.5, 0.5)
            elif op == "fill_":
                r = m(3)
            elif op == "index_fill_":
                r = m(1, L.tensor([0, -1]), 7.0)
            elif op == "masked_fill_":
                r = m(v > 0, 0.0)
            elif op == "scatter_":
                r = m(1, L.tensor([[2, 0, 1]]), 9.0)
            elif op == "unsqueeze_":
                r = m(0)
            elif op == "transpose_":
                r = m(0, 1)
            else:
                r = m()
            return r, base, r is v, v.shape, v.stride()
        check("inplace view", op, f)
    for shp in [(3, 5), (2, 3, 4), (4, 1, 4)]:
        check("bcast err add", f"{shp}", lambda L: R(L, (3, 4)) + R(L, shp))
        check("bcast err where", f"{shp}", lambda L: L.where(R(L, (3, 4)) > 0, R(L, shp), 0.0))

report(maxper=int(os.environ.get("MAXPER", 4)))
