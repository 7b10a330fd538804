"""ctorch.distributed as PyTorch's is when built without distributed support (USE_DISTRIBUTED=0): is_available()
is False, and of the rest only the ProcessGroup stub is there, so library code that checks is_available() (as
nn.SyncBatchNorm does) takes its single-process path."""


def is_available():
    """False: ctorch has no process groups or collectives."""
    return False


class _ProcessGroupStub:
    pass


ProcessGroup = _ProcessGroupStub
