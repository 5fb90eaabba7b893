"""Rich renderables for the terminal. Data in, renderables out; user strings are never parsed as markup."""
from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..clustering import Clustering
from ..cost import Stats
from ..cost.coverage import unknown_text
from ..ir import Graph
from ..ir.scopes import cut, scope_tree
from .ordering import GROUP_ABOVE, cluster_order, grouped_fallback_table
from .table_layout import Strip, fit, phrases
from .units import fmt_bytes, fmt_pct, fmt_speedup
from . import symbolic_view

# One hue per cluster, the same everywhere (terminal, SVG, HTML). Colorblind-safe blues, greens and purples
# (Okabe-Ito and Tol's muted set) that stay clear of the two hues reserved for meaning: fallback red and
# boundary amber.
CLUSTER_COLORS = ["#0072B2", "#009E73", "#CC79A7", "#56B4E9", "#332288", "#117733", "#AA4499", "#44AA99"]
FALLBACK = "#D62728"
BOUNDARY = "#FFB000"
MAX_LIST = 8


def cluster_color(k: int) -> str:
    return CLUSTER_COLORS[k % len(CLUSTER_COLORS)]


def _names(items: list[str], limit: int = MAX_LIST) -> str:
    if len(items) <= limit:
        return " ".join(items)
    return " ".join(items[:limit]) + f" … (+{len(items) - limit})"


def module_paths(graph: Graph) -> list[str | None]:
    """Each node's source module path (PyTorch programs), or [] when no node has one: the column is then left out."""
    modules = [n.module for n in graph.nodes]
    return modules if any(modules) else []


def scope_paths(graph: Graph) -> list[str]:
    """Each node's layer (ir.scopes) where the graph has layers and no module paths (those are shown instead,
    and a torch program's layers are made from them), else []: the column is then left out."""
    tree = scope_tree(graph)
    return [] if tree.flat or module_paths(graph) else tree.paths


def _member_paths(paths: list, members: list[int], scoped: bool) -> list[str]:
    """The distinct module paths of a cluster's members; for layers (`scoped`), cut one level below the
    members' common layer (`model/layers.0 model/layers.1`, not each of their sub-layers)."""
    distinct = list(dict.fromkeys(p for p in map(paths.__getitem__, members) if p))
    if not scoped or len(distinct) < 2:
        return distinct
    common = distinct[0].split("/")
    for p in distinct[1:]:
        parts = p.split("/")
        n = 0
        while n < min(len(common), len(parts)) and common[n] == parts[n]:
            n += 1
        common = common[:n]
    return list(dict.fromkeys(cut(p, len(common) + 1) for p in distinct))


def title(graph: Graph, clustering: Clustering) -> str:
    o = clustering.options
    return f"{graph.name}: {o.strategy}, {o.device}, min size {o.min_size}"


def clusters_table(graph: Graph, clustering: Clustering, stats: Stats, limit: int | None = None,
                   sort: str | None = None) -> Table:
    t = Table(title=Text(f"Clusters ({title(graph, clustering)})"), title_justify="left", header_style="bold")
    modules = module_paths(graph)
    heading = "modules"
    if not modules:
        modules, heading = scope_paths(graph), "scopes"
    for col in ("id", "nodes", "ops", "entry → exit", "bytes in", "bytes out", "est. speedup") + ((heading,) if modules else ()):
        t.add_column(col, justify="right" if col.startswith(("bytes", "est")) else "left", overflow="fold",
                     no_wrap=col in ("id", "bytes in", "bytes out"))
    order = cluster_order(stats.clusters_detail, sort)
    for k in order if limit is None else order[:limit]:
        c = stats.clusters_detail[k]
        color = cluster_color(k)  # a cluster keeps its colour in any order
        ops = " ".join(f"{op}×{n}" if n > 1 else op for op, n in c.ops.items())
        t.add_row(Text(c.id, style=f"bold {color}"), Text(_names(c.nodes)), Text(ops),
                  Text(f"{_names(c.entry_points, 4)} → {_names(c.exit_points, 4)}"),
                  Text(_bytes_in(c), style=BOUNDARY), Text(fmt_bytes(c.boundary_bytes_out), style=BOUNDARY),
                  Text(FOLDS if getattr(c, "constant", False) else fmt_speedup(c.speedup_estimate)),
                  *((Text(_names(_member_paths(modules, clustering.clusters[k], heading == "scopes"), 4)),)
                    if modules else ()))
    if limit is not None and len(stats.clusters_detail) > limit:
        t.caption = f"{len(stats.clusters_detail) - limit} more clusters (use --json for all)"
    return t


FOLDS = "folds to a constant"   # a cluster whose values depend on no runtime input (ClusterCost.constant)


def _bytes_in(c) -> str:
    """The activations a cluster takes in per call, and apart the parameters it reads where they reside."""
    p = c.parameter_bytes_in
    if c.boundary_bytes_in is None or not p:
        return fmt_bytes(c.boundary_bytes_in)
    return f"{fmt_bytes(c.boundary_bytes_in - p)} (+ {fmt_bytes(p)} params)"


def fallback_table(graph: Graph, clustering: Clustering, limit: int | None = None) -> Table:
    t = Table(title=Text("Fallback (runs natively)"), title_justify="left", header_style="bold")
    rows = [i for i, k in enumerate(clustering.cluster_of) if k < 0]
    modules = any(graph.nodes[i].module for i in rows)
    scopes = [] if modules else scope_paths(graph)
    if scopes and not any(scopes[i] for i in rows):
        scopes = []   # (every fallback at the top: no column)
    for col in ("node", "op", "reason") + (("module",) if modules else ("scope",) if scopes else ()):
        t.add_column(col, overflow="fold")
    for i in rows if limit is None else rows[:limit]:
        node = graph.nodes[i]
        t.add_row(Text(node.name, style=FALLBACK), Text(node.op_type), Text(clustering.reason[i] or ""),
                  *((Text(node.module or ""),) if modules else (Text(scopes[i]),) if scopes else ()))
    if limit is not None and len(rows) > limit:
        t.caption = f"{len(rows) - limit} more fallback nodes (use --json for all)"
    return t


def summary_line(stats: Stats) -> Text:
    s = stats
    text = Text()
    text.append(f"{s.clusters} cluster{'s' if s.clusters != 1 else ''}", style="bold")
    folded = getattr(s, "constant_clusters", 0)
    if folded:
        text.append(f" ({folded} {'folds' if folded == 1 else 'fold'} to a constant, left out of the estimate)")
    text.append(f" · coverage {s.clustered_nodes}/{s.nodes} ops ({fmt_pct(s.coverage)})")
    flops = flops_coverage_text(s)
    if flops:
        text.append(f", {flops} of FLOPs")
    elif s.unknown_cost_nodes:
        text.append(", FLOPs coverage unknown")
    if s.unknown_cost_nodes:
        text.append(f" ({unknown_text(s.unknown_cost_nodes)})")
    text.append(" · ")
    # what really crosses per call is the activations; parameters stay resident (read, never handed over)
    text.append(fmt_bytes(s.boundary_bytes_activations), style=BOUNDARY)
    text.append(" cross boundaries")
    if s.parameter_bytes != 0:
        text.append(f" (+ {fmt_bytes(s.parameter_bytes)} resident parameters)")
    text.append(" · est. speedup ")
    text.append(fmt_speedup(s.speedup_estimate), style="bold")
    native = getattr(s, "native", None)
    text.append(f" ({s.hardware}" + (f", vs {'NumPy reference' if native == 'numpy' else native})" if native else ")"))
    return text


def flops_coverage_text(s: Stats) -> str:
    """'62 %', or a bound where some nodes' FLOPs are unknown ('≥ 62 %', '≤ 99 %'); '' when nothing is known."""
    if s.coverage_flops is not None:
        return fmt_pct(s.coverage_flops)
    lo, hi = s.coverage_flops_min, s.coverage_flops_max
    if lo is None or hi is None or (lo == 0.0 and hi == 1.0):
        return ""
    return f"≥ {fmt_pct(lo)}" if hi == 1.0 else f"≤ {fmt_pct(hi)}"


def cluster_view(graph: Graph, clustering: Clustering, stats: Stats, limit: int | None = None,
                 sort: str | None = None, fallbacks: str = "auto") -> Group:
    """`fallbacks`: nodes (one row each), grouped (by reason and op), auto (grouped above GROUP_ABOVE nodes)."""
    parts = []
    if clustering.clusters:
        parts.append(fit(clusters_table(graph, clustering, stats, limit, sort)))
    else:
        parts.append(Text(f"No cluster kept ({title(graph, clustering)})", style="bold"))
    if stats.fallback_nodes:
        grouped = fallbacks == "grouped" or (fallbacks == "auto" and stats.fallback_nodes > GROUP_ABOVE)
        table = grouped_fallback_table(graph, clustering, limit, FALLBACK) if grouped else fallback_table(graph, clustering, limit)
        parts += [Text(""), fit(table)]
    n_refused = clustering.refused_count()
    if n_refused:
        nodes = graph.nodes
        t = Table(title=Text("Merges refused"), title_justify="left", header_style="bold")
        shown = clustering.refused(limit)
        pairs = refused_pairs(shown)  # the same pair may be tried again in a later round: one row, a count
        counted = any(n > 1 for n in pairs.values())
        for col in ("phase", "edge", "reason") + (("times",) if counted else ()):
            t.add_column(col, overflow="fold", justify="right" if col == "times" else "left")
        for (phase, src, dst, reason), n in pairs.items():
            t.add_row(Text(str(phase)), Text(f"{nodes[src].name} → {nodes[dst].name}"), Text(reason or ""),
                      *((Text(f"×{n}"),) if counted else ()))
        if len(shown) < n_refused:
            t.caption = f"{n_refused - len(shown)} more (use --json for all)"
        parts += [Text(""), fit(t)]
    from .bodies_view import body_section

    parts += body_section(graph, clustering)  # Loop/If/Scan bodies' clusters, nested under their nodes
    parts += [Text(""), phrases(summary_line(stats)), *map(Strip, symbolic_view.hint(graph, clustering, stats))]
    return Group(*parts)


def refused_pairs(attempts) -> dict[tuple, int]:
    """(phase, src, dst, reason) -> how many times, in first-seen order."""
    out: dict[tuple, int] = {}
    for a in attempts:
        key = (a.phase, a.src, a.dst, a.reason)
        out[key] = out.get(key, 0) + 1
    return out


def stats_table(graph: Graph, clustering: Clustering, stats: Stats) -> Group:
    s = stats
    t = Table(title=Text(f"Stats ({title(graph, clustering)}, hardware {s.hardware})"), title_justify="left",
              show_header=False)
    t.add_column("metric", style="bold")
    t.add_column("value", justify="right")
    rows = [
        ("ops", str(s.nodes)),
        ("clusters", str(s.clusters)),
        *([("  folding to a constant", f"{s.constant_clusters} (left out of S)")] if getattr(s, "constant_clusters", 0) else []),
        ("clustered ops", f"{s.clustered_nodes}"),
        ("fallback ops", f"{s.fallback_nodes}"),
        ("coverage η (ops)", fmt_pct(s.coverage)),
        ("coverage (FLOPs)", flops_coverage_text(s) or fmt_pct(None)),
        *([("  unknown cost", unknown_text(s.unknown_cost_nodes))] if s.unknown_cost_nodes else []),
        ("boundary edges |∂C|", str(s.boundary_edges)),
        ("boundary bytes D", fmt_bytes(s.boundary_bytes)),
        ("  activations (per call)", fmt_bytes(s.boundary_bytes_activations)),
        ("  parameters (resident)", fmt_bytes(s.parameter_bytes)),
        ("hand-offs per call", str(s.handoffs)),
        ("kernel launches (XLA, predicted)", f"{s.kernel_launches_before} → {s.kernel_launches_after}"),
        ("est. speedup S", fmt_speedup(s.speedup_estimate)),
    ]
    rows += symbolic_view.rows(graph, clustering, s)  # D and FLOPs as formulas, D's lower bound, unknown edges
    for k, v in rows:
        t.add_row(k, Text(v))
    return Group(fit(t), Text(""), phrases(summary_line(s)), *map(Strip, symbolic_view.hint(graph, clustering, s)))


def ops_table(registry, device: str | None = None):
    """One row per op: per device whether XLA compiles it, where that verdict comes from, and the reason or note."""
    from ..ops import DEVICES

    devices = (device,) if device else DEVICES
    registry = list(registry)
    counts = " · ".join(f"{d} {sum(op.compilable_on(d) for op in registry)}" for d in devices)
    t = Table(title=Text(f"Op registry ({len(registry)} ops; XLA compiles {counts})"), title_justify="left",
              header_style="bold")
    t.add_column("op")
    t.add_column("aliases", overflow="fold")
    for d in devices:
        t.add_column(d, justify="center")
    t.add_column("source", overflow="fold")
    t.add_column("note", overflow="fold")
    for op in registry:
        marks = [Text("✓", style="green") if op.compilable_on(d) else Text("✗", style=FALLBACK) for d in devices]
        t.add_row(Text(op.name, style="bold"), Text(", ".join(op.aliases)), *marks, Text(op.source),
                  Text(_ops_note(op, devices)))
    return fit(t)


def _ops_note(op, devices) -> str:
    """The reason XLA does not compile the op (per device where they differ), else the entry's note."""
    if op.reason and not op.devices:
        return op.reason
    per = [f"{d}: {op.why_not(d)}" for d in devices if not op.compilable_on(d)]
    return "; ".join(per) if per else op.doc


SHORT_REFUSALS = 8   # refused merges a short story shows (the latest: they decided the final shape)


def short_story(node: str, steps: list) -> list:
    """The steps that tell one node's story without the cluster's whole growth: how the node itself
    joined (the merges where its side was the node alone), the refused merges (why the cluster stops
    where it does; the last SHORT_REFUSALS), and the last merge; in their order."""
    refused = [k for k, st in enumerate(steps) if not st.merged][-SHORT_REFUSALS:]
    own = [k for k, st in enumerate(steps) if node in (st.producer_side + st.consumer_side)
           and (st.producer_side == [node] or st.consumer_side == [node])]
    last = [max((k for k, st in enumerate(steps) if st.merged), default=len(steps) - 1)]
    return [steps[k] for k in sorted(set(refused + own + last))]


def explain_view(s: dict, full: bool = False) -> Group:
    head = Text()
    head.append(s["node"], style="bold")
    head.append(f"  ({s['op_type']} → {s['op']}, {s['device']})")
    lines = [head]
    if s.get("module"):
        lines.append(Text(f"  module: {s['module']}"))
    if s.get("scope") is not None:
        lines.append(Text(f"  scope: {s['scope'] or '(top level)'}"))
    if s["candidate"]:
        lines.append(Text("  candidate: yes"))
    else:
        lines.append(Text(f"  candidate: no, {s['not_candidate_reason']}", style=FALLBACK))
    if s["steps"]:
        shown = s["steps"] if full else short_story(s["node"], s["steps"])
        merged = sum(st.merged for st in s["steps"])
        lines.append(Text(f"  merges tried ({len(s['steps'])}: {merged} merged, {len(s['steps']) - merged} refused):"))
        hidden = len(s["steps"]) - len(shown)
        for st in shown:
            line = Text("    ")
            line.append("✓ " if st.merged else "✗ ", style="green" if st.merged else FALLBACK)
            line.append(st.text())
            lines.append(line)
        if hidden:
            lines.append(Text(f"    … {hidden} more merge line{'s' if hidden != 1 else ''} hidden (--all shows every merge)",
                              style="dim"))
    elif s["candidate"]:
        lines.append(Text("  merges tried: none (no neighbouring candidate)"))
    if s["cluster"]:
        lines.append(Text(f"  result: in {s['cluster']} with {len(s['cluster_nodes'])} nodes: {_names(s['cluster_nodes'])}", style="bold green"))
    else:
        lines.append(Text(f"  result: falls back, {s['reason']}", style=f"bold {FALLBACK}"))
    if s.get("bodies"):
        from .bodies_view import body_lines

        lines += [Text("  " + line) for line in body_lines(s["bodies"])]
    return Group(*lines)
