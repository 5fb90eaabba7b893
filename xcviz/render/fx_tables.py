"""Tables and JSON for PyTorch programs: the aten op table's coverage, and the comparison with torch.fx's
CapabilityBasedPartitioner (both partitions side by side, then each difference with its rule)."""
from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from .tables import FALLBACK


def aten_rows(registry, devices) -> list[dict]:
    """One row per aten op of the table: the registry op it becomes and where XLA compiles that."""
    from ..ops.aten.adapters import TARGETS

    rows = []
    for name in sorted(TARGETS):
        op = registry.get(TARGETS[name])
        rows.append({"aten": f"aten.{name}", "op": op.name, **{d: op.compilable_on(d) for d in devices}})
    return rows


def aten_table(registry, devices, rows: list[dict] | None = None) -> Table:
    rows = aten_rows(registry, devices) if rows is None else rows
    t = Table(title=Text(f"aten op table ({len(rows)} aten ops → {len({r['op'] for r in rows})} registry ops; "
                         "others load opaque)"), title_justify="left", header_style="bold")
    t.add_column("aten op")
    t.add_column("xcviz op")
    for d in devices:
        t.add_column(d, justify="center")
    for r in rows:
        t.add_row(r["aten"], r["op"], *[Text("✓", style="green") if r[d] else Text("✗", style=FALLBACK) for d in devices])
    return t


def comparison_report(graph_name: str, cmp) -> dict:
    from ..clustering.fx_compare import RULES

    return {"graph": graph_name, "fx_options": dict(sorted(cmp.options.items())),
            "fx_partitions": cmp.fx_partitions, "clusters": cmp.clusters,
            "differences": [{"rule": d.rule, "explanation": RULES[d.rule], "nodes": d.nodes, "fx": d.fx, "xla": d.xla,
                             **({"detail": d.detail} if d.detail else {})} for d in cmp.differences]}


def _names(names: list[str], limit: int = 8) -> str:
    return " ".join(names[:limit]) + (f" … (+{len(names) - limit})" if len(names) > limit else "")


def comparison_view(graph_name: str, cmp) -> Group:
    from ..clustering.fx_compare import RULES

    side = Table(title=Text(f"{graph_name}: torch.fx CapabilityBasedPartitioner vs xcviz (same support set)"),
                 title_justify="left", header_style="bold")
    side.add_column("FX partition")
    side.add_column("nodes", overflow="fold")
    side.add_column("xcviz cluster")
    side.add_column("nodes", overflow="fold")
    fx, xla = list(cmp.fx_partitions.items()), list(cmp.clusters.items())
    for k in range(max(len(fx), len(xla))):
        a = fx[k] if k < len(fx) else ("", [])
        b = xla[k] if k < len(xla) else ("", [])
        side.add_row(a[0], _names(a[1]), b[0], _names(b[1]))
    diff = Table(title=Text(f"Differences ({len(cmp.differences)})"), title_justify="left", header_style="bold")
    diff.add_column("rule")
    diff.add_column("nodes", overflow="fold")
    diff.add_column("fx / xcviz")
    diff.add_column("why", overflow="fold")
    for d in cmp.differences:
        diff.add_row(Text(d.rule, style="bold"), _names(d.nodes), " ".join(d.fx) + " / " + " ".join(d.xla),
                     RULES[d.rule] + (f": {d.detail}" if d.detail else ""))
    rules = sorted(cmp.rules)
    summary = Text(f"{len(fx)} FX partitions · {len(xla)} xcviz clusters · {len(cmp.differences)} differences"
                   + (f" ({', '.join(rules)})" if rules else ", none"))
    return Group(side, diff, summary)
