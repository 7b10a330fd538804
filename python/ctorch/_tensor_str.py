"""Text form of a tensor: the formatter behind ``repr(tensor)`` and ``str(tensor)``.

The C core hands ``tensor_repr`` a NumPy copy of the tensor's data plus its dtype and device
names; everything here is plain Python over that array, so the output can be checked against
PyTorch's without building the extension. The rules follow PyTorch's ``torch/_tensor_str.py``
(re-implemented, not copied), including its quirks, because the goal is byte-identical text:

* one width for every element, found from the (summarised) data;
* floats print in one of three modes: "int mode" (all finite values integral: ``1.``),
  fixed (``1.2346``) or scientific (``1.2346e+05``), chosen from the range of the nonzero
  finite magnitudes; ``set_printoptions(sci_mode=...)`` overrides the choice;
* tensors with more than ``threshold`` elements show ``edgeitems`` rows at each end of every
  long dimension with ``...`` between;
* suffixes (device, size, dtype, then the caller's ``requires_grad``/``grad_fn``) wrap onto a
  new line when they would pass ``linewidth``.

``set_printoptions``/``get_printoptions``/``printoptions`` keep PyTorch's names and defaults.
"""
import contextlib
import math

import numpy as np

__all__ = ["set_printoptions", "get_printoptions", "printoptions", "tensor_repr"]


# --------------------------------------------------------------------------------------------
# Print options
# --------------------------------------------------------------------------------------------

class _PrintOptions:
    """The live print options; one module-level instance, read on every repr."""

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


PRINT_OPTS = _PrintOptions()

# profile name -> (precision, threshold, edgeitems, linewidth)
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    r"""Set options for printing tensors (same names, defaults and behaviour as PyTorch).

    Args:
        precision: digits after the decimal point for floating point output (default 4).
        threshold: number of elements above which the text is summarised (default 1000).
        edgeitems: items shown at the start and end of each summarised dimension (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``'default'``, ``'short'`` or ``'full'``; sets the four options above, which
            explicit arguments then override.
        sci_mode: True or False forces scientific notation on or off; None (the default)
            lets the formatter choose. As in PyTorch, every call sets it, so a call without
            ``sci_mode`` returns it to None.
    """
    if profile is not None:
        # Like PyTorch, an unknown profile name is silently ignored.
        if profile in _PROFILES:
            (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
             PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    r"""Return the current print options as a dict (keys as ``set_printoptions`` takes)."""
    return {
        "precision": PRINT_OPTS.precision,
        "threshold": PRINT_OPTS.threshold,
        "edgeitems": PRINT_OPTS.edgeitems,
        "linewidth": PRINT_OPTS.linewidth,
        "sci_mode": PRINT_OPTS.sci_mode,
    }


@contextlib.contextmanager
def printoptions(**kwargs):
    r"""Context manager that sets print options for its body and restores them afterwards."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# --------------------------------------------------------------------------------------------
# Dtypes
# --------------------------------------------------------------------------------------------

_FLOAT_DTYPES = frozenset(("float32", "float64", "float16", "bfloat16"))
_INT_DTYPES = frozenset(("int64", "int32", "int16", "int8", "uint8", "bool"))
# Dtypes whose name is left out of a non-empty tensor's repr (with the default float dtype).
_IMPLIED_DTYPES = frozenset(("int64", "bool"))


# --------------------------------------------------------------------------------------------
# Element formatter
# --------------------------------------------------------------------------------------------

class _Formatter:
    """Chooses one mode and one width for every element of a tensor.

    ``values`` is the (already summarised) data. Half types arrive as float32 holding the
    same numbers, which print the same since every value goes through a Python float.
    """

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)

        if not floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(str(value)))
            return

        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            # Only zeros, nans and infs: stay in int mode. PyTorch returns here before it
            # looks at PRINT_OPTS.sci_mode, so a forced sci_mode has no effect either.
            return

        # Ratios in double: in float32 or half they could overflow or round.
        magnitudes = np.abs(finite).astype(np.float64)
        smallest = float(magnitudes.min())
        largest = float(magnitudes.max())
        self.int_mode = bool(np.all(np.ceil(finite) == finite))
        if PRINT_OPTS.sci_mode is None:
            # Integral values are >= 1, so the last test only matters outside int mode.
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci_mode = bool(PRINT_OPTS.sci_mode)

        precision = PRINT_OPTS.precision
        if self.sci_mode:
            texts = [f"{value:.{precision}e}" for value in finite.tolist()]
        elif self.int_mode:
            # The '.' that marks an integral float is appended by format().
            texts = [f"{value:.0f}." for value in finite.tolist()]
        else:
            texts = [f"{value:.{precision}f}" for value in finite.tolist()]
        self.max_width = max(self.max_width, max(len(text) for text in texts))

    def format(self, value):
        """Right-align one Python scalar (float, int or bool) to the common width."""
        if self.floating:
            precision = PRINT_OPTS.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if math.isfinite(value):
                    text += "."
            else:
                text = f"{value:.{precision}f}"
        else:
            text = str(value)
        return text.rjust(self.max_width)


# --------------------------------------------------------------------------------------------
# Layout of the nested brackets
# --------------------------------------------------------------------------------------------

def _summarized_data(values):
    """The elements a summarised print shows: ``edgeitems`` at each end of each long axis."""
    edge = PRINT_OPTS.edgeitems
    if edge == 0 and values.ndim >= 2:
        # PyTorch shows only "[...]" then, and sizes its formatter on no elements at all.
        return values[(slice(0, 0),) * values.ndim]
    for axis in range(values.ndim):
        if values.shape[axis] > 2 * edge:
            # Python slice semantics as in PyTorch (so edgeitems=0 keeps a[-0:], all of it).
            head = [slice(None)] * values.ndim
            tail = [slice(None)] * values.ndim
            head[axis] = slice(None, edge)
            tail[axis] = slice(-edge, None)
            values = np.concatenate((values[tuple(head)], values[tuple(tail)]), axis=axis)
    return values


def _vector_str(values, indent, summarize, formatter):
    # Each element takes its width plus ", ".
    element_length = formatter.max_width + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    edge = PRINT_OPTS.edgeitems

    if summarize and edge == 0:
        items = ["..."]
    elif summarize and values.shape[0] > 2 * edge:
        items = ([formatter.format(v) for v in values[:edge].tolist()]
                 + [" ..."]
                 + [formatter.format(v) for v in values[-edge:].tolist()])
    else:
        items = [formatter.format(v) for v in values.tolist()]

    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(values, indent, summarize, formatter):
    if values.ndim == 0:
        return formatter.format(values.item())
    if values.ndim == 1:
        return _vector_str(values, indent, summarize, formatter)

    edge = PRINT_OPTS.edgeitems
    count = values.shape[0]
    if summarize and count > 2 * edge:
        slices = ([_nested_str(values[i], indent + 1, summarize, formatter)
                   for i in range(0, edge)]
                  + ["..."]
                  + [_nested_str(values[i], indent + 1, summarize, formatter)
                     for i in range(count - edge, count)])
    else:
        slices = [_nested_str(values[i], indent + 1, summarize, formatter)
                  for i in range(count)]

    # Blocks of a 3-d tensor are separated by one blank line, of 4-d by two, and so on.
    separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(slices) + "]"


def _tensor_str(values, floating, indent):
    """The bracketed body of a non-empty tensor, ``indent`` columns in from the line start."""
    summarize = values.size > PRINT_OPTS.threshold
    formatter = _Formatter(_summarized_data(values) if summarize else values, floating)
    return _nested_str(values, indent, summarize, formatter)


def _add_suffixes(text, suffixes, indent):
    """Append ``, suffix`` items, starting a new line when one would pass ``linewidth``."""
    parts = [text]
    # PyTorch's count, kept for identical wrapping: with no newline in the text, rfind gives
    # -1 and this is len(text) + 2; otherwise it is the last line's length plus 2, too.
    last_line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_length + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_length = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_length += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------

def tensor_repr(values, dtype_name, device_str, *, extra_suffixes=(), default_dtype="float32"):
    """PyTorch's ``repr`` of a dense tensor whose data is ``values``.

    values: numpy.ndarray with the tensor's shape and data (float32 for bfloat16, float16 for
        float16; other dtypes as themselves).
    dtype_name: 'float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'int16',
        'int8', 'uint8' or 'bool'.
    device_str: 'cpu', or e.g. 'cuda:0' (printed as ``device='cuda:0'``).
    extra_suffixes: already formatted items such as ``"requires_grad=True"`` or
        ``"grad_fn=<AddBackward0>"``, appended in the order given.
    default_dtype: the name of the default float dtype (``torch.get_default_dtype()``).
    """
    if dtype_name in _FLOAT_DTYPES:
        floating = True
    elif dtype_name in _INT_DTYPES:
        floating = False
    else:
        raise ValueError(f"tensor_repr: unsupported dtype {dtype_name!r}")
    values = np.asarray(values)
    if dtype_name in ("float16", "bfloat16") and values.dtype != np.float32:
        # Half values are exact in float32 and each is printed through a Python float,
        # so widening changes nothing in the text.
        values = values.astype(np.float32)

    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if device_str != "cpu":
        suffixes.append(f"device='{device_str}'")

    if values.size == 0:
        # Match NumPy: the shape is shown unless it is (0,). With no elements to hint at the
        # dtype, every dtype but the default float one is named, int64 and bool included.
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if dtype_name != default_dtype:
            suffixes.append(f"dtype=torch.{dtype_name}")
        body = "[]"
    else:
        if PRINT_OPTS.edgeitems == 0:
            # PyTorch names the shape whenever edgeitems is 0, summarised or not.
            suffixes.append(f"size={tuple(values.shape)}")
        if dtype_name != default_dtype and dtype_name not in _IMPLIED_DTYPES:
            suffixes.append(f"dtype=torch.{dtype_name}")
        body = _tensor_str(values, floating, indent)

    suffixes.extend(extra_suffixes)
    return _add_suffixes(prefix + body, suffixes, indent)
