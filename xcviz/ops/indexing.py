"""Indexing ops: gather, slice, split, pad, reverse_sequence, compress, center_crop_pad and tensor_scatter."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r, sym_shapes as sym
from .arrays import Unsupported, ints, is_np, present
from .registry import LAYOUT, VALUE_RULE, Entries, plus_groups
from .rules import Ctx, ShapeError, norm_axis

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

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


op("gather", "Gather", "GatherV2", **plus_groups(layout, VALUE_RULE), infer=infer_gather, min_inputs=2, max_inputs=2,
   attrs={"axis": 0},
   impl=gather, cost_class="movement")


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


op("slice", "Slice", "StridedSlice", **plus_groups(layout, VALUE_RULE), infer=infer_slice, sym_infer=sym.slice_,
   min_inputs=1, max_inputs=5, static_inputs=(1, 2, 3, 4), impl=slice_,
   doc="starts, ends, axes, steps as constant inputs (ONNX opset >= 10)", cost_class="movement")


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
   attrs={"axis": 0, "split": None}, static_inputs=(1,), impl=split, cost_class="movement")


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
   attrs={"mode": "constant", "pads": None}, static_inputs=(1, 3), impl=pad, cost_class="movement")


NONE = frozenset()


def _same(ctx: Ctx) -> list[TensorType]:
    return [TensorType(ctx.shape(0), ctx.dtype(0))]


# ---- reverse_sequence: reverse the first len[b] steps of each batch row along the time axis ---------------
def reverse_sequence(xp, a, x, lens):
    t_ax, b_ax = int(a.get("time_axis", 0)) % x.ndim, int(a.get("batch_axis", 1)) % x.ndim
    t_shape, b_shape = [1] * x.ndim, [1] * x.ndim
    t_shape[t_ax], b_shape[b_ax] = x.shape[t_ax], x.shape[b_ax]
    t = xp.arange(x.shape[t_ax]).reshape(t_shape)
    n = lens.astype(t.dtype).reshape(b_shape)
    if is_np(xp) and lens.size and (lens.min() < 0 or lens.max() > x.shape[t_ax]):
        raise Unsupported(f"ReverseSequence sequence_lens outside [0, {x.shape[t_ax]}]")
    idx = xp.broadcast_to(xp.where(t < n, n - 1 - t, t), x.shape)
    return xp.take_along_axis(x, idx, axis=t_ax)


op("reverse_sequence", "ReverseSequence", **layout, infer=_same, min_inputs=2, max_inputs=2,
   attrs={"batch_axis": 1, "time_axis": 0}, impl=reverse_sequence)


# ---- compress: the slices along axis where condition holds (output length = number of hits) ----------------
def infer_compress(ctx: Ctx) -> list[TensorType]:
    x, axis = ctx.shape(0), ctx.attrs.get("axis")
    if x is None:
        return [TensorType(None, ctx.dtype(0))]
    if axis is None:
        return [TensorType(("num_selected",), ctx.dtype(0))]
    ax = norm_axis(int(axis), len(x))
    return [TensorType((*x[:ax], "num_selected", *x[ax + 1:]), ctx.dtype(0))]


def compress(xp, a, x, cond):
    axis = a.get("axis")
    cond = np.asarray(cond).astype(bool).reshape(-1)
    n = x.size if axis is None else x.shape[int(axis) % x.ndim]
    if cond.size > n:
        raise Unsupported(f"Compress condition has {cond.size} entries for a dimension of {n}")
    return np.compress(cond, np.asarray(x), axis=None if axis is None else int(axis) % x.ndim)


op("compress", "Compress", groups=LAYOUT, flops=r.zero_flops, devices=NONE, jax_ok=False, infer=infer_compress,
   min_inputs=2, max_inputs=2, attrs={"axis": None}, impl=compress,
   doc="output length is the number of true conditions (data-dependent)")


# ---- center_crop_pad: crop or zero-pad each named axis around its centre to a constant size -------------
def _crop_pad_plan(shape, sizes, axes):
    """Per axis (crop start, crop stop, pad before, pad after); ONNX puts the odd element at the end."""
    rank = len(shape)
    axes = list(range(rank)) if axes is None else [norm_axis(int(x), rank) for x in axes]
    if len(axes) != len(sizes):
        raise Unsupported(f"CenterCropPad: {len(sizes)} sizes for {len(axes)} axes")
    plan = [(0, d, 0, 0) for d in shape]
    for ax, want in zip(axes, sizes):
        dim = shape[ax]
        if want < 0:
            raise Unsupported(f"CenterCropPad: negative size {want}")
        if want <= dim:
            s = (dim - want) // 2
            plan[ax] = (s, s + want, 0, 0)
        else:
            p = (want - dim) // 2
            plan[ax] = (0, dim, p, want - dim - p)
    return plan


def infer_center_crop_pad(ctx: Ctx) -> list[TensorType]:
    x, sizes = ctx.shape(0), ctx.const(1)
    if x is None or sizes is None or any(isinstance(d, str) for d in x):
        return [TensorType(None, ctx.dtype(0))]
    axes = ctx.attrs.get("axes")
    plan = _crop_pad_plan(x, [int(v) for v in np.asarray(sizes).reshape(-1)], axes)
    return [TensorType(tuple(e - s + pb + pa for s, e, pb, pa in plan), ctx.dtype(0))]


def center_crop_pad(xp, a, x, sizes):
    plan = _crop_pad_plan(x.shape, ints(sizes, "CenterCropPad shape"), a.get("axes"))
    x = x[tuple(slice(s, e) for s, e, _, _ in plan)]
    return xp.pad(x, [(pb, pa) for _, _, pb, pa in plan])


op("center_crop_pad", "CenterCropPad", **layout, infer=infer_center_crop_pad, min_inputs=2, max_inputs=2,
   static_inputs=(1,), attrs={"axes": None}, impl=center_crop_pad)


# ---- tensor_scatter: write `update` into a KV cache at per-batch positions along axis ------------------------
def tensor_scatter(xp, a, cache, upd, write_idx=None):
    mode, axis = str(a.get("mode", "linear")), int(a.get("axis", -2)) % cache.ndim
    if mode not in ("linear", "circular"):
        raise Unsupported(f"TensorScatter mode {mode!r}")
    if axis == 0:
        raise Unsupported("TensorScatter axis 0 (the batch axis) is not a sequence axis")
    if upd.shape[:axis] != cache.shape[:axis] or upd.shape[axis + 1:] != cache.shape[axis + 1:] \
            or upd.shape[axis] > cache.shape[axis]:
        raise Unsupported(f"TensorScatter update {upd.shape} does not fit the cache {cache.shape} on axis {axis}")
    size, seq = cache.shape[axis], upd.shape[axis]
    start = xp.zeros((cache.shape[0],), dtype=np.int64) if not present(write_idx) else write_idx.astype(np.int64)
    pos = start.reshape((-1,) + (1,) * axis) + xp.arange(seq)
    if mode == "circular":
        pos = pos % size
    elif is_np(xp) and pos.size and (pos.min() < 0 or pos.max() >= size):
        raise Unsupported(f"TensorScatter write position outside [0, {size}) in linear mode")
    key = (*np.indices(upd.shape[:axis], sparse=True), pos)
    key = tuple(k.reshape(k.shape + (1,)) if i < axis else k for i, k in enumerate(key))
    upd = upd.astype(cache.dtype)
    if is_np(xp):
        out = np.array(cache, copy=True)
        out[key] = upd
        return out
    return cache.at[key].set(upd)


op("tensor_scatter", "TensorScatter", **layout, infer=_same, min_inputs=2, max_inputs=3,
   attrs={"axis": -2, "mode": "linear"}, impl=tensor_scatter)
