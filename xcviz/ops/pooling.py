"""Pooling (NCHW, ONNX padding rules): max, average, global and Lp windows, and the windowed scatters that
undo them (MaxUnpool, Col2Im)."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, ints, is_np, lit, present
from .registry import LAYOUT, MEAN, REDUCTION, STRIDED_WINDOW, Entries, plus_groups
from .rules import Ctx, ShapeError, fmt, numel
from .windows import spatial_out, window_geometry, window_slices

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

layout = dict(groups=LAYOUT, flops=r.zero_flops)


# ---- max and average pooling -------------------------------------------------------------------------------------
def infer_pool(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    if x is None:
        return [TensorType(None, ctx.dtype(0))]
    if len(x) < 3:
        raise ShapeError(f"pooling needs an NCHW input, got {fmt(x)}")
    kernel = list(ctx.attrs.get("kernel_shape") or [2] * (len(x) - 2))
    attrs = dict(ctx.attrs)
    if not attrs.get("strides"):
        attrs["strides"] = list(kernel) if ctx.attrs.get("kernel_shape") is None else [1] * len(kernel)
    c2 = Ctx(ctx.inputs, attrs)
    shape = (x[0], x[1], *spatial_out(c2, kernel))
    return [TensorType(shape, ctx.dtype(0)), TensorType(shape, "int64")][:max(ctx.num_outputs, 1)]


def pool_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    n = numel(out[0].shape)
    kernel = ctx.attrs.get("kernel_shape") or [2, 2]
    return None if n is None else n * math.prod(kernel)


def pool_kernel(a, x):
    nsp = x.ndim - 2
    kernel = [int(k) for k in (a.get("kernel_shape") or [2] * nsp)]
    attrs = dict(a)
    if not attrs.get("strides"):
        attrs["strides"] = list(kernel) if a.get("kernel_shape") is None else [1] * nsp
    return kernel, attrs


def _flat_positions(shape, column_major: bool) -> np.ndarray:
    """ONNX MaxPool Indices: each element's flat position, the spatial part row- or column-major (storage_order)."""
    sp = tuple(shape[2:])
    plane = int(np.prod(sp))
    local = np.arange(plane, dtype=np.int64).reshape(sp)
    if column_major:
        local = np.arange(plane, dtype=np.int64).reshape(sp[::-1]).transpose(tuple(range(len(sp)))[::-1])
    return np.arange(shape[0] * shape[1], dtype=np.int64).reshape(shape[:2] + (1,) * len(sp)) * plane + local


def maxpool(xp, a, x):
    kernel, attrs = pool_kernel(a, x)
    strides, dil, begin, end, out = window_geometry(attrs, list(x.shape[2:]), kernel, bool(a.get("ceil_mode")))
    extra = [max((out[i] - 1) * strides[i] + dil[i] * (kernel[i] - 1) + 1 - (x.shape[2 + i] + begin[i] + end[i]), 0)
             for i in range(len(kernel))]
    low = -np.inf if np.dtype(x.dtype).kind == "f" else np.iinfo(x.dtype).min
    xpad = xp.pad(x, [(0, 0), (0, 0)] + [(begin[i], end[i] + extra[i]) for i in range(len(kernel))],
                  constant_values=lit(x, low))
    want_indices = int(a.get("_num_outputs", 1)) > 1
    if want_indices:  # ONNX Indices: flat position in the (unpadded) input; static, built in NumPy
        flat = np.pad(_flat_positions(tuple(x.shape), bool(int(a.get("storage_order", 0)))),
                      [(0, 0), (0, 0)] + [(begin[i], end[i] + extra[i]) for i in range(len(kernel))],
                      constant_values=-1)
    acc = idx = None
    for off in np.ndindex(*kernel):
        sl = (slice(None),) * 2 + window_slices(off, strides, dil, out)
        v = xpad[sl]
        if want_indices:
            pos = flat[sl]
            idx = pos if acc is None else xp.where(v > acc, pos, idx)
        acc = v if acc is None else xp.maximum(acc, v)
    return (acc, idx) if want_indices else acc


def avgpool(xp, a, x):
    kernel, attrs = pool_kernel(a, x)
    strides, dil, begin, end, out = window_geometry(attrs, list(x.shape[2:]), kernel, bool(a.get("ceil_mode")))
    nsp = len(kernel)
    extra = [max((out[i] - 1) * strides[i] + dil[i] * (kernel[i] - 1) + 1 - (x.shape[2 + i] + begin[i] + end[i]), 0)
             for i in range(nsp)]
    pad = [(0, 0), (0, 0)] + [(begin[i], end[i] + extra[i]) for i in range(nsp)]
    xpad = xp.pad(x, pad)
    # counts are static: computed in NumPy from the shapes alone
    ones = np.ones(x.shape[2:], dtype=np.float64)
    if int(a.get("count_include_pad", 0)):
        ones = np.pad(ones, [(begin[i], end[i]) for i in range(nsp)], constant_values=1.0)
        cnt_pad = np.pad(ones, [(0, extra[i]) for i in range(nsp)])
    else:
        cnt_pad = np.pad(ones, [(begin[i], end[i] + extra[i]) for i in range(nsp)])
    acc, cnt = None, 0.0
    for off in np.ndindex(*kernel):
        sl = window_slices(off, strides, dil, out)
        v = xpad[(slice(None),) * 2 + sl]
        acc = v if acc is None else acc + v
        cnt = cnt + cnt_pad[sl]
    return (acc / np.maximum(cnt, 1.0).astype(x.dtype)).astype(x.dtype)


op("maxpool", "MaxPool", "pool", "max_pool", "max_pool2d", infer=infer_pool, flops=pool_flops, min_inputs=1,
   max_inputs=1, num_outputs=None, attrs={"kernel_shape": None, "strides": None, "pads": None, "ceil_mode": 0},
   doc="max pooling; `pool` (the seed's name) defaults to a 2x2 window with stride 2", impl=maxpool,
   cost_class="window", fusion="reduce", groups=STRIDED_WINDOW)
op("avgpool", "AveragePool", "AvgPool", "avg_pool", infer=infer_pool, flops=pool_flops, min_inputs=1, max_inputs=1,
   attrs={"kernel_shape": None, "strides": None, "pads": None, "ceil_mode": 0, "count_include_pad": 0},
   impl=avgpool, cost_class="window", fusion="reduce", groups=STRIDED_WINDOW)


# ---- global pooling ------------------------------------------------------------------------------
def infer_global_pool(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    if x is None:
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType((*x[:2], *([1] * (len(x) - 2))), ctx.dtype(0))]


def global_pool(kind):
    def fn(xp, a, x):
        axes = tuple(range(2, x.ndim))
        return (xp.mean if kind == "avg" else xp.max)(x, axis=axes, keepdims=True).astype(x.dtype)
    fn.__name__ = f"global_{kind}pool"
    return fn


gpool = dict(infer=infer_global_pool, flops=r.input_flops(1), min_inputs=1, max_inputs=1, groups=REDUCTION)
op("global_avgpool", "GlobalAveragePool", **plus_groups(gpool, MEAN), impl=global_pool("avg"), cost_class="reduce",
   fusion="reduce")
op("global_maxpool", "GlobalMaxPool", **gpool, impl=global_pool("max"), cost_class="reduce", fusion="reduce")


# ---- lp_pool -------------------------------------------------------------------------------------
def infer_lp_pool(ctx: Ctx) -> list[TensorType]:
    return infer_pool(ctx)[:1]


def lp_pool_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    n = pool_flops(ctx, out)
    return None if n is None else 3 * n


def lp_pool(xp, a, x):
    """(sum over the window of |x|^p)^(1/p), padding counting as zeros (ONNX's reference)."""
    kernel, attrs = pool_kernel(a, x)
    strides, dil, begin, end, out = window_geometry(attrs, list(x.shape[2:]), kernel, bool(a.get("ceil_mode")))
    nsp = len(kernel)
    extra = [max((out[i] - 1) * strides[i] + dil[i] * (kernel[i] - 1) + 1 - (x.shape[2 + i] + begin[i] + end[i]), 0)
             for i in range(nsp)]
    p = float(a.get("p", 2))
    v = x * x if p == 2 else xp.abs(x) ** lit(x, p)
    vpad = xp.pad(v, [(0, 0), (0, 0)] + [(begin[i], end[i] + extra[i]) for i in range(nsp)])
    acc = None
    for off in np.ndindex(*kernel):
        w = vpad[(slice(None),) * 2 + window_slices(off, strides, dil, out)]
        acc = w if acc is None else acc + w
    return (xp.sqrt(acc) if p == 2 else acc ** lit(x, 1.0 / p)).astype(x.dtype)


op("lp_pool", "LpPool", infer=infer_lp_pool, flops=lp_pool_flops, min_inputs=1, max_inputs=1,
   attrs={"kernel_shape": None, "p": 2, "strides": None, "pads": None, "ceil_mode": 0},
   impl=lp_pool, doc="Lp norm over each window, padding as zeros")


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
