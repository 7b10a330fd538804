/* random.h: ctorch.Generator, the per-device random kernel table (CtDeviceOps.random) and the
 * C entry points of the random ops (rand, randn, uniform_, normal_, bernoulli, randperm...).
 *
 * Every random op draws from a generator's Philox stream as philox.h specifies: element i of
 * an op takes the block at counter (offset + i), and the op advances the offset by its
 * element count. The kernels below receive the (seed, offset) pair and nothing else, so the
 * CUDA backend reproduces the CPU's numbers by calling the same philox.h functions. */
#ifndef CTORCH_RANDOM_H
#define CTORCH_RANDOM_H

#include "ctorch.h"
#include "dtype.h"
#include "philox.h"
#include "sampling_math.h"

/* The default seed of every default generator (PyTorch's value). */
#define CT_DEFAULT_SEED 67280421310721ULL

typedef struct {
    PyObject_HEAD
    CtDevice device;
    uint64_t seed;   /* initial_seed() */
    uint64_t offset; /* the Philox counter of the next element */
} CtGeneratorObject;

extern PyTypeObject *CtGenerator_Type;
#define CtGenerator_Check(op) PyObject_TypeCheck((op), CtGenerator_Type)

/* --- the kernel table ----------------------------------------------------------------------- */
typedef enum {
    CT_RANDOM_UNIFORM,     /* [a, b) */
    CT_RANDOM_NORMAL,      /* mean a, std b */
    CT_RANDOM_RANGE,       /* low + (U64 mod range) */
    CT_RANDOM_BERNOULLI,   /* u < a */
    CT_RANDOM_EXPONENTIAL, /* rate a */
} CtRandomKind;

typedef struct {
    CtRandomKind kind;
    double a, b;
    int64_t low;
    uint64_t range; /* >= 1 */
    uint64_t seed;
    uint64_t offset; /* counter of element 0 */
} CtRandomSpec;

/* Each kernel works on contiguous device memory, returns 0, or -1 with an exception set. */
struct CtRandomKernels {
    /* data: n elements of dtype; element i = the spec's sample from block (offset + i). */
    int (*fill)(void *data, int64_t n, CtDType dtype, const CtRandomSpec *spec, CtDevice device);
    /* out[i] = u_i < p[i] (p: n elements of the float dtype p_dtype, each in [0, 1]). */
    int (*bernoulli_tensor)(void *out, CtDType out_dtype, const void *p, CtDType p_dtype, int64_t n, uint64_t seed,
                            uint64_t offset, CtDevice device);
    /* out[i] = mean[i] + std[i] * z_i in double (all three: n elements of dtype, std >= 0). */
    int (*normal_tensor)(void *out, const void *mean, const void *std, CtDType dtype, int64_t n, uint64_t seed,
                         uint64_t offset, CtDevice device);
    /* out = 0..n-1 ordered by (U64 of block offset + i, i). */
    int (*randperm)(void *out, CtDType dtype, int64_t n, uint64_t seed, uint64_t offset, CtDevice device);
    /* --- the rejection samplers of sampling_math.h (element i: the sub-stream of offset + i);
     * out, alpha, rate, count, prob, x: n contiguous elements of the float dtype. */
    /* out = max(Gamma(alpha[i], 1), smallest normal of dtype) */
    int (*gamma)(void *out, const void *alpha, CtDType dtype, int64_t n, uint64_t seed, uint64_t offset,
                 CtDevice device);
    /* each row of `cols` elements: gammas (clamped in double) over their sum, clamped */
    int (*dirichlet)(void *out, const void *alpha, CtDType dtype, int64_t rows, int64_t cols, uint64_t seed,
                     uint64_t offset, CtDevice device);
    /* out = Poisson(rate[i]); a negative or NaN rate raises PyTorch's RuntimeError first */
    int (*poisson)(void *out, const void *rate, CtDType dtype, int64_t n, uint64_t seed, uint64_t offset,
                   CtDevice device);
    /* out = Binomial(count[i], prob[i]) */
    int (*binomial)(void *out, const void *count, const void *prob, CtDType dtype, int64_t n, uint64_t seed,
                    uint64_t offset, CtDevice device);
    /* out = d x / d alpha of Gamma(alpha[i]) samples x[i] (no randomness; here beside gamma) */
    int (*standard_gamma_grad)(void *out, const void *alpha, const void *x, CtDType dtype, int64_t n,
                               CtDevice device);
    /* out = d x / d alpha of Dirichlet components x[i] ~ Beta(alpha[i], total[i] - alpha[i]), over
     * 1 - x[i] (ct_dirichlet_grad; no randomness) */
    int (*dirichlet_grad)(void *out, const void *x, const void *alpha, const void *total, CtDType dtype, int64_t n,
                          CtDevice device);
};

extern const struct CtRandomKernels ct_cpu_random_kernels;

/* Stores v (double or int64) into *p as dtype (the CT_STORE_* conversions). */
CT_HOST_DEVICE void ct_store_double(CtDType dtype, void *p, double v)
{
    switch (dtype) {
#define CT_STORE_CASE(NAME, ...) \
    case CT_##NAME:              \
        CT_STORE_##NAME(p, v);   \
        break;
        CT_DTYPE_LIST(CT_STORE_CASE)
#undef CT_STORE_CASE
    default:
        break;
    }
}
CT_HOST_DEVICE void ct_store_int64(CtDType dtype, void *p, int64_t v)
{
    switch (dtype) {
#define CT_STORE_CASE(NAME, ...) \
    case CT_##NAME:              \
        CT_STORE_##NAME(p, v);   \
        break;
        CT_DTYPE_LIST(CT_STORE_CASE)
#undef CT_STORE_CASE
    default:
        break;
    }
}

/* The one definition of "element i of a random fill" (philox.h's table), shared by the CPU
 * kernel and the CUDA one: writes the sample of block b into *p as dtype. */
CT_HOST_DEVICE void ct_random_store(const CtRandomSpec *s, CtDType dtype, CtPhiloxBlock b, void *p)
{
    switch (s->kind) {
    case CT_RANDOM_UNIFORM:
        if (dtype == CT_F64) {
            *(double *)p = ct_philox_uniform_f64(b, s->a, s->b);
        } else if (dtype == CT_F32) {
            *(float *)p = ct_philox_uniform_f32(b, 24, (float)s->a, (float)s->b);
        } else if (dtype == CT_F16) {
            *(ct_half *)p = ct_float_to_half(ct_philox_uniform_f32(b, 11, (float)s->a, (float)s->b));
        } else if (dtype == CT_BF16) {
            *(ct_bfloat16 *)p = ct_float_to_bfloat16(ct_philox_uniform_f32(b, 8, (float)s->a, (float)s->b));
        } else {
            ct_store_double(dtype, p, ct_philox_uniform_f64(b, s->a, s->b));
        }
        break;
    case CT_RANDOM_NORMAL:
        ct_store_double(dtype, p, ct_philox_normal(b, s->a, s->b));
        break;
    case CT_RANDOM_RANGE:
        ct_store_int64(dtype, p, ct_philox_range(b, s->low, s->range));
        break;
    case CT_RANDOM_BERNOULLI:
        ct_store_int64(dtype, p, ct_philox_bernoulli(b, s->a));
        break;
    case CT_RANDOM_EXPONENTIAL:
        ct_store_double(dtype, p, ct_philox_exponential(b, s->a));
        break;
    }
}

/* The smallest normal number of a float dtype (the floor of gamma and Dirichlet samples). */
CT_HOST_DEVICE double ct_float_tiny(CtDType dtype)
{
    return dtype == CT_F64 ? 2.2250738585072014e-308 : dtype == CT_F16 ? 6.103515625e-05 : 1.1754943508222875e-38;
}

/* --- generators ------------------------------------------------------------------------------ */
/* The default generator of a device (borrowed reference); NULL with an exception set when the
 * device cannot be used. */
CtGeneratorObject *ct_default_generator(CtDevice device);
/* A generator= argument: NULL or None gives the device's default; anything else must be a
 * ctorch.Generator of the device's type (TypeError / RuntimeError as PyTorch, naming fname).
 * Borrowed reference. */
CtGeneratorObject *ct_generator_arg(PyObject *obj, CtDevice device, const char *fname);
/* Reserves n counters: returns the offset of the first and advances the generator. */
uint64_t ct_generator_take(CtGeneratorObject *g, uint64_t n);
/* Seeds the default generator of cuda:device (device < 0: of every CUDA device) and restarts
 * its stream. Needs no GPU: a default CUDA generator is created on first use, from the seed
 * recorded here (ct_cuda_settings.seed), as PyTorch seeds CUDA lazily. */
void ct_cuda_generator_seed(int device, uint64_t seed);
/* initial_seed() of cuda:device's default generator (created or not); 0 <= device < 64. */
uint64_t ct_cuda_generator_initial_seed(int device);

/* --- ops callable from C (g may be NULL: the default generator of t's device) --------------- */
/* In-place fills of any layout; each bumps t's version. 0, or -1 with an exception set. */
int ct_uniform_(CtTensorObject *t, double from, double to, CtGeneratorObject *g);
int ct_normal_(CtTensorObject *t, double mean, double std, CtGeneratorObject *g);
/* t = low + (U64 mod range), range >= 1 */
int ct_random_range_(CtTensorObject *t, int64_t low, uint64_t range, CtGeneratorObject *g);
int ct_bernoulli_scalar_(CtTensorObject *t, double p, CtGeneratorObject *g);
int ct_exponential_(CtTensorObject *t, double lambd, CtGeneratorObject *g);
/* New tensors. */
CtTensorObject *ct_rand(int ndim, const int64_t *sizes, CtDType dtype, CtDevice device, CtGeneratorObject *g);
CtTensorObject *ct_randn(int ndim, const int64_t *sizes, CtDType dtype, CtDevice device, CtGeneratorObject *g);
/* Each element 1 with probability p[i] (p float, values in [0, 1]); same shape/dtype as p. */
CtTensorObject *ct_bernoulli(CtTensorObject *p, CtGeneratorObject *g);
CtTensorObject *ct_randperm(int64_t n, CtDType dtype, CtDevice device, CtGeneratorObject *g);

int ct_random_init(PyObject *module);

#endif /* CTORCH_RANDOM_H */
