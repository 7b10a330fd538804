"""optim.Adagrad (lr_decay, weight decay, initial accumulator, maximize); one C call per group."""
from .. import _C
from ._ext import _check_lr, _ExtOptimizer
from .optimizer import _get_scalar_dtype


class Adagrad(_ExtOptimizer):
    _kind = "adagrad"
    _tensor_keys = ("sum",)
    _option_defaults = {"foreach": None, "maximize": False, "differentiable": False, "fused": None}

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        # PyTorch creates Adagrad's state up front, for every parameter
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _C.tensor(0.0, dtype=_get_scalar_dtype())
                state["sum"] = _C.full_like(p, initial_accumulator_value)

    def _hyper(self, group):
        # a state created later (a param group added after construction) starts from the defaults' value
        return {"weight_decay": group["weight_decay"], "eps": group["eps"], "lr_decay": group["lr_decay"],
                "initial_accumulator_value": self.defaults["initial_accumulator_value"]}
