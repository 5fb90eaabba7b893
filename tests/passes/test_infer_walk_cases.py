"""Shape inference (the compiled walk, passes/infer.py) gives exactly what the reference loop gives, on the graphs
that were written for the keys way it replaced (infer_keys, numpy rounds of guesses; gone: the walk, compiled at
install, is as fast and needs no fallback).

Every node's output types, or the same error, on the example graphs, the benchmark generator's graphs
(typed and untyped), graphs whose declared types name dims the rules give as numbers, long chains whose
type comes from a second input, nodes the walk hands to Python one by one, and random graphs (hypothesis;
loaded from JSON, whose nodes stay columns, and from a mapping, whose nodes are objects).
"""
from __future__ import annotations

import glob
import json
import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xcviz
from tests.support.infer_spec import inferred
from tests.support.strategies import fuzz_mappings, infer_mappings, mapping_to_graph
from tests.support.paths import ROOT

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))


def result(load, reference: bool):
    """Each node's (name, op, known, note, outputs), or the error's text, by the reference loop or the walk."""
    try:
        g = inferred(load, reference)
        return [(n.name, n.op, n.known, n.note, tuple(n.outputs)) for n in g.nodes]
    except xcviz.XcvizError as e:
        return str(e)


def compare(load) -> bool:
    """Same result both ways; returns whether the graph loaded."""
    walk = result(load, False)
    assert walk == result(load, True)
    return not isinstance(walk, str)


def _write(tmp_path, doc: dict, name: str = "g.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("path", sorted(p for p in glob.glob(os.path.join(ROOT, "graphs", "*.*"))
                                        if p.endswith((".yaml", ".json", ".onnx"))))
def test_example_graphs(path):
    assert compare(lambda: xcviz.load(path, allow_unknown=True))


@pytest.mark.parametrize("typed", [False, True])
def test_generated_graphs(typed, tmp_path):
    """The benchmark graphs: declared types on every node (one round), none (several rounds of guesses)."""
    from generate import write
    from ratios import typed as typed_doc

    path = _write(tmp_path, typed_doc(4000, seed=5)) if typed else write(4000, str(tmp_path / "g.json"), seed=5)
    assert compare(lambda: xcviz.load(path))


@pytest.mark.parametrize("blocks", [3, 60, 600])
def test_wrong_declared_guesses(blocks, tmp_path):
    """Declared types that name dims the rules then give as numbers, declared shapes without a dtype,
    casts between: the first guess is wrong in places. A node that gives the type it declares passes no
    changed guess on, so one round puts every block right at once: any number of blocks settles (sixty
    outran the budget of rounds while each round put right only one stretch between type changes)."""
    nodes, prev = [], "x"
    for i in range(blocks):
        nodes += [
            {"name": f"m{i}", "op": "matmul", "inputs": [prev, "w"], "shape": ["B", "H"], "dtype": "float32"},
            {"name": f"r{i}", "op": "relu", "inputs": [f"m{i}"]},
            {"name": f"s{i}", "op": "shape", "inputs": [f"r{i}"], "dtype": "int64"},
            {"name": f"c{i}", "op": "cast", "inputs": [f"r{i}"], "attrs": {"to": "float16"}},
            {"name": f"t{i}", "op": "tanh", "inputs": [f"c{i}"], "shape": [4, "K"]},
            {"name": f"e{i}", "op": "cast", "inputs": [f"t{i}"], "attrs": {"to": "float32"}},
            {"name": f"a{i}", "op": "add", "inputs": [f"e{i}", f"r{i}"]},
        ]
        prev = f"a{i}"
    doc = {"name": "guesses", "inputs": [{"name": "x", "shape": [4, 8], "dtype": "float32"},
                                         {"name": "w", "shape": [8, 8], "dtype": "float32"}],
           "nodes": nodes, "outputs": [prev]}
    path = _write(tmp_path, doc)
    assert compare(lambda: xcviz.load(path)) and compare(lambda: mapping_to_graph(doc))


def test_a_chain_through_second_inputs(tmp_path):
    """Each node's type comes from its second input while its first is a graph input of another type (a
    guess from first inputs is wrong all along; the walk knows each input before its consumer)."""
    nodes = [{"name": f"a{i}", "op": "add", "inputs": ["z", f"a{i - 1}" if i else "x"]} for i in range(74)]
    doc = {"name": "second", "inputs": [{"name": "z", "shape": [8], "dtype": "float32"},
                                        {"name": "x", "shape": [4, 8], "dtype": "float32"}],
           "nodes": nodes, "outputs": [nodes[-1]["name"]]}
    path = _write(tmp_path, doc)
    assert compare(lambda: xcviz.load(path)) and compare(lambda: mapping_to_graph(doc))


def test_one_by_one_nodes(tmp_path):
    """':k' outputs, empty optional inputs, opaque ops, list attributes, reshape targets read from shape
    and const nodes, names with ':', a file out of order: run one by one, in order, each round."""
    nodes = []
    for i in range(80):
        nodes += [
            {"name": f"sp{i}", "op": "split", "inputs": ["x"], "num_outputs": 2, "attrs": {"axis": 1}},
            {"name": f"a{i}", "op": "add", "inputs": [f"sp{i}:1", f"sp{i}"]},
            {"name": f"o{i}", "op": "MysteryOp", "inputs": [f"a{i}"]},
            {"name": f"c{i}", "op": "concat", "inputs": [f"a{i}"] * 10, "attrs": {"axis": 0}},
            {"name": f"p{i}", "op": "transpose", "inputs": [f"c{i}"], "attrs": {"perm": [1, 0]}},
            {"name": f"s{i}", "op": "shape", "inputs": [f"p{i}"]},
            {"name": f"k{i}", "op": "const", "inputs": [], "attrs": {"value": [4 if i % 3 else 2, -1]}},
            {"name": f"r{i}", "op": "reshape", "inputs": [f"p{i}", f"k{i}"]},
            {"name": f"q{i}", "op": "reshape", "inputs": [f"r{i}", f"s{i}"]},
            {"name": f"odd:{i}", "op": "relu", "inputs": [f"q{i}"]},
        ]
    nodes.reverse()
    doc = {"name": "one_by_one", "inputs": [{"name": "x", "shape": [4, 8], "dtype": "float32"}], "nodes": nodes,
           "outputs": ["q0"]}
    path = _write(tmp_path, doc)
    assert compare(lambda: xcviz.load(path, allow_unknown=True))


def test_an_error_is_the_reference_loops(tmp_path):
    """A rule that fails: the walk's message is the loop's."""
    nodes = [{"name": f"r{i}", "op": "relu", "inputs": [f"r{i - 1}" if i else "x"]} for i in range(50)]
    nodes.append({"name": "bad", "op": "matmul", "inputs": ["r49", "x"]})
    doc = {"name": "bad", "inputs": [{"name": "x", "shape": [4, 8], "dtype": "float32"}], "nodes": nodes}
    path = _write(tmp_path, doc)
    msg = result(lambda: xcviz.load(path), False)
    assert "matmul" in msg and msg == result(lambda: xcviz.load(path), True)


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=infer_mappings())
def test_random_graphs(doc, tmp_path_factory):
    """Same types, or the same error."""
    path = _write(tmp_path_factory.mktemp("k"), doc)
    for load in (lambda: xcviz.load(path), lambda: mapping_to_graph(doc)):
        compare(load)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=infer_mappings(), data=st.data())
def test_random_graphs_with_declared_types(doc, data, tmp_path_factory):
    """The same random graphs with the types the reference loop gives declared in the file, on every node
    (exported models: the first guess is the file's) or on a drawn share of them (a guess partly declared,
    partly chased): the same types either way."""
    try:
        graph = inferred(lambda: mapping_to_graph(doc), True)
    except xcviz.XcvizError:
        return
    every = data.draw(st.booleans())
    doc = json.loads(json.dumps(doc))
    for nd, node in zip(doc["nodes"], (graph.nodes[graph.index[nd["name"]]] for nd in doc["nodes"])):
        t = node.outputs[0] if node.outputs else None
        if t is None or t.shape is None or t.dtype is None or None in t.shape:
            continue
        if every or data.draw(st.booleans()):
            nd["shape"], nd["dtype"] = list(t.shape), t.dtype
    path = _write(tmp_path_factory.mktemp("d"), doc)
    for load in (lambda: xcviz.load(path), lambda: mapping_to_graph(doc)):
        compare(load)


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=fuzz_mappings())
def test_fuzzed_graphs(doc, tmp_path_factory):
    """Many ops, declared types, attributes of every kind, opaque ops, bad graphs: the same either way."""
    path = _write(tmp_path_factory.mktemp("f"), doc)
    compare(lambda: xcviz.load(path, allow_unknown=True))
    compare(lambda: mapping_to_graph(doc, allow_unknown=True))
