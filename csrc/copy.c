/* copy.c: ct_copy_ (broadcast, cast and cross-device copies) and ct_fill_, with the CPU cast
 * loops stamped out for every (dst, src) dtype pair. Copies within one device run there (on a
 * GPU: cudaMemcpyAsync device-to-device when both sides are contiguous with one dtype, the copy
 * kernel otherwise). Cross-device copies stage through a contiguous buffer on the side that
 * needs it and move bytes with the device vtable, or GPU to GPU with a peer copy. */
#include "copy.h"
#include "cuda_loader.h"
#include "device.h"
#include "elementwise.h"
#include "tensor.h"
#include <string.h>

/* --- CPU cast loops ---------------------------------------------------------------------------- */

/* For each destination, one loop per source. The contiguous case is a separate loop so the
 * compiler can vectorise it. */
#define CT_DEFINE_CAST(DST, SRC)                                                                 \
    static void cast_##SRC##_to_##DST(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                                            \
        char *d = data[0];                                                                       \
        const char *s = data[1];                                                                 \
        int64_t sd = strides[0], ss = strides[1];                                                \
        for (int64_t i = 0; i < n; i++) {                                                        \
            CT_STORE_##DST(d + i * sd, CT_LOAD_##SRC(s + i * ss));                               \
        }                                                                                        \
    }

#define CT_DEFINE_CASTS_FROM(SRC, ...)    \
    CT_DEFINE_CAST(BOOL, SRC)             \
    CT_DEFINE_CAST(U8, SRC)               \
    CT_DEFINE_CAST(I8, SRC)               \
    CT_DEFINE_CAST(I16, SRC)              \
    CT_DEFINE_CAST(I32, SRC)              \
    CT_DEFINE_CAST(I64, SRC)              \
    CT_DEFINE_CAST(F16, SRC)              \
    CT_DEFINE_CAST(BF16, SRC)             \
    CT_DEFINE_CAST(F32, SRC)              \
    CT_DEFINE_CAST(F64, SRC)
CT_DTYPE_LIST(CT_DEFINE_CASTS_FROM)

/* Same-dtype copies: plain memcpy when both sides are contiguous, element moves otherwise. */
#define CT_DEFINE_SAME(NAME, ctype, ...)                                                           \
    static void copy_same_##NAME(char **data, const int64_t *strides, int64_t n, void *ctx)       \
    {                                                                                              \
        if (strides[0] == sizeof(ctype) && strides[1] == sizeof(ctype)) {                          \
            memcpy(data[0], data[1], (size_t)n * sizeof(ctype));                                   \
            return;                                                                                \
        }                                                                                          \
        char *d = data[0];                                                                         \
        const char *s = data[1];                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                          \
            *(ctype *)(d + i * strides[0]) = *(const ctype *)(s + i * strides[1]);                 \
        }                                                                                          \
    }
CT_DTYPE_LIST(CT_DEFINE_SAME)

#define CT_CAST_ROW(SRC, ...)                                                                       \
    {cast_##SRC##_to_BOOL, cast_##SRC##_to_U8, cast_##SRC##_to_I8, cast_##SRC##_to_I16,           \
     cast_##SRC##_to_I32, cast_##SRC##_to_I64, cast_##SRC##_to_F16, cast_##SRC##_to_BF16,         \
     cast_##SRC##_to_F32, cast_##SRC##_to_F64},
static const CtInnerLoop cast_table[CT_NUM_DTYPES][CT_NUM_DTYPES] = {CT_DTYPE_LIST(CT_CAST_ROW)}; /* [src][dst] */

#define CT_SAME_ROW(NAME, ...) copy_same_##NAME,
static const CtInnerLoop same_table[CT_NUM_DTYPES] = {CT_DTYPE_LIST(CT_SAME_ROW)};

CtInnerLoop ct_cpu_cast_loop(CtDType dst, CtDType src)
{
    return dst == src ? same_table[dst] : cast_table[src][dst];
}

/* --- ct_copy_ ---------------------------------------------------------------------------------------- */
/* Copies src (same device as dst, any dtype/layout, broadcastable) into dst on the CPU. */
static int copy_cpu(CtTensorObject *dst, CtTensorObject *src)
{
    CtIter it;
    CtTensorObject *ops[2] = {dst, src};
    if (ct_iter_init(&it, 2, ops) < 0) {
        return -1;
    }
    ct_iter_cpu_run(&it, ct_cpu_cast_loop(dst->dtype, src->dtype), NULL);
    return 0;
}

/* True when t's elements fill [data, data + numel*itemsize) in order. */
static bool dense_contiguous(const CtTensorObject *t) { return ct_is_contiguous(t); }

int ct_copy_(CtTensorObject *dst, CtTensorObject *src) { return ct_copy_ex(dst, src, false); }

/* True when src's bytes are exactly what dst needs (same dtype and shape, contiguous). */
static bool same_layout(const CtTensorObject *dst, const CtTensorObject *src)
{
    if (src->dtype != dst->dtype || src->ndim != dst->ndim || !ct_is_contiguous(src)) {
        return false;
    }
    return memcmp(src->sizes, dst->sizes, sizeof(int64_t) * dst->ndim) == 0;
}

int ct_copy_ex(CtTensorObject *dst, CtTensorObject *src, bool non_blocking)
{
    CtDevice dd = ct_device_of(dst), sd = ct_device_of(src);
    int64_t bshape[CT_MAX_DIMS];
    int nd = ct_broadcast_shapes(dst->ndim, dst->sizes, src->ndim, src->sizes, bshape);
    if (nd < 0) {
        return -1;
    }
    if (nd != dst->ndim || memcmp(bshape, dst->sizes, sizeof(int64_t) * nd) != 0) {
        char a[256], b[256];
        ct_format_sizes(a, sizeof(a), src->ndim, src->sizes);
        ct_format_sizes(b, sizeof(b), dst->ndim, dst->sizes);
        PyErr_Format(PyExc_RuntimeError, "output with shape %s doesn't match the broadcast shape %s", b, a);
        return -1;
    }
    if (ct_numel(dst) == 0) {
        return 0;
    }
    if (dd.type == CT_DEV_CPU && sd.type == CT_DEV_CPU) {
        return copy_cpu(dst, src);
    }
    if (ct_device_equal(dd, sd)) {
        const CtDeviceOps *ops = ct_device_ops(dd);
        if (ops == NULL) {
            return -1;
        }
        if (ops->elementwise == NULL) {
            PyErr_Format(PyExc_RuntimeError, "copy_ is not implemented on %s", ops->name);
            return -1;
        }
        CtIter it;
        CtTensorObject *operands[2] = {dst, src};
        if (ct_iter_init(&it, 2, operands) < 0) {
            return -1;
        }
        return ops->elementwise->copy(&it);
    }
    /* Cross-device: bring src to a contiguous buffer of dst's dtype and shape on src's device
     * (src itself when it is one: a pinned source stays pinned), move the bytes, then (if dst is
     * not contiguous) scatter on dst's device. A non-blocking copy returns without waiting; the
     * staging buffers may be released at once (pageable host memory is consumed before the call
     * returns, device memory is reused in stream order). */
    int rc = -1;
    CtTensorObject *staged = NULL, *landing = NULL;
    if (same_layout(dst, src)) {
        staged = (CtTensorObject *)Py_NewRef(src);
    } else {
        staged = ct_empty(dst->ndim, dst->sizes, dst->dtype, sd);
        if (staged == NULL || ct_copy_(staged, src) < 0) {
            goto done;
        }
    }
    landing = dense_contiguous(dst) ? (CtTensorObject *)Py_NewRef(dst) : ct_empty_like(dst, dst->dtype);
    if (landing == NULL) {
        goto done;
    }
    size_t nbytes = (size_t)ct_numel(dst) * ct_itemsize(dst);
    if (sd.type == CT_DEV_CPU) {
        const CtDeviceOps *ops = ct_device_ops(dd);
        if (ops == NULL) {
            goto done;
        }
        int (*h2d)(void *, const void *, size_t, CtDevice) =
            non_blocking && ops->copy_h2d_async ? ops->copy_h2d_async : ops->copy_h2d;
        if (h2d(ct_data(landing), ct_data(staged), nbytes, dd) < 0) {
            goto done;
        }
    } else if (dd.type == CT_DEV_CPU) {
        const CtDeviceOps *ops = ct_device_ops(sd);
        if (ops == NULL) {
            goto done;
        }
        /* When landing is a temporary (dst not contiguous) it is pageable memory, into which
         * even an asynchronous copy completes before returning, so reading it next is safe. */
        int (*d2h)(void *, const void *, size_t, CtDevice) =
            non_blocking && ops->copy_d2h_async ? ops->copy_d2h_async : ops->copy_d2h;
        if (d2h(ct_data(landing), ct_data(staged), nbytes, sd) < 0) {
            goto done;
        }
    } else if (ct_cuda_copy_peer(ct_data(landing), dd, ct_data(staged), sd, nbytes) < 0) {
        /* between two GPUs: device to device (peer), stream-ordered on both sides */
        goto done;
    }
    if (landing != dst && ct_copy_(dst, landing) < 0) {
        goto done;
    }
    rc = 0;
done:
    Py_XDECREF(staged);
    Py_XDECREF(landing);
    return rc;
}

int ct_fill_(CtTensorObject *t, const CtScalar *value)
{
    CtTensorObject *s = ct_scalar_tensor(value, t->dtype, ct_device_of(t));
    if (s == NULL) {
        return -1;
    }
    int r = ct_copy_(t, s);
    Py_DECREF(s);
    return r;
}
