"""ctorch.Size: the shape of a tensor, a tuple of ints printed as PyTorch prints it."""


class Size(tuple):
    """The shape of a tensor: a tuple of ints (torch.Size)."""

    __slots__ = ()

    def __repr__(self):
        return "torch.Size([" + ", ".join(str(int(s)) for s in self) + "])"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __reduce__(self):
        return (Size, (tuple(self),))
