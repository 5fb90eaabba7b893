"""`xcviz census`: many models (files, folders, timm:PATTERN, hf:ARCH) exported and analysed on a process pool or Dask."""
from __future__ import annotations

import os
import sys
from typing import Annotated, Optional

import typer

from ..errors import XcvizError
from ..pipeline import AnalysisOptions
from .base import Json, analysis_command
from .helpfmt import complete_from
from .output import console, emit_file, emit_json, emit_renderable

EXECUTORS = ("local", "dask")   # = census.executors.EXECUTORS (not imported: keeps --help fast)


@analysis_command
def census(output: Annotated[str, typer.Option("--output", "-o", metavar="FILE.jsonl", show_default=False,
                                               help="the results: one JSON object per model, appended as each finishes")],
           sources: Annotated[Optional[list[str]], typer.Argument(metavar="SOURCE...", show_default=False,
                                                                  help="graph files, folders, timm:PATTERN (timm:resnet*) or hf:ARCH (hf:llama, hf:*bert*); none with --resume: report on FILE.jsonl as it is")] = None,
           resume: Annotated[bool, typer.Option("--resume", help="continue the census in FILE.jsonl: skip the models it holds")] = False,
           retry_failed: Annotated[bool, typer.Option("--retry-failed", help="with --resume: run the models whose rows failed (error, timeout) again")] = False,
           executor: Annotated[str, typer.Option("--executor", metavar="[local|dask]", autocompletion=complete_from(EXECUTORS),
                                                 help="local: a pool of worker processes; dask: a Dask distributed cluster")] = "local",
           scheduler: Annotated[Optional[str], typer.Option("--scheduler", metavar="ADDRESS", show_default=False,
                                                            help="the Dask scheduler (tcp://host:8786) [a LocalCluster of --jobs workers]")] = None,
           jobs: Annotated[int, typer.Option("--jobs", "-j", metavar="N", min=1, help="worker processes (local pool or LocalCluster)")] = 2,
           retries: Annotated[int, typer.Option("--retries", metavar="N", min=0, help="dask: times a task is rerun when its worker dies")] = 1,
           timeout: Annotated[Optional[float], typer.Option("--timeout", metavar="SECONDS", min=1, show_default=False,
                                                            help="give up on a model after this long (a timeout row) [no limit]")] = None,
           threads: Annotated[int, typer.Option("--threads", metavar="N", min=1, help="torch threads per worker")] = 1,
           validate: Annotated[bool, typer.Option("--validate", help="JIT-compile and run every cluster with JAX: measured speedup")] = False,
           report: Annotated[Optional[str], typer.Option("--report", metavar="FILE.html", show_default=False,
                                                         help="write the census report: one self-contained HTML page")] = None,
           model_reports: Annotated[bool, typer.Option("--model-reports", help="with --report: also each model's own `xcviz report` page, in FILE.models/ next to it, linked from its section")] = False,
           top: Annotated[int, typer.Option("--top", metavar="N", min=1, help="ops shown in the ranking table")] = 20,
           json: Json = False, *, options: AnalysisOptions) -> Optional[int]:
    """Which architectures XLA compiles whole, which ops block the rest, and what supporting each would buy.

    Every model is built from its library's own config with random weights (nothing is downloaded; big
    ones shrunk or on the meta device), exported with torch.export in a worker process, clustered and
    costed; each blocking op is tried allowed. Errors are rows; --resume continues a stopped census.

    Example: xcviz census timm:resnet* hf:llama hf:bert -o zoo.jsonl --report zoo.html"""
    from .. import census as lib

    if not output.lower().endswith((".jsonl", ".ndjson")):
        raise XcvizError("the census results are JSON Lines", where=output, hint="name the file .jsonl")
    if report is not None and not report.lower().endswith((".html", ".htm")):
        raise XcvizError("--report writes HTML", where=report, hint="name the file .html")
    if retry_failed and not resume:
        raise XcvizError("--retry-failed continues a census", hint="add --resume")
    if executor not in EXECUTORS:
        from ..errors import did_you_mean

        raise XcvizError(f"--executor {executor!r}: not one of {', '.join(EXECUTORS)}", hint=did_you_mean(executor, EXECUTORS))
    if model_reports and report is None:
        raise XcvizError("--model-reports goes with --report", hint="add --report census.html")
    folder = None
    if report is not None:
        from ..fileio import check_target

        check_target(report)
        folder = os.path.splitext(report)[0] + ".models" if model_reports else None
    bar = Bar()
    try:
        rows = lib.census(sources or [], output, options=options, validate=validate, timeout_s=timeout, executor=executor,
                          jobs=jobs, scheduler=scheduler, retries=retries, resume=resume, retry_failed=retry_failed, threads=threads, report_dir=folder,
                          on_start=bar.start, on_row=bar.row)
    finally:
        bar.close()
    ranked, summary = lib.ranking(rows), lib.summary(rows)
    if report is not None:
        from ..render.census_html import census_page, model_report_name

        links = {}
        for r in rows if folder else []:   # the pages there, of this run or an earlier one
            name = model_report_name(r["source"], r["model"])
            if os.path.exists(os.path.join(folder, name)):
                links[(r["source"], r["model"])] = f"{os.path.basename(folder)}/{name}"
        emit_file(report, census_page(rows, ranked, summary, validated=validate, links=links))
    if json:
        from ..render.report_json import SCHEMA_VERSION

        emit_json({"schema_version": SCHEMA_VERSION, "results": output, "summary": summary, "ranking": ranked}, None)
    else:
        from ..render.census import census_view

        emit_renderable(census_view(rows, ranked, summary, top=top), None)
    return None


class Bar:
    """The census's progress: a rich bar on a terminal's stderr, one plain line per model elsewhere (a log)."""

    def __init__(self):
        self.tty = sys.stderr.isatty()
        self.progress = self.task = None
        self.done = self.total = self.failed = 0

    def start(self, todo: int, done: int) -> None:
        self.total = todo
        if done:
            console(sys.stderr).print(f"resuming: {done} models done, {todo} to go", markup=False)
        if self.tty and todo:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(TextColumn("census"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                                     TimeElapsedColumn(), console=console(sys.stderr), transient=True)
            self.progress.start()
            self.task = self.progress.add_task("", total=todo)

    def row(self, row: dict) -> None:
        self.done += 1
        self.failed += row.get("status") != "ok"
        what = f"{row['model']} ({row.get('status')})" + (f", {self.failed} failed" if self.failed else "")
        if self.progress is not None:
            self.progress.update(self.task, completed=self.done, description=what)
        elif not self.tty:
            cov = row.get("coverage")
            print(f"[{self.done}/{self.total}] {row['source']} {row['model']}: {row.get('status')}"
                  + (f", coverage {cov:.1%}" if cov is not None else f": {row.get('error')}"), file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
