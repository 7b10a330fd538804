/* linalg_ldl.c: the symmetric indefinite factorization, LAPACK's sytrf / sytrs (lower):
 *
 *   torch.linalg.ldl_factor_ex / ldl_factor: A = P L D L^T P^T by Bunch-Kaufman pivoting, returned
 *   packed as LAPACK's: LD (..., n, n) holds L's strict lower triangle and D's 1x1 / 2x2 blocks (its
 *   diagonal and the 2x2 blocks' subdiagonal), its strict upper triangle zero; pivots (..., n) int32
 *   1-based, k > 0: rows i and k-1 swapped and D[i, i] a 1x1 block, -k twice: a 2x2 block at rows
 *   i, i+1 after swapping rows i+1 and k-1; info the first zero diagonal block (1-based) or 0.
 *   torch.linalg.ldl_solve: X with A X = B from those factors.
 *
 * The pivoting is a sequential search down one column at a time, so every device factors and
 * solves on the host: the operands are copied to the CPU, worked one matrix after another and the
 * results copied back (as lu_unpack's permutations are built). hermitian= changes nothing for real
 * dtypes. PyTorch has no derivative for these: their nodes raise at backward (autograd_formulas.c). */
#include "args.h"
#include "creation.h"
#include "device.h"
#include "linalg.h"
#include "registry.h"
#include "tensor.h"
#include <math.h>
#include <string.h>

/* ============================================================================================
 * the per-matrix math (row-major (n, n) a, only its lower triangle read and written)
 * ============================================================================================ */

#define LDL_AT(i, j) a[(i) * n + (j)]
#define LDL_SWAP(T, x, y)                                                                                    \
    do {                                                                                                     \
        T swap_tmp = (x);                                                                                    \
        (x) = (y);                                                                                           \
        (y) = swap_tmp;                                                                                      \
    } while (0)

#define CT_LDL_DEFINE(NAME, T)                                                                               \
    /* sytf2: the 1x1 / 2x2 block at column k chosen by Bunch and Kaufman's test (alpha = (1 + sqrt 17)   \
     * / 8 bounds the growth), its rows and columns swapped into place, the trailing matrix updated.    \
     * Returns info. */                                                                                  \
    static int32_t ldl_factor_##NAME(T *a, int32_t *piv, int64_t n)                                          \
    {                                                                                                        \
        const double alpha = (1.0 + sqrt(17.0)) / 8.0;                                                       \
        int32_t info = 0;                                                                                    \
        for (int64_t k = 0; k < n;) {                                                                        \
            int64_t kstep = 1, kp = k, imax = k;                                                             \
            double absakk = fabs((double)LDL_AT(k, k)), colmax = 0.0;                                        \
            for (int64_t i = k + 1; i < n; i++) {                                                            \
                if (fabs((double)LDL_AT(i, k)) > colmax) {                                                   \
                    colmax = fabs((double)LDL_AT(i, k));                                                     \
                    imax = i;                                                                                \
                }                                                                                            \
            }                                                                                                \
            if ((absakk > colmax ? absakk : colmax) == 0.0 || isnan(absakk)) {                               \
                info = info == 0 ? (int32_t)(k + 1) : info; /* a zero column: D[k, k] = 0, nothing done */  \
            } else {                                                                                         \
                if (absakk < alpha * colmax) {                                                               \
                    double rowmax = 0.0; /* the largest off-diagonal |A[imax, j]|, j != imax */              \
                    for (int64_t j = k; j < imax; j++) {                                                     \
                        rowmax = fmax(rowmax, fabs((double)LDL_AT(imax, j)));                                \
                    }                                                                                        \
                    for (int64_t j = imax + 1; j < n; j++) {                                                 \
                        rowmax = fmax(rowmax, fabs((double)LDL_AT(j, imax)));                                \
                    }                                                                                        \
                    if (absakk >= alpha * colmax * (colmax / rowmax)) {                                      \
                        kp = k;                                                                              \
                    } else if (fabs((double)LDL_AT(imax, imax)) >= alpha * rowmax) {                         \
                        kp = imax;                                                                           \
                    } else {                                                                                 \
                        kp = imax;                                                                           \
                        kstep = 2;                                                                           \
                    }                                                                                        \
                }                                                                                            \
                int64_t kk = k + kstep - 1;                                                                  \
                if (kp != kk) { /* swap rows and columns kk and kp of the trailing lower triangle */         \
                    for (int64_t i = kp + 1; i < n; i++) {                                                   \
                        LDL_SWAP(T, LDL_AT(i, kk), LDL_AT(i, kp));                                           \
                    }                                                                                        \
                    for (int64_t j = kk + 1; j < kp; j++) {                                                  \
                        LDL_SWAP(T, LDL_AT(j, kk), LDL_AT(kp, j));                                           \
                    }                                                                                        \
                    LDL_SWAP(T, LDL_AT(kk, kk), LDL_AT(kp, kp));                                             \
                    if (kstep == 2) {                                                                        \
                        LDL_SWAP(T, LDL_AT(k + 1, k), LDL_AT(kp, k));                                        \
                    }                                                                                        \
                }                                                                                            \
                if (kstep == 1) { /* A22 -= x x^T / d, then x /= d */                                        \
                    T d11 = (T)1 / LDL_AT(k, k);                                                             \
                    for (int64_t j = k + 1; j < n; j++) {                                                    \
                        T t = -d11 * LDL_AT(j, k);                                                           \
                        for (int64_t i = j; i < n; i++) {                                                    \
                            LDL_AT(i, j) += LDL_AT(i, k) * t;                                                \
                        }                                                                                    \
                    }                                                                                        \
                    for (int64_t i = k + 1; i < n; i++) {                                                    \
                        LDL_AT(i, k) *= d11;                                                                 \
                    }                                                                                        \
                } else if (k + 2 < n) { /* A22 -= W D^-1 W^T, [L_k L_k+1] = W D^-1, W = A[k+2:, k:k+2] */  \
                    T d21 = LDL_AT(k + 1, k);                                                                \
                    T d11 = LDL_AT(k + 1, k + 1) / d21, d22 = LDL_AT(k, k) / d21;                            \
                    T t = (T)1 / (d11 * d22 - (T)1);                                                         \
                    d21 = t / d21;                                                                           \
                    for (int64_t j = k + 2; j < n; j++) {                                                    \
                        T wk = d21 * (d11 * LDL_AT(j, k) - LDL_AT(j, k + 1));                                \
                        T wkp1 = d21 * (d22 * LDL_AT(j, k + 1) - LDL_AT(j, k));                              \
                        for (int64_t i = j; i < n; i++) {                                                    \
                            LDL_AT(i, j) -= LDL_AT(i, k) * wk + LDL_AT(i, k + 1) * wkp1;                     \
                        }                                                                                    \
                        LDL_AT(j, k) = wk;                                                                   \
                        LDL_AT(j, k + 1) = wkp1;                                                             \
                    }                                                                                        \
                }                                                                                            \
            }                                                                                                \
            piv[k] = kstep == 1 ? (int32_t)(kp + 1) : -(int32_t)(kp + 1);                                    \
            if (kstep == 2) {                                                                                \
                piv[k + 1] = piv[k];                                                                         \
            }                                                                                                \
            k += kstep;                                                                                      \
        }                                                                                                    \
        for (int64_t i = 0; i < n; i++) {                                                                    \
            for (int64_t j = i + 1; j < n; j++) {                                                            \
                LDL_AT(i, j) = 0;                                                                            \
            }                                                                                                \
        }                                                                                                    \
        return info;                                                                                         \
    }                                                                                                        \
                                                                                                             \
    /* sytrs: b (n, r) becomes A^-1 b: P L z = b forward with D's blocks, then L^T P^T x = D^-1 z. The  \
     * pivots were checked (check_pivots). */                                                            \
    static void ldl_solve_##NAME(const T *a, const int32_t *piv, T *b, int64_t n, int64_t r)                 \
    {                                                                                                        \
        for (int64_t k = 0; k < n;) {                                                                        \
            int64_t two = piv[k] < 0, kp = (piv[k] < 0 ? -(int64_t)piv[k] : (int64_t)piv[k]) - 1;            \
            for (int64_t c = 0; kp != k + two && c < r; c++) {                                               \
                LDL_SWAP(T, b[(k + two) * r + c], b[kp * r + c]);                                            \
            }                                                                                                \
            for (int64_t i = k + 1 + two; i < n; i++) {                                                      \
                for (int64_t c = 0; c < r; c++) {                                                            \
                    b[i * r + c] -= LDL_AT(i, k) * b[k * r + c] + (two ? LDL_AT(i, k + 1) * b[(k + 1) * r + c] : 0); \
                }                                                                                            \
            }                                                                                                \
            if (!two) {                                                                                      \
                for (int64_t c = 0; c < r; c++) {                                                            \
                    b[k * r + c] /= LDL_AT(k, k);                                                            \
                }                                                                                            \
            } else {                                                                                         \
                T akm1k = LDL_AT(k + 1, k), akm1 = LDL_AT(k, k) / akm1k, ak = LDL_AT(k + 1, k + 1) / akm1k;  \
                T denom = akm1 * ak - (T)1;                                                                  \
                for (int64_t c = 0; c < r; c++) {                                                            \
                    T bkm1 = b[k * r + c] / akm1k, bk = b[(k + 1) * r + c] / akm1k;                          \
                    b[k * r + c] = (ak * bkm1 - bk) / denom;                                                 \
                    b[(k + 1) * r + c] = (akm1 * bk - bkm1) / denom;                                         \
                }                                                                                            \
            }                                                                                                \
            k += 1 + two;                                                                                    \
        }                                                                                                    \
        for (int64_t k = n - 1; k >= 0;) {                                                                   \
            int64_t two = piv[k] < 0, kp = (piv[k] < 0 ? -(int64_t)piv[k] : (int64_t)piv[k]) - 1;            \
            for (int64_t row = k - two; row <= k; row++) {                                                   \
                for (int64_t i = k + 1; i < n; i++) {                                                        \
                    for (int64_t c = 0; c < r; c++) {                                                        \
                        b[row * r + c] -= LDL_AT(i, row) * b[i * r + c];                                     \
                    }                                                                                        \
                }                                                                                            \
            }                                                                                                \
            for (int64_t c = 0; kp != k && c < r; c++) {                                                     \
                LDL_SWAP(T, b[k * r + c], b[kp * r + c]);                                                    \
            }                                                                                                \
            k -= 1 + two;                                                                                    \
        }                                                                                                    \
    }
CT_LDL_DEFINE(F32, float)
CT_LDL_DEFINE(F64, double)
#undef CT_LDL_DEFINE

/* ============================================================================================
 * ldl_factor_ex / ldl_factor
 * ============================================================================================ */

static const CtDevice cpu_device = {CT_DEV_CPU, -1};

/* The product of sizes[0 .. ndim). */
static int64_t batch_count(int ndim, const int64_t *sizes)
{
    int64_t c = 1;
    for (int i = 0; i < ndim; i++) {
        c *= sizes[i];
    }
    return c;
}

/* Host factors of A (checked square float32/float64), then moved to A's device: LD, pivots and
 * info as new references; *failed the first nonzero info (or 0). 0 or -1. */
static int ldl_run(CtTensorObject *A, CtTensorObject **LD, CtTensorObject **pivots, CtTensorObject **info,
                   int32_t *failed)
{
    CtDevice dev = ct_device_of(A);
    int nb = A->ndim - 2;
    int64_t n = A->sizes[nb + 1], batch = batch_count(nb, A->sizes);
    CtTensorObject *host = ct_empty(A->ndim, A->sizes, A->dtype, cpu_device), *hpiv = NULL, *hinfo = NULL;
    int rc = -1;
    if (host == NULL || ct_copy_(host, A) < 0 || (hpiv = ct_empty(nb + 1, A->sizes, CT_I32, cpu_device)) == NULL ||
        (hinfo = ct_empty(nb, A->sizes, CT_I32, cpu_device)) == NULL) {
        goto done;
    }
    int32_t *piv = n > 0 ? (int32_t *)ct_data(hpiv) : NULL, *inf = (int32_t *)ct_data(hinfo);
    *failed = 0;
    for (int64_t b = 0; b < batch; b++) {
        inf[b] = A->dtype == CT_F32 ? ldl_factor_F32((float *)ct_data(host) + b * n * n, piv + b * n, n)
                                    : ldl_factor_F64((double *)ct_data(host) + b * n * n, piv + b * n, n);
        *failed = *failed == 0 ? inf[b] : *failed;
    }
    if ((*LD = ct_to(host, A->dtype, dev, false)) == NULL || (*pivots = ct_to(hpiv, CT_I32, dev, false)) == NULL ||
        (*info = ct_to(hinfo, CT_I32, dev, false)) == NULL) {
        Py_CLEAR(*LD);
        Py_CLEAR(*pivots);
        goto done;
    }
    rc = 0;
done:
    Py_XDECREF(host);
    Py_XDECREF(hpiv);
    Py_XDECREF(hinfo);
    return rc;
}

/* ldl_factor_ex's and ldl_factor's arguments and factors; check: raise for a zero block (naming
 * fname). Steals nothing; 0 or -1. */
static int ldl_factor_call(const char *pyname, const char *fname, bool ex, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames, PyObject **a, CtTensorObject **LD, CtTensorObject **pivots,
                           CtTensorObject **info)
{
    static const char *const names[] = {"A", "*hermitian", "*out", NULL};
    static const char *const names_ex[] = {"A", "*hermitian", "*check_errors", "*out", NULL};
    CtTensorObject *A;
    bool hermitian = false, check = !ex;
    int32_t failed;
    if (ct_parse_args(pyname, args, nargs, kwnames, ex ? names_ex : names, 1, a) < 0 ||
        (A = ct_linalg_tensor_arg(a[0], pyname, "A")) == NULL || ct_arg_bool(a[1], &hermitian) < 0 ||
        (ex && ct_arg_bool(a[2], &check) < 0) ||
        ct_linalg_check_square(A, "torch.linalg.ldl_factor_ex", "A", "ldl_factor_kernel") < 0 ||
        ldl_run(A, LD, pivots, info, &failed) < 0) {
        return -1;
    }
    if (check && failed != 0) {
        /* PyTorch's text (an internal assert there: LAPACK's positive info is not translated) */
        PyErr_Format(PyExc_RuntimeError, "%s: Unknown error code: %d.", fname, (int)failed);
        Py_CLEAR(*LD);
        Py_CLEAR(*pivots);
        Py_CLEAR(*info);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(linalg_ldl_factor_ex_doc,
             "_linalg_ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None)\n\n"
             "torch.linalg.ldl_factor_ex: (LD, pivots, info), Bunch-Kaufman LDL^T in LAPACK's sytrf layout.");
static PyObject *py_linalg_ldl_factor_ex(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static PyTypeObject *type = NULL;
    static const char *const fields[] = {"LD", "pivots", "info"};
    PyObject *a[4];
    CtTensorObject *LD, *pivots, *info;
    if (ldl_factor_call("linalg_ldl_factor_ex", "torch.linalg.ldl_factor_ex", true, args, nargs, kwnames, a, &LD,
                        &pivots, &info) < 0) {
        return NULL;
    }
    PyObject *items[3] = {(PyObject *)LD, (PyObject *)pivots, (PyObject *)info};
    PyObject *r = ct_linalg_named_result(&type, "torch.return_types.linalg_ldl_factor_ex", fields, 3, items);
    return ct_linalg_write_outs(r, a[3], "linalg_ldl_factor_ex", 3);
}

PyDoc_STRVAR(linalg_ldl_factor_doc, "_linalg_ldl_factor(A, *, hermitian=False, out=None)\n\n"
                                    "torch.linalg.ldl_factor: (LD, pivots) of ldl_factor_ex, raising for a zero "
                                    "block.");
static PyObject *py_linalg_ldl_factor(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static PyTypeObject *type = NULL;
    static const char *const fields[] = {"LD", "pivots"};
    PyObject *a[3];
    CtTensorObject *LD, *pivots, *info;
    if (ldl_factor_call("linalg_ldl_factor", "torch.linalg.ldl_factor", false, args, nargs, kwnames, a, &LD, &pivots,
                        &info) < 0) {
        return NULL;
    }
    Py_DECREF(info);
    PyObject *items[2] = {(PyObject *)LD, (PyObject *)pivots};
    PyObject *r = ct_linalg_named_result(&type, "torch.return_types.linalg_ldl_factor", fields, 2, items);
    return ct_linalg_write_outs(r, a[2], "linalg_ldl_factor", 2);
}

/* ============================================================================================
 * ldl_solve
 * ============================================================================================ */

/* Each matrix's pivots (batch of n) in [-n, -1] u [1, n], a negative one repeated on the next row
 * (a 2x2 block): PyTorch's messages for the range; the block rule keeps the solve inside the matrix. */
static int check_pivots(const int32_t *piv, int64_t n, int64_t batch)
{
    for (int64_t b = 0; b < batch; b++) {
        const int32_t *p = piv + b * n;
        for (int64_t k = 0; k < n; k++) {
            int64_t v = p[k] < 0 ? -(int64_t)p[k] : p[k];
            if (v < 1 || v > n) {
                PyErr_Format(PyExc_RuntimeError,
                             "Pivots given to ldl_solve must all satisfy |pivot| %s. Did you properly pass the result "
                             "of ldl_factor?",
                             v < 1 ? ">= 1" : "<= LD.size(-2)");
                return -1;
            }
        }
        for (int64_t k = 0; k < n; k += p[k] < 0 ? 2 : 1) {
            if (p[k] < 0 && (k + 1 >= n || p[k + 1] != p[k])) {
                PyErr_Format(PyExc_RuntimeError,
                             "torch.linalg.ldl_solve: pivot %d at index %lld opens a 2x2 block, so the next pivot "
                             "must repeat it. Did you properly pass the result of ldl_factor?",
                             (int)p[k], (long long)k);
                return -1;
            }
        }
    }
    return 0;
}

/* ldl_solve's checks in PyTorch's order. 0 or -1. */
static int check_ldl_solve(const CtTensorObject *LD, const CtTensorObject *pivots, const CtTensorObject *B)
{
    if (ct_linalg_check_square(LD, "torch.linalg.ldl_solve", "A", "ldl_solve_kernel") < 0) {
        return -1;
    }
    if (B->ndim < 2) {
        PyErr_Format(PyExc_IndexError, "Dimension out of range (expected to be in range of [%d, %d], but got -2)",
                     B->ndim == 0 ? -1 : -B->ndim, B->ndim == 0 ? 0 : B->ndim - 1);
        return -1;
    }
    if (pivots->ndim != LD->ndim - 1 ||
        memcmp(pivots->sizes, LD->sizes, sizeof(int64_t) * (size_t)(LD->ndim - 1)) != 0) {
        PyObject *shape = ct_size_object(pivots->ndim, pivots->sizes), *list = shape ? PySequence_List(shape) : NULL;
        if (list != NULL) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but got "
                         "pivots with shape %S instead",
                         list);
        }
        Py_XDECREF(shape);
        Py_XDECREF(list);
        return -1;
    }
    int64_t n = LD->sizes[LD->ndim - 1];
    if (B->sizes[B->ndim - 2] != n) {
        PyErr_Format(PyExc_RuntimeError,
                     "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is %lld by %lld but each b "
                     "matrix is %lld by %lld",
                     (long long)n, (long long)n, (long long)B->sizes[B->ndim - 2], (long long)B->sizes[B->ndim - 1]);
        return -1;
    }
    if (!ct_is_integral(pivots->dtype, false)) {
        PyErr_Format(PyExc_RuntimeError, "torch.linalg.ldl_solve: Expected pivots to be integers. Got %s",
                     ct_scalar_type_name(pivots->dtype));
        return -1;
    }
    if (B->dtype != LD->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected b and A to have the same dtype, but found b of type %s and A of type %s instead.",
                     ct_scalar_type_name(B->dtype), ct_scalar_type_name(LD->dtype));
        return -1;
    }
    CtDevice d0 = ct_device_of(LD), d1 = ct_device_of(pivots), d2 = ct_device_of(B);
    if (d0.type != d1.type || d0.index != d1.index || d0.type != d2.type || d0.index != d2.index) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Expected all tensors to be on the same device, but found at least two devices!");
        return -1;
    }
    return 0;
}

/* X (broadcast batch, n, k) on B's device: the operands broadcast into host copies, solved there. */
static CtTensorObject *ldl_solve_run(CtTensorObject *LD, CtTensorObject *pivots, CtTensorObject *B)
{
    int nd;
    int64_t shape[CT_MAX_DIMS];
    if (ct_linalg_broadcast_batch(LD, B, &nd, shape) < 0) {
        return NULL;
    }
    int64_t n = LD->sizes[LD->ndim - 1], k = B->sizes[B->ndim - 1], batch = batch_count(nd, shape);
    CtTensorObject *hld = NULL, *hpiv = NULL, *hb = NULL, *result = NULL;
    shape[nd] = shape[nd + 1] = n;
    if ((hld = ct_empty(nd + 2, shape, LD->dtype, cpu_device)) == NULL || ct_copy_(hld, LD) < 0 ||
        (hpiv = ct_empty(nd + 1, shape, CT_I32, cpu_device)) == NULL || ct_copy_(hpiv, pivots) < 0) {
        goto done;
    }
    shape[nd + 1] = k;
    if ((hb = ct_empty(nd + 2, shape, B->dtype, cpu_device)) == NULL || ct_copy_(hb, B) < 0 ||
        (n > 0 && check_pivots((const int32_t *)ct_data(hpiv), n, batch) < 0)) {
        goto done;
    }
    for (int64_t b = 0; n > 0 && k > 0 && b < batch; b++) {
        const int32_t *piv = (const int32_t *)ct_data(hpiv) + b * n;
        if (B->dtype == CT_F32) {
            ldl_solve_F32((const float *)ct_data(hld) + b * n * n, piv, (float *)ct_data(hb) + b * n * k, n, k);
        } else {
            ldl_solve_F64((const double *)ct_data(hld) + b * n * n, piv, (double *)ct_data(hb) + b * n * k, n, k);
        }
    }
    result = ct_to(hb, B->dtype, ct_device_of(B), false);
done:
    Py_XDECREF(hld);
    Py_XDECREF(hpiv);
    Py_XDECREF(hb);
    return result;
}

PyDoc_STRVAR(linalg_ldl_solve_doc, "_linalg_ldl_solve(LD, pivots, B, *, hermitian=False, out=None)\n\n"
                                   "torch.linalg.ldl_solve: A^-1 B from ldl_factor's (LD, pivots).");
static PyObject *py_linalg_ldl_solve(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"LD", "pivots", "B", "*hermitian", "*out", NULL};
    PyObject *a[5];
    CtTensorObject *LD, *pivots, *B;
    bool hermitian = false;
    if (ct_parse_args("linalg_ldl_solve", args, nargs, kwnames, names, 3, a) < 0 ||
        (LD = ct_linalg_tensor_arg(a[0], "linalg_ldl_solve", "LD")) == NULL ||
        (pivots = ct_linalg_tensor_arg(a[1], "linalg_ldl_solve", "pivots")) == NULL ||
        (B = ct_linalg_tensor_arg(a[2], "linalg_ldl_solve", "B")) == NULL || ct_arg_bool(a[3], &hermitian) < 0 ||
        check_ldl_solve(LD, pivots, B) < 0) {
        return NULL;
    }
    CtTensorObject *X = ldl_solve_run(LD, pivots, B);
    if (X == NULL || a[4] == NULL || a[4] == Py_None) {
        return (PyObject *)X;
    }
    return ct_write_out(X, a[4], "linalg_ldl_solve", CT_OUT_EXACT, 0, NULL);
}

/* ============================================================================================
 * tables
 * ============================================================================================ */

PyMethodDef ct_linalg_ldl_tensor_methods[] = {{NULL}};

#define CT_LINALG(name) {"_linalg_" #name, CT_FASTCALL(py_linalg_##name), CT_METH_FK, linalg_##name##_doc}
PyMethodDef ct_linalg_ldl_module_methods[] = {
    CT_LINALG(ldl_factor_ex),
    CT_LINALG(ldl_factor),
    CT_LINALG(ldl_solve),
    {NULL},
};
#undef CT_LINALG

PyType_Slot ct_linalg_ldl_tensor_slots[] = {{0, NULL}};
