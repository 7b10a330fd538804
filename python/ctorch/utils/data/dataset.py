"""Datasets: map-style containers indexed by integers, and iterable-style streams (IterableDataset)."""
import math

from ... import _C


class Dataset:
    """A map-style dataset: implement __getitem__ (and __len__)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """An iterable-style dataset: implement __iter__. With DataLoader workers, each worker iterates its own
    copy (get_worker_info() tells which one it is)."""

    def __add__(self, other):
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """IterableDatasets one after another, chained on the fly."""

    def __init__(self, datasets):
        super().__init__()
        self.datasets = datasets

    def _checked(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield d

    def __iter__(self):
        for d in self._checked():
            yield from d

    def __len__(self):
        return sum(len(d) for d in self._checked())


class StackDataset(Dataset):
    """Samples are tuples (datasets given positionally) or dicts (given by keyword) of the datasets' samples
    at the same index; every dataset must have the same length."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = args if args else list(kwargs.values())
        self._length = len(parts[0])
        if any(self._length != len(d) for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        """A batch of samples: each part fetched with its own __getitems__ where it has one."""
        named = isinstance(self.datasets, dict)
        parts = self.datasets.items() if named else enumerate(self.datasets)
        columns = {}
        for key, d in parts:
            if callable(getattr(d, "__getitems__", None)):
                items = d.__getitems__(indices)
                if len(items) != len(indices):
                    raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got "
                                     f"{len(items)}")
            else:
                items = [d[i] for i in indices]
            columns[key] = items
        if named:
            return [{k: col[j] for k, col in columns.items()} for j in range(len(indices))]
        return [tuple(col[j] for col in columns.values()) for j in range(len(indices))]

    def __len__(self):
        return self._length


class TensorDataset(Dataset):
    """Samples are tuples of the tensors' rows; every tensor must have the same first dim."""

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class Subset(Dataset):
    """The samples of `dataset` at `indices`."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """Datasets one after another."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        prev = 0
        for d, end in zip(self.datasets, self.cumulative_sizes):
            if idx < end:
                return d[idx - prev]
            prev = end
        raise IndexError("index out of range")


def random_split(dataset, lengths, generator=None):
    """Splits dataset into non-overlapping random subsets of the given lengths (or fractions)."""
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = _C.randperm(n, generator=generator).tolist() if generator is not None else _C.randperm(n).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + length]))
        offset += length
    return out
