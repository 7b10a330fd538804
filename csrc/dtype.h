/* dtype.h: the dtype table, Python dtype objects, type promotion and the 16-bit float
 * conversions shared by every kernel (CT_HOST_DEVICE makes them usable from CUDA too). */
#ifndef CTORCH_DTYPE_H
#define CTORCH_DTYPE_H

#include "ctorch.h"
#include <string.h>

#ifdef __CUDACC__
#define CT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define CT_HOST_DEVICE static inline
#endif

extern const CtDTypeInfo ct_dtype_info[CT_NUM_DTYPES];

/* Borrowed reference to the ctorch.dtype object for d. */
PyObject *ct_dtype_object(CtDType d);
/* Parses a ctorch.dtype, a numpy dtype, or the Python types float/int/bool.
 * Returns 0, or -1 with TypeError set. */
int ct_dtype_from_object(PyObject *obj, CtDType *out);
/* Like ct_dtype_from_object but None leaves *out unchanged. */
int ct_dtype_converter(PyObject *obj, void *out);
CtDType ct_promote_types(CtDType a, CtDType b);
/* The default float dtype (torch.get_default_dtype()). */
extern CtDType ct_default_float_dtype;
int ct_dtype_init(PyObject *module);
/* Adds the types finfo and iinfo (finfo.c) to the module. 0 or -1. */
int ct_finfo_init(PyObject *module);

static inline bool ct_is_floating(CtDType d) { return ct_dtype_info[d].kind == CT_KIND_FLOAT; }
/* PyTorch's names of a dtype in its messages: ScalarType ("Long") and C++ type ("long int"). */
static inline const char *ct_scalar_type_name(CtDType d) { return ct_dtype_info[d].scalar_name; }
static inline const char *ct_cpp_type_name(CtDType d) { return ct_dtype_info[d].cpp_name; }
static inline bool ct_is_integral(CtDType d, bool include_bool)
{
    return ct_dtype_info[d].kind == CT_KIND_INT || (include_bool && d == CT_BOOL);
}

/* The dtype PyTorch gives a Python scalar of this kind. */
static inline CtDType ct_scalar_dtype(const CtScalar *s)
{
    return s->kind == CT_KIND_BOOL ? CT_BOOL : s->kind == CT_KIND_INT ? CT_I64 : ct_default_float_dtype;
}
/* Parses a Python bool/int/float (or a 0-d tensor: see tensor.h) into a scalar.
 * Returns 0, or -1 with TypeError set. */
int ct_scalar_from_object(PyObject *obj, CtScalar *out);
static inline double ct_scalar_to_double(const CtScalar *s)
{
    return s->kind == CT_KIND_FLOAT ? s->v.d : s->kind == CT_KIND_INT ? (double)s->v.i : (double)s->v.b;
}
static inline int64_t ct_scalar_to_int(const CtScalar *s)
{
    return s->kind == CT_KIND_FLOAT ? (int64_t)s->v.d : s->kind == CT_KIND_INT ? s->v.i : (int64_t)s->v.b;
}

/* --- 16-bit floats ---------------------------------------------------------------------- */
CT_HOST_DEVICE float ct_bits_to_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
CT_HOST_DEVICE uint32_t ct_f32_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

CT_HOST_DEVICE float ct_half_to_float(ct_half h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) { /* inf / nan */
        return ct_bits_to_f32(sign | 0x7f800000u | (man << 13));
    }
    if (exp == 0) { /* zero or subnormal: value = man * 2^-24 */
        float v = (float)man * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return ct_bits_to_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

CT_HOST_DEVICE ct_half ct_float_to_half(float f)
{
    uint32_t u = ct_f32_to_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t absu = u & 0x7fffffffu;
    if (absu >= 0x7f800000u) { /* inf or nan (nan keeps a quiet payload bit) */
        return (ct_half)(sign | 0x7c00u | (absu > 0x7f800000u ? 0x200u : 0u));
    }
    if (absu >= 0x477ff000u) { /* rounds to >= 65520: overflow to inf */
        return (ct_half)(sign | 0x7c00u);
    }
    if (absu < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
        /* Add 0.5 (as float) so the FPU does the round-to-nearest-even at 2^-24 granularity. */
        float a = ct_bits_to_f32(absu) + 0.5f;
        return (ct_half)(sign | (ct_f32_to_bits(a) - 0x3f000000u));
    }
    uint32_t mant_odd = (absu >> 13) & 1u;
    absu += 0xc8000fffu + mant_odd; /* rebias exponent (-112 << 23) and round half to even */
    return (ct_half)(sign | (absu >> 13));
}

CT_HOST_DEVICE float ct_bfloat16_to_float(ct_bfloat16 b) { return ct_bits_to_f32((uint32_t)b << 16); }

CT_HOST_DEVICE ct_bfloat16 ct_float_to_bfloat16(float f)
{
    uint32_t u = ct_f32_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) { /* nan: keep it a quiet nan */
        return (ct_bfloat16)((u >> 16) | 0x40u);
    }
    u += 0x7fffu + ((u >> 16) & 1u); /* round half to even */
    return (ct_bfloat16)(u >> 16);
}

/* x rounded to the floating dtype dt, as storing it in a tensor of dt does (float64 and the
 * non-floating dtypes: x itself). */
CT_HOST_DEVICE double ct_round_to_dtype(CtDType dt, double x)
{
    switch (dt) {
    case CT_F32:
        return (float)x;
    case CT_F16:
        return ct_half_to_float(ct_float_to_half((float)x));
    case CT_BF16:
        return ct_bfloat16_to_float(ct_float_to_bfloat16((float)x));
    default:
        return x;
    }
}

/* Load an element of dtype NAME as its acctype and store one back: the one place where the
 * 16-bit formats are widened and narrowed. Used by the kernel-stamping macros. */
#define CT_LOAD_BOOL(p) (*(const bool *)(p))
#define CT_LOAD_U8(p) (*(const uint8_t *)(p))
#define CT_LOAD_I8(p) (*(const int8_t *)(p))
#define CT_LOAD_I16(p) (*(const int16_t *)(p))
#define CT_LOAD_I32(p) (*(const int32_t *)(p))
#define CT_LOAD_I64(p) (*(const int64_t *)(p))
#define CT_LOAD_F16(p) ct_half_to_float(*(const ct_half *)(p))
#define CT_LOAD_BF16(p) ct_bfloat16_to_float(*(const ct_bfloat16 *)(p))
#define CT_LOAD_F32(p) (*(const float *)(p))
#define CT_LOAD_F64(p) (*(const double *)(p))

#define CT_STORE_BOOL(p, v) (*(bool *)(p) = (bool)(v))
#define CT_STORE_U8(p, v) (*(uint8_t *)(p) = (uint8_t)(v))
#define CT_STORE_I8(p, v) (*(int8_t *)(p) = (int8_t)(v))
#define CT_STORE_I16(p, v) (*(int16_t *)(p) = (int16_t)(v))
#define CT_STORE_I32(p, v) (*(int32_t *)(p) = (int32_t)(v))
#define CT_STORE_I64(p, v) (*(int64_t *)(p) = (int64_t)(v))
#define CT_STORE_F16(p, v) (*(ct_half *)(p) = ct_float_to_half((float)(v)))
#define CT_STORE_BF16(p, v) (*(ct_bfloat16 *)(p) = ct_float_to_bfloat16((float)(v)))
#define CT_STORE_F32(p, v) (*(float *)(p) = (float)(v))
#define CT_STORE_F64(p, v) (*(double *)(p) = (double)(v))

#endif /* CTORCH_DTYPE_H */
