/* nn_act.h: the backward formulas of nn_act.c's ops with a node of their own (activations, glu,
 * padding, huber and soft margin losses); autograd_formulas.c lists them in its table. */
#ifndef CTORCH_NN_ACT_H
#define CTORCH_NN_ACT_H

#include "autograd.h"
#include "elementwise.h"

/* grad combined with x by one of the activation backward rows (CT_EW_THRESHOLD_BACKWARD, whose
 * parameter is threshold; CT_EW_TANH_BACKWARD, CT_EW_SIGMOID_BACKWARD): a new tensor, or NULL */
CtTensorObject *ct_activation_backward(CtEwOp op, CtTensorObject *grad, CtTensorObject *x, double threshold);

int ct_act_bw_elu(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_act_bw_hardtanh(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_act_bw_hardsigmoid(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_act_bw_hardswish(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_act_bw_mish(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_act_bw_log_sigmoid(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_act_bw_shrink(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_act_bw_threshold(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_act_bw_prelu(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_act_bw_glu(CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* constant_pad_nd: the gradient padded by the negated amounts */
int ct_act_bw_constant_pad(CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* _pad_gather (reflect, replicate, circular): index_add back along each padded dim */
int ct_act_bw_pad_gather(CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* its node name: ReflectionPad2DBackward0, ReplicationPad1DBackward0, ... */
const char *ct_act_name_pad_gather(PyObject *const *norm);
int ct_act_bw_huber_loss(CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_act_bw_soft_margin_loss(CtNodeObject *n, PyObject *const *g, PyObject **gi);

#endif /* CTORCH_NN_ACT_H */
