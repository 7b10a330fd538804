"""optim.RMSprop (alpha, eps, weight decay, momentum, centered, maximize); one C call per group."""
from .. import _C
from .optimizer import Optimizer, _check_capturable, _no_grad_step, _to_scalar

Tensor = _C.Tensor


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    @_no_grad_step
    def step(self):
        for group in self.param_groups:
            params = self._params_with_grad(group)
            if not params:
                continue
            _check_capturable(group, params)
            grads = [p.grad for p in params]
            states = [self.state[p] for p in params]
            momentum, centered = group["momentum"], group["centered"]
            steps = [s.get("step") for s in states]
            square_avgs = [s.get("square_avg") for s in states]
            grad_avgs = [s.get("grad_avg") for s in states]
            buffers = [s.get("momentum_buffer") for s in states]
            _C._rmsprop_step(params, grads, square_avgs, grad_avgs, buffers, steps, _to_scalar(group["lr"]),
                             group["alpha"], group["eps"], group["weight_decay"], momentum, centered,
                             group["maximize"])
            for i, s in enumerate(states):
                s["step"] = steps[i]
                s["square_avg"] = square_avgs[i]
                if momentum > 0:
                    s["momentum_buffer"] = buffers[i]
                if centered:
                    s["grad_avg"] = grad_avgs[i]
