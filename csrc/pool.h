/* pool.h: the pooling family: max / average pooling over windows (max_pool2d/3d_with_indices,
 * avg_pool2d/3d) and adaptive pooling (adaptive_max_pool2d/3d, _adaptive_avg_pool2d/3d), forward and
 * backward, and the ops PyTorch composes of them (max_pool1d/2d/3d, avg_pool1d,
 * adaptive_avg_pool1d/2d/3d, adaptive_max_pool1d).
 *
 * The front end (pool.c) parses arguments and checks shapes with PyTorch's messages, makes the
 * input dense and calls the device's CtNNKernels.pool / .pool_backward (nn.h) with one
 * CtPoolDesc. Both kernels compute one element per step with pool_math.h's functions (the CPU in
 * pool.c, CUDA in cuda/pool.cu), so the two devices give the same bits. The backward is a gather:
 * each input element sums, in output order, the gradients of the windows that took it, never a
 * scatter with atomics, so it is deterministic on every device. */
#ifndef CTORCH_POOL_H
#define CTORCH_POOL_H

#include "ctorch.h"

typedef enum {
    CT_POOL_MAX,          /* max over kernel windows (stride, padding, dilation); records indices */
    CT_POOL_AVG,          /* mean over kernel windows (stride, padding) */
    CT_POOL_ADAPTIVE_MAX, /* max over windows [floor(o in / out), ceil((o + 1) in / out)); indices */
    CT_POOL_ADAPTIVE_AVG, /* mean over the same windows */
} CtPoolKind;

/* Axis 0 is the depth, 1 the height, 2 the width (a 2-d pooling has depth 1: kernel, stride and
 * dilation 1, no padding); every operand is dense, one (D, H, W) plane after another. */
typedef struct CtPoolDesc {
    CtPoolKind kind;
    CtDType dtype;
    CtDevice device;
    int dims;                                     /* the call's spatial dims, 2 or 3: the last of the axes */
    int64_t planes;                               /* batch * channels */
    int64_t in[3], out[3];                        /* plane sizes of the input and of the output */
    int64_t kernel[3], stride[3], pad[3], dilation[3]; /* CT_POOL_MAX / CT_POOL_AVG (dilation 1) */
    bool count_include_pad;                       /* CT_POOL_AVG */
    int64_t divisor_override;                     /* CT_POOL_AVG: 0 when none */
    const void *input;                            /* forward: (planes, in[0], in[1], in[2]) */
    void *output;                                 /* forward: (planes, out[0], out[1], out[2]) */
    int64_t *indices;     /* max kinds: (planes, out...) positions in the plane ((t * in[1] + h) * in[2] + w),
                             written by the forward, read by the backward */
    const void *grad_output;                      /* backward: (planes, out[0], out[1], out[2]) */
    void *grad_input;                             /* backward: (planes, in[0], in[1], in[2]), all written */
} CtPoolDesc;

/* The CPU kernels (CtNNKernels.pool / .pool_backward): 0, or -1 with an exception set. */
int ct_cpu_pool(const CtPoolDesc *d);
int ct_cpu_pool_backward(const CtPoolDesc *d);

/* --- backward formulas (rows in autograd_formulas.c) ------------------------------------------- */
struct CtNodeObject;
int ct_pool_bw_max_pool2d(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_pool_bw_avg_pool2d(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_pool_bw_adaptive_avg_pool2d(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_pool_bw_adaptive_max_pool2d(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* the backward ops' own gradients (double backward): linear in grad_output */
int ct_pool_bw_max_pool2d_backward(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_pool_bw_avg_pool2d_backward(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_pool_bw_adaptive_avg_pool2d_backward(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_pool_bw_adaptive_max_pool2d_backward(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* the 3-d poolings and their backward ops */
int ct_pool_bw_max_pool3d(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_pool_bw_avg_pool3d(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_pool_bw_adaptive_avg_pool3d(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_pool_bw_adaptive_max_pool3d(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_pool_bw_max_pool3d_backward(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_pool_bw_avg_pool3d_backward(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_pool_bw_adaptive_avg_pool3d_backward(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_pool_bw_adaptive_max_pool3d_backward(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);

#endif /* CTORCH_POOL_H */
