"""torch.embedding_bag's 4-tuple, torch.distributed as built without distributed support, nn.SyncBatchNorm and the
batch_norm_stats / _elemt / _gather_stats(_with_counts) / _backward_reduce / _backward_elemt steps, and
Tensor.record_stream (the caching allocator's bookkeeping; its event logic is in tests/cuda_host/allocator_harness.cu).
Expectations are NumPy or PyTorch's documented rules (the index outputs as PyTorch's CPU kernel gives them)."""
import numpy as np
import pytest

import ctorch
import ctorch.nn as nn

from conftest import DEVICES

CUDA_ONLY = [p for p in DEVICES if p.values[0] == "cuda"]

W = np.array([[1., 5., 2.], [3., 5., 0.], [3., 1., 2.], [0., 0., 9.]], np.float32)
IDX = np.array([0, 2, 1, 3, 3, 0])
OFFS = np.array([0, 2, 2, 5])


def np_bag_tuple(idx, w, offs, mode, psw=None, include_last=False, pad=-1, fast_sum=False):
    """(output, offset2bag, bag_size, max_indices) by PyTorch's rules: offset2bag from the bag starts (empty on the
    'sum' fast path), bag_size the non-padding entries ('sum': zeros, one per offset), the last bag ending at the
    end of indices; max_indices the weight row of each first maximum ('max'), else bag_size."""
    n, B = len(idx), len(offs) - 1 if include_last else len(offs)
    out = np.zeros((B, w.shape[1]), w.dtype)
    size = np.zeros(B, np.int64)
    mx = np.zeros((B, w.shape[1]), np.int64)
    for b in range(B):
        end = offs[b + 1] if b + 1 < len(offs) else n
        pos = [j for j in range(offs[b], end) if idx[j] != pad]
        size[b] = sum(idx[j] != pad for j in range(offs[b], offs[b + 1] if b + 1 < B else n))
        if pos:
            rows = w[idx[pos]] * (psw[pos][:, None] if psw is not None else 1)
            out[b] = rows.sum(0) if mode == 0 else rows.sum(0) / size[b] if mode == 1 else rows.max(0)
            mx[b] = idx[pos][rows.argmax(0)]
    o2b = np.zeros(n + 1, np.int64)
    np.add.at(o2b, offs[1:B], 1)
    o2b = np.cumsum(o2b)[:n]
    return (out, o2b[:0] if fast_sum and mode == 0 else o2b, np.zeros(len(offs), np.int64) if mode == 0 else size,
            mx if mode == 2 else (np.zeros(len(offs), np.int64) if mode == 0 else size))


def check_tuple(got, want):
    assert len(got) == 4
    np.testing.assert_allclose(got[0].cpu().numpy(), want[0], rtol=1e-6)
    for g, e in zip(got[1:], want[1:]):
        assert g.shape == e.shape
        np.testing.assert_array_equal(g.cpu().numpy(), e)


# --- torch.embedding_bag -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_embedding_bag_tuple(device, mode):
    w, i, o = ctorch.tensor(W, device=device), ctorch.tensor(IDX, device=device), ctorch.tensor(OFFS, device=device)
    check_tuple(ctorch.embedding_bag(w, i, o, False, mode), np_bag_tuple(IDX, W, OFFS, mode, fast_sum=True))
    # padding_idx (negative counts from the end), include_last_offset
    check_tuple(ctorch.embedding_bag(w, i, o, False, mode, False, None, False, -4),
                np_bag_tuple(IDX, W, OFFS, mode, pad=0))
    last = np.array([0, 2, 2, 6])
    check_tuple(ctorch.embedding_bag(w, i, ctorch.tensor(last, device=device), False, mode, False, None, True, 3),
                np_bag_tuple(IDX, W, last, mode, include_last=True, pad=3))
    # float64 leaves the 'sum' fast path: offset2bag is filled
    check_tuple(ctorch.embedding_bag(w.double(), i, o, False, mode), np_bag_tuple(IDX, W.astype(np.float64), OFFS, mode))
    r = ctorch.embedding_bag(w, i.int(), o.int(), mode=mode)
    assert [t.dtype for t in r] == [ctorch.float32] + [ctorch.int32] * 3
    assert ctorch.embedding_bag(w, i.int(), o, mode=mode)[1].dtype == ctorch.int64


def test_embedding_bag_tuple_known_values():
    # as PyTorch 2.x's CPU gives them
    r = ctorch.embedding_bag(ctorch.tensor(W), ctorch.tensor(IDX), ctorch.tensor(OFFS), False, 2, False, None, False, 0)
    assert r[0].tolist() == [[3., 1., 2.], [0., 0., 0.], [3., 5., 9.], [0., 0., 0.]]
    assert r[1].tolist() == [0, 0, 2, 2, 2, 3] and r[2].tolist() == [1, 0, 3, 0]
    assert r[3].tolist() == [[2, 2, 2], [0, 0, 0], [1, 1, 3], [0, 0, 0]]
    psw = ctorch.arange(6.)
    r = ctorch.embedding_bag(ctorch.tensor(W), ctorch.tensor(IDX), ctorch.tensor(OFFS), False, 0, False, psw)
    assert r[0].tolist() == [[3., 1., 2.], [0., 0., 0.], [6., 10., 63.], [5., 25., 10.]] and r[1].shape == (0,)
    strided = ctorch.arange(12.)[::2]  # a non-unit stride leaves the fast path
    assert ctorch.embedding_bag(ctorch.tensor(W), ctorch.tensor(IDX), ctorch.tensor(OFFS), False, 0, False,
                                strided)[1].tolist() == [0, 0, 2, 2, 2, 3]


def test_embedding_bag_tuple_grad():
    w = ctorch.tensor(W + np.arange(12.).reshape(4, 3) / 64, requires_grad=True)  # no ties for 'max'
    i, o = ctorch.tensor(IDX), ctorch.tensor(OFFS)
    r = ctorch.embedding_bag(w, i, o, False, 1)
    assert r[0].grad_fn.name() == "EmbeddingBagBackward0" and not any(t.requires_grad for t in r[1:])
    for mode in (0, 1, 2):
        assert ctorch.autograd.gradcheck(lambda w: ctorch.embedding_bag(w, i, o, False, mode)[0], (w,))
    psw = ctorch.rand(6, dtype=ctorch.float64, requires_grad=True)
    assert ctorch.autograd.gradcheck(lambda w, p: ctorch.embedding_bag(w, i, o, False, 0, False, p)[0], (w, psw))


@pytest.mark.parametrize("args,exc,msg", [
    ((IDX.astype(np.float32), OFFS), RuntimeError, "'indices' to have one of the following scalar types: Long, Int"),
    ((np.array([0, 9]), np.array([0])), RuntimeError,
     "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be 9"),
    ((IDX, np.array([1, 3])), RuntimeError, "offsets\\[0\\] has to be 0"),
    ((IDX, np.array([0, 7])), RuntimeError, "offsets\\[-1\\] can not be greater than input's length 6 but got "
                                            "offsets\\[-1\\] of 7"),
])
def test_embedding_bag_tuple_errors(args, exc, msg):
    with pytest.raises(exc, match=msg):
        ctorch.embedding_bag(ctorch.tensor(W), ctorch.tensor(args[0]), ctorch.tensor(args[1]), False, 2)


def test_embedding_bag_tuple_argument_errors():
    w, i, o = ctorch.tensor(W), ctorch.tensor(IDX), ctorch.tensor(OFFS)
    with pytest.raises(RuntimeError, match="padding_idx must be within the number of embeddings, -4 through 3, "
                                           "but got 4"):
        ctorch.embedding_bag(w, i, o, False, 2, False, None, False, 4)
    with pytest.raises(RuntimeError, match="'weight' to have one of the following scalar types: Half, BFloat16, "
                                           "Float, Double; but got torch.IntTensor"):
        ctorch.embedding_bag(w.int(), i, o)
    with pytest.raises(RuntimeError, match="embedding_bag: per_sample_weights only supported with mode='sum'"):
        ctorch.embedding_bag(w, i, o, False, 1, False, ctorch.ones(6))
    with pytest.raises(RuntimeError, match="Expected per_sample_weights.value\\(\\).numel\\(\\) == indices.numel"):
        ctorch.embedding_bag(w, i, o, False, 0, False, ctorch.ones(5))
    with pytest.raises(RuntimeError, match="torch.FloatTensor does not equal torch.DoubleTensor"):
        ctorch.embedding_bag(w, i, o, False, 0, False, ctorch.ones(6, dtype=ctorch.float64))
    with pytest.raises(RuntimeError, match="`mode` must be sum, mean, or max."):
        ctorch.embedding_bag(w, i, o, False, 3)
    with pytest.raises(TypeError, match="argument 'offsets' \\(position 3\\) must be Tensor, not NoneType"):
        ctorch.embedding_bag(w, i, None)


# --- torch.distributed, nn.SyncBatchNorm -------------------------------------------------------------------------
def test_distributed_unavailable():
    assert ctorch.distributed.is_available() is False
    assert isinstance(ctorch.distributed.ProcessGroup, type)
    assert not hasattr(ctorch.distributed, "is_initialized")  # as PyTorch built with USE_DISTRIBUTED=0


def test_sync_batchnorm_module():
    m = nn.SyncBatchNorm(4)
    assert repr(m) == "SyncBatchNorm(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    assert m.process_group is None
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert repr(nn.SyncBatchNorm(3, eps=1e-3, momentum=None, affine=False, track_running_stats=False)) == \
        "SyncBatchNorm(3, eps=0.001, momentum=None, affine=False, bias=False, track_running_stats=False)"
    with pytest.raises(ValueError, match="expected at least 2D input \\(got 1D input\\)"):
        m(ctorch.zeros(4))
    with pytest.raises(ValueError, match="SyncBatchNorm number of input channels should be non-zero"):
        m(ctorch.zeros(2, 0, 3))


def test_sync_batchnorm_forward(device):
    # no process group: the plain batch norm, as PyTorch without an initialised distributed package
    x = ctorch.tensor(np.sin(np.arange(30.)).reshape(2, 3, 5).astype(np.float32), device=device)
    s, b = nn.SyncBatchNorm(3).to(device), nn.BatchNorm1d(3).to(device)
    for train in (True, False):
        s.train(train)
        b.train(train)
        np.testing.assert_allclose(s(x).detach().cpu().numpy(), b(x).detach().cpu().numpy(), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(s.running_var.cpu().numpy(), b.running_var.cpu().numpy(), rtol=1e-6)
    assert s.num_batches_tracked.item() == 1
    xn = x.cpu().numpy()
    mean = xn.mean((0, 2))
    np.testing.assert_allclose(s.running_mean.cpu().numpy(), 0.1 * mean, rtol=1e-5, atol=1e-7)


def test_convert_sync_batchnorm():
    net = nn.Sequential(nn.Conv2d(2, 4, 1), nn.BatchNorm2d(4), nn.Sequential(nn.BatchNorm1d(3, affine=False,
                                                                                            momentum=None)))
    net.eval()
    w, rv = net[1].weight, net[2][0].running_var
    out = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert out is net and type(out[0]).__name__ == "Conv2d"
    assert type(out[1]) is nn.SyncBatchNorm and type(out[2][0]) is nn.SyncBatchNorm
    assert out[1].weight is w and out[2][0].running_var is rv and not out[1].training
    assert repr(out[2][0]) == ("SyncBatchNorm(3, eps=1e-05, momentum=None, affine=False, bias=False, "
                               "track_running_stats=True)")
    bn = nn.BatchNorm3d(2)
    bn.qconfig = "q"
    sbn = nn.SyncBatchNorm.convert_sync_batchnorm(bn)
    assert type(sbn) is nn.SyncBatchNorm and sbn.bias is bn.bias and sbn.num_batches_tracked is bn.num_batches_tracked
    assert sbn.qconfig == "q" and sbn.training


# --- the per-device SyncBatchNorm steps ---------------------------------------------------------------------------
SYNC_OPS = ["batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
            "batch_norm_backward_reduce", "batch_norm_backward_elemt"]


def test_sync_bn_ops_cpu():
    x, v = ctorch.randn(3, 4, 5), ctorch.ones(4)
    calls = {"batch_norm_stats": (x, 1e-5), "batch_norm_elemt": (x, v, v, v, v, 1e-5),
             "batch_norm_gather_stats": (x, ctorch.ones(2, 4), ctorch.ones(2, 4), None, None, 0.1, 1e-5, 6),
             "batch_norm_gather_stats_with_counts": (x, ctorch.ones(2, 4), ctorch.ones(2, 4), None, None, 0.1, 1e-5,
                                                     ctorch.ones(2)),
             "batch_norm_backward_reduce": (x, x, v, v, None, True, True, True),
             "batch_norm_backward_elemt": (x, x, v, v, None, v, v, ctorch.tensor([15], dtype=ctorch.int32))}
    for name in SYNC_OPS:
        with pytest.raises(NotImplementedError, match=f"Could not run 'aten::{name}' with arguments from the 'CPU' "
                                                      "backend"):
            getattr(ctorch, name)(*calls[name])


@pytest.mark.parametrize("device", CUDA_ONLY)
def test_sync_bn_ops_forward(device):
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((n, 3, 4)) for n in (2, 5)]
    eps, mom = 1e-5, 0.1
    stats = [ctorch.batch_norm_stats(ctorch.tensor(x, device=device), eps) for x in xs]
    for (m, inv), x in zip(stats, xs):
        np.testing.assert_allclose(m.cpu().numpy(), x.mean((0, 2)), rtol=1e-10)
        np.testing.assert_allclose(inv.cpu().numpy(), 1 / np.sqrt(x.var((0, 2)) + eps), rtol=1e-10)
    half = ctorch.batch_norm_stats(ctorch.tensor(xs[0], device=device).half(), eps)
    assert half[0].dtype == ctorch.float32
    # the two "processes" merged: the statistics of all the data
    allx = np.concatenate(xs)
    means, invs = ctorch.stack([s[0] for s in stats]), ctorch.stack([s[1] for s in stats])
    rm, rv = ctorch.zeros(3, dtype=ctorch.float64, device=device), ctorch.ones(3, dtype=ctorch.float64, device=device)
    x0 = ctorch.tensor(xs[0], device=device)
    counts = ctorch.tensor([8., 20.], dtype=ctorch.float64, device=device)
    gm, ginv = ctorch.batch_norm_gather_stats_with_counts(x0, means, invs, rm, rv, mom, eps, counts)
    np.testing.assert_allclose(gm.cpu().numpy(), allx.mean((0, 2)), rtol=1e-10)
    np.testing.assert_allclose(ginv.cpu().numpy(), 1 / np.sqrt(allx.var((0, 2)) + eps), rtol=1e-8)
    np.testing.assert_allclose(rm.cpu().numpy(), mom * allx.mean((0, 2)), rtol=1e-10)
    np.testing.assert_allclose(rv.cpu().numpy(), (1 - mom) + mom * allx.var((0, 2), ddof=1), rtol=1e-8)
    same = ctorch.batch_norm_gather_stats(x0, ctorch.stack([stats[0][0]] * 2), ctorch.stack([stats[0][1]] * 2),
                                          None, None, mom, eps, 8)
    np.testing.assert_allclose(same[0].cpu().numpy(), stats[0][0].cpu().numpy(), rtol=1e-10)
    np.testing.assert_allclose(same[1].cpu().numpy(), stats[0][1].cpu().numpy(), rtol=1e-8)
    w, b = ctorch.tensor([1., 2., 3.], device=device).double(), ctorch.tensor([0., 1., -1.], device=device).double()
    y = ctorch.batch_norm_elemt(x0, w, b, gm, ginv, eps)
    want = (xs[0] - allx.mean((0, 2))[:, None]) / np.sqrt(allx.var((0, 2)) + eps)[:, None] * w.cpu().numpy()[:, None] \
        + b.cpu().numpy()[:, None]
    np.testing.assert_allclose(y.cpu().numpy(), want, rtol=1e-10)


@pytest.mark.parametrize("device", CUDA_ONLY)
def test_sync_bn_ops_backward(device):
    # one process: batch_norm_backward_reduce + _elemt give batch_norm's gradients
    rng = np.random.default_rng(1)
    x = ctorch.tensor(rng.standard_normal((4, 3, 5)), device=device, requires_grad=True)
    w = ctorch.tensor([0.5, 2., -1.], dtype=ctorch.float64, device=device, requires_grad=True)
    g = ctorch.tensor(rng.standard_normal((4, 3, 5)), device=device)
    eps = 1e-5
    y = ctorch.nn.functional.batch_norm(x, None, None, w, None, True, 0.1, eps)
    gx, gw = ctorch.autograd.grad(y, (x, w), g)
    mean, invstd = ctorch.batch_norm_stats(x.detach(), eps)
    sum_dy, sum_dy_xmu, grad_w, grad_b = ctorch.batch_norm_backward_reduce(g, x.detach(), mean, invstd, w.detach(),
                                                                           True, True, True)
    np.testing.assert_allclose(grad_w.cpu().numpy(), gw.cpu().numpy(), rtol=1e-10)
    np.testing.assert_allclose(grad_b.cpu().numpy(), g.cpu().numpy().sum((0, 2)), rtol=1e-10)
    count = ctorch.tensor([20], dtype=ctorch.int32, device=device)
    gi = ctorch.batch_norm_backward_elemt(g, x.detach(), mean, invstd, w.detach(), sum_dy, sum_dy_xmu, count)
    np.testing.assert_allclose(gi.cpu().numpy(), gx.cpu().numpy(), rtol=1e-8, atol=1e-12)
    r = ctorch.batch_norm_backward_reduce(g, x.detach(), mean, invstd, None, False, True, False)
    assert r[0] is None and r[1] is None and r[3] is None and r[2].dtype == ctorch.float64


# --- Tensor.record_stream -----------------------------------------------------------------------------------------
def test_record_stream_cpu():
    with pytest.raises(NotImplementedError, match="Could not run 'aten::record_stream' with arguments from the "
                                                  "'CPU' backend"):
        ctorch.ones(3).record_stream(type("S", (), {"cuda_stream": 0})())
    with pytest.raises(RuntimeError, match="unknown parameter type"):
        ctorch.ones(3).record_stream(None)


@pytest.mark.parametrize("device", CUDA_ONLY)
def test_record_stream_holds_block(device):
    st = ctorch.cuda.memory_stats

    def active():
        return st()["active_bytes.all.current"], st()["allocated_bytes.all.current"]

    warm = ctorch.empty(1, device=device)  # the device's allocator exists (memory_stats is {} before)
    base = active()
    x = ctorch.empty(1000, device=device)  # 4096 bytes
    x.record_stream(ctorch.cuda.current_stream())  # its own stream: nothing to wait for
    del x
    assert active() == base
    s = ctorch.cuda.Stream()
    x = ctorch.empty(1000, device=device)
    x.record_stream(s)
    del x
    # freed on another stream's behalf: no longer allocated, still active until its event is seen to complete
    assert active() == (base[0] + 4096, base[1])
    pending = [b for seg in ctorch.cuda.memory_snapshot() for b in seg["blocks"] if b["state"] == "active_pending_free"]
    assert [b["size"] for b in pending] == [4096]
    ctorch.cuda.empty_cache()  # waits for the events
    assert active() == base
    x = ctorch.empty(1000, device=device)
    x.record_stream(s)
    del x
    y = ctorch.empty(10, device=device)  # the next allocation polls the (complete) events first
    assert active() == (base[0] + 512, base[1] + 512)
    del y
