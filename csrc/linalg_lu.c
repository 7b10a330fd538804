/* linalg_lu.c: what the LU, QR and SVD kernels give beyond the factorizations themselves:
 *
 *   linalg.lu and torch.lu_unpack (P, L, U from lu_factor's packed factors), linalg.lu_solve,
 *   linalg.lstsq (QR for driver 'gels', the SVD otherwise), linalg.matrix_exp / torch.matrix_exp
 *   (scaling and squaring of a Taylor polynomial; LinalgMatrixExpBackward0), linalg.tensorinv /
 *   tensorsolve, linalg.householder_product / torch.orgqr, and lu_factor's backward formula
 *   (LinalgLuFactorExBackward0).
 *
 * Everything but matrix_exp and lu_factor is composed of recording ops (solve_triangular, matmul,
 * tril/triu, the SVD), so gradients come from those ops' formulas; the permutations of the pivots
 * are built on the host and are constants. */
#include "args.h"
#include "autograd_arena.h"
#include "autograd.h"
#include "creation.h"
#include "device.h"
#include "linalg.h"
#include "registry.h"
#include "tensor.h"
#include <float.h>
#include <math.h>
#include <string.h>

#define MT(x) METH((x), "transpose", "(ii)", -2, -1)
#define BOOL(b) ((b) ? Py_True : Py_False)

/* ============================================================================================
 * helpers
 * ============================================================================================ */

static CtTensorObject *tensor_arg(PyObject *obj, const char *fname, const char *name)
{
    return ct_linalg_tensor_arg(obj, fname, name);
}

/* The permutation matrices P (..., m, m) with A = P L U of the 1-based LAPACK pivots (..., k):
 * the row swaps applied in order to the identity's rows, on the host. In dtype on the pivots'
 * device, held by the arena; NULL with PyTorch's error for pivots that are not int32. */
static PyObject *permutation_of(CtArena *arena, CtTensorObject *pivots, int64_t m, CtDType dtype)
{
    if (pivots->dtype != CT_I32) {
        PyErr_SetString(PyExc_RuntimeError,
                        "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                        "Note: this function is intended to be used with the output produced by "
                        "torch.linalg.lu_factor");
        arena->failed = true;
        return NULL;
    }
    CtDevice cpu = {CT_DEV_CPU, -1};
    int64_t k = pivots->ndim > 0 ? pivots->sizes[pivots->ndim - 1] : 1, batch = 1, shape[CT_MAX_DIMS];
    for (int i = 0; i < pivots->ndim - 1; i++) {
        batch *= pivots->sizes[i];
        shape[i] = pivots->sizes[i];
    }
    int nd = pivots->ndim > 0 ? pivots->ndim - 1 : 0;
    shape[nd] = shape[nd + 1] = m;
    CtTensorObject *host = (CtTensorObject *)KEEP((PyObject *)ct_to(pivots, CT_I32, cpu, false));
    CtTensorObject *dense = host ? (CtTensorObject *)KEEP((PyObject *)ct_contiguous(host)) : NULL;
    CtTensorObject *P = dense ? (CtTensorObject *)KEEP((PyObject *)ct_zeros(nd + 2, shape, CT_F64, cpu)) : NULL;
    if (P == NULL) {
        return NULL;
    }
    const int32_t *piv = (const int32_t *)ct_data(dense);
    double *out = (double *)ct_data(P);
    int64_t perm[512], *rows = m <= 512 ? perm : PyMem_Calloc((size_t)m, sizeof(int64_t));
    if (rows == NULL) {
        PyErr_NoMemory();
        arena->failed = true;
        return NULL;
    }
    for (int64_t b = 0; b < batch && !arena->failed; b++) {
        for (int64_t r = 0; r < m; r++) {
            rows[r] = r;
        }
        for (int64_t j = 0; j < k && j < m; j++) {
            int64_t t = (int64_t)piv[b * k + j] - 1;
            if (t < 0 || t >= m) {
                PyErr_Format(PyExc_RuntimeError, "torch.lu_unpack: pivot %lld is out of range [1, %lld]",
                             (long long)(t + 1), (long long)m);
                arena->failed = true;
                break;
            }
            int64_t s = rows[j];
            rows[j] = rows[t];
            rows[t] = s;
        }
        /* row j of P^T A is row rows[j] of A: P[rows[c], c] = 1 */
        for (int64_t c = 0; c < m; c++) {
            out[b * m * m + rows[c] * m + c] = 1.0;
        }
    }
    if (rows != perm) {
        PyMem_Free(rows);
    }
    return arena->failed ? NULL : KEEP((PyObject *)ct_to(P, dtype, ct_device_of(pivots), false));
}

/* (P, L, U) of packed (..., m, n) factors: L (..., m, k) unit lower, U (..., k, n) upper. Each
 * unpack flag false leaves its part(s) empty, as PyTorch's. Held by the arena. */
static int unpack(CtArena *arena, PyObject *LU, CtTensorObject *pivots, bool data, bool perm, PyObject **P,
                  PyObject **L, PyObject **U)
{
    CtTensorObject *t = CT_TENSOR(LU);
    int64_t m = t->sizes[t->ndim - 2], n = t->sizes[t->ndim - 1], k = m < n ? m : n;
    PyObject *empty = METH(LU, "new_empty", "((i))", 0);
    *P = perm ? permutation_of(arena, pivots, m, t->dtype) : empty;
    if (data) {
        PyObject *eye = KEEP((PyObject *)ct_eye(m, k, t->dtype, ct_device_of(t)));
        *L = ADD(METH(METH(LU, "narrow", "(iLL)", -1, 0LL, (long long)k), "tril", "(i)", -1), eye);
        *U = METH(METH(LU, "narrow", "(iLL)", -2, 0LL, (long long)k), "triu", NULL);
    } else {
        *L = *U = empty;
    }
    return arena->failed ? -1 : 0;
}

static PyObject *triple(PyTypeObject **type, const char *name, const char *const *fields, CtArena *arena,
                        PyObject *a, PyObject *b, PyObject *c)
{
    PyObject *items[3] = {TAKE(a), TAKE(b), TAKE(c)};
    if (items[0] == NULL || items[1] == NULL || items[2] == NULL) {
        Py_XDECREF(items[0]);
        Py_XDECREF(items[1]);
        Py_XDECREF(items[2]);
        return NULL;
    }
    return ct_linalg_named_result(type, name, fields, 3, items);
}

/* ============================================================================================
 * lu, lu_unpack, lu_solve
 * ============================================================================================ */

static const char *const plu_fields[] = {"P", "L", "U"};

PyDoc_STRVAR(lu_unpack_doc, "lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None)\n\n"
                            "torch.lu_unpack: (P, L, U) of lu_factor's packed factors.");
static PyObject *py_lu_unpack(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"LU_data", "LU_pivots", "unpack_data", "unpack_pivots", "*out", NULL};
    static PyTypeObject *type = NULL;
    PyObject *a[5], *P, *L, *U;
    CtTensorObject *LU, *pivots;
    bool data = true, perm = true;
    if (ct_parse_args("lu_unpack", args, nargs, kwnames, names, 2, a) < 0 ||
        (LU = tensor_arg(a[0], "lu_unpack", "LU_data")) == NULL ||
        (pivots = tensor_arg(a[1], "lu_unpack", "LU_pivots")) == NULL || ct_arg_bool(a[2], &data) < 0 ||
        ct_arg_bool(a[3], &perm) < 0) {
        return NULL;
    }
    if (LU->ndim < 2) {
        char shape[256];
        ct_format_sizes(shape, sizeof shape, LU->ndim, LU->sizes);
        PyErr_Format(PyExc_RuntimeError, "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: %s "
                     "instead", shape);
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = NULL;
    if (unpack(arena, (PyObject *)LU, pivots, data, perm, &P, &L, &U) == 0) {
        r = triple(&type, "torch.return_types.lu_unpack", plu_fields, arena, P, L, U);
    }
    arena_free(arena);
    return ct_linalg_write_outs(r, a[4], "lu_unpack", 3);
}

PyDoc_STRVAR(linalg_lu_doc, "_linalg_lu(A, *, pivot=True, out=None)\n\n"
                            "torch.linalg.lu: (P, L, U) with A = P L U, from lu_factor_ex.");
static PyObject *py_linalg_lu(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "*pivot", "*out", NULL};
    static PyTypeObject *type = NULL;
    PyObject *a[3], *P, *L, *U;
    CtTensorObject *A;
    if (ct_parse_args("linalg_lu", args, nargs, kwnames, names, 1, a) < 0 ||
        (A = tensor_arg(a[0], "linalg_lu", "A")) == NULL) {
        return NULL;
    }
    if (A->ndim < 2) {
        char shape[256];
        ct_format_sizes(shape, sizeof shape, A->ndim, A->sizes);
        PyErr_Format(PyExc_RuntimeError, "linalg.lu: Expected tensor with 2 or more dimensions. Got size: %s instead",
                     shape);
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *kw = a[1] != NULL ? KEEP(Py_BuildValue("(s)", "pivot")) : NULL;
    PyObject *call[2] = {a[0], a[1]};
    PyObject *f = a[1] == NULL || kw ? KEEP(ct_op("_linalg_lu_factor_ex", call, 1, kw)) : NULL;
    PyObject *LU = f ? KEEP(PySequence_GetItem(f, 0)) : NULL;
    PyObject *piv = LU ? KEEP(PySequence_GetItem(f, 1)) : NULL;
    PyObject *r = NULL;
    if (piv != NULL && unpack(arena, LU, CT_TENSOR(piv), true, true, &P, &L, &U) == 0) {
        r = triple(&type, "torch.return_types.linalg_lu", plu_fields, arena, P, L, U);
    }
    arena_free(arena);
    return ct_linalg_write_outs(r, a[2], "linalg_lu", 3);
}

/* X with A X = B (adjoint: A^T X = B) from A = P L U packed in LU: X = U^-1 L^-1 P^T B, or
 * P L^-T U^-T B; triangular solves read only their triangle. Held by the arena. */
static PyObject *lu_solve_left(CtArena *arena, PyObject *LU, CtTensorObject *pivots, PyObject *B, bool adjoint)
{
    CtTensorObject *t = CT_TENSOR(LU);
    PyObject *P = permutation_of(arena, pivots, t->sizes[t->ndim - 1], t->dtype);
    if (!adjoint) {
        PyObject *Y = ct_linalg_solve_tri_op(arena, LU, MATMUL(MT(P), B), false, true, true);
        return ct_linalg_solve_tri_op(arena, LU, Y, true, true, false);
    }
    PyObject *Y = ct_linalg_solve_tri_op(arena, MT(LU), B, false, true, false);
    return MATMUL(P, ct_linalg_solve_tri_op(arena, MT(LU), Y, true, true, true));
}

PyDoc_STRVAR(linalg_lu_solve_doc, "_linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None)\n\n"
                                  "torch.linalg.lu_solve: X with A X = B (adjoint: A^T X = B; left=False: X A = B) "
                                  "from lu_factor's factors of A.");
static PyObject *py_linalg_lu_solve(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"LU", "pivots", "B", "*left", "*adjoint", "*out", NULL};
    PyObject *a[6];
    CtTensorObject *LU, *pivots, *B;
    bool left = true, adjoint = false;
    if (ct_parse_args("linalg_lu_solve", args, nargs, kwnames, names, 3, a) < 0 ||
        (LU = tensor_arg(a[0], "linalg_lu_solve", "LU")) == NULL ||
        (pivots = tensor_arg(a[1], "linalg_lu_solve", "pivots")) == NULL ||
        (B = tensor_arg(a[2], "linalg_lu_solve", "B")) == NULL || ct_arg_bool(a[3], &left) < 0 ||
        ct_arg_bool(a[4], &adjoint) < 0) {
        return NULL;
    }
    if (LU->ndim < 2 || B->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "linalg.lu_solve: The input tensor %s must have at least 2 dimensions.",
                     LU->ndim < 2 ? "LU" : "B");
        return NULL;
    }
    int64_t n = LU->sizes[LU->ndim - 1], r = B->sizes[B->ndim - 2], c = B->sizes[B->ndim - 1];
    if (LU->sizes[LU->ndim - 2] != n) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.linalg.lu_solve: A must be batches of square matrices, but they are %lld by %lld matrices",
                     (long long)LU->sizes[LU->ndim - 2], (long long)n);
        return NULL;
    }
    if ((left ? r : c) != n) {
        PyErr_Format(PyExc_RuntimeError,
                     "linalg.lu_solve: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)",
                     left ? "AX = B" : "XA = B", (long long)n, (long long)n, (long long)r, (long long)c);
        return NULL;
    }
    if (ct_linalg_kernel_dtype(LU, "linalg_lu_solve") < 0) {
        return NULL;
    }
    if (B->dtype != LU->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type %s and B of "
                     "type %s instead",
                     ct_scalar_type_name(LU->dtype), ct_scalar_type_name(B->dtype));
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    /* X A = B is A^T X^T = B^T */
    PyObject *X = left ? lu_solve_left(arena, a[0], pivots, a[2], adjoint)
                       : MT(lu_solve_left(arena, a[0], pivots, MT(a[2]), !adjoint));
    PyObject *res = TAKE(X);
    arena_free(arena);
    if (res == NULL || a[5] == NULL || a[5] == Py_None) {
        return res;
    }
    return ct_write_out(CT_TENSOR(res), a[5], "linalg_lu_solve", CT_OUT_EXACT, 0, NULL);
}

/* ============================================================================================
 * lstsq
 * ============================================================================================ */

static const char *const lstsq_drivers[] = {"gels", "gelsy", "gelsd", "gelss", NULL};

/* The solution of min ||A X - B|| for driver 'gels' (full rank assumed): R^-1 Q^T B for tall A,
 * Q R^-T B (the minimum-norm one) for wide A. Held by the arena. */
static PyObject *lstsq_qr(CtArena *arena, PyObject *A, PyObject *B, bool tall)
{
    PyObject *qr = FN("_linalg_qr", "(O)", tall ? A : MT(A));
    PyObject *Q = qr ? KEEP(PySequence_GetItem(qr, 0)) : NULL;
    PyObject *R = Q ? KEEP(PySequence_GetItem(qr, 1)) : NULL;
    if (tall) {
        return ct_linalg_solve_tri_op(arena, R, MATMUL(MT(Q), B), true, true, false);
    }
    return MATMUL(Q, ct_linalg_solve_tri_op(arena, MT(R), B, false, true, false));
}

PyDoc_STRVAR(linalg_lstsq_doc, "_linalg_lstsq(A, B, rcond=None, *, driver=None)\n\n"
                               "torch.linalg.lstsq: (solution, residuals, rank, singular_values) of min ||A X - B||, "
                               "the fields each driver fills as PyTorch's CPU drivers (default 'gelsy').");
static PyObject *py_linalg_lstsq(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "B", "rcond", "*driver", NULL};
    static const char *const fields[] = {"solution", "residuals", "rank", "singular_values"};
    static PyTypeObject *type = NULL;
    PyObject *a[4];
    CtTensorObject *A, *B;
    double rcond = -1.0;
    int driver = 1; /* gelsy */
    if (ct_parse_args("linalg_lstsq", args, nargs, kwnames, names, 2, a) < 0 ||
        (A = tensor_arg(a[0], "linalg_lstsq", "A")) == NULL || (B = tensor_arg(a[1], "linalg_lstsq", "B")) == NULL ||
        (a[2] != NULL && a[2] != Py_None && ct_arg_double(a[2], &rcond) < 0)) {
        return NULL;
    }
    if (a[3] != NULL && a[3] != Py_None) {
        const char *s = PyUnicode_Check(a[3]) ? PyUnicode_AsUTF8(a[3]) : NULL;
        for (driver = 0; s != NULL && lstsq_drivers[driver] != NULL && strcmp(s, lstsq_drivers[driver]) != 0;
             driver++) {
        }
        if (s == NULL || lstsq_drivers[driver] == NULL) {
            PyErr_Clear();
            PyErr_SetString(PyExc_RuntimeError,
                            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
            return NULL;
        }
    }
    if (A->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError, "torch.linalg.lstsq: input must have at least 2 dimensions.");
        return NULL;
    }
    if (B->ndim < 1 || A->ndim < B->ndim || A->ndim - B->ndim > 1) {
        PyErr_SetString(PyExc_RuntimeError, "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() "
                                            "and (input.dim() - other.dim()) <= 1");
        return NULL;
    }
    if (A->dtype != B->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype %s "
                     "and other's dtype %s",
                     ct_scalar_type_name(A->dtype), ct_scalar_type_name(B->dtype));
        return NULL;
    }
    if (A->dtype != CT_F32 && A->dtype != CT_F64) { /* PyTorch's own check, before its kernel's dtype one */
        PyErr_SetString(PyExc_RuntimeError, "This function doesn't handle types other than float and double");
        return NULL;
    }
    bool vector = B->ndim == A->ndim - 1;
    int nb = A->ndim - 2;
    int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = m < n ? m : n;
    if ((vector ? B->sizes[B->ndim - 1] : B->sizes[B->ndim - 2]) != m) {
        PyErr_Format(PyExc_RuntimeError, "torch.linalg.lstsq: input.size(-2) should match other.size(%d)",
                     vector ? -1 : -2);
        return NULL;
    }
    if (rcond < 0) {
        rcond = (A->dtype == CT_F32 ? FLT_EPSILON : DBL_EPSILON) * (double)(a[2] == NULL || a[2] == Py_None
                                                                               ? (m > n ? m : n) : 1);
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *Bm = vector ? METH(a[1], "unsqueeze", "(i)", -1) : a[1];
    PyObject *X, *rank, *S, *empty = METH(a[0], "new_empty", "((i))", 0);
    bool full_rank = true;
    if (driver == 0) {
        X = k == 0 ? NULL : lstsq_qr(arena, a[0], Bm, m >= n);
        rank = METH(empty, "long", NULL);
        S = empty;
    } else {
        /* X = V diag(1/s, s > rcond s_max) U^T B, the minimum-norm solution gelsy also gives */
        PyObject *usv = k == 0 ? NULL : FN("_linalg_svd", "(OO)", a[0], Py_False);
        PyObject *U = usv ? KEEP(PySequence_GetItem(usv, 0)) : NULL;
        S = usv ? KEEP(PySequence_GetItem(usv, 1)) : NULL;
        PyObject *Vh = usv ? KEEP(PySequence_GetItem(usv, 2)) : NULL;
        PyObject *keep = usv ? CMP(S, MUL(METH(METH(S, "detach", NULL), "narrow", "(iLL)", -1, 0LL, 1LL),
                                          NUM(rcond)),
                                   Py_GT)
                             : NULL;
        PyObject *inv = usv ? WHERE(keep, METH(WHERE(keep, S, NUM(1.0)), "reciprocal", NULL), NUM(0.0)) : NULL;
        X = usv ? MATMUL(MT(Vh), MUL(METH(inv, "unsqueeze", "(i)", -1), MATMUL(MT(U), Bm))) : NULL;
        rank = usv ? METH(keep, "sum", "(i)", -1) : NULL;
        if (k == 0) {
            int64_t shape[CT_MAX_DIMS];
            memcpy(shape, A->sizes, sizeof(int64_t) * (size_t)nb);
            rank = KEEP((PyObject *)ct_zeros(nb, shape, CT_I64, ct_device_of(A)));
            shape[nb] = 0;
            S = KEEP((PyObject *)ct_empty(nb + 1, shape, A->dtype, ct_device_of(A)));
        } else if (rank != NULL && m > n && driver != 1) {
            PyObject *low = KEEP(PyNumber_Index(METH(METH(rank, "min", NULL), "item", NULL)));
            full_rank = low != NULL && PyLong_AsLongLong(low) == n;
        }
        S = driver >= 2 ? S : empty;
        rank = driver >= 1 ? rank : METH(empty, "long", NULL);
    }
    if (k == 0) {
        /* nothing to fit: zeros of the broadcast shape */
        PyObject *prod = MATMUL(METH(MT(a[0]), "detach", NULL), METH(Bm, "detach", NULL));
        X = METH(prod, "zero_", NULL);
    }
    PyObject *residuals = empty;
    if (m > n && driver != 1 && full_rank) { /* n == 0 too: nothing fitted, the residuals are B's squares */
        PyObject *diff = SUB(MATMUL(a[0], X), Bm);
        residuals = METH(MUL(diff, diff), "sum", "(i)", -2);
        residuals = vector ? METH(residuals, "squeeze", "(i)", -1) : residuals;
    }
    X = vector ? METH(X, "squeeze", "(i)", -1) : X;
    PyObject *r = NULL;
    if (!arena->failed) {
        PyObject *items[4] = {TAKE(X), TAKE(residuals), TAKE(rank), TAKE(S)};
        r = ct_linalg_named_result(&type, "torch.return_types.linalg_lstsq", fields, 4, items);
    }
    arena_free(arena);
    return r;
}

/* ============================================================================================
 * matrix_exp
 * ============================================================================================ */

/* Checks of linalg.matrix_exp's A in PyTorch's order and words. 0 or -1. */
static int check_matrix_exp(const CtTensorObject *A)
{
    if (A->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError,
                        "linalg.matrix_exp: The input tensor A must have at least 2 dimensions.");
        return -1;
    }
    if (A->sizes[A->ndim - 1] != A->sizes[A->ndim - 2]) {
        PyErr_Format(PyExc_RuntimeError,
                     "linalg.matrix_exp: A must be batches of square matrices, but they are %lld by %lld matrices",
                     (long long)A->sizes[A->ndim - 2], (long long)A->sizes[A->ndim - 1]);
        return -1;
    }
    if (!ct_is_floating(A->dtype)) {
        PyErr_Format(PyExc_NotImplementedError,
                     "linalg.matrix_exp: Expected a floating point or complex tensor as input. Got %s",
                     ct_scalar_type_name(A->dtype));
        return -1;
    }
    return 0;
}

/* exp(A) by scaling and squaring: X = A / 2^s with ||X||_1 <= 1/2 (s from the largest 1-norm of
 * the batch), the Taylor polynomial of degree q by Horner's rule (q = 18 in float64: its
 * remainder is below 2^-19 / 19!; q = 10 in float32), then squared s times. float16/bfloat16 in
 * float32. A new reference. */
/* I + X P / j: a new reference */
static PyObject *horner_step(PyObject *eye, PyObject *X, PyObject *P, double j)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r = TAKE(ADD(eye, DIV(MATMUL(X, P), NUM(j))));
    arena_free(arena);
    return r;
}

static PyObject *matrix_exp_impl(PyObject *Aobj)
{
    CtTensorObject *A = CT_TENSOR(Aobj);
    int64_t n = A->sizes[A->ndim - 1];
    if (n == 0 || ct_numel(A) == 0) {
        return ct_call_method(Aobj, "clone", NULL);
    }
    bool low = A->dtype == CT_F16 || A->dtype == CT_BF16;
    int q = A->dtype == CT_F64 ? 18 : 10;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *X = low ? METH(Aobj, "float", NULL) : Aobj;
    PyObject *norm = METH(METH(METH(METH(METH(X, "detach", NULL), "abs", NULL), "sum", "(i)", -2), "max", NULL), "item",
                          NULL);
    double v = norm ? PyFloat_AsDouble(norm) : 0.0;
    int s = 0;
    while (isfinite(v) && v > 0.5 && s < 1000) {
        v /= 2;
        s++;
    }
    PyObject *eye = KEEP((PyObject *)ct_eye(n, n, low ? CT_F32 : A->dtype, ct_device_of(A)));
    X = s > 0 ? DIV(X, NUM(ldexp(1.0, s))) : X;
    /* P = I + X/q, then P = I + X P / j for j = q-1 .. 1 */
    PyObject *P = arena->failed ? NULL : TAKE(ADD(eye, DIV(X, NUM((double)q))));
    for (int j = q - 1; P != NULL && j >= 1; j--) {
        Py_SETREF(P, horner_step(eye, X, P, (double)j));
    }
    for (int i = 0; P != NULL && i < s; i++) {
        Py_SETREF(P, PyNumber_MatrixMultiply(P, P));
    }
    if (P != NULL && low) {
        PyObject *back = ct_call_method(P, "to", "(O)", ct_dtype_object(A->dtype));
        Py_SETREF(P, back);
    }
    arena_free(arena);
    return P;
}

PyDoc_STRVAR(linalg_matrix_exp_doc, "_linalg_matrix_exp(A)\n\ntorch.linalg.matrix_exp: the matrix exponential of "
                                    "each square matrix (scaling and squaring).");
static PyObject *py_linalg_matrix_exp(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", NULL};
    PyObject *a[1];
    CtTensorObject *A;
    if (ct_parse_args("linalg_matrix_exp", args, nargs, kwnames, names, 1, a) < 0 ||
        (A = tensor_arg(a[0], "linalg_matrix_exp", "A")) == NULL || check_matrix_exp(A) < 0) {
        return NULL;
    }
    return matrix_exp_impl(a[0]);
}

static PyObject *py_matrix_exp(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", NULL};
    PyObject *a[1];
    CtTensorObject *A;
    if (ct_parse_args("matrix_exp", args, nargs, kwnames, names, 1, a) < 0 ||
        (A = tensor_arg(a[0], "matrix_exp", "input")) == NULL || check_matrix_exp(A) < 0) {
        return NULL;
    }
    return matrix_exp_impl(a[0]);
}

static PyObject *tensor_matrix_exp(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {NULL};
    PyObject *a[1];
    if (ct_parse_args("matrix_exp", args, nargs, kwnames, names, 0, a) < 0 || check_matrix_exp(CT_TENSOR(self)) < 0) {
        return NULL;
    }
    return matrix_exp_impl(self);
}

/* ============================================================================================
 * tensorinv, tensorsolve
 * ============================================================================================ */

static int64_t prod_dims(const CtTensorObject *t, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) {
        p *= t->sizes[i];
    }
    return p;
}

/* t.shape[from:to] as a tuple, into the arena */
static PyObject *shape_part(CtArena *arena, const CtTensorObject *t, int from, int to)
{
    if (arena->failed) { /* an earlier step raised: building a Size now would run with its exception set */
        return NULL;
    }
    return KEEP(ct_size_object(to - from, t->sizes + from));
}

static PyObject *finish_out(CtArena *arena, PyObject *r, PyObject *out, const char *fname)
{
    PyObject *res = TAKE(r);
    arena_free(arena);
    if (res == NULL || out == NULL || out == Py_None) {
        return res;
    }
    return ct_write_out(CT_TENSOR(res), out, fname, CT_OUT_EXACT, 0, NULL);
}

PyDoc_STRVAR(linalg_tensorinv_doc, "_linalg_tensorinv(A, ind=2, *, out=None)\n\n"
                                   "torch.linalg.tensorinv: the inverse of A for tensordot over its first ind dims.");
static PyObject *py_linalg_tensorinv(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "ind", "*out", NULL};
    PyObject *a[3];
    CtTensorObject *A;
    int64_t ind = 2;
    if (ct_parse_args("linalg_tensorinv", args, nargs, kwnames, names, 1, a) < 0 ||
        (A = tensor_arg(a[0], "linalg_tensorinv", "A")) == NULL || (a[1] != NULL && ct_arg_int64(a[1], &ind) < 0)) {
        return NULL;
    }
    if (ind <= 0) {
        PyErr_Format(PyExc_RuntimeError, "Expected a strictly positive integer for 'ind', but got %lld",
                     (long long)ind);
        return NULL;
    }
    int i = ind > A->ndim ? A->ndim : (int)ind;
    int64_t rows = prod_dims(A, 0, i), cols = prod_dims(A, i, A->ndim);
    if (rows != cols) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but "
                     "got %lld != %lld",
                     (long long)cols, (long long)rows);
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *inv = FN("_linalg_inv", "(O)", METH(a[0], "reshape", "(LL)", (long long)rows, (long long)cols));
    PyObject *shape = ADD(shape_part(arena, A, i, A->ndim), shape_part(arena, A, 0, i));
    return finish_out(arena, METH(inv, "reshape", "(O)", shape), a[2], "linalg_tensorinv");
}

PyDoc_STRVAR(linalg_tensorsolve_doc, "_linalg_tensorsolve(A, B, dims=None, *, out=None)\n\n"
                                     "torch.linalg.tensorsolve: X with tensordot(A, X, X.ndim) = B.");
static PyObject *py_linalg_tensorsolve(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "B", "dims", "*out", NULL};
    PyObject *a[4];
    CtTensorObject *A, *B;
    if (ct_parse_args("linalg_tensorsolve", args, nargs, kwnames, names, 2, a) < 0 ||
        (A = tensor_arg(a[0], "linalg_tensorsolve", "A")) == NULL ||
        (B = tensor_arg(a[1], "linalg_tensorsolve", "B")) == NULL) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *Am = a[0];
    if (a[2] != NULL && a[2] != Py_None) {
        /* the dims of A named by dims moved to the end, in their order */
        Py_ssize_t nd = PySequence_Size(a[2]);
        PyObject *dest = nd >= 0 ? KEEP(PyList_New(nd)) : NULL;
        for (Py_ssize_t i = 0; dest != NULL && i < nd; i++) {
            PyList_SET_ITEM(dest, i, PyLong_FromSsize_t(A->ndim - nd + i));
        }
        Am = dest ? METH(a[0], "movedim", "(OO)", a[2], dest) : NULL;
        if (Am == NULL) {
            arena_free(arena);
            return NULL;
        }
    }
    CtTensorObject *At = CT_TENSOR(Am);
    int bd = B->ndim > At->ndim ? At->ndim : B->ndim;
    int64_t rest = prod_dims(At, bd, At->ndim), numel = ct_numel(B);
    if (rest != numel) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                     "prod(self.shape[:other.ndim]), but got %lld != %lld",
                     (long long)rest, (long long)numel);
        arena_free(arena);
        return NULL;
    }
    PyObject *X = FN("_linalg_solve", "(OO)", METH(Am, "reshape", "(LL)", (long long)numel, (long long)rest),
                     METH(a[1], "reshape", "(i)", -1));
    return finish_out(arena, METH(X, "reshape", "(O)", shape_part(arena, At, bd, At->ndim)), a[3],
                      "linalg_tensorsolve");
}

/* ============================================================================================
 * householder_product / orgqr
 * ============================================================================================ */

/* left: H_i Q = Q - tau_i v_i (v_i^T Q); right: Q H_i = Q - tau_i (Q v_i) v_i^T; v_i column i of
 * V: a new reference */
static PyObject *reflect(PyObject *V, PyObject *tau, PyObject *Q, int64_t i, bool left)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *v = METH(V, "narrow", "(iLL)", -1, (long long)i, 1LL);
    PyObject *t = METH(METH(tau, "narrow", "(iLL)", -1, (long long)i, 1LL), "unsqueeze", "(i)", -1);
    PyObject *r = left ? TAKE(SUB(Q, MATMUL(MUL(v, t), MATMUL(MT(v), Q))))
                       : TAKE(SUB(Q, MATMUL(MUL(MATMUL(Q, v), t), MT(v))));
    arena_free(arena);
    return r;
}

/* The first n columns of H_0 H_1 ... H_{k-1}, H_i = I - tau_i v_i v_i^T with v_i column i of A's
 * unit-lower part (A (..., m, n), m >= n >= k). Applied right to left to I (m, n). A new reference. */
static PyObject *householder_impl(PyObject *Aobj, PyObject *tauobj, const char *fname)
{
    CtTensorObject *A = CT_TENSOR(Aobj), *tau = CT_TENSOR(tauobj);
    if (A->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "torch.linalg.householder_product: input must have at least 2 dimensions.");
        return NULL;
    }
    if (tau->ndim != A->ndim - 1) {
        PyErr_Format(PyExc_RuntimeError, "torch.linalg.householder_product: Expected tau to have one dimension less "
                                         "than input, but got tau.ndim equal to %d and input.ndim is equal to %d",
                     tau->ndim, A->ndim);
        return NULL;
    }
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = tau->sizes[tau->ndim - 1];
    if (m < n) {
        PyErr_SetString(PyExc_RuntimeError, "torch.linalg.householder_product: input.shape[-2] must be greater than "
                                            "or equal to input.shape[-1]");
        return NULL;
    }
    if (n < k) {
        PyErr_SetString(PyExc_RuntimeError, "torch.linalg.householder_product: input.shape[-1] must be greater than "
                                            "or equal to tau.shape[-1]");
        return NULL;
    }
    if (A->dtype != tau->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.linalg.householder_product: Expected input and tau to have the same dtype, but input has "
                     "dtype %s and tau has dtype %s",
                     ct_scalar_type_name(A->dtype), ct_scalar_type_name(tau->dtype));
        return NULL;
    }
    if (ct_linalg_kernel_dtype(A, fname) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *eye = KEEP((PyObject *)ct_eye(m, n, A->dtype, ct_device_of(A)));
    PyObject *V = ADD(METH(Aobj, "tril", "(i)", -1), eye);
    PyObject *Q = arena->failed ? NULL : TAKE(METH(METH(eye, "expand", "(O)", ATTR(Aobj, "shape")), "clone", NULL));
    for (int64_t i = k - 1; Q != NULL && i >= 0; i--) {
        Py_SETREF(Q, reflect(V, tauobj, Q, i, true));
    }
    arena_free(arena);
    return Q;
}

PyDoc_STRVAR(linalg_householder_product_doc,
             "_linalg_householder_product(A, tau, *, out=None)\n\ntorch.linalg.householder_product: the first n "
             "columns of the product of the Householder reflectors in A and tau (LAPACK's orgqr).");
static PyObject *py_linalg_householder_product(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,
                                               PyObject *kwnames)
{
    static const char *const names[] = {"A", "tau", "*out", NULL};
    PyObject *a[3];
    if (ct_parse_args("linalg_householder_product", args, nargs, kwnames, names, 2, a) < 0 ||
        tensor_arg(a[0], "linalg_householder_product", "A") == NULL ||
        tensor_arg(a[1], "linalg_householder_product", "tau") == NULL) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    return finish_out(arena, KEEP(householder_impl(a[0], a[1], "orgqr")), a[2], "linalg_householder_product");
}

static PyObject *py_orgqr(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "input2", "*out", NULL};
    PyObject *a[3];
    if (ct_parse_args("orgqr", args, nargs, kwnames, names, 2, a) < 0 ||
        tensor_arg(a[0], "orgqr", "input") == NULL || tensor_arg(a[1], "orgqr", "input2") == NULL) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    return finish_out(arena, KEEP(householder_impl(a[0], a[1], "orgqr")), a[2], "orgqr");
}

static PyObject *tensor_orgqr(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input2", NULL};
    PyObject *a[1];
    if (ct_parse_args("orgqr", args, nargs, kwnames, names, 1, a) < 0 || tensor_arg(a[0], "orgqr", "input2") == NULL) {
        return NULL;
    }
    return householder_impl(self, a[0], "orgqr");
}

/* ============================================================================================
 * geqrf / ormqr
 * ============================================================================================ */

/* torch.geqrf: LAPACK's (a, tau), the reflectors below a's diagonal and R on and above it, from
 * the device's qr entry without Q. Not differentiable (GeqrfBackward0 raises, as PyTorch's). */
static PyObject *geqrf_impl(CtTensorObject *A, PyObject *out)
{
    static PyTypeObject *type = NULL;
    if (A->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError, "torch.geqrf: input must have at least 2 dimensions.");
        return NULL;
    }
    const CtDeviceOps *ops = ct_linalg_qr_ops(A, "torch.geqrf");
    if (ops == NULL) {
        return NULL;
    }
    CtDevice dev = ct_device_of(A);
    int nb = A->ndim - 2;
    int64_t m = A->sizes[nb], n = A->sizes[nb + 1], batch = prod_dims(A, 0, nb), shape[CT_MAX_DIMS];
    memcpy(shape, A->sizes, sizeof(int64_t) * (size_t)nb);
    shape[nb] = m < n ? m : n;
    CtTensorObject *a = ct_empty(A->ndim, A->sizes, A->dtype, dev), *tau = NULL;
    if (a == NULL || ct_copy_(a, A) < 0 || (tau = ct_empty(nb + 1, shape, A->dtype, dev)) == NULL ||
        (batch > 0 && m > 0 && n > 0 &&
         ops->blas->qr(dev, A->dtype, ct_data(a), ct_data(tau), NULL, m, n, 0, batch) < 0)) {
        Py_XDECREF(a);
        Py_XDECREF(tau);
        return NULL;
    }
    PyObject *r = ct_linalg_pair(&type, "torch.return_types.geqrf", "a", "tau", (PyObject *)a, (PyObject *)tau);
    return ct_linalg_write_outs(r, out, "geqrf", 2);
}

PyDoc_STRVAR(geqrf_doc, "geqrf(input, *, out=None)\n\ntorch.geqrf: (a, tau), LAPACK's geqrf QR in Householder form.");
static PyObject *py_geqrf(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "*out", NULL};
    PyObject *a[2];
    CtTensorObject *A;
    if (ct_parse_args("geqrf", args, nargs, kwnames, names, 1, a) < 0 ||
        (A = tensor_arg(a[0], "geqrf", "input")) == NULL) {
        return NULL;
    }
    return geqrf_impl(A, a[1]);
}

static PyObject *tensor_geqrf(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {NULL};
    PyObject *a[1];
    if (ct_parse_args("geqrf", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    return geqrf_impl(CT_TENSOR(self), NULL);
}

/* ormqr's shapes and dtypes, PyTorch's checks in its order. 0 or -1. */
static int check_ormqr(const CtTensorObject *A, const CtTensorObject *tau, const CtTensorObject *C, bool left)
{
    if (A->ndim < 2 || C->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "torch.ormqr: %s must have at least 2 dimensions.",
                     A->ndim < 2 ? "input" : "other");
        return -1;
    }
    int nd = A->ndim;
    int64_t mn = left ? C->sizes[C->ndim - 2] : C->sizes[C->ndim - 1], kk = A->sizes[nd - 1];
    if (mn != A->sizes[nd - 2]) {
        PyErr_Format(PyExc_RuntimeError, "torch.ormqr: other.shape[%d] must be equal to input.shape[-2]",
                     left ? -2 : -1);
        return -1;
    }
    if (tau->ndim != nd - 1) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim equal to %d "
                     "and input.ndim is equal to %d",
                     tau->ndim, nd);
        return -1;
    }
    if (tau->sizes[nd - 2] != (mn < kk ? mn : kk)) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.ormqr: tau.shape[-1] must be equal to min(other.shape[%d], input.shape[-1])",
                     left ? -2 : -1);
        return -1;
    }
    if (C->ndim != nd) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.ormqr: Expected other to have the same number of dimensions as input, but got other.ndim "
                     "equal to %d and input.ndim is equal to %d",
                     C->ndim, nd);
        return -1;
    }
    for (int which = 0; which < 2; which++) {
        const CtTensorObject *t = which == 0 ? tau : C;
        if (memcmp(t->sizes, A->sizes, sizeof(int64_t) * (size_t)(nd - 2)) != 0) {
            PyObject *batch = ct_size_object(nd - 2, t->sizes), *list = batch ? PySequence_List(batch) : NULL;
            if (list != NULL) {
                PyErr_Format(PyExc_RuntimeError,
                             "torch.ormqr: Expected batch dimensions of %s to be equal to input.shape[:-2], but got %S",
                             which == 0 ? "tau" : "other", list);
            }
            Py_XDECREF(batch);
            Py_XDECREF(list);
            return -1;
        }
    }
    for (int which = 0; which < 2; which++) {
        const CtTensorObject *t = which == 0 ? tau : C;
        if (t->dtype != A->dtype) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.ormqr: Expected input and %s to have the same dtype, but input has dtype%s and %s has "
                         "dtype %s",
                         which == 0 ? "tau" : "other", ct_scalar_type_name(A->dtype), which == 0 ? "tau" : "other",
                         ct_scalar_type_name(t->dtype));
            return -1;
        }
    }
    return ct_linalg_kernel_dtype(A, "ormqr");
}

/* op(Q) C (left) or C op(Q), Q = H_0 ... H_{k-1} of input's reflectors and tau, op(Q) = Q^T when
 * transpose: the reflectors applied one by one, each a recording op, so gradients flow to all
 * three. A new reference. */
static PyObject *ormqr_impl(PyObject *Aobj, PyObject *tauobj, PyObject *Cobj, bool left, bool transpose)
{
    CtTensorObject *A = CT_TENSOR(Aobj), *tau = CT_TENSOR(tauobj), *C = CT_TENSOR(Cobj);
    if (check_ormqr(A, tau, C, left) < 0) {
        return NULL;
    }
    int64_t k = tau->sizes[tau->ndim - 1];
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *eye = KEEP((PyObject *)ct_eye(A->sizes[A->ndim - 2], A->sizes[A->ndim - 1], A->dtype, ct_device_of(A)));
    PyObject *V = ADD(METH(Aobj, "tril", "(i)", -1), eye);
    PyObject *R = arena->failed ? NULL : TAKE(METH(Cobj, "clone", NULL));
    /* Q C = H_0 (... (H_{k-1} C)), Q^T C = H_{k-1} (... (H_0 C)); C Q = (C H_0) ... H_{k-1} */
    bool backward = left != transpose;
    for (int64_t s = 0; R != NULL && s < k; s++) {
        Py_SETREF(R, reflect(V, tauobj, R, backward ? k - 1 - s : s, left));
    }
    arena_free(arena);
    return R;
}

PyDoc_STRVAR(ormqr_doc, "ormqr(input, input2, input3, left=True, transpose=False, *, out=None)\n\n"
                        "torch.ormqr: op(Q) @ input3 (or input3 @ op(Q)), Q from geqrf's (input, input2).");
static PyObject *py_ormqr(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "input2", "input3", "left", "transpose", "*out", NULL};
    PyObject *a[6];
    bool left = true, transpose = false;
    if (ct_parse_args("ormqr", args, nargs, kwnames, names, 3, a) < 0 || tensor_arg(a[0], "ormqr", "input") == NULL ||
        tensor_arg(a[1], "ormqr", "input2") == NULL || tensor_arg(a[2], "ormqr", "input3") == NULL ||
        ct_arg_bool(a[3], &left) < 0 || ct_arg_bool(a[4], &transpose) < 0) {
        return NULL;
    }
    CtDType dtype = CT_TENSOR(a[0])->dtype;
    if (a[5] != NULL && CtTensor_Check(a[5]) && CT_TENSOR(a[5])->dtype != dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.ormqr: Expected input and result to have the same dtype, but input has dtype%s and result "
                     "has dtype %s",
                     ct_scalar_type_name(dtype), ct_scalar_type_name(CT_TENSOR(a[5])->dtype));
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    return finish_out(arena, KEEP(ormqr_impl(a[0], a[1], a[2], left, transpose)), a[5], "ormqr");
}

static PyObject *tensor_ormqr(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input2", "input3", "left", "transpose", NULL};
    PyObject *a[4];
    bool left = true, transpose = false;
    if (ct_parse_args("ormqr", args, nargs, kwnames, names, 2, a) < 0 || tensor_arg(a[0], "ormqr", "input2") == NULL ||
        tensor_arg(a[1], "ormqr", "input3") == NULL || ct_arg_bool(a[2], &left) < 0 ||
        ct_arg_bool(a[3], &transpose) < 0) {
        return NULL;
    }
    return ormqr_impl(self, a[0], a[1], left, transpose);
}

/* ============================================================================================
 * backward formulas (rows in autograd_formulas.c)
 * ============================================================================================ */

/* The columns (dim -1) or rows (dim -2) [from, from + len) of x, held by the arena. */
#define PART(x, dim, from, len) METH((x), "narrow", "(iLL)", (dim), (long long)(from), (long long)(len))

/* lu_factor(_ex) of A = P L U (m x n, k = min(m, n)), the factors read with history; gL / gU the
 * strict lower / upper parts of the packed gradient g.
 *   m <= n, U = [U1 U2]: gZ = tril(L^T gL - gU2 U2^T, -1) + triu(gU1 U1^T),
 *                        gA = P L^-T [gZ U1^-T, gU2]
 *   m >  n, L = [L1; L2]: gZ = tril(L1^T gL1, -1) + triu(gU U^T - L2^T gL2),
 *                        gA = P [L1^-T gZ; gL2] U^-T
 * (square A: both are P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T). */
int ct_linalg_bw_lu_factor(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (g[0] == NULL || n->edge_nodes[0] == NULL) {
        return 0;
    }
    const CtTensorMeta *m = &n->meta[0];
    int64_t rows = m->sizes[m->ndim - 2], cols = m->sizes[m->ndim - 1], k = rows < cols ? rows : cols;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *LU = KEEP(ct_node_output_ref(n, 0));
    PyObject *piv = LU ? (PyObject *)ct_node_output(n, 1) : NULL; /* borrowed */
    piv = piv ? KEEP(Py_NewRef(piv)) : KEEP(NULL);
    PyObject *eye = LU ? KEEP((PyObject *)ct_eye(k, k, m->dtype, m->device)) : NULL;
    PyObject *sq = rows <= cols ? PART(LU, -1, 0, k) : PART(LU, -2, 0, k); /* the k x k L\U */
    PyObject *Lk = ADD(METH(sq, "tril", "(i)", -1), eye), *Uk = METH(sq, "triu", NULL);
    PyObject *gsq = rows <= cols ? PART(g[0], -1, 0, k) : PART(g[0], -2, 0, k);
    PyObject *gL = METH(gsq, "tril", "(i)", -1), *gU = METH(gsq, "triu", NULL), *gX;
    if (rows <= cols) {
        PyObject *U2 = PART(LU, -1, k, cols - k), *gU2 = PART(g[0], -1, k, cols - k);
        PyObject *gZ = ADD(METH(SUB(MATMUL(MT(Lk), gL), MATMUL(gU2, MT(U2))), "tril", "(i)", -1),
                           METH(MATMUL(gU, MT(Uk)), "triu", NULL));
        PyObject *gX1 = ct_linalg_solve_tri_op(arena, MT(sq), gZ, false, false, false);
        gX = FN("cat", "((OO)i)", gX1, gU2, -1);
        gX = ct_linalg_solve_tri_op(arena, MT(sq), gX, true, true, true);
    } else {
        PyObject *L2 = PART(LU, -2, k, rows - k), *gL2 = PART(g[0], -2, k, rows - k);
        PyObject *gZ = ADD(METH(MATMUL(MT(Lk), gL), "tril", "(i)", -1),
                           METH(SUB(MATMUL(gU, MT(Uk)), MATMUL(MT(L2), gL2)), "triu", NULL));
        PyObject *gX1 = ct_linalg_solve_tri_op(arena, MT(sq), gZ, true, true, true);
        gX = FN("cat", "((OO)i)", gX1, gL2, -2);
        gX = ct_linalg_solve_tri_op(arena, MT(sq), gX, false, false, false);
    }
    PyObject *P = piv ? permutation_of(arena, CT_TENSOR(piv), rows, m->dtype) : NULL;
    PyObject *gA = MATMUL(P, gX);
    int rc = -1;
    if (gA != NULL) {
        gi[0] = ct_fit_grad(gA, m);
        rc = gi[0] == NULL ? -1 : 0;
    }
    arena_free(arena);
    return rc;
}

/* matrix_exp: gA = exp([[A^T, g], [0, A^T]]) [:n, n:] (the Fréchet derivative's adjoint), through
 * the recording op so that it is differentiable again. */
int ct_linalg_bw_matrix_exp(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *A = (PyObject *)ct_node_tensor(n, 0);
    int64_t d = n->meta[0].sizes[n->meta[0].ndim - 1];
    PyObject *At = A ? MT(A) : NULL;
    PyObject *top = FN("cat", "((OO)i)", At, g[0], -1);
    PyObject *bottom = FN("cat", "((OO)i)", FN("zeros_like", "(O)", At), At, -1);
    PyObject *E = FN("_linalg_matrix_exp", "(O)", FN("cat", "((OO)i)", top, bottom, -2));
    PyObject *gA = METH(METH(E, "narrow", "(iLL)", -2, 0LL, (long long)d), "narrow", "(iLL)", -1, (long long)d,
                        (long long)d);
    int rc = -1;
    if (gA != NULL) {
        gi[0] = ct_fit_grad(gA, &n->meta[0]);
        rc = gi[0] == NULL ? -1 : 0;
    }
    arena_free(arena);
    return rc;
}

/* ============================================================================================
 * tables
 * ============================================================================================ */

PyMethodDef ct_linalg_lu_tensor_methods[] = {
    {"matrix_exp", CT_FASTCALL(tensor_matrix_exp), CT_METH_FK, "matrix_exp(): linalg.matrix_exp(self)"},
    {"orgqr", CT_FASTCALL(tensor_orgqr), CT_METH_FK, "orgqr(input2): linalg.householder_product(self, input2)"},
    {"geqrf", CT_FASTCALL(tensor_geqrf), CT_METH_FK, "geqrf(): torch.geqrf(self)"},
    {"ormqr", CT_FASTCALL(tensor_ormqr), CT_METH_FK, "ormqr(input2, input3, left=True, transpose=False)"},
    {NULL},
};

#define CT_LINALG(name) {"_linalg_" #name, CT_FASTCALL(py_linalg_##name), CT_METH_FK, linalg_##name##_doc}
PyMethodDef ct_linalg_lu_module_methods[] = {
    CT_LINALG(lu),
    CT_LINALG(lu_solve),
    CT_LINALG(lstsq),
    CT_LINALG(matrix_exp),
    CT_LINALG(tensorinv),
    CT_LINALG(tensorsolve),
    CT_LINALG(householder_product),
    {"lu_unpack", CT_FASTCALL(py_lu_unpack), CT_METH_FK, lu_unpack_doc},
    {"matrix_exp", CT_FASTCALL(py_matrix_exp), CT_METH_FK, "matrix_exp(input): linalg.matrix_exp"},
    {"orgqr", CT_FASTCALL(py_orgqr), CT_METH_FK, "orgqr(input, input2, *, out=None): linalg.householder_product"},
    {"geqrf", CT_FASTCALL(py_geqrf), CT_METH_FK, geqrf_doc},
    {"ormqr", CT_FASTCALL(py_ormqr), CT_METH_FK, ormqr_doc},
    {NULL},
};
#undef CT_LINALG

PyType_Slot ct_linalg_lu_tensor_slots[] = {{0, NULL}};
