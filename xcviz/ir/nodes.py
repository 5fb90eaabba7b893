"""Nodes: a graph's nodes, read-only, kept as columns (one per Node field) with Node views made on demand."""
from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import attrgetter

from .collector import gc_paused
from .types import NO_ATTRS, Node


class Nodes(Sequence):
    """The one form of a graph's nodes, for graphs of every size and from every loader. Read-only: a pass
    that changes nodes makes new Nodes (`replaced`, `take`) and a new Graph.

    Kept as columns, one per Node field: a list of n values (or NodeRefs), or one value every node shares (an
    `attrs` column may hold plain dicts, each node's view holds a FrozenDict of it); `outputs` may be
    (rid, results) from shape inference: node j's types are results[rid[j]]. Big-graph code (checks, shape
    inference, clustering, costs) reads `column` and never makes 10^6 objects; `row(i)` makes one node.
    Indexing or iterating makes the Node views, all at once in C (map(Node, ...)), and keeps them, so
    `nodes[i] is nodes[i]`; after that the columns are read from them. Nodes given as objects (a hand-built
    graph, the loaders that build Node objects) are kept as those objects.

    `find`: a loader's name -> position look-up that needs no dict of every name (loaders/json_scanned),
    or None; Graph.position uses it while no name index is made (Graph.lookup: for up to FIND_MAX names)."""

    __slots__ = ("_n", "_cols", "_list", "find")

    def __init__(self, n: int, cols: dict, find=None) -> None:
        _put(self, "_n", n), _put(self, "_cols", cols), _put(self, "_list", None), _put(self, "find", find)

    def __setattr__(self, name, value):
        raise AttributeError(f"Nodes are read-only (cannot set {name!r}): make new ones (replaced, take, Nodes.of)")

    __delattr__ = __setattr__

    @classmethod
    def of(cls, nodes) -> "Nodes":
        """Nodes from Node objects (a list, any iterable, or Nodes, which is returned as it is)."""
        if type(nodes) is cls:
            return nodes
        made = list(nodes)
        seq = cls(len(made), {})
        _put(seq, "_list", made), _put(seq, "_cols", None)
        return seq

    @property
    def made(self) -> bool:
        """Whether the Node views are made (a load and its passes read columns and make none)."""
        return self._list is not None

    def column(self, field: str) -> list:
        """One field of every node, as a list (read-only: it may be the column itself)."""
        if self._cols is None:
            return list(map(attrgetter(field), self._list))
        c = self._cols.get(field, _NODE_DEFAULTS.get(field))
        if field == "outputs" and type(c) is tuple:
            return list(map(c[1].__getitem__, c[0].tolist()))
        return c if type(c) in _SEQ else [c] * self._n

    def column_raw(self, field: str):
        """A column as kept: a list, a shared value, NodeRefs, or (rid, results) for `outputs`."""
        if self._cols is None:
            return self.column(field)
        return self._cols.get(field, _NODE_DEFAULTS.get(field))

    def row(self, i: int) -> Node:
        """Node i: the kept view, else made from the columns alone (not kept)."""
        if self._list is not None:
            return self._list[i]
        vals = {}
        for f, c in self._cols.items():
            v = c[i] if type(c) in _SEQ else c
            if f == "outputs" and type(c) is tuple:
                v = c[1][c[0][i]]
            vals[f] = v
        return Node(**vals)

    def replaced(self, **cols) -> "Nodes":
        """New Nodes with these columns in place of this one's (a pass's results: resolved ops, inferred
        outputs), every other column shared; `find` carries over (names and order are unchanged)."""
        if "name" in cols:
            raise ValueError("renaming nodes changes the graph's look-ups: build new Nodes")
        base = dict(self._cols) if self._cols is not None else {f: self.column(f) for f in _NODE_FIELDS}
        base.update(cols)
        return Nodes(self._n, base, self.find)

    @property
    def rows(self) -> "Rows":
        """Node i by position, one at a time (row), without making every Node view."""
        return Rows(self)

    def take(self, order: list[int]) -> "Nodes":
        """The nodes in this order (a pass that sorts them), as new Nodes."""
        return Nodes.of([self[i] for i in order])

    def nodes(self) -> list[Node]:
        """Every node as a Node view, made once (the columns are then read from them)."""
        if self._list is None:
            with gc_paused():  # (new FrozenDicts and tuples: a collection would rescan the whole graph)
                _put(self, "_list", self._build())
            _put(self, "_cols", None)  # (the views are made once: the columns are read from them after)
        return self._list

    def _build(self) -> list[Node]:
        n, cols = self._n, self._cols
        args = []
        for f in _NODE_FIELDS:
            c = cols.get(f, _NODE_DEFAULTS.get(f))
            if f == "outputs" and type(c) is tuple:
                c = list(map(c[1].__getitem__, c[0].tolist()))  # (Node takes each as a tuple)
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

    def __add__(self, other):
        return self.nodes() + list(other)

    def __radd__(self, other):
        return list(other) + self.nodes()

    def __eq__(self, other) -> bool:
        if isinstance(other, (list, tuple, Nodes)):
            return self.nodes() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self):
        return Nodes.of, (self.nodes(),)

    def __repr__(self) -> str:
        return repr(self.nodes())


_put = object.__setattr__  # (Nodes sets its own slots only while it is made, and when it makes its views)

# how many look-ups Graph.lookup leaves to a loader's `find` before it makes the name index: each costs more
# than a dict look-up, but a few thousand of them cost less than hashing every name of a big graph
FIND_MAX = 10_000

_NODE_FIELDS = tuple(Node.__struct_fields__)
_NODE_DEFAULTS = dict(zip(_NODE_FIELDS[len(_NODE_FIELDS) - len(Node.__struct_defaults__):], Node.__struct_defaults__),
                      attrs=NO_ATTRS, outputs=())


class Rows:
    """Nodes.rows: node i made on request (Nodes.row), the same object for i until another i is asked (a pass
    reads a node, works on it and reads it again, one node at a time)."""

    __slots__ = ("_nodes", "_i", "_node")

    def __init__(self, nodes: Nodes) -> None:
        self._nodes, self._i, self._node = nodes, -1, None

    def __len__(self) -> int:
        return len(self._nodes)

    def __getitem__(self, i: int) -> Node:
        if i != self._i:
            self._i, self._node = i, self._nodes.row(i)
        return self._node


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
