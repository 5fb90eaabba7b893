"""The scope tree: each node's scope path from its scope field, torch module path or name path; the tree derived
from them (children in model order, descendants, depth cuts) and repeated blocks folded."""
from __future__ import annotations

import pytest

import xcviz
from xcviz.ir import Graph
from xcviz.ir.scopes import fold_repeats, module_scope, name_scope, node_scope, scope_tree
from xcviz.ir.types import Node

GRAPHS = "graphs"


def test_path_rules():
    assert name_scope("/model/layers.0/self_attn/MatMul") == "model/layers.0/self_attn"
    assert name_scope("a/b/op") == "a/b"
    assert name_scope("relu_3") == ""
    assert module_scope("model.layers.0.self_attn") == "model/layers.0/self_attn"
    assert module_scope("layers.12") == "layers.12"
    # the scope field comes first, then the module path, then the name
    assert node_scope(Node("x/y/z", "relu", "relu", scope="/blk//a/", module="m.n")) == "blk/a"
    assert node_scope(Node("x/y/z", "relu", "relu", module="m.layers.3")) == "m/layers.3"
    assert node_scope(Node("x/y/z", "relu", "relu")) == "x/y"


def _graph(names):
    nodes, prev = [], "x"
    for nm in names:
        nodes.append(Node(nm, "relu", "Relu", inputs=(prev,)))
        prev = nm
    return Graph("g", (xcviz.ir.Value("x"),), nodes, (prev,))


def test_tree_shape_and_order():
    g = _graph(["b/one", "a/k/two", "b/three", "top", "a/four"])
    t = scope_tree(g)
    assert scope_tree(g) is t  # kept on the graph
    assert [c.path for c in t.root.children] == ["b", "a"]  # model order: by each scope's first node
    assert t.root.nodes == (3,)
    assert t.find("b").nodes == (0, 2)
    assert [c.path for c in t.find("a").children] == ["a/k"]
    assert t.find("a").nodes == (4,) and t.find("a/k").nodes == (1,)
    assert t.descendants("a") == (1, 4)
    assert t.descendants("") == (0, 1, 2, 3, 4)
    assert t.scope_of(1) == "a/k"
    assert t.depth_cut(1) == ("b", "a", "b", "", "a")
    assert t.depth_cut(0) == ("",) * 5
    assert t.find("/a/k/").name == "k" and t.find("a/k").depth == 2
    with pytest.raises(KeyError):
        t.find("nope")


def test_scoped_stack_folds_identical_layers():
    g = xcviz.load(f"{GRAPHS}/scoped_stack.yaml")
    c = xcviz.cluster(g)
    t = scope_tree(g)
    assert [s.path for s in t.root.children] == ["model"]
    assert [s.name for s in t.find("model").children] == ["embed", "layers.0", "layers.1", "layers.2", "layers.3", "head"]
    folds = fold_repeats(t, c)
    top = [f for f in folds if f.parent == "model"]
    assert len(top) == 1
    # layers.2's activation falls back (compile: false): it is not the same block as the others
    assert top[0].same == ("model/layers.0", "model/layers.1", "model/layers.3")
    assert top[0].differ == ("model/layers.2",)
    assert top[0].count == 3
    # without a clustering the four have the same ops and wiring
    assert fold_repeats(t)[0].same == tuple(f"model/layers.{k}" for k in range(4))


def test_scope_field_reads_and_writes_in_every_form(tmp_path):
    g = xcviz.parse_graph("graph g(%x: f32[2]) {\n  %a: f32[2] = relu(%x) [scope=\"enc/blk.0\"]\n  return %a\n}\n")
    assert g.nodes[0].scope == "enc/blk.0"
    assert scope_tree(g).scope_of(0) == "enc/blk.0"
    text = xcviz.print_graph(g)
    assert 'scope="enc/blk.0"' in text
    y = tmp_path / "g.yaml"
    y.write_text("name: g\ninputs: [{name: x, shape: [2], dtype: float32}]\n"
                 "nodes: [{name: a, op: Relu, inputs: [x], scope: enc/blk.0}]\noutputs: [a]\n")
    j = tmp_path / "g.json"
    j.write_text('{"name": "g", "inputs": [{"name": "x", "shape": [2], "dtype": "float32"}],'
                 ' "nodes": [{"name": "a", "op": "Relu", "inputs": ["x"], "scope": "enc/blk.0"}], "outputs": ["a"]}')
    for f in (y, j):
        assert scope_tree(xcviz.load(str(f))).scope_of(0) == "enc/blk.0"


def test_torch_module_paths_are_the_layers():
    """A torch.export program's nn_module_stack (Node.module) gives its layers, a numbered child one level with
    its list; the scope field stays empty (module paths group, never bar clustering)."""
    torch = pytest.importorskip("torch")

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 8)

        def forward(self, x):
            return torch.relu(self.fc(x))

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList([Block() for _ in range(3)])

        def forward(self, x):
            for b in self.layers:
                x = b(x)
            return x * 2

    ep = torch.export.export(Net().eval(), (torch.randn(2, 8),))
    g = xcviz.from_torch(ep)
    t = scope_tree(g)
    assert [c.path for c in t.root.children] == ["layers.0", "layers.1", "layers.2"]
    assert [c.path for c in t.find("layers.1").children] == ["layers.1/fc"]
    assert all(n.scope is None for n in g.nodes)
    assert t.root.nodes  # the final multiply sits in the root module
    fold = fold_repeats(t, xcviz.cluster(g))[0]
    assert fold.same == ("layers.0", "layers.1", "layers.2") and fold.label == "layers.0 … layers.2 ×3"


def test_tf_name_scopes_are_the_layers():
    """A Keras SavedModel's ops sit under its function call and the model's layer names."""
    g = xcviz.load("tests/data/tf_keras/conv1d_savedmodel")
    t = scope_tree(g)
    names = {s.name for s in t}
    node = next(i for i, n in enumerate(g.nodes) if n.op == "tf.Conv2D" or "conv1d" in n.name.lower())
    path = t.scope_of(node)
    assert path == g.nodes[node].name.rpartition("/")[0]
    assert "StatefulPartitionedCall" in names and len(t) > 5
