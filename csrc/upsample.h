/* upsample.h: the interpolation family behind F.interpolate / nn.Upsample: nearest, nearest-exact,
 * linear (1-d), bilinear and bicubic (2-d), trilinear (3-d) resampling of (N, C, W) / (N, C, H, W) /
 * (N, C, D, H, W) input, forward and backward, with PyTorch's index and coordinate rules (scale factor or size, align_corners).
 *
 * The front end (upsample.c) checks arguments with PyTorch's messages, makes operands dense and
 * calls the device's CtNNKernels.upsample / .upsample_backward (nn.h) with one CtUpsampleDesc.
 * The taps of each output along each axis (positions and weights) and the outputs covering each
 * input position are computed once per call on the host into small tables; both devices run
 * upsample_math.h's per-element functions over them (CPU in upsample.c, CUDA in cuda/upsample.cu). The backward is a gather: each input element sums, in output order, the
 * weighted gradients of the outputs that read it (no atomics: the same bits every run). Every call
 * is a 3-d one: a 2-d call has depth 1, a 1-d one also height 1. */
#ifndef CTORCH_UPSAMPLE_H
#define CTORCH_UPSAMPLE_H

#include "ctorch.h"

typedef enum {
    CT_UPSAMPLE_NEAREST,       /* src = floor(o * scale), PyTorch's 'nearest' */
    CT_UPSAMPLE_NEAREST_EXACT, /* src = floor((o + 0.5) * scale), 'nearest-exact' */
    CT_UPSAMPLE_LINEAR,        /* two taps per axis: 'linear' / 'bilinear' */
    CT_UPSAMPLE_CUBIC,         /* four taps per axis (A = -0.75), indices clamped: 'bicubic' */
    CT_UPSAMPLE_LINEAR_AA,     /* antialias=True: the triangle filter stretched by the downscale, normalised */
    CT_UPSAMPLE_CUBIC_AA,      /* antialias=True: the cubic filter (A = -0.5) stretched, normalised */
} CtUpsampleMode;

/* Axis 0 is the depth, axis 1 the height, axis 2 the width; every operand is dense, one volume after
 * another. */
#define CT_UPSAMPLE_AXES 3
typedef struct CtUpsampleDesc {
    CtUpsampleMode mode[CT_UPSAMPLE_AXES]; /* per axis: the axes a call lacks are CT_UPSAMPLE_NEAREST of size 1 */
    CtDType dtype;
    CtDevice device;
    bool align_corners;     /* linear / cubic */
    int64_t planes;         /* batch * channels */
    int64_t in[CT_UPSAMPLE_AXES], out[CT_UPSAMPLE_AXES]; /* volume sizes (a 2-d call: in[0] = out[0] = 1) */
    double scale[CT_UPSAMPLE_AXES]; /* the scale factor the caller gave for the axis, or 0 for none */
    /* per-axis tables, built once per call on the host (upsample_math.h's tap functions) and copied to
     * the device, so the kernels only read them: */
    int ntaps[CT_UPSAMPLE_AXES]; /* taps per output: 1 (nearest), 2 (linear), 4 (cubic), the widest (antialiased) */
    /* (out[a], ntaps[a]): the input positions output o reads, ascending (unused slots repeat the last
     * with weight 0), and their weights, computed in the op math type */
    const int64_t *tap_index[CT_UPSAMPLE_AXES];
    const double *tap_weight[CT_UPSAMPLE_AXES];
    const int64_t *cover[CT_UPSAMPLE_AXES];     /* (in[a], 2): the first and last output reading input position i */
    const void *input;      /* forward: (planes, in[0], in[1], in[2]) */
    void *output;           /* forward: (planes, out[0], out[1], out[2]) */
    const void *grad_output; /* backward: (planes, out[0], out[1], out[2]) */
    void *grad_input;        /* backward: (planes, in[0], in[1], in[2]), every element written */
} CtUpsampleDesc;

/* The CPU kernels (CtNNKernels.upsample / .upsample_backward): 0, or -1 with an exception set. */
int ct_cpu_upsample(const CtUpsampleDesc *d);
int ct_cpu_upsample_backward(const CtUpsampleDesc *d);

/* --- backward formulas (rows in autograd_formulas.c) ------------------------------------------- */
struct CtNodeObject;
/* _upsample(input, mode, output_size, align_corners, scale_factors) */
int ct_upsample_bw(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* _upsample_backward(grad_output, mode, input_size, output_size, align_corners, scale_factors) */
int ct_upsample_bw_backward(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* PyTorch's node names by mode and dims: UpsampleBilinear2DBackward0, UpsampleTrilinear3DBackward0, ... */
const char *ct_upsample_node_name(PyObject *const *norm);
const char *ct_upsample_backward_node_name(PyObject *const *norm);

/* --- spatial.c's pixel_shuffle / pixel_unshuffle (input, factor): each the other's backward -------- */
int ct_spatial_bw_pixel_shuffle(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_spatial_bw_pixel_unshuffle(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);

#endif /* CTORCH_UPSAMPLE_H */
