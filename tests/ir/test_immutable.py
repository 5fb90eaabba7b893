"""Nothing in the IR can be changed after it is built: every mutation of a node, its attributes and outputs, a
tensor type, a value, the nodes and a graph raises, and a look-up changes nothing."""
from __future__ import annotations

import copy
import os
import json
import pickle
import sys

import msgspec
import numpy as np
import pytest

import xcviz
from xcviz.ir import FrozenDict, FrozenList, Graph, Node, TensorType, Value, bind_dims
from xcviz.ir.text_print import print_graph
from tests.support.paths import ROOT


def _graph() -> Graph:
    t = TensorType(["batch", 4], "float32")  # (a list given: taken as a tuple)
    x = Value("x", t)
    w = Value("w", TensorType((2, 2), "float32"), np.ones((2, 2), np.float32))   # a weight with its values
    a = Node("a", "relu", "Relu", ["x"], outputs=[t], attrs={
        "alpha": 0.5, "perm": [1, 0], "pads": [[0, 1], [1, 0]], "spec": {"mode": "x", "axes": [0, 1]},
        "pair": (1, [2, 3]), "value": np.arange(4, dtype=np.float32).reshape(2, 2)})
    b = Node("b", "neg", "Neg", ("a",), outputs=(t,))
    return Graph("g", [x, w], [a, b], ["b"], dims={"batch": 2}, output_names={"b": "y"})


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
    "attr list.append": lambda g, n: n.attrs["perm"].append(2),
    "attr list.extend": lambda g, n: n.attrs["perm"].extend([2]),
    "attr list += ...": lambda g, n: n.attrs["perm"].__iadd__([2]),
    "attr list *= ...": lambda g, n: n.attrs["perm"].__imul__(2),
    "attr list.insert": lambda g, n: n.attrs["perm"].insert(0, 2),
    "attr list[i] = v": lambda g, n: n.attrs["perm"].__setitem__(0, 5),
    "attr list[a:b] = v": lambda g, n: n.attrs["perm"].__setitem__(slice(0, 1), [5]),
    "del attr list[i]": lambda g, n: n.attrs["perm"].__delitem__(0),
    "attr list.pop": lambda g, n: n.attrs["perm"].pop(),
    "attr list.remove": lambda g, n: n.attrs["perm"].remove(1),
    "attr list.clear": lambda g, n: n.attrs["perm"].clear(),
    "attr list.sort": lambda g, n: n.attrs["perm"].sort(),
    "attr list.reverse": lambda g, n: n.attrs["perm"].reverse(),
    "nested attr list[i][j] = v": lambda g, n: n.attrs["pads"][0].__setitem__(0, 9),
    "nested attr list[i].append": lambda g, n: n.attrs["pads"][1].append(9),
    "attr dict[k] = v": lambda g, n: n.attrs["spec"].__setitem__("mode", "y"),
    "attr dict.update": lambda g, n: n.attrs["spec"].update(mode="y"),
    "attr dict's list.append": lambda g, n: n.attrs["spec"]["axes"].append(2),
    "attr tuple's list.append": lambda g, n: n.attrs["pair"][1].append(4),
    "attr array[i] = v": lambda g, n: n.attrs["value"].__setitem__((0, 0), 5.0),
    "attr array += v": lambda g, n: n.attrs["value"].__iadd__(1.0),
    "attr array.fill": lambda g, n: n.attrs["value"].fill(0.0),
    "attr array.flags.writeable = True": lambda g, n: setattr(n.attrs["value"].flags, "writeable", True),
    "np.copyto(attr array, ...)": lambda g, n: np.copyto(n.attrs["value"], 0.0),
    "node.outputs.append": lambda g, n: n.outputs.append(TensorType()),
    "node.outputs[0] = t": lambda g, n: n.outputs.__setitem__(0, TensorType()),
    "node.inputs.append": lambda g, n: n.inputs.append("y"),
    "node.name = ...": lambda g, n: setattr(n, "name", "z"),
    "node.attrs = ...": lambda g, n: setattr(n, "attrs", {}),
    "node.outputs = ...": lambda g, n: setattr(n, "outputs", []),
    "type.shape = ...": lambda g, n: setattr(n.outputs[0], "shape", (1,)),
    "type.shape[0] = d": lambda g, n: n.outputs[0].shape.__setitem__(0, 1),
    "value.name = ...": lambda g, n: setattr(g.inputs[0], "name", "q"),
    "weight data[i] = v": lambda g, n: g.inputs[1].data.__setitem__((0, 0), 5.0),
    "weight data.fill": lambda g, n: g.inputs[1].data.fill(0.0),
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
    with pytest.raises((TypeError, AttributeError, ValueError)):  # (numpy: "assignment destination is read-only")
        MUTATIONS[what](g, g.nodes[0])
    assert (print_graph(g), g.dims.copy(), g.output_names.copy(), g.nodes[0].attrs.copy()) == before


def test_what_is_given_mutable_is_taken_read_only_and_reads_as_before():
    g = _graph()
    a = g.nodes[0]
    assert type(a.attrs) is FrozenDict and type(a.outputs) is tuple and type(a.inputs) is tuple
    assert a.outputs[0].shape == ("batch", 4) and type(g.dims) is FrozenDict
    # lists, dicts and arrays inside the attributes too: a list stays a list to readers (==, isinstance, JSON)
    assert type(a.attrs["perm"]) is FrozenList and isinstance(a.attrs["perm"], list) and a.attrs["perm"] == [1, 0]
    assert type(a.attrs["pads"][0]) is FrozenList and type(a.attrs["spec"]) is FrozenDict
    assert type(a.attrs["spec"]["axes"]) is FrozenList and type(a.attrs["pair"]) is tuple
    assert type(a.attrs["pair"][1]) is FrozenList and not a.attrs["value"].flags.writeable
    # a dict to every reader: equality, JSON, msgspec, dict(), **, copies (plain dicts, free to edit)
    assert {k: a.attrs[k] for k in ("alpha", "perm", "pads")} == {"alpha": 0.5, "perm": [1, 0], "pads": [[0, 1], [1, 0]]}
    assert dict(a.attrs).keys() == {**a.attrs}.keys() == a.attrs.keys()
    plain = {k: v for k, v in a.attrs.items() if k not in ("value", "pair")}  # (JSON has no tuples nor arrays)
    assert json.loads(json.dumps(plain)) == json.loads(msgspec.json.encode(plain)) == plain
    mine = a.attrs.copy()
    mine["alpha"] = 2.0
    assert a.attrs["alpha"] == 0.5 and (a.attrs | {"alpha": 2.0}) == mine
    # a changed node is a new one; the old one stays
    b = msgspec.structs.replace(a, attrs={**a.attrs, "alpha": 2.0}, outputs=[])
    assert type(b.attrs) is FrozenDict and b.outputs == () and a.attrs["alpha"] == 0.5
    assert Node("n", "relu", "Relu").attrs is Node("m", "relu", "Relu").attrs  # (one shared empty mapping)
    for clone in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert print_graph(clone) == print_graph(g) and type(clone.nodes[0].attrs) is FrozenDict and type(clone.dims) is FrozenDict
    assert bind_dims(g, {"batch": 3}).dims == {"batch": 3} and g.dims == {"batch": 2}
    for clone in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        assert type(clone.attrs["pads"][0]) is FrozenList and not clone.attrs["value"].flags.writeable


def test_the_callers_values_stay_theirs():
    """What a node is given is not changed: its lists and dicts are copied, its array is viewed read-only."""
    perm, value, spec = [1, 0], np.zeros(3), {"axes": [0]}
    a = Node("a", "relu", "Relu", attrs={"perm": perm, "value": value, "spec": spec})
    perm.append(2), spec["axes"].append(1)
    value[0] = 7.0  # (the caller's array stays writable: the node holds a read-only view of it)
    assert a.attrs["perm"] == [1, 0] and a.attrs["spec"] == {"axes": [0]} and value.flags.writeable
    assert np.shares_memory(a.attrs["value"], value) and a.attrs["value"][0] == 7.0
    ro = np.ones(2)
    ro.flags.writeable = False
    assert Node("b", "relu", "Relu", attrs={"v": ro}).attrs["v"] is ro  # (already read-only: kept as it is)
    # a dtype the buffer protocol cannot name (bfloat16) or a strided array: a view flagged read-only
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for arr in (np.zeros(3, ml_dtypes.bfloat16), np.zeros((4, 4))[:, ::2], np.array(["a", None], object)):
        got = Node("c", "relu", "Relu", attrs={"v": arr}).attrs["v"]
        assert not got.flags.writeable and got.dtype == arr.dtype and got.shape == arr.shape
        with pytest.raises(ValueError, match="read-only"):
            got[0] = got[1]


def test_read_only_values_print_and_read_back_as_before():
    """FrozenList prints `[...]` as the list did, a nested FrozenDict `{...}`, a tuple `(...)`: the text IR
    reads each back to the same value and the same text."""
    from xcviz.ir.text_parse import read_graph

    g = _graph()
    text = print_graph(g)
    assert "perm=[1, 0]" in text and "pads=[[0, 1], [1, 0]]" in text and 'spec={mode="x", axes=[0, 1]}' in text
    assert "pair=(1, [2, 3])" in text
    back = read_graph(text)
    assert print_graph(back) == text and type(back.nodes[0].attrs["pads"][1]) is FrozenList


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


def test_deep_and_shared_values_freeze_without_recursion():
    """A hostile file's attribute nested a thousand levels (allowed with --max-depth) is made read-only by a
    walk, not recursion; a list held twice is frozen once; a list holding itself is refused."""
    deep = 0
    for _ in range(5000):
        deep = [deep]
    got = Node("a", "relu", "Relu", attrs={"deep": deep}).attrs["deep"]
    for _ in range(4999):
        assert type(got) is FrozenList
        got = got[0]
    assert got == [0]
    twice = [1, 2]
    held = Node("b", "relu", "Relu", attrs={"x": [twice, {"y": twice}]}).attrs["x"]
    assert held[0] is held[1]["y"] and type(held[0]) is FrozenList
    inner = [3]
    dag = Node("d", "relu", "Relu", attrs={"x": [[inner], [inner], (inner,)]}).attrs["x"]  # (met again later)
    assert dag == [[[3]], [[3]], ([3],)] and dag[0][0] is dag[1][0] is dag[2][0]
    loop: list = []
    loop.append({"again": [loop]})
    with pytest.raises(ValueError, match="holds itself"):
        Node("c", "relu", "Relu", attrs={"x": loop})


def test_a_deeply_nested_attribute_loads_under_a_raised_depth_limit(tmp_path):
    deep = 0
    for _ in range(900):
        deep = [deep]
    doc = {"name": "g", "inputs": [{"name": "x", "shape": [2], "dtype": "float32"}],
           "nodes": [{"name": "a", "op": "relu", "inputs": ["x"], "attrs": {"deep": deep}}], "outputs": ["a"]}
    (tmp_path / "g.json").write_text(json.dumps(doc), encoding="utf-8")
    g = xcviz.load(str(tmp_path / "g.json"), max_depth=1000)
    assert type(g.nodes[0].attrs["deep"]) is FrozenList
