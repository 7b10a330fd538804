/* nn_math.h: the per-element math of the pointwise losses (value and gradients, in double) and of
 * nn.init.trunc_normal_, shared by the CPU kernels (nn.c) and the CUDA ones (cuda/nn.cu) through
 * CT_HOST_DEVICE. */
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

/* erfinv: Giles' single-precision approximation ("Approximating the erfinv function", GPU Gems
 * 2011), refined by two Newton steps on erf for double accuracy. */
CT_HOST_DEVICE double ct_erfinv(double y)
{
    if (y <= -1.0) {
        return y == -1.0 ? -INFINITY : NAN;
    }
    if (y >= 1.0) {
        return y == 1.0 ? INFINITY : NAN;
    }
    double w = -log((1.0 - y) * (1.0 + y)), x;
    if (w < 5.0) {
        w -= 2.5;
        x = 2.81022636e-08;
        x = 3.43273939e-07 + x * w;
        x = -3.5233877e-06 + x * w;
        x = -4.39150654e-06 + x * w;
        x = 0.00021858087 + x * w;
        x = -0.00125372503 + x * w;
        x = -0.00417768164 + x * w;
        x = 0.246640727 + x * w;
        x = 1.50140941 + x * w;
    } else {
        w = sqrt(w) - 3.0;
        x = -0.000200214257;
        x = 0.000100950558 + x * w;
        x = 0.00134934322 + x * w;
        x = -0.00367342844 + x * w;
        x = 0.00573950773 + x * w;
        x = -0.0076224613 + x * w;
        x = 0.00943887047 + x * w;
        x = 1.00167406 + x * w;
        x = 2.83297682 + x * w;
    }
    x *= y;
    for (int i = 0; i < 2; i++) {
        x -= (erf(x) - y) / (1.1283791670955126 * exp(-x * x));
    }
    return x;
}

/* nn.init.trunc_normal_'s transform of one uniform sample u in (2 cdf(a') - 1, 2 cdf(b') - 1). */
CT_HOST_DEVICE double ct_trunc_normal_of(double u, double mean, double std, double a, double b)
{
    double x = mean + std * 1.4142135623730951 * ct_erfinv(u);
    return x < a ? a : x > b ? b : x;
}

/* CTC (nn_misc.c, cuda/nn.cu): log(exp(a) + exp(b) + exp(c)), -inf when all three are -inf */
CT_HOST_DEVICE double ct_ctc_lse3(double a, double b, double c)
{
    double m = fmax(a, fmax(b, c));
    if (m == -INFINITY) {
        return -INFINITY;
    }
    return m + log(exp(a - m) + exp(b - m) + exp(c - m));
}

/* CTC's beta recursion for state s (of Lb) at a frame, before its own log_prob is added: from next, the
 * frame after's betas (states s, s + 1 and, unless the labels repeat, s + 2), or NULL at the sample's
 * last frame, where only the last two states end an alignment. */
CT_HOST_DEVICE double ct_ctc_beta_in(const double *next, const int64_t *ext, int64_t s, int64_t Lb)
{
    if (next == NULL) {
        return s >= Lb - 2 ? 0.0 : -INFINITY;
    }
    return ct_ctc_lse3(next[s], s + 1 < Lb ? next[s + 1] : -INFINITY,
                       s + 2 < Lb && ext[s] != ext[s + 2] ? next[s + 2] : -INFINITY);
}

/* The gradient of one log_probs element: lp its value, lcab the log of the sum of alpha * beta over the
 * states of its label, nll the sample's loss, g the sample's incoming gradient. */
CT_HOST_DEVICE double ct_ctc_grad(double lp, double lcab, double nll, double g)
{
    return (exp(lp) - exp(lcab + nll - lp)) * g;
}

#endif /* CTORCH_NN_MATH_H */
