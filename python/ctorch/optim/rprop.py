"""optim.Rprop (etas, step size bounds, maximize); one C call per group."""
from ._ext import _check_lr, _ExtOptimizer


class Rprop(_ExtOptimizer):
    _kind = "rprop"
    _tensor_keys = ("prev", "step_size")
    _option_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _hyper(self, group):
        # lr only seeds a new state's step_size (passed as lr by the caller)
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        return {"etaminus": etaminus, "etaplus": etaplus, "step_size_min": step_size_min,
                "step_size_max": step_size_max}
