/* clip_math.h: the arithmetic of nn.utils.get_total_norm / clip_grad_norm_ (see CtGradNormDesc in
 * optim.h), shared by the CPU (clip.c) and CUDA (cuda/optim.cu) kernels through CT_HOST_DEVICE, so
 * that both devices accumulate and combine alike (in double).
 *
 * A total norm is computed in three folds: each chunk of a tensor's elements folds |x| into a
 * partial (ct_clip_acc), a tensor's chunk partials combine in chunk order (ct_clip_combine) into the
 * tensor's value, and the tensors' values combine in tensor order into the total (ct_clip_of_tensor,
 * then ct_clip_combine, then ct_clip_finish). For p = 0 a tensor counts once when any element is
 * nonzero: PyTorch takes the 0-"norm" of the per-tensor counts. */
#ifndef CTORCH_CLIP_MATH_H
#define CTORCH_CLIP_MATH_H

#include "dtype.h"
#include <math.h>

typedef enum { CT_CLIP_SUM_POW, CT_CLIP_MAX, CT_CLIP_MIN, CT_CLIP_COUNT } CtClipKind;

CT_HOST_DEVICE CtClipKind ct_clip_kind(double p)
{
    return isinf(p) ? (p > 0 ? CT_CLIP_MAX : CT_CLIP_MIN) : p == 0.0 ? CT_CLIP_COUNT : CT_CLIP_SUM_POW;
}

/* The identity of the fold. */
CT_HOST_DEVICE double ct_clip_init(CtClipKind k) { return k == CT_CLIP_MIN ? INFINITY : 0.0; }

/* NaN-propagating max / min. */
CT_HOST_DEVICE double ct_clip_max(double a, double b) { return (a != a || a > b) ? a : b; }
CT_HOST_DEVICE double ct_clip_min(double a, double b) { return (a != a || a < b) ? a : b; }

CT_HOST_DEVICE double ct_clip_combine(CtClipKind k, double a, double b)
{
    return k == CT_CLIP_MAX ? ct_clip_max(a, b) : k == CT_CLIP_MIN ? ct_clip_min(a, b) : a + b;
}

/* Folds one element x into a partial. */
CT_HOST_DEVICE double ct_clip_acc(CtClipKind k, double p, double acc, double x)
{
    double a = fabs(x);
    switch (k) {
    case CT_CLIP_MAX: return ct_clip_max(acc, a);
    case CT_CLIP_MIN: return ct_clip_min(acc, a);
    case CT_CLIP_COUNT: return acc + (x != 0.0 ? 1.0 : 0.0);
    default: return acc + (p == 1.0 ? a : p == 2.0 ? a * a : pow(a, p));
    }
}

/* A tensor's value as it enters the combination over tensors. */
CT_HOST_DEVICE double ct_clip_of_tensor(CtClipKind k, double v)
{
    return k == CT_CLIP_COUNT ? (v != 0.0 ? 1.0 : 0.0) : v;
}

CT_HOST_DEVICE double ct_clip_finish(CtClipKind k, double p, double v)
{
    if (k != CT_CLIP_SUM_POW) {
        return v;
    }
    return p == 1.0 ? v : p == 2.0 ? sqrt(v) : pow(v, 1.0 / p);
}

/* clip_grads_with_norm_'s factor: min(max_norm / (total + 1e-6), 1). */
CT_HOST_DEVICE double ct_clip_coef(double max_norm, double total)
{
    double c = max_norm / (total + 1e-6);
    return c > 1.0 ? 1.0 : c;
}

/* scale_by_norm's factor: the clip factor, or (by_total) the total itself. */
CT_HOST_DEVICE double ct_scale_coef(bool by_total, double max_norm, double total)
{
    return by_total ? total : ct_clip_coef(max_norm, total);
}

#endif /* CTORCH_CLIP_MATH_H */
