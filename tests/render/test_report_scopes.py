"""The scope view's data (render/report_html_scopes.py) against independent counts from the graph and its
clustering: every op in exactly one view, each scope's totals, the boundary bytes, folds, parts, and no
whole-graph Graphviz layout above 500 ops."""
import os
import sys

import pytest

from tests.support.paths import GRAPHS, ROOT


def _analyse(path, **opts):
    from xcviz.pipeline import AnalysisOptions, analyse

    return analyse(path, AnalysisOptions(**opts))


def _under(recs, k):
    """Record k and every record below it."""
    out, stack = [], [k]
    while stack:
        r = stack.pop()
        out.append(r)
        stack.extend(recs[r]["c"])
    return out


def _check_totals(a, view):
    from xcviz.ir import parse_ref

    recs, at = view["scopes"], view["at"]
    shown = [i for r in recs for i in r["k"]]
    assert sorted(shown) == list(range(len(a.graph.nodes)))          # every op drawn once
    assert all(at[i] == k for k, r in enumerate(recs) for i in r["k"])
    group = a.clustering.cluster_of
    nbytes = {}
    for j, node in enumerate(a.graph.nodes):                         # boundary edges, from the graph itself
        for ref in dict.fromkeys(r for r in node.inputs if r):
            p = a.graph.index.get(parse_ref(ref)[0])
            if p is not None and group[p] != group[j] and (group[p] >= 0 or group[j] >= 0):
                nbytes[(p, j)] = nbytes.get((p, j), 0) + (a.graph.tensor_type(ref).nbytes(a.graph.dims) or 0)
    for k, r in enumerate(recs):
        ops = {i for s in _under(recs, k) for i in recs[s]["k"]}
        assert r["o"] == len(ops)
        assert r["m"] == sum(group[i] >= 0 for i in ops) and r["f"] == sum(group[i] < 0 for i in ops)
        assert r["g"] == len({group[i] for i in ops if group[i] >= 0})
        assert r["b"] == sum(b for (p, j), b in nbytes.items() if p in ops or j in ops)
        assert len(r["c"]) + len(r["k"]) <= 80                        # a view stays small enough to lay out


def test_scoped_stack_totals_and_fold():
    from xcviz.render.report_html_scopes import scope_view

    a = _analyse(os.path.join(GRAPHS, "scoped_stack.yaml"))
    view = scope_view(a.graph, a.clustering)
    _check_totals(a, view)
    recs = view["scopes"]
    by_path = {r["p"]: k for k, r in enumerate(recs)}
    first = recs[by_path["model/layers.0"]]
    assert first["x"] == 3 and [recs[k]["p"] for k in first["same"]] == ["model/layers.0", "model/layers.1", "model/layers.3"]
    assert [recs[k]["p"] for k in first["differ"]] == ["model/layers.2"]   # its activation is forced off XLA
    assert recs[by_path["model/layers.1"]]["h"] == by_path["model/layers.0"]
    assert "h" not in recs[by_path["model/layers.2"]]


def test_generated_graph_in_parts_and_scopes():
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from generate import generate, to_json

    from xcviz.render.report_html_scopes import scope_view

    for scoped in (False, True):
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(to_json(generate(3000, scopes=scoped)))
        try:
            a = _analyse(f.name)
        finally:
            os.unlink(f.name)
        view = scope_view(a.graph, a.clustering)
        _check_totals(a, view)
        recs = view["scopes"]
        if scoped:
            assert [recs[c]["n"] for c in recs[0]["c"]] == [f"stage{s}" for s in range(10)]
        else:   # no scopes: parts of up to 50 ops, in model order, grouped until a view has at most 80 items
            parts = [r for r in recs if r.get("v") and r["k"]]
            assert all(len(r["k"]) <= 50 for r in parts)
            assert [i for r in parts for i in r["k"]] == list(range(3000))


def test_above_500_ops_no_graphviz(monkeypatch):
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from generate import generate, to_json

    import importlib

    report_html = importlib.import_module("xcviz.render.report_html")

    def refuse(*args, **kwargs):
        raise AssertionError("a whole-graph Graphviz layout")

    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(to_json(generate(800, scopes=True)))
    try:
        a = _analyse(f.name)
    finally:
        os.unlink(f.name)
    monkeypatch.setattr(report_html, "run_layout", refuse)
    data = report_html.report_data(a.graph, a.clustering, a.stats, collapse=False)
    assert data["view"] == "scopes" and data["items"] == [] and data["frames"] is None
    assert len(data["nodes"]) == 800 and data["attempts"] is not None   # stories and tables stay
    page = report_html.page(data)
    assert "dagre" in page and page.count("<script") == 2
    with pytest.raises(AssertionError):   # (below 500 ops the picture is still laid out whole)
        small = _analyse(os.path.join(GRAPHS, "seed_demo.yaml"))
        report_html.report_data(small.graph, small.clustering, small.stats)


def test_a_thousand_levels_deep(write_graph):
    """A hostile file's scope path of 1,000 levels: drawn down to MAX_DEPTH, every op still in one view."""
    from xcviz.render.report_html_scopes import MAX_DEPTH, scope_view

    deep = "/".join(f"s{k}" for k in range(1000))
    path = write_graph(f"""
name: deep
inputs: [{{name: x, shape: [4], dtype: float32}}]
nodes:
  - {{name: a, op: relu, inputs: [x], scope: "{deep}"}}
  - {{name: b, op: tanh, inputs: [a]}}
outputs: [b]
""")
    a = _analyse(path)
    view = scope_view(a.graph, a.clustering)
    assert sorted(i for r in view["scopes"] for i in r["k"]) == [0, 1]
    assert max(r["p"].count("/") for r in view["scopes"]) + 1 == MAX_DEPTH


def test_big_records_compact_and_whole(tmp_path):
    """Above 500 ops the records leave out their common values and number their types; the page puts back
    exactly the records a small page carries (checked in Chromium by test_report_scopes_browser)."""
    import copy

    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from generate import generate, to_json

    from xcviz.render.report_html_data import node_records
    from xcviz.render.report_html_scopes import compact_records

    src = tmp_path / "g.json"
    src.write_text(to_json(generate(700, scopes=True)), encoding="utf-8")
    a = _analyse(str(src))
    full = node_records(a.graph, a.clustering)
    small = copy.deepcopy(full)
    d = compact_records(small)
    for rec, want in zip(small, full):   # the page's fill-in, in Python
        back = {k: d[k] for k in ("attrs", "params", "cand", "d")}
        back.update(rec)
        back.setdefault("op", back["t"])
        back["in"] = [x if isinstance(x, str) else f"{x[0]}: {d['types'][x[1]]}" for x in back["in"]]
        back["out"] = [d["types"][x] for x in back["out"]]
        assert back == want
