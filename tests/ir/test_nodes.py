"""ir.Nodes: a graph's nodes as columns with Node views made on demand. A loaded JSON graph's load, passes and
columns make no Node object, and the views made later equal the generic loader's; a changed column is new Nodes."""
from __future__ import annotations

import os
import sys

import pytest

import xcviz
from xcviz.ir import FrozenDict, Graph, Node, Nodes, TensorType, Value
from xcviz.passes.columns import NodeColumns
from xcviz.loaders import json_scanned
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
    monkeypatch.setattr(json_scanned, "read", lambda *a, **k: None)
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
    # read-only all the way down: every node's attributes a FrozenDict and its outputs a tuple
    assert {type(n.attrs) for n in g.nodes} == {FrozenDict} and {type(n.outputs) for n in g.nodes} == {tuple}


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
    assert [n.op for n in old] == ["Relu", "Neg"] and [n.outputs for n in old] == [(), ()]
    assert [n.op for n in new] == ["relu", "neg"] and [n.outputs for n in new] == [(t,), (t,)]
    assert [n.name for n in new.take([1, 0])] == ["b", "a"]
    with pytest.raises(ValueError):
        old.replaced(name=["c", "d"])
