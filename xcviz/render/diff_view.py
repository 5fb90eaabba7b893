"""The diff on a terminal: metric table with deltas, cluster changes, moved nodes and why, the ARI line."""
from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from .report_json import DIFF_METRICS as METRICS
from .table_layout import Strip, fit, phrases
from .units import fmt_bytes, fmt_pct, fmt_speedup

MAX_LIST = 6


def fmt_metric(key: str, value) -> str:
    if key in ("coverage", "coverage_flops"):
        return fmt_pct(value)
    if key.endswith("bytes"):
        return fmt_bytes(value)
    if key == "speedup_estimate":
        return fmt_speedup(value)
    return "unknown" if value is None else f"{value:,}"


def fmt_delta(key: str, d) -> str:
    if d is None:
        return ""
    if d == 0:
        return "="
    sign = "+" if d > 0 else "-"
    if key in ("coverage", "coverage_flops"):
        return f"{sign}{abs(100 * d):.0f} pt"
    if key.endswith("bytes"):
        return sign + fmt_bytes(abs(int(d)))
    if key == "speedup_estimate":
        return f"{sign}{abs(d):.2f}×"
    return f"{sign}{abs(d):,}"


def _table(title: str, columns: list[str], right: tuple[str, ...] = ()) -> Table:
    t = Table(title=Text(title), title_justify="left", header_style="bold")
    for col in columns:
        t.add_column(col, justify="right" if col in right else "left", overflow="fold")
    return t


def metric_table(report: dict) -> Table:
    t = _table("Metrics", ["metric", "A", "B", "Δ"], right=("A", "B", "Δ"))
    a, b = report["a"]["stats"], report["b"]["stats"]
    for key, label in METRICS:
        if a.get(key) is None and b.get(key) is None and key == "parameter_bytes":
            continue  # not computed by this cost model
        t.add_row(label, fmt_metric(key, a.get(key)), fmt_metric(key, b.get(key)), fmt_delta(key, report["delta"][key]))
    return t


def _ids(ids: list[str]) -> str:
    return " + ".join(ids) if ids else "—"


def _members(clusters: dict[str, list[str]], ids: list[str]) -> str:
    out = []
    for c in ids:
        m = clusters.get(c, [])
        out.append("{" + " ".join(m[:MAX_LIST]) + (f" … +{len(m) - MAX_LIST}" if len(m) > MAX_LIST else "") + "}")
    return " + ".join(out) if out else "—"


def diff_view(report: dict, a_clusters: dict[str, list[str]], b_clusters: dict[str, list[str]],
              limit: int | None = 200) -> Group:
    parts: list = [Strip(Text(f"A: {report['a']['label']}")), Strip(Text(f"B: {report['b']['label']}")), Text(""),
                   fit(metric_table(report))]
    changes = [c for c in report["clusters"] if c["kind"] != "same"]
    if changes:
        t = _table("Cluster changes", ["change", "A", "B"])
        for c in changes[:limit]:
            t.add_row(Text(c["kind"], style="bold"), Text(f"{_ids(c['a'])} {_members(a_clusters, c['a'])}"),
                      Text(f"{_ids(c['b'])} {_members(b_clusters, c['b'])}"))
        if limit is not None and len(changes) > limit:
            t.caption = f"{len(changes) - limit} more (use --json for all)"
        parts += [Text(""), fit(t)]
    if report["moved"]:
        t = _table("Moved nodes", ["node", "op", "A", "B", "B's decision"])
        for m in report["moved"][:limit]:
            t.add_row(Text(m["node"]), Text(m["op"]), Text(m["a"] or "fallback"), Text(m["b"] or "fallback"),
                      Text(m["b_decision"] or ""))
        if limit is not None and len(report["moved"]) > limit:
            t.caption = f"{len(report['moved']) - limit} more (use --json for all)"
        parts += [Text(""), fit(t)]
    for key, side in (("nodes_only_in_a", "A"), ("nodes_only_in_b", "B")):
        if report[key]:
            names = report[key]
            parts.append(Strip(Text(f"{len(names)} node{'s' if len(names) != 1 else ''} only in {side}: "
                                    + " ".join(names[:MAX_LIST]) + (" …" if len(names) > MAX_LIST else ""))))
    parts += [Text(""), phrases(Text(summary_text(report), style="bold"))]
    return Group(*parts)


def summary_text(report: dict) -> str:
    """The last line. The ARI and the matches by name cover only the nodes both sides name: where that is
    not every node (two exporters of one model), the line says so rather than print a 1.000 beside 0/2."""
    same = sum(c["kind"] == "same" for c in report["clusters"])
    by_ops = sum(c.get("by") == "ops" for c in report["clusters"])
    common = report.get("common_nodes")
    n_a = len(report["nodes_only_in_a"]) + (common or 0)
    n_b = len(report["nodes_only_in_b"]) + (common or 0)
    head = f"{'identical' if report['same'] else 'different'} · {same}/{len(report['clusters'])} clusters the same"
    if by_ops:
        head += f" ({by_ops} matched by their ops: node names differ)"
    moved = f" · {len(report['moved'])} moved node{'s' if len(report['moved']) != 1 else ''}"
    if common is None or (common == n_a and common == n_b):
        return head + moved + f" · partition similarity (ARI) {report['ari']:.3f}"
    if common < 2:
        return head + f" · the graphs share {common} of {n_a}/{n_b} node names: no partition similarity by name"
    return head + moved + f" · partition similarity (ARI) {report['ari']:.3f} over the {common} nodes both name"


def sweep_min_view(rows: list[dict]):
    """`diff --sweep-min`: one row per minimum cluster size."""
    t = _table("Minimum cluster size sweep", ["min size"] + [label for _, label in METRICS] + ["ARI vs A"],
               right=tuple(["min size", "ARI vs A"] + [label for _, label in METRICS]))
    for r in rows:
        t.add_row(str(r["min_cluster_size"]), *(fmt_metric(k, r["stats"].get(k)) for k, _ in METRICS), f"{r['ari']:.3f}")
    return fit(t)
