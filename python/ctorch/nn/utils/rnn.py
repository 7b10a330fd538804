"""ctorch.nn.utils.rnn: PackedSequence and the padding/packing helpers, as torch.nn.utils.rnn.

The data movements are csrc/rnn.c's (_pack_padded_sequence, _pad_packed_sequence, _pad_sequence:
one index_select each); this module only sorts by length and keeps the bookkeeping."""
from collections import namedtuple

from ... import _C

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

_PackedSequenceBase = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """A batch of sequences of different lengths, packed step by step: data holds, for each time step t,
    the batch_sizes[t] sequences still running (sorted longest first; sorted_indices maps back to the
    caller's order, unsorted_indices is its inverse). Built by pack_padded_sequence / pack_sequence."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                    "manually. They should be instantiated by functions like pack_sequence and "
                    "pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        # PackedSequence((data, batch_sizes)): the form pack_padded_sequence's result unpacks to
        if not isinstance(data, (list, tuple)) or len(data) != 2:
            raise ValueError(f"Expected a sequence of (data, batch_sizes), but got {type(data).__name__}")
        return super().__new__(cls, data[0], data[1], sorted_indices, unsorted_indices)

    def _with(self, fn):
        # data moves or converts; batch_sizes stays on the CPU; the indices follow data's device
        data = fn(self.data)
        if data is self.data:
            return self
        device = data.device
        sorted_indices = None if self.sorted_indices is None else self.sorted_indices.to(device)
        unsorted_indices = None if self.unsorted_indices is None else self.unsorted_indices.to(device)
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        return self._with(lambda t: t.to(*args, **kwargs))

    def cuda(self, *args, **kwargs):
        return self._with(lambda t: t.cuda(*args, **kwargs))

    def cpu(self, *args, **kwargs):
        return self._with(lambda t: t.cpu(*args, **kwargs))

    def double(self):
        return self.to(dtype=_C.float64)

    def float(self):
        return self.to(dtype=_C.float32)

    def half(self):
        return self.to(dtype=_C.float16)

    def bfloat16(self):
        return self.to(dtype=_C.bfloat16)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def invert_permutation(permutation):
    """The inverse of a permutation given as an index tensor (None stays None)."""
    if permutation is None:
        return None
    output = _C.empty_like(permutation)
    output.scatter_(0, permutation, _C.arange(0, permutation.numel(), device=permutation.device))
    return output


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) ((B, T, *) with batch_first) of sequences of the given lengths."""
    lengths = _C.as_tensor(lengths, dtype=_C.int64, device="cpu")
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = _C.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _C._pack_padded_sequence(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Pads a PackedSequence back into (T, B, *) ((B, T, *) with batch_first); returns it with the lengths."""
    padded, lengths = _C._pad_packed_sequence(sequence.data, sequence.batch_sizes, batch_first, padding_value,
                                              total_length)
    if sequence.unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        padded = padded.index_select(batch_dim, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks sequences (L_i, *) into (max L, B, *) ((B, max L, *) with batch_first), padding the short ones."""
    if isinstance(sequences, _C.Tensor):
        sequences = sequences.unbind(0)
    return _C._pad_sequence(sequences, batch_first, padding_value, padding_side)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences a padded batch holds, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(length)] for seq, length in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of sequences (L_i, *) (longest first unless enforce_sorted is False)."""
    lengths = _C.as_tensor([v.size(0) for v in sequences], dtype=_C.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
