"""The hybrid run's native calls the cost model counts (cost.segments) are the fallback segments the hybrid
program itself makes and calls (runtime.wholemodel.Hybrid), on models cut into many clusters by --deny; and
each costs the runtime's session overhead in the estimate, and the switch between runtimes where the run calls a
compiled cluster too."""
import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("jax")

from xcviz.clustering import ClusterOptions, run_clustering  # noqa: E402
from xcviz.cost import compute_stats, load_hardware  # noqa: E402
from xcviz.cost.params import VOLATILE_OPS  # noqa: E402
from xcviz.cost.segments import native_calls  # noqa: E402
from xcviz.cost.view import CostView  # noqa: E402
from xcviz.pipeline import load_file  # noqa: E402
from xcviz.runtime.inputs import bind_inputs  # noqa: E402
from xcviz.runtime.jit import CompileCache  # noqa: E402
from xcviz.runtime.native import resolve  # noqa: E402
from xcviz.runtime.partial import execute_tolerant  # noqa: E402
from xcviz.runtime.wholemodel import Hybrid  # noqa: E402

CASES = [("graphs/transformer_encoder.onnx", "Softmax", 2), ("graphs/transformer_encoder.onnx", "Add", 10),
         ("graphs/resnet_mini.onnx", "Relu", 7), ("graphs/unet_mini.onnx", "Concat", 2),
         ("graphs/transformer_block.yaml", "MatMul", 8), ("graphs/resnet_mini.onnx", None, 0)]


@pytest.mark.parametrize("path, deny, calls", CASES)
def test_the_native_calls_counted_are_the_hybrid_programs_segments(path, deny, calls):
    g = load_file(path)
    c = run_clustering(g, ClusterOptions(deny=frozenset({deny} if deny else ()), min_cluster_size=1))
    env = execute_tolerant(g, bind_inputs(g, None, 0), c).env
    hybrid = Hybrid(g, c, resolve("onnxruntime", g, 1), env, CompileCache())
    volatile = CostView(g).known_mask(VOLATILE_OPS)
    assert native_calls(g, np.array(c.cluster_of), len(c.clusters), volatile) == sum(hybrid.segments_on.values()) \
        == calls


def test_each_native_call_of_the_hybrid_run_costs_a_session():
    g = load_file("graphs/transformer_block.yaml")
    c = run_clustering(g, ClusterOptions(deny=frozenset({"MatMul"}), min_cluster_size=1))
    hw = load_hardware("cpu")
    session = hw.calibrated.session_overhead
    assert session > 0
    base = compute_stats(g, c, hw)
    more = compute_stats(g, c, hw.__class__(**{**hw.__dict__, "calibrated": hw.calibrated.__class__(
        **{**hw.calibrated.__dict__, "session_overhead": 2 * session})}))
    # one more session natively, eight more in the hybrid run
    assert more.time_before - base.time_before == pytest.approx(session, rel=1e-9)
    assert more.time_after - base.time_after == pytest.approx(8 * session, rel=1e-9)


def _with(hw, **cal):
    return hw.__class__(**{**hw.__dict__, "calibrated": hw.calibrated.__class__(**{**hw.calibrated.__dict__, **cal})})


def test_each_native_call_between_compiled_clusters_costs_a_switch():
    g = load_file("graphs/transformer_block.yaml")
    c = run_clustering(g, ClusterOptions(deny=frozenset({"MatMul"}), min_cluster_size=1))
    hw = _with(load_hardware("cpu"), switch_overhead=0.0)
    base = compute_stats(g, c, hw)
    more = compute_stats(g, c, _with(hw, switch_overhead=1e-4))
    # none natively (no cluster runs), one per native call in the hybrid run: its eight fallback segments
    assert more.time_before == base.time_before
    assert more.time_after - base.time_after == pytest.approx(8e-4, rel=1e-9)


def test_a_run_with_no_compiled_cluster_switches_nothing():
    g = load_file("graphs/transformer_block.yaml")
    c = run_clustering(g, ClusterOptions(deny=frozenset(n.op for n in g.nodes)))   # every op falls back
    assert not c.clusters
    hw = _with(load_hardware("cpu"), switch_overhead=0.0)
    base, more = compute_stats(g, c, hw), compute_stats(g, c, _with(hw, switch_overhead=1e-4))
    assert (more.time_before, more.time_after) == (base.time_before, base.time_after)
