"""`xcviz report`: one interactive, self-contained HTML page with the summary, tables, picture, node stories and replay."""
from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from ..errors import XcvizError
from ..pipeline import AnalysisOptions
from .base import GraphArg, Output, analyse, analysis_command
from .output import LazyProgress, console, emit_file
from .running import Native, Threads


@analysis_command
def report(graph: GraphArg, output: Output = None,
           validate: bool = typer.Option(False, "--validate", help="JIT-compile every cluster with JAX and add the measured speedup and error columns"),
           collapse: Optional[bool] = typer.Option(None, "--collapse/--expand", show_default=False,
                                                   help="up to 500 ops: open with one box per cluster / every node; above, the page opens by the model's scopes"),
           native: Native = None, threads: Threads = None, *, options: AnalysisOptions) -> None:
    """Write one HTML file (no network needed) to explore the clusters, fallbacks, node stories and the formation replay."""
    from ..fileio import check_target
    from ..render.report_html import build_report
    from ..render.tables import summary_line
    from ..runtime.native import apply_threads
    from .running import check_native

    check_native(native)
    threads, _ = apply_threads(threads)  # before JAX loads
    target = output or default_report_name(graph)
    if not target.lower().endswith((".html", ".htm")):
        raise XcvizError("xcviz report writes HTML", where=target, hint="name the file .html")
    check_target(target)   # before the analysis and layout, not after
    a = analyse(graph, options)
    check_target(target)   # after loading: writing over the input file is the error to give
    checks = None
    if validate:
        from ..runtime.validate import validate_graph

        progress = LazyProgress("compiling")
        try:
            from ..loaders.npz import read_npz

            # with --inputs the clusters run on those arrays, as `validate --inputs` runs them
            checks = validate_graph(a.graph, clustering=a.clustering, hardware=options.hardware, progress=progress,
                                    inputs=read_npz(options.inputs), native=native, threads=threads)
        finally:
            progress.close()
    emit_file(target, build_report(a.graph, a.clustering, a.stats, validation=checks, collapse=collapse))
    console(sys.stderr).print(summary_line(a.stats))


def default_report_name(source: str) -> str:
    """`<input file's stem>.report.html` in the current directory (two models never share it by graph name)."""
    stem = os.path.splitext(os.path.basename(source))[0] or "graph"
    return f"{stem}.report.html"
