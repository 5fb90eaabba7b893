"""JSON graph files load the same through the fast path (msgspec, keys counted on the way through the
nodes) and through the strict parser (which refuses a repeated key itself): the same graph, or the same
error, on random documents with and without a repeated key and with wrong types here and there."""
from __future__ import annotations

import copy
import json
import os
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xcviz
from xcviz.errors import XcvizError
from xcviz.loaders import parse


class Pairs(list):
    """A mapping written as (key, value) pairs, so that a key can be written twice."""


def dumps(v) -> str:
    if isinstance(v, Pairs):
        return "{" + ", ".join(f"{json.dumps(k)}: {dumps(x)}" for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(dumps(x) for x in v) + "]"
    return json.dumps(v)


def mappings(v) -> list[Pairs]:
    found = []
    if isinstance(v, Pairs):
        found.append(v)
        for _, x in v:
            found += mappings(x)
    elif isinstance(v, list):
        for x in v:
            found += mappings(x)
    return found


# (copied: the duplicating step below edits mappings in place)
ODD = st.sampled_from([None, 1, 2.5, True, "s", [], ["x"], [1], Pairs(), Pairs([("k", 1)])]).map(copy.deepcopy)


@st.composite
def documents(draw):
    n = draw(st.integers(1, 6))
    nodes = []
    for i in range(n):
        refs = ["x", ""] + [f"n{j}" for j in range(i)] + ([f"n{i - 1}:1"] if i else [])
        node = Pairs([("name", f"n{i}"), ("op", draw(st.sampled_from(["relu", "add", "softmax", "Identity", "nosuch"]))),
                      ("inputs", draw(st.lists(st.sampled_from(refs), max_size=2)))])
        extra = draw(st.sampled_from(["", "attrs", "shape", "outputs", "scope", "compile", "odd"]))
        if extra == "attrs":
            # (beyond 64 bits: read as int by both parsers, never as a float)
            node.append(("attrs", Pairs([("axis", draw(st.sampled_from([-1, 0, 1, 2**100 + 1, -(2**70) - 3])))])))
        elif extra == "shape":
            node += [("shape", [2, 3]), ("dtype", "float32")]
        elif extra == "outputs":
            node.append(("outputs", [Pairs([("shape", [2, 3]), ("dtype", "float32")])]))
        elif extra == "scope":
            node.append(("scope", "s"))
        elif extra == "compile":
            node.append(("compile", draw(st.booleans())))
        elif extra == "odd":  # a wrong type somewhere: both routes must give the same message
            k = draw(st.integers(0, 2))
            node[k] = (node[k][0], draw(ODD))
        nodes.append(node)
    doc = Pairs([("name", "g"), ("inputs", [Pairs([("name", "x"), ("shape", [2, 3]), ("dtype", "float32")])]),
                 ("nodes", nodes)])
    if draw(st.booleans()):
        doc.append(("dims", Pairs([("B", 1)])))
    if draw(st.booleans()):  # write one key of one mapping twice
        every = mappings(doc)
        m = every[draw(st.integers(0, len(every) - 1))]
        if m:
            key = m[draw(st.integers(0, len(m) - 1))][0]
            m.insert(draw(st.integers(0, len(m))), (key, draw(ODD)))
    return dumps(doc)


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
