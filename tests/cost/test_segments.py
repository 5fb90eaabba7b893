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
    counted, entries, exits = native_calls(g, np.array(c.cluster_of), len(c.clusters), volatile)
    assert counted == sum(hybrid.segments_on.values()) == calls
    # and what those calls are handed and give back: the hybrid program's segments' own entries (its weights
    # aside: onnxruntime holds them) and exits
    segments = [spec for kind, spec, _ in hybrid.steps if kind == "segment"]
    params = {v.name for v in g.inputs if v.is_param}
    assert (entries, exits) == (sum(len([r for r in s.entries if r not in params]) for s in segments),
                                sum(len(s.exits) for s in segments))


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


@pytest.mark.parametrize("path, deny", [("graphs/transformer_block.yaml", "MatMul"), ("graphs/unet_mini.onnx", "Concat")])
def test_each_native_call_pays_for_the_values_it_is_handed_and_gives_back(path, deny):
    """A profile's native_argument_overhead and native_output_overhead (TensorFlow converts every input of a
    call to a tensor: ~19 us an input here): natively once per model input and output, in the hybrid run once
    per entry and exit of each called segment, as the hybrid program's own segments have them (above)."""
    g = load_file(path, dims={"N": 1}) if path.endswith(".onnx") else load_file(path)
    c = run_clustering(g, ClusterOptions(deny=frozenset({deny}), min_cluster_size=1))
    hw = _with(load_hardware("cpu"), native_argument_overhead=0.0, native_output_overhead=0.0)
    base = compute_stats(g, c, hw)
    more = compute_stats(g, c, _with(hw, native_argument_overhead=1e-5, native_output_overhead=1e-3))
    calls, entries, exits = native_calls(g, np.array(c.cluster_of), len(c.clusters), CostView(g).known_mask(VOLATILE_OPS))
    fed = sum(not v.is_param for v in g.inputs)
    assert calls and entries and exits and fed
    assert more.time_before - base.time_before == pytest.approx(1e-5 * fed + 1e-3 * len(g.outputs), rel=1e-9)
    assert more.time_after - base.time_after == pytest.approx(1e-5 * entries + 1e-3 * exits, rel=1e-9)


def test_the_native_call_buffers_are_read_off_the_wide_programs():
    """calibrate_call.native_buffers: one more input (of the wide program) less the op it adds; one more output
    (of the wide chain) likewise; the session call less its one input and one output."""
    from xcviz.runtime.calibrate_call import WIDE, WIDE_OUT, native_buffers

    per_op, arg, out = 0.5e-6, 19e-6, 3e-6
    m = {("native tiny", "small"): 100e-6, ("native wide in", "small"): 100e-6 + (WIDE - 1) * (arg + per_op),
         ("native out 1", "small"): 100e-6, ("native wide out", "small"): 100e-6 + (WIDE_OUT - 1) * (out + per_op)}
    got = native_buffers(m, per_op, 120e-6)
    assert got == pytest.approx((arg, out, 120e-6 - arg - out))
