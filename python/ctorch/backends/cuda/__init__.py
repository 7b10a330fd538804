"""ctorch.backends.cuda: the CUDA matmul switches. The values live in ctorch._C (read by the CUDA
matmul through CtCudaSettings); these attributes only get and set them.

``matmul.allow_tf32`` (False by default, as in PyTorch) is tied to
ctorch.set_float32_matmul_precision: True means 'high', False 'highest'."""
from ... import _C


def is_built():
    """True when ctorch was built with CUDA."""
    return _C._cuda_is_built()


class _MatmulFlags:
    _names = ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __getattr__(self, name):
        if name in self._names:
            return _C._cuda_matmul_flag(name)
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name in self._names:
            _C._cuda_matmul_flag(name, bool(value))
            return
        raise AttributeError(f"Unknown attribute {name}")


matmul = _MatmulFlags()
