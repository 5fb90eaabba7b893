"""TensorFlow's functional ops costed from their library functions (cost.tf_control), the numbers worked out
by hand from the functions tools/tf_keras_corpus.py writes:

- while_cond's While: cond = i < 10 and sum(|acc|) < 100 over acc f32[3,4]: Less 1 + Abs 12 + Sum 12 + Less 1
  + LogicalAnd 1 = 27 FLOPs; body = i + 1, acc * 1.5 + reverse(x), the loop counter + 1: 1 + 12 + 12 + 1 = 26.
  The counter bounds it at 10 trips: the condition runs 11 times, the body 10: 27 * 11 + 26 * 10 = 557.
  TF's executor runs every op of a function on every call, its Consts too: cond has 9, body 13.
- ops_zoo's PartitionedCall: x * c, Relu6, - c over f32[2,5,3]: 30 + 60 + 30 = 120 FLOPs.
- while_cond's If: relu6(acc) (24) or -acc (12): the dearer, 24."""
import os

import pytest

pytest.importorskip("google.protobuf", reason="TF GraphDefs: pip install protobuf")

from xcviz.cost import compute_stats, load_hardware  # noqa: E402
from xcviz.cost.keys import control_node_cost  # noqa: E402
from xcviz.pipeline import AnalysisOptions, analyse, load_file  # noqa: E402
from tests.support.paths import TESTS  # noqa: E402

KERAS = os.path.join(TESTS, "data", "tf_keras")


def _node(path, op):
    g = load_file(os.path.join(KERAS, path))
    return g, next(n for n in g.nodes if n.op == op)


def test_a_while_costs_its_condition_one_time_more_than_its_body():
    g, node = _node("while_cond_frozen.pb", "tf.StatelessWhile")
    flops, nbytes, why, runs = control_node_cost(g, node)
    assert (flops, why) == (27 * 11 + 26 * 10, None)
    assert runs == (10, 11 * 9 + 10 * 13)


def test_a_call_costs_its_function_and_an_if_its_dearer_branch():
    g, call = _node("ops_zoo_frozen.pb", "tf.PartitionedCall")
    assert control_node_cost(g, call)[0] == 120
    g, branch = _node("while_cond_frozen.pb", "tf.StatelessIf")
    assert control_node_cost(g, branch)[:3] == (24, 192, None)


def test_a_while_whose_body_cannot_be_costed_says_why():
    """ops_zoo's loop stacks a TensorList whose length its body does not state."""
    g, node = _node("ops_zoo_savedmodel", "tf.StatelessWhile")
    flops, _, why, runs = control_node_cost(g, node)
    assert flops is None and runs is None and "TensorListStack" in why


def test_a_while_with_no_trip_count_leaves_the_estimate_as_before(monkeypatch):
    """A TF While with no counter to read keeps its FLOPs unknown and its own bytes: the whole model keeps an
    estimate (the loop is left out of both sides), as before TF's functions were costed; an ONNX while loop with
    no trip count leaves none (tests/cost/test_control.py)."""
    import xcviz.cost.tf_control as tf_control

    monkeypatch.setattr(tf_control, "tf_while_trips", lambda *a: None)
    g, node = _node("while_cond_frozen.pb", "tf.StatelessWhile")
    assert control_node_cost(g, node)[2].startswith("no trip count")
    s = analyse(os.path.join(KERAS, "while_cond_frozen.pb")).stats
    assert s.speedup_estimate is not None and s.unknown_cost_nodes["nodes"] == ["while"]
    assert s.unknown_cost_nodes["why"]["while"].startswith("no trip count")


def test_the_estimate_counts_the_loops_dispatches_natively():
    """Raising TF's per-op cost raises the native time by it once per op run, the loop's body ops every trip."""
    path = os.path.join(KERAS, "while_cond_frozen.pb")
    a = analyse(path)
    hw = load_hardware("cpu_tf")
    cal = hw.calibrated
    free = cal.classes["free"]
    bumped = hw.__class__(**{**hw.__dict__, "calibrated": cal.__class__(**{**cal.__dict__, "classes": {
        **cal.classes, "free": free.__class__(**{**free.__dict__, "native_overhead": free.native_overhead + 1e-3})}})})
    base, more = compute_stats(a.graph, a.clustering, hw), compute_stats(a.graph, a.clustering, bumped)
    loops = 11 * 9 + 10 * 13
    assert (more.time_before - base.time_before) / 1e-3 >= loops


def test_each_native_loop_iteration_costs_the_profiles_iteration_overhead(tmp_path):
    """`native_iteration_overhead` (calibrate --native tensorflow: a While's frame, every time round) adds its
    seconds once per iteration to the loop's native time: while_cond's 10 trips, nothing to XLA's side."""
    from importlib import resources

    text = resources.files("xcviz.hardware").joinpath("cpu_tf.yaml").read_text("utf-8")
    path = os.path.join(KERAS, "while_cond_frozen.pb")
    stats = {}
    for extra in (0.0, 1e-5):
        p = tmp_path / f"tf_{extra}.yaml"
        p.write_text(text.replace("name: cpu_tf", f"name: tf_{extra}") + f"native_iteration_overhead: {extra:.3e}\n")
        hw = load_hardware(str(p))
        assert hw.calibrated.iteration_overhead == extra
        stats[extra] = analyse(path, AnalysisOptions(hardware=str(p))).stats
    base, more = stats[0.0], stats[1e-5]
    assert more.time_before - base.time_before == pytest.approx(10 * 1e-5, rel=1e-6)
    # the loop is a fallback op here or a clustered one: either way the native side pays it, XLA's does not
    assert more.time_after - base.time_after in (pytest.approx(0.0, abs=1e-12), pytest.approx(10 * 1e-5, rel=1e-6))
