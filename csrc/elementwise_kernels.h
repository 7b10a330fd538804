/* elementwise_kernels.h: the table of elementwise ops, the one place that says which ops exist,
 * which dtypes each has kernels for, and which scalar_math.h function computes it.
 *
 * Everything per op is expanded from CT_EW_OP_LIST below: the CtEwOp enum and ct_ew_op_info
 * (elementwise.h), the CPU kernel table (elementwise_cpu.c) and the CUDA kernels
 * (cuda/elementwise_impl.cuh). Adding an op is one row here plus its ct_sm_<fn>_<type>
 * functions in scalar_math.h. Plain preprocessor, included by C and by CUDA C++.
 *
 * Row: X(NAME, kind, fn, domain, flags, kernel name)
 *   NAME         the op: CT_EW_<NAME>
 *   kind         how a kernel calls the scalar function (arity, result, parameters): below
 *   fn           the scalar function: ct_sm_<fn>_<type> for every kernel type of the domain
 *   domain       the dtype classes with a kernel: FLT (float, double; float16/bfloat16 compute in
 *                float), INT (the five integer types), ALL (FLT, INT and bool), NUM (FLT and
 *                INT), INTB (INT and bool)
 *   flags        CT_EW_INT_TO_FLOAT: bool/integer inputs are computed in the default float dtype
 *                (exp, /); CT_EW_OPMATH_SCALARS: host scalars go to the acc type unrounded
 *                (float16 * 0.3 multiplies by 0.3f, not by float16(0.3)), as PyTorch's CPU kernels
 *                for mul, div, lerp; CT_EW_NO_HALF: float16/bfloat16 raise PyTorch's "not
 *                implemented" (no kernels are built for them). The kind adds CT_EW_OUT_BOOL, CT_EW_COND or CT_EW_INT_DIV.
 *   kernel name  for PyTorch's "\"abs_cpu\" not implemented for 'Bool'"
 * Params (CtEwCall.params, p0..p2 below) used by: ADD_ALPHA/SUB_ALPHA (alpha), ADDCMUL/ADDCDIV
 * (value), ROUND_DECIMALS (10^|decimals|, decimals < 0), NAN_TO_NUM (nan, posinf, neginf),
 * SOFTPLUS (beta, threshold), ELU (alpha * scale, scale, input_scale), HARDTANH (min, max),
 * SOFTSHRINK/HARDSHRINK (lambd), THRESHOLD (threshold, value), THRESHOLD_BACKWARD (threshold),
 * POLYGAMMA (n), ORTHO_POLY (the polynomial's kind), LOGIT (eps, < 0: none), AMP_SCALE (growth,
 * backoff, interval), AMP_TRACKER (interval). */
#ifndef CTORCH_ELEMENTWISE_KERNELS_H
#define CTORCH_ELEMENTWISE_KERNELS_H

/* --- domains and flags (CtEwOpInfo.domain, CtEwOpInfo.flags) ------------------------------------ */
#define CT_EW_DOM_BOOL 1
#define CT_EW_DOM_INT 2
#define CT_EW_DOM_FLOAT 4
#define CT_EW_DOMAIN_ALL (CT_EW_DOM_BOOL | CT_EW_DOM_INT | CT_EW_DOM_FLOAT)
#define CT_EW_DOMAIN_NUM (CT_EW_DOM_INT | CT_EW_DOM_FLOAT)
#define CT_EW_DOMAIN_INTB (CT_EW_DOM_BOOL | CT_EW_DOM_INT)
#define CT_EW_DOMAIN_INT CT_EW_DOM_INT
#define CT_EW_DOMAIN_FLT CT_EW_DOM_FLOAT

#define CT_EW_INT_TO_FLOAT 1
#define CT_EW_OUT_BOOL 2   /* the result is bool (comparisons, isnan, logical ops) */
#define CT_EW_COND 4       /* input 0 is a bool condition, outside type promotion (where) */
#define CT_EW_INT_DIV 8    /* integer kernels detect division by zero (the CPU raises) */
#define CT_EW_OPMATH_SCALARS 16
#define CT_EW_NO_HALF 32 /* no float16/bfloat16 kernel: PyTorch dispatches float and double only */
#define CT_EW_SAME_OUT 64 /* an out= must have the result's dtype when the other operands are numbers (PyTorch's
                           * unary ops: abs, floor, clamp(x, 0, 1), ...; not exp, which casts to its out) */

/* --- kernel kinds ---------------------------------------------------------------------------------
 * How a kernel of type T calls f = ct_sm_<fn>_<T> on inputs a, b, c and the op's parameters
 * p0..p2 (converted to T):
 *   U   f(a)                 UB  f(a), a bool result       UP  f(a, p0)
 *   UP2 f(a, p0, p1)         UP3 f(a, p0, p1, p2)
 *   B   f(a, b)              BB  f(a, b), a bool result    BP  f(a, b, p0)
 *   BZ  f(a, b), an integer division (the CPU's integer kernels report a zero divisor)
 *   T   f(a, b, c)           TP  f(a, b, c, p0)            TP3 f(a, b, c, p0, p1, p2)
 *   W   f(a, b, c), a a bool condition
 * CT_EW_KIND_<kind>: its arity, and the flags it implies. */
#define CT_EW_KIND_U 1, 0
#define CT_EW_KIND_UB 1, CT_EW_OUT_BOOL
#define CT_EW_KIND_UP 1, 0
#define CT_EW_KIND_UP2 1, 0
#define CT_EW_KIND_UP3 1, 0
#define CT_EW_KIND_B 2, 0
#define CT_EW_KIND_BB 2, CT_EW_OUT_BOOL
#define CT_EW_KIND_BP 2, 0
#define CT_EW_KIND_BZ 2, CT_EW_INT_DIV
#define CT_EW_KIND_T 3, 0
#define CT_EW_KIND_TP 3, 0
#define CT_EW_KIND_TP3 3, 0
#define CT_EW_KIND_W 3, CT_EW_COND
#define CT_EW_KIND_ARITY(kind) CT_EW_FIRST_(CT_EW_KIND_##kind)
#define CT_EW_KIND_FLAGS(kind) CT_EW_SECOND_(CT_EW_KIND_##kind)
#define CT_EW_FIRST_(pair) CT_EW_FIRST__(pair)
#define CT_EW_FIRST__(a, b) a
#define CT_EW_SECOND_(pair) CT_EW_SECOND__(pair)
#define CT_EW_SECOND__(a, b) b

/* --- kernel dtypes ----------------------------------------------------------------------------------
 * CT_EW_KERNEL_DTYPES_<domain>(M, ...) calls M(DT, type, class, ...) for each kernel dtype of the
 * domain: CT_<DT> is the dtype, type its C type, class FLT, INT or BOOL. Callers paste `type`
 * (ct_sm_add_##type) before passing it to another macro: C's bool is a macro. */
#define CT_EW_KERNEL_DTYPES_FLT(M, ...) M(F32, float, FLT, __VA_ARGS__) M(F64, double, FLT, __VA_ARGS__)
#define CT_EW_KERNEL_DTYPES_INT(M, ...)                                                                     \
    M(U8, uint8_t, INT, __VA_ARGS__) M(I8, int8_t, INT, __VA_ARGS__) M(I16, int16_t, INT, __VA_ARGS__)      \
    M(I32, int32_t, INT, __VA_ARGS__) M(I64, int64_t, INT, __VA_ARGS__)
#define CT_EW_KERNEL_DTYPES_BOOL(M, ...) M(BOOL, bool, BOOL, __VA_ARGS__)
#define CT_EW_KERNEL_DTYPES_NUM(M, ...) \
    CT_EW_KERNEL_DTYPES_FLT(M, __VA_ARGS__) CT_EW_KERNEL_DTYPES_INT(M, __VA_ARGS__)
#define CT_EW_KERNEL_DTYPES_INTB(M, ...) \
    CT_EW_KERNEL_DTYPES_INT(M, __VA_ARGS__) CT_EW_KERNEL_DTYPES_BOOL(M, __VA_ARGS__)
#define CT_EW_KERNEL_DTYPES_ALL(M, ...) \
    CT_EW_KERNEL_DTYPES_NUM(M, __VA_ARGS__) CT_EW_KERNEL_DTYPES_BOOL(M, __VA_ARGS__)

/* An op parameter (CtOpParams *p, index k) in the kernel type of dtype DT: CT_EW_PARAM_<DT>(p, k). */
#define CT_EW_PARAM_BOOL(p, k) ((p)->i[k] != 0)
#define CT_EW_PARAM_U8(p, k) ((uint8_t)(p)->i[k])
#define CT_EW_PARAM_I8(p, k) ((int8_t)(p)->i[k])
#define CT_EW_PARAM_I16(p, k) ((int16_t)(p)->i[k])
#define CT_EW_PARAM_I32(p, k) ((int32_t)(p)->i[k])
#define CT_EW_PARAM_I64(p, k) ((int64_t)(p)->i[k])
#define CT_EW_PARAM_F32(p, k) ((float)(p)->f[k])
#define CT_EW_PARAM_F64(p, k) ((p)->f[k])

/* ORTHO_POLY's kinds (its parameter p0; csrc/special_poly_math.h) */
#define CT_SP_POLY_CHEBYSHEV_T 0 /* + 1, 2, 3: U, V, W; + 4: the shifted forms */
#define CT_SP_POLY_HERMITE_H 8
#define CT_SP_POLY_HERMITE_HE 9
#define CT_SP_POLY_LAGUERRE_L 10
#define CT_SP_POLY_LEGENDRE_P 11

/* --- the ops ------------------------------------------------------------------------------------ */
#define CT_EW_OP_LIST(X) \
    /* unary */                                                                    \
    X(NEG, U, neg, NUM, CT_EW_SAME_OUT, "neg_cpu")                                              \
    X(ABS, U, abs, NUM, CT_EW_SAME_OUT, "abs_cpu")                                              \
    X(SIGN, U, sign, ALL, CT_EW_SAME_OUT, "sign_cpu")                                           \
    X(SQUARE, U, square, NUM, 0, "square_cpu")                                     \
    X(CUBE, U, cube, FLT, 0, "pow")                                                \
    X(INV_SQUARE, U, inv_square, FLT, 0, "pow")                                    \
    X(RELU, U, relu, NUM, 0, "relu_cpu")                                           \
    X(FLOOR, U, floor, NUM, CT_EW_SAME_OUT, "floor_vml_cpu")                                    \
    X(CEIL, U, ceil, NUM, CT_EW_SAME_OUT, "ceil_vml_cpu")                                       \
    X(ROUND, U, round, NUM, CT_EW_SAME_OUT, "round_vml_cpu")                                    \
    X(TRUNC, U, trunc, NUM, CT_EW_SAME_OUT, "trunc_vml_cpu")                                    \
    X(FRAC, U, frac, FLT, CT_EW_SAME_OUT, "frac_cpu")                                           \
    X(ROUND_DECIMALS, UP2, round_decimals, FLT, CT_EW_SAME_OUT, "round_cpu")                    \
    X(EXP, U, exp, FLT, CT_EW_INT_TO_FLOAT, "exp_vml_cpu")                         \
    X(EXP2, U, exp2, FLT, CT_EW_INT_TO_FLOAT, "exp2_cpu")                          \
    X(EXPM1, U, expm1, FLT, CT_EW_INT_TO_FLOAT, "expm1_vml_cpu")                   \
    X(LOG, U, log, FLT, CT_EW_INT_TO_FLOAT, "log_vml_cpu")                         \
    X(LOG2, U, log2, FLT, CT_EW_INT_TO_FLOAT, "log2_vml_cpu")                      \
    X(LOG10, U, log10, FLT, CT_EW_INT_TO_FLOAT, "log10_vml_cpu")                   \
    X(LOG1P, U, log1p, FLT, CT_EW_INT_TO_FLOAT, "log1p_vml_cpu")                   \
    X(SQRT, U, sqrt, FLT, CT_EW_INT_TO_FLOAT, "sqrt_vml_cpu")                      \
    X(RSQRT, U, rsqrt, FLT, CT_EW_INT_TO_FLOAT, "rsqrt_cpu")                       \
    X(RECIPROCAL, U, reciprocal, FLT, CT_EW_INT_TO_FLOAT, "reciprocal_cpu")        \
    X(SIN, U, sin, FLT, CT_EW_INT_TO_FLOAT, "sin_vml_cpu")                         \
    X(COS, U, cos, FLT, CT_EW_INT_TO_FLOAT, "cos_vml_cpu")                         \
    X(TAN, U, tan, FLT, CT_EW_INT_TO_FLOAT, "tan_vml_cpu")                         \
    X(ASIN, U, asin, FLT, CT_EW_INT_TO_FLOAT, "asin_vml_cpu")                      \
    X(ACOS, U, acos, FLT, CT_EW_INT_TO_FLOAT, "acos_vml_cpu")                      \
    X(ATAN, U, atan, FLT, CT_EW_INT_TO_FLOAT, "atan_vml_cpu")                      \
    X(SINH, U, sinh, FLT, CT_EW_INT_TO_FLOAT, "sinh_vml_cpu")                      \
    X(COSH, U, cosh, FLT, CT_EW_INT_TO_FLOAT, "cosh_vml_cpu")                      \
    X(TANH, U, tanh, FLT, CT_EW_INT_TO_FLOAT, "tanh_vml_cpu")                      \
    X(ASINH, U, asinh, FLT, CT_EW_INT_TO_FLOAT, "asinh_cpu")                       \
    X(ACOSH, U, acosh, FLT, CT_EW_INT_TO_FLOAT, "acosh_cpu")                       \
    X(ATANH, U, atanh, FLT, CT_EW_INT_TO_FLOAT, "atanh_cpu")                       \
    X(ERF, U, erf, FLT, CT_EW_INT_TO_FLOAT, "erf_vml_cpu")                         \
    X(ERFC, U, erfc, FLT, CT_EW_INT_TO_FLOAT, "erfc_vml_cpu")                      \
    X(SIGMOID, U, sigmoid, FLT, CT_EW_INT_TO_FLOAT, "sigmoid_cpu")                 \
    X(SILU, U, silu, FLT, 0, "silu_cpu")                                           \
    X(GELU, U, gelu, FLT, 0, "GeluKernelImpl")                                     \
    X(GELU_TANH, U, gelu_tanh, FLT, 0, "GeluKernelImpl")                           \
    X(SOFTPLUS, UP2, softplus, FLT, 0, "softplus_cpu")                             \
    X(NAN_TO_NUM, UP3, nan_to_num, FLT, 0, "nan_to_num")                           \
    X(LOGICAL_NOT, UB, logical_not, ALL, 0, "logical_not_cpu")                     \
    X(BITWISE_NOT, U, bitwise_not, INTB, CT_EW_SAME_OUT, "bitwise_not_cpu")                     \
    X(ISNAN, UB, isnan, ALL, 0, "isnan")                                           \
    X(ISINF, UB, isinf, ALL, 0, "isinf")                                           \
    X(ISFINITE, UB, isfinite, ALL, 0, "isfinite")                                  \
    X(ISPOSINF, UB, isposinf, ALL, 0, "isposinf")                                  \
    X(ISNEGINF, UB, isneginf, ALL, 0, "isneginf")                                  \
    X(SIGNBIT, UB, signbit, ALL, 0, "signbit_cpu")                                 \
    /* nn activations (csrc/nn_act.c) */                                           \
    X(ELU, UP3, elu, FLT, 0, "elu_cpu")                                            \
    X(HARDTANH, UP2, hardtanh, NUM, 0, "hardtanh_cpu")                             \
    X(HARDSIGMOID, U, hardsigmoid, FLT, 0, "hardsigmoid_cpu")                      \
    X(HARDSWISH, U, hardswish, FLT, 0, "hardswish_cpu")                            \
    X(MISH, U, mish, FLT, 0, "mish_cpu")                                           \
    X(LOG_SIGMOID, U, log_sigmoid, FLT, 0, "log_sigmoid_cpu")                      \
    X(SOFTSHRINK, UP, softshrink, FLT, 0, "softshrink_check")                      \
    X(HARDSHRINK, UP, hardshrink, FLT, 0, "hardshrink_cpu")                        \
    X(THRESHOLD, UP2, threshold, NUM, 0, "threshold_cpu")                          \
    /* special functions (csrc/ops_elementwise.c's entries; ops_more.c composes mvlgamma, ldexp, frexp) */ \
    X(ERFINV, U, erfinv, FLT, CT_EW_INT_TO_FLOAT, "erfinv_vml_cpu")                \
    X(LGAMMA, U, lgamma, FLT, CT_EW_INT_TO_FLOAT, "lgamma_vml_cpu")                \
    X(DIGAMMA, U, digamma, FLT, CT_EW_INT_TO_FLOAT, "digamma")                     \
    X(POLYGAMMA, UP, polygamma, FLT, CT_EW_INT_TO_FLOAT, "polygamma")              \
    X(I0, U, i0, FLT, CT_EW_INT_TO_FLOAT, "i0")                                    \
    X(I1, U, i1, FLT, CT_EW_INT_TO_FLOAT, "i1_cpu")                                \
    X(SINC, U, sinc, FLT, CT_EW_INT_TO_FLOAT, "sinc")                              \
    X(LOGIT, UP, logit, FLT, CT_EW_INT_TO_FLOAT, "logit_cpu")                      \
    X(DEG2RAD, U, deg2rad, FLT, CT_EW_INT_TO_FLOAT, "deg2rad")                     \
    X(RAD2DEG, U, rad2deg, FLT, CT_EW_INT_TO_FLOAT, "rad2deg")                     \
    X(FREXP_MANTISSA, U, frexp_mantissa, FLT, 0, "frexp_cpu")                      \
    X(FREXP_EXPONENT, U, frexp_exponent, FLT, 0, "frexp_cpu")                      \
    X(XLOGY, B, xlogy, FLT, CT_EW_INT_TO_FLOAT, "xlogy_cpu")                       \
    X(XLOG1PY, B, xlog1py, FLT, CT_EW_INT_TO_FLOAT, "special_xlog1py_cpu")         \
    X(ENTR, U, entr, FLT, CT_EW_INT_TO_FLOAT, "entr_cpu")                          \
    /* more of torch.special (csrc/special_math.h); NH: PyTorch has no float16/bfloat16 kernel */ \
    X(ERFCX, U, erfcx, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "erfcx_cpu")      \
    X(LOG_NDTR, U, log_ndtr, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "log_ndtr_cpu") \
    X(NDTRI, U, ndtri, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "ndtri_cpu")      \
    X(I0E, U, i0e, FLT, CT_EW_INT_TO_FLOAT, "i0e_cpu")                             \
    X(I1E, U, i1e, FLT, CT_EW_INT_TO_FLOAT, "i1e_cpu")                             \
    X(BESSEL_J0, U, bessel_j0, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "bessel_j0_cpu") \
    X(BESSEL_J1, U, bessel_j1, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "bessel_j1_cpu") \
    X(BESSEL_Y0, U, bessel_y0, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "bessel_y0_cpu") \
    X(BESSEL_Y1, U, bessel_y1, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "bessel_y1_cpu") \
    X(MODIFIED_BESSEL_I0, U, modified_bessel_i0, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "modified_bessel_i0_cpu") \
    X(MODIFIED_BESSEL_I1, U, modified_bessel_i1, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "modified_bessel_i1_cpu") \
    X(MODIFIED_BESSEL_K0, U, modified_bessel_k0, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "modified_bessel_k0_cpu") \
    X(MODIFIED_BESSEL_K1, U, modified_bessel_k1, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "modified_bessel_k1_cpu") \
    X(SCALED_MODIFIED_BESSEL_K0, U, scaled_modified_bessel_k0, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "scaled_modified_bessel_k0_cpu") \
    X(SCALED_MODIFIED_BESSEL_K1, U, scaled_modified_bessel_k1, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "scaled_modified_bessel_k1_cpu") \
    X(SPHERICAL_BESSEL_J0, U, spherical_bessel_j0, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "spherical_bessel_j0_cpu") \
    X(ZETA, B, zeta, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "zeta_cpu")         \
    /* torch.special's orthogonal polynomials (x, n), the kind (CT_SP_POLY_*) as p0, and airy_ai    \
     * (csrc/special_poly_math.h); the entries name each polynomial's kernel in their errors */      \
    X(ORTHO_POLY, BP, orthogonal_poly, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "orthogonal_polynomial_cpu") \
    X(AIRY_AI, U, airy_ai, FLT, CT_EW_INT_TO_FLOAT | CT_EW_NO_HALF, "airy_ai_cpu") \
    X(IGAMMA, B, igamma, FLT, 0, "igamma_cpu")                                     \
    X(IGAMMAC, B, igammac, FLT, 0, "igammac_cpu")                                  \
    X(HEAVISIDE, B, heaviside, ALL, 0, "heaviside_cpu")                            \
    X(GCD, B, gcd, INT, 0, "gcd_cpu")                                              \
    X(LCM, B, lcm, INT, 0, "lcm_cpu")                                              \
    X(NEXTAFTER, B, nextafter, FLT, 0, "nextafter_cpu")                            \
    /* binary */                                                                   \
    X(ADD, B, add, ALL, 0, "add_cpu")                                              \
    X(SUB, B, sub, NUM, 0, "sub_cpu")                                              \
    X(MUL, B, mul, ALL, CT_EW_OPMATH_SCALARS, "mul_cpu")                           \
    X(ADD_ALPHA, BP, add_alpha, ALL, 0, "add_cpu")                                 \
    X(SUB_ALPHA, BP, sub_alpha, NUM, 0, "sub_cpu")                                 \
    X(DIV, B, div, FLT, CT_EW_INT_TO_FLOAT | CT_EW_OPMATH_SCALARS, "div_true_cpu") \
    X(DIV_TRUNC, BZ, div_trunc, NUM, 0, "div_trunc_cpu")                           \
    X(DIV_FLOOR, BZ, div_floor, NUM, 0, "div_floor_cpu")                           \
    X(REMAINDER, BZ, remainder, NUM, 0, "remainder_cpu")                           \
    X(FMOD, BZ, fmod, NUM, 0, "fmod_cpu")                                          \
    X(POW, B, pow, NUM, 0, "pow")                                                  \
    X(ATAN2, B, atan2, FLT, CT_EW_INT_TO_FLOAT, "atan2_cpu")                       \
    X(COPYSIGN, B, copysign, FLT, CT_EW_INT_TO_FLOAT, "copysign_cpu")              \
    X(HYPOT, B, hypot, FLT, 0, "hypot_cpu")                                        \
    X(LOGADDEXP, B, logaddexp, FLT, 0, "logaddexp_cpu")                            \
    X(LOGADDEXP2, B, logaddexp2, FLT, 0, "logaddexp2_cpu")                         \
    X(MAXIMUM, B, maximum, ALL, 0, "maximum_cpu")                                  \
    X(MINIMUM, B, minimum, ALL, 0, "minimum_cpu")                                  \
    X(FMAX, B, fmax, ALL, 0, "fmax_cpu")                                           \
    X(FMIN, B, fmin, ALL, 0, "fmin_cpu")                                           \
    X(CLAMP_MIN, B, clamp_min, ALL, CT_EW_SAME_OUT, "clamp_min_cpu")                            \
    X(CLAMP_MAX, B, clamp_max, ALL, CT_EW_SAME_OUT, "clamp_max_cpu")                            \
    X(EQ, BB, eq, ALL, 0, "eq_cpu")                                                \
    X(NE, BB, ne, ALL, 0, "ne_cpu")                                                \
    X(LT, BB, lt, ALL, 0, "lt_cpu")                                                \
    X(LE, BB, le, ALL, 0, "le_cpu")                                                \
    X(GT, BB, gt, ALL, 0, "gt_cpu")                                                \
    X(GE, BB, ge, ALL, 0, "ge_cpu")                                                \
    X(LOGICAL_AND, BB, logical_and, ALL, 0, "logical_and_cpu")                     \
    X(LOGICAL_OR, BB, logical_or, ALL, 0, "logical_or_cpu")                        \
    X(LOGICAL_XOR, BB, logical_xor, ALL, 0, "logical_xor_cpu")                     \
    X(BITWISE_AND, B, bitwise_and, INTB, 0, "bitwise_and_cpu")                     \
    X(BITWISE_OR, B, bitwise_or, INTB, 0, "bitwise_or_cpu")                        \
    X(BITWISE_XOR, B, bitwise_xor, INTB, 0, "bitwise_xor_cpu")                     \
    X(LSHIFT, B, lshift, INT, 0, "lshift_cpu")                                     \
    X(RSHIFT, B, rshift, INT, 0, "rshift_cpu")                                     \
    X(PRELU, B, prelu, FLT, 0, "prelu_cpu") /* nn activations (csrc/nn_act.c) */   \
    /* activation backwards (grad, input or output): relu's, tanh's, sigmoid's */  \
    X(THRESHOLD_BACKWARD, BP, threshold_backward, FLT, 0, "threshold_backward_cpu") \
    X(TANH_BACKWARD, B, tanh_backward, FLT, 0, "tanh_backward_cpu")                \
    X(SIGMOID_BACKWARD, B, sigmoid_backward, FLT, 0, "sigmoid_backward_cpu")       \
    /* GradScaler's update (amp.c): the new scale, the new count of good steps */   \
    X(AMP_TRACKER, BP, amp_tracker, NUM, 0, "_amp_update_scale_cpu_")              \
    /* ternary */                                                                  \
    X(WHERE, W, where, ALL, 0, "where_cpu")                                        \
    X(CLAMP, T, clamp, NUM, CT_EW_SAME_OUT, "clamp_cpu")                                        \
    X(LERP, T, lerp, FLT, CT_EW_OPMATH_SCALARS, "lerp_kernel_tensor")              \
    X(ADDCMUL, TP, addcmul, NUM, 0, "addcmul_cpu_out")                             \
    X(AMP_SCALE, TP3, amp_scale, FLT, 0, "_amp_update_scale_cpu_")                 \
    X(ADDCDIV, TP, addcdiv, FLT, 0, "addcdiv_cpu_out")

#endif /* CTORCH_ELEMENTWISE_KERNELS_H */
