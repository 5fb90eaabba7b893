"""Deliberately broken documents: junk values, corruptions of a graph mapping, and JSON with a repeated key."""
from __future__ import annotations

import copy
import json

from hypothesis import strategies as st

# any YAML/JSON value, hostile strings and out-of-range numbers included
junk = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True),
              st.text(max_size=12), st.sampled_from(["x", "n0", "n1:1", "n0:99", "", "batch", "[bold]", "<script>"])),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12)
dims = st.one_of(st.integers(0, 6), st.sampled_from(["batch", "n"]))

NODE_KEYS = ["name", "op", "inputs", "control_inputs", "attrs", "shape", "dtype", "outputs", "num_outputs", "compile",
             "device", "scope"]


def corrupt(draw, g: dict) -> dict:
    """Up to three corruptions of a graph mapping, in place: wrong-typed fields, missing and unknown keys,
    dangling refs, a cycle, a duplicate node, bad shapes, junk at the top level."""
    for _ in range(draw(st.integers(0, 3))):
        what = draw(st.sampled_from(["node_field", "drop_key", "extra_key", "ref", "cycle", "dup", "shape", "top",
                                     "nodes_junk", "input_field"]))
        nodes = g["nodes"]
        if what == "top":
            g[draw(st.sampled_from(["name", "inputs", "outputs", "dims", "doc", "nodes"]))] = draw(junk)
        elif what == "nodes_junk":
            g["nodes"] = draw(st.lists(junk, max_size=3))
        elif not isinstance(nodes, list) or not nodes or not all(isinstance(n, dict) for n in nodes):
            continue
        elif what == "node_field":
            draw(st.sampled_from(nodes))[draw(st.sampled_from(NODE_KEYS))] = draw(junk)
        elif what == "drop_key":
            n = draw(st.sampled_from(nodes))
            if n:
                n.pop(draw(st.sampled_from(sorted(n, key=str))))
        elif what == "extra_key":
            draw(st.sampled_from(nodes))[draw(st.text(max_size=5))] = draw(junk)
        elif what == "ref":
            n = draw(st.sampled_from(nodes))
            n["inputs"] = [draw(st.sampled_from([f"n{draw(st.integers(0, 15))}", "x0", f"n0:{draw(st.integers(0, 5))}",
                                                 "ghost", n.get("name") if isinstance(n.get("name"), str) else "n0"]))]
        elif what == "cycle" and len(nodes) >= 2:
            nodes[0]["inputs"] = [nodes[-1].get("name") if isinstance(nodes[-1].get("name"), str) else "n1"]
        elif what == "dup":
            nodes.append(dict(draw(st.sampled_from(nodes))))
        elif what == "shape":
            draw(st.sampled_from(nodes))["shape"] = draw(st.lists(st.one_of(dims, st.integers(-3, 2**45)), max_size=5))
        elif what == "input_field" and isinstance(g.get("inputs"), list) and g["inputs"]:
            v = g["inputs"][0]
            if isinstance(v, dict):
                v[draw(st.sampled_from(["name", "shape", "dtype", "doc", "extra"]))] = draw(junk)
    return g


class Pairs(list):
    """A mapping written as (key, value) pairs, so that a key can be written twice."""


def to_pairs(v):
    """Every dict in a document as Pairs (in the dict's order)."""
    if isinstance(v, dict):
        return Pairs((k, to_pairs(x)) for k, x in v.items())
    if isinstance(v, list) and not isinstance(v, Pairs):
        return [to_pairs(x) for x in v]
    return v


def dumps(v) -> str:
    """JSON text of a document whose mappings are Pairs (a repeated key is written twice)."""
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


# wrong-typed values (copied: repeat_a_key edits mappings in place)
ODD = st.sampled_from([None, 1, 2.5, True, "s", [], ["x"], [1], Pairs(), Pairs([("k", 1)])]).map(copy.deepcopy)


def repeat_a_key(draw, doc: Pairs) -> Pairs:
    """Write one key of one mapping (any depth) a second time, with a wrong-typed value, at any position."""
    every = mappings(doc)
    m = every[draw(st.integers(0, len(every) - 1))]
    if m:
        key = m[draw(st.integers(0, len(m) - 1))][0]
        m.insert(draw(st.integers(0, len(m))), (key, draw(ODD)))
    return doc
