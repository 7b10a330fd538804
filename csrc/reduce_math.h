/* reduce_math.h: the scalar math of the reduction family (reduce.h), written once for C and
 * CUDA (CT_HOST_DEVICE): the identity and the combination of each CtReduceCombine (max/min
 * propagate NaN), the element maps, the shift rule of logsumexp, the finals, and the order of
 * the sorts (NaN greater than everything, -0.0 equal to 0.0) as order-preserving unsigned keys.
 *
 * Semantics are those of the CPU kernels (reduce_cpu.c, reduce_cpu_acc.inc); the CUDA kernels
 * (cuda/reduce.cu, cuda/sort.cu) call these functions rather than re-deriving the formulas.
 * One function per accumulator: _f32 (float: float32, float16, bfloat16), _f64 (double),
 * _i64 (int64: integers and bool; sums and products wrap as in PyTorch). */
#ifndef CTORCH_REDUCE_MATH_H
#define CTORCH_REDUCE_MATH_H

#include "dtype.h"
#include "reduce.h"
#include <math.h>

/* --- floating accumulators ------------------------------------------------------------------ */
#define CT_RED_FLOAT_MATH(SFX, T, EXP, LOG, SQRT)                                                       \
    /* The combination over nothing. After CT_MAP_NONZERO values are 0 or 1, so max and min      \
     * (any and all) start from 0 and 1: an empty any() is false, an empty all() is 1. */          \
    CT_HOST_DEVICE T ct_red_identity_##SFX(CtReduceCombine op, CtReduceMap map)                        \
    {                                                                                                   \
        switch (op) {                                                                                   \
        case CT_COMBINE_SUM:                                                                            \
            return (T)0;                                                                                \
        case CT_COMBINE_PROD:                                                                           \
            return (T)1;                                                                                \
        case CT_COMBINE_MAX:                                                                            \
            return map == CT_MAP_NONZERO ? (T)0 : -(T)INFINITY;                                         \
        default:                                                                                        \
            return map == CT_MAP_NONZERO ? (T)1 : (T)INFINITY;                                          \
        }                                                                                               \
    }                                                                                                   \
    /* a comes first; max/min propagate NaN and keep a on ties. */                                      \
    CT_HOST_DEVICE T ct_red_combine_##SFX(T a, T b, CtReduceCombine op)                                \
    {                                                                                                   \
        switch (op) {                                                                                   \
        case CT_COMBINE_SUM:                                                                            \
            return a + b;                                                                               \
        case CT_COMBINE_PROD:                                                                           \
            return a * b;                                                                               \
        case CT_COMBINE_MAX:                                                                            \
            return (a != a || a >= b) ? a : b;                                                          \
        default:                                                                                        \
            return (a != a || a <= b) ? a : b;                                                          \
        }                                                                                               \
    }                                                                                                   \
    /* s is the output's shift (already through ct_red_shift). */                                       \
    CT_HOST_DEVICE T ct_red_map_##SFX(T x, CtReduceMap map, double p, T s)                              \
    {                                                                                                   \
        switch (map) {                                                                                  \
        case CT_MAP_ABS:                                                                                \
            return x < 0 ? -x : x;                                                                      \
        case CT_MAP_SQUARE:                                                                             \
            return x * x;                                                                               \
        case CT_MAP_ABS_POW:                                                                            \
            return (T)pow(fabs((double)x), p);                                                          \
        case CT_MAP_NONZERO:                                                                            \
            return (T)(x != 0);                                                                         \
        case CT_MAP_EXP_SHIFT:                                                                          \
            return EXP(x - s);                                                                          \
        case CT_MAP_SQDIFF_SHIFT: {                                                                     \
            T v = x - s;                                                                                \
            return v * v;                                                                               \
        }                                                                                               \
        case CT_MAP_NAN_TO_ZERO:                                                                        \
            return x != x ? (T)0 : x;                                                                   \
        default:                                                                                        \
            return x;                                                                                   \
        }                                                                                               \
    }                                                                                                   \
    /* The shift as the maps use it: an infinite logsumexp shift counts as 0, so that exp(x - s)    \
     * stays defined for rows of -inf (or +inf). */                                                     \
    CT_HOST_DEVICE T ct_red_shift_##SFX(T s, CtReduceMap map)                                          \
    {                                                                                                   \
        return (map == CT_MAP_EXP_SHIFT && (s == (T)INFINITY || s == -(T)INFINITY)) ? (T)0 : s;        \
    }                                                                                                   \
    CT_HOST_DEVICE T ct_red_finish_##SFX(T v, CtReduceFinal final, double divisor, double p, T s)      \
    {                                                                                                   \
        switch (final) {                                                                                \
        case CT_FINAL_DIVIDE:                                                                           \
            return v / (T)divisor;                                                                      \
        case CT_FINAL_SQRT_DIVIDE:                                                                      \
            return SQRT(v / (T)divisor);                                                                \
        case CT_FINAL_ROOT:                                                                             \
            return (T)pow((double)v, 1.0 / p);                                                          \
        case CT_FINAL_LOG_SHIFT:                                                                        \
            return LOG(v) + s;                                                                          \
        default:                                                                                        \
            return v;                                                                                   \
        }                                                                                               \
    }

CT_RED_FLOAT_MATH(f32, float, expf, logf, sqrtf)
CT_RED_FLOAT_MATH(f64, double, exp, log, sqrt)
#undef CT_RED_FLOAT_MATH

/* --- the integer accumulator ------------------------------------------------------------------ */
CT_HOST_DEVICE int64_t ct_red_identity_i64(CtReduceCombine op, CtReduceMap map)
{
    switch (op) {
    case CT_COMBINE_SUM:
        return 0;
    case CT_COMBINE_PROD:
        return 1;
    case CT_COMBINE_MAX:
        return map == CT_MAP_NONZERO ? 0 : INT64_MIN;
    default:
        return map == CT_MAP_NONZERO ? 1 : INT64_MAX;
    }
}
CT_HOST_DEVICE int64_t ct_red_combine_i64(int64_t a, int64_t b, CtReduceCombine op)
{
    switch (op) {
    case CT_COMBINE_SUM: /* unsigned: wraps without undefined behaviour */
        return (int64_t)((uint64_t)a + (uint64_t)b);
    case CT_COMBINE_PROD:
        return (int64_t)((uint64_t)a * (uint64_t)b);
    case CT_COMBINE_MAX:
        return a >= b ? a : b;
    default:
        return a <= b ? a : b;
    }
}
/* Only the maps that make sense for integers change anything. */
CT_HOST_DEVICE int64_t ct_red_map_i64(int64_t x, CtReduceMap map, double p, int64_t s)
{
    (void)p;
    (void)s;
    switch (map) {
    case CT_MAP_ABS:
        return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
    case CT_MAP_SQUARE:
        return (int64_t)((uint64_t)x * (uint64_t)x);
    case CT_MAP_NONZERO:
        return x != 0;
    default:
        return x;
    }
}
CT_HOST_DEVICE int64_t ct_red_shift_i64(int64_t s, CtReduceMap map)
{
    (void)map;
    return s;
}
CT_HOST_DEVICE int64_t ct_red_finish_i64(int64_t v, CtReduceFinal final, double divisor, double p, int64_t s)
{
    (void)final;
    (void)divisor;
    (void)p;
    (void)s;
    return v;
}

/* --- softmax ---------------------------------------------------------------------------------- */
/* The running maximum of a softmax line: NaN sticks. */
CT_HOST_DEVICE float ct_red_softmax_max_f32(float m, float x) { return (x > m || x != x) ? x : m; }
CT_HOST_DEVICE double ct_red_softmax_max_f64(double m, double x) { return (x > m || x != x) ? x : m; }

/* --- sort keys -------------------------------------------------------------------------------
 * Unsigned keys whose unsigned order is the sorts' order: integers by value, floats by value
 * with every NaN above +inf (all NaNs one key, so they keep their input order in a stable
 * sort) and -0.0 equal to 0.0. Floats: flip every bit of negatives, set the sign bit of the
 * others. */
CT_HOST_DEVICE uint16_t ct_red_key_f16(uint16_t bits)
{
    if ((bits & 0x7c00u) == 0x7c00u && (bits & 0x03ffu) != 0) {
        return 0xffffu;
    }
    if (bits == 0x8000u) {
        bits = 0;
    }
    return (bits & 0x8000u) ? (uint16_t)~bits : (uint16_t)(bits | 0x8000u);
}
CT_HOST_DEVICE uint16_t ct_red_key_bf16(uint16_t bits)
{
    if ((bits & 0x7f80u) == 0x7f80u && (bits & 0x007fu) != 0) {
        return 0xffffu;
    }
    if (bits == 0x8000u) {
        bits = 0;
    }
    return (bits & 0x8000u) ? (uint16_t)~bits : (uint16_t)(bits | 0x8000u);
}
CT_HOST_DEVICE uint32_t ct_red_key_f32(float x)
{
    if (x != x) {
        return 0xffffffffu;
    }
    uint32_t bits = x == 0 ? 0u : ct_f32_to_bits(x);
    return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}
CT_HOST_DEVICE uint64_t ct_red_key_f64(double x)
{
    if (x != x) {
        return ~(uint64_t)0;
    }
    uint64_t bits = 0;
    if (x != 0) {
        memcpy(&bits, &x, 8);
    }
    return (bits & 0x8000000000000000ull) ? ~bits : (bits | 0x8000000000000000ull);
}
CT_HOST_DEVICE uint16_t ct_red_key_i8(int8_t x) { return (uint16_t)(uint8_t)((uint8_t)x ^ 0x80u); }
CT_HOST_DEVICE uint16_t ct_red_key_i16(int16_t x) { return (uint16_t)((uint16_t)x ^ 0x8000u); }
CT_HOST_DEVICE uint32_t ct_red_key_i32(int32_t x) { return (uint32_t)x ^ 0x80000000u; }
CT_HOST_DEVICE uint64_t ct_red_key_i64(int64_t x) { return (uint64_t)x ^ 0x8000000000000000ull; }

#endif /* CTORCH_REDUCE_MATH_H */
