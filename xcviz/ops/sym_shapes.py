"""Shape rules for symbolic values: Reshape, Expand, Slice, ConstantOfShape, Range and Tile whose shape
inputs (or data shapes) hold symbolic dimensions, as expressions (xcviz.ir.symbolic).

Each is its op's OpDef.sym_infer (on the op's entry in its family file), which the shape pass
(passes.node_rule) tries before the op's `infer`, the rule for integer values. Exported models feed these ops
values computed from Shape(x) (passes.values), so `batch`, `seq` and expressions of them flow in. Each rule
returns the output types, or None to leave the node to the op's `infer`. Slices assume what exporters mean: a
symbolic bound lies within its dimension (x[:, :seq] of a [1, 512] buffer is seq long, not min(seq, 512)).
"""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from ..ir.symbolic import Sym
from . import rules as r
from .rules import Ctx, ShapeError
from .sym_values import BIG, is_symbolic


def _dims(v) -> list[Sym] | None:
    return None if v is None else [Sym.of(x) for x in np.asarray(v).reshape(-1).tolist()]


def _prod(dims) -> Sym:
    out = Sym.of(1)
    for d in dims:
        out = out * Sym.of(d)
    return out


def _symbolic_shape(shape) -> bool:
    return shape is not None and any(isinstance(d, str) for d in shape)


def reshape(ctx: Ctx) -> list[TensorType] | None:
    x, target = ctx.shape(0), _dims(ctx.const(1)) if ctx.attrs.get("shape") is None else None
    if target is None or not (is_symbolic(ctx.const(1)) or _symbolic_shape(x)):
        return None
    if x is not None and not ctx.attrs.get("allowzero", 0):
        target = [Sym.of(x[i]) if t == 0 and i < len(x) else t for i, t in enumerate(target)]
    holes = [i for i, t in enumerate(target) if t == -1]
    if len(holes) > 1:
        raise ShapeError(f"reshape target {[t.to_dim() for t in target]} has more than one -1")
    if holes:
        if x is None:
            return None
        q = _prod(x).exact_div(_prod(t for i, t in enumerate(target) if i != holes[0]))
        if q is None:
            return None
        target[holes[0]] = q
    return [TensorType(tuple(t.to_dim() for t in target), ctx.dtype(0))]


def expand(ctx: Ctx) -> list[TensorType] | None:
    target = ctx.const(1)
    if not is_symbolic(target):
        return None
    return [TensorType(r.broadcast(ctx.shape(0), tuple(d.to_dim() for d in _dims(target))), ctx.dtype(0))]


def tile(ctx: Ctx) -> list[TensorType] | None:
    x, reps = ctx.shape(0), ctx.const(1)
    if x is None or not is_symbolic(reps):
        return None
    return [TensorType(tuple((Sym.of(d) * n).to_dim() for d, n in zip(x, _dims(reps))), ctx.dtype(0))]


def constant_of_shape(ctx: Ctx) -> list[TensorType] | None:
    dims = ctx.const(0)
    if not is_symbolic(dims):
        return None
    value = ctx.attrs.get("value")
    dtype = str(np.asarray(value).dtype) if value is not None else "float32"
    return [TensorType(tuple(d.to_dim() for d in _dims(dims)), dtype)]


def range_(ctx: Ctx) -> list[TensorType] | None:
    vals = [ctx.const(i) for i in range(3)]
    if not any(is_symbolic(v) for v in vals) or any(v is None for v in vals):
        return None
    start, limit, delta = (_dims(v)[0] for v in vals)
    if not delta.is_const or delta.const == 0:
        return None
    n = (limit - start).exact_div(delta.const) if delta.const > 0 else (start - limit).exact_div(-delta.const)
    if n is None:
        return None
    return [TensorType((n.to_dim() if not n.is_const else max(n.const, 0),), ctx.dtype(0) or ctx.dtype(1))]


def _slice_len(d: Sym, s: Sym, e: Sym, step: int) -> Sym | None:
    """Length of d[s:e:step] (step > 0), symbolic bounds taken to lie within the dimension."""
    if d.is_const and s.is_const and e.is_const:
        return Sym.of(len(range(*slice(s.const, e.const, step).indices(d.const))))
    if s.is_const and s.const < 0:
        s = d + s.const
    if e.is_const:
        e = d if e.const >= BIG else (d + e.const if e.const < 0 else e)
    n = e - s
    if n.is_const:
        return Sym.of(max(-(-n.const // step), 0))
    return n if step == 1 else None


def slice_(ctx: Ctx) -> list[TensorType] | None:
    x = ctx.shape(0)
    starts, ends, axes, steps = (ctx.const(i) for i in (1, 2, 3, 4))
    if x is None or starts is None or ends is None:
        return None
    if not (any(is_symbolic(v) for v in (starts, ends)) or _symbolic_shape(x)):
        return None
    starts, ends = _dims(starts), _dims(ends)
    axes = list(range(len(starts))) if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)]
    steps = [1] * len(starts) if steps is None else [int(s) for s in np.asarray(steps).reshape(-1)]
    out = list(x)
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = r.norm_axis(a, len(x))
        n = _slice_len(Sym.of(x[a]), s, e, st) if st > 0 else None
        if n is None:
            return None
        out[a] = n.to_dim()
    return [TensorType(tuple(out), ctx.dtype(0))]


def fill(ctx: Ctx) -> list[TensorType] | None:
    """TF Fill(dims, value): ConstantOfShape with the value input's dtype."""
    out = constant_of_shape(ctx)
    return None if out is None else [TensorType(out[0].shape, ctx.dtype(1))]

