"""ctorch.func: PyTorch's composable function transforms (torch.func), in Python over ctorch's
autograd. vmap is a loop over the mapped dimension (see _vmap.py); grad/vjp/jvp/jacrev/jacfwd/
hessian use reverse-mode autograd (see _eager_transforms.py); functional_call swaps a module's
parameters and buffers for a call."""
from ._eager_transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp  # noqa: F401
from ._functional_call import functional_call, stack_module_state  # noqa: F401
from ._vmap import vmap  # noqa: F401

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call",
           "stack_module_state"]
