"""DataLoader: batches from a dataset, optionally shuffled, optionally loaded by worker processes.

Workers (num_workers > 0) are forked processes that each load whole batches and send them back
as NumPy arrays through a multiprocessing queue; batches are yielded in order."""
import multiprocessing
import numbers

import numpy as np

from ... import _C
from .sampler import BatchSampler, RandomSampler, SequentialSampler


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


def _worker_loop(dataset, collate_fn, index_queue, result_queue, seed, worker_id, init_fn):
    _C.manual_seed(seed)
    if init_fn is not None:
        init_fn(worker_id)
    while True:
        job = index_queue.get()
        if job is None:
            return
        i, indices = job
        try:
            result_queue.put((i, _to_wire(collate_fn([dataset[j] for j in indices])), None))
        except Exception as e:  # sent back and re-raised in the main process
            result_queue.put((i, None, f"{type(e).__name__}: {e}"))


class DataLoader:
    """Iterates over a dataset in batches (PyTorch's arguments; workers are forked processes)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 generator=None, prefetch_factor=None, persistent_workers=False):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
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
        if batch_sampler is None:
            if sampler is None:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
            if batch_size is not None:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn if collate_fn is not None else default_collate

    def __len__(self):
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
        if self.batch_sampler is None:  # batch_size=None: samples one by one
            for i in self.sampler:
                yield self.dataset[i]
            return
        if self.num_workers == 0:
            for indices in self.batch_sampler:
                yield self._maybe_pin(self.collate_fn([self.dataset[i] for i in indices]))
            return
        yield from self._iter_workers()

    def _iter_workers(self):
        ctx = multiprocessing.get_context("fork")
        index_queue, result_queue = ctx.Queue(), ctx.Queue()
        base_seed = int(_C.randint(0, 2**62, (1,)).item())
        workers = [ctx.Process(target=_worker_loop, daemon=True,
                               args=(self.dataset, self.collate_fn, index_queue, result_queue, base_seed + w, w,
                                     self.worker_init_fn))
                   for w in range(self.num_workers)]
        for w in workers:
            w.start()
        try:
            n = 0
            for i, indices in enumerate(self.batch_sampler):
                index_queue.put((i, list(indices)))
                n += 1
            pending, nxt = {}, 0
            while nxt < n:
                while nxt not in pending:
                    i, wire, err = result_queue.get(timeout=self.timeout if self.timeout > 0 else None)
                    if err is not None:
                        raise RuntimeError(f"DataLoader worker raised {err}")
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
