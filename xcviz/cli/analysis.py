"""The analysis commands: `cluster`, `stats`, `explain` (tables or --json) and `ops` (the op registry)."""
from __future__ import annotations

from typing import Optional

import typer

from ..errors import XcvizError
from ..pipeline import AnalysisOptions
from .base import Debug, GraphArg, Json, Output, analyse, analysis_command, command
from .helpfmt import complete_from
from .output import emit_json, emit_renderable, wants_json

SORTS = ("file", "size", "bytes", "speedup", "name")  # = render.ordering.SORTS (not imported: keeps --help fast)
FALLBACK_VIEWS = ("auto", "nodes", "grouped")


@analysis_command
def cluster(graph: GraphArg, json: Json = False, output: Output = None,
            limit: int = typer.Option(200, metavar="N", help="rows per table (all rows with --json)"),
            sort: str = typer.Option("file", "--sort", metavar="[" + "|".join(SORTS) + "]", autocompletion=complete_from(SORTS),
                                     help="cluster order: as formed, most nodes, most boundary bytes, highest speedup, or by first node's name"),
            fallbacks: str = typer.Option("auto", "--fallbacks", metavar="[" + "|".join(FALLBACK_VIEWS) + "]",
                                          autocompletion=complete_from(FALLBACK_VIEWS),
                                          help="fallback table: a row per node, or grouped by reason and op (auto: grouped above 20 nodes)"),
            *, options: AnalysisOptions) -> None:
    """Clusters, fallback nodes with their reasons, refused merges, and a one-line summary."""
    _choice("--sort", sort, SORTS)
    _choice("--fallbacks", fallbacks, FALLBACK_VIEWS)
    a = analyse(graph, options)
    json = wants_json(json, output)  # after loading: writing over the input file is the error to give
    from ..clustering.tf_reference import reference_line

    ref = a.reference  # a graph with TF's _XlaCluster attributes: the pipeline's comparison with them
    if json:
        from ..render.report_json import cluster_report

        emit_json(cluster_report(a.graph, a.clustering, a.stats) | ({"reference": ref} if ref else {}), output)
    else:
        from rich.console import Group
        from rich.text import Text

        from ..render.tables import cluster_view

        view = cluster_view(a.graph, a.clustering, a.stats, limit=limit, sort=sort, fallbacks=fallbacks)
        emit_renderable(Group(view, Text(reference_line(ref))) if ref else view, output)


def _choice(flag: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        from ..errors import did_you_mean

        raise XcvizError(f"{flag} {value!r}: not one of {', '.join(choices)}", hint=did_you_mean(value, choices))


@analysis_command
def stats(graph: GraphArg, json: Json = False, output: Output = None, *,
          options: AnalysisOptions) -> None:
    """Coverage, boundary bytes, kernel launches before/after, estimated speedup."""
    a = analyse(graph, options, record=False)  # (no merge attempt is shown)
    json = wants_json(json, output)  # after loading: writing over the input file is the error to give
    if json:
        from ..render.report_json import stats_report

        emit_json(stats_report(a.graph, a.clustering, a.stats), output)
    else:
        from ..render.tables import stats_table

        emit_renderable(stats_table(a.graph, a.clustering, a.stats), output)


@analysis_command
def explain(graph: GraphArg, node: str = typer.Argument(..., help="node name", show_default=False),
            json: Json = False, output: Output = None,
            all_: bool = typer.Option(False, "--all", help="every merge the node's cluster took part in, not the short story"),
            *, options: AnalysisOptions) -> None:
    """The story of one node: candidate or not, how it joined, refused merges, and where it ended up."""
    from ..clustering.explain import story
    from ..errors import node_hint

    a = analyse(graph, options)
    json = wants_json(json, output)  # after loading: writing over the input file is the error to give
    i = a.graph.index.get(node)
    if i is None:
        raise XcvizError(f"no node named {node!r}", where=graph, hint=node_hint(node, a.graph.index))
    if json:
        from ..render.report_json import explain_report

        emit_json(explain_report(story(a.graph, a.clustering, i)), output)
    else:
        from ..render.tables import explain_view

        emit_renderable(explain_view(story(a.graph, a.clustering, i), full=all_), output)


FRAMEWORKS = ("onnx", "tf", "aten")   # = render.ops_lookup.FRAMEWORKS (not imported: keeps --help fast)


@command()
def ops(pattern: Optional[str] = typer.Argument(None, metavar="[PATTERN]", show_default=False,
                                                help="an op name or alias (Conv, tf.MatMul), a glob ('conv*') or a substring"),
        framework: Optional[str] = typer.Option(None, "--framework", metavar="[onnx|tf|aten]", show_default=False,
                                                autocompletion=complete_from(FRAMEWORKS),
                                                help="only the ops of one framework (aten: the aten op table)"),
        unsupported: bool = typer.Option(False, "--unsupported", help="only the ops XLA does not compile (on --device, else on some device)"),
        device: Optional[str] = typer.Option(None, "--device", "-d", metavar="[cpu|gpu|tpu]", show_default=False,
                                             help="only this device's verdict [every device]"),
        json: Json = False, output: Output = None, debug: Debug = False,
        aten: bool = typer.Option(False, "--aten", help="the aten op table (= --framework aten): each aten op PyTorch programs may hold and the op it becomes")) -> None:
    """The op registry: canonical names, aliases, and whether XLA compiles each op per device."""
    import sys

    from ..ops import DEVICES, REGISTRY
    from ..render import ops_lookup as lookup

    if framework is not None:
        _choice("--framework", framework, FRAMEWORKS)
    if device is not None:
        _choice("--device", device, DEVICES)
    devices = (device,) if device else tuple(DEVICES)
    piped = output is None and not sys.stdout.isatty()   # one line per op: grep, cut and sort work on it
    if aten or framework == "aten":
        from ..render.fx_tables import aten_rows, aten_table

        rows = lookup.select_aten(aten_rows(REGISTRY, devices), pattern, unsupported, devices)
        if json:
            return emit_json(rows, output)
        if piped:
            return sys.stdout.write(lookup.aten_lines(rows, devices)) and None
        return emit_renderable(aten_table(REGISTRY, devices, rows), output)
    chosen = lookup.select(REGISTRY, pattern, framework, unsupported, devices)
    if json:
        from ..render.report_json import ops_report

        emit_json(ops_report(chosen, devices), output)
    elif len(chosen) == 1 and pattern is not None:
        emit_renderable(lookup.op_card(chosen[0], devices), output)
    elif piped:
        sys.stdout.write(lookup.op_lines(chosen, devices))
    else:
        from ..render.tables import ops_table

        emit_renderable(ops_table(chosen, device), output)
