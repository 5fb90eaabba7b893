"""The one graph: a read-only Graph whose nodes (ir.Nodes) are columns with Node views made on demand. A loaded
JSON graph's load, passes and columns make no Node object, and the views made later equal the generic loader's;
nothing about a built graph can be changed in place."""
from __future__ import annotations

import dataclasses
import os
import pickle
import sys

import msgspec
import pytest

import xcviz
from xcviz.ir import FrozenDict, Graph, Node, Nodes, TensorType, Value, bind_dims
from xcviz.ir.columns import NodeColumns
from xcviz.loaders import json_rows
from tests.support.paths import ROOT

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))


@pytest.fixture(scope="module")
def typed_path(tmp_path_factory):
    from generate import to_json
    from ratios import typed

    path = tmp_path_factory.mktemp("seq") / "typed.json"
    path.write_text(to_json(typed(3000, seed=3)), encoding="utf-8")
    return str(path)


def test_loading_makes_no_node_and_the_nodes_made_later_are_the_generic_ones(typed_path, monkeypatch):
    g = xcviz.load(typed_path)
    assert type(g.nodes) is Nodes and not g.nodes.made
    c = g.columns
    names = g.nodes.column("name")
    rows = [g.nodes.row(i) for i in range(len(g.nodes))]
    assert not g.nodes.made and len(g.nodes) == 3000 and g.position("n7") == 7  # (all of it from the columns)
    monkeypatch.setattr(json_rows, "read", lambda *a, **k: None)
    ref = xcviz.load(typed_path)
    assert type(ref.nodes) is Nodes
    rc = ref.columns
    assert rows == ref.nodes and names == [n.name for n in ref.nodes]
    assert (c.op, c.known, c.src.tolist(), c.port.tolist(), c.lens.tolist()) == \
        (rc.op, rc.known, rc.src.tolist(), rc.port.tolist(), rc.lens.tolist())
    assert [c.results[r] for r in c.rid.tolist()] == [rc.results[r] for r in rc.rid.tolist()]
    assert g.nodes == ref.nodes and ref.nodes == g.nodes and g == ref
    assert g.nodes.made and g.columns is c  # made once, and the graph's columns still describe them
    assert g.nodes[5] is g.nodes[5]
    # each node its own attribute dict and output list, as Node gives them
    assert len({id(n.attrs) for n in g.nodes}) == len({id(n.outputs) for n in g.nodes}) == 3000


def test_nodes_read_as_a_sequence_of_nodes():
    t = TensorType((2,), "float32")
    cols = {"name": ["a", "b"], "op": ["relu", "neg"], "op_type": ["Relu", "neg"], "inputs": [("x",), ("a",)],
            "outputs": [[t], []], "attrs": [{"k": 1}, {}]}
    seq = Nodes(2, dict(cols))
    assert seq.column("op_type") == ["Relu", "neg"] and seq.column("device") == [None, None]
    assert seq.row(1) == Node("b", "neg", "neg", ("a",)) and not seq.made
    nodes = [Node("a", "relu", "Relu", ("x",), attrs={"k": 1}, outputs=[t]), Node("b", "neg", "neg", ("a",))]
    assert seq == nodes and seq[-1] == nodes[-1] and seq[:1] == nodes[:1]
    assert list(reversed(seq)) == nodes[::-1] and seq.index(nodes[1]) == 1 and nodes[0] in seq
    assert seq + [] == nodes and [] + seq == nodes
    assert repr(seq) == repr(nodes) and seq.column("name") == ["a", "b"]
    g = Graph("g", [Value("x", t)], Nodes(2, dict(cols)), ["b"])
    assert NodeColumns(g).op_type == ["Relu", "neg"] and not g.nodes.made
    assert g.node("b").op == "neg" and g.nodes == Nodes.of(nodes)


def test_a_changed_column_is_new_nodes_and_the_old_ones_stay():
    t = TensorType((2,), "float32")
    old = Nodes.of([Node("a", "Relu", "Relu", ("x",)), Node("b", "Neg", "Neg", ("a",))])
    new = old.replaced(op=["relu", "neg"], outputs=[[t], [t]])
    assert [n.op for n in old] == ["Relu", "Neg"] and [n.outputs for n in old] == [[], []]
    assert [n.op for n in new] == ["relu", "neg"] and [n.outputs for n in new] == [[t], [t]]
    assert [n.name for n in new.take([1, 0])] == ["b", "a"]
    with pytest.raises(ValueError):
        old.replaced(name=["c", "d"])


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
