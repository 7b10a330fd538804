"""Tests for torch-namespace parity (csrc/namespace.c, python/ctorch/__init__.py): constants, torch.layout,
the real-dtype complex helpers and predicates, the *_copy ops, unsafe_split/chunk, split_with_sizes,
row_stack, as_strided_scatter, fill, range, module forms of methods, the old linalg spellings and the
global switches (anomaly mode's NaN check in the engine). NumPy is the oracle; PyTorch's messages,
dtypes and grad_fn names (checked against the reference build) are the spec."""
import math
import warnings

import numpy as np
import pytest

import ctorch
from conftest import assert_close, to_numpy
from ctorch.autograd import gradcheck


def test_constants():
    assert ctorch.pi == math.pi and ctorch.e == math.e
    assert ctorch.inf == math.inf and math.isnan(ctorch.nan) and ctorch.newaxis is None


def test_layout():
    assert repr(ctorch.strided) == "torch.strided" and str(ctorch.sparse_coo) == "torch.sparse_coo"
    assert isinstance(ctorch.strided, ctorch.layout) and ctorch.strided == ctorch.strided
    assert ctorch.strided != ctorch.sparse_coo
    assert ctorch.ones(2).layout == ctorch.strided
    assert ctorch.zeros(2, layout=ctorch.strided).layout is ctorch.strided
    with pytest.raises(RuntimeError, match="strided"):
        ctorch.zeros(2, layout=ctorch.sparse_coo)
    with pytest.raises(TypeError, match=r"zeros\(\): argument 'layout' must be torch.layout, not int"):
        ctorch.zeros(2, layout=1)


def test_predicates():
    x = ctorch.tensor([1.0, 2.0])
    assert not ctorch.is_complex(x) and not x.is_complex()
    assert not ctorch.is_conj(x) and not x.is_neg() and not ctorch.is_inference(x) and not x.is_inference()
    assert [ctorch.is_signed(ctorch.zeros(1, dtype=d)) for d in (ctorch.uint8, ctorch.bool, ctorch.int8, ctorch.float16)] \
        == [False, False, True, True]
    assert ctorch.is_same_size(x, ctorch.zeros(2, dtype=ctorch.int64)) and not x.is_same_size(ctorch.zeros(1, 2))
    assert ctorch.is_nonzero(ctorch.tensor([float("nan")])) and not ctorch.is_nonzero(ctorch.tensor(0))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        ctorch.is_nonzero(ctorch.tensor([]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        x.is_nonzero()
    assert not ctorch.is_inference_mode_enabled()
    with ctorch.inference_mode():
        assert ctorch.is_inference_mode_enabled()
        with ctorch.inference_mode(False):
            assert not ctorch.is_inference_mode_enabled()
    assert not ctorch.is_inference_mode_enabled()


def test_real_helpers():
    x = ctorch.tensor([[-1.5, 2.0]], requires_grad=True)
    for f in (ctorch.conj, ctorch.conj_physical, ctorch.resolve_conj, ctorch.resolve_neg, ctorch.real):
        assert f(x) is x
    assert x.conj() is x and x.real is x and ctorch.conj_physical_(x.detach()).data_ptr() == x.data_ptr()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.conj_physical_()
    with pytest.raises(TypeError, match="imag is not implemented for tensors with non-complex dtypes."):
        x.imag
    with pytest.raises(TypeError, match="imag is not implemented"):
        ctorch.imag(x)
    r = ctorch.isreal(ctorch.tensor([1, 2]))
    assert r.dtype == ctorch.bool and r.tolist() == [True, True]
    assert x.mH.shape == (2, 1) and x.H.shape == (2, 1) and ctorch.adjoint(x).shape == (2, 1)
    assert ctorch.ones(2, 3, 4).mH.shape == (2, 4, 3) and x.adjoint().grad_fn.name() == "TransposeBackward0"
    with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices \\(2-D tensors\\). Got 3-D tensor. "
                                           "For batches of matrices, consider using tensor.mH"):
        ctorch.ones(2, 3, 4).H
    with pytest.raises(RuntimeError, match=r"tensor.mH is only supported on matrices or batches of matrices. Got 1-D"):
        ctorch.ones(3).mH
    with pytest.raises(RuntimeError, match=r"tensor.adjoint\(\) is only supported on matrices"):
        ctorch.adjoint(ctorch.ones(3))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "uint8", "bool"])
def test_angle(device, dtype):
    a = np.array([-1.5, 0.0, 2.0, -0.0, -np.inf, np.nan]) if dtype.startswith("float") else np.array([-2, 0, 3])
    if dtype in ("uint8", "bool"):
        a = np.abs(a).astype(dtype)
    x = ctorch.tensor(a.astype(dtype), device=device)
    r = ctorch.angle(x)
    assert r.dtype == (x.dtype if x.is_floating_point() else ctorch.float32)
    expect = np.where(np.isnan(a.astype(float)), np.nan, np.where(a.astype(float) < 0, np.pi, 0.0))
    assert_close(r, expect)
    out = ctorch.empty(0, dtype=ctorch.float64, device=device)
    assert ctorch.angle(x, out=out) is out and out.shape == x.shape


def test_angle_grad(device):
    x = ctorch.tensor([-1.5, 0.5, 2.0], dtype=ctorch.float64, device=device, requires_grad=True)
    r = x.angle()
    assert r.grad_fn.name() == "AngleBackward0"
    r.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


COPIES = [
    ("view_copy", lambda f, x: f(x, (6, 4)), lambda a: a.reshape(6, 4)),
    ("permute_copy", lambda f, x: f(x, (2, 0, 1)), lambda a: a.transpose(2, 0, 1)),
    ("transpose_copy", lambda f, x: f(x, 0, 2), lambda a: a.swapaxes(0, 2)),
    ("t_copy", lambda f, x: f(x[0]), lambda a: a[0].T),
    ("expand_copy", lambda f, x: f(x[:, :1], (2, 5, 4)), lambda a: np.broadcast_to(a[:, :1], (2, 5, 4))),
    ("diagonal_copy", lambda f, x: f(x, 1, 1, 2), lambda a: np.diagonal(a, 1, 1, 2)),
    ("select_copy", lambda f, x: f(x, 1, 2), lambda a: a[:, 2]),
    ("slice_copy", lambda f, x: f(x, 2, 1, 4, 2), lambda a: a[:, :, 1:4:2]),
    ("squeeze_copy", lambda f, x: f(x[:, :1]), lambda a: a[:, 0]),
    ("unsqueeze_copy", lambda f, x: f(x, 1), lambda a: a[:, None]),
    ("unfold_copy", lambda f, x: f(x, 2, 2, 1), lambda a: np.stack([a[:, :, i:i + 2] for i in range(3)], 2)),
    ("narrow_copy", lambda f, x: f(x, 2, 1, 2), lambda a: a[:, :, 1:3]),
    ("as_strided_copy", lambda f, x: f(x, (2, 2), (1, 2)), lambda a: np.lib.stride_tricks.as_strided(
        a, (2, 2), (a.itemsize, 2 * a.itemsize))),
    ("alias_copy", lambda f, x: f(x), lambda a: a),
]


@pytest.mark.parametrize("name,call,ref", COPIES, ids=[c[0] for c in COPIES])
def test_copy_ops(device, name, call, ref):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = ctorch.tensor(a, device=device)
    r = call(getattr(ctorch, name), x)
    assert r.is_contiguous() and r.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert_close(r, ref(a))


def test_copy_ops_out_and_grad(device):
    x = ctorch.randn(2, 3, dtype=ctorch.float64, device=device, requires_grad=True)
    assert gradcheck(lambda t: ctorch.transpose_copy(t, 0, 1), (x,))
    assert gradcheck(lambda t: ctorch.select_copy(t, 1, 2), (x,))
    assert gradcheck(lambda t: ctorch.split_copy(t, 2, 1)[1], (x,))
    d = ctorch.detach_copy(x)  # PyTorch gives it a NotImplemented node too
    assert d.grad_fn.name().endswith("NotImplemented") and d.tolist() == x.tolist()
    out = ctorch.empty(0, device=device)
    y = ctorch.ones(2, 3, device=device)
    assert ctorch.view_copy(y, (3, 2), out=out) is out and out.shape == (3, 2)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        ctorch.view_copy(y, (3, 2), out=ctorch.empty(6, dtype=ctorch.float64, device=device))


def test_split_family(device):
    a = np.arange(15.0).reshape(3, 5)
    x = ctorch.tensor(a, device=device)
    for parts, ref in ((ctorch.split_with_sizes(x, [2, 3], 1), np.split(a, [2], 1)),
                       (x.unsafe_split(2), np.split(a, [2])),
                       (ctorch.unsafe_chunk(x, 2, 1), np.split(a, [3], 1)),
                       (ctorch.unsafe_split_with_sizes(x, [1, 4], 1), np.split(a, [1], 1)),
                       (ctorch.split_with_sizes_copy(x, [1, 2]), np.split(a, [1])),
                       (ctorch.unbind_copy(x, 1), [a[:, i] for i in range(5)])):
        assert isinstance(parts, tuple) and len(parts) == len(ref)
        for p, e in zip(parts, ref):
            assert_close(p, e)
    assert ctorch.split_with_sizes(x, [2, 3], 1)[1].data_ptr() == x.data_ptr() + 2 * 8  # views
    assert ctorch.unsafe_split(x, 2)[0].data_ptr() != x.data_ptr()  # copies
    r = ctorch.row_stack([ctorch.tensor([1.0, 2.0], device=device), x[:, :2]])
    assert_close(r, np.vstack([[1.0, 2.0], a[:, :2]]))


def test_as_strided_scatter(device):
    a = np.arange(6.0).reshape(2, 3)
    x = ctorch.tensor(a, device=device)
    r = ctorch.as_strided_scatter(x, ctorch.full((2, 2), -1.0, device=device), (2, 2), (1, 2))
    e = a.copy().reshape(-1)
    e[[0, 2, 1, 3]] = -1
    assert_close(r, e.reshape(2, 3))
    assert_close(x, a)
    with pytest.raises(RuntimeError, match=r"expected src to have a size equal to the slice of self. src size = \[3\], "
                                           r"slice size = \[2, 2\]$"):
        x.as_strided_scatter(ctorch.ones(3, device=device), (2, 2), (1, 2))


def test_fill_and_range(device):
    x = ctorch.ones(2, 3, device=device).t()
    r = ctorch.fill(x, 2.5)
    assert r.stride() == x.stride() and to_numpy(r).tolist() == [[2.5, 2.5]] * 3
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
        ctorch.fill(x, ctorch.ones(2))
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        r = ctorch.range(0, 1, 0.25, device=device)
    assert r.dtype == ctorch.float32 and r.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ctorch.range(3, 0, -1, dtype=ctorch.int64).tolist() == [3, 2, 1, 0]
        with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
            ctorch.range(3, 0)
        with pytest.raises(RuntimeError, match="step must be nonzero"):
            ctorch.range(0, 3, 0)


def test_module_forms_of_methods():
    x = ctorch.tensor([[1.0, 2.0], [3.0, 5.0]])
    assert ctorch.fill_(x.clone(), 2).tolist() == [[2, 2], [2, 2]] and ctorch.zero_(x.clone()).sum().item() == 0
    assert ctorch.gcd_(ctorch.tensor([4, 6]), ctorch.tensor([6, 4])).tolist() == [2, 2]
    assert ctorch.lcm_(ctorch.tensor([4, 6]), ctorch.tensor([6, 4])).tolist() == [12, 12]
    np.testing.assert_allclose(to_numpy(ctorch.xlogy_(x.clone(), 2.0)), to_numpy(x) * np.log(2), rtol=1e-6)
    assert ctorch.addmv_(ctorch.zeros(2), x, ctorch.ones(2)).tolist() == [3.0, 8.0]
    assert ctorch.index_put_(x.clone(), (ctorch.tensor([0]),), ctorch.tensor(9.0)).tolist() == [[9, 9], [3, 5]]
    assert ctorch.index_put(x, (ctorch.tensor([1]),), ctorch.tensor(0.0)).tolist() == [[1, 2], [0, 0]]
    y = x.clone().requires_grad_(False)
    assert ctorch.detach_(y) is y
    assert ctorch.dropout(x, 0.5, False) is x and ctorch.dropout(x, 1.0, True).sum().item() == 0
    assert ctorch.alpha_dropout(x, 0.5, False) is x and ctorch.feature_alpha_dropout_(x, 0.5, False) is x
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        ctorch.dropout(x, 1.5, True)
    np.testing.assert_allclose(to_numpy(ctorch.rrelu_(ctorch.tensor([-1.0, 2.0]))), [-(1 / 8 + 1 / 3) / 2, 2.0], rtol=1e-6)
    bce = ctorch.binary_cross_entropy_with_logits(x, x.sigmoid(), None, None, 0)
    p = 1 / (1 + np.exp(-to_numpy(x)))
    np.testing.assert_allclose(to_numpy(bce), -(p * np.log(p) + (1 - p) * np.log(1 - p)), rtol=1e-5)


def test_old_linalg(device):
    a = np.array([[2.0, 1.0], [0.5, 3.0]])
    A = ctorch.tensor(a, device=device, requires_grad=True)
    assert_close(ctorch.matrix_power(A, 3), np.linalg.matrix_power(a, 3))
    assert_close(A.matrix_power(-1), np.linalg.inv(a))
    assert_close(ctorch.pinverse(A), np.linalg.pinv(a))
    b = np.array([[1.0], [2.0]])
    with pytest.warns(UserWarning, match="torch.triangular_solve is deprecated"):
        r = ctorch.triangular_solve(ctorch.tensor(b, device=device), A, upper=False)
    assert type(r).__name__ == "triangular_solve" and r.cloned_coefficient.tolist() == a.tolist()
    assert_close(r.solution, np.linalg.solve(np.tril(a), b))
    with pytest.warns(UserWarning):
        r = ctorch.tensor(b, device=device).triangular_solve(A, transpose=True, unitriangular=True)
    u = np.triu(a)
    np.fill_diagonal(u, 1.0)
    assert_close(r[0], np.linalg.solve(u.T, b))
    LU, piv = ctorch.linalg.lu_factor(A.detach())
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
        assert_close(ctorch.lu_solve(ctorch.tensor(b, device=device), LU, piv), np.linalg.solve(a, b))
    with pytest.warns(UserWarning, match="frobenius_norm is deprecated"):
        assert_close(ctorch.frobenius_norm(A, (0,)), np.linalg.norm(a, axis=0))
    with pytest.warns(UserWarning, match="nuclear_norm is deprecated"):
        assert_close(ctorch.nuclear_norm(A, keepdim=True), np.linalg.norm(a, "nuc").reshape(1, 1))
    assert_close(ctorch.norm_except_dim(A, 2, 0), np.linalg.norm(a, axis=1, keepdims=True))
    assert_close(ctorch.norm_except_dim(A, 2, 1), np.linalg.norm(a, axis=0, keepdims=True))
    assert_close(ctorch.norm_except_dim(A, 2, -1), np.linalg.norm(a))
    assert gradcheck(lambda t: ctorch.matrix_power(t, 2), (A,))


def test_switches():
    assert not ctorch.is_warn_always_enabled()
    ctorch.set_warn_always(True)
    assert ctorch.is_warn_always_enabled()
    ctorch.set_warn_always(False)
    assert ctorch.get_num_interop_threads() >= 1
    assert ctorch.set_flush_denormal(False) is True
    if ctorch.set_flush_denormal(True):
        assert (ctorch.tensor([1e-310], dtype=ctorch.float64) * 1.0).item() == 0.0
        ctorch.set_flush_denormal(False)
    assert (ctorch.tensor([1e-310], dtype=ctorch.float64) * 1.0).item() == 1e-310
    assert ctorch.has_lapack and isinstance(ctorch.has_mkl, bool) and ctorch.compiled_with_cxx11_abi()


def test_anomaly_mode(device):
    assert not ctorch.is_anomaly_enabled() and ctorch.is_anomaly_check_nan_enabled()
    x = ctorch.zeros(2, device=device, requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = ctorch.autograd.detect_anomaly()
    with mode:
        assert ctorch.is_anomaly_enabled()
        with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values in its 0th output."):
            (x.sqrt() * 0).sum().backward()
    assert not ctorch.is_anomaly_enabled()
    (x.sqrt() * 0).sum().backward()  # off: NaN gradients pass
    assert math.isnan(x.grad[0].item())
    with ctorch.autograd.set_detect_anomaly(True, check_nan=False):
        assert ctorch.is_anomaly_enabled() and not ctorch.is_anomaly_check_nan_enabled()
        (x.sqrt() * 0).sum().backward()
    assert not ctorch.is_anomaly_enabled() and ctorch.is_anomaly_check_nan_enabled()


@pytest.mark.parametrize("name,args", [("inverse", ()), ("svd", ()), ("hardshrink", ()), ("matrix_power", (2,)),
                                       ("narrow_copy", (0, 0, 1)), ("cholesky_inverse", ()), ("amax", (0,)),
                                       ("prelu", (ctorch.tensor([0.25]),))])
def test_methods_written_as_functions_take_no_out(name, args):
    """Tensor methods that call their function with self first refuse out=, as PyTorch's methods do,
    and otherwise give the function's result."""
    x = ctorch.tensor([[2.0, 0.0], [0.0, 4.0]])
    with pytest.raises(TypeError, match=f"^{name}\\(\\) got an unexpected keyword argument 'out'$"):
        getattr(x, name)(*args, out=ctorch.empty(0))
    fn = getattr(ctorch, name, None) or getattr(ctorch.nn.functional, name)
    method, function = getattr(x, name)(*args), fn(x, *args)
    pairs = zip(method, function) if isinstance(method, tuple) else [(method, function)]
    assert all(m.tolist() == f.tolist() for m, f in pairs)


def test_submodules_loaded_on_import():
    """`import torch` alone makes these submodules attributes (torch.autograd imports its graph module,
    torch.nn its utils, ...): a fresh interpreter that imports only ctorch reaches them as attributes."""
    import os
    import subprocess
    import sys
    names = ["autograd.graph", "autograd.functional", "autograd.profiler", "utils.data", "utils.checkpoint",
             "utils.hooks", "nn.utils.rnn", "nn.utils.parametrize", "nn.utils.parametrizations",
             "nn.functional", "nn.init", "distributions", "distributions.constraints", "linalg", "special",
             "optim.lr_scheduler", "func", "amp", "testing"]
    script = ("import types, ctorch\n"
              f"for n in {names!r}:\n"
              "    obj = ctorch\n"
              "    for part in n.split('.'):\n"
              "        obj = vars(obj).get(part)\n"
              "    assert isinstance(obj, types.ModuleType), n\n")
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(ctorch.__file__)))
    env = dict(os.environ, PYTHONPATH=pkg_parent + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
