"""Depthwise convolutions under XLA (cost.classes.dw_scale): Eigen's path exactly where XLA:CPU's optimized HLO
has no YNNPACK fusion, TensorFlow's filter read in ONNX's order, and the per-channel cost."""
import pytest

from xcviz import parse_graph
from xcviz.cost.calibrated import node_class, node_xla_scale
from xcviz.cost.classes import DW_CHANNEL_FLOPS, EIGEN_DW, NARROW, dw_scale


def dw(c: int, hw: int, layout: str = "onnx", n: int | str = 1) -> str:
    if layout == "tf":
        return (f"graph d(%x: f32[{n},{hw},{hw},{c}], %w: f32[3,3,{c},1]) {{\n"
                f"  %y: f32[{n},{hw},{hw},{c}] = tf.DepthwiseConv2dNative(%x, %w) "
                f"{{strides=[1,1,1,1], padding=\"SAME\"}}\n  return %y\n}}")
    return (f"graph d(%x: f32[{n},{c},{hw},{hw}], %w: f32[{c},1,3,3]) {{\n"
            f"  %y: f32[{n},{c},{hw},{hw}] = conv2d(%x, %w) {{pads=[1,1,1,1], group={c}}}\n  return %y\n}}")


def eigen(scale: float, c: int, hw: int) -> bool:
    """Whether a 3x3 depthwise convolution's scale carries Eigen's factor."""
    return scale == pytest.approx((1 + DW_CHANNEL_FLOPS / (18 * hw * hw)) * EIGEN_DW)


@pytest.mark.parametrize("c, hw", [(8, 8), (16, 4), (17, 8), (32, 1), (32, 2), (32, 3), (64, 4), (24, 16)])
def test_eigens_path_is_where_xla_uses_no_ynnpack_kernel(c, hw):
    """The reference is XLA itself: the optimized HLO of the convolution compiled as validate compiles a
    cluster has a YNNPACK fusion exactly when dw_scale does not take Eigen's factor (16 channels or fewer, or
    an image with fewer pixels than the filter's 3x3 taps)."""
    pytest.importorskip("jax", reason="compiling needs JAX: pip install -e '.[jax]'")
    from xcviz.runtime.calibrate_ops import Timer
    from xcviz.runtime.jit import CompileCache, cluster_spec

    g = parse_graph(dw(c, hw))
    assert node_class(g, g.nodes[0]) == "dwconv"
    compiled, _ = CompileCache().get(g, cluster_spec(g, [0]), Timer(1).inputs(g))
    scale = node_xla_scale(g, g.nodes[0])
    assert eigen(scale, c, hw) == ("__ynn_fusion" not in compiled.compiled_text), compiled.compiled_text
    assert eigen(scale, c, hw) == (c <= NARROW or hw * hw < 9)


def test_tensorflow_depthwise_is_costed_like_onnxs():
    """TF's filter [H, W, C, M] is read in ONNX's order (C, M, kh, kw), NHWC or NCHW alike, and a symbolic
    batch leaves the per-channel cost known."""
    for c, hw in ((8, 8), (32, 2), (64, 16)):
        tf, onnx = parse_graph(dw(c, hw, "tf")), parse_graph(dw(c, hw))
        assert node_class(tf, tf.nodes[0]) == "dwconv"
        assert node_xla_scale(onnx, onnx.nodes[0]) > 1
        assert node_xla_scale(tf, tf.nodes[0]) == pytest.approx(node_xla_scale(onnx, onnx.nodes[0]))
        batch = parse_graph(dw(c, hw, n="N"))
        assert node_xla_scale(batch, batch.nodes[0]) == pytest.approx(node_xla_scale(onnx, onnx.nodes[0]))


def test_dw_scale_counts_the_per_channel_cost_over_each_channels_work():
    # 64 channels of 16x16: YNNPACK, 4608 FLOPs per channel and image beside DW_CHANNEL_FLOPS
    assert dw_scale((64, 1, 3, 3), ((1, 64, 16, 16), (1, 64, 16, 16))) == pytest.approx(1 + DW_CHANNEL_FLOPS / 4608)
    # a 1x1 image: 18 FLOPs per channel, and Eigen's
    assert dw_scale((256, 1, 3, 3), ((2, 256, 1, 1), (2, 256, 1, 1))) == pytest.approx(
        (1 + DW_CHANNEL_FLOPS / 18) * EIGEN_DW)
    assert dw_scale((64, 1, 3, 3), None) == 1.0 == dw_scale((64, 1, 3, 3), ((1, 64, "H", 8), (1, 64, "H", 8)))

