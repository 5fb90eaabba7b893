"""A sweep's data: one row per model × configuration, and the zoo-wide fallback-op table."""
from __future__ import annotations

from collections import Counter

from ..render.report_json import SCHEMA_VERSION

TOP_REASONS = 3


def sweep_row(model: str, config: str, graph, clustering, stats) -> dict:
    """One model × configuration: its size, the partition's metrics, and what falls back (by reason and op)."""
    codes: Counter = Counter()
    example: dict[str, str] = {}
    ops: Counter = Counter()
    for node, k, code, reason in zip(graph.nodes, clustering.cluster_of, clustering.code, clustering.reason):
        if k < 0:
            c = code or "other"
            codes[c] += 1
            example.setdefault(c, reason or "")
            ops[node.op_type] += 1
    return {
        "model": model, "config": config, "nodes": stats.nodes, "clusters": stats.clusters,
        "coverage": round(stats.coverage, 6),
        "coverage_flops": None if stats.coverage_flops is None else round(stats.coverage_flops, 6),
        "boundary_bytes": stats.boundary_bytes, "parameter_bytes": getattr(stats, "parameter_bytes", None),
        "speedup_estimate": None if stats.speedup_estimate is None else round(stats.speedup_estimate, 4),
        "top_fallback_reasons": [{"reason_code": c, "nodes": n, "example": example[c]}
                                 for c, n in sorted(codes.items(), key=lambda t: (-t[1], t[0]))[:TOP_REASONS]],
        "fallback_ops": dict(sorted(ops.items())), "error": None,
    }


def error_row(model: str, config: str, message: str) -> dict:
    return {"model": model, "config": config, "error": message}


def fallback_ops(rows: list[dict]) -> list[dict]:
    """Per configuration and op: how many models have a fallback node of it, and how many such nodes."""
    models: Counter = Counter()
    nodes: Counter = Counter()
    for r in rows:
        for op, n in (r.get("fallback_ops") or {}).items():
            models[(r["config"], op)] += 1
            nodes[(r["config"], op)] += n
    return [{"config": c, "op": op, "models": models[(c, op)], "nodes": nodes[(c, op)]}
            for (c, op) in sorted(models, key=lambda k: (k[0], -models[k], -nodes[k], k[1]))]


def sweep_report(rows: list[dict]) -> dict:
    return {"schema_version": SCHEMA_VERSION, "rows": rows, "fallback_ops": fallback_ops(rows),
            "failed": sum(r["error"] is not None for r in rows)}
