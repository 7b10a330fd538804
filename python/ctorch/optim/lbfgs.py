"""optim.LBFGS: PyTorch's limited-memory BFGS (minFunc's two-loop recursion, optional strong-Wolfe line
search). Like PyTorch's, it is Python over tensor ops: every parameter is flattened into one vector, the
update is a handful of dot products and axpys per iteration, and the whole state (a single dict kept under
the first parameter) has PyTorch's keys, so trajectories and state_dicts agree with torch.optim.LBFGS."""
from .. import _C
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer, _to_scalar

Tensor = _C.Tensor

__all__ = ["LBFGS"]

# the state entries of the curvature history, in PyTorch's order: the y and s vectors, 1 / y.s, and the
# scale of the initial inverse Hessian
_HISTORY_KEYS = ("old_dirs", "old_stps", "ro", "H_diag")


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to bounds (by default the
    interval between x1 and x2); the interval's midpoint where the cubic has no real minimiser."""
    if bounds is None:
        bounds = (x1, x2) if x1 <= x2 else (x2, x1)
    lo, hi = bounds
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if not d2_square >= 0:  # (NaN included)
        return (lo + hi) / 2.0
    d2 = d2_square.sqrt()
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, lo), hi)


class _Point:
    """One trial of the line search: step t, loss f, flat gradient g and directional derivative gtd."""

    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Moré-Thuente style search along d from x for a step satisfying the strong Wolfe conditions:
    a bracketing phase that extrapolates by cubic interpolation, then a zoom phase that shrinks the bracket.
    Returns (loss, flat gradient, step, number of evaluations)."""
    d_norm = d.abs().max()
    start = _Point(0, f, g.clone(), gtd)

    def evaluate(step):
        f_new, g_new = obj_func(x, step, d)
        return _Point(step, f_new, g_new, g_new.dot(d))

    def armijo_fails(p):
        return p.f > f + c1 * p.t * gtd

    def curvature_holds(p):
        return abs(p.gtd) <= -c2 * gtd

    new = evaluate(t)
    evals = 1
    prev = start
    bracket = None
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if armijo_fails(new) or (ls_iter > 1 and new.f >= prev.f) or (not curvature_holds(new) and new.gtd >= 0):
            bracket = [prev, _Point(new.t, new.f, new.g.clone(), new.gtd)]
            break
        if curvature_holds(new):
            bracket = [new]
            done = True
            break
        # extrapolate: the cubic's minimiser, at least 1% beyond t and at most 10 t
        step = _cubic_interpolate(prev.t, prev.f, prev.gtd, new.t, new.f, new.gtd,
                                  bounds=(new.t + 0.01 * (new.t - prev.t), new.t * 10))
        prev = _Point(new.t, new.f, new.g.clone(), new.gtd)
        new = evaluate(step)
        evals += 1
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [_Point(0, f, g, gtd), new]

    # zoom: keep [low, high] around a point satisfying the conditions, low the one with the smaller loss
    insufficient_progress = False
    low, high = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    while not done and ls_iter < max_ls:
        a, b = bracket[0].t, bracket[1].t
        if abs(b - a) * d_norm < tolerance_change:
            break
        step = _cubic_interpolate(a, bracket[0].f, bracket[0].gtd, b, bracket[1].f, bracket[1].gtd)
        top, bottom = max(a, b), min(a, b)
        eps = 0.1 * (top - bottom)
        if min(top - step, step - bottom) < eps:
            # too close to an end: after a second time in a row, or when outside, move 10% of the width inside
            if insufficient_progress or step >= top or step <= bottom:
                step = top - eps if abs(step - top) < abs(step - bottom) else bottom + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        new = evaluate(step)
        evals += 1
        ls_iter += 1
        trial = _Point(new.t, new.f, new.g.clone(), new.gtd)
        if armijo_fails(new) or new.f >= bracket[low].f:
            bracket[high] = trial
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
        else:
            if curvature_holds(new):
                done = True
            elif new.gtd * (bracket[high].t - bracket[low].t) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = trial
    best = bracket[low]
    return best.f, best.g, best.t, evals


class LBFGS(Optimizer):
    """L-BFGS (PyTorch's arguments); step(closure) runs up to max_iter iterations, each re-evaluating the
    closure. Works on a single parameter group."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None, *, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
                    "tolerance_change": tolerance_change, "history_size": history_size,
                    "line_search_fn": line_search_fn, "maximize": maximize}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        """All gradients as one vector (zeros for a parameter without one), negated under maximize."""
        views = [p.new_zeros(p.numel()) if p.grad is None else p.grad.reshape(-1) for p in self._params]
        flat = _C.cat(views, 0)
        if self.param_groups[0].get("maximize", False):
            flat.neg_()
        return flat

    def _add_grad(self, step_size, update):
        """params += step_size * update, update being the flat vector of all parameters."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(update[offset:offset + n].view_as(p), alpha=step_size)
            offset += n
        if offset != self._numel():
            raise AssertionError(f"Expected offset {offset} to equal {self._numel()}")

    def _clone_param(self):
        return [p.clone() for p in self._params]

    def _set_param(self, params_data):
        for p, data in zip(self._params, params_data):
            p.copy_(data)

    def _evaluate(self, closure):
        """(loss as a float, negated under maximize; flat gradient) at the current parameters."""
        loss = float(closure())
        if self.param_groups[0].get("maximize", False):
            loss = -loss
        return loss, self._gather_flat_grad()

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        result = self._evaluate(closure)
        self._set_param(x)
        return result

    def _direction(self, state, history, flat_grad, d, t, prev_flat_grad):
        """The next search direction: the L-BFGS two-loop recursion over the stored (s, y) pairs, after
        adding the latest pair when its curvature y.s is positive enough. history is
        [old_dirs, old_stps, ro, H_diag], updated in place."""
        old_dirs, old_stps, ro = history[:3]
        y = flat_grad.sub(prev_flat_grad)
        s = d.mul(t)
        ys = y.dot(s)
        if ys > 1e-10:
            if len(old_dirs) == self.param_groups[0]["history_size"]:
                del old_dirs[0], old_stps[0], ro[0]
            old_dirs.append(y)
            old_stps.append(s)
            ro.append(1.0 / ys)
            history[3] = ys / y.dot(y)
        if "al" not in state:
            state["al"] = [None] * self.param_groups[0]["history_size"]
        al = state["al"]
        q = flat_grad.neg()
        for i in reversed(range(len(old_dirs))):
            al[i] = old_stps[i].dot(q) * ro[i]
            q.add_(old_dirs[i], alpha=-al[i])
        r = _C.mul(q, history[3])
        for i in range(len(old_dirs)):
            be_i = old_dirs[i].dot(r) * ro[i]
            r.add_(old_stps[i], alpha=al[i] - be_i)
        return r

    @no_grad()
    def step(self, closure):
        """Runs up to max_iter L-BFGS iterations; closure re-evaluates the model and returns the loss."""
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(self.param_groups)}")
        closure = enable_grad()(closure)
        if len(self._params) == 0:
            return closure()
        group = self.param_groups[0]
        lr = _to_scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn = group["line_search_fn"]
        maximize = group.get("maximize", False)

        # LBFGS's state is global; it lives under the first parameter so load_state_dict casts it
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = -float(orig_loss) if maximize else float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        history = [state.get(key) for key in _HISTORY_KEYS]
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                history = [[], [], [], 1]
            else:
                d = self._direction(state, history, flat_grad, d, t, prev_flat_grad)
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # the first step is scaled down by the gradient's l1 norm; later ones start at lr
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction any more
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, step, direction):
                    return self._directional_evaluate(closure, x, step, direction)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:  # the last iteration's loss would go unused: not evaluated
                    loss, flat_grad = self._evaluate(closure)
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break  # no progress

        state["d"] = d
        state["t"] = t
        state.update(zip(_HISTORY_KEYS, history))
        state["prev_flat_grad"] = prev_flat_grad
        state["prev_loss"] = prev_loss
        return orig_loss
