/* conv_math.h: the index math of im2col / col2im (conv.h), written once for the CPU kernels
 * (conv.c) and the CUDA ones (cuda/conv.cu), so both read and sum the same elements in the same
 * order. */
#ifndef CTORCH_CONV_MATH_H
#define CTORCH_CONV_MATH_H

#include "conv.h"
#include "dtype.h" /* CT_HOST_DEVICE */

/* Column element `i` of one image, i = ((c * kh + ki) * kw + kj) * oh * ow + y * ow + x: the
 * offset of the image element it copies within that image, or -1 when it lies in the padding. */
CT_HOST_DEVICE int64_t ct_conv_column_source(const CtConvDesc *d, int64_t i)
{
    int64_t x = i % d->out_w;
    int64_t t = i / d->out_w;
    int64_t y = t % d->out_h;
    t /= d->out_h;
    int64_t kj = t % d->kernel_w;
    t /= d->kernel_w;
    int64_t ki = t % d->kernel_h;
    int64_t c = t / d->kernel_h;
    int64_t h = y * d->stride_h - d->pad_h + ki * d->dilation_h;
    int64_t w = x * d->stride_w - d->pad_w + kj * d->dilation_w;
    if (h < 0 || h >= d->in_h || w < 0 || w >= d->in_w) {
        return -1;
    }
    return (c * d->in_h + h) * d->in_w + w;
}

/* The output position (along one axis) whose kernel tap k reads input position p, or -1. */
CT_HOST_DEVICE int64_t ct_conv_tap_output(int64_t p, int64_t k, int64_t stride, int64_t pad, int64_t dilation,
                                          int64_t out)
{
    int64_t t = p + pad - k * dilation;
    if (t < 0 || t % stride != 0 || t / stride >= out) {
        return -1;
    }
    return t / stride;
}

/* col2im of one image element (c, h, w): calls ADD(offset) for each column element holding it,
 * taps in row-major (ki, kj) order; offsets are within the image's columns. */
#define CT_CONV_GATHER(d, c, h, w, ADD)                                                                      \
    do {                                                                                                     \
        const int64_t ct_area_ = (d)->out_h * (d)->out_w;                                                    \
        for (int64_t ki_ = 0; ki_ < (d)->kernel_h; ki_++) {                                                  \
            int64_t y_ = ct_conv_tap_output((h), ki_, (d)->stride_h, (d)->pad_h, (d)->dilation_h, (d)->out_h); \
            if (y_ < 0) {                                                                                    \
                continue;                                                                                    \
            }                                                                                                \
            for (int64_t kj_ = 0; kj_ < (d)->kernel_w; kj_++) {                                              \
                int64_t x_ =                                                                                 \
                    ct_conv_tap_output((w), kj_, (d)->stride_w, (d)->pad_w, (d)->dilation_w, (d)->out_w);    \
                if (x_ < 0) {                                                                                \
                    continue;                                                                                \
                }                                                                                            \
                ADD(((((c) * (d)->kernel_h + ki_) * (d)->kernel_w + kj_) * ct_area_ + y_ * (d)->out_w + x_)); \
            }                                                                                                \
        }                                                                                                    \
    } while (0)

#endif /* CTORCH_CONV_MATH_H */
