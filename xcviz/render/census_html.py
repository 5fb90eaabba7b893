"""The census report: one self-contained HTML page (style and a small own script inline, no network, the report's CSP).

Per architecture coverage, clusters, fallback reasons, estimated and measured speedup; across the census the ops
that block XLA, ranked, with what supporting each would buy; a section per model to drill into. Deterministic:
rows sorted by source and model, no timings, no paths beyond what the user named."""
from __future__ import annotations

import html
import re
from importlib import resources

from .census import gain_pct, gain_speedup, summary_text
from .units import fmt_bytes, fmt_pct, fmt_speedup

BLOCKED_SHOWN = 12    # models named in a ranking row before "… N more"
OPS_SHOWN = 4         # blocking ops named in an architecture row
SOURCES_SHOWN = 8     # sources listed in the summary before they are counted by kind


def model_report_name(source: str, model: str) -> str:
    """The file name of a model's own report page: readable, and unique per (source, model)."""
    import hashlib

    digest = hashlib.sha1(f"{source}\0{model}".encode("utf-8")).hexdigest()[:8]
    return f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', model)[:80]}-{digest}.html"


def _asset(name: str) -> str:
    return resources.files("xcviz.render").joinpath("report_assets", name).read_text(encoding="utf-8")


def e(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _td(text, sort=None, cls: str = "") -> str:
    v = "" if sort is None else sort
    return f'<td class="{cls}" data-v="{e(v)}">{text}</td>' if cls else f'<td data-v="{e(v)}">{text}</td>'


def _num(text, sort) -> str:
    return _td(e(text), sort, "num")


def _table(tid: str, heads: list[tuple[str, bool]], rows: list[str], sortable: bool = True) -> str:
    th = "".join(f'<th data-num="{1 if num else 0}">{e(h)}</th>' for h, num in heads)
    cls = ' class="sortable"' if sortable else ""
    return f'<table id="{tid}"{cls}><thead><tr>{th}</tr></thead><tbody>' + "".join(rows) + "</tbody></table>"


def anchors(rows: list[dict]) -> dict[tuple[str, str], str]:
    return {(r["source"], r["model"]): f"m{k}" for k, r in enumerate(rows)}


def _link(r: dict, ids: dict) -> str:
    return f'<a href="#{ids[(r["source"], r["model"])]}">{e(r["model"])}</a>'


def summary_table(s: dict, validated: bool) -> str:
    items = [("models", str(s["models"])), ("analysed", str(s["ok"])),
             ("by status", ", ".join(f"{k} {n}" for k, n in s["statuses"].items())),
             ("compile whole (coverage 100 %)", str(s["whole"])), ("blocked by an op", str(s["blocked"])),
             ("mean coverage", fmt_pct(s["mean_coverage"])), ("mean est. speedup", fmt_speedup(s["mean_est_speedup"]))]
    if validated:
        items.append(("mean measured speedup", fmt_speedup(s["mean_measured_speedup"])))
    srcs = s["sources"]
    if len(srcs) <= SOURCES_SHOWN:
        items.append(("sources", " ".join(srcs)))
    else:   # (a census of 128 timm:NAME sources would fill the screen)
        kinds: dict[str, int] = {}
        for x in srcs:
            k = x.partition(":")[0] if x.partition(":")[0] in ("timm", "hf") else "files"
            kinds[k] = kinds.get(k, 0) + 1
        items.append(("sources", f"{len(srcs)}: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))))
    return '<table id="summary-table">' + "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in items) + "</table>"


def ranking_table(ranked: list[dict], by_name: dict) -> str:
    rows = []
    for x in ranked:
        names = x["blocked"]
        links = ", ".join(by_name.get(n, e(n)) for n in names[:BLOCKED_SHOWN])
        links += f" … {len(names) - BLOCKED_SHOWN} more" if len(names) > BLOCKED_SHOWN else ""
        rows.append("<tr>" + _num(x["rank"], x["rank"]) + _td(e(x["op"]), x["op"], "op") + _td(e(", ".join(x.get("why", []))), ", ".join(x.get("why", [])))
                    + _num(x["models"], x["models"])
                    + _num(f"{x['nodes']:,}", x["nodes"]) + _num(gain_pct(x["coverage_gain"]), x["coverage_gain"])
                    + _num(gain_speedup(x["speedup_gain"]), x["speedup_gain"])
                    + _num(x["whole_if_supported"], x["whole_if_supported"]) + _td(links, ", ".join(names), "names") + "</tr>")
    heads = [("rank", True), ("op", False), ("why", False), ("architectures blocked", True), ("nodes", True),
             ("Δ coverage (mean)", True), ("Δ est. speedup (mean)", True), ("then compile whole", True), ("blocked", False)]
    return _table("ranking", heads, rows)


def _reasons(r: dict, n: int = 3) -> str:
    return ", ".join(f"{x['code']} {x['op']}×{x['nodes']}" for x in r.get("fallback_reasons", [])[:n])


def models_table(rows: list[dict], ids: dict, validated: bool) -> str:
    out = []
    for r in rows:
        ok = r.get("status") == "ok"
        blocking = sorted(r.get("blocking_ops", {}).items(), key=lambda t: (-t[1], t[0]))
        ops = ", ".join(f"{op}×{n}" for op, n in blocking[:OPS_SHOWN]) + (" …" if len(blocking) > OPS_SHOWN else "")
        cells = [_td(e(r["source"]), r["source"]), _td(_link(r, ids), r["model"]),
                 _td(e(r.get("status")), r.get("status"), "" if ok else "bad"),
                 _num(f"{r['nodes']:,}" if r.get("nodes") is not None else "", r.get("nodes")),
                 _num("" if r.get("clusters") is None else r["clusters"], r.get("clusters")),
                 _num(fmt_pct(r.get("coverage")) if ok else "", r.get("coverage")),
                 _num(fmt_pct(r.get("coverage_flops")) if ok else "", r.get("coverage_flops")),
                 _num(fmt_speedup(r.get("est_speedup")) if ok else "", r.get("est_speedup"))]
        if validated:
            cells.append(_num(fmt_speedup(r.get("measured_speedup")) if r.get("measured_speedup") is not None else "",
                              r.get("measured_speedup")))
        cells += [_td(e(ops), ops), _td(e(_reasons(r) if ok else r.get("error")), None, "" if ok else "bad")]
        out.append("<tr>" + "".join(cells) + "</tr>")
    heads = [("source", False), ("model", False), ("status", False), ("nodes", True), ("clusters", True),
             ("coverage", True), ("coverage FLOPs", True), ("est. speedup", True)]
    heads += [("measured speedup", True)] if validated else []
    heads += [("blocking ops", False), ("top fallback reasons / error", False)]
    return _table("models", heads, out)


def reasons_table(rows: list[dict]) -> str:
    """Fallback reason codes across the census: models with one, and nodes."""
    models: dict[str, int] = {}
    nodes: dict[str, int] = {}
    for r in rows:
        seen = set()
        for x in r.get("fallback_reasons", []):
            nodes[x["code"]] = nodes.get(x["code"], 0) + x["nodes"]
            seen.add(x["code"])
        for c in seen:
            models[c] = models.get(c, 0) + 1
    order = sorted(models, key=lambda c: (-models[c], -nodes[c], c))
    return _table("reasons", [("reason", False), ("models", True), ("nodes", True)],
                  ["<tr>" + _td(e(c), c) + _num(models[c], models[c]) + _num(f"{nodes[c]:,}", nodes[c]) + "</tr>" for c in order])


def model_section(r: dict, anchor: str, validated: bool, link: str | None = None) -> str:
    """One model's drill-down: its numbers, cluster sizes, every fallback (code, op, nodes, reason), and the
    partition with each blocking op allowed."""
    head = f'<section class="model" id="{anchor}"><h3>{e(r["model"])} <small>{e(r["source"])}</small></h3>'
    if r.get("status") != "ok":
        return head + f'<p class="bad">{e(r.get("status"))} at {e(r.get("stage"))}: {e(r.get("error"))}</p></section>'
    facts = [f"{r['nodes']:,} nodes", f"{r['clusters']} clusters", f"coverage {fmt_pct(r['coverage'])}",
             f"{fmt_pct(r['coverage_flops'])} of FLOPs" if r.get("coverage_flops") is not None else "share of FLOPs unknown", f"est. speedup {fmt_speedup(r.get('est_speedup'))}",
             f"boundary {fmt_bytes(r.get('boundary_bytes'))}", f"weights: {r.get('weights')}"]
    if r.get("params") is not None:
        facts.append(f"{r['params']:,} parameters")
    if validated:
        v = r.get("validation") or {}
        facts.append(f"measured speedup {fmt_speedup(r.get('measured_speedup'))} (clusters ok {v.get('ok', '?')}, "
                     f"mismatch {v.get('mismatch', '?')}, skipped {v.get('skipped', '?')})")
    parts = [head, f"<p>{e(' · '.join(facts))}</p>"]
    if link:
        parts.append(f'<p><a href="{e(link)}">the model\'s own report</a> (picture, node stories, formation replay)</p>')
    sizes = r.get("cluster_sizes") or []
    if sizes:
        parts.append(f"<p>cluster sizes (nodes): {e(' '.join(map(str, sizes)))}</p>")
    if r.get("fallback_reasons"):
        parts.append(_table(f"{anchor}-fb", [("reason", False), ("op", False), ("nodes", True), ("example", False)],
                            ["<tr>" + _td(e(x["code"]), x["code"]) + _td(e(x["op"]), x["op"]) + _num(x["nodes"], x["nodes"])
                             + _td(e(x["reason"]), x["reason"]) + "</tr>" for x in r["fallback_reasons"]]))
    if r.get("what_if"):
        parts.append("<h4>Supporting one op</h4>")
        parts.append(_table(f"{anchor}-wi", [("op allowed", False), ("coverage", True), ("clusters", True), ("est. speedup", True)],
                            ["<tr>" + _td(e(op), op) + _num(f"{fmt_pct(r['coverage'])} → {fmt_pct(w['coverage'])}", w["coverage"])
                             + _num(f"{r['clusters']} → {w['clusters']}", w["clusters"])
                             + _num(f"{fmt_speedup(r.get('est_speedup'))} → {fmt_speedup(w['est_speedup'])}", w["est_speedup"])
                             + "</tr>" for op, w in r["what_if"].items()]))
    return "".join(parts) + "</section>"


def census_page(rows: list[dict], ranked: list[dict], summary: dict, *, validated: bool = False,
                links: dict | None = None) -> str:
    """The page as text; rows in (source, model) order whatever order they finished in. `links`:
    (source, model) -> the relative address of that model's own report page."""
    links = links or {}
    rows = sorted(rows, key=lambda r: (r["source"], r["model"]))
    validated = validated or any(r.get("measured_speedup") is not None for r in rows)
    ids = anchors(rows)
    by_name: dict[str, str] = {}
    for r in rows:
        by_name.setdefault(r["model"], _link(r, ids))
    title = f"xcviz census: {summary['models']} models"
    body = [f"<header><h1>{e(title)}</h1><p class=\"short\">{e(summary_text(summary))}</p></header>",
            '<section id="summary">' + summary_table(summary, validated) + "</section>",
            "<section><h2>Ops that block XLA</h2><p class=\"hint\">Ranked by the architectures each blocks "
            "(why: unsupported by XLA on the device, unknown to xcviz's op table, or denied by the options); the "
            "gains re-cluster each model with that op alone allowed.</p>"
            '<input class="filter" data-table="ranking" type="search" placeholder="filter ops" aria-label="filter ops">'
            + ranking_table(ranked, by_name) + "</section>",
            "<section><h2>Architectures</h2>"
            '<input class="filter" data-table="models" type="search" placeholder="filter models" aria-label="filter models">'
            + models_table(rows, ids, validated) + "</section>",
            "<section><h2>Fallback reasons</h2>" + reasons_table(rows) + "</section>",
            "<section id=\"drill\"><h2>Each model</h2>" + "".join(model_section(r, ids[(r['source'], r['model'])], validated,
                                                                              links.get((r['source'], r['model'])))
                                                                for r in rows) + "</section>"]
    fill = {"TITLE": e(title), "STYLE": _asset("census.css"), "BODY": "\n".join(body), "SCRIPT": _asset("census.js")}
    return re.sub(r"\{\{([A-Z]+)\}\}", lambda m: fill[m.group(1)], _asset("census.html"))
