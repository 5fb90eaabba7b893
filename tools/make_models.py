"""Write the example ONNX models in graphs/ with onnx.helper (no torch needed): python tools/make_models.py

Five small real-architecture models with seeded random weights, each well under 2 MB:
  resnet_mini.onnx        ResNet-style CNN: conv-BN-ReLU stem, residual blocks, strided shortcut, GAP, Gemm
  mobilenet_mini.onnx     MobileNet-style: depthwise 3x3 (group = channels) + pointwise 1x1, BN, ReLU6 (Clip)
  transformer_encoder.onnx  2-layer pre-LN transformer encoder, dynamic batch and sequence (B, S)
  unet_mini.onnx          UNet-style encoder/decoder: MaxPool down, Resize (nearest) up, Concat skips
  detector_mini.onnx      single-shot detector head + NonMaxSuppression (falls back: data-dependent shape)
`transformer(layers, check_numerics=True)` also builds the deep variant the compile-cache test uses.
"""
from __future__ import annotations

import os
import sys

import numpy as np

OPSET = 17


class Builder:
    def __init__(self, name: str, seed: int = 0):
        self.name, self.nodes, self.inits, self.rng, self.n = name, [], [], np.random.default_rng(seed), 0

    def w(self, shape, scale=None, value=None, dtype=np.float32) -> str:
        from onnx import numpy_helper

        self.n += 1
        name = f"{self.name}_w{self.n}"
        if value is None:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
            value = self.rng.standard_normal(shape) * (scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1)))
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, op_type: str, inputs, n_out: int = 1, **attrs):
        from onnx import helper

        self.n += 1
        outs = [f"{op_type.lower()}_{self.n}" + (f"_{k}" if k else "") for k in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=f"{op_type}_{self.n}", **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, inputs, outputs):
        from onnx import helper

        graph = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="xcviz-make_models")
        m.ir_version = 8
        return m

    # building blocks ------------------------------------------------------------------------------
    def conv(self, x, cin, cout, k=3, stride=1, group=1, bias=True):
        ins = [x, self.w((cout, cin // group, k, k))] + ([self.w((cout,), scale=0.1)] if bias else [])
        return self.op("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=group)

    def bn(self, x, c):
        return self.op("BatchNormalization", [x, self.w((c,), value=1 + 0.1 * self.rng.standard_normal(c)),
                                              self.w((c,), scale=0.1), self.w((c,), scale=0.1),
                                              self.w((c,), value=0.5 + self.rng.random(c))], epsilon=1e-5)

    def linear(self, x, din, dout):
        return self.op("Add", [self.op("MatMul", [x, self.w((din, dout))]), self.w((dout,), scale=0.02)])


def vi(name, shape, elem=None):
    from onnx import TensorProto, helper

    return helper.make_tensor_value_info(name, elem or TensorProto.FLOAT, shape)


def resnet_mini():
    b = Builder("resnet_mini", 1)
    h = b.op("Relu", [b.bn(b.conv("x", 3, 16), 16)])
    for _ in range(2):
        y = b.op("Relu", [b.bn(b.conv(h, 16, 16), 16)])
        h = b.op("Relu", [b.op("Add", [b.bn(b.conv(y, 16, 16), 16), h])])
    y = b.op("Relu", [b.bn(b.conv(h, 16, 32, stride=2), 32)])
    y = b.bn(b.conv(y, 32, 32), 32)
    short = b.bn(b.conv(h, 16, 32, k=1, stride=2), 32)
    h = b.op("Relu", [b.op("Add", [y, short])])
    h = b.op("Flatten", [b.op("GlobalAveragePool", [h])], axis=1)
    b.nodes.append(__import__("onnx").helper.make_node("Gemm", [h, b.w((10, 32)), b.w((10,), scale=0.1)], ["logits"],
                                                       name="fc", transB=1))
    return b.model([vi("x", ["N", 3, 32, 32])], [vi("logits", ["N", 10])])


def mobilenet_mini():
    b = Builder("mobilenet_mini", 2)
    lo, hi = b.w((), value=0.0), b.w((), value=6.0)

    def relu6(x):
        return b.op("Clip", [x, lo, hi])

    h = relu6(b.bn(b.conv("x", 3, 16, stride=2, bias=False), 16))
    for cin, cout, stride in ((16, 32, 1), (32, 64, 2), (64, 64, 1)):
        h = relu6(b.bn(b.conv(h, cin, cin, k=3, stride=stride, group=cin, bias=False), cin))   # depthwise
        h = relu6(b.bn(b.conv(h, cin, cout, k=1, bias=False), cout))                           # pointwise
    h = b.op("Flatten", [b.op("GlobalAveragePool", [h])], axis=1)
    b.nodes.append(__import__("onnx").helper.make_node("Gemm", [h, b.w((64, 10)), b.w((10,), scale=0.1)], ["logits"],
                                                       name="classifier"))
    return b.model([vi("x", ["N", 3, 32, 32])], [vi("logits", ["N", 10])])


def transformer(layers: int = 2, d: int = 64, heads: int = 4, check_numerics: bool = False, name: str = "transformer_encoder"):
    b = Builder(name, 3)
    dh = d // heads
    split = b.w((4,), value=[0, 0, heads, dh], dtype=np.int64)
    merge = b.w((3,), value=[0, 0, d], dtype=np.int64)
    scale = b.w((), value=1.0 / np.sqrt(dh))
    half, one, rs2 = b.w((), value=0.5), b.w((), value=1.0), b.w((), value=1 / np.sqrt(2.0))
    h = "x"
    for _ in range(layers):
        ln = b.op("LayerNormalization", [h, b.w((d,), value=np.ones(d)), b.w((d,), scale=0.02)], axis=-1, epsilon=1e-5)
        q, k, v = (b.op("Reshape", [b.linear(ln, d, d), split]) for _ in range(3))
        q = b.op("Transpose", [q], perm=[0, 2, 1, 3])
        k = b.op("Transpose", [k], perm=[0, 2, 3, 1])
        v = b.op("Transpose", [v], perm=[0, 2, 1, 3])
        p = b.op("Softmax", [b.op("Mul", [b.op("MatMul", [q, k]), scale])], axis=-1)
        ctx = b.op("Reshape", [b.op("Transpose", [b.op("MatMul", [p, v])], perm=[0, 2, 1, 3]), merge])
        h = b.op("Add", [h, b.linear(ctx, d, d)])
        ln = b.op("LayerNormalization", [h, b.w((d,), value=np.ones(d)), b.w((d,), scale=0.02)], axis=-1, epsilon=1e-5)
        f = b.linear(ln, d, 4 * d)
        f = b.op("Mul", [b.op("Mul", [f, half]), b.op("Add", [b.op("Erf", [b.op("Mul", [f, rs2])]), one])])  # GELU
        h = b.op("Add", [h, b.linear(f, 4 * d, d)])
        if check_numerics:  # a host-side check after each layer (as TF models often have): splits the clusters
            h = b.op("CheckNumerics", [h])
    from onnx import helper

    b.nodes.append(helper.make_node("LayerNormalization", [h, b.w((d,), value=np.ones(d)), b.w((d,), scale=0.02)],
                                    ["y"], name="final_norm", axis=-1, epsilon=1e-5))
    return b.model([vi("x", ["B", "S", d])], [vi("y", ["B", "S", d])])


def unet_mini():
    b = Builder("unet_mini", 4)
    up = b.w((4,), value=[1, 1, 2, 2])
    e1 = b.op("Relu", [b.conv("x", 3, 8)])                                   # 32x32
    e2 = b.op("Relu", [b.conv(b.op("MaxPool", [e1], kernel_shape=[2, 2], strides=[2, 2]), 8, 16)])    # 16x16
    mid = b.op("Relu", [b.conv(b.op("MaxPool", [e2], kernel_shape=[2, 2], strides=[2, 2]), 16, 16)])  # 8x8
    d2 = b.op("Concat", [b.op("Resize", [mid, "", up], mode="nearest"), e2], axis=1)                  # 16x16, 32ch
    d2 = b.op("Relu", [b.conv(d2, 32, 8)])
    d1 = b.op("Concat", [b.op("Resize", [d2, "", up], mode="nearest"), e1], axis=1)                   # 32x32, 16ch
    d1 = b.op("Relu", [b.conv(d1, 16, 8)])
    from onnx import helper

    b.nodes.append(helper.make_node("Sigmoid", [b.conv(d1, 8, 1, k=1)], ["mask"], name="mask"))
    return b.model([vi("x", ["N", 3, 32, 32])], [vi("mask", ["N", 1, 32, 32])])


def detector_mini():
    from onnx import TensorProto, helper

    b = Builder("detector_mini", 5)
    h = b.op("Relu", [b.conv("x", 3, 16, stride=2)])
    h = b.op("Relu", [b.conv(h, 16, 16, stride=2)])                           # 8x8 grid = 64 anchors
    gy, gx = np.meshgrid(np.arange(8) / 8.0, np.arange(8) / 8.0, indexing="ij")
    anchors = np.stack([gy, gx, gy + 0.25, gx + 0.25], -1).reshape(1, 64, 4)
    deltas = b.op("Transpose", [b.op("Reshape", [b.conv(h, 16, 4, k=1), b.w((3,), value=[1, 4, 64], dtype=np.int64)])],
                  perm=[0, 2, 1])
    boxes = b.op("Add", [b.w((1, 64, 4), value=anchors), b.op("Mul", [b.op("Tanh", [deltas]), b.w((), value=0.1)])])
    scores = b.op("Sigmoid", [b.op("Reshape", [b.conv(h, 16, 1, k=1), b.w((3,), value=[1, 1, 64], dtype=np.int64)])])
    b.nodes.append(helper.make_node("NonMaxSuppression", [boxes, scores, b.w((1,), value=[8], dtype=np.int64),
                                                          b.w((1,), value=[0.3]), b.w((1,), value=[0.45])],
                                    ["selected"], name="nms"))
    idx = b.op("Gather", ["selected", b.w((), value=2, dtype=np.int64)], axis=1)
    flat = b.op("Reshape", [boxes, b.w((2,), value=[64, 4], dtype=np.int64)])
    b.nodes.append(helper.make_node("Gather", [flat, idx], ["kept_boxes"], name="kept_boxes", axis=0))
    return b.model([vi("x", [1, 3, 32, 32])], [vi("kept_boxes", ["K", 4]), vi("selected", ["K", 3], TensorProto.INT64),
                                                  vi(scores, [1, 1, 64])])


MODELS = {"resnet_mini": resnet_mini, "mobilenet_mini": mobilenet_mini, "transformer_encoder": transformer,
          "unet_mini": unet_mini, "detector_mini": detector_mini}


def main(folder: str | None = None) -> list[str]:
    import onnx

    folder = folder or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "graphs")
    written = []
    for name, make in MODELS.items():
        path = os.path.join(folder, f"{name}.onnx")
        onnx.save(make(), path)
        written.append(path)
    return written


if __name__ == "__main__":
    for p in main(sys.argv[1] if len(sys.argv) > 1 else None):
        print(f"wrote {p} ({os.path.getsize(p)} bytes)")
