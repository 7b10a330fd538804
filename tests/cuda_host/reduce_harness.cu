/* reduce_harness.cu: checks csrc/cuda/reduce.cu and sort.cu on the host, without a GPU.
 *
 * Both files are included whole. Their kernels are built from host-callable per-thread bodies
 * (reduce_thread_inner/outer, reduce_partials_thread, the serial scan and softmax lines,
 * bitonic_step, median_position, sort_write_one) glued together by warp shuffles, shared memory
 * and barriers; the emulators below run the bodies for every thread of every block of the
 * planned grid and combine them with the host replicas of the trees (host_warp_tree, ...), so
 * what is checked is the code the kernels run, short of the shuffle/barrier glue itself:
 * - every launch plan covers its reduced range exactly, within CUDA's grid and block limits
 *   and the kernels' launch bounds;
 * - reductions (every input dtype x accumulator the ops produce x combine, with the maps and
 *   finals the ops use) over random shapes, reduced-dim sets and layouts, canonicalised as
 *   ops_reduce.c does, in inner, outer and chunked plans, match a naive reference;
 * - an unaligned view gives bit-identical results to an aligned copy (the vector and scalar
 *   loads give each thread the same elements in the same order);
 * - arg-reductions find the first max/min with NaN greatest/least, for every dtype;
 * - the serial scans (cumsum/cumprod, cummax/cummin with their indices, logcumsumexp) and softmax
 *   lines match references;
 * - the sort keys order every dtype as the CPU's comparator does (NaN last, -0.0 == 0.0), and
 *   the bitonic and radix paths (std::stable_sort standing in for CUB) give the CPU's stable
 *   sort, topk slices, medians (first NaN when there is one; nanmedian's lower median of the
 *   rest) and modes;
 * - the dispatch tables cover every dtype and accumulator the ops can produce. */
#include "reduce.cu"
#include "sort.cu"
#include <algorithm>
#include <math.h>
#include <random>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <vector>

/* --- what runtime.cu and allocator.cu provide ------------------------------------------------------- */
static char error_text[4096];
const CtCudaHost *ct_cuda_host = nullptr;
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
cudaStream_t ct_cuda_stream(int device) { return 0; }
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

static int failures = 0;
static int checks = 0;
static int max_reports = 40; /* REDUCE_HARNESS_REPORTS=n to see more */
#define CHECK(c, ...)                                              \
    do {                                                           \
        checks++;                                                  \
        if (!(c)) {                                                \
            if (failures < max_reports) {                          \
                printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #c); \
                printf(__VA_ARGS__);                               \
                printf("\n");                                      \
            }                                                      \
            failures++;                                            \
        }                                                          \
    } while (0)

static std::mt19937_64 rng(12345);
static int64_t rand_int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

/* A buffer of n elements of T (std::vector<bool> has no data()). */
template <typename T>
struct Array {
    std::vector<char> bytes;
    explicit Array(size_t n) : bytes(n * sizeof(T) + 16, 0) {}
    T *data() { return (T *)bytes.data(); }
    size_t size() const { return (bytes.size() - 16) / sizeof(T); }
    T &operator[](size_t i) { return data()[i]; }
    T *begin() { return data(); }
    T *end() { return data() + size(); }
};

static int itemsize(int d) { return ct_red_itemsize(d); }
static bool is_float(int d) { return d == CT_F16 || d == CT_BF16 || d == CT_F32 || d == CT_F64; }

/* The value of an element as a double. */
static double value_of(int d, const char *p)
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
static int64_t int_of(int d, const char *p)
{
    switch (d) {
#define INT_CASE(NAME, ctype, ...) \
    case CT_##NAME:                \
        return (int64_t)(*(const ctype *)p);
        CT_DTYPE_LIST(INT_CASE)
#undef INT_CASE
    default:
        return 0;
    }
}

/* Random element of dtype d into p: small integers (ties), NaN and infinities sometimes. */
static void random_element(int d, char *p, bool specials, bool positive)
{
    double v = (double)rand_int(positive ? 1 : -20, 20) / (rand_int(0, 3) == 0 ? 4.0 : 1.0);
    if (specials && is_float(d)) {
        int r = (int)rand_int(0, 60);
        v = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : r == 3 ? -0.0 : v;
    }
    switch (d) {
    case CT_BOOL:
        *(bool *)p = rand_int(0, 1) == 1;
        break;
    case CT_U8:
        *(uint8_t *)p = (uint8_t)rand_int(0, 255);
        break;
    case CT_I8:
        *(int8_t *)p = (int8_t)rand_int(-128, 127);
        break;
    case CT_I16:
        *(int16_t *)p = (int16_t)rand_int(-300, 300);
        break;
    case CT_I32:
        *(int32_t *)p = (int32_t)rand_int(-100000, 100000);
        break;
    case CT_I64:
        *(int64_t *)p = rand_int(-1000000, 1000000) * (rand_int(0, 9) == 0 ? 1000000007LL : 1);
        break;
    case CT_F16:
        CT_STORE_F16(p, v);
        break;
    case CT_BF16:
        CT_STORE_BF16(p, v);
        break;
    case CT_F32:
        CT_STORE_F32(p, v);
        break;
    default:
        CT_STORE_F64(p, v);
        break;
    }
}

/* --- 1. launch plans ---------------------------------------------------------------------------------- */
static void check_plans(void)
{
    const int64_t values[] = {0,    1,     2,      3,       7,       15,        16,       17,      31,
                              32,   33,    63,     64,      100,     255,       256,      511,     512,
                              513,  1000,  2047,   4096,    4097,    8192,      65536,    100003,  1 << 20,
                              1 << 26, 1LL << 31, (1LL << 31) + 5, 1LL << 33, 1LL << 40};
    for (int64_t O : values) {
        if (O == 0) {
            continue;
        }
        for (int64_t R : values) {
            if ((double)O * (double)(R > 0 ? R : 1) > 1e13) {
                continue;
            }
            for (int inner = 0; inner < 2; inner++) {
                for (int vec : {1, 2, 4, 8, 16}) {
                    RedLaunch L = plan_reduction(O, R, inner && R > 0, vec);
                    CHECK(L.bx > 0 && L.by > 0 && L.bx * L.by <= (L.inner ? 512 : 256), "block %dx%d", L.bx, L.by);
                    CHECK(L.bx % 32 == 0, "bx %d is whole warps", L.bx);
                    CHECK(!L.inner || L.bx == 32 || L.by == 1, "inner blocks with several warps per output use one row");
                    CHECK(L.inner || (L.by & (L.by - 1)) == 0, "outer by %d is a power of two", L.by);
                    CHECK(L.groups == ceil_div(O, L.inner ? L.by : L.bx), "groups");
                    CHECK(L.grid_x >= 1 && (int64_t)L.grid_x <= L.groups && L.grid_x <= (unsigned)INT32_MAX, "grid x");
                    CHECK(L.nchunks >= 1 && L.nchunks <= 65535, "nchunks %lld", (long long)L.nchunks);
                    if (R > 0) {
                        CHECK(L.chunk * L.nchunks >= R && L.chunk * (L.nchunks - 1) < R,
                              "chunks cover R=%lld exactly: %lld x %lld", (long long)R, (long long)L.nchunks,
                              (long long)L.chunk);
                    }
                    CHECK((double)L.groups * (double)L.nchunks < 4e12, "work");
                }
            }
        }
    }
    /* the shapes of the benchmarks */
    RedLaunch full = plan_reduction(1, 1 << 26, true, 4);
    CHECK(full.nchunks >= 512 && full.bx == 512, "a full sum of 2^26 floats uses the whole GPU (%lld chunks)",
          (long long)full.nchunks);
    RedLaunch rows = plan_reduction(8192, 8192, true, 4);
    CHECK(rows.nchunks == 1 && rows.bx == 512 && rows.by == 1, "8192 rows of 8192: a block per row");
    RedLaunch cols = plan_reduction(8192, 8192, false, 4);
    CHECK(cols.bx == 32 && cols.by == 8 && cols.nchunks > 1, "8192 columns: coalesced, chunked");
}

/* CtLayout's offsets (magic-number and 64-bit paths) against a naive decomposition. */
static void check_layouts(void)
{
    for (int trial = 0; trial < 2000; trial++) {
        CtLayout<3> L;
        memset(&L, 0, sizeof(L));
        L.ndim = (int)rand_int(0, 6);
        const bool huge = trial % 2 == 1;
        for (int d = 0; d < L.ndim; d++) {
            L.shape[d] = rand_int(1, huge ? 3000 : 40);
            for (int k = 0; k < 3; k++) {
                L.strides[d][k] = rand_int(-1000000, 1000000);
            }
        }
        L.finalize();
        double numel = 1;
        for (int d = 0; d < L.ndim; d++) {
            numel *= (double)L.shape[d];
        }
        CHECK(L.fast == (numel <= (double)CT_MAX_INDEX32), "fast iff every index fits 31 bits");
        for (int s = 0; s < 20; s++) {
            int64_t i = (int64_t)(std::uniform_real_distribution<double>(0, 1)(rng) * numel);
            if (i >= (int64_t)numel) {
                i = (int64_t)numel - 1;
            }
            if (i < 0) {
                i = 0;
            }
            int64_t off[3], want[3] = {0, 0, 0}, rem = i;
            L.offsets(i, off);
            for (int d = 0; d < L.ndim; d++) {
                int64_t ix = d == L.ndim - 1 ? rem : rem % L.shape[d];
                rem = d == L.ndim - 1 ? 0 : rem / L.shape[d];
                for (int k = 0; k < 3; k++) {
                    want[k] += ix * L.strides[d][k];
                }
            }
            CHECK(off[0] == want[0] && off[1] == want[1] && off[2] == want[2], "layout offsets of %lld (fast %d)",
                  (long long)i, (int)L.fast);
        }
    }
}

/* --- 2. reductions ------------------------------------------------------------------------------------ */
/* Runs a planned reduction the way the kernels do: every thread's body, the trees, the writes,
 * then the partials. */
template <class Op, class POp>
static void emulate_reduction(RedArgs a, const RedLaunch &L)
{
    typedef typename Op::Acc Acc;
    a.groups = L.groups;
    a.nchunks = L.nchunks;
    a.chunk = L.chunk;
    std::vector<Acc> partials;
    if (L.nchunks > 1) {
        partials.resize((size_t)(a.O * L.nchunks));
        a.partials = partials.data();
    }
    const Op op(a);
    std::vector<Acc> vals(512);
    for (int64_t c = 0; c < L.nchunks; c++) {
        const int64_t r0 = c * a.chunk;
        const int64_t r1 = r0 + a.chunk < a.R ? r0 + a.chunk : a.R;
        for (int64_t g = 0; g < L.groups; g++) {
            if (L.inner) {
                for (int ty = 0; ty < L.by; ty++) {
                    int64_t o = g * L.by + ty;
                    if (o >= a.O) {
                        continue;
                    }
                    int64_t off[3];
                    a.kept.offsets(o, off);
                    typename Op::Ctx ctx = op.context(a, off);
                    for (int tx = 0; tx < L.bx; tx++) {
                        vals[tx] = reduce_thread_inner(op, a, a.in + off[0], r0, r1, ctx, tx, L.bx);
                    }
                    reduce_write(op, a, host_row_tree(op, vals.data(), L.bx), o, c, ctx, off);
                }
            } else {
                for (int tx = 0; tx < L.bx; tx++) {
                    int64_t o = g * L.bx + tx;
                    if (o >= a.O) {
                        continue;
                    }
                    int64_t off[3];
                    a.kept.offsets(o, off);
                    typename Op::Ctx ctx = op.context(a, off);
                    for (int ty = 0; ty < L.by; ty++) {
                        vals[ty] = reduce_thread_outer(op, a, a.in + off[0], r0, r1, ctx, ty, L.by);
                    }
                    Acc acc = L.by > 1 ? host_column_tree(op, vals.data(), L.by) : vals[0];
                    reduce_write(op, a, acc, o, c, ctx, off);
                }
            }
        }
    }
    if (L.nchunks > 1) {
        const POp pop(a);
        for (int64_t o = 0; o < a.O; o++) {
            for (int lane = 0; lane < 32; lane++) {
                vals[lane] = reduce_partials_thread(pop, a, o, lane);
            }
            int64_t off[3];
            a.kept.offsets(o, off);
            pop.finish(a, host_warp_tree(pop, vals.data()), pop.context(a, off), off);
        }
    }
}

typedef void (*Emulator)(const RedArgs &, const RedLaunch &);
template <int IN, typename ACC, int OP>
static void emulate_op(const RedArgs &a, const RedLaunch &L)
{
    emulate_reduction<ReduceOp<IN, ACC, OP>, ReduceOp<CanonicalIn<ACC>::value, ACC, OP>>(a, L);
}
template <int IN, typename ACC>
struct EmuRow {
    static constexpr Emulator ops[4] = {&emulate_op<IN, ACC, 0>, &emulate_op<IN, ACC, 1>, &emulate_op<IN, ACC, 2>,
                                        &emulate_op<IN, ACC, 3>};
};
static const Emulator *const emu_table[CT_NUM_DTYPES][3] = {
    {nullptr, nullptr, EmuRow<CT_BOOL, int64_t>::ops},
    {nullptr, nullptr, EmuRow<CT_U8, int64_t>::ops},
    {nullptr, nullptr, EmuRow<CT_I8, int64_t>::ops},
    {nullptr, nullptr, EmuRow<CT_I16, int64_t>::ops},
    {nullptr, nullptr, EmuRow<CT_I32, int64_t>::ops},
    {nullptr, nullptr, EmuRow<CT_I64, int64_t>::ops},
    {EmuRow<CT_F16, float>::ops, EmuRow<CT_F16, double>::ops, nullptr},
    {EmuRow<CT_BF16, float>::ops, EmuRow<CT_BF16, double>::ops, nullptr},
    {EmuRow<CT_F32, float>::ops, EmuRow<CT_F32, double>::ops, nullptr},
    {nullptr, EmuRow<CT_F64, double>::ops, nullptr},
};

/* A tensor of `nd` dims over a buffer: sizes and element strides. */
struct Tensor {
    int nd;
    int64_t sizes[4], strides[4];
    int dtype;
    char *data;
};

/* ops_reduce.c's reduce_into: dims of size 1 dropped, the rest ordered by input stride and
 * merged where contiguous. out/shift are keepdim-shaped and contiguous. */
static void describe(CtReduceDesc &d, const Tensor &t, const bool *mask, const Tensor &out, const Tensor *shift)
{
    memset(&d, 0, sizeof(d));
    int64_t isz_in = itemsize(t.dtype), isz_out = itemsize(out.dtype), isz_shift = shift ? itemsize(shift->dtype) : 0;
    int n = 0;
    d.reduce_numel = 1;
    for (int i = t.nd - 1; i >= 0; i--) {
        if (mask[i]) {
            d.reduce_numel *= t.sizes[i];
        }
        if (t.sizes[i] == 1) {
            continue;
        }
        d.shape[n] = t.sizes[i];
        d.reduced[n] = mask[i];
        d.in_strides[n] = t.strides[i] * isz_in;
        d.out_strides[n] = mask[i] ? 0 : out.strides[i] * isz_out;
        d.shift_strides[n] = (mask[i] || shift == nullptr) ? 0 : shift->strides[i] * isz_shift;
        n++;
    }
    auto key = [](int64_t s) { return s == 0 ? INT64_MAX : s < 0 ? -s : s; };
    for (int i = 1; i < n; i++) {
        for (int j = i; j > 0 && key(d.in_strides[j]) < key(d.in_strides[j - 1]); j--) {
            std::swap(d.shape[j], d.shape[j - 1]);
            std::swap(d.reduced[j], d.reduced[j - 1]);
            std::swap(d.in_strides[j], d.in_strides[j - 1]);
            std::swap(d.out_strides[j], d.out_strides[j - 1]);
            std::swap(d.shift_strides[j], d.shift_strides[j - 1]);
        }
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m > 0 && d.reduced[m - 1] == d.reduced[i] && d.in_strides[i] == d.in_strides[m - 1] * d.shape[m - 1] &&
            d.out_strides[i] == d.out_strides[m - 1] * d.shape[m - 1] &&
            d.shift_strides[i] == d.shift_strides[m - 1] * d.shape[m - 1]) {
            d.shape[m - 1] *= d.shape[i];
            continue;
        }
        d.shape[m] = d.shape[i];
        d.reduced[m] = d.reduced[i];
        d.in_strides[m] = d.in_strides[i];
        d.out_strides[m] = d.out_strides[i];
        d.shift_strides[m] = d.shift_strides[i];
        m++;
    }
    if (m == 0) {
        d.shape[0] = 1;
        d.reduced[0] = true;
        m = 1;
    }
    d.ndim = m;
    d.in = t.data;
    d.out = out.data;
    d.shift = shift ? shift->data : nullptr;
    d.in_dtype = (CtDType)t.dtype;
    d.out_dtype = (CtDType)out.dtype;
    d.out_numel = 1;
    for (int i = 0; i < out.nd; i++) {
        d.out_numel *= out.sizes[i];
    }
    d.device = 0;
}

/* The reference: every output and reduced element in index order, in double (int64 for the
 * integer accumulator), with reduce_math.h's f64/i64 functions. */
struct Reference {
    double f;
    int64_t i;
};
static Reference reference_output(const CtReduceDesc &d, const Tensor &t, const bool *mask, const int64_t *oidx,
                                  double shift)
{
    int64_t nred = 1;
    for (int i = 0; i < t.nd; i++) {
        nred *= mask[i] ? t.sizes[i] : 1;
    }
    double acc = ct_red_identity_f64(d.combine, d.map);
    int64_t iacc = ct_red_identity_i64(d.combine, d.map);
    double s = ct_red_shift_f64(shift, d.map);
    for (int64_t r = 0; r < nred; r++) {
        int64_t rem = r, off = 0;
        for (int i = t.nd - 1; i >= 0; i--) {
            int64_t ix = oidx[i];
            if (mask[i]) {
                ix = rem % t.sizes[i];
                rem /= t.sizes[i];
            }
            off += ix * t.strides[i];
        }
        const char *p = t.data + off * itemsize(t.dtype);
        iacc = ct_red_combine_i64(iacc, ct_red_map_i64(int_of(t.dtype, p), d.map, d.p, 0), d.combine);
        acc = ct_red_combine_f64(acc, ct_red_map_f64(value_of(t.dtype, p), d.map, d.p, s), d.combine);
    }
    return Reference{ct_red_finish_f64(acc, d.final, d.divisor, d.p, s), iacc};
}

struct Case {
    const char *name;
    CtReduceCombine combine;
    CtReduceMap map;
    CtReduceFinal final;
    double p;
    bool shifted; /* needs a shift tensor (the max, or the mean) */
    bool logical; /* all/any/count_nonzero: double or int64 accumulator, bool/int64 output */
};

static const Case cases[] = {
    {"sum", CT_COMBINE_SUM, CT_MAP_IDENTITY, CT_FINAL_NONE, 0, false, false},
    {"nansum", CT_COMBINE_SUM, CT_MAP_NAN_TO_ZERO, CT_FINAL_NONE, 0, false, false},
    {"mean", CT_COMBINE_SUM, CT_MAP_IDENTITY, CT_FINAL_DIVIDE, 0, false, false},
    {"prod", CT_COMBINE_PROD, CT_MAP_IDENTITY, CT_FINAL_NONE, 0, false, false},
    {"amax", CT_COMBINE_MAX, CT_MAP_IDENTITY, CT_FINAL_NONE, 0, false, false},
    {"amin", CT_COMBINE_MIN, CT_MAP_IDENTITY, CT_FINAL_NONE, 0, false, false},
    {"norm2", CT_COMBINE_SUM, CT_MAP_SQUARE, CT_FINAL_SQRT_DIVIDE, 2, false, false},
    {"norm1", CT_COMBINE_SUM, CT_MAP_ABS, CT_FINAL_NONE, 1, false, false},
    {"norm3", CT_COMBINE_SUM, CT_MAP_ABS_POW, CT_FINAL_ROOT, 3, false, false},
    {"norm_inf", CT_COMBINE_MAX, CT_MAP_ABS, CT_FINAL_NONE, INFINITY, false, false},
    {"norm0", CT_COMBINE_SUM, CT_MAP_NONZERO, CT_FINAL_NONE, 0, false, false},
    {"var", CT_COMBINE_SUM, CT_MAP_SQDIFF_SHIFT, CT_FINAL_DIVIDE, 0, true, false},
    {"std", CT_COMBINE_SUM, CT_MAP_SQDIFF_SHIFT, CT_FINAL_SQRT_DIVIDE, 0, true, false},
    {"logsumexp", CT_COMBINE_SUM, CT_MAP_EXP_SHIFT, CT_FINAL_LOG_SHIFT, 0, true, false},
    {"all", CT_COMBINE_MIN, CT_MAP_NONZERO, CT_FINAL_NONE, 0, false, true},
    {"any", CT_COMBINE_MAX, CT_MAP_NONZERO, CT_FINAL_NONE, 0, false, true},
    {"count_nonzero", CT_COMBINE_SUM, CT_MAP_NONZERO, CT_FINAL_NONE, 0, false, true},
};

/* One random reduction of dtype `dt` with case `cs`, emulated under every plan shape. */
static void check_one_reduction(int dt, const Case &cs, int trial)
{
    const bool floating = is_float(dt);
    if (!floating && !cs.logical && (cs.map != CT_MAP_IDENTITY || cs.final != CT_FINAL_NONE)) {
        return; /* the ops allow these on floats only */
    }
    Tensor t;
    t.nd = (int)rand_int(1, 4);
    t.dtype = dt;
    int64_t numel = 1;
    const int big = (int)rand_int(0, 5); /* one long dim now and then: vector paths, chunks */
    for (int i = 0; i < t.nd; i++) {
        t.sizes[i] = rand_int(1, 9);
        if (i == big) {
            t.sizes[i] = rand_int(20, 5000);
        }
        if (rand_int(0, 12) == 0) {
            t.sizes[i] = 1;
        }
        numel *= t.sizes[i];
    }
    while (numel > 20000) { /* keep the naive reference quick */
        int k = (int)(std::max_element(t.sizes, t.sizes + t.nd) - t.sizes);
        numel /= t.sizes[k];
        t.sizes[k] = (t.sizes[k] + 1) / 2;
        numel *= t.sizes[k];
    }
    if (trial % 7 == 0) {
        t.sizes[0] = 0; /* an empty reduction now and then */
        numel = 0;
    }
    /* a random dim order in memory, and sometimes a one-element offset (unaligned) */
    int perm[4] = {0, 1, 2, 3};
    std::shuffle(perm, perm + t.nd, rng);
    int64_t stride = 1;
    for (int k = t.nd - 1; k >= 0; k--) {
        t.strides[perm[k]] = stride;
        stride *= t.sizes[perm[k]] > 0 ? t.sizes[perm[k]] : 1;
    }
    const int shift_elems = (int)rand_int(0, 1);
    std::vector<char> buf((size_t)(numel + 1) * itemsize(dt) + 64, 0);
    char *base = (char *)(((uintptr_t)buf.data() + 15) & ~(uintptr_t)15);
    t.data = base + shift_elems * itemsize(dt);
    bool specials = cs.combine != CT_COMBINE_PROD && trial % 3 == 0;
    bool positive = cs.map == CT_MAP_EXP_SHIFT ? false : cs.combine == CT_COMBINE_PROD;
    for (int64_t i = 0; i < numel; i++) {
        random_element(dt, t.data + i * itemsize(dt), specials, positive);
        if (cs.combine == CT_COMBINE_PROD && floating) { /* keep products finite and exact-ish */
            double v = value_of(dt, t.data + i * itemsize(dt));
            CT_STORE_F64((char *)&v, (rand_int(0, 1) ? 1.0 : -1.0) * (rand_int(0, 3) == 0 ? 2.0 : 1.0));
            switch (dt) {
            case CT_F16:
                CT_STORE_F16(t.data + i * itemsize(dt), v);
                break;
            case CT_BF16:
                CT_STORE_BF16(t.data + i * itemsize(dt), v);
                break;
            case CT_F32:
                CT_STORE_F32(t.data + i * itemsize(dt), v);
                break;
            default:
                CT_STORE_F64(t.data + i * itemsize(dt), v);
            }
        }
    }
    bool mask[4];
    bool any = false;
    for (int i = 0; i < t.nd; i++) {
        mask[i] = rand_int(0, 1) == 1;
        any |= mask[i];
    }
    if (!any || rand_int(0, 5) == 0) {
        for (int i = 0; i < t.nd; i++) {
            mask[i] = rand_int(0, 3) != 0 || !any;
        }
    }
    if (cs.combine == CT_COMBINE_MAX || cs.combine == CT_COMBINE_MIN) {
        bool empty_reduced = false;
        for (int i = 0; i < t.nd; i++) {
            empty_reduced |= mask[i] && t.sizes[i] == 0;
        }
        if (empty_reduced && !cs.logical) {
            return; /* no identity: the ops raise */
        }
    }
    CtAccType acc = cs.logical ? (floating ? CT_ACC_F64 : CT_ACC_I64)
                    : dt == CT_F64 ? CT_ACC_F64
                    : floating     ? CT_ACC_F32
                                   : CT_ACC_I64;
    int out_dtype = cs.logical ? (strcmp(cs.name, "count_nonzero") == 0 ? CT_I64 : dt == CT_U8 ? CT_U8 : CT_BOOL)
                    : (!floating && cs.combine != CT_COMBINE_MAX && cs.combine != CT_COMBINE_MIN) ? CT_I64
                                                                                                : dt;
    int acc_dtype = acc == CT_ACC_F32 ? CT_F32 : acc == CT_ACC_F64 ? CT_F64 : CT_I64;
    Tensor out, shift;
    out.nd = shift.nd = t.nd;
    out.dtype = out_dtype;
    shift.dtype = acc_dtype;
    int64_t onumel = 1;
    for (int i = t.nd - 1; i >= 0; i--) {
        out.sizes[i] = shift.sizes[i] = mask[i] ? 1 : t.sizes[i];
        out.strides[i] = shift.strides[i] = onumel;
        onumel *= out.sizes[i];
    }
    if (onumel == 0) {
        return;
    }
    std::vector<char> obuf((size_t)onumel * 8 + 16), sbuf((size_t)onumel * 8 + 16);
    out.data = obuf.data();
    shift.data = sbuf.data();
    int64_t nred = 1;
    for (int i = 0; i < t.nd; i++) {
        nred *= mask[i] ? t.sizes[i] : 1;
    }
    std::vector<double> shift_values((size_t)onumel, 0.0);
    for (int64_t o = 0; o < onumel; o++) {
        double v = cs.shifted ? (double)rand_int(-3, 3) : 0.0;
        if (cs.map == CT_MAP_EXP_SHIFT && rand_int(0, 9) == 0) {
            v = -INFINITY;
        }
        if (acc_dtype == CT_F32) {
            ((float *)shift.data)[o] = (float)v;
            v = (float)v;
        } else if (acc_dtype == CT_F64) {
            ((double *)shift.data)[o] = v;
        }
        shift_values[o] = v;
    }
    CtReduceDesc d;
    describe(d, t, mask, out, cs.shifted ? &shift : nullptr);
    d.combine = cs.combine;
    d.map = cs.map;
    d.final = cs.final;
    d.acc = acc;
    d.p = cs.p;
    d.divisor = cs.final == CT_FINAL_SQRT_DIVIDE && cs.map == CT_MAP_SQUARE ? 1.0 : (double)(nred > 1 ? nred - 1 : 1);
    if (strcmp(cs.name, "mean") == 0) {
        d.divisor = (double)nred;
    }
    CHECK(ct_cuda_reduce_pair_supported(dt, acc), "%s of %s: the ops produce this pair", cs.name,
          ct_red_dtype_name(dt));
    CHECK(kReduceTable[dt][acc] != nullptr, "%s of %s: a kernel row", cs.name, ct_red_dtype_name(dt));
    const Emulator *row = emu_table[dt][acc];
    if (row == nullptr) {
        return;
    }
    RedArgs a;
    ct_cuda_reduce_args(a, &d);
    const int vec = 16 / itemsize(dt);
    std::vector<RedLaunch> plans = {plan_reduction(a.O, a.R, ct_cuda_reduce_inner(&d, a), vec)};
    if (a.R > 0) {
        plans.push_back(plan_reduction(a.O, a.R, true, vec));
        plans.push_back(plan_reduction(a.O, a.R, false, vec));
        for (RedLaunch L : {plan_reduction(a.O, a.R, true, vec), plan_reduction(a.O, a.R, false, vec)}) {
            L.chunk = L.inner ? (int64_t)L.bx * vec : L.by;
            L.chunk *= rand_int(1, 3);
            L.nchunks = ceil_div(a.R, L.chunk);
            if (L.nchunks > 1 && L.nchunks <= 65535) {
                plans.push_back(L);
            }
        }
        if (a.O <= 64) {
            RedLaunch wide = plan_reduction(a.O, a.R, true, vec);
            wide.bx = 512;
            wide.by = 1;
            wide.groups = a.O;
            wide.grid_x = (unsigned)a.O;
            plans.push_back(wide);
        }
    }
    std::vector<char> first;
    for (size_t pi = 0; pi < plans.size(); pi++) {
        const RedLaunch &L = plans[pi];
        memset(out.data, 0xab, (size_t)onumel * itemsize(out_dtype));
        row[cs.combine](a, L);
        int64_t oidx[4];
        for (int64_t o = 0; o < onumel; o++) {
            int64_t rem = o;
            for (int i = t.nd - 1; i >= 0; i--) {
                oidx[i] = rem % out.sizes[i];
                rem /= out.sizes[i];
            }
            Reference ref = reference_output(d, t, mask, oidx, shift_values[o]);
            const char *gp = out.data + o * itemsize(out_dtype);
            double got = value_of(out_dtype, gp);
            char wbuf[8] = {0};
            if (acc == CT_ACC_I64) { /* exact: the same wrapping integer arithmetic */
                ct_store_any(wbuf, out_dtype, ref.i);
                CHECK(memcmp(wbuf, gp, itemsize(out_dtype)) == 0,
                      "%s of %s [%s] trial %d plan %zu (inner %d, %dx%d, %lld chunks) output %lld: want %lld got %g",
                      cs.name, ct_red_dtype_name(dt), ct_red_dtype_name(out_dtype), trial, pi, (int)L.inner, L.bx,
                      L.by, (long long)L.nchunks, (long long)o, (long long)ref.i, got);
                continue;
            }
            ct_store_any(wbuf, out_dtype, ref.f); /* the reference rounded to the output dtype */
            double w = value_of(out_dtype, wbuf);
            bool exact = cs.combine == CT_COMBINE_MAX || cs.combine == CT_COMBINE_MIN || !is_float(out_dtype);
            double tol = out_dtype == CT_F64 && acc == CT_ACC_F64 ? 1e-12
                         : out_dtype == CT_F16                   ? 2e-3
                         : out_dtype == CT_BF16                  ? 1.6e-2
                                                                 : 2e-5;
            if (cs.map == CT_MAP_EXP_SHIFT || cs.final == CT_FINAL_ROOT) {
                tol *= 4;
            }
            bool ok = (isnan(w) && isnan(got)) || w == got ||
                      (!exact && fabs(w - got) <= tol * (1 + fabs(w)) * (1 + (double)nred / 1000));
            if (!exact && isinf(w)) {
                ok = w == got || (out_dtype == CT_F16 && fabs(got) >= 60000); /* overflow at the edge */
            }
            CHECK(ok, "%s of %s [%s] trial %d plan %zu (inner %d, %dx%d, %lld chunks) output %lld: want %.10g got %.10g",
                  cs.name, ct_red_dtype_name(dt), ct_red_dtype_name(out_dtype), trial, pi, (int)L.inner, L.bx, L.by,
                  (long long)L.nchunks, (long long)o, w, got);
        }
        if (pi == 0) {
            first.assign(out.data, out.data + onumel * itemsize(out_dtype));
        }
    }
    /* the same values at another alignment give the same bits under the same plan */
    if (numel > 0) {
        std::vector<char> buf2((size_t)(numel + 2) * itemsize(dt) + 64, 0);
        char *base2 = (char *)(((uintptr_t)buf2.data() + 15) & ~(uintptr_t)15) + (1 - shift_elems) * itemsize(dt);
        memcpy(base2, t.data, (size_t)numel * itemsize(dt));
        RedArgs a2 = a;
        a2.in = base2;
        memset(out.data, 0xcd, (size_t)onumel * itemsize(out_dtype));
        row[cs.combine](a2, plans[0]);
        CHECK(memcmp(first.data(), out.data, (size_t)onumel * itemsize(out_dtype)) == 0,
              "%s of %s trial %d: an unaligned copy gives other bits", cs.name, ct_red_dtype_name(dt), trial);
    }
}

static void check_reductions(void)
{
    for (int trial = 0; trial < 16; trial++) {
        for (int dt = 0; dt < CT_NUM_DTYPES; dt++) {
            for (const Case &cs : cases) {
                check_one_reduction(dt, cs, trial);
            }
        }
    }
    /* a long sum: chunked partials, in float, close to the double sum */
    const int64_t n = 1 << 20;
    std::vector<float> x((size_t)n + 8);
    double want = 0;
    for (int64_t i = 0; i < n; i++) {
        x[(size_t)i] = (float)((double)rand_int(0, 1000000) / 1000000.0);
        want += x[(size_t)i];
    }
    float got = 0;
    CtReduceDesc d;
    memset(&d, 0, sizeof(d));
    d.ndim = 1;
    d.shape[0] = n;
    d.reduced[0] = true;
    d.in_strides[0] = 4;
    d.in = (const char *)x.data();
    d.out = (char *)&got;
    d.in_dtype = d.out_dtype = CT_F32;
    d.combine = CT_COMBINE_SUM;
    d.acc = CT_ACC_F32;
    d.out_numel = 1;
    d.reduce_numel = n;
    RedArgs a;
    ct_cuda_reduce_args(a, &d);
    RedLaunch L = plan_reduction(a.O, a.R, ct_cuda_reduce_inner(&d, a), 4);
    CHECK(L.nchunks > 1, "chunked");
    emulate_op<CT_F32, float, CT_COMBINE_SUM>(a, L);
    CHECK(fabs(got - want) <= 1e-6 * want, "sum of 2^20 floats: %.9g vs %.9g", (double)got, want);
}

/* --- 3. arg-reductions --------------------------------------------------------------------------------- */
template <int D>
static void check_arg_dtype(void)
{
    typedef typename CtCudaType<D>::T T;
    for (int trial = 0; trial < 60; trial++) {
        const int64_t n = trial % 5 == 0 ? rand_int(1, 5000) : rand_int(1, 40);
        const int64_t lines = rand_int(1, trial % 4 == 0 ? 3 : 40);
        const bool by_rows = rand_int(0, 1) == 1; /* lines contiguous, or the dim strided */
        Array<T> in((size_t)(n * lines));
        for (auto &v : in) {
            random_element(D, (char *)&v, trial % 2 == 0, false);
        }
        CtDimDesc d;
        memset(&d, 0, sizeof(d));
        d.n = n;
        d.nouter = lines > 1 ? 1 : 0;
        d.outer_shape[0] = lines;
        d.outer_numel = lines;
        d.dim_strides[0] = (by_rows ? 1 : lines) * (int64_t)sizeof(T);
        d.outer_strides[0][0] = (by_rows ? n : 1) * (int64_t)sizeof(T);
        Array<T> vals((size_t)lines);
        std::vector<int64_t> idx((size_t)lines, -7);
        d.outer_strides[0][1] = sizeof(T);
        d.outer_strides[0][2] = 8;
        d.data[0] = (char *)in.data();
        d.data[1] = (char *)vals.data();
        d.data[2] = (char *)idx.data();
        d.dtypes[0] = d.dtypes[1] = (CtDType)D;
        d.dtypes[2] = CT_I64;
        for (int is_max = 0; is_max < 2; is_max++) {
            RedArgs a;
            ct_cuda_arg_args(a, &d, is_max);
            std::vector<RedLaunch> plans = {
                plan_reduction(a.O, a.R, ct_lines_cooperative(&d) && (d.n >= 16 || d.nouter == 0), 16 / (int)sizeof(T)),
                plan_reduction(a.O, a.R, true, 16 / (int)sizeof(T)), plan_reduction(a.O, a.R, false, 16 / (int)sizeof(T))};
            RedLaunch chunked = plans[1];
            chunked.chunk = chunked.bx * (16 / (int)sizeof(T));
            chunked.nchunks = ceil_div(a.R, chunked.chunk);
            plans.push_back(chunked);
            for (const RedLaunch &L : plans) {
                emulate_reduction<ArgOp<D>, ArgOp<D>>(a, L);
                for (int64_t l = 0; l < lines; l++) {
                    /* the CPU's loop */
                    auto at = [&](int64_t i) { return (double)ct_widen<D>(in[(size_t)(by_rows ? l * n + i : i * lines + l)]); };
                    double best = at(0);
                    int64_t bi = 0;
                    for (int64_t i = 1; i < n && best == best; i++) {
                        double v = at(i);
                        if ((is_max ? v > best : v < best) || v != v) {
                            best = v;
                            bi = i;
                        }
                    }
                    CHECK(idx[(size_t)l] == bi, "arg%s of %s line %lld (n %lld, inner %d, %lld chunks): index %lld, want %lld",
                          is_max ? "max" : "min", ct_red_dtype_name(D), (long long)l, (long long)n, (int)L.inner,
                          (long long)L.nchunks, (long long)idx[(size_t)l], (long long)bi);
                    double got = (double)ct_widen<D>(vals[(size_t)l]);
                    CHECK((got == best) || (got != got && best != best), "arg value");
                }
            }
        }
    }
}

static void check_arg_reductions(void)
{
    check_arg_dtype<CT_BOOL>();
    check_arg_dtype<CT_U8>();
    check_arg_dtype<CT_I8>();
    check_arg_dtype<CT_I16>();
    check_arg_dtype<CT_I32>();
    check_arg_dtype<CT_I64>();
    check_arg_dtype<CT_F16>();
    check_arg_dtype<CT_BF16>();
    check_arg_dtype<CT_F32>();
    check_arg_dtype<CT_F64>();
}

/* --- 4. scans and softmax (the serial line bodies) --------------------------------------------------------- */
template <int D>
static void check_scan_softmax_dtype(void)
{
    typedef typename CtCudaType<D>::T T;
    for (int trial = 0; trial < 20; trial++) {
        const int64_t n = rand_int(1, 300), lines = rand_int(1, 5);
        Array<T> in((size_t)(n * lines));
        for (auto &v : in) {
            random_element(D, (char *)&v, false, false);
        }
        const int out_dtype = is_float(D) ? D : CT_I64;
        std::vector<char> out((size_t)(n * lines) * 8);
        CtDimDesc d;
        memset(&d, 0, sizeof(d));
        d.n = n;
        d.nouter = 1;
        d.outer_shape[0] = lines;
        d.outer_numel = lines;
        d.dim_strides[0] = sizeof(T);
        d.dim_strides[1] = itemsize(out_dtype);
        d.outer_strides[0][0] = n * (int64_t)sizeof(T);
        d.outer_strides[0][1] = n * itemsize(out_dtype);
        d.data[0] = (char *)in.data();
        d.data[1] = out.data();
        d.dtypes[0] = (CtDType)D;
        d.dtypes[1] = (CtDType)out_dtype;
        CtLineArgs a;
        ct_line_args(a, &d);
        for (int op = 0; op < 2; op++) {
            for (int64_t l = 0; l < lines; l++) {
                int64_t off[3];
                a.outer.offsets(l, off);
                scan_line_serial<D>(a, off, op);
                double acc = op == 0 ? 0.0 : 1.0;
                uint64_t iacc = op == 0 ? 0 : 1;
                for (int64_t i = 0; i < n; i++) {
                    const char *p = (const char *)&in[(size_t)(l * n + i)];
                    const char *q = out.data() + (l * n + i) * itemsize(out_dtype);
                    if (is_float(D)) {
                        acc = op == 0 ? acc + value_of(D, p) : acc * value_of(D, p);
                        char w[8];
                        ct_store_any(w, out_dtype, acc);
                        CHECK(memcmp(w, q, itemsize(out_dtype)) == 0, "cum%s of %s", op ? "prod" : "sum",
                              ct_red_dtype_name(D));
                    } else {
                        iacc = op == 0 ? iacc + (uint64_t)int_of(D, p) : iacc * (uint64_t)int_of(D, p);
                        CHECK(*(const int64_t *)q == (int64_t)iacc, "cum%s of %s", op ? "prod" : "sum",
                              ct_red_dtype_name(D));
                    }
                }
            }
        }
        /* cummax/cummin: values in D, exact, and the index where the extremum was last reached */
        std::vector<int64_t> idx((size_t)(n * lines));
        CtDimDesc e = d;
        e.dim_strides[1] = sizeof(T);
        e.outer_strides[0][1] = n * (int64_t)sizeof(T);
        e.dtypes[1] = (CtDType)D;
        e.data[2] = (char *)idx.data();
        e.dim_strides[2] = 8;
        e.outer_strides[0][2] = n * 8;
        CtLineArgs ea;
        ct_line_args(ea, &e);
        for (int op = CT_SCAN_MAX; op <= CT_SCAN_MIN; op++) {
            for (int64_t l = 0; l < lines; l++) {
                int64_t off[3];
                ea.outer.offsets(l, off);
                scan_line_serial<D>(ea, off, op);
                double best = 0;
                int64_t at = 0;
                for (int64_t i = 0; i < n; i++) {
                    double x = value_of(D, (const char *)&in[(size_t)(l * n + i)]);
                    if (i == 0 || (op == CT_SCAN_MAX ? x >= best : x <= best) || x != x) {
                        best = x;
                        at = i;
                    }
                    double got = value_of(D, out.data() + (l * n + i) * (int64_t)sizeof(T));
                    CHECK((got == best || (got != got && best != best)) && idx[(size_t)(l * n + i)] == at,
                          "cum%s of %s at %lld: %g (index %lld), want %g (index %lld)", op == CT_SCAN_MAX ? "max" : "min",
                          ct_red_dtype_name(D), (long long)i, got, (long long)idx[(size_t)(l * n + i)], best,
                          (long long)at);
                }
            }
        }
        if constexpr (D == CT_F16 || D == CT_BF16 || D == CT_F32 || D == CT_F64) {
            CtDimDesc s = e; /* logcumsumexp: floats, output in D */
            s.data[2] = nullptr;
            CtLineArgs sa;
            ct_line_args(sa, &s);
            for (int64_t l = 0; l < lines; l++) {
                int64_t off[3];
                sa.outer.offsets(l, off);
                scan_line_serial<D>(sa, off, CT_SCAN_LOGSUMEXP);
                double acc = -INFINITY;
                for (int64_t i = 0; i < n; i++) {
                    double x = value_of(D, (const char *)&in[(size_t)(l * n + i)]);
                    acc = acc == -INFINITY ? x : std::max(acc, x) + log1p(exp(-fabs(acc - x)));
                    double got = value_of(D, out.data() + (l * n + i) * (int64_t)sizeof(T));
                    double tol = D == CT_F64 ? 1e-12 : D == CT_F32 ? 1e-6 : D == CT_F16 ? 1e-3 : 8e-3;
                    CHECK(fabs(got - acc) <= tol * (1 + fabs(acc)) || (got != got && acc != acc),
                          "logcumsumexp of %s at %lld: %g vs %g", ct_red_dtype_name(D), (long long)i, got, acc);
                }
            }
            for (int log_out = 0; log_out < 2; log_out++) {
                for (int64_t l = 0; l < lines; l++) {
                    int64_t off[3];
                    a.outer.offsets(l, off);
                    softmax_line_serial<D>(a, off, log_out != 0);
                    double mx = -INFINITY, sum = 0;
                    for (int64_t i = 0; i < n; i++) {
                        mx = std::max(mx, value_of(D, (const char *)&in[(size_t)(l * n + i)]));
                    }
                    for (int64_t i = 0; i < n; i++) {
                        sum += exp(value_of(D, (const char *)&in[(size_t)(l * n + i)]) - mx);
                    }
                    for (int64_t i = 0; i < n; i++) {
                        double x = value_of(D, (const char *)&in[(size_t)(l * n + i)]);
                        double want = log_out ? x - mx - log(sum) : exp(x - mx) / sum;
                        double got = value_of(D, out.data() + (l * n + i) * itemsize(D));
                        double tol = D == CT_F64 ? 1e-12 : D == CT_F32 ? 1e-5 : D == CT_F16 ? 2e-3 : 1.6e-2;
                        CHECK(fabs(got - want) <= tol * (1 + fabs(want)), "%ssoftmax of %s: %g vs %g",
                              log_out ? "log_" : "", ct_red_dtype_name(D), got, want);
                    }
                }
            }
        }
    }
}

static void check_scans(void)
{
    check_scan_softmax_dtype<CT_BOOL>();
    check_scan_softmax_dtype<CT_U8>();
    check_scan_softmax_dtype<CT_I8>();
    check_scan_softmax_dtype<CT_I16>();
    check_scan_softmax_dtype<CT_I32>();
    check_scan_softmax_dtype<CT_I64>();
    check_scan_softmax_dtype<CT_F16>();
    check_scan_softmax_dtype<CT_BF16>();
    check_scan_softmax_dtype<CT_F32>();
    check_scan_softmax_dtype<CT_F64>();
    /* the cooperative kernels' shapes stay within their launch bounds and shared memory */
    for (int64_t n : {1, 16, 511, 512, 513, 1024, 1025, 100000}) {
        CtLineArgs a;
        memset(&a, 0, sizeof(a));
        a.n = n;
        a.lines = 77;
        plan_lines(a, (int64_t)32 * kScanItems * 4);
        CHECK(a.group * a.rows <= 256 && a.group / 32 <= 8 && a.rows <= 8 && a.group % 32 == 0, "scan block");
        plan_lines(a, 1024);
        CHECK(a.group * a.rows <= 512 && a.group / 32 <= 16 && a.group % 32 == 0, "softmax block");
        CHECK(a.groups * a.rows >= a.lines, "line groups");
    }
}

/* --- 5. sorts ------------------------------------------------------------------------------------------ */
/* The CPU's comparator (reduce_cpu.c's before_f / before_i). */
static bool cpu_before(double a, double b, bool desc)
{
    return desc ? (a > b || (a != a && b == b)) : (a < b || (a == a && b != b));
}

template <int D>
static void check_keys(void)
{
    typedef typename CtCudaType<D>::T T;
    Array<T> v(400);
    for (size_t i = 0; i < v.size(); i++) {
        random_element(D, (char *)&v[i], true, false);
    }
    if constexpr (D == CT_F32) {
        v[0] = NAN;
        v[1] = -NAN;
        v[2] = -0.0f;
        v[3] = 0.0f;
        v[4] = INFINITY;
        v[5] = -INFINITY;
        v[6] = 1e-45f;
        v[7] = -1e-45f;
    }
    if constexpr (D == CT_F64) {
        v[0] = NAN;
        v[1] = -NAN;
        v[2] = -0.0;
        v[3] = 0.0;
        v[4] = INFINITY;
        v[5] = -INFINITY;
        v[6] = 5e-324;
    }
    if constexpr (D == CT_F16 || D == CT_BF16) {
        v[0] = 0x7e00;
        v[1] = 0xfe00;
        v[2] = 0x8000;
        v[3] = 0x0000;
        v[4] = 0x0001;
        v[5] = 0x8001;
        v[6] = 0x7fff;
        v[7] = 0xffff;
    }
    for (int desc = 0; desc < 2; desc++) {
        for (size_t i = 0; i < v.size(); i++) {
            for (size_t j = 0; j < v.size(); j++) {
                double a = (double)ct_widen<D>(v[i]), b = (double)ct_widen<D>(v[j]);
                auto ka = sort_key<D>(v[i], desc), kb = sort_key<D>(v[j], desc);
                bool want = cpu_before(a, b, desc), got = ka < kb;
                CHECK(want == got, "%s keys, desc %d: %g before %g: CPU %d, keys %d", ct_red_dtype_name(D), desc, a, b,
                      (int)want, (int)got);
                CHECK((ka & ~key_mask<D>()) == 0, "key within its bits");
            }
        }
    }
}

/* Sorts one line of n random elements through the bitonic network and the radix-path glue
 * (std::stable_sort for CUB) and compares with the CPU's stable merge sort. */
template <int D>
static void check_sort_dtype(void)
{
    typedef typename CtCudaType<D>::T T;
    typedef typename SortKey<D>::Key K;
    for (int trial = 0; trial < 60; trial++) {
        const int64_t n = trial % 6 == 0 ? rand_int(2049, 6000) : rand_int(1, trial % 2 ? 2048 : 70);
        Array<T> in((size_t)n);
        for (auto &v : in) {
            random_element(D, (char *)&v, trial % 2 == 0, false);
        }
        const bool desc = rand_int(0, 1) == 1, median = trial % 5 == 1 || trial % 5 == 3;
        const bool ignore_nan = trial % 5 == 3; /* nanmedian */
        const int64_t start = 0, count = median ? 1 : (trial % 3 == 0 ? rand_int(0, n) : n);
        /* reference: the CPU's stable sort of (value, index) */
        std::vector<int64_t> order((size_t)n);
        for (int64_t i = 0; i < n; i++) {
            order[(size_t)i] = i;
        }
        std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
            return cpu_before((double)ct_widen<D>(in[(size_t)x]), (double)ct_widen<D>(in[(size_t)y]), desc && !median);
        });
        int64_t want_median = -1;
        if (median) {
            int64_t nans = 0, first_nan = -1;
            for (int64_t i = 0; i < n; i++) {
                double x = (double)ct_widen<D>(in[(size_t)i]);
                if (x != x) {
                    first_nan = first_nan < 0 ? i : first_nan;
                    nans++;
                }
            }
            /* NaNs sort last: nanmedian's lower median is among the first n - nans positions */
            want_median = first_nan >= 0 && (!ignore_nan || nans == n) ? first_nan
                                                                       : order[(size_t)((n - nans - 1) / 2)];
        }
        CtDimDesc d;
        memset(&d, 0, sizeof(d));
        d.n = n;
        d.outer_numel = 1;
        Array<T> vals((size_t)n);
        std::vector<int64_t> idx((size_t)n, -1);
        d.dim_strides[0] = sizeof(T);
        d.dim_strides[1] = sizeof(T);
        d.dim_strides[2] = 8;
        d.data[0] = (char *)in.data();
        d.data[1] = (char *)vals.data();
        d.data[2] = (char *)idx.data();
        CtLineArgs a;
        ct_line_args(a, &d);
        SortSpec sp = {desc && !median ? 1 : 0, median ? 1 : 0, median ? (n - 1) / 2 : start, count, /* mode */ 0,
                       ignore_nan ? 1 : 0};
        int64_t off[3] = {0, 0, 0};
        for (int path = 0; path < 2; path++) {
            std::fill(idx.begin(), idx.end(), -1);
            std::vector<K> keys;
            std::vector<int32_t> pos;
            if (path == 0) {
                if (n > kBitonicMax) {
                    continue;
                }
                /* sort_small_kernel: every thread's step of every stage */
                const int P = bitonic_size(n);
                keys.resize((size_t)P);
                pos.resize((size_t)P);
                for (int i = 0; i < P; i++) {
                    keys[(size_t)i] = i < n ? sort_key<D>(in[(size_t)i], sp.descending != 0) : (K)~(K)0;
                    pos[(size_t)i] = i < n ? i : INT32_MAX;
                }
                for (int size = 2; size <= P; size <<= 1) {
                    for (int stride = size >> 1; stride > 0; stride >>= 1) {
                        for (int t = 0; t < P / 2; t++) {
                            bitonic_step(keys.data(), pos.data(), t, size, stride);
                        }
                    }
                }
            } else {
                /* the radix path: keys as sort_keys_kernel makes them, a stable sort by key */
                keys.resize((size_t)n);
                pos.resize((size_t)n);
                std::vector<int32_t> p0((size_t)n);
                for (int64_t i = 0; i < n; i++) {
                    p0[(size_t)i] = (int32_t)i;
                }
                std::vector<K> k0((size_t)n);
                for (int64_t i = 0; i < n; i++) {
                    k0[(size_t)i] = sort_key<D>(in[(size_t)i], sp.descending != 0);
                }
                std::stable_sort(p0.begin(), p0.end(), [&](int32_t x, int32_t y) { return k0[(size_t)x] < k0[(size_t)y]; });
                for (int64_t i = 0; i < n; i++) {
                    pos[(size_t)i] = p0[(size_t)i];
                    keys[(size_t)i] = k0[(size_t)p0[(size_t)i]];
                }
            }
            if (!sp.descending) { /* the mode: the end of the first longest run of equal values */
                int64_t best = 0, best_len = 0, run = 0;
                for (int64_t i = 0; i < n; i++) {
                    const double x = (double)ct_widen<D>(in[(size_t)order[(size_t)i]]);
                    const double prev = i > 0 ? (double)ct_widen<D>(in[(size_t)order[(size_t)i - 1]]) : x;
                    run = i > 0 && !cpu_before(prev, x, false) ? run + 1 : 1;
                    if (run > best_len) {
                        best_len = run;
                        best = i;
                    }
                }
                const int64_t got = pos[(size_t)mode_position<D>(keys.data(), n)];
                CHECK(got == order[(size_t)best], "mode of %s (n %lld, path %d): index %lld, want %lld",
                      ct_red_dtype_name(D), (long long)n, path, (long long)got, (long long)order[(size_t)best]);
            }
            if (median) {
                sort_write_one<D>(a, off, 0, pos[(size_t)median_position<D>(keys.data(), n, sp.ignore_nan != 0)]);
                CHECK(idx[0] == want_median, "median of %s (n %lld, path %d): index %lld, want %lld",
                      ct_red_dtype_name(D), (long long)n, path, (long long)idx[0], (long long)want_median);
            } else {
                for (int64_t j = 0; j < count; j++) {
                    sort_write_one<D>(a, off, j, pos[(size_t)(start + j)]);
                }
                for (int64_t j = 0; j < count; j++) {
                    CHECK(idx[(size_t)j] == order[(size_t)(start + j)],
                          "sort of %s (n %lld, desc %d, path %d) position %lld: %lld, want %lld", ct_red_dtype_name(D),
                          (long long)n, (int)desc, path, (long long)j, (long long)idx[(size_t)j],
                          (long long)order[(size_t)(start + j)]);
                    CHECK(memcmp(&vals[(size_t)j], &in[(size_t)order[(size_t)(start + j)]], sizeof(T)) == 0,
                          "sorted values are the input's bits");
                }
            }
        }
    }
}

static void check_sorts(void)
{
    check_keys<CT_BOOL>();
    check_keys<CT_U8>();
    check_keys<CT_I8>();
    check_keys<CT_I16>();
    check_keys<CT_I32>();
    check_keys<CT_I64>();
    check_keys<CT_F16>();
    check_keys<CT_BF16>();
    check_keys<CT_F32>();
    check_keys<CT_F64>();
    check_sort_dtype<CT_BOOL>();
    check_sort_dtype<CT_U8>();
    check_sort_dtype<CT_I8>();
    check_sort_dtype<CT_I16>();
    check_sort_dtype<CT_I32>();
    check_sort_dtype<CT_I64>();
    check_sort_dtype<CT_F16>();
    check_sort_dtype<CT_BF16>();
    check_sort_dtype<CT_F32>();
    check_sort_dtype<CT_F64>();
    for (int64_t n : {2049LL, 5000LL, 1LL << 20, (1LL << 26) + 1, (1LL << 31) - 1}) {
        for (int64_t lines : {1LL, 2LL, 1000LL, 1LL << 30}) {
            int64_t b = sort_batch_lines(n, lines);
            CHECK(b >= 1 && b <= lines && (b == 1 || b * n <= kBatchItems) && b * n <= CT_MAX_INDEX32, "batch");
        }
    }
    for (int64_t n = 1; n <= kBitonicMax; n++) {
        int P = bitonic_size(n);
        CHECK(P >= n && P >= 2 && (P & (P - 1)) == 0 && (P * sizeof(uint16_t)) % 4 == 0, "bitonic size");
        CHECK((size_t)P * (sizeof(uint64_t) + sizeof(int32_t)) <= 48 * 1024 && (P / 2 < 32 ? 32 : P / 2) <= 1024,
              "bitonic block fits");
    }
}

/* --- 6. dispatch tables ---------------------------------------------------------------------------------- */
static void check_tables(void)
{
    for (int dt = 0; dt < CT_NUM_DTYPES; dt++) {
        for (int acc = 0; acc < 3; acc++) {
            bool produced = ct_cuda_reduce_pair_supported(dt, acc);
            CHECK((kReduceTable[dt][acc] != nullptr) == produced, "reduce table %s acc %d", ct_red_dtype_name(dt), acc);
            if (produced) {
                for (int op = 0; op < 4; op++) {
                    CHECK(kReduceTable[dt][acc][op] != nullptr, "reduce launcher");
                }
            }
        }
        CHECK(kSortTable[dt] != nullptr, "sort table");
    }
    /* the pairs ops_reduce.c produces: acc_of(out dtype) for sums/extrema/norms/var/logsumexp,
     * double (floats) or int64 (others) for all/any/count_nonzero */
    for (int dt = 0; dt < CT_NUM_DTYPES; dt++) {
        int acc_of = dt == CT_F64 ? CT_ACC_F64 : is_float(dt) ? CT_ACC_F32 : CT_ACC_I64;
        int logical = is_float(dt) ? CT_ACC_F64 : CT_ACC_I64;
        CHECK(ct_cuda_reduce_pair_supported(dt, acc_of) && ct_cuda_reduce_pair_supported(dt, logical), "%s",
              ct_red_dtype_name(dt));
    }
}

int main(void)
{
    if (getenv("REDUCE_HARNESS_REPORTS") != nullptr) {
        max_reports = atoi(getenv("REDUCE_HARNESS_REPORTS"));
    }
    check_plans();
    check_layouts();
    check_reductions();
    check_arg_reductions();
    check_scans();
    check_sorts();
    check_tables();
    printf("%d checks, %d failures\n", checks, failures);
    if (failures == 0) {
        printf("all reduce checks passed\n");
    }
    return failures == 0 ? 0 : 1;
}
