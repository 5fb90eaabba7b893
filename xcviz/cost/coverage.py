"""Coverage by FLOPs when some nodes' FLOPs are unknown: bounds, and which nodes, never unknown-as-zero."""
from __future__ import annotations

from collections import Counter

import numpy as np

FIRST = 5   # unknown-cost nodes named in full


def flops_coverage(nodes, unknown: np.ndarray, clustered: np.ndarray, cl_flops, total_flops,
                   op_code: np.ndarray | None = None, why=None) -> dict:
    """coverage_flops (exact, or None when a node's FLOPs are unknown), its bounds, and the unknown nodes.

    With known clustered FLOPs c, known total t, and unknown FLOPs u_c >= 0 in clusters and u_f >= 0 in the
    fallback, coverage = (c + u_c) / (t + u_c + u_f): at least c / t when no unknown node falls back, at
    most c / t when no unknown node is clustered; otherwise nothing is known (0 and 1).
    `why(j)`: the reason node j's cost is unknown where one is known (a Loop's trip count), else None."""
    ratio = cl_flops / total_flops if total_flops else None
    k = int(unknown.sum())
    if not k:
        return dict(coverage_flops=ratio, coverage_flops_min=ratio, coverage_flops_max=ratio, unknown_cost_nodes=None)
    where = np.flatnonzero(unknown)
    any_in, any_out = bool(clustered[where].any()), bool((~clustered[where]).any())
    lo = 0.0 if any_out or ratio is None else ratio
    hi = 1.0 if any_in or ratio is None else ratio
    listed = where[:FIRST].tolist()
    if op_code is None:
        ops = Counter(nodes[j].op_type for j in where.tolist())
    else:  # per op code, named as one of its nodes writes it (a big graph has 10^5 such nodes)
        codes, first, counts = np.unique(op_code[where], return_index=True, return_counts=True)
        ops = Counter()
        for j, c in zip(where[first].tolist(), counts.tolist()):
            ops[nodes[j].op_type] += c
    info = {"count": k, "ops": dict(sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))),
            "nodes": [nodes[j].name for j in listed]}
    reasons = {nodes[j].name: r for j in listed for r in [why(j) if why else None] if r}
    if reasons:
        info["why"] = reasons
    return dict(coverage_flops=None, coverage_flops_min=lo, coverage_flops_max=hi, unknown_cost_nodes=info)


def unknown_text(info: dict | None) -> str:
    """'3 nodes of unknown cost: LSTM ×2, GRU' (empty when none)."""
    if not info:
        return ""
    ops = ", ".join(f"{op} ×{n}" if n > 1 else op for op, n in info["ops"].items())
    first = next(iter((info.get("why") or {}).items()), None)
    return f"{info['count']} node{'s' if info['count'] != 1 else ''} of unknown cost: {ops}" + \
        (f" ({first[0]}: {first[1]})" if first else "")
