"""ctorch.random: seeding and generator-state helpers, as torch.random.

The generators themselves (ctorch.Generator, the per-device default generators) are in the C
core (csrc/random.c); this module only gathers them under PyTorch's names."""
import contextlib

from . import _C
from ._C import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: F401


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True):
    """Saves the CPU default generator's state (and those of the given devices' default
    generators, e.g. devices=["cuda:0"]) and restores them on exit."""
    if not enabled:
        yield
        return
    saved = [(None, get_rng_state())]
    for d in devices or ():
        saved.append((d, _C._default_generator(d).get_state()))
    try:
        yield
    finally:
        for d, state in saved:
            if d is None:
                set_rng_state(state)
            else:
                _C._default_generator(d).set_state(state)
