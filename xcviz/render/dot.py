"""Views to DOT text: clusters as filled subgraphs, fallback nodes in red, boundary edges in amber by bytes.

SVG classes (documented, tested): every kept cluster is a `<g class="cluster xc_cluster">` whose title is a
text node `xc_cluster_title` (tied above the cluster's sources by invisible `xc_title_edge` edges); nodes carry
`xc_node` plus `xc_fallback` (and `xc_code_<code>`), `xc_candidate`, `xc_input`, `xc_output`, `xc_group`
(a collapsed cluster) or `xc_legend`; edges carry `xc_boundary`, `xc_intra`, `xc_plain` or `xc_control`.
Parameters fold into their consumers' labels (params.py). The collapsed view is drawn by collapse.py; the
pieces both views share are in dot_parts.py."""
from __future__ import annotations

import re

from ..ir import Graph
from .collapse import draw_collapsed
from .dot_parts import (FALLBACK_FILL, IO_FILL, QUIET, add_inputs_outputs, draw_node, edge_text, penwidth,
                        html_title, tensor_source, text, text_width, tint)
from .params import StoredParams, folded_lines, is_stored, stored_params
from .tables import BOUNDARY, CLUSTER_COLORS, FALLBACK
from .units import fmt_bytes
from .view import View

EDGE_LABEL_LIMIT = 500   # above this many nodes boundary-edge labels move to tooltips (layout time, clutter)
BIG_GRAPH = 500          # above this, bound network simplex and crossing minimisation (see benchmarks/)


def graph_attrs(n_nodes: int, title: str) -> dict:
    # nodesep 0.45 (not 0.3): two labelled edges leaving one node keep their labels apart in fonts wider than
    # the Helvetica metrics Graphviz places them with (tests/render/test_dot.py checks every example)
    attrs = {"rankdir": "TB", "fontname": "Helvetica", "fontsize": "12", "nodesep": "0.45", "ranksep": "0.4",
             "labelloc": "t", "labeljust": "l", "label": html_title(title), "tooltip": text(title)}
    if n_nodes > BIG_GRAPH:
        # The x-coordinate network simplex on tens of thousands of virtual nodes dominates (see benchmarks/).
        attrs.update({"nslimit": "2", "nslimit1": "2", "mclimit": "0.3", "searchsize": "10"})
    return attrs


def new_digraph(name: str, n_nodes: int, title: str):
    import graphviz

    return graphviz.Digraph(name, graph_attr=graph_attrs(n_nodes, title),
                            node_attr={"fontname": "Helvetica", "fontsize": "10", "shape": "box", "style": "rounded"},
                            edge_attr={"fontname": "Helvetica", "fontsize": "9", "arrowsize": "0.6"})


def cluster_title(sub, graph: Graph, grp, prefix: str, k: int, params: StoredParams, inputs: dict[str, int]) -> None:
    """The cluster's title as a text node on the cluster's first rank, tied above its sources by invisible
    edges: edges entering the cluster then route around it, where a subgraph label would be crossed."""
    node_id = f"{prefix}t{k}"
    sub.node(node_id, text(grp.label), shape="plaintext", fontsize="11", fontcolor="#222222", height="0.2",
             width=f"{text_width(grp.label, 11) / 72:.2f}", tooltip=text(grp.label), **{"class": "xc_cluster_title"})
    members = set(grp.members)
    for i in grp.members:
        node = graph.nodes[i]
        if params.hidden_node(i):
            continue
        fed = any(s in members for r, s in zip(node.inputs, graph.input_sources(i))
                  if r and r not in inputs and not is_stored(graph, r, params, inputs))
        if not fed:
            sub.edge(node_id, f"{prefix}n{i}", style="invis", tooltip=text(grp.label), **{"class": "xc_title_edge"})


def draw_expanded(g, graph: Graph, view: View, prefix: str = "", params: StoredParams | None = None) -> None:
    """Every node, clusters as filled subgraphs; adds to `g` (a Digraph or subgraph). Parameters fold into
    their consumers' labels unless `params` says otherwise."""
    params = params or stored_params(graph)
    n = len(graph.nodes)
    labels_on_edges = n <= EDGE_LABEL_LIMIT
    input_id = add_inputs_outputs(g, graph, prefix, params)
    inputs = {v.name: k for k, v in enumerate(graph.inputs)}

    def node_stmt(sub, i: int) -> None:
        if not params.hidden_node(i):
            draw_node(sub, graph, view, i, prefix, folded_lines(graph, i, params, inputs))

    for k, grp in enumerate(view.groups):
        with g.subgraph(name=f"cluster_{prefix}{k}") as sub:
            sub.attr(label="", style="filled,rounded", fillcolor=tint(grp.color, "30"), color=grp.color,
                     penwidth="4" if grp.highlight else "2", tooltip=text(grp.label), **{"class": "xc_cluster"})
            cluster_title(sub, graph, grp, prefix, k, params, inputs)
            for i in grp.members:
                node_stmt(sub, i)
    for i in range(n):
        if view.group_of[i] < 0:
            node_stmt(g, i)

    dims = graph.dims

    def edge(ref: str, dst_id: str, dst_group: int, dst_name: str) -> None:
        if params.mode != "show" and is_stored(graph, ref, params, inputs):
            return
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
        if params.hidden_node(j):
            continue
        for ref in node.inputs:
            if ref:
                edge(ref, f"{prefix}n{j}", view.group_of[j], node.name)
        for ref in node.control_inputs:
            if params.hidden_node(graph.index[ref]):
                continue
            g.edge(f"{prefix}n{graph.index[ref]}", f"{prefix}n{j}", style="dashed", color=QUIET,
                   tooltip=text(f"control: {ref} → {node.name}"), **{"class": "xc_control"})
    for k, ref in enumerate(graph.outputs):
        edge(ref, f"{prefix}o{k}", -1, f"output {ref}")


def legend(g, view: View, prefix: str = "", collapsed: bool = False, params: StoredParams | None = None) -> None:
    """A small HTML-like table node; every string in it is ours (no user text). Text cells get a width that
    fits the widest common sans-serif font, so the legend is not cut off where Helvetica is missing."""
    colors = [grp.color for grp in view.groups[:len(CLUSTER_COLORS)]] or CLUSTER_COLORS[:3]
    swatches = "".join(f'<TD BGCOLOR="{c}" WIDTH="10"> </TD>' for c in dict.fromkeys(colors))
    span = len(dict.fromkeys(colors))

    def cell(s: str) -> str:
        return f'<TD ALIGN="LEFT" WIDTH="{text_width(s, 9)}">{s}</TD>'

    rows = [
        f'<TR>{swatches}{cell("cluster (one color each): id · ops · est. speedup")}</TR>',
        f'<TR><TD COLSPAN="{span}" BGCOLOR="{FALLBACK_FILL}" COLOR="{FALLBACK}" BORDER="2">fallback</TD>'
        f'{cell("runs natively; the label gives the reason code and words")}</TR>',
        f'<TR><TD COLSPAN="{span}" BGCOLOR="{BOUNDARY}"> </TD>'
        f'{cell("boundary edge: thicker = more bytes (shape · bytes)")}</TR>',
        f'<TR><TD COLSPAN="{span}">- - -</TD>{cell("control edge")}</TR>',
        f'<TR><TD COLSPAN="{span}" BGCOLOR="{IO_FILL}">in / out</TD>{cell("graph input / graph output")}</TR>',
    ]
    if params is not None and params.mode == "fold" and (params.inputs or params.nodes):
        rows.append(f'<TR><TD COLSPAN="{span}">W ‹m×n›</TD>{cell("parameter folded into its consumer: shape, dtype")}</TR>')
    if collapsed:
        rows.append(f'<TR><TD COLSPAN="{span}"> </TD>{cell("collapsed: one node per cluster, edges sum the bytes between them")}</TR>')
    html = '<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="2" CELLPADDING="3">' + "".join(rows) + "</TABLE>>"
    g.node(f"{prefix}legend", html, shape="plain", fontsize="9", tooltip="legend", **{"class": "xc_legend"})


def _draw(g, graph: Graph, view: View, collapse: bool, prefix: str, params: StoredParams) -> None:
    (draw_collapsed if collapse else draw_expanded)(g, graph, view, prefix, params)


def build_dot(graph: Graph, view: View, *, collapse: bool = False, show_legend: bool = True,
              params: str = "fold") -> str:
    """The whole picture as DOT text (deterministic: same input, same bytes); `params` is fold, show or hide."""
    p = stored_params(graph, params)
    g = new_digraph("xcviz", len(graph.nodes), view.title + (f"\n{view.caption}" if view.caption else ""))
    _draw(g, graph, view, collapse, "", p)
    if view.bodies:  # Loop/If/Scan bodies: dashed frames beside the graph (dot_bodies.py)
        from .dot_bodies import draw_bodies

        draw_bodies(g, graph, view.bodies, draw_collapsed if collapse else draw_expanded)
    if show_legend:
        legend(g, view, collapsed=collapse, params=p)
    return g.source


def compare_dot(graph: Graph, views: list[tuple[str, View]], *, collapse: bool = False, params: str = "fold") -> str:
    """Several clusterings of one graph side by side, each in its own outer frame."""
    p = stored_params(graph, params)
    g = new_digraph("xcviz", len(graph.nodes) * len(views), f"{graph.name}: " + " vs ".join(n for n, _ in views))
    for name, view in views:
        prefix = re.sub(r"[^A-Za-z0-9]", "_", name) + "_"
        with g.subgraph(name=f"cluster_{prefix}compare") as sub:
            sub.attr(label=text(view.title), style="rounded", color="#BBBBBB", fontsize="14",
                     **{"class": "xc_compare"})
            _draw(sub, graph, view, collapse, prefix, p)
    legend(g, views[0][1], collapsed=collapse, params=p)
    return g.source
