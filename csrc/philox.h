/* philox.h: the counter-based generator behind every random op of ctorch, and the exact
 * recipe that turns its output into samples. Everything here is CT_HOST_DEVICE scalar code,
 * so a CUDA kernel that includes this header produces the same numbers as the CPU, bit for
 * bit, for the same seed and offset.
 *
 * --- The generator -----------------------------------------------------------------------
 * Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3",
 * SC'11): a keyed bijection of a 128-bit counter into four 32-bit words, ten rounds, key
 * bumped with the Weyl constants before rounds 2..10. It passes the Random123 known-answer
 * vectors (tests/test_random.py checks them).
 *
 * --- How a random op uses it ---------------------------------------------------------------
 * A generator is (seed, offset). An op producing n elements (row-major order of its output)
 * gives element i the block
 *
 *     x[0..3] = Philox4x32-10(key     = (lo32(seed), hi32(seed)),
 *                             counter = (lo32(c), hi32(c), 0, 0)),   c = offset + i
 *
 * and then advances the generator's offset by n (one block per element, whatever the
 * distribution). Element i therefore depends only on (seed, offset + i): a CUDA thread can
 * compute any element on its own.
 *
 * --- Samples from a block (U64 = (uint64)x0 << 32 | x1) -----------------------------------
 *   uniform [a, b), float64:  u = (U64 >> 11) * 2^-53;             v = a + u * (b - a)  in double
 *   uniform [a, b), float32:  u = (x0 >> 8) * 2^-24;               v = a + u * (b - a)  in float
 *                   float16:  u = (x0 >> 21) * 2^-11, bfloat16: u = (x0 >> 24) * 2^-8, then as
 *                             float32 (u has no more bits than the type, so u itself is exact)
 *   normal(mean, std), every float dtype, computed in double (Box-Muller on the pair of
 *   uniforms of one block; only the cosine branch is used, so element i needs block i only):
 *       u1 = (U64 >> 11) * 2^-53,  u2 = ((x2 << 32 | x3) >> 11) * 2^-53
 *       z  = sqrt(-2 log(1 - u1)) * cos(2 pi u2);   v = mean + std * z, then rounded to dtype
 *   integers in [low, low + range):  v = low + (U64 mod range)   (int64 wrap-around; range is
 *       a uint64 in [1, 2^64)), stored into any dtype
 *   bernoulli(p):   u as for uniform float64; v = u < p
 *   exponential(l): u as for uniform float64; v = -log(1 - u) / l   in double
 *   randperm(n): element i gets the key U64 of block offset + i; the output lists 0..n-1
 *       ordered by (key, i) ascending.
 *
 * Multiplications, additions and divisions go through CT_DMUL/CT_DADD/CT_DDIV/CT_FMUL/CT_FADD,
 * the round-to-nearest intrinsics on the GPU, so that nvcc cannot contract them into FMAs
 * (the host build is C11, which does not contract). log and cos are not taken from the math
 * libraries, whose last bits differ between glibc and CUDA: ct_det_log and ct_det_cos_2pi
 * below use only correctly rounded operations (and sqrt, correctly rounded on both sides),
 * so every sample of every distribution is bit-identical on the CPU and the GPU. */
#ifndef CTORCH_PHILOX_H
#define CTORCH_PHILOX_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifndef CT_HOST_DEVICE
#ifdef __CUDACC__
#define CT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define CT_HOST_DEVICE static inline
#endif
#endif

/* __CUDA_ARCH__, not __CUDACC__: nvcc also compiles these functions for the host, where the
 * intrinsics do not exist (and x86-64 without -mfma cannot contract). */
#ifdef __CUDA_ARCH__
#define CT_DMUL(a, b) __dmul_rn((a), (b))
#define CT_DADD(a, b) __dadd_rn((a), (b))
#define CT_FMUL(a, b) __fmul_rn((a), (b))
#define CT_FADD(a, b) __fadd_rn((a), (b))
#define CT_DDIV(a, b) __ddiv_rn((a), (b))
#else
#include <math.h>
#define CT_DMUL(a, b) ((a) * (b))
#define CT_DADD(a, b) ((a) + (b))
#define CT_FMUL(a, b) ((a) * (b))
#define CT_FADD(a, b) ((a) + (b))
#define CT_DDIV(a, b) ((a) / (b))
#endif

#define CT_PHILOX_M0 0xD2511F53u
#define CT_PHILOX_M1 0xCD9E8D57u
#define CT_PHILOX_W0 0x9E3779B9u
#define CT_PHILOX_W1 0xBB67AE85u

typedef struct {
    uint32_t x[4];
} CtPhiloxBlock;

/* One Philox round: two 32x32->64 multiplications, then a Feistel-like shuffle. */
CT_HOST_DEVICE void ct_philox_round(uint32_t *c, uint32_t k0, uint32_t k1)
{
    uint64_t p0 = (uint64_t)CT_PHILOX_M0 * c[0];
    uint64_t p1 = (uint64_t)CT_PHILOX_M1 * c[2];
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    uint32_t n0 = hi1 ^ c[1] ^ k0;
    uint32_t n2 = hi0 ^ c[3] ^ k1;
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
}

/* Philox4x32-10 of a full 128-bit counter and 64-bit key (the Random123 definition). */
CT_HOST_DEVICE CtPhiloxBlock ct_philox4x32_10_raw(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0,
                                                   uint32_t k1)
{
    CtPhiloxBlock b;
    b.x[0] = c0;
    b.x[1] = c1;
    b.x[2] = c2;
    b.x[3] = c3;
    ct_philox_round(b.x, k0, k1);
    for (int r = 1; r < 10; r++) {
        k0 += CT_PHILOX_W0;
        k1 += CT_PHILOX_W1;
        ct_philox_round(b.x, k0, k1);
    }
    return b;
}

/* The block of counter value `counter` (= offset + element index) under `seed`. */
CT_HOST_DEVICE CtPhiloxBlock ct_philox_block(uint64_t seed, uint64_t counter)
{
    return ct_philox4x32_10_raw((uint32_t)counter, (uint32_t)(counter >> 32), 0u, 0u, (uint32_t)seed,
                                (uint32_t)(seed >> 32));
}

/* --- samples from one block ------------------------------------------------------------- */
CT_HOST_DEVICE uint64_t ct_philox_u64(CtPhiloxBlock b) { return ((uint64_t)b.x[0] << 32) | b.x[1]; }

/* u in [0, 1) with 53 bits, from words 0 and 1. */
CT_HOST_DEVICE double ct_philox_uniform53(CtPhiloxBlock b)
{
    /* exact (a power-of-two scaling), but spelled CT_DMUL so that nvcc cannot fuse it into a
     * caller's 1 - u: no fma appears in the GPU code at all (tests/test_cuda_host.py checks) */
    return CT_DMUL((double)(ct_philox_u64(b) >> 11), 1.0 / 9007199254740992.0);
}

/* u in [0, 1) with `bits` (<= 24) bits, from word 0. */
CT_HOST_DEVICE float ct_philox_uniform_bits(CtPhiloxBlock b, int bits)
{
    return CT_FMUL((float)(b.x[0] >> (32 - bits)), 1.0f / (float)(1u << bits));
}

CT_HOST_DEVICE double ct_philox_uniform_f64(CtPhiloxBlock b, double from, double to)
{
    return CT_DADD(from, CT_DMUL(ct_philox_uniform53(b), to - from));
}

/* float32 (bits 24), float16 (11) and bfloat16 (8): computed in float. */
CT_HOST_DEVICE float ct_philox_uniform_f32(CtPhiloxBlock b, int bits, float from, float to)
{
    return CT_FADD(from, CT_FMUL(ct_philox_uniform_bits(b, bits), to - from));
}

/* --- deterministic log and cos -------------------------------------------------------------
 * Box-Muller and the exponential need log and cos. The two platforms' math libraries differ
 * in the last bits, so these are written with + - * / and exact bit operations only (each
 * correctly rounded in IEEE double on both sides): the result is the same everywhere. Both
 * are accurate to a few ulp, which is plenty for sampling. */
CT_HOST_DEVICE uint64_t ct_f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}
CT_HOST_DEVICE double ct_bits_f64(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* log(x) for a normal, finite x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)), then
 * log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, by its Taylor series. */
CT_HOST_DEVICE double ct_det_log(double x)
{
    const double ln2_hi = 6.93147180369123816490e-01; /* ln 2 with 21 trailing zero bits */
    const double ln2_lo = 1.90821492927058770002e-10;
    uint64_t bits = ct_f64_bits(x);
    int e = (int)((bits >> 52) & 0x7ff) - 1022;
    double m = ct_bits_f64((bits & 0x000fffffffffffffULL) | 0x3fe0000000000000ULL); /* [0.5, 1) */
    if (m < 0.70710678118654752440) {
        m = CT_DMUL(m, 2.0);
        e -= 1;
    }
    double s = CT_DDIV(m - 1.0, CT_DADD(m, 1.0));
    double z = CT_DMUL(s, s);
    /* 1 + z/3 + z^2/5 + ... + z^11/23 (the next term is below 2^-60 relative) */
    double p = 1.0 / 23.0;
    p = CT_DADD(CT_DMUL(p, z), 1.0 / 21.0);
    p = CT_DADD(CT_DMUL(p, z), 1.0 / 19.0);
    p = CT_DADD(CT_DMUL(p, z), 1.0 / 17.0);
    p = CT_DADD(CT_DMUL(p, z), 1.0 / 15.0);
    p = CT_DADD(CT_DMUL(p, z), 1.0 / 13.0);
    p = CT_DADD(CT_DMUL(p, z), 1.0 / 11.0);
    p = CT_DADD(CT_DMUL(p, z), 1.0 / 9.0);
    p = CT_DADD(CT_DMUL(p, z), 1.0 / 7.0);
    p = CT_DADD(CT_DMUL(p, z), 1.0 / 5.0);
    p = CT_DADD(CT_DMUL(p, z), 1.0 / 3.0);
    double log_m = CT_DMUL(CT_DMUL(2.0, s), CT_DADD(CT_DMUL(p, z), 1.0));
    double de = (double)e;
    return CT_DADD(CT_DMUL(de, ln2_hi), CT_DADD(CT_DMUL(de, ln2_lo), log_m));
}

/* cos(theta), sin(theta) for |theta| <= pi/4 by their Taylor series (through theta^18 and
 * theta^19; the rest is below 2^-60). */
CT_HOST_DEVICE double ct_det_cos_small(double t)
{
    double z = CT_DMUL(t, t);
    double p = 1.0 / 6402373705728000.0; /* 1/18! */
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 20922789888000.0);
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 87178291200.0);
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 479001600.0);
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 3628800.0);
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 40320.0);
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 720.0);
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 24.0);
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 2.0);
    return CT_DADD(CT_DMUL(p, -z), 1.0);
}
CT_HOST_DEVICE double ct_det_sin_small(double t)
{
    double z = CT_DMUL(t, t);
    double p = 1.0 / 121645100408832000.0; /* 1/19! */
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 355687428096000.0);
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 1307674368000.0);
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 6227020800.0);
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 39916800.0);
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 362880.0);
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 5040.0);
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 120.0);
    p = CT_DADD(CT_DMUL(p, -z), 1.0 / 6.0);
    return CT_DMUL(t, CT_DADD(CT_DMUL(p, -z), 1.0));
}

/* cos(2 pi u) for u in [0, 1): the octant comes from 8u exactly, the rest is reduced to an
 * angle in [0, pi/4] and mapped back by symmetry. */
CT_HOST_DEVICE double ct_det_cos_2pi(double u)
{
    const double pi_4 = 0.78539816339744830962;
    double t8 = CT_DMUL(u, 8.0);
    int octant = (int)t8;
    double f = t8 - (double)octant; /* exact */
    int odd = octant & 1;
    double a = odd ? 1.0 - f : f; /* exact: the angle from the nearest multiple of pi/2 */
    double theta = CT_DMUL(a, pi_4);
    /* phi = (octant % 2 + f) pi/4 and cos(2 pi u) = cos(q pi/2 + phi), q = octant / 2:
     * q = 0: cos phi, 1: -sin phi, 2: -cos phi, 3: sin phi; and for odd octants
     * cos phi = sin theta, sin phi = cos theta. */
    int q = octant >> 1;
    bool use_sin = (q & 1) != odd;
    double v = use_sin ? ct_det_sin_small(theta) : ct_det_cos_small(theta);
    return (q == 1 || q == 2) ? -v : v;
}

/* Standard normal in double (Box-Muller, cosine branch). 1 - u1 is in (0, 1], so log is finite. */
CT_HOST_DEVICE double ct_philox_standard_normal(CtPhiloxBlock b)
{
    double u1 = ct_philox_uniform53(b);
    uint64_t w = ((uint64_t)b.x[2] << 32) | b.x[3];
    double u2 = CT_DMUL((double)(w >> 11), 1.0 / 9007199254740992.0);
    double r = sqrt(CT_DMUL(-2.0, ct_det_log(1.0 - u1)));
    return CT_DMUL(r, ct_det_cos_2pi(u2));
}

CT_HOST_DEVICE double ct_philox_normal(CtPhiloxBlock b, double mean, double std)
{
    return CT_DADD(mean, CT_DMUL(std, ct_philox_standard_normal(b)));
}

/* low + (U64 mod range), wrapping in int64; range in [1, 2^64 - 1]. */
CT_HOST_DEVICE int64_t ct_philox_range(CtPhiloxBlock b, int64_t low, uint64_t range)
{
    return (int64_t)((uint64_t)low + ct_philox_u64(b) % range);
}

CT_HOST_DEVICE int ct_philox_bernoulli(CtPhiloxBlock b, double p) { return ct_philox_uniform53(b) < p; }

CT_HOST_DEVICE double ct_philox_exponential(CtPhiloxBlock b, double lambd)
{
    return CT_DDIV(-ct_det_log(1.0 - ct_philox_uniform53(b)), lambd);
}

#endif /* CTORCH_PHILOX_H */
