/* optim.h: the multi-tensor optimizer steps (SGD, Adam/AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam,
 * RAdam, Rprop, ASGD).
 *
 * python/ctorch/optim keeps the parameter groups and the state dicts; for each group it makes one
 * call (_C._sgd_step, _C._adam_step, _C._rmsprop_step) with the lists of parameters, gradients
 * and state tensors. optim.c checks them, creates missing state, and hands the whole group to the
 * device's struct CtOptimKernels (CtDeviceOps.optim) in one call, so that a device can update every
 * tensor of the group in one fused launch. The CPU kernels (optim.c) compute in float for
 * float32/float16/bfloat16 and in double for float64, following PyTorch's single-tensor update
 * rules operation by operation. */
#ifndef CTORCH_OPTIM_H
#define CTORCH_OPTIM_H

#include "ctorch.h"

typedef enum {
    CT_OPTIM_SGD,
    CT_OPTIM_ADAM,
    CT_OPTIM_RMSPROP,
    /* the kinds of _C._optim_step (optim.c): two state tensors at most, the per-tensor scalars in x[] */
    CT_OPTIM_ADAGRAD,
    CT_OPTIM_ADADELTA,
    CT_OPTIM_ADAMAX,
    CT_OPTIM_NADAM,
    CT_OPTIM_RADAM,
    CT_OPTIM_RPROP,
    CT_OPTIM_ASGD,
} CtOptimKind;

/* The hyper-parameters of one group. */
typedef struct {
    CtOptimKind kind;
    double lr, weight_decay;
    bool maximize;
    /* SGD and RMSprop */
    double momentum;
    /* SGD */
    double dampening;
    bool nesterov;
    /* Adam */
    double beta1, beta2;
    bool amsgrad, decoupled_weight_decay; /* decoupled: AdamW */
    /* Adam and RMSprop */
    double eps;
    /* RMSprop */
    double alpha;
    bool centered;
    /* Adadelta */
    double rho;
    /* Rprop */
    double etaminus, etaplus, step_size_min, step_size_max;
    /* decoupled weight decay's factor 1 - lr * weight_decay (Adam, NAdam, RAdam), in lr's arithmetic */
    double decay;
} CtOptimParams;

/* One parameter of the group: the param (updated in place), its gradient and its state tensors, all
 * of the param's shape, dtype and device (any strides). The state slots by kind:
 *   SGD:     state[0] momentum_buffer (NULL when momentum == 0)
 *   Adam:    state[0] exp_avg, state[1] exp_avg_sq, state[2] max_exp_avg_sq (NULL unless amsgrad)
 *   RMSprop: state[0] square_avg, state[1] grad_avg (NULL unless centered), state[2]
 *            momentum_buffer (NULL unless momentum > 0)
 *   Adagrad: state[0] sum             Adadelta: state[0] square_avg, state[1] acc_delta
 *   Adamax:  state[0] exp_avg, state[1] exp_inf
 *   NAdam, RAdam: state[0] exp_avg, state[1] exp_avg_sq
 *   Rprop:   state[0] prev, state[1] step_size      ASGD: state[0] ax
 * The per-tensor scalars x[] (from the step count, in double as PyTorch computes them on Python floats):
 *   Adagrad: x[0] clr = lr / (1 + (step - 1) lr_decay)     Adamax: x[0] clr = lr / (1 - beta1^step)
 *   NAdam:   x[0] -lr (1 - mu) / (1 - mu_product), x[1] -lr mu_next / (1 - mu_product_next),
 *            x[2] bias_correction2
 *   RAdam:   x[0] bias_correction1, x[1] sqrt(bias_correction2), x[2] the rectification term (flag: rho_t > 5)
 *   ASGD:    x[0] eta, x[1] 1 - lambd eta, x[2] mu (flag: mu != 1, else ax = param) */
typedef struct {
    CtTensorObject *param, *grad;
    CtTensorObject *state[3];
    bool fresh_buffer;   /* SGD: the momentum buffer was just created: it takes the gradient */
    double step_size;    /* Adam: lr / (1 - beta1^step) */
    double bias_corr2_sqrt; /* Adam: sqrt(1 - beta2^step) */
    double x[3];            /* the kinds after RMSprop: see above */
    bool flag;              /* RAdam: rectified; ASGD: mu != 1 */
} CtOptimTensor;

/* --- gradient clipping (clip.c): nn.utils.get_total_norm / clip_grads_with_norm_ --------------------
 * tensors: n contiguous tensors of float dtypes on this device (empty ones allowed). total: one element
 * of total_dtype on this device. The arithmetic is clip_math.h's. */
typedef struct {
    int64_t n;
    CtTensorObject *const *tensors;
    double norm_type; /* p: any double, inf and -inf included */
    double max_norm;
    bool by_total; /* scale_by_norm multiplies by total itself (GradScaler's unscale by its inverse scale) */
    void *total;
    CtDType total_dtype;
} CtGradNormDesc;

struct CtOptimKernels {
    /* Updates the n tensors (all on this device) in place. 0, or -1 with an exception set. */
    int (*step)(const CtOptimParams *p, int64_t n, const CtOptimTensor *tensors);
    /* total = the norm_type-norm of the tensors' norms, written on the device (no host wait). */
    int (*total_norm)(const CtGradNormDesc *d);
    /* every tensor *= ct_scale_coef(by_total, max_norm, total), total read on the device (no host wait). */
    int (*scale_by_norm)(const CtGradNormDesc *d);
};

extern const struct CtOptimKernels ct_cpu_optim_kernels;
/* the CPU's clipping kernels (clip.c) */
int ct_cpu_total_norm(const CtGradNormDesc *d);
int ct_cpu_scale_by_norm(const CtGradNormDesc *d);

#endif /* CTORCH_OPTIM_H */
