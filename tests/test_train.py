"""End to end: a small MLP trains on a synthetic classification problem (the loss falls below a
threshold), and the seed workflow of issue 4 - model.to(device), loss.backward(), optimizer.step(),
save the state_dict, load it into a fresh model, same outputs."""
import io

import numpy as np
import pytest

import ctorch
import ctorch.nn as nn
import ctorch.nn.functional as F
from conftest import to_numpy


def make_blobs(n=512, classes=4, dim=8, seed=0):
    """Gaussian blobs around random centres: linearly separable enough for an MLP to fit quickly."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((classes, dim)) * 3
    y = rng.integers(0, classes, n)
    x = centres[y] + rng.standard_normal((n, dim))
    return x.astype(np.float32), y


class MLP(nn.Module):
    def __init__(self, dim=8, hidden=32, classes=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.GELU(),
                                 nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)


@pytest.mark.parametrize("opt_name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_mlp_trains(device, opt_name):
    ctorch.manual_seed(0)
    x, y = make_blobs()
    X = ctorch.tensor(x, device=device)
    Y = ctorch.tensor(y, device=device)
    model = MLP().to(device)
    kw = {"SGD": dict(lr=0.1, momentum=0.9), "Adam": dict(lr=0.01), "AdamW": dict(lr=0.01),
          "RMSprop": dict(lr=0.003)}[opt_name]
    opt = getattr(ctorch.optim, opt_name)(model.parameters(), **kw)
    loss_fn = nn.CrossEntropyLoss()
    first = None
    for epoch in range(60):
        for i in range(0, 512, 64):
            opt.zero_grad()
            loss = loss_fn(model(X[i:i + 64]), Y[i:i + 64])
            loss.backward()
            opt.step()
            if first is None:
                first = loss.item()
    with ctorch.no_grad():
        logits = model(X)
        final = loss_fn(logits, Y).item()
    acc = (to_numpy(logits).argmax(1) == y).mean()
    assert final < 0.05 < first
    assert acc > 0.98


def test_seed_workflow(device, tmp_path):
    """Build, move, train a few steps, save the state_dict, load into a fresh model: same outputs."""
    ctorch.manual_seed(1)
    x, y = make_blobs(n=128, seed=1)
    model = MLP()
    assert model.to(device) is model
    if device == "cuda":
        assert model.cuda() is model
    X, Y = ctorch.tensor(x, device=device), ctorch.tensor(y, device=device)
    opt = ctorch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = F.cross_entropy(model(X), Y)
        assert type(loss.grad_fn).__name__ == "NllLossBackward0"
        loss.backward()
        assert all(p.grad is not None and p.grad.device == p.device for p in model.parameters())
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    path = tmp_path / "model.ct"
    ctorch.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 20}, path)
    ckpt = ctorch.load(path, map_location="cpu")
    fresh = MLP()
    res = fresh.load_state_dict(ckpt["model"])
    assert not res.missing_keys and not res.unexpected_keys
    fresh.to(device)
    model.eval()
    fresh.eval()
    with ctorch.no_grad():
        np.testing.assert_array_equal(to_numpy(fresh(X)), to_numpy(model(X)))
    # the optimizer resumes where it stopped
    opt2 = ctorch.optim.SGD(fresh.parameters(), lr=0.05, momentum=0.9)
    opt2.load_state_dict(ckpt["optim"])
    assert ckpt["epoch"] == 20
    for m, o in ((model, opt), (fresh, opt2)):
        m.train()
        o.zero_grad()
        F.cross_entropy(m(X), Y).backward()
        o.step()
    with ctorch.no_grad():
        np.testing.assert_allclose(to_numpy(fresh(X)), to_numpy(model(X)), rtol=1e-6, atol=1e-6)


def test_safetensors_checkpoint(device, tmp_path):
    model = MLP().to(device)
    path = tmp_path / "model.safetensors"
    ctorch.save_safetensors(model.state_dict(), path, metadata={"arch": "MLP"})
    fresh = MLP().to(device)
    fresh.load_state_dict(ctorch.load_safetensors(path, device=device))
    x = ctorch.ones(3, 8, device=device)
    np.testing.assert_array_equal(to_numpy(fresh(x)), to_numpy(model(x)))


def test_regression_with_layernorm_and_embedding(device):
    """Embedding -> LayerNorm -> Linear learns a per-token target (exercises their backward kernels)."""
    ctorch.manual_seed(2)
    rng = np.random.default_rng(2)
    tokens = rng.integers(0, 20, (256, 5))
    target = np.sin(tokens).sum(1, keepdims=True).astype(np.float32)

    class TokenModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 16)
            self.norm = nn.LayerNorm(16)
            self.head = nn.Linear(16, 1)

        def forward(self, t):
            return self.head(self.norm(self.emb(t))).sum(1)

    model = TokenModel().to(device)
    T = ctorch.tensor(tokens, device=device)
    Yt = ctorch.tensor(target, device=device)
    opt = ctorch.optim.Adam(model.parameters(), lr=0.03)
    for _ in range(300):
        opt.zero_grad()
        loss = F.mse_loss(model(T), Yt)
        loss.backward()
        opt.step()
    assert loss.item() < 0.01
