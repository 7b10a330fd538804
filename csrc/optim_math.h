/* optim_math.h: the per-element updates of the optimizer steps (SGD, Adam/AdamW, RMSprop, and after them
 * Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD), shared
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
        ACC rho, rho1;                /* Adadelta: rho, 1 - rho */                                        \
        ACC etap, etam, smin, smax;   /* Rprop */                                                         \
    } CtOptimConsts##SFX;                                                                                 \
    static inline CtOptimConsts##SFX ct_optim_consts_##SFX(const CtOptimParams *p)                        \
    {                                                                                                     \
        CtOptimConsts##SFX k;                                                                             \
        k.lr = (ACC)p->lr;                                                                                \
        k.wd = (ACC)p->weight_decay;                                                                      \
        k.mom = (ACC)p->momentum;                                                                         \
        k.damp1 = (ACC)(1.0 - p->dampening);                                                              \
        k.sign = p->maximize ? (ACC)-1 : (ACC)1;                                                          \
        k.decay = (ACC)p->decay;                                                                          \
        k.w1 = (ACC)(1.0 - p->beta1);                                                                     \
        k.b2 = (ACC)p->beta2;                                                                             \
        k.c2 = (ACC)(1.0 - p->beta2);                                                                     \
        k.eps = (ACC)p->eps;                                                                              \
        k.a = (ACC)p->alpha;                                                                              \
        k.c1 = (ACC)(1.0 - p->alpha);                                                                     \
        k.rho = (ACC)p->rho;                                                                              \
        k.rho1 = (ACC)(1.0 - p->rho);                                                                     \
        k.etap = (ACC)p->etaplus;                                                                         \
        k.etam = (ACC)p->etaminus;                                                                        \
        k.smin = (ACC)p->step_size_min;                                                                   \
        k.smax = (ACC)p->step_size_max;                                                                   \
        return k;                                                                                         \
    }
CT_OPTIM_CONSTS_STAMP(F, float)
CT_OPTIM_CONSTS_STAMP(D, double)
#undef CT_OPTIM_CONSTS_STAMP

/* pp: the param element, gp: the grad element, the state elements as named (NULL when unused). */
#define CT_OPTIM_ELEM_STAMP(NAME, SFX, ACC, SQRT)                                                           \
    /* The prelude of every update: returns the grad it uses (-grad when maximize, exact; plus               \
     * weight_decay * param when use_wd and not decoupled) and sets *w to the param (times                   \
     * 1 - lr * weight_decay when use_wd and decoupled). */                                                  \
    CT_HOST_DEVICE ACC ct_optim_grad_##NAME(const char *pp, const char *gp, const CtOptimConsts##SFX *k,     \
                                            bool use_wd, bool decoupled, ACC *w)                             \
    {                                                                                                        \
        ACC g = k->sign * (ACC)CT_LOAD_##NAME(gp); /* -grad when maximize (exact) */                         \
        *w = (ACC)CT_LOAD_##NAME(pp);                                                                        \
        if (use_wd) {                                                                                        \
            if (decoupled) {                                                                                 \
                *w = *w * k->decay; /* param.mul_(1 - lr * weight_decay) */                                  \
            } else {                                                                                         \
                g = g + k->wd * *w; /* grad.add(param, alpha=weight_decay) */                                \
            }                                                                                                \
        }                                                                                                    \
        return g;                                                                                            \
    }                                                                                                        \
    CT_HOST_DEVICE void ct_sgd_elem_##NAME(char *pp, const char *gp, char *bp, const CtOptimConsts##SFX *k,   \
                                           bool use_wd, bool use_mom, bool fresh, bool nesterov)              \
    {                                                                                                        \
        ACC w;                                                                                               \
        ACC g = ct_optim_grad_##NAME(pp, gp, k, use_wd, false, &w);                                          \
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
        ACC w;                                                                                               \
        ACC g = ct_optim_grad_##NAME(pp, gp, k, use_wd, decoupled, &w);                                      \
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
        ACC w;                                                                                               \
        ACC g = ct_optim_grad_##NAME(pp, gp, k, use_wd, false, &w);                                          \
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

/* The kinds after RMSprop share one signature: ap, bp the state slots 0 and 1 (see optim.h; bp NULL for
 * one-state kinds), x the per-tensor scalars in the computing type, use_wd: weight_decay != 0, decoupled:
 * decoupled_weight_decay (NAdam, RAdam), flag: CtOptimTensor.flag (RAdam, ASGD). In PyTorch
 * addcmul is self + (value * t1) * t2 and addcdiv self + (value * t1) / t2: the same order here. */
#define CT_OPTIM_EXT_ARGS(SFX, ACC)                                                                        \
    char *pp, const char *gp, char *ap, char *bp, const CtOptimConsts##SFX *k, const ACC *x, bool use_wd, \
        bool decoupled, bool flag
#define CT_OPTIM_EXT_STAMP(NAME, SFX, ACC, SQRT, FABS)                                                        \
    CT_HOST_DEVICE void ct_adagrad_elem_##NAME(CT_OPTIM_EXT_ARGS(SFX, ACC))                                     \
    {                                                                                                          \
        ACC w;                                                                                                 \
        ACC g = ct_optim_grad_##NAME(pp, gp, k, use_wd, false, &w);                                            \
        CT_STORE_##NAME(ap, (ACC)CT_LOAD_##NAME(ap) + g * g); /* state_sum.addcmul_(grad, grad, value=1) */    \
        ACC std = SQRT((ACC)CT_LOAD_##NAME(ap)) + k->eps;    /* state_sum.sqrt().add_(eps) */                  \
        CT_STORE_##NAME(pp, w + (-x[0] * g) / std);           /* param.addcdiv_(grad, std, value=-clr) */      \
    }                                                                                                          \
    CT_HOST_DEVICE void ct_adadelta_elem_##NAME(CT_OPTIM_EXT_ARGS(SFX, ACC))                                    \
    {                                                                                                          \
        ACC w;                                                                                                 \
        ACC g = ct_optim_grad_##NAME(pp, gp, k, use_wd, false, &w);                                            \
        /* square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho) */                                         \
        CT_STORE_##NAME(ap, (ACC)CT_LOAD_##NAME(ap) * k->rho + k->rho1 * g * g);                               \
        ACC std = SQRT((ACC)CT_LOAD_##NAME(ap) + k->eps);    /* square_avg.add(eps).sqrt_() */                 \
        ACC delta = SQRT((ACC)CT_LOAD_##NAME(bp) + k->eps);  /* acc_delta.add(eps).sqrt_() */                  \
        delta = delta / std * g;                             /* delta.div_(std).mul_(grad) */                  \
        /* acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho) */                                        \
        CT_STORE_##NAME(bp, (ACC)CT_LOAD_##NAME(bp) * k->rho + k->rho1 * delta * delta);                       \
        CT_STORE_##NAME(pp, w + (-k->lr) * delta); /* param.add_(delta, alpha=-lr) */                          \
    }                                                                                                          \
    CT_HOST_DEVICE void ct_adamax_elem_##NAME(CT_OPTIM_EXT_ARGS(SFX, ACC))                                      \
    {                                                                                                          \
        ACC w;                                                                                                 \
        ACC g = ct_optim_grad_##NAME(pp, gp, k, use_wd, false, &w);                                            \
        CT_STORE_##NAME(ap, CT_LERP((ACC)CT_LOAD_##NAME(ap), g, k->w1)); /* exp_avg.lerp_(grad, 1 - beta1) */  \
        const ACC m = (ACC)CT_LOAD_##NAME(ap);                                                                 \
        ACC u = (ACC)CT_LOAD_##NAME(bp) * k->b2; /* exp_inf.mul_(beta2) */                                     \
        const ACC a = FABS(g) + k->eps;          /* grad.abs().add_(eps) */                                    \
        u = (u > a) | (u != u) ? u : a;          /* torch.maximum (NaN-propagating) */                         \
        CT_STORE_##NAME(bp, u);                                                                                \
        CT_STORE_##NAME(pp, w + (-x[0] * m) / (ACC)CT_LOAD_##NAME(bp)); /* addcdiv_(exp_avg, exp_inf, -clr) */ \
    }                                                                                                          \
    /* the first and second moments of NAdam and RAdam (with their weight decay); returns the grad */          \
    CT_HOST_DEVICE ACC ct_moments_##NAME(char *pp, const char *gp, char *ap, char *bp,                         \
                                         const CtOptimConsts##SFX *k, bool use_wd, bool decoupled, ACC *w)     \
    {                                                                                                          \
        const ACC g = ct_optim_grad_##NAME(pp, gp, k, use_wd, decoupled, w);                                   \
        CT_STORE_##NAME(ap, CT_LERP((ACC)CT_LOAD_##NAME(ap), g, k->w1)); /* exp_avg.lerp_(grad, 1 - beta1) */  \
        /* exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2) */                                     \
        CT_STORE_##NAME(bp, (ACC)CT_LOAD_##NAME(bp) * k->b2 + k->c2 * g * g);                                  \
        return g;                                                                                              \
    }                                                                                                          \
    CT_HOST_DEVICE void ct_nadam_elem_##NAME(CT_OPTIM_EXT_ARGS(SFX, ACC))                                       \
    {                                                                                                          \
        ACC w;                                                                                                 \
        const ACC g = ct_moments_##NAME(pp, gp, ap, bp, k, use_wd, decoupled, &w);                             \
        const ACC m = (ACC)CT_LOAD_##NAME(ap);                                                                 \
        const ACC denom = SQRT((ACC)CT_LOAD_##NAME(bp) / x[2]) + k->eps; /* exp_avg_sq.div(bc2).sqrt() + eps */ \
        CT_STORE_##NAME(pp, w + (x[0] * g) / denom); /* param.addcdiv_(grad, denom, value=x0) */               \
        w = (ACC)CT_LOAD_##NAME(pp);                                                                           \
        CT_STORE_##NAME(pp, w + (x[1] * m) / denom); /* param.addcdiv_(exp_avg, denom, value=x1) */            \
    }                                                                                                          \
    CT_HOST_DEVICE void ct_radam_elem_##NAME(CT_OPTIM_EXT_ARGS(SFX, ACC))                                       \
    {                                                                                                          \
        ACC w;                                                                                                 \
        (void)ct_moments_##NAME(pp, gp, ap, bp, k, use_wd, decoupled, &w);                                     \
        ACC u = (ACC)CT_LOAD_##NAME(ap) / x[0] * k->lr; /* exp_avg / bias_correction1 * lr */                  \
        if (flag) {                                                                                            \
            /* * (bias_correction2 ** 0.5 / exp_avg_sq.sqrt().add_(eps)) * rect; scalar / t is               \
             * t.reciprocal() * scalar */                                                                      \
            ACC adaptive = (ACC)1 / (SQRT((ACC)CT_LOAD_##NAME(bp)) + k->eps) * x[1];                           \
            u = u * adaptive * x[2];                                                                           \
        }                                                                                                      \
        CT_STORE_##NAME(pp, w - u); /* param.add_(update, alpha=-1.0) */                                       \
    }                                                                                                          \
    CT_HOST_DEVICE void ct_rprop_elem_##NAME(CT_OPTIM_EXT_ARGS(SFX, ACC))                                       \
    {                                                                                                          \
        ACC w; /* Rprop has no weight decay */                                                                 \
        ACC g = ct_optim_grad_##NAME(pp, gp, k, false, false, &w);                                             \
        const ACC dir = g * (ACC)CT_LOAD_##NAME(ap); /* grad.mul(prev); its sign (0 for NaN) picks the eta */  \
        const ACC eta = dir > 0 ? k->etap : dir < 0 ? k->etam : (ACC)1;                                        \
        ACC ss = (ACC)CT_LOAD_##NAME(bp) * eta;                                                                \
        ss = ss < k->smin ? k->smin : ss; /* .clamp_(step_size_min, step_size_max), NaN kept */                \
        ss = ss > k->smax ? k->smax : ss;                                                                      \
        CT_STORE_##NAME(bp, ss);                                                                               \
        ss = (ACC)CT_LOAD_##NAME(bp);                                                                          \
        if (dir < 0) {                                                                                         \
            g = 0; /* grad[sign.eq(etaminus)] = 0 */                                                           \
        }                                                                                                      \
        const ACC sgn = (ACC)((g > 0) - (g < 0));                                                              \
        CT_STORE_##NAME(pp, w + ((ACC)(-1) * sgn) * ss); /* param.addcmul_(grad.sign(), step_size, value=-1) */ \
        CT_STORE_##NAME(ap, g);                           /* prev.copy_(grad) */                               \
    }                                                                                                          \
    CT_HOST_DEVICE void ct_asgd_elem_##NAME(CT_OPTIM_EXT_ARGS(SFX, ACC))                                        \
    {                                                                                                          \
        ACC w;                                                                                                 \
        ACC g = ct_optim_grad_##NAME(pp, gp, k, use_wd, false, &w);                                            \
        w = w * x[1];                                         /* param.mul_(1 - lambd * eta) */                \
        CT_STORE_##NAME(pp, w + (-x[0]) * g);                 /* param.add_(grad, alpha=-eta) */               \
        w = (ACC)CT_LOAD_##NAME(pp);                                                                           \
        if (flag) {                                                                                            \
            const ACC ax = (ACC)CT_LOAD_##NAME(ap);                                                            \
            CT_STORE_##NAME(ap, ax + (w - ax) * x[2]); /* ax.add_(param.sub(ax).mul_(mu)) */                   \
        } else {                                                                                               \
            CT_STORE_##NAME(ap, w); /* ax.copy_(param) */                                                      \
        }                                                                                                      \
    }

CT_OPTIM_EXT_STAMP(F16, F, float, sqrtf, fabsf)
CT_OPTIM_EXT_STAMP(BF16, F, float, sqrtf, fabsf)
CT_OPTIM_EXT_STAMP(F32, F, float, sqrtf, fabsf)
CT_OPTIM_EXT_STAMP(F64, D, double, sqrt, fabs)
#undef CT_OPTIM_EXT_STAMP
#undef CT_OPTIM_EXT_ARGS

/* The kinds after RMSprop as X(KIND, name, weight decay, decoupled option, per-tensor flag, state tensors):
 * optim.c stamps its loops from it, specialising each on the options the kind has. */
#define CT_OPTIM_EXT_KINDS(X, ...)                     \
    X(ADAGRAD, adagrad, 1, 0, 0, 1, __VA_ARGS__)       \
    X(ADADELTA, adadelta, 1, 0, 0, 2, __VA_ARGS__)     \
    X(ADAMAX, adamax, 1, 0, 0, 2, __VA_ARGS__)         \
    X(NADAM, nadam, 1, 1, 0, 2, __VA_ARGS__)           \
    X(RADAM, radam, 1, 1, 1, 2, __VA_ARGS__)           \
    X(RPROP, rprop, 0, 0, 0, 2, __VA_ARGS__)           \
    X(ASGD, asgd, 1, 0, 1, 1, __VA_ARGS__)

#endif /* CTORCH_OPTIM_MATH_H */
