"""Make a freshly read Graph whole: resolve ops, count outputs, check references, order, infer shapes, check sizes."""
from __future__ import annotations

from dataclasses import replace
from itertools import chain, repeat
from typing import Mapping

import numpy as np

from ..ir import Graph, Nodes, bind_dims, derived, parse_ref, seeded, topo_order
from ..ir.columns import GraphColumns
from .columns import Gathered, NodeColumns
from ..ops import REGISTRY
from ..verify import check_elements, check_refs, cycle_error, find_cycle
from .infer import infer_shapes
from .resolve import resolve_ops


def prepare(graph: Graph, *, allow_unknown: bool = False, onnx: bool = False,
            dims: Mapping[str, int] | None = None, max_elements: int | None = None,
            gathered: Gathered | None = None) -> Graph:
    """The whole graph, a new Graph: ops resolved, references checked (verify), nodes in order, shapes
    inferred, element counts checked, with its columns made. `gathered`: what a loader gathered on its
    way through the nodes (passes.columns.Gathered)."""
    cols = NodeColumns(graph, gathered)
    if resolve_ops(graph, allow_unknown, onnx, cols):
        graph = _with_nodes(graph, graph.nodes.replaced(op=cols.op, known=cols.known, note=cols.note))
    counts = _num_outputs(graph, cols)
    preds = check_refs(graph, counts, cols)
    order = _order(graph, preds)
    if order is not None:
        graph = replace(graph, nodes=graph.nodes.take(order))
        cols = NodeColumns(graph)  # positions moved: count again in the new order
        counts = _num_outputs(graph, cols)
    rid, results = infer_shapes(graph, counts, cols)
    graph = _with_nodes(graph, graph.nodes.replaced(outputs=(rid, results)))
    graph = seeded(graph, columns=GraphColumns.of(graph, cols, (rid, results)))
    if dims:
        graph = bind_dims(graph, dims)
    check_elements(graph, max_elements, rid, results)
    return graph


def reinfer(graph: Graph, max_elements: int | None = None) -> Graph:
    """A prepared graph's shapes inferred again, after its inputs' types changed (--inputs fixing the sizes of
    unnamed `?` axes): its ops are resolved and its nodes in order already; the types its nodes hold count as
    declared ones, which the new inferred sizes refine."""
    cols = NodeColumns(graph)
    counts = _num_outputs(graph, cols)
    rid, results = infer_shapes(graph, counts, cols)
    graph = _with_nodes(graph, graph.nodes.replaced(outputs=(rid, results)))
    graph = seeded(graph, columns=GraphColumns.of(graph, cols, (rid, results)))
    check_elements(graph, max_elements, rid, results)
    return graph


def _with_nodes(graph: Graph, nodes: Nodes) -> Graph:
    """The graph with these nodes, of the same names in the same order (so its name index holds)."""
    return seeded(replace(graph, nodes=nodes), index=derived(graph).get("index"))


def _num_outputs(graph: Graph, cols: NodeColumns) -> list[int]:
    """How many outputs each node has: the op's fixed count, else as declared or referenced."""
    referenced: dict[int, int] = {}
    refs = cols.refs
    # (a 'name:k' ref is never a node's plain position: only refs without one, and graph inputs named
    # with a ':', are looked at)
    src, n = cols.src_array, len(cols.op)
    odd = np.array([-1] + [n + i for i, v in enumerate(graph.inputs) if ":" in v.name], np.int64)
    other = np.flatnonzero(np.isin(src, odd) | (src < 0)).tolist()
    colon = [r for r in chain(map(refs.__getitem__, other), graph.outputs) if ":" in r]
    position = graph.lookup()
    for ref in colon:  # output 0 never raises a count above the minimum of 1
        name, k = parse_ref(ref)
        i = position(name)
        if i is not None and k + 1 > referenced.get(i, 0):
            referenced[i] = k + 1
    fixed_of = {name: -1 if opdef.num_outputs is None else opdef.num_outputs for name, opdef in REGISTRY.ops.items()}
    coded = cols.field_codes.get("op")  # (resolve_ops' codes of the op column: one look-up per distinct op)
    if coded is not None:
        counts = np.array([fixed_of.get(t, -1) for t in coded[1]], np.int64)[coded[0]]
    else:
        counts = np.fromiter(map(fixed_of.get, cols.op, repeat(-1)), np.int64, n)  # -1: not fixed (or unknown op)
    if False in cols.known:  # an opaque op may share a name with a registry op
        counts[~np.array(cols.known, np.bool_)] = -1
    free = np.flatnonzero(counts < 0)
    if len(free):
        dcode, lists = cols.declared_codes
        counts[free] = np.maximum(np.array(list(map(len, lists)), np.int64)[dcode[free]], 1)
        free_set = set(free.tolist())
        for i, k in referenced.items():
            if i in free_set and counts[i] < k:
                counts[i] = k
    return counts.tolist()


def _order(graph: Graph, preds: list[list[int]] | None) -> list[int] | None:
    """The topological order of the nodes where they are not in one, else None (preds None: known to be)."""
    if preds is None or all(i < j for j, p in enumerate(preds) for i in p):
        return None
    order = topo_order(len(preds), preds)
    if order is None:
        raise cycle_error(graph, find_cycle(preds, graph))
    return order
