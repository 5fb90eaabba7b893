"""The typer app, the flags every analysing command shares, and the one call from a command into the pipeline."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from ..pipeline import (DEFAULT_MAX_ALIAS_EXPANSION, DEFAULT_MAX_DEPTH, DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_NODES,
                        Analysis, AnalysisOptions)

from .helpfmt import LIMITS, Command, Group, complete_from

STRATEGIES = ("mark", "greedy", "cost")     # = clustering's strategies (not imported: keeps --help fast)
DEVICES = ("cpu", "gpu", "tpu")       # = ops.DEVICES
FORMATS = ("yaml", "json", "xcir", "onnx")  # = what loaders.detect_format returns

app = typer.Typer(
    name="xcviz", no_args_is_help=True, add_completion=True, rich_markup_mode=None, cls=Group,
    help="See how XLA auto-clustering splits your model: clusters, fallbacks and why, boundary bytes, speedup.",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        print(f"xcviz {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=_version,
                                       help="print xcviz's version and exit")) -> None:
    pass


def command(**kwargs):
    """app.command with xcviz's help layout (option panels, full summaries)."""
    return app.command(cls=Command, **kwargs)


GraphArg = Annotated[str, typer.Argument(metavar="GRAPH", help="graph file: .yaml/.json (xcviz schema), ONNX JSON, .xcir, .onnx, TensorFlow .pb/.pbtxt or a SavedModel folder, torch.export .pt2; - reads stdin", show_default=False)]
Strategy = Annotated[str, typer.Option("--strategy", "-s", metavar="[mark|greedy|cost]", autocompletion=complete_from(STRATEGIES),
                                       help="mark (TensorFlow's MarkForCompilationPass), greedy (the seed's list order) or cost (best estimated benefit first)")]
Device = Annotated[str, typer.Option("--device", "-d", metavar="[cpu|gpu|tpu]", autocompletion=complete_from(DEVICES),
                                     help="target device for the support set")]
MinSize = Annotated[Optional[int], typer.Option("--min-cluster-size", metavar="N", help="keep clusters whose effective size reaches this [mark: 4, greedy: 0 = keep every run]", show_default=False)]
MaxSize = Annotated[Optional[int], typer.Option("--max-cluster-size", metavar="N", help="largest cluster, in nodes [unlimited]", show_default=False)]
Allow = Annotated[Optional[list[str]], typer.Option("--allow", metavar="OP[,OP...]", help="ops to add to the support set (comma-separated, repeatable)", show_default=False)]
Deny = Annotated[Optional[list[str]], typer.Option("--deny", metavar="OP[,OP...]", help="ops to remove from the support set (comma-separated, repeatable)", show_default=False)]
SupportedOps = Annotated[Optional[str], typer.Option("--supported-ops", metavar="FILE", help="file naming the supported ops (one per line, or a YAML list); replaces the built-in set", show_default=False)]
AllowUnknown = Annotated[bool, typer.Option("--allow-unknown", help="load ops the registry does not know as opaque fallback nodes")]
Hardware = Annotated[Optional[str], typer.Option("--hardware", metavar="NAME|FILE", help="hardware profile name (cpu, gpu, h100, tpu) or YAML file [by device, measured against the program's runtime: cpu_torch for torch programs]", show_default=False)]
Dims = Annotated[Optional[list[str]], typer.Option("--dim", metavar="NAME=SIZE", help="bind a symbolic dimension of the graph to a positive size (repeatable)", show_default=False)]
InputsFile = Annotated[Optional[str], typer.Option(
    "--inputs", metavar="FILE.npz", show_default=False,
    help="an .npz file with one array per graph input: their shapes bind the symbolic dimensions (over --dim)")]
Json = Annotated[bool, typer.Option("--json", help="print the report as JSON (schema_version 1) instead of tables")]
Output = Annotated[Optional[str], typer.Option("--output", "-o", metavar="FILE", help="write the output to this file (atomically)", show_default=False)]
MaxNodes = Annotated[int, typer.Option("--max-nodes", metavar="N", rich_help_panel=LIMITS, help="refuse graphs with more nodes than this")]
MaxFileBytes = Annotated[int, typer.Option("--max-file-bytes", metavar="BYTES", rich_help_panel=LIMITS, help="refuse graph files larger than this")]
MaxDepth = Annotated[int, typer.Option("--max-depth", metavar="N", rich_help_panel=LIMITS, help="refuse YAML/JSON nested deeper than this (lists/mappings)")]
MaxAliasExpansion = Annotated[int, typer.Option("--max-alias-expansion", metavar="N", rich_help_panel=LIMITS, help="refuse YAML whose aliases expand to more objects than this")]
MaxTensorElements = Annotated[Optional[int], typer.Option("--max-elements", metavar="N", min=1, rich_help_panel=LIMITS, help="refuse graphs with a tensor of more elements than this (more than 64 bits can count: always)", show_default=False)]
Signature = Annotated[Optional[str], typer.Option("--signature", metavar="NAME", help="SavedModel: the signature to load [serving_default]", show_default=False)]
TfXlaFlags = Annotated[Optional[str], typer.Option("--tf-xla-flags", metavar="FLAGS", help='TF_XLA_FLAGS as one string, e.g. "--tf_xla_auto_jit=2 --tf_xla_min_cluster_size=4"', show_default=False)]
Debug = Annotated[bool, typer.Option("--debug", help="show Python tracebacks for errors")]
TrustPickle = Annotated[bool, typer.Option("--trust-pickle", help=".pt2: read what xcviz's own reader refuses (pickled weights, ...) with torch.export.load, which RUNS CODE FROM THE FILE: only for files you trust")]

# The flags every command that analyses a graph shares, in --help order: each is the AnalysisOptions
# field of the same name (--debug excepted: main() handles it).
ANALYSIS_OPTIONS: list[tuple[str, object, object]] = [
    ("strategy", Strategy, "mark"), ("device", Device, "cpu"), ("min_cluster_size", MinSize, None),
    ("max_cluster_size", MaxSize, None), ("allow", Allow, None), ("deny", Deny, None),
    ("supported_ops", SupportedOps, None), ("allow_unknown", AllowUnknown, False), ("hardware", Hardware, None),
    ("dims", Dims, None), ("inputs", InputsFile, None), ("max_nodes", MaxNodes, DEFAULT_MAX_NODES),
    ("max_file_bytes", MaxFileBytes, DEFAULT_MAX_FILE_BYTES), ("max_depth", MaxDepth, DEFAULT_MAX_DEPTH),
    ("max_alias_expansion", MaxAliasExpansion, DEFAULT_MAX_ALIAS_EXPANSION),
    ("max_elements", MaxTensorElements, None), ("signature", Signature, None), ("tf_xla_flags", TfXlaFlags, None),
    ("trust_pickle", TrustPickle, False), ("debug", Debug, False),
]

GraphFormat = Annotated[Optional[str], typer.Option("--format", metavar="[yaml|json|xcir|onnx]", autocompletion=complete_from(FORMATS),
                                                   help="the format of a graph read from stdin (GRAPH is -) [sniffed from the content]", show_default=False)]

# True in the `xcviz` process itself (entry.run), which ends without freeing anything; False when main()
# is called from Python, whose objects must stay collectable.
OWN_PROCESS = False


# the commands that need the JAX extra: True, or (parameter, the value with which they do not)
JAX_COMMANDS: dict[str, object] = {"validate": True, "hlo": True, "run": ("mode", "native")}


def _need_jax(command: str) -> None:
    import importlib.util

    if importlib.util.find_spec("jax") is None or importlib.util.find_spec("jaxlib") is None:
        from ..errors import XcvizError

        raise XcvizError(f"xcviz {command} needs JAX", hint="pip install 'xcviz[jax]'")


def analysis_command(fn=None, *, cls=Command):
    """Register `fn` as a command that also takes every ANALYSIS_OPTIONS flag (`cls`: its click class).

    `fn` declares only its own parameters plus `options: AnalysisOptions`; it receives the shared flags
    there, parsed and validated. One list of flags means every command accepts the same ones."""
    import functools
    import inspect

    if fn is None:
        return functools.partial(analysis_command, cls=cls)
    own = inspect.signature(fn, eval_str=True)
    shared = [name for name, _, _ in ANALYSIS_OPTIONS if name not in own.parameters]

    takes_graph = "graph" in own.parameters
    jax_needed = JAX_COMMANDS.get(fn.__name__, False)

    @functools.wraps(fn)
    def command(**kwargs):
        flags = {name: kwargs.pop(name) for name in shared}
        flags.pop("debug", None)  # handled by main()
        if jax_needed and (jax_needed is True or kwargs.get(jax_needed[0]) != jax_needed[1]):
            _need_jax(fn.__name__)
        if not takes_graph:
            return fn(**kwargs, options=AnalysisOptions.from_flags(**flags))
        from . import stdin

        with stdin.graph_argument(kwargs["graph"], kwargs.pop("graph_format"), flags.get("max_file_bytes")) as kwargs["graph"]:
            return fn(**kwargs, options=AnalysisOptions.from_flags(**flags))

    params = [p for p in own.parameters.values() if p.name != "options"]
    params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=ann, default=default)
               for name, ann, default in ANALYSIS_OPTIONS if name in shared]
    if takes_graph:
        params.append(inspect.Parameter("graph_format", inspect.Parameter.KEYWORD_ONLY, annotation=GraphFormat, default=None))
    command.__signature__ = own.replace(parameters=params)
    del command.__wrapped__  # typer must read the new signature, not fn's
    command.__annotations__ = {p.name: p.annotation for p in params}
    return app.command(cls=cls)(command)


def analyse(graph, options: AnalysisOptions, record: bool = True) -> Analysis:
    """The pipeline, with a progress bar on a terminal's stderr once it takes a while (`record`: see
    pipeline.analyse)."""
    from ..pipeline import analyse as run_pipeline
    from ..progress import steps

    from .stdin import shown_name

    shown = shown_name(graph) if isinstance(graph, str) else None
    names = ([f"loading {shown or graph}"] if isinstance(graph, str) else []) + ["clustering", "cost model"]
    with steps(names) as advance:
        a = run_pipeline(graph, options, progress=advance, freeze=OWN_PROCESS, record=record)
    if shown is not None:
        import dataclasses

        from ..ir import relabel

        a = dataclasses.replace(a, graph=relabel(a.graph, source=shown))  # reports name "<stdin>", not the temporary file
    if OWN_PROCESS:  # the process ends without freeing it (entry.run): freeing a big graph is time for nothing
        _KEPT.append(a)
    return a


_KEPT: list = []
