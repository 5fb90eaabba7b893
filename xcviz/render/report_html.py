"""The interactive HTML report: one self-contained page (data, style and script inline; no network, works from file://).

Graphviz lays the picture out once here; the page's small own script (report_assets/) draws it, pans, zooms,
searches, highlights clusters, tells each node's `explain` story and replays the formation on the same
positions. Frames are stored as differences: each is the index of the merge attempt it applies."""
from __future__ import annotations

import html
import json
import re
from importlib import resources

from ..clustering import Clustering
from ..clustering.explain import replay
from ..clustering.result import PHASE_NAMES
from ..cost import Stats
from ..ir import Graph
from ..ir.scopes import scope_tree
from .frames import final_text, name_set   # the captions `render --animate` writes, word for word
from .report_html_data import (COLORS, attempt_rows, cluster_records, drawn_collapsed, drawn_expanded, node_lines,
                               node_records, short, summary)
from .report_html_layout import dot_text, run_layout
from .report_html_scopes import compact_records, scope_view
from .tables import title as default_title

MAX_ATTEMPTS = 200_000      # above: no replay and no in-page explain (the page says to run `xcviz explain`)
INNER_MAX = 400             # collapsed: clusters up to this many nodes get their own layout, drawn on expanding,
INNER_TOTAL = 3000          # ... up to this many nodes in all (the layout costs what an expanded one of that size does)
BIG = 500                   # nodes; bound the layout as render/dot.py does
TIPS = 12                   # tensor lines in an edge's tooltip
ASSETS = ("report.css", "graph.js", "report.js")
SCOPE_ASSETS = ("dagre.min.js", "scopes.js")   # the scope view: the vendored layout library and its drawing
SCOPE_VIEW = 500            # ops; above, the page opens by the model's scopes and Graphviz lays nothing out


def asset(name: str) -> str:
    return resources.files("xcviz.render").joinpath("report_assets", name).read_text(encoding="utf-8")


def build_report(graph: Graph, clustering: Clustering, stats: Stats, *, validation=None, collapse: bool | None = None,
                 engine: str | None = None) -> str:
    """The page as text: deterministic (same input, same bytes), no timestamps, no paths."""
    return page(report_data(graph, clustering, stats, validation=validation, collapse=collapse, engine=engine))


def report_data(graph: Graph, clustering: Clustering, stats: Stats, *, validation=None, collapse: bool | None = None,
                engine: str | None = None) -> dict:
    from .collapse import AUTO_COLLAPSE

    n = len(graph.nodes)
    records = node_records(graph, clustering)
    clusters = cluster_records(clustering, stats, validation)
    if n > SCOPE_VIEW:
        return _scoped_data(graph, clustering, stats, validation, records, clusters, engine)
    collapse = n > AUTO_COLLAPSE if collapse is None else collapse
    if collapse:
        items, edges = drawn_collapsed(graph, clustering, records, clusters)
        members = {}
    else:
        items, edges, members = drawn_expanded(graph, clustering, records)
    lay = run_layout(dot_text(items, [(e["s"], e["t"]) for e in edges], members, big=n > BIG), engine)
    attempts = attempt_rows(graph, clustering, MAX_ATTEMPTS)
    data = {
        "title": default_title(graph, clustering), "summary": summary(graph, clustering, stats) + _measured(validation),
        "colors": COLORS, "phases": {str(k): v for k, v in sorted(PHASE_NAMES.items())},
        "min_size": clustering.options.min_size, "collapsed": collapse, "validated": validation is not None,
        "nodes": records, "clusters": clusters,
        "width": round(lay.width, 1), "height": round(lay.height, 1),
        "items": [_item(i, label, lay.boxes[i]) for i, label, _ in items],
        "edges": [_edge(e, lay.splines.get((e["s"], e["t"]), [])) for e in edges],
        "attempts": attempts[0] if attempts else None, "reasons": attempts[1] if attempts else [],
        "frames": None if collapse or attempts is None else frames(graph, clustering),
        "inner": inner_layouts(graph, clustering, records, clusters, engine) if collapse else {},
    }
    tree = scope_tree(graph)
    if not tree.flat:   # a model with layers: the scope view too, one click away
        data["scope"] = scope_view(graph, clustering)
    data["bodies"], data["body_pictures"] = _bodies(graph, clustering, engine)
    return data


def _scoped_data(graph: Graph, clustering: Clustering, stats: Stats, validation, records: list[dict],
                 clusters: list[dict], engine: str | None) -> dict:
    """A big graph's page: no whole-graph picture (items and edges empty); the scope view opens it, the page
    laying out only the scope a user opens."""
    attempts = attempt_rows(graph, clustering, MAX_ATTEMPTS)
    data = {
        "title": default_title(graph, clustering), "summary": summary(graph, clustering, stats) + _measured(validation),
        "colors": COLORS, "phases": {str(k): v for k, v in sorted(PHASE_NAMES.items())},
        "min_size": clustering.options.min_size, "collapsed": True, "validated": validation is not None,
        "nodes": records, "clusters": clusters, "width": 0, "height": 0, "items": [], "edges": [],
        "attempts": attempts[0] if attempts else None, "reasons": attempts[1] if attempts else [],
        "frames": None, "inner": {}, "scope": scope_view(graph, clustering), "view": "scopes",
    }
    data["node_defaults"] = compact_records(records)
    data["bodies"], data["body_pictures"] = _bodies(graph, clustering, engine)
    return data


BODY_PICTURE_NODES = 2_000   # body nodes drawn in all; beyond, the section keeps the lines alone


def _bodies(graph: Graph, clustering: Clustering, engine: str | None) -> tuple[dict, dict]:
    """({control-flow node: its bodies' lines}, {node: [picture as a data: URI]}): the clusters and fallbacks
    of each Loop/If/Scan body, as `cluster` prints them and as `render` frames them (SVG in an <img>, so
    nothing in it runs; nested bodies are drawn inside their parent's picture)."""
    import base64

    from .bodies_view import bodies_of, body_lines
    from .dot import build_dot
    from .dot_bodies import body_view
    from .layout import layout

    lines: dict[str, list[str]] = {}
    pictures: dict[str, list[str]] = {}
    budget = BODY_PICTURE_NODES
    for b in bodies_of(graph, clustering):
        lines.setdefault(b.node, []).extend(body_lines([b]))
        budget -= len(b.graph.nodes)
        if budget >= 0:
            svg = layout(build_dot(b.graph, body_view(b), show_legend=False), "svg", engine)
            pictures.setdefault(b.node, []).append("data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii"))
    return lines, pictures


def _measured(validation) -> list[list[str]]:
    """With --validate: what the measured speedups are against (in words), and the whole model's times."""
    if validation is None:
        return []
    from .run_tables import model_line, native_words

    rows = [["native (measured against)", native_words(getattr(validation, "native", None) or None)]]
    line = model_line(getattr(validation, "model", None))
    if line:
        rows.append(["whole model", line.removeprefix("whole model: ")])
    return rows


def _item(i: str, label: str, box: list[float]) -> dict:
    return {"id": i, "lines": label.split("\n"), "box": box}


def _edge(e: dict, spline: list[float]) -> dict:
    tips = e["tip"][:TIPS] + ([f"… {len(e['tip']) - TIPS} more tensors"] if len(e["tip"]) > TIPS else [])
    return {"s": e["s"], "t": e["t"], "k": e["k"], "b": e["b"], "tip": "\n".join(tips), "p": spline}


def frames(graph: Graph, clustering: Clustering) -> list[dict]:
    """One frame per merge that changed the groups, then the final one: {a: attempt index, text, refused: [indices]}."""
    names = [nd.name for nd in graph.nodes]
    out, refused = [], []
    for k, (a, prod, cons) in enumerate(replay(clustering, len(names))):
        phase = PHASE_NAMES.get(a.phase, f"phase {a.phase}")
        if not a.merged:
            refused.append(k)
            continue
        if set(prod) == set(cons):
            continue
        if a.phase == -1:   # greedy grows the current cluster by the next node in list order
            text = f"{phase}: merged {names[a.dst]} into cluster of {names[a.src]}"
        else:
            text = f"{phase}: merged {name_set(names, prod)} into cluster of {names[a.dst]}"
        out.append({"a": k, "text": text, "refused": refused})
        refused = []
    out.append({"a": None, "text": final_text(clustering, names), "refused": refused})
    return out


def inner_layouts(graph: Graph, clustering: Clustering, records: list[dict], clusters: list[dict],
                  engine: str | None) -> dict:
    """Collapsed view: each cluster's own members laid out (one Graphviz run for all), boxes relative to the cluster."""
    chosen, total = [], 0
    for k, c in enumerate(clusters):
        if len(c["members"]) <= INNER_MAX and total + len(c["members"]) <= INNER_TOTAL:
            chosen.append(k)
            total += len(c["members"])
    if not chosen:
        return {}
    items, edges, _ = drawn_expanded(graph, clustering, records)
    inside = {f"n{i}": k for k in chosen for i in clusters[k]["members"]}
    items = [it for it in items if it[0] in inside]
    edges = [e for e in edges if inside.get(e["s"], -1) == inside.get(e["t"], -2)]
    members = {f"c{k}": [f"n{i}" for i in clusters[k]["members"]] for k in chosen}
    lay = run_layout(dot_text(items, [(e["s"], e["t"]) for e in edges], members, big=len(items) > BIG), engine)
    out = {}
    for k in chosen:
        boxes = {m: lay.boxes[m] for m in members[f"c{k}"]}
        x0 = min(b[0] - b[2] / 2 for b in boxes.values()) - 8
        y0 = min(b[1] - b[3] / 2 for b in boxes.values()) - 8
        x1 = max(b[0] + b[2] / 2 for b in boxes.values()) + 8
        y1 = max(b[1] + b[3] / 2 for b in boxes.values()) + 8
        own = [e for e in edges if inside[e["s"]] == k]
        out[str(k)] = {
            "w": round(x1 - x0, 1), "h": round(y1 - y0, 1),
            "items": [_item(m, "\n".join(node_lines(records[int(m[1:])])), _shift_box(b, x0, y0))
                      for m, b in boxes.items()],
            "edges": [_edge(e, _shift(lay.splines.get((e["s"], e["t"]), []), x0, y0)) for e in own],
        }
    return out


def _shift(pts: list[float], x0: float, y0: float) -> list[float]:
    """Spline points moved so that (x0, y0) becomes the origin."""
    return [round(v - (x0 if k % 2 == 0 else y0), 1) for k, v in enumerate(pts)]


def _shift_box(box: list[float], x0: float, y0: float) -> list[float]:
    return _shift(box[:2], x0, y0) + box[2:]


def _script(name: str) -> str:
    """An asset as inline script; the vendored library without its source-map comment (nothing to fetch)."""
    text = asset(name)
    return re.sub(r"^//# sourceMappingURL=.*$", "", text, flags=re.M) if name.endswith(".min.js") else text


def page(data: dict) -> str:
    """Fill the page template: the data as JSON that cannot close its <script> element early."""
    blob = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    blob = blob.replace("</", "<\\/").replace("<!--", "\\u003c!--")
    scripts = list(ASSETS[1:]) + (list(SCOPE_ASSETS) if "scope" in data else [])
    fill = {"TITLE": html.escape(short(data["title"], 200)), "STYLE": asset("report.css"), "DATA": blob,
            "SCRIPT": "\n".join(_script(a) for a in scripts)}
    # one pass: a placeholder inside the data (a node named "{{SCRIPT}}") stays text
    return re.sub(r"\{\{([A-Z]+)\}\}", lambda m: fill[m.group(1)], asset("report.html"))
