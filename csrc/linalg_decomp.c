/* linalg_decomp.c: the matrix decompositions that need kernels of their own, on every device
 * through CtBlasKernels' cholesky / tri_solve / qr entries (the per-matrix math in
 * decomp_math.h, shared with cuda/linalg.cu):
 *
 *   linalg.cholesky / cholesky_ex (LinalgCholeskyExBackward0), linalg.solve_triangular,
 *   torch.cholesky_solve / cholesky_inverse, linalg.qr (reduced / complete / r), and the
 *   removed torch.cholesky / torch.qr, which raise PyTorch's RuntimeError.
 *
 * Each primitive has a formula row in autograd_formulas.c; the formulas (at the end) are written
 * with recording ops (solve_triangular among them), so gradients are differentiable again.
 * Arguments are checked with PyTorch's messages, in its order, before anything runs. */
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
 * CPU kernels: decomp_math.h's steps, one matrix after another
 * ============================================================================================ */

#define CT_DECOMP_CPU(NAME, T)                                                                                 \
    static void cholesky_cpu_##NAME(T *A, int32_t *info, int64_t n)                                            \
    {                                                                                                          \
        *info = 0;                                                                                             \
        for (int64_t j = 0; j < n; j++) {                                                                      \
            T d = ct_chol_pivot_##NAME(A, n, j);                                                               \
            if (!(d > 0)) { /* NaN too */                                                                      \
                A[j * n + j] = d;                                                                              \
                *info = (int32_t)(j + 1);                                                                      \
                break;                                                                                         \
            }                                                                                                  \
            A[j * n + j] = sqrt(d);                                                                            \
            for (int64_t i = j + 1; i < n; i++) {                                                              \
                ct_chol_row_##NAME(A, n, j, i);                                                                \
            }                                                                                                  \
        }                                                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                                      \
            for (int64_t c = i + 1; c < n; c++) {                                                              \
                A[i * n + c] = 0;                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    }                                                                                                          \
    static void qr_cpu_##NAME(T *A, T *tau, T *Q, int64_t m, int64_t n, int64_t q)                             \
    {                                                                                                          \
        const int64_t k = m < n ? m : n;                                                                       \
        for (int64_t j = 0; j < k; j++) {                                                                      \
            tau[j] = ct_qr_reflector_##NAME(A, m, n, j);                                                       \
            for (int64_t c = j + 1; c < n; c++) {                                                              \
                ct_qr_apply_##NAME(A, n, tau[j], m, j, A, n, c);                                               \
            }                                                                                                  \
        }                                                                                                      \
        if (Q == NULL) {                                                                                       \
            return;                                                                                            \
        }                                                                                                      \
        for (int64_t i = 0; i < m * q; i++) {                                                                  \
            Q[i] = i / q == i % q ? 1 : 0;                                                                     \
        }                                                                                                      \
        for (int64_t j = k - 1; j >= 0; j--) { /* Q = H_0 (H_1 (... (H_k-1 I))) */                           \
            for (int64_t c = 0; c < q; c++) {                                                                  \
                ct_qr_apply_##NAME(A, n, tau[j], m, j, Q, q, c);                                               \
            }                                                                                                  \
        }                                                                                                      \
    }
CT_LU_TYPES(CT_DECOMP_CPU)
#undef CT_DECOMP_CPU

int ct_cpu_cholesky(CtDevice device, CtDType dtype, void *A, int32_t *info, int64_t n, int64_t batch)
{
    (void)device;
    for (int64_t b = 0; b < batch; b++) {
        if (dtype == CT_F32) {
            cholesky_cpu_F32((float *)A + b * n * n, info + b, n);
        } else {
            cholesky_cpu_F64((double *)A + b * n * n, info + b, n);
        }
    }
    return 0;
}

int ct_cpu_tri_solve(CtDevice device, CtDType dtype, const void *A, void *B, int64_t n, int64_t k, bool upper,
                     bool unit, int64_t batch)
{
    (void)device;
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t c = 0; c < k; c++) {
            if (dtype == CT_F32) {
                ct_tri_solve_column_F32((const float *)A + b * n * n, (float *)B + b * n * k, n, k, c, upper, unit);
            } else {
                ct_tri_solve_column_F64((const double *)A + b * n * n, (double *)B + b * n * k, n, k, c, upper, unit);
            }
        }
    }
    return 0;
}

int ct_cpu_qr(CtDevice device, CtDType dtype, void *A, void *tau, void *Q, int64_t m, int64_t n, int64_t q,
              int64_t batch)
{
    (void)device;
    const int64_t k = m < n ? m : n;
    for (int64_t b = 0; b < batch; b++) {
        if (dtype == CT_F32) {
            qr_cpu_F32((float *)A + b * m * n, (float *)tau + b * k, Q ? (float *)Q + b * m * q : NULL, m, n, q);
        } else {
            qr_cpu_F64((double *)A + b * m * n, (double *)tau + b * k, Q ? (double *)Q + b * m * q : NULL, m, n, q);
        }
    }
    return 0;
}

/* ============================================================================================
 * helpers
 * ============================================================================================ */

/* A tensor argument (borrowed), or PyTorch's TypeError naming it. */
CtTensorObject *ct_linalg_tensor_arg(PyObject *obj, const char *fname, const char *name)
{
    if (obj == NULL || !CtTensor_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Tensor, not %s", fname, name,
                     obj ? ct_type_name(obj) : "NoneType");
        return NULL;
    }
    return CT_TENSOR(obj);
}

/* NotImplementedError '"<kernel>_cpu" not implemented for 'Half'' unless float32/float64. */
int ct_linalg_kernel_dtype(const CtTensorObject *t, const char *kernel)
{
    if (t->dtype == CT_F32 || t->dtype == CT_F64) {
        return 0;
    }
    PyErr_Format(PyExc_NotImplementedError, "\"%s_%s\" not implemented for '%s'", kernel,
                 ct_device_of(t).type == CT_DEV_CPU ? "cpu" : "cuda", ct_scalar_type_name(t->dtype));
    return -1;
}

/* A (..., n, n) for linalg.<fname> with PyTorch's messages in its order: rank, a floating dtype
 * (when floating_message), square, then the kernel's dtypes. 0 or -1. */
static int check_square(const CtTensorObject *A, const char *fname, const char *name, bool floating_message,
                        const char *kernel)
{
    if (A->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "%s: The input tensor %s must have at least 2 dimensions.", fname, name);
        return -1;
    }
    if (floating_message && !ct_is_floating(A->dtype)) {
        PyErr_Format(PyExc_NotImplementedError, "%s: Expected a floating point or complex tensor as input. Got %s",
                     fname, ct_scalar_type_name(A->dtype));
        return -1;
    }
    if (A->sizes[A->ndim - 1] != A->sizes[A->ndim - 2]) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s: %s must be batches of square matrices, but they are %lld by %lld matrices",
                     fname, name, (long long)A->sizes[A->ndim - 2], (long long)A->sizes[A->ndim - 1]);
        return -1;
    }
    return ct_linalg_kernel_dtype(A, kernel);
}

/* RuntimeError unless a and b are on one device. */
static int check_same_device(const CtTensorObject *a, const CtTensorObject *b)
{
    CtDevice da = ct_device_of(a), db = ct_device_of(b);
    if (da.type == db.type && da.index == db.index) {
        return 0;
    }
    PyErr_SetString(PyExc_RuntimeError,
                    "Expected all tensors to be on the same device, but found at least two devices!");
    return -1;
}

/* The product of sizes[0 .. ndim). */
static int64_t count(int ndim, const int64_t *sizes)
{
    int64_t c = 1;
    for (int i = 0; i < ndim; i++) {
        c *= sizes[i];
    }
    return c;
}

/* A dense row-major copy of t broadcast to shape (ndim dims): a new reference. */
static CtTensorObject *dense_copy(CtTensorObject *t, int ndim, const int64_t *shape)
{
    CtTensorObject *r = ct_empty(ndim, shape, t->dtype, ct_device_of(t));
    if (r != NULL && ct_copy_(r, t) < 0) {
        Py_CLEAR(r);
    }
    return r;
}

/* The broadcast of a's and b's batch dims (all but the last two) into *ndim / sizes, with
 * PyTorch's message when they do not broadcast. 0 or -1. */
static int broadcast_batch(const CtTensorObject *a, const CtTensorObject *b, int *ndim, int64_t *sizes)
{
    int na = a->ndim - 2, nb = b->ndim - 2, n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        int ia = i - (n - na), ib = i - (n - nb);
        int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            PyErr_Format(PyExc_RuntimeError,
                         "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                         "dimension %d",
                         (long long)sa, (long long)sb, i);
            return -1;
        }
        sizes[i] = sa == 1 ? sb : sa;
    }
    *ndim = n;
    return 0;
}

int ct_linalg_check_square(const CtTensorObject *A, const char *fname, const char *name, const char *kernel)
{
    return check_square(A, fname, name, true, kernel);
}

int ct_linalg_broadcast_batch(const CtTensorObject *a, const CtTensorObject *b, int *ndim, int64_t *sizes)
{
    return broadcast_batch(a, b, ndim, sizes);
}

/* The first batch element whose info is nonzero, or -1; *value its info. Waits for the device. */
static int first_failure(CtTensorObject *info, int64_t *batch_index, int32_t *value)
{
    CtDevice cpu = {CT_DEV_CPU, -1};
    CtTensorObject *host = ct_to(info, CT_I32, cpu, false);
    if (host == NULL) {
        return -1;
    }
    CtTensorObject *dense = ct_contiguous(host);
    Py_DECREF(host);
    if (dense == NULL) {
        return -1;
    }
    const int32_t *flags = (const int32_t *)ct_data(dense);
    *batch_index = -1;
    for (int64_t b = 0, n = ct_numel(dense); b < n; b++) {
        if (flags[b] != 0) {
            *batch_index = b;
            *value = flags[b];
            break;
        }
    }
    Py_DECREF(dense);
    return 0;
}

/* Raises the LinAlgError for the first non-positive-definite matrix of info (if any). 0 or -1. */
static int check_positive_definite(const CtTensorObject *A, CtTensorObject *info, const char *fname)
{
    int64_t b;
    int32_t order;
    if (first_failure(info, &b, &order) < 0) {
        return -1;
    }
    if (b < 0) {
        return 0;
    }
    char what[200];
    snprintf(what, sizeof what,
             "The factorization could not be completed because the input is not positive-definite (the leading "
             "minor of order %d is not positive-definite).",
             (int)order);
    return ct_linalg_raise_batch(A, b, fname, what);
}


/* ============================================================================================
 * cholesky
 * ============================================================================================ */

/* L (or U = L^T) and info of A (checked). *L and *info new references; 0 or -1. */
static int cholesky_run(CtTensorObject *A, bool upper, CtTensorObject **L, CtTensorObject **info)
{
    CtDevice dev = ct_device_of(A);
    const CtDeviceOps *ops = ct_device_ops(dev);
    int64_t n = A->sizes[A->ndim - 1], batch = count(A->ndim - 2, A->sizes);
    *L = *info = NULL;
    if (ops == NULL) {
        return -1;
    }
    if (ops->blas == NULL || ops->blas->cholesky == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "linalg.cholesky is not implemented on this device");
        return -1;
    }
    if ((*L = dense_copy(A, A->ndim, A->sizes)) == NULL ||
        (*info = ct_zeros(A->ndim - 2, A->sizes, CT_I32, dev)) == NULL) {
        goto error;
    }
    if (n > 0 && batch > 0 &&
        ops->blas->cholesky(dev, A->dtype, ct_data(*L), (int32_t *)ct_data(*info), n, batch) < 0) {
        goto error;
    }
    if (upper) {
        CtArena scratch = {0}, *arena = &scratch;
        PyObject *U = METH(METH((PyObject *)*L, "transpose", "(ii)", -2, -1), "contiguous", NULL);
        Py_SETREF(*L, (CtTensorObject *)TAKE(U));
        arena_free(arena);
        if (*L == NULL) {
            goto error;
        }
    }
    return 0;
error:
    Py_CLEAR(*L);
    Py_CLEAR(*info);
    return -1;
}

PyDoc_STRVAR(linalg_cholesky_ex_doc,
             "_linalg_cholesky_ex(A, *, upper=False, check_errors=False, out=None)\n\n"
             "torch.linalg.cholesky_ex: (L, info) with A = L L^T (upper: U^T U); info the order of the first "
             "leading minor that is not positive-definite, or 0.");
static PyObject *py_linalg_cholesky_ex(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "*upper", "*check_errors", "*out", NULL};
    static PyTypeObject *type = NULL;
    PyObject *a[4];
    CtTensorObject *A, *L, *info;
    bool upper = false, check = false;
    if (ct_parse_args("linalg_cholesky_ex", args, nargs, kwnames, names, 1, a) < 0 ||
        (A = ct_linalg_tensor_arg(a[0], "linalg_cholesky_ex", "A")) == NULL || ct_arg_bool(a[1], &upper) < 0 ||
        ct_arg_bool(a[2], &check) < 0 || check_square(A, "linalg.cholesky_ex", "A", true, "cholesky") < 0 ||
        cholesky_run(A, upper, &L, &info) < 0) {
        return NULL;
    }
    if (check && check_positive_definite(A, info, "linalg.cholesky_ex") < 0) {
        Py_DECREF(L);
        Py_DECREF(info);
        return NULL;
    }
    PyObject *pair = ct_linalg_pair(&type, "torch.return_types.linalg_cholesky_ex", "L", "info", (PyObject *)L,
                                    (PyObject *)info);
    return ct_linalg_write_outs(pair, a[3], "linalg_cholesky_ex", 2);
}

/* _linalg_cholesky_ex(A, upper=upper) through autograd (a new reference to the pair). */
static PyObject *cholesky_ex_call(PyObject *A, bool upper)
{
    PyObject *kw = Py_BuildValue("(s)", "upper");
    PyObject *args[2] = {A, upper ? Py_True : Py_False};
    PyObject *r = kw ? ct_op("_linalg_cholesky_ex", args, 1, kw) : NULL;
    Py_XDECREF(kw);
    return r;
}

PyDoc_STRVAR(linalg_cholesky_doc,
             "_linalg_cholesky(A, *, upper=False, out=None)\n\n"
             "torch.linalg.cholesky: L with A = L L^T (upper: U with A = U^T U); LinAlgError when A is not "
             "positive-definite.");
static PyObject *py_linalg_cholesky(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "*upper", "*out", NULL};
    PyObject *a[3];
    CtTensorObject *A, *out;
    bool upper = false;
    if (ct_parse_args("linalg_cholesky", args, nargs, kwnames, names, 1, a) < 0 ||
        (A = ct_linalg_tensor_arg(a[0], "linalg_cholesky", "A")) == NULL || ct_arg_bool(a[1], &upper) < 0 ||
        ct_arg_out(a[2], "linalg_cholesky", &out) < 0 ||
        check_square(A, "linalg.cholesky", "A", true, "cholesky") < 0) {
        return NULL;
    }
    if (out != NULL && ct_grad_enabled && (A->requires_grad || A->grad_fn != NULL)) {
        PyErr_SetString(PyExc_RuntimeError, "linalg_cholesky_ex(): functions with out=... arguments don't support "
                                            "automatic differentiation, but one of the arguments requires grad.");
        return NULL;
    }
    PyObject *pair = cholesky_ex_call(a[0], upper);
    if (pair == NULL) {
        return NULL;
    }
    PyObject *L = NULL;
    if (check_positive_definite(A, CT_TENSOR(PyTuple_GET_ITEM(pair, 1)), "linalg.cholesky") == 0) {
        L = Py_NewRef(PyTuple_GET_ITEM(pair, 0));
    }
    Py_DECREF(pair);
    if (L == NULL || out == NULL) {
        return L;
    }
    return ct_write_out(CT_TENSOR(L), a[2], "linalg_cholesky", CT_OUT_EXACT, 0, NULL);
}

/* torch.cholesky / torch.qr / Tensor.cholesky / Tensor.qr: removed in PyTorch, with its message. */
static PyObject *py_removed_cholesky(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyErr_SetString(PyExc_RuntimeError,
                    "This function was deprecated since version 1.9 and is now removed. `torch.cholesky` is "
                    "deprecated in favor of `torch.linalg.cholesky`.\n"
                    "L = torch.cholesky(A) should be replaced with:\n"
                    "L = torch.linalg.cholesky(A)\n"
                    "U = torch.cholesky(A, upper=True) should be replaced with:\n"
                    "U = torch.linalg.cholesky(A).mH");
    return NULL;
}

static PyObject *py_removed_qr(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyErr_SetString(PyExc_RuntimeError,
                    "This function was deprecated since version 1.9 and is now removed. `torch.qr` is deprecated in "
                    "favor of `torch.linalg.qr` and the boolean parameter `some` has been replaced with a string "
                    "parameter `mode`.\n\n"
                    "Q, R = torch.qr(A) should be replaced with:\n"
                    "Q, R = torch.linalg.qr(A, mode='reduced')\n\n"
                    "and\n\n"
                    "Q, R = torch.qr(A, some=False) should be replaced with:\n"
                    "Q, R = torch.linalg.qr(A, mode='complete')\n\n"
                    "Since `some` was set to True, use mode='reduced'.");
    return NULL;
}

/* ============================================================================================
 * triangular solves: solve_triangular, cholesky_solve, cholesky_inverse
 * ============================================================================================ */

/* X = A^-1 B for triangular A (..., n, n) and B (..., n, k), batch dims broadcast, both of one
 * dtype and device (checked): a new reference. */
static CtTensorObject *tri_solve(CtTensorObject *A, CtTensorObject *B, bool upper, bool unit)
{
    int64_t shape[CT_MAX_DIMS];
    int nb;
    if (broadcast_batch(B, A, &nb, shape) < 0) { /* PyTorch names B "a" in its message */
        return NULL;
    }
    CtDevice dev = ct_device_of(A);
    const CtDeviceOps *ops = ct_device_ops(dev);
    if (ops == NULL) {
        return NULL;
    }
    if (ops->blas == NULL || ops->blas->tri_solve == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "triangular solves are not implemented on this device");
        return NULL;
    }
    int64_t n = A->sizes[A->ndim - 1], k = B->sizes[B->ndim - 1], batch = count(nb, shape);
    shape[nb] = n;
    shape[nb + 1] = n;
    CtTensorObject *Ad = dense_copy(A, nb + 2, shape);
    shape[nb + 1] = k;
    CtTensorObject *X = Ad ? dense_copy(B, nb + 2, shape) : NULL;
    if (X != NULL && n > 0 && k > 0 && batch > 0 &&
        ops->blas->tri_solve(dev, A->dtype, ct_data(Ad), ct_data(X), n, k, upper, unit, batch) < 0) {
        Py_CLEAR(X);
    }
    Py_XDECREF(Ad);
    return X;
}

/* t's last two dims swapped (a view): a new reference. */
static CtTensorObject *swap_last(CtTensorObject *t)
{
    return (CtTensorObject *)PyObject_CallMethod((PyObject *)t, "transpose", "ii", -2, -1);
}

/* A, and B cast to A's dtype (PyTorch's result dtype), as new references, after checking that A
 * is float32/float64 (kernel's message) and that both are on one device. 0 or -1. */
static int common_dtype(CtTensorObject *A, CtTensorObject *B, const char *kernel, CtTensorObject **Ac,
                        CtTensorObject **Bc)
{
    CtDType dtype = A->dtype;
    *Ac = *Bc = NULL;
    if (ct_linalg_kernel_dtype(A, kernel) < 0 || check_same_device(A, B) < 0 ||
        (*Ac = ct_to(A, dtype, ct_device_of(A), false)) == NULL ||
        (*Bc = ct_to(B, dtype, ct_device_of(B), false)) == NULL) {
        Py_CLEAR(*Ac);
        return -1;
    }
    return 0;
}

/* linalg.solve_triangular(A, B, upper, left, unitriangular): left=False solves X A = B as
 * A^T X^T = B^T. A new reference. */
static PyObject *solve_triangular_impl(CtTensorObject *A, CtTensorObject *B, bool upper, bool left, bool unit)
{
    static const char fname[] = "linalg.solve_triangular";
    if (check_square(A, fname, "A", false, "triangular_solve") < 0) {
        return NULL;
    }
    if (B->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "%s: The input tensor B must have at least 2 dimensions.", fname);
        return NULL;
    }
    int64_t n = A->sizes[A->ndim - 1], rows = B->sizes[B->ndim - (left ? 2 : 1)];
    if (rows != n) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)",
                     fname, left ? "AX = B" : "XA = B", (long long)n, (long long)n,
                     (long long)B->sizes[B->ndim - 2], (long long)B->sizes[B->ndim - 1]);
        return NULL;
    }
    CtTensorObject *Ac = NULL, *Bc = NULL, *At = NULL, *Bt = NULL, *X = NULL, *r = NULL;
    if (common_dtype(A, B, "triangular_solve", &Ac, &Bc) < 0) {
        return NULL;
    }
    if (left) {
        r = tri_solve(Ac, Bc, upper, unit);
    } else if ((At = swap_last(Ac)) != NULL && (Bt = swap_last(Bc)) != NULL &&
               (X = tri_solve(At, Bt, !upper, unit)) != NULL) {
        r = swap_last(X);
    }
    Py_DECREF(Ac);
    Py_DECREF(Bc);
    Py_XDECREF(At);
    Py_XDECREF(Bt);
    Py_XDECREF(X);
    return (PyObject *)r;
}

PyDoc_STRVAR(linalg_solve_triangular_doc,
             "_linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None)\n\n"
             "torch.linalg.solve_triangular: X with A X = B (left=False: X A = B) for triangular A, batch dims "
             "broadcast.");
static PyObject *py_linalg_solve_triangular(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,
                                            PyObject *kwnames)
{
    static const char *const names[] = {"A", "B", "*upper", "*left", "*unitriangular", "*out", NULL};
    PyObject *a[6];
    CtTensorObject *A, *B, *out;
    bool upper = false, left = true, unit = false;
    if (ct_parse_args("linalg_solve_triangular", args, nargs, kwnames, names, 3, a) < 0 ||
        (A = ct_linalg_tensor_arg(a[0], "linalg_solve_triangular", "A")) == NULL ||
        (B = ct_linalg_tensor_arg(a[1], "linalg_solve_triangular", "B")) == NULL || ct_arg_bool(a[2], &upper) < 0 ||
        ct_arg_bool(a[3], &left) < 0 || ct_arg_bool(a[4], &unit) < 0 ||
        ct_arg_out(a[5], "linalg_solve_triangular", &out) < 0) {
        return NULL;
    }
    PyObject *X = solve_triangular_impl(A, B, upper, left, unit);
    if (X == NULL || out == NULL) {
        return X;
    }
    return ct_write_out(CT_TENSOR(X), a[5], "linalg_solve_triangular", CT_OUT_EXACT, 0, NULL);
}

/* X = (L L^T)^-1 B (upper: (U^T U)^-1 B) by two triangular solves; L and B checked. New reference. */
static CtTensorObject *cholesky_solve_run(CtTensorObject *L, CtTensorObject *B, bool upper)
{
    CtTensorObject *Lt = swap_last(L);
    CtTensorObject *Y = Lt ? tri_solve(upper ? Lt : L, B, false, false) : NULL;
    CtTensorObject *X = Y ? tri_solve(upper ? L : Lt, Y, true, false) : NULL;
    Py_XDECREF(Lt);
    Py_XDECREF(Y);
    return X;
}

/* cholesky_solve(B, L, upper): X = A^-1 B from A's Cholesky factor. A new reference. */
static PyObject *cholesky_solve_impl(CtTensorObject *B, CtTensorObject *L, bool upper)
{
    CtTensorObject *Lc = NULL, *Bc = NULL;
    if (B->ndim < 2 || L->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "%s should have at least 2 dimensions, but has %d dimensions instead",
                     B->ndim < 2 ? "b" : "u", B->ndim < 2 ? B->ndim : L->ndim);
        return NULL;
    }
    if (B->dtype != L->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected b and A to have the same dtype, but found b of type %s and A of type %s instead.",
                     ct_scalar_type_name(B->dtype), ct_scalar_type_name(L->dtype));
        return NULL;
    }
    int64_t n = L->sizes[L->ndim - 1];
    if (L->sizes[L->ndim - 2] != n || B->sizes[B->ndim - 2] != n) {
        PyErr_Format(PyExc_RuntimeError,
                     "Incompatible matrix sizes for cholesky_solve: each A matrix is %lld by %lld but each b matrix is "
                     "%lld by %lld",
                     (long long)L->sizes[L->ndim - 2], (long long)n, (long long)B->sizes[B->ndim - 2],
                     (long long)B->sizes[B->ndim - 1]);
        return NULL;
    }
    if (common_dtype(L, B, "cholesky_solve", &Lc, &Bc) < 0) {
        return NULL;
    }
    CtTensorObject *X = cholesky_solve_run(Lc, Bc, upper);
    Py_DECREF(Lc);
    Py_DECREF(Bc);
    return (PyObject *)X;
}

/* cholesky_inverse(L, upper): (L L^T)^-1, LinAlgError for a zero on L's diagonal. A new reference. */
static PyObject *cholesky_inverse_impl(CtTensorObject *L, bool upper)
{
    CtTensorObject *eye = NULL, *X = NULL;
    if (check_square(L, "cholesky_inverse", "A", false, "cholesky_inverse_out") < 0) {
        return NULL;
    }
    int64_t n = L->sizes[L->ndim - 1], b;
    int32_t index;
    /* which diagonal element is zero first: its 1-based index per matrix, as an int32 "info" */
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *is_zero = CMP(METH((PyObject *)L, "diagonal", "(iii)", 0, -2, -1), NUM(0.0), Py_EQ);
    PyObject *first = n > 0 ? METH(METH(is_zero, "to", "(O)", ct_dtype_object(CT_I32)), "argmax", "(i)", -1) : NULL;
    PyObject *info = n > 0 ? MUL(METH(is_zero, "any", "(i)", -1), ADD(first, INT(1))) : NULL;
    if (arena->failed) {
        goto done;
    }
    if (info != NULL && first_failure(CT_TENSOR(info), &b, &index) < 0) {
        goto done;
    }
    if (info != NULL && b >= 0) {
        char what[160];
        snprintf(what, sizeof what,
                 "The diagonal element %d is zero, the inversion could not be completed because the input matrix is "
                 "singular.",
                 (int)index);
        ct_linalg_raise_batch(L, b, "cholesky_inverse", what);
        goto done;
    }
    if ((eye = ct_eye(n, n, L->dtype, ct_device_of(L))) != NULL) {
        X = cholesky_solve_run(L, eye, upper);
    }
done:
    arena_free(arena);
    Py_XDECREF(eye);
    return (PyObject *)X;
}

/* cholesky_solve(input, input2, upper=False, *, out=None) */
static PyObject *function_cholesky_solve(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "input2", "upper", "*out", NULL};
    PyObject *a[4];
    CtTensorObject *B, *L, *out;
    bool upper = false;
    if (ct_parse_args("cholesky_solve", args, nargs, kwnames, names, 2, a) < 0) {
        return NULL;
    }
    if ((B = ct_linalg_tensor_arg(a[0], "cholesky_solve", "input")) == NULL ||
        (L = ct_linalg_tensor_arg(a[1], "cholesky_solve", "input2")) == NULL || ct_arg_bool(a[2], &upper) < 0 ||
        ct_arg_out(a[3], "cholesky_solve", &out) < 0) {
        return NULL;
    }
    PyObject *X = cholesky_solve_impl(B, L, upper);
    return X == NULL || out == NULL ? X : ct_write_out(CT_TENSOR(X), a[3], "cholesky_solve", CT_OUT_EXACT, 0, NULL);
}

/* cholesky_inverse(input, upper=False, *, out=None) */
static PyObject *function_cholesky_inverse(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "upper", "*out", NULL};
    PyObject *a[3];
    CtTensorObject *L, *out;
    bool upper = false;
    if (ct_parse_args("cholesky_inverse", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    if ((L = ct_linalg_tensor_arg(a[0], "cholesky_inverse", "input")) == NULL || ct_arg_bool(a[1], &upper) < 0 ||
        ct_arg_out(a[2], "cholesky_inverse", &out) < 0) {
        return NULL;
    }
    PyObject *X = cholesky_inverse_impl(L, upper);
    return X == NULL || out == NULL ? X : ct_write_out(CT_TENSOR(X), a[2], "cholesky_inverse", CT_OUT_EXACT, 0, NULL);
}

/* The methods: self put before the arguments. */
#define CT_SELF_FIRST(name)                                                                                  \
    static PyObject *tensor_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                                        \
        return ct_function_as_method(#name, function_##name, self, args, nargs, kwnames);                    \
    }
CT_SELF_FIRST(cholesky_solve)
CT_SELF_FIRST(cholesky_inverse)
#undef CT_SELF_FIRST

const CtDeviceOps *ct_linalg_qr_ops(const CtTensorObject *A, const char *what)
{
    if (ct_linalg_kernel_dtype(A, "geqrf") < 0) {
        return NULL;
    }
    const CtDeviceOps *ops = ct_device_ops(ct_device_of(A));
    if (ops != NULL && (ops->blas == NULL || ops->blas->qr == NULL)) {
        PyErr_Format(PyExc_RuntimeError, "%s is not implemented on this device", what);
        return NULL;
    }
    return ops;
}

/* ============================================================================================
 * qr
 * ============================================================================================ */

PyDoc_STRVAR(linalg_qr_doc, "_linalg_qr(A, mode='reduced', *, out=None)\n\n"
                            "torch.linalg.qr: (Q, R) by Householder reflections (LAPACK's geqrf signs); mode "
                            "'reduced', 'complete' or 'r' (Q empty).");
static PyObject *py_linalg_qr(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "mode", "*out", NULL};
    static PyTypeObject *type = NULL;
    PyObject *a[3];
    CtTensorObject *A, *R = NULL, *tau = NULL, *Q = NULL;
    const char *mode = "reduced";
    if (ct_parse_args("linalg_qr", args, nargs, kwnames, names, 1, a) < 0 ||
        (A = ct_linalg_tensor_arg(a[0], "linalg_qr", "A")) == NULL) {
        return NULL;
    }
    if (a[1] != NULL && (mode = PyUnicode_Check(a[1]) ? PyUnicode_AsUTF8(a[1]) : NULL) == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "linalg_qr(): argument 'mode' (position 2) must be str, not %s",
                         ct_type_name(a[1]));
        }
        return NULL;
    }
    if (A->ndim < 2) {
        PyErr_SetString(PyExc_RuntimeError, "linalg.qr: The input tensor A must have at least 2 dimensions.");
        return NULL;
    }
    if (!ct_is_floating(A->dtype)) {
        PyErr_Format(PyExc_NotImplementedError,
                     "linalg.qr: Expected a floating point or complex tensor as input. Got %s",
                     ct_scalar_type_name(A->dtype));
        return NULL;
    }
    bool complete = strcmp(mode, "complete") == 0, r_only = strcmp(mode, "r") == 0;
    if (!complete && !r_only && strcmp(mode, "reduced") != 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "qr received unrecognized mode '%s' but expected one of 'reduced' (default), 'r', or 'complete'",
                     mode);
        return NULL;
    }
    const CtDeviceOps *ops = ct_linalg_qr_ops(A, "linalg.qr");
    if (ops == NULL) {
        return NULL;
    }
    CtDevice dev = ct_device_of(A);
    int nb = A->ndim - 2;
    int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = m < n ? m : n, batch = count(nb, A->sizes);
    int64_t q = complete ? m : k, shape[CT_MAX_DIMS];
    memcpy(shape, A->sizes, sizeof(int64_t) * (size_t)nb);
    shape[nb] = k;
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *result = NULL;
    if ((R = dense_copy(A, A->ndim, A->sizes)) == NULL || (tau = ct_empty(nb + 1, shape, A->dtype, dev)) == NULL) {
        goto done;
    }
    shape[nb] = m;
    shape[nb + 1] = q;
    if (r_only) {
        int64_t zero = 0;
        Q = ct_empty(1, &zero, A->dtype, dev);
    } else {
        Q = ct_empty(nb + 2, shape, A->dtype, dev);
    }
    if (Q == NULL || (batch > 0 && m > 0 &&
                      ops->blas->qr(dev, A->dtype, ct_data(R), ct_data(tau), r_only ? NULL : ct_data(Q), m, n, q,
                                    batch) < 0)) {
        goto done;
    }
    /* R: the upper triangle of the first q rows (m for 'complete', min(m, n) otherwise) */
    PyObject *upper = METH(METH((PyObject *)R, "narrow", "(iiL)", -2, 0, (long long)(complete ? m : k)), "triu", NULL);
    if (upper != NULL) {
        result = ct_linalg_pair(&type, "torch.return_types.linalg_qr", "Q", "R", Py_NewRef(Q), TAKE(upper));
    }
done:
    arena_free(arena);
    Py_XDECREF(R);
    Py_XDECREF(tau);
    Py_XDECREF(Q);
    return ct_linalg_write_outs(result, a[2], "linalg_qr", 2);
}

/* ============================================================================================
 * backward formulas (rows in autograd_formulas.c), written with recording ops
 * ============================================================================================ */

/* linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unit) through autograd,
 * held by the arena. */
static PyObject *solve_tri_op(CtArena *arena, PyObject *A, PyObject *B, bool upper, bool left, bool unit)
{
    if (arena->failed || A == NULL || B == NULL) {
        arena->failed = true;
        return NULL;
    }
    PyObject *kw = KEEP(Py_BuildValue("(sss)", "upper", "left", "unitriangular"));
    PyObject *args[5] = {A, B, upper ? Py_True : Py_False, left ? Py_True : Py_False, unit ? Py_True : Py_False};
    return kw ? KEEP(ct_op("_linalg_solve_triangular", args, 2, kw)) : NULL;
}

PyObject *ct_linalg_solve_tri_op(CtArena *arena, PyObject *A, PyObject *B, bool upper, bool left, bool unit)
{
    return solve_tri_op(arena, A, B, upper, left, unit);
}

#define MT(x) METH((x), "transpose", "(ii)", -2, -1)

/* A truthy saved argument (upper=, left=, ...); absent: dflt. */
static bool flag_arg(CtNodeObject *n, int i, bool dflt)
{
    PyObject *v = n->args[i];
    return v == NULL || v == Py_None ? dflt : PyObject_IsTrue(v) == 1;
}

/* Sets gi[e] from v fitted to input e's shape when that input wants a gradient. 0 or -1. */
static int give(CtNodeObject *n, PyObject **gi, int e, PyObject *v)
{
    if (n->edge_nodes[e] == NULL) {
        return 0;
    }
    gi[e] = v ? ct_fit_grad(v, &n->meta[e]) : NULL;
    return gi[e] == NULL ? -1 : 0;
}

/* cholesky: with phi = tril(L^T gL), its diagonal halved, gA = sym(L^-T phi L^-1). */
int ct_linalg_bw_cholesky(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (g[0] == NULL) {
        return 0;
    }
    CtArena scratch = {0}, *arena = &scratch;
    bool upper = flag_arg(n, 1, false);
    PyObject *out = KEEP(ct_node_output_ref(n, 0));
    PyObject *L = out ? (upper ? MT(out) : out) : NULL, *gL = upper ? MT(g[0]) : g[0];
    PyObject *phi = METH(MATMUL(MT(L), gL), "tril", NULL);
    phi = SUB(phi, MUL(NUM(0.5), METH(METH(phi, "diagonal", "(iii)", 0, -2, -1), "diag_embed", NULL)));
    PyObject *gA = solve_tri_op(arena, L, solve_tri_op(arena, MT(L), phi, true, true, false), false, false, false);
    gA = MUL(NUM(0.5), ADD(gA, MT(gA)));
    int rc = give(n, gi, 0, gA);
    arena_free(arena);
    return rc;
}

/* solve_triangular: gB = solve_triangular(A^T, g, !upper, left); gA = -gB X^T (left) or -X^T gB,
 * kept to A's triangle (without the diagonal when unitriangular) */
int ct_linalg_bw_solve_triangular(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    bool upper = flag_arg(n, 2, false), left = flag_arg(n, 3, true), unit = flag_arg(n, 4, false);
    PyObject *A = (PyObject *)ct_node_tensor(n, 0), *X = KEEP(ct_node_output_ref(n, 0));
    PyObject *gB = A ? solve_tri_op(arena, MT(A), g[0], !upper, left, unit) : NULL;
    PyObject *gA = n->edge_nodes[0] == NULL || X == NULL ? NULL : NEG(left ? MATMUL(gB, MT(X)) : MATMUL(MT(X), gB));
    gA = gA ? METH(gA, upper ? "triu" : "tril", "(i)", unit ? (upper ? 1 : -1) : 0) : NULL;
    int rc = arena->failed ? -1 : 0;
    if (rc == 0) {
        rc = give(n, gi, 0, gA) < 0 || give(n, gi, 1, gB) < 0 ? -1 : 0;
    }
    arena_free(arena);
    return rc;
}

/* cholesky_solve(B, L): gB = cholesky_solve(g, L); with S = gB X^T + X gB^T, gL = -S L (-U S) */
int ct_linalg_bw_cholesky_solve(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    bool upper = flag_arg(n, 2, false);
    PyObject *L = (PyObject *)ct_node_tensor(n, 1), *X = KEEP(ct_node_output_ref(n, 0));
    PyObject *gB = L ? FN("cholesky_solve", "(OOO)", g[0], L, upper ? Py_True : Py_False) : NULL;
    PyObject *S = NULL, *gL = NULL;
    if (n->edge_nodes[1] != NULL && X != NULL) {
        S = MATMUL(gB, MT(X));
        S = ADD(S, MT(S));
        gL = NEG(upper ? MATMUL(L, S) : MATMUL(S, L));
    }
    int rc = arena->failed ? -1 : 0;
    if (rc == 0) {
        rc = give(n, gi, 0, gB) < 0 || give(n, gi, 1, gL) < 0 ? -1 : 0;
    }
    arena_free(arena);
    return rc;
}

/* cholesky_inverse(L): with S = X (g + g^T) X, gL = -S L (upper: -U S) */
int ct_linalg_bw_cholesky_inverse(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    CtArena scratch = {0}, *arena = &scratch;
    bool upper = flag_arg(n, 1, false);
    PyObject *L = (PyObject *)ct_node_tensor(n, 0), *X = KEEP(ct_node_output_ref(n, 0));
    PyObject *S = L && X ? MATMUL(X, MATMUL(ADD(g[0], MT(g[0])), X)) : NULL;
    PyObject *gL = NEG(upper ? MATMUL(L, S) : MATMUL(S, L));
    int rc = give(n, gi, 0, gL);
    arena_free(arena);
    return rc;
}

/* qr, mode 'reduced' (or 'complete' with m <= n). For m >= n, with M = R gR^T - gQ^T Q and
 * copyltu(M) its lower triangle mirrored, gA = (gQ + Q copyltu(M)) R^-T. For m < n, A = [X | Y]
 * and R = [U | V] with X = Q U square: gY = Q gV, and X's gradient is the square case's with
 * gQ + Y gV^T for gQ. */
int ct_linalg_bw_qr(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    PyObject *mode_obj = n->args[1];
    const char *mode = mode_obj != NULL && PyUnicode_Check(mode_obj) ? PyUnicode_AsUTF8(mode_obj) : "reduced";
    if (mode == NULL) {
        return -1;
    }
    if (strcmp(mode, "r") == 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                        "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
        return -1;
    }
    if (g[0] == NULL && g[1] == NULL) {
        return 0;
    }
    CtArena scratch = {0}, *arena = &scratch;
    PyObject *Q = KEEP(ct_node_output_ref(n, 0)), *R = KEEP(ct_node_output_ref(n, 1));
    if (Q == NULL || R == NULL) {
        arena_free(arena);
        return -1;
    }
    int64_t m = CT_TENSOR(Q)->sizes[CT_TENSOR(Q)->ndim - 2], cols = CT_TENSOR(R)->sizes[CT_TENSOR(R)->ndim - 1];
    if (strcmp(mode, "complete") == 0 && m > cols) {
        PyErr_SetString(PyExc_RuntimeError,
                        "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
        arena_free(arena);
        return -1;
    }
    PyObject *gQ = g[0] ? g[0] : KEEP((PyObject *)ct_zeros_like(CT_TENSOR(Q)));
    PyObject *gR = g[1] ? g[1] : KEEP((PyObject *)ct_zeros_like(CT_TENSOR(R)));
    PyObject *gY = NULL, *U = R, *gU = gR;
    if (m < cols) {
        PyObject *A = (PyObject *)ct_node_tensor(n, 0);
        PyObject *Y = A ? METH(A, "narrow", "(iLL)", -1, (long long)m, (long long)(cols - m)) : NULL;
        PyObject *gV = METH(gR, "narrow", "(iLL)", -1, (long long)m, (long long)(cols - m));
        U = METH(R, "narrow", "(iLL)", -1, 0LL, (long long)m);
        gU = METH(gR, "narrow", "(iLL)", -1, 0LL, (long long)m);
        gQ = ADD(gQ, MATMUL(Y, MT(gV)));
        gY = MATMUL(Q, gV);
    }
    PyObject *M = SUB(MATMUL(U, MT(gU)), MATMUL(MT(gQ), Q));
    PyObject *low = METH(M, "tril", "(i)", -1);
    PyObject *sym = ADD(METH(M, "tril", NULL), MT(low));
    /* (gQ + Q sym) U^-T: Z U^T = that, U^T lower */
    PyObject *gX = solve_tri_op(arena, MT(U), ADD(gQ, MATMUL(Q, sym)), false, false, false);
    PyObject *gA = gY ? FN("cat", "((OO)i)", gX, gY, -1) : gX;
    int rc = give(n, gi, 0, gA);
    arena_free(arena);
    return rc;
}

/* ============================================================================================
 * tables
 * ============================================================================================ */

#define CT_M(name, doc) {#name, CT_FASTCALL(tensor_##name), CT_METH_FK, doc}
PyMethodDef ct_linalg_decomp_tensor_methods[] = {
    CT_M(cholesky_solve, "cholesky_solve(input2, upper=False): (L L^T)^-1 self from the Cholesky factor input2"),
    CT_M(cholesky_inverse, "cholesky_inverse(upper=False): (L L^T)^-1 from the Cholesky factor self"),
    {"cholesky", CT_FASTCALL(py_removed_cholesky), CT_METH_FK, "cholesky(): removed from PyTorch (linalg.cholesky)"},
    {"qr", CT_FASTCALL(py_removed_qr), CT_METH_FK, "qr(): removed from PyTorch (linalg.qr)"},
    {NULL},
};
#undef CT_M

#define CT_LINALG(name) {"_linalg_" #name, CT_FASTCALL(py_linalg_##name), CT_METH_FK, linalg_##name##_doc}
PyMethodDef ct_linalg_decomp_module_methods[] = {
    CT_LINALG(cholesky_ex),
    CT_LINALG(cholesky),
    CT_LINALG(solve_triangular),
    CT_LINALG(qr),
    {"cholesky_solve", CT_FASTCALL(function_cholesky_solve), CT_METH_FK,
     "cholesky_solve(input, input2, upper=False, *, out=None)"},
    {"cholesky_inverse", CT_FASTCALL(function_cholesky_inverse), CT_METH_FK,
     "cholesky_inverse(input, upper=False, *, out=None)"},
    {"cholesky", CT_FASTCALL(py_removed_cholesky), CT_METH_FK, "cholesky(input, upper=False): removed from PyTorch"},
    {"qr", CT_FASTCALL(py_removed_qr), CT_METH_FK, "qr(input, some=True): removed from PyTorch"},
    {NULL},
};
#undef CT_LINALG

PyType_Slot ct_linalg_decomp_tensor_slots[] = {{0, NULL}};
