"""Symbolic sizes in reports: D and FLOPs as formulas in the free dims, D's lower bound, unknown edges named."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..cost.symbolic import SymbolicCost, format_bytes_expr, format_count_expr, free_dims, symbolic_cost
from .units import fmt_bytes

if TYPE_CHECKING:
    from rich.text import Text

_last: list = [None, None]  # (stats, its SymbolicCost): the table and the summary line ask for the same one


def needed(graph, stats) -> bool:
    """Formulas say more than the numbers only when a dimension is free or some size is unknown."""
    return stats.boundary_bytes is None or bool(free_dims(graph))


def cost_of(graph, clustering, stats) -> SymbolicCost | None:
    if not needed(graph, stats):
        return None
    if _last[0] is not stats:
        _last[:] = [stats, symbolic_cost(graph, clustering)]
    return _last[1]


def json_keys(graph, clustering, stats) -> dict:
    """The `stats` keys of docs/json-schema.md ("Symbolic sizes"); cheap when everything is bound."""
    s = cost_of(graph, clustering, stats)
    if s is None:
        d = stats.boundary_bytes
        return {"free_dims": [], "boundary_bytes_expr": str(d), "boundary_bytes_min": d,
                "unknown_edges": {"count": 0, "first": []}, "flops_expr": None, "flops_clustered_expr": None}
    return s.as_json()


def _edges_text(s: SymbolicCost) -> str:
    more = f", … {s.unknown_edges - len(s.unknown_edge_names)} more" if s.unknown_edges > len(s.unknown_edge_names) else ""
    return f"{s.unknown_edges} boundary edge{'s' if s.unknown_edges != 1 else ''} of unknown size: " \
           f"{', '.join(s.unknown_edge_names)}{more}"


def rows(graph, clustering, stats) -> list[tuple[str, str]]:
    """Extra rows of the stats table: D and FLOPs as formulas, D's lower bound, unknown edges."""
    s = cost_of(graph, clustering, stats)
    if s is None:
        return []
    out = []
    if s.free_dims:
        out += [("boundary bytes D (formula)", format_bytes_expr(s.boundary_bytes, fmt_bytes)),
                ("FLOPs (formula)", format_count_expr(s.flops))]
    if s.unknown_edges or s.free_dims:
        out.append(("boundary bytes D ≥", fmt_bytes(s.boundary_bytes_min)))
    if s.unknown_edges:
        out.append(("unknown-size edges", _edges_text(s)))
    return out


def hint(graph, clustering, stats) -> list[Text]:
    """Under the summary line: the formula for D while dims are free, the bound and the edges when unknown."""
    from rich.text import Text  # (here: `stats --json` needs no rich)

    s = cost_of(graph, clustering, stats)
    if s is None:
        return []
    lines = []
    if s.free_dims:
        example = " ".join(f"--dim {d}=1" for d in s.free_dims[:3])
        lines.append(Text(f"D = {format_bytes_expr(s.boundary_bytes, fmt_bytes)}"
                          f"{' + unknown' if s.unknown_edges else ''}; bind {', '.join(s.free_dims)} for numbers: "
                          f"try {example}", style="dim"))
    if s.unknown_edges:
        lines.append(Text(f"D ≥ {fmt_bytes(s.boundary_bytes_min)}; {_edges_text(s)}", style="dim"))
    return lines
