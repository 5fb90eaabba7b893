"""Narrow convolutions (cost.classes.NARROW): the class follows what XLA:CPU compiles (YNNPACK above 16
channels, Eigen at or below), a calibrated profile's narrow_conv numbers cost exactly those convolutions, and a
profile measured before the class costs them as convolutions."""
from pathlib import Path

import pytest

from xcviz import parse_graph
from xcviz.clustering import ClusterOptions, run_clustering
from xcviz.cost import compute_stats, load_hardware
from xcviz.cost.classes import CLASSES, NARROW, op_class, xla_scale
from xcviz.cost.calibrated import node_class
from xcviz.pipeline import load_file as load

from tests.cost.test_classes import numbers, profile as _profile
from tests.support.paths import ROOT

ROOT = Path(ROOT)


def profile(tmp_path, classes: dict, name: str = "p") -> str:
    (tmp_path / name).mkdir()
    return _profile(tmp_path / name, classes)


def conv(cin: int, cout: int, hw: int, group: int = 1) -> str:
    return (f"graph c(%x: f32[1,{cin},{hw},{hw}], %w: f32[{cout},{cin // group},3,3]) {{\n"
            f"  %y: f32[1,{cout},{hw},{hw}] = conv2d(%x, %w) {{pads=[1,1,1,1], group={group}}}\n  return %y\n}}")


SHAPES = [(3, 8, 32, 1), (8, 16, 16, 1), (16, 16, 8, 1), (16, 17, 8, 1), (17, 8, 8, 1), (24, 8, 16, 1),
          (32, 32, 8, 1), (32, 16, 8, 2), (16, 16, 8, 2), (32, 32, 8, 32), (3, 64, 16, 1)]


@pytest.mark.parametrize("cin, cout, hw, group", SHAPES)
def test_the_narrow_class_is_the_convolutions_xla_leaves_to_eigen(cin, cout, hw, group):
    """The reference is XLA itself: the optimized HLO of the convolution compiled as validate compiles a
    cluster has a YNNPACK fusion exactly when the class is not narrow (depthwise ones are their own class)."""
    pytest.importorskip("jax", reason="compiling needs JAX: pip install -e '.[jax]'")
    from xcviz.runtime.calibrate_ops import Timer
    from xcviz.runtime.jit import CompileCache, cluster_spec

    g = parse_graph(conv(cin, cout, hw, group))
    spec = cluster_spec(g, [0])
    compiled, _ = CompileCache().get(g, spec, Timer(1).inputs(g))
    cls = node_class(g, g.nodes[0])
    if cls != "dwconv":
        assert ("__ynn_fusion" in compiled.compiled_text) == (cls == "conv"), compiled.compiled_text
    assert cls == ("dwconv" if group > 1 and cin == group else
                   "narrow_conv" if max(cin, cout) <= NARROW else "conv")


def test_op_class_narrow_rule():
    assert op_class("conv2d", {"group": 1}, (16, 16, 3, 3)) == "narrow_conv"
    assert op_class("conv2d", {"group": 1}, (17, 16, 3, 3)) == "conv"
    assert op_class("conv2d", {"group": 2}, (16, 16, 3, 3)) == "conv"   # 32 input channels over the groups
    assert op_class("conv2d", {}, ("C", 8, 3, 3)) == "conv"              # unknown width: the profile's conv
    assert op_class("conv2d") == "conv"
    assert op_class("conv_transpose", {"strides": [2, 2]}, (64, 64, 2, 2)) == "narrow_conv"
    assert op_class("conv_transpose", {"strides": [1, 1]}, (64, 64, 3, 3)) == "conv"
    # XLA's work per FLOP: Eigen computes 16 output channels for fewer
    assert [xla_scale("conv2d", {}, (c, 3, 3, 3)) for c in (1, 4, 8, 16, 32)] == [16.0, 4.0, 2.0, 1.0, 1.0]
    assert xla_scale("conv_transpose", {"strides": [2, 2], "group": 1}, (64, 8, 2, 2)) == 2.0
    assert xla_scale("matmul") == 1.0 and xla_scale("conv2d", {"group": 8}, (8, 1, 3, 3)) == 1.0


CHAIN = """graph two(%x: f32[1,8,16,16], %w1: f32[8,8,3,3], %w2: f32[32,8,3,3]) {
  %a: f32[1,8,16,16] = conv2d(%x, %w1) {pads=[1,1,1,1]}
  %b: f32[1,32,16,16] = conv2d(%a, %w2) {pads=[1,1,1,1]}
  return %b
}"""


def _split(tmp_path, classes: dict, name: str):
    g = parse_graph(CHAIN)
    hw = load_hardware(profile(tmp_path, classes, name))
    s = compute_stats(g, run_clustering(g, ClusterOptions(min_cluster_size=1)), hw)
    return g, hw, s


def test_the_narrow_rate_is_read_and_used(tmp_path):
    """Native: each convolution costs its own class's fixed cost and rate; compiled: raising the narrow rate
    shortens the fused time by exactly the narrow convolution's work (its FLOPs padded to 16 output channels)
    at the two rates, the wide one stays."""
    base = {c: numbers(k) for k, c in enumerate(CLASSES)}
    g, hw, s0 = _split(tmp_path, base, "base")
    assert [node_class(g, n) for n in g.nodes] == ["narrow_conv", "conv"]
    assert hw.calibrated.classes["narrow_conv"].xla_flops == base["narrow_conv"]["xla_flops"]
    flops = [2 * 16 * 16 * 8 * 8 * 9, 2 * 16 * 16 * 32 * 8 * 9]
    from xcviz.cost.keys import cost_keys, costs_per_key
    from xcviz.cost.view import CostView

    flat = CostView(g)
    sig, reps = cost_keys(g, flat)
    costs = costs_per_key(g, flat, reps)
    nbytes = [costs[k][1] for k in sig.tolist()]
    assert [costs[k][0] for k in sig.tolist()] == flops
    expect = sum(base[c]["native_overhead"] + f / base[c]["native_flops"] + b / 5e9
                 for c, f, b in zip(("narrow_conv", "conv"), flops, nbytes))
    assert s0.time_before == pytest.approx(expect)
    faster = dict(base, narrow_conv=dict(base["narrow_conv"], xla_flops=4 * base["narrow_conv"]["xla_flops"]))
    _, _, s1 = _split(tmp_path, faster, "faster")
    r = base["narrow_conv"]["xla_flops"]
    work = flops[0] * NARROW / 8   # 8 output channels: Eigen's kernel does the work of 16
    assert s0.time_after - s1.time_after == pytest.approx(work / r - work / (4 * r))
    wider = dict(base, conv=dict(base["conv"], xla_launch=base["conv"]["xla_launch"] + 1e-3))
    _, _, s2 = _split(tmp_path, wider, "wider")
    assert s2.time_after - s0.time_after == pytest.approx(1e-3)   # one wide convolution: one more launch


def test_a_profile_without_the_class_costs_narrow_convolutions_as_convolutions(tmp_path):
    old = {c: numbers(k) for k, c in enumerate(CLASSES) if c != "narrow_conv"}
    same = dict(old, narrow_conv=old["conv"])
    g = load(str(ROOT / "graphs/unet_mini.onnx"), dims={"N": 1})
    c = run_clustering(g, ClusterOptions(min_cluster_size=1))
    s_old = compute_stats(g, c, load_hardware(profile(tmp_path, old, "old")))
    s_same = compute_stats(g, c, load_hardware(profile(tmp_path, same, "same")))
    assert s_old.time_after == s_same.time_after and s_old.time_before == s_same.time_before
    assert sum(node_class(g, n) == "narrow_conv" for n in g.nodes) == 5   # 3-16 channels; the 24-channel one is wide


def test_the_checked_in_profile_measures_the_narrow_class():
    """benchmarks/cpu_calibrated.yaml (the accuracy table's profile) was measured with the class, and says
    with which programs."""
    cal = load_hardware(str(ROOT / "benchmarks/cpu_calibrated.yaml")).calibrated
    text = (ROOT / "benchmarks/cpu_calibrated.yaml").read_text()
    assert "narrow_conv:" in text and "8 x conv2d f32[1,16,32,32] chained" in text
    assert cal.classes["narrow_conv"] != cal.classes["conv"]
