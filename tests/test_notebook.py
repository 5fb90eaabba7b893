"""xcviz in a notebook: tests/notebooks/show.ipynb executed by a real kernel (nbclient + ipykernel), its outputs
checked, and its HTML output (the report inline, in a sandboxed iframe) opened in Chromium. The dir()/tables
parts that need no kernel are tested directly too."""
import html
import os
import re

import pytest

from tests.support.paths import GRAPHS, ROOT

NOTEBOOK = os.path.join(ROOT, "tests", "notebooks", "show.ipynb")


def test_dir_is_the_public_api():
    import xcviz

    assert dir(xcviz) == sorted([*xcviz.__all__, "__version__"])
    assert "show" in xcviz.__all__ and "functools" not in dir(xcviz) and "_api" not in dir(xcviz)
    for name in xcviz.__all__:
        assert hasattr(xcviz, name), name


def test_results_show_as_tables():
    import xcviz

    a = xcviz.analyse(os.path.join(GRAPHS, "seed_demo.yaml"), min_cluster_size=1)
    text = a._repr_html_()
    assert text.startswith("<div><table") and "cluster_0" in text and "fallbacks" in text
    # every fallback reason the clustering gave is in its table, escaped
    for i, k in enumerate(a.clustering.cluster_of):
        if k < 0:
            assert html.escape(a.clustering.code[i] or "fallback") in text


def test_show_is_the_report_in_a_sandboxed_frame():
    import xcviz
    from xcviz.render.report_html import build_report

    a = xcviz.analyse(os.path.join(GRAPHS, "scoped_stack.yaml"))
    r = xcviz.show(a)
    assert r.html == build_report(a.graph, a.clustering, a.stats)
    frame = r._repr_mimebundle_()["text/html"]
    assert re.fullmatch(r'<iframe srcdoc="[^"]*" sandbox="allow-scripts" [^>]*></iframe>', frame, re.S)
    assert html.unescape(re.search(r'srcdoc="([^"]*)"', frame).group(1)) == r.html
    with pytest.raises(xcviz.XcvizError):
        xcviz.show(a, min_cluster_size=2)   # options apply to an analysis it makes, not to one given


@pytest.mark.slow
def test_notebook_runs_and_its_output_opens_in_chromium(tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="pip install -e '.[browser]'")
    nbclient = pytest.importorskip("nbclient", reason="pip install -e '.[browser]'")
    pytest.importorskip("ipykernel", reason="pip install -e '.[browser]'")
    from tests.support.browser import chromium

    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": ROOT}}).execute()
    outs = [c.outputs for c in nb.cells if c.cell_type == "code"]
    table, report, names = (o[0]["data"] for o in outs)
    assert "<table" in table["text/html"] and "cluster_0" in table["text/html"]
    assert "<iframe srcdoc=" in report["text/html"] and "xcviz report of 'scoped_stack'" in report["text/plain"]
    import xcviz

    assert eval(names["text/plain"]) == dir(xcviz)   # noqa: S307 (our own notebook's list of names)

    page_path = tmp_path / "notebook.html"
    page_path.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>" + table["text/html"] +
                         report["text/html"] + "</body></html>", encoding="utf-8")
    with chromium() as b:
        page = b.new_page(viewport={"width": 1400, "height": 1200})
        problems = []
        page.on("console", lambda m: m.type in ("error", "warning") and problems.append(f"console {m.type}: {m.text}"))
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("request", lambda r: r.url.startswith(("file:", "data:", "about:")) or problems.append(f"request {r.url}"))
        page.goto(page_path.as_uri())
        frame = page.frame_locator("iframe")
        frame.locator("#graph .item").first.wait_for()
        assert frame.locator("#clusters tbody tr").count() == 2
        frame.locator("#view-toggle").click()            # the scope view, inside the notebook's frame
        assert frame.locator("#scopes .s-item.scope").count() >= 2
        assert "\u00d73" in frame.locator("#scopes").text_content()
        frame.locator("#search").fill("layers.2/act")    # search opens the scopes around the node
        assert frame.locator("#search-count").inner_text() == "1 match"
        assert frame.locator("#scopes .s-item.match").count() == 1
    assert problems == []


@pytest.mark.slow
def test_validation_report_shows_as_a_table():
    pytest.importorskip("jax", reason="pip install -e '.[jax]'")
    import xcviz

    g = xcviz.load(os.path.join(GRAPHS, "seed_demo.yaml"))
    r = xcviz.validate(g, xcviz.cluster(g, min_cluster_size=1))
    text = r._repr_html_()
    assert html.escape(r.status) in text and len(r.clusters) >= 1
    rows = re.findall(r"<tr>(.*?)</tr>", text.split("<thead>")[1])
    for c in r.clusters:   # one row per cluster: its id, node count and status, in order
        row = next(x for x in rows if f">{c.id}<" in x)
        assert f">{len(c.nodes)}<" in row and f">{c.status}<" in row


@pytest.mark.slow
def test_compile_report_shows_as_tables():
    torch = pytest.importorskip("torch", reason="pip install -e '.[torch]'")
    import xcviz

    def f(x):
        y = torch.relu(x) * 2
        torch._dynamo.graph_break()
        return torch.tanh(y) + 1

    report = xcviz.compile_report(f, torch.randn(4, 4))
    text = report._repr_html_()
    assert isinstance(report, dict) and report["summary"]["breaks"] == len(report["breaks"]) >= 1
    assert "graph breaks" in text and text.count("<tr>") >= len(report["graphs"]) + len(report["breaks"])
    for b in report["breaks"]:
        assert html.escape(b["summary"]) in text
