"""An Analysis as compact HTML tables (`Analysis._repr_html_`): the summary, the largest clusters and the
fallback reasons, as a notebook shows them. The interactive page is `xcviz.show` (xcviz/notebook.py)."""
from __future__ import annotations

from collections import Counter

from ..htmltable import pairs, table
from .report_html_data import summary
from .units import fmt_bytes, fmt_speedup

CLUSTERS = 10   # rows of the clusters table
REASONS = 10


def analysis_html(graph, clustering, stats) -> str:
    parts = [pairs([(k, v) for k, v in summary(graph, clustering, stats)], caption=f"xcviz: {graph.name}")]
    detail = sorted(stats.clusters_detail, key=lambda c: -len(c.nodes))
    if detail:
        rows = [[c.id, len(c.nodes), " ".join(f"{op}×{n}" if n > 1 else op for op, n in list(c.ops.items())[:6]),
                 fmt_bytes(c.boundary_bytes_in), fmt_bytes(c.boundary_bytes_out), fmt_speedup(c.speedup_estimate)]
                for c in detail]
        parts.append(table(["cluster", "nodes", "ops", "bytes in", "bytes out", "est. speedup"], rows,
                           numeric={1, 3, 4, 5}, limit=CLUSTERS, caption="largest clusters"))
    reasons = Counter((clustering.code[i] or "fallback", clustering.reason[i] or "")
                      for i, k in enumerate(clustering.cluster_of) if k < 0)
    if reasons:
        rows = [[code, n, why] for (code, why), n in sorted(reasons.items(), key=lambda x: (-x[1], x[0]))]
        parts.append(table(["code", "nodes", "reason"], rows, numeric={1}, limit=REASONS, caption="fallbacks"))
    return "<div>" + "".join(parts) + "</div>"
