"""Control-flow bodies in the picture: each Loop/If/Scan body drawn as a dashed frame beside the graph, its own
clusters inside, tied to its node by a dashed `xc_body` edge.

A frame is a DOT subgraph `cluster_b<k>_frame` (class `xc_body`) holding the body drawn like the main graph
with node ids prefixed `b<k>_`; nested bodies get their own frames inside their parent's, so the picture
reads the way TF's functional While/If nest. Deterministic: bodies in node order, clusters in their order."""
from __future__ import annotations

from ..clustering.bodies import BodyClustering
from .bodies_view import summary
from .dot_parts import QUIET, text
from .params import stored_params
from .tables import cluster_color
from .view import Group, View, ops_word


def body_view(b: BodyClustering) -> View:
    """The body's own clusters; a body compiled inside its node's cluster is one group in that cluster's color."""
    c, g = b.clustering, b.graph
    if b.compiled_in:
        n = len(g.nodes)
        grp = Group(b.compiled_in, list(range(n)), _color(b.compiled_in), f"inside {b.compiled_in} · {ops_word(n)}")
        return View(b.label, [grp] if n else [], [0] * n, [None] * n, [None] * n, list(c.device))
    groups = [Group(c.cluster_id(k), list(m), cluster_color(k), f"{c.cluster_id(k)} · {ops_word(len(m))}")
              for k, m in enumerate(c.clusters)]
    code = [None if c.cluster_of[i] >= 0 else (c.code[i] or "fallback") for i in range(len(g.nodes))]
    return View(b.label, groups, list(c.cluster_of), code, list(c.reason), list(c.device))


def draw_bodies(g, graph, bodies: list[BodyClustering], draw, prefix: str = "") -> None:
    """A frame per body, next to `graph`'s drawing in `g`; `draw(g, graph, view, prefix, params)` draws one
    graph (expanded or collapsed, as the main picture); `prefix` is the enclosing graph's node-id prefix."""
    for k, b in enumerate(bodies):
        inner = f"{prefix}b{k}_"
        with g.subgraph(name=f"cluster_{inner}frame") as sub:
            label = summary(b)
            # a body compiled inside its node's cluster is framed in that cluster's color
            color = _color(b.compiled_in) if b.compiled_in else QUIET
            sub.attr(label=text(*_wrap(label)), style="dashed,rounded", color=color, fontsize="11",
                     tooltip=text(label), penwidth="2" if b.compiled_in else "1", **{"class": "xc_body"})
            view = body_view(b)
            draw(sub, b.graph, view, inner, stored_params(b.graph))
            draw_bodies(sub, b.graph, b.children, draw, inner)
        j = graph.index.get(b.node)
        if j is not None:
            first = f"{inner}o0" if b.graph.outputs else None
            if first:
                g.edge(f"{prefix}n{j}", first, style="dashed", color=QUIET, arrowhead="none", constraint="false",
                       tooltip=text(f"{b.label}"), **{"class": "xc_body"})


def _wrap(label: str) -> list[str]:
    """The frame's label in lines of at most ~60 characters (split at '; ')."""
    return label.split("; ")


def _color(cluster_id: str) -> str:
    return cluster_color(int(cluster_id.rsplit("_", 1)[1]))
