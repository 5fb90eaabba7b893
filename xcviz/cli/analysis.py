"""The analysis commands: `cluster`, `stats`, `explain` (tables or --json) and `ops` (the op registry)."""
from __future__ import annotations

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
    if json:
        from ..render.report_json import cluster_report

        emit_json(cluster_report(a.graph, a.clustering, a.stats), output)
    else:
        from ..render.tables import cluster_view

        emit_renderable(cluster_view(a.graph, a.clustering, a.stats, limit=limit, sort=sort, fallbacks=fallbacks), output)


def _choice(flag: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        from ..errors import did_you_mean

        raise XcvizError(f"{flag} {value!r}: not one of {', '.join(choices)}", hint=did_you_mean(value, choices))


@analysis_command
def stats(graph: GraphArg, json: Json = False, output: Output = None, *, options: AnalysisOptions) -> None:
    """Coverage, boundary bytes, kernel launches before/after, estimated speedup."""
    a = analyse(graph, options)
    json = wants_json(json, output)  # after loading: writing over the input file is the error to give
    if json:
        from ..render.report_json import stats_report

        emit_json(stats_report(a.graph, a.clustering, a.stats), output)
    else:
        from ..render.tables import stats_table

        emit_renderable(stats_table(a.graph, a.clustering, a.stats), output)


@analysis_command
def explain(graph: GraphArg, node: str = typer.Argument(..., help="node name", show_default=False),
            json: Json = False, output: Output = None, *, options: AnalysisOptions) -> None:
    """The story of one node: candidate or not, every merge tried, and where it ended up."""
    from ..clustering.explain import story
    from ..errors import did_you_mean

    a = analyse(graph, options)
    json = wants_json(json, output)  # after loading: writing over the input file is the error to give
    i = a.graph.index.get(node)
    if i is None:
        raise XcvizError(f"no node named {node!r}", where=graph, hint=did_you_mean(node, a.graph.index) or "see `xcviz cluster`")
    if json:
        from ..render.report_json import explain_report

        emit_json(explain_report(story(a.graph, a.clustering, i)), output)
    else:
        from ..render.tables import explain_view

        emit_renderable(explain_view(story(a.graph, a.clustering, i)), output)


@command()
def ops(json: Json = False, output: Output = None, debug: Debug = False) -> None:
    """The op registry: canonical names, aliases, and whether XLA compiles each op per device."""
    from ..ops import DEVICES, REGISTRY

    if json:
        from ..render.report_json import ops_report

        emit_json(ops_report(REGISTRY, DEVICES), output)
    else:
        from ..render.tables import ops_table

        emit_renderable(ops_table(REGISTRY), output)
