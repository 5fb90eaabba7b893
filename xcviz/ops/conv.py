"""Convolution and transposed convolution (NCHW, ONNX padding rules), with a lax.conv lowering for JAX."""
from __future__ import annotations

import math

import numpy as np

from ..ir import TensorType
from .arrays import present
from .registry import Entries
from .rules import Ctx, ShapeError, fmt, numel
from .windows import spatial_out, window_geometry, window_slices

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


# ---- convolution ---------------------------------------------------------------------------------
def infer_conv(ctx: Ctx) -> list[TensorType]:
    x, w = ctx.shape(0), ctx.shape(1)
    if x is None or w is None:
        return [TensorType(None, ctx.dtype(0))]
    if len(x) < 3 or len(w) != len(x):
        raise ShapeError(f"conv input {fmt(x)} and weight {fmt(w)} must have the same rank >= 3 (NCHW / OIHW)")
    group = int(ctx.attrs.get("group", 1))
    cin, wcin = x[1], w[1]
    if isinstance(cin, int) and isinstance(wcin, int) and cin != wcin * group:
        raise ShapeError(f"conv input has {cin} channels but weight {fmt(w)} with group {group} expects {wcin * group}")
    kernel = list(ctx.attrs.get("kernel_shape") or w[2:])
    if any(isinstance(k, str) for k in kernel):
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType((x[0], w[0], *spatial_out(ctx, kernel)), ctx.dtype(0))]


def conv_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    w = ctx.shape(1)
    n_out = numel(out[0].shape)
    if w is None or n_out is None or numel(w[1:]) is None:
        return None
    return 2 * n_out * math.prod(w[1:])


def conv(xp, a, x, w, b=None):
    """Native conv: one einsum per kernel offset over a padded input (any rank, groups, dilation)."""
    kernel = list(w.shape[2:])
    strides, dil, begin, end, out = window_geometry(a, list(x.shape[2:]), kernel)
    group = int(a.get("group", 1))
    n, c = x.shape[:2]
    m = w.shape[0]
    pad = [(0, 0), (0, 0)] + [(bb, max(ee, 0)) for bb, ee in zip(begin, end)]
    xpad = xp.pad(x, pad)
    xg = xpad.reshape((n, group, c // group) + tuple(xpad.shape[2:]))
    wg = w.reshape((group, m // group, w.shape[1]) + tuple(kernel))
    acc = None
    for off in np.ndindex(*kernel):
        sl = window_slices(off, strides, dil, out)
        patch = xg[(slice(None),) * 3 + sl]
        term = xp.einsum("ngc...,gmc->ngm...", patch, wg[(slice(None),) * 3 + off])
        acc = term if acc is None else acc + term
    y = acc.reshape((n, m) + tuple(out)).astype(x.dtype)
    if present(b):
        y = y + b.reshape((1, -1) + (1,) * len(kernel))
    return y


def conv_jax(xp, a, x, w, b=None):
    from jax import lax

    kernel = list(w.shape[2:])
    strides, dil, begin, end, out = window_geometry(a, list(x.shape[2:]), kernel)
    y = lax.conv_general_dilated(x, w, window_strides=strides, padding=list(zip(begin, end)), rhs_dilation=dil,
                                 feature_group_count=int(a.get("group", 1)), precision=lax.Precision.HIGHEST)
    if present(b):
        y = y + b.reshape((1, -1) + (1,) * len(kernel))
    return y


op("conv2d", "Conv", "Conv2D", "conv", "convolution", infer=infer_conv, flops=conv_flops, min_inputs=2, max_inputs=3,
   attrs={"strides": None, "pads": None, "dilations": None, "group": 1, "auto_pad": "NOTSET"},
   doc="N-d convolution, NCHW input and OIHW weight (ONNX Conv semantics)", impl=conv, jax_impl=conv_jax,
   cost_class="conv", fusion="library")


# ---- transposed convolution: a stride-1 conv over the input dilated by the strides ----------------------
def _transpose_window(a, spatial, kernel):
    """strides, dilations, output_padding and (begin, end) pads of ConvTranspose (ONNX rules incl. auto_pad
    and output_shape, as the ONNX reference computes them)."""
    n = len(spatial)
    s = [int(v) for v in (a.get("strides") or [1] * n)]
    d = [int(v) for v in (a.get("dilations") or [1] * n)]
    op_ = [int(v) for v in (a.get("output_padding") or [0] * n)][:n]
    auto = str(a.get("auto_pad", "NOTSET")).upper()
    if a.get("output_shape") is not None:
        target = [int(v) for v in a["output_shape"]][-n:]
    elif auto in ("SAME_UPPER", "SAME_LOWER"):
        target = [spatial[i] * s[i] for i in range(n)]
    else:
        pads = [int(v) for v in (a.get("pads") or [0] * (2 * n))]
        return s, d, op_, pads[:n], pads[n:]
    total = [s[i] * (spatial[i] - 1) + op_[i] + d[i] * (kernel[i] - 1) + 1 - target[i] for i in range(n)]
    if auto == "SAME_UPPER":
        return s, d, op_, [t // 2 for t in total], [t - t // 2 for t in total]
    if auto == "SAME_LOWER":
        return s, d, op_, [t - t // 2 for t in total], [t // 2 for t in total]
    return s, d, op_, [0] * n, total


def infer_conv_transpose(ctx: Ctx) -> list[TensorType]:
    x, w = ctx.shape(0), ctx.shape(1)
    if x is None or w is None or len(x) < 3 or any(isinstance(k, str) for k in w[1:]):
        return [TensorType(None, ctx.dtype(0))]
    if len(w) != len(x):
        raise ShapeError(f"ConvTranspose input {fmt(x)} and weight {fmt(w)} must have the same rank")
    kernel = [int(k) for k in (ctx.attrs.get("kernel_shape") or w[2:])]
    m = w[1] * int(ctx.attrs.get("group", 1))
    if any(isinstance(v, str) for v in x[2:]):
        return [TensorType((x[0], m, *(f"{v}'" for v in x[2:])), ctx.dtype(0))]
    s, d, op_, b, e = _transpose_window(ctx.attrs, list(x[2:]), kernel)
    out = [s[i] * (x[2 + i] - 1) + op_[i] + d[i] * (kernel[i] - 1) + 1 - b[i] - e[i] for i in range(len(kernel))]
    if any(o <= 0 for o in out):
        raise ShapeError(f"ConvTranspose output size {out} is not positive")
    return [TensorType((x[0], m, *out), ctx.dtype(0))]


def conv_transpose_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    n_in, w = numel(ctx.shape(0)), ctx.shape(1)
    if n_in is None or w is None or numel(w[1:]) is None:
        return None
    return 2 * n_in * math.prod(w[1:])


def _as_forward_conv(xp, a, x, w):
    """The input dilated by the strides and padded by d*(k-1) - pad (+ output_padding at the end; negative
    amounts crop), and the kernel flipped with its in/out channels swapped per group."""
    kernel = list(w.shape[2:])
    nsp = len(kernel)
    s, d, op_, b, e = _transpose_window(a, list(x.shape[2:]), kernel)
    for i in range(nsp):
        if s[i] > 1:  # interleave s-1 zeros after every element along spatial axis i
            ax = 2 + i
            z = xp.zeros(x.shape[:ax + 1] + (s[i] - 1,) + x.shape[ax + 1:], x.dtype)
            y = xp.concatenate([xp.expand_dims(x, ax + 1), z], axis=ax + 1)
            y = y.reshape(x.shape[:ax] + (x.shape[ax] * s[i],) + x.shape[ax + 1:])
            x = y[(slice(None),) * ax + (slice(0, y.shape[ax] - (s[i] - 1)),)]
    lo = [d[i] * (kernel[i] - 1) - b[i] for i in range(nsp)]
    hi = [d[i] * (kernel[i] - 1) - e[i] + op_[i] for i in range(nsp)]
    x = xp.pad(x, [(0, 0), (0, 0)] + [(max(l_, 0), max(h, 0)) for l_, h in zip(lo, hi)])
    x = x[(slice(None), slice(None)) + tuple(slice(max(-l_, 0), x.shape[2 + i] - max(-h, 0))
                                             for i, (l_, h) in enumerate(zip(lo, hi)))]
    g = int(a.get("group", 1))
    c, mg = w.shape[0], w.shape[1]
    wf = w[(slice(None), slice(None)) + (slice(None, None, -1),) * nsp]
    wf = wf.reshape((g, c // g, mg) + tuple(kernel))
    wf = xp.swapaxes(wf, 1, 2).reshape((g * mg, c // g) + tuple(kernel))
    return x, wf, {"dilations": d, "group": g}


def conv_transpose(xp, a, x, w, b=None):
    xd, wf, attrs = _as_forward_conv(xp, a, x, w)
    return conv(xp, attrs, xd, wf, b)


def conv_transpose_jax(xp, a, x, w, b=None):
    xd, wf, attrs = _as_forward_conv(xp, a, x, w)
    return conv_jax(xp, attrs, xd, wf, b)


op("conv_transpose", "ConvTranspose", infer=infer_conv_transpose,
   flops=conv_transpose_flops, min_inputs=2, max_inputs=3,
   attrs={"strides": None, "pads": None, "dilations": None, "group": 1, "auto_pad": "NOTSET",
          "output_padding": None, "output_shape": None},
   doc="N-d transposed convolution, NCHW input and (C, M/group, k...) weight: groups, output_padding, "
       "output_shape, auto_pad, dilations, strides (tf2xla: Conv2DBackpropInput, Conv3DBackpropInputV2)",
   impl=conv_transpose, jax_impl=conv_transpose_jax, cost_class="conv", fusion="library")
