"""While loops' trip counts from their induction variable (cost.trips), checked against the iterations the
loop really runs: onnxruntime's, counted by a scan output of the loop; the exported greedy decoders' tokens;
a Keras LSTM's time steps; the bound a TF while_loop's source writes."""
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="ONNX control flow: pip install -e '.[onnx]'")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as T, helper, numpy_helper as nh  # noqa: E402

from xcviz.cost.keys import control_node_cost  # noqa: E402
from xcviz.cost.trips import onnx_loop_trips  # noqa: E402
from xcviz.pipeline import analyse, load_file  # noqa: E402
from tests.support.paths import TESTS  # noqa: E402

EXPORTS = os.path.join(TESTS, "data", "exports")


def _while_model(tmp_path, cond: str, start=0, step=1, limit=7, op="Add", m=None, data_stop=False) -> str:
    """A while loop as exporters write it (M absent or INT64_MAX), counter `i` carried from `start`, stepped
    by `step` (`op` Add or Sub), the condition `cond` over the stepped value `j` and the constant limit `L`;
    every iteration's j is a scan output, so the run says how many iterations ran. `data_stop`: the condition
    is also ANDed with a value of the data (x < 1e9: always true here)."""
    nodes = [helper.make_node(op, ["i_in", "S"], ["j"]), helper.make_node("Identity", ["j"], ["j_scan"])]
    lhs, rhs, kind = {"j<L": ("j", "L", "Less"), "j<=L": ("j", "L", "LessOrEqual"), "L>j": ("L", "j", "Greater"),
                      "j>L": ("j", "L", "Greater"), "j>=L": ("j", "L", "GreaterOrEqual"),
                      "iter<L": ("n1", "L", "Less")}[cond]
    if cond == "iter<L":
        nodes.append(helper.make_node("Add", ["iter", "one"], ["n1"]))
    nodes.append(helper.make_node(kind, [lhs, rhs], ["c0"]))
    if data_stop:
        nodes += [helper.make_node("Less", ["x", "big"], ["c1"]), helper.make_node("And", ["c0", "c1"], ["c2"]),
                  helper.make_node("Cast", ["c2"], ["c3"], to=T.INT64), helper.make_node("Cast", ["c3"], ["cond_out"],
                                                                                    to=T.BOOL)]
    else:
        nodes.append(helper.make_node("Not", ["c0"], ["nc"]))
        nodes.append(helper.make_node("Not", ["nc"], ["cond_out"]))
    body = helper.make_graph(
        nodes, "body",
        [helper.make_tensor_value_info("iter", T.INT64, []), helper.make_tensor_value_info("cond_in", T.BOOL, []),
         helper.make_tensor_value_info("i_in", T.INT64, [])],
        [helper.make_tensor_value_info("cond_out", T.BOOL, []), helper.make_tensor_value_info("j", T.INT64, []),
         helper.make_tensor_value_info("j_scan", T.INT64, [])],
        [nh.from_array(np.array(step, np.int64), "S"), nh.from_array(np.array(1, np.int64), "one")])
    inits = [nh.from_array(np.array(True), "c"), nh.from_array(np.array(start, np.int64), "i0"),
             nh.from_array(np.array(limit, np.int64), "L"), nh.from_array(np.array(1e9, np.float32), "big")]
    if m is not None:
        inits.append(nh.from_array(np.array(m, np.int64), "M"))
    g = helper.make_graph([helper.make_node("Loop", ["M" if m is not None else "", "c", "i0"], ["last", "seen"],
                                            body=body)], "g",
                          [helper.make_tensor_value_info("x", T.FLOAT, [])],
                          [helper.make_tensor_value_info("last", T.INT64, []),
                           helper.make_tensor_value_info("seen", T.INT64, ["n"])], inits)
    path = tmp_path / "w.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return str(path)


def _runs(path: str) -> int:
    """The iterations onnxruntime runs (the scan output's length)."""
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return len(sess.run(None, {"x": np.array(0.5, np.float32)})[1])


def _loop(path):
    g = load_file(path)
    return g, next(n for n in g.nodes if n.op == "loop")


@pytest.mark.parametrize("cond, start, step, limit, op", [
    ("j<L", 0, 1, 7, "Add"), ("j<L", 3, 2, 10, "Add"), ("j<=L", 0, 1, 7, "Add"), ("L>j", 0, 3, 10, "Add"),
    ("j>L", 10, 1, 2, "Sub"), ("j>=L", 10, 3, 0, "Sub"), ("iter<L", 0, 1, 5, "Add"), ("j<L", 5, 1, 3, "Add"),
])
def test_the_trip_count_a_counter_sets_is_the_iterations_onnxruntime_runs(tmp_path, cond, start, step, limit, op):
    path = _while_model(tmp_path, cond, start, step, limit, op)
    g, loop = _loop(path)
    assert onnx_loop_trips(g, loop) == _runs(path)


def test_a_condition_anded_with_the_data_is_bounded_by_its_counter(tmp_path):
    path = _while_model(tmp_path, "j<L", limit=6, data_stop=True)   # (cast to int64 and back: seen through)
    g, loop = _loop(path)
    assert onnx_loop_trips(g, loop) == _runs(path) == 6
    flops, nbytes, why, runs = control_node_cost(g, loop)
    assert why is None and runs[0] == 6


def test_a_constant_trip_count_smaller_than_the_bound_wins(tmp_path):
    path = _while_model(tmp_path, "j<L", limit=50, m=4)
    g, loop = _loop(path)
    assert _runs(path) == 4 and control_node_cost(g, loop)[3][0] == 4


def test_a_counter_that_moves_away_from_its_limit_gives_no_bound(tmp_path):
    g, loop = _loop(_while_model(tmp_path, "j<L", step=-1, limit=7))
    assert onnx_loop_trips(g, loop) is None
    assert control_node_cost(g, loop)[2].startswith("no trip count: its condition ends it")


@pytest.mark.parametrize("name", ["greedy_decode_torchscript.onnx", "greedy_whileloop_dynamo.onnx"])
def test_the_exported_greedy_decoders_run_as_many_steps_as_their_bound(name):
    """torch.onnx's scripted loop (its condition an If whose else branch is false) and the dynamo export of
    torch's while_loop (i < max_len AND NOT all done): 8 steps, one token each after the start token."""
    path = os.path.join(EXPORTS, name)
    g, loop = _loop(path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {"h0": np.zeros((2, 16), np.float32), "start": np.array([3, 1], np.int64)}
    tokens = sess.run(None, feeds)[0]
    assert onnx_loop_trips(g, loop) == tokens.shape[1] - 1 == 8
    s = analyse(path).stats
    assert s.speedup_estimate is not None and s.time_before is not None


tf_protos = pytest.importorskip("google.protobuf", reason="TF GraphDefs: pip install protobuf")
KERAS = os.path.join(TESTS, "data", "tf_keras")


def _tf_while(path):
    from xcviz.cost.tf_control import _graph
    from xcviz.cost.trips import Scope, tf_while_trips

    g = load_file(path)
    node = next(n for n in g.nodes if n.op in ("tf.While", "tf.StatelessWhile"))
    types = [g.tensor_type(r) for r in node.inputs]
    return g, node, tf_while_trips(_graph(node.attrs["cond"], types), _graph(node.attrs["body"], types),
                                   list(node.inputs), Scope(g))


def test_a_tf_while_loop_is_bounded_by_its_counter():
    """tools/tf_keras_corpus.py: while_loop(cond = i < 10 and sum(|acc|) < 100, body = i + 1, ...)."""
    g, node, trips = _tf_while(os.path.join(KERAS, "while_cond_frozen.pb"))
    assert trips == 10
    flops, nbytes, why, runs = control_node_cost(g, node)
    assert why is None and flops > 0 and runs[0] >= 10


@pytest.mark.parametrize("name", ["text_lstm_frozen.pb", "text_lstm_savedmodel"])
def test_a_keras_lstm_loop_runs_once_per_time_step(name):
    g, node, trips = _tf_while(os.path.join(KERAS, name))
    (tokens,) = g.inputs   # [batch, time steps]: an Embedding feeds the LSTM
    assert trips == tokens.type.shape[1] == 12
    assert control_node_cost(g, node)[2] is None
