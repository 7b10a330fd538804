"""torch.multiprocessing: Python's multiprocessing with reductions that send CPU tensors and storages through
shared memory (reductions.py), so a tensor put on a Queue or Pipe is the same memory in both processes, plus
spawn / start_processes (spawn.py) and the sharing strategies."""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from .. import _C
from .reductions import init_reductions
from .spawn import (  # noqa: F401
    ProcessContext,
    ProcessException,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__

_sharing_strategy = "file_descriptor"
_all_sharing_strategies = {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy):
    """Sets the strategy for sharing CPU tensors: one of get_all_sharing_strategies()."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}")
    _C._set_sharing_strategy(new_strategy)
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    """The current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies():
    """The sharing strategies this system supports."""
    return _all_sharing_strategies


init_reductions()
