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


# --- scaled_dot_product_attention backend switches (the set lives in nn.attention; see its docstring) -----
def _sdp_flag(backend, enabled=None):
    from ...nn import attention

    if enabled is None:
        return backend in attention._enabled
    if enabled:
        attention._enabled.add(backend)
    else:
        attention._enabled.discard(backend)
    return None


def _sdp_switches(backend_name, flag_name):
    """(X_sdp_enabled, enable_X_sdp) for one SDPBackend member."""
    def enabled():
        from ...nn.attention import SDPBackend

        return _sdp_flag(SDPBackend[backend_name])

    def enable(on):
        from ...nn.attention import SDPBackend

        _sdp_flag(SDPBackend[backend_name], bool(on))

    enabled.__name__, enable.__name__ = f"{flag_name}_sdp_enabled", f"enable_{flag_name}_sdp"
    return enabled, enable


flash_sdp_enabled, enable_flash_sdp = _sdp_switches("FLASH_ATTENTION", "flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _sdp_switches("EFFICIENT_ATTENTION", "mem_efficient")
math_sdp_enabled, enable_math_sdp = _sdp_switches("MATH", "math")
cudnn_sdp_enabled, enable_cudnn_sdp = _sdp_switches("CUDNN_ATTENTION", "cudnn")
