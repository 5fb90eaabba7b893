"""Shared CLI plumbing: the typer app, option types used by every command, loading and output."""
from __future__ import annotations

import json
import os
import sys
from typing import Annotated, Optional

import typer

from .errors import XcvizError

app = typer.Typer(
    name="xcviz", no_args_is_help=True, add_completion=False, rich_markup_mode=None,
    help="See how XLA auto-clustering splits your model: clusters, fallbacks and why, boundary bytes, speedup.",
    context_settings={"help_option_names": ["-h", "--help"]},
)

GraphArg = Annotated[str, typer.Argument(help="graph file: .yaml/.json (xcviz schema), ONNX JSON, or .onnx", show_default=False)]
Strategy = Annotated[str, typer.Option("--strategy", "-s", help="mark (TensorFlow's MarkForCompilationPass) or greedy (the seed's list order)")]
Device = Annotated[str, typer.Option("--device", "-d", help="target device for the support set: cpu, gpu, tpu")]
MinSize = Annotated[Optional[int], typer.Option("--min-cluster-size", help="keep clusters whose effective size reaches this [mark: 4, greedy: 0 = keep every run]", show_default=False)]
MaxSize = Annotated[Optional[int], typer.Option("--max-cluster-size", help="largest cluster, in nodes [unlimited]", show_default=False)]
Allow = Annotated[Optional[list[str]], typer.Option("--allow", help="ops to add to the support set (comma-separated, repeatable)", show_default=False)]
Deny = Annotated[Optional[list[str]], typer.Option("--deny", help="ops to remove from the support set (comma-separated, repeatable)", show_default=False)]
SupportedOps = Annotated[Optional[str], typer.Option("--supported-ops", help="file naming the supported ops (one per line, or a YAML list); replaces the built-in set", show_default=False)]
AllowUnknown = Annotated[bool, typer.Option("--allow-unknown", help="load ops the registry does not know as opaque fallback nodes")]
Hardware = Annotated[Optional[str], typer.Option("--hardware", help="hardware profile name (cpu, gpu, h100, tpu) or YAML file [by device]", show_default=False)]
Dims = Annotated[Optional[list[str]], typer.Option("--dim", help="bind a symbolic dimension, NAME=VALUE (repeatable)", show_default=False)]
Json = Annotated[bool, typer.Option("--json", help="print the report as JSON (schema_version 1) instead of tables")]
Output = Annotated[Optional[str], typer.Option("--output", "-o", help="write the output to this file (atomically)", show_default=False)]
MaxNodes = Annotated[int, typer.Option("--max-nodes", help="refuse graphs with more nodes than this")]
MaxFileBytes = Annotated[int, typer.Option("--max-file-bytes", help="refuse graph files larger than this")]
MaxDepth = Annotated[int, typer.Option("--max-depth", help="refuse YAML/JSON nested deeper than this (lists/mappings)")]
MaxAliasExpansion = Annotated[int, typer.Option("--max-alias-expansion", help="refuse YAML whose aliases expand to more objects than this")]
MaxTensorElements = Annotated[Optional[int], typer.Option("--max-elements", min=1, help="refuse graphs with a tensor of more elements than this (more than 64 bits can count: always)", show_default=False)]
Debug = Annotated[bool, typer.Option("--debug", help="show Python tracebacks for errors")]

DEFAULT_MAX_NODES = 5_000_000
DEFAULT_MAX_FILE_BYTES = 2 * 1024**3
DEFAULT_MAX_DEPTH = 100                  # = loaders.parse.DEFAULT_MAX_DEPTH (not imported: keeps --help fast)
DEFAULT_MAX_ALIAS_EXPANSION = 1_000_000  # = loaders.parse.DEFAULT_MAX_ALIAS_EXPANSION


def split_list(values: list[str] | None) -> frozenset[str]:
    return frozenset(v.strip() for item in values or [] for v in item.split(",") if v.strip())


def parse_dims(values: list[str] | None) -> dict[str, int]:
    dims = {}
    for item in values or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip().isdigit():
            raise XcvizError(f"bad --dim {item!r}", hint="write --dim batch=8")
        dims[name.strip()] = int(value)
    return dims


def read_supported_ops(path: str | None) -> frozenset[str] | None:
    if path is None:
        return None
    import yaml

    from .fileio import protect

    if not os.path.isfile(path):
        raise XcvizError("supported-ops file not found", where=path)
    protect(path)
    text = open(path, encoding="utf-8", errors="replace").read()
    stripped = text.lstrip()
    if stripped.startswith(("-", "[")):
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise XcvizError(f"malformed YAML list: {e}", where=path) from None
        if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
            raise XcvizError("supported-ops YAML must be a list of op names", where=path)
        return frozenset(x.strip() for x in data if x.strip())
    return frozenset(line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip())


# True in the `xcviz` process itself (cli.run), which ends without freeing anything; False when main()
# is called from Python.
OWN_PROCESS = False


def load_graph(path: str, *, allow_unknown: bool = False, dims: list[str] | None = None,
               max_nodes: int = DEFAULT_MAX_NODES, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
               max_depth: int = DEFAULT_MAX_DEPTH, max_alias_expansion: int = DEFAULT_MAX_ALIAS_EXPANSION,
               max_elements: int | None = None):
    from .fileio import protect
    from .loaders import load

    protect(path)
    graph = load(path, allow_unknown=allow_unknown, dims=parse_dims(dims), max_nodes=max_nodes,
                 max_file_bytes=max_file_bytes, max_depth=max_depth, max_alias_expansion=max_alias_expansion,
                 max_elements=max_elements)
    if OWN_PROCESS:
        # The `xcviz` process (cli.run): the graph lives as long as the command, so keep the cyclic GC from
        # rescanning its millions of objects at every later full collection (one took ~1 s at 10^6
        # nodes). Not in-process callers of main(), whose objects must stay collectable.
        from .ir import freeze_for_process

        freeze_for_process()
    return graph


def analyse(graph_path: str, *, strategy: str = "mark", device: str = "cpu", min_cluster_size=None,
            max_cluster_size=None, allow=None, deny=None, supported_ops=None, allow_unknown=False, hardware=None,
            dims=None, max_nodes=DEFAULT_MAX_NODES, max_file_bytes=DEFAULT_MAX_FILE_BYTES,
            max_depth=DEFAULT_MAX_DEPTH, max_alias_expansion=DEFAULT_MAX_ALIAS_EXPANSION, max_elements=None):
    """Load, cluster and cost in one go: (graph, clustering, stats). The common path of every command."""
    from .clustering import ClusterOptions, run_clustering
    from .cost import compute_stats, load_hardware

    supported = read_supported_ops(supported_ops)
    opts = ClusterOptions(strategy=strategy, device=device, min_cluster_size=min_cluster_size,
                          max_cluster_size=max_cluster_size, allow=split_list(allow), deny=split_list(deny),
                          supported_ops=supported)
    hw = load_hardware(hardware, device)
    from .progress import steps

    with steps([f"loading {graph_path}", "clustering", "cost model"]) as advance:
        advance(f"loading {graph_path}")
        graph = load_graph(graph_path, allow_unknown=allow_unknown or supported is not None, dims=dims,
                           max_nodes=max_nodes, max_file_bytes=max_file_bytes, max_depth=max_depth,
                           max_alias_expansion=max_alias_expansion, max_elements=max_elements)
        advance(f"clustering {len(graph.nodes):,} nodes")
        clustering = run_clustering(graph, opts)
        advance("cost model")
        stats = compute_stats(graph, clustering, hw)
    return graph, clustering, stats


# The options every command that analyses a graph shares: declared once, added to each command's signature.
ANALYSIS_OPTIONS: list[tuple[str, object, object]] = [
    ("strategy", Strategy, "mark"), ("device", Device, "cpu"), ("min_cluster_size", MinSize, None),
    ("max_cluster_size", MaxSize, None), ("allow", Allow, None), ("deny", Deny, None),
    ("supported_ops", SupportedOps, None), ("allow_unknown", AllowUnknown, False), ("hardware", Hardware, None),
    ("dims", Dims, None), ("max_nodes", MaxNodes, DEFAULT_MAX_NODES),
    ("max_file_bytes", MaxFileBytes, DEFAULT_MAX_FILE_BYTES), ("max_depth", MaxDepth, DEFAULT_MAX_DEPTH),
    ("max_alias_expansion", MaxAliasExpansion, DEFAULT_MAX_ALIAS_EXPANSION),
    ("max_elements", MaxTensorElements, None), ("debug", Debug, False),
]


def analysis_command(fn):
    """Register `fn` as a command that also takes every ANALYSIS_OPTIONS flag.

    `fn` declares only its own parameters plus `analysis: dict`; it receives the shared options there,
    ready for `analyse(graph, **analysis)`. One list of options means every command accepts the same flags."""
    import functools
    import inspect

    own = inspect.signature(fn, eval_str=True)
    shared = [name for name, _, _ in ANALYSIS_OPTIONS if name not in own.parameters]

    @functools.wraps(fn)
    def command(**kwargs):
        analysis = {name: kwargs.pop(name) for name in shared}
        analysis.pop("debug", None)  # handled by main()
        return fn(**kwargs, analysis=analysis)

    params = [p for p in own.parameters.values() if p.name != "analysis"]
    params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=ann, default=default)
               for name, ann, default in ANALYSIS_OPTIONS if name in shared]
    command.__signature__ = own.replace(parameters=params)
    del command.__wrapped__  # typer must read the new signature, not fn's
    command.__annotations__ = {p.name: p.annotation for p in params}
    return app.command()(command)


def console(file=None):
    from rich.console import Console

    file = file or sys.stdout
    # Pipes and files get a fixed, generous width so tables stay readable and output is reproducible.
    width = None if file.isatty() else 120
    return Console(file=file, highlight=False, soft_wrap=False, width=width)


def emit_json(data, output: str | None) -> None:
    # json.dumps(data, indent=2, ...) byte for byte, ~10x faster: with an indent, json encodes in Python
    # (20 s for a 10^6-node report); msgspec indents the C encoder's text, numbers copied as written
    import msgspec

    text = msgspec.json.format(json.dumps(data, ensure_ascii=False, allow_nan=False), indent=2) + "\n"
    if output:
        from .fileio import write_atomic

        write_atomic(output, text)
        console(sys.stderr).print(f"wrote {output}")
    else:
        sys.stdout.write(text)


def emit_renderable(renderable, output: str | None) -> None:
    from .render.safe_text import sanitize

    sanitize(renderable)  # names from a hostile file must not move the cursor or change colours
    if output:
        from rich.console import Console

        from .fileio import check_target, write_atomic

        check_target(output)
        c = Console(record=True, width=120, file=open(os.devnull, "w"), color_system=None)
        c.print(renderable)
        write_atomic(output, c.export_text())
        console(sys.stderr).print(f"wrote {output}")
    else:
        console().print(renderable)
