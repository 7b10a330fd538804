/* conv.h: convolutions (conv1d / conv2d / conv3d, forward and backward) as im2col + GEMM.
 *
 * The front end (conv.c) parses PyTorch's arguments (stride / padding / dilation as an int or a
 * list, padding='valid' / 'same' with PyTorch's asymmetric rule, groups), checks shapes and dtypes
 * with PyTorch's messages, and runs every product through the device's GEMM (CtDeviceOps.blas):
 *   forward:      columns = im2col(x); out[n, g] = W[g] @ columns[n, g] (+ bias)
 *   grad_input:   columns[n, g] = W[g]^T @ grad[n, g]; grad_input = col2im(columns)
 *   grad_weight:  grad_W[g] = sum_n grad[n, g] @ columns[n, g]^T (images in order)
 * Every call is a 3-d one (a 2-d convolution has depth 1, a 1-d one also height 1). The device
 * kernels are only the two data movers
 * below, in struct CtNNKernels (nn.h); CPU ones in conv.c, CUDA ones in cuda/conv.cu. col2im
 * gathers (each image element sums its column entries in a fixed order), so the result is the
 * same bits every run, and the same on CPU and GPU (conv_math.h holds the shared index math).
 *
 * A transposed convolution (conv_transpose1d / 2d / 3d) is the adjoint of the convolution whose input is
 * its output: its forward is that convolution's grad_input, its backward that convolution's forward
 * and grad_weight. F.unfold / F.fold are PyTorch's im2col / col2im ops on the same movers. */
#ifndef CTORCH_CONV_H
#define CTORCH_CONV_H

#include "ctorch.h"

/* One batch of images and its columns, both dense, in 3-d terms (axis 0 depth, 1 height, 2 width;
 * a 2-d convolution has depth 1, a 1-d one depth and height 1):
 *   image:   (batch, channels, in[0], in[1], in[2])
 *   columns: (batch, channels, kernel[0], kernel[1], kernel[2], out[0], out[1], out[2]), i.e. per image a
 *            (channels * kernel volume, out volume) matrix
 * column (c, k0, k1, k2, o0, o1, o2) holds image (c, p0, p1, p2) with p_a = o_a * stride[a] - pad[a] +
 * k_a * dilation[a], or 0 outside the image (pad is the leading padding; the trailing padding only
 * shows in out). */
typedef struct CtConvDesc {
    CtDType dtype;
    CtDevice device;
    int64_t batch, channels;
    int64_t in[3], out[3], kernel[3], stride[3], pad[3], dilation[3];
    const void *image; /* im2col reads it */
    void *columns;     /* im2col writes it */
    const void *grad_columns; /* col2im reads it */
    void *grad_image;         /* col2im writes it: each element the sum of its column entries */
} CtConvDesc;

/* The CPU kernels (struct CtNNKernels.im2col / col2im). */
int ct_cpu_im2col(const CtConvDesc *d);
int ct_cpu_col2im(const CtConvDesc *d);

/* --- backward formula (a row in autograd_formulas.c): conv1d / conv2d / conv3d (input, weight, bias,
 * stride, padding, dilation, groups) ------------------------------------------------------------ */
struct CtNodeObject;
int ct_conv_bw(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* conv_transpose1d / 2d / 3d (input, weight, bias, stride, padding, output_padding, groups,
 * dilation): the adjoint convolution's backward, through _conv_transpose_backward */
int ct_conv_transpose_bw(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* _convolution_backward / _conv_transpose_backward (double backward): the forward op and the backward op
 * itself on the outputs' gradients, all recording, so higher orders work too */
int ct_conv_bw_backward(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* im2col (F.unfold) and col2im (F.fold), each the other's adjoint */
int ct_conv_bw_im2col(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
int ct_conv_bw_col2im(struct CtNodeObject *n, PyObject *const *g, PyObject **gi);
/* The node name: SqueezeBackward1 for an unbatched input (PyTorch unsqueezes, convolves and
 * squeezes), ConvolutionBackward0 otherwise. */
const char *ct_conv_node_name(PyObject *const *norm);

#endif /* CTORCH_CONV_H */
