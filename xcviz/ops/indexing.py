"""Indexing ops: gather, slice, split and pad (bounds, sizes and pads as attributes or constant inputs)."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, ints, is_np, present
from .registry import LAYOUT, op
from .rules import Ctx, ShapeError, norm_axis

layout = dict(groups=LAYOUT, flops=r.zero_flops)


# ---- gather --------------------------------------------------------------------------------------
def infer_gather(ctx: Ctx) -> list[TensorType]:
    x, idx = ctx.shape(0), ctx.shape(1)
    if x is None or idx is None:
        return [TensorType(None, ctx.dtype(0))]
    ax = norm_axis(int(ctx.attrs.get("axis", 0)), len(x))
    return [TensorType((*x[:ax], *idx, *x[ax + 1:]), ctx.dtype(0))]


def gather(xp, a, x, idx):
    axis = int(a.get("axis", 0)) % x.ndim
    n = x.shape[axis]
    if is_np(xp):
        idx = np.asarray(idx)
        if idx.size and (idx.min() < -n or idx.max() >= n):
            raise Unsupported(f"Gather index out of range [-{n}, {n})")
        return np.take(x, np.where(idx < 0, idx + n, idx), axis=axis)
    idx = xp.where(idx < 0, idx + n, idx)
    return xp.take(x, idx, axis=axis, mode="clip")


op("gather", "Gather", "GatherV2", **layout, infer=infer_gather, min_inputs=2, max_inputs=2, attrs={"axis": 0},
   impl=gather)


# ---- slice ---------------------------------------------------------------------------------------
def infer_slice(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    starts, ends, axes, steps = (ctx.const(i) for i in (1, 2, 3, 4))
    if x is None or starts is None or ends is None or any(isinstance(d, str) for d in x):
        return [TensorType(None, ctx.dtype(0))]
    axes = list(range(len(starts))) if axes is None else [int(a) for a in axes]
    steps = [1] * len(starts) if steps is None else [int(s) for s in steps]
    out = list(x)
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = norm_axis(a, len(x))
        out[a] = len(range(*slice(int(s), int(e), st).indices(x[a])))
    return [TensorType(tuple(out), ctx.dtype(0))]


def slice_(xp, a, x, starts=None, ends=None, axes=None, steps=None):
    if a.get("starts") is not None and starts is None:  # opset < 10: attributes
        starts, ends, axes = np.asarray(a["starts"]), np.asarray(a["ends"]), a.get("axes")
        axes = None if axes is None else np.asarray(axes)
    st, en = ints(starts, "Slice starts"), ints(ends, "Slice ends")
    ax = ints(axes, "Slice axes") if present(axes) else list(range(len(st)))
    sp = ints(steps, "Slice steps") if present(steps) else [1] * len(st)
    idx = [slice(None)] * x.ndim
    for s, e, axis, step in zip(st, en, ax, sp):
        axis %= x.ndim
        rng = range(*slice(s, e, step).indices(x.shape[axis]))
        if len(rng) == 0:
            idx[axis] = slice(0, 0)
        else:
            stop = rng.stop if rng.stop >= 0 else None
            idx[axis] = slice(rng.start, stop, step)
    return x[tuple(idx)]


op("slice", "Slice", "StridedSlice", **layout, infer=infer_slice, min_inputs=1, max_inputs=5,
   static_inputs=(1, 2, 3, 4), impl=slice_, doc="starts, ends, axes, steps as constant inputs (ONNX opset >= 10)")


# ---- split ---------------------------------------------------------------------------------------
def infer_split(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    n = max(ctx.num_outputs, 1)
    if x is None:
        return [TensorType(None, ctx.dtype(0))] * n
    ax = norm_axis(int(ctx.attrs.get("axis", 0)), len(x))
    sizes = ctx.attrs.get("split")
    if sizes is None and ctx.const(1) is not None:
        sizes = [int(s) for s in ctx.const(1).reshape(-1)]
    if sizes is None:
        if isinstance(x[ax], str) or (ctx.shape(1) is not None and ctx.shape(1) != (0,)):  # (sizes not known here)
            if ctx.shape(1) is not None and not isinstance(x[ax], str):
                return [TensorType(tuple("?" if i == ax else d for i, d in enumerate(x)), ctx.dtype(0))] * n
            return [TensorType(None, ctx.dtype(0))] * n
            return [TensorType(None, ctx.dtype(0))] * n
        chunk = -(-x[ax] // n)  # ONNX opset 18: the last part may be smaller
        if chunk * (n - 1) >= x[ax] and n > 1:
            raise ShapeError(f"cannot split axis {ax} of size {x[ax]} into {n} parts")
        sizes = [chunk] * (n - 1) + [x[ax] - chunk * (n - 1)]
    outs = []
    for s in sizes:
        shape = list(x)
        shape[ax] = s
        outs.append(TensorType(tuple(shape), ctx.dtype(0)))
    return outs


def split(xp, a, x, sizes=None):
    axis = int(a.get("axis", 0)) % x.ndim
    sz = a.get("split")
    sz = [int(v) for v in sz] if sz is not None else (ints(sizes, "Split sizes") if present(sizes) else None)
    if sz is None:
        k = int(a.get("num_outputs") or a.get("_num_outputs") or 1)
        n = x.shape[axis]
        chunk = -(-n // k)
        sz = [chunk] * (k - 1) + [n - chunk * (k - 1)]
    bounds = np.cumsum([0] + sz)
    return tuple(xp.take(x, np.arange(bounds[i], bounds[i + 1]), axis=axis) for i in range(len(sz)))


op("split", "Split", "SplitV", **layout, infer=infer_split, min_inputs=1, max_inputs=2, num_outputs=None,
   attrs={"axis": 0, "split": None}, static_inputs=(1,), impl=split)


# ---- pad -----------------------------------------------------------------------------------------
def infer_pad(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    pads = ctx.attrs.get("pads")
    if pads is None and ctx.const(1) is not None:
        pads = [int(p) for p in ctx.const(1).reshape(-1)]
    if x is None or pads is None:
        return [TensorType(None, ctx.dtype(0))]
    rank = len(x)
    axes = list(range(rank)) if ctx.const(3) is None else [norm_axis(int(a), rank) for a in ctx.const(3).reshape(-1)]
    k = len(axes)
    if len(pads) != 2 * k:
        raise ShapeError(f"pad needs {2 * k} pad values for {k} axes, got {len(pads)}")
    out = list(x)
    for j, a in enumerate(axes):
        if isinstance(out[a], int):
            out[a] = out[a] + pads[j] + pads[j + k]
    return [TensorType(tuple(out), ctx.dtype(0))]


def pad(xp, a, x, pads=None, value=None, axes=None):
    mode = str(a.get("mode", "constant"))
    p = a.get("pads")
    p = [int(v) for v in p] if p is not None else ints(pads, "Pad pads")
    ax = ints(axes, "Pad axes") if present(axes) else list(range(x.ndim))
    k = len(ax)
    full = [[0, 0] for _ in range(x.ndim)]
    for j, axis in enumerate(ax):
        full[axis % x.ndim] = [p[j], p[j + k]]
    grow = [(max(b, 0), max(e, 0)) for b, e in full]
    if mode == "constant":
        cv = value if present(value) else a.get("value", 0)
        cv = xp.asarray(cv, dtype=x.dtype).reshape(()) if hasattr(cv, "shape") or is_np(xp) else cv
        y = xp.pad(x, grow, constant_values=cv)
    elif mode in ("reflect", "edge", "wrap"):
        y = xp.pad(x, grow, mode=mode)
    else:
        raise Unsupported(f"Pad mode {mode!r}")
    crop = tuple(slice(-b if b < 0 else 0, (y.shape[i] + e) if e < 0 else None) for i, (b, e) in enumerate(full))
    return y[crop]


op("pad", "Pad", "PadV2", **layout, infer=infer_pad, min_inputs=1, max_inputs=4,
   attrs={"mode": "constant", "pads": None}, static_inputs=(1, 3), impl=pad)
