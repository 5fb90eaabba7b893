"""Spatial resampling: resize/upsample (nearest and linear) and depth_to_space."""
from __future__ import annotations

import math

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, ints, lit, present, static
from .registry import op
from .rules import Ctx, norm_axis


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


def _source_coords(ctm, o, n_in, n_out, s):
    """Input coordinate of each output index along one axis (ONNX coordinate_transformation_mode)."""
    if ctm == "half_pixel":
        return (o + 0.5) / s - 0.5
    if ctm == "pytorch_half_pixel":
        return (o + 0.5) / s - 0.5 if n_out > 1 else np.zeros_like(o)
    if ctm == "align_corners":
        # ONNX uses the unrounded resized length (n_in * scale), not the output size
        return o * (n_in - 1) / (n_in * s - 1) if n_in * s > 1 else np.zeros_like(o)
    if ctm == "asymmetric":
        return o / s
    if ctm == "tf_half_pixel_for_nn":
        return (o + 0.5) / s
    raise Unsupported(f"Resize coordinate_transformation_mode {ctm!r}")


def resize(xp, a, x, roi=None, scales=None, sizes=None):
    upsample = a.get("_op_type") in ("Upsample", "upsample")
    if upsample and scales is None and roi is not None:
        scales, roi = roi, None
    mode = str(a.get("mode", "nearest"))
    ctm = str(a.get("coordinate_transformation_mode", "asymmetric" if upsample else "half_pixel"))
    nearest_mode = str(a.get("nearest_mode", "floor" if upsample else "round_prefer_floor"))
    if mode not in ("nearest", "linear", "bilinear"):
        raise Unsupported(f"Resize mode {mode!r} (xcviz implements nearest and linear)")
    if int(a.get("antialias", 0)) or ctm in ("tf_crop_and_resize", "half_pixel_symmetric"):
        raise Unsupported(f"Resize with coordinate_transformation_mode={ctm!r} or antialias")
    if str(a.get("keep_aspect_ratio_policy", "stretch")) != "stretch":
        raise Unsupported("Resize keep_aspect_ratio_policy other than stretch")
    axes = a.get("axes")
    axes = list(range(x.ndim)) if axes is None else [int(v) % x.ndim for v in axes]
    sc = a.get("scales")
    sc = [float(v) for v in sc] if sc is not None else (
        [float(v) for v in static(scales, "Resize scales").reshape(-1)] if present(scales) else None)
    sz = [int(v) for v in ints(sizes, "Resize sizes")] if present(sizes) else None
    full_scale, full_size = [1.0] * x.ndim, list(x.shape)
    for j, ax in enumerate(axes):
        if sz is not None:
            full_size[ax] = sz[j]
            full_scale[ax] = sz[j] / x.shape[ax]
        elif sc is not None:
            full_scale[ax] = sc[j]
            full_size[ax] = int(math.floor(x.shape[ax] * sc[j]))
        else:
            raise Unsupported("Resize needs scales or sizes")
    y = x
    for ax in range(x.ndim):
        n_in, n_out, s = x.shape[ax], full_size[ax], full_scale[ax]
        if n_in == n_out and s == 1.0:
            continue
        c = _source_coords(ctm, np.arange(n_out, dtype=np.float64), n_in, n_out, s)
        if mode == "nearest":
            rounded = {"round_prefer_floor": np.ceil(c - 0.5), "round_prefer_ceil": np.floor(c + 0.5),
                       "floor": np.floor(c), "ceil": np.ceil(c)}.get(nearest_mode)
            if rounded is None:
                raise Unsupported(f"Resize nearest_mode {nearest_mode!r}")
            y = xp.take(y, np.clip(rounded, 0, n_in - 1).astype(np.int64), axis=ax)
        else:
            c = np.clip(c, 0, n_in - 1)
            i0 = np.floor(c).astype(np.int64)
            i1 = np.minimum(i0 + 1, n_in - 1)
            w = (c - i0).astype(x.dtype).reshape((-1,) + (1,) * (x.ndim - 1 - ax))
            y = xp.take(y, i0, axis=ax) * (lit(x, 1) - w) + xp.take(y, i1, axis=ax) * w
    return y.astype(x.dtype)


op("resize", "Resize", "Upsample", "upsample", infer=infer_resize, flops=r.output_flops(4), min_inputs=1,
   max_inputs=4, attrs={"mode": "nearest"}, static_inputs=(1, 2, 3), impl=resize,
   doc="nearest / linear resize by scales or sizes")


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
