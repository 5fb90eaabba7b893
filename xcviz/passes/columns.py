"""The columns the passes read and write before a graph is whole: what a loader gathered (Gathered), and the nodes'
fields as flat columns (NodeColumns), from which passes.prepare makes the graph's own (ir.columns.GraphColumns)."""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import Sequence

import numpy as np

from ..ir.columns import plain_positions

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
    def attr_codes_made(self) -> tuple[np.ndarray, list] | None:
        """attr_codes where the loader or a pass made them, else None (not made for this)."""
        return self._attr_codes

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


