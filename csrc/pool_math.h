/* pool_math.h: the per-element math of pooling (pool.h), shared by the CPU kernels (pool.c) and
 * the CUDA ones (cuda/pool.cu) through CT_HOST_DEVICE, so both devices compute the same function
 * in the same order:
 *
 *   ct_pool_forward_NAME(d, plane, oh, ow):  an output element (and its index for the max kinds)
 *   ct_pool_backward_NAME(d, plane, ih, iw, ...): a grad_input element, gathered from the windows
 *                                                 covering it
 *
 * stamped per dtype by CT_POOL_TYPES. Values are compared and summed in the dtype's acctype (float
 * for float16/bfloat16, as PyTorch's CPU kernels). */
#ifndef CTORCH_POOL_MATH_H
#define CTORCH_POOL_MATH_H

#include "dtype.h"
#include "pool.h"
#include <math.h>

/* X(NAME, ctype, acctype, is_float, lowest): the dtypes of the kernels (the backward ones run for the
 * floating dtypes only), and the lowest value a max starts from (PyTorch's -inf for floats, the
 * type's minimum for integers). */
#define CT_POOL_TYPES(X)                            \
    X(U8, uint8_t, uint8_t, 0, 0)                   \
    X(I8, int8_t, int8_t, 0, INT8_MIN)              \
    X(I16, int16_t, int16_t, 0, INT16_MIN)          \
    X(I32, int32_t, int32_t, 0, INT32_MIN)          \
    X(I64, int64_t, int64_t, 0, INT64_MIN)          \
    X(F16, ct_half, float, 1, -INFINITY)            \
    X(BF16, ct_bfloat16, float, 1, -INFINITY)       \
    X(F32, float, float, 1, -INFINITY)              \
    X(F64, double, double, 1, -INFINITY)

/* The dtypes of the backward kernels (the differentiable ones). */
CT_HOST_DEVICE bool ct_pool_backward_dtype(CtDType t)
{
    return t == CT_F16 || t == CT_BF16 || t == CT_F32 || t == CT_F64;
}

/* Element i of a dense (planes, rows, cols) space as its coordinates. */
CT_HOST_DEVICE void ct_pool_coords(int64_t i, int64_t rows, int64_t cols, int64_t *plane, int64_t *r, int64_t *c)
{
    const int64_t pr = i / cols;
    *c = i - pr * cols;
    *plane = pr / rows;
    *r = pr - *plane * rows;
}

CT_HOST_DEVICE bool ct_pool_is_max(const CtPoolDesc *d)
{
    return d->kind == CT_POOL_MAX || d->kind == CT_POOL_ADAPTIVE_MAX;
}

/* The window of output o along axis: input positions start, start + step, ... below end (empty
 * when start >= end). Returns the average pool's window length counted with the padding (its
 * count_include_pad divisor along this axis) or, for the adaptive kinds, the window's length. */
CT_HOST_DEVICE int64_t ct_pool_window(const CtPoolDesc *d, int axis, int64_t o, int64_t *start, int64_t *end,
                                      int64_t *step)
{
    const int64_t in = d->in[axis];
    *step = 1;
    if (d->kind == CT_POOL_ADAPTIVE_MAX || d->kind == CT_POOL_ADAPTIVE_AVG) {
        const int64_t out = d->out[axis];
        *start = o * in / out;
        *end = ((o + 1) * in + out - 1) / out;
        return *end - *start;
    }
    int64_t s = o * d->stride[axis] - d->pad[axis];
    if (d->kind == CT_POOL_MAX) {
        const int64_t dil = d->dilation[axis];
        int64_t e = s + (d->kernel[axis] - 1) * dil + 1;
        *end = e < in ? e : in;
        if (s < 0) { /* the first position of the dilated grid inside the input */
            s += (-s + dil - 1) / dil * dil;
        }
        *start = s;
        *step = dil;
        return 0;
    }
    int64_t e = s + d->kernel[axis];
    if (e > in + d->pad[axis]) {
        e = in + d->pad[axis];
    }
    const int64_t padded = e - s;
    *start = s > 0 ? s : 0;
    *end = e < in ? e : in;
    return padded;
}

/* The outputs along axis whose windows may hold input position i: [*lo, *hi] (empty when lo > hi).
 * Exact for the average kinds; for CT_POOL_MAX the dilation grid is left to the index check. */
CT_HOST_DEVICE void ct_pool_covering(const CtPoolDesc *d, int axis, int64_t i, int64_t *lo, int64_t *hi)
{
    const int64_t in = d->in[axis], out = d->out[axis];
    if (d->kind == CT_POOL_ADAPTIVE_MAX || d->kind == CT_POOL_ADAPTIVE_AVG) {
        *lo = i * out / in;
        *hi = ((i + 1) * out + in - 1) / in - 1;
    } else {
        const int64_t s = d->stride[axis];
        const int64_t span = d->kind == CT_POOL_MAX ? (d->kernel[axis] - 1) * d->dilation[axis] + 1 : d->kernel[axis];
        const int64_t a = i + d->pad[axis]; /* >= 0 */
        const int64_t b = a - span + 1;     /* window o starts at o s - pad: o s >= b and o s <= a */
        *hi = a / s;
        *lo = b <= 0 ? 0 : (b + s - 1) / s;
    }
    if (*hi > out - 1) {
        *hi = out - 1;
    }
}

/* The divisor of average-pooling output (oh, ow) with windows [h0, h1) x [w0, w1) of padded
 * lengths ph, pw (0 for an empty window: its output is 0). */
CT_HOST_DEVICE int64_t ct_pool_avg_divisor(const CtPoolDesc *d, int64_t h0, int64_t h1, int64_t w0, int64_t w1,
                                           int64_t ph, int64_t pw)
{
    if (h0 >= h1 || w0 >= w1) {
        return 0;
    }
    if (d->divisor_override != 0) {
        return d->divisor_override;
    }
    return d->count_include_pad ? ph * pw : (h1 - h0) * (w1 - w0);
}

/* Output element (plane, oh, ow): a max keeps the first of equal values and the last NaN (a
 * NaN wins, as in PyTorch); a mean sums the window row by row, then divides (the adaptive kind
 * by the window's height, then by its width, as PyTorch). */
#define CT_POOL_FORWARD_FN(NAME, T, ACC, IS_FLOAT, LOWEST)                                                   \
    CT_HOST_DEVICE void ct_pool_forward_##NAME(const CtPoolDesc *d, int64_t plane, int64_t oh, int64_t ow)   \
    {                                                                                                        \
        const int64_t i = (plane * d->out[0] + oh) * d->out[1] + ow;                                         \
        const int64_t W = d->in[1];                                                                          \
        const T *in = (const T *)d->input + plane * d->in[0] * W;                                            \
        int64_t h0, h1, hs, w0, w1, ws;                                                                      \
        const int64_t ph = ct_pool_window(d, 0, oh, &h0, &h1, &hs);                                          \
        const int64_t pw = ct_pool_window(d, 1, ow, &w0, &w1, &ws);                                          \
        if (ct_pool_is_max(d)) {                                                                             \
            ACC best = LOWEST;                                                                               \
            int64_t at = h0 * W + w0;                                                                        \
            for (int64_t h = h0; h < h1; h += hs) {                                                          \
                for (int64_t w = w0; w < w1; w += ws) {                                                      \
                    const ACC v = CT_LOAD_##NAME(in + h * W + w);                                            \
                    if (v > best || (IS_FLOAT && isnan((double)v))) {                                        \
                        best = v;                                                                            \
                        at = h * W + w;                                                                      \
                    }                                                                                        \
                }                                                                                            \
            }                                                                                                \
            CT_STORE_##NAME((T *)d->output + i, best);                                                       \
            d->indices[i] = at;                                                                              \
            return;                                                                                          \
        }                                                                                                    \
        ACC sum = 0;                                                                                         \
        for (int64_t h = h0; h < h1; h++) {                                                                  \
            for (int64_t w = w0; w < w1; w++) {                                                              \
                sum += CT_LOAD_##NAME(in + h * W + w);                                                       \
            }                                                                                                \
        }                                                                                                    \
        ACC v;                                                                                               \
        if (d->kind == CT_POOL_ADAPTIVE_AVG) {                                                               \
            v = sum / (ACC)ph / (ACC)pw;                                                                     \
        } else {                                                                                             \
            const int64_t div = ct_pool_avg_divisor(d, h0, h1, w0, w1, ph, pw);                              \
            v = div != 0 ? sum / (ACC)div : (ACC)0;                                                          \
        }                                                                                                    \
        CT_STORE_##NAME((T *)d->output + i, v);                                                              \
    }

/* grad_input element (plane, ih, iw), given the rows of outputs [lo_h, hi_h] covering row ih
 * (ct_pool_covering, shared by a row): the sum, over the windows holding it in output order (the
 * order PyTorch's CPU scatter adds them in), of their gradient (max kinds: where the window's index
 * is this element; averages: divided by the window's divisor). */
#define CT_POOL_BACKWARD_FN(NAME, T, ACC, IS_FLOAT, LOWEST)                                                  \
    CT_HOST_DEVICE void ct_pool_backward_##NAME(const CtPoolDesc *d, int64_t plane, int64_t ih, int64_t iw,  \
                                                int64_t lo_h, int64_t hi_h)                                  \
    {                                                                                                        \
        const int64_t W = d->in[1], OH = d->out[0], OW = d->out[1];                                          \
        const int64_t i = (plane * d->in[0] + ih) * W + iw;                                                  \
        const T *go = (const T *)d->grad_output + plane * OH * OW;                                           \
        int64_t lo_w, hi_w;                                                                                  \
        ct_pool_covering(d, 1, iw, &lo_w, &hi_w);                                                            \
        ACC g = 0;                                                                                           \
        if (ct_pool_is_max(d)) {                                                                             \
            const int64_t *idx = d->indices + plane * OH * OW, self = ih * W + iw;                           \
            for (int64_t oh = lo_h; oh <= hi_h; oh++) {                                                      \
                for (int64_t ow = lo_w; ow <= hi_w; ow++) {                                                  \
                    if (idx[oh * OW + ow] == self) {                                                         \
                        g += CT_LOAD_##NAME(go + oh * OW + ow);                                              \
                    }                                                                                        \
                }                                                                                            \
            }                                                                                                \
        } else {                                                                                             \
            for (int64_t oh = lo_h; oh <= hi_h; oh++) {                                                      \
                int64_t h0, h1, hs;                                                                          \
                const int64_t ph = ct_pool_window(d, 0, oh, &h0, &h1, &hs);                                  \
                if (ih < h0 || ih >= h1) {                                                                   \
                    continue;                                                                                \
                }                                                                                            \
                for (int64_t ow = lo_w; ow <= hi_w; ow++) {                                                  \
                    int64_t w0, w1, ws;                                                                      \
                    const int64_t pw = ct_pool_window(d, 1, ow, &w0, &w1, &ws);                              \
                    if (iw < w0 || iw >= w1) {                                                               \
                        continue;                                                                            \
                    }                                                                                        \
                    const ACC go_v = CT_LOAD_##NAME(go + oh * OW + ow);                                      \
                    if (d->kind == CT_POOL_ADAPTIVE_AVG) {                                                   \
                        g += go_v / (ACC)ph / (ACC)pw;                                                       \
                    } else {                                                                                 \
                        g += go_v / (ACC)ct_pool_avg_divisor(d, h0, h1, w0, w1, ph, pw);                     \
                    }                                                                                        \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        CT_STORE_##NAME((T *)d->grad_input + i, g);                                                          \
    }

CT_POOL_TYPES(CT_POOL_FORWARD_FN)
CT_POOL_TYPES(CT_POOL_BACKWARD_FN)

#endif /* CTORCH_POOL_MATH_H */
