/* conv.cu: struct CtNNKernels.im2col / col2im on CUDA (conv.h); the GEMMs of a convolution run
 * through blas.cu from the device-neutral front end (conv.c).
 *
 * - im2col: one thread per column element, a copy by element size (padding writes zero bits).
 * - col2im: one thread per image element; it gathers its column entries in conv_math.h's order
 *   and accumulates them as the CPU does (float for the 16-bit floats and float32, double for
 *   float64, wrapping 64-bit integers), then stores once: no atomics, so the result is the same
 *   bits every run, and the same as the CPU's for the same columns. */
#include "common.cuh"
#include "conv_math.h"
#include "nn.h"

namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void im2col_kernel(CtConvDesc d, int64_t per_image, int64_t image_numel)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.batch * per_image) {
        return;
    }
    int64_t n = i / per_image;
    int64_t src = ct_conv_column_source(&d, i - n * per_image);
    ((T *)d.columns)[i] = src < 0 ? (T)0 : ((const T *)d.image)[n * image_numel + src];
}

template <typename T>
int im2col_launch(const CtConvDesc *d, int64_t per_image, int64_t image_numel, cudaStream_t stream)
{
    im2col_kernel<T><<<ct_cuda_blocks(d->batch * per_image, kThreads), kThreads, 0, stream>>>(*d, per_image,
                                                                                            image_numel);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

/* The accumulator of col2im: the CPU's (conv.c's COL2IM_PLANES). */
template <int D>
struct Col2imAcc {
    typedef typename CtCudaType<D>::Acc Acc;
    typedef typename std::conditional<std::is_integral<Acc>::value, uint64_t, Acc>::type T;
};

template <int D>
__global__ void col2im_kernel(CtConvDesc d, int64_t per_image)
{
    typedef typename CtCudaType<D>::T T;
    typedef typename Col2imAcc<D>::T Acc;
    const int64_t plane = d.in[0] * d.in[1] * d.in[2];
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.batch * d.channels * plane) {
        return;
    }
    int64_t p2 = i % d.in[2], p1 = (i / d.in[2]) % d.in[1], p0 = (i / (d.in[2] * d.in[1])) % d.in[0];
    int64_t c = (i / plane) % d.channels, n = i / (plane * d.channels);
    const char *cols = (const char *)d.grad_columns + n * per_image * (int64_t)sizeof(T);
    Acc acc = 0;
#define CT_COL2IM_ADD(k) (acc += (Acc)ct_load<D>(cols + (k) * (int64_t)sizeof(T)))
    CT_CONV_GATHER(&d, c, p0, p1, p2, CT_COL2IM_ADD);
#undef CT_COL2IM_ADD
    if constexpr (std::is_integral<Acc>::value) {
        ct_store<D>((char *)d.grad_image + i * (int64_t)sizeof(T), (int64_t)acc);
    } else {
        ct_store<D>((char *)d.grad_image + i * (int64_t)sizeof(T), acc);
    }
}

int64_t volume(const int64_t *v) { return v[0] * v[1] * v[2]; }

template <int D>
int col2im_launch(const CtConvDesc *d, int64_t per_image, cudaStream_t stream)
{
    int64_t n = d->batch * d->channels * volume(d->in);
    col2im_kernel<D><<<ct_cuda_blocks(n, kThreads), kThreads, 0, stream>>>(*d, per_image);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

int64_t columns_per_image(const CtConvDesc *d)
{
    return d->channels * volume(d->kernel) * volume(d->out);
}

int im2col_status(const CtConvDesc *d)
{
    CT_CUDA_TRY(ct_cuda_device_guard(d->device.index));
    int64_t per_image = columns_per_image(d);
    if (d->batch * per_image == 0) {
        return CT_CUDA_OK;
    }
    cudaStream_t stream = ct_cuda_stream(d->device.index);
    int64_t image_numel = d->channels * volume(d->in);
    switch (d->dtype) {
    case CT_U8:
    case CT_I8: return im2col_launch<uint8_t>(d, per_image, image_numel, stream);
    case CT_I16:
    case CT_F16:
    case CT_BF16: return im2col_launch<uint16_t>(d, per_image, image_numel, stream);
    case CT_I32:
    case CT_F32: return im2col_launch<uint32_t>(d, per_image, image_numel, stream);
    case CT_I64:
    case CT_F64: return im2col_launch<uint64_t>(d, per_image, image_numel, stream);
    default: return ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "im2col: unsupported dtype on CUDA");
    }
}

int col2im_status(const CtConvDesc *d)
{
    CT_CUDA_TRY(ct_cuda_device_guard(d->device.index));
    if (d->batch * d->channels * volume(d->in) == 0) {
        return CT_CUDA_OK;
    }
    cudaStream_t stream = ct_cuda_stream(d->device.index);
    int64_t per_image = columns_per_image(d);
    switch (d->dtype) {
    case CT_U8: return col2im_launch<CT_U8>(d, per_image, stream);
    case CT_I8: return col2im_launch<CT_I8>(d, per_image, stream);
    case CT_I16: return col2im_launch<CT_I16>(d, per_image, stream);
    case CT_I32: return col2im_launch<CT_I32>(d, per_image, stream);
    case CT_I64: return col2im_launch<CT_I64>(d, per_image, stream);
    case CT_F16: return col2im_launch<CT_F16>(d, per_image, stream);
    case CT_BF16: return col2im_launch<CT_BF16>(d, per_image, stream);
    case CT_F32: return col2im_launch<CT_F32>(d, per_image, stream);
    case CT_F64: return col2im_launch<CT_F64>(d, per_image, stream);
    default: return ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "col2im: unsupported dtype on CUDA");
    }
}

int finish(int status) { return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status); }

} // namespace

int ct_cuda_nn_im2col(const CtConvDesc *d) { return finish(im2col_status(d)); }
int ct_cuda_nn_col2im(const CtConvDesc *d) { return finish(col2im_status(d)); }
