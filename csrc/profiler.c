/* profiler.c: the op hook of ctorch.profiler (python/ctorch/profiler). While a profile runs,
 * autograd's op wrappers call ct_profiler_call, which appends one tuple per op to the profile's
 * list:
 *   (name, start_ns, end_ns, input_shapes | None, cpu_mem_delta, cuda_mem_delta,
 *    cuda_device, cuda_start_event, cuda_end_event, thread_id)
 * Times come from CLOCK_MONOTONIC (time.perf_counter_ns on Linux, which record_function uses
 * too). With CUDA timing on, an op with a CUDA tensor argument is bracketed by two timing events
 * on the current stream; Python reads their elapsed time when the profile stops, so no op waits
 * for the GPU. An op's own inner C calls are not separate events; ops it calls back through
 * Python (composites written in Python) are, nested inside it by time. */
#include "profiler.h"
#include "cuda_loader.h"
#include "registry.h"
#include "tensor.h"
#include <time.h>

bool ct_profiler_on = false;
int64_t ct_cpu_allocated_bytes = 0;

enum { PROF_SHAPES = 1, PROF_MEMORY = 2, PROF_CUDA = 4 };

static PyObject *prof_events;    /* list the events go to (owned while on) */
static int prof_flags;
static PyObject *prof_push;      /* optional callables around each op (emit_nvtx): push(name), pop() */
static PyObject *prof_pop;

static int64_t clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* PyTorch's input_shapes: one list per argument, the sizes of a tensor, [] for anything else. */
static PyObject *input_shapes(PyObject *const *args, Py_ssize_t n)
{
    PyObject *shapes = PyList_New(n);
    for (Py_ssize_t i = 0; shapes != NULL && i < n; i++) {
        PyObject *s;
        if (CtTensor_Check(args[i])) {
            CtTensorObject *t = CT_TENSOR(args[i]);
            s = PyList_New(t->ndim);
            for (int d = 0; s != NULL && d < t->ndim; d++) {
                PyObject *v = PyLong_FromLongLong(t->sizes[d]);
                if (v == NULL) {
                    Py_CLEAR(s);
                    break;
                }
                PyList_SET_ITEM(s, d, v);
            }
        } else {
            s = PyList_New(0);
        }
        if (s == NULL) {
            Py_CLEAR(shapes);
            break;
        }
        PyList_SET_ITEM(shapes, i, s);
    }
    return shapes;
}

/* The device of the first CUDA tensor among args, or -1. */
static int cuda_device_of(PyObject *const *args, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        if (args[i] != NULL && CtTensor_Check(args[i]) && CT_TENSOR(args[i])->storage->device.type == CT_DEV_CUDA) {
            return CT_TENSOR(args[i])->storage->device.index;
        }
    }
    return -1;
}

/* A timing event recorded on device d's current stream; 0 when it cannot be made. */
static uintptr_t cuda_mark(const CtCudaBackend *b, int d)
{
    uintptr_t ev = 0;
    if (b->event_create(d, 1, &ev) != CT_CUDA_OK) {
        return 0;
    }
    if (b->event_record(d, ev, b->current_stream(d)) != CT_CUDA_OK) {
        (void)b->event_destroy(d, ev);
        return 0;
    }
    return ev;
}

static int64_t cuda_allocated(const CtCudaBackend *b, int d)
{
    CtCudaMemoryStats s;
    return b->memory_stats(d, &s) == CT_CUDA_OK ? s.allocated_bytes[CT_CUDA_STAT_ALL].current : 0;
}

/* Notes the state before a call: time, memory counters, a CUDA start event when one of args is
 * a CUDA tensor and CUDA timing is on. */
void ct_profiler_begin(CtProfilerMark *m, PyObject *const *args, Py_ssize_t n)
{
    m->backend = (prof_flags & (PROF_CUDA | PROF_MEMORY)) ? ct_cuda_backend() : NULL;
    m->device = m->backend != NULL ? cuda_device_of(args, n) : -1;
    m->cpu0 = ct_cpu_allocated_bytes;
    m->cuda0 = (prof_flags & PROF_MEMORY) && m->device >= 0 ? cuda_allocated(m->backend, m->device) : 0;
    m->event0 = m->device >= 0 && (prof_flags & PROF_CUDA) ? cuda_mark(m->backend, m->device) : 0;
    m->t0 = clock_ns();
}

/* Appends the event that began at m (shapes: a new reference or NULL for None); keep false only
 * drops m's CUDA events. 0, or -1 with an exception set. */
static int profiler_end(const CtProfilerMark *m, PyObject *name, PyObject *shapes, bool keep)
{
    int64_t t1 = clock_ns();
    const CtCudaBackend *b = m->backend;
    keep = keep && prof_events != NULL;
    uintptr_t ev0 = m->event0, ev1 = ev0 != 0 && keep ? cuda_mark(b, m->device) : 0;
    if (ev0 != 0 && ev1 == 0) { /* dropped, or the end event failed */
        (void)b->event_destroy(m->device, ev0);
        ev0 = 0;
    }
    if (!keep) {
        return 0;
    }
    bool memory = (prof_flags & PROF_MEMORY) != 0;
    int64_t cpu_delta = memory ? ct_cpu_allocated_bytes - m->cpu0 : 0;
    int64_t cuda_delta = memory && m->device >= 0 ? cuda_allocated(b, m->device) - m->cuda0 : 0;
    PyObject *event = Py_BuildValue("(OLLOLLiKKk)", name, (long long)m->t0, (long long)t1,
                                    shapes != NULL ? shapes : Py_None, (long long)cpu_delta, (long long)cuda_delta,
                                    ev0 != 0 ? m->device : -1, (unsigned long long)ev0, (unsigned long long)ev1,
                                    PyThread_get_thread_ident());
    int rc = event != NULL ? PyList_Append(prof_events, event) : -1;
    Py_XDECREF(event);
    return rc;
}

void ct_profiler_cancel(const CtProfilerMark *m) { (void)profiler_end(m, NULL, NULL, false); }

int ct_profiler_end_node(const CtProfilerMark *m, PyObject *node)
{
    PyObject *name = PyUnicode_FromFormat("autograd::engine::evaluate_function: %s", _PyType_Name(Py_TYPE(node)));
    int rc = name != NULL ? profiler_end(m, name, NULL, true) : -1;
    Py_XDECREF(name);
    return rc;
}

PyObject *ct_profiler_call(const char *op, PyObject *(*call)(void *ctx), void *ctx, PyObject *const *args,
                           Py_ssize_t nargs, PyObject *kwnames)
{
    if (prof_events == NULL && prof_push == NULL) {
        return call(ctx);
    }
    Py_ssize_t nall = nargs + (kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *out = NULL, *shapes = NULL, *name = NULL;
    if (prof_push != NULL) {
        PyObject *r = PyObject_CallFunction(prof_push, "s", op);
        if (r == NULL) {
            return NULL;
        }
        Py_DECREF(r);
    }
    CtProfilerMark m;
    ct_profiler_begin(&m, args, nall);
    out = call(ctx);
    if (prof_pop != NULL) {
        PyObject *r = PyObject_CallNoArgs(prof_pop);
        if (r == NULL) {
            Py_CLEAR(out);
        }
        Py_XDECREF(r);
    }
    bool keep = out != NULL && prof_events != NULL;
    if (keep && (prof_flags & PROF_SHAPES) && (shapes = input_shapes(args, nall)) == NULL) {
        keep = false;
        Py_CLEAR(out);
    }
    if (keep && (name = PyUnicode_FromString(op)) == NULL) {
        keep = false;
        Py_CLEAR(out);
    }
    if (profiler_end(&m, name, shapes, keep) < 0) {
        Py_CLEAR(out);
    }
    Py_XDECREF(name);
    Py_XDECREF(shapes);
    return out;
}

static bool is_advanced_key(PyObject *k)
{
    return CtTensor_Check(k) || PyList_Check(k) || PyBool_Check(k);
}

const char *ct_profiler_index_name(PyObject *key, bool assign)
{
    bool advanced = is_advanced_key(key), all_int = PyLong_Check(key) && !PyBool_Check(key);
    if (PyTuple_Check(key)) {
        all_int = PyTuple_GET_SIZE(key) > 0;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++) {
            PyObject *k = PyTuple_GET_ITEM(key, i);
            advanced |= is_advanced_key(k);
            all_int &= PyLong_Check(k) && !PyBool_Check(k);
        }
    }
    if (assign) {
        return advanced ? "index_put_" : "copy_";
    }
    return advanced ? "index" : all_int ? "select" : "slice";
}

/* --- _C functions --------------------------------------------------------------------------- */
/* _profiler_enable(events, flags, push=None, pop=None): ops append to the list `events` (None:
 * nothing kept) until _profiler_disable(); flags: 1 input shapes, 2 memory deltas, 4 CUDA events.
 * push(name) / pop() run around each op. */
static PyObject *py_profiler_enable(PyObject *self, PyObject *args)
{
    PyObject *events, *push = Py_None, *pop = Py_None;
    int flags;
    if (!PyArg_ParseTuple(args, "Oi|OO:_profiler_enable", &events, &flags, &push, &pop)) {
        return NULL;
    }
    if (events != Py_None && !PyList_Check(events)) {
        PyErr_SetString(PyExc_TypeError, "_profiler_enable(): events must be a list or None");
        return NULL;
    }
    if (ct_profiler_on) {
        PyErr_SetString(PyExc_RuntimeError, "Profiler is already enabled on this thread");
        return NULL;
    }
    prof_events = events != Py_None ? Py_NewRef(events) : NULL;
    prof_flags = flags;
    prof_push = push != Py_None ? Py_NewRef(push) : NULL;
    prof_pop = pop != Py_None ? Py_NewRef(pop) : NULL;
    ct_profiler_on = true;
    Py_RETURN_NONE;
}

static PyObject *py_profiler_disable(PyObject *self, PyObject *unused)
{
    ct_profiler_on = false;
    Py_CLEAR(prof_events);
    Py_CLEAR(prof_push);
    Py_CLEAR(prof_pop);
    Py_RETURN_NONE;
}

static PyObject *py_profiler_enabled(PyObject *self, PyObject *unused) { return PyBool_FromLong(ct_profiler_on); }

static PyObject *py_profiler_clock_ns(PyObject *self, PyObject *unused)
{
    return PyLong_FromLongLong((long long)clock_ns());
}

static PyObject *py_cpu_allocated_bytes(PyObject *self, PyObject *unused)
{
    return PyLong_FromLongLong((long long)ct_cpu_allocated_bytes);
}

PyMethodDef ct_profiler_tensor_methods[] = {{NULL}};
PyType_Slot ct_profiler_tensor_slots[] = {{0, NULL}};
PyMethodDef ct_profiler_module_methods[] = {
    {"_profiler_enable", py_profiler_enable, METH_VARARGS, "starts recording ops into a list"},
    {"_profiler_disable", py_profiler_disable, METH_NOARGS, "stops recording ops"},
    {"_profiler_enabled", py_profiler_enabled, METH_NOARGS, "True while ops are recorded"},
    {"_profiler_clock_ns", py_profiler_clock_ns, METH_NOARGS, "the profiler's clock (CLOCK_MONOTONIC, ns)"},
    {"_cpu_allocated_bytes", py_cpu_allocated_bytes, METH_NOARGS, "bytes held by live CPU allocations"},
    {NULL},
};
