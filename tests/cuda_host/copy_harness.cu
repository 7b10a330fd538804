/* copy_harness.cu: checks csrc/cuda/copy.cu and offsets.cuh on the host, without a GPU.
 *
 * copy.cu is included whole, so its per-thread bodies (host-callable) can be run in loops that
 * stand in for the grid, and its launchers can be called against fake_cudart.cpp, which records
 * kernel launches instead of running them. Checked here:
 * - every (dst, src) dtype pair converts as the CPU's cast loops (CT_STORE_x(CT_LOAD_y)) on
 *   edge values (16-bit float rounding and specials, fractions, wrap-around to small ints);
 * - the vectorised contiguous kernel covers exactly n elements for every n (vector part and
 *   tail), writing nothing outside;
 * - CtOffsets<2>::get (magic-number division) matches a naive index computation;
 * - ct_for_each_piece cuts iteration spaces of 2^31 elements or more into pieces that cover the
 *   space in order with correct base pointers;
 * - launch_cast picks cudaMemcpyAsync / the vectorised kernel / the strided kernel and sizes the
 *   grids to cover every element;
 * - ct_cuda_memcpy_peer orders a GPU-to-GPU copy after both devices' streams and before their
 *   later work (events both ways, the copy on the source's stream, each with its device current). */
#include "copy.cu"
#include "fake_cudart.h"
#include <math.h>
#include <random>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <vector>

/* --- what runtime.cu and allocator.cu provide to copy.cu ---------------------------------------- */
static char error_text[4096];
const CtCudaHost *ct_cuda_host = nullptr;
#define INFO_ROW(NAME, ctype, acctype, pyname, npy, dlc, dlb, kind, scalar, cpp) \
    {pyname, scalar, cpp, sizeof(ctype), kind, npy, dlc, dlb},
const CtDTypeInfo ct_dtype_info[CT_NUM_DTYPES] = {CT_DTYPE_LIST(INFO_ROW)};
int ct_cuda_set_error(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_text, sizeof(error_text), fmt, ap);
    va_end(ap);
    return status;
}
int ct_cuda_record_error(cudaError_t err, const char *expr, const char *func, const char *file, int line)
{
    return ct_cuda_set_error(CT_CUDA_ERROR, "CUDA error in %s", expr);
}
int ct_cuda_raise(int status) { return -1; }
/* device 0: the legacy default stream; others a stream of their own (for the peer copies) */
cudaStream_t ct_cuda_stream(int device) { return (cudaStream_t)(uintptr_t)(0x100 * device); }
int ct_cuda_host_record_use(const void *ptr, int device, cudaStream_t stream) { return CT_CUDA_OK; }
int ct_cuda_sync_debug_check(void) { return CT_CUDA_OK; } /* set_sync_debug_mode('default') */

static int failures = 0;
#define CHECK(c, ...)                                              \
    do {                                                           \
        if (!(c)) {                                                \
            if (failures < 40) {                                   \
                printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #c); \
                printf(__VA_ARGS__);                               \
                printf("\n");                                      \
            }                                                      \
            failures++;                                            \
        }                                                          \
    } while (0)

/* --- 1. conversions ------------------------------------------------------------------------------ */
#define REF(DST, SRC) \
    static void ref_##SRC##_to_##DST(char *d, const char *s) { CT_STORE_##DST(d, CT_LOAD_##SRC(s)); }
#define REFS_FROM(SRC, ...) \
    REF(BOOL, SRC) REF(U8, SRC) REF(I8, SRC) REF(I16, SRC) REF(I32, SRC) REF(I64, SRC) REF(F16, SRC) REF(BF16, SRC) \
    REF(F32, SRC) REF(F64, SRC)
CT_DTYPE_LIST(REFS_FROM)
#define REF_ROW(SRC, ...)                                                                                     \
    {ref_##SRC##_to_BOOL, ref_##SRC##_to_U8,   ref_##SRC##_to_I8,   ref_##SRC##_to_I16, ref_##SRC##_to_I32, \
     ref_##SRC##_to_I64,  ref_##SRC##_to_F16,  ref_##SRC##_to_BF16, ref_##SRC##_to_F32, ref_##SRC##_to_F64},
typedef void (*Conv)(char *, const char *);
static const Conv ref_table[CT_NUM_DTYPES][CT_NUM_DTYPES] = {CT_DTYPE_LIST(REF_ROW)}; /* [src][dst] */

template <int DST, int SRC>
static void gpu_conv(char *d, const char *s)
{
    ct_store<DST>(d, ct_load<SRC>(s));
}
template <int DST, int... SRC>
constexpr std::array<Conv, CT_NUM_DTYPES> conv_row(std::integer_sequence<int, SRC...>)
{
    return std::array<Conv, CT_NUM_DTYPES>{{&gpu_conv<DST, SRC>...}};
}
template <int... DST>
constexpr std::array<std::array<Conv, CT_NUM_DTYPES>, CT_NUM_DTYPES> conv_table(std::integer_sequence<int, DST...>)
{
    return std::array<std::array<Conv, CT_NUM_DTYPES>, CT_NUM_DTYPES>{
        {conv_row<DST>(std::make_integer_sequence<int, CT_NUM_DTYPES>())...}};
}
static const auto gpu_table = conv_table(std::make_integer_sequence<int, CT_NUM_DTYPES>()); /* [dst][src] */

/* The value of an element as a double (NaN for NaN), to compare results. */
static double value_of(CtDType d, const char *p)
{
    switch (d) {
#define VALUE_CASE(NAME, ...) \
    case CT_##NAME:           \
        return (double)CT_LOAD_##NAME(p);
        CT_DTYPE_LIST(VALUE_CASE)
#undef VALUE_CASE
    default:
        return 0;
    }
}

/* Whether C defines converting v to integer type d (in range), or, for the small integer types,
 * the x86-64 conversion through int32 that both sides use (|v| < 2^31). */
static bool defined_int_conversion(CtDType d, double v)
{
    if (isnan(v) || isinf(v)) {
        return false;
    }
    switch (d) {
    case CT_U8:
    case CT_I8:
    case CT_I16:
    case CT_I32:
        return v > -2147483648.0 && v < 2147483647.0;
    case CT_I64:
        return v > -9.2e18 && v < 9.2e18;
    default:
        return true;
    }
}

static void check_conversions(void)
{
    const double values[] = {0.0,     -0.0,       1.0,        -1.0,     0.5,      1.5,        2.5,       -2.5,
                             0.1,     100.7,      -100.7,     127.0,    128.0,    200.0,      255.0,     256.0,
                             -128.0,  -129.0,     -200.0,     300.5,    65504.0,  65519.0,    65520.0,   70000.0,
                             1e-8,    3e-8,       6e-8,       2.98e-8,  3e-5,     6.1e-5,     1e10,      -1e10,
                             3.4e38,  1e300,      -1e300,     INFINITY, -INFINITY, NAN,       16777217.0, 1e15 + 1,
                             2147483647.0, -2147483648.0, 4294967295.0, 9007199254740993.0, 0.333333333333};
    const int64_t ints[] = {0, 1, -1, 127, 128, 255, 256, -128, -129, 32767, 32768, -32769, 65535, 2147483647,
                            -2147483648LL, 4294967296LL, 16777217, 9007199254740993LL, INT64_MAX, INT64_MIN};
    for (int src = 0; src < CT_NUM_DTYPES; src++) {
        std::vector<std::vector<char>> inputs;
        bool src_int = ct_dtype_info[src].kind != CT_KIND_FLOAT;
        if (src_int) {
            for (int64_t v : ints) {
                std::vector<char> buf(8, 0);
                /* the integer as its wrap-around in the source type (bool: v != 0) */
                switch (src) {
#define INT_CASE(NAME, ctype, ...) \
    case CT_##NAME:                \
        *(ctype *)buf.data() = (ctype)v; \
        break;
                    CT_DTYPE_LIST(INT_CASE)
#undef INT_CASE
                }
                inputs.push_back(buf);
            }
        } else {
            for (double v : values) {
                std::vector<char> buf(8, 0);
                switch (src) {
                case CT_F16:
                    CT_STORE_F16(buf.data(), v);
                    break;
                case CT_BF16:
                    CT_STORE_BF16(buf.data(), v);
                    break;
                case CT_F32:
                    CT_STORE_F32(buf.data(), v);
                    break;
                default:
                    CT_STORE_F64(buf.data(), v);
                    break;
                }
                inputs.push_back(buf);
            }
        }
        for (int dst = 0; dst < CT_NUM_DTYPES; dst++) {
            for (const std::vector<char> &in : inputs) {
                double v = value_of((CtDType)src, in.data());
                if (ct_dtype_info[dst].kind == CT_KIND_INT && !src_int && !defined_int_conversion((CtDType)dst, v)) {
                    continue; /* undefined in C: CPU and GPU may legitimately differ */
                }
                char want[8] = {0}, got[8] = {0};
                ref_table[src][dst](want, in.data());
                gpu_table[dst][src](got, in.data());
                double w = value_of((CtDType)dst, want), g = value_of((CtDType)dst, got);
                bool same = memcmp(want, got, ct_dtype_info[dst].itemsize) == 0 || (isnan(w) && isnan(g));
                CHECK(same, "%s -> %s of %.17g: CPU %.17g, GPU %.17g", ct_dtype_info[src].name,
                      ct_dtype_info[dst].name, v, w, g);
            }
        }
    }
}

/* --- 2. the contiguous kernel's threads ------------------------------------------------------------ */
template <int DST, int SRC>
static void check_contiguous_pair(void)
{
    typedef typename CtCudaType<DST>::T TD;
    typedef typename CtCudaType<SRC>::T TS;
    if constexpr (DST == SRC) { /* same dtype: cudaMemcpyAsync, no kernel */
        return;
    }
    constexpr int VEC = vec_size<DST, SRC>();
    const int64_t sizes[] = {0, 1, 2, 3, VEC - 1, VEC, VEC + 1, 2 * VEC + 3, 255, 1000, 4099};
    for (int64_t n : sizes) {
        if (n < 0) {
            continue;
        }
        const int guard = 64;
        alignas(16) static unsigned char src_bytes[(4099 + 64) * 8];
        TS *src = (TS *)src_bytes;
        for (int64_t i = 0; i < n; i++) {
            double v = (double)((i * 37) % 251) - 100.0 + (SRC == CT_BOOL ? 0 : 0.25);
            char tmp[8];
            CT_STORE_F64(tmp, v);
            gpu_conv<SRC, CT_F64>((char *)&src[i], tmp);
        }
        alignas(16) static unsigned char out[(4099 + 64) * 8 + 64];
        memset(out, 0xAB, sizeof(out));
        char *dst = (char *)out;
        int64_t threads = (int64_t)ct_cuda_blocks(n / VEC, kThreads) * kThreads;
        for (int64_t t = 0; t < threads; t++) {
            cast_contiguous_thread<DST, SRC, VEC>(dst, (const char *)src, n, t);
        }
        for (int64_t i = 0; i < n; i++) {
            char want[8];
            gpu_conv<DST, SRC>(want, (const char *)&src[i]);
            CHECK(memcmp(want, dst + i * sizeof(TD), sizeof(TD)) == 0, "contiguous %s -> %s, n=%lld, element %lld",
                  ct_dtype_info[SRC].name, ct_dtype_info[DST].name, (long long)n, (long long)i);
        }
        for (int64_t b = n * (int64_t)sizeof(TD); b < n * (int64_t)sizeof(TD) + guard; b++) {
            CHECK(out[b] == 0xAB, "contiguous %s -> %s, n=%lld wrote past the end", ct_dtype_info[SRC].name,
                  ct_dtype_info[DST].name, (long long)n);
        }
    }
}

template <int DST, int... SRC>
static void check_contiguous_row(std::integer_sequence<int, SRC...>)
{
    int dummy[] = {0, (check_contiguous_pair<DST, SRC>(), 0)...};
    (void)dummy;
}
template <int... DST>
static void check_contiguous(std::integer_sequence<int, DST...>)
{
    int dummy[] = {0, (check_contiguous_row<DST>(std::make_integer_sequence<int, CT_NUM_DTYPES>()), 0)...};
    (void)dummy;
}

/* --- 3. offsets ---------------------------------------------------------------------------------- */
static void reference_offsets(const CtPiece<2> &p, int64_t i, int64_t (&o)[2])
{
    o[0] = o[1] = 0;
    for (int d = 0; d < p.ndim; d++) {
        int64_t r = i % p.shape[d];
        i /= p.shape[d];
        o[0] += r * p.strides[d][0];
        o[1] += r * p.strides[d][1];
    }
}

static void check_offsets(void)
{
    std::mt19937_64 rng(0);
    for (int trial = 0; trial < 400; trial++) {
        CtPiece<2> p;
        p.ndim = 1 + (int)(rng() % (trial < 300 ? 6 : CT_MAX_DIMS));
        int64_t n = 1;
        for (int d = 0; d < p.ndim; d++) {
            int64_t cap = p.ndim > 10 ? 2 : 9;
            p.shape[d] = 1 + (int64_t)(rng() % cap);
            n *= p.shape[d];
            for (int k = 0; k < 2; k++) {
                int64_t s = (int64_t)(rng() % 7) - 1; /* negative, zero (broadcast) and positive */
                p.strides[d][k] = s * 4 * (int64_t)(1 + rng() % 1000);
            }
        }
        if (trial % 50 == 0) { /* large sizes near 2^31 */
            p.ndim = 2;
            p.shape[0] = 46341;
            p.shape[1] = 46340;
            n = p.shape[0] * p.shape[1];
        }
        p.numel = n;
        CtOffsets<2> off = p.offsets();
        int64_t count = n < 5000 ? n : 5000;
        for (int64_t j = 0; j < count; j++) {
            int64_t i = n < 5000 ? j : (int64_t)(rng() % (uint64_t)n);
            if (j == count - 1) {
                i = n - 1;
            }
            int64_t want[2], got[2];
            reference_offsets(p, i, want);
            off.get((uint32_t)i, got);
            CHECK(want[0] == got[0] && want[1] == got[1], "offsets of %lld (ndim %d): %lld,%lld vs %lld,%lld",
                  (long long)i, p.ndim, (long long)got[0], (long long)got[1], (long long)want[0], (long long)want[1]);
        }
    }
}

/* --- 4. pieces of huge iteration spaces ------------------------------------------------------------ */
static void check_pieces(int ndim, const int64_t *shape)
{
    CtIter it;
    memset(&it, 0, sizeof(it));
    it.nops = 2;
    it.ndim = ndim;
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        it.shape[d] = shape[d];
        it.strides[d][0] = d == 0 ? 2 : it.strides[d - 1][0] * shape[d - 1]; /* contiguous int16 */
        it.strides[d][1] = d == 0 ? 8 : it.strides[d - 1][1] * shape[d - 1] + 8;
        n *= shape[d];
    }
    it.numel = n;
    char *base0 = (char *)0x100000, *base1 = (char *)0x900000;
    it.data[0] = base0;
    it.data[1] = base1;
    CtPiece<2> whole;
    whole.ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        whole.shape[d] = shape[d];
        whole.strides[d][0] = it.strides[d][0];
        whole.strides[d][1] = it.strides[d][1];
    }
    int64_t covered = 0;
    int pieces = 0;
    std::mt19937_64 rng(1);
    int status = ct_for_each_piece<2>(&it, [&](const CtPiece<2> &p) -> int {
        pieces++;
        CHECK(p.numel > 0 && p.numel <= CT_MAX_INDEX32, "piece of %lld elements", (long long)p.numel);
        CtOffsets<2> off = p.offsets();
        for (int s = 0; s < 64; s++) {
            int64_t local = s == 0 ? 0 : s == 1 ? p.numel - 1 : (int64_t)(rng() % (uint64_t)p.numel);
            int64_t want[2], got[2];
            reference_offsets(whole, covered + local, want);
            off.get((uint32_t)local, got);
            CHECK((p.data[0] - base0) + got[0] == want[0] && (p.data[1] - base1) + got[1] == want[1],
                  "piece %d, element %lld", pieces, (long long)local);
        }
        covered += p.numel;
        return CT_CUDA_OK;
    });
    CHECK(status == CT_CUDA_OK, "status %d", status);
    CHECK(covered == n, "covered %lld of %lld elements", (long long)covered, (long long)n);
    printf("  %lld elements in %d pieces\n", (long long)n, pieces);
}

/* --- 5. launch decisions ---------------------------------------------------------------------------- */
static CtIter iter_1d(void *dst, CtDType dd, const void *src, CtDType sd, int64_t n, int64_t src_stride_elems)
{
    CtIter it;
    memset(&it, 0, sizeof(it));
    it.nops = 2;
    it.ndim = 1;
    it.numel = n;
    it.shape[0] = n;
    it.strides[0][0] = (int64_t)ct_dtype_info[dd].itemsize;
    it.strides[0][1] = src_stride_elems * (int64_t)ct_dtype_info[sd].itemsize;
    it.data[0] = (char *)dst;
    it.data[1] = (char *)src;
    it.dtypes[0] = dd;
    it.dtypes[1] = sd;
    return it;
}

static const void *const vector_f16_f32 = (const void *)cast_contiguous_kernel<CT_F16, CT_F32, 4>;
static const void *const strided_f16_f32 = (const void *)cast_strided_kernel<CT_F16, CT_F32>;

static void check_launches(void)
{
    alignas(16) static char a[1 << 16], b[1 << 16];
    /* same dtype, contiguous: one cudaMemcpyAsync, no kernel */
    launches.clear();
    int before = memcpy_calls;
    CtIter it = iter_1d(a, CT_F32, b, CT_F32, 1000, 1);
    CHECK(kCastTable[CT_F32][CT_F32](&it, 0) == CT_CUDA_OK, "memcpy path");
    CHECK(memcpy_calls == before + 1 && launches.empty(), "memcpy path used %d copies, %zu kernels",
          memcpy_calls - before, launches.size());
    /* different dtypes, contiguous and aligned: the vectorised kernel with enough threads */
    launches.clear();
    it = iter_1d(a, CT_F16, b, CT_F32, 1001, 1);
    CHECK(kCastTable[CT_F16][CT_F32](&it, 0) == CT_CUDA_OK, "vector path");
    CHECK(launches.size() == 1 && launches[0].func == vector_f16_f32,
          "vector path launched %zu kernels", launches.size());
    CHECK(!launches.empty() && launches[0].threads * 4 >= 1001, "vector grid too small");
    /* misaligned: the strided kernel */
    launches.clear();
    it = iter_1d(a + 2, CT_F16, b, CT_F32, 1001, 1);
    CHECK(kCastTable[CT_F16][CT_F32](&it, 0) == CT_CUDA_OK, "misaligned path");
    CHECK(launches.size() == 1 && launches[0].func == strided_f16_f32,
          "misaligned path");
    CHECK(!launches.empty() && launches[0].threads >= 1001, "strided grid too small");
    /* broadcast source (stride 0), same dtype: the bit-copy kernel */
    launches.clear();
    it = iter_1d(a, CT_I64, b, CT_I64, 77, 0);
    CHECK(kCastTable[CT_I64][CT_I64](&it, 0) == CT_CUDA_OK, "fill path");
    CHECK(launches.size() == 1 && launches[0].func == (const void *)copy_bits_kernel<uint64_t>, "fill path");
    /* an iteration space over 2^31 elements: several launches, each covering its piece */
    launches.clear();
    it = iter_1d(a, CT_BOOL, b, CT_BOOL, (int64_t)3 << 30, 0);
    CHECK(kCastTable[CT_BOOL][CT_BOOL](&it, 0) == CT_CUDA_OK, "huge path");
    long long threads = 0;
    for (const FakeLaunch &l : launches) {
        threads += l.threads;
    }
    CHECK(launches.size() == 2 && threads >= ((long long)3 << 30), "huge path: %zu launches", launches.size());
    /* the public entry validates its input */
    it.nops = 3;
    CHECK(ct_cuda_copy(&it) == -1 && strstr(error_text, "2 operands") != NULL, "nops check");
}

/* --- 6. copies between GPUs ----------------------------------------------------------------------
 * A peer copy runs on the source device's current stream, after the destination's stream (whose
 * earlier work may still use dst) and before anything queued on it later: record on dst's stream,
 * wait on src's, copy, record on src's, wait on dst's, each with its device current. */
static void check_peer()
{
    char src[64], dst[64];
    for (int i = 0; i < 64; i++) {
        src[i] = (char)i;
        dst[i] = 0;
    }
    api_log.clear();
    int st = ct_cuda_memcpy_peer(dst, 2, src, 1, 64);
    CHECK(st == CT_CUDA_OK, "peer copy status %d", st);
    CHECK(memcmp(dst, src, 64) == 0, "peer copy moved the bytes");
    const char *want[] = {"record dev=2 stream=0x200", "wait dev=1 stream=0x100", "peer 2<-1 dev=1 stream=0x100",
                          "record dev=1 stream=0x100", "wait dev=2 stream=0x200"};
    CHECK(api_log.size() == 5, "%zu ordering calls", api_log.size());
    for (size_t i = 0; i < api_log.size() && i < 5; i++) {
        CHECK(api_log[i] == want[i], "call %zu: '%s', expected '%s'", i, api_log[i].c_str(), want[i]);
    }
    int cur = -1;
    cudaGetDevice(&cur);
    CHECK(cur == 2, "the destination device is left current (%d)", cur);
    CHECK(peer_enabled == 1, "peer access asked for once (%d)", peer_enabled);
    st = ct_cuda_memcpy_peer(dst, 2, src, 1, 64);
    CHECK(st == CT_CUDA_OK && peer_enabled == 1, "and not again for the same pair");
    /* nothing to move: no call at all; one device: a plain device-to-device copy on its stream */
    api_log.clear();
    int before = memcpy_calls;
    CHECK(ct_cuda_memcpy_peer(dst, 2, src, 1, 0) == CT_CUDA_OK && api_log.empty() && memcpy_calls == before,
          "0 bytes");
    CHECK(ct_cuda_memcpy_peer(dst, 1, src, 1, 64) == CT_CUDA_OK && api_log.empty() && memcpy_calls == before + 1,
          "same device: cudaMemcpyAsync");
    cudaSetDevice(0);
}

int main()
{
    check_peer();
    printf("peer copies checked\n");
    check_conversions();
    printf("conversions checked\n");
    check_contiguous(std::make_integer_sequence<int, CT_NUM_DTYPES>());
    printf("contiguous kernel checked\n");
    check_offsets();
    printf("offsets checked\n");
    const int64_t s1[] = {((int64_t)1 << 31) + 5};
    const int64_t s2[] = {3, ((int64_t)1 << 31) + 1};
    const int64_t s3[] = {((int64_t)1 << 31) - 1, 3};
    const int64_t s4[] = {65536, 65536, 3};
    const int64_t s5[] = {5, 7, 100000000};
    check_pieces(1, s1);
    check_pieces(2, s2);
    check_pieces(2, s3);
    check_pieces(3, s4);
    check_pieces(3, s5);
    printf("pieces checked\n");
    check_launches();
    printf("launches checked\n");
    printf(failures ? "%d FAILURES\n" : "all copy checks passed\n", failures);
    return failures ? 1 : 0;
}
