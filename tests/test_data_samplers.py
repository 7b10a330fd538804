"""ctorch.utils.data additions: SubsetRandomSampler, WeightedRandomSampler, DistributedSampler,
IterableDataset / ChainDataset / StackDataset (with DataLoader, workers and get_worker_info), default_convert,
and PyTorch's argument errors."""
import collections
import dataclasses

import numpy as np
import pytest

import ctorch
from ctorch.utils.data.dataloader import WorkerInfo
from ctorch.utils.data import (ChainDataset, ConcatDataset, DataLoader, DistributedSampler, IterableDataset,
                               RandomSampler, StackDataset, SubsetRandomSampler, TensorDataset,
                               WeightedRandomSampler, default_convert, get_worker_info)


def _gen(seed):
    g = ctorch.Generator()
    g.manual_seed(seed)
    return g


class Range(IterableDataset):
    """range(start, end); in a worker, only that worker's contiguous share (PyTorch's documented example)."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        per_worker = -(-(self.end - self.start) // info.num_workers)
        lo = self.start + info.id * per_worker
        return iter(range(lo, min(lo + per_worker, self.end)))

    def __len__(self):
        return self.end - self.start


# --- samplers ----------------------------------------------------------------------------------------------------
def test_subset_random_sampler():
    indices = [10, 3, 7, 42, 5]
    s = SubsetRandomSampler(indices, generator=_gen(1))
    first = list(s)
    assert len(s) == 5 and sorted(first) == sorted(indices)
    assert list(SubsetRandomSampler(indices, generator=_gen(1))) == first
    orders = {tuple(SubsetRandomSampler(indices)) for _ in range(20)}  # a fresh permutation each time
    assert len(orders) > 1


def test_weighted_random_sampler():
    weights = [1.0, 0.0, 3.0, 4.0]
    s = WeightedRandomSampler(weights, 8000, generator=_gen(0))
    draws = np.array(list(s))
    assert len(s) == 8000 and s.weights.dtype == ctorch.float64 and s.replacement is True
    freq = np.bincount(draws, minlength=4) / draws.size
    np.testing.assert_allclose(freq, np.array(weights) / 8.0, atol=0.02)
    assert list(WeightedRandomSampler(weights, 20, generator=_gen(0))) == draws[:20].tolist()
    no_repl = list(WeightedRandomSampler(np.array([0.9, 0.4, 0.05, 0.2, 0.3]), 5, replacement=False))
    assert sorted(no_repl) == [0, 1, 2, 3, 4]
    assert 1 not in list(WeightedRandomSampler(ctorch.tensor([2.0, 0.0, 1.0]), 2, replacement=False))


@pytest.mark.parametrize("args,message", [
    (([1, 2], 0), "num_samples should be a positive integer value, but got num_samples=0"),
    (([1, 2], True), "num_samples should be a positive integer value, but got num_samples=True"),
    (([1, 2], 2.0), "num_samples should be a positive integer value, but got num_samples=2.0"),
    (([1, 2], 3, "x"), "replacement should be a boolean value, but got replacement=x"),
    (([[1, 2]], 2), r"weights should be a 1d sequence but given weights have shape \(1, 2\)"),
])
def test_weighted_random_sampler_errors(args, message):
    with pytest.raises(ValueError, match=message):
        WeightedRandomSampler(*args)


def test_random_sampler_replacement_type():
    with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=1"):
        RandomSampler(range(3), replacement=1)


def test_distributed_sampler():
    data = list(range(5))
    assert list(DistributedSampler(data, num_replicas=2, rank=1, shuffle=False)) == [1, 3, 0]  # padded
    assert list(DistributedSampler(data, num_replicas=2, rank=1, shuffle=False, drop_last=True)) == [1, 3]
    assert list(DistributedSampler(list(range(2)), num_replicas=5, rank=4, shuffle=False)) == [0]
    shards = [DistributedSampler(list(range(10)), num_replicas=3, rank=r, seed=7) for r in range(3)]
    drawn = [list(s) for s in shards]
    assert all(len(d) == len(s) == 4 for d, s in zip(drawn, shards))
    assert set(sum(drawn, [])) == set(range(10))  # the ranks share one permutation
    assert [list(s) for s in shards] == drawn  # same epoch, same order
    shards[0].set_epoch(1)
    assert list(shards[0]) != drawn[0] and shards[0].epoch == 1
    with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
        DistributedSampler(data)
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(data, num_replicas=2, rank=2)


# --- datasets ----------------------------------------------------------------------------------------------------
def test_iterable_dataset_loader():
    ds = Range(3, 8)
    assert [b.tolist() for b in DataLoader(ds, batch_size=2)] == [[3, 4], [5, 6], [7]]
    assert [b.tolist() for b in DataLoader(ds, batch_size=2, drop_last=True)] == [[3, 4], [5, 6]]
    assert list(DataLoader(ds, batch_size=None)) == [3, 4, 5, 6, 7]  # default_convert leaves ints alone
    assert len(DataLoader(ds, batch_size=2)) == 3 and len(DataLoader(ds, batch_size=2, drop_last=True)) == 2
    assert len(DataLoader(ds, batch_size=None)) == 5
    for kw, name in (({"shuffle": True}, "shuffle=True"), ({"sampler": [0]}, r"sampler=\[0\]"),
                     ({"batch_sampler": [[0]]}, r"batch_sampler=\[\[0\]\]")):
        with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected unspecified "
                                             f"{name.split('=')[0]} option, but got {name}"):
            DataLoader(ds, **kw)
    DataLoader(ds, shuffle=False)
    assert get_worker_info() is None


def test_iterable_dataset_workers():
    # each worker iterates its own share; batches are taken from the workers in turn
    loader = DataLoader(Range(3, 7), batch_size=None, num_workers=2)
    assert [int(x) for x in loader] == [3, 5, 4, 6]
    loader = DataLoader(Range(0, 5), batch_size=2, num_workers=2)
    assert [b.tolist() for b in loader] == [[0, 1], [3, 4], [2]]


class _WhoLoads:
    def __getitem__(self, i):
        info = get_worker_info()
        return np.array([i, info.id, info.num_workers, info.seed, int(info.dataset is self)])

    def __len__(self):
        return 6


def test_map_dataset_workers_get_worker_info():
    rows = np.concatenate([to.numpy() for to in DataLoader(_WhoLoads(), batch_size=2, num_workers=2)])
    assert rows[:, 0].tolist() == list(range(6)) and set(rows[:, 1]) <= {0, 1}
    assert (rows[:, 2] == 2).all() and (rows[:, 4] == 1).all()
    seeds = {int(r[1]): int(r[3]) for r in rows}
    if len(seeds) == 2:
        assert seeds[1] == seeds[0] + 1
    w = WorkerInfo(id=0, num_workers=2, seed=5, dataset=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.id = 1


def test_chain_dataset():
    chain = ChainDataset([Range(0, 2), Range(5, 7)])
    assert list(chain) == [0, 1, 5, 6] and len(chain) == 4
    plus = Range(0, 1) + Range(9, 10)
    assert isinstance(plus, ChainDataset) and list(plus) == [0, 9]
    bad = ChainDataset([Range(0, 1), [1, 2]])
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(bad)
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        len(bad)
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([Range(0, 1)])


class _Batched:
    """A dataset with __getitems__ (which the DataLoader and StackDataset prefer)."""

    calls = 0

    def __getitem__(self, i):
        return 10 * i

    def __getitems__(self, indices):
        _Batched.calls += 1
        return [10 * i for i in indices]

    def __len__(self):
        return 4


def test_stack_dataset():
    x = TensorDataset(ctorch.arange(4.0))
    s = StackDataset(x, [5, 6, 7, 8])
    assert len(s) == 4 and s[1][1] == 6 and s[1][0][0].item() == 1.0
    d = StackDataset(a=[1, 2, 3, 4], b=_Batched())
    assert d[2] == {"a": 3, "b": 20}
    calls = _Batched.calls
    assert d.__getitems__([0, 3]) == [{"a": 1, "b": 0}, {"a": 4, "b": 30}] and _Batched.calls == calls + 1
    batches = list(DataLoader(StackDataset([1, 2, 3, 4], _Batched()), batch_size=3))
    assert [b.tolist() for b in batches[0]] == [[1, 2, 3], [0, 10, 20]] and _Batched.calls == calls + 3
    with pytest.raises(ValueError, match="Supported either ``tuple``- \\(via ``args``\\) or``dict``- \\(via "
                                         "``kwargs``\\) like input/output, but both types are given."):
        StackDataset([1], a=[2])
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        StackDataset()
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset([1, 2], [3])
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(a=[1, 2], b=[3])

    class Short(_Batched):
        def __getitems__(self, indices):
            return [0]

    with pytest.raises(ValueError, match="Nested dataset's output size mismatch. Expected 2, got 1"):
        StackDataset(Short()).__getitems__([0, 1])


def test_default_convert():
    Point = collections.namedtuple("Point", "x y")
    t = ctorch.ones(2)
    assert default_convert(t) is t
    out = default_convert({"a": np.arange(3), "b": (np.float64(2.5), "s"), "c": Point(np.int64(1), [np.ones(2)])})
    assert isinstance(out["a"], ctorch.Tensor) and out["a"].tolist() == [0, 1, 2] and out["a"].dtype == ctorch.int64
    assert isinstance(out["b"], list) and out["b"][0].dtype == ctorch.float64 and out["b"][1] == "s"
    assert isinstance(out["c"], Point) and out["c"].x.item() == 1 and out["c"].y[0].tolist() == [1.0, 1.0]
    strings = np.array(["a", "b"])
    assert default_convert(strings) is strings and default_convert(3) == 3 and default_convert("xy") == "xy"
    assert isinstance(default_convert(np.str_("q")), np.str_)
    samples = list(DataLoader([np.arange(2), np.arange(2) + 2], batch_size=None))
    assert all(isinstance(b, ctorch.Tensor) for b in samples) and samples[1].tolist() == [2, 3]
