"""The cluster formation as pictures: one laid-out SVG per frame, and the self-contained page that plays them."""
from __future__ import annotations

from ..clustering import Clustering
from ..cost import Stats
from ..ir import Graph


def frame_svgs(graph: Graph, clustering: Clustering, stats: Stats, *, collapse: bool = False,
               engine: str | None = None, params: str = "fold") -> list[tuple[str, str]]:
    """(SVG text, caption) per frame of render.frames.build_frames, laid out by `engine` [best available]."""
    from .dot import build_dot
    from .frames import build_frames
    from .layout import layout

    return [(layout(build_dot(graph, f.view, collapse=collapse, params=params), "svg", engine=engine).decode("utf-8"), f.view.caption)
            for f in build_frames(graph, clustering, stats)]


def steps_page(graph: Graph, clustering: Clustering, frames: list[tuple[str, str]]) -> str:
    """The HTML page that plays `frames` (from frame_svgs), titled after the graph and its options."""
    from .html import frames_page
    from .tables import title

    return frames_page(f"{title(graph, clustering)}: cluster formation", frames)
