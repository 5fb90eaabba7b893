"""JSON graph files load the same through the fast path (msgspec, keys counted on the way through the
nodes) and through the strict parser (which refuses a repeated key itself): the same graph, or the same
error, on random documents with and without a repeated key and with wrong types here and there."""
from __future__ import annotations

import pytest
import os
import tempfile

from hypothesis import HealthCheck, given, settings

import xcviz
from tests.support.strategies import json_documents as documents
from xcviz.errors import XcvizError
from xcviz.loaders import parse

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)


def outcome(path: str):
    try:
        g = xcviz.load(path)
    except XcvizError as e:
        return "error", str(e)
    return "ok", [(n.name, n.op, n.inputs, n.attrs, n.scope, n.compile, tuple(n.outputs)) for n in g.nodes]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=documents())
def test_fast_and_strict_json_agree(text):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "g.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        fast = outcome(path)
        original = parse._parse_json_fast
        parse._parse_json_fast = lambda text, raw=None: None
        try:
            strict = outcome(path)
        finally:
            parse._parse_json_fast = original
    assert fast == strict
