"""optim.Optimizer: parameter groups, per-parameter state, zero_grad and state_dict handling with
PyTorch's format and messages. The update rules live in C (csrc/optim.c); subclasses only gather
each group's tensors into lists and make one _C call per group."""
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

from .. import _C
from ..autograd.grad_mode import enable_grad, no_grad

Tensor = _C.Tensor


class _RequiredParameter:
    """Singleton for a default that must be given per group."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    from ..nn.modules.module import _typename as tn

    return tn(obj)


_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()
_HOOK_DICTS = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
               "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
               "_optimizer_load_state_dict_post_hooks")


def _add_hook(hooks, hook, prepend=False):
    from ..nn.modules.module import _add_hook as add

    return add(hooks, hook, prepend=prepend)


def register_optimizer_step_pre_hook(hook):
    """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), run before every optimizer's step."""
    return _add_hook(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """hook(optimizer, args, kwargs) -> None, run after every optimizer's step."""
    return _add_hook(_global_optimizer_post_hooks, hook)


def _hooked_step(func):
    """Wraps a class's step so that it runs the global and per-optimizer step hooks around it."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        self = args[0]
        for pre_hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is None:
                continue
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError(f"{func} must return None or a tuple of (new_args, new_kwargs), but got {result}.")
            args, kwargs = result
        out = func(*args, **kwargs)
        for post_hook in chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    wrapper.hooked = True
    return wrapper


def _to_scalar(x):
    if isinstance(x, Tensor):
        return x.item()
    return x


_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]


def _check_capturable(group, params, what="params and state_steps", xla=True):
    """PyTorch's error for capturable=True with parameters on a device that cannot capture (the CPU);
    Adadelta's list leaves out xla."""
    devices = _CAPTURABLE_DEVICES if xla else _CAPTURABLE_DEVICES[:-1]
    if group.get("capturable") and any(p.device.type not in devices for p in params):
        raise AssertionError(f"If capturable=True, {what} must be on supported devices: {devices}.")


def _get_scalar_dtype():
    """The dtype of the 0-d states (step, ...): float64 under a float64 default dtype, else float32."""
    return _C.float64 if _C.get_default_dtype() == _C.float64 else _C.float32


def _lr_arg(lr):
    """lr as the C steps take it: a number, or a tensor lr (one element) kept as a tensor, since PyTorch
    does the scalar arithmetic on it (lr * weight_decay, lr / bias_correction, ...) in its dtype."""
    if isinstance(lr, Tensor) and lr.dim() != 0:
        return lr.reshape(())
    return lr


class Optimizer:
    """Base class of all optimizers."""

    def __init__(self, params, defaults):
        self._init_hooks()
        if not getattr(type(self).step, "hooked", False):
            type(self).step = _hooked_step(type(self).step)
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                            "got " + _typename(params))
        if isinstance(params, set):
            warnings.warn("optimizer parameters need to be organized in ordered collections, but the ordering of "
                          "tensors in sets will change between runs. Please use a list instead. This will be an error "
                          "in a future release.", FutureWarning, stacklevel=3)
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._init_hooks()

    def _init_hooks(self):
        for name in _HOOK_DICTS:
            if name not in self.__dict__:
                self.__dict__[name] = OrderedDict()

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), run before step."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None, run after step."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer) -> None, run before state_dict builds its result."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> None or a new state_dict, run on state_dict's result."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> None or the state_dict to load, run before loading."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer) -> None, run after load_state_dict."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\n"
            text += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        text += ")"
        return text

    def add_param_group(self, param_group):
        """Adds a group of parameters (a dict with 'params' and per-group options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        extracted, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):  # named parameters: (name, tensor)
                names.append(p[0])
                extracted.append(p[1])
            else:
                extracted.append(p)
        if names:
            if len(names) != len(extracted):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["params"] = extracted
            param_group["param_names"] = names
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)
        param_set = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current} to the optimizer")
        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Resets the gradients of every optimized tensor (to None by default)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    def _closure_loss(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # --- state dict ------------------------------------------------------------------------------------------
    def state_dict(self):
        """{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]} as PyTorch."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups, key=None):
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False) or False
                capturable = pg.get("capturable", False) or False
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=_C.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict):
        """Loads optimizer state (as returned by state_dict), casting state tensors to their params."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, param_id=None, param_groups=None, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(param, value, param_id, param_groups, key)
            if isinstance(value, dict):
                return {k: cast(param, v, param_id=param_id, param_groups=param_groups, key=k)
                        for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v, param_id=param_id, param_groups=param_groups) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, param_id=k, param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    def _params_with_grad(self, group):
        return [p for p in group["params"] if p.grad is not None]


def _no_grad_step(step):
    """Runs an optimizer's step under no_grad (the C kernels do not record anyway; this mirrors
    PyTorch for closures and any Python-side tensor work)."""
    import functools

    @functools.wraps(step)
    def wrapper(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            step(self)
        return loss

    return wrapper
