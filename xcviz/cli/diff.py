"""`xcviz diff`: what changed, and why, between two configurations, two versions of a model, or two reports."""
from __future__ import annotations

import json as jsonlib
import os
from typing import Annotated, Optional

import typer

from ..errors import XcvizError
from ..pipeline import AnalysisOptions
from .base import Json, Output, analyse, analysis_command
from .output import emit_json, emit_renderable, wants_json
from .settings import apply, describe, parse_settings

Graphs = Annotated[Optional[list[str]], typer.Argument(metavar="GRAPH [GRAPH_B]", show_default=False,
                                                       help="one graph (compare --a with --b) or two versions of a model (nodes matched by name)")]
SideOpt = "KEY=VALUE[,KEY=VALUE...]"


def _analysed_side(label: str, a):
    from ..analysis.diff import side_from_analysis

    return side_from_analysis(label, a.graph, a.clustering, a.stats)


def read_report(path: str):
    """A `cluster --json` report as a diff side."""
    from ..analysis.diff import side_from_report
    from ..fileio import protect

    if not os.path.isfile(path):
        raise XcvizError("report not found", where=path, hint="write one with `xcviz cluster GRAPH --json -o report.json`")
    protect(path)
    try:
        data = jsonlib.loads(open(path, encoding="utf-8").read())
        return side_from_report(path, data)
    except (ValueError, KeyError, TypeError, AttributeError):
        raise XcvizError("not a cluster report (schema_version 1)", where=path,
                         hint="write one with `xcviz cluster GRAPH --json -o report.json`") from None


def parse_range(text: str) -> list[int]:
    """'0..8' -> [0, 1, ..., 8]; '1,2,4' -> [1, 2, 4]."""
    try:
        if ".." in text:
            lo, hi = (int(x) for x in text.split("..", 1))
            values = list(range(lo, hi + 1))
        else:
            values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 0:
        raise XcvizError(f"--sweep-min {text!r}: not a range of sizes", hint="write --sweep-min 0..8 or --sweep-min 1,2,4")
    return values


@analysis_command
def diff(graphs: Graphs = None,
         a: Annotated[Optional[list[str]], typer.Option("--a", metavar=SideOpt, show_default=False,
                                                        help="side A's clustering settings over the shared flags, e.g. strategy=greedy")] = None,
         b: Annotated[Optional[list[str]], typer.Option("--b", metavar=SideOpt, show_default=False,
                                                        help="side B's settings, e.g. strategy=mark,min_cluster_size=1")] = None,
         a_report: Annotated[Optional[str], typer.Option("--a-report", metavar="FILE", show_default=False,
                                                         help="side A from a `cluster --json` report")] = None,
         b_report: Annotated[Optional[str], typer.Option("--b-report", metavar="FILE", show_default=False,
                                                         help="side B from a `cluster --json` report")] = None,
         what_if_allow: Annotated[Optional[list[str]], typer.Option("--what-if-allow", metavar="OP", show_default=False,
                                                                    help="B = A with this op supported")] = None,
         what_if_deny: Annotated[Optional[list[str]], typer.Option("--what-if-deny", metavar="OP", show_default=False,
                                                                   help="B = A without this op")] = None,
         sweep_min: Annotated[Optional[str], typer.Option("--sweep-min", metavar="LO..HI", show_default=False,
                                                          help="one row per minimum cluster size, each compared with A")] = None,
         exit_code: Annotated[bool, typer.Option("--exit-code", help="exit 1 when A and B differ, 0 when they are the same (as git diff)")] = False,
         json: Json = False, output: Output = None,
         limit: int = typer.Option(200, metavar="N", help="rows per table (all rows with --json)"), *,
         options: AnalysisOptions) -> Optional[int]:
    """What changed between two clusterings: metrics with deltas, clusters matched, moved nodes and why."""
    from ..analysis.diff import diff_report

    graphs = graphs or []
    if a_report or b_report:
        if not (a_report and b_report) or graphs:
            raise XcvizError("--a-report and --b-report go together, without a graph",
                             hint="xcviz diff --a-report A.json --b-report B.json")
        side_a, side_b = read_report(a_report), read_report(b_report)
    else:
        if not 1 <= len(graphs) <= 2:
            raise XcvizError("diff takes one graph (and --a/--b) or two graphs",
                             hint="xcviz diff GRAPH --a strategy=greedy --b strategy=mark, or xcviz diff A.onnx B.onnx")
        sa, sb = parse_settings(a, "--a"), parse_settings(b, "--b")
        opts_a = apply(options, sa)
        sb = _what_if(sb, opts_a, what_if_allow, what_if_deny)
        opts_b = apply(options, sb)
        first = analyse(graphs[0], opts_a)
        if sweep_min is not None:
            return _sweep_min(graphs[0], first, opts_a, parse_range(sweep_min), json, output)
        if len(graphs) == 1 and not sb:
            raise XcvizError("nothing to compare: B's settings equal A's",
                             hint="give --b KEY=VALUE, --what-if-allow OP, --what-if-deny OP or --sweep-min 0..8")
        second = analyse(graphs[-1], opts_b) if len(graphs) == 2 else analyse(first.graph, opts_b)
        label_a = graphs[0] + ("" if len(graphs) == 2 and not sa else f" ({describe(sa)})")
        label_b = graphs[-1] + ("" if len(graphs) == 2 and not sb else f" ({describe(sb)})")
        side_a, side_b = _analysed_side(label_a, first), _analysed_side(label_b, second)
    report = diff_report(side_a, side_b)
    if wants_json(json, output):
        emit_json(report, output)
    else:
        from ..render.diff_view import diff_view

        emit_renderable(diff_view(report, side_a.clusters, side_b.clusters, limit=limit), output)
    return 1 if exit_code and not report["same"] else None


def _what_if(settings: dict, opts_a: AnalysisOptions, allow: list[str] | None, deny: list[str] | None) -> dict:
    from ..pipeline import split_list

    allow_ops, deny_ops = split_list(allow), split_list(deny)
    if not (allow_ops or deny_ops):
        return settings
    out = dict(settings)
    base_allow = out.get("allow", opts_a.allow)
    base_deny = out.get("deny", opts_a.deny)
    out["allow"] = frozenset(base_allow) - deny_ops | allow_ops
    out["deny"] = frozenset(base_deny) - allow_ops | deny_ops
    return out


def _sweep_min(path: str, first, opts_a: AnalysisOptions, values: list[int], json: bool, output: str | None) -> None:
    from ..analysis.diff import diff_report, side_from_analysis
    from ..pipeline import analyse as run_pipeline
    from ..render.diff_view import sweep_min_view

    side_a = side_from_analysis(path, first.graph, first.clustering, first.stats)
    rows = []
    for value in values:
        x = run_pipeline(first.graph, opts_a.replace(min_cluster_size=value))
        report = diff_report(side_a, side_from_analysis(path, x.graph, x.clustering, x.stats))
        rows.append({"min_cluster_size": value, "stats": report["b"]["stats"], "ari": report["ari"]})
    if wants_json(json, output):
        from ..render.report_json import SCHEMA_VERSION

        emit_json({"schema_version": SCHEMA_VERSION, "a": {"label": path, "options": side_a.options, "stats": side_a.stats},
                   "sweep": rows}, output)
    else:
        emit_renderable(sweep_min_view(rows), output)
