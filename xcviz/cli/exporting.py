"""`xcviz export`: the clustering written into other tools' formats (TensorBoard GraphDef, Model Explorer).

Each flag names one format and one writer module under xcviz/render/; several flags in one call
write several files from one analysis."""
from __future__ import annotations

import sys
from typing import Optional

import typer

from ..errors import XcvizError
from ..pipeline import AnalysisOptions
from .base import GraphArg, analyse, analysis_command
from .output import console


@analysis_command
def export(graph: GraphArg,
           graphdef: Optional[str] = typer.Option(None, "--graphdef", metavar="OUT.pbtxt", show_default=False,
                                                  help="a TensorFlow GraphDef (.pbtxt text or .pb binary) with _XlaCluster on cluster members, for TensorBoard"),
           model_explorer: Optional[str] = typer.Option(None, "--model-explorer", metavar="DIR", show_default=False,
                                                        help="Model Explorer node-data overlays (one JSON file per overlay) into DIR"),
           model_explorer_graph: Optional[str] = typer.Option(None, "--model-explorer-graph", metavar="FILE", show_default=False,
                                                              help="Model Explorer's graph JSON, clusters as layers, for graphs it cannot open itself"),
           validate: bool = typer.Option(False, "--validate", help="with --model-explorer: also the measured speedup and max error per cluster (compiles with JAX)"),
           *, options: AnalysisOptions) -> None:
    """Write the clustering for TensorBoard (GraphDef with _XlaCluster) or Google's Model Explorer (overlays, graph JSON)."""
    if not (graphdef or model_explorer or model_explorer_graph):
        raise XcvizError("nothing to export", hint="name a format: --graphdef OUT.pbtxt, --model-explorer DIR or --model-explorer-graph FILE")
    if validate and not model_explorer:
        raise XcvizError("--validate adds overlays to --model-explorer", hint="add --model-explorer DIR")
    a = analyse(graph, options)
    err = console(sys.stderr)
    if graphdef:
        from ..render.graphdef import write_graphdef

        write_graphdef(a, graphdef)
        err.print(f"wrote {graphdef}")
    if model_explorer:
        from ..render.model_explorer import write_overlays

        validation = None
        if validate:
            from ..runtime.validate import validate_graph

            from ..loaders.npz import read_npz

            validation = validate_graph(a.graph, clustering=a.clustering, inputs=read_npz(options.inputs))  # (--inputs: the arrays too)
        from ..loaders.budget import Limits

        reader = (options.trust_pickle, Limits(options.max_file_bytes, options.max_elements, options.max_depth, graph))
        for path in write_overlays(a, model_explorer, source=graph, validation=validation, reader=reader):
            err.print(f"wrote {path}")
    if model_explorer_graph:
        from ..render.model_explorer import write_graph_json

        write_graph_json(a, model_explorer_graph)
        err.print(f"wrote {model_explorer_graph}")
