"""ctorch.backends.mha: PyTorch's switch of the multi-head attention fast path.

The one place it changes a result is nn.TransformerEncoder's nested-tensor path (eval, no grad, a
src_key_padding_mask): PyTorch drops the padded tokens there and gives zeros in their place, and so does
ctorch while this is True (the default)."""

_fastpath_enabled = True


def get_fastpath_enabled():
    """Whether the fast path of nn.TransformerEncoder / MultiheadAttention is on (default True)."""
    return _fastpath_enabled


def set_fastpath_enabled(value):
    """Turn the fast path on or off."""
    global _fastpath_enabled
    _fastpath_enabled = bool(value)
