"""ctorch.version, as torch.version: the package version and the CUDA version ctorch was built
with (None in a CPU-only build)."""
from . import _C

__version__ = "0.1.0"
cuda = _C._cuda_version()
hip = None
git_version = None
debug = False
