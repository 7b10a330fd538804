/* ops_more.h: the backward formulas of ops_more.c's ops that PyTorch gives a node of their own
 * (UnfoldBackward0, DiagEmbedBackward0 for diag_embed / diagflat, MvlgammaBackward0, FrexpBackward0,
 * SliceScatterBackward0 / SelectScatterBackward0 / DiagonalScatterBackward0,
 * the in-place metadata ops' TransposeBackward1 / TBackward1 / SqueezeBackward3-4 / UnsqueezeBackward1); autograd_formulas.c lists
 * them in its table. */
#ifndef CTORCH_OPS_MORE_H
#define CTORCH_OPS_MORE_H

#include "autograd.h"

int ct_more_bw_unfold(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_more_bw_as_strided(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_more_bw_inplace_view(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_more_bw_diag_embed(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_more_bw_diagflat(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_more_bw_mvlgamma(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_more_bw_frexp(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_more_bw_scatter(CtNodeObject *n, PyObject *const *g, PyObject **gi);

#endif /* CTORCH_OPS_MORE_H */
