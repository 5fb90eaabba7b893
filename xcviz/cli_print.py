"""`xcviz print`: the graph in its text form (.xcir), each node annotated with its cluster or fallback reason."""
from __future__ import annotations

import sys

import typer

from .cli_common import GraphArg, Output, analyse, analysis_command, app, console, load_graph

# the analysis options that loading reads (the others pick the clustering)
_LOAD_OPTIONS = ("allow_unknown", "dims", "max_nodes", "max_file_bytes", "max_depth", "max_alias_expansion")


@analysis_command
def print_(graph: GraphArg, output: Output = None,
           plain: bool = typer.Option(False, "--plain", help="no cluster/fallback comments (and no clustering run)"),
           *, analysis: dict) -> None:
    """The graph as text (.xcir, which every command reads back), with each node's cluster or fallback reason."""
    from .ir.text_print import print_graph

    if plain:
        text = print_graph(load_graph(graph, **{k: analysis[k] for k in _LOAD_OPTIONS}))
    else:
        g, c, _ = analyse(graph, **analysis)
        text = print_graph(g, c)
    if output:
        from .fileio import write_atomic

        write_atomic(output, text)
        console(sys.stderr).print(f"wrote {output}", markup=False)
    else:
        sys.stdout.write(text)


# `print` is a builtin: the function has another name, the command this one
for _info in app.registered_commands:
    if _info.callback is print_:
        _info.name = "print"
