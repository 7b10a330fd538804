"""torch.multiprocessing: tensors sent through Queues / Pipes share memory with the sender (both sharing
strategies, fork and spawn), Parameters keep requires_grad, Hogwild training updates the parent's model, and
spawn's error reporting."""
import multiprocessing as std_mp
import pickle

import pytest

import ctorch as torch
import ctorch.multiprocessing as mp


def _fill_child(queue, done):
    t = queue.get()
    t[1:] += 10  # a view of the shared tensor: the parent must see it
    p = queue.get()
    done.put((p.requires_grad, type(p).__name__, p.is_shared()))


def _child_roundtrip(ctx):
    queue, done = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=_fill_child, args=(queue, done))
    child.start()
    x = torch.arange(4, dtype=torch.float64)
    queue.put(x)
    param = torch.nn.Parameter(torch.ones(3))
    queue.put(param)
    info = done.get(timeout=60)
    child.join(60)
    assert child.exitcode == 0
    return x, param, info


@pytest.mark.parametrize("strategy", ["file_descriptor", "file_system"])
def test_queue_fork_shares_memory(strategy):
    old = mp.get_sharing_strategy()
    mp.set_sharing_strategy(strategy)
    try:
        x, param, info = _child_roundtrip(mp.get_context("fork"))
    finally:
        mp.set_sharing_strategy(old)
    assert x.is_shared() and param.is_shared()  # moved to shared memory on send
    assert x.tolist() == [0.0, 11.0, 12.0, 13.0]
    assert x.dtype == torch.float64
    assert info == (True, "Parameter", True)


def test_queue_spawn_shares_memory():
    x, _, info = _child_roundtrip(mp.get_context("spawn"))
    assert x.tolist() == [0.0, 11.0, 12.0, 13.0]
    assert info == (True, "Parameter", True)


def _pipe_child(conn):
    t = conn.recv()
    t.mul_(2)
    conn.send(t.sum().item())


def test_pipe_noncontiguous_view():
    ctx = mp.get_context("fork")
    parent, child_end = ctx.Pipe()
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    view = base[:, 1::2]  # strided view with an offset: geometry travels with the storage
    child = ctx.Process(target=_pipe_child, args=(child_end,))
    child.start()
    parent.send(view)
    assert parent.recv() == 2 * sum([1, 3, 5, 7, 9, 11])
    child.join(60)
    assert base[:, 1::2].tolist() == [[2, 6], [10, 14], [18, 22]]
    assert base[:, 0].tolist() == [0, 4, 8]


def test_reductions_registered_and_errors():
    from multiprocessing.reduction import ForkingPickler
    from ctorch.multiprocessing import reductions
    assert ForkingPickler._extra_reducers[torch.Tensor] is reductions.reduce_tensor
    assert ForkingPickler._extra_reducers[torch.nn.Parameter] is reductions.reduce_tensor
    a = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(a * 2)
    # the same process can unpickle: the storage maps the same segment again
    y = torch.zeros(3)
    z = pickle.loads(ForkingPickler.dumps(y))
    z[0] = 5
    assert y[0].item() == 5
    # empty tensors travel too
    assert pickle.loads(ForkingPickler.dumps(torch.empty(0))).shape == (0,)
    with pytest.raises(AssertionError, match="invalid sharing strategy"):
        mp.set_sharing_strategy("nope")
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    assert mp.Queue is not None and mp.Process is std_mp.Process and "spawn" in dir(mp)


def _hogwild_train(model, steps):
    torch.manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.ones(4, 2)
    for _ in range(steps):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()


def test_hogwild_updates_parent():
    model = torch.nn.Linear(2, 1)
    with torch.no_grad():
        model.weight.fill_(0.0)
        model.bias.fill_(0.0)
    model.share_memory()
    ctx = mp.get_context("fork")
    # one worker after the other, so that no update is lost to a race (Hogwild tolerates those; a test cannot)
    for _ in range(2):
        p = ctx.Process(target=_hogwild_train, args=(model, 5))
        p.start()
        p.join(60)
        assert p.exitcode == 0
    # the gradient of sum(Wx + b) over 4 rows is constant (4 per weight and the bias), so 10 steps of lr 0.1
    assert model.bias.item() == pytest.approx(-4.0)
    assert model.weight.flatten().tolist() == pytest.approx([-4.0, -4.0])


def _train_rank(i, model):
    _hogwild_train(model, 1)


def _raise_in_child(i):
    raise ValueError(f"boom {i}")


def _exit_in_child(i):
    import sys
    sys.exit(3)


def test_start_processes_reports_failures():
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: boom 0") as info:
        mp.start_processes(_raise_in_child, nprocs=1, start_method="fork")
    assert info.value.error_index == 0
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3") as info:
        mp.start_processes(_exit_in_child, nprocs=1, start_method="fork")
    assert info.value.exit_code == 3
    ctx = mp.start_processes(_train_rank, args=(torch.nn.Linear(2, 1),), nprocs=1, join=False,
                             start_method="fork")
    assert isinstance(ctx, mp.ProcessContext) and len(ctx.pids()) == 1
    while not ctx.join():
        pass


def test_cuda_tensor_send_raises():
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    from multiprocessing.reduction import ForkingPickler
    with pytest.raises(RuntimeError, match="cannot send CUDA tensors"):
        ForkingPickler.dumps(torch.ones(2, device="cuda"))
