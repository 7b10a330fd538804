/* optim.cu: struct CtOptimKernels on CUDA: one fused multi-tensor launch per call (per dtype
 * present in the group, usually one).
 *
 * The host lays the group's tensors end to end in a flat space of chunks of kChunk elements and
 * copies a table of entries (the operand pointers, the element count, the first chunk, and the
 * per-tensor Adam scalars / SGD fresh-buffer flag) into a device buffer from the caching
 * allocator, once per call. Block b binary-searches the table for the tensor owning chunk b and
 * updates that chunk with the per-element functions of optim_math.h, the same code the CPU runs.
 *
 * When a tensor's operands share one layout that is dense in memory (contiguous, or any
 * permutation of it) the update runs in memory order (it is elementwise); otherwise (e.g. a
 * transposed param with contiguous states) each operand's offset comes from its own strides. */
#include "common.cuh"
#include "allocator.cuh"
#include "optim_math.h"
#include <algorithm>
#include <vector>

namespace {

constexpr int kThreads = 256;
constexpr int64_t kChunk = 4096;

struct OptEntry {
    char *ptr[5]; /* param, grad, then the state slots in use, in slot order */
    int64_t n;
    int64_t chunk_start;
    double nstep, bc2; /* Adam: -step_size, sqrt(1 - beta2^step) */
    int fresh;         /* SGD: the momentum buffer was just created */
    int strided;       /* operands of different layouts: offsets from sizes and strides below */
    int ndim;
    int64_t sizes[CT_MAX_DIMS];
    int64_t strides[5][CT_MAX_DIMS]; /* in elements */
};

struct OptFlags {
    bool use_wd, f1, f2, f3; /* SGD: use_mom, nesterov, -; Adam: decoupled, amsgrad, -; RMSprop: centered, use_mom, - */
};

template <int D>
struct ConstsOf {
    typedef CtOptimConstsF type;
};
template <>
struct ConstsOf<CT_F64> {
    typedef CtOptimConstsD type;
};

template <int D>
__device__ __forceinline__ void update_elem(CtOptimKind kind, const OptEntry &e, int64_t i,
                                            const typename ConstsOf<D>::type &k, OptFlags f)
{
    typedef typename CtCudaType<D>::T T;
    typedef typename CtCudaType<D>::Acc Acc;
    int64_t offs[5];
    if (e.strided) {
        /* logical index i (last dim fastest) -> each operand's element offset */
        for (int o = 0; o < 5; o++) {
            offs[o] = 0;
        }
        int64_t rem = i;
        for (int d = e.ndim - 1; d >= 0; d--) {
            int64_t idx = rem % e.sizes[d];
            rem /= e.sizes[d];
            for (int o = 0; o < 5; o++) {
                offs[o] += idx * e.strides[o][d];
            }
        }
        for (int o = 0; o < 5; o++) {
            offs[o] *= (int64_t)sizeof(T);
        }
    } else {
        for (int o = 0; o < 5; o++) {
            offs[o] = i * (int64_t)sizeof(T);
        }
    }
    char *p0 = e.ptr[0] + offs[0];
    const char *p1 = e.ptr[1] + offs[1];
    if (kind == CT_OPTIM_SGD) {
        char *b = f.f1 ? e.ptr[2] + offs[2] : nullptr;
        if constexpr (D == CT_F16) {
            ct_sgd_elem_F16(p0, p1, b, &k, f.use_wd, f.f1, e.fresh != 0, f.f2);
        } else if constexpr (D == CT_BF16) {
            ct_sgd_elem_BF16(p0, p1, b, &k, f.use_wd, f.f1, e.fresh != 0, f.f2);
        } else if constexpr (D == CT_F32) {
            ct_sgd_elem_F32(p0, p1, b, &k, f.use_wd, f.f1, e.fresh != 0, f.f2);
        } else {
            ct_sgd_elem_F64(p0, p1, b, &k, f.use_wd, f.f1, e.fresh != 0, f.f2);
        }
    } else if (kind == CT_OPTIM_ADAM) {
        char *m = e.ptr[2] + offs[2], *v = e.ptr[3] + offs[3], *x = f.f2 ? e.ptr[4] + offs[4] : nullptr;
        const Acc nstep = (Acc)e.nstep, bc2 = (Acc)e.bc2;
        if constexpr (D == CT_F16) {
            ct_adam_elem_F16(p0, p1, m, v, x, &k, nstep, bc2, f.use_wd, f.f1, f.f2);
        } else if constexpr (D == CT_BF16) {
            ct_adam_elem_BF16(p0, p1, m, v, x, &k, nstep, bc2, f.use_wd, f.f1, f.f2);
        } else if constexpr (D == CT_F32) {
            ct_adam_elem_F32(p0, p1, m, v, x, &k, nstep, bc2, f.use_wd, f.f1, f.f2);
        } else {
            ct_adam_elem_F64(p0, p1, m, v, x, &k, nstep, bc2, f.use_wd, f.f1, f.f2);
        }
    } else {
        /* square_avg, then grad_avg when centered, then the buffer when momentum > 0 */
        char *s = e.ptr[2] + offs[2];
        char *a = f.f1 ? e.ptr[3] + offs[3] : nullptr;
        char *b = f.f2 ? e.ptr[f.f1 ? 4 : 3] + offs[f.f1 ? 4 : 3] : nullptr;
        if constexpr (D == CT_F16) {
            ct_rmsprop_elem_F16(p0, p1, s, a, b, &k, f.use_wd, f.f1, f.f2);
        } else if constexpr (D == CT_BF16) {
            ct_rmsprop_elem_BF16(p0, p1, s, a, b, &k, f.use_wd, f.f1, f.f2);
        } else if constexpr (D == CT_F32) {
            ct_rmsprop_elem_F32(p0, p1, s, a, b, &k, f.use_wd, f.f1, f.f2);
        } else {
            ct_rmsprop_elem_F64(p0, p1, s, a, b, &k, f.use_wd, f.f1, f.f2);
        }
    }
}

template <int D>
__global__ void multi_tensor_kernel(CtOptimKind kind, const OptEntry *table, int64_t nentries,
                                    typename ConstsOf<D>::type k, OptFlags f, int64_t chunk0)
{
    const int64_t chunk = chunk0 + blockIdx.x;
    /* the last entry whose chunk_start <= chunk (entries with n == 0 are not in the table) */
    int64_t lo = 0, hi = nentries - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (table[mid].chunk_start <= chunk) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    const OptEntry &e = table[lo];
    const int64_t begin = (chunk - e.chunk_start) * kChunk;
    const int64_t end = begin + kChunk < e.n ? begin + kChunk : e.n;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
        update_elem<D>(kind, e, i, k, f);
    }
}

/* A layout the flat kernel can use: every stride >= 0 and the elements cover one dense span. */
bool dense_layout(const CtTensorObject *t)
{
    struct Dim {
        int64_t stride, size;
    } st[CT_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] == 0) {
            return true;
        }
        if (t->sizes[d] != 1) {
            st[nd].stride = t->strides[d];
            st[nd].size = t->sizes[d];
            nd++;
        }
    }
    std::sort(st, st + nd, [](const Dim &a, const Dim &b) { return a.stride < b.stride; });
    int64_t expected = 1;
    for (int d = 0; d < nd; d++) {
        if (st[d].stride != expected) {
            return false;
        }
        expected *= st[d].size;
    }
    return true;
}

bool same_layout(const CtTensorObject *a, const CtTensorObject *b)
{
    if (a->ndim != b->ndim) {
        return false;
    }
    for (int d = 0; d < a->ndim; d++) {
        if (a->sizes[d] != b->sizes[d] || (a->sizes[d] != 1 && a->strides[d] != b->strides[d])) {
            return false;
        }
    }
    return true;
}

int64_t numel_of(const CtTensorObject *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++) {
        n *= t->sizes[d];
    }
    return n;
}

size_t float_itemsize(CtDType d) { return d == CT_F64 ? 8 : d == CT_F32 ? 4 : 2; }

char *data_of(const CtTensorObject *t)
{
    return (char *)t->storage->data + t->offset * (int64_t)float_itemsize(t->dtype);
}

template <int D>
int launch(int device, const CtOptimParams *p, std::vector<OptEntry> &entries, int64_t nchunks)
{
    cudaStream_t stream = ct_cuda_stream(device);
    typename ConstsOf<D>::type k;
    if constexpr (D == CT_F64) {
        k = ct_optim_consts_D(p);
    } else {
        k = ct_optim_consts_F(p);
    }
    OptFlags f{};
    f.use_wd = p->weight_decay != 0;
    if (p->kind == CT_OPTIM_SGD) {
        f.f1 = p->momentum != 0;
        f.f2 = p->nesterov;
    } else if (p->kind == CT_OPTIM_ADAM) {
        f.f1 = p->decoupled_weight_decay;
        f.f2 = p->amsgrad;
    } else {
        f.f1 = p->centered;
        f.f2 = p->momentum > 0;
    }
    const size_t bytes = entries.size() * sizeof(OptEntry);
    void *table = nullptr;
    CT_CUDA_TRY(ct_cuda_caching_malloc(device, bytes, &table));
    /* pageable source: the call returns once the bytes are staged, so entries may go away after */
    cudaError_t err = cudaMemcpyAsync(table, entries.data(), bytes, cudaMemcpyHostToDevice, stream);
    if (err != cudaSuccess) {
        int st = ct_cuda_record_error(err, "cudaMemcpyAsync(table)", __func__, __FILE__, __LINE__);
        (void)ct_cuda_caching_free(device, table);
        return st;
    }
    int status = CT_CUDA_OK;
    for (int64_t c0 = 0; c0 < nchunks && status == CT_CUDA_OK; c0 += INT32_MAX) {
        int64_t nb = nchunks - c0 < INT32_MAX ? nchunks - c0 : INT32_MAX;
        multi_tensor_kernel<D><<<(unsigned)nb, kThreads, 0, stream>>>(p->kind, (const OptEntry *)table,
                                                                    (int64_t)entries.size(), k, f, c0);
        cudaError_t lerr = cudaGetLastError();
        if (lerr != cudaSuccess) {
            status = ct_cuda_record_error(lerr, "multi_tensor_kernel<<<>>>", __func__, __FILE__, __LINE__);
        }
    }
    /* stream-ordered: the block is reused only by work queued after the kernel on this stream */
    int fst = ct_cuda_caching_free(device, table);
    return status != CT_CUDA_OK ? status : fst;
}

int step_status(const CtOptimParams *p, int64_t n, const CtOptimTensor *tensors)
{
    if (n == 0) {
        return CT_CUDA_OK;
    }
    const int device = tensors[0].param->storage->device.index;
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    const CtDType dtypes[4] = {CT_F16, CT_BF16, CT_F32, CT_F64};
    for (CtDType dt : dtypes) {
        std::vector<OptEntry> entries;
        int64_t nchunks = 0;
        for (int64_t i = 0; i < n; i++) {
            const CtOptimTensor *t = &tensors[i];
            if (t->param->dtype != dt) {
                continue;
            }
            int64_t numel = numel_of(t->param);
            if (numel == 0) {
                continue;
            }
            OptEntry e{};
            int nops = 0;
            const CtTensorObject *ops[5];
            ops[nops++] = t->param;
            ops[nops++] = t->grad;
            for (int s = 0; s < 3; s++) {
                if (t->state[s] != nullptr) {
                    ops[nops++] = t->state[s];
                }
            }
            bool flat = true;
            for (int o = 0; o < nops; o++) {
                flat = flat && dense_layout(ops[o]) && same_layout(ops[o], t->param);
                e.ptr[o] = data_of(ops[o]);
            }
            if (!flat) {
                /* element i in logical order through each operand's own strides */
                e.strided = 1;
                e.ndim = t->param->ndim;
                for (int dd = 0; dd < e.ndim; dd++) {
                    e.sizes[dd] = t->param->sizes[dd];
                    for (int o = 0; o < nops; o++) {
                        e.strides[o][dd] = ops[o]->strides[dd];
                    }
                }
            }
            e.n = numel;
            e.chunk_start = nchunks;
            e.nstep = -t->step_size;
            e.bc2 = t->bias_corr2_sqrt;
            e.fresh = t->fresh_buffer ? 1 : 0;
            nchunks += (numel + kChunk - 1) / kChunk;
            entries.push_back(e);
        }
        if (entries.empty()) {
            continue;
        }
        int st;
        switch (dt) {
        case CT_F16: st = launch<CT_F16>(device, p, entries, nchunks); break;
        case CT_BF16: st = launch<CT_BF16>(device, p, entries, nchunks); break;
        case CT_F32: st = launch<CT_F32>(device, p, entries, nchunks); break;
        default: st = launch<CT_F64>(device, p, entries, nchunks); break;
        }
        CT_CUDA_TRY(st);
    }
    return CT_CUDA_OK;
}

} // namespace

int ct_cuda_optim_step(const CtOptimParams *p, int64_t n, const CtOptimTensor *tensors)
{
    int status;
    try {
        status = step_status(p, n, tensors);
    } catch (const std::bad_alloc &) {
        status = ct_cuda_set_error(CT_CUDA_OUT_OF_MEMORY, "optimizer step: out of host memory");
    }
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}
