"""The compiled JSON reader (loaders/json_scan, json_join, json_scanned) gives exactly what the generic path (parse +
schema.read_mapping, the executable spec) gives: the same nodes (every field, `where` included), graph fields and
columns, or the same error, on random and fuzzed documents, on documents with every optional node field, odd
spacing and unicode names, on the example and generated graphs, and on the hostile corpus. Every JSON file
without a backslash, whatever its size, is offered to the scanner first."""
from __future__ import annotations

import glob
import json
import os
import sys
import tempfile

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xcviz  # noqa: E402
from tests.support.strategies import fuzz_mappings, json_documents  # noqa: E402
from xcviz.errors import XcvizError  # noqa: E402
from xcviz.passes.columns import attr_codes  # noqa: E402
from xcviz.loaders import json_scanned  # noqa: E402
from tests.support.paths import ROOT  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

CODED = ("op", "op_type", "known", "device", "compile", "scope", "note")


def outcome(path: str):
    try:
        g = xcviz.load(path)
    except XcvizError as e:
        return "error", str(e)
    c = g.columns
    return "ok", (g.name, g.inputs, g.outputs, g.dims, g.nodes, c.src.tolist(), c.port.tolist(), c.lens.tolist(),
                  c.op, c.known, c.attrs, [c.results[r] for r in c.rid.tolist()],
                  # the columns' codes, however a loader made them (the scanner hands its intern tables over)
                  [(f, c.codes(f)[0].tolist(), c.codes(f)[1]) for f in CODED])


def write(text: str) -> str:
    d = tempfile.mkdtemp()
    path = os.path.join(d, "g.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def two(path: str, monkeypatch) -> tuple:
    """(scanner, generic) outcomes, and whether the scanner took the file."""
    taken = []
    real = json_scanned.read

    def spy(*a, **k):
        r = real(*a, **k)
        taken.append(r is not None)
        return r

    with monkeypatch.context() as m:  # (undone before hypothesis' next example)
        m.setattr(json_scanned, "read", spy)
        scanned = outcome(path)
        m.setattr(json_scanned, "read", lambda *a, **k: None)
        generic = outcome(path)
    return scanned, generic, any(taken)


def agree(text: str, monkeypatch) -> bool:
    scanned, generic, taken = two(write(text), monkeypatch)
    assert scanned == generic
    return taken


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=json_documents())
def test_random_documents_agree(text, monkeypatch):
    agree(text, monkeypatch)


@st.composite
def rich_documents(draw):
    """fuzz_mappings with every optional node field, unicode names, control inputs, nested attributes and
    random spacing: mostly documents the scanner takes."""
    doc = draw(fuzz_mappings())
    nodes = doc.get("nodes") or []
    rename = {}
    for j, nd in enumerate(nodes):
        if draw(st.integers(0, 3)) == 0:
            rename[nd["name"]] = nd["name"] + draw(st.sampled_from(["é", "_日本", " x", "🙂", "a-b"]))
        for key, values in (("device", ["/gpu:0", "cpu", None]), ("scope", ["blk/a", "", None]),
                            ("doc", ["text", None]), ("compile", [True, False, None])):
            if draw(st.integers(0, 3)) == 0:
                nd[key] = draw(st.sampled_from(values))
        if j and draw(st.integers(0, 4)) == 0:
            nd["control_inputs"] = [nodes[draw(st.integers(0, j - 1))]["name"]]
        if draw(st.integers(0, 6)) == 0:
            nd["attrs"] = {"axes": [1, {"k": draw(st.integers(-3, 3))}], "alpha": 0.5}
        if draw(st.integers(0, 6)) == 0:
            nd["inputs"] = None
    for nd in nodes:
        nd["name"] = rename.get(nd["name"], nd["name"])
        if isinstance(nd.get("inputs"), list):
            nd["inputs"] = [rename.get(r, r) if isinstance(r, str) else r for r in nd["inputs"]]
        if "control_inputs" in nd:
            nd["control_inputs"] = [rename.get(r, r) for r in nd["control_inputs"]]
    if isinstance(doc.get("outputs"), list):
        doc["outputs"] = [rename.get(r, r) if isinstance(r, str) else r for r in doc["outputs"]]
    indent = draw(st.sampled_from([None, 0, 1, 4, "\t"]))
    seps = draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : "), (",\n", ":\r\n ")]))
    return json.dumps(doc, indent=indent, separators=seps, ensure_ascii=draw(st.integers(0, 3)) == 0)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=rich_documents())
def test_rich_documents_agree(text, monkeypatch):
    agree(text, monkeypatch)


@pytest.mark.slow
def test_rich_documents_mostly_take_the_scanner(monkeypatch):
    """(so that the test above checks the scanner, not only its refusals)"""
    taken = []

    # (the same 60 documents every run: a random draw took fewer than a third now and then)
    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
    @given(text=rich_documents())
    def run(text):
        taken.append(agree(text, monkeypatch))

    run()
    assert sum(taken) >= len(taken) // 3


@pytest.mark.parametrize("name", ["seed_demo", "resnet_block", "transformer_block", "detection_head"])
def test_example_graphs_take_the_scanner(name, monkeypatch):
    with open(os.path.join(ROOT, "graphs", f"{name}.yaml"), encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    text = json.dumps(doc)
    taken = agree(text, monkeypatch)
    assert taken or "outputs" in text or "num_outputs" in text or ":" in "".join(n["name"] for n in doc["nodes"])


@pytest.mark.parametrize("typed", [False, True])
def test_generated_graphs_take_the_scanner(typed, monkeypatch):
    import ratios
    from generate import generate, to_json

    doc = ratios.typed(3000, seed=3) if typed else generate(3000, 3)
    scanned, generic, taken = two(write(to_json(doc)), monkeypatch)
    assert taken and scanned[0] == "ok"
    assert scanned == generic


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.replace('"op": "relu"', '"op": "relu", "op": "add"', 1), "duplicate key"),
    (lambda t: t.replace('"shape": [', '"shape": [-1, ', 1), "out of range"),
    (lambda t: t.replace('"shape": [', '"shape": [01, ', 1), None),
    (lambda t: t.replace('"dtype": "float32"', '"dtype": "float33"', 1), "unknown dtype"),
    (lambda t: t.replace('"name": "', '"name": " ', 1), None),
    (lambda t: t.replace('"op": "relu"', '"op": "relux"', 1), "unknown op"),
    (lambda t: t.replace('"name": "n5"', '"name": "n4"', 1), "duplicate node name"),
    (lambda t: t.replace('"name": "n5"', '"name": "x"', 1), "both a graph input and a node"),
    (lambda t: t.replace('"inputs": ["n', '"inputs": ["m', 1), "is not defined"),
    (lambda t: t.replace('["n0"]', '["n0:3"]', 1), None),
    (lambda t: t.replace('"attrs": {', '"attrs": {"axis": 1, "axis": 2, ', 1), "duplicate key"),
    (lambda t: t.replace('"outputs": ["', '"outputs": ["nope', 1), "does not exist"),
    (lambda t: t[:-2], None),
    (lambda t: t + " x", None),
    (lambda t: t.replace('{"name": "n7"', '{"name": "n7", "device": 3', 1), "must be a string"),
    (lambda t: t.replace('"nodes": [', '"nodes": [], "nodes": [', 1), "duplicate key"),
])
def test_bad_typed_files_get_the_usual_error(edit, message, monkeypatch):
    import ratios
    from generate import to_json

    text = to_json(ratios.typed(300, seed=1))
    scanned, generic, _ = two(write(edit(text)), monkeypatch)
    assert scanned == generic
    if message:
        assert scanned[0] == "error" and message in scanned[1]


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "tests", "hostile", "*.json"))),
                         ids=os.path.basename)
def test_hostile_files_agree(path, monkeypatch):
    scanned, generic, _ = two(path, monkeypatch)
    assert scanned == generic


def test_scanned_graph_keeps_names_and_refs_as_columns(monkeypatch):
    import ratios
    from generate import to_json

    from xcviz.passes import prepare as build   # (the step that calls shape inference)

    seen = []
    real = build.infer_shapes

    def spy(graph, counts, cols):
        seen.append((graph.indexed, type(cols.refs).__name__))
        code, reps = cols.attr_codes  # (the scanner's, worked out per spelling) as attr_codes makes them
        want = attr_codes(cols.attrs, [i for i, a in enumerate(cols.attrs) if a])
        assert code.tolist() == want[0].tolist() and reps == want[1] and len(reps) > 2
        return real(graph, counts, cols)

    monkeypatch.setattr(build, "infer_shapes", spy)
    path = write(to_json(ratios.typed(2000, seed=5)))
    g = xcviz.load(path)
    assert seen == [(False, "RefColumn")]  # read, resolved and checked without a name index or ref strings
    monkeypatch.setattr(json_scanned, "read", lambda *a, **k: None)
    ref = xcviz.load(path)  # (the generic way)
    assert g.index == ref.index and [n.inputs for n in g.nodes] == [n.inputs for n in ref.nodes]


def test_position_answers_as_the_index():
    from xcviz.ir import Graph, Nodes

    names = [f"n{j}" for j in range(50)]
    g = Graph("g", nodes=Nodes(50, {"name": names, "op": "relu", "op_type": "relu"}))
    assert not g.indexed  # nothing made yet
    assert g.position("n7") == 7 and g.position("n49") == 49 and g.position("x") is None
    want = {name: j for j, name in enumerate(names)}
    assert g.index == want and g.indexed and g.index is g.index  # made once, then the graph's own dict
    assert [g.position(name) for name in names] == list(range(50))


def test_position_in_a_scanned_graph_looks_names_up_without_a_dict(monkeypatch):
    import ratios

    doc = ratios.typed(3000, seed=7)
    doc["nodes"][5]["name"] = "n5é"
    doc["nodes"][6]["inputs"] = ["n5é" if r == "n5" else r for r in doc["nodes"][6]["inputs"]]
    g = xcviz.load(write(json.dumps(doc, ensure_ascii=False)))
    names = [nd["name"] for nd in doc["nodes"]]
    assert not g.nodes.made and not g.indexed and g.nodes.find is not None
    assert [g.position(name) for name in names[:300]] == list(range(300)) and g.position("n5é") == 5
    assert g.position("x") is None and g.position("n1:0") is None  # (inputs are not nodes)
    with pytest.raises(KeyError):
        g.node("nope")
    assert not g.indexed  # every answer above came from the loader's table
    assert g.index == {name: j for j, name in enumerate(names)} and g.indexed


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=fuzz_mappings())
def test_fuzzed_mappings_agree(doc, monkeypatch):
    agree(json.dumps(doc), monkeypatch)


def test_nested_attributes_keep_their_where(monkeypatch):
    doc = {"inputs": [{"name": "x", "shape": [2, 3], "dtype": "float32"}],
           "nodes": [{"name": "r", "op": "reduce_sum", "inputs": ["x"], "attrs": {"axes": [1], "keepdims": 0}},
                     {"name": "s", "op": "relu", "inputs": ["r"], "attrs": {"alpha": 0.5}}], "outputs": ["s"]}
    scanned, generic, taken = two(write(json.dumps(doc)), monkeypatch)
    assert taken and scanned == generic
    assert np.all([n.where is not None for n in scanned[1][4][:1]]) and scanned[1][4][1].where is None


def test_scanner_fields_are_the_typed_rows():
    from xcviz.loaders import json_scan
    from xcviz.loaders.json_types import Row

    assert json_scan.FIELDS == Row.__struct_fields__


def test_ref_columns_read_as_lists():
    import numpy as np

    from xcviz.ir.nodes import NodeRefs, RefColumn

    refs = RefColumn(["a", "b"], ["x"], np.array([2, 0, -1, 1, -1], np.int64), {2: "a:1", 4: ""})
    assert list(refs) == ["x", "a", "a:1", "b", ""] and refs[-1] == "" and refs[2] == "a:1" and refs[1:3] == ["a", "a:1"]
    per_node = NodeRefs(refs, np.array([0, 2, 2, 5], np.int64))
    assert list(per_node) == [("x", "a"), (), ("a:1", "b", "")] and per_node[-1] == ("a:1", "b", "") and len(per_node) == 3


def test_bytes_let_go_before_a_late_refusal_are_read_again(monkeypatch):
    """The scanner empties the caller's box once it has read all it needs from the bytes (their memory serves
    the rest of the load); a refusal after that (a key repeated inside attributes, found with the names) has the
    caller read the file again, and the generic way gives its usual error."""
    import ratios
    from generate import to_json

    text = to_json(ratios.typed(300, seed=1)).replace('"attrs": {', '"attrs": {"axis": 1, "axis": 2, ', 1)
    path, boxes = write(text), []
    real = json_scanned.read

    def spy(box, *a, **k):
        r = real(box, *a, **k)
        boxes.append((r, list(box)))
        return r

    monkeypatch.setattr(json_scanned, "read", spy)
    got = outcome(path)
    assert boxes == [(None, [])]  # refused after letting the bytes go
    assert got[0] == "error" and "duplicate key" in got[1]
