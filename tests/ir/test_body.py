"""Control-flow bodies are typed IR values (ir.Body): frozen, found by type, written and read by the text IR;
they run only through the runtime's runner, handed to the op by the call that evaluates it."""
import dataclasses
import os

import numpy as np
import pytest

import xcviz
from xcviz import XcvizError, parse_graph, print_graph
from xcviz.ir import Body, Graph
from tests.support.paths import TESTS

onnx = pytest.importorskip("onnx", reason="ONNX control flow: pip install -e '.[onnx]'")

# a TorchScript greedy decoder: a Loop whose body holds an If (two branches)
MODEL = os.path.join(TESTS, "data", "exports", "greedy_decode_torchscript.onnx")


def _loop_body(g):
    [(node, body)] = [(n, v) for n in g.nodes for v in n.attrs.values() if isinstance(v, Body)]
    return node, body


def test_a_body_is_a_frozen_typed_value_not_a_string():
    g = xcviz.load(MODEL)
    node, body = _loop_body(g)
    assert not isinstance(body, str) and isinstance(body.graph, Graph)
    assert str(body).startswith("<subgraph ") and str(body) == body.label
    with pytest.raises(dataclasses.FrozenInstanceError):
        body.graph = None
    with pytest.raises(TypeError):
        body.declared["x"] = ()
    # equal labels (the hash of the body's bytes) are equal bodies; a string is never one
    same = Body(body.label)
    assert same == body and hash(same) == hash(body) and body != body.label
    assert g.bodies[(node.name, "body")] is body.graph


def test_bodies_round_trip_through_the_text_ir():
    g = xcviz.load(MODEL)
    node, body = _loop_body(g)
    text = print_graph(g)
    assert f'body=body<"{body.label}">' in text
    back = parse_graph(text)
    read = back.node(node.name).attrs["body"]
    assert isinstance(read, Body) and read == body and read.graph is None
    assert print_graph(back) == text
    with pytest.raises(XcvizError, match="not kept"):  # its graph stays with the model file: one line
        xcviz.run(back, seed=0, mode="native")


def test_a_malformed_body_in_text_says_where():
    text = 'graph g(%x: f32[2]) {\n  %y: f32[2] = Relu(%x) {b=body<3>}\n  return %y\n}\n'
    with pytest.raises(XcvizError, match="quoted label"):
        parse_graph(text)


def test_a_body_runs_only_through_the_runner_the_runtime_hands_down():
    from xcviz.ops import REGISTRY
    from xcviz.ops.arrays import Unsupported
    from xcviz.runtime.node import BODIES, eval_node

    g = xcviz.load(MODEL)
    node, body = _loop_body(g)
    attrs = {**REGISTRY.ops[node.op].attrs, **node.attrs, "_op_type": node.op_type, "_num_outputs": len(node.outputs)}
    inputs = xcviz.runtime.inputs.bind_inputs(g, None, 0)
    got = xcviz.runtime.execute.execute(g, inputs, "native", keep_all=True).env
    args = [got[r] if r else None for r in node.inputs]
    # called as a plain function, outside the runtime, the op has no runner: nothing was installed at import
    with pytest.raises(Unsupported, match="only under xcviz's runtime"):
        REGISTRY.ops[node.op].native(attrs, *args)
    outs = eval_node(node, args)   # the runtime's call hands its runner down
    want = [got[f"{node.name}:{k}" if k else node.name] for k in range(len(outs))]
    for a, b in zip(outs, want):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert BODIES.run is not None and BODIES.call is not None


def test_the_default_compile_cache_lives_on_the_graph():
    from xcviz.runtime import execute as ex

    g = xcviz.load(MODEL)
    cache = ex.graph_cache(g)
    assert ex.graph_cache(g) is cache and g.run_state["compile_cache"][1] is cache
    ex.clear_caches()
    assert ex.graph_cache(g) is not cache
    assert not hasattr(ex, "_GRAPH_CACHES")
