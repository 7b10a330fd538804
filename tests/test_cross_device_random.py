"""Cross-device tests of the random family: the same seed gives the same numbers, bit for bit,
on the CPU and on CUDA, for every op and dtype (philox.h's streams: element i of an op is the
Philox block at offset + i, and normal/exponential use philox.h's deterministic log and cos), and
the generators advance alike. Also: the CUDA default generators (ctorch.manual_seed seeds them as
torch.manual_seed seeds torch.cuda's), their state round trip, fork_rng, and the argument checks
of the per-element forms. Skipped where CUDA is not available."""
import numpy as np
import pytest

import ctorch
from conftest import to_numpy

pytestmark = pytest.mark.skipif(not ctorch.cuda.is_available(), reason="CUDA not available")

FLOAT_DTYPES = ["float32", "float64", "float16", "bfloat16"]
INT_DTYPES = ["int64", "int32", "int16", "int8", "uint8"]
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + ["bool"]
SEEDS = [0, 1, 42, 2**32 + 5, 2**63 - 1]
SIZES = [0, 1, 7, 1000, (1 << 20) + 3]


def bits(t):
    a = to_numpy(t)
    return a.shape, str(t.dtype), a.tobytes()


def same(c, g):
    assert c.device.type == "cpu" and g.device.type == "cuda"
    assert bits(c) == bits(g), f"\ncpu:  {to_numpy(c)[:8]}\ncuda: {to_numpy(g)[:8]}"


def gens(seed):
    """A CPU and a CUDA generator with the same seed."""
    return ctorch.Generator().manual_seed(seed), ctorch.Generator(device="cuda").manual_seed(seed)


def both(fn, seed):
    """fn(device, generator) on both devices with fresh generators of seed; also checks that the
    generators advanced by the same amount."""
    gc, gg = gens(seed)
    c, g = fn("cpu", gc), fn("cuda", gg)
    assert gc.get_offset() == gg.get_offset()
    return c, g


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_rand_randn(seed, dtype, n):
    dt = getattr(ctorch, dtype)
    same(*both(lambda d, g: ctorch.rand(n, dtype=dt, device=d, generator=g), seed))
    same(*both(lambda d, g: ctorch.randn(n, dtype=dt, device=d, generator=g), seed))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_randint_random_(seed, dtype):
    dt = getattr(ctorch, dtype)
    hi = 2 if dtype == "bool" else 100
    same(*both(lambda d, g: ctorch.randint(0, hi, (3, 1001), dtype=dt, device=d, generator=g), seed))
    if dtype not in ("bool", "uint8"):
        same(*both(lambda d, g: ctorch.randint(-7, 9, (513,), dtype=dt, device=d, generator=g), seed))
    same(*both(lambda d, g: ctorch.zeros(777, dtype=dt, device=d).random_(generator=g), seed))
    same(*both(lambda d, g: ctorch.zeros(777, dtype=dt, device=d).random_(hi, generator=g), seed))
    if dtype == "int64":  # the full 64-bit range: U64 mod 2^64 - 1 ... the largest ranges
        same(*both(lambda d, g: ctorch.zeros(999, dtype=dt, device=d).random_(-2**63, 2**63 - 1, generator=g), seed))
        same(*both(lambda d, g: ctorch.zeros(999, dtype=dt, device=d).random_(-5, None, generator=g), seed))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [1, 2, 255, 4097, 100003])
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_randperm(seed, n, dtype):
    if (dtype == "uint8" and n > 256 or dtype == "bfloat16" and n > 257 or dtype == "float16" and n > 2049
            or dtype == "int16" and n > 32768):
        pytest.skip("n beyond the dtype")
    dt = getattr(ctorch, dtype)
    c, g = both(lambda d, gen: ctorch.randperm(n, dtype=dt, device=d, generator=gen), seed)
    same(c, g)
    assert sorted(to_numpy(c).astype(np.int64).tolist()) == list(range(n))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_inplace_float_fills(seed, dtype):
    dt = getattr(ctorch, dtype)
    for op, args in [("uniform_", ()), ("uniform_", (-3.5, 12.25)), ("normal_", ()), ("normal_", (4.0, 0.5)),
                     ("exponential_", ()), ("exponential_", (7.5,)), ("bernoulli_", ()), ("bernoulli_", (0.3,))]:
        same(*both(lambda d, g: getattr(ctorch.empty(4099, dtype=dt, device=d), op)(*args, generator=g), seed))


@pytest.mark.parametrize("layout", ["transposed", "strided", "0d", "empty"])
def test_inplace_layouts(layout):
    """Non-contiguous targets are filled through a contiguous scratch: the same element order."""
    def target(d):
        base = ctorch.zeros(6, 10, device=d)
        return {"transposed": base.T, "strided": base[:, ::3], "0d": base[2, 3], "empty": base[:0]}[layout], base

    for op, args in [("uniform_", (1, 2)), ("normal_", ()), ("random_", (0, 9)), ("bernoulli_", (0.5,)),
                     ("exponential_", ())]:
        def run(d, g):
            view, base = target(d)
            getattr(view, op)(*args, generator=g)
            return base
        same(*both(run, 11))


@pytest.mark.parametrize("out_dtype", ALL_DTYPES)
@pytest.mark.parametrize("p_dtype", FLOAT_DTYPES)
def test_bernoulli_tensor(p_dtype, out_dtype):
    rng = np.random.default_rng(5)
    p = rng.random((33, 31)).astype(np.float32)
    p[0, :4] = [0.0, 1.0, 0.5, 0.999]
    pdt = getattr(ctorch, p_dtype)
    same(*both(lambda d, g: ctorch.bernoulli(ctorch.tensor(p, dtype=pdt, device=d), generator=g), 9))
    same(*both(lambda d, g: ctorch.bernoulli(ctorch.tensor(p, dtype=pdt, device=d).T, generator=g), 9))
    same(*both(lambda d, g: ctorch.bernoulli(ctorch.tensor(p, dtype=pdt, device=d), 0.25, generator=g), 9))
    odt = getattr(ctorch, out_dtype)
    same(*both(lambda d, g: ctorch.zeros(33, 31, dtype=odt, device=d).bernoulli_(
        ctorch.tensor(p[0], dtype=pdt, device=d), generator=g), 9))  # p broadcast along rows


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_normal_forms(dtype):
    dt = getattr(ctorch, dtype)
    rng = np.random.default_rng(6)
    mean, std = rng.standard_normal((4, 50)), rng.random(50) * 3
    std[0] = 0.0
    for seed in SEEDS:
        same(*both(lambda d, g: ctorch.normal(ctorch.tensor(mean, dtype=dt, device=d),
                                              ctorch.tensor(std, dtype=dt, device=d), generator=g), seed))
        same(*both(lambda d, g: ctorch.normal(ctorch.tensor(mean, dtype=dt, device=d), 2.0, generator=g), seed))
        same(*both(lambda d, g: ctorch.normal(-1.0, ctorch.tensor(std, dtype=dt, device=d), generator=g), seed))
        same(*both(lambda d, g: ctorch.normal(3.0, 0.5, (7, 9), dtype=dt, device=d, generator=g), seed))


def test_like_forms():
    for dtype in FLOAT_DTYPES:
        dt = getattr(ctorch, dtype)
        same(*both(lambda d, g: ctorch.rand_like(ctorch.empty(5, 7, dtype=dt, device=d), generator=g), 3))
        same(*both(lambda d, g: ctorch.randn_like(ctorch.empty(5, 7, dtype=dt, device=d).T, generator=g), 3))
    for dtype in INT_DTYPES:
        dt = getattr(ctorch, dtype)
        same(*both(lambda d, g: ctorch.randint_like(ctorch.empty(5, 7, dtype=dt, device=d), 3, 50, generator=g), 3))


# --- default generators -----------------------------------------------------------------------------
def test_manual_seed_seeds_cuda():
    """ctorch.manual_seed seeds every CUDA default generator (torch.manual_seed's behaviour), so
    the default streams of both devices agree after it."""
    ctorch.manual_seed(1234)
    assert ctorch.cuda.initial_seed() == 1234
    g = ctorch._C._default_generator("cuda:0")
    assert g.initial_seed() == 1234 and g.get_offset() == 0 and g.device.type == "cuda"
    c = ctorch.rand(1000)
    gpu = ctorch.rand(1000, device="cuda")
    same(c, gpu)
    same(ctorch.randn(33, dtype=ctorch.float64), ctorch.randn(33, dtype=ctorch.float64, device="cuda"))
    assert g.get_offset() == 1033
    ctorch.manual_seed(1234)
    same(c, ctorch.rand(1000, device="cuda"))


def test_cuda_manual_seed_and_state():
    ctorch.cuda.manual_seed(99)
    assert ctorch.cuda.initial_seed() == 99
    a = ctorch.rand(100, device="cuda")
    same(ctorch.rand(100, generator=ctorch.Generator().manual_seed(99)), a)
    state = ctorch.cuda.get_rng_state()
    assert state.device.type == "cpu" and state.dtype == ctorch.uint8
    b = ctorch.randn(100, device="cuda")
    ctorch.cuda.set_rng_state(state)
    assert bits(b) == bits(ctorch.randn(100, device="cuda"))
    ctorch.cuda.manual_seed_all(5)
    assert all(g.initial_seed() == 5 for g in ctorch.cuda.default_generators)
    assert len(ctorch.cuda.get_rng_state_all()) == ctorch.cuda.device_count()
    ctorch.cuda.seed()
    assert 0 <= ctorch.cuda.initial_seed() < 2**64


def test_fork_rng_cuda():
    ctorch.manual_seed(3)
    with ctorch.random.fork_rng(devices=["cuda:0"]):
        a = ctorch.rand(10, device="cuda")
    b = ctorch.rand(10, device="cuda")
    assert bits(a) == bits(b)


def test_generator_device_checks():
    gc = ctorch.Generator()
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        ctorch.rand(3, device="cuda", generator=gc)
    gg = ctorch.Generator(device="cuda")
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        ctorch.rand(3, generator=gg)


# --- argument checks on the device --------------------------------------------------------------------
def test_per_element_argument_errors():
    for d in ("cpu", "cuda"):
        t = ctorch.full((5,), 7.0, device=d)
        with pytest.raises(RuntimeError, match=r"^Expected p_in >= 0 && p_in <= 1 to be true, but got false\."):
            t.bernoulli_(ctorch.tensor([0.5, 0.1, 1.5, 0.0, 0.2], device=d))
        assert to_numpy(t).tolist() == [7.0] * 5  # nothing written
        with pytest.raises(RuntimeError, match=r"^Expected p_in >= 0 && p_in <= 1 to be true"):
            ctorch.bernoulli(ctorch.tensor([float("nan")], device=d))
        with pytest.raises(RuntimeError, match="^normal expects all elements of std >= 0.0$"):
            ctorch.normal(ctorch.zeros(3, device=d), ctorch.tensor([1.0, -1.0, 1.0], device=d))
    assert ctorch.rand(4, device="cuda").shape == (4,)  # the GPU stays usable


def test_determinism_across_calls():
    """Same seed, same bits, run after run (the launch configuration does not matter)."""
    outs = [ctorch.randn(3 << 20, device="cuda", generator=ctorch.Generator(device="cuda").manual_seed(8))
            for _ in range(3)]
    assert bits(outs[0]) == bits(outs[1]) == bits(outs[2])


def test_dtype_errors_name_the_cuda_kernels():
    with pytest.raises(NotImplementedError, match="\"normal_kernel_cuda\" not implemented for 'Long'"):
        ctorch.randn(2, dtype=ctorch.int64, device="cuda")
    with pytest.raises(NotImplementedError, match="\"check_uniform_bounds\" not implemented for 'Long'"):
        ctorch.rand(2, dtype=ctorch.int64, device="cuda")
    with pytest.raises(NotImplementedError, match="\"bernoulli_tensor_cuda_p_\" not implemented for 'Long'"):
        ctorch.zeros(2, device="cuda").bernoulli_(ctorch.ones(2, dtype=ctorch.int64, device="cuda"))
    with pytest.raises(NotImplementedError, match="\"arange_cuda\" not implemented for 'Bool'"):
        ctorch.arange(3, dtype=ctorch.bool, device="cuda")
