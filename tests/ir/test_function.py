"""TF library functions are typed IR values (ir.TFFunction): frozen, found by type (never as a string), written
and read by the text IR as function<"NAME">; only the loader's carry the FunctionDef that runs."""
import dataclasses
import os

import numpy as np
import pytest

import xcviz
from xcviz import XcvizError, parse_graph, print_graph
from xcviz.ir import FrozenDict, TFFunction
from tests.support.paths import TESTS

pytest.importorskip("google.protobuf", reason="TF GraphDefs: pip install protobuf")

MODEL = os.path.join(TESTS, "data", "tf_keras", "while_cond_savedmodel")  # a StatelessWhile and a StatelessIf


def _functions(g) -> dict:
    return {(n.name, k): v for n in g.nodes for k, v in n.attrs.items() if isinstance(v, TFFunction)}


def test_a_function_is_a_frozen_typed_value_not_a_string():
    g = xcviz.load(MODEL)
    found = _functions(g)
    assert {k for _, k in found} == {"body", "cond", "then_branch", "else_branch"}
    fn = next(v for (_, k), v in found.items() if k == "body")
    assert not isinstance(fn, str) and fn.kept and fn.fdef.signature.name == fn.name == str(fn)
    assert type(fn.library) is FrozenDict and fn.name in fn.library
    assert len({id(v.library) for v in found.values()}) == 1  # (one library, shared)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fn.name = "other"
    with pytest.raises(TypeError):
        fn.library["x"] = None
    # equal names are equal functions; a string never is one
    assert TFFunction(fn.name) == fn and hash(TFFunction(fn.name)) == hash(fn) and fn != fn.name
    assert repr(fn) == repr(fn.name)  # (messages quote an attribute by its repr)


def test_functions_round_trip_through_the_text_ir_and_only_the_loaders_run():
    g = xcviz.load(MODEL)
    text = print_graph(g)
    (node, key), fn = next((k, v) for k, v in sorted(_functions(g).items()) if k[1] == "body")  # the While's
    assert f'{key}=function<"{fn.name}">' in text
    back = parse_graph(text)
    read = back.node(node).attrs[key]
    assert type(read) is TFFunction and read == fn and not read.kept
    assert print_graph(back) == text
    feeds = {v.name: np.ones([int(d) for d in v.type.shape], v.type.dtype) for v in g.inputs if not v.is_param}
    xcviz.run(g, feeds, mode="native")  # the loader's: its FunctionDef runs (and its graph is kept, built once)
    body = _functions(g)[(node, key)]
    assert body.run_state["graph"] is not None
    with pytest.raises(XcvizError, match="not in the graph's library"):  # read back from text: one line
        xcviz.run(back, feeds, mode="native")


def test_a_malformed_function_in_text_says_where():
    text = 'graph g(%x: f32[2]) {\n  %y: f32[2] = Relu(%x) {f=function<3>}\n  return %y\n}\n'
    with pytest.raises(XcvizError, match="quoted name"):
        parse_graph(text)
