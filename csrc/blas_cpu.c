/* blas_cpu.c: the CPU matrix-multiply engine (ct_cpu_gemm) and the run-time OpenBLAS loader.
 *
 * Paths, by dtype:
 *   f32/f64   the loaded BLAS (cblas_?gemm resolved by ct_blas_load, 32- or 64-bit ints,
 *             dimensions past the int range split into chunks), else the built-in kernel:
 *             Goto/BLIS blocking (NC x KC panel of B, MC x KC block of A, both packed), a
 *             6 x (2 vectors) register-blocked micro-kernel written with GCC vector extensions
 *             and compiled twice (AVX2+FMA via a target attribute, chosen at run time, and
 *             plain 128-bit SIMD), and up to ct_get_num_threads() pthreads on large products.
 *   f16/bf16  C is tiled; panels of A and B are widened to float32 and multiplied by the f32
 *             path into a float tile that is rounded to 16 bits once.
 *   ints/bool an exact blocked loop in a wide unsigned type (wrapping == PyTorch's integer
 *             overflow); bool is the OR of ANDs.
 * Everything below ct_cpu_gemm runs without the GIL and reports failure only as -1 (out of
 * memory); ct_cpu_gemm turns that into MemoryError once it holds the GIL again. */
#include "blas_cpu.h"
#include "dtype.h"
#include "parallel.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CT_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CT_MAX(a, b) ((a) > (b) ? (a) : (b))

/* ------------------------------------------------------------------------------------------
 * Run-time BLAS. CBLAS enums are plain ints: CblasRowMajor = 101, CblasNoTrans = 111,
 * CblasTrans = 112. */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };

typedef void (*sgemm32_fn)(int, int, int, int32_t, int32_t, int32_t, float, const float *, int32_t,
                           const float *, int32_t, float, float *, int32_t);
typedef void (*dgemm32_fn)(int, int, int, int32_t, int32_t, int32_t, double, const double *, int32_t,
                           const double *, int32_t, double, double *, int32_t);
typedef void (*sgemm64_fn)(int, int, int, int64_t, int64_t, int64_t, float, const float *, int64_t,
                           const float *, int64_t, float, float *, int64_t);
typedef void (*dgemm64_fn)(int, int, int, int64_t, int64_t, int64_t, double, const double *, int64_t,
                           const double *, int64_t, double, double *, int64_t);

typedef struct {
    void *sgemm; /* sgemm32_fn or sgemm64_fn, by int_bits */
    void *dgemm;
    int int_bits; /* 0: no library */
    int64_t int_max;
} BlasLib;

static BlasLib blas_lib;          /* written only by ct_blas_load, under the GIL */
static char blas_lib_name[128];
static int blas_force_builtin = 0;
static int64_t blas_int_limit = 0; /* test hook; 0: the library's real limit */
static int gemm_max_threads = 0;   /* 0: ct_get_num_threads() */
static double blas_max_work = 0;  /* larger products skip the library; 0: no limit */

/* Symbol spellings, tried in order. An empty suffix is 64-bit only when the library's
 * openblas_get_config() says USE64BITINT. */
static const struct {
    const char *prefix, *suffix;
    int bits;
} blas_variants[] = {
    {"scipy_", "64_", 64}, /* numpy.libs/libscipy_openblas64_*.so, scipy-openblas64 */
    {"scipy_", "", 32},    /* scipy-openblas32 */
    {"", "64_", 64},       /* OpenBLAS built with INTERFACE64=1 SYMBOLSUFFIX=64_ */
    {"", "", 32},          /* any CBLAS */
};

int ct_blas_load(const char *path)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();
        PyErr_Format(PyExc_OSError, "ctorch: cannot open the BLAS library %s: %s", path, why ? why : "unknown error");
        return -1;
    }
    for (size_t v = 0; v < sizeof(blas_variants) / sizeof(blas_variants[0]); v++) {
        const char *pre = blas_variants[v].prefix, *suf = blas_variants[v].suffix;
        char sname[64], dname[64], cname[64];
        snprintf(sname, sizeof sname, "%scblas_sgemm%s", pre, suf);
        snprintf(dname, sizeof dname, "%scblas_dgemm%s", pre, suf);
        snprintf(cname, sizeof cname, "%sopenblas_get_config%s", pre, suf);
        void *s = dlsym(handle, sname), *d = dlsym(handle, dname);
        if (s == NULL || d == NULL) {
            continue;
        }
        const char *(*get_config)(void) = (const char *(*)(void))dlsym(handle, cname);
        const char *config = get_config ? get_config() : NULL;
        int bits = blas_variants[v].bits;
        if (config != NULL && strstr(config, "USE64BITINT") != NULL) {
            bits = 64;
        }
        /* "OpenBLAS 0.3.34.481.3 DYNAMIC_ARCH ...": the second word is the version. */
        char version[32] = "";
        if (config != NULL && strncmp(config, "OpenBLAS ", 9) == 0) {
            sscanf(config + 9, "%31s", version);
        }
        if (pre[0] != '\0') {
            snprintf(blas_lib_name, sizeof blas_lib_name, "scipy-openblas%d %s", bits, version);
        } else if (config != NULL) {
            snprintf(blas_lib_name, sizeof blas_lib_name, "OpenBLAS %s%s", version, bits == 64 ? " (ILP64)" : "");
        } else {
            const char *base = strrchr(path, '/');
            snprintf(blas_lib_name, sizeof blas_lib_name, "cblas (%s)", base ? base + 1 : path);
        }
        /* The previous library stays open: another thread may be running inside it. */
        blas_lib.sgemm = s;
        blas_lib.dgemm = d;
        blas_lib.int_bits = bits;
        blas_lib.int_max = bits == 64 ? INT64_MAX : INT32_MAX;
        return 0;
    }
    dlclose(handle);
    PyErr_Format(PyExc_OSError,
                 "ctorch: %s has no sgemm/dgemm (tried scipy_cblas_sgemm64_, scipy_cblas_sgemm, "
                 "cblas_sgemm64_, cblas_sgemm)",
                 path);
    return -1;
}

const char *ct_blas_name(void)
{
    return (blas_lib.int_bits == 0 || blas_force_builtin) ? "built-in" : blas_lib_name;
}

int ct_blas_int_bits(void) { return blas_lib.int_bits; }
void ct_blas_use_builtin(int on) { blas_force_builtin = on != 0; }
void ct_blas_set_int_limit(int64_t limit) { blas_int_limit = limit > 0 ? limit : 0; }
void ct_cpu_gemm_set_max_threads(int n) { gemm_max_threads = n > 0 ? n : 0; }
double ct_blas_set_max_work(double max_work)
{
    double previous = blas_max_work;
    blas_max_work = max_work > 0 ? max_work : 0;
    return previous;
}

/* ------------------------------------------------------------------------------------------
 * Scratch memory. Packing buffers and widened panels are a few hundred KB to a few MB; a fresh
 * malloc of that size is an mmap whose pages fault in on every call, which costs more than
 * the arithmetic of a 256^3 product. A handful of freed blocks are kept for the next call.
 * The lock is only ever tried: a caller that finds it busy (or a child forked while another
 * thread held it) simply allocates. */
#define CT_SCRATCH_SLOTS 8
#define CT_SCRATCH_MAX_BYTES ((size_t)64 << 20) /* larger blocks are not kept */

static pthread_mutex_t scratch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *ptr;
    size_t bytes;
} scratch_slots[CT_SCRATCH_SLOTS];

/* 64-byte aligned memory of at least *bytes (updated to the block's real size), or NULL. */
static void *scratch_get(size_t *bytes)
{
    size_t want = (*bytes + 63) / 64 * 64;
    if (want == 0) {
        want = 64;
    }
    void *p = NULL;
    if (pthread_mutex_trylock(&scratch_lock) == 0) {
        int best = -1;
        for (int i = 0; i < CT_SCRATCH_SLOTS; i++) {
            if (scratch_slots[i].ptr != NULL && scratch_slots[i].bytes >= want &&
                (best < 0 || scratch_slots[i].bytes < scratch_slots[best].bytes)) {
                best = i;
            }
        }
        if (best >= 0) {
            p = scratch_slots[best].ptr;
            want = scratch_slots[best].bytes;
            scratch_slots[best].ptr = NULL;
        }
        pthread_mutex_unlock(&scratch_lock);
    }
    if (p == NULL) {
        p = aligned_alloc(64, want);
    }
    *bytes = want;
    return p;
}

static void scratch_put(void *p, size_t bytes)
{
    if (p == NULL) {
        return;
    }
    if (bytes <= CT_SCRATCH_MAX_BYTES && pthread_mutex_trylock(&scratch_lock) == 0) {
        int slot = -1; /* an empty slot, else the smallest block if it is smaller than this one */
        for (int i = 0; i < CT_SCRATCH_SLOTS; i++) {
            if (scratch_slots[i].ptr == NULL) {
                slot = i;
                break;
            }
            if (scratch_slots[i].bytes < bytes && (slot < 0 || scratch_slots[i].bytes < scratch_slots[slot].bytes)) {
                slot = i;
            }
        }
        if (slot >= 0) {
            void *old = scratch_slots[slot].ptr;
            scratch_slots[slot].ptr = p;
            scratch_slots[slot].bytes = bytes;
            p = old;
        }
        pthread_mutex_unlock(&scratch_lock);
    }
    free(p);
}

/* ------------------------------------------------------------------------------------------
 * Built-in f32/f64 kernel: packing. A block (mc, kc) is packed as slivers of MR rows, each
 * stored k-major: out[sliver][k][r]. A panel of B (kc, nc) as slivers of NR columns:
 * out[sliver][k][c]. Slivers at the edges are zero-padded so the micro-kernel never branches.
 * A and B point at the block's first element of op(A)/op(B). */
#define CT_DEFINE_PACK(T)                                                                           \
    static void pack_a_##T(bool ta, const void *src, int64_t lda, int64_t mc, int64_t kc, int mr, \
                           void *dst)                                                              \
    {                                                                                              \
        const T *A = (const T *)src;                                                               \
        T *out = (T *)dst;                                                                         \
        for (int64_t ir = 0; ir < mc; ir += mr, out += (int64_t)mr * kc) {                         \
            int m = (int)CT_MIN((int64_t)mr, mc - ir);                                             \
            if (ta) { /* op(A)[i][k] = A[k * lda + i]: rows of the sliver are contiguous */        \
                for (int64_t k = 0; k < kc; k++) {                                                 \
                    const T *s = A + k * lda + ir;                                                 \
                    for (int r = 0; r < m; r++) {                                                  \
                        out[k * mr + r] = s[r];                                                    \
                    }                                                                              \
                }                                                                                  \
            } else { /* op(A)[i][k] = A[i * lda + k] */                                            \
                for (int r = 0; r < m; r++) {                                                      \
                    const T *s = A + (ir + r) * lda;                                               \
                    for (int64_t k = 0; k < kc; k++) {                                             \
                        out[k * mr + r] = s[k];                                                    \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
            for (int64_t k = 0; m < mr && k < kc; k++) {                                           \
                for (int r = m; r < mr; r++) {                                                     \
                    out[k * mr + r] = 0;                                                           \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void pack_b_##T(bool tb, const void *src, int64_t ldb, int64_t kc, int64_t nc, int nr, \
                           void *dst)                                                              \
    {                                                                                              \
        const T *B = (const T *)src;                                                               \
        T *out = (T *)dst;                                                                         \
        for (int64_t jr = 0; jr < nc; jr += nr, out += (int64_t)nr * kc) {                         \
            int n = (int)CT_MIN((int64_t)nr, nc - jr);                                             \
            if (tb) { /* op(B)[k][j] = B[j * ldb + k] */                                           \
                for (int c = 0; c < n; c++) {                                                      \
                    const T *s = B + (jr + c) * ldb;                                               \
                    for (int64_t k = 0; k < kc; k++) {                                             \
                        out[k * nr + c] = s[k];                                                    \
                    }                                                                              \
                }                                                                                  \
            } else { /* op(B)[k][j] = B[k * ldb + j]: a sliver row is a contiguous run */          \
                for (int64_t k = 0; k < kc; k++) {                                                 \
                    const T *s = B + k * ldb + jr;                                                 \
                    for (int c = 0; c < n; c++) {                                                  \
                        out[k * nr + c] = s[c];                                                    \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
            for (int64_t k = 0; n < nr && k < kc; k++) {                                           \
                for (int c = n; c < nr; c++) {                                                     \
                    out[k * nr + c] = 0;                                                           \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }
CT_DEFINE_PACK(float)
CT_DEFINE_PACK(double)

/* ------------------------------------------------------------------------------------------
 * Built-in f32/f64 kernel: the micro-kernel and the macro-kernel around it.
 *
 * micro: acc (MR, NR) += packed A sliver (kc, MR) x packed B sliver (kc, NR), held in MR x NV
 * vector registers (NR = NV vectors), then C = alpha * acc + beta * C for the m x n corner
 * that is real (beta == 0: C is not read). With AVX2 that is 12 accumulators + 2 B vectors +
 * 1 broadcast = 15 of the 16 ymm registers. GCC contracts a*b+c into FMA only with
 * fp-contract=fast, which -std=c11 turns off, hence the optimize attribute (clang contracts
 * within an expression by default, and the pragma makes it explicit).
 * macro: loops the micro-kernel over one packed (mc, kc) block of A and (kc, nc) panel of B,
 * keeping one B sliver in L1 while the A slivers stream from L2. */
#if defined(__GNUC__) && !defined(__clang__)
#define CT_FP_CONTRACT __attribute__((optimize("fp-contract=fast")))
#define CT_FP_CONTRACT_BODY
#else
#define CT_FP_CONTRACT
#define CT_FP_CONTRACT_BODY _Pragma("clang fp contract(fast)")
#endif

#define CT_DEFINE_FLOAT_KERNEL(SFX, T, VB, MR, NV, ATTR)                                                  \
    typedef T vec_##SFX __attribute__((vector_size(VB)));                                                \
    ATTR static void micro_##SFX(int64_t kc, const T *restrict pa, const T *restrict pb, T *restrict c,   \
                                 int64_t ldc, int m, int n, T alpha, T beta)                             \
    {                                                                                                    \
        CT_FP_CONTRACT_BODY                                                                              \
        enum { VL = (VB) / sizeof(T), NR = VL * (NV) };                                                  \
        vec_##SFX acc[MR][NV];                                                                           \
        for (int r = 0; r < (MR); r++) {                                                                 \
            for (int v = 0; v < (NV); v++) {                                                             \
                acc[r][v] = (vec_##SFX){0};                                                              \
            }                                                                                            \
        }                                                                                                \
        for (int r = 0; r < (MR); r++) { /* C's rows arrive while the k loop runs */                   \
            __builtin_prefetch(c + r * ldc, 1);                                                          \
            __builtin_prefetch(c + r * ldc + NR - 1, 1);                                                 \
        }                                                                                                \
        for (int64_t p = 0; p < kc; p++) {                                                               \
            vec_##SFX b[NV];                                                                             \
            for (int v = 0; v < (NV); v++) {                                                             \
                memcpy(&b[v], pb + v * VL, (VB));                                                        \
            }                                                                                            \
            for (int r = 0; r < (MR); r++) {                                                             \
                const T a = pa[r];                                                                       \
                for (int v = 0; v < (NV); v++) {                                                         \
                    acc[r][v] += a * b[v];                                                               \
                }                                                                                        \
            }                                                                                            \
            pa += (MR);                                                                                  \
            pb += NR;                                                                                    \
        }                                                                                                \
        if (m == (MR) && n == NR) {                                                                      \
            for (int r = 0; r < (MR); r++) {                                                             \
                T *cr = c + r * ldc;                                                                     \
                for (int v = 0; v < (NV); v++) {                                                         \
                    vec_##SFX cv = alpha * acc[r][v];                                                    \
                    if (beta != 0) {                                                                     \
                        vec_##SFX old;                                                                   \
                        memcpy(&old, cr + v * VL, (VB));                                                 \
                        cv += beta * old;                                                                \
                    }                                                                                    \
                    memcpy(cr + v * VL, &cv, (VB));                                                      \
                }                                                                                        \
            }                                                                                            \
            return;                                                                                      \
        }                                                                                                \
        T tile[(MR) * NR]; /* acc[r][v] is row r, columns v*VL .. v*VL+VL-1 */                           \
        memcpy(tile, acc, sizeof tile);                                                                  \
        for (int r = 0; r < m; r++) {                                                                    \
            T *cr = c + r * ldc;                                                                         \
            for (int j = 0; j < n; j++) {                                                                \
                cr[j] = beta != 0 ? alpha * tile[r * NR + j] + beta * cr[j] : alpha * tile[r * NR + j];  \
            }                                                                                            \
        }                                                                                                \
    }                                                                                                    \
    ATTR static void macro_##SFX(int64_t mc, int64_t nc, int64_t kc, const void *pa_, const void *pb_,   \
                                 double alpha, double beta, void *c_, int64_t ldc)                       \
    {                                                                                                    \
        enum { NR = (VB) / sizeof(T) * (NV) };                                                           \
        const T *pa = (const T *)pa_, *pb = (const T *)pb_;                                              \
        T *c = (T *)c_;                                                                                  \
        for (int64_t jr = 0; jr < nc; jr += NR) {                                                        \
            int n = (int)CT_MIN((int64_t)NR, nc - jr);                                                   \
            for (int64_t ir = 0; ir < mc; ir += (MR)) {                                                  \
                int m = (int)CT_MIN((int64_t)(MR), mc - ir);                                             \
                micro_##SFX(kc, pa + ir * kc, pb + jr * kc, c + ir * ldc + jr, ldc, m, n, (T)alpha,      \
                            (T)beta);                                                                    \
            }                                                                                            \
        }                                                                                                \
    }

/* 128-bit vectors: SSE2 on any x86-64, NEON on aarch64 (GCC lowers them to scalars elsewhere). */
CT_DEFINE_FLOAT_KERNEL(f32_simd128, float, 16, 6, 2, CT_FP_CONTRACT)
CT_DEFINE_FLOAT_KERNEL(f64_simd128, double, 16, 6, 2, CT_FP_CONTRACT)

/* -DCT_NO_AVX2_KERNEL builds only the portable kernel (to test it on an AVX2 machine). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(CT_NO_AVX2_KERNEL)
#define CT_HAVE_AVX2_KERNEL 1
#define CT_AVX2 __attribute__((target("avx2,fma"))) CT_FP_CONTRACT
CT_DEFINE_FLOAT_KERNEL(f32_avx2, float, 32, 6, 2, CT_AVX2)
CT_DEFINE_FLOAT_KERNEL(f64_avx2, double, 32, 6, 2, CT_AVX2)
#endif

/* One row of the per-dtype, per-ISA kernel table. mc/kc/nc: cache blocking (BLIS's Zen
 * values: the packed A block fills about half of L2, a B sliver fits L1, the B panel L3). */
typedef struct {
    const char *name;
    size_t elsize;
    int mr, nr;
    int64_t mc, kc, nc;
    void (*pack_a)(bool, const void *, int64_t, int64_t, int64_t, int, void *);
    void (*pack_b)(bool, const void *, int64_t, int64_t, int64_t, int, void *);
    void (*macro)(int64_t, int64_t, int64_t, const void *, const void *, double, double, void *, int64_t);
} FloatKernel;

static const FloatKernel kernels_simd128[2] = {
    {"simd128 6x8", sizeof(float), 6, 8, 96, 256, 4080, pack_a_float, pack_b_float, macro_f32_simd128},
    {"simd128 6x4", sizeof(double), 6, 4, 72, 256, 4080, pack_a_double, pack_b_double, macro_f64_simd128},
};
#ifdef CT_HAVE_AVX2_KERNEL
static const FloatKernel kernels_avx2[2] = {
    {"avx2+fma 6x16", sizeof(float), 6, 16, 144, 256, 4080, pack_a_float, pack_b_float, macro_f32_avx2},
    {"avx2+fma 6x8", sizeof(double), 6, 8, 72, 256, 4080, pack_a_double, pack_b_double, macro_f64_avx2},
};
#endif

/* [0] float, [1] double, for this CPU. */
static const FloatKernel *float_kernels(void)
{
#ifdef CT_HAVE_AVX2_KERNEL
    static int have_avx2 = -1;
    if (have_avx2 < 0) {
        __builtin_cpu_init();
        have_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    if (have_avx2) {
        return kernels_avx2;
    }
#endif
    return kernels_simd128;
}

const char *ct_cpu_gemm_kernel_name(void) { return float_kernels()[0].name; }

/* ------------------------------------------------------------------------------------------
 * The engine's settings for one call, read under the GIL by ct_cpu_gemm so that the work
 * done without it never reads a global that ct_blas_load or a setter may be changing. */
typedef struct {
    bool use_blas;
    BlasLib lib;
    int64_t int_max;  /* the library's largest int (or the test hook's limit) */
    double blas_max_work; /* products with more multiply-adds use the built-in kernel (0: none) */
    int max_threads;  /* for the built-in kernel */
} GemmConfig;

/* ------------------------------------------------------------------------------------------
 * Built-in f32/f64 kernel: the blocked driver and its threads. */
typedef struct {
    const FloatKernel *kn;
    bool ta, tb;
    int64_t M, N, K;
    double alpha, beta;
    const char *A, *B;
    char *C;
    int64_t lda, ldb, ldc;
    void *pa, *pb; /* this job's packing buffers */
} FloatJob;

static void float_job_run(const FloatJob *j)
{
    const FloatKernel *kn = j->kn;
    const size_t es = kn->elsize;
    for (int64_t jc = 0; jc < j->N; jc += kn->nc) {
        int64_t nc = CT_MIN(kn->nc, j->N - jc);
        for (int64_t pc = 0; pc < j->K; pc += kn->kc) {
            int64_t kc = CT_MIN(kn->kc, j->K - pc);
            const char *b = j->B + es * (j->tb ? jc * j->ldb + pc : pc * j->ldb + jc);
            kn->pack_b(j->tb, b, j->ldb, kc, nc, kn->nr, j->pb);
            double beta = pc == 0 ? j->beta : 1.0; /* later K blocks accumulate */
            for (int64_t ic = 0; ic < j->M; ic += kn->mc) {
                int64_t mc = CT_MIN(kn->mc, j->M - ic);
                const char *a = j->A + es * (j->ta ? pc * j->lda + ic : ic * j->lda + pc);
                kn->pack_a(j->ta, a, j->lda, mc, kc, kn->mr, j->pa);
                kn->macro(mc, nc, kc, j->pa, j->pb, j->alpha, beta, j->C + es * (ic * j->ldc + jc), j->ldc);
            }
        }
    }
}

static void *float_job_thread(void *arg)
{
    float_job_run((const FloatJob *)arg);
    return NULL;
}

#define CT_GEMM_MAX_THREADS 64
/* Below this many multiply-adds per thread a thread costs more than it saves. */
#define CT_GEMM_WORK_PER_THREAD (1 << 21)

static int64_t round_up(int64_t x, int64_t unit) { return (x + unit - 1) / unit * unit; }

/* Built-in C = alpha op(A) op(B) + beta C for f32/f64 (M, N, K > 0). Returns 0, or -1 when
 * out of memory. C is split along its longer side into one part per thread; each thread
 * packs its own panels (the shared operand is packed once per thread, which costs
 * O(K * shorter side) per thread against O(M N K / threads) of arithmetic). */
static int float_gemm_builtin(const GemmConfig *cfg, CtDType dtype, bool ta, bool tb, int64_t M, int64_t N,
                              int64_t K, double alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                              double beta, void *C, int64_t ldc)
{
    const FloatKernel *kn = &float_kernels()[dtype == CT_F64 ? 1 : 0];
    const size_t es = kn->elsize;
    double work = (double)M * (double)N * (double)K;
    bool split_m = M >= N;
    int64_t side = split_m ? M : N, unit = split_m ? kn->mr : kn->nr;
    int64_t nthreads = CT_MIN((int64_t)CT_MIN(cfg->max_threads, CT_GEMM_MAX_THREADS), (side + unit - 1) / unit);
    if ((double)nthreads * CT_GEMM_WORK_PER_THREAD > work) {
        nthreads = CT_MAX((int64_t)1, (int64_t)(work / CT_GEMM_WORK_PER_THREAD));
    }
    FloatJob jobs[CT_GEMM_MAX_THREADS];
    pthread_t threads[CT_GEMM_MAX_THREADS];
    bool started[CT_GEMM_MAX_THREADS] = {false};
    void *buffers[CT_GEMM_MAX_THREADS] = {NULL};
    size_t buffer_bytes[CT_GEMM_MAX_THREADS] = {0};
    int rc = -1;
    const int64_t units = (side + unit - 1) / unit; /* nthreads <= units: no part is empty */
    for (int64_t t = 0; t < nthreads; t++) {
        int64_t s0 = CT_MIN(side, units * t / nthreads * unit);
        int64_t s1 = CT_MIN(side, units * (t + 1) / nthreads * unit);
        FloatJob *j = &jobs[t];
        *j = (FloatJob){kn, ta, tb, M, N, K, alpha, beta, (const char *)A, (const char *)B, (char *)C,
                        lda, ldb, ldc, NULL, NULL};
        if (split_m) {
            j->M = s1 - s0;
            j->A += es * (ta ? s0 : s0 * lda);
            j->C += es * s0 * ldc;
        } else {
            j->N = s1 - s0;
            j->B += es * (tb ? s0 * ldb : s0);
            j->C += es * s0;
        }
        /* Packing buffers sized to this job, 64-byte aligned. */
        int64_t kc = CT_MIN(kn->kc, K);
        size_t a_bytes = (size_t)round_up(round_up(CT_MIN(kn->mc, j->M), kn->mr) * kc * (int64_t)es, 64);
        size_t b_bytes = (size_t)round_up(round_up(CT_MIN(kn->nc, j->N), kn->nr) * kc * (int64_t)es, 64);
        buffer_bytes[t] = a_bytes + b_bytes;
        buffers[t] = scratch_get(&buffer_bytes[t]);
        if (buffers[t] == NULL) {
            goto done;
        }
        j->pa = buffers[t];
        j->pb = (char *)buffers[t] + a_bytes;
    }
    for (int64_t t = 1; t < nthreads; t++) {
        started[t] = pthread_create(&threads[t], NULL, float_job_thread, &jobs[t]) == 0;
    }
    for (int64_t t = 0; t < nthreads; t++) {
        if (!started[t]) { /* the caller's part, or a thread that could not be started */
            float_job_run(&jobs[t]);
        }
    }
    for (int64_t t = 1; t < nthreads; t++) {
        if (started[t]) {
            pthread_join(threads[t], NULL);
        }
    }
    rc = 0;
done:
    for (int64_t t = 0; t < nthreads; t++) {
        scratch_put(buffers[t], buffer_bytes[t]);
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * f32/f64 through the loaded BLAS. CBLAS wants lda >= max(1, columns of the stored matrix);
 * a matrix stored as one row may have any lda, and a broadcast one (lda < columns) is copied
 * first. Dimensions past the library's int range are cut into chunks; a chunk the library
 * still cannot take (a leading dimension past the range) goes to the built-in kernel. */
/* ld that CBLAS accepts for a stored (rows, cols) block whose real row stride is ld. */
static int64_t blas_ld(int64_t rows, int64_t cols, int64_t ld) { return rows <= 1 ? CT_MAX(ld, CT_MAX(cols, 1)) : ld; }

static void blas_call(const BlasLib *lib, CtDType dtype, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                      double alpha, const void *A, int64_t lda, const void *B, int64_t ldb, double beta, void *C,
                      int64_t ldc)
{
    int order = CBLAS_ROW_MAJOR, opa = ta ? CBLAS_TRANS : CBLAS_NO_TRANS, opb = tb ? CBLAS_TRANS : CBLAS_NO_TRANS;
    if (dtype == CT_F32) {
        if (lib->int_bits == 64) {
            ((sgemm64_fn)lib->sgemm)(order, opa, opb, M, N, K, (float)alpha, A, lda, B, ldb, (float)beta, C, ldc);
        } else {
            ((sgemm32_fn)lib->sgemm)(order, opa, opb, (int32_t)M, (int32_t)N, (int32_t)K, (float)alpha, A,
                                     (int32_t)lda, B, (int32_t)ldb, (float)beta, C, (int32_t)ldc);
        }
    } else {
        if (lib->int_bits == 64) {
            ((dgemm64_fn)lib->dgemm)(order, opa, opb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        } else {
            ((dgemm32_fn)lib->dgemm)(order, opa, opb, (int32_t)M, (int32_t)N, (int32_t)K, alpha, A, (int32_t)lda,
                                     B, (int32_t)ldb, beta, C, (int32_t)ldc);
        }
    }
}

/* Copies a stored (rows, cols) matrix with row stride ld into a new dense one; NULL if out of
 * memory. */
static void *dense_copy(const void *src, int64_t rows, int64_t cols, int64_t ld, size_t es)
{
    char *dst = malloc((size_t)(rows * cols) * es);
    for (int64_t r = 0; dst != NULL && r < rows; r++) {
        memcpy(dst + (size_t)(r * cols) * es, (const char *)src + (size_t)(r * ld) * es, (size_t)cols * es);
    }
    return dst;
}

static int float_gemm(const GemmConfig *cfg, CtDType dtype, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                      double alpha, const void *A, int64_t lda, const void *B, int64_t ldb, double beta, void *C,
                      int64_t ldc)
{
    if (!cfg->use_blas || (cfg->blas_max_work > 0 && (double)M * (double)N * (double)K > cfg->blas_max_work)) {
        return float_gemm_builtin(cfg, dtype, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    }
    const size_t es = dtype == CT_F64 ? sizeof(double) : sizeof(float);
    void *a_copy = NULL, *b_copy = NULL;
    int64_t a_rows = ta ? K : M, a_cols = ta ? M : K, b_rows = tb ? N : K, b_cols = tb ? K : N;
    if (a_rows > 1 && lda < a_cols && (a_copy = dense_copy(A, a_rows, a_cols, lda, es)) != NULL) {
        A = a_copy;
        lda = a_cols;
    }
    if (b_rows > 1 && ldb < b_cols && (b_copy = dense_copy(B, b_rows, b_cols, ldb, es)) != NULL) {
        B = b_copy;
        ldb = b_cols;
    }
    const int64_t lim = cfg->int_max;
    int rc = 0;
    for (int64_t i0 = 0; i0 < M && rc == 0; i0 += lim) {
        int64_t m = CT_MIN(lim, M - i0);
        for (int64_t j0 = 0; j0 < N && rc == 0; j0 += lim) {
            int64_t n = CT_MIN(lim, N - j0);
            for (int64_t k0 = 0; k0 < K && rc == 0; k0 += lim) {
                int64_t k = CT_MIN(lim, K - k0);
                double b = k0 == 0 ? beta : 1.0;
                const char *a = (const char *)A + es * (ta ? k0 * lda + i0 : i0 * lda + k0);
                const char *bb = (const char *)B + es * (tb ? j0 * ldb + k0 : k0 * ldb + j0);
                char *c = (char *)C + es * (i0 * ldc + j0);
                int64_t la = blas_ld(ta ? k : m, ta ? m : k, lda), lb = blas_ld(tb ? n : k, tb ? k : n, ldb);
                int64_t lc = blas_ld(m, n, ldc);
                if (la >= (ta ? m : k) && lb >= (tb ? k : n) && la <= lim && lb <= lim && lc <= lim) {
                    blas_call(&cfg->lib, dtype, ta, tb, m, n, k, alpha, a, la, bb, lb, b, c, lc);
                } else { /* broadcast operand we could not copy, or a stride past the int range */
                    rc = float_gemm_builtin(cfg, dtype, ta, tb, m, n, k, alpha, a, lda, bb, ldb, b, c, ldc);
                }
            }
        }
    }
    free(a_copy);
    free(b_copy);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * f16/bf16: C is cut into (TM, TN) tiles; for each, (TM, TK) panels of op(A) and (TK, TN)
 * panels of op(B) are widened to dense float32 and multiplied by the f32 path into a float
 * tile, which is rounded to 16 bits once at the end. Widening costs 1/TN + 1/TM of the
 * arithmetic. */
#define CT_HALF_TM 512
#define CT_HALF_TN 512
#define CT_HALF_TK 1024

/* The same function as ct_half_to_float / ct_bfloat16_to_float, written without branches so
 * that the loops below vectorise: a half's exponent and mantissa moved into a float's place
 * and scaled by 2^112 give every finite half exactly (subnormals included); inf/nan are
 * selected separately. */
static inline float widen_f16(uint16_t h)
{
    uint32_t em = h & 0x7fffu;
    uint32_t finite = ct_f32_to_bits(ct_bits_to_f32(em << 13) * 0x1p112f);
    uint32_t special = 0x7f800000u | ((em & 0x3ffu) << 13);
    uint32_t is_special = 0u - (uint32_t)(em >= 0x7c00u); /* a mask, not a branch */
    uint32_t u = (finite & ~is_special) | (special & is_special);
    return ct_bits_to_f32(u | ((uint32_t)(h & 0x8000u) << 16));
}
static inline float widen_bf16(uint16_t b) { return ct_bits_to_f32((uint32_t)b << 16); }

/* dst (rows, cols), dense = op(src)[r0 .., c0 ..] widened; op(src)[r][c] = src[c * ld + r]
 * if trans, else src[r * ld + c]. Reads run along src's rows either way. */
static void widen_panel(CtDType dtype, bool trans, const void *src, int64_t ld, int64_t r0, int64_t c0,
                        int64_t rows, int64_t cols, float *dst)
{
    const uint16_t *s = (const uint16_t *)src;
    const bool half = dtype == CT_F16;
    if (!trans) {
        for (int64_t r = 0; r < rows; r++) {
            const uint16_t *in = s + (r0 + r) * ld + c0;
            float *out = dst + r * cols;
            if (half) {
                for (int64_t c = 0; c < cols; c++) {
                    out[c] = widen_f16(in[c]);
                }
            } else {
                for (int64_t c = 0; c < cols; c++) {
                    out[c] = widen_bf16(in[c]);
                }
            }
        }
    } else {
        for (int64_t c = 0; c < cols; c++) {
            const uint16_t *in = s + (c0 + c) * ld + r0;
            for (int64_t r = 0; r < rows; r++) {
                dst[r * cols + c] = half ? widen_f16(in[r]) : widen_bf16(in[r]);
            }
        }
    }
}

static int half_gemm(const GemmConfig *cfg, CtDType dtype, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                     double alpha, const void *A, int64_t lda, const void *B, int64_t ldb, double beta, void *C,
                     int64_t ldc)
{
    int64_t tm = CT_MIN(M, CT_HALF_TM), tn = CT_MIN(N, CT_HALF_TN), tk = CT_MIN(K, CT_HALF_TK);
    /* One scratch block holds the three float panels, each 64-byte aligned. */
    size_t a_bytes = (size_t)round_up(tm * tk * (int64_t)sizeof(float), 64);
    size_t b_bytes = (size_t)round_up(tk * tn * (int64_t)sizeof(float), 64);
    size_t bytes = a_bytes + b_bytes + sizeof(float) * (size_t)(tm * tn);
    char *scratch = scratch_get(&bytes);
    int rc = -1;
    if (scratch == NULL) {
        goto done;
    }
    float *a32 = (float *)scratch;                       /* (tm, tk) */
    float *b32 = (float *)(scratch + a_bytes);           /* (tk, tn) */
    float *c32 = (float *)(scratch + a_bytes + b_bytes); /* (tm, tn) */
    const float fa = (float)alpha, fb = (float)beta;
    for (int64_t i0 = 0; i0 < M; i0 += tm) {
        int64_t m = CT_MIN(tm, M - i0);
        for (int64_t j0 = 0; j0 < N; j0 += tn) {
            int64_t n = CT_MIN(tn, N - j0);
            for (int64_t k0 = 0; k0 < K; k0 += tk) {
                int64_t k = CT_MIN(tk, K - k0);
                widen_panel(dtype, ta, A, lda, i0, k0, m, k, a32);
                widen_panel(dtype, tb, B, ldb, k0, j0, k, n, b32);
                if (float_gemm(cfg, CT_F32, false, false, m, n, k, 1.0, a32, k, b32, n, k0 == 0 ? 0.0 : 1.0, c32,
                               n) < 0) {
                    goto done;
                }
            }
            for (int64_t r = 0; r < m; r++) {
                uint16_t *cr = (uint16_t *)C + (i0 + r) * ldc + j0;
                const float *t = c32 + r * n;
                for (int64_t c = 0; c < n; c++) {
                    float old = 0.0f;
                    if (fb != 0.0f) { /* beta == 0: C is not read */
                        old = fb * (dtype == CT_F16 ? ct_half_to_float(cr[c]) : ct_bfloat16_to_float(cr[c]));
                    }
                    float v = fa * t[c] + old;
                    cr[c] = dtype == CT_F16 ? ct_float_to_half(v) : ct_float_to_bfloat16(v);
                }
            }
        }
    }
    rc = 0;
done:
    scratch_put(scratch, bytes);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * Integers and bool: exact, blocked. Elements are widened to an unsigned type W (uint32 for
 * widths up to 32 bits, uint64 for int64): unsigned arithmetic wraps modulo 2^w, so the low
 * bits of the result equal what wrapping arithmetic in the narrow type gives, whatever the
 * order of the additions. Packed B panel (kc, nc) and A block (mc, kc) are row-major; each
 * row of C accumulates in an nc-long W row whose inner loop the compiler vectorises. Storing
 * back into a signed type converts modulo 2^bits (GCC and clang define it so). */
#define CT_INT_MC 64
#define CT_INT_KC 256
#define CT_INT_NC 512

#define CT_DEFINE_INT_GEMM(NAME, T, W)                                                                       \
    static int int_gemm_##NAME(bool ta, bool tb, int64_t M, int64_t N, int64_t K, W alpha, W beta,          \
                               bool beta_zero, const T *A, int64_t lda, const T *B, int64_t ldb, T *C,      \
                               int64_t ldc)                                                                 \
    {                                                                                                       \
        int64_t mb = CT_MIN(M, CT_INT_MC), kb = CT_MIN(K, CT_INT_KC), nb = CT_MIN(N, CT_INT_NC);           \
        W *pa = malloc(sizeof(W) * (size_t)(mb * kb));                                                      \
        W *pb = malloc(sizeof(W) * (size_t)(kb * nb));                                                      \
        W *acc = malloc(sizeof(W) * (size_t)nb);                                                            \
        int rc = -1;                                                                                        \
        if (pa == NULL || pb == NULL || acc == NULL) {                                                      \
            goto done;                                                                                      \
        }                                                                                                   \
        for (int64_t jc = 0; jc < N; jc += nb) {                                                            \
            int64_t nc = CT_MIN(nb, N - jc);                                                                \
            for (int64_t pc = 0; pc < K; pc += kb) {                                                        \
                int64_t kc = CT_MIN(kb, K - pc);                                                            \
                for (int64_t k = 0; k < kc; k++) {                                                          \
                    for (int64_t j = 0; j < nc; j++) {                                                      \
                        pb[k * nc + j] = (W)(tb ? B[(jc + j) * ldb + pc + k] : B[(pc + k) * ldb + jc + j]); \
                    }                                                                                       \
                }                                                                                           \
                for (int64_t ic = 0; ic < M; ic += mb) {                                                    \
                    int64_t mc = CT_MIN(mb, M - ic);                                                        \
                    for (int64_t i = 0; i < mc; i++) {                                                      \
                        for (int64_t k = 0; k < kc; k++) {                                                  \
                            pa[i * kc + k] =                                                                \
                                (W)(ta ? A[(pc + k) * lda + ic + i] : A[(ic + i) * lda + pc + k]);          \
                        }                                                                                   \
                    }                                                                                       \
                    for (int64_t i = 0; i < mc; i++) {                                                      \
                        memset(acc, 0, sizeof(W) * (size_t)nc);                                             \
                        for (int64_t k = 0; k < kc; k++) {                                                  \
                            const W a = pa[i * kc + k];                                                     \
                            const W *brow = pb + k * nc;                                                    \
                            if (a == 0) {                                                                   \
                                continue;                                                                   \
                            }                                                                               \
                            for (int64_t j = 0; j < nc; j++) {                                              \
                                acc[j] += a * brow[j];                                                      \
                            }                                                                               \
                        }                                                                                   \
                        T *crow = C + (ic + i) * ldc + jc;                                                  \
                        for (int64_t j = 0; j < nc; j++) {                                                  \
                            W v = alpha * acc[j];                                                           \
                            if (pc > 0) { /* a later K block adds to what the first wrote */               \
                                v += (W)crow[j];                                                            \
                            } else if (!beta_zero) {                                                        \
                                v += beta * (W)crow[j];                                                     \
                            }                                                                               \
                            crow[j] = (T)v;                                                                 \
                        }                                                                                   \
                    }                                                                                       \
                }                                                                                           \
            }                                                                                               \
        }                                                                                                   \
        rc = 0;                                                                                             \
    done:                                                                                                   \
        free(pa);                                                                                           \
        free(pb);                                                                                           \
        free(acc);                                                                                          \
        return rc;                                                                                          \
    }
CT_DEFINE_INT_GEMM(u8, uint8_t, uint32_t)
CT_DEFINE_INT_GEMM(i8, int8_t, uint32_t)
CT_DEFINE_INT_GEMM(i16, int16_t, uint32_t)
CT_DEFINE_INT_GEMM(i32, int32_t, uint32_t)
CT_DEFINE_INT_GEMM(i64, int64_t, uint64_t)

/* bool: C = (alpha && OR_k(A & B)) || (beta && C), blocked like the integers with a byte row
 * of ORs. */
static int bool_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, bool alpha, bool beta, const bool *A,
                     int64_t lda, const bool *B, int64_t ldb, bool *C, int64_t ldc)
{
    int64_t kb = CT_MIN(K, CT_INT_KC), nb = CT_MIN(N, CT_INT_NC);
    uint8_t *pb = malloc((size_t)(kb * nb));
    uint8_t *acc = malloc((size_t)nb);
    int rc = -1;
    if (pb == NULL || acc == NULL) {
        goto done;
    }
    for (int64_t jc = 0; jc < N; jc += nb) {
        int64_t nc = CT_MIN(nb, N - jc);
        for (int64_t pc = 0; pc < K; pc += kb) {
            int64_t kc = CT_MIN(kb, K - pc);
            for (int64_t k = 0; k < kc; k++) {
                for (int64_t j = 0; j < nc; j++) {
                    pb[k * nc + j] = tb ? B[(jc + j) * ldb + pc + k] : B[(pc + k) * ldb + jc + j];
                }
            }
            for (int64_t i = 0; i < M; i++) {
                memset(acc, 0, (size_t)nc);
                for (int64_t k = 0; k < kc; k++) {
                    if (ta ? A[(pc + k) * lda + i] : A[i * lda + pc + k]) {
                        const uint8_t *brow = pb + k * nc;
                        for (int64_t j = 0; j < nc; j++) {
                            acc[j] |= brow[j];
                        }
                    }
                }
                bool *crow = C + i * ldc + jc;
                for (int64_t j = 0; j < nc; j++) {
                    bool v = alpha && acc[j];
                    crow[j] = pc > 0 ? (crow[j] || v) : (v || (beta && crow[j]));
                }
            }
        }
    }
    rc = 0;
done:
    free(pb);
    free(acc);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * C = beta * C, for alpha == 0 or K == 0 (A and B are not read) and every dtype. */
static int64_t double_to_int64(double x)
{
    if (!(x == x)) {
        return 0;
    }
    if (x >= 9223372036854775807.0) {
        return INT64_MAX;
    }
    if (x <= -9223372036854775808.0) {
        return INT64_MIN;
    }
    return (int64_t)x;
}

static void scale_c(CtDType dtype, int64_t M, int64_t N, double beta, void *C, int64_t ldc)
{
    const size_t es = ct_dtype_info[dtype].itemsize;
    if (beta == 0) { /* all-zero bits are 0 / 0.0 / false in every dtype; C is not read */
        for (int64_t i = 0; i < M; i++) {
            memset((char *)C + (size_t)(i * ldc) * es, 0, (size_t)N * es);
        }
        return;
    }
    if (beta == 1 && ct_is_floating(dtype)) {
        return;
    }
    const uint64_t ib = (uint64_t)double_to_int64(beta);
    const float fb = (float)beta;
    /* c = expression of c, over every element of the (M, N) block. */
#define CT_SCALE(T, EXPR)                                       \
    for (int64_t i = 0; i < M; i++) {                           \
        T *row = (T *)C + i * ldc;                              \
        for (int64_t j = 0; j < N; j++) {                       \
            T c = row[j];                                       \
            row[j] = (EXPR);                                    \
        }                                                       \
    }
    switch (dtype) {
    case CT_F32: CT_SCALE(float, fb * c) break;
    case CT_F64: CT_SCALE(double, beta * c) break;
    case CT_F16: CT_SCALE(ct_half, ct_float_to_half(fb * ct_half_to_float(c))) break;
    case CT_BF16: CT_SCALE(ct_bfloat16, ct_float_to_bfloat16(fb * ct_bfloat16_to_float(c))) break;
    case CT_BOOL: CT_SCALE(bool, c && ib != 0) break;
    case CT_U8: CT_SCALE(uint8_t, (uint8_t)((uint32_t)c * (uint32_t)ib)) break;
    case CT_I8: CT_SCALE(int8_t, (int8_t)((uint32_t)c * (uint32_t)ib)) break;
    case CT_I16: CT_SCALE(int16_t, (int16_t)((uint32_t)c * (uint32_t)ib)) break;
    case CT_I32: CT_SCALE(int32_t, (int32_t)((uint32_t)c * (uint32_t)ib)) break;
    case CT_I64: CT_SCALE(int64_t, (int64_t)((uint64_t)c * ib)) break;
    default: break;
    }
#undef CT_SCALE
}

/* ------------------------------------------------------------------------------------------
 * Entry. */
static int gemm_dispatch(const GemmConfig *cfg, CtDType dtype, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                         double alpha, const void *A, int64_t lda, const void *B, int64_t ldb, double beta, void *C,
                         int64_t ldc)
{
    if (K == 0 || alpha == 0) {
        scale_c(dtype, M, N, beta, C, ldc);
        return 0;
    }
    const int64_t ia = double_to_int64(alpha), ib = double_to_int64(beta);
    switch (dtype) {
    case CT_F32:
    case CT_F64:
        return float_gemm(cfg, dtype, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    case CT_F16:
    case CT_BF16:
        return half_gemm(cfg, dtype, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    case CT_BOOL:
        return bool_gemm(ta, tb, M, N, K, alpha != 0, beta != 0, A, lda, B, ldb, C, ldc);
    case CT_U8:
        return int_gemm_u8(ta, tb, M, N, K, (uint32_t)ia, (uint32_t)ib, ib == 0, A, lda, B, ldb, C, ldc);
    case CT_I8:
        return int_gemm_i8(ta, tb, M, N, K, (uint32_t)ia, (uint32_t)ib, ib == 0, A, lda, B, ldb, C, ldc);
    case CT_I16:
        return int_gemm_i16(ta, tb, M, N, K, (uint32_t)ia, (uint32_t)ib, ib == 0, A, lda, B, ldb, C, ldc);
    case CT_I32:
        return int_gemm_i32(ta, tb, M, N, K, (uint32_t)ia, (uint32_t)ib, ib == 0, A, lda, B, ldb, C, ldc);
    case CT_I64:
        return int_gemm_i64(ta, tb, M, N, K, (uint64_t)ia, (uint64_t)ib, ib == 0, A, lda, B, ldb, C, ldc);
    default:
        return 0; /* unreachable: ct_cpu_gemm checked the dtype */
    }
}

/* Products with at least this many multiply-adds run without the GIL. */
#define CT_GEMM_RELEASE_GIL_WORK 32768.0

/* The argument checks shared by ct_cpu_gemm and ct_cpu_gemm_batched: 0, or -1 with the
 * exception set. */
static int gemm_check_args(CtDType dtype, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb,
                           int64_t ldc)
{
    if ((int)dtype < 0 || dtype >= CT_NUM_DTYPES) {
        PyErr_Format(PyExc_TypeError, "ct_cpu_gemm: unknown dtype %d", (int)dtype);
        return -1;
    }
    if (M < 0 || N < 0 || K < 0) {
        PyErr_Format(PyExc_ValueError, "ct_cpu_gemm: negative size (M=%lld, N=%lld, K=%lld)", (long long)M,
                     (long long)N, (long long)K);
        return -1;
    }
    if (lda < 0 || ldb < 0 || ldc < 0 || (M > 1 && ldc < N)) {
        PyErr_Format(PyExc_ValueError,
                     "ct_cpu_gemm: bad leading dimensions lda=%lld, ldb=%lld, ldc=%lld for %s (M=%lld, N=%lld, "
                     "K=%lld); they must be >= 0 and ldc >= N",
                     (long long)lda, (long long)ldb, (long long)ldc, ct_dtype_info[dtype].name, (long long)M,
                     (long long)N, (long long)K);
        return -1;
    }
    return 0;
}

int ct_cpu_gemm(CtDType dtype, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha,
                const void *A, int64_t lda, const void *B, int64_t ldb, double beta, void *C, int64_t ldc)
{
    if (gemm_check_args(dtype, M, N, K, lda, ldb, ldc) < 0) {
        return -1;
    }
    if (M == 0 || N == 0) {
        return 0;
    }
    /* Snapshot the engine's state under the GIL: a concurrent ct_blas_load cannot change it. */
    GemmConfig cfg;
    cfg.use_blas = blas_lib.int_bits != 0 && !blas_force_builtin;
    cfg.lib = blas_lib;
    cfg.int_max = blas_int_limit > 0 ? blas_int_limit : blas_lib.int_max;
    cfg.blas_max_work = blas_max_work;
    cfg.max_threads = gemm_max_threads > 0 ? gemm_max_threads : ct_get_num_threads();
    (void)float_kernels(); /* decide the ISA under the GIL */

    double work = (double)M * (double)N * (double)K;
    PyThreadState *ts = work >= CT_GEMM_RELEASE_GIL_WORK ? PyEval_SaveThread() : NULL;
    int rc = gemm_dispatch(&cfg, dtype, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    if (ts != NULL) {
        PyEval_RestoreThread(ts);
    }
    if (rc < 0) {
        PyErr_Format(PyExc_MemoryError, "ct_cpu_gemm: out of memory for a %lldx%lldx%lld %s matmul", (long long)M,
                     (long long)N, (long long)K, ct_dtype_info[dtype].name);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * Strided batches (added for ops_linalg.c's bmm/matmul/einsum). Small products run one per
 * task on ct_parallel_for's threads, each single-threaded (cfg.max_threads = 1; a loaded
 * OpenBLAS keeps products this small on the calling thread too); larger ones run one after
 * another, each with the engine's own threads. */
/* Products up to this many multiply-adds are spread over threads batch-wise (OpenBLAS stays
 * single-threaded below 64^3). */
#define CT_GEMM_BATCH_PARALLEL_WORK 262144.0

typedef struct {
    GemmConfig cfg;
    CtDType dtype;
    bool ta, tb;
    int64_t M, N, K;
    double alpha, beta;
    const char *A, *B;
    char *C;
    int64_t lda, ldb, ldc;
    int64_t stride_a, stride_b, stride_c; /* bytes */
    int failed;                           /* set (atomically) by a task that ran out of memory */
} BatchedJob;

static void batched_run(int64_t begin, int64_t end, void *ctx)
{
    BatchedJob *j = (BatchedJob *)ctx;
    for (int64_t b = begin; b < end; b++) {
        if (gemm_dispatch(&j->cfg, j->dtype, j->ta, j->tb, j->M, j->N, j->K, j->alpha, j->A + b * j->stride_a,
                          j->lda, j->B + b * j->stride_b, j->ldb, j->beta, j->C + b * j->stride_c, j->ldc) < 0) {
            __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        }
    }
}

int ct_cpu_gemm_batched(CtDType dtype, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha,
                        const void *A, int64_t lda, int64_t stride_a, const void *B, int64_t ldb, int64_t stride_b,
                        double beta, void *C, int64_t ldc, int64_t stride_c, int64_t batch)
{
    if (batch < 0) {
        PyErr_Format(PyExc_ValueError, "ct_cpu_gemm_batched: negative batch count %lld", (long long)batch);
        return -1;
    }
    if (batch <= 1) {
        return batch == 0 ? 0 : ct_cpu_gemm(dtype, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    }
    double work = (double)M * (double)N * (double)K;
    if (work > CT_GEMM_BATCH_PARALLEL_WORK) { /* big products: the engine's threads, one after another */
        const size_t es = (dtype >= 0 && dtype < CT_NUM_DTYPES) ? ct_dtype_info[dtype].itemsize : 0;
        for (int64_t b = 0; b < batch; b++) {
            if (ct_cpu_gemm(dtype, trans_a, trans_b, M, N, K, alpha, (const char *)A + (size_t)(b * stride_a) * es,
                            lda, (const char *)B + (size_t)(b * stride_b) * es, ldb, beta,
                            (char *)C + (size_t)(b * stride_c) * es, ldc) < 0) {
                return -1;
            }
        }
        return 0;
    }
    if (gemm_check_args(dtype, M, N, K, lda, ldb, ldc) < 0) {
        return -1;
    }
    if (M == 0 || N == 0) {
        return 0;
    }
    const size_t es = ct_dtype_info[dtype].itemsize;
    BatchedJob job;
    job.cfg.use_blas = blas_lib.int_bits != 0 && !blas_force_builtin;
    job.cfg.lib = blas_lib;
    job.cfg.int_max = blas_int_limit > 0 ? blas_int_limit : blas_lib.int_max;
    job.cfg.blas_max_work = blas_max_work;
    job.cfg.max_threads = 1;
    (void)float_kernels(); /* decide the ISA under the GIL */
    job.dtype = dtype;
    job.ta = trans_a;
    job.tb = trans_b;
    job.M = M;
    job.N = N;
    job.K = K;
    job.alpha = alpha;
    job.beta = beta;
    job.A = (const char *)A;
    job.B = (const char *)B;
    job.C = (char *)C;
    job.lda = lda;
    job.ldb = ldb;
    job.ldc = ldc;
    job.stride_a = stride_a * (int64_t)es;
    job.stride_b = stride_b * (int64_t)es;
    job.stride_c = stride_c * (int64_t)es;
    job.failed = 0;
    /* Each task gets at least ~64K multiply-adds so that waking a thread pays off. */
    int64_t grain = (int64_t)(65536.0 / (work + (double)M * (double)N + 1.0)) + 1;
    PyThreadState *ts = work * (double)batch >= CT_GEMM_RELEASE_GIL_WORK ? PyEval_SaveThread() : NULL;
    ct_parallel_for(batch, grain, batched_run, &job);
    if (ts != NULL) {
        PyEval_RestoreThread(ts);
    }
    if (job.failed) {
        PyErr_Format(PyExc_MemoryError, "ct_cpu_gemm_batched: out of memory for %lld %lldx%lldx%lld %s matmuls",
                     (long long)batch, (long long)M, (long long)N, (long long)K, ct_dtype_info[dtype].name);
        return -1;
    }
    return 0;
}
