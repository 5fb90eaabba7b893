"""`xcviz render`: the clustering as a picture (SVG, PNG or DOT), collapsed, frame by frame, or compared."""
from __future__ import annotations

import os
import re
import sys
from typing import Optional

import typer

from .cli_common import GraphArg, Output, analyse, analysis_command, console
from .errors import XcvizError

SUFFIX_FORMATS = {".svg": "svg", ".png": "png", ".dot": "dot", ".gv": "dot"}


def _format(svg: bool, png: bool, dot: bool, output: str | None) -> str:
    chosen = [f for f, on in (("svg", svg), ("png", png), ("dot", dot)) if on]
    if len(chosen) > 1:
        raise XcvizError("choose one of --svg, --png, --dot")
    if chosen:
        return chosen[0]
    if output:
        return SUFFIX_FORMATS.get(os.path.splitext(output)[1].lower(), "svg")
    return "svg"


def default_name(graph_name: str, source: str, ext: str) -> str:
    """`<graph name>.<ext>` in the current directory; unsafe characters become '_'."""
    stem = re.sub(r"[^\w.-]", "_", graph_name or "").strip("._") or os.path.splitext(os.path.basename(source))[0]
    return f"{stem[:100]}.{ext}"


def _write(path: str, data: bytes | str) -> None:
    from .fileio import write_atomic

    write_atomic(path, data)
    console(sys.stderr).print(f"wrote {path}", markup=False)


@analysis_command
def render(graph: GraphArg,
           svg: bool = typer.Option(False, "--svg", help="write SVG (the default)"),
           png: bool = typer.Option(False, "--png", help="write PNG"),
           dot: bool = typer.Option(False, "--dot", help="write the DOT text (no layout)"),
           output: Output = None,
           collapse: Optional[bool] = typer.Option(None, "--collapse/--expand", show_default=False,
                                                   help="draw each cluster as one node / every node [collapse above 1,500 nodes]"),
           steps: Optional[str] = typer.Option(None, "--steps", metavar="DIR", show_default=False,
                                               help="write the cluster formation as numbered SVG frames into DIR"),
           animate: Optional[str] = typer.Option(None, "--animate", metavar="FILE.html", show_default=False,
                                                 help="write the frames as one self-contained HTML page"),
           compare: Optional[str] = typer.Option(None, "--compare", metavar="S1,S2", show_default=False,
                                                 help="draw several strategies side by side, e.g. greedy,mark"),
           max_frames: int = typer.Option(500, "--max-frames", help="refuse --steps/--animate with more frames"),
           *, analysis: dict) -> None:
    """Draw the clusters, fallback nodes (with reasons) and boundary edges (with bytes) as SVG, PNG or DOT."""
    from .render.tables import summary_line

    fmt = _format(svg, png, dot, output)
    strategy = analysis.pop("strategy")
    strategies = [s.strip() for s in compare.split(",") if s.strip()] if compare else [strategy]
    if compare and len(strategies) < 2:
        raise XcvizError("--compare needs two strategies or more", hint="write --compare greedy,mark")
    if compare and (steps or animate):
        raise XcvizError("--compare does not combine with --steps/--animate", hint="render each strategy's frames on its own")
    results = [analyse(graph, strategy=st, **analysis) for st in strategies]
    g, c, s = results[0]
    err = console(sys.stderr)
    if collapse is None:
        from .render.collapse import AUTO_COLLAPSE

        collapse = len(g.nodes) > AUTO_COLLAPSE
        if collapse:
            err.print(f"note: {len(g.nodes):,} nodes > {AUTO_COLLAPSE:,}: drawing each cluster as one node "
                      "(use --expand to draw every node)", markup=False)

    if steps or animate:
        _frames(g, c, s, steps, animate, collapse, max_frames)
        if not (svg or png or dot or output):
            err.print(summary_line(s))
            return

    from .render.dot import build_dot, compare_dot
    from .render.view import final_view

    if compare:
        source = compare_dot(g, [(st, final_view(gg, cc, ss)) for st, (gg, cc, ss) in zip(strategies, results)],
                             collapse=collapse)
    else:
        source = build_dot(g, final_view(g, c, s), collapse=collapse)
    target = output or default_name(g.name, graph, fmt)
    from .fileio import check_target

    check_target(target)   # before a long layout, not after
    if fmt == "dot":
        data: bytes | str = source
    else:
        from .render.layout import layout

        data = layout(source, fmt)
    for _, (_, cc, ss) in zip(strategies, results):
        err.print(summary_line(ss) if not compare else f"{cc.strategy}: " + summary_line(ss).plain)
    _write(target, data)


def _frames(g, c, s, steps: str | None, animate: str | None, collapse: bool, max_frames: int) -> None:
    from .fileio import check_target
    from .render.dot import build_dot
    from .render.frames import build_frames, count_merges
    from .render.html import frames_page
    from .render.layout import layout

    n = count_merges(c) + 1
    if n > max_frames:
        raise XcvizError(f"{n} frames (one per merge, plus the final one) exceed --max-frames {max_frames}",
                         hint="raise --max-frames, or render a smaller graph")
    if steps:
        if os.path.exists(steps) and not os.path.isdir(steps):
            raise XcvizError("--steps needs a folder", where=steps)
        parent = os.path.dirname(os.path.abspath(steps))
        if not os.path.isdir(parent):
            raise XcvizError("parent folder does not exist", where=steps)
    if animate:
        check_target(animate)
    frames = build_frames(g, c, s)
    rendered = []
    for f in frames:
        svg_text = layout(build_dot(g, f.view, collapse=collapse), "svg").decode("utf-8")
        rendered.append((svg_text, f.view.caption))
    if steps:
        os.makedirs(steps, exist_ok=True)
        width = max(3, len(str(len(frames))))
        for k, (svg_text, _) in enumerate(rendered):
            _write(os.path.join(steps, f"frame_{k + 1:0{width}d}.svg"), svg_text)
    if animate:
        from .render.tables import title

        _write(animate, frames_page(f"{title(g, c)}: cluster formation", rendered))
