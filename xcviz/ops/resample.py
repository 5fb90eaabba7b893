"""Spatial resampling: resize/upsample (nearest, linear, cubic), depth_to_space and space_to_depth."""
from __future__ import annotations

import math

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, ints, lit, present, static
from .registry import Entries
from .rules import Ctx, norm_axis

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


# ---- resize --------------------------------------------------------------------------------------
def infer_resize(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    scales = ctx.attrs.get("scales")
    sizes = ctx.attrs.get("sizes")
    if scales is None:
        for i in (2, 1):
            c = ctx.const(i)
            if c is not None and c.size and c.dtype.kind == "f":
                scales = [float(v) for v in c.reshape(-1)]
                break
    if sizes is None and ctx.const(3) is not None and ctx.const(3).size:
        sizes = [int(v) for v in ctx.const(3).reshape(-1)]
    if x is None or (sizes is None and scales is None):
        return [TensorType(None, ctx.dtype(0))]
    axes = ctx.attrs.get("axes")
    axes = list(range(len(x))) if axes is None else [norm_axis(int(a), len(x)) for a in axes]
    if str(ctx.attrs.get("keep_aspect_ratio_policy", "stretch")) != "stretch":
        return [TensorType(None, ctx.dtype(0))]
    out = list(x)
    for j, a in enumerate(axes):
        if sizes is not None:
            out[a] = sizes[j]
        elif isinstance(x[a], int):
            out[a] = int(math.floor(x[a] * scales[j]))
    return [TensorType(tuple(out), ctx.dtype(0))]


def _source_coords(ctm, o, n_in, n_out, s, roi=None):
    """Input coordinate of each output index along one axis (ONNX coordinate_transformation_mode), and for
    tf_crop_and_resize the mask of outputs that fall outside the input (they get extrapolation_value)."""
    out_w = n_in * s  # ONNX uses the unrounded resized length, not the output size
    if ctm == "half_pixel":
        return (o + 0.5) / s - 0.5, None
    if ctm == "pytorch_half_pixel":
        return ((o + 0.5) / s - 0.5 if n_out > 1 else np.zeros_like(o)), None
    if ctm == "align_corners":
        return (o * (n_in - 1) / (out_w - 1) if out_w > 1 else np.zeros_like(o)), None
    if ctm == "asymmetric":
        return o / s, None
    if ctm == "tf_half_pixel_for_nn":
        return (o + 0.5) / s, None
    if ctm == "half_pixel_symmetric":
        offset = n_in / 2 * (1 - n_out / out_w)
        return offset + (o + 0.5) / s - 0.5, None
    if ctm == "tf_crop_and_resize":
        lo, hi = roi
        c = (np.full_like(o, (hi - lo) * (n_in - 1) / 2) if out_w == 1 else o * (hi - lo) * (n_in - 1) / (out_w - 1))
        c = c + lo * (n_in - 1)
        return c, (c < 0) | (c > n_in - 1)
    raise Unsupported(f"Resize coordinate_transformation_mode {ctm!r}")


def _cubic_kernel(x, A):
    x = np.abs(x)
    return np.where(x <= 1, ((A + 2) * x - (A + 3)) * x * x + 1,
                    np.where(x < 2, ((A * x - 5 * A) * x + 8 * A) * x - 4 * A, 0.0))


def _taps(mode, ratio, s, A, antialias):
    """Per output, the filter taps (onnx reference): offsets from floor(x) and weights; ratio in (0, 1]."""
    if antialias and s < 1:
        reach = 1 if mode == "linear" else 2
        start = int(np.floor(-reach / s) + 1)
        offs = np.arange(start, 2 - start if mode == "cubic" else start + 2 - 2 * start)
        args = (offs[None, :] - ratio[:, None]) * s
        w = np.clip(1 - np.abs(args), 0, 1) if mode == "linear" else _cubic_kernel(args, A)
        return offs, w / w.sum(axis=1, keepdims=True)
    if mode == "linear":
        return np.array([0, 1]), np.stack([1 - ratio, ratio], axis=1)
    r = ratio[:, None]
    return np.array([-1, 0, 1, 2]), _cubic_kernel(np.concatenate([r + 1, r, 1 - r, 2 - r], axis=1), A)


def _interp_matrix(mode, c, n_in, s, a):
    """[n_out, n_in] weights of linear / cubic interpolation (antialias, exclude_outside), edge-clamped."""
    base = np.floor(c)
    ratio = np.where(c == base, 1.0, c - base)
    base = np.where(c == base, c - 1, base)  # the reference's ratio is in (0, 1]: an exact hit is ratio 1
    offs, w = _taps(mode, ratio, s, float(a.get("cubic_coeff_a", -0.75)), int(a.get("antialias", 0)))
    idx = base[:, None].astype(np.int64) + offs[None, :]
    if int(a.get("exclude_outside", 0)):
        w = np.where((idx < 0) | (idx >= n_in), 0.0, w)
        total = w.sum(axis=1, keepdims=True)
        w = w / np.where(total == 0, 1.0, total)
    m = np.zeros((len(c), n_in))
    np.add.at(m, (np.repeat(np.arange(len(c)), idx.shape[1]), np.clip(idx, 0, n_in - 1).reshape(-1)), w.reshape(-1))
    return m


def _sizes(a, x, scales, sizes):
    """(axes, per-axis scale, per-axis output size) from scales or sizes and keep_aspect_ratio_policy."""
    axes = a.get("axes")
    axes = list(range(x.ndim)) if axes is None else [int(v) % x.ndim for v in axes]
    sc = a.get("scales")
    sc = [float(v) for v in sc] if sc is not None else (
        [float(v) for v in static(scales, "Resize scales").reshape(-1)] if present(scales) else None)
    sz = [int(v) for v in ints(sizes, "Resize sizes")] if present(sizes) else None
    full_scale, full_size = [1.0] * x.ndim, list(x.shape)
    policy = str(a.get("keep_aspect_ratio_policy", "stretch"))
    if sz is not None and policy != "stretch":
        if policy not in ("not_larger", "not_smaller"):
            raise Unsupported(f"Resize keep_aspect_ratio_policy {policy!r}")
        ratios = [sz[j] / x.shape[ax] for j, ax in enumerate(axes)]
        one = min(ratios) if policy == "not_larger" else max(ratios)
        sz = [int(one * x.shape[ax] + 0.5) for ax in axes]
        sc, sz_scales = [one] * len(axes), True
    else:
        sz_scales = False
    for j, ax in enumerate(axes):
        if sz is not None:
            full_size[ax] = sz[j]
            full_scale[ax] = sc[j] if sz_scales else sz[j] / x.shape[ax]
        elif sc is not None:
            full_scale[ax] = sc[j]
            full_size[ax] = int(math.floor(x.shape[ax] * sc[j]))
        else:
            raise Unsupported("Resize needs scales or sizes")
    return axes, full_scale, full_size


def resize(xp, a, x, roi=None, scales=None, sizes=None):
    upsample = a.get("_op_type") in ("Upsample", "upsample")
    if upsample and scales is None and roi is not None:
        scales, roi = roi, None
    mode = str(a.get("mode", "nearest"))
    mode = "linear" if mode == "bilinear" else mode
    ctm = str(a.get("coordinate_transformation_mode", "asymmetric" if upsample else "half_pixel"))
    nearest_mode = str(a.get("nearest_mode", "floor" if upsample else "round_prefer_floor"))
    if mode not in ("nearest", "linear", "cubic"):
        raise Unsupported(f"Resize mode {mode!r} (nearest, linear or cubic)")
    axes, full_scale, full_size = _sizes(a, x, scales, sizes)
    rois = None
    if ctm == "tf_crop_and_resize":
        rv = [float(v) for v in static(roi, "Resize roi").reshape(-1)] if present(roi) else None
        if rv is None:
            raise Unsupported("Resize tf_crop_and_resize needs roi")
        k = len(rv) // 2
        rois = [(0.0, 1.0)] * x.ndim
        for j, ax in enumerate(axes if k == len(axes) else range(x.ndim)):
            rois[ax] = (rv[j], rv[k + j])
    extrapolation = float(a.get("extrapolation_value", 0.0))
    y = x if mode == "nearest" or x.dtype.kind == "f" else x.astype(np.float64)
    for ax in range(x.ndim):
        n_in, n_out, s = x.shape[ax], full_size[ax], full_scale[ax]
        if n_in == n_out and s == 1.0 and (rois is None or rois[ax] == (0.0, 1.0)):
            continue
        c, outside = _source_coords(ctm, np.arange(n_out, dtype=np.float64), n_in, n_out, s,
                                    rois[ax] if rois else None)
        if mode == "nearest":
            rounded = {"round_prefer_floor": np.ceil(c - 0.5), "round_prefer_ceil": np.floor(c + 0.5),
                       "floor": np.floor(c), "ceil": np.ceil(c)}.get(nearest_mode)
            if rounded is None:
                raise Unsupported(f"Resize nearest_mode {nearest_mode!r}")
            y = xp.take(y, np.clip(rounded, 0, n_in - 1).astype(np.int64), axis=ax)
        else:
            m = _interp_matrix(mode, c, n_in, s, a).astype(y.dtype)
            y = xp.moveaxis(xp.tensordot(m, y, axes=([1], [ax])), 0, ax)
        if outside is not None and outside.any():
            keep = outside.reshape((-1,) + (1,) * (x.ndim - 1 - ax))
            y = xp.where(keep, lit(y, extrapolation), y)
    if x.dtype.kind in "iu" and y.dtype != x.dtype:
        info = np.iinfo(x.dtype)
        y = xp.clip(xp.rint(y), info.min, info.max)
    return y.astype(x.dtype)


op("resize", "Resize", "Upsample", "upsample", infer=infer_resize, flops=r.output_flops(4), min_inputs=1,
   max_inputs=4, attrs={"mode": "nearest"}, static_inputs=(1, 2, 3), impl=resize,
   doc="nearest / linear / cubic resize by scales or sizes: every coordinate_transformation_mode, antialias, "
       "exclude_outside, keep_aspect_ratio_policy, tf_crop_and_resize (tf2xla: ResizeNearestNeighbor, "
       "ResizeBilinear; cubic and antialias as a constant interpolation matrix, MatMul)", cost_class="window")


# ---- depth_to_space ------------------------------------------------------------------------------
def infer_depth_to_space(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    b = int(ctx.attrs.get("blocksize", 2))
    if x is None or len(x) != 4 or any(isinstance(d, str) for d in x[1:]):
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType((x[0], x[1] // (b * b), x[2] * b, x[3] * b), ctx.dtype(0))]


def depth_to_space(xp, a, x):
    b = int(a.get("blocksize", 2))
    n, c, h, w = x.shape
    if str(a.get("mode", "DCR")).upper() == "CRD":
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    else:
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


op("depth_to_space", "DepthToSpace", infer=infer_depth_to_space, flops=r.zero_flops, min_inputs=1, max_inputs=1,
   attrs={"blocksize": 2, "mode": "DCR"}, impl=depth_to_space)


# ---- SpaceToDepth --------------------------------------------------------------------------------
def infer_space_to_depth(ctx: r.Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    b = int(ctx.attrs.get("blocksize", 2))
    if x is None or len(x) != 4 or any(isinstance(d, str) for d in x[1:]):
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType((x[0], x[1] * b * b, x[2] // b, x[3] // b), ctx.dtype(0))]


def space_to_depth(xp, a, x):
    """DepthToSpace's inverse (ops.resample): DCR puts the block offsets before the channels, CRD after."""
    b = int(a.get("blocksize", 2))
    if x.ndim != 4:
        raise Unsupported(f"SpaceToDepth takes a 4-D NCHW tensor, not rank {x.ndim}")
    n, c, h, w = x.shape
    if h % b or w % b:
        raise Unsupported(f"SpaceToDepth blocksize {b} does not divide H={h}, W={w}")
    y = x.reshape(n, c, h // b, b, w // b, b)
    mode = str(a.get("mode", "DCR")).upper()
    if mode not in ("DCR", "CRD"):
        raise Unsupported(f"SpaceToDepth mode must be DCR or CRD, not {mode!r}")
    y = y.transpose(0, 1, 3, 5, 2, 4) if mode == "CRD" else y.transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


op("space_to_depth", "SpaceToDepth", infer=infer_space_to_depth, flops=r.zero_flops, min_inputs=1,
   max_inputs=1, attrs={"blocksize": 2, "mode": "DCR"}, impl=space_to_depth)
