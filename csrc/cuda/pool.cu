/* pool.cu: pooling on the GPU, the CUDA side of CtNNKernels.pool / .pool_backward (pool.h).
 *
 * One thread per element, running pool_math.h's function for it, the CPU's exactly (same window
 * order, same acctype, the 16-bit formats converted by dtype.h's functions), so both devices give
 * the same bits:
 *   forward:  one thread per output element (its window's max and index, or its mean)
 *   backward: one thread per input element, summing in output order the gradients of the windows
 *             that hold it (a gather, no atomics: the same bits every run)
 * No host wait: nothing is checked on the device. */
#include "pool.cuh"
#include "pool_math.h"

namespace {

constexpr int kThreads = 256;

/* One thread per element: of the output (forward) or of grad_input (backward). One dtype per
 * launch: a uniform branch. */
template <bool Backward>
__global__ void pool_kernel(CtPoolDesc d, int64_t n)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    int64_t plane, t, r, c, lo_h = 0, hi_h = -1;
    if (Backward) {
        ct_pool_coords(i, d.in, &plane, &t, &r, &c);
        ct_pool_covering(&d, 1, r, &lo_h, &hi_h);
    } else {
        ct_pool_coords(i, d.out, &plane, &t, &r, &c);
    }
    switch (d.dtype) {
#define CT_POOL_CASE(NAME, ...)                                  \
    case CT_##NAME:                                              \
        if (Backward) {                                          \
            ct_pool_backward_##NAME(&d, plane, t, r, c, lo_h, hi_h); \
        } else {                                                 \
            ct_pool_forward_##NAME(&d, plane, t, r, c);          \
        }                                                        \
        break;
        CT_POOL_TYPES(CT_POOL_CASE)
#undef CT_POOL_CASE
    default:
        break;
    }
}

int run(const CtPoolDesc *d, bool backward)
{
    if (d->dtype == CT_BOOL || (backward && !ct_pool_backward_dtype(d->dtype))) {
        return ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "pooling: dtype %d is not supported on CUDA", (int)d->dtype);
    }
    const int64_t *shape = backward ? d->in : d->out;
    const int64_t n = d->planes * shape[0] * shape[1] * shape[2];
    if (n == 0) {
        return CT_CUDA_OK;
    }
    CT_CUDA_TRY(ct_cuda_device_guard(d->device.index));
    cudaStream_t stream = ct_cuda_stream(d->device.index);
    if (backward) {
        pool_kernel<true><<<ct_cuda_blocks(n, kThreads), kThreads, 0, stream>>>(*d, n);
    } else {
        pool_kernel<false><<<ct_cuda_blocks(n, kThreads), kThreads, 0, stream>>>(*d, n);
    }
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

} /* namespace */

int ct_cuda_pool(const CtPoolDesc *d)
{
    int status = run(d, false);
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}

int ct_cuda_pool_backward(const CtPoolDesc *d)
{
    int status = run(d, true);
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}
