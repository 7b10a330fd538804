/* blas_harness.cu: checks csrc/cuda/blas.cu's use of cuBLAS on the host, without a GPU.
 *
 * blas.cu is included whole and linked against fake_cudart.cpp plus the fake cuBLAS below, whose
 * cublasGemmStridedBatchedEx is a naive column-major GEMM over host memory that refuses what
 * cuBLAS refuses (leading dimensions below the stored rows, negative sizes, a dtype/compute
 * mismatch). So the row-major -> column-major translation (operand swap, transposition flags,
 * lda/ldb/ldc, batch strides, shared operands with stride 0, alpha/beta) is compared with a
 * naive row-major reference for every transposition, padded leading dimensions and batches.
 * Also checked: the handle is bound to the current stream before its workspace is set (cublasSetStream
 * resets the workspace), one workspace per stream, TF32 and reduced-precision math modes from
 * the settings, the K == 0 / alpha == 0 and empty shortcuts, and the integer kernel's grid (batch
 * split at 65535, the rows limit reported as an error, not launched). */
#include "blas.cu"
#include "fake_cudart.h"
#include <math.h>
#include <random>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <vector>

/* --- what runtime.cu provides to blas.cu ------------------------------------------------------- */
static char error_text[4096];
static CtCudaSettings settings;
static CtCudaHost host;
const CtCudaHost *ct_cuda_host = &host;
static cudaStream_t current_stream = 0;
int ct_cuda_set_error(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_text, sizeof(error_text), fmt, ap);
    va_end(ap);
    return status;
}
int ct_cuda_record_error(cudaError_t err, const char *expr, const char *func, const char *file, int line)
{
    return ct_cuda_set_error(CT_CUDA_ERROR, "CUDA error in %s", expr);
}
int ct_cuda_record_cublas_error(cublasStatus_t err, const char *expr, const char *func, const char *file, int line)
{
    return ct_cuda_set_error(CT_CUDA_ERROR, "cuBLAS error %d in %s", (int)err, expr);
}
int ct_cuda_raise(int status) { return -1; }
cudaStream_t ct_cuda_stream(int device) { return current_stream; }

static int failures = 0;
#define CHECK(c, ...)                                              \
    do {                                                           \
        if (!(c)) {                                                \
            if (failures < 40) {                                   \
                printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #c); \
                printf(__VA_ARGS__);                               \
                printf("\n");                                      \
            }                                                      \
            failures++;                                            \
        }                                                          \
    } while (0)

/* --- the fake cuBLAS ------------------------------------------------------------------------------ */
struct FakeHandle {
    cudaStream_t stream;
    void *workspace;
    size_t workspace_size;
    bool workspace_after_stream; /* cublasSetWorkspace came after the last cublasSetStream */
    cublasMath_t math;
    cublasPointerMode_t pointer_mode;
};
static int handles_created = 0;
static int gemm_calls = 0;
static cublasComputeType_t last_compute;
static cublasMath_t last_math;
static cudaStream_t last_stream;

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    FakeHandle *h = new FakeHandle();
    h->stream = 0;
    h->workspace = nullptr;
    h->workspace_size = 0;
    h->workspace_after_stream = false;
    h->math = CUBLAS_DEFAULT_MATH;
    h->pointer_mode = CUBLAS_POINTER_MODE_HOST;
    handles_created++;
    *handle = (cublasHandle_t)h;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    FakeHandle *h = (FakeHandle *)handle;
    h->stream = stream;
    h->workspace = nullptr; /* as cuBLAS: back to its own workspace */
    h->workspace_after_stream = false;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t size)
{
    FakeHandle *h = (FakeHandle *)handle;
    h->workspace = workspace;
    h->workspace_size = size;
    h->workspace_after_stream = true;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
    ((FakeHandle *)handle)->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    ((FakeHandle *)handle)->math = mode;
    return CUBLAS_STATUS_SUCCESS;
}
const char *cublasGetStatusName(cublasStatus_t status) { return "CUBLAS_STATUS_FAKE"; }
const char *cublasGetStatusString(cublasStatus_t status) { return "fake"; }

/* element (r, c) of a column-major matrix with leading dimension ld */
template <typename T>
static double cm(const void *base, long long off, int ld, int r, int c)
{
    return (double)((const T *)base)[off + (long long)c * ld + r];
}

template <typename T>
static void fake_gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *alpha,
                      const void *A, int lda, long long sa, const void *B, int ldb, long long sb, const void *beta,
                      void *C, int ldc, long long sc, int batch)
{
    const double al = *(const T *)alpha, be = *(const T *)beta;
    for (int b = 0; b < batch; b++) {
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                double acc = 0;
                for (int p = 0; p < k; p++) {
                    double a = ta == CUBLAS_OP_N ? cm<T>(A, b * sa, lda, i, p) : cm<T>(A, b * sa, lda, p, i);
                    double x = tb == CUBLAS_OP_N ? cm<T>(B, b * sb, ldb, p, j) : cm<T>(B, b * sb, ldb, j, p);
                    acc += a * x;
                }
                T *c = (T *)C + b * sc + (long long)j * ldc + i;
                *c = (T)(al * acc + (be == 0 ? 0.0 : be * (double)*c));
            }
        }
    }
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
                                          int lda, long long int strideA, const void *B, cudaDataType Btype, int ldb,
                                          long long int strideB, const void *beta, void *C, cudaDataType Ctype,
                                          int ldc, long long int strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    FakeHandle *h = (FakeHandle *)handle;
    gemm_calls++;
    last_compute = computeType;
    last_math = h->math;
    last_stream = h->stream;
    /* cuBLAS's documented argument checks */
    const int rows_a = transa == CUBLAS_OP_N ? m : k;
    const int rows_b = transb == CUBLAS_OP_N ? k : n;
    if (m < 0 || n < 0 || k < 0 || batchCount < 0 || lda < (rows_a > 1 ? rows_a : 1) ||
        ldb < (rows_b > 1 ? rows_b : 1) || ldc < (m > 1 ? m : 1) || Atype != Btype || Atype != Ctype) {
        printf("fake cuBLAS: invalid value: op (%d, %d) m %d n %d k %d lda %d ldb %d ldc %d\n", (int)transa,
               (int)transb, m, n, k, lda, ldb, ldc);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (h->pointer_mode != CUBLAS_POINTER_MODE_HOST) {
        return CUBLAS_STATUS_INVALID_VALUE; /* the scalars are host variables */
    }
    if (!h->workspace_after_stream || h->workspace == nullptr) {
        printf("fake cuBLAS: no workspace of ours bound after cublasSetStream\n");
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    if (Atype == CUDA_R_32F) {
        if (computeType != CUBLAS_COMPUTE_32F && computeType != CUBLAS_COMPUTE_32F_FAST_TF32) {
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
        fake_gemm<float>(transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
                         batchCount);
    } else if (Atype == CUDA_R_64F) {
        if (computeType != CUBLAS_COMPUTE_64F) {
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
        fake_gemm<double>(transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
                          batchCount);
    } else if (Atype == CUDA_R_16F || Atype == CUDA_R_16BF) {
        if (computeType != CUBLAS_COMPUTE_32F) {
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
        /* values not computed (no host half arithmetic here); the call's shape is what is checked */
    } else {
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* --- the row-major reference, as linalg.h's contract states it ----------------------------------- */
/* op(A) (M, K): A is (M, K) with row stride lda, or (K, M) if ta; likewise B; C (M, N) row stride ldc */
template <typename T>
static void reference(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const T *A, int64_t lda,
                      int64_t sa, const T *B, int64_t ldb, int64_t sb, double beta, T *C, int64_t ldc, int64_t sc,
                      int64_t batch)
{
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t i = 0; i < M; i++) {
            for (int64_t j = 0; j < N; j++) {
                double acc = 0;
                for (int64_t p = 0; p < K; p++) {
                    double a = ta ? A[b * sa + p * lda + i] : A[b * sa + i * lda + p];
                    double x = tb ? B[b * sb + j * ldb + p] : B[b * sb + p * ldb + j];
                    acc += a * x;
                }
                T *c = C + b * sc + i * ldc + j;
                *c = (T)(alpha * acc + (beta == 0 ? 0.0 : beta * (double)*c));
            }
        }
    }
}

template <typename T, int D>
static void check_case(bool ta, bool tb, int64_t M, int64_t N, int64_t K, int pad, int64_t batch, bool share_a,
                       bool share_b, double alpha, double beta, std::mt19937 &rng)
{
    const int64_t a_rows = ta ? K : M, a_cols = ta ? M : K;
    const int64_t b_rows = tb ? N : K, b_cols = tb ? K : N;
    const int64_t lda = a_cols + pad, ldb = b_cols + pad, ldc = N + pad;
    const int64_t sa = share_a ? 0 : a_rows * lda + pad, sb = share_b ? 0 : b_rows * ldb + 2 * pad;
    const int64_t sc = M * ldc + pad;
    std::uniform_int_distribution<int> dist(-4, 4);
    std::vector<T> A((size_t)(a_rows * lda + sa * batch + 1)), B((size_t)(b_rows * ldb + sb * batch + 1));
    std::vector<T> C((size_t)(sc * batch + 1)), R;
    for (auto &x : A) {
        x = (T)dist(rng);
    }
    for (auto &x : B) {
        x = (T)dist(rng);
    }
    for (auto &x : C) {
        x = (T)dist(rng);
    }
    R = C;
    int st = ct_cuda_gemm_batched_status(0, (CtDType)D, ta, tb, M, N, K, alpha, A.data(), lda, sa, B.data(), ldb, sb,
                                         beta, C.data(), ldc, sc, batch);
    CHECK(st == CT_CUDA_OK, "status %d (%s) for ta %d tb %d M %lld N %lld K %lld pad %d batch %lld", st, error_text,
          ta, tb, (long long)M, (long long)N, (long long)K, pad, (long long)batch);
    reference<T>(ta, tb, M, N, K, alpha, A.data(), lda, sa, B.data(), ldb, sb, beta, R.data(), ldc, sc, batch);
    size_t bad = 0;
    for (size_t i = 0; i < C.size(); i++) {
        bad += C[i] != R[i];
    }
    CHECK(bad == 0, "%zu elements differ for ta %d tb %d M %lld N %lld K %lld pad %d batch %lld shared %d%d", bad, ta,
          tb, (long long)M, (long long)N, (long long)K, pad, (long long)batch, share_a, share_b);
}

int main()
{
    memset(&settings, 0, sizeof(settings));
    settings.allow_fp16_reduced_precision_reduction = 1;
    settings.allow_bf16_reduced_precision_reduction = 1;
    host.abi_version = CT_CUDA_ABI_VERSION;
    host.settings = &settings;
    std::mt19937 rng(7);

    /* 1. orientation: every transposition, padded leading dimensions, batches, shared operands */
    const int64_t shapes[][3] = {{1, 1, 1}, {2, 3, 4}, {5, 1, 3}, {1, 6, 2}, {4, 4, 1}, {3, 7, 5}};
    for (const auto &s : shapes) {
        for (int t = 0; t < 4; t++) {
            for (int pad = 0; pad < 2; pad++) {
                check_case<float, CT_F32>(t & 1, t & 2, s[0], s[1], s[2], pad, 1, false, false, 1.0, 0.0, rng);
                check_case<double, CT_F64>(t & 1, t & 2, s[0], s[1], s[2], pad, 3, false, false, 2.0, 0.5, rng);
                check_case<double, CT_F64>(t & 1, t & 2, s[0], s[1], s[2], pad, 2, true, false, 1.0, 1.0, rng);
                check_case<float, CT_F32>(t & 1, t & 2, s[0], s[1], s[2], pad, 2, false, true, -1.0, 0.0, rng);
            }
        }
    }
    CHECK(handles_created == 1, "one handle per device, got %d", handles_created);

    /* 2. the stream and its workspace: set for each call's current stream, one workspace each */
    int mallocs_before = malloc_calls;
    current_stream = (cudaStream_t)0x1234;
    check_case<float, CT_F32>(false, false, 2, 2, 2, 0, 1, false, false, 1.0, 0.0, rng);
    CHECK(last_stream == current_stream, "cuBLAS bound to the current stream");
    CHECK(malloc_calls == mallocs_before + 1, "a workspace for the new stream (%d cudaMalloc)",
          malloc_calls - mallocs_before);
    check_case<float, CT_F32>(false, true, 2, 2, 2, 0, 1, false, false, 1.0, 0.0, rng);
    CHECK(malloc_calls == mallocs_before + 1, "the stream's workspace is reused");
    current_stream = 0;
    check_case<float, CT_F32>(true, false, 2, 2, 2, 0, 1, false, false, 1.0, 0.0, rng);
    CHECK(last_stream == (cudaStream_t)0 && malloc_calls == mallocs_before + 1, "back on the default stream");

    /* 3. math modes from the settings */
    settings.float32_matmul_precision = 1;
    check_case<float, CT_F32>(false, false, 2, 3, 4, 0, 1, false, false, 1.0, 0.0, rng);
    CHECK(last_compute == CUBLAS_COMPUTE_32F_FAST_TF32, "TF32 when allowed");
    settings.float32_matmul_precision = 0;
    check_case<float, CT_F32>(false, false, 2, 3, 4, 0, 1, false, false, 1.0, 0.0, rng);
    CHECK(last_compute == CUBLAS_COMPUTE_32F, "plain float32 by default");
    uint16_t h16[64] = {0};
    settings.allow_fp16_reduced_precision_reduction = 0;
    int st = ct_cuda_gemm_batched_status(0, CT_F16, false, true, 4, 4, 4, 1.0, h16, 4, 0, h16, 4, 0, 0.0, h16 + 32,
                                         4, 0, 1);
    CHECK(st == CT_CUDA_OK && last_math == CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, "fp16 reduction off");
    settings.allow_fp16_reduced_precision_reduction = 1;
    st = ct_cuda_gemm_batched_status(0, CT_BF16, true, false, 4, 4, 4, 1.0, h16, 4, 0, h16, 4, 0, 0.0, h16 + 32, 4,
                                     0, 1);
    CHECK(st == CT_CUDA_OK && last_math == CUBLAS_DEFAULT_MATH, "bf16 default math mode");

    /* 4. shortcuts: nothing to compute launches nothing; K == 0 or alpha == 0 scales C only */
    int calls = gemm_calls;
    size_t nlaunch = launches.size();
    float f[8] = {0};
    st = ct_cuda_gemm_batched_status(0, CT_F32, false, false, 0, 3, 2, 1.0, f, 2, 0, f, 3, 0, 0.0, f, 3, 0, 1);
    CHECK(st == CT_CUDA_OK && gemm_calls == calls && launches.size() == nlaunch, "M == 0: no work");
    st = ct_cuda_gemm_batched_status(0, CT_F32, false, false, 2, 3, 2, 1.0, f, 2, 0, f, 3, 0, 0.0, f, 3, 0, 0);
    CHECK(st == CT_CUDA_OK && gemm_calls == calls && launches.size() == nlaunch, "batch == 0: no work");
    st = ct_cuda_gemm_batched_status(0, CT_F32, false, false, 2, 3, 0, 1.0, f, 1, 0, f, 3, 0, 1.0, f, 3, 0, 1);
    CHECK(st == CT_CUDA_OK && gemm_calls == calls && launches.size() == nlaunch, "K == 0, beta == 1: no work");
    st = ct_cuda_gemm_batched_status(0, CT_F32, false, false, 2, 3, 0, 1.0, f, 1, 0, f, 3, 0, 0.5, f, 3, 0, 1);
    CHECK(st == CT_CUDA_OK && gemm_calls == calls && launches.size() == nlaunch + 1, "K == 0: one scale kernel");

    /* 5. the integer kernel's grid: batches past 65535 split over blockIdx.z, tall products refused */
    nlaunch = launches.size();
    int32_t i32[4] = {0};
    st = ct_cuda_gemm_batched_status(0, CT_I32, false, false, 1, 1, 1, 1.0, i32, 1, 0, i32, 1, 0, 0.0, i32 + 2, 1, 0,
                                     70000);
    CHECK(st == CT_CUDA_OK && launches.size() == nlaunch + 2, "70000 products in two launches (%zu)",
          launches.size() - nlaunch);
    if (launches.size() == nlaunch + 2) {
        CHECK(launches[nlaunch].grid.z == 65535 && launches[nlaunch + 1].grid.z == 70000 - 65535, "z split");
    }
    nlaunch = launches.size();
    st = ct_cuda_gemm_batched_status(0, CT_I64, false, false, (int64_t)16 * 65536 + 5, 1, 1, 1.0, i32, 1, 0, i32, 1,
                                     0, 0.0, i32, 1, 0, 1);
    CHECK(st == CT_CUDA_OK && launches.size() == nlaunch + 2, "2^20 + 5 rows in two launches (%d, %zu)", st,
          launches.size() - nlaunch);
    if (launches.size() == nlaunch + 2) {
        CHECK(launches[nlaunch].grid.y == 65535 && launches[nlaunch + 1].grid.y == 2, "rows split over gridDim.y");
    }
    CHECK(invalid_launches == 0, "%d invalid launches", invalid_launches);

    if (failures) {
        printf("%d blas checks FAILED\n", failures);
        return 1;
    }
    printf("all blas checks passed\n");
    return 0;
}
