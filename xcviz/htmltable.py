"""Compact HTML tables for notebooks: what `_repr_html_` of xcviz's results returns (Jupyter, VS Code).

Generic (no knowledge of graphs), so every layer's result type can use it: every cell is escaped text, the
style is inline, nothing is fetched. Long tables are cut to `limit` rows with a line saying how many more."""
from __future__ import annotations

import html

STYLE = ("border-collapse:collapse;font:12px/1.4 -apple-system,Segoe UI,Helvetica,Arial,sans-serif;"
         "margin:2px 0 6px")
CELL = "padding:1px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #e4e4e4"


def _cell(tag: str, value, right: bool = False) -> str:
    align = ";text-align:right;font-variant-numeric:tabular-nums" if right else ""
    return f'<{tag} style="{CELL}{align}">{html.escape("" if value is None else str(value))}</{tag}>'


def table(heads: list[str], rows: list[list], *, numeric: set[int] = frozenset(), limit: int = 20,
          caption: str | None = None) -> str:
    """`rows` of cells under `heads`; columns in `numeric` right-aligned; more than `limit` rows are cut."""
    out = [f'<table style="{STYLE}">']
    if caption:
        out.append(f'<caption style="text-align:left;font-weight:bold;padding:2px 0">{html.escape(caption)}</caption>')
    if heads:
        out.append("<thead><tr>" + "".join(_cell("th", h, k in numeric) for k, h in enumerate(heads)) + "</tr></thead>")
    out.append("<tbody>")
    for r in rows[:limit]:
        out.append("<tr>" + "".join(_cell("td", v, k in numeric) for k, v in enumerate(r)) + "</tr>")
    if len(rows) > limit:
        out.append(f'<tr><td colspan="{max(1, len(heads))}" style="{CELL};color:#777">… {len(rows) - limit:,} more</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def pairs(rows: list[tuple[str, object]], caption: str | None = None) -> str:
    """A two-column (label, value) table: a summary."""
    return table([], [[k, v] for k, v in rows], caption=caption, limit=len(rows))
