"""ONNX DeformConv: a 2-D convolution whose kernel taps sample the input bilinearly at learned offsets."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from .arrays import Unsupported, present
from .registry import Entries
from .rules import Ctx, numel

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


# ---- deform_conv: each kernel tap samples the input bilinearly at its offset position (zeros outside) ----------
def _ints(a, key: str, n: int, default: int) -> list[int]:
    v = a.get(key)
    return [default] * n if v is None else [int(x) for x in v]


def _deform_geometry(a, x_shape, w_shape):
    """(kernel, strides, dilations, pads, output size) of a 2-D DeformConv from its attributes and shapes."""
    kernel = _ints(a, "kernel_shape", 2, 0) if a.get("kernel_shape") is not None else [int(d) for d in w_shape[2:]]
    strides, dil = _ints(a, "strides", 2, 1), _ints(a, "dilations", 2, 1)
    pads = _ints(a, "pads", 4, 0)
    out = [(x_shape[2 + d] + pads[d] + pads[d + 2] - ((kernel[d] - 1) * dil[d] + 1)) // strides[d] + 1
           for d in range(2)]
    return kernel, strides, dil, pads, out


def deform_conv(xp, a, x, w, offset, b=None, mask=None):
    if x.ndim != 4 or w.ndim != 4:
        raise Unsupported(f"DeformConv of rank {x.ndim}: only 2-D (N, C, H, W) is implemented",
                          hint="onnxruntime and ONNX's reference implement the 2-D case only")
    n, c, h, wd = x.shape
    group, og = int(a.get("group", 1)), int(a.get("offset_group", 1))
    (kh, kw), (sh, sw), (dh, dw), pads, (oh, ow) = _deform_geometry(a, x.shape, w.shape)
    oc = w.shape[0]
    if c != w.shape[1] * group or oc % group or c % og or (kh, kw) != tuple(w.shape[2:]):
        raise Unsupported(f"DeformConv input {x.shape}, weight {w.shape}, group {group}, offset_group {og}")
    if tuple(offset.shape) != (n, og * kh * kw * 2, oh, ow):
        raise Unsupported(f"DeformConv offset {offset.shape}: want {(n, og * kh * kw * 2, oh, ow)}")
    if present(mask) and tuple(mask.shape) != (n, og * kh * kw, oh, ow):
        raise Unsupported(f"DeformConv mask {mask.shape}: want {(n, og * kh * kw, oh, ow)}")
    dt = x.dtype
    off = offset.reshape((n, og, kh, kw, 2, oh, ow)).astype(dt)
    # the tap (a, b) of output (i, j) sits at (i*sh - pad_top + a*dh, j*sw - pad_left + b*dw) plus its offset
    base_y = (np.arange(oh) * sh - pads[0])[None, :, None] + (np.arange(kh) * dh)[:, None, None]  # (kh, oh, 1)
    base_x = (np.arange(ow) * sw - pads[1])[None, None, :] + (np.arange(kw) * dw)[:, None, None]  # (kw, 1, ow)
    py = off[:, :, :, :, 0] + base_y[None, None, :, None].astype(dt)  # (n, og, kh, kw, oh, ow)
    px = off[:, :, :, :, 1] + base_x[None, None, None, :].astype(dt)
    y0, x0 = xp.floor(py), xp.floor(px)
    fy, fx = py - y0, px - x0
    y0, x0 = y0.astype(np.int64), x0.astype(np.int64)
    cpg = c // og
    flat = x.reshape((n, og, cpg, h * wd))
    cols = None
    for yi, wy in ((y0, 1 - fy), (y0 + 1, fy)):
        for xi, wx in ((x0, 1 - fx), (x0 + 1, fx)):
            ok = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < wd)  # taps off the image read zero
            idx = (xp.clip(yi, 0, h - 1) * wd + xp.clip(xi, 0, wd - 1)).reshape((n, og, 1, -1))
            v = xp.take_along_axis(flat, xp.broadcast_to(idx, (n, og, cpg, idx.shape[-1])), axis=3)
            wt = xp.where(ok, wy * wx, xp.zeros((), dt)).reshape((n, og, 1, -1))
            cols = v * wt if cols is None else cols + v * wt
    if present(mask):
        cols = cols * mask.astype(dt).reshape((n, og, 1, -1))
    cols = cols.reshape((n, group, c // group, kh, kw, oh, ow))
    wg = w.reshape((group, oc // group, c // group, kh, kw))
    y = xp.einsum("ngcabij,gocab->ngoij", cols, wg.astype(dt)).reshape((n, oc, oh, ow))
    if present(b):
        y = y + b.astype(dt).reshape((1, oc, 1, 1))
    return y.astype(dt)


def infer_deform_conv(ctx: Ctx) -> list[TensorType]:
    x, w, off = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    if x is None or w is None or len(x) != 4 or len(w) != 4:
        return [TensorType(None, ctx.dtype(0))]
    spatial = tuple(off[2:]) if off is not None and len(off) == 4 else None
    if spatial is None and all(isinstance(d, int) for d in (*x[2:], *w[2:])):
        spatial = tuple(_deform_geometry(ctx.attrs, x, w)[4])
    return [TensorType(None if spatial is None else (x[0], w[0], *spatial), ctx.dtype(0))]


def deform_conv_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    y, w = (out[0].shape if out else None), ctx.shape(1)
    if numel(y) is None or numel(w) is None:
        return None
    taps = numel(w[2:])
    # per output: the grouped multiply-adds, plus 4 bilinear taps (weights, products) per sampled input value
    return 2 * numel(y) * numel(w[1:]) + 12 * y[0] * numel(y[2:]) * taps * w[1] * int(ctx.attrs.get("group", 1) or 1)


op("deform_conv", "DeformConv", infer=infer_deform_conv, flops=deform_conv_flops, min_inputs=3, max_inputs=5,
   attrs={"dilations": None, "group": 1, "kernel_shape": None, "offset_group": 1, "pads": None, "strides": None},
   impl=deform_conv, doc="2-D deformable convolution: bilinear taps at learned offsets, optional mask and bias")
