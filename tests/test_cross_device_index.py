"""Cross-device tests of the index family (and the factories it leans on): every op runs on the
CPU and on CUDA with the same inputs and must give the same result, bit for bit — gathers,
puts, masks, compactions and rearrangements move bits, and the accumulating puts
(index_put_(accumulate=True), index_add_, scatter_add_, scatter_ reduce) are deterministic on
the GPU and combine duplicates in the CPU's order. Errors (out-of-range indices above all) must
be the same exception with the same message on both devices, and leave the GPU usable.
Skipped where CUDA is not available."""
import numpy as np
import pytest

import ctorch
from conftest import to_numpy

pytestmark = pytest.mark.skipif(not ctorch.cuda.is_available(), reason="CUDA not available")

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]
LAYOUTS = ["contiguous", "transposed", "strided", "expanded"]


# ---------------------------------------------------------------------------------------------
# helpers
def data(shape, dtype, rng):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype in ("float32", "float64", "float16", "bfloat16"):
        v = rng.standard_normal(shape) * 10
        return v.astype(np.float32 if dtype == "bfloat16" else dtype)
    lo, hi = (0, 200) if dtype == "uint8" else (-100, 100)
    return rng.integers(lo, hi, size=shape).astype(dtype)


def both(arr, dtype=None, layout="contiguous"):
    """The same tensor on the CPU and on cuda:0, in the given layout."""
    kw = {} if dtype is None else {"dtype": getattr(ctorch, dtype)}
    out = []
    for device in ("cpu", "cuda"):
        if layout == "contiguous" or np.ndim(arr) < 2:
            t = ctorch.tensor(arr, device=device, **kw)
        elif layout == "transposed":
            t = ctorch.tensor(np.ascontiguousarray(np.swapaxes(arr, 0, -1)), device=device, **kw).transpose(0, -1)
        elif layout == "strided":
            t = ctorch.tensor(np.repeat(arr, 2, axis=0), device=device, **kw)[::2]
        else:  # expanded: stride 0 along dim 0
            t = ctorch.tensor(arr[:1], device=device, **kw).expand(*arr.shape)
        out.append(t)
    return out


def bits(t):
    """A tensor's values as bytes (bfloat16 widened exactly), its shape and dtype."""
    a = to_numpy(t)
    return a.shape, str(t.dtype), a.tobytes()


def same(c, g):
    """c (CPU) and g (CUDA) hold the same values, bit for bit."""
    assert g.device.type == "cuda", g.device
    assert c.device.type == "cpu"
    assert bits(c) == bits(g), f"\ncpu:  {to_numpy(c)}\ncuda: {to_numpy(g)}"


def run_both(fn, *pairs):
    """fn on the CPU halves and on the CUDA halves of (cpu, cuda) argument pairs."""
    return fn(*[p[0] for p in pairs]), fn(*[p[1] for p in pairs])


def same_error(fn, *pairs):
    """fn raises the same exception type and message on both devices (and CUDA stays usable)."""
    errors = []
    for k in range(2):
        with pytest.raises(Exception) as info:
            fn(*[p[k] for p in pairs])
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]
    ctorch.cuda.synchronize()
    assert ctorch.zeros(3, device="cuda").cpu().numpy().tolist() == [0, 0, 0]
    return errors[0]


def idx(values, dtype="int64"):
    return both(np.asarray(values), dtype)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


# ---------------------------------------------------------------------------------------------
# getitem / setitem
# (none of them repeats an element, so that puts through them are defined)
GET_INDICES = [
    "int", "neg_int", "slice", "list", "tensor64", "tensor32", "two_tensors", "broadcast_tensors",
    "tensor_slice_tensor", "three_tensors", "four_tensors", "ellipsis_tensor", "none_tensor", "mask",
    "partial_mask", "mask_and_tensor", "zero_dim_tensor", "cpu_index_on_cuda", "bool_scalar", "empty_list",
]


def get_index(kind, rng):
    """(cpu index, cuda index) for a (4, 5, 6, 3) tensor."""
    t64 = lambda v: idx(v)  # noqa: E731
    if kind == "int":
        return (2, 2)
    if kind == "neg_int":
        return ((-1, slice(None), -2), (-1, slice(None), -2))
    if kind == "slice":
        return ((slice(1, None, 2), slice(0, 5, 3)),) * 2
    if kind == "list":  # no index repeats in this list: puts are then defined
        return ([3, 0, -2],) * 2
    if kind == "tensor64":
        return t64([[0, 3], [-3, 2]])
    if kind == "tensor32":
        return idx([1, -4, 3], "int32")
    if kind == "two_tensors":
        a, b = t64([0, 3, -2]), t64([4, 0, 1])
        return (a[0], b[0]), (a[1], b[1])
    if kind == "broadcast_tensors":
        a, b = t64([[0], [3]]), t64([4, 0, 1])
        return (a[0], slice(None), b[0]), (a[1], slice(None), b[1])
    if kind == "tensor_slice_tensor":
        a, b = t64([1, 2]), t64([0, 2])
        return (a[0], slice(1, 4), b[0]), (a[1], slice(1, 4), b[1])
    if kind == "three_tensors":
        a, b, c = t64([0, 3]), t64([4, 1]), t64([[5], [0]])
        return (a[0], b[0], c[0]), (a[1], b[1], c[1])
    if kind == "four_tensors":  # more than the kernel's operands: offsets are folded first
        a, b, c, d = t64([0, 3, 1]), t64([4, 1, 2]), t64([5, 0, 3]), t64([2, 1, 0])
        return (a[0], b[0], c[0], d[0]), (a[1], b[1], c[1], d[1])
    if kind == "ellipsis_tensor":
        a = t64([2, 0, 1])
        return (Ellipsis, a[0]), (Ellipsis, a[1])
    if kind == "none_tensor":
        a = t64([1, 3])
        return (None, slice(None), a[0]), (None, slice(None), a[1])
    if kind == "mask":
        m = rng.random((4, 5, 6, 3)) > 0.5
        return both(m)
    if kind == "partial_mask":
        m = rng.random((4, 5)) > 0.3
        c, g = both(m)
        return (c, Ellipsis), (g, Ellipsis)
    if kind == "mask_and_tensor":
        m = rng.random(5) > 0.4
        mc, mg = both(m)
        n = int(m.sum())
        a = t64(np.arange(n, dtype=np.int64) % 3)
        return (slice(None), mc, a[0]), (slice(None), mg, a[1])
    if kind == "zero_dim_tensor":
        a = idx(np.array(3))
        return a[0], a[1]
    if kind == "cpu_index_on_cuda":  # CPU index tensors are moved to the indexed tensor's device
        a = ctorch.tensor([3, 1, 0])
        return a, a
    if kind == "bool_scalar":
        return ((True, 1), (True, 1))
    if kind == "empty_list":
        return ([],) * 2
    raise ValueError(kind)


@pytest.mark.parametrize("kind", GET_INDICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "bfloat16", "int8"])
def test_getitem(dtype, layout, kind, rng):
    c, g = both(data((4, 5, 6, 3), dtype, rng), dtype, layout)
    ic, ig = get_index(kind, rng)
    same(c[ic], g[ig])


@pytest.mark.parametrize("kind", GET_INDICES)
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "float16"])
def test_setitem(dtype, kind, rng):
    c, g = both(data((4, 5, 6, 3), dtype, rng), dtype)
    ic, ig = get_index(kind, rng)
    shape = tuple(c[ic].shape)
    # a scalar, a 0-d tensor, and a tensor of the indexed shape (broadcast along dim 0 if any)
    c2, g2 = c.clone(), g.clone()
    c2[ic] = 1
    g2[ig] = 1
    same(c2, g2)
    v = data(shape[1:] if len(shape) > 0 else (), dtype, rng)
    vc, vg = both(v, dtype)
    c[ic] = vc
    g[ig] = vg
    same(c, g)


def test_setitem_values_on_the_cpu(rng):
    """A 0-d CPU value may be written into a CUDA tensor (as PyTorch allows)."""
    c, g = both(data((5, 4), "float32", rng), "float32")
    m = both(rng.random((5, 4)) > 0.5)
    c[m[0]] = ctorch.tensor(2.5)
    g[m[1]] = ctorch.tensor(2.5)
    same(c, g)


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_put_accumulate_is_deterministic_and_matches_cpu(dtype, rng):
    """Duplicates combine in the CPU's order with the CPU's rounding: same bits, every run."""
    base = data((50, 7), dtype, rng)
    rows = rng.integers(-50, 50, size=3000)  # many duplicates
    cols = rng.integers(0, 7, size=3000)
    vals = data(3000, dtype, rng)
    results = []
    for device in ("cpu", "cuda", "cuda"):
        t = ctorch.tensor(base, dtype=getattr(ctorch, dtype), device=device)
        t.index_put_((ctorch.tensor(rows, device=device), ctorch.tensor(cols, device=device)),
                     ctorch.tensor(vals, dtype=getattr(ctorch, dtype), device=device), accumulate=True)
        results.append(t)
    same(results[0], results[1])
    same(results[0], results[2].cpu().to("cuda"))
    # a row index only: whole rows accumulate (values broadcast along the row)
    rc, rg = both(base, dtype)
    vc, vg = both(data((3000, 7), dtype, rng), dtype)
    ic, ig = idx(rows)
    rc.index_put_((ic,), vc, accumulate=True)
    rg.index_put_((ig,), vg, accumulate=True)
    same(rc, rg)


def test_index_put_non_accumulate(rng):
    c, g = both(data((6, 5), "float32", rng), "float32")
    ic, ig = idx([4, 0, -1])
    vc, vg = both(data((3, 5), "float32", rng), "float32")
    same(ctorch.index_put(c, (ic,), vc), ctorch.index_put(g, (ig,), vg))


# ---------------------------------------------------------------------------------------------
# ops along a dim
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_dim_ops(dtype, layout, rng):
    c, g = both(data((6, 7), dtype, rng), dtype, layout)
    for dim in (0, 1, -1):
        n = c.shape[dim]
        for it in ("int64", "int32"):
            ic, ig = idx(rng.integers(0, n, size=(4, 5) if dim == 0 else (5, 4)), it)
            same(ctorch.gather(c, dim, ic), ctorch.gather(g, dim, ig))
            ic, ig = idx(rng.integers(0, n, size=9), it)
            same(ctorch.index_select(c, dim, ic), ctorch.index_select(g, dim, ig))
        # scatter without duplicates along dim, with the scalar and tensor forms
        u = np.stack([rng.permutation(n)[:4] for _ in range(7 if dim == 0 else 6)], 1 if dim == 0 else 0)
        uc, ug = idx(u)
        sc, sg = both(data(u.shape, dtype, rng), dtype)
        same(ctorch.scatter(c, dim, uc, sc), ctorch.scatter(g, dim, ug, sg))
        same(c.scatter(dim, uc, 1), g.scatter(dim, ug, 1))
        # accumulating forms (duplicates): deterministic, the CPU's bits
        d = rng.integers(0, n, size=(5, 5))
        dc, dg = idx(d)
        vc, vg = both(data((5, 5), dtype, rng), dtype)
        same(ctorch.scatter_add(c, dim, dc, vc), ctorch.scatter_add(g, dim, dg, vg))
        if dtype != "bool":
            same(ctorch.scatter(c, dim, dc, vc, reduce="multiply"), ctorch.scatter(g, dim, dg, vg, reduce="multiply"))
            same(ctorch.scatter(c, dim, dc, vc, reduce="add"), ctorch.scatter(g, dim, dg, vg, reduce="add"))
        # index_add / index_copy / index_fill
        k = rng.integers(0, n, size=8)
        kc, kg = idx(k)
        src_shape = (8, 7) if dim == 0 else (6, 8)
        sc, sg = both(data(src_shape, dtype, rng), dtype)
        if dtype != "bool":
            same(ctorch.index_add(c, dim, kc, sc, alpha=3), ctorch.index_add(g, dim, kg, sg, alpha=3))
        same(ctorch.index_add(c, dim, kc, sc), ctorch.index_add(g, dim, kg, sg))
        perm = rng.permutation(n)[: min(n, 5)]
        pc, pg = idx(perm)
        sc, sg = both(data((len(perm), 7) if dim == 0 else (6, len(perm)), dtype, rng), dtype)
        same(ctorch.index_copy(c, dim, pc, sc), ctorch.index_copy(g, dim, pg, sg))
        fc, fg = idx(perm - n)
        fill = True if dtype == "bool" else 5
        same(c.index_fill(dim, fc, fill), g.index_fill(dim, fg, fill))
    tc, tg = idx(rng.integers(-42, 42, size=(3, 4)))
    same(ctorch.take(c, tc), ctorch.take(g, tg))


def test_index_add_float_alpha_and_half(rng):
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        c, g = both(data((9, 4), dtype, rng), dtype)
        kc, kg = idx(rng.integers(0, 9, size=500))
        sc, sg = both(data((500, 4), dtype, rng), dtype)
        a = c.index_add_(0, kc, sc, alpha=-0.7)
        b = g.index_add_(0, kg, sg, alpha=-0.7)
        assert a is c and b is g
        same(c, g)


# ---------------------------------------------------------------------------------------------
# masks and compactions
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_masks_and_nonzero(dtype, layout, rng):
    arr = data((7, 6, 5), dtype, rng)
    if dtype in ("float32", "float64", "float16"):
        arr.flat[::7] = 0
        arr.flat[3] = np.nan
        arr.flat[5] = -0.0
    elif dtype != "bool":
        arr.flat[::3] = 0
    c, g = both(arr, dtype, layout)
    mask = rng.random((7, 6, 5)) > 0.6
    for m_layout in ("contiguous", "transposed", "expanded"):
        mc, mg = both(mask, layout=m_layout)
        same(ctorch.masked_select(c, mc), ctorch.masked_select(g, mg))
        same(c.masked_fill(mc, 3), g.masked_fill(mg, 3))
    # broadcast masks
    mc, mg = both(rng.random((6, 1)) > 0.5)
    same(ctorch.masked_select(c, mc), ctorch.masked_select(g, mg))
    same(c.masked_fill(mc, 1), g.masked_fill(mg, 1))
    same(ctorch.nonzero(c), ctorch.nonzero(g))
    same(ctorch.argwhere(c), ctorch.argwhere(g))
    for a, b in zip(ctorch.nonzero(c, as_tuple=True), ctorch.nonzero(g, as_tuple=True)):
        same(a, b)
    for a, b in zip(ctorch.where(c), ctorch.where(g)):
        same(a, b)


@pytest.mark.parametrize("n", [0, 1, 4095, 4096, 4097, 100003, (1 << 20) + 7])
def test_compaction_sizes(n, rng):
    """Several tiles of 4096 and their boundaries; the output order is row-major."""
    arr = rng.random(n) > 0.5
    c, g = both(arr)
    same(ctorch.nonzero(c), ctorch.nonzero(g))
    vc, vg = both(np.arange(n, dtype=np.int64))
    same(vc[c], vg[g])
    if n > 6:
        c2, g2 = both(arr[: n - n % 6].reshape(-1, 2, 3))
        same(ctorch.nonzero(c2), ctorch.nonzero(g2))
        w = np.arange((n - n % 6) * 4, dtype=np.float32).reshape(-1, 2, 3, 4)
        wc, wg = both(w)
        same(wc[c2], wg[g2])  # rows of 4 elements: the offsets-then-gather path


def test_mask_edge_cases(rng):
    c, g = both(data((3, 4), "float32", rng), "float32")
    for m in (np.zeros((3, 4), bool), np.ones((3, 4), bool), np.array(True), np.array(False)):
        mc, mg = both(m)
        same(ctorch.masked_select(c, mc), ctorch.masked_select(g, mg))
    z = both(np.array(5.0))
    same(ctorch.nonzero(z[0]), ctorch.nonzero(z[1]))
    e = both(np.zeros((0, 3), np.float32))
    same(ctorch.nonzero(e[0]), ctorch.nonzero(e[1]))
    u8 = both(np.array([1, 0, 2], np.uint8))
    vc, vg = both(np.array([1.0, 2.0, 3.0], np.float32))
    with pytest.warns(UserWarning):
        a = vc[u8[0]]
    with pytest.warns(UserWarning):
        b = vg[u8[1]]
    same(a, b)


# ---------------------------------------------------------------------------------------------
# joining and rearranging
@pytest.mark.parametrize("dtype", DTYPES)
def test_cat_stack(dtype, rng):
    parts = [data((2, 3), dtype, rng), data((4, 3), dtype, rng), data((1, 3), dtype, rng)]
    pairs = [both(p, dtype, layout) for p, layout in zip(parts, ("contiguous", "strided", "transposed"))]
    same(ctorch.cat([p[0] for p in pairs]), ctorch.cat([p[1] for p in pairs]))
    same(ctorch.cat([p[0] for p in pairs], dim=0), ctorch.cat([p[1] for p in pairs], dim=-2))
    sq = [both(data((2, 3), dtype, rng), dtype) for _ in range(3)]
    for dim in (0, 1, 2, -1):
        same(ctorch.stack([p[0] for p in sq], dim), ctorch.stack([p[1] for p in sq], dim))
    for fn in (ctorch.hstack, ctorch.vstack, ctorch.dstack):
        same(fn([p[0] for p in sq]), fn([p[1] for p in sq]))
    # promotion across dtypes and the legacy (0,) inputs
    a, b = both(data((2, 2), "int32", rng), "int32"), both(data((3, 2), dtype, rng), dtype)
    e = both(np.zeros(0, np.float32))
    same(ctorch.cat([a[0], e[0], b[0]]), ctorch.cat([a[1], e[1], b[1]]))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rearrange(dtype, layout, rng):
    c, g = both(data((4, 5, 3), dtype, rng), dtype, layout)
    for dims in ((0,), (1, 2), (0, 1, 2), (-1,)):
        same(ctorch.flip(c, dims), ctorch.flip(g, dims))
    same(ctorch.fliplr(c), ctorch.fliplr(g))
    same(ctorch.flipud(c), ctorch.flipud(g))
    for shifts, dims in ((2, 0), ((1, -2), (0, 2)), (7, None), (-3, 1)):
        same(ctorch.roll(c, shifts, dims), ctorch.roll(g, shifts, dims))
    for reps in ((1, 1, 1), (2, 1, 3), (2, 2, 1, 2)):
        same(c.repeat(*reps), g.repeat(*reps))
    same(ctorch.tile(c, (2,)), ctorch.tile(g, (2,)))
    for k in (-5, -1, 0, 1, 2, 7):
        same(ctorch.tril(c, k), ctorch.tril(g, k))
        same(ctorch.triu(c, k), ctorch.triu(g, k))
        same(ctorch.diagonal(c, k, 0, 2).contiguous(), ctorch.diagonal(g, k, 0, 2).contiguous())
    m = both(data((5, 5), dtype, rng), dtype)
    for k in (-2, 0, 3):
        same(ctorch.diag(m[0], k), ctorch.diag(m[1], k))
        same(ctorch.diag(m[0][0], k), ctorch.diag(m[1][0], k))
    ic, ig = c.contiguous().clone(), g.contiguous().clone()  # in place: no overlapping elements
    ic.tril_(1)
    ig.tril_(1)
    same(ic, ig)
    ic.triu_(-1)
    ig.triu_(-1)
    same(ic, ig)


def test_triangle_batched_and_large(rng):
    c, g = both(data((3, 2, 70, 90), "float64", rng), "float64", "transposed")
    for k in (-100, -3, 0, 5, 100):
        same(ctorch.triu(c, k), ctorch.triu(g, k))
        same(ctorch.tril(c, k), ctorch.tril(g, k))


def test_one_hot(rng):
    for n in (-1, 7, 12):
        v = rng.integers(0, 7, size=(3, 4))
        c, g = idx(v)
        same(ctorch.one_hot(c, n), ctorch.one_hot(g, n))
    e = idx(np.zeros(0, np.int64))
    same(ctorch.one_hot(e[0], 3), ctorch.one_hot(e[1], 3))


# ---------------------------------------------------------------------------------------------
# factories on the device
def test_factories_on_cuda():
    for fn, args, kw in [
        (ctorch.arange, (10,), {}), (ctorch.arange, (1, 2.5, 0.25), {}),
        (ctorch.arange, (-3, 20, 3), {"dtype": ctorch.int8}),
        (ctorch.linspace, (0, 1, 17), {}), (ctorch.linspace, (-5, 5, 11), {"dtype": ctorch.float16}),
        (ctorch.logspace, (0, 3, 7), {}), (ctorch.eye, (4,), {}), (ctorch.eye, (3, 5), {"dtype": ctorch.int64}),
        (ctorch.full, ((2, 3), 7.5), {}), (ctorch.full, ((2, 3), True), {}), (ctorch.zeros, (3, 4), {}),
        (ctorch.ones, (2, 2), {"dtype": ctorch.bfloat16}),
    ]:
        same(fn(*args, **kw), fn(*args, device="cuda", **kw))
    x = ctorch.ones(2, 3, device="cuda")
    assert ctorch.zeros_like(x).device.type == "cuda"
    same(ctorch.full_like(x.cpu(), 4), ctorch.full_like(x, 4))


# ---------------------------------------------------------------------------------------------
# errors: same exception and message on both devices, and the GPU stays usable
def test_out_of_range_errors():
    x = both(np.arange(24, dtype=np.float32).reshape(4, 6))
    assert same_error(lambda t, i: t[i], x, idx([1, 4]))[0] is IndexError
    same_error(lambda t, i: t[i], x, idx([-5]))
    same_error(lambda t, i, j: t[i, j], x, idx([0, 1]), idx([2, 6]))
    same_error(lambda t, i, j, k, l_: t.view(2, 2, 2, 3)[i, j, k, l_], x, idx([0]), idx([1]), idx([1]), idx([3]))
    same_error(lambda t, i: t.__setitem__(i, 0), x, idx([7]))
    ones = both(np.ones((2, 6), np.float32))
    same_error(lambda t, i, v: t.index_put_((i,), v, accumulate=True), x, idx([0, 9]), ones)
    same_error(lambda t, i: ctorch.gather(t, 1, i), x, idx([[0, 6]]))
    same_error(lambda t, i: ctorch.gather(t, 0, i), x, idx([[-1]]))
    same_error(lambda t, i: ctorch.index_select(t, 0, i), x, idx([4]))
    same_error(lambda t, i: ctorch.index_select(t, 1, i), x, idx([-7], "int32"))
    same_error(lambda t, i, v: t.scatter_add_(0, i, v), x, idx([[4]]), both(np.ones((1, 1), np.float32)))
    same_error(lambda t, i, v: t.scatter_(1, i, v), x, idx([[6]]), both(np.ones((1, 1), np.float32)))
    same_error(lambda t, i, v: t.index_add_(0, i, v), x, idx([5]), both(np.ones((1, 6), np.float32)))
    same_error(lambda t, i, v: t.index_copy_(0, i, v), x, idx([-5]), both(np.ones((1, 6), np.float32)))
    same_error(lambda t, i: t.index_fill_(1, i, 0), x, idx([6]))
    same_error(lambda t, i: ctorch.take(t, i), x, idx([24]))
    same_error(lambda i: ctorch.one_hot(i, 3), idx([0, 3]))
    same_error(lambda i: ctorch.one_hot(i, -1), idx([0, -1]))
    same_error(lambda t, m: t[m], x, both(np.ones((4, 5), bool)))


def test_device_errors():
    g = ctorch.zeros(3, device="cuda")
    c = ctorch.zeros(3)
    with pytest.raises(RuntimeError, match="indices should be either on cpu or on the same device as the indexed "
                                           r"tensor \(cpu\)"):
        c[ctorch.tensor([0], device="cuda")]
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ctorch.cat([c, g])
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ctorch.gather(g, 0, ctorch.tensor([0]))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ctorch.index_select(g, 0, ctorch.tensor([0]))
