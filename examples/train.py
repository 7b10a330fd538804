"""The main job: a small end-to-end ctorch run on the GPU when there is one, the CPU otherwise.

For now it exercises the tensor core (creation, device moves, elementwise ops, reductions,
matmul) on a least-squares fit solved by hand-written gradient descent; it becomes a real
nn/optim training run once autograd, nn and optim land.
"""
import time

import numpy as np

import ctorch as torch


def main():
    cuda = hasattr(torch, "cuda") and torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    print(f"ctorch {torch.__version__} on {device}")
    rng = np.random.default_rng(0)
    n, d = 4096, 32
    x = torch.tensor(rng.standard_normal((n, d)), dtype=torch.float32, device=device)
    w_true = torch.tensor(rng.standard_normal((d, 1)), dtype=torch.float32, device=device)
    y = x @ w_true
    w = torch.zeros(d, 1, device=device)
    lr = 0.1
    t0 = time.perf_counter()
    for step in range(201):
        err = x @ w - y
        loss = (err * err).mean()
        grad = x.T @ err * (2.0 / n)
        w -= lr * grad
        if step % 50 == 0:
            print(f"step {step:4d}  loss {loss.item():.6f}")
    print(f"final loss {loss.item():.2e} in {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
