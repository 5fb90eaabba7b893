"""Control-flow bodies are IR: the loader builds each body once (Graph.bodies); cluster, cost, run and render read it, never its bytes."""
import json
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="ONNX control flow: pip install -e '.[onnx]'")

import xcviz  # noqa: E402
from xcviz.cost import control as cost_control  # noqa: E402
from xcviz.loaders import onnx_model  # noqa: E402
from xcviz.ir import Body  # noqa: E402
from tests.support.paths import TESTS  # noqa: E402

# a TorchScript greedy decoder: a Loop whose body holds an If (two branches), so three bodies, one nested
MODEL = os.path.join(TESTS, "data", "exports", "greedy_decode_torchscript.onnx")
BODIES = ["body 'sub_graph'", "body 'sub_graph1'", "body 'sub_graph2'"]


@pytest.fixture
def builds(monkeypatch):
    """The sources of every graph the ONNX reader builds (a body's is 'body NAME'); and, once armed, any parse
    of a GraphProto's bytes fails the test."""
    seen: list[str] = []
    real = onnx_model.graph_from_model

    def counting(model, source, *args, **kw):
        seen.append(source)
        return real(model, source, *args, **kw)

    monkeypatch.setattr(onnx_model, "graph_from_model", counting)

    def arm():
        def refuse(self, data):
            raise AssertionError("a body's bytes were parsed again after loading")
        monkeypatch.setattr(onnx.GraphProto, "ParseFromString", refuse)
    return seen, arm


def _subgraphs(graph) -> list:
    found = []
    for node in graph.nodes:
        for v in node.attrs.values():
            if isinstance(v, Body):
                found += [v, *_subgraphs(v.graph)]
    return found


def test_the_loader_builds_each_body_once_and_graph_bodies_maps_them(builds):
    seen, _ = builds
    g = xcviz.load(MODEL)
    assert seen == [MODEL, *BODIES]  # the outer graph, then the Loop's body, then the If's two branches inside it
    loop = g.bodies[("/Loop", "body")]
    assert list(g.bodies) == [("/Loop", "body")] and len(loop.nodes) == 21
    assert list(loop.bodies) == [("/If", "then_branch"), ("/If", "else_branch")]
    assert g.node("/Loop").attrs["body"].graph is loop  # the attribute carries the very Graph the mapping gives
    # its outer-scope names are inputs of the body graph, as the runtime feeds them
    assert set(g.node("/Loop").attrs["_outer"]) <= {v.name for v in loop.inputs}


def test_cluster_cost_explain_and_render_read_the_loaders_bodies(builds):
    seen, arm = builds
    g = xcviz.load(MODEL)
    loaded = list(seen)
    arm()
    for sub in _subgraphs(g):
        object.__setattr__(sub, "proto", b"\xff not a GraphProto")  # (a frozen Body: forced) whoever still read the bytes would fail
    c = xcviz.cluster(g)
    loop, inner = g.bodies[("/Loop", "body")], g.bodies[("/Loop", "body")].bodies
    [b] = c.bodies
    # clustering's body graph is the loader's, seen from its node (outer-scope inputs typed): same nodes
    assert b.graph.nodes is loop.nodes and [x.graph.nodes for x in b.children] == [
        inner[("/If", "then_branch")].nodes, inner[("/If", "else_branch")].nodes]
    assert b.children is b.clustering.bodies  # a body's clustering carries its own bodies
    s = xcviz.stats(g, c)
    assert s.clusters == len(c.clusters)
    from xcviz.render.view import final_view

    assert final_view(g, c, s).bodies[0] is b  # the picture's frames
    dot = xcviz.render(g, c, format="dot")
    assert "Loop '/Loop' body" in dot
    story = xcviz.explain(g, c, "/Loop")
    assert story["bodies"] == [b]
    assert seen == loaded  # nothing built a body again


@pytest.mark.slow
def test_a_hybrid_run_runs_the_body_with_the_clustering_the_pass_made(builds):
    seen, arm = builds
    g = xcviz.load(MODEL)
    loaded = list(seen)
    arm()
    for sub in _subgraphs(g):
        object.__setattr__(sub, "proto", b"\xff not a GraphProto")  # (a frozen Body: forced)
    c = xcviz.cluster(g)
    [b] = c.bodies
    pytest.importorskip("jax", reason="a hybrid run compiles the body's clusters: pip install -e '.[jax]'")
    from xcviz.runtime.execute import execute
    from xcviz.runtime.identity import Same
    from xcviz.runtime.inputs import bind_inputs
    from xcviz.runtime.jit import CompileCache

    feeds = bind_inputs(g, dict(np.load(MODEL.replace(".onnx", ".inputs.npz"))), 0)
    want = np.load(MODEL.replace(".onnx", ".ort.npz"))
    cache = CompileCache()
    got = execute(g, feeds, "hybrid", c, cache).outputs
    for name, value in got.items():
        np.testing.assert_allclose(value, want[name], rtol=1e-5, atol=1e-5)
    # the Loop ran natively, its body hybrid per iteration with the clustering the pass made for it
    [plan] = cache.plans.values()
    [body_cache] = plan.bodies.values()
    assert [key for key in body_cache.plans] == [("hybrid", "clustering", Same(b.clustering))]
    assert seen == loaded


def test_cost_retypes_the_loaders_body(builds, tmp_path):
    """A Loop of 5 trips of x @ W (f32[1,8] by an outer-scope f32[8,8]): its cost is the loader's body, retyped
    with the node's types (a new graph of the same nodes), 5 times."""
    from onnx import TensorProto as T, helper, numpy_helper as nh

    from xcviz.cost.keys import control_node_cost

    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_in", "W"], ["x_out"]), helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [helper.make_tensor_value_info("i", T.INT64, []), helper.make_tensor_value_info("cond_in", T.BOOL, []),
                 helper.make_tensor_value_info("x_in", T.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", T.BOOL, []), helper.make_tensor_value_info("x_out", T.FLOAT, None)])
    inits = [nh.from_array(np.array(True), "c"), nh.from_array(np.ones((8, 8), np.float32), "W"),
             nh.from_array(np.array(5, np.int64), "M")]
    graph = helper.make_graph([helper.make_node("Loop", ["M", "c", "x"], ["y"], body=body, name="loop")], "g",
                              [helper.make_tensor_value_info("x", T.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info("y", T.FLOAT, [1, 8])], inits)
    path = tmp_path / "loop.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    seen, arm = builds
    g = xcviz.load(str(path))
    assert seen == [str(path), "body 'body'"]
    arm()
    loaded = g.bodies[("loop", "body")]
    typed = []
    real = cost_control.typed_body
    cost_control.typed_body = lambda *a: typed.append(real(*a)) or typed[-1]
    try:
        flops, _, why, _ = control_node_cost(g, g.node("loop"))
    finally:
        cost_control.typed_body = real
    assert (flops, why) == (5 * (2 * 8 * 8 + 0), None)  # MatMul [1,8]x[8,8]; the Identity of a bool costs none
    [t] = typed
    assert t is not loaded and [n.name for n in t.nodes] == [n.name for n in loaded.nodes]
    assert loaded.tensor_type(loaded.nodes[0].name).shape is None  # the loader's body keeps its own types
    assert t.tensor_type(t.nodes[0].name).shape == (1, 8)  # the copy has the node's
    assert seen == [str(path), "body 'body'"]


def test_the_cli_builds_each_body_once_per_command(builds, run_cli, tmp_path):
    seen, _ = builds
    out = tmp_path / "r.json"
    code, _, err = run_cli("cluster", MODEL, "--json", "-o", str(out))
    assert code == 0, err
    assert seen == [MODEL, *BODIES]
    assert [b["attribute"] for b in json.loads(out.read_text())["bodies"]["/Loop"]] == ["body"]
    seen.clear()
    code, _, err = run_cli("report", MODEL, "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    assert seen == [MODEL, *BODIES]


def test_equal_bodies_in_one_file_are_built_once_and_shared(builds, tmp_path):
    """Exporters repeat identical If branches: one build per distinct body, the nodes share its Graph."""
    from onnx import TensorProto as T, helper

    def branch(op):
        return helper.make_graph([helper.make_node(op, ["x"], ["y"])], op.lower(), [],
                                 [helper.make_tensor_value_info("y", T.FLOAT, [2])])
    nodes = [helper.make_node("If", ["c"], [f"y{k}"], name=f"if{k}", then_branch=branch("Relu"),
                              else_branch=branch("Neg")) for k in range(3)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [2]),
                                           helper.make_tensor_value_info("c", T.BOOL, [])],
                              [helper.make_tensor_value_info(f"y{k}", T.FLOAT, [2]) for k in range(3)])
    path = tmp_path / "ifs.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    seen, _ = builds
    g = xcviz.load(str(path))
    assert sorted(seen) == sorted([str(path), "body 'relu'", "body 'neg'"])  # (the file orders the attributes)
    assert len(g.bodies) == 6 and len({id(b) for b in g.bodies.values()}) == 2
    c = xcviz.cluster(g, min_cluster_size=1)
    assert [(b.node, b.attr) for b in c.bodies] == [(f"if{k}", a) for k in range(3) for a in ("then_branch", "else_branch")]
