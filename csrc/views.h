/* views.h: metadata-only operations other files reuse (all return new references). */
#ifndef CTORCH_VIEWS_H
#define CTORCH_VIEWS_H

#include "ctorch.h"

PyObject *ct_expand(CtTensorObject *t, int nd, const int64_t *target);
/* dim must already be wrapped; start/length already checked. */
PyObject *ct_narrow(CtTensorObject *t, int dim, int64_t start, int64_t length);
/* dim wrapped; index may be negative (IndexError when out of range). */
PyObject *ct_select(CtTensorObject *t, int dim, int64_t index);
/* true when t can be viewed with sizes (all >= 0) without a copy */
bool ct_can_view(const CtTensorObject *t, int nd, const int64_t *sizes);
PyObject *ct_views_get_T(PyObject *self, void *closure);
PyObject *ct_views_get_mT(PyObject *self, void *closure);

#endif /* CTORCH_VIEWS_H */
