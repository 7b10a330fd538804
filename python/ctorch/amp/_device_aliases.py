"""The older per-device spellings of ctorch.amp (torch.cuda.amp, torch.cpu.amp: deprecated in PyTorch,
kept working): autocast and GradScaler classes bound to one device type, made once here for both."""
import warnings

from . import autocast_mode, grad_scaler


def device_amp_classes(device_type, autocast_dtype):
    """The (autocast, GradScaler) of ctorch.<device_type>.amp: torch.amp's with device_type given and
    autocast's dtype defaulting to autocast_dtype, each warning that it is deprecated when made."""
    module = f"ctorch.{device_type}.amp"

    class autocast(autocast_mode.autocast):
        __doc__ = f"torch.{device_type}.amp.autocast(args...): torch.amp.autocast('{device_type}', args...)."

        def __init__(self, enabled=True, dtype=autocast_dtype, cache_enabled=True):
            warnings.warn(f"`torch.{device_type}.amp.autocast(args...)` is deprecated. Please use "
                          f"`torch.amp.autocast('{device_type}', args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(device_type, enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)

    class GradScaler(grad_scaler.GradScaler):
        __doc__ = f"torch.{device_type}.amp.GradScaler(args...): torch.amp.GradScaler('{device_type}', args...)."

        def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                     enabled=True):
            warnings.warn(f"`torch.{device_type}.amp.GradScaler(args...)` is deprecated. Please use "
                          f"`torch.amp.GradScaler('{device_type}', args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(device_type, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)

    for cls in (autocast, GradScaler):  # named as if defined in that module
        cls.__module__ = module
        cls.__qualname__ = cls.__name__
        cls.__init__.__qualname__ = f"{cls.__name__}.__init__"
        cls.__init__.__module__ = module
    return autocast, GradScaler
