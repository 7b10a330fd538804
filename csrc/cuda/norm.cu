/* norm.cu: batch norm and group norm on CUDA (CtNNKernels.channel_norm / channel_norm_backward, see
 * CtChannelNormDesc in nn.h), with norm_math.h's unit layout and formulas, shared with the CPU.
 *
 * - statistics: one block per unit (a channel, or an (n, group) pair), 32 to 256 threads, each
 *   summing a strided share of the unit's values in double, then a tree over the block in a fixed
 *   order: deterministic, no atomics. Thread 0 writes mean / invstd into a double scratch buffer
 *   and, in the forward of batch norm in training, updates the running statistics.
 * - forward / grad_input: elementwise, one thread per element reading its unit's statistics.
 * - backward sums: per unit (sum dy, sum dy xhat, for grad_input with batch statistics) and per
 *   channel (sum g xhat, sum g: grad_weight / grad_bias), one block each, as the statistics. */
#include "allocator.cuh"
#include "common.cuh"
#include "norm_math.h"

namespace {

constexpr int kNormThreads = 256; /* at most; a power of two */
constexpr int kElemThreads = 256;

/* Threads per unit: a power of two from 32 to kNormThreads, about one per value. */
unsigned unit_threads(int64_t values)
{
    unsigned t = 32;
    while (t < kNormThreads && t < values) {
        t *= 2;
    }
    return t;
}

unsigned grid_of(int64_t blocks) { return (unsigned)(blocks < 1 ? 1 : blocks < 65535 * 4 ? blocks : 65535 * 4); }

/* Sums of a and b over the block (blockDim.x a power of two) in a fixed tree order; every thread
 * gets both. sh: 2 * blockDim.x doubles. */
__device__ void block_sum2(double *a, double *b, double *sh)
{
    const unsigned t = threadIdx.x, n = blockDim.x;
    sh[t] = *a;
    sh[n + t] = *b;
    __syncthreads();
    for (unsigned s = n / 2; s > 0; s >>= 1) {
        if (t < s) {
            sh[t] += sh[t + s];
            sh[n + t] += sh[n + t + s];
        }
        __syncthreads();
    }
    *a = sh[0];
    *b = sh[n];
    __syncthreads();
}

/* A parameter (weight, bias, running statistic): float32 (f32) or the input's dtype D. */
template <int D>
__device__ __forceinline__ double load_param(const void *p, bool f32, int64_t i)
{
    if (f32) {
        return (double)((const float *)p)[i];
    }
    return (double)ct_load<D>((const char *)p + i * (int64_t)sizeof(typename CtCudaType<D>::T));
}

template <int D>
__device__ __forceinline__ void store_param(void *p, bool f32, int64_t i, double v)
{
    if (f32) {
        ((float *)p)[i] = (float)v;
    } else {
        ct_store<D>((char *)p + i * (int64_t)sizeof(typename CtCudaType<D>::T), v);
    }
}

template <int D>
__device__ __forceinline__ double load_x(const void *p, int64_t i)
{
    return (double)ct_load<D>((const char *)p + i * (int64_t)sizeof(typename CtCudaType<D>::T));
}

/* stats[2u], stats[2u + 1] = mean, invstd of each unit; the forward (d.out set) of batch norm in
 * training also updates the running statistics. */
template <int D>
__global__ void unit_stats_kernel(CtChannelNormDesc d, double *stats)
{
    __shared__ double sh[2 * kNormThreads];
    const bool pf32 = d.param_dtype == CT_F32;
    const int64_t units = ct_norm_units(&d);
    for (int64_t u = blockIdx.x; u < units; u += gridDim.x) {
        if (!d.use_input_stats) {
            if (threadIdx.x == 0) {
                stats[2 * u] = load_param<D>(d.running_mean, pf32, u);
                stats[2 * u + 1] = 1.0 / sqrt(load_param<D>(d.running_var, pf32, u) + d.eps);
            }
            continue;
        }
        const CtNormSegments s = ct_norm_unit(&d, u);
        const int64_t m = s.count * d.L;
        double sum = 0.0, unused = 0.0;
        for (int64_t i = threadIdx.x; i < m; i += blockDim.x) {
            sum += load_x<D>(d.x, ct_norm_offset(&s, d.L, i));
        }
        block_sum2(&sum, &unused, sh);
        const double mean = sum / (double)m;
        double sq = 0.0;
        for (int64_t i = threadIdx.x; i < m; i += blockDim.x) {
            double v = load_x<D>(d.x, ct_norm_offset(&s, d.L, i)) - mean;
            sq += v * v;
        }
        block_sum2(&sq, &unused, sh);
        if (threadIdx.x == 0) {
            stats[2 * u] = mean;
            stats[2 * u + 1] = 1.0 / sqrt(sq / (double)m + d.eps); /* biased variance */
            if (d.out != nullptr && d.groups == 0 && d.running_mean != nullptr) {
                double rm = load_param<D>(d.running_mean, pf32, u), rv = load_param<D>(d.running_var, pf32, u);
                store_param<D>(d.running_mean, pf32, u, ct_norm_running(rm, mean, d.momentum));
                store_param<D>(d.running_var, pf32, u, ct_norm_running(rv, sq / ((double)m - 1.0), d.momentum));
            }
        }
    }
}

/* out = xhat w[c] + b[c] (forward), or grad_input (backward), one element per thread */
template <int D>
__global__ void elementwise_kernel(CtChannelNormDesc d, const double *stats, const double *unit_sums)
{
    const bool pf32 = d.param_dtype == CT_F32;
    const int64_t numel = d.N * d.C * d.L;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = i / d.L, n = row / d.C, c = row % d.C, u = ct_norm_unit_of(&d, n, c);
        const double mean = stats[2 * u], invstd = stats[2 * u + 1];
        const double w = d.weight ? load_param<D>(d.weight, pf32, c) : 1.0;
        const double xhat = (load_x<D>(d.x, i) - mean) * invstd;
        if (d.out != nullptr) {
            const double b = d.bias ? load_param<D>(d.bias, pf32, c) : 0.0;
            ct_store<D>((char *)d.out + i * (int64_t)sizeof(typename CtCudaType<D>::T), xhat * w + b);
            continue;
        }
        const CtNormSegments s = ct_norm_unit(&d, u);
        const double s1 = unit_sums ? unit_sums[2 * u] : 0.0, s2 = unit_sums ? unit_sums[2 * u + 1] : 0.0;
        const double gi = ct_norm_grad_input(d.use_input_stats, load_x<D>(d.grad_out, i) * w, xhat, invstd, s1, s2,
                                             (double)(s.count * d.L));
        ct_store<D>((char *)d.grad_input + i * (int64_t)sizeof(typename CtCudaType<D>::T), gi);
    }
}

/* by_unit: per unit, sums[2u] = sum dy, sums[2u + 1] = sum dy xhat (dy = g w[c]); else per channel
 * c, sum g and sum g xhat, stored into grad_bias[c] / grad_weight[c]. */
template <int D>
__global__ void grad_sums_kernel(CtChannelNormDesc d, const double *stats, double *sums, bool by_unit)
{
    __shared__ double sh[2 * kNormThreads];
    const bool pf32 = d.param_dtype == CT_F32;
    const int64_t count = by_unit ? ct_norm_units(&d) : d.C;
    for (int64_t k = blockIdx.x; k < count; k += gridDim.x) {
        const CtNormSegments s = by_unit ? ct_norm_unit(&d, k) : ct_norm_channel(&d, k);
        const int64_t m = s.count * d.L;
        double a = 0.0, b = 0.0;
        for (int64_t i = threadIdx.x; i < m; i += blockDim.x) {
            const int64_t o = ct_norm_offset(&s, d.L, i), row = o / d.L, n = row / d.C, c = row % d.C;
            const int64_t u = ct_norm_unit_of(&d, n, c);
            const double w = by_unit && d.weight ? load_param<D>(d.weight, pf32, c) : 1.0;
            const double dy = load_x<D>(d.grad_out, o) * w;
            a += dy;
            b += dy * (load_x<D>(d.x, o) - stats[2 * u]) * stats[2 * u + 1];
        }
        block_sum2(&a, &b, sh);
        if (threadIdx.x != 0) {
            continue;
        }
        if (by_unit) {
            sums[2 * k] = a;
            sums[2 * k + 1] = b;
            continue;
        }
        if (d.grad_weight) {
            store_param<D>(d.grad_weight, pf32, k, b);
        }
        if (d.grad_bias) {
            store_param<D>(d.grad_bias, pf32, k, a);
        }
    }
}

template <int D>
int launch_kernels(const CtChannelNormDesc *d, double *scratch, cudaStream_t stream)
{
    const int64_t units = ct_norm_units(d), numel = d->N * d->C * d->L;
    double *stats = scratch, *unit_sums = scratch + 2 * units;
    const unsigned unit_t = unit_threads(numel / (units ? units : 1));
    const unsigned elem_blocks = grid_of((numel + kElemThreads - 1) / kElemThreads);
    unit_stats_kernel<D><<<grid_of(units), unit_t, 0, stream>>>(*d, stats);
    CT_CUDA_CHECK_LAUNCH();
    if (d->out != nullptr) {
        elementwise_kernel<D><<<elem_blocks, kElemThreads, 0, stream>>>(*d, stats, nullptr);
        CT_CUDA_CHECK_LAUNCH();
        return CT_CUDA_OK;
    }
    const bool want_unit_sums = d->grad_input != nullptr && d->use_input_stats;
    if (want_unit_sums) {
        grad_sums_kernel<D><<<grid_of(units), unit_t, 0, stream>>>(*d, stats, unit_sums, true);
        CT_CUDA_CHECK_LAUNCH();
    }
    if (d->grad_input != nullptr) {
        const double *sums = want_unit_sums ? unit_sums : nullptr;
        elementwise_kernel<D><<<elem_blocks, kElemThreads, 0, stream>>>(*d, stats, sums);
        CT_CUDA_CHECK_LAUNCH();
    }
    if (d->grad_weight != nullptr || d->grad_bias != nullptr) {
        grad_sums_kernel<D><<<grid_of(d->C), unit_threads(d->N * d->L), 0, stream>>>(*d, stats, nullptr, false);
        CT_CUDA_CHECK_LAUNCH();
    }
    return CT_CUDA_OK;
}

template <int D>
int channel_norm_launch(const CtChannelNormDesc *d, cudaStream_t stream)
{
    const int device = d->device.index;
    const int64_t units = ct_norm_units(d), numel = d->N * d->C * d->L;
    if (numel == 0) { /* grad_weight / grad_bias: sums over no values */
        size_t bytes = (size_t)d->C * (d->param_dtype == CT_F32 ? 4 : sizeof(typename CtCudaType<D>::T));
        if (d->out == nullptr && d->grad_weight != nullptr && bytes > 0) {
            CT_CUDA_CHECK(cudaMemsetAsync(d->grad_weight, 0, bytes, stream));
        }
        if (d->out == nullptr && d->grad_bias != nullptr && bytes > 0) {
            CT_CUDA_CHECK(cudaMemsetAsync(d->grad_bias, 0, bytes, stream));
        }
        return CT_CUDA_OK;
    }
    void *scratch = nullptr;
    CT_CUDA_TRY(ct_cuda_caching_malloc(device, (size_t)units * 4 * sizeof(double), &scratch));
    int status = launch_kernels<D>(d, (double *)scratch, stream);
    /* stream-ordered: the block is reused only by work queued after these kernels */
    int fst = ct_cuda_caching_free(device, scratch);
    return status != CT_CUDA_OK ? status : fst;
}

int channel_norm_status(const CtChannelNormDesc *d)
{
    CT_CUDA_TRY(ct_cuda_device_guard(d->device.index));
    cudaStream_t stream = ct_cuda_stream(d->device.index);
    switch (d->dtype) {
    case CT_F16: return channel_norm_launch<CT_F16>(d, stream);
    case CT_BF16: return channel_norm_launch<CT_BF16>(d, stream);
    case CT_F32: return channel_norm_launch<CT_F32>(d, stream);
    case CT_F64: return channel_norm_launch<CT_F64>(d, stream);
    default: return ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "batch_norm / group_norm: unsupported dtype on CUDA");
    }
}

int finish(int status) { return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status); }

} // namespace

int ct_cuda_nn_channel_norm(const CtChannelNormDesc *d) { return finish(channel_norm_status(d)); }
int ct_cuda_nn_channel_norm_backward(const CtChannelNormDesc *d) { return finish(channel_norm_status(d)); }
