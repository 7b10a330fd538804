"""Leak check per op family: each case (an op with its backward, out= form or error path) runs
a few hundred times after a warm-up; the number of live storages must not move
and the Python allocator's block count must stay flat (a reference leaked per call, a tuple or a
float, shows up as one block a call). On cuda the storages are device memory."""
import pytest

import ctorch as torch
import ctorch.autograd.graph
import ctorch.nn.functional as F
from conftest import assert_no_leak


def _raises(fn, exc):
    def call(x):
        try:
            fn(x)
        except exc:
            return
        raise AssertionError("expected " + exc.__name__)
    return call


def _backward(fn):
    def call(x):
        y = x.detach().requires_grad_(True)
        fn(y).sum().backward()
        return y.grad
    return call


def _grid_double_backward(x):
    """grid_sampler_2d's native backward recorded under create_graph, then differentiated (the composite twice,
    in a nested autograd.grad)"""
    y = x.detach().requires_grad_(True)
    g = (x[:2, :4].reshape(1, 2, 2, 2) / 4).detach().requires_grad_(True)
    out = F.grid_sample(y[None, None], g, padding_mode="border", align_corners=False)
    gx, gg = torch.autograd.grad(out.sum(), (y, g), create_graph=True)
    (gx.sum() + gg.sum()).backward()
    return y.grad


def _out(fn, shape, dtype=None):
    def call(x):
        o = torch.empty(shape, dtype=dtype or x.dtype, device=x.device)
        return fn(x, o)
    return call


def _optim_more_steps(x):
    """Two steps of the _C._optim_step kinds with 0-d states besides step (NAdam's mu_product, ASGD's eta
    and mu, created and then updated) and of Rprop (a filled state), on fresh optimizers."""
    for cls, kw in ((torch.optim.NAdam, {}), (torch.optim.ASGD, {"t0": 0}), (torch.optim.Rprop, {})):
        p = torch.nn.Parameter(x.detach().clone())
        opt = cls([p], **kw)
        for _ in range(2):
            p.grad = x
            opt.step()


def _autocast_twice(x):
    w = x.float().requires_grad_()  # a float32 leaf: its cast is cached for the second use
    with torch.autocast(x.device.type):
        out = F.linear(w, w) + F.linear(w, w)
    out.float().sum().backward()
    return w.grad


def _grad_scaler_kernels(x):
    found = torch.zeros(1, device=x.device)
    torch._amp_foreach_non_finite_check_and_unscale_([x.clone(), x.float().t()], found, torch.ones(1, device=x.device))
    return torch._amp_update_scale_(torch.ones((), device=x.device), torch.zeros((), dtype=torch.int32, device=x.device),
                                    found, 2.0, 0.5, 3)


def _tensor_more(x):
    """csrc/tensor_more.c: in-place scans and addr_, the in-place samplers, the metadata and storage ops, the
    element callbacks (CPU), nonzero_static"""
    t = x.clone()
    t.cumsum_(1).cumprod_(0).addr_(x[:, 0], x[0], beta=0.5)
    x.clone().cauchy_(), x.clone().log_normal_(), x.clone().geometric_(0.5), x.sigmoid().bernoulli()
    u = torch.empty(0, dtype=x.dtype, device=x.device).resize_(3, 5).resize_as_(x)
    u.set_(t).as_strided_((2, 3), (1, 2), 1)
    out = (u.is_set_to(t), x.dim_order(), x.new_empty_strided((2, 3), (1, 2)), torch.nonzero_static(x, size=30),
           torch.get_device(x), torch.is_storage(x))
    if x.device.type == "cpu":
        x.clone().apply_(abs).map_(x, lambda a, b: a + b)
    return out


def _tensor_more_errors(x):
    t = x.clone()
    calls = (lambda: t.cumsum_(2), lambda: t.resize_(-1), lambda: t.as_strided_((9, 9), (3, 3)),
             lambda: t.addr_(x, x), lambda: t.set_(x.float()), lambda: t.int().cumsum_(0, dtype=torch.float32))
    for call in calls:
        try:
            call()
        except (RuntimeError, IndexError):
            continue
        raise AssertionError("expected an error")


def _saved_hooks(fail):
    """saved_tensors_hooks: every saved tensor packed and unpacked by Python (a pack raising at the forward, an
    unpack raising in the backward)"""
    def pack(t):
        if fail == "pack":
            raise ValueError("pack")
        return t * 1

    def unpack(t):
        if fail == "unpack":
            raise ValueError("unpack")
        return t

    def call(x):
        y = x.detach().requires_grad_(True)
        try:
            with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
                z = (y * y.exp()).sin().sum() + F.layer_norm(y, (6,)).sum()
            z.backward()
        except ValueError:
            assert fail is not None
            return
        assert fail is None
        return y.grad
    return call


class _FailingBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        raise ValueError("backward")


def _backward_errors(x):
    """A backward that fails at a node (a post-hook, a pre-hook, a custom Function's backward) drops the
    gradients the engine held for that node"""
    def fail(*args):
        raise ValueError("hook")
    for how in ("hook", "prehook", "function"):
        y = x.detach().requires_grad_(True)
        z = ((_FailingBackward.apply(y * 3) if how == "function" else y.exp()) * y).sum()
        node = z.grad_fn.next_functions[0][0]
        if how == "hook":
            node.register_hook(fail)
        elif how == "prehook":
            node.register_prehook(fail)
        try:
            z.backward()
        except ValueError:
            continue
        raise AssertionError("expected an error")


def _record_stream(x):
    """Tensor.record_stream on CUDA (the freed block waits for the stream's work); the CPU raises"""
    if x.device.type == "cuda":
        s = torch.cuda.Stream()
        t = x * 2
        t.record_stream(s)
        return t.sum()
    try:
        x.record_stream(None)
    except RuntimeError:
        return
    raise AssertionError("expected an error")


# (id, callable of a (4, 6) float64 tensor)
CASES = [
    # elementwise, reductions, scans, selection
    ("add_mul_where", lambda x: torch.where(x > 0, x * 2 + 1, -x)),
    ("sum_mean_var", lambda x: (x.sum(1), x.mean((0, 1), keepdim=True), x.var(0, correction=0))),
    ("max_dim", lambda x: x.max(1)),
    ("cumsum_cummax", lambda x: (x.cumsum(0), torch.cummax(x, 1), torch.cummin(x, 0))),
    ("logcumsumexp", _backward(lambda y: torch.logcumsumexp(y, 1))),
    ("nanmean_nanmedian", lambda x: (x.nanmean(1), torch.nanmedian(x, 0), x.nanmedian())),
    ("sort_topk_median", lambda x: (x.sort(1), x.topk(2), x.median(0), x.argsort(0))),
    ("kthvalue_mode", lambda x: (x.kthvalue(2, 1), torch.mode(x.round(), 0), x.msort())),
    ("quantile", _backward(lambda y: torch.quantile(y, torch.tensor([0.25, 0.5], dtype=y.dtype, device=y.device), 1))),
    ("quantile_out", _out(lambda x, o: torch.nanquantile(x, 0.5, 1, out=o), (4,))),
    ("cummax_out", lambda x: torch.cummax(x, 0, out=(torch.empty_like(x), torch.empty(4, 6, dtype=torch.int64,
                                                                                          device=x.device)))),
    ("kthvalue_error", _raises(lambda x: x.kthvalue(9, 1), RuntimeError)),
    ("quantile_error", _raises(lambda x: torch.quantile(x, 1.5), RuntimeError)),
    # indexing, search
    ("index_gather", lambda x: (x[x > 0], x[[0, 2]],
                                x.gather(1, torch.zeros(4, 1, dtype=torch.int64, device=x.device)))),
    ("searchsorted", lambda x: torch.searchsorted(x.sort(1).values, x[:, :2].contiguous(), right=True)),
    ("bucketize_isin", lambda x: (torch.bucketize(x, x[0].sort().values), torch.isin(x, x[0]))),
    ("bincount_histc", lambda x: (torch.bincount((x.abs() * 3).long().flatten(), minlength=2),
                                  torch.histc(x, bins=5, min=-1, max=1))),
    ("unique", lambda x: (torch.unique(x.round(), return_inverse=True, return_counts=True),
                          torch.unique(x.round(), dim=0), torch.unique_consecutive(x.round(), return_counts=True))),
    ("search_error", _raises(lambda x: torch.bincount(x), RuntimeError)),
    # composites
    ("meshgrid_cartesian", lambda x: (torch.meshgrid(x[0], x[1], indexing="xy"), torch.cartesian_prod(x[0], x[1]))),
    ("diff_trace_kron", _backward(lambda y: torch.diff(y, prepend=y[:, :1]).sum() + y[:, :4].trace()
                                  + torch.kron(y[:2, :2], y[:2, :2]).sum())),
    ("tensordot_cross", _backward(lambda y: torch.tensordot(y, y, dims=([1], [1])).sum()
                                  + torch.cross(y[:, :3], y[:, 3:], dim=1).sum())),
    ("block_diag_rot90", _backward(lambda y: torch.block_diag(y, y[:2]).sum() + torch.rot90(y, 1, [0, 1]).sum())),
    ("cdist_cov", _backward(lambda y: torch.cdist(y, y[:2]).sum() + torch.cov(y).sum() + torch.corrcoef(y).sum())),
    ("take_along_tril_indices", lambda x: (torch.take_along_dim(x, x.argsort(1), 1),
                                           torch.tril_indices(4, 6, device=x.device), torch.atleast_3d(x, x[0]))),
    ("composite_error", _raises(lambda x: torch.tensordot(x, x, dims=3), RuntimeError)),
    # autograd, nn, optim
    ("linear_ce_backward", _backward(lambda y: F.cross_entropy(F.linear(y, y[:3]), torch.tensor([0, 1, 2, 0],
                                                                                                 device=y.device)))),
    ("layer_norm_backward", _backward(lambda y: F.layer_norm(y, (6,)))),
    ("optim_more_steps", _optim_more_steps),
    ("optim_step_error", _raises(lambda x: torch._C._optim_step("rprop", [x], [x], [[None], [x.float()]], [None], [],
                                                                0.1), RuntimeError)),
    # recurrent layers: a packed bidirectional LSTM (x as its data and weights), a GRU cell, the packers
    ("rnn_lstm_packed_backward", _backward(lambda y: sum(o.sum() for o in torch._C._rnn(
        "LSTM", y, torch.tensor([2, 1, 1]), (y[:2, :2].reshape(2, 2, 1), y[:2, 2:4].reshape(2, 2, 1)),
        [y, y[:, :1], y * 0.5, y[:, 1:2]], False, 1, 0.0, False, True, False)) + torch.gru_cell(
        y[:, :2], y[:, 2:3], y[:3, :2], y[:3, 3:4]).sum())),
    ("rnn_pack_pad", lambda x: torch.nn.utils.rnn.pad_packed_sequence(torch.nn.utils.rnn.pack_sequence(
        [x[1:], x, x[2:]], enforce_sorted=False), batch_first=True, total_length=5)),
    ("rnn_error", _raises(lambda x: torch._C._rnn("GRU", x.reshape(2, 2, 6), None, x[:3].reshape(1, 3, 6),
                                                  [x, x], False, 1, 0.0, False, False, False), RuntimeError)),
    ("autocast_cached_weight", _autocast_twice),
    ("grad_scaler_kernels", _grad_scaler_kernels),
    # spatial: interpolation (csrc/upsample.c), transposed convolution, fold / unfold (conv.c), spatial.c
    ("interpolate_backward", _backward(lambda y: F.interpolate(y[None, None], scale_factor=1.5, mode="bicubic").sum()
                                       + F.interpolate(y[None], size=9, mode="linear", align_corners=True).sum())),
    ("conv_transpose_backward", _backward(lambda y: F.conv_transpose2d(y[None, None], y[:1, :4].reshape(1, 1, 2, 2),
                                                                       y[0, :1], stride=2).sum())),
    ("fold_shuffle_backward", _backward(lambda y: F.fold(F.unfold(y[None, None], 2), (4, 6), 2).sum()
                                        + F.pixel_shuffle(y.reshape(1, 4, 2, 3), 2).sum())),
    ("instance_norm_dropout", _backward(lambda y: F.instance_norm(y[None]).sum() + F.dropout1d(y, 0.5).sum())),
    ("spatial_errors", _raises(lambda x: (F.interpolate(x[None], size=0) if x.sum() > 100 else
                                          F.conv_transpose2d(x[None, None], x[None, None], padding=9)), RuntimeError)),
    # csrc/nn_misc.c: composites with host-built index tables (embedding bags, CTC) and their error paths
    ("nn_misc_backward", _backward(lambda y: F.rms_norm(y, (6,), y[0]).sum()
                                   + F.bilinear(y[:2, :3], y[2:, 3:], y[:3, :3].reshape(1, 3, 3)).sum()
                                   + F.embedding_bag(torch.tensor([0, 2, 1, 3], device=y.device), y,
                                                     torch.tensor([0, 2], device=y.device), mode="max").sum())),
    ("nn_misc_losses", _backward(lambda y: F.ctc_loss(y[:, None].log_softmax(2), torch.tensor([[1, 2]], device=y.device),
                                                      [4], [2])
                                 + F.multilabel_margin_loss(y, torch.tensor([[1, 0, -1, 2, 2, 0]] * 4, device=y.device))
                                 + F.grid_sample(y[None, None], y[:2, :4].reshape(1, 2, 2, 2) / 4, align_corners=False).sum())),
    ("grid_sample_double_backward", lambda x: _grid_double_backward(x)),
    ("nn_misc_errors", _raises(lambda x: (F.ctc_loss(x[:, None], torch.tensor([[1]]), [9], [1]) if x.sum() < 100 else
                                          F.multi_margin_loss(x, torch.tensor([1]))), RuntimeError)),
    # ops_more.c, views.c's unfold and in-place metadata ops, the special-function rows
    ("more_views_backward", _backward(lambda y: y.unfold(1, 2, 2).sum() + y.clone().t_().sum()
                                      + y.clone().unsqueeze_(0).squeeze_(0).sum() + torch.diag_embed(y).sum()
                                      + y.repeat_interleave(torch.tensor([1, 0, 2, 1], device=y.device), dim=0).sum()
                                      + sum(p.sum() for p in y.tensor_split([1, 3], 1)) + torch.diagflat(y[0]).sum()
                                      + y.clone().fill_diagonal_(1.0).sum() + y.repeat_interleave(2).sum())),
    ("more_special_backward", _backward(lambda y: torch.erfinv(y.tanh() * 0.5) + torch.lgamma(y.abs() + 1)
                                        + torch.digamma(y.abs() + 1) + torch.polygamma(2, y.abs() + 1) + torch.i0(y)
                                        + torch.sinc(y) + torch.logit(y.sigmoid(), 0.1) + torch.xlogy(y, y.abs() + 1)
                                        + torch.mvlgamma(y.abs() + 3, 2) + torch.frexp(y)[0] + torch.deg2rad(y)
                                        + torch.ldexp(y, torch.ones(6, dtype=torch.int64, device=y.device)))),
    ("more_composites", lambda x: (torch.unravel_index((x.abs() * 3).long(), (2, 3)), torch.trapezoid(x, x[0]),
                                   torch.cumulative_trapezoid(x, dx=0.5), torch.hann_window(5, device=x.device),
                                   torch.kaiser_window(4, device=x.device), torch.hsplit(x, 2), x.ravel(),
                                   x.type_as(x.float()), torch.gcd(x.long(), x.long() + 2), torch.heaviside(x, x))),
    ("more_errors", _raises(lambda x: x.repeat_interleave(torch.tensor([1, 2], device=x.device), dim=0)
                            if x.sum() > 100 else torch.mvlgamma(x, 3), RuntimeError)),
    ("more_errors_split", _raises(lambda x: x.tensor_split(torch.tensor([[1]])), RuntimeError)),
    # csrc/linalg_decomp.c: the decompositions with their backwards, out= forms and error paths
    ("decomp_backward", _backward(lambda y: torch.linalg.cholesky(y @ y.mT, upper=True).sum()
                                  + torch.cholesky_inverse(y[:, :4].tril()).sum()
                                  + sum(t.sum() for t in torch.linalg.qr(y.mT))
                                  + torch.cholesky_solve(y, y[:, :4].tril()).sum()
                                  + torch.linalg.solve_triangular(y[:, :4], y, upper=True, left=True).sum())),
    ("decomp_out", lambda x: (torch.linalg.qr(x, mode="complete", out=(torch.empty(0, dtype=x.dtype, device=x.device),
                                                                       torch.empty(0, dtype=x.dtype, device=x.device))),
                              torch.linalg.cholesky_ex(x @ x.mT - 9), torch.linalg.qr(x, mode="r"))),
    ("decomp_errors", _raises(lambda x: torch.linalg.cholesky(-x @ x.mT) if x.sum() < 100 else
                              torch.cholesky_inverse(x[:, :4] * 0), RuntimeError)),
    # this session's ops: eigh/svd and the LU family (linalg_eig.c, linalg_lu.c), as_strided, histogram,
    # gradient, the special rows, 5-D interpolate, native ctc (its cases are above)
    ("eig_svd_backward", _backward(lambda y: torch.linalg.eigh(y @ y.mT).eigenvectors.sum()
                                   + sum(t.sum() for t in torch.linalg.svd(y, full_matrices=False))
                                   + torch.linalg.pinv(y).sum() + torch.linalg.matrix_norm(y, "nuc"))),
    ("lu_family_backward", _backward(lambda y: torch.linalg.lu_factor_ex(y[:, :4]).LU.sum()
                                     + sum(t.sum() for t in torch.linalg.lu(y))
                                     + torch.linalg.lstsq(y.mT, y[0]).solution.sum()
                                     + torch.linalg.matrix_exp(y[:, :4] * 0.1).sum()
                                     + torch.linalg.inv_ex(y[:, :4]).inverse.sum())),
    ("linalg_ex_errors", _raises(lambda x: torch.linalg.inv_ex(x[:, :4] * 0, check_errors=True), RuntimeError)),
    ("strided_gradient_backward", _backward(lambda y: y.as_strided((3, 2), (1, 1), 2).sum()
                                            + torch.gradient(y, dim=1, edge_order=2)[0].sum()
                                            + torch.special.i1e(y).sum() + torch.special.log_ndtr(y).sum()
                                            + F.interpolate(y.reshape(1, 1, 2, 2, 6), scale_factor=2,
                                                            mode="trilinear").sum())),
    ("histogram", lambda x: (torch.histogram(x.cpu(), 4, weight=x.cpu().abs()), torch.histogramdd(x.cpu()[:, :2], 3))),
    ("as_strided_error", _raises(lambda x: x.as_strided((9, 9), (3, 3)), RuntimeError)),
    # fractional max pooling (nn_frac_pool.c): drawn and given samples, its backward, an error
    ("fractional_max_pool_backward", _backward(
        lambda y: F.fractional_max_pool2d(y[None, None], 2, output_size=(2, 3), return_indices=True)[0].sum()
        + F.fractional_max_pool3d(y.reshape(1, 2, 2, 6), (1, 1, 2), output_size=2,
                                  _random_samples=y[:1, None, :3].detach().abs() / 5).sum())),
    ("fractional_max_pool_error", _raises(lambda x: F.fractional_max_pool2d(x[None, None], 2, output_size=2,
                                                                            _random_samples=x[:1, :1, None]),
                                          RuntimeError)),
    # torch.special's orthogonal polynomials and airy_ai (special_poly_math.h): numbers, out=, the errors
    ("special_polynomials", lambda x: (torch.special.chebyshev_polynomial_u(x, x[0].abs()),
                                       torch.special.hermite_polynomial_he(0.5, x), torch.special.airy_ai(x),
                                       torch.special.legendre_polynomial_p(x, 3, out=torch.empty_like(x)))),
    ("special_polynomial_errors", _raises(lambda x: torch.special.laguerre_polynomial_l(x.half(), 2)
                                          if x.sum() < 100 else torch.special.laguerre_polynomial_l(1.0, 2),
                                          NotImplementedError)),
    # this session's C ops beyond the families: tensor_more.c, ldl (linalg_ldl.c), _dirichlet_grad, segment_reduce,
    # saved-tensor hooks, record_stream
    ("tensor_more", _tensor_more),
    ("tensor_more_backward", _backward(lambda y: y.clone().cumprod_(1).sum() + y.clone().addr_(y[:, 0], y[0]).sum())),
    ("tensor_more_errors", _tensor_more_errors),
    ("ldl", lambda x: (torch.linalg.ldl_solve(*torch.linalg.ldl_factor(x[:, :4] + x[:, :4].mT), x),
                       torch.linalg.ldl_factor_ex(x[:, :4] @ x[:, :4].mT, hermitian=True),
                       torch.linalg.ldl_factor_ex(x[:, :4] * 0))),
    ("ldl_errors", _raises(lambda x: torch.linalg.ldl_factor(x) if x.sum() < 100 else
                           torch.linalg.ldl_solve(x[:, :4], torch.ones(4, dtype=torch.int32), x[:3]), RuntimeError)),
    ("dirichlet_grad", lambda x: torch._dirichlet_grad(x.sigmoid().cpu(), x.abs().cpu() + 1,
                                                       (x.abs().cpu() + 1).sum(1, keepdim=True))),
    ("dirichlet_grad_error", _raises(lambda x: torch._dirichlet_grad(x.cpu(), x.float().cpu(), x.cpu()), RuntimeError)),
    ("segment_reduce", _backward(lambda y: sum(torch.segment_reduce(y, r, lengths=torch.tensor([1, 0, 3], device=y.device))
                                               .nan_to_num().sum() for r in ("sum", "mean", "max", "prod"))
                                 + torch.segment_reduce(y, "min", offsets=torch.tensor([[0, 2, 6]] * 4, device=y.device),
                                                        axis=1, initial=0.5).sum())),
    ("segment_reduce_error", _raises(lambda x: torch.segment_reduce(x, "sum", lengths=torch.tensor([1, 2], device=x.device)),
                                     RuntimeError)),
    ("saved_tensors_hooks", _saved_hooks(None)),
    ("saved_tensors_hooks_pack_error", _saved_hooks("pack")),
    ("saved_tensors_hooks_unpack_error", _saved_hooks("unpack")),
    ("backward_errors", _backward_errors),
    ("record_stream", _record_stream),
]


@pytest.mark.parametrize("case", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_op_does_not_leak(device, case):
    x = torch.tensor([[0.5, -1.0, 2.0, 0.25, -0.75, 1.5], [1.0, 3.0, -2.0, 0.0, 0.5, -0.5],
                      [2.5, -1.5, 1.0, 4.0, -3.0, 0.75], [-0.25, 0.125, 1.25, -2.5, 3.5, 2.0]],
                     dtype=torch.float64, device=device)
    # 25 calls a window where calls are slow (the CUDA emulator runs every case)
    assert_no_leak(lambda: case(x), 200 if device == "cpu" else 25)
