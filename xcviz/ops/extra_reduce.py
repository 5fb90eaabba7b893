"""More ONNX reductions and normalisations: reduce_l1/l2/log_sum/..., cumprod, lp/mvn/rms/group norms, lp_pool."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, lit, static
from .conv import _pool_kernel, _slices, _window, infer_pool, pool_flops
from .reduce import _reduce_axes, infer_reduce
from .registry import REDUCTION, op
from .rules import Ctx


# ---- reduce_* built from an elementwise step, a sum and a final step -------------------------------
def infer_extra_reduce(ctx: Ctx) -> list[TensorType]:
    return infer_reduce(ctx)


def _float_only(x, name):
    if np.dtype(x.dtype).kind != "f" and not str(x.dtype).startswith("bfloat"):
        raise Unsupported(f"{name} of a {x.dtype} tensor (defined for floats: it takes a log)",
                          hint="cast the input to a float type")


def _sum(xp, a, x, axes_in):
    """Sum of x over the node's axes; axes () (noop_with_empty_axes and no axes) sums nothing, as onnx does."""
    axes = _reduce_axes(a, x, axes_in)
    return xp.sum(x, axis=axes, keepdims=bool(a.get("keepdims", 1))).astype(x.dtype)


def reduce_sum_square(xp, a, x, axes=None):
    return _sum(xp, a, x * x, axes)


def reduce_l1(xp, a, x, axes=None):
    return _sum(xp, a, xp.abs(x), axes)


def reduce_l2(xp, a, x, axes=None):
    return xp.sqrt(_sum(xp, a, x * x, axes).astype(np.float64 if np.dtype(x.dtype).kind in "iub" else x.dtype)
                   ).astype(x.dtype)


def reduce_log_sum(xp, a, x, axes=None):
    _float_only(x, "ReduceLogSum")
    with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf, the empty set's value too
        return xp.log(_sum(xp, a, x, axes))


def reduce_log_sum_exp(xp, a, x, axes=None):
    """log(sum(exp(x - m))) + m with m the finite maximum (stable; onnx's reference does the same)."""
    _float_only(x, "ReduceLogSumExp")
    keep = bool(a.get("keepdims", 1))
    axes_t = _reduce_axes(a, x, axes)
    if x.size == 0:
        shape = np.sum(np.zeros(x.shape, np.float32), axis=axes_t, keepdims=keep).shape
        return xp.full(shape, -np.inf, dtype=x.dtype)
    m = xp.max(xp.where(xp.isinf(x), lit(x, -np.inf), x), axis=axes_t, keepdims=True)
    m = xp.where(xp.isfinite(m), m, lit(x, 0))
    with np.errstate(divide="ignore"):
        s = xp.log(xp.sum(xp.exp(x - m), axis=axes_t, keepdims=True)) + m
    if not keep:
        s = s.reshape(np.sum(np.zeros(x.shape, np.float32), axis=axes_t, keepdims=False).shape)
    return s.astype(x.dtype)


red = dict(groups=REDUCTION, infer=infer_extra_reduce, min_inputs=1, max_inputs=2, static_inputs=(1,),
           attrs={"axes": None, "keepdims": 1, "noop_with_empty_axes": 0})
op("reduce_sum_square", "ReduceSumSquare", flops=r.input_flops(2), **red, impl=reduce_sum_square)
op("reduce_l1", "ReduceL1", flops=r.input_flops(2), **red, impl=reduce_l1)
op("reduce_l2", "ReduceL2", flops=r.input_flops(2), **red, impl=reduce_l2)
op("reduce_log_sum", "ReduceLogSum", flops=r.input_flops(1), **red, impl=reduce_log_sum,
   doc="float inputs only (onnx removed the integer types: it takes a log)")
op("reduce_log_sum_exp", "ReduceLogSumExp", flops=r.input_flops(4), **red, impl=reduce_log_sum_exp,
   doc="float inputs only; computed as log(sum(exp(x - max))) + max")


# ---- cumprod -------------------------------------------------------------------------------------
def cumprod(xp, a, x, axis):
    ax = int(static(axis, "CumProd axis").reshape(-1)[0]) % x.ndim
    if a.get("reverse"):
        x = xp.flip(x, ax)
    out = xp.cumprod(x, axis=ax).astype(x.dtype)
    if a.get("exclusive"):  # shift by one along the axis, 1 first (no division: x may hold zeros)
        head = [slice(None)] * x.ndim
        head[ax] = slice(0, max(x.shape[ax] - 1, 0))
        ones = xp.ones(x.shape[:ax] + (min(x.shape[ax], 1),) + x.shape[ax + 1:], dtype=x.dtype)
        out = xp.concatenate([ones, out[tuple(head)]], axis=ax)
    if a.get("reverse"):
        out = xp.flip(out, ax)
    return out


op("cumprod", "CumProd", infer=r.same, flops=r.input_flops(1), min_inputs=2, max_inputs=2,
   attrs={"exclusive": 0, "reverse": 0}, static_inputs=(1,), impl=cumprod)


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


# ---- lp_pool -------------------------------------------------------------------------------------
def infer_lp_pool(ctx: Ctx) -> list[TensorType]:
    return infer_pool(ctx)[:1]


def lp_pool_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    n = pool_flops(ctx, out)
    return None if n is None else 3 * n


def lp_pool(xp, a, x):
    """(sum over the window of |x|^p)^(1/p), padding counting as zeros (ONNX's reference)."""
    kernel, attrs = _pool_kernel(a, x)
    strides, dil, begin, end, out = _window(attrs, list(x.shape[2:]), kernel, bool(a.get("ceil_mode")))
    nsp = len(kernel)
    extra = [max((out[i] - 1) * strides[i] + dil[i] * (kernel[i] - 1) + 1 - (x.shape[2 + i] + begin[i] + end[i]), 0)
             for i in range(nsp)]
    p = float(a.get("p", 2))
    v = x * x if p == 2 else xp.abs(x) ** lit(x, p)
    vpad = xp.pad(v, [(0, 0), (0, 0)] + [(begin[i], end[i] + extra[i]) for i in range(nsp)])
    acc = None
    for off in np.ndindex(*kernel):
        w = vpad[(slice(None),) * 2 + _slices(off, strides, dil, out)]
        acc = w if acc is None else acc + w
    return (xp.sqrt(acc) if p == 2 else acc ** lit(x, 1.0 / p)).astype(x.dtype)


op("lp_pool", "LpPool", infer=infer_lp_pool, flops=lp_pool_flops, min_inputs=1, max_inputs=1,
   attrs={"kernel_shape": None, "p": 2, "strides": None, "pads": None, "ceil_mode": 0},
   impl=lp_pool, doc="Lp norm over each window, padding as zeros")
