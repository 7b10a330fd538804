"""DataLoader: batches from a dataset, optionally shuffled, optionally loaded by worker processes.

Workers (num_workers > 0) are forked processes that each load whole batches and send them back
as NumPy arrays through a multiprocessing queue; batches are yielded in order. With an IterableDataset
each worker iterates its own copy and the batches are taken from the workers in turn, as in PyTorch."""
import collections.abc
import copy
import dataclasses
import multiprocessing
import numbers

import numpy as np

from ... import _C
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """What get_worker_info() returns inside a DataLoader worker."""

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


_worker_info = None


def get_worker_info():
    """The WorkerInfo of the current DataLoader worker process; None in the main process."""
    return _worker_info


def default_collate(batch):
    """Stacks a list of samples: tensors with stack, numbers into a tensor, tuples/dicts recursively."""
    elem = batch[0]
    if isinstance(elem, _C.Tensor):
        return _C.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        return _C.from_numpy(np.stack(batch))
    if isinstance(elem, bool):
        return _C.tensor(batch, dtype=_C.bool)
    if isinstance(elem, numbers.Integral):
        return _C.tensor(batch, dtype=_C.int64)
    if isinstance(elem, numbers.Real):
        return _C.tensor(batch, dtype=_C.float64)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, dict):
        return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, (tuple, list)):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
                    f"{type(elem)}")


def default_convert(data):
    """Turns NumPy arrays and scalars into tensors, inside mappings, named tuples and sequences too (tuples
    become lists); anything else is returned unchanged. The collate_fn of a DataLoader without batching."""
    if isinstance(data, _C.Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_, np.bytes_)):
        if isinstance(data, np.ndarray) and data.dtype.kind in "SaUO":
            return data
        return _C.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update(converted)
                return clone
            return type(data)(converted)
        except TypeError:
            return converted
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        converted = [default_convert(d) for d in data]
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                clone[:] = converted
                return clone
            return type(data)(converted)
        except TypeError:
            return converted
    return data


def _fetch(dataset, indices):
    """The samples at indices: through dataset.__getitems__ where it has one."""
    if callable(getattr(dataset, "__getitems__", None)):
        return dataset.__getitems__(indices)
    return [dataset[i] for i in indices]


def _iterable_batches(dataset, batch_size, drop_last, collate_fn):
    """Batches of an IterableDataset: batch_size samples collated, or one converted sample at a time."""
    if batch_size is None:
        for sample in dataset:
            yield collate_fn(sample)
        return
    batch = []
    for sample in dataset:
        batch.append(sample)
        if len(batch) == batch_size:
            yield collate_fn(batch)
            batch = []
    if batch and not drop_last:
        yield collate_fn(batch)


def _to_wire(obj):
    if isinstance(obj, _C.Tensor):
        return ("t", obj.numpy() if obj.dtype != _C.bfloat16 else obj.float().numpy(), str(obj.dtype))
    if isinstance(obj, dict):
        return ("d", {k: _to_wire(v) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)):
        return ("l" if isinstance(obj, list) else "u", [_to_wire(v) for v in obj])
    return ("o", obj)


def _from_wire(w):
    kind = w[0]
    if kind == "t":
        t = _C.from_numpy(w[1])
        return t if w[2] != "torch.bfloat16" else t.to(_C.bfloat16)
    if kind == "d":
        return {k: _from_wire(v) for k, v in w[1].items()}
    if kind in ("l", "u"):
        items = [_from_wire(v) for v in w[1]]
        return items if kind == "l" else tuple(items)
    return w[1]


def _worker_start(dataset, seed, worker_id, num_workers, init_fn):
    global _worker_info
    _C.manual_seed(seed)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    if init_fn is not None:
        init_fn(worker_id)


def _worker_loop(dataset, collate_fn, index_queue, result_queue, seed, worker_id, num_workers, init_fn):
    _worker_start(dataset, seed, worker_id, num_workers, init_fn)
    while True:
        job = index_queue.get()
        if job is None:
            return
        i, indices = job
        try:
            result_queue.put((i, _to_wire(collate_fn(_fetch(dataset, indices))), None))
        except Exception as e:  # sent back and re-raised in the main process
            result_queue.put((i, None, f"{type(e).__name__}: {e}"))


def _iterable_worker_loop(dataset, batching, result_queue, seed, worker_id, num_workers, init_fn):
    """Sends (worker_id, batch, error) for each batch of its dataset copy, then (worker_id, None, None)."""
    try:
        _worker_start(dataset, seed, worker_id, num_workers, init_fn)
        for batch in _iterable_batches(dataset, *batching):
            result_queue.put((worker_id, _to_wire(batch), None))
        result_queue.put((worker_id, None, None))
    except Exception as e:
        result_queue.put((worker_id, None, f"{type(e).__name__}: {e}"))


class DataLoader:
    """Iterates over a dataset in batches (PyTorch's arguments; workers are forked processes)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 generator=None, prefetch_factor=None, persistent_workers=False):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            for name, value in (("shuffle", shuffle if shuffle not in (False, None) else None),
                                ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value is not None:
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, but got "
                                     f"{name}={value}")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                             "drop_last")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self.drop_last = drop_last
        if batch_sampler is None and not self._iterable:
            if sampler is None:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
            if batch_size is not None:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:  # without batching, samples are only converted
            collate_fn = default_collate if batch_size is not None or batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
        return len(self.batch_sampler) if self.batch_sampler is not None else len(self.sampler)

    def _maybe_pin(self, batch):
        if not self.pin_memory:
            return batch
        if isinstance(batch, _C.Tensor):
            return batch.pin_memory() if hasattr(batch, "pin_memory") else batch
        if isinstance(batch, (list, tuple)):
            return type(batch)(self._maybe_pin(b) for b in batch)
        if isinstance(batch, dict):
            return {k: self._maybe_pin(v) for k, v in batch.items()}
        return batch

    def __iter__(self):
        if self._iterable:
            if self.num_workers == 0:
                for batch in _iterable_batches(self.dataset, self.batch_size, self.drop_last, self.collate_fn):
                    yield self._maybe_pin(batch)
                return
            yield from self._iter_iterable_workers()
            return
        if self.batch_sampler is None:  # batch_size=None: samples one by one
            for i in self.sampler:
                yield self._maybe_pin(self.collate_fn(self.dataset[i]))
            return
        if self.num_workers == 0:
            for indices in self.batch_sampler:
                yield self._maybe_pin(self.collate_fn(_fetch(self.dataset, indices)))
            return
        yield from self._iter_workers()

    def _start_workers(self, target, make_args):
        """Forks num_workers processes running target(*make_args(worker_id, seed))."""
        ctx = multiprocessing.get_context("fork")
        base_seed = int(_C.randint(0, 2**62, (1,)).item())
        workers = [ctx.Process(target=target, daemon=True, args=make_args(w, base_seed + w))
                   for w in range(self.num_workers)]
        for w in workers:
            w.start()
        return workers

    def _get_result(self, result_queue):
        item, wire, err = result_queue.get(timeout=self.timeout if self.timeout > 0 else None)
        if err is not None:
            raise RuntimeError(f"DataLoader worker raised {err}")
        return item, wire

    def _iter_iterable_workers(self):
        # each worker streams its own copy's batches on its own queue; they are taken from the workers in turn,
        # skipping those that have finished
        ctx = multiprocessing.get_context("fork")
        queues = [ctx.Queue() for _ in range(self.num_workers)]
        batching = (self.batch_size, self.drop_last, self.collate_fn)
        workers = self._start_workers(_iterable_worker_loop, lambda w, seed: (
            self.dataset, batching, queues[w], seed, w, self.num_workers, self.worker_init_fn))
        try:
            active = list(range(self.num_workers))
            while active:
                for w in list(active):
                    _, wire = self._get_result(queues[w])
                    if wire is None:
                        active.remove(w)
                    else:
                        yield self._maybe_pin(_from_wire(wire))
        finally:
            for w in workers:
                if active:  # stopped early: the workers may still be producing
                    w.terminate()
                w.join(timeout=5)
                if w.is_alive():
                    w.terminate()

    def _iter_workers(self):
        ctx = multiprocessing.get_context("fork")
        index_queue, result_queue = ctx.Queue(), ctx.Queue()
        workers = self._start_workers(_worker_loop, lambda w, seed: (
            self.dataset, self.collate_fn, index_queue, result_queue, seed, w, self.num_workers,
            self.worker_init_fn))
        try:
            n = 0
            for i, indices in enumerate(self.batch_sampler):
                index_queue.put((i, list(indices)))
                n += 1
            pending, nxt = {}, 0
            while nxt < n:
                while nxt not in pending:
                    i, wire = self._get_result(result_queue)
                    pending[i] = wire
                yield self._maybe_pin(_from_wire(pending.pop(nxt)))
                nxt += 1
        finally:
            for _ in workers:
                index_queue.put(None)
            for w in workers:
                w.join(timeout=5)
                if w.is_alive():
                    w.terminate()
