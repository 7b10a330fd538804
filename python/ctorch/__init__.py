"""ctorch: GPU tensors with PyTorch's API, written in C and CUDA.

    import ctorch as torch

The tensor type, dtypes, devices and every op live in the C extension ``ctorch._C``; this
package re-exports them under PyTorch's names and adds the parts that are naturally Python.
"""
import math

from . import _C
from ._C import Tensor, device, dtype  # noqa: F401


from ._size import Size

_C._set_size_class(Size)

from . import _tensor  # noqa: E402,F401  (attaches repr and Python-level methods)
from . import return_types  # noqa: E402,F401  (named tuples of max/min/sort/topk/median)
from . import random  # noqa: E402,F401
from ._tensor_str import get_printoptions, printoptions, set_printoptions  # noqa: E402,F401
from . import autograd  # noqa: E402,F401
from . import utils  # noqa: E402,F401
from . import profiler  # noqa: E402,F401  (torch.profiler)
from . import _blas  # noqa: E402

_blas.load()
from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: E402,F401


class _Named:
    """A torch.<name> constant (a memory format, a layout): prints and pickles as its name."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):
        return self._name


class memory_format(_Named):
    """torch.memory_format: the layout asked of a new tensor (memory_format= of clone, to, contiguous,
    is_contiguous, empty and the *_like factories). preserve_format keeps the source's dim order,
    contiguous_format is row-major, channels_last / channels_last_3d put the channels last in memory."""

    __slots__ = ()


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")  # (N, C, H, W) stored as N, H, W, C
channels_last_3d = memory_format("channels_last_3d")  # (N, C, D, H, W) stored as N, D, H, W, C


class layout(_Named):
    """torch.layout: how a tensor's elements are stored. ctorch has only torch.strided (dense); the sparse
    layouts exist as names, and factories refuse them."""

    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
_C._set_layouts(layout, strided)

# constants of the torch namespace
pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None

# build facts: linalg runs on ctorch's own decompositions (OpenBLAS when found); no MKL, no OpenMP
has_lapack = True
has_mkl = False
has_openmp = False


def _export_c_names():
    g = globals()
    for name in dir(_C):
        if not name.startswith(("_", "special_")) and name not in g:  # special_*: ctorch.special's
            g[name] = getattr(_C, name)


def einsum(*args):
    """einsum(equation, *operands) or einsum(equation, [operands]); see ctorch._C.einsum."""
    if len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], (list, tuple)):
        return _C.einsum(args[0], *args[1])  # one argument per operand: autograd records each
    return _C.einsum(*args)


def block_diag(*tensors):
    """block_diag(*tensors): the inputs (0-d, 1-d as a row, 2-d) along the diagonal of a zero
    matrix; see ctorch._C._block_diag (one argument holding every input: autograd records each)."""
    return _C._block_diag(tensors)


def typename(obj, /):
    """typename(obj) -> str: the fully qualified name of obj's type ('torch.FloatTensor' for a tensor:
    Tensor.type(); 'int' for a builtin; 'module.QualName' for a class or an object without one)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


_export_c_names()

from . import storage  # noqa: E402  (Tensor.storage(): TypedStorage)
from .storage import TypedStorage  # noqa: E402,F401
from .utils.dlpack import to_dlpack  # noqa: E402,F401

Tensor.storage = storage._tensor_storage
Tensor.storage_type = storage._tensor_storage_type
globals().update({cls.__name__: cls for cls in storage._legacy_storage_classes["cpu"].values()})

# the removed linear-algebra functions: each raises PyTorch's RuntimeError naming its replacement
from . import _linalg_utils  # noqa: E402
from ._linalg_utils import eig, lstsq, matrix_rank, solve  # noqa: E402,F401
from ._linalg_utils import _symeig as symeig  # noqa: E402,F401
from ._linalg_utils import lu  # noqa: E402,F401

Tensor.lu = _linalg_utils._tensor_lu


def _tensor_solve(self, other):
    return _linalg_utils.solve(self, other)


def _tensor_lstsq(self, other):
    return _linalg_utils.lstsq(self, other)


def _tensor_symeig(self, eigenvectors=False):
    return _linalg_utils._symeig(self, eigenvectors=eigenvectors)


def _tensor_eig(self, eigenvectors=False):
    return _linalg_utils.eig(self, eigenvectors=eigenvectors)


Tensor.solve, Tensor.lstsq, Tensor.symeig, Tensor.eig = _tensor_solve, _tensor_lstsq, _tensor_symeig, _tensor_eig

from ._higher_order_ops import cond, while_loop  # noqa: E402,F401  (torch.cond, torch.while_loop: eager)


def _import_dotted_name(name):
    """The object a dotted name names ('torch.DoubleTensor': torch is ctorch here)."""
    import importlib

    parts = name.split(".")
    obj = importlib.import_module(__name__ if parts[0] == "torch" else parts[0])
    for part in parts[1:]:
        obj = getattr(obj, part)
    return obj


def set_default_tensor_type(t, /):
    """Deprecated as in PyTorch 2.1 (use set_default_dtype and set_default_device): makes the legacy
    floating type t (torch.DoubleTensor, torch.cuda.FloatTensor, or its name) the default: its dtype
    becomes the default dtype and, for a CUDA type, factories create on CUDA."""
    if isinstance(t, str):
        t = _import_dotted_name(t)
    _C._set_default_tensor_type(t)

from . import accelerator, backends, cpu, cuda, version  # noqa: E402,F401  (CUDA is not initialised at import)
from . import amp, linalg, nn, optim, special  # noqa: E402,F401
from . import compiler  # noqa: E402,F401
from . import jit  # noqa: E402,F401  (torch.jit, run eagerly)
from .compiler import compile  # noqa: E402,F401,A001
from . import testing  # noqa: E402,F401
from .amp import autocast  # noqa: E402,F401
from .autograd.grad_mode import is_inference_mode_enabled  # noqa: E402,F401


# torch.dropout & co.: torch's spellings of nn.functional's (train= for training=; a bad p is the
# ATen op's RuntimeError, not F's ValueError)
def _dropout_call(fn, input, p, train, inplace):
    if p < 0.0 or p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    return fn(input, p, train, inplace=inplace)


def dropout(input, p, train):
    return _dropout_call(nn.functional.dropout, input, p, train, False)


def dropout_(input, p, train):
    return _dropout_call(nn.functional.dropout, input, p, train, True)


from ._native_norm import native_batch_norm, native_dropout, native_group_norm, native_layer_norm  # noqa: E402,F401


def alpha_dropout(input, p, train):
    return _dropout_call(nn.functional.alpha_dropout, input, p, train, False)


def alpha_dropout_(input, p, train):
    return _dropout_call(nn.functional.alpha_dropout, input, p, train, True)


def feature_alpha_dropout(input, p, train):
    return _dropout_call(nn.functional.feature_alpha_dropout, input, p, train, False)


def feature_alpha_dropout_(input, p, train):
    return _dropout_call(nn.functional.feature_alpha_dropout, input, p, train, True)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return nn.functional.rrelu(input, lower, upper, training, inplace=True)
from .cuda import amp as _cuda_amp  # noqa: E402,F401  (ctorch.cuda.amp)
from . import distributions  # noqa: E402,F401  (torch.distributions, Python over ctorch ops)
from . import distributed  # noqa: E402,F401  (torch.distributed as built without distributed support)
from . import multiprocessing  # noqa: E402,F401  (registers the shared-memory reductions, as PyTorch at import)
from . import signal  # noqa: E402,F401  (torch.signal.windows)
from ._streams import Event, Stream, get_device_module  # noqa: E402,F401
from . import func  # noqa: E402,F401  (torch.func: vmap as a loop, transforms over autograd)
from .func import vmap  # noqa: E402,F401
from ._lowrank import pca_lowrank, svd_lowrank  # noqa: E402,F401  (Python in PyTorch too)
from ._lobpcg import lobpcg  # noqa: E402,F401


# GradScaler's kernels under PyTorch's names
_amp_foreach_non_finite_check_and_unscale_ = _C._amp_foreach_non_finite_check_and_unscale_
_amp_update_scale_ = _C._amp_update_scale_
# the samplers torch.distributions builds on (csrc/random.c, sampling_math.h)
_standard_gamma = _C._standard_gamma
_standard_gamma_grad = _C._standard_gamma_grad
_dirichlet_grad = _C._dirichlet_grad
_sample_dirichlet = _C._sample_dirichlet


# autocast's older per-device spellings
def is_autocast_cpu_enabled():
    return _C.is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    _C.set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    return _C.get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    _C.set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    return _C.get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    _C.set_autocast_dtype("cuda", dtype)
from .serialization import load, load_safetensors, save, save_safetensors  # noqa: E402,F401

__version__ = "0.1.0"


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False):
    """A 1-d tensor of size elements over the file's contents, memory-mapped (csrc/shared_memory.c): with
    shared=True writes go to the file (grown with zeros when shorter), else the mapping is private."""
    dtype = get_default_dtype() if dtype is None else dtype
    if layout is not None and layout is not strided:
        raise RuntimeError(f"from_file: only the strided layout is supported, got {layout}")
    itemsize = _C.empty(0, dtype=dtype).element_size()
    storage = _C._from_file(filename, 1 if shared else 0, size * itemsize)  # (bool is torch.bool here)
    t = _C.empty(0, dtype=dtype).set_(storage, 0, (size,), (1,))
    if device is not None and _C.device(device).type != "cpu":
        t = t.to(device)
    return t.pin_memory() if pin_memory else t
