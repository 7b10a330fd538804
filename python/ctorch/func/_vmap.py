"""ctorch.func.vmap, by its definition: a loop over the mapped dimension.

PyTorch's vmap pushes the batch dimension into every operator through batching rules. ctorch
has no batching rules, so vmap(func) runs `func` once per index along the mapped dimension
(each mapped input replaced by its slice there, `Tensor.select`, a view) and stacks the
per-sample results along `out_dims`. For functions without side effects this gives PyTorch's
results exactly; it is a loop, not a speed-up.

Where the loop differs from batching rules:
- it is more permissive: data-dependent Python control flow, `.item()` and outputs whose values
  depend on the sample work here, where PyTorch raises;
- an output with out_dim None must not depend on the mapped inputs: PyTorch knows whether it is
  batched, the loop compares the per-sample results and raises PyTorch's error when they differ;
- a mapped dimension of size 0 runs `func` once on zero-filled samples to learn the output's
  shape, and returns an empty result of that shape (an out_dim None output is then returned as
  that call gave it: with no samples to compare, the loop cannot tell that it is batched);
- randomness is watched through the default generators (CPU, and CUDA once initialised): a
  random op drawing from a Generator object of its own is not seen. 'same' restores the
  generators before each sample, so every sample draws the same numbers; 'different' lets the
  draws go on, so each sample draws its own (not the numbers PyTorch's single batched draw gives).
"""
import functools

from .. import _C
from .._C import Tensor
from ..utils._pytree import _broadcast_to_and_flatten, tree_flatten, tree_map_, tree_unflatten

__all__ = ["vmap"]

_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the "
                 "'same' or 'different' randomness flags on vmap or perform the randomness operation out of vmap")


def _check_randomness_arg(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


def _get_name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


# --- random generators -----------------------------------------------------------------------------

def _default_generators():
    """The default generators a random op without generator= draws from: the CPU one and, once
    CUDA is initialised, each device's (asking for them earlier would initialise CUDA)."""
    from .. import cuda

    gens = [_C.default_generator]
    if cuda.is_initialized():
        gens += [_C._default_generator(f"cuda:{i}") for i in range(cuda.device_count())]
    return gens


class _RandomnessGuard:
    """Enforces vmap's `randomness` around each call of func on one sample."""

    def __init__(self, randomness):
        self.randomness = randomness
        self.gens = _default_generators() if randomness != "different" else []
        self.states = [g.get_state() for g in self.gens]
        self.marks = self._marks()

    def _marks(self):
        # seed and offset move with every draw (and with a re-seeding), cheaper than the state
        return [(g.initial_seed(), g.get_offset()) for g in self.gens]

    def _restore(self):
        for g, state in zip(self.gens, self.states):
            g.set_state(state)

    def before_sample(self, index):
        if self.randomness == "same" and index > 0:
            self._restore()

    def after_sample(self):
        if self.randomness == "error" and self._marks() != self.marks:
            self._restore()  # as if the draw had not happened, as in PyTorch that raises before it
            raise RuntimeError(_RANDOM_ERROR)


# --- inputs ----------------------------------------------------------------------------------------

def _process_batched_inputs(in_dims, args, func):
    """(batch size, flat in_dims normalised to >= 0, flat args, args spec), with PyTorch's errors."""
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, args_spec = tree_flatten(args)
    flat_in_dims = _broadcast_to_and_flatten(in_dims, args_spec)
    if flat_in_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs "
                         f"has structure {args_spec}.")
    for i, (arg, in_dim) in enumerate(zip(flat_args, flat_in_dims)):
        if in_dim is None:
            continue
        if not isinstance(in_dim, int):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input "
                             "but in_dim must be either an integer dimension or None.")
        if not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input "
                             f"but the input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, "
                             "please use None as the respective in_dim")
        ndim = arg.dim()
        if in_dim < -ndim or in_dim >= ndim:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for some "
                             f"input, but that input is a Tensor of dimensionality {ndim} so expected in_dim to "
                             f"satisfy -{ndim} <= in_dim < {ndim}.")
        flat_in_dims[i] = in_dim % ndim
    sizes = [arg.size(d) for arg, d in zip(flat_args, flat_in_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, "
                         f"got sizes {sizes} for the mapped dimension")
    return sizes[0], flat_in_dims, flat_args, args_spec


def _sample_args(flat_args, flat_in_dims, args_spec, index):
    """The arguments of sample `index`: each mapped tensor's slice there (a view); index None:
    zero-filled samples of the right shape (a mapped dimension of size 0 has no slice to take)."""
    sample = []
    for arg, d in zip(flat_args, flat_in_dims):
        if d is None:
            sample.append(arg)
        elif index is None:
            shape = list(arg.shape)
            del shape[d]
            sample.append(arg.new_zeros(shape))
        else:
            sample.append(arg.select(d, index))
    return tree_unflatten(sample, args_spec)


# --- outputs ---------------------------------------------------------------------------------------

def _check_out_dims(out_dims, func):
    def check(x):
        if x is not None and not isinstance(x, int):
            raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None "
                             "or a python collection of ints representing where in the outputs the vmapped "
                             "dimension should appear.")

    if not isinstance(out_dims, int):
        tree_map_(check, out_dims)


def _flat_out_dims(out_dims, output, output_spec, func):
    """out_dims laid over the outputs' leaves, with PyTorch's error when they do not fit."""
    flat = None
    if isinstance(output, Tensor):
        # a single tensor takes an int, None or a 1-tuple
        if out_dims is None or isinstance(out_dims, int):
            flat = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            flat = list(out_dims)
    else:
        flat = _broadcast_to_and_flatten(out_dims, output_spec)
    if flat is None:
        raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                         f"with the structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but "
                         f"outputs has structure {output_spec}.")
    return flat


def _combine(name, samples, out_dim, empty):
    """One output leaf from its per-sample values: stacked along out_dim, or (out_dim None) the
    common value. `empty`: samples hold one probe of a mapped dimension of size 0."""
    first = samples[0]
    if out_dim is None:
        if isinstance(first, Tensor) and not empty:
            for s in samples[1:]:
                if s is not first and not (isinstance(s, Tensor) and s.shape == first.shape
                                           and bool(_C.equal(s, first))):
                    # it differs between samples, so it depends on the mapped inputs: batched
                    raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                     "when out_dim is None")
        return first
    for s in samples:
        if not isinstance(s, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(s)}. "
                             "Did you mean to set out_dims= to None for output?")
    if empty:
        return _C.stack([first], out_dim).narrow(out_dim, 0, 0).clone()
    shapes = {tuple(s.shape) for s in samples}
    if len(shapes) > 1:
        raise RuntimeError(f"vmap({name}, ...): `{name}` returned tensors of different shapes for different "
                           f"samples ({sorted(shapes)}); vmap needs one output shape for every sample")
    return _C.stack(samples, out_dim)


def _flat_vmap(func, batch_size, flat_in_dims, flat_args, args_spec, out_dims, randomness, kwargs):
    name = _get_name(func)
    empty = batch_size == 0
    guard = _RandomnessGuard(randomness)
    per_sample = []  # flat outputs of each sample
    output_spec = flat_dims = None
    for index in range(max(batch_size, 1)):
        guard.before_sample(index)
        output = func(*_sample_args(flat_args, flat_in_dims, args_spec, None if empty else index), **kwargs)
        guard.after_sample()
        flat_output, spec = tree_flatten(output)
        if output_spec is None:
            output_spec = spec
            flat_dims = _flat_out_dims(out_dims, output, spec, func)
        elif spec != output_spec:
            raise ValueError(f"vmap({name}, ...): `{name}` returned outputs of different structures for "
                             f"different samples: {output_spec} and {spec}")
        per_sample.append(flat_output)
    leaves = [_combine(name, [flat[k] for flat in per_sample], d, empty) for k, d in enumerate(flat_dims)]
    return tree_unflatten(leaves, output_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """vmap(func, in_dims=0, out_dims=0, randomness='error', *, chunk_size=None): `func` mapped over
    dimension `in_dims` of its inputs (a pytree of ints/None matching the positional arguments;
    keyword arguments are passed unmapped), its outputs stacked along `out_dims`.

    ctorch runs func once per sample (see this module's docstring): the results are PyTorch's,
    the speed is a Python loop's. chunk_size is accepted and checked; with a loop it changes
    nothing. randomness: 'error' raises if func draws random numbers, 'different' lets each
    sample draw its own, 'same' gives every sample the same draws."""
    _check_randomness_arg(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        batch_size, flat_in_dims, flat_args, args_spec = _process_batched_inputs(in_dims, args, func)
        return _flat_vmap(func, batch_size, flat_in_dims, flat_args, args_spec, out_dims, randomness, kwargs)

    return wrapped
