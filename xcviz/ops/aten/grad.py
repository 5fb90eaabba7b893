"""The aten op table's rows for the gradient ops of Core ATen (training graphs): each onto its entry in
pytorch/grad.py with the forward op's geometry as attributes."""
from __future__ import annotations

from . import Adapters, Call, NotMapped, Spec, static_ints

ADAPTED = Adapters()  # this module's aten adapters, in order (aten.adapters.build_adapters puts them in the table)
aten = ADAPTED.aten


def _full(v, n: int, default) -> list[int]:
    v = [int(k) for k in (v or default)]
    return v * (n // len(v))


@aten("convolution_backward", target="conv_backward")
def _conv_backward(c: Call) -> Spec:
    g, x, w, _bias_sizes, stride, padding, dilation, transposed, _out_pad, groups = c.args[:10]
    if transposed:
        raise NotMapped("convolution_backward of a transposed convolution")
    n = (c.rank(1) or 4) - 2
    return Spec("conv_backward", (g, x, w), {"strides": _full(stride, n, [1]), "pads": _full(padding, n, [0]),
                                             "dilations": _full(dilation, n, [1]), "group": int(groups)})


@aten("native_layer_norm_backward", target="layer_norm_backward")
def _layer_norm_backward(c: Call) -> Spec:
    g, x, shape, mean, rstd, w = c.args[:6]
    return Spec("layer_norm_backward", (g, x, mean, rstd, w), {"norm_dims": len(shape)})


@aten("native_group_norm_backward", target="group_norm_backward")
def _group_norm_backward(c: Call) -> Spec:
    g, x, mean, rstd, w = c.args[:5]
    return Spec("group_norm_backward", (g, x, mean, rstd, w), {"groups": int(c.args[8])})


@aten("max_pool2d_with_indices_backward", "max_pool3d_with_indices_backward", target="max_pool_backward")
def _max_pool_backward(c: Call) -> Spec:
    return Spec("max_pool_backward", (c.args[0], c.args[1], c.args[7]))


@aten("avg_pool2d_backward", "avg_pool3d_backward", target="avg_pool_backward")
def _avg_pool_backward(c: Call) -> Spec:
    g, x, kernel, stride, padding, _ceil, include_pad, divisor = c.args[:8]
    n = len(kernel)
    return Spec("avg_pool_backward", (g, x), {"kernel_shape": _full(kernel, n, kernel),
                                              "strides": _full(stride, n, kernel), "pads": _full(padding, n, [0]),
                                              "count_include_pad": int(bool(include_pad)),
                                              "divisor_override": divisor})


aten("_adaptive_avg_pool2d_backward", "_adaptive_avg_pool3d_backward", target="adaptive_avg_pool_backward")(
    lambda c: Spec("adaptive_avg_pool_backward", (c.args[0], c.args[1])))


@aten("embedding_dense_backward", target="embedding_backward")
def _embedding_backward(c: Call) -> Spec:
    g, idx, num, pad, scale = c.args[:5]
    return Spec("embedding_backward", (g, idx), {"num_weights": static_ints([num], "num_weights")[0],
                                                 "padding_idx": int(pad), "scale_grad_by_freq": int(bool(scale))})
