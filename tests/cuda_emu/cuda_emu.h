/* cuda_emu.h: what a csrc/cuda source needs to compile with g++ and run on the CPU.
 *
 * Force-included (g++ -include) into every source translate.py has rewritten. The CUDA headers
 * give the types (cudaStream_t, dim3, __half, ...) and the runtime's declarations, which
 * emu_runtime.cpp defines; this header turns the execution-space keywords into nothing, makes
 * the built-in variables globals that the emulator sets for the running thread, and declares
 * the device functions the sources call: barriers, warp shuffles, atomics, a few intrinsics and
 * the CUB algorithms. Every thread of a block runs as a fiber (emu_runtime.cpp); __syncthreads
 * and the warp operations switch between them, so the kernels run as written, barriers and
 * shuffles included. __CUDA_ARCH__ stays undefined: the sources' few host branches are the
 * sequential equivalents of their device ones (one thread runs at a time here). */
#ifndef CTORCH_CUDA_EMU_H
#define CTORCH_CUDA_EMU_H

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>
#include <algorithm>
#include <functional>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __forceinline__
#undef __noinline__
#undef __launch_bounds__
#undef __align__
#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;
static const int warpSize = 32;

namespace ct_emu {

/* A launch's configuration, as the triple chevrons take it. */
struct Config {
    dim3 grid, block;
    size_t shared;
    cudaStream_t stream;
    const char *name = ""; /* the kernel, as the source names it (CT_EMU_TRACE=1 prints each launch) */
    Config(dim3 g, dim3 b, size_t s = 0, cudaStream_t st = 0) : grid(g), block(b), shared(s), stream(st) {}
    Config &named(const char *n)
    {
        name = n;
        return *this;
    }
};

/* Runs body once per thread of the grid (emu_runtime.cpp). */
void launch_grid(const Config &c, const std::function<void()> &body);

template <typename F>
void launch(const Config &c, F &&body)
{
    launch_grid(c, std::function<void()>(std::forward<F>(body)));
}

void *dynamic_shared();
void sync_block();
/* One warp-wide exchange: every lane of mask gives value and gets the value of the lane that
 * kind/arg/width pick (shuffles), or the ballot of the lanes' values (kind kBallot). */
enum { kShflIdx, kShflUp, kShflDown, kShflXor, kBallot, kSyncWarp };
uint64_t warp_exchange(unsigned mask, uint64_t value, int kind, int arg, int width);

template <typename T>
uint64_t to_bits(T v)
{
    static_assert(sizeof(T) <= 8, "warp shuffle of a type wider than 8 bytes");
    uint64_t b = 0;
    memcpy(&b, &v, sizeof(T));
    return b;
}
template <typename T>
T from_bits(uint64_t b)
{
    T v;
    memcpy(&v, &b, sizeof(T));
    return v;
}

} /* namespace ct_emu */

/* cuda_runtime.h's template form, which it declares for nvcc only */
template <typename T>
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, T *entry)
{
    return cudaFuncGetAttributes(attr, (const void *)entry);
}

inline void __syncthreads() { ct_emu::sync_block(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { ct_emu::warp_exchange(mask, 0, ct_emu::kSyncWarp, 0, 32); }
inline void __threadfence() {}
inline void __threadfence_block() {}

template <typename T>
T __shfl_sync(unsigned mask, T v, int src, int width = 32)
{
    return ct_emu::from_bits<T>(ct_emu::warp_exchange(mask, ct_emu::to_bits(v), ct_emu::kShflIdx, src, width));
}
template <typename T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    return ct_emu::from_bits<T>(ct_emu::warp_exchange(mask, ct_emu::to_bits(v), ct_emu::kShflUp, (int)delta, width));
}
template <typename T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    return ct_emu::from_bits<T>(
        ct_emu::warp_exchange(mask, ct_emu::to_bits(v), ct_emu::kShflDown, (int)delta, width));
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32)
{
    return ct_emu::from_bits<T>(ct_emu::warp_exchange(mask, ct_emu::to_bits(v), ct_emu::kShflXor, lane_mask, width));
}
inline unsigned __ballot_sync(unsigned mask, int pred)
{
    return (unsigned)ct_emu::warp_exchange(mask, pred != 0, ct_emu::kBallot, 0, 32);
}
inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
inline int __all_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) == __ballot_sync(mask, 1); }

/* Atomics: one thread runs at a time, so a read-modify-write is atomic. */
template <typename T>
T atomicAdd(T *p, T v)
{
    T old = *p;
    *p = old + v;
    return old;
}
template <typename T>
T atomicMin(T *p, T v)
{
    T old = *p;
    *p = v < old ? v : old;
    return old;
}
template <typename T>
T atomicMax(T *p, T v)
{
    T old = *p;
    *p = v > old ? v : old;
    return old;
}
template <typename T>
T atomicOr(T *p, T v)
{
    T old = *p;
    *p = old | v;
    return old;
}
template <typename T>
T atomicExch(T *p, T v)
{
    T old = *p;
    *p = v;
    return old;
}
template <typename T>
T atomicCAS(T *p, T compare, T v)
{
    T old = *p;
    if (old == compare) {
        *p = v;
    }
    return old;
}

inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
template <typename T>
T __ldg(const T *p)
{
    return *p;
}

/* --- the CUB algorithms the sources use ----------------------------------------------------- */
namespace cub {

inline int emu_linear_tid() { return (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)); }

template <typename T, int BLOCK_THREADS>
class BlockReduce {
public:
    struct TempStorage {
        T slot[BLOCK_THREADS];
    };
    explicit BlockReduce(TempStorage &t) : t_(t) {}
    /* the block's reduction, in thread order; valid in thread 0 (as CUB's) */
    template <typename Op>
    T Reduce(T x, Op op)
    {
        const int tid = emu_linear_tid();
        t_.slot[tid] = x;
        __syncthreads();
        T r = x;
        if (tid == 0) {
            r = t_.slot[0];
            for (int i = 1; i < BLOCK_THREADS; i++) {
                r = op(r, t_.slot[i]);
            }
        }
        __syncthreads();
        return r;
    }
    T Sum(T x)
    {
        return Reduce(x, [](T a, T b) { return a + b; });
    }

private:
    TempStorage &t_;
};

template <typename T, int BLOCK_THREADS>
class BlockScan {
public:
    struct TempStorage {
        T slot[BLOCK_THREADS];
    };
    explicit BlockScan(TempStorage &t) : t_(t) {}
    void ExclusiveSum(T x, T &out)
    {
        const int tid = emu_linear_tid();
        t_.slot[tid] = x;
        __syncthreads();
        T s = T(0);
        for (int i = 0; i < tid; i++) {
            s = s + t_.slot[i];
        }
        out = s;
        __syncthreads();
    }

private:
    TempStorage &t_;
};

/* Radix-sort keys as CUB orders them: unsigned as is, signed with the sign bit flipped. */
template <typename K>
uint64_t emu_radix_key(K k, int begin_bit, int end_bit)
{
    static_assert(std::is_integral<K>::value, "emulated radix sort: integer keys only");
    typedef typename std::make_unsigned<K>::type U;
    U u = (U)k;
    if (std::is_signed<K>::value) {
        u ^= (U)((U)1 << (8 * sizeof(K) - 1));
    }
    uint64_t v = (uint64_t)u >> begin_bit;
    const int bits = end_bit - begin_bit;
    return bits >= 64 ? v : v & ((1ull << bits) - 1);
}

template <typename K, typename V>
void emu_sort_range(const K *keys_in, K *keys_out, const V *values_in, V *values_out, int first, int last,
                    int begin_bit, int end_bit)
{
    std::vector<int> order;
    for (int i = first; i < last; i++) {
        order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return emu_radix_key(keys_in[a], begin_bit, end_bit) < emu_radix_key(keys_in[b], begin_bit, end_bit);
    });
    std::vector<K> k(order.size());
    std::vector<V> v(order.size());
    for (size_t i = 0; i < order.size(); i++) {
        k[i] = keys_in[order[i]];
        v[i] = values_in[order[i]];
    }
    std::copy(k.begin(), k.end(), keys_out + first);
    std::copy(v.begin(), v.end(), values_out + first);
}

/* The device algorithms: the first call (no temporary storage) asks the size. */
struct DeviceRadixSort {
    template <typename K, typename V>
    static cudaError_t SortPairs(void *temp, size_t &bytes, const K *keys_in, K *keys_out, const V *values_in,
                                 V *values_out, int n, int begin_bit = 0, int end_bit = 8 * sizeof(K),
                                 cudaStream_t stream = 0)
    {
        if (temp == nullptr) {
            bytes = 256;
            return cudaSuccess;
        }
        emu_sort_range(keys_in, keys_out, values_in, values_out, 0, n, begin_bit, end_bit);
        return cudaSuccess;
    }
};

struct DeviceSegmentedRadixSort {
    template <typename K, typename V, typename Offsets>
    static cudaError_t SortPairs(void *temp, size_t &bytes, const K *keys_in, K *keys_out, const V *values_in,
                                 V *values_out, int n, int nseg, Offsets begin, Offsets end, int begin_bit = 0,
                                 int end_bit = 8 * sizeof(K), cudaStream_t stream = 0)
    {
        if (temp == nullptr) {
            bytes = 256;
            return cudaSuccess;
        }
        for (int s = 0; s < nseg; s++) {
            emu_sort_range(keys_in, keys_out, values_in, values_out, (int)begin[s], (int)end[s], begin_bit, end_bit);
        }
        return cudaSuccess;
    }
};

struct DeviceScan {
    template <typename In, typename Out>
    static cudaError_t ExclusiveSum(void *temp, size_t &bytes, In in, Out out, int64_t n, cudaStream_t stream = 0)
    {
        if (temp == nullptr) {
            bytes = 256;
            return cudaSuccess;
        }
        typename std::remove_reference<decltype(out[0])>::type s = 0;
        for (int64_t i = 0; i < n; i++) {
            auto x = in[i];
            out[i] = s;
            s = s + x;
        }
        return cudaSuccess;
    }
};

} /* namespace cub */

#endif /* CTORCH_CUDA_EMU_H */
