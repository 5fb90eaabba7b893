"""Control flow clustered as XLA would (TF's functional While/If): a Loop/If/Scan is one candidate when its whole
body compiles, its bodies are clustered and shown nested, and clusters holding them compile with lax.while_loop /
lax.scan / lax.cond and match onnxruntime."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import xcviz
from xcviz.runtime.measure import compare

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
pytest.importorskip("jax")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from tests.support.paths import ROOT  # noqa: E402

EXPORTS = os.path.join(ROOT, "tests", "data", "exports")
F = TensorProto.FLOAT


def _vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def _scan_body():
    return helper.make_graph([helper.make_node("Add", ["s", "xt"], ["s2"], name="s_add"),
                              helper.make_node("Identity", ["s2"], ["yt"], name="s_id")], "scan_body",
                             [_vi("s", [3]), _vi("xt", [3])], [_vi("s2", [3]), _vi("yt", [3])])


def _if_branches():
    then_g = helper.make_graph([helper.make_node("Mul", ["fin", "two"], ["t"], name="t_mul")], "then", [],
                               [_vi("t", [3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["fin"], ["e"], name="e_neg")], "else", [], [_vi("e", [3])])
    return then_g, else_g


def _loop_body(name, with_nonzero=False):
    """acc * half + bias (an outer tensor); with_nonzero: adds the count of nonzeros (a data-dependent shape)."""
    nodes = [helper.make_node("Mul", ["acc", "half"], ["h"], name=f"{name}_mul"),
             helper.make_node("Add", ["h", "bias"], ["acc2"], name=f"{name}_add"),
             helper.make_node("Identity", ["c"], ["c2"], name=f"{name}_cond")]
    if with_nonzero:
        nodes = [helper.make_node("NonZero", ["acc"], ["nz"], name=f"{name}_nz"),
                 helper.make_node("Cast", ["nz"], ["nzf"], to=F, name=f"{name}_cast"),
                 helper.make_node("ReduceSum", ["nzf"], ["cnt"], keepdims=0, name=f"{name}_sum"),
                 helper.make_node("Mul", ["acc", "half"], ["h0"], name=f"{name}_mul"),
                 helper.make_node("Add", ["h0", "cnt"], ["h"], name=f"{name}_addc"),
                 *nodes[1:]]
    outs = [_vi("c2", [], TensorProto.BOOL), _vi("acc2", [3])] + ([] if with_nonzero else [_vi("acc3", [3])])
    if not with_nonzero:
        nodes.append(helper.make_node("Identity", ["acc2"], ["acc3"], name=f"{name}_scan"))
    return helper.make_graph(nodes, name, [_vi("i", [], TensorProto.INT64), _vi("c", [], TensorProto.BOOL),
                                           _vi("acc", [3])], outs)


def control_model():
    """x -> relu -> mul -> Scan (running sum) -> ReduceSum > 0 -> If -> Loop (3 trips, stacked) -> tanh: one
    cluster with all three control-flow nodes; then a Loop whose body holds NonZero (falls back), then a
    cluster of three elementwise ops and an add."""
    then_g, else_g = _if_branches()
    inits = [numpy_helper.from_array(np.array([1.0, -2.0, 0.5], np.float32), "w"),
             numpy_helper.from_array(np.zeros(3, np.float32), "zero3"),
             numpy_helper.from_array(np.float32(2.0), "two"), numpy_helper.from_array(np.float32(0.5), "half"),
             numpy_helper.from_array(np.float32(0.0), "zero"),
             numpy_helper.from_array(np.array(3, np.int64), "M"), numpy_helper.from_array(np.array(True), "T")]
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Mul", ["r", "w"], ["rw"], name="mul"),
        helper.make_node("Scan", ["zero3", "rw"], ["fin", "ys"], body=_scan_body(), num_scan_inputs=1, name="scan0"),
        helper.make_node("ReduceSum", ["fin"], ["tot"], keepdims=0, name="total"),
        helper.make_node("Greater", ["tot", "zero"], ["pos"], name="positive"),
        helper.make_node("If", ["pos"], ["picked"], then_branch=then_g, else_branch=else_g, name="if0"),
        helper.make_node("Neg", ["picked"], ["bias"], name="bias"),
        helper.make_node("Loop", ["M", "T", "picked"], ["acc", "accs"], body=_loop_body("lb"), name="loop0"),
        helper.make_node("Tanh", ["acc"], ["ta"], name="tanh"),
        helper.make_node("Loop", ["M", "T", "ta"], ["acc_nz"], body=_loop_body("nzb", True), name="loop_nz"),
        helper.make_node("Sigmoid", ["acc_nz"], ["s1"], name="sig"),
        helper.make_node("Mul", ["s1", "two"], ["s2"], name="scale"),
        helper.make_node("Add", ["s2", "ta"], ["s3"], name="add"),
        helper.make_node("Exp", ["s3"], ["y"], name="exp"),
    ]
    graph = helper.make_graph(nodes, "control", [_vi("x", [4, 3])], [_vi("y", [3]), _vi("ys", [4, 3]),
                                                                     _vi("accs", [3, 3])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def control_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("cf") / "control.onnx"
    onnx.save(control_model(), str(path))
    return str(path)


def _ort(path, feeds):
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def _names(g, c):
    return [[g.nodes[i].name for i in m] for m in c.clusters]


def test_control_flow_nodes_cluster_when_their_bodies_compile(control_path):
    g = xcviz.load(control_path)
    c = xcviz.cluster(g)
    assert _names(g, c) == [["relu", "mul", "scan0", "total", "positive", "if0", "bias", "loop0", "tanh"],
                            ["sig", "scale", "add", "exp"]]
    # a loop-carried value whose body output is declared with its incoming type keeps it; stacked outputs get
    # the constant trip count (ONNX's own inference leaves both unknown)
    assert [str(t) for t in g.node("loop0").outputs] == ["float32[3]", "float32[3,3]"]
    assert [str(t) for t in g.node("if0").outputs] == ["float32[3]"]
    j = g.index["loop_nz"]
    assert not c.candidate[j]
    assert c.reason[j].startswith("body op 'nzb_nz' (NonZero) cannot be compiled: unsupported on cpu:"), c.reason[j]


@pytest.mark.parametrize("x", [np.array([[1, 2, 3], [0.5, -1, 2], [-3, 1, 1], [2, 2, -2]], np.float32),
                               -np.ones((4, 3), np.float32)])  # both If branches
@pytest.mark.slow
def test_hybrid_run_and_validate_match_onnxruntime(control_path, x):
    g = xcviz.load(control_path)
    want = _ort(control_path, {"x": x})
    for mode in ("hybrid", "jit", "native"):
        got = xcviz.run(g, {"x": x}, mode=mode)
        for k, ref in want.items():
            assert got[k].shape == ref.shape and got[k].dtype == ref.dtype, (mode, k)
            assert compare(got[k], ref)["max_rel"] <= 1e-4, (mode, k, got[k], ref)
    report = xcviz.validate(g, inputs={"x": x})
    assert report.ok and [c.status for c in report.clusters] == ["ok", "ok"]


def test_bodies_are_clustered_and_shown_nested(control_path, run_cli):
    code, out, _ = run_cli("cluster", control_path, "--min-cluster-size", "1")
    assert code == 0
    section = out[out.index("Control-flow bodies"):]
    # bodies of nodes in a cluster run inside it; the others are clustered on their own
    assert "Scan 'scan0' body: 2 ops; compiled whole inside cluster_0 (an XLA While)" in section
    assert "If 'if0' then: 1 op; compiled whole inside cluster_0 (an XLA Conditional)" in section
    assert "If 'if0' else: 1 op; compiled whole inside cluster_0 (an XLA Conditional)" in section
    assert "Loop 'loop0' body: 4 ops; compiled whole inside cluster_0 (an XLA While)" in section
    # the condition's lone Identity counts 0 toward a cluster's size (as TF's Identity): it stays out
    assert "Loop 'loop_nz' body: 1 cluster, 5/7 ops" in section
    assert "fallback nzb_nz (NonZero): unsupported on cpu: data-dependent output shape" in section
    code, out, _ = run_cli("cluster", control_path, "--json", "--min-cluster-size", "1")
    rep = json.loads(out)
    assert rep["schema_version"] == 1 and sorted(rep["bodies"]) == ["if0", "loop0", "loop_nz", "scan0"]
    [nz] = rep["bodies"]["loop_nz"]
    assert nz["attribute"] == "body" and nz["clustered_nodes"] == 5 and nz["nodes"] == 7 and nz["compiled_in"] is None
    assert rep["bodies"]["loop0"][0]["compiled_in"] == "cluster_0"
    assert nz["clusters"][0]["nodes"] == ["nzb_cast", "nzb_sum", "nzb_mul", "nzb_addc", "nzb_add"]
    assert [(f["node"], f["reason_code"]) for f in nz["fallback"]] == [("nzb_nz", "unsupported"),
                                                                        ("nzb_cond", "min-size")]
    assert [b["attribute"] for b in rep["bodies"]["if0"]] == ["then_branch", "else_branch"]
    code, out, _ = run_cli("explain", control_path, "loop_nz")
    assert code == 0 and "body op 'nzb_nz' (NonZero) cannot be compiled" in out
    assert "Loop 'loop_nz' body: 1 cluster, 5/7 ops" in out


def test_render_draws_each_body_in_its_own_frame(control_path):
    g = xcviz.load(control_path)
    dot = xcviz.render(g, xcviz.cluster(g), format="dot")
    dot = dot.decode() if isinstance(dot, bytes) else dot
    for k, label in enumerate(["Scan 'scan0' body", "If 'if0' then", "If 'if0' else", "Loop 'loop0' body",
                               "Loop 'loop_nz' body"]):
        assert f"subgraph cluster_b{k}_frame" in dot and label in dot
    assert dot == (lambda d: d.decode() if isinstance(d, bytes) else d)(xcviz.render(g, xcviz.cluster(g), format="dot"))
    assert 'b4_n0 [' in dot and 'class=xc_body' in dot


def test_branches_of_different_shapes_are_not_compilable(tmp_path):
    then_g = helper.make_graph([helper.make_node("Identity", ["a"], ["t"])], "then", [], [_vi("t", [3])])
    else_g = helper.make_graph([helper.make_node("Concat", ["a", "a"], ["e"], axis=0)], "else", [], [_vi("e", [6])])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["a"], name="r"),
                               helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g, name="if0")],
                              "ifs", [_vi("x", [3]), _vi("c", [], TensorProto.BOOL)], [_vi("y", None)])
    path = tmp_path / "ifs.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    g = xcviz.load(str(path))
    c = xcviz.cluster(g, min_cluster_size=1)
    j = g.index["if0"]
    assert not c.candidate[j]
    assert c.reason[j] == ("its branches give output 0 different types: then float32[3], else float32[6] "
                           "(an XLA Conditional returns one shape)")
    for cond in (True, False):
        feeds = {"x": np.array([1, -2, 3], np.float32), "c": np.array(cond)}
        want = _ort(str(path), feeds)["y"]
        assert np.array_equal(xcviz.run(g, feeds, mode="hybrid")["y"], want)


def test_greedy_decode_exports_cluster_like_xla():
    """dynamo's while_loop keeps fixed shapes: the Loop joins the cluster and its body is one cluster;
    TorchScript's loop grows its token tensor each step, so XLA cannot carry it."""
    g = xcviz.load(os.path.join(EXPORTS, "greedy_whileloop_dynamo.onnx"))
    c = xcviz.cluster(g)
    assert _names(g, c) == [["node_unsqueeze", "node_cat", "node_eq", "node_Cast_2_2", "node_ReduceMin_3",
                             "node_all_1", "node_bitwise_not", "node_bitwise_and", "node_while_loop__4"]]
    [body] = c.bodies  # the clustering pass clustered its bodies
    assert body.node == "node_while_loop__4" and [len(m) for m in body.clustering.clusters] == [25]
    assert body.compiled_in == "cluster_0"
    g = xcviz.load(os.path.join(EXPORTS, "greedy_decode_torchscript.onnx"))
    c = xcviz.cluster(g)
    j = g.index["/Loop"]
    assert c.reason[j] == ("loop-carried value 'tokens.11' changes shape from int64[2,1] to int64[2,2] across "
                           "iterations (an XLA While carries fixed shapes)")
    nested = c.bodies
    assert nested[0].compiled_in is None  # it runs natively: its body's own cluster is what runs compiled
    assert [(b.node, [len(m) for m in b.clustering.clusters]) for b in nested] == [("/Loop", [21])]
    assert [(b.node, b.attr) for b in nested[0].children] == [("/If", "then_branch"), ("/If", "else_branch")]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["greedy_whileloop_dynamo", "greedy_decode_torchscript"])
def test_greedy_decode_exports_validate_every_cluster(name):
    path = os.path.join(EXPORTS, f"{name}.onnx")
    g = xcviz.load(path)
    feeds = dict(np.load(path.replace(".onnx", ".inputs.npz")))
    report = xcviz.validate(g, inputs=feeds)
    assert report.ok and {c.status for c in report.clusters} == {"ok"}
    want = dict(np.load(path.replace(".onnx", ".ort.npz")))
    got = xcviz.run(g, feeds, mode="jit")  # every node with a lowering compiled: the Loop too where it can be
    for k, ref in want.items():
        assert np.array_equal(got[k], ref) if ref.dtype.kind in "iub" else compare(got[k], ref)["max_rel"] <= 1e-4


def _scan8_model(with_lens, direction: int):
    """Opset-8 Scan: batch axis 0, sequence axis 1; state s += x_t * k (k an initializer of the body's model)."""
    body = helper.make_graph([helper.make_node("Add", ["s", "xt"], ["s2"]), helper.make_node("Mul", ["s2", "xt"], ["y"])],
                             "b8", [_vi("s", [2]), _vi("xt", [2])], [_vi("s2", [2]), _vi("y", [2])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["lens" if with_lens else "", "s0", "x"], ["fin", "ys"], body=body,
                          num_scan_inputs=1, directions=[direction], name="scan8")],
        "scan8", [_vi("lens", [3], TensorProto.INT64), _vi("s0", [3, 2]), _vi("x", [3, 4, 2])][0 if with_lens else 1:],
        [_vi("fin", [3, 2]), _vi("ys", [3, 4, 2])])
    if with_lens == "constant":  # lengths known when compiling: one lax.scan per row, padded
        graph.initializer.append(numpy_helper.from_array(np.array([4, 2, 3], np.int64), "lens"))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)], ir_version=4)


@pytest.mark.slow
@pytest.mark.parametrize("with_lens,direction", [(True, 0), (True, 1), (False, 1), ("constant", 1)])
def test_opset8_scan_with_sequence_lens_matches_onnxruntime(tmp_path, with_lens, direction):
    path = tmp_path / "scan8.onnx"
    onnx.save(_scan8_model(with_lens, direction), str(path))
    rng = np.random.default_rng(1)
    feeds = {"lens": np.array([4, 2, 3], np.int64), "s0": rng.standard_normal((3, 2)).astype(np.float32),
             "x": rng.standard_normal((3, 4, 2)).astype(np.float32)}
    if with_lens is not True:
        del feeds["lens"]
    want = _ort(str(path), feeds)
    g = xcviz.load(str(path))
    c = xcviz.cluster(g, min_cluster_size=1)
    assert c.candidate[0] == (with_lens is not True), c.reason[0]
    if with_lens is True:
        assert c.reason[0].startswith("Scan of opset 8 with sequence_lens computed at run time")
    for mode in ("native", "hybrid", "jit"):
        got = xcviz.run(g, feeds, mode=mode)
        for k, ref in want.items():
            assert got[k].shape == ref.shape and compare(got[k], ref)["max_rel"] <= 1e-5, (mode, k, got[k], ref)


@pytest.mark.parametrize("impl", ["reference", "compiled"])
def test_both_mark_implementations_see_the_body_verdict(control_path, monkeypatch, impl):
    """The compiled pass reads candidates per decision kind: a Loop refused for its body gets its own kind."""
    if impl == "reference":  # (the executable spec in the compiled pass's place)
        from xcviz.clustering import mark, mark_reference

        monkeypatch.setattr(mark, "mark_for_compilation",
                            lambda g, c, o, progress=None: mark_reference.mark_for_compilation(g, c, o))
    g = xcviz.load(control_path)
    c = xcviz.cluster(g)
    assert _names(g, c) == [["relu", "mul", "scan0", "total", "positive", "if0", "bias", "loop0", "tanh"],
                            ["sig", "scale", "add", "exp"]]
    assert c.cluster_of[g.index["loop_nz"]] == -1 and c.code[g.index["loop_nz"]] == "unsupported"
