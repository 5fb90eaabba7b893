"""Clustering strategies: `mark` (TensorFlow's MarkForCompilationPass), `greedy` (the seed's demo), `cost` (by benefit)."""
from __future__ import annotations

from .options import STRATEGIES, ClusterOptions, find_candidates, normalize_device  # noqa: F401
from .result import Attempt, Clustering  # noqa: F401


def run_clustering(graph, opts: ClusterOptions | None = None) -> Clustering:
    """Pure: graph + options -> Clustering (clusters, per-node decisions, merge attempts)."""
    from ..ir import gc_paused

    opts = opts or ClusterOptions()
    if opts.op_names == "graph":  # a name may be an opaque op of this graph's own: checked against it
        opts.check_op_names(graph)
    with gc_paused():
        return cluster_with_bodies(graph, opts, 0)


def cluster_with_bodies(graph, opts: ClusterOptions, depth: int) -> Clustering:
    """The pass on `graph`, then on each control-flow body (`Clustering.bodies`, nested `depth` deep)."""
    from .bodies import body_clusterings

    result = _run(graph, opts)
    result.bodies = body_clusterings(graph, opts, result, depth)
    return result


def _run(graph, opts: ClusterOptions) -> Clustering:
    from .tf_rules import is_tf_graph

    if is_tf_graph(graph) and opts.supported_ops is None:  # TensorFlow's own rules for TensorFlow's graphs
        from .tf_rules import tf_candidates

        cands = tf_candidates(graph, opts)
    else:
        cands = find_candidates(graph, opts)
        from .bodies import refine_candidates

        refine_candidates(graph, cands, opts)  # a Loop/If/Scan is a candidate only when its bodies compile
    if opts.strategy == "greedy":
        from .greedy import list_order_greedy

        return list_order_greedy(graph, cands, opts)
    if opts.strategy == "cost":
        from .cost_strategy import cost_clustering

        return cost_clustering(graph, cands, opts)
    from .mark import mark_for_compilation

    return mark_for_compilation(graph, cands, opts)
