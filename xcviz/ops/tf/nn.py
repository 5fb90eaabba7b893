"""TensorFlow's matmul, convolution, pooling and batch-norm ops with their TF signatures (`tf.<Op>`).

`MatMul(a, b; transpose_a, transpose_b)`, `BatchMatMulV2(x, y; adj_x, adj_y)`, `Conv2D(input, filter;
strides, padding=SAME|VALID|EXPLICIT, explicit_paddings, dilations, data_format)` with an HWIO filter,
`MaxPool(input; ksize, strides, padding, data_format)`, `FusedBatchNormV3`'s six outputs. The arithmetic
is the ONNX entries' (conv.py, linalg.py), reached through NHWC <-> NCHW transposes."""
from __future__ import annotations

import math

import numpy as np

from ...ir import TensorType
from ...ir.symbolic import Sym
from .. import conv as onnx_conv
from .. import pooling
from .. import rules as r
from ..arrays import Unsupported
from ..registry import Entries
from ..rules import Ctx, ShapeError
from ..windows import window_geometry
from .kernels import xla_devices

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


def _mm_shape(a, b, ta: bool, tb: bool):
    if a is None or b is None:
        return None
    if len(a) < 2 or len(b) < 2:
        raise ShapeError("MatMul needs rank >= 2 operands")
    m, k1 = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    k2, n = (b[-1], b[-2]) if tb else (b[-2], b[-1])
    if isinstance(k1, int) and isinstance(k2, int) and k1 != k2:
        raise ShapeError(f"MatMul inner dimensions {k1} and {k2} differ")
    batch = r.broadcast(tuple(a[:-2]), tuple(b[:-2]))
    return (*batch, m, n)


def _matmul_type(ctx: Ctx) -> list[TensorType]:
    ta = bool(ctx.attrs.get("transpose_a") or ctx.attrs.get("adj_x"))
    tb = bool(ctx.attrs.get("transpose_b") or ctx.attrs.get("adj_y"))
    return [TensorType(_mm_shape(ctx.shape(0), ctx.shape(1), ta, tb), ctx.dtype(0))]


def _matmul_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    a, o = ctx.shape(0), out[0].shape if out else None
    n_out = r.numel(o)
    if a is None or n_out is None or len(a) < 2:
        return None
    k = a[-2] if (ctx.attrs.get("transpose_a") or ctx.attrs.get("adj_x")) else a[-1]
    return None if isinstance(k, str) else 2 * n_out * k


def _swap(xp, x):
    return xp.swapaxes(x, -1, -2)


def _matmul(xp, a, x, y):
    if a.get("transpose_a") or a.get("adj_x"):
        x = _swap(xp, x)
    if a.get("transpose_b") or a.get("adj_y"):
        y = _swap(xp, y)
    return xp.matmul(x, y)


mm = dict(infer=_matmul_type, flops=_matmul_flops, min_inputs=2, max_inputs=2, impl=_matmul, cost_class="dot",
          fusion="library")
op("tf.MatMul", **mm, devices=xla_devices("MatMul"), attrs={"transpose_a": False, "transpose_b": False},
   doc="TF MatMul(a, b; transpose_a, transpose_b)")
op("tf.BatchMatMulV2", **mm, devices=xla_devices("BatchMatMulV2"), attrs={"adj_x": False, "adj_y": False},
   doc="TF BatchMatMulV2(x, y; adj_x, adj_y), broadcasting batch dimensions")


def _einsum_type(ctx: Ctx) -> list[TensorType]:
    eq = str(ctx.attrs.get("equation", "")).replace(" ", "")
    if "->" not in eq or "." in eq or any(t.shape is None for t in ctx.inputs):
        return [TensorType(None, ctx.dtype(0))]
    sizes: dict = {}
    for term, t in zip(eq.split("->")[0].split(","), ctx.inputs):
        for c, d in zip(term, t.shape):
            if c not in sizes or sizes[c] == 1:
                sizes[c] = d
    return [TensorType(tuple(sizes[c] for c in eq.split("->")[1]), ctx.dtype(0))]


def _einsum_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    eq = str(ctx.attrs.get("equation", "")).replace(" ", "")
    if "->" not in eq or any(t.shape is None for t in ctx.inputs):
        return None
    sizes = {c: d for term, t in zip(eq.split("->")[0].split(","), ctx.inputs) for c, d in zip(term, t.shape)}
    return None if any(isinstance(d, str) for d in sizes.values()) else 2 * math.prod(sizes.values())


op("tf.Einsum", devices=xla_devices("Einsum"), infer=_einsum_type, flops=_einsum_flops, min_inputs=1,
   attrs={"equation": ""}, impl=lambda xp, a, *xs: xp.einsum(str(a.get("equation", "")).replace(" ", ""), *xs),
   cost_class="dot", fusion="library",
   doc="TF Einsum(inputs...; equation)")


# ---- NHWC convolution and pooling through the ONNX (NCHW) arithmetic ------------------------------------
def layout_of(a) -> str:
    return str(a.get("data_format") or "NHWC")


def _spatial_attr(values, fmt: str, default: int) -> list[int]:
    v = [int(x) for x in (values or [default] * 4)]
    return v[1:3] if fmt == "NHWC" else v[2:4]


def onnx_conv_attrs(a: dict, kernel_key: str | None = None) -> dict:
    fmt = layout_of(a)
    out = {"strides": _spatial_attr(a.get("strides"), fmt, 1), "dilations": _spatial_attr(a.get("dilations"), fmt, 1)}
    pad = str(a.get("padding") or "VALID")
    if pad == "SAME":
        out["auto_pad"] = "SAME_UPPER"  # TF puts the odd padding element at the end, as SAME_UPPER does
    elif pad == "EXPLICIT":
        p = [int(x) for x in a.get("explicit_paddings") or [0] * 8]
        hw = p[2:6] if fmt == "NHWC" else p[4:8]
        out["pads"] = [hw[0], hw[2], hw[1], hw[3]]
    elif pad != "VALID":
        raise ShapeError(f"padding {pad!r} is not SAME, VALID or EXPLICIT")
    if kernel_key:
        out["kernel_shape"] = _spatial_attr(a.get(kernel_key), fmt, 1)
    return out


def to_nchw(xp, x, fmt):
    return xp.transpose(x, (0, 3, 1, 2)) if fmt == "NHWC" else x


def from_nchw(xp, y, fmt):
    return xp.transpose(y, (0, 2, 3, 1)) if fmt == "NHWC" else y


def _spatial(a: dict, hw: list, kernel: list) -> list:
    """window_geometry's output sizes over NHWC/NCHW's spatial sizes `hw`. A symbolic size at stride 1 gives an
    expression of it (SAME: the size; VALID/EXPLICIT: size + pads - (k-1)*dilation); at another stride a name
    of its own (`size'`, as ONNX's rules make): never the unnamed `?`."""
    if all(isinstance(d, int) for d in hw):
        return window_geometry(a, hw, kernel)[4]
    n = len(hw)
    pads = a.get("pads") or [0] * (2 * n)
    out = []
    for i, size in enumerate(hw):
        one = {"strides": [a["strides"][i]], "dilations": [a["dilations"][i]], "pads": [pads[i], pads[i + n]],
               **({"auto_pad": a["auto_pad"]} if "auto_pad" in a else {})}
        if isinstance(size, int):
            out.append(window_geometry(one, [size], [kernel[i]])[4][0])
        elif a["strides"][i] != 1:
            out.append(f"{size}'")
        elif "auto_pad" in a:
            out.append(size)
        else:
            out.append((Sym.of(size) + pads[i] + pads[i + n] - a["dilations"][i] * (kernel[i] - 1)).to_dim())
    return out


def _conv_type(ctx: Ctx) -> list[TensorType]:
    x, w = ctx.shape(0), ctx.shape(1)
    fmt = layout_of(ctx.attrs)
    if x is None or w is None or len(x) != 4 or len(w) != 4 or any(isinstance(d, str) for d in w):
        return [TensorType(None, ctx.dtype(0))]
    a = onnx_conv_attrs(ctx.attrs)
    hw = list(x[1:3] if fmt == "NHWC" else x[2:4])
    out = _spatial(a, hw, list(w[:2]))
    shape = (x[0], *out, w[3]) if fmt == "NHWC" else (x[0], w[3], *out)
    return [TensorType(shape, ctx.dtype(0))]


def _conv_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    w, n_out = ctx.shape(1), r.numel(out[0].shape) if out else None
    return None if w is None or n_out is None or r.numel(w[:3]) is None else 2 * n_out * math.prod(w[:3])


def _grouped(a: dict, x, w) -> dict:
    """TF's Conv2D is grouped when the filter has fewer input channels than the input (Keras Conv2D(groups=...),
    ConvNeXt's depthwise 7x7): groups = in_channels / filter_in_channels."""
    return {**onnx_conv_attrs(a), "group": _groups(a, tuple(x.shape), (w.shape[3], w.shape[2])) or 1}


def _groups(a: dict, x_shape, w_onnx) -> int | None:
    """The group count from the shapes alone (OpDef.group_count; `w_onnx` in ONNX's order, out, in, ...): None
    where a shape is unknown or the channels do not divide."""
    if not x_shape or len(x_shape) != 4 or not w_onnx or len(w_onnx) < 2:
        return None
    c, k = x_shape[3] if layout_of(a) == "NHWC" else x_shape[1], w_onnx[1]
    return int(c) // int(k) if isinstance(c, int) and isinstance(k, int) and k > 0 and c % k == 0 else None


def _conv2d(xp, a, x, w):
    fmt = layout_of(a)
    wt = xp.transpose(w, (3, 2, 0, 1))  # HWIO -> OIHW
    return from_nchw(xp, onnx_conv.conv(xp, _grouped(a, x, w), to_nchw(xp, x, fmt), wt), fmt)


def _conv2d_jax(xp, a, x, w):
    fmt = layout_of(a)
    wt = xp.transpose(w, (3, 2, 0, 1))
    return from_nchw(xp, onnx_conv.conv_jax(xp, _grouped(a, x, w), to_nchw(xp, x, fmt), wt), fmt)


op("tf.Conv2D", devices=xla_devices("Conv2D"), infer=_conv_type, flops=_conv_flops, min_inputs=2, max_inputs=2,
   attrs={"strides": None, "padding": "VALID", "explicit_paddings": None, "dilations": None, "data_format": "NHWC"},
   impl=_conv2d, jax_impl=_conv2d_jax, cost_class="conv", fusion="library", filter_axes=(3, 2, 0, 1), group_count=_groups,
   doc="TF Conv2D(input, filter; strides, padding SAME|VALID|EXPLICIT, dilations, data_format), HWIO filter")


def _depthwise_filter(xp, w):
    """HWCM (in channel c, multiplier m) -> ONNX OIHW with O = c * M + m, I = 1, group = C."""
    h, k, c, m = w.shape
    return xp.transpose(xp.reshape(w, (h, k, 1, c * m)), (3, 2, 0, 1))


def _depthwise(xp, a, x, w, conv=onnx_conv.conv):
    fmt = layout_of(a)
    attrs = {**onnx_conv_attrs(a), "group": int(w.shape[2])}
    return from_nchw(xp, conv(xp, attrs, to_nchw(xp, x, fmt), _depthwise_filter(xp, w)), fmt)


def _depthwise_type(ctx: Ctx) -> list[TensorType]:
    w = ctx.shape(1)
    out = _conv_type(ctx)[0]
    if out.shape is None or w is None or any(isinstance(d, str) for d in w):
        return [out]
    fmt = layout_of(ctx.attrs)
    c = w[2] * w[3]
    return [TensorType((*out.shape[:3], c) if fmt == "NHWC" else (out.shape[0], c, *out.shape[2:]), ctx.dtype(0))]


def _depthwise_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    w, n_out = ctx.shape(1), r.numel(out[0].shape) if out else None
    return None if w is None or n_out is None or r.numel(w[:2]) is None else 2 * n_out * math.prod(w[:2])


op("tf.DepthwiseConv2dNative", devices=xla_devices("DepthwiseConv2dNative"), infer=_depthwise_type,
   flops=_depthwise_flops, min_inputs=2, max_inputs=2,
   attrs={"strides": None, "padding": "VALID", "explicit_paddings": None, "dilations": None, "data_format": "NHWC"},
   impl=_depthwise, jax_impl=lambda xp, a, x, w: _depthwise(xp, a, x, w, onnx_conv.conv_jax),
   cost_class="dwconv", fusion="library", filter_axes=(2, 3, 0, 1),
   doc="TF DepthwiseConv2dNative(input, filter; strides, padding, dilations, data_format), filter [H, W, C, M] "
       "-> C*M channels, channel c*M+m from input channel c")


def pool_type(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    fmt = layout_of(ctx.attrs)
    if x is None or len(x) != 4:
        return [TensorType(None, ctx.dtype(0))]
    a = onnx_conv_attrs(ctx.attrs, "ksize")
    hw = list(x[1:3] if fmt == "NHWC" else x[2:4])
    out = _spatial(a, hw, a["kernel_shape"])
    shape = (x[0], *out, x[3]) if fmt == "NHWC" else (x[0], x[1], *out)
    return [TensorType(shape, ctx.dtype(0))]


def _maxpool(xp, a, x):
    fmt = layout_of(a)
    return from_nchw(xp, pooling.maxpool(xp, onnx_conv_attrs(a, "ksize"), to_nchw(xp, x, fmt)), fmt)


op("tf.MaxPool", devices=xla_devices("MaxPool"), infer=pool_type, flops=r.output_flops(1), min_inputs=1,
   max_inputs=1, attrs={"ksize": None, "strides": None, "padding": "VALID", "data_format": "NHWC"}, impl=_maxpool,
   cost_class="window",
   doc="TF MaxPool(input; ksize, strides, padding, data_format)")


def _bn_type(ctx: Ctx) -> list[TensorType]:
    c = ctx.shape(1)
    side = TensorType(c, ctx.dtype(1) or "float32")
    return [TensorType(ctx.shape(0), ctx.dtype(0)), side, side, side, side, TensorType(None, ctx.dtype(1))]


def _fused_bn(xp, a, x, scale, offset, mean, var):
    if a.get("is_training"):
        raise Unsupported("FusedBatchNormV3 with is_training=true (batch statistics)")
    shape = (1, -1, 1, 1) if layout_of(a) == "NCHW" else (1, 1, 1, -1)
    eps = np.asarray(a.get("epsilon", 1e-4), dtype=np.float32)
    inv = scale / xp.sqrt(var + eps)
    y = (x - mean.reshape(shape)) * inv.reshape(shape) + offset.reshape(shape)
    return y.astype(x.dtype), mean, var, mean, var, xp.zeros((0,), dtype=mean.dtype)


op("tf.FusedBatchNormV3", devices=xla_devices("FusedBatchNormV3"), infer=_bn_type, flops=r.input_flops(4),
   num_outputs=6, min_inputs=5, max_inputs=5,
   attrs={"epsilon": 1e-4, "is_training": True, "data_format": "NHWC", "exponential_avg_factor": 1.0},
   impl=_fused_bn, doc="TF FusedBatchNormV3(x, scale, offset, mean, variance) -> y, batch_mean, batch_variance, "
                       "reserve_space_1..3 (inference form: is_training=false)")
