"""optim.NAdam (momentum decay, decoupled weight decay, maximize); one C call per group."""
from ._ext import _betas, _check_adam_like, _ExtOptimizer


class NAdam(_ExtOptimizer):
    _kind = "nadam"
    _tensor_keys = ("exp_avg", "exp_avg_sq")
    _scalar_keys = ("mu_product",)
    _capturable_what = "params, mu_products and state_steps"
    _option_defaults = {"maximize": False, "foreach": None, "capturable": False, "differentiable": False,
                        "decoupled_weight_decay": False}

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_adam_like(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _hyper(self, group):
        return {"eps": group["eps"], "weight_decay": group["weight_decay"], "momentum_decay": group["momentum_decay"],
                "decoupled_weight_decay": group["decoupled_weight_decay"], **_betas(group)}
