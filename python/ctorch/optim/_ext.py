"""The optimizers whose update is one _C._optim_step call per parameter group (Adagrad, Adadelta, Adamax,
NAdam, RAdam, Rprop, ASGD): the state lists are gathered here, the update rules live in C (csrc/optim.c,
csrc/optim_math.h)."""
from .. import _C
from .optimizer import Optimizer, _check_capturable, _get_scalar_dtype, _lr_arg, _no_grad_step, _to_scalar

Tensor = _C.Tensor


class _ExtOptimizer(Optimizer):
    # set by each subclass: the C kind, the names of its state tensors and of its 0-d states besides
    # "step" (in PyTorch's state-dict order: step, the 0-d states, the tensors), and the group options
    # that __setstate__ fills in when a loaded state dict lacks them
    _kind = None
    _tensor_keys = ()
    _scalar_keys = ()
    _option_defaults = {}
    _capturable_what = "params and state_steps"  # the tensors named by the capturable device error
    _capturable_xla = True

    def _hyper(self, group):
        """The keyword arguments of _C._optim_step for group, besides lr and maximize."""
        raise NotImplementedError

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, value in self._option_defaults.items():
                group.setdefault(key, value)
            for p in group["params"]:
                p_state = self.state.get(p, {})
                for key in ("step",) + self._scalar_keys:
                    if key in p_state and not isinstance(p_state[key], Tensor):
                        p_state[key] = _C.tensor(float(p_state[key]), dtype=_get_scalar_dtype())

    @_no_grad_step
    def step(self):
        for group in self.param_groups:
            params = self._params_with_grad(group)
            if not params:
                continue
            _check_capturable(group, params, self._capturable_what, self._capturable_xla)
            states = [self.state[p] for p in params]
            steps = [s.get("step") for s in states]
            scalars = [[s.get(k) for s in states] for k in self._scalar_keys]
            tensors = [[s.get(k) for s in states] for k in self._tensor_keys]
            _C._optim_step(self._kind, params, [p.grad for p in params], tensors, steps, scalars,
                           _lr_arg(group["lr"]), maximize=group["maximize"], **self._hyper(group))
            for i, s in enumerate(states):
                s["step"] = steps[i]
                for key, values in zip(self._scalar_keys + self._tensor_keys, scalars + tensors):
                    s[key] = values[i]


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_adam_like(lr, betas, eps, weight_decay):
    """The checks Adamax, NAdam and RAdam share with Adam, in its order."""
    _check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _betas(group):
    beta1, beta2 = group["betas"]
    return {"beta1": _to_scalar(beta1), "beta2": _to_scalar(beta2)}
