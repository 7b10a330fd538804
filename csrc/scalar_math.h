/* scalar_math.h: the scalar math of every elementwise op, written once and shared by the CPU
 * kernels (csrc/elementwise_cpu.c) and the CUDA kernels (csrc/cuda/elementwise.cu).
 *
 * Each op `name` has one function per compute type T, named ct_sm_<name>_<T>:
 *   float, double               (float16/bfloat16 are computed in float)
 *   uint8_t, int8_t, int16_t, int32_t, int64_t
 *   bool
 * An op only exists for the types its domain allows (see CT_EW_OP_LIST in elementwise_kernels.h).
 * The bodies for float and double are one macro (CT_SM_FLOAT_FUNCS), the bodies for the five
 * integer types another (CT_SM_INT_FUNCS); bool is written out. Semantics follow PyTorch:
 *   - integers wrap (arithmetic is done in an unsigned type so that overflow is defined);
 *   - integer division by zero returns 0 here: the caller detects it (the CPU raises
 *     "ZeroDivisionError" as PyTorch does); INT_MIN / -1 wraps instead of trapping;
 *   - floor division and remainder are Python's (sign of the divisor), fmod is C's;
 *   - maximum/minimum/clamp propagate NaN, fmax/fmin ignore it;
 *   - shifts by a negative amount or by >= the bit width give 0 (right shifts of negative
 *     numbers give -1);
 *   - integer pow with a negative exponent gives 0 unless the base is 1 or -1. */
#ifndef CTORCH_SCALAR_MATH_H
#define CTORCH_SCALAR_MATH_H

#include "dtype.h"   /* CT_HOST_DEVICE */
#include "nn_math.h" /* ct_erfinv */
#ifndef __CUDACC__
#include <math.h>
#endif

/* The libm name of fn for T: CT_MF(float, exp) is expf, CT_MF(double, exp) is exp. */
#define CT_MF(T, fn) CT_MF_##T(fn)
#define CT_MF_float(fn) fn##f
#define CT_MF_double(fn) fn

/* ------------------------------------------------------------------------------------------
 * float and double */
#define CT_SM_FLOAT_FUNCS(T)                                                                               \
    /* arithmetic */                                                                                        \
    CT_HOST_DEVICE T ct_sm_add_##T(T a, T b) { return a + b; }                                             \
    CT_HOST_DEVICE T ct_sm_sub_##T(T a, T b) { return a - b; }                                             \
    CT_HOST_DEVICE T ct_sm_mul_##T(T a, T b) { return a * b; }                                             \
    CT_HOST_DEVICE T ct_sm_add_alpha_##T(T a, T b, T alpha) { return a + alpha * b; }                       \
    CT_HOST_DEVICE T ct_sm_sub_alpha_##T(T a, T b, T alpha) { return a - alpha * b; }                       \
    CT_HOST_DEVICE T ct_sm_div_##T(T a, T b) { return a / b; }                                             \
    CT_HOST_DEVICE T ct_sm_div_trunc_##T(T a, T b) { return CT_MF(T, trunc)(a / b); }                     \
    /* Python's float floor division: exact for large quotients, the IEEE result for b == 0 */           \
    CT_HOST_DEVICE T ct_sm_div_floor_##T(T a, T b)                                                        \
    {                                                                                                       \
        if (b == 0) {                                                                                       \
            return a / b;                                                                                   \
        }                                                                                                   \
        T mod = CT_MF(T, fmod)(a, b);                                                                       \
        T div = (a - mod) / b;                                                                              \
        if (mod != 0 && ((b < 0) != (mod < 0))) {                                                           \
            div -= (T)1;                                                                                    \
        }                                                                                                   \
        if (div == 0) {                                                                                     \
            return CT_MF(T, copysign)((T)0, a / b);                                                         \
        }                                                                                                   \
        T floordiv = CT_MF(T, floor)(div);                                                                  \
        if (div - floordiv > (T)0.5) {                                                                      \
            floordiv += (T)1;                                                                               \
        }                                                                                                   \
        return floordiv;                                                                                    \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_remainder_##T(T a, T b)                                                        \
    {                                                                                                       \
        T mod = CT_MF(T, fmod)(a, b);                                                                       \
        if (mod != 0 && ((b < 0) != (mod < 0))) {                                                           \
            mod += b;                                                                                       \
        }                                                                                                   \
        return mod;                                                                                         \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_fmod_##T(T a, T b) { return CT_MF(T, fmod)(a, b); }                            \
    CT_HOST_DEVICE T ct_sm_pow_##T(T a, T b) { return CT_MF(T, pow)(a, b); }                              \
    CT_HOST_DEVICE T ct_sm_atan2_##T(T a, T b) { return CT_MF(T, atan2)(a, b); }                          \
    CT_HOST_DEVICE T ct_sm_copysign_##T(T a, T b) { return CT_MF(T, copysign)(a, b); }                    \
    CT_HOST_DEVICE T ct_sm_hypot_##T(T a, T b) { return CT_MF(T, hypot)(a, b); }                          \
    CT_HOST_DEVICE T ct_sm_logaddexp_##T(T a, T b)                                                        \
    {                                                                                                       \
        if (CT_MF(T, fabs)(a) == (T)INFINITY && a == b) {                                                   \
            return a;                                                                                       \
        }                                                                                                   \
        T m = a > b ? a : b;                                                                                \
        return m + CT_MF(T, log1p)(CT_MF(T, exp)(-CT_MF(T, fabs)(a - b)));                                 \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_logaddexp2_##T(T a, T b)                                                       \
    {                                                                                                       \
        if (CT_MF(T, fabs)(a) == (T)INFINITY && a == b) {                                                   \
            return a;                                                                                       \
        }                                                                                                   \
        T m = a > b ? a : b;                                                                                \
        return m + CT_MF(T, log1p)(CT_MF(T, exp2)(-CT_MF(T, fabs)(a - b))) * (T)1.4426950408889634;        \
    }                                                                                                       \
    /* min/max: maximum, minimum and clamp propagate NaN; fmax and fmin ignore it */                        \
    CT_HOST_DEVICE T ct_sm_maximum_##T(T a, T b) { return (a != a || a > b) ? a : b; }                    \
    CT_HOST_DEVICE T ct_sm_minimum_##T(T a, T b) { return (a != a || a < b) ? a : b; }                    \
    CT_HOST_DEVICE T ct_sm_fmax_##T(T a, T b) { return CT_MF(T, fmax)(a, b); }                            \
    CT_HOST_DEVICE T ct_sm_fmin_##T(T a, T b) { return CT_MF(T, fmin)(a, b); }                            \
    CT_HOST_DEVICE T ct_sm_clamp_min_##T(T a, T lo) { return (a != a || a > lo) ? a : lo; }               \
    CT_HOST_DEVICE T ct_sm_clamp_max_##T(T a, T hi) { return (a != a || a < hi) ? a : hi; }               \
    CT_HOST_DEVICE T ct_sm_clamp_##T(T a, T lo, T hi)                                                     \
    {                                                                                                       \
        return ct_sm_clamp_max_##T(ct_sm_clamp_min_##T(a, lo), hi);                                         \
    }                                                                                                       \
    /* comparisons and logic */                                                                             \
    CT_HOST_DEVICE bool ct_sm_eq_##T(T a, T b) { return a == b; }                                          \
    CT_HOST_DEVICE bool ct_sm_ne_##T(T a, T b) { return a != b; }                                          \
    CT_HOST_DEVICE bool ct_sm_lt_##T(T a, T b) { return a < b; }                                           \
    CT_HOST_DEVICE bool ct_sm_le_##T(T a, T b) { return a <= b; }                                          \
    CT_HOST_DEVICE bool ct_sm_gt_##T(T a, T b) { return a > b; }                                           \
    CT_HOST_DEVICE bool ct_sm_ge_##T(T a, T b) { return a >= b; }                                          \
    CT_HOST_DEVICE bool ct_sm_logical_and_##T(T a, T b) { return a != 0 && b != 0; }                       \
    CT_HOST_DEVICE bool ct_sm_logical_or_##T(T a, T b) { return a != 0 || b != 0; }                        \
    CT_HOST_DEVICE bool ct_sm_logical_xor_##T(T a, T b) { return (a != 0) != (b != 0); }                  \
    CT_HOST_DEVICE bool ct_sm_logical_not_##T(T a) { return a == 0; }                                      \
    /* ternary */                                                                                           \
    CT_HOST_DEVICE T ct_sm_where_##T(bool c, T a, T b) { return c ? a : b; }                              \
    CT_HOST_DEVICE T ct_sm_lerp_##T(T start, T end, T w)                                                  \
    {                                                                                                       \
        return CT_MF(T, fabs)(w) < (T)0.5 ? start + w * (end - start) : end - (end - start) * ((T)1 - w);   \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_addcmul_##T(T s, T t1, T t2, T value) { return s + value * t1 * t2; }          \
    CT_HOST_DEVICE T ct_sm_addcdiv_##T(T s, T t1, T t2, T value) { return s + value * t1 / t2; }          \
    /* GradScaler's update (PyTorch's _amp_update_scale_): a found inf/NaN backs the scale off and      \
     * restarts the count t of good steps; the interval-th good step grows it (when still finite) */      \
    CT_HOST_DEVICE T ct_sm_amp_scale_##T(T s, T t, T found, T growth, T backoff, T interval)            \
    {                                                                                                       \
        if (found != 0) {                                                                                   \
            return s * backoff;                                                                             \
        }                                                                                                   \
        T grown = s * growth;                                                                               \
        return (t + (T)1 == interval && grown == grown && CT_MF(T, fabs)(grown) != (T)INFINITY) ? grown : s; \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_amp_tracker_##T(T t, T found, T interval)                                      \
    {                                                                                                       \
        return (found != 0 || t + (T)1 == interval) ? (T)0 : t + (T)1;                                      \
    }                                                                                                       \
    /* unary */                                                                                             \
    CT_HOST_DEVICE T ct_sm_neg_##T(T a) { return -a; }                                                     \
    CT_HOST_DEVICE T ct_sm_abs_##T(T a) { return CT_MF(T, fabs)(a); }                                      \
    CT_HOST_DEVICE T ct_sm_sign_##T(T a) { return (T)((a > 0) - (a < 0)); }                                \
    CT_HOST_DEVICE T ct_sm_square_##T(T a) { return a * a; }                                               \
    CT_HOST_DEVICE T ct_sm_cube_##T(T a) { return a * a * a; }                                             \
    CT_HOST_DEVICE T ct_sm_inv_square_##T(T a) { return (T)1 / (a * a); }                                  \
    CT_HOST_DEVICE T ct_sm_relu_##T(T a) { return a < 0 ? (T)0 : a; }                                      \
    CT_HOST_DEVICE T ct_sm_floor_##T(T a) { return CT_MF(T, floor)(a); }                                   \
    CT_HOST_DEVICE T ct_sm_ceil_##T(T a) { return CT_MF(T, ceil)(a); }                                     \
    CT_HOST_DEVICE T ct_sm_round_##T(T a) { return CT_MF(T, nearbyint)(a); }                               \
    CT_HOST_DEVICE T ct_sm_trunc_##T(T a) { return CT_MF(T, trunc)(a); }                                   \
    CT_HOST_DEVICE T ct_sm_frac_##T(T a) { return a - CT_MF(T, trunc)(a); }                                \
    /* round(decimals): ten_pow = 10^|decimals|, neg: decimals < 0 */                                      \
    CT_HOST_DEVICE T ct_sm_round_decimals_##T(T a, T ten_pow, T neg)                                      \
    {                                                                                                       \
        return neg != 0 ? CT_MF(T, nearbyint)(a / ten_pow) * ten_pow : CT_MF(T, nearbyint)(a * ten_pow) / ten_pow; \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_exp_##T(T a) { return CT_MF(T, exp)(a); }                                       \
    CT_HOST_DEVICE T ct_sm_exp2_##T(T a) { return CT_MF(T, exp2)(a); }                                     \
    CT_HOST_DEVICE T ct_sm_expm1_##T(T a) { return CT_MF(T, expm1)(a); }                                   \
    CT_HOST_DEVICE T ct_sm_log_##T(T a) { return CT_MF(T, log)(a); }                                       \
    CT_HOST_DEVICE T ct_sm_log2_##T(T a) { return CT_MF(T, log2)(a); }                                     \
    CT_HOST_DEVICE T ct_sm_log10_##T(T a) { return CT_MF(T, log10)(a); }                                   \
    CT_HOST_DEVICE T ct_sm_log1p_##T(T a) { return CT_MF(T, log1p)(a); }                                   \
    CT_HOST_DEVICE T ct_sm_sqrt_##T(T a) { return CT_MF(T, sqrt)(a); }                                     \
    CT_HOST_DEVICE T ct_sm_rsqrt_##T(T a) { return (T)1 / CT_MF(T, sqrt)(a); }                             \
    CT_HOST_DEVICE T ct_sm_reciprocal_##T(T a) { return (T)1 / a; }                                        \
    CT_HOST_DEVICE T ct_sm_sin_##T(T a) { return CT_MF(T, sin)(a); }                                       \
    CT_HOST_DEVICE T ct_sm_cos_##T(T a) { return CT_MF(T, cos)(a); }                                       \
    CT_HOST_DEVICE T ct_sm_tan_##T(T a) { return CT_MF(T, tan)(a); }                                       \
    CT_HOST_DEVICE T ct_sm_asin_##T(T a) { return CT_MF(T, asin)(a); }                                     \
    CT_HOST_DEVICE T ct_sm_acos_##T(T a) { return CT_MF(T, acos)(a); }                                     \
    CT_HOST_DEVICE T ct_sm_atan_##T(T a) { return CT_MF(T, atan)(a); }                                     \
    CT_HOST_DEVICE T ct_sm_sinh_##T(T a) { return CT_MF(T, sinh)(a); }                                     \
    CT_HOST_DEVICE T ct_sm_cosh_##T(T a) { return CT_MF(T, cosh)(a); }                                     \
    CT_HOST_DEVICE T ct_sm_tanh_##T(T a) { return CT_MF(T, tanh)(a); }                                     \
    CT_HOST_DEVICE T ct_sm_asinh_##T(T a) { return CT_MF(T, asinh)(a); }                                   \
    CT_HOST_DEVICE T ct_sm_acosh_##T(T a) { return CT_MF(T, acosh)(a); }                                   \
    CT_HOST_DEVICE T ct_sm_atanh_##T(T a) { return CT_MF(T, atanh)(a); }                                   \
    CT_HOST_DEVICE T ct_sm_erf_##T(T a) { return CT_MF(T, erf)(a); }                                       \
    CT_HOST_DEVICE T ct_sm_erfc_##T(T a) { return CT_MF(T, erfc)(a); }                                     \
    CT_HOST_DEVICE T ct_sm_sigmoid_##T(T a) { return (T)1 / ((T)1 + CT_MF(T, exp)(-a)); }                  \
    CT_HOST_DEVICE T ct_sm_silu_##T(T a) { return a / ((T)1 + CT_MF(T, exp)(-a)); }                        \
    /* gelu: x * Phi(x), through erfc so that the negative tail keeps its precision; or the tanh     \
     * approximation */                                                                                     \
    CT_HOST_DEVICE T ct_sm_gelu_##T(T a) { return (T)0.5 * a * CT_MF(T, erfc)(a * -(T)0.70710678118654752440); } \
    CT_HOST_DEVICE T ct_sm_gelu_tanh_##T(T a)                                                             \
    {                                                                                                       \
        T inner = (T)0.79788456080286535588 * (a + (T)0.044715 * a * a * a);                                \
        return (T)0.5 * a * ((T)1 + CT_MF(T, tanh)(inner));                                                 \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_softplus_##T(T a, T beta, T threshold)                                         \
    {                                                                                                       \
        return a * beta > threshold ? a : CT_MF(T, log1p)(CT_MF(T, exp)(a * beta)) / beta;                 \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_nan_to_num_##T(T a, T nan, T posinf, T neginf)                                 \
    {                                                                                                       \
        return a != a ? nan : a == (T)INFINITY ? posinf : a == -(T)INFINITY ? neginf : a;                   \
    }                                                                                                       \
    /* nn activations (csrc/nn_act.c), in PyTorch's forms (which decide NaN, -0.0 and infinities) */     \
    CT_HOST_DEVICE T ct_sm_elu_##T(T a, T negcoef, T scale, T input_scale)                                \
    {                                                                                                       \
        return a <= 0 ? CT_MF(T, expm1)(a * input_scale) * negcoef : a * scale;                             \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_hardtanh_##T(T a, T lo, T hi) { return ct_sm_clamp_##T(a, lo, hi); }          \
    CT_HOST_DEVICE T ct_sm_hardsigmoid_##T(T a) { return ct_sm_clamp_##T(a + (T)3, (T)0, (T)6) / (T)6; } \
    CT_HOST_DEVICE T ct_sm_hardswish_##T(T a) { return a * ct_sm_clamp_##T(a + (T)3, (T)0, (T)6) / (T)6; } \
    CT_HOST_DEVICE T ct_sm_mish_##T(T a) { return a * CT_MF(T, tanh)(CT_MF(T, log1p)(CT_MF(T, exp)(a))); } \
    CT_HOST_DEVICE T ct_sm_log_sigmoid_##T(T a)                                                           \
    {                                                                                                       \
        return (a < 0 ? a : (T)0) - CT_MF(T, log1p)(CT_MF(T, exp)(-CT_MF(T, fabs)(a)));                   \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_softshrink_##T(T a, T lambd)                                                   \
    {                                                                                                       \
        return a > lambd ? a - lambd : a < -lambd ? a + lambd : a * (T)0;                                   \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_hardshrink_##T(T a, T lambd) { return (a >= -lambd && a <= lambd) ? (T)0 : a; } \
    CT_HOST_DEVICE T ct_sm_threshold_##T(T a, T threshold, T value) { return a <= threshold ? value : a; } \
    CT_HOST_DEVICE T ct_sm_prelu_##T(T a, T w) { return a > 0 ? a : w * a; }                              \
    /* PyTorch's threshold_backward, tanh_backward and sigmoid_backward, their order of operations */      \
    CT_HOST_DEVICE T ct_sm_threshold_backward_##T(T g, T x, T threshold) { return x <= threshold ? (T)0 : g; } \
    CT_HOST_DEVICE T ct_sm_tanh_backward_##T(T g, T y) { return g * ((T)1 - y * y); }                     \
    CT_HOST_DEVICE T ct_sm_sigmoid_backward_##T(T g, T y) { return g * ((T)1 - y) * y; }                   \
    CT_HOST_DEVICE bool ct_sm_isnan_##T(T a) { return a != a; }                                            \
    CT_HOST_DEVICE bool ct_sm_isinf_##T(T a) { return CT_MF(T, fabs)(a) == (T)INFINITY; }                  \
    CT_HOST_DEVICE bool ct_sm_isfinite_##T(T a) { return a == a && CT_MF(T, fabs)(a) != (T)INFINITY; }     \
    CT_HOST_DEVICE bool ct_sm_isposinf_##T(T a) { return a == (T)INFINITY; }                               \
    CT_HOST_DEVICE bool ct_sm_isneginf_##T(T a) { return a == -(T)INFINITY; }                              \
    CT_HOST_DEVICE bool ct_sm_signbit_##T(T a) { return signbit(a) != 0; }

CT_SM_FLOAT_FUNCS(float)
CT_SM_FLOAT_FUNCS(double)

/* ------------------------------------------------------------------------------------------
 * special functions (erfinv, lgamma, digamma, polygamma, i0/i1, sinc, logit, xlogy, ...):
 * computed in double for both float types (float rounds the double result once), with
 * PyTorch's values at the poles: lgamma(0) = inf, digamma(0) = -inf (nan at the negative
 * integers), polygamma(n, 0) = inf. */
#define CT_SM_PI 3.14159265358979323846

/* Hurwitz zeta(x, q) = sum_k (k + q)^-x: a direct sum to q + 9, then the Euler-Maclaurin tail
 * with the Bernoulli coefficients (2j)! / B_2j (Cephes' algorithm). */
CT_HOST_DEVICE double ct_sm_hurwitz_zeta(double x, double q)
{
    const double coef[12] = {12.0,
                             -720.0,
                             30240.0,
                             -1209600.0,
                             47900160.0,
                             -1.8924375803183791606e9,
                             7.47242496e10,
                             -2.950130727918164224e12,
                             1.1646782814350067249e14,
                             -4.5979787224074726105e15,
                             1.8152105401943546773e17,
                             -7.1661652561756670113e18};
    const double eps = 1.11022302462515654042e-16;
    if (x == 1.0) {
        return INFINITY;
    }
    if (x < 1.0) {
        return NAN;
    }
    if (q <= 0.0) {
        if (q == floor(q)) {
            return INFINITY;
        }
        if (x != floor(x)) {
            return NAN;
        }
    }
    double s = pow(q, -x), a = q, b = 0.0;
    int i = 0;
    while (i < 9 || a <= 9.0) {
        i++;
        a += 1.0;
        b = pow(a, -x);
        s += b;
        if (fabs(b / s) < eps) {
            return s;
        }
    }
    double w = a, k = 0.0;
    s += b * w / (x - 1.0);
    s -= 0.5 * b;
    a = 1.0;
    for (i = 0; i < 12; i++) {
        a *= x + k;
        b /= w;
        double t = a * b / coef[i];
        s += t;
        if (fabs(t / s) < eps) {
            break;
        }
        k += 1.0;
        a *= x + k;
        b /= w;
        k += 1.0;
    }
    return s;
}

/* digamma: reflection below 0, the recurrence up to 10, then the asymptotic series */
CT_HOST_DEVICE double ct_sm_digamma_d(double x)
{
    if (x == 0.0) {
        return copysign(INFINITY, -x);
    }
    double shift = 0.0;
    if (x < 0.0) {
        if (x == floor(x)) {
            return NAN;
        }
        /* psi(x) = psi(1 - x) - pi / tan(pi x) */
        shift = -CT_SM_PI / tan(CT_SM_PI * x);
        x = 1.0 - x;
    }
    while (x < 10.0) {
        shift -= 1.0 / x;
        x += 1.0;
    }
    double z = 1.0 / (x * x);
    double series = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12.0))))));
    return shift + log(x) - 0.5 / x - series;
}

/* polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1; digamma for n = 0 */
CT_HOST_DEVICE double ct_sm_polygamma_d(double x, double n)
{
    if (n == 0.0) {
        return ct_sm_digamma_d(x);
    }
    double factorial = 1.0;
    for (double k = 2.0; k <= n; k += 1.0) {
        factorial *= k;
    }
    return (fmod(n, 2.0) == 1.0 ? 1.0 : -1.0) * factorial * ct_sm_hurwitz_zeta(n + 1.0, x);
}

/* modified Bessel functions I_nu (nu = 0, 1), times e^-|x| when scaled (torch.special.i0e/i1e): the
 * power series below 30, the asymptotic expansion e^x / sqrt(2 pi x) sum_k (-1)^k prod_j (4 nu^2 -
 * (2j - 1)^2) / (k! (8x)^k) above */
CT_HOST_DEVICE double ct_sm_bessel_ie(double x, int nu, bool scaled)
{
    double ax = fabs(x), r;
    if (ax != ax) {
        return x;
    }
    if (ax < 30.0) {
        double half = 0.5 * ax, term = nu == 0 ? 1.0 : half, sum = term;
        for (int k = 1; k < 500; k++) {
            term *= half * half / ((double)k * (double)(k + nu));
            sum += term;
            if (term < sum * 1e-17) {
                break;
            }
        }
        r = scaled ? sum * exp(-ax) : sum;
    } else if (ax == INFINITY) {
        r = scaled ? 0.0 : INFINITY;
    } else {
        double mu = 4.0 * nu * nu, term = 1.0, sum = 1.0;
        for (int k = 1; k < 60; k++) {
            term *= -(mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (k * 8.0 * ax);
            sum += term;
            if (fabs(term) < 1e-17 * fabs(sum)) {
                break;
            }
        }
        /* e^x split in two so that x up to ~1400 does not overflow before the division */
        double e = scaled ? 1.0 : exp(0.5 * ax);
        r = e * (sum / sqrt(2.0 * CT_SM_PI * ax)) * e;
    }
    return (nu == 1 && x < 0) ? -r : r;
}
CT_HOST_DEVICE double ct_sm_bessel_i(double x, int nu) { return ct_sm_bessel_ie(x, nu, false); }

#define CT_SM_SPECIAL_FUNCS(T)                                                                            \
    CT_HOST_DEVICE T ct_sm_erfinv_##T(T a) { return (T)ct_erfinv((double)a); }                            \
    CT_HOST_DEVICE T ct_sm_lgamma_##T(T a) { return (T)lgamma((double)a); }                               \
    CT_HOST_DEVICE T ct_sm_digamma_##T(T a) { return (T)ct_sm_digamma_d((double)a); }                     \
    CT_HOST_DEVICE T ct_sm_polygamma_##T(T a, T n) { return (T)ct_sm_polygamma_d((double)a, (double)n); } \
    CT_HOST_DEVICE T ct_sm_i0_##T(T a) { return (T)ct_sm_bessel_i((double)a, 0); }                        \
    CT_HOST_DEVICE T ct_sm_i1_##T(T a) { return (T)ct_sm_bessel_i((double)a, 1); }                        \
    CT_HOST_DEVICE T ct_sm_sinc_##T(T a)                                                                  \
    {                                                                                                       \
        double x = CT_SM_PI * (double)a;                                                                    \
        return a == 0 ? (T)1 : (T)(sin(x) / x);                                                             \
    }                                                                                                       \
    /* logit(x, eps): eps < 0 is PyTorch's eps=None (no clamp) */                                          \
    CT_HOST_DEVICE T ct_sm_logit_##T(T a, T eps)                                                          \
    {                                                                                                       \
        double x = (double)a;                                                                               \
        if (eps >= 0) {                                                                                     \
            x = x < (double)eps ? (double)eps : x > 1.0 - (double)eps ? 1.0 - (double)eps : x;              \
        }                                                                                                   \
        return (T)log(x / (1.0 - x));                                                                       \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_xlogy_##T(T a, T b)                                                            \
    {                                                                                                       \
        return b != b ? b : a == 0 ? (T)0 : (T)((double)a * log((double)b));                               \
    }                                                                                                       \
    /* torch.special's xlog1py (x log1p(y), 0 where x == 0 unless y is NaN) and entr (-x ln x) */       \
    CT_HOST_DEVICE T ct_sm_xlog1py_##T(T a, T b)                                                          \
    {                                                                                                       \
        return b != b ? b : a == 0 ? (T)0 : (T)((double)a * log1p((double)b));                             \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_entr_##T(T a)                                                                  \
    {                                                                                                       \
        return a != a ? a : a > 0 ? (T)(-(double)a * log((double)a)) : a == 0 ? (T)0 : -(T)INFINITY;        \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_heaviside_##T(T a, T v) { return a == 0 ? v : (T)(a > 0); }                    \
    CT_HOST_DEVICE T ct_sm_nextafter_##T(T a, T b) { return CT_MF(T, nextafter)(a, b); }                  \
    CT_HOST_DEVICE T ct_sm_deg2rad_##T(T a) { return a * (T)(CT_SM_PI / 180.0); }                         \
    CT_HOST_DEVICE T ct_sm_rad2deg_##T(T a) { return a * (T)(180.0 / CT_SM_PI); }                         \
    /* frexp's two halves: the mantissa in [0.5, 1), and the exponent (0 for 0, inf, nan) */            \
    CT_HOST_DEVICE T ct_sm_frexp_mantissa_##T(T a)                                                        \
    {                                                                                                       \
        int e;                                                                                              \
        return CT_MF(T, frexp)(a, &e);                                                                      \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_frexp_exponent_##T(T a)                                                        \
    {                                                                                                       \
        int e = 0;                                                                                          \
        if (a == a && CT_MF(T, fabs)(a) != (T)INFINITY) {                                                  \
            CT_MF(T, frexp)(a, &e);                                                                         \
        }                                                                                                   \
        return (T)e;                                                                                        \
    }

CT_SM_SPECIAL_FUNCS(float)
CT_SM_SPECIAL_FUNCS(double)
#include "special_math.h" /* torch.special's Bessel, normal-distribution and incomplete gamma functions */
#include "special_poly_math.h" /* torch.special's orthogonal polynomials and airy_ai */

/* ------------------------------------------------------------------------------------------
 * integers: T the type, U the unsigned type its arithmetic wraps in (at least unsigned int, so
 * that the usual promotions never make it signed), BITS its width, S 1 when T is signed. */
/* x < 0, written so that unsigned types do not compare with zero (S: T is signed) */
#define CT_SM_LT0(S, x) CT_SM_LT0_##S(x)
#define CT_SM_LT0_1(x) ((x) < 0)
#define CT_SM_LT0_0(x) false

#define CT_SM_INT_FUNCS(T, U, BITS, S)                                                                     \
    CT_HOST_DEVICE T ct_sm_add_##T(T a, T b) { return (T)((U)a + (U)b); }                                  \
    CT_HOST_DEVICE T ct_sm_sub_##T(T a, T b) { return (T)((U)a - (U)b); }                                  \
    CT_HOST_DEVICE T ct_sm_mul_##T(T a, T b) { return (T)((U)a * (U)b); }                                  \
    CT_HOST_DEVICE T ct_sm_add_alpha_##T(T a, T b, T alpha) { return (T)((U)a + (U)alpha * (U)b); }        \
    CT_HOST_DEVICE T ct_sm_sub_alpha_##T(T a, T b, T alpha) { return (T)((U)a - (U)alpha * (U)b); }        \
    /* b == 0 gives 0 (the caller reports it); b == -1 is negation, which wraps for the minimum */         \
    CT_HOST_DEVICE T ct_sm_div_trunc_##T(T a, T b)                                                         \
    {                                                                                                      \
        return b == 0 ? (T)0 : (S && b == (T)-1) ? (T)((U)0 - (U)a) : (T)(a / b);                          \
    }                                                                                                      \
    CT_HOST_DEVICE T ct_sm_div_floor_##T(T a, T b)                                                         \
    {                                                                                                      \
        if (b == 0) {                                                                                      \
            return 0;                                                                                      \
        }                                                                                                  \
        if (S && b == (T)-1) {                                                                             \
            return (T)((U)0 - (U)a);                                                                       \
        }                                                                                                  \
        T q = (T)(a / b), r = (T)(a % b);                                                                  \
        if (r != 0 && (CT_SM_LT0(S, r) != CT_SM_LT0(S, b))) {                                              \
            q--;                                                                                           \
        }                                                                                                  \
        return q;                                                                                          \
    }                                                                                                      \
    CT_HOST_DEVICE T ct_sm_remainder_##T(T a, T b)                                                         \
    {                                                                                                      \
        if (b == 0 || (S && b == (T)-1)) {                                                                 \
            return 0;                                                                                      \
        }                                                                                                  \
        T r = (T)(a % b);                                                                                  \
        if (r != 0 && (CT_SM_LT0(S, r) != CT_SM_LT0(S, b))) {                                              \
            r = (T)(r + b);                                                                                \
        }                                                                                                  \
        return r;                                                                                          \
    }                                                                                                      \
    CT_HOST_DEVICE T ct_sm_fmod_##T(T a, T b) { return (b == 0 || (S && b == (T)-1)) ? (T)0 : (T)(a % b); } \
    CT_HOST_DEVICE T ct_sm_pow_##T(T a, T b)                                                               \
    {                                                                                                      \
        if (CT_SM_LT0(S, b)) {                                                                             \
            return a == 1 ? (T)1 : (S && a == (T)-1) ? (T)((b & 1) ? -1 : 1) : (T)0;                       \
        }                                                                                                  \
        U result = 1, base = (U)a;                                                                         \
        while (b != 0) {                                                                                   \
            if (b & 1) {                                                                                   \
                result *= base;                                                                            \
            }                                                                                              \
            b = (T)(b >> 1);                                                                               \
            base *= base;                                                                                  \
        }                                                                                                  \
        return (T)result;                                                                                  \
    }                                                                                                      \
    CT_HOST_DEVICE T ct_sm_maximum_##T(T a, T b) { return a > b ? a : b; }                                 \
    CT_HOST_DEVICE T ct_sm_minimum_##T(T a, T b) { return a < b ? a : b; }                                 \
    CT_HOST_DEVICE T ct_sm_fmax_##T(T a, T b) { return a > b ? a : b; }                                    \
    CT_HOST_DEVICE T ct_sm_fmin_##T(T a, T b) { return a < b ? a : b; }                                    \
    CT_HOST_DEVICE T ct_sm_clamp_min_##T(T a, T lo) { return a > lo ? a : lo; }                            \
    CT_HOST_DEVICE T ct_sm_clamp_max_##T(T a, T hi) { return a < hi ? a : hi; }                            \
    CT_HOST_DEVICE T ct_sm_clamp_##T(T a, T lo, T hi)                                                      \
    {                                                                                                      \
        return ct_sm_clamp_max_##T(ct_sm_clamp_min_##T(a, lo), hi);                                        \
    }                                                                                                      \
    CT_HOST_DEVICE bool ct_sm_eq_##T(T a, T b) { return a == b; }                                          \
    CT_HOST_DEVICE bool ct_sm_ne_##T(T a, T b) { return a != b; }                                          \
    CT_HOST_DEVICE bool ct_sm_lt_##T(T a, T b) { return a < b; }                                           \
    CT_HOST_DEVICE bool ct_sm_le_##T(T a, T b) { return a <= b; }                                          \
    CT_HOST_DEVICE bool ct_sm_gt_##T(T a, T b) { return a > b; }                                           \
    CT_HOST_DEVICE bool ct_sm_ge_##T(T a, T b) { return a >= b; }                                          \
    CT_HOST_DEVICE bool ct_sm_logical_and_##T(T a, T b) { return a != 0 && b != 0; }                       \
    CT_HOST_DEVICE bool ct_sm_logical_or_##T(T a, T b) { return a != 0 || b != 0; }                        \
    CT_HOST_DEVICE bool ct_sm_logical_xor_##T(T a, T b) { return (a != 0) != (b != 0); }                   \
    CT_HOST_DEVICE bool ct_sm_logical_not_##T(T a) { return a == 0; }                                      \
    CT_HOST_DEVICE T ct_sm_bitwise_and_##T(T a, T b) { return (T)(a & b); }                                \
    CT_HOST_DEVICE T ct_sm_bitwise_or_##T(T a, T b) { return (T)(a | b); }                                 \
    CT_HOST_DEVICE T ct_sm_bitwise_xor_##T(T a, T b) { return (T)(a ^ b); }                                \
    CT_HOST_DEVICE T ct_sm_bitwise_not_##T(T a) { return (T)~a; }                                          \
    CT_HOST_DEVICE T ct_sm_lshift_##T(T a, T b)                                                            \
    {                                                                                                      \
        return (CT_SM_LT0(S, b) || b >= BITS) ? (T)0 : (T)((U)a << b);                                     \
    }                                                                                                      \
    CT_HOST_DEVICE T ct_sm_rshift_##T(T a, T b)                                                            \
    {                                                                                                      \
        return (CT_SM_LT0(S, b) || b >= BITS) ? (T)(CT_SM_LT0(S, a) ? -1 : 0) : (T)(a >> b);               \
    }                                                                                                      \
    CT_HOST_DEVICE T ct_sm_where_##T(bool c, T a, T b) { return c ? a : b; }                               \
    CT_HOST_DEVICE T ct_sm_addcmul_##T(T s, T t1, T t2, T value)                                           \
    {                                                                                                      \
        return (T)((U)s + (U)value * (U)t1 * (U)t2);                                                       \
    }                                                                                                      \
    CT_HOST_DEVICE T ct_sm_amp_tracker_##T(T t, T found, T interval)                                      \
    {                                                                                                      \
        return (found != 0 || (T)((U)t + 1) == interval) ? (T)0 : (T)((U)t + 1);                          \
    }                                                                                                      \
    CT_HOST_DEVICE T ct_sm_neg_##T(T a) { return (T)((U)0 - (U)a); }                                       \
    CT_HOST_DEVICE T ct_sm_abs_##T(T a) { return CT_SM_LT0(S, a) ? (T)((U)0 - (U)a) : a; }                 \
    CT_HOST_DEVICE T ct_sm_sign_##T(T a) { return (T)((a > 0) - CT_SM_LT0(S, a)); }                        \
    CT_HOST_DEVICE T ct_sm_square_##T(T a) { return (T)((U)a * (U)a); }                                    \
    CT_HOST_DEVICE T ct_sm_relu_##T(T a) { return CT_SM_LT0(S, a) ? (T)0 : a; }                            \
    CT_HOST_DEVICE T ct_sm_floor_##T(T a) { return a; }                                                    \
    CT_HOST_DEVICE T ct_sm_ceil_##T(T a) { return a; }                                                     \
    CT_HOST_DEVICE T ct_sm_round_##T(T a) { return a; }                                                    \
    CT_HOST_DEVICE T ct_sm_trunc_##T(T a) { return a; }                                                    \
    CT_HOST_DEVICE T ct_sm_hardtanh_##T(T a, T lo, T hi) { return ct_sm_clamp_##T(a, lo, hi); }           \
    CT_HOST_DEVICE T ct_sm_threshold_##T(T a, T threshold, T value) { return a <= threshold ? value : a; }  \
    CT_HOST_DEVICE bool ct_sm_isnan_##T(T a) { return false; }                                             \
    CT_HOST_DEVICE bool ct_sm_isinf_##T(T a) { return false; }                                             \
    CT_HOST_DEVICE bool ct_sm_isfinite_##T(T a) { return true; }                                           \
    CT_HOST_DEVICE bool ct_sm_isposinf_##T(T a) { return false; }                                          \
    CT_HOST_DEVICE bool ct_sm_isneginf_##T(T a) { return false; }                                          \
    CT_HOST_DEVICE bool ct_sm_signbit_##T(T a) { return CT_SM_LT0(S, a); }                                 \
    CT_HOST_DEVICE T ct_sm_heaviside_##T(T a, T v) { return a == 0 ? v : (T)(a > 0); }                     \
    /* gcd / lcm of the magnitudes (Euclid), wrapping as PyTorch's for the minimum */                        \
    CT_HOST_DEVICE T ct_sm_gcd_##T(T a, T b)                                                               \
    {                                                                                                      \
        U x = (U)ct_sm_abs_##T(a), y = (U)ct_sm_abs_##T(b);                                                \
        while (y != 0) {                                                                                   \
            U r = x % y;                                                                                   \
            x = y;                                                                                         \
            y = r;                                                                                         \
        }                                                                                                  \
        return (T)x;                                                                                       \
    }                                                                                                      \
    CT_HOST_DEVICE T ct_sm_lcm_##T(T a, T b)                                                               \
    {                                                                                                      \
        T g = ct_sm_gcd_##T(a, b);                                                                         \
        return g == 0 ? (T)0 : ct_sm_abs_##T((T)((U)(a / g) * (U)b));                                       \
    }

CT_SM_INT_FUNCS(uint8_t, unsigned int, 8, 0)
CT_SM_INT_FUNCS(int8_t, unsigned int, 8, 1)
CT_SM_INT_FUNCS(int16_t, unsigned int, 16, 1)
CT_SM_INT_FUNCS(int32_t, uint32_t, 32, 1)
CT_SM_INT_FUNCS(int64_t, uint64_t, 64, 1)

/* ------------------------------------------------------------------------------------------
 * bool: + is or, * is and (PyTorch computes them in bool and casts), max is or, min is and. */
CT_HOST_DEVICE bool ct_sm_add_bool(bool a, bool b) { return a || b; }
CT_HOST_DEVICE bool ct_sm_mul_bool(bool a, bool b) { return a && b; }
CT_HOST_DEVICE bool ct_sm_add_alpha_bool(bool a, bool b, bool alpha) { return a || (alpha && b); }
CT_HOST_DEVICE bool ct_sm_maximum_bool(bool a, bool b) { return a || b; }
CT_HOST_DEVICE bool ct_sm_minimum_bool(bool a, bool b) { return a && b; }
CT_HOST_DEVICE bool ct_sm_fmax_bool(bool a, bool b) { return a || b; }
CT_HOST_DEVICE bool ct_sm_fmin_bool(bool a, bool b) { return a && b; }
CT_HOST_DEVICE bool ct_sm_clamp_min_bool(bool a, bool lo) { return a || lo; }
CT_HOST_DEVICE bool ct_sm_clamp_max_bool(bool a, bool hi) { return a && hi; }
CT_HOST_DEVICE bool ct_sm_eq_bool(bool a, bool b) { return a == b; }
CT_HOST_DEVICE bool ct_sm_ne_bool(bool a, bool b) { return a != b; }
CT_HOST_DEVICE bool ct_sm_lt_bool(bool a, bool b) { return a < b; }
CT_HOST_DEVICE bool ct_sm_le_bool(bool a, bool b) { return a <= b; }
CT_HOST_DEVICE bool ct_sm_gt_bool(bool a, bool b) { return a > b; }
CT_HOST_DEVICE bool ct_sm_ge_bool(bool a, bool b) { return a >= b; }
CT_HOST_DEVICE bool ct_sm_logical_and_bool(bool a, bool b) { return a && b; }
CT_HOST_DEVICE bool ct_sm_logical_or_bool(bool a, bool b) { return a || b; }
CT_HOST_DEVICE bool ct_sm_logical_xor_bool(bool a, bool b) { return a != b; }
CT_HOST_DEVICE bool ct_sm_logical_not_bool(bool a) { return !a; }
CT_HOST_DEVICE bool ct_sm_bitwise_and_bool(bool a, bool b) { return a && b; }
CT_HOST_DEVICE bool ct_sm_bitwise_or_bool(bool a, bool b) { return a || b; }
CT_HOST_DEVICE bool ct_sm_bitwise_xor_bool(bool a, bool b) { return a != b; }
CT_HOST_DEVICE bool ct_sm_bitwise_not_bool(bool a) { return !a; }
CT_HOST_DEVICE bool ct_sm_where_bool(bool c, bool a, bool b) { return c ? a : b; }
CT_HOST_DEVICE bool ct_sm_sign_bool(bool a) { return a; }
CT_HOST_DEVICE bool ct_sm_isnan_bool(bool a) { return false; }
CT_HOST_DEVICE bool ct_sm_isinf_bool(bool a) { return false; }
CT_HOST_DEVICE bool ct_sm_isfinite_bool(bool a) { return true; }
CT_HOST_DEVICE bool ct_sm_isposinf_bool(bool a) { return false; }
CT_HOST_DEVICE bool ct_sm_isneginf_bool(bool a) { return false; }
CT_HOST_DEVICE bool ct_sm_signbit_bool(bool a) { return false; }
CT_HOST_DEVICE bool ct_sm_heaviside_bool(bool a, bool v) { return a || v; }

#endif /* CTORCH_SCALAR_MATH_H */
