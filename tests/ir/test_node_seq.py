"""A loaded JSON graph keeps its nodes as columns (ir.NodeSeq): loading, finalize, shape inference and the
graph's columns make no Node object, and the nodes made on demand equal the generic loader's."""
from __future__ import annotations

import os
import sys

import pytest

import xcviz
from xcviz.ir import Graph, Node, TensorType, Value
from xcviz.ir.nodeseq import NodeSeq, node_column
from xcviz.ir.columns import NodeColumns, columns_of
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
    assert type(g.nodes) is NodeSeq and g.nodes.lazy
    c = columns_of(g)
    names = node_column(g.nodes, "name")
    rows = [g.nodes.row(i) for i in range(len(g.nodes))]
    assert g.nodes.lazy and len(g.nodes) == 3000 and g.index["n7"] == 7  # (all of it from the columns)
    monkeypatch.setattr(json_rows, "read", lambda *a, **k: None)
    ref = xcviz.load(typed_path)
    assert type(ref.nodes) is list
    rc = columns_of(ref)
    assert rows == ref.nodes and names == [n.name for n in ref.nodes]
    assert (c.op, c.known, c.src.tolist(), c.port.tolist(), c.lens.tolist()) == \
        (rc.op, rc.known, rc.src.tolist(), rc.port.tolist(), rc.lens.tolist())
    assert [c.results[r] for r in c.rid.tolist()] == [rc.results[r] for r in rc.rid.tolist()]
    assert g.nodes == ref.nodes and ref.nodes == g.nodes and g == ref
    assert not g.nodes.lazy and columns_of(g) is c  # made once, and the graph's columns still describe them
    assert g.nodes[5] is g.nodes[5]
    # each node its own attribute dict and output list, as Node gives them
    assert len({id(n.attrs) for n in g.nodes}) == len({id(n.outputs) for n in g.nodes}) == 3000


def test_a_node_seq_reads_as_a_sequence_of_nodes():
    t = TensorType((2,), "float32")
    cols = {"name": ["a", "b"], "op": ["relu", "neg"], "op_type": ["Relu", "neg"], "inputs": [("x",), ("a",)],
            "outputs": [[t], []], "attrs": [{"k": 1}, {}]}
    seq = NodeSeq(2, dict(cols))
    assert seq.column("op_type") == ["Relu", "neg"] and seq.column("device") == [None, None]
    assert seq.row(1) == Node("b", "neg", "neg", ("a",)) and seq.lazy
    nodes = [Node("a", "relu", "Relu", ("x",), attrs={"k": 1}, outputs=[t]), Node("b", "neg", "neg", ("a",))]
    assert seq == nodes and seq[-1] == nodes[-1] and seq[:1] == nodes[:1]
    assert list(reversed(seq)) == nodes[::-1] and seq.index(nodes[1]) == 1 and nodes[0] in seq
    assert seq + [] == nodes and [] + seq == nodes and seq.copy() == nodes
    assert repr(seq) == repr(nodes) and seq.column("name") == ["a", "b"]
    with pytest.raises(AssertionError):
        seq.set_columns(op=["x", "y"])  # (the nodes are the truth once made)
    g = Graph("g", [Value("x", t)], NodeSeq(2, dict(cols)), ["b"])
    assert NodeColumns(g).op_type == ["Relu", "neg"] and g.nodes.lazy
    assert g.node("b").op == "neg" and not g.nodes.lazy
