"""ctorch.func (torch.func): vmap (a loop over the mapped dimension), grad / grad_and_value / vjp /
jvp / jacrev / jacfwd / hessian over autograd, functional_call and stack_module_state, against
hand-derived derivatives, NumPy and finite differences in float64, with PyTorch's messages."""
import re

import numpy as np
import pytest

import ctorch
from ctorch.func import (functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp, stack_module_state,
                         vjp, vmap)
from ctorch.utils._pytree import tree_flatten, treespec_pprint

F64 = ctorch.float64


def t64(a, device="cpu"):
    return ctorch.tensor(np.asarray(a, dtype=np.float64), device=device)


def npy(t):
    return t.detach().cpu().numpy()


@pytest.fixture
def x():
    return t64(np.arange(6).reshape(3, 2) / 7 + 0.1)


def fd_jacobian(fn, a, eps=1e-6):
    """Central differences of a NumPy function: shape out.shape + a.shape."""
    a = np.asarray(a, dtype=np.float64)
    cols = []
    for k in range(a.size):
        e = np.zeros(a.size)
        e[k] = eps
        cols.append((np.asarray(fn(a + e.reshape(a.shape))) - np.asarray(fn(a - e.reshape(a.shape)))) / (2 * eps))
    out_shape = np.shape(fn(a))
    return np.stack(cols, -1).reshape(out_shape + a.shape)


# --- pytrees ---------------------------------------------------------------------------------------

def test_pytree_specs_print_as_pytorch():
    spec = tree_flatten(((1, 2), {"x": (3, 4)}))[1]
    assert repr(spec) == ("TreeSpec(tuple, None, [TreeSpec(tuple, None, [*,\n    *]),\n"
                          "  TreeSpec(dict, ['x'], [TreeSpec(tuple, None, [*,\n      *])])])")
    assert treespec_pprint(tree_flatten([1, (2,), {"a": 3}])[1]) == "[*, (*,), {'a': *}]"
    leaves, spec = tree_flatten({"a": [1, 2], "b": None})
    assert leaves == [1, 2, None] and spec.unflatten(["p", "q", "r"]) == {"a": ["p", "q"], "b": "r"}


# --- vmap ------------------------------------------------------------------------------------------

def test_vmap_in_dims_out_dims_and_pytrees(x):
    a = np.arange(6.0).reshape(3, 2) / 7 + 0.1
    # batched dot with the second input mapped along dim 1
    b = np.arange(6.0).reshape(2, 3)
    out = vmap(ctorch.dot, in_dims=(0, 1))(x, t64(b))
    np.testing.assert_allclose(npy(out), np.einsum("ij,ji->i", a, b), rtol=1e-12)
    # negative in_dim, out_dims=-1 and 1, an unmapped (None) input, kwargs passed through
    np.testing.assert_array_equal(npy(vmap(lambda r: r, in_dims=-1)(x)), a.T)
    np.testing.assert_array_equal(npy(vmap(lambda r: r * 2, out_dims=1)(x)), (a * 2).T)
    out = vmap(lambda r, s, k=1: r * s * k, in_dims=(0, None))(x, t64([1.0, -1.0]), k=3)
    np.testing.assert_allclose(npy(out), a * [3.0, -3.0], rtol=1e-12)
    # dict / list / tuple inputs and outputs, in_dims nested in the inputs' structure
    out = vmap(lambda d: {"s": d["a"].sum() * d["b"][0], "l": [d["a"] * 2, d["b"]]},
               in_dims=({"a": 0, "b": None},))({"a": x, "b": t64([2.0])})
    np.testing.assert_allclose(npy(out["s"]), a.sum(1) * 2, rtol=1e-12)
    np.testing.assert_allclose(npy(out["l"][0]), a * 2, rtol=1e-12)
    assert out["l"][1].shape == (3, 1)  # an output that does not depend on the sample is still stacked
    first, second = vmap(lambda pair: (pair[0] + pair[1], pair[0].sum()), out_dims=(1, 0))((x, x))
    np.testing.assert_allclose(npy(first), (2 * a).T, rtol=1e-12)
    np.testing.assert_allclose(npy(second), a.sum(1), rtol=1e-12)
    # nested: an outer product from two vmaps over different inputs
    outer = vmap(vmap(ctorch.mul, in_dims=(None, 0)), in_dims=(0, None))(t64([1.0, 2.0, 3.0]), t64([1.0, 10.0]))
    np.testing.assert_array_equal(npy(outer), np.outer([1.0, 2.0, 3.0], [1.0, 10.0]))
    assert ctorch.vmap is vmap


def test_vmap_out_dims_none_and_empty_mapped_dim(x):
    out, count = vmap(lambda r: (r.sum(), 7), out_dims=(0, None))(x)
    assert count == 7 and out.shape == (3,)
    const = vmap(lambda r: ctorch.ones(2), out_dims=None)(x)
    np.testing.assert_array_equal(npy(const), np.ones(2))
    with pytest.raises(ValueError, match=re.escape("vmap(<lambda>, ...): `<lambda>` can not return a BatchedTensor "
                                                   "when out_dim is None")):
        vmap(lambda r: r, out_dims=None)(x)
    empty = vmap(lambda r: r * 2)(ctorch.zeros(0, 2))
    assert empty.shape == (0, 2) and empty.dtype == ctorch.float32
    assert vmap(lambda r: r.sum(), in_dims=1)(ctorch.ones(2, 0)).shape == (0,)
    assert vmap(lambda r: r[None], out_dims=1)(ctorch.ones(0, 4)).shape == (1, 0, 4)


def _name_error(in_dims):
    return f"vmap(<lambda>, in_dims={in_dims}, ...)(<inputs>): "


VMAP_ERRORS = [
    ("in_dims_structure", lambda x: vmap(lambda a, b: a + b, in_dims=(0,))(x, x), ValueError,
     _name_error("(0,)") + "in_dims is not compatible with the structure of `inputs`. in_dims has structure "
     "TreeSpec(tuple, None, [*]) but inputs has structure TreeSpec(tuple, None, [*,\n  *])."),
    ("in_dims_list", lambda x: vmap(lambda a: a, in_dims=[0])(x), ValueError,
     _name_error("[0]") + "expected `in_dims` to be int or a (potentially nested) tuple matching the structure "
     "of inputs, got: <class 'list'>."),
    ("sizes_differ", lambda x: vmap(lambda a, b: a)(x, ctorch.ones(4)), ValueError,
     "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes [3, 4] for the "
     "mapped dimension"),
    ("in_dim_range", lambda x: vmap(lambda a: a, in_dims=2)(x), ValueError,
     _name_error("2") + "Got in_dim=2 for some input, but that input is a Tensor of dimensionality 2 so expected "
     "in_dim to satisfy -2 <= in_dim < 2."),
    ("in_dim_float", lambda x: vmap(lambda a: a, in_dims=(1.0,))(x), ValueError,
     _name_error("(1.0,)") + "Got in_dim=1.0 for an input but in_dim must be either an integer dimension or None."),
    ("non_tensor_mapped", lambda x: vmap(lambda a: a, in_dims=(0,))(1.0), ValueError,
     _name_error("(0,)") + "Got in_dim=0 for an input but the input is of type <class 'float'>. We cannot vmap "
     "over non-Tensor arguments, please use None as the respective in_dim"),
    ("nothing_mapped", lambda x: vmap(lambda a: a, in_dims=(None,))(x), ValueError,
     "vmap: Expected at least one Tensor to vmap over"),
    ("no_inputs", lambda x: vmap(lambda: x)(), ValueError,
     "vmap(<lambda>)(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying to vmap over a "
     "function with no inputs. The latter is unsupported."),
    ("returns_float", lambda x: vmap(lambda a: 1.0)(x), ValueError,
     "vmap(<lambda>, ...): `<lambda>` must only return Tensors, got type <class 'float'>. Did you mean to set "
     "out_dims= to None for output?"),
    ("out_dims_structure", lambda x: vmap(lambda a: (a, a), out_dims=(0, 0, 0))(x), ValueError,
     "vmap(<lambda>, ..., out_dims=(0, 0, 0))(<inputs>): out_dims is not compatible with the structure of "
     "`outputs`. out_dims has structure TreeSpec(tuple, None, [*,\n  *,\n  *]) but outputs has structure "
     "TreeSpec(tuple, None, [*,\n  *])."),
    ("out_dims_type", lambda x: vmap(lambda a: a, out_dims="a")(x), ValueError,
     "vmap(<lambda>, ..., out_dims=a): `out_dims` must be an int, None or a python collection of ints "
     "representing where in the outputs the vmapped dimension should appear."),
    ("out_dim_range", lambda x: vmap(lambda a: a, out_dims=2)(x), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("randomness_arg", lambda x: vmap(lambda a: a, randomness="foo"), RuntimeError,
     "Only allowed values for randomness are 'error', 'different', or 'same'. Got foo"),
    ("chunk_size", lambda x: vmap(lambda a: a, chunk_size=0), ValueError,
     "vmap: chunk_size should be None or greater than 0. (got 0)"),
]


@pytest.mark.parametrize("call, exc, message", [p[1:] for p in VMAP_ERRORS], ids=[p[0] for p in VMAP_ERRORS])
def test_vmap_errors_as_pytorch(x, call, exc, message):
    with pytest.raises(exc) as info:
        call(x)
    assert str(info.value) == message


def test_vmap_randomness(x):
    gen = ctorch.default_generator
    ctorch.manual_seed(5)
    state = gen.get_state()
    with pytest.raises(RuntimeError, match="vmap: called random operation while in randomness error mode. Please "
                       "either use the 'same' or 'different' randomness flags on vmap or perform the randomness "
                       "operation out of vmap"):
        vmap(lambda r: r + ctorch.rand(2))(x)
    assert ctorch.equal(gen.get_state(), state)  # the refused draw left the generator as it was
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda r: ctorch.nn.functional.dropout(r, 0.5))(x)
    same = vmap(lambda r: ctorch.rand(4), randomness="same")(x)
    assert all(ctorch.equal(same[0], same[i]) for i in (1, 2))
    ctorch.manual_seed(5)
    once = ctorch.rand(4)
    assert ctorch.equal(same[0], once) and ctorch.equal(gen.get_state(), ctorch.default_generator.get_state())
    ctorch.manual_seed(5)
    different = vmap(lambda r: ctorch.rand(4), randomness="different")(x)
    assert not ctorch.equal(different[0], different[1])
    ctorch.manual_seed(5)
    np.testing.assert_array_equal(npy(different), npy(ctorch.rand(3, 4)))  # one draw after the other
    masks = vmap(lambda r: ctorch.nn.functional.dropout(r, 0.5), randomness="same")(ctorch.ones(3, 8))
    assert ctorch.equal(masks[0], masks[2])


# --- grad ------------------------------------------------------------------------------------------

def test_grad_and_value_hand_derived(x):
    a = npy(x)
    g = grad(lambda r: (r ** 3).sum())(x)
    np.testing.assert_allclose(npy(g), 3 * a ** 2, rtol=1e-12)
    assert not g.requires_grad
    g, (value, aux) = grad_and_value(lambda r: ((r ** 2).sum(), r.mean()), has_aux=True)(x)
    np.testing.assert_allclose(npy(g), 2 * a, rtol=1e-12)
    assert float(value) == pytest.approx((a ** 2).sum()) and float(aux) == pytest.approx(a.mean())
    assert not value.requires_grad and not aux.requires_grad
    g, aux = grad(lambda r: ((r ** 2).sum(), {"m": r.max()}), has_aux=True)(x)
    assert float(aux["m"]) == a.max()
    # argnums: a tuple, a negative index, an unused input (zeros), a dict input
    ga, gb = grad(lambda p, q: (p * q.sin()).sum(), argnums=(0, 1))(x, x)
    np.testing.assert_allclose(npy(ga), np.sin(a), rtol=1e-12)
    np.testing.assert_allclose(npy(gb), a * np.cos(a), rtol=1e-12)
    np.testing.assert_allclose(npy(grad(lambda p, q: (p * q).sum(), argnums=-1)(x, 2 * x)), a, rtol=1e-12)
    np.testing.assert_array_equal(npy(grad(lambda p, q: p.sum(), argnums=1)(x, t64([1.0, 2.0]))), [0.0, 0.0])
    gd = grad(lambda d: (d["w"] * d["b"]).sum())({"w": x, "b": x + 1})
    np.testing.assert_allclose(npy(gd["w"]), a + 1, rtol=1e-12)
    np.testing.assert_allclose(npy(gd["b"]), a, rtol=1e-12)
    # third derivative of x^4 at 0.5 by nesting: 24 x
    s = t64(0.5)
    assert float(grad(grad(grad(lambda r: r ** 4)))(s)) == pytest.approx(12.0)
    with pytest.raises(ValueError, match=re.escape("Thing passed to transform API must be Tensor, got <class 'float'>")):
        grad(lambda r: r)(1.0)
    # no perturbation confusion: d/da [a * d/db (a b)] = 2a
    assert float(grad(lambda p: p * grad(lambda q: p * q)(p))(t64(3.0))) == pytest.approx(6.0)


GRAD_ERRORS = [
    ("not_scalar", lambda x: grad(lambda r: r)(x),
     "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with 2 dims. Maybe you "
     "wanted to use the vjp or jacrev APIs instead?"),
    ("not_tensor", lambda x: grad(lambda r: 1.0)(x),
     "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got <class 'float'>"),
    ("aux_not_pair", lambda x: grad(lambda r: r.sum(), has_aux=True)(x),
     "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is True"),
    ("argnum_range", lambda x: grad(lambda r: r.sum(), argnums=2)(x), "Got argnum=2, but only 1 positional inputs"),
    ("argnums_repeated", lambda x: grad(lambda r: r.sum(), argnums=(0, 0))(x),
     "argnums elements must be unique, got (0, 0)"),
    ("argnums_empty", lambda x: grad(lambda r: r.sum(), argnums=())(x), "argnums must be non-empty"),
    ("argnums_type", lambda x: grad(lambda r: r.sum(), argnums=1.0)(x),
     "argnums must be int or Tuple[int, ...], got: <class 'float'>"),
    ("int_input", lambda x: grad(lambda r: r.sum())(ctorch.ones(2, dtype=ctorch.int64)),
     "only Tensors of floating point dtype can require gradients"),
]


def test_transforms_compose_with_autograd(x):
    # a closure over a tensor requiring grad: the gradient stays differentiable with respect to it
    w = t64([0.5, -1.5]).requires_grad_()
    g = grad(lambda r: (w * r ** 2).sum())(x[0])
    assert g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(npy(w.grad), 2 * npy(x[0]), rtol=1e-12)  # g = 2 w x
    # an input requiring grad: d/dx of grad(sum x^3) = 6x
    xr = x[0].clone().requires_grad_()
    (second,) = ctorch.autograd.grad(grad(lambda r: (r ** 3).sum())(xr).sum(), xr)
    np.testing.assert_allclose(npy(second), 6 * npy(x[0]), rtol=1e-12)
    with ctorch.no_grad():
        assert not grad(lambda r: (r ** 3).sum())(xr).requires_grad


def test_per_sample_gradients_match_a_loop(x):
    model = ctorch.nn.Sequential(ctorch.nn.Linear(2, 3), ctorch.nn.Tanh(), ctorch.nn.Linear(3, 1)).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    targets = t64([1.0, 2.0, 3.0])

    def loss(p, xi, yi):
        return ((functional_call(model, p, (xi.unsqueeze(0),)) - yi) ** 2).sum()

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, targets)
    for i in range(3):
        out = ((model(x[i:i + 1]) - targets[i]) ** 2).sum()
        expected = ctorch.autograd.grad(out, list(model.parameters()))
        for (name, _), e in zip(model.named_parameters(), expected):
            assert per_sample[name].shape == (3,) + tuple(e.shape)
            np.testing.assert_allclose(npy(per_sample[name][i]), npy(e), rtol=1e-12, atol=1e-15)


# --- vjp / jvp / Jacobians -------------------------------------------------------------------------

def test_vjp_jvp_against_jacobian(x):
    a = npy(x[0])
    jac = np.diag(np.cos(a)) * 2  # of 2 sin(a)
    out, vjp_fn = vjp(lambda r: r.sin() * 2, x[0])
    np.testing.assert_allclose(npy(out), 2 * np.sin(a), rtol=1e-12)
    v = t64([1.0, -3.0])
    (vj,) = vjp_fn(v)
    np.testing.assert_allclose(npy(vj), npy(v) @ jac, rtol=1e-12)
    np.testing.assert_allclose(npy(vjp_fn(v * 2)[0]), 2 * npy(v) @ jac, rtol=1e-12)  # callable again
    assert not vjp_fn(v, create_graph=True)[0].requires_grad  # nothing outside to differentiate it for
    vjp_fn(v, retain_graph=False)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        vjp_fn(v)
    out, jv = jvp(lambda r: r.sin() * 2, (x[0],), (v,))
    np.testing.assert_allclose(npy(jv), jac @ npy(v), rtol=1e-12)
    # two inputs, two outputs: jvp sums the inputs' contributions, vjp splits them
    f = lambda p, q: (p * q, (p ** 2).sum())  # noqa: E731
    (o1, o2), (t1, t2) = jvp(f, (x[0], x[1]), (v, 2 * v))
    b = npy(x[1])
    np.testing.assert_allclose(npy(t1), npy(v) * b + a * 2 * npy(v), rtol=1e-12)
    assert float(t2) == pytest.approx(float((2 * a * npy(v)).sum()))
    _, vjp_fn = vjp(f, x[0], x[1])
    gp, gq = vjp_fn((v, t64(3.0)))
    np.testing.assert_allclose(npy(gp), npy(v) * b + 3 * 2 * a, rtol=1e-12)
    np.testing.assert_allclose(npy(gq), npy(v) * a, rtol=1e-12)
    # an output independent of the inputs: zero tangent, or PyTorch's error with strict
    _, zero = jvp(lambda r: ctorch.ones(2), (x[0],), (v,))
    np.testing.assert_array_equal(npy(zero), [0.0, 0.0])
    with pytest.raises(RuntimeError, match=re.escape("jvp(f, primals, tangents, strict=True): The output of f is "
                                                     "independent of the inputs. This is not allowed with strict=True.")):
        jvp(lambda r: ctorch.ones(2), (x[0],), (v,), strict=True)


VJP_JVP_ERRORS = [
    ("cotangent_structure", lambda x: vjp(lambda r: r, x)[1]((x,)),
     "Expected pytree structure of cotangents to be the same as pytree structure of outputs to the function. "
     "cotangents: (*,), primal output: *"),
    ("vjp_int_output", lambda x: vjp(lambda r: r.long(), x),
     "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor with dtype torch.int64"),
    ("vjp_non_tensor", lambda x: vjp(lambda r: 1.0, x),
     "vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported type <class 'float'>"),
    ("jvp_primals_list", lambda x: jvp(lambda r: r, [x], [x]),
     "jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."),
    ("jvp_structure", lambda x: jvp(lambda r: r, (x,), (x, x)),
     "jvp(f, primals, tangents): Expected primals and tangents to have the same python structure. For example, if "
     "primals is a tuple of 3 tensors, tangents also must be. Got primals with structure TreeSpec(tuple, None, [*]) "
     "and tangents with structure TreeSpec(tuple, None, [*,\n  *])"),
    ("jvp_tangent_size", lambda x: jvp(lambda r: r, (x[0],), (ctorch.ones(4),)),
     "Trying to set a forward gradient that has a different size than that of the original Tensor, this is not "
     "supported. Tensor is of size [2] while the given forward gradient is of size [4]."),
    ("jvp_no_primals", lambda x: jvp(lambda: x, (), ()),
     "jvp(f, primals, tangents): Expected primals to contain at least one Tensor."),
    ("jacfwd_random", lambda x: jacfwd(lambda r: r * ctorch.rand(2, dtype=F64))(x[0]),
     "vmap: called random operation while in randomness error mode. Please either use the 'same' or 'different' "
     "randomness flags on vmap or perform the randomness operation out of vmap"),
]


TRANSFORM_ERRORS = GRAD_ERRORS + VJP_JVP_ERRORS


@pytest.mark.parametrize("call, message", [p[1:] for p in TRANSFORM_ERRORS], ids=[p[0] for p in TRANSFORM_ERRORS])
def test_transform_errors_as_pytorch(x, call, message):
    with pytest.raises(RuntimeError) as info:
        call(x)
    assert str(info.value) == message


def _np_f(a):
    return np.array([a[0] * np.sin(a[1]), np.exp(a[0]) * a[2], (a ** 2).sum()])


def _ct_f(r):
    return ctorch.stack([r[0] * r[1].sin(), r[0].exp() * r[2], (r ** 2).sum()])


def test_jacobians_and_hessian_against_finite_differences():
    a = np.array([0.3, -0.7, 1.2])
    expected = fd_jacobian(_np_f, a)
    for transform in (jacrev, jacfwd):
        jac = transform(_ct_f)(t64(a))
        assert jac.shape == (3, 3) and jac.dtype == F64
        np.testing.assert_allclose(npy(jac), expected, rtol=1e-8, atol=1e-9)
    scalar = lambda r: (r[0] ** 2 * r[1].sin() + r[2] ** 3).sum()  # noqa: E731
    h_expected = np.array([[2 * np.sin(a[1]), 2 * a[0] * np.cos(a[1]), 0.0],
                           [2 * a[0] * np.cos(a[1]), -a[0] ** 2 * np.sin(a[1]), 0.0],
                           [0.0, 0.0, 6 * a[2]]])
    h = hessian(scalar)(t64(a))
    np.testing.assert_allclose(npy(h), h_expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(npy(jacrev(jacrev(scalar))(t64(a))), h_expected, rtol=1e-12, atol=1e-15)
    # per-sample Hessians and Jacobians through vmap
    batch = t64(np.stack([a, a * 2]))
    hs = vmap(hessian(scalar))(batch)
    np.testing.assert_allclose(npy(hs[0]), h_expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(npy(vmap(jacrev(_ct_f))(batch)[1]), fd_jacobian(_np_f, a * 2), rtol=1e-8, atol=1e-9)


def test_jacobian_structures(x):
    a, b = npy(x[0]), npy(x[1])
    (jp, jq), (sp, sq) = jacrev(lambda p, q: (p * q, p.sum()), argnums=(0, 1))(x[0], x[1])
    np.testing.assert_allclose(npy(jp), np.diag(b), rtol=1e-12)
    np.testing.assert_allclose(npy(jq), np.diag(a), rtol=1e-12)
    np.testing.assert_array_equal(npy(sp), [1.0, 1.0])
    np.testing.assert_array_equal(npy(sq), [0.0, 0.0])
    jd = jacfwd(lambda d: d["u"] * d["v"])({"u": x[0], "v": x[1]})
    np.testing.assert_allclose(npy(jd["v"]), np.diag(a), rtol=1e-12)
    jac, aux = jacrev(lambda r: (r.exp(), r.sum()), has_aux=True)(x)
    assert jac.shape == (3, 2, 3, 2) and float(aux) == pytest.approx(npy(x).sum())
    np.testing.assert_allclose(npy(jac).reshape(6, 6), np.diag(np.exp(npy(x)).ravel()), rtol=1e-12)
    assert jacrev(lambda r: r[:0])(x[0]).shape == (0, 2)
    jint = jacfwd(lambda r: r.long())(x[0])
    assert jint.dtype == ctorch.int64 and not jint.any()
    with pytest.raises(ValueError, match="jacrev: `chunk_size` should be greater than 0."):
        jacrev(lambda r: r, chunk_size=0)


# --- functional_call / stack_module_state ----------------------------------------------------------

def test_functional_call_swaps_and_restores():
    lin = ctorch.nn.Linear(2, 1).double()
    weight, bias = lin.weight, lin.bias
    inp = t64([[1.0, 2.0]])
    out = functional_call(lin, {"weight": t64([[3.0, -1.0]]), "bias": t64([0.5])}, inp)
    assert float(out) == 1.5
    assert lin.weight is weight and lin.bias is bias and isinstance(lin.weight, ctorch.nn.Parameter)
    # a sequence of dicts, kwargs, and a failing forward: the parameters still come back
    out = functional_call(lin, ({"weight": t64([[1.0, 1.0]])}, {"bias": t64([0.0])}), kwargs={"input": inp})
    assert float(out) == 3.0
    with pytest.raises(RuntimeError):
        functional_call(lin, {"weight": t64([[1.0, 1.0, 1.0]])}, (inp,))
    assert lin.weight is weight
    # BatchNorm in training mode writes its new running statistics into the given buffer
    bn = ctorch.nn.BatchNorm1d(2)
    given = {"running_mean": ctorch.zeros(2)}
    functional_call(bn, given, (ctorch.ones(4, 2),))
    np.testing.assert_allclose(npy(given["running_mean"]), [0.1, 0.1], rtol=1e-6)
    np.testing.assert_array_equal(npy(bn.running_mean), [0.0, 0.0])


def test_functional_call_tied_weights_and_errors():
    class Tied(ctorch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = ctorch.nn.Linear(2, 2, bias=False)
            self.b = ctorch.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, z):
            return self.b(self.a(z))

    tied = Tied()
    eye2 = ctorch.eye(2) * 2
    np.testing.assert_array_equal(npy(functional_call(tied, {"a.weight": eye2}, (ctorch.ones(1, 2),))), [[4.0, 4.0]])
    untied = functional_call(tied, {"a.weight": eye2}, (ctorch.ones(1, 2),), tie_weights=False)
    np.testing.assert_allclose(npy(untied), npy(tied.a(ctorch.ones(1, 2) * 2)), rtol=1e-6)
    with pytest.raises(ValueError, match=re.escape("functional_call got multiple values for keys ['a.weight', "
                                                   "'b.weight'], which are tied. Consider using tie_weights=False")):
        functional_call(tied, {"a.weight": eye2, "b.weight": ctorch.eye(2)}, (ctorch.ones(1, 2),))
    lin = ctorch.nn.Linear(2, 1)
    inp = ctorch.ones(1, 2)
    cases = [
        (lambda: functional_call(lin, {"weight": ctorch.ones(1, 2), "foo": inp}, inp, strict=True), RuntimeError,
         "Error(s) in reparametrizing for Linear:\n\tUnexpected key(s): 'foo'.\n\tMissing key(s): 'bias'."),
        (lambda: functional_call(lin, [{"weight": inp}, {"weight": inp}], inp), ValueError,
         "['weight'] appeared in multiple dictionaries; behavior of functional call is ambiguous"),
        (lambda: functional_call(lin, 3, inp), ValueError,
         "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got <class 'int'>"),
        (lambda: functional_call(lin, {"nope.weight": inp}, inp), AttributeError, "Linear has no attribute `nope`"),
        (lambda: functional_call(lin, {"weight": 3}, inp), TypeError, "3 is not an instance of torch.Tensor"),
    ]
    for call, exc, message in cases:
        with pytest.raises(exc) as info:
            call()
        assert info.value.args[0] == message
    assert isinstance(lin.weight, ctorch.nn.Parameter) and not hasattr(lin, "foo")


def test_stack_module_state_ensemble(x):
    models = [ctorch.nn.Linear(2, 1).double() for _ in range(3)]
    params, buffers = stack_module_state(models)
    assert params["weight"].shape == (3, 1, 2) and params["weight"].is_leaf and params["weight"].requires_grad
    assert buffers == {}
    out = vmap(lambda p, b, inp: functional_call(models[0], (p, b), (inp,)), in_dims=(0, 0, None))(params, buffers, x)
    for i, m in enumerate(models):
        np.testing.assert_allclose(npy(out[i]), npy(m(x)), rtol=1e-12)
    with pytest.raises(RuntimeError, match="stack_module_state: Expected at least one model, got 0."):
        stack_module_state([])
    with pytest.raises(RuntimeError, match="stack_module_state: Expected all models to have the same training/eval mode."):
        stack_module_state([models[0], ctorch.nn.Linear(2, 1).eval()])
    with pytest.raises(RuntimeError, match="stack_module_state: Expected all models to be of the same class."):
        stack_module_state([models[0], ctorch.nn.Tanh()])


# --- devices ---------------------------------------------------------------------------------------

def test_vmap_grad_jacrev_on_device(device):
    a = np.array([[0.3, -0.7], [1.2, 0.4]])
    xd = t64(a, device)
    g = vmap(grad(lambda r: (r.sin() * r).sum()))(xd)
    assert g.device.type == device
    np.testing.assert_allclose(npy(g), np.cos(a) * a + np.sin(a), rtol=1e-12)
    jac = jacrev(lambda r: r.exp() * r[0])(xd[0])
    expected = np.diag(np.exp(a[0]) * a[0][0])
    expected[:, 0] += np.exp(a[0])
    np.testing.assert_allclose(npy(jac), expected, rtol=1e-12)
    same = vmap(lambda r: r + ctorch.rand(3, device=device), randomness="same")(ctorch.zeros(2, 3, device=device))
    assert ctorch.equal(same[0], same[1])
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda r: r + ctorch.rand(3, device=device))(ctorch.zeros(2, 3, device=device))
