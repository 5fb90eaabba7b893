"""ir.Graph: read-only (frozen dataclass, tuples, FrozenDict, frozen nodes); passes return new graphs that share
what they leave alone; a graph pickles and compares as data."""
from __future__ import annotations

import dataclasses
import os
import pickle

import msgspec
import pytest

import xcviz
from xcviz.ir import FrozenDict, Nodes, bind_dims, relabel
from tests.support.paths import ROOT


def test_nothing_of_a_built_graph_changes_in_place():
    g = xcviz.load(os.path.join(ROOT, "graphs", "transformer_block.yaml"))
    node = g.nodes[0]
    with pytest.raises(AttributeError):
        node.op = "tanh"  # a Node is frozen: a changed node is msgspec.structs.replace
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.name = "other"
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.inputs[0].name = "other"
    with pytest.raises(TypeError):
        g.dims["batch"] = 4
    with pytest.raises(TypeError):
        g.output_names.update(y="z")
    with pytest.raises((TypeError, AttributeError)):
        g.nodes[0] = node
    with pytest.raises(AttributeError):
        g.outputs.append("x")
    assert type(g.inputs) is tuple and type(g.outputs) is tuple and type(g.dims) is FrozenDict
    assert msgspec.structs.replace(node, op="tanh").op == "tanh" and g.nodes[0].op == node.op


def test_bind_dims_is_a_new_graph_sharing_what_binding_leaves_alone():
    g = xcviz.load(os.path.join(ROOT, "graphs", "transformer_block.yaml"))
    columns, index = g.columns, g.index
    b = bind_dims(g, {"batch": 8})
    assert b.dims == {**g.dims, "batch": 8} and g.dims["batch"] == 1
    assert b.nodes is g.nodes and b.columns is columns and b.index is index


def test_a_graph_pickles_and_compares_as_data():
    g = xcviz.load(os.path.join(ROOT, "graphs", "transformer_block.yaml"))
    h = pickle.loads(pickle.dumps(g))
    assert h == g and type(h.dims) is FrozenDict and type(h.nodes) is Nodes
    assert dataclasses.replace(g, name="other") != g


def test_relabel_shares_the_nodes_and_refuses_what_is_not_a_label():
    g = xcviz.load(os.path.join(ROOT, "graphs", "transformer_block.yaml"))
    columns = g.columns
    r = relabel(g, name="other", source="<stdin>")
    assert (r.name, r.source, g.name) == ("other", "<stdin>", "transformer_block")
    assert r.nodes is g.nodes and r.columns is columns and g.source != "<stdin>"
    with pytest.raises(TypeError):
        relabel(g, nodes=[])


def test_references_are_parsed_once_into_typed_refs():
    """A node's inputs keep their text; the graph reads them as ir.Ref from the columns it parsed once
    (a name holding ':' that is not 'name:k' stays a name), and parse_ref is the one parser."""
    from xcviz.ir import Graph, Node, Ref, TensorType, Value, parse_ref

    t = TensorType((2,), "float32")
    g = Graph("g", [Value("x", t), Value("w:a", t)], [
        Node("split", "split", "Split", ["x"], outputs=[t, t]),
        Node("odd:name", "add", "Add", ["split:1", "w:a"], outputs=[t]),
        Node("y", "add", "Add", ["odd:name", "", "split"], outputs=[t]),
    ], ["y", "split:1"])
    assert parse_ref("split:1") == Ref("split", 1) and type(parse_ref("a")) is Ref
    assert parse_ref("odd:name") == Ref("odd:name", 0) and str(Ref("split", 1)) == "split:1" and str(Ref("y")) == "y"
    name, k = parse_ref("split:1")  # (a tuple: unpacks as before)
    assert (name, k) == ("split", 1)
    assert g.nodes[1].inputs == ("split:1", "w:a")  # (the text, as the file gave it)
    assert g.input_refs(1) == (Ref("split", 1), Ref("w:a", 0))
    assert g.input_refs(2) == (Ref("odd:name", 0), None, Ref("split", 0))
    assert g.input_sources(1) == (0, 3 + 1) and g.input_sources(2) == (1, -1, 0)  # (n + i: graph input i)
    assert g.output_refs == (Ref("y", 0), Ref("split", 1)) and all(type(r) is Ref for r in g.output_refs)
    assert [g.producer(r) for r in ("split:1", "odd:name", "x", "", "nope")] == [0, 1, None, None, None]
    with pytest.raises(AttributeError):
        g.output_refs[0].node = "z"
