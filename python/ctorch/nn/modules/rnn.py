"""nn.RNN / LSTM / GRU and nn.RNNCell / LSTMCell / GRUCell, as torch.nn.

Parameter bookkeeping, PyTorch's argument checks and the unbatched / PackedSequence sugar live here;
the recurrences are csrc/rnn.c's: the cells call ctorch.rnn_tanh_cell / rnn_relu_cell / lstm_cell /
gru_cell, the layers one ctorch._C._rnn call that runs every layer, direction and time step in C."""
import math
import numbers
import warnings

from ... import _C
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    """The shared bookkeeping of RNN, LSTM and GRU: PyTorch's parameters weight_ih_l{k}[_reverse],
    weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, weight_hr_l{k} (LSTM with proj_size), in PyTorch's order."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        real_hidden_size = proj_size if proj_size > 0 else hidden_size

        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input_size)), ("weight_hh", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for kind, shape in shapes:
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(_C.empty(shape, **kw)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op: ctorch keeps each weight as its own tensor and csrc/rnn.c's loop reads them in place
        (PyTorch compacts them into one buffer for cuDNN)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def _zeros(self, size, input, batch):
        num_directions = 2 if self.bidirectional else 1
        return _C.zeros(self.num_layers * num_directions, batch, size, dtype=input.dtype, device=input.device)

    def _run(self, input, batch_sizes, hx):
        # csrc/rnn.c's _rnn does PyTorch's check_forward_args (dtype, dims, input_size, hidden sizes)
        return _C._rnn(self.mode, input, batch_sizes, hx, self._flat_weights, self.bias, self.num_layers,
                       self.dropout, self.training, self.bidirectional, self.batch_first)

    def _prepare(self, input, hx, name):
        """The input, batch_sizes, sorted/unsorted indices, batch dim (None when batched) and hx of a
        forward call, with PyTorch's unbatched and PackedSequence handling (hx: None, a tensor, or a pair)."""
        lstm = self.mode == "LSTM"
        if isinstance(input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is not None:
                hx = self.permute_hidden(hx, sorted_indices)
            return input, batch_sizes, sorted_indices, unsorted_indices, None, hx
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                             f"{'tensor ' if name == 'RNN' else ''}instead")
        unbatched_dim = None
        if input.dim() == 2:
            unbatched_dim = 0 if self.batch_first else 1
            input = input.unsqueeze(unbatched_dim)
        if hx is not None:
            if lstm:
                want = 2 if unbatched_dim is not None else 3
                if hx[0].dim() != want or hx[1].dim() != want:
                    kind = "unbatched 2-D" if want == 2 else "batched 3-D"
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                       f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                if unbatched_dim is not None:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            elif unbatched_dim is not None:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
            elif hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        return input, None, None, None, unbatched_dim, hx

    def _forward(self, input, hx, name):
        orig_input = input
        input, batch_sizes, sorted_indices, unsorted_indices, unbatched_dim, hx = self._prepare(input, hx, name)
        if hx is None:
            batch = int(batch_sizes[0]) if batch_sizes is not None else input.size(0 if self.batch_first else 1)
            if self.mode == "LSTM":
                real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
                hx = (self._zeros(real_hidden_size, input, batch), self._zeros(self.hidden_size, input, batch))
            else:
                hx = self._zeros(self.hidden_size, input, batch)
        result = self._run(input, batch_sizes, hx)
        output, hidden = result[0], (result[1] if self.mode != "LSTM" else (result[1], result[2]))
        if isinstance(orig_input, PackedSequence):
            output = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return output, self.permute_hidden(hidden, unsorted_indices)
        if unbatched_dim is not None:
            output = output.squeeze(unbatched_dim)
            hidden = (hidden[0].squeeze(1), hidden[1].squeeze(1)) if self.mode == "LSTM" else hidden.squeeze(1)
        return output, hidden

    def forward(self, input, hx=None):
        return self._forward(input, hx, "RNN")


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu), over num_layers layers."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """LSTM with PyTorch's gate order (input, forget, cell, output) and optional projection (proj_size)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "LSTM")


class GRU(RNNBase):
    """GRU with PyTorch's gate order (reset, update, new)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "GRU")


class RNNCellBase(Module):
    """The parameters of a cell: weight_ih (chunks * hidden, input), weight_hh (chunks * hidden, hidden),
    bias_ih, bias_hh, initialised U(-1/sqrt(hidden), 1/sqrt(hidden))."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_C.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(_C.empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(_C.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(_C.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, input, name):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        return input.dim() == 2

    def _zeros(self, input):
        return _C.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu), one step."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        is_batched = self._batched(input, "RNNCell")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        if not is_batched:
            input = input.unsqueeze(0)
        hx = self._zeros(input) if hx is None else (hx if is_batched else hx.unsqueeze(0))
        if self.nonlinearity == "tanh":
            ret = _C.rnn_tanh_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        elif self.nonlinearity == "relu":
            ret = _C.rnn_relu_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        is_batched = self._batched(input, "LSTMCell")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead")
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        hy, cy = _C.lstm_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (hy, cy) if is_batched else (hy.squeeze(0), cy.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        is_batched = self._batched(input, "GRUCell")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        if not is_batched:
            input = input.unsqueeze(0)
        hx = self._zeros(input) if hx is None else (hx if is_batched else hx.unsqueeze(0))
        ret = _C.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
