/* grid_sample_math.h: the per-point math of grid_sampler_2d / grid_sampler_3d (CtGridSampleDesc, nn.h),
 * shared by the CPU kernels (nn_misc.c) and the CUDA ones (cuda/nn.cu) through CT_HOST_DEVICE, so both
 * devices read the same taps with the same weights:
 *
 *   ct_gs_taps(d, p, taps):            the input positions output point p (of N x Do x Ho x Wo) reads,
 *                                      their weights and the weights' derivatives by the grid's coordinates
 *   ct_gs_point_forward(d, p)          out[n, :, p] for every channel
 *   ct_gs_point_backward(d, p)         grad_grid[p] and the contributions of grad_out[n, :, p] to
 *                                      grad_input (CT_GS_ACCUMULATE: += on the CPU, atomicAdd on CUDA)
 *
 * PyTorch's rules: a grid coordinate c in [-1, 1] maps to the source pixel ((c + 1) size - 1) / 2, or
 * (c + 1) / 2 (size - 1) with align_corners; border padding clamps it to [0, size - 1] (gradient 0 outside),
 * reflection mirrors it about the edges (-0.5, size - 0.5; or 0, size - 1 with align_corners) before the
 * clamp. The source coordinate is computed in the op math type (float for float32, double for float64),
 * the weights and sums in double. bilinear / trilinear: the 2^nd corners, x fastest, weighted by the
 * fractional offsets; nearest: the corner nearest (ties to even); bicubic: the 4 x 4 taps about the
 * floor of the unpadded source, PyTorch's cubic convolution (A = -0.75), each tap's integer position
 * padded on its own. Taps outside the input read 0 (and receive nothing); as in PyTorch, a NaN source
 * clips to 0 under border / reflection padding and a non-finite one gives NaN weights (a NaN output). */
#ifndef CTORCH_GRID_SAMPLE_MATH_H
#define CTORCH_GRID_SAMPLE_MATH_H

#include "dtype.h"
#include "nn.h"
#include <math.h>

#define CT_GS_MAX_TAPS 16
#define CT_GS_CUBIC_A (-0.75)

typedef struct {
    int n;                               /* number of taps */
    int64_t off[CT_GS_MAX_TAPS];         /* linear position in the (D, H, W) plane; -1 outside the input */
    double w[CT_GS_MAX_TAPS];            /* weight */
    double dw[CT_GS_MAX_TAPS][3];        /* d weight / d source coordinate k (x, y, z) */
    double mult[3];                      /* d source coordinate k / d grid coordinate k */
} CtGsTaps;

/* The source coordinate of grid coordinate c along an axis of `size` in the op math type T (SUF f / d):
 * unnormalised, then (pad) with the padding applied; *g: its derivative by c. */
#define CT_GS_SOURCE(SUF, T)                                                                                  \
    CT_HOST_DEVICE T ct_gs_clip_##SUF(T x, int64_t size, T *g)                                                \
    {                                                                                                         \
        const T hi = (T)(size - 1);                                                                           \
        if (!(x > (T)0) || x >= hi) { /* NaN clips to 0, as PyTorch's */                                      \
            *g = (T)0;                                                                                        \
            return x >= hi ? hi : (T)0;                                                                       \
        }                                                                                                     \
        return x;                                                                                             \
    }                                                                                                         \
    CT_HOST_DEVICE T ct_gs_reflect_##SUF(T x, T twice_lo, T twice_hi, T *g)                                   \
    {                                                                                                         \
        if (twice_lo == twice_hi) {                                                                           \
            *g = (T)0;                                                                                        \
            return (T)0;                                                                                      \
        }                                                                                                     \
        const T lo = twice_lo / (T)2, span = (twice_hi - twice_lo) / (T)2;                                    \
        T in = x - lo, sign = (T)1;                                                                           \
        if (in < (T)0) {                                                                                      \
            sign = (T)-1;                                                                                     \
            in = -in;                                                                                         \
        }                                                                                                     \
        const T extra = (T)fmod((double)in, (double)span);                                                   \
        const int64_t flips = (int64_t)floor((double)(in / span));                                            \
        *g *= flips % 2 == 0 ? sign : -sign;                                                                  \
        return flips % 2 == 0 ? extra + lo : span - extra + lo;                                               \
    }                                                                                                         \
    /* PyTorch's compute_coordinates: the padding applied to a source coordinate */                           \
    CT_HOST_DEVICE T ct_gs_pad_##SUF(T x, int64_t size, int padding, bool align, T *g)                        \
    {                                                                                                         \
        if (padding == 2) {                                                                                   \
            x = align ? ct_gs_reflect_##SUF(x, (T)0, (T)(2 * (size - 1)), g)                                  \
                      : ct_gs_reflect_##SUF(x, (T)-1, (T)(2 * size - 1), g);                                  \
        }                                                                                                     \
        return padding != 0 ? ct_gs_clip_##SUF(x, size, g) : x;                                               \
    }                                                                                                         \
    CT_HOST_DEVICE T ct_gs_source_##SUF(T c, int64_t size, int padding, bool align, bool pad, T *g)           \
    {                                                                                                         \
        T x;                                                                                                  \
        if (align) {                                                                                          \
            *g = (T)(size - 1) / (T)2;                                                                        \
            x = (c + (T)1) / (T)2 * (T)(size - 1);                                                            \
        } else {                                                                                              \
            *g = (T)size / (T)2;                                                                              \
            x = ((c + (T)1) * (T)size - (T)1) / (T)2;                                                         \
        }                                                                                                     \
        return pad ? ct_gs_pad_##SUF(x, size, padding, align, g) : x;                                         \
    }
CT_GS_SOURCE(f, float)
CT_GS_SOURCE(d, double)
#undef CT_GS_SOURCE

CT_HOST_DEVICE double ct_gs_load(const void *p, bool f64, int64_t i)
{
    return f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

CT_HOST_DEVICE void ct_gs_store(void *p, bool f64, int64_t i, double v)
{
    if (f64) {
        ((double *)p)[i] = v;
    } else {
        ((float *)p)[i] = (float)v;
    }
}

/* __CUDA_ARCH__: atomics on the device only (nvcc also compiles these functions for the host; the emulator
 * runs one thread at a time) */
#ifdef __CUDA_ARCH__
#define CT_GS_ACCUMULATE(p, f64, i, v)                                                                        \
    ((f64) ? (void)atomicAdd((double *)(p) + (i), (v)) : (void)atomicAdd((float *)(p) + (i), (float)(v)))
#else
#define CT_GS_ACCUMULATE(p, f64, i, v) ct_gs_store((p), (f64), (i), ct_gs_load((p), (f64), (i)) + (v))
#endif

/* The input's size along grid coordinate k (x: W, y: H, z: D). */
CT_HOST_DEVICE int64_t ct_gs_size(const CtGridSampleDesc *d, int k) { return d->in[2 - k]; }

CT_HOST_DEVICE int64_t ct_gs_points(const CtGridSampleDesc *d) { return d->out[0] * d->out[1] * d->out[2]; }

/* PyTorch's cubic convolution weights of the taps at -1, 0, 1, 2 from the floor, for fraction t, and their
 * derivatives by t. */
CT_HOST_DEVICE void ct_gs_cubic(double t, double *w, double *dw)
{
    const double A = CT_GS_CUBIC_A;
    const double u0 = t + 1.0, s = 1.0 - t, u3 = 2.0 - t;
    w[0] = ((A * u0 - 5.0 * A) * u0 + 8.0 * A) * u0 - 4.0 * A;
    w[1] = ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0;
    w[2] = ((A + 2.0) * s - (A + 3.0)) * s * s + 1.0;
    w[3] = ((A * u3 - 5.0 * A) * u3 + 8.0 * A) * u3 - 4.0 * A;
    dw[0] = (3.0 * A * u0 - 10.0 * A) * u0 + 8.0 * A;
    dw[1] = (3.0 * (A + 2.0) * t - 2.0 * (A + 3.0)) * t;
    dw[2] = -(3.0 * (A + 2.0) * s - 2.0 * (A + 3.0)) * s;
    dw[3] = -((3.0 * A * u3 - 10.0 * A) * u3 + 8.0 * A);
}

/* Tap position along axis k: the plane offset contribution, or -1 when outside. */
CT_HOST_DEVICE bool ct_gs_inside(double c, int64_t size) { return c >= 0.0 && c <= (double)(size - 1); }

CT_HOST_DEVICE void ct_gs_taps(const CtGridSampleDesc *d, int64_t p, CtGsTaps *t)
{
    const bool f64 = d->dtype == CT_F64, cubic = d->mode == 2;
    const int nd = d->nd;
    double src[3] = {0.0, 0.0, 0.0};
    for (int k = 0; k < nd; k++) {
        const double c = ct_gs_load(d->grid, f64, p * nd + k);
        const int64_t size = ct_gs_size(d, k);
        if (f64) {
            src[k] = ct_gs_source_d(c, size, d->padding, d->align_corners, !cubic, &t->mult[k]);
        } else {
            float g = 1.0f;
            src[k] = (double)ct_gs_source_f((float)c, size, d->padding, d->align_corners, !cubic, &g);
            t->mult[k] = (double)g;
        }
    }
    if (d->mode == 1) { /* nearest */
        int64_t off = 0;
        bool inside = true;
        for (int k = nd - 1; k >= 0; k--) {
            const double c = rint(src[k]);
            inside = inside && ct_gs_inside(c, ct_gs_size(d, k));
            off = inside ? off * ct_gs_size(d, k) + (int64_t)c : -1;
        }
        t->n = 1;
        t->off[0] = off;
        t->w[0] = 1.0;
        t->dw[0][0] = t->dw[0][1] = t->dw[0][2] = 0.0;
        return;
    }
    if (cubic) { /* 2-d only: rows y0 - 1 .. y0 + 2, columns x0 - 1 .. x0 + 2 (x fastest) */
        const double x0 = floor(src[0]), y0 = floor(src[1]);
        double wx[4], dwx[4], wy[4], dwy[4];
        ct_gs_cubic(src[0] - x0, wx, dwx);
        ct_gs_cubic(src[1] - y0, wy, dwy);
        t->n = 16;
        for (int i = 0; i < 4; i++) {
            double gy = 1.0, gx = 1.0;
            const double cy = d->padding ? ct_gs_pad_d(y0 - 1.0 + i, d->in[1], d->padding, d->align_corners, &gy)
                                         : y0 - 1.0 + i;
            for (int j = 0; j < 4; j++) {
                const int q = 4 * i + j;
                const double cx = d->padding ? ct_gs_pad_d(x0 - 1.0 + j, d->in[2], d->padding, d->align_corners, &gx)
                                             : x0 - 1.0 + j;
                const bool inside = ct_gs_inside(cy, d->in[1]) && ct_gs_inside(cx, d->in[2]);
                t->off[q] = inside ? (int64_t)cy * d->in[2] + (int64_t)cx : -1;
                t->w[q] = wx[j] * wy[i];
                t->dw[q][0] = dwx[j] * wy[i];
                t->dw[q][1] = wx[j] * dwy[i];
                t->dw[q][2] = 0.0;
            }
        }
        return;
    }
    double lo[3], fr[3];
    for (int k = 0; k < nd; k++) {
        lo[k] = floor(src[k]);
        fr[k] = src[k] - lo[k];
    }
    t->n = 1 << nd;
    for (int q = 0; q < t->n; q++) {
        double axis_w[3];
        int64_t off = 0;
        bool inside = true;
        for (int k = nd - 1; k >= 0; k--) {
            const int bit = (q >> k) & 1;
            const double c = lo[k] + bit;
            axis_w[k] = bit ? fr[k] : 1.0 - fr[k];
            inside = inside && ct_gs_inside(c, ct_gs_size(d, k));
            off = inside ? off * ct_gs_size(d, k) + (int64_t)c : -1;
        }
        t->off[q] = off;
        t->w[q] = 1.0;
        for (int k = 0; k < nd; k++) {
            t->w[q] *= axis_w[k];
            double g = ((q >> k) & 1) ? 1.0 : -1.0;
            for (int j = 0; j < nd; j++) {
                g *= j == k ? 1.0 : axis_w[j];
            }
            t->dw[q][k] = g;
        }
        t->dw[q][2] = nd == 2 ? 0.0 : t->dw[q][2];
    }
}

/* out[n, c, p] for every channel c of output point p (of N x points). */
CT_HOST_DEVICE void ct_gs_point_forward(const CtGridSampleDesc *d, int64_t p)
{
    const bool f64 = d->dtype == CT_F64;
    const int64_t P = ct_gs_points(d), plane = d->in[0] * d->in[1] * d->in[2];
    const int64_t n = p / P, o = p - n * P;
    CtGsTaps t;
    ct_gs_taps(d, p, &t);
    for (int64_t c = 0; c < d->C; c++) {
        const int64_t base = (n * d->C + c) * plane;
        double acc = 0.0;
        for (int q = 0; q < t.n; q++) { /* a tap outside reads 0, times its weight: a NaN weight spreads */
            acc += t.w[q] * (t.off[q] >= 0 ? ct_gs_load(d->input, f64, base + t.off[q]) : 0.0);
        }
        ct_gs_store(d->output, f64, (n * d->C + c) * P + o, acc);
    }
}

/* grad_grid[p] and grad_out[n, :, p]'s share of grad_input, for output point p. */
CT_HOST_DEVICE void ct_gs_point_backward(const CtGridSampleDesc *d, int64_t p)
{
    const bool f64 = d->dtype == CT_F64;
    const int64_t P = ct_gs_points(d), plane = d->in[0] * d->in[1] * d->in[2];
    const int64_t n = p / P, o = p - n * P;
    CtGsTaps t;
    ct_gs_taps(d, p, &t);
    double gg[3] = {0.0, 0.0, 0.0};
    for (int64_t c = 0; c < d->C; c++) {
        const int64_t base = (n * d->C + c) * plane;
        const double go = ct_gs_load(d->grad_out, f64, (n * d->C + c) * P + o);
        for (int q = 0; q < t.n; q++) {
            if (t.off[q] < 0) {
                continue;
            }
            const double v = ct_gs_load(d->input, f64, base + t.off[q]);
            for (int k = 0; k < d->nd; k++) {
                gg[k] += go * v * t.dw[q][k];
            }
            CT_GS_ACCUMULATE(d->grad_input, f64, base + t.off[q], t.w[q] * go);
        }
    }
    for (int k = 0; k < d->nd; k++) {
        ct_gs_store(d->grad_grid, f64, p * d->nd + k, gg[k] * t.mult[k]);
    }
}

#endif /* CTORCH_GRID_SAMPLE_MATH_H */
