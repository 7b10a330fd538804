/* cuda_loader.h: the C side of the lazily loaded CUDA backend (ctorch/_C_cuda.so). */
#ifndef CTORCH_CUDA_LOADER_H
#define CTORCH_CUDA_LOADER_H

#include "ctorch.h"

/* The CUDA vtable for device index, loading the backend on first use. NULL with an exception
 * set when CUDA cannot be used: AssertionError "ctorch not compiled with CUDA enabled" in a
 * CPU-only build, RuntimeError naming the reason otherwise. */
const CtDeviceOps *ct_cuda_get_ops(int index);

int ct_cuda_loader_init(PyObject *module);

#endif /* CTORCH_CUDA_LOADER_H */
