/* sampling_math.h: the rejection samplers behind torch._standard_gamma, _sample_dirichlet,
 * poisson and binomial, and _standard_gamma_grad's and _dirichlet_grad's reparameterisation
 * derivatives. Everything is CT_HOST_DEVICE scalar code in double, included by the CPU kernels (random.c) and the CUDA
 * ones (cuda/random.cu), so that a seed gives the same samples on both devices, bit for bit.
 *
 * --- Sub-streams ---------------------------------------------------------------------------
 * A rejection sampler needs a number of draws that depends on the draws. Element i of such an
 * op owns the counter c = offset + i, as every random op's element does (philox.h), and its
 * j-th block (j = 0, 1, 2, ...) is
 *
 *     Philox4x32-10(key = (lo32(seed), hi32(seed)), counter = (lo32(c), hi32(c), j, 0))
 *
 * (block 0 is philox.h's block of element i). A uniform takes one block (words 0, 1: 53 bits),
 * a standard normal one block (philox.h's Box-Muller). Every element thus reproduces its own
 * loop on any device and in any order, and the op still advances the generator by its number
 * of elements.
 *
 * --- Arithmetic ----------------------------------------------------------------------------
 * As in philox.h, every + - * / is spelled CT_DADD/CT_DSUB/CT_DMUL/CT_DDIV (round-to-nearest
 * intrinsics on the GPU, so nvcc forms no FMA), and log/exp/lgamma/digamma are written here with
 * those operations only (no math library call besides the correctly rounded sqrt and the exact
 * floor/fabs), so both devices take the same branches and return the same bits. */
#ifndef CTORCH_SAMPLING_MATH_H
#define CTORCH_SAMPLING_MATH_H

#include "philox.h"

#ifdef __CUDA_ARCH__
#define CT_DSUB(a, b) __dsub_rn((a), (b))
#else
#define CT_DSUB(a, b) ((a) - (b))
#endif

typedef struct {
    uint64_t seed;
    uint64_t counter; /* offset + element index */
    uint32_t next;    /* the sub-stream's next block */
} CtSubStream;

CT_HOST_DEVICE CtSubStream ct_substream(uint64_t seed, uint64_t offset, int64_t i)
{
    CtSubStream s = {seed, offset + (uint64_t)i, 0u};
    return s;
}

CT_HOST_DEVICE CtPhiloxBlock ct_substream_block(CtSubStream *s)
{
    uint32_t j = s->next++;
    return ct_philox4x32_10_raw((uint32_t)s->counter, (uint32_t)(s->counter >> 32), j, 0u, (uint32_t)s->seed,
                                (uint32_t)(s->seed >> 32));
}

/* u in [0, 1) */
CT_HOST_DEVICE double ct_substream_uniform(CtSubStream *s) { return ct_philox_uniform53(ct_substream_block(s)); }
/* u in (0, 1]: a valid argument of log */
CT_HOST_DEVICE double ct_substream_uniform_pos(CtSubStream *s) { return 1.0 - ct_substream_uniform(s); }
CT_HOST_DEVICE double ct_substream_normal(CtSubStream *s) { return ct_philox_standard_normal(ct_substream_block(s)); }

CT_HOST_DEVICE double ct_det_inf(void) { return ct_bits_f64(0x7ff0000000000000ULL); }
CT_HOST_DEVICE double ct_det_nan(void) { return ct_bits_f64(0x7ff8000000000000ULL); }

/* --- deterministic exp, lgamma, digamma -------------------------------------------------- */
/* exp(x): x = k ln2 + r, |r| <= ln2 / 2, exp(r) by its Taylor series through r^14, times 2^k
 * built from bits (two factors below the normal range, each product correctly rounded). */
CT_HOST_DEVICE double ct_det_exp(double x)
{
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    if (x != x) {
        return x;
    }
    if (x > 709.782712893384) {
        return ct_det_inf();
    }
    if (x < -745.2) {
        return 0.0;
    }
    double k = floor(CT_DADD(CT_DMUL(x, 1.4426950408889634), 0.5));
    double r = CT_DSUB(CT_DSUB(x, CT_DMUL(k, ln2_hi)), CT_DMUL(k, ln2_lo));
    double p = 1.0 / 87178291200.0; /* 1/14! */
    p = CT_DADD(CT_DMUL(p, r), 1.0 / 6227020800.0);
    p = CT_DADD(CT_DMUL(p, r), 1.0 / 479001600.0);
    p = CT_DADD(CT_DMUL(p, r), 1.0 / 39916800.0);
    p = CT_DADD(CT_DMUL(p, r), 1.0 / 3628800.0);
    p = CT_DADD(CT_DMUL(p, r), 1.0 / 362880.0);
    p = CT_DADD(CT_DMUL(p, r), 1.0 / 40320.0);
    p = CT_DADD(CT_DMUL(p, r), 1.0 / 5040.0);
    p = CT_DADD(CT_DMUL(p, r), 1.0 / 720.0);
    p = CT_DADD(CT_DMUL(p, r), 1.0 / 120.0);
    p = CT_DADD(CT_DMUL(p, r), 1.0 / 24.0);
    p = CT_DADD(CT_DMUL(p, r), 1.0 / 6.0);
    p = CT_DADD(CT_DMUL(p, r), 0.5);
    p = CT_DADD(CT_DMUL(p, r), 1.0);
    p = CT_DADD(CT_DMUL(p, r), 1.0);
    int e = (int)k;
    if (e < -1000) { /* 2^e is subnormal or below: scale in two steps */
        p = CT_DMUL(p, ct_bits_f64((uint64_t)(1023 - 600) << 52));
        e += 600;
    }
    return CT_DMUL(p, ct_bits_f64((uint64_t)(e + 1023) << 52));
}

/* log Gamma(x) for x > 0: the recurrence up to x >= 10, then Stirling's series (terms through
 * x^-13, the rest below 1e-16 relative). */
CT_HOST_DEVICE double ct_det_lgamma(double x)
{
    double prod = 1.0;
    while (x < 10.0) {
        prod = CT_DMUL(prod, x);
        x = CT_DADD(x, 1.0);
    }
    double z = CT_DDIV(1.0, x), z2 = CT_DMUL(z, z);
    double s = 1.0 / 156.0;
    s = CT_DSUB(691.0 / 360360.0, CT_DMUL(z2, s));
    s = CT_DSUB(1.0 / 1188.0, CT_DMUL(z2, s));
    s = CT_DSUB(1.0 / 1680.0, CT_DMUL(z2, s));
    s = CT_DSUB(1.0 / 1260.0, CT_DMUL(z2, s));
    s = CT_DSUB(1.0 / 360.0, CT_DMUL(z2, s));
    s = CT_DSUB(1.0 / 12.0, CT_DMUL(z2, s));
    double main = CT_DSUB(CT_DMUL(CT_DSUB(x, 0.5), ct_det_log(x)), x);
    double r = CT_DADD(CT_DADD(main, 0.91893853320467274178), CT_DMUL(z, s)); /* + log(2 pi) / 2 */
    return prod == 1.0 ? r : CT_DSUB(r, ct_det_log(prod));
}

/* digamma(x) for x > 0: the recurrence up to x >= 10, then the asymptotic series. */
CT_HOST_DEVICE double ct_det_digamma(double x)
{
    double shift = 0.0;
    while (x < 10.0) {
        shift = CT_DADD(shift, CT_DDIV(1.0, x));
        x = CT_DADD(x, 1.0);
    }
    double z2 = CT_DDIV(1.0, CT_DMUL(x, x));
    /* 1/(12x^2) - 1/(120x^4) + 1/(252x^6) - 1/(240x^8) + 1/(132x^10) - 691/(32760x^12) */
    double s = 691.0 / 32760.0;
    s = CT_DSUB(1.0 / 132.0, CT_DMUL(z2, s));
    s = CT_DSUB(1.0 / 240.0, CT_DMUL(z2, s));
    s = CT_DSUB(1.0 / 252.0, CT_DMUL(z2, s));
    s = CT_DSUB(1.0 / 120.0, CT_DMUL(z2, s));
    s = CT_DSUB(1.0 / 12.0, CT_DMUL(z2, s));
    double r = CT_DSUB(CT_DSUB(ct_det_log(x), CT_DDIV(0.5, x)), CT_DMUL(z2, s));
    return CT_DSUB(r, shift);
}

/* --- Gamma(alpha, 1) ------------------------------------------------------------------------
 * Marsaglia and Tsang, "A simple method for generating gamma variables" (2000): for alpha >= 1,
 * d = alpha - 1/3, c = 1/sqrt(9d); draw a normal x until v = (1 + c x)^3 > 0, accept d v when
 * u < 1 - 0.0331 x^4 (the squeeze) or log u < x^2/2 + d (1 - v + log v). For alpha < 1, a
 * Gamma(alpha + 1) sample times U^(1/alpha). alpha <= 0 or NaN gives 0 and +inf gives +inf
 * (callers then clamp to the dtype's smallest normal number, as PyTorch does). */
CT_HOST_DEVICE double ct_sample_gamma(CtSubStream *s, double alpha)
{
    if (!(alpha > 0.0)) {
        return 0.0;
    }
    if (alpha == ct_det_inf()) {
        return alpha;
    }
    double scale = 1.0;
    if (alpha < 1.0) {
        scale = ct_det_exp(CT_DDIV(ct_det_log(ct_substream_uniform_pos(s)), alpha));
        alpha = CT_DADD(alpha, 1.0);
    }
    double d = CT_DSUB(alpha, 1.0 / 3.0);
    double c = CT_DDIV(1.0, sqrt(CT_DMUL(9.0, d)));
    double v;
    for (;;) {
        double x;
        do {
            x = ct_substream_normal(s);
            v = CT_DADD(1.0, CT_DMUL(c, x));
        } while (v <= 0.0);
        v = CT_DMUL(CT_DMUL(v, v), v);
        double u = ct_substream_uniform_pos(s);
        double x2 = CT_DMUL(x, x);
        if (u < CT_DSUB(1.0, CT_DMUL(0.0331, CT_DMUL(x2, x2)))) {
            break;
        }
        if (ct_det_log(u) < CT_DADD(CT_DMUL(0.5, x2), CT_DMUL(d, CT_DADD(CT_DSUB(1.0, v), ct_det_log(v))))) {
            break;
        }
    }
    return CT_DMUL(scale, CT_DMUL(d, v));
}

/* max(v, tiny) with NaN giving tiny (PyTorch's clamp of gamma and Dirichlet samples). */
CT_HOST_DEVICE double ct_clamp_tiny(double v, double tiny) { return v >= tiny ? v : tiny; }

/* --- Poisson(lambda), lambda >= 0 -------------------------------------------------------------
 * lambda < 10: multiply uniforms until the product drops to exp(-lambda) (Knuth). Otherwise
 * Hoermann's PTRS, "The transformed rejection method for generating Poisson random variables"
 * (1993): a transformed uniform proposes k, accepted at once in the central region, else by
 * comparing with the log probability (lgamma as above). */
CT_HOST_DEVICE double ct_sample_poisson(CtSubStream *s, double lambda)
{
    if (lambda == 0.0 || lambda == ct_det_inf() || lambda != lambda) {
        return lambda;
    }
    if (lambda < 10.0) {
        double limit = ct_det_exp(-lambda), prod = ct_substream_uniform_pos(s), k = 0.0;
        while (prod > limit) {
            prod = CT_DMUL(prod, ct_substream_uniform_pos(s));
            k = CT_DADD(k, 1.0);
        }
        return k;
    }
    double slam = sqrt(lambda), loglam = ct_det_log(lambda);
    double b = CT_DADD(0.931, CT_DMUL(2.53, slam));
    double a = CT_DADD(-0.059, CT_DMUL(0.02483, b));
    double log_invalpha = ct_det_log(CT_DADD(1.1239, CT_DDIV(1.1328, CT_DSUB(b, 3.4))));
    double vr = CT_DSUB(0.9277, CT_DDIV(3.6224, CT_DSUB(b, 2.0)));
    for (;;) {
        double u = CT_DSUB(ct_substream_uniform(s), 0.5);
        double v = ct_substream_uniform_pos(s);
        double us = CT_DSUB(0.5, fabs(u));
        double k = floor(CT_DADD(CT_DADD(CT_DMUL(CT_DADD(CT_DDIV(CT_DMUL(2.0, a), us), b), u), lambda), 0.43));
        if (us >= 0.07 && v <= vr) {
            return k;
        }
        if (k < 0.0 || (us < 0.013 && v > us)) {
            continue;
        }
        double lhs = CT_DSUB(CT_DADD(ct_det_log(v), log_invalpha),
                             ct_det_log(CT_DADD(CT_DDIV(a, CT_DMUL(us, us)), b)));
        double rhs = CT_DSUB(CT_DADD(-lambda, CT_DMUL(k, loglam)), ct_det_lgamma(CT_DADD(k, 1.0)));
        if (lhs <= rhs) {
            return k;
        }
    }
}

/* --- Binomial(n, p) ----------------------------------------------------------------------------
 * With p > 1/2 the sample is n - Binomial(n, 1 - p). Mean below 10: inversion, walking the
 * probabilities up from (1 - p)^n. Otherwise Hoermann's BTRS, "The generation of binomial random
 * variates" (1993), the binomial form of PTRS above. n <= 0 or p <= 0 give 0, p >= 1 gives n,
 * a NaN gives NaN, n = +inf gives +inf. */
CT_HOST_DEVICE double ct_binomial_inversion(CtSubStream *s, double n, double p)
{
    double q = CT_DSUB(1.0, p), ratio = CT_DDIV(p, q);
    double pk = ct_det_exp(CT_DMUL(n, ct_det_log(q))), cdf = pk, k = 0.0;
    double u = ct_substream_uniform(s);
    while (u > cdf && k < n) {
        pk = CT_DMUL(CT_DDIV(CT_DMUL(pk, CT_DSUB(n, k)), CT_DADD(k, 1.0)), ratio);
        k = CT_DADD(k, 1.0);
        cdf = CT_DADD(cdf, pk);
        if (pk == 0.0) {
            break; /* the rest of the tail is below double's reach */
        }
    }
    return k < n ? k : n;
}

CT_HOST_DEVICE double ct_binomial_btrs(CtSubStream *s, double n, double p)
{
    double q = CT_DSUB(1.0, p);
    double spq = sqrt(CT_DMUL(CT_DMUL(n, p), q));
    double b = CT_DADD(1.15, CT_DMUL(2.53, spq));
    double a = CT_DADD(CT_DADD(-0.0873, CT_DMUL(0.0248, b)), CT_DMUL(0.01, p));
    double c = CT_DADD(CT_DMUL(n, p), 0.5);
    double alpha = CT_DMUL(CT_DADD(2.83, CT_DDIV(5.1, b)), spq);
    double vr = CT_DSUB(0.92, CT_DDIV(4.2, b));
    double urvr = CT_DMUL(0.86, vr);
    double m = floor(CT_DMUL(CT_DADD(n, 1.0), p));
    double log_pq = ct_det_log(CT_DDIV(p, q));
    double h = CT_DADD(ct_det_lgamma(CT_DADD(m, 1.0)), ct_det_lgamma(CT_DADD(CT_DSUB(n, m), 1.0)));
    for (;;) {
        double u, v = ct_substream_uniform(s);
        if (v <= urvr) { /* the central region: accepted at once */
            u = CT_DSUB(CT_DDIV(v, vr), 0.43);
            return floor(CT_DADD(CT_DMUL(CT_DADD(CT_DDIV(CT_DMUL(2.0, a), CT_DSUB(0.5, fabs(u))), b), u), c));
        }
        if (v >= vr) {
            u = CT_DSUB(ct_substream_uniform(s), 0.5);
        } else {
            u = CT_DSUB(CT_DDIV(v, vr), 0.93);
            u = CT_DSUB(u < 0.0 ? -0.5 : 0.5, u);
            v = CT_DMUL(ct_substream_uniform(s), vr);
        }
        double us = CT_DSUB(0.5, fabs(u));
        double k = floor(CT_DADD(CT_DMUL(CT_DADD(CT_DDIV(CT_DMUL(2.0, a), us), b), u), c));
        if (k < 0.0 || k > n) {
            continue;
        }
        v = CT_DDIV(CT_DMUL(v, alpha), CT_DADD(CT_DDIV(a, CT_DMUL(us, us)), b));
        double bound = CT_DADD(CT_DSUB(CT_DSUB(h, ct_det_lgamma(CT_DADD(k, 1.0))),
                                       ct_det_lgamma(CT_DADD(CT_DSUB(n, k), 1.0))),
                               CT_DMUL(CT_DSUB(k, m), log_pq));
        if (v <= 0.0 || ct_det_log(v) <= bound) {
            return k;
        }
    }
}

CT_HOST_DEVICE double ct_sample_binomial(CtSubStream *s, double n, double p)
{
    if (n != n || p != p) {
        return ct_det_nan();
    }
    if (n <= 0.0 || p <= 0.0) {
        return 0.0;
    }
    if (p >= 1.0 || n == ct_det_inf()) {
        return n;
    }
    bool flip = p > 0.5;
    double pp = flip ? CT_DSUB(1.0, p) : p; /* exact for p in [1/2, 1] */
    double k = CT_DMUL(n, pp) < 10.0 ? ct_binomial_inversion(s, n, pp) : ct_binomial_btrs(s, n, pp);
    return flip ? CT_DSUB(n, k) : k;
}

/* --- d sample / d alpha of a Gamma(alpha, 1) sample x -------------------------------------------
 * The implicit reparameterisation gradient: with u = P(alpha, x) (the regularised lower
 * incomplete gamma) held fixed, dx/dalpha = -(dP/dalpha) / (dP/dx). The prefactors
 * x^alpha e^-x / Gamma cancel in the ratio, leaving
 *   x < alpha + 1 (P's power series S = sum t_n, t_n = x^n / ((alpha+1)...(alpha+n))):
 *       (x / alpha) (D - S (log x - digamma(alpha + 1))),  D = sum t_n H_n, H_n = sum_k 1/(alpha+k)
 *   otherwise (Q's continued fraction h, Lentz's algorithm carried with its alpha-derivative h'):
 *       x (h (log x - digamma(alpha)) + h')
 *   alpha > 1e6: Wilson-Hilferty, x = alpha w^3, w = 1 - 1/(9 alpha) + z / (3 sqrt(alpha)), z fixed.
 * alpha <= 0, x < 0 and non-finite arguments give NaN, x = 0 gives 0. */
CT_HOST_DEVICE double ct_standard_gamma_grad(double alpha, double x)
{
    if (!(alpha > 0.0) || !(x >= 0.0) || alpha == ct_det_inf() || x == ct_det_inf()) {
        return ct_det_nan();
    }
    if (x == 0.0) {
        return 0.0;
    }
    double log_x = ct_det_log(x);
    if (alpha > 1e6) {
        double w = ct_det_exp(CT_DDIV(CT_DSUB(log_x, ct_det_log(alpha)), 3.0));
        double sa = sqrt(alpha);
        double z = CT_DMUL(CT_DMUL(CT_DADD(CT_DSUB(w, 1.0), CT_DDIV(1.0, CT_DMUL(9.0, alpha))), 3.0), sa);
        double dw = CT_DSUB(CT_DDIV(1.0, CT_DMUL(9.0, CT_DMUL(alpha, alpha))),
                            CT_DDIV(z, CT_DMUL(6.0, CT_DMUL(alpha, sa))));
        return CT_DADD(CT_DMUL(CT_DMUL(w, w), w), CT_DMUL(CT_DMUL(CT_DMUL(3.0, alpha), CT_DMUL(w, w)), dw));
    }
    if (x < CT_DADD(alpha, 1.0)) {
        double t = 1.0, S = 1.0, D = 0.0, H = 0.0;
        for (int nterm = 1; nterm < 100000; nterm++) {
            double an = CT_DADD(alpha, (double)nterm);
            t = CT_DMUL(t, CT_DDIV(x, an));
            H = CT_DADD(H, CT_DDIV(1.0, an));
            S = CT_DADD(S, t);
            D = CT_DADD(D, CT_DMUL(t, H));
            if (t < CT_DMUL(1e-17, S)) {
                break;
            }
        }
        double r = CT_DSUB(D, CT_DMUL(S, CT_DSUB(log_x, ct_det_digamma(CT_DADD(alpha, 1.0)))));
        return CT_DMUL(CT_DDIV(x, alpha), r);
    }
    /* Lentz: h = 1/(b0 + a1/(b1 + a2/(b2 + ...))), b_i = x + 1 - alpha + 2i, a_i = -i (i - alpha);
     * each quantity carried with its derivative in alpha (the *_d twins). */
    const double tiny = 1e-300;
    double bi = CT_DADD(CT_DSUB(x, alpha), 1.0), bi_d = -1.0;
    double c = 1.0 / tiny, c_d = 0.0;
    double d = CT_DDIV(1.0, bi), d_d = CT_DDIV(-bi_d, CT_DMUL(bi, bi));
    double h = d, h_d = d_d;
    for (int i = 1; i < 100000; i++) {
        double fi = (double)i;
        double ai = CT_DMUL(-fi, CT_DSUB(fi, alpha)), ai_d = fi;
        bi = CT_DADD(bi, 2.0);
        double dn = CT_DADD(CT_DMUL(ai, d), bi);
        double dn_d = CT_DADD(CT_DADD(CT_DMUL(ai_d, d), CT_DMUL(ai, d_d)), bi_d);
        if (fabs(dn) < tiny) {
            dn = tiny, dn_d = 0.0;
        }
        double cn = CT_DADD(bi, CT_DDIV(ai, c));
        double cn_d = CT_DADD(bi_d, CT_DDIV(CT_DSUB(CT_DMUL(ai_d, c), CT_DMUL(ai, c_d)), CT_DMUL(c, c)));
        if (fabs(cn) < tiny) {
            cn = tiny, cn_d = 0.0;
        }
        d = CT_DDIV(1.0, dn);
        d_d = CT_DDIV(-dn_d, CT_DMUL(dn, dn));
        c = cn, c_d = cn_d;
        double del = CT_DMUL(d, c), del_d = CT_DADD(CT_DMUL(d_d, c), CT_DMUL(d, c_d));
        h_d = CT_DADD(CT_DMUL(h_d, del), CT_DMUL(h, del_d));
        h = CT_DMUL(h, del);
        if (fabs(CT_DSUB(del, 1.0)) < 1e-16 && fabs(del_d) < 1e-16) {
            break;
        }
    }
    return CT_DMUL(x, CT_DADD(CT_DMUL(h, CT_DSUB(log_x, ct_det_digamma(alpha))), h_d));
}

/* --- _dirichlet_grad: d x / d alpha of a Dirichlet component -----------------------------------
 * x ~ Beta(alpha, beta), beta = total - alpha (the component's marginal); with u = I_x(alpha, beta)
 * held fixed and beta fixed, dx/dalpha = -(dI/dalpha) / pdf(x), returned over 1 - x (the Dirichlet
 * backward multiplies it by (grad - sum x grad)). I is written as the power series
 *     I_v(p, q) = v^p (1-v)^q / (p B(p, q)) * F,  F = sum t_n,  t_n = t_{n-1} v (p+q+n-1) / (p+n)
 * taken at (v, p, q) = (x, alpha, beta) when x < (alpha + 1) / (total + 2), otherwise at
 * (1 - x, beta, alpha) through I_x(a, b) = 1 - I_{1-x}(b, a), so that the terms shrink. The
 * prefactor over the pdf is v (1 - v) / p, and with dp = 1 (first form) or 0 (second) its log's
 * alpha-derivative is log x - dp / p - digamma(alpha) + digamma(total) in both forms; F's is
 * F_a = sum t_n sum_{k<n} (1 / (total + k) - dp / (p + k + 1)).
 * NaN arguments give NaN; x >= 1 PyTorch's continued expansion (ct_dirichlet_grad_past_one); x <= 0,
 * alpha or beta <= 0 and an infinite total give 0 (the degenerate cases, where the sample does not move). */
/* _dirichlet_grad at x >= 1 (outside the support, where no sample lies), as PyTorch gives it: PyTorch
 * takes, wherever total x (1 - x) < 0.75 and x >= 1/2, the first nine terms of the Taylor series in
 * v = 1 - x of d/dbeta I_v(beta, alpha) over the pdf (the reflected Beta), and so continues that
 * truncated series past x = 1; a NaN result gives (minus) 0. With s = alpha, p = beta and
 * c = digamma(total) - digamma(alpha): x^(1 - s) (c / p + sum_{i=1..8} (-v)^i / i! / (p + i)
 * (B_i' + c B_i)), B_i = prod_{k=1..i} (s - k) and B_i' its s-derivative. */
CT_HOST_DEVICE double ct_dirichlet_grad_past_one(double x, double alpha, double total)
{
    double v = CT_DSUB(1.0, x), s = alpha, p = CT_DSUB(total, alpha);
    double c = CT_DSUB(ct_det_digamma(CT_DADD(p, s)), ct_det_digamma(s));
    double term = 1.0, b = 1.0, db = 0.0, series = CT_DDIV(c, p);
    for (int i = 1; i <= 8; i++) {
        term = CT_DMUL(term, CT_DDIV(-v, (double)i));
        db = CT_DADD(CT_DMUL(db, CT_DSUB(s, (double)i)), b);
        b = CT_DMUL(b, CT_DSUB(s, (double)i));
        series = CT_DADD(series, CT_DMUL(CT_DDIV(term, CT_DADD(p, (double)i)), CT_DADD(db, CT_DMUL(c, b))));
    }
    double r = CT_DMUL(ct_det_exp(CT_DMUL(CT_DSUB(1.0, s), ct_det_log(x))), series);
    return r != r ? -0.0 : r;
}

CT_HOST_DEVICE double ct_dirichlet_grad(double x, double alpha, double total)
{
    if (x != x || alpha != alpha || total != total) {
        return ct_det_nan();
    }
    if (x >= 1.0 && CT_DMUL(CT_DMUL(total, x), CT_DSUB(1.0, x)) < 0.75) {
        return ct_dirichlet_grad_past_one(x, alpha, total);
    }
    double beta = CT_DSUB(total, alpha);
    if (!(x > 0.0) || !(x < 1.0) || !(alpha > 0.0) || !(beta > 0.0) || total == ct_det_inf()) {
        return 0.0;
    }
    bool direct = x < CT_DDIV(CT_DADD(alpha, 1.0), CT_DADD(total, 2.0));
    double v = direct ? x : CT_DSUB(1.0, x);
    double p = direct ? alpha : beta;
    double dp = direct ? 1.0 : 0.0;
    double t = 1.0, F = 1.0, Fa = 0.0, dlt = 0.0;
    for (int n = 1; n < 1000000; n++) {
        double k = (double)(n - 1);
        double pk = CT_DADD(p, CT_DADD(k, 1.0)), tk = CT_DADD(total, k);
        dlt = CT_DADD(dlt, CT_DSUB(CT_DDIV(1.0, tk), CT_DDIV(dp, pk)));
        t = CT_DMUL(t, CT_DDIV(CT_DMUL(v, tk), pk));
        F = CT_DADD(F, t);
        Fa = CT_DADD(Fa, CT_DMUL(t, dlt));
        if (CT_DMUL(t, CT_DADD(1.0, fabs(dlt))) < CT_DMUL(1e-17, CT_DADD(F, fabs(Fa)))) {
            break;
        }
    }
    double L = CT_DADD(CT_DSUB(CT_DSUB(ct_det_log(x), CT_DDIV(dp, p)), ct_det_digamma(alpha)),
                       ct_det_digamma(total));
    double r = CT_DMUL(CT_DDIV(CT_DMUL(v, CT_DSUB(1.0, v)), p), CT_DADD(CT_DMUL(F, L), Fa));
    return CT_DDIV(direct ? -r : r, CT_DSUB(1.0, x));
}

/* --- element i of each op (the CPU loops and the CUDA kernels call these) --------------------- */
CT_HOST_DEVICE double ct_gamma_element(uint64_t seed, uint64_t offset, int64_t i, double alpha, double tiny)
{
    CtSubStream s = ct_substream(seed, offset, i);
    return ct_clamp_tiny(ct_sample_gamma(&s, alpha), tiny);
}

/* a Dirichlet row's gamma, clamped in double (DBL_MIN) before the row's sum */
CT_HOST_DEVICE double ct_dirichlet_gamma(uint64_t seed, uint64_t offset, int64_t i, double alpha)
{
    return ct_gamma_element(seed, offset, i, alpha, 2.2250738585072014e-308);
}

CT_HOST_DEVICE double ct_poisson_element(uint64_t seed, uint64_t offset, int64_t i, double rate)
{
    CtSubStream s = ct_substream(seed, offset, i);
    return ct_sample_poisson(&s, rate);
}

CT_HOST_DEVICE double ct_binomial_element(uint64_t seed, uint64_t offset, int64_t i, double count, double prob)
{
    CtSubStream s = ct_substream(seed, offset, i);
    return ct_sample_binomial(&s, count, prob);
}

#endif /* CTORCH_SAMPLING_MATH_H */
