"""The graph as columns in node order: GraphColumns, the one form clustering and costs read, and the loader's NodeColumns."""
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

_EMPTY_DICT: dict = {}  # placeholders in the columns only (never handed to a node)
_EMPTY_LIST: list = []


@dataclass(slots=True, eq=False)
class Gathered:
    """What a loader gathered on its way through the nodes, which saves NodeColumns reading the nodes again.

    `refs`: every data input's reference, in node order; `src[k]`: the position of what refs[k] names (see
    NodeColumns); `lens`: references per node; `op_types`: each node's op as written; `special`: the nodes
    with more than name, op and inputs (every other field of the rest is its default), or None where the
    loader gives the columns `attrs`, `declared` (outputs) and `control` (control inputs) themselves;
    `attr_codes`, `declared_codes`: their integer codes (NodeColumns.attr_codes, declared_codes), where the
    loader made them. A compiled reader (loaders/json_scanned) also says: `proven`, the node names are
    unique, none holding ':' or '' and none the name of a graph input (the checks need no name index);
    `op_codes`, (code per node, distinct op types); `field_codes`, name -> (raw code per node, value of each
    raw code, ordered) for fields it holds as codes (see coded_column). `src` and `lens` may be numpy arrays."""

    refs: Sequence
    src: object
    lens: object
    op_types: list
    special: list | None = None
    attrs: list | None = None
    declared: list | None = None
    control: list | None = None
    attr_codes: tuple | None = None
    declared_codes: tuple | None = None
    proven: bool = False
    op_codes: tuple | None = None
    field_codes: dict = field(default_factory=dict)


class NodeColumns:
    """The node fields the checks and shape inference read, as columns taken in one pass over the nodes
    (each pass over node objects scattered in memory pays a cache miss per node), with every data input
    flattened: what passes.prepare reads of a graph before it is whole.

    `src[k]` is the position of what `refs[k]` names: a node (its output 0), n + i for graph input i, or
    -1 for anything else (an empty optional input, a ':k' output, an undefined name). `op`, `known` and
    `note` are copies that op resolution (passes.resolve) writes. `gathered`: what the loader gathered
    (Gathered), which saves reading the nodes; `proven`, `op_codes` and `field_codes` come from it."""

    def __init__(self, graph, gathered: Gathered | None = None) -> None:
        nodes = graph.nodes
        self._src_array = self._lens_array = self._attr_codes = self._declared_codes = None
        self.proven, self.op_codes = False, None
        self.field_codes: dict = {}
        if gathered is not None:
            g = gathered
            self.refs, self.src, self.lens = g.refs, g.src, g.lens
            self._attr_codes, self._declared_codes = g.attr_codes, g.declared_codes
            self.proven, self.op_codes, self.field_codes = g.proven, g.op_codes, dict(g.field_codes)
            n = len(nodes)
            self.op_type, self.op = g.op_types, list(g.op_types)
            self.note, self.known = [None] * n, [True] * n
            if g.special is None:  # the loader built the nodes from these columns
                self.attrs, self.declared, self.control = g.attrs, g.declared, g.control
                return
            # nodes outside `special` are just name, op and inputs: every other field is its default
            if 2 * len(g.special) > n:  # (a typed graph: every node declares its type) read them all at C speed
                self.attrs, self.declared, self.control = (list(map(attrgetter(f), nodes))
                                                           for f in ("attrs", "outputs", "control_inputs"))
                return
            self.attrs, self.declared, self.control = [_EMPTY_DICT] * n, [_EMPTY_LIST] * n, [()] * n
            for i in g.special:
                node = nodes[i]
                self.attrs[i], self.declared[i], self.control[i] = node.attrs, node.outputs, node.control_inputs
            return
        per_node, self.op_type, self.attrs, self.declared, self.control = (
            nodes.column(f) for f in ("inputs", "op_type", "attrs", "outputs", "control_inputs"))
        # (op, known and note are the ones op resolution writes: copies, never the graph's own columns)
        self.op, self.known, self.note = (list(nodes.column(f)) for f in ("op", "known", "note"))
        self.lens = list(map(len, per_node))
        self.refs = list(chain.from_iterable(per_node))
        self.src = plain_positions(graph, self.refs)

    @property
    def src(self) -> list[int]:
        if self._src is None:
            self._src = self._src_array.tolist()
        return self._src

    @src.setter
    def src(self, value) -> None:
        self._src, self._src_array = (None, value) if isinstance(value, np.ndarray) else (value, None)

    @property
    def lens(self) -> list[int]:
        if self._lens is None:
            self._lens = self._lens_array.tolist()
        return self._lens

    @lens.setter
    def lens(self, value) -> None:
        self._lens, self._lens_array = (None, value) if isinstance(value, np.ndarray) else (value, None)

    @property
    def src_array(self) -> np.ndarray:
        if self._src_array is None:
            self._src_array = np.array(self.src, np.int64)
        return self._src_array

    @property
    def lens_array(self) -> np.ndarray:
        if self._lens_array is None:
            self._lens_array = np.array(self.lens, np.int64)
        return self._lens_array

    @property
    def attr_codes(self) -> tuple[np.ndarray, list]:
        """(code per node, reps): see attr_codes."""
        if self._attr_codes is None:
            self._attr_codes = attr_codes(self.attrs, [i for i, a in enumerate(self.attrs) if a])
        return self._attr_codes

    @property
    def declared_codes(self) -> tuple[np.ndarray, list]:
        """(code per node, lists): node j declares the output types lists[code[j]]; equal codes for equal
        lists (by value)."""
        if self._declared_codes is None:
            outs = self.declared
            _, first, inverse = np.unique(np.fromiter(map(id, outs), np.int64, len(outs)), return_index=True,
                                          return_inverse=True)
            by_value: dict = {}
            lists = [outs[k] for k in first.tolist()]
            code = np.array(list(map(by_value.setdefault, map(tuple, lists), range(len(lists)))), np.int64)
            self._declared_codes = code[inverse], lists
        return self._declared_codes


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


def attr_codes(attrs: list, rows: list[int]) -> tuple[np.ndarray, list]:
    """Each node's attribute dict as an integer code (0: no attributes; `rows`: the nodes that have some),
    equal for dicts with equal keys, values and value types (1, 1.0 and True apart), and reps[c], the
    first dict of code c. A dict that is not hashable (a list value) or holds a float zero (-0.0 == 0.0)
    gets a code of its own. Checks and rules that read only those run once per code."""
    codes = np.zeros(len(attrs), np.int64)
    reps: list = [None]
    seen: dict = {}
    out = []
    for i in rows:
        a = attrs[i]
        vals = a.values()
        kinds = tuple(map(type, vals))
        c = len(reps)
        try:
            if float not in kinds or 0.0 not in vals:
                c = seen.setdefault((tuple(a.items()), kinds), c)
        except (TypeError, ValueError):  # (an array value compares elementwise)
            pass
        if c == len(reps):
            reps.append(a)
        out.append(c)
    codes[rows] = out
    return codes, reps


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
    def of(cls, graph, cols: "NodeColumns | None" = None,
           outputs: tuple | None = None) -> "GraphColumns":
        """From the graph's nodes; `cols`: the loader's NodeColumns of these nodes (saves reading every
        node and looking every name up again); `outputs`: (rid, results) from shape inference."""
        if cols is None:
            cols = NodeColumns(graph)
        src, port = _resolve_ports(graph, cols)
        rid, results = outputs if outputs is not None else _shared_outputs(graph.nodes)
        extra = {} if cols._attr_codes is None else {("attrs", "codes"): cols._attr_codes}  # (for the cost keys)
        if cols.field_codes:
            extra["raw codes"] = cols.field_codes
        return cls(src, port, cols.lens_array, cols.op, cols.known, cols.attrs, rid, results, graph.nodes, extra)

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

    def row(self, j: int):
        """Node j (a lazy node sequence makes just this one)."""
        return self.nodes.row(j)


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


def _resolve_ports(graph, cols) -> tuple[np.ndarray, np.ndarray]:
    """src and port of every ref: the loader's plain positions, with the rest ('name:k', inputs whose
    names hold ':') looked up one by one."""
    n = len(graph.nodes)
    src = cols.src_array
    port = np.zeros(len(src), np.int64)
    miss = np.flatnonzero(src < 0)
    if len(miss):
        src = src.copy()
        refs = cols.refs
        inputs = {v.name: n + i for i, v in enumerate(graph.inputs)}
        for k in miss.tolist():
            ref = refs[k]
            if not ref:
                continue
            if ref in inputs:
                src[k] = inputs[ref]
                continue
            name, out = parse_ref(ref)  # 'node:k' (as the loader reads it: a name with ':' and digits after it
            j = graph.position(name)   # is output k of the node before the ':')
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
