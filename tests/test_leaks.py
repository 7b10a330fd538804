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
