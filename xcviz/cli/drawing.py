"""`xcviz render`: the clustering as a picture (SVG, PNG or DOT), collapsed, frame by frame, or compared."""
from __future__ import annotations

import os
import sys
from enum import Enum
from typing import Optional

import typer

from ..errors import XcvizError
from ..pipeline import AnalysisOptions
from .base import GraphArg, Output, analyse, analysis_command
from .helpfmt import LIMITS
from .output import console, emit_file

SUFFIX_FORMATS = {".svg": "svg", ".png": "png", ".dot": "dot", ".gv": "dot"}


class ParamsMode(str, Enum):
    fold = "fold"
    show = "show"
    hide = "hide"


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
           params: ParamsMode = typer.Option(ParamsMode.fold, "--params", case_sensitive=False,
                                             help="parameters (weights, initializers, constants): fold into their consumer's label, show as nodes, or hide"),
           scope: Optional[str] = typer.Option(None, "--scope", metavar="PATH", show_default=False,
                                               help="draw one of the model's layers (model/layers.0): its ops, or its sub-layers when it is large"),
           depth: Optional[int] = typer.Option(None, "--depth", metavar="N", show_default=False, min=1,
                                               help="draw the layers N levels below the top (or below --scope), one box each"),
           max_frames: int = typer.Option(500, "--max-frames", metavar="N", rich_help_panel=LIMITS, help="refuse --steps/--animate with more frames"),
           *, options: AnalysisOptions) -> None:
    """Draw the clusters, fallback nodes (with reasons) and boundary edges (with bytes) as SVG, PNG or DOT."""
    from ..render.tables import summary_line

    if output:
        from ..fileio import check_target

        check_target(output)  # a path that cannot be written is said before a suffix that does not fit
    fmt = _format(svg, png, dot, output)
    strategies = _strategies(compare, options.strategy, bool(steps or animate))
    results = [analyse(graph, options.replace(strategy=strategies[0]))]
    results += [analyse(results[0].graph, options.replace(strategy=st)) for st in strategies[1:]]
    first, err = results[0], console(sys.stderr)
    named_view = "collapsed" if collapse else ""   # chosen, not automatic: the plain name stays the default picture
    if (scope is not None or depth is not None) and (compare or steps or animate):
        raise XcvizError("--scope/--depth do not combine with --compare, --steps or --animate",
                         hint="draw the scope on its own")
    plan = _scope_plan(first.graph, first.clustering, scope, depth, collapse, err, params.value)
    if plan == "collapse":
        collapse, plan = True, None
    if plan is not None:
        target = output or default_name(graph, fmt, plan[2])
        data = _scope_picture(first, plan, fmt, target, params.value, collapse)
        _say_capped(data, fmt, err)
        err.print(summary_line(first.stats))
        emit_file(target, data)
        return
    if collapse is None:
        collapse = _auto_collapse(len(first.graph.nodes), err)
    if steps or animate:
        _frames(first, graph, steps, animate, collapse, max_frames, params.value)
        if not (svg or png or dot or output):
            err.print(summary_line(first.stats))
            return
    target = output or default_name(graph, fmt, "compare-" + "-".join(strategies) if compare else named_view)
    data = _picture(results, strategies if compare else None, collapse, fmt, target, params.value)
    _say_capped(data, fmt, err)
    for a in results:
        err.print(summary_line(a.stats) if not compare else f"{a.clustering.strategy}: " + summary_line(a.stats).plain)
    emit_file(target, data)


def _format(svg: bool, png: bool, dot: bool, output: str | None) -> str:
    """The picture's format: the flag's, else the -o suffix's (svg by default); a suffix that names no format
    xcviz writes, or another format than the flag's, is an error (out.pdf must not hold SVG)."""
    chosen = [f for f, on in (("svg", svg), ("png", png), ("dot", dot)) if on]
    if len(chosen) > 1:
        raise XcvizError("choose one of --svg, --png, --dot")
    suffix = os.path.splitext(output)[1].lower() if output else ""
    if suffix and suffix not in SUFFIX_FORMATS:
        raise XcvizError(f"xcviz render does not write {suffix} files", where=output,
                         hint="name the file " + ", ".join(SUFFIX_FORMATS) + " (the format follows the suffix)")
    if suffix and chosen and SUFFIX_FORMATS[suffix] != chosen[0]:
        raise XcvizError(f"--{chosen[0]} does not write a {suffix} file", where=output,
                         hint=f"name it .{chosen[0]}, or drop --{chosen[0]}: the format follows the suffix")
    return chosen[0] if chosen else SUFFIX_FORMATS.get(suffix, "svg")


def _strategies(compare: str | None, strategy: str, frames: bool) -> list[str]:
    if not compare:
        return [strategy]
    strategies = [s.strip() for s in compare.split(",") if s.strip()]
    if len(strategies) < 2:
        raise XcvizError("--compare needs two strategies or more", hint="write --compare greedy,mark")
    if frames:
        raise XcvizError("--compare does not combine with --steps/--animate", hint="render each strategy's frames on its own")
    return strategies


def _auto_collapse(n: int, err) -> bool:
    from ..render.collapse import AUTO_COLLAPSE

    if n <= AUTO_COLLAPSE:
        return False
    err.print(f"note: {n:,} nodes > {AUTO_COLLAPSE:,}: drawing each cluster as one node "
              "(use --expand to draw every node)", markup=False)
    return True


def _scope_plan(graph, clustering, scope: str | None, depth: int | None, collapse: bool | None, err, params: str = "fold"):
    """What to draw by the model's layers (ir.scopes): (scope path, absolute depth or None for its ops, view
    name), or None to draw the whole graph as before. Chosen when --scope or --depth is given, or when the graph
    has layers and more than READABLE nodes and neither --collapse nor --expand was asked for."""
    from ..ir.scopes import clean, scope_tree
    from ..render.dot_scopes import READABLE

    tree = scope_tree(graph)
    n = len(graph.nodes)
    if scope is None and depth is None:
        if collapse is not None or n <= READABLE or tree.flat:
            return None
    under = clean(scope or "")
    if under not in tree:
        tops = ", ".join(c.path for c in tree.root.children[:6]) or "none: the graph has no layers"
        raise XcvizError(f"no scope {scope!r} in {graph.name}", hint=f"top scopes: {tops} "
                         "(`xcviz cluster --json` lists every scope)")
    base = tree.find(under).depth
    name = ("scope-" + under.replace("/", ".")) if under else "scopes"
    size = len(tree.descendants(under))
    if depth is None and under and (size <= READABLE or collapse is False):
        return under, None, name   # one layer, op by op
    if tree.flat or not tree.find(under).children:
        if depth is not None:
            err.print(f"note: {under or graph.name} has no layers below it: drawing its ops", markup=False)
        return under, None, name
    from ..ir.scopes import fold_repeats
    from ..render.dot_scopes import MAX_BOXES, auto_depth
    from ..render.params import stored_params

    hidden = stored_params(graph, params).nodes if params != "show" else frozenset()
    if depth is not None:
        d = base + depth
    else:
        d, boxes = auto_depth(tree, fold_repeats(tree, clustering), under, hidden)
        if boxes > MAX_BOXES:
            if under or collapse is not None:
                raise XcvizError(f"{under or graph.name} has {boxes:,} layers at every depth: too many to draw",
                                 hint="name a deeper --scope PATH, or --depth N")
            err.print(f"note: {size:,} nodes > {READABLE} and its layers make no readable index ({boxes:,} boxes "
                      "at every depth): drawing each cluster as one node (--depth N or --scope PATH draw layers, "
                      "--expand every op)", markup=False)
            return "collapse"
        err.print(f"note: {size:,} nodes > {READABLE}: drawing {'the top scopes' if not under else 'the layers of ' + under}"
                  f" ({d - base} level{'s' if d - base != 1 else ''} deep, {boxes} boxes; --scope PATH draws one,"
                  " --depth N another depth, --expand every op)", markup=False)
    return under, d, name + (f".depth{d - base}" if depth is not None else "")


def _scope_picture(a, plan, fmt: str, target: str, params: str, collapse: bool | None) -> bytes | str:
    from ..fileio import check_target
    from ..ir.scopes import fold_repeats, scope_tree
    from ..render.dot import build_dot
    from ..render.dot_scopes import restrict, scope_index_dot
    from ..render.params import stored_params
    from ..render.view import final_view

    under, depth, _ = plan
    graph, tree = a.graph, scope_tree(a.graph)
    view = final_view(graph, a.clustering, a.stats)
    if depth is None:
        hidden = stored_params(graph, params).nodes if params != "show" else frozenset()
        sub, subview = restrict(graph, view, tree.descendants(under), hidden) if under else (graph, view)
        if under:
            subview.title += f"\nscope {under}"
        source = build_dot(sub, subview, collapse=bool(collapse), params=params)
    else:
        source = scope_index_dot(graph, view, tree, fold_repeats(tree, a.clustering), under, depth,
                                 stored_params(graph, params))
    check_target(target)
    if fmt == "dot":
        return source
    from ..render.layout import layout

    return layout(source, fmt)


def _say_capped(data, fmt: str, err) -> None:
    from ..render.layout import capped

    why = capped(data, fmt) if isinstance(data, bytes) else None
    if why:
        err.print(f"note: the picture is too large to read whole: {why} (draw less with --scope PATH or --depth N, "
                  "or --collapse)", markup=False)


def default_name(source: str, ext: str, view: str = "") -> str:
    """`<input file stem>[.<view>].<ext>` in the current directory (render/names.py): not the graph's internal
    name (every torch export is main_graph), and the view (`collapsed`, `compare-greedy-mark`, `step_001`) so
    two pictures of one model do not overwrite each other."""
    from ..render.names import output_name

    return output_name(source, ext, view)


def _picture(results: list, labels: list[str] | None, collapse: bool, fmt: str, target: str,
             params: str = "fold") -> bytes | str:
    """The DOT of one analysis, or of several side by side under `labels`, laid out unless fmt is dot."""
    from ..fileio import check_target
    from ..render.dot import build_dot, compare_dot
    from ..render.view import final_view

    views = [final_view(a.graph, a.clustering, a.stats) for a in results]
    graph = results[0].graph
    source = compare_dot(graph, list(zip(labels, views)), collapse=collapse, params=params) if labels else \
        build_dot(graph, views[0], collapse=collapse, params=params)
    check_target(target)   # before a long layout, not after
    if fmt == "dot":
        return source
    from ..render.layout import layout

    return layout(source, fmt)


def _frames(a, source: str, steps: str | None, animate: str | None, collapse: bool, max_frames: int,
            params: str = "fold") -> None:
    """Frame SVGs into `steps` as `<input stem>.step_001.svg`, ... (two models' frames can share a folder),
    and/or the page that plays them into `animate`, which may lie inside `steps`."""
    from ..fileio import check_target
    from ..render.animation import frame_svgs, steps_page
    from ..render.frames import count_merges

    n = count_merges(a.clustering) + 1
    if n > max_frames:
        raise XcvizError(f"{n} frames (one per merge, plus the final one) exceed --max-frames {max_frames}",
                         hint="raise --max-frames, or render a smaller graph")
    if steps:
        if os.path.exists(steps) and not os.path.isdir(steps):
            raise XcvizError("--steps needs a folder", where=steps)
        if not os.path.isdir(os.path.dirname(os.path.abspath(steps))):
            raise XcvizError("parent folder does not exist", where=steps)
    if steps:
        os.makedirs(steps, exist_ok=True)   # before checking --animate, which may name a file inside it
    if animate:
        check_target(animate)
    rendered = frame_svgs(a.graph, a.clustering, a.stats, collapse=collapse, params=params)
    if steps:
        width = max(3, len(str(len(rendered))))
        for k, (svg_text, _) in enumerate(rendered):
            emit_file(os.path.join(steps, default_name(source, "svg", f"step_{k + 1:0{width}d}")), svg_text)
    if animate:
        emit_file(animate, steps_page(a.graph, a.clustering, rendered))
