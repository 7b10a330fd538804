/* ops_linalg.c: the linear-algebra op family: matmul/@, mm, bmm, mv, dot, vdot, outer/ger,
 * addmm, addmv, baddbmm, addbmm (and their in-place forms), einsum, plus the hooks that load
 * OpenBLAS at import (_blas_load, _blas_name, _blas_use_builtin).
 *
 * Every op reduces to one call shape: gemm_views(a, b, c) multiplies views a (batch..., M, K)
 * and b (batch..., K, N) into c (batch..., M, N). It passes each matrix to the device's
 * gemm_batched as it lies in memory (row-major, or transposed via the trans flag when the
 * other stride is 1), copies only an operand with neither layout, merges batch dims that
 * step evenly, folds a batch whose right operand is shared into one tall product, and loops
 * over what remains. The CPU gemm_batched (below) runs tiny products in a direct loop spread
 * over threads batch-wise and everything else in the engine of blas_cpu.c.
 *
 * einsum takes diagonals as views, sums every label held by one operand only, then multiplies
 * operands left to right, each pair permuted into one batched product (labels in both and
 * kept: batch; in both and not kept: contracted; in one: rows or columns). Sums are products
 * with a vector of ones, so the family needs no reduction kernel. */
#include "args.h"
#include "blas_cpu.h"
#include "device.h"
#include "dtype.h"
#include "iter.h"
#include "linalg.h"
#include "parallel.h"
#include "registry.h"
#include "tensor.h"
#include "views.h"

#include <string.h>

/* NotImplementedError for bool operands, worded as PyTorch's dispatch: "bmm" not implemented for 'Bool'. */
static int check_not_bool(CtDType dtype, const char *kernel)
{
    if (dtype == CT_BOOL) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for 'Bool'", kernel);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * CPU kernel: tiny products in a direct loop, the rest in ct_cpu_gemm(_batched). */
/* Integer products up to this many multiply-adds take the direct loop; it keeps one row of
 * C (at most CT_TINY_MAX_N elements) in a local array. */
#define CT_TINY_GEMM_WORK 8192
#define CT_TINY_MAX_N 1024

typedef struct {
    bool ta, tb;
    int64_t M, N, K;
    double alpha, beta;
    const char *A, *B;
    char *C;
    int64_t lda, ldb, ldc;
    int64_t stride_a, stride_b, stride_c; /* elements */
} TinyJob;

static int64_t tiny_to_int64(double x)
{
    if (!(x == x)) {
        return 0;
    }
    if (x >= 9223372036854775807.0) {
        return INT64_MAX;
    }
    if (x <= -9223372036854775808.0) {
        return INT64_MIN;
    }
    return (int64_t)x;
}

/* One loop per dtype: W is the type the sum is kept in (float for the 16-bit floats, an
 * unsigned type for integers so that overflow wraps exactly as in the engine). A row of C is
 * accumulated in acc: as axpys over rows of op(B) when those are contiguous (the inner loop
 * vectorises), else as dot products. N <= CT_TINY_MAX_N whenever A and B are read. */
#define CT_DEFINE_TINY(NAME, T, W, ALPHA, BETA)                                                                  \
    static void tiny_##NAME(int64_t begin, int64_t end, void *ctx)                                            \
    {                                                                                                          \
        const TinyJob *j = (const TinyJob *)ctx;                                                               \
        const W alpha = ALPHA(j->alpha), beta = BETA(j->beta);                                                 \
        const bool read_ab = j->alpha != 0 && j->K > 0, read_c = j->beta != 0;                                 \
        const int64_t M = j->M, N = j->N, K = j->K;                                                            \
        const int64_t ai = j->ta ? 1 : j->lda, ak = j->ta ? j->lda : 1; /* op(A)[i][k] */                     \
        const int64_t bk = j->tb ? 1 : j->ldb, bn = j->tb ? j->ldb : 1; /* op(B)[k][n] */                     \
        W acc[CT_TINY_MAX_N];                                                                                  \
        for (int64_t b = begin; b < end; b++) {                                                                \
            const T *A = (const T *)j->A + b * j->stride_a;                                                    \
            const T *B = (const T *)j->B + b * j->stride_b;                                                    \
            T *C = (T *)j->C + b * j->stride_c;                                                                \
            for (int64_t i = 0; i < M; i++) {                                                                  \
                if (read_ab && bn == 1) {                                                                      \
                    for (int64_t n = 0; n < N; n++) {                                                          \
                        acc[n] = 0;                                                                            \
                    }                                                                                          \
                    for (int64_t k = 0; k < K; k++) {                                                          \
                        const W a = (W)CT_LOAD_##NAME(A + i * ai + k * ak);                                    \
                        const T *brow = B + k * bk;                                                            \
                        for (int64_t n = 0; n < N; n++) {                                                      \
                            acc[n] += a * (W)CT_LOAD_##NAME(brow + n);                                         \
                        }                                                                                      \
                    }                                                                                          \
                } else if (read_ab) {                                                                          \
                    for (int64_t n = 0; n < N; n++) {                                                          \
                        W sum = 0;                                                                             \
                        for (int64_t k = 0; k < K; k++) {                                                      \
                            sum += (W)CT_LOAD_##NAME(A + i * ai + k * ak) * (W)CT_LOAD_##NAME(B + k * bk + n * bn); \
                        }                                                                                      \
                        acc[n] = sum;                                                                          \
                    }                                                                                          \
                }                                                                                              \
                T *crow = C + i * j->ldc;                                                                      \
                for (int64_t n = 0; n < N; n++) {                                                              \
                    W v = read_ab ? alpha * acc[n] : (W)0;                                                     \
                    if (read_c) {                                                                              \
                        v += beta * (W)CT_LOAD_##NAME(crow + n);                                               \
                    }                                                                                          \
                    CT_STORE_##NAME(crow + n, v);                                                              \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    }
#define CT_AS_FLOAT(x) ((float)(x))
#define CT_AS_DOUBLE(x) ((double)(x))
#define CT_AS_U32(x) ((uint32_t)tiny_to_int64(x))
#define CT_AS_U64(x) ((uint64_t)tiny_to_int64(x))
CT_DEFINE_TINY(F32, float, float, CT_AS_FLOAT, CT_AS_FLOAT)
CT_DEFINE_TINY(F64, double, double, CT_AS_DOUBLE, CT_AS_DOUBLE)
CT_DEFINE_TINY(F16, ct_half, float, CT_AS_FLOAT, CT_AS_FLOAT)
CT_DEFINE_TINY(BF16, ct_bfloat16, float, CT_AS_FLOAT, CT_AS_FLOAT)
CT_DEFINE_TINY(U8, uint8_t, uint32_t, CT_AS_U32, CT_AS_U32)
CT_DEFINE_TINY(I8, int8_t, uint32_t, CT_AS_U32, CT_AS_U32)
CT_DEFINE_TINY(I16, int16_t, uint32_t, CT_AS_U32, CT_AS_U32)
CT_DEFINE_TINY(I32, int32_t, uint32_t, CT_AS_U32, CT_AS_U32)
CT_DEFINE_TINY(I64, int64_t, uint64_t, CT_AS_U64, CT_AS_U64)

/* bool: C = (alpha && OR_k(A & B)) || (beta && C), as in the engine. */
static void tiny_BOOL(int64_t begin, int64_t end, void *ctx)
{
    const TinyJob *j = (const TinyJob *)ctx;
    const bool alpha = j->alpha != 0, beta = j->beta != 0;
    const int64_t ai = j->ta ? 1 : j->lda, ak = j->ta ? j->lda : 1;
    const int64_t bk = j->tb ? 1 : j->ldb, bn = j->tb ? j->ldb : 1;
    for (int64_t b = begin; b < end; b++) {
        const bool *A = (const bool *)j->A + b * j->stride_a;
        const bool *B = (const bool *)j->B + b * j->stride_b;
        bool *C = (bool *)j->C + b * j->stride_c;
        for (int64_t i = 0; i < j->M; i++) {
            for (int64_t n = 0; n < j->N; n++) {
                bool acc = false;
                for (int64_t k = 0; alpha && !acc && k < j->K; k++) {
                    acc = A[i * ai + k * ak] && B[k * bk + n * bn];
                }
                bool *c = C + i * j->ldc + n;
                *c = (alpha && acc) || (beta && *c);
            }
        }
    }
}

static void (*const tiny_kernels[CT_NUM_DTYPES])(int64_t, int64_t, void *) = {
    [CT_BOOL] = tiny_BOOL, [CT_U8] = tiny_U8,   [CT_I8] = tiny_I8,     [CT_I16] = tiny_I16, [CT_I32] = tiny_I32,
    [CT_I64] = tiny_I64,   [CT_F16] = tiny_F16, [CT_BF16] = tiny_BF16, [CT_F32] = tiny_F32, [CT_F64] = tiny_F64,
};

/* Products up to this many multiply-adds take the direct loop rather than the engine: where
 * each stops paying off, measured here per 8x8..24x24 batch (bench_linalg.py): below ~6^3
 * against an OpenBLAS call, ~12^3 against the built-in float kernel, 4^3 for float16 (its
 * loads convert in the inner loop), 8^3 for bfloat16, 20^3 for integers (the exact engine
 * allocates and blocks per call). */
static double tiny_limit(CtDType dtype)
{
    switch (dtype) {
    case CT_F32:
    case CT_F64:
        return strcmp(ct_blas_name(), "built-in") != 0 ? 256 : 1728;
    case CT_F16:
        return 64;
    case CT_BF16:
        return 512;
    default:
        return CT_TINY_GEMM_WORK;
    }
}

static int cpu_gemm_batched(CtDevice device, CtDType dtype, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                            double alpha, const void *A, int64_t lda, int64_t stride_a, const void *B, int64_t ldb,
                            int64_t stride_b, double beta, void *C, int64_t ldc, int64_t stride_c, int64_t batch)
{
    if (batch <= 0 || M <= 0 || N <= 0) {
        return 0;
    }
    double work = (double)M * (double)N * (double)K;
    if (K == 0 || alpha == 0 || (work <= tiny_limit(dtype) && N <= CT_TINY_MAX_N)) {
        TinyJob job = {ta, tb, M, N, K, alpha, beta, A, B, C, lda, ldb, ldc, stride_a, stride_b, stride_c};
        double per = work + (double)(M * N); /* loop overhead counts too */
        int64_t grain = (int64_t)(32768.0 / per) + 1;
        bool big = per * (double)batch >= 65536.0;
        PyThreadState *ts = big ? PyEval_SaveThread() : NULL;
        ct_parallel_for(batch, grain, tiny_kernels[dtype], &job);
        if (ts != NULL) {
            PyEval_RestoreThread(ts);
        }
        return 0;
    }
    if (batch == 1) {
        return ct_cpu_gemm(dtype, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    }
    return ct_cpu_gemm_batched(dtype, ta, tb, M, N, K, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C, ldc,
                               stride_c, batch);
}

const struct CtBlasKernels ct_cpu_blas_kernels = {
    .gemm_batched = cpu_gemm_batched,
    .lu_factor = ct_cpu_lu_factor,
    .lu_solve = ct_cpu_lu_solve,
    .cholesky = ct_cpu_cholesky,
    .tri_solve = ct_cpu_tri_solve,
    .qr = ct_cpu_qr,
    .eigh = ct_cpu_eigh,
    .svd = ct_cpu_svd,
};

/* ------------------------------------------------------------------------------------------
 * gemm_views: the one place products are laid out for the device. */

/* How a (rows, cols) matrix with element strides (rs, cs) goes to a GEMM without a copy:
 * row-major (trans false, ld = rs) or as the transpose of a row-major matrix (trans true,
 * ld = cs), keeping to BLAS's ld >= max(1, stored columns). false: it must be copied. */
static bool gemm_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *trans, int64_t *ld)
{
    const int64_t min_n = cols > 1 ? cols : 1, min_t = rows > 1 ? rows : 1;
    if ((cols <= 1 || cs == 1) && (rows <= 1 || rs >= min_n)) {
        *trans = false;
        *ld = rows <= 1 ? min_n : rs;
        return true;
    }
    if ((rows <= 1 || rs == 1) && (cols <= 1 || cs >= min_t)) {
        *trans = true;
        *ld = cols <= 1 ? min_t : cs;
        return true;
    }
    return false;
}

static const struct CtBlasKernels *blas_for(CtDevice device)
{
    const CtDeviceOps *ops = ct_device_ops(device);
    if (ops == NULL) {
        return NULL;
    }
    if (ops->blas == NULL || ops->blas->gemm_batched == NULL) {
        char buf[32];
        ct_device_str(device, buf, sizeof buf);
        PyErr_Format(PyExc_RuntimeError, "matrix multiplication is not implemented on %s", buf);
        return NULL;
    }
    return ops->blas;
}

/* c = alpha * a @ b + beta * c over views a (batch..., M, K), b (batch..., K, N) and
 * c (batch..., M, N) of one dtype and device, with equal batch sizes (a shared operand has
 * batch stride 0). c may have any layout and may share memory with a or b (a temporary is
 * used then). beta == 0: c is not read. 0, or -1 with an exception set. */
static int gemm_views(CtTensorObject *a, CtTensorObject *b, CtTensorObject *c, double alpha, double beta)
{
    const int nb = c->ndim - 2;
    const int64_t M = c->sizes[nb], N = c->sizes[nb + 1], K = a->sizes[nb + 1];
    CtTensorObject *a_copy = NULL, *b_copy = NULL, *c_tmp = NULL;
    int rc = -1;
    for (int i = 0; i < nb; i++) {
        if (c->sizes[i] == 0) {
            return 0;
        }
    }
    if (M == 0 || N == 0) {
        return 0;
    }
    const CtDevice device = ct_device_of(c);
    const struct CtBlasKernels *blas = blas_for(device);
    if (blas == NULL) {
        return -1;
    }
    bool ta = false, tb = false, tc = false;
    int64_t lda = 1, ldb = 1, ldc = 1;
    if (!gemm_layout(M, K, a->strides[nb], a->strides[nb + 1], &ta, &lda)) {
        if ((a_copy = ct_contiguous(a)) == NULL) {
            goto done;
        }
        a = a_copy;
        gemm_layout(M, K, a->strides[nb], a->strides[nb + 1], &ta, &lda);
    }
    if (!gemm_layout(K, N, b->strides[nb], b->strides[nb + 1], &tb, &ldb)) {
        if ((b_copy = ct_contiguous(b)) == NULL) {
            goto done;
        }
        b = b_copy;
        gemm_layout(K, N, b->strides[nb], b->strides[nb + 1], &tb, &ldb);
    }
    CtTensorObject *out = c;
    if (c->storage == a->storage || c->storage == b->storage ||
        !gemm_layout(M, N, c->strides[nb], c->strides[nb + 1], &tc, &ldc)) {
        c_tmp = beta != 0 ? ct_to(c, c->dtype, device, true) : ct_empty_like(c, c->dtype);
        if (c_tmp == NULL) {
            goto done;
        }
        out = c_tmp;
        gemm_layout(M, N, out->strides[nb], out->strides[nb + 1], &tc, &ldc);
    }

    /* The product as the device sees it; a transposed C is computed as C^T = B^T A^T. */
    const char *pa = ct_data(a), *pb = ct_data(b);
    char *pc = ct_data(out);
    int64_t m = M, n = N;
    int64_t sa[CT_MAX_DIMS], sb[CT_MAX_DIMS], sc[CT_MAX_DIMS], bs[CT_MAX_DIMS];
    for (int i = 0; i < nb; i++) {
        sa[i] = a->strides[i];
        sb[i] = b->strides[i];
        sc[i] = out->strides[i];
    }
    if (tc) {
        const char *pt = pa;
        pa = pb;
        pb = pt;
        bool t = ta;
        ta = !tb;
        tb = !t;
        int64_t l = lda;
        lda = ldb;
        ldb = l;
        for (int i = 0; i < nb; i++) {
            int64_t s = sa[i];
            sa[i] = sb[i];
            sb[i] = s;
        }
        m = N;
        n = M;
    }

    /* Merge batch dims that step evenly in all three operands (outer to inner). */
    int nd = 0;
    for (int i = 0; i < nb; i++) {
        int64_t size = c->sizes[i];
        if (size == 1) {
            continue;
        }
        if (nd > 0 && sa[nd - 1] == sa[i] * size && sb[nd - 1] == sb[i] * size && sc[nd - 1] == sc[i] * size) {
            bs[nd - 1] *= size;
            sa[nd - 1] = sa[i];
            sb[nd - 1] = sb[i];
            sc[nd - 1] = sc[i];
            continue;
        }
        bs[nd] = size;
        sa[nd] = sa[i];
        sb[nd] = sb[i];
        sc[nd] = sc[i];
        nd++;
    }
    /* A right operand shared by the innermost batch dim, over a left operand and C whose
     * matrices follow one another row after row, makes one tall product. */
    if (nd > 0 && sb[nd - 1] == 0 && !ta) {
        int64_t s_a = sa[nd - 1], s_c = sc[nd - 1];
        bool rows_a = m == 1 ? s_a >= (K > 1 ? K : 1) : s_a == m * lda;
        bool rows_c = m == 1 ? s_c >= (n > 1 ? n : 1) : s_c == m * ldc;
        if (rows_a && rows_c) {
            if (m == 1) {
                lda = s_a;
                ldc = s_c;
            }
            m *= bs[nd - 1];
            nd--;
        }
    }

    const size_t es = ct_dtype_info[c->dtype].itemsize;
    const int64_t inner = nd > 0 ? bs[nd - 1] : 1;
    const int64_t ia = nd > 0 ? sa[nd - 1] : 0, ib = nd > 0 ? sb[nd - 1] : 0, ic = nd > 0 ? sc[nd - 1] : 0;
    int64_t idx[CT_MAX_DIMS] = {0};
    int64_t off_a = 0, off_b = 0, off_c = 0; /* elements, of the current outer index */
    for (;;) {
        if (blas->gemm_batched(device, c->dtype, ta, tb, m, n, K, alpha, pa + off_a * (int64_t)es, lda, ia,
                               pb + off_b * (int64_t)es, ldb, ib, beta, pc + off_c * (int64_t)es, ldc, ic,
                               inner) < 0) {
            goto done;
        }
        int d = nd - 2;
        for (; d >= 0; d--) { /* odometer over the outer batch dims */
            if (++idx[d] < bs[d]) {
                off_a += sa[d];
                off_b += sb[d];
                off_c += sc[d];
                break;
            }
            off_a -= sa[d] * (bs[d] - 1);
            off_b -= sb[d] * (bs[d] - 1);
            off_c -= sc[d] * (bs[d] - 1);
            idx[d] = 0;
        }
        if (d < 0) {
            break;
        }
    }
    if (c_tmp != NULL && ct_copy_(c, c_tmp) < 0) {
        goto done;
    }
    rc = 0;
done:
    Py_XDECREF(a_copy);
    Py_XDECREF(b_copy);
    Py_XDECREF(c_tmp);
    return rc;
}

/* A view of t with the given metadata (same storage and offset). */
static CtTensorObject *restride(CtTensorObject *t, int ndim, const int64_t *sizes, const int64_t *strides)
{
    return ct_view_of(t, ndim, sizes, strides, t->offset);
}

static int same_device(int n, CtTensorObject *const *ts, CtDevice *device)
{
    return ct_check_same_device(n, ts, false, device);
}

/* ------------------------------------------------------------------------------------------
 * mm, bmm, mv, dot, outer */
static int check_mm_args(const char *op, CtTensorObject *a, CtTensorObject *b)
{
    if (a->ndim != 2) {
        PyErr_Format(PyExc_RuntimeError, "%s: self must be a matrix, got %d-D tensor", op, a->ndim);
        return -1;
    }
    if (b->ndim != 2) {
        PyErr_Format(PyExc_RuntimeError, "%s: mat2 must be a matrix, got %d-D tensor", op, b->ndim);
        return -1;
    }
    if (a->sizes[1] != b->sizes[0]) {
        PyErr_Format(PyExc_RuntimeError, "%s: mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                     op, (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0],
                     (long long)b->sizes[1]);
        return -1;
    }
    return 0;
}

CtTensorObject *ct_mm(CtTensorObject *a, CtTensorObject *b)
{
    CtDevice device;
    if (check_mm_args("mm", a, b) < 0) {
        return NULL;
    }
    if (a->dtype != b->dtype) {
        PyErr_Format(PyExc_RuntimeError, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                     ct_cpp_type_name(a->dtype), ct_cpp_type_name(b->dtype));
        return NULL;
    }
    if (check_not_bool(a->dtype, "addmm_impl_cpu_") < 0 || same_device(2, (CtTensorObject *[]){a, b}, &device) < 0) {
        return NULL;
    }
    int64_t sizes[2] = {a->sizes[0], b->sizes[1]};
    CtTensorObject *out = ct_empty(2, sizes, a->dtype, device);
    if (out != NULL && gemm_views(a, b, out, 1.0, 0.0) < 0) {
        Py_CLEAR(out);
    }
    return out;
}

static int check_bmm_args(CtTensorObject *a, CtTensorObject *b)
{
    if (a->ndim != 3) {
        PyErr_SetString(PyExc_RuntimeError, "batch1 must be a 3D tensor");
        return -1;
    }
    if (b->ndim != 3) {
        PyErr_SetString(PyExc_RuntimeError, "batch2 must be a 3D tensor");
        return -1;
    }
    if (b->sizes[0] != a->sizes[0] || b->sizes[1] != a->sizes[2]) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: [%lld, "
                     "%lld].",
                     (long long)a->sizes[0], (long long)a->sizes[2], (long long)b->sizes[0], (long long)b->sizes[1]);
        return -1;
    }
    return 0;
}

static int check_same_scalar_type(CtTensorObject *a, CtTensorObject *b)
{
    if (a->dtype != b->dtype) {
        PyErr_Format(PyExc_RuntimeError, "expected scalar type %s but found %s", ct_scalar_type_name(a->dtype),
                     ct_scalar_type_name(b->dtype));
        return -1;
    }
    return 0;
}

CtTensorObject *ct_bmm(CtTensorObject *a, CtTensorObject *b)
{
    CtDevice device;
    if (check_bmm_args(a, b) < 0 || check_same_scalar_type(a, b) < 0 || check_not_bool(a->dtype, "bmm") < 0 ||
        same_device(2, (CtTensorObject *[]){a, b}, &device) < 0) {
        return NULL;
    }
    int64_t sizes[3] = {a->sizes[0], a->sizes[1], b->sizes[2]};
    CtTensorObject *out = ct_empty(3, sizes, a->dtype, device);
    if (out != NULL && gemm_views(a, b, out, 1.0, 0.0) < 0) {
        Py_CLEAR(out);
    }
    return out;
}

/* mat (M, K) @ vec (K) into out (M), all views; 0 or -1. */
static int gemv_views(CtTensorObject *mat, CtTensorObject *vec, CtTensorObject *out, double alpha, double beta)
{
    CtTensorObject *v2 = restride(vec, 2, (int64_t[]){vec->sizes[0], 1}, (int64_t[]){vec->strides[0], 1});
    CtTensorObject *o2 = v2 ? restride(out, 2, (int64_t[]){out->sizes[0], 1}, (int64_t[]){out->strides[0], 1})
                            : NULL;
    int rc = o2 ? gemm_views(mat, v2, o2, alpha, beta) : -1;
    Py_XDECREF(v2);
    Py_XDECREF(o2);
    return rc;
}

/* addmv's checks; input_ndim/input_size describe the addend (mv: a 1-d of the vec's dtype). */
static int check_mv_args(CtTensorObject *input, CtTensorObject *mat, CtTensorObject *vec, int input_ndim,
                         int64_t input_size, CtDType input_dtype)
{
    if (mat->ndim != 2 || vec->ndim != 1 || input_ndim > 1) {
        PyErr_Format(PyExc_RuntimeError, "vector + matrix @ vector expected, got %d, %d, %d", input_ndim, mat->ndim,
                     vec->ndim);
        return -1;
    }
    if (mat->sizes[1] != vec->sizes[0] || (input_size != mat->sizes[0] && input_size != 1)) {
        PyErr_Format(PyExc_RuntimeError, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                     (long long)input_size, (long long)mat->sizes[0], (long long)mat->sizes[1],
                     (long long)vec->sizes[0]);
        return -1;
    }
    if (input_dtype != mat->dtype || mat->dtype != vec->dtype) {
        PyErr_Format(PyExc_RuntimeError, "addmv input tensors must have the same dtype, but got %s, %s, and %s",
                     ct_scalar_type_name(input_dtype), ct_scalar_type_name(mat->dtype), ct_scalar_type_name(vec->dtype));
        return -1;
    }
    return check_not_bool(mat->dtype, "addmv_impl_cpu");
}

CtTensorObject *ct_mv(CtTensorObject *mat, CtTensorObject *vec)
{
    CtDevice device;
    int64_t m = mat->ndim == 2 ? mat->sizes[0] : 1;
    if (check_mv_args(NULL, mat, vec, 1, m, vec->dtype) < 0 ||
        same_device(2, (CtTensorObject *[]){mat, vec}, &device) < 0) {
        return NULL;
    }
    CtTensorObject *out = ct_empty(1, &m, mat->dtype, device);
    if (out != NULL && gemv_views(mat, vec, out, 1.0, 0.0) < 0) {
        Py_CLEAR(out);
    }
    return out;
}

static CtTensorObject *dot_impl(CtTensorObject *a, CtTensorObject *b, const char *kernel)
{
    CtDevice device;
    if (a->ndim != 1 || b->ndim != 1) {
        PyErr_Format(PyExc_RuntimeError, "1D tensors expected, but got %dD and %dD tensors", a->ndim, b->ndim);
        return NULL;
    }
    if (a->dtype != b->dtype) {
        PyErr_Format(PyExc_RuntimeError, "dot : expected both vectors to have same dtype, but found %s and %s",
                     ct_scalar_type_name(a->dtype), ct_scalar_type_name(b->dtype));
        return NULL;
    }
    if (a->sizes[0] != b->sizes[0]) {
        PyErr_Format(PyExc_RuntimeError,
                     "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same number of "
                     "elements, but got %lld and %lld elements respectively",
                     (long long)a->sizes[0], (long long)b->sizes[0], (long long)a->sizes[0], (long long)b->sizes[0]);
        return NULL;
    }
    if (check_not_bool(a->dtype, kernel) < 0 || same_device(2, (CtTensorObject *[]){a, b}, &device) < 0) {
        return NULL;
    }
    const int64_t k = a->sizes[0];
    CtTensorObject *out = ct_empty(0, NULL, a->dtype, device);
    CtTensorObject *a2 = NULL, *b2 = NULL, *o2 = NULL;
    if (out == NULL || (a2 = restride(a, 2, (int64_t[]){1, k}, (int64_t[]){k, a->strides[0]})) == NULL ||
        (b2 = restride(b, 2, (int64_t[]){k, 1}, (int64_t[]){b->strides[0], 1})) == NULL ||
        (o2 = restride(out, 2, (int64_t[]){1, 1}, (int64_t[]){1, 1})) == NULL || gemm_views(a2, b2, o2, 1.0, 0.0) < 0) {
        Py_CLEAR(out);
    }
    Py_XDECREF(a2);
    Py_XDECREF(b2);
    Py_XDECREF(o2);
    return out;
}

CtTensorObject *ct_dot(CtTensorObject *a, CtTensorObject *b) { return dot_impl(a, b, "dot"); }

CtTensorObject *ct_outer(CtTensorObject *a, CtTensorObject *b)
{
    CtDevice device;
    if (a->ndim != 1 || b->ndim != 1) {
        PyErr_Format(PyExc_RuntimeError, "outer: Expected 1-D argument %s, but got %d-D", a->ndim != 1 ? "self" : "vec2",
                     a->ndim != 1 ? a->ndim : b->ndim);
        return NULL;
    }
    if (same_device(2, (CtTensorObject *[]){a, b}, &device) < 0) {
        return NULL;
    }
    /* outer is a product of broadcast vectors in PyTorch, so the dtypes promote. */
    const CtDType dtype = ct_promote_types(a->dtype, b->dtype);
    CtTensorObject *ac = ct_to(a, dtype, device, false), *bc = ct_to(b, dtype, device, false);
    CtTensorObject *a2 = NULL, *b2 = NULL, *out = NULL;
    if (ac == NULL || bc == NULL ||
        (a2 = restride(ac, 2, (int64_t[]){ac->sizes[0], 1}, (int64_t[]){ac->strides[0], 1})) == NULL ||
        (b2 = restride(bc, 2, (int64_t[]){1, bc->sizes[0]}, (int64_t[]){1, bc->strides[0]})) == NULL) {
        goto done;
    }
    out = ct_empty(2, (int64_t[]){a->sizes[0], b->sizes[0]}, dtype, device);
    if (out != NULL && gemm_views(a2, b2, out, 1.0, 0.0) < 0) {
        Py_CLEAR(out);
    }
done:
    Py_XDECREF(ac);
    Py_XDECREF(bc);
    Py_XDECREF(a2);
    Py_XDECREF(b2);
    return out;
}

/* ------------------------------------------------------------------------------------------
 * matmul */
/* Whether dims [0, ndim-1) of t merge into one without a copy (t->view(-1, t.size(-1))). */
static bool leading_dims_merge(int ndim, const int64_t *sizes, const int64_t *strides)
{
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) {
            return true;
        }
    }
    for (int i = 0; i + 2 < ndim; i++) {
        if (strides[i] != strides[i + 1] * sizes[i + 1]) {
            return false;
        }
    }
    return true;
}

/* The matmul of operands of any rank >= 1 with batch broadcasting: a (..., M, K) with a 1-d a
 * read as (1, K) and a 1-d b as (K, 1); the lifted dims are dropped from the result. */
static CtTensorObject *matmul_batched(CtTensorObject *a, CtTensorObject *b)
{
    const bool a1 = a->ndim == 1, b1 = b->ndim == 1;
    int na = a->ndim - (a1 ? 0 : 2), nbb = b->ndim - (b1 ? 0 : 2); /* batch dims of each */
    const int64_t M = a1 ? 1 : a->sizes[a->ndim - 2], K = a->sizes[a->ndim - 1];
    const int64_t K2 = b1 ? b->sizes[0] : b->sizes[b->ndim - 2], N = b1 ? 1 : b->sizes[b->ndim - 1];
    const int64_t sam = a1 ? 1 : a->strides[a->ndim - 2], sak = a->strides[a->ndim - 1];
    const int64_t sbk = b1 ? b->strides[0] : b->strides[b->ndim - 2], sbn = b1 ? 1 : b->strides[b->ndim - 1];
    if (a1) {
        na = 0;
    }
    if (b1) {
        nbb = 0;
    }
    int64_t batch[CT_MAX_DIMS];
    int nb = ct_broadcast_shapes(na, a->sizes, nbb, b->sizes, batch);
    if (nb < 0) {
        return NULL;
    }
    if (nb + 2 > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "ctorch supports at most %d dimensions", CT_MAX_DIMS);
        return NULL;
    }
    int64_t nbatch = 1;
    for (int i = 0; i < nb; i++) {
        nbatch *= batch[i];
    }
    if (K != K2) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: [%lld, "
                     "%lld].",
                     (long long)nbatch, (long long)K, (long long)nbatch, (long long)K2);
        return NULL;
    }
    CtDevice device;
    if (check_same_scalar_type(a, b) < 0 || check_not_bool(a->dtype, "bmm") < 0 ||
        same_device(2, (CtTensorObject *[]){a, b}, &device) < 0) {
        return NULL;
    }
    /* Broadcast views of both operands: batch dims right-aligned, stride 0 where expanded. */
    int64_t as[CT_MAX_DIMS], ast[CT_MAX_DIMS], bsz[CT_MAX_DIMS], bst[CT_MAX_DIMS], cs[CT_MAX_DIMS];
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - na), ib = i - (nb - nbb);
        as[i] = bsz[i] = cs[i] = batch[i];
        ast[i] = ia >= 0 && a->sizes[ia] == batch[i] ? a->strides[ia] : 0;
        bst[i] = ib >= 0 && b->sizes[ib] == batch[i] ? b->strides[ib] : 0;
    }
    as[nb] = M, as[nb + 1] = K, ast[nb] = sam, ast[nb + 1] = sak;
    bsz[nb] = K, bsz[nb + 1] = N, bst[nb] = sbk, bst[nb + 1] = sbn;
    cs[nb] = M, cs[nb + 1] = N;
    CtTensorObject *av = restride(a, nb + 2, as, ast), *bv = av ? restride(b, nb + 2, bsz, bst) : NULL;
    CtTensorObject *out = bv ? ct_empty(nb + 2, cs, a->dtype, device) : NULL;
    CtTensorObject *result = NULL;
    if (out != NULL && gemm_views(av, bv, out, 1.0, 0.0) == 0) {
        if (a1 || b1) { /* drop the lifted dims: out is contiguous, so keep its strides */
            int64_t rs[CT_MAX_DIMS], rst[CT_MAX_DIMS];
            int nd = 0;
            for (int i = 0; i < nb + 2; i++) {
                if ((i == nb && a1) || (i == nb + 1 && b1)) {
                    continue;
                }
                rs[nd] = out->sizes[i];
                rst[nd] = out->strides[i];
                nd++;
            }
            result = restride(out, nd, rs, rst);
        } else {
            result = (CtTensorObject *)Py_NewRef(out);
        }
    }
    Py_XDECREF(av);
    Py_XDECREF(bv);
    Py_XDECREF(out);
    return result;
}

/* The larger operand t (ndim >= 3) folded to (prod(leading), last) when that needs no copy,
 * multiplied by the 1-d or 2-d other; the result unfolded to t's leading dims (+ N). */
static CtTensorObject *matmul_folded(CtTensorObject *t, int ndim, const int64_t *sizes, const int64_t *strides,
                                     CtTensorObject *other, bool other_is_vec)
{
    int64_t rows = 1;
    for (int i = 0; i < ndim - 1; i++) {
        rows *= sizes[i];
    }
    int64_t fs[2] = {rows, sizes[ndim - 1]}, fst[2] = {ndim >= 2 ? strides[ndim - 2] : 1, strides[ndim - 1]};
    if (rows <= 1) {
        fst[0] = fs[1] > 1 ? fs[1] : 1;
    }
    CtTensorObject *folded = restride(t, 2, fs, fst);
    if (folded == NULL) {
        return NULL;
    }
    CtTensorObject *r = other_is_vec ? ct_mv(folded, other) : ct_mm(folded, other);
    Py_DECREF(folded);
    if (r == NULL) {
        return NULL;
    }
    int64_t us[CT_MAX_DIMS], ust[CT_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < ndim - 1; i++) {
        us[nd++] = sizes[i];
    }
    if (!other_is_vec) {
        us[nd++] = r->sizes[1];
    }
    ct_contiguous_strides(nd, us, ust);
    CtTensorObject *u = restride(r, nd, us, ust);
    Py_DECREF(r);
    return u;
}

CtTensorObject *ct_matmul(CtTensorObject *a, CtTensorObject *b)
{
    const int da = a->ndim, db = b->ndim;
    if (da == 0 || db == 0) {
        PyErr_Format(PyExc_RuntimeError, "both arguments to matmul need to be at least 1D, but they are %dD and %dD",
                     da, db);
        return NULL;
    }
    if (da == 1 && db == 1) {
        return ct_dot(a, b);
    }
    if (da == 2 && db == 1) {
        return ct_mv(a, b);
    }
    if (da == 1 && db == 2) { /* (1, K) @ (K, N), then drop the 1 */
        CtTensorObject *a2 = restride(a, 2, (int64_t[]){1, a->sizes[0]},
                                      (int64_t[]){a->sizes[0] > 1 ? a->sizes[0] : 1, a->strides[0]});
        if (a2 == NULL) {
            return NULL;
        }
        CtTensorObject *r = ct_mm(a2, b);
        Py_DECREF(a2);
        if (r == NULL) {
            return NULL;
        }
        CtTensorObject *v = restride(r, 1, &r->sizes[1], &r->strides[1]);
        Py_DECREF(r);
        return v;
    }
    if (da == 2 && db == 2) {
        return ct_mm(a, b);
    }
    /* A >= 3-d left operand times a vector or matrix whose leading dims merge without a copy
     * is one mm/mv (PyTorch folds the same cases, so its errors name the folded shapes). */
    if (da >= 3 && db <= 2 && leading_dims_merge(da, a->sizes, a->strides)) {
        return matmul_folded(a, da, a->sizes, a->strides, b, db == 1);
    }
    if (db >= 3 && da == 1) { /* v @ T == T^T @ v when T^T folds */
        int64_t ts[CT_MAX_DIMS], tst[CT_MAX_DIMS];
        memcpy(ts, b->sizes, sizeof(int64_t) * db);
        memcpy(tst, b->strides, sizeof(int64_t) * db);
        ts[db - 2] = b->sizes[db - 1], ts[db - 1] = b->sizes[db - 2];
        tst[db - 2] = b->strides[db - 1], tst[db - 1] = b->strides[db - 2];
        if (leading_dims_merge(db, ts, tst)) {
            return matmul_folded(b, db, ts, tst, a, true);
        }
    }
    return matmul_batched(a, b);
}

/* ------------------------------------------------------------------------------------------
 * addmm, addmv, baddbmm, addbmm */
/* PyTorch's message when the addend has more dims than the product. */
static int check_addend_rank(CtTensorObject *input, int nd, const int64_t *target)
{
    if (input->ndim > nd) {
        char a[256], b[256];
        ct_format_sizes(a, sizeof a, input->ndim, input->sizes);
        ct_format_sizes(b, sizeof b, nd, target);
        PyErr_Format(PyExc_RuntimeError,
                     "expand(torch.%sTensor{%s}, size=%s): the number of sizes provided (%d) must be greater or "
                     "equal to the number of dimensions in the tensor (%d)",
                     ct_scalar_type_name(input->dtype), a, b, nd, input->ndim); /* the legacy type: LongTensor */
        return -1;
    }
    return 0;
}

/* A new tensor of shape target holding input broadcast (or nothing read when beta == 0). */
static CtTensorObject *addend_output(CtTensorObject *input, int nd, const int64_t *target, double beta,
                                     CtDevice device)
{
    if (check_addend_rank(input, nd, target) < 0) {
        return NULL;
    }
    PyObject *expanded = ct_expand(input, nd, target); /* PyTorch's expand errors */
    if (expanded == NULL) {
        return NULL;
    }
    CtTensorObject *out = ct_empty(nd, target, input->dtype, device);
    if (out != NULL && beta != 0 && ct_copy_(out, (CtTensorObject *)expanded) < 0) {
        Py_CLEAR(out);
    }
    Py_DECREF(expanded);
    return out;
}

/* self and mat2, then mat1 and mat2: PyTorch's order for addmm/addbmm. */
static int check_addmm_dtypes(CtTensorObject *input, CtTensorObject *m1, CtTensorObject *m2)
{
    if (input->dtype != m2->dtype) {
        PyErr_Format(PyExc_RuntimeError, "self and mat2 must have the same dtype, but got %s and %s",
                     ct_scalar_type_name(input->dtype), ct_scalar_type_name(m2->dtype));
        return -1;
    }
    if (m1->dtype != m2->dtype) {
        PyErr_Format(PyExc_RuntimeError, "mat1 and mat2 must have the same dtype, but got %s and %s",
                     ct_scalar_type_name(m1->dtype), ct_scalar_type_name(m2->dtype));
        return -1;
    }
    return 0;
}

/* addmm into `self` (in place, inplace != NULL) or a new tensor. */
static CtTensorObject *addmm_impl(CtTensorObject *input, CtTensorObject *m1, CtTensorObject *m2, double beta,
                                  double alpha, bool inplace)
{
    CtDevice device;
    if (check_addmm_dtypes(input, m1, m2) < 0 || check_mm_args("addmm", m1, m2) < 0 ||
        same_device(3, (CtTensorObject *[]){input, m1, m2}, &device) < 0) {
        return NULL;
    }
    int64_t target[2] = {m1->sizes[0], m2->sizes[1]};
    CtTensorObject *out;
    if (inplace) {
        if (input->ndim != 2 || input->sizes[0] != target[0] || input->sizes[1] != target[1]) {
            char a[256], b[256];
            ct_format_sizes(a, sizeof a, input->ndim, input->sizes);
            ct_format_sizes(b, sizeof b, 2, target);
            PyErr_Format(PyExc_RuntimeError,
                         "Bad in-place call: input tensor size %s and output tensor size %s should match", a, b);
            return NULL;
        }
        if (ct_check_no_internal_overlap(input) < 0) {
            return NULL;
        }
        out = (CtTensorObject *)Py_NewRef(input);
    } else if ((out = addend_output(input, 2, target, beta, device)) == NULL) {
        return NULL;
    }
    if (check_not_bool(input->dtype, "addmm_impl_cpu_") < 0 || gemm_views(m1, m2, out, alpha, beta) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    if (inplace) {
        ct_bump_version(out);
    }
    return out;
}

CtTensorObject *ct_addmm(CtTensorObject *input, CtTensorObject *mat1, CtTensorObject *mat2, double beta,
                         double alpha)
{
    return addmm_impl(input, mat1, mat2, beta, alpha, false);
}

static CtTensorObject *addmv_impl(CtTensorObject *input, CtTensorObject *mat, CtTensorObject *vec, double beta,
                                  double alpha, bool inplace)
{
    CtDevice device;
    int64_t isize = input->ndim == 0 ? 1 : input->sizes[0];
    if (check_mv_args(input, mat, vec, input->ndim, isize, input->dtype) < 0 ||
        same_device(3, (CtTensorObject *[]){input, mat, vec}, &device) < 0) {
        return NULL;
    }
    int64_t m = mat->sizes[0];
    CtTensorObject *out;
    if (inplace) {
        if (input->ndim != 1 || isize != m) {
            char a[256], b[256];
            ct_format_sizes(a, sizeof a, input->ndim, input->sizes);
            ct_format_sizes(b, sizeof b, 1, &m);
            PyErr_Format(PyExc_RuntimeError,
                         "Bad in-place call: input tensor size %s and output tensor size %s should match", a, b);
            return NULL;
        }
        out = (CtTensorObject *)Py_NewRef(input);
    } else if ((out = addend_output(input, 1, &m, beta, device)) == NULL) {
        return NULL;
    }
    if (gemv_views(mat, vec, out, alpha, beta) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    if (inplace) {
        ct_bump_version(out);
    }
    return out;
}

static CtTensorObject *baddbmm_impl(CtTensorObject *input, CtTensorObject *b1, CtTensorObject *b2, double beta,
                                    double alpha, bool inplace)
{
    CtDevice device;
    if (input->dtype != b1->dtype) {
        PyErr_Format(PyExc_RuntimeError, "Input dtypes must be the same, got: input %s, batch1: %s, batch2: %s",
                     ct_cpp_type_name(input->dtype), ct_cpp_type_name(b1->dtype), ct_cpp_type_name(b2->dtype));
        return NULL;
    }
    if (check_bmm_args(b1, b2) < 0 || check_same_scalar_type(b1, b2) < 0 ||
        same_device(3, (CtTensorObject *[]){input, b1, b2}, &device) < 0) {
        return NULL;
    }
    int64_t target[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
    CtTensorObject *out;
    if (inplace) {
        if (input->ndim != 3 || memcmp(input->sizes, target, sizeof target) != 0) {
            char a[256], b[256];
            ct_format_sizes(a, sizeof a, input->ndim, input->sizes);
            ct_format_sizes(b, sizeof b, 3, target);
            PyErr_Format(PyExc_RuntimeError,
                         "Bad in-place call: input tensor size %s and output tensor size %s should match", a, b);
            return NULL;
        }
        if (ct_check_no_internal_overlap(input) < 0) {
            return NULL;
        }
        out = (CtTensorObject *)Py_NewRef(input);
    } else if ((out = addend_output(input, 3, target, beta, device)) == NULL) {
        return NULL;
    }
    if (check_not_bool(input->dtype, "baddbmm") < 0 || gemm_views(b1, b2, out, alpha, beta) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    if (inplace) {
        ct_bump_version(out);
    }
    return out;
}

CtTensorObject *ct_baddbmm(CtTensorObject *input, CtTensorObject *batch1, CtTensorObject *batch2, double beta,
                           double alpha)
{
    return baddbmm_impl(input, batch1, batch2, beta, alpha, false);
}

/* beta * input + alpha * sum_b batch1[b] @ batch2[b], as one product of (M, B*K) by (B*K, N). */
static CtTensorObject *addbmm_impl(CtTensorObject *input, CtTensorObject *b1, CtTensorObject *b2, double beta,
                                   double alpha, bool inplace)
{
    CtDevice device;
    if (check_addmm_dtypes(input, b1, b2) < 0) {
        return NULL;
    }
    if (b1->ndim != 3 || b2->ndim != 3) {
        PyErr_Format(PyExc_RuntimeError, "%s must be a 3D tensor", b1->ndim != 3 ? "batch1" : "batch2");
        return NULL;
    }
    if (b1->sizes[0] != b2->sizes[0]) {
        PyErr_Format(PyExc_RuntimeError, "batch1 and batch2 must have same number of batches, got %lld and %lld",
                     (long long)b1->sizes[0], (long long)b2->sizes[0]);
        return NULL;
    }
    if (b1->sizes[2] != b2->sizes[1]) {
        PyErr_Format(PyExc_RuntimeError, "Incompatible matrix sizes for bmm (%lldx%lld and %lldx%lld)",
                     (long long)b1->sizes[1], (long long)b1->sizes[2], (long long)b2->sizes[1],
                     (long long)b2->sizes[2]);
        return NULL;
    }
    if (same_device(3, (CtTensorObject *[]){input, b1, b2}, &device) < 0) {
        return NULL;
    }
    const int64_t B = b1->sizes[0], M = b1->sizes[1], K = b1->sizes[2], N = b2->sizes[2];
    int64_t target[2] = {M, N};
    CtTensorObject *out = NULL, *p1 = NULL, *c1 = NULL, *a2 = NULL, *c2 = NULL, *bb = NULL, *result = NULL;
    if (inplace) {
        if (input->ndim != 2 || input->sizes[0] != M || input->sizes[1] != N) {
            char a[256], b[256];
            ct_format_sizes(a, sizeof a, input->ndim, input->sizes);
            ct_format_sizes(b, sizeof b, 2, target);
            PyErr_Format(PyExc_RuntimeError,
                         "Bad in-place call: input tensor size %s and output tensor size %s should match", a, b);
            return NULL;
        }
        if (ct_check_no_internal_overlap(input) < 0) {
            return NULL;
        }
        out = (CtTensorObject *)Py_NewRef(input);
    } else if ((out = addend_output(input, 2, target, beta, device)) == NULL) {
        return NULL;
    }
    if (check_not_bool(input->dtype, "addmm_impl_cpu_") < 0) {
        goto done;
    }
    /* batch1 as (M, B, K) -> (M, B*K): a view when B and K step evenly, else a copy. */
    p1 = restride(b1, 3, (int64_t[]){M, B, K}, (int64_t[]){b1->strides[1], b1->strides[0], b1->strides[2]});
    if (p1 == NULL) {
        goto done;
    }
    if (!(B <= 1 || K <= 1 || b1->strides[0] == b1->strides[2] * K)) {
        if ((c1 = ct_contiguous(p1)) == NULL) {
            goto done;
        }
    }
    CtTensorObject *s1 = c1 ? c1 : p1;
    int64_t ks = K > 1 ? s1->strides[2] : (B > 1 ? s1->strides[1] : 1);
    if ((a2 = restride(s1, 2, (int64_t[]){M, B * K}, (int64_t[]){s1->strides[0], ks})) == NULL) {
        goto done;
    }
    /* batch2 (B, K, N) -> (B*K, N) likewise. */
    CtTensorObject *s2 = b2;
    if (!(B <= 1 || K <= 1 || b2->strides[0] == b2->strides[1] * K)) {
        if ((c2 = ct_contiguous(b2)) == NULL) {
            goto done;
        }
        s2 = c2;
    }
    int64_t rs = K > 1 ? s2->strides[1] : (B > 1 ? s2->strides[0] : 1);
    if ((bb = restride(s2, 2, (int64_t[]){B * K, N}, (int64_t[]){rs, s2->strides[2]})) == NULL ||
        gemm_views(a2, bb, out, alpha, beta) < 0) {
        goto done;
    }
    if (inplace) {
        ct_bump_version(out);
    }
    result = (CtTensorObject *)Py_NewRef(out);
done:
    Py_XDECREF(out);
    Py_XDECREF(p1);
    Py_XDECREF(c1);
    Py_XDECREF(a2);
    Py_XDECREF(c2);
    Py_XDECREF(bb);
    return result;
}

/* ------------------------------------------------------------------------------------------
 * einsum */
#define EIN_LETTERS 52                          /* A-Z are labels 0-25, a-z 26-51 */
#define EIN_MAX_LABELS (EIN_LETTERS + CT_MAX_DIMS) /* then one label per ellipsis dim */

static int ein_label(char ch)
{
    if (ch >= 'A' && ch <= 'Z') {
        return ch - 'A';
    }
    if (ch >= 'a' && ch <= 'z') {
        return 26 + ch - 'a';
    }
    return -1;
}

static char ein_char(int label) { return (char)(label < 26 ? 'A' + label : 'a' + label - 26); }

/* One operand's subscripts as written. */
typedef struct {
    int nsub;   /* letters given (the ellipsis not counted) */
    int ell_at; /* how many letters precede the ellipsis; -1 without one */
    int sub[CT_MAX_DIMS];
} EinSpec;

/* An operand or intermediate result: a view with one dim per distinct label. */
typedef struct {
    CtTensorObject *t; /* owned */
    int labels[CT_MAX_DIMS];
} EinTerm;

/* Merges dims [0, n) into one (size, stride) when they step evenly; size-1 dims are free. */
static bool ein_collapse(int n, const int64_t *sizes, const int64_t *strides, int64_t *size, int64_t *stride)
{
    int64_t prod = 1, expected = 0;
    bool first = true;
    for (int i = 0; i < n; i++) {
        prod *= sizes[i];
    }
    *size = prod;
    *stride = 1;
    if (prod == 0) {
        return true;
    }
    for (int i = n - 1; i >= 0; i--) {
        if (sizes[i] == 1) {
            continue;
        }
        if (first) {
            *stride = strides[i];
            expected = strides[i] * sizes[i];
            first = false;
        } else if (strides[i] != expected) {
            return false;
        } else {
            expected *= sizes[i];
        }
    }
    return true;
}

/* The dims of term listed in `which` (indices), in that order: sizes and strides. */
static void ein_gather(const EinTerm *term, int n, const int *which, int64_t *sizes, int64_t *strides)
{
    for (int i = 0; i < n; i++) {
        sizes[i] = term->t->sizes[which[i]];
        strides[i] = term->t->strides[which[i]];
    }
}

/* A view of term with dims ordered as `order` (groups of ng[0], ng[1], ... dims) reshaped to
 * one dim per group except the first `nkeep` groups' dims, which stay as they are: used to
 * turn (batch..., rows..., cols...) into (batch..., R, C). Copies when a group does not
 * merge. New reference. */
static CtTensorObject *ein_matrix_view(const EinTerm *term, int nbatch, const int *order, int nrows, int ncols)
{
    const int n = nbatch + nrows + ncols;
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    ein_gather(term, n, order, sizes, strides);
    CtTensorObject *perm = restride(term->t, n, sizes, strides);
    if (perm == NULL) {
        return NULL;
    }
    int64_t r, rs, c, cs;
    if (!ein_collapse(nrows, sizes + nbatch, strides + nbatch, &r, &rs) ||
        !ein_collapse(ncols, sizes + nbatch + nrows, strides + nbatch + nrows, &c, &cs)) {
        Py_SETREF(perm, ct_contiguous(perm));
        if (perm == NULL) {
            return NULL;
        }
        memcpy(strides, perm->strides, sizeof(int64_t) * n);
        ein_collapse(nrows, sizes + nbatch, strides + nbatch, &r, &rs);
        ein_collapse(ncols, sizes + nbatch + nrows, strides + nbatch + nrows, &c, &cs);
    }
    sizes[nbatch] = r, strides[nbatch] = rs;
    sizes[nbatch + 1] = c, strides[nbatch + 1] = cs;
    CtTensorObject *v = restride(perm, nbatch + 2, sizes, strides);
    Py_DECREF(perm);
    return v;
}

/* Sums term over the labels in `mask` (a product with a vector of ones). Integer and bool
 * sums are int64, as torch.sum. 0 or -1. */
static int ein_sum(EinTerm *term, const bool *mask)
{
    CtTensorObject *t = term->t, *a2 = NULL, *ones = NULL, *ones2 = NULL, *out = NULL, *o2 = NULL;
    int order[CT_MAX_DIMS], nkeep = 0, nsum = 0, rc = -1;
    int keep_labels[CT_MAX_DIMS];
    int64_t keep_sizes[CT_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) {
        if (!mask[term->labels[d]]) {
            keep_labels[nkeep] = term->labels[d];
            keep_sizes[nkeep] = t->sizes[d];
            order[nkeep++] = d;
        }
    }
    for (int d = 0; d < t->ndim; d++) {
        if (mask[term->labels[d]]) {
            order[nkeep + nsum++] = d;
        }
    }
    if (nsum == 0) {
        return 0;
    }
    const CtDevice device = ct_device_of(t);
    const CtDType dtype = ct_is_floating(t->dtype) ? t->dtype : CT_I64;
    EinTerm conv = {NULL, {0}};
    if (dtype != t->dtype) { /* the copy lands contiguous in the same dim order */
        if ((conv.t = ct_to(t, dtype, device, false)) == NULL) {
            return -1;
        }
        memcpy(conv.labels, term->labels, sizeof(int) * t->ndim);
    }
    if ((a2 = ein_matrix_view(conv.t ? &conv : term, 0, order, nkeep, nsum)) == NULL) {
        goto done;
    }
    const int64_t S = a2->sizes[1];
    CtScalar one = {CT_KIND_INT, {.i = 1}};
    if ((ones = ct_empty(1, &S, dtype, device)) == NULL || ct_fill_(ones, &one) < 0 ||
        (ones2 = restride(ones, 2, (int64_t[]){S, 1}, (int64_t[]){1, 1})) == NULL ||
        (out = ct_empty(nkeep, keep_sizes, dtype, device)) == NULL ||
        (o2 = restride(out, 2, (int64_t[]){a2->sizes[0], 1}, (int64_t[]){1, 1})) == NULL ||
        gemm_views(a2, ones2, o2, 1.0, 0.0) < 0) {
        goto done;
    }
    Py_SETREF(term->t, (CtTensorObject *)Py_NewRef(out));
    memcpy(term->labels, keep_labels, sizeof(int) * nkeep);
    rc = 0;
done:
    Py_XDECREF(conv.t);
    Py_XDECREF(a2);
    Py_XDECREF(ones);
    Py_XDECREF(ones2);
    Py_XDECREF(out);
    Py_XDECREF(o2);
    return rc;
}

/* Drops the size-1 dims of term (they only broadcast). 0 or -1. */
static int ein_drop_ones(EinTerm *term)
{
    CtTensorObject *t = term->t;
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] != 1) {
            sizes[n] = t->sizes[d];
            strides[n] = t->strides[d];
            term->labels[n++] = term->labels[d];
        }
    }
    if (n == t->ndim) {
        return 0;
    }
    CtTensorObject *v = restride(t, n, sizes, strides);
    if (v == NULL) {
        return -1;
    }
    Py_SETREF(term->t, v);
    return 0;
}

static int ein_find(const EinTerm *term, int label)
{
    for (int d = 0; d < term->t->ndim; d++) {
        if (term->labels[d] == label) {
            return d;
        }
    }
    return -1;
}

/* a = a * b summed over the labels held by both and not in keep. Without such labels this is
 * a broadcast product (dtypes promote, as torch.mul); with them a batched matmul (dtypes
 * must match, as torch.bmm). 0 or -1. */
static int ein_pair(EinTerm *a, EinTerm *b, const bool *keep)
{
    bool in_a[EIN_MAX_LABELS] = {false}, in_b[EIN_MAX_LABELS] = {false}, lone[EIN_MAX_LABELS] = {false};
    for (int d = 0; d < a->t->ndim; d++) {
        in_a[a->labels[d]] = true;
    }
    for (int d = 0; d < b->t->ndim; d++) {
        in_b[b->labels[d]] = true;
    }
    /* labels held by one side only and not kept are summed there first */
    bool any = false;
    for (int l = 0; l < EIN_MAX_LABELS; l++) {
        lone[l] = in_a[l] && !in_b[l] && !keep[l];
        any |= lone[l];
    }
    if (any && ein_sum(a, lone) < 0) {
        return -1;
    }
    any = false;
    for (int l = 0; l < EIN_MAX_LABELS; l++) {
        lone[l] = in_b[l] && !in_a[l] && !keep[l];
        any |= lone[l];
    }
    if (any && ein_sum(b, lone) < 0) {
        return -1;
    }
    /* a: (batch..., M..., K...), b: (batch..., K..., N...) */
    int oa[CT_MAX_DIMS], ob[CT_MAX_DIMS], nbt = 0, nm = 0, nk = 0, nn = 0;
    int batch[CT_MAX_DIMS], ms[CT_MAX_DIMS], ks[CT_MAX_DIMS], ns[CT_MAX_DIMS];
    for (int d = 0; d < a->t->ndim; d++) {
        int l = a->labels[d];
        bool both = ein_find(b, l) >= 0;
        if (both && keep[l]) {
            batch[nbt++] = l;
        } else if (both) {
            ks[nk++] = l;
        } else {
            ms[nm++] = l;
        }
    }
    for (int d = 0; d < b->t->ndim; d++) {
        if (ein_find(a, b->labels[d]) < 0) {
            ns[nn++] = b->labels[d];
        }
    }
    if (nbt + 2 > CT_MAX_DIMS || nbt + nm + nn > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "einsum(): ctorch supports at most %d dimensions", CT_MAX_DIMS);
        return -1;
    }
    const CtDevice device = ct_device_of(a->t);
    if (nk == 0) {
        CtDType dt = ct_promote_types(a->t->dtype, b->t->dtype);
        if (a->t->dtype != dt) {
            Py_SETREF(a->t, ct_to(a->t, dt, device, false));
        }
        if (a->t != NULL && b->t->dtype != dt) {
            Py_SETREF(b->t, ct_to(b->t, dt, device, false));
        }
        if (a->t == NULL || b->t == NULL) {
            return -1;
        }
    } else if (check_same_scalar_type(a->t, b->t) < 0 || check_not_bool(a->t->dtype, "bmm") < 0) {
        return -1;
    }
    int n = 0;
    for (int i = 0; i < nbt; i++) {
        oa[n] = ein_find(a, batch[i]);
        ob[n++] = ein_find(b, batch[i]);
    }
    for (int i = 0; i < nm; i++) {
        oa[nbt + i] = ein_find(a, ms[i]);
    }
    for (int i = 0; i < nk; i++) {
        oa[nbt + nm + i] = ein_find(a, ks[i]);
        ob[nbt + i] = ein_find(b, ks[i]);
    }
    for (int i = 0; i < nn; i++) {
        ob[nbt + nk + i] = ein_find(b, ns[i]);
    }
    CtTensorObject *a3 = ein_matrix_view(a, nbt, oa, nm, nk);
    CtTensorObject *b3 = a3 ? ein_matrix_view(b, nbt, ob, nk, nn) : NULL;
    CtTensorObject *out = NULL;
    int rc = -1;
    if (b3 == NULL) {
        goto done;
    }
    int64_t cs[CT_MAX_DIMS];
    for (int i = 0; i < nbt; i++) {
        cs[i] = a3->sizes[i];
    }
    cs[nbt] = a3->sizes[nbt];
    cs[nbt + 1] = b3->sizes[nbt + 1];
    if ((out = ct_empty(nbt + 2, cs, a->t->dtype, device)) == NULL || gemm_views(a3, b3, out, 1.0, 0.0) < 0) {
        goto done;
    }
    /* the result as (batch..., M..., N...) */
    int64_t rs[CT_MAX_DIMS], rst[CT_MAX_DIMS];
    int labels[CT_MAX_DIMS], nr = 0;
    for (int i = 0; i < nbt; i++) {
        labels[nr] = batch[i];
        rs[nr++] = cs[i];
    }
    for (int i = 0; i < nm; i++) {
        labels[nr] = ms[i];
        rs[nr++] = a->t->sizes[ein_find(a, ms[i])];
    }
    for (int i = 0; i < nn; i++) {
        labels[nr] = ns[i];
        rs[nr++] = b->t->sizes[ein_find(b, ns[i])];
    }
    ct_contiguous_strides(nr, rs, rst);
    CtTensorObject *v = restride(out, nr, rs, rst);
    if (v == NULL) {
        goto done;
    }
    Py_SETREF(a->t, v);
    memcpy(a->labels, labels, sizeof(int) * nr);
    rc = 0;
done:
    Py_XDECREF(a3);
    Py_XDECREF(b3);
    Py_XDECREF(out);
    return rc;
}

/* Parses the equation against the operands: fills specs, the output labels and every
 * label's (broadcast) size, and the operands' diagonal views. 0 or -1. */
static int ein_parse(const char *eq, int nops, CtTensorObject *const *ops, EinSpec *spec, EinTerm *terms, int *out,
                     int *nout_p)
{
    const char *arrow = strstr(eq, "->");
    const size_t len = strlen(eq), lhs_end = arrow ? (size_t)(arrow - eq) : len;
    int count[EIN_LETTERS] = {0};
    int op = 0;
    for (int i = 0; i < nops; i++) {
        spec[i].nsub = 0;
        spec[i].ell_at = -1;
    }
    for (size_t i = 0; i < lhs_end; i++) {
        const char ch = eq[i];
        if (ch == ' ') {
            continue;
        }
        if (ch == ',') {
            if (++op >= nops) {
                PyErr_SetString(PyExc_RuntimeError,
                                "einsum(): fewer operands were provided than specified in the equation");
                return -1;
            }
            continue;
        }
        if (ch == '.') {
            if (spec[op].ell_at >= 0) {
                PyErr_Format(PyExc_RuntimeError,
                             "einsum(): found '.' for operand %d for which an ellipsis was already found", op);
                return -1;
            }
            if (i + 2 >= lhs_end || eq[i + 1] != '.' || eq[i + 2] != '.') {
                PyErr_Format(PyExc_RuntimeError, "einsum(): found '.' for operand %d that is not part of any ellipsis",
                             op);
                return -1;
            }
            spec[op].ell_at = spec[op].nsub;
            i += 2;
            continue;
        }
        const int l = ein_label(ch);
        if (l < 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "einsum(): invalid subscript given at index %zu in the equation string, subscripts must be "
                         "in [a-zA-Z]",
                         i);
            return -1;
        }
        if (spec[op].nsub < CT_MAX_DIMS) {
            spec[op].sub[spec[op].nsub] = l;
        }
        spec[op].nsub++;
        count[l]++;
    }
    if (op + 1 < nops) {
        PyErr_SetString(PyExc_RuntimeError, "einsum(): more operands were provided than specified in the equation");
        return -1;
    }
    int total_ell = 0;
    for (int i = 0; i < nops; i++) {
        const int ndim = ops[i]->ndim;
        if (spec[i].ell_at < 0 && spec[i].nsub != ndim) {
            PyErr_Format(PyExc_RuntimeError,
                         "einsum(): the number of subscripts in the equation (%d) does not match the number of "
                         "dimensions (%d) for operand %d and no ellipsis was given",
                         spec[i].nsub, ndim, i);
            return -1;
        }
        if (spec[i].ell_at >= 0 && spec[i].nsub > ndim) {
            PyErr_Format(PyExc_RuntimeError,
                         "einsum(): the number of subscripts in the equation (%d) is more than the number of "
                         "dimensions (%d) for operand %d",
                         spec[i].nsub, ndim, i);
            return -1;
        }
        if (spec[i].ell_at >= 0 && ndim - spec[i].nsub > total_ell) {
            total_ell = ndim - spec[i].nsub;
        }
    }
    /* the output's labels */
    int nout = 0;
    bool in_out[EIN_MAX_LABELS] = {false};
    if (arrow != NULL) {
        bool out_ell = false;
        for (size_t i = lhs_end + 2; i < len; i++) {
            const char ch = eq[i];
            if (ch == ' ') {
                continue;
            }
            if (ch == '.') {
                if (out_ell) {
                    PyErr_SetString(PyExc_RuntimeError,
                                    "einsum(): found '.' for output but an ellipsis (...) was already found");
                    return -1;
                }
                if (i + 2 >= len || eq[i + 1] != '.' || eq[i + 2] != '.') {
                    PyErr_SetString(PyExc_RuntimeError,
                                    "einsum(): found '.' for output that is not part of any ellipsis (...)");
                    return -1;
                }
                out_ell = true;
                for (int e = 0; e < total_ell; e++) {
                    out[nout++] = EIN_LETTERS + e;
                }
                i += 2;
                continue;
            }
            const int l = ein_label(ch);
            if (l < 0) {
                PyErr_Format(PyExc_RuntimeError,
                             "einsum(): invalid subscript given at index %zu in the equation string, subscripts must "
                             "be in [a-zA-Z]",
                             i);
                return -1;
            }
            if (count[l] == 0) {
                PyErr_Format(PyExc_RuntimeError,
                             "einsum(): output subscript %c does not appear in the equation for any input operand", ch);
                return -1;
            }
            if (in_out[l]) {
                PyErr_Format(PyExc_RuntimeError, "einsum(): output subscript %c appears more than once in the output",
                             ch);
                return -1;
            }
            in_out[l] = true;
            out[nout++] = l;
        }
    } else { /* implicit: the ellipsis dims, then the letters used once, in order */
        for (int e = 0; e < total_ell; e++) {
            out[nout++] = EIN_LETTERS + e;
        }
        for (int l = 0; l < EIN_LETTERS; l++) {
            if (count[l] == 1) {
                out[nout++] = l;
            }
        }
    }
    if (nout > CT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "einsum(): ctorch supports at most %d dimensions", CT_MAX_DIMS);
        return -1;
    }
    *nout_p = nout;
    /* sizes (broadcast across operands) and the diagonal views */
    int64_t size[EIN_MAX_LABELS];
    for (int l = 0; l < EIN_MAX_LABELS; l++) {
        size[l] = -1;
    }
    for (int i = 0; i < nops; i++) {
        CtTensorObject *t = ops[i];
        const int ell = spec[i].ell_at >= 0 ? t->ndim - spec[i].nsub : 0;
        int dim_label[CT_MAX_DIMS], nd = 0;
        for (int k = 0; k <= spec[i].nsub; k++) {
            if (k == spec[i].ell_at) {
                for (int e = 0; e < ell; e++) {
                    dim_label[nd++] = EIN_LETTERS + total_ell - ell + e;
                }
            }
            if (k < spec[i].nsub) {
                dim_label[nd++] = spec[i].sub[k];
            }
        }
        int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
        int n = 0;
        for (int d = 0; d < t->ndim; d++) {
            const int l = dim_label[d];
            int j = 0;
            while (j < n && terms[i].labels[j] != l) {
                j++;
            }
            if (j < n) { /* a repeated label: the diagonal */
                if (sizes[j] != t->sizes[d]) {
                    PyErr_Format(PyExc_RuntimeError,
                                 "einsum(): subscript %c is repeated for operand %d but the sizes don't match, %lld != "
                                 "%lld",
                                 ein_char(l), i, (long long)t->sizes[d], (long long)sizes[j]);
                    return -1;
                }
                strides[j] += t->strides[d];
                continue;
            }
            terms[i].labels[n] = l;
            sizes[n] = t->sizes[d];
            strides[n++] = t->strides[d];
        }
        for (int j = 0; j < n; j++) {
            const int l = terms[i].labels[j];
            if (size[l] < 0 || size[l] == 1) {
                size[l] = sizes[j];
            } else if (sizes[j] != 1 && sizes[j] != size[l]) {
                if (l < EIN_LETTERS) {
                    PyErr_Format(PyExc_RuntimeError,
                                 "einsum(): subscript %c has size %lld for operand %d which does not broadcast with "
                                 "previously seen size %lld",
                                 ein_char(l), (long long)sizes[j], i, (long long)size[l]);
                } else {
                    PyErr_Format(PyExc_RuntimeError,
                                 "einsum(): dimension %d covered by ellipsis in operand %dhas size %lld which does "
                                 "not broadcast with previously seen ellipsis with size %lld for the respective "
                                 "dimension",
                                 l - EIN_LETTERS, i, (long long)sizes[j], (long long)size[l]);
                }
                return -1;
            }
        }
        if ((terms[i].t = restride(t, n, sizes, strides)) == NULL) {
            return -1;
        }
    }
    return 0;
}

CtTensorObject *ct_einsum(const char *equation, int nops, CtTensorObject *const *ops)
{
    CtDevice device;
    if (nops <= 0) {
        PyErr_SetString(PyExc_ValueError,
                        "einsum(): must specify the equation string and at least one operand, or at least one "
                        "operand and its subscripts list");
        return NULL;
    }
    if (ct_check_same_device(nops, ops, false, &device) < 0) {
        return NULL;
    }
    EinSpec *spec = PyMem_Calloc((size_t)nops, sizeof(EinSpec));
    EinTerm *terms = PyMem_Calloc((size_t)nops, sizeof(EinTerm));
    CtTensorObject *result = NULL;
    int out[EIN_MAX_LABELS], nout = 0;
    if (spec == NULL || terms == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (ein_parse(equation, nops, ops, spec, terms, out, &nout) < 0) {
        goto done;
    }
    bool is_out[EIN_MAX_LABELS] = {false}, mask[EIN_MAX_LABELS];
    for (int i = 0; i < nout; i++) {
        is_out[out[i]] = true;
    }
    if (nops == 1) { /* every label missing from the output is summed (torch.sum) */
        for (int l = 0; l < EIN_MAX_LABELS; l++) {
            mask[l] = !is_out[l];
        }
        if (ein_sum(&terms[0], mask) < 0) {
            goto done;
        }
    } else {
        /* labels that only one operand holds (size > 1) and the output lacks are summed first */
        int holders[EIN_MAX_LABELS] = {0};
        for (int i = 0; i < nops; i++) {
            for (int d = 0; d < terms[i].t->ndim; d++) {
                holders[terms[i].labels[d]] += terms[i].t->sizes[d] != 1;
            }
        }
        for (int i = 0; i < nops; i++) {
            bool any = false;
            for (int l = 0; l < EIN_MAX_LABELS; l++) {
                mask[l] = false;
            }
            for (int d = 0; d < terms[i].t->ndim; d++) {
                int l = terms[i].labels[d];
                if (terms[i].t->sizes[d] != 1 && holders[l] == 1 && !is_out[l]) {
                    mask[l] = any = true;
                }
            }
            if ((any && ein_sum(&terms[i], mask) < 0) || ein_drop_ones(&terms[i]) < 0) {
                goto done;
            }
        }
        /* left to right, keeping what the output or a later operand needs */
        for (int i = 1; i < nops; i++) {
            for (int l = 0; l < EIN_MAX_LABELS; l++) {
                mask[l] = is_out[l];
            }
            for (int j = i + 1; j < nops; j++) {
                for (int d = 0; d < terms[j].t->ndim; d++) {
                    mask[terms[j].labels[d]] = true;
                }
            }
            if (ein_pair(&terms[0], &terms[i], mask) < 0) {
                goto done;
            }
        }
    }
    /* the output view: labels the result lacks had size 1 everywhere */
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    for (int i = 0; i < nout; i++) {
        int d = ein_find(&terms[0], out[i]);
        sizes[i] = d >= 0 ? terms[0].t->sizes[d] : 1;
        strides[i] = d >= 0 ? terms[0].t->strides[d] : 0;
    }
    result = restride(terms[0].t, nout, sizes, strides);
done:
    for (int i = 0; terms != NULL && i < nops; i++) {
        Py_XDECREF(terms[i].t);
    }
    PyMem_Free(spec);
    PyMem_Free(terms);
    return result;
}

/* ------------------------------------------------------------------------------------------
 * Python bindings */
/* obj as a tensor argument, or TypeError as PyTorch's argument parser words it (borrowed). */
static CtTensorObject *tensor_arg(PyObject *obj, const char *fname, const char *name, int pos)
{
    if (obj == NULL || !CtTensor_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname, name, pos,
                     obj ? Py_TYPE(obj)->tp_name : "NoneType");
        return NULL;
    }
    return CT_TENSOR(obj);
}

/* beta=/alpha=: a Python number (or a one-element tensor); absent keeps dflt. */
static int number_arg(PyObject *obj, const char *fname, const char *name, double *out)
{
    if (obj == NULL) {
        return 0;
    }
    CtScalar s;
    if (PyComplex_Check(obj) || ct_scalar_from_object(obj, &s) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Number, not %s", fname, name,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    *out = ct_scalar_to_double(&s);
    return 0;
}

typedef CtTensorObject *(*BinaryFn)(CtTensorObject *, CtTensorObject *);

static PyObject *binary_function(const char *fname, const char *n0, const char *n1, BinaryFn fn,
                                 PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    const char *const names[] = {n0, n1, "*out", NULL};
    PyObject *a[3];
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0) {
        return NULL;
    }
    CtTensorObject *x = tensor_arg(a[0], fname, n0, 1), *y = x ? tensor_arg(a[1], fname, n1, 2) : NULL;
    if (y == NULL) {
        return NULL;
    }
    CtTensorObject *inputs[2] = {x, y};
    return ct_write_out(fn(x, y), a[2], fname, CT_OUT_EXACT, 2, inputs);
}

static PyObject *binary_method(const char *fname, const char *n1, BinaryFn fn, PyObject *self, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames)
{
    const char *const names[] = {n1, NULL};
    PyObject *a[1];
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    CtTensorObject *y = tensor_arg(a[0], fname, n1, 1);
    return y ? (PyObject *)fn(CT_TENSOR(self), y) : NULL;
}

static CtTensorObject *ct_vdot(CtTensorObject *a, CtTensorObject *b) { return dot_impl(a, b, "vdot"); }

#define CT_BINARY_OP(NAME, N0, N1, FN)                                                                            \
    static PyObject *fn_##NAME(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)     \
    {                                                                                                             \
        return binary_function(#NAME, N0, N1, FN, args, nargs, kwnames);                                         \
    }                                                                                                             \
    static PyObject *meth_##NAME(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)     \
    {                                                                                                             \
        return binary_method(#NAME, N1, FN, self, args, nargs, kwnames);                                         \
    }
CT_BINARY_OP(matmul, "input", "other", ct_matmul)
CT_BINARY_OP(mm, "input", "mat2", ct_mm)
CT_BINARY_OP(bmm, "input", "mat2", ct_bmm)
CT_BINARY_OP(mv, "input", "vec", ct_mv)
CT_BINARY_OP(dot, "input", "tensor", ct_dot)
CT_BINARY_OP(vdot, "input", "other", ct_vdot)
CT_BINARY_OP(outer, "input", "vec2", ct_outer)
CT_BINARY_OP(ger, "input", "vec2", ct_outer)

typedef CtTensorObject *(*AddFn)(CtTensorObject *, CtTensorObject *, CtTensorObject *, double, double, bool);

/* addmm-like ops: f(input, x, y, *, beta=1, alpha=1); self is the input for methods. */
static PyObject *add_op(const char *fname, const char *n1, const char *n2, AddFn fn, PyObject *self,
                        PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, bool inplace)
{
    const char *const fnames[] = {"input", n1, n2, "*beta", "*alpha", NULL};
    const char *const mnames[] = {n1, n2, "*beta", "*alpha", NULL};
    PyObject *a[5];
    const int off = self == NULL ? 1 : 0;
    if (ct_parse_args(fname, args, nargs, kwnames, self == NULL ? fnames : mnames, 2 + off, a) < 0) {
        return NULL;
    }
    double beta = 1.0, alpha = 1.0;
    CtTensorObject *input = self ? CT_TENSOR(self) : tensor_arg(a[0], fname, "input", 1);
    CtTensorObject *x = input ? tensor_arg(a[off], fname, n1, 1 + off) : NULL;
    CtTensorObject *y = x ? tensor_arg(a[off + 1], fname, n2, 2 + off) : NULL;
    if (y == NULL || number_arg(a[off + 2], fname, "beta", &beta) < 0 ||
        number_arg(a[off + 3], fname, "alpha", &alpha) < 0) {
        return NULL;
    }
    return (PyObject *)fn(input, x, y, beta, alpha, inplace);
}

#define CT_ADD_OP(NAME, N1, N2, FN)                                                                               \
    static PyObject *fn_##NAME(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)     \
    {                                                                                                             \
        return add_op(#NAME, N1, N2, FN, NULL, args, nargs, kwnames, false);                                     \
    }                                                                                                             \
    static PyObject *meth_##NAME(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)     \
    {                                                                                                             \
        return add_op(#NAME, N1, N2, FN, self, args, nargs, kwnames, false);                                     \
    }                                                                                                             \
    static PyObject *meth_##NAME##_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)  \
    {                                                                                                             \
        return add_op(#NAME "_", N1, N2, FN, self, args, nargs, kwnames, true);                                  \
    }
CT_ADD_OP(addmm, "mat1", "mat2", addmm_impl)
CT_ADD_OP(addmv, "mat", "vec", addmv_impl)
CT_ADD_OP(baddbmm, "batch1", "batch2", baddbmm_impl)
CT_ADD_OP(addbmm, "batch1", "batch2", addbmm_impl)

/* Appends the subscripts of a sublist ([0, 1, Ellipsis]) to buf. 0 or -1. */
static int sublist_to_subscripts(PyObject *list, char *buf, size_t cap, size_t *len)
{
    PyObject *seq = PySequence_Fast(list, "einsum(): subscripts must be given as a list of ints");
    if (seq == NULL) {
        return -1;
    }
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (item == Py_Ellipsis) {
            if (*len + 3 >= cap) {
                goto too_long;
            }
            memcpy(buf + *len, "...", 3);
            *len += 3;
            continue;
        }
        long v = PyLong_Check(item) ? PyLong_AsLong(item) : -1;
        if (!PyLong_Check(item)) {
            PyErr_Format(PyExc_TypeError, "einsum(): subscripts must be ints or Ellipsis, not %s",
                         Py_TYPE(item)->tp_name);
            rc = -1;
        } else if (v < 0 || v >= EIN_LETTERS) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "einsum(): subscript in subscript list is not within the valid range [0, 52)");
            rc = -1;
        } else if (*len + 1 >= cap) {
            goto too_long;
        } else {
            buf[(*len)++] = ein_char((int)v);
        }
    }
    Py_DECREF(seq);
    return rc;
too_long:
    Py_DECREF(seq);
    PyErr_SetString(PyExc_ValueError, "einsum(): too many subscripts");
    return -1;
}

PyDoc_STRVAR(einsum_doc, "einsum(equation, *operands) -> Tensor\n\n"
                         "Sums the product of the operands over the indices of the Einstein-summation equation;\n"
                         "also einsum(op1, sublist1, op2, sublist2, ..., [sublist_out]).");

static PyObject *fn_einsum(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_Format(PyExc_TypeError, "einsum() got an unexpected keyword argument '%U'", PyTuple_GET_ITEM(kwnames, 0));
        return NULL;
    }
    PyObject *ops_seq = NULL;
    PyObject *const *ops = NULL;
    Py_ssize_t nops = 0;
    char sub_eq[1024];
    const char *eq = NULL;
    PyObject *sub_ops = NULL, *result = NULL;
    if (nargs == 0) {
        nops = 0;
    } else if (PyUnicode_Check(args[0])) {
        if ((eq = PyUnicode_AsUTF8(args[0])) == NULL) {
            return NULL;
        }
        if (nargs == 2 && (PyList_Check(args[1]) || PyTuple_Check(args[1]))) {
            if ((ops_seq = PySequence_Fast(args[1], "operands")) == NULL) {
                return NULL;
            }
            ops = PySequence_Fast_ITEMS(ops_seq);
            nops = PySequence_Fast_GET_SIZE(ops_seq);
        } else {
            ops = args + 1;
            nops = nargs - 1;
        }
    } else if (CtTensor_Check(args[0])) { /* einsum(op1, sublist1, op2, sublist2, ..., [out]) */
        size_t len = 0;
        if ((sub_ops = PyList_New(0)) == NULL) {
            return NULL;
        }
        Py_ssize_t i = 0;
        for (; i + 1 < nargs; i += 2) {
            if (PyList_Append(sub_ops, args[i]) < 0 ||
                (i > 0 && (len + 1 >= sizeof sub_eq || (sub_eq[len++] = ',', false))) ||
                sublist_to_subscripts(args[i + 1], sub_eq, sizeof sub_eq, &len) < 0) {
                goto done;
            }
        }
        if (i < nargs) { /* the output sublist */
            memcpy(sub_eq + len, "->", 2);
            len += 2;
            if (sublist_to_subscripts(args[i], sub_eq, sizeof sub_eq, &len) < 0) {
                goto done;
            }
        }
        sub_eq[len] = '\0';
        eq = sub_eq;
        ops = PySequence_Fast_ITEMS(sub_ops);
        nops = PyList_GET_SIZE(sub_ops);
    } else {
        PyErr_Format(PyExc_TypeError, "einsum(): argument 'equation' (position 1) must be str, not %s",
                     Py_TYPE(args[0])->tp_name);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nops; i++) {
        if (!CtTensor_Check(ops[i])) {
            PyErr_Format(PyExc_TypeError, "expected Tensor as element %zd in argument 1, but got %s", i,
                         Py_TYPE(ops[i])->tp_name);
            goto done;
        }
    }
    if (nops > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "einsum(): too many operands");
        goto done;
    }
    result = (PyObject *)ct_einsum(eq ? eq : "", (int)nops, (CtTensorObject *const *)ops);
done:
    Py_XDECREF(ops_seq);
    Py_XDECREF(sub_ops);
    return result;
}

/* a @ b. PyTorch defines no __imatmul__: `a @= b` rebinds a to a new tensor, and Python does
 * the same here by falling back to this slot. */
static PyObject *tensor_matmul_slot(PyObject *a, PyObject *b)
{
    if (!CtTensor_Check(a) || !CtTensor_Check(b)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return (PyObject *)ct_matmul(CT_TENSOR(a), CT_TENSOR(b));
}

/* --- BLAS selection (python/ctorch/_blas.py calls these at import) ---------------------- */
/* Products above this many multiply-adds go to the built-in kernel even with OpenBLAS loaded:
 * 64^3 is where OpenBLAS starts its own threads (65536 * GEMM_MULTITHREAD_THRESHOLD), and on
 * this shared 2-core machine those threads, spin-waiting for each other, made products of
 * 96^3..512^3 10-500x slower whenever other processes held the cores (median 0.1-3 GFLOP/s
 * against the built-in kernel's 10-47), while below it OpenBLAS beats the built-in kernel
 * (e.g. 70 vs 50 GFLOP/s at 64^3 float32). Idle, the two are within ~5% on large products
 * (1024^3 float32: 188 vs 180 GFLOP/s). See benchmarks/bench_linalg.py. */
#define CT_BLAS_MAX_WORK 262144.0

static bool builtin_forced = false;

static PyObject *fn_blas_load(PyObject *module, PyObject *arg)
{
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(arg, &bytes)) {
        return NULL;
    }
    int rc = ct_blas_load(PyBytes_AS_STRING(bytes));
    Py_DECREF(bytes);
    if (rc < 0) {
        return NULL;
    }
    ct_blas_set_max_work(CT_BLAS_MAX_WORK);
    return PyUnicode_FromString(ct_blas_name());
}

static PyObject *fn_blas_max_work(PyObject *module, PyObject *arg)
{
    double v = PyFloat_AsDouble(arg);
    if (v == -1.0 && PyErr_Occurred()) {
        return NULL;
    }
    return PyFloat_FromDouble(ct_blas_set_max_work(v));
}

static PyObject *fn_blas_name(PyObject *module, PyObject *unused) { return PyUnicode_FromString(ct_blas_name()); }

static PyObject *fn_blas_use_builtin(PyObject *module, PyObject *arg)
{
    int on = PyObject_IsTrue(arg);
    if (on < 0) {
        return NULL;
    }
    bool previous = builtin_forced;
    builtin_forced = on != 0;
    ct_blas_use_builtin(on);
    return PyBool_FromLong(previous);
}

/* ------------------------------------------------------------------------------------------
 * tables */
#define CT_LINALG_METHOD(NAME, DOC) {#NAME, CT_FASTCALL(meth_##NAME), CT_METH_FK, DOC}
PyMethodDef ct_linalg_tensor_methods[] = {
    CT_LINALG_METHOD(matmul, "matmul(other) -> Tensor: matrix product with batch broadcasting"),
    CT_LINALG_METHOD(mm, "mm(mat2) -> Tensor: (n,m) @ (m,p)"),
    CT_LINALG_METHOD(bmm, "bmm(mat2) -> Tensor: (b,n,m) @ (b,m,p)"),
    CT_LINALG_METHOD(mv, "mv(vec) -> Tensor: (n,m) @ (m)"),
    CT_LINALG_METHOD(dot, "dot(tensor) -> Tensor: inner product of two 1-D tensors"),
    CT_LINALG_METHOD(vdot, "vdot(other) -> Tensor: dot product (conjugating self; real dtypes only)"),
    CT_LINALG_METHOD(outer, "outer(vec2) -> Tensor: outer product"),
    CT_LINALG_METHOD(ger, "ger(vec2) -> Tensor: alias of outer"),
    CT_LINALG_METHOD(addmm, "addmm(mat1, mat2, *, beta=1, alpha=1) -> Tensor"),
    CT_LINALG_METHOD(addmm_, "addmm_(mat1, mat2, *, beta=1, alpha=1): in place"),
    CT_LINALG_METHOD(addmv, "addmv(mat, vec, *, beta=1, alpha=1) -> Tensor"),
    CT_LINALG_METHOD(addmv_, "addmv_(mat, vec, *, beta=1, alpha=1): in place"),
    CT_LINALG_METHOD(baddbmm, "baddbmm(batch1, batch2, *, beta=1, alpha=1) -> Tensor"),
    CT_LINALG_METHOD(baddbmm_, "baddbmm_(batch1, batch2, *, beta=1, alpha=1): in place"),
    CT_LINALG_METHOD(addbmm, "addbmm(batch1, batch2, *, beta=1, alpha=1) -> Tensor"),
    CT_LINALG_METHOD(addbmm_, "addbmm_(batch1, batch2, *, beta=1, alpha=1): in place"),
    {NULL},
};

#define CT_LINALG_FUNCTION(NAME, DOC) {#NAME, CT_FASTCALL(fn_##NAME), CT_METH_FK, DOC}
PyMethodDef ct_linalg_module_methods[] = {
    CT_LINALG_FUNCTION(matmul, "matmul(input, other) -> Tensor: matrix product with batch broadcasting"),
    CT_LINALG_FUNCTION(mm, "mm(input, mat2) -> Tensor: (n,m) @ (m,p)"),
    CT_LINALG_FUNCTION(bmm, "bmm(input, mat2) -> Tensor: (b,n,m) @ (b,m,p)"),
    CT_LINALG_FUNCTION(mv, "mv(input, vec) -> Tensor: (n,m) @ (m)"),
    CT_LINALG_FUNCTION(dot, "dot(input, tensor) -> Tensor: inner product of two 1-D tensors"),
    CT_LINALG_FUNCTION(vdot, "vdot(input, other) -> Tensor: dot product (real dtypes only)"),
    CT_LINALG_FUNCTION(outer, "outer(input, vec2) -> Tensor: outer product"),
    CT_LINALG_FUNCTION(ger, "ger(input, vec2) -> Tensor: alias of outer"),
    CT_LINALG_FUNCTION(addmm, "addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor"),
    CT_LINALG_FUNCTION(addmv, "addmv(input, mat, vec, *, beta=1, alpha=1) -> Tensor"),
    CT_LINALG_FUNCTION(baddbmm, "baddbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor"),
    CT_LINALG_FUNCTION(addbmm, "addbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor"),
    {"einsum", CT_FASTCALL(fn_einsum), CT_METH_FK, einsum_doc},
    {"_blas_load", fn_blas_load, METH_O, "_blas_load(path) -> str: opens a BLAS library for CPU matmul (OSError)"},
    {"_blas_max_work", fn_blas_max_work, METH_O,
     "_blas_max_work(n) -> float: float products above n multiply-adds use the built-in kernel even with a "
     "library loaded (0: none); returns the previous limit"},
    {"_blas_name", fn_blas_name, METH_NOARGS, "_blas_name() -> str: what CPU float matmuls run on"},
    {"_blas_use_builtin", fn_blas_use_builtin, METH_O,
     "_blas_use_builtin(on) -> bool: forces the built-in GEMM (tests); returns the previous setting"},
    {NULL},
};

PyType_Slot ct_linalg_tensor_slots[] = {
    {Py_nb_matrix_multiply, tensor_matmul_slot},
    {0, NULL},
};
