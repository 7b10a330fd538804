/* composite.h: the backward formulas of the composite ops (ops_composite.c) that PyTorch gives a
 * node of their own (TraceBackward0, LinalgCrossBackward0, BlockDiagBackward0, Rot90Backward0,
 * CdistBackward0, kron's UnsafeViewBackward0); autograd_formulas.c lists them in its table. */
#ifndef CTORCH_COMPOSITE_H
#define CTORCH_COMPOSITE_H

#include "autograd.h"

int ct_composite_bw_trace(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_composite_bw_kron(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_composite_bw_cross(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_composite_bw_block_diag(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_composite_bw_rot90(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_composite_bw_cdist(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_composite_bw_pdist(CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* cdist's node name: ViewBackward0 where PyTorch takes the matrix-product path for p = 2 */
const char *ct_composite_name_cdist(PyObject *const *norm);

#endif /* CTORCH_COMPOSITE_H */
