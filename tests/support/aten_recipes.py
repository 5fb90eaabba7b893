"""Sample inputs for every overload of torch's Core ATen opset (torch.Tag.core): overload -> (fn, args), fn calling
the overload itself so that torch.export keeps it. Seeded; shared by tests/torch/test_aten_core.py (and Fn by test_aten_ops.py)."""
from __future__ import annotations

import torch

A = torch.ops.aten


def _finite(t):
    """`t` where it is finite, else 0 (abs(NaN or inf) < 1e30 is false)."""
    return A.where.self(A.lt.Scalar(A.abs(t), 1e30), t, A.zeros_like(t))


class Fn(torch.nn.Module):
    """A module whose forward is `fn`: what torch.export traces for a recipe or a hand-written case."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)

g = torch.Generator().manual_seed(0)


def r(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=g).to(dtype)


def pos(*shape):
    return torch.rand(*shape, generator=g) + 0.5


def ints(high, *shape):
    return torch.randint(0, high, shape, generator=g)


def _fft_c2r_input():
    return torch.fft.rfft(r(3, 8))


X, Y, B = r(3, 4), r(3, 4), r(4)
IMG, W = r(1, 2, 6, 6), r(3, 2, 3, 3)
RECIPES = {
    "_adaptive_avg_pool2d.default": (lambda x: A._adaptive_avg_pool2d(x, [3, 2]), (r(1, 2, 7, 5),)),
    "_adaptive_avg_pool3d.default": (lambda x: A._adaptive_avg_pool3d(x, [2, 2, 3]), (r(1, 2, 4, 5, 6),)),
    "_cdist_forward.default": (lambda a, b: A._cdist_forward(a, b, 2.0, None), (r(2, 3, 4), r(2, 5, 4))),
    "_embedding_bag.default": (lambda w, i, o: A._embedding_bag(w, i, o, False, 1)[0],
                               (r(10, 3), ints(10, 7), torch.tensor([0, 2, 2, 5]))),
    "_fft_r2c.default": (lambda x: A._fft_r2c(x, [1], 0, True).abs(), (r(3, 8),)),
    "_fft_c2r.default": (lambda x: A._fft_c2r(x, [1], 2, 8), (_fft_c2r_input(),)),
    "_log_softmax.default": (lambda x: A._log_softmax(x, 1, False), (X,)),
    "_native_batch_norm_legit.default": (
        lambda x, w, b, m, v: A._native_batch_norm_legit(x, w, b, m, v, False, 0.1, 1e-5)[0],  # (eval: [1:] empty)
        (r(2, 3, 4), r(3), r(3), r(3), pos(3))),
    "_native_batch_norm_legit.no_stats": (lambda x, w, b: A._native_batch_norm_legit.no_stats(x, w, b, True, 0.1,
                                                                                               1e-5),
                                          (r(2, 3, 4), r(3), r(3))),
    "_native_batch_norm_legit_no_training.default": (
        lambda x, w, b, m, v: A._native_batch_norm_legit_no_training(x, w, b, m, v, 0.1, 1e-5)[0],
        (r(2, 3, 4), r(3), r(3), r(3), pos(3))),
    "_pdist_forward.default": (lambda x: A._pdist_forward(x, 2.0), (r(5, 3),)),
    "_softmax.default": (lambda x: A._softmax(x, 0, False), (X,)),
    "_to_copy.default": (lambda x: A._to_copy(x, dtype=torch.float64), (X,)),
    "abs.default": (lambda x: A.abs(x), (X,)),
    "acos.default": (lambda x: A.acos(x.clamp(-0.9, 0.9)), (X,)),
    "acosh.default": (lambda x: A.acosh(x + 1), (pos(3, 4),)),
    "add.Tensor": (lambda x, y: A.add.Tensor(x, y, alpha=2), (X, Y)),
    "add.Scalar": (lambda x: A.add.Scalar(x, 1.5), (X,)),
    "addmm.default": (lambda b, x, w: A.addmm(b, x, w, beta=0.5, alpha=2.0), (B, X, r(4, 4))),
    "alias.default": (lambda x: A.alias(x) * 2, (X,)),
    "amax.default": (lambda x: A.amax(x, [1], True), (X,)),
    "amin.default": (lambda x: A.amin(x, [0]), (X,)),
    "any.default": (lambda x: A.any(x > 1), (X,)),
    "any.dim": (lambda x: A.any.dim(x > 0.5, 1), (X,)),
    "any.dims": (lambda x: A.any.dims(x > 0.5, [0], True), (X,)),
    "arange.start_step": (lambda x: x + A.arange.start_step(1, 9, 2), (X,)),
    "argmax.default": (lambda x: A.argmax(x, 1), (X,)),
    "argmin.default": (lambda x: A.argmin(x, 0, True), (X,)),
    "as_strided.default": (lambda x: A.as_strided(x, [2, 3], [1, 2], 1), (r(12),)),
    "asin.default": (lambda x: A.asin(x.clamp(-0.9, 0.9)), (X,)),
    "asinh.default": (lambda x: A.asinh(x), (X,)),
    "atan.default": (lambda x: A.atan(x), (X,)),
    "atan2.default": (lambda x, y: A.atan2(x, y), (X, Y)),
    "atanh.default": (lambda x: A.atanh(x.clamp(-0.9, 0.9)), (X,)),
    "avg_pool2d.default": (lambda x: A.avg_pool2d(x, [3, 3], [2, 2], [1, 1], True, False), (IMG,)),
    "avg_pool3d.default": (lambda x: A.avg_pool3d(x, [2, 2, 2], [1, 2, 2]), (r(1, 2, 4, 4, 4),)),
    "bitwise_and.Tensor": (lambda x, y: A.bitwise_and.Tensor(x, y), (ints(16, 3, 4), ints(16, 3, 4))),
    "bitwise_and.Scalar": (lambda x: A.bitwise_and.Scalar(x, 6), (ints(16, 3, 4),)),
    "bitwise_not.default": (lambda x: A.bitwise_not(x), (ints(16, 3, 4),)),
    "bitwise_or.Tensor": (lambda x, y: A.bitwise_or.Tensor(x, y), (ints(16, 3, 4), ints(16, 3, 4))),
    "bitwise_or.Scalar": (lambda x: A.bitwise_or.Scalar(x, 5), (ints(16, 3, 4),)),
    "bitwise_xor.Tensor": (lambda x, y: A.bitwise_xor.Tensor(x, y), (ints(16, 3, 4), ints(16, 3, 4))),
    "bitwise_xor.Scalar": (lambda x: A.bitwise_xor.Scalar(x, 3), (ints(16, 3, 4),)),
    "bmm.default": (lambda x, y: A.bmm(x, y), (r(2, 3, 4), r(2, 4, 5))),
    "cat.default": (lambda x, y: A.cat([x, y], 1), (X, Y)),
    "ceil.default": (lambda x: A.ceil(x), (X,)),
    "clamp.default": (lambda x: A.clamp(x, -0.5, 0.5), (X,)),
    "clamp.Tensor": (lambda x, lo, hi: A.clamp.Tensor(x, lo, hi), (X, -pos(4), pos(3, 1))),
    "clone.default": (lambda x: A.clone(x) + 1, (X,)),
    "col2im.default": (lambda x: A.col2im(x, [4, 5], [2, 2], [1, 1], [1, 1], [1, 1]), (r(1, 12, 30),)),
    "constant_pad_nd.default": (lambda x: A.constant_pad_nd(x, [1, 2, 0, 1], 0.5), (X,)),
    "convolution.default": (lambda x, w: A.convolution(x, w, None, [2, 1], [1, 0], [1, 1], False, [0, 0], 1),
                            (IMG, W)),
    "copy.default": (lambda x, y: A.copy(x, y), (X, r(4))),
    "cos.default": (lambda x: A.cos(x), (X,)),
    "cosh.default": (lambda x: A.cosh(x), (X,)),
    "cumsum.default": (lambda x: A.cumsum(x, 1), (X,)),
    "diagonal.default": (lambda x: A.diagonal(x, 1, 1, 2) * 1, (r(2, 3, 4),)),
    "div.Tensor": (lambda x, y: A.div.Tensor(x, y), (X, pos(3, 4))),
    "div.Scalar": (lambda x: A.div.Scalar(x, 3), (ints(20, 3, 4),)),
    "div.Tensor_mode": (lambda x, y: A.div.Tensor_mode(x, y, rounding_mode="floor"), (r(3, 4) * 5, pos(3, 4))),
    "div.Scalar_mode": (lambda x: A.div.Scalar_mode(x, 3, rounding_mode="trunc"), (ints(20, 3, 4) - 10,)),
    "elu.default": (lambda x: A.elu(x, 1.5), (X,)),
    "embedding.default": (lambda w, i: A.embedding(w, i), (r(10, 3), ints(10, 2, 5))),
    # (uninitialized memory may hold NaN or inf, which * 0 keeps: only its finite values are read)
    "empty.memory_format": (lambda x: x + _finite(A.empty.memory_format([3, 4])) * 0, (X,)),
    "empty_strided.default": (lambda x: x + _finite(A.empty_strided([3, 4], [4, 1])) * 0, (X,)),
    "eq.Tensor": (lambda x, y: A.eq.Tensor(x, y), (ints(3, 3, 4), ints(3, 3, 4))),
    "eq.Scalar": (lambda x: A.eq.Scalar(x, 1), (ints(3, 3, 4),)),
    "erf.default": (lambda x: A.erf(x), (X,)),
    "exp.default": (lambda x: A.exp(x), (X,)),
    "expand.default": (lambda x: A.expand(x, [2, 3, 4]) * 1, (r(3, 1),)),
    "expm1.default": (lambda x: A.expm1(x), (X,)),
    "fill.Scalar": (lambda x: A.fill.Scalar(x, 2.5), (X,)),
    "flip.default": (lambda x: A.flip(x, [0, 2]), (r(2, 3, 4),)),
    "floor.default": (lambda x: A.floor(x * 3), (X,)),
    "fmod.Tensor": (lambda x, y: A.fmod.Tensor(x * 5, y), (X, pos(3, 4))),
    "fmod.Scalar": (lambda x: A.fmod.Scalar(x * 5, 1.5), (X,)),
    "full.default": (lambda x: x + A.full([3, 4], 1.5), (X,)),
    "full_like.default": (lambda x: A.full_like(x, 7.0), (X,)),
    "gather.default": (lambda x, i: A.gather(x, 1, i), (X, ints(4, 3, 2))),
    "ge.Tensor": (lambda x, y: A.ge.Tensor(x, y), (X, Y)),
    "ge.Scalar": (lambda x: A.ge.Scalar(x, 0.1), (X,)),
    "gelu.default": (lambda x: A.gelu(x, approximate="tanh"), (X,)),
    "grid_sampler_2d.default": (lambda x, gr: A.grid_sampler_2d(x, gr, 0, 0, False), (IMG, r(1, 3, 4, 2) * 0.8)),
    "gt.Tensor": (lambda x, y: A.gt.Tensor(x, y), (X, Y)),
    "gt.Scalar": (lambda x: A.gt.Scalar(x, 0.1), (X,)),
    "hardtanh.default": (lambda x: A.hardtanh(x, -0.5, 0.7), (X,)),
    "index.Tensor": (lambda x, i, j: A.index.Tensor(x, [i, None, j]), (r(4, 3, 5), ints(4, 2, 1), ints(5, 3))),
    "index_put.default": (lambda x, i, v: A.index_put(x, [None, i], v, True), (r(3, 5), ints(5, 4), r(3, 4))),
    "index_select.default": (lambda x, i: A.index_select(x, 1, i), (X, ints(4, 5))),
    "isinf.default": (lambda x: A.isinf(x / (x > 0).float()), (X,)),
    "isnan.default": (lambda x: A.isnan(x.log()), (X,)),
    "le.Tensor": (lambda x, y: A.le.Tensor(x, y), (X, Y)),
    "le.Scalar": (lambda x: A.le.Scalar(x, 0.1), (X,)),
    "leaky_relu.default": (lambda x: A.leaky_relu(x, 0.2), (X,)),
    "log.default": (lambda x: A.log(x), (pos(3, 4),)),
    "log10.default": (lambda x: A.log10(x), (pos(3, 4),)),
    "log1p.default": (lambda x: A.log1p(x), (pos(3, 4),)),
    "log2.default": (lambda x: A.log2(x), (pos(3, 4),)),
    "logical_and.default": (lambda x, y: A.logical_and(x, y), (X, Y > 0)),
    "logical_not.default": (lambda x: A.logical_not(x > 0), (X,)),
    "logical_or.default": (lambda x, y: A.logical_or(x > 0, y > 0), (X, Y)),
    "logical_xor.default": (lambda x, y: A.logical_xor(x > 0, y > 0), (X, Y)),
    "lt.Tensor": (lambda x, y: A.lt.Tensor(x, y), (X, Y)),
    "lt.Scalar": (lambda x: A.lt.Scalar(x, 0.1), (X,)),
    "masked_scatter.default": (lambda x, m, s: A.masked_scatter(x, m, s), (X, r(4) > 0, r(12))),
    "max.dim": (lambda x: A.max.dim(x, 1, True), (X,)),
    "max_pool2d_with_indices.default": (lambda x: A.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1], [1, 1], True),
                                        (IMG,)),
    "max_pool3d_with_indices.default": (lambda x: A.max_pool3d_with_indices(x, [2, 2, 2], [2, 2, 2]),
                                        (r(1, 2, 4, 4, 4),)),
    "maximum.default": (lambda x, y: A.maximum(x, y), (X, Y)),
    "mean.default": (lambda x: A.mean(x), (X,)),
    "mean.dim": (lambda x: A.mean.dim(x, [0], True), (X,)),
    "min.dim": (lambda x: A.min.dim(x, 0), (X,)),
    "minimum.default": (lambda x, y: A.minimum(x, y), (X, Y)),
    "mm.default": (lambda x, y: A.mm(x, y), (X, r(4, 2))),
    "mul.Tensor": (lambda x, y: A.mul.Tensor(x, y), (X, Y)),
    "mul.Scalar": (lambda x: A.mul.Scalar(x, 2.5), (X,)),
    "native_dropout.default": (lambda x: A.native_dropout(x, 0.5, False), (X,)),
    "native_group_norm.default": (lambda x, w, b: A.native_group_norm(x, w, b, 2, 4, 6, 2, 1e-5),
                                  (r(2, 4, 2, 3), r(4), r(4))),
    "native_layer_norm.default": (lambda x, w, b: A.native_layer_norm(x, [4], w, b, 1e-5), (X, r(4), r(4))),
    "ne.Tensor": (lambda x, y: A.ne.Tensor(x, y), (ints(3, 3, 4), ints(3, 3, 4))),
    "ne.Scalar": (lambda x: A.ne.Scalar(x, 1), (ints(3, 3, 4),)),
    "neg.default": (lambda x: A.neg(x), (X,)),
    "nonzero.default": (lambda x: A.nonzero(x > 0), (X,)),
    "permute.default": (lambda x: A.permute(x, [2, 0, 1]) * 1, (r(2, 3, 4),)),
    "pow.Tensor_Tensor": (lambda x, y: A.pow.Tensor_Tensor(x, y), (pos(3, 4), Y)),
    "pow.Tensor_Scalar": (lambda x: A.pow.Tensor_Scalar(x, 3), (X,)),
    "pow.Scalar": (lambda y: A.pow.Scalar(2.0, y), (Y,)),
    "prod.default": (lambda x: A.prod(x), (X,)),
    "prod.dim_int": (lambda x: A.prod.dim_int(x, 1, True), (X,)),
    "reciprocal.default": (lambda x: A.reciprocal(x), (pos(3, 4),)),
    "reflection_pad1d.default": (lambda x: A.reflection_pad1d(x, [2, 1]), (r(1, 2, 5),)),
    "reflection_pad2d.default": (lambda x: A.reflection_pad2d(x, [1, 2, 2, 1]), (IMG,)),
    "reflection_pad3d.default": (lambda x: A.reflection_pad3d(x, [1, 1, 1, 0, 0, 1]), (r(1, 1, 3, 3, 3),)),
    "relu.default": (lambda x: A.relu(x), (X,)),
    "remainder.Tensor": (lambda x, y: A.remainder.Tensor(x * 5, y), (X, pos(3, 4))),
    "remainder.Scalar": (lambda x: A.remainder.Scalar(x * 5, 1.5), (X,)),
    "repeat.default": (lambda x: A.repeat(x, [2, 1]), (X,)),
    "replication_pad2d.default": (lambda x: A.replication_pad2d(x, [1, 2, 2, 1]), (IMG,)),
    "replication_pad3d.default": (lambda x: A.replication_pad3d(x, [1, 1, 1, 0, 0, 1]), (r(1, 1, 3, 3, 3),)),
    "round.default": (lambda x: A.round(x * 3), (X,)),
    "rsqrt.default": (lambda x: A.rsqrt(x), (pos(3, 4),)),
    "scalar_tensor.default": (lambda x: x + A.scalar_tensor(2.5), (X,)),
    "scatter.value": (lambda x, i: A.scatter.value(x, 1, i, 9.0), (X, ints(4, 3, 2))),
    "scatter.src": (lambda x, i, s: A.scatter.src(x, 0, i, s), (X, torch.tensor([[2, 0, 1, 0]]), r(1, 4))),
    "scatter_add.default": (lambda x, i, s: A.scatter_add(x, 1, i, s), (X, ints(4, 3, 6), r(3, 6))),
    "scatter_reduce.two": (lambda x, i, s: A.scatter_reduce.two(x, 1, i, s, "amax"), (X, ints(4, 3, 6), r(3, 6))),
    "select.int": (lambda x: A.select.int(x, 1, 2), (X,)),
    "select_scatter.default": (lambda x, s: A.select_scatter(x, s, 1, 2), (X, r(3))),
    "sigmoid.default": (lambda x: A.sigmoid(x), (X,)),
    "sign.default": (lambda x: A.sign(x), (X,)),
    "sin.default": (lambda x: A.sin(x), (X,)),
    "sinh.default": (lambda x: A.sinh(x), (X,)),
    "slice.Tensor": (lambda x: A.slice.Tensor(x, 1, 1, 4, 2) * 1, (X,)),
    "slice_scatter.default": (lambda x, s: A.slice_scatter(x, s, 1, 0, 4, 2), (X, r(3, 2))),
    "sort.default": (lambda x: A.sort(x, 1, True), (X,)),
    "split_with_sizes.default": (lambda x: [t * 1 for t in A.split_with_sizes(x, [1, 3], 1)], (X,)),
    "sqrt.default": (lambda x: A.sqrt(x), (pos(3, 4),)),
    "squeeze.dim": (lambda x: A.squeeze.dim(x, 1) * 1, (r(3, 1, 4),)),
    "squeeze.dims": (lambda x: A.squeeze.dims(x, [0, 2]) * 1, (r(1, 3, 1, 4),)),
    "sub.Tensor": (lambda x, y: A.sub.Tensor(x, y, alpha=0.5), (X, Y)),
    "sub.Scalar": (lambda x: A.sub.Scalar(x, 2), (X,)),
    "sum.dim_IntList": (lambda x: A.sum.dim_IntList(x, [1]), (X,)),
    "tan.default": (lambda x: A.tan(x), (X,)),
    "tanh.default": (lambda x: A.tanh(x), (X,)),
    "topk.default": (lambda x: A.topk(x, 2, 1), (X,)),
    "trunc.default": (lambda x: A.trunc(x * 3), (X,)),
    "unsqueeze.default": (lambda x: A.unsqueeze(x, 1) * 1, (X,)),
    "upsample_bilinear2d.vec": (lambda x: A.upsample_bilinear2d.vec(x, [9, 7], False, None), (IMG,)),
    "upsample_nearest2d.vec": (lambda x: A.upsample_nearest2d.vec(x, None, [2.0, 2.0]), (IMG,)),
    "var.dim": (lambda x: A.var.dim(x, [1], True), (X,)),
    "var.correction": (lambda x: A.var.correction(x, [0], correction=0, keepdim=True), (X,)),
    "view.default": (lambda x: A.view(x, [4, 3]) * 1, (X,)),
    "where.self": (lambda c, x, y: A.where.self(c, x, y), (X > 0, X, Y)),
}

# core overloads without a recipe, and why: random sources (compared by shape and range, in test_aten_core),
# training-only gradients, and size queries that produce no tensor
RANDOM = {"rand.default": (lambda x: x + A.rand([3, 4]) * 0, (X,)),
          "randn.default": (lambda x: x + A.randn([3, 4]) * 0, (X,)),
          "randperm.default": (lambda x: x + A.randperm(4).float() * 0, (X,))}

def _shift_tokens_right(ids):
    """transformers' BART shift_tokens_right: in-place writes into slices and selects of a fresh tensor."""
    shifted = ids.new_zeros(ids.shape)
    shifted[:, 1:] = ids[:, :-1].clone()
    shifted[:, 0] = 2
    shifted.masked_fill_(shifted == 5, 1)
    return shifted * 1


# what real timm and transformers programs keep undecomposed (torch.export's default IR is not core-only)
F = torch.nn.functional
MASK = r(2, 1, 5, 5) > 0
PATTERNS = {
    "unbind (timm attention)": (lambda qkv: [t * 1 for t in qkv.unbind(0)], (r(3, 2, 4, 5),)),
    "reshape_as": (lambda x, y: x.reshape_as(y) + y, (r(3, 4), r(2, 6))),
    "min.other (T5 buckets)": (lambda x, y: torch.min(x, y), (ints(9, 3, 4), torch.full((3, 4), 5))),
    "diff with prepend (Whisper)": (lambda x: torch.diff(x, dim=-1, prepend=x[:, :1]), (r(3, 5),)),
    "ne.Scalar (Whisper)": (lambda x: x != 2, (ints(4, 3, 5),)),
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b), (r(2, 4, 3, 3), r(4), r(4))),
    "_weight_norm (Wav2Vec2)": (lambda v, gn: torch._weight_norm(v, gn, 2), (r(4, 3, 5), pos(1, 1, 5))),
    "index, several tensors (HF masks)": (
        lambda m, b, kv: m[b[:, None, None, None], 0, kv[None, None, None, :]].squeeze(1),
        (MASK, torch.arange(2), torch.arange(5))),
    "index, separated tensors": (lambda x, i, j: x[i, :, j], (r(4, 3, 5), ints(4, 2, 3), ints(5, 3))),
    "index_put (x[i] = v)": (lambda x, i, v: x.index_put((i,), v), (r(5, 3), torch.tensor([4, 0]), r(2, 3))),
    "selu": (lambda x: F.selu(x), (r(3, 4),)),
    "in-place writes into views (BART)": (_shift_tokens_right, (ints(9, 2, 7),)),
    "fill.Tensor (BART)": (lambda x, v: A.fill.Tensor(x, v), (r(3, 4), torch.tensor(2.5))),
    "outside the table, decomposed at load": (lambda x: F.softshrink(x, 0.3) + torch.logit(x.sigmoid()) + F.mish(x),
                                              (r(3, 4),)),
    "max.other": (lambda x, y: torch.max(x, y), (r(3, 4), r(3, 4))),
    "int true division": (lambda x: x / 4, (ints(9, 3, 4),)),
}

# the gradient ops of training graphs, with the forward's saved values made by the forward op itself
_XN, _GN = r(2, 3, 4), r(2, 4, 2, 3)
_LN = A.native_layer_norm(_XN, [4], None, None, 1e-5)
_GNS = A.native_group_norm(_GN, None, None, 2, 4, 6, 2, 1e-5)
_MP = A.max_pool2d_with_indices(IMG, [3, 3], [2, 2], [1, 1], [1, 1], True)
RECIPES.update({
    "convolution_backward.default": (
        lambda g, x, w: A.convolution_backward(g, x, w, [3], [2, 1], [1, 1], [1, 2], False, [0, 0], 1,
                                               [True, True, True]), (r(1, 3, 3, 4), IMG, W)),
    "native_layer_norm_backward.default": (
        lambda g, x, m, s, w, b: A.native_layer_norm_backward(g, x, [4], m, s, w, b, [True, True, True]),
        (r(2, 3, 4), _XN, _LN[1], _LN[2], r(4), r(4))),
    "native_group_norm_backward.default": (
        lambda g, x, m, s, w: A.native_group_norm_backward(g, x, m, s, w, 2, 4, 6, 2, [True, True, True]),
        (r(2, 4, 2, 3), _GN, _GNS[1], _GNS[2], r(4))),
    "max_pool2d_with_indices_backward.default": (
        lambda g, x, i: A.max_pool2d_with_indices_backward(g, x, [3, 3], [2, 2], [1, 1], [1, 1], True, i),
        (r(*_MP[0].shape), IMG, _MP[1])),
    "avg_pool2d_backward.default": (
        lambda g, x: A.avg_pool2d_backward(g, x, [3, 3], [2, 2], [1, 1], True, False, None), (r(1, 2, 4, 4), IMG)),
    "_adaptive_avg_pool2d_backward.default": (lambda g, x: A._adaptive_avg_pool2d_backward(g, x),
                                              (r(1, 2, 3, 2), r(1, 2, 7, 5))),
    "embedding_dense_backward.default": (lambda g, i: A.embedding_dense_backward(g, i, 10, 2, False),
                                         (r(2, 5, 3), ints(10, 2, 5))),
})
