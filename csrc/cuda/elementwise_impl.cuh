/* elementwise_impl.cuh: the machinery of the CUDA elementwise kernels, included by elementwise.cu
 * (the entry point and its dispatch table) and by elementwise_part<P>.cu.
 *
 * The per-element math is scalar_math.h's, the functions the CPU kernels call: EwFn<op, kernel
 * dtype> below only binds an op to its ct_sm_<fn>_<type>. Kernel dtypes are the acc types (bool,
 * the five integers, float, double); float16/bfloat16 data is widened to float on load and
 * rounded back on store, as on the CPU.
 *
 * Two paths, chosen on the host for each call (choose_path):
 * - vector: the space is one contiguous run (1-d after the iterator's coalescing), every tensor
 *   operand has its natural dtype (the compute dtype; bool for the output of comparisons and
 *   for where's condition) and is aligned: each thread moves 16 bytes of the widest operand per
 *   load and store (4 floats, 8 halves, 2 doubles, ...); an input that is one device element (a
 *   0-d CUDA tensor) is read once per thread. One kernel per op and compute dtype.
 * - strided: anything else. offsets.cuh's calculator turns a 32-bit linear index into the byte
 *   offset of every operand (broadcast dims have stride 0, so broadcast operands are read in
 *   place, never materialised; spaces of 2^31 elements or more go in pieces), and every operand
 *   is loaded and stored in its own dtype with the CPU's conversions (ct_load/ct_store of
 *   common.cuh), through the compute dtype as on the CPU (an int32 or float32 input of a float16
 *   op is rounded to float16, and so is the result stored into a float32 out=), so in-place ops
 *   into a narrower dtype, mixed inputs and out= of another dtype need no temporary. One kernel
 *   per op and kernel dtype.
 * Host scalars (Python numbers and 0-d CPU tensors, CtEwCall.host_scalars) are read on the host
 * before the launch and passed by value, as the front end made them for every device (in the acc
 * type: unrounded for opmath ops, float16 * 0.3 multiplies by 0.3f), never rounded again.
 * Kernels loop grid-stride with 64-bit indices.
 *
 * Why parts: the ~1100 kernels (x 5 architectures + PTX) take minutes of nvcc; the ops are dealt
 * round-robin to CT_EW_PARTS translation units (elementwise_part<P>.cu) that compile in parallel.
 * Each fills its ops' rows of the dispatch table through ct_cuda_ew_fill_part<P>().
 *
 * The thread bodies are __host__ __device__ and every launch goes through launch_body, so that
 * tests/cuda_host/elementwise_harness.cu can build these files with CT_EW_HOST_EMULATION and run
 * the whole entry on the host, against the CPU implementation. */
#ifndef CTORCH_CUDA_ELEMENTWISE_IMPL_CUH
#define CTORCH_CUDA_ELEMENTWISE_IMPL_CUH

#include "elementwise.cuh"
#include "offsets.cuh"
#include <array>
#include <string.h>
#include <type_traits>
#include <utility>

/* scalar_math.h's integer bodies are shared by signed and unsigned types: `b < 0` on uint8_t is
 * intended (always false), not a bug. */
#pragma nv_diag_suppress 186
#include "scalar_math.h"
#pragma nv_diag_default 186

#define CT_HD __host__ __device__ __forceinline__
#define CT_EW_PARTS 4

/* --- what the parts and the entry share ---------------------------------------------------- */
namespace ct_ew {

constexpr int kThreads = 256;
/* Grids are capped (the kernels loop): any size launches, 64-bit counts included. */
constexpr int64_t kMaxBlocks = (int64_t)1 << 20;

/* The op table as constants (ct_ew_op_info lives in _C, which this .so cannot link). */
#define EW_ARITY(NAME, kind, ...) CT_EW_KIND_ARITY(kind),
#define EW_FLAGS(NAME, kind, fn, domain, flags, kname) (flags) | CT_EW_KIND_FLAGS(kind),
constexpr int kArity[CT_EW_NUM_OPS] = {CT_EW_OP_LIST(EW_ARITY)};
constexpr int kFlags[CT_EW_NUM_OPS] = {CT_EW_OP_LIST(EW_FLAGS)};
#undef EW_ARITY
#undef EW_FLAGS

#define EW_ITEMSIZE(NAME, ctype, ...) sizeof(ctype),
constexpr int64_t kItemsize[CT_NUM_DTYPES] = {CT_DTYPE_LIST(EW_ITEMSIZE)};
#undef EW_ITEMSIZE

/* The dtype whose kernel computes dc. */
constexpr int kernel_dtype(int dc) { return (dc == CT_F16 || dc == CT_BF16) ? CT_F32 : dc; }

/* One value of any kernel type (a host scalar, an op parameter), in the member named after its
 * kernel dtype. */
struct EwValue {
    union {
#define EW_VALUE_MEMBER(DT, T, ...) T DT;
        CT_EW_KERNEL_DTYPES_ALL(EW_VALUE_MEMBER, 0)
#undef EW_VALUE_MEMBER
    } u;
};

/* Everything a thread needs besides its offsets, the same struct for every op (so that the
 * host-side launch code is not stamped out per op): passed by value as a kernel parameter. */
struct EwArgs {
    char *out;
    const char *in[3];
    unsigned host;  /* bit k: input k is a host scalar, its value in v[k] */
    unsigned bcast; /* bit k: input k is one device element (stride 0), for the vector path */
    int dtype[4];   /* operand dtypes (0 the output), for the strided path */
    int round_to;   /* the op's result dtype: results are rounded to it before the store into
                       an output of another dtype, as the CPU does (out= and in-place mixes) */
    int compute;    /* the compute dtype: tensor inputs of another dtype are rounded to it
                       after the load (an int32 or float32 input of a float16 op), as the CPU */
    EwValue v[3];   /* host scalars, in their input's kernel type */
    EwValue p[3];   /* the op's parameters, in the kernel type */
};

/* What the launch code (elementwise.cu) needs to know of one op at one compute dtype. */
struct EwDesc {
    int nops;
    int vec;        /* elements per thread of the vector path */
    int kd;         /* kernel dtype */
    int in0_kd;     /* input 0's kernel dtype (bool for where's condition) */
    int natural[4]; /* operand dtypes of the vector path */
    const void *vector_kernel;  /* ew_vector_kernel<op, compute dtype>(work, EwArgs, n) */
    const void *strided_kernel; /* ew_strided_kernel<op, kernel dtype>(work, EwArgs, CtOffsets<nops>) */
#ifdef CT_EW_HOST_EMULATION
    void (*vector_thread)(int64_t t, const EwArgs &a, int64_t n);
    void (*strided_thread)(int64_t t, const EwArgs &a, const void *offsets);
#endif
};

/* The parts' table fillers: set table[op][compute dtype] for their ops (NULL: no kernel). */
void fill_part0(const EwDesc *(*table)[CT_NUM_DTYPES]);
void fill_part1(const EwDesc *(*table)[CT_NUM_DTYPES]);
void fill_part2(const EwDesc *(*table)[CT_NUM_DTYPES]);
void fill_part3(const EwDesc *(*table)[CT_NUM_DTYPES]);

} /* namespace ct_ew */

namespace {
using namespace ct_ew;

/* --- ops: EwFn<op, kernel dtype> binds an op to its scalar function ---------------------------
 * apply(a, b, c, p): inputs a (In0: bool for where's condition), b, c (T), the op's scalar
 * parameters p[0..2]; inputs beyond the op's arity are ignored. */
template <int OP, int KD>
struct EwFn {
    static constexpr bool exists = false;
};

#define EW_FN(OP, DT, TYPE, IN0, OUT, ARITY, EXPR)                                  \
    template <>                                                                     \
    struct EwFn<CT_EW_##OP, CT_##DT> {                                              \
        static constexpr bool exists = true;                                        \
        static constexpr int arity = ARITY;                                         \
        typedef TYPE T;                                                             \
        typedef IN0 In0;                                                            \
        typedef OUT Out;                                                            \
        static CT_HD Out apply(In0 a, T b, T c, const T *p)                         \
        {                                                                           \
            (void)b;                                                                \
            (void)c;                                                                \
            (void)p;                                                                \
            return EXPR;                                                            \
        }                                                                           \
    };

/* One specialisation per op and kernel dtype of its domain, stamped from CT_EW_OP_LIST
 * (elementwise_kernels.h, the CPU's table too) by the macro of the op's kind: EW_K_<kind>(DT,
 * type, class, OP, fn). BZ (integer division) is plain: nothing checks for zero on CUDA. */
#define EW_K_U(DT, T, CLS, OP, fn) EW_FN(OP, DT, T, T, T, 1, ct_sm_##fn##_##T(a))
#define EW_K_UB(DT, T, CLS, OP, fn) EW_FN(OP, DT, T, T, bool, 1, ct_sm_##fn##_##T(a))
#define EW_K_UP(DT, T, CLS, OP, fn) EW_FN(OP, DT, T, T, T, 1, ct_sm_##fn##_##T(a, p[0]))
#define EW_K_UP2(DT, T, CLS, OP, fn) EW_FN(OP, DT, T, T, T, 1, ct_sm_##fn##_##T(a, p[0], p[1]))
#define EW_K_UP3(DT, T, CLS, OP, fn) EW_FN(OP, DT, T, T, T, 1, ct_sm_##fn##_##T(a, p[0], p[1], p[2]))
#define EW_K_B(DT, T, CLS, OP, fn) EW_FN(OP, DT, T, T, T, 2, ct_sm_##fn##_##T(a, b))
#define EW_K_BB(DT, T, CLS, OP, fn) EW_FN(OP, DT, T, T, bool, 2, ct_sm_##fn##_##T(a, b))
#define EW_K_BP(DT, T, CLS, OP, fn) EW_FN(OP, DT, T, T, T, 2, ct_sm_##fn##_##T(a, b, p[0]))
#define EW_K_BZ EW_K_B
#define EW_K_T(DT, T, CLS, OP, fn) EW_FN(OP, DT, T, T, T, 3, ct_sm_##fn##_##T(a, b, c))
#define EW_K_TP(DT, T, CLS, OP, fn) EW_FN(OP, DT, T, T, T, 3, ct_sm_##fn##_##T(a, b, c, p[0]))
#define EW_K_TP3(DT, T, CLS, OP, fn) EW_FN(OP, DT, T, T, T, 3, ct_sm_##fn##_##T(a, b, c, p[0], p[1], p[2]))
#define EW_K_W(DT, T, CLS, OP, fn) EW_FN(OP, DT, T, bool, T, 3, ct_sm_##fn##_##T(a, b, c))

#define EW_DEFINE(OP, kind, fn, domain, flags, kname) CT_EW_KERNEL_DTYPES_##domain(EW_K_##kind, OP, fn)
CT_EW_OP_LIST(EW_DEFINE)
#undef EW_DEFINE

/* --- an op at one compute dtype ---------------------------------------------------------------- */
template <int OP, int DC>
struct EwOp {
    static constexpr int KD = kernel_dtype(DC);
    typedef EwFn<OP, KD> F;
    typedef typename F::T T;
    static constexpr int arity = kArity[OP];
    static constexpr int nops = arity + 1;
    /* the natural dtypes of the operands (the static paths' load and store types) */
    static constexpr int out_dtype = (kFlags[OP] & CT_EW_OUT_BOOL) ? CT_BOOL : DC;
    static constexpr int in_dtype(int k) { return (k == 0 && (kFlags[OP] & CT_EW_COND)) ? CT_BOOL : DC; }
    /* elements per vector: 16 bytes of the widest operand (the compute dtype, or bool) */
    static constexpr int vec = (int)(16 / kItemsize[DC]);

    static_assert(F::exists, "no kernel");
    static_assert(F::arity == arity, "kernel arity differs from CT_EW_OP_LIST's");
    static_assert(!(kFlags[OP] & CT_EW_OUT_BOOL) || std::is_same<typename F::Out, bool>::value, "bool output");
    static_assert((kFlags[OP] & CT_EW_OUT_BOOL) || std::is_same<typename F::Out, T>::value, "output type");
};

/* The type of input K of F. */
template <typename F, int K>
using InT = typename std::conditional<K == 0, typename F::In0, typename F::T>::type;

template <typename T>
CT_HD T value_as(const EwValue &v)
{
#define EW_VALUE_AS(DT, TYPE, ...)                    \
    if constexpr (std::is_same<T, TYPE>::value) {     \
        return v.u.DT;                                \
    } else
    CT_EW_KERNEL_DTYPES_ALL(EW_VALUE_AS, 0)
    {
        return T();
    }
#undef EW_VALUE_AS
}

/* --- conversions by a dtype known at run time (the dynamic path; host scalars) --------------- */
template <typename V>
struct DtypeOf;
#define EW_DTYPE_OF(V, D)                 \
    template <>                           \
    struct DtypeOf<V> {                   \
        static constexpr int value = D;   \
    };
EW_DTYPE_OF(bool, CT_BOOL)
EW_DTYPE_OF(uint8_t, CT_U8)
EW_DTYPE_OF(int8_t, CT_I8)
EW_DTYPE_OF(int16_t, CT_I16)
EW_DTYPE_OF(int32_t, CT_I32)
EW_DTYPE_OF(int64_t, CT_I64)
EW_DTYPE_OF(float, CT_F32)
EW_DTYPE_OF(double, CT_F64)
#undef EW_DTYPE_OF

/* The element of dtype d at p as a V, converted as the CPU's cast loops convert. */
template <typename V>
CT_HD V load_as(const char *p, int d)
{
    constexpr int DV = DtypeOf<V>::value;
    switch (d) {
#define EW_LOAD_CASE(NAME, ...) \
    case CT_##NAME:             \
        return ct_narrow<DV>(ct_load<CT_##NAME>(p));
        CT_DTYPE_LIST(EW_LOAD_CASE)
#undef EW_LOAD_CASE
    default:
        return V();
    }
}

/* v rounded to dtype d when d is a 16-bit float (a no-op otherwise). */
template <typename V>
CT_HD V round_through(int d, V v)
{
    if constexpr (std::is_floating_point<V>::value) {
        if (d == CT_F16) {
            return (V)ct_widen<CT_F16>(ct_narrow<CT_F16>(v));
        }
        if (d == CT_BF16) {
            return (V)ct_widen<CT_BF16>(ct_narrow<CT_BF16>(v));
        }
    }
    return v;
}

template <typename V>
CT_HD void store_as(char *p, int d, V v)
{
    switch (d) {
#define EW_STORE_CASE(NAME, ...) \
    case CT_##NAME:              \
        ct_store<CT_##NAME>(p, v); \
        break;
        CT_DTYPE_LIST(EW_STORE_CASE)
#undef EW_STORE_CASE
    default:
        break;
    }
}

/* --- thread bodies (host-callable for tests/cuda_host) --------------------------------------- */
template <typename T, int N>
struct alignas(sizeof(T) * N) EwVec {
    T v[N];
};

/* vector path: thread t computes elements [t*VEC, t*VEC + VEC) with one 16-byte-class load per
 * input and one store; threads 0..VEC-1 also take the n % VEC elements of the tail. */
template <int OP, int DC>
struct VectorBody {
    typedef EwOp<OP, DC> O;
    typedef typename O::F F;
    typedef typename F::T T;
    static constexpr int VEC = O::vec;
    typedef typename CtCudaType<O::out_dtype>::T TOut;

    template <int K>
    static CT_HD void load_vector(const EwArgs &a, int64_t t, InT<F, K> (&x)[VEC])
    {
        constexpr int D = O::in_dtype(K);
        typedef typename CtCudaType<D>::T TIn;
        if (a.host & (1u << K)) {
            const InT<F, K> v = value_as<InT<F, K>>(a.v[K]);
CT_UNROLL
            for (int j = 0; j < VEC; j++) {
                x[j] = v;
            }
        } else if (a.bcast & (1u << K)) {
            const InT<F, K> v = (InT<F, K>)ct_load<D>(a.in[K]);
CT_UNROLL
            for (int j = 0; j < VEC; j++) {
                x[j] = v;
            }
        } else {
            const EwVec<TIn, VEC> v = ((const EwVec<TIn, VEC> *)a.in[K])[t];
CT_UNROLL
            for (int j = 0; j < VEC; j++) {
                x[j] = (InT<F, K>)ct_widen<D>(v.v[j]);
            }
        }
    }

    template <int K>
    static CT_HD InT<F, K> load_one(const EwArgs &a, int64_t i)
    {
        constexpr int D = O::in_dtype(K);
        if (a.host & (1u << K)) {
            return value_as<InT<F, K>>(a.v[K]);
        }
        const int64_t off = (a.bcast & (1u << K)) ? 0 : i * kItemsize[D];
        return (InT<F, K>)ct_load<D>(a.in[K] + off);
    }

    static CT_HD void run(int64_t t, const EwArgs &a, int64_t n)
    {
        const T p[3] = {value_as<T>(a.p[0]), value_as<T>(a.p[1]), value_as<T>(a.p[2])};
        const int64_t nvec = n / VEC;
        if (t < nvec) {
            InT<F, 0> x0[VEC];
            T x1[VEC] = {}, x2[VEC] = {};
            load_vector<0>(a, t, x0);
            if constexpr (O::arity >= 2) {
                load_vector<1>(a, t, x1);
            }
            if constexpr (O::arity >= 3) {
                load_vector<2>(a, t, x2);
            }
            EwVec<TOut, VEC> r;
CT_UNROLL
            for (int j = 0; j < VEC; j++) {
                r.v[j] = ct_narrow<O::out_dtype>(F::apply(x0[j], x1[j], x2[j], p));
            }
            ((EwVec<TOut, VEC> *)a.out)[t] = r;
        }
        const int64_t i = nvec * VEC + t;
        if (t < VEC && i < n) {
            const InT<F, 0> x0 = load_one<0>(a, i);
            T x1 = T(), x2 = T();
            if constexpr (O::arity >= 2) {
                x1 = load_one<1>(a, i);
            }
            if constexpr (O::arity >= 3) {
                x2 = load_one<2>(a, i);
            }
            ((TOut *)a.out)[i] = ct_narrow<O::out_dtype>(F::apply(x0, x1, x2, p));
        }
    }
};

/* Threads the vector path needs for n elements. */
inline int64_t vector_work(int64_t n, int vec) { return n / vec > n % vec ? n / vec : n % vec; }

/* strided path: element t of a piece; every operand is loaded and stored in its own dtype (a
 * switch on a value uniform across the grid), so one kernel per kernel dtype serves every layout
 * and dtype mix (float16/bfloat16/float32 compute share the float one). */
template <int OP, int KD>
struct StridedBody {
    typedef EwFn<OP, KD> F;
    typedef typename F::T T;
    static constexpr int N = kArity[OP] + 1;

    template <int K>
    static CT_HD InT<F, K> load(const EwArgs &a, const int64_t (&o)[N])
    {
        if (a.host & (1u << K)) {
            return value_as<InT<F, K>>(a.v[K]);
        }
        return round_through(a.compute, load_as<InT<F, K>>(a.in[K] + o[K + 1], a.dtype[K + 1]));
    }

    static CT_HD void run(int64_t t, const EwArgs &a, const CtOffsets<N> &off)
    {
        const T p[3] = {value_as<T>(a.p[0]), value_as<T>(a.p[1]), value_as<T>(a.p[2])};
        int64_t o[N];
        off.get((uint32_t)t, o);
        const InT<F, 0> x0 = load<0>(a, o);
        T x1 = T(), x2 = T();
        if constexpr (N >= 3) {
            x1 = load<1>(a, o);
        }
        if constexpr (N >= 4) {
            x2 = load<2>(a, o);
        }
        store_as(a.out + o[0], a.dtype[0], round_through(a.round_to, F::apply(x0, x1, x2, p)));
    }
};

/* --- kernels ------------------------------------------------------------------------------------ */
template <int OP, int DC>
__global__ void __launch_bounds__(kThreads) ew_vector_kernel(int64_t work, EwArgs a, int64_t n)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < work; t += step) {
        VectorBody<OP, DC>::run(t, a, n);
    }
}

template <int OP, int KD>
__global__ void __launch_bounds__(kThreads)
    ew_strided_kernel(int64_t work, EwArgs a, CtOffsets<StridedBody<OP, KD>::N> off)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < work; t += step) {
        StridedBody<OP, KD>::run(t, a, off);
    }
}

/* --- descriptors and a part's rows of the dispatch table ---------------------------------------- */
#ifdef CT_EW_HOST_EMULATION
template <int OP, int KD>
void strided_thread(int64_t t, const EwArgs &a, const void *offsets)
{
    StridedBody<OP, KD>::run(t, a, *(const CtOffsets<StridedBody<OP, KD>::N> *)offsets);
}
#endif

template <int OP, int DC>
struct DescOf {
    typedef EwOp<OP, DC> O;
    static constexpr int in0_kd = (kFlags[OP] & CT_EW_COND) ? CT_BOOL : O::KD;
    static const EwDesc desc;
};

template <int OP, int DC>
const EwDesc DescOf<OP, DC>::desc = {
    EwOp<OP, DC>::nops,
    EwOp<OP, DC>::vec,
    EwOp<OP, DC>::KD,
    DescOf<OP, DC>::in0_kd,
    {EwOp<OP, DC>::out_dtype, EwOp<OP, DC>::in_dtype(0), EwOp<OP, DC>::in_dtype(1), EwOp<OP, DC>::in_dtype(2)},
#ifdef CT_EW_HOST_EMULATION
    nullptr, /* no device code in the harness build */
    nullptr,
    &VectorBody<OP, DC>::run,
    &strided_thread<OP, EwOp<OP, DC>::KD>,
#else
    (const void *)ew_vector_kernel<OP, DC>,
    (const void *)ew_strided_kernel<OP, EwOp<OP, DC>::KD>,
#endif
};

/* --- a part's rows of the dispatch table ------------------------------------------------------- */
template <int OP, int DC>
constexpr const EwDesc *desc_entry()
{
    /* CT_EW_NO_HALF: the front end refuses float16/bfloat16, so no kernels are built for them */
    constexpr bool refused = (kFlags[OP] & CT_EW_NO_HALF) && (DC == CT_F16 || DC == CT_BF16);
    if constexpr (EwFn<OP, kernel_dtype(DC)>::exists && !refused) {
        return &DescOf<OP, DC>::desc;
    } else {
        return nullptr;
    }
}

template <int PART, int OP, int... DC>
void fill_row(const EwDesc *(*table)[CT_NUM_DTYPES], std::integer_sequence<int, DC...>)
{
    if constexpr (OP % CT_EW_PARTS == PART) {
        ((table[OP][DC] = desc_entry<OP, DC>()), ...);
    }
}

template <int PART, int... OP>
void fill_ops(const EwDesc *(*table)[CT_NUM_DTYPES], std::integer_sequence<int, OP...>)
{
    (fill_row<PART, OP>(table, std::make_integer_sequence<int, CT_NUM_DTYPES>()), ...);
}

} /* namespace */

/* The body of elementwise_part<P>.cu. */
#define CT_EW_DEFINE_PART(P)                                                            \
    void ct_ew::fill_part##P(const EwDesc *(*table)[CT_NUM_DTYPES])                     \
    {                                                                                   \
        fill_ops<P>(table, std::make_integer_sequence<int, CT_EW_NUM_OPS>());           \
    }

#endif /* CTORCH_CUDA_ELEMENTWISE_IMPL_CUH */
