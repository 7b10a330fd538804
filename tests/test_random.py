"""Random numbers: the Philox4x32-10 generator (known answers), the sampling recipe of philox.h
checked bit for bit against an independent NumPy implementation, ctorch.Generator and the
default generators, every random op's dtypes, layouts, statistics and PyTorch's errors."""
import numpy as np
import pytest

import ctorch as torch
from conftest import FLOAT_DTYPES, INT_DTYPES, np_dtype, to_numpy

MASK = np.uint64(0xFFFFFFFF)


# --- an independent Philox4x32-10 in NumPy (the oracle) ------------------------------------------
def philox_blocks(seed, offset, n):
    """The four 32-bit words (as uint64 arrays) of blocks offset .. offset+n-1 under seed."""
    ctr = np.arange(n, dtype=np.uint64) + np.uint64(offset)
    c0, c1 = ctr & MASK, ctr >> np.uint64(32)
    c2 = np.zeros(n, np.uint64)
    c3 = np.zeros(n, np.uint64)
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32)
    for r in range(10):
        if r:
            k0 = (k0 + np.uint64(0x9E3779B9)) & MASK
            k1 = (k1 + np.uint64(0xBB67AE85)) & MASK
        p0 = np.uint64(0xD2511F53) * c0
        p1 = np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = (p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & MASK, (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & MASK
    return c0, c1, c2, c3


def u64(hi, lo):
    return (hi << np.uint64(32)) | lo


def uniform53(hi, lo):
    return (u64(hi, lo) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def expected_normal(seed, offset, n, mean=0.0, std=1.0):
    x0, x1, x2, x3 = philox_blocks(seed, offset, n)
    u1, u2 = uniform53(x0, x1), uniform53(x2, x3)
    return mean + std * (np.sqrt(-2.0 * np.log(1.0 - u1)) * np.cos(2 * np.pi * u2))


# --- the generator itself --------------------------------------------------------------------------
@pytest.mark.parametrize("ctr,key,expected", [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
])
def test_philox_known_answers(ctr, key, expected):
    """Random123's kat_vectors for philox4x32 10."""
    assert torch._C._philox4x32_10(ctr, key) == expected


def test_numpy_oracle_matches_known_answer():
    # counter (0, 0, 0, 0) under key (0, 0) is block 0 of seed 0
    assert tuple(int(w[0]) for w in philox_blocks(0, 0, 1)) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)


# --- the sampling recipe, bit for bit ----------------------------------------------------------------
SEEDS = [0, 1, 123456789, 2**63 + 5, 2**64 - 1]


@pytest.mark.parametrize("seed", SEEDS)
def test_rand_float32_bits(seed):
    g = torch.Generator().manual_seed(seed)
    torch.rand(7, generator=g)  # move the offset
    got = torch.rand(1000, generator=g).numpy()
    x0, _, _, _ = philox_blocks(seed, 7, 1000)
    expected = ((x0 >> np.uint64(8)).astype(np.float64) * 2.0**-24).astype(np.float32)
    np.testing.assert_array_equal(got, expected)
    assert got.min() >= 0 and got.max() < 1


@pytest.mark.parametrize("seed", SEEDS)
def test_rand_float64_bits(seed):
    got = torch.rand(1000, dtype=torch.float64, generator=torch.Generator().manual_seed(seed)).numpy()
    x0, x1, _, _ = philox_blocks(seed, 0, 1000)
    np.testing.assert_array_equal(got, uniform53(x0, x1))


@pytest.mark.parametrize("dtype,bits", [("float16", 11), ("bfloat16", 8)])
def test_rand_half_bits(dtype, bits):
    got = to_numpy(torch.rand(1000, dtype=getattr(torch, dtype), generator=torch.Generator().manual_seed(3)))
    x0, _, _, _ = philox_blocks(3, 0, 1000)
    np.testing.assert_array_equal(got, (x0 >> np.uint64(32 - bits)).astype(np.float64) * 2.0**-bits)
    assert got.max() < 1


def test_uniform_range_bits():
    t = torch.empty(500, dtype=torch.float64).uniform_(-2.5, 4.0, generator=torch.Generator().manual_seed(9))
    x0, x1, _, _ = philox_blocks(9, 0, 500)
    np.testing.assert_array_equal(t.numpy(), -2.5 + uniform53(x0, x1) * 6.5)
    t = torch.empty(500).uniform_(-2.5, 4.0, generator=torch.Generator().manual_seed(9))
    u = (x0 >> np.uint64(8)).astype(np.float32) * np.float32(2.0**-24)
    np.testing.assert_array_equal(t.numpy(), np.float32(-2.5) + u * np.float32(6.5))


@pytest.mark.parametrize("seed", SEEDS)
def test_normal_matches_box_muller(seed):
    got = torch.randn(20000, dtype=torch.float64, generator=torch.Generator().manual_seed(seed)).numpy()
    np.testing.assert_allclose(got, expected_normal(seed, 0, 20000), rtol=1e-13, atol=1e-14)
    got32 = torch.randn(20000, generator=torch.Generator().manual_seed(seed)).numpy()
    np.testing.assert_allclose(got32, expected_normal(seed, 0, 20000).astype(np.float32), rtol=2e-7, atol=1e-7)
    # the float32 sample is the float64 sample rounded
    np.testing.assert_array_equal(got32, got.astype(np.float32))


def test_normal_mean_std_bits():
    t = torch.empty(300, dtype=torch.float64).normal_(3.0, 0.5, generator=torch.Generator().manual_seed(4))
    np.testing.assert_allclose(t.numpy(), expected_normal(4, 0, 300, 3.0, 0.5), rtol=1e-13)
    t = torch.normal(3.0, 0.5, (300,), dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    np.testing.assert_allclose(t.numpy(), expected_normal(4, 0, 300, 3.0, 0.5), rtol=1e-13)


@pytest.mark.parametrize("low,high", [(0, 10), (-5, 5), (0, 2**63 - 1), (-2**63, 2**63 - 1), (7, 8)])
def test_randint_bits(low, high):
    got = torch.randint(low, high, (1000,), generator=torch.Generator().manual_seed(11)).numpy()
    x0, x1, _, _ = philox_blocks(11, 0, 1000)
    rng = (high - low) % 2**64
    expected = [(low + int(v) % rng + 2**63) % 2**64 - 2**63 for v in u64(x0, x1)]
    np.testing.assert_array_equal(got, np.array(expected, dtype=np.int64))
    assert got.min() >= low and got.max() < high


def test_randperm_bits():
    g = torch.Generator().manual_seed(5)
    got = torch.randperm(5000, generator=g).numpy()
    x0, x1, _, _ = philox_blocks(5, 0, 5000)
    np.testing.assert_array_equal(got, np.argsort(u64(x0, x1), kind="stable"))
    assert g.get_offset() == 5000


def test_bernoulli_bits():
    p = np.linspace(0, 1, 1000)
    got = torch.bernoulli(torch.tensor(p), generator=torch.Generator().manual_seed(2)).numpy()
    x0, x1, _, _ = philox_blocks(2, 0, 1000)
    np.testing.assert_array_equal(got, (uniform53(x0, x1) < p).astype(np.float64))
    got = torch.empty(1000).bernoulli_(0.3, generator=torch.Generator().manual_seed(2)).numpy()
    np.testing.assert_array_equal(got, (uniform53(x0, x1) < 0.3).astype(np.float32))


def test_exponential_bits():
    got = torch.empty(1000, dtype=torch.float64).exponential_(2.0, generator=torch.Generator().manual_seed(6)).numpy()
    x0, x1, _, _ = philox_blocks(6, 0, 1000)
    np.testing.assert_allclose(got, -np.log(1.0 - uniform53(x0, x1)) / 2.0, rtol=1e-13, atol=1e-300)


def test_element_i_follows_logical_order():
    """Element i of any layout is the sample of counter offset + i (row-major logical order)."""
    a = torch.rand(4, 6, generator=torch.Generator().manual_seed(8)).numpy()
    t = torch.empty(6, 4).T  # a transposed (non-contiguous) 4x6 view
    t.uniform_(generator=torch.Generator().manual_seed(8))
    np.testing.assert_array_equal(t.numpy(), a)
    arr = np.zeros((4, 12), np.float32)
    torch.from_numpy(arr[:, ::2]).uniform_(generator=torch.Generator().manual_seed(8))
    np.testing.assert_array_equal(arr[:, ::2], a)
    np.testing.assert_array_equal(arr[:, 1::2], 0)


# --- Generator objects ---------------------------------------------------------------------------------
def test_generator_api():
    g = torch.Generator()
    assert g.device == torch.device("cpu") and torch.Generator(device="cpu").device.type == "cpu"
    assert torch.Generator("cpu").initial_seed() == 67280421310721
    assert g.manual_seed(42) is g and g.initial_seed() == 42 and g.get_offset() == 0
    a = torch.rand(10, generator=g)
    assert g.get_offset() == 10  # one Philox block per element
    torch.randn(3, 4, generator=g)
    assert g.get_offset() == 22
    state = g.get_state()
    assert state.dtype == torch.uint8 and state.shape == (16,)
    b = torch.rand(5, generator=g).numpy()
    assert g.set_state(state) is g
    np.testing.assert_array_equal(torch.rand(5, generator=g).numpy(), b)
    g.manual_seed(42)
    np.testing.assert_array_equal(torch.rand(10, generator=g).numpy(), a.numpy())
    g.set_offset(0)
    np.testing.assert_array_equal(torch.rand(10, generator=g).numpy(), a.numpy())
    s = g.seed()
    assert isinstance(s, int) and g.initial_seed() == s and 0 <= s < 2**64
    assert torch.Generator().manual_seed(-1).initial_seed() == 2**64 - 1
    assert torch.Generator().manual_seed(2**64 - 1).initial_seed() == 2**64 - 1


def test_generator_errors():
    g = torch.Generator()
    with pytest.raises(RuntimeError, match="^manual_seed expected a long, but got float$"):
        g.manual_seed(1.5)
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got str"):
        g.manual_seed("3")
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        g.manual_seed(2**64)
    with pytest.raises(TypeError, match="^RNG state must be a torch.ByteTensor$"):
        g.set_state(torch.zeros(16))
    with pytest.raises(RuntimeError, match="input RNG state size to be 3"):
        g.set_state(torch.zeros(3, dtype=torch.uint8))
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type"):
        torch.Generator("foo")
    with pytest.raises(TypeError, match=r"^rand\(\): argument 'generator' must be torch.Generator, not int$"):
        torch.rand(2, generator=5)
    with pytest.raises(TypeError, match=r"^uniform_\(\): argument 'generator' must be torch.Generator, not int$"):
        torch.zeros(2).uniform_(generator=5)


def test_default_generator_and_seeding():
    assert torch.manual_seed(0) is torch.default_generator
    assert torch.initial_seed() == 0
    a = torch.rand(5).numpy()
    torch.manual_seed(0)
    np.testing.assert_array_equal(torch.rand(5).numpy(), a)
    state = torch.get_rng_state()
    b = torch.randn(4).numpy()
    torch.set_rng_state(state)
    np.testing.assert_array_equal(torch.randn(4).numpy(), b)
    assert torch.manual_seed(1.5).initial_seed() == 1  # int(seed), as PyTorch
    assert torch.manual_seed(-1).initial_seed() == 2**64 - 1
    with pytest.raises(ValueError):
        torch.manual_seed("a")
    s = torch.seed()
    assert torch.initial_seed() == s
    assert torch._C._default_generator("cpu") is torch.default_generator
    # the default generator and an explicit one with the same seed agree
    torch.manual_seed(77)
    np.testing.assert_array_equal(torch.rand(6).numpy(), torch.rand(6, generator=torch.Generator().manual_seed(77)).numpy())


# --- ops: dtypes, shapes, statistics --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_rand_randn_dtypes(device, dtype):
    torch.manual_seed(0)
    t = torch.rand(2000, dtype=getattr(torch, dtype), device=device)
    assert t.dtype == getattr(torch, dtype) and t.shape == (2000,)
    a = to_numpy(t)
    assert a.min() >= 0 and a.max() < 1 and abs(a.mean() - 0.5) < 0.03
    n = to_numpy(torch.randn(4000, dtype=getattr(torch, dtype), device=device))
    assert abs(n.mean()) < 0.06 and abs(n.std() - 1) < 0.06
    assert torch.rand(2, 3, device=device).shape == (2, 3) and torch.rand((2, 3)).shape == (2, 3)
    assert torch.randn(size=(4,)).shape == (4,) and torch.rand(()).shape == () and torch.rand(0).shape == (0,)


def test_statistics_large():
    torch.manual_seed(1)
    u = torch.rand(1 << 20, dtype=torch.float64).numpy()
    assert abs(u.mean() - 0.5) < 2e-3 and abs(u.var() - 1 / 12) < 1e-3
    hist, _ = np.histogram(u, bins=16, range=(0, 1))
    chi2 = ((hist - len(u) / 16) ** 2 / (len(u) / 16)).sum()
    assert chi2 < 50  # 15 degrees of freedom
    z = torch.randn(1 << 20, dtype=torch.float64).numpy()
    assert abs(z.mean()) < 5e-3 and abs(z.std() - 1) < 5e-3
    assert abs((np.abs(z) < 1).mean() - 0.682689) < 3e-3
    assert abs(((z - z.mean()) ** 3).mean()) < 0.02 and abs(((z**4).mean()) - 3) < 0.05
    e = torch.empty(1 << 20, dtype=torch.float64).exponential_(2.0).numpy()
    assert abs(e.mean() - 0.5) < 5e-3 and e.min() >= 0
    b = torch.empty(1 << 20).bernoulli_(0.25).numpy()
    assert abs(b.mean() - 0.25) < 3e-3 and set(np.unique(b)) <= {0.0, 1.0}


@pytest.mark.parametrize("dtype", INT_DTYPES + ["float32", "float64", "float16", "bool"])
def test_randint_dtypes(device, dtype):
    hi = 2 if dtype == "bool" else 100
    t = torch.randint(0, hi, (3000,), dtype=getattr(torch, dtype), device=device)
    assert t.dtype == getattr(torch, dtype)
    a = to_numpy(t).astype(np.int64)
    assert a.min() == 0 and a.max() == hi - 1
    counts = np.bincount(a, minlength=hi)
    assert counts.min() > 0


def test_randint_forms():
    g = torch.Generator().manual_seed(0)
    assert torch.randint(10, (3,)).dtype == torch.int64
    assert torch.randint(3, 10, (2, 2), generator=g).shape == (2, 2)
    assert torch.randint(high=10, size=(2,)).shape == (2,)
    assert torch.randint(3, high=5, size=[4]).numpy().min() >= 3
    assert torch.randint(10, (3,), dtype=torch.float32).dtype == torch.float32
    a = torch.randint(-5, 5, (1000,)).numpy()
    assert a.min() == -5 and a.max() == 4


def test_randint_errors():
    with pytest.raises(RuntimeError, match=r"^random_ expects 'from' to be less than 'to', but got from=0 >= to=0$"):
        torch.randint(0, (3,))
    with pytest.raises(RuntimeError, match="but got from=5 >= to=2"):
        torch.randint(5, 2, (3,))
    with pytest.raises(TypeError, match=r"^randint\(\): argument 'size' \(position 2\) must be tuple of ints, not int$"):
        torch.randint(10, 3)
    with pytest.raises(TypeError, match=r"^randint\(\): argument 'high' \(position 1\) must be int, not float$"):
        torch.randint(2.5, (3,))
    with pytest.raises(TypeError, match="must be tuple of ints, not int"):
        torch.randint(2, size=3)
    with pytest.raises(TypeError):
        torch.randint(10)
    with pytest.raises(RuntimeError, match="^to - 1 is out of bounds for unsigned char$"):
        torch.randint(0, 300, (2,), dtype=torch.uint8)
    with pytest.raises(RuntimeError, match="^from is out of bounds for unsigned char$"):
        torch.randint(-1, 2, (3,), dtype=torch.uint8)
    with pytest.raises(RuntimeError, match="^from is out of bounds for bool$"):
        torch.randint(3, 10, (3,), dtype=torch.bool)
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension -1: \[-1\]"):
        torch.randint(3, (-1,))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "float32", "float64"])
def test_randperm(device, dtype):
    n = 200
    t = torch.randperm(n, dtype=getattr(torch, dtype), device=device)
    assert t.dtype == getattr(torch, dtype) and t.shape == (n,)
    np.testing.assert_array_equal(np.sort(to_numpy(t).astype(np.int64)), np.arange(n))


def test_randperm_cases():
    assert torch.randperm(0).shape == (0,) and torch.randperm(0).dtype == torch.int64
    assert torch.randperm(1).tolist() == [0]
    big = torch.randperm(1 << 20).numpy()
    np.testing.assert_array_equal(np.sort(big), np.arange(1 << 20))
    assert (big != np.arange(1 << 20)).mean() > 0.99
    assert torch.randperm(256, dtype=torch.uint8).shape == (256,)
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    np.testing.assert_array_equal(torch.randperm(100, generator=g1).numpy(), torch.randperm(100, generator=g2).numpy())
    with pytest.raises(RuntimeError, match=r"^Trying to create tensor with negative dimension -1: \[-1\]$"):
        torch.randperm(-1)
    with pytest.raises(RuntimeError, match="^value cannot be converted to type uint8_t without overflow$"):
        torch.randperm(257, dtype=torch.uint8)
    with pytest.raises(NotImplementedError, match="\"randperm\" not implemented for 'Bool'"):
        torch.randperm(2, dtype=torch.bool)
    with pytest.raises(RuntimeError, match=r"n cannot be greater than 2\^24\+1 for Float type."):
        torch.randperm(2**24 + 2, dtype=torch.float32)
    with pytest.raises(TypeError, match=r"^randperm\(\): argument 'n' \(position 1\) must be int, not float$"):
        torch.randperm(2.5)


def test_dtype_errors():
    with pytest.raises(NotImplementedError, match="\"check_uniform_bounds\" not implemented for 'Long'"):
        torch.rand(2, dtype=torch.int64)
    with pytest.raises(NotImplementedError, match="\"normal_kernel_cpu\" not implemented for 'Long'"):
        torch.randn(2, dtype=torch.int64)
    with pytest.raises(NotImplementedError, match="\"check_uniform_bounds\" not implemented for 'Int'"):
        torch.rand_like(torch.ones(2, dtype=torch.int32))
    with pytest.raises(NotImplementedError, match="\"check_uniform_bounds\" not implemented for 'Long'"):
        torch.ones(2, dtype=torch.int64).uniform_()
    with pytest.raises(NotImplementedError, match="\"normal_kernel_cpu\" not implemented for 'Long'"):
        torch.ones(2, dtype=torch.int64).normal_()
    with pytest.raises(RuntimeError, match="Exponential distribution is a continuous probability distribution. "
                                           "dtype must be a floating point but you specified Long"):
        torch.zeros(3, dtype=torch.int64).exponential_()


# --- in-place methods -----------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "0d", "empty"])
@pytest.mark.parametrize("op", ["uniform_", "normal_", "random_", "bernoulli_", "exponential_"])
def test_inplace_layouts(op, layout):
    arr = np.full((4, 6), -7.0, np.float32)
    base = torch.from_numpy(arr)
    view, sel = {
        "contiguous": (base, np.s_[:, :]),
        "transposed": (base.T, np.s_[:, :]),
        "strided": (torch.from_numpy(arr[:, ::2]), np.s_[:, ::2]),
        "0d": (base.select(0, 1).select(0, 2), np.s_[1, 2]),
        "empty": (base.narrow(0, 0, 0), np.s_[0:0, :]),
    }[layout]
    args = {"uniform_": (2.0, 3.0), "normal_": (0.0, 1.0), "random_": (0, 5), "bernoulli_": (0.5,),
            "exponential_": (1.0,)}[op]
    assert getattr(view, op)(*args) is view
    untouched = np.ones(arr.shape, bool)
    untouched[sel] = False
    np.testing.assert_array_equal(arr[untouched], -7.0)
    written = arr[sel]
    if written.size:
        if op == "uniform_":
            assert written.min() >= 2 and written.max() < 3
        elif op == "random_":
            assert set(np.unique(written)) <= set(range(5))
        elif op == "bernoulli_":
            assert set(np.unique(written)) <= {0.0, 1.0}
        elif op == "exponential_":
            assert written.min() >= 0
        assert (written != -7.0).all()


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_uniform_normal_dtypes(dtype, device):
    t = torch.empty(1000, dtype=getattr(torch, dtype), device=device)
    a = to_numpy(t.uniform_(-1, 1))
    assert a.min() >= -1 and a.max() <= 1 and abs(a.mean()) < 0.1
    a = to_numpy(t.normal_(10, 2))
    assert abs(a.mean() - 10) < 0.3 and abs(a.std() - 2) < 0.3


def test_random_forms():
    assert set(np.unique(torch.zeros(100, dtype=torch.bool).random_().numpy())) == {False, True}
    a = torch.zeros(2000, dtype=torch.uint8).random_().numpy()
    assert a.max() > 200 and a.min() < 50
    a = torch.zeros(2000, dtype=torch.int8).random_(2, None).numpy()
    assert a.min() >= 2 and a.max() <= 127
    a = torch.zeros(1000).random_(-1, 5).numpy()
    assert a.min() == -1 and a.max() == 4
    a = torch.zeros(1000).random_(3).numpy()
    assert set(np.unique(a)) == {0.0, 1.0, 2.0}
    a = torch.zeros(1000).random_(to=3).numpy()
    assert set(np.unique(a)) == {0.0, 1.0, 2.0}
    a = torch.zeros(1000).random_().numpy()
    assert a.min() >= 0 and a.max() <= 2**24
    with pytest.raises(RuntimeError, match="^random_ expects 'from' to be less than 'to', but got from=5 >= to=5$"):
        torch.zeros(3).random_(5, 5)
    with pytest.raises(RuntimeError, match="but got from=0 >= to=0"):
        torch.zeros(3).random_(0)
    with pytest.raises(RuntimeError, match="^to - 1 is out of bounds for signed char$"):
        torch.zeros(3, dtype=torch.int8).random_(0, 129)
    with pytest.raises(RuntimeError, match="^from is out of bounds for signed char$"):
        torch.zeros(3, dtype=torch.int8).random_(-129, 0)
    with pytest.raises(TypeError):
        torch.zeros(3).random_(1.5)


def test_inplace_errors():
    with pytest.raises(RuntimeError, match=r"^uniform_ expects to return a \[from, to\) range, but found from=1 > to=0$"):
        torch.ones(2).uniform_(1, 0)
    with pytest.raises(RuntimeError, match="^to is out of bounds for float$"):
        torch.zeros(3).uniform_(0, 1e39)
    with pytest.raises(RuntimeError, match="^from is out of bounds for float$"):
        torch.zeros(3).uniform_(float("nan"), 1)
    with pytest.raises(RuntimeError, match=r"uniform_ expects to-from <= std::numeric_limits<Float>::max\(\)"):
        torch.zeros(3).uniform_(-3e38, 3e38)
    with pytest.raises(TypeError, match=r"^uniform_\(\): argument 'from' \(position 1\) must be float, not str$"):
        torch.zeros(3).uniform_("a")
    with pytest.raises(RuntimeError, match="^normal expects std >= 0.0, but found std -1$"):
        torch.ones(2).normal_(0, -1)
    with pytest.raises(RuntimeError, match="^normal expects std >= 0.0, but found std nan$"):
        torch.zeros(3).normal_(0, float("nan"))
    with pytest.raises(RuntimeError, match="^exponential_ expects lambda > 0.0, but found lambda=0$"):
        torch.zeros(3).exponential_(0)
    with pytest.raises(RuntimeError, match=r"^bernoulli_ expects p to be in \[0, 1\], but got p=1.5$"):
        torch.ones(3).bernoulli_(1.5)
    with pytest.raises(NotImplementedError, match="\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'"):
        torch.zeros(3).bernoulli_(torch.tensor([0, 1, 1]))
    with pytest.raises(RuntimeError, match=r"Expected p_in >= 0 && p_in <= 1 to be true, but got false."):
        torch.zeros(3).bernoulli_(torch.tensor([0.0, 1.0, 1.5]))


def test_bernoulli_forms():
    t = torch.zeros(2, 3).bernoulli_(torch.tensor([0.0, 1.0, 1.0]))
    assert t.tolist() == [[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]
    assert torch.zeros(3, dtype=torch.int64).bernoulli_(0.5).dtype == torch.int64
    assert torch.bernoulli(torch.zeros(3), generator=torch.Generator()).tolist() == [0.0] * 3
    assert torch.bernoulli(torch.ones(3, dtype=torch.float64)).dtype == torch.float64
    assert torch.bernoulli(torch.tensor(0.5)).shape == ()
    assert torch.bernoulli(torch.full((3,), 0.5), p=1.0).tolist() == [1.0] * 3
    with pytest.raises(NotImplementedError, match="\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'"):
        torch.bernoulli(torch.ones(3, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="Expected p_in >= 0 && p_in <= 1"):
        torch.bernoulli(torch.full((3,), 1.5))


def test_normal_forms():
    g = torch.Generator().manual_seed(0)
    assert torch.normal(0.0, 1.0, (2,)).shape == (2,) and torch.normal(0, 1, size=(2,)).dtype == torch.float32
    assert torch.normal(1.0, 2.0, (2,), dtype=torch.float64).dtype == torch.float64
    t = torch.normal(torch.zeros(2, 1), torch.ones(3), generator=g)
    assert t.shape == (2, 3)
    assert torch.normal(torch.ones(2, dtype=torch.float64), torch.ones(2)).dtype == torch.float64
    assert torch.normal(1.0, torch.ones(2, dtype=torch.float64)).dtype == torch.float64
    assert torch.normal(torch.tensor(1.0), torch.tensor(1.0)).shape == ()
    # mean and std tensors: mean + std * z with the same z as normal_
    mean = torch.arange(5.0, dtype=torch.float64)
    std = torch.full((5,), 0.5, dtype=torch.float64)
    got = torch.normal(mean, std, generator=torch.Generator().manual_seed(4)).numpy()
    np.testing.assert_allclose(got, expected_normal(4, 0, 5, np.arange(5.0), 0.5), rtol=1e-13)
    big = torch.normal(torch.full((100000,), 5.0), 0.1).numpy()
    assert abs(big.mean() - 5) < 0.01 and abs(big.std() - 0.1) < 0.01
    assert (torch.normal(torch.zeros(100), torch.zeros(100)).numpy() == 0).all()
    with pytest.raises(RuntimeError, match="^normal expects std >= 0.0, but found std -1$"):
        torch.normal(torch.ones(2), -1.0)
    with pytest.raises(RuntimeError, match="^normal expects all elements of std >= 0.0$"):
        torch.normal(torch.zeros(3), torch.tensor([1.0, -1.0, 1.0]))
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        torch.normal(torch.zeros(3), torch.ones(2))
    with pytest.raises(NotImplementedError, match="\"normal_kernel_cpu\" not implemented for 'Long'"):
        torch.normal(torch.zeros(2, dtype=torch.int64), 1)
    with pytest.raises(TypeError):
        torch.normal(0, 1)


def test_like_forms():
    base = torch.ones(3, 4, dtype=torch.float64).T
    t = torch.rand_like(base, generator=torch.Generator())
    assert t.dtype == torch.float64 and t.shape == (4, 3) and t.stride() == base.stride()
    assert torch.randn_like(torch.ones(2, dtype=torch.float64)).dtype == torch.float64
    assert torch.rand_like(torch.ones(2), dtype=torch.float16).dtype == torch.float16
    r = torch.randint_like(torch.ones(300), 10)
    assert r.dtype == torch.float32 and r.numpy().max() == 9
    r = torch.randint_like(torch.ones(300, dtype=torch.int32), 5, 10)
    assert r.dtype == torch.int32 and r.numpy().min() == 5
    assert torch.randint_like(torch.ones(3), high=10).shape == (3,)
    with pytest.raises(RuntimeError, match="but got from=10 >= to=5"):
        torch.randint_like(torch.ones(3), 10, 5)


def test_requires_grad_option():
    t = torch.rand(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        t.numpy()
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        torch.randint(3, (2,), requires_grad=True)


def test_random_module():
    import ctorch.random

    assert torch.random.manual_seed(5) is torch.default_generator and torch.random.initial_seed() == 5
    with torch.random.fork_rng():
        inside = torch.rand(3).numpy()
    np.testing.assert_array_equal(torch.rand(3).numpy(), inside)
    with torch.random.fork_rng(enabled=False):
        torch.rand(3)
    assert torch.default_generator.get_offset() == 6


def test_inplace_on_leaf_requiring_grad():
    w = torch.empty(3, 4, requires_grad=True)
    for call in (lambda: w.uniform_(), lambda: w.normal_(), lambda: w.random_(3), lambda: w.bernoulli_(),
                 lambda: w.exponential_(), lambda: w.fill_(1), lambda: w.zero_()):
        with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place "
                                               "operation.$"):
            call()
    with torch.no_grad():  # what nn.init does
        w.uniform_(-1, 1).normal_(0, 0.02)
        w.fill_(0.5).zero_()
    assert w.requires_grad and w.detach().numpy().sum() == 0


def test_multinomial(device):
    """multinomial: PyTorch's shapes, dtype and errors; with replacement the frequencies follow the
    probabilities and zero-probability categories never come; without, no row repeats a category,
    the first draw follows p and the second p_j * sum_i p_i / (1 - p_i) over i != j, zeros only after
    every positive category; a seed gives the same samples on every device."""
    p = np.array([0.1, 0.2, 0.3, 0.4])
    g = torch.Generator(device=device).manual_seed(3)
    rows = torch.tensor(p, device=device).expand(20000, 4)
    with_r = to_numpy(torch.multinomial(rows[:400], 50, replacement=True, generator=g))
    assert with_r.shape == (400, 50) and with_r.dtype == np.int64
    np.testing.assert_allclose(np.bincount(with_r.ravel(), minlength=4) / with_r.size, p, atol=0.01)
    two = to_numpy(torch.multinomial(rows, 2, generator=g))
    assert (two[:, 0] != two[:, 1]).all()
    np.testing.assert_allclose(np.bincount(two[:, 0], minlength=4) / len(two), p, atol=0.012)
    second = [sum(p[i] * p[j] / (1 - p[i]) for i in range(4) if i != j) for j in range(4)]
    np.testing.assert_allclose(np.bincount(two[:, 1], minlength=4) / len(two), second, atol=0.012)
    z = torch.tensor([[0.0, 3.0, 0.0, 1.0], [2.0, 0.0, 0.0, 0.0]], device=device, dtype=torch.float32)
    assert set(to_numpy(torch.multinomial(z, 100, True)).ravel()[:100]) <= {1, 3}
    assert (to_numpy(torch.multinomial(z, 100, True))[1] == 0).all()
    full = to_numpy(z[0].multinomial(4))
    assert sorted(full[:2]) == [1, 3] and sorted(full) == [0, 1, 2, 3]
    one = torch.multinomial(torch.tensor([0.2, 0.8], device=device, dtype=torch.float16), 3, True)
    assert one.shape == (3,) and one.dtype == torch.int64 and one.device.type == device
    out = torch.empty(2, dtype=torch.int64, device=device)
    assert torch.multinomial(torch.ones(4, device=device, requires_grad=True), 2, out=out) is out
    assert torch.multinomial(torch.zeros((0, 3), device=device), 2).shape == (0, 2)
    # the same seed: the same samples, on the CPU and on this device
    draws = [to_numpy(torch.multinomial(torch.tensor(p, device=d).expand(5, 4), 3, r,
                                        generator=torch.Generator(device=d).manual_seed(11)))
             for d in ("cpu", device) for r in (False, True)]
    np.testing.assert_array_equal(draws[0], draws[2])
    np.testing.assert_array_equal(draws[1], draws[3])
    for bad, msg in [((torch.tensor(0.5), 1), "prob_dist must be 1 or 2 dim"),
                     ((torch.ones((2, 2, 2)), 1), "prob_dist must be 1 or 2 dim"),
                     ((torch.tensor([1, 2]), 1), "multinomial only supports floating-point dtypes for input, got: Long"),
                     ((torch.tensor([1.0, -2.0]), 1), r"probability tensor contains either `inf`, `nan` or element < 0"),
                     ((torch.tensor([1.0, float("inf")]), 1), r"probability tensor contains either `inf`, `nan` or element < 0"),
                     ((torch.tensor([[0.0, 0.0], [1.0, 1.0]]), 1), r"invalid multinomial distribution \(sum of"),
                     ((torch.ones(4), 0), "cannot sample n_sample <= 0 samples"),
                     ((torch.ones(4), 5), r"cannot sample n_sample > prob_dist.size\(-1\) samples without replacement")]:
        with pytest.raises(RuntimeError, match="^" + msg):
            torch.multinomial(bad[0].to(device), bad[1])
