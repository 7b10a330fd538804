"""Datasets: map-style containers indexed by integers."""
import math

from ... import _C


class Dataset:
    """A map-style dataset: implement __getitem__ (and __len__)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


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
