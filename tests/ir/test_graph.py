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
