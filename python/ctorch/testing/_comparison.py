"""torch.testing.assert_close: compares tensors, numbers, None, booleans and (nested) sequences, mappings
and dataclasses of them, with PyTorch's default tolerances per dtype and its error messages.

Comparison runs in two passes as in PyTorch: first every leaf pair is matched up (mismatched lengths or
keys, unsupported types and lone rtol/atol are reported here, without `msg`), then the pairs are compared
and the first failure is raised, its text replaced by `msg` (str) or passed through it (callable)."""
import cmath
import collections.abc
import dataclasses

import numpy as np

from .. import _C

# {dtype: (rtol, atol)}; every other dtype compares exactly
_DTYPE_PRECISIONS = {
    _C.float16: (0.001, 1e-5),
    _C.bfloat16: (0.016, 1e-5),
    _C.float32: (1.3e-6, 1e-5),
    _C.float64: (1e-7, 1e-7),
}
# Python numbers compare with the tolerances of the dtype PyTorch maps them to
_NUMBER_PRECISIONS = {int: (0.0, 0.0), float: _DTYPE_PRECISIONS[_C.float64], complex: (1e-7, 1e-7)}


class _Unsupported(Exception):
    """Raised by a pair's constructor when the inputs are not of its types: the next pair type is tried."""


class _Mismatch(Exception):
    """One failed check: the exception type to raise, its text, and the path to the item in the inputs."""

    def __init__(self, exc_type, text, item=()):
        super().__init__(text)
        self.exc_type, self.text, self.item = exc_type, text, item

    def to_error(self, msg=None):
        if isinstance(msg, str):
            return self.exc_type(msg)
        text = self.text
        if self.item:
            text += "\n\nThe failure occurred for item " + "".join(str([k]) for k in self.item)
        return self.exc_type(msg(text) if callable(msg) else text)


def _tolerances(precisions, rtol, atol, item):
    if (rtol is None) != (atol is None):
        raise _Mismatch(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                    f"but got no {'rtol' if rtol is None else 'atol'}.", item)
    if rtol is not None:
        return rtol, atol
    return max(p[0] for p in precisions), max(p[1] for p in precisions)


def _diff_lines(abs_diff, rel_diff, rtol, atol, abs_idx=None, rel_idx=None):
    """The two 'difference' lines; tolerances are shown unless the comparison is exact."""
    exact = rtol == 0 and atol == 0
    lines = []
    for kind, diff, idx, tol in (("absolute", abs_diff, abs_idx, atol), ("relative", rel_diff, rel_idx, rtol)):
        if idx is None:
            line = f"{kind.title()} difference: {diff}"
        else:
            line = f"Greatest {kind} difference: {diff} at index {idx}"
        lines.append(line if exact else f"{line} (up to {tol} allowed)")
    return lines


def _header(identifier, rtol, atol):
    return f"{identifier} are not {'equal' if rtol == 0 and atol == 0 else 'close'}!\n"


def _scalar_message(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return "\n".join([_header("Scalars", rtol, atol), f"Expected {expected} but got {actual}."]
                     + _diff_lines(abs_diff, rel_diff, rtol, atol))


def _unravel(flat, shape):
    index = []
    for size in reversed(shape):
        flat, rem = divmod(flat, size)
        index.append(rem)
    return tuple(reversed(index))


def _tensor_message(actual, expected, matches, rtol, atol):
    total = matches.numel()
    mismatched = total - int(matches.sum())
    actual, expected, matched = actual.flatten(), expected.flatten(), matches.flatten()
    if not actual.dtype.is_floating_point:
        actual, expected = actual.to(_C.int64), expected.to(_C.int64)
    abs_diff = (actual - expected).abs()
    abs_diff[matched] = 0  # only mismatches count for the greatest differences
    rel_diff = abs_diff / expected.abs()
    rel_diff[matched] = 0
    abs_max, abs_at = _C.max(abs_diff, 0)
    rel_max, rel_at = _C.max(rel_diff, 0)
    shape = tuple(matches.shape)
    return "\n".join([_header("Tensor-likes", rtol, atol), f"Mismatched elements: {mismatched} / {total} "
                      f"({mismatched / total:.1%})"]
                     + _diff_lines(abs_max.item(), rel_max.item(), rtol, atol,
                                   _unravel(int(abs_at), shape), _unravel(int(rel_at), shape)))


# --- leaf pairs: each constructor checks and normalises its inputs (or returns None when the types are
# not its own); compare() raises _Mismatch ---------------------------------------------------------------

class _NonePair:
    def __init__(self, actual, expected, item, opts):
        if actual is not None and expected is not None:
            raise _Unsupported
        self.actual, self.expected, self.item = actual, expected, item

    def compare(self):
        if not (self.actual is None and self.expected is None):
            raise _Mismatch(AssertionError, f"None mismatch: {self.actual} is not {self.expected}", self.item)


class _BoolPair:
    def __init__(self, actual, expected, item, opts):
        if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
            raise _Unsupported
        self.actual, self.expected, self.item = bool(actual), bool(expected), item

    def compare(self):
        if self.actual is not self.expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}", self.item)


class _NumberPair:
    def __init__(self, actual, expected, item, opts):
        if not all(isinstance(x, (int, float, complex, np.number)) for x in (actual, expected)):
            raise _Unsupported
        self.actual, self.expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
        self.item, self.equal_nan, self.check_dtype = item, opts["equal_nan"], opts["check_dtype"]
        precisions = [_NUMBER_PRECISIONS[int if type(x) is bool else type(x)] for x in (self.actual, self.expected)]
        self.rtol, self.atol = _tolerances(precisions, opts["rtol"], opts["atol"], item)

    def compare(self):
        a, e = self.actual, self.expected
        if self.check_dtype and type(a) is not type(e):
            raise _Mismatch(AssertionError, f"The (d)types do not match: {type(a)} != {type(e)}.", self.item)
        if a == e or (self.equal_nan and cmath.isnan(a) and cmath.isnan(e)):
            return
        diff = abs(a - e)
        if cmath.isfinite(diff) and diff <= self.atol + self.rtol * abs(e):
            return
        raise _Mismatch(AssertionError, _scalar_message(a, e, self.rtol, self.atol), self.item)


class _TensorPair:
    def __init__(self, actual, expected, item, opts):
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            raise _Unsupported
        if not opts["allow_subclasses"] and type(actual) is not type(expected):
            raise _Unsupported
        try:
            self.actual, self.expected = (x if isinstance(x, _C.Tensor) else _C.as_tensor(x)
                                          for x in (actual, expected))
        except Exception:
            raise _Unsupported from None
        self.item, self.opts = item, opts
        self.rtol, self.atol = _tolerances([_DTYPE_PRECISIONS.get(t.dtype, (0.0, 0.0))
                                            for t in (self.actual, self.expected)], opts["rtol"], opts["atol"], item)

    def _check_attribute(self, name, actual, expected):
        if actual != expected:
            raise _Mismatch(AssertionError,
                            f"The values for attribute '{name}' do not match: {actual} != {expected}.", self.item)

    def compare(self):
        a, e, opts = self.actual, self.expected, self.opts
        self._check_attribute("shape", a.shape, e.shape)
        # every ctorch tensor is strided: check_layout has nothing to compare
        if opts["check_stride"]:
            self._check_attribute("stride()", a.stride(), e.stride())
        if opts["check_device"]:
            self._check_attribute("device", a.device, e.device)
        if opts["check_dtype"]:
            self._check_attribute("dtype", a.dtype, e.dtype)
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            self._compare_values(a, e)
        finally:
            _C._set_grad_enabled(prev)

    def _compare_values(self, a, e):
        if a.device != e.device:
            a, e = a.cpu(), e.cpu()
        if a.dtype != e.dtype:
            dtype = _C.promote_types(a.dtype, e.dtype)
            a, e = a.to(dtype), e.to(dtype)
        matches = _C.isclose(a, e, rtol=self.rtol, atol=self.atol, equal_nan=self.opts["equal_nan"])
        if bool(matches.all()):
            return
        if a.dim() == 0:
            text = _scalar_message(a.item(), e.item(), self.rtol, self.atol)
        else:
            text = _tensor_message(a, e, matches, self.rtol, self.atol)
        raise _Mismatch(AssertionError, text, self.item)


class _ObjectPair:
    """Dataclasses whose == gives a bool are compared with ==."""

    def __init__(self, actual, expected, item, opts):
        self.actual, self.expected, self.item = actual, expected, item

    def compare(self):
        if not self.actual == self.expected:
            raise _Mismatch(AssertionError, f"{self.actual} != {self.expected}", self.item)


_PAIR_TYPES = (_NonePair, _BoolPair, _NumberPair, _TensorPair)


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _dataclass_fields(actual, expected):
    """The fields to recurse into when both inputs are dataclass instances of one type, else None."""
    if not (dataclasses.is_dataclass(actual) and not isinstance(actual, type) and type(actual) is type(expected)):
        return None
    try:
        if type(actual == expected) is bool:
            return None
    except RuntimeError as error:
        if "Boolean value of Tensor" not in str(error):
            raise
    return [f.name for f in dataclasses.fields(actual) if f.compare]


def _pairs(actual, expected, item, opts):
    """The leaf pairs of two (nested) inputs, in PyTorch's order (sorted keys for mappings)."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError,
                            f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", item)
        return [p for k in range(len(actual)) for p in _pairs(actual[k], expected[k], (*item, k), opts)]
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        keys, other = set(actual.keys()), set(expected.keys())
        if keys != other:
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                                            f"Missing keys in the actual mapping: {sorted(other - keys)}\n"
                                            f"Additional keys in the actual mapping: {sorted(keys - other)}", item)
        try:
            keys = sorted(keys)
        except TypeError:
            pass
        return [p for k in keys for p in _pairs(actual[k], expected[k], (*item, k), opts)]
    fields = None if isinstance(actual, _C.Tensor) else _dataclass_fields(actual, expected)
    if fields is not None:
        return [p for f in fields for p in _pairs(getattr(actual, f), getattr(expected, f), (*item, f), opts)]
    if dataclasses.is_dataclass(actual) and type(actual) is type(expected) and not isinstance(actual, type):
        return [_ObjectPair(actual, expected, item, opts)]
    for pair_type in _PAIR_TYPES:
        try:
            return [pair_type(actual, expected, item, opts)]
        except _Unsupported:
            continue
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                               f"{type(expected)}.", item)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Asserts that actual and expected are close: |actual - expected| <= atol + rtol * |expected| elementwise,
    after checking shape, device, dtype (and stride with check_stride=True). Without rtol/atol, the loosest
    default tolerances of the two dtypes are used (float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5, float32
    1.3e-6/1e-5, float64 1e-7/1e-7, exact otherwise). Sequences and mappings are compared item by item."""
    __tracebackhide__ = True
    opts = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                check_stride=check_stride)
    try:
        pairs = _pairs(actual, expected, (), opts)
    except _Mismatch as failure:
        raise failure.to_error() from None
    for pair in pairs:
        try:
            pair.compare()
        except _Mismatch as failure:
            raise failure.to_error(msg) from None
