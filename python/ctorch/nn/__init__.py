"""ctorch.nn: modules, parameters, functional API and initialisers, as torch.nn."""
from . import attention, functional, init, parallel, utils  # noqa: F401
from .parallel import DataParallel  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
