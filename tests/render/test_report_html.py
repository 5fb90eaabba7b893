"""The HTML report's page and data: golden skeleton, determinism, agreement with the JSON report, explain and
frames, folded parameters, the collapsed view, hostile names, and the command line."""
import json
import os
import re

import pytest

from tests.support.paths import GRAPHS, ROOT
from tests.support.goldens import check_golden

GOLDEN = os.path.join(ROOT, "tests", "golden", "report")
ENGINE = "graphviz-pure"    # the same bytes on every machine (as samples/)
CASES = {"seed_demo": dict(min_cluster_size=1), "cycle_refused": dict(min_cluster_size=1), "resnet_mini": {}}


def _analyse(name, **opts):
    from xcviz.pipeline import AnalysisOptions, analyse

    path = next(os.path.join(GRAPHS, f) for f in sorted(os.listdir(GRAPHS)) if os.path.splitext(f)[0] == name)
    return analyse(os.path.relpath(path), AnalysisOptions(**opts))


def _page(name, **kw):
    from xcviz.render.report_html import build_report

    a = _analyse(name, **CASES.get(name, {}))
    return a, build_report(a.graph, a.clustering, a.stats, engine=ENGINE, **kw)


def data_of(page: str) -> dict:
    m = re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S)
    return json.loads(m.group(1))


def skeleton(page: str) -> str:
    """The page with the inline style and script bodies elided and the data pretty-printed: what a golden reviews."""
    data = data_of(page)
    page = re.sub(r'(<script id="data" type="application/json">).*?(</script>)',
                  lambda m: m.group(1) + "\n" + json.dumps(data, indent=1, ensure_ascii=False) + "\n" + m.group(2), page,
                  flags=re.S)
    page = re.sub(r"<style>.*?</style>", "<style>/* report.css */</style>", page, flags=re.S)
    return re.sub(r"<script>\n.*?</script>", "<script>/* graph.js, report.js */</script>", page, flags=re.S)


@pytest.mark.parametrize("name", ["seed_demo", "cycle_refused"])
def test_golden_skeleton(name):
    _, page = _page(name)
    check_golden(os.path.join(GOLDEN, f"{name}.skeleton.html"), skeleton(page), __file__)


def test_deterministic_and_self_contained():
    _, first = _page("seed_demo")
    _, second = _page("seed_demo")
    assert first == second
    assert ROOT not in first and os.getcwd() not in first
    # nothing the page could fetch: no src/href attribute, no url(), no import; the CSP forbids any fetch
    assert not re.search(r"""\b(src|href)\s*=|url\(\s*['"]?(?!#)|@import|fetch\(|XMLHttpRequest""", first)
    assert "default-src 'none'" in first


def test_agrees_with_the_json_report():
    from xcviz.render.report_json import cluster_report

    for name in CASES:
        a, page = _page(name)
        data, ref = data_of(page), cluster_report(a.graph, a.clustering, a.stats)
        names = [n["name"] for n in data["nodes"]]
        assert [[names[i] for i in c["members"]] for c in data["clusters"]] == [c["nodes"] for c in ref["clusters"]]
        for n in data["nodes"]:
            r = ref["nodes"][n["name"]]
            assert (n["t"], n["op"], r["cluster"]) == (r["op_type"], r["op"], data["clusters"][n["g"]]["id"] if n["g"] >= 0 else None)
            assert n.get("c") == r["reason_code"] and n.get("r") == r["reason"]
        boxes = {it["id"] for it in data["items"]}
        assert {f"n{i}" for i in range(len(names))} <= boxes   # expanded: every op drawn
        boundary = {(e["from"], e["to"]) for e in ref["boundary_edges"] if e["to"] != "<output>"}
        drawn = {(_name(data, e["s"]), _name(data, e["t"])) for e in data["edges"] if e["k"] == "b"}
        assert {(s, t) for s, t in boundary if s in names} <= drawn   # constants are folded, not drawn


def _name(data, item):
    return data["nodes"][int(item[1:])]["name"] if item[0] == "n" else data["items"][[i["id"] for i in data["items"]].index(item)]["lines"][0]


def test_parameters_fold_into_their_consumers():
    a, page = _page("resnet_mini")
    data = data_of(page)
    consts = [v for v in a.graph.inputs if v.data is not None]
    assert consts
    drawn_inputs = [it["lines"][0] for it in data["items"] if it["id"][0] == "i"]
    assert not set(drawn_inputs) & {v.name for v in consts}
    conv = next(n for n in data["nodes"] if n["t"] == "Conv")
    assert conv["params"] and all("⟨" in p and "⟩" in p for p in conv["params"])
    node = a.graph.nodes[a.graph.index[conv["name"]]]
    assert len(conv["params"]) == sum(r in {v.name for v in consts} for r in node.inputs)


def test_frames_match_the_animation_frames():
    """The replay's frames are the formation frames `render --animate` draws: one per merge, plus the final one."""
    from xcviz.render.frames import build_frames

    for name, opts in [("seed_demo", {}), ("cycle_refused", dict(min_cluster_size=1)), ("seed_demo", dict(strategy="greedy"))]:
        from xcviz.render.report_html import report_data

        a = _analyse(name, **opts)
        data = report_data(a.graph, a.clustering, a.stats, engine=ENGINE)
        ref = build_frames(a.graph, a.clustering, a.stats)
        assert [f["text"] for f in data["frames"]] == [f.decision for f in ref]
        assert [len(f["refused"]) for f in data["frames"]] == [len(f.refused) for f in ref]
        assert len(data["attempts"]) == len(a.clustering.attempts)


def test_cycle_refusal_carries_its_path():
    a, page = _page("cycle_refused")
    data = data_of(page)
    refused = [data["attempts"][k] for f in data["frames"] for k in f["refused"]]
    assert refused and all(r[2] == 0 for r in refused)
    ref = a.clustering.refused()
    assert [(r[0], r[1], r[5]) for r in refused] == [(x.src, x.dst, list(x.path)) for x in ref]
    assert any(r[5] for r in refused)


def test_collapsed_view_draws_one_item_per_cluster_with_inner_layouts():
    a, page = _page("transformer_encoder", collapse=True)
    data = data_of(page)
    ids = {it["id"] for it in data["items"]}
    clustered = {i for c in data["clusters"] for i in c["members"]}
    assert {f"g{k}" for k in range(len(data["clusters"]))} <= ids
    assert not ids & {f"n{i}" for i in clustered}
    assert data["frames"] is None   # the replay needs the expanded positions
    for k, c in enumerate(data["clusters"]):
        inner = data["inner"][str(k)]
        assert sorted(it["id"] for it in inner["items"]) == sorted(f"n{i}" for i in c["members"])
        for it in inner["items"]:   # every member inside its expanded box
            x, y, w, h = it["box"]
            assert 0 <= x - w / 2 and x + w / 2 <= inner["w"] and 0 <= y - h / 2 and y + h / 2 <= inner["h"]


def test_hostile_names_stay_text(write_graph):
    from xcviz.pipeline import AnalysisOptions, analyse
    from xcviz.render.report_html import build_report

    evil = '</script><script>alert(1)</script>{{SCRIPT}}"'
    path = write_graph(f"""name: "{evil.replace('"', '')}"
inputs: [{{name: x, shape: [4], dtype: float32}}]
nodes:
  - {{name: '{evil.replace('"', '')}', op: relu, inputs: [x]}}
  - {{name: b, op: neg, inputs: ['{evil.replace('"', '')}']}}
outputs: [b]
""")
    a = analyse(path, AnalysisOptions(min_cluster_size=1))
    page = build_report(a.graph, a.clustering, a.stats, engine=ENGINE)
    # inside a script element only "</script" (or "<!--") ends the data; in the title everything is escaped
    assert page.count("</script") == 2 and "<!--" not in page
    assert "<title>&lt;/script&gt;&lt;script&gt;alert(1)" in page
    assert data_of(page)["nodes"][0]["name"] == evil.replace('"', "")


def test_cli_writes_the_report(tmp_path, run_cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("report", os.path.join(GRAPHS, "seed_demo.yaml"), "--min-cluster-size", "1")
    assert code == 0, err
    page = (tmp_path / "seed_demo.report.html").read_text(encoding="utf-8")
    assert "wrote seed_demo.report.html" in err and "coverage" in err
    data = data_of(page)
    assert [c["id"] for c in data["clusters"]] == ["cluster_0", "cluster_1"]
    # every clustering option applies
    code, _, err = run_cli("report", os.path.join(GRAPHS, "seed_demo.yaml"), "--min-cluster-size", "1", "--deny", "relu",
                           "-o", "deny.html")
    assert code == 0, err
    assert next(n for n in data_of((tmp_path / "deny.html").read_text())["nodes"] if n["name"] == "r1")["g"] == -1


def test_cli_bad_output(tmp_path, run_cli):
    code, _, err = run_cli("report", os.path.join(GRAPHS, "seed_demo.yaml"), "-o", str(tmp_path / "r.svg"))
    assert code == 2 and "writes HTML" in err and "Traceback" not in err
    code, _, err = run_cli("report", os.path.join(GRAPHS, "seed_demo.yaml"), "-o", str(tmp_path / "no" / "r.html"))
    assert code == 2 and "does not exist" in err


def test_validate_adds_the_measured_columns(tmp_path, run_cli):
    out = tmp_path / "v.html"
    code, _, err = run_cli("report", os.path.join(GRAPHS, "seed_demo.yaml"), "--min-cluster-size", "1", "--validate",
                           "-o", str(out))
    assert code == 0, err
    data = data_of(out.read_text(encoding="utf-8"))
    assert data["validated"]
    for c in data["clusters"]:
        v = c["v"]
        assert v["status"] == "ok" and v["err"] is not None and v["err"] < 1e-3 and v["xla_ms"] > 0


def test_summary_splits_d_when_the_cost_model_does():
    """D's parameter/activation split appears when Stats carries it (and only then)."""
    import dataclasses
    import types

    from xcviz.render.report_html_data import summary
    from xcviz.render.units import fmt_bytes

    a = _analyse("seed_demo", min_cluster_size=1)
    rows = dict(summary(a.graph, a.clustering, a.stats))
    assert rows["η by ops"] == "67 % (4/6)"
    assert rows["D split"] == f"activations {fmt_bytes(a.stats.boundary_bytes_activations)} · parameters 0 B"
    fields = {f.name: getattr(a.stats, f.name) for f in dataclasses.fields(a.stats)}
    unsplit = types.SimpleNamespace(**{k: v for k, v in fields.items() if k not in ("parameter_bytes", "boundary_bytes_activations")})
    assert "D split" not in dict(summary(a.graph, a.clustering, unsplit))
    split = types.SimpleNamespace(**{**fields, "parameter_bytes": 2048, "boundary_bytes_activations": 3 * 1024**2})
    assert dict(summary(a.graph, a.clustering, split))["D split"] == "activations 3.0 MiB · parameters 2.0 KiB"
