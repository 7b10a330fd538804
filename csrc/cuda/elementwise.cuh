/* elementwise.cuh: the CUDA entry of struct CtElementwiseKernels's unary/binary/ternary fields
 * (elementwise.cu). `copy` is ct_cuda_copy in copy.cuh. */
#ifndef CTORCH_CUDA_ELEMENTWISE_CUH
#define CTORCH_CUDA_ELEMENTWISE_CUH

#include "common.cuh"
#include "elementwise.h"

/* Runs call->op over it on it->device's current stream (it->nops must be the op's arity + 1).
 * Every op x compute dtype of the CPU table is here. Integer division by zero does not raise:
 * as in PyTorch on CUDA the result is unspecified (here 0, from scalar_math.h), and nothing
 * traps. 0, or -1 with a Python exception set. */
int ct_cuda_elementwise(const CtIter *it, const CtEwCall *call);

#endif /* CTORCH_CUDA_ELEMENTWISE_CUH */
