"""The HTML report in a real browser: headless Chromium (Debian's `chromium`) driven by Playwright for Python.

Enable with `apt-get install -y chromium` and `pip install -e '.[browser]'` (never `playwright install`: the
system Chromium is used). Without them the tests skip and say so."""
import base64
import os

import pytest

from tests.support.browser import require
from tests.support.paths import GRAPHS

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

require()  # skips the module, saying how to enable it, without Playwright or Chromium


def _report(tmp_path, name, **opts):
    from xcviz.pipeline import AnalysisOptions, analyse
    from xcviz.render.report_html import build_report

    a = analyse(os.path.join(GRAPHS, name), AnalysisOptions(**opts))
    out = tmp_path / (os.path.splitext(name)[0] + ".html")
    out.write_text(build_report(a.graph, a.clustering, a.stats), encoding="utf-8")
    return a, out


@pytest.fixture
def open_page(browser):
    """Open a report; yields (page, problems): requests other than file:/data:/blob: and console errors."""
    opened = []

    def _open(path):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        problems = []
        page.on("request", lambda r: r.url.startswith(("file:", "data:", "blob:")) or problems.append(f"request {r.url}"))
        page.on("console", lambda m: m.type in ("error", "warning") and problems.append(f"console {m.type}: {m.text}"))
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.goto(path.as_uri())
        page.wait_for_function("window.XCREPORT !== undefined")
        opened.append(page)
        return page, problems

    yield _open
    for page in opened:
        page.close()


def _hl(page, cls="hl"):
    return sorted(page.eval_on_selector_all(f"#graph .item.{cls}", "els => els.map(e => e.dataset.name)"))


def test_seed_report_in_chromium(tmp_path, open_page, browser):
    a, path = _report(tmp_path, "seed_demo.yaml", min_cluster_size=1)
    page, problems = open_page(path)

    # clicking cluster_0's row highlights exactly its members (the cost model's list) and dims the rest
    page.click("#clusters tbody tr[data-key='cluster_0']")
    assert _hl(page) == sorted(a.stats.clusters_detail[0].nodes)
    assert page.locator("#graph .item.dim").count() == page.locator("#graph .item").count() - len(_hl(page))
    assert page.locator("#graph .edge.b.hl").count() >= 1   # its boundary edges stay lit

    # the tables sort by a header click (numbers as numbers, both ways) and filter as one types
    page.click("#clusters th:has-text('nodes')")
    assert page.eval_on_selector_all("#clusters tbody tr", "rs => rs.map(r => r.dataset.key)") == ["cluster_1", "cluster_0"]
    page.click("#clusters th:has-text('nodes')")
    assert page.eval_on_selector_all("#clusters tbody tr", "rs => rs.map(r => r.dataset.key)") == ["cluster_0", "cluster_1"]
    page.fill("input.filter[data-table='fallback']", "custom")
    assert page.eval_on_selector_all("#fallback tbody tr", "rs => rs.filter(r => r.style.display !== 'none').map(r => r.dataset.key)") == ["l1"]

    # search: a regex over names and ops
    page.fill("#search", "^c1$")
    assert page.text_content("#search-count") == "1 match" and _hl(page, "match") == ["c1"]
    page.fill("#search", "conv|MATMUL")
    assert _hl(page, "match") == ["c1", "m1"]

    # wheel zoom changes the view, around the pointer; fit restores a view that shows everything
    page.click("#fit")
    before = page.get_attribute("#graph", "viewBox")
    box = page.locator("#canvas").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -400)
    after = page.get_attribute("#graph", "viewBox")
    assert after != before and float(after.split()[2]) < float(before.split()[2])
    page.click("#fit")
    assert page.get_attribute("#graph", "viewBox") == before

    # the replay steps back and forward on the same positions
    frames = page.evaluate("XCREPORT.data.frames")
    last = f"frame {len(frames)} / {len(frames)}"
    assert page.text_content("#frame-counter") == last and len(frames) >= 3
    positions = page.eval_on_selector_all("#graph .item rect", "els => els.map(e => e.getAttribute('x') + ',' + e.getAttribute('y'))")
    page.click("#prev")
    assert page.text_content("#frame-counter") == f"frame {len(frames) - 1} / {len(frames)}"
    assert frames[-2]["text"] in page.text_content("#decision")
    assert page.locator("#graph .hull.new").count() == 1
    assert page.eval_on_selector_all("#graph .item rect", "els => els.map(e => e.getAttribute('x') + ',' + e.getAttribute('y'))") == positions
    page.click("#next")
    assert page.text_content("#frame-counter") == last and frames[-1]["text"] in page.text_content("#decision")

    # clicking a node shows its types, attributes and the story `xcviz explain` tells
    _explained(page, a, "r1")
    _explained(page, a, "l1")

    shot = page.screenshot()
    assert not problems, problems
    assert _distinct_colors(browser, shot) > 20, "the screenshot is blank"


def _explained(page, a, name):
    from xcviz.clustering.explain import story

    page.fill("#search", "")
    page.click(f"#graph .item[data-name='{name}']")
    text = page.text_content("#details")
    s = story(a.graph, a.clustering, a.graph.index[name])
    assert text.startswith(name)
    for t in a.graph.nodes[a.graph.index[name]].outputs:
        assert str(t) in text
    for step in s["steps"]:
        assert step.text() in text
    assert (f"in {s['cluster']}" if s["cluster"] else f"falls back, {s['reason']}") in text


def test_refused_merge_is_red_with_its_cycle_path(tmp_path, open_page):
    a, path = _report(tmp_path, "cycle_refused.yaml", min_cluster_size=1)
    page, problems = open_page(path)
    frames = page.evaluate("XCREPORT.data.frames")
    k = next(f for f, fr in enumerate(frames) if fr["refused"])
    page.evaluate(f"XCREPORT.showFrame({k})")
    refused = a.clustering.refused()[0]
    names = [n.name for n in a.graph.nodes]
    assert _hl(page, "onpath") == sorted(names[v] for v in refused.path)
    # red: the edges from the producer side to the consumer side, and those that run through the blocking path,
    # with the groups as they stood at that attempt (clustering.explain.replay, as `xcviz explain` replays them)
    from xcviz.clustering.explain import replay

    at = next(k for k, x in enumerate(a.clustering.attempts) if not x.merged)
    _, prod, cons = list(replay(a.clustering, len(names)))[at]
    P, C, path = {names[v] for v in prod}, {names[v] for v in cons}, {names[v] for v in refused.path}
    edges = {(names[a.graph.index[r]], n.name) for n in a.graph.nodes for r in n.inputs if r in a.graph.index}
    want = {(s, t) for s, t in edges if (s in P and t in C) or ((s in P | path) and (t in path | C) and {s, t} & path)}
    red = page.eval_on_selector_all("#graph .edge.refused", "els => els.map(e => [e.dataset.s, e.dataset.t])")
    assert want and {(names[int(s[1:])], names[int(t[1:])]) for s, t in red} == want
    assert refused.reason in page.text_content("#decision")
    _explained(page, a, "merge")
    assert not problems, problems


def test_collapsed_report_expands_on_click(tmp_path, open_page):
    from xcviz.render.report_html import build_report

    from xcviz.pipeline import AnalysisOptions, analyse

    a = analyse(os.path.join(GRAPHS, "transformer_encoder.onnx"), AnalysisOptions())
    path = tmp_path / "collapsed.html"
    path.write_text(build_report(a.graph, a.clustering, a.stats, collapse=True), encoding="utf-8")
    page, problems = open_page(path)
    members = a.stats.clusters_detail[0].nodes
    assert page.locator("#graph .item[data-id='g0']").count() == 1
    assert page.locator("#graph .item.member").count() == 0
    page.click("#graph .item[data-id='g0']")
    assert sorted(page.eval_on_selector_all("#graph .inner .item", "els => els.map(e => e.dataset.name)")) == sorted(members)
    page.click("#graph .inner .item >> nth=0")
    assert page.text_content("#details h3") == members[0]
    page.click("#graph .inner-bg", position={"x": 3, "y": 3})   # its frame collapses it again
    assert page.locator("#graph .inner .item").count() == 0
    assert not problems, problems


def _distinct_colors(browser, png: bytes) -> int:
    """Distinct colours in a PNG, decoded by the browser itself (a blank page has one or two)."""
    page = browser.new_page()
    try:
        return page.evaluate("""async (src) => {
            const img = new Image(); img.src = src; await img.decode();
            const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
            const ctx = c.getContext('2d'); ctx.drawImage(img, 0, 0);
            const d = ctx.getImageData(0, 0, c.width, c.height).data, seen = new Set();
            for (let i = 0; i < d.length; i += 4 * 7) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
            return seen.size; }""", "data:image/png;base64," + base64.b64encode(png).decode())
    finally:
        page.close()


def test_paper_cuts_of_the_report(tmp_path, open_page):
    """Issue 30: bodies shown, internal attributes hidden, FLOPs formatted, clear resets the search, the
    replay pans to the newest merge."""
    from xcviz.pipeline import AnalysisOptions, analyse
    from xcviz.render.report_html import build_report

    loop_model = os.path.join(os.path.dirname(GRAPHS), "tests", "data", "exports", "greedy_decode_torchscript.onnx")
    a = analyse(loop_model, AnalysisOptions())
    path = tmp_path / "loop.html"
    path.write_text(build_report(a.graph, a.clustering, a.stats), encoding="utf-8")
    page, problems = open_page(path)
    loop = next(n.name for n in a.graph.nodes if n.op_type == "Loop")
    assert page.text_content("#bodies").startswith("Control-flow bodies") and f"Loop {loop!r} body" in page.text_content("#bodies")
    assert a.graph.nodes[a.graph.index[loop]].attrs.get("_n_inputs") is not None   # (there is one to hide)
    assert page.locator("#bodies img.body-picture").count() == 1
    assert page.eval_on_selector("#bodies img.body-picture", "img => img.complete && img.naturalWidth > 100")
    page.click(f"#graph .item[data-name='{loop}']")
    details = page.text_content("#details")
    assert "_n_inputs" not in details and "_outer" not in details and f"Loop {loop!r} body" in details

    a, path = _report(tmp_path, "transformer_block.yaml")
    page, more = open_page(path)
    flops = page.eval_on_selector_all("#clusters tbody tr td:nth-child(4)", "tds => tds.map(t => t.textContent)")
    import re
    assert flops and all(re.fullmatch(r"[0-9]+(\.[0-9] [kMGTP])?|unknown", f) for f in flops), flops
    assert any(f.endswith((" M", " G")) for f in flops)
    page.fill("#search", "matmul")
    assert page.text_content("#search-count").endswith("matches")
    page.click("#clear")
    assert page.input_value("#search") == "" and page.text_content("#search-count") == ""
    # the replay: at each frame the view's middle is the middle of that frame's merge
    frames = page.evaluate("XCREPORT.data.frames")
    for f in (1, len(frames) // 2):
        page.evaluate(f"XCREPORT.showFrame({f})")
        at = page.evaluate(f"XCREPORT.data.attempts[XCREPORT.data.frames[{f}].a]")
        boxes = [page.evaluate(f"XCREPORT.data.items.find(it => it.id === 'n{at[k]}').box") for k in (0, 1)]
        vx, vy, vw, vh = map(float, page.get_attribute("#graph", "viewBox").split())
        cx = (min(b[0] for b in boxes) + max(b[0] for b in boxes)) / 2
        cy = (min(b[1] for b in boxes) + max(b[1] for b in boxes)) / 2
        assert abs(vx + vw / 2 - cx) < 1 and abs(vy + vh / 2 - cy) < 1
    assert not problems + more, problems + more
