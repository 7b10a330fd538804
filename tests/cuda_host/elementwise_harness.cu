/* elementwise_harness.cu: the CUDA elementwise entry (csrc/cuda/elementwise*.cu) run on the host.
 *
 * Built with CT_EW_HOST_EMULATION (see elementwise_impl.cuh) into a shared object, together with
 * elementwise.cu, its parts and fake_cudart.cpp: every kernel launch becomes a loop over the
 * same grid-stride schedule calling the same thread bodies on the host, over host memory. The
 * dispatch table, the path choice, host scalars, parameters, conversions, vector bodies with
 * their tails and the strided offsets are the production code; only the device math library and
 * the hardware are not. tests/test_cuda_host.py drives it with ctypes and compares every op x
 * compute dtype x layout with ctorch's CPU kernels. */
#include "common.cuh"
#include "elementwise.cuh"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* --- what runtime.cu provides in the real backend --------------------------------------------- */
static char error_text[4096];
static int error_status = 0;
const CtCudaHost *ct_cuda_host = nullptr;

int ct_cuda_set_error(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_text, sizeof(error_text), fmt, ap);
    va_end(ap);
    return status;
}
int ct_cuda_record_error(cudaError_t err, const char *expr, const char *func, const char *file, int line)
{
    return ct_cuda_set_error(CT_CUDA_ERROR, "CUDA error in %s", expr);
}
int ct_cuda_raise(int status)
{
    error_status = status;
    return -1;
}
cudaStream_t ct_cuda_stream(int device) { return 0; }

/* --- launches ------------------------------------------------------------------------------------ */
static int launches = 0;
static int last_path = -1;
static long long last_blocks = 0, last_work = 0;

void ct_ew_emulated_launch(int path, unsigned int blocks, int64_t work)
{
    launches++;
    last_path = path;
    last_blocks = blocks;
    last_work = work;
}

/* The last call's host scalars and parameters as the kernels receive them: 3 + 3 values of 8
 * bytes, each in the kernel type (float for float16/bfloat16 ops) in its first bytes. */
static unsigned char last_scalars[48];

void ct_ew_emulated_scalars(const void *values, const void *params, size_t size)
{
    memset(last_scalars, 0, sizeof(last_scalars));
    memcpy(last_scalars, values, size < 24 ? size : 24);
    memcpy(last_scalars + 24, params, size < 24 ? size : 24);
}

/* --- the ctypes interface ----------------------------------------------------------------------- */
extern "C" {

__attribute__((visibility("default"))) int emu_num_ops(void) { return CT_EW_NUM_OPS; }

/* Runs op over an iterator given as arrays: shape[ndim] (dim 0 innermost), strides[ndim][nops]
 * in bytes, data[nops], dtypes[nops]; params f[3] and i[3]. Returns ct_cuda_elementwise's. */
__attribute__((visibility("default"))) int emu_elementwise(int op, int compute, int nops, int ndim,
                                                          const int64_t *shape, const int64_t *strides,
                                                          void *const *data, const int *dtypes, unsigned host_scalars,
                                                          const double *pf, const int64_t *pi)
{
    CtIter it;
    memset(&it, 0, sizeof(it));
    it.nops = nops;
    it.ndim = ndim;
    it.numel = 1;
    for (int d = 0; d < ndim; d++) {
        it.shape[d] = shape[d];
        it.numel *= shape[d];
        for (int k = 0; k < nops; k++) {
            it.strides[d][k] = strides[d * nops + k];
        }
    }
    for (int k = 0; k < nops; k++) {
        it.data[k] = (char *)data[k];
        it.dtypes[k] = (CtDType)dtypes[k];
    }
    it.device.type = CT_DEV_CUDA;
    it.device.index = 0;
    CtEwCall call;
    memset(&call, 0, sizeof(call));
    call.op = (CtEwOp)op;
    call.compute = (CtDType)compute;
    call.host_scalars = host_scalars;
    for (int k = 0; k < 3; k++) {
        call.params.f[k] = pf[k];
        call.params.i[k] = pi[k];
    }
    error_status = 0;
    error_text[0] = '\0';
    return ct_cuda_elementwise(&it, &call);
}

__attribute__((visibility("default"))) const char *emu_error(void) { return error_text; }
__attribute__((visibility("default"))) int emu_error_status(void) { return error_status; }
__attribute__((visibility("default"))) int emu_launches(void) { return launches; }
__attribute__((visibility("default"))) int emu_last_path(void) { return last_path; }
__attribute__((visibility("default"))) long long emu_last_blocks(void) { return last_blocks; }
__attribute__((visibility("default"))) long long emu_last_work(void) { return last_work; }
__attribute__((visibility("default"))) void emu_last_scalars(unsigned char *out) { memcpy(out, last_scalars, 48); }
}
