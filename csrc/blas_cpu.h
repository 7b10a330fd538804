/* blas_cpu.h: the CPU matrix-multiply engine behind mm/bmm/matmul/addmm/linear.
 *
 * f32/f64 go to an OpenBLAS opened at run time with dlopen (nothing links a BLAS at build
 * time); without one, or when forced, they go to a built-in blocked kernel (packed panels,
 * a register-blocked vector micro-kernel chosen at run time for AVX2+FMA or plain SIMD,
 * cache blocking and a few threads). f16/bf16 are widened to float32 panel by panel and
 * accumulated in float. Integer and bool dtypes use an exact blocked loop that wraps like
 * PyTorch's integer arithmetic. See blas_cpu.c. */
#ifndef CTORCH_BLAS_CPU_H
#define CTORCH_BLAS_CPU_H

#include "ctorch.h"

/* Opens the shared library at path and resolves its sgemm/dgemm, trying in order
 * scipy_cblas_?gemm64_ (NumPy's bundled OpenBLAS, 64-bit ints), scipy_cblas_?gemm
 * (scipy-openblas32), cblas_?gemm64_ and plain cblas_?gemm (64-bit ints only when the
 * library's openblas_get_config() says USE64BITINT). Returns 0, or -1 with OSError set; on
 * failure the engine keeps whatever it used before. A library replaced by a later call is
 * never closed (a call on another thread may still be inside it). Call with the GIL held. */
int ct_blas_load(const char *path);

/* What f32/f64 matmuls run on now: e.g. "scipy-openblas32 0.3.34", "OpenBLAS 0.3.26",
 * "cblas (libblas.so.3)", or "built-in" when no library is loaded or the fallback is forced.
 * A static string, valid until the next ct_blas_load. */
const char *ct_blas_name(void);

/* The loaded library's integer width in bits (32 or 64), or 0 when none is loaded. */
int ct_blas_int_bits(void);

/* on != 0 forces the built-in kernels even when a library is loaded (for tests and
 * benchmarks); 0 goes back to the library. */
void ct_blas_use_builtin(int on);

/* Row-major C = alpha * op(A) @ op(B) + beta * C, with op(X) = X^T when trans_X.
 *   op(A): (M, K); A is (M, K) with row stride lda, or (K, M) with row stride lda if trans_a
 *   op(B): (K, N); B is (K, N) with row stride ldb, or (N, K) with row stride ldb if trans_b
 *   C:     (M, N) with row stride ldc
 * Every matrix has unit stride along its rows: callers with any other layout make it
 * contiguous first (or swap roles: C^T = B^T A^T). lda/ldb/ldc are in elements and must be
 * >= 0; lda/ldb may be smaller than a row (0 for a broadcast matrix); ldc >= N unless M == 1.
 *
 * All ten dtypes. alpha/beta are cast to the computation type: float for f16/bf16/f32,
 * double for f64; for integer dtypes they are truncated to int64 (pass integral values) and
 * the result wraps modulo 2^bits exactly as repeated integer multiply-adds would; for bool
 * the result is (alpha && any_k(A & B)) || (beta && C), alpha/beta counting when nonzero.
 * When beta == 0, C is not read (it may hold NaN); when alpha == 0 or K == 0, A and B are not
 * read (BLAS semantics).
 * Returns 0, or -1 with a Python exception set (ValueError for bad leading dimensions,
 * MemoryError). Call with the GIL held; large products release it while they run (A, B and
 * C must stay alive; C must not overlap A or B). */
int ct_cpu_gemm(CtDType dtype, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha,
                const void *A, int64_t lda, const void *B, int64_t ldb, double beta, void *C, int64_t ldc);

/* ct_cpu_gemm over `batch` products: matrix b of X is X + b * stride_X elements (strides may be
 * 0 for an operand shared by every product; C's must keep the products apart). Small products
 * run one per task on the ct_parallel_for threads, larger ones one after another with the
 * engine's threads. Same conventions, errors and GIL rules as ct_cpu_gemm. */
int ct_cpu_gemm_batched(CtDType dtype, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha,
                        const void *A, int64_t lda, int64_t stride_a, const void *B, int64_t ldb, int64_t stride_b,
                        double beta, void *C, int64_t ldc, int64_t stride_c, int64_t batch);

/* f32/f64 products of more than max_work multiply-adds (M*N*K) run on the built-in kernel even
 * when a library is loaded; 0 (the default) sends every size to the library. Returns the
 * previous limit. ops_linalg.c sets it when it loads OpenBLAS (the size where the library's
 * own threads start to lose to the built-in kernel here). */
double ct_blas_set_max_work(double max_work);

/* --- tuning and test hooks ----------------------------------------------------------------- */
/* The built-in f32 kernel in use, e.g. "avx2+fma 6x16", or "simd128 6x8" on CPUs
 * without AVX2 (and in builds with -DCT_NO_AVX2_KERNEL, which test the portable kernel). */
const char *ct_cpu_gemm_kernel_name(void);
/* Caps the threads the built-in f32/f64 kernel may use (0: ct_get_num_threads()). Does not
 * affect the loaded BLAS, which runs its own pool. */
void ct_cpu_gemm_set_max_threads(int n);
/* Test hook: treat the loaded library's integers as holding at most limit (0 restores the
 * real limit), so that the splitting of dimensions past INT32_MAX can be tested with small
 * matrices. */
void ct_blas_set_int_limit(int64_t limit);

#endif /* CTORCH_BLAS_CPU_H */
