"""`xcviz print`: the graph in its text form (.xcir), each node annotated with its cluster or fallback reason."""
from __future__ import annotations

import sys
from typing import Optional

import typer

from ..pipeline import AnalysisOptions, load_graph
from .base import GraphArg, Output, analyse, analysis_command, app
from .output import emit_file


@analysis_command
def print_(graph: GraphArg, output: Output = None,
           plain: bool = typer.Option(False, "--plain", help="no cluster/fallback comments (and no clustering run)"),
           weights: Optional[bool] = typer.Option(
               None, "--weights/--no-weights", show_default=False,
               help="write the weights' data, so the text reads back [only with -o FILE.xcir; otherwise a "
                    "summary line per weight after the graph]"),
           *, options: AnalysisOptions) -> None:
    """The graph as text (.xcir, which every command reads back), with each node's cluster or fallback reason."""
    from ..ir.text_print import print_graph

    if weights is None:  # a file meant to be read back gets them; a terminal or a pipe gets the nodes first
        weights = bool(output) and output.lower().endswith(".xcir")
    if plain:
        text = print_graph(load_graph(graph, options), weights=weights)
    else:
        a = analyse(graph, options)
        text = print_graph(a.graph, a.clustering, weights=weights)
    if output:
        emit_file(output, text)
    else:
        sys.stdout.write(text)


# `print` is a builtin: the function has another name, the command this one
for _info in app.registered_commands:
    if _info.callback is print_:
        _info.name = "print"
