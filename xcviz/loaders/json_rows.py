"""The JSON load through msgspec's typed rows, for files the compiled scanner (json_scanned) declines: the nodes built from columns.

msgspec checks every node's keys and value types in C while it decodes (no dict per node, ~half the
memory of the generic document); what is left is done per column at C speed (map/zip), not per node.
This path only ever accepts: on any doubt (a type msgspec refuses, an unusual key, a repeated key, a
check that fails) it returns None and the loader reads the file the generic way, which gives exactly the
usual result or error message (schema.read_mapping). Graphs with and without declared `shape`/`dtype`
take this same path. Every file is offered to the compiled scanner first (json_scanned.read), whatever its size.
"""
from __future__ import annotations

from itertools import chain, compress, count
from operator import attrgetter

import msgspec
import numpy as np
from msgspec import UNSET

from ..errors import XcvizError
from ..ir import Graph, Nodes, positions_by_name, seeded
from ..ir.columns import Gathered
from . import json_scanned
from .json_types import DECODER, NO_ATTRS, Row, check_attrs, declared_from_codes, nested_where
from .parse import parsed_keys
from .schema import GRAPH_KEYS, graph_header, graph_tail

_UNSET_NONE = {UNSET: None}


def read(data: bytes | list, source: str, max_nodes: int | None, max_depth: int) -> tuple[Graph, tuple] | None:
    """(graph, what the reader gathered: ir.columns.Gathered) from a JSON file's bytes, or None: read it the generic way.
    `data` may be a list holding the bytes as its only reference: they are freed once decoded (the
    memory serves what follows; on None, the list is empty when they were)."""
    box = data if type(data) is list else [data]
    data = box[0]
    if b"\\" in data:  # (escapes: the key count below needs every '"' to delimit a string)
        return None
    scanned = json_scanned.read(data, source, max_nodes, max_depth)  # (the compiled scanner: no object per node)
    if scanned is not None:
        box.clear()
        return scanned
    # the keys the text names (counted before decoding: the blank-free copy is gone before the rows come)
    text_keys = data.translate(None, b" \t\r\n").count(b'":')
    try:
        doc = DECODER.decode(data)
    except (msgspec.MsgspecError, RecursionError):  # wrong types, unknown keys, bad UTF-8, a BOM, ...
        return None
    # fields the text never names are absent from every row (no pass over the rows for them)
    named = {f for f in Row.__struct_fields__ if b'"%s"' % f.encode() in data}
    box.clear()
    del data
    box.append(doc)  # (_graph takes the only reference: the rows are freed as soon as their columns are read)
    del doc
    try:
        return _graph(box, text_keys, named, source, max_nodes, max_depth)
    except XcvizError:  # the generic path finds the same error, and says it the usual way (with its line)
        return None


def _graph(box: list, text_keys: int, named: set, source: str, max_nodes: int | None, max_depth: int):
    doc = box.pop()
    rows = doc.nodes
    n = len(rows)
    top = {k: getattr(doc, k) for k in GRAPH_KEYS if k != "nodes" and getattr(doc, k) is not UNSET}
    top["nodes"] = rows
    name, inputs = graph_header(top, source, max_nodes)
    # the rows as columns, one field at a time at C speed (faster than one pass transposed by zip)
    names, ops, ins, ctl, attrs, device, compile_, scope, docs, shapes, dtypes = (
        list(map(attrgetter(f), rows)) if f in named else [UNSET] * n for f in Row.__struct_fields__)
    del rows, doc, top["nodes"]
    rare = (ctl, device, compile_, scope, docs)
    absent = [c.count(UNSET) for c in rare]  # (mostly UNSET: identity hits)
    ins_absent, ins_none = ins.count(UNSET), ins.count(None)
    declared = _declared(shapes, dtypes, n)
    if declared is None:
        return None
    del shapes, dtypes
    keys = 2 * n + n - ins_absent + n - attrs.count(UNSET) + sum(declared[3:]) + sum(n - k for k in absent)
    with_attrs = list(compress(range(n), attrs))
    acodes, nested, attr_keys = check_attrs(attrs, with_attrs, names, source, max_depth)
    keys += attr_keys
    # every key the text names is in the rows: none was repeated (msgspec keeps the last of repeated keys)
    keys += len(top) + 1 + sum(map(parsed_keys, top.values()))
    if keys != text_keys:
        return None
    outs = declared[0]
    ops = list(map({}.setdefault, ops, ops))  # one string object per op name: later look-ups hit by identity
    if ins_absent or ins_none:
        ins = [t if t else () for t in ins]
    held, attrs = attrs, [NO_ATTRS] * n  # (a node made from the columns gets its own dict)
    list(map(attrs.__setitem__, with_attrs, map(held.__getitem__, with_attrs)))
    del held
    ctl = () if absent[0] == n else [t if t else () for t in ctl]
    device, compile_, scope = (None if k == n else list(map(_UNSET_NONE.get, c, c))
                               for c, k in zip((device, compile_, scope), absent[1:4]))
    where = nested_where(nested, names, source, n)
    # the columns are the graph: Node objects are made only if someone asks for them (ir.Nodes)
    nodes = Nodes(n, {"name": names, "op": ops, "op_type": ops, "inputs": ins, "control_inputs": ctl,
                        "attrs": attrs, "device": device, "compile": compile_, "scope": scope, "outputs": outs,
                        "where": where})
    ids = dict(zip(names, range(n)))
    if len(ids) != n:  # a repeated name: the generic path's checks say where
        return None
    outputs, dims = graph_tail(top, source)
    graph = seeded(Graph(name=name, inputs=inputs, nodes=nodes, outputs=outputs, source=source, dims=dims), index=ids)
    if ":" in "".join(names):  # build works those out the careful way
        return graph, None
    refs = list(chain.from_iterable(ins))
    src = positions_by_name(ids, n, inputs, refs)
    ctl = ctl if absent[0] != n else [()] * n
    # (the columns NodeColumns would read from the nodes: it takes them from here)
    return graph, Gathered(refs, src, list(map(len, ins)), ops, None, attrs, outs, ctl, acodes, declared[1:3])


def _declared(shapes: list, dtypes: list, n: int) -> tuple | None:
    """(each node's declared outputs ([type] or []), codes, lists, how many rows hold a shape, a dtype):
    one list object per distinct (shape, dtype), lists[codes[j]] is node j's (see
    NodeColumns.declared_codes). Shape inference gives every node a list of its own (it sets every
    node's outputs), and until then the lists are only read. None if one needs the generic path's checks
    (and message)."""
    # integer codes per column (one hash per shape; the dtypes are shared Literal strings), then per pair
    return declared_from_codes(_codes(shapes, n), _codes(dtypes, n), n)


def _codes(col: list, n: int) -> tuple[np.ndarray, list, int]:
    """(dense code per row, the value of each code, how many rows hold a value): one hash per row."""
    ids: dict = {}
    first = np.array(list(map(ids.setdefault, col, count())), np.int64)  # (the first row holding each value)
    starts = np.array(sorted(ids.values()), np.int64)
    values = list(map(col.__getitem__, starts.tolist()))
    unset = ids.get(UNSET)
    return np.searchsorted(starts, first), values, n - (0 if unset is None else int(np.count_nonzero(first == unset)))
