"""The execution commands: `validate` (JAX vs native per cluster), `hlo` (a cluster's IR), `run` (whole graph)."""
from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from ..errors import XcvizError
from ..pipeline import AnalysisOptions
from .base import GraphArg, Json, Output, analyse, analysis_command
from .helpfmt import LIMITS, complete_from
from .output import LazyProgress, console, emit_json, emit_renderable, wants_json
from ..loaders.npz import read_npz

Inputs = Annotated[Optional[str], typer.Option("--inputs", metavar="FILE.npz", help="an .npz file with one array per graph input (by name)", show_default=False)]
Seed = Annotated[int, typer.Option("--seed", metavar="N", help="seed for random inputs not given in --inputs")]
MaxElements = Annotated[int, typer.Option(
    "--max-elements", metavar="N", min=1, rich_help_panel=LIMITS, help="refuse to generate random inputs with more elements than this in all (a --dim typo "
    "should not exhaust memory); inputs given in --inputs are not limited")]
STAGES = ("stablehlo", "optimized")
MODES = ("hybrid", "native", "jit")  # = runtime.execute.MODES
DEFAULT_MAX_ELEMENTS = 50_000_000  # = runtime.inputs.DEFAULT_MAX_ELEMENTS (not imported: keeps --help fast)
NATIVES = ("onnxruntime", "torch", "tensorflow", "numpy")  # = runtime.native.RUNTIMES (not imported: keeps --help fast)
Native = Annotated[Optional[str], typer.Option(
    "--native", metavar="[onnxruntime|torch|tensorflow|numpy]", autocompletion=complete_from(NATIVES), show_default=False,
    help="the runtime speedups are measured against [torch eager for a torch program, TensorFlow for a TF "
         "GraphDef (when installed), else onnxruntime, op by op; numpy = xcviz's reference, not a production runtime]")]
Threads = Annotated[Optional[int], typer.Option(
    "--threads", metavar="N", min=1, show_default=False,
    help="threads for XLA and the native runtime alike [the CPUs this process may use]")]
Repeats = Annotated[Optional[int], typer.Option("--repeats", metavar="N", help="timed repeats after warm-up [adaptive, ~0.2 s per measurement]", show_default=False)]


@analysis_command
def validate(graph: GraphArg, inputs: Inputs = None, seed: Seed = 0, auto_fallback: bool = typer.Option(
                 False, "--auto-fallback", help="deny the ops of failing clusters and cluster again until all pass"),
             repeats: Repeats = None, max_elements: MaxElements = DEFAULT_MAX_ELEMENTS, json: Json = False,
             output: Output = None, native: Native = None, threads: Threads = None, *, options: AnalysisOptions) -> None:
    """JIT-compile each kept cluster with JAX: kernels, memory, compile time, numerics and speed vs the native runtime."""
    from ..runtime.native import apply_threads
    from ..runtime.validate import validate_graph

    check_native(native)
    threads, _ = apply_threads(threads)  # before JAX loads: XLA reads its thread count once

    if inputs is not None and options.load.inputs is None:  # the arrays bind the graph's dims as in `stats --inputs`
        import dataclasses

        options = dataclasses.replace(options, load=dataclasses.replace(options.load, inputs=inputs))
    a = analyse(graph, options)
    json = wants_json(json, output)  # after loading: writing over the input file is the error to give
    given = read_npz(inputs)
    _warn_dataless(a.graph, given)
    progress = LazyProgress("compiling")
    try:
        report = validate_graph(a.graph, clustering=a.clustering, inputs=given, seed=seed,
                                hardware=options.hardware, repeats=repeats, progress=progress,
                                auto_fallback=auto_fallback, max_elements=max_elements, native=native,
                                threads=threads)
    finally:
        progress.close()
    if json:
        from ..render.report_json import clean

        emit_json(clean(report.to_json()), output)
    else:
        from ..render.run_tables import validate_table

        emit_renderable(validate_table(report, 120 if output else console().width), output)
    if report.status == "nothing_checked":
        why = sorted({x.reason or x.status for x in report.clusters})
        raise XcvizError("nothing was checked: " + (f"every cluster was skipped ({', '.join(why)})" if why else
                         "no cluster is kept"), hint="give real inputs with --inputs, or lower --min-cluster-size",
                         code=1)
    if not report.ok:
        bad = next(x for x in report.clusters if x.failed)
        raise XcvizError(f"{sum(x.failed for x in report.clusters)} cluster(s) failed validation; first: "
                         f"{bad.id} {bad.reason or bad.status}", hint="rerun with --auto-fallback to deny their ops", code=1)


@analysis_command
def hlo(graph: GraphArg, cluster: str = typer.Option(..., "--cluster", metavar="ID", help="cluster id (cluster_0 or 0)", show_default=False),
        stage: str = typer.Option("optimized", "--stage", metavar="[stablehlo|optimized]", autocompletion=complete_from(STAGES), help="as lowered, or XLA's HLO after its passes"),
        inputs: Inputs = None, seed: Seed = 0, max_elements: MaxElements = DEFAULT_MAX_ELEMENTS,
        output: Output = None, *, options: AnalysisOptions) -> None:
    """Print one cluster's StableHLO (as lowered) or optimized HLO (after XLA's fusion passes)."""
    from ..runtime.execute import bind_inputs, execute
    from ..runtime.jit import CompileCache, cluster_spec

    if stage not in ("stablehlo", "optimized"):
        raise XcvizError(f"unknown stage {stage!r}", hint="use --stage stablehlo or --stage optimized")
    a = analyse(graph, options)
    key, k = _cluster_named(a.clustering, cluster, graph)
    given = read_npz(inputs)
    ones = _bound_to_one(a.graph, given)   # (before bind_inputs, which records the sizes it chose)
    feeds = bind_inputs(a.graph, given, seed, max_elements)
    if ones:   # said once the inputs are made: an error there stays the one line
        console(sys.stderr).print("; bound unbound dimensions to 1: " + ", ".join(f"{d}=1" for d in ones)
                                  + " (use --dim)", markup=False, highlight=False)
    spec = cluster_spec(a.graph, a.clustering.clusters[k])
    env = _cluster_env(a, spec, feeds, seed)
    try:
        comp, _ = CompileCache().get(a.graph, spec, env)
    except XcvizError:
        raise
    except Exception as e:  # noqa: BLE001
        raise XcvizError(f"{key} does not compile: {e.__class__.__name__}: {e}".splitlines()[0][:400], code=1) from None
    text = comp.lowered_text if stage == "stablehlo" else comp.compiled_text
    if output:
        from ..fileio import write_atomic

        write_atomic(output, text)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _cluster_env(a, spec, feeds: dict, seed: int | None) -> dict:
    """Every tensor of a native run; for a TF1 graph with frames, the cluster's entries of its last run (seeded
    ones of their types where it never ran: a branch not taken, a loop of no iteration), as validate takes them."""
    from ..runtime.execute import execute
    from ..runtime.frames import has_v1_flow

    if not has_v1_flow(a.graph):
        return execute(a.graph, feeds, "native", keep_all=True).env
    from ..runtime.partial import Skip, cluster_inputs, execute_tolerant

    try:
        return cluster_inputs(a.graph, spec, execute_tolerant(a.graph, feeds, a.clustering), seed or 0)[0]
    except Skip as e:
        raise XcvizError(f"no inputs for this cluster: {e}", hint="give --inputs that take its branch or loop") from None


def _bound_to_one(graph, given: dict | None) -> list[str]:
    """The symbolic dims no --dim or --inputs array binds: the random inputs make them 1. Said on stderr, as
    the shapes in the HLO (`s64[1,1]`) would otherwise look like the model's own."""
    from ..cost.symbolic import dims_from_arrays, free_dims

    by_arrays = dims_from_arrays(graph, given, getattr(given, "source", None)) if given else {}
    return [d for d in free_dims(graph) if d not in by_arrays]


def check_native(native: str | None) -> None:
    if native is not None and native not in NATIVES:
        raise XcvizError(f"unknown native runtime {native!r}", hint="use --native " + " | ".join(NATIVES))


def _warn_dataless(graph, given: dict | None) -> None:
    """Name the weights without data that this run fills with seeded random values (stderr, one line)."""
    from ..runtime.inputs import dataless_warning, dataless_weights

    line = dataless_warning(dataless_weights(graph, given))
    if line:
        console(sys.stderr).print(line, markup=False, style="yellow")


def _cluster_named(clustering, name: str, graph_path: str) -> tuple[str, int]:
    """(id, index) of the kept cluster `name` ("cluster_0" or "0"), or a did-you-mean error."""
    ids = [clustering.cluster_id(k) for k in range(len(clustering.clusters))]
    key = name if name in ids else (f"cluster_{name}" if name.isdigit() else name)
    if key not in ids:
        from ..errors import did_you_mean

        raise XcvizError(f"no cluster {name!r}", where=graph_path,
                         hint=did_you_mean(name, ids) or ("clusters: " + ", ".join(ids) if ids else "this clustering keeps no cluster"))
    return key, ids.index(key)


@analysis_command
def run(graph: GraphArg, inputs: Inputs = None, output: Output = None,
        mode: str = typer.Option("hybrid", "--mode", metavar="[hybrid|native|jit]", autocompletion=complete_from(MODES), help="hybrid: clusters compiled, the rest native; jit: everything JAX can compile"),
        check: bool = typer.Option(False, "--check", help="compare the outputs with native execution; fail on mismatch"),
        seed: Seed = 0, repeats: Repeats = None, max_elements: MaxElements = DEFAULT_MAX_ELEMENTS, json: Json = False,
        native: Native = None, threads: Threads = None, *, options: AnalysisOptions) -> None:
    """Execute the whole graph (outputs to -o FILE.npz), report end-to-end time; --check compares with xcviz's NumPy reference."""
    from ..runtime.execute import bind_inputs
    from ..runtime.native import apply_threads
    from ..runtime.timed import timed_run

    check_native(native)
    threads, _ = apply_threads(threads)  # before JAX loads
    if mode not in MODES:
        raise XcvizError(f"unknown mode {mode!r}", hint="use --mode hybrid, native or jit")
    if output is not None:
        from ..fileio import check_target

        check_target(output)
        if not output.lower().endswith(".npz"):
            raise XcvizError("xcviz run writes its outputs as an .npz file", where=output, hint="name it .npz")
    a = analyse(graph, options)
    given = read_npz(inputs)
    _warn_dataless(a.graph, given)
    result, arrays, failed = timed_run(a.graph, a.clustering, bind_inputs(a.graph, given, seed, max_elements), mode,
                                       check, repeats, native, threads, warn=_warn_fallbacks)
    if output:
        from ..fileio import write_npz

        write_npz(output, arrays)
    if json:
        from ..render.report_json import SCHEMA_VERSION, clean

        emit_json(clean({"schema_version": SCHEMA_VERSION, "graph": a.graph.name, **result}), None)
    else:
        from ..render.run_tables import run_table

        emit_renderable(run_table(a.graph.name, result, check), None)
        if output:
            console(sys.stderr).print(f"wrote {output}")
    if failed:
        raise XcvizError(f"{mode} outputs differ from native: {failed[0]}", code=1)


def _warn_fallbacks(fallbacks: list) -> None:
    """The run went on: each cluster XLA could not compile ran natively, said on stderr."""
    from ..runtime.execute import fallback_line

    for f in fallbacks:
        console(sys.stderr).print(f"warning: {fallback_line(f)}", markup=False, style="yellow")
