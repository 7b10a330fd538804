/* profiler.h: the op hook behind ctorch.profiler. Every op entry point already goes through one
 * of autograd's wrappers (functions, methods, the number/mapping slots); while a profile runs,
 * each wrapper hands its call to ct_profiler_call, which times it and appends one event to the
 * profile's list. When no profile runs, the cost is one test of ct_profiler_on per call. */
#ifndef CTORCH_PROFILER_H
#define CTORCH_PROFILER_H

#include "ctorch.h"

extern bool ct_profiler_on;

/* Bytes held by live CPU allocations of the CPU vtable (device.c keeps it). */
extern int64_t ct_cpu_allocated_bytes;

/* Runs call(ctx) as the op `op` and records it (start/end time, input shapes, memory deltas,
 * CUDA events around it) when it succeeds. args: the call's positional then keyword values
 * (nargs + len(kwnames) of them). */
PyObject *ct_profiler_call(const char *op, PyObject *(*call)(void *ctx), void *ctx, PyObject *const *args,
                           Py_ssize_t nargs, PyObject *kwnames);

/* Around work that is not one op call (a backward node in the engine): begin before it, with
 * the tensors that tell its CUDA device (NULL entries allowed); end_node after it succeeded,
 * naming the event "autograd::engine::evaluate_function: <node's class>". 0, or -1 with an
 * exception set. */
typedef struct {
    int64_t t0, cpu0, cuda0;
    int device; /* -1: no CUDA tensor */
    uintptr_t event0;
    const struct CtCudaBackend *backend;
} CtProfilerMark;
void ct_profiler_begin(CtProfilerMark *m, PyObject *const *args, Py_ssize_t n);
int ct_profiler_end_node(const CtProfilerMark *m, PyObject *node);
void ct_profiler_cancel(const CtProfilerMark *m); /* drops what begin made (never raises) */

/* The PyTorch op name for indexing with key: "select", "slice" or "index" (x[key]), "copy_" or
 * "index_put_" (x[key] = v). */
const char *ct_profiler_index_name(PyObject *key, bool assign);

#endif /* CTORCH_PROFILER_H */
