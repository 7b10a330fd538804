"""Tests of the linear-algebra family (csrc/ops_linalg.c): matmul/@, mm, bmm, mv, dot, vdot,
outer/ger, addmm/addmv/baddbmm/addbmm (and in-place forms), einsum, and the BLAS selection.

NumPy is the oracle. Every product runs on both CPU GEMM paths (the loaded OpenBLAS and the
built-in kernel, switched with _C._blas_use_builtin), in several memory layouts (contiguous,
transposed, padded rows, strides != 1 in both dims, broadcast rows/batches, empty dims).
Operands hold small integers so that products are exact in every dtype and only the final
rounding of float16/bfloat16 differs from the float64 oracle. Error types and messages are
PyTorch 2.x's (checked against the reference build)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import ctorch
from conftest import DEVICES, TOL


def to_numpy(t):
    """A NumPy copy of t (bfloat16 widened to float32). conftest.to_numpy compares with
    ctorch.bfloat16, which the autograd layer currently replaces by a wrapper."""
    t = t.detach().cpu()
    if str(t.dtype) == "torch.bfloat16":
        t = t.float()
    return np.array(t.numpy(), copy=True)


def assert_close(actual, expected, dtype):
    a = to_numpy(actual)
    assert a.shape == np.shape(expected), f"shape {a.shape} != {np.shape(expected)}"
    if dtype in TOL:
        rtol, atol = TOL[dtype]
        np.testing.assert_allclose(a.astype(np.float64), np.asarray(expected, np.float64), rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(a, np.asarray(expected))

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32"]


def dt(name):
    """The ctorch dtype object called name (robust to module attributes wrapped by autograd)."""
    obj = getattr(ctorch, name, None)
    if isinstance(obj, ctorch.dtype):
        return obj
    return getattr(ctorch.tensor(np.zeros(1, np.float32)), name)().dtype


def np_oracle_dtype(name):
    return np.float64 if name in ("float32", "float64", "float16", "bfloat16") else np.int64


def tensor(arr, name, device):
    """A contiguous tensor of dtype name on device holding arr."""
    t = ctorch.tensor(np.array(arr, dtype=np.float64 if "float" in name else np.int64, order="C"))
    return t.to(dt(name)).to(device)


def ints(rng, shape, lo=-3, hi=4):
    return rng.integers(lo, hi, size=shape).astype(np.float64)


LAYOUTS = ["contiguous", "transposed", "padded", "strided", "broadcast"]


def make(arr, layout, name, device):
    """(tensor, numpy value) for arr (>= 2-d) laid out as named; `broadcast` repeats arr's
    first row (stride 0 along the rows)."""
    if layout == "contiguous":
        return tensor(arr, name, device), arr
    if layout == "transposed":
        return tensor(np.swapaxes(arr, -1, -2), name, device).transpose(-1, -2), arr
    if layout == "padded":  # rows farther apart than their length (lda > K)
        big = np.zeros(arr.shape[:-2] + (arr.shape[-2] + 2, arr.shape[-1] + 3))
        big[..., 1:1 + arr.shape[-2], 2:2 + arr.shape[-1]] = arr
        t = tensor(big, name, device)
        return t.narrow(-2, 1, arr.shape[-2]).narrow(-1, 2, arr.shape[-1]), arr
    if layout == "strided":  # no unit stride in either matrix dim: must be copied
        big = np.stack([arr, np.zeros_like(arr)], axis=-1)
        return tensor(big, name, device).select(-1, 0), arr
    if layout == "broadcast":
        row = arr[..., :1, :]
        val = np.broadcast_to(row, arr.shape).copy()
        return tensor(row, name, device).expand(*arr.shape), val
    raise ValueError(layout)


@pytest.fixture(params=["default", "openblas", "builtin"])
def gemm_path(request):
    """Runs the test as configured at import (OpenBLAS for small float products, the built-in
    kernel for large ones), with every float product on the loaded BLAS, and on the built-in
    kernel only."""
    if request.param == "openblas" and ctorch._C._blas_name() == "built-in":
        pytest.skip("no BLAS library loaded")
    prev = ctorch._C._blas_use_builtin(request.param == "builtin")
    prev_limit = ctorch._C._blas_max_work(0) if request.param == "openblas" else None
    yield request.param
    ctorch._C._blas_use_builtin(prev)
    if prev_limit is not None:
        ctorch._C._blas_max_work(prev_limit)


def check(result, expected, name):
    """Compares with the float64/int64 oracle, cast to the result dtype like PyTorch."""
    assert str(result.dtype) == f"torch.{name}"
    if name.startswith("int"):
        expected = np.asarray(expected).astype(name)
    assert_close(result, np.asarray(expected), dtype=name)


# --- matmul over every rank combination -------------------------------------------------------
MATMUL_SHAPES = [
    ((3,), (3,)),  # dot
    ((2, 3), (3,)),  # mv
    ((3,), (3, 4)),  # vector @ matrix
    ((2, 3), (3, 4)),  # mm
    ((5, 2, 3), (3, 4)),  # folded into one mm
    ((5, 2, 3), (3,)),  # folded into one mv
    ((3,), (5, 3, 4)),  # batched with a lifted vector
    ((2, 3), (5, 3, 4)),  # batched, left operand broadcast
    ((5, 2, 3), (5, 3, 4)),  # bmm
    ((2, 1, 2, 3), (5, 3, 4)),  # batch broadcasting
    ((7, 1, 4, 5), (3, 5, 6)),
    ((1, 3), (4, 3, 1)),
    ((0, 3), (3, 4)),  # empty rows
    ((2, 0), (0, 4)),  # K = 0: zeros
    ((0,), (0,)),
    ((4, 0, 3), (3, 2)),
    ((3, 2, 0), (3, 0, 5)),
    ((0, 2, 3), (3, 4)),
    ((9, 13), (13, 11)),  # past the tiny-product loop
    ((6, 9, 13), (6, 13, 11)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=lambda s: f"{s[0]}@{s[1]}")
def test_matmul_ranks(device, gemm_path, name, shapes):
    rng = np.random.default_rng(0)
    a, b = ints(rng, shapes[0]), ints(rng, shapes[1])
    A, B = tensor(a, name, device), tensor(b, name, device)
    want = np.matmul(a, b)
    check(ctorch.matmul(A, B), want, name)
    check(A @ B, want, name)
    check(A.matmul(B), want, name)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16", "int64"])
@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", LAYOUTS)
@pytest.mark.parametrize("mnk", [(3, 4, 5), (17, 12, 9)], ids=["tiny", "engine"])
def test_mm_layouts(device, gemm_path, name, la, lb, mnk):
    m, n, k = mnk
    rng = np.random.default_rng(1)
    A, a = make(ints(rng, (m, k)), la, name, device)
    B, b = make(ints(rng, (k, n)), lb, name, device)
    check(ctorch.mm(A, B), a @ b, name)
    check(A @ B, a @ b, name)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["float32", "float64", "bfloat16", "int32"])
@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", LAYOUTS)
def test_bmm_layouts(device, gemm_path, name, la, lb):
    rng = np.random.default_rng(2)
    A, a = make(ints(rng, (4, 7, 9)), la, name, device)
    B, b = make(ints(rng, (4, 9, 6)), lb, name, device)
    check(ctorch.bmm(A, B), a @ b, name)
    check(A @ B, a @ b, name)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["float32", "float64", "int64"])
def test_batched_layouts(device, gemm_path, name):
    """Expanded batch dims (stride 0), permuted batch dims, and transposed matrices."""
    rng = np.random.default_rng(3)
    a, b = ints(rng, (3, 5, 4)), ints(rng, (2, 4, 6))
    A, B = tensor(a, name, device), tensor(b, name, device)
    # (2, 3, 5, 4) @ (2, 1, 4, 6) through expand: batch strides 0
    Ae = A.expand(2, 3, 5, 4)
    Be = B.unsqueeze(1)
    check(Ae @ Be, np.broadcast_to(a, (2, 3, 5, 4)) @ b[:, None], name)
    # permuted batch dims: (5, 3, 4) seen as (3, 5, 4)
    p = ints(rng, (5, 3, 4))
    P = tensor(p, name, device).permute(1, 0, 2)
    check(P @ B.select(0, 0), p.transpose(1, 0, 2) @ b[0], name)
    # right operand shared by every batch (folded into one tall product)
    check(A @ B.select(0, 1), a @ b[1], name)
    check(A.transpose(1, 2).transpose(1, 2) @ B.select(0, 1).t().t(), a @ b[1], name)
    # left operand shared: (5, 4) @ (2, 4, 6)
    check(A.select(0, 0) @ B, a[0] @ b, name)
    # vector @ a batch whose transpose folds into one matrix (one mv)
    y = ints(rng, (2, 6, 4))
    Y = tensor(y, name, device).transpose(1, 2)
    v = ints(rng, (4,))
    check(tensor(v, name, device) @ Y, v @ y.transpose(0, 2, 1), name)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["float32", "float64"])
def test_matmul_large(device, gemm_path, name):
    """Products past every cache block and the threading threshold, and their transposes."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((301, 257))
    b = rng.standard_normal((257, 190))
    A, B = tensor(a, name, device), tensor(b, name, device)
    tol = 2e-4 if name == "float32" else 1e-10
    np.testing.assert_allclose(to_numpy(A @ B), a @ b, rtol=tol, atol=tol)
    np.testing.assert_allclose(to_numpy(B.t() @ A.t()), b.T @ a.T, rtol=tol, atol=tol)
    x = rng.standard_normal((6, 70, 80))
    y = rng.standard_normal((6, 80, 90))
    X, Y = tensor(x, name, device), tensor(y, name, device)
    np.testing.assert_allclose(to_numpy(X @ Y), x @ y, rtol=tol, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["float32", "float64", "float16", "int64", "int32"])
def test_many_small_matrices(device, gemm_path, name):
    rng = np.random.default_rng(5)
    for shape_a, shape_b in [((3000, 4, 4), (3000, 4, 4)), ((500, 9, 10), (500, 10, 11)),
                             ((200, 1, 1), (200, 1, 1)), ((64, 24, 24), (24, 24))]:
        a, b = ints(rng, shape_a), ints(rng, shape_b)
        check(tensor(a, name, device) @ tensor(b, name, device), a @ b, name)


@pytest.mark.parametrize("device", DEVICES)
def test_integer_matmul_wraps(device, gemm_path):
    """Integer products are exact and wrap like the integer arithmetic of their dtype."""
    rng = np.random.default_rng(6)
    a = rng.integers(-2 ** 20, 2 ** 20, (6, 40)).astype(np.int32)
    b = rng.integers(-2 ** 20, 2 ** 20, (40, 5)).astype(np.int32)
    got = ctorch.tensor(a) @ ctorch.tensor(b)
    np.testing.assert_array_equal(to_numpy(got), a @ b)  # numpy int32 wraps the same way
    a64 = rng.integers(-2 ** 40, 2 ** 40, (5, 30))
    b64 = rng.integers(-2 ** 40, 2 ** 40, (30, 4))
    np.testing.assert_array_equal(to_numpy(ctorch.tensor(a64) @ ctorch.tensor(b64)), a64 @ b64)


# --- mv, dot, vdot, outer -----------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", DTYPES)
def test_vector_products(device, gemm_path, name):
    rng = np.random.default_rng(7)
    m, v, w = ints(rng, (5, 7)), ints(rng, (7,)), ints(rng, (7,))
    M, V, W = tensor(m, name, device), tensor(v, name, device), tensor(w, name, device)
    check(ctorch.mv(M, V), m @ v, name)
    check(M.mv(V), m @ v, name)
    check(M.t().t().mv(V), m @ v, name)
    check(tensor(m.T, name, device).t().mv(V), m @ v, name)  # transposed matrix
    check(ctorch.dot(V, W), np.dot(v, w), name)
    check(V.dot(W), np.dot(v, w), name)
    check(ctorch.vdot(V, W), np.dot(v, w), name)
    check(ctorch.outer(V, W), np.outer(v, w), name)
    check(ctorch.ger(V, W), np.outer(v, w), name)
    check(V.outer(W), np.outer(v, w), name)
    # strided vectors (every other element) and empty ones
    big = tensor(np.stack([v, w], axis=-1), name, device)
    check(ctorch.dot(big.select(1, 0), big.select(1, 1)), np.dot(v, w), name)
    check(ctorch.mv(M, big.select(1, 1)), m @ w, name)
    check(ctorch.outer(big.select(1, 0), big.select(1, 1)), np.outer(v, w), name)
    e = tensor(np.zeros(0), name, device)
    check(ctorch.dot(e, e), np.float64(0), name)
    check(ctorch.mv(tensor(np.zeros((3, 0)), name, device), e), np.zeros(3), name)


def test_outer_promotes():
    a = ctorch.tensor(np.array([1, 2, 3], np.int32))
    b = ctorch.tensor(np.array([0.5, 2.0]))
    r = ctorch.outer(a, b)
    assert r.dtype == dt("float64")
    np.testing.assert_array_equal(to_numpy(r), np.outer([1, 2, 3], [0.5, 2.0]))
    t = ctorch.tensor(np.array([True, False]))
    r = ctorch.outer(t, t)
    assert r.dtype == dt("bool")
    np.testing.assert_array_equal(to_numpy(r), np.outer([True, False], [True, False]))


# --- addmm family -------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", DTYPES)
def test_addmm_family(device, gemm_path, name):
    rng = np.random.default_rng(8)
    inp, m1, m2 = ints(rng, (4, 5)), ints(rng, (4, 3)), ints(rng, (3, 5))
    I, M1, M2 = (tensor(x, name, device) for x in (inp, m1, m2))
    fb, fa = (2, 3) if name.startswith("int") else (0.5, 2.0)
    check(ctorch.addmm(I, M1, M2), inp + m1 @ m2, name)
    check(ctorch.addmm(I, M1, M2, beta=fb, alpha=fa), fb * inp + fa * (m1 @ m2), name)
    check(I.addmm(M1, M2, alpha=fa), inp + fa * (m1 @ m2), name)
    check(ctorch.addmm(tensor(inp[0], name, device), M1, M2), inp[0] + m1 @ m2, name)  # broadcast row
    check(ctorch.addmm(tensor(inp[:, :1], name, device), M1, M2), inp[:, :1] + m1 @ m2, name)
    # in place, contiguous and transposed self
    C = tensor(inp, name, device)
    r = C.addmm_(M1, M2, beta=fb)
    assert r is C
    check(C, fb * inp + m1 @ m2, name)
    C = tensor(inp.T, name, device).t()
    C.addmm_(M1, M2, beta=fb, alpha=fa)
    check(C, fb * inp + fa * (m1 @ m2), name)
    # addmv
    v, w = ints(rng, (3,)), ints(rng, (4,))
    check(ctorch.addmv(tensor(w, name, device), M1, tensor(v, name, device), beta=fb, alpha=fa),
          fb * w + fa * (m1 @ v), name)
    W = tensor(w, name, device)
    W.addmv_(M1, tensor(v, name, device))
    check(W, w + m1 @ v, name)
    check(ctorch.addmv(tensor(np.array([2.0]), name, device), M1, tensor(v, name, device)), 2 + m1 @ v, name)
    # baddbmm / addbmm
    b1, b2, ib = ints(rng, (3, 4, 6)), ints(rng, (3, 6, 2)), ints(rng, (3, 4, 2))
    B1, B2 = tensor(b1, name, device), tensor(b2, name, device)
    check(ctorch.baddbmm(tensor(ib, name, device), B1, B2, beta=fb, alpha=fa), fb * ib + fa * (b1 @ b2), name)
    check(ctorch.baddbmm(tensor(ib[0, 0], name, device), B1, B2), ib[0, 0] + b1 @ b2, name)
    X = tensor(ib, name, device)
    X.baddbmm_(B1, B2)
    check(X, ib + b1 @ b2, name)
    check(ctorch.addbmm(tensor(inp[:, :2], name, device), B1, B2, beta=fb, alpha=fa),
          fb * inp[:, :2] + fa * (b1 @ b2).sum(0), name)
    Y = tensor(inp[:, :2], name, device)
    Y.addbmm_(B1.transpose(1, 2).transpose(1, 2), B2)
    check(Y, inp[:, :2] + (b1 @ b2).sum(0), name)


@pytest.mark.parametrize("device", DEVICES)
def test_addmm_beta_zero_ignores_input(device, gemm_path):
    nan = tensor(np.full((2, 2), np.nan), "float32", device)
    m1 = tensor(np.ones((2, 3)), "float32", device)
    m2 = tensor(np.ones((3, 2)), "float32", device)
    np.testing.assert_array_equal(to_numpy(ctorch.addmm(nan, m1, m2, beta=0)), np.full((2, 2), 3.0))
    nan.addmm_(m1, m2, beta=0)
    np.testing.assert_array_equal(to_numpy(nan), np.full((2, 2), 3.0))
    # K = 0: beta * input
    e1, e2 = tensor(np.zeros((2, 0)), "float32", device), tensor(np.zeros((0, 2)), "float32", device)
    np.testing.assert_array_equal(to_numpy(ctorch.addmm(m1.narrow(1, 0, 2), e1, e2, beta=2)), np.full((2, 2), 2.0))


@pytest.mark.parametrize("device", DEVICES)
def test_addmm_inplace_aliasing(device, gemm_path):
    """self also being mat1 or mat2 is computed through a temporary."""
    rng = np.random.default_rng(9)
    a = ints(rng, (4, 4))
    A = tensor(a, "float64", device)
    A.addmm_(A, A)
    np.testing.assert_array_equal(to_numpy(A), a + a @ a)
    B = tensor(a, "float64", device)
    B.addmm_(B.t(), B, beta=0)
    np.testing.assert_array_equal(to_numpy(B), a.T @ a)


def test_inplace_bumps_version():
    x = ctorch.tensor(np.ones((2, 2)))
    v = x._version
    x.addmm_(ctorch.tensor(np.ones((2, 3))), ctorch.tensor(np.ones((3, 2))))
    assert x._version > v


@pytest.mark.parametrize("device", DEVICES)
def test_linear(device, gemm_path):
    """linear (nn.functional.linear, the fused GEMM in nn.c): input (..., in) @ weight.T + bias."""
    rng = np.random.default_rng(12)
    w, bias = ints(rng, (5, 3)), ints(rng, (5,))
    W, Bb = tensor(w, "float32", device), tensor(bias, "float32", device)
    for shape in [(3,), (4, 3), (2, 4, 3), (2, 0, 3)]:
        x = ints(rng, shape)
        X = tensor(x, "float32", device)
        check(ctorch._C.linear(X, W, Bb), x @ w.T + bias, "float32")
        check(ctorch._C.linear(X, W), x @ w.T, "float32")
    x = ints(rng, (4, 2, 3))
    X = tensor(x, "float32", device).transpose(0, 1)  # leading dims do not merge: copied
    check(ctorch._C.linear(X, W, Bb), x.transpose(1, 0, 2) @ w.T + bias, "float32")
    with pytest.raises(RuntimeError, match=r"^addmm: mat1 and mat2 shapes cannot be multiplied \(4x3 and 4x5\)$"):
        ctorch._C.linear(o(2, 2, 3), o(5, 4), o(5))
    with pytest.raises(RuntimeError, match=r"^self and mat2 must have the same dtype, but got Double and Float$"):
        ctorch._C.linear(o(2, 3), o(5, 3), o(5, name="float64"))


# --- einsum --------------------------------------------------------------------------------------
EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("i,i->", [(7,), (7,)]),
    ("ij->ji", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk", [(2, 5, 2, 3), (5, 3, 4)]),
    ("...ij->...ji", [(2, 3, 4)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("ijk,ikl->ijl", [(2, 3, 4), (2, 4, 5)]),
    ("abc,cd->dba", [(2, 3, 4), (4, 5)]),
    ("bij,bjk->ibk", [(5, 2, 3), (5, 3, 4)]),
    ("ij,kl->", [(2, 3), (4, 5)]),
    ("ij,kl->ijkl", [(2, 3), (4, 5)]),
    ("iij->j", [(3, 3, 4)]),
    ("iij->ij", [(3, 3, 2)]),
    ("ij,j->j", [(3, 4), (4,)]),
    ("ba,b", [(2, 3), (2,)]),
    ("zb,Ab", [(2, 3), (4, 3)]),
    ("Ab,bA->", [(2, 3), (3, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("i,i,i->i", [(4,), (4,), (4,)]),
    ("i j -> j i", [(2, 3)]),
    ("i,i->i", [(3,), (1,)]),
    ("ij,ij->ij", [(3, 1), (1, 4)]),
    ("ii", [(3, 3)]),
    ("ij,jk->ik", [(2, 0), (0, 4)]),
    ("bij,bjk->bik", [(2, 0, 3), (2, 3, 4)]),
    ("ij->", [(0, 3)]),
    ("", [()]),
    (",->", [(), ()]),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["float32", "float64", "int64"])
@pytest.mark.parametrize("eq,shapes", EINSUM_CASES, ids=[c[0] or "empty" for c in EINSUM_CASES])
def test_einsum(device, gemm_path, name, eq, shapes):
    rng = np.random.default_rng(10)
    ops = [ints(rng, s) for s in shapes]
    got = ctorch.einsum(eq, *[tensor(x, name, device) for x in ops])
    check(got, np.einsum(eq, *ops), name)


@pytest.mark.parametrize("device", DEVICES)
def test_einsum_layouts_and_forms(device, gemm_path):
    rng = np.random.default_rng(11)
    a, b = ints(rng, (4, 3, 5)), ints(rng, (4, 5, 6))
    for la in ("transposed", "strided", "broadcast"):
        A, av = make(a, la, "float32", device)
        B, bv = make(b, "transposed", "float32", device)
        check(ctorch.einsum("bij,bjk->bik", A, B), np.einsum("bij,bjk->bik", av, bv), "float32")
        check(ctorch.einsum("bij,bjk->", A, B), np.einsum("bij,bjk->", av, bv), "float32")
    A, B = tensor(a, "float64", device), tensor(b, "float64", device)
    want = np.einsum("bij,bjk->bik", a, b)
    check(ctorch.einsum("bij,bjk->bik", [A, B]), want, "float64")
    check(ctorch.einsum("bij,bjk->bik", (A, B)), want, "float64")
    check(ctorch.einsum(A, [0, 1, 2], B, [0, 2, 3], [0, 1, 3]), want, "float64")
    check(ctorch.einsum(A, [0, 1, 2], B, [0, 2, 3]), np.einsum("abc,acd", a, b), "float64")
    check(ctorch.einsum(A, [Ellipsis, 2], B, [0, 2, 3], [Ellipsis, 3]), np.einsum("...c,acd->...d", a, b), "float64")
    # views: no summation returns a view of the operand, like PyTorch
    v = ctorch.einsum("bij->jib", A)
    assert v.data_ptr() == A.data_ptr() and v.shape == (5, 3, 4)
    d = ctorch.einsum("ii->i", tensor(np.arange(9.0).reshape(3, 3), "float64", device))
    assert d.stride() == (4,)
    np.testing.assert_array_equal(to_numpy(d), [0, 4, 8])


def test_einsum_dtypes():
    """PyTorch's rules: single-operand sums are torch.sum (integers -> int64), pairs without a
    contraction are torch.mul (dtypes promote), pairs with one are torch.bmm (must match)."""
    i32 = ctorch.tensor(np.ones((2, 3), np.int32))
    assert ctorch.einsum("ij->j", i32).dtype == dt("int64")
    assert ctorch.einsum("ij->ji", i32).dtype == dt("int32")
    assert ctorch.einsum("ij,jk->ik", i32, i32.t()).dtype == dt("int32")
    assert ctorch.einsum("ij,j->j", i32, i32.select(0, 0)).dtype == dt("int64")
    b = ctorch.tensor(np.array([True, False, True]))
    assert ctorch.einsum("i->", b).dtype == dt("int64")
    assert ctorch.einsum("i->", b).item() == 2
    assert ctorch.einsum("i,i->i", b, b).dtype == dt("bool")
    h = ctorch.tensor(np.ones(2, np.float16))
    f = ctorch.tensor(np.ones(2, np.float32))
    assert ctorch.einsum("i,i->i", h, f).dtype == dt("float32")
    assert ctorch.einsum("ij->", ctorch.tensor(np.ones((2, 3))).bfloat16()).dtype == dt("bfloat16")


# --- dtypes and errors --------------------------------------------------------------------------
def o(*shape, name="float32"):
    return tensor(np.ones(shape), name, "cpu")


ERRORS = [
    (lambda: ctorch.matmul(o(2, 3), o(3, 4, name="float64")), RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: float != double"),
    (lambda: o(2, 3) @ o(3, 4, name="float64"), RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: float != double"),
    (lambda: ctorch.mm(o(2, 3), o(4, 5)), RuntimeError, "mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    (lambda: o(2, 3) @ o(4, 5), RuntimeError, "mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    (lambda: o(3) @ o(4), RuntimeError, "inconsistent tensor size, expected tensor [3] and src [4] to have the same "
                                        "number of elements, but got 3 and 4 elements respectively"),
    (lambda: o(2, 3) @ o(4), RuntimeError, "size mismatch, got input (2), mat (2x3), vec (4)"),
    (lambda: o(3) @ o(4, 5), RuntimeError, "mm: mat1 and mat2 shapes cannot be multiplied (1x3 and 4x5)"),
    (lambda: o(2, 2, 3) @ o(2, 4, 5), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4]."),
    (lambda: o(2, 2, 3) @ o(3, 4, 5), RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    (lambda: o(2, 2, 3) @ o(4), RuntimeError, "size mismatch, got input (4), mat (4x3), vec (4)"),
    (lambda: o(2, 2, 3) @ o(4, 5), RuntimeError, "mm: mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)"),
    (lambda: o(5) @ o(2, 4, 3).transpose(1, 2), RuntimeError, "size mismatch, got input (8), mat (8x3), vec (5)"),
    (lambda: o() @ o(2, 3), RuntimeError, "both arguments to matmul need to be at least 1D, but they are 0D and 2D"),
    (lambda: ctorch.matmul(o(2, 3), o()), RuntimeError,
     "both arguments to matmul need to be at least 1D, but they are 2D and 0D"),
    (lambda: ctorch.mm(o(3), o(3, 2)), RuntimeError, "mm: self must be a matrix, got 1-D tensor"),
    (lambda: ctorch.mm(o(2, 3), o(3)), RuntimeError, "mm: mat2 must be a matrix, got 1-D tensor"),
    (lambda: ctorch.bmm(o(2, 3), o(2, 3, 2)), RuntimeError, "batch1 must be a 3D tensor"),
    (lambda: ctorch.bmm(o(2, 2, 3), o(2, 3)), RuntimeError, "batch2 must be a 3D tensor"),
    (lambda: ctorch.bmm(o(2, 2, 3), o(3, 3, 2)), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3]."),
    (lambda: ctorch.bmm(o(2, 2, 3), o(2, 3, 2, name="float64")), RuntimeError,
     "expected scalar type Float but found Double"),
    (lambda: ctorch.mv(o(3), o(3)), RuntimeError, "vector + matrix @ vector expected, got 1, 1, 1"),
    (lambda: ctorch.mv(o(2, 3), o(3, name="float64")), RuntimeError,
     "addmv input tensors must have the same dtype, but got Double, Float, and Double"),
    (lambda: ctorch.dot(o(3, 1), o(3)), RuntimeError, "1D tensors expected, but got 2D and 1D tensors"),
    (lambda: ctorch.dot(o(3), o(3, name="int64")), RuntimeError,
     "dot : expected both vectors to have same dtype, but found Float and Long"),
    (lambda: ctorch.outer(o(3, 2), o(4)), RuntimeError, "outer: Expected 1-D argument self, but got 2-D"),
    (lambda: ctorch.matmul(o(2, 3, name="int32"), o(3, 2, name="int64")), RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: int != long int"),
    (lambda: ctorch.matmul(o(2, 3, name="bfloat16"), o(3, 2, name="float16")), RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: c10::BFloat16 != c10::Half"),
    (lambda: ctorch.matmul(o(4, 2, 3), o(4, 3, 2, name="float64")), RuntimeError,
     "expected scalar type Float but found Double"),
    (lambda: ctorch.matmul(o(2, 3, name="bool"), o(3, 2, name="bool")), NotImplementedError,
     "\"addmm_impl_cpu_\" not implemented for 'Bool'"),
    (lambda: ctorch.bmm(o(2, 2, 3, name="bool"), o(2, 3, 2, name="bool")), NotImplementedError,
     "\"bmm\" not implemented for 'Bool'"),
    (lambda: ctorch.dot(o(3, name="bool"), o(3, name="bool")), NotImplementedError,
     "\"dot\" not implemented for 'Bool'"),
    (lambda: ctorch.matmul(o(2, 3), 3), TypeError, "matmul(): argument 'other' (position 2) must be Tensor, not int"),
    (lambda: o(2, 3).mm(3), TypeError, "mm(): argument 'mat2' (position 1) must be Tensor, not int"),
    (lambda: o(2, 3) @ 3, TypeError,  # the type's qualified name is the core's choice
     re.compile(r"unsupported operand type\(s\) for @: '(ctorch\.)?Tensor' and 'int'")),
    (lambda: ctorch.addmm(o(2, 2, name="float64"), o(2, 3), o(3, 2)), RuntimeError,
     "self and mat2 must have the same dtype, but got Double and Float"),
    (lambda: ctorch.addmm(o(2, 2), o(2, 3, name="float64"), o(3, 2)), RuntimeError,
     "mat1 and mat2 must have the same dtype, but got Double and Float"),
    (lambda: ctorch.addmm(o(2, 2), o(2, 3), o(4, 2)), RuntimeError,
     "addmm: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)"),
    (lambda: ctorch.addmm(o(3), o(2, 3), o(3, 2)), RuntimeError,
     "The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 1.  "
     "Target sizes: [2, 2].  Tensor sizes: [3]"),
    (lambda: ctorch.addmm(o(1, 2, 2), o(2, 3), o(3, 2)), RuntimeError,
     "expand(torch.FloatTensor{[1, 2, 2]}, size=[2, 2]): the number of sizes provided (2) must be greater or equal "
     "to the number of dimensions in the tensor (3)"),
    (lambda: o(2, 1).addmm_(o(2, 3), o(3, 2)), RuntimeError,
     "Bad in-place call: input tensor size [2, 1] and output tensor size [2, 2] should match"),
    (lambda: o(1, 2).expand(2, 2).addmm_(o(2, 3), o(3, 2)), RuntimeError,
     "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
     "Please clone() the tensor before performing the operation."),
    (lambda: ctorch.addmv(o(3), o(2, 3), o(3)), RuntimeError, "size mismatch, got input (3), mat (2x3), vec (3)"),
    (lambda: ctorch.baddbmm(o(2, 2, 2), o(2, 2, 3, name="float64"), o(2, 3, 2)), RuntimeError,
     "Input dtypes must be the same, got: input float, batch1: double, batch2: float"),
    (lambda: ctorch.addbmm(o(2, 2), o(2, 2, 3), o(3, 3, 2)), RuntimeError,
     "batch1 and batch2 must have same number of batches, got 2 and 3"),
    (lambda: ctorch.addbmm(o(2, 2), o(2, 2, 3), o(2, 4, 2)), RuntimeError,
     "Incompatible matrix sizes for bmm (2x3 and 4x2)"),
    (lambda: ctorch.einsum("ij,jk->ik", o(2, 3), o(4, 4)), RuntimeError,
     "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"),
    (lambda: ctorch.einsum("ij,jk->ik", o(2, 3), o(3, 4, name="float64")), RuntimeError,
     "expected scalar type Float but found Double"),
    (lambda: ctorch.einsum("ij,jk->ik", o(2, 3)), RuntimeError,
     "einsum(): fewer operands were provided than specified in the equation"),
    (lambda: ctorch.einsum("i", o(2), o(2)), RuntimeError,
     "einsum(): more operands were provided than specified in the equation"),
    (lambda: ctorch.einsum("ijk,jk->ik", o(2, 3), o(3, 4)), RuntimeError,
     "einsum(): the number of subscripts in the equation (3) does not match the number of dimensions (2) for "
     "operand 0 and no ellipsis was given"),
    (lambda: ctorch.einsum("ijk...->", o(4, 2)), RuntimeError,
     "einsum(): the number of subscripts in the equation (3) is more than the number of dimensions (2) for operand 0"),
    (lambda: ctorch.einsum("ij,jk->il", o(2, 3), o(3, 4)), RuntimeError,
     "einsum(): output subscript l does not appear in the equation for any input operand"),
    (lambda: ctorch.einsum("ij,jk->iik", o(2, 3), o(3, 4)), RuntimeError,
     "einsum(): output subscript i appears more than once in the output"),
    (lambda: ctorch.einsum("ii->i", o(2, 3)), RuntimeError,
     "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"),
    (lambda: ctorch.einsum("i1->1", o(3, 4)), RuntimeError,
     "einsum(): invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]"),
    (lambda: ctorch.einsum("...i...->i", o(2, 3)), RuntimeError,
     "einsum(): found '.' for operand 0 for which an ellipsis was already found"),
    (lambda: ctorch.einsum("..i->i", o(2, 3)), RuntimeError,
     "einsum(): found '.' for operand 0 that is not part of any ellipsis"),
    (lambda: ctorch.einsum("ij->...i.", o(4, 2)), RuntimeError,
     "einsum(): found '.' for output but an ellipsis (...) was already found"),
    (lambda: ctorch.einsum("...ij,...jk->...ik", o(5, 2, 3), o(4, 3, 4)), RuntimeError,
     "einsum(): dimension 0 covered by ellipsis in operand 1has size 4 which does not broadcast with previously "
     "seen ellipsis with size 5 for the respective dimension"),
    (lambda: ctorch.einsum("ij,jk->ik", o(2, 3, name="bool"), o(3, 4, name="bool")), NotImplementedError,
     "\"bmm\" not implemented for 'Bool'"),
    (lambda: ctorch.einsum("ij,jk->ik", o(2, 3), 3), TypeError, "expected Tensor as element 1 in argument 1, but got int"),
    (lambda: ctorch.einsum(3, o(2, 3)), TypeError, "einsum(): argument 'equation' (position 1) must be str, not int"),
    (lambda: ctorch.einsum("ij"), ValueError,
     "einsum(): must specify the equation string and at least one operand, or at least one operand and its "
     "subscripts list"),
    (lambda: ctorch.einsum(o(2, 3), [0, 52]), ValueError,
     "einsum(): subscript in subscript list is not within the valid range [0, 52)"),
]


@pytest.mark.parametrize("fn,exc,msg", ERRORS, ids=[f"{i}" for i in range(len(ERRORS))])
def test_errors(fn, exc, msg):
    with pytest.raises(exc) as info:
        fn()
    if isinstance(msg, re.Pattern):
        assert msg.fullmatch(str(info.value)), str(info.value)
    else:
        assert str(info.value) == msg


def test_imatmul_rebinds():
    """PyTorch has no in-place matmul: `a @= b` makes a new tensor and leaves the old one."""
    a = ctorch.tensor(np.ones((2, 3)))
    keep = a
    a @= ctorch.tensor(np.full((3, 2), 2.0))
    assert a is not keep and a.shape == (2, 2)
    np.testing.assert_array_equal(to_numpy(a), np.full((2, 2), 6.0))
    np.testing.assert_array_equal(to_numpy(keep), np.ones((2, 3)))


def test_result_layout():
    a = ctorch.tensor(np.ones((3, 4)))
    for r in (a @ a.t(), ctorch.mm(a, a.t()), ctorch.addmm(a.narrow(1, 0, 3), a, a.t()), a.t() @ a):
        assert r.is_contiguous()
    assert (ctorch.tensor(np.ones((2, 3, 4))) @ a.t()).stride() == (9, 3, 1)


# --- BLAS selection ------------------------------------------------------------------------------
def test_blas_hooks(tmp_path):
    name = ctorch._C._blas_name()
    assert isinstance(name, str) and name
    prev = ctorch._C._blas_use_builtin(True)
    try:
        assert ctorch._C._blas_name() == "built-in"
    finally:
        ctorch._C._blas_use_builtin(prev)
    assert ctorch._C._blas_name() == name
    bogus = tmp_path / "libnot_a_blas.so"
    bogus.write_bytes(b"not a library")
    with pytest.raises(OSError):
        ctorch._C._blas_load(str(bogus))
    assert ctorch._C._blas_name() == name  # a failed load keeps the current library


def _import_blas_name(env):
    code = "import ctorch; print(ctorch._C._blas_name())"
    root = os.path.dirname(os.path.dirname(os.path.abspath(ctorch.__file__)))  # the ctorch under test
    e = dict(os.environ, **env)
    e["PYTHONPATH"] = os.pathsep.join([os.path.abspath(root), e.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, check=True).stdout


def test_blas_env_disables():
    assert _import_blas_name({"CTORCH_BLAS": "0"}).strip() == "built-in"


def test_matmul_out_argument(device):
    torch = ctorch
    a = torch.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), device=device)
    b = torch.tensor(np.arange(6, dtype=np.float32).reshape(3, 2), device=device)
    out = torch.empty(2, 2, device=device)
    r = torch.matmul(a, b, out=out)
    assert r is out
    np.testing.assert_allclose(out.cpu().numpy(), a.cpu().numpy() @ b.cpu().numpy())
    small = torch.empty(0, device=device)
    torch.mm(a, b, out=small)
    assert small.shape == (2, 2)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        torch.matmul(a, b, out=torch.empty(2, 2, dtype=torch.float64, device=device))
    w = torch.ones(2, 3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"matmul\(\): functions with out=\.\.\. arguments don't support"):
        torch.matmul(w, b, out=torch.empty(2, 2, device=device))
