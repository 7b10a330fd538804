"""optim.Adafactor (PyTorch 2.5+): factored second moment (row/column means of grad^2) for >=2-d
parameters, full second moment for vectors; relative step size, update clipping by d. Written with
tensor ops, one parameter at a time (foreach is accepted and gives the same numbers)."""
import math

from .. import _C, finfo, tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _get_scalar_dtype, _lr_arg


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, _C.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _state_for(self, p):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = tensor(0.0, dtype=_get_scalar_dtype())
            g = p.grad
            if g.dim() > 1:
                state["row_var"] = g.new_zeros(list(g.shape[:-1]) + [1])
                state["col_var"] = g.new_zeros(list(g.shape[:-2]) + [1, g.shape[-1]])
            else:
                state["variance"] = g.new_zeros(g.shape)
        return state

    @no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _lr_arg(group["lr"])
            eps1, eps2 = group["eps"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                if getattr(p.grad, "is_sparse", False):
                    raise RuntimeError("Adafactor does not support sparse gradients")
                state = self._state_for(p)
                grad = -p.grad if group["maximize"] else p.grad
                if eps1 is None:  # PyTorch fixes eps1 from the first parameter's dtype for the whole group
                    eps1 = finfo(p.dtype).eps
                state["step"] += 1
                t = state["step"].item()
                beta2_weight = t ** group["beta2_decay"]
                rho = min(lr, 1 / math.sqrt(t))
                alpha = max(eps2, p.norm(2).item() / math.sqrt(p.numel())) * rho
                if group["weight_decay"] != 0:
                    p.mul_(1 - lr * group["weight_decay"])
                if grad.dim() > 1:
                    sq = grad * grad
                    state["row_var"].lerp_(sq.mean(dim=-1, keepdim=True), beta2_weight)
                    state["col_var"].lerp_(sq.mean(dim=-2, keepdim=True), beta2_weight)
                    row = state["row_var"]
                    var = (row @ state["col_var"]) / row.mean(dim=-2, keepdim=True).clamp(min=eps1)
                else:
                    state["variance"].lerp_(grad * grad, beta2_weight)
                    var = state["variance"].clone()
                update = var.clamp(min=eps1 * eps1).rsqrt() * grad
                denom = max(1.0, update.norm(2).item() / (math.sqrt(update.numel()) * group["d"]))
                p.add_(update, alpha=-alpha / denom)
        return loss
