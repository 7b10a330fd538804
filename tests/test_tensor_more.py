"""Tests for csrc/tensor_more.c and python/ctorch/_linalg_utils.py: the in-place scans and addr_, the
in-place samplers (cauchy_, log_normal_, geometric_), Tensor.bernoulli, the metadata and storage ops
(as_strided_, resize_, resize_as_, set_, is_set_to, dim_order, new_empty_strided, new, share_memory_),
apply_/map_/map2_, torch.is_floating_point / get_device / is_storage / nonzero_static and the removed
linalg functions. NumPy is the oracle; messages, dtypes and grad_fn names are the reference PyTorch's."""
import os

import warnings

import numpy as np
import pytest

import ctorch
from conftest import assert_close, to_numpy
from ctorch.autograd import gradcheck


# --- cumsum_ / cumprod_ / addr_ -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_cumsum_cumprod_inplace(device, dtype):
    a = np.arange(1, 7).reshape(2, 3).astype(dtype)
    for name, ref in (("cumsum", np.cumsum), ("cumprod", np.cumprod)):
        for dim in (0, -1):
            t = ctorch.tensor(a, device=device)
            tt = ctorch.tensor(a.T.copy(), device=device).t()  # transposed layout
            assert getattr(t, name + "_")(dim) is t
            getattr(tt, name + "_")(dim, dtype=getattr(ctorch, dtype))
            np.testing.assert_array_equal(to_numpy(t), ref(a, axis=dim))
            np.testing.assert_array_equal(to_numpy(tt), ref(a, axis=dim))
    z = ctorch.tensor(5.0, device=device)
    assert z.cumsum_(0).item() == 5.0


def test_cumsum_inplace_errors_and_grad():
    with pytest.raises(RuntimeError, match="Bad in-place call: input tensor dtype int and output tensor dtype float "
                                           "should match"):
        ctorch.ones(3, dtype=ctorch.int32).cumsum_(0, dtype=ctorch.float32)
    with pytest.raises(NotImplementedError, match="\"cumprod_out_cpu\" not implemented for 'Bool'"):
        ctorch.ones(3, dtype=ctorch.bool).cumprod_(0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        ctorch.ones(3).cumsum_(1)
    with pytest.raises(IndexError, match="Dimension out of range"):  # the dim before the dtype, as PyTorch
        ctorch.ones(3, dtype=ctorch.bool).cumsum_(1)
    x = ctorch.rand(2, 3, dtype=ctorch.float64, requires_grad=True)
    y = x.clone()
    y.cumprod_(1)
    assert y.grad_fn.name() == "CumprodBackward0"
    assert gradcheck(lambda v: v.clone().cumsum_(0), (x,))
    assert gradcheck(lambda v: v.clone().cumprod_(1), (x,))


def test_addr_inplace(device):
    rng = np.random.default_rng(0)
    m, v1, v2 = rng.standard_normal((3, 2)), rng.standard_normal(3), rng.standard_normal(2)
    t = ctorch.tensor(m, device=device)
    assert t.addr_(ctorch.tensor(v1, device=device), ctorch.tensor(v2, device=device), beta=2, alpha=0.5) is t
    assert_close(t, 2 * m + 0.5 * np.outer(v1, v2))
    ti = ctorch.ones(2, 2, dtype=ctorch.int64, device=device)
    ti.addr_(ctorch.tensor([1, 2], device=device), ctorch.tensor([3, 4], device=device))
    np.testing.assert_array_equal(to_numpy(ti), 1 + np.outer([1, 2], [3, 4]))
    with pytest.raises(RuntimeError, match="2D tensor expected, got 1D tensor for input"):
        ctorch.ones(3).addr_(ctorch.ones(3), ctorch.ones(3))
    with pytest.raises(RuntimeError, match=r"size mismatch, input: \[3, 2\], v1: \[3\], v2: \[3\]"):
        ctorch.ones(3, 2).addr_(ctorch.ones(3), ctorch.ones(3))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        ctorch.ones(3, 3, dtype=ctorch.int64).addr_(ctorch.ones(3), ctorch.ones(3))
    x = ctorch.rand(3, 2, dtype=ctorch.float64, requires_grad=True)
    a, b = ctorch.rand(3, dtype=ctorch.float64, requires_grad=True), ctorch.rand(2, dtype=ctorch.float64,
                                                                                requires_grad=True)
    # float32 vectors into a float64 input: the product in float64 (it was rounded to float32)
    f1, f2 = np.float32(0.1), np.float32(0.7)
    r = ctorch.zeros(1, 1, dtype=ctorch.float64).addr_(ctorch.tensor([f1]), ctorch.tensor([f2]))
    assert to_numpy(r)[0, 0] == float(f1) * float(f2)
    # a bool result takes int beta / alpha as truth values; a float one is refused
    tb = ctorch.tensor([[True, False], [False, False]], device=device)
    vb = ctorch.tensor([True, False], device=device)
    np.testing.assert_array_equal(to_numpy(tb.clone().addr_(vb, vb, beta=0, alpha=2)), [[True, False], [False, False]])
    np.testing.assert_array_equal(to_numpy(ctorch.addr(tb, vb, ~vb, beta=3, alpha=0)), to_numpy(tb))
    with pytest.raises(RuntimeError, match="For integral input tensors, argument beta must not be a floating point"):
        ctorch.addr(tb, vb, vb, beta=0.5)
    with pytest.raises(RuntimeError, match="Boolean beta only supported for Boolean results."):
        ctorch.addr(ctorch.ones(2, 2), ctorch.ones(2), ctorch.ones(2), beta=True)
    assert x.clone().addr_(a, b).grad_fn.name() == "AddrBackward0"
    assert gradcheck(lambda m_, p, q: m_.clone().addr_(p, q, beta=0.5, alpha=2.0), (x, a, b))


# --- samplers ------------------------------------------------------------------------------------------
def test_samplers(device):
    n = 20000
    g = ctorch.Generator(device=device).manual_seed(3)
    c = ctorch.empty(n, device=device).cauchy_(1.0, 2.0, generator=g)
    assert abs(float(np.median(to_numpy(c))) - 1.0) < 0.1  # median of Cauchy(1, 2)
    q = np.quantile(to_numpy(c), [0.25, 0.75])
    assert abs(q[0] + 1.0) < 0.15 and abs(q[1] - 3.0) < 0.15  # quartiles median -+ sigma
    ln = ctorch.empty(n, dtype=ctorch.float64, device=device).log_normal_(0.5, 0.25)
    lg = np.log(to_numpy(ln))
    assert abs(lg.mean() - 0.5) < 0.01 and abs(lg.std() - 0.25) < 0.01
    ge = ctorch.empty(n, dtype=ctorch.int64, device=device).geometric_(0.25)
    v = to_numpy(ge)
    assert v.min() >= 1 and abs(v.mean() - 4.0) < 0.1  # support 1, 2, ...; mean 1/p
    # same generator state -> same draws
    a = ctorch.empty(5, device=device).cauchy_(generator=ctorch.Generator(device=device).manual_seed(7))
    b = ctorch.empty(5, device=device).cauchy_(generator=ctorch.Generator(device=device).manual_seed(7))
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))


def test_sampler_errors_and_grad_fn():
    with pytest.raises(RuntimeError, match="Cauchy distribution is a continuous probability distribution. dtype must "
                                           "be a floating point but you specified long int"):
        ctorch.ones(3, dtype=ctorch.int64).cauchy_()
    with pytest.raises(NotImplementedError, match="\"log_normal_cpu\" not implemented for 'Long'"):
        ctorch.ones(3, dtype=ctorch.int64).log_normal_()
    with pytest.raises(RuntimeError, match=r"geometric_ expects p to be in \(0, 1\), but got p=1.5"):
        ctorch.ones(3).geometric_(1.5)
    with pytest.raises(RuntimeError, match="cauchy_ expects sigma > 0.0, but found sigma=-1"):
        ctorch.ones(3).cauchy_(sigma=-1)
    with pytest.raises(RuntimeError, match="log_normal_ expects std > 0.0, but found std=0"):
        ctorch.ones(3).log_normal_(std=0)
    names = {"cauchy_": "CauchyBackward0", "log_normal_": "LogNormalBackward0", "geometric_": "GeometricBackward0"}
    for name, node in names.items():
        x = ctorch.zeros(3, requires_grad=True)
        y = x.clone()
        getattr(y, name)(*((0.5,) if name == "geometric_" else ()))
        assert y.grad_fn.name() == node
        y.sum().backward()
        np.testing.assert_array_equal(to_numpy(x.grad), np.zeros(3))


def test_bernoulli_method(device):
    p = ctorch.tensor([0.0, 1.0, 0.0, 1.0], device=device)
    np.testing.assert_array_equal(to_numpy(p.bernoulli()), [0, 1, 0, 1])
    np.testing.assert_array_equal(to_numpy(ctorch.zeros(4, device=device).bernoulli(p=1.0)), np.ones(4))
    g1, g2 = ctorch.Generator(device=device).manual_seed(1), ctorch.Generator(device=device).manual_seed(1)
    h = ctorch.full((50,), 0.5, device=device)
    np.testing.assert_array_equal(to_numpy(h.bernoulli(generator=g1)), to_numpy(h.bernoulli(generator=g2)))
    with pytest.raises(RuntimeError):
        ctorch.full((3,), 2.0).bernoulli()
    x = ctorch.full((3,), 0.5, requires_grad=True)
    assert x.bernoulli().grad_fn.name() == "BernoulliBackward0"


# --- metadata and storage ------------------------------------------------------------------------------
def test_as_strided_inplace(device):
    base = ctorch.arange(12.0, device=device)
    t = base[:]
    assert t.as_strided_((2, 3), (1, 2), 1) is t
    assert t.shape == (2, 3) and t.stride() == (1, 2) and t.storage_offset() == 1
    np.testing.assert_array_equal(to_numpy(t), np.arange(12.0)[1:][np.array([[0, 2, 4], [1, 3, 5]])])
    u = ctorch.as_strided_(ctorch.arange(6, device=device), (3,), (2,))
    np.testing.assert_array_equal(to_numpy(u), [0, 2, 4])
    with pytest.raises(RuntimeError, match="out of bounds for storage of size"):
        ctorch.ones(3).as_strided_((4,), (1,))


def test_resize(device):
    t = ctorch.arange(6.0, device=device)
    v = t.view(2, 3)
    assert t.resize_(2, 2) is t and t.shape == (2, 2) and t.stride() == (2, 1)
    np.testing.assert_array_equal(to_numpy(t), [[0, 1], [2, 3]])
    t.resize_(4, 4)  # grows the storage, old contents kept, views see the same storage
    assert t.untyped_storage().nbytes() == 64
    np.testing.assert_array_equal(to_numpy(t).reshape(-1)[:6], np.arange(6.0))
    v.fill_(7)
    assert to_numpy(t)[0, 0] == 7
    tt = ctorch.ones(2, 3, device=device).t()
    assert tt.resize_(3, 2).stride() == (1, 3)  # same sizes: strides kept
    assert tt.resize_(2, 3).stride() == (3, 1)
    r = ctorch.ones(2, 3, device=device)
    assert ctorch.resize_as_(r, ctorch.ones(3, 4)) is r and r.shape == (3, 4)
    assert r.resize_as_(ctorch.ones(0)).shape == (0,)
    e = ctorch.ones(2).resize_(())
    assert e.shape == () and e.item() == 1.0
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        ctorch.ones(3, requires_grad=True).resize_(2)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        ctorch.ones(3, requires_grad=True).resize_as_(ctorch.ones(2))
    with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
        ctorch.ones(3).resize_(-1)
    with pytest.raises(TypeError, match="argument 'the_template'"):
        ctorch.ones(3).resize_as_([1])
    # memory_format=: the new sizes laid out in that format (also when the sizes are unchanged)
    assert ctorch.zeros(3, device=device).resize_(2, 3, 4, 5, memory_format=ctorch.channels_last).stride() == \
        (60, 1, 15, 3)
    assert ctorch.zeros(4, 6, device=device)[:, ::2].resize_(4, 3, memory_format=ctorch.contiguous_format).stride() \
        == (3, 1)
    assert ctorch.zeros(3).resize_as_(ctorch.zeros(2, 3, 4, 5, 6), memory_format=ctorch.channels_last_3d).stride() \
        == (360, 1, 90, 18, 3)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        ctorch.zeros(3).resize_(2, 3, 4, memory_format=ctorch.channels_last)
    with pytest.raises(RuntimeError, match="Unsupported memory formatPreserve"):
        ctorch.zeros(3).resize_(2, memory_format=ctorch.preserve_format)
    with pytest.raises(TypeError, match="resize_\\(\\) got an unexpected keyword argument 'foo'"):
        ctorch.zeros(3).resize_(2, foo=1)
    # sizes whose byte count overflows: refused (the product wrapped to a tiny storage under a huge tensor)
    big = ctorch.ones(3, device=device)
    with pytest.raises(RuntimeError, match=r"Storage size calculation overflowed with sizes=\[2147483648, 2147483648\]"):
        big.resize_(2 ** 31, 2 ** 31)
    assert big.shape == (3,)


def test_resize_borrowed_storage():
    a = np.zeros(3, dtype=np.float32)
    t = ctorch.from_numpy(a)
    t.resize_(2)
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        t.resize_(10)


def test_set(device):
    src = ctorch.arange(6.0, device=device).view(2, 3)
    t = ctorch.zeros(1, device=device)
    assert t.set_(src) is t and t.is_set_to(src) and src.is_set_to(t)
    assert not t.is_set_to(src.t()) and not t.is_set_to(src.clone())
    t.fill_(1)
    np.testing.assert_array_equal(to_numpy(src), np.ones((2, 3)))
    s = ctorch.arange(4.0, device=device).untyped_storage()
    u = ctorch.zeros(1, device=device).set_(s, 1, (2,), (1,))
    np.testing.assert_array_equal(to_numpy(u), [1, 2])
    w = ctorch.zeros(1, device=device).set_(s)
    np.testing.assert_array_equal(to_numpy(w), [0, 1, 2, 3])
    assert ctorch.ones(3, device=device).set_().shape == (0,)
    with pytest.raises(RuntimeError, match="Could not set tensor of type long int to a tensor of type float"):
        ctorch.ones(3).set_(ctorch.ones(2, dtype=ctorch.int64))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        ctorch.ones(3, requires_grad=True).set_()
    with pytest.raises(TypeError, match="is_set_to\\(\\): argument 'tensor'"):
        ctorch.ones(3).is_set_to(3)
    # a TypedStorage (Tensor.storage()) of the same dtype; negative strides address memory before the offset
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        typed = ctorch.arange(4.0).storage()
        np.testing.assert_array_equal(to_numpy(ctorch.zeros(1).set_(typed)), [0, 1, 2, 3])
        with pytest.raises(RuntimeError, match="Expected a Storage of type float or an UntypedStorage, but got type "
                                               "Long for argument 1 'storage'"):
            ctorch.zeros(1).set_(ctorch.arange(4).storage())
    with pytest.raises(RuntimeError, match=r"Storage size calculation overflowed with sizes=\[2, 2\] and "
                                           r"strides=\[-1, 1\]"):
        ctorch.zeros(1, device=device).set_(s, 0, (2, 2), (-1, 1))
    with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
        ctorch.zeros(1, device=device).set_(s, 0, (-2,))
    assert ctorch.zeros(1, device=device).set_(s, 0, (0,), (-1,)).shape == (0,)  # empty: nothing addressed
    # geometry past int64 or with negative strides: PyTorch's error, t unchanged (it was set, then read outside)
    for size, stride, offset in (((2,), (2 ** 62,), 0), ((3,), (-1,), 2), ((1,), (1,), 2 ** 61)):
        t = ctorch.zeros(2, device=device)
        with pytest.raises(RuntimeError, match=r"Storage size calculation overflowed with sizes=\[%d\] and strides=\[%d\]"
                                                % (size[0], stride[0])):
            t.set_(s, offset, size, stride)
        assert t.shape == (2,) and t.untyped_storage().nbytes() == 8 and t.storage_offset() == 0
    np.testing.assert_array_equal(to_numpy(t), [0, 0])
    if device == "cuda":
        with pytest.raises(RuntimeError, match='Attempted to set the storage of a tensor on device "cpu" to a storage '
                                               'on different device "cuda:0".  This is no longer allowed'):
            ctorch.zeros(2).set_(s)


def test_set_failure_keeps_tensor():
    """A storage that cannot grow to the new geometry: the error, and the tensor keeps its own storage (it used to
    take the small one with its old sizes, reading past its end)"""
    borrowed = ctorch.from_numpy(np.arange(4, dtype=np.float32)).untyped_storage()
    u = ctorch.zeros(100)
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        u.set_(borrowed, 0, (200,), (1,))
    assert u.shape == (100,) and u.untyped_storage().nbytes() == 400 and u.sum().item() == 0


@pytest.mark.parametrize("case", range(9))
def test_dim_order(case):
    e = ctorch.empty
    t, order = [
        (e(2, 3, 4), (0, 1, 2)),
        (e(2, 3, 4).permute(2, 0, 1), (1, 2, 0)),
        (e(2, 1, 4).transpose(0, 1), (0, 1, 2)),
        (e(2, 3, 4).as_strided((2, 3, 4), (1, 1, 1)), (2, 1, 0)),
        (e(2, 3, 4, 5).permute(0, 2, 3, 1), (0, 3, 1, 2)),
        (e(2, 4, 5, 3).permute(0, 3, 1, 2), (0, 2, 3, 1)),  # channels_last
        (e(4, 3).t(), (1, 0)),
        (e(5), (0,)),
        (e(()), ()),
    ][case]
    assert t.dim_order() == order
    if case in (2, 3):
        with pytest.raises(RuntimeError, match="does not have unique dim order"):
            t.dim_order(ambiguity_check=True)
    elif case in (0, 1, 4, 5, 6, 7):
        assert t.dim_order(ambiguity_check=True) == order
    with pytest.raises(TypeError, match="must be a bool or a list of memory formats"):
        t.dim_order(ambiguity_check=3)


def test_dim_order_memory_formats():
    x = ctorch.empty(2, 4, 5, 1).permute(0, 3, 1, 2)  # channels_last and contiguous (one channel): ambiguous
    assert x.dim_order() == (0, 2, 3, 1)
    with pytest.raises(RuntimeError, match="The tensor does not have unique dim order.$"):
        x.dim_order(ambiguity_check=[ctorch.channels_last])
    with pytest.raises(RuntimeError, match="cannot map to exact one"):
        x.dim_order(ambiguity_check=[ctorch.contiguous_format, ctorch.channels_last])
    y = ctorch.empty(2, 1, 4, 5).permute(0, 2, 3, 1)
    assert y.dim_order(ambiguity_check=[ctorch.contiguous_format, ctorch.channels_last]) == (0, 1, 2, 3)
    with pytest.raises(RuntimeError, match="cannot map to exact one"):
        y.dim_order(ambiguity_check=[ctorch.channels_last])


def test_new_factories(device):
    t = ctorch.ones(3, dtype=ctorch.int32, device=device)
    e = t.new_empty_strided((2, 3), (1, 2))
    assert e.shape == (2, 3) and e.stride() == (1, 2) and e.dtype == ctorch.int32 and e.device == t.device
    f = t.new_empty_strided((2,), (1,), dtype=ctorch.float64, requires_grad=True)
    assert f.dtype == ctorch.float64 and f.requires_grad
    assert t.const_data_ptr() == t.data_ptr()
    c = ctorch.ones(3)
    assert c.new(2, 3).shape == (2, 3) and c.new().shape == (0,)
    n = t.new([1, 2]) if device == "cpu" else None
    if n is not None:
        assert n.dtype == ctorch.int32 and n.tolist() == [1, 2]
    with pytest.raises(TypeError, match=r"expected TensorOptions\(dtype=float"):
        c.new(ctorch.ones(2, dtype=ctorch.int64))


def test_share_memory():
    t = ctorch.arange(4.0)
    assert not t.is_shared()
    v = t[1:]
    assert t.share_memory_() is t and t.is_shared() and v.is_shared()
    np.testing.assert_array_equal(to_numpy(v), [1, 2, 3])  # contents and views kept
    pid = os.fork()
    if pid == 0:  # the child's write is seen by the parent: the memory is shared
        t[0] = 42.0
        os._exit(0)
    os.waitpid(pid, 0)
    assert t[0].item() == 42.0
    assert t.share_memory_() is t
    with pytest.raises(RuntimeError, match="not resizable"):
        t.resize_(100)


# --- apply_ / map_ / map2_ -----------------------------------------------------------------------------
def test_apply_map():
    t = ctorch.arange(6.0).view(2, 3).t()  # non-contiguous: written back in place
    assert t.apply_(lambda v: v * v + 1) is t
    np.testing.assert_array_equal(to_numpy(t), (np.arange(6.0).reshape(2, 3) ** 2 + 1).T)
    i = ctorch.ones(3, dtype=ctorch.int64).apply_(lambda v: v * 1.5)
    assert i.tolist() == [1, 1, 1]
    b = ctorch.tensor([True, False]).apply_(lambda v: not v)
    assert b.tolist() == [False, True]
    m = ctorch.ones(2, 3).map_(ctorch.tensor([1.0, 2.0, 3.0]), lambda a, c: a + c)  # other broadcast
    np.testing.assert_array_equal(to_numpy(m), [[2, 3, 4], [2, 3, 4]])
    m2 = ctorch.ones(3).map2_(ctorch.full((3,), 2.0), ctorch.ones(1), lambda a, x, y: a * x + y)
    np.testing.assert_array_equal(to_numpy(m2), [3, 3, 3])
    with pytest.raises(TypeError, match="must be real number, not str"):
        ctorch.ones(3).apply_(lambda v: "a")
    with pytest.raises(ZeroDivisionError):
        ctorch.ones(3).apply_(lambda v: 1 // 0)
    with pytest.raises(RuntimeError, match=r"Can't call apply_\(\) on Variable that requires grad. "
                                           r"Use var.detach\(\).apply_\(\) instead."):
        ctorch.ones(3, requires_grad=True).apply_(lambda v: v)
    with pytest.raises(RuntimeError, match=r"Can't call map2_\(\) on Variable that requires grad"):
        ctorch.ones(3).map2_(ctorch.ones(3), ctorch.ones(3, requires_grad=True), lambda a, b, c: a)
    with pytest.raises(TypeError, match=r"map_: expected torch.FloatTensor for 'other' \(got torch.LongTensor\)"):
        ctorch.ones(3).map_(ctorch.ones(3, dtype=ctorch.int64), lambda a, b: a)
    with pytest.raises(TypeError, match=r"map_\(\): argument 'other' \(position 1\) must be Tensor, not list"):
        ctorch.ones(3).map_([1, 2], lambda a, b: a)
    with pytest.raises(RuntimeError, match="The expanded size of the tensor"):
        ctorch.ones(3).map_(ctorch.ones(2), lambda a, b: a)


def test_apply_cuda_raises(device):
    if device == "cpu":
        pytest.skip("the CUDA refusal")
    with pytest.raises(TypeError, match="apply_ is only implemented on CPU tensors"):
        ctorch.ones(3, device=device).apply_(lambda v: v)


# --- torch namespace -----------------------------------------------------------------------------------
def test_namespace_predicates(device):
    assert ctorch.is_floating_point(ctorch.ones(2, device=device))
    assert not ctorch.is_floating_point(ctorch.ones(2, dtype=ctorch.int64, device=device))
    assert ctorch.get_device(ctorch.ones(2, device=device)) == (-1 if device == "cpu" else 0)
    with pytest.raises(TypeError, match=r"is_floating_point\(\): argument 'input' \(position 1\) must be Tensor, "
                                        r"not float"):
        ctorch.is_floating_point(1.0)
    assert ctorch.is_storage(ctorch.ones(2).untyped_storage())
    with warnings.catch_warnings():  # .storage()'s deprecation warning comes once a process
        warnings.simplefilter("ignore")
        assert ctorch.is_storage(ctorch.ones(2).storage())
    assert not ctorch.is_storage(ctorch.ones(2))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_nonzero_static(device, dtype):
    a = np.array([[0, 1, 0], [2, 0, 3]]).astype(dtype)
    t = ctorch.tensor(a, device=device)
    ref = np.argwhere(a)
    r = ctorch.nonzero_static(t, size=2)
    assert r.dtype == ctorch.int64
    np.testing.assert_array_equal(to_numpy(r), ref[:2])
    p = t.nonzero_static(size=5, fill_value=-7)
    np.testing.assert_array_equal(to_numpy(p), np.concatenate([ref, np.full((2, 2), -7)]))
    np.testing.assert_array_equal(to_numpy(ctorch.nonzero_static(t, size=0)), np.zeros((0, 2)))
    assert ctorch.nonzero_static(ctorch.tensor(3, device=device), size=2).shape == (2, 0)
    with pytest.raises(RuntimeError, match="nonzero_static: 'size' must be an non-negative integer"):
        ctorch.nonzero_static(t, size=-1)
    o = ctorch.zeros(5, 2, dtype=ctorch.int64, device=device)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        assert ctorch.nonzero_static(t, size=4, out=o) is o
    np.testing.assert_array_equal(to_numpy(o), np.concatenate([ref, [[-1, -1]]]))
    with pytest.raises(RuntimeError, match="nonzero_static: Expected out tensor to have scalar type Long but got "
                                           "scalar typeFloat"):
        ctorch.nonzero_static(t, size=3, out=ctorch.zeros(0, device=device))


@pytest.mark.parametrize("name", ["solve", "lstsq", "symeig", "eig", "matrix_rank"])
def test_removed_linalg(name):
    x = ctorch.ones(2, 2)
    args = (x, x) if name in ("solve", "lstsq") else (x,)
    with pytest.raises(RuntimeError, match="This function was deprecated since version 1.9 and is now removed.") as info:
        getattr(ctorch, name)(*args)
    assert "torch.linalg" in str(info.value)
    if name != "matrix_rank":
        with pytest.raises(RuntimeError) as method_info:
            getattr(x, name)(*args[1:])
        assert str(method_info.value) == str(info.value)
    with pytest.raises(TypeError):
        getattr(ctorch, name)()


# --- segment_reduce ------------------------------------------------------------------------------------
def _segments_ref(a, lengths, reduce, initial=None):
    out, start = [], 0
    empty = {"sum": 0.0, "mean": np.nan, "max": -np.inf, "min": np.inf, "prod": 1.0}[reduce]
    for n in lengths:
        seg = a[start:start + n]
        start += n
        if initial is not None:
            seg_i = np.concatenate([seg, [initial]])
        if n == 0:
            out.append(empty if initial is None else initial)
        elif reduce == "mean":
            out.append((seg.sum() + (initial or 0)) / n)
        else:
            f = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}[reduce]
            out.append(f(seg if initial is None else seg_i))
    return np.array(out)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_segment_reduce(device, reduce):
    a = np.array([0.5, -1.0, 2.0, 3.0, -0.25, 1.5])
    lengths = [2, 0, 4]
    for dtype in ("float32", "float64"):
        d = ctorch.tensor(a.astype(dtype), device=device)
        ln = ctorch.tensor(lengths, device=device)
        r = ctorch.segment_reduce(d, reduce, lengths=ln)
        assert r.dtype == d.dtype
        assert_close(r, _segments_ref(a, lengths, reduce))
        off = ctorch.tensor([0, 2, 2, 6], dtype=ctorch.int32, device=device)
        assert_close(ctorch.segment_reduce(d, reduce, offsets=off, initial=2.0), _segments_ref(a, lengths, reduce, 2.0))
    # 2-d lengths: a segmentation per leading row, along axis 1; rows of trailing features reduced alike
    x = np.arange(24.0).reshape(2, 6, 2)
    ln2 = [[1, 5], [3, 3]]
    r2 = ctorch.segment_reduce(ctorch.tensor(x, device=device), reduce, lengths=ctorch.tensor(ln2, device=device),
                               axis=1)
    ref = np.stack([np.stack([_segments_ref(x[b, :, f], ln2[b], reduce) for f in range(2)], -1) for b in range(2)])
    assert_close(r2, ref)


def test_segment_reduce_grad_and_errors():
    x = ctorch.tensor([0.5, -1.0, 2.0, 3.0, -0.25, 1.5], dtype=ctorch.float64, requires_grad=True)
    ln = ctorch.tensor([2, 0, 4])
    for reduce in ("sum", "max", "prod"):
        assert gradcheck(lambda v: ctorch.segment_reduce(v, reduce, lengths=ln, initial=1.0), (x,))
    assert gradcheck(lambda v: ctorch.segment_reduce(v, "mean", lengths=ctorch.tensor([2, 4])), (x,))
    r = ctorch.segment_reduce(ctorch.arange(6.0), "sum", lengths=ctorch.tensor([2, 0, 3]), unsafe=True)
    np.testing.assert_array_equal(to_numpy(r), [1, 0, 9])
    d = ctorch.arange(6.0)
    cases = [
        (dict(lengths=ctorch.tensor([2, 0, 3])), RuntimeError, "Expected all rows of lengths along axis to sum"),
        (dict(), RuntimeError, "Either lengths or offsets must be defined"),
        (dict(lengths=ctorch.tensor([2, -1, 5])), RuntimeError, "lengths contains negative value!"),
        (dict(lengths=ctorch.tensor([2.0, 4.0])), NotImplementedError, "not implemented for 'Float'"),
        (dict(lengths=ctorch.tensor([[2, 4]])), RuntimeError, "Expected data.dim\\(\\) >= lengths_value.dim\\(\\)"),
        (dict(lengths=ctorch.tensor([6]), axis=1), IndexError, "Dimension out of range"),
        (dict(indices=ctorch.tensor([0, 0, 1, 1, 1, 1])), RuntimeError, "indices based reduction is not supported"),
    ]
    for kw, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            ctorch.segment_reduce(d, "sum", **kw)
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin, got foo"):
        ctorch.segment_reduce(d, "foo", lengths=ctorch.tensor([6]))
    with pytest.raises(NotImplementedError, match="\"_segment_reduce_cpu\" not implemented for 'Long'"):
        ctorch.segment_reduce(ctorch.arange(6), "sum", lengths=ctorch.tensor([6]))
    with pytest.raises(RuntimeError, match="lengths contains negative value!"):  # the lengths before the dtype
        ctorch.segment_reduce(ctorch.arange(6), "sum", lengths=ctorch.tensor([-1, 7]))
    with pytest.raises(RuntimeError, match="Expected axis to be the last dimension of lengths but got 1."):
        ctorch.segment_reduce(ctorch.ones(6, 2), "sum", lengths=ctorch.tensor([2, 4]), axis=1)


# --- functional forms of nn layers ---------------------------------------------------------------------
def test_rnn_functions(device):
    rng = np.random.default_rng(1)
    x, h0 = rng.standard_normal((3, 2, 2)), rng.standard_normal((1, 2, 3))
    w_ih, w_hh, b_ih, b_hh = (rng.standard_normal(s) for s in ((3, 2), (3, 3), (3,), (3,)))
    t = lambda a: ctorch.tensor(a, device=device)  # noqa: E731
    for name, act in (("rnn_tanh", np.tanh), ("rnn_relu", lambda v: np.maximum(v, 0))):
        out, hn = getattr(ctorch, name)(t(x), t(h0), [t(w_ih), t(w_hh), t(b_ih), t(b_hh)], True, 1, 0.0, False,
                                        False, False)
        h, ref = h0[0], []
        for step in range(3):
            h = act(x[step] @ w_ih.T + b_ih + h @ w_hh.T + b_hh)
            ref.append(h)
        assert_close(out, np.stack(ref))
        assert_close(hn, h[None])
    # batch_first and the packed overload agree with the plain one
    out_bf, _ = ctorch.rnn_tanh(t(x.transpose(1, 0, 2)), t(h0), [t(w_ih), t(w_hh)], False, 1, 0.0, False, False, True)
    out_p, _ = ctorch.rnn_tanh(t(x), t(h0), [t(w_ih), t(w_hh)], False, 1, 0.0, False, False, False)
    assert_close(out_bf, to_numpy(out_p).transpose(1, 0, 2))
    g_ih, g_hh = rng.standard_normal((12, 2)), rng.standard_normal((12, 4))
    out_g, h_g = ctorch.gru(t(x), t(np.zeros((1, 2, 4))), [t(g_ih), t(g_hh)], False, 1, 0.0, False, False, False)
    assert out_g.shape == (3, 2, 4) and h_g.shape == (1, 2, 4)
    l_ih, l_hh = rng.standard_normal((8, 2)), rng.standard_normal((8, 2))
    z = t(np.zeros((1, 1, 2)))
    seq = t(x[:, :1])
    out_l, h_l, c_l = ctorch.lstm(seq, (z, z), [t(l_ih), t(l_hh)], False, 1, 0.0, False, False, False)
    out_pk, h_pk, c_pk = ctorch.lstm(seq.reshape(3, 2), ctorch.tensor([1, 1, 1]), (z, z), [t(l_ih), t(l_hh)], False,
                                     1, 0.0, False, False)
    assert_close(out_pk, to_numpy(out_l).reshape(3, 2))
    assert_close(c_pk, to_numpy(c_l))
    with pytest.raises(TypeError, match="gru\\(\\) missing required argument 'batch_first'"):
        ctorch.gru(t(x), t(np.zeros((1, 2, 4))), [t(g_ih), t(g_hh)], False, 1, 0.0, False, False)


def test_convolution_and_conv_tbc(device):
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((1, 2, 5)), rng.standard_normal((3, 2, 2)), rng.standard_normal(3)
    t = lambda a: ctorch.tensor(a, device=device)  # noqa: E731
    r = ctorch.convolution(t(x), t(w), t(b), [2], [1], [1], False, [0], 1)
    xp = np.pad(x[0], ((0, 0), (1, 1)))
    ref = np.stack([[(xp[:, 2 * i:2 * i + 2] * w[o]).sum() + b[o] for i in range(3)] for o in range(3)])
    assert_close(r, ref[None])
    xt = rng.standard_normal((1, 3, 2))
    rt = ctorch.convolution(t(xt), t(w), None, [2], [0], [1], True, [1], 1)
    assert_close(rt, to_numpy(ctorch.conv_transpose1d(t(xt), t(w), None, 2, 0, 1)))
    x2 = ctorch.tensor(rng.standard_normal((1, 2, 4, 4)), device=device, requires_grad=True)
    r2 = ctorch.convolution(x2, t(rng.standard_normal((1, 2, 2, 2))), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    assert r2.shape == (1, 1, 3, 3) and r2.grad_fn.name() == "ConvolutionBackward0"
    with pytest.raises(RuntimeError, match="weight should have 3, 4 or 5 dimensions"):
        ctorch.convolution(t(x), t(w[0]), None, [1], [0], [1], False, [0], 1)
    # conv_tbc: (T, B, C_in) * (K, C_in, C_out)
    xi, wi, bi = rng.standard_normal((5, 2, 3)), rng.standard_normal((2, 3, 4)), rng.standard_normal(4)
    out = ctorch.conv_tbc(t(xi), t(wi), t(bi), 1)
    xpad = np.pad(xi, ((1, 1), (0, 0), (0, 0)))
    ref = np.stack([np.einsum("kbc,kco->bo", xpad[s:s + 2], wi) + bi for s in range(6)])
    assert out.is_contiguous()
    assert_close(out, ref)
    for bad, msg in (((5, 2), (2, 3, 4), (4,)), "Input must have 3 dims"), (((5, 2, 3), (2, 4, 4), (4,)),
                                                                             "Input dim 2 \\(input channels\\)"), \
                    (((5, 2, 3), (2, 3, 4), (5,)), "Bias size must equal dim 2"):
        with pytest.raises(RuntimeError, match=msg):
            ctorch.conv_tbc(*(ctorch.ones(*s) for s in bad))
    xg = ctorch.tensor(xi, dtype=ctorch.float64, requires_grad=True)
    assert gradcheck(lambda v: ctorch.conv_tbc(v, ctorch.tensor(wi), ctorch.tensor(bi), 1), (xg,))


def test_batch_norm_update_stats(device):
    x = np.arange(24.0).reshape(2, 3, 4) / 10
    rm, rv = ctorch.zeros(3, device=device), ctorch.ones(3, device=device)
    mean, var = ctorch.batch_norm_update_stats(ctorch.tensor(x, dtype=ctorch.float32, device=device), rm, rv, 0.1)
    m_ref, v_ref = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    assert_close(mean, m_ref)
    assert_close(var, v_ref)
    assert_close(rm, 0.1 * m_ref)
    assert_close(rv, 0.9 + 0.1 * x.var(axis=(0, 2), ddof=1))
    m16, _ = ctorch.batch_norm_update_stats(ctorch.ones(3, 2, dtype=ctorch.float16, device=device),
                                            ctorch.zeros(2, device=device), None, 0.1)
    assert m16.dtype == ctorch.float32
    with pytest.raises(IndexError, match="Dimension out of range"):
        ctorch.batch_norm_update_stats(ctorch.ones(3), None, None, 0.1)


def test_cond(device):
    x = ctorch.ones(2, device=device)
    inc, dec = (lambda a: a + 1), (lambda a: a - 1)
    np.testing.assert_array_equal(to_numpy(ctorch.cond(True, inc, dec, (x,))), [2, 2])
    np.testing.assert_array_equal(to_numpy(ctorch.cond(ctorch.tensor(False, device=device), inc, dec, [x])), [0, 0])
    np.testing.assert_array_equal(to_numpy(ctorch.cond(ctorch.tensor([1.0]), inc, dec, (x,))), [2, 2])
    assert ctorch.cond(0, lambda: 1, lambda: 2) == 2
    with pytest.raises(RuntimeError, match="Expected pred to be bool or single-element tensor, but got tensor"):
        ctorch.cond(ctorch.tensor([True, False]), inc, dec, (x,))
    with pytest.raises(RuntimeError, match="Expected pred to be bool or tensor, but got None."):
        ctorch.cond(None, inc, dec, (x,))
    with pytest.raises(RuntimeError, match="Expect both branches to be callable."):
        ctorch.cond(ctorch.tensor(True), 3, dec, (x,))
    with pytest.raises(RuntimeError, match="only consists of tensor leaves, but got"):
        ctorch.cond(ctorch.tensor(True), inc, dec, (x, {"a": [2]}))


def test_post_accumulate_grad_hook():
    x = ctorch.ones(2, requires_grad=True)
    seen = []
    h = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert [s.tolist() for s in seen] == [[3.0, 3.0], [6.0, 6.0]]  # after each accumulation
    h.remove()
    (x * 3).sum().backward()
    assert len(seen) == 2
    y = ctorch.ones(2, requires_grad=True)
    y.register_hook(lambda g: g * 10)  # grad hooks run first, then the accumulation, then the post hook
    y.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
    (y * 1).sum().backward()
    assert seen[-1].tolist() == [10.0, 10.0]
    z = ctorch.ones(2, requires_grad=True)

    def step(t):  # e.g. an optimizer step in the hook
        t.grad.zero_()

    z.register_post_accumulate_grad_hook(step)
    (z * 2).sum().backward()
    assert z.grad.tolist() == [0.0, 0.0]
    w = ctorch.ones(2, requires_grad=True)
    w.register_post_accumulate_grad_hook(lambda t: 5)
    with pytest.raises(RuntimeError, match="Tensor post accumulate grad hooks should return None."):
        (w * 2).sum().backward()
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        x.clone().register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        ctorch.ones(2).register_post_accumulate_grad_hook(lambda t: None)


def test_storage_type_and_legacy_storage_classes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ctorch.randn(3).storage_type() is ctorch.FloatStorage
        assert ctorch.arange(3).storage_type() is ctorch.LongStorage
        assert ctorch.zeros(1, dtype=ctorch.bool).storage_type() is ctorch.BoolStorage
        assert ctorch.zeros(1, dtype=ctorch.bfloat16).storage_type() is ctorch.BFloat16Storage
        assert ctorch.FloatStorage.dtype == ctorch.float32 and ctorch.cuda.FloatStorage.dtype == ctorch.float32
        assert isinstance(ctorch.randn(2).storage(), ctorch.FloatStorage)
        assert not isinstance(ctorch.randn(2).storage(), ctorch.DoubleStorage)
        assert not isinstance(ctorch.randn(2).storage(), ctorch.cuda.FloatStorage)
        assert ctorch.FloatStorage(3).size() == 3 and ctorch.IntStorage([1, 2]).tolist() == [1, 2]


def test_copy_from_python_number():
    """copy_(number): the number as a 0-d tensor source (bool, int64, float64), cast into self, as PyTorch."""
    x = ctorch.zeros(3)
    assert x.copy_(2.5) is x and x.tolist() == [2.5, 2.5, 2.5]
    i = ctorch.zeros(2, dtype=ctorch.int64)
    assert i.copy_(2.7).tolist() == [2, 2] and i.copy_(True).tolist() == [1, 1]
    with pytest.raises(TypeError, match="copy_\\(\\): argument 'src' must be Tensor, not list"):
        x.copy_([1.0, 2.0, 3.0])
    leaf = ctorch.ones(3, requires_grad=True)
    y = leaf * 2
    y.copy_(4.0)  # recorded as a copy from a constant: no gradient reaches leaf
    y.sum().backward()
    assert leaf.grad.tolist() == [0.0, 0.0, 0.0]


def test_out_edges_as_pytorch():
    # nan_to_num of an integer input: out must have the input's dtype
    with pytest.raises(RuntimeError, match="nan_to_num: dtype of out: Float should be same as input: Long"):
        ctorch.nan_to_num(ctorch.tensor([1, 2]), out=ctorch.empty(2))
    out = ctorch.empty(0, dtype=ctorch.int64)
    assert ctorch.nan_to_num(ctorch.tensor([1, 2]), out=out) is out and out.tolist() == [1, 2]
    # narrow_copy resizes its out= silently (PyTorch writes that variant by hand) and wants the input's dtype
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = ctorch.empty(5)
        assert ctorch.narrow_copy(ctorch.arange(10.0), 0, 2, 3, out=out).tolist() == [2.0, 3.0, 4.0]
    with pytest.raises(RuntimeError, match="Expected self.dtype\\(\\) == output.dtype\\(\\)"):
        ctorch.narrow_copy(ctorch.arange(10.0), 0, 2, 3, out=ctorch.empty(3, dtype=ctorch.float64))
    # tril/triu/cummax/cummin write an expanded out of the right shape (some row wins); scatter does not
    full = ctorch.tril(ctorch.arange(1.0, 10.0).reshape(3, 3))
    out = ctorch.empty(3).expand(3, 3)
    ctorch.tril(ctorch.arange(1.0, 10.0).reshape(3, 3), out=out)
    assert out[0].tolist() in full.tolist()
    x = ctorch.tensor([[3.0, 1.0], [2.0, 5.0]])
    v, i = ctorch.empty(2).expand(2, 2), ctorch.empty(2, dtype=ctorch.int64).expand(2, 2)
    ctorch.cummax(x, 0, out=(v, i))
    assert v[0].tolist() in ctorch.cummax(x, 0).values.tolist()


@pytest.mark.filterwarnings("ignore:torch.range is deprecated")
def test_factory_device_must_match_out_device_type():
    """A factory's device= of another type than out='s is PyTorch's RuntimeError, checked before any device use."""
    for make in (lambda o: ctorch.zeros(3, device="cuda", out=o), lambda o: ctorch.arange(3, device="cuda", out=o),
                 lambda o: ctorch.full((3,), 1.0, device="cuda", out=o), lambda o: ctorch.rand(3, device="cuda", out=o),
                 lambda o: ctorch.range(0, 2, device="cuda", out=o)):
        with pytest.raises(RuntimeError, match=r"device type cuda does not match device type of out parameter \(cpu\)"):
            make(ctorch.empty(3))
    out = ctorch.empty(3)
    assert ctorch.zeros(3, device="cpu", out=out) is out


def test_empty_tensor_channels_last_contiguity():
    """An empty tensor is channels_last-contiguous only by its strides, as PyTorch's (no numel shortcut):
    contiguous/to(channels_last) then give the channels_last strides and dim_order."""
    t = ctorch.empty(0, 3, 2, 2)
    assert not t.is_contiguous(memory_format=ctorch.channels_last)
    c = t.contiguous(memory_format=ctorch.channels_last)
    assert c.stride() == (12, 1, 6, 3) and c.dim_order() == (0, 2, 3, 1)
    assert ctorch.empty(2, 3, 0, 2).to(memory_format=ctorch.channels_last).stride() == (0, 1, 6, 3)
    u = ctorch.empty(2, 0, 2, 2, memory_format=ctorch.channels_last)
    assert u.is_contiguous() and u.is_contiguous(memory_format=ctorch.channels_last)
