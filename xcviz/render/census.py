"""The census in the terminal: the ops that block XLA (ranked), the failures, and a one-line summary."""
from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from .table_layout import fit
from .units import fmt_pct, fmt_speedup

FAILURES_SHOWN = 15


def gain_pct(x: float | None) -> str:
    """A coverage gain in percentage points (`+3.2 pp`)."""
    return "unknown" if x is None else f"+{100 * x:.1f} pp"


def gain_speedup(x: float | None) -> str:
    return "unknown" if x is None else f"{x:+.2f}×"


def summary_text(s: dict) -> str:
    others = ", ".join(f"{n} {k}" for k, n in s["statuses"].items() if k != "ok")
    return (f"{s['ok']}/{s['models']} models analysed" + (f" ({others})" if others else "")
            + f" · {s['whole']} compile whole · {s['blocked']} blocked by an op"
            + (f" · mean coverage {fmt_pct(s['mean_coverage'])}" if s["mean_coverage"] is not None else "")
            + (f" · mean est. speedup {fmt_speedup(s['mean_est_speedup'])}" if s["mean_est_speedup"] is not None else "")
            + (f" · mean measured speedup {fmt_speedup(s['mean_measured_speedup'])}" if s["mean_measured_speedup"] is not None else ""))


def census_view(rows: list[dict], ranked: list[dict], summary: dict, top: int = 20) -> Group:
    parts: list = []
    if ranked:
        t = Table(title=Text(f"Ops that block XLA ({len(ranked)}; supporting one alone, re-clustered)"),
                  title_justify="left", header_style="bold")
        for col in ("rank", "op", "why", "models", "nodes", "Δ coverage", "Δ est. speedup", "then whole"):
            t.add_column(col, justify="left" if col in ("op", "why") else "right", overflow="fold")
        for e in ranked[:top]:
            t.add_row(str(e["rank"]), Text(e["op"]), Text(", ".join(e.get("why", []))), str(e["models"]), f"{e['nodes']:,}", gain_pct(e["coverage_gain"]),
                      gain_speedup(e["speedup_gain"]), str(e["whole_if_supported"]))
        parts.append(fit(t))
        if len(ranked) > top:
            parts.append(Text(f"… {len(ranked) - top} more ops (--top N, or --report for all)"))
    failed = [r for r in rows if r.get("status") != "ok"]
    if failed:
        f = Table(title=Text(f"Failed ({len(failed)})"), title_justify="left", header_style="bold")
        for col in ("source", "model", "status", "stage", "error"):
            f.add_column(col, overflow="fold")
        for r in failed[:FAILURES_SHOWN]:
            f.add_row(Text(r["source"]), Text(r["model"]), Text(str(r.get("status"))), Text(str(r.get("stage") or "")),
                      Text(str(r.get("error") or ""), style="red"))
        parts += [Text(""), fit(f)]
        if len(failed) > FAILURES_SHOWN:
            parts.append(Text(f"… {len(failed) - FAILURES_SHOWN} more failures (in the results file and the report)"))
    parts += [Text(""), Text(summary_text(summary), style="bold")]
    return Group(*parts)
