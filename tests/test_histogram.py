"""torch.histogram / histogramdd (CPU float only, as PyTorch) and torch.gradient, against NumPy."""
import numpy as np
import pytest

import ctorch
from conftest import to_numpy

FLOATS = ["float32", "float64"]


def t_(data, device="cpu", dtype=None):
    return ctorch.tensor(np.asarray(data), device=device, dtype=getattr(ctorch, dtype) if dtype else None)


def close(actual, expected, dtype="float64"):
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(to_numpy(actual), expected, rtol=tol, atol=tol)


# --- histogram --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_histogram_bins_range_weight_density(dtype, rng):
    x = rng.standard_normal(40).astype(dtype)
    x[:3] = [x.max(), x.min(), x.max()]  # values on the outer edges land in the first / last bin
    w = rng.random(40).astype(dtype)
    for kw, np_kw in [({}, {}), ({"range": (-1.0, 1.0)}, {"range": (-1.0, 1.0)}),
                      ({"weight": t_(w)}, {"weights": w}), ({"density": True}, {"density": True}),
                      ({"range": (-1, 2), "weight": t_(w), "density": True},
                       {"range": (-1, 2), "weights": w, "density": True})]:
        r = ctorch.histogram(t_(x), 7, **kw)
        hist, edges = np.histogram(x.astype(np.float64), 7, **np_kw)
        assert type(r).__name__ == "histogram" and r.hist.dtype == getattr(ctorch, dtype)
        close(r.bin_edges, edges, dtype)
        close(r.hist, hist, dtype)
    # a transposed 2-d input and weight: flattened alike
    x2 = rng.standard_normal((3, 5)).astype(dtype)
    r = t_(x2).T.histogram(4, weight=t_(w[:15].reshape(3, 5)).T)
    close(r[0], np.histogram(x2.T.ravel(), 4, weights=w[:15].reshape(3, 5).T.ravel())[0], dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_histogram_edges_tensor_and_out(dtype):
    x = t_([0.0, 1, 2, 3, 3, 5, 7, -1, np.nan], dtype=dtype)
    edges = np.array([0.0, 2, 3, 5])
    r = ctorch.histogram(x, t_(edges, dtype=dtype))
    close(r.hist, [2, 1, 3], dtype)  # 3 is the left edge of [3, 5]; 5 the last edge; 7, -1, nan dropped
    close(r.bin_edges, edges, dtype)
    hist, be = ctorch.empty(0, dtype=x.dtype), ctorch.empty(0, dtype=x.dtype)
    r = ctorch.histogram(x, 3, range=(0.0, 3.0), out=(hist, be))
    assert type(r).__name__ == "histogram_out" and r.hist is hist and r.bin_edges is be
    close(hist, [1, 1, 3], dtype)
    close(be, [0, 1, 2, 3], dtype)


def test_histogram_degenerate():
    r = ctorch.histogram(ctorch.tensor(3.0), 2)  # 0-d; one value: widened by 0.5
    close(r.bin_edges, [2.5, 3, 3.5])
    close(r.hist, [0, 1])
    r = ctorch.histogram(ctorch.zeros(0), 2)
    close(r.bin_edges, [0, 0.5, 1])
    close(r.hist, [0, 0])
    close(ctorch.histogram(ctorch.arange(6.0), 3, range=(1, 1)).bin_edges, [0.5, 5 / 6, 7 / 6, 1.5], "float32")
    assert ctorch.histogram(ctorch.arange(5.0)).hist.shape == (100,)


def test_histogram_errors():
    x = ctorch.arange(6.0)
    cases = [
        (lambda: ctorch.histogram(ctorch.arange(5), 3), NotImplementedError, "\"histogramdd\" not implemented for 'Long'"),
        (lambda: ctorch.histogram(x.half(), 3), NotImplementedError, "not implemented for 'Half'"),
        (lambda: ctorch.histogram(x, 0), RuntimeError, r"bins must be > 0, but got 0 for dimension 0"),
        (lambda: ctorch.histogram(x, t_([1.0], dtype="float32")), RuntimeError, "bins must be > 0, but got 0"),
        (lambda: ctorch.histogram(x, 3, range=(2.0, 1.0)), RuntimeError, "min should not exceed max, but got min 2 max 1"),
        (lambda: ctorch.histogram(x, 3, range=(0.0, float("inf"))), RuntimeError, r"dimension 0's range \[0, inf\] is not finite"),
        (lambda: ctorch.histogram(t_([1.0, np.nan]), 3), RuntimeError, r"range \[nan, nan\] is not finite"),
        (lambda: ctorch.histogram(x, 3, range=(1, 2, 3)), RuntimeError, "range should have 2 elements, but got 3"),
        (lambda: ctorch.histogram(x, t_([[0.0, 1]], dtype="float32")), RuntimeError, "bins tensor should have one dimension"),
        (lambda: ctorch.histogram(x, t_([0.0, 1])), RuntimeError, "input with dtype float and bins for dimension 0 with dtype double"),
        (lambda: ctorch.histogram(x, 3, weight=ctorch.ones(3)), RuntimeError, r"input with shape \[6, 1\] and weight with shape \[3\]"),
        (lambda: ctorch.histogram(x, 3, weight=ctorch.ones(6, dtype=ctorch.float64)), RuntimeError, r"input\(float\), and weight\(double\)"),
        (lambda: ctorch.histogram(x, 3.5), TypeError, "invalid combination of arguments"),
        (lambda: ctorch.histogram(x, t_([0.0, 1], dtype="float32"), range=(0, 1)), TypeError, "invalid combination"),
        (lambda: ctorch.histogram(x, 3, out=(ctorch.zeros(1, dtype=ctorch.float64), ctorch.zeros(1))), RuntimeError,
         "input tensor and hist tensor should have the same dtype, but got input float and hist double"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()


def test_histogram_cuda_raises(device):
    if device != "cuda":
        pytest.skip("PyTorch's histogram is CPU-only")
    with pytest.raises(NotImplementedError, match="Could not run 'aten::histogram.bin_ct' with arguments from the 'CUDA'"):
        ctorch.histogram(ctorch.arange(4.0, device=device), 2)
    with pytest.raises(NotImplementedError, match="aten::_histogramdd_bin_edges"):
        ctorch.histogramdd(ctorch.ones(3, 2, device=device), 2)


def test_histogram_no_gradient():
    r = ctorch.histogram(ctorch.arange(6.0).requires_grad_(), 3)
    assert type(r.hist.grad_fn).__name__ == "NotImplemented"


# --- histogramdd ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_histogramdd(dtype, rng):
    x = rng.standard_normal((30, 3)).astype(dtype)
    w = rng.random(30).astype(dtype)
    for bins, kw, np_kw in [(3, {}, {}), ([2, 3, 4], {"range": [-1, 1, -2, 2, 0, 1]},
                                          {"range": [(-1, 1), (-2, 2), (0, 1)]}),
                            ([2, 3, 4], {"weight": t_(w), "density": True}, {"weights": w, "density": True})]:
        r = ctorch.histogramdd(t_(x), bins, **kw)
        hist, edges = np.histogramdd(x.astype(np.float64), bins, **np_kw)
        assert type(r).__name__ == "histogramdd" and isinstance(r.bin_edges, tuple)
        close(r.hist, hist, dtype)
        for e, ne in zip(r.bin_edges, edges):
            close(e, ne, dtype)
    # edge tensors, a (2, 15, 3) batch of rows, a transposed input
    edges = [np.array([-1.0, 0, 2]), np.array([-3.0, 3]), np.array([-2.0, -1, 0, 1])]
    r = ctorch.histogramdd(t_(x.reshape(2, 15, 3)), [t_(e, dtype=dtype) for e in edges],
                           weight=t_(w.reshape(2, 15)))
    close(r.hist, np.histogramdd(x.astype(np.float64), edges, weights=w)[0], dtype)
    xt = rng.standard_normal((2, 9)).astype(dtype)
    close(ctorch.histogramdd(t_(xt).T, (2, 2)).hist, np.histogramdd(xt.T.astype(np.float64), (2, 2))[0], dtype)
    empty = ctorch.histogramdd(ctorch.zeros(0, 2), 2)
    close(empty.hist, np.zeros((2, 2)))


def test_histogramdd_errors():
    x = ctorch.arange(6.0).reshape(3, 2)
    cases = [
        (lambda: ctorch.histogramdd(ctorch.arange(6.0), 2), RuntimeError, "input tensor should have at least 2 dimensions"),
        (lambda: ctorch.histogramdd(x, [2, 3, 4]), RuntimeError, "The size of bins must be equal to the innermost"),
        (lambda: ctorch.histogramdd(x, 2, range=[0.0, 1.0]), RuntimeError, "2-dimensional histogram range should have 4 elements, but got 2"),
        (lambda: ctorch.histogramdd(x, 2, weight=ctorch.ones(3, 1)), RuntimeError, r"input with shape \[3, 2\] and weight with shape \[3, 1\]"),
        (lambda: ctorch.histogramdd(x, [2, 2.5]), TypeError, "bins"),
        (lambda: ctorch.histogramdd(x, ctorch.tensor([0.0, 3])), TypeError, "invalid combination"),
        (lambda: ctorch.histogramdd(ctorch.tensor(3.0), 2), IndexError, "Dimension specified as -1"),
        (lambda: ctorch.histogramdd(x.int(), 2), NotImplementedError, "not implemented for 'Int'"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()


# --- gradient ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_vs_numpy(device, dtype, edge_order, rng):
    f = rng.standard_normal((4, 5)).astype(dtype)
    x = t_(f, device, dtype)
    coords = np.cumsum(rng.random(5) + 0.5)
    cases = [
        ({}, (), {}),
        ({"spacing": 2.0}, (2.0,), {}),
        ({"spacing": [0.5, 3]}, (0.5, 3), {}),
        ({"dim": 1}, (), {"axis": 1}),
        ({"spacing": [t_(coords, device, dtype)], "dim": [-1]}, (coords,), {"axis": -1}),
        ({"spacing": [t_(coords[:4], device, dtype), t_(coords, device, dtype)]}, (coords[:4], coords), {}),
    ]
    for kw, np_args, np_kw in cases:
        got = ctorch.gradient(x, edge_order=edge_order, **kw)
        want = np.gradient(f.astype(np.float64), *np_args, edge_order=edge_order, **np_kw)
        want = [want] if isinstance(want, np.ndarray) else want
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == x.dtype and g.device.type == device
            np.testing.assert_allclose(to_numpy(g), w, rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-4)
    # a transposed input and an int input (true division: float)
    got = ctorch.gradient(x.T, dim=0)[0]
    np.testing.assert_allclose(to_numpy(got), np.gradient(f.T.astype(np.float64), axis=0), rtol=1e-4, atol=1e-5)
    ints = ctorch.gradient(t_(np.array([1, 4, 9, 16]), device), spacing=2)[0]
    assert ints.dtype == ctorch.float32
    np.testing.assert_allclose(to_numpy(ints), np.gradient(np.array([1, 4, 9, 16]), 2))


def test_gradient_shapes_and_autograd():
    assert ctorch.gradient(ctorch.tensor(3.0)) == ()
    assert ctorch.gradient(ctorch.zeros(3, 0), dim=0)[0].shape == (3, 0)
    x = ctorch.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    c = ctorch.tensor([0.0, 1.0, 2.5, 4.0], dtype=ctorch.float64)
    assert type(ctorch.gradient(x)[0].grad_fn).__name__ == "CatBackward0"
    for edge_order in (1, 2):
        assert ctorch.autograd.gradcheck(lambda t: ctorch.gradient(t, spacing=[2.0, 0.5], edge_order=edge_order), (x,))
        assert ctorch.autograd.gradcheck(
            lambda t: ctorch.gradient(t, spacing=[c], dim=1, edge_order=edge_order), (x,))


def test_gradient_errors():
    x = ctorch.arange(12.0).reshape(3, 4)
    cases = [
        (lambda: ctorch.gradient(ctorch.tensor([1.0, 2]), edge_order=2), RuntimeError, "at least edge_order\\+1"),
        (lambda: ctorch.gradient(x, edge_order=3), RuntimeError, "only supports edge_order=1 and edge_order=2"),
        (lambda: ctorch.gradient(x, spacing=[1.0]), RuntimeError, "list of length equal to 'self.dim\\(\\) = 2'"),
        (lambda: ctorch.gradient(x, spacing=[1.0], dim=(0, 1)), RuntimeError,
         "spacing argument of length 1 and a dim argument of length 2"),
        (lambda: ctorch.gradient(x, spacing=[ctorch.ones(1, 4)], dim=1), RuntimeError, "got an element with 2 dimensions"),
        (lambda: ctorch.gradient(x, spacing=[ctorch.ones(3), 2.0]), TypeError, "expected Tensor as element 1"),
        (lambda: ctorch.gradient(x, dim=2), IndexError, "Dimension out of range"),
        (lambda: ctorch.gradient(x, dim=(0, -2)), RuntimeError, "dim 0 appears multiple times"),
        (lambda: ctorch.gradient(x, spacing=ctorch.ones(3)), TypeError, "invalid combination"),
        (lambda: ctorch.gradient(x, edge_order=1.0), TypeError, "invalid combination"),
        (lambda: ctorch.gradient(ctorch.arange(5, dtype=ctorch.uint8)), NotImplementedError, "does not support uint8"),
        (lambda: ctorch.gradient(ctorch.tensor([True, False, True])), Exception, "bool"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()
