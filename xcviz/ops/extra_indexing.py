"""More indexing ops: reverse_sequence, compress, center_crop_pad, tensor_scatter, col2im and max_unpool."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, ints, is_np, present
from .registry import LAYOUT, op
from .rules import Ctx, norm_axis, numel

layout = dict(groups=LAYOUT, flops=r.zero_flops)
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


# ---- col2im: sum sliding blocks (N, C*prod(k), L) back into an image (N, C, *image_shape) -------------------
def _col2im_geom(a, image, block):
    n = len(image)
    dil = list(a.get("dilations") or [1] * n)
    strides = list(a.get("strides") or [1] * n)
    pads = list(a.get("pads") or [0] * 2 * n)
    blocks = [(image[d] + pads[d] + pads[d + n] - dil[d] * (block[d] - 1) - 1) // strides[d] + 1 for d in range(n)]
    return dil, strides, pads, blocks


def infer_col2im(ctx: Ctx) -> list[TensorType]:
    x, image, block = ctx.shape(0), ctx.const(1), ctx.const(2)
    if x is None or image is None or block is None or isinstance(x[1], str):
        return [TensorType(None, ctx.dtype(0))]
    k = math.prod(int(b) for b in np.asarray(block).reshape(-1))
    return [TensorType((x[0], x[1] // k, *(int(i) for i in np.asarray(image).reshape(-1))), ctx.dtype(0))]


def col2im(xp, a, x, image_shape, block_shape):
    image, block = ints(image_shape, "Col2Im image_shape"), ints(block_shape, "Col2Im block_shape")
    dil, strides, pads, blocks = _col2im_geom(a, image, block)
    n, k = len(image), math.prod(block)
    if x.ndim != 3 or x.shape[1] % k or x.shape[2] != math.prod(blocks) or min(blocks) < 1:
        raise Unsupported(f"Col2Im input {x.shape} does not match {blocks} blocks of kernel {block}")
    cols = x.reshape((x.shape[0], x.shape[1] // k, *block, *blocks))
    padded = [image[d] + pads[d] + pads[d + n] for d in range(n)]
    out = xp.zeros((x.shape[0], x.shape[1] // k, *padded), dtype=x.dtype)
    for off in itertools.product(*(range(b) for b in block)):
        win = (slice(None), slice(None)) + tuple(
            slice(off[d] * dil[d], off[d] * dil[d] + strides[d] * (blocks[d] - 1) + 1, strides[d]) for d in range(n))
        part = cols[(slice(None), slice(None), *off)]
        if is_np(xp):
            out[win] += part
        else:
            out = out.at[win].add(part)
    return out[(slice(None), slice(None)) + tuple(slice(pads[d], pads[d] + image[d]) for d in range(n))]


def col2im_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    return numel(ctx.shape(0))


op("col2im", "Col2Im", groups=LAYOUT, flops=col2im_flops, infer=infer_col2im, min_inputs=3, max_inputs=3,
   static_inputs=(1, 2), attrs={"dilations": None, "pads": None, "strides": None}, impl=col2im)


# ---- max_unpool: scatter pooled maxima back to the positions MaxPool's indices name --------------------------
def _unpool_shape(a, xs):
    k = list(a["kernel_shape"])
    n = len(k)
    strides = list(a.get("strides") or [1] * n)
    pads = list(a.get("pads") or [0] * 2 * n)
    return (*xs[:2], *((xs[d + 2] - 1) * strides[d] - pads[d] - pads[d + n] + k[d] for d in range(n)))


def infer_max_unpool(ctx: Ctx) -> list[TensorType]:
    x, given = ctx.shape(0), ctx.const(2)
    if given is not None:
        return [TensorType(tuple(int(v) for v in np.asarray(given).reshape(-1)), ctx.dtype(0))]
    if x is None or any(isinstance(d, str) for d in x) or ctx.attrs.get("kernel_shape") is None:
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType(_unpool_shape(ctx.attrs, x), ctx.dtype(0))]


def max_unpool(xp, a, x, idx, out_shape=None):
    if a.get("kernel_shape") is None:
        raise Unsupported("MaxUnpool needs kernel_shape")
    inferred = _unpool_shape(a, x.shape)
    shape = tuple(ints(out_shape, "MaxUnpool output_shape")) if present(out_shape) else inferred
    if shape != tuple(inferred):
        # ONNX's reference scatters into the unpooled shape and then zero-pads; onnxruntime indexes the
        # output_shape tensor directly (as MaxPool's indices of an input of that shape mean): they disagree
        raise Unsupported(f"MaxUnpool output_shape {shape} differs from the unpooled shape {inferred}: ONNX's "
                          "reference and onnxruntime place the values differently", hint="leave output_shape out")
    total = math.prod(inferred)
    flat_idx = idx.reshape(-1).astype(np.int64)
    if is_np(xp):
        if flat_idx.size and (flat_idx.min() < 0 or flat_idx.max() >= total):
            raise Unsupported(f"MaxUnpool index outside [0, {total})")
        y = np.zeros(total, dtype=x.dtype)
        y[flat_idx] = x.reshape(-1)
    else:
        y = xp.zeros(total, dtype=x.dtype).at[flat_idx].set(x.reshape(-1))
    y = y.reshape(inferred)
    return y


op("max_unpool", "MaxUnpool", **layout, infer=infer_max_unpool, min_inputs=2, max_inputs=3, static_inputs=(2,),
   attrs={"kernel_shape": None, "pads": None, "strides": None}, impl=max_unpool)
