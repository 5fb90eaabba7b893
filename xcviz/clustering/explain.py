"""The story of one node: candidate or not, every merge its cluster took part in, and the outcome."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.scopes import scope_tree
from .bodies import CONTROL_OPS
from .result import PHASE_NAMES, Clustering


@dataclass
class Step:
    phase: str
    merged: bool
    producer_side: list[str]     # members of the producer-side cluster at that moment
    consumer_side: list[str]
    reason: str | None = None
    path: list[str] = field(default_factory=list)

    def text(self) -> str:
        a, b = _group(self.producer_side), _group(self.consumer_side)
        if self.merged:
            return f"{self.phase}: merged {a} -> {b}"
        return f"{self.phase}: refused {a} -> {b}: {self.reason}"


def _group(names: list[str]) -> str:
    if len(names) == 1:
        return names[0]
    if len(names) <= 4:
        return "{" + ", ".join(names) + "}"
    return "{" + ", ".join(names[:3]) + f", ... {len(names) - 3} more" + "}"


def replay(clustering: Clustering, n: int, focus: int | None = None):
    """Yield (attempt, producer members, consumer members) in order; members as node positions."""
    parent = list(range(n))
    members: dict[int, list[int]] = {}  # of each group's root; a node alone is absent

    def find(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    attempts = clustering.attempts
    # only the attempts yielded are built as objects: a big graph logs far more attempts than one node's story
    # shows, and building each as an object would cost more than the replay
    for k, (src, dst, merged) in enumerate(zip(*clustering.attempt_columns())):
        ra, rb = find(src), find(dst)
        if focus is None or find(focus) in (ra, rb):
            yield attempts[k], sorted(members.get(ra, [ra])), sorted(members.get(rb, [rb]))
        if merged and ra != rb:
            parent[rb] = ra
            members[ra] = members.get(ra, [ra]) + members.pop(rb, [rb])


def story(graph, clustering: Clustering, i: int) -> dict:
    names = [nd.name for nd in graph.nodes]
    steps = [Step(PHASE_NAMES.get(a.phase, str(a.phase)), a.merged, [names[v] for v in p], [names[v] for v in c],
                  a.reason, [names[v] for v in a.path])
             for a, p, c in replay(clustering, len(names), focus=i)]
    k = clustering.cluster_of[i]
    extra = {}
    if graph.nodes[i].op in CONTROL_OPS:  # a Loop/If/Scan: its bodies' clusters (bodies.py)
        extra["bodies"] = [b for b in clustering.bodies if b.node == names[i]]
    return extra | {
        "node": names[i], "op": graph.nodes[i].op, "op_type": graph.nodes[i].op_type,
        "device": clustering.device[i], "candidate": clustering.candidate[i],
        "not_candidate_reason": None if clustering.candidate[i] else clustering.reason[i],
        "steps": steps,
        "cluster": clustering.cluster_id(k) if k >= 0 else None,
        "cluster_nodes": [names[v] for v in clustering.clusters[k]] if k >= 0 else [],
        "reason": clustering.reason[i] if k < 0 else None,
        "reason_code": clustering.code[i] if k < 0 else None,
    } | ({"module": graph.nodes[i].module} if graph.nodes[i].module else {}) \
        | _scope(graph, i)  # (module: PyTorch programs, display only; scope: the model's layer, ir.scopes)


def _scope(graph, i: int) -> dict:
    """{"scope": the node's layer path} where the graph has layers (ir.scopes), else nothing."""
    tree = scope_tree(graph)
    return {} if tree.flat else {"scope": tree.scope_of(i)}
