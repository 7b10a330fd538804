"""The main job: train an MLP on synthetic handwritten-style digits with ctorch, on the GPU when there
is one, the CPU otherwise (under a minute on a laptop CPU).

The digits are generated here: ten 5x7 glyphs are scaled onto a 12x12 canvas with random
shifts, stroke thickness, scale and pixel noise, so the task needs a real classifier (a linear model
tops out well below the MLP). The run exercises the seed workflow end to end: model.to(device),
CrossEntropyLoss, loss.backward(), SGD with momentum and a cosine schedule, then saving the
state_dict, loading it into a fresh model and checking that it scores the same.
"""
import os
import tempfile
import time

import numpy as np

import ctorch as torch
import ctorch.nn as nn

GLYPHS = [  # 5 wide x 7 high
    ["01110", "10001", "10011", "10101", "11001", "10001", "01110"],  # 0
    ["00100", "01100", "00100", "00100", "00100", "00100", "01110"],  # 1
    ["01110", "10001", "00001", "00010", "00100", "01000", "11111"],  # 2
    ["11111", "00010", "00100", "00010", "00001", "10001", "01110"],  # 3
    ["00010", "00110", "01010", "10010", "11111", "00010", "00010"],  # 4
    ["11111", "10000", "11110", "00001", "00001", "10001", "01110"],  # 5
    ["00110", "01000", "10000", "11110", "10001", "10001", "01110"],  # 6
    ["11111", "00001", "00010", "00100", "01000", "01000", "01000"],  # 7
    ["01110", "10001", "10001", "01110", "10001", "10001", "01110"],  # 8
    ["01110", "10001", "10001", "01111", "00001", "00010", "01100"],  # 9
]
SIDE = 12


def make_digits(n, rng):
    """n noisy 12x12 digit images (float32, flattened) and their labels."""
    glyphs = np.array([[[c == "1" for c in row] for row in g] for g in GLYPHS], dtype=np.float32)
    labels = rng.integers(0, 10, n)
    images = np.zeros((n, SIDE, SIDE), dtype=np.float32)
    for i, y in enumerate(labels):
        sy, sx = rng.uniform(1.0, 1.5), rng.uniform(1.0, 1.6)  # per-axis scale
        h, w = int(round(7 * sy)), int(round(5 * sx))
        rows = np.minimum((np.arange(h) / sy).astype(int), 6)
        cols = np.minimum((np.arange(w) / sx).astype(int), 4)
        glyph = glyphs[y][rows][:, cols]
        if rng.random() < 0.5:  # thicker strokes
            glyph = np.maximum(glyph, np.roll(glyph, 1, axis=1))
        top, left = rng.integers(0, SIDE - h + 1), rng.integers(0, SIDE - w + 1)
        images[i, top:top + h, left:left + w] = glyph * rng.uniform(0.6, 1.0)
    images += rng.normal(0.0, 0.3, images.shape).astype(np.float32)
    return images.reshape(n, -1), labels


class MLP(nn.Module):
    def __init__(self, inputs=SIDE * SIDE, hidden=256, classes=10):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(inputs, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(0.1),
            nn.Linear(hidden, classes),
        )

    def forward(self, x):
        return self.net(x)


def evaluate(model, x, y, loss_fn, batch=2048):
    model.eval()
    total, correct = 0.0, 0
    with torch.no_grad():
        for i in range(0, x.shape[0], batch):
            logits = model(x[i:i + batch])
            total += loss_fn(logits, y[i:i + batch]).item() * logits.shape[0]
            correct += int((logits.argmax(1) == y[i:i + batch]).sum().item())
    model.train()
    return total / x.shape[0], correct / x.shape[0]


def main(epochs=12, batch=128):
    cuda = hasattr(torch, "cuda") and torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    print(f"ctorch {torch.__version__} on {device}")
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    xtr, ytr = make_digits(20000, rng)
    xte, yte = make_digits(4000, rng)
    x_train, y_train = torch.tensor(xtr, device=device), torch.tensor(ytr, device=device)
    x_test, y_test = torch.tensor(xte, device=device), torch.tensor(yte, device=device)

    model = MLP().to(device)
    print(model)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    steps_per_epoch = (x_train.shape[0] + batch - 1) // batch
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.2, epochs=epochs, steps_per_epoch=steps_per_epoch)
    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        perm = torch.randperm(x_train.shape[0], device=device)
        running, seen = 0.0, 0
        for i in range(0, x_train.shape[0], batch):
            idx = perm[i:i + batch]
            xb, yb = x_train[idx], y_train[idx]
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            sched.step()
            running += loss.item() * xb.shape[0]
            seen += xb.shape[0]
        test_loss, test_acc = evaluate(model, x_test, y_test, loss_fn)
        print(f"epoch {epoch:2d}  train loss {running / seen:.4f}  test loss {test_loss:.4f}  "
              f"test acc {100 * test_acc:5.2f}%  lr {sched.get_last_lr()[0]:.4f}  "
              f"({time.perf_counter() - t0:.1f} s)")

    # save the state_dict, load it into a fresh model: the same predictions
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mlp.ct")
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": epochs}, path)
        ckpt = torch.load(path, map_location=device)
    fresh = MLP().to(device)
    fresh.load_state_dict(ckpt["model"])
    _, acc_fresh = evaluate(fresh, x_test, y_test, loss_fn)
    print(f"reloaded checkpoint (epoch {ckpt['epoch']}): test acc {100 * acc_fresh:.2f}% "
          f"({'same' if acc_fresh == test_acc else 'DIFFERENT'})")
    assert acc_fresh == test_acc


if __name__ == "__main__":
    main()
