"""CPU vs CUDA for the nn family, the optimizer steps and the cuBLAS-backed linalg ops: each op
runs on both devices from the same inputs and the results are compared (skipped without a GPU)."""
import numpy as np
import pytest

import ctorch
from ctorch import nn, optim
from conftest import to_numpy

pytestmark = pytest.mark.skipif(not ctorch.cuda.is_available() if hasattr(ctorch, "cuda") else True,
                                reason="CUDA not available")

DTYPES = ["float32", "float64", "float16", "bfloat16"]
TOL = {"float64": (1e-10, 1e-10), "float32": (1e-4, 1e-5), "float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2)}


def both(arr, dtype):
    cpu = ctorch.tensor(arr, dtype=getattr(ctorch, dtype))
    return cpu, cpu.to("cuda")


def check(cpu, gpu, dtype, exact=False):
    assert gpu.device.type == "cuda"
    a, b = to_numpy(cpu).astype(np.float64), to_numpy(gpu).astype(np.float64)
    assert a.shape == b.shape
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        rtol, atol = TOL[dtype]
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 7), (2, 3, 7), (0, 7), (4, 0)])
def test_linear(dtype, bias, shape):
    rng = np.random.default_rng(0)
    x_c, x_g = both(rng.standard_normal(shape), dtype)
    w_c, w_g = both(rng.standard_normal((6, shape[-1])), dtype)
    b_c, b_g = both(rng.standard_normal(6), dtype) if bias else (None, None)
    check(nn.functional.linear(x_c, w_c, b_c), nn.functional.linear(x_g, w_g, b_g), dtype)


def test_linear_transposed_operands():
    rng = np.random.default_rng(1)
    x_c, x_g = both(rng.standard_normal((7, 5)), "float32")
    w_c, w_g = both(rng.standard_normal((7, 6)), "float32")
    check(nn.functional.linear(x_c.t(), w_c.t()), nn.functional.linear(x_g.t(), w_g.t()), "float32")


@pytest.mark.parametrize("dtype", DTYPES)
def test_leaky_relu(dtype):
    rng = np.random.default_rng(2)
    x_c, x_g = both(rng.standard_normal((4, 9)), dtype)
    check(nn.functional.leaky_relu(x_c, 0.2), nn.functional.leaky_relu(x_g, 0.2), dtype, exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_embedding_forward_backward(dtype, index_dtype):
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 10, size=(3, 5))
    w_np = rng.standard_normal((10, 4))
    outs = []
    for dev in ("cpu", "cuda"):
        w = ctorch.tensor(w_np, dtype=getattr(ctorch, dtype), device=dev, requires_grad=True)
        i = ctorch.tensor(idx, dtype=getattr(ctorch, index_dtype), device=dev)
        out = nn.functional.embedding(i, w, padding_idx=2)
        (out * out).sum().backward()
        outs.append((out, w.grad))
    check(outs[0][0], outs[1][0], dtype, exact=True)
    check(outs[0][1], outs[1][1], dtype)


def test_embedding_out_of_range_raises_index_error():
    w = ctorch.ones((4, 2), device="cuda")
    with pytest.raises(IndexError):
        nn.functional.embedding(ctorch.tensor([1, 7], device="cuda"), w)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_entropy_and_nll(dtype):
    rng = np.random.default_rng(4)
    x_np = rng.standard_normal((6, 5))
    t_np = rng.integers(0, 5, size=6)
    res = []
    for dev in ("cpu", "cuda"):
        x = ctorch.tensor(x_np, dtype=getattr(ctorch, dtype), device=dev, requires_grad=True)
        t = ctorch.tensor(t_np, device=dev)
        loss = nn.functional.cross_entropy(x, t, label_smoothing=0.1) + nn.functional.nll_loss(x, t)
        loss.backward()
        res.append((loss, x.grad))
    check(res[0][0], res[1][0], dtype)
    check(res[0][1], res[1][1], dtype)


def test_nll_target_out_of_bounds():
    x = ctorch.zeros((2, 3), device="cuda")
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        nn.functional.nll_loss(x, ctorch.tensor([0, 5], device="cuda"))


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_nll_ordered_sums_same_bits(reduction):
    """1000 rows (several rounds of the CUDA ordered sums) with class weights and ignored rows: the
    loss and its gradient have the CPU's bits; the first bad row's target is the one reported."""
    rng = np.random.default_rng(6)
    x_np = rng.standard_normal((1000, 7))
    t_np = rng.integers(0, 7, size=1000)
    t_np[rng.random(1000) < 0.2] = -100
    w_np = rng.uniform(0.1, 2.0, size=7)
    res = []
    for dev in ("cpu", "cuda"):
        x = ctorch.tensor(x_np, device=dev, requires_grad=True)
        loss = nn.functional.nll_loss(x, ctorch.tensor(t_np, device=dev), weight=ctorch.tensor(w_np, device=dev),
                                      reduction=reduction)
        loss.backward()
        res.append((loss, x.grad))
        ce = nn.functional.cross_entropy(x, ctorch.tensor(t_np, device=dev), reduction=reduction,
                                         label_smoothing=0.05)
        res.append((ce, None))
    check(res[0][0], res[2][0], "float64", exact=True)
    check(res[0][1], res[2][1], "float64", exact=True)
    check(res[1][0], res[3][0], "float64")
    bad = t_np.copy()
    bad[[700, 300, 900]] = [9, 8, -3]
    with pytest.raises(IndexError, match="^Target 8 is out of bounds.$"):
        nn.functional.cross_entropy(ctorch.tensor(x_np, device="cuda"), ctorch.tensor(bad, device="cuda"))


def test_pointwise_loss_ordered_sums_same_bits():
    """10000 elements (three 4096-element blocks): mse's mean and sum have the CPU's bits."""
    rng = np.random.default_rng(7)
    x_np, y_np = rng.standard_normal(10000), rng.standard_normal(10000)
    for reduction in ("mean", "sum"):
        cpu, gpu = (nn.functional.mse_loss(ctorch.tensor(x_np, device=dev), ctorch.tensor(y_np, device=dev),
                                           reduction=reduction) for dev in ("cpu", "cuda"))
        check(cpu, gpu, "float64", exact=True)
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        x_np = np.full(10000, 0.5)
        x_np[5000] = 1.5
        nn.functional.binary_cross_entropy(ctorch.tensor(x_np, device="cuda"), ctorch.tensor(x_np * 0, device="cuda"))


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy",
                                  "binary_cross_entropy_with_logits"])
def test_pointwise_losses(name):
    rng = np.random.default_rng(5)
    x_np = rng.uniform(0.05, 0.95, size=(4, 3))
    y_np = rng.uniform(0, 1, size=(4, 3))
    res = []
    for dev in ("cpu", "cuda"):
        x = ctorch.tensor(x_np, device=dev, requires_grad=True)
        y = ctorch.tensor(y_np, device=dev)
        loss = getattr(nn.functional, name)(x, y)
        loss.backward()
        res.append((loss, x.grad))
    check(res[0][0], res[1][0], "float32")
    check(res[0][1], res[1][1], "float32")


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm(dtype):
    rng = np.random.default_rng(6)
    x_np, w_np, b_np = rng.standard_normal((5, 8)), rng.standard_normal(8), rng.standard_normal(8)
    res = []
    for dev in ("cpu", "cuda"):
        x = ctorch.tensor(x_np, dtype=getattr(ctorch, dtype), device=dev, requires_grad=True)
        w = ctorch.tensor(w_np, dtype=getattr(ctorch, dtype), device=dev, requires_grad=True)
        b = ctorch.tensor(b_np, dtype=getattr(ctorch, dtype), device=dev, requires_grad=True)
        out = nn.functional.layer_norm(x, (8,), w, b)
        (out * out).sum().backward()
        res.append((out, x.grad, w.grad, b.grad))
    for a, b in zip(res[0], res[1]):
        check(a, b, dtype)


OPTIMS = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9, weight_decay=0.01, nesterov=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.01)),
    # the kinds of _C._optim_step
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adadelta", dict(rho=0.6, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.9), weight_decay=0.1)),  # not rectified before step 6: see test_optim_more
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), maximize=True)),
    ("ASGD", dict(lr=0.05, lambd=0.01, t0=0, weight_decay=0.1)),  # averaging from step 3
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,kw", OPTIMS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_optimizer_steps(dtype, name, kw, layout):
    rng = np.random.default_rng(7)
    shapes = [(3, 4), (5,), (1,), (0, 2), (70, 80)]  # the last spans several 4096-element chunks
    p0 = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(3)]
    res = []
    for dev in ("cpu", "cuda"):
        params = []
        for p in p0:
            t = ctorch.tensor(p, dtype=getattr(ctorch, dtype), device=dev)
            if layout == "transposed" and p.ndim == 2:
                t = ctorch.tensor(np.ascontiguousarray(p.T), dtype=getattr(ctorch, dtype), device=dev).t()
            params.append(nn.Parameter(t))
        opt = getattr(optim, name)(params, **kw)
        for gs in grads:
            for p, g in zip(params, gs):
                p.grad = ctorch.tensor(g, dtype=getattr(ctorch, dtype), device=dev)
            opt.step()
        res.append(params)
    for a, b in zip(res[0], res[1]):
        # the same per-element code on both sides: equal up to FMA contraction and libm differences
        check(a, b, dtype)


@pytest.mark.parametrize("dtype", DTYPES + ["int64", "int32", "int16", "int8", "uint8"])
def test_matmul_bmm_addmm(dtype):
    rng = np.random.default_rng(8)
    integer = dtype.startswith("int") or dtype == "uint8"

    def make(shape):
        return rng.integers(-5, 6, size=shape) if integer else rng.standard_normal(shape)

    a_c, a_g = both(make((4, 6)), dtype if not dtype == "uint8" else dtype)
    b_c, b_g = both(make((6, 3)), dtype)
    check(ctorch.matmul(a_c, b_c), ctorch.matmul(a_g, b_g), "float64" if integer else dtype, exact=integer)
    check(ctorch.matmul(b_c.t(), a_c.t()), ctorch.matmul(b_g.t(), a_g.t()), "float64" if integer else dtype,
          exact=integer)
    x_c, x_g = both(make((5, 4, 6)), dtype)
    y_c, y_g = both(make((5, 6, 2)), dtype)
    check(ctorch.bmm(x_c, y_c), ctorch.bmm(x_g, y_g), "float64" if integer else dtype, exact=integer)
    i_c, i_g = both(make((4, 3)), dtype)
    check(ctorch.addmm(i_c, a_c, b_c, beta=2, alpha=3), ctorch.addmm(i_g, a_g, b_g, beta=2, alpha=3),
          "float64" if integer else dtype, exact=integer)
    # broadcast batch (stride 0 operand) and K == 0
    check(ctorch.matmul(x_c, b_c[:, :2].contiguous()[:6]), ctorch.matmul(x_g, b_g[:, :2].contiguous()[:6]),
          "float64" if integer else dtype, exact=integer)
    e_c, e_g = both(make((4, 0)), dtype)
    f_c, f_g = both(make((0, 3)), dtype)
    check(ctorch.mm(e_c, f_c), ctorch.mm(e_g, f_g), "float64", exact=True)


def test_matmul_large_float32_tf32_setting():
    rng = np.random.default_rng(9)
    a_c, a_g = both(rng.standard_normal((128, 256)), "float32")
    b_c, b_g = both(rng.standard_normal((256, 64)), "float32")
    check(a_c @ b_c, a_g @ b_g, "float32")
    old = ctorch.get_float32_matmul_precision()
    try:
        ctorch.set_float32_matmul_precision("high")
        np.testing.assert_allclose(to_numpy(a_g @ b_g), to_numpy(a_c @ b_c), rtol=2e-2, atol=2e-1)
    finally:
        ctorch.set_float32_matmul_precision(old)
