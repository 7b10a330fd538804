/* namespace.h: the parts of namespace.c (torch-namespace parity: real-dtype complex helpers,
 * layouts, *_copy ops, global switches) that other files read: Tensor's getters (tensor.c), the
 * layout check of the factories (creation.c) and anomaly mode (autograd.c's engine). */
#ifndef CTORCH_NAMESPACE_H
#define CTORCH_NAMESPACE_H

#include "ctorch.h"

/* Tensor.layout, .real, .imag, .mH, .H */
PyObject *ct_namespace_get_layout(PyObject *self, void *closure);
PyObject *ct_namespace_get_real(PyObject *self, void *closure);
PyObject *ct_namespace_get_imag(PyObject *self, void *closure);
PyObject *ct_namespace_get_mH(PyObject *self, void *closure);
PyObject *ct_namespace_get_H(PyObject *self, void *closure);

/* A factory's layout= argument: None or torch.strided pass; another torch.layout (sparse) raises
 * RuntimeError, anything else TypeError "fname(): argument 'layout' must be torch.layout, not int".
 * 0 or -1. */
int ct_layout_arg(const char *fname, PyObject *obj);

/* torch.autograd's anomaly mode: the engine checks each node's gradients for NaN when set. */
extern bool ct_anomaly_enabled;
extern bool ct_anomaly_check_nan;

#endif /* CTORCH_NAMESPACE_H */
