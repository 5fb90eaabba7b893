"""`xcviz sweep`: many models (files or folders) × configurations, one row each, analysed across processes."""
from __future__ import annotations

import os
from typing import Annotated, Optional

import typer

from ..errors import XcvizError
from ..pipeline import AnalysisOptions
from .base import Json, Output, analysis_command
from .helpfmt import Command
from .output import emit_file, emit_json, emit_renderable
from .settings import describe, parse_settings, read_config

SUFFIXES = (".onnx", ".yaml", ".yml", ".json", ".xcir")


class GreedyConfigCommand(Command):
    """`--config a.yaml b.yaml` takes every word up to the next flag (as the issue's users write it):
    the words are rewritten as repeated --config before click parses them."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        out, greedy = [], False
        for word in args:
            if word == "--":
                greedy = False
            elif word.startswith("-"):
                greedy = word == "--config"
                if greedy:
                    continue
            elif greedy:
                out.append("--config")
            out.append(word)
        return super().parse_args(ctx, out)


def model_paths(paths: list[str]) -> list[tuple[str, str]]:
    """(path, name shown) of each model: files as given; folders walked for graph files (sorted, so rows
    come in a fixed order), named relative to the folder (short, and no absolute path in the output)."""
    found = []
    for p in paths:
        if os.path.isdir(p):
            for folder, dirs, files in os.walk(p):
                dirs.sort()
                found += [(os.path.join(folder, f), os.path.relpath(os.path.join(folder, f), p))
                          for f in sorted(files) if f.lower().endswith(SUFFIXES)]
        elif os.path.exists(p):
            found.append((p, p))
        else:
            raise XcvizError("no such file or folder", where=p)
    if not found:
        raise XcvizError("no graph files found", where=" ".join(paths), hint="sweep reads " + ", ".join(SUFFIXES))
    return found


def _fields(options: AnalysisOptions) -> dict:
    """The options as plain picklable fields (a worker process rebuilds them)."""
    return options.flat()


def analyse_model(path: str, label: str, fields: dict, configs: list[tuple[str, dict]]) -> list[dict]:
    """Every configuration of one model (loaded once); failures become error rows."""
    from ..pipeline import analyse, load_graph
    from ..analysis.sweep import error_row, sweep_row

    from ..cost.symbolic import free_dims
    from ..pipeline import bind_input_arrays, bind_present_dims

    base = AnalysisOptions(**fields)
    try:
        # each --dim binds only the models that have that dimension: one folder holds models of many shapes
        graph = load_graph(path, base.replace(dims={}))
        graph, skipped = bind_present_dims(graph, base.dims)
        if base.inputs is not None:  # (load_graph bound them before --dim: bind them again, they win)
            graph, _ = bind_input_arrays(graph, base.inputs)
    except XcvizError as e:
        return [error_row(label, name, str(e)) for name, _ in configs]
    except Exception as e:  # noqa: BLE001 - one model's surprise must not stop the survey
        return [error_row(label, name, f"internal error: {e.__class__.__name__}: {e}") for name, _ in configs]
    rows = []
    for name, settings in configs:
        try:
            a = analyse(graph, base.replace(**settings))
            rows.append(sweep_row(label, name, a.graph, a.clustering, a.stats)
                        | {"unbound_dims": free_dims(a.graph), "dims_not_in_model": skipped})
        except XcvizError as e:
            rows.append(error_row(label, name, str(e)))
        except Exception as e:  # noqa: BLE001
            rows.append(error_row(label, name, f"internal error: {e.__class__.__name__}: {e}"))
    return rows


@analysis_command(cls=GreedyConfigCommand)
def sweep(paths: Annotated[list[str], typer.Argument(metavar="PATH...", show_default=False,
                                                     help="graph files, or folders to search for them")],
          config: Annotated[Optional[list[str]], typer.Option("--config", metavar="FILE...", show_default=False,
                                                              help="YAML files of settings (strategy: greedy, ...), one configuration each")] = None,
          set_: Annotated[Optional[list[str]], typer.Option("--set", metavar="KEY=VALUE[,KEY=VALUE...]", show_default=False,
                                                            help="one configuration per --set (repeatable)")] = None,
          jobs: Annotated[int, typer.Option("--jobs", "-j", metavar="N", min=1, help="models analysed at once, each in its own process")] = 1,
          json: Json = False,
          csv: Annotated[bool, typer.Option("--csv", help="print the rows as CSV")] = False,
          output: Output = None, *, options: AnalysisOptions) -> Optional[int]:
    """Many models × configurations: one row each, a table of fallback ops across the models; exit 1 if any failed."""
    from ..analysis.sweep import sweep_report
    from ..render.sweep import sweep_csv, sweep_view

    configs = [(os.path.splitext(os.path.basename(c))[0], read_config(c)) for c in config or []]
    configs += [(describe(s), s) for s in (parse_settings([item], "--set") for item in set_ or [])]
    for _, s in configs:  # a bad setting is bad input (exit 2), said before any model is read
        options.replace(**s)
    configs = configs or [("default", {})]
    fmt = _format(json, csv, output)
    models = model_paths(paths)
    rows = _run(models, _fields(options), configs, jobs)
    report = sweep_report(rows)
    if fmt == "json":
        emit_json(report, output)
    elif fmt == "csv":
        emit_file(output, sweep_csv(rows)) if output else print(sweep_csv(rows), end="")
    else:
        emit_renderable(sweep_view(report), output)
    return 1 if report["failed"] else None


def _format(json: bool, csv: bool, output: str | None) -> str:
    suffix = os.path.splitext(output)[1].lower() if output else ""
    if json and csv:
        raise XcvizError("--json and --csv exclude each other")
    if suffix in (".json", ".csv"):
        if (json and suffix != ".json") or (csv and suffix != ".csv"):
            raise XcvizError(f"the format flag does not match the {suffix} file", where=output)
        return suffix[1:]
    if (json or csv) and suffix:
        raise XcvizError(f"--{'json' if json else 'csv'} does not write a {suffix} file", where=output)
    return "json" if json else "csv" if csv else "table"


def _run(models: list[tuple[str, str]], fields: dict, configs: list[tuple[str, dict]], jobs: int) -> list[dict]:
    from .output import LazyProgress

    bar = LazyProgress("sweep")
    results: dict[str, list[dict]] = {}
    try:
        if jobs == 1 or len(models) == 1:
            for i, (m, label) in enumerate(models):
                bar(i, len(models), label)
                results[m] = analyse_model(m, label, fields, configs)
        else:
            from concurrent.futures import ProcessPoolExecutor, as_completed

            with ProcessPoolExecutor(max_workers=min(jobs, len(models))) as pool:
                futures = {pool.submit(analyse_model, m, label, fields, configs): m for m, label in models}
                for done, f in enumerate(as_completed(futures), 1):
                    results[futures[f]] = f.result()
                    bar(done, len(models), os.path.basename(futures[f]))
        bar(len(models), len(models), "")
    finally:
        bar.close()
    return [row for m, _ in models for row in results[m]]
