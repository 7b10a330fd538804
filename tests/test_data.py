"""ctorch.utils.data: datasets, samplers, collation and the DataLoader (with and without workers)."""
import numpy as np
import pytest

import ctorch as torch
from ctorch.utils.data import DataLoader, TensorDataset, random_split


def make_dataset(n=10):
    x = torch.arange(n * 3, dtype=torch.float32).reshape(n, 3)
    y = torch.arange(n)
    return TensorDataset(x, y), x, y


def test_tensor_dataset_and_sequential_batches():
    ds, x, y = make_dataset()
    assert len(ds) == 10
    xb, yb = ds[2]
    np.testing.assert_array_equal(xb.numpy(), [6, 7, 8])
    batches = list(DataLoader(ds, batch_size=4))
    assert [b[0].shape[0] for b in batches] == [4, 4, 2]
    np.testing.assert_array_equal(batches[1][1].numpy(), [4, 5, 6, 7])
    assert len(DataLoader(ds, batch_size=4)) == 3
    assert [b[0].shape[0] for b in DataLoader(ds, batch_size=4, drop_last=True)] == [4, 4]


def test_shuffle_is_a_seeded_permutation():
    ds, _, _ = make_dataset()
    torch.manual_seed(0)
    a = torch.cat([b[1] for b in DataLoader(ds, batch_size=3, shuffle=True)]).tolist()
    torch.manual_seed(0)
    b = torch.cat([b[1] for b in DataLoader(ds, batch_size=3, shuffle=True)]).tolist()
    assert a == b and sorted(a) == list(range(10)) and a != list(range(10))


def test_collate_numbers_dicts_and_errors():
    loader = DataLoader([{"a": 1, "b": 2.5}, {"a": 3, "b": 4.5}], batch_size=2)
    (batch,) = list(loader)
    assert batch["a"].dtype == torch.int64 and batch["b"].dtype == torch.float64
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader([1, 2], batch_size=0)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader([1, 2], num_workers=-1)


def test_workers_give_the_same_batches_in_order():
    ds, _, _ = make_dataset(37)
    plain = list(DataLoader(ds, batch_size=5))
    forked = list(DataLoader(ds, batch_size=5, num_workers=2))
    assert len(plain) == len(forked)
    for (a, b), (c, d) in zip(plain, forked):
        np.testing.assert_array_equal(a.numpy(), c.numpy())
        np.testing.assert_array_equal(b.numpy(), d.numpy())


def test_worker_errors_are_raised():
    class Bad(torch.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            raise KeyError(i)

    with pytest.raises(RuntimeError, match="KeyError"):
        list(DataLoader(Bad(), batch_size=2, num_workers=1))


def test_random_split():
    ds, _, _ = make_dataset()
    a, b = random_split(ds, [7, 3])
    assert len(a) == 7 and len(b) == 3
    idx = sorted(int(a[i][1]) for i in range(7)) + sorted(int(b[i][1]) for i in range(3))
    assert sorted(idx) == list(range(10))
    with pytest.raises(ValueError):
        random_split(ds, [5, 4])
