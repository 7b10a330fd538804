/* amp.h: autocast (torch.autocast), the per-op casting of automatic mixed precision.
 *
 * Every op callable is already wrapped by autograd.c; the wrapper asks ct_autocast_policy() once, at
 * install, what autocast does to the op on each device type, and while some device type has
 * autocast enabled (ct_autocast_on) it routes calls of ops with a policy through
 * ct_autocast_vectorcall, which casts the floating tensor arguments on that device type and runs
 * the op with autocast suppressed (ops the op calls are not cast again, as PyTorch excludes its
 * Autocast key while the op runs). The casts are ordinary recording `to` calls, so autograd
 * carries gradients back to the float32 weights. */
#ifndef CTORCH_AMP_H
#define CTORCH_AMP_H

#include "ctorch.h"

typedef enum {
    CT_AC_NONE = 0, /* runs in the dtypes it is given */
    CT_AC_LOWER,    /* casts to the autocast dtype (float16 / bfloat16): GEMMs and convolutions */
    CT_AC_FP32,     /* casts to float32: ops that need the range (losses, exp/log, norms, sums) */
    CT_AC_PROMOTE,  /* casts to the widest floating dtype among the arguments */
    CT_AC_BANNED,   /* raises (binary_cross_entropy under CUDA autocast) */
} CtAutocastPolicy;

/* True while autocast is enabled for some device type and no autocast op is running. */
extern bool ct_autocast_on;

/* The op's policy on [CPU, CUDA]. */
void ct_autocast_policy(const char *name, uint8_t policy[2]);

typedef PyObject *(*CtAutocastCall)(void *ctx, PyObject *const *args, size_t nargs, PyObject *kwnames);

/* Calls call(ctx, ...) with the arguments cast by policy, or unchanged where autocast does not apply
 * to this call (no tensor on an enabled device type, out= or dtype= given). */
PyObject *ct_autocast_vectorcall(const uint8_t policy[2], CtAutocastCall call, void *ctx, PyObject *const *args,
                                 size_t nargs, PyObject *kwnames);

#endif /* CTORCH_AMP_H */
