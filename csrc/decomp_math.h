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

/* --- Jacobi eigh (cyclic, two-sided) and SVD (one-sided, Hestenes) -------------------------------
 * Both sweep the pairs p < q in a fixed order, each pair a plane rotation J (c on the diagonal, s at
 * (p, q), -s at (q, p)) that zeroes the (p, q) entry of a symmetric 2x2: for eigh A <- J^T A J (a
 * column then a row rotation), V <- V J; for the SVD the columns of W (m, n) are rotated, W <- W J,
 * V <- V J, until they are orthogonal: then S = their norms and U = W / S. The rotation of one row
 * (or column) k is one step, so CUDA spreads k over a block's threads. */
#define CT_JACOBI_MAX_SWEEPS 60
#define CT_JACOBI_DEFINE(NAME, T)                                                                                    \
    CT_HOST_DEVICE T ct_jacobi_eps_##NAME(void)                                                                      \
    {                                                                                                                \
        return sizeof(T) == 4 ? (T)1.1920929e-07 : (T)2.220446049250313e-16;                                         \
    }                                                                                                                \
    /* (c, s) zeroing apq of [[app, apq], [apq, aqq]] (Rutishauser's smaller angle); s = 0 when apq is 0 or           \
     * negligible beside aqq - app (theta^2 overflows). */                                                           \
    CT_HOST_DEVICE void ct_jacobi_angle_##NAME(T app, T aqq, T apq, T *c, T *s)                                      \
    {                                                                                                                \
        *c = 1;                                                                                                      \
        *s = 0;                                                                                                      \
        if (apq == 0) {                                                                                              \
            return;                                                                                                  \
        }                                                                                                            \
        T theta = (aqq - app) / (2 * apq);                                                                           \
        T t = 1 / ((theta < 0 ? -theta : theta) + sqrt(theta * theta + 1));                                         \
        t = theta < 0 ? -t : t;                                                                                      \
        *c = 1 / sqrt(t * t + 1);                                                                                    \
        *s = t * *c;                                                                                                 \
    }                                                                                                                \
    /* Row k of columns p, q of X (row stride ld): (x_p, x_q) <- (c x_p - s x_q, s x_p + c x_q). */                  \
    CT_HOST_DEVICE void ct_rotate_cols_##NAME(T *X, int64_t ld, int64_t p, int64_t q, T c, T s, int64_t k)           \
    {                                                                                                                \
        T xp = X[k * ld + p], xq = X[k * ld + q];                                                                    \
        X[k * ld + p] = c * xp - s * xq;                                                                             \
        X[k * ld + q] = s * xp + c * xq;                                                                             \
    }                                                                                                                \
    /* Column k of rows p, q of X, the same rotation (J^T X). */                                                     \
    CT_HOST_DEVICE void ct_rotate_rows_##NAME(T *X, int64_t ld, int64_t p, int64_t q, T c, T s, int64_t k)           \
    {                                                                                                                \
        T xp = X[p * ld + k], xq = X[q * ld + k];                                                                    \
        X[p * ld + k] = c * xp - s * xq;                                                                             \
        X[q * ld + k] = s * xp + c * xq;                                                                             \
    }                                                                                                                \
    /* Whether the symmetric A (n, n) is diagonal enough: sum of its off-diagonal squares at most                    \
     * (eps/100)^2 of its whole sum of squares (Jacobi converges quadratically: one sweep more at most). */           \
    CT_HOST_DEVICE bool ct_eigh_converged_##NAME(const T *A, int64_t n)                                              \
    {                                                                                                                \
        T off = 0, all = 0;                                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                                            \
            for (int64_t j = 0; j < n; j++) {                                                                        \
                T a2 = A[i * n + j] * A[i * n + j];                                                                  \
                all += a2;                                                                                           \
                off += i == j ? 0 : a2;                                                                              \
            }                                                                                                        \
        }                                                                                                            \
        T tol = ct_jacobi_eps_##NAME() / 100;                                                                        \
        return !(off > tol * tol * all); /* NaN: stop */                                                             \
    }                                                                                                                \
    /* The diagonal of the converged A into w, ascending, V's columns permuted alike (selection sort). */            \
    CT_HOST_DEVICE void ct_eigh_sort_##NAME(const T *A, T *w, T *V, int64_t n)                                       \
    {                                                                                                                \
        for (int64_t i = 0; i < n; i++) {                                                                            \
            w[i] = A[i * n + i];                                                                                     \
        }                                                                                                            \
        for (int64_t i = 0; i < n; i++) {                                                                            \
            int64_t best = i;                                                                                        \
            for (int64_t j = i + 1; j < n; j++) {                                                                    \
                best = w[j] < w[best] ? j : best;                                                                    \
            }                                                                                                        \
            if (best == i) {                                                                                         \
                continue;                                                                                            \
            }                                                                                                        \
            T tmp = w[i];                                                                                            \
            w[i] = w[best];                                                                                          \
            w[best] = tmp;                                                                                           \
            for (int64_t k = 0; V != NULL && k < n; k++) {                                                           \
                tmp = V[k * n + i];                                                                                  \
                V[k * n + i] = V[k * n + best];                                                                      \
                V[k * n + best] = tmp;                                                                               \
            }                                                                                                        \
        }                                                                                                            \
    }                                                                                                                \
    /* The rotation of columns p, q of W (m, n) that makes them orthogonal, or false (s = 0) when they               \
     * already are to working precision: |w_p . w_q| <= eps ||w_p|| ||w_q||. */                                      \
    CT_HOST_DEVICE bool ct_svd_angle_##NAME(const T *W, int64_t m, int64_t n, int64_t p, int64_t q, T *c, T *s)      \
    {                                                                                                                \
        T alpha = 0, beta = 0, gamma = 0;                                                                            \
        for (int64_t i = 0; i < m; i++) {                                                                            \
            T wp = W[i * n + p], wq = W[i * n + q];                                                                  \
            alpha += wp * wp;                                                                                        \
            beta += wq * wq;                                                                                         \
            gamma += wp * wq;                                                                                        \
        }                                                                                                            \
        *c = 1;                                                                                                      \
        *s = 0;                                                                                                      \
        T g = gamma < 0 ? -gamma : gamma;                                                                            \
        if (!(g > ct_jacobi_eps_##NAME() * sqrt(alpha) * sqrt(beta))) {                                              \
            return false;                                                                                            \
        }                                                                                                            \
        ct_jacobi_angle_##NAME(alpha, beta, gamma, c, s);                                                            \
        return *s != 0;                                                                                              \
    }                                                                                                                \
    /* After the sweeps: S (n) the norms of W's columns, descending, W's and V's (n, n; or NULL) columns             \
     * permuted alike; then, when U (m, ucols; ucols n or m) is wanted, U's first columns W / S and the              \
     * rest (those of zero S, and all past n) completed to an orthonormal basis by Gram-Schmidt (twice) on           \
     * unit vectors, each accepted when at least half the average left of it remains. */                           \
    CT_HOST_DEVICE void ct_svd_finish_##NAME(T *W, T *S, T *U, T *V, int64_t m, int64_t n, int64_t ucols)           \
    {                                                                                                                \
        for (int64_t j = 0; j < n; j++) {                                                                            \
            T a = 0;                                                                                                 \
            for (int64_t i = 0; i < m; i++) {                                                                        \
                a += W[i * n + j] * W[i * n + j];                                                                    \
            }                                                                                                        \
            S[j] = sqrt(a);                                                                                          \
        }                                                                                                            \
        for (int64_t j = 0; j < n; j++) {                                                                            \
            int64_t best = j;                                                                                        \
            for (int64_t i = j + 1; i < n; i++) {                                                                    \
                best = S[i] > S[best] ? i : best;                                                                    \
            }                                                                                                        \
            if (best == j) {                                                                                         \
                continue;                                                                                            \
            }                                                                                                        \
            T tmp = S[j];                                                                                            \
            S[j] = S[best];                                                                                          \
            S[best] = tmp;                                                                                           \
            for (int64_t i = 0; i < m; i++) {                                                                        \
                tmp = W[i * n + j];                                                                                  \
                W[i * n + j] = W[i * n + best];                                                                      \
                W[i * n + best] = tmp;                                                                               \
            }                                                                                                        \
            for (int64_t i = 0; V != NULL && i < n; i++) {                                                           \
                tmp = V[i * n + j];                                                                                  \
                V[i * n + j] = V[i * n + best];                                                                      \
                V[i * n + best] = tmp;                                                                               \
            }                                                                                                        \
        }                                                                                                            \
        if (U == NULL) {                                                                                             \
            return;                                                                                                  \
        }                                                                                                            \
        int64_t done = 0; /* columns of U set: those with S > 0 (a prefix, S descending) */                          \
        for (int64_t j = 0; j < n && S[j] > 0; j++, done++) {                                                        \
            for (int64_t i = 0; i < m; i++) {                                                                        \
                U[i * ucols + j] = W[i * n + j] / S[j];                                                              \
            }                                                                                                        \
        }                                                                                                            \
        int64_t e = m - 1; /* the last unit vector tried */                                                          \
        for (int64_t j = done; j < ucols; j++) {                                                                     \
            for (int64_t tries = 0; tries < m; tries++) {                                                            \
                e = e + 1 == m ? 0 : e + 1;                                                                          \
                for (int64_t i = 0; i < m; i++) {                                                                    \
                    U[i * ucols + j] = i == e ? 1 : 0;                                                               \
                }                                                                                                    \
                for (int pass = 0; pass < 2; pass++) {                                                               \
                    for (int64_t c = 0; c < j; c++) {                                                                \
                        T d = 0;                                                                                     \
                        for (int64_t i = 0; i < m; i++) {                                                            \
                            d += U[i * ucols + c] * U[i * ucols + j];                                                \
                        }                                                                                            \
                        for (int64_t i = 0; i < m; i++) {                                                            \
                            U[i * ucols + j] -= d * U[i * ucols + c];                                                \
                        }                                                                                            \
                    }                                                                                                \
                }                                                                                                    \
                T norm2 = 0;                                                                                         \
                for (int64_t i = 0; i < m; i++) {                                                                    \
                    norm2 += U[i * ucols + j] * U[i * ucols + j];                                                    \
                }                                                                                                    \
                if (norm2 * (T)(2 * m) >= (T)(m - j) || tries == m - 1) {                                            \
                    T inv = 1 / sqrt(norm2);                                                                         \
                    for (int64_t i = 0; i < m; i++) {                                                                \
                        U[i * ucols + j] *= inv;                                                                     \
                    }                                                                                                \
                    break;                                                                                           \
                }                                                                                                    \
            }                                                                                                        \
        }                                                                                                            \
    }
CT_LU_TYPES(CT_JACOBI_DEFINE)
#undef CT_JACOBI_DEFINE

#endif /* CTORCH_DECOMP_MATH_H */
