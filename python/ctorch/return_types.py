"""ctorch.return_types: the named-tuple result types of max/min(dim), sort, topk, median, aminmax,
cummax/cummin and nanmedian (struct sequences made by the C extension, named torch.return_types.*
like PyTorch's)."""
from . import _C

globals().update(_C._return_types())
