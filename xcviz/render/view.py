"""What a picture shows: groups to draw as clusters, per-node fallback codes, and captions, as plain data.

A View is built from a finished clustering (the final picture) or from a step of the merge replay (a frame);
the DOT builders only ever read Views, so frames, --compare and the collapsed view share one drawing code."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..clustering import Clustering
from ..cost import Stats
from ..ir import Graph
from .tables import cluster_color
from .units import fmt_speedup

PENDING = "#999999"   # a group in a frame that the minimum-size filter will drop


@dataclass
class Group:
    id: str               # "cluster_0"; in frames "group_<first member>"
    members: list[int]    # node positions, sorted
    color: str
    label: str            # "cluster_0 · 3 ops · est. 1.13×"
    highlight: bool = False


@dataclass
class View:
    title: str
    groups: list[Group]
    group_of: list[int]               # group index per node, -1 when in none
    code: list[str | None]            # fallback reason code per node outside every group (None: plain candidate)
    reason: list[str | None]
    device: list[str]
    caption: str = ""                 # the decision shown under a frame
    notes: list[str] = field(default_factory=list)
    bodies: list = field(default_factory=list)   # clustering.bodies.BodyClustering per Loop/If/Scan body


def ops_word(n: int) -> str:
    return f"{n} op" if n == 1 else f"{n} ops"


def final_view(graph: Graph, clustering: Clustering, stats: Stats, title: str | None = None) -> View:
    """The result after the minimum-size filter: kept clusters; every other node falls back with its code."""
    from .tables import title as default_title

    groups = []
    for k, members in enumerate(clustering.clusters):
        detail = stats.clusters_detail[k] if k < len(stats.clusters_detail) else None
        speed = "est. unknown" if not detail else "folds to a constant" if getattr(detail, "constant", False) \
            else "est. " + fmt_speedup(detail.speedup_estimate)
        cid = clustering.cluster_id(k)
        groups.append(Group(cid, list(members), cluster_color(k), f"{cid} · {ops_word(len(members))} · {speed}"))
    n = len(graph.nodes)
    code = [None if clustering.cluster_of[i] >= 0 else (clustering.code[i] or "fallback") for i in range(n)]
    from .bodies_view import bodies_of

    return View(title or default_title(graph, clustering), groups, list(clustering.cluster_of), code,
                list(clustering.reason), list(clustering.device), bodies=bodies_of(graph, clustering))
