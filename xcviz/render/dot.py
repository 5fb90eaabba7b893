"""Views to DOT text: clusters as filled subgraphs, fallback nodes in red, boundary edges in amber by bytes.

SVG classes (documented, tested): every kept cluster is a `<g class="cluster xc_cluster">`; nodes carry
`xc_node` plus `xc_fallback` (and `xc_code_<code>`), `xc_candidate`, `xc_input`, `xc_output`, `xc_group`
(a collapsed cluster) or `xc_legend`; edges carry `xc_boundary`, `xc_intra`, `xc_plain` or `xc_control`.
The collapsed view is drawn by collapse.py; the pieces both views share are in dot_parts.py."""
from __future__ import annotations

import re

from ..ir import Graph
from .collapse import draw_collapsed
from .dot_parts import (FALLBACK_FILL, IO_FILL, QUIET, add_inputs_outputs, draw_node, edge_text, penwidth,
                        tensor_source, text, tint)
from .tables import BOUNDARY, CLUSTER_COLORS, FALLBACK
from .units import fmt_bytes
from .view import View

EDGE_LABEL_LIMIT = 500   # above this many nodes boundary-edge labels move to tooltips (layout time, clutter)
BIG_GRAPH = 500          # above this, bound network simplex and crossing minimisation (see benchmarks/)


def graph_attrs(n_nodes: int, title: str) -> dict:
    attrs = {"rankdir": "TB", "fontname": "Helvetica", "fontsize": "12", "nodesep": "0.3", "ranksep": "0.4",
             "labelloc": "t", "labeljust": "l", "label": text(title), "tooltip": text(title)}
    if n_nodes > BIG_GRAPH:
        # The x-coordinate network simplex on tens of thousands of virtual nodes dominates (see benchmarks/).
        attrs.update({"nslimit": "2", "nslimit1": "2", "mclimit": "0.3", "searchsize": "10"})
    return attrs


def new_digraph(name: str, n_nodes: int, title: str):
    import graphviz

    return graphviz.Digraph(name, graph_attr=graph_attrs(n_nodes, title),
                            node_attr={"fontname": "Helvetica", "fontsize": "10", "shape": "box", "style": "rounded"},
                            edge_attr={"fontname": "Helvetica", "fontsize": "9", "arrowsize": "0.6"})


def draw_expanded(g, graph: Graph, view: View, prefix: str = "") -> None:
    """Every node, clusters as filled subgraphs; adds to `g` (a Digraph or subgraph)."""
    n = len(graph.nodes)
    labels_on_edges = n <= EDGE_LABEL_LIMIT
    input_id = add_inputs_outputs(g, graph, prefix)

    def node_stmt(sub, i: int) -> None:
        draw_node(sub, graph, view, i, prefix)

    for k, grp in enumerate(view.groups):
        with g.subgraph(name=f"cluster_{prefix}{k}") as sub:
            sub.attr(label=text(grp.label), style="filled,rounded", fillcolor=tint(grp.color, "30"), color=grp.color,
                     penwidth="4" if grp.highlight else "2", fontcolor="#222222", tooltip=text(grp.label),
                     **{"class": "xc_cluster"})
            for i in grp.members:
                node_stmt(sub, i)
    for i in range(n):
        if view.group_of[i] < 0:
            node_stmt(g, i)

    inputs = {v.name: k for k, v in enumerate(graph.inputs)}
    dims = graph.dims

    def edge(ref: str, dst_id: str, dst_group: int, dst_name: str) -> None:
        kind, pos = tensor_source(graph, ref, inputs)
        src_id = input_id(pos) if kind == 0 else f"{prefix}n{pos}"
        src_group = view.group_of[pos] if kind == 1 else -1
        t = graph.tensor_type(ref).bind(dims)
        nbytes = t.nbytes()
        tip = [f"{ref} → {dst_name}", edge_text(t, nbytes)]
        if src_group != dst_group and (src_group >= 0 or dst_group >= 0):
            a = view.groups[src_group].id if src_group >= 0 else "outside"
            b = view.groups[dst_group].id if dst_group >= 0 else "outside"
            tip.append(f"boundary: {a} → {b}")
            attrs = {"color": BOUNDARY, "penwidth": penwidth(nbytes), "class": "xc_boundary"}
            if labels_on_edges:
                attrs.update(label=text(str(t), fmt_bytes(nbytes)), fontcolor="#7A5200")
        elif src_group >= 0:
            attrs = {"color": tint(view.groups[src_group].color, "99"), "penwidth": "1", "class": "xc_intra"}
        else:
            attrs = {"color": QUIET, "penwidth": "1", "class": "xc_plain"}
        g.edge(src_id, dst_id, tooltip=text(*tip), **attrs)

    for j, node in enumerate(graph.nodes):
        for ref in node.inputs:
            if ref:
                edge(ref, f"{prefix}n{j}", view.group_of[j], node.name)
        for ref in node.control_inputs:
            g.edge(f"{prefix}n{graph.index[ref]}", f"{prefix}n{j}", style="dashed", color=QUIET,
                   tooltip=text(f"control: {ref} → {node.name}"), **{"class": "xc_control"})
    for k, ref in enumerate(graph.outputs):
        edge(ref, f"{prefix}o{k}", -1, f"output {ref}")


def legend(g, view: View, prefix: str = "", collapsed: bool = False) -> None:
    """A small HTML-like table node; every string in it is ours (no user text)."""
    colors = [grp.color for grp in view.groups[:len(CLUSTER_COLORS)]] or CLUSTER_COLORS[:3]
    swatches = "".join(f'<TD BGCOLOR="{c}" WIDTH="10"> </TD>' for c in dict.fromkeys(colors))
    span = len(dict.fromkeys(colors))
    rows = [
        f'<TR>{swatches}<TD ALIGN="LEFT">cluster (one color each): id · ops · est. speedup</TD></TR>',
        f'<TR><TD COLSPAN="{span}" BGCOLOR="{FALLBACK_FILL}" COLOR="{FALLBACK}" BORDER="2">fallback</TD>'
        '<TD ALIGN="LEFT">runs natively; the label gives the reason code</TD></TR>',
        f'<TR><TD COLSPAN="{span}" BGCOLOR="{BOUNDARY}"> </TD>'
        '<TD ALIGN="LEFT">boundary edge: thicker = more bytes (shape · bytes)</TD></TR>',
        f'<TR><TD COLSPAN="{span}">- - -</TD><TD ALIGN="LEFT">control edge</TD></TR>',
        f'<TR><TD COLSPAN="{span}" BGCOLOR="{IO_FILL}">in / out</TD><TD ALIGN="LEFT">graph input / graph output</TD></TR>',
    ]
    if collapsed:
        rows.append(f'<TR><TD COLSPAN="{span}"> </TD><TD ALIGN="LEFT">collapsed: one node per cluster, '
                    'edges sum the bytes between them</TD></TR>')
    html = '<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="2" CELLPADDING="3">' + "".join(rows) + "</TABLE>>"
    g.node(f"{prefix}legend", html, shape="plain", fontsize="9", tooltip="legend", **{"class": "xc_legend"})


def build_dot(graph: Graph, view: View, *, collapse: bool = False, show_legend: bool = True) -> str:
    """The whole picture as DOT text (deterministic: same input, same bytes)."""
    g = new_digraph("xcviz", len(graph.nodes), view.title + (f"\n{view.caption}" if view.caption else ""))
    (draw_collapsed if collapse else draw_expanded)(g, graph, view)
    if show_legend:
        legend(g, view, collapsed=collapse)
    return g.source


def compare_dot(graph: Graph, views: list[tuple[str, View]], *, collapse: bool = False) -> str:
    """Several clusterings of one graph side by side, each in its own outer frame."""
    g = new_digraph("xcviz", len(graph.nodes) * len(views), f"{graph.name}: " + " vs ".join(n for n, _ in views))
    for name, view in views:
        prefix = re.sub(r"[^A-Za-z0-9]", "_", name) + "_"
        with g.subgraph(name=f"cluster_{prefix}compare") as sub:
            sub.attr(label=text(view.title), style="rounded", color="#BBBBBB", fontsize="14",
                     **{"class": "xc_compare"})
            (draw_collapsed if collapse else draw_expanded)(sub, graph, view, prefix)
    legend(g, views[0][1], collapsed=collapse)
    return g.source
