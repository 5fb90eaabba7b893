"""NodeSeq: a graph's nodes kept as columns, with Node objects made only when someone asks for them."""
from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import attrgetter
from typing import Callable

from . import Node, gc_paused

_EMPTY_ATTRS: dict = {}
_EMPTY_OUTS: list = []


class NodeSeq(Sequence):
    """A loaded graph's nodes as columns, one per Node field, with Node objects made only on demand: the
    first index or iteration builds them all in C (map(Node, ...)) and keeps them, so `graph.nodes[i] is
    graph.nodes[i]` and every consumer sees a plain sequence of nodes. Big-graph code (loader checks,
    shape inference, clustering, costs) reads columns instead and never pays for 10^6 objects.

    A column is a list of n values (or NodeRefs, made on first use), or one value every node shares (an empty `attrs`/`outputs` value
    gives each node its own empty dict/list, as Node does). `outputs` may be (rid, results) from shape
    inference: node j gets a copy of results[rid[j]]."""

    __slots__ = ("_n", "_cols", "_list", "find")

    def __init__(self, n: int, cols: dict) -> None:
        self._n, self._cols, self._list = n, cols, None
        self.find = None  # a loader's name -> position look-up without a dict (see ir.LazyIndex), or None

    @property
    def lazy(self) -> bool:
        return self._list is None

    def set_columns(self, **cols) -> None:
        """Replace columns (the loader's resolved ops, shape inference's outputs) before any node is made."""
        assert self._list is None, "nodes already made: edit them instead"
        self._cols.update(cols)

    def column_raw(self, field: str):
        """A column as kept (a list, a shared value, or (rid, results)); only while lazy."""
        return self._cols.get(field, _NODE_DEFAULTS.get(field))

    def column(self, field: str) -> list:
        """One field of every node, as a list (read-only: it may be the column itself)."""
        if self._list is not None:
            return list(map(attrgetter(field), self._list))
        c = self._cols.get(field, _NODE_DEFAULTS.get(field))
        if field == "outputs" and type(c) is tuple:
            return list(map(c[1].__getitem__, c[0].tolist()))
        return c if type(c) in _SEQ else [c] * self._n

    def row(self, i: int) -> Node:
        """Node i, made afresh from the columns while they are the truth (not kept: edit nothing on it)."""
        if self._list is not None:
            return self._list[i]
        vals = {}
        for f, c in self._cols.items():
            v = c[i] if type(c) in _SEQ else c
            if f == "outputs" and type(c) is tuple:
                v = list(c[1][c[0][i]])
            vals[f] = v
        return Node(**vals)

    def nodes(self) -> list[Node]:
        if self._list is None:
            with gc_paused():  # (2x10^6 new dicts and lists: a collection would rescan the whole graph)
                self._list = self._build()
            self._cols = None
        return self._list

    def _build(self) -> list[Node]:
        n, cols = self._n, self._cols
        args = []
        for f in _NODE_FIELDS:
            c = cols.get(f, _NODE_DEFAULTS.get(f))
            if f == "outputs" and type(c) is tuple:
                c = list(map(list.copy, map(c[1].__getitem__, c[0].tolist())))
            elif f in ("attrs", "outputs"):  # each node its own dict/list, as Node's default
                c = [v if v else type(v)() for v in c] if type(c) is list else [type(c)() for _ in range(n)]
            elif type(c) is NodeRefs:
                c = c.tolist()
            args.append(c if type(c) is list else repeat(c, n))
        return list(map(Node, *args))

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        return self.nodes()[i]

    def __iter__(self):
        return iter(self.nodes())

    def __reversed__(self):
        return reversed(self.nodes())

    def __contains__(self, node) -> bool:
        return node in self.nodes()

    def index(self, node, *args) -> int:
        return self.nodes().index(node, *args)

    def copy(self) -> list[Node]:
        return self.nodes().copy()

    def __add__(self, other):
        return self.nodes() + list(other)

    def __radd__(self, other):
        return list(other) + self.nodes()

    def __eq__(self, other) -> bool:
        if isinstance(other, (list, NodeSeq)):
            return self.nodes() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.nodes())


_NODE_FIELDS = tuple(Node.__struct_fields__)
_NODE_DEFAULTS = dict(zip(_NODE_FIELDS[len(_NODE_FIELDS) - len(Node.__struct_defaults__):], Node.__struct_defaults__),
                      attrs=_EMPTY_ATTRS, outputs=_EMPTY_OUTS)  # (in columns only: a node gets its own)


def node_rows(nodes) -> Callable[[int], Node]:
    """i -> node i without making every node of a lazy sequence (one with `row`, as NodeSeq)."""
    return getattr(nodes, "row", None) or nodes.__getitem__


def node_column(nodes, field: str) -> list:
    """One field of every node as a list, from the columns of a lazy sequence (one with `column`, as NodeSeq:
    no Node objects made)."""
    read = getattr(nodes, "column", None)
    return read(field) if read is not None else list(map(attrgetter(field), nodes))


class RefColumn(Sequence):
    """Every data input's reference text, in CSR order, made from positions: `src[k]` < n is node
    names[src[k]] (its output 0), n + i graph input i, -1 the text in `odd[k]` (an empty ref, 'name:k', an
    undefined name). A loader that resolved the references (loaders/json_scanned) keeps them so: the text of
    one is made when someone reads it, and only the odd ones were ever decoded."""

    __slots__ = ("names", "inputs", "src", "odd", "_list")

    def __init__(self, names: list, inputs: list, src, odd: dict) -> None:
        self.names, self.inputs, self.src, self.odd, self._list = names, inputs, src, odd, None

    def __len__(self) -> int:
        return len(self.src)

    def __getitem__(self, k):
        if self._list is not None or isinstance(k, slice):
            return self.tolist()[k]
        s = int(self.src[k])
        n = len(self.names)
        if s < 0:
            return self.odd[k if k >= 0 else k + len(self.src)]
        return self.names[s] if s < n else self.inputs[s - n]

    def tolist(self) -> list:
        """All of them as a list (made once, at C speed)."""
        if self._list is None:
            table = self.names + self.inputs  # (a -1 reads the last entry, then odd replaces it)
            out = list(map(table.__getitem__, self.src.tolist()))
            list(map(out.__setitem__, self.odd, self.odd.values()))
            self._list = out
        return self._list

    def __iter__(self):
        return iter(self.tolist())


class NodeRefs(Sequence):
    """Each node's `inputs` tuple from a RefColumn and the CSR offsets (n + 1): node j's are refs
    off[j]:off[j + 1]. Made one at a time, or all at once on iteration."""

    __slots__ = ("refs", "off")

    def __init__(self, refs: RefColumn, off) -> None:
        self.refs, self.off = refs, off

    def __len__(self) -> int:
        return len(self.off) - 1

    def __getitem__(self, j):
        if isinstance(j, slice):
            return self.tolist()[j]
        j = j if j >= 0 else j + len(self)
        return tuple(self.refs[k] for k in range(int(self.off[j]), int(self.off[j + 1])))

    def tolist(self) -> list:
        flat = self.refs.tolist()
        return list(map(tuple, map(flat.__getitem__, map(slice, self.off[:-1].tolist(), self.off[1:].tolist()))))

    def __iter__(self):
        return iter(self.tolist())


_SEQ = (list, NodeRefs)  # the column types (anything else: one value every node shares)
