"""optim.Muon: momentum, then the update orthogonalised by a quintic Newton-Schulz iteration (in
bfloat16, as PyTorch's), decoupled weight decay and a shape-dependent learning-rate scale. 2-d
parameters only."""
import math

from .. import _C, addmm, bfloat16
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _lr_arg

_ADJUST_LR_FNS = ("original", "match_rms_adamw", "spectral_unclamped")


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """X / |X| iterated ns_steps times by X <- a X + (b G + c G^2) X with G = X X^T (wide orientation)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    x = grad.to(dtype=bfloat16, copy=True)
    if tall:
        x = x.T
    x = x / x.norm().clamp(min=eps)
    for _ in range(ns_steps):
        gram = x @ x.T
        x = addmm(x, addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, shape):
    """lr times the shape's ratio (PyTorch's order: the ratio first, so a tensor lr takes one rounding)."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    elif adjust_lr_fn == "spectral_unclamped":
        ratio = math.sqrt(rows / cols)
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(3.4445, -4.775, 2.0315), eps=1e-7, ns_steps=5, adjust_lr_fn=None):
        if isinstance(lr, _C.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in _ADJUST_LR_FNS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
                    "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps,
                    "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, momentum = _lr_arg(group["lr"]), group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Muon does not support complex parameters")
                grad = p.grad
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = grad.new_zeros(grad.shape)
                buf = state["momentum_buffer"]
                buf.lerp_(grad, 1 - momentum)
                update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"],
                                                     group["eps"])
                p.mul_(1 - lr * group["weight_decay"])
                p.add_(update, alpha=-_adjust_lr(lr, group["adjust_lr_fn"], p.shape))
        return loss
