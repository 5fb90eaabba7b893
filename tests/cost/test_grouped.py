"""Grouped convolutions of narrow groups under XLA (cost.classes.group_scale): each group as if it had NARROW
input and output channels, at the narrow class's rate; TensorFlow's Conv2D read as grouped from its shapes;
and a TF call's function costed op by op, by class (cost.calibrated.call_times), a jit_compile one through
XLA on both sides."""
import pytest

from xcviz import parse_graph
from xcviz.cost import load_hardware
from xcviz.cost.calibrated import CalibratedModel, call_times, node_xla_class, node_xla_scale
from xcviz.cost.classes import NARROW, group_scale, narrow_groups
from xcviz.cost.keys import cost_keys, costs_per_key
from xcviz.cost.tf_control import call_graph
from xcviz.cost.view import CostView
from xcviz.pipeline import load_file


def grouped(g: int, ci: int, co: int, hw: int = 16, layout: str = "onnx") -> str:
    if layout == "tf":
        return (f"graph c(%x: f32[2,{hw},{hw},{ci * g}], %w: f32[3,3,{ci},{co * g}]) {{\n"
                f"  %y: f32[2,{hw},{hw},{co * g}] = tf.Conv2D(%x, %w) {{strides=[1,1,1,1], padding=\"SAME\"}}\n"
                f"  return %y\n}}")
    return (f"graph c(%x: f32[2,{ci * g},{hw},{hw}], %w: f32[{co * g},{ci},3,3]) {{\n"
            f"  %y: f32[2,{co * g},{hw},{hw}] = conv2d(%x, %w) {{pads=[1,1,1,1], group={g}}}\n  return %y\n}}")


def test_a_narrow_group_is_padded_to_narrow_channels_in_and_out():
    # layers_zoo's: 3 groups of 5 -> 2 channels: (16/5) x (16/2)
    assert narrow_groups("conv", {"group": 3}, (6, 5, 3, 3)) == (5, 2)
    assert group_scale((6, 5, 3, 3), {"group": 3}) == pytest.approx(NARROW / 5 * NARROW / 2)
    # one side narrow: only it is padded
    assert group_scale((64, 32, 3, 3), {"group": 8}) == pytest.approx(NARROW / 8)
    # wide groups (AlexNet's 2 of 48 -> 128), depthwise, ungrouped and transposed convolutions: not this rule
    for w, a, op in (((256, 48, 5, 5), {"group": 2}, "conv"), ((32, 1, 3, 3), {"group": 32}, "conv"),
                     ((6, 5, 3, 3), {}, "conv"), ((6, 5, 3, 3), {"group": 3}, "conv_transpose")):
        assert narrow_groups(op, a, w) is None and group_scale(w, a, op) == 1.0


def test_tensorflow_conv2d_is_grouped_by_its_shapes_as_onnx_by_its_attribute():
    for g, ci, co in ((3, 5, 2), (4, 4, 4), (2, 8, 16)):
        tf, onnx = parse_graph(grouped(g, ci, co, layout="tf")), parse_graph(grouped(g, ci, co))
        assert node_xla_class(tf, tf.nodes[0]) == node_xla_class(onnx, onnx.nodes[0]) == "narrow_conv"
        assert node_xla_scale(tf, tf.nodes[0]) == pytest.approx(node_xla_scale(onnx, onnx.nodes[0]))
        assert node_xla_scale(onnx, onnx.nodes[0]) == pytest.approx(group_scale((co * g, ci, 3, 3), {"group": g}))
    dense = parse_graph(grouped(1, 15, 6, layout="tf"))   # (one group: the narrow rule of output channels)
    assert node_xla_scale(dense, dense.nodes[0]) == pytest.approx(NARROW / 6)


def test_xla_leaves_a_narrow_grouped_convolution_to_its_own_loops():
    """The reference is XLA: at 16 channels or fewer in all, the optimized HLO keeps the grouped convolution
    (its loop code); above, a YNNPACK fusion."""
    pytest.importorskip("jax", reason="compiling needs JAX: pip install -e '.[jax]'")
    from xcviz.runtime.calibrate_ops import Timer
    from xcviz.runtime.jit import CompileCache, cluster_spec

    for (g, ci, co), ynn in (((3, 5, 2), False), ((4, 4, 4), False), ((4, 8, 8), True)):
        graph = parse_graph(grouped(g, ci, co))
        compiled, _ = CompileCache().get(graph, cluster_spec(graph, [0]), Timer(1).inputs(graph))
        text = compiled.compiled_text
        assert ("__ynn_fusion" in text) == ynn and "feature_group_count" in text, text




def test_a_jit_compile_call_costs_its_functions_xla_time_on_both_sides():
    """layers_zoo's grouped Conv2D is a Keras jit_compile function (`_XlaMustCompile`): TF runs it through
    XLA natively too, so both sides pay the grouped convolution at XLA's rate, natively with a compiled call."""
    g = load_file("tests/data/tf_keras/layers_zoo_frozen.pb")
    hw = load_hardware("cpu_tf")
    call = next(n for n in g.nodes if n.op == "tf.StatefulPartitionedCall")
    assert call.attrs.get("_XlaMustCompile")
    body = call_graph(g, call)
    conv = next(n for n in body.nodes if n.op == "tf.Conv2D")
    assert node_xla_class(body, conv) == "narrow_conv"
    assert node_xla_scale(body, conv) == pytest.approx(NARROW / 5 * NARROW / 2)
    native, xla = call_times(hw.calibrated, g, call)
    narrow = hw.calibrated.classes["narrow_conv"]
    conv_flops = 2 * 9 * 5 * (2 * 16 * 16 * 6)   # 2 images of 16x16, 6 outputs of 5 inputs each, 3x3
    assert xla >= conv_flops * node_xla_scale(body, conv) / narrow.xla_flops
    assert native == pytest.approx(xla + hw.calibrated.call_overhead)
    # and the model's keys take them: the call's native time and its XLA compute
    flat = CostView(g)
    sig, reps = cost_keys(g, flat)
    model = CalibratedModel(hw.calibrated, g, g.nodes, reps)
    k = int(sig[g.position(call.name)])
    key_costs = costs_per_key(g, flat, reps)
    assert model.key_times(key_costs)[k] == pytest.approx(native)
    assert model.xla_keys(key_costs)[2][k] == pytest.approx(xla)
