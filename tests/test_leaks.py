"""Leak check: 100,000 create / view / copy / export / free cycles (and their error paths) leave
the number of live storages unchanged and the process's resident memory nearly flat."""
import gc
import os
import pickle
import time

import numpy as np

import ctorch as torch

CYCLES = 100_000


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def one_cycle(i, g):
    a = np.arange(6.0).reshape(2, 3)
    t = torch.from_numpy(a)                   # shares the array
    v = t.T                                   # view
    c = v.contiguous()                        # copy
    n = c.numpy()                             # export back to numpy
    b = torch.tensor([[1, 2], [3, 4]])        # nested lists
    f = torch.tensor(n, dtype=torch.float32)  # numpy -> copy + cast
    z = torch.zeros(3).fill_(1.5)
    r = torch.rand(4, generator=g)
    r.normal_(0.0, 1.0, generator=g)
    k = torch.randint(0, 10, (5,), generator=g)
    e = torch.arange(8).view(2, 4)
    d = torch.from_dlpack(n)                  # DLPack in
    m = np.from_dlpack(b)                     # DLPack out
    cap = e.__dlpack__()                      # an unconsumed capsule
    lst = e.tolist()
    rows = list(e)
    s = np.asarray(f)
    w = torch.as_tensor(a)
    ones = torch.ones_like(v)
    eye = torch.eye(3, dtype=torch.float64)
    if i % 16 == 0:
        pickle.loads(pickle.dumps(b))
        torch.randperm(20, generator=g)
        torch.linspace(0, 1, 7)
    # error paths must release what they built
    try:
        torch.tensor([[1, 2, 3], [4, 5]])
    except ValueError:
        pass
    try:
        torch.tensor([[1.0, 2.0], [3.0, None]], dtype=torch.float32)
    except TypeError:
        pass
    try:
        torch.zeros(2, -1)
    except RuntimeError:
        pass
    try:
        torch.from_dlpack(3)
    except RuntimeError:
        pass
    try:
        torch.full((2,), 300, dtype=torch.uint8)
    except RuntimeError:
        pass
    del a, t, v, c, n, b, f, z, r, k, e, d, m, cap, lst, rows, s, w, ones, eye


def test_no_leaks():
    g = torch.Generator().manual_seed(0)
    for i in range(2000):  # warm up caches, the allocator and the thread pool
        one_cycle(i, g)
    gc.collect()
    live_before = torch._C._live_storages()
    rss_before = rss_bytes()
    start = time.time()
    for i in range(CYCLES):
        one_cycle(i, g)
    elapsed = time.time() - start
    gc.collect()
    live_after = torch._C._live_storages()
    growth = rss_bytes() - rss_before
    assert live_after == live_before, f"{live_after - live_before} storages leaked"
    # 100k cycles allocate ~20 storages each: leaking even 16 bytes per cycle shows up here
    assert growth < 8 * 1024 * 1024, f"RSS grew by {growth / 1e6:.1f} MB"
    assert elapsed < 60, f"{elapsed:.1f} s"


def test_cpu_block_cache_reuse():
    """Freed small CPU blocks are handed out again (allocator cache): a reused block belongs to one
    tensor only, the allocated-bytes counter stays exact, and a forked child allocates too."""
    live = torch._C._cpu_allocated_bytes()
    sizes = [0, 1, 15, 16, 17, 1000, 1024, 8191, 20000]
    ts = [torch.full((n,), float(i)) for i, n in enumerate(sizes * 3)]
    assert torch._C._cpu_allocated_bytes() - live == 4 * sum(sizes) * 3
    for i in range(0, len(ts), 2):
        ts[i] = None
    fresh = [torch.full((n,), -1.0) for n in sizes * 2]
    for i, t in enumerate(ts):
        if t is not None:
            assert t.tolist() == [float(i)] * sizes[i % len(sizes)]
    assert all(t.tolist() == [-1.0] * t.numel() for t in fresh)
    del ts, fresh, t
    gc.collect()
    assert torch._C._cpu_allocated_bytes() == live
    pid = os.fork()
    if pid == 0:
        ok = all((torch.arange(float(n)) + 1).sum().item() == n * (n + 1) / 2 for n in sizes * 4)
        os._exit(0 if ok else 1)
    assert os.waitpid(pid, 0)[1] == 0
