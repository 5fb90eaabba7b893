"""Math ops with PyTorch's semantics that the ONNX families lack: expm1, log1p, log2, log10, trunc, any,
variance with a correction, max/min with their indices, stable sort, diff, cdist, pdist."""
from __future__ import annotations

import numpy as np

from ...ir import TensorType
from .. import rules as r
from ..arrays import is_np, lit, present
from ..registry import ELEMENTWISE, REDUCTION, Entries
from ..rules import Ctx

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

E = ELEMENTWISE
unary = dict(groups=E, infer=r.same, min_inputs=1, max_inputs=1)

op("expm1", "Expm1", **unary, flops=r.output_flops(4), impl=lambda xp, a, x: xp.expm1(x))
op("log1p", "Log1p", **unary, flops=r.output_flops(4), impl=lambda xp, a, x: xp.log1p(x))
op("log2", **unary, flops=r.output_flops(5), positive_inputs=(0,), impl=lambda xp, a, x: xp.log2(x))
op("log10", **unary, flops=r.output_flops(5), positive_inputs=(0,), impl=lambda xp, a, x: xp.log10(x))
op("trunc", "Truncate", **unary, flops=r.output_flops(1), impl=lambda xp, a, x: xp.trunc(x),
   doc="round toward zero")



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


indexed = dict(groups=REDUCTION, infer=r.from_file, min_inputs=1, max_inputs=1, num_outputs=2, flops=r.input_flops(1),
               attrs={"axis": 0, "keepdims": 0})
op("max_with_index", **indexed, impl=with_index("max"), doc="the maximum along an axis and its first index "
                                                             "(torch.max(x, dim))")
op("min_with_index", **indexed, impl=with_index("min"), doc="the minimum along an axis and its first index "
                                                             "(torch.min(x, dim))")


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
