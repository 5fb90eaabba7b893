"""`xcviz check`: a CI gate. Exit 0 when every expectation holds, 1 with one line per failure, 2 on bad input."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from ..errors import XcvizError, did_you_mean, node_hint
from ..pipeline import AnalysisOptions, split_list
from .base import GraphArg, analyse, analysis_command

GATES = "Expectations"


def _opt(flag: str, metavar: str, help: str):
    return typer.Option(flag, metavar=metavar, help=help, show_default=False, rich_help_panel=GATES)


@analysis_command
def check(graph: GraphArg,
          min_coverage: Annotated[Optional[str], _opt("--min-coverage", "FRACTION", "fail below this coverage η by ops (0.8 or 80%)")] = None,
          max_boundary_bytes: Annotated[Optional[str], _opt("--max-boundary-bytes", "SIZE", "fail when more activation bytes than this cross cluster boundaries per call (1MiB, 500kB, 4096); resident parameters are not counted")] = None,
          max_parameter_bytes: Annotated[Optional[str], _opt("--max-parameter-bytes", "SIZE", "fail when the resident parameters read across boundaries exceed this (1MiB, ...)")] = None,
          max_clusters: Annotated[Optional[int], _opt("--max-clusters", "N", "fail with more clusters than this")] = None,
          expect_cluster: Annotated[Optional[list[str]], _opt("--expect-cluster", "NODE,NODE[,...]", "these nodes must share one cluster (repeatable)")] = None,
          no_fallback_op: Annotated[Optional[list[str]], _opt("--no-fallback-op", "OP[,OP...]", "no node of this op may fall back (repeatable)")] = None,
          baseline: Annotated[Optional[str], _opt("--baseline", "REPORT.json", "a `cluster --json` report to compare with")] = None,
          max_regression: Annotated[str, typer.Option("--max-regression", metavar="PERCENT", rich_help_panel=GATES,
                                                       help="with --baseline: fail when a metric is this much worse")] = "0%",
          junit: Annotated[Optional[str], typer.Option("--junit", metavar="FILE", show_default=False,
                                                       help="also write the results as JUnit XML for CI systems")] = None,
          *, options: AnalysisOptions) -> Optional[int]:
    """A CI gate: exit 1 with one line per failed expectation (and its reason), 0 when all hold."""
    from ..analysis.check import Expectations, evaluate, parse_bytes, parse_fraction

    e = Expectations(
        min_coverage=None if min_coverage is None else parse_fraction(min_coverage, "--min-coverage"),
        max_boundary_bytes=None if max_boundary_bytes is None else parse_bytes(max_boundary_bytes, "--max-boundary-bytes"),
        max_parameter_bytes=None if max_parameter_bytes is None else parse_bytes(max_parameter_bytes, "--max-parameter-bytes"),
        max_clusters=max_clusters, max_regression=parse_fraction(max_regression, "--max-regression"),
        together=[list(dict.fromkeys(v.strip() for v in g.split(",") if v.strip())) for g in expect_cluster or []],
        no_fallback_ops=sorted(split_list(no_fallback_op)))
    if max_clusters is not None and max_clusters < 0:
        raise XcvizError(f"--max-clusters {max_clusters}: not a count", hint="write --max-clusters 4")
    if baseline is not None:
        from .diff import read_report

        e.baseline, e.baseline_label = read_report(baseline), baseline
    a = analyse(graph, options)  # a broken graph file is the first thing to say
    if not (e.min_coverage is not None or e.max_boundary_bytes is not None or max_clusters is not None
            or e.max_parameter_bytes is not None
            or e.together or e.no_fallback_ops or baseline):
        raise XcvizError("check has nothing to check", where=graph,
                         hint="give --min-coverage 0.8, --max-clusters N, --expect-cluster a,b, ...")
    _check_names(a.graph, e, graph)
    results = evaluate(a.graph, a.clustering, a.stats, e)
    if junit:
        from ..render.check import junit_xml
        from .output import emit_file

        emit_file(junit, junit_xml(results, f"xcviz check {graph}"))
    _print(results)
    return 1 if any(not r.ok for r in results) else None


def _check_names(g, e, path: str) -> None:
    """Names the expectations use must exist: a typo would otherwise pass or fail for the wrong reason."""
    for group in e.together:
        for name in group:
            if name not in g.index:
                raise XcvizError(f"--expect-cluster: no node named {name!r}", where=path,
                                 hint=node_hint(name, g.index))
    from ..ops import REGISTRY

    present = {n.op_type for n in g.nodes} | {n.op for n in g.nodes}
    for op in e.no_fallback_ops:
        if op not in present and REGISTRY.get(op) is None:
            every = present | {n for d in REGISTRY for n in (d.name, *d.aliases)}
            raise XcvizError(f"--no-fallback-op: unknown op {op!r}", where=path,
                             hint=did_you_mean(op, every) or "see `xcviz ops`")


def _print(results) -> None:
    import sys

    from rich.text import Text

    from ..render.safe_text import printable
    from .output import console

    c = console()
    for r in results:
        line = Text("ok   " if r.ok else "FAIL ", style="green" if r.ok else "bold red")
        line.append(printable(f"{r.name}: {r.message}"))
        c.print(line, soft_wrap=True)
    failed = sum(not r.ok for r in results)
    c.print(Text(f"{len(results) - failed}/{len(results)} expectations hold", style="bold"), soft_wrap=True)
    sys.stdout.flush()
