"""Layout ops that move no arithmetic: reshape, transpose, flatten, squeeze/unsqueeze, concat, expand, tile."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r, sym_shapes as sym
from .arrays import ints, present, static
from .registry import LAYOUT, VALUE_RULE, ZERO_SIZE, Entries, plus_groups
from .rules import Ctx, ShapeError, fmt, norm_axis, numel

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

layout = dict(groups=LAYOUT, flops=r.zero_flops)


# ---- reshape and flatten -------------------------------------------------------------------------
def infer_reshape(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    target = ctx.attrs.get("shape")
    if target is None and ctx.const(1) is not None:
        target = [v if isinstance(v, str) else int(v) for v in ctx.const(1).reshape(-1)]
    if target is None:
        return [TensorType(None, ctx.dtype(0))]
    target = list(target)
    allowzero = bool(ctx.attrs.get("allowzero", 0))
    if x is not None and not allowzero:
        target = [x[i] if (t == 0 and i < len(x)) else t for i, t in enumerate(target)]
    if target.count(-1) > 1:
        raise ShapeError(f"reshape target {target} has more than one -1")
    if -1 in target and x is not None and any(isinstance(t, str) for t in target):
        target = _solve_symbolic(x, target)
    if -1 in target and all(isinstance(t, int) for t in target):
        total = numel(x)
        rest = numel(tuple(t for t in target if t != -1))
        if total is None or rest is None:
            return [TensorType(tuple("?" if t == -1 else t for t in target), ctx.dtype(0))]
        if rest == 0 or total % rest:
            raise ShapeError(f"cannot reshape {fmt(x)} into {target}")
        target = [total // rest if t == -1 else t for t in target]
    total, new = numel(x), numel(tuple(target))
    if total is not None and new is not None and total != new:
        raise ShapeError(f"cannot reshape {fmt(x)} ({total} elements) into {fmt(tuple(target))} ({new} elements)")
    return [TensorType(tuple(target), ctx.dtype(0))]


def _solve_symbolic(x, target: list) -> list:
    """-1 beside symbolic sizes: each symbol in the target cancels one in the input ([seq, batch, 2, 24] into
    [seq, batch, -1] is 48); left as it is when the rest of the input is not all numbers."""
    rest = list(x)
    for t in target:
        if isinstance(t, str):
            if t not in rest:
                return target
            rest.remove(t)
    known = numel(tuple(t for t in target if isinstance(t, int) and t != -1))
    total = numel(tuple(rest))
    if not known or total is None or total % known:
        return target
    return [total // known if t == -1 else t for t in target]


def reshape(xp, a, x, shape=None):
    target = a.get("shape")
    target = list(target) if target is not None else ints(shape, "Reshape shape")
    if not int(a.get("allowzero", 0)):
        target = [x.shape[i] if t == 0 and i < x.ndim else t for i, t in enumerate(target)]
    return x.reshape(tuple(int(t) for t in target))


op("reshape", "Reshape", **plus_groups(layout, VALUE_RULE), infer=infer_reshape, sym_infer=sym.reshape,
   min_inputs=1, max_inputs=2,
   attrs={"shape": None, "allowzero": 0}, static_inputs=(1,), impl=reshape,
   doc="target shape from attr `shape` or a constant second input", cost_class="free", fusion="free")


def infer_flatten(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    if x is None:
        return [TensorType(None, ctx.dtype(0))]
    axis = int(ctx.attrs.get("axis", 1))
    axis = axis % len(x) if axis < 0 else axis
    a, b = numel(x[:axis]), numel(x[axis:])
    return [TensorType((a if a is not None else "?", b if b is not None else "?"), ctx.dtype(0))]


def flatten(xp, a, x):
    axis = int(a.get("axis", 1))
    axis = axis % x.ndim if axis < 0 else axis
    return x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), int(np.prod(x.shape[axis:], dtype=np.int64)))


op("flatten", "Flatten", **plus_groups(layout, VALUE_RULE), infer=infer_flatten, min_inputs=1, max_inputs=1,
   attrs={"axis": 1}, impl=flatten,
   cost_class="free", fusion="free")


# ---- transpose -----------------------------------------------------------------------------------
def infer_transpose(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    if x is None:
        return [TensorType(None, ctx.dtype(0))]
    perm = ctx.attrs.get("perm")
    if perm is None and ctx.const(1) is not None:
        perm = [int(p) for p in ctx.const(1).reshape(-1)]
    perm = list(perm) if perm is not None else list(reversed(range(len(x))))
    if sorted(perm) != list(range(len(x))):
        raise ShapeError(f"perm {perm} is not a permutation of the {len(x)} axes of {fmt(x)}")
    return [TensorType(tuple(x[p] for p in perm), ctx.dtype(0))]


def transpose(xp, a, x, perm=None):
    p = a.get("perm")
    p = list(p) if p is not None else (ints(perm, "Transpose perm") if present(perm) else list(range(x.ndim))[::-1])
    return xp.transpose(x, [int(v) for v in p])


op("transpose", "Transpose", **plus_groups(layout, VALUE_RULE), infer=infer_transpose, min_inputs=1, max_inputs=2,
   attrs={"perm": None},
   static_inputs=(1,), impl=transpose, cost_class="movement", fusion="foldable")


# ---- squeeze and unsqueeze: axes from the attribute or a constant second input --------------------
def _axes(ctx: Ctx) -> list[int] | None:
    axes = ctx.attrs.get("axes")
    if axes is None and ctx.const(1) is not None:
        axes = [int(a) for a in ctx.const(1).reshape(-1)]
    return None if axes is None else list(axes)


def _axes_value(a, v, what):
    axes = a.get("axes")
    if axes is None and present(v):
        axes = ints(v, what)
    return None if axes is None else [int(t) for t in axes]


def infer_squeeze(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    axes = _axes(ctx)
    if x is None:
        return [TensorType(None, ctx.dtype(0))]
    if axes is None:
        return [TensorType(tuple(d for d in x if d != 1), ctx.dtype(0))]
    ax = {norm_axis(a, len(x)) for a in axes}
    return [TensorType(tuple(d for i, d in enumerate(x) if i not in ax), ctx.dtype(0))]


def squeeze(xp, a, x, axes=None):
    ax = _axes_value(a, axes, "Squeeze axes")
    if ax is None:
        return x.reshape(tuple(d for d in x.shape if d != 1))
    ax = {t % x.ndim for t in ax}
    return x.reshape(tuple(d for i, d in enumerate(x.shape) if i not in ax))


def _insert_ones(shape, axes, rank):
    out, it = [], iter(shape)
    for i in range(rank):
        out.append(1 if i in axes else next(it))
    return tuple(out)


def infer_unsqueeze(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    axes = _axes(ctx)
    if x is None or axes is None:
        return [TensorType(None, ctx.dtype(0))]
    rank = len(x) + len(axes)
    return [TensorType(_insert_ones(x, sorted(norm_axis(a, rank) for a in axes), rank), ctx.dtype(0))]


def unsqueeze(xp, a, x, axes=None):
    ax = _axes_value(a, axes, "Unsqueeze axes")
    rank = x.ndim + len(ax)
    return x.reshape(_insert_ones(x.shape, sorted(t % rank for t in ax), rank))


op("squeeze", "Squeeze", **plus_groups(layout, VALUE_RULE), infer=infer_squeeze, min_inputs=1, max_inputs=2,
   attrs={"axes": None},
   static_inputs=(1,), impl=squeeze, cost_class="free", fusion="free")
op("unsqueeze", "Unsqueeze", "ExpandDims", **plus_groups(layout, VALUE_RULE), infer=infer_unsqueeze, min_inputs=1,
   max_inputs=2,
   attrs={"axes": None}, static_inputs=(1,), impl=unsqueeze, cost_class="free", fusion="free")


# ---- concat --------------------------------------------------------------------------------------
def infer_concat(ctx: Ctx) -> list[TensorType]:
    shapes = [t.shape for t in ctx.inputs]
    dtype = ctx.dtype(0)
    if not shapes or any(s is None for s in shapes):
        return [TensorType(None, dtype)]
    rank = len(shapes[0])
    ax = norm_axis(int(ctx.attrs.get("axis", 0)), rank)
    total = 0
    for s in shapes:
        if len(s) != rank:
            raise ShapeError(f"concat inputs have different ranks: {', '.join(fmt(x) for x in shapes)}")
        for i in range(rank):
            if i != ax and isinstance(s[i], int) and isinstance(shapes[0][i], int) and s[i] != shapes[0][i]:
                raise ShapeError(f"concat inputs {fmt(shapes[0])} and {fmt(s)} differ off axis {ax}")
        total = total + s[ax] if isinstance(total, int) and isinstance(s[ax], int) else "?"
    out = list(shapes[0])
    out[ax] = total
    return [TensorType(tuple(out), dtype)]


op("concat", "Concat", "ConcatV2", **plus_groups(layout, VALUE_RULE), infer=infer_concat, min_inputs=1,
   attrs={"axis": 0},
   impl=lambda xp, a, *xs: xp.concatenate(xs, axis=int(a.get("axis", 0))), cost_class="movement")


# ---- expand and tile -----------------------------------------------------------------------------
def infer_expand(ctx: Ctx) -> list[TensorType]:
    target = ctx.const(1)
    if target is None:
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType(r.broadcast(ctx.shape(0), tuple(int(v) for v in target.reshape(-1))), ctx.dtype(0))]


def expand(xp, a, x, shape):
    target = tuple(ints(shape, "Expand shape"))
    return xp.broadcast_to(x, np.broadcast_shapes(tuple(x.shape), target))


def infer_tile(ctx: Ctx) -> list[TensorType]:
    x, reps = ctx.shape(0), ctx.const(1)
    if x is None or reps is None:
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType(tuple(d * int(n) if isinstance(d, int) else d for d, n in zip(x, reps.reshape(-1))), ctx.dtype(0))]


op("expand", "Expand", "BroadcastTo", **plus_groups(layout, VALUE_RULE), infer=infer_expand, sym_infer=sym.expand,
   min_inputs=2, max_inputs=2, static_inputs=(1,),
   impl=expand, cost_class="movement")
op("tile", "Tile", **plus_groups(layout, VALUE_RULE), infer=infer_tile, sym_infer=sym.tile, min_inputs=2, max_inputs=2,
   static_inputs=(1,),
   impl=lambda xp, a, x, reps: xp.tile(x, tuple(ints(reps, "Tile repeats"))), cost_class="movement")
op("identity", "Identity", "Snapshot", "StopGradient", loop_role="=", groups=(LAYOUT, ZERO_SIZE, VALUE_RULE), infer=r.same,
   flops=r.zero_flops,
   min_inputs=1, max_inputs=1, doc="counts 0 toward a cluster's effective size, as in TF", impl=lambda xp, a, x: x,
   cost_class="free", fusion="free")


# ---- trilu: a band mask over the last two axes -------------------------------------------------------
def trilu(xp, a, x, k=None):
    kk = int(static(k, "Trilu k").reshape(-1)[0]) if present(k) else 0
    rows, cols = np.indices(x.shape[-2:], sparse=True)
    keep = (cols - rows >= kk) if int(a.get("upper", 1)) else (cols - rows <= kk)
    return xp.where(keep, x, xp.zeros((), x.dtype))


op("trilu", "Trilu", groups=LAYOUT, infer=r.same, flops=r.zero_flops, min_inputs=1,
   max_inputs=2, attrs={"upper": 1}, static_inputs=(1,), impl=trilu,
   doc="upper (j - i >= k) or lower (j - i <= k) triangle of the last two axes; k a constant "
       "(tf2xla: MatrixBandPart; its num_lower/num_upper band is the triangle for a constant k)", cost_class="movement")
