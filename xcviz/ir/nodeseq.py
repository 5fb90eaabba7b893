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

    A column is a list of n values, or one value every node shares (an empty `attrs`/`outputs` value
    gives each node its own empty dict/list, as Node does). `outputs` may be (rid, results) from shape
    inference: node j gets a copy of results[rid[j]]."""

    __slots__ = ("_n", "_cols", "_list")

    def __init__(self, n: int, cols: dict) -> None:
        self._n, self._cols, self._list = n, cols, None

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
        return c if type(c) is list else [c] * self._n

    def row(self, i: int) -> Node:
        """Node i, made afresh from the columns while they are the truth (not kept: edit nothing on it)."""
        if self._list is not None:
            return self._list[i]
        vals = {}
        for f, c in self._cols.items():
            v = c[i] if type(c) is list else c
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
