"""The native runtime's calls in a hybrid run: the ops outside the clusters run in fallback segments, each a
call of its own (a TF function, an onnxruntime session), as runtime.wholemodel.Hybrid makes them.

The run follows ir.unit_order (the clusters contracted, the rest one node each); consecutive fallback nodes form
one segment, which a cluster or a graph input's placeholder ends. A segment that reads nothing from outside
itself and holds no volatile op (a variable's handle and read, constants) is computed once, before any call:
it costs no call per run."""
from __future__ import annotations

import numpy as np

from ..ir import Graph, unit_order


def native_calls(graph: Graph, cluster_of: np.ndarray, nc: int, volatile: np.ndarray) -> tuple[int, int, int]:
    """(calls, entries, exits): how many calls of the native runtime one hybrid run of `graph` makes, and the
    values those calls are handed and give back (each segment's distinct inputs from outside it, a parameter
    graph input aside, and its distinct values read outside it or returned by the graph), from the columns, as
    arrays; `volatile` per node: a volatile op (VOLATILE_OPS: CostView.known_mask)."""
    order = unit_order(graph, cluster_of, nc)
    if order is None:   # (a clustering that cannot run: validate says so; one call, as before this was counted)
        return 1, 0, 0
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
    port = np.asarray(graph.columns.port, np.int64)
    ports = max(int(port.max(initial=0)), *(k for _, k in graph.output_refs), 0) + 1
    params = np.array([v.is_param for v in graph.inputs] + [False], bool)
    # a called segment's entries: the distinct values it reads from outside itself, a weight aside (one int64
    # key per (segment, value): no Python object per edge)
    into = outside & called[segment[dst]] & (segment[dst] >= 0) & ~((src >= n) & params[np.clip(src - n, 0, len(params) - 1)])
    value = src * ports + port
    entries = len(np.unique(segment[dst[into]] * ((n + len(params)) * ports) + value[into]))
    # its exits: the distinct values made in it that something outside it reads, or that the graph returns
    at = segment[np.clip(src, 0, n - 1)]
    leaving = (src >= 0) & (src < n) & (at >= 0) & called[at] & (at != segment[dst])
    returned = [i * ports + k for i, k in ((graph.position(name), k) for name, k in graph.output_refs)
                if i is not None and segment[i] >= 0 and called[segment[i]]]
    exits = len(np.unique(np.concatenate((value[leaving], np.array(returned, np.int64)))))
    return int(called[:-1].sum()), entries, exits
