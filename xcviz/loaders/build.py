"""Finish a freshly read Graph: resolve op names, count outputs, order the nodes; then verify and infer shapes."""
from __future__ import annotations

from itertools import chain, repeat
from typing import Mapping

import numpy as np

from ..errors import XcvizError
from ..ir import Graph, node_where, parse_ref, topo_order
from ..ir.nodeseq import NodeSeq, node_rows
from ..ir.columns import GraphColumns, NodeColumns
from ..ops import REGISTRY
from ..passes.infer import infer_shapes
from ..verify import check_arity, check_attr_types, check_elements, check_refs, cycle_error, find_cycle


def finalize(graph: Graph, *, allow_unknown: bool = False, onnx: bool = False,
             dims: Mapping[str, int] | None = None, max_elements: int | None = None,
             flat: tuple | None = None) -> Graph:
    """Resolve ops, check references (verify), order, infer shapes, check element counts, and make the
    graph's columns. Edits the nodes in place: call it once, on a graph no one else holds yet. `flat`:
    what a loader gathered on its way through the nodes (see NodeColumns)."""
    cols = NodeColumns(graph, flat)
    _resolve_ops(graph, allow_unknown, onnx, cols)
    counts = _num_outputs(graph, cols)
    preds = check_refs(graph, counts, cols)
    if _order(graph, preds):
        cols = NodeColumns(graph)  # positions moved: count again in the new order
        counts = _num_outputs(graph, cols)
    outputs = infer_shapes(graph, counts, cols)
    graph._columns = GraphColumns.of(graph, cols, outputs)
    if dims:
        graph.dims.update(dims)
    check_elements(graph, max_elements, graph._columns.rid, graph._columns.results)
    return graph


def _resolve_ops(graph: Graph, allow_unknown: bool, onnx: bool, cols: NodeColumns) -> None:
    """Canonical op names, arity and attribute types. Checked per distinct (op, arity) and only on nodes
    with attributes; on any doubt the node-by-node loop runs, so the first bad node is the one reported."""
    nodes = graph.nodes
    op_types = cols.op_type
    coded = cols.op_codes  # (a loader's integer codes of op_type: the distinct pairs below by numpy)
    opdefs = {t: REGISTRY.get(t) for t in (coded[1] if coded is not None else set(op_types))}
    if (any(cols.note) or (None in opdefs.values() and not (allow_unknown or onnx)) or cols.op != op_types
            or False in cols.known):
        _resolve_ops_each(graph, allow_unknown, onnx)
        return cols.read_ops(graph)
    if coded is not None:
        lens = cols.lens_array
        wide = int(lens.max(initial=0)) + 1
        pairs = np.unique(coded[0] * wide + lens).tolist()
        op_arity = [(coded[1][p // wide], p % wide) for p in pairs]
    else:
        op_arity = set(zip(op_types, cols.lens))
    for t, n_in in op_arity:
        opdef = opdefs[t]
        if opdef is not None and (n_in < opdef.min_inputs or (opdef.max_inputs is not None and n_in > opdef.max_inputs)):
            _resolve_ops_each(graph, allow_unknown, onnx)
            return cols.read_ops(graph)
    acode = cols.attr_codes[0]
    with_attrs = np.flatnonzero(acode).tolist()
    # the check reads only the op, the keys and the values' types: once per (op, attribute code)
    pairs = list(zip(map(op_types.__getitem__, with_attrs), acode[with_attrs].tolist()))
    first = dict(zip(reversed(pairs), reversed(with_attrs)))
    row = node_rows(nodes)
    try:
        for (t, _), i in first.items():
            if opdefs[t] is not None:
                check_attr_types(row(i), opdefs[t].attrs, graph.source)
    except XcvizError:
        _resolve_ops_each(graph, allow_unknown, onnx)
        return cols.read_ops(graph)
    renamed = {t for t, d in opdefs.items() if d is not None and d.name != t}
    unknown = {t for t, d in opdefs.items() if d is None}
    if renamed or unknown:
        canon = {t: opdefs[t].name for t in renamed}
        lazy = type(nodes) is NodeSeq and nodes.lazy
        if coded is not None:
            odd = [c for c, t in enumerate(coded[1]) if t in renamed or t in unknown]
            at = np.flatnonzero(np.isin(coded[0], odd)).tolist()
        else:
            at = [i for i, t in enumerate(op_types) if t in renamed or t in unknown]
        for i in at:
            t = op_types[i]
            if t in renamed:
                cols.op[i] = canon[t]
            else:
                cols.known[i] = False
                cols.note[i] = f"no XLA lowering in xcviz for {t}" if onnx else f"unknown op {t}"
            if not lazy:
                node = nodes[i]
                node.op, node.known, node.note = cols.op[i], cols.known[i], cols.note[i]
        if lazy:
            nodes.set_columns(op=cols.op, known=cols.known, note=cols.note)
    if coded is not None:  # the columns' codes, for whoever groups nodes by them (GraphColumns.codes)
        raw, types = coded
        cols.field_codes.update(op_type=(raw, types, True), known=(raw, [t not in unknown for t in types], True),
                                op=(raw, [opdefs[t].name if t in renamed else t for t in types], True))


def _resolve_ops_each(graph: Graph, allow_unknown: bool, onnx: bool) -> None:
    opdefs: dict[str, object] = {}  # op_type -> OpDef or None, resolved once per load (not per node)
    arity_ok: set[tuple[str, int]] = set()
    for i, node in enumerate(graph.nodes):
        if node.note:
            opdef = None
        else:
            op_type = node.op_type
            opdef = opdefs.get(op_type, _UNSEEN)
            if opdef is _UNSEEN:
                opdef = opdefs[op_type] = REGISTRY.get(op_type)
        if opdef is not None:
            node.op = opdef.name
            if (node.op_type, len(node.inputs)) not in arity_ok:
                check_arity(node, opdef, graph.source)
                arity_ok.add((node.op_type, len(node.inputs)))
            if node.attrs:
                check_attr_types(node, opdef.attrs, graph.source)
            continue
        node.known = False
        if onnx:
            node.note = node.note or f"no XLA lowering in xcviz for {node.op_type}"
        elif allow_unknown:
            node.note = f"unknown op {node.op_type}"
        else:
            _unknown_ops(graph, i, opdefs)


def _unknown_ops(graph: Graph, at: int, opdefs: dict) -> None:
    """One error naming every unknown op of the file (not only the first, which is node `at`), each with a
    did-you-mean, and the way to load ops of other frameworks. (By position: a duplicate name, refused
    later, must not hide the unknown op.)"""
    first = graph.nodes[at]
    seen: dict[str, list[str]] = {}
    for node in graph.nodes[at:]:
        t = node.op_type
        if not node.note and opdefs.setdefault(t, REGISTRY.get(t)) is None:
            seen.setdefault(t, []).append(node.name)
    guesses = {t: _guess(t) for t in seen}
    other = "load ops of another framework as fallback nodes with --allow-unknown (or name the supported ones " \
            "with --supported-ops FILE); see `xcviz ops`"
    if len(seen) == 1:
        t = next(iter(seen))
        raise XcvizError(f"unknown op {t!r}", where=node_where(first, graph.source),
                         hint=(guesses[t] + " Or " if guesses[t] else "") + other)
    parts = []
    for t, names in list(seen.items())[:20]:
        at = f"node {names[0]!r}" if len(names) == 1 else f"{len(names)} nodes: " + ", ".join(map(repr, names[:3])) \
            + (", …" if len(names) > 3 else "")
        parts.append(f"{t!r} ({at}{'; ' + guesses[t] if guesses[t] else ''})")
    more = f", and {len(seen) - 20} more" if len(seen) > 20 else ""
    rest = len(seen) - 1
    raise XcvizError(f"unknown op {parts[0]} and {rest} more unknown op{'s' if rest > 1 else ''}: " + ", ".join(parts[1:]) + more,
                     where=node_where(first, graph.source),
                     hint="fix the spelling, or " + other)


def _guess(op_type: str) -> str | None:
    """The registry's did-you-mean for a name it does not know."""
    try:
        REGISTRY.lookup(op_type)
    except XcvizError as e:
        return e.hint if e.hint and e.hint.startswith("did you mean") else None
    return None


_UNSEEN = object()


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
    idx = graph.index if colon else {}  # (made only when needed: hashing every name of a big graph is a real cost)
    for ref in colon:  # output 0 never raises a count above the minimum of 1
        name, k = parse_ref(ref)
        i = idx.get(name)
        if i is not None and k + 1 > referenced.get(i, 0):
            referenced[i] = k + 1
    fixed_of = {name: -1 if opdef.num_outputs is None else opdef.num_outputs for name, opdef in REGISTRY.ops.items()}
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


def _order(graph: Graph, preds: list[list[int]] | None) -> bool:
    """Put the nodes in topological order; True if that moved any. None: known to be in order."""
    if preds is None or all(i < j for j, p in enumerate(preds) for i in p):
        return False
    order = topo_order(len(preds), preds)
    if order is None:
        raise cycle_error(graph, find_cycle(preds, graph))
    graph.nodes = [graph.nodes[i] for i in order]
    graph._index = None
    return True
