"""optim.RAdam (rectified Adam; decoupled weight decay, maximize); one C call per group."""
from ._ext import _betas, _check_adam_like, _ExtOptimizer


class RAdam(_ExtOptimizer):
    _kind = "radam"
    _tensor_keys = ("exp_avg", "exp_avg_sq")
    _option_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                        "decoupled_weight_decay": False, "capturable": False}

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_adam_like(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _hyper(self, group):
        return {"eps": group["eps"], "weight_decay": group["weight_decay"],
                "decoupled_weight_decay": group["decoupled_weight_decay"], **_betas(group)}
