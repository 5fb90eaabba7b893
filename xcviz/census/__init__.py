"""`xcviz census`: many models (files, folders, timm and transformers architectures) exported, analysed and ranked.

`census(sources, output)` runs the models not yet in the results file and returns every row; `ranking(rows)`
says which ops block XLA on how many architectures and what supporting each would buy."""
from __future__ import annotations

from typing import Callable

from .ranking import ranking, summary
from .results import comparable, read_rows, sort_rows
from .sources import Task, expand
from .worker import Settings

__all__ = ["census", "ranking", "summary", "read_rows", "sort_rows", "comparable", "expand", "Task", "Settings"]


def census(sources: list[str], output: str, *, options=None, validate: bool = False, timeout_s: float | None = None,
           executor: str = "local", jobs: int = 1, scheduler: str | None = None, retries: int = 1,
           resume: bool = False, retry_failed: bool = False, threads: int = 1, report_dir: str | None = None,
           on_start: Callable[[int, int], None] | None = None, on_row: Callable[[dict], None] | None = None) -> list[dict]:
    """Run the census into `output` (JSON Lines, a row appended as each model finishes) and return all its
    rows, sorted by source and model. `resume` skips the models the file already holds (crashed ones are
    run again; with `retry_failed` every row not ok); `resume` without sources runs nothing and returns
    the file's rows. `report_dir`: each model's `xcviz report` page
    is written there too (by the worker: the folder must be one the workers can write). `on_start(todo, done)` and `on_row(row)` are for a progress display."""

    from ..pipeline import AnalysisOptions
    from . import executors
    from .results import ResultsFile

    executors.check(executor, scheduler)
    options = options or AnalysisOptions()
    fields = options.flat()
    settings = Settings(options=fields, validate=validate, timeout_s=timeout_s, threads=threads, report_dir=report_dir)
    if not sources and not resume:
        from ..errors import XcvizError

        raise XcvizError("no sources", hint="name files, folders, timm:PATTERN or hf:ARCH; or --resume alone to "
                         "report on the results file as it is")
    tasks = expand(sources)
    results = ResultsFile(output, resume, retry_failed)
    try:
        todo = [t for t in tasks if t.key not in results.done]
        if on_start:
            on_start(len(todo), len(tasks) - len(todo))

        def written(row: dict) -> None:
            results.write(row)
            if on_row:
                on_row(row)

        executors.run(todo, settings, written, executor=executor, jobs=jobs, scheduler=scheduler, retries=retries)
    finally:
        results.close()
    if not sources:   # --resume alone: the whole file
        return sort_rows(results.rows)
    wanted = {t.key for t in tasks}
    return sort_rows([r for r in results.rows if (r["source"], r["model"]) in wanted])
