"""ctorch.nn.utils.spectral_norm: the hook-based spectral normalization, as
torch.nn.utils.spectral_norm: module.weight becomes weight_orig / sigma, sigma estimated by power
iteration on weight_orig (reshaped to a matrix with `dim` as rows) from the buffers weight_u and
weight_v, which advance n_power_iterations steps at each forward in training mode. state_dict
records the hook's version in its metadata; loading a version-0 state dict (weight, weight_orig,
weight_u, no weight_v) solves for weight_v as PyTorch does."""
from ... import _C, contiguous_format, linalg
from ..functional import normalize
from ..parameter import Parameter
from ...autograd.grad_mode import no_grad
from .weight_norm import _remove_hook

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook", "spectral_norm",
           "remove_spectral_norm"]


def _default_dim(module):
    # a transposed convolution's weight is (in, out, ...): its outputs are dim 1
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


def _check_power_iterations(n_power_iterations):
    if n_power_iterations <= 0:
        raise ValueError("Expected n_power_iterations to be positive, but "
                         f"got n_power_iterations={n_power_iterations}")


def _weight_to_matrix(weight, dim):
    """weight with dim moved first, flattened to (weight.size(dim), -1)."""
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.dim()) if d != dim])
    return weight.reshape(weight.size(0), -1)


class SpectralNorm:
    """The forward pre-hook that recomputes module.<name> = <name>_orig / sigma."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        _check_power_iterations(n_power_iterations)
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        return _weight_to_matrix(weight, self.dim)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            # u and v are updated in place (they are the module's buffers); the clones keep the
            # values this forward used for its backward
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v = normalize(_C.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = normalize(_C.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                u = u.clone(memory_format=contiguous_format)
                v = v.clone(memory_format=contiguous_format)
        sigma = _C.dot(u, _C.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # v with u = W v / ||W v|| (least squares through the pseudo-inverse of W^T W), scaled so
        # that u^T W v is target_sigma
        v = linalg.multi_dot([linalg.pinv(weight_mat.t().mm(weight_mat)), weight_mat.t(),
                                 u.unsqueeze(1)]).squeeze(1)
        return v.mul_(target_sigma / _C.dot(u, _C.mv(weight_mat, v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # a plain attribute until the first forward: weight_orig's values without autograd history
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Upgrades a version-0 state dict (weight, weight_orig, weight_u) on load."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if (version is None and all(weight_key + s in state_dict for s in ("_orig", "_u", "_v"))
                and weight_key not in state_dict):
            return  # saved without metadata by a current version
        missing = [weight_key + s for s in ("_orig", "", "_u") if weight_key + s not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + "_u"]
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records the hook's version in state_dict metadata['spectral_norm']."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Replaces module.<name> by <name>_orig / sigma(<name>_orig), with the power-iteration vectors
    in the buffers <name>_u and <name>_v. dim (the output dim) defaults to 0, 1 for ConvTranspose.
    Returns module."""
    if dim is None:
        dim = _default_dim(module)
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Folds <name>_orig / sigma back into one parameter <name> and removes the hooks. Returns module."""
    _remove_hook(module, SpectralNorm, name, "spectral_norm")
    for hooks, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for key, hook in hooks.items():
            if isinstance(hook, kind) and hook.fn.name == name:
                del hooks[key]
                break
    return module
