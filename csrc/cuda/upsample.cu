/* upsample.cu: interpolation on the GPU, the CUDA side of CtNNKernels.upsample / .upsample_backward
 * (upsample.h).
 *
 * One thread per element, running upsample_math.h's function for it over the call's tap tables (built
 * on the host, the CPU's exactly: same taps, same weights, same order, the 16-bit formats converted
 * by dtype.h's functions):
 *   forward:  one thread per output element
 *   backward: one thread per input element, summing in output order the weighted gradients of the
 *             outputs that read it (a gather, no atomics: the same bits every run)
 * No host wait. */
#include "upsample.cuh"
#include "upsample_math.h"

namespace {

constexpr int kThreads = 256;

/* One thread per element of the output (forward) or of grad_input (backward). One dtype per launch:
 * a uniform branch. */
template <bool Backward>
__global__ void upsample_kernel(CtUpsampleDesc d, int64_t n)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    int64_t plane, c[CT_UPSAMPLE_AXES];
    ct_upsample_coords(i, Backward ? d.in : d.out, &plane, c);
    switch (d.dtype) {
#define CT_UPSAMPLE_CASE(NAME, T, ACC, SUF)                               \
    case CT_##NAME:                                                       \
        if (Backward) {                                                   \
            ct_upsample_backward_##NAME(&d, plane, c);                    \
        } else {                                                          \
            ct_upsample_forward_##NAME(&d, plane, c);                     \
        }                                                                 \
        break;
        CT_UPSAMPLE_TYPES(CT_UPSAMPLE_CASE)
#undef CT_UPSAMPLE_CASE
    default:
        break;
    }
}

int run(const CtUpsampleDesc *d, bool backward)
{
    const bool floating = d->dtype == CT_F16 || d->dtype == CT_BF16 || d->dtype == CT_F32 || d->dtype == CT_F64;
    if (!floating && (backward || d->dtype != CT_U8)) {
        return ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "upsample: dtype %d is not supported on CUDA", (int)d->dtype);
    }
    int64_t n = d->planes;
    for (int a = 0; a < CT_UPSAMPLE_AXES; a++) {
        n *= backward ? d->in[a] : d->out[a];
    }
    if (n == 0) {
        return CT_CUDA_OK;
    }
    CT_CUDA_TRY(ct_cuda_device_guard(d->device.index));
    cudaStream_t stream = ct_cuda_stream(d->device.index);
    if (backward) {
        upsample_kernel<true><<<ct_cuda_blocks(n, kThreads), kThreads, 0, stream>>>(*d, n);
    } else {
        upsample_kernel<false><<<ct_cuda_blocks(n, kThreads), kThreads, 0, stream>>>(*d, n);
    }
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

} /* namespace */

int ct_cuda_upsample(const CtUpsampleDesc *d)
{
    int status = run(d, false);
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}

int ct_cuda_upsample_backward(const CtUpsampleDesc *d)
{
    int status = run(d, true);
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}
