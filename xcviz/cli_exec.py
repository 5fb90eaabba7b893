"""The execution commands: `validate` (JAX vs native per cluster), `hlo` (a cluster's IR), `run` (whole graph)."""
from __future__ import annotations

import os
import sys
import time
from typing import Annotated, Optional

import typer

from .cli_common import GraphArg, Json, Output, analyse, analysis_command, emit_json, emit_renderable
from .errors import XcvizError

Inputs = Annotated[Optional[str], typer.Option("--inputs", help="an .npz file with one array per graph input (by name)", show_default=False)]
Seed = Annotated[int, typer.Option("--seed", help="seed for random inputs not given in --inputs")]
MaxElements = Annotated[int, typer.Option(
    "--max-elements", min=1, help="refuse to generate random inputs with more elements than this in all (a --dim typo "
    "should not exhaust memory); inputs given in --inputs are not limited")]
DEFAULT_MAX_ELEMENTS = 50_000_000  # = runtime.inputs.DEFAULT_MAX_ELEMENTS (not imported: keeps --help fast)
Repeats = Annotated[Optional[int], typer.Option("--repeats", help="timed repeats after warm-up [adaptive, ~0.2 s per measurement]", show_default=False)]


class NpzInputs(dict):
    """Arrays read from an .npz file; `source` (its path) becomes the `where` of errors about them."""

    source: str | None = None


def read_npz(path: str | None) -> dict | None:
    if path is None:
        return None
    import numpy as np

    from .fileio import protect

    if not os.path.isfile(path):
        raise XcvizError("inputs file not found", where=path, hint="write one with numpy.savez(path, x=...)")
    protect(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = NpzInputs({k: data[k] for k in data.files})
    except (ValueError, OSError, EOFError) as e:
        raise XcvizError(f"not a readable .npz file ({e.__class__.__name__}: {e})"[:300], where=path,
                         hint="write it with numpy.savez; object arrays are refused") from None
    arrays.source = path
    return arrays


class LazyProgress:
    """A rich progress bar on stderr that appears only once work has taken more than `delay` seconds."""

    def __init__(self, label: str, delay: float = 0.5):
        self.label, self.delay, self.start, self.bar, self.task = label, delay, time.perf_counter(), None, None

    def __call__(self, done: int, total: int, what: str) -> None:
        if self.bar is None and time.perf_counter() - self.start > self.delay and done < total:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            from .cli_common import console

            self.bar = Progress(TextColumn(self.label), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                                TimeElapsedColumn(), console=console(sys.stderr), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(what, total=total)
        if self.bar is not None:
            self.bar.update(self.task, completed=done, description=what)
            if done >= total:
                self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def clean(data):
    """JSON has no NaN/Inf: non-finite floats become None (shown as unknown)."""
    import math

    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: clean(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [clean(v) for v in data]
    return data


def _fmt(v, spec: str = ".2f", none: str = "-") -> str:
    return none if v is None else format(v, spec)


def ops_summary(ops: dict[str, int], width: int = 28) -> str:
    """'Conv×8, Add×3 …+4': most frequent first, as many as fit in `width`, then how many kinds are left."""
    items = sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))
    parts: list[str] = []
    for k, (name, n) in enumerate(items):
        part = f"{name}×{n}" if n > 1 else name
        rest = len(items) - k - 1
        if len(", ".join(parts + [part])) + (len(f" …+{rest}") if rest else 0) > width:
            break
        parts.append(part)
    if not parts and items:  # even the first op is too long: cut its name
        name, n = items[0]
        tail = (f"×{n}" if n > 1 else "") + (f" …+{len(items) - 1}" if len(items) > 1 else "")
        return name[:max(1, width - len(tail) - 1)] + "…" + tail
    text = ", ".join(parts) if parts else "-"
    return text + (f" …+{len(items) - len(parts)}" if len(parts) < len(items) else "")


VALIDATE_COLUMNS = ("cluster", "ops", "kernels", "temp", "compile", "native", "XLA", "speedup", "est.", "max err",
                    "status")


def validate_table(report, width: int = 120):
    """One row per cluster, fitting `width` columns (100-120 and up): the ops column gets what the numbers
    leave, numbers are right-aligned, times in ms; failures are spelled out under the table."""
    from rich import box
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    from .render.units import fmt_bytes as human_bytes

    rows, problems = [], []
    for c in report.clusters:
        temp = c.memory.get("temp_bytes") if c.memory else None
        rows.append([c.id, c.ops, f"{c.kernels_before}→{_fmt(c.kernels_after, 'd')}",
                     "-" if temp is None else human_bytes(temp),
                     "cached" if c.cache_hit else _fmt(c.compile_ms, ".0f"), _ms(c.native_ms), _ms(c.xla_ms),
                     _fmt(c.speedup_measured, ".2f") + ("×" if c.speedup_measured else ""),
                     _fmt(c.speedup_estimate, ".2f") + ("×" if c.speedup_estimate else ""),
                     _fmt(c.max_rel_error, ".1e"), c.status])
        if c.status != "ok":
            problems.append(f"{c.id} {c.status}: {c.message}")
    gap = 2 if width >= 110 else 1
    others = sum(max([cell_len(h)] + [cell_len(r[i]) for r in rows]) for i, h in enumerate(VALIDATE_COLUMNS) if i != 1)
    ops_width = max(12, min(40, width - others - gap * (len(VALIDATE_COLUMNS) - 1)))
    ok = sum(c.status == "ok" for c in report.clusters)
    t = Table(title=Text(f"validate {report.graph}: {ok}/{len(report.clusters)} clusters ok · {report.cache['compiles']}"
                         f" compiles, {report.cache['hits']} cache hits · times in ms (median after warm-up)"),
              title_justify="left", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False,
              padding=(0, gap - 1 if gap > 1 else 0), collapse_padding=True, show_edge=False)
    for i, col in enumerate(VALIDATE_COLUMNS):
        t.add_column(col, justify="left" if i in (0, 1, len(VALIDATE_COLUMNS) - 1) else "right", no_wrap=True,
                     overflow="ellipsis")
    for r in rows:
        r[1] = ops_summary(r[1], ops_width)
        t.add_row(*r[:-1], Text(r[-1], style=None if r[-1] == "ok" else "red"))
    lines = problems + ([f"--auto-fallback denied: {', '.join(report.denied)} ({report.rounds} rounds)"]
                        if report.denied else [])
    lines.append("max err = max |XLA - native| / max |native|; --json has every op and the absolute error")
    t.caption = Text("\n".join(lines))
    t.caption_justify = "left"
    return t


def _ms(v: float | None) -> str:
    """Milliseconds with 3-4 significant digits: 0.0123, 0.294, 20.87, 1899."""
    if v is None:
        return "-"
    return f"{v:.4f}" if v < 0.1 else f"{v:.3f}" if v < 10 else f"{v:.2f}" if v < 100 else f"{v:.0f}"


@analysis_command
def validate(graph: GraphArg, inputs: Inputs = None, seed: Seed = 0, auto_fallback: bool = typer.Option(
                 False, "--auto-fallback", help="deny the ops of failing clusters and cluster again until all pass"),
             repeats: Repeats = None, max_elements: MaxElements = DEFAULT_MAX_ELEMENTS, json: Json = False,
             output: Output = None, *, analysis: dict) -> None:
    """JIT-compile each kept cluster with JAX: kernels, memory, compile time, numerics and speed vs native."""
    from .runtime.validate import validate_graph

    g, c, _ = analyse(graph, **analysis)
    hardware = analysis["hardware"]
    progress = LazyProgress("compiling")
    try:
        report = validate_graph(g, clustering=c, inputs=read_npz(inputs), seed=seed, hardware=hardware,
                                repeats=repeats, progress=progress, auto_fallback=auto_fallback,
                                max_elements=max_elements)
    finally:
        progress.close()
    if json:
        emit_json(clean(report.to_json()), output)
    else:
        from .cli_common import console

        emit_renderable(validate_table(report, 120 if output else console().width), output)
    if not report.ok:
        bad = next(x for x in report.clusters if x.status != "ok")
        raise XcvizError(f"{sum(x.status != 'ok' for x in report.clusters)} cluster(s) failed validation; first: "
                         f"{bad.id} {bad.status}", hint="rerun with --auto-fallback to deny their ops", code=1)


@analysis_command
def hlo(graph: GraphArg, cluster: str = typer.Option(..., "--cluster", help="cluster id (cluster_0 or 0)", show_default=False),
        stage: str = typer.Option("optimized", "--stage", help="stablehlo (as lowered) or optimized (XLA's HLO after passes)"),
        inputs: Inputs = None, seed: Seed = 0, max_elements: MaxElements = DEFAULT_MAX_ELEMENTS,
        output: Output = None, *, analysis: dict) -> None:
    """Print one cluster's StableHLO (as lowered) or optimized HLO (after XLA's fusion passes)."""
    from .runtime.execute import bind_inputs, execute
    from .runtime.jit import CompileCache, cluster_spec

    if stage not in ("stablehlo", "optimized"):
        raise XcvizError(f"unknown stage {stage!r}", hint="use --stage stablehlo or --stage optimized")
    g, c, _ = analyse(graph, **analysis)
    ids = [c.cluster_id(k) for k in range(len(c.clusters))]
    key = cluster if cluster in ids else (f"cluster_{cluster}" if cluster.isdigit() else cluster)
    if key not in ids:
        from .errors import did_you_mean

        raise XcvizError(f"no cluster {cluster!r}", where=graph,
                         hint=did_you_mean(cluster, ids) or ("clusters: " + ", ".join(ids) if ids else "this clustering keeps no cluster"))
    env = execute(g, bind_inputs(g, read_npz(inputs), seed, max_elements), "native", keep_all=True).env
    try:
        comp, _ = CompileCache().get(g, cluster_spec(g, c.clusters[ids.index(key)]), env)
    except XcvizError:
        raise
    except Exception as e:  # noqa: BLE001
        raise XcvizError(f"{key} does not compile: {e.__class__.__name__}: {e}".splitlines()[0][:400], code=1) from None
    text = comp.lowered_text if stage == "stablehlo" else comp.compiled_text
    if output:
        from .fileio import write_atomic

        write_atomic(output, text)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


@analysis_command
def run(graph: GraphArg, inputs: Inputs = None, output: Output = None,
        mode: str = typer.Option("hybrid", "--mode", help="hybrid (clusters compiled, the rest native), native, or jit (everything JAX can compile)"),
        check: bool = typer.Option(False, "--check", help="compare the outputs with native execution; fail on mismatch"),
        seed: Seed = 0, repeats: Repeats = None, max_elements: MaxElements = DEFAULT_MAX_ELEMENTS, json: Json = False,
        *, analysis: dict) -> None:
    """Execute the whole graph (outputs to -o FILE.npz), report end-to-end time; --check compares with native."""
    from .runtime.execute import MODES, bind_inputs, execute
    from .runtime.jit import CompileCache
    from .runtime.measure import compare, median_ms as _median_ms

    if mode not in MODES:
        raise XcvizError(f"unknown mode {mode!r}", hint="use --mode hybrid, native or jit")
    if output is not None:
        from .fileio import check_target

        check_target(output)
    g, c, _ = analyse(graph, **analysis)
    feeds = bind_inputs(g, read_npz(inputs), seed, max_elements)
    cache = CompileCache()
    first = execute(g, feeds, mode, c, cache)
    ms = _median_ms(lambda: execute(g, feeds, mode, c, cache), repeats)
    result = {"mode": mode, "first_run_ms": first.seconds * 1e3, "median_ms": ms,
              "compile_ms": first.compile_seconds * 1e3, "cache": cache.stats(), "outputs": {}}
    failed = []
    ref = execute(g, feeds, "native").outputs if check and mode != "native" else first.outputs
    for name, arr in first.outputs.items():
        info = {"shape": list(arr.shape), "dtype": str(arr.dtype)}
        if arr.size and arr.dtype.kind in "fiub":
            info.update(min=float(arr.min()), max=float(arr.max()), mean=float(arr.astype("float64").mean()))
        if check:
            cmp = compare(arr, ref[name])
            info["check"] = cmp
            if not cmp["ok"]:
                failed.append(f"{name}: {cmp['why']}")
        result["outputs"][name] = info
    if output:
        from .fileio import write_npz

        write_npz(output, first.outputs)
    if json:
        emit_json(clean({"schema_version": 1, "graph": g.name, **result}), None)
    else:
        emit_renderable(run_table(g.name, result, check), None)
    if output and not json:
        from .cli_common import console

        console(sys.stderr).print(f"wrote {output}")
    if failed:
        raise XcvizError(f"{mode} outputs differ from native: {failed[0]}", code=1)


def run_table(name: str, result: dict, check: bool):
    from rich.table import Table

    cache = result["cache"]
    t = Table(title=f"run {name} · mode {result['mode']} · median {result['median_ms']:.3f} ms"
              f" (first run {result['first_run_ms']:.1f} ms incl. {result['compile_ms']:.0f} ms compile;"
              f" {cache['compiles']} compiles, {cache['hits']} cache hits)", title_justify="left")
    for col in ("output", "shape", "dtype", "min", "max", "mean") + (("vs native (abs / rel)",) if check else ()):
        t.add_column(col, justify="left" if col in ("output", "dtype") else "right")
    for out, info in result["outputs"].items():
        row = [out, "x".join(map(str, info["shape"])) or "scalar", info["dtype"], _fmt(info.get("min"), ".4g"),
               _fmt(info.get("max"), ".4g"), _fmt(info.get("mean"), ".4g")]
        if check:
            c = info["check"]
            row.append(("ok " if c["ok"] else "[red]MISMATCH[/red] ") + (f"{c['max_abs']:.1e} / {c['max_rel']:.1e}"
                                                                       if c["max_abs"] is not None else c["why"]))
        t.add_row(*row)
    return t
