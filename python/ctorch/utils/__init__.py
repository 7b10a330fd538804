"""ctorch.utils: hooks and data loading helpers."""
from . import data, dlpack, hooks  # noqa: E402,F401
