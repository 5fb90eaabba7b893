"""A broadcast weight read by a dot is written by XLA on every call, and a buffer over 32 MiB is mapped fresh
each time: its page faults are costed at the profile's page_fault_bandwidth (cost.classes), as AlexNet's
ConstantOfShape weights measured (benchmarks/cost_accuracy_results.md)."""
from pathlib import Path

import numpy as np
import pytest
import yaml

from xcviz.clustering import ClusterOptions, run_clustering
from xcviz.cost import compute_stats, load_hardware
from xcviz.cost.classes import CLASSES, FRESH_BYTES
from xcviz.errors import XcvizError
from tests.support.paths import ROOT

ROOT = Path(ROOT)
BIG, SMALL = (4096, 4096), (4096, 256)   # 64 MiB, over FRESH_BYTES; 4 MiB, under


def _model(tmp_path, big=BIG, small=SMALL) -> str:
    """y = (x @ ConstantOfShape(big)) @ ConstantOfShape(small): AlexNet's FC layers in miniature."""
    onnx = pytest.importorskip("onnx", reason="ONNX models: pip install -e '.[onnx]'")
    from onnx import TensorProto, helper, numpy_helper

    value = helper.make_tensor("value", TensorProto.FLOAT, [1], [0.02])
    nodes = [helper.make_node("ConstantOfShape", ["s1"], ["w1"], value=value),
             helper.make_node("ConstantOfShape", ["s2"], ["w2"], value=value),
             helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("MatMul", ["h", "w2"], ["y"])]
    inits = [numpy_helper.from_array(np.array(big, np.int64), "s1"), numpy_helper.from_array(np.array(small, np.int64), "s2")]
    g = helper.make_graph(nodes, "fc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, big[0]])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, small[1]])], inits)
    path = tmp_path / "fc.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return str(path)


def _profile(tmp_path, name: str, **extra) -> str:
    row = {"native_overhead": 1e-5, "native_flops": 1e9, "xla_launch": 1e-6, "xla_flops": 1e10}
    data = {"name": name, "source": "test", "backend": "cpu", "peak_flops": 1e10, "memory_bandwidth": 1e10,
            "launch_overhead": 1e-5, "sync_overhead": 5e-6, "native_bandwidth": 5e9, "call_overhead": 7e-5,
            "classes": {c: row for c in CLASSES}, **extra}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def _fused(path: str, hw) -> float:
    from xcviz.pipeline import load_file as load

    g = load(path)
    c = run_clustering(g, ClusterOptions(min_cluster_size=1))
    assert len(c.clusters) == 1 and len(c.clusters[0]) == 4
    return compute_stats(g, c, hw).clusters_detail[0].time_fused


def test_a_broadcast_weight_over_32_mib_costs_its_page_faults_and_a_small_one_none(tmp_path):
    model = _model(tmp_path)
    without = _fused(model, load_hardware(_profile(tmp_path, "a")))
    with_faults = _fused(model, load_hardware(_profile(tmp_path, "b", page_fault_bandwidth=2e9)))
    assert 4 * BIG[0] * BIG[1] > FRESH_BYTES > 4 * SMALL[0] * SMALL[1]
    # by hand: only the 64 MiB weight is mapped fresh: 67108864 B / 2e9 B/s = 33.554432 ms
    assert with_faults - without == pytest.approx(67108864 / 2e9, rel=1e-9)


def test_values_under_32_mib_cost_no_page_faults(tmp_path):
    model = _model(tmp_path, big=(4096, 1024), small=(1024, 256))   # 16 MiB
    assert _fused(model, load_hardware(_profile(tmp_path, "b", page_fault_bandwidth=2e9))) == \
        _fused(model, load_hardware(_profile(tmp_path, "a")))


def test_xla_writes_the_broadcast_weight_of_a_dot_on_every_call(tmp_path):
    """What the term models, read from XLA's optimized HLO: the broadcast is a loop fusion of its own whose
    result (the whole weight) the dot reads, not folded into a constant nor into the dot."""
    pytest.importorskip("jax", reason="XLA's HLO: pip install -e '.[jax]'")
    from xcviz.pipeline import load_file as load
    from xcviz.runtime.execute import bind_inputs, execute
    from xcviz.runtime.jit import CompileCache, cluster_spec

    g = load(_model(tmp_path, big=(256, 512), small=(512, 64)))
    c = run_clustering(g, ClusterOptions(min_cluster_size=1))
    env = execute(g, bind_inputs(g, None, 0, None), "native", keep_all=True).env
    comp, _ = CompileCache().get(g, cluster_spec(g, c.clusters[0]), env)
    entry = comp.compiled_text.split("ENTRY", 1)[1]
    written = [line for line in entry.splitlines() if "fusion(" in line and "f32[256,512]" in line.split("=")[1]]
    assert written, entry
    assert "f32[256,512]" not in " ".join(line for line in entry.splitlines() if "constant(" in line)


def test_a_bad_page_fault_bandwidth_is_one_clear_error(tmp_path):
    with pytest.raises(XcvizError, match="page_fault_bandwidth"):
        load_hardware(_profile(tmp_path, "c", page_fault_bandwidth=0))


def test_the_checked_in_profile_has_the_measured_rate():
    hw = load_hardware(str(ROOT / "benchmarks/cpu_calibrated.yaml"))
    assert 1e8 < hw.calibrated.page_fault_bandwidth < 1e11


def test_what_calibrate_writes_keeps_the_rate(tmp_path):
    from xcviz.runtime.calibrate import Calibration

    row = {"native_overhead": 1e-5, "native_flops": 1e9, "xla_launch": 1e-6, "xla_flops": 1e10}
    measured = {"classes": {c: row for c in CLASSES}, "native_bandwidth": 5e9, "call_overhead": 7e-5,
                "page_fault_bandwidth": 1.234e9}
    cal = Calibration(2e10, 1e10, 1e-5, 4e-6, "cpu", "a test cpu", {"matmul_n": 8, "stream_elements": 8, "repeats": 1},
                      measured)
    path = tmp_path / "cal.yaml"
    path.write_text(cal.profile_yaml("cal"))
    assert load_hardware(str(path)).calibrated.page_fault_bandwidth == pytest.approx(1.234e9, rel=1e-3)
