"""optim.Adam and optim.AdamW (PyTorch's update rule, amsgrad, maximize); one C call per group."""
from .. import _C
from .optimizer import Optimizer, _check_capturable, _get_scalar_dtype, _lr_arg, _no_grad_step, _to_scalar

Tensor = _C.Tensor


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float)) or
                (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = (_lr_arg(betas[0]), _lr_arg(betas[1]))  # a tensor beta stays one, as in PyTorch
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _C.tensor(float(p_state["step"]), dtype=_get_scalar_dtype())

    @_no_grad_step
    def step(self):
        for group in self.param_groups:
            params = self._params_with_grad(group)
            if not params:
                continue
            _check_capturable(group, params)
            grads = [p.grad for p in params]
            states = [self.state[p] for p in params]
            amsgrad = group["amsgrad"]
            steps = [s.get("step") for s in states]
            exp_avgs = [s.get("exp_avg") for s in states]
            exp_avg_sqs = [s.get("exp_avg_sq") for s in states]
            max_sqs = [s.get("max_exp_avg_sq") for s in states] if amsgrad else [None] * len(params)
            beta1, beta2 = group["betas"]
            _C._adam_step(params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, _lr_arg(group["lr"]),
                          _lr_arg(beta1), _lr_arg(beta2), group["weight_decay"], group["eps"], amsgrad,
                          group["maximize"], group["decoupled_weight_decay"])
            for i, s in enumerate(states):
                s["step"] = steps[i]
                s["exp_avg"] = exp_avgs[i]
                s["exp_avg_sq"] = exp_avg_sqs[i]
                if amsgrad:
                    s["max_exp_avg_sq"] = max_sqs[i]


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
