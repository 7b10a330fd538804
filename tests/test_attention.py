"""Attention (csrc/attention.c: scaled_dot_product_attention, multi_head_attention_forward) and the
Transformer modules (python/ctorch/nn/modules/transformer.py), against NumPy on every device."""
import math
import warnings

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
import ctorch.nn.functional as F
from ctorch.autograd import gradcheck

from conftest import TOL, assert_no_leak, to_numpy

RNG = np.random.default_rng(11)


def t(a, device, dtype="float32", requires_grad=False):
    return ctorch.tensor(np.asarray(a), dtype=getattr(ctorch, dtype), device=device, requires_grad=requires_grad)


def randn(*shape):
    return RNG.standard_normal(shape)


def close(actual, expected, dtype, scale=1.0):
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(to_numpy(actual).astype(np.float64), expected, rtol=rtol * scale, atol=atol * scale)


def rounded(a, dtype):
    """a as the tensor of that dtype holds it (the oracle's input)."""
    return to_numpy(t(a, "cpu", dtype)).astype(np.float64)


# --- NumPy references -------------------------------------------------------------------------------------
def np_softmax_safe(s):
    """softmax over the last axis; a row of -inf only gives zeros (PyTorch's math backend)."""
    dead = np.all(s == -np.inf, axis=-1, keepdims=True)
    s = np.where(dead, 0.0, s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.where(dead, 0.0, e / e.sum(axis=-1, keepdims=True))


def np_sdpa(q, k, v, mask=None, causal=False, scale=None, gqa=False):
    """mask: None, bool (True = take part) or float (added)."""
    if gqa:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), bool))
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    return np_softmax_safe(s) @ v


def np_mha(query, key, value, p, num_heads, kpm=None, attn_mask=None, average=True):
    """nn.MultiheadAttention's forward on (L, N, E) inputs, p its parameters as NumPy arrays; masks bool
    (True = masked out) or float. Returns (output, weights (N, H, L, S) or their mean over heads)."""
    L, N, E = query.shape
    hd = E // num_heads
    if "in_proj_weight" in p:
        wq, wk, wv = np.split(p["in_proj_weight"], 3)
    else:
        wq, wk, wv = p["q_proj_weight"], p["k_proj_weight"], p["v_proj_weight"]
    bq, bk, bv = np.split(p["in_proj_bias"], 3) if "in_proj_bias" in p else (0.0, 0.0, 0.0)
    q, k, v = query @ wq.T + bq, key @ wk.T + bk, value @ wv.T + bv
    add = lambda m: None if m is None else (np.where(m, -np.inf, 0.0) if m.dtype == bool else m)  # noqa: E731
    attn_mask, kpm = add(attn_mask), add(kpm)
    if "bias_k" in p:
        k = np.concatenate([k, np.broadcast_to(p["bias_k"], (1, N, E))])
        v = np.concatenate([v, np.broadcast_to(p["bias_v"], (1, N, E))])
        attn_mask = None if attn_mask is None else np.pad(attn_mask, [(0, 0)] * (attn_mask.ndim - 1) + [(0, 1)])
        kpm = None if kpm is None else np.pad(kpm, [(0, 0), (0, 1)])
    S = k.shape[0]
    heads = lambda x: x.reshape(x.shape[0], N, num_heads, hd).transpose(1, 2, 0, 3)  # noqa: E731  (N, H, *, hd)
    q, k, v = heads(q), heads(k), heads(v)
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd)
    if attn_mask is not None:
        s = s + (attn_mask if attn_mask.ndim == 2 else attn_mask.reshape(N, num_heads, L, S))
    if kpm is not None:
        s = s + kpm[:, None, None, :]
    w = np_softmax_safe(s)
    out = (w @ v).transpose(2, 0, 1, 3).reshape(L, N, E)
    out = out @ p["out_proj.weight"].T + p.get("out_proj.bias", 0.0)
    return out, (w.mean(axis=1) if average else w)


def params_of(module):
    return {k: to_numpy(v).astype(np.float64) for k, v in module.state_dict().items()}


def np_layer_norm(x, w, b, eps=1e-5):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) * w + b


# --- scaled_dot_product_attention -------------------------------------------------------------------------
MASKS = ["none", "bool", "bool_broadcast", "float", "causal", "causal_rect", "scale"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_sdpa_matches_numpy(device, dtype):
    for kind in MASKS:
        L, S = (4, 3) if kind == "causal_rect" else (3, 5)
        q, k, v = (rounded(randn(2, 2, n, 4), dtype) for n in (L, S, S))
        kw, ref_kw = {}, {}
        if kind in ("bool", "bool_broadcast"):
            m = RNG.random((2, 1, L, S) if kind == "bool_broadcast" else (L, S)) > 0.3
            kw["attn_mask"], ref_kw["mask"] = t(m, device, "bool"), m
        elif kind == "float":
            m = rounded(randn(L, S), dtype)
            kw["attn_mask"], ref_kw["mask"] = t(m, device, dtype), m
        elif kind.startswith("causal"):
            kw["is_causal"] = ref_kw["causal"] = True
        elif kind == "scale":
            kw["scale"] = ref_kw["scale"] = -0.7
        out = F.scaled_dot_product_attention(t(q, device, dtype), t(k, device, dtype), t(v, device, dtype), **kw)
        assert out.dtype == getattr(ctorch, dtype) and out.device.type == device
        close(out, np_sdpa(q, k, v, **ref_kw), dtype, scale=4.0)


def test_sdpa_float32_mask_for_half_query(device):
    q, k, v = (rounded(randn(2, 3, 4), "float16") for _ in range(3))
    m = randn(3, 3)
    out = F.scaled_dot_product_attention(t(q, device, "float16"), t(k, device, "float16"), t(v, device, "float16"),
                                         attn_mask=t(m, device))
    close(out, np_sdpa(q, k, v, mask=m.astype(np.float32).astype(np.float64)), "float16", scale=4.0)


def test_sdpa_shapes_and_layouts(device):
    # 2-d, 3-d (batch broadcast against 4-d key/value), transposed, empty
    q, k, v = randn(3, 4), randn(5, 4), randn(5, 2)
    close(F.scaled_dot_product_attention(t(q, device), t(k, device), t(v, device)), np_sdpa(q, k, v), "float32")
    q3, k4, v4 = randn(2, 3, 4), randn(2, 1, 5, 4), randn(2, 1, 5, 2)
    out = F.scaled_dot_product_attention(t(q3, device), t(k4, device), t(v4, device))
    assert out.shape == (2, 2, 3, 2)
    close(out, np_sdpa(q3, k4, v4), "float32")
    kt = t(randn(2, 4, 5), device).transpose(1, 2)
    qt = t(randn(4, 2, 3), device).permute(1, 2, 0)
    close(F.scaled_dot_product_attention(qt, kt, kt), np_sdpa(to_numpy(qt), to_numpy(kt), to_numpy(kt)), "float32")
    for lq, s, e in ((0, 5, 4), (3, 0, 4), (3, 5, 0)):
        q, k, v = randn(2, lq, e), randn(2, s, e), randn(2, s, 3)
        out = F.scaled_dot_product_attention(t(q, device), t(k, device), t(v, device))
        assert out.shape == (2, lq, 3)
        # S = 0: no key to attend to, zeros; E = 0: equal scores, the mean of the values
        close(out, np_sdpa(q, k, v, scale=1.0) if s else np.zeros((2, lq, 3)), "float32")


def test_sdpa_fully_masked_rows(device):
    q, k, v = randn(2, 3, 4), randn(2, 5, 4), randn(2, 5, 6)
    keep = np.ones((3, 5), bool)
    keep[1] = False
    neg = np.where(keep, 0.0, -np.inf)
    for mask in (t(keep, device, "bool"), t(neg, device, "float64")):
        qg = t(q, device, "float64", requires_grad=True)
        out = F.scaled_dot_product_attention(qg, t(k, device, "float64"), t(v, device, "float64"), attn_mask=mask)
        got = to_numpy(out)
        assert np.all(got[:, 1] == 0.0) and np.isfinite(got).all()
        np.testing.assert_allclose(got, np_sdpa(q, k, v, mask=keep), rtol=1e-12, atol=1e-12)
        out.sum().backward()
        g = to_numpy(qg.grad)
        assert np.all(g[:, 1] == 0.0) and np.isfinite(g).all()


def test_sdpa_gqa(device):
    q, k, v = randn(2, 4, 3, 4), randn(2, 2, 5, 4), randn(2, 1, 5, 3)
    out = F.scaled_dot_product_attention(t(q, device), t(k, device), t(v, device), enable_gqa=True)
    close(out, np_sdpa(q, k, v, gqa=True), "float32")


def test_sdpa_dropout(device):
    ctorch.manual_seed(0)
    S = 8
    q, k = t(np.zeros((64, 1, 4)), device), t(np.zeros((64, S, 4)), device)
    v = t(np.eye(S)[None].repeat(64, 0), device)
    got = to_numpy(F.scaled_dot_product_attention(q, k, v, dropout_p=0.5))
    # uniform weights 1/S, each kept and doubled or dropped
    assert set(np.unique(np.round(got * S, 5))) == {0.0, 2.0}
    assert 0.35 < (got > 0).mean() < 0.65
    assert np.all(to_numpy(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)) == 0.0)


def test_sdpa_gradcheck_and_grad_fn(device):
    def inputs(*shape_sets):
        return [t(randn(*s), device, "float64", requires_grad=True) for s in shape_sets]

    q, k, v = inputs((1, 2, 3), (1, 4, 3), (1, 4, 2))
    fmask = t(randn(2, 4), device, "float64")
    bmask = t(RNG.random((2, 4)) > 0.3, device, "bool")
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=fmask), (q, k, v))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=bmask, scale=0.3), (q, k, v))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), (q, k, v))
    assert F.scaled_dot_product_attention(q, k, v).grad_fn.name() == "SqueezeBackward1"
    q4, k4, v4 = inputs((1, 2, 2, 3), (1, 1, 4, 3), (1, 1, 4, 2))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), (q4, k4, v4))
    assert F.scaled_dot_product_attention(q4, k4, v4).grad_fn.name() == "UnsafeViewBackward0"


def test_sdpa_errors():
    q, k, v = ctorch.randn(2, 3, 4), ctorch.randn(2, 5, 4), ctorch.randn(2, 5, 6)
    sdpa = F.scaled_dot_product_attention
    cases = [
        (lambda: sdpa(q, k.double(), v), RuntimeError,
         "Expected query, key, and value to have the same dtype, but got query.dtype: float key.dtype: double and "
         "value.dtype: float instead."),
        (lambda: sdpa(q[0, 0], k[0, 0], v[0, 0]), RuntimeError,
         "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: 1 key.dim: 1 and "
         "value.dim: 1 instead."),
        (lambda: sdpa(q, k, v, attn_mask=ctorch.ones(3, 5, dtype=ctorch.long), is_causal=True), RuntimeError,
         "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"),
        (lambda: sdpa(q, k, v, attn_mask=ctorch.ones(3, 5, dtype=ctorch.double)), RuntimeError,
         "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: double and "
         " query.dtype: float instead."),
        (lambda: sdpa(q.long(), k.long(), v.long()), RuntimeError, "expected scalar type Float but found Long"),
        (lambda: sdpa(q, k, v, dropout_p=1.5), RuntimeError,
         "dropout probability has to be between 0 and 1, but got 1.5"),
        (lambda: sdpa(q, k[:, :4], v), RuntimeError,
         "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5]."),
        (lambda: sdpa(q, k, v, attn_mask=ctorch.ones(1, 1, 1, 3, 5, dtype=ctorch.bool)), RuntimeError,
         "output with shape [1, 2, 3, 5] doesn't match the broadcast shape [1, 1, 2, 3, 5]"),
        (lambda: sdpa(ctorch.randn(2, 4, 3, 4), ctorch.randn(2, 3, 5, 4), ctorch.randn(2, 3, 5, 4), enable_gqa=True),
         RuntimeError, "Number of heads in key and value must divide the number of heads in query"),
        (lambda: sdpa(q[0], k[0], v[0], enable_gqa=True), IndexError,
         "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
        (lambda: sdpa(1, k, v), TypeError,
         "scaled_dot_product_attention(): argument 'query' (position 1) must be Tensor, not int"),
        (lambda: sdpa(q, k, v, attn_mask=3), TypeError,
         "scaled_dot_product_attention(): argument 'attn_mask' must be Tensor, not int"),
        (lambda: sdpa(q, k, v, dropout_p="a"), TypeError,
         "scaled_dot_product_attention(): argument 'dropout_p' must be float, not str"),
        (lambda: sdpa(q, k, v, is_causal=1), TypeError,
         "scaled_dot_product_attention(): argument 'is_causal' must be bool, not int"),
        (lambda: sdpa(q, k, v, None, 0.0, False, 0.5), TypeError,
         "scaled_dot_product_attention() takes from 3 to 6 positional arguments but 7 were given"),
        (lambda: sdpa(q, k, v, ctorch.ones(3, 5), 0.0, 1), TypeError,
         "scaled_dot_product_attention(): argument 'is_causal' (position 6) must be bool, not int"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc) as info:
            fn()
        assert str(info.value) == msg


def test_sdpa_cuda_device_mismatch_error():
    if not ctorch.cuda.is_available():
        pytest.skip("CUDA not available")
    q = ctorch.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same device type, but got "
                                           "query.device: cpu key.device: cuda:0 and value.device: cpu instead."):
        F.scaled_dot_product_attention(q, q.cuda(), q)


# --- multi_head_attention_forward / nn.MultiheadAttention ---------------------------------------------------
MHA_CASES = {
    # name: (constructor kwargs, kinds of key/value, masks, forward kwargs)
    "self": ({}, "self", {}, {}),
    "shared_kv_heads": ({}, "shared", {}, {"average_attn_weights": False}),
    "distinct_kv": ({"num_heads": 1}, "distinct", {}, {}),
    "kpm_bool": ({}, "shared", {"kpm": "bool"}, {}),
    "kpm_float_am2_bool": ({}, "shared", {"kpm": "float", "attn_mask": "bool2"}, {}),
    "am3_float": ({}, "distinct", {"attn_mask": "float3"}, {}),
    "separate_bias_kv": ({"kdim": 3, "vdim": 5, "add_bias_kv": True, "bias": False}, "distinct",
                         {"kpm": "bool", "attn_mask": "float2"}, {}),
    "causal": ({}, "self", {"attn_mask": "causal"}, {"is_causal": True}),
}


def make_mask(kind, sizes):
    """A mask of that kind for sizes (L, S, N * heads, N): bool ones keep key 0 for every query."""
    L, S, NH, N = sizes
    if kind == "causal":
        return np.triu(np.full((L, S), -np.inf), 1)
    shape = {"bool": (N, S), "float": (N, S), "bool2": (L, S), "float2": (L, S), "float3": (NH, L, S)}[kind]
    if kind.startswith("float"):
        return randn(*shape)
    m = RNG.random(shape) > 0.7
    m[..., 0] = False
    return m


@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")
@pytest.mark.parametrize("need_weights", [True, False], ids=["weights", "sdpa"])
@pytest.mark.parametrize("case", list(MHA_CASES))
def test_mha_matches_numpy(device, case, need_weights):
    ctor, kinds, masks, fwd = MHA_CASES[case]
    ctor = {"embed_dim": 4, "num_heads": 2, **ctor}
    ctorch.manual_seed(1)
    m = nn.MultiheadAttention(**ctor, device=device)
    p = params_of(m)
    if "bias_k" not in p and "in_proj_bias" in p:  # non-zero biases, so that they count
        with ctorch.no_grad():
            m.in_proj_bias.copy_(t(randn(12), device))
            m.out_proj.bias.copy_(t(randn(4), device))
        p = params_of(m)
    L, S, N, H = 3, 3 if kinds == "self" else 5, 2, ctor["num_heads"]
    query = randn(L, N, 4)
    key = query if kinds == "self" else randn(S, N, ctor.get("kdim", 4))
    value = key if kinds != "distinct" else randn(S, N, ctor.get("vdim", 4))
    tq = t(query, device)
    tk = tq if kinds == "self" else t(key, device)
    tv = tk if kinds != "distinct" else t(value, device)
    np_masks = {k: make_mask(v, (L, S, N * H, N)) for k, v in masks.items()}
    kw = {("key_padding_mask" if k == "kpm" else k): t(v, device, "bool" if v.dtype == bool else "float32")
          for k, v in np_masks.items()}
    out, w = m(tq, tk, tv, need_weights=need_weights, **kw, **fwd)
    ref_out, ref_w = np_mha(query, key, value, p, H, average=fwd.get("average_attn_weights", True), **np_masks)
    close(out, ref_out, "float32", scale=4.0)
    if need_weights:
        close(w, ref_w, "float32", scale=4.0)
    else:
        assert w is None


def test_mha_batch_first_unbatched_float64(device):
    ctorch.manual_seed(2)
    m = nn.MultiheadAttention(4, 2, batch_first=True, dtype=ctorch.float64, device=device)
    p = params_of(m)
    x = randn(2, 3, 4)
    out, w = m(t(x, device, "float64"), t(x, device, "float64"), t(x, device, "float64"))
    ref_out, ref_w = np_mha(x.transpose(1, 0, 2), x.transpose(1, 0, 2), x.transpose(1, 0, 2), p, 2)
    assert out.shape == (2, 3, 4)
    close(out, ref_out.transpose(1, 0, 2), "float64", scale=100)
    close(w, ref_w, "float64", scale=100)
    # unbatched input (batch_first ignored), with a 1-d key padding mask
    kpm = np.array([False, True, False])
    out, w = m(t(x[0], device, "float64"), t(x[0], device, "float64"), t(x[0], device, "float64"),
               key_padding_mask=t(kpm, device, "bool"))
    ref_out, ref_w = np_mha(x[0][:, None], x[0][:, None], x[0][:, None], p, 2, kpm=kpm[None])
    assert out.shape == (3, 4) and w.shape == (3, 3)
    close(out, ref_out[:, 0], "float64", scale=100)
    close(w, ref_w[0], "float64", scale=100)


def test_mha_zero_attn_and_dropout(device):
    ctorch.manual_seed(3)
    m = nn.MultiheadAttention(4, 2, add_zero_attn=True, device=device)
    x = t(randn(3, 2, 4), device)
    out, w = m(x, x, x)
    assert out.shape == (3, 2, 4) and w.shape == (2, 3, 4)  # one zero key more
    m2 = nn.MultiheadAttention(4, 2, dropout=1.0, device=device)
    o_train, w_train = m2(x, x, x)
    assert np.all(to_numpy(w_train) == 0.0)
    m2.eval()
    o_eval, w_eval = m2(x, x, x)
    np.testing.assert_allclose(to_numpy(w_eval).sum(-1), 1.0, rtol=1e-5)


def test_mha_gradcheck():
    ctorch.manual_seed(4)
    E, H = 4, 2
    x = t(randn(2, 1, E), "cpu", "float64", requires_grad=True)
    w_in = t(randn(3 * E, E) * 0.5, "cpu", "float64", requires_grad=True)
    b_in = t(randn(3 * E), "cpu", "float64", requires_grad=True)
    w_out = t(randn(E, E) * 0.5, "cpu", "float64", requires_grad=True)
    kpm = t(np.array([[False, True]]), "cpu", "bool")

    def f(x, w_in, b_in, w_out, need_weights):
        out, w = F.multi_head_attention_forward(x, x, x, E, H, w_in, b_in, None, None, False, 0.0, w_out, None,
                                                key_padding_mask=kpm, need_weights=need_weights)
        return (out, w) if need_weights else out

    assert gradcheck(lambda *a: f(*a, True), (x, w_in, b_in, w_out))
    assert gradcheck(lambda *a: f(*a, False), (x, w_in, b_in, w_out))


MHA_STATE = {
    (): [("in_proj_weight", (12, 4)), ("in_proj_bias", (12,)), ("out_proj.weight", (4, 4)), ("out_proj.bias", (4,))],
    (("add_bias_kv", True), ("kdim", 3), ("vdim", 5), ("bias", False)):
        [("q_proj_weight", (4, 4)), ("k_proj_weight", (4, 3)), ("v_proj_weight", (4, 5)), ("bias_k", (1, 1, 4)),
         ("bias_v", (1, 1, 4)), ("out_proj.weight", (4, 4))],
}


def test_mha_module_parameters_init_repr():
    for ctor, expected in MHA_STATE.items():
        m = nn.MultiheadAttention(4, 2, **dict(ctor))
        assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == expected
    m = nn.MultiheadAttention(4, 2)
    assert repr(m) == ("MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=4, "
                       "out_features=4, bias=True)\n)")
    assert np.all(to_numpy(m.in_proj_bias) == 0) and np.all(to_numpy(m.out_proj.bias) == 0)
    bound = math.sqrt(6.0 / (4 + 12))  # xavier_uniform_ on (12, 4)
    w = to_numpy(m.in_proj_weight)
    assert np.abs(w).max() <= bound and np.abs(w).max() > bound / 2
    assert m.head_dim == 2 and m._qkv_same_embed_dim and m.in_proj_weight.requires_grad
    assert isinstance(m.out_proj, nn.Linear) and type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"


def test_mha_errors():
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0, got embed_dim=4 and "
                                         "num_heads=0 instead"):
        nn.MultiheadAttention(4, 0)
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(5, 2)
    m = nn.MultiheadAttention(4, 2)
    x, k5 = ctorch.randn(3, 2, 4), ctorch.randn(5, 2, 4)
    cases = [
        (lambda: m(x, x[0], x), AssertionError,
         "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found 2-D and 3-D tensors respectively"),
        (lambda: m(x[0, 0], x[0, 0], x[0, 0]), AssertionError,
         "query should be unbatched 2D or batched 3D tensor but received 1-D query tensor"),
        (lambda: m(x, x, x, key_padding_mask=ctorch.zeros(2, 3, 1, dtype=ctorch.bool)), AssertionError,
         "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but found 3-D tensor instead"),
        (lambda: m(x, x, x, attn_mask=ctorch.zeros(3, 4)), RuntimeError,
         "The shape of the 2D attn_mask is torch.Size([3, 4]), but should be (3, 3)."),
        (lambda: m(x, x, x, attn_mask=ctorch.zeros(2, 3, 3)), RuntimeError,
         "The shape of the 3D attn_mask is torch.Size([2, 3, 3]), but should be (4, 3, 3)."),
        (lambda: m(x[:, 0], x[:, 0], x[:, 0], attn_mask=ctorch.zeros(1, 3, 3)), AssertionError,
         "Expected `attn_mask` shape to be (2, 3, 3) but got torch.Size([1, 3, 3])"),
        (lambda: m(x, x, x, key_padding_mask=ctorch.zeros(2, 4, dtype=ctorch.bool)), AssertionError,
         "Expected key_padded_mask.shape[1] to be 3, but got 4"),
        (lambda: m(x, x, x, attn_mask=ctorch.zeros(3, 3, dtype=ctorch.long)), AssertionError,
         "only bool and floating types of attn_mask are supported"),
        (lambda: m(x, x, x, is_causal=True), RuntimeError,
         "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
         "`generate_square_subsequent_mask` to create this mask."),
        (lambda: m(x, k5, x), AssertionError,
         "key shape torch.Size([5, 2, 4]) does not match value shape torch.Size([3, 2, 4])"),
        (lambda: m(ctorch.randn(3, 2, 6), ctorch.randn(3, 2, 6), ctorch.randn(3, 2, 6)), AssertionError,
         "was expecting embedding dimension of 4, but got 6"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc) as info:
            fn()
        assert str(info.value) == msg
    sep = nn.MultiheadAttention(4, 2, kdim=3, vdim=3)
    msg = r"expecting key weights shape of \(4, 5\), but got torch.Size\(\[4, 3\]\)"
    with pytest.raises(AssertionError, match=msg):
        F.multi_head_attention_forward(x, ctorch.randn(3, 2, 5), ctorch.randn(3, 2, 5), 4, 2, None, None, None, None,
                                       False, 0.0, sep.out_proj.weight, None, use_separate_proj_weight=True,
                                       q_proj_weight=sep.q_proj_weight, k_proj_weight=sep.k_proj_weight,
                                       v_proj_weight=sep.v_proj_weight)
    with pytest.raises(AssertionError, match="bias_k is set but bias_v is None"):
        F.multi_head_attention_forward(x, x, x, 4, 2, m.in_proj_weight, None, ctorch.zeros(1, 1, 4), None, False, 0.0,
                                       m.out_proj.weight, None)
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"):
        m(x, x, x, key_padding_mask=ctorch.zeros(2, 3, dtype=ctorch.bool), attn_mask=ctorch.zeros(3, 3))


def test_canonical_mask():
    m = F._canonical_mask(ctorch.tensor([True, False]), "m", None, "", ctorch.float64)
    assert m.dtype == ctorch.float64 and to_numpy(m).tolist() == [-math.inf, 0.0]
    f = ctorch.tensor([1.0, 2.0])
    assert F._canonical_mask(f, "m", None, "", ctorch.float64) is f
    assert F._canonical_mask(None, "m", None, "", ctorch.float32) is None
    assert F._none_or_dtype(f) == ctorch.float32 and F._none_or_dtype(None) is None


# --- Transformer modules ----------------------------------------------------------------------------------
ENCODER_LAYER_KEYS = ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                      "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
                      "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"]
DECODER_LAYER_KEYS = ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                      "self_attn.out_proj.bias", "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
                      "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias", "linear1.weight",
                      "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight",
                      "norm2.bias", "norm3.weight", "norm3.bias"]
ENCODER_LAYER_REPR = """TransformerEncoderLayer(
  (self_attn): MultiheadAttention(
    (out_proj): NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=False)
  )
  (linear1): Linear(in_features=4, out_features=8, bias=False)
  (dropout): Dropout(p=0.1, inplace=False)
  (linear2): Linear(in_features=8, out_features=4, bias=False)
  (norm1): LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=False)
  (norm2): LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=False)
  (dropout1): Dropout(p=0.1, inplace=False)
  (dropout2): Dropout(p=0.1, inplace=False)
  (activation): GELU(approximate='none')
)"""


def test_transformer_state_dict_keys_and_repr():
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but self.use_nested_tensor is False because "
                                         r"encoder_layer.self_attn.batch_first was not True\(use batch_first"):
        tr = nn.Transformer(4, 2, 1, 1, 8)
    keys = ["encoder.layers.0." + k for k in ENCODER_LAYER_KEYS] + ["encoder.norm.weight", "encoder.norm.bias"]
    keys += ["decoder.layers.0." + k for k in DECODER_LAYER_KEYS] + ["decoder.norm.weight", "decoder.norm.bias"]
    assert list(tr.state_dict().keys()) == keys
    assert list(nn.TransformerDecoderLayer(4, 2, 8).state_dict().keys()) == DECODER_LAYER_KEYS
    layer = nn.TransformerEncoderLayer(4, 2, 8, activation=nn.GELU(), bias=False)
    assert repr(layer) == ENCODER_LAYER_REPR
    assert layer.activation_relu_or_gelu == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, batch_first=True), 3,
                                    norm=nn.LayerNorm(4), enable_nested_tensor=True)
    assert len(enc.layers) == 3 and enc.use_nested_tensor
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight  # deep copies
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(4, 2, activation="tanh")
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=ctorch.float64)
    assert mask.dtype == ctorch.float64
    assert to_numpy(mask).tolist() == [[0, -math.inf, -math.inf], [0, 0, -math.inf], [0, 0, 0]]


def np_encoder_layer(x, p, heads, norm_first, kpm=None):
    """TransformerEncoderLayer (relu, eval) on (S, N, E)."""
    def sa(h):
        return np_mha(h, h, h, {k[len("self_attn."):]: v for k, v in p.items() if k.startswith("self_attn.")},
                      heads, kpm=kpm)[0]

    def ff(h):
        return np.maximum(h @ p["linear1.weight"].T + p["linear1.bias"], 0) @ p["linear2.weight"].T + p["linear2.bias"]

    def norm(i, h):
        return np_layer_norm(h, p[f"norm{i}.weight"], p[f"norm{i}.bias"])

    if norm_first:
        x = x + sa(norm(1, x))
        return x + ff(norm(2, x))
    x = norm(1, x + sa(x))
    return norm(2, x + ff(x))


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
def test_encoder_layer_matches_numpy(device, norm_first):
    ctorch.manual_seed(5)
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, norm_first=norm_first, device=device).eval()
    p = params_of(layer)
    x = randn(5, 2, 4)
    kpm = np.array([[False, False, True, False, True], [False] * 5])
    out = layer(t(x, device), src_key_padding_mask=t(kpm, device, "bool"))
    close(out, np_encoder_layer(x, p, 2, norm_first, kpm=kpm), "float32", scale=10)


def test_transformer_forward_and_errors(device):
    ctorch.manual_seed(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = nn.Transformer(4, 2, 1, 1, 8, dropout=0.0, batch_first=True, device=device).eval()
    src, tgt = t(randn(2, 5, 4), device), t(randn(2, 3, 4), device)
    causal = nn.Transformer.generate_square_subsequent_mask(3, device=device)
    out = tr(src, tgt, tgt_mask=causal)
    assert out.shape == (2, 3, 4) and out.device.type == device
    # the hint given or detected from the mask gives the same values
    close(tr(src, tgt, tgt_mask=causal, tgt_is_causal=True), to_numpy(out).astype(np.float64), "float32")
    # causal: the first target position does not see the later ones
    tgt2 = to_numpy(tgt).copy()
    tgt2[:, 1:] += 1.0
    out2 = tr(src, t(tgt2, device), tgt_mask=causal)
    close(out2[:, 0], to_numpy(out[:, 0]).astype(np.float64), "float32")
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        tr(src, tgt[:1])
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        tr(src[..., :3], tgt[..., :3])


def test_transformer_encoder_nested_padding_zeros():
    """Eval, no grad and a left-aligned src_key_padding_mask: PyTorch's encoder runs on nested tensors
    and gives zeros at the padded positions; the kept ones equal the ordinary path's."""
    ctorch.manual_seed(3)
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True, dtype=ctorch.float64)
    enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(4, dtype=ctorch.float64)).eval()
    x = ctorch.tensor(randn(3, 5, 4))
    pad = np.array([[False] * 3 + [True] * 2, [False] * 5, [True] * 5])
    kpm = ctorch.tensor(pad)
    gap = ctorch.tensor(np.array([[False, True, False, False, False]] * 3))
    ordinary = enc(x, src_key_padding_mask=kpm).detach().numpy()   # grad enabled: no nested tensors
    gap_ordinary = enc(x, src_key_padding_mask=gap).detach().numpy()
    with ctorch.no_grad():
        nested = enc(x, src_key_padding_mask=kpm).numpy()
        np.testing.assert_array_equal(nested[pad], 0.0)
        np.testing.assert_allclose(nested[~pad], ordinary[~pad], rtol=1e-12, atol=1e-12)
        assert np.isfinite(ordinary[0, 3:]).all() and np.abs(ordinary[0, 3:]).max() > 0.1
        # a float mask counts its nonzero entries as padding, the kept keys then see no -1 bias
        fmask = ctorch.tensor(np.where(pad[:2], -1.0, 0.0))
        np.testing.assert_allclose(enc(x[:2], src_key_padding_mask=fmask).numpy(), nested[:2], rtol=1e-12,
                                   atol=1e-12)
        # padding not left-aligned, an attention mask, or the fast path switched off: the ordinary path
        np.testing.assert_allclose(enc(x, src_key_padding_mask=gap).numpy(), gap_ordinary, rtol=1e-12, atol=1e-12)
        causal = nn.Transformer.generate_square_subsequent_mask(5, dtype=ctorch.float64)
        assert np.abs(enc(x[:1], mask=causal, src_key_padding_mask=fmask[:1]).numpy()[0, 3:]).min() > 0
        ctorch.backends.mha.set_fastpath_enabled(False)
        try:
            np.testing.assert_allclose(enc(x[:2], src_key_padding_mask=kpm[:2]).numpy(), ordinary[:2], rtol=1e-12,
                                       atol=1e-12)
        finally:
            ctorch.backends.mha.set_fastpath_enabled(True)
        assert ctorch.backends.mha.get_fastpath_enabled()
    enc.train()
    with ctorch.no_grad():
        assert np.abs(enc(x[:1], src_key_padding_mask=kpm[:1]).numpy()[0, 3:]).min() > 0


def test_transformer_encoder_trains():
    """A tiny encoder learns to tag each position with whether its token was seen before."""
    ctorch.manual_seed(0)
    rng = np.random.default_rng(0)
    vocab, seq, batch, d = 6, 6, 32, 16
    emb = nn.Embedding(vocab, d)
    pos = nn.Parameter(ctorch.randn(seq, d) * 0.1)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True), 1,
                                enable_nested_tensor=False)
    head = nn.Linear(d, 2)
    params = list(emb.parameters()) + [pos] + list(enc.parameters()) + list(head.parameters())
    opt = ctorch.optim.Adam(params, lr=1e-2)
    mask = nn.Transformer.generate_square_subsequent_mask(seq)
    losses = []
    for _ in range(40):
        tokens = rng.integers(0, vocab, (batch, seq))
        seen = np.array([[tok in row[:i] for i, tok in enumerate(row)] for row in tokens]).astype(np.int64)
        logits = head(enc(emb(ctorch.tensor(tokens)) + pos, mask=mask))
        loss = F.cross_entropy(logits.reshape(-1, 2), ctorch.tensor(seen.reshape(-1)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert np.mean(losses[-5:]) < 0.75 * np.mean(losses[:5])


# --- leaks ----------------------------------------------------------------------------------------------------
def _leak_cases(device):
    ctorch.manual_seed(7)
    m = nn.MultiheadAttention(4, 2, kdim=3, vdim=3, add_bias_kv=True, add_zero_attn=True, dropout=0.5,
                              device=device, dtype=ctorch.float64)
    x = t(randn(3, 2, 4), device, "float64")
    kv = t(randn(5, 2, 3), device, "float64")
    kpm = t(np.array([[False, True, False, False, True], [False] * 5]), device, "bool")
    keep = t(RNG.random((3, 5)) > 0.3, device, "bool")

    def sdpa_backward():
        q = x.detach().requires_grad_(True)
        F.scaled_dot_product_attention(q, q, q, is_causal=True, dropout_p=0.3).sum().backward()
        F.scaled_dot_product_attention(q.half(), q.half(), q.half(), attn_mask=keep[:2, :2]).float().sum()
        F.scaled_dot_product_attention(q[None], q[None], q[None], enable_gqa=True)

    def mha_backward():
        for need_weights in (True, False):
            out, _ = m(x, kv, kv, key_padding_mask=kpm, need_weights=need_weights)
            out.sum().backward()

    def errors():
        for fn, exc in ((lambda: F.scaled_dot_product_attention(x, x.float(), x), RuntimeError),
                        (lambda: F.scaled_dot_product_attention(x, x, x, dropout_p=2.0), RuntimeError),
                        (lambda: m(x, kv, kv, attn_mask=keep[:, :4]), RuntimeError),
                        (lambda: m(x, kv, kv, key_padding_mask=kpm[:, :4]), AssertionError),
                        (lambda: m(x, kv[:, :1], kv), AssertionError)):
            with pytest.raises(exc):
                fn()

    return {"sdpa_backward": sdpa_backward, "mha_backward": mha_backward, "errors": errors}


@pytest.mark.parametrize("case", ["sdpa_backward", "mha_backward", "errors"])
def test_attention_does_not_leak(device, case):
    """No storage and no Python block outlives a call (see test_leaks_ops.py; fewer, bigger calls here)."""
    fn = _leak_cases(device)[case]
    assert_no_leak(fn, 40, windows=8)
