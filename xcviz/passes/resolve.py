"""Resolve a freshly read graph's op names against the registry: canonical names, arity, attribute types, unknown ops."""
from __future__ import annotations

import numpy as np

from ..errors import XcvizError
from ..ir import Graph, node_where
from .columns import NodeColumns
from ..ops import REGISTRY
from ..verify import check_arity, check_attr_types


def resolve_ops(graph: Graph, allow_unknown: bool, onnx: bool, cols: NodeColumns) -> bool:
    """Canonical op names, arity and attribute types, written into `cols.op`, `cols.known` and `cols.note`
    (the graph is left as it is: passes.prepare makes the new one); True if any of them changed. Checked per
    distinct (op, arity) and only on nodes with attributes; on any doubt the node-by-node loop runs, so the
    first bad node is the one reported."""
    nodes = graph.nodes
    op_types = cols.op_type
    coded = cols.op_codes  # (a loader's integer codes of op_type: the distinct pairs below by numpy)
    opdefs = {t: REGISTRY.get(t) for t in (coded[1] if coded is not None else set(op_types))}
    if (any(cols.note) or (None in opdefs.values() and not (allow_unknown or onnx)) or cols.op != op_types
            or False in cols.known):
        return _resolve_ops_each(graph, allow_unknown, onnx, cols)
    if coded is not None:
        lens = cols.lens_array
        wide = int(lens.max(initial=0)) + 1
        key = coded[0] * wide + lens
        top = int(key.max(initial=0)) + 1
        # (the distinct keys, ascending: counted in one pass where they are dense, as 10^6 nodes' are;
        # numpy 2's hashing np.unique took ~0.03-0.08 s there)
        pairs = (np.flatnonzero(np.bincount(key, minlength=top)) if top <= 4 * len(key) + 1024 else np.unique(key)).tolist()
        op_arity = [(coded[1][p // wide], p % wide) for p in pairs]
    else:
        op_arity = set(zip(op_types, cols.lens))
    for t, n_in in op_arity:
        opdef = opdefs[t]
        if opdef is not None and (n_in < opdef.min_inputs or (opdef.max_inputs is not None and n_in > opdef.max_inputs)):
            return _resolve_ops_each(graph, allow_unknown, onnx, cols)
    acode = cols.attr_codes[0]
    with_attrs = np.flatnonzero(acode).tolist()
    # the check reads only the op, the keys and the values' types: once per (op, attribute code)
    pairs = list(zip(map(op_types.__getitem__, with_attrs), acode[with_attrs].tolist()))
    first = dict(zip(reversed(pairs), reversed(with_attrs)))
    row = nodes.row
    try:
        for (t, _), i in first.items():
            if opdefs[t] is not None:
                check_attr_types(row(i), opdefs[t].attrs, graph.source)
    except XcvizError:
        return _resolve_ops_each(graph, allow_unknown, onnx, cols)
    renamed = {t for t, d in opdefs.items() if d is not None and d.name != t}
    unknown = {t for t, d in opdefs.items() if d is None}
    if renamed or unknown:
        canon = {t: opdefs[t].name for t in renamed}
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
    if coded is not None:  # the columns' codes, for whoever groups nodes by them (GraphColumns.codes)
        raw, types = coded
        cols.field_codes.update(op_type=(raw, types, True), known=(raw, [t not in unknown for t in types], True),
                                op=(raw, [opdefs[t].name if t in renamed else t for t in types], True))
    return bool(renamed or unknown)


def _resolve_ops_each(graph: Graph, allow_unknown: bool, onnx: bool, cols: NodeColumns) -> bool:
    """resolve_ops node by node (the first bad node is the one reported)."""
    opdefs: dict[str, object] = {}  # op_type -> OpDef or None, resolved once per load (not per node)
    arity_ok: set[tuple[str, int]] = set()
    op, known, note = cols.op, cols.known, cols.note
    for i, node in enumerate(graph.nodes):
        if node.note:
            opdef = None
        else:
            op_type = node.op_type
            opdef = opdefs.get(op_type, _UNSEEN)
            if opdef is _UNSEEN:
                opdef = opdefs[op_type] = REGISTRY.get(op_type)
        if opdef is not None:
            op[i] = opdef.name
            if (node.op_type, len(node.inputs)) not in arity_ok:
                check_arity(node, opdef, graph.source)
                arity_ok.add((node.op_type, len(node.inputs)))
            if node.attrs:
                check_attr_types(node, opdef.attrs, graph.source)
            continue
        known[i] = False
        if onnx:
            note[i] = node.note or f"no XLA lowering in xcviz for {node.op_type}"
        elif allow_unknown:
            note[i] = f"unknown op {node.op_type}"
        else:
            _unknown_ops(graph, i, opdefs)
    return True


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
