/* nn_math.h: the per-element math of the pointwise losses (value and gradients, in double), shared
 * by the CPU kernels (nn.c) and the CUDA ones (cuda/nn.cu) through CT_HOST_DEVICE. */
#ifndef CTORCH_NN_MATH_H
#define CTORCH_NN_MATH_H

#include "dtype.h"
#include "nn.h"
#include <math.h>

CT_HOST_DEVICE double ct_loss_sign_of(double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0; }
CT_HOST_DEVICE double ct_log1pexp_neg_abs(double x) { return log1p(exp(-fabs(x))); }
CT_HOST_DEVICE double ct_log_sigmoid(double x) { return -(fmax(-x, 0.0) + ct_log1pexp_neg_abs(x)); }

/* The loss of one element (w: weight, pw: pos_weight, 1 when absent). */
CT_HOST_DEVICE double ct_loss_value(CtPointwiseLoss kind, double x, double y, double w, double pw, double beta)
{
    switch (kind) {
    case CT_LOSS_MSE:
        return w * (x - y) * (x - y);
    case CT_LOSS_L1:
        return w * fabs(x - y);
    case CT_LOSS_SMOOTH_L1: {
        double z = fabs(x - y);
        return z < beta ? 0.5 * z * z / beta : z - 0.5 * beta;
    }
    case CT_LOSS_BCE: /* logs are clamped at -100 as PyTorch does */
        return -w * (y * fmax(log(x), -100.0) + (1.0 - y) * fmax(log1p(-x), -100.0));
    case CT_LOSS_BCE_LOGITS: {
        double log_weight = (pw - 1.0) * y + 1.0;
        return w * ((1.0 - y) * x + log_weight * (ct_log1pexp_neg_abs(x) + fmax(-x, 0.0)));
    }
    }
    return 0.0;
}

/* d loss / d x and d loss / d y of one element. */
CT_HOST_DEVICE void ct_loss_grads(CtPointwiseLoss kind, double x, double y, double w, double pw, double beta, double *gx,
                              double *gy)
{
    switch (kind) {
    case CT_LOSS_MSE:
        *gx = w * 2.0 * (x - y);
        *gy = -*gx;
        return;
    case CT_LOSS_L1:
        *gx = w * ct_loss_sign_of(x - y);
        *gy = -*gx;
        return;
    case CT_LOSS_SMOOTH_L1: {
        double z = x - y;
        *gx = fabs(z) < beta ? z / beta : ct_loss_sign_of(z);
        *gy = -*gx;
        return;
    }
    case CT_LOSS_BCE:
        *gx = w * (x - y) / fmax((1.0 - x) * x, 1e-12);
        *gy = w * (log1p(-x) - log(x));
        return;
    case CT_LOSS_BCE_LOGITS: {
        double sig = 1.0 / (1.0 + exp(-x));
        double t = pw * y;
        *gx = w * ((t + 1.0 - y) * sig - t);
        *gy = w * (ct_log_sigmoid(-x) - pw * ct_log_sigmoid(x));
        return;
    }
    }
}

#endif /* CTORCH_NN_MATH_H */
