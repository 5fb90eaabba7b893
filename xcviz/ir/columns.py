"""The graph as columns in node order: GraphColumns, the one form clustering and costs read (Graph.columns), and the positions of references."""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Sequence

import numpy as np

from .types import parse_ref

if TYPE_CHECKING:
    from .nodes import Nodes
    from .types import Value

def plain_positions(graph, refs) -> list[int]:
    """Position of what each ref names when it is a plain name: a node (its output 0), n + i for graph
    input i; -1 for anything else (an empty ref, 'node:k', an undefined name). Node names containing ':'
    are left out: such a ref may read as name:k, which the callers resolve one by one."""
    ids = graph.index
    if ":" in "".join(ids):
        ids = {name: i for name, i in ids.items() if ":" not in name}
    return positions_by_name(ids, len(graph.nodes), graph.inputs, refs)


def positions_by_name(index: dict[str, int], n: int, inputs: Sequence["Value"], refs) -> list[int]:
    """plain_positions over a name index (no name in it holding ':') of n nodes: a node before the first
    graph input of the same name (the loader's checks refuse that name clash), -1 for anything else."""
    added = [v.name for v in inputs if v.name not in index]  # (the index itself, for the time of one map)
    for i, v in enumerate(inputs):
        index.setdefault(v.name, n + i)
    try:
        return list(map(index.get, refs, repeat(-1)))
    finally:
        for name in added:
            index.pop(name, None)


@dataclass(frozen=True, slots=True, eq=False)
class GraphColumns:
    """The graph as integer and list columns in node order, made once per graph by the same code
    (GraphColumns.of) for every graph, loaded or built by hand, of any size; clustering and the cost
    model read these rather than the node objects.

    Data inputs in CSR form, one entry per input ref (empty refs included): `src[k]` the position of the
    producing node, n + i for graph input i, -1 for an empty (absent) input; `port[k]` which output of the
    producer (0 for graph inputs); `lens[j]` how many refs node j has. Per node: `op` (canonical name),
    `known`, `attrs` (maybe a shared empty dict), and its outputs: node j's output types are the objects
    of `results[rid[j]]` (equal results are shared, so a big graph has a few hundred)."""

    src: np.ndarray
    port: np.ndarray
    lens: np.ndarray
    op: list
    known: list
    attrs: list
    rid: np.ndarray
    results: list
    nodes: "Nodes"  # the nodes these columns describe
    # more node fields as columns (name, op_type, device, compile, scope, note, control_inputs), and their
    # integer codes: a loader puts what it has; the rest is read on first use (see column, codes)
    extra: dict = field(default_factory=dict)

    @classmethod
    def of(cls, graph, cols=None, outputs: tuple | None = None) -> "GraphColumns":
        """From the graph's nodes; `cols`: the passes' columns of these nodes (passes.columns.NodeColumns: saves
        reading every node and looking every name up again); `outputs`: (rid, results) from shape inference."""
        nodes = graph.nodes
        if cols is None:  # (a graph that did not come through the passes: read from its nodes)
            per_node = nodes.column("inputs")
            refs = list(chain.from_iterable(per_node))
            lens = np.fromiter(map(len, per_node), np.int64, len(per_node))
            src = np.array(plain_positions(graph, refs), np.int64)
            op, known, attrs, codes, field_codes = nodes.column("op"), nodes.column("known"), nodes.column("attrs"), \
                None, None
        else:
            refs, src, lens, op, known, attrs = cols.refs, cols.src_array, cols.lens_array, cols.op, cols.known, cols.attrs
            codes, field_codes = cols.attr_codes_made, cols.field_codes
        src, port = _resolve_ports(graph, refs, src)
        rid, results = outputs if outputs is not None else _shared_outputs(nodes)
        extra = {} if codes is None else {("attrs", "codes"): codes}  # (for the cost keys)
        if field_codes:
            extra["raw codes"] = field_codes
        return cls(src, port, lens, op, known, attrs, rid, results, nodes, extra)

    def column(self, name: str, keep: bool = True) -> list:
        """One node field as a list in node order (read-only: it may be shared): one of the columns above,
        else the loader's, else read from the nodes (a lazy node sequence hands its column over) and kept
        when `keep`."""
        col = self.extra.get(name)
        if col is None:
            col = getattr(self, name, None) if name in ("op", "known", "attrs") else None
            if col is None:
                col = self.nodes.column(name)
                if keep:
                    self.extra[name] = col
        return col

    def codes(self, name: str) -> tuple[np.ndarray, list]:
        """A column as integer codes (int32 per node) and its distinct values in order of first appearance
        (hashable values only), made once; one C-speed pass, none when every node holds the same value."""
        key = (name, "codes")
        hit = self.extra.get(key)
        if hit is None and name in self.extra.get("raw codes", ()):
            hit = self.extra[key] = coded_column(*self.extra["raw codes"][name])
        if hit is None:
            col = self.column(name, keep=False)
            n = len(col)
            same = col.count(col[0]) if n else 0  # (identity first: cheap for shared values)
            if same == n:
                hit = np.zeros(n, np.int32), col[:1]
            elif 4 * same >= 3 * n:  # mostly one value (device, compile): look only at the other nodes
                first = col[0]
                odd = [i for i, v in enumerate(col) if v is not first]
                vals = [col[i] for i in odd]
                code = dict.fromkeys([first, *vals])
                for k, v in enumerate(code):
                    code[v] = k
                ids = np.zeros(n, np.int32)
                ids[odd] = list(map(code.__getitem__, vals))
                hit = ids, list(code)
            else:
                code = dict.fromkeys(col)
                for k, v in enumerate(code):
                    code[v] = k
                hit = np.fromiter(map(code.__getitem__, col), np.int32, n), list(code)
            self.extra[key] = hit
        return hit


def coded_column(raw: np.ndarray, values: list, ordered: bool = False) -> tuple[np.ndarray, list]:
    """GraphColumns.codes of a column held as codes: node j's value is values[raw[j]] (values may repeat,
    e.g. two spellings of one op). `ordered`: codes from 1 up first appear in increasing order (a loader's
    intern table, 0 for an absent value), so only code 0's first place is looked for."""
    n, k = len(raw), len(values)
    if not n:
        return np.zeros(0, np.int32), []
    if ordered:
        top = int(raw.max())  # codes 1..top appear, in order; code 0 comes after those seen before it
        zero = raw == 0
        if zero.any():
            b = int(raw[:int(zero.argmax())].max(initial=0))
            order = [*range(1, b + 1), 0, *range(b + 1, top + 1)]
        else:
            order = list(range(1, top + 1))
    else:
        first = [int(m.argmax()) if (m := raw == c).any() else n for c in range(k)]
        order = sorted((c for c in range(k) if first[c] < n), key=first.__getitem__)
    number: dict = {}
    remap = np.zeros(k, np.int32)
    for c in order:
        remap[c] = number.setdefault(values[c], len(number))
    return remap[raw], list(number)


def _resolve_ports(graph, refs, src: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """src and port of every ref: the plain positions `src` (see plain_positions), with the rest ('name:k',
    inputs whose names hold ':') looked up one by one."""
    n = len(graph.nodes)
    port = np.zeros(len(src), np.int64)
    miss = np.flatnonzero(src < 0)
    if len(miss):
        src = src.copy()
        inputs = {v.name: n + i for i, v in enumerate(graph.inputs)}
        position = graph.lookup()
        for k in miss.tolist():
            ref = refs[k]
            if not ref:
                continue
            if ref in inputs:
                src[k] = inputs[ref]
                continue
            name, out = parse_ref(ref)  # 'node:k' (as the loader reads it: a name with ':' and digits after it
            j = position(name)         # is output k of the node before the ':')
            if j is None:
                raise KeyError(name)
            src[k], port[k] = j, out
    return src, port


def _shared_outputs(nodes) -> tuple[np.ndarray, list]:
    """(rid, results) from the nodes' outputs: one result per distinct sequence of type objects."""
    raw = nodes.column_raw("outputs")
    if type(raw) is tuple:  # (shape inference's (rid, results), kept as a column)
        return raw
    rid_of: dict = {}
    results: list = []
    rid = np.empty(len(nodes), np.int64)
    for j, outs in enumerate(map(attrgetter("outputs"), nodes)):
        key = tuple(map(id, outs))
        r = rid_of.get(key)
        if r is None:
            r = rid_of[key] = len(results)
            results.append(outs)
        rid[j] = r
    return rid, results
