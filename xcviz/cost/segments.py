"""The native runtime's calls in a hybrid run: the ops outside the clusters run in fallback segments, each a
call of its own (a TF function, an onnxruntime session), as runtime.wholemodel.Hybrid makes them.

The run follows ir.unit_order (the clusters contracted, the rest one node each); consecutive fallback nodes form
one segment, which a cluster or a graph input's placeholder ends. A segment that reads nothing from outside
itself and holds no volatile op (a variable's handle and read, constants) is computed once, before any call:
it costs no call per run."""
from __future__ import annotations

import numpy as np

from ..ir import Graph, unit_order


def native_calls(graph: Graph, cluster_of: np.ndarray, nc: int, volatile: np.ndarray) -> int:
    """How many calls of the native runtime one hybrid run of `graph` makes (from the columns, as arrays);
    `volatile` per node: a volatile op (VOLATILE_OPS: CostView.known_mask)."""
    order = unit_order(graph, cluster_of, nc)
    if order is None:   # (a clustering that cannot run: validate says so; one call, as before this was counted)
        return 1
    n = len(graph.nodes)
    ops = graph.columns.column("op")   # (no node object made)
    segment = np.full(n, -1, np.int64)   # per fallback node, its segment
    count, open_segment = 0, False
    for kind, u in order:
        if kind == "node" and ops[u] != "placeholder":
            if not open_segment:
                count += 1
            segment[u] = count - 1
            open_segment = True
        else:
            open_segment = False
    called = np.zeros(count + 1, bool)   # (the last entry: no segment)
    src, dst = np.asarray(graph.columns.src, np.int64), graph.input_readers   # (the data edges: ir.Graph)
    # a member that reads a graph input, or a value made outside its segment
    outside = (src >= n) | ((src >= 0) & (src < n) & (segment[np.clip(src, 0, n - 1)] != segment[dst]))
    called[segment[dst[outside]]] = True
    called[segment[volatile]] = True
    return int(called[:-1].sum())
