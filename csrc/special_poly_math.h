/* special_poly_math.h: the scalar math of torch.special's orthogonal polynomials (Chebyshev T U V W
 * and their shifted forms, Hermite H and He, Laguerre L, Legendre P) and of airy_ai, shared by the
 * CPU and CUDA kernels. Included by scalar_math.h after special_math.h.
 *
 * The polynomials are one elementwise row (ORTHO_POLY, a binary op (x, n) with the kind as its
 * parameter, CT_SP_POLY_* below), computed in the kernel's type as PyTorch does, with PyTorch's
 * special cases: n is truncated toward zero and a negative (or NaN, infinite, beyond int64) n gives 0;
 * the Chebyshev kinds take their closed values at the ends of [-1, 1] ([0, 1] shifted) and the
 * trigonometric forms inside it once n passes a small degree; three-term recurrences elsewhere, which
 * stop once a value is NaN; Hermite degrees above 128 (float) or 512 (double) give NaN.
 *
 * airy_ai is computed in double: the Maclaurin series for -7 <= x <= 1, Ai(x) = sqrt(x/3) K_1/3(z) / pi
 * with z = 2/3 x^(3/2) above 1 (K by the trapezoidal rule on K_nu(z) = int_0^inf exp(-z cosh t)
 * cosh(nu t) dt, which converges geometrically in the step), and the asymptotic expansion
 * (DLMF 9.7.9) below -7; NaN at +-inf as PyTorch's. */
#ifndef CTORCH_SPECIAL_POLY_MATH_H
#define CTORCH_SPECIAL_POLY_MATH_H

#include "elementwise_kernels.h" /* the kinds: CT_SP_POLY_* */

/* the degree: n truncated toward zero; -1 for NaN, +-inf and values beyond int64 */
CT_HOST_DEVICE int64_t ct_sp_poly_degree(double n)
{
    return (n > -9.2233720368547758e18 && n < 9.2233720368547758e18) ? (int64_t)n : -1;
}

#define CT_SM_POLY_FUNCS(T)                                                                                 \
    /* Chebyshev T U V W (kind & 3) of y = x, or of y = 2x - 1 (kind & 4: shifted) */                      \
    CT_HOST_DEVICE T ct_sp_chebyshev_##T(T x, int64_t n, int kind)                                         \
    {                                                                                                       \
        const int k4 = kind & 3;                                                                            \
        const bool shifted = (kind & 4) != 0, even = n % 2 == 0;                                            \
        const T y = shifted ? x + x - (T)1 : x;                                                            \
        const T n1 = (T)((double)n + 1.0), n2 = (T)(2.0 * (double)n + 1.0);                                \
        const T sign = even ? (T)1 : (T)-1;                                                                \
        if (shifted ? (x == (T)1 || x == (T)0) : CT_MF(T, fabs)(x) == (T)1) {                             \
            if (shifted ? x == (T)1 : x > (T)0) {                                                          \
                return k4 == 1 ? n1 : k4 == 3 ? n2 : (T)1;                                                 \
            }                                                                                               \
            return sign * (k4 == 1 ? n1 : k4 == 2 ? n2 : (T)1);                                            \
        }                                                                                                   \
        /* the degree above which the trigonometric forms are used inside (-1, 1) */                       \
        const int64_t trig = k4 == 0 ? 6 : shifted ? (k4 == 3 ? 4 : 6) : 8;                               \
        if (n > trig && CT_MF(T, fabs)(y) < (T)1) {                                                        \
            const T th = CT_MF(T, acos)(y), nt = (T)n;                                                     \
            if (k4 == 0) {                                                                                  \
                return CT_MF(T, cos)(nt * th);                                                             \
            }                                                                                               \
            if (k4 == 1) {                                                                                  \
                const T s = CT_MF(T, sin)(th);                                                             \
                return s != (T)0 ? CT_MF(T, sin)(n1 * th) / s : n1 * CT_MF(T, cos)(n1 * th) / y;           \
            }                                                                                               \
            if (k4 == 2) {                                                                                  \
                return CT_MF(T, sin)(th / (T)2) != (T)1                                                    \
                           ? CT_MF(T, cos)((nt + (T)0.5) * th) / CT_MF(T, cos)(th / (T)2)                  \
                           : sign * n2;                                                                     \
            }                                                                                               \
            if (CT_MF(T, cos)(th / (T)2) != (T)1) {                                                        \
                return CT_MF(T, sin)((nt + (T)0.5) * th) / CT_MF(T, sin)(th / (T)2);                       \
            }                                                                                               \
            return !shifted && y > (T)0 ? n2 : sign; /* (PyTorch's shifted W gives +-1 there) */          \
        }                                                                                                   \
        if (n == 0) {                                                                                       \
            return (T)1;                                                                                    \
        }                                                                                                   \
        T p = (T)1, q = k4 == 0 ? y : k4 == 1 ? y + y : k4 == 2 ? y + y - (T)1 : y + y + (T)1;             \
        for (int64_t k = 2; k <= n && q == q; k++) {                                                       \
            const T r = (y + y) * q - p;                                                                   \
            p = q;                                                                                          \
            q = r;                                                                                          \
        }                                                                                                   \
        return q;                                                                                           \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sp_orthogonal_poly_##T(T x, int64_t n, int kind)                                   \
    {                                                                                                       \
        if (n < 0) {                                                                                        \
            return (T)0;                                                                                    \
        }                                                                                                   \
        if (kind < CT_SP_POLY_HERMITE_H) {                                                                 \
            return ct_sp_chebyshev_##T(x, n, kind);                                                        \
        }                                                                                                   \
        if (kind == CT_SP_POLY_LAGUERRE_L && x == (T)0) {                                                  \
            return (T)1;                                                                                    \
        }                                                                                                   \
        if (kind == CT_SP_POLY_LEGENDRE_P && CT_MF(T, fabs)(x) == (T)1) {                                  \
            return x > (T)0 || n % 2 == 0 ? (T)1 : (T)-1;                                                  \
        }                                                                                                   \
        if (n == 0) {                                                                                       \
            return (T)1;                                                                                    \
        }                                                                                                   \
        T p = (T)1, q = kind == CT_SP_POLY_HERMITE_H ? x + x : kind == CT_SP_POLY_LAGUERRE_L ? (T)1 - x : x; \
        if (kind == CT_SP_POLY_HERMITE_H || kind == CT_SP_POLY_HERMITE_HE) {                               \
            if (n > (sizeof(T) == 4 ? 128 : 512)) {                                                        \
                return (T)NAN;                                                                              \
            }                                                                                               \
            const T scale = kind == CT_SP_POLY_HERMITE_H ? (T)2 : (T)1;                                    \
            for (int64_t k = 1; k < n; k++) { /* H: 2x H_k - 2k H_k-1; He: x He_k - k He_k-1 */            \
                const T r = scale * x * q - (T)(scale * (T)k) * p;                                         \
                p = q;                                                                                      \
                q = r;                                                                                      \
            }                                                                                               \
            return q;                                                                                       \
        }                                                                                                   \
        for (int64_t k = 1; k < n && q == q; k++) {                                                        \
            const T kt = (T)k;                                                                              \
            const T r = kind == CT_SP_POLY_LAGUERRE_L ? ((kt + kt + ((T)1 - x)) * q - kt * p) / (kt + (T)1) \
                                                      : ((kt + kt + (T)1) * x * q - kt * p) / (kt + (T)1);  \
            p = q;                                                                                          \
            q = r;                                                                                          \
        }                                                                                                   \
        return q;                                                                                           \
    }                                                                                                       \
    /* the row's function: the kind is the parameter */                                                    \
    CT_HOST_DEVICE T ct_sm_orthogonal_poly_##T(T x, T n, T kind)                                           \
    {                                                                                                       \
        return ct_sp_orthogonal_poly_##T(x, ct_sp_poly_degree((double)n), (int)kind);                      \
    }                                                                                                       \
    CT_HOST_DEVICE T ct_sm_airy_ai_##T(T a) { return (T)ct_sp_airy_ai((double)a); }

/* Ai(x), x > 1: sqrt(x/3) K_1/3(z) / pi, z = 2/3 x^(3/2). The trapezoidal rule on
 * e^z K(z) = int_0^inf exp(-z (cosh t - 1)) cosh(t/3) dt with step min(1/4, 0.7/sqrt z) (its error
 * falls as exp(-pi^2/h) and exp(-2 pi^2/(h^2 z))), up to where the integrand is below e^-40. */
CT_HOST_DEVICE double ct_sp_airy_ai_pos(double x)
{
    if (x > 110.0) { /* below the smallest double */
        return 0.0;
    }
    const double z = 2.0 / 3.0 * x * sqrt(x);
    const double h = fmin(0.25, 0.7 / sqrt(z)), tmax = acosh(1.0 + 40.0 / z);
    double sum = 0.5; /* t = 0, halved */
    for (int k = 1; k * h <= tmax; k++) {
        const double t = k * h, s = sinh(0.5 * t);
        sum += exp(-2.0 * z * s * s) * cosh(t / 3.0);
    }
    return exp(-z) * sum * h * sqrt(x / 3.0) / CT_SM_PI;
}

/* Ai(-a), a > 7: a^(-1/4) / sqrt(pi) (cos(z - pi/4) P(z) + sin(z - pi/4) Q(z)), z = 2/3 a^(3/2),
 * P, Q the even and odd terms of sum (-1)^.. u_k z^-k with u_k = u_k-1 (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k),
 * summed while the terms fall */
CT_HOST_DEVICE double ct_sp_airy_ai_neg(double a)
{
    const double z = 2.0 / 3.0 * a * sqrt(a);
    double p = 1.0, q = 0.0, u = 1.0, prev = 1.0;
    for (int k = 1; k < 40; k++) {
        u *= (6.0 * k - 5.0) * (6.0 * k - 3.0) * (6.0 * k - 1.0) / ((2.0 * k - 1.0) * 216.0 * k) / z;
        if (fabs(u) >= prev || fabs(u) < 1e-18) {
            break;
        }
        prev = fabs(u);
        const double term = (k / 2) % 2 == 0 ? u : -u; /* (-1)^floor(k/2) */
        if (k % 2 == 0) {
            p += term;
        } else {
            q += term;
        }
    }
    const double ph = z - 0.25 * CT_SM_PI;
    return (cos(ph) * p + sin(ph) * q) / (sqrt(CT_SM_PI) * sqrt(sqrt(a)));
}

CT_HOST_DEVICE double ct_sp_airy_ai(double x)
{
    if (x != x || x == INFINITY || x == -INFINITY) {
        return NAN;
    }
    if (x > 1.0) {
        return ct_sp_airy_ai_pos(x);
    }
    if (x < -7.0) {
        return ct_sp_airy_ai_neg(-x);
    }
    /* Ai(0) f(x) + Ai'(0) g(x): f = sum x^3k / ((2 3)(5 6)...), g = sum x^(3k+1) / ((3 4)(6 7)...) */
    const double x3 = x * x * x;
    double f = 1.0, g = x, tf = 1.0, tg = x;
    for (int k = 1; k < 60; k++) {
        tf *= x3 / ((3.0 * k - 1.0) * (3.0 * k));
        tg *= x3 / ((3.0 * k) * (3.0 * k + 1.0));
        f += tf;
        g += tg;
        if (fabs(tf) + fabs(tg) < 1e-18 * (fabs(f) + fabs(g))) {
            break;
        }
    }
    return 0.355028053887817239260 * f - 0.258819403792806798405 * g;
}

CT_SM_POLY_FUNCS(float)
CT_SM_POLY_FUNCS(double)

#endif /* CTORCH_SPECIAL_POLY_MATH_H */
