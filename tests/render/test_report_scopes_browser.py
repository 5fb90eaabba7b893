"""The report's scope view in a real browser (headless Chromium via Playwright, as test_report_browser.py):
the first view's labels are legible by the on-screen size of their text, a scope opens (laid out in the page
by the vendored dagre) in under a second, search opens the scopes around a node and centres it, and nothing
logs an error. On the 32-layer Llama .pt2 (tools/make_llama_pt2.py), a generated 15,000-op graph with scopes,
and a small scoped graph that also has the whole-graph picture."""
import os
import sys

import pytest

from tests.support.browser import require
from tests.support.paths import GRAPHS, ROOT

pytestmark = pytest.mark.slow
require()  # skips the module without Playwright or Chromium (the `browser` fixture is in conftest.py)

LLAMA = os.path.join(ROOT, "tests", "data", "llama", "llama32.pt2")
LEGIBLE_PX = 9


def _write(tmp_path, source, name, **opts):
    from xcviz.pipeline import AnalysisOptions, analyse
    from xcviz.render.report_html import build_report

    a = analyse(source, AnalysisOptions(**opts))
    out = tmp_path / f"{name}.html"
    out.write_text(build_report(a.graph, a.clustering, a.stats), encoding="utf-8")
    return a, out


def _open(browser, path):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems = []
    page.on("request", lambda r: r.url.startswith(("file:", "data:", "blob:")) or problems.append(f"request {r.url}"))
    page.on("console", lambda m: m.type in ("error", "warning") and problems.append(f"console {m.type}: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto(path.as_uri())
    page.wait_for_function("window.XS !== undefined")
    return page, problems


LEGIBLE = """(px) => {
  const svg = document.getElementById('scopes').getBoundingClientRect();
  return [...document.querySelectorAll('#scopes text')].filter(t => {
    const b = t.getBoundingClientRect(), style = getComputedStyle(t);
    return style.display !== 'none' && b.height >= px && b.width > 0 && b.top >= svg.top && b.bottom <= svg.bottom
           && b.left >= svg.left && b.right <= svg.right;
  }).map(t => t.textContent);
}"""


def _legible(page):
    return page.evaluate(LEGIBLE, LEGIBLE_PX)


@pytest.mark.skipif(not os.path.exists(LLAMA), reason="no tests/data/llama/llama32.pt2 (tools/make_llama_pt2.py)")
def test_llama_first_view_open_and_search(tmp_path, browser):
    a, path = _write(tmp_path, LLAMA, "llama")
    page, problems = _open(browser, path)
    assert page.evaluate("XS.active()") and not page.is_visible("#graph")

    # the first view: past the wrappers, the decoder's parts, each name and its numbers readable on screen
    labels = _legible(page)
    assert len(labels) >= 10, labels
    assert any("\u00d732" in t for t in labels), labels   # the 32 identical decoder layers, folded into one box
    assert page.is_visible("#minimap")

    # opening the folded block lays it out in the page, under a second
    page.click("#scopes .s-item.scope:has(text:text-matches('×32'))")
    opened = page.get_attribute("#scopes", "data-open")
    assert opened.endswith("layers.0")
    assert float(page.get_attribute("#scopes", "data-ms")) < 1000
    assert page.locator("#scopes .s-item").count() >= 2
    assert "layers.0" in page.inner_text("#crumbs")
    assert "\u00d732 identical" in page.inner_text("#details")

    # search a node of layer 17: the view opens the scopes around it and centres it
    from xcviz.ir.scopes import scope_tree

    tree = scope_tree(a.graph)
    i = next(i for i in range(len(a.graph.nodes)) if "/layers.17/self_attn" in tree.scope_of(i))
    name = a.graph.nodes[i].name
    page.fill("#search", f"^{name}$")
    assert page.inner_text("#search-count") == "1 match"
    assert "layers.17" in page.get_attribute("#scopes", "data-open")
    box = page.locator(f"#scopes .s-item.match[data-name='{name}']").bounding_box()
    canvas = page.locator("#scopes").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    assert abs(cx - (canvas["x"] + canvas["width"] / 2)) < 5 and abs(cy - (canvas["y"] + canvas["height"] / 2)) < 5
    assert box["height"] >= 30   # centred at a readable zoom

    # a click on a node tells its story; the breadcrumb goes back up
    page.click(f"#scopes .s-item[data-name='{name}']")
    assert page.inner_text("#details h3") == name
    from xcviz.render.report_html_data import node_records

    rec = node_records(a.graph, a.clustering)[i]   # the inputs and outputs as a small page's records write them
    details = page.inner_text("#details")
    assert all(x in details for x in rec["in"] + rec["out"]) and rec["in"]
    page.click("#crumbs .crumb >> nth=0")
    assert page.get_attribute("#scopes", "data-open") == ""
    assert problems == []


def test_generated_15000_ops(tmp_path, browser):
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from generate import write

    src = write(15_000, str(tmp_path / "g15k.json"), scopes=True)
    a, path = _write(tmp_path, src, "g15k")
    page, problems = _open(browser, path)
    labels = _legible(page)
    assert len(labels) >= 10 and any(t.startswith("stage") for t in labels), labels
    # every scope of the first view opens under a second
    ids = page.eval_on_selector_all("#scopes .s-item.scope", "els => els.map(e => e.dataset.id)")
    for sid in ids:
        page.evaluate(f"XS.open({sid[1:]})")
        assert float(page.get_attribute("#scopes", "data-ms")) < 1000, sid
    # the heat: a scope's fill follows its coverage (its ops in clusters / its ops)
    recs = page.evaluate("XS.records")
    assert recs[0]["o"] == 15_000 and recs[0]["m"] == sum(len(c) for c in a.clustering.clusters)
    assert recs[0]["f"] == sum(1 for k in a.clustering.cluster_of if k < 0)
    # a long table makes its first 500 rows and says how many more; "show all" makes them all, filters narrow
    fallbacks = [a.graph.nodes[i].name for i, k in enumerate(a.clustering.cluster_of) if k < 0]
    assert len(fallbacks) > 500
    assert page.locator("#fallback tbody tr:not(.more)").count() == 500
    assert f"{len(fallbacks) - 500:,} more rows" in page.inner_text("#fallback tr.more")
    page.click("#fallback tr.more button")
    assert page.locator("#fallback tbody tr").count() == len(fallbacks)
    page.fill("input.filter[data-table='fallback']", fallbacks[-1])
    assert fallbacks[-1] in page.eval_on_selector_all("#fallback tbody tr", "rs => rs.map(r => r.dataset.key)")
    # far out, the scope names grow so that they stay readable; the numbers go
    page.evaluate("XS.open(0)")
    far = "document.getElementById('scopes').classList.contains('far')"
    for _ in range(20):
        if page.evaluate(far):
            break
        page.evaluate("XS.zoom(1.25)")
    assert page.evaluate(far)
    names = _legible(page)
    assert len(names) >= 5 and all(t.startswith("stage") for t in names), names
    assert problems == []


def test_small_scoped_graph_has_both_views(tmp_path, browser):
    a, path = _write(tmp_path, os.path.join(GRAPHS, "scoped_stack.yaml"), "stack")
    page, problems = _open(browser, path)
    assert page.is_visible("#graph") and not page.is_visible("#scopes")   # small: the whole picture first
    page.click("#view-toggle")
    assert page.is_visible("#scopes") and page.evaluate("XS.active()")
    page.evaluate("XS.open(XS.records.findIndex(r => r.p === 'model'))")
    names = page.eval_on_selector_all("#scopes .s-item.scope", "els => els.map(e => e.dataset.name)")
    assert "layers.0" in names and "layers.2" in names and "layers.1" not in names   # ×3, and the one that differs
    # a cluster row opens the scope that holds the cluster and lights what holds its members
    page.click("#clusters tbody tr >> nth=0")
    assert page.locator("#scopes .s-item.hl").count() >= 1
    page.click("#view-toggle")
    assert page.is_visible("#graph")
    assert problems == []
