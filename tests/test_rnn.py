"""Recurrent layers (csrc/rnn.c, nn/modules/rnn.py, nn/utils/rnn.py): the cells and nn.RNN / LSTM /
GRU against a NumPy implementation of the same recurrences with the same weights (padded, packed
with unequal lengths, batch_first, bidirectional, 2 layers, proj_size), gradcheck in float64,
PyTorch's parameter names / state_dict keys / reprs / errors, the packing helpers, and a tiny
LSTM that learns."""
import math

import numpy as np
import pytest

import ctorch as torch
import ctorch.nn as nn
from ctorch.autograd import gradcheck
from ctorch.nn.utils import rnn as rnn_utils

from conftest import DEVICES, assert_close, to_numpy

MODES = ["RNN_TANH", "RNN_RELU", "LSTM", "GRU"]
GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# --- the NumPy oracle --------------------------------------------------------------------------
def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def np_cell(mode, x, h, c, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None):
    """One step of PyTorch's documented recurrence; returns (h', c')."""
    gi = x @ w_ih.T + (0 if b_ih is None else b_ih)
    gh = h @ w_hh.T + (0 if b_hh is None else b_hh)
    if mode == "RNN_TANH":
        return np.tanh(gi + gh), None
    if mode == "RNN_RELU":
        return np.maximum(gi + gh, 0), None
    if mode == "LSTM":
        i, f, g, o = np.split(gi + gh, 4, axis=-1)
        c2 = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h2 = _sigmoid(o) * np.tanh(c2)
        return (h2 if w_hr is None else h2 @ w_hr.T), c2
    ri, zi, ni = np.split(gi, 3, axis=-1)
    rh, zh, nh = np.split(gh, 3, axis=-1)
    r, z = _sigmoid(ri + rh), _sigmoid(zi + zh)
    n = np.tanh(ni + r * nh)
    return (1 - z) * n + z * h, None


def np_rnn(mode, params, x, lengths, h0, c0, num_layers, bidirectional, bias=True, proj=False):
    """nn.RNN/LSTM/GRU over x (T, B, in), each sequence b run alone over its first lengths[b] steps.
    params: name -> array (PyTorch's names). Returns output (T, B, D * out) zero past each end,
    h_n and c_n (layers * D, B, .) taken at each sequence's own last step."""
    T, B = x.shape[:2]
    dirs = 2 if bidirectional else 1
    out_size = h0.shape[-1]
    output = np.zeros((T, B, dirs * out_size))
    h_n, c_n = np.zeros_like(h0), (None if c0 is None else np.zeros_like(c0))
    for b in range(B):
        L = lengths[b]
        seq = x[:L, b]
        for layer in range(num_layers):
            outs = []
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                w = [params["weight_ih" + sfx], params["weight_hh" + sfx]]
                w += [params["bias_ih" + sfx], params["bias_hh" + sfx]] if bias else [None, None]
                w_hr = params["weight_hr" + sfx] if proj else None
                g = layer * dirs + d
                h, c = h0[g, b], (None if c0 is None else c0[g, b])
                ys = [None] * L
                for t in (range(L - 1, -1, -1) if d else range(L)):
                    h, c = np_cell(mode, seq[t], h, c, *w, w_hr=w_hr)
                    ys[t] = h
                h_n[g, b] = h
                if c0 is not None:
                    c_n[g, b] = c
                outs.append(np.stack(ys))
            seq = np.concatenate(outs, axis=-1)
        output[:L, b] = seq
    return output, h_n, c_n


def _params(module):
    return {n: to_numpy(p).astype(np.float64) for n, p in module.named_parameters()}


def _mode_module(mode, *args, **kwargs):
    if mode.startswith("RNN"):
        return nn.RNN(*args, nonlinearity="tanh" if mode == "RNN_TANH" else "relu", **kwargs)
    return {"LSTM": nn.LSTM, "GRU": nn.GRU}[mode](*args, **kwargs)


# --- cells ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
def test_cell_functions_match_numpy(device, dtype, mode, rng):
    B, I, H = 3, 4, 5
    G = GATES[mode]
    arrs = [rng.standard_normal(s) for s in [(B, I), (B, H), (B, H), (G * H, I), (G * H, H), (G * H,), (G * H,)]]
    x, h, c, w_ih, w_hh, b_ih, b_hh = [torch.tensor(a, dtype=getattr(torch, dtype), device=device) for a in arrs]
    for biases in [(b_ih, b_hh), (None, None)]:
        nb = [None if t is None else to_numpy(t) for t in biases]
        if mode == "LSTM":
            hy, cy = torch.lstm_cell(x, (h, c), w_ih, w_hh, *biases)
            eh, ec = np_cell(mode, arrs[0], arrs[1], arrs[2], arrs[3], arrs[4], *nb)
            assert_close(cy, ec)
        else:
            fn = {"RNN_TANH": torch.rnn_tanh_cell, "RNN_RELU": torch.rnn_relu_cell, "GRU": torch.gru_cell}[mode]
            hy = fn(x, h, w_ih, w_hh, *biases)
            eh, _ = np_cell(mode, arrs[0], arrs[1], None, arrs[3], arrs[4], *nb)
        assert hy.dtype == getattr(torch, dtype) and hy.device.type == device
        assert_close(hy, eh)


@pytest.mark.parametrize("mode, name", [("RNN_TANH", "TanhBackward0"), ("RNN_RELU", "ReluBackward0"),
                                        ("LSTM", "MulBackward0"), ("GRU", "AddBackward0")])
def test_cell_grad_fn_names(mode, name):
    x = torch.randn(2, 3, requires_grad=True)
    cell = {"RNN_TANH": nn.RNNCell(3, 4), "RNN_RELU": nn.RNNCell(3, 4, nonlinearity="relu"),
            "LSTM": nn.LSTMCell(3, 4), "GRU": nn.GRUCell(3, 4)}[mode]
    out = cell(x)
    if mode == "LSTM":
        assert type(out[1].grad_fn).__name__ == "AddBackward0"
        out = out[0]
    assert type(out.grad_fn).__name__ == name


@pytest.mark.parametrize("device", DEVICES)
def test_cell_modules(device, rng):
    cells = {"RNN_TANH": nn.RNNCell(3, 4, device=device), "RNN_RELU": nn.RNNCell(3, 4, True, "relu", device=device),
             "LSTM": nn.LSTMCell(3, 4, device=device), "GRU": nn.GRUCell(3, 4, bias=False, device=device)}
    bound = 1 / math.sqrt(4)
    for mode, cell in cells.items():
        names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if mode != "GRU" else [])
        assert [n for n, _ in cell.named_parameters()] == names
        G = GATES[mode]
        assert tuple(cell.weight_ih.shape) == (G * 4, 3) and tuple(cell.weight_hh.shape) == (G * 4, 4)
        for p in cell.parameters():
            assert p.device.type == device and np.abs(to_numpy(p)).max() <= bound
        w = _params(cell)
        bias = (w["bias_ih"], w["bias_hh"]) if mode != "GRU" else (None, None)
        for batched in [True, False]:
            xa = rng.standard_normal((2, 3) if batched else (3,))
            x = torch.tensor(xa, dtype=torch.float32, device=device)
            zeros = np.zeros((2, 4) if batched else (4,))
            ha = rng.standard_normal(zeros.shape)
            h = torch.tensor(ha, dtype=torch.float32, device=device)
            if mode == "LSTM":
                for hx, (eh0, ec0) in [(None, (zeros, zeros)), ((h, h * 2), (ha, ha * 2))]:
                    hy, cy = cell(x, hx)
                    eh, ec = np_cell(mode, xa, eh0, ec0, w["weight_ih"], w["weight_hh"], *bias)
                    assert_close(hy, eh)
                    assert_close(cy, ec)
            else:
                for hx, eh0 in [(None, zeros), (h, ha)]:
                    eh, _ = np_cell(mode, xa, eh0, None, w["weight_ih"], w["weight_hh"], *bias)
                    assert_close(cell(x, hx), eh)
    assert [repr(c) for c in cells.values()] == ["RNNCell(3, 4)", "RNNCell(3, 4, nonlinearity=relu)",
                                                 "LSTMCell(3, 4)", "GRUCell(3, 4, bias=False)"]


# --- nn.RNN / LSTM / GRU -------------------------------------------------------------------------
CONFIGS = {
    "plain": dict(),
    "batch_first_bidir_2layers": dict(batch_first=True, bidirectional=True, num_layers=2),
    "no_bias_2layers": dict(bias=False, num_layers=2),
    "proj_bidir": dict(proj_size=2, bidirectional=True),
}


def _run_case(mode, config, device, dtype, rng, lengths=None, given_hx=True):
    kw = CONFIGS[config]
    I, H, T, B = 3, 4, 5, 3
    m = _mode_module(mode, I, H, device=device, dtype=getattr(torch, dtype), **kw)
    params = _params(m)
    L, D = kw.get("num_layers", 1), 2 if kw.get("bidirectional") else 1
    out_size = kw.get("proj_size") or H
    xa = rng.standard_normal((T, B, I))
    h0 = rng.standard_normal((L * D, B, out_size)) if given_hx else np.zeros((L * D, B, out_size))
    c0 = (rng.standard_normal((L * D, B, H)) if given_hx else np.zeros((L * D, B, H))) if mode == "LSTM" else None
    as_t = lambda a: torch.tensor(a, dtype=getattr(torch, dtype), device=device)  # noqa: E731
    x = as_t(xa.transpose(1, 0, 2) if kw.get("batch_first") else xa)
    hx = None
    if given_hx:
        hx = (as_t(h0), as_t(c0)) if mode == "LSTM" else as_t(h0)
    if lengths is not None:
        x = rnn_utils.pack_padded_sequence(x, lengths, batch_first=kw.get("batch_first", False),
                                           enforce_sorted=False)
    out, hidden = m(x, hx)
    expect = np_rnn(mode, params, xa, lengths or [T] * B, h0, c0, L, D == 2, kw.get("bias", True),
                    bool(kw.get("proj_size")))
    return m, out, hidden, expect


def _assert_hidden(mode, hidden, eh, ec):
    if mode == "LSTM":
        assert_close(hidden[0], eh)
        assert_close(hidden[1], ec)
    else:
        assert_close(hidden, eh)


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
def test_rnn_matches_numpy(device, mode, config, rng):
    if config == "proj_bidir" and mode != "LSTM":
        pytest.skip("proj_size is LSTM's")
    for dtype in ["float32", "float64"]:
        m, out, hidden, (eo, eh, ec) = _run_case(mode, config, device, dtype, rng, given_hx=dtype == "float64")
        if m.batch_first:
            eo = eo.transpose(1, 0, 2)
        assert out.dtype == getattr(torch, dtype) and out.device.type == device
        assert_close(out, eo)
        _assert_hidden(mode, hidden, eh, ec)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
def test_packed_matches_numpy(device, mode, rng):
    """Unequal lengths, unsorted: outputs zero past each end, h_n at each sequence's own last step."""
    for config in ["batch_first_bidir_2layers", "proj_bidir"] if mode == "LSTM" else ["batch_first_bidir_2layers"]:
        m, out, hidden, (eo, eh, ec) = _run_case(mode, config, device, "float64", rng, lengths=[2, 5, 1])
        assert isinstance(out, rnn_utils.PackedSequence)
        padded, lengths = rnn_utils.pad_packed_sequence(out, batch_first=m.batch_first)
        assert lengths.tolist() == [2, 5, 1]
        assert_close(padded, eo.transpose(1, 0, 2) if m.batch_first else eo)
        _assert_hidden(mode, hidden, eh, ec)


@pytest.mark.parametrize("mode", MODES)
def test_unbatched_and_grad_fn(mode, rng):
    m = _mode_module(mode, 3, 4, num_layers=2, dtype=torch.float64)
    xa = rng.standard_normal((5, 3))
    x = torch.tensor(xa, requires_grad=True)
    out, hidden = m(x)
    eo, eh, ec = np_rnn(mode, _params(m), xa[:, None], [5], np.zeros((2, 1, 4)),
                        np.zeros((2, 1, 4)) if mode == "LSTM" else None, 2, False)
    assert_close(out, eo[:, 0])
    assert_close(hidden[0] if mode == "LSTM" else hidden, eh[:, 0])
    if mode == "LSTM":
        assert_close(hidden[1], ec[:, 0])
        h = torch.zeros(2, 4, dtype=torch.float64)
        out2, _ = m(x, (h, h))
    else:
        out2, _ = m(x, torch.zeros(2, 4, dtype=torch.float64))
    assert_close(out2, eo[:, 0])
    assert type(out.grad_fn).__name__ == "SqueezeBackward1"
    out, hidden = m(x.unsqueeze(1))  # batched: PyTorch's CPU names (LSTM's output aside: MkldnnRnnLayerBackward0)
    if mode != "LSTM":
        assert type(out.grad_fn).__name__ == "StackBackward0"
    assert type((hidden[0] if mode == "LSTM" else hidden).grad_fn).__name__ == "StackBackward0"


@pytest.mark.parametrize("device", DEVICES)
def test_dropout_between_layers(device, rng):
    """dropout=1 zeroes the first layer's output in training, so layer 2 sees zeros; eval ignores it."""
    m = nn.GRU(3, 4, num_layers=2, dropout=1.0, dtype=torch.float64, device=device)
    xa = rng.standard_normal((4, 2, 3))
    x = torch.tensor(xa, device=device)
    p = _params(m)
    eo, _, _ = np_rnn("GRU", p, xa, [4, 4], np.zeros((2, 2, 4)), None, 2, False)
    m.eval()
    assert_close(m(x)[0], eo)
    m.train()
    layer2 = {k.replace("_l1", "_l0"): v for k, v in p.items() if "_l1" in k}
    ez, _, _ = np_rnn("GRU", layer2, np.zeros((4, 2, 4)), [4, 4], np.zeros((1, 2, 4)), None, 1, False)
    assert_close(m(x)[0], ez)


def test_gradcheck_lstm_gru():
    rng = np.random.default_rng(1)
    t = lambda *s: torch.tensor(rng.standard_normal(s) * 0.5, requires_grad=True)  # noqa: E731
    # LSTM, packed (lengths 3, 1), bidirectional, projection: input, h0, c0 and every weight
    x, h0, c0 = t(4, 2), t(2, 2, 1), t(2, 2, 2)
    weights = [t(8, 2), t(8, 1), t(8), t(8), t(1, 2), t(8, 2), t(8, 1), t(8), t(8), t(1, 2)]
    batch_sizes = torch.tensor([2, 1, 1])

    def lstm(x, h0, c0, *ws):
        return torch._C._rnn("LSTM", x, batch_sizes, (h0, c0), list(ws), True, 1, 0.0, False, True, False)

    assert gradcheck(lstm, (x, h0, c0, *weights))
    # GRU, 2 layers, padded, batch_first
    x, h0 = t(2, 2, 2), t(2, 2, 2)
    weights = [t(6, 2), t(6, 2), t(6), t(6), t(6, 2), t(6, 2), t(6), t(6)]

    def gru(x, h0, *ws):
        return torch._C._rnn("GRU", x, None, h0, list(ws), True, 2, 0.0, False, False, True)

    assert gradcheck(gru, (x, h0, *weights))


# state_dict keys of the reference PyTorch for the same constructions
EXPECTED_KEYS = {
    "RNN(3, 4, num_layers=2, bidirectional=True)": [
        "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l0_reverse", "weight_hh_l0_reverse",
        "bias_ih_l0_reverse", "bias_hh_l0_reverse", "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1",
        "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse"],
    "LSTM(3, 4, proj_size=2, num_layers=2, bidirectional=True)": [
        "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0", "weight_ih_l0_reverse",
        "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse", "weight_hr_l0_reverse", "weight_ih_l1",
        "weight_hh_l1", "bias_ih_l1", "bias_hh_l1", "weight_hr_l1", "weight_ih_l1_reverse", "weight_hh_l1_reverse",
        "bias_ih_l1_reverse", "bias_hh_l1_reverse", "weight_hr_l1_reverse"],
    "GRU(3, 4, bias=False, batch_first=True)": ["weight_ih_l0", "weight_hh_l0"],
    "LSTM(3, 4, batch_first=True, dropout=0.5)": ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"],
}
EXPECTED_SHAPES = {
    "LSTM(3, 4, proj_size=2, num_layers=2, bidirectional=True)": {
        "weight_ih_l0": (16, 3), "weight_hh_l0": (16, 2), "bias_ih_l0": (16,), "weight_hr_l0": (2, 4),
        "weight_ih_l1_reverse": (16, 4)},
    "RNN(3, 4, num_layers=2, bidirectional=True)": {"weight_ih_l1": (4, 8), "weight_hh_l1": (4, 4)},
}


@pytest.mark.filterwarnings("ignore:dropout option")
def test_state_dict_keys_shapes_repr():
    modules = [nn.RNN(3, 4, num_layers=2, bidirectional=True), nn.LSTM(3, 4, 2, proj_size=2, bidirectional=True),
               nn.GRU(3, 4, bias=False, batch_first=True), nn.LSTM(3, 4, batch_first=True, dropout=0.5)]
    for m in modules:
        sd = m.state_dict()
        assert list(sd) == EXPECTED_KEYS[repr(m)]
        for name, shape in EXPECTED_SHAPES.get(repr(m), {}).items():
            assert tuple(sd[name].shape) == shape
        bound = 1 / math.sqrt(4)
        assert all(np.abs(to_numpy(p)).max() <= bound for p in m.parameters())
        # a state dict with the same keys loads, and all_weights follows PyTorch's grouping
        clone = type(m)(3, 4, **{k: getattr(m, k) for k in ["num_layers", "bias", "batch_first", "dropout",
                                                               "bidirectional"]},
                        **({"proj_size": m.proj_size} if isinstance(m, nn.LSTM) else {}))
        clone.load_state_dict(sd)
        assert all(np.array_equal(to_numpy(a), to_numpy(b)) for a, b in zip(clone.parameters(), m.parameters()))
        assert [[id(w) for w in ws] for ws in m.all_weights] == [[id(getattr(m, n)) for n in names]
                                                              for names in m._all_weights]
        m.flatten_parameters()  # a no-op


def test_lstm_learns_toy_task():
    """Output at each step: whether the running sum of the inputs so far is positive (needs memory)."""
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((16, 6, 1))  # (batch, T, 1)
    ya = (np.cumsum(xa, axis=1) > 0).astype(np.float64)
    x, y = torch.tensor(xa, dtype=torch.float32), torch.tensor(ya, dtype=torch.float32)
    lstm, head = nn.LSTM(1, 8, batch_first=True), nn.Linear(8, 1)
    opt = torch.optim.Adam(list(lstm.parameters()) + list(head.parameters()), lr=0.05)
    loss_fn = nn.BCEWithLogitsLoss()
    losses = []
    for _ in range(40):
        opt.zero_grad()
        loss = loss_fn(head(lstm(x)[0]), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses


# --- nn.utils.rnn --------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_pad_sequence(device, rng):
    seqs = [rng.standard_normal((n, 2)) for n in (3, 1, 4)]
    ts = [torch.tensor(s, device=device) for s in seqs]
    for batch_first in [False, True]:
        for side in ["right", "left"]:
            want = np.full((3, 4, 2), -1.5)
            for b, s in enumerate(seqs):
                if side == "right":
                    want[b, :len(s)] = s
                else:
                    want[b, 4 - len(s):] = s
            got = rnn_utils.pad_sequence(ts, batch_first=batch_first, padding_value=-1.5, padding_side=side)
            assert got.device.type == device
            assert_close(got, want if batch_first else want.transpose(1, 0, 2))
    # the first sequence's dtype; integer data
    got = rnn_utils.pad_sequence([torch.tensor([1, 2], device=device), torch.tensor([3.5], device=device)])
    assert got.dtype == torch.int64 and got.tolist() == [[1, 3], [2, 0]]
    x = torch.tensor(seqs[2], requires_grad=True)
    rnn_utils.pad_sequence([x, x[:2]]).sum().backward()
    assert_close(x.grad, np.array([[2.0, 2.0], [2.0, 2.0], [1.0, 1.0], [1.0, 1.0]]))


@pytest.mark.parametrize("device", DEVICES)
def test_pack_and_pad_round_trip(device, rng):
    a = rng.standard_normal((4, 3, 2))  # (T, B, *)
    x = torch.tensor(a, device=device)
    p = rnn_utils.pack_padded_sequence(x, [4, 2, 3], enforce_sorted=False)
    assert p.batch_sizes.device.type == "cpu" and p.batch_sizes.tolist() == [3, 3, 2, 1]
    assert p.sorted_indices.tolist() == [0, 2, 1] and p.unsorted_indices.tolist() == [0, 2, 1]
    order = [(0, 0), (0, 2), (0, 1), (1, 0), (1, 2), (1, 1), (2, 0), (2, 2), (3, 0)]
    assert_close(p.data, np.stack([a[t, b] for t, b in order]))
    padded, lengths = rnn_utils.pad_packed_sequence(p, batch_first=True, padding_value=9.0, total_length=5)
    want = np.full((3, 5, 2), 9.0)
    for b, n in enumerate([4, 2, 3]):
        want[b, :n] = a[:n, b]
    assert lengths.tolist() == [4, 2, 3]
    assert_close(padded, want)
    # sorted input, batch_first, lengths as a list; pack_sequence; the namedtuple protocol
    q = rnn_utils.pack_padded_sequence(x.transpose(0, 1), [4, 3, 3], batch_first=True)
    assert q.sorted_indices is None and q.batch_sizes.tolist() == [3, 3, 3, 1]
    data, batch_sizes, sorted_indices, unsorted_indices = q
    assert rnn_utils.PackedSequence._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    s = rnn_utils.pack_sequence([x[:2, 0], x[:, 1], x[:3, 2]], enforce_sorted=False)
    assert [to_numpy(v).shape[0] for v in rnn_utils.unpack_sequence(s)] == [2, 4, 3]
    assert_close(rnn_utils.unpack_sequence(s)[2], a[:3, 2])
    assert s.to(torch.float32).data.dtype == torch.float32 and s.is_cuda == (device == "cuda")


def _raises(exc, match, fn):
    with pytest.raises(exc) as info:
        fn()
    assert match in str(info.value), str(info.value)


def test_errors():
    x, h = torch.randn(2, 3), torch.randn(2, 4)
    w_ih, w_hh = torch.randn(4, 3), torch.randn(4, 4)
    _raises(RuntimeError, "input has inconsistent input_size: got 5 expected 3",
            lambda: torch.rnn_tanh_cell(torch.randn(2, 5), h, w_ih, w_hh))
    _raises(RuntimeError, "Input batch size 2 doesn't match hidden0 batch size 3",
            lambda: torch.rnn_tanh_cell(x, torch.randn(3, 4), w_ih, w_hh))
    _raises(RuntimeError, "hidden0 has inconsistent hidden_size: got 5, expected 4",
            lambda: torch.rnn_relu_cell(x, torch.randn(2, 5), w_ih, w_hh))
    _raises(RuntimeError, "Expected 2D input (batch x feature), but got 1D input",
            lambda: torch.rnn_tanh_cell(x[0], h, w_ih, w_hh))
    _raises(RuntimeError, "weight_hh first dim must be 1 * hidden_size = 4, but got 5",
            lambda: torch.rnn_tanh_cell(x, h, w_ih, torch.randn(5, 4)))
    _raises(RuntimeError, "lstm_cell expects two hidden states",
            lambda: torch.lstm_cell(x, (h,), torch.randn(16, 3), torch.randn(16, 4)))
    _raises(TypeError, "lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not Tensor",
            lambda: torch.lstm_cell(x, h, torch.randn(16, 3), torch.randn(16, 4)))
    _raises(RuntimeError, "Input batch size 2 doesn't match hidden1 batch size 3",
            lambda: torch.lstm_cell(x, (h, torch.randn(3, 4)), torch.randn(16, 3), torch.randn(16, 4)))
    _raises(ValueError, "RNNCell: Expected input to be 1D or 2D, got 3D instead", lambda: nn.RNNCell(3, 4)(
        torch.randn(2, 2, 3)))
    _raises(ValueError, "LSTMCell: Expected hx[1] to be 1D or 2D, got 3D instead",
            lambda: nn.LSTMCell(3, 4)(x, (h, torch.randn(1, 2, 4))))
    _raises(RuntimeError, "Unknown nonlinearity: foo", lambda: nn.RNNCell(3, 4, nonlinearity="foo")(x))
    lstm = nn.LSTM(3, 4)
    _raises(ValueError, "LSTM: Expected input to be 2D or 3D, got 4D instead", lambda: lstm(torch.randn(5, 2, 3, 1)))
    _raises(ValueError, "RNN: Expected input to be 2D or 3D, got 1D tensor instead", lambda: nn.RNN(3, 4)(
        torch.randn(3)))
    _raises(RuntimeError, "input.size(-1) must be equal to input_size. Expected 3, got 5",
            lambda: lstm(torch.randn(5, 2, 5)))
    _raises(RuntimeError, "Expected hidden[0] size (1, 2, 4), got [1, 3, 4]",
            lambda: lstm(torch.randn(5, 2, 3), (torch.randn(1, 3, 4), torch.randn(1, 3, 4))))
    _raises(RuntimeError, "Expected hidden[1] size (1, 2, 4), got [1, 3, 4]",
            lambda: lstm(torch.randn(5, 2, 3), (torch.randn(1, 2, 4), torch.randn(1, 3, 4))))
    _raises(RuntimeError, "For batched 3-D input, hx and cx should also be 3-D but got (2-D, 2-D) tensors",
            lambda: lstm(torch.randn(5, 2, 3), (torch.randn(2, 4), torch.randn(2, 4))))
    _raises(ValueError, "RNN input dtype (torch.float64) does not match weight dtype (torch.float32). Convert input: "
            "input.to(torch.float32), or convert model: model.to(torch.float64)",
            lambda: lstm(torch.randn(5, 2, 3, dtype=torch.float64)))
    _raises(RuntimeError, "Expected sequence length to be larger than 0 in RNN", lambda: lstm(torch.randn(0, 2, 3)))
    gru = nn.GRU(3, 4)
    _raises(RuntimeError, "Expected hidden size (1, 2, 4), got [1, 3, 4]",
            lambda: gru(torch.randn(5, 2, 3), torch.randn(1, 3, 4)))
    _raises(RuntimeError, "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor",
            lambda: gru(torch.randn(5, 3), torch.randn(1, 3, 4)))
    _raises(RuntimeError, "For batched 3-D input, hx should also be 3-D but got 2-D tensor",
            lambda: nn.RNN(3, 4)(torch.randn(5, 2, 3), torch.randn(1, 4)))
    for exc, msg, make in [
        (ValueError, "proj_size argument is only supported for LSTM, not RNN or GRU",
         lambda: nn.GRU(3, 4, proj_size=2)),
        (ValueError, "proj_size has to be smaller than hidden_size", lambda: nn.LSTM(3, 4, proj_size=4)),
        (ValueError, "proj_size should be a positive integer or zero", lambda: nn.LSTM(3, 4, proj_size=-1)),
        (ValueError, "dropout should be a number in range [0, 1]", lambda: nn.LSTM(3, 4, dropout=2)),
        (ValueError, "num_layers must be greater than zero", lambda: nn.LSTM(3, 4, num_layers=0)),
        (ValueError, "hidden_size must be greater than zero", lambda: nn.GRU(3, 0)),
        (TypeError, "bias should be of type bool, got: int", lambda: nn.LSTM(3, 4, bias=1)),
        (ValueError, "Unknown nonlinearity 'x'. Select from 'tanh' or 'relu'.", lambda: nn.RNN(3, 4, nonlinearity="x")),
    ]:
        _raises(exc, msg, make)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.5)
    # packing
    pad = torch.zeros(4, 3)
    _raises(RuntimeError, "received an empty list of sequences", lambda: rnn_utils.pad_sequence([]))
    _raises(RuntimeError, "Expected padding_side to be one of left or right, but got middle.",
            lambda: rnn_utils.pad_sequence([pad], padding_side="middle"))
    _raises(RuntimeError, "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True",
            lambda: rnn_utils.pack_padded_sequence(pad, [2, 4, 3]))
    _raises(RuntimeError, "Length of all samples has to be greater than 0, but found an element in 'lengths' that "
            "is <= 0", lambda: rnn_utils.pack_padded_sequence(pad, [4, 0, 2], enforce_sorted=False))
    _raises(RuntimeError, "Expected `len(lengths)` to be equal to batch_size, but got 2 (batch_size=3)",
            lambda: rnn_utils.pack_padded_sequence(pad, [4, 2]))
    _raises(RuntimeError, "'lengths' argument should be a 1D CPU int64 tensor, but got 2D cpu Long tensor",
            lambda: rnn_utils.pack_padded_sequence(pad, [[4, 2, 1]]))
    _raises(RuntimeError, "exceeds the padded input's sequence length (4)",
            lambda: rnn_utils.pack_padded_sequence(pad, [5, 2, 1]))
    _raises(ValueError, "Expected total_length to be at least the length of the longest sequence in input, but got "
            "total_length=2 and max sequence length being 4",
            lambda: rnn_utils.pad_packed_sequence(rnn_utils.pack_padded_sequence(pad, [4, 2, 1]), total_length=2))
