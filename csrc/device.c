/* device.c: the ctorch.device Python type, device-argument parsing, the CPU vtable and the
 * lookup of a device's vtable (the CUDA one comes from the lazily loaded backend). */
#include "device.h"
#include "cuda_loader.h"
#include "dtype.h"
#include "elementwise.h"
#include "reduce.h"
#include "index.h"
#include "random.h"
#include "linalg.h"
#include "nn.h"
#include "optim.h"
#include "profiler.h"
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

typedef struct {
    PyObject_HEAD
    CtDeviceType type;
    int index; /* -1: no index given ('cuda' or 'cpu') */
} CtDeviceObject;

static PyTypeObject *CtDeviceObj_Type;
int ct_cuda_current_device = 0;

/* --- the CPU vtable ------------------------------------------------------------------------ */
/* Small-block cache. posix_memalign with 64-byte alignment costs several hundred instructions
 * a call (glibc carves an aligned chunk out of a larger one and frees the rest), more than the
 * rest of a small op's host work. Freed blocks up to CPU_CACHE_MAX bytes wait on one list per
 * 64-byte size class (a block's first word links its list), at most CPU_CACHE_PER_CLASS per class
 * and CPU_CACHE_BYTES in all, and serve the next request of the same rounded size. A flag guards
 * the lists; a caller that finds it taken uses the system allocator instead of waiting, so a
 * child forked while another thread held it just never uses the cache. Every caller passes free
 * the nbytes it allocated (the storage's), which names the class. Under AddressSanitizer there is
 * no cache, so that every use after free is still caught. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CT_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CT_ASAN 1
#endif
#ifdef CT_ASAN
#define CPU_CACHE_MAX 0
#else
#define CPU_CACHE_MAX ((size_t)32 << 10)
#endif
#define CPU_CACHE_CLASSES (CPU_CACHE_MAX / 64 + 1) /* + 1: no empty array under ASan */
#define CPU_CACHE_PER_CLASS 32
#define CPU_CACHE_BYTES ((size_t)4 << 20)

static struct {
    char busy;
    size_t bytes;
    void *head[CPU_CACHE_CLASSES];
    unsigned count[CPU_CACHE_CLASSES];
} cpu_cache;

/* A block of n bytes (a multiple of 64) from the cache, or NULL. */
static void *cpu_cache_take(size_t n)
{
    size_t c = n / 64 - 1; /* n = 0 wraps around: refused */
    if (c >= CPU_CACHE_MAX / 64 || __atomic_test_and_set(&cpu_cache.busy, __ATOMIC_ACQUIRE)) {
        return NULL;
    }
    void *p = cpu_cache.head[c];
    if (p != NULL) {
        cpu_cache.head[c] = *(void **)p;
        cpu_cache.count[c]--;
        cpu_cache.bytes -= n;
    }
    __atomic_clear(&cpu_cache.busy, __ATOMIC_RELEASE);
    return p;
}

/* Keeps block p of n bytes if there is room; false if the caller must free it. */
static bool cpu_cache_put(void *p, size_t n)
{
    size_t c = n / 64 - 1; /* n = 0 wraps around: refused */
    if (c >= CPU_CACHE_MAX / 64 || __atomic_test_and_set(&cpu_cache.busy, __ATOMIC_ACQUIRE)) {
        return false;
    }
    bool kept = cpu_cache.count[c] < CPU_CACHE_PER_CLASS && cpu_cache.bytes + n <= CPU_CACHE_BYTES;
    if (kept) {
        *(void **)p = cpu_cache.head[c];
        cpu_cache.head[c] = p;
        cpu_cache.count[c]++;
        cpu_cache.bytes += n;
    }
    __atomic_clear(&cpu_cache.busy, __ATOMIC_RELEASE);
    return kept;
}

/* Returns every cached block to the system (before retrying a failed allocation). */
static void cpu_cache_release(void)
{
    if (CPU_CACHE_MAX == 0 || __atomic_test_and_set(&cpu_cache.busy, __ATOMIC_ACQUIRE)) {
        return;
    }
    for (size_t c = 0; c < CPU_CACHE_CLASSES; c++) {
        while (cpu_cache.head[c] != NULL) {
            void *p = cpu_cache.head[c];
            cpu_cache.head[c] = *(void **)p;
            free(p);
        }
        cpu_cache.count[c] = 0;
    }
    cpu_cache.bytes = 0;
    __atomic_clear(&cpu_cache.busy, __ATOMIC_RELEASE);
}

/* nbytes rounded up to the 64-byte multiple actually allocated (64 for 0), or 0 on overflow */
static size_t cpu_block_size(size_t nbytes)
{
    size_t n = (nbytes + 63) & ~(size_t)63;
    return n < nbytes ? 0 : n ? n : 64;
}

static void *cpu_alloc(size_t nbytes, CtDevice device)
{
    /* 64-byte alignment for vector loads; at least one byte so that the pointer is unique. */
    size_t n = cpu_block_size(nbytes);
    void *p = n != 0 ? cpu_cache_take(n) : NULL;
    if (p == NULL && n != 0 && posix_memalign(&p, 64, n) != 0) {
        cpu_cache_release();
        if (posix_memalign(&p, 64, n) != 0) {
            p = NULL;
        }
    }
    if (p == NULL) {
        PyErr_Format(PyExc_RuntimeError,
                     "[enforce fail at alloc_cpu.cpp] . DefaultCPUAllocator: can't allocate memory: you tried to "
                     "allocate %zu bytes.",
                     nbytes);
        return NULL;
    }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* Large buffers ask for transparent huge pages (as NumPy does): streaming kernels then
     * miss the TLB far less. Only the whole 4 KiB pages inside the buffer are advised. */
    if (n >= ((size_t)4 << 20)) {
        uintptr_t begin = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
        uintptr_t end = ((uintptr_t)p + n) & ~(uintptr_t)4095;
        madvise((void *)begin, end - begin, MADV_HUGEPAGE);
    }
#endif
    /* the profiler's memory counter (atomic: the thread pool's workers may allocate) */
    __atomic_fetch_add(&ct_cpu_allocated_bytes, (int64_t)nbytes, __ATOMIC_RELAXED);
    return p;
}
static void cpu_free(void *ptr, size_t nbytes, CtDevice device)
{
    __atomic_fetch_sub(&ct_cpu_allocated_bytes, (int64_t)nbytes, __ATOMIC_RELAXED);
    if (!cpu_cache_put(ptr, cpu_block_size(nbytes))) {
        free(ptr);
    }
}
static int cpu_copy(void *dst, const void *src, size_t nbytes, CtDevice device)
{
    if (nbytes) {
        memmove(dst, src, nbytes);
    }
    return 0;
}
static int cpu_memset(void *dst, int value, size_t nbytes, CtDevice device)
{
    memset(dst, value, nbytes);
    return 0;
}


const CtDeviceOps ct_cpu_ops = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_h2d = cpu_copy,
    .copy_d2h = cpu_copy,
    .copy_d2d = cpu_copy,
    .memset = cpu_memset,
    .elementwise = &ct_cpu_elementwise_kernels,
    .reduce = &ct_cpu_reduce_kernels,
    .index = &ct_cpu_index_kernels,
    .random = &ct_cpu_random_kernels,
    .blas = &ct_cpu_blas_kernels,
    .nn = &ct_cpu_nn_kernels,
    .optim = &ct_cpu_optim_kernels,
};

const CtDeviceOps *ct_device_ops(CtDevice d)
{
    if (d.type == CT_DEV_CPU) {
        return &ct_cpu_ops;
    }
    return ct_cuda_get_ops(d.index);
}

/* --- parsing ------------------------------------------------------------------------------- */
void ct_device_str(CtDevice d, char *buf, size_t n)
{
    if (d.type == CT_DEV_CPU) {
        snprintf(buf, n, "cpu");
    } else if (d.index < 0) {
        snprintf(buf, n, "cuda");
    } else {
        snprintf(buf, n, "cuda:%d", d.index);
    }
}

/* Parses "cpu", "cuda", "cuda:N" into type and index (-1 when absent). */
static int parse_device_string(const char *s, CtDeviceType *type, int *index)
{
    const char *colon = strchr(s, ':');
    size_t tlen = colon ? (size_t)(colon - s) : strlen(s);
    if (tlen == 3 && strncmp(s, "cpu", 3) == 0) {
        *type = CT_DEV_CPU;
    } else if (tlen == 4 && strncmp(s, "cuda", 4) == 0) {
        *type = CT_DEV_CUDA;
    } else {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected one of cpu, cuda device type at start of device string: %s", s);
        return -1;
    }
    *index = -1;
    if (colon) {
        const char *p = colon + 1;
        if (*p == '\0' || strlen(p) > 9) {
            PyErr_Format(PyExc_RuntimeError, "Invalid device string: '%s'", s);
            return -1;
        }
        for (const char *q = p; *q; q++) {
            if (*q < '0' || *q > '9') {
                PyErr_Format(PyExc_RuntimeError, "Invalid device string: '%s'", s);
                return -1;
            }
        }
        if (p[0] == '0' && p[1] != '\0') {
            PyErr_Format(PyExc_RuntimeError, "Invalid device string: '%s'", s);
            return -1;
        }
        *index = atoi(p);
    }
    if (*type == CT_DEV_CPU && *index > 0) {
        PyErr_Format(PyExc_RuntimeError, "CPU device index must be -1 or zero, got %d", *index);
        return -1;
    }
    if (*type == CT_DEV_CPU) {
        *index = -1;
    }
    return 0;
}

static PyObject *device_new_object(CtDeviceType type, int index)
{
    CtDeviceObject *o = PyObject_New(CtDeviceObject, CtDeviceObj_Type);
    if (o == NULL) {
        return NULL;
    }
    o->type = type;
    o->index = index;
    return (PyObject *)o;
}

PyObject *ct_device_object(CtDevice d) { return device_new_object(d.type, d.index); }

int ct_device_from_object(PyObject *obj, CtDevice *out)
{
    CtDeviceType type;
    int index;
    if (Py_IS_TYPE(obj, CtDeviceObj_Type)) {
        type = ((CtDeviceObject *)obj)->type;
        index = ((CtDeviceObject *)obj)->index;
    } else if (PyUnicode_Check(obj)) {
        const char *s = PyUnicode_AsUTF8(obj);
        if (s == NULL || parse_device_string(s, &type, &index) < 0) {
            return -1;
        }
    } else if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        long v = PyLong_AsLong(obj);
        if (v == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (v < 0) {
            PyErr_SetString(PyExc_RuntimeError, "Device index must not be negative");
            return -1;
        }
        type = CT_DEV_CUDA;
        index = (int)v;
    } else {
        PyErr_Format(PyExc_TypeError, "Expected a torch.device, a string or an int for device, but got %s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (type == CT_DEV_CUDA && index < 0) {
        index = ct_cuda_current_device;
    }
    out->type = type;
    out->index = type == CT_DEV_CPU ? -1 : index;
    return 0;
}

int ct_device_converter(PyObject *obj, void *out)
{
    if (obj == Py_None) {
        return 1;
    }
    return ct_device_from_object(obj, (CtDevice *)out) == 0 ? 1 : 0;
}

/* --- the default device: torch.set_default_device and `with torch.device(...)` --------------- */
/* Per thread, as PyTorch's (a thread-local context plus the thread's mode stack). The index stays
 * -1 for a bare 'cuda', which follows torch.cuda.set_device. */
static _Thread_local bool default_device_set;
static _Thread_local CtDevice default_device;
bool ct_legacy_default_cuda;

bool ct_default_device(CtDevice *out)
{
    if (default_device_set) {
        *out = default_device;
        if (out->type == CT_DEV_CUDA && out->index < 0) {
            out->index = ct_cuda_current_device;
        }
        return true;
    }
    *out = ct_legacy_default_cuda ? (CtDevice){CT_DEV_CUDA, ct_cuda_current_device} : ct_cpu();
    return false;
}

/* The default in force as a device object with its raw index, or None: new reference. */
static PyObject *default_device_state(void)
{
    return default_device_set ? device_new_object(default_device.type, default_device.index) : Py_NewRef(Py_None);
}

/* Puts `state` (None, or anything torch.device() accepts) in force. 0 or -1. */
static int set_default_device_state(PyObject *state)
{
    if (state == Py_None) {
        default_device_set = false;
        return 0;
    }
    PyObject *d = PyObject_CallOneArg((PyObject *)CtDeviceObj_Type, state); /* torch.device()'s errors */
    if (d == NULL) {
        return -1;
    }
    default_device.type = ((CtDeviceObject *)d)->type;
    default_device.index = ((CtDeviceObject *)d)->index;
    default_device_set = true;
    Py_DECREF(d);
    return 0;
}

/* set_default_device(device): device (torch.device, str, int) or None to clear. */
static PyObject *py_set_default_device(PyObject *self, PyObject *device)
{
    return set_default_device_state(device) < 0 ? NULL : Py_NewRef(Py_None);
}

/* get_default_device(): with the index of the current device for a bare 'cuda' (which needs CUDA). */
static PyObject *py_get_default_device(PyObject *self, PyObject *unused)
{
    CtDevice d;
    if (!ct_default_device(&d)) {
        return ct_device_object(ct_cpu());
    }
    if (d.type == CT_DEV_CUDA && default_device.index < 0 && ct_device_ops(d) == NULL) {
        return NULL;
    }
    return ct_device_object(d);
}

/* The thread's stack of defaults saved by `with torch.device(...)` (borrowed), created on first use. */
static PyObject *device_context_stack(void)
{
    PyObject *dict = PyThreadState_GetDict();
    if (dict == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "torch.device: no thread state");
        return NULL;
    }
    PyObject *stack = PyDict_GetItemString(dict, "ctorch.device_context_stack");
    if (stack != NULL) {
        return stack;
    }
    stack = PyList_New(0);
    if (stack == NULL || PyDict_SetItemString(dict, "ctorch.device_context_stack", stack) < 0) {
        Py_XDECREF(stack);
        return NULL;
    }
    Py_DECREF(stack); /* the thread's dict keeps it */
    return stack;
}

/* with torch.device(d): d is the default device inside the block, the previous one after it. */
static PyObject *device_enter(PyObject *self, PyObject *unused)
{
    PyObject *stack = device_context_stack();
    PyObject *saved = stack != NULL ? default_device_state() : NULL;
    if (saved == NULL) {
        return NULL;
    }
    int rc = PyList_Append(stack, saved);
    Py_DECREF(saved);
    if (rc < 0 || set_default_device_state(self) < 0) {
        return NULL;
    }
    return Py_NewRef(self);
}

static PyObject *device_exit(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *stack = device_context_stack();
    if (stack == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(stack);
    if (n == 0) {
        PyErr_SetString(PyExc_RuntimeError, "trying to pop from empty mode stack");
        return NULL;
    }
    PyObject *saved = Py_NewRef(PyList_GET_ITEM(stack, n - 1));
    int rc = PyList_SetSlice(stack, n - 1, n, NULL) < 0 ? -1 : set_default_device_state(saved);
    Py_DECREF(saved);
    return rc < 0 ? NULL : Py_NewRef(Py_None);
}

static PyMethodDef device_module_methods[] = {
    {"set_default_device", py_set_default_device, METH_O,
     "set_default_device(device): the device factories create on when device= is not given (None: the CPU)"},
    {"get_default_device", py_get_default_device, METH_NOARGS, "get_default_device() -> torch.device"},
    {NULL},
};

/* --- the ctorch.device type ---------------------------------------------------------------- */
static PyObject *device_tp_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"type", "index", NULL};
    PyObject *spec, *index_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:device", kwlist, &spec, &index_obj)) {
        return NULL;
    }
    if (Py_IS_TYPE(spec, CtDeviceObj_Type) && index_obj == Py_None) {
        return Py_NewRef(spec);
    }
    CtDeviceType dtype;
    int index = -1;
    if (PyUnicode_Check(spec)) {
        const char *s = PyUnicode_AsUTF8(spec);
        if (s == NULL || parse_device_string(s, &dtype, &index) < 0) {
            return NULL;
        }
        if (index_obj != Py_None) {
            if (strchr(s, ':') != NULL) {
                PyErr_Format(PyExc_RuntimeError,
                             "type (string) must not include an index because index was passed explicitly: %s", s);
                return NULL;
            }
            long v = PyLong_AsLong(index_obj);
            if (v == -1 && PyErr_Occurred()) {
                return NULL;
            }
            if (v < 0) {
                PyErr_SetString(PyExc_RuntimeError, "Device index must not be negative");
                return NULL;
            }
            if (dtype == CT_DEV_CPU && v != 0) {
                PyErr_Format(PyExc_RuntimeError, "CPU device index must be -1 or zero, got %ld", v);
                return NULL;
            }
            index = dtype == CT_DEV_CPU ? -1 : (int)v;
        }
    } else if (PyLong_Check(spec) && index_obj == Py_None) {
        long v = PyLong_AsLong(spec);
        if (v == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (v < 0) {
            PyErr_SetString(PyExc_RuntimeError, "Device index must not be negative");
            return NULL;
        }
        dtype = CT_DEV_CUDA;
        index = (int)v;
    } else {
        PyErr_Format(PyExc_TypeError, "device() received an invalid combination of arguments - got (%s)",
                     Py_TYPE(spec)->tp_name);
        return NULL;
    }
    return device_new_object(dtype, index);
}

static PyObject *device_repr(PyObject *self)
{
    CtDeviceObject *d = (CtDeviceObject *)self;
    const char *t = d->type == CT_DEV_CPU ? "cpu" : "cuda";
    if (d->index < 0) {
        return PyUnicode_FromFormat("device(type='%s')", t);
    }
    return PyUnicode_FromFormat("device(type='%s', index=%d)", t, d->index);
}

static PyObject *device_str(PyObject *self)
{
    char buf[32];
    CtDevice d = {((CtDeviceObject *)self)->type, ((CtDeviceObject *)self)->index};
    ct_device_str(d, buf, sizeof(buf));
    return PyUnicode_FromString(buf);
}

static PyObject *device_get_type(PyObject *self, void *closure)
{
    return PyUnicode_FromString(((CtDeviceObject *)self)->type == CT_DEV_CPU ? "cpu" : "cuda");
}

static PyObject *device_get_index(PyObject *self, void *closure)
{
    int i = ((CtDeviceObject *)self)->index;
    if (i < 0) {
        Py_RETURN_NONE;
    }
    return PyLong_FromLong(i);
}

static PyObject *device_richcompare(PyObject *a, PyObject *b, int op)
{
    if (!Py_IS_TYPE(b, CtDeviceObj_Type) || (op != Py_EQ && op != Py_NE)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    CtDeviceObject *x = (CtDeviceObject *)a, *y = (CtDeviceObject *)b;
    int eq = x->type == y->type && x->index == y->index;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t device_hash(PyObject *self)
{
    CtDeviceObject *d = (CtDeviceObject *)self;
    Py_hash_t h = (Py_hash_t)d->type * 1000003 + d->index + 2;
    return h == -1 ? -2 : h;
}

static PyObject *device_reduce(PyObject *self, PyObject *unused)
{
    CtDeviceObject *d = (CtDeviceObject *)self;
    PyObject *t = device_get_type(self, NULL);
    if (t == NULL) {
        return NULL;
    }
    PyObject *r = d->index < 0 ? Py_BuildValue("(O(N))", Py_TYPE(self), t)
                               : Py_BuildValue("(O(Ni))", Py_TYPE(self), t, d->index);
    return r;
}

static PyGetSetDef device_getset[] = {
    {"type", device_get_type, NULL, "device type: 'cpu' or 'cuda'", NULL},
    {"index", device_get_index, NULL, "device index or None", NULL},
    {NULL},
};

static PyMethodDef device_methods[] = {
    {"__reduce__", device_reduce, METH_NOARGS, NULL},
    {"__enter__", device_enter, METH_NOARGS, "makes this device the default one for factories"},
    {"__exit__", (PyCFunction)(void (*)(void))device_exit, METH_FASTCALL, "restores the previous default device"},
    {NULL},
};

static PyType_Slot device_slots[] = {
    {Py_tp_new, device_tp_new},
    {Py_tp_repr, device_repr},
    {Py_tp_str, device_str},
    {Py_tp_hash, device_hash},
    {Py_tp_richcompare, device_richcompare},
    {Py_tp_getset, device_getset},
    {Py_tp_methods, device_methods},
    {Py_tp_doc, "device(type, index=None): where a tensor's memory lives ('cpu' or 'cuda:N')."},
    {0, NULL},
};

static PyType_Spec device_spec = {
    "ctorch.device", sizeof(CtDeviceObject), 0, Py_TPFLAGS_DEFAULT, device_slots,
};

int ct_device_init(PyObject *module)
{
    CtDeviceObj_Type = (PyTypeObject *)PyType_FromSpec(&device_spec);
    if (CtDeviceObj_Type == NULL) {
        return -1;
    }
    if (PyModule_AddObjectRef(module, "device", (PyObject *)CtDeviceObj_Type) < 0) {
        return -1;
    }
    return PyModule_AddFunctions(module, device_module_methods);
}
