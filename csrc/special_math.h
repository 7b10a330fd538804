/* special_math.h: the scalar math of torch.special's normal-distribution, Bessel and incomplete gamma
 * functions (log_ndtr, ndtri, erfcx, i0e/i1e, bessel_j0/j1/y0/y1, modified_bessel_i0/i1/k0/k1 and the
 * scaled K, spherical_bessel_j0, gammainc/gammaincc), written once in double for the CPU and CUDA
 * kernels. Included by scalar_math.h after ct_sm_bessel_i and ct_sm_hurwitz_zeta, which it uses; its
 * ct_sm_<fn>_<T> wrappers (float rounds the double result once) are the elementwise rows' functions.
 *
 * Methods, all derived from series, asymptotic expansions and continued fractions (no fitted tables):
 *   erfcx      exp(x^2) erfc(x) with exp(x^2) exact to the rounding of exp, the asymptotic series for
 *              x >= 26, 2 exp(x^2) - erfcx(-x) below 0
 *   log_ndtr   log1p(-erfc(x/sqrt2)/2) for x >= 0, -x^2/2 + log(erfcx(-x/sqrt2)/2) below
 *   ndtri      sqrt2 erfinv(2p - 1) for p in [1/4, 3/4] (2p - 1 exact there), else Newton on
 *              log_ndtr(x) = log(p) from Abramowitz-Stegun 26.2.23's first guess
 *   J0 J1 Y0 Y1  power series below 1, Miller's backward recurrence with Neumann's series for Y
 *              below 25, Hankel's asymptotic expansion above
 *   K0 K1      power series up to 2, Steed's continued fraction for Temme's CF2 above
 *   P(a, x)    the power series for x < a + 1 (with a separate series for Q when a < 1), Lentz's
 *              continued fraction for Q above; the prefactor x^a e^-x / Gamma(a) through Stirling's
 *              series for a >= 10, so x near a large a loses nothing to cancellation. */
#ifndef CTORCH_SPECIAL_MATH_H
#define CTORCH_SPECIAL_MATH_H

#define CT_SP_EULER 0.57721566490153286061
#define CT_SP_SQRT_PI 1.77245385090551602730
#define CT_SP_LN2 0.69314718055994530942
#define CT_SP_SQRT2 1.41421356237309504880
#define CT_SP_SQRT1_2 0.70710678118654752440
#define CT_SP_EPS 1.1102230246251565e-16

/* exp(x^2) for |x| < 64: x = hi + lo with hi of at most 26 bits, so hi^2 is exact and exp adds the
 * only rounding (exp(fl(x^2)) would be off by x^2 ulps) */
CT_HOST_DEVICE double ct_sp_exp_sq(double x)
{
    double hi = trunc(x * 1048576.0) / 1048576.0, lo = x - hi;
    return exp(hi * hi) * exp(lo * (2.0 * hi + lo));
}

/* erfcx(x) for x >= 0 */
CT_HOST_DEVICE double ct_sp_erfcx_pos(double x)
{
    if (x < 26.0) {
        return ct_sp_exp_sq(x) * erfc(x);
    }
    /* 1 / (x sqrt pi) sum_k (-1)^k (2k - 1)!! / (2 x^2)^k: the terms fall below 1e-17 by k = 8 */
    double v = 1.0 / (2.0 * x * x), term = 1.0, sum = 1.0;
    for (int k = 1; k < 12; k++) {
        term *= -(2.0 * k - 1.0) * v;
        sum += term;
    }
    return sum / (x * CT_SP_SQRT_PI);
}

CT_HOST_DEVICE double ct_sp_erfcx(double x)
{
    if (x != x || x >= 0.0) {
        return x != x ? x : ct_sp_erfcx_pos(x);
    }
    if (x < -26.7) { /* 2 exp(x^2) overflows */
        return INFINITY;
    }
    return 2.0 * ct_sp_exp_sq(x) - ct_sp_erfcx_pos(-x);
}

/* log of the standard normal CDF */
CT_HOST_DEVICE double ct_sp_log_ndtr(double x)
{
    if (x >= 0.0) {
        return log1p(-0.5 * erfc(x * CT_SP_SQRT1_2));
    }
    return -0.5 * x * x + log(ct_sp_erfcx_pos(-x * CT_SP_SQRT1_2)) - CT_SP_LN2;
}

/* the inverse of the standard normal CDF */
CT_HOST_DEVICE double ct_sp_ndtri(double p)
{
    if (!(p > 0.0 && p < 1.0)) {
        return p == 0.0 ? -INFINITY : p == 1.0 ? INFINITY : NAN;
    }
    if (p >= 0.25 && p <= 0.75) {
        return CT_SP_SQRT2 * ct_erfinv(2.0 * p - 1.0);
    }
    double q = p < 0.5 ? p : 1.0 - p, lq = log(q); /* 1 - p is exact for p > 3/4 */
    double t = sqrt(-2.0 * lq);
    double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
    for (int i = 0; i < 8; i++) { /* d log_ndtr / dx = sqrt(2 / pi) / erfcx(-x / sqrt 2) */
        double dx = (ct_sp_log_ndtr(x) - lq) * ct_sp_erfcx_pos(-x * CT_SP_SQRT1_2) * (CT_SP_SQRT_PI * CT_SP_SQRT1_2);
        x -= dx;
        if (fabs(dx) <= 1e-17 * fabs(x)) {
            break;
        }
    }
    return p < 0.5 ? x : -x;
}

/* --- Bessel functions of the first and second kind, orders 0 and 1 ----------------------------- */
/* J0, J1, Y0, Y1 of x > 0 (finite) */
CT_HOST_DEVICE void ct_sp_bessel_jy(double x, double *j0, double *j1, double *y0, double *y1)
{
    const double two_pi = 2.0 / CT_SM_PI;
    if (x < 1.0) { /* power series in -x^2/4 (A&S 9.1.10, 9.1.11) */
        double z = -0.25 * x * x, l = log(0.5 * x);
        double t0 = 1.0, t1 = 1.0, sj0 = 1.0, sj1 = 1.0, sy0 = 0.0, sy1 = 1.0 - 2.0 * CT_SP_EULER, h = 0.0;
        for (int k = 1; k < 30; k++) {
            t0 *= z / ((double)k * k);     /* z^k / k!^2 */
            t1 *= z / ((double)k * (k + 1)); /* z^k / (k! (k+1)!) */
            h += 1.0 / k;                    /* H_k */
            sj0 += t0;
            sj1 += t1;
            sy0 -= h * t0;
            sy1 += (2.0 * h + 1.0 / (k + 1) - 2.0 * CT_SP_EULER) * t1; /* psi(k + 1) + psi(k + 2) */
            if (fabs(t0) < 1e-18) {
                break;
            }
        }
        *j0 = sj0;
        *j1 = 0.5 * x * sj1;
        *y0 = two_pi * ((l + CT_SP_EULER) * sj0 + sy0);
        *y1 = -two_pi / x + two_pi * l * *j1 - 0.5 * x * sy1 / CT_SM_PI;
        return;
    }
    if (x < 25.0) {
        /* Miller: J_n from n = N down by J_{n-1} = 2n/x J_n - J_{n+1}, normalised by
         * J_0 + 2 sum J_2k = 1; Neumann: Y0 = 2/pi ((ln(x/2) + gamma) J0 - 2 sum (-1)^k J_2k / k),
         * Y1 = -Y0' = 2/pi ((ln(x/2) + gamma) J1 - J0 / x + sum (-1)^k (J_2k-1 - J_2k+1) / k) */
        int n_top = 2 * (int)((x + 36.0) / 2.0);
        double jp = 0.0, jn = 1e-30, norm = 0.0, s0 = 0.0, s1 = 0.0;
        for (int n = n_top; n >= 1; n--) {
            double jm = 2.0 * n / x * jn - jp; /* J_{n-1} */
            int m = n - 1;
            if (m > 0 && (m & 1) == 0) {
                norm += 2.0 * jm;
                s0 += ((m & 2) ? -jm : jm) / (0.5 * m);
            } else if (m & 1) { /* J_m's coefficient in s1: (-1)^((m+1)/2) (2/(m+1) + 2/(m-1) if m >= 3) */
                double c = 2.0 / (m + 1) + (m >= 3 ? 2.0 / (m - 1) : 0.0);
                s1 += (((m + 1) & 2) ? -c : c) * jm;
            }
            jp = jn;
            jn = jm;
        }
        /* jn is J_0, jp is J_1 (unnormalised) */
        norm += jn;
        double l = log(0.5 * x) + CT_SP_EULER;
        *j0 = jn / norm;
        *j1 = jp / norm;
        *y0 = two_pi * (l * *j0 - 2.0 * s0 / norm);
        *y1 = two_pi * (l * *j1 - *j0 / x + s1 / norm);
        return;
    }
    /* Hankel: J = sqrt(2/(pi x)) (P cos chi - Q sin chi), Y = sqrt(2/(pi x)) (P sin chi + Q cos chi),
     * chi = x - pi/4 (order 0), x - 3pi/4 (order 1), P and Q the even and odd terms of
     * sum_k prod_j (4 nu^2 - (2j - 1)^2) / (k! (8x)^k) with alternating signs */
    double pq[2][2];
    for (int nu = 0; nu < 2; nu++) {
        double mu = 4.0 * nu * nu, term = 1.0, p = 1.0, q = 0.0;
        for (int k = 1; k < 60; k++) {
            term *= (mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (k * 8.0 * x);
            double signed_term = (k & 2) ? -term : term;
            if (k & 1) {
                q += signed_term;
            } else {
                p += signed_term;
            }
            if (fabs(term) < 1e-18) {
                break;
            }
        }
        pq[nu][0] = p;
        pq[nu][1] = q;
    }
    double s = sin(x), c = cos(x), f = sqrt(two_pi / x) * CT_SP_SQRT1_2;
    /* order 0: sqrt2 cos chi = c + s, sqrt2 sin chi = s - c; order 1: sqrt2 cos chi = s - c, sqrt2 sin chi = -s - c */
    *j0 = f * (pq[0][0] * (c + s) - pq[0][1] * (s - c));
    *y0 = f * (pq[0][0] * (s - c) + pq[0][1] * (c + s));
    *j1 = f * (pq[1][0] * (s - c) + pq[1][1] * (s + c));
    *y1 = f * (-pq[1][0] * (s + c) + pq[1][1] * (s - c));
}

/* which: 0 J0, 1 J1, 2 Y0, 3 Y1; PyTorch's values at 0, the negative axis and infinity (nan: its
 * asymptotic branch takes sin(inf)) */
CT_HOST_DEVICE double ct_sp_bessel(double x, int which)
{
    double r[4];
    if (x != x || x == INFINITY || x == -INFINITY) {
        return NAN;
    }
    if (which >= 2 && x <= 0.0) {
        return x == 0.0 ? -INFINITY : NAN;
    }
    if (x == 0.0) {
        return which == 0 ? 1.0 : x; /* J1(-0) = -0 */
    }
    ct_sp_bessel_jy(fabs(x), &r[0], &r[1], &r[2], &r[3]);
    return (which == 1 && x < 0.0) ? -r[1] : r[which];
}

/* --- modified Bessel functions of the second kind, orders 0 and 1 ------------------------------ */
/* K0, K1 of x > 0 (finite), times e^x when scaled */
CT_HOST_DEVICE void ct_sp_bessel_k(double x, bool scaled, double *k0, double *k1)
{
    if (x <= 2.0) { /* A&S 9.6.11: K0 = -(ln(x/2) + gamma) I0 + sum H_k z^k / k!^2,
                     * K1 = 1/x + (ln(x/2) + gamma) I1 - x/4 sum (H_k + H_k+1) z^k / (k! (k+1)!), z = x^2/4 */
        double z = 0.25 * x * x, l = log(0.5 * x) + CT_SP_EULER;
        double t0 = 1.0, t1 = 1.0, i0 = 1.0, i1 = 1.0, s0 = 0.0, s1 = 1.0, h = 0.0;
        for (int k = 1; k < 40; k++) {
            t0 *= z / ((double)k * k);
            t1 *= z / ((double)k * (k + 1));
            h += 1.0 / k;
            i0 += t0;
            i1 += t1;
            s0 += h * t0;
            s1 += (2.0 * h + 1.0 / (k + 1)) * t1;
            if (t0 < 1e-18 * i0) {
                break;
            }
        }
        double e = scaled ? exp(x) : 1.0;
        *k0 = e * (-l * i0 + s0);
        *k1 = e * (1.0 / x + l * 0.5 * x * i1 - 0.25 * x * s1);
        return;
    }
    /* Temme's CF2 for K_mu, mu = 0, by Steed's algorithm: K0 = sqrt(pi / 2x) e^-x / s,
     * K1 = K0 (x + 1/2 - h / 4) / x */
    double b = 2.0 * (1.0 + x), d = 1.0 / b, h = d, delh = d;
    double q1 = 0.0, q2 = 1.0, a = -0.25, c = 0.25, q = 0.25, s = 1.0 + q * delh;
    for (int i = 2; i < 500; i++) {
        a -= 2.0 * (i - 1);
        c = -a * c / i;
        double qnew = (q1 - b * q2) / a;
        q1 = q2;
        q2 = qnew;
        q += c * qnew;
        b += 2.0;
        d = 1.0 / (b + a * d);
        delh = (b * d - 1.0) * delh;
        h += delh;
        double dels = q * delh;
        s += dels;
        if (fabs(dels) < 1e-17 * fabs(s)) {
            break;
        }
    }
    *k0 = sqrt(CT_SM_PI / (2.0 * x)) * (scaled ? 1.0 : exp(-x)) / s;
    *k1 = *k0 * (x + 0.5 - 0.25 * h) / x;
}

/* which: 0 K0, 1 K1; inf at 0, nan below, 0 at infinity */
CT_HOST_DEVICE double ct_sp_bessel_k_of(double x, int which, bool scaled)
{
    double r[2];
    if (!(x > 0.0)) {
        return x == 0.0 ? INFINITY : NAN;
    }
    if (x == INFINITY) {
        return 0.0;
    }
    ct_sp_bessel_k(x, scaled, &r[0], &r[1]);
    return r[which];
}

/* --- regularised incomplete gamma functions ----------------------------------------------------- */
/* log(1 + t) - t */
CT_HOST_DEVICE double ct_sp_log1pmx(double t)
{
    if (fabs(t) > 0.25) {
        return log1p(t) - t;
    }
    double term = t, sum = 0.0; /* sum_k>=2 (-1)^(k+1) t^k / k */
    for (int k = 2; k < 60; k++) {
        term *= -t;
        double add = term / k;
        sum += add;
        if (fabs(add) < 1e-18 * fabs(sum)) {
            break;
        }
    }
    return sum;
}

/* log(x^a e^-x / Gamma(a)) */
CT_HOST_DEVICE double ct_sp_igamma_log_prefactor(double a, double x)
{
    if (a < 10.0) {
        return a * log(x) - x - lgamma(a);
    }
    /* lgamma(a) = (a - 1/2) ln a - a + ln(2 pi)/2 + 1/(12a) - 1/(360a^3) + 1/(1260a^5) - 1/(1680a^7) + ... */
    double r = 1.0 / a, r2 = r * r;
    double stirling = r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680 - r2 / 1188))));
    double t = (x - a) / a; /* a (ln(x/a) - t): ln(x/a) is better than log1p(t) far from t = 0 */
    double main = fabs(t) > 0.25 ? a * log(x / a) - (x - a) : a * ct_sp_log1pmx(t);
    return main + 0.5 * log(a) - 0.91893853320467274178 - stirling;
}

/* P(a, x) (upper: Q(a, x)), with PyTorch's values at the edges */
CT_HOST_DEVICE double ct_sp_igamma(double a, double x, bool upper)
{
    double p;
    if (!(a >= 0.0 && x >= 0.0) || (a == 0.0 && x == 0.0) || (a == INFINITY && x == INFINITY)) {
        return NAN;
    }
    if (a == 0.0 || x == INFINITY || x == 0.0 || a == INFINITY) {
        p = (a == 0.0 || x == INFINITY) ? 1.0 : 0.0;
        return upper ? 1.0 - p : p;
    }
    if (x < a + 1.0 && a < 1.0) {
        /* P = x^a / Gamma(a + 1) (1 + a S), Q = -expm1(ln(x^a / Gamma(a + 1))) - a x^a / Gamma(a + 1) S,
         * S = sum_n>=1 (-x)^n / (n! (a + n)) */
        double term = 1.0, s = 0.0, lg = a * log(x) - lgamma(a + 1.0);
        for (int n = 1; n < 100; n++) {
            term *= -x / n;
            s += term / (a + n);
            if (fabs(term) < 1e-18 * fabs(s)) {
                break;
            }
        }
        return upper ? -expm1(lg) - a * exp(lg) * s : exp(lg) * (1.0 + a * s);
    }
    double lf = ct_sp_igamma_log_prefactor(a, x);
    if (x < a + 1.0) { /* P = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n)) */
        double term = 1.0, sum = 1.0;
        for (int n = 1; n < 20000; n++) {
            term *= x / (a + n);
            sum += term;
            if (term < 1e-17 * sum) {
                break;
            }
        }
        p = exp(lf) * sum / a;
        return upper ? 1.0 - p : p;
    }
    /* Q = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...)), by Lentz */
    const double tiny = 1e-300;
    double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
    for (int n = 1; n < 20000; n++) {
        double an = -n * (n - a);
        b += 2.0;
        d = an * d + b;
        d = fabs(d) < tiny ? tiny : d;
        c = b + an / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1.0 / d;
        double delta = d * c;
        h *= delta;
        if (fabs(delta - 1.0) < 1e-16) {
            break;
        }
    }
    double q = exp(lf) * h;
    return upper ? q : 1.0 - q;
}

#define CT_SM_SPECIAL_MORE_FUNCS(T)                                                                       \
    CT_HOST_DEVICE T ct_sm_erfcx_##T(T a) { return (T)ct_sp_erfcx((double)a); }                          \
    CT_HOST_DEVICE T ct_sm_log_ndtr_##T(T a) { return (T)ct_sp_log_ndtr((double)a); }                    \
    CT_HOST_DEVICE T ct_sm_ndtri_##T(T a) { return (T)ct_sp_ndtri((double)a); }                          \
    CT_HOST_DEVICE T ct_sm_i0e_##T(T a) { return (T)ct_sm_bessel_ie((double)a, 0, true); }               \
    CT_HOST_DEVICE T ct_sm_i1e_##T(T a) { return (T)ct_sm_bessel_ie((double)a, 1, true); }               \
    CT_HOST_DEVICE T ct_sm_bessel_j0_##T(T a) { return (T)ct_sp_bessel((double)a, 0); }                  \
    CT_HOST_DEVICE T ct_sm_bessel_j1_##T(T a) { return (T)ct_sp_bessel((double)a, 1); }                  \
    CT_HOST_DEVICE T ct_sm_bessel_y0_##T(T a) { return (T)ct_sp_bessel((double)a, 2); }                  \
    CT_HOST_DEVICE T ct_sm_bessel_y1_##T(T a) { return (T)ct_sp_bessel((double)a, 3); }                  \
    /* modified_bessel_i0/i1: torch.i0's function, but nan at +-inf as PyTorch's */                      \
    CT_HOST_DEVICE T ct_sm_modified_bessel_i0_##T(T a)                                                    \
    {                                                                                                      \
        return (T)(a == (T)INFINITY || a == -(T)INFINITY ? NAN : ct_sm_bessel_i((double)a, 0));          \
    }                                                                                                      \
    CT_HOST_DEVICE T ct_sm_modified_bessel_i1_##T(T a)                                                    \
    {                                                                                                      \
        return (T)(a == (T)INFINITY || a == -(T)INFINITY ? NAN : ct_sm_bessel_i((double)a, 1));          \
    }                                                                                                      \
    CT_HOST_DEVICE T ct_sm_modified_bessel_k0_##T(T a) { return (T)ct_sp_bessel_k_of((double)a, 0, false); } \
    CT_HOST_DEVICE T ct_sm_modified_bessel_k1_##T(T a) { return (T)ct_sp_bessel_k_of((double)a, 1, false); } \
    CT_HOST_DEVICE T ct_sm_scaled_modified_bessel_k0_##T(T a) { return (T)ct_sp_bessel_k_of((double)a, 0, true); } \
    CT_HOST_DEVICE T ct_sm_scaled_modified_bessel_k1_##T(T a) { return (T)ct_sp_bessel_k_of((double)a, 1, true); } \
    /* sin(x) / x: 1 at 0, 0 at +-inf */                                                                  \
    CT_HOST_DEVICE T ct_sm_spherical_bessel_j0_##T(T a)                                                   \
    {                                                                                                      \
        double x = (double)a;                                                                              \
        return (T)(x == 0.0 ? 1.0 : (x == INFINITY || x == -INFINITY) ? 0.0 : sin(x) / x);              \
    }                                                                                                      \
    CT_HOST_DEVICE T ct_sm_zeta_##T(T a, T b) { return (T)ct_sm_hurwitz_zeta((double)a, (double)b); }    \
    CT_HOST_DEVICE T ct_sm_igamma_##T(T a, T b) { return (T)ct_sp_igamma((double)a, (double)b, false); }  \
    CT_HOST_DEVICE T ct_sm_igammac_##T(T a, T b) { return (T)ct_sp_igamma((double)a, (double)b, true); }

CT_SM_SPECIAL_MORE_FUNCS(float)
CT_SM_SPECIAL_MORE_FUNCS(double)

#endif /* CTORCH_SPECIAL_MATH_H */
