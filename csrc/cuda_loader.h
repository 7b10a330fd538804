/* cuda_loader.h: the C side of the lazily loaded CUDA backend (ctorch/_C_cuda.so): the CUDA
 * device vtable, pinned host memory, the CUDA settings other families read (TF32, generator
 * seeds) and the exceptions CUDA errors become. Compiled in every build; in a CPU-only build
 * (no CT_HAVE_CUDA) every CUDA use raises AssertionError "ctorch not compiled with CUDA enabled". */
#ifndef CTORCH_CUDA_LOADER_H
#define CTORCH_CUDA_LOADER_H

#include "ctorch.h"
#include "cuda/ctorch_cuda.h"

/* The CUDA vtable for device index, loading the backend on first use. NULL with an exception
 * set when CUDA cannot be used: AssertionError "ctorch not compiled with CUDA enabled" in a
 * CPU-only build; RuntimeError naming the reason otherwise (backend or cuBLAS missing, no
 * driver, driver too old, no GPU, no kernel image for this GPU, "CUDA error: invalid device
 * ordinal" for an index past the last device). */
const CtDeviceOps *ct_cuda_get_ops(int index);

/* The loaded backend (NULL before the first successful ct_cuda_get_ops): other families reach
 * their .so-side entry points through it. */
const CtCudaBackend *ct_cuda_backend(void);

/* Copies nbytes from src on GPU sd to dst on GPU dd (two different devices): ordered after the
 * work already queued on both devices' current streams and before later work on them, without
 * the host. 0, or -1 with an exception set (AssertionError in a CPU-only build). */
int ct_cuda_copy_peer(void *dst, CtDevice dd, const void *src, CtDevice sd, size_t nbytes);

/* A new contiguous CPU tensor in pinned (page-locked) memory, uninitialised. */
CtTensorObject *ct_empty_pinned(int ndim, const int64_t *sizes, CtDType dtype);
bool ct_storage_is_pinned(const CtStorageObject *s);

/* ctorch.OutOfMemoryError (= ctorch.cuda.OutOfMemoryError, a RuntimeError) and
 * ctorch.AcceleratorError (a RuntimeError: a failed CUDA call). */
extern PyObject *ct_OutOfMemoryError;
extern PyObject *ct_AcceleratorError;

/* Set from Python (set_float32_matmul_precision, backends.cuda.matmul, cuda.manual_seed) and
 * shared with the backend through CtCudaHost. */
extern CtCudaSettings ct_cuda_settings;
static inline bool ct_cuda_allow_tf32(void) { return ct_cuda_settings.float32_matmul_precision > 0; }

int ct_cuda_loader_init(PyObject *module);

#endif /* CTORCH_CUDA_LOADER_H */
