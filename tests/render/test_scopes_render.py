"""Pictures and reports by the model's own layers (ir.scopes): goldens of the scope index (folded repeats),
one scope drawn op by op, the JSON `scopes` key on a scoped YAML graph and on a torch-exported ONNX model;
`render --scope/--depth` on the command line, the picture cap, and TF variables drawn as parameters.

Rewrite the goldens with XCVIZ_UPDATE_GOLDEN=1 pytest tests/render/test_scopes_render.py, then review the diff."""
from __future__ import annotations

import json
import os

import pytest

import xcviz
from tests.support.goldens import check_golden
from tests.support.paths import GRAPHS, ROOT

GOLDEN = os.path.join(ROOT, "tests", "golden", "scopes")
STACK = os.path.join(GRAPHS, "scoped_stack.yaml")
BERT = os.path.join(ROOT, "tests", "data", "exports", "bert_torchscript.onnx")
TF_CONV = os.path.join(ROOT, "tests", "data", "tf_keras", "conv1d_savedmodel")


def _analysed(path):
    from xcviz.pipeline import AnalysisOptions, analyse

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return analyse(os.path.relpath(path, ROOT), AnalysisOptions())
    finally:
        os.chdir(cwd)


def _index(path, under="", depth=None):
    from xcviz.ir.scopes import fold_repeats, scope_tree
    from xcviz.render.dot_scopes import auto_depth, scope_index_dot
    from xcviz.render.params import stored_params
    from xcviz.render.view import final_view

    a = _analysed(path)
    tree = scope_tree(a.graph)
    folds = fold_repeats(tree, a.clustering)
    params = stored_params(a.graph)
    d = auto_depth(tree, folds, under, params.nodes)[0] if depth is None else depth
    return scope_index_dot(a.graph, final_view(a.graph, a.clustering, a.stats), tree, folds, under, d, params)


@pytest.mark.parametrize("depth", [None, 3])
def test_golden_scope_index(depth):
    dot = _index(STACK, depth=depth)
    assert dot == _index(STACK, depth=depth)  # deterministic
    # the three identical layers are one box, layers.2 (its activation forced off XLA) its own
    if depth is None:
        assert "layers.0 … layers.3 ×3" in dot and "differ: layers.2" in dot and "layers.2\\n4 ops" in dot
    check_golden(os.path.join(GOLDEN, f"scoped_stack.{'auto' if depth is None else f'depth{depth}'}.dot"), dot, __file__)


def test_golden_scopes_json():
    for path, name in ((STACK, "scoped_stack"), (BERT, "bert_torchscript")):
        a = _analysed(path)
        from xcviz.render.report_json import cluster_report

        report = cluster_report(a.graph, a.clustering, a.stats)
        data = {"scopes": report["scopes"], "node_scopes": {k: v["scope"] for k, v in report["nodes"].items()}}
        check_golden(os.path.join(GOLDEN, f"{name}.scopes.json"), json.dumps(data, indent=1) + "\n", __file__)
    bert = {s["path"]: s for s in report["scopes"]}
    # the exporter's two encoder layers are one block, and each lists what it holds
    assert bert["layers.0"]["repeats"]["same"] == ["layers.0", "layers.1"]
    assert bert["layers.1"]["repeat_of"] == "layers.0"
    assert bert["layers.0"]["nodes"] == 59 and bert["layers.0"]["clusters"]


def test_render_scope_and_depth(run_cli, tmp_path):
    out = tmp_path / "l2.dot"
    code, _, err = run_cli("render", STACK, "--scope", "model/layers.2", "-o", str(out))
    assert code == 0, err
    dot = out.read_text()
    check_golden(os.path.join(GOLDEN, "scoped_stack.scope-layers.2.dot"), dot, __file__)
    assert "model/layers.2/act/Relu" in dot and "model/layers.3" not in dot.replace("model/layers.1/Add", "")
    code, _, err = run_cli("render", STACK, "--depth", "1", "-o", str(tmp_path / "d1.dot"))
    assert code == 0, err
    assert "×3" not in (tmp_path / "d1.dot").read_text()  # one box: model
    code, _, err = run_cli("render", STACK, "--scope", "model/nope", "-o", str(tmp_path / "x.dot"))
    assert code == 2 and "no scope 'model/nope'" in err and "Traceback" not in err
    code, _, err = run_cli("render", STACK, "--scope", "model", "--compare", "greedy,mark", "-o", str(tmp_path / "c.svg"))
    assert code == 2 and "--scope/--depth" in err


def test_big_graph_draws_scope_index(run_cli, tmp_path):
    """Above READABLE nodes a graph with layers is drawn as its scope index, and says so."""
    from xcviz.render.dot_scopes import READABLE

    lines = ["name: big", "inputs: [{name: x, shape: [4, 8], dtype: float32}]", "nodes:"]
    prev, n = "x", 0
    for layer in range(40):
        for k in range(8):
            name = f"net/blocks.{layer}/op{k}/Relu"
            lines.append(f"  - {{name: {name}, op: Relu, inputs: [{prev}]}}")
            prev, n = name, n + 1
    lines.append(f"outputs: [{prev}]")
    assert n > READABLE
    src = tmp_path / "big.yaml"
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "big.dot"
    code, _, err = run_cli("render", str(src), "-o", str(out))
    assert code == 0, err
    assert "drawing the top scopes" in err
    dot = out.read_text()
    assert "blocks.0 … blocks.39 ×40" in dot and dot.count("xc_scope") == 2  # one box: xc_scope xc_scope_repeat
    code, _, err = run_cli("render", str(src), "--expand", "-o", str(out))
    assert code == 0 and "top scopes" not in err and out.read_text().count("xc_node") >= n


def test_picture_is_capped_and_says_so():
    from xcviz.render.layout import MAX_PX, capped, layout

    chain = "digraph{" + ";".join(f"n{i}->n{i + 1}" for i in range(400)) + "}"   # ~20,000 pt tall
    png = layout(chain, "png", engine="graphviz-pure")
    w, h = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert max(w, h) <= MAX_PX and "capped" in capped(png, "png")
    svg = layout(chain, "svg", engine="graphviz-pure")
    assert "scaled to" in capped(svg, "svg")
    assert capped(layout("digraph{a->b}", "svg", engine="graphviz-pure"), "svg") is None


def test_layout_failure_names_its_cause():
    from xcviz.render.layout import failure_cause

    panic = (b"thread 'main' panicked at src/rank.rs:12:5:\nindex out of bounds: the len is 3 but the index is 5\n"
             b"note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")
    assert failure_cause(panic, 101) == "crashed (index out of bounds: the len is 3 but the index is 5, at src/rank.rs:12:5)"
    assert "no cause given" in failure_cause(b"note: Some details are omitted, run with RUST_BACKTRACE=full\n", 101)
    assert failure_cause(b"", -9) == "killed by signal 9"


@pytest.mark.parametrize("mode", ["fold", "hide", "show"])
def test_tf_variables_are_parameters(mode):
    from xcviz.render.dot import build_dot
    from xcviz.render.view import final_view

    a = _analysed(TF_CONV)
    handles = [i for i, n in enumerate(a.graph.nodes) if n.op == "tf.VarHandleOp"]
    assert handles and all(a.clustering.cluster_of[i] < 0 for i in handles)  # (clustering: as TF, never compiled)
    dot = build_dot(a.graph, final_view(a.graph, a.clustering, a.stats), params=mode)
    drawn = [i for i in handles if f"\tn{i} [" in dot]
    reads = [i for i, n in enumerate(a.graph.nodes) if n.op == "tf.ReadVariableOp" and f"\tn{i} [" in dot]
    if mode == "show":
        assert len(drawn) == len(handles) and reads
    else:
        assert not drawn and not reads and "xc_code_unsupported" not in dot
    if mode == "fold":
        kernel = a.graph.nodes[handles[0]].name
        assert f"{kernel} ‹" in dot or any(a.graph.nodes[i].name in dot for i in handles)


def test_many_different_layers_are_drawn_in_runs():
    """60 different layers side by side are 20 boxes of 3 (each opened with --scope); shared graph inputs are
    drawn once per box that reads them, so the layout has no 60-rank edges."""
    from xcviz.ir import Graph, Node, Value
    from xcviz.ir.scopes import fold_repeats, scope_tree
    from xcviz.render.dot_scopes import MAX_SIBLINGS, RUNS, count_boxes, scope_cut, scope_index_dot
    from xcviz.render.params import stored_params
    from xcviz.render.view import final_view
    from xcviz.ir import TensorType

    t = TensorType((2, 2), "float32")
    nodes, prev = [], "x"
    for k in range(60):
        for j in range(4):   # different ops in each: the base-3 digits of k pick them
            name = f"net/l.{k}/r{j}"
            op = ("add", "mul", "sub")[k // 3 ** j % 3]
            nodes.append(Node(name, op, op.title(), inputs=(prev, "w"), outputs=[t]))
            prev = name
    g = Graph("many", (Value("x", t), Value("w", t)), nodes, (prev,))
    c = xcviz.cluster(g)
    tree = scope_tree(g)
    folds = fold_repeats(tree, c)
    assert not folds and 60 > MAX_SIBLINGS
    sc = scope_cut(tree, folds, "", 2)
    assert count_boxes(sc) == RUNS
    assert sc.box[0].startswith("net/l.0 … l.2")
    dot = scope_index_dot(g, final_view(g, c, xcviz.stats(g, c)), tree, folds, "", 2, stored_params(g))
    assert "l.57 … l.59 (3 layers)" in dot
    assert dot.count('"graph inputs"') == RUNS   # (w is read by every run: one inputs node each)


def test_scope_of_a_tf_function_call_draws_with_its_control_edges(run_cli, tmp_path):
    """--scope keeps the ordering edges inside the scope and leaves out the ones from outside."""
    g = xcviz.load(TF_CONV)
    assert any(n.control_inputs for n in g.nodes)
    out = tmp_path / "call.dot"
    code, _, err = run_cli("render", TF_CONV, "--scope", "StatefulPartitionedCall", "-o", str(out))
    assert code == 0, err
    dot = out.read_text()
    inside = [n for n in g.nodes if n.name.startswith("StatefulPartitionedCall/")]
    assert inside and all(n.name in dot for n in inside if n.op not in ("tf.VarHandleOp", "tf.ReadVariableOp", "tf.Const"))
