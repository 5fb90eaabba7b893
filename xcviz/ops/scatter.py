"""Index-tensor ops: gather_elements, gather_nd, scatter_nd, scatter_elements (with reductions) and one_hot."""
from __future__ import annotations

import math

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, is_np, static
from .registry import LAYOUT, Entries
from .rules import Ctx, ShapeError, norm_axis, numel

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

REDUCTIONS = ("none", "add", "mul", "max", "min")


def _wrap(xp, idx, n):
    """ONNX indices may be negative (counted from the end); out-of-range ones are an error natively."""
    if is_np(xp):
        idx = np.asarray(idx)
        if idx.size and (idx.min() < -n or idx.max() >= n):
            raise Unsupported(f"index out of range [-{n}, {n})")
    return xp.where(idx < 0, idx + n, idx)


def _scatter(xp, data, key: tuple, upd, reduction: str):
    """data with upd written at key, combined by reduction ('none': last write wins, as XLA and ONNX do)."""
    if reduction not in REDUCTIONS:
        raise Unsupported(f"scatter reduction {reduction!r}")
    upd = upd.astype(data.dtype)
    if is_np(xp):
        out = np.array(data, copy=True)
        if reduction == "none":
            out[key] = upd
        else:
            {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[reduction].at(out, key, upd)
        return out
    at = data.at[key]
    return {"none": at.set, "add": at.add, "mul": at.multiply, "max": at.max, "min": at.min}[reduction](upd)


def scatter_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    if str(ctx.attrs.get("reduction", "none")) == "none":
        return 0
    return numel(ctx.shape(2))


# ---- gather_elements / scatter_elements: one index per element along `axis` ---------------------------
def infer_gather_elements(ctx: Ctx) -> list[TensorType]:
    return [TensorType(ctx.shape(1), ctx.dtype(0))]


def _element_key(xp, x, idx, axis: int) -> tuple:
    axis = norm_axis(axis, x.ndim)
    idx = _wrap(xp, idx, x.shape[axis])
    grid = np.indices(idx.shape, sparse=True)
    return tuple(idx if d == axis else grid[d] for d in range(x.ndim))


def gather_elements(xp, a, x, idx):
    x = xp.asarray(x)   # (a baked constant is NumPy, and NumPy cannot be indexed by a traced index)
    return x[_element_key(xp, x, idx, int(a.get("axis", 0)))]


def scatter_elements(xp, a, x, idx, upd):
    return _scatter(xp, x, _element_key(xp, x, idx, int(a.get("axis", 0))), upd, str(a.get("reduction", "none")))


op("gather_elements", "GatherElements", groups=LAYOUT, infer=infer_gather_elements, flops=r.zero_flops,
   min_inputs=2, max_inputs=2, attrs={"axis": 0}, impl=gather_elements,
   doc="out[i][j][k] = x[idx[i][j][k]][j][k] along axis (tf2xla: GatherNd over index grids; torch.gather)",
   cost_class="movement")
op("scatter_elements", "ScatterElements", "Scatter", groups=LAYOUT, infer=r.same, flops=scatter_flops,
   min_inputs=3, max_inputs=3, attrs={"axis": 0, "reduction": "none"}, impl=scatter_elements,
   doc="x with updates written at idx along axis; reduction none/add/mul/max/min "
       "(tf2xla: TensorScatterUpdate, TensorScatterAdd, TensorScatterMax, TensorScatterMin; mul: an XLA "
       "scatter with a multiply combiner)", cost_class="movement")


# ---- gather_nd / scatter_nd: index tuples in the last index axis ----------------------------------------
def infer_gather_nd(ctx: Ctx) -> list[TensorType]:
    x, idx = ctx.shape(0), ctx.shape(1)
    if x is None or idx is None or not idx or isinstance(idx[-1], str):
        return [TensorType(None, ctx.dtype(0))]
    b, k = int(ctx.attrs.get("batch_dims", 0)), idx[-1]
    if b + k > len(x):
        raise ShapeError(f"GatherND index tuples of {k} (+{b} batch dims) exceed data rank {len(x)}")
    return [TensorType((*idx[:-1], *x[b + k:]), ctx.dtype(0))]


def _nd_key(xp, x, idx, b: int) -> tuple:
    k = idx.shape[-1]
    dims = x.shape[b:b + k]
    cols = [_wrap(xp, idx[..., j], dims[j]) for j in range(k)]
    lead = np.indices(idx.shape[:b], sparse=True) if b else []
    pad = (1,) * (idx.ndim - 1 - b)  # batch index grids broadcast over the index tuples' own axes
    return tuple(g.reshape(g.shape + pad) for g in lead) + tuple(cols)


def gather_nd(xp, a, x, idx):
    return x[_nd_key(xp, x, idx, int(a.get("batch_dims", 0)))]


def scatter_nd(xp, a, x, idx, upd):
    return _scatter(xp, x, _nd_key(xp, x, idx, 0), upd, str(a.get("reduction", "none")))


op("gather_nd", "GatherND", "GatherNd", groups=LAYOUT, infer=infer_gather_nd, flops=r.zero_flops, min_inputs=2,
   max_inputs=2, attrs={"batch_dims": 0}, impl=gather_nd, doc="slices of x at index tuples (tf2xla: GatherNd)",
   cost_class="movement")
op("scatter_nd", "ScatterND", "TensorScatterUpdate", groups=LAYOUT, infer=r.same, flops=scatter_flops,
   min_inputs=3, max_inputs=3, attrs={"reduction": "none"}, impl=scatter_nd,
   doc="x with updates written at index tuples; reduction none/add/mul/max/min "
       "(tf2xla: TensorScatterUpdate, TensorScatterAdd, TensorScatterMax, TensorScatterMin; mul: an XLA "
       "scatter with a multiply combiner)", cost_class="movement")


# ---- one_hot: depth is an input VALUE that decides the output shape -------------------------------------
def infer_one_hot(ctx: Ctx) -> list[TensorType]:
    idx, depth = ctx.shape(0), ctx.const(1)
    if idx is None:
        return [TensorType(None, ctx.dtype(2))]
    d = int(np.asarray(depth).reshape(-1)[0]) if depth is not None else "depth"
    axis = norm_axis(int(ctx.attrs.get("axis", -1)), len(idx) + 1)
    return [TensorType((*idx[:axis], d, *idx[axis:]), ctx.dtype(2))]


def one_hot(xp, a, idx, depth, values):
    d = math.floor(float(static(depth, "OneHot depth").reshape(-1)[0]))
    axis = norm_axis(int(a.get("axis", -1)), idx.ndim + 1)
    i = idx.astype(np.int64)
    i = xp.where(i < 0, i + d, i)  # out-of-range indices give an all-off row, as ONNX says
    hot = xp.moveaxis(xp.expand_dims(i, -1) == np.arange(d), -1, axis)
    return xp.where(hot, values[1], values[0])


op("one_hot", "OneHot", groups=LAYOUT, infer=infer_one_hot, flops=r.zero_flops, min_inputs=3, max_inputs=3,
   attrs={"axis": -1}, static_inputs=(1,), impl=one_hot,
   doc="values[1] where the index hits, values[0] elsewhere; depth a constant (tf2xla: OneHot)", cost_class="movement")
