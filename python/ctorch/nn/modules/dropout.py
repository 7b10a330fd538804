"""nn.Dropout, and the channel-wise nn.Dropout1d / 2d / 3d (F.dropout1d / 2d / 3d)."""
from .. import functional as F
from .module import Module


class Dropout(Module):
    """Zeroes elements with probability p during training and scales the rest by 1/(1-p)."""

    __constants__ = ["p", "inplace"]

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """Zeroes whole channels of (N, C, L) or (C, L) input with probability p during training."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    """Zeroes whole channels of (N, C, H, W) input with probability p during training."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p during training."""

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)
