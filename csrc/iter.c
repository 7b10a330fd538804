/* iter.c: broadcasting, dim reordering and coalescing for elementwise ops, and the CPU
 * walker that feeds inner loops (split across threads for large tensors). */
#include "iter.h"
#include "parallel.h"
#include "tensor.h"
#include <string.h>

int ct_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int64_t *out)
{
    int n = na > nb ? na : nb;
    /* from the last dim, so that the error names the last mismatch as PyTorch does */
    for (int i = n - 1; i >= 0; i--) {
        int ia = na - n + i, ib = nb - n + i;
        int64_t sa = ia >= 0 ? a[ia] : 1;
        int64_t sb = ib >= 0 ? b[ib] : 1;
        if (sa == sb || sb == 1) {
            out[i] = sa;
        } else if (sa == 1) {
            out[i] = sb;
        } else {
            PyErr_Format(PyExc_RuntimeError,
                         "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                         "dimension %d",
                         (long long)sa, (long long)sb, i);
            return -1;
        }
    }
    return n;
}

/* The common case of every operand having out's shape and being contiguous: one dim of numel
 * elements (stride 0 for a single element), what the general path's coalescing gives. Returns
 * false, touching nothing, otherwise. */
static bool iter_init_contiguous(CtIter *it, int nops, CtTensorObject *const *ops)
{
    const CtTensorObject *out = ops[0];
    int nd = out->ndim;
    int64_t numel = 1;
    for (int d = 0; d < nd; d++) {
        numel *= out->sizes[d];
    }
    if (numel == 0) {
        return false;
    }
    for (int op = 0; op < nops; op++) {
        const CtTensorObject *t = ops[op];
        if (t->ndim != nd) {
            return false;
        }
        int64_t expected = 1;
        for (int d = nd - 1; d >= 0; d--) {
            if (t->sizes[d] != out->sizes[d] || (t->sizes[d] != 1 && t->strides[d] != expected)) {
                return false;
            }
            expected *= t->sizes[d];
        }
    }
    it->nops = nops;
    it->ndim = 1;
    it->numel = numel;
    it->device = ct_device_of(out);
    it->shape[0] = numel;
    memset(it->strides[0], 0, sizeof(it->strides[0]));
    for (int op = 0; op < nops; op++) {
        const CtTensorObject *t = ops[op];
        it->data[op] = ct_data(t);
        it->dtypes[op] = t->dtype;
        it->strides[0][op] = numel == 1 ? 0 : (int64_t)ct_itemsize(t);
    }
    return true;
}

int ct_iter_init(CtIter *it, int nops, CtTensorObject *const *ops)
{
    if (iter_init_contiguous(it, nops, ops)) {
        return 0;
    }
    const CtTensorObject *out = ops[0];
    int nd = out->ndim;
    memset(it, 0, sizeof(*it));
    it->nops = nops;
    it->numel = ct_numel(out);
    it->device = ct_device_of(out);
    /* Gather strides in bytes, innermost dim first, broadcast dims get stride 0. */
    for (int op = 0; op < nops; op++) {
        const CtTensorObject *t = ops[op];
        int64_t isz = (int64_t)ct_itemsize(t);
        it->data[op] = ct_data(t);
        it->dtypes[op] = t->dtype;
        if (t->ndim > nd) {
            PyErr_Format(PyExc_RuntimeError, "output with %d dims doesn't match the broadcast of %d dims", nd,
                         t->ndim);
            return -1;
        }
        for (int d = 0; d < nd; d++) {
            int td = t->ndim - nd + d; /* dim of t aligned with out's dim d */
            int64_t size = td >= 0 ? t->sizes[td] : 1;
            int64_t stride = td >= 0 ? t->strides[td] * isz : 0;
            if (size != out->sizes[d]) {
                if (size != 1) {
                    PyErr_Format(PyExc_RuntimeError,
                                 "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                                 "non-singleton dimension %d",
                                 (long long)out->sizes[d], (long long)size, d);
                    return -1;
                }
                stride = 0;
            }
            it->strides[nd - 1 - d][op] = stride;
        }
    }
    for (int d = 0; d < nd; d++) {
        it->shape[nd - 1 - d] = out->sizes[d];
    }
    it->ndim = nd;
    if (it->numel == 0) {
        it->ndim = 1;
        it->shape[0] = 0;
        return 0;
    }
    /* Reorder dims so that the output's smallest stride is innermost (insertion sort, stable;
     * ties broken by the inputs). Makes in-place ops on transposed tensors walk memory in order. */
    for (int i = 1; i < nd; i++) {
        for (int j = i; j > 0; j--) {
            int swap = 0;
            for (int op = 0; op < nops; op++) {
                int64_t s0 = it->strides[j - 1][op], s1 = it->strides[j][op];
                if (s0 < 0) s0 = -s0;
                if (s1 < 0) s1 = -s1;
                if (s0 == 0 || s1 == 0 || s0 == s1) {
                    continue;
                }
                swap = s0 > s1;
                break;
            }
            if (!swap) {
                break;
            }
            int64_t tmp = it->shape[j];
            it->shape[j] = it->shape[j - 1];
            it->shape[j - 1] = tmp;
            for (int op = 0; op < nops; op++) {
                int64_t ts = it->strides[j][op];
                it->strides[j][op] = it->strides[j - 1][op];
                it->strides[j - 1][op] = ts;
            }
        }
    }
    /* Coalesce: drop size-1 dims and merge dim d into the previous one when contiguous. */
    int k = 0;
    for (int d = 0; d < nd; d++) {
        if (it->shape[d] == 1) {
            continue;
        }
        if (k > 0) {
            int mergeable = 1;
            for (int op = 0; op < nops; op++) {
                if (it->strides[d][op] != it->shape[k - 1] * it->strides[k - 1][op]) {
                    mergeable = 0;
                    break;
                }
            }
            if (mergeable) {
                it->shape[k - 1] *= it->shape[d];
                continue;
            }
        }
        it->shape[k] = it->shape[d];
        memmove(it->strides[k], it->strides[d], sizeof(it->strides[d]));
        k++;
    }
    if (k == 0) { /* a single element */
        k = 1;
        it->shape[0] = 1;
        memset(it->strides[0], 0, sizeof(it->strides[0]));
    }
    it->ndim = k;
    return 0;
}

typedef struct {
    const CtIter *it;
    CtInnerLoop loop;
    void *ctx;
} RunCtx;

/* Walks the linear range [begin, end) of the iteration space. */
static void run_range(int64_t begin, int64_t end, void *arg)
{
    const RunCtx *rc = (const RunCtx *)arg;
    const CtIter *it = rc->it;
    int nd = it->ndim, nops = it->nops;
    int64_t idx[CT_MAX_DIMS];
    char *ptr[CT_MAX_OPERANDS];
    int64_t rem = begin;
    for (int op = 0; op < nops; op++) {
        ptr[op] = it->data[op];
    }
    for (int d = 0; d < nd; d++) {
        idx[d] = rem % it->shape[d];
        rem /= it->shape[d];
        for (int op = 0; op < nops; op++) {
            ptr[op] += idx[d] * it->strides[d][op];
        }
    }
    int64_t pos = begin;
    while (pos < end) {
        int64_t n = it->shape[0] - idx[0];
        if (n > end - pos) {
            n = end - pos;
        }
        rc->loop(ptr, it->strides[0], n, rc->ctx);
        pos += n;
        if (pos >= end) {
            break;
        }
        /* advance: the inner dim ended, carry into the outer dims */
        for (int op = 0; op < nops; op++) {
            ptr[op] -= idx[0] * it->strides[0][op];
        }
        idx[0] = 0;
        for (int d = 1; d < nd; d++) {
            idx[d]++;
            for (int op = 0; op < nops; op++) {
                ptr[op] += it->strides[d][op];
            }
            if (idx[d] < it->shape[d]) {
                break;
            }
            for (int op = 0; op < nops; op++) {
                ptr[op] -= idx[d] * it->strides[d][op];
            }
            idx[d] = 0;
        }
    }
}

void ct_iter_cpu_run(const CtIter *it, CtInnerLoop loop, void *ctx)
{
    if (it->numel == 0) {
        return;
    }
    /* Below ~64K elements a second thread costs more than it saves. */
    if (it->ndim == 1 && it->numel < 2 * 65536) { /* one run, one thread: what run_range would do */
        char *ptr[CT_MAX_OPERANDS];
        memcpy(ptr, it->data, sizeof(char *) * it->nops);
        loop(ptr, it->strides[0], it->numel, ctx);
        return;
    }
    RunCtx rc = {it, loop, ctx};
    ct_parallel_for(it->numel, 65536, run_range, &rc);
}

/* --- output layout ------------------------------------------------------------------------------ */
bool ct_non_overlapping_and_dense(const CtTensorObject *t)
{
    int perm[CT_MAX_DIMS];
    int n = 0;
    if (ct_numel(t) == 0) {
        return true;
    }
    for (int i = 0; i < t->ndim; i++) {
        if (t->sizes[i] >= 2) { /* size-1 dims never decide where an element lies */
            int j = n++;
            while (j > 0 && t->strides[perm[j - 1]] > t->strides[i]) {
                perm[j] = perm[j - 1];
                j--;
            }
            perm[j] = i;
        }
    }
    int64_t expected = 1;
    for (int i = 0; i < n; i++) {
        if (t->strides[perm[i]] != expected) {
            return false;
        }
        expected *= t->sizes[perm[i]];
    }
    return true;
}

/* 1 when dim a goes outside dim b, -1 inside, 0 when no operand orders them (both broadcast,
 * or equal strides with a not larger than b). */
static int layout_compare(int a, int b, const int64_t *shape, int n, const int64_t (*strides)[CT_MAX_DIMS])
{
    for (int op = 0; op < n; op++) {
        int64_t sa = strides[op][a], sb = strides[op][b];
        if (sa == 0 || sb == 0) {
            continue;
        }
        if (sa != sb) {
            return sa < sb ? -1 : 1;
        }
        if (shape[a] > shape[b]) { /* equal strides: the smaller dim goes inside */
            return 1;
        }
    }
    return 0;
}

/* Dense strides for shape with the dims ordered by the operands' strides (0 = broadcast). The
 * insertion sort starts from the row-major order and moves a dim inward only past dims that an
 * operand orders after it, stepping over unordered ones, so that ties keep row-major order. */
static void dense_strides_by(int ndim, const int64_t *shape, int n, const int64_t (*op_strides)[CT_MAX_DIMS],
                             int64_t *strides)
{
    int perm[CT_MAX_DIMS]; /* perm[0] is the innermost dim */
    for (int i = 0; i < ndim; i++) {
        perm[i] = ndim - 1 - i;
    }
    for (int i = 1; i < ndim; i++) {
        int moving = i;
        for (int j = i - 1; j >= 0; j--) {
            int c = layout_compare(perm[j], perm[moving], shape, n, op_strides);
            if (c > 0) {
                int tmp = perm[j];
                perm[j] = perm[moving];
                perm[moving] = tmp;
                moving = j;
            } else if (c < 0) {
                break;
            }
        }
    }
    int64_t next = 1;
    for (int i = 0; i < ndim; i++) {
        strides[perm[i]] = next;
        next *= shape[perm[i]];
    }
}

bool ct_iter_output_strides(int ndim, const int64_t *shape, int n, const CtTensorObject *const *ts,
                            bool scalar_operand, int64_t *strides)
{
    if (n == 0 || ndim == 0) {
        return true;
    }
    /* one pass per operand for the common case: every operand has the shape and is contiguous */
    bool same_shape = !scalar_operand, contiguous = true;
    for (int k = 0; k < n && same_shape; k++) {
        const CtTensorObject *t = ts[k];
        int64_t expected = 1;
        same_shape = t->ndim == ndim;
        for (int d = ndim - 1; d >= 0 && same_shape; d--) {
            same_shape = t->sizes[d] == shape[d];
            if (t->sizes[d] != 1 && t->strides[d] != expected) {
                contiguous = false;
            }
            expected *= t->sizes[d];
        }
    }
    if (same_shape) {
        int k = 0;
        while (!contiguous && k < n && ct_is_contiguous(ts[k])) { /* empty tensors: any strides */
            k++;
        }
        if (contiguous || k == n) {
            return true;
        }
        for (k = 0; k < n; k++) {
            if (memcmp(ts[k]->strides, ts[0]->strides, sizeof(int64_t) * ndim) != 0 ||
                !ct_non_overlapping_and_dense(ts[k])) {
                break;
            }
        }
        if (k == n) {
            memcpy(strides, ts[0]->strides, sizeof(int64_t) * ndim);
            return false;
        }
    }
    int64_t op_strides[CT_MAX_OPERANDS][CT_MAX_DIMS];
    int nops = n < CT_MAX_OPERANDS ? n : CT_MAX_OPERANDS;
    for (int k = 0; k < nops; k++) {
        const CtTensorObject *t = ts[k];
        for (int d = 0; d < ndim; d++) {
            int td = t->ndim - ndim + d; /* t's dim aligned with dim d */
            bool broadcast = td < 0 || (t->sizes[td] == 1 && shape[d] != 1);
            op_strides[k][d] = broadcast ? 0 : t->strides[td];
        }
    }
    dense_strides_by(ndim, shape, nops, (const int64_t(*)[CT_MAX_DIMS])op_strides, strides);
    return false;
}

void ct_preserve_strides(const CtTensorObject *t, int64_t *strides)
{
    if (ct_non_overlapping_and_dense(t)) {
        memcpy(strides, t->strides, sizeof(int64_t) * t->ndim);
        return;
    }
    dense_strides_by(t->ndim, t->sizes, 1, (const int64_t(*)[CT_MAX_DIMS])t->strides, strides);
}
