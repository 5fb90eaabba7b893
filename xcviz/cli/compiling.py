"""`xcviz compile-report script.py:factory`: import the user's own script, torch.compile the model its factory
returns with the xcviz backend, and show Dynamo's graphs, breaks and clusters."""
from __future__ import annotations

from typing import Optional

import typer

from ..pipeline import AnalysisOptions
from .base import Json, Output, analysis_command
from .output import emit_json, emit_renderable


@analysis_command
def compile_report(target: str = typer.Argument(..., metavar="SCRIPT.py:FACTORY", show_default=False,
                                                help="your script and the function in it that returns (model, "
                                                     "example_args) or (model, example_args, example_kwargs)"),
                   report: Optional[str] = typer.Option(None, "--report", metavar="DIR|FILE.html", show_default=False,
                                                        help="also write the HTML report (a directory gets "
                                                             "compile-report.html and compile-report.json)"),
                   mode: str = typer.Option("eager", "--mode", metavar="eager|hybrid",
                                            help="eager: the graphs run as Dynamo gave them; hybrid: clusters "
                                                 "run under JAX (needs xcviz[jax]; the model is called under "
                                                 "torch.no_grad())"),
                   json: Json = False, output: Output = None, *, options: AnalysisOptions) -> None:
    """torch.compile a model with the xcviz backend and show every graph Dynamo captured, every graph break with
    its reason and source line, and each graph's XLA clusters, fallbacks, boundary bytes and estimate.

    This command IMPORTS AND RUNS your script (SCRIPT.py's top level, as `import` would, then FACTORY() and
    one call of the model): that is its purpose. Point it only at code you trust. It never reads a model file."""
    from ..errors import XcvizError
    from ..torch_compile.backend import MODES, XcvizBackend
    from ..torch_compile.script import call_model, load_factory

    if mode not in MODES:
        raise XcvizError(f"unknown --mode {mode!r}", hint="--mode eager or --mode hybrid")
    model, args, kwargs, name = load_factory(target)
    be = XcvizBackend(None, mode, options)
    call_model(model, args, kwargs, be, target, no_grad=mode == "hybrid")
    be.no_grad = mode == "hybrid"
    data = be.report()
    if report:
        be.write(report, title=name)
    if json:
        emit_json(data, output)
    else:
        from ..render.compile_tables import compile_view

        emit_renderable(compile_view(data, name), output)
