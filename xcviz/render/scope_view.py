"""The clustering read by the model's own layers (ir.scopes): per scope, its ops, clusters and fallbacks, and
the repeated blocks folded; the data the JSON report, the tables and the scope pictures show."""
from __future__ import annotations

from dataclasses import dataclass

from ..clustering import Clustering
from ..ir import Graph
from ..ir.scopes import Fold, ScopeTree, fold_index, fold_repeats, scope_tree


@dataclass(frozen=True, slots=True)
class ScopeStats:
    """One scope's totals over every node under it."""

    path: str
    nodes: int
    clustered: int
    fallbacks: int
    clusters: tuple[int, ...]   # kept clusters with a node under it, in order

    @property
    def coverage(self) -> float:
        return self.clustered / self.nodes if self.nodes else 1.0


def scope_stats(tree: ScopeTree, clustering: Clustering) -> dict[str, ScopeStats]:
    """Every scope's totals, made bottom-up (each node is read once, each scope's cluster set merged once)."""
    cluster_of = clustering.cluster_of
    out: dict[str, ScopeStats] = {}
    for scope in reversed(list(tree)):  # children before parents
        n = clustered = 0
        clusters: set[int] = set()
        for i in scope.nodes:
            n += 1
            k = cluster_of[i]
            if k >= 0:
                clustered += 1
                clusters.add(k)
        for c in scope.children:
            s = out[c.path]
            n += s.nodes
            clustered += s.clustered
            clusters.update(s.clusters)
        out[scope.path] = ScopeStats(scope.path, n, clustered, n - clustered, tuple(sorted(clusters)))
    return out


def scopes_json(graph: Graph, clustering: Clustering) -> dict:
    """The report's `scopes` key (only for a graph with scopes): every scope below the root in preorder, with
    its parent, node count, clusters and fallbacks, and `repeats` on the first of each repeated block."""
    tree = scope_tree(graph)
    if tree.flat:
        return {}
    stats = scope_stats(tree, clustering)
    folds = fold_repeats(tree, clustering)
    first = {f.representative: f for f in folds}
    folded = fold_index(folds)
    out = []
    for scope in tree:
        if not scope.path:
            continue
        s = stats[scope.path]
        entry = {"path": scope.path, "name": scope.name, "parent": scope.path.rpartition("/")[0],
                 "nodes": s.nodes, "clustered": s.clustered, "fallbacks": s.fallbacks,
                 "clusters": [clustering.cluster_id(k) for k in s.clusters]}
        f = first.get(scope.path)
        if f is not None:
            entry["repeats"] = {"count": f.count, "same": list(f.same), "differ": list(f.differ)}
        elif scope.path in folded:
            entry["repeat_of"] = folded[scope.path].representative
        out.append(entry)
    return {"scopes": out}


def fold_summary(folds: tuple[Fold, ...]) -> list[str]:
    """One line per repeated block: `model/layers.0 … layers.31 ×31 (differ: model/layers.5)`."""
    lines = []
    for f in folds:
        line = f"{f.parent + '/' if f.parent else ''}{f.label}"
        if f.differ:
            line += " (differ: " + ", ".join(f.differ[:6]) + (f" +{len(f.differ) - 6}" if len(f.differ) > 6 else "") + ")"
        lines.append(line)
    return lines
