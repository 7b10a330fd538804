/* upsample.c: the interpolation family (see upsample.h).
 *
 *   _upsample(input, mode, output_size=None, align_corners=False, scale_factors=None)
 *       the kernel with a backward node (named per mode as PyTorch's: UpsampleNearest2DBackward0,
 *       UpsampleBilinear2DBackward0, ...); mode is F.interpolate's 'nearest', 'nearest-exact',
 *       'linear' (3-d input), 'bilinear' or 'bicubic' (4-d input), 'trilinear' (5-d input), and
 *       'bilinear_aa' / 'bicubic_aa' (4-d input): F.interpolate's antialias=True
 *   _upsample_backward(grad_output, mode, input_size, output_size, align_corners=False,
 *                      scale_factors=None)
 *       its backward, linear in grad_output (its own gradient is _upsample again)
 *
 * As PyTorch's vec overloads: the output size is output_size, or floor(in * scale) per axis, and
 * a given scale factor (not the size ratio) sets the coordinate scale. Here both may be given: the
 * size then comes from output_size and the scales from scale_factors (what the backward needs).
 * F.interpolate's argument rules are in nn/functional.py, as PyTorch's are in Python. */
#include "upsample.h"
#include "upsample_math.h"
#include "args.h"
#include "autograd.h"
#include "creation.h"
#include "device.h"
#include "dtype.h"
#include "nn.h"
#include "parallel.h"
#include "registry.h"
#include "tensor.h"
#include <string.h>

/* ====================================================================================================
 * arguments
 * ==================================================================================================== */
typedef struct {
    const char *name;     /* F.interpolate's mode */
    int ndim;             /* the input dims it takes: 3, 4, 5, or 0 for any of them */
    CtUpsampleMode mode;  /* of the spatial axes */
    bool interpolating;   /* takes align_corners */
} ModeInfo;

static const ModeInfo modes[] = {
    {"nearest", 0, CT_UPSAMPLE_NEAREST, false},      {"nearest-exact", 0, CT_UPSAMPLE_NEAREST_EXACT, false},
    {"linear", 3, CT_UPSAMPLE_LINEAR, true},         {"bilinear", 4, CT_UPSAMPLE_LINEAR, true},
    {"bicubic", 4, CT_UPSAMPLE_CUBIC, true},         {"trilinear", 5, CT_UPSAMPLE_LINEAR, true},
    /* F.interpolate(antialias=True) */
    {"bilinear_aa", 4, CT_UPSAMPLE_LINEAR_AA, true}, {"bicubic_aa", 4, CT_UPSAMPLE_CUBIC_AA, true},
};

static bool is_aa(CtUpsampleMode m) { return m == CT_UPSAMPLE_LINEAR_AA || m == CT_UPSAMPLE_CUBIC_AA; }

/* The mode named by obj (borrowed table row), or NULL with ValueError. */
static const ModeInfo *parse_mode(const char *fname, PyObject *obj)
{
    const char *s = obj != NULL && PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    if (s == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "%s(): argument 'mode' must be str, not %s", fname,
                         obj != NULL ? ct_type_name(obj) : "NoneType");
        }
        return NULL;
    }
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        if (strcmp(s, modes[i].name) == 0) {
            return &modes[i];
        }
    }
    PyErr_Format(PyExc_ValueError, "%s(): unknown mode '%s' (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, bilinear_aa, "
                 "bicubic_aa)",
                 fname, s);
    return NULL;
}

/* A sequence of n numbers into out (ints: PyIndex; floats: any real). None or absent: returns 0 and
 * leaves *given false. -1 with TypeError / RuntimeError naming the argument. */
static int parse_list(const char *fname, const char *argname, PyObject *obj, int n, bool floats, int64_t *ints,
                      double *reals, bool *given)
{
    *given = false;
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be tuple of %s, not %s", fname, argname,
                     floats ? "floats" : "ints", ct_type_name(obj));
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(obj);
    if (len != n) {
        PyErr_Format(PyExc_RuntimeError, "It is expected %s equals to %d, but got size %zd",
                     floats ? "scale_factors" : "output_size", n, len);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(obj, i);
        bool ok = !PyBool_Check(item) && (floats ? PyFloat_Check(item) || PyIndex_Check(item) : PyIndex_Check(item));
        if (!ok) {
            PyErr_Format(PyExc_TypeError,
                         "%s(): argument '%s' must be tuple of %s, but found element of type %s at pos %zd", fname, argname, floats ? "floats" : "ints", ct_type_name(item), i);
            return -1;
        }
        if (floats) {
            reals[i] = PyFloat_AsDouble(item);
            if (reals[i] == -1.0 && PyErr_Occurred()) {
                return -1;
            }
        } else if (ct_arg_int64(item, &ints[i]) < 0) {
            return -1;
        }
    }
    *given = true;
    return 0;
}

/* Fills d's geometry for input sizes (ndim, sizes) from the parsed arguments, with PyTorch's checks
 * (upsample_{1,2}d_common_check); the size comes from output_size when given. 0 or -1. */
static int setup_geometry(const char *fname, const ModeInfo *m, int ndim, const int64_t *sizes, PyObject *output_size,
                          bool align_corners, PyObject *scale_factors, CtUpsampleDesc *d)
{
    if (ndim < 3 || ndim > 5) {
        PyErr_Format(PyExc_NotImplementedError, "%s(): got %dD input, but mode '%s' needs %s input", fname, ndim,
                     m->name, m->ndim == 3 ? "3D" : m->ndim == 4 ? "4D" : m->ndim == 5 ? "5D" : "3D, 4D or 5D");
        return -1;
    }
    if (m->ndim != 0 && m->ndim != ndim) {
        PyErr_Format(PyExc_NotImplementedError, "Got %dD input, but %s mode needs %dD input", ndim, m->name, m->ndim);
        return -1;
    }
    const int dim = ndim - 2;
    int64_t osz[CT_UPSAMPLE_AXES] = {0, 0, 0};
    double sf[CT_UPSAMPLE_AXES] = {0, 0, 0};
    bool has_size, has_scales;
    if (parse_list(fname, "output_size", output_size, dim, false, osz, NULL, &has_size) < 0 ||
        parse_list(fname, "scale_factors", scale_factors, dim, true, NULL, sf, &has_scales) < 0) {
        return -1;
    }
    if (!has_size && !has_scales) {
        PyErr_SetString(PyExc_RuntimeError, "Must specify exactly one of output_size and scale_factors");
        return -1;
    }
    memset(d, 0, sizeof(*d));
    d->align_corners = m->interpolating && align_corners;
    bool empty = false;
    for (int a = 0; a < CT_UPSAMPLE_AXES; a++) { /* the axes the call lacks: nearest of size 1 */
        const int i = a - (CT_UPSAMPLE_AXES - dim);
        d->mode[a] = i < 0 ? CT_UPSAMPLE_NEAREST : m->mode;
        d->in[a] = i < 0 ? 1 : sizes[2 + i];
        d->out[a] = i < 0 ? 1 : has_size ? osz[i] : (int64_t)((double)sizes[2 + i] * sf[i]);
        d->scale[a] = i >= 0 && has_scales ? sf[i] : 0.0;
        empty = empty || d->in[a] <= 0 || d->out[a] <= 0;
    }
    if (empty) {
        if (dim == 3) {
            PyErr_Format(PyExc_RuntimeError,
                         "Input and output sizes should be greater than 0, but got input (D: %lld, H: %lld, W: %lld) "
                         "output (D: %lld, H: %lld, W: %lld)",
                         (long long)d->in[0], (long long)d->in[1], (long long)d->in[2], (long long)d->out[0],
                         (long long)d->out[1], (long long)d->out[2]);
        } else if (dim == 1) {
            PyErr_Format(PyExc_RuntimeError,
                         "Input and output sizes should be greater than 0, but got input (W: %lld) and output (W: %lld)",
                         (long long)d->in[2], (long long)d->out[2]);
        } else {
            PyErr_Format(PyExc_RuntimeError,
                         "Input and output sizes should be greater than 0, but got input (H: %lld, W: %lld) output (H: "
                         "%lld, W: %lld)",
                         (long long)d->in[1], (long long)d->in[2], (long long)d->out[1], (long long)d->out[2]);
        }
        return -1;
    }
    d->planes = sizes[0] * sizes[1];
    return 0;
}

/* PyTorch's dtype refusal for the mode (its kernels' names), or ours for uint8 linear / cubic: 0 or -1. */
static int check_dtype(const ModeInfo *m, int ndim, CtDType dtype, bool backward)
{
    /* PyTorch's CPU aa kernels: float and double (and a uint8 one, refused below as the bilinear one) */
    if (is_aa(m->mode) && dtype != CT_F32 && dtype != CT_F64 && (dtype != CT_U8 || backward)) {
        PyErr_Format(PyExc_NotImplementedError, "\"compute_index_ranges_weights\" not implemented for '%s'",
                     ct_scalar_type_name(dtype));
        return -1;
    }
    if (ct_is_floating(dtype) || (dtype == CT_U8 && !backward && (m->mode == CT_UPSAMPLE_NEAREST ||
                                                                  m->mode == CT_UPSAMPLE_NEAREST_EXACT))) {
        return 0;
    }
    if (dtype == CT_U8 && ndim == 4 && !backward) {
        PyErr_Format(PyExc_NotImplementedError,
                     "ctorch: %s interpolation of uint8 input is not supported (PyTorch's uint8 kernel rounds "
                     "between passes); convert the input to a floating dtype",
                     m->name);
        return -1;
    }
    const char *kernel = backward           ? "upsample_backward"
                         : ndim != 4         ? (m->mode == CT_UPSAMPLE_LINEAR ? "compute_indices_weights_linear"
                                                                              : "compute_indices_weights_nearest")
                         : m->mode == CT_UPSAMPLE_CUBIC  ? "compute_indices_weights_cubic"
                         : m->mode == CT_UPSAMPLE_LINEAR ? "upsample_bilinear2d_channels_last"
                                                         : "upsample_nearest2d_channels_last";
    PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", kernel, ct_scalar_type_name(dtype));
    return -1;
}

/* The kernels of device; NULL with an exception set. Borrowed. */
static const struct CtNNKernels *upsample_kernels(CtDevice device)
{
    const CtDeviceOps *ops = ct_device_ops(device);
    if (ops == NULL) {
        return NULL;
    }
    if (ops->nn == NULL || ops->nn->upsample == NULL || ops->nn->upsample_backward == NULL) {
        PyErr_Format(PyExc_NotImplementedError, "ctorch: interpolation kernels are not available on %s", ops->name);
        return NULL;
    }
    return ops->nn;
}

/* ====================================================================================================
 * CPU kernels
 * ==================================================================================================== */
typedef void (*UpsampleRange)(int64_t begin, int64_t end, void *desc);
/* Advances coordinates c (plane, then the axes) over a dense (planes, n[0], n[1], n[2]) space by one
 * element: no divisions. */
static inline void next_coords(const int64_t *n, int64_t *plane, int64_t *c)
{
    for (int a = CT_UPSAMPLE_AXES - 1; a >= 0; a--) {
        if (++c[a] < n[a]) {
            return;
        }
        c[a] = 0;
    }
    ++*plane;
}
/* Elements [begin, end) in memory order. */
#define UPSAMPLE_CPU_RANGES(NAME, T, ACC, SUF)                                        \
    static void upsample_forward_range_##NAME(int64_t begin, int64_t end, void *p)    \
    {                                                                                 \
        const CtUpsampleDesc *d = (const CtUpsampleDesc *)p;                          \
        int64_t plane, o[CT_UPSAMPLE_AXES];                                           \
        ct_upsample_coords(begin, d->out, &plane, o);                                 \
        for (int64_t i = begin; i < end; i++) {                                       \
            ct_upsample_forward_##NAME(d, plane, o);                                  \
            next_coords(d->out, &plane, o);                                           \
        }                                                                             \
    }                                                                                 \
    static void upsample_backward_range_##NAME(int64_t begin, int64_t end, void *p)   \
    {                                                                                 \
        const CtUpsampleDesc *d = (const CtUpsampleDesc *)p;                          \
        int64_t plane, c[CT_UPSAMPLE_AXES];                                           \
        ct_upsample_coords(begin, d->in, &plane, c);                                  \
        for (int64_t i = begin; i < end; i++) {                                       \
            ct_upsample_backward_##NAME(d, plane, c);                                 \
            next_coords(d->in, &plane, c);                                            \
        }                                                                             \
    }
CT_UPSAMPLE_TYPES(UPSAMPLE_CPU_RANGES)
#undef UPSAMPLE_CPU_RANGES
#define UPSAMPLE_ENTRY(NAME, ...) [CT_##NAME] = upsample_forward_range_##NAME,
static const UpsampleRange forward_ranges[CT_NUM_DTYPES] = {CT_UPSAMPLE_TYPES(UPSAMPLE_ENTRY)};
#undef UPSAMPLE_ENTRY
#define UPSAMPLE_ENTRY(NAME, ...) [CT_##NAME] = upsample_backward_range_##NAME,
static const UpsampleRange backward_ranges[CT_NUM_DTYPES] = {CT_UPSAMPLE_TYPES(UPSAMPLE_ENTRY)};
#undef UPSAMPLE_ENTRY

static int cpu_upsample_run(const CtUpsampleDesc *d, bool backward)
{
    UpsampleRange fn = (backward ? backward_ranges : forward_ranges)[d->dtype];
    if (fn == NULL || (backward && !ct_is_floating(d->dtype))) {
        PyErr_Format(PyExc_NotImplementedError, "\"upsample%s\" not implemented for '%s'", backward ? "_backward" : "",
                     ct_scalar_type_name(d->dtype));
        return -1;
    }
    int64_t n = d->planes, ratio = 1;
    for (int a = 0; a < CT_UPSAMPLE_AXES; a++) {
        n *= backward ? d->in[a] : d->out[a];
        ratio *= d->out[a] / d->in[a] + 2;
    }
    /* up to 16 (bicubic) or 8 (trilinear) taps per forward element; a backward one reads its covering
     * outputs' taps */
    ct_parallel_for(n, backward ? 8192 / ratio + 1 : 4096, fn, (void *)d);
    return 0;
}

int ct_cpu_upsample(const CtUpsampleDesc *d) { return cpu_upsample_run(d, false); }
int ct_cpu_upsample_backward(const CtUpsampleDesc *d) { return cpu_upsample_run(d, true); }

/* ====================================================================================================
 * the ops
 * ==================================================================================================== */
/* The antialiased taps (PyTorch's separable aa filter): output o reads the inputs within `support` of its
 * centre, each weighted by the filter at its distance (stretched by the downscale), normalised to sum 1;
 * ACC is the op math type. The width of the axis's rows (the most taps an output has) when o < 0. */
#define UPSAMPLE_AA_TAPS(SUF, ACC)                                                                        \
    static int aa_taps_##SUF(const CtUpsampleDesc *d, int a, int64_t o, int64_t *idx, double *w)          \
    {                                                                                                     \
        const int64_t in = d->in[a], out = d->out[a];                                                     \
        const bool cubic = d->mode[a] == CT_UPSAMPLE_CUBIC_AA;                                            \
        ACC scale;                                                                                        \
        if (d->align_corners) {                                                                           \
            scale = out > 1 ? (ACC)(in - 1) / (ACC)(out - 1) : (ACC)0;                                    \
        } else {                                                                                          \
            scale = d->scale[a] > 0 ? (ACC)(1.0 / d->scale[a]) : (ACC)in / (ACC)out;                      \
        }                                                                                                 \
        const ACC half = cubic ? (ACC)2 : (ACC)1; /* the filter's support at scale 1 */                  \
        const ACC support = scale >= 1 ? half * scale : half;                                             \
        if (o < 0) {                                                                                      \
            return (int)ceil(support) * 2 + 1;                                                            \
        }                                                                                                 \
        const ACC center = scale * ((ACC)o + (ACC)0.5), invscale = scale >= 1 ? (ACC)1 / scale : (ACC)1;  \
        const int64_t lo = (int64_t)(center - support + (ACC)0.5);                                        \
        const int64_t xmin = lo > 0 ? lo : 0, hi = (int64_t)(center + support + (ACC)0.5);               \
        const int n = (int)((hi < in ? hi : in) - xmin);                                                  \
        ACC total = 0;                                                                                    \
        for (int j = 0; j < n; j++) {                                                                     \
            const ACC x = (ACC)fabs((double)(((ACC)(j + xmin) - center + (ACC)0.5) * invscale));         \
            const ACC A = (ACC)-0.5;                                                                      \
            const ACC f = !cubic ? (x < 1 ? (ACC)1 - x : (ACC)0)                                          \
                          : x < 1 ? ((A + 2) * x - (A + 3)) * x * x + 1                                   \
                          : x < 2 ? ((A * x - 5 * A) * x + 8 * A) * x - 4 * A                             \
                                  : (ACC)0;                                                               \
            w[j] = (double)f; /* exact: normalised below in ACC */                                        \
            idx[j] = xmin + j;                                                                            \
            total += f;                                                                                   \
        }                                                                                                 \
        for (int j = 0; j < n && total != 0; j++) {                                                       \
            w[j] = (double)((ACC)w[j] / total);                                                           \
        }                                                                                                 \
        return n;                                                                                         \
    }
UPSAMPLE_AA_TAPS(f, float)
UPSAMPLE_AA_TAPS(d, double)
#undef UPSAMPLE_AA_TAPS

/* The width of axis a's table rows: the most taps an output reads. */
static int axis_width(const CtUpsampleDesc *d, int a)
{
    switch (d->mode[a]) {
    case CT_UPSAMPLE_NEAREST:
    case CT_UPSAMPLE_NEAREST_EXACT:
        return 1;
    case CT_UPSAMPLE_LINEAR:
        return 2;
    case CT_UPSAMPLE_CUBIC:
        return 4;
    default:
        return d->dtype == CT_F64 ? aa_taps_d(d, a, -1, NULL, NULL) : aa_taps_f(d, a, -1, NULL, NULL);
    }
}

/* The taps of every output along axis a into rows of d->ntaps[a] (unused slots repeat the last position
 * with weight 0) with the op math type of f64 or float, then the outputs covering every input position:
 * [the first output whose last tap reaches i, the last whose first tap is at most i] (both grow with o). */
static void fill_axis_tables(CtUpsampleDesc *d, int a, bool f64, int64_t *idx, double *w, int64_t *cover)
{
    const int width = d->ntaps[a];
    for (int64_t o = 0; o < d->out[a]; o++) {
        int64_t *ti = idx + width * o;
        double *tw = w + width * o;
        int n;
        if (is_aa(d->mode[a])) {
            n = f64 ? aa_taps_d(d, a, o, ti, tw) : aa_taps_f(d, a, o, ti, tw);
        } else if (f64) {
            n = ct_upsample_taps_d(d, a, o, ti, tw);
        } else {
            float wf[4];
            n = ct_upsample_taps_f(d, a, o, ti, wf);
            for (int j = 0; j < n; j++) {
                tw[j] = wf[j];
            }
        }
        for (int j = n; j < width; j++) {
            ti[j] = ti[n - 1];
            tw[j] = 0.0;
        }
    }
    int64_t lo = 0, hi = 0;
    for (int64_t i = 0; i < d->in[a]; i++) {
        while (lo < d->out[a] && idx[width * lo + width - 1] < i) {
            lo++;
        }
        while (hi < d->out[a] && idx[width * hi] <= i) {
            hi++;
        }
        cover[2 * i] = lo;
        cover[2 * i + 1] = hi - 1;
    }
}

/* Builds d's tables (built on the CPU, then moved to d->device) and runs the forward or backward
 * kernel over src (dense) into dst. 0 or -1. */
static int run_kernel(CtUpsampleDesc *d, bool backward, CtTensorObject *src, CtTensorObject *dst)
{
    const struct CtNNKernels *k = upsample_kernels(d->device);
    if (k == NULL) {
        return -1;
    }
    if (ct_numel(dst) == 0) {
        return 0;
    }
    int64_t taps = 0, ni = 0;
    for (int a = 0; a < CT_UPSAMPLE_AXES; a++) {
        d->ntaps[a] = axis_width(d, a);
        taps += d->ntaps[a] * d->out[a];
        ni += 2 * d->in[a];
    }
    ni += taps;
    CtTensorObject *itab = ct_empty(1, &ni, CT_I64, ct_cpu()), *wtab = ct_empty(1, &taps, CT_F64, ct_cpu());
    CtTensorObject *idev = NULL, *wdev = NULL;
    const bool f64 = d->dtype == CT_F64;
    int64_t *ip;
    double *wp;
    int rc = -1;
    if (itab == NULL || wtab == NULL) {
        goto done;
    }
    /* the index table: every axis's taps, then every axis's covers; the weights: every axis's taps */
    for (int pass = 0; pass < 2; pass++) {
        ip = (int64_t *)ct_data(pass == 0 ? itab : idev);
        wp = (double *)ct_data(pass == 0 ? wtab : wdev);
        int64_t tap_at = 0, cover_at = taps;
        for (int a = 0; a < CT_UPSAMPLE_AXES; a++) {
            if (pass == 0) {
                fill_axis_tables(d, a, f64, ip + tap_at, wp + tap_at, ip + cover_at);
            } else {
                d->tap_index[a] = ip + tap_at;
                d->tap_weight[a] = wp + tap_at;
                d->cover[a] = ip + cover_at;
            }
            tap_at += d->ntaps[a] * d->out[a];
            cover_at += 2 * d->in[a];
        }
        if (pass == 0 && ((idev = ct_to(itab, CT_I64, d->device, false)) == NULL ||
                          (wdev = ct_to(wtab, CT_F64, d->device, false)) == NULL)) {
            goto done;
        }
    }
    if (backward) {
        d->grad_output = ct_data(src);
        d->grad_input = ct_data(dst);
    } else {
        d->input = ct_data(src);
        d->output = ct_data(dst);
    }
    rc = backward ? k->upsample_backward(d) : k->upsample(d);
done:
    Py_XDECREF(itab);
    Py_XDECREF(wtab);
    Py_XDECREF(idev);
    Py_XDECREF(wdev);
    return rc;
}

static PyObject *upsample_impl(CtTensorObject *x, const ModeInfo *m, PyObject *output_size, bool align_corners,
                               PyObject *scale_factors)
{
    const char *fname = "_upsample";
    CtUpsampleDesc d;
    if (setup_geometry(fname, m, x->ndim, x->sizes, output_size, align_corners, scale_factors, &d) < 0) {
        return NULL;
    }
    if (x->sizes[1] == 0) { /* PyTorch allows an empty batch only */
        char sb[160];
        ct_format_sizes(sb, sizeof(sb), x->ndim, x->sizes);
        PyErr_Format(PyExc_RuntimeError, "Non-empty %dD data tensor expected but got a tensor with sizes %s", x->ndim,
                     sb);
        return NULL;
    }
    if (check_dtype(m, x->ndim, x->dtype, false) < 0) {
        return NULL;
    }
    d.dtype = x->dtype;
    d.device = ct_device_of(x);
    int64_t sizes[5] = {x->sizes[0], x->sizes[1]};
    memcpy(sizes + 2, d.out + (5 - x->ndim), sizeof(int64_t) * (size_t)(x->ndim - 2));
    CtTensorObject *xc = ct_contiguous(x), *out = NULL;
    if (xc == NULL || (out = ct_empty(x->ndim, sizes, x->dtype, d.device)) == NULL || run_kernel(&d, false, xc, out) < 0) {
        Py_CLEAR(out);
    }
    Py_XDECREF(xc);
    return (PyObject *)ct_as_memory_format(out, ct_suggest_memory_format(x)); /* x's layout, as PyTorch */
}

static PyObject *upsample_backward_impl(CtTensorObject *grad, const ModeInfo *m, PyObject *input_size,
                                        PyObject *output_size, bool align_corners, PyObject *scale_factors)
{
    const char *fname = "_upsample_backward";
    int64_t isz[5];
    bool given;
    if (!PyTuple_Check(input_size) && !PyList_Check(input_size)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input_size' must be tuple of ints", fname);
        return NULL;
    }
    Py_ssize_t nd = PySequence_Fast_GET_SIZE(input_size);
    if (nd < 3 || nd > 5) {
        PyErr_Format(PyExc_RuntimeError, "It is expected input_size equals to 3, 4 or 5, but got size %zd", nd);
        return NULL;
    }
    CtUpsampleDesc d;
    if (parse_list(fname, "input_size", input_size, (int)nd, false, isz, NULL, &given) < 0 ||
        setup_geometry(fname, m, (int)nd, isz, output_size, align_corners, scale_factors, &d) < 0 ||
        check_dtype(m, (int)nd, grad->dtype, true) < 0) {
        return NULL;
    }
    int64_t want[5] = {isz[0], isz[1]};
    memcpy(want + 2, d.out + (5 - nd), sizeof(int64_t) * (size_t)(nd - 2));
    if (grad->ndim != nd || memcmp(grad->sizes, want, sizeof(int64_t) * (size_t)nd) != 0) {
        char a[160], b[160];
        ct_format_sizes(a, sizeof(a), (int)nd, want);
        ct_format_sizes(b, sizeof(b), grad->ndim, grad->sizes);
        PyErr_Format(PyExc_RuntimeError, "%s(): expected grad_output of size %s, but got %s", fname, a, b);
        return NULL;
    }
    d.dtype = grad->dtype;
    d.device = ct_device_of(grad);
    CtTensorObject *gc = ct_contiguous(grad), *gi = NULL;
    if (gc == NULL || (gi = ct_empty((int)nd, isz, grad->dtype, d.device)) == NULL || run_kernel(&d, true, gc, gi) < 0) {
        Py_CLEAR(gi);
    }
    Py_XDECREF(gc);
    return (PyObject *)ct_as_memory_format(gi, ct_suggest_memory_format(grad)); /* grad's layout, as PyTorch */
}

/* ====================================================================================================
 * Python entry points (ctorch._C)
 * ==================================================================================================== */
static int check_tensor(const char *fname, const char *argname, int pos, PyObject *obj)
{
    if (CtTensor_Check(obj)) {
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %d) must be Tensor, not %s", fname, argname, pos,
                 ct_type_name(obj));
    return -1;
}

PyDoc_STRVAR(upsample_doc,
             "_upsample(input, mode, output_size=None, align_corners=False, scale_factors=None) -> Tensor\n\n"
             "Resamples (N, C, W), (N, C, H, W) or (N, C, D, H, W) input to output_size, or to floor(size * scale) "
             "per spatial dim; mode is 'nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic' or 'trilinear'.");
static PyObject *py_upsample(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"input", "mode", "output_size", "align_corners", "scale_factors", NULL};
    const char *fname = "_upsample";
    PyObject *a[5];
    bool align = false;
    const ModeInfo *m;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 2, a) < 0 || check_tensor(fname, "input", 1, a[0]) < 0 ||
        (m = parse_mode(fname, a[1])) == NULL || ct_arg_bool(a[3], &align) < 0) {
        return NULL;
    }
    return upsample_impl(CT_TENSOR(a[0]), m, a[2], align, a[4]);
}

PyDoc_STRVAR(upsample_backward_doc,
             "_upsample_backward(grad_output, mode, input_size, output_size, align_corners=False, "
             "scale_factors=None) -> Tensor\n\nThe gradient of _upsample with respect to its input.");
static PyObject *py_upsample_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"grad_output",   "mode", "input_size", "output_size", "align_corners",
                                        "scale_factors", NULL};
    const char *fname = "_upsample_backward";
    PyObject *a[6];
    bool align = false;
    const ModeInfo *m;
    if (ct_parse_args(fname, args, nargs, kwnames, names, 4, a) < 0 ||
        check_tensor(fname, "grad_output", 1, a[0]) < 0 || (m = parse_mode(fname, a[1])) == NULL ||
        ct_arg_bool(a[4], &align) < 0) {
        return NULL;
    }
    return upsample_backward_impl(CT_TENSOR(a[0]), m, a[2], a[3], align, a[5]);
}

PyMethodDef ct_upsample_module_methods[] = {
    {"_upsample", CT_FASTCALL(py_upsample), CT_METH_FK, upsample_doc},
    {"_upsample_backward", CT_FASTCALL(py_upsample_backward), CT_METH_FK, upsample_backward_doc},
    {NULL},
};
PyMethodDef ct_upsample_tensor_methods[] = {{NULL}};
PyType_Slot ct_upsample_tensor_slots[] = {{0, NULL}};

/* ====================================================================================================
 * backward formulas (listed in autograd_formulas.c), through ct_op so that create_graph records them
 * ==================================================================================================== */
/* PyTorch's node name for mode m (a table row or NULL) and input dims nd, with `suffix`. */
static const char *node_name(const ModeInfo *m, int nd, bool backward)
{
    /* [mode row][spatial dims - 1][backward]; the fixed-dims modes take their own name at every dims */
    static const char *const names[8][3][2] = {
        {{"UpsampleNearest1DBackward0", "UpsampleNearest1DBackwardBackward0"},
         {"UpsampleNearest2DBackward0", "UpsampleNearest2DBackwardBackward0"},
         {"UpsampleNearest3DBackward0", "UpsampleNearest3DBackwardBackward0"}},
        {{"UpsampleNearestExact1DBackward0", "UpsampleNearestExact1DBackwardBackward0"},
         {"UpsampleNearestExact2DBackward0", "UpsampleNearestExact2DBackwardBackward0"},
         {"UpsampleNearestExact3DBackward0", "UpsampleNearestExact3DBackwardBackward0"}},
        {{"UpsampleLinear1DBackward0", "UpsampleLinear1DBackwardBackward0"}},
        {{"UpsampleBilinear2DBackward0", "UpsampleBilinear2DBackwardBackward0"}},
        {{"UpsampleBicubic2DBackward0", "UpsampleBicubic2DBackwardBackward0"}},
        {{"UpsampleTrilinear3DBackward0", "UpsampleTrilinear3DBackwardBackward0"}},
        {{"UpsampleBilinear2DAaBackward0", "UpsampleBilinear2DAaBackwardBackward0"}},
        {{"UpsampleBicubic2DAaBackward0", "UpsampleBicubic2DAaBackwardBackward0"}},
    };
    const int row = m != NULL ? (int)(m - modes) : 1;
    const int dims = m != NULL && m->ndim != 0 ? 0 : nd < 3 ? 0 : nd > 5 ? 2 : nd - 3;
    return names[row][dims][backward ? 1 : 0];
}

/* The mode row of a normalised argument (NULL when it is not a known mode; no exception). */
static const ModeInfo *mode_of(PyObject *obj)
{
    const char *s = obj != NULL && PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    for (size_t i = 0; s != NULL && i < sizeof(modes) / sizeof(modes[0]); i++) {
        if (strcmp(s, modes[i].name) == 0) {
            return &modes[i];
        }
    }
    PyErr_Clear();
    return NULL;
}

const char *ct_upsample_node_name(PyObject *const *norm)
{
    int nd = norm[0] != NULL && CtTensor_Check(norm[0]) ? CT_TENSOR(norm[0])->ndim : 4;
    return node_name(mode_of(norm[1]), nd, false);
}

const char *ct_upsample_backward_node_name(PyObject *const *norm)
{
    int nd = norm[2] != NULL && (PyTuple_Check(norm[2]) || PyList_Check(norm[2])) ? (int)PySequence_Size(norm[2]) : 4;
    return node_name(mode_of(norm[1]), nd, true);
}

static PyObject *arg_or(CtNodeObject *n, int i, PyObject *dflt) { return n->args[i] != NULL ? n->args[i] : dflt; }

/* grad_input of edge 0 from ct_op(op, args...), fitted to argument 0's metadata. 0 or -1. */
static int call_into(CtNodeObject *n, PyObject **gi, const char *op, PyObject *const *args, size_t nargs)
{
    PyObject *r = ct_op(op, args, nargs, NULL);
    if (r == NULL) {
        return -1;
    }
    gi[0] = ct_fit_grad(r, &n->meta[0]);
    Py_DECREF(r);
    return gi[0] != NULL ? 0 : -1;
}

/* _upsample: (input, mode, output_size, align_corners, scale_factors) */
int ct_upsample_bw(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (g[0] == NULL || n->edge_nodes[0] == NULL) {
        return 0;
    }
    const CtTensorMeta *m = &n->meta[0];
    const CtTensorObject *go = CT_TENSOR(g[0]);
    PyObject *isz = ct_size_object(m->ndim, m->sizes);
    PyObject *osz = ct_size_object(m->ndim - 2, go->sizes + 2);
    int rc = -1;
    if (isz != NULL && osz != NULL) {
        PyObject *args[6] = {g[0], n->args[1], isz, osz, arg_or(n, 3, Py_False), arg_or(n, 4, Py_None)};
        rc = call_into(n, gi, "_upsample_backward", args, 6);
    }
    Py_XDECREF(isz);
    Py_XDECREF(osz);
    return rc;
}

/* _upsample_backward: (grad_output, mode, input_size, output_size, align_corners, scale_factors): the
 * forward is its adjoint */
int ct_upsample_bw_backward(CtNodeObject *n, PyObject *const *g, PyObject **gi)
{
    if (g[0] == NULL || n->edge_nodes[0] == NULL) {
        return 0;
    }
    PyObject *args[5] = {g[0], n->args[1], n->args[3], arg_or(n, 4, Py_False), arg_or(n, 5, Py_None)};
    return call_into(n, gi, "_upsample", args, 5);
}
