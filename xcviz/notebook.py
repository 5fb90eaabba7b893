"""xcviz in notebooks: `xcviz.show(model)` displays the interactive report inline (Jupyter, JupyterLab,
VS Code), offline: the self-contained page (render/report_html.py) in a sandboxed iframe's `srcdoc`, so its
script runs apart from the notebook's and nothing is fetched. Results (Analysis, ValidationReport,
compile_report's) show as compact tables through their own `_repr_html_`."""
from __future__ import annotations

import html
import os

HEIGHT = 820   # px: the summary, the toolbar and the picture (the tables scroll inside)


class Report:
    """The interactive report of one analysis: displayed inline by a notebook; `.html` the page's text,
    `.save(path)` writes it, `.analysis` the Analysis it shows."""

    def __init__(self, page: str, analysis, height: int = HEIGHT) -> None:
        self.html, self.analysis, self.height = page, analysis, int(height)

    def _repr_html_(self) -> str:
        return frame(self.html, self.height)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self._repr_html_(), "text/plain": repr(self)}

    def save(self, path: str | os.PathLike) -> str:
        """Write the page (one offline HTML file) and return its path."""
        from .fileio import write_atomic

        path = os.fspath(path)
        write_atomic(path, self.html)
        return path

    def __repr__(self) -> str:
        g = self.analysis.graph
        return f"<xcviz report of {g.name!r}: {len(g.nodes):,} ops, {self.analysis.stats.clusters} clusters>"


def frame(page: str, height: int = HEIGHT) -> str:
    """The page in a sandboxed iframe (scripts only: no same origin, no forms, no top navigation)."""
    return (f'<iframe srcdoc="{html.escape(page, quote=True)}" sandbox="allow-scripts" title="xcviz report" '
            f'style="width:100%;height:{int(height)}px;border:1px solid #ccc;border-radius:4px"></iframe>')


def show(source, *, collapse: bool | None = None, height: int = HEIGHT, validate: bool = False, **options) -> Report:
    """The interactive report of `source` (a path, a Graph or an Analysis), shown inline when it is a cell's
    value. `options`: the analysis's, flat, as for `xcviz.analyse` (`min_cluster_size=1`, `dims={...}`);
    collapse as for `xcviz report`; validate: add the measured columns (needs xcviz[jax])."""
    from .errors import XcvizError
    from .pipeline import Analysis, AnalysisOptions
    from .pipeline import analyse as _analyse
    from .render.report_html import build_report

    if isinstance(source, Analysis):
        if options:
            raise XcvizError("xcviz.show: options apply when it analyses", hint="pass a path or a Graph with options, "
                             "or an Analysis alone")
        a = source
    else:
        a = _analyse(source, AnalysisOptions(**options) if options else None)
    checks = None
    if validate:
        from .runtime.validate import validate_graph

        checks = validate_graph(a.graph, clustering=a.clustering, hardware=a.stats.hardware)
    return Report(build_report(a.graph, a.clustering, a.stats, validation=checks, collapse=collapse), a, height)
