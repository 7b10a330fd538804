/* linalg_eig.c: the symmetric eigendecomposition and the SVD, and what they give:
 *
 *   linalg.eigh / eigvalsh (LinalgEighBackward0), linalg.svd / svdvals and torch.svd
 *   (LinalgSvdBackward0), linalg.matrix_rank, linalg.pinv, linalg.cond, and the SVD orders of
 *   matrix_norm ('nuc', 2, -2; ct_linalg_svd_norm, called from linalg_more.c and ops_reduce.c).
 *
 * _linalg_eigh and _linalg_svd are the primitives (formula rows in autograd_formulas.c), run by
 * CtBlasKernels' eigh / svd entries: cyclic Jacobi and one-sided Jacobi, the per-matrix steps in
 * decomp_math.h, a loop over the matrices here and one block per matrix in cuda/linalg.cu. The
 * rest are composed of recording ops, so their gradients come from the primitives' formulas. */
#include "args.h"
#include "autograd_arena.h"
#include "creation.h"
#include "decomp_math.h"
#include "device.h"
#include "linalg.h"
#include "registry.h"
#include "tensor.h"
#include <string.h>

/* ============================================================================================
 * CPU kernels: decomp_math.h's Jacobi steps, one matrix after another
 * ============================================================================================ */

#define CT_EIG_CPU(NAME, T)                                                                                    \
    static void eigh_cpu_##NAME(T *A, T *w, T *V, int64_t n)                                                   \
    {                                                                                                          \
        for (int64_t i = 0; i < n * n; i++) {                                                                  \
            V[i] = i / n == i % n ? 1 : 0;                                                                     \
        }                                                                                                      \
        for (int sweep = 0; sweep < CT_JACOBI_MAX_SWEEPS && !ct_eigh_converged_##NAME(A, n); sweep++) {        \
            for (int64_t p = 0; p < n; p++) {                                                                  \
                for (int64_t q = p + 1; q < n; q++) {                                                          \
                    T c, s;                                                                                    \
                    ct_jacobi_angle_##NAME(A[p * n + p], A[q * n + q], A[p * n + q], &c, &s);                  \
                    for (int64_t k = 0; s != 0 && k < n; k++) {                                                \
                        ct_rotate_cols_##NAME(A, n, p, q, c, s, k);                                            \
                        ct_rotate_cols_##NAME(V, n, p, q, c, s, k);                                            \
                    }                                                                                          \
                    for (int64_t k = 0; s != 0 && k < n; k++) {                                                \
                        ct_rotate_rows_##NAME(A, n, p, q, c, s, k);                                            \
                    }                                                                                          \
                    A[p * n + q] = A[q * n + p] = 0;                                                           \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
        ct_eigh_sort_##NAME(A, w, V, n);                                                                       \
    }                                                                                                          \
    static void svd_cpu_##NAME(T *W, T *S, T *U, T *V, int64_t m, int64_t n, int64_t ucols)                    \
    {                                                                                                          \
        for (int64_t i = 0; V != NULL && i < n * n; i++) {                                                     \
            V[i] = i / n == i % n ? 1 : 0;                                                                     \
        }                                                                                                      \
        for (int sweep = 0; sweep < CT_JACOBI_MAX_SWEEPS; sweep++) {                                           \
            bool rotated = false;                                                                              \
            for (int64_t p = 0; p < n; p++) {                                                                  \
                for (int64_t q = p + 1; q < n; q++) {                                                          \
                    T c, s;                                                                                    \
                    if (!ct_svd_angle_##NAME(W, m, n, p, q, &c, &s)) {                                         \
                        continue;                                                                              \
                    }                                                                                          \
                    rotated = true;                                                                            \
                    for (int64_t k = 0; k < m; k++) {                                                          \
                        ct_rotate_cols_##NAME(W, n, p, q, c, s, k);                                            \
                    }                                                                                          \
                    for (int64_t k = 0; V != NULL && k < n; k++) {                                             \
                        ct_rotate_cols_##NAME(V, n, p, q, c, s, k);                                            \
                    }                                                                                          \
                }                                                                                              \
            }                                                                                                  \
            if (!rotated) {                                                                                    \
                break;                                                                                         \
            }                                                                                                  \
        }                                                                                                      \
        ct_svd_finish_##NAME(W, S, U, V, m, n, ucols);                                                         \
    }
CT_LU_TYPES(CT_EIG_CPU)
#undef CT_EIG_CPU

int ct_cpu_eigh(CtDevice device, CtDType dtype, void *A, void *w, void *V, int64_t n, int64_t batch)
{
    (void)device;
    for (int64_t b = 0; b < batch; b++) {
        if (dtype == CT_F32) {
            eigh_cpu_F32((float *)A + b * n * n, (float *)w + b * n, (float *)V + b * n * n, n);
        } else {
            eigh_cpu_F64((double *)A + b * n * n, (double *)w + b * n, (double *)V + b * n * n, n);
        }
    }
    return 0;
}

int ct_cpu_svd(CtDevice device, CtDType dtype, void *W, void *S, void *U, void *V, int64_t m, int64_t n,
               int64_t ucols, int64_t batch)
{
    (void)device;
    for (int64_t b = 0; b < batch; b++) {
        if (dtype == CT_F32) {
            svd_cpu_F32((float *)W + b * m * n, (float *)S + b * n, U ? (float *)U + b * m * ucols : NULL,
                        V ? (float *)V + b * n * n : NULL, m, n, ucols);
        } else {
            svd_cpu_F64((double *)W + b * m * n, (double *)S + b * n, U ? (double *)U + b * m * ucols : NULL,
                        V ? (double *)V + b * n * n : NULL, m, n, ucols);
        }
    }
    return 0;
}

/* ============================================================================================
 * helpers
 * ============================================================================================ */

#define MT(x) METH((x), "transpose", "(ii)", -2, -1)


/* Whether autograd would record an op on t. */
static bool wants_grad(const CtTensorObject *t)
{
    return ct_grad_enabled && (t->requires_grad || t->grad_fn != NULL);
}

/* The device's blas table with entry `have` (non-NULL), or RuntimeError naming what. */
static const struct CtBlasKernels *blas_with(CtDevice dev, bool (*have)(const struct CtBlasKernels *),
                                             const char *what)
{
    const CtDeviceOps *ops = ct_device_ops(dev);
    if (ops == NULL) {
        return NULL;
    }
    if (ops->blas == NULL || !have(ops->blas)) {
        PyErr_Format(PyExc_RuntimeError, "%s is not implemented on this device", what);
        return NULL;
    }
    return ops->blas;
}

static bool have_eigh(const struct CtBlasKernels *b) { return b->eigh != NULL; }
static bool have_svd(const struct CtBlasKernels *b) { return b->svd != NULL; }

/* sizes[0 .. nb) followed by the extra dims: into shape, returning its ndim. */
static int batch_shape(const CtTensorObject *A, int nb, int64_t *shape, int extra, int64_t d0, int64_t d1)
{
    memcpy(shape, A->sizes, sizeof(int64_t) * (size_t)nb);
    shape[nb] = d0;
    shape[nb + 1] = d1;
    return nb + extra;
}

/* ============================================================================================
 * eigh
 * ============================================================================================ */

/* (eigenvalues, eigenvectors) of the symmetric matrix in A's UPLO triangle (A checked): a new
 * 2-tuple, or NULL. */
static PyObject *eigh_compute(CtTensorObject *A, bool upper)
{
    CtDevice dev = ct_device_of(A);
    const struct CtBlasKernels *blas = blas_with(dev, have_eigh, "linalg.eigh");
    if (blas == NULL) {
        return NULL;
    }
    int nb = A->ndim - 2;
    int64_t n = A->sizes[nb + 1], batch = ct_numel(A) / (n > 0 ? n * n : 1), shape[CT_MAX_DIMS];
    CtArena scratch = {0}, *arena = &scratch;
    CtTensorObject *W = NULL, *w = NULL, *V = NULL;
    PyObject *result = NULL;
    /* the triangle mirrored: the other one is never read */
    PyObject *half = METH((PyObject *)A, upper ? "triu" : "tril", NULL);
    PyObject *sym = ADD(half, MT(METH(half, upper ? "triu" : "tril", "(i)", upper ? 1 : -1)));
    if (sym == NULL || (W = ct_contiguous(CT_TENSOR(sym))) == NULL ||
        (w = ct_empty(batch_shape(A, nb, shape, 1, n, 0), shape, A->dtype, dev)) == NULL ||
        (V = ct_empty(A->ndim, A->sizes, A->dtype, dev)) == NULL) {
        goto done;
    }
    if (n > 0 && ct_numel(A) > 0 && blas->eigh(dev, A->dtype, ct_data(W), ct_data(w), ct_data(V), n, batch) < 0) {
        goto done;
    }
    result = PyTuple_Pack(2, (PyObject *)w, (PyObject *)V);
done:
    arena_free(arena);
    Py_XDECREF(W);
    Py_XDECREF(w);
    Py_XDECREF(V);
    return result;
}

/* UPLO: 'L' (false) or 'U' (true), PyTorch's message otherwise. 0 or -1. */
static int uplo_arg(PyObject *obj, const char *fname, bool *upper)
{
    *upper = false;
    if (obj == NULL) {
        return 0;
    }
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'UPLO' (position 2) must be str, not %s", fname,
                     ct_type_name(obj));
        return -1;
    }
    const char *s = PyUnicode_AsUTF8(obj);
    if (s == NULL) {
        return -1;
    }
    if (strlen(s) != 1 || (s[0] != 'L' && s[0] != 'l' && s[0] != 'U' && s[0] != 'u')) {
        PyErr_Format(PyExc_RuntimeError, "Expected UPLO argument to be 'L' or 'U', but got %s", s);
        return -1;
    }
    *upper = s[0] == 'U' || s[0] == 'u';
    return 0;
}

/* A (..., n, n) of a float dtype for linalg.eigh: PyTorch's messages in its order. 0 or -1. */
static int check_eigh_input(const CtTensorObject *A)
{
    if (A->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError, "linalg.eigh: The input tensor A must have at least 2 dimensions.");
        return -1;
    }
    if (A->sizes[A->ndim - 1] != A->sizes[A->ndim - 2]) {
        PyErr_Format(PyExc_RuntimeError,
                     "linalg.eigh: A must be batches of square matrices, but they are %lld by %lld matrices",
                     (long long)A->sizes[A->ndim - 2], (long long)A->sizes[A->ndim - 1]);
        return -1;
    }
    return ct_linalg_kernel_dtype(A, "linalg_eigh");
}

PyDoc_STRVAR(linalg_eigh_doc, "_linalg_eigh(A, UPLO='L', *, out=None)\n\n"
                              "torch.linalg.eigh: (eigenvalues, eigenvectors) of the symmetric matrices in A's "
                              "lower (UPLO='L') or upper triangle; eigenvalues ascending, eigenvectors the columns.");
static PyObject *py_linalg_eigh(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "UPLO", "*out", NULL};
    static const char *const fields[] = {"eigenvalues", "eigenvectors"};
    static PyTypeObject *type = NULL;
    PyObject *a[3];
    CtTensorObject *A;
    bool upper;
    if (ct_parse_args("linalg_eigh", args, nargs, kwnames, names, 1, a) < 0 ||
        (A = ct_linalg_tensor_arg(a[0], "linalg_eigh", "A")) == NULL || uplo_arg(a[1], "linalg_eigh", &upper) < 0 ||
        check_eigh_input(A) < 0) {
        return NULL;
    }
    PyObject *pair = eigh_compute(A, upper);
    if (pair == NULL) {
        return NULL;
    }
    PyObject *items[2] = {Py_NewRef(PyTuple_GET_ITEM(pair, 0)), Py_NewRef(PyTuple_GET_ITEM(pair, 1))};
    Py_DECREF(pair);
    PyObject *r = ct_linalg_named_result(&type, "torch.return_types.linalg_eigh", fields, 2, items);
    return ct_linalg_write_outs(r, a[2], "linalg_eigh", 2);
}

/* The k-th item of ctorch._C.name(*args) through autograd: a new reference. */
static PyObject *op_item(const char *name, PyObject *const *args, size_t nargs, PyObject *kwnames, Py_ssize_t k)
{
    PyObject *r = ct_op(name, args, nargs, kwnames);
    PyObject *item = r ? PySequence_GetItem(r, k) : NULL;
    Py_XDECREF(r);
    return item;
}

PyDoc_STRVAR(linalg_eigvalsh_doc, "_linalg_eigvalsh(A, UPLO='L', *, out=None)\n\n"
                                  "torch.linalg.eigvalsh: the eigenvalues of linalg.eigh, ascending.");
static PyObject *py_linalg_eigvalsh(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "UPLO", "*out", NULL};
    PyObject *a[3];
    bool upper;
    if (ct_parse_args("linalg_eigvalsh", args, nargs, kwnames, names, 1, a) < 0 ||
        ct_linalg_tensor_arg(a[0], "linalg_eigvalsh", "A") == NULL || uplo_arg(a[1], "linalg_eigvalsh", &upper) < 0) {
        return NULL;
    }
    PyObject *call[2] = {a[0], upper ? PyUnicode_FromString("U") : PyUnicode_FromString("L")};
    PyObject *w = call[1] ? op_item("_linalg_eigh", call, 2, NULL, 0) : NULL;
    Py_XDECREF(call[1]);
    if (w == NULL || a[2] == NULL || a[2] == Py_None) {
        return w;
    }
    return ct_write_out(CT_TENSOR(w), a[2], "linalg_eigvalsh", CT_OUT_EXACT, 0, NULL);
}

/* ============================================================================================
 * svd
 * ============================================================================================ */

/* (U, S, Vh) of A (checked): the reduced (full: complete) SVD, U and Vh empty without uv. The
 * kernel works on the tall one of A and A^T; for a wide A, A^T = U' S V'^T gives U = V', Vh = U'^T.
 * A new 3-tuple, or NULL. */
static PyObject *svd_compute(CtTensorObject *A, bool full, bool uv)
{
    CtDevice dev = ct_device_of(A);
    const struct CtBlasKernels *blas = blas_with(dev, have_svd, "linalg.svd");
    if (blas == NULL) {
        return NULL;
    }
    int nb = A->ndim - 2;
    int64_t m = A->sizes[nb], n = A->sizes[nb + 1], shape[CT_MAX_DIMS];
    bool wide = m < n;
    int64_t rows = wide ? n : m, cols = wide ? m : n, ucols = full ? rows : cols;
    int64_t batch = 1, zero = 0;
    for (int i = 0; i < nb; i++) {
        batch *= A->sizes[i];
    }
    CtArena scratch = {0}, *arena = &scratch;
    CtTensorObject *W = NULL, *S = NULL, *Uw = NULL, *Vw = NULL;
    PyObject *result = NULL;
    PyObject *X = wide ? MT((PyObject *)A) : (PyObject *)A;
    if (X == NULL || (W = ct_empty(batch_shape(A, nb, shape, 2, rows, cols), shape, A->dtype, dev)) == NULL ||
        ct_copy_(W, CT_TENSOR(X)) < 0 ||
        (S = ct_empty(batch_shape(A, nb, shape, 1, cols, 0), shape, A->dtype, dev)) == NULL) {
        goto done;
    }
    if (uv) {
        if ((Uw = ct_empty(batch_shape(A, nb, shape, 2, rows, ucols), shape, A->dtype, dev)) == NULL ||
            (Vw = ct_empty(batch_shape(A, nb, shape, 2, cols, cols), shape, A->dtype, dev)) == NULL) {
            goto done;
        }
    }
    if (rows > 0 && batch > 0 &&
        blas->svd(dev, A->dtype, ct_data(W), ct_data(S), uv ? ct_data(Uw) : NULL, uv ? ct_data(Vw) : NULL, rows,
                  cols, ucols, batch) < 0) {
        goto done;
    }
    PyObject *U, *Vh;
    if (!uv) {
        U = KEEP((PyObject *)ct_empty(1, &zero, A->dtype, dev));
        Vh = U;
    } else {
        U = wide ? (PyObject *)Vw : (PyObject *)Uw;
        Vh = METH(MT(wide ? (PyObject *)Uw : (PyObject *)Vw), "contiguous", NULL);
    }
    if (U != NULL && Vh != NULL) {
        result = PyTuple_Pack(3, U, (PyObject *)S, Vh);
    }
done:
    arena_free(arena);
    Py_XDECREF(W);
    Py_XDECREF(S);
    Py_XDECREF(Uw);
    Py_XDECREF(Vw);
    return result;
}

/* A (..., m, n) of a float dtype for linalg.svd: PyTorch's messages in its order. 0 or -1. */
static int check_svd_input(PyObject *obj, const char *fname, CtTensorObject **A)
{
    if ((*A = ct_linalg_tensor_arg(obj, fname, "A")) == NULL) {
        return -1;
    }
    if ((*A)->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError, "linalg.svd: The input tensor A must have at least 2 dimensions.");
        return -1;
    }
    if (!ct_is_floating((*A)->dtype)) {
        PyErr_Format(PyExc_NotImplementedError,
                     "linalg.svd: Expected a floating point or complex tensor as input. Got %s",
                     ct_scalar_type_name((*A)->dtype));
        return -1;
    }
    return ct_linalg_kernel_dtype(*A, "linalg_svd");
}

/* driver=: only None on the CPU (PyTorch's message); cuSOLVER's names are accepted on CUDA, where
 * every driver runs the one Jacobi kernel. 0 or -1. */
static int check_driver(PyObject *driver, const CtTensorObject *A)
{
    if (driver == NULL || driver == Py_None || ct_device_of(A).type != CT_DEV_CPU) {
        return 0;
    }
    PyErr_SetString(PyExc_RuntimeError,
                    "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER "
                    "backend.");
    return -1;
}

PyDoc_STRVAR(linalg_svd_doc, "_linalg_svd(A, full_matrices=True, *, compute_uv=True, driver=None, out=None)\n\n"
                             "torch.linalg.svd: (U, S, Vh) with A = U diag(S) Vh, S descending (one-sided Jacobi); "
                             "full_matrices: U (m, m) and Vh (n, n). compute_uv=False leaves U and Vh empty.");
static PyObject *py_linalg_svd(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "full_matrices", "*compute_uv", "*driver", "*out", NULL};
    static const char *const fields[] = {"U", "S", "Vh"};
    static PyTypeObject *type = NULL;
    PyObject *a[5];
    CtTensorObject *A;
    bool full = true, uv = true;
    if (ct_parse_args("linalg_svd", args, nargs, kwnames, names, 1, a) < 0 ||
        check_svd_input(a[0], "linalg_svd", &A) < 0 || ct_arg_bool(a[1], &full) < 0 || ct_arg_bool(a[2], &uv) < 0 ||
        check_driver(a[3], A) < 0) {
        return NULL;
    }
    PyObject *t = svd_compute(A, full, uv);
    if (t == NULL) {
        return NULL;
    }
    PyObject *items[3];
    for (int i = 0; i < 3; i++) {
        items[i] = Py_NewRef(PyTuple_GET_ITEM(t, i));
    }
    Py_DECREF(t);
    PyObject *r = ct_linalg_named_result(&type, "torch.return_types.linalg_svd", fields, 3, items);
    return ct_linalg_write_outs(r, a[4], "linalg_svd", 3);
}

/* The singular values of A (a tensor, checked by the caller) through _linalg_svd, U and V
 * computed only when autograd needs them: a new reference. */
static PyObject *svdvals_of(PyObject *A)
{
    PyObject *kw = Py_BuildValue("(s)", "compute_uv");
    PyObject *call[3] = {A, Py_False, wants_grad(CT_TENSOR(A)) ? Py_True : Py_False};
    PyObject *S = kw ? op_item("_linalg_svd", call, 2, kw, 1) : NULL;
    Py_XDECREF(kw);
    return S;
}

PyDoc_STRVAR(linalg_svdvals_doc, "_linalg_svdvals(A, *, driver=None, out=None)\n\n"
                                 "torch.linalg.svdvals: the singular values of A, descending.");
static PyObject *py_linalg_svdvals(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "*driver", "*out", NULL};
    PyObject *a[3];
    CtTensorObject *A;
    if (ct_parse_args("linalg_svdvals", args, nargs, kwnames, names, 1, a) < 0 ||
        check_svd_input(a[0], "linalg_svdvals", &A) < 0 || check_driver(a[1], A) < 0) {
        return NULL;
    }
    PyObject *S = svdvals_of(a[0]);
    if (S == NULL || a[2] == NULL || a[2] == Py_None) {
        return S;
    }
    return ct_write_out(CT_TENSOR(S), a[2], "linalg_svdvals", CT_OUT_EXACT, 0, NULL);
}

/* torch.svd(input, some=True, compute_uv=True, *, out=None): (U, S, V), V = Vh^T; without
 * compute_uv, U (m, m) and V (n, n) are zeros. */
static PyObject *svd_call(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "some", "compute_uv", "*out", NULL};
    static const char *const fields[] = {"U", "S", "V"};
    static PyTypeObject *type = NULL;
    PyObject *a[4];
    CtTensorObject *A;
    bool some = true, uv = true;
    if (ct_parse_args("svd", args, nargs, kwnames, names, 1, a) < 0 || check_svd_input(a[0], "svd", &A) < 0 ||
        ct_arg_bool(a[1], &some) < 0 || ct_arg_bool(a[2], &uv) < 0) {
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *items[3] = {NULL, NULL, NULL};
    int nb = A->ndim - 2;
    int64_t shape[CT_MAX_DIMS];
    if (uv) {
        PyObject *call[2] = {a[0], some ? Py_False : Py_True};
        PyObject *t = KEEP(ct_op("_linalg_svd", call, 2, NULL));
        items[0] = t ? Py_NewRef(PyTuple_GET_ITEM(t, 0)) : NULL;
        items[1] = t ? Py_NewRef(PyTuple_GET_ITEM(t, 1)) : NULL;
        items[2] = TAKE(MT(t ? PyTuple_GET_ITEM(t, 2) : NULL));
    } else {
        items[1] = svdvals_of(a[0]);
        items[0] = (PyObject *)ct_zeros(batch_shape(A, nb, shape, 2, A->sizes[nb], A->sizes[nb]), shape, A->dtype,
                                        ct_device_of(A));
        items[2] = (PyObject *)ct_zeros(batch_shape(A, nb, shape, 2, A->sizes[nb + 1], A->sizes[nb + 1]), shape,
                                        A->dtype, ct_device_of(A));
    }
    arena_free(arena);
    if (items[0] == NULL || items[1] == NULL || items[2] == NULL) {
        for (int i = 0; i < 3; i++) {
            Py_XDECREF(items[i]);
        }
        return NULL;
    }
    PyObject *r = ct_linalg_named_result(&type, "torch.return_types.svd", fields, 3, items);
    return ct_linalg_write_outs(r, a[3], "svd", 3);
}

static PyObject *py_svd(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return svd_call(args, nargs, kwnames);
}

static PyObject *tensor_svd(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return ct_function_as_method("svd", py_svd, self, args, nargs, kwnames);
}

/* ============================================================================================
 * what the SVD gives: matrix norms, rank, pseudo-inverse, condition number
 * ============================================================================================ */

/* matrix_norm's SVD orders over dims (d0, d1) of x: the sum ('nuc'), largest (2) or smallest
 * (-2) singular value, as PyTorch's svdvals().sum / amax / amin, so the node is SumBackward1 /
 * AmaxBackward0 / AminBackward0. A new reference. */
PyObject *ct_linalg_svd_norm(PyObject *x, int ord, int d0, int d1, bool keepdim)
{
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *moved = METH(x, "movedim", "((ii)(ii))", d0, d1, -2, -1);
    PyObject *S = moved ? KEEP(svdvals_of(moved)) : NULL;
    /* no singular values: 0 for 'nuc' and 2, as PyTorch; -2 raises amin's IndexError, as PyTorch */
    bool empty = S == NULL || CT_TENSOR(S)->sizes[CT_TENSOR(S)->ndim - 1] == 0;
    PyObject *r = ord == 0 || (empty && ord > 0) ? METH(S, "sum", "(i)", -1)
                                                 : METH(S, ord > 0 ? "amax" : "amin", "(i)", -1);
    if (keepdim) {
        r = METH(METH(r, "unsqueeze", "(i)", d0 < d1 ? d0 : d1), "unsqueeze", "(i)", d0 < d1 ? d1 : d0);
    }
    PyObject *out = TAKE(r);
    arena_free(arena);
    return out;
}

/* atol / rtol of matrix_rank and pinv as 0-d tensors (or the given tensors) like S, PyTorch's
 * defaults: atol 0, rtol eps * max(m, n) unless atol was given (then 0 where atol > 0). Into the
 * arena; 0 or -1. */
static int tolerances(CtArena *arena, PyObject *S, PyObject *atol_obj, PyObject *rtol_obj, int64_t mn,
                      PyObject **atol, PyObject **rtol)
{
    CtTensorObject *s = CT_TENSOR(S);
    PyObject *zero = METH(S, "new_zeros", "(())");
    *atol = atol_obj == NULL || atol_obj == Py_None ? zero
            : CtTensor_Check(atol_obj)              ? atol_obj
                                                    : METH(S, "new_full", "(()O)", atol_obj);
    if (rtol_obj != NULL && rtol_obj != Py_None) {
        *rtol = CtTensor_Check(rtol_obj) ? rtol_obj : METH(S, "new_full", "(()O)", rtol_obj);
    } else {
        double eps = s->dtype == CT_F32 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
        PyObject *dflt = METH(S, "new_full", "(()d)", eps * (double)mn);
        *rtol = atol_obj == NULL || atol_obj == Py_None ? dflt : WHERE(CMP(*atol, NUM(0.0), Py_GT), zero, dflt);
    }
    return arena->failed ? -1 : 0;
}

/* max(atol, rtol * max(S)) per matrix, shaped (..., 1) against S (..., k). Into the arena. */
static PyObject *threshold(CtArena *arena, PyObject *S, PyObject *atol, PyObject *rtol)
{
    int64_t k = CT_TENSOR(S)->sizes[CT_TENSOR(S)->ndim - 1];
    PyObject *smax = k > 0 ? METH(S, "amax", "(iO)", -1, Py_True) : METH(S, "new_zeros", "(())");
    PyObject *rel = MUL(METH(rtol, "unsqueeze", "(i)", -1), smax);
    return FN("maximum", "(OO)", METH(atol, "unsqueeze", "(i)", -1), rel);
}

/* The arguments of matrix_rank / pinv: A a float (..., m, n); tol / rcond, the legacy names, stand
 * for atol (rtol 0) / rtol. */
typedef struct {
    PyObject *A, *atol, *rtol, *out; /* borrowed */
    bool hermitian;
} RankArgs;

static PyObject *float_zero; /* 0.0, made at the first legacy call and kept */

/* S (the absolute eigenvalues when hermitian) and the threshold of RankArgs, into the arena. */
static int rank_parts(CtArena *arena, const RankArgs *ra, bool vectors, PyObject **S, PyObject **tol,
                      PyObject **U, PyObject **Vh)
{
    CtTensorObject *A = CT_TENSOR(ra->A);
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    PyObject *atol, *rtol;
    if (ra->hermitian) {
        PyObject *t = vectors ? FN("_linalg_eigh", "(O)", ra->A) : NULL;
        PyObject *w = vectors ? METH(t, "__getitem__", "(i)", 0) : FN("_linalg_eigvalsh", "(O)", ra->A);
        *S = METH(w, "abs", NULL);
        *U = w; /* hermitian: the eigenvalues, signed */
        *Vh = vectors ? METH(t, "__getitem__", "(i)", 1) : NULL;
    } else if (vectors) {
        PyObject *t = FN("_linalg_svd", "(OO)", ra->A, Py_False);
        *U = METH(t, "__getitem__", "(i)", 0);
        *S = METH(t, "__getitem__", "(i)", 1);
        *Vh = METH(t, "__getitem__", "(i)", 2);
    } else {
        *S = KEEP(svdvals_of(ra->A));
    }
    if (arena->failed || tolerances(arena, *S, ra->atol, ra->rtol, m > n ? m : n, &atol, &rtol) < 0) {
        return -1;
    }
    *tol = threshold(arena, *S, atol, rtol);
    return *tol == NULL ? -1 : 0;
}

/* Parses matrix_rank's / pinv's arguments (legacy: fname(A, tol_or_rcond, hermitian)). 0 or -1. */
static int rank_args(const char *fname, const char *legacy, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames, RankArgs *ra)
{
    const char *names[] = {"A", legacy, "hermitian", "*atol", "*rtol", "*out", NULL};
    PyObject *a[6];
    ra->hermitian = false;
    if (ct_parse_args(fname, args, nargs, kwnames, (const char *const *)names, 1, a) < 0 ||
        ct_linalg_tensor_arg(a[0], fname, "A") == NULL || ct_arg_bool(a[2], &ra->hermitian) < 0) {
        return -1;
    }
    ra->A = a[0];
    ra->atol = a[3];
    ra->rtol = a[4];
    ra->out = a[5];
    if (a[1] != NULL && a[1] != Py_None) {
        if (float_zero == NULL && (float_zero = PyFloat_FromDouble(0.0)) == NULL) {
            return -1;
        }
        bool tol = strcmp(legacy, "tol") == 0; /* tol: atol with rtol 0; rcond: rtol with atol 0 */
        PyObject **given = tol ? &ra->atol : &ra->rtol, **other = tol ? &ra->rtol : &ra->atol;
        *given = a[1];
        if (*other == NULL || *other == Py_None) {
            *other = float_zero;
        }
    }
    return 0;
}

PyDoc_STRVAR(linalg_matrix_rank_doc,
             "_linalg_matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None)\n\n"
             "torch.linalg.matrix_rank: the number of singular values (hermitian: absolute eigenvalues) above "
             "max(atol, rtol * their largest), int64.");
static PyObject *py_linalg_matrix_rank(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    RankArgs ra;
    if (rank_args("linalg_matrix_rank", "tol", args, nargs, kwnames, &ra) < 0) {
        return NULL;
    }
    CtTensorObject *A = CT_TENSOR(ra.A);
    if (A->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError,
                        "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.");
        return NULL;
    }
    if (A->dtype != CT_F32 && A->dtype != CT_F64) {
        PyErr_SetString(PyExc_RuntimeError, "This function doesn't handle types other than float and double");
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *S, *tol, *U = NULL, *Vh = NULL, *r = NULL;
    bool prev = ct_grad_enabled;
    ct_grad_enabled = false; /* an integer result: nothing to record */
    if (rank_parts(arena, &ra, false, &S, &tol, &U, &Vh) == 0) {
        r = TAKE(METH(CMP(S, tol, Py_GT), "sum", "(i)", -1));
    }
    ct_grad_enabled = prev;
    arena_free(arena);
    if (r == NULL || ra.out == NULL || ra.out == Py_None) {
        return r;
    }
    return ct_write_out(CT_TENSOR(r), ra.out, "linalg_matrix_rank", CT_OUT_EXACT, 0, NULL);
}

PyDoc_STRVAR(linalg_pinv_doc,
             "_linalg_pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None)\n\n"
             "torch.linalg.pinv: V diag(1/S) U^T over the singular values above max(atol, rtol * their largest) "
             "(hermitian: from linalg.eigh).");
static PyObject *py_linalg_pinv(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    RankArgs ra;
    if (rank_args("linalg_pinv", "rcond", args, nargs, kwnames, &ra) < 0) {
        return NULL;
    }
    CtTensorObject *A = CT_TENSOR(ra.A);
    if (A->ndim < 2 || !ct_is_floating(A->dtype) || A->dtype == CT_F16 || A->dtype == CT_BF16) {
        char shape[256];
        ct_format_sizes(shape, sizeof shape, A->ndim, A->sizes);
        PyErr_Format(PyExc_RuntimeError,
                     "linalg.pinv(%s{%s}): expected a tensor with 2 or more dimensions of float, double, cfloat or "
                     "cdouble types",
                     ct_scalar_type_name(A->dtype), shape);
        return NULL;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *S, *tol, *U, *Vh, *r = NULL;
    if (rank_parts(arena, &ra, true, &S, &tol, &U, &Vh) == 0) {
        PyObject *inv = WHERE(CMP(S, tol, Py_GT), METH(U && ra.hermitian ? U : S, "reciprocal", NULL), NUM(0.0));
        PyObject *scaled = MUL(ra.hermitian ? Vh : MT(Vh), METH(inv, "unsqueeze", "(i)", -2));
        r = TAKE(MATMUL(scaled, MT(ra.hermitian ? Vh : U)));
    }
    arena_free(arena);
    if (r == NULL || ra.out == NULL || ra.out == Py_None) {
        return r;
    }
    return ct_write_out(CT_TENSOR(r), ra.out, "linalg_pinv", CT_OUT_EXACT, 0, NULL);
}

/* ord of linalg.cond: None / +-2 through svdvals; 'fro', 'nuc', +-1, +-inf (square A) as
 * norm(A) * norm(A^-1), inf for a singular matrix. */
PyDoc_STRVAR(linalg_cond_doc, "_linalg_cond(A, p=None, *, out=None)\n\n"
                              "torch.linalg.cond: the condition number of A in the p-norm (None: 2).");
static PyObject *py_linalg_cond(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "p", "*out", NULL};
    PyObject *a[3];
    CtTensorObject *A;
    if (ct_parse_args("linalg_cond", args, nargs, kwnames, names, 1, a) < 0 ||
        check_svd_input(a[0], "linalg_cond", &A) < 0) {
        return NULL;
    }
    PyObject *p = a[1] == Py_None ? NULL : a[1];
    double v = 2.0;
    char pname[64] = "2";
    if (p != NULL && PyUnicode_Check(p)) {
        const char *s = PyUnicode_AsUTF8(p);
        if (s == NULL) {
            return NULL;
        }
        if (strcmp(s, "fro") != 0 && strcmp(s, "nuc") != 0) {
            PyErr_Format(PyExc_ValueError, "linalg.cond got an invalid norm type: %s", s);
            return NULL;
        }
        snprintf(pname, sizeof pname, "%s", s);
        v = 0.0;
    } else if (p != NULL) {
        if (PyBool_Check(p) || ct_arg_double(p, &v) < 0) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_TypeError, "linalg_cond(): argument 'p' must be Number or str, not bool");
            }
            return NULL;
        }
        if (!(fabs(v) == 1.0 || fabs(v) == 2.0 || isinf(v))) {
            PyObject *repr = PyObject_Str(p);
            if (repr != NULL) {
                PyErr_Format(PyExc_ValueError, "linalg.cond got an invalid norm type: %U", repr);
                Py_DECREF(repr);
            }
            return NULL;
        }
        if (isinf(v)) {
            snprintf(pname, sizeof pname, "%s", v > 0 ? "inf" : "-inf");
        } else {
            snprintf(pname, sizeof pname, "%g", v);
        }
    }
    int nb = A->ndim - 2;
    int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = m < n ? m : n;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *r;
    if (fabs(v) == 2.0) {
        PyObject *S = KEEP(svdvals_of(a[0]));
        if (k == 0) {
            r = METH(S, "sum", "(i)", -1);
        } else {
            PyObject *hi = METH(S, "narrow", "(iLL)", -1, 0LL, 1LL), *lo = METH(S, "narrow", "(iLL)", -1, k - 1, 1LL);
            r = METH(v > 0 ? DIV(hi, lo) : DIV(lo, hi), "squeeze", "(i)", -1);
        }
    } else if (m != n) {
        PyErr_Format(PyExc_RuntimeError,
                     "linalg.cond(ord=%s): A must be batches of square matrices, but they are %lld by %lld matrices",
                     pname, (long long)m, (long long)n);
        r = KEEP(NULL);
    } else {
        /* singular matrices (inv_ex's info: a zero pivot) are inverted as the identity, then given inf */
        PyObject *ex = FN("_linalg_inv_ex", "(O)", METH(a[0], "detach", NULL));
        PyObject *singular = ex ? CMP(KEEP(PySequence_GetItem(ex, 1)), INT(0), Py_GT) : NULL;
        PyObject *mask = METH(METH(singular, "unsqueeze", "(i)", -1), "unsqueeze", "(i)", -1);
        PyObject *eye = METH(METH(a[0], "new_ones", "((L))", (long long)n), "diag_embed", NULL);
        PyObject *safe = WHERE(mask, eye, a[0]);
        PyObject *ordobj = p ? p : NUM(2.0);
        PyObject *na = FN("_linalg_matrix_norm", "(OO)", a[0], ordobj);
        PyObject *ninv = FN("_linalg_matrix_norm", "(OO)", FN("_linalg_inv", "(O)", safe), ordobj);
        r = WHERE(singular, NUM(INFINITY), MUL(na, ninv));
    }
    PyObject *out = TAKE(r);
    arena_free(arena);
    if (out == NULL || a[2] == NULL || a[2] == Py_None) {
        return out;
    }
    return ct_write_out(CT_TENSOR(out), a[2], "linalg_cond", CT_OUT_EXACT, 0, NULL);
}

/* ============================================================================================
 * backward formulas (rows in autograd_formulas.c), written with recording ops
 * ============================================================================================ */

/* Sets gi[e] from v fitted to input e's shape when that input wants a gradient. 0 or -1. */
static int give(CtNodeObject *n, PyObject **gi, int e, PyObject *v)
{
    if (n->edge_nodes[e] == NULL) {
        return 0;
    }
    gi[e] = v ? ct_fit_grad(v, &n->meta[e]) : NULL;
    return gi[e] == NULL ? -1 : 0;
}

/* X with its diagonal (last two dims) set to ones. Into the arena. */
static PyObject *ones_on_diagonal(CtArena *arena, PyObject *X)
{
    PyObject *d = METH(X, "diagonal", "(iii)", 0, -2, -1);
    return ADD(X, METH(SUB(NUM(1.0), d), "diag_embed", NULL));
}

/* eigh: with E[i, j] = L[j] - L[i] (diagonal 1), gA = V (skew(V^T gV) / 2 / E + diag(gL)) V^T,
 * only eigenvalue differences (the eigenvectors' signs cancel). */
int ct_linalg_bw_eigh(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (g[0] == NULL && g[1] == NULL) {
        return 0;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *L = KEEP(ct_node_output_ref(n, 0)), *V = KEEP(ct_node_output_ref(n, 1));
    PyObject *inner;
    if (g[1] != NULL) {
        PyObject *VhgV = MATMUL(MT(V), g[1]);
        PyObject *skew = MUL(NUM(0.5), SUB(VhgV, MT(VhgV)));
        PyObject *E = SUB(METH(L, "unsqueeze", "(i)", -2), METH(L, "unsqueeze", "(i)", -1));
        inner = DIV(skew, ones_on_diagonal(arena, E));
        inner = g[0] ? ADD(inner, METH(g[0], "diag_embed", NULL)) : inner;
    } else {
        inner = METH(g[0], "diag_embed", NULL);
    }
    PyObject *gA = MATMUL(MATMUL(V, inner), MT(V));
    int rc = arena->failed || L == NULL || V == NULL ? -1 : give(n, gi, 0, gA);
    arena_free(arena);
    return rc;
}

/* svd, with U, Vh kept to their first k = min(m, n) columns / rows (full_matrices): PyTorch's
 * formula. With skew(X) = X - X^T and E[i, j] = S_j^2 - S_i^2 (diagonal 1), the core
 * (skew(U^T gU) S_j + S_i skew(Vh gVh^T)) / E + diag(gS); then for m > n the part of gU outside U's
 * span, (I - U U^T) gU / S, and for m < n that of gVh. */
int ct_linalg_bw_svd(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (g[0] == NULL && g[1] == NULL && g[2] == NULL) {
        return 0;
    }
    if (n->args[2] != NULL && n->args[2] != Py_None && PyObject_IsTrue(n->args[2]) == 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "linalg.svd: The derivative of linalg.svd depends on U and Vh, which are not computed when "
                        "compute_uv=False.");
        return -1;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *U = KEEP(ct_node_output_ref(n, 0)), *S = KEEP(ct_node_output_ref(n, 1));
    PyObject *Vh = KEEP(ct_node_output_ref(n, 2));
    if (U == NULL || S == NULL || Vh == NULL) {
        arena_free(arena);
        return -1;
    }
    int64_t m = CT_TENSOR(U)->sizes[CT_TENSOR(U)->ndim - 2], cols = CT_TENSOR(Vh)->sizes[CT_TENSOR(Vh)->ndim - 1];
    long long k = (long long)CT_TENSOR(S)->sizes[CT_TENSOR(S)->ndim - 1];
    U = METH(U, "narrow", "(iLL)", -1, 0LL, k);
    Vh = METH(Vh, "narrow", "(iLL)", -2, 0LL, k);
    PyObject *gU = g[0] ? METH(g[0], "narrow", "(iLL)", -1, 0LL, k) : NULL;
    PyObject *gVh = g[2] ? METH(g[2], "narrow", "(iLL)", -2, 0LL, k) : NULL;
    PyObject *gA;
    PyObject *Srow = METH(S, "unsqueeze", "(i)", -2), *Scol = METH(S, "unsqueeze", "(i)", -1);
    if (gU == NULL && gVh == NULL) {
        gA = MATMUL(MUL(U, METH(g[1], "unsqueeze", "(i)", -2)), Vh);
    } else {
        PyObject *S2 = MUL(S, S);
        PyObject *E = ones_on_diagonal(arena, SUB(METH(S2, "unsqueeze", "(i)", -2), METH(S2, "unsqueeze", "(i)", -1)));
        PyObject *core = NULL;
        if (gU != NULL) {
            PyObject *UhgU = MATMUL(MT(U), gU);
            core = MUL(SUB(UhgU, MT(UhgU)), Srow);
        }
        if (gVh != NULL) {
            PyObject *VhgV = MATMUL(Vh, MT(gVh));
            PyObject *part = MUL(Scol, SUB(VhgV, MT(VhgV)));
            core = core ? ADD(core, part) : part;
        }
        core = DIV(core, E);
        core = g[1] ? ADD(core, METH(g[1], "diag_embed", NULL)) : core;
        if (m > cols && gU != NULL) {
            PyObject *gUSinv = DIV(gU, Srow);
            gA = SUB(ADD(MATMUL(U, core), gUSinv), MATMUL(U, MATMUL(MT(U), gUSinv)));
            gA = MATMUL(gA, Vh);
        } else if (m < cols && gVh != NULL) {
            PyObject *SinvgVh = DIV(gVh, Scol);
            gA = SUB(ADD(MATMUL(core, Vh), SinvgVh), MATMUL(MATMUL(SinvgVh, MT(Vh)), Vh));
            gA = MATMUL(U, gA);
        } else {
            gA = MATMUL(MATMUL(U, core), Vh);
        }
    }
    int rc = arena->failed ? -1 : give(n, gi, 0, gA);
    arena_free(arena);
    return rc;
}

/* ============================================================================================
 * tables
 * ============================================================================================ */

PyMethodDef ct_linalg_eig_tensor_methods[] = {
    {"svd", CT_FASTCALL(tensor_svd), CT_METH_FK, "svd(some=True, compute_uv=True): (U, S, V) of self"},
    {NULL},
};

#define CT_LINALG(name) {"_linalg_" #name, CT_FASTCALL(py_linalg_##name), CT_METH_FK, linalg_##name##_doc}
PyMethodDef ct_linalg_eig_module_methods[] = {
    CT_LINALG(eigh),
    CT_LINALG(eigvalsh),
    CT_LINALG(svd),
    CT_LINALG(svdvals),
    CT_LINALG(matrix_rank),
    CT_LINALG(pinv),
    CT_LINALG(cond),
    {"svd", CT_FASTCALL(py_svd), CT_METH_FK,
     "svd(input, some=True, compute_uv=True, *, out=None): (U, S, V) with input = U diag(S) V^T"},
    {NULL},
};
#undef CT_LINALG

PyType_Slot ct_linalg_eig_tensor_slots[] = {{0, NULL}};
