"""nn.utils.stateless.functional_call: the deprecated spelling of torch.func.functional_call."""
import warnings

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module called with the given parameters and buffers in place of its own (deprecated: use
    torch.func.functional_call)."""
    from ...func import functional_call as _functional_call

    warnings.warn("This API is deprecated as of PyTorch 2.0 and will be removed in a future version of PyTorch. "
                  "Please use torch.func.functional_call instead which is a drop-in replacement for this API.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
