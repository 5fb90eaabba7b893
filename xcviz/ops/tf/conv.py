"""TensorFlow's average pooling, transposed convolution and image resizing with TF signatures (`tf.<Op>`).

`AvgPool(value; ksize, strides, padding, data_format)` averages over the window's valid elements only (SAME
padding is not counted), `Conv2DBackpropInput(input_sizes, filter, out_backprop; strides, padding, dilations)`
is Keras's Conv2DTranspose (filter HWIO of the forward conv), `ResizeBilinear`/`ResizeNearestNeighbor(images,
size; align_corners, half_pixel_centers)` are Keras's Resizing/UpSampling2D. The arithmetic is the ONNX
entries' (conv.py, resample.py) with TF's conventions mapped onto their attributes."""
from __future__ import annotations

import numpy as np

from ...ir import TensorType
from .. import conv as onnx_conv
from .. import pooling
from .. import rules as r
from ..arrays import ints
from ..registry import Entries
from ..resample import resize
from .kernels import xla_devices
from .nn import from_nchw, layout_of, onnx_conv_attrs, to_nchw
from .nn import pool_type as _nn_pool_type

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


def _pool_type(ctx) -> list[TensorType]:
    return _nn_pool_type(ctx)


def _avgpool(xp, a, x):
    fmt = layout_of(a)
    attrs = {**onnx_conv_attrs(a, "ksize"), "count_include_pad": 0}
    return from_nchw(xp, pooling.avgpool(xp, attrs, to_nchw(xp, x, fmt)), fmt)


op("tf.AvgPool", devices=xla_devices("AvgPool"), infer=_pool_type, flops=r.output_flops(1), min_inputs=1,
   max_inputs=1, attrs={"ksize": None, "strides": None, "padding": "VALID", "data_format": "NHWC"}, impl=_avgpool,
   cost_class="window",
   doc="TF AvgPool(value; ksize, strides, padding, data_format): SAME padding is not counted")


def _backprop_attrs(a: dict, x_hw: list[int], target: list[int], kernel: list[int]) -> dict:
    """ONNX ConvTranspose attributes that give TF's input gradient: the forward conv's padding, then the end
    padding (or output_padding) that makes the output exactly `input_sizes`."""
    fwd = onnx_conv_attrs(a)
    s, d = fwd["strides"], fwd["dilations"]
    if fwd.get("auto_pad") == "SAME_UPPER":
        total = [max((o - 1) * s[i] + (kernel[i] - 1) * d[i] + 1 - target[i], 0) for i, o in enumerate(x_hw)]
        begin = [t // 2 for t in total]
    elif "pads" in fwd:
        begin = fwd["pads"][:2]
    else:
        begin = [0, 0]
    full = [s[i] * (x_hw[i] - 1) + d[i] * (kernel[i] - 1) + 1 - begin[i] for i in range(2)]
    end = [max(f - t, 0) for f, t in zip(full, target)]
    out_pad = [max(t - f, 0) for f, t in zip(full, target)]
    return {"strides": s, "dilations": d, "pads": begin + end, "output_padding": out_pad}


def _backprop_input(xp, a, sizes, w, dy, conv_t=onnx_conv.conv_transpose):
    fmt = layout_of(a)
    size = ints(sizes, "Conv2DBackpropInput input_sizes")
    target = size[1:3] if fmt == "NHWC" else size[2:4]
    y = to_nchw(xp, dy, fmt)
    attrs = _backprop_attrs(a, list(y.shape[2:]), target, list(w.shape[:2]))
    wt = xp.transpose(w, (3, 2, 0, 1))  # HWIO (I: the forward input's channels) -> (C=O, M=I, H, W)
    return from_nchw(xp, conv_t(xp, attrs, y, wt), fmt)


def _backprop_type(ctx) -> list[TensorType]:
    sizes = ctx.const(0)
    if sizes is None:
        return [TensorType(None, ctx.dtype(2))]
    return [TensorType(tuple(int(v) for v in np.asarray(sizes).reshape(-1)), ctx.dtype(2))]


def _backprop_flops(ctx, out: list[TensorType]) -> int | None:
    n_in, w = r.numel(ctx.shape(2)), ctx.shape(1)
    return None if n_in is None or w is None or r.numel(w) is None else 2 * n_in * int(np.prod(w[:3]))


op("tf.Conv2DBackpropInput", devices=xla_devices("Conv2DBackpropInput"), infer=_backprop_type, flops=_backprop_flops,
   min_inputs=3, max_inputs=3, static_inputs=(0,),
   attrs={"strides": None, "padding": "VALID", "explicit_paddings": None, "dilations": None, "data_format": "NHWC"},
   impl=_backprop_input, jax_impl=lambda xp, a, s, w, dy: _backprop_input(xp, a, s, w, dy, onnx_conv.conv_transpose_jax),
   cost_class="conv", fusion="library", filter_axes=(3, 2, 0, 1),
   doc="TF Conv2DBackpropInput(input_sizes, filter, out_backprop; strides, padding, dilations): Keras "
       "Conv2DTranspose, filter HWIO of the forward convolution")


def _resize(kind: str):
    def impl(xp, a, images, size):
        hw = ints(size, f"{kind} size")
        if a.get("align_corners"):
            ctm, nearest = "align_corners", "round_prefer_ceil"
        elif a.get("half_pixel_centers"):
            ctm, nearest = ("half_pixel" if kind == "ResizeBilinear" else "tf_half_pixel_for_nn"), "floor"
        else:
            ctm, nearest = "asymmetric", "floor"
        attrs = {"mode": "linear" if kind == "ResizeBilinear" else "nearest",
                 "coordinate_transformation_mode": ctm, "nearest_mode": nearest}
        x = images if kind != "ResizeBilinear" or images.dtype.kind == "f" else images.astype(np.float32)
        sizes = np.array([x.shape[0], hw[0], hw[1], x.shape[3]], np.int64)
        return resize(xp, attrs, x, None, None, sizes)
    return impl


def _resize_type(kind: str):
    def infer(ctx) -> list[TensorType]:
        x, hw = ctx.shape(0), ctx.const(1)
        dt = "float32" if kind == "ResizeBilinear" else ctx.dtype(0)
        if x is None or hw is None or len(x) != 4:
            return [TensorType(None, dt)]
        h, w = (int(v) for v in np.asarray(hw).reshape(-1))
        return [TensorType((x[0], h, w, x[3]), dt)]
    return infer


resize_attrs = {"align_corners": False, "half_pixel_centers": False}
op("tf.ResizeBilinear", devices=xla_devices("ResizeBilinear"), infer=_resize_type("ResizeBilinear"),
   flops=r.output_flops(4), min_inputs=2, max_inputs=2, static_inputs=(1,), attrs=resize_attrs,
   impl=_resize("ResizeBilinear"), doc="TF ResizeBilinear(images, size; align_corners, half_pixel_centers), NHWC")
op("tf.ResizeNearestNeighbor", devices=xla_devices("ResizeNearestNeighbor"),
   infer=_resize_type("ResizeNearestNeighbor"), flops=r.output_flops(4), min_inputs=2, max_inputs=2,
   static_inputs=(1,), attrs=resize_attrs, impl=_resize("ResizeNearestNeighbor"),
   doc="TF ResizeNearestNeighbor(images, size; align_corners, half_pixel_centers), NHWC")
