/* cuda_loader.c: the C side of the CUDA backend.
 *
 * ctorch._C links no CUDA library. In a CUDA build (CT_HAVE_CUDA) the first CUDA use dlopen()s
 * ctorch/_C_cuda.so, found next to _C's own file, resolves ct_cuda_backend_init and gets the
 * backend's table of functions (cuda/ctorch_cuda.h). Whatever goes wrong on the way (the .so
 * missing, cuBLAS not found, no driver, a driver older than the toolkit, no GPU, no kernel image
 * for the GPU) is remembered in plain words: is_available() is then False, diagnose() explains,
 * and any CUDA use raises RuntimeError with that reason. In a CPU-only build every CUDA use
 * raises AssertionError "ctorch not compiled with CUDA enabled". Importing ctorch never opens the
 * backend.
 *
 * Also here: the CUDA device vtable (allocation through the caching allocator, copies, the
 * kernel tables of the .so), pinned host memory for CPU storages, Tensor.pin_memory/is_pinned,
 * and the _cuda_* functions of ctorch._C behind the ctorch.cuda package. */
#include "cuda_loader.h"
#include "args.h"
#include "device.h"
#include "dtype.h"
#include "random.h"
#include "storage.h"
#include "tensor.h"
#include <string.h>

#ifdef CT_HAVE_CUDA
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>
#endif

PyObject *ct_OutOfMemoryError;
PyObject *ct_AcceleratorError;
const CtDeviceOps *ct_cuda_ops;

/* PyTorch's default CUDA seed (default_rng_seed_val). */
#define CT_CUDA_DEFAULT_SEED 67280421310721ULL

CtCudaSettings ct_cuda_settings = {
    .float32_matmul_precision = 0,
    .allow_fp16_reduced_precision_reduction = 1,
    .allow_bf16_reduced_precision_reduction = 1,
};

static const char *const precision_names[] = {"highest", "high", "medium"};

static PyObject *not_compiled(void)
{
    PyErr_SetString(PyExc_AssertionError, "ctorch not compiled with CUDA enabled");
    return NULL;
}

#ifdef CT_HAVE_CUDA
/* ==========================================================================================
 * Loading the backend
 * ========================================================================================== */
static const CtCudaBackend *backend;
static bool load_tried;
static bool loaded;            /* backend table obtained */
static int load_status;        /* CT_CUDA_OK once the backend is loaded and sees >= 1 device */
static const char *load_kind;  /* for diagnose(): "missing", "cublas", "dlopen", "symbol", "abi",
                                  "no_driver", "driver_too_old", "no_device", "init_error" */
static char load_reason[4096]; /* why CUDA cannot be used, in plain words */
static char backend_path[PATH_MAX];
static int num_devices;
static CtCudaDeviceProps props[CT_CUDA_MAX_DEVICES];
static signed char device_state[CT_CUDA_MAX_DEVICES]; /* 1 usable, -1 no kernel image, -2 unreadable */
static bool device_ready[CT_CUDA_MAX_DEVICES];        /* returned once by the slow path: fast path */
static bool initialized;

static PyObject *status_exception(int status)
{
    switch (status) {
    case CT_CUDA_OUT_OF_MEMORY:
        return ct_OutOfMemoryError;
    case CT_CUDA_VALUE_ERROR:
        return PyExc_ValueError;
    case CT_CUDA_TYPE_ERROR:
        return PyExc_TypeError;
    case CT_CUDA_INDEX_ERROR:
        return PyExc_IndexError;
    case CT_CUDA_NOT_IMPLEMENTED:
        return PyExc_NotImplementedError;
    case CT_CUDA_ERROR:
        return ct_AcceleratorError;
    default:
        return PyExc_RuntimeError;
    }
}

static int host_raise(int status, const char *message)
{
    PyErr_SetString(status_exception(status), message);
    return -1;
}

static void *host_empty(int ndim, const int64_t *sizes, int dtype, int device, void **data)
{
    CtDevice d = {CT_DEV_CUDA, device};
    CtTensorObject *t = ct_empty(ndim, sizes, (CtDType)dtype, d);
    if (t != NULL) {
        *data = ct_data(t);
    }
    return t;
}

static void host_release(void *tensor) { Py_XDECREF((PyObject *)tensor); }

static int host_warn(const char *message)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    int r = PyErr_WarnEx(PyExc_UserWarning, message, 1);
    if (r < 0) {
        PyErr_Clear();
    }
    PyGILState_Release(gil);
    return r;
}

static const CtCudaHost host = {
    .abi_version = CT_CUDA_ABI_VERSION,
    .raise = host_raise,
    .settings = &ct_cuda_settings,
    .empty = host_empty,
    .release = host_release,
    .warn = host_warn,
};

/* Raises the backend's last error for status; returns -1. */
static int raise_status(int status) { return host_raise(status, backend->last_error()); }

static bool find_backend_path(void)
{
    const char *env = getenv("CTORCH_CUDA_BACKEND"); /* for tests of the failure paths */
    if (env != NULL && env[0] != '\0') {
        snprintf(backend_path, sizeof(backend_path), "%s", env);
        return true;
    }
    Dl_info info;
    if (dladdr((void *)&ct_cuda_get_ops, &info) == 0 || info.dli_fname == NULL) {
        return false;
    }
    snprintf(backend_path, sizeof(backend_path), "%s", info.dli_fname);
    char *slash = strrchr(backend_path, '/');
    size_t dir_len = slash ? (size_t)(slash - backend_path) + 1 : 0;
    snprintf(backend_path + dir_len, sizeof(backend_path) - dir_len, "_C_cuda.so");
    return true;
}

#ifndef CT_CUDA_MAJOR
#define CT_CUDA_MAJOR 13
#endif
#define CT_STR2(x) #x
#define CT_STR(x) CT_STR2(x)

/* Opens cuBLAS from the usual places when the dynamic linker alone did not find it (the
 * backend's RPATH points at the build machine's toolkit): $CUDA_HOME, /usr/local/cuda, and the
 * pip wheels (site-packages/nvidia/...). True when one was opened. */
static bool preload_cublas(void)
{
    const char *names[] = {"libcublasLt.so." CT_STR(CT_CUDA_MAJOR), "libcublas.so." CT_STR(CT_CUDA_MAJOR)};
    char dirs[16][PATH_MAX];
    int ndirs = 0;
    const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    for (int i = 0; i < 3 && ndirs < 16; i++) {
        if (homes[i] != NULL && homes[i][0] != '\0') {
            snprintf(dirs[ndirs++], PATH_MAX, "%s/lib64", homes[i]);
        }
    }
    PyObject *path = PySys_GetObject("path"); /* borrowed */
    for (Py_ssize_t i = 0; path != NULL && PyList_Check(path) && i < PyList_GET_SIZE(path) && ndirs < 14; i++) {
        PyObject *item = PyList_GET_ITEM(path, i);
        const char *p = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
        if (p == NULL) {
            PyErr_Clear();
            continue;
        }
        if (strstr(p, "site-packages") == NULL && strstr(p, "dist-packages") == NULL) {
            continue;
        }
        snprintf(dirs[ndirs++], PATH_MAX, "%s/nvidia/cublas/lib", p);
        snprintf(dirs[ndirs++], PATH_MAX, "%s/nvidia/cu" CT_STR(CT_CUDA_MAJOR) "/lib", p);
    }
    for (int d = 0; d < ndirs; d++) {
        char file[PATH_MAX + 64];
        snprintf(file, sizeof(file), "%.4000s/%.60s", dirs[d], names[1]);
        if (access(file, R_OK) != 0) {
            continue;
        }
        for (int n = 0; n < 2; n++) {
            snprintf(file, sizeof(file), "%.4000s/%.60s", dirs[d], names[n]);
            if (dlopen(file, RTLD_NOW | RTLD_GLOBAL) == NULL && n == 1) {
                return false;
            }
        }
        return true;
    }
    return false;
}

/* Compute capability major.minor against the compiled SASS list and PTX target: SASS for
 * sm_XY runs on X.Z for Z >= Y; PTX for compute_P is JIT-compiled for anything >= P. */
static bool arch_supported(int major, int minor)
{
    const char *p = backend->arch_list;
    int cc = major * 10 + minor;
    while (p != NULL && *p) {
        char *end;
        long a = strtol(p, &end, 10);
        if (end == p) {
            break;
        }
        bool specific = *end == 'a' || *end == 'f'; /* sm_90a: exactly that GPU */
        if (specific ? a == cc : (a / 10 == major && a % 10 <= minor)) {
            return true;
        }
        while (*end && *end != ';') {
            end++;
        }
        p = *end ? end + 1 : end;
    }
    long ptx = backend->ptx_arch[0] ? strtol(backend->ptx_arch, NULL, 10) : 0;
    return ptx > 0 && ptx <= cc;
}

/* "sm_75, sm_80 and sm_90 (and PTX for compute_90)" */
static void format_arch_list(char *buf, size_t n)
{
    size_t pos = 0;
    char list[256];
    snprintf(list, sizeof(list), "%s", backend->arch_list);
    int count = 0;
    for (char *t = list; *t; t++) {
        count += *t == ';';
    }
    count++;
    int i = 0;
    for (char *tok = strtok(list, ";"); tok != NULL && pos < n; tok = strtok(NULL, ";"), i++) {
        const char *sep = i == 0 ? "" : (i == count - 1 ? " and " : ", ");
        pos += snprintf(buf + pos, n - pos, "%ssm_%s", sep, tok);
    }
    if (backend->ptx_arch[0] && pos < n) {
        snprintf(buf + pos, n - pos, " (and PTX for compute_%s)", backend->ptx_arch);
    }
}

static void device_reason(int index, char *buf, size_t n)
{
    if (device_state[index] == -2) {
        snprintf(buf, n, "cuda:%d could not be queried: %s", index, props[index].name);
        return;
    }
    char archs[512];
    format_arch_list(archs, sizeof(archs));
    snprintf(buf, n,
             "CUDA error: no kernel image is available for execution on the device: cuda:%d (%s) has compute "
             "capability %d.%d, but ctorch was compiled for %s. Rebuild ctorch with CTORCH_CUDA_ARCH=%d%d%s",
             index, props[index].name, props[index].major, props[index].minor, archs, props[index].major,
             props[index].minor,
             CT_CUDA_MAJOR >= 13 && props[index].major * 10 + props[index].minor < 75
                 ? " using a CUDA toolkit older than 13 (CUDA 13 dropped GPUs below compute capability 7.5)."
                 : ".");
}

/* Loads the backend and surveys the devices, once. 0 when CUDA can be used on >= 1 device. */
static int ensure_loaded(void)
{
    if (load_tried) {
        return load_status == CT_CUDA_OK ? 0 : -1;
    }
    load_tried = true;
    load_status = CT_CUDA_ERROR;
    if (!find_backend_path()) {
        load_kind = "missing";
        snprintf(load_reason, sizeof(load_reason),
                 "ctorch's CUDA backend could not be located (dladdr found no file for ctorch._C).");
        return -1;
    }
    if (access(backend_path, F_OK) != 0) {
        load_kind = "missing";
        snprintf(load_reason, sizeof(load_reason),
                 "ctorch's CUDA backend %.2048s is missing: this ctorch was built with CUDA " CT_CUDA_VERSION
                 " but its GPU half was not installed. Reinstall ctorch on a machine with nvcc.",
                 backend_path);
        return -1;
    }
    void *handle = dlopen(backend_path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        char first[2048];
        const char *err = dlerror();
        snprintf(first, sizeof(first), "%s", err ? err : "unknown error");
        if (strstr(first, "libcublas") != NULL && preload_cublas()) {
            handle = dlopen(backend_path, RTLD_NOW | RTLD_LOCAL);
            if (handle == NULL) {
                err = dlerror();
                snprintf(first, sizeof(first), "%s", err ? err : "unknown error");
            }
        }
        if (handle == NULL) {
            if (strstr(first, "libcublas") != NULL) {
                load_kind = "cublas";
                snprintf(load_reason, sizeof(load_reason),
                         "The cuBLAS library of CUDA %d could not be loaded (%s). Install it (the CUDA toolkit, "
                         "or pip install nvidia-cublas) or add the directory holding libcublas.so.%d to "
                         "LD_LIBRARY_PATH.",
                         CT_CUDA_MAJOR, first, CT_CUDA_MAJOR);
            } else {
                load_kind = "dlopen";
                snprintf(load_reason, sizeof(load_reason), "ctorch's CUDA backend could not be loaded: %s", first);
            }
            return -1;
        }
    }
    CtCudaBackendInitFn init = (CtCudaBackendInitFn)dlsym(handle, CT_CUDA_ENTRY_POINT);
    if (init == NULL) {
        load_kind = "symbol";
        snprintf(load_reason, sizeof(load_reason), "%.2048s is not ctorch's CUDA backend (no symbol %s).", backend_path,
                 CT_CUDA_ENTRY_POINT);
        return -1;
    }
    const CtCudaBackend *b = init(&host);
    if (b == NULL || b->abi_version != CT_CUDA_ABI_VERSION || b->struct_size != sizeof(CtCudaBackend)) {
        load_kind = "abi";
        snprintf(load_reason, sizeof(load_reason),
                 "ctorch's CUDA backend %.2048s was built from other sources than ctorch._C (ABI mismatch); rebuild "
                 "ctorch.",
                 backend_path);
        return -1;
    }
    backend = b;
    loaded = true;
    int n = 0;
    int st = b->device_count(&n);
    if (st != CT_CUDA_OK) {
        load_status = st;
        load_kind = st == CT_CUDA_NO_DRIVER        ? "no_driver"
                    : st == CT_CUDA_DRIVER_TOO_OLD ? "driver_too_old"
                    : st == CT_CUDA_NO_DEVICE      ? "no_device"
                                                   : "init_error";
        snprintf(load_reason, sizeof(load_reason), "%s", b->last_error());
        return -1;
    }
    if (n <= 0) {
        load_status = CT_CUDA_NO_DEVICE;
        load_kind = "no_device";
        snprintf(load_reason, sizeof(load_reason), "No CUDA GPUs are available");
        return -1;
    }
    num_devices = n < CT_CUDA_MAX_DEVICES ? n : CT_CUDA_MAX_DEVICES;
    int usable = 0;
    for (int i = 0; i < num_devices; i++) {
        if (b->get_device_properties(i, &props[i]) != CT_CUDA_OK) {
            device_state[i] = -2;
            snprintf(props[i].name, sizeof(props[i].name), "%s", b->last_error());
            continue;
        }
        device_state[i] = arch_supported(props[i].major, props[i].minor) ? 1 : -1;
        usable += device_state[i] == 1;
    }
    load_status = CT_CUDA_OK;
    if (usable == 0) {
        load_kind = "no_kernel_image";
        device_reason(0, load_reason, sizeof(load_reason));
    }
    return 0;
}

/* --- the device vtable -------------------------------------------------------------------------- */
static void *cuda_alloc(size_t nbytes, CtDevice device)
{
    void *ptr = NULL; /* storage.c never asks for 0 bytes: an empty CUDA storage is NULL */
    int st = backend->malloc(device.index, nbytes, &ptr);
    if (st != CT_CUDA_OK) {
        raise_status(st);
        return NULL;
    }
    return ptr;
}

static void cuda_free(void *ptr, size_t nbytes, CtDevice device)
{
    (void)backend->free(device.index, ptr); /* a failure here has no caller to tell */
}

static int cuda_copy(void *dst, const void *src, size_t nbytes, int kind, CtDevice device, int non_blocking)
{
    int st = backend->memcpy(dst, src, nbytes, kind, device.index, non_blocking);
    return st == CT_CUDA_OK ? 0 : raise_status(st);
}
static int cuda_copy_h2d(void *d, const void *s, size_t n, CtDevice dev) { return cuda_copy(d, s, n, CT_CUDA_H2D, dev, 0); }
static int cuda_copy_d2h(void *d, const void *s, size_t n, CtDevice dev) { return cuda_copy(d, s, n, CT_CUDA_D2H, dev, 0); }
static int cuda_copy_d2d(void *d, const void *s, size_t n, CtDevice dev) { return cuda_copy(d, s, n, CT_CUDA_D2D, dev, 0); }
static int cuda_copy_h2d_async(void *d, const void *s, size_t n, CtDevice dev)
{
    return cuda_copy(d, s, n, CT_CUDA_H2D, dev, 1);
}
static int cuda_copy_d2h_async(void *d, const void *s, size_t n, CtDevice dev)
{
    return cuda_copy(d, s, n, CT_CUDA_D2H, dev, 1);
}

static int cuda_memset(void *dst, int value, size_t nbytes, CtDevice device)
{
    int st = backend->memset(dst, value, nbytes, device.index);
    return st == CT_CUDA_OK ? 0 : raise_status(st);
}

int ct_cuda_copy_peer(void *dst, CtDevice dd, const void *src, CtDevice sd, size_t nbytes)
{
    if (ct_cuda_get_ops(dd.index) == NULL || ct_cuda_get_ops(sd.index) == NULL) {
        return -1;
    }
    int st = backend->memcpy_peer(dst, dd.index, src, sd.index, nbytes);
    return st == CT_CUDA_OK ? 0 : raise_status(st);
}

static CtDeviceOps cuda_ops = {
    .name = "cuda",
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy_h2d = cuda_copy_h2d,
    .copy_d2h = cuda_copy_d2h,
    .copy_d2d = cuda_copy_d2d,
    .memset = cuda_memset,
    .copy_h2d_async = cuda_copy_h2d_async,
    .copy_d2h_async = cuda_copy_d2h_async,
};

static const CtDeviceOps *get_ops_slow(int index)
{
    if (ensure_loaded() < 0) {
        PyErr_SetString(PyExc_RuntimeError, load_reason);
        return NULL;
    }
    if (index < 0 || index >= num_devices) {
        PyErr_Format(PyExc_RuntimeError,
                     "CUDA error: invalid device ordinal (cuda:%d was requested, but %d CUDA device%s visible)",
                     index, num_devices, num_devices == 1 ? " is" : "s are");
        return NULL;
    }
    if (device_state[index] != 1) {
        char reason[1024];
        device_reason(index, reason, sizeof(reason));
        PyErr_SetString(PyExc_RuntimeError, reason);
        return NULL;
    }
    if (!initialized) {
        cuda_ops.elementwise = backend->elementwise;
        cuda_ops.reduce = backend->reduce;
        cuda_ops.index = backend->index;
        cuda_ops.blas = backend->blas;
        cuda_ops.random = backend->random;
        cuda_ops.nn = backend->nn;
        cuda_ops.optim = backend->optim;
        ct_cuda_ops = &cuda_ops;
        initialized = true;
    }
    device_ready[index] = true;
    return &cuda_ops;
}

const CtDeviceOps *ct_cuda_get_ops(int index)
{
    if (index >= 0 && index < CT_CUDA_MAX_DEVICES && device_ready[index]) {
        return &cuda_ops;
    }
    return get_ops_slow(index);
}

const CtCudaBackend *ct_cuda_backend(void) { return initialized ? backend : NULL; }

/* --- pinned memory ----------------------------------------------------------------------------- */
static void pinned_free(void *data, size_t nbytes)
{
    (void)backend->host_free(data); /* a failure here has no caller to tell */
}

bool ct_storage_is_pinned(const CtStorageObject *s) { return s->free_fn == pinned_free; }

CtTensorObject *ct_empty_pinned(int ndim, const int64_t *sizes, CtDType dtype)
{
    if (ct_cuda_get_ops(ct_cuda_current_device) == NULL) {
        return NULL;
    }
    int64_t strides[CT_MAX_DIMS];
    int64_t numel = ct_contiguous_strides(ndim, sizes, strides);
    size_t nbytes = (size_t)numel * ct_dtype_info[dtype].itemsize;
    void *ptr = NULL;
    int st = backend->host_malloc(ct_cuda_current_device, nbytes ? nbytes : 1, &ptr);
    if (st != CT_CUDA_OK) {
        raise_status(st);
        return NULL;
    }
    CtStorageObject *s = ct_storage_wrap_owned(ptr, nbytes, ct_cpu(), pinned_free);
    if (s == NULL) {
        (void)backend->host_free(ptr);
        return NULL;
    }
    CtTensorObject *t = ct_tensor_new(s, 0, ndim, sizes, strides, dtype);
    Py_DECREF(s);
    return t;
}

#else /* ----------------------------------------------------------------- CPU-only build */

const CtDeviceOps *ct_cuda_get_ops(int index)
{
    PyErr_SetString(PyExc_AssertionError, "ctorch not compiled with CUDA enabled");
    return NULL;
}

const CtCudaBackend *ct_cuda_backend(void) { return NULL; }

bool ct_storage_is_pinned(const CtStorageObject *s) { return false; }

int ct_cuda_copy_peer(void *dst, CtDevice dd, const void *src, CtDevice sd, size_t nbytes)
{
    not_compiled();
    return -1;
}

CtTensorObject *ct_empty_pinned(int ndim, const int64_t *sizes, CtDType dtype)
{
    return (CtTensorObject *)not_compiled();
}

#endif /* CT_HAVE_CUDA */

/* ==========================================================================================
 * Python functions (ctorch._C._cuda_*), thin wrappers for python/ctorch/cuda
 * ========================================================================================== */

/* Parses a device index argument (an int from ctorch.cuda's _get_device_index). */
static int index_arg(PyObject *obj, int *out)
{
    long v = PyLong_AsLong(obj);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (v < -1 || v >= CT_CUDA_MAX_DEVICES) {
        PyErr_Format(PyExc_RuntimeError, "CUDA error: invalid device ordinal (cuda:%ld)", v);
        return -1;
    }
    *out = v < 0 ? ct_cuda_current_device : (int)v;
    return 0;
}

static int handle_arg(PyObject *obj, uintptr_t *out)
{
    unsigned long long v = PyLong_AsUnsignedLongLong(obj);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        return -1;
    }
    *out = (uintptr_t)v;
    return 0;
}

/* Fills the parsed device index and checks that CUDA can be used on it. */
static int ready_device(PyObject *obj, int *device)
{
    if (index_arg(obj, device) < 0) {
        return -1;
    }
    return ct_cuda_get_ops(*device) == NULL ? -1 : 0;
}

static PyObject *py_cuda_is_built(PyObject *self, PyObject *unused)
{
#ifdef CT_HAVE_CUDA
    Py_RETURN_TRUE;
#else
    Py_RETURN_FALSE;
#endif
}

static PyObject *py_cuda_version(PyObject *self, PyObject *unused)
{
#ifdef CT_HAVE_CUDA
    return PyUnicode_FromString(CT_CUDA_VERSION);
#else
    Py_RETURN_NONE;
#endif
}

static PyObject *py_cuda_is_available(PyObject *self, PyObject *unused)
{
#ifdef CT_HAVE_CUDA
    if (ensure_loaded() < 0) {
        Py_RETURN_FALSE;
    }
    for (int i = 0; i < num_devices; i++) {
        if (device_state[i] == 1) {
            Py_RETURN_TRUE;
        }
    }
#endif
    Py_RETURN_FALSE;
}

static PyObject *py_cuda_device_count(PyObject *self, PyObject *unused)
{
#ifdef CT_HAVE_CUDA
    if (ensure_loaded() == 0) {
        return PyLong_FromLong(num_devices);
    }
#endif
    return PyLong_FromLong(0);
}

static PyObject *py_cuda_is_initialized(PyObject *self, PyObject *unused)
{
#ifdef CT_HAVE_CUDA
    return PyBool_FromLong(initialized);
#else
    Py_RETURN_FALSE;
#endif
}

static PyObject *py_cuda_init(PyObject *self, PyObject *unused)
{
    if (ct_cuda_get_ops(ct_cuda_current_device) == NULL) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_cuda_current_device(PyObject *self, PyObject *unused)
{
    if (ct_cuda_get_ops(ct_cuda_current_device) == NULL) {
        return NULL;
    }
    return PyLong_FromLong(ct_cuda_current_device);
}

static PyObject *py_cuda_set_device(PyObject *self, PyObject *arg)
{
    int device;
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (v < 0) { /* PyTorch: a negative index is a no-op */
        Py_RETURN_NONE;
    }
    if (ready_device(arg, &device) < 0) {
        return NULL;
    }
#ifdef CT_HAVE_CUDA
    int st = backend->set_device(device);
    if (st != CT_CUDA_OK) {
        raise_status(st);
        return NULL;
    }
#endif
    ct_cuda_current_device = device;
    Py_RETURN_NONE;
}

static PyObject *py_cuda_get_arch_list(PyObject *self, PyObject *unused)
{
    PyObject *list = PyList_New(0);
#ifdef CT_HAVE_CUDA
    if (list == NULL || ensure_loaded() < 0) {
        return list;
    }
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", backend->arch_list);
    for (char *tok = strtok(buf, ";"); tok != NULL; tok = strtok(NULL, ";")) {
        PyObject *s = PyUnicode_FromFormat("sm_%s", tok);
        if (s == NULL || PyList_Append(list, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(s);
    }
#endif
    return list;
}

/* Every function below needs a CUDA build; in a CPU-only one the parsing helper raises. */
#ifdef CT_HAVE_CUDA
#define CT_CUDA_CALL(call)        \
    do {                          \
        int st_ = (call);         \
        if (st_ != CT_CUDA_OK) {  \
            raise_status(st_);    \
            return NULL;          \
        }                         \
    } while (0)
/* The same with the GIL released (waits on the GPU). */
#define CT_CUDA_CALL_NOGIL(call)                     \
    do {                                             \
        int st_;                                     \
        PyThreadState *save_ = PyEval_SaveThread();  \
        st_ = (call);                                \
        PyEval_RestoreThread(save_);                 \
        if (st_ != CT_CUDA_OK) {                     \
            raise_status(st_);                       \
            return NULL;                             \
        }                                            \
    } while (0)
#else
#define CT_CUDA_CALL(call) return not_compiled()
#define CT_CUDA_CALL_NOGIL(call) return not_compiled()
#endif

static PyObject *py_cuda_get_device_properties(PyObject *self, PyObject *arg)
{
    int d;
    if (ready_device(arg, &d) < 0) {
        return NULL;
    }
#ifdef CT_HAVE_CUDA
    const CtCudaDeviceProps *p = &props[d];
    return Py_BuildValue("{s:s,s:s,s:K,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:O,s:O,s:i,s:i,s:i}", "name", p->name, "uuid",
                         p->uuid, "total_memory", (unsigned long long)p->total_memory, "major", p->major, "minor",
                         p->minor, "multi_processor_count", p->multi_processor_count,
                         "max_threads_per_multi_processor", p->max_threads_per_multi_processor, "warp_size",
                         p->warp_size, "regs_per_multiprocessor", p->regs_per_multiprocessor, "L2_cache_size",
                         p->l2_cache_size, "is_integrated", p->is_integrated ? Py_True : Py_False,
                         "is_multi_gpu_board", p->is_multi_gpu_board ? Py_True : Py_False, "pci_bus_id",
                         p->pci_bus_id, "pci_device_id", p->pci_device_id, "pci_domain_id", p->pci_domain_id);
#else
    return not_compiled();
#endif
}

static PyObject *py_cuda_synchronize(PyObject *self, PyObject *arg)
{
    int d;
    if (ready_device(arg, &d) < 0) {
        return NULL;
    }
    CT_CUDA_CALL_NOGIL(backend->synchronize(d));
    Py_RETURN_NONE;
}

static PyObject *py_cuda_mem_get_info(PyObject *self, PyObject *arg)
{
    int d;
    if (ready_device(arg, &d) < 0) {
        return NULL;
    }
    size_t free_bytes = 0, total_bytes = 0;
    CT_CUDA_CALL(backend->mem_get_info(d, &free_bytes, &total_bytes));
    return Py_BuildValue("(KK)", (unsigned long long)free_bytes, (unsigned long long)total_bytes);
}

/* --- streams and events --------------------------------------------------------------------- */
static PyObject *py_cuda_stream_priority_range(PyObject *self, PyObject *arg)
{
    int d, least = 0, greatest = 0;
    if (ready_device(arg, &d) < 0) {
        return NULL;
    }
    CT_CUDA_CALL(backend->stream_priority_range(d, &least, &greatest));
    return Py_BuildValue("(ii)", least, greatest);
}

/* _cuda_stream_new(device, priority) -> (handle, priority) */
static PyObject *py_cuda_stream_new(PyObject *self, PyObject *args)
{
    PyObject *dev;
    int priority, d, actual = 0;
    uintptr_t s = 0;
    if (!PyArg_ParseTuple(args, "Oi:_cuda_stream_new", &dev, &priority) || ready_device(dev, &d) < 0) {
        return NULL;
    }
    CT_CUDA_CALL(backend->stream_from_pool(d, priority, &s, &actual));
    return Py_BuildValue("(Ki)", (unsigned long long)s, actual);
}

static PyObject *py_cuda_stream_priority(PyObject *self, PyObject *args)
{
    PyObject *dev, *h;
    int d, priority = 0;
    uintptr_t s;
    if (!PyArg_ParseTuple(args, "OO:_cuda_stream_priority", &dev, &h) || ready_device(dev, &d) < 0 ||
        handle_arg(h, &s) < 0) {
        return NULL;
    }
    CT_CUDA_CALL(backend->stream_priority(d, s, &priority));
    return PyLong_FromLong(priority);
}

static PyObject *py_cuda_current_stream(PyObject *self, PyObject *arg)
{
    int d;
    if (ready_device(arg, &d) < 0) {
        return NULL;
    }
#ifdef CT_HAVE_CUDA
    return PyLong_FromUnsignedLongLong((unsigned long long)backend->current_stream(d));
#else
    return not_compiled();
#endif
}

static PyObject *py_cuda_set_stream(PyObject *self, PyObject *args)
{
    PyObject *dev, *h;
    int d;
    uintptr_t s;
    if (!PyArg_ParseTuple(args, "OO:_cuda_set_stream", &dev, &h) || ready_device(dev, &d) < 0 ||
        handle_arg(h, &s) < 0) {
        return NULL;
    }
#ifdef CT_HAVE_CUDA
    backend->set_current_stream(d, s);
    Py_RETURN_NONE;
#else
    return not_compiled();
#endif
}

static PyObject *py_cuda_stream_query(PyObject *self, PyObject *args)
{
    PyObject *dev, *h;
    int d, done = 0;
    uintptr_t s;
    if (!PyArg_ParseTuple(args, "OO:_cuda_stream_query", &dev, &h) || ready_device(dev, &d) < 0 ||
        handle_arg(h, &s) < 0) {
        return NULL;
    }
    CT_CUDA_CALL(backend->stream_query(d, s, &done));
    return PyBool_FromLong(done);
}

static PyObject *py_cuda_stream_synchronize(PyObject *self, PyObject *args)
{
    PyObject *dev, *h;
    int d;
    uintptr_t s;
    if (!PyArg_ParseTuple(args, "OO:_cuda_stream_synchronize", &dev, &h) || ready_device(dev, &d) < 0 ||
        handle_arg(h, &s) < 0) {
        return NULL;
    }
    CT_CUDA_CALL_NOGIL(backend->stream_synchronize(d, s));
    Py_RETURN_NONE;
}

static PyObject *py_cuda_stream_wait_event(PyObject *self, PyObject *args)
{
    PyObject *dev, *h, *e;
    int d;
    uintptr_t s, ev;
    if (!PyArg_ParseTuple(args, "OOO:_cuda_stream_wait_event", &dev, &h, &e) || ready_device(dev, &d) < 0 ||
        handle_arg(h, &s) < 0 || handle_arg(e, &ev) < 0) {
        return NULL;
    }
    CT_CUDA_CALL(backend->stream_wait_event(d, s, ev));
    Py_RETURN_NONE;
}

static PyObject *py_cuda_event_create(PyObject *self, PyObject *args)
{
    PyObject *dev;
    int d, flags;
    uintptr_t ev = 0;
    if (!PyArg_ParseTuple(args, "Oi:_cuda_event_create", &dev, &flags) || ready_device(dev, &d) < 0) {
        return NULL;
    }
    CT_CUDA_CALL(backend->event_create(d, flags, &ev));
    return PyLong_FromUnsignedLongLong((unsigned long long)ev);
}

/* Called from Event.__del__: never raises. */
static PyObject *py_cuda_event_destroy(PyObject *self, PyObject *args)
{
    int d;
    unsigned long long ev;
    if (!PyArg_ParseTuple(args, "iK:_cuda_event_destroy", &d, &ev)) {
        return NULL;
    }
#ifdef CT_HAVE_CUDA
    if (initialized && d >= 0 && d < num_devices) {
        (void)backend->event_destroy(d, (uintptr_t)ev);
    }
#endif
    Py_RETURN_NONE;
}

static PyObject *py_cuda_event_record(PyObject *self, PyObject *args)
{
    PyObject *dev, *e, *h;
    int d;
    uintptr_t ev, s;
    if (!PyArg_ParseTuple(args, "OOO:_cuda_event_record", &dev, &e, &h) || ready_device(dev, &d) < 0 ||
        handle_arg(e, &ev) < 0 || handle_arg(h, &s) < 0) {
        return NULL;
    }
    CT_CUDA_CALL(backend->event_record(d, ev, s));
    Py_RETURN_NONE;
}

static PyObject *py_cuda_event_query(PyObject *self, PyObject *args)
{
    PyObject *dev, *e;
    int d, done = 0;
    uintptr_t ev;
    if (!PyArg_ParseTuple(args, "OO:_cuda_event_query", &dev, &e) || ready_device(dev, &d) < 0 ||
        handle_arg(e, &ev) < 0) {
        return NULL;
    }
    CT_CUDA_CALL(backend->event_query(d, ev, &done));
    return PyBool_FromLong(done);
}

static PyObject *py_cuda_event_synchronize(PyObject *self, PyObject *args)
{
    PyObject *dev, *e;
    int d;
    uintptr_t ev;
    if (!PyArg_ParseTuple(args, "OO:_cuda_event_synchronize", &dev, &e) || ready_device(dev, &d) < 0 ||
        handle_arg(e, &ev) < 0) {
        return NULL;
    }
    CT_CUDA_CALL_NOGIL(backend->event_synchronize(d, ev));
    Py_RETURN_NONE;
}

static PyObject *py_cuda_event_elapsed_time(PyObject *self, PyObject *args)
{
    PyObject *dev, *a, *b;
    int d;
    uintptr_t start, end;
    float ms = 0.0f;
    if (!PyArg_ParseTuple(args, "OOO:_cuda_event_elapsed_time", &dev, &a, &b) || ready_device(dev, &d) < 0 ||
        handle_arg(a, &start) < 0 || handle_arg(b, &end) < 0) {
        return NULL;
    }
    CT_CUDA_CALL(backend->event_elapsed_time(d, start, end, &ms));
    return PyFloat_FromDouble(ms);
}

/* --- memory ------------------------------------------------------------------------------------ */
#ifdef CT_HAVE_CUDA
static int put_int(PyObject *dict, const char *key, int64_t v)
{
    PyObject *o = PyLong_FromLongLong(v);
    int r = o == NULL ? -1 : PyDict_SetItemString(dict, key, o);
    Py_XDECREF(o);
    return r;
}

static int put_stat(PyObject *dict, const char *prefix, const CtCudaStat *s)
{
    char key[128];
    const char *names[4] = {"current", "peak", "allocated", "freed"};
    const int64_t values[4] = {s->current, s->peak, s->allocated, s->freed};
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof(key), "%s.%s", prefix, names[i]);
        if (put_int(dict, key, values[i]) < 0) {
            return -1;
        }
    }
    return 0;
}
#endif

/* _cuda_memory_stats(device) -> dict with PyTorch's flat keys ({} before CUDA is initialised). */
static PyObject *py_cuda_memory_stats(PyObject *self, PyObject *arg)
{
    int d;
    if (index_arg(arg, &d) < 0) {
        return NULL;
    }
    PyObject *dict = PyDict_New();
#ifdef CT_HAVE_CUDA
    if (dict == NULL || !initialized) {
        return dict;
    }
    if (d >= num_devices) {
        Py_DECREF(dict);
        (void)ct_cuda_get_ops(d); /* raises "invalid device ordinal" */
        return NULL;
    }
    CtCudaMemoryStats s;
    if (backend->memory_stats(d, &s) != CT_CUDA_OK) {
        Py_DECREF(dict);
        raise_status(CT_CUDA_ERROR);
        return NULL;
    }
    struct {
        const char *name;
        const CtCudaStat *stats;
    } families[] = {
        {"allocation", s.allocation},           {"segment", s.segment},
        {"active", s.active},                   {"inactive_split", s.inactive_split},
        {"allocated_bytes", s.allocated_bytes}, {"reserved_bytes", s.reserved_bytes},
        {"active_bytes", s.active_bytes},       {"inactive_split_bytes", s.inactive_split_bytes},
        {"requested_bytes", s.requested_bytes},
    };
    const char *pools[CT_CUDA_STAT_NTYPES] = {"all", "small_pool", "large_pool"};
    char prefix[96];
    for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
        for (int p = 0; p < CT_CUDA_STAT_NTYPES; p++) {
            snprintf(prefix, sizeof(prefix), "%s.%s", families[f].name, pools[p]);
            if (put_stat(dict, prefix, &families[f].stats[p]) < 0) {
                goto error;
            }
        }
    }
    if (put_stat(dict, "oversize_allocations", &s.oversize_allocations) < 0 ||
        put_stat(dict, "oversize_segments", &s.oversize_segments) < 0 ||
        put_int(dict, "num_alloc_retries", s.num_alloc_retries) < 0 || put_int(dict, "num_ooms", s.num_ooms) < 0 ||
        put_int(dict, "num_sync_all_streams", s.num_sync_all_streams) < 0 ||
        put_int(dict, "num_device_alloc", s.num_device_alloc) < 0 ||
        put_int(dict, "num_device_free", s.num_device_free) < 0 ||
        put_int(dict, "max_split_size", s.max_split_size) < 0) {
        goto error;
    }
    return dict;
error:
    Py_DECREF(dict);
    return NULL;
#else
    return dict;
#endif
}

static PyObject *py_cuda_reset_peak_memory_stats(PyObject *self, PyObject *arg)
{
    int d;
    if (index_arg(arg, &d) < 0) {
        return NULL;
    }
#ifdef CT_HAVE_CUDA
    if (initialized) {
        CT_CUDA_CALL(backend->reset_peak_stats(d));
    }
#endif
    Py_RETURN_NONE;
}

static PyObject *py_cuda_reset_accumulated_memory_stats(PyObject *self, PyObject *arg)
{
    int d;
    if (index_arg(arg, &d) < 0) {
        return NULL;
    }
#ifdef CT_HAVE_CUDA
    if (initialized) {
        CT_CUDA_CALL(backend->reset_accumulated_stats(d));
    }
#endif
    Py_RETURN_NONE;
}

static PyObject *py_cuda_empty_cache(PyObject *self, PyObject *unused)
{
#ifdef CT_HAVE_CUDA
    if (initialized) {
        CT_CUDA_CALL(backend->empty_cache());
    }
#endif
    Py_RETURN_NONE;
}

static PyObject *py_cuda_host_empty_cache(PyObject *self, PyObject *unused)
{
#ifdef CT_HAVE_CUDA
    if (initialized) {
        CT_CUDA_CALL(backend->host_empty_cache());
    }
#endif
    Py_RETURN_NONE;
}

/* _cuda_host_memory_stats() -> the pinned cache's statistics with PyTorch's flat keys
 * ("allocated_bytes.peak", "num_host_alloc", ...; {} before CUDA is initialised). */
static PyObject *py_cuda_host_memory_stats(PyObject *self, PyObject *unused)
{
    PyObject *dict = PyDict_New();
#ifdef CT_HAVE_CUDA
    if (dict == NULL || !initialized) {
        return dict;
    }
    CtCudaHostStats s;
    int st = backend->host_stats(&s);
    if (st != CT_CUDA_OK) {
        Py_DECREF(dict);
        raise_status(st);
        return NULL;
    }
    if (put_stat(dict, "allocations", &s.allocations) < 0 || put_stat(dict, "allocated_bytes", &s.allocated_bytes) < 0 ||
        put_stat(dict, "active_requests", &s.active_requests) < 0 ||
        put_stat(dict, "active_bytes", &s.active_bytes) < 0 || put_int(dict, "num_host_alloc", s.num_host_alloc) < 0 ||
        put_int(dict, "num_host_free", s.num_host_free) < 0) {
        Py_CLEAR(dict);
    }
#endif
    return dict;
}

/* _cuda_host_reset_stats(peak): resets the pinned cache's peaks (True) or sums (False) */
static PyObject *py_cuda_host_reset_stats(PyObject *self, PyObject *peak)
{
#ifdef CT_HAVE_CUDA
    if (initialized) {
        CT_CUDA_CALL(PyObject_IsTrue(peak) ? backend->host_reset_peak_stats()
                                           : backend->host_reset_accumulated_stats());
    }
#endif
    Py_RETURN_NONE;
}

/* --- allocator controls and device queries (memory fraction, snapshot, raw blocks, peers) --- */
/* _cuda_set_memory_fraction(fraction, device) */
static PyObject *py_cuda_set_memory_fraction(PyObject *self, PyObject *args)
{
    PyObject *dev;
    double fraction;
    int d;
    if (!PyArg_ParseTuple(args, "dO:_cuda_set_memory_fraction", &fraction, &dev) || ready_device(dev, &d) < 0) {
        return NULL;
    }
    CT_CUDA_CALL(backend->set_memory_fraction(d, fraction));
    Py_RETURN_NONE;
}

static PyObject *py_cuda_get_memory_fraction(PyObject *self, PyObject *arg)
{
    int d;
    double fraction = 1.0;
    if (ready_device(arg, &d) < 0) {
        return NULL;
    }
    CT_CUDA_CALL(backend->get_memory_fraction(d, &fraction));
    return PyFloat_FromDouble(fraction);
}

/* _cuda_memory_snapshot() -> [(device, address, size, requested, stream, small_pool, state (0 free, 1
 * allocated, 2 freed but waiting for record_stream events), segment_head), ...] in segment order ([] before CUDA is initialised). */
static PyObject *py_cuda_memory_snapshot(PyObject *self, PyObject *unused)
{
    PyObject *list = PyList_New(0);
#ifdef CT_HAVE_CUDA
    if (list == NULL || !initialized) {
        return list;
    }
    CtCudaBlockInfo *blocks = NULL;
    size_t n = 0;
    int st = backend->memory_snapshot(&blocks, &n);
    if (st != CT_CUDA_OK) {
        Py_DECREF(list);
        raise_status(st);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const CtCudaBlockInfo *b = &blocks[i];
        PyObject *item = Py_BuildValue("(iKKKKNiN)", b->device, (unsigned long long)b->address,
                                       (unsigned long long)b->size, (unsigned long long)b->requested,
                                       (unsigned long long)b->stream, PyBool_FromLong(b->small_pool), b->allocated,
                                       PyBool_FromLong(b->segment_head));
        if (item == NULL || PyList_Append(list, item) < 0) {
            Py_XDECREF(item);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(item);
    }
    free(blocks);
#endif
    return list;
}

/* _cuda_raw_alloc(nbytes, device) -> address: a block of the caching allocator on the device's
 * current stream (caching_allocator_alloc). */
static PyObject *py_cuda_raw_alloc(PyObject *self, PyObject *args)
{
    PyObject *dev;
    long long nbytes;
    int d;
    if (!PyArg_ParseTuple(args, "LO:_cuda_raw_alloc", &nbytes, &dev) || ready_device(dev, &d) < 0) {
        return NULL;
    }
    if (nbytes < 0) {
        PyErr_Format(PyExc_RuntimeError, "caching_allocator_alloc: size must be non-negative, got %lld", nbytes);
        return NULL;
    }
    void *ptr = NULL;
    CT_CUDA_CALL(backend->malloc(d, (size_t)nbytes, &ptr));
    return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)ptr);
}

/* _cuda_raw_delete(address): frees a block of _cuda_raw_alloc on whichever device owns it. */
static PyObject *py_cuda_raw_delete(PyObject *self, PyObject *arg)
{
    uintptr_t p;
    if (handle_arg(arg, &p) < 0) {
        return NULL;
    }
    if (p == 0) { /* a 0-byte block */
        Py_RETURN_NONE;
    }
#ifdef CT_HAVE_CUDA
    if (!initialized) {
        PyErr_Format(PyExc_RuntimeError, "invalid device pointer: %p", (void *)p);
        return NULL;
    }
    int d = 0;
    CT_CUDA_CALL(backend->pointer_device((const void *)p, &d));
    CT_CUDA_CALL(backend->free(d, (void *)p));
    Py_RETURN_NONE;
#else
    return not_compiled();
#endif
}

static PyObject *py_cuda_can_access_peer(PyObject *self, PyObject *args)
{
    PyObject *dev, *peer_dev;
    int d, peer, can = 0;
    if (!PyArg_ParseTuple(args, "OO:_cuda_can_access_peer", &dev, &peer_dev) || ready_device(dev, &d) < 0 ||
        ready_device(peer_dev, &peer) < 0) {
        return NULL;
    }
    CT_CUDA_CALL(backend->can_access_peer(d, peer, &can));
    return PyBool_FromLong(can);
}

static PyObject *py_cuda_current_blas_handle(PyObject *self, PyObject *unused)
{
    uintptr_t handle = 0;
    if (ct_cuda_get_ops(ct_cuda_current_device) == NULL) {
        return NULL;
    }
    CT_CUDA_CALL(backend->blas_handle(ct_cuda_current_device, &handle));
    return PyLong_FromUnsignedLongLong((unsigned long long)handle);
}

/* _cuda_sync_debug_mode(mode or None) -> the mode (0 default, 1 warn, 2 error), set first if given */
static PyObject *py_cuda_sync_debug_mode(PyObject *self, PyObject *arg)
{
    if (ct_cuda_get_ops(ct_cuda_current_device) == NULL) {
        return NULL;
    }
    if (arg != Py_None) {
        long mode = PyLong_AsLong(arg);
        if (mode == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (mode < 0 || mode > 2) {
            PyErr_SetString(PyExc_RuntimeError, "invalid value of debug_mode, expected one of 0,1,2");
            return NULL;
        }
        ct_cuda_settings.sync_debug_mode = (int)mode;
    }
    return PyLong_FromLong(ct_cuda_settings.sync_debug_mode);
}

/* --- generator seeds (stored without touching the GPU, as PyTorch's lazy seeding) -------------- */
static int seed_arg(PyObject *obj, uint64_t *out)
{
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "manual_seed expected a long, but got %s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow == 0) {
        if (v == -1 && PyErr_Occurred()) {
            return -1;
        }
        *out = (uint64_t)v; /* negative seeds wrap, as in PyTorch */
        return 0;
    }
    unsigned long long u = PyLong_AsUnsignedLongLong(obj);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_SetString(PyExc_RuntimeError, "Overflow when unpacking long");
        return -1;
    }
    *out = u;
    return 0;
}

static PyObject *py_cuda_manual_seed(PyObject *self, PyObject *args)
{
    int d;
    PyObject *seed;
    uint64_t s;
    if (!PyArg_ParseTuple(args, "iO:_cuda_manual_seed", &d, &seed) || seed_arg(seed, &s) < 0) {
        return NULL;
    }
    if (d < 0) {
        d = ct_cuda_current_device;
    }
    if (d >= CT_CUDA_MAX_DEVICES) {
        PyErr_Format(PyExc_RuntimeError, "CUDA error: invalid device ordinal (cuda:%d)", d);
        return NULL;
    }
    ct_cuda_generator_seed(d, s);
    Py_RETURN_NONE;
}

static PyObject *py_cuda_manual_seed_all(PyObject *self, PyObject *seed)
{
    uint64_t s;
    if (seed_arg(seed, &s) < 0) {
        return NULL;
    }
    ct_cuda_generator_seed(-1, s);
    Py_RETURN_NONE;
}

static PyObject *py_cuda_initial_seed(PyObject *self, PyObject *arg)
{
    int d;
    if (index_arg(arg, &d) < 0) {
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(ct_cuda_generator_initial_seed(d));
}

/* --- matmul precision ---------------------------------------------------------------------------- */
PyDoc_STRVAR(set_precision_doc,
             "set_float32_matmul_precision(precision): 'highest' (float32 everywhere, the default), 'high' or "
             "'medium' (TensorFloat-32 allowed in CUDA float32 matmuls).");
static PyObject *py_set_float32_matmul_precision(PyObject *self, PyObject *arg)
{
    const char *s = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (s == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "set_float32_matmul_precision(): argument 'precision' must be str, not %s",
                         Py_TYPE(arg)->tp_name);
        }
        return NULL;
    }
    for (int i = 0; i < 3; i++) {
        if (strcmp(s, precision_names[i]) == 0) {
            ct_cuda_settings.float32_matmul_precision = i;
            Py_RETURN_NONE;
        }
    }
    /* PyTorch warns and leaves the setting alone. */
    if (PyErr_WarnFormat(PyExc_UserWarning, 1,
                         "%s is not one of 'highest', 'high', or 'medium'; the current setFloat32MatmulPrecision "
                         "call has no effect.",
                         s) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_get_float32_matmul_precision(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(precision_names[ct_cuda_settings.float32_matmul_precision]);
}

/* _cuda_matmul_flag(name[, value]) -> the flag (after setting it when value is given). */
static PyObject *py_cuda_matmul_flag(PyObject *self, PyObject *args)
{
    const char *name;
    PyObject *value = NULL;
    if (!PyArg_ParseTuple(args, "s|O:_cuda_matmul_flag", &name, &value)) {
        return NULL;
    }
    int *flag;
    if (strcmp(name, "allow_tf32") == 0) {
        if (value != NULL) {
            int v = PyObject_IsTrue(value);
            if (v < 0) {
                return NULL;
            }
            ct_cuda_settings.float32_matmul_precision = v ? 1 : 0;
        }
        return PyBool_FromLong(ct_cuda_settings.float32_matmul_precision > 0);
    } else if (strcmp(name, "allow_fp16_reduced_precision_reduction") == 0) {
        flag = &ct_cuda_settings.allow_fp16_reduced_precision_reduction;
    } else if (strcmp(name, "allow_bf16_reduced_precision_reduction") == 0) {
        flag = &ct_cuda_settings.allow_bf16_reduced_precision_reduction;
    } else {
        PyErr_Format(PyExc_AttributeError, "Unknown attribute %s", name);
        return NULL;
    }
    if (value != NULL) {
        int v = PyObject_IsTrue(value);
        if (v < 0) {
            return NULL;
        }
        *flag = v;
    }
    return PyBool_FromLong(*flag);
}

/* --- diagnose ------------------------------------------------------------------------------------ */
/* _cuda_diagnostics() -> dict of facts; ctorch.cuda.diagnose() words them. Loads the backend. */
static PyObject *py_cuda_diagnostics(PyObject *self, PyObject *unused)
{
    PyObject *d = PyDict_New();
    if (d == NULL) {
        return NULL;
    }
#ifdef CT_HAVE_CUDA
    (void)ensure_loaded();
    PyObject *devices = PyList_New(0);
    if (devices == NULL) {
        goto error;
    }
    for (int i = 0; i < num_devices; i++) {
        char reason[1024] = "";
        if (device_state[i] != 1) {
            device_reason(i, reason, sizeof(reason));
        }
        PyObject *dev = Py_BuildValue("{s:i,s:s,s:i,s:i,s:K,s:O,s:s}", "index", i, "name", props[i].name, "major",
                                      props[i].major, "minor", props[i].minor, "total_memory",
                                      (unsigned long long)props[i].total_memory, "kernel_image",
                                      device_state[i] == 1 ? Py_True : Py_False, "problem", reason);
        if (dev == NULL || PyList_Append(devices, dev) < 0) {
            Py_XDECREF(dev);
            Py_DECREF(devices);
            goto error;
        }
        Py_DECREF(dev);
    }
    int driver = 0, runtime = 0;
    if (loaded) {
        backend->driver_version(&driver);
        if (backend->runtime_version(&runtime) != CT_CUDA_OK) {
            runtime = backend->runtime_version_built;
        }
    }
    PyObject *r = Py_BuildValue(
        "{s:O,s:s,s:s,s:O,s:O,s:z,s:s,s:i,s:i,s:i,s:z,s:z,s:N}", "built", Py_True, "build_cuda_version",
        CT_CUDA_VERSION, "backend_path", backend_path, "backend_exists",
        access(backend_path, F_OK) == 0 ? Py_True : Py_False, "loaded", loaded ? Py_True : Py_False, "problem_kind",
        load_status == CT_CUDA_OK && load_kind == NULL ? NULL : load_kind, "problem",
        load_status == CT_CUDA_OK && load_kind == NULL ? "" : load_reason, "driver_version", driver,
        "runtime_version", runtime, "built_runtime_version", loaded ? backend->runtime_version_built : 0,
        "arch_list", loaded ? backend->arch_list : NULL, "ptx_arch", loaded ? backend->ptx_arch : NULL, "devices",
        devices);
    if (r == NULL || PyDict_Update(d, r) < 0) {
        Py_XDECREF(r);
        goto error;
    }
    Py_DECREF(r);
    return d;
error:
    Py_DECREF(d);
    return NULL;
#else
    if (PyDict_SetItemString(d, "built", Py_False) < 0) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
#endif
}

/* _cuda_probe_kernel_image(device) -> None when the GPU runs our code, else the error text.
 * Creates the device's context (diagnose() only). */
static PyObject *py_cuda_probe_kernel_image(PyObject *self, PyObject *arg)
{
    int d;
    if (ready_device(arg, &d) < 0) {
        return NULL;
    }
#ifdef CT_HAVE_CUDA
    if (backend->probe_kernel_image(d) != CT_CUDA_OK) {
        return PyUnicode_FromString(backend->last_error());
    }
    Py_RETURN_NONE;
#else
    return not_compiled();
#endif
}

/* ==========================================================================================
 * Tensor methods: pin_memory, is_pinned
 * ========================================================================================== */
static PyObject *tensor_is_pinned(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"device", NULL};
    PyObject *a[1];
    if (ct_parse_args("is_pinned", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    return PyBool_FromLong(ct_storage_is_pinned(CT_TENSOR(self)->storage));
}

static PyObject *tensor_pin_memory(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"device", NULL};
    PyObject *a[1];
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_parse_args("pin_memory", args, nargs, kwnames, names, 0, a) < 0) {
        return NULL;
    }
    if (ct_device_of(t).type != CT_DEV_CPU) {
        PyObject *type = PyObject_CallMethod(self, "type", NULL);
        if (type != NULL) {
            PyErr_Format(PyExc_RuntimeError, "cannot pin '%U' only dense CPU tensors can be pinned", type);
            Py_DECREF(type);
        }
        return NULL;
    }
    if (ct_storage_is_pinned(t->storage)) {
        return Py_NewRef(self);
    }
    CtTensorObject *out = ct_empty_pinned(t->ndim, t->sizes, t->dtype);
    if (out == NULL) {
        return NULL;
    }
    if (ct_copy_(out, t) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return (PyObject *)out;
}

/* Tensor.record_stream(stream): the caching allocator keeps the tensor's block from other streams'
 * allocations, once freed, until the work queued on stream by then is done. */
static PyObject *tensor_record_stream(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"s", NULL};
    PyObject *a[1];
    if (ct_parse_args("record_stream", args, nargs, kwnames, names, 1, a) < 0) {
        return NULL;
    }
    PyObject *handle = PyObject_GetAttrString(a[0], "cuda_stream");
    if (handle == NULL) {
        PyErr_Clear();
        PyErr_SetString(PyExc_RuntimeError, "unknown parameter type");
        return NULL;
    }
    unsigned long long stream = PyLong_AsUnsignedLongLong(handle);
    Py_DECREF(handle);
    if (PyErr_Occurred()) {
        return NULL;
    }
    CtTensorObject *t = CT_TENSOR(self);
    if (ct_device_of(t).type != CT_DEV_CUDA) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "Could not run 'aten::record_stream' with arguments from the 'CPU' backend. This could be "
                        "because the operator doesn't exist for this backend, or was omitted during the "
                        "selective/custom build process (if using custom build).");
        return NULL;
    }
#ifdef CT_HAVE_CUDA
    if (initialized) {
        CT_CUDA_CALL(backend->record_stream(ct_device_of(t).index, t->storage->data, (uintptr_t)stream));
    }
#else
    (void)stream;
#endif
    Py_RETURN_NONE;
}

PyMethodDef ct_cuda_tensor_methods[] = {
    {"record_stream", CT_FASTCALL(tensor_record_stream), CT_METH_FK,
     "record_stream(s): the memory is not reused for another stream's allocation, once freed, before the work "
     "queued on stream s by then is done"},
    {"pin_memory", CT_FASTCALL(tensor_pin_memory), CT_METH_FK,
     "pin_memory(): a copy in page-locked host memory (self when already pinned)"},
    {"is_pinned", CT_FASTCALL(tensor_is_pinned), CT_METH_FK, "True when the tensor's memory is pinned"},
    {NULL},
};

PyMethodDef ct_cuda_module_methods[] = {
    {"set_float32_matmul_precision", py_set_float32_matmul_precision, METH_O, set_precision_doc},
    {"get_float32_matmul_precision", py_get_float32_matmul_precision, METH_NOARGS,
     "get_float32_matmul_precision() -> 'highest', 'high' or 'medium'"},
    {"_cuda_matmul_flag", py_cuda_matmul_flag, METH_VARARGS, "reads (and sets) a CUDA matmul flag"},
    {"_cuda_is_built", py_cuda_is_built, METH_NOARGS, "True in a CUDA build"},
    {"_cuda_version", py_cuda_version, METH_NOARGS, "the CUDA version ctorch was built with, or None"},
    {"_cuda_is_available", py_cuda_is_available, METH_NOARGS, "True when a GPU can be used (never raises)"},
    {"_cuda_device_count", py_cuda_device_count, METH_NOARGS, "number of visible GPUs (0 when unusable)"},
    {"_cuda_is_initialized", py_cuda_is_initialized, METH_NOARGS, "True once CUDA has been used"},
    {"_cuda_init", py_cuda_init, METH_NOARGS, "initialises CUDA or raises why it cannot"},
    {"_cuda_current_device", py_cuda_current_device, METH_NOARGS, "the current device index"},
    {"_cuda_set_device", py_cuda_set_device, METH_O, "makes a device current"},
    {"_cuda_get_arch_list", py_cuda_get_arch_list, METH_NOARGS, "architectures compiled for"},
    {"_cuda_get_device_properties", py_cuda_get_device_properties, METH_O, "a device's properties (dict)"},
    {"_cuda_synchronize", py_cuda_synchronize, METH_O, "waits for all work on a device"},
    {"_cuda_mem_get_info", py_cuda_mem_get_info, METH_O, "(free, total) bytes of a device"},
    {"_cuda_stream_priority_range", py_cuda_stream_priority_range, METH_O, "(least, greatest) priority"},
    {"_cuda_stream_new", py_cuda_stream_new, METH_VARARGS, "a pooled stream: (handle, priority)"},
    {"_cuda_stream_priority", py_cuda_stream_priority, METH_VARARGS, "a stream's priority"},
    {"_cuda_current_stream", py_cuda_current_stream, METH_O, "this thread's current stream on a device"},
    {"_cuda_set_stream", py_cuda_set_stream, METH_VARARGS, "sets this thread's current stream on a device"},
    {"_cuda_stream_query", py_cuda_stream_query, METH_VARARGS, "True when a stream's work is done"},
    {"_cuda_stream_synchronize", py_cuda_stream_synchronize, METH_VARARGS, "waits for a stream"},
    {"_cuda_stream_wait_event", py_cuda_stream_wait_event, METH_VARARGS, "makes a stream wait for an event"},
    {"_cuda_event_create", py_cuda_event_create, METH_VARARGS, "a new event (flags: 1 timing, 2 blocking, 4 ipc)"},
    {"_cuda_event_destroy", py_cuda_event_destroy, METH_VARARGS, "destroys an event (never raises)"},
    {"_cuda_event_record", py_cuda_event_record, METH_VARARGS, "records an event on a stream"},
    {"_cuda_event_query", py_cuda_event_query, METH_VARARGS, "True when an event has completed"},
    {"_cuda_event_synchronize", py_cuda_event_synchronize, METH_VARARGS, "waits for an event"},
    {"_cuda_event_elapsed_time", py_cuda_event_elapsed_time, METH_VARARGS, "milliseconds between two events"},
    {"_cuda_memory_stats", py_cuda_memory_stats, METH_O, "the caching allocator's statistics (flat dict)"},
    {"_cuda_reset_peak_memory_stats", py_cuda_reset_peak_memory_stats, METH_O, "peaks := current values"},
    {"_cuda_reset_accumulated_memory_stats", py_cuda_reset_accumulated_memory_stats, METH_O,
     "zeroes the allocated/freed sums"},
    {"_cuda_empty_cache", py_cuda_empty_cache, METH_NOARGS, "releases unused cached device memory"},
    {"_cuda_host_empty_cache", py_cuda_host_empty_cache, METH_NOARGS, "releases unused cached pinned memory"},
    {"_cuda_host_memory_stats", py_cuda_host_memory_stats, METH_NOARGS, "pinned-memory cache statistics"},
    {"_cuda_host_reset_stats", py_cuda_host_reset_stats, METH_O, "resets the pinned cache's peaks or sums"},
    {"_cuda_set_memory_fraction", py_cuda_set_memory_fraction, METH_VARARGS, "caps a device's reserved memory"},
    {"_cuda_get_memory_fraction", py_cuda_get_memory_fraction, METH_O, "a device's memory fraction (1.0: no cap)"},
    {"_cuda_memory_snapshot", py_cuda_memory_snapshot, METH_NOARGS, "every block of every segment (tuples)"},
    {"_cuda_raw_alloc", py_cuda_raw_alloc, METH_VARARGS, "a caching-allocator block: its address"},
    {"_cuda_raw_delete", py_cuda_raw_delete, METH_O, "frees a block of _cuda_raw_alloc"},
    {"_cuda_can_access_peer", py_cuda_can_access_peer, METH_VARARGS, "True when device can access peer's memory"},
    {"_cuda_current_blas_handle", py_cuda_current_blas_handle, METH_NOARGS, "the cuBLAS handle (int)"},
    {"_cuda_sync_debug_mode", py_cuda_sync_debug_mode, METH_O, "reads (and sets) the sync debug mode"},
    {"_cuda_manual_seed", py_cuda_manual_seed, METH_VARARGS, "seeds one device's generator"},
    {"_cuda_manual_seed_all", py_cuda_manual_seed_all, METH_O, "seeds every device's generator"},
    {"_cuda_initial_seed", py_cuda_initial_seed, METH_O, "a device generator's seed"},
    {"_cuda_diagnostics", py_cuda_diagnostics, METH_NOARGS, "facts for ctorch.cuda.diagnose()"},
    {"_cuda_probe_kernel_image", py_cuda_probe_kernel_image, METH_O, "None when the GPU can run our kernels"},
    {NULL},
};

PyType_Slot ct_cuda_tensor_slots[] = {{0, NULL}};

int ct_cuda_loader_init(PyObject *module)
{
    for (int d = 0; d < CT_CUDA_MAX_DEVICES; d++) {
        ct_cuda_settings.seed[d] = CT_CUDA_DEFAULT_SEED;
    }
    ct_OutOfMemoryError = PyErr_NewExceptionWithDoc(
        "ctorch.OutOfMemoryError", "Raised when the device is out of memory (ctorch.cuda.OutOfMemoryError).",
        PyExc_RuntimeError, NULL);
    ct_AcceleratorError = PyErr_NewExceptionWithDoc("ctorch.AcceleratorError", "Raised when a CUDA call fails.",
                                                    PyExc_RuntimeError, NULL);
    if (ct_OutOfMemoryError == NULL || ct_AcceleratorError == NULL ||
        PyModule_AddObjectRef(module, "OutOfMemoryError", ct_OutOfMemoryError) < 0 ||
        PyModule_AddObjectRef(module, "AcceleratorError", ct_AcceleratorError) < 0) {
        return -1;
    }
    return 0;
}
