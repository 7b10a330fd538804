"""optim.Adamax (Adam with the infinity norm; weight decay, maximize); one C call per group."""
from ._ext import _betas, _check_adam_like, _ExtOptimizer


class Adamax(_ExtOptimizer):
    _kind = "adamax"
    _tensor_keys = ("exp_avg", "exp_inf")
    _option_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_adam_like(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _hyper(self, group):
        return {"eps": group["eps"], "weight_decay": group["weight_decay"], **_betas(group)}
