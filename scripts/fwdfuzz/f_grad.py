"""Gradient pass: float64 inputs, compare grad_fn names and .grad of sum(f(x) * w) (first output)."""
from core import *  # noqa


def R(L, shape, seed=0, pos=False):
    t = make(L, "float64", "contig", shape, seed=seed, special=False)
    return t.abs() + 0.5 if pos else t


def gname(L, t):
    if t.grad_fn is None:
        return None
    return type(t.grad_fn).__name__ if L is torch else t.grad_fn.name()


def run(L, fn, shapes, pos):
    xs = [R(L, s, i + 1, pos).requires_grad_() for i, s in enumerate(shapes)]
    out = fn(L, *xs)
    o = out[0] if isinstance(out, (tuple, list)) else out
    w = R(L, tuple(o.shape), 99)
    (o * w).sum().backward()
    return [gname(L, o)] + [x.grad if x.grad is not None else None for x in xs]


def SPD(L, a):
    return a @ a.mT + 3 * L.eye(a.shape[-1], dtype=a.dtype)


def F(L):
    return L.nn.functional


CASES = [
    # nn.functional
    ("relu", lambda L, x: F(L).relu(x), [(3, 4)]), ("elu", lambda L, x: F(L).elu(x, 0.7), [(3, 4)]),
    ("selu", lambda L, x: F(L).selu(x), [(3, 4)]), ("celu", lambda L, x: F(L).celu(x, 1.3), [(3, 4)]),
    ("gelu", lambda L, x: F(L).gelu(x), [(3, 4)]), ("gelu tanh", lambda L, x: F(L).gelu(x, approximate="tanh"), [(3, 4)]),
    ("silu", lambda L, x: F(L).silu(x), [(3, 4)]), ("mish", lambda L, x: F(L).mish(x), [(3, 4)]),
    ("hardswish", lambda L, x: F(L).hardswish(x), [(3, 4)]), ("hardsigmoid", lambda L, x: F(L).hardsigmoid(x), [(3, 4)]),
    ("hardtanh", lambda L, x: F(L).hardtanh(x, -0.5, 0.5), [(3, 4)]), ("leaky_relu", lambda L, x: F(L).leaky_relu(x, 0.1), [(3, 4)]),
    ("logsigmoid", lambda L, x: F(L).logsigmoid(x), [(3, 4)]), ("softplus", lambda L, x: F(L).softplus(x, 2, 1), [(3, 4)]),
    ("softshrink", lambda L, x: F(L).softshrink(x, 0.3), [(3, 4)]), ("hardshrink", lambda L, x: F(L).hardshrink(x, 0.3), [(3, 4)]),
    ("tanhshrink", lambda L, x: F(L).tanhshrink(x), [(3, 4)]), ("softsign", lambda L, x: F(L).softsign(x), [(3, 4)]),
    ("threshold", lambda L, x: F(L).threshold(x, 0.1, 2.0), [(3, 4)]), ("glu", lambda L, x: F(L).glu(x, 1), [(3, 4)]),
    ("prelu", lambda L, x, w: F(L).prelu(x, w), [(2, 3, 4), (3,)]), ("rrelu eval", lambda L, x: F(L).rrelu(x), [(3, 4)]),
    ("softmax", lambda L, x: F(L).softmax(x, 1), [(3, 4)]), ("log_softmax", lambda L, x: F(L).log_softmax(x, 0), [(3, 4)]),
    ("softmin", lambda L, x: F(L).softmin(x, 1), [(3, 4)]), ("normalize", lambda L, x: F(L).normalize(x, p=3, dim=0), [(3, 4)]),
    ("linear", lambda L, x, w, b: F(L).linear(x, w, b), [(2, 4), (3, 4), (3,)]),
    ("bilinear", lambda L, x, y, w, b: F(L).bilinear(x, y, w, b), [(2, 3), (2, 4), (5, 3, 4), (5,)]),
    ("conv1d", lambda L, x, w, b: F(L).conv1d(x, w, b, 2, 1, 1, 2), [(2, 4, 7), (6, 2, 3), (6,)]),
    ("conv2d", lambda L, x, w, b: F(L).conv2d(x, w, b, 1, 1, 2), [(2, 4, 5, 5), (6, 4, 3, 3), (6,)]),
    ("conv2d same", lambda L, x, w: F(L).conv2d(x, w, padding="same", dilation=2), [(1, 2, 5, 6), (3, 2, 3, 2)]),
    ("conv3d", lambda L, x, w: F(L).conv3d(x, w, stride=2), [(1, 2, 5, 4, 5), (3, 2, 2, 2, 2)]),
    ("conv_transpose1d", lambda L, x, w, b: F(L).conv_transpose1d(x, w, b, 2, 1, 1), [(2, 4, 5), (4, 3, 3), (3,)]),
    ("conv_transpose2d", lambda L, x, w: F(L).conv_transpose2d(x, w, None, 2, 1, 1, 2, 1), [(1, 4, 3, 4), (4, 3, 3, 3)]),
    ("conv_transpose3d", lambda L, x, w: F(L).conv_transpose3d(x, w, stride=2), [(1, 2, 2, 3, 2), (2, 3, 2, 2, 2)]),
    ("max_pool1d", lambda L, x: F(L).max_pool1d(x, 3, 2, 1), [(2, 3, 8)]),
    ("max_pool2d", lambda L, x: F(L).max_pool2d(x, 2, 2, 1, 2, ceil_mode=True), [(2, 3, 7, 6)]),
    ("max_pool3d", lambda L, x: F(L).max_pool3d(x, 2), [(1, 2, 4, 4, 4)]),
    ("avg_pool1d", lambda L, x: F(L).avg_pool1d(x, 3, 2, 1, count_include_pad=False), [(2, 3, 8)]),
    ("avg_pool2d", lambda L, x: F(L).avg_pool2d(x, 3, 2, 1, ceil_mode=True, divisor_override=5), [(2, 3, 7, 6)]),
    ("avg_pool3d", lambda L, x: F(L).avg_pool3d(x, 2, 1, 1), [(1, 2, 3, 3, 3)]),
    ("adaptive_avg_pool1d", lambda L, x: F(L).adaptive_avg_pool1d(x, 3), [(2, 3, 7)]),
    ("adaptive_avg_pool2d", lambda L, x: F(L).adaptive_avg_pool2d(x, (3, 2)), [(2, 3, 7, 5)]),
    ("adaptive_avg_pool3d", lambda L, x: F(L).adaptive_avg_pool3d(x, 2), [(1, 2, 3, 5, 4)]),
    ("adaptive_max_pool1d", lambda L, x: F(L).adaptive_max_pool1d(x, 3), [(2, 3, 7)]),
    ("adaptive_max_pool2d", lambda L, x: F(L).adaptive_max_pool2d(x, (3, 2)), [(2, 3, 7, 5)]),
    ("adaptive_max_pool3d", lambda L, x: F(L).adaptive_max_pool3d(x, 2), [(1, 2, 3, 5, 4)]),
    ("lp_pool1d", lambda L, x: F(L).lp_pool1d(x, 2, 3, 2), [(2, 3, 8)]),
    ("lp_pool2d", lambda L, x: F(L).lp_pool2d(x, 3, 2), [(2, 3, 6, 6)]),
    ("max_unpool2d", lambda L, x: F(L).max_unpool2d(*F(L).max_pool2d(x, 2, return_indices=True), 2), [(1, 2, 4, 4)]),
    ("batch_norm train", lambda L, x, w, b: F(L).batch_norm(x, None, None, w, b, training=True), [(4, 3, 5), (3,), (3,)]),
    ("batch_norm eval", lambda L, x, m, v: F(L).batch_norm(x, m.detach(), v.detach().abs() + 1, training=False), [(4, 3), (3,), (3,)]),
    ("instance_norm", lambda L, x, w, b: F(L).instance_norm(x, weight=w, bias=b), [(2, 3, 5), (3,), (3,)]),
    ("layer_norm", lambda L, x, w, b: F(L).layer_norm(x, (4,), w, b), [(2, 3, 4), (4,), (4,)]),
    ("rms_norm", lambda L, x, w: F(L).rms_norm(x, (3, 4), w), [(2, 3, 4), (3, 4)]),
    ("group_norm", lambda L, x, w, b: F(L).group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)]),
    ("local_response_norm", lambda L, x: F(L).local_response_norm(x, 3), [(2, 4, 5)]),
    ("embedding", lambda L, w: F(L).embedding(L.tensor([[0, 1, 1], [3, 2, 1]]), w, padding_idx=1), [(4, 3)]),
    ("embedding sgf", lambda L, w: F(L).embedding(L.tensor([[0, 1, 1], [3, 2, 1]]), w, scale_grad_by_freq=True), [(4, 3)]),
    ("embedding_bag sum", lambda L, w, p: F(L).embedding_bag(L.tensor([0, 1, 1, 3, 2]), w, L.tensor([0, 2]), mode="sum", per_sample_weights=p), [(4, 3), (5,)]),
    ("embedding_bag mean", lambda L, w: F(L).embedding_bag(L.tensor([[0, 1], [3, 3]]), w, mode="mean"), [(4, 3)]),
    ("embedding_bag max", lambda L, w: F(L).embedding_bag(L.tensor([[0, 1], [3, 2]]), w, mode="max"), [(4, 3)]),
    ("pad reflect", lambda L, x: F(L).pad(x, (2, 1, 1, 1), mode="reflect"), [(1, 2, 3, 4)]),
    ("pad replicate", lambda L, x: F(L).pad(x, (2, 1), mode="replicate"), [(1, 2, 4)]),
    ("pad circular", lambda L, x: F(L).pad(x, (2, -1), mode="circular"), [(1, 2, 4)]),
    ("pad constant", lambda L, x: F(L).pad(x, (2, -1, 1, 0), value=3.0), [(1, 2, 4)]),
    ("interp nearest", lambda L, x: F(L).interpolate(x, scale_factor=1.7), [(1, 2, 5)]),
    ("interp nearest-exact", lambda L, x: F(L).interpolate(x, size=(3, 7), mode="nearest-exact"), [(1, 2, 5, 4)]),
    ("interp linear", lambda L, x: F(L).interpolate(x, size=7, mode="linear", align_corners=True), [(1, 2, 5)]),
    ("interp bilinear", lambda L, x: F(L).interpolate(x, scale_factor=0.6, mode="bilinear"), [(1, 2, 5, 4)]),
    ("interp bilinear aa", lambda L, x: F(L).interpolate(x, size=(3, 2), mode="bilinear", antialias=True), [(1, 2, 7, 6)]),
    ("interp bicubic", lambda L, x: F(L).interpolate(x, size=(6, 3), mode="bicubic"), [(1, 2, 5, 4)]),
    ("interp trilinear", lambda L, x: F(L).interpolate(x, size=(3, 4, 2), mode="trilinear"), [(1, 1, 2, 3, 3)]),
    ("interp area", lambda L, x: F(L).interpolate(x, size=(3, 2), mode="area"), [(1, 2, 7, 5)]),
    ("grid_sample", lambda L, x, g: F(L).grid_sample(x, g.tanh(), align_corners=False), [(1, 2, 4, 5), (1, 3, 2, 2)]),
    ("grid_sample bicubic", lambda L, x, g: F(L).grid_sample(x, g.tanh(), mode="bicubic", padding_mode="border", align_corners=True), [(1, 2, 4, 5), (1, 3, 2, 2)]),
    ("grid_sample nearest", lambda L, x, g: F(L).grid_sample(x, g.tanh(), mode="nearest", padding_mode="reflection"), [(1, 2, 4, 5), (1, 3, 2, 2)]),
    ("grid_sample 3d", lambda L, x, g: F(L).grid_sample(x, g.tanh()), [(1, 2, 3, 4, 2), (1, 2, 2, 2, 3)]),
    ("affine_grid", lambda L, t: F(L).affine_grid(t, [1, 2, 3, 4], align_corners=False), [(1, 2, 3)]),
    ("pixel_shuffle", lambda L, x: F(L).pixel_shuffle(x, 2), [(1, 8, 2, 3)]),
    ("pixel_unshuffle", lambda L, x: F(L).pixel_unshuffle(x, 2), [(1, 2, 4, 6)]),
    ("channel_shuffle", lambda L, x: F(L).channel_shuffle(x, 2), [(1, 4, 3)]),
    ("unfold", lambda L, x: F(L).unfold(x, 2, 1, 1, 2), [(1, 2, 4, 5)]),
    ("fold", lambda L, x: F(L).fold(x, (4, 5), 2, 1, 1, 2), [(1, 8, 6)]),
    ("pdist", lambda L, x: F(L).pdist(x, 1.5), [(4, 3)]),
    ("cdist", lambda L, x, y: L.cdist(x, y), [(4, 3), (5, 3)]),
    ("cdist p1", lambda L, x, y: L.cdist(x, y, p=1), [(4, 3), (5, 3)]),
    ("pairwise_distance", lambda L, x, y: F(L).pairwise_distance(x, y, 3), [(4, 3), (4, 3)]),
    ("cosine_similarity", lambda L, x, y: F(L).cosine_similarity(x, y), [(4, 3), (4, 3)]),
    ("sdpa", lambda L, q, k, v: F(L).scaled_dot_product_attention(q, k, v, is_causal=True), [(2, 3, 4), (2, 3, 4), (2, 3, 5)]),
    ("sdpa mask", lambda L, q, k, v, m: F(L).scaled_dot_product_attention(q, k, v, m), [(2, 3, 4), (2, 5, 4), (2, 5, 2), (3, 5)]),
    ("mse_loss", lambda L, x, y: F(L).mse_loss(x, y), [(3, 4), (3, 4)]),
    ("l1_loss", lambda L, x, y: F(L).l1_loss(x, y, reduction="sum"), [(3, 4), (3, 4)]),
    ("smooth_l1", lambda L, x, y: F(L).smooth_l1_loss(x, y, beta=0.5), [(3, 4), (3, 4)]),
    ("huber", lambda L, x, y: F(L).huber_loss(x, y, reduction="none", delta=0.5), [(3, 4), (3, 4)]),
    ("bce", lambda L, x, y: F(L).binary_cross_entropy(x.sigmoid(), y.sigmoid()), [(3, 4), (3, 4)]),
    ("bce_logits", lambda L, x, y, p: F(L).binary_cross_entropy_with_logits(x, y.sigmoid(), pos_weight=p), [(3, 4), (3, 4), (4,)]),
    ("kl_div", lambda L, x, y: F(L).kl_div(x, y.sigmoid(), reduction="batchmean"), [(3, 4), (3, 4)]),
    ("kl_div logt", lambda L, x, y: F(L).kl_div(x, y, reduction="sum", log_target=True), [(3, 4), (3, 4)]),
    ("poisson_nll", lambda L, x, y: F(L).poisson_nll_loss(x, y.abs()), [(3, 4), (3, 4)]),
    ("poisson_nll full", lambda L, x, y: F(L).poisson_nll_loss(x.abs() + 0.1, y.abs() + 2, log_input=False, full=True), [(3, 4), (3, 4)]),
    ("gaussian_nll", lambda L, x, y, v: F(L).gaussian_nll_loss(x, y, v.abs() + 0.1, full=True), [(3, 4), (3, 4), (3, 4)]),
    ("cross_entropy", lambda L, x, w: F(L).cross_entropy(x, L.tensor([1, 0, 3]), weight=w.abs(), label_smoothing=0.2, ignore_index=0), [(3, 4), (4,)]),
    ("cross_entropy probs", lambda L, x, y: F(L).cross_entropy(x, y.softmax(1), label_smoothing=0.1), [(3, 4), (3, 4)]),
    ("cross_entropy 4d", lambda L, x: F(L).cross_entropy(x, L.tensor([[[1, 0], [2, 2]]]), reduction="sum"), [(1, 3, 2, 2)]),
    ("nll_loss", lambda L, x, w: F(L).nll_loss(x, L.tensor([1, 0, 3]), weight=w.abs()), [(3, 4), (4,)]),
    ("nll_loss2d", lambda L, x: F(L).nll_loss(x, L.tensor([[[1, 0], [2, 2]]])), [(1, 3, 2, 2)]),
    ("margin_ranking", lambda L, x, y: F(L).margin_ranking_loss(x, y, L.tensor([1., -1, 1]).double(), margin=0.3), [(3,), (3,)]),
    ("hinge_embedding", lambda L, x: F(L).hinge_embedding_loss(x, L.tensor([1., -1, 1]).double(), margin=2.0), [(3,)]),
    ("soft_margin", lambda L, x: F(L).soft_margin_loss(x, L.tensor([1., -1, 1]).double()), [(3,)]),
    ("multilabel_soft_margin", lambda L, x: F(L).multilabel_soft_margin_loss(x, L.tensor([[1., 0, 1], [0, 0, 1]]).double()), [(2, 3)]),
    ("multi_margin", lambda L, x: F(L).multi_margin_loss(x, L.tensor([2, 0])), [(2, 3)]),
    ("multilabel_margin", lambda L, x: F(L).multilabel_margin_loss(x, L.tensor([[2, 0, -1], [1, -1, 0]])), [(2, 3)]),
    ("cosine_embedding", lambda L, x, y: F(L).cosine_embedding_loss(x, y, L.tensor([1, -1])), [(2, 3), (2, 3)]),
    ("triplet", lambda L, a, p, n: F(L).triplet_margin_loss(a, p, n, swap=True), [(2, 3), (2, 3), (2, 3)]),
    ("ctc", lambda L, x: F(L).ctc_loss(x.log_softmax(2), L.tensor([[1, 2], [1, 1]]), L.tensor([4, 4]), L.tensor([2, 2])), [(4, 2, 3)]),
    ("mha_forward", lambda L, q, w, b, ow: F(L).multi_head_attention_forward(q, q, q, 4, 2, w, b, None, None, False, 0.0, ow, None, training=False), [(3, 1, 4), (12, 4), (12,), (4, 4)]),
    # linalg
    ("det", lambda L, a: L.linalg.det(a), [(3, 3)]), ("slogdet", lambda L, a: L.linalg.slogdet(a)[1], [(3, 3)]),
    ("logdet", lambda L, a: L.logdet(SPD(L, a)), [(3, 3)]),
    ("inv", lambda L, a: L.linalg.inv(a), [(3, 3)]), ("inv_ex", lambda L, a: L.linalg.inv_ex(a), [(3, 3)]),
    ("pinv", lambda L, a: L.linalg.pinv(a), [(3, 4)]), ("pinv herm", lambda L, a: L.linalg.pinv(SPD(L, a), hermitian=True), [(3, 3)]),
    ("matrix_norm fro", lambda L, a: L.linalg.matrix_norm(a), [(3, 4)]),
    ("matrix_norm nuc", lambda L, a: L.linalg.matrix_norm(a, "nuc"), [(3, 4)]),
    ("matrix_norm 2", lambda L, a: L.linalg.matrix_norm(a, 2), [(3, 4)]),
    ("matrix_norm 1", lambda L, a: L.linalg.matrix_norm(a, 1), [(3, 4)]),
    ("matrix_norm inf", lambda L, a: L.linalg.matrix_norm(a, float("inf")), [(3, 4)]),
    ("vector_norm", lambda L, a: L.linalg.vector_norm(a, 3, dim=1), [(3, 4)]),
    ("vector_norm inf", lambda L, a: L.linalg.vector_norm(a, float("inf")), [(3, 4)]),
    ("norm", lambda L, a: L.linalg.norm(a), [(3, 4)]),
    ("cond", lambda L, a: L.linalg.cond(a), [(3, 3)]), ("cond fro", lambda L, a: L.linalg.cond(a, "fro"), [(3, 3)]),
    ("svdvals", lambda L, a: L.linalg.svdvals(a), [(3, 4)]),
    ("svd U", lambda L, a: (lambda r: r.U.abs())(L.linalg.svd(a, full_matrices=False)), [(4, 3)]),
    ("eigh vals", lambda L, a: L.linalg.eigh(a + a.mT).eigenvalues, [(3, 3)]),
    ("eigvalsh", lambda L, a: L.linalg.eigvalsh(a + a.mT), [(3, 3)]),
    ("eigh vecs", lambda L, a: L.linalg.eigh(a + a.mT).eigenvectors.abs(), [(3, 3)]),
    ("cholesky", lambda L, a: L.linalg.cholesky(SPD(L, a)), [(3, 3)]),
    ("cholesky_ex", lambda L, a: L.linalg.cholesky_ex(SPD(L, a)), [(3, 3)]),
    ("cholesky upper", lambda L, a: L.linalg.cholesky(SPD(L, a), upper=True), [(3, 3)]),
    ("cholesky_solve", lambda L, b, a: L.cholesky_solve(b, L.linalg.cholesky(SPD(L, a))), [(3, 2), (3, 3)]),
    ("cholesky_inverse", lambda L, a: L.cholesky_inverse(L.linalg.cholesky(SPD(L, a))), [(3, 3)]),
    ("solve", lambda L, a, b: L.linalg.solve(a, b), [(3, 3), (3, 2)]),
    ("solve left", lambda L, a, b: L.linalg.solve(a, b, left=False), [(3, 3), (2, 3)]),
    ("solve_ex", lambda L, a, b: L.linalg.solve_ex(a, b), [(3, 3), (3,)]),
    ("solve_triangular", lambda L, a, b: L.linalg.solve_triangular(a + 4 * L.eye(3, dtype=a.dtype), b, upper=True), [(3, 3), (3, 2)]),
    ("solve_triangular unit left", lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True), [(3, 3), (2, 3)]),
    ("lstsq", lambda L, a, b: L.linalg.lstsq(a, b).solution, [(4, 3), (4, 2)]),
    ("lu_factor", lambda L, a: L.linalg.lu_factor(a).LU, [(3, 3)]),
    ("lu", lambda L, a: L.linalg.lu(a).U, [(3, 4)]), ("lu L", lambda L, a: L.linalg.lu(a).L, [(4, 3)]),
    ("lu_solve", lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b), [(3, 3), (3, 2)]),
    ("lu_solve adj", lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True), [(3, 3), (3, 2)]),
    ("lu_unpack", lambda L, a: L.lu_unpack(*L.linalg.lu_factor(a))[2], [(3, 3)]),
    ("householder", lambda L, a, t: L.linalg.householder_product(a, t), [(4, 3), (2,)]),
    ("qr", lambda L, a: L.linalg.qr(a).R.abs(), [(4, 3)]), ("qr Q", lambda L, a: L.linalg.qr(a).Q.abs(), [(4, 3)]),
    ("matrix_exp", lambda L, a: L.linalg.matrix_exp(a * 0.3), [(3, 3)]),
    ("matrix_power 3", lambda L, a: L.linalg.matrix_power(a, 3), [(3, 3)]),
    ("matrix_power -2", lambda L, a: L.linalg.matrix_power(a, -2), [(3, 3)]),
    ("matrix_power 0", lambda L, a: L.linalg.matrix_power(a, 0), [(3, 3)]),
    ("multi_dot", lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), [(2, 3), (3, 4), (4, 2)]),
    ("multi_dot vec", lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), [(3,), (3, 4), (4,)]),
    ("vander", lambda L, a: L.linalg.vander(a, N=4), [(3,)]),
    ("vecdot", lambda L, a, b: L.linalg.vecdot(a, b), [(2, 3), (3,)]),
    ("cross", lambda L, a, b: L.linalg.cross(a, b), [(2, 3), (2, 3)]),
    ("tensorinv", lambda L, a: L.linalg.tensorinv(a, 1), [(4, 2, 2)]),
    ("tensorsolve", lambda L, a, b: L.linalg.tensorsolve(a, b), [(2, 3, 6), (2, 3)]),
    ("matrix_rank ", lambda L, a: L.linalg.diagonal(a), [(3, 3)]),
    ("triangular_solve", lambda L, b, a: L.triangular_solve(b, a + 4 * L.eye(3, dtype=a.dtype))[0], [(3, 2), (3, 3)]),
    ("torch.svd", lambda L, a: L.svd(a).S, [(4, 3)]),
    ("pinverse", lambda L, a: L.pinverse(a), [(3, 4)]),
    ("orgqr", lambda L, a, t: L.orgqr(a, t), [(4, 3), (2,)]),
    ("ormqr", lambda L, a, t, c: L.ormqr(a, t, c), [(4, 3), (2,), (4, 2)]),
    ("geqrf", lambda L, a: L.geqrf(a)[0], [(4, 3)]),
]

for name, fn, shapes in CASES:
    for pos in [False, True]:
        check(f"grad {name}", f"pos={pos}", lambda L: run(L, fn, shapes, pos), ctx=dict(tolmul=1e4))

report(maxper=4)
