"""Type promotion: promote_types, result_type (dimensioned tensors > 0-d tensors > Python numbers),
can_cast, and that elementwise ops produce the promoted dtype and refuse in-place casts PyTorch
refuses.

The tables below were generated once from the reference PyTorch (torch.promote_types,
torch.result_type and torch.can_cast over every dtype pair) and are hard-coded so that the tests
run where torch is absent."""
import pytest

import ctorch

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]

# promote_types(row, column), columns in NAMES order
PROMOTE = {
    "bool": ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"],
    "uint8": ["uint8", "uint8", "int16", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"],
    "int8": ["int8", "int16", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"],
    "int16": ["int16", "int16", "int16", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"],
    "int32": ["int32", "int32", "int32", "int32", "int32", "int64", "float16", "bfloat16", "float32", "float64"],
    "int64": ["int64", "int64", "int64", "int64", "int64", "int64", "float16", "bfloat16", "float32", "float64"],
    "float16": ["float16"] * 7 + ["float32", "float32", "float64"],
    "bfloat16": ["bfloat16"] * 6 + ["float32", "bfloat16", "float32", "float64"],
    "float32": ["float32"] * 9 + ["float64"],
    "float64": ["float64"] * 10,
}

# result_type(dimensioned tensor of the row dtype, 0-d tensor of the column dtype)
DIM_ZERO = {
    "bool": ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"],
    "uint8": ["uint8"] * 6 + ["float16", "bfloat16", "float32", "float64"],
    "int8": ["int8"] * 6 + ["float16", "bfloat16", "float32", "float64"],
    "int16": ["int16"] * 6 + ["float16", "bfloat16", "float32", "float64"],
    "int32": ["int32"] * 6 + ["float16", "bfloat16", "float32", "float64"],
    "int64": ["int64"] * 6 + ["float16", "bfloat16", "float32", "float64"],
    "float16": ["float16"] * 10,
    "bfloat16": ["bfloat16"] * 10,
    "float32": ["float32"] * 10,
    "float64": ["float64"] * 10,
}

# result_type(tensor of the row dtype, Python True / 2 / 2.5); the same for dimensioned and 0-d
SCALAR = {
    "bool": ["bool", "int64", "float32"],
    "uint8": ["uint8", "uint8", "float32"],
    "int8": ["int8", "int8", "float32"],
    "int16": ["int16", "int16", "float32"],
    "int32": ["int32", "int32", "float32"],
    "int64": ["int64", "int64", "float32"],
    "float16": ["float16"] * 3,
    "bfloat16": ["bfloat16"] * 3,
    "float32": ["float32"] * 3,
    "float64": ["float64"] * 3,
}

# can_cast(row, column) as a string of 0/1 over NAMES
CAN_CAST = {
    "bool": "1111111111",
    "uint8": "0111111111",
    "int8": "0111111111",
    "int16": "0111111111",
    "int32": "0111111111",
    "int64": "0111111111",
    "float16": "0000001111",
    "bfloat16": "0000001111",
    "float32": "0000001111",
    "float64": "0000001111",
}

SCALARS = [True, 2, 2.5]


def dt(name):
    return getattr(ctorch, name)


def dim_tensor(name, device="cpu"):
    return ctorch.tensor([1, 0], dtype=dt(name), device=device)


def zero_d(name, device="cpu"):
    return ctorch.tensor(1, dtype=dt(name), device=device)


def _pairs():
    return [(a, b) for a in NAMES for b in NAMES]


@pytest.mark.parametrize("a,b", _pairs(), ids=[f"{a}-{b}" for a, b in _pairs()])
def test_promote_types(a, b):
    assert ctorch.promote_types(dt(a), dt(b)) == dt(PROMOTE[a][NAMES.index(b)])


@pytest.mark.parametrize("a", NAMES)
def test_result_type_tables(a):
    for j, b in enumerate(NAMES):
        # same category: plain promotion
        assert ctorch.result_type(dim_tensor(a), dim_tensor(b)) == dt(PROMOTE[a][j])
        assert ctorch.result_type(zero_d(a), zero_d(b)) == dt(PROMOTE[a][j])
        # a dimensioned tensor outranks a 0-d one unless the 0-d one is of a higher category
        assert ctorch.result_type(dim_tensor(a), zero_d(b)) == dt(DIM_ZERO[a][j])
        assert ctorch.result_type(zero_d(b), dim_tensor(a)) == dt(DIM_ZERO[a][j])
    for s, expected in zip(SCALARS, SCALAR[a]):
        assert ctorch.result_type(dim_tensor(a), s) == dt(expected)
        assert ctorch.result_type(s, dim_tensor(a)) == dt(expected)
        assert ctorch.result_type(zero_d(a), s) == dt(expected)


def test_result_type_of_two_scalars():
    assert ctorch.result_type(2, 2.5) == ctorch.float32
    assert ctorch.result_type(True, 2) == ctorch.int64
    assert ctorch.result_type(True, False) == ctorch.bool
    assert ctorch.result_type(2.5, 3.5) == ctorch.float32


def test_result_type_errors():
    with pytest.raises(TypeError):
        ctorch.result_type(dim_tensor("int64"))
    with pytest.raises(TypeError):
        ctorch.result_type(None, dim_tensor("int64"))


@pytest.mark.parametrize("a", NAMES)
def test_can_cast(a):
    for j, b in enumerate(NAMES):
        assert ctorch.can_cast(dt(a), dt(b)) == (CAN_CAST[a][j] == "1"), (a, b)


@pytest.mark.parametrize("a", NAMES)
def test_ops_follow_result_type(device, a):
    """a + b has the result_type dtype for every dtype pair and every category mix."""
    for j, b in enumerate(NAMES):
        assert (dim_tensor(a, device) + dim_tensor(b, device)).dtype == dt(PROMOTE[a][j])
        assert (dim_tensor(a, device) + zero_d(b, device)).dtype == dt(DIM_ZERO[a][j])
        assert (zero_d(b, device) * dim_tensor(a, device)).dtype == dt(DIM_ZERO[a][j])
        assert ctorch.maximum(zero_d(a, device), zero_d(b, device)).dtype == dt(PROMOTE[a][j])
        assert (dim_tensor(a, device) == dim_tensor(b, device)).dtype == ctorch.bool
    for s, expected in zip(SCALARS, SCALAR[a]):
        assert (dim_tensor(a, device) + s).dtype == dt(expected)
        assert (s + dim_tensor(a, device)).dtype == dt(expected)
        assert (s * zero_d(a, device)).dtype == dt(expected)


@pytest.mark.parametrize("a", NAMES)
def test_inplace_keeps_dtype_or_refuses(device, a):
    """x += y keeps x's dtype; when the promoted type can't be cast to it, PyTorch's error."""
    for j, b in enumerate(NAMES):
        result = PROMOTE[a][j]
        x = dim_tensor(a, device)
        if CAN_CAST[result][NAMES.index(a)] == "1":
            x += dim_tensor(b, device)
            assert x.dtype == dt(a)
        else:
            msg = ("result type {} can't be cast to the desired output type {}"
                   .format(_scalar_type(result), _scalar_type(a)))
            with pytest.raises(RuntimeError, match=msg):
                x += dim_tensor(b, device)


def _scalar_type(name):
    return {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
            "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}[name]


def test_inplace_with_python_scalar(device):
    x = ctorch.tensor([1, 2], device=device)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        x += 2.5
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        x /= 2
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        x.exp_()
    b = ctorch.tensor([True, False], device=device)
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the desired output type Bool"):
        b += 1
    x *= 3
    assert x.dtype == ctorch.int64 and x.cpu().numpy().tolist() == [3, 6]
    h = ctorch.tensor([1.0, 2.0], dtype=ctorch.float16, device=device)
    h += ctorch.tensor([1.0, 1.0], dtype=ctorch.float64, device=device)
    assert h.dtype == ctorch.float16


def test_default_dtype_drives_scalar_and_int_to_float_promotion():
    old = ctorch.get_default_dtype()
    try:
        ctorch.set_default_dtype(ctorch.float64)
        i = ctorch.tensor([1, 2])
        assert ctorch.result_type(i, 2.5) == ctorch.float64
        assert (i / 2).dtype == ctorch.float64
        assert ctorch.exp(i).dtype == ctorch.float64
        # a float32 tensor still outranks a Python float
        assert (ctorch.tensor([1.0], dtype=ctorch.float32) + 2.5).dtype == ctorch.float32
    finally:
        ctorch.set_default_dtype(old)
    assert (ctorch.tensor([1, 2]) / 2).dtype == ctorch.float32
