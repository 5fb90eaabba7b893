"""Math ops with PyTorch's semantics that the ONNX families lack: atan2, expm1, log1p, log2, log10, trunc,
not-equal, any, variance with a correction, max/min with their indices, stable sort, diff, cdist, pdist."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import is_np, lit, present
from .elementwise import broadcast_all, compare
from .registry import ELEMENTWISE, REDUCTION, op
from .rules import Ctx
from .xla_support import TF_EQUIV

# the TF ops each lowers to (the verdict's source; tf2xla has a kernel for every one)
TF_EQUIV.update({
    "atan2": "Atan2", "expm1": "Expm1", "log1p": "Log1p", "log2": "Log Mul", "log10": "Log Mul",
    "trunc": "Sign Abs Floor Mul", "not_equal": "NotEqual", "reduce_any": "Any",
    "variance": "Mean SquaredDifference Sum RealDiv", "max_with_index": "Max ArgMax",
    "min_with_index": "Min ArgMin", "sort": "TopKV2", "diff": "StridedSlice Sub ConcatV2",
    "cdist": "Sub Abs Pow Sum Sqrt", "div_rounding": "FloorDiv TruncateDiv Floor", "add_scaled": "Mul AddV2", "pdist": "Sub Abs Pow Sum Sqrt GatherV2",
})
E = ELEMENTWISE
unary = dict(groups=E, infer=r.same, min_inputs=1, max_inputs=1)

op("atan2", "Atan2", groups=E, infer=broadcast_all, min_inputs=2, max_inputs=2, flops=r.output_flops(8),
   impl=lambda xp, a, y, x: xp.arctan2(y, x).astype(y.dtype), doc="the angle of (x, y): atan2(y, x)")
op("expm1", "Expm1", **unary, flops=r.output_flops(4), impl=lambda xp, a, x: xp.expm1(x))
op("log1p", "Log1p", **unary, flops=r.output_flops(4), impl=lambda xp, a, x: xp.log1p(x))
op("log2", **unary, flops=r.output_flops(5), positive_inputs=(0,), impl=lambda xp, a, x: xp.log2(x))
op("log10", **unary, flops=r.output_flops(5), positive_inputs=(0,), impl=lambda xp, a, x: xp.log10(x))
op("trunc", "Truncate", **unary, flops=r.output_flops(1), impl=lambda xp, a, x: xp.trunc(x),
   doc="round toward zero")
op("not_equal", "NotEqual", groups=E, infer=compare, min_inputs=2, max_inputs=2, flops=r.output_flops(1),
   impl=lambda xp, a, x, y: xp.not_equal(x, y))


# ---- reductions torch spells its own way ---------------------------------------------------------------
def _axes(a, x):
    axes = a.get("axes")
    return None if not axes else tuple(int(v) % max(x.ndim, 1) for v in axes)


def reduce_any(xp, a, x):
    return xp.any(x != 0 if x.dtype != bool else x, axis=_axes(a, x), keepdims=bool(a.get("keepdims", 0)))


def variance(xp, a, x):
    axes = _axes(a, x)
    n = x.size if axes is None else int(np.prod([x.shape[k] for k in axes]))
    mean = xp.mean(x, axis=axes, keepdims=True)
    ss = xp.sum((x - mean) * (x - mean), axis=axes, keepdims=bool(a.get("keepdims", 0)))
    return (ss / lit(x, max(n - float(a.get("correction", 1)), 0))).astype(x.dtype)


red = dict(groups=REDUCTION, infer=r.from_file, min_inputs=1, max_inputs=1, flops=r.input_flops(1))
op("reduce_any", "Any", **red, attrs={"axes": None, "keepdims": 0}, impl=reduce_any,
   doc="is any element along the axes nonzero (torch.any)")
op("variance", **{**red, "flops": r.input_flops(4)}, attrs={"axes": None, "keepdims": 0, "correction": 1.0},
   impl=variance, doc="sum of squared deviations / (n - correction) over the axes (torch.var)")


def with_index(kind: str):
    def fn(xp, a, x):
        axis, keep = int(a["axis"]) % max(x.ndim, 1), bool(a.get("keepdims", 0))
        idx = (xp.argmax if kind == "max" else xp.argmin)(x, axis=axis)
        idx = xp.expand_dims(idx, axis)
        val = xp.take_along_axis(x, idx, axis=axis)
        if not keep:
            val, idx = xp.squeeze(val, axis), xp.squeeze(idx, axis)
        return val, idx.astype(np.int64)
    return fn


for _k in ("max", "min"):
    op(f"{_k}_with_index", groups=REDUCTION, infer=r.from_file, min_inputs=1, max_inputs=1, num_outputs=2,
       flops=r.input_flops(1), attrs={"axis": 0, "keepdims": 0}, impl=with_index(_k),
       doc=f"the {_k}imum along an axis and its first index (torch.{_k}(x, dim))")


def sort(xp, a, x):
    axis, desc = int(a["axis"]), bool(a.get("descending", 0))
    # stable in both directions, as torch's stable sort: descending sorts the negated keys (order-reversing
    # for every value; NaN sorts last either way, as torch puts it first descending only on CUDA)
    keys = -x if desc and x.dtype != bool else (~x if desc else x)
    idx = xp.argsort(keys, axis=axis, kind="stable") if is_np(xp) else xp.argsort(keys, axis=axis, stable=True)
    return xp.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)


op("sort", "Sort", groups=REDUCTION, infer=r.from_file, min_inputs=1, max_inputs=1, num_outputs=2,
   flops=r.input_flops(8), attrs={"axis": -1, "descending": 0}, impl=sort,
   doc="values sorted along an axis and their indices (torch.sort, stable)")


# ---- differences and distances -------------------------------------------------------------------------
def diff(xp, a, x, prepend=None, append=None):
    axis = int(a.get("axis", -1)) % x.ndim
    parts = [v for v in (prepend, x, append) if present(v)]
    x = xp.concatenate(parts, axis=axis) if len(parts) > 1 else x
    for _ in range(int(a.get("n", 1))):
        n = x.shape[axis]
        hi = xp.take(x, np.arange(1, n), axis=axis)
        lo = xp.take(x, np.arange(0, n - 1), axis=axis)
        x = xp.not_equal(hi, lo) if x.dtype == bool else hi - lo
    return x


op("diff", infer=r.from_file, min_inputs=1, max_inputs=3, flops=r.output_flops(1), attrs={"axis": -1, "n": 1},
   impl=diff, doc="n-th forward difference along an axis, after prepend/append (torch.diff)")


def _pnorm(xp, d, p: float, axis):
    d = xp.abs(d)
    if p == 0:
        return xp.sum((d != 0).astype(d.dtype), axis=axis)
    if p == np.inf:
        return xp.max(d, axis=axis)
    if p == 1:
        return xp.sum(d, axis=axis)
    if p == 2:
        return xp.sqrt(xp.sum(d * d, axis=axis))
    return xp.power(xp.sum(xp.power(d, lit(d, p)), axis=axis), lit(d, 1 / p))


def cdist(xp, a, x1, x2):
    return _pnorm(xp, x1[..., :, None, :] - x2[..., None, :, :], float(a.get("p", 2.0)), -1).astype(x1.dtype)


def pdist(xp, a, x):
    n = x.shape[0]
    i, j = np.triu_indices(n, 1)
    return _pnorm(xp, xp.take(x, i, axis=0) - xp.take(x, j, axis=0), float(a.get("p", 2.0)), -1).astype(x.dtype)


def _dist_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    n, d = r.numel(out[0].shape), ctx.shape(0)
    return None if n is None or d is None or not isinstance(d[-1], int) else 3 * n * d[-1]


op("cdist", infer=r.from_file, min_inputs=2, max_inputs=2, flops=_dist_flops, attrs={"p": 2.0}, impl=cdist,
   doc="p-norm distance between each pair of rows of two batched matrices (torch.cdist)")
op("pdist", infer=r.from_file, min_inputs=1, max_inputs=1, flops=_dist_flops, attrs={"p": 2.0}, impl=pdist,
   doc="p-norm distance between each pair of rows i < j of one matrix (torch.pdist)")


# ---- arithmetic overloads with an extra argument -------------------------------------------------------------
def div_rounding(xp, a, x, y):
    mode = str(a.get("rounding_mode"))
    if mode == "None":  # true division, in the output's float type
        to = np.dtype(a.get("to") or "float32")
        return (x.astype(to) / xp.asarray(y).astype(to)).astype(to)
    if np.dtype(x.dtype).kind in "iu" and np.dtype(getattr(y, "dtype", x.dtype)).kind in "iu":
        q = xp.floor_divide(x, y)
        if mode == "trunc":  # floor and trunc differ where the signs differ and the division is inexact
            q = xp.where((q < 0) & (q * y != x), q + 1, q)
        return q.astype(x.dtype)
    q = x / y
    return (xp.floor(q) if mode == "floor" else xp.trunc(q)).astype(q.dtype)


op("div_rounding", groups=E, infer=broadcast_all, min_inputs=2, max_inputs=2, flops=r.output_flops(2),
   attrs={"rounding_mode": "trunc", "to": None}, impl=div_rounding,
   doc="x / y rounded toward zero (trunc) or down (floor), integer or float, or (None) true division into the "
       "float type `to` (torch.div with rounding_mode; integers divided)")
op("add_scaled", groups=E, infer=broadcast_all, min_inputs=2, max_inputs=2, flops=r.output_flops(2),
   attrs={"alpha": 1.0}, impl=lambda xp, a, x, y: (x + y * lit(y, a["alpha"])).astype(x.dtype),
   doc="x + alpha * y (torch.add with alpha; torch.sub is alpha negated)")
