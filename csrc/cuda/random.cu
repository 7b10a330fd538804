/* random.cu: the random kernels on the GPU, the CUDA side of struct CtRandomKernels (random.h).
 *
 * Every sample is philox.h's: element i of a fill is ct_random_store(spec, dtype, block(seed,
 * offset + i)), the same CT_HOST_DEVICE function the CPU kernel calls, whose float operations are
 * written with round-to-nearest intrinsics (no FMA contraction) and whose log/cos are the
 * deterministic ones of philox.h. So a seed gives the same numbers, bit for bit, on the CPU and
 * the GPU, whatever the launch configuration (one thread per element index, grid-stride).
 *
 * - fill: uniform, normal, integer ranges, bernoulli(p), exponential, any dtype;
 * - bernoulli_tensor / normal_tensor: per-element parameters; their arguments are checked on the
 *   GPU first (a flag read back by the host), so that a bad p or std raises the CPU's
 *   RuntimeError before anything is written, as on the CPU;
 * - gamma, dirichlet, poisson, binomial: sampling_math.h's rejection samplers, one thread per element
 *   (per Dirichlet row) drawing from its own sub-stream; _standard_gamma_grad and _dirichlet_grad beside them;
 * - randperm: Philox keys and a stable radix sort of (key, index) pairs (cub), the CPU's order:
 *   ascending keys, ties by index. */
#include "allocator.cuh"
#include "random.cuh"
#include <cub/device/device_radix_sort.cuh>
#include <limits.h>

namespace {

constexpr int kThreads = 256;

#define CT_ITEMSIZE_ROW(NAME, ctype, ...) sizeof(ctype),
constexpr size_t kItemSize[CT_NUM_DTYPES] = {CT_DTYPE_LIST(CT_ITEMSIZE_ROW)};
#undef CT_ITEMSIZE_ROW

/* Blocks for a grid-stride loop over n elements: enough to fill the GPU, no more. */
unsigned int grid_for(int64_t n, int device)
{
    int64_t most = (int64_t)ct_cuda_sm_count(device) * 32;
    int64_t blocks = (n + kThreads - 1) / kThreads;
    return (unsigned int)(blocks < 1 ? 1 : blocks < most ? blocks : most);
}

/* Device scratch memory from the caching allocator (see index.cu). */
struct Scratch {
    int device = 0;
    void *ptr = nullptr;
    Scratch() = default;
    Scratch(const Scratch &) = delete;
    Scratch &operator=(const Scratch &) = delete;
    ~Scratch()
    {
        if (ptr != nullptr) {
            (void)ct_cuda_caching_free(device, ptr);
        }
    }
    int alloc(int dev, size_t nbytes)
    {
        device = dev;
        return ct_cuda_caching_malloc(dev, nbytes > 0 ? nbytes : 1, &ptr);
    }
};

#define CT_GRID_STRIDE(i, n)                                                             \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);             \
         i += (int64_t)gridDim.x * blockDim.x)

/* --- per-element bodies (host-callable for tests/cuda_host) ---------------------------------- */
template <int D>
__host__ __device__ __forceinline__ void fill_element(char *out, const CtRandomSpec &spec, int64_t i)
{
    ct_random_store(&spec, (CtDType)D, ct_philox_block(spec.seed, spec.offset + (uint64_t)i),
                    out + i * (int64_t)sizeof(typename CtCudaType<D>::T));
}

template <int PD>
__host__ __device__ __forceinline__ double load_double(const char *p, int64_t i)
{
    return (double)ct_load<PD>(p + i * (int64_t)sizeof(typename CtCudaType<PD>::T));
}

template <int PD>
__host__ __device__ __forceinline__ void bernoulli_element(char *out, CtDType out_dtype, size_t out_size,
                                                           const char *p, uint64_t seed, uint64_t offset, int64_t i)
{
    CtPhiloxBlock b = ct_philox_block(seed, offset + (uint64_t)i);
    ct_store_int64(out_dtype, out + i * (int64_t)out_size, ct_philox_bernoulli(b, load_double<PD>(p, i)));
}

template <int D>
__host__ __device__ __forceinline__ void normal_element(char *out, const char *mean, const char *std, uint64_t seed,
                                                        uint64_t offset, int64_t i)
{
    CtPhiloxBlock b = ct_philox_block(seed, offset + (uint64_t)i);
    double v = ct_philox_normal(b, load_double<D>(mean, i), load_double<D>(std, i));
    ct_store_double((CtDType)D, out + i * (int64_t)sizeof(typename CtCudaType<D>::T), v);
}

/* --- kernels ----------------------------------------------------------------------------------- */
template <int D>
__global__ void fill_kernel(char *out, int64_t n, CtRandomSpec spec)
{
    const CtRandomSpec s = spec;
    CT_GRID_STRIDE(i, n)
    {
        fill_element<D>(out, s, i);
    }
}

/* bad = 1 when some p is outside [0, 1] (NaN included). */
template <int PD>
__global__ void bernoulli_check_kernel(const char *p, int64_t n, int *bad)
{
    CT_GRID_STRIDE(i, n)
    {
        double v = load_double<PD>(p, i);
        if (!(v >= 0 && v <= 1)) {
            *bad = 1;
        }
    }
}

template <int PD>
__global__ void bernoulli_kernel(char *out, CtDType out_dtype, size_t out_size, const char *p, int64_t n,
                                 uint64_t seed, uint64_t offset)
{
    CT_GRID_STRIDE(i, n)
    {
        bernoulli_element<PD>(out, out_dtype, out_size, p, seed, offset, i);
    }
}

/* bad = 1 when some std is negative or NaN. */
template <int D>
__global__ void std_check_kernel(const char *std, int64_t n, int *bad)
{
    CT_GRID_STRIDE(i, n)
    {
        if (!(load_double<D>(std, i) >= 0.0)) {
            *bad = 1;
        }
    }
}

template <int D>
__global__ void normal_tensor_kernel(char *out, const char *mean, const char *std, int64_t n, uint64_t seed,
                                     uint64_t offset)
{
    CT_GRID_STRIDE(i, n)
    {
        normal_element<D>(out, mean, std, seed, offset, i);
    }
}

__global__ void randperm_keys_kernel(uint64_t *keys, uint32_t *order, int64_t n, uint64_t seed, uint64_t offset)
{
    CT_GRID_STRIDE(i, n)
    {
        keys[i] = ct_philox_u64(ct_philox_block(seed, offset + (uint64_t)i));
        order[i] = (uint32_t)i;
    }
}

__global__ void randperm_store_kernel(char *out, CtDType dtype, size_t isz, const uint32_t *order, int64_t n)
{
    CT_GRID_STRIDE(i, n)
    {
        ct_store_int64(dtype, out + i * (int64_t)isz, (int64_t)order[i]);
    }
}

/* --- launchers --------------------------------------------------------------------------------- */
/* A device flag (int, 0) for the argument checks, and its value after the checks. */
int check_flag_init(Scratch *flag, int device, cudaStream_t stream)
{
    CT_CUDA_TRY(flag->alloc(device, sizeof(int)));
    CT_CUDA_CHECK(cudaMemsetAsync(flag->ptr, 0, sizeof(int), stream));
    return CT_CUDA_OK;
}

int check_flag_read(const Scratch &flag, cudaStream_t stream, int *bad)
{
    CT_CUDA_TRY(ct_cuda_sync_debug_check());
    CT_CUDA_CHECK(cudaMemcpyAsync(bad, flag.ptr, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CT_CUDA_CHECK(cudaStreamSynchronize(stream));
    return CT_CUDA_OK;
}

template <int D>
int launch_fill(char *out, int64_t n, const CtRandomSpec &spec, int device, cudaStream_t stream)
{
    fill_kernel<D><<<grid_for(n, device), kThreads, 0, stream>>>(out, n, spec);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

int run_fill(void *data, int64_t n, CtDType dtype, const CtRandomSpec *spec, int device)
{
    if (n <= 0) {
        return CT_CUDA_OK;
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaStream_t stream = ct_cuda_stream(device);
    switch (dtype) {
#define CT_FILL_CASE(NAME, ...) \
    case CT_##NAME:             \
        return launch_fill<CT_##NAME>((char *)data, n, *spec, device, stream);
        CT_DTYPE_LIST(CT_FILL_CASE)
#undef CT_FILL_CASE
    default:
        break;
    }
    return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "random fill: unsupported dtype %d", (int)dtype);
}

template <int PD>
int launch_bernoulli(char *out, CtDType out_dtype, const char *p, int64_t n, uint64_t seed, uint64_t offset,
                     int device, cudaStream_t stream)
{
    Scratch flag;
    int bad = 0;
    CT_CUDA_TRY(check_flag_init(&flag, device, stream));
    bernoulli_check_kernel<PD><<<grid_for(n, device), kThreads, 0, stream>>>(p, n, (int *)flag.ptr);
    CT_CUDA_CHECK_LAUNCH();
    CT_CUDA_TRY(check_flag_read(flag, stream, &bad));
    if (bad) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR,
                                 "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                                 "message be improved?  If so, please report an enhancement request to PyTorch.)");
    }
    bernoulli_kernel<PD><<<grid_for(n, device), kThreads, 0, stream>>>(out, out_dtype, kItemSize[out_dtype], p, n,
                                                                       seed, offset);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

int run_bernoulli(void *out, CtDType out_dtype, const void *p, CtDType p_dtype, int64_t n, uint64_t seed,
                  uint64_t offset, int device)
{
    if (n <= 0) {
        return CT_CUDA_OK;
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaStream_t stream = ct_cuda_stream(device);
    char *o = (char *)out;
    const char *q = (const char *)p;
    switch (p_dtype) {
    case CT_F16:
        return launch_bernoulli<CT_F16>(o, out_dtype, q, n, seed, offset, device, stream);
    case CT_BF16:
        return launch_bernoulli<CT_BF16>(o, out_dtype, q, n, seed, offset, device, stream);
    case CT_F32:
        return launch_bernoulli<CT_F32>(o, out_dtype, q, n, seed, offset, device, stream);
    case CT_F64:
        return launch_bernoulli<CT_F64>(o, out_dtype, q, n, seed, offset, device, stream);
    default:
        break;
    }
    return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "bernoulli: p must be a floating point tensor");
}

template <int D>
int launch_normal(char *out, const char *mean, const char *std, int64_t n, uint64_t seed, uint64_t offset, int device,
                  cudaStream_t stream)
{
    Scratch flag;
    int bad = 0;
    CT_CUDA_TRY(check_flag_init(&flag, device, stream));
    std_check_kernel<D><<<grid_for(n, device), kThreads, 0, stream>>>(std, n, (int *)flag.ptr);
    CT_CUDA_CHECK_LAUNCH();
    CT_CUDA_TRY(check_flag_read(flag, stream, &bad));
    if (bad) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "normal expects all elements of std >= 0.0");
    }
    normal_tensor_kernel<D><<<grid_for(n, device), kThreads, 0, stream>>>(out, mean, std, n, seed, offset);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

int run_normal(void *out, const void *mean, const void *std, CtDType dtype, int64_t n, uint64_t seed,
               uint64_t offset, int device)
{
    if (n <= 0) {
        return CT_CUDA_OK;
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaStream_t stream = ct_cuda_stream(device);
    char *o = (char *)out;
    const char *m = (const char *)mean, *s = (const char *)std;
    switch (dtype) {
    case CT_F16:
        return launch_normal<CT_F16>(o, m, s, n, seed, offset, device, stream);
    case CT_BF16:
        return launch_normal<CT_BF16>(o, m, s, n, seed, offset, device, stream);
    case CT_F32:
        return launch_normal<CT_F32>(o, m, s, n, seed, offset, device, stream);
    case CT_F64:
        return launch_normal<CT_F64>(o, m, s, n, seed, offset, device, stream);
    default:
        break;
    }
    return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "normal: unsupported dtype %d", (int)dtype);
}

int run_randperm(void *out, CtDType dtype, int64_t n, uint64_t seed, uint64_t offset, int device)
{
    if (n <= 0) {
        return CT_CUDA_OK;
    }
    if (n > INT_MAX) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "randperm on CUDA supports n < 2^31, got n=%lld",
                                 (long long)n);
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaStream_t stream = ct_cuda_stream(device);
    Scratch keys_in, keys_out, order_in, order_out, temp;
    CT_CUDA_TRY(keys_in.alloc(device, sizeof(uint64_t) * (size_t)n));
    CT_CUDA_TRY(keys_out.alloc(device, sizeof(uint64_t) * (size_t)n));
    CT_CUDA_TRY(order_in.alloc(device, sizeof(uint32_t) * (size_t)n));
    CT_CUDA_TRY(order_out.alloc(device, sizeof(uint32_t) * (size_t)n));
    uint64_t *ki = (uint64_t *)keys_in.ptr, *ko = (uint64_t *)keys_out.ptr;
    uint32_t *oi = (uint32_t *)order_in.ptr, *oo = (uint32_t *)order_out.ptr;
    randperm_keys_kernel<<<grid_for(n, device), kThreads, 0, stream>>>(ki, oi, n, seed, offset);
    CT_CUDA_CHECK_LAUNCH();
    /* stable: equal keys keep their index order, as the CPU's (key, index) order */
    size_t temp_bytes = 0;
    CT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, ki, ko, oi, oo, (int)n, 0, 64, stream));
    CT_CUDA_TRY(temp.alloc(device, temp_bytes));
    CT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.ptr, temp_bytes, ki, ko, oi, oo, (int)n, 0, 64, stream));
    randperm_store_kernel<<<grid_for(n, device), kThreads, 0, stream>>>((char *)out, dtype, kItemSize[dtype], oo, n);
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

/* --- the rejection samplers (sampling_math.h): one thread per element (per row for dirichlet),
 * each with its own sub-stream, so the launch shape does not matter ----------------------------- */
enum SamplerKind { kGamma, kPoisson, kBinomial, kGammaGrad, kDirichletGrad };

template <int D>
__global__ void sampler_kernel(char *out, const char *a, const char *b, const char *c, int64_t n, uint64_t seed,
                               uint64_t offset, SamplerKind kind)
{
    const double tiny = ct_float_tiny((CtDType)D);
    CT_GRID_STRIDE(i, n)
    {
        double x = load_double<D>(a, i), v;
        if (kind == kGamma) {
            v = ct_gamma_element(seed, offset, i, x, tiny);
        } else if (kind == kPoisson) {
            v = ct_poisson_element(seed, offset, i, x);
        } else if (kind == kBinomial) {
            v = ct_binomial_element(seed, offset, i, x, load_double<D>(b, i));
        } else if (kind == kGammaGrad) {
            v = ct_standard_gamma_grad(x, load_double<D>(b, i));
        } else {
            v = ct_dirichlet_grad(x, load_double<D>(b, i), load_double<D>(c, i));
        }
        ct_store_double((CtDType)D, out + i * (int64_t)sizeof(typename CtCudaType<D>::T), v);
    }
}

/* row r: the gammas summed in order, drawn again and divided (the CPU's dirichlet_chunk) */
template <int D>
__global__ void dirichlet_kernel(char *out, const char *alpha, int64_t rows, int64_t cols, uint64_t seed,
                                 uint64_t offset)
{
    const double tiny = ct_float_tiny((CtDType)D);
    CT_GRID_STRIDE(r, rows)
    {
        int64_t first = r * cols;
        double sum = 0.0;
        for (int64_t i = first; i < first + cols; i++) {
            sum = CT_DADD(sum, ct_dirichlet_gamma(seed, offset, i, load_double<D>(alpha, i)));
        }
        for (int64_t i = first; i < first + cols; i++) {
            double g = ct_dirichlet_gamma(seed, offset, i, load_double<D>(alpha, i));
            ct_store_double((CtDType)D, out + i * (int64_t)sizeof(typename CtCudaType<D>::T),
                            ct_clamp_tiny(CT_DDIV(g, sum), tiny));
        }
    }
}

/* bad = 1 when some rate is negative or NaN. */
template <int D>
__global__ void rate_check_kernel(const char *rate, int64_t n, int *bad)
{
    CT_GRID_STRIDE(i, n)
    {
        if (!(load_double<D>(rate, i) >= 0.0)) {
            *bad = 1;
        }
    }
}

template <int D>
int launch_sampler(char *out, const char *a, const char *b, const char *c, int64_t n, int64_t cols, uint64_t seed,
                   uint64_t offset, int kind, int device, cudaStream_t stream)
{
    if (kind == kPoisson) {
        Scratch flag;
        int bad = 0;
        CT_CUDA_TRY(check_flag_init(&flag, device, stream));
        rate_check_kernel<D><<<grid_for(n, device), kThreads, 0, stream>>>(a, n, (int *)flag.ptr);
        CT_CUDA_CHECK_LAUNCH();
        CT_CUDA_TRY(check_flag_read(flag, stream, &bad));
        if (bad) {
            return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "invalid Poisson rate, expected rate to be non-negative");
        }
    }
    if (cols > 0) { /* dirichlet: n / cols rows */
        dirichlet_kernel<D><<<grid_for(n / cols, device), kThreads, 0, stream>>>(out, a, n / cols, cols, seed, offset);
    } else {
        sampler_kernel<D><<<grid_for(n, device), kThreads, 0, stream>>>(out, a, b, c, n, seed, offset,
                                                                        (SamplerKind)kind);
    }
    CT_CUDA_CHECK_LAUNCH();
    return CT_CUDA_OK;
}

/* kind: a SamplerKind, or cols > 0 for dirichlet; c: dirichlet_grad's total */
int run_sampler(void *out, const void *a, const void *b, CtDType dtype, int64_t n, int64_t cols, uint64_t seed,
                uint64_t offset, int kind, int device, const void *c = nullptr)
{
    if (n <= 0) {
        return CT_CUDA_OK;
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaStream_t stream = ct_cuda_stream(device);
    char *o = (char *)out;
    const char *x = (const char *)a, *y = (const char *)b, *z = (const char *)c;
    switch (dtype) {
    case CT_F16:
        return launch_sampler<CT_F16>(o, x, y, z, n, cols, seed, offset, kind, device, stream);
    case CT_BF16:
        return launch_sampler<CT_BF16>(o, x, y, z, n, cols, seed, offset, kind, device, stream);
    case CT_F32:
        return launch_sampler<CT_F32>(o, x, y, z, n, cols, seed, offset, kind, device, stream);
    case CT_F64:
        return launch_sampler<CT_F64>(o, x, y, z, n, cols, seed, offset, kind, device, stream);
    default:
        break;
    }
    return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "random sampler: unsupported dtype %d", (int)dtype);
}

int finish(int status) { return status == CT_CUDA_OK ? 0 : ct_cuda_raise(status); }

} /* namespace */

/* --- the entries of struct CtRandomKernels ------------------------------------------------------ */
int ct_cuda_random_fill(void *data, int64_t n, CtDType dtype, const CtRandomSpec *spec, CtDevice device)
{
    return finish(run_fill(data, n, dtype, spec, device.index));
}

int ct_cuda_bernoulli_tensor(void *out, CtDType out_dtype, const void *p, CtDType p_dtype, int64_t n, uint64_t seed,
                             uint64_t offset, CtDevice device)
{
    return finish(run_bernoulli(out, out_dtype, p, p_dtype, n, seed, offset, device.index));
}

int ct_cuda_normal_tensor(void *out, const void *mean, const void *std, CtDType dtype, int64_t n, uint64_t seed,
                          uint64_t offset, CtDevice device)
{
    return finish(run_normal(out, mean, std, dtype, n, seed, offset, device.index));
}

int ct_cuda_randperm(void *out, CtDType dtype, int64_t n, uint64_t seed, uint64_t offset, CtDevice device)
{
    return finish(run_randperm(out, dtype, n, seed, offset, device.index));
}


int ct_cuda_gamma(void *out, const void *alpha, CtDType dtype, int64_t n, uint64_t seed, uint64_t offset,
                  CtDevice device)
{
    return finish(run_sampler(out, alpha, nullptr, dtype, n, 0, seed, offset, kGamma, device.index));
}

int ct_cuda_dirichlet(void *out, const void *alpha, CtDType dtype, int64_t rows, int64_t cols, uint64_t seed,
                      uint64_t offset, CtDevice device)
{
    return finish(run_sampler(out, alpha, nullptr, dtype, rows * cols, cols, seed, offset, kGamma, device.index));
}

int ct_cuda_poisson(void *out, const void *rate, CtDType dtype, int64_t n, uint64_t seed, uint64_t offset,
                    CtDevice device)
{
    return finish(run_sampler(out, rate, nullptr, dtype, n, 0, seed, offset, kPoisson, device.index));
}

int ct_cuda_binomial(void *out, const void *count, const void *prob, CtDType dtype, int64_t n, uint64_t seed,
                     uint64_t offset, CtDevice device)
{
    return finish(run_sampler(out, count, prob, dtype, n, 0, seed, offset, kBinomial, device.index));
}

int ct_cuda_standard_gamma_grad(void *out, const void *alpha, const void *x, CtDType dtype, int64_t n,
                                CtDevice device)
{
    return finish(run_sampler(out, alpha, x, dtype, n, 0, 0, 0, kGammaGrad, device.index));
}

int ct_cuda_dirichlet_grad(void *out, const void *x, const void *alpha, const void *total, CtDType dtype, int64_t n,
                           CtDevice device)
{
    return finish(run_sampler(out, x, alpha, dtype, n, 0, 0, 0, kDirichletGrad, device.index, total));
}
