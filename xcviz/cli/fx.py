"""`xcviz compare-fx`: xcviz's clusters beside torch.fx's CapabilityBasedPartitioner on a .pt2 program."""
from __future__ import annotations

from typing import Optional

import typer

from ..pipeline import AnalysisOptions
from .base import GraphArg, Json, Output, analyse, analysis_command
from .output import emit_json, emit_renderable


@analysis_command
def compare_fx(graph: GraphArg, fx_options: Optional[str] = typer.Option(
        None, "--fx-options", metavar="KEY=VALUE[,...]", show_default=False,
        help="CapabilityBasedPartitioner options: skip_horizontal_fusion=true|false, "
             "allows_single_node_partition=true|false [both false]"),
        json: Json = False, output: Output = None, *, options: AnalysisOptions) -> None:
    """Partition a torch.export program (.pt2) with torch.fx's CapabilityBasedPartitioner on xcviz's support
    set, show both partitions side by side, and label each difference with the rule that causes it."""
    from ..clustering.fx_compare import compare, parse_fx_options
    from ..loaders.torch_export import load_program

    fx = parse_fx_options(fx_options)
    from ..loaders.budget import Limits

    ep, g = load_program(graph, options.dims, options.max_file_bytes, options.trust_pickle,
                         Limits(options.max_file_bytes, options.max_elements, options.max_depth, graph))
    a = analyse(g, options)
    cmp = compare(ep, a.graph, a.clustering, fx)
    if json:
        from ..render.fx_tables import comparison_report
        from ..render.report_json import SCHEMA_VERSION

        emit_json({"schema_version": SCHEMA_VERSION, **comparison_report(a.graph.name, cmp)}, output)
    else:
        from ..render.fx_tables import comparison_view

        emit_renderable(comparison_view(a.graph.name, cmp), output)
