/* random.c: ctorch.Generator, the default generators, the CPU random kernels and the random
 * ops (rand, randn, randint, randperm, normal, bernoulli, the *_like forms and the in-place
 * uniform_/normal_/random_/bernoulli_/exponential_). Every op reserves its counters from a
 * generator and hands (seed, offset) to the device's CtRandomKernels (philox.h has the
 * sampling recipe), so the CPU and CUDA produce the same numbers. */
#include "random.h"
#include "args.h"
#include "creation.h"
#include "cuda_loader.h"
#include "device.h"
#include "iter.h"
#include "parallel.h"
#include "registry.h"
#include "storage.h"
#include "tensor.h"
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

PyTypeObject *CtGenerator_Type;

#define CT_MAX_CUDA_GENERATORS 64
#define CT_STATE_BYTES 16 /* seed, offset: little-endian uint64 each */

static CtGeneratorObject *cpu_default;
/* Created on first use; until then a device's seed lives in ct_cuda_settings.seed[device]. */
static CtGeneratorObject *cuda_defaults[CT_MAX_CUDA_GENERATORS];
_Static_assert(CT_MAX_CUDA_GENERATORS == CT_CUDA_MAX_DEVICES, "one default generator per CUDA device");

/* ------------------------------------------------------------------------------------------
 * the CPU kernels */
typedef struct {
    char *data;
    CtDType dtype;
    const CtRandomSpec *spec;
} FillCtx;

static void fill_chunk(int64_t begin, int64_t end, void *vctx)
{
    const FillCtx *c = vctx;
    const CtRandomSpec spec = *c->spec;
    size_t isz = ct_dtype_info[c->dtype].itemsize;
    /* Fast paths for the common float32 cases; the same functions as ct_random_store. */
    if (c->dtype == CT_F32 && spec.kind == CT_RANDOM_UNIFORM) {
        float *out = (float *)c->data, a = (float)spec.a, b = (float)spec.b;
        for (int64_t i = begin; i < end; i++) {
            out[i] = ct_philox_uniform_f32(ct_philox_block(spec.seed, spec.offset + (uint64_t)i), 24, a, b);
        }
        return;
    }
    if (c->dtype == CT_F32 && spec.kind == CT_RANDOM_NORMAL) {
        float *out = (float *)c->data;
        for (int64_t i = begin; i < end; i++) {
            out[i] = (float)ct_philox_normal(ct_philox_block(spec.seed, spec.offset + (uint64_t)i), spec.a, spec.b);
        }
        return;
    }
    for (int64_t i = begin; i < end; i++) {
        ct_random_store(&spec, c->dtype, ct_philox_block(spec.seed, spec.offset + (uint64_t)i), c->data + i * isz);
    }
}

static int cpu_fill(void *data, int64_t n, CtDType dtype, const CtRandomSpec *spec, CtDevice device)
{
    FillCtx ctx = {(char *)data, dtype, spec};
    ct_parallel_for(n, 1 << 14, fill_chunk, &ctx);
    return 0;
}

/* Reads element i of a contiguous float buffer as double. */
static double load_double(const void *p, CtDType dtype, int64_t i)
{
    const char *q = (const char *)p + i * (int64_t)ct_dtype_info[dtype].itemsize;
    switch (dtype) {
#define CT_LOAD_CASE(NAME, ...) \
    case CT_##NAME:             \
        return (double)CT_LOAD_##NAME(q);
        CT_DTYPE_LIST(CT_LOAD_CASE)
#undef CT_LOAD_CASE
    default:
        return 0.0;
    }
}

typedef struct {
    char *out;
    CtDType out_dtype;
    const void *p, *mean, *std;
    CtDType p_dtype;
    uint64_t seed, offset;
} PairCtx;

static void bernoulli_chunk(int64_t begin, int64_t end, void *vctx)
{
    const PairCtx *c = vctx;
    size_t isz = ct_dtype_info[c->out_dtype].itemsize;
    for (int64_t i = begin; i < end; i++) {
        CtPhiloxBlock b = ct_philox_block(c->seed, c->offset + (uint64_t)i);
        ct_store_int64(c->out_dtype, c->out + i * isz, ct_philox_bernoulli(b, load_double(c->p, c->p_dtype, i)));
    }
}

static int cpu_bernoulli_tensor(void *out, CtDType out_dtype, const void *p, CtDType p_dtype, int64_t n, uint64_t seed,
                                uint64_t offset, CtDevice device)
{
    for (int64_t i = 0; i < n; i++) {
        double v = load_double(p, p_dtype, i);
        if (!(v >= 0 && v <= 1)) {
            PyErr_SetString(PyExc_RuntimeError,
                            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
                            "improved?  If so, please report an enhancement request to PyTorch.)");
            return -1;
        }
    }
    PairCtx ctx = {.out = (char *)out, .out_dtype = out_dtype, .p = p, .p_dtype = p_dtype, .seed = seed, .offset = offset};
    ct_parallel_for(n, 1 << 14, bernoulli_chunk, &ctx);
    return 0;
}

static void normal_tensor_chunk(int64_t begin, int64_t end, void *vctx)
{
    const PairCtx *c = vctx;
    size_t isz = ct_dtype_info[c->out_dtype].itemsize;
    for (int64_t i = begin; i < end; i++) {
        CtPhiloxBlock b = ct_philox_block(c->seed, c->offset + (uint64_t)i);
        double v = ct_philox_normal(b, load_double(c->mean, c->out_dtype, i), load_double(c->std, c->out_dtype, i));
        ct_store_double(c->out_dtype, c->out + i * isz, v);
    }
}

static int cpu_normal_tensor(void *out, const void *mean, const void *std, CtDType dtype, int64_t n, uint64_t seed,
                             uint64_t offset, CtDevice device)
{
    for (int64_t i = 0; i < n; i++) {
        if (!(load_double(std, dtype, i) >= 0.0)) {
            PyErr_SetString(PyExc_RuntimeError, "normal expects all elements of std >= 0.0");
            return -1;
        }
    }
    PairCtx ctx = {.out = (char *)out, .out_dtype = dtype, .mean = mean, .std = std, .seed = seed, .offset = offset};
    ct_parallel_for(n, 1 << 14, normal_tensor_chunk, &ctx);
    return 0;
}

typedef struct {
    uint64_t key;
    int64_t index;
} KeyIndex;

typedef struct {
    KeyIndex *items;
    uint64_t seed, offset;
} KeyCtx;

static void keys_chunk(int64_t begin, int64_t end, void *vctx)
{
    const KeyCtx *c = vctx;
    for (int64_t i = begin; i < end; i++) {
        c->items[i].key = ct_philox_u64(ct_philox_block(c->seed, c->offset + (uint64_t)i));
        c->items[i].index = i;
    }
}

/* randperm: random keys, then a stable LSD radix sort (ties keep index order). */
static int cpu_randperm(void *out, CtDType dtype, int64_t n, uint64_t seed, uint64_t offset, CtDevice device)
{
    KeyIndex *a = PyMem_RawMalloc(sizeof(KeyIndex) * (size_t)n);
    KeyIndex *b = PyMem_RawMalloc(sizeof(KeyIndex) * (size_t)n);
    if (a == NULL || b == NULL) {
        PyMem_RawFree(a);
        PyMem_RawFree(b);
        PyErr_NoMemory();
        return -1;
    }
    KeyCtx ctx = {a, seed, offset};
    ct_parallel_for(n, 1 << 14, keys_chunk, &ctx);
    for (int shift = 0; shift < 64; shift += 8) {
        int64_t count[257] = {0};
        for (int64_t i = 0; i < n; i++) {
            count[((a[i].key >> shift) & 0xff) + 1]++;
        }
        bool trivial = false;
        for (int d = 1; d <= 256; d++) {
            trivial |= count[d] == n;
        }
        if (trivial) {
            continue; /* every key has the same byte here */
        }
        for (int d = 0; d < 256; d++) {
            count[d + 1] += count[d];
        }
        for (int64_t i = 0; i < n; i++) {
            b[count[(a[i].key >> shift) & 0xff]++] = a[i];
        }
        KeyIndex *t = a;
        a = b;
        b = t;
    }
    size_t isz = ct_dtype_info[dtype].itemsize;
    for (int64_t i = 0; i < n; i++) {
        ct_store_int64(dtype, (char *)out + i * isz, a[i].index);
    }
    PyMem_RawFree(a);
    PyMem_RawFree(b);
    return 0;
}

/* --- the rejection samplers (sampling_math.h): element i reads its parameters as double and
 * draws from its own sub-stream of counter offset + i */
typedef struct {
    char *out;
    const void *a, *b; /* alpha / rate / count, and prob (binomial) */
    const void *c;     /* total (dirichlet_grad, whose a, b are x, alpha) */
    CtDType dtype;
    int64_t cols; /* dirichlet */
    uint64_t seed, offset;
} SamplerCtx;

static void gamma_chunk(int64_t begin, int64_t end, void *vctx)
{
    const SamplerCtx *c = vctx;
    size_t isz = ct_dtype_info[c->dtype].itemsize;
    double tiny = ct_float_tiny(c->dtype);
    for (int64_t i = begin; i < end; i++) {
        double v = ct_gamma_element(c->seed, c->offset, i, load_double(c->a, c->dtype, i), tiny);
        ct_store_double(c->dtype, c->out + i * isz, v);
    }
}

static int cpu_gamma(void *out, const void *alpha, CtDType dtype, int64_t n, uint64_t seed, uint64_t offset,
                     CtDevice device)
{
    SamplerCtx ctx = {.out = out, .a = alpha, .dtype = dtype, .seed = seed, .offset = offset};
    ct_parallel_for(n, 1 << 10, gamma_chunk, &ctx);
    return 0;
}

/* rows [begin, end): the row's gammas summed in order, then drawn again (the same sub-streams)
 * and divided, so no scratch is needed */
static void dirichlet_chunk(int64_t begin, int64_t end, void *vctx)
{
    const SamplerCtx *c = vctx;
    size_t isz = ct_dtype_info[c->dtype].itemsize;
    double tiny = ct_float_tiny(c->dtype);
    for (int64_t r = begin; r < end; r++) {
        int64_t first = r * c->cols;
        double sum = 0.0;
        for (int64_t i = first; i < first + c->cols; i++) {
            sum += ct_dirichlet_gamma(c->seed, c->offset, i, load_double(c->a, c->dtype, i));
        }
        for (int64_t i = first; i < first + c->cols; i++) {
            double g = ct_dirichlet_gamma(c->seed, c->offset, i, load_double(c->a, c->dtype, i));
            ct_store_double(c->dtype, c->out + i * isz, ct_clamp_tiny(g / sum, tiny));
        }
    }
}

static int cpu_dirichlet(void *out, const void *alpha, CtDType dtype, int64_t rows, int64_t cols, uint64_t seed,
                         uint64_t offset, CtDevice device)
{
    SamplerCtx ctx = {.out = out, .a = alpha, .dtype = dtype, .cols = cols, .seed = seed, .offset = offset};
    ct_parallel_for(rows, 1 + (1 << 10) / (cols > 0 ? cols : 1), dirichlet_chunk, &ctx);
    return 0;
}

static void poisson_chunk(int64_t begin, int64_t end, void *vctx)
{
    const SamplerCtx *c = vctx;
    size_t isz = ct_dtype_info[c->dtype].itemsize;
    for (int64_t i = begin; i < end; i++) {
        double v = ct_poisson_element(c->seed, c->offset, i, load_double(c->a, c->dtype, i));
        ct_store_double(c->dtype, c->out + i * isz, v);
    }
}

static int cpu_poisson(void *out, const void *rate, CtDType dtype, int64_t n, uint64_t seed, uint64_t offset,
                       CtDevice device)
{
    for (int64_t i = 0; i < n; i++) {
        if (!(load_double(rate, dtype, i) >= 0.0)) {
            PyErr_SetString(PyExc_RuntimeError, "invalid Poisson rate, expected rate to be non-negative");
            return -1;
        }
    }
    SamplerCtx ctx = {.out = out, .a = rate, .dtype = dtype, .seed = seed, .offset = offset};
    ct_parallel_for(n, 1 << 10, poisson_chunk, &ctx);
    return 0;
}

static void binomial_chunk(int64_t begin, int64_t end, void *vctx)
{
    const SamplerCtx *c = vctx;
    size_t isz = ct_dtype_info[c->dtype].itemsize;
    for (int64_t i = begin; i < end; i++) {
        double v = ct_binomial_element(c->seed, c->offset, i, load_double(c->a, c->dtype, i),
                                       load_double(c->b, c->dtype, i));
        ct_store_double(c->dtype, c->out + i * isz, v);
    }
}

static int cpu_binomial(void *out, const void *count, const void *prob, CtDType dtype, int64_t n, uint64_t seed,
                        uint64_t offset, CtDevice device)
{
    SamplerCtx ctx = {.out = out, .a = count, .b = prob, .dtype = dtype, .seed = seed, .offset = offset};
    ct_parallel_for(n, 1 << 10, binomial_chunk, &ctx);
    return 0;
}

static void gamma_grad_chunk(int64_t begin, int64_t end, void *vctx)
{
    const SamplerCtx *c = vctx;
    size_t isz = ct_dtype_info[c->dtype].itemsize;
    for (int64_t i = begin; i < end; i++) {
        double v = ct_standard_gamma_grad(load_double(c->a, c->dtype, i), load_double(c->b, c->dtype, i));
        ct_store_double(c->dtype, c->out + i * isz, v);
    }
}

static int cpu_standard_gamma_grad(void *out, const void *alpha, const void *x, CtDType dtype, int64_t n,
                                   CtDevice device)
{
    SamplerCtx ctx = {.out = out, .a = alpha, .b = x, .dtype = dtype};
    ct_parallel_for(n, 1 << 10, gamma_grad_chunk, &ctx);
    return 0;
}

static void dirichlet_grad_chunk(int64_t begin, int64_t end, void *vctx)
{
    const SamplerCtx *c = vctx;
    size_t isz = ct_dtype_info[c->dtype].itemsize;
    for (int64_t i = begin; i < end; i++) {
        double v = ct_dirichlet_grad(load_double(c->a, c->dtype, i), load_double(c->b, c->dtype, i),
                                     load_double(c->c, c->dtype, i));
        ct_store_double(c->dtype, c->out + i * isz, v);
    }
}

static int cpu_dirichlet_grad(void *out, const void *x, const void *alpha, const void *total, CtDType dtype,
                              int64_t n, CtDevice device)
{
    SamplerCtx ctx = {.out = out, .a = x, .b = alpha, .c = total, .dtype = dtype};
    ct_parallel_for(n, 1 << 8, dirichlet_grad_chunk, &ctx);
    return 0;
}

const struct CtRandomKernels ct_cpu_random_kernels = {
    .fill = cpu_fill,
    .bernoulli_tensor = cpu_bernoulli_tensor,
    .normal_tensor = cpu_normal_tensor,
    .randperm = cpu_randperm,
    .gamma = cpu_gamma,
    .dirichlet = cpu_dirichlet,
    .poisson = cpu_poisson,
    .binomial = cpu_binomial,
    .standard_gamma_grad = cpu_standard_gamma_grad,
    .dirichlet_grad = cpu_dirichlet_grad,
};

/* ------------------------------------------------------------------------------------------
 * generators */
uint64_t ct_generator_take(CtGeneratorObject *g, uint64_t n)
{
    uint64_t first = g->offset;
    g->offset += n;
    return first;
}

static CtGeneratorObject *generator_new(CtDevice device, uint64_t seed)
{
    CtGeneratorObject *g = PyObject_New(CtGeneratorObject, CtGenerator_Type);
    if (g == NULL) {
        return NULL;
    }
    g->device = device;
    g->seed = seed;
    g->offset = 0;
    return g;
}

CtGeneratorObject *ct_default_generator(CtDevice device)
{
    if (device.type == CT_DEV_CPU) {
        return cpu_default;
    }
    if (device.index < 0 || device.index >= CT_MAX_CUDA_GENERATORS) {
        PyErr_Format(PyExc_RuntimeError, "no default generator for CUDA device %d", device.index);
        return NULL;
    }
    if (cuda_defaults[device.index] == NULL) {
        if (ct_device_ops(device) == NULL) {
            return NULL;
        }
        CtGeneratorObject *g = generator_new(device, ct_cuda_settings.seed[device.index]);
        if (g == NULL) {
            return NULL;
        }
        g->offset = ct_cuda_settings.offset[device.index];
        cuda_defaults[device.index] = g; /* kept for the life of the process */
    }
    return cuda_defaults[device.index];
}

void ct_cuda_generator_seed(int device, uint64_t seed)
{
    for (int d = 0; d < CT_MAX_CUDA_GENERATORS; d++) {
        if (device >= 0 && d != device) {
            continue;
        }
        ct_cuda_settings.seed[d] = seed;
        ct_cuda_settings.offset[d] = 0;
        if (cuda_defaults[d] != NULL) {
            cuda_defaults[d]->seed = seed;
            cuda_defaults[d]->offset = 0;
        }
    }
}

uint64_t ct_cuda_generator_initial_seed(int device)
{
    return cuda_defaults[device] != NULL ? cuda_defaults[device]->seed : ct_cuda_settings.seed[device];
}

CtGeneratorObject *ct_generator_arg(PyObject *obj, CtDevice device, const char *fname)
{
    if (obj == NULL || obj == Py_None) {
        return ct_default_generator(device);
    }
    if (!CtGenerator_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'generator' must be torch.Generator, not %s", fname,
                     ct_type_name(obj));
        return NULL;
    }
    CtGeneratorObject *g = (CtGeneratorObject *)obj;
    if (g->device.type != device.type) {
        PyErr_Format(PyExc_RuntimeError, "Expected a '%s' device type for generator but found '%s'",
                     device.type == CT_DEV_CPU ? "cpu" : "cuda", g->device.type == CT_DEV_CPU ? "cpu" : "cuda");
        return NULL;
    }
    return g;
}

/* A seed argument: an int (negative values wrap to uint64, as PyTorch). */
static int seed_value(PyObject *obj, uint64_t *out)
{
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_RuntimeError, "manual_seed expected a long, but got %s", ct_type_name(obj));
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(obj);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
            return -1;
        }
        *out = u;
        return 0;
    }
    if (overflow < 0) {
        PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
        return -1;
    }
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

/* 64 bits from the OS for seed(). */
static uint64_t nondeterministic_seed(void)
{
    uint64_t s = 0;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd >= 0) {
        ssize_t r = read(fd, &s, sizeof(s));
        close(fd);
        if (r == (ssize_t)sizeof(s)) {
            return s;
        }
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t)ts.tv_sec * 1000000007ULL) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
}

static PyObject *generator_tp_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"device", NULL};
    PyObject *dev_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Generator", kwlist, &dev_obj)) {
        return NULL;
    }
    CtDevice device = ct_cpu();
    if (dev_obj != Py_None && ct_device_from_object(dev_obj, &device) < 0) {
        return NULL;
    }
    if (device.type != CT_DEV_CPU && ct_device_ops(device) == NULL) {
        return NULL;
    }
    return (PyObject *)generator_new(device, CT_DEFAULT_SEED);
}

static void generator_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_Free(self);
    Py_DECREF(tp);
}

static PyObject *generator_manual_seed(PyObject *self, PyObject *seed)
{
    CtGeneratorObject *g = (CtGeneratorObject *)self;
    uint64_t s;
    if (seed_value(seed, &s) < 0) {
        return NULL;
    }
    g->seed = s;
    g->offset = 0;
    return Py_NewRef(self);
}

static PyObject *generator_seed(PyObject *self, PyObject *unused)
{
    CtGeneratorObject *g = (CtGeneratorObject *)self;
    g->seed = nondeterministic_seed();
    g->offset = 0;
    return PyLong_FromUnsignedLongLong(g->seed);
}

static PyObject *generator_initial_seed(PyObject *self, PyObject *unused)
{
    return PyLong_FromUnsignedLongLong(((CtGeneratorObject *)self)->seed);
}

static PyObject *generator_get_state(PyObject *self, PyObject *unused)
{
    CtGeneratorObject *g = (CtGeneratorObject *)self;
    int64_t n = CT_STATE_BYTES;
    CtTensorObject *t = ct_empty(1, &n, CT_U8, ct_cpu());
    if (t == NULL) {
        return NULL;
    }
    uint8_t *p = (uint8_t *)ct_data(t);
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(g->seed >> (8 * i));
        p[8 + i] = (uint8_t)(g->offset >> (8 * i));
    }
    return (PyObject *)t;
}

static PyObject *generator_set_state(PyObject *self, PyObject *state)
{
    CtGeneratorObject *g = (CtGeneratorObject *)self;
    if (!CtTensor_Check(state) || CT_TENSOR(state)->dtype != CT_U8) {
        PyErr_SetString(PyExc_TypeError, "RNG state must be a torch.ByteTensor");
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(state);
    if (ct_numel(t) != CT_STATE_BYTES) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected a ctorch generator state of size %d but found the input RNG state size to be %lld",
                     CT_STATE_BYTES, (long long)ct_numel(t));
        return NULL;
    }
    CtTensorObject *c = ct_to(t, CT_U8, ct_cpu(), false);
    CtTensorObject *flat = c != NULL ? ct_contiguous(c) : NULL;
    Py_XDECREF(c);
    if (flat == NULL) {
        return NULL;
    }
    const uint8_t *p = (const uint8_t *)ct_data(flat);
    uint64_t seed = 0, offset = 0;
    for (int i = 0; i < 8; i++) {
        seed |= (uint64_t)p[i] << (8 * i);
        offset |= (uint64_t)p[8 + i] << (8 * i);
    }
    Py_DECREF(flat);
    g->seed = seed;
    g->offset = offset;
    return Py_NewRef(self);
}

static PyObject *generator_get_offset(PyObject *self, PyObject *unused)
{
    return PyLong_FromUnsignedLongLong(((CtGeneratorObject *)self)->offset);
}

static PyObject *generator_set_offset(PyObject *self, PyObject *offset)
{
    uint64_t v;
    if (!PyLong_Check(offset)) {
        PyErr_Format(PyExc_TypeError, "set_offset(): argument 'offset' must be int, not %s", ct_type_name(offset));
        return NULL;
    }
    v = PyLong_AsUnsignedLongLong(offset);
    if (v == (uint64_t)-1 && PyErr_Occurred()) {
        return NULL;
    }
    ((CtGeneratorObject *)self)->offset = v;
    return Py_NewRef(self);
}

static PyObject *generator_get_device(PyObject *self, void *closure)
{
    return ct_device_object(((CtGeneratorObject *)self)->device);
}

static PyObject *generator_repr(PyObject *self)
{
    char buf[32];
    ct_device_str(((CtGeneratorObject *)self)->device, buf, sizeof(buf));
    return PyUnicode_FromFormat("<ctorch.Generator object at %p (device=%s)>", self, buf);
}

static PyMethodDef generator_methods[] = {
    {"manual_seed", generator_manual_seed, METH_O, "manual_seed(seed): sets the seed, restarts the stream; returns self"},
    {"seed", generator_seed, METH_NOARGS, "seed(): seeds from the OS and returns the seed"},
    {"initial_seed", generator_initial_seed, METH_NOARGS, "initial_seed(): the seed of the stream"},
    {"get_state", generator_get_state, METH_NOARGS, "get_state(): (seed, offset) as a uint8 tensor of 16 bytes"},
    {"set_state", generator_set_state, METH_O, "set_state(state): restores a state from get_state(); returns self"},
    {"get_offset", generator_get_offset, METH_NOARGS, "get_offset(): the Philox counter of the next element"},
    {"set_offset", generator_set_offset, METH_O, "set_offset(offset): moves the stream; returns self"},
    {NULL},
};

static PyGetSetDef generator_getset[] = {
    {"device", generator_get_device, NULL, "the device the generator serves", NULL},
    {NULL},
};

static PyType_Slot generator_slots[] = {
    {Py_tp_new, generator_tp_new},
    {Py_tp_dealloc, generator_dealloc},
    {Py_tp_repr, generator_repr},
    {Py_tp_methods, generator_methods},
    {Py_tp_getset, generator_getset},
    {Py_tp_doc, "Generator(device='cpu'): a Philox4x32-10 stream (seed, offset)."},
    {0, NULL},
};

static PyType_Spec generator_spec = {
    "ctorch.Generator", sizeof(CtGeneratorObject), 0, Py_TPFLAGS_DEFAULT, generator_slots,
};

/* ------------------------------------------------------------------------------------------
 * ops callable from C */
static const struct CtRandomKernels *random_kernels(CtDevice device)
{
    const CtDeviceOps *ops = ct_device_ops(device);
    if (ops == NULL) {
        return NULL;
    }
    if (ops->random == NULL) {
        PyErr_Format(PyExc_RuntimeError, "random number generation is not implemented on %s", ops->name);
        return NULL;
    }
    return ops->random;
}

/* A contiguous tensor to write t's new values into: t itself or a scratch copy of its shape. */
static CtTensorObject *out_begin(CtTensorObject *t)
{
    if (ct_is_contiguous(t)) {
        return (CtTensorObject *)Py_NewRef(t);
    }
    return ct_empty(t->ndim, t->sizes, t->dtype, ct_device_of(t));
}

/* Copies the scratch back when needed, releases it and bumps t's version. */
static int out_end(CtTensorObject *t, CtTensorObject *target, int status)
{
    if (status == 0 && target != t) {
        status = ct_copy_(t, target);
    }
    Py_DECREF(target);
    if (status == 0) {
        ct_bump_version(t);
    }
    return status;
}

static int random_fill_(CtTensorObject *t, CtRandomSpec *spec, CtGeneratorObject *g)
{
    CtDevice device = ct_device_of(t);
    const struct CtRandomKernels *k = random_kernels(device);
    if (k == NULL) {
        return -1;
    }
    if (g == NULL && (g = ct_default_generator(device)) == NULL) {
        return -1;
    }
    int64_t n = ct_numel(t);
    if (n == 0) {
        return 0;
    }
    spec->seed = g->seed;
    spec->offset = ct_generator_take(g, (uint64_t)n);
    CtTensorObject *target = out_begin(t);
    if (target == NULL) {
        return -1;
    }
    return out_end(t, target, k->fill(ct_data(target), n, t->dtype, spec, device));
}

int ct_uniform_(CtTensorObject *t, double from, double to, CtGeneratorObject *g)
{
    CtRandomSpec spec = {.kind = CT_RANDOM_UNIFORM, .a = from, .b = to};
    return random_fill_(t, &spec, g);
}

int ct_normal_(CtTensorObject *t, double mean, double std, CtGeneratorObject *g)
{
    CtRandomSpec spec = {.kind = CT_RANDOM_NORMAL, .a = mean, .b = std};
    return random_fill_(t, &spec, g);
}

int ct_random_range_(CtTensorObject *t, int64_t low, uint64_t range, CtGeneratorObject *g)
{
    CtRandomSpec spec = {.kind = CT_RANDOM_RANGE, .low = low, .range = range ? range : 1};
    return random_fill_(t, &spec, g);
}

int ct_bernoulli_scalar_(CtTensorObject *t, double p, CtGeneratorObject *g)
{
    CtRandomSpec spec = {.kind = CT_RANDOM_BERNOULLI, .a = p};
    return random_fill_(t, &spec, g);
}

int ct_exponential_(CtTensorObject *t, double lambd, CtGeneratorObject *g)
{
    CtRandomSpec spec = {.kind = CT_RANDOM_EXPONENTIAL, .a = lambd};
    return random_fill_(t, &spec, g);
}

CtTensorObject *ct_rand(int ndim, const int64_t *sizes, CtDType dtype, CtDevice device, CtGeneratorObject *g)
{
    CtTensorObject *t = ct_empty(ndim, sizes, dtype, device);
    if (t != NULL && ct_uniform_(t, 0.0, 1.0, g) < 0) {
        Py_CLEAR(t);
    }
    return t;
}

CtTensorObject *ct_randn(int ndim, const int64_t *sizes, CtDType dtype, CtDevice device, CtGeneratorObject *g)
{
    CtTensorObject *t = ct_empty(ndim, sizes, dtype, device);
    if (t != NULL && ct_normal_(t, 0.0, 1.0, g) < 0) {
        Py_CLEAR(t);
    }
    return t;
}

/* t[i] = u_i < p[i], p broadcast to t (t any layout and dtype). */
static int bernoulli_tensor_(CtTensorObject *t, CtTensorObject *p, CtGeneratorObject *g)
{
    CtDevice device = ct_device_of(t);
    const struct CtRandomKernels *k = random_kernels(device);
    if (k == NULL) {
        return -1;
    }
    if (g == NULL && (g = ct_default_generator(device)) == NULL) {
        return -1;
    }
    int64_t n = ct_numel(t);
    CtTensorObject *pc = NULL, *target = NULL;
    int rc = -1;
    /* p as a contiguous tensor of t's shape on t's device, keeping its float dtype */
    pc = ct_empty(t->ndim, t->sizes, p->dtype, device);
    if (pc == NULL || ct_copy_(pc, p) < 0) {
        goto done;
    }
    if (n == 0) {
        rc = 0;
        goto done;
    }
    target = out_begin(t);
    if (target == NULL) {
        goto done;
    }
    uint64_t offset = ct_generator_take(g, (uint64_t)n);
    rc = out_end(t, target, k->bernoulli_tensor(ct_data(target), t->dtype, ct_data(pc), pc->dtype, n, g->seed, offset,
                                                device));
    target = NULL;
done:
    Py_XDECREF(pc);
    Py_XDECREF(target);
    return rc;
}

CtTensorObject *ct_bernoulli(CtTensorObject *p, CtGeneratorObject *g)
{
    CtTensorObject *t = ct_empty(p->ndim, p->sizes, p->dtype, ct_device_of(p));
    if (t != NULL && bernoulli_tensor_(t, p, g) < 0) {
        Py_CLEAR(t);
    }
    return t;
}

CtTensorObject *ct_randperm(int64_t n, CtDType dtype, CtDevice device, CtGeneratorObject *g)
{
    const struct CtRandomKernels *k = random_kernels(device);
    if (k == NULL) {
        return NULL;
    }
    if (g == NULL && (g = ct_default_generator(device)) == NULL) {
        return NULL;
    }
    CtTensorObject *t = ct_empty(1, &n, dtype, device);
    if (t == NULL || n == 0) {
        return t;
    }
    uint64_t offset = ct_generator_take(g, (uint64_t)n);
    if (k->randperm(ct_data(t), dtype, n, g->seed, offset, device) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return t;
}

/* ------------------------------------------------------------------------------------------
 * argument checks shared by the Python entry points */

/* PyErr_Format without %g: PyTorch's messages print doubles as C++ streams do ("1", "3e+38"). */
static void error_printf(PyObject *exc, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    PyErr_SetString(exc, buf);
}
static int require_float(CtDType d, const char *kernel)
{
    if (!ct_is_floating(d)) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", kernel, ct_scalar_type_name(d));
        return -1;
    }
    return 0;
}

/* PyTorch names kernels per device ("normal_kernel_cpu" / "normal_kernel_cuda"). */
static int require_float_on(CtDType d, const char *kernel, CtDevice device)
{
    char name[64];
    const char *cpu = strstr(kernel, "_cpu");
    if (device.type == CT_DEV_CUDA && cpu != NULL) {
        snprintf(name, sizeof(name), "%.*s_cuda%s", (int)(cpu - kernel), kernel, cpu + 4);
        kernel = name;
    }
    return require_float(d, kernel);
}

static const char *limits_name(CtDType d)
{
    static const char *names[CT_NUM_DTYPES] = {
        [CT_BOOL] = "bool", [CT_U8] = "unsigned char", [CT_I8] = "signed char", [CT_I16] = "short",
        [CT_I32] = "int",   [CT_I64] = "long",         [CT_F16] = "c10::Half",  [CT_BF16] = "c10::BFloat16",
        [CT_F32] = "float", [CT_F64] = "double",
    };
    return names[d];
}

/* The inclusive integer range random_ can produce for d (floats: the exactly representable
 * integers, +-2^digits). */
static void random_bounds(CtDType d, int64_t *lo, int64_t *hi)
{
    switch (d) {
    case CT_BOOL:
        *lo = 0, *hi = 1;
        break;
    case CT_U8:
        *lo = 0, *hi = 255;
        break;
    case CT_I8:
        *lo = -128, *hi = 127;
        break;
    case CT_I16:
        *lo = -32768, *hi = 32767;
        break;
    case CT_I32:
        *lo = INT32_MIN, *hi = INT32_MAX;
        break;
    case CT_I64:
        *lo = INT64_MIN, *hi = INT64_MAX;
        break;
    case CT_F16:
        *lo = -(1 << 11), *hi = 1 << 11;
        break;
    case CT_BF16:
        *lo = -(1 << 8), *hi = 1 << 8;
        break;
    case CT_F32:
        *lo = -(1 << 24), *hi = 1 << 24;
        break;
    default:
        *lo = -(INT64_C(1) << 53), *hi = INT64_C(1) << 53;
        break;
    }
}

/* [from, to) for random_/randint: PyTorch's checks. Floats outside +-2^digits only warn in
 * PyTorch; we accept them too (the values are rounded when stored). */
static int check_from_to(CtDType d, int64_t from, int64_t to)
{
    int64_t lo, hi;
    if (from >= to) {
        PyErr_Format(PyExc_RuntimeError, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                     (long long)from, (long long)to);
        return -1;
    }
    if (ct_is_floating(d)) {
        return 0;
    }
    random_bounds(d, &lo, &hi);
    if (from < lo || from > hi) {
        PyErr_Format(PyExc_RuntimeError, "from is out of bounds for %s", limits_name(d));
        return -1;
    }
    if (to - 1 < lo || to - 1 > hi) {
        PyErr_Format(PyExc_RuntimeError, "to - 1 is out of bounds for %s", limits_name(d));
        return -1;
    }
    return 0;
}

static int check_std(double std)
{
    if (!(std >= 0.0)) {
        error_printf(PyExc_RuntimeError, "normal expects std >= 0.0, but found std %g", std);
        return -1;
    }
    return 0;
}

static int check_uniform(CtDType d, double from, double to)
{
    double lo = d == CT_F64 ? -DBL_MAX : d == CT_F16 ? -65504.0 : -FLT_MAX;
    double hi = -lo;
    const char *name = limits_name(d);
    if (!(from >= lo && from <= hi)) {
        PyErr_Format(PyExc_RuntimeError, "from is out of bounds for %s", name);
        return -1;
    }
    if (!(to >= lo && to <= hi)) {
        PyErr_Format(PyExc_RuntimeError, "to is out of bounds for %s", name);
        return -1;
    }
    if (from > to) {
        error_printf(PyExc_RuntimeError, "uniform_ expects to return a [from, to) range, but found from=%g > to=%g",
                     from, to);
        return -1;
    }
    if (to - from > hi) {
        error_printf(PyExc_RuntimeError,
                     "uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found to=%g and from=%g which "
                     "result in to-from to exceed the limit",
                     ct_scalar_type_name(d), to, from);
        return -1;
    }
    return 0;
}

static int float_arg(const char *fname, const char *argname, int pos, PyObject *obj, double *out)
{
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    bool ok = PyFloat_Check(obj) || (PyLong_Check(obj) && !PyBool_Check(obj)) ||
              (CtTensor_Check(obj) && CT_TENSOR(obj)->ndim == 0) ||
              (!PyUnicode_Check(obj) && !PyBool_Check(obj) && !PySequence_Check(obj) &&
               Py_TYPE(obj)->tp_as_number != NULL && Py_TYPE(obj)->tp_as_number->nb_float != NULL);
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be float, not %s", fname, argname, pos,
                     ct_type_name(obj));
        return -1;
    }
    CtScalar s;
    if (ct_scalar_from_object(obj, &s) < 0) {
        return -1;
    }
    *out = ct_scalar_to_double(&s);
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * Python: factories */
#define RANDOM_KW "*generator", CT_FACTORY_KW
#define RANDOM_NKW (1 + CT_FACTORY_NKW)

/* rand/randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, ...) */
static PyObject *rand_factory(const char *fname, bool normal, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    static const char *const names[] = {"size", RANDOM_KW, NULL};
    PyObject *a[1 + RANDOM_NKW];
    int64_t sizes[CT_MAX_DIMS];
    CtFactoryOptions opt;
    int nd = ct_parse_size_varargs(fname, args, nargs, kwnames, names, a, sizes);
    if (nd < 0 || ct_factory_options(fname, a + 2, &opt) < 0 ||
        require_float_on(opt.dtype, normal ? "normal_kernel_cpu" : "check_uniform_bounds", opt.device) < 0) {
        return NULL;
    }
    CtGeneratorObject *g = ct_generator_arg(a[1], opt.device, fname);
    if (g == NULL) {
        return NULL;
    }
    CtTensorObject *t = normal ? ct_randn(nd, sizes, opt.dtype, opt.device, g)
                               : ct_rand(nd, sizes, opt.dtype, opt.device, g);
    if (t == NULL) {
        return NULL;
    }
    return ct_factory_finish(fname, t, &opt);
}

static PyObject *py_rand(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return rand_factory("rand", false, args, nargs, kwnames);
}
static PyObject *py_randn(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return rand_factory("randn", true, args, nargs, kwnames);
}

/* Fills t with integers in [low, high) after PyTorch's checks. */
static int randint_fill(CtTensorObject *t, int64_t low, int64_t high, CtGeneratorObject *g)
{
    if (check_from_to(t->dtype, low, high) < 0) {
        return -1;
    }
    return ct_random_range_(t, low, (uint64_t)high - (uint64_t)low, g);
}

/* randint(low=0, high, size, *, generator=None, ...) */
static PyObject *py_randint(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"*low", "*high", "*size", RANDOM_KW, NULL};
    PyObject *a[3 + RANDOM_NKW];
    CtFactoryOptions opt;
    int64_t sizes[CT_MAX_DIMS], low = 0, high = 0;
    if (nargs > 3) {
        PyErr_Format(PyExc_TypeError, "randint() takes at most 3 positional arguments but %zd were given", nargs);
        return NULL;
    }
    if (ct_parse_args("randint", args + nargs, 0, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    PyObject *low_obj = a[0], *high_obj = a[1], *size_obj = a[2];
    int high_pos = 0, size_pos = 0, low_pos = 0;
    PyObject *const *p = args;
    if (nargs == 3) {
        low_obj = p[0], high_obj = p[1], size_obj = p[2];
        low_pos = 1, high_pos = 2, size_pos = 3;
    } else if (nargs == 2 && size_obj != NULL) {
        low_obj = p[0], high_obj = p[1];
        low_pos = 1, high_pos = 2;
    } else if (nargs == 2) {
        high_obj = p[0], size_obj = p[1];
        high_pos = 1, size_pos = 2;
    } else if (nargs == 1 && high_obj != NULL) {
        low_obj = p[0];
        low_pos = 1;
    } else if (nargs == 1) {
        high_obj = p[0];
        high_pos = 1;
    }
    if (high_obj == NULL || size_obj == NULL) {
        PyErr_Format(PyExc_TypeError, "randint() missing required argument '%s' (expected (int high, tuple of ints "
                     "size) or (int low, int high, tuple of ints size))", high_obj == NULL ? "high" : "size");
        return NULL;
    }
    int nd = ct_parse_size_arg("randint", "size", size_pos, size_obj, sizes);
    if (nd < 0 || (low_obj != NULL && ct_int_arg("randint", "low", low_pos, low_obj, &low) < 0) ||
        ct_int_arg("randint", "high", high_pos, high_obj, &high) < 0 ||
        ct_factory_options("randint", a + 4, &opt) < 0) {
        return NULL;
    }
    CtDType dtype = opt.has_dtype ? opt.dtype : CT_I64;
    CtGeneratorObject *g = ct_generator_arg(a[3], opt.device, "randint");
    if (g == NULL) {
        return NULL;
    }
    CtTensorObject *t = ct_empty(nd, sizes, dtype, opt.device);
    if (t == NULL) {
        return NULL;
    }
    if (randint_fill(t, low, high, g) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    opt.dtype = dtype;
    return ct_factory_finish("randint", t, &opt);
}

/* randperm(n, *, generator=None, ...) */
static PyObject *py_randperm(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"n", RANDOM_KW, NULL};
    PyObject *a[1 + RANDOM_NKW];
    CtFactoryOptions opt;
    int64_t n;
    if (ct_parse_args("randperm", args, nargs, kwnames, names, 1, a) < 0 || ct_int_arg("randperm", "n", 1, a[0], &n) < 0 ||
        ct_factory_options("randperm", a + 2, &opt) < 0) {
        return NULL;
    }
    CtDType dtype = opt.has_dtype ? opt.dtype : CT_I64;
    if (dtype == CT_BOOL) {
        PyErr_SetString(PyExc_NotImplementedError, "\"randperm\" not implemented for 'Bool'");
        return NULL;
    }
    if (n < 0) {
        PyErr_Format(PyExc_RuntimeError, "Trying to create tensor with negative dimension %lld: [%lld]", (long long)n,
                     (long long)n);
        return NULL;
    }
    if (ct_is_floating(dtype)) {
        int64_t lo, hi;
        random_bounds(dtype, &lo, &hi);
        if (n > hi + 1) {
            int digits = dtype == CT_F64 ? 53 : dtype == CT_F32 ? 24 : dtype == CT_F16 ? 11 : 8;
            PyErr_Format(PyExc_RuntimeError, "n cannot be greater than 2^%d+1 for %s type.", digits,
                         ct_scalar_type_name(dtype));
            return NULL;
        }
    } else if (n > 0) {
        CtScalar last = {CT_KIND_INT, {.i = n - 1}};
        if (ct_check_scalar_fits(&last, dtype, true) < 0) {
            return NULL;
        }
    }
    CtGeneratorObject *g = ct_generator_arg(a[1], opt.device, "randperm");
    if (g == NULL) {
        return NULL;
    }
    CtTensorObject *t = ct_randperm(n, dtype, opt.device, g);
    if (t == NULL) {
        return NULL;
    }
    return ct_factory_finish("randperm", t, &opt);
}

/* rand_like / randn_like(input, *, generator=None, dtype=None, ...) */
static PyObject *rand_like_factory(const char *fname, bool normal, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    static const char *const names[] = {"input", RANDOM_KW, NULL};
    PyObject *a[1 + RANDOM_NKW];
    CtFactoryOptions opt;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 1, a) < 0 || ct_factory_options(fname, a + 2, &opt) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[0])) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' (position 1) must be Tensor, not %s", fname,
                     ct_type_name(a[0]));
        return NULL;
    }
    CtTensorObject *input = CT_TENSOR(a[0]);
    CtDType dtype = opt.has_dtype ? opt.dtype : input->dtype;
    CtDevice device = opt.has_device ? opt.device : ct_device_of(input);
    if (require_float_on(dtype, normal ? "normal_kernel_cpu" : "check_uniform_bounds", device) < 0) {
        return NULL;
    }
    CtGeneratorObject *g = ct_generator_arg(a[1], device, fname);
    if (g == NULL) {
        return NULL;
    }
    CtTensorObject *t = opt.contiguous_format ? ct_empty(input->ndim, input->sizes, dtype, device)
                                              : ct_empty_like_preserve(input, dtype, device);
    if (t == NULL) {
        return NULL;
    }
    if ((normal ? ct_normal_(t, 0.0, 1.0, g) : ct_uniform_(t, 0.0, 1.0, g)) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return ct_factory_finish(fname, t, &opt);
}

static PyObject *py_rand_like(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return rand_like_factory("rand_like", false, args, nargs, kwnames);
}
static PyObject *py_randn_like(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return rand_like_factory("randn_like", true, args, nargs, kwnames);
}

/* randint_like(input, low=0, high, *, generator=None, dtype=None, ...) */
static PyObject *py_randint_like(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "low", "high", RANDOM_KW, NULL};
    PyObject *a[3 + RANDOM_NKW];
    CtFactoryOptions opt;
    int64_t low = 0, high;
    if (ct_parse_args("randint_like", args, nargs, kwnames, names, 1, a) < 0 ||
        ct_factory_options("randint_like", a + 4, &opt) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[0])) {
        PyErr_Format(PyExc_TypeError, "randint_like(): argument 'input' (position 1) must be Tensor, not %s",
                     ct_type_name(a[0]));
        return NULL;
    }
    PyObject *low_obj = a[1], *high_obj = a[2];
    if (high_obj == NULL) { /* randint_like(input, high) */
        high_obj = low_obj;
        low_obj = NULL;
    }
    if (high_obj == NULL) {
        PyErr_SetString(PyExc_TypeError, "randint_like() missing required argument 'high'");
        return NULL;
    }
    if ((low_obj != NULL && ct_int_arg("randint_like", "low", 2, low_obj, &low) < 0) ||
        ct_int_arg("randint_like", "high", low_obj != NULL ? 3 : 2, high_obj, &high) < 0) {
        return NULL;
    }
    CtTensorObject *input = CT_TENSOR(a[0]);
    CtDType dtype = opt.has_dtype ? opt.dtype : input->dtype;
    CtDevice device = opt.has_device ? opt.device : ct_device_of(input);
    CtGeneratorObject *g = ct_generator_arg(a[3], device, "randint_like");
    if (g == NULL) {
        return NULL;
    }
    CtTensorObject *t = ct_empty_like_preserve(input, dtype, device);
    if (t == NULL) {
        return NULL;
    }
    if (randint_fill(t, low, high, g) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    opt.dtype = dtype;
    return ct_factory_finish("randint_like", t, &opt);
}

/* A contiguous tensor of shape/dtype/device holding obj (tensor broadcast, or a scalar). */
static CtTensorObject *materialize(PyObject *obj, double scalar, int nd, const int64_t *sizes, CtDType dtype,
                                   CtDevice device)
{
    CtTensorObject *t = ct_empty(nd, sizes, dtype, device);
    if (t == NULL) {
        return NULL;
    }
    int r;
    if (obj != NULL) {
        r = ct_copy_(t, CT_TENSOR(obj));
    } else {
        CtScalar s = {CT_KIND_FLOAT, {.d = scalar}};
        r = ct_numel(t) > 0 ? ct_fill_(t, &s) : 0;
    }
    if (r < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return t;
}

/* normal(mean, std, size=None, *, generator=None, out=None, dtype=None, ...): mean and std are
 * tensors or floats; two floats need size. */
static PyObject *py_normal(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"mean", "std", "size", RANDOM_KW, NULL};
    PyObject *a[3 + RANDOM_NKW];
    CtFactoryOptions opt;
    CtTensorObject *mean_t = NULL, *std_t = NULL, *out = NULL;
    PyObject *result = NULL;
    if (ct_parse_args("normal", args, nargs, kwnames, names, 1, a) < 0 ||
        ct_factory_options("normal", a + 4, &opt) < 0) {
        return NULL;
    }
    if (!opt.has_device) {
        opt.device = ct_cpu(); /* not one of PyTorch's default-device factories (it has no device of its own) */
    }
    PyObject *mean_obj = a[0], *std_obj = a[1];
    bool mean_is_t = CtTensor_Check(mean_obj), std_is_t = std_obj != NULL && CtTensor_Check(std_obj);
    double mean = 0.0, std = 1.0;
    if ((!mean_is_t && float_arg("normal", "mean", 1, mean_obj, &mean) < 0) ||
        (!std_is_t && float_arg("normal", "std", 2, std_obj, &std) < 0)) {
        return NULL;
    }
    if (!mean_is_t && !std_is_t) { /* normal(mean, std, size) */
        int64_t sizes[CT_MAX_DIMS];
        if (a[2] == NULL) {
            PyErr_SetString(PyExc_TypeError, "normal() received an invalid combination of arguments - got (float, "
                                             "float), expected a Tensor mean or std, or a size");
            return NULL;
        }
        int nd = ct_parse_size_arg("normal", "size", 3, a[2], sizes);
        if (nd < 0 || require_float_on(opt.dtype, "normal_kernel_cpu", opt.device) < 0 || check_std(std) < 0) {
            return NULL;
        }
        CtGeneratorObject *g = ct_generator_arg(a[3], opt.device, "normal");
        if (g == NULL) {
            return NULL;
        }
        out = ct_empty(nd, sizes, opt.dtype, opt.device);
        if (out == NULL || ct_normal_(out, mean, std, g) < 0) {
            goto done;
        }
        result = ct_factory_finish("normal", out, &opt);
        out = NULL;
        goto done;
    }
    /* tensor forms: the output has the broadcast shape and the promoted float dtype */
    CtTensorObject *mt = mean_is_t ? CT_TENSOR(mean_obj) : NULL, *st = std_is_t ? CT_TENSOR(std_obj) : NULL;
    CtTensorObject *first = mt != NULL ? mt : st;
    CtDType dtype = mt != NULL && st != NULL ? ct_promote_types(mt->dtype, st->dtype) : first->dtype;
    CtDevice device = ct_device_of(first);
    int64_t shape[CT_MAX_DIMS];
    int nd = first->ndim;
    memcpy(shape, first->sizes, sizeof(int64_t) * nd);
    if (mt != NULL && st != NULL) {
        CtTensorObject *pair[2] = {mt, st};
        if (ct_check_same_device(2, pair, false, &device) < 0 ||
            (nd = ct_broadcast_shapes(mt->ndim, mt->sizes, st->ndim, st->sizes, shape)) < 0) {
            return NULL;
        }
    }
    if (require_float_on(dtype, "normal_kernel_cpu", device) < 0 || (st == NULL && check_std(std) < 0)) {
        return NULL;
    }
    const struct CtRandomKernels *k = random_kernels(device);
    CtGeneratorObject *g = k != NULL ? ct_generator_arg(a[3], device, "normal") : NULL;
    if (g == NULL) {
        return NULL;
    }
    mean_t = materialize((PyObject *)mt, mean, nd, shape, dtype, device);
    std_t = mean_t != NULL ? materialize((PyObject *)st, std, nd, shape, dtype, device) : NULL;
    out = std_t != NULL ? ct_empty(nd, shape, dtype, device) : NULL;
    if (out == NULL) {
        goto done;
    }
    int64_t n = ct_numel(out);
    if (n > 0) {
        uint64_t offset = ct_generator_take(g, (uint64_t)n);
        if (k->normal_tensor(ct_data(out), ct_data(mean_t), ct_data(std_t), dtype, n, g->seed, offset, device) < 0) {
            goto done;
        }
    }
    opt.dtype = dtype;
    result = ct_factory_finish("normal", out, &opt);
    out = NULL;
done:
    Py_XDECREF(mean_t);
    Py_XDECREF(std_t);
    Py_XDECREF(out);
    return result;
}

/* bernoulli(input, p=None, *, generator=None, out=None) */
static PyObject *py_bernoulli(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "p", "*generator", "*out", NULL};
    PyObject *a[4];
    if (ct_parse_args("bernoulli", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    if (!CtTensor_Check(a[0])) {
        PyErr_Format(PyExc_TypeError, "bernoulli(): argument 'input' (position 1) must be Tensor, not %s",
                     ct_type_name(a[0]));
        return NULL;
    }
    CtTensorObject *input = CT_TENSOR(a[0]);
    CtTensorObject *out;
    if (ct_arg_out(a[3], "bernoulli", &out) < 0) {
        return NULL;
    }
    CtGeneratorObject *g = ct_generator_arg(a[2], ct_device_of(input), "bernoulli");
    if (g == NULL) {
        return NULL;
    }
    CtTensorObject *t;
    if (a[1] != NULL && a[1] != Py_None) {
        double p = 0.5;
        if (float_arg("bernoulli", "p", 2, a[1], &p) < 0) {
            return NULL;
        }
        if (!(p >= 0 && p <= 1)) {
            error_printf(PyExc_RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=%g", p);
            return NULL;
        }
        t = ct_empty_like_preserve(input, input->dtype, ct_device_of(input));
        if (t != NULL && ct_bernoulli_scalar_(t, p, g) < 0) {
            Py_CLEAR(t);
        }
    } else {
        if (require_float_on(input->dtype, "bernoulli_tensor_cpu_p_", ct_device_of(input)) < 0) {
            return NULL;
        }
        t = ct_bernoulli(input, g);
    }
    if (t == NULL) {
        return NULL;
    }
    CtFactoryOptions opt = {.out = (PyObject *)out};
    return ct_factory_finish("bernoulli", t, &opt);
}

/* ------------------------------------------------------------------------------------------
 * Python: the rejection samplers (_standard_gamma, _sample_dirichlet, poisson, binomial),
 * _standard_gamma_grad and _dirichlet_grad. Outputs are new contiguous tensors of the inputs' (broadcast) shape and
 * float dtype; float16/bfloat16 only where PyTorch's kernel takes them (poisson on the CPU,
 * everything on CUDA but _dirichlet_grad). */
typedef enum {
    SAMPLE_GAMMA,
    SAMPLE_DIRICHLET,
    SAMPLE_POISSON,
    SAMPLE_BINOMIAL,
    SAMPLE_GAMMA_GRAD,
    SAMPLE_DIRICHLET_GRAD
} SamplerOp;

/* PyTorch's dtype checks of each op (x: alpha / rate / count / self / x, y: prob / output / alpha,
 * z: total). */
static int sampler_dtypes(SamplerOp op, CtTensorObject *x, CtTensorObject *y, CtTensorObject *z, CtDevice device)
{
    static const char *const kernels[] = {"gamma_cpu",    "dirichlet",
                                          "poisson_cpu",  "binomial_cpu",
                                          "_standard_gamma_grad_cpu", "_dirichlet_grad_cpu"};
    CtDType d = x->dtype;
    if (op == SAMPLE_BINOMIAL) {
        const char *which = !ct_is_floating(d) ? "count" : !ct_is_floating(y->dtype) ? "prob" : NULL;
        if (which != NULL) {
            PyErr_Format(PyExc_ValueError, "binomial only supports floating-point dtypes for %s, got: %s", which,
                         ct_scalar_type_name(which[0] == 'c' ? d : y->dtype));
            return -1;
        }
    }
    if (require_float_on(d, kernels[op], device) < 0) {
        return -1;
    }
    CtTensorObject *other[2] = {y, z};
    for (int k = 0; k < 2; k++) {
        if (other[k] != NULL && other[k]->dtype != d) {
            PyErr_Format(PyExc_RuntimeError, "Found dtype %s but expected %s", ct_scalar_type_name(other[k]->dtype),
                         ct_scalar_type_name(d));
            return -1;
        }
    }
    bool half = d == CT_F16 || d == CT_BF16;
    if (half && (device.type == CT_DEV_CPU || op == SAMPLE_DIRICHLET_GRAD) && op != SAMPLE_POISSON) {
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", kernels[op], ct_scalar_type_name(d));
        return -1;
    }
    return 0;
}

static PyObject *sampler_call(SamplerOp op, const char *fname, CtTensorObject *x, CtTensorObject *y,
                              CtTensorObject *z, PyObject *gen_obj)
{
    CtTensorObject *xc = NULL, *yc = NULL, *zc = NULL, *out = NULL;
    PyObject *result = NULL;
    CtDevice device = ct_device_of(x);
    int64_t shape[CT_MAX_DIMS];
    int nd = x->ndim;
    memcpy(shape, x->sizes, sizeof(int64_t) * (size_t)nd);
    if (y != NULL) {
        CtTensorObject *all[3] = {x, y, z};
        if (ct_check_same_device(z != NULL ? 3 : 2, all, false, &device) < 0 ||
            (nd = ct_broadcast_shapes(x->ndim, x->sizes, y->ndim, y->sizes, shape)) < 0 ||
            (z != NULL && (nd = ct_broadcast_shapes(nd, shape, z->ndim, z->sizes, shape)) < 0)) {
            return NULL;
        }
    }
    if (sampler_dtypes(op, x, y, z, device) < 0) {
        return NULL;
    }
    const struct CtRandomKernels *k = random_kernels(device);
    CtGeneratorObject *g = NULL;
    bool random = op != SAMPLE_GAMMA_GRAD && op != SAMPLE_DIRICHLET_GRAD;
    if (k == NULL || (random && (g = ct_generator_arg(gen_obj, device, fname)) == NULL)) {
        return NULL;
    }
    CtDType dtype = x->dtype;
    xc = materialize((PyObject *)x, 0.0, nd, shape, dtype, device);
    yc = xc != NULL && y != NULL ? materialize((PyObject *)y, 0.0, nd, shape, dtype, device) : NULL;
    zc = yc != NULL && z != NULL ? materialize((PyObject *)z, 0.0, nd, shape, dtype, device) : NULL;
    out = xc != NULL && (y == NULL || yc != NULL) && (z == NULL || zc != NULL) ? ct_empty(nd, shape, dtype, device)
                                                                              : NULL;
    if (out == NULL) {
        goto done;
    }
    int64_t n = ct_numel(out);
    if (n > 0) {
        uint64_t offset = g != NULL ? ct_generator_take(g, (uint64_t)n) : 0;
        uint64_t seed = g != NULL ? g->seed : 0;
        void *o = ct_data(out), *a = ct_data(xc), *b = yc != NULL ? ct_data(yc) : NULL;
        void *c = zc != NULL ? ct_data(zc) : NULL;
        int64_t cols = nd > 0 ? shape[nd - 1] : 1;
        int rc = op == SAMPLE_GAMMA       ? k->gamma(o, a, dtype, n, seed, offset, device)
                 : op == SAMPLE_DIRICHLET ? k->dirichlet(o, a, dtype, n / cols, cols, seed, offset, device)
                 : op == SAMPLE_POISSON   ? k->poisson(o, a, dtype, n, seed, offset, device)
                 : op == SAMPLE_BINOMIAL  ? k->binomial(o, a, b, dtype, n, seed, offset, device)
                 : op == SAMPLE_GAMMA_GRAD ? k->standard_gamma_grad(o, a, b, dtype, n, device)
                                           : k->dirichlet_grad(o, a, b, c, dtype, n, device);
        if (rc < 0) {
            goto done;
        }
    }
    result = (PyObject *)out;
    out = NULL;
done:
    Py_XDECREF(xc);
    Py_XDECREF(yc);
    Py_XDECREF(zc);
    Py_XDECREF(out);
    return result;
}

/* fname(input[, other[, third]], *, generator=None): parses and runs op (names[0..2] the tensors). */
static PyObject *sampler_entry(SamplerOp op, const char *fname, const char *const *names, int ntensors,
                               PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[4] = {NULL, NULL, NULL, NULL};
    if (ct_parse_args(fname, args, nargs, kwnames, names, ntensors, a) < 0) {
        return NULL;
    }
    for (int i = 0; i < ntensors; i++) {
        if (!CtTensor_Check(a[i])) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname, names[i],
                         i + 1, ct_type_name(a[i]));
            return NULL;
        }
    }
    return sampler_call(op, fname, CT_TENSOR(a[0]), ntensors > 1 ? CT_TENSOR(a[1]) : NULL,
                        ntensors > 2 ? CT_TENSOR(a[2]) : NULL, a[ntensors]);
}

static PyObject *py_standard_gamma(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "generator", NULL};
    return sampler_entry(SAMPLE_GAMMA, "_standard_gamma", names, 1, args, nargs, kwnames);
}

static PyObject *py_sample_dirichlet(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "generator", NULL};
    return sampler_entry(SAMPLE_DIRICHLET, "_sample_dirichlet", names, 1, args, nargs, kwnames);
}

static PyObject *py_poisson(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "generator", NULL};
    return sampler_entry(SAMPLE_POISSON, "poisson", names, 1, args, nargs, kwnames);
}

static PyObject *py_binomial(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"count", "prob", "generator", NULL};
    return sampler_entry(SAMPLE_BINOMIAL, "binomial", names, 2, args, nargs, kwnames);
}

static PyObject *py_standard_gamma_grad(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "output", NULL};
    return sampler_entry(SAMPLE_GAMMA_GRAD, "_standard_gamma_grad", names, 2, args, nargs, kwnames);
}

static PyObject *py_dirichlet_grad(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"x", "alpha", "total", NULL};
    return sampler_entry(SAMPLE_DIRICHLET_GRAD, "_dirichlet_grad", names, 3, args, nargs, kwnames);
}

/* ------------------------------------------------------------------------------------------
 * Python: in-place Tensor methods */
/* The generator of an in-place method, after PyTorch's leaf check on self. */
static CtGeneratorObject *method_generator(PyObject *obj, CtTensorObject *t, const char *fname)
{
    if (ct_check_inplace_leaf(t) < 0) {
        return NULL;
    }
    return ct_generator_arg(obj, ct_device_of(t), fname);
}

/* uniform_(from=0, to=1, *, generator=None) */
static PyObject *tensor_uniform_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"from", "to", "*generator", NULL};
    PyObject *a[3];
    CtTensorObject *t = CT_TENSOR(self);
    double from = 0.0, to = 1.0;
    if (ct_parse_args("uniform_", args, nargs, kwnames, names, 0, a) < 0 ||
        float_arg("uniform_", "from", 1, a[0], &from) < 0 || float_arg("uniform_", "to", 2, a[1], &to) < 0 ||
        require_float(t->dtype, "check_uniform_bounds") < 0 || check_uniform(t->dtype, from, to) < 0) {
        return NULL;
    }
    CtGeneratorObject *g = method_generator(a[2], t, "uniform_");
    if (g == NULL || ct_uniform_(t, from, to, g) < 0) {
        return NULL;
    }
    return Py_NewRef(self);
}

/* normal_(mean=0, std=1, *, generator=None) */
static PyObject *tensor_normal_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"mean", "std", "*generator", NULL};
    PyObject *a[3];
    CtTensorObject *t = CT_TENSOR(self);
    double mean = 0.0, std = 1.0;
    if (ct_parse_args("normal_", args, nargs, kwnames, names, 0, a) < 0 ||
        float_arg("normal_", "mean", 1, a[0], &mean) < 0 || float_arg("normal_", "std", 2, a[1], &std) < 0 ||
        require_float_on(t->dtype, "normal_kernel_cpu", ct_device_of(t)) < 0 || check_std(std) < 0) {
        return NULL;
    }
    CtGeneratorObject *g = method_generator(a[2], t, "normal_");
    if (g == NULL || ct_normal_(t, mean, std, g) < 0) {
        return NULL;
    }
    return Py_NewRef(self);
}

/* random_(), random_(to), random_(from, to) with to=None meaning the top of the dtype. */
static PyObject *tensor_random_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"from", "to", "*generator", NULL};
    PyObject *a[3];
    CtTensorObject *t = CT_TENSOR(self);
    int64_t lo, hi, from = 0, to;
    if (ct_parse_args("random_", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    random_bounds(t->dtype, &lo, &hi);
    CtGeneratorObject *g = method_generator(a[2], t, "random_");
    if (g == NULL) {
        return NULL;
    }
    if (a[0] == NULL && a[1] == NULL) { /* random_(): [0, hi] */
        if (ct_random_range_(t, 0, (uint64_t)hi + 1, g) < 0) {
            return NULL;
        }
        return Py_NewRef(self);
    }
    if (nargs == 1 && a[1] == NULL) { /* random_(to) */
        if (ct_int_arg("random_", "to", 1, a[0], &to) < 0) {
            return NULL;
        }
    } else {
        if (a[0] != NULL && ct_int_arg("random_", "from", 1, a[0], &from) < 0) {
            return NULL;
        }
        if (a[1] == NULL || a[1] == Py_None) { /* [from, hi] */
            if (!ct_is_floating(t->dtype) && (from < lo || from > hi)) {
                PyErr_Format(PyExc_RuntimeError, "from is out of bounds for %s", limits_name(t->dtype));
                return NULL;
            }
            if (from > hi) {
                PyErr_Format(PyExc_RuntimeError,
                             "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to "
                             "dtype, but got from=%lld > to_inc=%lld",
                             (long long)from, (long long)hi);
                return NULL;
            }
            if (ct_random_range_(t, from, (uint64_t)hi - (uint64_t)from + 1, g) < 0) {
                return NULL;
            }
            return Py_NewRef(self);
        }
        if (ct_int_arg("random_", "to", 2, a[1], &to) < 0) {
            return NULL;
        }
    }
    if (randint_fill(t, from, to, g) < 0) {
        return NULL;
    }
    return Py_NewRef(self);
}

/* bernoulli_(p=0.5, *, generator=None): p a float or a tensor broadcastable to self. */
static PyObject *tensor_bernoulli_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"p", "*generator", NULL};
    PyObject *a[2];
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_parse_args("bernoulli_", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    CtGeneratorObject *g = method_generator(a[1], t, "bernoulli_");
    if (g == NULL) {
        return NULL;
    }
    if (a[0] != NULL && CtTensor_Check(a[0]) && CT_TENSOR(a[0])->ndim > 0) {
        CtTensorObject *p = CT_TENSOR(a[0]);
        if (require_float_on(p->dtype, "bernoulli_tensor_cpu_p_", ct_device_of(t)) < 0 ||
            bernoulli_tensor_(t, p, g) < 0) {
            return NULL;
        }
        return Py_NewRef(self);
    }
    double p = 0.5;
    if (float_arg("bernoulli_", "p", 1, a[0], &p) < 0) {
        return NULL;
    }
    if (!(p >= 0 && p <= 1)) {
        error_printf(PyExc_RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=%g", p);
        return NULL;
    }
    if (ct_bernoulli_scalar_(t, p, g) < 0) {
        return NULL;
    }
    return Py_NewRef(self);
}

/* exponential_(lambd=1, *, generator=None) */
static PyObject *tensor_exponential_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"lambd", "*generator", NULL};
    PyObject *a[2];
    CtTensorObject *t = CT_TENSOR(self);
    double lambd = 1.0;
    if (ct_parse_args("exponential_", args, nargs, kwnames, names, 0, a) < 0 ||
        float_arg("exponential_", "lambd", 1, a[0], &lambd) < 0) {
        return NULL;
    }
    if (!ct_is_floating(t->dtype)) {
        PyErr_Format(PyExc_RuntimeError,
                     "Exponential distribution is a continuous probability distribution. dtype must be a floating "
                     "point but you specified %s",
                     ct_scalar_type_name(t->dtype));
        return NULL;
    }
    if (!(lambd > 0.0)) {
        error_printf(PyExc_RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=%g", lambd);
        return NULL;
    }
    CtGeneratorObject *g = method_generator(a[1], t, "exponential_");
    if (g == NULL || ct_exponential_(t, lambd, g) < 0) {
        return NULL;
    }
    return Py_NewRef(self);
}

/* ------------------------------------------------------------------------------------------
 * Python: seeding the default generators */
static int seed_all(uint64_t seed)
{
    cpu_default->seed = seed;
    cpu_default->offset = 0;
    ct_cuda_generator_seed(-1, seed); /* torch.manual_seed also seeds every CUDA device */
    return 0;
}

/* manual_seed(seed): int(seed) seeds the CPU and every CUDA default generator. */
static PyObject *py_manual_seed(PyObject *self, PyObject *seed)
{
    PyObject *as_int = PyObject_CallOneArg((PyObject *)&PyLong_Type, seed);
    if (as_int == NULL) {
        return NULL;
    }
    uint64_t s;
    int r = seed_value(as_int, &s);
    Py_DECREF(as_int);
    if (r < 0) {
        return NULL;
    }
    seed_all(s);
    return Py_NewRef(cpu_default);
}

static PyObject *py_seed(PyObject *self, PyObject *unused)
{
    uint64_t s = nondeterministic_seed();
    seed_all(s);
    return PyLong_FromUnsignedLongLong(s);
}

static PyObject *py_initial_seed(PyObject *self, PyObject *unused)
{
    return PyLong_FromUnsignedLongLong(cpu_default->seed);
}

static PyObject *py_get_rng_state(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"device", NULL};
    PyObject *a[1];
    CtDevice device = ct_cpu();
    if (ct_parse_args("get_rng_state", args, nargs, kwnames, names, 0, a) < 0 ||
        (a[0] != NULL && !ct_device_converter(a[0], &device))) {
        return NULL;
    }
    CtGeneratorObject *g = ct_default_generator(device);
    return g != NULL ? generator_get_state((PyObject *)g, NULL) : NULL;
}

static PyObject *py_set_rng_state(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"new_state", "device", NULL};
    PyObject *a[2];
    CtDevice device = ct_cpu();
    if (ct_parse_args("set_rng_state", args, nargs, kwnames, names, 1, a) < 0 ||
        (a[1] != NULL && !ct_device_converter(a[1], &device))) {
        return NULL;
    }
    CtGeneratorObject *g = ct_default_generator(device);
    PyObject *r = g != NULL ? generator_set_state((PyObject *)g, a[0]) : NULL;
    if (r == NULL) {
        return NULL;
    }
    Py_DECREF(r);
    Py_RETURN_NONE;
}

static PyObject *py_default_generator(PyObject *self, PyObject *dev)
{
    CtDevice device;
    if (ct_device_from_object(dev, &device) < 0) {
        return NULL;
    }
    CtGeneratorObject *g = ct_default_generator(device);
    return g != NULL ? Py_NewRef(g) : NULL;
}

/* _philox4x32_10((c0, c1, c2, c3), (k0, k1)) -> the four output words (known-answer tests). */
static PyObject *py_philox(PyObject *self, PyObject *args)
{
    unsigned int c0, c1, c2, c3, k0, k1;
    if (!PyArg_ParseTuple(args, "(IIII)(II):_philox4x32_10", &c0, &c1, &c2, &c3, &k0, &k1)) {
        return NULL;
    }
    CtPhiloxBlock b = ct_philox4x32_10_raw(c0, c1, c2, c3, k0, k1);
    return Py_BuildValue("(kkkk)", (unsigned long)b.x[0], (unsigned long)b.x[1], (unsigned long)b.x[2],
                         (unsigned long)b.x[3]);
}

PyMethodDef ct_random_tensor_methods[] = {
    {"uniform_", CT_FASTCALL(tensor_uniform_), CT_METH_FK, "uniform_(from=0, to=1, *, generator=None)"},
    {"normal_", CT_FASTCALL(tensor_normal_), CT_METH_FK, "normal_(mean=0, std=1, *, generator=None)"},
    {"random_", CT_FASTCALL(tensor_random_), CT_METH_FK, "random_(from=0, to=None, *, generator=None)"},
    {"bernoulli_", CT_FASTCALL(tensor_bernoulli_), CT_METH_FK, "bernoulli_(p=0.5, *, generator=None)"},
    {"exponential_", CT_FASTCALL(tensor_exponential_), CT_METH_FK, "exponential_(lambd=1, *, generator=None)"},
    {NULL},
};

PyMethodDef ct_random_module_methods[] = {
    {"rand", CT_FASTCALL(py_rand), CT_METH_FK, "rand(*size, generator=None, dtype=None, device=None): U[0, 1)"},
    {"randn", CT_FASTCALL(py_randn), CT_METH_FK, "randn(*size, generator=None, dtype=None, device=None): N(0, 1)"},
    {"randint", CT_FASTCALL(py_randint), CT_METH_FK, "randint(low=0, high, size, generator=None, dtype=None)"},
    {"randperm", CT_FASTCALL(py_randperm), CT_METH_FK, "randperm(n, generator=None, dtype=torch.int64)"},
    {"rand_like", CT_FASTCALL(py_rand_like), CT_METH_FK, "rand_like(input, dtype=None, device=None)"},
    {"randn_like", CT_FASTCALL(py_randn_like), CT_METH_FK, "randn_like(input, dtype=None, device=None)"},
    {"randint_like", CT_FASTCALL(py_randint_like), CT_METH_FK, "randint_like(input, low=0, high, dtype=None)"},
    {"normal", CT_FASTCALL(py_normal), CT_METH_FK, "normal(mean, std, size=None, generator=None)"},
    {"bernoulli", CT_FASTCALL(py_bernoulli), CT_METH_FK, "bernoulli(input, p=None, generator=None)"},
    {"_standard_gamma", CT_FASTCALL(py_standard_gamma), CT_METH_FK,
     "_standard_gamma(input, *, generator=None): Gamma(input, 1) samples (Marsaglia-Tsang)"},
    {"_sample_dirichlet", CT_FASTCALL(py_sample_dirichlet), CT_METH_FK,
     "_sample_dirichlet(input, *, generator=None): Dirichlet samples over the last dimension"},
    {"poisson", CT_FASTCALL(py_poisson), CT_METH_FK, "poisson(input, *, generator=None): Poisson(input) samples"},
    {"binomial", CT_FASTCALL(py_binomial), CT_METH_FK,
     "binomial(count, prob, *, generator=None): Binomial(count, prob) samples"},
    {"_standard_gamma_grad", CT_FASTCALL(py_standard_gamma_grad), CT_METH_FK,
     "_standard_gamma_grad(input, output): d output / d input of Gamma(input) samples output"},
    {"_dirichlet_grad", CT_FASTCALL(py_dirichlet_grad), CT_METH_FK,
     "_dirichlet_grad(x, alpha, total): d x / d alpha of Dirichlet(alpha) components x (total = alpha's sum), "
     "over 1 - x"},
    {"manual_seed", py_manual_seed, METH_O, "manual_seed(seed): seeds every default generator"},
    {"seed", py_seed, METH_NOARGS, "seed(): seeds every default generator from the OS; returns the seed"},
    {"initial_seed", py_initial_seed, METH_NOARGS, "initial_seed(): the seed of the default CPU generator"},
    {"get_rng_state", CT_FASTCALL(py_get_rng_state), CT_METH_FK, "get_rng_state(): the default generator's state"},
    {"set_rng_state", CT_FASTCALL(py_set_rng_state), CT_METH_FK, "set_rng_state(new_state)"},
    {"_default_generator", py_default_generator, METH_O, "the default generator of a device"},
    {"_philox4x32_10", py_philox, METH_VARARGS, "Philox4x32-10 of a counter and key (tests)"},
    {NULL},
};

PyType_Slot ct_random_tensor_slots[] = {{0, NULL}};

int ct_random_init(PyObject *module)
{
    CtGenerator_Type = (PyTypeObject *)PyType_FromSpec(&generator_spec);
    if (CtGenerator_Type == NULL || PyModule_AddObjectRef(module, "Generator", (PyObject *)CtGenerator_Type) < 0) {
        return -1;
    }
    cpu_default = generator_new(ct_cpu(), CT_DEFAULT_SEED); /* kept for the life of the process */
    if (cpu_default == NULL) {
        return -1;
    }
    return PyModule_AddObjectRef(module, "default_generator", (PyObject *)cpu_default);
}
