"""The order clusters are listed in (--sort) and fallback nodes grouped by reason and op (--fallbacks grouped)."""
from __future__ import annotations

from collections import Counter

from rich.table import Table
from rich.text import Text

SORTS = ("file", "size", "bytes", "speedup", "name")
GROUP_ABOVE = 20  # --fallbacks auto: more fallback nodes than this are grouped


def cluster_order(details, sort: str | None) -> list[int]:
    """Positions of the clusters in listing order: file (as formed), size (most nodes first), bytes (most
    boundary bytes first; unknown last), speedup (highest first; unknown last), name (by first member's name)."""
    idx = list(range(len(details)))
    if sort in (None, "file"):
        return idx
    if sort == "size":
        return sorted(idx, key=lambda k: (-len(details[k].nodes), k))
    if sort == "bytes":
        def total(k):
            a, b = details[k].boundary_bytes_in, details[k].boundary_bytes_out
            return (a is None or b is None, -((a or 0) + (b or 0)), k)
        return sorted(idx, key=total)
    if sort == "speedup":
        return sorted(idx, key=lambda k: (details[k].speedup_estimate is None, -(details[k].speedup_estimate or 0), k))
    if sort == "name":
        return sorted(idx, key=lambda k: (details[k].nodes[0] if details[k].nodes else "", k))
    raise ValueError(sort)


def fallback_groups(graph, clustering) -> list[tuple[str, str, list[str]]]:
    """(reason, op, node names) per distinct reason and op, the largest group first."""
    groups: dict[tuple[str, str], list[str]] = {}
    for node, k, reason in zip(graph.nodes, clustering.cluster_of, clustering.reason):
        if k < 0:
            groups.setdefault((reason or "", node.op_type), []).append(node.name)
    count = Counter({key: len(v) for key, v in groups.items()})
    return [(r, op, groups[(r, op)]) for (r, op), _ in sorted(count.items(), key=lambda t: (-t[1], t[0]))]


def grouped_fallback_table(graph, clustering, limit: int | None = None, fallback_style: str = "") -> Table:
    groups = fallback_groups(graph, clustering)
    t = Table(title=Text("Fallback by reason and op (runs natively)"), title_justify="left", header_style="bold")
    for col in ("reason", "op", "nodes", "for example"):
        t.add_column(col, justify="right" if col == "nodes" else "left", overflow="fold")
    shown = groups if limit is None else groups[:limit]
    for reason, op, names in shown:
        more = f" … (+{len(names) - 3})" if len(names) > 3 else ""
        t.add_row(Text(reason), Text(op), f"{len(names):,}", Text(" ".join(names[:3]) + more, style=fallback_style))
    if len(shown) < len(groups):
        t.caption = f"{len(groups) - len(shown)} more groups (use --json for all)"
    return t
