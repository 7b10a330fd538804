/* nn.cu: struct CtNNKernels on CUDA (partial: see runtime.cu for the fields set).
 *
 * - linear: every output row pre-filled with its bias row (or nothing), then one cuBLAS GEMM
 *   (blas.cu) with beta = 1 (0 without a bias), as the CPU's cpu_linear does with ct_cpu_gemm.
 * - leaky_relu (+ backward): elementwise, computed in double as the CPU does.
 * - embedding: a gather of rows; out-of-range indices are found on the device first (the lowest
 *   position, as the CPU's scan reports the first) and copied back as bad_index / bad_value.
 * - embedding_backward: deterministic: one thread per column walks the indices in order and
 *   accumulates into a double (num, dim) buffer (the CPU's order of additions exactly), then the
 *   buffer is cast into grad_weight. scale_grad_by_freq counts occurrences with integer atomics
 *   (exact, order-free).
 * - nll / cross_entropy (+ backward): one thread per row in double as the CPU; the pre-pass and
 *   the reduction total are one-block ordered sums (block_ordered_sum: terms computed in
 *   parallel, added in the CPU's order by one thread); the forward reports a bad target from the
 *   pre-pass's result copied back (its one wait); the backward does not wait.
 * - pointwise losses (+ backward): nn_math.h's per-element functions (shared with the CPU); sums
 *   in the CPU's order (an ordered sum per 4096-element block, then over the blocks).
 * - layer_norm (+ backward): one block per row (32 to 256 threads, about one per column),
 *   statistics and math in double as the CPU, block sums in a fixed tree order; grad_weight / grad_bias by a column pass over the rows in order.
 * - trunc_normal_transform: elementwise, nn_math.h's ct_trunc_normal_of in double as the CPU.
 * - ctc_loss (+ backward): the alpha / beta recursions one block per sample (threads over the extended
 *   label positions, a __syncthreads per frame), nn_math.h's log-sum-exp in double as the CPU; the gradient
 *   one block per (frame, sample), threads over the classes, each summing its label's states. */
#include "allocator.cuh"
#include "blas.cuh"
#include "common.cuh"
#include "grid_sample_math.h"
#include "nn.h"
#include "nn_math.h"

namespace {

constexpr int kThreads = 256;

size_t itemsize_of(CtDType d)
{
    switch (d) {
    case CT_BOOL:
    case CT_U8:
    case CT_I8: return 1;
    case CT_I16:
    case CT_F16:
    case CT_BF16: return 2;
    case CT_I32:
    case CT_F32: return 4;
    default: return 8;
    }
}

template <typename U>
__global__ void fill_rows_kernel(U *out, const U *bias, int64_t M, int64_t N, int64_t bias_ld)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M * N) {
        return;
    }
    int64_t r = i / N, c = i % N;
    out[i] = bias[r * bias_ld + c];
}

template <typename U>
int fill_rows(void *out, const void *bias, int64_t M, int64_t N, int64_t bias_ld, cudaStream_t stream)
{
    fill_rows_kernel<U><<<ct_cuda_blocks(M * N, kThreads), kThreads, 0, stream>>>((U *)out, (const U *)bias, M, N,
                                                                                 bias_ld);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

int linear_status(const CtLinearDesc *d)
{
    const int device = d->device.index;
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    if (d->M == 0 || d->N == 0) {
        return CT_CUDA_OK;
    }
    double beta = 0.0;
    if (d->bias != nullptr) {
        cudaStream_t stream = ct_cuda_stream(device);
        switch (itemsize_of(d->dtype)) {
        case 1: CT_CUDA_TRY(fill_rows<uint8_t>(d->out, d->bias, d->M, d->N, d->bias_ld, stream)); break;
        case 2: CT_CUDA_TRY(fill_rows<uint16_t>(d->out, d->bias, d->M, d->N, d->bias_ld, stream)); break;
        case 4: CT_CUDA_TRY(fill_rows<uint32_t>(d->out, d->bias, d->M, d->N, d->bias_ld, stream)); break;
        default: CT_CUDA_TRY(fill_rows<uint64_t>(d->out, d->bias, d->M, d->N, d->bias_ld, stream)); break;
        }
        beta = 1.0;
    }
    return ct_cuda_gemm_batched_status(device, d->dtype, d->trans_x, d->trans_w, d->M, d->N, d->K, 1.0, d->x, d->lda,
                                       0, d->w, d->ldw, 0, beta, d->out, d->N, 0, 1);
}

/* --- leaky_relu ---------------------------------------------------------------------------------- */
template <int D>
__global__ void leaky_relu_kernel(const char *x, const char *grad, double slope, char *out, int64_t n)
{
    typedef typename CtCudaType<D>::T T;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    const int64_t off = i * (int64_t)sizeof(T);
    double v = (double)ct_load<D>(x + off);
    double r;
    if (grad != nullptr) {
        double g = (double)ct_load<D>(grad + off);
        r = v > 0 ? g : g * slope;
    } else {
        r = v > 0 ? v : v * slope;
    }
    ct_store<D>(out + off, r);
}

template <int D>
int leaky_relu_launch(int64_t n, const void *x, const void *grad, double slope, void *out, cudaStream_t stream)
{
    leaky_relu_kernel<D><<<ct_cuda_blocks(n, kThreads), kThreads, 0, stream>>>(
        (const char *)x, (const char *)grad, slope, (char *)out, n);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

/* --- nn.init.trunc_normal_ ------------------------------------------------------------------------ */
template <int D>
__global__ void trunc_normal_kernel(char *data, int64_t n, double mean, double std, double a, double b)
{
    typedef typename CtCudaType<D>::T T;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        char *p = data + i * (int64_t)sizeof(T);
        ct_store<D>(p, ct_trunc_normal_of((double)ct_load<D>(p), mean, std, a, b));
    }
}

template <int D>
int trunc_normal_launch(int64_t n, void *data, double mean, double std, double a, double b, cudaStream_t stream)
{
    trunc_normal_kernel<D><<<ct_cuda_blocks(n, kThreads), kThreads, 0, stream>>>((char *)data, n, mean, std, a, b);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

#define CT_NN_FLOAT_DISPATCH(dtype, FN, ...)                                                  \
    switch (dtype) {                                                                         \
    case CT_F16: return FN<CT_F16>(__VA_ARGS__);                                             \
    case CT_BF16: return FN<CT_BF16>(__VA_ARGS__);                                           \
    case CT_F32: return FN<CT_F32>(__VA_ARGS__);                                             \
    case CT_F64: return FN<CT_F64>(__VA_ARGS__);                                             \
    default: return ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "nn kernel: unsupported dtype on CUDA"); \
    }

int leaky_relu_status(CtDType dtype, CtDevice device, int64_t n, const void *x, const void *grad, double slope,
                      void *out)
{
    CT_CUDA_TRY(ct_cuda_device_guard(device.index));
    if (n == 0) {
        return CT_CUDA_OK;
    }
    cudaStream_t stream = ct_cuda_stream(device.index);
    CT_NN_FLOAT_DISPATCH(dtype, leaky_relu_launch, n, x, grad, slope, out, stream)
}

int trunc_normal_status(CtDType dtype, CtDevice device, int64_t n, void *data, double mean, double std, double a,
                        double b)
{
    CT_CUDA_TRY(ct_cuda_device_guard(device.index));
    if (n == 0) {
        return CT_CUDA_OK;
    }
    cudaStream_t stream = ct_cuda_stream(device.index);
    CT_NN_FLOAT_DISPATCH(dtype, trunc_normal_launch, n, data, mean, std, a, b, stream)
}

/* --- embedding ------------------------------------------------------------------------------------ */
__device__ __forceinline__ int64_t load_index(const void *p, bool is32, int64_t i)
{
    return is32 ? (int64_t)((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

__global__ void check_indices_kernel(const void *idx, bool is32, int64_t n, int64_t num,
                                     unsigned long long *first_bad)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    int64_t v = load_index(idx, is32, i);
    if (v < 0 || v >= num) {
        atomicMin(first_bad, (unsigned long long)i);
    }
}

/* Sets d->bad_index / bad_value for the first out-of-range index; *ok = no bad index. Synchronises. */
int embedding_check(CtEmbeddingDesc *d, cudaStream_t stream, bool *ok)
{
    *ok = true;
    if (d->n == 0) {
        return CT_CUDA_OK;
    }
    const int device = d->device.index;
    const bool is32 = d->index_dtype == CT_I32;
    void *flag = nullptr;
    CT_CUDA_TRY(ct_cuda_sync_debug_check());
    CT_CUDA_TRY(ct_cuda_caching_malloc(device, sizeof(unsigned long long), &flag));
    unsigned long long first = ~0ULL;
    int status = CT_CUDA_OK;
    cudaError_t err = cudaMemsetAsync(flag, 0xff, sizeof(first), stream);
    if (err == cudaSuccess) {
        check_indices_kernel<<<ct_cuda_blocks(d->n, kThreads), kThreads, 0, stream>>>(
            d->indices, is32, d->n, d->num, (unsigned long long *)flag);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess) {
        err = cudaMemcpyAsync(&first, flag, sizeof(first), cudaMemcpyDeviceToHost, stream);
    }
    if (err == cudaSuccess) {
        err = cudaStreamSynchronize(stream);
    }
    if (err == cudaSuccess && first != ~0ULL) {
        /* on the current stream (a plain cudaMemcpy would go to the legacy default stream, which
         * is not ordered with non-blocking streams), then waited for */
        *ok = false;
        d->bad_index = 1;
        int32_t v32 = 0;
        int64_t v64 = 0;
        if (is32) {
            err = cudaMemcpyAsync(&v32, (const int32_t *)d->indices + first, sizeof(v32), cudaMemcpyDeviceToHost,
                                  stream);
        } else {
            err = cudaMemcpyAsync(&v64, (const int64_t *)d->indices + first, sizeof(v64), cudaMemcpyDeviceToHost,
                                  stream);
        }
        if (err == cudaSuccess) {
            err = cudaStreamSynchronize(stream);
        }
        d->bad_value = is32 ? (int64_t)v32 : v64;
    }
    if (err != cudaSuccess) {
        status = ct_cuda_record_error(err, "embedding index check", __func__, __FILE__, __LINE__);
    }
    int fst = ct_cuda_caching_free(device, flag);
    return status != CT_CUDA_OK ? status : fst;
}

template <typename U>
__global__ void embedding_gather_kernel(U *out, const U *weight, const void *idx, bool is32, int64_t n, int64_t dim)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n * dim) {
        return;
    }
    int64_t r = i / dim, c = i % dim;
    out[i] = weight[load_index(idx, is32, r) * dim + c];
}

template <typename U>
int embedding_gather(const CtEmbeddingDesc *d, cudaStream_t stream)
{
    embedding_gather_kernel<U><<<ct_cuda_blocks(d->n * d->dim, kThreads), kThreads, 0, stream>>>(
        (U *)d->out, (const U *)d->weight, d->indices, d->index_dtype == CT_I32, d->n, d->dim);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

int embedding_status(CtEmbeddingDesc *d)
{
    CT_CUDA_TRY(ct_cuda_device_guard(d->device.index));
    cudaStream_t stream = ct_cuda_stream(d->device.index);
    bool ok;
    CT_CUDA_TRY(embedding_check(d, stream, &ok));
    if (!ok || d->n == 0 || d->dim == 0) {
        return CT_CUDA_OK;
    }
    switch (itemsize_of(d->dtype)) {
    case 1: return embedding_gather<uint8_t>(d, stream);
    case 2: return embedding_gather<uint16_t>(d, stream);
    case 4: return embedding_gather<uint32_t>(d, stream);
    default: return embedding_gather<uint64_t>(d, stream);
    }
}

__global__ void count_kernel(const void *idx, bool is32, int64_t n, unsigned long long *count)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    atomicAdd(&count[load_index(idx, is32, i)], 1ULL);
}

/* Thread c owns column c of every row: the additions into acc[v, c] happen in index order. */
template <int D>
__global__ void embedding_backward_cols_kernel(double *acc, const char *grad_out, const void *idx, bool is32,
                                               int64_t n, int64_t dim, int64_t padding_idx,
                                               const unsigned long long *count)
{
    typedef typename CtCudaType<D>::T T;
    int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= dim) {
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t v = load_index(idx, is32, i);
        if (v == padding_idx) {
            continue;
        }
        double scale = count != nullptr ? 1.0 / (double)count[v] : 1.0;
        double g = (double)ct_load<D>(grad_out + (i * dim + c) * (int64_t)sizeof(T));
        acc[v * dim + c] += g * scale;
    }
}

template <int D>
__global__ void store_acc_kernel(char *out, const double *acc, int64_t total)
{
    typedef typename CtCudaType<D>::T T;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) {
        return;
    }
    ct_store<D>(out + i * (int64_t)sizeof(T), acc[i]);
}

template <int D>
int embedding_backward_launch(CtEmbeddingDesc *d, cudaStream_t stream)
{
    const int device = d->device.index;
    const int64_t total = d->num * d->dim;
    if (total == 0) {
        return CT_CUDA_OK;
    }
    const bool is32 = d->index_dtype == CT_I32;
    void *acc = nullptr, *count = nullptr;
    int status = ct_cuda_caching_malloc(device, (size_t)total * sizeof(double), &acc);
    if (status == CT_CUDA_OK && d->scale_grad_by_freq) {
        status = ct_cuda_caching_malloc(device, (size_t)(d->num + 1) * sizeof(unsigned long long), &count);
    }
    cudaError_t err = cudaSuccess;
    if (status == CT_CUDA_OK) {
        err = cudaMemsetAsync(acc, 0, (size_t)total * sizeof(double), stream);
    }
    if (status == CT_CUDA_OK && err == cudaSuccess && count != nullptr) {
        err = cudaMemsetAsync(count, 0, (size_t)(d->num + 1) * sizeof(unsigned long long), stream);
        if (err == cudaSuccess && d->n > 0) {
            count_kernel<<<ct_cuda_blocks(d->n, kThreads), kThreads, 0, stream>>>(d->indices, is32, d->n,
                                                                                 (unsigned long long *)count);
            err = cudaGetLastError();
        }
    }
    if (status == CT_CUDA_OK && err == cudaSuccess && d->n > 0 && d->dim > 0) {
        embedding_backward_cols_kernel<D><<<ct_cuda_blocks(d->dim, 128), 128, 0, stream>>>(
            (double *)acc, (const char *)d->grad_out, d->indices, is32, d->n, d->dim, d->padding_idx,
            (const unsigned long long *)count);
        err = cudaGetLastError();
    }
    if (status == CT_CUDA_OK && err == cudaSuccess) {
        store_acc_kernel<D><<<ct_cuda_blocks(total, kThreads), kThreads, 0, stream>>>((char *)d->grad_weight,
                                                                                     (const double *)acc, total);
        err = cudaGetLastError();
    }
    if (status == CT_CUDA_OK && err != cudaSuccess) {
        status = ct_cuda_record_error(err, "embedding_backward", __func__, __FILE__, __LINE__);
    }
    if (acc != nullptr) {
        int fst = ct_cuda_caching_free(device, acc);
        status = status != CT_CUDA_OK ? status : fst;
    }
    if (count != nullptr) {
        int fst = ct_cuda_caching_free(device, count);
        status = status != CT_CUDA_OK ? status : fst;
    }
    return status;
}

int embedding_backward_status(CtEmbeddingDesc *d)
{
    CT_CUDA_TRY(ct_cuda_device_guard(d->device.index));
    cudaStream_t stream = ct_cuda_stream(d->device.index);
    bool ok;
    CT_CUDA_TRY(embedding_check(d, stream, &ok));
    if (!ok) {
        return CT_CUDA_OK;
    }
    CT_NN_FLOAT_DISPATCH(d->dtype, embedding_backward_launch, d, stream)
}

/* --- layer_norm (double statistics and math, as the CPU) --------------------------------------- */
constexpr int kLNThreads = 256; /* at most; a power of two */

/* Threads per row: a power of two from 32 to kLNThreads, about one per column (a short row does
 * not idle a block of 256). */
unsigned ln_threads(int64_t cols)
{
    unsigned t = 32;
    while (t < kLNThreads && t < cols) {
        t *= 2;
    }
    return t;
}

/* Sum of one value per thread over the block (blockDim.x a power of two), in a fixed tree order;
 * every thread gets it. */
__device__ double block_sum(double v, double *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sh[threadIdx.x] += sh[threadIdx.x + s];
        }
        __syncthreads();
    }
    double r = sh[0];
    __syncthreads();
    return r;
}

template <int D>
__device__ void row_moments(const char *xrow, int64_t n, double eps, double *sh, double *mean, double *rstd)
{
    typedef typename CtCudaType<D>::T T;
    double part = 0.0;
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) {
        part += (double)ct_load<D>(xrow + c * (int64_t)sizeof(T));
    }
    double m = block_sum(part, sh) / (double)n;
    part = 0.0;
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) {
        double dx = (double)ct_load<D>(xrow + c * (int64_t)sizeof(T)) - m;
        part += dx * dx;
    }
    double v = block_sum(part, sh) / (double)n; /* biased variance, as PyTorch */
    *mean = m;
    *rstd = 1.0 / sqrt(v + eps);
}

template <int D>
__global__ void layer_norm_kernel(CtLayerNormDesc d)
{
    typedef typename CtCudaType<D>::T T;
    __shared__ double sh[kLNThreads];
    const int64_t n = d.cols;
    const int64_t es = (int64_t)sizeof(T);
    for (int64_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
        const char *xrow = (const char *)d.x + r * n * es;
        double mean, rstd;
        row_moments<D>(xrow, n, d.eps, sh, &mean, &rstd);
        for (int64_t c = threadIdx.x; c < n; c += blockDim.x) {
            double w = d.weight ? (double)ct_load<D>((const char *)d.weight + c * es) : 1.0;
            double b = d.bias ? (double)ct_load<D>((const char *)d.bias + c * es) : 0.0;
            double x = (double)ct_load<D>(xrow + c * es);
            ct_store<D>((char *)d.out + (r * n + c) * es, (x - mean) * rstd * w + b);
        }
    }
}

/* grad_input rows, and each row's mean / rstd into stats (2 per row) for the column pass */
template <int D>
__global__ void layer_norm_backward_rows_kernel(CtLayerNormDesc d, double *stats)
{
    typedef typename CtCudaType<D>::T T;
    __shared__ double sh[kLNThreads];
    const int64_t n = d.cols;
    const int64_t es = (int64_t)sizeof(T);
    for (int64_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
        const char *xrow = (const char *)d.x + r * n * es;
        const char *grow = (const char *)d.grad_out + r * n * es;
        double mean, rstd;
        row_moments<D>(xrow, n, d.eps, sh, &mean, &rstd);
        if (threadIdx.x == 0 && stats != nullptr) {
            stats[2 * r] = mean;
            stats[2 * r + 1] = rstd;
        }
        if (d.grad_input == nullptr) {
            continue;
        }
        double pa = 0.0, pb = 0.0;
        for (int64_t c = threadIdx.x; c < n; c += blockDim.x) {
            double w = d.weight ? (double)ct_load<D>((const char *)d.weight + c * es) : 1.0;
            double xhat = ((double)ct_load<D>(xrow + c * es) - mean) * rstd;
            double dxhat = (double)ct_load<D>(grow + c * es) * w;
            pa += dxhat;
            pb += dxhat * xhat;
        }
        double a = block_sum(pa, sh) / (double)n;
        double bsum = block_sum(pb, sh) / (double)n;
        for (int64_t c = threadIdx.x; c < n; c += blockDim.x) {
            double w = d.weight ? (double)ct_load<D>((const char *)d.weight + c * es) : 1.0;
            double xhat = ((double)ct_load<D>(xrow + c * es) - mean) * rstd;
            double g = (double)ct_load<D>(grow + c * es);
            ct_store<D>((char *)d.grad_input + (r * n + c) * es, rstd * (g * w - a - xhat * bsum));
        }
    }
}

/* grad_weight / grad_bias: thread c sums its column over the rows in order (deterministic) */
template <int D>
__global__ void layer_norm_backward_cols_kernel(CtLayerNormDesc d, const double *stats)
{
    typedef typename CtCudaType<D>::T T;
    const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t n = d.cols;
    const int64_t es = (int64_t)sizeof(T);
    if (c >= n) {
        return;
    }
    double gw = 0.0, gb = 0.0;
    for (int64_t r = 0; r < d.rows; r++) {
        double g = (double)ct_load<D>((const char *)d.grad_out + (r * n + c) * es);
        double xhat = ((double)ct_load<D>((const char *)d.x + (r * n + c) * es) - stats[2 * r]) * stats[2 * r + 1];
        gw += g * xhat;
        gb += g;
    }
    if (d.grad_weight) {
        ct_store<D>((char *)d.grad_weight + c * es, gw);
    }
    if (d.grad_bias) {
        ct_store<D>((char *)d.grad_bias + c * es, gb);
    }
}

unsigned row_blocks(int64_t rows) { return (unsigned)(rows < 65535 * 4 ? (rows < 1 ? 1 : rows) : 65535 * 4); }

template <int D>
int layer_norm_launch(const CtLayerNormDesc *d, cudaStream_t stream)
{
    if (d->rows == 0 || d->cols == 0) {
        return CT_CUDA_OK;
    }
    layer_norm_kernel<D><<<row_blocks(d->rows), ln_threads(d->cols), 0, stream>>>(*d);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

template <int D>
int layer_norm_backward_launch(const CtLayerNormDesc *d, cudaStream_t stream)
{
    const int device = d->device.index;
    const bool want_cols = d->grad_weight != nullptr || d->grad_bias != nullptr;
    if (d->cols == 0) {
        return CT_CUDA_OK;
    }
    if (d->rows == 0) { /* sums over no rows */
        if (d->grad_weight) {
            CT_CUDA_CHECK(cudaMemsetAsync(d->grad_weight, 0, (size_t)d->cols * sizeof(typename CtCudaType<D>::T), stream));
        }
        if (d->grad_bias) {
            CT_CUDA_CHECK(cudaMemsetAsync(d->grad_bias, 0, (size_t)d->cols * sizeof(typename CtCudaType<D>::T), stream));
        }
        return CT_CUDA_OK;
    }
    void *stats = nullptr;
    if (want_cols) {
        CT_CUDA_TRY(ct_cuda_caching_malloc(device, (size_t)d->rows * 2 * sizeof(double), &stats));
    }
    int status = CT_CUDA_OK;
    layer_norm_backward_rows_kernel<D><<<row_blocks(d->rows), ln_threads(d->cols), 0, stream>>>(*d,
                                                                                       (double *)stats);
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess && want_cols) {
        layer_norm_backward_cols_kernel<D><<<ct_cuda_blocks(d->cols, 128), 128, 0, stream>>>(*d, (const double *)stats);
        err = cudaGetLastError();
    }
    if (err != cudaSuccess) {
        status = ct_cuda_record_error(err, "layer_norm_backward", __func__, __FILE__, __LINE__);
    }
    if (stats != nullptr) {
        int fst = ct_cuda_caching_free(device, stats);
        status = status != CT_CUDA_OK ? status : fst;
    }
    return status;
}

int layer_norm_status(const CtLayerNormDesc *d)
{
    CT_CUDA_TRY(ct_cuda_device_guard(d->device.index));
    cudaStream_t stream = ct_cuda_stream(d->device.index);
    CT_NN_FLOAT_DISPATCH(d->dtype, layer_norm_launch, d, stream)
}

int layer_norm_backward_status(const CtLayerNormDesc *d)
{
    CT_CUDA_TRY(ct_cuda_device_guard(d->device.index));
    cudaStream_t stream = ct_cuda_stream(d->device.index);
    CT_NN_FLOAT_DISPATCH(d->dtype, layer_norm_backward_launch, d, stream)
}

/* --- ordered sums --------------------------------------------------------------------------------
 * The CPU adds a loss's terms one after another in index order. So that CUDA gives the same bits,
 * a block computes the terms kOrderedThreads at a time into shared memory and thread 0 adds them
 * in order: the loads and the per-term math are parallel and coalesced, only the additions are
 * serial. */
constexpr int kOrderedThreads = 256;

/* Thread 0 gets the sum, in index order from 0.0, of value(i) over the i in [lo, hi) for which
 * value returns true (the others are skipped, as the CPU's `continue`). Every thread of the block
 * (blockDim.x == kOrderedThreads) must call it. */
template <class F>
__device__ double block_ordered_sum(int64_t lo, int64_t hi, F value)
{
    __shared__ double vals[kOrderedThreads];
    __shared__ bool present[kOrderedThreads];
    double total = 0.0;
    for (int64_t base = lo; base < hi; base += kOrderedThreads) {
        const int64_t i = base + threadIdx.x;
        double v = 0.0;
        present[threadIdx.x] = i < hi && value(i, &v);
        vals[threadIdx.x] = v;
        __syncthreads();
        if (threadIdx.x == 0) {
            const int m = hi - base < kOrderedThreads ? (int)(hi - base) : kOrderedThreads;
            for (int k = 0; k < m; k++) {
                if (present[k]) {
                    total += vals[k];
                }
            }
        }
        __syncthreads(); /* vals is refilled by the next round */
    }
    return total;
}

/* --- cross-entropy / NLL: one thread per row, in double as the CPU's rows. The pre-pass (range
 * check, class-weight sum, mean's denominator) and the SUM/MEAN total are one-block ordered sums
 * (the CPU's order of additions). A row whose target is out of range reads nothing out of bounds:
 * its loss or gradient is NaN. The forward copies the pre-pass's result back (one wait) to
 * report a bad target, as the CPU raises; the backward does not wait: autograd calls it with the
 * target its forward checked (saved, under the version check). -------------------------------- */
struct NLLScratch {
    double denom, wsum;
    unsigned long long first_bad; /* the lowest row with a bad target, or ~0 */
    long long bad_value;
};

__device__ __forceinline__ int64_t nll_target(const CtNLLDesc &d, int64_t r)
{
    return d.target_dtype == CT_U8 ? (int64_t)((const uint8_t *)d.target)[r] : ((const int64_t *)d.target)[r];
}

__device__ __forceinline__ bool nll_in_range(const CtNLLDesc &d, int64_t t) { return t >= 0 && t < d.classes; }

template <int D>
__device__ __forceinline__ double ld(const void *base, int64_t i)
{
    return (double)ct_load<D>((const char *)base + i * (int64_t)sizeof(typename CtCudaType<D>::T));
}

template <int D>
__device__ __forceinline__ void st(void *base, int64_t i, double v)
{
    ct_store<D>((char *)base + i * (int64_t)sizeof(typename CtCudaType<D>::T), v);
}

template <int D>
__device__ double row_lse(const CtNLLDesc &d, int64_t base)
{
    const int64_t C = d.classes, inner = d.inner;
    double m = -INFINITY;
    for (int64_t c = 0; c < C; c++) {
        double v = ld<D>(d.input, base + c * inner);
        if (v > m || isnan(v)) {
            m = v;
        }
    }
    if (isinf(m)) {
        return m;
    }
    double s = 0.0;
    for (int64_t c = 0; c < C; c++) {
        s += exp(ld<D>(d.input, base + c * inner) - m);
    }
    return m + log(s);
}

/* nll.c's nll_prepass by one block of kOrderedThreads; thread 0 writes *out. */
template <int D>
__device__ void nll_prepass_block(const CtNLLDesc &d, NLLScratch *out)
{
    __shared__ unsigned long long first_bad;
    const int64_t rows = d.outer * d.inner;
    if (threadIdx.x == 0) {
        first_bad = ~0ull;
    }
    __syncthreads();
    double wsum = (double)d.classes;
    if (d.weight != nullptr) {
        wsum = block_ordered_sum(0, d.classes, [&](int64_t c, double *v) {
            *v = ld<D>(d.weight, c);
            return true;
        });
    }
    double denom = (double)rows;
    if (!d.soft) {
        denom = block_ordered_sum(0, rows, [&](int64_t r, double *v) {
            const int64_t t = nll_target(d, r);
            if (t == d.ignore_index) {
                return false;
            }
            if (!nll_in_range(d, t)) {
                atomicMin(&first_bad, (unsigned long long)r);
                return false;
            }
            *v = d.weight != nullptr ? ld<D>(d.weight, t) : 1.0;
            return true;
        });
    }
    __syncthreads(); /* every atomicMin is done */
    if (threadIdx.x == 0) {
        out->wsum = wsum;
        out->denom = denom;
        out->first_bad = first_bad;
        out->bad_value = first_bad == ~0ull ? 0 : (long long)nll_target(d, (int64_t)first_bad);
    }
}

/* The backward's pre-pass (one block). */
template <int D>
__global__ void __launch_bounds__(kOrderedThreads) nll_prepass_kernel(CtNLLDesc d, NLLScratch *out)
{
    nll_prepass_block<D>(d, out);
}

template <int D>
__global__ void nll_forward_kernel(CtNLLDesc d, double *losses)
{
    const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t rows = d.outer * d.inner;
    if (r >= rows) {
        return;
    }
    const int64_t C = d.classes, inner = d.inner;
    const double ls = d.label_smoothing;
    const int64_t base = (r / inner) * C * inner + r % inner;
    double loss = 0.0;
    if (!d.soft) {
        int64_t t = nll_target(d, r);
        if (t != d.ignore_index && !nll_in_range(d, t)) {
            loss = NAN;
        } else if (t != d.ignore_index) {
            double wt = d.weight ? ld<D>(d.weight, t) : 1.0;
            if (d.is_nll) {
                loss = -wt * ld<D>(d.input, base + t * inner);
            } else {
                double lse = row_lse<D>(d, base);
                loss = (1.0 - ls) * wt * (lse - ld<D>(d.input, base + t * inner));
                if (ls > 0.0) {
                    double smooth = 0.0;
                    for (int64_t c = 0; c < C; c++) {
                        double wc = d.weight ? ld<D>(d.weight, c) : 1.0;
                        smooth += wc * (lse - ld<D>(d.input, base + c * inner));
                    }
                    loss += ls / (double)C * smooth;
                }
            }
        }
    } else {
        double lse = row_lse<D>(d, base);
        for (int64_t c = 0; c < C; c++) {
            double y = ld<D>(d.target, base + c * inner);
            double yc = ls > 0.0 ? y * (1.0 - ls) + ls / (double)C : y;
            double wc = d.weight ? ld<D>(d.weight, c) : 1.0;
            loss += wc * yc * (lse - ld<D>(d.input, base + c * inner));
        }
    }
    if (d.reduction == CT_REDUCTION_NONE) {
        st<D>(d.out, r, loss);
    } else {
        losses[r] = loss;
    }
}

/* The forward's last step, one block of kOrderedThreads: the pre-pass, then (SUM/MEAN) the rows'
 * losses added in row order, as the CPU's total. */
template <int D>
__global__ void __launch_bounds__(kOrderedThreads) nll_finish_kernel(CtNLLDesc d, const double *losses,
                                                                      NLLScratch *sc)
{
    nll_prepass_block<D>(d, sc);
    if (d.reduction == CT_REDUCTION_NONE) {
        return;
    }
    const double total = block_ordered_sum(0, d.outer * d.inner, [&](int64_t r, double *v) {
        *v = losses[r];
        return true;
    });
    if (threadIdx.x == 0) {
        /* 0 / 0 is NaN, as PyTorch's mean over no (or only ignored) rows */
        st<D>(d.out, 0, d.reduction == CT_REDUCTION_MEAN ? total / sc->denom : total); /* thread 0 wrote it */
    }
}

template <int D>
__global__ void nll_backward_kernel(CtNLLDesc d, const NLLScratch *sc)
{
    const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t rows = d.outer * d.inner;
    if (r >= rows) {
        return;
    }
    const int64_t C = d.classes, inner = d.inner;
    const double ls = d.label_smoothing;
    const int64_t base = (r / inner) * C * inner + r % inner;
    double s;
    if (d.reduction == CT_REDUCTION_NONE) {
        s = ld<D>(d.grad_out, r);
    } else {
        s = ld<D>(d.grad_out, 0);
        if (d.reduction == CT_REDUCTION_MEAN) {
            s /= sc->denom;
        }
    }
    if (!d.soft) {
        int64_t t = nll_target(d, r);
        if (t == d.ignore_index || !nll_in_range(d, t)) {
            const double fill = t == d.ignore_index ? 0.0 : NAN;
            for (int64_t c = 0; c < C; c++) {
                st<D>(d.grad_input, base + c * inner, fill);
            }
            return;
        }
        double wt = d.weight ? ld<D>(d.weight, t) : 1.0;
        if (d.is_nll) {
            for (int64_t c = 0; c < C; c++) {
                st<D>(d.grad_input, base + c * inner, c == t ? -s * wt : 0.0);
            }
            return;
        }
        double lse = row_lse<D>(d, base);
        for (int64_t c = 0; c < C; c++) {
            double pc = exp(ld<D>(d.input, base + c * inner) - lse);
            double gc = (1.0 - ls) * wt * (pc - (c == t ? 1.0 : 0.0));
            if (ls > 0.0) {
                double wc = d.weight ? ld<D>(d.weight, c) : 1.0;
                gc += ls / (double)C * (pc * sc->wsum - wc);
            }
            st<D>(d.grad_input, base + c * inner, s * gc);
        }
        return;
    }
    double lse = row_lse<D>(d, base);
    double wy = 0.0;
    for (int64_t c = 0; c < C; c++) {
        double y = ld<D>(d.target, base + c * inner);
        y = ls > 0.0 ? y * (1.0 - ls) + ls / (double)C : y;
        wy += (d.weight ? ld<D>(d.weight, c) : 1.0) * y;
    }
    for (int64_t c = 0; c < C; c++) {
        double x = ld<D>(d.input, base + c * inner);
        double y = ld<D>(d.target, base + c * inner);
        y = ls > 0.0 ? y * (1.0 - ls) + ls / (double)C : y;
        double wc = d.weight ? ld<D>(d.weight, c) : 1.0;
        double gx = s * (exp(x - lse) * wy - wc * y);
        if (d.grad_target != nullptr) {
            /* written after the reads of this class: grad_target never aliases target */
            st<D>(d.grad_target, base + c * inner, -s * (1.0 - ls) * wc * (x - lse));
        }
        st<D>(d.grad_input, base + c * inner, gx);
    }
}

template <int D>
int nll_run(CtNLLDesc *d, bool backward, NLLScratch *sc, double *losses, cudaStream_t stream)
{
    const int64_t rows = d->outer * d->inner;
    if (backward) {
        nll_prepass_kernel<D><<<1, kOrderedThreads, 0, stream>>>(*d, sc);
        CT_CUDA_CHECK_LAUNCH();
        if (rows > 0) {
            nll_backward_kernel<D><<<ct_cuda_blocks(rows, 128), 128, 0, stream>>>(*d, sc);
            CT_CUDA_CHECK_LAUNCH();
        }
        return CT_CUDA_OK;
    }
    if (rows > 0) {
        nll_forward_kernel<D><<<ct_cuda_blocks(rows, 128), 128, 0, stream>>>(*d, losses);
        CT_CUDA_CHECK_LAUNCH();
    }
    nll_finish_kernel<D><<<1, kOrderedThreads, 0, stream>>>(*d, losses, sc);
    CT_CUDA_CHECK_LAUNCH();
    /* the one wait: a bad target is reported as the CPU reports it (its output is discarded) */
    NLLScratch host;
    CT_CUDA_TRY(ct_cuda_sync_debug_check());
    CT_CUDA_CHECK(cudaMemcpyAsync(&host, sc, sizeof(host), cudaMemcpyDeviceToHost, stream));
    CT_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (host.first_bad != ~0ull) {
        d->bad_target = 1;
        d->bad_value = (int64_t)host.bad_value;
    }
    return CT_CUDA_OK;
}

template <int D>
int nll_launch(CtNLLDesc *d, bool backward, cudaStream_t stream)
{
    const int device = d->device.index;
    const int64_t rows = d->outer * d->inner;
    const bool need_losses = !backward && d->reduction != CT_REDUCTION_NONE;
    /* one scratch block: the pre-pass's result, then (forward SUM/MEAN) the rows' losses */
    const size_t bytes = sizeof(NLLScratch) + (need_losses ? (size_t)rows * sizeof(double) : 0);
    static_assert(sizeof(NLLScratch) % sizeof(double) == 0, "the losses follow the scratch, aligned");
    void *sc = nullptr;
    CT_CUDA_TRY(ct_cuda_caching_malloc(device, bytes, &sc));
    double *losses = need_losses ? (double *)((char *)sc + sizeof(NLLScratch)) : nullptr;
    int status = nll_run<D>(d, backward, (NLLScratch *)sc, losses, stream);
    int fst = ct_cuda_caching_free(device, sc);
    return status != CT_CUDA_OK ? status : fst;
}

int nll_status(CtNLLDesc *d, bool backward)
{
    CT_CUDA_TRY(ct_cuda_device_guard(d->device.index));
    cudaStream_t stream = ct_cuda_stream(d->device.index);
    CT_NN_FLOAT_DISPATCH(d->dtype, nll_launch, d, backward, stream)
}

/* --- pointwise losses: nn_math.h's per-element functions; sums in the CPU's order (in order within
 * each 4096-element block: one ordered-sum block per block of elements; then the blocks' partials
 * in order) ----------------------------------------------------------------------------------------- */
constexpr int64_t kLossBlock = 4096; /* nn.c's CT_LOSS_BLOCK */

/* Block b (one CUDA block each) of the elements: their losses (stored for 'none') and, for the
 * reductions, their sum in order into partial[b]; the BCE range flags into *bad. */
template <int D>
__global__ void __launch_bounds__(kOrderedThreads) loss_forward_kernel(CtPointwiseLossDesc d, double *partial,
                                                                        unsigned int *bad, int64_t nblocks)
{
    for (int64_t b = blockIdx.x; b < nblocks; b += gridDim.x) {
        const int64_t lo = b * kLossBlock, hi = lo + kLossBlock < d.n ? lo + kLossBlock : d.n;
        unsigned int flags = 0;
        const double sum = block_ordered_sum(lo, hi, [&](int64_t i, double *l) {
            double x = ld<D>(d.input, i), y = ld<D>(d.target, i);
            double w = d.weight ? ld<D>(d.weight, i) : 1.0, pw = d.pos_weight ? ld<D>(d.pos_weight, i) : 1.0;
            if (d.kind == CT_LOSS_BCE) {
                if (!(x >= 0.0 && x <= 1.0)) {
                    flags |= 1u;
                } else if (!(y >= 0.0 && y <= 1.0)) {
                    flags |= 2u;
                }
            }
            *l = ct_loss_value(d.kind, x, y, w, pw, d.beta);
            if (d.reduction == CT_REDUCTION_NONE) {
                st<D>(d.out, i, *l);
            }
            return partial != nullptr;
        });
        if (partial != nullptr && threadIdx.x == 0) {
            partial[b] = sum;
        }
        if (flags != 0) {
            atomicOr(bad, flags);
        }
    }
}

/* scratch[0] = the mean's divisor (nn.c's loss_mean_divisor, same order); one block */
template <int D>
__global__ void __launch_bounds__(kOrderedThreads) loss_divisor_kernel(CtPointwiseLossDesc d, double *scratch)
{
    double div = (double)d.n;
    if (d.weight != nullptr && (d.kind == CT_LOSS_MSE || d.kind == CT_LOSS_L1)) {
        div = block_ordered_sum(0, d.n, [&](int64_t i, double *v) {
            *v = ld<D>(d.weight, i);
            return true;
        });
    }
    if (threadIdx.x == 0) {
        scratch[0] = div;
    }
}

/* The blocks' partials in order; one block */
template <int D>
__global__ void __launch_bounds__(kOrderedThreads) loss_total_kernel(CtPointwiseLossDesc d, const double *partial,
                                                                      int64_t nblocks, const double *scratch)
{
    const double total = block_ordered_sum(0, nblocks, [&](int64_t b, double *v) {
        *v = partial[b];
        return true;
    });
    if (threadIdx.x == 0) {
        st<D>(d.out, 0, d.reduction == CT_REDUCTION_MEAN ? total / scratch[0] : total);
    }
}

template <int D>
__global__ void loss_backward_kernel(CtPointwiseLossDesc d, const double *scratch)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) {
        return;
    }
    double g;
    if (d.reduction == CT_REDUCTION_NONE) {
        g = ld<D>(d.grad_out, i);
    } else {
        g = ld<D>(d.grad_out, 0);
        if (d.reduction == CT_REDUCTION_MEAN) {
            g /= scratch[0];
        }
    }
    double x = ld<D>(d.input, i), y = ld<D>(d.target, i);
    double w = d.weight ? ld<D>(d.weight, i) : 1.0, pw = d.pos_weight ? ld<D>(d.pos_weight, i) : 1.0;
    double gx, gy;
    ct_loss_grads(d.kind, x, y, w, pw, d.beta, &gx, &gy);
    if (d.grad_input) {
        st<D>(d.grad_input, i, gx * g);
    }
    if (d.grad_target) {
        st<D>(d.grad_target, i, gy * g);
    }
}

/* scratch layout: double divisor, double partial[nblocks], then the uint flags */
template <int D>
int loss_launch(CtPointwiseLossDesc *d, bool backward, cudaStream_t stream)
{
    const int device = d->device.index;
    const int64_t nblocks = (d->n + kLossBlock - 1) / kLossBlock;
    const size_t bytes = sizeof(double) * (size_t)(nblocks + 2) + sizeof(unsigned int);
    void *scratch = nullptr;
    if (!backward && d->kind == CT_LOSS_BCE) { /* its target check waits */
        CT_CUDA_TRY(ct_cuda_sync_debug_check());
    }
    CT_CUDA_TRY(ct_cuda_caching_malloc(device, bytes, &scratch));
    double *div = (double *)scratch, *partial = div + 1;
    unsigned int *bad = (unsigned int *)(partial + nblocks + 1);
    cudaError_t err = cudaSuccess;
    unsigned int flags = 0;
    if (d->reduction == CT_REDUCTION_MEAN) {
        loss_divisor_kernel<D><<<1, kOrderedThreads, 0, stream>>>(*d, div);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess && backward) {
        if (d->n > 0) {
            loss_backward_kernel<D><<<ct_cuda_blocks(d->n, kThreads), kThreads, 0, stream>>>(*d, div);
            err = cudaGetLastError();
        }
    } else if (err == cudaSuccess) {
        err = cudaMemsetAsync(bad, 0, sizeof(unsigned int), stream);
        if (err == cudaSuccess && nblocks > 0) {
            loss_forward_kernel<D><<<(unsigned int)(nblocks < (1 << 20) ? nblocks : (1 << 20)), kOrderedThreads, 0, stream>>>(
                *d, d->reduction == CT_REDUCTION_NONE ? nullptr : partial, bad, nblocks);
            err = cudaGetLastError();
        }
        if (err == cudaSuccess && d->reduction != CT_REDUCTION_NONE) {
            loss_total_kernel<D><<<1, kOrderedThreads, 0, stream>>>(*d, partial, nblocks, div);
            err = cudaGetLastError();
        }
        if (err == cudaSuccess && d->kind == CT_LOSS_BCE) {
            err = cudaMemcpyAsync(&flags, bad, sizeof(flags), cudaMemcpyDeviceToHost, stream);
            if (err == cudaSuccess) {
                err = cudaStreamSynchronize(stream);
            }
            d->bad = (flags & 1u) ? 1 : (flags & 2u) ? 2 : 0;
        }
    }
    int status = CT_CUDA_OK;
    if (err != cudaSuccess) {
        status = ct_cuda_record_error(err, "pointwise loss", __func__, __FILE__, __LINE__);
    }
    int fst = ct_cuda_caching_free(device, scratch);
    return status != CT_CUDA_OK ? status : fst;
}

int loss_status(CtPointwiseLossDesc *d, bool backward)
{
    CT_CUDA_TRY(ct_cuda_device_guard(d->device.index));
    cudaStream_t stream = ct_cuda_stream(d->device.index);
    CT_NN_FLOAT_DISPATCH(d->dtype, loss_launch, d, backward, stream)
}

/* --- CTC loss: one block per sample, threads over the extended label positions, a __syncthreads per
 * frame; the gradient one block per (frame, sample), threads over the classes ------------------------- */
template <typename T>
__global__ void ctc_alpha_kernel(CtCTCDesc d)
{
    int64_t b = blockIdx.x, T_all = d.T, L = d.L;
    int64_t Tb = d.lengths[2 * b], Lb = 2 * d.lengths[2 * b + 1] + 1;
    const int64_t *ext = d.ext + b * L;
    const T *lp = (const T *)d.log_probs;
    T *la = (T *)d.log_alpha + b * T_all * L;
    for (int64_t i = threadIdx.x; i < T_all * L; i += blockDim.x) {
        la[i] = (T)-INFINITY;
    }
    __syncthreads();
    for (int64_t t = 0; t < Tb; t++) {
        for (int64_t s = threadIdx.x; s < Lb; s += blockDim.x) {
            double v;
            if (t == 0) {
                v = s < 2 ? 0.0 : -INFINITY;
            } else {
                const T *prev = la + (t - 1) * L;
                v = ct_ctc_lse3((double)prev[s], s >= 1 ? (double)prev[s - 1] : -INFINITY,
                                s >= 2 && ext[s] != ext[s - 2] ? (double)prev[s - 2] : -INFINITY);
            }
            if (v != -INFINITY) {
                la[t * L + s] = (T)(v + (double)lp[(t * d.N + b) * d.C + ext[s]]);
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        double lse = 0.0;
        if (Tb > 0) {
            const T *last = la + (Tb - 1) * L;
            lse = ct_ctc_lse3((double)last[Lb - 1], Lb > 1 ? (double)last[Lb - 2] : -INFINITY, -INFINITY);
        } else if (Lb > 1) {
            lse = -INFINITY;
        }
        ((T *)d.nll)[b] = (T)-lse;
    }
}

/* The live frames of sample b in the backward (none when zero_infinity drops it). */
template <typename T>
__device__ int64_t ctc_live_frames(const CtCTCDesc &d, int64_t b)
{
    double nll = (double)((const T *)d.nll)[b];
    return d.zero_infinity && nll == INFINITY ? 0 : d.lengths[2 * b];
}

template <typename T>
__global__ void ctc_beta_kernel(CtCTCDesc d)
{
    int64_t b = blockIdx.x, L = d.L;
    int64_t Tb = ctc_live_frames<T>(d, b), Lb = 2 * d.lengths[2 * b + 1] + 1;
    const int64_t *ext = d.ext + b * L;
    const T *lp = (const T *)d.log_probs;
    double *beta = d.work + b * (d.T * L + d.C);
    for (int64_t t = Tb - 1; t >= 0; t--) {
        for (int64_t s = threadIdx.x; s < Lb; s += blockDim.x) {
            double v = ct_ctc_beta_in(t == Tb - 1 ? NULL : beta + (t + 1) * L, ext, s, Lb);
            beta[t * L + s] = v == -INFINITY ? v : v + (double)lp[(t * d.N + b) * d.C + ext[s]];
        }
        __syncthreads();
    }
}

template <typename T>
__global__ void ctc_grad_kernel(CtCTCDesc d)
{
    int64_t b = blockIdx.x / d.T, t = blockIdx.x % d.T, L = d.L;
    int64_t Tb = ctc_live_frames<T>(d, b), Lb = 2 * d.lengths[2 * b + 1] + 1;
    const int64_t *ext = d.ext + b * L;
    const T *lp = (const T *)d.log_probs + (t * d.N + b) * d.C;
    const T *la = (const T *)d.log_alpha + (b * d.T + t) * L;
    const double *beta = d.work + b * (d.T * L + d.C) + t * L;
    double nll = (double)((const T *)d.nll)[b], gr = (double)((const T *)d.grad_out)[b];
    T *out = (T *)d.grad_input + (t * d.N + b) * d.C;
    for (int64_t c = threadIdx.x; c < d.C; c += blockDim.x) {
        if (t >= Tb) {
            out[c] = (T)0;
            continue;
        }
        double lcab = -INFINITY;
        for (int64_t s = 0; s < Lb; s++) {
            if (ext[s] == c) {
                lcab = ct_ctc_lse3(lcab, (double)la[s] + beta[s], -INFINITY);
            }
        }
        out[c] = (T)ct_ctc_grad((double)lp[c], lcab, nll, gr);
    }
}

unsigned ctc_threads(int64_t n) { return n <= 32 ? 32 : n <= 64 ? 64 : n <= 128 ? 128 : 256; }

template <typename T>
int ctc_launch(const CtCTCDesc *d, bool backward, cudaStream_t stream)
{
    if (!backward) {
        ctc_alpha_kernel<T><<<(unsigned)d->N, ctc_threads(d->L), 0, stream>>>(*d);
        CT_CUDA_CHECK_LAUNCH();
        return CT_CUDA_OK;
    }
    ctc_beta_kernel<T><<<(unsigned)d->N, ctc_threads(d->L), 0, stream>>>(*d);
    CT_CUDA_CHECK_LAUNCH();
    ctc_grad_kernel<T><<<(unsigned)(d->N * d->T), ctc_threads(d->C), 0, stream>>>(*d);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

int ctc_status(const CtCTCDesc *d, bool backward)
{
    CT_CUDA_TRY(ct_cuda_device_guard(d->device.index));
    if (d->N == 0 || d->T == 0) {
        return CT_CUDA_OK;
    }
    cudaStream_t stream = ct_cuda_stream(d->device.index);
    switch (d->dtype) {
    case CT_F32: return ctc_launch<float>(d, backward, stream);
    case CT_F64: return ctc_launch<double>(d, backward, stream);
    default: return ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "ctc_loss: unsupported dtype on CUDA");
    }
}

/* grid_sampler_2d / 3d: one thread per output point (all channels); the backward scatters into grad_input
 * with atomicAdd (float32 / float64) and writes grad_grid. */
__global__ void grid_sample_kernel(CtGridSampleDesc d, int64_t n, bool backward)
{
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n; p += (int64_t)gridDim.x * blockDim.x) {
        if (backward) {
            ct_gs_point_backward(&d, p);
        } else {
            ct_gs_point_forward(&d, p);
        }
    }
}

int grid_sample_status(const CtGridSampleDesc *d, bool backward)
{
    CT_CUDA_TRY(ct_cuda_device_guard(d->device.index));
    const int64_t n = d->N * ct_gs_points(d);
    if (n == 0) {
        return CT_CUDA_OK;
    }
    if (d->dtype != CT_F32 && d->dtype != CT_F64) {
        return ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "grid_sampler: unsupported dtype on CUDA");
    }
    const int64_t blocks = (n + 255) / 256;
    grid_sample_kernel<<<(unsigned)(blocks < 65535 ? blocks : 65535), 256, 0, ct_cuda_stream(d->device.index)>>>(
        *d, n, backward);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

int finish(int status) { return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status); }

} // namespace

int ct_cuda_nn_linear(const CtLinearDesc *d) { return finish(linear_status(d)); }
int ct_cuda_nn_leaky_relu(CtDType dtype, CtDevice device, int64_t n, const void *x, const void *grad, double slope,
                          void *out)
{
    return finish(leaky_relu_status(dtype, device, n, x, grad, slope, out));
}
int ct_cuda_nn_embedding(CtEmbeddingDesc *d) { return finish(embedding_status(d)); }
int ct_cuda_nn_embedding_backward(CtEmbeddingDesc *d) { return finish(embedding_backward_status(d)); }

int ct_cuda_nn_nll(CtNLLDesc *d) { return finish(nll_status(d, false)); }
int ct_cuda_nn_nll_backward(CtNLLDesc *d) { return finish(nll_status(d, true)); }
int ct_cuda_nn_pointwise_loss(CtPointwiseLossDesc *d) { return finish(loss_status(d, false)); }
int ct_cuda_nn_pointwise_loss_backward(const CtPointwiseLossDesc *d)
{
    CtPointwiseLossDesc copy = *d; /* loss_status writes only d->bad, and only in the forward */
    return finish(loss_status(&copy, true));
}
int ct_cuda_nn_layer_norm(const CtLayerNormDesc *d) { return finish(layer_norm_status(d)); }
int ct_cuda_nn_layer_norm_backward(const CtLayerNormDesc *d) { return finish(layer_norm_backward_status(d)); }
int ct_cuda_nn_trunc_normal_transform(CtDType dtype, CtDevice device, int64_t n, void *data, double mean, double std,
                                      double a, double b)
{
    return finish(trunc_normal_status(dtype, device, n, data, mean, std, a, b));
}
int ct_cuda_nn_ctc_loss(const CtCTCDesc *d) { return finish(ctc_status(d, false)); }
int ct_cuda_nn_ctc_loss_backward(const CtCTCDesc *d) { return finish(ctc_status(d, true)); }
int ct_cuda_nn_grid_sample(const CtGridSampleDesc *d) { return finish(grid_sample_status(d, false)); }
int ct_cuda_nn_grid_sample_backward(const CtGridSampleDesc *d) { return finish(grid_sample_status(d, true)); }
