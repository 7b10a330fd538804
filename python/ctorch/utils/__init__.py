"""ctorch.utils: hooks and data loading helpers."""
from . import data, deterministic, dlpack, hooks  # noqa: E402,F401
from . import benchmark, checkpoint  # noqa: E402,F401
