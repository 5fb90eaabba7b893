"""No unknown-as-zero: coverage by FLOPs is exact, or bounds with the unknown-cost nodes named."""
import pytest
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.strategies import finalized_dags as dags
from xcviz.clustering import ClusterOptions, run_clustering
from xcviz.cost import compute_stats, load_hardware
from xcviz.ops import REGISTRY
from xcviz.ops.rules import Ctx

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)


def _node_flops(node):
    """The node's FLOPs by its op's rule, or None (the reference, node by node)."""
    opdef = REGISTRY.ops.get(node.op) if node.known else None
    if opdef is None or opdef.flops is None:
        return None
    try:
        return opdef.flops(Ctx([], {**opdef.attrs, **node.attrs}, [], list(node.outputs), len(node.outputs)),
                           list(node.outputs))
    except Exception:  # noqa: BLE001
        return None


@settings(max_examples=60, deadline=None)
@given(dags(), st.integers(0, 2**31))
def test_flops_coverage_bounds_hold_whatever_the_unknown_costs(g, seed):
    c = run_clustering(g, ClusterOptions(min_cluster_size=1))
    s = compute_stats(g, c, load_hardware("cpu"))
    unknown = s.unknown_cost_nodes
    if unknown is None:
        assert s.coverage_flops_min == s.coverage_flops == s.coverage_flops_max
        return
    assert s.coverage_flops is None and unknown["count"] == sum(unknown["ops"].values())
    assert set(unknown["nodes"]) <= {n.name for n in g.nodes}
    names = set(unknown["nodes"])
    assert all(c.cluster_of[g.index[n]] >= -1 for n in names)
    # any non-negative FLOPs for the unknown nodes give a coverage inside the bounds
    rng = random.Random(seed)
    known = [(j, f) for j, f in ((j, _node_flops(n)) for j, n in enumerate(g.nodes)) if f is not None]
    unk = [j for j in range(len(g.nodes)) if j not in dict(known)]
    if len(unk) != unknown["count"]:
        return  # the reference cannot state FLOPs the cost model can (input types): nothing to compare
    for _ in range(5):
        extra = {j: rng.choice([0, 1, 10**rng.randint(0, 9)]) for j in unk}
        cl = sum(f for j, f in known if c.cluster_of[j] >= 0) + sum(v for j, v in extra.items() if c.cluster_of[j] >= 0)
        tot = sum(f for _, f in known) + sum(extra.values())
        if tot:
            assert s.coverage_flops_min - 1e-9 <= cl / tot <= s.coverage_flops_max + 1e-9


def _lstm_tagger(tmp_path):
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 1, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 1, 16])
    w = lambda name, shape: helper.make_tensor(name, TensorProto.FLOAT, shape, np.zeros(shape, np.float32).ravel())  # noqa: E731
    nodes = [helper.make_node("MatMul", ["x", "p"], ["m"]), helper.make_node("Relu", ["m"], ["r"]),
             helper.make_node("LSTM", ["r", "W1", "R1"], ["l1"], hidden_size=8),
             helper.make_node("Squeeze", ["l1", "ax"], ["s1"]),
             helper.make_node("LSTM", ["s1", "W1", "R1"], ["l2"], hidden_size=8),
             helper.make_node("Squeeze", ["l2", "ax"], ["s2"]),
             helper.make_node("GRU", ["s2", "W2", "R2"], ["g"], hidden_size=16),
             helper.make_node("Squeeze", ["g", "ax"], ["y"])]
    inits = [w("p", [8, 8]), w("W1", [1, 32, 8]), w("R1", [1, 32, 8]), w("W2", [1, 48, 8]), w("R2", [1, 48, 16]),
             helper.make_tensor("ax", TensorProto.INT64, [1], [1])]
    model = helper.make_model(helper.make_graph(nodes, "tagger", [x], [y], inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "tagger.onnx"
    onnx.save(model, str(path))
    return str(path)


def test_recurrent_layers_that_fall_back_count_their_flops(tmp_path):
    """LSTM and GRU have FLOP rules: denied, they fall back and their FLOPs count against the coverage
    (it said 100 % when they counted 0); allowed, they compile (lax.scan) and everything is covered."""
    from xcviz.pipeline import AnalysisOptions, analyse
    from xcviz.render.tables import summary_line

    path = _lstm_tagger(tmp_path)
    s = analyse(path, AnalysisOptions(min_cluster_size=1, deny={"LSTM", "GRU"})).stats
    assert s.unknown_cost_nodes is None and s.fallback_nodes == 3
    assert 0 < s.coverage_flops < 0.1  # the MatMul and the Squeezes are a sliver of the recurrent FLOPs
    assert "100 %" not in str(summary_line(s))
    s = analyse(path, AnalysisOptions(min_cluster_size=1)).stats
    assert s.coverage_flops == 1.0 and s.fallback_nodes == 0


def test_unknown_cost_inside_clusters_gives_a_lower_bound():
    from xcviz.cost.coverage import flops_coverage

    class N:
        def __init__(self, name, op_type):
            self.name, self.op_type = name, op_type

    nodes = [N("a", "MatMul"), N("l", "LSTM"), N("b", "Relu")]
    got = flops_coverage(nodes, np.array([False, True, False]), np.array([True, True, False]), 62, 100)
    assert (got["coverage_flops"], got["coverage_flops_min"], got["coverage_flops_max"]) == (None, 0.62, 1.0)
    assert got["unknown_cost_nodes"] == {"count": 1, "ops": {"LSTM": 1}, "nodes": ["l"]}
