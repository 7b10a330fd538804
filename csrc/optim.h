/* optim.h: the multi-tensor optimizer steps (SGD, Adam/AdamW, RMSprop).
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

typedef enum { CT_OPTIM_SGD, CT_OPTIM_ADAM, CT_OPTIM_RMSPROP } CtOptimKind;

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
} CtOptimParams;

/* One parameter of the group: the param (updated in place), its gradient and its state tensors, all
 * of the param's shape, dtype and device (any strides). The state slots by kind:
 *   SGD:     state[0] momentum_buffer (NULL when momentum == 0)
 *   Adam:    state[0] exp_avg, state[1] exp_avg_sq, state[2] max_exp_avg_sq (NULL unless amsgrad)
 *   RMSprop: state[0] square_avg, state[1] grad_avg (NULL unless centered), state[2]
 *            momentum_buffer (NULL unless momentum > 0) */
typedef struct {
    CtTensorObject *param, *grad;
    CtTensorObject *state[3];
    bool fresh_buffer;   /* SGD: the momentum buffer was just created: it takes the gradient */
    double step_size;    /* Adam: lr / (1 - beta1^step) */
    double bias_corr2_sqrt; /* Adam: sqrt(1 - beta2^step) */
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
