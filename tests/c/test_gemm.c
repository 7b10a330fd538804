// Build and run (from the repository root): gcc -O2 -std=c11 -Icsrc $(python3-config --includes) tests/c/test_gemm.c csrc/blas_cpu.c csrc/parallel.c -o /tmp/test_gemm $(python3-config --embed --ldflags) -ldl -lm -lpthread && /tmp/test_gemm
/* test_gemm.c: stand-alone validation of ct_cpu_gemm (csrc/blas_cpu.c) against a naive
 * reference, for every dtype, on the built-in kernel and on each BLAS library it can find
 * (scipy-openblas32, NumPy's bundled 64-bit OpenBLAS, the system's libblas.so.3; or the paths
 * given as arguments: /tmp/test_gemm lib1.so lib2.so ...). Covers empty and odd shapes,
 * shapes past every cache block and the threading threshold, all four transpose
 * combinations, padded and broadcast (lda = 0) operands, padded C, alpha/beta (beta == 0
 * with NaN in C, alpha == 0 with NaN in A), integer wrap-around, the int-range splitting
 * (through the ct_blas_set_int_limit hook) and the errors. Exits 0 when everything passes. */
#include "blas_cpu.h"
#include "dtype.h"
#include "parallel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* blas_cpu.c needs the dtype table; dtype.c (which owns it) needs the whole module. */
const CtDTypeInfo ct_dtype_info[CT_NUM_DTYPES] = {
#define CT_INFO_ROW(NAME, ctype, acctype, pyname, npy, dlc, dlb, kind) {pyname, sizeof(ctype), kind, npy, dlc, dlb},
    CT_DTYPE_LIST(CT_INFO_ROW)
#undef CT_INFO_ROW
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static double rng_uniform(void) { return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0; }

/* --- element access by dtype ---------------------------------------------------------------- */
static size_t esize(CtDType dt) { return ct_dtype_info[dt].itemsize; }

static double get_f(CtDType dt, const void *p, int64_t i)
{
    switch (dt) {
    case CT_F16: return ct_half_to_float(((const ct_half *)p)[i]);
    case CT_BF16: return ct_bfloat16_to_float(((const ct_bfloat16 *)p)[i]);
    case CT_F32: return ((const float *)p)[i];
    case CT_F64: return ((const double *)p)[i];
    default: return 0;
    }
}
static void set_f(CtDType dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case CT_F16: ((ct_half *)p)[i] = ct_float_to_half((float)v); break;
    case CT_BF16: ((ct_bfloat16 *)p)[i] = ct_float_to_bfloat16((float)v); break;
    case CT_F32: ((float *)p)[i] = (float)v; break;
    case CT_F64: ((double *)p)[i] = v; break;
    default: break;
    }
}
/* Integers as uint64 (sign-extended), bool as 0/1. */
static uint64_t get_i(CtDType dt, const void *p, int64_t i)
{
    switch (dt) {
    case CT_BOOL: return ((const bool *)p)[i];
    case CT_U8: return ((const uint8_t *)p)[i];
    case CT_I8: return (uint64_t)(int64_t)((const int8_t *)p)[i];
    case CT_I16: return (uint64_t)(int64_t)((const int16_t *)p)[i];
    case CT_I32: return (uint64_t)(int64_t)((const int32_t *)p)[i];
    case CT_I64: return (uint64_t)((const int64_t *)p)[i];
    default: return 0;
    }
}
static void set_i(CtDType dt, void *p, int64_t i, uint64_t v)
{
    switch (dt) {
    case CT_BOOL: ((bool *)p)[i] = v != 0; break;
    case CT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case CT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case CT_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case CT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case CT_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: break;
    }
}
static void set_nan(CtDType dt, void *p, int64_t i)
{
    if (ct_is_floating(dt)) {
        set_f(dt, p, i, NAN);
    } else {
        set_i(dt, p, i, 0x5a5a5a5a5a5a5a5aull); /* garbage */
    }
}
static void set_random(CtDType dt, void *p, int64_t i)
{
    if (ct_is_floating(dt)) {
        set_f(dt, p, i, rng_uniform());
    } else if (dt == CT_BOOL) {
        set_i(dt, p, i, (rng_next() >> 60) < 3); /* sparse, so that OR of ANDs is not always 1 */
    } else {
        set_i(dt, p, i, rng_next()); /* the full range: products wrap */
    }
}

/* --- one case ------------------------------------------------------------------------------ */
typedef enum { LD_TIGHT, LD_PADDED, LD_BROADCAST } LdMode;
static const char *ld_names[] = {"tight", "padded", "bcast"};

static int failures = 0, cases = 0;
static const char *path_name = "";

/* A stored (rows, cols) operand with row stride *ld: NaN/garbage in the padding; a broadcast
 * one (ld = 0) holds a single real row. */
static void *make_operand(CtDType dt, int64_t rows, int64_t cols, LdMode mode, int64_t *ld)
{
    *ld = mode == LD_TIGHT ? cols : mode == LD_PADDED ? cols + 3 : 0;
    int64_t n = mode == LD_BROADCAST ? cols : rows * *ld;
    void *p = malloc((size_t)(n + 1) * esize(dt));
    for (int64_t i = 0; i < n; i++) {
        set_nan(dt, p, i);
    }
    for (int64_t r = 0; r < (mode == LD_BROADCAST ? 1 : rows); r++) {
        for (int64_t c = 0; c < cols; c++) {
            set_random(dt, p, r * *ld + c);
        }
    }
    return p;
}

static double out_eps(CtDType dt)
{
    return dt == CT_F16 ? 0x1p-11 : dt == CT_BF16 ? 0x1p-8 : dt == CT_F32 ? 0x1p-24 : 0x1p-53;
}

/* Runs C = alpha op(A) op(B) + beta C and checks every element of C and C's padding. */
static void run_case(CtDType dt, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, double beta,
                     LdMode amode, LdMode bmode, int64_t cpad, bool nan_in_a)
{
    int64_t lda, ldb, ldc = N + cpad;
    cases++;
    void *A = make_operand(dt, ta ? K : M, ta ? M : K, amode, &lda);
    void *B = make_operand(dt, tb ? N : K, tb ? K : N, bmode, &ldb);
    if (nan_in_a && (ta ? K : M) > 0) { /* alpha == 0: A must not be read (NaN in its first row) */
        for (int64_t i = 0; i < (ta ? M : K); i++) {
            set_nan(dt, A, i);
        }
    }
    int64_t cn = M * ldc;
    void *C = malloc((size_t)(cn + 1) * esize(dt));
    void *C0 = malloc((size_t)(cn + 1) * esize(dt));
    for (int64_t i = 0; i < cn; i++) {
        if (beta == 0 || (i % ldc) >= N) {
            set_nan(dt, C, i); /* beta == 0: C must not be read; padding must not be written */
        } else {
            set_random(dt, C, i);
        }
    }
    memcpy(C0, C, (size_t)cn * esize(dt));
#define OPA(i, k) ((ta ? (k) * lda + (i) : (i) * lda + (k)))
#define OPB(k, j) ((tb ? (j) * ldb + (k) : (k) * ldb + (j)))
    if (ct_cpu_gemm(dt, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) != 0) {
        PyErr_Print();
        failures++;
        goto done;
    }
    int bad = 0;
    for (int64_t i = 0; i < M && bad < 3; i++) {
        for (int64_t j = 0; j < ldc && bad < 3; j++) {
            int64_t ci = i * ldc + j;
            if (j >= N) {
                if (memcmp((char *)C + ci * esize(dt), (char *)C0 + ci * esize(dt), esize(dt)) != 0) {
                    printf("  padding of C written at (%lld, %lld)\n", (long long)i, (long long)j);
                    bad++;
                }
                continue;
            }
            if (ct_is_floating(dt)) {
                long double s = 0, mag = 0;
                for (int64_t k = 0; alpha != 0 && k < K; k++) {
                    long double p = (long double)get_f(dt, A, OPA(i, k)) * get_f(dt, B, OPB(k, j));
                    s += p;
                    mag += fabsl(p);
                }
                long double c0 = beta != 0 ? (long double)beta * get_f(dt, C0, ci) : 0;
                long double ref = (long double)alpha * s + c0;
                mag = fabsl((long double)alpha) * mag + fabsl(c0);
                double acc_eps = dt == CT_F64 ? 0x1p-53 : 0x1p-24;
                double tol = (out_eps(dt) + acc_eps * (double)(K + 2)) * (double)mag + 1e-300;
                double got = get_f(dt, C, ci);
                if (!(fabs(got - (double)ref) <= tol)) {
                    printf("  C[%lld, %lld] = %.9g, expected %.9g (tol %.3g)\n", (long long)i, (long long)j, got,
                           (double)ref, tol);
                    bad++;
                }
            } else if (dt == CT_BOOL) {
                bool any = false;
                for (int64_t k = 0; alpha != 0 && k < K; k++) {
                    any = any || (get_i(dt, A, OPA(i, k)) && get_i(dt, B, OPB(k, j)));
                }
                bool ref = (alpha != 0 && any) || (beta != 0 && get_i(dt, C0, ci));
                if ((bool)get_i(dt, C, ci) != ref) {
                    printf("  C[%lld, %lld] = %d, expected %d\n", (long long)i, (long long)j,
                           (int)get_i(dt, C, ci), (int)ref);
                    bad++;
                }
            } else { /* exact: wrapping sum of products in 128 bits, then the dtype's low bits */
                unsigned __int128 s = 0;
                for (int64_t k = 0; alpha != 0 && k < K; k++) {
                    s += (unsigned __int128)get_i(dt, A, OPA(i, k)) * get_i(dt, B, OPB(k, j));
                }
                unsigned __int128 ref = (unsigned __int128)(uint64_t)(int64_t)alpha * s;
                if (beta != 0) {
                    ref += (unsigned __int128)(uint64_t)(int64_t)beta * get_i(dt, C0, ci);
                }
                int bits = (int)ct_dtype_info[dt].itemsize * 8;
                uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
                uint64_t got = get_i(dt, C, ci) & mask, want = (uint64_t)ref & mask;
                if (got != want) {
                    printf("  C[%lld, %lld] = %llu, expected %llu\n", (long long)i, (long long)j,
                           (unsigned long long)got, (unsigned long long)want);
                    bad++;
                }
            }
        }
    }
    if (bad) {
        failures++;
        printf("FAIL [%s] %s ta=%d tb=%d M=%lld N=%lld K=%lld alpha=%g beta=%g A:%s B:%s cpad=%lld\n", path_name,
               ct_dtype_info[dt].name, ta, tb, (long long)M, (long long)N, (long long)K, alpha, beta,
               ld_names[amode], ld_names[bmode], (long long)cpad);
    }
done:
#undef OPA
#undef OPB
    free(A);
    free(B);
    free(C);
    free(C0);
}

/* --- the suite ----------------------------------------------------------------------------- */
static const int64_t small_shapes[][3] = {
    {1, 1, 1},  {0, 5, 3},  {5, 0, 3},  {5, 3, 0},   {0, 0, 0},  {1, 7, 1},   {7, 1, 9},   {2, 3, 4},
    {6, 16, 8}, {7, 17, 9}, {5, 15, 3}, {13, 9, 31}, {1, 33, 2}, {31, 1, 40}, {17, 33, 65},
};
static const int64_t large_shapes[][3] = {
    {6, 16, 256},    /* exactly one micro-tile, one K block */
    {150, 70, 300},  /* past MC and KC */
    {97, 101, 103},  /* odd everywhere */
    {9, 4100, 5},    /* past NC */
    {300, 290, 270}, /* threads */
    {3, 400, 520},   /* threads along N, short M */
    {600, 40, 1100}, /* f16 tiles: several M tiles and K tiles */
};

static void run_suite(bool full)
{
    static const double float_ab[][2] = {{1, 0}, {1, 1}, {2.5, -0.5}, {-1, 0}};
    static const double int_ab[][2] = {{1, 0}, {1, 1}, {3, -2}, {-1, 0}};
    for (int d = 0; d < CT_NUM_DTYPES; d++) {
        CtDType dt = (CtDType)d;
        const double(*ab)[2] = ct_is_floating(dt) ? float_ab : int_ab;
        int n0 = failures;
        int which = 0;
        for (size_t s = 0; s < sizeof(small_shapes) / sizeof(small_shapes[0]); s++) {
            for (int t = 0; t < 4; t++) {
                for (int a = 0; a < 4; a++, which++) {
                    const int64_t *sh = small_shapes[s];
                    run_case(dt, t & 1, t >> 1, sh[0], sh[1], sh[2], ab[a][0], ab[a][1], (LdMode)(which % 3),
                             (LdMode)((which / 3) % 3), which % 2 ? 2 : 0, false);
                }
            }
            /* alpha == 0 reads neither A nor B (NaN in A); beta keeps C. */
            run_case(dt, false, false, small_shapes[s][0], small_shapes[s][1], small_shapes[s][2], 0.0, ab[2][1],
                     LD_TIGHT, LD_TIGHT, 0, true);
        }
        for (size_t s = 0; full && s < sizeof(large_shapes) / sizeof(large_shapes[0]); s++) {
            const int64_t *sh = large_shapes[s];
            if (ct_is_integral(dt, true) && sh[0] * sh[1] * sh[2] > 2000000) {
                continue; /* the 128-bit reference is slow; the integer path has no size-dependent logic past this */
            }
            for (int t = 0; t < 4; t += (dt == CT_F32 || dt == CT_F64) ? 1 : 3, which++) {
                run_case(dt, t & 1, t >> 1, sh[0], sh[1], sh[2], ab[2][0], ab[which % 2 ? 2 : 0][1],
                         which % 4 == 3 ? LD_PADDED : LD_TIGHT, which % 5 == 4 ? LD_BROADCAST : LD_TIGHT,
                         which % 2, false);
            }
        }
        printf("  [%s] %-8s %s\n", path_name, ct_dtype_info[dt].name, failures == n0 ? "ok" : "FAILED");
        fflush(stdout);
    }
    /* M == 1 with an arbitrary ldc (the one row's stride does not matter). */
    for (int d = 0; d < CT_NUM_DTYPES; d++) {
        int64_t lda, ldb;
        CtDType dt = (CtDType)d;
        void *A = make_operand(dt, 1, 40, LD_TIGHT, &lda), *B = make_operand(dt, 40, 24, LD_TIGHT, &ldb);
        void *C = calloc(24, esize(dt)), *C2 = calloc(24, esize(dt));
        cases++;
        if (ct_cpu_gemm(dt, false, false, 1, 24, 40, 1.0, A, lda, B, ldb, 0.0, C, 0) != 0 ||
            ct_cpu_gemm(dt, false, false, 1, 24, 40, 1.0, A, 0, B, ldb, 0.0, C2, 24) != 0 ||
            memcmp(C, C2, 24 * esize(dt)) != 0) {
            PyErr_Clear();
            printf("FAIL [%s] %s M == 1 with ldc = 0\n", path_name, ct_dtype_info[dt].name);
            failures++;
        }
        free(A);
        free(B);
        free(C);
        free(C2);
    }
}

/* Dimensions past the library's int range are split (the limit is lowered to 7 here), and a
 * chunk whose leading dimension is past it goes to the built-in kernel. */
static void run_split_suite(void)
{
    static const int64_t shapes[][3] = {{20, 5, 16}, {15, 7, 23}, {8, 6, 9}, {1, 30, 3}, {19, 3, 1}, {30, 30, 30}};
    static const CtDType dts[] = {CT_F32, CT_F64, CT_F16};
    ct_blas_set_int_limit(7);
    int n0 = failures;
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        for (size_t d = 0; d < 3; d++) {
            for (int t = 0; t < 4; t++) {
                run_case(dts[d], t & 1, t >> 1, shapes[s][0], shapes[s][1], shapes[s][2], 1.5, t == 2 ? 0.0 : -1.0,
                         LD_TIGHT, t == 3 ? LD_BROADCAST : LD_TIGHT, 0, false);
            }
        }
    }
    ct_blas_set_int_limit(0);
    printf("  [%s] int-range splitting %s\n", path_name, failures == n0 ? "ok" : "FAILED");
}

static void expect_error(const char *what, int rc, PyObject *type)
{
    cases++;
    if (rc != -1 || !PyErr_ExceptionMatches(type)) {
        printf("FAIL %s: expected %s\n", what, ((PyTypeObject *)type)->tp_name);
        failures++;
    } else if (getenv("VERBOSE")) {
        PyObject *t, *v, *tb;
        PyErr_Fetch(&t, &v, &tb);
        PyObject *s = PyObject_Str(v);
        printf("  %s -> %s\n", what, PyUnicode_AsUTF8(s));
        Py_XDECREF(s);
        PyErr_Restore(t, v, tb);
    }
    PyErr_Clear();
}

static void run_error_suite(void)
{
    float a[4] = {0}, b[4] = {0}, c[4] = {0};
    expect_error("negative lda", ct_cpu_gemm(CT_F32, false, false, 2, 2, 2, 1, a, -1, b, 2, 0, c, 2),
                 PyExc_ValueError);
    expect_error("ldc < N", ct_cpu_gemm(CT_F32, false, false, 2, 2, 2, 1, a, 2, b, 2, 0, c, 1), PyExc_ValueError);
    expect_error("negative M", ct_cpu_gemm(CT_F32, false, false, -1, 2, 2, 1, a, 2, b, 2, 0, c, 2),
                 PyExc_ValueError);
    expect_error("bad dtype", ct_cpu_gemm((CtDType)99, false, false, 1, 1, 1, 1, a, 1, b, 1, 0, c, 1),
                 PyExc_TypeError);
    const char *before = ct_blas_name();
    char saved[128];
    snprintf(saved, sizeof saved, "%s", before);
    expect_error("load of a missing file", ct_blas_load("/nonexistent/libopenblas.so"), PyExc_OSError);
    expect_error("load of a library without gemm", ct_blas_load("libm.so.6"), PyExc_OSError);
    cases++;
    if (strcmp(saved, ct_blas_name()) != 0) {
        printf("FAIL a failed load changed the engine: %s -> %s\n", saved, ct_blas_name());
        failures++;
    }
}

/* Library paths from Python: scipy-openblas32 and NumPy's bundled OpenBLAS. */
static int python_path(const char *code, char *out, size_t n)
{
    PyObject *main = PyImport_AddModule("__main__"), *g = PyModule_GetDict(main);
    PyObject *r = PyRun_String(code, Py_eval_input, g, g);
    if (r == NULL || !PyUnicode_Check(r)) {
        PyErr_Clear();
        Py_XDECREF(r);
        return -1;
    }
    snprintf(out, n, "%s", PyUnicode_AsUTF8(r));
    Py_DECREF(r);
    return 0;
}

int main(int argc, char **argv)
{
    Py_Initialize();
    char paths[8][1024];
    int npaths = 0;
    for (int i = 1; i < argc && npaths < 8; i++) {
        snprintf(paths[npaths++], sizeof paths[0], "%s", argv[i]);
    }
    if (argc == 1) {
        if (python_path("__import__('scipy_openblas32').get_library() and "
                        "__import__('os').path.join(__import__('scipy_openblas32').get_lib_dir(), "
                        "'lib' + __import__('scipy_openblas32').get_library() + '.so')",
                        paths[npaths], sizeof paths[0]) == 0) {
            npaths++;
        }
        if (python_path("__import__('glob').glob(__import__('os').path.join(__import__('os').path.dirname("
                        "__import__('numpy').__file__), '..', 'numpy.libs', 'libscipy_openblas*.so'))[0]",
                        paths[npaths], sizeof paths[0]) == 0) {
            npaths++;
        }
        snprintf(paths[npaths++], sizeof paths[0], "libblas.so.3");
    }
    printf("built-in kernel: %s, threads: %d\n", ct_cpu_gemm_kernel_name(), ct_get_num_threads());
    path_name = "built-in";
    run_suite(true);
    run_error_suite();
    for (int p = 0; p < npaths; p++) {
        if (ct_blas_load(paths[p]) != 0) {
            PyErr_Print();
            printf("SKIP %s\n", paths[p]);
            continue;
        }
        path_name = ct_blas_name();
        printf("%s (%s), %d-bit ints\n", path_name, paths[p], ct_blas_int_bits());
        run_suite(true);
        run_split_suite();
        ct_blas_use_builtin(1);
        cases++;
        if (strcmp(ct_blas_name(), "built-in") != 0) {
            printf("FAIL ct_blas_use_builtin(1) left %s\n", ct_blas_name());
            failures++;
        }
        ct_blas_use_builtin(0);
    }
    printf("%d cases, %d failures\n", cases, failures);
    return failures != 0;
}
