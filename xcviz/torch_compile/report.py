"""`xcviz.compile_report(model, *args, **kwargs)`: torch.compile the model with the xcviz backend, call it once
with the example inputs, and return what was captured (graphs, breaks, summary); the HTML report on request."""
from __future__ import annotations

import os


def compile_report(model, *example_args, report: str | os.PathLike | None = None, mode: str = "eager",
                   backend=None, **example_kwargs) -> dict:
    """Dynamo's caches are reset before and after (as torch._dynamo.explain does), so every graph is compiled
    for this call and nothing of it stays behind. `backend`: an XcvizBackend with other options."""
    from ..loaders.torch_export import import_torch
    from .backend import XcvizBackend

    torch = import_torch()
    be = backend if backend is not None else XcvizBackend(mode=mode)
    torch._dynamo.reset()
    try:
        torch.compile(model, backend=be)(*example_args, **example_kwargs)
    finally:
        torch._dynamo.reset()
    if report is not None:
        be.write(os.fspath(report), title=getattr(model, "__name__", None) or type(model).__name__)
    return CompileReport(be.report())


class CompileReport(dict):
    """compile_report's result: the report's dict itself (graphs, breaks, summary), shown in a notebook as
    compact tables (the summary, one row per graph, the breaks)."""

    def _repr_html_(self) -> str:
        from ..htmltable import pairs, table

        s = self.get("summary", {})
        head = pairs([(k.replace("_", " "), v) for k, v in s.items()], caption="xcviz torch.compile report")
        graphs = [[g.get("compile_id", k), g.get("nodes"), g.get("clustered"), len(g.get("clusters", [])),
                   g.get("boundary_bytes"), g.get("est_speedup")] for k, g in enumerate(self.get("graphs", []))]
        breaks = [[b.get("after_graph"), b.get("summary", ""), b.get("user_frame", "")] for b in self.get("breaks", [])]
        out = head + table(["graph", "ops", "clustered", "clusters", "boundary bytes", "est. speedup"], graphs,
                           numeric={1, 2, 3, 4, 5}, caption="graphs")
        if breaks:
            out += table(["after graph", "break", "where"], breaks, numeric={0}, caption="graph breaks")
        return "<div>" + out + "</div>"
