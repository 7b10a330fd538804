"""optim.SGD: PyTorch's SGD (momentum, dampening, weight decay, Nesterov, maximize); the update of a
whole parameter group is one C call (csrc/optim.c)."""
from .. import _C
from .optimizer import Optimizer, _no_grad_step, _to_scalar

Tensor = _C.Tensor


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach, "differentiable": differentiable,
                    "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    @_no_grad_step
    def step(self):
        for group in self.param_groups:
            params = self._params_with_grad(group)
            if not params:
                continue
            grads = [p.grad for p in params]
            momentum = group["momentum"]
            buffers = [self.state[p].get("momentum_buffer") for p in params] if momentum != 0 else [None] * len(
                params)
            _C._sgd_step(params, grads, buffers, _to_scalar(group["lr"]), momentum, group["dampening"],
                         _to_scalar(group["weight_decay"]), group["nesterov"], group["maximize"])
            if momentum != 0:
                for p, buf in zip(params, buffers):
                    self.state[p]["momentum_buffer"] = buf
