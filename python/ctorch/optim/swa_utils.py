"""optim.swa_utils: Stochastic Weight Averaging and EMA as in PyTorch. AveragedModel keeps a deep copy of a
model (state_dict keys 'n_averaged' then 'module.*') whose parameters follow a running average of another
model's; the averaging functions are tensor ops (lerp_ per tensor where PyTorch uses its foreach kernels);
SWALR anneals each group's lr to swa_lr; update_bn recomputes BatchNorm statistics with one pass of data."""
import itertools
import math
from copy import deepcopy

from .. import _C
from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param

Tensor = _C.Tensor

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """In-place EMA over lists of tensors: ema = decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if ema_param_list[0].is_floating_point():
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """In-place equal-weight running average over lists of tensors, num_averaged models seen so far."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if averaged_param_list[0].is_floating_point():
            # the weight as PyTorch computes it: 1 / (n + 1) in the default dtype when n is a tensor
            weight = _to_float(1 / (num_averaged + 1))
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.lerp_(p_model, weight)
        else:
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                diff = p_model - p_avg
                if isinstance(num_averaged, Tensor):
                    p_avg.addcdiv_(diff, num_averaged + 1)
                else:
                    p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """EMA of one tensor: returns decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """Equal-weight running average of one tensor: returns avg + (current - avg) / (n + 1)."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _to_float(x):
    return x.item() if isinstance(x, Tensor) else float(x)


def _group_by_device_and_dtype(pairs):
    """{(device, dtype): ([averaged tensors], [model tensors])}, in first-seen order."""
    groups = {}
    for p_avg, p_model in pairs:
        avgs, models = groups.setdefault((p_avg.device, p_avg.dtype), ([], []))
        avgs.append(p_avg)
        models.append(p_model)
    return groups


class AveragedModel(Module):
    """A copy of model whose parameters (and buffers with use_buffers=True) are a running average (SWA by
    default, or avg_fn / multi_avg_fn) of the models passed to update_parameters."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _C.tensor(0, dtype=_C.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Averages model's parameters into this one's (the first call copies them)."""
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        pairs = []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            pairs.append((p_averaged.detach(), p_model_))
            if copy_param:
                pairs[-1][0].copy_(p_model_)
        if self.n_averaged > 0:
            with no_grad():
                self._average(pairs)
        if not self.use_buffers:  # buffers are not averaged: keep them in sync with the source model
            for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1

    def _average(self, pairs):
        if self.avg_fn is not None:
            for p_averaged, p_model in pairs:
                p_averaged.copy_(self.avg_fn(p_averaged, p_model, self.n_averaged.to(p_averaged.device)))
            return
        for (device, _), (avgs, models) in _group_by_device_and_dtype(pairs).items():
            n_averaged = self.n_averaged.to(device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(avgs, models, n_averaged)
            elif device.type == "cuda":  # where PyTorch has foreach kernels: its lerp form
                get_swa_multi_avg_fn()(avgs, models, n_averaged)
            else:
                avg_fn = get_swa_avg_fn()
                for p_averaged, p_model in zip(avgs, models):
                    p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))


@no_grad()
def update_bn(loader, model, device=None):
    """Recomputes the running statistics of every BatchNorm in model as the plain average over one pass of
    loader (batches are tensors or lists/tuples whose first element is the input)."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr from its value to swa_lr over anneal_epochs steps ('cos' or 'linear'), then
    keeps it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for value, group in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The lr the annealing started from, given the current lr reached with weight alpha on swa_lr."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self):
        self._warn_get_lr()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / span)))
        alpha = self.anneal_func(max(0, min(1, step / span)))
        groups = self.optimizer.param_groups
        return [g["swa_lr"] * alpha + self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) * (1 - alpha)
                for g in groups]

    def state_dict(self):
        """Every attribute but the optimizer and the annealing function."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
