"""Strategy `greedy`: the seed article's demo - walk the node list, cut at every unsupported op."""
from __future__ import annotations

from ..ops import REGISTRY, ZERO_SIZE
from .options import Candidates, ClusterOptions
from .result import Attempt, Clustering, finish


def list_order_greedy(graph, cands: Candidates, opts: ClusterOptions) -> Clustering:
    groups: list[tuple[list[int], int, bool]] = []
    attempts: list[Attempt] = []
    current: list[int] = []
    eff = 0

    def close() -> None:
        nonlocal current, eff
        if current:
            groups.append((current, eff, any(graph.nodes[v].compile is True for v in current)))
        current, eff = [], 0

    for j, node in enumerate(graph.nodes):
        if not cands.ok[j] or len(current) >= opts.max_size:
            close()
        if cands.ok[j]:
            if current and opts.record:
                attempts.append(Attempt(-1, current[-1], j, True))
            current.append(j)
            opdef = REGISTRY.ops.get(node.op) if node.known else None
            eff += 0 if opdef is not None and ZERO_SIZE in opdef.groups else 1
    close()
    return finish(opts, graph, cands, groups, attempts)
