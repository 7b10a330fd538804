/* index_harness.cu: checks csrc/cuda/index.cu on the host, without a GPU.
 *
 * index.cu is included whole; its per-element bodies are __host__ __device__, so they run here
 * in loops that stand in for the grid, over real host memory, and are compared with naive
 * references written from the CPU kernels' definitions (ops_index.c):
 * - gather / put / offsets with 1..4 int32/int64 index operands, wrap-around, out-of-range
 *   values (skipped and reported through the flag), layouts with strides and broadcasts, and
 *   iteration spaces cut into pieces;
 * - deterministic accumulation: the keys pass, a stable sort (std::stable_sort standing in for
 *   cub's stable radix sort), the runs pass, against the CPU's serial loop, bit for bit, for
 *   every dtype, add (with alpha) and multiply, duplicates, bad indices, 32- and 64-bit keys;
 * - compaction (count_nonzero, nonzero, masked_select): the tile / rank arithmetic of the two
 *   kernels emulated with their flag and sink functors, against naive row-major loops, for
 *   every dtype (NaN and -0.0 included), strided layouts, 0-d, one-element and longer rows;
 * - LinearCoords (32-bit magic and 64-bit division), tril/triu through the row/column
 *   pseudo-operands, also across pieces of a space of more than 2^31 elements;
 * - launches against fake_cudart.cpp: one kernel per piece, grids covering every element, and
 *   the flag round trip. */
#include "index.cu"
#include "fake_cudart.h"
#include <algorithm>
#include <math.h>
#include <random>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <vector>

/* --- what runtime.cu and allocator.cu provide to index.cu ------------------------------------- */
static char error_text[4096];
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
const char *ct_cuda_last_error(void) { return error_text; }
int ct_cuda_raise(int status) { return -1; }
cudaStream_t ct_cuda_stream(int device) { return 0; }
int ct_cuda_sync_debug_check(void) { return CT_CUDA_OK; } /* set_sync_debug_mode('default') */
int ct_cuda_caching_malloc(int device, size_t nbytes, void **ptr)
{
    *ptr = malloc(nbytes);
    return CT_CUDA_OK;
}
int ct_cuda_caching_free(int device, void *ptr)
{
    free(ptr);
    return CT_CUDA_OK;
}
const CtCudaHost *ct_cuda_host = nullptr;

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

static std::mt19937_64 rng(12345);

#define NAME_ROW(NAME, ctype, acctype, pyname, ...) pyname,
static const char *const dtype_names[CT_NUM_DTYPES] = {CT_DTYPE_LIST(NAME_ROW)};
static const char *ct_dtype_name_of(int d) { return dtype_names[d]; }

/* Element storage (std::vector<bool> has no data()): bool is kept in bytes. */
template <typename T>
using Store = std::vector<typename std::conditional<std::is_same<T, bool>::value, uint8_t, T>::type>;
static int64_t rand_int(int64_t lo, int64_t hi) { return lo + (int64_t)(rng() % (uint64_t)(hi - lo + 1)); }

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

/* Runs body(piece, i) for every element of every piece of it (the grid, serially). */
template <int N, typename F>
static void for_each_element(const CtIter *it, F body)
{
    ct_for_each_piece<N>(it, [&](const CtPiece<N> &piece) -> int {
        for (int64_t i = 0; i < piece.numel; i++) {
            body(piece, (uint32_t)i);
        }
        return CT_CUDA_OK;
    });
}

/* A hand-made iterator: nops operands over `shape` (innermost first), strides in bytes. */
static CtIter make_iter(int nops, int ndim, const int64_t *shape, char *const *data,
                        const std::vector<std::vector<int64_t>> &strides, const CtDType *dtypes)
{
    CtIter it;
    memset(&it, 0, sizeof(it));
    it.nops = nops;
    it.ndim = ndim;
    it.numel = 1;
    for (int d = 0; d < ndim; d++) {
        it.shape[d] = shape[d];
        it.numel *= shape[d];
        for (int k = 0; k < nops; k++) {
            it.strides[d][k] = strides[k][d];
        }
    }
    for (int k = 0; k < nops; k++) {
        it.data[k] = data[k];
        it.dtypes[k] = dtypes[k];
    }
    return it;
}

/* --- 1. gather / put / offsets --------------------------------------------------------------------- */
/* A table src of R x C uint32 (row stride rs, column stride cs, in elements) and nidx index
 * vectors over a 2-d iteration space (n0 inner, n1 outer). The indexed operand is restrided: its
 * stride along the inner dim is src's column stride (the non-indexed dim), 0 along the outer;
 * index k moves along one of src's "virtual" dims of size sizes[k]. */
template <int NI>
static void check_index_case(bool wrap, bool use_bad)
{
    constexpr int N = NI + 2 <= CT_MAX_OPERANDS ? NI + 2 : CT_MAX_OPERANDS; /* gather/put: NI <= 3 */
    const int64_t n0 = rand_int(1, 7), n1 = rand_int(1, 9);
    /* src: NI indexed dims of sizes s_k, plus the inner non-indexed dim of size n0 */
    int64_t sizes[4], estrides[4];
    int64_t total = n0;
    for (int k = NI - 1; k >= 0; k--) {
        sizes[k] = rand_int(1, 5);
        estrides[k] = total;
        total *= sizes[k];
    }
    std::vector<uint32_t> src(total), out(n0 * n1, 0xdeadbeef), want(n0 * n1, 0xdeadbeef);
    for (int64_t e = 0; e < total; e++) {
        src[e] = (uint32_t)(e * 2654435761u);
    }
    /* index operands: (n1,) vectors broadcast along n0, half int32 */
    std::vector<std::vector<int64_t>> idx64(NI, std::vector<int64_t>(n1));
    std::vector<std::vector<int32_t>> idx32(NI, std::vector<int32_t>(n1));
    uint32_t is64 = 0;
    for (int k = 0; k < NI; k++) {
        bool k64 = rng() & 1;
        is64 |= (k64 ? 1u : 0u) << k;
        for (int64_t j = 0; j < n1; j++) {
            int64_t v = wrap ? rand_int(-sizes[k], sizes[k] - 1) : rand_int(0, sizes[k] - 1);
            if (use_bad && j == n1 - 1 && k == NI - 1) {
                v = (rng() & 1) ? sizes[k] + rand_int(0, 3) : -sizes[k] - 1 - rand_int(0, 3);
            }
            idx64[k][j] = v;
            idx32[k][j] = (int32_t)v;
        }
    }
    /* reference: out[j, i] = src[idx_0[j], ..., idx_{NI-1}[j], i] */
    int bad_k = -1;
    int64_t bad_v = 0;
    for (int64_t j = 0; j < n1; j++) {
        int64_t e = 0;
        bool ok = true;
        for (int k = 0; k < NI; k++) {
            int64_t v = idx64[k][j];
            int64_t w = v < 0 && wrap ? v + sizes[k] : v;
            if (w < 0 || w >= sizes[k]) {
                ok = false;
                if (bad_k < 0) {
                    bad_k = k;
                    bad_v = v;
                }
                break;
            }
            e += w * estrides[k];
        }
        for (int64_t i = 0; ok && i < n0; i++) {
            want[j * n0 + i] = src[e + i];
        }
    }
    const int64_t shape[2] = {n0, n1};
    char *data[NI + 2];
    CtDType dtypes[NI + 2];
    std::vector<std::vector<int64_t>> strides(NI + 2, std::vector<int64_t>(2, 0));
    data[0] = (char *)out.data();
    strides[0] = {4, 4 * n0};
    data[1] = (char *)src.data();
    strides[1] = {4, 0};
    dtypes[0] = dtypes[1] = CT_I32; /* any 4-byte dtype: bits are moved */
    for (int k = 0; k < NI; k++) {
        bool k64 = (is64 >> k) & 1u;
        data[2 + k] = k64 ? (char *)idx64[k].data() : (char *)idx32[k].data();
        dtypes[2 + k] = k64 ? CT_I64 : CT_I32;
        strides[2 + k] = {0, k64 ? 8 : 4};
    }
    CtIndexArgs args;
    memset(&args, 0, sizeof(args));
    args.nindex = NI;
    args.wrap = wrap;
    for (int k = 0; k < NI; k++) {
        args.sizes[k] = sizes[k];
        args.strides[k] = estrides[k] * 4;
    }
    IndexFlag flag = {-1, 0, 0};
    if constexpr (NI + 2 <= CT_MAX_OPERANDS) {
    CtIter it = make_iter(N, 2, shape, data, strides, dtypes);
    IndexParams<NI> p = index_params<NI>(&it, &args, 2);
    CHECK(p.is64 == is64, "is64 bits");
    for_each_element<N>(&it, [&](const CtPiece<N> &piece, uint32_t i) {
        index_element<kGather, uint32_t, N>(ptrs_of(piece), piece.offsets(), p, &flag, i);
    });
    CHECK(out == want, "gather with %d indices (wrap %d, bad %d)", NI, (int)wrap, (int)use_bad);
    CHECK(flag.bad == bad_k && (bad_k < 0 || flag.value == bad_v), "gather flag %d/%lld, want %d/%lld", flag.bad,
          (long long)flag.value, bad_k, (long long)bad_v);

    /* put: src[idx..., i] = out[j, i] for the same pattern (into a copy of src) */
    std::vector<uint32_t> dst(total, 7), dst_want(total, 7), vals(n0 * n1);
    for (int64_t e = 0; e < n0 * n1; e++) {
        vals[e] = (uint32_t)(e + 1);
    }
    for (int64_t j = 0; j < n1; j++) {
        int64_t e = 0;
        bool ok = true;
        for (int k = 0; k < NI && ok; k++) {
            int64_t v = idx64[k][j];
            int64_t w = v < 0 && wrap ? v + sizes[k] : v;
            ok = w >= 0 && w < sizes[k];
            e += w * estrides[k];
        }
        for (int64_t i = 0; ok && i < n0; i++) {
            dst_want[e + i] = vals[j * n0 + i]; /* later rows win, as the serial loop */
        }
    }
    data[0] = (char *)dst.data();
    strides[0] = {4, 0};
    data[1] = (char *)vals.data();
    strides[1] = {4, 4 * n0};
    it = make_iter(N, 2, shape, data, strides, dtypes);
    flag = {-1, 0, 0};
    for_each_element<N>(&it, [&](const CtPiece<N> &piece, uint32_t i) {
        index_element<kPut, uint32_t, N>(ptrs_of(piece), piece.offsets(), p, &flag, i);
    });
    /* duplicates may land in any order on the GPU: compare only where the reference is unique */
    std::vector<int> hits(total, 0);
    for (int64_t j = 0; j < n1; j++) {
        int64_t e = 0;
        bool ok = true;
        for (int k = 0; k < NI && ok; k++) {
            int64_t v = idx64[k][j];
            int64_t w = v < 0 && wrap ? v + sizes[k] : v;
            ok = w >= 0 && w < sizes[k];
            e += w * estrides[k];
        }
        for (int64_t i = 0; ok && i < n0; i++) {
            hits[e + i]++;
        }
    }
    bool same = true;
    for (int64_t e = 0; e < total; e++) {
        same = same && (hits[e] > 1 || dst[e] == dst_want[e]);
    }
    CHECK(same, "put with %d indices", NI);
    CHECK(flag.bad == bad_k, "put flag");
    }

    /* offsets: out64[j, i] = sum_k w_k * stride_k (bytes) */
    constexpr int NO = NI + 1;
    std::vector<int64_t> offs(n0 * n1, -7);
    char *odata[NO];
    CtDType odtypes[NO];
    std::vector<std::vector<int64_t>> ostrides(NO, std::vector<int64_t>(2, 0));
    odata[0] = (char *)offs.data();
    odtypes[0] = CT_I64;
    ostrides[0] = {8, 8 * n0};
    for (int k = 0; k < NI; k++) {
        odata[1 + k] = data[2 + k];
        odtypes[1 + k] = dtypes[2 + k];
        ostrides[1 + k] = strides[2 + k];
    }
    CtIter oit = make_iter(NO, 2, shape, odata, ostrides, odtypes);
    IndexParams<NI> op = index_params<NI>(&oit, &args, 1);
    flag = {-1, 0, 0};
    for_each_element<NO>(&oit, [&](const CtPiece<NO> &piece, uint32_t i) {
        index_element<kOffsets, uint64_t, NO>(ptrs_of(piece), piece.offsets(), op, &flag, i);
    });
    bool offs_ok = true;
    for (int64_t j = 0; j < n1; j++) {
        int64_t e = 0;
        bool ok = true;
        for (int k = 0; k < NI && ok; k++) {
            int64_t v = idx64[k][j];
            int64_t w = v < 0 && wrap ? v + sizes[k] : v;
            ok = w >= 0 && w < sizes[k];
            e += w * estrides[k] * 4;
        }
        for (int64_t i = 0; i < n0; i++) {
            offs_ok = offs_ok && offs[j * n0 + i] == (ok ? e : -7);
        }
    }
    CHECK(offs_ok, "offsets with %d indices", NI);
    CHECK(flag.bad == bad_k, "offsets flag");
}

static void check_index(void)
{
    for (int trial = 0; trial < 200; trial++) {
        bool wrap = trial & 1, bad = (trial / 2) % 3 == 0;
        check_index_case<1>(wrap, bad);
        check_index_case<2>(wrap, bad);
        check_index_case<3>(wrap, bad);
    }
    for (int trial = 0; trial < 100; trial++) {
        check_index_case<4>(trial & 1, trial % 3 == 0); /* 4 indices: index_offsets only */
    }
}

/* --- 2. deterministic accumulation ----------------------------------------------------------------- */
/* The CPU's put_add_/put_mul_/put_max_/put_min_ element step (ops_index.c), written with its macros. */
#define MUL_BOOL(a, b) ((a) && (b))
#define MUL_ANY(a, b) ((a) * (b))
template <int D>
static void cpu_step(char *d, const char *v, int reduce, const CtScalar &alpha_s)
{
    switch (D) {
#define STEP_CASE(NAME, ctype, acctype, ...)                                                                \
    case CT_##NAME: {                                                                                      \
        acctype alpha = alpha_s.kind == CT_KIND_FLOAT ? (acctype)alpha_s.v.d                               \
                                                      : (acctype)ct_scalar_to_int(&alpha_s);               \
        acctype x = CT_LOAD_##NAME(v);                                                                     \
        acctype c = CT_LOAD_##NAME(d);                                                                     \
        if (reduce == CT_REDUCE_ADD) {                                                                     \
            CT_STORE_##NAME(d, CT_LOAD_##NAME(d) + alpha * x);                                             \
        } else if (reduce == CT_REDUCE_MAX) {                                                              \
            CT_STORE_##NAME(d, (x > c || x != x) ? x : c);                                                 \
        } else if (reduce == CT_REDUCE_MIN) {                                                              \
            CT_STORE_##NAME(d, (x < c || x != x) ? x : c);                                                 \
        } else if (CT_##NAME == CT_BOOL) {                                                                 \
            CT_STORE_##NAME(d, MUL_BOOL(CT_LOAD_##NAME(d), x));                                            \
        } else {                                                                                           \
            CT_STORE_##NAME(d, MUL_ANY(CT_LOAD_##NAME(d), x));                                             \
        }                                                                                                  \
        break;                                                                                             \
    }
        CT_DTYPE_LIST(STEP_CASE)
#undef STEP_CASE
    }
}

static void random_value(CtDType dt, char *p)
{
    double v;
    switch (dt) {
    case CT_BOOL:
        *(bool *)p = rng() & 1;
        return;
    case CT_F16:
    case CT_BF16:
    case CT_F32:
    case CT_F64:
        v = (double)(int64_t)(rng() % 2001 - 1000) / 37.0;
        if (dt == CT_F16) {
            CT_STORE_F16(p, v);
        } else if (dt == CT_BF16) {
            CT_STORE_BF16(p, v);
        } else if (dt == CT_F32) {
            CT_STORE_F32(p, v);
        } else {
            CT_STORE_F64(p, v);
        }
        return;
    default:
        v = (double)(int64_t)(rng() % 11 - 3);
        if (dt == CT_U8) {
            CT_STORE_U8(p, (uint8_t)(rng() % 7));
        } else if (dt == CT_I8) {
            CT_STORE_I8(p, (int8_t)v);
        } else if (dt == CT_I16) {
            CT_STORE_I16(p, (int16_t)v);
        } else if (dt == CT_I32) {
            CT_STORE_I32(p, (int32_t)v);
        } else {
            CT_STORE_I64(p, (int64_t)v);
        }
        return;
    }
}

/* One piece of the GPU's algorithm, serially: keys, stable sort, runs. */
template <int D, int N, typename K>
static void emulate_accumulate_piece(const CtPiece<N> &piece, const IndexParams<N - 2> &p, const CtIndexArgs &args,
                                     IndexFlag *flag, int shift, const KeyPlan &plan)
{
    const uint32_t n = (uint32_t)piece.numel;
    std::vector<K> keys(n), skeys(n);
    std::vector<uint32_t> order(n), sorder(n);
    for (uint32_t i = 0; i < n; i++) {
        accumulate_key_element<N, K>(ptrs_of(piece), piece.offsets(), p, flag, plan.lo, shift, (K)plan.sentinel,
                                     keys.data(), order.data(), i);
    }
    std::vector<uint32_t> perm(n);
    for (uint32_t i = 0; i < n; i++) {
        perm[i] = i;
    }
    const uint64_t keymask = plan.end_bit >= 64 ? ~0ull : ((1ull << plan.end_bit) - 1);
    std::stable_sort(perm.begin(), perm.end(), [&](uint32_t a, uint32_t b) {
        return ((uint64_t)keys[a] & keymask) < ((uint64_t)keys[b] & keymask);
    });
    for (uint32_t j = 0; j < n; j++) {
        skeys[j] = keys[perm[j]];
        sorder[j] = order[perm[j]];
    }
    typedef typename CtCudaType<D>::Acc A;
    A alpha = args.alpha.kind == CT_KIND_FLOAT ? (A)args.alpha.v.d : (A)ct_scalar_to_int(&args.alpha);
    CtOffsets<1> voff = values_offsets(piece);
    for (uint32_t j = 0; j < n; j++) {
        switch (args.reduce) {
#define RUN_CASE(OP)                                                                                   \
    case OP:                                                                                           \
        accumulate_run<D, OP, K>(skeys.data(), sorder.data(), n, (K)plan.sentinel, piece.data[0] + plan.lo, \
                                 shift, piece.data[1], voff, alpha, j);                                \
        break;
            RUN_CASE(CT_REDUCE_ADD)
            RUN_CASE(CT_REDUCE_MUL)
            RUN_CASE(CT_REDUCE_MAX)
            RUN_CASE(CT_REDUCE_MIN)
#undef RUN_CASE
        default:
            break;
        }
    }
}

/* dst (M elements, stride ds) [idx[j, i]] (op)= vals[j, i] over a (n0 inner, n1 outer) space,
 * idx of shape (n1, n0) with duplicates; `precomputed` passes byte offsets as index.h's
 * folding does (size INT64_MAX, stride 1), which takes the 64-bit key path. */
template <int D>
static void check_accumulate_case(int reduce, bool precomputed, int alpha_kind)
{
    typedef typename CtCudaType<D>::T T;
    const int64_t isz = sizeof(T);
    const int64_t M = rand_int(1, 12), ds = rand_int(1, 3), n0 = rand_int(1, 9), n1 = rand_int(1, 40);
    Store<T> dst(M * ds), want;
    Store<T> vals(n0 * n1);
    std::vector<int64_t> idx(n0 * n1);
    for (auto &x : dst) {
        random_value((CtDType)D, (char *)&x);
    }
    for (auto &x : vals) {
        random_value((CtDType)D, (char *)&x);
    }
    for (auto &x : idx) {
        x = rand_int(-M, M - 1);
        if (rng() % 25 == 0) {
            x = M + rand_int(0, 2); /* out of range */
        }
        if (precomputed) {
            x = x < 0 ? x + M : x;
            if (x >= M) {
                x = 0; /* precomputed offsets are never out of range */
            }
            x *= ds * isz;
        }
    }
    CtScalar alpha;
    if (alpha_kind == 0) {
        alpha.kind = CT_KIND_INT;
        alpha.v.i = 1;
    } else if (alpha_kind == 1) {
        alpha.kind = CT_KIND_INT;
        alpha.v.i = 3;
    } else {
        alpha.kind = CT_KIND_FLOAT;
        alpha.v.d = -0.375;
    }
    want = dst;
    int bad_k = -1;
    for (int64_t j = 0; j < n1; j++) { /* the CPU's serial order: i inner, j outer */
        for (int64_t i = 0; i < n0; i++) {
            int64_t v = idx[j * n0 + i];
            int64_t w;
            if (precomputed) {
                w = v / (ds * isz);
            } else {
                w = v < 0 ? v + M : v;
                if (w < 0 || w >= M) {
                    bad_k = 0;
                    continue;
                }
            }
            cpu_step<D>((char *)&want[w * ds], (const char *)&vals[j * n0 + i], reduce, alpha);
        }
    }
    const int64_t shape[2] = {n0, n1};
    char *data[3] = {(char *)dst.data(), (char *)vals.data(), (char *)idx.data()};
    const CtDType dtypes[3] = {(CtDType)D, (CtDType)D, CT_I64};
    std::vector<std::vector<int64_t>> strides = {{0, 0}, {isz, isz * n0}, {8, 8 * n0}};
    CtIter it = make_iter(3, 2, shape, data, strides, dtypes);
    CtIndexArgs args;
    memset(&args, 0, sizeof(args));
    args.nindex = 1;
    args.wrap = !precomputed;
    args.reduce = (CtIndexReduce)reduce;
    args.alpha = alpha;
    args.sizes[0] = precomputed ? INT64_MAX : M;
    args.strides[0] = precomputed ? 1 : ds * isz;
    IndexParams<1> p = index_params<1>(&it, &args, 2);
    const int shift = isz == 1 ? 0 : isz == 2 ? 1 : isz == 4 ? 2 : 3;
    IndexFlag flag = {-1, 0, 0};
    bool narrow_seen = false, wide_seen = false;
    ct_for_each_piece<3>(&it, [&](const CtPiece<3> &piece) -> int {
        KeyPlan plan = key_plan<3>(piece, p, shift);
        if (plan.narrow) {
            narrow_seen = true;
            emulate_accumulate_piece<D, 3, uint32_t>(piece, p, args, &flag, shift, plan);
        } else {
            wide_seen = true;
            emulate_accumulate_piece<D, 3, uint64_t>(piece, p, args, &flag, shift, plan);
        }
        return CT_CUDA_OK;
    });
    CHECK(precomputed ? wide_seen && !narrow_seen : narrow_seen && !wide_seen, "key width");
    CHECK(memcmp(dst.data(), want.data(), dst.size() * sizeof(T)) == 0, "accumulate %s reduce %d precomputed %d",
          ct_dtype_name_of(D), reduce, (int)precomputed);
    CHECK(flag.bad == bad_k, "accumulate flag %d, want %d", flag.bad, bad_k);
}

template <int... D>
static void check_accumulate(std::integer_sequence<int, D...>)
{
    for (int trial = 0; trial < 60; trial++) {
        int dummy[] = {0, (check_accumulate_case<D>(CT_REDUCE_ADD, trial % 4 == 3, trial % 3), 0)...,
                       (check_accumulate_case<D>(CT_REDUCE_MUL, trial % 5 == 4, 0), 0)...};
        (void)dummy;
    }
    for (int trial = 0; trial < 20; trial++) { /* after the others: their random draws stay as they were */
        int dummy[] = {0, (check_accumulate_case<D>(CT_REDUCE_MAX, trial % 5 == 2, 0), 0)...,
                       (check_accumulate_case<D>(CT_REDUCE_MIN, trial % 5 == 1, 0), 0)...};
        (void)dummy;
    }
}

/* --- 3. compaction ------------------------------------------------------------------------------ */
/* The two kernels, serially: per tile, per thread (blocked items), the exclusive scan of the
 * threads' counts gives each thread's first position. Returns the total. */
template <int N, typename Flag, typename Sink>
static int64_t emulate_compaction(const CtIter *it, const Flag &flag, const Sink *sink)
{
    std::vector<CtPiece<N>> pieces;
    pieces_of<N>(it, &pieces);
    std::vector<int64_t> counts;
    for (const CtPiece<N> &pc : pieces) {
        uint32_t n = (uint32_t)pc.numel;
        for (uint32_t b = 0; b < ct_cuda_blocks(pc.numel, kTile); b++) {
            int64_t c = 0;
            for (uint32_t t = 0; t < (uint32_t)kThreads; t++) {
                for (int j = 0; j < kItems; j++) {
                    uint32_t i = b * (uint32_t)kTile + t * (uint32_t)kItems + (uint32_t)j;
                    c += i < n && flag(ptrs_of(pc), pc.offsets(), i);
                }
            }
            counts.push_back(c);
        }
    }
    std::vector<int64_t> offsets(counts.size() + 1, 0);
    for (size_t k = 0; k < counts.size(); k++) {
        offsets[k + 1] = offsets[k] + counts[k];
    }
    if (sink == nullptr) {
        return offsets.back();
    }
    size_t tile = 0;
    int64_t base = 0;
    for (const CtPiece<N> &pc : pieces) {
        uint32_t n = (uint32_t)pc.numel;
        CtOffsets<N> offs = pc.offsets();
        for (uint32_t b = 0; b < ct_cuda_blocks(pc.numel, kTile); b++, tile++) {
            int rank = 0;
            for (uint32_t t = 0; t < (uint32_t)kThreads; t++) {
                uint32_t first = b * (uint32_t)kTile + t * (uint32_t)kItems;
                uint32_t bits = 0;
                int c = 0;
                for (int j = 0; j < kItems; j++) {
                    if (first + j < n && flag(ptrs_of(pc), offs, first + j)) {
                        bits |= 1u << j;
                        c++;
                    }
                }
                int64_t pos = offsets[tile] + rank;
                for (int j = 0; j < kItems; j++) {
                    if ((bits >> j) & 1u) {
                        (*sink)(pos++, ptrs_of(pc), offs, first + (uint32_t)j, base + (int64_t)(first + (uint32_t)j));
                    }
                }
                rank += c;
            }
        }
        base += pc.numel;
    }
    return offsets.back();
}

struct FakeTensor {
    CtStorageObject storage;
    CtTensorObject t;
    FakeTensor(void *data, CtDType dtype, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset = 0)
    {
        memset(&storage, 0, sizeof(storage));
        memset(&t, 0, sizeof(t));
        storage.data = data;
        storage.device.type = CT_DEV_CUDA;
        storage.device.index = 0;
        t.storage = &storage;
        t.offset = offset;
        t.ndim = ndim;
        t.dtype = dtype;
        for (int d = 0; d < ndim; d++) {
            t.sizes[d] = sizes[d];
            t.strides[d] = strides[d];
        }
    }
};

/* Element strides (a permutation of the contiguous ones, or with a step) and the storage size
 * they need, for a random layout of sizes. */
static int64_t random_layout(int nd, const int64_t *sizes, int64_t *strides)
{
    std::vector<int> perm(nd);
    for (int d = 0; d < nd; d++) {
        perm[d] = d;
    }
    std::shuffle(perm.begin(), perm.end(), rng);
    int64_t step = rand_int(1, 2), s = step;
    for (int k = nd - 1; k >= 0; k--) {
        strides[perm[k]] = s;
        s *= sizes[perm[k]];
    }
    return s;
}

template <int D>
static void check_nonzero_case(void)
{
    typedef typename CtCudaType<D>::T T;
    const int nd = (int)rand_int(0, 4);
    int64_t sizes[4], strides[4], numel = 1;
    for (int d = 0; d < nd; d++) {
        sizes[d] = rand_int(1, 6);
        numel *= sizes[d];
    }
    if (rng() % 20 == 0 && nd > 0) { /* big enough for several tiles */
        numel = numel / sizes[0] * 3000;
        sizes[0] = 3000;
    }
    int64_t span = random_layout(nd, sizes, strides);
    Store<T> buf(span + 1);
    for (auto &x : buf) {
        if (rng() % 3 == 0) {
            random_value((CtDType)D, (char *)&x);
        } else {
            memset(&x, 0, sizeof(x));
        }
        if ((CtDType)D == CT_F32 && rng() % 50 == 0) {
            float f = rng() & 1 ? NAN : -0.0f;
            memcpy(&x, &f, 4);
        }
        if ((CtDType)D == CT_F16 && rng() % 50 == 0) {
            uint16_t h = rng() & 1 ? 0x7e00 : 0x8000; /* NaN, -0 */
            memcpy(&x, &h, 2);
        }
    }
    FakeTensor ft(buf.data(), (CtDType)D, nd, sizes, strides);
    /* reference: row-major walk */
    std::vector<int64_t> want;
    int64_t count = 0;
    std::vector<int64_t> coord(nd, 0);
    for (int64_t e = 0; e < numel; e++) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++) {
            off += coord[d] * strides[d];
        }
        double v = value_of((CtDType)D, (const char *)&buf[off]);
        if (v != 0 || isnan(v)) {
            count++;
            want.insert(want.end(), coord.begin(), coord.end());
        }
        for (int d = nd - 1; d >= 0; d--) {
            if (++coord[d] < sizes[d]) {
                break;
            }
            coord[d] = 0;
        }
    }
    CtIter it;
    const CtTensorObject *ts[1] = {&ft.t};
    iter_of_tensors(&it, 1, ts, nd);
    NonzeroFlag<D, 1> flag;
    int64_t got_count = emulate_compaction<1, NonzeroFlag<D, 1>, NonzeroSink>(&it, flag, nullptr);
    CHECK(got_count == count, "count_nonzero %s: %lld, want %lld", ct_dtype_name_of(D), (long long)got_count,
          (long long)count);
    std::vector<int64_t> got(count * nd + 1, -1);
    NonzeroSink sink;
    sink.out = got.data();
    sink.coords.init(nd, sizes, numel);
    emulate_compaction<1, NonzeroFlag<D, 1>, NonzeroSink>(&it, flag, &sink);
    got.resize(count * nd);
    CHECK(got == want, "nonzero %s, ndim %d", ct_dtype_name_of(D), nd);
}

template <int... D>
static void check_nonzero(std::integer_sequence<int, D...>)
{
    for (int trial = 0; trial < 40; trial++) {
        int dummy[] = {0, (check_nonzero_case<D>(), 0)...};
        (void)dummy;
    }
}

/* masked_select: src (rows over the mask's m dims, then inner dims) of int32 */
static void check_masked_select_case(void)
{
    const int m = (int)rand_int(0, 3), extra = (int)rand_int(0, 2), nd = m + extra;
    int64_t sizes[5], strides[5], mstrides[5], numel = 1, mnumel = 1, inner = 1;
    for (int d = 0; d < nd; d++) {
        sizes[d] = rand_int(1, 5);
        numel *= sizes[d];
        (d < m ? mnumel : inner) *= sizes[d];
    }
    int64_t span = random_layout(nd, sizes, strides);
    if (m > 0 && rng() % 3 == 0) {
        strides[0] = 0; /* an expanded row dim */
    }
    std::vector<int32_t> src(span + 1);
    for (size_t e = 0; e < src.size(); e++) {
        src[e] = (int32_t)(e * 7 + 1);
    }
    int64_t mspan = random_layout(m, sizes, mstrides);
    std::vector<uint8_t> mask(mspan + 1);
    for (auto &x : mask) {
        x = rng() % 2;
    }
    FakeTensor fs(src.data(), CT_I32, nd, sizes, strides), fm(mask.data(), CT_BOOL, m, sizes, mstrides);
    /* reference */
    std::vector<int32_t> want;
    std::vector<int64_t> coord(nd, 0);
    for (int64_t e = 0; e < numel; e++) {
        int64_t so = 0, mo = 0;
        for (int d = 0; d < nd; d++) {
            so += coord[d] * strides[d];
            mo += d < m ? coord[d] * mstrides[d] : 0;
        }
        if (mask[mo]) {
            want.push_back(src[so]);
        }
        for (int d = nd - 1; d >= 0; d--) {
            if (++coord[d] < sizes[d]) {
                break;
            }
            coord[d] = 0;
        }
    }
    CtIter it;
    const CtTensorObject *ts[2] = {&fm.t, &fs.t};
    iter_of_tensors(&it, 2, ts, m);
    NonzeroFlag<CT_BOOL, 2> flag;
    int64_t count = emulate_compaction<2, NonzeroFlag<CT_BOOL, 2>, RowOffsetSink>(&it, flag, nullptr);
    std::vector<int32_t> got(count * inner + 1, -1);
    if (inner == 1) {
        SelectElementSink<uint32_t> sink{(uint32_t *)got.data()};
        emulate_compaction<2>(&it, flag, &sink);
    } else {
        /* the CUDA path: row offsets, then a gather over (count, inner...) */
        std::vector<int64_t> rows(count + 1);
        RowOffsetSink sink{rows.data(), (const char *)src.data()};
        emulate_compaction<2>(&it, flag, &sink);
        const int rnd = 1 + nd - m;
        int64_t shape[5];
        shape[0] = count;
        for (int d = m; d < nd; d++) {
            shape[1 + d - m] = sizes[d];
        }
        char *ptrs[3] = {(char *)got.data(), (char *)src.data(), (char *)rows.data()};
        int64_t gstrides[3][CT_MAX_DIMS];
        int64_t out_stride = 4;
        for (int d = rnd - 1; d >= 0; d--) {
            gstrides[0][d] = out_stride;
            out_stride *= shape[d];
        }
        gstrides[1][0] = 0;
        gstrides[2][0] = 8;
        for (int d = 1; d < rnd; d++) {
            gstrides[1][d] = strides[m + d - 1] * 4;
            gstrides[2][d] = 0;
        }
        const CtDType dtypes[3] = {CT_I32, CT_I32, CT_I64};
        CtIter git;
        iter_logical(&git, 0, 3, rnd, shape, ptrs, gstrides, dtypes);
        CtIndexArgs args;
        memset(&args, 0, sizeof(args));
        args.nindex = 1;
        args.sizes[0] = INT64_MAX;
        args.strides[0] = 1;
        IndexParams<1> p = index_params<1>(&git, &args, 2);
        IndexFlag f = {-1, 0, 0};
        if (git.numel > 0) {
            for_each_element<3>(&git, [&](const CtPiece<3> &piece, uint32_t i) {
                index_element<kGather, uint32_t, 3>(ptrs_of(piece), piece.offsets(), p, &f, i);
            });
        }
        CHECK(f.bad == -1, "row gather flagged");
    }
    got.resize(count * inner);
    CHECK(got == want, "masked_select m=%d inner=%lld", m, (long long)inner);
}

/* --- 4. coordinates, triangles ------------------------------------------------------------------- */
static void check_linear_coords(void)
{
    for (int trial = 0; trial < 300; trial++) {
        int nd = (int)rand_int(1, trial < 200 ? 5 : CT_MAX_DIMS);
        int64_t sizes[CT_MAX_DIMS], numel = 1;
        for (int d = 0; d < nd; d++) {
            sizes[d] = rand_int(1, nd > 8 ? 3 : 40);
            numel *= sizes[d];
        }
        if (trial % 50 == 0) {
            nd = 3;
            sizes[0] = 5000;
            sizes[1] = 3;
            sizes[2] = 300000; /* 4.5e9 elements: the 64-bit path */
            numel = sizes[0] * sizes[1] * sizes[2];
        }
        LinearCoords lc;
        lc.init(nd, sizes, numel);
        CHECK(lc.narrow == (numel <= CT_MAX_INDEX32), "narrow flag");
        for (int s = 0; s < 200; s++) {
            int64_t lin = s == 0 ? numel - 1 : (int64_t)(rng() % (uint64_t)numel);
            int64_t got[CT_MAX_DIMS], want[CT_MAX_DIMS], rem = lin;
            for (int d = nd - 1; d >= 0; d--) {
                want[d] = rem % sizes[d];
                rem /= sizes[d];
            }
            lc.write(lin, got);
            CHECK(memcmp(got, want, sizeof(int64_t) * nd) == 0, "coords of %lld (ndim %d)", (long long)lin, nd);
        }
    }
}

static void check_triangle_case(bool upper, bool inplace)
{
    const int nd = (int)rand_int(2, 4);
    int64_t sizes[4], strides[4], numel = 1;
    for (int d = 0; d < nd; d++) {
        sizes[d] = rand_int(1, 7);
        numel *= sizes[d];
    }
    int64_t span = random_layout(nd, sizes, strides);
    std::vector<uint16_t> src(span + 1), out(span + 1, 0xffff);
    for (size_t e = 0; e < src.size(); e++) {
        src[e] = (uint16_t)(e + 1);
    }
    std::vector<uint16_t> want = inplace ? src : out;
    int64_t diagonal = rand_int(-8, 8);
    std::vector<int64_t> coord(nd, 0);
    for (int64_t e = 0; e < numel; e++) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++) {
            off += coord[d] * strides[d];
        }
        int64_t row = coord[nd - 2], col = coord[nd - 1];
        bool keep = upper ? col - row >= diagonal : col - row <= diagonal;
        want[off] = keep ? src[off] : 0;
        for (int d = nd - 1; d >= 0; d--) {
            if (++coord[d] < sizes[d]) {
                break;
            }
            coord[d] = 0;
        }
    }
    FakeTensor fs(src.data(), CT_I16, nd, sizes, strides), fo(inplace ? src.data() : out.data(), CT_I16, nd, sizes,
                                                                strides);
    CtIter it;
    triangle_iter(&it, &fo.t, &fs.t);
    for_each_element<4>(&it, [&](const CtPiece<4> &piece, uint32_t i) {
        triangle_element<uint16_t>(ptrs_of(piece), piece.offsets(), diagonal, upper, i);
    });
    CHECK((inplace ? src : out) == want, "triangle upper=%d inplace=%d ndim=%d diagonal=%lld", (int)upper,
          (int)inplace, nd, (long long)diagonal);
}

/* The row / column pseudo-operands stay right across the pieces of a huge space (only the
 * coordinates are computed: nothing is read or written). */
static void check_triangle_pieces(const int64_t *sizes, int nd)
{
    int64_t strides[4], s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        strides[d] = s;
        s *= sizes[d];
    }
    FakeTensor ft((void *)0x1000, CT_U8, nd, sizes, strides);
    CtIter it;
    triangle_iter(&it, &ft.t, &ft.t);
    int64_t base = 0;
    int pieces = 0;
    ct_for_each_piece<4>(&it, [&](const CtPiece<4> &piece) -> int {
        pieces++;
        CtOffsets<4> offs = piece.offsets();
        Ptrs<4> d = ptrs_of(piece);
        for (int k = 0; k < 40; k++) {
            int64_t i = k == 0 ? 0 : k == 1 ? piece.numel - 1 : (int64_t)(rng() % (uint64_t)piece.numel);
            int64_t off[4];
            offs.get((uint32_t)i, off);
            int64_t lin = base + i;
            int64_t col = lin % sizes[nd - 1], row = (lin / sizes[nd - 1]) % sizes[nd - 2];
            CHECK(coordinate(d.p[2], off[2]) == row && coordinate(d.p[3], off[3]) == col,
                  "piece %d element %lld: row %lld col %lld, want %lld %lld", pieces, (long long)i,
                  (long long)coordinate(d.p[2], off[2]), (long long)coordinate(d.p[3], off[3]), (long long)row,
                  (long long)col);
            CHECK((d.p[0] + off[0]) - (char *)0x1000 == lin, "piece %d data offset", pieces);
        }
        base += piece.numel;
        return CT_CUDA_OK;
    });
    CHECK(base == s, "pieces cover %lld of %lld", (long long)base, (long long)s);
    printf("  triangle over %lld elements: %d pieces\n", (long long)s, pieces);
}

/* --- 5. launches on the fake runtime ---------------------------------------------------------------- */
static void check_launches(void)
{
    /* a 1-index gather over 3 * 2^30 elements (pointers never dereferenced: kernels are only
     * recorded): one launch per piece, each covering its piece; the flag round trip says "none" */
    static char fake[16];
    const int64_t shape[1] = {(int64_t)3 << 30};
    char *data[3] = {fake, fake, fake};
    const CtDType dtypes[3] = {CT_U8, CT_U8, CT_I64};
    std::vector<std::vector<int64_t>> strides = {{1}, {1}, {8}};
    CtIter it = make_iter(3, 1, shape, data, strides, dtypes);
    CtIndexArgs args;
    memset(&args, 0, sizeof(args));
    args.nindex = 1;
    args.sizes[0] = 10;
    args.strides[0] = 1;
    args.bad = 5;
    launches.clear();
    CHECK(ct_cuda_index(&it, &args) == 0, "gather entry");
    long long threads = 0;
    for (const FakeLaunch &l : launches) {
        threads += l.threads;
        CHECK(l.threads <= ((long long)1 << 31) + 256, "launch of %lld threads", l.threads);
    }
    CHECK(launches.size() == 2 && threads >= shape[0], "%zu launches, %lld threads", launches.size(), threads);
    CHECK(args.bad == -1, "flag read back as %d", args.bad);
    /* a wrong operand count is an error, not a crash */
    it.nops = 2;
    CHECK(ct_cuda_index(&it, &args) == -1 && strstr(error_text, "index operands") != NULL, "operand check");
    /* masked_fill: one launch for a small space */
    launches.clear();
    it.nops = 3;
    it.shape[0] = 1000;
    it.numel = 1000;
    CHECK(ct_cuda_masked_fill(&it) == 0 && launches.size() == 1 && launches[0].threads >= 1000, "masked_fill");
}

int main()
{
    check_index();
    printf("gather / put / offsets checked\n");
    check_accumulate(std::make_integer_sequence<int, CT_NUM_DTYPES>());
    printf("deterministic accumulation checked\n");
    check_nonzero(std::make_integer_sequence<int, CT_NUM_DTYPES>());
    for (int trial = 0; trial < 300; trial++) {
        check_masked_select_case();
    }
    printf("compaction checked\n");
    check_linear_coords();
    for (int trial = 0; trial < 200; trial++) {
        check_triangle_case(trial & 1, trial & 2);
    }
    const int64_t big2[2] = {70000, 40000};       /* 2.8e9 elements, cut along rows */
    const int64_t big3[3] = {3, 50000, 20000};    /* 3e9, cut along the batch */
    const int64_t wide[2] = {2, ((int64_t)1 << 31) + 3}; /* rows longer than a piece */
    check_triangle_pieces(big2, 2);
    check_triangle_pieces(big3, 3);
    check_triangle_pieces(wide, 2);
    printf("coordinates and triangles checked\n");
    check_launches();
    printf("launches checked\n");
    printf(failures ? "%d FAILURES\n" : "all index checks passed\n", failures);
    return failures ? 1 : 0;
}
