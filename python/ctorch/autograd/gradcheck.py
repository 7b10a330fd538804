"""gradcheck: compares analytical gradients with central finite differences (float64)."""
import numpy as np

from .. import _C


class GradcheckError(RuntimeError):
    """Raised by gradcheck / gradgradcheck when a gradient does not match (a RuntimeError, as PyTorch's)."""


def _flat_outputs(out):
    return out if isinstance(out, (tuple, list)) else (out,)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_ignored):
    """True if the Jacobian-vector products of func match finite differences for every input
    that requires grad. Inputs should be float64 tensors."""
    from . import grad as _grad

    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, _C.Tensor) and x.requires_grad]
    outputs = [o for o in _flat_outputs(func(*inputs)) if isinstance(o, _C.Tensor) and o.requires_grad]
    for oi, out in enumerate(outputs):
        out_np = out.detach().cpu().numpy()
        for k in range(out_np.size):
            # analytical: gradient of out.flatten()[k]
            seed = np.zeros(out_np.shape, dtype=out_np.dtype)
            seed.reshape(-1)[k] = 1
            seed_t = _C.tensor(seed, dtype=out.dtype, device=out.device)
            fresh = [o for o in _flat_outputs(func(*inputs)) if isinstance(o, _C.Tensor) and o.requires_grad][oi]
            analytical = _grad(fresh, [inputs[i] for i in diff], seed_t, allow_unused=True)
            for j, i in enumerate(diff):
                x = inputs[i]
                a = analytical[j]
                a = np.zeros(tuple(x.shape)) if a is None else a.detach().cpu().numpy().astype(np.float64)
                num = np.zeros(tuple(x.shape))
                base = x.detach().cpu().numpy().copy()
                flat = num.reshape(-1)
                for p in range(base.size):
                    for sign in (1, -1):
                        pert = base.copy()
                        pert.reshape(-1)[p] += sign * eps
                        with _C_no_grad():
                            x.data = _C.tensor(pert, dtype=x.dtype, device=x.device)
                            val = _flat_outputs(func(*inputs))[oi].detach().cpu().numpy().reshape(-1)[k]
                        flat[p] += sign * float(val) / (2 * eps)
                    with _C_no_grad():
                        x.data = _C.tensor(base, dtype=x.dtype, device=x.device)
                if not np.allclose(a, num, atol=atol, rtol=rtol):
                    if raise_exception:
                        raise GradcheckError(f"Jacobian mismatch for output {oi} element {k} with respect to input {i},"
                                           f"\nnumerical:{num}\nanalytical:{a}\n")
                    return False
    return True


class _C_no_grad:
    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  **_ignored):
    """gradcheck of the backward: the gradients of func's outputs (taken with create_graph=True against
    grad_outputs, random float64 tensors when None) must themselves match finite differences, with
    respect to the inputs and to grad_outputs."""
    from . import grad as _grad

    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    diff = [x for x in inputs if isinstance(x, _C.Tensor) and x.requires_grad]
    outputs = [o for o in _flat_outputs(func(*inputs)) if isinstance(o, _C.Tensor) and o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_C.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype, device=o.device,
                                       requires_grad=True) for o in outputs)
    else:
        grad_outputs = tuple(_flat_outputs(grad_outputs))
    n_in = len(inputs)

    def first_derivatives(*args):
        # gradcheck evaluates its function under no_grad for the finite differences; the first
        # derivatives need the graph either way
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)
        try:
            outs = [o for o in _flat_outputs(func(*args[:n_in])) if isinstance(o, _C.Tensor) and o.requires_grad]
            grads = _grad(outs, diff, args[n_in:], create_graph=True, allow_unused=True)
        finally:
            _C._set_grad_enabled(prev)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
