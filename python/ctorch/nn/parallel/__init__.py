"""nn.parallel: DataParallel and data_parallel, with scatter / replicate / parallel_apply / gather.

As PyTorch's: without a GPU the wrapped module is simply called; with one device the inputs are moved to
device_ids[0] and the module called there. With several devices the batch is split along `dim`, each
chunk runs on its device with the module's parameters and buffers copied there by differentiable .to()
(so gradients flow back to the parameters on device_ids[0], as PyTorch's Broadcast does), and the
outputs are concatenated on output_device. The replicas run one after another, not in threads."""
import warnings
from itertools import chain

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel", "gather", "parallel_apply", "replicate", "scatter", "scatter_kwargs"]


def _ctorch():
    import ctorch

    return ctorch


def _device_index(device):
    """An int, 'cuda:N' or device('cuda', N) as N; 'cuda' as the current device; -1 / 'cpu' as -1 (CPU)."""
    torch = _ctorch()
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type == "cpu":
            return -1
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return torch.cuda.current_device() if device.index is None else device.index
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")


def _target(index):
    return _ctorch().device("cpu") if index == -1 else _ctorch().device("cuda", index)


def _is_tensor(obj):
    return isinstance(obj, _ctorch().Tensor)


def scatter(inputs, target_gpus, dim=0):
    """Splits tensors along dim into one chunk per device (fewer when the batch is smaller); other
    objects are repeated. Tuples, lists and dicts are scattered element by element."""
    def split(obj):
        if _is_tensor(obj):
            chunks = obj.chunk(len(target_gpus), dim)
            return [c.to(_target(_device_index(d))) for c, d in zip(chunks, target_gpus)]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(split, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(x) for x in zip(*map(split, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(x) for x in zip(*map(split, obj.items()))]
        return [obj for _ in target_gpus]

    return split(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """scatter of the positional and keyword arguments, padded to the same number of chunks."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


class _Replica:
    """module run with its parameters and buffers copied to one device (functional_call)."""

    def __init__(self, module, device, detach):
        self.module = module
        self.tensors = {}
        for name, t in chain(module.named_parameters(remove_duplicate=False),
                             module.named_buffers(remove_duplicate=False)):
            copy = t.to(device)
            self.tensors[name] = copy.detach() if detach else copy

    def __call__(self, *args, **kwargs):
        from ...func import functional_call

        return functional_call(self.module, self.tensors, args, kwargs)


def replicate(network, devices, detach=False):
    """One replica of network per device (parameters copied differentiably unless detach)."""
    return [_Replica(network, _target(_device_index(d)), detach) for d in devices]


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """modules[i](*inputs[i], **kwargs_tup[i]) for each i (in turn)."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    kwargs_tup = kwargs_tup if kwargs_tup is not None else ({},) * len(modules)
    return [m(*(x if isinstance(x, (list, tuple)) else (x,)), **kw) for m, x, kw in zip(modules, inputs, kwargs_tup)]


def gather(outputs, target_device, dim=0):
    """Concatenates per-device outputs along dim on target_device (-1: CPU); scalars become a vector."""
    torch = _ctorch()
    device = _target(_device_index(target_device))

    def join(outs):
        first = outs[0]
        if _is_tensor(first):
            if all(t.dim() == 0 for t in outs) and dim == 0:
                warnings.warn("Was asked to gather along dimension 0, but all input tensors were scalars; will "
                              "instead unsqueeze and return a vector.")
                outs = [t.view(1) for t in outs]
            return torch.cat([t.to(device) for t in outs], dim)
        if first is None:
            return None
        if isinstance(first, dict):
            if not all(len(first) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(first)((k, join([d[k] for d in outs])) for k in first)
        if isinstance(first, (list, tuple)):
            return type(first)(map(join, zip(*outs)))
        return outs

    return join(outputs)


def _devices(device_ids, output_device):
    torch = _ctorch()
    if device_ids is None:
        device_ids = list(range(torch.cuda.device_count()))
    if output_device is None:
        output_device = device_ids[0]  # IndexError for an empty list, as PyTorch's
    return [_device_index(d) for d in device_ids], _device_index(output_device)


def _check_on_source(module, source):
    for t in chain(module.parameters(), module.buffers()):
        if t.device != source:
            raise RuntimeError("module must have its parameters and buffers on device "
                               f"{source} (device_ids[0]) but found one of them on device: {t.device}")


def _run(module, replicate_fn, inputs, kwargs, device_ids, output_device, dim):
    inputs, kwargs = scatter_kwargs(inputs, kwargs, device_ids, dim)
    if not inputs and not kwargs:
        inputs, kwargs = ((),), ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **kwargs[0])
    used = device_ids[:len(inputs)]
    outputs = parallel_apply(replicate_fn(module, used), inputs, kwargs, used)
    return gather(outputs, output_device, dim)


class DataParallel(Module):
    """Runs module over the batch split across device_ids; outputs gathered on output_device."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        torch = _ctorch()
        if not torch.cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        device_ids, output_device = _devices(device_ids, output_device)
        self.dim = dim
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.src_device_obj = torch.device("cuda", device_ids[0])
        if len(device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_on_source(self.module, self.src_device_obj)
        return _run(self.module, self.replicate, inputs, kwargs, self.device_ids, self.output_device, self.dim)

    def replicate(self, module, device_ids):
        return replicate(module, device_ids, not _ctorch().is_grad_enabled())

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """Functional DataParallel: module(*inputs) split across device_ids, gathered on output_device."""
    torch = _ctorch()
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not torch.cuda.is_available():
        raise RuntimeError("device type could not be determined")
    device_ids, output_device = _devices(device_ids, output_device)
    _check_on_source(module, torch.device("cuda", device_ids[0]))
    return _run(module, replicate, inputs, module_kwargs, device_ids, output_device, dim)
