/* cuda_loader.c: opens the CUDA backend on first use (provisional: CPU-only behaviour). */
#include "cuda_loader.h"

const CtDeviceOps *ct_cuda_get_ops(int index)
{
    PyErr_SetString(PyExc_AssertionError, "ctorch not compiled with CUDA enabled");
    return NULL;
}

int ct_cuda_loader_init(PyObject *module) { return 0; }
