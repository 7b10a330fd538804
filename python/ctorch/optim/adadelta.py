"""optim.Adadelta (rho, eps, weight decay, maximize); one C call per group."""
from ._ext import _check_lr, _ExtOptimizer


class Adadelta(_ExtOptimizer):
    _kind = "adadelta"
    _tensor_keys = ("square_avg", "acc_delta")
    _capturable_xla = False
    _option_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _hyper(self, group):
        return {"rho": group["rho"], "eps": group["eps"], "weight_decay": group["weight_decay"]}
