/* decomp_math.h: the per-matrix steps of Cholesky (LAPACK's potrf, lower), triangular solves
 * (trsm) and Householder QR (geqrf + orgqr), written once for the CPU (linalg_decomp.c: the steps
 * in a loop, one matrix after another) and CUDA (cuda/linalg.cu: one block per matrix, the
 * independent rows / columns of each step spread over its threads), as lu_math.h for LU. Each
 * element is updated by one thread in a fixed order, so every run gives the same bits. Matrices
 * are dense and row-major: A (n, n) or (m, n), B (n, k). */
#ifndef CTORCH_DECOMP_MATH_H
#define CTORCH_DECOMP_MATH_H

#include "lu_math.h"
#include <math.h>

#define CT_DECOMP_DEFINE(NAME, T)                                                                                    \
    /* Cholesky step j (columns < j done): A[j, j] - sum_k<j L[j, k]^2, the square of L[j, j]. */                    \
    CT_HOST_DEVICE T ct_chol_pivot_##NAME(const T *A, int64_t n, int64_t j)                                          \
    {                                                                                                                \
        T d = A[j * n + j];                                                                                          \
        for (int64_t k = 0; k < j; k++) {                                                                            \
            T prod = A[j * n + k] * A[j * n + k];                                                                    \
            d -= prod;                                                                                               \
        }                                                                                                            \
        return d;                                                                                                    \
    }                                                                                                                \
    /* Row i > j of Cholesky step j (L[j, j] in place): L[i, j] from the finished columns < j. */                    \
    CT_HOST_DEVICE void ct_chol_row_##NAME(T *A, int64_t n, int64_t j, int64_t i)                                    \
    {                                                                                                                \
        T s = A[i * n + j];                                                                                          \
        for (int64_t k = 0; k < j; k++) {                                                                            \
            T prod = A[i * n + k] * A[j * n + k];                                                                    \
            s -= prod;                                                                                               \
        }                                                                                                            \
        A[i * n + j] = s / A[j * n + j];                                                                             \
    }                                                                                                                \
    /* Column c of B becomes A^-1 B[:, c] for a triangular A (the other triangle is not read; unit:                 \
     * a diagonal of ones, not read either): forward substitution for lower, backward for upper. */                  \
    CT_HOST_DEVICE void ct_tri_solve_column_##NAME(const T *A, T *B, int64_t n, int64_t k, int64_t c, bool upper,     \
                                                   bool unit)                                                        \
    {                                                                                                                \
        for (int64_t step = 0; step < n; step++) {                                                                   \
            const int64_t i = upper ? n - 1 - step : step;                                                           \
            const int64_t lo = upper ? i + 1 : 0, hi = upper ? n : i;                                                \
            T s = B[i * k + c];                                                                                      \
            for (int64_t m = lo; m < hi; m++) {                                                                      \
                T prod = A[i * n + m] * B[m * k + c];                                                                \
                s -= prod;                                                                                           \
            }                                                                                                        \
            B[i * k + c] = unit ? s : s / A[i * n + i];                                                              \
        }                                                                                                            \
    }                                                                                                                \
    /* Householder reflector of QR step j on A (m, n), geqrf's: H = I - tau v v^T with v[j] = 1 and                 \
     * v[j+1:] stored below A[j, j], which becomes beta = -sign(alpha) ||A[j:, j]||; a column that is                \
     * already zero below the diagonal gets tau = 0 (H = I). Returns tau. */                                        \
    CT_HOST_DEVICE T ct_qr_reflector_##NAME(T *A, int64_t m, int64_t n, int64_t j)                                   \
    {                                                                                                                \
        T alpha = A[j * n + j], scale = 0;                                                                           \
        for (int64_t i = j + 1; i < m; i++) { /* scaled sum of squares: no overflow */                              \
            T v = A[i * n + j] < 0 ? -A[i * n + j] : A[i * n + j];                                                   \
            scale = v > scale ? v : scale;                                                                           \
        }                                                                                                            \
        if (scale == 0) {                                                                                            \
            return 0;                                                                                                \
        }                                                                                                            \
        T sum = 0;                                                                                                   \
        for (int64_t i = j + 1; i < m; i++) {                                                                        \
            T v = A[i * n + j] / scale;                                                                              \
            sum += v * v;                                                                                            \
        }                                                                                                            \
        T a = alpha / scale;                                                                                         \
        T norm = scale * sqrt(a * a + sum);                                                                          \
        T beta = alpha < 0 ? norm : -norm;                                                                           \
        T inv = 1 / (alpha - beta);                                                                                  \
        for (int64_t i = j + 1; i < m; i++) {                                                                        \
            A[i * n + j] *= inv;                                                                                     \
        }                                                                                                            \
        A[j * n + j] = beta;                                                                                         \
        return (beta - alpha) / beta;                                                                                \
    }                                                                                                                \
    /* Column c of C (m rows, row stride ldc) multiplied by H_j = I - tau v v^T, v from column j of                 \
     * V (m, ldv) as ct_qr_reflector left it (column c of C is never column j of V). */                             \
    CT_HOST_DEVICE void ct_qr_apply_##NAME(const T *V, int64_t ldv, T tau, int64_t m, int64_t j, T *C, int64_t ldc,  \
                                           int64_t c)                                                                \
    {                                                                                                                \
        if (tau == 0) {                                                                                              \
            return;                                                                                                  \
        }                                                                                                            \
        T w = C[j * ldc + c];                                                                                        \
        for (int64_t i = j + 1; i < m; i++) {                                                                        \
            T prod = V[i * ldv + j] * C[i * ldc + c];                                                                \
            w += prod;                                                                                               \
        }                                                                                                            \
        w *= tau;                                                                                                    \
        C[j * ldc + c] -= w;                                                                                         \
        for (int64_t i = j + 1; i < m; i++) {                                                                        \
            T prod = w * V[i * ldv + j];                                                                             \
            C[i * ldc + c] -= prod;                                                                                  \
        }                                                                                                            \
    }
CT_LU_TYPES(CT_DECOMP_DEFINE)
#undef CT_DECOMP_DEFINE

#endif /* CTORCH_DECOMP_MATH_H */
