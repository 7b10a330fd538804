/* elementwise.cu: the CUDA implementation of struct CtElementwiseKernels's unary, binary and
 * ternary fields (elementwise.h): every op of CT_EW_OP_LIST for every compute dtype the CPU
 * has, over a CtIter whose operand 0 is the output.
 *
 * The kernels are in elementwise_impl.cuh, instantiated by elementwise_part<P>.cu, each of which
 * fills its ops' rows of the dispatch table [op][compute dtype] with descriptors. This file holds
 * the entry point and the launch code, written once for every op: it reads host scalars and the
 * op's parameters into the kernel type, picks the vector or the strided path, cuts spaces of
 * 2^31 elements or more into pieces, and launches. */
#include "elementwise_impl.cuh"
#include <mutex>
#include <stdio.h>

#ifdef CT_EW_HOST_EMULATION
/* tests/cuda_host/elementwise_harness.cu records each launch (path 0 vector, 1 strided) and the
 * host scalars and parameters, in the kernel types, that the launches receive (EwArgs v and p). */
void ct_ew_emulated_launch(int path, unsigned int blocks, int64_t work);
void ct_ew_emulated_scalars(const void *values, const void *params, size_t size);
#endif

namespace {

#define EW_KNAME(NAME, kind, fn, domain, flags, kname) kname,
const char *const kKernelName[CT_EW_NUM_OPS] = {CT_EW_OP_LIST(EW_KNAME)};
#undef EW_KNAME
/* PyTorch's ScalarType names ("Long"): the dtype rows' (ct_scalar_type_name reads ct_dtype_info, which
 * lives in _C, out of the backend's reach) */
#define EW_SCALAR_NAME(NAME, ctype, acctype, pyname, npy, dlcode, dlbits, kind, scalar, cpp) scalar,
const char *const kScalarTypeName[CT_NUM_DTYPES] = {CT_DTYPE_LIST(EW_SCALAR_NAME)};
#undef EW_SCALAR_NAME

typedef const EwDesc *DescTable[CT_EW_NUM_OPS][CT_NUM_DTYPES];

const DescTable &descriptors()
{
    static DescTable table;
    static std::once_flag once;
    std::call_once(once, [] {
        memset(table, 0, sizeof(table));
        fill_part0(table);
        fill_part1(table);
        fill_part2(table);
        fill_part3(table);
    });
    return table;
}
static_assert(CT_EW_PARTS == 4, "descriptors() calls every part's filler");

/* PyTorch's CUDA kernel name for the "not implemented" message: "abs_cpu" -> "abs_cuda". */
void cuda_kernel_name(const char *cpu_name, char *buf, size_t n)
{
    size_t len = strlen(cpu_name);
    if (len > 4 && strcmp(cpu_name + len - 4, "_cpu") == 0) {
        snprintf(buf, n, "%.*s_cuda", (int)(len - 4), cpu_name);
    } else {
        snprintf(buf, n, "%s", cpu_name);
    }
}

/* --- host-side values ------------------------------------------------------------------------- */
/* v = the element of dtype sd at src (host memory), converted to kernel dtype kd. */
void set_value(EwValue &v, int kd, const char *src, int sd)
{
    switch (kd) {
#define EW_SET_VALUE(DT, T, ...)          \
    case CT_##DT:                         \
        v.u.DT = load_as<T>(src, sd);     \
        break;
        CT_EW_KERNEL_DTYPES_ALL(EW_SET_VALUE, 0)
#undef EW_SET_VALUE
    default:
        break;
    }
}

/* v = the op's parameter k in kernel dtype kd, converted as the CPU kernels convert it. */
void set_param(EwValue &v, int kd, const CtOpParams &p, int k)
{
    switch (kd) {
#define EW_SET_PARAM(DT, ...)                 \
    case CT_##DT:                             \
        v.u.DT = CT_EW_PARAM_##DT(&p, k);     \
        break;
        CT_EW_KERNEL_DTYPES_ALL(EW_SET_PARAM, 0)
#undef EW_SET_PARAM
    default:
        break;
    }
}

/* --- paths and launches ------------------------------------------------------------------------- */
enum EwPath { EW_VECTOR = 0, EW_STRIDED = 1 };

/* The vector path needs one contiguous run (after the iterator's coalescing), every tensor
 * operand in its natural dtype, and contiguous operands aligned to their vector size; an input
 * with stride 0 is read as one element (a.bcast). Host scalars take no part. */
int choose_path(const CtIter *it, const EwDesc &d, EwArgs &a)
{
    a.bcast = 0;
    for (int k = 0; k < it->nops; k++) {
        if ((k == 0 || !(a.host & (1u << (k - 1)))) && it->dtypes[k] != d.natural[k]) {
            return EW_STRIDED;
        }
    }
    if (it->ndim != 1) {
        return EW_STRIDED;
    }
    const int64_t n = it->shape[0];
    for (int k = 0; k < it->nops; k++) {
        if (k > 0 && (a.host & (1u << (k - 1)))) {
            continue;
        }
        const int64_t size = kItemsize[d.natural[k]];
        const int64_t stride = it->strides[0][k];
        if (n == 1) {
            continue; /* one element: any stride, no vector access */
        }
        if (k > 0 && stride == 0) {
            a.bcast |= 1u << (k - 1);
            continue;
        }
        if (stride != size) {
            return EW_STRIDED;
        }
        if (n >= d.vec && (uintptr_t)it->data[k] % (uintptr_t)(d.vec * size) != 0) {
            return EW_STRIDED;
        }
    }
    return EW_VECTOR;
}

inline unsigned int grid_for(int64_t work)
{
    int64_t blocks = (work + kThreads - 1) / kThreads;
    return (unsigned int)(blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks);
}

#ifdef CT_EW_HOST_EMULATION
/* The grid-stride loop of the kernels, thread by thread on the host. */
template <typename Fn>
void emulate(int path, int64_t work, Fn &&thread)
{
    const unsigned int blocks = grid_for(work);
    ct_ew_emulated_launch(path, blocks, work);
    const int64_t step = (int64_t)blocks * kThreads;
    for (int64_t first = 0; first < step && first < work; first++) {
        for (int64_t t = first; t < work; t += step) {
            thread(t);
        }
    }
}
#else
/* The descriptors hold the kernels type-erased; the launch gives them back their signature. */
template <typename... Args>
int launch_kernel(const void *kernel, int64_t work, cudaStream_t stream, Args... args)
{
    typedef void (*Kernel)(int64_t, Args...);
    ((Kernel)kernel)<<<grid_for(work), kThreads, 0, stream>>>(work, args...);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}
#endif

int launch_vector(const EwDesc &d, const CtIter *it, EwArgs &a, cudaStream_t stream)
{
    int64_t n = it->numel;
    int64_t work = vector_work(n, d.vec);
#ifdef CT_EW_HOST_EMULATION
    (void)stream;
    emulate(EW_VECTOR, work, [&](int64_t t) { d.vector_thread(t, a, n); });
    return CT_CUDA_OK;
#else
    return launch_kernel(d.vector_kernel, work, stream, a, n);
#endif
}

template <int N>
int launch_strided(const EwDesc &d, const CtIter *it, const EwArgs &a, cudaStream_t stream)
{
    return ct_for_each_piece<N>(it, [&](const CtPiece<N> &p) -> int {
        EwArgs b = a;
        b.out = p.data[0];
        for (int k = 0; k + 1 < N; k++) {
            b.in[k] = p.data[k + 1];
        }
        CtOffsets<N> off = p.offsets();
        int64_t work = p.numel;
#ifdef CT_EW_HOST_EMULATION
        (void)stream;
        emulate(EW_STRIDED, work, [&](int64_t t) { d.strided_thread(t, b, &off); });
        return CT_CUDA_OK;
#else
        return launch_kernel(d.strided_kernel, work, stream, b, off);
#endif
    });
}

int run(const EwDesc &d, const CtIter *it, const CtEwCall *call, cudaStream_t stream)
{
    EwArgs a;
    memset(&a, 0, sizeof(a));
    a.out = it->data[0];
    a.dtype[0] = it->dtypes[0];
    a.round_to = d.natural[0];
    a.compute = (int)call->compute;
    a.host = (call->host_scalars >> 1) & 7u;
    for (int k = 0; k + 1 < it->nops; k++) {
        a.in[k] = it->data[k + 1];
        a.dtype[k + 1] = it->dtypes[k + 1];
        if (a.host & (1u << k)) { /* in host memory (the front end's stack): read it now */
            set_value(a.v[k], k == 0 ? d.in0_kd : d.kd, it->data[k + 1], it->dtypes[k + 1]);
        }
    }
    for (int k = 0; k < 3; k++) {
        set_param(a.p[k], d.kd, call->params, k);
    }
#ifdef CT_EW_HOST_EMULATION
    static_assert(sizeof(a.v) == 24 && sizeof(a.p) == 24, "the harness reads 3 values of 8 bytes");
    ct_ew_emulated_scalars(a.v, a.p, sizeof(a.v));
#endif
    if (choose_path(it, d, a) == EW_VECTOR) {
        return launch_vector(d, it, a, stream);
    }
    switch (d.nops) {
    case 2:
        return launch_strided<2>(d, it, a, stream);
    case 3:
        return launch_strided<3>(d, it, a, stream);
    default:
        return launch_strided<4>(d, it, a, stream);
    }
}

} /* namespace */

int ct_cuda_elementwise(const CtIter *it, const CtEwCall *call)
{
    const int op = (int)call->op;
    if (op < 0 || op >= CT_EW_NUM_OPS || (int)call->compute < 0 || (int)call->compute >= CT_NUM_DTYPES ||
        it->nops != kArity[op] + 1) {
        ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "elementwise op %d called with %d operands", op, it->nops);
        return ct_cuda_raise(CT_CUDA_RUNTIME_ERROR);
    }
    const EwDesc *d = descriptors()[op][call->compute];
    if (d == nullptr) {
        char name[128];
        cuda_kernel_name(kKernelName[op], name, sizeof(name));
        ct_cuda_set_error(CT_CUDA_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name,
                          kScalarTypeName[call->compute]);
        return ct_cuda_raise(CT_CUDA_NOT_IMPLEMENTED);
    }
    if (it->numel == 0) {
        return 0;
    }
    const int device = it->device.index;
    int status = ct_cuda_device_guard(device);
    if (status == CT_CUDA_OK) {
        status = run(*d, it, call, ct_cuda_stream(device));
    }
    return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status);
}
