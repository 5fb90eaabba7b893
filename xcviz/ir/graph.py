"""The graph: a read-only Graph of inputs, nodes (ir.nodes.Nodes) and outputs; passes return new graphs."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Sequence

import numpy as np

from .body import Body
from .columns import GraphColumns
from .nodes import FIND_MAX, Nodes
from .types import FrozenDict, Node, Ref, TensorType, Value, parse_ref


@dataclass(frozen=True, eq=True)
class Graph:
    """Inputs, nodes in topological order with unique names, and outputs, read-only.

    Built once (by a loader and the passes of passes.prepare, or by hand) and never edited: a pass that
    changes a graph returns a new one. Lists and dicts given to it are taken as tuples, Nodes and
    FrozenDicts. What is derived from it (`index`, `columns`) is made on first use and kept; a pass that
    already has it hands it over with `seeded`."""

    name: str
    inputs: tuple[Value, ...] = ()
    nodes: Nodes = field(default_factory=lambda: Nodes.of(()))
    outputs: tuple[str, ...] = ()
    source: str | None = None      # file name as given (never made absolute)
    dims: Mapping[str, int] = field(default_factory=FrozenDict)  # bound symbolic dimensions
    output_names: Mapping[str, str] = field(default_factory=FrozenDict)  # output ref -> the model's own name (ONNX)
    # a torch program's aten calls by node name (loaders.torch_calls): torch eager replays them as the native runtime
    aten_calls: Mapping | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        put = object.__setattr__
        if type(self.inputs) is not tuple:
            put(self, "inputs", tuple(self.inputs))
        if type(self.nodes) is not Nodes:
            put(self, "nodes", Nodes.of(self.nodes))
        if type(self.outputs) is not tuple:
            put(self, "outputs", tuple(self.outputs))
        for name in ("dims", "output_names"):
            if type(getattr(self, name)) is not FrozenDict:
                put(self, name, FrozenDict(getattr(self, name)))
        if self.aten_calls is not None and type(self.aten_calls) is not FrozenDict:
            put(self, "aten_calls", FrozenDict(self.aten_calls))

    # -- what is derived from it, made once ----------------------------------
    @functools.cached_property
    def index(self) -> dict[str, int]:
        """Node name -> position in topological order (a dict of every name: for one name, `position`)."""
        nodes = self.nodes
        return dict(zip(nodes.column("name"), range(len(nodes))))

    @functools.cached_property
    def columns(self) -> GraphColumns:
        """The graph as integer and list columns in node order (ir.columns.GraphColumns), the form
        clustering and costs read: the passes' own, or made from the nodes on first use."""
        return GraphColumns.of(self)

    @functools.cached_property
    def run_state(self) -> dict:
        """What the runtime keeps for this graph object between runs (runtime.execute.graph_cache: its default
        CompileCache); never handed to another graph (not derived data: `seeded` / `derived` leave it)."""
        return {}

    # -- lookups ---------------------------------------------------------
    def position(self, name: str) -> int | None:
        """The position of the node of this name, or None. Changes nothing: the name index when it is made,
        else the loader's look-up (Nodes.find: no dict of every name), else the index (made on first use).
        For many names, `lookup()`."""
        index = self.__dict__.get("index")
        if index is not None:
            return index.get(name)
        find = self.nodes.find
        return find(name) if find is not None else self.index.get(name)

    def lookup(self) -> Callable[[str], int | None]:
        """name -> position for a pass that looks up many names: `position` for the first FIND_MAX of them
        (each of the loader's look-ups costs more than a dict's, but a few thousand cost less than hashing
        every name of a big graph: a load's passes look up a few hundred), then the name index's get. The
        count is the caller's own (a new one per call): the graph is not changed."""
        if self.indexed or self.nodes.find is None:
            return self.index.get
        return _Lookup(self)

    @property
    def indexed(self) -> bool:
        """Whether the name index is made (a look-up then costs nothing more)."""
        return "index" in self.__dict__

    def node(self, name: str) -> Node:
        i = self.position(name)
        if i is None:
            raise KeyError(name)
        return self.nodes[i]

    @property
    def bodies(self) -> dict[tuple[str, str], "Graph"]:
        """The control-flow bodies the loader built once, by (node name, attribute): a body attribute
        (ir.body.Body) carries its Graph; one that did not load is absent; a body's own are its
        `.bodies`. Walks the nodes: ask clustering.bodies.has_control_flow first on a big graph."""
        out: dict[tuple[str, str], Graph] = {}
        for node in self.nodes:
            for k, v in node.attrs.items():
                if isinstance(v, Body) and isinstance(v.graph, Graph):
                    out[(node.name, k)] = v.graph
        return out

    # -- references, parsed once -------------------------------------------
    def input_sources(self, j: int) -> tuple[int, ...]:
        """Where node j's data inputs come from, in order, as the columns hold them (every reference of the
        graph parsed once, on first use): a node's position, len(nodes) + i for graph input i, -1 for an
        absent input. Which output of it: `input_refs`."""
        off = self._input_offsets
        return tuple(self.columns.src[off[j]:off[j + 1]].tolist())

    def input_refs(self, j: int) -> tuple[Ref | None, ...]:
        """Node j's data inputs as Refs (None for an absent one), from the columns: parsed once per graph."""
        cols, off = self.columns, self._input_offsets
        lo, hi = off[j], off[j + 1]
        names, n = cols.column("name"), len(self.nodes)
        return tuple(None if s < 0 else Ref(names[s], k) if s < n else Ref(self.inputs[s - n].name, 0)
                     for s, k in zip(cols.src[lo:hi].tolist(), cols.port[lo:hi].tolist()))

    @functools.cached_property
    def input_readers(self) -> np.ndarray:
        """Per entry of columns.src (every data input of every node, in node order), the node that reads it:
        with columns.src, the graph's data edges as two arrays (made once, 8 bytes a reference)."""
        return np.repeat(np.arange(len(self.nodes), dtype=np.int64), np.asarray(self.columns.lens, np.int64))

    @functools.cached_property
    def _input_offsets(self):
        """Node j's references are columns.src[off[j]:off[j + 1]] (made from the columns' lens, once: an
        int64 array, 8 bytes a node)."""
        lens = self.columns.lens
        off = np.zeros(len(lens) + 1, np.int64)
        np.cumsum(lens, out=off[1:])
        return off

    @functools.cached_property
    def output_refs(self) -> tuple[Ref, ...]:
        """The graph's outputs as Refs, parsed once."""
        return tuple(map(parse_ref, self.outputs))

    def producer(self, ref: str) -> int | None:
        """The position of the node whose output `ref` names (a reference given from outside a node: a
        graph output, a user's); None for a graph input, an absent or an unknown reference. For a node's
        own inputs read `input_sources` (parsed once). Reads the name index (made on first use: a caller
        asks for many)."""
        return self.index.get(parse_ref(ref).node) if ref else None

    def tensor_type(self, ref: str) -> TensorType:
        name, k = parse_ref(ref)
        i = self.position(name)
        if i is not None:
            return self.nodes[i].out(k)
        for v in self.inputs:
            if v.name == ref:
                return v.type
        return TensorType()

    def __repr__(self) -> str:  # (the nodes may be millions)
        return f"Graph({self.name!r}: {len(self.inputs)} inputs, {len(self.nodes):,} nodes, {len(self.outputs)} outputs)"


class _Lookup:
    """Graph.lookup's name -> position: the loader's look-up for FIND_MAX names, then the name index."""

    __slots__ = ("graph", "left", "get")

    def __init__(self, graph: Graph) -> None:
        self.graph, self.left, self.get = graph, FIND_MAX, None

    def __call__(self, name: str) -> int | None:
        if self.get is not None:
            return self.get(name)
        if self.left > 0:
            self.left -= 1
            return self.graph.position(name)
        self.get = self.graph.index.get
        return self.get(name)


_DERIVED = ("index", "columns")


def seeded(graph: Graph, **derived_data) -> Graph:
    """The graph with derived data a pass already has (`index`, `columns`) put in place, so it is not made
    again; returns the graph."""
    unknown = set(derived_data) - set(_DERIVED)
    if unknown:
        raise TypeError(f"not derived data of a Graph: {sorted(unknown)}")
    graph.__dict__.update({k: v for k, v in derived_data.items() if v is not None})
    return graph


def derived(graph: Graph) -> dict:
    """What was derived from the graph so far (to hand to a graph with the same nodes and inputs)."""
    return {k: graph.__dict__[k] for k in _DERIVED if k in graph.__dict__}


def bind_dims(graph: Graph, dims: Mapping[str, int], base: Mapping[str, int] | None = None) -> Graph:
    """A new graph with these bindings for symbolic dimensions (used by every byte count) over the graph's
    own (or over `base`); it shares the nodes, inputs and what was derived from them (index, columns),
    which binding leaves as they are."""
    return relabel(graph, dims={**(graph.dims if base is None else base), **dims})


_LABELS = frozenset({"name", "source", "dims", "output_names", "aten_calls"})


def relabel(graph: Graph, **labels) -> Graph:
    """A new graph with other labels (name, source, dims, output_names, aten_calls), sharing the nodes, the
    inputs and what was derived from them (index, columns), which labels leave as they are."""
    if not labels.keys() <= _LABELS:
        raise TypeError(f"not a label of a Graph: {sorted(labels.keys() - _LABELS)} (use dataclasses.replace)")
    return seeded(replace(graph, **labels), **derived(graph))


def topo_order(n: int, preds: Sequence[Sequence[int]]) -> list[int] | None:
    """Kahn's algorithm, stable (prefers file order); None if there is a cycle."""
    indeg = [0] * n
    succ: list[list[int]] = [[] for _ in range(n)]
    for v in range(n):
        for u in preds[v]:
            succ[u].append(v)
            indeg[v] += 1
    return _kahn(indeg, succ.__getitem__)


def _kahn(indeg: list[int], successors) -> list[int] | None:
    """Kahn's algorithm over vertices 0..n-1 with these in-degrees (consumed), the smallest ready vertex first;
    `successors(u)`: u's successors. None if there is a cycle."""
    import heapq

    ready = [v for v in range(len(indeg)) if indeg[v] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        u = heapq.heappop(ready)
        order.append(u)
        for v in successors(u):
            indeg[v] -= 1
            if indeg[v] == 0:
                heapq.heappush(ready, v)
    return order if len(order) == len(indeg) else None


def unit_order(graph: "Graph", cluster_of, n_clusters: int) -> list[tuple[str, int]] | None:
    """The order a clustering runs in: its clusters contracted to one unit each, the other nodes one each,
    topologically (file order where free): [('cluster', k) | ('node', i)]; None if the clusters form a cycle.
    Read from the columns (no node object made), the edges between units found as arrays."""
    n = len(graph.nodes)
    c = np.asarray(cluster_of, np.int64).reshape(-1)
    unit_of = np.where(c >= 0, c, n_clusters + np.arange(n, dtype=np.int64))
    present = np.unique(unit_of)
    pos = np.searchsorted(present, unit_of)          # per node, its unit's position
    cols = graph.columns
    src, dst = np.asarray(cols.src, np.int64), graph.input_readers
    data = (src >= 0) & (src < n)                      # (a graph input or an absent input: no edge)
    pairs = [np.stack((pos[src[data]], pos[dst[data]]))]
    control = cols.column("control_inputs")
    idx = graph.index
    extra = [(idx[r], j) for j in range(n) if control[j] for r in control[j] if r in idx]
    if extra:
        pairs.append(pos[np.array(extra, np.int64)].T)
    edges = np.concatenate(pairs, axis=1)
    m = len(present)
    key = np.unique((edges[0] * m + edges[1])[edges[0] != edges[1]])   # one per (predecessor, unit), by predecessor
    succ, cuts = (key % m).tolist(), np.searchsorted(key // m, np.arange(m + 1)).tolist()
    order = _kahn(np.bincount(key % m, minlength=m).tolist(), lambda u: succ[cuts[u]:cuts[u + 1]])
    if order is None:
        return None
    units = present.tolist()
    return [("cluster", units[p]) if units[p] < n_clusters else ("node", units[p] - n_clusters) for p in order]
