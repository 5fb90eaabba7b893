"""Sampling ops: affine_grid, grid_sample (N-D; nearest, linear, cubic; zeros, border, reflection) and roi_align."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..ir import TensorType
from .arrays import Unsupported, ints, is_np
from .registry import Entries
from .rules import Ctx, numel

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


# ---- affine_grid: theta (N, k, k+1) applied to the normalised [-1, 1] grid of size (N, C, *S) ----------------
def _axis_coords(n: int, align: bool) -> np.ndarray:
    if align:
        return np.linspace(-1.0, 1.0, n)  # one point: -1, as ONNX's arange(-1, 1, 2/(n-1))
    return (np.arange(n) * 2.0 + 1.0) / n - 1.0


def infer_affine_grid(ctx: Ctx) -> list[TensorType]:
    size = ctx.const(1)
    if size is None:
        return [TensorType(None, ctx.dtype(0))]
    size = [int(v) for v in np.asarray(size).reshape(-1)]
    return [TensorType((size[0], *size[2:], len(size) - 2), ctx.dtype(0))]


def affine_grid(xp, a, theta, size):
    size = ints(size, "AffineGrid size")
    spatial = size[2:]
    k = len(spatial)
    if k not in (2, 3) or theta.shape[1:] != (k, k + 1) or theta.shape[0] != size[0]:
        raise Unsupported(f"AffineGrid theta {theta.shape} for size {size}: want (N, 2, 3) or (N, 3, 4)")
    align = bool(a.get("align_corners", 0))
    axes = np.meshgrid(*(_axis_coords(s, align) for s in spatial), indexing="ij")
    # homogeneous points (x, y[, z], 1): the last spatial axis is x
    base = np.stack([*axes[::-1], np.ones(spatial)], axis=-1).reshape(-1, k + 1)
    grid = xp.einsum("nij,pj->npi", theta, base.astype(theta.dtype))
    return grid.reshape((size[0], *spatial, k))


def affine_grid_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    n = numel(out[0].shape) if out else None
    return None if n is None else 2 * n * ((ctx.shape(0) or (0, 0, 4))[-1])


op("affine_grid", "AffineGrid", flops=affine_grid_flops, infer=infer_affine_grid, min_inputs=2, max_inputs=2,
   static_inputs=(1,), attrs={"align_corners": 0}, impl=affine_grid)


# ---- grid_sample ----------------------------------------------------------------------------------------------
MODES = {"bilinear": "linear", "linear": "linear", "nearest": "nearest", "bicubic": "cubic", "cubic": "cubic"}
PADDINGS = ("zeros", "border", "reflection")


def _reflect(xp, x, lo: float, hi: float):
    """Fold x into [lo, hi] by mirroring at the nearer border (ONNX's _gs_reflect, elementwise)."""
    rng = hi - lo
    if rng <= 0:  # a one-pixel axis with aligned corners: every point folds onto it
        return xp.zeros_like(x) + lo
    below, above = lo - x, x - hi
    d = xp.where(x < lo, below, above)
    n = xp.floor(d / rng)
    r = d - n * rng
    even = (n % 2) == 0
    low = xp.where(even, lo + r, hi - r)
    high = xp.where(even, hi - r, lo + r)
    return xp.where(x < lo, low, xp.where(x > hi, high, x))


def _cubic(xp, t):
    """Keys' cubic convolution weights (alpha -0.75) of the taps at -1, 0, 1, 2 for a fraction t."""
    al = -0.75
    def far(u):
        return ((al * u - 5 * al) * u + 8 * al) * u - 4 * al
    def near(u):
        return ((al + 2) * u - (al + 3)) * u * u + 1
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(xp, a, x, grid):
    mode, pad = MODES.get(str(a.get("mode", "linear"))), str(a.get("padding_mode", "zeros"))
    if mode is None or pad not in PADDINGS:
        raise Unsupported(f"GridSample mode {a.get('mode')!r} / padding_mode {pad!r}")
    if mode == "cubic" and pad == "border":
        # off-image points: ONNX's reference clamps the point, onnxruntime (as PyTorch) clamps each tap
        raise Unsupported("GridSample cubic mode with border padding: ONNX's reference and onnxruntime differ "
                          "off the image", hint="use zeros or reflection padding, or linear mode")
    align = bool(a.get("align_corners", 0))
    sizes = x.shape[2:]
    k = len(sizes)
    if grid.ndim != k + 2 or grid.shape[-1] != k or grid.shape[0] != x.shape[0]:
        raise Unsupported(f"GridSample grid {grid.shape} does not match input {x.shape}")
    bounds = [(0.0, s - 1.0) if align else (-0.5, s - 0.5) for s in sizes]
    coords = []
    for d, s in enumerate(sizes):
        g = grid[..., k - 1 - d]  # the grid lists x (the last axis) first
        c = (g + 1) / 2 * (s - 1) if align else ((g + 1) * s - 1) / 2
        if mode == "nearest":
            c = xp.rint(c)
        if pad == "border":
            c = xp.clip(c, 0, s - 1)
        elif pad == "reflection":
            c = _reflect(xp, c, *bounds[d])
        coords.append(c)
    xt = xp.moveaxis(x, 1, -1)  # (N, *S, C): one gather per tap picks every channel
    nidx = xp.arange(x.shape[0]).reshape((-1,) + (1,) * (grid.ndim - 2))

    def fetch(idx):
        keep = None
        fixed = []
        for d, (i, s) in enumerate(zip(idx, sizes)):
            if pad == "zeros":
                ok = (i >= 0) & (i < s)
                keep = ok if keep is None else keep & ok
            elif pad == "reflection":
                i = xp.trunc(_reflect(xp, i.astype(coords[d].dtype), *bounds[d])).astype(np.int64)
            fixed.append(xp.clip(i, 0, s - 1))
        v = xt[(nidx, *fixed)]
        return v if keep is None else xp.where(keep[..., None], v, xp.zeros((), dtype=v.dtype))

    if mode == "nearest":
        return xp.moveaxis(fetch([xp.trunc(c).astype(np.int64) for c in coords]), -1, 1)
    taps = []  # per dim: [(index, weight), ...]
    for c in coords:
        c0 = xp.floor(c)
        t = (c - c0).astype(x.dtype)
        i0 = c0.astype(np.int64)
        if mode == "linear":
            taps.append([(i0, 1 - t), (i0 + 1, t)])
        else:
            taps.append(list(zip((i0 - 1, i0, i0 + 1, i0 + 2), _cubic(xp, t))))
    out = None
    for combo in itertools.product(*taps):
        w = math.prod((wt for _, wt in combo[1:]), start=combo[0][1])
        term = fetch([i for i, _ in combo]) * w[..., None]
        out = term if out is None else out + term
    return xp.moveaxis(out, -1, 1).astype(x.dtype)


def infer_grid_sample(ctx: Ctx) -> list[TensorType]:
    x, g = ctx.shape(0), ctx.shape(1)
    if x is None or g is None:
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType((x[0], x[1], *g[1:-1]), ctx.dtype(0))]


def grid_sample_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    n = numel(out[0].shape) if out else None
    k = len(ctx.shape(0) or ()) - 2
    taps = {"nearest": 1, "cubic": 4 ** k}.get(MODES.get(str(ctx.attrs.get("mode", "linear")), ""), 2 ** k)
    return None if n is None else 2 * n * taps


op("grid_sample", "GridSample", flops=grid_sample_flops, infer=infer_grid_sample, min_inputs=2, max_inputs=2,
   attrs={"mode": "linear", "padding_mode": "zeros", "align_corners": 0}, impl=grid_sample)


# ---- roi_align: bilinear samples averaged (or maxed) over each bin of each region of interest ------------------
def _bilinear_axis(xp, c, size: int):
    """Per coordinate: in-range mask, low/high index and their weights (ONNX RoiAlign's pre-calc, one axis)."""
    ok = (c >= -1.0) & (c <= size)
    c = xp.maximum(c, 0)
    low = xp.trunc(c).astype(np.int64)
    edge = low >= size - 1
    low = xp.where(edge, size - 1, low)
    high = xp.where(edge, size - 1, low + 1)
    c = xp.where(edge, low.astype(c.dtype), c)
    frac = c - low.astype(c.dtype)
    return ok, low, high, 1 - frac, frac


def _roi_pool(xp, x, boxes, batch, gh: int, gw: int, a):
    """(R, C, PH, PW) for R regions sampled on a gh x gw grid per bin."""
    ph_n, pw_n = int(a.get("output_height", 1)), int(a.get("output_width", 1))
    scale = float(a.get("spatial_scale", 1.0))
    half = str(a.get("coordinate_transformation_mode", "half_pixel")) == "half_pixel"
    h, w = x.shape[2], x.shape[3]
    off = 0.5 if half else 0.0
    sx, sy = boxes[:, 0] * scale - off, boxes[:, 1] * scale - off
    rw, rh = boxes[:, 2] * scale - off - sx, boxes[:, 3] * scale - off - sy
    if not half:
        rw, rh = xp.maximum(rw, 1.0), xp.maximum(rh, 1.0)
    bh, bw = (rh / ph_n)[:, None, None], (rw / pw_n)[:, None, None]
    dt = boxes.dtype
    ys = sy[:, None, None] + np.arange(ph_n, dtype=dt)[None, :, None] * bh \
        + (np.arange(gh, dtype=dt)[None, None, :] + 0.5) * bh / gh
    xs = sx[:, None, None] + np.arange(pw_n, dtype=dt)[None, :, None] * bw \
        + (np.arange(gw, dtype=dt)[None, None, :] + 0.5) * bw / gw
    oky, ylo, yhi, hy, ly = (v[:, :, :, None, None] for v in _bilinear_axis(xp, ys, h))
    okx, xlo, xhi, hx, lx = (v[:, None, None, :, :] for v in _bilinear_axis(xp, xs, w))
    keep = (oky & okx).astype(x.dtype)
    b = batch.astype(np.int64).reshape(-1, 1, 1, 1, 1)
    xt = xp.moveaxis(x, 1, -1)  # (N, H, W, C)
    terms = [(xt[b, yi, xi] * (wy * wx * keep).astype(x.dtype)[..., None])
             for yi, wy in ((ylo, hy), (yhi, ly)) for xi, wx in ((xlo, hx), (xhi, lx))]
    # terms: 4 x (R, PH, gh, PW, gw, C)
    if str(a.get("mode", "avg")) == "max":
        val = xp.maximum(xp.maximum(terms[0], terms[1]), xp.maximum(terms[2], terms[3]))
        out = val.max(axis=(2, 4))
    else:
        out = (terms[0] + terms[1] + terms[2] + terms[3]).sum(axis=(2, 4)) / max(gh * gw, 1)
    return xp.moveaxis(out, -1, 1).astype(x.dtype)


def roi_align(xp, a, x, rois, batch):
    if str(a.get("mode", "avg")) not in ("avg", "max") or str(a.get(
            "coordinate_transformation_mode", "half_pixel")) not in ("half_pixel", "output_half_pixel"):
        raise Unsupported(f"RoiAlign mode {a.get('mode')!r} / coordinate_transformation_mode "
                          f"{a.get('coordinate_transformation_mode')!r}")
    if x.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 4:
        raise Unsupported(f"RoiAlign input {x.shape} / rois {rois.shape}: want (N, C, H, W) and (R, 4)")
    ph_n, pw_n = int(a.get("output_height", 1)), int(a.get("output_width", 1))
    ratio = int(a.get("sampling_ratio", 0))
    if ratio > 0:
        return _roi_pool(xp, x, rois, batch, ratio, ratio, a)
    if not is_np(xp):
        raise Unsupported("RoiAlign sampling_ratio 0 takes each region's sample count from its size "
                          "(data-dependent)", hint="set sampling_ratio > 0 to compile it")
    rois, batch = np.asarray(rois), np.asarray(batch)
    if batch.size and (batch.min() < 0 or batch.max() >= x.shape[0]):
        raise Unsupported(f"RoiAlign batch index outside [0, {x.shape[0]})")
    out = np.zeros((rois.shape[0], x.shape[1], ph_n, pw_n), dtype=x.dtype)
    half = str(a.get("coordinate_transformation_mode", "half_pixel")) == "half_pixel"
    scale = np.asarray(float(a.get("spatial_scale", 1.0)), dtype=rois.dtype)
    for i in range(rois.shape[0]):
        rw, rh = (rois[i, 2] - rois[i, 0]) * scale, (rois[i, 3] - rois[i, 1]) * scale
        if not half:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh, gw = int(np.ceil(rh / ph_n)), int(np.ceil(rw / pw_n))
        if gh > 0 and gw > 0:
            out[i] = _roi_pool(np, x, rois[i:i + 1], batch[i:i + 1], gh, gw, a)[0]
    return out


def infer_roi_align(ctx: Ctx) -> list[TensorType]:
    x, rois = ctx.shape(0), ctx.shape(1)
    if x is None or rois is None:
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType((rois[0], x[1], int(ctx.attrs.get("output_height", 1)),
                        int(ctx.attrs.get("output_width", 1))), ctx.dtype(0))]


def roi_align_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    n = numel(out[0].shape) if out else None
    ratio = int(ctx.attrs.get("sampling_ratio", 0)) or 2  # adaptive: about 2 x 2 samples a bin for typical boxes
    return None if n is None else 8 * n * ratio * ratio


op("roi_align", "RoiAlign", flops=roi_align_flops, infer=infer_roi_align, min_inputs=3, max_inputs=3,
   attrs={"mode": "avg", "output_height": 1, "output_width": 1, "sampling_ratio": 0, "spatial_scale": 1.0,
          "coordinate_transformation_mode": "half_pixel"}, impl=roi_align)
