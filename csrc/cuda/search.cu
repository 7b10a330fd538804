/* search.cu: searchsorted on the GPU, the CUDA side of CtIndexKernels.searchsorted (search.h).
 *
 * One thread per value: the iterator gives the byte offsets of the output, the value and the
 * start of the value's sorted line (and of its sorter line), and the thread runs search_math.h's
 * binary search along the line, the CPU's function exactly, so both devices give the same
 * positions. Spaces of 2^31 values or more are cut into pieces (offsets.cuh). No host wait:
 * sorter entries were range-checked by the caller. */
#include "offsets.cuh"
#include "search.cuh"
#include "search_math.h"

namespace {

constexpr int kThreads = 256;

template <int N>
struct SearchPtrs {
    char *p[N];
};

/* search_math.h's search for the values' dtype (a uniform branch: one dtype per launch). */
__host__ __device__ __forceinline__ int64_t search_one(int dtype, const char *line, const char *sorter,
                                                       const char *value, const CtSearchArgs &a)
{
    switch (dtype) {
#define CT_SEARCH_CASE(NAME, ...) \
    case CT_##NAME:               \
        return ct_search_##NAME(line, a.line_stride, sorter, a.sorter_stride, a.n, value, a.right);
        CT_DTYPE_LIST(CT_SEARCH_CASE)
#undef CT_SEARCH_CASE
    default:
        return 0;
    }
}

/* Operands: 0 out (int32 when out32, else int64), 1 values, 2 line starts, [3 sorter starts]. */
template <int N>
__global__ void searchsorted_kernel(SearchPtrs<N> d, uint32_t numel, CtOffsets<N> offs, CtSearchArgs a, int dtype,
                                    bool out32)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= numel) {
        return;
    }
    int64_t off[N];
    offs.get(i, off);
    const char *sorter = N > 3 ? d.p[N - 1] + off[N - 1] : nullptr;
    int64_t pos = search_one(dtype, d.p[2] + off[2], sorter, d.p[1] + off[1], a);
    if (out32) {
        *(int32_t *)(d.p[0] + off[0]) = (int32_t)pos;
    } else {
        *(int64_t *)(d.p[0] + off[0]) = pos;
    }
}

template <int N>
int launch_searchsorted(const CtIter *it, const CtSearchArgs &a, cudaStream_t stream)
{
    const int dtype = it->dtypes[1];
    const bool out32 = it->dtypes[0] == CT_I32;
    return ct_for_each_piece<N>(it, [&](const CtPiece<N> &piece) -> int {
        SearchPtrs<N> d;
        for (int k = 0; k < N; k++) {
            d.p[k] = piece.data[k];
        }
        searchsorted_kernel<N><<<ct_cuda_blocks(piece.numel, kThreads), kThreads, 0, stream>>>(
            d, (uint32_t)piece.numel, piece.offsets(), a, dtype, out32);
        CT_CUDA_CHECK_LAUNCH();
        return CT_CUDA_OK;
    });
}

int run_searchsorted(const CtIter *it, const CtSearchArgs &a)
{
    if (it->nops != 3 && it->nops != 4) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "searchsorted expects 3 or 4 operands, got %d", it->nops);
    }
    if (it->numel == 0) {
        return CT_CUDA_OK;
    }
    CT_CUDA_TRY(ct_cuda_device_guard(it->device.index));
    cudaStream_t stream = ct_cuda_stream(it->device.index);
    return it->nops == 3 ? launch_searchsorted<3>(it, a, stream) : launch_searchsorted<4>(it, a, stream);
}

} /* namespace */

int ct_cuda_searchsorted(const CtIter *it, const CtSearchArgs *args)
{
    int status = run_searchsorted(it, *args);
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}
