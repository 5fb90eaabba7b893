"""Classification losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (ONNX's reductions)."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, lit, present
from .registry import REDUCTION, Entries
from .rules import Ctx

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


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
