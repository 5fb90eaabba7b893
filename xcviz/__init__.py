"""xcviz: see how XLA auto-clustering splits a model, why ops fall back, and what crosses each boundary."""
from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal, Mapping, TypeVar

__version__ = "0.1.0"
__all__ = ["load", "from_torch", "cluster", "stats", "explain", "render", "validate", "run", "calibrate", "diff", "analyse",
           "AnalysisOptions", "Analysis", "torch_backend", "compile_report", "print_graph", "parse_graph", "XcvizError",
           "show"]


def __dir__() -> list[str]:
    """`dir(xcviz)`: the public API (`__all__`) and the version, not the helpers and submodules."""
    return sorted([*__all__, "__version__"])

from . import render as _render_package  # noqa: F401  (empty; imported before `def render` below, so that
# importing xcviz.render.* later finds it loaded and leaves the attribute `xcviz.render` the API function)
from .errors import XcvizError
from .pipeline import (DEFAULT_MAX_ALIAS_EXPANSION, DEFAULT_MAX_DEPTH, DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_NODES,
                       Analysis, AnalysisOptions)
from .pipeline import analyse as _analyse

if TYPE_CHECKING:
    import numpy as np

    from .clustering import Clustering
    from .cost import Stats
    from .ir import Graph
    from .runtime.validate import ValidationReport

F = TypeVar("F", bound=Callable[..., Any])
Strategy = Literal["mark", "greedy"]
Device = Literal["cpu", "gpu", "tpu"]
Native = Literal["onnxruntime", "torch", "tensorflow", "numpy"]

# an error's hint speaks the command line's flags; raised through the API it names the parameters instead
_FLAG_TO_PARAMETER = [
    (r"--dim (\w+)=N", r"dims={'\1': N}"), (r"--dim (\w+)=(\w+)", r"dims={'\1': \2}"), (r"--dim NAME=SIZE", "dims={...}"),
    (r"--dim\b", "dims={...}"), (r"--seed N", "seed=0"), (r"--inputs FILE\.npz", "inputs={name: array}"),
    (r"--inputs\b", "inputs"), (r"in the \.npz", "in inputs"), (r"--allow-unknown", "allow_unknown=True"), (r"--supported-ops FILE", "supported_ops={...}"),
    (r"--strategy (\w+)", r"strategy='\1'"), (r"--mode (\w+)", r"mode='\1'"), (r"--(max[\w-]+)", None),
    (r"--(min-cluster-size|max-cluster-size|allow|deny|hardware|device|strategy|auto-fallback)\b", None),
]


def _api_hint(text: str | None) -> str | None:
    if not text:
        return text
    for pattern, repl in _FLAG_TO_PARAMETER:
        text = re.sub(pattern, repl if repl is not None else (lambda m: m.group(1).replace("-", "_") + "="), text)
    return text


def _api(fn: F) -> F:
    """Errors raised through the API name its parameters; a missing optional dependency names its extra."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except XcvizError as e:
            e.hint, e.surface = _api_hint(e.hint), "api"
            raise
        except ModuleNotFoundError as e:
            if (e.name or "").split(".")[0] in ("jax", "jaxlib"):
                raise XcvizError(f"xcviz.{fn.__name__} needs JAX", hint="pip install 'xcviz[jax]'") from None
            raise
    return call  # type: ignore[return-value]


def _need_jax(what: str) -> None:
    """validate, run and hlo need the JAX extra: say so before any work (their runs catch import errors)."""
    import importlib.util

    if importlib.util.find_spec("jax") is None or importlib.util.find_spec("jaxlib") is None:
        raise XcvizError(f"{what} needs JAX", hint="pip install 'xcviz[jax]'")


@_api
def analyse(source: str | os.PathLike | Graph, options: AnalysisOptions | None = None, *,
            progress: Callable[[str], None] | None = None, freeze: bool = False, record: bool = True,
            **flat: Any) -> Analysis:
    """Load (a path), bind dims, cluster and cost: an Analysis (.graph, .clustering, .stats, .hardware,
    .reference). The options as an AnalysisOptions, or flat as keywords (`deny=["relu"], dims={"batch": 8}`,
    over `options`' own); invalid ones raise XcvizError naming the parameter."""
    if flat:
        options = options.replace(**flat) if options is not None else AnalysisOptions(**flat)
    return _analyse(source, options, progress=progress, freeze=freeze, record=record)


@_api
def from_torch(module_or_program: Any, example_args: tuple | None = None, dynamic_shapes: Any = None, **kw: Any) -> Graph:
    """A torch.nn.Module (exported with torch.export) or an ExportedProgram as a verified Graph (needs the
    `torch` extra); keywords: example_kwargs, decompose (run_decompositions first), dims."""
    from .loaders.torch_export import from_torch as _from_torch

    return _from_torch(module_or_program, example_args, dynamic_shapes, **kw)


@_api
def torch_backend(report: str | os.PathLike | None = None, mode: Literal["eager", "hybrid"] = "eager", *,
                  strategy: Strategy = "mark", device: Device = "cpu", min_cluster_size: int | None = None,
                  allow: Iterable[str] = (), deny: Iterable[str] = (), hardware: str | None = None,
                  openxla: bool = True) -> Any:
    """A torch.compile backend (needs the `torch` extra): `torch.compile(model, backend=xcviz.torch_backend(
    report="xcviz-compile/"))` records every graph Dynamo captures, its clusters and the graph breaks.

    mode: "eager" runs the graphs as Dynamo gave them, "hybrid" runs the clusters under JAX. report: a directory
    or .html path, rewritten after every graph. The clustering keywords as for `cluster`; openxla: compare
    with the openxla backend's partitioner. The backend's `.report()` gives the data, `.entries`/`.breaks` its parts."""
    from .loaders.torch_export import import_torch
    from .torch_compile.backend import torch_backend as _backend

    import_torch()
    return _backend(report, mode, strategy=strategy, device=device, min_cluster_size=min_cluster_size,
                    allow=allow, deny=deny, hardware=hardware, openxla=openxla)


@_api
def compile_report(model: Any, *example_args: Any, report: str | os.PathLike | None = None,
                   mode: Literal["eager", "hybrid"] = "eager", **example_kwargs: Any) -> dict:
    """torch.compile `model` with the xcviz backend, call it once on the example inputs and return
    {"graphs", "breaks", "summary", ...}; `report=` a directory or .html path writes the HTML report too."""
    from .torch_compile.report import compile_report as _report

    return _report(model, *example_args, report=report, mode=mode, **example_kwargs)


@_api
def load(path: str | os.PathLike, *, allow_unknown: bool = False, dims: Mapping[str, int] | None = None,
         max_nodes: int | None = DEFAULT_MAX_NODES, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
         max_depth: int = DEFAULT_MAX_DEPTH, max_alias_expansion: int = DEFAULT_MAX_ALIAS_EXPANSION,
         max_elements: int | None = None, trust_pickle: bool = False) -> Graph:
    """Load a graph file (.yaml, .json, ONNX JSON, .xcir, .onnx, TensorFlow, .pt2) into a verified, shape-inferred Graph.

    allow_unknown: load ops the registry does not know as opaque nodes that fall back (else an error).
    dims: bind symbolic dimensions, e.g. {"batch": 8}. The max_* limits refuse hostile or oversized files.
    trust_pickle: a .pt2 that xcviz's own reader refuses goes to torch.export.load, which runs code from the
    file: only for files you trust."""
    from .pipeline import LoadOptions, load_graph

    options = LoadOptions(allow_unknown=allow_unknown, dims=dims or {}, max_file_bytes=max_file_bytes,
                          max_nodes=max_nodes if max_nodes is not None else 2**62, max_depth=max_depth,
                          max_alias_expansion=max_alias_expansion, max_elements=max_elements,
                          trust_pickle=trust_pickle)
    return load_graph(os.fspath(path), options)  # (checks that each bound dimension is one the graph has)


@_api
def cluster(graph: Graph, *, strategy: Strategy = "mark", device: Device = "cpu", min_cluster_size: int | None = None,
            max_cluster_size: int | None = None, allow: Iterable[str] = (), deny: Iterable[str] = (),
            supported_ops: Iterable[str] | None = None) -> Clustering:
    """Cluster a graph as XLA auto-clustering would: kept clusters, each node's decision and every merge tried.

    min_cluster_size: None = 4 for mark (TensorFlow's default), 0 for greedy. allow/deny widen/narrow the
    device's support set (any op spelling); supported_ops replaces it."""
    from .clustering import ClusterOptions, run_clustering

    # a typo is an error, as on the command line (one check, ClusterOptions'); an opaque op of the graph's own is not
    return run_clustering(graph, ClusterOptions(
        strategy=strategy, device=device, min_cluster_size=min_cluster_size, max_cluster_size=max_cluster_size,
        allow=allow, deny=deny, supported_ops=supported_ops, op_names="graph"))


@_api
def stats(graph: Graph, clustering: Clustering, *, hardware: str | None = None) -> Stats:
    """Coverage η, boundary bytes D, kernel launches and estimated speedup S of a clustering.

    hardware: a profile name (cpu, gpu, h100, tpu) or a YAML file; None: the profile measured against the program's
    native runtime (cost.hardware_for: cpu_torch for a torch program, cpu for ONNX)."""
    from .cost import compute_stats, hardware_for

    return compute_stats(graph, clustering, hardware_for(graph, hardware, clustering.options.device))


@_api
def explain(graph: Graph, clustering: Clustering, node: str) -> dict:
    """One node's story: candidate or why not, every merge its cluster took part in, and where it ended up
    (keys as in `xcviz explain --json`)."""
    from .clustering.explain import story
    from .errors import node_hint

    i = graph.index.get(node)
    if i is None:
        raise XcvizError(f"no node named {node!r}", hint=node_hint(node, graph.index))
    return story(graph, clustering, i)


@_api
def render(graph: Graph, clustering: Clustering | None = None, *, format: Literal["svg", "png", "dot"] = "svg",
           collapse: bool | None = None, hardware: str | None = None) -> str | bytes:
    """The picture of a clustering: SVG text, PNG bytes or DOT text (write it where you like).

    clustering: None clusters with the defaults. collapse: draw each cluster as one node (None: above 1,500 nodes)."""
    from .render.collapse import AUTO_COLLAPSE
    from .render.dot import build_dot
    from .render.view import final_view

    if format not in ("svg", "png", "dot"):
        raise XcvizError(f"unknown format {format!r}", hint="format='svg', 'png' or 'dot'")
    clustering = clustering if clustering is not None else cluster(graph)
    view = final_view(graph, clustering, stats(graph, clustering, hardware=hardware))
    source = build_dot(graph, view, collapse=len(graph.nodes) > AUTO_COLLAPSE if collapse is None else collapse)
    if format == "dot":
        return source
    from .render.layout import layout

    picture = layout(source, format)
    return picture.decode("utf-8") if format == "svg" and isinstance(picture, bytes) else picture


@_api
def validate(graph: Graph, clustering: Clustering | None = None, *, inputs: Mapping[str, np.ndarray] | None = None,
             seed: int | None = 0, hardware: str | None = None, repeats: int | None = None,
             auto_fallback: bool = False, native: Native | None = None, threads: int | None = None) -> ValidationReport:
    """JIT-compile every kept cluster with JAX, compare it with the NumPy reference and time it against the
    native runtime (needs xcviz[jax]); then the whole model, all-native against hybrid.

    inputs: values by graph input name; the others are random from `seed`. auto_fallback: deny the ops of
    failing clusters and recluster until all pass. native: 'onnxruntime' (op by op), 'torch' (eager: a torch
    program's own aten calls), 'tensorflow' (a GraphDef's own nodes, Grappler off), 'numpy' (xcviz's reference,
    not a production runtime); None: torch for a torch program, TF for a TF GraphDef (when installed), else
    onnxruntime.
    threads: for XLA (when JAX is not loaded yet) and the native runtime alike. The report: `.ok`,
    `.clusters`, `.native`, `.model`, `.to_json()`."""
    from .runtime.native import apply_threads

    threads, _ = apply_threads(threads)
    _need_jax("xcviz.validate")
    from .runtime.validate import validate_graph

    return validate_graph(graph, clustering, inputs=dict(inputs) if inputs is not None else None, seed=seed,
                          hardware=hardware, repeats=repeats, auto_fallback=auto_fallback, native=native,
                          threads=threads)


@_api
def run(graph: Graph, inputs: Mapping[str, np.ndarray] | None = None, *, mode: Literal["hybrid", "native", "jit"] = "hybrid",
        clustering: Clustering | None = None, seed: int | None = 0, strategy: Strategy = "mark", device: Device = "cpu",
        min_cluster_size: int | None = None, max_cluster_size: int | None = None, allow: Iterable[str] = (),
        deny: Iterable[str] = (), native: Native | None = None, threads: int | None = None) -> dict[str, np.ndarray]:
    """Execute the whole graph: hybrid (clusters under XLA, the rest natively), native or jit (needs xcviz[jax]
    except native). Returns {output name: array}.

    inputs: values by graph input name; any not given is random from `seed` (seed=None: all must be given).
    hybrid clusters with `clustering`, or else with the clustering keywords (as for `cluster`). native: what
    runs the ops outside clusters (None: xcviz's NumPy reference; 'onnxruntime', 'torch', 'tensorflow': that
    runtime, parts it cannot take on onnxruntime or NumPy); threads: the runtime's (and XLA's when JAX is not
    loaded yet)."""
    from .runtime.execute import run_graph

    if mode not in ("hybrid", "native", "jit"):
        raise XcvizError(f"unknown mode {mode!r}", hint="mode='hybrid', 'native' or 'jit'")
    if native not in (None, "numpy") and mode != "jit":
        return _run_on(graph, inputs, mode, clustering, seed, native, threads, strategy=strategy, device=device,
                       min_cluster_size=min_cluster_size, max_cluster_size=max_cluster_size, allow=frozenset(allow),
                       deny=frozenset(deny))
    if mode != "native":
        _need_jax(f"xcviz.run(mode={mode!r})")
    # the clustering keywords go on as options: the graph's plan cache keeps one plan per options
    return run_graph(graph, dict(inputs) if inputs is not None else None, mode=mode, clustering=clustering,
                     seed=seed if seed is not None else (None if inputs else 0), strategy=strategy, device=device,
                     min_cluster_size=min_cluster_size, max_cluster_size=max_cluster_size, allow=frozenset(allow),
                     deny=frozenset(deny))


@_api
def calibrate(*, native: Native | None = None, threads: int | None = None, name: str = "calibrated",
              matmul_n: int | None = None, stream_elements: int | None = None, repeats: int | None = None) -> str:
    """Measure this machine (needs xcviz[jax]): XLA's roofline and per op class costs, the native side on
    `native`'s kernels ('onnxruntime', the default; 'numpy': xcviz's reference). Returns the hardware profile
    as YAML text: write it to a file and pass hardware='that.yaml' (as `xcviz calibrate -o FILE` does)."""
    from .runtime.native import apply_threads

    threads, _ = apply_threads(threads)
    _need_jax("xcviz.calibrate")
    from .runtime.calibrate import calibrate as measure

    return measure(matmul_n, stream_elements, repeats, native=native, threads=threads).profile_yaml(name)


def _run_on(graph, inputs, mode, clustering, seed, native, threads, **cluster_kw) -> dict:
    from .runtime.inputs import bind_inputs
    from .runtime.jit import CompileCache
    from .runtime.native import apply_threads, resolve
    from .runtime.wholemodel import run_on

    threads, _ = apply_threads(threads)
    if mode == "hybrid":
        _need_jax(f"xcviz.run(mode={mode!r})")
        if clustering is None:
            from .clustering import ClusterOptions, run_clustering

            clustering = run_clustering(graph, ClusterOptions(**cluster_kw, op_names="graph"))
    feeds = bind_inputs(graph, dict(inputs) if inputs is not None else None,
                        seed if seed is not None else (None if inputs else 0))
    return run_on(graph, clustering, feeds, mode, resolve(native, graph, threads), CompileCache(), None,
                  timed=False)["outputs"]


@_api
def diff(a: Analysis | Mapping, b: Analysis | Mapping) -> dict:
    """What changed from A to B: each an Analysis (`xcviz.analyse(...)`) or a `cluster --json` report (a dict).
    Returns the `xcviz diff --json` data: metric deltas, clusters matched, moved nodes and why, `ari`, `same`."""
    from .analysis.diff import diff_report, side_from_analysis, side_from_report

    def side(x, label: str):
        if isinstance(x, Analysis):
            return side_from_analysis(label, x.graph, x.clustering, x.stats)
        if isinstance(x, Mapping) and "nodes" in x and "clusters" in x:
            return side_from_report(label, dict(x))
        raise XcvizError(f"diff: {label} is neither an Analysis nor a cluster report",
                         hint="pass xcviz.analyse(path, options) or the dict of `xcviz cluster --json`")

    return diff_report(side(a, "a"), side(b, "b"))


@_api
def show(source: str | os.PathLike | Graph | Analysis, *, collapse: bool | None = None, height: int = 820,
         validate: bool = False, **options: Any) -> Any:
    """The interactive report, displayed inline in Jupyter and VS Code notebooks (offline: the one-file page in
    a sandboxed iframe). source: a path, a Graph or an Analysis; options as for `analyse`, flat. The result's
    `.save(path)` writes the page, `.html` is its text, `.analysis` what it shows."""
    from .notebook import show as _show

    return _show(source, collapse=collapse, height=height, validate=validate, **options)


def print_graph(graph: Graph, clustering: Clustering | None = None) -> str:
    """The graph as text (.xcir); with a Clustering, each node's cluster or fallback reason as a comment."""
    from .ir.text_print import print_graph as _print

    return _print(graph, clustering)


@_api
def parse_graph(text: str, source: str | None = None, *, allow_unknown: bool = False,
                dims: Mapping[str, int] | None = None, max_nodes: int | None = None,
                max_elements: int | None = None) -> Graph:
    """Text from print_graph (or a .xcir file's) -> a verified Graph; the keywords as for `load`."""
    from .loaders.xcir import parse_graph as _parse

    return _parse(text, source, allow_unknown=allow_unknown, dims=dims, max_nodes=max_nodes, max_elements=max_elements)
