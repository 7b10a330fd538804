"""ctorch.cuda.random: the CUDA generators' seeds and states, as torch.cuda.random. The seeds are
stored without touching the GPU (PyTorch seeds lazily too); states need the generator."""
import os

from .. import _C
from . import current_device, device_count, is_initialized  # noqa: F401 (as torch.cuda.random has them)
from ._utils import _resolve

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed"]


def manual_seed(seed):
    """Seeds the generator of the current device."""
    _C._cuda_manual_seed(-1, int(seed))


def manual_seed_all(seed):
    """Seeds the generators of every device."""
    _C._cuda_manual_seed_all(int(seed))


def seed():
    """Seeds the current device's generator with a random number."""
    manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)


def seed_all():
    manual_seed_all(int.from_bytes(os.urandom(8), "little") >> 1)


def initial_seed():
    """The seed of the current device's generator."""
    return _C._cuda_initial_seed(-1)


def _generator(device):
    """The default generator of a device (int, 'cuda', 'cuda:N', ctorch.device; None: current)."""
    return _C._default_generator(f"cuda:{_resolve(device)}")


def get_rng_state(device="cuda"):
    """The state of ``device``'s default generator, a uint8 CPU tensor (seed and offset)."""
    return _generator(device).get_state()


def set_rng_state(new_state, device="cuda"):
    """Restores ``device``'s default generator from get_rng_state()."""
    _generator(device).set_state(new_state)


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)
