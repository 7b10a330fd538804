"""torch.autograd.detect_anomaly / set_detect_anomaly: context managers over the C engine's anomaly flag
(ctorch._C.set_anomaly_enabled). With it on, backward checks each node's gradients for NaN and raises
PyTorch's "Function 'XBackward0' returned nan values in its 0th output." (ctorch records no forward
traceback)."""
import warnings

from .. import _C


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on inside its block."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        self.prev = _C.is_anomaly_enabled()
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        _C.set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args):
        _C.set_anomaly_enabled(self.prev, self.prev_check_nan)

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """set_detect_anomaly(mode, check_nan=True): sets anomaly detection now; restores it when used as a
    context manager."""

    def __init__(self, mode, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        _C.set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        _C.set_anomaly_enabled(self.prev, self.prev_check_nan)
