/* optim_math.h: the per-element updates of the optimizer steps (SGD, Adam/AdamW, RMSprop), shared
 * by the CPU kernels (optim.c) and the CUDA ones (cuda/optim.cu) through CT_HOST_DEVICE, in PyTorch's
 * single-tensor order of operations (each line names the PyTorch op). Every intermediate that
 * PyTorch writes to a state tensor is stored and read back, so it is rounded to the dtype as there.
 *
 * CtOptimConstsF / CtOptimConstsD hold the group's hyper-parameters in the computing type (float for
 * float32/float16/bfloat16, double for float64), filled by ct_optim_consts_*(). */
#ifndef CTORCH_OPTIM_MATH_H
#define CTORCH_OPTIM_MATH_H

#include "dtype.h"
#include "optim.h"
#include <math.h>

/* torch.lerp's formula (exact at both ends) */
#define CT_LERP(s, e, w) ((w) < 0.5 ? (s) + (w) * ((e) - (s)) : (e) - ((e) - (s)) * (1 - (w)))

#define CT_OPTIM_CONSTS_STAMP(SFX, ACC)                                                                   \
    typedef struct {                                                                                      \
        ACC lr, wd, mom, damp1, sign; /* SGD (and the shared ones) */                                     \
        ACC decay, w1, b2, c2, eps;   /* Adam */                                                          \
        ACC a, c1;                    /* RMSprop */                                                       \
    } CtOptimConsts##SFX;                                                                                 \
    static inline CtOptimConsts##SFX ct_optim_consts_##SFX(const CtOptimParams *p)                        \
    {                                                                                                     \
        CtOptimConsts##SFX k;                                                                             \
        k.lr = (ACC)p->lr;                                                                                \
        k.wd = (ACC)p->weight_decay;                                                                      \
        k.mom = (ACC)p->momentum;                                                                         \
        k.damp1 = (ACC)(1.0 - p->dampening);                                                              \
        k.sign = p->maximize ? (ACC)-1 : (ACC)1;                                                          \
        k.decay = (ACC)(1.0 - p->lr * p->weight_decay);                                                   \
        k.w1 = (ACC)(1.0 - p->beta1);                                                                     \
        k.b2 = (ACC)p->beta2;                                                                             \
        k.c2 = (ACC)(1.0 - p->beta2);                                                                     \
        k.eps = (ACC)p->eps;                                                                              \
        k.a = (ACC)p->alpha;                                                                              \
        k.c1 = (ACC)(1.0 - p->alpha);                                                                     \
        return k;                                                                                         \
    }
CT_OPTIM_CONSTS_STAMP(F, float)
CT_OPTIM_CONSTS_STAMP(D, double)
#undef CT_OPTIM_CONSTS_STAMP

/* pp: the param element, gp: the grad element, the state elements as named (NULL when unused). */
#define CT_OPTIM_ELEM_STAMP(NAME, SFX, ACC, SQRT)                                                           \
    CT_HOST_DEVICE void ct_sgd_elem_##NAME(char *pp, const char *gp, char *bp, const CtOptimConsts##SFX *k,   \
                                           bool use_wd, bool use_mom, bool fresh, bool nesterov)              \
    {                                                                                                        \
        ACC g = k->sign * (ACC)CT_LOAD_##NAME(gp); /* -grad when maximize (exact) */                         \
        ACC w = (ACC)CT_LOAD_##NAME(pp);                                                                     \
        if (use_wd) {                                                                                        \
            g = g + k->wd * w; /* grad.add(param, alpha=weight_decay) */                                     \
        }                                                                                                    \
        if (use_mom) {                                                                                       \
            /* first step: buf = grad.clone(); then buf.mul_(momentum).add_(grad, alpha=1-damp) */           \
            ACC b = fresh ? g : (ACC)CT_LOAD_##NAME(bp) * k->mom + k->damp1 * g;                             \
            CT_STORE_##NAME(bp, b);                                                                          \
            b = (ACC)CT_LOAD_##NAME(bp);                                                                     \
            g = nesterov ? g + k->mom * b : b; /* grad.add(buf, alpha=momentum) */                           \
        }                                                                                                    \
        CT_STORE_##NAME(pp, w + (-k->lr) * g); /* param.add_(grad, alpha=-lr) */                             \
    }                                                                                                        \
    /* nstep = -step_size, bc2 = bias_correction2_sqrt (per tensor) */                                        \
    CT_HOST_DEVICE void ct_adam_elem_##NAME(char *pp, const char *gp, char *mp, char *vp, char *xp,           \
                                            const CtOptimConsts##SFX *k, ACC nstep, ACC bc2, bool use_wd,    \
                                            bool decoupled, bool amsgrad)                                    \
    {                                                                                                        \
        ACC g = k->sign * (ACC)CT_LOAD_##NAME(gp);                                                           \
        ACC w = (ACC)CT_LOAD_##NAME(pp);                                                                     \
        if (use_wd) {                                                                                        \
            if (decoupled) {                                                                                 \
                w = w * k->decay; /* param.mul_(1 - lr * weight_decay) */                                    \
            } else {                                                                                         \
                g = g + k->wd * w; /* grad.add(param, alpha=weight_decay) */                                 \
            }                                                                                                \
        }                                                                                                    \
        ACC m = (ACC)CT_LOAD_##NAME(mp);                                                                     \
        m = CT_LERP(m, g, k->w1); /* exp_avg.lerp_(grad, 1 - beta1) */                                       \
        CT_STORE_##NAME(mp, m);                                                                              \
        m = (ACC)CT_LOAD_##NAME(mp);                                                                         \
        ACC v = (ACC)CT_LOAD_##NAME(vp) * k->b2;                                                             \
        v = v + k->c2 * g * g; /* exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2) */            \
        CT_STORE_##NAME(vp, v);                                                                              \
        v = (ACC)CT_LOAD_##NAME(vp);                                                                         \
        if (amsgrad) {                                                                                       \
            ACC vmax = (ACC)CT_LOAD_##NAME(xp);                                                              \
            vmax = (vmax > v) | (vmax != vmax) ? vmax : v; /* torch.maximum (NaN-propagating) */             \
            CT_STORE_##NAME(xp, vmax);                                                                       \
            v = (ACC)CT_LOAD_##NAME(xp);                                                                     \
        }                                                                                                    \
        ACC denom = SQRT(v) / bc2 + k->eps; /* (v.sqrt() / bias_correction2_sqrt).add_(eps) */               \
        CT_STORE_##NAME(pp, w + nstep * (m / denom)); /* param.addcdiv_(m, denom, value=-step) */            \
    }                                                                                                        \
    /* sp square_avg, ap grad_avg (centered), bp momentum_buffer (use_mom) */                                \
    CT_HOST_DEVICE void ct_rmsprop_elem_##NAME(char *pp, const char *gp, char *sp, char *ap, char *bp,        \
                                               const CtOptimConsts##SFX *k, bool use_wd, bool centered,      \
                                               bool use_mom)                                                 \
    {                                                                                                        \
        ACC g = k->sign * (ACC)CT_LOAD_##NAME(gp);                                                           \
        ACC w = (ACC)CT_LOAD_##NAME(pp);                                                                     \
        if (use_wd) {                                                                                        \
            g = g + k->wd * w;                                                                               \
        }                                                                                                    \
        ACC sq = (ACC)CT_LOAD_##NAME(sp) * k->a;                                                             \
        sq = sq + k->c1 * g * g; /* square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha) */          \
        CT_STORE_##NAME(sp, sq);                                                                             \
        sq = (ACC)CT_LOAD_##NAME(sp);                                                                        \
        ACC avg;                                                                                             \
        if (centered) {                                                                                      \
            ACC ga = (ACC)CT_LOAD_##NAME(ap);                                                                \
            ga = CT_LERP(ga, g, k->c1); /* grad_avg.lerp_(grad, 1 - alpha) */                                \
            CT_STORE_##NAME(ap, ga);                                                                         \
            ga = (ACC)CT_LOAD_##NAME(ap);                                                                    \
            avg = SQRT(sq + (ACC)(-1) * ga * ga); /* square_avg.addcmul(ga, ga, value=-1).sqrt_() */         \
        } else {                                                                                             \
            avg = SQRT(sq);                                                                                  \
        }                                                                                                    \
        avg = avg + k->eps;                                                                                  \
        if (use_mom) {                                                                                       \
            ACC b = (ACC)CT_LOAD_##NAME(bp) * k->mom + g / avg; /* buf.mul_(m).addcdiv_(grad, avg) */        \
            CT_STORE_##NAME(bp, b);                                                                          \
            b = (ACC)CT_LOAD_##NAME(bp);                                                                     \
            CT_STORE_##NAME(pp, w + (-k->lr) * b); /* param.add_(buf, alpha=-lr) */                          \
        } else {                                                                                             \
            CT_STORE_##NAME(pp, w + (-k->lr) * (g / avg)); /* param.addcdiv_(grad, avg, value=-lr) */        \
        }                                                                                                    \
    }

CT_OPTIM_ELEM_STAMP(F16, F, float, sqrtf)
CT_OPTIM_ELEM_STAMP(BF16, F, float, sqrtf)
CT_OPTIM_ELEM_STAMP(F32, F, float, sqrtf)
CT_OPTIM_ELEM_STAMP(F64, D, double, sqrt)
#undef CT_OPTIM_ELEM_STAMP

#endif /* CTORCH_OPTIM_MATH_H */
