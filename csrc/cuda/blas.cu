/* blas.cu: struct CtBlasKernels on CUDA (gemm_batched).
 *
 * Floating dtypes go to cuBLAS (cublasGemmStridedBatchedEx). The row-major product
 * C (M, N) = op(A) op(B) is the column-major product C^T (N, M) = op(B)^T op(A)^T, and a
 * row-major matrix with row stride ld is its own transpose in column-major with the same ld, so
 * the call passes B first with m = N, n = M and the transposition flags unchanged:
 *   float32:  CUBLAS_COMPUTE_32F, or CUBLAS_COMPUTE_32F_FAST_TF32 when
 *             torch.set_float32_matmul_precision allows TF32 ('high' / 'medium')
 *   float64:  CUBLAS_COMPUTE_64F
 *   float16, bfloat16: CUBLAS_COMPUTE_32F (float scalars); reduced-precision reductions are
 *             disallowed through the math mode when the settings say so
 * One cuBLAS handle per device, created on first use and reused, bound to the thread's current
 * stream before every call, with a workspace per (device, stream) from cudaMalloc (kept for the
 * life of the process, as PyTorch's). Integers and bool: an exact tiled kernel computing in a
 * wide unsigned type (wrapping, the same low bits as the CPU engine); bool is AND/OR.
 * K == 0 or alpha == 0: C = beta * C by a small kernel (beta == 0 writes zeros, C unread).
 * The kernel tables are called with the GIL held, which serialises the use of a handle. */
#include "blas.cuh"
#include "linalg.h"
#include <climits>

namespace {

constexpr int kMaxDevices = CT_CUDA_MAX_DEVICES;
constexpr int kMaxStreamsWithWorkspace = 32;

struct HandleState {
    cublasHandle_t handle = nullptr;
    cudaStream_t streams[kMaxStreamsWithWorkspace];
    void *workspaces[kMaxStreamsWithWorkspace];
    int nworkspaces = 0;
};
HandleState g_handles[kMaxDevices];

/* PyTorch's default workspace size: 4096 KiB * 2 + 16 KiB * 8, and 32 MiB from Hopper on. */
size_t workspace_size(int device)
{
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
        (void)cudaGetLastError();
        major = 0;
    }
    return major >= 9 ? (size_t)32 * 1024 * 1024 : (size_t)4096 * 1024 * 2 + (size_t)16 * 1024 * 8;
}

} // namespace

int ct_cuda_cublas_handle(int device, cublasHandle_t *out)
{
    if (device < 0 || device >= kMaxDevices) {
        return ct_cuda_set_error(CT_CUDA_ERROR, "cuBLAS: invalid device %d", device);
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    HandleState *h = &g_handles[device];
    if (h->handle == nullptr) {
        CT_CUBLAS_CHECK(cublasCreate(&h->handle));
    }
    cudaStream_t stream = ct_cuda_stream(device);
    CT_CUBLAS_CHECK(cublasSetStream(h->handle, stream));
    /* cublasSetStream resets the workspace to cuBLAS's own: set ours for this stream. */
    void *ws = nullptr;
    for (int i = 0; i < h->nworkspaces; i++) {
        if (h->streams[i] == stream) {
            ws = h->workspaces[i];
            break;
        }
    }
    size_t ws_size = workspace_size(device);
    if (ws == nullptr && h->nworkspaces < kMaxStreamsWithWorkspace) {
        CT_CUDA_CHECK(cudaMalloc(&ws, ws_size));
        h->streams[h->nworkspaces] = stream;
        h->workspaces[h->nworkspaces] = ws;
        h->nworkspaces++;
    }
    if (ws != nullptr) {
        CT_CUBLAS_CHECK(cublasSetWorkspace(h->handle, ws, ws_size));
    }
    CT_CUBLAS_CHECK(cublasSetPointerMode(h->handle, CUBLAS_POINTER_MODE_HOST));
    *out = h->handle;
    return CT_CUDA_OK;
}

namespace {

/* --- C = beta * C (K == 0 or alpha == 0) ----------------------------------------------------- */
template <int D>
__global__ void scale_c_kernel(char *C, int64_t M, int64_t N, int64_t ldc, int64_t stride_c, double beta,
                               int64_t ib, int64_t total)
{
    typedef typename CtCudaType<D>::T T;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) {
        return;
    }
    int64_t per = M * N;
    int64_t b = i / per, r = i % per;
    int64_t m = r / N, n = r % N;
    T *p = (T *)C + b * stride_c + m * ldc + n;
    if (beta == 0) {
        *p = T();
        return;
    }
    if constexpr (D == CT_BOOL) {
        *p = *p && ib != 0;
    } else if constexpr (D == CT_I64) {
        *p = (T)((uint64_t)*p * (uint64_t)ib);
    } else if constexpr (D == CT_U8 || D == CT_I8 || D == CT_I16 || D == CT_I32) {
        *p = (T)((uint32_t)*p * (uint32_t)ib);
    } else if constexpr (D == CT_F64) {
        *p = beta * *p;
    } else {
        ct_store<D>((char *)p, (float)beta * ct_load<D>((const char *)p));
    }
}

int64_t double_to_int64(double x)
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

template <int D>
int scale_c(int64_t M, int64_t N, double beta, void *C, int64_t ldc, int64_t stride_c, int64_t batch,
            cudaStream_t stream)
{
    if (beta == 1 && (D == CT_F16 || D == CT_BF16 || D == CT_F32 || D == CT_F64)) {
        return CT_CUDA_OK;
    }
    int64_t total = M * N * batch;
    constexpr int threads = 256;
    scale_c_kernel<D><<<ct_cuda_blocks(total, threads), threads, 0, stream>>>(
        (char *)C, M, N, ldc, stride_c, beta, double_to_int64(beta), total);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

/* --- exact integer / bool GEMM ------------------------------------------------------------------ */
constexpr int kTile = 16;

template <typename T, typename W>
__global__ void int_gemm_kernel(bool ta, bool tb, int64_t M, int64_t N, int64_t K, W alpha, W beta, bool beta_zero,
                                const T *A, int64_t lda, int64_t stride_a, const T *B, int64_t ldb, int64_t stride_b,
                                T *C, int64_t ldc, int64_t stride_c, int64_t batch0, int64_t row0)
{
    __shared__ W sa[kTile][kTile + 1];
    __shared__ W sb[kTile][kTile + 1];
    const int64_t b = batch0 + blockIdx.z;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t row = row0 + (int64_t)blockIdx.y * kTile + ty; /* m */
    const int64_t col = (int64_t)blockIdx.x * kTile + tx; /* n */
    const T *Ab = A + b * stride_a;
    const T *Bb = B + b * stride_b;
    W acc = 0;
    for (int64_t k0 = 0; k0 < K; k0 += kTile) {
        int64_t ka = k0 + tx; /* A tile: (row, ka) */
        W va = 0;
        if (row < M && ka < K) {
            va = (W)(ta ? Ab[ka * lda + row] : Ab[row * lda + ka]);
        }
        sa[ty][tx] = va;
        int64_t kb = k0 + ty; /* B tile: (kb, col) */
        W vb = 0;
        if (kb < K && col < N) {
            vb = (W)(tb ? Bb[col * ldb + kb] : Bb[kb * ldb + col]);
        }
        sb[ty][tx] = vb;
        __syncthreads();
        CT_UNROLL
        for (int k = 0; k < kTile; k++) {
            if constexpr (std::is_same<T, bool>::value) {
                acc = acc | (sa[ty][k] & sb[k][tx]);
            } else {
                acc += sa[ty][k] * sb[k][tx];
            }
        }
        __syncthreads();
    }
    if (row >= M || col >= N) {
        return;
    }
    T *c = C + b * stride_c + row * ldc + col;
    if constexpr (std::is_same<T, bool>::value) {
        bool v = alpha != 0 && acc != 0;
        *c = v || (!beta_zero && beta != 0 && *c);
    } else {
        W v = alpha * acc;
        if (!beta_zero) {
            v += beta * (W)*c;
        }
        *c = (T)v;
    }
}

template <typename T, typename W>
int int_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, double beta, const void *A,
             int64_t lda, int64_t stride_a, const void *B, int64_t ldb, int64_t stride_b, void *C, int64_t ldc,
             int64_t stride_c, int64_t batch, cudaStream_t stream)
{
    if ((N + kTile - 1) / kTile > INT_MAX) {
        return ct_cuda_set_error(CT_CUDA_ERROR, "integer matmul: a (%lld, %lld) product has too many columns for the GPU kernel",
                                 (long long)M, (long long)N);
    }
    dim3 threads(kTile, kTile);
    /* gridDim.y and .z are at most 65535: rows and batches go in slices of that many tiles / products */
    const int64_t rows_per_launch = (int64_t)65535 * kTile;
    W ia, ib;
    if constexpr (std::is_same<T, bool>::value) {
        ia = alpha != 0;
        ib = beta != 0;
    } else {
        ia = (W)double_to_int64(alpha);
        ib = (W)double_to_int64(beta);
    }
    bool beta_zero = std::is_same<T, bool>::value ? beta == 0 : ib == 0;
    for (int64_t b0 = 0; b0 < batch; b0 += 65535) {
        int64_t nb = batch - b0 < 65535 ? batch - b0 : 65535;
        for (int64_t m0 = 0; m0 < M; m0 += rows_per_launch) {
            int64_t mrows = M - m0 < rows_per_launch ? M - m0 : rows_per_launch;
            dim3 grid((unsigned)((N + kTile - 1) / kTile), (unsigned)((mrows + kTile - 1) / kTile), (unsigned)nb);
            int_gemm_kernel<T, W><<<grid, threads, 0, stream>>>(ta, tb, M, N, K, ia, ib, beta_zero, (const T *)A,
                                                                lda, stride_a, (const T *)B, ldb, stride_b, (T *)C,
                                                                ldc, stride_c, b0, m0);
            CT_CUDA_CHECK_LAUNCH();
        }
    }
    return CT_CUDA_OK;
}

/* --- cuBLAS ------------------------------------------------------------------------------------------ */
int cublas_gemm(int device, CtDType dtype, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha,
                const void *A, int64_t lda, int64_t stride_a, const void *B, int64_t ldb, int64_t stride_b,
                double beta, void *C, int64_t ldc, int64_t stride_c, int64_t batch)
{
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX) {
        return ct_cuda_set_error(CT_CUDA_ERROR,
                                 "cuBLAS: matmul sizes (%lld, %lld, %lld) or leading dimensions exceed 2^31 - 1",
                                 (long long)M, (long long)N, (long long)K);
    }
    cublasHandle_t handle;
    CT_CUDA_TRY(ct_cuda_cublas_handle(device, &handle));
    const CtCudaSettings *s = ct_cuda_host->settings;
    cudaDataType_t type;
    cublasComputeType_t compute;
    cublasMath_t math = CUBLAS_DEFAULT_MATH;
    switch (dtype) {
    case CT_F32:
        type = CUDA_R_32F;
        compute = s->float32_matmul_precision > 0 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        break;
    case CT_F64:
        type = CUDA_R_64F;
        compute = CUBLAS_COMPUTE_64F;
        break;
    case CT_F16:
        type = CUDA_R_16F;
        compute = CUBLAS_COMPUTE_32F;
        if (!s->allow_fp16_reduced_precision_reduction) {
            math = CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
        }
        break;
    case CT_BF16:
        type = CUDA_R_16BF;
        compute = CUBLAS_COMPUTE_32F;
        if (!s->allow_bf16_reduced_precision_reduction) {
            math = CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
        }
        break;
    default:
        return ct_cuda_set_error(CT_CUDA_ERROR, "cuBLAS: unsupported dtype");
    }
    CT_CUBLAS_CHECK(cublasSetMathMode(handle, math));
    const float falpha = (float)alpha, fbeta = (float)beta;
    const void *palpha = dtype == CT_F64 ? (const void *)&alpha : (const void *)&falpha;
    const void *pbeta = dtype == CT_F64 ? (const void *)&beta : (const void *)&fbeta;
    const size_t es = dtype == CT_F64 ? 8 : dtype == CT_F32 ? 4 : 2;
    /* Column-major C^T (N, M) = op(B)^T (N, K) op(A)^T (K, M). */
    const cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    /* cuBLAS wants ld >= rows of the stored column-major matrix even when it has one column */
    const int ldb_c = (int)(ldb < 1 ? 1 : ldb), lda_c = (int)(lda < 1 ? 1 : lda), ldc_c = (int)(ldc < 1 ? 1 : ldc);
    for (int64_t b0 = 0; b0 < batch; b0 += INT_MAX) {
        int nb = (int)(batch - b0 < INT_MAX ? batch - b0 : INT_MAX);
        const char *Ab = (const char *)A + (size_t)(b0 * stride_a) * es;
        const char *Bb = (const char *)B + (size_t)(b0 * stride_b) * es;
        char *Cb = (char *)C + (size_t)(b0 * stride_c) * es;
        CT_CUBLAS_CHECK(cublasGemmStridedBatchedEx(handle, opb, opa, (int)N, (int)M, (int)K, palpha, Bb, type, ldb_c,
                                                   (long long)stride_b, Ab, type, lda_c, (long long)stride_a, pbeta,
                                                   Cb, type, ldc_c, (long long)stride_c, nb, compute,
                                                   CUBLAS_GEMM_DEFAULT));
    }
    return CT_CUDA_OK;
}

} // namespace

int ct_cuda_gemm_batched_status(int device, CtDType dtype, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                                double alpha, const void *A, int64_t lda, int64_t stride_a, const void *B,
                                int64_t ldb, int64_t stride_b, double beta, void *C, int64_t ldc, int64_t stride_c,
                                int64_t batch)
{
    if (M == 0 || N == 0 || batch == 0) {
        return CT_CUDA_OK;
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaStream_t stream = ct_cuda_stream(device);
    if (K == 0 || alpha == 0) {
        switch (dtype) {
#define CT_SCALE_CASE(NAME, ...) \
    case CT_##NAME: return scale_c<CT_##NAME>(M, N, beta, C, ldc, stride_c, batch, stream);
            CT_DTYPE_LIST(CT_SCALE_CASE)
#undef CT_SCALE_CASE
        default: return ct_cuda_set_error(CT_CUDA_ERROR, "matmul: unsupported dtype");
        }
    }
    switch (dtype) {
    case CT_F32:
    case CT_F64:
    case CT_F16:
    case CT_BF16:
        return cublas_gemm(device, dtype, ta, tb, M, N, K, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C, ldc,
                           stride_c, batch);
#define CT_INT_CASE(NAME, T, W)                                                                                   \
    case CT_##NAME:                                                                                              \
        return int_gemm<T, W>(ta, tb, M, N, K, alpha, beta, A, lda, stride_a, B, ldb, stride_b, C, ldc, stride_c, \
                              batch, stream);
        CT_INT_CASE(BOOL, bool, bool)
        CT_INT_CASE(U8, uint8_t, uint32_t)
        CT_INT_CASE(I8, int8_t, uint32_t)
        CT_INT_CASE(I16, int16_t, uint32_t)
        CT_INT_CASE(I32, int32_t, uint32_t)
        CT_INT_CASE(I64, int64_t, uint64_t)
#undef CT_INT_CASE
    default: return ct_cuda_set_error(CT_CUDA_ERROR, "matmul: unsupported dtype");
    }
}

int ct_cuda_gemm_batched(CtDevice device, CtDType dtype, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
                         double alpha, const void *A, int64_t lda, int64_t stride_a, const void *B, int64_t ldb,
                         int64_t stride_b, double beta, void *C, int64_t ldc, int64_t stride_c, int64_t batch)
{
    int status = ct_cuda_gemm_batched_status(device.index, dtype, trans_a, trans_b, M, N, K, alpha, A, lda, stride_a,
                                             B, ldb, stride_b, beta, C, ldc, stride_c, batch);
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}
