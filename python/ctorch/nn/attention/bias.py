"""nn.attention.bias: causal masks that adapt to the query/key lengths, usable as attn_mask of
F.scaled_dot_product_attention. Unlike PyTorch's, CausalBias is not a Tensor subclass: SDPA recognises it,
and _materialize() gives the boolean mask (True = attend)."""
import enum
import warnings

__all__ = ["CausalBias", "CausalVariant", "causal_lower_right", "causal_upper_left"]


class CausalVariant(enum.IntEnum):
    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError("variant must be a CausalVariant type.")
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warnings.warn("Lower right causal bias will produce NaNs in the output when seq_len_q > seq_len_kv!",
                          stacklevel=2)

    def _materialize(self, device=None):
        """The (seq_len_q, seq_len_kv) boolean mask, True where a query may attend."""
        from ... import bool as bool_, ones

        shift = 0 if self.variant == CausalVariant.UPPER_LEFT else self.seq_len_kv - self.seq_len_q
        return ones(self.seq_len_q, self.seq_len_kv, device=device, dtype=bool_).tril(diagonal=shift)

    def _sdpa(self, query, key, value, dropout_p, is_causal, scale, enable_gqa):
        from ..functional import _sdpa_kernel

        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if self.variant == CausalVariant.UPPER_LEFT or self.seq_len_q == self.seq_len_kv:
            return _sdpa_kernel(query, key, value, None, dropout_p, True, scale=scale, enable_gqa=enable_gqa)
        return _sdpa_kernel(query, key, value, self._materialize(query.device), dropout_p, False,
                            scale=scale, enable_gqa=enable_gqa)

    def __repr__(self):
        return repr(self._materialize())


def causal_upper_left(*size):
    """Causal mask aligned to the top-left corner: query i sees keys 0..i."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, size[0], size[1])


def causal_lower_right(*size):
    """Causal mask aligned to the bottom-right corner: the last query sees every key."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, size[0], size[1])
