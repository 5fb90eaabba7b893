"""Windowed ops: convolution and pooling (NCHW, ONNX padding rules), with a lax.conv lowering for JAX."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..ir import Dim, TensorType
from . import rules as r
from .arrays import lit, present
from .registry import MEAN, REDUCTION, STRIDED_WINDOW, Entries, plus_groups
from .rules import Ctx, ShapeError, fmt, numel

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


# ---- window arithmetic: once over symbolic shapes (rules), once over concrete ones (implementations)
def _out_size(size: Dim, k: int, s: int, pad: int, d: int, ceil: bool = False, pad_begin: int = 0) -> Dim:
    if isinstance(size, str):
        return f"{size}'"  # derived symbolic dim
    eff = d * (k - 1) + 1
    num = size + pad - eff
    if num < 0:
        raise ShapeError(f"window {k} (dilation {d}) does not fit input size {size} with padding {pad}")
    out = (math.ceil(num / s) if ceil else num // s) + 1
    if ceil and (out - 1) * s >= size + pad_begin:
        out -= 1  # ONNX: a last window that would start in the padding is dropped
    return out


def _spatial(ctx: Ctx, kernel: Sequence[int]) -> list[Dim]:
    x = ctx.shape(0)
    assert x is not None
    nsp = len(x) - 2
    strides = list(ctx.attrs.get("strides") or [1] * nsp)
    dil = list(ctx.attrs.get("dilations") or [1] * nsp)
    pads = list(ctx.attrs.get("pads") or [0] * (2 * nsp))
    auto = str(ctx.attrs.get("auto_pad", "NOTSET")).upper()
    if len(kernel) != nsp or len(strides) != nsp or len(pads) != 2 * nsp:
        raise ShapeError(f"kernel/strides/pads do not match {nsp} spatial dims of input {fmt(x)}")
    out: list[Dim] = []
    for i in range(nsp):
        size = x[2 + i]
        if auto in ("SAME_UPPER", "SAME_LOWER", "SAME"):
            out.append(f"{size}'" if isinstance(size, str) else -(-size // strides[i]))
        else:
            total = 0 if auto == "VALID" else pads[i] + pads[i + nsp]
            out.append(_out_size(size, kernel[i], strides[i], total, dil[i], bool(ctx.attrs.get("ceil_mode")),
                                 0 if auto == "VALID" else pads[i]))
    return out


def window_geometry(a, spatial, kernel, ceil=False):
    """strides, dilations, (begin, end) pads per spatial dim, and output sizes (ONNX rules incl. auto_pad)."""
    n = len(spatial)
    strides = [int(s) for s in (a.get("strides") or [1] * n)]
    dil = [int(d) for d in (a.get("dilations") or [1] * n)]
    pads = [int(p) for p in (a.get("pads") or [0] * (2 * n))]
    auto = str(a.get("auto_pad", "NOTSET")).upper()
    begin, end, out = [], [], []
    for i in range(n):
        eff = dil[i] * (kernel[i] - 1) + 1
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-spatial[i] // strides[i])
            total = max((o - 1) * strides[i] + eff - spatial[i], 0)
            b = total // 2 if auto == "SAME_UPPER" else total - total // 2
            begin.append(b)
            end.append(total - b)
        elif auto == "VALID":
            begin.append(0)
            end.append(0)
        else:
            begin.append(pads[i])
            end.append(pads[i + n])
        num = spatial[i] + begin[i] + end[i] - eff
        o = (math.ceil(num / strides[i]) if ceil else num // strides[i]) + 1
        if ceil and (o - 1) * strides[i] >= spatial[i] + begin[i]:
            o -= 1  # the last window would start in the padding
        out.append(o)
    return strides, dil, begin, end, out


def window_slices(off, strides, dil, out):
    return tuple(slice(off[i] * dil[i], off[i] * dil[i] + strides[i] * (out[i] - 1) + 1, strides[i])
                 for i in range(len(off)))


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
    return [TensorType((x[0], w[0], *_spatial(ctx, kernel)), ctx.dtype(0))]


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


# ---- pooling -------------------------------------------------------------------------------------
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
    shape = (x[0], x[1], *_spatial(c2, kernel))
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
