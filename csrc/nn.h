/* nn.h: the nn op family: linear (one GEMM with the bias folded in), the fused cross-entropy /
 * NLL loss, the pointwise losses (mse, l1, smooth_l1, bce, bce_with_logits), layer norm,
 * embedding and leaky_relu, each with its backward.
 *
 * The front end (nn.c) parses arguments, checks shapes and dtypes with PyTorch's messages, makes
 * operands dense and calls the device's struct CtNNKernels (CtDeviceOps.nn). The CPU kernels are
 * in nn.c as well; the CUDA backend fills the same struct (cuda/nn.cu). Every kernel works on
 * contiguous device memory described by one of the descriptors below, returns 0, or -1 with a
 * Python exception set. */
#ifndef CTORCH_NN_H
#define CTORCH_NN_H

#include "ctorch.h"

struct CtConvDesc; /* conv.h */

/* Loss reductions, numbered as ATen's at::Reduction. */
#define CT_REDUCTION_NONE 0
#define CT_REDUCTION_MEAN 1
#define CT_REDUCTION_SUM 2

/* --- linear -------------------------------------------------------------------------------------
 * out (M, N) = x (M, K) @ w^T + bias, i.e. op(A) = x, op(B) = w^T in ct_cpu_gemm's terms:
 *   x: (M, K) rows of stride lda, or (K, M) rows of stride lda when trans_x (x^T is dense)
 *   w: (N, K) rows of stride ldw (the usual layout, trans_w = true), or (K, N) rows of stride
 *      ldw when !trans_w (w^T is dense)
 *   bias: NULL, or rows of N contiguous elements bias_ld apart (0: one row broadcast to all M)
 *   out: dense (M, N). All of one dtype. K may be 0 (out = bias or 0). */
typedef struct {
    CtDType dtype;
    CtDevice device;
    int64_t M, N, K;
    const void *x;
    int64_t lda;
    bool trans_x;
    const void *w;
    int64_t ldw;
    bool trans_w;
    const void *bias;
    int64_t bias_ld;
    void *out;
} CtLinearDesc;

/* --- cross-entropy and NLL -----------------------------------------------------------------------
 * The input is viewed as (outer, classes, inner), dense, of a float dtype; a "row" is one
 * (outer, inner) pair, its classes `inner` elements apart. Class-index targets are int64 or uint8
 * of shape (outer, inner); probability targets (soft) have the input's shape and dtype.
 *   cross_entropy: row loss = (1 - ls) * w[t] * -logp[t] + ls / C * sum_c w[c] * -logp[c]
 *                  (soft: sum_c w[c] * -logp[c] * (y[c] (1 - ls) + ls / C)); logp = log_softmax
 *   nll (is_nll):  row loss = w[t] * -x[t]
 * Rows whose target is ignore_index contribute 0. Mean divides by the sum of w[t] over the rows
 * not ignored (class indices) or by the row count (soft). */
typedef struct {
    CtDType dtype;
    CtDevice device;
    bool is_nll;
    bool soft;
    int64_t outer, classes, inner;
    const void *input;  /* (outer, classes, inner) */
    const void *target; /* (outer, inner) int64/uint8, or (outer, classes, inner) of dtype when soft */
    CtDType target_dtype;
    const void *weight; /* (classes) of dtype, or NULL */
    int64_t ignore_index;
    double label_smoothing;
    int reduction;
    /* forward: out is (outer, inner) losses for NONE, else one element */
    void *out;
    /* backward: grad_out is (outer, inner) for NONE, else one element; grad_input has the input's
     * shape; grad_target (soft only, may be NULL) has the target's shape */
    const void *grad_out;
    void *grad_input;
    void *grad_target;
    /* set by the kernel when a target is out of [0, classes) and not ignore_index (nothing is
     * written then): bad_target = 1 and bad_value = the first such target */
    int bad_target;
    int64_t bad_value;
} CtNLLDesc;

/* --- pointwise losses ------------------------------------------------------------------------- */
typedef enum {
    CT_LOSS_MSE,
    CT_LOSS_L1,
    CT_LOSS_SMOOTH_L1,
    CT_LOSS_BCE,
    CT_LOSS_BCE_LOGITS,
} CtPointwiseLoss;

/* Every operand is n dense elements of dtype (broadcast operands are expanded by the front end).
 * forward: out = the elementwise losses (NONE: n elements) or their sum / mean (one element); the
 * mean of a weighted mse / l1 divides by the sum of the weights, as F.mse_loss(weight=) does.
 * backward: grad_input (and grad_target when not NULL) = d loss / d input (target) * grad_out,
 * grad_out being n elements for NONE or one element otherwise (mean also divides by n). */
typedef struct {
    CtPointwiseLoss kind;
    CtDType dtype;
    CtDevice device;
    int64_t n;
    const void *input, *target;
    const void *weight;     /* or NULL (every kind but smooth_l1) */
    const void *pos_weight; /* or NULL (bce_with_logits) */
    double beta;            /* smooth_l1 */
    int reduction;
    void *out;
    const void *grad_out;
    void *grad_input, *grad_target;
    /* bce: set by the forward kernel when an input (1) or a target (2) is outside [0, 1] */
    int bad;
} CtPointwiseLossDesc;

/* --- layer norm ---------------------------------------------------------------------------------
 * x is (rows, cols) dense; weight/bias are cols elements or NULL. forward writes out (rows, cols);
 * backward reads grad_out (rows, cols) and writes grad_input (may be NULL), grad_weight and
 * grad_bias (cols, NULL when not wanted). Statistics are computed in double for f64, float else. */
typedef struct {
    CtDType dtype;
    CtDevice device;
    int64_t rows, cols;
    double eps;
    const void *x, *weight, *bias;
    void *out;
    const void *grad_out;
    void *grad_input, *grad_weight, *grad_bias;
} CtLayerNormDesc;

/* --- embedding ------------------------------------------------------------------------------------
 * forward: out[i, :] = weight[idx[i], :] for n indices (int64 or int32), weight (num, dim) dense.
 * backward: grad_weight (num, dim), zeroed by the kernel, += grad_out[i, :] at idx[i], skipping
 * padding_idx (>= 0, or -1 for none); with scale_grad_by_freq each row is divided by the count of
 * its index. Out-of-range indices: bad_index = 1 and nothing is read for them. */
typedef struct {
    CtDType dtype;
    CtDevice device;
    int64_t n, num, dim;
    const void *indices;
    CtDType index_dtype;
    const void *weight;
    void *out;
    const void *grad_out;
    void *grad_weight;
    int64_t padding_idx;
    bool scale_grad_by_freq;
    int bad_index;
    int64_t bad_value;
} CtEmbeddingDesc;

/* --- batch norm and group norm (norm.c, cuda/norm.cu) ------------------------------------------------
 * x is (N, C, L) dense (L: the product of the spatial dims, 1 for (N, C) input). A statistics unit
 * is one channel c over its N * L values (batch norm, groups == 0) or one (n, group) pair over its
 * C / groups * L contiguous values (group norm). weight / bias / running_mean / running_var are C
 * elements of param_dtype (the input's dtype, or float32 for float16 / bfloat16 input), or NULL.
 * Statistics and math in double; sums in a fixed order (deterministic on every device).
 *   forward: out = (x - mean_u) * invstd_u * w[c] + b[c]. Batch norm with use_input_stats
 *   normalises with the batch's biased variance and, when running_mean is set, updates
 *   running = (1 - momentum) running + momentum * batch (the unbiased variance for running_var);
 *   without use_input_stats it normalises with the running statistics.
 *   backward (out NULL): reads grad_out (N, C, L) and writes grad_input (may be NULL), grad_weight
 *   and grad_bias (C, of param_dtype, NULL when not wanted), in the forward's mode (nothing is
 *   updated). */
typedef struct {
    CtDType dtype, param_dtype;
    CtDevice device;
    int64_t N, C, L;
    int64_t groups; /* 0: batch norm */
    bool use_input_stats;
    double eps, momentum;
    const void *x, *weight, *bias;
    void *running_mean, *running_var;
    void *out;
    const void *grad_out;
    void *grad_input, *grad_weight, *grad_bias;
} CtChannelNormDesc;
/* --- CTC loss (nn_misc.c; cuda/nn.cu) ----------------------------------------------------------------
 * log_probs (T, N, C) dense of dtype (float32 / float64); ext (N, L) int64: each sample's extended label
 * sequence (blank, l_1, blank, ..., l_S, blank, then blanks up to L = 2 max S + 1); lengths (N, 2) int64:
 * (input length, target length) per sample; all on the kernel's device. Log-space recursions in double.
 *   forward: log_alpha (N, T, L) of dtype (-inf where unreachable or past the input length) and nll (N)
 *   of dtype, -log of the sum over the alignments (inf when there is none).
 *   backward: grad_input (T, N, C) = (exp(lp) - exp(log sum_{s: ext[s] = c} alpha_t(s) beta_t(s) + nll - lp))
 *   * grad_out[n] for t < input length, 0 after it (PyTorch's formula: the gradient of the loss through a
 *   log_softmax); a whole sample is 0 when zero_infinity and its nll is inf. work: N * (T * L + C)
 *   doubles of scratch (log beta, per-label sums). */
typedef struct {
    CtDType dtype;
    CtDevice device;
    int64_t T, N, C, L;
    const void *log_probs;
    const int64_t *ext, *lengths;
    void *log_alpha, *nll;     /* written by the forward, read by the backward */
    const void *grad_out;      /* (N) of dtype */
    void *grad_input;
    double *work;
    bool zero_infinity;
} CtCTCDesc;
/* --- grid_sampler_2d / grid_sampler_3d (nn_misc.c; cuda/nn.cu; per-point math in grid_sample_math.h) ---
 * input (N, C, D, H, W) dense of dtype (float32 / float64; D = 1 for the 2-d op), grid (N, Do, Ho, Wo, nd)
 * dense (Do = 1 for 2-d; nd coordinates x, y[, z] in [-1, 1]), out (N, C, Do, Ho, Wo). mode 0 bilinear
 * (trilinear for nd 3), 1 nearest, 2 bicubic (nd 2); padding 0 zeros, 1 border, 2 reflection.
 *   forward: out.
 *   backward: grad_out (N, C, Do, Ho, Wo) -> grad_input (same shape as input, zeroed by the caller: an
 *   accumulation, serial per sample on the CPU, atomic on CUDA) and grad_grid (same shape as grid). */
typedef struct {
    CtDType dtype;
    CtDevice device;
    int nd, mode, padding;
    bool align_corners;
    int64_t N, C, in[3], out[3]; /* in / out: (D, H, W) */
    const void *input, *grid;
    void *output;
    const void *grad_out;
    void *grad_input, *grad_grid;
} CtGridSampleDesc;
struct CtPoolDesc; /* pool.h */
struct CtUpsampleDesc; /* upsample.h */

struct CtNNKernels {
    int (*linear)(const CtLinearDesc *d);
    int (*nll)(CtNLLDesc *d);
    int (*nll_backward)(CtNLLDesc *d);
    int (*pointwise_loss)(CtPointwiseLossDesc *d);
    int (*pointwise_loss_backward)(const CtPointwiseLossDesc *d);
    int (*layer_norm)(const CtLayerNormDesc *d);
    int (*layer_norm_backward)(const CtLayerNormDesc *d);
    int (*embedding)(CtEmbeddingDesc *d);
    int (*embedding_backward)(CtEmbeddingDesc *d);
    /* out[i] = x[i] >= 0 ? x[i] : slope * x[i] (backward: grad[i] * (x[i] > 0 ? 1 : slope)); n
     * dense elements of dtype. grad is NULL for the forward. */
    int (*leaky_relu)(CtDType dtype, CtDevice device, int64_t n, const void *x, const void *grad, double slope,
                      void *out);
    /* nn.init.trunc_normal_'s transform, in place on n dense elements of dtype holding uniform samples
     * u in (2 cdf(a') - 1, 2 cdf(b') - 1): x = clamp(mean + std * sqrt(2) * erfinv(u), a, b). */
    int (*trunc_normal_transform)(CtDType dtype, CtDevice device, int64_t n, void *data, double mean, double std,
                                  double a, double b);
    /* --- convolution (conv.h): im2col writes d->columns from d->image; col2im writes d->grad_image
     * from d->grad_columns (a gather: every element the sum of its entries, taps in order). All
     * dtypes but bool. */
    int (*im2col)(const struct CtConvDesc *d);
    int (*col2im)(const struct CtConvDesc *d);
    /* batch norm / group norm (see CtChannelNormDesc) */
    int (*channel_norm)(const CtChannelNormDesc *d);
    int (*channel_norm_backward)(const CtChannelNormDesc *d);
    /* pooling (pool.h): the forward writes output (and indices), the backward every grad_input element */
    int (*pool)(const struct CtPoolDesc *d);
    int (*pool_backward)(const struct CtPoolDesc *d);
    /* interpolation (upsample.h): the forward writes every output element, the backward every
     * grad_input element (a gather) */
    int (*upsample)(const struct CtUpsampleDesc *d);
    int (*upsample_backward)(const struct CtUpsampleDesc *d);
    /* CTC loss (see CtCTCDesc): the forward writes log_alpha and nll, the backward grad_input */
    int (*ctc_loss)(const CtCTCDesc *d);
    int (*ctc_loss_backward)(const CtCTCDesc *d);
    /* grid_sampler_2d / 3d (see CtGridSampleDesc) */
    int (*grid_sample)(const CtGridSampleDesc *d);
    int (*grid_sample_backward)(const CtGridSampleDesc *d);
};

extern const struct CtNNKernels ct_cpu_nn_kernels;
/* the CPU's channel_norm kernels (norm.c) */
int ct_cpu_channel_norm(const CtChannelNormDesc *d);
int ct_cpu_channel_norm_backward(const CtChannelNormDesc *d);
/* the CPU's ctc_loss kernels (nn_misc.c) */
int ct_cpu_ctc_loss(const CtCTCDesc *d);
int ct_cpu_ctc_loss_backward(const CtCTCDesc *d);
/* the CPU's grid_sampler kernels (nn_misc.c) */
int ct_cpu_grid_sample(const CtGridSampleDesc *d);
int ct_cpu_grid_sample_backward(const CtGridSampleDesc *d);

/* --- C entry points (new references; NULL with an exception set) ------------------------------ */
/* input (*, K) @ weight (N, K)^T + bias (N) -> (*, N); weight may be 1-D (K) -> (*). One GEMM with
 * the bias folded in (the entry point of _C.linear). */
CtTensorObject *ct_linear(CtTensorObject *input, CtTensorObject *weight, CtTensorObject *bias);
/* reduction: CT_REDUCTION_*; weight may be NULL. */
CtTensorObject *ct_cross_entropy(CtTensorObject *input, CtTensorObject *target, CtTensorObject *weight,
                                 int reduction, int64_t ignore_index, double label_smoothing);
CtTensorObject *ct_nll_loss(CtTensorObject *input, CtTensorObject *target, CtTensorObject *weight, int reduction,
                            int64_t ignore_index);
CtTensorObject *ct_layer_norm(CtTensorObject *input, int nnorm, const int64_t *normalized_shape,
                              CtTensorObject *weight, CtTensorObject *bias, double eps);
CtTensorObject *ct_embedding(CtTensorObject *weight, CtTensorObject *indices, int64_t padding_idx);

/* --- helpers of nn.c shared with norm.c ------------------------------------------------------------ */
/* The nn kernels of a device (borrowed), or NULL with an exception set. */
const struct CtNNKernels *ct_nn_kernels(CtDevice device);
/* t as a dense tensor of dtype (t itself when it already is one). New reference. */
CtTensorObject *ct_nn_dense(CtTensorObject *t, CtDType dtype);
/* TypeError "fname(): argument 'argname' (position pos) must be Tensor, not X"; None passes when optional. */
int ct_nn_check_tensor_arg(const char *fname, const char *argname, int pos, PyObject *obj, bool optional);
/* n float elements of dtype, stride apart from element start of base, widened to / narrowed from double. */
void ct_nn_load_row(CtDType dtype, const void *base, int64_t start, int64_t stride, int64_t n, double *out);
void ct_nn_store_row(CtDType dtype, void *base, int64_t start, int64_t stride, int64_t n, const double *in);
/* The dtype of a norm's affine parameters / running statistics (NULL entries skipped): the input's, or
 * float32 for float16 / bfloat16 input, every one the same, else PyTorch's "mixed dtype (CPU)" error (norm.c). */
int ct_nn_check_param_dtype(CtDType in, CtTensorObject *const *params, int n, CtDType *out);

/* --- backward formulas (rows in autograd_formulas.c) ------------------------------------------- */
struct CtNodeObject;
int ct_nn_bw_linear(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_nn_bw_cross_entropy(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_nn_bw_nll_loss(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_nn_bw_pointwise_loss(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_nn_bw_layer_norm(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_nn_bw_embedding(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_nn_bw_leaky_relu(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* nn_misc.c's margin losses */
int ct_nn_bw_multi_margin_loss(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_nn_bw_multilabel_margin_loss(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_nn_bw_embedding_bag(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_norm_bw_batch_norm(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_norm_bw_group_norm(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_nn_bw_ctc_loss(struct CtNodeObject *n, PyObject *const *g, PyObject **gi); /* nn_misc.c */
int ct_nn_bw_grid_sampler(struct CtNodeObject *n, PyObject *const *g, PyObject **gi); /* nn_misc.c */
int ct_nn_bw_grid_sampler_backward(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);

#endif /* CTORCH_NN_H */
