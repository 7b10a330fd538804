/* conv_math.h: the index math of im2col / col2im (conv.h), written once for the CPU kernels
 * (conv.c) and the CUDA ones (cuda/conv.cu), so both read and sum the same elements in the same
 * order. */
#ifndef CTORCH_CONV_MATH_H
#define CTORCH_CONV_MATH_H

#include "conv.h"
#include "dtype.h" /* CT_HOST_DEVICE */

/* Column element `i` of one image, i = (c * kernel volume + tap) * out volume + position, tap and
 * position row-major over the three axes: the offset of the image element it copies within that
 * image, or -1 when it lies in the padding. */
CT_HOST_DEVICE int64_t ct_conv_column_source(const CtConvDesc *d, int64_t i)
{
    int64_t o[3], k[3];
    for (int a = 2; a >= 0; a--) {
        o[a] = i % d->out[a];
        i /= d->out[a];
    }
    for (int a = 2; a >= 0; a--) {
        k[a] = i % d->kernel[a];
        i /= d->kernel[a];
    }
    int64_t src = i; /* the channel, then the row-major image offset */
    for (int a = 0; a < 3; a++) {
        int64_t p = o[a] * d->stride[a] - d->pad[a] + k[a] * d->dilation[a];
        if (p < 0 || p >= d->in[a]) {
            return -1;
        }
        src = src * d->in[a] + p;
    }
    return src;
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

#define CT_CONV_TAP_(d, a, pos, k) ct_conv_tap_output((pos), (k), (d)->stride[a], (d)->pad[a], (d)->dilation[a], (d)->out[a])

/* col2im of one image element (c, p0, p1, p2): calls ADD(offset) for each column element holding it,
 * taps in row-major (k0, k1, k2) order; offsets are within the image's columns. */
#define CT_CONV_GATHER(d, c, p0, p1, p2, ADD)                                                                \
    do {                                                                                                     \
        const int64_t ct_vol_ = (d)->out[0] * (d)->out[1] * (d)->out[2];                                     \
        for (int64_t k0_ = 0; k0_ < (d)->kernel[0]; k0_++) {                                                 \
            int64_t o0_ = CT_CONV_TAP_(d, 0, p0, k0_);                                                       \
            if (o0_ < 0) {                                                                                   \
                continue;                                                                                    \
            }                                                                                                \
            for (int64_t k1_ = 0; k1_ < (d)->kernel[1]; k1_++) {                                             \
                int64_t o1_ = CT_CONV_TAP_(d, 1, p1, k1_);                                                   \
                if (o1_ < 0) {                                                                               \
                    continue;                                                                                \
                }                                                                                            \
                for (int64_t k2_ = 0; k2_ < (d)->kernel[2]; k2_++) {                                         \
                    int64_t o2_ = CT_CONV_TAP_(d, 2, p2, k2_);                                               \
                    if (o2_ < 0) {                                                                           \
                        continue;                                                                            \
                    }                                                                                        \
                    int64_t tap_ = (((c) * (d)->kernel[0] + k0_) * (d)->kernel[1] + k1_) * (d)->kernel[2] + k2_; \
                    ADD((tap_ * ct_vol_ + (o0_ * (d)->out[1] + o1_) * (d)->out[2] + o2_));                   \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
    } while (0)

#endif /* CTORCH_CONV_MATH_H */
