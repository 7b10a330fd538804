/* offsets.cuh: from a CtIter (iter.h) to the byte offsets a kernel thread needs, for any kernel
 * family with N operands.
 *
 * A kernel indexes elements with 32-bit linear indices, turned into per-operand byte offsets
 * (64-bit) by CtOffsets<N>::get, which divides by each dim's size with magic-number division.
 * Iteration spaces of 2^31 elements or more are cut into pieces along their outermost dims by
 * ct_for_each_piece, so every size works with fast 32-bit index math. Both are host-callable,
 * which lets tests/cuda_host check them without a GPU. */
#ifndef CTORCH_CUDA_OFFSETS_CUH
#define CTORCH_CUDA_OFFSETS_CUH

#include "common.cuh"
#include "iter.h"

#define CT_MAX_INDEX32 ((int64_t)INT32_MAX)

/* Passed by value as a kernel parameter (under 1 KiB for N = 2). dim 0 is the innermost. */
template <int N>
struct CtOffsets {
    int ndim;
    CtDivider32 div[CT_MAX_DIMS];
    int64_t strides[CT_MAX_DIMS][N]; /* bytes */

    /* Byte offsets of element i (< 2^31) of each operand. Unrolled to CT_MAX_DIMS so that the
     * parameter arrays are indexed with constants. */
    __host__ __device__ __forceinline__ void get(uint32_t i, int64_t (&off)[N]) const
    {
CT_UNROLL
        for (int k = 0; k < N; k++) {
            off[k] = 0;
        }
CT_UNROLL
        for (int d = 0; d < CT_MAX_DIMS; d++) {
            if (d == ndim - 1) { /* the outermost dim needs no division */
CT_UNROLL
                for (int k = 0; k < N; k++) {
                    off[k] += (int64_t)i * strides[d][k];
                }
                break;
            }
            uint32_t q = div[d].div(i);
            uint32_t r = i - q * div[d].divisor;
CT_UNROLL
            for (int k = 0; k < N; k++) {
                off[k] += (int64_t)r * strides[d][k];
            }
            i = q;
        }
    }
};

/* A part of an iteration space with fewer than 2^31 elements: CtIter's layout for N operands. */
template <int N>
struct CtPiece {
    int ndim;
    int64_t numel;
    int64_t shape[CT_MAX_DIMS];
    int64_t strides[CT_MAX_DIMS][N];
    char *data[N];

    CtOffsets<N> offsets() const
    {
        CtOffsets<N> o;
        o.ndim = ndim;
        for (int d = 0; d < CT_MAX_DIMS; d++) {
            bool used = d < ndim;
            o.div[d].init(used ? (uint32_t)shape[d] : 1u);
            for (int k = 0; k < N; k++) {
                o.strides[d][k] = used ? strides[d][k] : 0;
            }
        }
        return o;
    }
};

template <int N, typename F>
int ct_for_each_piece_of(CtPiece<N> p, F &f)
{
    int64_t n = 1;
    for (int d = 0; d < p.ndim; d++) {
        n *= p.shape[d];
    }
    p.numel = n;
    if (n <= CT_MAX_INDEX32) {
        return n == 0 ? CT_CUDA_OK : f((const CtPiece<N> &)p);
    }
    int outer = p.ndim - 1;
    int64_t inner = n / p.shape[outer];
    if (inner <= CT_MAX_INDEX32) { /* runs of whole outer slices */
        int64_t step = CT_MAX_INDEX32 / inner;
        for (int64_t start = 0; start < p.shape[outer]; start += step) {
            CtPiece<N> c = p;
            c.shape[outer] = p.shape[outer] - start < step ? p.shape[outer] - start : step;
            c.numel = inner * c.shape[outer];
            for (int k = 0; k < N; k++) {
                c.data[k] += start * p.strides[outer][k];
            }
            CT_CUDA_TRY(f((const CtPiece<N> &)c));
        }
        return CT_CUDA_OK;
    }
    for (int64_t j = 0; j < p.shape[outer]; j++) { /* one outer slice at a time, cut further */
        CtPiece<N> c = p;
        c.ndim = outer;
        for (int k = 0; k < N; k++) {
            c.data[k] += j * p.strides[outer][k];
        }
        CT_CUDA_TRY(ct_for_each_piece_of<N>(c, f));
    }
    return CT_CUDA_OK;
}

/* Calls f(const CtPiece<N>&) -> status for consecutive pieces covering it's space in order (the
 * linear index of a piece's element 0 is the sum of the numel of the pieces before it). */
template <int N, typename F>
int ct_for_each_piece(const CtIter *it, F &&f)
{
    CtPiece<N> p;
    p.ndim = it->ndim;
    p.numel = it->numel;
    for (int d = 0; d < it->ndim; d++) {
        p.shape[d] = it->shape[d];
        for (int k = 0; k < N; k++) {
            p.strides[d][k] = it->strides[d][k];
        }
    }
    for (int k = 0; k < N; k++) {
        p.data[k] = it->data[k];
    }
    return ct_for_each_piece_of<N>(p, f);
}

#endif /* CTORCH_CUDA_OFFSETS_CUH */
