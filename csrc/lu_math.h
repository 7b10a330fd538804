/* lu_math.h: LU factorization with partial pivoting (LAPACK's getrf: unit-lower L below the
 * diagonal, U on and above it, 1-based pivot rows) and the solve from its factors (getrs), written
 * once for the CPU (linalg_more.c: the steps in a loop, one matrix after another) and CUDA
 * (cuda/linalg.cu: one block per matrix, the rows of each elimination step and the right-hand
 * sides spread over its threads). Each element is updated by one thread in a fixed order, so
 * every run gives the same bits. Matrices are dense and row-major: A (n, n), B (n, k). */
#ifndef CTORCH_LU_MATH_H
#define CTORCH_LU_MATH_H

#include "dtype.h"
#include <stdint.h>

#define CT_LU_TYPES(X) X(F32, float) X(F64, double)

#define CT_LU_DEFINE(NAME, T)                                                                                        \
    /* The row r >= j holding the largest |A[r, j]| (the first of ties). */                                          \
    CT_HOST_DEVICE int64_t ct_lu_pivot_##NAME(const T *A, int64_t n, int64_t j)                                      \
    {                                                                                                                \
        int64_t p = j;                                                                                               \
        T best = A[j * n + j] < 0 ? -A[j * n + j] : A[j * n + j];                                                    \
        for (int64_t r = j + 1; r < n; r++) {                                                                        \
            T v = A[r * n + j] < 0 ? -A[r * n + j] : A[r * n + j];                                                   \
            if (v > best) {                                                                                          \
                best = v;                                                                                            \
                p = r;                                                                                               \
            }                                                                                                        \
        }                                                                                                            \
        return p;                                                                                                    \
    }                                                                                                                \
    /* Column c of rows j and p exchanged. */                                                                        \
    CT_HOST_DEVICE void ct_lu_swap_##NAME(T *A, int64_t n, int64_t j, int64_t p, int64_t c)                          \
    {                                                                                                                \
        T t = A[j * n + c];                                                                                          \
        A[j * n + c] = A[p * n + c];                                                                                 \
        A[p * n + c] = t;                                                                                            \
    }                                                                                                                \
    /* Row i > j of step j (pivot A[j, j] nonzero): its multiplier in place, its columns > j updated. */            \
    CT_HOST_DEVICE void ct_lu_eliminate_##NAME(T *A, int64_t n, int64_t j, int64_t i)                                \
    {                                                                                                                \
        T l = A[i * n + j] / A[j * n + j];                                                                           \
        A[i * n + j] = l;                                                                                            \
        for (int64_t c = j + 1; c < n; c++) {                                                                        \
            T prod = l * A[j * n + c];                                                                               \
            A[i * n + c] -= prod;                                                                                    \
        }                                                                                                            \
    }                                                                                                                \
    /* Column c of B becomes A^-1 B[:, c]: the row swaps of the pivots, then L y = b, then U x = y. */             \
    CT_HOST_DEVICE void ct_lu_solve_column_##NAME(const T *LU, const int32_t *pivots, T *B, int64_t n, int64_t k,    \
                                                  int64_t c)                                                         \
    {                                                                                                                \
        for (int64_t j = 0; j < n; j++) {                                                                            \
            int64_t p = pivots[j] - 1;                                                                               \
            if (p != j) {                                                                                            \
                T t = B[j * k + c];                                                                                  \
                B[j * k + c] = B[p * k + c];                                                                         \
                B[p * k + c] = t;                                                                                    \
            }                                                                                                        \
        }                                                                                                            \
        for (int64_t i = 1; i < n; i++) {                                                                            \
            T s = B[i * k + c];                                                                                      \
            for (int64_t m = 0; m < i; m++) {                                                                        \
                T prod = LU[i * n + m] * B[m * k + c];                                                               \
                s -= prod;                                                                                           \
            }                                                                                                        \
            B[i * k + c] = s;                                                                                        \
        }                                                                                                            \
        for (int64_t i = n - 1; i >= 0; i--) {                                                                       \
            T s = B[i * k + c];                                                                                      \
            for (int64_t m = i + 1; m < n; m++) {                                                                    \
                T prod = LU[i * n + m] * B[m * k + c];                                                               \
                s -= prod;                                                                                           \
            }                                                                                                        \
            B[i * k + c] = s / LU[i * n + i];                                                                        \
        }                                                                                                            \
    }
CT_LU_TYPES(CT_LU_DEFINE)
#undef CT_LU_DEFINE

#endif /* CTORCH_LU_MATH_H */
