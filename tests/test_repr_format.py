"""Tests for python/ctorch/_tensor_str.py: the text of repr(tensor), checked against PyTorch.

``tensor_repr`` is called directly on NumPy data, so these tests need neither the C extension
nor PyTorch. The module is loaded as a stand-alone file because ``ctorch/__init__.py`` imports
the extension, which may not be built.

Every string in EXPECTED was printed by torch 2.15.0 (CPU build) from the same values, dtype,
print options and autograd state (``requires_grad_()``, or ``leaf * 1`` / ``leaf + 0`` for the
grad_fn cases), with bfloat16 values checked to be exact in bfloat16. The exception is the
cases on a cuda device, as no GPU was available: there torch printed the same tensor on the CPU
while reporting its default device as cuda, so that it wrote ``device='cpu'`` in the place a
cuda tensor gets ``device='cuda:0'``; our output with that device string was checked equal to
torch's, and the expected text is ours with the real device string.
"""
import collections
import importlib.util
import pathlib

import numpy as np
import pytest

_MODULE_PATH = pathlib.Path(__file__).resolve().parents[1] / "python" / "ctorch" / "_tensor_str.py"


def _load_tensor_str():
    spec = importlib.util.spec_from_file_location("ctorch_tensor_str_standalone", _MODULE_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tensor_str = _load_tensor_str()

# values: the NumPy array the core would pass (float32 for bfloat16, float16 for float16).
Case = collections.namedtuple("Case", "id values dtype device extra options")
Case.__new__.__defaults__ = ("cpu", (), {})

CASES = [
    # --- every dtype, 1-d
    Case("float32_1d", np.array([1.5, -2.25, 3.0], dtype=np.float32), "float32"),
    Case("float64_1d", np.array([0.1, 0.2, 0.3]), "float64"),
    Case("float16_1d", np.array([0.5, -1.25, 3.0], dtype=np.float16), "float16"),
    Case("bfloat16_1d", np.array([0.5, -1.25, 3.0], dtype=np.float32), "bfloat16"),
    Case("int64_1d", np.array([1, -20, 300], dtype=np.int64), "int64"),
    Case("int32_1d", np.array([1, -20, 300], dtype=np.int32), "int32"),
    Case("int16_1d", np.array([-32768, 0, 32767], dtype=np.int16), "int16"),
    Case("int8_1d", np.array([-128, 5, 127], dtype=np.int8), "int8"),
    Case("uint8_1d", np.array([0, 7, 255], dtype=np.uint8), "uint8"),
    Case("bool_1d", np.array([True, False, True]), "bool"),
    Case("bool_all_true", np.array([True, True]), "bool"),
    Case("float32_thirds", (np.arange(1, 6, dtype=np.float32) / 3).astype(np.float32), "float32"),
    Case("float64_integral", np.array([1.0, 2.0, -30.0]), "float64"),
    Case("float32_integral", np.array([0.0, 1.0, 2.0, 100.0], dtype=np.float32), "float32"),
    Case("int64_extremes", np.array([-2**63, 0, 2**63 - 1], dtype=np.int64), "int64"),
    # --- 0-d
    Case("scalar_float32", np.array(3.5, dtype=np.float32), "float32"),
    Case("scalar_float32_int", np.array(2.0, dtype=np.float32), "float32"),
    Case("scalar_float64", np.array(-0.125), "float64"),
    Case("scalar_float16", np.array(0.1, dtype=np.float16), "float16"),
    Case("scalar_bfloat16", np.array(2.0**33 + 2.0**27, dtype=np.float32), "bfloat16"),
    Case("scalar_int64", np.array(-7, dtype=np.int64), "int64"),
    Case("scalar_uint8", np.array(200, dtype=np.uint8), "uint8"),
    Case("scalar_bool", np.array(False), "bool"),
    Case("scalar_nan", np.array(np.nan, dtype=np.float32), "float32"),
    Case("scalar_small", np.array(1e-6, dtype=np.float32), "float32"),
    # --- 2-d, 3-d, 4-d
    Case("float32_2d", np.arange(6, dtype=np.float32).reshape(2, 3) / 4, "float32"),
    Case("int64_2d_negative", np.array([[-1, 20], [300, -4000]], dtype=np.int64), "int64"),
    Case("bool_2d", np.array([[True, False], [False, True]]), "bool"),
    Case("float64_3d", np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 11.5, "float64"),
    Case("int8_3d", (np.arange(12) - 6).astype(np.int8).reshape(3, 2, 2), "int8"),
    Case("float16_3d", (np.arange(8, dtype=np.float16) * np.float16(0.25)).reshape(2, 2, 2), "float16"),
    Case("float32_4d", np.arange(16, dtype=np.float32).reshape(2, 2, 2, 2), "float32"),
    Case("uint8_4d_single", np.arange(4, dtype=np.uint8).reshape(1, 2, 1, 2), "uint8"),
    # --- empty
    Case("empty_float32", np.zeros((0,), dtype=np.float32), "float32"),
    Case("empty_float32_2d", np.zeros((0, 3), dtype=np.float32), "float32"),
    Case("empty_int32", np.zeros((0,), dtype=np.int32), "int32"),
    Case("empty_int64", np.zeros((0,), dtype=np.int64), "int64"),
    Case("empty_bool_3d", np.zeros((2, 0, 4), dtype=bool), "bool"),
    Case("empty_float64_2d", np.zeros((3, 0)), "float64"),
    Case("empty_cuda", np.zeros((0, 2), dtype=np.float16), "float16", device="cuda:0"),
    # --- summarised (numel > threshold)
    Case("large_int64", np.arange(2000, dtype=np.int64), "int64"),
    Case("large_float32_2d", (np.arange(40 * 40, dtype=np.float32) / 7).reshape(40, 40), "float32"),
    Case("large_float64_3d", np.arange(12 * 12 * 12, dtype=np.float64).reshape(12, 12, 12) * 1.5, "float64"),
    Case("large_bool_wide", (np.arange(2 * 2000) % 3 == 0).reshape(2, 2000), "bool"),
    Case("large_narrow_rows", np.arange(3000, dtype=np.int32).reshape(1000, 3), "int32"),
    Case("large_sci", np.concatenate([np.full(1500, 1e-6), np.full(1500, 1e6)]).astype(np.float32), "float32"),
    Case("threshold_exact", np.arange(1000, dtype=np.int16), "int16", options=dict(threshold=1000, linewidth=200)),
    # --- mixed magnitudes / scientific notation
    Case("sci_ratio", np.array([1.0, 12345.678], dtype=np.float32), "float32"),
    Case("sci_small", np.array([0.5, 0.00001], dtype=np.float32), "float32"),
    Case("sci_large_integral", np.array([1.0, 1e9], dtype=np.float64), "float64"),
    Case("sci_ratio_integral", np.array([1.0, 2000.0], dtype=np.float32), "float32"),
    Case("no_sci_ratio_1000", np.array([1.0, 1000.0], dtype=np.float32), "float32"),
    Case("sci_mixed_signs", np.array([[-1e-5, 2.5], [3e7, -4e-3]]), "float64"),
    Case("sci_2d_wrap", np.geomspace(1e-8, 1e8, 24).reshape(2, 12), "float64"),
    Case("sci_float16_max", np.array([65504.0, 0.001, -1.0], dtype=np.float16), "float16"),
    Case("bfloat16_big", np.array([3.3895313892515355e38, 1.0, -2.0], dtype=np.float32), "bfloat16"),
    # --- nan / inf / negative zero
    Case("nan_inf_fixed", np.array([np.nan, np.inf, -np.inf, 1.5], dtype=np.float32), "float32"),
    Case("nan_inf_integral", np.array([np.nan, np.inf, -np.inf, 2.0], dtype=np.float32), "float32"),
    Case("nan_inf_sci", np.array([np.nan, -np.inf, 1e-7, 3.0], dtype=np.float64), "float64"),
    Case("only_nonfinite", np.array([np.nan, np.inf, 0.0], dtype=np.float32), "float32"),
    Case("negative_zero", np.array([-0.0, 0.0, 1.0], dtype=np.float32), "float32"),
    Case("negative_zero_fixed", np.array([-0.0, 0.5], dtype=np.float64), "float64"),
    Case("negative_zero_sci", np.array([-0.0, 1e-6], dtype=np.float32), "float32"),
    Case("negative_zero_alone", np.array([-0.0, 0.0], dtype=np.float16), "float16"),
    # --- devices and extra suffixes (no GPU in the reference run: see note in the header)
    Case("cuda_float32", np.array([1.0, 2.0], dtype=np.float32), "float32", device="cuda:0"),
    Case("cuda_int32_2d", np.array([[1, 2], [3, 4]], dtype=np.int32), "int32", device="cuda:1"),
    Case("cuda_bool_scalar", np.array(True), "bool", device="cuda:0"),
    Case("requires_grad", np.array([1.0, 2.5], dtype=np.float32), "float32",
         extra=("requires_grad=True",)),
    Case("requires_grad_float64", np.array([[0.5, 1.0]]), "float64",
         extra=("requires_grad=True",)),
    Case("grad_fn_wraps", (np.arange(3 * 30, dtype=np.float32) / 9).reshape(3, 30), "float32",
         extra=("grad_fn=<MulBackward0>",)),
    Case("grad_fn_fits", np.arange(8, dtype=np.float64) * 1.25, "float64",
         extra=("grad_fn=<AddBackward0>",)),
    Case("suffix_wrap_long_line", np.arange(13, dtype=np.float32) + 0.5, "float32",
         extra=("requires_grad=True",)),
    Case("cuda_grad_wrap", np.arange(11, dtype=np.float64) + 0.25, "float64", device="cuda:0",
         extra=("requires_grad=True",)),
    # --- print options
    Case("precision_2", np.array([1.23456, -2.5, 1.0 / 3.0], dtype=np.float32), "float32",
         options=dict(precision=2)),
    Case("precision_2_sci", np.array([1.23456, 1e-5], dtype=np.float64), "float64",
         options=dict(precision=2)),
    Case("precision_0", np.array([1.6, 2.4], dtype=np.float32), "float32",
         options=dict(precision=0)),
    Case("precision_8", np.array([1.0 / 3.0, 2.0 / 3.0]), "float64", options=dict(precision=8)),
    Case("sci_mode_true", np.array([1.5, 2.0], dtype=np.float32), "float32",
         options=dict(sci_mode=True)),
    Case("sci_mode_true_integral", np.array([1.0, 2.0, 0.0], dtype=np.float32), "float32",
         options=dict(sci_mode=True)),
    Case("sci_mode_true_only_zeros", np.array([0.0, -0.0], dtype=np.float32), "float32",
         options=dict(sci_mode=True)),
    Case("sci_mode_false", np.array([1e-8, 1.0, 1e10]), "float64", options=dict(sci_mode=False)),
    Case("sci_mode_true_int_dtype", np.array([1, 2], dtype=np.int64), "int64",
         options=dict(sci_mode=True)),
    Case("profile_short", np.arange(100, dtype=np.float32).reshape(10, 10) / 3, "float32",
         options=dict(profile="short", threshold=50)),
    Case("profile_full", (np.arange(1001) % 10).astype(np.uint8), "uint8", options=dict(profile="full")),
    Case("threshold_edgeitems", np.arange(10, dtype=np.int64), "int64",
         options=dict(threshold=5, edgeitems=2)),
    Case("edgeitems_1_3d", np.arange(5 * 5 * 5, dtype=np.float32).reshape(5, 5, 5), "float32",
         options=dict(threshold=10, edgeitems=1)),
    Case("edgeitems_0_summarised", np.arange(20, dtype=np.float32).reshape(4, 5), "float32",
         options=dict(threshold=10, edgeitems=0)),
    Case("edgeitems_0_1d", np.arange(20, dtype=np.int32), "int32",
         options=dict(threshold=10, edgeitems=0)),
    Case("edgeitems_0_not_summarised", np.arange(4, dtype=np.float64), "float64",
         options=dict(edgeitems=0)),
    # --- line wrapping
    Case("wrap_1d_default", np.arange(30, dtype=np.float32) * 1.5, "float32"),
    Case("wrap_1d_int", np.arange(-50, 50, dtype=np.int64), "int64"),
    Case("wrap_linewidth_40", np.arange(12, dtype=np.float32) / 8, "float32",
         options=dict(linewidth=40)),
    Case("wrap_linewidth_40_2d", np.arange(24, dtype=np.int32).reshape(2, 12) * 111, "int32",
         options=dict(linewidth=40)),
    Case("wrap_linewidth_120", np.arange(30, dtype=np.float64) / 7, "float64",
         options=dict(linewidth=120)),
    Case("wrap_linewidth_tiny", np.array([1.5, 2.5, 3.5], dtype=np.float32), "float32",
         options=dict(linewidth=5)),
    Case("wrap_suffix_linewidth_40", np.array([1.25, 2.5, 3.75], dtype=np.float16), "float16",
         options=dict(linewidth=40), extra=("requires_grad=True",)),
]


# Text printed by torch 2.15.0 for each case (see the module docstring).
EXPECTED = {
    'float32_1d': 'tensor([ 1.5000, -2.2500,  3.0000])',
    'float64_1d': 'tensor([0.1000, 0.2000, 0.3000], dtype=torch.float64)',
    'float16_1d': 'tensor([ 0.5000, -1.2500,  3.0000], dtype=torch.float16)',
    'bfloat16_1d': 'tensor([ 0.5000, -1.2500,  3.0000], dtype=torch.bfloat16)',
    'int64_1d': 'tensor([  1, -20, 300])',
    'int32_1d': 'tensor([  1, -20, 300], dtype=torch.int32)',
    'int16_1d': 'tensor([-32768,      0,  32767], dtype=torch.int16)',
    'int8_1d': 'tensor([-128,    5,  127], dtype=torch.int8)',
    'uint8_1d': 'tensor([  0,   7, 255], dtype=torch.uint8)',
    'bool_1d': 'tensor([ True, False,  True])',
    'bool_all_true': 'tensor([True, True])',
    'float32_thirds': 'tensor([0.3333, 0.6667, 1.0000, 1.3333, 1.6667])',
    'float64_integral': 'tensor([  1.,   2., -30.], dtype=torch.float64)',
    'float32_integral': 'tensor([  0.,   1.,   2., 100.])',
    'int64_extremes': 'tensor([-9223372036854775808,                    0,  9223372036854775807])',
    'scalar_float32': 'tensor(3.5000)',
    'scalar_float32_int': 'tensor(2.)',
    'scalar_float64': 'tensor(-0.1250, dtype=torch.float64)',
    'scalar_float16': 'tensor(0.1000, dtype=torch.float16)',
    'scalar_bfloat16': 'tensor(8.7242e+09, dtype=torch.bfloat16)',
    'scalar_int64': 'tensor(-7)',
    'scalar_uint8': 'tensor(200, dtype=torch.uint8)',
    'scalar_bool': 'tensor(False)',
    'scalar_nan': 'tensor(nan)',
    'scalar_small': 'tensor(1.0000e-06)',
    'float32_2d': (
        'tensor([[0.0000, 0.2500, 0.5000],\n'
        '        [0.7500, 1.0000, 1.2500]])'
    ),
    'int64_2d_negative': (
        'tensor([[   -1,    20],\n'
        '        [  300, -4000]])'
    ),
    'bool_2d': (
        'tensor([[ True, False],\n'
        '        [False,  True]])'
    ),
    'float64_3d': (
        'tensor([[[-11.5000, -10.5000,  -9.5000,  -8.5000],\n'
        '         [ -7.5000,  -6.5000,  -5.5000,  -4.5000],\n'
        '         [ -3.5000,  -2.5000,  -1.5000,  -0.5000]],\n'
        '\n'
        '        [[  0.5000,   1.5000,   2.5000,   3.5000],\n'
        '         [  4.5000,   5.5000,   6.5000,   7.5000],\n'
        '         [  8.5000,   9.5000,  10.5000,  11.5000]]], dtype=torch.float64)'
    ),
    'int8_3d': (
        'tensor([[[-6, -5],\n'
        '         [-4, -3]],\n'
        '\n'
        '        [[-2, -1],\n'
        '         [ 0,  1]],\n'
        '\n'
        '        [[ 2,  3],\n'
        '         [ 4,  5]]], dtype=torch.int8)'
    ),
    'float16_3d': (
        'tensor([[[0.0000, 0.2500],\n'
        '         [0.5000, 0.7500]],\n'
        '\n'
        '        [[1.0000, 1.2500],\n'
        '         [1.5000, 1.7500]]], dtype=torch.float16)'
    ),
    'float32_4d': (
        'tensor([[[[ 0.,  1.],\n'
        '          [ 2.,  3.]],\n'
        '\n'
        '         [[ 4.,  5.],\n'
        '          [ 6.,  7.]]],\n'
        '\n'
        '\n'
        '        [[[ 8.,  9.],\n'
        '          [10., 11.]],\n'
        '\n'
        '         [[12., 13.],\n'
        '          [14., 15.]]]])'
    ),
    'uint8_4d_single': (
        'tensor([[[[0, 1]],\n'
        '\n'
        '         [[2, 3]]]], dtype=torch.uint8)'
    ),
    'empty_float32': 'tensor([])',
    'empty_float32_2d': 'tensor([], size=(0, 3))',
    'empty_int32': 'tensor([], dtype=torch.int32)',
    'empty_int64': 'tensor([], dtype=torch.int64)',
    'empty_bool_3d': 'tensor([], size=(2, 0, 4), dtype=torch.bool)',
    'empty_float64_2d': 'tensor([], size=(3, 0), dtype=torch.float64)',
    'empty_cuda': "tensor([], device='cuda:0', size=(0, 2), dtype=torch.float16)",
    'large_int64': 'tensor([   0,    1,    2,  ..., 1997, 1998, 1999])',
    'large_float32_2d': (
        'tensor([[0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 5.2857e+00, 5.4286e+00,\n'
        '         5.5714e+00],\n'
        '        [5.7143e+00, 5.8571e+00, 6.0000e+00,  ..., 1.1000e+01, 1.1143e+01,\n'
        '         1.1286e+01],\n'
        '        [1.1429e+01, 1.1571e+01, 1.1714e+01,  ..., 1.6714e+01, 1.6857e+01,\n'
        '         1.7000e+01],\n'
        '        ...,\n'
        '        [2.1143e+02, 2.1157e+02, 2.1171e+02,  ..., 2.1671e+02, 2.1686e+02,\n'
        '         2.1700e+02],\n'
        '        [2.1714e+02, 2.1729e+02, 2.1743e+02,  ..., 2.2243e+02, 2.2257e+02,\n'
        '         2.2271e+02],\n'
        '        [2.2286e+02, 2.2300e+02, 2.2314e+02,  ..., 2.2814e+02, 2.2829e+02,\n'
        '         2.2843e+02]])'
    ),
    'large_float64_3d': (
        'tensor([[[0.0000e+00, 1.5000e+00, 3.0000e+00,  ..., 1.3500e+01,\n'
        '          1.5000e+01, 1.6500e+01],\n'
        '         [1.8000e+01, 1.9500e+01, 2.1000e+01,  ..., 3.1500e+01,\n'
        '          3.3000e+01, 3.4500e+01],\n'
        '         [3.6000e+01, 3.7500e+01, 3.9000e+01,  ..., 4.9500e+01,\n'
        '          5.1000e+01, 5.2500e+01],\n'
        '         ...,\n'
        '         [1.6200e+02, 1.6350e+02, 1.6500e+02,  ..., 1.7550e+02,\n'
        '          1.7700e+02, 1.7850e+02],\n'
        '         [1.8000e+02, 1.8150e+02, 1.8300e+02,  ..., 1.9350e+02,\n'
        '          1.9500e+02, 1.9650e+02],\n'
        '         [1.9800e+02, 1.9950e+02, 2.0100e+02,  ..., 2.1150e+02,\n'
        '          2.1300e+02, 2.1450e+02]],\n'
        '\n'
        '        [[2.1600e+02, 2.1750e+02, 2.1900e+02,  ..., 2.2950e+02,\n'
        '          2.3100e+02, 2.3250e+02],\n'
        '         [2.3400e+02, 2.3550e+02, 2.3700e+02,  ..., 2.4750e+02,\n'
        '          2.4900e+02, 2.5050e+02],\n'
        '         [2.5200e+02, 2.5350e+02, 2.5500e+02,  ..., 2.6550e+02,\n'
        '          2.6700e+02, 2.6850e+02],\n'
        '         ...,\n'
        '         [3.7800e+02, 3.7950e+02, 3.8100e+02,  ..., 3.9150e+02,\n'
        '          3.9300e+02, 3.9450e+02],\n'
        '         [3.9600e+02, 3.9750e+02, 3.9900e+02,  ..., 4.0950e+02,\n'
        '          4.1100e+02, 4.1250e+02],\n'
        '         [4.1400e+02, 4.1550e+02, 4.1700e+02,  ..., 4.2750e+02,\n'
        '          4.2900e+02, 4.3050e+02]],\n'
        '\n'
        '        [[4.3200e+02, 4.3350e+02, 4.3500e+02,  ..., 4.4550e+02,\n'
        '          4.4700e+02, 4.4850e+02],\n'
        '         [4.5000e+02, 4.5150e+02, 4.5300e+02,  ..., 4.6350e+02,\n'
        '          4.6500e+02, 4.6650e+02],\n'
        '         [4.6800e+02, 4.6950e+02, 4.7100e+02,  ..., 4.8150e+02,\n'
        '          4.8300e+02, 4.8450e+02],\n'
        '         ...,\n'
        '         [5.9400e+02, 5.9550e+02, 5.9700e+02,  ..., 6.0750e+02,\n'
        '          6.0900e+02, 6.1050e+02],\n'
        '         [6.1200e+02, 6.1350e+02, 6.1500e+02,  ..., 6.2550e+02,\n'
        '          6.2700e+02, 6.2850e+02],\n'
        '         [6.3000e+02, 6.3150e+02, 6.3300e+02,  ..., 6.4350e+02,\n'
        '          6.4500e+02, 6.4650e+02]],\n'
        '\n'
        '        ...,\n'
        '\n'
        '        [[1.9440e+03, 1.9455e+03, 1.9470e+03,  ..., 1.9575e+03,\n'
        '          1.9590e+03, 1.9605e+03],\n'
        '         [1.9620e+03, 1.9635e+03, 1.9650e+03,  ..., 1.9755e+03,\n'
        '          1.9770e+03, 1.9785e+03],\n'
        '         [1.9800e+03, 1.9815e+03, 1.9830e+03,  ..., 1.9935e+03,\n'
        '          1.9950e+03, 1.9965e+03],\n'
        '         ...,\n'
        '         [2.1060e+03, 2.1075e+03, 2.1090e+03,  ..., 2.1195e+03,\n'
        '          2.1210e+03, 2.1225e+03],\n'
        '         [2.1240e+03, 2.1255e+03, 2.1270e+03,  ..., 2.1375e+03,\n'
        '          2.1390e+03, 2.1405e+03],\n'
        '         [2.1420e+03, 2.1435e+03, 2.1450e+03,  ..., 2.1555e+03,\n'
        '          2.1570e+03, 2.1585e+03]],\n'
        '\n'
        '        [[2.1600e+03, 2.1615e+03, 2.1630e+03,  ..., 2.1735e+03,\n'
        '          2.1750e+03, 2.1765e+03],\n'
        '         [2.1780e+03, 2.1795e+03, 2.1810e+03,  ..., 2.1915e+03,\n'
        '          2.1930e+03, 2.1945e+03],\n'
        '         [2.1960e+03, 2.1975e+03, 2.1990e+03,  ..., 2.2095e+03,\n'
        '          2.2110e+03, 2.2125e+03],\n'
        '         ...,\n'
        '         [2.3220e+03, 2.3235e+03, 2.3250e+03,  ..., 2.3355e+03,\n'
        '          2.3370e+03, 2.3385e+03],\n'
        '         [2.3400e+03, 2.3415e+03, 2.3430e+03,  ..., 2.3535e+03,\n'
        '          2.3550e+03, 2.3565e+03],\n'
        '         [2.3580e+03, 2.3595e+03, 2.3610e+03,  ..., 2.3715e+03,\n'
        '          2.3730e+03, 2.3745e+03]],\n'
        '\n'
        '        [[2.3760e+03, 2.3775e+03, 2.3790e+03,  ..., 2.3895e+03,\n'
        '          2.3910e+03, 2.3925e+03],\n'
        '         [2.3940e+03, 2.3955e+03, 2.3970e+03,  ..., 2.4075e+03,\n'
        '          2.4090e+03, 2.4105e+03],\n'
        '         [2.4120e+03, 2.4135e+03, 2.4150e+03,  ..., 2.4255e+03,\n'
        '          2.4270e+03, 2.4285e+03],\n'
        '         ...,\n'
        '         [2.5380e+03, 2.5395e+03, 2.5410e+03,  ..., 2.5515e+03,\n'
        '          2.5530e+03, 2.5545e+03],\n'
        '         [2.5560e+03, 2.5575e+03, 2.5590e+03,  ..., 2.5695e+03,\n'
        '          2.5710e+03, 2.5725e+03],\n'
        '         [2.5740e+03, 2.5755e+03, 2.5770e+03,  ..., 2.5875e+03,\n'
        '          2.5890e+03, 2.5905e+03]]], dtype=torch.float64)'
    ),
    'large_bool_wide': (
        'tensor([[ True, False, False,  ..., False,  True, False],\n'
        '        [False,  True, False,  ..., False, False,  True]])'
    ),
    'large_narrow_rows': (
        'tensor([[   0,    1,    2],\n'
        '        [   3,    4,    5],\n'
        '        [   6,    7,    8],\n'
        '        ...,\n'
        '        [2991, 2992, 2993],\n'
        '        [2994, 2995, 2996],\n'
        '        [2997, 2998, 2999]], dtype=torch.int32)'
    ),
    'large_sci': (
        'tensor([1.0000e-06, 1.0000e-06, 1.0000e-06,  ..., 1.0000e+06, 1.0000e+06,\n'
        '        1.0000e+06])'
    ),
    'threshold_exact': (
        'tensor([  0,   1,   2,   3,   4,   5,   6,   7,   8,   9,  10,  11,  12,  13,  14,  15,  16,  17,  18,  19,  20,  21,  22,  23,  24,  25,  26,  27,  28,  29,  30,  31,  32,  33,  34,  35,  36,  37,\n'
        '         38,  39,  40,  41,  42,  43,  44,  45,  46,  47,  48,  49,  50,  51,  52,  53,  54,  55,  56,  57,  58,  59,  60,  61,  62,  63,  64,  65,  66,  67,  68,  69,  70,  71,  72,  73,  74,  75,\n'
        '         76,  77,  78,  79,  80,  81,  82,  83,  84,  85,  86,  87,  88,  89,  90,  91,  92,  93,  94,  95,  96,  97,  98,  99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113,\n'
        '        114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151,\n'
        '        152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189,\n'
        '        190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227,\n'
        '        228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260, 261, 262, 263, 264, 265,\n'
        '        266, 267, 268, 269, 270, 271, 272, 273, 274, 275, 276, 277, 278, 279, 280, 281, 282, 283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297, 298, 299, 300, 301, 302, 303,\n'
        '        304, 305, 306, 307, 308, 309, 310, 311, 312, 313, 314, 315, 316, 317, 318, 319, 320, 321, 322, 323, 324, 325, 326, 327, 328, 329, 330, 331, 332, 333, 334, 335, 336, 337, 338, 339, 340, 341,\n'
        '        342, 343, 344, 345, 346, 347, 348, 349, 350, 351, 352, 353, 354, 355, 356, 357, 358, 359, 360, 361, 362, 363, 364, 365, 366, 367, 368, 369, 370, 371, 372, 373, 374, 375, 376, 377, 378, 379,\n'
        '        380, 381, 382, 383, 384, 385, 386, 387, 388, 389, 390, 391, 392, 393, 394, 395, 396, 397, 398, 399, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417,\n'
        '        418, 419, 420, 421, 422, 423, 424, 425, 426, 427, 428, 429, 430, 431, 432, 433, 434, 435, 436, 437, 438, 439, 440, 441, 442, 443, 444, 445, 446, 447, 448, 449, 450, 451, 452, 453, 454, 455,\n'
        '        456, 457, 458, 459, 460, 461, 462, 463, 464, 465, 466, 467, 468, 469, 470, 471, 472, 473, 474, 475, 476, 477, 478, 479, 480, 481, 482, 483, 484, 485, 486, 487, 488, 489, 490, 491, 492, 493,\n'
        '        494, 495, 496, 497, 498, 499, 500, 501, 502, 503, 504, 505, 506, 507, 508, 509, 510, 511, 512, 513, 514, 515, 516, 517, 518, 519, 520, 521, 522, 523, 524, 525, 526, 527, 528, 529, 530, 531,\n'
        '        532, 533, 534, 535, 536, 537, 538, 539, 540, 541, 542, 543, 544, 545, 546, 547, 548, 549, 550, 551, 552, 553, 554, 555, 556, 557, 558, 559, 560, 561, 562, 563, 564, 565, 566, 567, 568, 569,\n'
        '        570, 571, 572, 573, 574, 575, 576, 577, 578, 579, 580, 581, 582, 583, 584, 585, 586, 587, 588, 589, 590, 591, 592, 593, 594, 595, 596, 597, 598, 599, 600, 601, 602, 603, 604, 605, 606, 607,\n'
        '        608, 609, 610, 611, 612, 613, 614, 615, 616, 617, 618, 619, 620, 621, 622, 623, 624, 625, 626, 627, 628, 629, 630, 631, 632, 633, 634, 635, 636, 637, 638, 639, 640, 641, 642, 643, 644, 645,\n'
        '        646, 647, 648, 649, 650, 651, 652, 653, 654, 655, 656, 657, 658, 659, 660, 661, 662, 663, 664, 665, 666, 667, 668, 669, 670, 671, 672, 673, 674, 675, 676, 677, 678, 679, 680, 681, 682, 683,\n'
        '        684, 685, 686, 687, 688, 689, 690, 691, 692, 693, 694, 695, 696, 697, 698, 699, 700, 701, 702, 703, 704, 705, 706, 707, 708, 709, 710, 711, 712, 713, 714, 715, 716, 717, 718, 719, 720, 721,\n'
        '        722, 723, 724, 725, 726, 727, 728, 729, 730, 731, 732, 733, 734, 735, 736, 737, 738, 739, 740, 741, 742, 743, 744, 745, 746, 747, 748, 749, 750, 751, 752, 753, 754, 755, 756, 757, 758, 759,\n'
        '        760, 761, 762, 763, 764, 765, 766, 767, 768, 769, 770, 771, 772, 773, 774, 775, 776, 777, 778, 779, 780, 781, 782, 783, 784, 785, 786, 787, 788, 789, 790, 791, 792, 793, 794, 795, 796, 797,\n'
        '        798, 799, 800, 801, 802, 803, 804, 805, 806, 807, 808, 809, 810, 811, 812, 813, 814, 815, 816, 817, 818, 819, 820, 821, 822, 823, 824, 825, 826, 827, 828, 829, 830, 831, 832, 833, 834, 835,\n'
        '        836, 837, 838, 839, 840, 841, 842, 843, 844, 845, 846, 847, 848, 849, 850, 851, 852, 853, 854, 855, 856, 857, 858, 859, 860, 861, 862, 863, 864, 865, 866, 867, 868, 869, 870, 871, 872, 873,\n'
        '        874, 875, 876, 877, 878, 879, 880, 881, 882, 883, 884, 885, 886, 887, 888, 889, 890, 891, 892, 893, 894, 895, 896, 897, 898, 899, 900, 901, 902, 903, 904, 905, 906, 907, 908, 909, 910, 911,\n'
        '        912, 913, 914, 915, 916, 917, 918, 919, 920, 921, 922, 923, 924, 925, 926, 927, 928, 929, 930, 931, 932, 933, 934, 935, 936, 937, 938, 939, 940, 941, 942, 943, 944, 945, 946, 947, 948, 949,\n'
        '        950, 951, 952, 953, 954, 955, 956, 957, 958, 959, 960, 961, 962, 963, 964, 965, 966, 967, 968, 969, 970, 971, 972, 973, 974, 975, 976, 977, 978, 979, 980, 981, 982, 983, 984, 985, 986, 987,\n'
        '        988, 989, 990, 991, 992, 993, 994, 995, 996, 997, 998, 999], dtype=torch.int16)'
    ),
    'sci_ratio': 'tensor([1.0000e+00, 1.2346e+04])',
    'sci_small': 'tensor([5.0000e-01, 1.0000e-05])',
    'sci_large_integral': 'tensor([1.0000e+00, 1.0000e+09], dtype=torch.float64)',
    'sci_ratio_integral': 'tensor([1.0000e+00, 2.0000e+03])',
    'no_sci_ratio_1000': 'tensor([   1., 1000.])',
    'sci_mixed_signs': (
        'tensor([[-1.0000e-05,  2.5000e+00],\n'
        '        [ 3.0000e+07, -4.0000e-03]], dtype=torch.float64)'
    ),
    'sci_2d_wrap': (
        'tensor([[1.0000e-08, 4.9619e-08, 2.4621e-07, 1.2217e-06, 6.0619e-06, 3.0079e-05,\n'
        '         1.4925e-04, 7.4057e-04, 3.6747e-03, 1.8233e-02, 9.0474e-02, 4.4893e-01],\n'
        '        [2.2275e+00, 1.1053e+01, 5.4844e+01, 2.7213e+02, 1.3503e+03, 6.7002e+03,\n'
        '         3.3246e+04, 1.6496e+05, 8.1855e+05, 4.0616e+06, 2.0153e+07, 1.0000e+08]],\n'
        '       dtype=torch.float64)'
    ),
    'sci_float16_max': 'tensor([ 6.5504e+04,  1.0004e-03, -1.0000e+00], dtype=torch.float16)',
    'bfloat16_big': 'tensor([ 3.3895e+38,  1.0000e+00, -2.0000e+00], dtype=torch.bfloat16)',
    'nan_inf_fixed': 'tensor([   nan,    inf,   -inf, 1.5000])',
    'nan_inf_integral': 'tensor([nan, inf, -inf, 2.])',
    'nan_inf_sci': 'tensor([       nan,       -inf, 1.0000e-07, 3.0000e+00], dtype=torch.float64)',
    'only_nonfinite': 'tensor([nan, inf, 0.])',
    'negative_zero': 'tensor([-0., 0., 1.])',
    'negative_zero_fixed': 'tensor([-0.0000, 0.5000], dtype=torch.float64)',
    'negative_zero_sci': 'tensor([-0.0000e+00, 1.0000e-06])',
    'negative_zero_alone': 'tensor([-0., 0.], dtype=torch.float16)',
    'cuda_float32': "tensor([1., 2.], device='cuda:0')",
    'cuda_int32_2d': (
        'tensor([[1, 2],\n'
        "        [3, 4]], device='cuda:1', dtype=torch.int32)"
    ),
    'cuda_bool_scalar': "tensor(True, device='cuda:0')",
    'requires_grad': 'tensor([1.0000, 2.5000], requires_grad=True)',
    'requires_grad_float64': 'tensor([[0.5000, 1.0000]], dtype=torch.float64, requires_grad=True)',
    'grad_fn_wraps': (
        'tensor([[0.0000, 0.1111, 0.2222, 0.3333, 0.4444, 0.5556, 0.6667, 0.7778, 0.8889,\n'
        '         1.0000, 1.1111, 1.2222, 1.3333, 1.4444, 1.5556, 1.6667, 1.7778, 1.8889,\n'
        '         2.0000, 2.1111, 2.2222, 2.3333, 2.4444, 2.5556, 2.6667, 2.7778, 2.8889,\n'
        '         3.0000, 3.1111, 3.2222],\n'
        '        [3.3333, 3.4444, 3.5556, 3.6667, 3.7778, 3.8889, 4.0000, 4.1111, 4.2222,\n'
        '         4.3333, 4.4444, 4.5556, 4.6667, 4.7778, 4.8889, 5.0000, 5.1111, 5.2222,\n'
        '         5.3333, 5.4444, 5.5556, 5.6667, 5.7778, 5.8889, 6.0000, 6.1111, 6.2222,\n'
        '         6.3333, 6.4444, 6.5556],\n'
        '        [6.6667, 6.7778, 6.8889, 7.0000, 7.1111, 7.2222, 7.3333, 7.4444, 7.5556,\n'
        '         7.6667, 7.7778, 7.8889, 8.0000, 8.1111, 8.2222, 8.3333, 8.4444, 8.5556,\n'
        '         8.6667, 8.7778, 8.8889, 9.0000, 9.1111, 9.2222, 9.3333, 9.4444, 9.5556,\n'
        '         9.6667, 9.7778, 9.8889]], grad_fn=<MulBackward0>)'
    ),
    'grad_fn_fits': (
        'tensor([0.0000, 1.2500, 2.5000, 3.7500, 5.0000, 6.2500, 7.5000, 8.7500],\n'
        '       dtype=torch.float64, grad_fn=<AddBackward0>)'
    ),
    'suffix_wrap_long_line': (
        'tensor([ 0.5000,  1.5000,  2.5000,  3.5000,  4.5000,  5.5000,  6.5000,  7.5000,\n'
        '         8.5000,  9.5000, 10.5000, 11.5000, 12.5000], requires_grad=True)'
    ),
    'cuda_grad_wrap': (
        'tensor([ 0.2500,  1.2500,  2.2500,  3.2500,  4.2500,  5.2500,  6.2500,  7.2500,\n'
        "         8.2500,  9.2500, 10.2500], device='cuda:0', dtype=torch.float64,\n"
        '       requires_grad=True)'
    ),
    'precision_2': 'tensor([ 1.23, -2.50,  0.33])',
    'precision_2_sci': 'tensor([1.23e+00, 1.00e-05], dtype=torch.float64)',
    'precision_0': 'tensor([2, 2])',
    'precision_8': 'tensor([0.33333333, 0.66666667], dtype=torch.float64)',
    'sci_mode_true': 'tensor([1.5000e+00, 2.0000e+00])',
    'sci_mode_true_integral': 'tensor([1.0000e+00, 2.0000e+00, 0.0000e+00])',
    'sci_mode_true_only_zeros': 'tensor([0., -0.])',
    'sci_mode_false': (
        'tensor([          0.0000,           1.0000, 10000000000.0000],\n'
        '       dtype=torch.float64)'
    ),
    'sci_mode_true_int_dtype': 'tensor([1, 2])',
    'profile_short': (
        'tensor([[ 0.00,  0.33,  ...,  2.67,  3.00],\n'
        '        [ 3.33,  3.67,  ...,  6.00,  6.33],\n'
        '        ...,\n'
        '        [26.67, 27.00,  ..., 29.33, 29.67],\n'
        '        [30.00, 30.33,  ..., 32.67, 33.00]])'
    ),
    'profile_full': (
        'tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n'
        '        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n'
        '        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n'
        '        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n'
        '        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n'
        '        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n'
        '        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n'
        '        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n'
        '        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n'
        '        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n'
        '        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n'
        '        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n'
        '        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n'
        '        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n'
        '        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n'
        '        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n'
        '        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n'
        '        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n'
        '        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n'
        '        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n'
        '        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n'
        '        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n'
        '        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n'
        '        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n'
        '        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n'
        '        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n'
        '        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n'
        '        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n'
        '        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n'
        '        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n'
        '        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n'
        '        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n'
        '        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n'
        '        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n'
        '        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n'
        '        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n'
        '        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n'
        '        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n'
        '        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n'
        '        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n'
        '        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n'
        '        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0], dtype=torch.uint8)'
    ),
    'threshold_edgeitems': 'tensor([0, 1,  ..., 8, 9])',
    'edgeitems_1_3d': (
        'tensor([[[  0.,  ...,   4.],\n'
        '         ...,\n'
        '         [ 20.,  ...,  24.]],\n'
        '\n'
        '        ...,\n'
        '\n'
        '        [[100.,  ..., 104.],\n'
        '         ...,\n'
        '         [120.,  ..., 124.]]])'
    ),
    'edgeitems_0_summarised': 'tensor([...], size=(4, 5))',
    'edgeitems_0_1d': 'tensor([...], size=(20,), dtype=torch.int32)',
    'edgeitems_0_not_summarised': 'tensor([0., 1., 2., 3.], size=(4,), dtype=torch.float64)',
    'wrap_1d_default': (
        'tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n'
        '        12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000,\n'
        '        24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000, 34.5000,\n'
        '        36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000])'
    ),
    'wrap_1d_int': (
        'tensor([-50, -49, -48, -47, -46, -45, -44, -43, -42, -41, -40, -39, -38, -37,\n'
        '        -36, -35, -34, -33, -32, -31, -30, -29, -28, -27, -26, -25, -24, -23,\n'
        '        -22, -21, -20, -19, -18, -17, -16, -15, -14, -13, -12, -11, -10,  -9,\n'
        '         -8,  -7,  -6,  -5,  -4,  -3,  -2,  -1,   0,   1,   2,   3,   4,   5,\n'
        '          6,   7,   8,   9,  10,  11,  12,  13,  14,  15,  16,  17,  18,  19,\n'
        '         20,  21,  22,  23,  24,  25,  26,  27,  28,  29,  30,  31,  32,  33,\n'
        '         34,  35,  36,  37,  38,  39,  40,  41,  42,  43,  44,  45,  46,  47,\n'
        '         48,  49])'
    ),
    'wrap_linewidth_40': (
        'tensor([0.0000, 0.1250, 0.2500, 0.3750,\n'
        '        0.5000, 0.6250, 0.7500, 0.8750,\n'
        '        1.0000, 1.1250, 1.2500, 1.3750])'
    ),
    'wrap_linewidth_40_2d': (
        'tensor([[   0,  111,  222,  333,  444,\n'
        '          555,  666,  777,  888,  999,\n'
        '         1110, 1221],\n'
        '        [1332, 1443, 1554, 1665, 1776,\n'
        '         1887, 1998, 2109, 2220, 2331,\n'
        '         2442, 2553]],\n'
        '       dtype=torch.int32)'
    ),
    'wrap_linewidth_120': (
        'tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429, 1.2857, 1.4286, 1.5714, 1.7143, 1.8571,\n'
        '        2.0000, 2.1429, 2.2857, 2.4286, 2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143, 3.8571,\n'
        '        4.0000, 4.1429], dtype=torch.float64)'
    ),
    'wrap_linewidth_tiny': (
        'tensor([1.5000,\n'
        '        2.5000,\n'
        '        3.5000])'
    ),
    'wrap_suffix_linewidth_40': (
        'tensor([1.2500, 2.5000, 3.7500],\n'
        '       dtype=torch.float16,\n'
        '       requires_grad=True)'
    ),
}


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def default_print_options():
    tensor_str.set_printoptions(profile="default")
    yield
    tensor_str.set_printoptions(profile="default")


def test_every_case_has_expected_text():
    assert [case.id for case in CASES] == list(EXPECTED)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_repr_matches_pytorch(case):
    tensor_str.set_printoptions(**case.options)
    before = case.values.copy()
    text = tensor_str.tensor_repr(case.values, case.dtype, case.device, extra_suffixes=case.extra)
    assert text == EXPECTED[case.id]
    np.testing.assert_array_equal(case.values, before)  # the data is only read


def test_default_dtype_float64():
    # torch 2.15 after torch.set_default_dtype(torch.float64).
    values = np.array([1.5, 2.0])
    assert tensor_str.tensor_repr(values, "float64", "cpu", default_dtype="float64") == (
        "tensor([1.5000, 2.0000])")
    assert tensor_str.tensor_repr(values.astype(np.float32), "float32", "cpu",
                                  default_dtype="float64") == (
        "tensor([1.5000, 2.0000], dtype=torch.float32)")
    assert tensor_str.tensor_repr(np.zeros(0), "float64", "cpu", default_dtype="float64") == (
        "tensor([])")
    assert tensor_str.tensor_repr(np.array([1, 2]), "int64", "cpu", default_dtype="float64") == (
        "tensor([1, 2])")


def test_float16_data_may_arrive_widened():
    values = np.array([0.5, -1.25, 3.0], dtype=np.float16)
    assert (tensor_str.tensor_repr(values.astype(np.float32), "float16", "cpu")
            == tensor_str.tensor_repr(values, "float16", "cpu") == EXPECTED["float16_1d"])


def test_extra_suffixes_keep_their_order():
    text = tensor_str.tensor_repr(np.array([1.0], dtype=np.float32), "float32", "cuda:0",
                                  extra_suffixes=["grad_fn=<AddBackward0>", "tangent=x"])
    assert text == "tensor([1.], device='cuda:0', grad_fn=<AddBackward0>, tangent=x)"


def test_unknown_dtype_is_rejected():
    with pytest.raises(ValueError, match="complex64"):
        tensor_str.tensor_repr(np.zeros(2, dtype=np.complex64), "complex64", "cpu")


def test_print_option_defaults():
    assert tensor_str.get_printoptions() == {
        "precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def test_profiles():
    tensor_str.set_printoptions(profile="short")
    assert tensor_str.get_printoptions() == {
        "precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80, "sci_mode": None}
    tensor_str.set_printoptions(profile="full")
    assert tensor_str.get_printoptions()["threshold"] == float("inf")
    # Explicit options win over the profile; an unknown profile changes nothing.
    tensor_str.set_printoptions(profile="default", precision=6, linewidth=100)
    tensor_str.set_printoptions(profile="no-such-profile")
    assert tensor_str.get_printoptions() == {
        "precision": 6, "threshold": 1000, "edgeitems": 3, "linewidth": 100, "sci_mode": None}


def test_set_printoptions_keeps_others_but_resets_sci_mode():
    tensor_str.set_printoptions(precision=2, sci_mode=True)
    tensor_str.set_printoptions(linewidth=60)
    # As in PyTorch: precision stays, but a call without sci_mode puts it back to None.
    assert tensor_str.get_printoptions() == {
        "precision": 2, "threshold": 1000, "edgeitems": 3, "linewidth": 60, "sci_mode": None}
    values = np.array([1.23456, -2.5], dtype=np.float32)
    assert tensor_str.tensor_repr(values, "float32", "cpu") == "tensor([ 1.23, -2.50])"


def test_printoptions_context_restores():
    tensor_str.set_printoptions(precision=3)
    with tensor_str.printoptions(precision=1, sci_mode=True):
        assert tensor_str.get_printoptions()["precision"] == 1
        assert tensor_str.get_printoptions()["sci_mode"] is True
    assert tensor_str.get_printoptions() == {
        "precision": 3, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def test_get_printoptions_round_trips():
    tensor_str.set_printoptions(precision=7, threshold=50, edgeitems=1, linewidth=33,
                                sci_mode=False)
    saved = tensor_str.get_printoptions()
    tensor_str.set_printoptions(profile="default")
    tensor_str.set_printoptions(**saved)
    assert tensor_str.get_printoptions() == saved
