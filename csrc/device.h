/* device.h: ctorch.device objects, parsing of device arguments, and the per-device vtable. */
#ifndef CTORCH_DEVICE_H
#define CTORCH_DEVICE_H

#include "ctorch.h"

static inline CtDevice ct_cpu(void)
{
    CtDevice d = {CT_DEV_CPU, -1};
    return d;
}
static inline bool ct_device_equal(CtDevice a, CtDevice b) { return a.type == b.type && a.index == b.index; }

/* New reference to a ctorch.device for d. */
PyObject *ct_device_object(CtDevice d);
/* Parses a ctorch.device, 'cpu', 'cuda', 'cuda:N', or an int N (cuda:N). A bare 'cuda' is
 * resolved to the current CUDA device. Returns 0, or -1 with an exception set. */
int ct_device_from_object(PyObject *obj, CtDevice *out);
/* O& converter: None leaves *out unchanged. */
int ct_device_converter(PyObject *obj, void *out);
/* Writes "cpu" or "cuda:N" into buf. */
void ct_device_str(CtDevice d, char *buf, size_t n);

/* The vtable for a device, or NULL with an exception set (AssertionError in a CPU-only build,
 * RuntimeError naming the reason when CUDA cannot be used). */
const CtDeviceOps *ct_device_ops(CtDevice d);
extern const CtDeviceOps ct_cpu_ops;

/* The CUDA backend registers its vtable here when it loads (see cuda/). */
extern const CtDeviceOps *ct_cuda_ops;
/* Current CUDA device index used to resolve a bare 'cuda' (0 until set_device). */
extern int ct_cuda_current_device;

/* The device a factory (zeros, rand, tensor, ...) creates on when device= is absent: the one
 * torch.set_default_device or the innermost `with torch.device(...)` put in force in this thread (a
 * bare 'cuda' read as the current CUDA device at each call), else the legacy default tensor type's
 * (CUDA after set_default_tensor_type(torch.cuda.FloatTensor)), else the CPU. Returns whether a
 * default device is in force: PyTorch's factories then behave as if passed device= explicitly. */
bool ct_default_device(CtDevice *out);
/* set_default_tensor_type(torch.cuda.*Tensor) sets it, a CPU type clears it. */
extern bool ct_legacy_default_cuda;

int ct_device_init(PyObject *module);

#endif /* CTORCH_DEVICE_H */
