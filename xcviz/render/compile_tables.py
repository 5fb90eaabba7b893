"""`xcviz compile-report` as rich tables: Dynamo's graphs in execution order, the breaks with the user's source
lines, each graph's clusters and fallback ops, and the one-line summary."""
from __future__ import annotations

import os

from rich.console import Group
from rich.table import Table
from rich.text import Text

from .tables import FALLBACK, cluster_color
from .units import fmt_bytes, fmt_pct, fmt_speedup


def _where(frame: str) -> str:
    """file:line relative to the working directory when under it (the JSON keeps Dynamo's path)."""
    path, sep, line = frame.rpartition(":")
    if sep and os.path.isabs(path):
        rel = os.path.relpath(path)
        if not rel.startswith(".."):
            return f"{rel}:{line}"
    return frame


def crossing(g: dict):
    """The bytes handed between the runtimes per call (activations); a report of before the split: every byte."""
    return g["boundary_bytes_activations"] if "boundary_bytes_activations" in g else g["boundary_bytes"]


def _ops(ops: dict) -> str:
    return " ".join(f"{op}×{n}" if n > 1 else op for op, n in ops.items())


def run_label(data: dict) -> str:
    """How the graphs ran, truly: "eager", "hybrid" only when every graph ran a cluster under JAX, else how many."""
    graphs = data["graphs"]
    if data.get("mode") != "hybrid":
        return data.get("mode", "eager")
    n, k = len(graphs), sum(1 for g in graphs if (g.get("hybrid") or {}).get("ran") == "hybrid")
    grad = " (called under torch.no_grad())" if data.get("no_grad") else ""
    if n and k == n:
        return "hybrid" + grad
    return f"hybrid requested{grad}: {k} of {n} graph{'' if n == 1 else 's'} ran clusters under JAX, the rest in torch"


def _ran(g: dict) -> Text:
    """hybrid (clusters under JAX) or torch, with the first reason a part ran in torch."""
    hy = g.get("hybrid") or {"ran": "torch", "notes": ["not analysed: " + g.get("error", "")]}
    why = (hy.get("errors") or []) + [n for n in hy.get("notes") or []
                                      if "runs in torch" in n or "run in torch" in n or n.startswith("not analysed")]
    return Text(hy["ran"] + (f": {why[0]}" if why else ""), style="" if hy["ran"] == "hybrid" else FALLBACK)


def compile_view(data: dict, title: str) -> Group:
    hybrid = data.get("mode") == "hybrid"
    graphs = Table(title=Text(f"Graphs Dynamo captured ({title}, {run_label(data)})"), title_justify="left", header_style="bold")
    cols = [("graph", "right"), ("compile", "left"), ("aten ops", "right"), ("clusters", "right"),
            ("coverage", "right"), ("bytes crossing", "right"), ("+ resident parameters", "right"),
            ("est. speedup", "right")]
    for col, just in cols + ([("ran", "left")] if hybrid else []) + [("then", "left")]:
        graphs.add_column(col, justify=just, overflow="fold")
    breaks_after = {b["after_graph"]: (k, b) for k, b in enumerate(data["breaks"])}
    for g in data["graphs"]:
        then = breaks_after.get(g["index"])
        note = ("recompiled" + (f": {g['recompile_reason']}" if g.get("recompile_reason") else "")) if g.get("recompile") else ""
        graphs.add_row(str(g["index"]), g.get("compile_id", ""), str(g["nodes"]), str(len(g["clusters"])),
                       fmt_pct(g["coverage"]), fmt_bytes(crossing(g)), fmt_bytes(g.get("parameter_bytes")),
                       fmt_speedup(g["est_speedup"]),
                       *((_ran(g),) if hybrid else ()),
                       Text(f"break {then[0] + 1}: {os.path.basename(then[1]['user_frame'])}", style=FALLBACK) if then
                       else Text(note or g.get("error", "")))
    parts = [graphs]
    if data["breaks"]:
        br = Table(title=Text(f"Graph breaks ({len(data['breaks'])}, in order)"), title_justify="left", header_style="bold")
        br.add_column("break", justify="right")
        br.add_column("after graph", justify="right")
        br.add_column("reason (Dynamo's)", overflow="fold")
        br.add_column("where", overflow="fold")
        br.add_column("source line", overflow="fold")
        for k, b in enumerate(data["breaks"]):
            br.add_row(str(k + 1), str(b["after_graph"]), b["summary"], _where(b["user_frame"]), b["line"])
        parts.append(br)
    for g in data["graphs"]:
        if not g["clusters"] and not g["fallback_ops"]:
            continue
        t = Table(title=Text(f"graph {g['index']}: clusters and fallbacks"), title_justify="left", header_style="bold")
        t.add_column("cluster / fallback")
        t.add_column("aten ops", overflow="fold")
        t.add_column("activations in → out (+ parameters) / reason", overflow="fold")
        t.add_column("est.", justify="right")
        for k, c in enumerate(g["clusters"]):
            t.add_row(Text(c["id"], style=cluster_color(k)), _ops(c["ops"]),
                      f"{fmt_bytes(c.get('activations_in', c['bytes_in']))} → {fmt_bytes(c['bytes_out'])}"
                      + (f" (+ {fmt_bytes(c['parameters_in'])})" if c.get("parameters_in") else ""),
                      "folds to a constant" if c.get("constant") else fmt_speedup(c["est_speedup"]))
        for f in g["fallback_ops"]:
            t.add_row(Text(f"fallback ×{f['count']}", style=FALLBACK), f["op"], f["reason"], "")
        parts.append(t)
        xla = g.get("openxla") or {}
        differs = xla.get("support_differs_ops") or []
        if differs:
            calls = sum(d["count"] for d in differs)
            parts.append(Text(f"  openxla's support differs on {len(differs)} op{'' if len(differs) == 1 else 's'} "
                              f"({calls} call{'' if calls == 1 else 's'}; openxla partitions: {len(xla.get('partitions', []))}): "
                              + ", ".join(
                f"{d['op']}{'×' + str(d['count']) if d['count'] > 1 else ''} ({'openxla ✓' if d['openxla'] else 'openxla ✗: ' + d['openxla_why']}, "
                f"{'xcviz ✓' if d['xcviz'] else 'xcviz ✗: ' + d['xcviz_why']})" for d in differs)))
    s = data["summary"]
    parts.append(Text(f"{s['graphs']} graphs · {s['breaks']} breaks · {s['recompilations']} recompilations · "
                      f"{s['clusters']} cluster{'' if s['clusters'] == 1 else 's'} · coverage {fmt_pct(s['coverage'])} ({fmt_pct(s['coverage_in_graphs'])} "
                      f"in graphs; each break's eager code counts as 1 native op) · {fmt_bytes(crossing(s))} "
                      f"cross boundaries" + (f" (+ {fmt_bytes(s['parameter_bytes'])} resident parameters)"
                                             if s.get("parameter_bytes") else "") + f" · est. speedup {fmt_speedup(s['est_speedup'])} (graphs only)"))
    return Group(*parts)
