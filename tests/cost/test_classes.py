"""Per-op-class profiles (cost.classes): they round-trip through YAML, the estimates use each class's numbers,
and a profile without them keeps the roofline."""
from pathlib import Path

import pytest
import yaml

from xcviz.ir import bind_dims
from xcviz.clustering import ClusterOptions, run_clustering
from xcviz.cost import compute_stats, hardware_names, load_hardware
from xcviz.cost.calibrated import node_class
from xcviz.cost.classes import CLASS_KEYS, CLASSES, op_class
from xcviz.errors import XcvizError
from xcviz.pipeline import load_file as load
from tests.support.paths import ROOT

ROOT = Path(ROOT)
ROOFLINE = {"name": "t", "source": "test", "backend": "cpu", "peak_flops": 1e10, "memory_bandwidth": 1e10,
            "launch_overhead": 1e-5, "sync_overhead": 5e-6}


def numbers(k: int) -> dict:
    """Distinct numbers per class, so that a class read in the place of another shows."""
    return {"native_overhead": 1e-5 * (k + 1), "native_flops": 1e9 * (k + 1), "xla_launch": 1e-6 * (k + 1),
            "xla_flops": 1e10 * (k + 1)}


def profile(tmp_path, classes: dict | None = None, **extra) -> str:
    data = dict(ROOFLINE, **extra)
    if classes is not None:
        data.update(classes=classes, native_bandwidth=5e9, call_overhead=7e-5)
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_a_calibrated_profile_round_trips(tmp_path):
    table = {c: numbers(k) for k, c in enumerate(CLASSES)}
    hw = load_hardware(profile(tmp_path, table))
    assert hw.calibrated.native_bandwidth == 5e9 and hw.calibrated.call_overhead == 7e-5
    for c in CLASSES:
        assert {k: getattr(hw.calibrated.classes[c], k) for k in CLASS_KEYS} == table[c]


def test_what_calibrate_writes_loads_back_with_the_same_numbers(tmp_path):
    from xcviz.runtime.calibrate import Calibration

    measured = {"classes": {c: numbers(k) for k, c in enumerate(CLASSES)}, "native_bandwidth": 3.14159e9,
                "call_overhead": 6.5e-5}
    cal = Calibration(2e10, 1e10, 1e-5, 4e-6, "cpu", "a test cpu", {"matmul_n": 8, "stream_elements": 8, "repeats": 1},
                      measured)
    path = tmp_path / "cal.yaml"
    path.write_text(cal.profile_yaml("cal"))
    hw = load_hardware(str(path))
    assert hw.calibrated.native_bandwidth == pytest.approx(3.14159e9, rel=1e-3)
    assert hw.calibrated.call_overhead == pytest.approx(6.5e-5, rel=1e-3)
    for c in CLASSES:
        for k in CLASS_KEYS:
            assert getattr(hw.calibrated.classes[c], k) == pytest.approx(measured["classes"][c][k], rel=1e-3)


def test_a_class_left_out_is_costed_as_its_nearest(tmp_path):
    hw = load_hardware(profile(tmp_path, {"elementwise": numbers(0), "conv": numbers(5)}))
    assert hw.calibrated.classes["dwconv"] == hw.calibrated.classes["conv"]
    assert hw.calibrated.classes["dot"] == hw.calibrated.classes["elementwise"]


@pytest.mark.parametrize("classes, extra, message", [
    ({"conv": numbers(0)}, {}, "elementwise at least"),
    ({"elementwise": numbers(0), "gemm": numbers(1)}, {}, "unknown op class 'gemm'"),
    ({"elementwise": dict(numbers(0), native_flops=0)}, {}, "classes.elementwise.native_flops"),
    ({"elementwise": dict(numbers(0), xla_launch="fast")}, {}, "classes.elementwise.xla_launch"),
    ({"elementwise": numbers(0)}, {"call_overhead": -1}, "'call_overhead'"),
])
def test_a_malformed_class_table_is_one_clear_error(tmp_path, classes, extra, message):
    path = profile(tmp_path, classes)
    data = yaml.safe_load(Path(path).read_text())
    data.update(extra)
    Path(path).write_text(yaml.safe_dump(data))
    with pytest.raises(XcvizError) as e:
        load_hardware(path)
    assert message in str(e.value) and e.value.where == path


def test_op_classes():
    assert [op_class(o) for o in ("matmul", "gemm", "conv2d", "add", "reduce_sum", "maxpool", "softmax",
                                  "transpose", "reshape", "no_such_op")] == [
        "dot", "dot", "conv", "elementwise", "reduce", "window", "norm", "movement", "free", "elementwise"]
    assert op_class("conv2d", {"group": 16}, (16, 1, 3, 3)) == "dwconv" and op_class("conv2d", {"group": 1}) == "conv"
    # a few groups (AlexNet's two) is a convolution, not a depthwise one
    assert op_class("conv2d", {"group": 2}, (48, 48, 5, 5)) == "conv"
    # 1x1 (ResNet's bottlenecks, Inception's reductions): onnxruntime runs it as a GEMM, XLA:CPU at a
    # third to half that rate (benchmarks/README.md); a narrow one stays narrow, a transposed one a convolution
    assert op_class("conv2d", {"group": 1}, (64, 256, 1, 1)) == "pointwise_conv"
    assert op_class("conv2d", {"group": 1}, (16, 8, 1, 1)) == "narrow_conv"
    assert op_class("conv_transpose", {"group": 1}, (64, 64, 1, 1)) == "conv"


def _stats(path: str, hw, max_size=None):
    g = load(str(ROOT / path), dims={"N": 1})
    c = run_clustering(g, ClusterOptions(min_cluster_size=1, max_cluster_size=max_size))
    return g, c, compute_stats(g, c, hw)


@pytest.mark.parametrize("cls", ["conv", "narrow_conv", "elementwise", "norm", "free"])
def test_each_class_numbers_cost_exactly_the_ops_of_that_class(tmp_path, cls):
    """Raising one class's native fixed cost raises the unfused time of every cluster by that much per op of
    the class, and nothing else; raising its XLA launch changes only clusters that hold one."""
    base = {c: numbers(k) for k, c in enumerate(CLASSES)}
    more = dict(base, **{cls: dict(base[cls], native_overhead=base[cls]["native_overhead"] + 1e-3)})
    g, c, s0 = _stats("graphs/resnet_mini.onnx", load_hardware(profile(tmp_path, base)), max_size=6)
    _, _, s1 = _stats("graphs/resnet_mini.onnx", load_hardware(profile(tmp_path, more)), max_size=6)
    for members, d0, d1 in zip(c.clusters, s0.clusters_detail, s1.clusters_detail):
        n = sum(node_class(g, g.nodes[i]) == cls for i in members)
        assert d1.time_unfused - d0.time_unfused == pytest.approx(n * 1e-3, abs=1e-12)
        assert d1.time_fused == pytest.approx(d0.time_fused)
    n = sum(node_class(g, nd) == cls for nd in g.nodes)
    assert n > 0 or cls not in ("conv", "narrow_conv")   # resnet_mini has convolutions of both widths
    assert s1.time_before - s0.time_before == pytest.approx(n * 1e-3)


def test_the_call_overhead_is_paid_once_per_cluster(tmp_path):
    base = {c: numbers(k) for k, c in enumerate(CLASSES)}
    g, c, s0 = _stats("graphs/resnet_mini.onnx", load_hardware(profile(tmp_path, base)), max_size=6)
    p = profile(tmp_path, base)
    data = yaml.safe_load(Path(p).read_text())
    data["call_overhead"] += 1e-3
    Path(p).write_text(yaml.safe_dump(data))
    _, _, s1 = _stats("graphs/resnet_mini.onnx", load_hardware(p), max_size=6)
    assert len(c.clusters) > 1
    for d0, d1 in zip(s0.clusters_detail, s1.clusters_detail):
        assert d1.time_fused - d0.time_fused == pytest.approx(1e-3)
    assert s1.time_after - s0.time_after == pytest.approx(len(c.clusters) * 1e-3)


def test_a_conv_cluster_is_ranked_above_an_elementwise_one_when_natively_convs_are_slow(tmp_path):
    """What the roofline got wrong: natively a convolution (im2col) costs far more than an add, so a cluster
    of convolutions gains more from XLA than a cluster of adds; with per-class numbers the estimate says so."""
    base = {c: numbers(0) for c in CLASSES}
    base["conv"] = dict(numbers(0), native_overhead=3e-4, native_flops=3e9)
    hw = load_hardware(profile(tmp_path, base))
    g, c, s = _stats("graphs/resnet_mini.onnx", hw, max_size=6)
    conv = [d.speedup_estimate for d in s.clusters_detail if "Conv" in d.ops]
    other = [d.speedup_estimate for d in s.clusters_detail if "Conv" not in d.ops]
    assert conv and other and min(conv) > max(other)


GEMM = """graph one(%x: f32[16,64], %w: f32[64,64]) {
  %y: f32[16,64] = matmul(%x, %w)
  return %y
}"""


def test_builtin_cpu_profile_is_calibrated_against_onnxruntime():
    """The built-in cpu profile is measured, not derived: per class numbers of onnxruntime's kernels, its session
    call apart, and the source says which machine, runtime and threads."""
    hw = load_hardware("cpu")
    assert hw.calibrated is not None and hw.calibrated.session_overhead > 0
    assert all(c.native_overhead > 0 for c in hw.calibrated.classes.values())
    assert "onnxruntime" in hw.source and "thread" in hw.source and "2-core" in hw.source


def test_the_builtin_torch_profile_is_measured_against_torch_eager():
    """cpu_torch: the same machine calibrated against torch eager (validate's estimate for a torch program)."""
    hw = load_hardware("cpu_torch")
    assert hw.native == "torch" and hw.calibrated is not None and hw.calibrated.session_overhead > 0
    assert "torch" in hw.source and "thread" in hw.source and "2-core" in hw.source
    # torch eager dispatches an op in more time than onnxruntime does (both measured the same way)
    assert hw.calibrated.classes["free"].native_overhead > load_hardware("cpu").calibrated.classes["free"].native_overhead


@pytest.mark.parametrize("name", [n for n in hardware_names() if not n.startswith("cpu")])
def test_builtin_profiles_keep_the_roofline(name):
    """The built-in accelerator profiles are datasheet figures, not measurements of per-class costs: no
    classes, and an op costs max(FLOPs / peak, bytes / bandwidth) + launch as before."""
    from xcviz import parse_graph

    hw = load_hardware(name)
    assert hw.calibrated is None
    g = parse_graph(GEMM)
    s = compute_stats(g, run_clustering(g, ClusterOptions(min_cluster_size=1)), hw)
    flops, nbytes = 2 * 16 * 64 * 64, 4 * (16 * 64 + 64 * 64 + 16 * 64)
    assert s.time_before == max(flops / hw.peak_flops, nbytes / hw.memory_bandwidth) + hw.launch_overhead


def test_a_calibrated_profile_costs_an_op_by_its_class(tmp_path):
    from xcviz import parse_graph

    hw = load_hardware(profile(tmp_path, {c: numbers(k) for k, c in enumerate(CLASSES)}))
    g = parse_graph(GEMM)
    s = compute_stats(g, run_clustering(g, ClusterOptions(min_cluster_size=1)), hw)
    flops, nbytes = 2 * 16 * 64 * 64, 4 * (16 * 64 + 64 * 64 + 16 * 64)
    dot = hw.calibrated.classes["dot"]
    assert s.time_before == pytest.approx(dot.native_overhead + flops / dot.native_flops + nbytes / 5e9)
    # fused: the call, the dot's launch, its FLOPs at XLA's dot rate, the bytes in and out
    d = s.clusters_detail[0]
    assert d.time_fused == pytest.approx(7e-5 + dot.xla_launch + flops / dot.xla_flops + nbytes / 1e10)


def test_the_checked_in_calibrated_profile_loads_with_every_class():
    hw = load_hardware(str(ROOT / "benchmarks/cpu_calibrated.yaml"))
    assert hw.calibrated is not None and set(hw.calibrated.classes) == set(CLASSES)
    assert hw.source.startswith("measured with xcviz calibrate on")


def test_a_resnet_cluster_is_estimated_faster_than_unfused_on_the_calibrated_profile():
    """As measured on this machine (4-5x, benchmarks/cost_accuracy_results.md), and as on every built-in
    profile (test_cost_params)."""
    hw = load_hardware(str(ROOT / "benchmarks/cpu_calibrated.yaml"))
    g, c, s = _stats("graphs/resnet_mini.onnx", hw)
    assert len(c.clusters) == 1 and s.clusters_detail[0].speedup_estimate > 2


def test_the_cost_strategy_decides_with_the_calibrated_classes(tmp_path):
    """`--strategy cost` weighs merges with the same per-class numbers as stats: where XLA's convolutions are
    slow and native ones fast, it leaves the convolutions out; with the numbers reversed it compiles them."""
    g = load(str(ROOT / "graphs/resnet_mini.onnx"))
    g = bind_dims(g, {"N": 1})

    def conv_clustered(conv: dict) -> int:
        base = {c: numbers(0) for c in CLASSES}
        # resnet_mini's are of all three kinds: 3x3 wide and narrow, and a 1x1 shortcut
        base["conv"] = base["narrow_conv"] = base["pointwise_conv"] = dict(numbers(0), **conv)
        opts = ClusterOptions(strategy="cost", hardware=profile(tmp_path, base))
        c = run_clustering(g, opts)
        return sum(1 for j, nd in enumerate(g.nodes) if nd.op == "conv2d" and c.cluster_of[j] >= 0)

    n_conv = sum(1 for nd in g.nodes if nd.op == "conv2d")
    assert conv_clustered(dict(native_overhead=3e-4, native_flops=3e9, xla_launch=1e-6, xla_flops=1e11)) == n_conv
    assert conv_clustered(dict(native_overhead=1e-6, native_flops=1e12, xla_launch=1e-2, xla_flops=1e6)) == 0
