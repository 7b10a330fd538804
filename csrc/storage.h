/* storage.h: CtStorage, the one owner of tensor memory. */
#ifndef CTORCH_STORAGE_H
#define CTORCH_STORAGE_H

#include "ctorch.h"

extern PyTypeObject *CtStorage_Type;

/* A new storage of nbytes on device (uninitialised). NULL with an exception on failure
 * (RuntimeError for impossible sizes, OutOfMemoryError on CUDA). */
CtStorageObject *ct_storage_new(size_t nbytes, CtDevice device);
/* A storage over memory that owner keeps alive (steals nothing; takes a new reference). */
CtStorageObject *ct_storage_wrap(void *data, size_t nbytes, CtDevice device, PyObject *owner);
/* A storage owning data allocated elsewhere; free_fn(data, nbytes) releases it in dealloc
 * (pinned host memory). */
CtStorageObject *ct_storage_wrap_owned(void *data, size_t nbytes, CtDevice device,
                                       void (*free_fn)(void *data, size_t nbytes));
/* Number of live storages (for the leak tests). */
extern Py_ssize_t ct_live_storages;

/* shared_memory.c: CPU storages in shared memory (PyTorch's file_descriptor / file_system strategies). */
bool ct_storage_is_shared(CtStorageObject *s);
int ct_storage_share_memory(CtStorageObject *s); /* moves it with the current strategy; 0 or -1 */
PyObject *ct_storage_is_shared_method(PyObject *self, PyObject *unused);
PyObject *ct_storage_share_memory_method(PyObject *self, PyObject *unused);
PyObject *ct_storage_share_fd(PyObject *self, PyObject *unused);
PyObject *ct_storage_share_filename(PyObject *self, PyObject *unused);
PyObject *ct_storage_new_shared_fd(PyObject *cls, PyObject *args);
PyObject *ct_storage_new_shared_filename(PyObject *cls, PyObject *args);
PyObject *ct_storage_shared_incref(PyObject *self, PyObject *unused);
PyObject *ct_storage_shared_decref(PyObject *self, PyObject *unused);

int ct_storage_init(PyObject *module);

#endif /* CTORCH_STORAGE_H */
