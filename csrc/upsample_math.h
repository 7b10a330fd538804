/* upsample_math.h: the per-element math of interpolation (upsample.h), shared by the CPU kernels
 * (upsample.c) and the CUDA ones (cuda/upsample.cu) through CT_HOST_DEVICE, so both devices read
 * the same taps with the same weights in the same order:
 *
 *   ct_upsample_taps_SUF(d, axis, o, idx, w):  the input positions output o reads along axis
 *                                              (ascending) and their weights (the tables' rows)
 *   ct_upsample_forward_NAME(d, plane, o[3]): an output element, from the tables
 *   ct_upsample_backward_NAME(d, plane, i[3]): a grad_input element, gathered from the outputs
 *                                              that read it (the cover table), in output order
 *
 * The coordinate rules are PyTorch's CPU ones: nearest indices in float; linear / cubic source
 * coordinates in the op math type (float, double for float64 input); the scale is 1 / the given
 * scale factor, else in / out (align_corners: (in - 1) / (out - 1)). Every tap is read, zero
 * weights included, so an inf spreads NaN exactly as in PyTorch. */
#ifndef CTORCH_UPSAMPLE_MATH_H
#define CTORCH_UPSAMPLE_MATH_H

#include "dtype.h"
#include "upsample.h"
#include <math.h>

/* X(NAME, ctype, acctype, SUF): the dtypes of the kernels (uint8 for the nearest modes only, the
 * backward for the floating ones), and the op math type's suffix of the axis functions. */
#define CT_UPSAMPLE_TYPES(X)               \
    X(U8, uint8_t, float, f)               \
    X(F16, ct_half, float, f)              \
    X(BF16, ct_bfloat16, float, f)         \
    X(F32, float, float, f)                \
    X(F64, double, double, d)

/* Element i of a dense (planes, n[0], n[1], n[2]) space as its coordinates (plane, c[0], c[1], c[2]). */
CT_HOST_DEVICE void ct_upsample_coords(int64_t i, const int64_t *n, int64_t *plane, int64_t *c)
{
    for (int a = CT_UPSAMPLE_AXES - 1; a >= 0; a--) {
        const int64_t q = i / n[a];
        c[a] = i - q * n[a];
        i = q;
    }
    *plane = i;
}

/* The source of output o along axis for the nearest modes (PyTorch's nearest_idx / nearest_exact_idx,
 * in float). */
CT_HOST_DEVICE int64_t ct_upsample_nearest_source(const CtUpsampleDesc *d, int axis, int64_t o)
{
    const int64_t in = d->in[axis], out = d->out[axis];
    const bool exact = d->mode[axis] == CT_UPSAMPLE_NEAREST_EXACT;
    if (!exact && out == in) {
        return o;
    }
    if (!exact && out == 2 * in) {
        return o >> 1;
    }
    const float scale = d->scale[axis] > 0 ? (float)(1.0 / d->scale[axis]) : (float)in / (float)out;
    const int64_t s = exact ? (int64_t)floorf((float)(((double)o + 0.5) * (double)scale))
                            : (int64_t)floorf((float)o * scale);
    return s < in - 1 ? s : in - 1;
}

/* SUF: f (float) or d (double), the op math type ACC.
 * ct_upsample_taps: the taps of output o along axis into idx / w; returns their count (1, 2 or 4; the
 *   antialiased modes' taps are upsample.c's). Fills the per-call tables of the descriptor (upsample.c). */
#define CT_UPSAMPLE_AXIS_FNS(SUF, ACC)                                                                     \
    CT_HOST_DEVICE int ct_upsample_taps_##SUF(const CtUpsampleDesc *d, int axis, int64_t o, int64_t *idx,  \
                                              ACC *w)                                                      \
    {                                                                                                      \
        const int64_t in = d->in[axis], out = d->out[axis];                                                \
        const CtUpsampleMode mode = d->mode[axis];                                                         \
        if (mode == CT_UPSAMPLE_NEAREST || mode == CT_UPSAMPLE_NEAREST_EXACT) {                            \
            idx[0] = ct_upsample_nearest_source(d, axis, o);                                               \
            w[0] = 1;                                                                                      \
            return 1;                                                                                      \
        }                                                                                                  \
        const bool cubic = mode == CT_UPSAMPLE_CUBIC;                                                      \
        if (!cubic && out == in) { /* PyTorch copies: taps (o, o) weighted (1, 0) */                      \
            idx[0] = idx[1] = o;                                                                           \
            w[0] = 1;                                                                                      \
            w[1] = 0;                                                                                      \
            return 2;                                                                                      \
        }                                                                                                  \
        ACC scale, real;                                                                                   \
        if (d->align_corners) {                                                                            \
            scale = out > 1 ? (ACC)(in - 1) / (ACC)(out - 1) : (ACC)0;                                     \
            real = scale * (ACC)o;                                                                         \
        } else {                                                                                           \
            scale = d->scale[axis] > 0 ? (ACC)(1.0 / d->scale[axis]) : (ACC)in / (ACC)out;                 \
            real = scale * ((ACC)o + (ACC)0.5) - (ACC)0.5;                                                 \
            if (!cubic && real < 0) {                                                                      \
                real = 0;                                                                                  \
            }                                                                                              \
        }                                                                                                  \
        int64_t i0 = (int64_t)floor(real);                                                                 \
        i0 = i0 < in - 1 ? i0 : in - 1;                                                                    \
        ACC t = real - (ACC)i0;                                                                            \
        t = t < 0 ? (ACC)0 : t > 1 ? (ACC)1 : t;                                                           \
        if (!cubic) {                                                                                      \
            idx[0] = i0;                                                                                   \
            idx[1] = i0 < in - 1 ? i0 + 1 : i0;                                                            \
            w[0] = (ACC)1 - t;                                                                             \
            w[1] = t;                                                                                      \
            return 2;                                                                                      \
        }                                                                                                  \
        const ACC A = (ACC)-0.75, x1 = t + 1, x2 = (ACC)1 - t, x3 = x2 + 1;                                \
        w[0] = ((A * x1 - 5 * A) * x1 + 8 * A) * x1 - 4 * A;                                               \
        w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;                                                        \
        w[2] = ((A + 2) * x2 - (A + 3)) * x2 * x2 + 1;                                                     \
        w[3] = ((A * x3 - 5 * A) * x3 + 8 * A) * x3 - 4 * A;                                               \
        for (int j = 0; j < 4; j++) {                                                                      \
            const int64_t p = i0 - 1 + j;                                                                  \
            idx[j] = p < 0 ? 0 : p > in - 1 ? in - 1 : p;                                                  \
        }                                                                                                  \
        return 4;                                                                                          \
    }

CT_UPSAMPLE_AXIS_FNS(f, float)
CT_UPSAMPLE_AXIS_FNS(d, double)

/* The total weight output o gives input position i along axis (taps may repeat a position), summed in
 * ACC from the tables. */
#define CT_UPSAMPLE_TABLE_WEIGHT_FN(SUF, ACC)                                                              \
    CT_HOST_DEVICE ACC ct_upsample_weight_##SUF(const CtUpsampleDesc *d, int axis, int64_t o, int64_t i)   \
    {                                                                                                      \
        const int64_t *idx = d->tap_index[axis] + d->ntaps[axis] * o;                                      \
        const double *w = d->tap_weight[axis] + d->ntaps[axis] * o;                                        \
        ACC sum = 0;                                                                                       \
        for (int j = 0; j < d->ntaps[axis]; j++) {                                                         \
            if (idx[j] == i) {                                                                             \
                sum += (ACC)w[j];                                                                          \
            }                                                                                              \
        }                                                                                                  \
        return sum;                                                                                        \
    }
CT_UPSAMPLE_TABLE_WEIGHT_FN(f, float)
CT_UPSAMPLE_TABLE_WEIGHT_FN(d, double)

/* Output element (plane, o[0..2]): a copy for the nearest modes; else, as PyTorch's separable kernel,
 * each tap row's weighted sum along the width, those sums weighted along the height, then those
 * along the depth (a 2-d call's single depth tap has weight 1: the same bits as a 2-d kernel). */
#define CT_UPSAMPLE_FORWARD_FN(NAME, T, ACC, SUF)                                                          \
    CT_HOST_DEVICE void ct_upsample_forward_##NAME(const CtUpsampleDesc *d, int64_t plane, const int64_t *o) \
    {                                                                                                      \
        const int64_t H = d->in[1], W = d->in[2];                                                          \
        const T *x = (const T *)d->input + plane * d->in[0] * H * W;                                       \
        T *y = (T *)d->output + ((plane * d->out[0] + o[0]) * d->out[1] + o[1]) * d->out[2] + o[2];        \
        const int nd = d->ntaps[0], nh = d->ntaps[1], nw = d->ntaps[2];                                    \
        const int64_t *id = d->tap_index[0] + nd * o[0], *ih = d->tap_index[1] + nh * o[1];                \
        const int64_t *iw = d->tap_index[2] + nw * o[2];                                                   \
        const double *wd = d->tap_weight[0] + nd * o[0], *wh = d->tap_weight[1] + nh * o[1];               \
        const double *ww = d->tap_weight[2] + nw * o[2];                                                   \
        if (nd == 1 && nh == 1 && nw == 1) {                                                               \
            *y = x[(id[0] * H + ih[0]) * W + iw[0]];                                                       \
            return;                                                                                        \
        }                                                                                                  \
        ACC acc = 0;                                                                                       \
        for (int k = 0; k < nd; k++) {                                                                     \
            const T *slice = x + id[k] * H * W;                                                            \
            ACC s = 0;                                                                                     \
            for (int i = 0; i < nh; i++) {                                                                 \
                const T *row = slice + ih[i] * W;                                                          \
                ACC t = 0;                                                                                 \
                for (int j = 0; j < nw; j++) {                                                             \
                    t += (ACC)CT_LOAD_##NAME(row + iw[j]) * (ACC)ww[j];                                    \
                }                                                                                          \
                s += t * (ACC)wh[i];                                                                       \
            }                                                                                              \
            acc += s * (ACC)wd[k];                                                                         \
        }                                                                                                  \
        CT_STORE_##NAME(y, acc);                                                                           \
    }

/* grad_input element (plane, i[0..2]): the sum, in output order, of each covering output's gradient
 * times the weight it gave this element. */
#define CT_UPSAMPLE_BACKWARD_FN(NAME, T, ACC, SUF)                                                         \
    CT_HOST_DEVICE void ct_upsample_backward_##NAME(const CtUpsampleDesc *d, int64_t plane, const int64_t *i) \
    {                                                                                                      \
        const int64_t OH = d->out[1], OW = d->out[2];                                                      \
        const T *go = (const T *)d->grad_output + plane * d->out[0] * OH * OW;                             \
        const int64_t lo_d = d->cover[0][2 * i[0]], hi_d = d->cover[0][2 * i[0] + 1];                      \
        const int64_t lo_h = d->cover[1][2 * i[1]], hi_h = d->cover[1][2 * i[1] + 1];                      \
        const int64_t lo_w = d->cover[2][2 * i[2]], hi_w = d->cover[2][2 * i[2] + 1];                      \
        ACC g = 0;                                                                                         \
        for (int64_t od = lo_d; od <= hi_d; od++) {                                                        \
            const ACC wz = ct_upsample_weight_##SUF(d, 0, od, i[0]);                                       \
            for (int64_t oh = lo_h; oh <= hi_h; oh++) {                                                    \
                const ACC wy = wz * ct_upsample_weight_##SUF(d, 1, oh, i[1]);                              \
                const T *row = go + (od * OH + oh) * OW;                                                   \
                for (int64_t ow = lo_w; ow <= hi_w; ow++) {                                                \
                    g += wy * ct_upsample_weight_##SUF(d, 2, ow, i[2]) * (ACC)CT_LOAD_##NAME(row + ow);    \
                }                                                                                          \
            }                                                                                              \
        }                                                                                                  \
        CT_STORE_##NAME((T *)d->grad_input + ((plane * d->in[0] + i[0]) * d->in[1] + i[1]) * d->in[2] + i[2], g); \
    }

CT_UPSAMPLE_TYPES(CT_UPSAMPLE_FORWARD_FN)
CT_UPSAMPLE_TYPES(CT_UPSAMPLE_BACKWARD_FN)

#endif /* CTORCH_UPSAMPLE_MATH_H */
