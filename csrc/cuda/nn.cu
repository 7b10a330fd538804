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
 * Not written yet (stubs raising NotImplementedError): nll, nll_backward, pointwise_loss(+backward),
 * layer_norm(+backward), trunc_normal_transform. */
#include "allocator.cuh"
#include "blas.cuh"
#include "common.cuh"
#include "nn.h"

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
        *ok = false;
        d->bad_index = 1;
        if (is32) {
            int32_t v32 = 0;
            err = cudaMemcpy(&v32, (const int32_t *)d->indices + first, sizeof(v32), cudaMemcpyDeviceToHost);
            d->bad_value = v32;
        } else {
            int64_t v64 = 0;
            err = cudaMemcpy(&v64, (const int64_t *)d->indices + first, sizeof(v64), cudaMemcpyDeviceToHost);
            d->bad_value = v64;
        }
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

/* --- not written yet: NotImplementedError instead of a NULL call -------------------------------- */
namespace {
int not_implemented(const char *what)
{
    return ct_cuda_raise(ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "%s is not implemented on CUDA yet", what));
}
} // namespace

int ct_cuda_nn_nll(CtNLLDesc *d)
{
    (void)d;
    return not_implemented("nll_loss / cross_entropy");
}
int ct_cuda_nn_nll_backward(CtNLLDesc *d)
{
    (void)d;
    return not_implemented("nll_loss / cross_entropy backward");
}
int ct_cuda_nn_pointwise_loss(CtPointwiseLossDesc *d)
{
    (void)d;
    return not_implemented("this loss");
}
int ct_cuda_nn_pointwise_loss_backward(const CtPointwiseLossDesc *d)
{
    (void)d;
    return not_implemented("this loss's backward");
}
int ct_cuda_nn_layer_norm(const CtLayerNormDesc *d)
{
    (void)d;
    return not_implemented("layer_norm");
}
int ct_cuda_nn_layer_norm_backward(const CtLayerNormDesc *d)
{
    (void)d;
    return not_implemented("layer_norm backward");
}
int ct_cuda_nn_trunc_normal_transform(CtDType dtype, CtDevice device, int64_t n, void *data, double mean, double std,
                                      double a, double b)
{
    (void)dtype, (void)device, (void)n, (void)data, (void)mean, (void)std, (void)a, (void)b;
    return not_implemented("trunc_normal_");
}
