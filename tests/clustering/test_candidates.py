"""find_candidates decides once per kind of node from the graph's columns: the same decisions as the per-node
rule below (the spec), on random hand-built graphs and every example graph; and the string-dtype refusal."""
from __future__ import annotations

import dataclasses
import glob
import os

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xcviz
from xcviz.clustering import ClusterOptions, find_candidates, normalize_device
from xcviz.ir import Graph, Node, TensorType, Value
from xcviz.ops import DEVICES, REGISTRY

from tests.support.strategies import clustering_profile, graph_specs, to_graph
from tests.support.paths import ROOT

STRING = "string tensor (XLA has no string type)"


def spec_decision(graph: Graph, node: Node, opts: ClusterOptions) -> tuple[str, bool, str | None, str | None]:
    """(device, candidate, code, reason) of one node, read from the node itself, rule by rule."""
    kind, dev = normalize_device(node.device, opts.device)
    opdef = REGISTRY.ops.get(node.op) if node.known else None
    supported = opts.supported_ops
    reads = any(graph.tensor_type(r).dtype == "string" for r in node.inputs if r)
    writes = any(t.dtype == "string" for t in node.outputs)

    allowed = node.op in (supported if supported is not None else opts.allow) or \
        node.op_type in (supported if supported is not None else opts.allow)
    rules = [  # (refused when, code, reason): the first that holds decides; none: a candidate
        (node.compile is False, "forced", "forced off (compile: false)"),
        (opdef is not None and "source" in opdef.groups and not opdef.devices, "argument", opdef and opdef.reason),
        (opdef is not None and opdef.name == "const" and isinstance(node.attrs.get("value"), str), "unsupported",
         "string constant (XLA has no string type)"),
        (reads or writes, "unsupported", STRING),
        (kind not in DEVICES, "device", f"no XLA device for {node.device!r}"),
        (supported is not None and not allowed, "unsupported", f"not in the supported-ops file ({node.op_type})"),
        (supported is None and (node.op in opts.deny or node.op_type in opts.deny), "denied",
         f"denied by --deny ({node.op_type})"),
        (allowed, None, None),
        (opdef is None, "unknown", node.note or f"unknown op {node.op_type}"),
        (opdef is not None and not opdef.compilable_on(kind), "unsupported",
         opdef and f"unsupported on {kind}: {opdef.why_not(kind)}"),
    ]
    code, reason = next(((c, r) for refused, c, r in rules if refused), (None, None))
    return dev, code is None, code, reason


def assert_spec(graph: Graph, opts: ClusterOptions) -> None:
    c = find_candidates(graph, opts)
    want = [spec_decision(graph, node, opts) for node in graph.nodes]
    assert list(zip(c.device, c.ok, c.code, c.reason)) == want
    # each node's kind holds its device, op, known, candidacy and compile flag
    assert [c.kinds[k] for k in c.kind_of.tolist()] == [
        (d[0], node.op, node.known, d[1], node.compile) for d, node in zip(want, graph.nodes)]


OPTIONS = [ClusterOptions(), ClusterOptions(device="gpu"), ClusterOptions(device="tpu"),
           ClusterOptions(allow=frozenset({"py_func"}), deny=frozenset({"tanh", "Mul"})),
           ClusterOptions(supported_ops=frozenset({"relu", "add", "Tanh", "my_op"}))]


def _string_profile():
    p = clustering_profile(devices=(None, None, "gpu:0", "cpu:1", "fpga:0", "/device:GPU:1"))

    @st.composite
    def inputs(draw):
        return [("x", (2, 2), draw(st.sampled_from(["float32", "float32", "string"])))]

    return dataclasses.replace(p, inputs=inputs(), declare=lambda draw, spec, node: [
        ((2, 2), draw(st.sampled_from(["float32", "float32", "float32", "string", "int64"])))])


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(graph_specs(_string_profile()).map(to_graph), st.sampled_from(OPTIONS))
def test_random_graphs_decide_as_the_per_node_rule(graph, opts):
    assert_spec(graph, opts)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(graph_specs(_string_profile()).map(to_graph), st.sampled_from(OPTIONS))
def test_notes_op_types_and_string_constants(graph, opts):
    """Unknown ops with and without a note, spellings that differ from the op, const values of every kind."""
    opaque = 0
    nodes = []
    for j, node in enumerate(graph.nodes):
        if node.op == "py_func":  # the k-th: every combination of a note or none and three spellings
            node = msgspec.structs.replace(node, note="custom op com.x::Y" if opaque % 2 else None,
                                           op_type=("PyFunc", "py_func", "Custom")[opaque % 3])
            opaque += 1
        if node.op == "tanh":
            node = msgspec.structs.replace(node, op_type="Tanh")
        if node.op == "const":
            node = msgspec.structs.replace(node, attrs={"value": ("text", 1.5, [1, 2], "abc")[j % 4]})
        nodes.append(node)
    assert_spec(dataclasses.replace(graph, nodes=nodes), opts)


@pytest.mark.parametrize("path", sorted(p for p in glob.glob(os.path.join(ROOT, "graphs", "*.*"))
                                        if p.endswith((".yaml", ".yml", ".json", ".onnx"))))
def test_example_graphs_decide_as_the_per_node_rule(path):
    g = xcviz.load(path, allow_unknown=True)
    for opts in OPTIONS[:3]:
        assert_spec(g, opts)


def _string_model(path: str) -> str:
    onnx = pytest.importorskip("onnx", reason="pip install -e '.[onnx]'")
    from onnx import TensorProto, helper

    vi = helper.make_tensor_value_info
    nodes = [helper.make_node("Equal", ["a", "b"], ["eq"], name="eq"),
             helper.make_node("Cast", ["eq"], ["eqf"], to=TensorProto.FLOAT, name="cast"),
             helper.make_node("Mul", ["eqf", "x"], ["m"], name="mul"),
             helper.make_node("Relu", ["m"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "string_equal", [vi("a", TensorProto.STRING, [3]), vi("b", TensorProto.STRING, [3]),
                                                  vi("x", TensorProto.FLOAT, [3])], [vi("y", TensorProto.FLOAT, [3])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def test_onnx_equal_on_strings_is_never_a_candidate(tmp_path):
    g = xcviz.load(_string_model(str(tmp_path / "eq.onnx")))
    c = xcviz.cluster(g, min_cluster_size=1)
    at = g.index
    assert (c.candidate[at["eq"]], c.code[at["eq"]], c.reason[at["eq"]]) == (False, "unsupported", STRING)
    # the nodes after it read and write no string: they cluster
    assert c.cluster_of[at["cast"]] == c.cluster_of[at["mul"]] == c.cluster_of[at["relu"]] >= 0
    assert c.cluster_of[at["eq"]] == -1


def test_a_string_graph_input_refuses_its_readers_only():
    s, f = TensorType((2,), "string"), TensorType((2,), "float32")
    nodes = [Node("id", "identity", "Identity", ("s",), outputs=[s]),
             Node("len", "shape", "Shape", ("id",), outputs=[TensorType((1,), "int64")]),
             Node("r", "relu", "Relu", ("x",), outputs=[f])]
    g = Graph("g", [Value("s", s), Value("x", f)], nodes, ["len", "r"])
    c = find_candidates(g, ClusterOptions())
    assert c.reason == [STRING, STRING, None]
    assert c.ok == [False, False, True]
    assert_spec(g, ClusterOptions())


def test_unknown_ops_are_told_apart_by_op_type_and_note():
    f = TensorType((2,), "float32")
    nodes = [Node(f"u{k}", "my_op", t, ("x",), known=False, note=note, outputs=[f])
             for k, (t, note) in enumerate([("MyOp", None), ("OtherOp", None), ("MyOp", "custom op a::B"), ("MyOp", None)])]
    g = Graph("g", [Value("x", f)], nodes, ["u3"])
    assert find_candidates(g, ClusterOptions()).reason == ["unknown op MyOp", "unknown op OtherOp", "custom op a::B",
                                                           "unknown op MyOp"]
    assert_spec(g, ClusterOptions())


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(graph_specs(_string_profile()).map(to_graph), st.sampled_from([1, 2, 4]))
def test_the_compiled_pass_hands_over_the_arrays_the_lists_hold(graph, min_size):
    """Clustering.arrays() from the compiled pass equals the arrays made from its lists."""
    import numpy as np

    from xcviz.clustering import mark

    opts = ClusterOptions(min_cluster_size=min_size)
    c = mark.mark_for_compilation(graph, find_candidates(graph, opts), opts)
    fast = c.arrays()
    c._arrays = None
    for a, b in zip(fast, c.arrays()):
        assert a.dtype == b.dtype == np.int64 and a.tolist() == b.tolist()


def test_mark_cost_and_the_stats_report_read_columns_only(tmp_path):
    import sys

    from xcviz.render.report_json import stats_report

    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from generate import to_json
    from ratios import typed

    path = str(tmp_path / "g.json")  # (every node typed, as the benchmark's graph: no symbolic sizes to report)
    with open(path, "w", encoding="utf-8") as f:
        f.write(to_json(typed(3000, seed=3)))
    g = xcviz.load(path)
    want_c = xcviz.cluster(g)
    want = stats_report(g, want_c, xcviz.stats(g, want_c))
    g = xcviz.load(path)
    c = xcviz.cluster(g)
    assert stats_report(g, c, xcviz.stats(g, c)) == want
    assert not g.nodes.made  # (clustering, costs and the report read columns and single rows only)
    assert (c.clusters, c.reason) == (want_c.clusters, want_c.reason)
