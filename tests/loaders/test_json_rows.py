"""The typed JSON fast path (loaders/json_rows.py) gives exactly what the generic path gives: the same
nodes (every field, `where` included), graph fields and columns, or the same error message, on random
documents (wrong types, repeated keys, unusual keys), on the example graphs written as JSON, and on the
benchmark generator's graphs with and without declared types."""
from __future__ import annotations

import json
import os
import sys
import tempfile

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings

import xcviz
from tests.support.strategies import fuzz_mappings, json_documents
from xcviz.errors import XcvizError
from xcviz.loaders import json_rows
from tests.support.paths import ROOT

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))


def outcome(path: str):
    try:
        g = xcviz.load(path)
    except XcvizError as e:
        return "error", str(e)
    c = g.columns
    return "ok", (g.name, g.inputs, g.outputs, g.dims, g.nodes, c.src.tolist(), c.port.tolist(), c.lens.tolist(),
                  c.op, c.known, c.attrs, [c.results[r] for r in c.rid.tolist()],
                  # the columns' codes, however a loader made them (a scanner hands its intern tables over)
                  [(f, c.codes(f)[0].tolist(), c.codes(f)[1]) for f in CODED])


CODED = ("op", "op_type", "known", "device", "compile", "scope", "note")


def both(path: str, monkeypatch) -> tuple:
    taken = []
    real = json_rows.read

    def spy(*a, **k):
        r = real(*a, **k)
        taken.append(r is not None)
        return r

    monkeypatch.setattr(json_rows, "read", spy)
    fast = outcome(path)
    monkeypatch.setattr(json_rows, "read", lambda *a, **k: None)
    generic = outcome(path)
    return fast, generic, any(taken)


def write(text: str) -> str:
    d = tempfile.mkdtemp()
    path = os.path.join(d, "g.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=json_documents())
def test_random_documents_agree(text, monkeypatch):
    fast, generic, _ = both(write(text), monkeypatch)
    assert fast == generic


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=fuzz_mappings())
def test_fuzzed_mappings_agree(doc, monkeypatch):
    fast, generic, _ = both(write(json.dumps(doc)), monkeypatch)
    assert fast == generic


@pytest.mark.parametrize("name", ["seed_demo", "resnet_block", "transformer_block", "detection_head"])
def test_example_graphs_take_the_fast_path(name, monkeypatch):
    with open(os.path.join(ROOT, "graphs", f"{name}.yaml"), encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    fast, generic, taken = both(write(json.dumps(doc)), monkeypatch)
    assert fast == generic
    assert taken or any("outputs" in nd or "num_outputs" in nd for nd in doc["nodes"])


@pytest.mark.parametrize("typed", [False, True])
def test_generated_graphs_with_and_without_types_take_the_fast_path(typed, monkeypatch):
    import ratios
    from generate import generate, to_json

    doc = ratios.typed(3000, seed=3) if typed else generate(3000, 3)
    fast, generic, taken = both(write(to_json(doc)), monkeypatch)
    assert taken and fast[0] == "ok"
    assert fast == generic


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.replace('"op": "relu"', '"op": "relu", "op": "add"', 1), "duplicate key"),
    (lambda t: t.replace('"shape": [', '"shape": [-1, ', 1), "out of range"),
    (lambda t: t.replace('"dtype": "float32"', '"dtype": "float33"', 1), "unknown dtype"),
    (lambda t: t.replace('"name": "', '"name": " ', 1), None),
    (lambda t: t.replace('"op": "relu"', '"op": "relux"', 1), "unknown op"),
])
def test_bad_typed_files_get_the_usual_error(edit, message, monkeypatch):
    import ratios
    from generate import to_json

    text = to_json(ratios.typed(300, seed=1))
    assert '"op": "relu"' in text
    fast, generic, _ = both(write(edit(text)), monkeypatch)
    assert fast == generic
    if message:
        assert fast[0] == "error" and message in fast[1]


def test_nested_attributes_keep_their_where(monkeypatch):
    doc = {"inputs": [{"name": "x", "shape": [2, 3], "dtype": "float32"}],
           "nodes": [{"name": "r", "op": "reduce_sum", "inputs": ["x"], "attrs": {"axes": [1], "keepdims": 0}},
                     {"name": "s", "op": "relu", "inputs": ["r"], "attrs": {"alpha": 0.5}}], "outputs": ["s"]}
    fast, generic, taken = both(write(json.dumps(doc)), monkeypatch)
    assert taken and fast == generic
    assert np.all([n.where is not None for n in fast[1][4][:1]]) and fast[1][4][1].where is None
