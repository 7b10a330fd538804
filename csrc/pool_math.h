/* pool_math.h: the per-element math of pooling (pool.h), shared by the CPU kernels (pool.c) and
 * the CUDA ones (cuda/pool.cu) through CT_HOST_DEVICE, so both devices compute the same function
 * in the same order:
 *
 *   ct_pool_forward_NAME(d, plane, ot, oh, ow):  an output element (and its index for the max kinds)
 *   ct_pool_backward_NAME(d, plane, it, ih, iw, ...): a grad_input element, gathered from the windows
 *                                                     covering it
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

/* Element i of a dense (planes, shape[0], shape[1], shape[2]) space as its coordinates. */
CT_HOST_DEVICE void ct_pool_coords(int64_t i, const int64_t *shape, int64_t *plane, int64_t *t, int64_t *r, int64_t *c)
{
    *c = i % shape[2];
    i /= shape[2];
    *r = i % shape[1];
    i /= shape[1];
    *t = i % shape[0];
    *plane = i / shape[0];
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

/* The divisor of an average-pooling output with windows [lo[a], hi[a]) of padded lengths len[a]
 * (0 for an empty window: its output is 0). */
CT_HOST_DEVICE int64_t ct_pool_avg_divisor(const CtPoolDesc *d, const int64_t *lo, const int64_t *hi,
                                           const int64_t *len)
{
    if (lo[0] >= hi[0] || lo[1] >= hi[1] || lo[2] >= hi[2]) {
        return 0;
    }
    if (d->divisor_override != 0) {
        return d->divisor_override;
    }
    return d->count_include_pad ? len[0] * len[1] * len[2] : (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
}

/* The windows of output (o0, o1, o2) along the three axes; the return values of ct_pool_window in len. */
CT_HOST_DEVICE void ct_pool_windows(const CtPoolDesc *d, int64_t o0, int64_t o1, int64_t o2, int64_t *lo, int64_t *hi,
                                    int64_t *step, int64_t *len)
{
    len[0] = ct_pool_window(d, 0, o0, &lo[0], &hi[0], &step[0]);
    len[1] = ct_pool_window(d, 1, o1, &lo[1], &hi[1], &step[1]);
    len[2] = ct_pool_window(d, 2, o2, &lo[2], &hi[2], &step[2]);
}

/* Output element (plane, ot, oh, ow): a max keeps the first of equal values and the last NaN (a
 * NaN wins, as in PyTorch); a mean sums the window in row-major order, then divides (the adaptive
 * kind by the window's depth, height, then width, as PyTorch). */
#define CT_POOL_FORWARD_FN(NAME, T, ACC, IS_FLOAT, LOWEST)                                                   \
    CT_HOST_DEVICE void ct_pool_forward_##NAME(const CtPoolDesc *d, int64_t plane, int64_t ot, int64_t oh,   \
                                               int64_t ow)                                                   \
    {                                                                                                        \
        const int64_t i = ((plane * d->out[0] + ot) * d->out[1] + oh) * d->out[2] + ow;                      \
        const int64_t H = d->in[1], W = d->in[2];                                                            \
        const T *in = (const T *)d->input + plane * d->in[0] * H * W;                                        \
        int64_t lo[3], hi[3], st[3], len[3];                                                                 \
        ct_pool_windows(d, ot, oh, ow, lo, hi, st, len);                                                     \
        if (ct_pool_is_max(d)) {                                                                             \
            ACC best = LOWEST;                                                                               \
            int64_t at = (lo[0] * H + lo[1]) * W + lo[2];                                                    \
            for (int64_t t = lo[0]; t < hi[0]; t += st[0]) {                                                 \
                for (int64_t h = lo[1]; h < hi[1]; h += st[1]) {                                             \
                    for (int64_t w = lo[2]; w < hi[2]; w += st[2]) {                                         \
                        const int64_t k = (t * H + h) * W + w;                                               \
                        const ACC v = CT_LOAD_##NAME(in + k);                                                \
                        if (v > best || (IS_FLOAT && isnan((double)v))) {                                    \
                            best = v;                                                                        \
                            at = k;                                                                          \
                        }                                                                                    \
                    }                                                                                        \
                }                                                                                            \
            }                                                                                                \
            CT_STORE_##NAME((T *)d->output + i, best);                                                       \
            d->indices[i] = at;                                                                              \
            return;                                                                                          \
        }                                                                                                    \
        ACC sum = 0;                                                                                         \
        for (int64_t t = lo[0]; t < hi[0]; t++) {                                                            \
            for (int64_t h = lo[1]; h < hi[1]; h++) {                                                        \
                for (int64_t w = lo[2]; w < hi[2]; w++) {                                                    \
                    sum += CT_LOAD_##NAME(in + (t * H + h) * W + w);                                         \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        ACC v;                                                                                               \
        if (d->kind == CT_POOL_ADAPTIVE_AVG) {                                                               \
            v = sum / (ACC)len[0] / (ACC)len[1] / (ACC)len[2];                                               \
        } else {                                                                                             \
            const int64_t div = ct_pool_avg_divisor(d, lo, hi, len);                                         \
            v = div != 0 ? sum / (ACC)div : (ACC)0;                                                          \
        }                                                                                                    \
        CT_STORE_##NAME((T *)d->output + i, v);                                                              \
    }

/* grad_input element (plane, it, ih, iw), given the rows of outputs [lo_h, hi_h] covering row ih
 * (ct_pool_covering, shared by a row): the sum, over the windows holding it in output order (the
 * order PyTorch's CPU scatter adds them in), of their gradient (max kinds: where the window's index
 * is this element; averages: divided by the window's divisor). */
#define CT_POOL_BACKWARD_FN(NAME, T, ACC, IS_FLOAT, LOWEST)                                                  \
    CT_HOST_DEVICE void ct_pool_backward_##NAME(const CtPoolDesc *d, int64_t plane, int64_t it, int64_t ih,  \
                                                int64_t iw, int64_t lo_h, int64_t hi_h)                      \
    {                                                                                                        \
        const int64_t H = d->in[1], W = d->in[2], OT = d->out[0], OH = d->out[1], OW = d->out[2];            \
        const int64_t i = ((plane * d->in[0] + it) * H + ih) * W + iw;                                       \
        const T *go = (const T *)d->grad_output + plane * OT * OH * OW;                                      \
        int64_t lo_t, hi_t, lo_w, hi_w;                                                                      \
        ct_pool_covering(d, 0, it, &lo_t, &hi_t);                                                            \
        ct_pool_covering(d, 2, iw, &lo_w, &hi_w);                                                            \
        ACC g = 0;                                                                                           \
        if (ct_pool_is_max(d)) {                                                                             \
            const int64_t *idx = d->indices + plane * OT * OH * OW, self = (it * H + ih) * W + iw;           \
            for (int64_t ot = lo_t; ot <= hi_t; ot++) {                                                      \
                for (int64_t oh = lo_h; oh <= hi_h; oh++) {                                                  \
                    for (int64_t ow = lo_w; ow <= hi_w; ow++) {                                              \
                        const int64_t o = (ot * OH + oh) * OW + ow;                                          \
                        if (idx[o] == self) {                                                                \
                            g += CT_LOAD_##NAME(go + o);                                                     \
                        }                                                                                    \
                    }                                                                                        \
                }                                                                                            \
            }                                                                                                \
        } else {                                                                                             \
            for (int64_t ot = lo_t; ot <= hi_t; ot++) {                                                      \
                for (int64_t oh = lo_h; oh <= hi_h; oh++) {                                                  \
                    for (int64_t ow = lo_w; ow <= hi_w; ow++) {                                              \
                        int64_t lo[3], hi[3], st[3], len[3];                                                 \
                        ct_pool_windows(d, ot, oh, ow, lo, hi, st, len);                                     \
                        if (it < lo[0] || it >= hi[0] || ih < lo[1] || ih >= hi[1] || iw < lo[2] ||          \
                            iw >= hi[2]) {                                                                   \
                            continue;                                                                        \
                        }                                                                                    \
                        const ACC go_v = CT_LOAD_##NAME(go + (ot * OH + oh) * OW + ow);                      \
                        if (d->kind == CT_POOL_ADAPTIVE_AVG) {                                               \
                            g += go_v / (ACC)len[0] / (ACC)len[1] / (ACC)len[2];                             \
                        } else {                                                                             \
                            g += go_v / (ACC)ct_pool_avg_divisor(d, lo, hi, len);                            \
                        }                                                                                    \
                    }                                                                                        \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        CT_STORE_##NAME((T *)d->grad_input + i, g);                                                          \
    }

CT_POOL_TYPES(CT_POOL_FORWARD_FN)
CT_POOL_TYPES(CT_POOL_BACKWARD_FN)

#endif /* CTORCH_POOL_MATH_H */
