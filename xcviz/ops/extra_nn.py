"""Newer ONNX neural-net ops: window functions, SwiGLU, RotaryEmbedding and the two classification losses."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, lit, np_dtype, present, static
from .registry import REDUCTION, op
from .rules import Ctx


# ---- window functions ------------------------------------------------------------------------
def _out_dtype(ctx: Ctx) -> str | None:
    from ..ir import canonical_dtype

    return canonical_dtype(str(np_dtype(int(ctx.attrs.get("output_datatype", 1)))))


def infer_window(ctx: Ctx) -> list[TensorType]:
    size = ctx.const(0)
    n = int(np.asarray(size).reshape(())) if size is not None else "window"
    if isinstance(n, int) and n < 0:
        raise r.ShapeError(f"window size {n} is negative")
    return [TensorType((n,), _out_dtype(ctx))]


def _window(terms: tuple[float, ...]):
    """sum_k terms[k] * cos(2 pi k n / N), N = size (periodic) or size - 1; computed in float64, then cast
    (the size is static, so the whole window is a constant under XLA, as TF folds its own window ops)."""
    def impl(xp, a, size):
        n = int(static(size, "window size").reshape(()))
        if n < 0:
            raise Unsupported(f"window size {n} is negative")
        denom = n if int(a.get("periodic", 1)) else n - 1
        k = np.arange(n, dtype=np.float64)
        y = np.zeros(n)
        for i, c in enumerate(terms):
            y = y + c * np.cos(2 * np.pi * i * k / denom) if i else y + c
        return y.astype(np_dtype(int(a.get("output_datatype", 1))))
    return impl


_WIN = dict(infer=infer_window, flops=r.output_flops(4), min_inputs=1, max_inputs=1, static_inputs=(0,),
            attrs={"periodic": 1, "output_datatype": 1})
op("hann_window", "HannWindow", impl=_window((0.5, -0.5)), doc="sin^2(pi n / N): a constant of the static size", **_WIN)
op("hamming_window", "HammingWindow", impl=_window((25 / 46, -21 / 46)),
   doc="25/46 - 21/46 cos(2 pi n / N): a constant of the static size", **_WIN)
op("blackman_window", "BlackmanWindow", impl=_window((0.42, -0.5, 0.08)),
   doc="0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N): a constant of the static size", **_WIN)


# ---- gated and rotary activations ---------------------------------------------------------------
def swiglu(xp, a, x, gate):
    if x.shape != gate.shape:
        raise Unsupported(f"SwiGLU inputs of shapes {x.shape} and {gate.shape} (ONNX does not broadcast them)")
    alpha = lit(x, float(a.get("alpha", 1.0)))
    return (x * (lit(x, 1) / (lit(x, 1) + xp.exp(-alpha * x))).astype(x.dtype) * gate).astype(x.dtype)


op("swiglu", "SwiGLU", infer=r.same, flops=r.input_flops(5), min_inputs=2, max_inputs=2, attrs={"alpha": 1.0},
   impl=swiglu, doc="a * sigmoid(alpha * a) * b, a and b of one shape")


def rotary_embedding(xp, a, x, cos, sin, pos=None):
    """ONNX RotaryEmbedding: x as (B, H, S, D) or (B, S, H*D) with num_heads; the first rotary_embedding_dim
    features rotate by the (position-indexed) caches, in halves or interleaved pairs."""
    shape = x.shape
    if x.ndim == 4:
        x = xp.transpose(x, (0, 2, 1, 3))
    elif x.ndim == 3:
        heads = int(a.get("num_heads", 0))
        if heads <= 0:
            raise Unsupported("RotaryEmbedding with a 3-D input needs num_heads")
        x = x.reshape((shape[0], shape[1], heads, shape[2] // heads))
    else:
        raise Unsupported(f"RotaryEmbedding of a rank-{x.ndim} input")
    dim = int(a.get("rotary_embedding_dim", 0)) or x.shape[3]
    if present(pos):
        cos, sin = cos[pos], sin[pos]
    if cos.shape[-1] != dim // 2 or sin.shape[-1] != dim // 2:
        raise Unsupported(f"RotaryEmbedding caches of width {cos.shape[-1]} for rotary_embedding_dim {dim}")
    cos, sin = cos[:, :, None, :], sin[:, :, None, :]
    rot, rest = x[..., :dim], x[..., dim:]
    if int(a.get("interleaved", 0)):
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
    else:
        x1, x2 = rot[..., :dim // 2], rot[..., dim // 2:]
    real, imag = cos * x1 - sin * x2, sin * x1 + cos * x2
    if int(a.get("interleaved", 0)):
        rot = xp.stack([real, imag], axis=-1).reshape(rot.shape)
    else:
        rot = xp.concatenate([real, imag], axis=-1)
    y = xp.concatenate([rot, rest], axis=-1).astype(x.dtype)
    return y.reshape(shape) if len(shape) == 3 else xp.transpose(y, (0, 2, 1, 3))


op("rotary_embedding", "RotaryEmbedding", infer=r.same, flops=r.input_flops(3), min_inputs=3, max_inputs=4,
   attrs={"interleaved": 0, "rotary_embedding_dim": 0, "num_heads": 0}, impl=rotary_embedding,
   doc="rotary position embedding (RoPE) from cos/sin caches, optionally indexed by position_ids")


# ---- classification losses ---------------------------------------------------------------------
def _reduction(a) -> str:
    red = str(a.get("reduction", "mean"))
    if red not in ("none", "sum", "mean"):
        raise Unsupported(f"loss reduction {red!r} (ONNX has none, sum, mean)")
    return red


def infer_loss(ctx: Ctx) -> list[TensorType]:
    loss = TensorType(ctx.shape(1) if _reduction(ctx.attrs) == "none" else (), ctx.dtype(0))
    return [loss, TensorType(ctx.shape(0), ctx.dtype(0))][:max(ctx.num_outputs, 1)]


def nll_loss(xp, a, x, target, weight=None):
    """-x[n, target[n, d...], d...] weighted by weight[target]; ignore_index targets count 0 (and weigh 0)."""
    if x.ndim < 2:
        raise Unsupported(f"NegativeLogLikelihoodLoss of a rank-{x.ndim} input (needs N x C x ...)")
    red, ii = _reduction(a), a.get("ignore_index")
    if xp is np:  # a class outside [0, C) (other than ignore_index) is an error, as in onnxruntime: never a clip
        t = target[target != int(ii)] if ii is not None else target
        if t.size and (t.min() < 0 or t.max() >= x.shape[1]):
            raise Unsupported(f"loss target class {int(t.min() if t.min() < 0 else t.max())} is outside "
                              f"[0, {x.shape[1]})")
    safe = xp.clip(target, 0, x.shape[1] - 1).astype(np.int64)
    picked = xp.take_along_axis(x, xp.expand_dims(safe, 1), axis=1)[:, 0]
    w = weight[safe].astype(x.dtype) if present(weight) else xp.ones(target.shape, x.dtype)
    keep = (target != int(ii)) if ii is not None else xp.ones(target.shape, bool)
    w = xp.where(keep, w, lit(x, 0))
    loss = xp.where(keep, -picked * w, lit(x, 0))
    if red == "none":
        return loss.astype(x.dtype)
    if red == "sum":
        return xp.sum(loss).astype(x.dtype)
    if present(weight) or ii is not None:
        return (xp.sum(loss) / xp.sum(w)).astype(x.dtype)
    return xp.mean(loss).astype(x.dtype)


def softmax_cross_entropy(xp, a, x, target, weight=None):
    if x.ndim < 2:
        raise Unsupported(f"SoftmaxCrossEntropyLoss of a rank-{x.ndim} input (needs N x C x ...)")
    z = x - xp.max(x, axis=1, keepdims=True)
    log_prob = (z - xp.log(xp.sum(xp.exp(z), axis=1, keepdims=True))).astype(x.dtype)
    loss = nll_loss(xp, a, log_prob, target, weight)
    return (loss, log_prob) if int(a.get("_num_outputs", 1)) > 1 else loss


_LOSS = dict(infer=infer_loss, flops=r.input_flops(4), min_inputs=2, max_inputs=3, groups=REDUCTION,
             attrs={"reduction": "mean", "ignore_index": None})
op("nll_loss", "NegativeLogLikelihoodLoss", impl=nll_loss,
   doc="negative log-likelihood of the target classes (reduction none/sum/mean, weight, ignore_index)", **_LOSS)
op("softmax_cross_entropy_loss", "SoftmaxCrossEntropyLoss", impl=softmax_cross_entropy, num_outputs=None,
   doc="NegativeLogLikelihoodLoss of LogSoftmax over axis 1; a second output returns the log-probabilities",
   **_LOSS)
