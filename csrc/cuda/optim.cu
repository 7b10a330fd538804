/* optim.cu: struct CtOptimKernels on CUDA: one fused multi-tensor launch per call (per dtype
 * present in the group, usually one), for every optimizer kind of optim.h.
 *
 * The host lays the group's tensors end to end in a flat space of chunks of kChunk elements and
 * copies a table of entries (the operand pointers, the element count, the first chunk, and the
 * per-tensor Adam scalars / SGD fresh-buffer flag) into a device buffer from the caching
 * allocator, once per call. Block b binary-searches the table for the tensor owning chunk b and
 * updates that chunk with the per-element functions of optim_math.h, the same code the CPU runs.
 *
 * When a tensor's operands share one layout that is dense in memory (contiguous, or any
 * permutation of it) the update runs in memory order (it is elementwise); otherwise (e.g. a
 * transposed param with contiguous states) each operand's offset comes from its own strides.
 *
 * Gradient clipping (total_norm, scale_by_norm) uses the same flat chunk space; see its section. */
#include "common.cuh"
#include "allocator.cuh"
#include "optim_math.h"
#include "clip_math.h"
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
    double x[3];       /* the kinds after RMSprop: CtOptimTensor.x */
    int fresh;         /* SGD: the momentum buffer was just created */
    int flag;          /* RAdam, ASGD: CtOptimTensor.flag */
    int strided;       /* operands of different layouts: offsets from sizes and strides below */
    int ndim;
    int64_t sizes[CT_MAX_DIMS];
    int64_t strides[5][CT_MAX_DIMS]; /* in elements */
};

struct OptFlags {
    bool use_wd, f1, f2, f3; /* SGD: use_mom, nesterov, -; Adam: decoupled, amsgrad, -; RMSprop: centered, use_mom, -;
                                the kinds after RMSprop: decoupled, -, - */
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
    } else if (kind > CT_OPTIM_RMSPROP) {
        /* state slot 0, then slot 1 for the two-state kinds (ptr[3] is NULL for the others) */
        char *a = e.ptr[2] + offs[2], *b = e.ptr[3] != nullptr ? e.ptr[3] + offs[3] : nullptr;
        const Acc x[3] = {(Acc)e.x[0], (Acc)e.x[1], (Acc)e.x[2]};
#define CT_OPTIM_EXT_CALL(KIND, kind, HAS_WD, HAS_DECOUPLED, HAS_FLAG, NSTATES, ...) \
    case CT_OPTIM_##KIND:                                                            \
        if constexpr (D == CT_F16) {                                                 \
            ct_##kind##_elem_F16(__VA_ARGS__);                                       \
        } else if constexpr (D == CT_BF16) {                                         \
            ct_##kind##_elem_BF16(__VA_ARGS__);                                      \
        } else if constexpr (D == CT_F32) {                                          \
            ct_##kind##_elem_F32(__VA_ARGS__);                                       \
        } else {                                                                     \
            ct_##kind##_elem_F64(__VA_ARGS__);                                       \
        }                                                                            \
        break;
        switch (kind) {
            CT_OPTIM_EXT_KINDS(CT_OPTIM_EXT_CALL, p0, p1, a, b, &k, x, f.use_wd, f.f1, e.flag != 0)
        default:
            break;
        }
#undef CT_OPTIM_EXT_CALL
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

/* The entry owning chunk c: the last whose chunk_start <= c (entries with n == 0 are not in the table). */
template <typename Entry>
__device__ const Entry &entry_of(const Entry *table, int64_t nentries, int64_t c)
{
    int64_t lo = 0, hi = nentries - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (table[mid].chunk_start <= c) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return table[lo];
}

template <int D>
__global__ void multi_tensor_kernel(CtOptimKind kind, const OptEntry *table, int64_t nentries,
                                    typename ConstsOf<D>::type k, OptFlags f, int64_t chunk0)
{
    const int64_t chunk = chunk0 + blockIdx.x;
    const OptEntry &e = entry_of(table, nentries, chunk);
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
    } else if (p->kind == CT_OPTIM_RMSPROP) {
        f.f1 = p->centered;
        f.f2 = p->momentum > 0;
    } else {
        f.f1 = p->decoupled_weight_decay;
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
            e.x[0] = t->x[0];
            e.x[1] = t->x[1];
            e.x[2] = t->x[2];
            e.flag = t->flag ? 1 : 0;
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

/* --- gradient clipping (CtGradNormDesc, clip_math.h): the tensors (contiguous) laid end to end in
 * chunks of kChunk as above. One block per chunk folds it into a partial (a fixed tree over the
 * block), then one block combines each tensor's partials in chunk order and the tensors in order into
 * the total, on the device. Scaling reads the total on the device too: no host wait. */
constexpr int kClipThreads = 256;

struct ClipEntry {
    char *ptr;
    int64_t n;
    int64_t chunk_start;
    int64_t nchunks;
    int64_t itemsize;
    CtDType dtype;
};

__device__ __forceinline__ double load_float(const char *p, CtDType dt)
{
    switch (dt) {
    case CT_F16: return (double)ct_load<CT_F16>(p);
    case CT_BF16: return (double)ct_load<CT_BF16>(p);
    case CT_F32: return (double)ct_load<CT_F32>(p);
    default: return ct_load<CT_F64>(p);
    }
}

__device__ __forceinline__ void store_float(char *p, CtDType dt, double v)
{
    switch (dt) {
    case CT_F16: ct_store<CT_F16>(p, v); break;
    case CT_BF16: ct_store<CT_BF16>(p, v); break;
    case CT_F32: ct_store<CT_F32>(p, v); break;
    default: ct_store<CT_F64>(p, v); break;
    }
}

/* The combination of every thread's v over the block (kClipThreads, a fixed tree); thread 0's result. */
__device__ double block_combine(CtClipKind k, double v, double *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sh[threadIdx.x] = ct_clip_combine(k, sh[threadIdx.x], sh[threadIdx.x + s]);
        }
        __syncthreads();
    }
    return sh[0];
}

__global__ void clip_fold_kernel(const ClipEntry *table, int64_t nentries, double p, double *partial, int64_t chunk0)
{
    __shared__ double sh[kClipThreads];
    const CtClipKind k = ct_clip_kind(p);
    const int64_t chunk = chunk0 + blockIdx.x;
    const ClipEntry &e = entry_of(table, nentries, chunk);
    const int64_t isz = e.itemsize;
    const int64_t begin = (chunk - e.chunk_start) * kChunk;
    const int64_t end = begin + kChunk < e.n ? begin + kChunk : e.n;
    double acc = ct_clip_init(k);
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
        acc = ct_clip_acc(k, p, acc, load_float(e.ptr + i * isz, e.dtype));
    }
    double r = block_combine(k, acc, sh);
    if (threadIdx.x == 0) {
        partial[chunk] = r;
    }
}

__global__ void clip_total_kernel(const ClipEntry *table, int64_t nentries, double p, const double *partial,
                                  void *total, CtDType total_dtype)
{
    __shared__ double sh[kClipThreads];
    const CtClipKind k = ct_clip_kind(p);
    double acc = ct_clip_init(k);
    for (int64_t t = threadIdx.x; t < nentries; t += blockDim.x) {
        double v = ct_clip_init(k);
        for (int64_t c = 0; c < table[t].nchunks; c++) {
            v = ct_clip_combine(k, v, partial[table[t].chunk_start + c]);
        }
        acc = ct_clip_combine(k, acc, ct_clip_of_tensor(k, v));
    }
    double r = block_combine(k, acc, sh);
    if (threadIdx.x == 0) {
        store_float((char *)total, total_dtype, ct_clip_finish(k, p, r));
    }
}

__global__ void clip_scale_kernel(const ClipEntry *table, int64_t nentries, const void *total, CtDType total_dtype,
                                  double max_norm, bool by_total, int64_t chunk0)
{
    const int64_t chunk = chunk0 + blockIdx.x;
    const ClipEntry &e = entry_of(table, nentries, chunk);
    const double coef = ct_scale_coef(by_total, max_norm, load_float((const char *)total, total_dtype));
    const int64_t isz = e.itemsize;
    const int64_t begin = (chunk - e.chunk_start) * kChunk;
    const int64_t end = begin + kChunk < e.n ? begin + kChunk : e.n;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
        store_float(e.ptr + i * isz, e.dtype, load_float(e.ptr + i * isz, e.dtype) * coef);
    }
}

/* The table of the non-empty tensors of d on the device (caching allocator; *table stays NULL when
 * there are none); *nchunks: their chunk count. */
int clip_table(const CtGradNormDesc *d, int device, cudaStream_t stream, void **table, int64_t *nentries,
               int64_t *nchunks)
{
    std::vector<ClipEntry> entries;
    *nchunks = 0;
    for (int64_t i = 0; i < d->n; i++) {
        const CtTensorObject *t = d->tensors[i];
        int64_t numel = numel_of(t);
        if (numel == 0) {
            continue;
        }
        ClipEntry e{data_of(t), numel, *nchunks, (numel + kChunk - 1) / kChunk, (int64_t)float_itemsize(t->dtype),
                    t->dtype};
        *nchunks += e.nchunks;
        entries.push_back(e);
    }
    *table = nullptr;
    *nentries = (int64_t)entries.size();
    if (entries.empty()) {
        return CT_CUDA_OK;
    }
    const size_t bytes = entries.size() * sizeof(ClipEntry);
    CT_CUDA_TRY(ct_cuda_caching_malloc(device, bytes, table));
    /* pageable source: the call returns once the bytes are staged, so entries may go away after */
    cudaError_t err = cudaMemcpyAsync(*table, entries.data(), bytes, cudaMemcpyHostToDevice, stream);
    if (err != cudaSuccess) {
        int st = ct_cuda_record_error(err, "cudaMemcpyAsync(table)", __func__, __FILE__, __LINE__);
        (void)ct_cuda_caching_free(device, *table);
        return st;
    }
    return CT_CUDA_OK;
}

int clip_launch(const CtGradNormDesc *d, bool scale, int device, cudaStream_t stream, const ClipEntry *table,
                int64_t nentries, int64_t nchunks, double *partial)
{
    for (int64_t c0 = 0; c0 < nchunks; c0 += INT32_MAX) {
        int64_t nb = nchunks - c0 < INT32_MAX ? nchunks - c0 : INT32_MAX;
        if (scale) {
            clip_scale_kernel<<<(unsigned)nb, kClipThreads, 0, stream>>>(table, nentries, d->total, d->total_dtype,
                                                                          d->max_norm, d->by_total, c0);
        } else {
            clip_fold_kernel<<<(unsigned)nb, kClipThreads, 0, stream>>>(table, nentries, d->norm_type, partial, c0);
        }
        CT_CUDA_CHECK_LAUNCH();
    }
    if (!scale) {
        clip_total_kernel<<<1, kClipThreads, 0, stream>>>(table, nentries, d->norm_type, partial, d->total,
                                                         d->total_dtype);
        CT_CUDA_CHECK_LAUNCH();
    }
    return CT_CUDA_OK;
}

int clip_status(const CtGradNormDesc *d, bool scale)
{
    if (d->n == 0) {
        return CT_CUDA_OK;
    }
    const int device = d->tensors[0]->storage->device.index;
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaStream_t stream = ct_cuda_stream(device);
    void *table = nullptr, *partial = nullptr;
    int64_t nentries = 0, nchunks = 0;
    CT_CUDA_TRY(clip_table(d, device, stream, &table, &nentries, &nchunks));
    int status = CT_CUDA_OK;
    if (!scale) {
        status = ct_cuda_caching_malloc(device, (size_t)(nchunks + 1) * sizeof(double), &partial);
    }
    if (status == CT_CUDA_OK && (nentries > 0 || !scale)) {
        status = clip_launch(d, scale, device, stream, (const ClipEntry *)table, nentries, nchunks, (double *)partial);
    }
    /* stream-ordered frees: the blocks are reused only by work queued after the kernels */
    void *blocks[2] = {table, partial};
    for (void *b : blocks) {
        int fst = b != nullptr ? ct_cuda_caching_free(device, b) : CT_CUDA_OK;
        status = status != CT_CUDA_OK ? status : fst;
    }
    return status;
}

} // namespace

/* scale: scale_by_norm, else total_norm */
static int clip_entry(const CtGradNormDesc *d, bool scale)
{
    int status;
    try {
        status = clip_status(d, scale);
    } catch (const std::bad_alloc &) {
        status = ct_cuda_set_error(CT_CUDA_OUT_OF_MEMORY, "%s: out of host memory",
                                   scale ? "clip_grads_with_norm_" : "total_norm");
    }
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}

int ct_cuda_total_norm(const CtGradNormDesc *d) { return clip_entry(d, false); }
int ct_cuda_scale_by_norm(const CtGradNormDesc *d) { return clip_entry(d, true); }

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
