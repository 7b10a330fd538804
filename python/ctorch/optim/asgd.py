"""optim.ASGD (averaged SGD: lambd, alpha, t0, weight decay, maximize); one C call per group."""
from ._ext import _check_lr, _ExtOptimizer


class ASGD(_ExtOptimizer):
    _kind = "asgd"
    _tensor_keys = ("ax",)
    _scalar_keys = ("eta", "mu")
    _capturable_what = "params, mus, etas, and state_steps"
    _option_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= lambd:
            raise ValueError(f"Invalid lambd value: {lambd}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _hyper(self, group):
        return {"lambd": group["lambd"], "alpha": group["alpha"], "t0": group["t0"],
                "weight_decay": group["weight_decay"]}
