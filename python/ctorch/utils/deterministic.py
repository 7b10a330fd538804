"""ctorch.utils.deterministic: the fill_uninitialized_memory switch of use_deterministic_algorithms.

``fill_uninitialized_memory`` (True by default): while ``ctorch.use_deterministic_algorithms(True)`` is in
force, empty(), empty_like() and Tensor.new_empty() fill their memory with NaN (floating dtypes) or the
dtype's maximum (integers; True for bool), so that reading it gives the same values every run. The value
lives in ctorch._C, where those factories read it."""
import sys
import types

from .. import _C


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self):
        """Whether to fill uninitialized memory with a known value when
        ctorch.use_deterministic_algorithms() is set to True."""
        return _C._get_deterministic_fill_uninitialized_memory()

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode):
        _C._set_deterministic_fill_uninitialized_memory(mode)


sys.modules[__name__].__class__ = _Deterministic
