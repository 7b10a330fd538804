"""ctorch.backends: switches of the compute backends (as torch.backends)."""
from . import cuda, cudnn, mha  # noqa: F401
