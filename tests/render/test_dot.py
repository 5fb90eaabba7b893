"""Golden DOT files, SVG structure and classes, escaping of hostile names, and the render command.

Rewrite the goldens with XCVIZ_UPDATE_GOLDEN=1 pytest tests/render/test_dot.py, then review the diff."""
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from tests.support.paths import GRAPHS, ROOT
from tests.support.goldens import check_golden

GOLDEN = os.path.join(ROOT, "tests", "golden")
SVG_NS = "{http://www.w3.org/2000/svg}"
EXAMPLES = sorted(f for f in os.listdir(GRAPHS) if f.endswith((".yaml", ".yml", ".json")))
VARIANTS = {"mark": dict(strategy="mark"), "greedy": dict(strategy="greedy"),
            "mark1.collapsed": dict(strategy="mark", min_cluster_size=1)}


def _analyse(path, **kw):
    from xcviz.pipeline import AnalysisOptions, analyse

    cwd = os.getcwd()
    os.chdir(ROOT)   # relative source paths, as in samples/
    try:
        a = analyse(os.path.relpath(path, ROOT), AnalysisOptions(**kw))
        return a.graph, a.clustering, a.stats
    finally:
        os.chdir(cwd)


def _dot(path, collapse=False, params="fold", **kw):
    from xcviz.render.dot import build_dot
    from xcviz.render.view import final_view

    g, c, s = _analyse(path, **kw)
    return build_dot(g, final_view(g, c, s), collapse=collapse, params=params)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name", EXAMPLES)
def test_golden_dot(name, variant):
    dot = _dot(os.path.join(GRAPHS, name), collapse=variant.endswith("collapsed"), **VARIANTS[variant])
    assert dot == _dot(os.path.join(GRAPHS, name), collapse=variant.endswith("collapsed"), **VARIANTS[variant])
    golden = os.path.join(GOLDEN, f"{os.path.splitext(name)[0]}.{variant}.dot")
    check_golden(golden, dot, __file__)


def _svg(path, collapse=False, params="fold", **kw):
    from xcviz.render.dot import build_dot
    from xcviz.render.layout import layout
    from xcviz.render.view import final_view

    g, c, s = _analyse(path, **kw)
    svg = layout(build_dot(g, final_view(g, c, s), collapse=collapse, params=params), "svg", engine="graphviz-pure")
    return g, c, s, ET.fromstring(svg)


def _groups(root, cls):
    return [g for g in root.iter(f"{SVG_NS}g") if cls in (g.get("class") or "").split()]


@pytest.mark.parametrize("name", EXAMPLES)
def test_svg_structure(name):
    """With parameters shown, every node, input and boundary edge the statistics count is drawn."""
    g, c, s, root = _svg(os.path.join(GRAPHS, name), params="show", min_cluster_size=1)
    assert len(_groups(root, "xc_cluster")) == len(c.clusters)
    fallback = _groups(root, "xc_fallback")
    assert len(fallback) == sum(1 for k in c.cluster_of if k < 0)
    for grp in fallback:
        polys = [e for e in grp.iter() if e.tag in (f"{SVG_NS}polygon", f"{SVG_NS}path")]
        assert any(p.get("stroke") == "#d62728" for p in polys)   # the FALLBACK red
    boundary = _groups(root, "xc_boundary")
    assert len(boundary) == s.boundary_edges
    for grp in boundary:
        assert any(p.get("stroke") == "#ffb000" for p in grp.iter(f"{SVG_NS}path"))
    inputs = {grp.find(f"{SVG_NS}title").text.split("\n")[0].split(" ", 2)[-1].split(" (read by")[0]
              for grp in _groups(root, "xc_input")}
    assert inputs == {v.name for v in g.inputs}   # a widely shared input is drawn once per use
    assert len(_groups(root, "xc_output")) == len(g.outputs)
    assert len(_groups(root, "xc_legend")) == 1
    # every node and edge carries a tooltip as its <title>, naming the node or tensor
    for grp in _groups(root, "node") + _groups(root, "edge"):
        title = grp.find(f"{SVG_NS}title")
        assert title is not None and title.text
    titles = {grp.find(f"{SVG_NS}title").text for grp in _groups(root, "xc_node")}
    for node in g.nodes:
        assert any(t.startswith(f"{node.name}: ") for t in titles), node.name


def test_seed_fallback_codes_and_collapse():
    g, c, s, root = _svg(os.path.join(GRAPHS, "seed_demo.yaml"), min_cluster_size=1)
    assert len(_groups(root, "xc_code_forced")) == 1        # p1, compile: false
    assert len(_groups(root, "xc_code_unsupported")) == 1   # l1, custom op
    g, c, s, root = _svg(os.path.join(GRAPHS, "seed_demo.yaml"), collapse=True, min_cluster_size=1)
    assert len(_groups(root, "xc_group")) == len(c.clusters)
    assert not _groups(root, "xc_cluster")
    labels = " ".join(t.text or "" for t in root.iter(f"{SVG_NS}text"))
    assert "cluster_0 · 3 ops" in labels


HOSTILE = ['q"uote', "br{ace}", "<script>alert(1)</script>", "amp&lt;ersand & co", "ünï·códe→", "new\nline",
           "back\\slash\\", "semi;colon -> x", "<b>html</b>", "]]>"]


def _hostile_yaml():
    import json

    nodes, prev = [], "x"
    for k, name in enumerate(HOSTILE):
        nodes.append({"name": name, "op": "relu" if k % 3 else "custom_nms", "inputs": [prev]})
        prev = name
    doc = {"name": 'hostile "graph" <svg>', "inputs": [{"name": "x", "shape": [4], "dtype": "float32"}],
           "nodes": nodes, "outputs": [prev]}
    return json.dumps(doc)   # JSON is YAML


def test_hostile_names_escaped(write_graph):
    from xcviz.render.dot import build_dot
    from xcviz.render.layout import layout
    from xcviz.render.view import final_view

    path = write_graph(_hostile_yaml(), "hostile.json")
    g, c, s = _analyse(path, min_cluster_size=1, allow_unknown=True)
    assert [n.name for n in g.nodes] == HOSTILE
    for collapse in (False, True):
        dot = build_dot(g, final_view(g, c, s), collapse=collapse)
        svg = layout(dot, "svg", engine="graphviz-pure").decode()
        root = ET.fromstring(svg)   # well-formed: nothing injected
        assert not list(root.iter(f"{SVG_NS}script")) and not list(root.iter("script"))
        assert not [e for e in root.iter() if e.tag.endswith("}b")]
        texts = [t.text or "" for t in root.iter(f"{SVG_NS}text")]
        titles = [t.text or "" for t in root.iter(f"{SVG_NS}title")]
        for name in HOSTILE:
            first = name.split("\n")[0]
            if not collapse or c.cluster_of[g.index[name]] < 0:
                assert first in texts, (name, collapse)   # drawn intact (a newline becomes a line break)
            assert any(name in t for t in titles) or collapse, name   # tooltip keeps the exact name
        assert any('hostile "graph" <svg>' in t for t in texts)


def test_render_cli_formats(tmp_path, run_cli, monkeypatch):
    seed = os.path.join(GRAPHS, "seed_demo.yaml")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("render", seed, "--min-cluster-size", "1")
    assert code == 0, err
    assert (tmp_path / "seed_demo.svg").read_bytes().startswith(b"<?xml")
    assert "wrote seed_demo.svg" in err and "2 clusters" in err
    code, _, err = run_cli("render", seed, "--png", "-o", "s.png")
    assert code == 0, err
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, _, err = run_cli("render", seed, "-o", "s.dot")   # format from the suffix
    assert code == 0 and (tmp_path / "s.dot").read_text().startswith("digraph")
    code, _, err = run_cli("render", seed, "--compare", "greedy,mark", "--svg", "-o", "cmp.svg")
    assert code == 0, err
    root = ET.parse(tmp_path / "cmp.svg").getroot()
    assert len(_groups(root, "xc_compare")) == 2 and len(_groups(root, "xc_cluster")) == 3  # greedy 3 + mark (min 4) 0
    code, _, err = run_cli("render", seed, "--svg", "--png")
    assert code == 2 and "choose one of" in err
    code, _, err = run_cli("render", seed, "-o", seed)
    assert code == 2 and "input file" in err
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".xcviz-")]


def test_auto_collapse_notice(write_graph, run_cli, tmp_path, monkeypatch):
    import json

    from xcviz.render import collapse

    monkeypatch.setattr(collapse, "AUTO_COLLAPSE", 3)
    path = write_graph(json.dumps({"name": "chain", "inputs": [{"name": "x", "shape": [4], "dtype": "float32"}],
                                   "nodes": [{"name": f"r{k}", "op": "relu", "inputs": [f"r{k - 1}" if k else "x"]}
                                             for k in range(5)], "outputs": ["r4"]}), "chain.json")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("render", path, "--dot", "-o", "c.dot")
    assert code == 0 and "drawing each cluster as one node" in err
    assert "xc_group" in (tmp_path / "c.dot").read_text()
    code, _, err = run_cli("render", path, "--dot", "-o", "e.dot", "--expand")
    assert code == 0 and "drawing each cluster" not in err
    assert "xc_group" not in (tmp_path / "e.dot").read_text()


def test_shared_input_drawn_per_use(write_graph):
    import json

    from xcviz.render.dot_parts import SHARED_FANOUT

    n = SHARED_FANOUT + 2
    path = write_graph(json.dumps({
        "name": "shared", "inputs": [{"name": "x", "shape": [4, 4], "dtype": "float32"},
                                     {"name": "w", "shape": [4, 4], "dtype": "float32"}],
        "nodes": [{"name": f"m{k}", "op": "matmul", "inputs": [f"m{k - 1}" if k else "x", "w"]} for k in range(n)],
        "outputs": [f"m{n - 1}"]}), "shared.json")
    for collapse in (False, True):
        dot = _dot(path, collapse=collapse, min_cluster_size=1)
        assert dot.count('[label="w\\nfloat32[4,4]"') == (1 if collapse else n)   # collapsed: one edge into the cluster
        assert dot.count('[label="x\\nfloat32[4,4]"') == 1


ONNX_GOLDEN = ["resnet_mini.onnx", "tiny_mlp_onnx.json"]   # graphs with initializers / const nodes


@pytest.mark.parametrize("collapse", [False, True])
@pytest.mark.parametrize("name", ONNX_GOLDEN)
def test_golden_dot_params_folded(name, collapse):
    dot = _dot(os.path.join(GRAPHS, name), collapse=collapse)
    golden = os.path.join(GOLDEN, f"{os.path.splitext(name)[0]}.folded{'.collapsed' if collapse else ''}.dot")
    check_golden(golden, dot, __file__)


@pytest.mark.parametrize("name", ["resnet_mini.onnx", "tiny_mlp_onnx.json", "detection_head.yaml"])
def test_params_fold_show_hide(name):
    """Folded: no parameter is drawn as a node or edge; each appears as a `name ‹shape› dtype` line in every
    consumer's label (or a "+N params" line). Hidden: not at all. Shown: as graph inputs and const nodes."""
    from xcviz.render.params import param_line, param_value, short_name, stored_params

    path = os.path.join(GRAPHS, name)
    g, c, s, root = _svg(path, params="fold", min_cluster_size=1)
    p = stored_params(g)
    assert p.inputs or p.nodes, name
    drawn_inputs = {grp.find(f"{SVG_NS}title").text.split("\n")[0].split(" ", 2)[-1].split(" (read by")[0]
                    for grp in _groups(root, "xc_input")}
    assert drawn_inputs == {v.name for k, v in enumerate(g.inputs) if k not in p.inputs}
    titles = [grp.find(f"{SVG_NS}title").text for grp in _groups(root, "xc_node")]
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG_NS}text"))
    for j in p.nodes:
        assert not any(t.startswith(f"{g.nodes[j].name}: ") for t in titles)
    params = {v.name for k, v in enumerate(g.inputs) if k in p.inputs} | {g.nodes[j].name for j in p.nodes}
    inputs = {v.name: k for k, v in enumerate(g.inputs)}
    for node in g.nodes:
        for ref in node.inputs:
            if ref in params:
                line = param_line(ref, g.tensor_type(ref).bind(g.dims), param_value(g, ref, inputs))
                assert line in texts or " params · " in texts, (node.name, line)
    for edge in _groups(root, "edge"):
        head = (edge.find(f"{SVG_NS}title").text or "").split(" → ")[0]
        assert head not in params, head
    fold_size = len(_groups(root, "node"))
    _, _, _, shown = _svg(path, params="show", min_cluster_size=1)
    _, _, _, hidden = _svg(path, params="hide", min_cluster_size=1)
    assert len(_groups(shown, "node")) > fold_size == len(_groups(hidden, "node"))
    hidden_lines = [t.text or "" for t in hidden.iter(f"{SVG_NS}text")]
    assert not any(t.startswith((short_name(n) + " ‹", short_name(n) + " = ")) for n in params for t in hidden_lines)


def test_param_line():
    from xcviz.ir import TensorType
    from xcviz.render.params import param_line

    assert param_line("W", TensorType((64, 64), "float32")) == "W ‹64×64› f32"
    assert param_line("s", TensorType((), "float32")) == "s ‹scalar› f32"
    assert param_line("x", TensorType(None, None)) == "x ‹?› ?"
    assert param_line("eps", TensorType((), "float32"), np.float32(1e-5)) == "eps = 1e-05 f32"
    assert param_line("axes", TensorType((2,), "int64"), np.array([0, 2])) == "axes = [0, 2] i64"
    assert param_line("big", TensorType((5,), "int64"), np.arange(5)) == "big ‹5› i64"
    assert param_line("model.encoder.layer.3.attention.query.weight", TensorType((8,), "float16")) == \
        "model.en…query.weight ‹8› f16"   # cut in the middle, never from the left (issue 30)


def test_fallback_label_carries_reason_words():
    """A PNG has no tooltips: the reason in words is in the label (wrapped), not only its code."""
    g, c, s, root = _svg(os.path.join(GRAPHS, "seed_demo.yaml"), min_cluster_size=1)
    texts = [t.text or "" for t in root.iter(f"{SVG_NS}text")]
    assert "forced off (compile: false)" in texts
    assert any(t.startswith("unsupported on cpu: custom op") for t in texts)


def _bbox_of_text(el, fontsize_default=11.0):
    size = float(el.get("font-size", fontsize_default))
    x, y = float(el.get("x")), float(el.get("y"))
    w = len(el.text or "") * size * 0.55
    anchor = el.get("text-anchor", "start")
    x0 = x - w / 2 if anchor == "middle" else (x - w if anchor == "end" else x)
    return x0, y - size, x0 + w, y + size * 0.25


def _path_points(d):
    import re

    nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", d)]
    pts = list(zip(nums[0::2], nums[1::2]))
    out = [pts[0]]
    for k in range(1, len(pts) - 2, 3):   # "M p0 C p1 p2 p3 ...": sample each cubic
        p0, p1, p2, p3 = out[-1] if k == 1 else pts[k - 1], pts[k], pts[k + 1], pts[k + 2]
        for t in [i / 20 for i in range(1, 21)]:
            u = 1 - t
            out.append(tuple(u ** 3 * a + 3 * u * u * t * b + 3 * u * t * t * c_ + t ** 3 * d_
                             for a, b, c_, d_ in zip(p0, p1, p2, p3)))
    return out


@pytest.mark.parametrize("name", ["seed_demo.yaml", "resnet_block.yaml", "detection_head.yaml", "resnet_mini.onnx"])
def test_no_edge_crosses_a_cluster_title(name):
    g, c, s, root = _svg(os.path.join(GRAPHS, name), min_cluster_size=1)
    boxes = [_bbox_of_text(t) for grp in _groups(root, "xc_cluster_title") for t in grp.iter(f"{SVG_NS}text")]
    assert len(boxes) == len(c.clusters)
    for edge in _groups(root, "edge"):
        for path in edge.iter(f"{SVG_NS}path"):
            for x, y in _path_points(path.get("d")):
                for x0, y0, x1, y1 in boxes:
                    assert not (x0 <= x <= x1 and y0 <= y <= y1), (edge.find(f"{SVG_NS}title").text, (x, y))


def test_default_names_from_the_file_stem_and_view(tmp_path, run_cli, monkeypatch):
    """Two exports with one internal graph name (torch calls every graph main_graph) do not overwrite each
    other; --compare and --collapse pictures do not overwrite the plain one."""
    import shutil

    monkeypatch.chdir(tmp_path)
    for stem in ("a", "b"):
        shutil.copy(os.path.join(GRAPHS, "resnet_mini.onnx"), tmp_path / f"{stem}.onnx")
        code, _, err = run_cli("render", f"{stem}.onnx", "--dot")
        assert code == 0, err
    assert (tmp_path / "a.dot").read_text() == (tmp_path / "b.dot").read_text()   # same graph, two files
    seed = os.path.join(GRAPHS, "seed_demo.yaml")
    for extra in ([], ["--collapse"], ["--compare", "greedy,mark"]):
        code, _, err = run_cli("render", seed, "--dot", *extra)
        assert code == 0, err
    assert sorted(p for p in os.listdir(tmp_path) if p.startswith("seed_demo")) == [
        "seed_demo.collapsed.dot", "seed_demo.compare-greedy-mark.dot", "seed_demo.dot"]


def _text_boxes(root, cls):
    """(x0, y0, x1, y1, text, owner) of each text line in groups of class `cls`, sized for a wide sans font."""
    out = []
    for grp in _groups(root, cls):
        owner = grp.find(f"{SVG_NS}title").text
        for t in grp.iter(f"{SVG_NS}text"):
            x0, y0, x1, y1 = _bbox_of_text(t, 9.0)
            out.append((x0, y0, x1, y1, t.text, owner))
    return out


@pytest.mark.parametrize("name", EXAMPLES + ["resnet_mini.onnx", "unet_mini.onnx", "detector_mini.onnx"])
def test_edge_labels_do_not_collide(name):
    g, c, s, root = _svg(os.path.join(GRAPHS, name), min_cluster_size=1)
    boxes = _text_boxes(root, "edge")
    for k, a in enumerate(boxes):
        for b in boxes[k + 1:]:
            if a[5] != b[5]:
                assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a[4], b[4])


@pytest.mark.parametrize("name", ["seed_demo.yaml", "cycle_refused.yaml", "tiny_mlp_onnx.json"])
def test_title_and_legend_are_not_clipped(name):
    """Text Graphviz sized with Helvetica still fits the picture in a ~10 % wider font (DejaVu Sans)."""
    g, c, s, root = _svg(os.path.join(GRAPHS, name), collapse=True, min_cluster_size=1)
    width = float(root.get("viewBox").split()[2])
    top = root.find(f"{SVG_NS}g")   # the graph group: its own <text> children are the title's lines
    texts = [t for t in top.findall(f"{SVG_NS}text")] + \
        [t for grp in _groups(root, "xc_legend") for t in grp.iter(f"{SVG_NS}text")]
    assert texts
    for t in texts:
        x0, _, x1, _ = _bbox_of_text(t, 9.0)
        assert x0 >= 0 and x1 <= width, (t.text, x1, width)
