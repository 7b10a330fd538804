/* legacy_types.h: the legacy tensor types (torch.FloatTensor, torch.cuda.LongTensor, ...) and the
 * legacy constructor behind them and torch.Tensor(...); see legacy_types.c. */
#ifndef CTORCH_LEGACY_TYPES_H
#define CTORCH_LEGACY_TYPES_H

#include "ctorch.h"

/* Whether obj is one of the legacy type classes; its dtype and device type into *dtype / *cuda. */
bool ct_legacy_type_of(PyObject *obj, CtDType *dtype, bool *cuda);
/* The legacy constructor of the type (dtype, cuda): (), (*sizes), (torch.Size), (data), (tensor),
 * (untyped storage), with device= of the type's device type. `typed` requires a tensor argument to be
 * of the type (torch.FloatTensor(t)); torch.Tensor(t) takes any. New reference or NULL. */
PyObject *ct_legacy_new(CtDType dtype, bool cuda, bool typed, PyObject *args, PyObject *kwargs);
/* Creates the metaclass and the classes in module (_C): FloatTensor, ..., and _cuda_legacy_types. */
int ct_legacy_types_init(PyObject *module);

#endif /* CTORCH_LEGACY_TYPES_H */
