"""One captured graph as report data: its aten calls, xcviz's clusters and fallbacks (in aten names, as a torch
user reads them), coverage, boundary bytes, the estimate, and the openxla partitioner beside them."""
from __future__ import annotations

from collections import Counter


def _is_helper(node) -> bool:
    """A constant the loader made for a scalar operand (`mul_const`): not an aten call the user's code made."""
    return node.op == "const" and node.where is None


def graph_entry(index: int, captured, analysis, compile_id: str = "", recompile_reason: str | None = None,
                openxla: dict | None = None) -> dict:
    graph, clustering, stats = analysis.graph, analysis.clustering, analysis.stats
    aten = captured.aten
    calls = [j for j, nd in enumerate(graph.nodes) if not _is_helper(nd)]
    clustered = [j for j in calls if clustering.cluster_of[j] >= 0]
    clusters = []
    for k, members in enumerate(clustering.clusters):
        cost = stats.clusters_detail[k]
        names = [graph.nodes[j].name for j in members if not _is_helper(graph.nodes[j])]
        clusters.append({
            "id": clustering.cluster_id(k), "nodes": names,
            "ops": dict(sorted(Counter(aten.get(n, n) for n in names).items())),
            # bytes_in counts the weights read too; activations_in is what crosses per call, parameters_in resident
            "bytes_in": cost.boundary_bytes_in, "bytes_out": cost.boundary_bytes_out,
            "activations_in": _less(cost.boundary_bytes_in, cost.parameter_bytes_in),
            "parameters_in": cost.parameter_bytes_in,
            "est_speedup": _round(cost.speedup_estimate), "constant": cost.constant})
    fallback: dict[tuple[str, str], list[str]] = {}
    for j in calls:
        if clustering.cluster_of[j] < 0:
            nd = graph.nodes[j]
            fallback.setdefault((aten.get(nd.name, nd.op_type), clustering.reason[j] or ""), []).append(nd.name)
    attempt = compile_id.partition("/")[2]
    return {
        "index": index, "compile_id": compile_id,
        "recompile": attempt.isdigit() and int(attempt) > 0, "recompile_reason": recompile_reason,
        "symbolic": captured.symbolic,
        "inputs": [{"name": v.name, "shape": list(v.type.shape) if v.type.shape is not None else None,
                    "dtype": v.type.dtype, "kind": "weight" if v.data is not None else "input"} for v in graph.inputs],
        "nodes": len(calls), "clustered": len(clustered),
        "ops": [{"node": graph.nodes[j].name, "op": aten.get(graph.nodes[j].name, graph.nodes[j].op_type),
                 "cluster": clustering.cluster_id(clustering.cluster_of[j]) if clustering.cluster_of[j] >= 0 else None}
                for j in calls],
        "coverage": _round(len(clustered) / len(calls)) if calls else 0.0,
        "clusters": clusters,
        "fallback_ops": [{"op": op, "count": len(names), "reason": why, "nodes": names}
                         for (op, why), names in sorted(fallback.items())],
        "boundary_bytes": stats.boundary_bytes, "boundary_bytes_activations": stats.boundary_bytes_activations,
        "parameter_bytes": stats.parameter_bytes, "est_speedup": _round(stats.speedup_estimate),
        "hardware": stats.hardware, "estimate_runtime": stats.native,
        "time_before_s": stats.time_before, "time_after_s": stats.time_after,
        **({"openxla": openxla} if openxla is not None else {}),
    }


def _less(a, b):
    return None if a is None or b is None else a - b


def _sum(graphs: list[dict], key: str):
    """The analysed graphs' `key` added up, None when one's is unknown (a symbolic size)."""
    vals = [g.get(key) for g in graphs if not g.get("error")]
    return None if any(v is None for v in vals) else sum(vals)


def _round(x):
    return None if x is None else round(float(x), 6)


def summary(graphs: list[dict], breaks: list[dict]) -> dict:
    """Over all graphs. The code Dynamo ran eagerly between graphs is not seen: each break counts as one native
    op in `coverage` (a bound: the segment holds at least the op that broke the graph), `coverage_in_graphs`
    counts only what was captured."""
    ops = sum(g["nodes"] for g in graphs)
    clustered = sum(g["clustered"] for g in graphs)
    before = [g["time_before_s"] for g in graphs]
    after = [g["time_after_s"] for g in graphs]
    known = all(t is not None for t in before + after) and sum(after) > 0
    return {
        "graphs": len(graphs), "breaks": len(breaks), "graph_break_count": max(0, len(graphs) - 1),
        "recompilations": sum(1 for g in graphs if g["recompile"]),
        "ops_in_graphs": ops, "clustered_ops": clustered, "eager_segments": len(breaks),
        "coverage": _round(clustered / (ops + len(breaks))) if ops + len(breaks) else 0.0,
        "coverage_in_graphs": _round(clustered / ops) if ops else 0.0,
        "clusters": sum(len(g["clusters"]) for g in graphs),
        "boundary_bytes": sum(g["boundary_bytes"] or 0 for g in graphs),
        # what crosses per call (activations) apart from the weights the clusters read where they reside
        "boundary_bytes_activations": _sum(graphs, "boundary_bytes_activations"),
        "parameter_bytes": _sum(graphs, "parameter_bytes"),
        "est_speedup": _round(sum(before) / sum(after)) if known else None,
        "ran_hybrid": sum(1 for g in graphs if (g.get("hybrid") or {}).get("ran") == "hybrid"),
    }
