"""ctorch.nn.utils.weight_norm: the deprecated hook-based weight normalization, as
torch.nn.utils.weight_norm: module.weight becomes weight_g * weight_v / ||weight_v|| (the norm over
every dim but `dim`), recomputed by a forward pre-hook from the parameters weight_g and weight_v.

Also the two tensor functions both weight norms use, torch.norm_except_dim and torch._weight_norm,
composed of recording ops (so the weight's grad_fn is MulBackward0 where PyTorch's fused CPU/CUDA
kernel gives WeightNormInterfaceBackward0; the values and gradients are the same)."""
import warnings

from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _norm_except_dim(v, pow=2, dim=0):
    """The pow-norm of v over every dim but dim, shaped to broadcast against v (1 everywhere but
    dim); dim=-1 means over the whole tensor (a 0-d result), as torch.norm_except_dim."""
    if dim == -1:
        return v.norm(pow)
    ndim = v.dim()
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    dim %= ndim
    shape = [1] * ndim
    shape[dim] = v.size(dim)
    return v.transpose(0, dim).reshape(v.size(dim), -1).norm(pow, 1).reshape(shape)


def _weight_norm(v, g, dim=0):
    """v * (g / ||v||), the norm over every dim but dim (the whole tensor for dim=-1)."""
    return v * (g / _norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes module.<name> from <name>_g and <name>_v."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Replaces module.<name> by the parameters <name>_g (magnitude) and <name>_v (direction);
    dim=None normalizes over the whole tensor. Deprecated in PyTorch in favour of
    nn.utils.parametrizations.weight_norm. Returns module."""
    WeightNorm.apply(module, name, dim)
    return module


def _remove_hook(module, kind, name, label):
    """Removes module's forward pre-hook of class kind on name (folding its tensors back into one
    parameter); PyTorch's ValueError when there is none."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return
    raise ValueError(f"{label} of '{name}' not found in {module}")


def remove_weight_norm(module, name="weight"):
    """Folds <name>_g and <name>_v back into one parameter <name>. Returns module."""
    _remove_hook(module, WeightNorm, name, "weight_norm")
    return module
