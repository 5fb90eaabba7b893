"""Nothing in the IR can be changed after it is built: every mutation of a node, its attributes and outputs, a
tensor type, a value, the nodes and a graph raises, and a look-up changes nothing."""
from __future__ import annotations

import copy
import os
import json
import pickle
import sys

import msgspec
import pytest

import xcviz
from xcviz.ir import FrozenDict, Graph, Node, TensorType, Value, bind_dims
from xcviz.ir.text_print import print_graph
from tests.support.paths import ROOT


def _graph() -> Graph:
    t = TensorType(["batch", 4], "float32")  # (a list given: taken as a tuple)
    x = Value("x", t)
    a = Node("a", "relu", "Relu", ["x"], attrs={"alpha": 0.5, "perm": [1, 0]}, outputs=[t])
    b = Node("b", "neg", "Neg", ("a",), outputs=(t,))
    return Graph("g", [x], [a, b], ["b"], dims={"batch": 2}, output_names={"b": "y"})


NODE = _graph().nodes[0]
MUTATIONS = {
    "node.attrs[k] = v": lambda g, n: n.attrs.__setitem__("alpha", 1.0),
    "node.attrs[new] = v": lambda g, n: n.attrs.__setitem__("beta", 1.0),
    "del node.attrs[k]": lambda g, n: n.attrs.__delitem__("alpha"),
    "node.attrs.update": lambda g, n: n.attrs.update(alpha=1.0),
    "node.attrs |= ...": lambda g, n: n.attrs.__ior__({"alpha": 1.0}),
    "node.attrs.pop": lambda g, n: n.attrs.pop("alpha"),
    "node.attrs.popitem": lambda g, n: n.attrs.popitem(),
    "node.attrs.clear": lambda g, n: n.attrs.clear(),
    "node.attrs.setdefault": lambda g, n: n.attrs.setdefault("gamma", 1),
    "node.outputs.append": lambda g, n: n.outputs.append(TensorType()),
    "node.outputs[0] = t": lambda g, n: n.outputs.__setitem__(0, TensorType()),
    "node.inputs.append": lambda g, n: n.inputs.append("y"),
    "node.name = ...": lambda g, n: setattr(n, "name", "z"),
    "node.attrs = ...": lambda g, n: setattr(n, "attrs", {}),
    "node.outputs = ...": lambda g, n: setattr(n, "outputs", []),
    "type.shape = ...": lambda g, n: setattr(n.outputs[0], "shape", (1,)),
    "type.shape[0] = d": lambda g, n: n.outputs[0].shape.__setitem__(0, 1),
    "value.name = ...": lambda g, n: setattr(g.inputs[0], "name", "q"),
    "graph.name = ...": lambda g, n: setattr(g, "name", "h"),
    "graph.nodes = ...": lambda g, n: setattr(g, "nodes", []),
    "graph.inputs.append": lambda g, n: g.inputs.append(Value("q")),
    "graph.outputs.append": lambda g, n: g.outputs.append("a"),
    "graph.dims[k] = v": lambda g, n: g.dims.__setitem__("batch", 3),
    "graph.dims.update": lambda g, n: g.dims.update(seq=1),
    "graph.output_names[k] = v": lambda g, n: g.output_names.__setitem__("a", "z"),
    "graph.nodes[i] = node": lambda g, n: g.nodes.__setitem__(0, n),
    "graph.nodes.append": lambda g, n: g.nodes.append(n),
    "del graph.nodes[i]": lambda g, n: g.nodes.__delitem__(0),
    "graph.nodes.find = ...": lambda g, n: setattr(g.nodes, "find", None),
    "graph.nodes._list = ...": lambda g, n: setattr(g.nodes, "_list", []),
}


@pytest.mark.parametrize("what", sorted(MUTATIONS))
def test_every_mutation_raises(what):
    g = _graph()
    before = (print_graph(g), g.dims.copy(), g.output_names.copy(), g.nodes[0].attrs.copy())
    with pytest.raises((TypeError, AttributeError)):
        MUTATIONS[what](g, g.nodes[0])
    assert (print_graph(g), g.dims.copy(), g.output_names.copy(), g.nodes[0].attrs.copy()) == before


def test_what_is_given_mutable_is_taken_read_only_and_reads_as_before():
    g = _graph()
    a = g.nodes[0]
    assert type(a.attrs) is FrozenDict and type(a.outputs) is tuple and type(a.inputs) is tuple
    assert a.outputs[0].shape == ("batch", 4) and type(g.dims) is FrozenDict
    # a dict to every reader: equality, JSON, msgspec, dict(), **, copies (plain dicts, free to edit)
    assert a.attrs == {"alpha": 0.5, "perm": [1, 0]} and dict(a.attrs) == {**a.attrs}
    assert json.loads(json.dumps(a.attrs)) == json.loads(msgspec.json.encode(a.attrs)) == a.attrs
    mine = a.attrs.copy()
    mine["alpha"] = 2.0
    assert a.attrs["alpha"] == 0.5 and (a.attrs | {"alpha": 2.0}) == mine
    # a changed node is a new one; the old one stays
    b = msgspec.structs.replace(a, attrs={**a.attrs, "alpha": 2.0}, outputs=[])
    assert type(b.attrs) is FrozenDict and b.outputs == () and a.attrs["alpha"] == 0.5
    assert Node("n", "relu", "Relu").attrs is Node("m", "relu", "Relu").attrs  # (one shared empty mapping)
    for clone in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert clone == g and type(clone.nodes[0].attrs) is FrozenDict and type(clone.dims) is FrozenDict
    assert bind_dims(g, {"batch": 3}).dims == {"batch": 3} and g.dims == {"batch": 2}


def test_a_lookup_changes_nothing(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import ratios

    (tmp_path / "g.json").write_text(json.dumps(ratios.typed(3000, seed=7)), encoding="utf-8")
    g = xcviz.load(str(tmp_path / "g.json"))
    assert g.nodes.find is not None and not g.indexed  # (a scanned graph: the loader's look-up answers)
    names = [n.name for n in g.nodes]
    state = (g.nodes.find, g.indexed, g.nodes.made)
    for _ in range(3):
        assert [g.position(name) for name in names] == list(range(len(names))) and g.position("nope") is None
    assert (g.nodes.find, g.indexed, g.nodes.made) == state  # (every answer from the loader's table)
    assert not hasattr(g.nodes, "finds_left")  # (no budget kept on the nodes: Graph.lookup's is the caller's own)
    look = g.lookup()
    assert [look(name) for name in names] == list(range(len(names)))
