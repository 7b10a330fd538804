/* shared_memory.c: CPU storages in shared memory, for Tensor.share_memory_() and torch.multiprocessing.
 *
 * A shared storage borrows its memory from an owner capsule ("ctorch.shm") holding one mapping of a
 * shared-memory object, as PyTorch's two sharing strategies:
 *   file_descriptor: an anonymous memfd; the capsule keeps the fd open so the storage can be sent again
 *     (multiprocessing duplicates it into the receiver, which maps it: _share_fd_cpu_ / _new_shared_fd_cpu).
 *   file_system: a named POSIX shm object; the receiver opens it by name (_share_filename_cpu_ /
 *     _new_shared_filename_cpu). A count of the mappings lives in the segment's header; the last unmapping
 *     unlinks the name. The sender adds one for each message in flight (_shared_incref), which the receiver
 *     drops once it has mapped the segment (_shared_decref), as PyTorch's ref-counted shm allocator.
 * The mapping is MAP_SHARED, so processes forked afterwards see the same memory too. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "device.h"
#include "registry.h"
#include "storage.h"
#include "tensor.h"

#define CT_SHM_CAPSULE "ctorch.shm"
/* The header before the data: the mapping count (file_system), padded to keep the data 64-byte aligned. */
#define CT_SHM_HEADER 64

typedef struct {
    void *base;      /* the whole mapping: header, then data */
    size_t map_bytes;
    size_t data_offset; /* where the data starts: after the header, or 0 for a mapped file */
    int fd;          /* file_descriptor strategy: kept open for re-sharing; -1 otherwise */
    char name[64];   /* file_system strategy: the shm object's name; "" otherwise */
} CtShmSegment;

enum { CT_SHM_FD = 0, CT_SHM_FILENAME = 1 };
static int sharing_strategy = CT_SHM_FD;

static _Atomic int64_t *segment_count(CtShmSegment *seg) { return (_Atomic int64_t *)seg->base; }

static void segment_release(PyObject *capsule)
{
    CtShmSegment *seg = PyCapsule_GetPointer(capsule, CT_SHM_CAPSULE);
    if (seg == NULL) {
        PyErr_Clear();
        return;
    }
    if (seg->name[0] != '\0' && atomic_fetch_sub(segment_count(seg), 1) == 1) {
        shm_unlink(seg->name);
    }
    munmap(seg->base, seg->map_bytes);
    if (seg->fd >= 0) {
        close(seg->fd);
    }
    PyMem_Free(seg);
}

/* Maps nbytes of data (plus the header) of the shm object fd. Takes over fd (closed on failure, and after
 * mapping for a named segment). A new capsule, or NULL with an exception. */
static PyObject *segment_map(int fd, size_t nbytes, const char *name)
{
    size_t map_bytes = CT_SHM_HEADER + nbytes;
    void *base = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        PyErr_Format(PyExc_RuntimeError, "unable to mmap %zu bytes of shared memory: %s (%d)", map_bytes,
                     strerror(errno), errno);
        close(fd);
        return NULL;
    }
    CtShmSegment *seg = PyMem_Malloc(sizeof(CtShmSegment));
    if (seg == NULL) {
        munmap(base, map_bytes);
        close(fd);
        return PyErr_NoMemory();
    }
    seg->base = base;
    seg->map_bytes = map_bytes;
    seg->data_offset = CT_SHM_HEADER;
    seg->fd = fd;
    seg->name[0] = '\0';
    if (name != NULL) {
        snprintf(seg->name, sizeof(seg->name), "%s", name);
        close(fd);
        seg->fd = -1;
        atomic_fetch_add(segment_count(seg), 1);
    }
    PyObject *capsule = PyCapsule_New(seg, CT_SHM_CAPSULE, segment_release);
    if (capsule == NULL) {
        if (seg->name[0] != '\0') {
            atomic_fetch_sub(segment_count(seg), 1);
        }
        munmap(base, map_bytes);
        if (seg->fd >= 0) {
            close(seg->fd);
        }
        PyMem_Free(seg);
    }
    return capsule;
}

static void *segment_data(PyObject *capsule)
{
    CtShmSegment *seg = PyCapsule_GetPointer(capsule, CT_SHM_CAPSULE);
    return (char *)seg->base + seg->data_offset;
}

/* A new zero-filled segment of nbytes for the strategy. New capsule, or NULL with an exception. */
static PyObject *segment_new(size_t nbytes, int strategy)
{
    char name[64] = "";
    int fd;
    if (strategy == CT_SHM_FD) {
        fd = memfd_create("ctorch_shm", MFD_CLOEXEC);
    } else {
        static unsigned counter = 0;
        do {
            snprintf(name, sizeof(name), "/ctorch_%d_%u_%ld", (int)getpid(), counter++, (long)time(NULL));
            fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        } while (fd < 0 && errno == EEXIST);
    }
    if (fd < 0) {
        PyErr_Format(PyExc_RuntimeError, "unable to create a shared memory object: %s (%d)", strerror(errno), errno);
        return NULL;
    }
    if (ftruncate(fd, (off_t)(CT_SHM_HEADER + nbytes)) < 0) {
        PyErr_Format(PyExc_RuntimeError, "unable to resize a shared memory object to %zu bytes: %s (%d)",
                     CT_SHM_HEADER + nbytes, strerror(errno), errno);
        close(fd);
        if (name[0] != '\0') {
            shm_unlink(name);
        }
        return NULL;
    }
    PyObject *capsule = segment_map(fd, nbytes, name[0] != '\0' ? name : NULL);
    if (capsule == NULL && name[0] != '\0') {
        shm_unlink(name);
    }
    return capsule;
}

/* The segment a storage lives in, or NULL (borrowed; no exception). */
static CtShmSegment *storage_segment(CtStorageObject *s)
{
    if (s->owner == NULL || !PyCapsule_IsValid(s->owner, CT_SHM_CAPSULE)) {
        return NULL;
    }
    return PyCapsule_GetPointer(s->owner, CT_SHM_CAPSULE);
}

bool ct_storage_is_shared(CtStorageObject *s)
{
    return s->device.type == CT_DEV_CUDA || storage_segment(s) != NULL;
}

/* Moves a CPU storage into a shared segment of the strategy (its contents copied), unless it already is in
 * one of that kind. Tensors over it keep working: they reach memory through the storage. 0 or -1. */
static int storage_share(CtStorageObject *s, int strategy)
{
    CtShmSegment *seg = storage_segment(s);
    if (s->device.type != CT_DEV_CPU ||
        (seg != NULL && (strategy == CT_SHM_FILENAME ? seg->name[0] != '\0' : seg->fd >= 0))) {
        return 0;
    }
    PyObject *capsule = segment_new(s->nbytes, strategy);
    if (capsule == NULL) {
        return -1;
    }
    void *data = segment_data(capsule);
    if (s->nbytes > 0) {
        memcpy(data, s->data, s->nbytes);
    }
    if (s->owner != NULL) {
        Py_CLEAR(s->owner);
    } else if (s->free_fn != NULL) {
        s->free_fn(s->data, s->nbytes);
    } else if (s->data != NULL) {
        const CtDeviceOps *ops = ct_device_ops(s->device);
        if (ops != NULL) {
            ops->free(s->data, s->nbytes, s->device);
        }
    }
    s->data = data;
    s->free_fn = NULL;
    s->owner = capsule;
    return 0;
}

int ct_storage_share_memory(CtStorageObject *s) { return storage_share(s, sharing_strategy); }

/* --- UntypedStorage methods ---------------------------------------------------------------------------------- */
PyObject *ct_storage_is_shared_method(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(ct_storage_is_shared((CtStorageObject *)self));
}

PyObject *ct_storage_share_memory_method(PyObject *self, PyObject *unused)
{
    return ct_storage_share_memory((CtStorageObject *)self) < 0 ? NULL : Py_NewRef(self);
}

static int require_cpu(CtStorageObject *s, const char *what)
{
    if (s->device.type != CT_DEV_CPU) {
        PyErr_Format(PyExc_RuntimeError, "%s: only CPU storages can be shared this way", what);
        return -1;
    }
    return 0;
}

/* _share_fd_cpu_() -> (fd, nbytes): the storage moved to a memfd segment; the fd stays owned by the storage. */
PyObject *ct_storage_share_fd(PyObject *self, PyObject *unused)
{
    CtStorageObject *s = (CtStorageObject *)self;
    if (require_cpu(s, "_share_fd_cpu_") < 0 || storage_share(s, CT_SHM_FD) < 0) {
        return NULL;
    }
    return Py_BuildValue("(in)", storage_segment(s)->fd, (Py_ssize_t)s->nbytes);
}

/* _share_filename_cpu_() -> (manager handle, name, nbytes): the storage moved to a named segment. There is no
 * manager process here (the segment counts its own mappings), so the handle is empty. */
PyObject *ct_storage_share_filename(PyObject *self, PyObject *unused)
{
    CtStorageObject *s = (CtStorageObject *)self;
    if (require_cpu(s, "_share_filename_cpu_") < 0 || storage_share(s, CT_SHM_FILENAME) < 0) {
        return NULL;
    }
    return Py_BuildValue("(y y n)", "", storage_segment(s)->name, (Py_ssize_t)s->nbytes);
}

static PyObject *wrap_segment(PyObject *capsule, Py_ssize_t nbytes)
{
    if (capsule == NULL) {
        return NULL;
    }
    void *data = segment_data(capsule);
    PyObject *r = (PyObject *)ct_storage_wrap(data, (size_t)nbytes, ct_cpu(), capsule);
    Py_DECREF(capsule);
    return r;
}

/* _new_shared_fd_cpu(fd, nbytes): a storage over the segment of fd (duplicated; the caller keeps fd). */
PyObject *ct_storage_new_shared_fd(PyObject *cls, PyObject *args)
{
    int fd;
    Py_ssize_t nbytes;
    if (!PyArg_ParseTuple(args, "in:_new_shared_fd_cpu", &fd, &nbytes)) {
        return NULL;
    }
    struct stat st;
    if (nbytes < 0 || fstat(fd, &st) < 0 || st.st_size < (off_t)(CT_SHM_HEADER + nbytes)) {
        PyErr_Format(PyExc_RuntimeError, "_new_shared_fd_cpu: fd %d does not hold a shared segment of %zd bytes",
                     fd, nbytes);
        return NULL;
    }
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) {
        PyErr_Format(PyExc_RuntimeError, "unable to duplicate fd %d: %s (%d)", fd, strerror(errno), errno);
        return NULL;
    }
    return wrap_segment(segment_map(own, (size_t)nbytes, NULL), nbytes);
}

/* _new_shared_filename_cpu(manager, name, nbytes): a storage over the named segment. */
PyObject *ct_storage_new_shared_filename(PyObject *cls, PyObject *args)
{
    const char *manager, *name;
    Py_ssize_t nbytes;
    if (!PyArg_ParseTuple(args, "yyn:_new_shared_filename_cpu", &manager, &name, &nbytes)) {
        return NULL;
    }
    if (nbytes < 0 || strlen(name) >= sizeof(((CtShmSegment *)NULL)->name)) {
        PyErr_SetString(PyExc_ValueError, "_new_shared_filename_cpu: bad segment name or size");
        return NULL;
    }
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) {
        PyErr_Format(PyExc_RuntimeError, "unable to open shared memory object <%s> in read-write mode: %s (%d)", name,
                     strerror(errno), errno);
        return NULL;
    }
    return wrap_segment(segment_map(fd, (size_t)nbytes, name), nbytes);
}

/* from_file(filename, shared, nbytes): a storage over the file's first nbytes, mapped: with shared, MAP_SHARED
 * (writes reach the file; a shorter file is grown with zeros), else MAP_PRIVATE (copy on write). */
static PyObject *py_from_file(PyObject *self, PyObject *args)
{
    const char *filename;
    int shared;
    Py_ssize_t nbytes;
    if (!PyArg_ParseTuple(args, "spn:_from_file", &filename, &shared, &nbytes)) {
        return NULL;
    }
    int fd = open(filename, shared ? O_RDWR | O_CREAT | O_CLOEXEC : O_RDONLY | O_CLOEXEC, 0666);
    if (fd < 0) {
        PyErr_Format(PyExc_RuntimeError, "unable to open file <%s> in %s mode: %s (%d)", filename,
                     shared ? "read-write" : "read-only", strerror(errno), errno);
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || nbytes < 0) {
        PyErr_Format(PyExc_RuntimeError, "unable to mmap %zd bytes from file <%s>", nbytes, filename);
        close(fd);
        return NULL;
    }
    if (st.st_size < (off_t)nbytes) {
        if (!shared || ftruncate(fd, (off_t)nbytes) < 0) {
            PyErr_Format(PyExc_RuntimeError, "file <%s> size <%lld> is smaller than the required mapping size <%zd>",
                         filename, (long long)st.st_size, nbytes);
            close(fd);
            return NULL;
        }
    }
    size_t map_bytes = nbytes > 0 ? (size_t)nbytes : 1;
    void *base = nbytes > 0 ? mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, shared ? MAP_SHARED : MAP_PRIVATE, fd, 0)
                            : mmap(NULL, 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    close(fd);
    if (base == MAP_FAILED) {
        PyErr_Format(PyExc_RuntimeError, "unable to mmap %zd bytes from file <%s>: %s (%d)", nbytes, filename,
                     strerror(errno), errno);
        return NULL;
    }
    CtShmSegment *seg = PyMem_Malloc(sizeof(CtShmSegment));
    if (seg == NULL) {
        munmap(base, map_bytes);
        return PyErr_NoMemory();
    }
    *seg = (CtShmSegment){.base = base, .map_bytes = map_bytes, .data_offset = 0, .fd = -1, .name = ""};
    PyObject *capsule = PyCapsule_New(seg, CT_SHM_CAPSULE, segment_release);
    if (capsule == NULL) {
        munmap(base, map_bytes);
        PyMem_Free(seg);
        return NULL;
    }
    return wrap_segment(capsule, nbytes);
}

/* _shared_incref() / _shared_decref(): one more / one fewer holder of a named segment (messages in flight). */
static PyObject *shared_ref(PyObject *self, int delta)
{
    CtShmSegment *seg = storage_segment((CtStorageObject *)self);
    if (seg != NULL && seg->name[0] != '\0') {
        atomic_fetch_add(segment_count(seg), delta);
    }
    return Py_NewRef(self);
}

PyObject *ct_storage_shared_incref(PyObject *self, PyObject *unused) { return shared_ref(self, 1); }
PyObject *ct_storage_shared_decref(PyObject *self, PyObject *unused) { return shared_ref(self, -1); }

/* _set_sharing_strategy(name): what share_memory_() uses (torch.multiprocessing.set_sharing_strategy). */
static PyObject *py_set_sharing_strategy(PyObject *self, PyObject *arg)
{
    const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (name != NULL && strcmp(name, "file_descriptor") == 0) {
        sharing_strategy = CT_SHM_FD;
    } else if (name != NULL && strcmp(name, "file_system") == 0) {
        sharing_strategy = CT_SHM_FILENAME;
    } else {
        PyErr_Format(PyExc_ValueError, "invalid sharing strategy %R", arg);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* Tensor.is_shared() / share_memory_(): through the tensor's storage. */
static PyObject *tensor_is_shared(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(ct_storage_is_shared(CT_TENSOR(self)->storage));
}

static PyObject *tensor_share_memory_(PyObject *self, PyObject *unused)
{
    return ct_storage_share_memory(CT_TENSOR(self)->storage) < 0 ? NULL : Py_NewRef(self);
}

PyMethodDef ct_shared_memory_tensor_methods[] = {
    {"is_shared", tensor_is_shared, METH_NOARGS, "is_shared(): in shared memory (always on CUDA)"},
    {"share_memory_", tensor_share_memory_, METH_NOARGS, "share_memory_(): moves the storage to shared memory"},
    {NULL},
};
PyType_Slot ct_shared_memory_tensor_slots[] = {{0, NULL}};

PyMethodDef ct_shared_memory_module_methods[] = {
    {"_from_file", py_from_file, METH_VARARGS, "_from_file(filename, shared, nbytes): a storage mapping the file"},
    {"_set_sharing_strategy", py_set_sharing_strategy, METH_O,
     "_set_sharing_strategy(name): 'file_descriptor' or 'file_system', for share_memory_()"},
    {NULL},
};
