"""Loaders: xcviz YAML and JSON, ONNX JSON, symbolic dims, format detection, and clear errors."""
import base64
import json
import os

import numpy as np
import pytest

import xcviz
from xcviz.errors import XcvizError
from tests.support.paths import GRAPHS



def test_yaml_and_json_forms_load_identically(tmp_path):
    import yaml

    data = yaml.safe_load(open(os.path.join(GRAPHS, "seed_demo.yaml")))
    p = tmp_path / "seed.json"
    p.write_text(json.dumps(data))
    a, b = xcviz.load(os.path.join(GRAPHS, "seed_demo.yaml")), xcviz.load(str(p))
    assert [(n.name, n.op, n.outputs) for n in a.nodes] == [(n.name, n.op, n.outputs) for n in b.nodes]


def test_ops_from_three_vocabularies_map_to_one_registry(write_graph):
    g = xcviz.load(write_graph("""
name: v
inputs: [{name: x, shape: [2, 2], dtype: float32}]
nodes:
  - {name: a, op: Relu, inputs: [x]}
  - {name: b, op: relu, inputs: [a]}
  - {name: c, op: BiasAdd, inputs: [b, x]}
  - {name: d, op: AddV2, inputs: [c, x]}
  - {name: e, op: Add, inputs: [d, x]}
outputs: [e]
"""))
    assert [n.op for n in g.nodes] == ["relu", "relu", "bias_add", "add", "add"]


def test_shape_inference_and_missing_shapes(write_graph):
    g = xcviz.load(os.path.join(GRAPHS, "seed_demo.yaml"))
    assert g.node("c1").outputs[0].shape == (1, 8, 32, 32)
    assert g.node("p1").outputs[0].shape == (1, 8, 16, 16)
    # no shapes at all: clustering works, bytes are unknown (never a wrong 0)
    g = xcviz.load(write_graph("name: s\nnodes:\n  - {name: a, op: relu, inputs: [x]}\n  - {name: b, op: relu, inputs: [a]}\ninputs: [x]\noutputs: [b]\n"))
    c = xcviz.cluster(g, min_cluster_size=1)
    s = xcviz.stats(g, c)
    assert len(c.clusters) == 1 and s.boundary_bytes is None and s.speedup_estimate is None


def test_symbolic_dims_stay_symbolic_until_bound(write_graph):
    text = """
name: sym
inputs: [{name: x, shape: [batch, 16], dtype: float32}, {name: w, shape: [16, 8], dtype: float32}]
nodes:
  - {name: m, op: matmul, inputs: [x, w]}
  - {name: r, op: relu, inputs: [m]}
outputs: [r]
"""
    p = write_graph(text)
    g = xcviz.load(p)
    assert g.node("m").outputs[0].shape == ("batch", 8)
    s = xcviz.stats(g, xcviz.cluster(g, min_cluster_size=1))
    assert s.boundary_bytes is None
    g = xcviz.load(p, dims={"batch": 8})
    s = xcviz.stats(g, xcviz.cluster(g, min_cluster_size=1))
    assert s.boundary_bytes == 8 * 16 * 4 + 16 * 8 * 4 + 8 * 8 * 4


def _onnx_json_model():
    import onnx
    from google.protobuf import json_format
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.ones((4, 3), np.float32), "W")
    nodes = [helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm"),
             helper.make_node("Relu", ["Y"], ["Z"], name="act"),
             helper.make_node("Frobnicate", ["Z"], ["F"], name="frob", domain="com.example"),
             helper.make_node("Softmax", ["F"], ["O"], name="sm", axis=-1)]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 4])],
                              [helper.make_tensor_value_info("O", TensorProto.FLOAT, ["batch", 3])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    return model, json_format.MessageToJson(model)


def test_onnx_json_and_binary(tmp_path):
    model, text = _onnx_json_model()
    assert '"opType"' in text and "rawData" in text
    pj = tmp_path / "tiny.json"
    pj.write_text(text)
    po = tmp_path / "tiny.onnx"
    po.write_bytes(model.SerializeToString())
    for p in (pj, po):
        g = xcviz.load(str(p))
        assert [n.op for n in g.nodes][:2] == ["matmul", "relu"]
        assert g.node("Y" if False else "mm").outputs[0].shape == ("batch", 3)
        c = xcviz.cluster(g, min_cluster_size=1)
        assert c.reason[g.index["frob"]] == "custom op com.example::Frobnicate"
        w = next(v for v in g.inputs if v.name == "W")
        assert w.data is not None and w.data.shape == (4, 3)


def test_onnx_standard_op_missing_from_registry_falls_back(tmp_path):
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Relu", ["X"], ["Y"]), helper.make_node("ImageDecoder", ["Y"], ["Z"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 2])],
                              [helper.make_tensor_value_info("Z", TensorProto.FLOAT, [])])
    p = tmp_path / "m.onnx"
    p.write_bytes(helper.make_model(graph).SerializeToString())
    g = xcviz.load(str(p))
    assert [n.name for n in g.nodes] == ["Relu_0", "ImageDecoder_1"]
    c = xcviz.cluster(g, min_cluster_size=1)
    assert c.reason[1] == "no XLA lowering in xcviz for ImageDecoder"


def test_nodes_out_of_order_are_sorted(write_graph):
    g = xcviz.load(write_graph("""
name: o
inputs: [{name: x, shape: [2], dtype: float32}]
nodes:
  - {name: b, op: relu, inputs: [a]}
  - {name: a, op: relu, inputs: [x]}
outputs: [b]
"""))
    assert [n.name for n in g.nodes] == ["a", "b"]


@pytest.mark.parametrize("body, message", [
    ("nodes:\n  - {name: a, op: rleu, inputs: [x]}\ninputs: [x]\n", "unknown op 'rleu' (hint: did you mean 'relu'"),
    ("nodes:\n  - {name: a, op: relu, inputs: [y]}\ninputs: [x]\n", "input 'y' is not defined"),
    ("nodes:\n  - {name: a, op: relu, inputs: [x]}\n  - {name: a, op: relu, inputs: [x]}\ninputs: [x]\n", "duplicate node name 'a'"),
    ("nodes:\n  - {name: a, op: relu, inputs: [b]}\n  - {name: b, op: relu, inputs: [a]}\n", "the graph has a cycle: a -> b -> a"),
    ("nodes:\n  - {name: a, op: relu, inputs: [x]}\n  - {name: b, op: relu, inputs: ['a:1']}\ninputs: [x]\n", "asks for output 1"),
    ("nodes:\n  - {name: a, op: Softmax, inputs: [x], attrs: {axis: last}}\ninputs: [x]\n", "attribute 'axis' must be int"),
    ("inputs: [{name: x, shape: [3, 4]}, {name: y, shape: [5, 6]}]\nnodes:\n  - {name: m, op: matmul, inputs: [x, y]}\n", "matmul 3x4 @ 5x6"),
    ("nodes:\n  - {name: a, op: relu, inputs: [x]\ninputs: [x]\n", "malformed YAML"),
    ("nodes: {a: 1}\n", "`nodes` must be a list"),
    ("outputs: [zz]\nnodes:\n  - {name: a, op: relu, inputs: [x]}\ninputs: [x]\n", "graph output 'zz' does not exist"),
])
def test_bad_input_errors(write_graph, body, message):
    with pytest.raises(XcvizError) as e:
        xcviz.load(write_graph("name: bad\n" + body))
    assert message in str(e.value)
    assert "g.yaml" in str(e.value)


def test_malformed_yaml_has_line_and_column(write_graph):
    with pytest.raises(XcvizError) as e:
        xcviz.load(write_graph("name: bad\nnodes:\n  - {name: a, op: relu, inputs: [x]\n"))
    assert "g.yaml:4:1" in str(e.value) or "g.yaml:3:" in str(e.value)


def test_yaml_python_tags_are_refused(write_graph):
    with pytest.raises(XcvizError, match="malformed YAML"):
        xcviz.load(write_graph("name: !!python/object/apply:os.system ['echo hi']\nnodes: []\n"))


def test_declared_shape_checked_per_node_even_when_equal_to_an_earlier_one(write_graph):
    """Declared types are read once per distinct (shape, dtype); True == 1 in Python, but [true] is no size."""
    text = """
name: t
inputs: [{name: x, shape: [1], dtype: float32}]
nodes:
  - {name: a, op: relu, inputs: [x], shape: [1], dtype: float32}
  - {name: b, op: relu, inputs: [a], shape: [true], dtype: float32}
"""
    with pytest.raises(xcviz.XcvizError, match="dimension True is neither an integer nor a symbolic name") as e:
        xcviz.load(write_graph(text))
    assert "node 'b'" in str(e.value)


_DUP_NODES = [{"name": f"n{i}", "op": "relu", "inputs": [f"n{i - 1}" if i else "x"]} for i in range(5)]


@pytest.mark.parametrize("doc, key", [
    # a repeated key in a plain node (the loader's fast path counts these as it goes)
    ('{"nodes": [{"name": "a", "op": "relu", "inputs": ["x"], "op": "tanh"}], "inputs": ["x"]}', "op"),
    ('{"nodes": [{"name": "a", "name": "b", "op": "relu"}], "inputs": ["x"]}', "name"),
    # in attributes, in a graph input, at the top level, in dims
    ('{"nodes": [{"name": "a", "op": "softmax", "inputs": ["x"], "attrs": {"axis": 1, "axis": 0}}], "inputs": ["x"]}', "axis"),
    ('{"nodes": [{"name": "a", "op": "relu", "inputs": ["x"]}], "inputs": [{"name": "x", "dtype": "f32", "dtype": "f16"}]}', "dtype"),
    ('{"nodes": [{"name": "a", "op": "relu", "inputs": ["x"]}], "inputs": ["x"], "inputs": ["x"]}', "inputs"),
    ('{"nodes": [], "dims": {"B": 1, "B": 2}}', "B"),
    # a repeated key comes first even where the document has a later error (the strict parser's order)
    ('{"nodes": [{"name": "a", "op": "relu", "inputs": ["x"]}, {"name": 5}], "inputs": ["x"], "name": "g", "name": "h"}', "name"),
    ('{"nodes": [{"name": "a", "op": "nosuch", "inputs": ["y"]}], "inputs": ["x"], "outputs": ["a"], "outputs": ["a"]}', "outputs"),
    # ONNX-like JSON is checked before it is read
    ('{"irVersion": 8, "graph": {"name": "g", "name": "h", "node": []}}', "name"),
])
def test_json_duplicate_keys_refused_wherever_they_are(write_graph, doc, key):
    with pytest.raises(XcvizError) as e:
        xcviz.load(write_graph(doc, "g.json"))
    assert f"duplicate key {key!r}" in str(e.value)
    assert "g.json:1:" in str(e.value)  # with its place in the file


@pytest.mark.parametrize("where", range(len(_DUP_NODES)))
def test_json_duplicate_key_in_any_node_of_a_plain_graph(write_graph, where):
    """Every node on the fast path: a repeated key in any one of them is still found."""
    nodes = [json.dumps(n) for n in _DUP_NODES]
    nodes[where] = nodes[where][:-1] + ', "inputs": ["x"]}'
    text = '{"inputs": ["x"], "nodes": [\n' + ",\n".join(nodes) + "\n]}"
    with pytest.raises(XcvizError, match="duplicate key 'inputs'"):
        xcviz.load(write_graph(text, "g.json"))
    ok = '{"inputs": ["x"], "nodes": [\n' + ",\n".join(json.dumps(n) for n in _DUP_NODES) + "\n]}"
    assert [n.name for n in xcviz.load(write_graph(ok, "ok.json")).nodes] == [f"n{i}" for i in range(5)]


@pytest.mark.slow
def test_gc_paused_leaves_built_objects_old_and_others_frozen_state_alone():
    """What a big pause builds goes to the oldest generation (no huge young generation left for the next
    allocation to scan), without unfreezing what the process froze itself; a small pause's objects are
    left to the usual collections."""
    import gc

    from xcviz.ir import gc_paused

    assert gc.isenabled() and gc.get_freeze_count() == 0
    with gc_paused():
        built = [[i] for i in range(50_000)]
    assert gc.isenabled()
    assert gc.get_count()[0] < 1000 and gc.get_freeze_count() == 0
    assert any(built[-1] is o for o in gc.get_objects(generation=2))
    with gc_paused():
        small = [[i] for i in range(100)]
    assert any(small[-1] is o for o in gc.get_objects(generation=0))
    mine = [[1]]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused():
            more = [[i] for i in range(20_000)]
        assert gc.get_freeze_count() >= frozen + len(more)  # the process's frozen objects stay frozen
    finally:
        gc.unfreeze()
    del mine
