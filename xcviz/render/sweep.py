"""A sweep's rows and fallback-op table (analysis.sweep) as tables and CSV."""
from __future__ import annotations

import csv
import io
import re

from rich.console import Group
from rich.table import Table
from rich.text import Text

from .table_layout import fit
from .units import fmt_bytes, fmt_pct, fmt_speedup

CSV_COLUMNS = ["model", "config", "nodes", "clusters", "coverage", "coverage_flops", "boundary_bytes",
               "parameter_bytes", "speedup_estimate", "top_fallback_reasons", "error", "unbound_dims"]


def _reasons(r: dict) -> str:
    return ", ".join(f"{x['reason_code']}×{x['nodes']}" for x in r.get("top_fallback_reasons") or [])


def sweep_csv(rows: list[dict]) -> str:
    out = io.StringIO()
    w = _Neutralised(csv.writer(out, lineterminator="\n"))
    w.writerow(CSV_COLUMNS)
    for r in rows:
        w.writerow(["" if r.get(k) is None else _reasons(r) if k == "top_fallback_reasons" else
                    " ".join(r[k]) if k == "unbound_dims" else r[k] for k in CSV_COLUMNS])
    return out.getvalue()


class _Neutralised:
    """A csv writer whose every cell goes through csv_cell first."""

    def __init__(self, writer) -> None:
        self.writer = writer

    def writerow(self, row) -> None:
        self.writer.writerow([csv_cell(c) for c in row])


# a spreadsheet reads a cell starting with one of these as a formula (OWASP, CSV injection)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


def csv_cell(value):
    """A text cell that a spreadsheet would run as a formula, prefixed with a single quote (OWASP's advice).
    Numbers stay numbers: xcviz's own ints and floats, and a text that is only a plain number (-0.5), which a
    spreadsheet reads as a literal, never a formula (a file name, an error quoting a node name: the rest)."""
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def sweep_view(report: dict) -> Group:
    rows = report["rows"]
    configs = {r["config"] for r in rows}
    n_models = len({r["model"] for r in rows})
    t = Table(title=Text(f"Sweep ({n_models} model{'s' if n_models != 1 else ''} × {len(configs)} "
                         f"configuration{'s' if len(configs) != 1 else ''})"), title_justify="left", header_style="bold")
    params = any(r.get("parameter_bytes") is not None for r in rows)  # only where the cost model gives them
    unbound = any(r.get("unbound_dims") for r in rows)  # a model whose D and S stay unknown says why
    cols = ["model"] + (["config"] if len(configs) > 1 else []) + ["nodes", "clusters", "η", "η FLOPs", "D"] \
        + (["params"] if params else []) + ["S"] + (["unbound"] if unbound else []) + ["fallback reasons"]
    for col in cols:
        t.add_column(col, justify="left" if col in ("model", "config", "fallback reasons") else "right", overflow="fold")
    for r in rows:
        head = [Text(r["model"])] + ([Text(r["config"])] if len(configs) > 1 else [])
        if r["error"] is not None:
            t.add_row(*head, *[Text("")] * (len(cols) - len(head) - 1), Text(f"error: {r['error']}", style="red"))
            continue
        t.add_row(*head, f"{r['nodes']:,}", str(r["clusters"]), fmt_pct(r["coverage"]), fmt_pct(r["coverage_flops"]),
                  fmt_bytes(r["boundary_bytes"]), *([fmt_bytes(r["parameter_bytes"])] if params else []),
                  fmt_speedup(r["speedup_estimate"]),
                  *([Text(", ".join(r.get("unbound_dims") or []) or "-")] if unbound else []), Text(_reasons(r)))
    parts: list = [fit(t)]
    ops = report["fallback_ops"]
    if ops:
        f = Table(title=Text("Fallback ops across the models"), title_justify="left", header_style="bold")
        for col in (["config"] if len(configs) > 1 else []) + ["op", "models", "nodes"]:
            f.add_column(col, justify="right" if col in ("models", "nodes") else "left", overflow="fold")
        for o in ops:
            f.add_row(*([Text(o["config"])] if len(configs) > 1 else []), Text(o["op"]), str(o["models"]), str(o["nodes"]))
        parts += [Text(""), fit(f)]
    ok = len(rows) - report["failed"]
    parts += [Text(""), Text(f"{ok}/{len(rows)} analyses done" + (f", {report['failed']} failed" if report["failed"] else ""),
                             style="bold")]
    return Group(*parts)
