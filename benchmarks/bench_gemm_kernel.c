// Build and run (from the repository root): gcc -O3 -std=c11 -Icsrc $(python3-config --includes) benchmarks/bench_gemm_kernel.c csrc/blas_cpu.c csrc/parallel.c -o /tmp/bench_gemm $(python3-config --embed --ldflags) -ldl -lm -lpthread && /tmp/bench_gemm
/* bench_gemm_kernel.c: stand-alone benchmark of ct_cpu_gemm (csrc/blas_cpu.c). For each square
 * size it first checks the built-in kernel against the BLAS (or a naive loop when no BLAS
 * loads), then times, after a warm-up, the median of 11 runs of: float32/float64/float16
 * through scipy-openblas32, float32 on the built-in kernel on 1 and on all threads,
 * float64/float16 on the built-in kernel, and NumPy's matmul in the same process (float32
 * arrays, NumPy's own bundled OpenBLAS). Reports ms and GFLOP/s (2 M N K / time).
 * Sizes: the arguments (default 256 512 1024 2048). */
#include "blas_cpu.h"
#include "dtype.h"
#include "parallel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* blas_cpu.c needs the dtype table; dtype.c (which owns it) needs the whole module. */
const CtDTypeInfo ct_dtype_info[CT_NUM_DTYPES] = {
#define CT_INFO_ROW(NAME, ctype, acctype, pyname, npy, dlc, dlb, kind) {pyname, sizeof(ctype), kind, npy, dlc, dlb},
    CT_DTYPE_LIST(CT_INFO_ROW)
#undef CT_INFO_ROW
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median seconds of one n x n x n gemm of dtype, after warming up for a quarter of a second
 * (the clock ramps up and malloc settles over the first few calls). */
static double time_gemm(CtDType dt, int64_t n, const void *A, const void *B, void *C)
{
    enum { REPS = 11 };
    double t[REPS];
    for (double t0 = now(), t1 = t0; t1 - t0 < 0.25; t1 = now()) {
        if (ct_cpu_gemm(dt, false, false, n, n, n, 1.0, A, n, B, n, 0.0, C, n) != 0) {
            PyErr_Print();
            exit(1);
        }
    }
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        ct_cpu_gemm(dt, false, false, n, n, n, 1.0, A, n, B, n, 0.0, C, n);
        t[r] = now() - t0;
    }
    qsort(t, REPS, sizeof(double), cmp_double);
    return t[REPS / 2];
}

static void report(const char *what, int64_t n, double secs)
{
    printf("  %-34s %9.3f ms %8.1f GFLOP/s\n", what, secs * 1e3, 2.0 * n * n * n / secs * 1e-9);
}

int main(int argc, char **argv)
{
    Py_Initialize();
    int64_t sizes[16] = {256, 512, 1024, 2048};
    int nsizes = 4;
    if (argc > 1) {
        nsizes = 0;
        for (int i = 1; i < argc && nsizes < 16; i++) {
            sizes[nsizes++] = atoll(argv[i]);
        }
    }
    PyObject *g = PyModule_GetDict(PyImport_AddModule("__main__"));
    PyObject *path = PyRun_String("__import__('os').path.join(__import__('scipy_openblas32').get_lib_dir(), "
                                  "'lib' + __import__('scipy_openblas32').get_library() + '.so')",
                                  Py_eval_input, g, g);
    int have_blas = path != NULL && ct_blas_load(PyUnicode_AsUTF8(path)) == 0;
    if (!have_blas) {
        PyErr_Print();
    }
    Py_XDECREF(path);
    char cpu[128] = "unknown CPU", line[256];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':') != NULL) {
            snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
            cpu[strcspn(cpu, "\n")] = '\0';
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    printf("ctorch gemm benchmark on %s: BLAS %s, built-in kernel %s, %d threads\n", cpu, ct_blas_name(),
           ct_cpu_gemm_kernel_name(), ct_get_num_threads());
    PyRun_SimpleString("import numpy as np, time\n"
                       "cfg = np.show_config(mode='dicts')['Build Dependencies']['blas']\n"
                       "print('numpy', np.__version__, cfg.get('name'), cfg.get('version'))\n");
    PyRun_SimpleString("import sys; sys.stdout.flush()");
    for (int s = 0; s < nsizes; s++) {
        int64_t n = sizes[s];
        float *A = malloc(sizeof(float) * n * n), *B = malloc(sizeof(float) * n * n);
        float *C = malloc(sizeof(float) * n * n), *R = malloc(sizeof(float) * n * n);
        ct_half *Ah = malloc(2 * n * n), *Bh = malloc(2 * n * n), *Ch = malloc(2 * n * n);
        for (int64_t i = 0; i < n * n; i++) {
            A[i] = (float)((i * 7919 % 2001) - 1000) / 1000.0f;
            B[i] = (float)((i * 104729 % 1999) - 999) / 999.0f;
            Ah[i] = ct_float_to_half(A[i]);
            Bh[i] = ct_float_to_half(B[i]);
        }
        printf("M = N = K = %lld\n", (long long)n);
        /* Validate the built-in kernel against the BLAS, or a naive loop without one. */
        ct_blas_use_builtin(1);
        ct_cpu_gemm(CT_F32, false, false, n, n, n, 1.0, A, n, B, n, 0.0, C, n);
        ct_blas_use_builtin(0);
        if (have_blas) {
            ct_cpu_gemm(CT_F32, false, false, n, n, n, 1.0, A, n, B, n, 0.0, R, n);
        } else {
            for (int64_t i = 0; i < n; i++) {
                for (int64_t j = 0; j < n; j++) {
                    double acc = 0;
                    for (int64_t k = 0; k < n; k++) {
                        acc += (double)A[i * n + k] * B[k * n + j];
                    }
                    R[i * n + j] = (float)acc;
                }
            }
        }
        double maxerr = 0;
        for (int64_t i = 0; i < n * n; i++) {
            maxerr = fmax(maxerr, fabs((double)C[i] - R[i]));
        }
        printf("  built-in vs %s: max |diff| = %.3g %s\n", have_blas ? "BLAS" : "naive", maxerr,
               maxerr < 1e-5 * n ? "(ok)" : "(MISMATCH)");
        double *Ad = malloc(sizeof(double) * n * n), *Bd = malloc(sizeof(double) * n * n);
        double *Cd = malloc(sizeof(double) * n * n);
        for (int64_t i = 0; i < n * n; i++) {
            Ad[i] = A[i];
            Bd[i] = B[i];
        }
        if (have_blas) {
            report("float32 scipy-openblas32", n, time_gemm(CT_F32, n, A, B, C));
            report("float64 scipy-openblas32", n, time_gemm(CT_F64, n, Ad, Bd, Cd));
            report("float16 scipy-openblas32 (widened)", n, time_gemm(CT_F16, n, Ah, Bh, Ch));
        }
        ct_blas_use_builtin(1);
        ct_cpu_gemm_set_max_threads(1);
        report("float32 built-in, 1 thread", n, time_gemm(CT_F32, n, A, B, C));
        ct_cpu_gemm_set_max_threads(0);
        report("float32 built-in, all threads", n, time_gemm(CT_F32, n, A, B, C));
        report("float64 built-in, all threads", n, time_gemm(CT_F64, n, Ad, Bd, Cd));
        report("float16 built-in, all threads", n, time_gemm(CT_F16, n, Ah, Bh, Ch));
        ct_blas_use_builtin(0);
        free(Ad);
        free(Bd);
        free(Cd);
        char code[512];
        snprintf(code, sizeof code,
                 "a = np.random.default_rng(0).standard_normal((%lld, %lld), dtype=np.float32)\n"
                 "b = np.random.default_rng(1).standard_normal((%lld, %lld), dtype=np.float32)\n"
                 "t0 = time.perf_counter()\n"
                 "while time.perf_counter() - t0 < 0.25: a @ b\n"
                 "ts = []\n"
                 "for _ in range(11):\n"
                 "    t0 = time.perf_counter(); a @ b; ts.append(time.perf_counter() - t0)\n"
                 "t = sorted(ts)[5]\n"
                 "print('  %%-34s %%9.3f ms %%8.1f GFLOP/s' %% ('float32 numpy', t * 1e3, 2 * %lld**3 / t * 1e-9))\n",
                 (long long)n, (long long)n, (long long)n, (long long)n, (long long)n);
        fflush(stdout);
        PyRun_SimpleString(code);
        PyRun_SimpleString("import sys; sys.stdout.flush()");
        free(A);
        free(B);
        free(C);
        free(R);
        free(Ah);
        free(Bh);
        free(Ch);
    }
    return 0;
}
