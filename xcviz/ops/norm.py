"""Normalization and softmax: batch/layer/instance/group/rms/lp/mvn norms, softmax, log_softmax, dropout."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, lit, present, static
from .registry import REDUCTION, Entries
from .rules import Ctx

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


def infer_first_like_input(ctx: Ctx) -> list[TensorType]:
    """Output 0 like input 0; optional extra outputs (saved mean, mask, ...) of unknown shape."""
    return [TensorType(ctx.shape(0), ctx.dtype(0))] + [TensorType(None, ctx.dtype(0))] * (ctx.num_outputs - 1)


def _chan(v, rank):
    return v.reshape((1, -1) + (1,) * (rank - 2))


def batchnorm(xp, a, x, scale, bias, mean, var):
    eps = float(a.get("epsilon", 1e-5))
    if int(a.get("training_mode", 0)):
        # normalise with the batch's statistics; the running ones move by `momentum` (onnx's reference)
        axes = tuple(i for i in range(x.ndim) if i != 1)
        batch_mean, batch_var = x.mean(axis=axes), x.var(axis=axes)
        m = float(a.get("momentum", 0.9))
        y, _, _ = batchnorm(xp, {"epsilon": eps}, x, scale, bias, batch_mean, batch_var)
        return (y, (mean * m + batch_mean * (1 - m)).astype(x.dtype), (var * m + batch_var * (1 - m)).astype(x.dtype))
    inv = _chan(scale, x.ndim) / xp.sqrt(_chan(var, x.ndim) + lit(var, eps))
    y = ((x - _chan(mean, x.ndim)) * inv + _chan(bias, x.ndim)).astype(x.dtype)
    return y, mean, var


op("batchnorm", "BatchNormalization", "FusedBatchNorm", "FusedBatchNormV3", "batch_norm",
   infer=infer_first_like_input, flops=r.input_flops(4), min_inputs=5, max_inputs=5, num_outputs=None,
   attrs={"epsilon": 1e-5}, positive_inputs=(4,), impl=batchnorm,
   doc="inference-mode batch normalization: scale, bias, mean, var inputs", cost_class="norm")


def layernorm(xp, a, x, scale=None, bias=None):
    axis = int(a.get("axis", -1)) % x.ndim
    axes = tuple(range(axis, x.ndim))
    eps = float(a.get("epsilon", 1e-5))
    mean = xp.mean(x, axis=axes, keepdims=True)
    d = x - mean
    var = xp.mean(d * d, axis=axes, keepdims=True)
    inv = lit(x, 1) / xp.sqrt(var + lit(x, eps))
    y = d * inv
    if present(scale):
        y = y * scale
    if present(bias):
        y = y + bias
    return y.astype(x.dtype), mean, inv


op("layernorm", "LayerNormalization", "layer_norm", infer=infer_first_like_input, flops=r.input_flops(8),
   min_inputs=1, max_inputs=3, num_outputs=None, attrs={"axis": -1, "epsilon": 1e-5}, groups=REDUCTION,
   impl=layernorm, cost_class="norm", fusion="two_reductions", cpu_kernels=5, cpu_passes=(2, 5, 4))


def instancenorm(xp, a, x, scale, bias):
    axes = tuple(range(2, x.ndim))
    eps = float(a.get("epsilon", 1e-5))
    mean = xp.mean(x, axis=axes, keepdims=True)
    d = x - mean
    var = xp.mean(d * d, axis=axes, keepdims=True)
    return (d / xp.sqrt(var + lit(x, eps)) * _chan(scale, x.ndim) + _chan(bias, x.ndim)).astype(x.dtype)


op("instancenorm", "InstanceNormalization", infer=r.same, flops=r.input_flops(8), min_inputs=3, max_inputs=3,
   attrs={"epsilon": 1e-5}, groups=REDUCTION, impl=instancenorm,
   cost_class="norm", fusion="two_reductions", cpu_kernels=5, cpu_passes=(2, 5, 4))


def _norm_axes(a, x) -> tuple[int, ...]:
    """Softmax-family axes: `axis` alone, or (ONNX opset < 13, `coerce_2d`) every axis from `axis` on."""
    axis = int(a.get("axis", -1)) % max(x.ndim, 1)
    return tuple(range(axis, x.ndim)) if a.get("coerce_2d") else (axis,)


def softmax(xp, a, x, log=False):
    axes = _norm_axes(a, x)
    z = x - xp.max(x, axis=axes, keepdims=True)
    e = xp.exp(z)
    s = xp.sum(e, axis=axes, keepdims=True)
    return (z - xp.log(s)) if log else e / s


def hardmax(xp, a, x):
    """1 at the first maximum along the axes (flattened in C order, as ONNX coerces to 2-D), 0 elsewhere."""
    axes = _norm_axes(a, x)
    if len(axes) == 1:
        hot = xp.arange(x.shape[axes[0]]) == xp.expand_dims(xp.argmax(x, axis=axes[0]), -1)
        return xp.moveaxis(hot, -1, axes[0]).astype(x.dtype)
    flat = x.reshape((*x.shape[:axes[0]], -1))
    hot = xp.arange(flat.shape[-1]) == xp.argmax(flat, axis=-1)[..., None]
    return hot.astype(x.dtype).reshape(x.shape)


legacy = "; ONNX opset < 13 (loader sets coerce_2d): over the input flattened to 2-D at axis (default 1)"
op("softmax", "Softmax", infer=r.same, flops=r.input_flops(5), min_inputs=1, max_inputs=1,
   attrs={"axis": -1, "coerce_2d": 0}, groups=REDUCTION, impl=lambda xp, a, x: softmax(xp, a, x),
   doc="along axis" + legacy, cost_class="norm", fusion="two_reductions", cpu_kernels=4, cpu_passes=(3, 5, 3))
op("log_softmax", "LogSoftmax", infer=r.same, flops=r.input_flops(6), min_inputs=1, max_inputs=1,
   attrs={"axis": -1, "coerce_2d": 0}, groups=REDUCTION, impl=lambda xp, a, x: softmax(xp, a, x, log=True),
   doc="along axis" + legacy, cost_class="norm", fusion="two_reductions", cpu_kernels=4, cpu_passes=(3, 5, 3))
op("hardmax", "Hardmax", infer=r.same, flops=r.input_flops(2), min_inputs=1, max_inputs=1,
   attrs={"axis": -1, "coerce_2d": 0}, groups=REDUCTION, impl=hardmax,
   doc="one-hot of the first maximum (tf2xla: ArgMax + OneHot)" + legacy, cost_class="reduce", fusion="reduce")


def dropout(xp, a, x, ratio=None, training=None):
    if present(training) and bool(static(training, "Dropout training_mode").reshape(-1)[0]):
        r = float(static(ratio, "Dropout ratio").reshape(-1)[0]) if present(ratio) else float(a.get("ratio", 0.5))
        if r != 0:  # ratio 0 keeps everything: the one deterministic training-mode case
            raise Unsupported("Dropout in training mode (random)")
    return x, xp.ones(x.shape, dtype=bool)


def infer_dropout(ctx: Ctx) -> list[TensorType]:
    """Output like input 0; the mask (output 1) a bool tensor of the same shape."""
    out = TensorType(ctx.shape(0), ctx.dtype(0))
    return [out, TensorType(out.shape, "bool")][:max(ctx.num_outputs, 1)]


op("dropout", "Dropout", infer=infer_dropout, flops=r.zero_flops, min_inputs=1, max_inputs=3,
   num_outputs=None, static_inputs=(1, 2), impl=dropout, doc="inference-mode dropout: identity",
   cost_class="free", fusion="free")


def lrn(xp, a, x):
    """Across-channel local response normalisation, the window [c - floor((n-1)/2), c + ceil((n-1)/2)]."""
    size = int(a["size"])
    alpha, beta, bias = float(a.get("alpha", 1e-4)), float(a.get("beta", 0.75)), float(a.get("bias", 1.0))
    lo = (size - 1) // 2
    sq = xp.pad(x * x, [(0, 0), (lo, size - 1 - lo)] + [(0, 0)] * (x.ndim - 2))
    c = x.shape[1]
    s = sq[:, 0:c]
    for i in range(1, size):
        s = s + sq[:, i:i + c]
    return (x / (lit(x, bias) + lit(x, alpha / size) * s) ** lit(x, beta)).astype(x.dtype)


op("lrn", "LRN", infer=r.same, flops=r.input_flops(8), min_inputs=1, max_inputs=1,
   attrs={"size": 5, "alpha": 1e-4, "beta": 0.75, "bias": 1.0}, groups=REDUCTION, impl=lrn,
   doc="local response normalisation across channels, NCHW (tf2xla: LRN)", cost_class="window", fusion="reduce")


# ---- normalisations ------------------------------------------------------------------------------
def lp_normalization(xp, a, x):
    axis = int(a.get("axis", -1)) % x.ndim
    p = int(a.get("p", 2))
    if p == 2:
        norm = xp.sqrt(xp.sum(x * x, axis=axis, keepdims=True))
    elif p == 1:
        norm = xp.sum(xp.abs(x), axis=axis, keepdims=True)
    else:
        raise Unsupported(f"LpNormalization with p={p} (ONNX defines p = 1 or 2)")
    zero = norm == 0  # a zero vector stays zero (0/0 -> 0, as onnx's cases expect)
    return xp.where(zero, lit(x, 0), x / xp.where(zero, lit(x, 1), norm)).astype(x.dtype)


op("lp_normalization", "LpNormalization", infer=r.same, flops=r.input_flops(3), min_inputs=1, max_inputs=1,
   attrs={"axis": -1, "p": 2}, groups=REDUCTION, impl=lp_normalization, doc="p = 1 or 2 along axis")


def mean_variance_normalization(xp, a, x):
    """(x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9): the formula of ONNX's function body, term for term."""
    axes = tuple(int(v) % x.ndim for v in (a.get("axes") or [0, 2, 3]))
    mean = xp.mean(x, axis=axes, keepdims=True)
    std = xp.sqrt(xp.mean(x * x, axis=axes, keepdims=True) - mean * mean)
    return ((x - mean) / (std + lit(x, 1e-9))).astype(x.dtype)


op("mean_variance_normalization", "MeanVarianceNormalization", infer=r.same, flops=r.input_flops(6),
   min_inputs=1, max_inputs=1, attrs={"axes": None}, groups=REDUCTION, impl=mean_variance_normalization,
   doc="over axes (default [0, 2, 3])")


def _stash(a, x):
    """The dtype statistics are computed in: stash_type 1 (the default) is float32, as ONNX specifies."""
    st = int(a.get("stash_type", 1))
    if st != 1:
        raise Unsupported(f"stash_type={st} (only 1, float32, is covered)")
    return np.float32


def rms_normalization(xp, a, x, scale):
    axis = int(a.get("axis", -1)) % x.ndim
    eps = float(a.get("epsilon", 1e-5))
    xs = x.astype(_stash(a, x))
    ms = xp.mean(xs * xs, axis=tuple(range(axis, x.ndim)), keepdims=True)
    y = (xs / xp.sqrt(ms + lit(xs, eps))).astype(x.dtype)
    return (y * scale).astype(x.dtype)


op("rms_normalization", "RMSNormalization", infer=r.same, flops=r.input_flops(4), min_inputs=2, max_inputs=2,
   attrs={"axis": -1, "epsilon": 1e-5, "stash_type": 1}, groups=REDUCTION, impl=rms_normalization,
   doc="over the axes from axis on, statistics in float32 (stash_type 1)")


def group_normalization(xp, a, x, scale, bias):
    """Statistics per (sample, group of C/G channels); scale and bias per channel (opset 21) or, when they
    have num_groups entries, per group (opset 18's form, expanded to the group's channels)."""
    g = int(a["num_groups"])
    n, c = x.shape[0], x.shape[1]
    if g <= 0 or c % g:
        raise Unsupported(f"GroupNormalization: {c} channels do not split into num_groups={g}")
    eps = float(a.get("epsilon", 1e-5))
    xs = x.astype(_stash(a, x)).reshape((n, g, -1))
    mean = xp.mean(xs, axis=2, keepdims=True)
    d = xs - mean
    var = xp.mean(d * d, axis=2, keepdims=True)
    y = (d / xp.sqrt(var + lit(xs, eps))).reshape(x.shape).astype(x.dtype)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if scale.shape[0] != c:
        scale, bias = xp.repeat(scale, c // g), xp.repeat(bias, c // g)
    return (y * scale.reshape(shape) + bias.reshape(shape)).astype(x.dtype)


op("group_normalization", "GroupNormalization", infer=r.same, flops=r.input_flops(8), min_inputs=3,
   max_inputs=3, attrs={"num_groups": None, "epsilon": 1e-5, "stash_type": 1}, groups=REDUCTION,
   impl=group_normalization, doc="NC...: statistics per group of channels, in float32")
