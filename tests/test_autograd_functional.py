"""ctorch.autograd.functional: vjp / jvp / jacobian / hessian / hvp / vhp against hand-derived Jacobians and
Hessians and central finite differences (float64), PyTorch's output nesting, v checks and strict errors."""
import numpy as np
import pytest

import ctorch
from ctorch.autograd import functional as F

F64 = ctorch.float64
X = np.array([1.0, 2.0, 3.0])
B = np.array([[0.5, -1.0], [2.0, 0.25]])


def t(a, device="cpu", **kw):
    return ctorch.tensor(np.asarray(a, dtype=np.float64), dtype=F64, device=device, **kw)


def npy(x):
    return x.detach().cpu().numpy()


def raises(exc, text, fn, *args, **kwargs):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert str(info.value) == text


def cube(a):
    return a ** 3


def two_outputs(a, b):  # (a.sum() * b, prod(a^2))
    return a.sum() * b, (a ** 2).prod()


def numeric_jacobian(fn, x, eps=1e-6):
    """Central differences of a NumPy-valued function of one array."""
    cols = []
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        cols.append((fn(x + d) - fn(x - d)).ravel() / (2 * eps))
    return np.stack(cols, -1).reshape(np.shape(fn(x)) + x.shape)


def test_vjp_jvp_single(device):
    x, v = t(X, device), t([1.0, -2.0, 0.5], device)
    out, vjp = F.vjp(cube, x, v)
    np.testing.assert_allclose(npy(out), X ** 3)
    np.testing.assert_allclose(npy(vjp), 3 * X ** 2 * npy(v))
    out, jvp = F.jvp(cube, x, v)
    np.testing.assert_allclose(npy(jvp), 3 * X ** 2 * npy(v))
    assert not out.requires_grad and not jvp.requires_grad
    # v may be omitted for one element
    _, g = F.vjp(lambda a: (a ** 2).sum(), x)
    np.testing.assert_allclose(npy(g), 2 * X)
    _, g = F.jvp(lambda a: a * 3, t([2.0], device))
    np.testing.assert_allclose(npy(g), [3.0])


def test_vjp_jvp_tuples():
    a, b = t(X), t(B)
    va, vb = t(np.ones((2, 2))), t(2.0)
    (o1, o2), (ga, gb) = F.vjp(two_outputs, (a, b), (va, vb))
    np.testing.assert_allclose(npy(o1), X.sum() * B)
    np.testing.assert_allclose(npy(ga), B.sum() + 2.0 * 2 * np.prod(X ** 2) / X)
    np.testing.assert_allclose(npy(gb), X.sum() * np.ones((2, 2)))
    ua, ub = t([1.0, 0.0, 2.0]), t(np.ones((2, 2)))
    _, (j1, j2) = F.jvp(two_outputs, (a, b), (ua, ub))
    np.testing.assert_allclose(npy(j1), 3.0 * B + X.sum())
    np.testing.assert_allclose(npy(j2), (2 * np.prod(X ** 2) / X) @ npy(ua))
    # an output independent of an input: zeros outside strict mode
    _, (g0, g1) = F.vjp(lambda p, q: p * 2, (a, t(X)), t(np.ones(3)))
    np.testing.assert_allclose(npy(g1), np.zeros(3))


def test_jacobian_against_hand_and_finite_differences(device):
    a, b = t(X, device), t(B, device)
    j = F.jacobian(cube, a)
    np.testing.assert_allclose(npy(j), np.diag(3 * X ** 2))
    (j11, j12), (j21, j22) = F.jacobian(two_outputs, (a, b))
    assert tuple(j11.shape) == (2, 2, 3) and tuple(j12.shape) == (2, 2, 2, 2)
    assert tuple(j21.shape) == (3,) and tuple(j22.shape) == (2, 2)
    np.testing.assert_allclose(npy(j11), np.repeat(B[..., None], 3, -1))
    np.testing.assert_allclose(npy(j12), X.sum() * np.eye(4).reshape(2, 2, 2, 2))
    np.testing.assert_allclose(npy(j21), 2 * np.prod(X ** 2) / X)
    np.testing.assert_allclose(npy(j22), np.zeros((2, 2)))
    # one output, tuple inputs -> tuple over inputs; tuple output, one input -> tuple over outputs
    ja, jb = F.jacobian(lambda p, q: p * q.sum(), (a, b))
    np.testing.assert_allclose(npy(ja), B.sum() * np.eye(3))
    np.testing.assert_allclose(npy(jb), np.repeat(X[:, None, None], 4, 1).reshape(3, 2, 2))
    (k,) = F.jacobian(lambda p: (p.sin(),), a)
    np.testing.assert_allclose(npy(k), np.diag(np.cos(X)))
    w = np.array([[0.3, -1.2, 0.5], [2.0, 0.1, -0.7]])

    def f(x):
        return ctorch.tanh(t(w, device) @ x) * x.sum()

    num = numeric_jacobian(lambda x: np.tanh(w @ x) * x.sum(), X)
    np.testing.assert_allclose(npy(F.jacobian(f, a)), num, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(npy(F.jacobian(f, a, vectorize=True)), num, rtol=1e-6, atol=1e-8)
    assert F.jacobian(lambda p: p * 2, t(3.0)).item() == 2.0


def test_jacobian_create_graph():
    x = t(X, requires_grad=True)
    j = F.jacobian(cube, x, create_graph=True)
    assert j.requires_grad
    (g,) = ctorch.autograd.grad(j.sum(), x)
    np.testing.assert_allclose(npy(g), 6 * X)  # d/dx sum(diag(3x^2))
    assert not F.jacobian(cube, x).requires_grad


def test_hessian_hvp_vhp(device):
    a = t(X, device)
    np.testing.assert_allclose(npy(F.hessian(lambda p: (p ** 3).sum(), a)), np.diag(6 * X))
    bv = np.array([0.5, -2.0])

    def g(p, q):  # sum(p^2) * q0 * q1
        return (p ** 2).sum() * q.prod()

    (haa, hab), (hba, hbb) = F.hessian(g, (a, t(bv, device)))
    np.testing.assert_allclose(npy(haa), 2 * bv.prod() * np.eye(3))
    np.testing.assert_allclose(npy(hab), np.outer(2 * X, bv[::-1]))
    np.testing.assert_allclose(npy(hba), np.outer(bv[::-1], 2 * X))
    np.testing.assert_allclose(npy(hbb), (X ** 2).sum() * np.array([[0.0, 1.0], [1.0, 0.0]]))
    full = np.block([[npy(haa), npy(hab)], [npy(hba), npy(hbb)]])
    u = np.array([1.0, -1.0, 2.0, 0.5, 3.0])
    (ua, ub) = t(u[:3], device), t(u[3:], device)
    out, (ha, hb) = F.hvp(g, (a, t(bv, device)), (ua, ub))
    np.testing.assert_allclose(out.item(), (X ** 2).sum() * bv.prod())
    np.testing.assert_allclose(np.concatenate([npy(ha), npy(hb)]), full @ u)
    _, (va, vb) = F.vhp(g, (a, t(bv, device)), (ua, ub))
    np.testing.assert_allclose(np.concatenate([npy(va), npy(vb)]), u @ full)
    # a non-polynomial Hessian against finite differences of the analytic gradient
    grad = lambda x: (np.cos(x) + np.sin(x).sum()) * np.exp(x.sum())  # noqa: E731
    h = F.hessian(lambda p: (p.sin() * p.sum().exp()).sum(), a)
    np.testing.assert_allclose(npy(h), numeric_jacobian(grad, X), rtol=1e-6)


def test_argument_errors():
    x, y = t(X), t(B)
    raises(RuntimeError, "The vector v can only be None if the user-provided function returns a single Tensor "
           "with a single element.", F.vjp, cube, x)
    raises(RuntimeError, "v is a tuple of invalid length: should be 2 but got 1.",
           F.vjp, two_outputs, (x, y), (t(np.ones((2, 2))),))
    raises(RuntimeError, "v has invalid size: should be torch.Size([3]) but got torch.Size([2]).",
           F.vjp, cube, x, t([1.0, 1.0]))
    raises(RuntimeError, "Entry 0 in v has invalid size: should be torch.Size([2, 2]) but got torch.Size([2, 3]).",
           F.vjp, two_outputs, (x, y), (t(np.ones((2, 3))), t(1.0)))
    raises(RuntimeError, "The given v should contain a single Tensor.", F.vjp, cube, x, (x, x))
    raises(TypeError, "The inputs given to vjp must be either a Tensor or a tuple of Tensors but the given inputs "
           "has type <class 'list'>.", F.vjp, cube, [x])
    raises(TypeError, "The inputs given to vjp must be either a Tensor or a tuple of Tensors but the value at "
           "index 1 has type <class 'int'>.", F.vjp, cube, (x, 3))
    raises(TypeError, "The outputs of the user-provided function given to vjp must be either a Tensor or a tuple "
           "of Tensors but the given outputs of the user-provided function has type <class 'int'>.",
           F.vjp, lambda a: 3, x)
    raises(RuntimeError, "The vector v can only be None if the input to the user-provided function is a single "
           "Tensor with a single element.", F.jvp, cube, x)
    raises(RuntimeError, "The Tensor returned by the function given to hessian should contain a single element",
           F.hessian, lambda a: a ** 2, x)
    raises(RuntimeError, "The function given to hessian should return a single Tensor",
           F.hessian, lambda a: (a.sum(),), x)
    raises(RuntimeError, "The Tensor returned by the function given to vhp should contain a single element",
           F.vhp, lambda a: a ** 2, x, x)
    raises(RuntimeError, "The function given to hvp should return a single Tensor", F.hvp, lambda a: (a.sum(),), x, x)


def test_strict_mode_errors():
    x, y = t(X), t(B)
    raises(RuntimeError, "The output of the user-provided function is independent of input 1. This is not "
           "allowed in strict mode.", F.vjp, lambda a, b: a * 2, (x, t(X)), t(np.ones(3)), strict=True)
    raises(RuntimeError, "Output 0 of the user-provided function does not require gradients. The outputs must be "
           "computed in a differentiable manner from the input when running in strict mode.",
           F.vjp, lambda a: ctorch.ones(3), x, t(np.ones(3)), strict=True)
    raises(RuntimeError, "The output of the user-provided function is independent of input 1. This is not "
           "allowed in strict mode.", F.jvp, lambda a, b: a ** 2, (x, t(X)), (x, x), strict=True)
    raises(RuntimeError, "Output 0 of the user-provided function is independent of input 1. This is not allowed "
           "in strict mode.", F.jacobian, lambda a, b: a * 2, (x, y), strict=True)
    raises(RuntimeError, "The jacobian of the user-provided function is independent of input 0. This is not "
           "allowed in strict mode when create_graph=True.", F.jacobian, lambda a, b: a * 2, (x, y), strict=True,
           create_graph=True)
    linear = ("While computing the hessian, found that the jacobian of the user-provided function with respect to "
              "input 0 is independent of the input. This is not allowed in strict mode. You should ensure that your "
              "function is twice differentiable and that the jacobian depends on the inputs (this would be violated "
              "by a linear function for example).")
    raises(RuntimeError, linear, F.hessian, lambda a: a.sum() * 2, x, strict=True)
    raises(RuntimeError, linear, F.hvp, lambda a: a.sum() * 2, x, x, strict=True)
    raises(RuntimeError, linear, F.vhp, lambda a: a.sum() * 2, x, x, strict=True)
    F.hessian(lambda a: (a ** 2).sum(), x, strict=True)  # quadratic: allowed


def test_jacobian_strategy_errors():
    x = t(X)
    raises(AssertionError, 'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
           'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, prefer to use '
           '"reverse-mode".', F.jacobian, cube, x, strategy="x")
    raises(NotImplementedError, "Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
           "implemented for `vectorize=True`.", F.jacobian, cube, x, strategy="forward-mode")
    raises(NotImplementedError, 'torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-mode"`'
           ' are not supported together (yet). Please either set `create_graph=False` or `strategy="reverse-mode"`.',
           F.jacobian, cube, x, strategy="forward-mode", create_graph=True)
    raises(RuntimeError, 'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.',
           F.jacobian, cube, x, strategy="forward-mode", strict=True)
    with pytest.raises(NotImplementedError, match="no forward-mode AD"):
        F.jacobian(cube, x, strategy="forward-mode", vectorize=True)
    raises(RuntimeError, "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
           "together. Please either set `strict=False` or `vectorize=False`.", F.jacobian, cube, x, strict=True,
           vectorize=True)
    raises(AssertionError, 'Expected strategy to be either "forward-mode" or "reverse-mode".',
           F.hessian, cube, x, outer_jacobian_strategy="z")
