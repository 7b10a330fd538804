/* norm_math.h: the layout of batch norm's and group norm's statistics units over (N, C, L) input
 * (see CtChannelNormDesc in nn.h) and the per-element formulas, shared by the CPU kernels (norm.c)
 * and the CUDA ones (cuda/norm.cu) through CT_HOST_DEVICE.
 *
 * A unit (one channel for batch norm, one (n, group) pair for group norm) is `count` segments of L
 * contiguous elements, segment k starting at element first + k * step. A channel's values for
 * grad_weight / grad_bias are laid out as a batch-norm unit. */
#ifndef CTORCH_NORM_MATH_H
#define CTORCH_NORM_MATH_H

#include "dtype.h"
#include "nn.h"
#include <math.h>

typedef struct {
    int64_t count, first, step;
} CtNormSegments;

CT_HOST_DEVICE int64_t ct_norm_units(const CtChannelNormDesc *d) { return d->groups ? d->N * d->groups : d->C; }

/* channel c over the batch: N segments C * L apart */
CT_HOST_DEVICE CtNormSegments ct_norm_channel(const CtChannelNormDesc *d, int64_t c)
{
    CtNormSegments s = {d->N, c * d->L, d->C * d->L};
    return s;
}

CT_HOST_DEVICE CtNormSegments ct_norm_unit(const CtChannelNormDesc *d, int64_t u)
{
    if (d->groups == 0) {
        return ct_norm_channel(d, u);
    }
    int64_t cg = d->C / d->groups; /* a group's channels are contiguous: one segment per channel */
    CtNormSegments s = {cg, u * cg * d->L, d->L};
    return s;
}

/* The unit holding the elements of (n, c). */
CT_HOST_DEVICE int64_t ct_norm_unit_of(const CtChannelNormDesc *d, int64_t n, int64_t c)
{
    return d->groups ? n * d->groups + c / (d->C / d->groups) : c;
}

/* Element offset of the i-th value (0 <= i < count * L) of segments s. */
CT_HOST_DEVICE int64_t ct_norm_offset(const CtNormSegments *s, int64_t L, int64_t i)
{
    return s->first + (i / L) * s->step + i % L;
}

/* Running statistics after one batch: (1 - m) running + m batch. */
CT_HOST_DEVICE double ct_norm_running(double running, double batch, double momentum)
{
    return (1.0 - momentum) * running + momentum * batch;
}

/* grad_input of one element. With batch statistics (xhat = (x - mean) invstd over the unit's M
 * values, dy = g w): invstd (dy - sum(dy) / M - xhat sum(dy xhat) / M); with fixed (running)
 * statistics: dy invstd. */
CT_HOST_DEVICE double ct_norm_grad_input(bool batch_stats, double dy, double xhat, double invstd, double sum_dy,
                                         double sum_dy_xhat, double M)
{
    if (!batch_stats) {
        return dy * invstd;
    }
    return invstd * (dy - sum_dy / M - xhat * sum_dy_xhat / M);
}

#endif /* CTORCH_NORM_MATH_H */
