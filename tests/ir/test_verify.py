"""verify(graph): every loaded graph passes it; a graph that breaks an invariant gets one clear error."""
import glob
from dataclasses import replace
import os

import pytest
from hypothesis import given, settings

from xcviz.errors import XcvizError
from xcviz.ir import Graph, Node, TensorType, Value
from xcviz.pipeline import load_file as load
from xcviz.passes.prepare import prepare
from xcviz.verify import verify

from tests.clustering.test_mark_properties import dags
from tests.support.paths import ROOT

GRAPHS = sorted(p for p in glob.glob(os.path.join(ROOT, "graphs", "*")) if "cycle" not in p)


@pytest.mark.parametrize("path", GRAPHS, ids=os.path.basename)
def test_every_example_graph_verifies(path):
    g = load(path)
    assert verify(g) is g


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(dags())
def test_random_graphs_verify(graph):
    verify(graph)


def _graph(*nodes, inputs=("x",)):
    return Graph("g", [Value(v, TensorType((2, 2), "float32")) for v in inputs], list(nodes), [], source="g.yaml")


def _node(name, op, *inputs, **kw):
    return Node(name, op, op, tuple(inputs), **kw)


def test_refuses_a_use_before_its_definition():
    g = prepare(_graph(_node("a", "relu", "x"), _node("b", "relu", "a")))
    g = replace(g, nodes=g.nodes.take([1, 0]))  # (by hand: a loaded graph is never out of order)
    with pytest.raises(XcvizError, match="defined after it"):
        verify(g)


def test_refuses_duplicate_names_and_unknown_refs():
    g = prepare(_graph(_node("a", "relu", "x"), _node("b", "relu", "a")))
    g = replace(g, nodes=[g.nodes[0], _node("a", "relu", "x", outputs=g.nodes[1].outputs)])
    with pytest.raises(XcvizError, match="duplicate node name 'a'"):
        verify(g)
    g = prepare(_graph(_node("a", "relu", "x")))
    g = replace(g, nodes=[_node("a", "relu", "y", outputs=g.nodes[0].outputs)])
    with pytest.raises(XcvizError, match="input 'y' is not defined"):
        verify(g)


def test_refuses_an_unresolved_op_and_a_wrong_arity():
    with pytest.raises(XcvizError, match="not a canonical op name"):
        verify(_graph(_node("a", "Relu", "x")))
    g = prepare(_graph(_node("a", "relu", "x")))
    g = replace(g, nodes=[_node("a", "relu", "x", "x", outputs=g.nodes[0].outputs)])
    with pytest.raises(XcvizError, match="relu takes 1 inputs, got 2"):
        verify(g)


def test_element_counts_fit_64_bits_and_the_limit(tmp_path):
    big = Graph("g", [Value("x", TensorType((2**32, 2**32, 2**32), "float32"))], [_node("a", "relu", "x")], ["a"],
                source="g.yaml")
    with pytest.raises(XcvizError, match="more than a 64-bit count can hold") as e:
        prepare(big)
    assert e.value.where == "g.yaml: input 'x'"
    g = prepare(_graph(_node("a", "relu", "x")))
    verify(g, max_elements=4)
    with pytest.raises(XcvizError, match="has 4 elements, over the limit of 3"):
        verify(g, max_elements=3)
    path = tmp_path / "g.yaml"
    path.write_text("inputs: [{name: x, shape: [n, 2], dtype: float32}]\nnodes: [{name: a, op: relu, inputs: [x]}]\n")
    load(str(path), max_elements=8, dims={"n": 4})
    with pytest.raises(XcvizError, match=r"input 'x': tensor float32\[n,2\] has 8 elements"):  # dims bound
        load(str(path), max_elements=7, dims={"n": 4})
